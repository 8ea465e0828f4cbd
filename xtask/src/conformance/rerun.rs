//! Does LLVM 14 find anything left to do in Gyre's output?
//!
//! For every imported file, whatever its own pipeline: Gyre runs `loop-simplify,lcssa`,
//! the module verifies and the forms hold on every reducible loop, Gyre exports it, and
//! `opt -passes=loop-simplify,lcssa` runs on the export. A function whose text LLVM
//! changes (compared with `opt -passes=verify` on the same export, so that both sides are
//! printed by LLVM) is one where Gyre's forms and LLVM's definitions disagree, or where
//! LLVM's passes do more than their forms ask. Each such function needs a reason in
//! [`KNOWN`], keyed by one of [`REASONS`].

use super::shape::Shape;
use super::{import_options, run_opt, Opt};
use gyre_ir::Module;
use gyre_llvm::ExportOptions;
use gyre_transforms::{Forms, Knobs, Options, PassManager};

/// The pipeline run by Gyre, then by `opt` on Gyre's export.
pub const PIPELINE: &str = "loop-simplify,lcssa";

/// Why LLVM changes a function Gyre already put in loop-simplify and LCSSA form: the
/// reason's key and its explanation. Written after looking at each difference.
pub const REASONS: &[(&str, &str)] = &[
    (
        "header-phi-fold",
        "LLVM's loop-simplify also runs `SimplifyInstruction` on the header phis of every \
         loop and drops the ones that fold (every incoming value the same, or the phi \
         itself); Gyre leaves such redundant header parameters alone: a clean-up, not part \
         of the form (the same parameter is redundant before the pass)",
    ),
    (
        "exit-fold",
        "LLVM's loop-simplify, when all exits of a loop reach one block, hoists the \
         loop-invariant instructions of each exiting block with a single predecessor into \
         the preheader (even when nothing is folded after), then folds exiting `br`s into a \
         common destination (`FoldBranchToCommonDest`, with `select`/`and` conditions and \
         new LCSSA phis for the merged exit); Gyre does not: an optimisation, not part of \
         the form",
    ),
];

/// Functions LLVM changes, keyed by `dir/file@function`, with the key of their reason in
/// [`REASONS`]. An entry whose function LLVM no longer changes fails the targets too, so
/// the list stays current.
pub const KNOWN: &[(&str, &str)] = &[
    ("LCSSA/pr28608.ll@foo", "header-phi-fold"),
    ("LCSSA/remove-phis.ll@test", "header-phi-fold"),
    ("LoopRotate/preserve-scev.ll@foo", "header-phi-fold"),
    (
        "LoopSimplify/2010-12-26-PHIInfiniteLoop.ll@inm_merge",
        "header-phi-fold",
    ),
    (
        "SimpleLoopUnswitch/2007-07-18-DomInfo.ll@byte_regex_compile",
        "header-phi-fold",
    ),
    ("IndVarSimplify/2007-01-06-TripCount.ll@test", "exit-fold"),
    ("LoopDeletion/zero-btc.ll@test_multi_exit1", "exit-fold"),
    ("LoopDeletion/zero-btc.ll@test_multi_exit3", "exit-fold"),
    ("LoopDeletion/zero-btc.ll@test_live_outer", "exit-fold"),
    (
        "LoopSimplify/2003-08-15-PreheadersFail.ll@_yylex",
        "exit-fold",
    ),
    (
        "LoopSimplify/2004-04-01-IncorrectDomUpdate.ll@NormalizeCoeffsVecFFE",
        "exit-fold",
    ),
    ("LoopSimplify/drop-ub-attributes.ll@f", "exit-fold"),
    ("LoopSimplify/merge-exits.ll@test1", "exit-fold"),
    (
        "LoopSimplify/merge-exits.ll@merge_branches_profile_metadata",
        "exit-fold",
    ),
    ("LoopSimplify/notify-scev.ll@t", "exit-fold"),
    ("LoopSimplify/pr26682.ll@foo", "exit-fold"),
    (
        "LoopSimplify/preserve-llvm-loop-metadata.ll@test2",
        "exit-fold",
    ),
    ("LoopSimplify/profile-info.ll@test_drop", "exit-fold"),
];

/// The reason key recorded for `function` of `file` (`dir/file`), if any.
pub fn known(file: &str, function: &str) -> Option<&'static str> {
    KNOWN
        .iter()
        .find(|(k, _)| {
            k.split_once('@')
                .is_some_and(|(f, g)| f == file && g == function)
        })
        .map(|(_, r)| *r)
}

/// The explanation of a reason key.
pub fn reason(key: &str) -> Option<&'static str> {
    REASONS.iter().find(|(k, _)| *k == key).map(|(_, v)| *v)
}

/// One function LLVM changed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Changed {
    /// The function's name.
    pub function: String,
    /// The first line that differs, before and after LLVM's passes.
    pub first: String,
}

/// The result of the check on one file.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Rerun {
    /// Functions compared (defined in the export, stubs left out).
    pub functions: u32,
    /// Functions LLVM changed.
    pub changed: Vec<Changed>,
}

/// The functions of an LLVM module's text: `(name, text from define to the closing
/// brace)`, in order.
fn functions(text: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut cur: Option<(String, String)> = None;
    for line in text.lines() {
        if let Some((_, body)) = cur.as_mut() {
            body.push_str(line);
            body.push('\n');
            if line == "}" {
                out.extend(cur.take());
            }
            continue;
        }
        if line.starts_with("define ") {
            let name: String = line
                .find('@')
                .map(|at| line[at + 1..].chars().take_while(|&c| c != '(').collect())
                .unwrap_or_default();
            cur = Some((name.trim_matches('"').to_string(), format!("{line}\n")));
        }
    }
    out
}

/// The first line where `after` differs from `before`, as `before -> after` (comments
/// after `;` dropped, spaces squeezed).
fn first_difference(before: &str, after: &str) -> String {
    let clean = |l: Option<&str>| -> String {
        match l {
            None => "(end)".into(),
            Some(l) => {
                let code = l.split(';').next().unwrap_or("");
                code.split_whitespace().collect::<Vec<_>>().join(" ")
            }
        }
    };
    let (mut b, mut a) = (before.lines(), after.lines());
    loop {
        let (x, y) = (b.next(), a.next());
        if x.is_none() && y.is_none() {
            return "(same)".into();
        }
        if x != y {
            let (cx, cy) = (clean(x), clean(y));
            if cx != cy {
                return format!("`{cx}` -> `{cy}`");
            }
            // Only the comment differs (a block's `; preds = ...`): show it.
            let squeeze = |l: Option<&str>| {
                l.unwrap_or("")
                    .split_whitespace()
                    .collect::<Vec<_>>()
                    .join(" ")
            };
            return format!("`{}` -> `{}`", squeeze(x), squeeze(y));
        }
    }
}

/// Run the check on one imported module (`stubs`: the functions standing for external
/// declarations, left out). `Err` when Gyre's pipeline fails, its output does not verify
/// or lacks the forms, or `opt` fails.
///
/// With `GYRE_RERUN_DUMP=<dir>`, the export and both of LLVM's outputs are written there
/// as `<dir>__<file>.{export,verify,opt}.ll`, to look at the differences.
pub fn check(opt: &Opt, input: &Module, stubs: &[String], name: &str) -> Result<Rerun, String> {
    let dump = std::env::var_os("GYRE_RERUN_DUMP").map(std::path::PathBuf::from);
    let write = |ext: &str, text: &str| {
        if let Some(d) = &dump {
            let file = format!("{}.{ext}.ll", name.replace('/', "__"));
            let _ = std::fs::write(d.join(file), text);
        }
    };
    let mut out = input.clone();
    // The module is verified once at the end: the pass manager's per-pass verifier sees
    // a placeholder for the function being transformed, so a self-recursive call fails
    // it (LoopDeletion/irreducible-cfg.ll).
    PassManager::from_pipeline(PIPELINE, Knobs::default(), Options::default())
        .and_then(|mut pm| pm.run_module(&mut out).map_err(|e| e.to_string()))
        .and_then(|_| gyre_ir::verifier::verify_module(&out).map_err(|e| e.to_string()))
        .map_err(|e| format!("Gyre: {}", super::first_line(&e)))?;
    let forms = Forms {
        loop_simplify: true,
        lcssa: true,
        ..Forms::default()
    };
    Shape::of(&out, stubs)
        .holds(forms)
        .map_err(|e| format!("Gyre's output lacks the forms: {e}"))?;
    let exported = gyre_llvm::export_module(&out, &ExportOptions::default());
    write("export", &exported);
    let before = run_opt(opt, "verify", false, &exported)
        .map_err(|e| format!("opt does not read Gyre's export: {e}"))?;
    write("verify", &before);
    let after = run_opt(opt, PIPELINE, false, &exported).map_err(|e| format!("opt: {e}"))?;
    write("opt", &after);
    // LLVM's output must still import (it is the same program).
    gyre_llvm::import_module_with(&after, &import_options())
        .map_err(|e| format!("opt's output does not import: {}", e.first()))?;
    let before = functions(&before);
    let after = functions(&after);
    let mut r = Rerun::default();
    for (f, text) in &before {
        if stubs.contains(f) {
            continue;
        }
        r.functions += 1;
        let first = match after.iter().find(|(g, _)| g == f) {
            Some((_, t)) if t == text => continue,
            Some((_, t)) => first_difference(text, t),
            None => "missing from opt's output".into(),
        };
        r.changed.push(Changed {
            function: f.clone(),
            first,
        });
    }
    Ok(r)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn functions_are_split_at_define_and_closing_brace() {
        let text = "; x\ndefine void @f(i32 %a) {\nentry:\n  ret void\n}\n\ndeclare void @g()\n\ndefine i32 @\"h i\"() #0 {\nb:\n  ret i32 0\n}\n";
        let fs = functions(text);
        assert_eq!(fs.len(), 2);
        assert_eq!(fs[0].0, "f");
        assert_eq!(fs[1].0, "h i");
        assert!(fs[1].1.ends_with("ret i32 0\n}\n"), "{}", fs[1].1);
    }

    #[test]
    fn first_difference_names_both_lines() {
        assert_eq!(
            first_difference("a\nb:   ; preds = %x\n", "a\nc  d\n"),
            "`b:` -> `c d`"
        );
        assert_eq!(first_difference("a\nb\n", "a\n"), "`b` -> `(end)`");
        assert_eq!(
            first_difference("b:  ; preds = %x\n", "b:  ; preds = %y\n"),
            "`b: ; preds = %x` -> `b: ; preds = %y`"
        );
        assert_eq!(first_difference("a\n", "a\n"), "(same)");
    }

    #[test]
    fn every_known_function_has_a_reason() {
        for (k, r) in KNOWN {
            assert!(k.contains(".ll@"), "{k}: key is dir/file@function");
            assert!(reason(r).is_some(), "{k}: unknown reason {r}");
        }
        assert_eq!(known("LoopSimplify/pr26682.ll", "foo"), Some("exit-fold"));
        assert_eq!(known("LoopSimplify/pr26682.ll", "bar"), None);
    }
}
