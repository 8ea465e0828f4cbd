//! One pass compared alone on every file of its LLVM test directory, whatever the
//! file's RUN line asks for.
//!
//! Many of a directory's files run pipelines that name passes Gyre does not have
//! (`licm`, `instcombine`, ...), so the per-file check ([`super::check_file`]) counts them
//! "pass not implemented". The test inputs still exercise the pass, so for each
//! [`AloneSpec`] the harness also runs the spec's pipeline, and only it, in Gyre and in
//! LLVM 14 `opt` on every imported file of the directory (inside `loop-mssa(...)` when
//! the file's first RUN line uses MemorySSA, as LLVM's loop passes then do more), checks
//! that Gyre's output verifies and behaves as the input, and compares the number of
//! loops function by function. Each function whose loop count differs needs a reason in
//! [`KNOWN`]; the share of agreeing functions has a target ([`AloneSpec::target_pct`]).

use super::behaviour::{self, Behaviour};
use super::shape::Shape;
use super::{declared_stubs, first_line, import_options, llvm_knobs, run_opt, Entry, Opt};
use gyre_ir::Module;
use gyre_llvm::ExportOptions;
use gyre_transforms::{Options, PassManager};
use std::fmt::Write as _;

/// A pass compared alone on a test directory.
#[derive(Copy, Clone, Debug)]
pub struct AloneSpec {
    /// The LLVM test directory (`SimpleLoopUnswitch`).
    pub dir: &'static str,
    /// The pipeline both Gyre and `opt` run.
    pub pipeline: &'static str,
    /// The least share of functions (in percent) whose loop counts must agree.
    pub target_pct: u32,
}

/// The passes compared alone.
pub const SPECS: &[AloneSpec] = &[AloneSpec {
    dir: "SimpleLoopUnswitch",
    pipeline: "simple-loop-unswitch<nontrivial>",
    target_pct: 90,
}];

/// Reasons for functions whose loop count differs from `opt`'s, keyed by
/// `dir/file@function`. Written after looking at each case; a difference missing here
/// is a missed target, and so is a reason for a function that agrees.
pub const KNOWN: &[(&str, &str)] = &[
    (
        "SimpleLoopUnswitch/2007-07-12-ExitDomInfo.ll@stringSearch_Clib",
        "the loop calls an external function (`@strcspn`); Gyre treats every `call` as \
         convergent (the callee may hold a barrier) and unswitches no loop holding one, \
         while LLVM's CPU calls are not convergent and it unswitches the invariant \
         `%ttmp33` into two loops",
    ),
    (
        "SimpleLoopUnswitch/2007-08-01-LCSSA.ll@_ZN9Generator6strregEPKc",
        "the loop calls an external function (`@strcmp`); Gyre treats every `call` as \
         convergent (the callee may hold a barrier) and unswitches no loop holding one, \
         while LLVM unswitches the invariant `%tmp122` into two loops",
    ),
    (
        "SimpleLoopUnswitch/2007-08-01-Dom.ll@_ZNK5QDate9addMonthsEi",
        "not the unswitching: LLVM's loop-simplify (run by the loop adaptor) splits \
         `cond_true90`, whose phi takes different values on its backedges, into a nest \
         (`separateNestedLoop`, 2 loops; `opt -passes=loop-simplify` alone gives the same), \
         where Gyre's gives the loop a single latch; neither side unswitches anything",
    ),
    (
        "SimpleLoopUnswitch/endless-unswitch.ll@d",
        "LLVM (with MemorySSA, `loop-mssa`) unswitches on a `load` inside the loop that \
         nothing in the loop clobbers (partial unswitching of a partially invariant \
         condition) and then on its copies; Gyre unswitches loop-invariant values only",
    ),
];

/// The reason recorded for `dir/file@function`, if any.
pub fn known(key: &str, function: &str) -> Option<&'static str> {
    KNOWN
        .iter()
        .find(|(k, _)| k.split_once('@') == Some((key, function)))
        .map(|(_, v)| *v)
}

/// One function's loop counts.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct FuncLoops {
    /// Function name.
    pub name: String,
    /// Loops in Gyre's output.
    pub gyre: u32,
    /// Loops in `opt`'s output (`None`: the function is missing there).
    pub opt: Option<u32>,
}

/// The comparison of one file.
#[derive(Clone, Debug)]
pub struct Alone {
    /// The spec's index in [`SPECS`].
    pub spec: usize,
    /// The pipeline run (the spec's, perhaps inside `loop-mssa(...)`).
    pub pipeline: String,
    /// Gyre's output facts, or why the pipeline or the verifier failed.
    pub gyre: Result<Shape, String>,
    /// Per function, when both sides ran; else why `opt` could not be compared.
    pub funcs: Result<Vec<FuncLoops>, String>,
    /// `opt` read Gyre's export of the input because LLVM 14 cannot read the file.
    pub on_export: bool,
    /// Differential runs of Gyre's output against the input.
    pub behaviour: Behaviour,
}

/// The spec for a manifest entry, if its directory has one.
pub fn spec_for(e: &Entry) -> Option<usize> {
    SPECS.iter().position(|s| s.dir == e.dir)
}

/// Run the spec's pipeline alone on an imported file in Gyre and in `opt` (if found).
pub fn check(
    spec: usize,
    e: &Entry,
    src: &str,
    input: &Module,
    stubs: &[String],
    opt: Option<&Opt>,
    runs: u32,
) -> Alone {
    let first = super::pipeline::first_run(&e.run_passes);
    let base = SPECS[spec].pipeline;
    // LLVM's loop passes under MemorySSA also unswitch partially invariant conditions;
    // run `opt` as the file's RUN line does. Gyre's adaptor takes the same spelling.
    let pipeline = if first.contains("loop-mssa(") {
        format!("loop-mssa({base})")
    } else {
        base.to_string()
    };
    let mut out = input.clone();
    let options = Options {
        verify_each: true,
        ..Options::default()
    };
    let gyre = PassManager::from_pipeline(&pipeline, llvm_knobs(), options)
        .and_then(|mut pm| pm.run_module(&mut out).map_err(|e| e.to_string()))
        .and_then(|_| gyre_ir::verifier::verify_module(&out).map_err(|e| e.to_string()))
        .map(|()| Shape::of(&out, stubs))
        .map_err(|e| first_line(&e));
    let behaviour = if gyre.is_ok() {
        behaviour::compare(input, &out, stubs, runs)
    } else {
        Behaviour::default()
    };
    let mut on_export = false;
    let funcs = match (opt, &gyre) {
        (None, _) => Err("no LLVM 14 opt".to_string()),
        (_, Err(_)) => Err("Gyre's pipeline failed".to_string()),
        (Some(opt), Ok(g)) => {
            let opaque = e.notes.contains("-opaque-pointers");
            let text = run_opt(opt, &pipeline, opaque, src).or_else(|first| {
                on_export = true;
                let exported = gyre_llvm::export_module(input, &ExportOptions::default());
                run_opt(opt, &pipeline, false, &exported)
                    .map_err(|second| format!("opt failed: {first}; on Gyre's export: {second}"))
            });
            text.and_then(|t| {
                let m = gyre_llvm::import_module_with(&t, &import_options())
                    .map_err(|errs| format!("opt's output does not import: {}", errs.first()))?;
                let mut skip = declared_stubs(&t);
                skip.extend(stubs.iter().cloned());
                let o = Shape::of(&m, &skip);
                Ok(g.funcs
                    .iter()
                    .map(|f| FuncLoops {
                        name: f.name.clone(),
                        gyre: f.loops,
                        opt: o.funcs.iter().find(|x| x.name == f.name).map(|x| x.loops),
                    })
                    .collect())
            })
        }
    };
    Alone {
        spec,
        pipeline,
        gyre,
        funcs,
        on_export,
        behaviour,
    }
}

/// Totals of one spec.
#[derive(Clone, Default, Debug)]
pub struct AloneTotals {
    /// The spec's index in [`SPECS`].
    pub spec: usize,
    /// Files of the directory.
    pub files: u32,
    /// Of those, imported (and so run).
    pub imported: u32,
    /// Of those, Gyre's output verifies.
    pub verified: u32,
    /// Of those, the differential runs found no difference.
    pub behaviour_ok: u32,
    /// Functions compared with `opt`.
    pub functions: u32,
    /// Of those, with the same number of loops.
    pub agree: u32,
    /// Of the others, with a reason in [`KNOWN`].
    pub explained: u32,
    /// Interpreter runs compared.
    pub runs: u32,
    /// Files `opt` could not be compared on.
    pub opt_failed: u32,
}

/// Count the files of `reports` per spec; each failure is pushed on `unmet`.
pub fn summarize(reports: &[super::FileReport], unmet: &mut Vec<String>) -> Vec<AloneTotals> {
    let mut totals: Vec<AloneTotals> = (0..SPECS.len())
        .map(|spec| AloneTotals {
            spec,
            ..AloneTotals::default()
        })
        .collect();
    let mut opt_seen = false;
    for r in reports {
        let Some(spec) = spec_for(&r.entry) else {
            continue;
        };
        let t = &mut totals[spec];
        t.files += 1;
        let Some(a) = &r.alone else { continue };
        let key = r.entry.key();
        t.imported += 1;
        match &a.gyre {
            Ok(_) => t.verified += 1,
            Err(e) => unmet.push(format!("{key} ({}): Gyre fails: {e}", a.pipeline)),
        }
        if a.gyre.is_ok() && a.behaviour.failures.is_empty() {
            t.behaviour_ok += 1;
        }
        for f in &a.behaviour.failures {
            unmet.push(format!("{key} ({}): behaviour differs: {f}", a.pipeline));
        }
        t.runs += a.behaviour.runs;
        match &a.funcs {
            Err(e) => {
                if a.gyre.is_ok() && e != "no LLVM 14 opt" {
                    t.opt_failed += 1;
                    unmet.push(format!("{key} ({}): {e}", a.pipeline));
                }
            }
            Ok(funcs) => {
                opt_seen = true;
                for f in funcs {
                    t.functions += 1;
                    let why = known(&key, &f.name);
                    if f.opt == Some(f.gyre) {
                        t.agree += 1;
                        if why.is_some() {
                            unmet.push(format!(
                                "{key}@{}: agrees with opt now; drop it from alone::KNOWN",
                                f.name
                            ));
                        }
                    } else if why.is_some() {
                        t.explained += 1;
                    } else {
                        unmet.push(format!(
                            "{key}@{} ({}): unexplained loop count: Gyre {}, opt {}",
                            f.name,
                            a.pipeline,
                            f.gyre,
                            f.opt.map_or("missing".to_string(), |n| n.to_string())
                        ));
                    }
                }
            }
        }
    }
    if opt_seen {
        for t in &totals {
            let s = &SPECS[t.spec];
            if t.functions > 0 && t.agree * 100 < t.functions * s.target_pct {
                unmet.push(format!(
                    "{} alone on {}/: loop counts agree with opt on {} of {} functions (target {}%)",
                    s.pipeline, s.dir, t.agree, t.functions, s.target_pct
                ));
            }
        }
    }
    totals
}

fn pct(a: u32, b: u32) -> String {
    if b == 0 {
        "-".into()
    } else {
        format!("{:.1}%", 100.0 * f64::from(a) / f64::from(b))
    }
}

/// One console line per spec.
pub fn console(w: &mut String, totals: &[AloneTotals]) {
    for t in totals {
        let s = &SPECS[t.spec];
        let _ = writeln!(
            w,
            "  alone {} on {}/: {} files, {} imported, {} verify, {} behave ({} runs); loop counts agree with opt on {} of {} functions ({}), {} explained",
            s.pipeline,
            s.dir,
            t.files,
            t.imported,
            t.verified,
            t.behaviour_ok,
            t.runs,
            t.agree,
            t.functions,
            pct(t.agree, t.functions),
            t.explained
        );
    }
}

/// The section of docs/conformance.md.
pub fn document(w: &mut String, reports: &[super::FileReport], totals: &[AloneTotals]) {
    let _ = writeln!(w, "\n## Passes alone on their directory\n");
    let _ = writeln!(
        w,
        "Whatever a file's RUN line asks for (other passes included, which Gyre may lack), \
         the pass alone runs on every imported file of its directory in Gyre and in LLVM 14 \
         `opt` (inside `loop-mssa(...)` when the RUN line uses MemorySSA): Gyre's output \
         must verify and behave as the input, and the number of loops of every function is \
         compared with `opt`'s. Each function that differs has a reason below.\n"
    );
    let _ = writeln!(
        w,
        "| pipeline | directory | files | imported | verified | behaviour preserved | runs compared | functions | same loop count as opt | differences explained |"
    );
    let _ = writeln!(w, "|---|---|---|---|---|---|---|---|---|---|");
    for t in totals {
        let s = &SPECS[t.spec];
        let _ = writeln!(
            w,
            "| `{}` | {} | {} | {} | {} | {} | {} | {} | {} ({}) | {} |",
            s.pipeline,
            s.dir,
            t.files,
            t.imported,
            t.verified,
            t.behaviour_ok,
            t.runs,
            t.functions,
            t.agree,
            pct(t.agree, t.functions),
            t.explained
        );
    }
    let _ = writeln!(w, "\nDifferences:\n");
    let mut any = false;
    for r in reports {
        let Some(a) = &r.alone else { continue };
        let key = r.entry.key();
        match &a.funcs {
            Ok(funcs) => {
                for f in funcs.iter().filter(|f| f.opt != Some(f.gyre)) {
                    any = true;
                    let _ = writeln!(
                        w,
                        "- `{key}` `@{}` (`{}`{}): Gyre {} loops, opt {}: {}",
                        f.name,
                        a.pipeline,
                        if a.on_export { ", opt on export" } else { "" },
                        f.gyre,
                        f.opt.map_or("missing".to_string(), |n| n.to_string()),
                        known(&key, &f.name).unwrap_or("**unexplained**")
                    );
                }
            }
            Err(e) if a.gyre.is_ok() => {
                any = true;
                let _ = writeln!(w, "- `{key}` (`{}`): {}", a.pipeline, e.replace('|', "\\|"));
            }
            Err(_) => {}
        }
        if let Err(e) = &a.gyre {
            any = true;
            let _ = writeln!(
                w,
                "- `{key}` (`{}`): Gyre fails: {}",
                a.pipeline,
                e.replace('|', "\\|")
            );
        }
    }
    if !any {
        let _ = writeln!(w, "None.");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::conformance::{Entry, FileReport};

    fn report(file: &str, funcs: &[(&str, u32, Option<u32>)]) -> FileReport {
        let shape = Shape::default();
        FileReport {
            entry: Entry {
                dir: "SimpleLoopUnswitch".into(),
                file: file.into(),
                run_passes: "licm,simple-loop-unswitch".into(),
                parses_with_llvm14: true,
                notes: String::new(),
            },
            pipeline: "licm,simple-loop-unswitch".into(),
            imported: Ok(funcs.len()),
            mapped: Err("not looked at".into()),
            checked: None,
            cleanup_alone: None,
            rerun: None,
            alone: Some(Box::new(Alone {
                spec: 0,
                pipeline: SPECS[0].pipeline.into(),
                gyre: Ok(shape),
                funcs: Ok(funcs
                    .iter()
                    .map(|&(n, g, o)| FuncLoops {
                        name: n.into(),
                        gyre: g,
                        opt: o,
                    })
                    .collect()),
                on_export: false,
                behaviour: Behaviour::default(),
            })),
        }
    }

    #[test]
    fn differences_need_a_reason_and_the_share_a_target() {
        // Nine agreeing functions and one known difference: 90%, met.
        let mut rs: Vec<FileReport> = (0..9)
            .map(|i| report(&format!("f{i}.ll"), &[("f", 1, Some(1))]))
            .collect();
        rs.push(report("endless-unswitch.ll", &[("d", 4, Some(9))]));
        let mut unmet = Vec::new();
        let t = summarize(&rs, &mut unmet);
        assert_eq!(
            (t[0].files, t[0].functions, t[0].agree, t[0].explained),
            (10, 10, 9, 1)
        );
        assert!(unmet.is_empty(), "{unmet:?}");
        // An unknown difference is missed, and so is the share (9 of 11 < 90%).
        rs.push(report("new.ll", &[("g", 1, None)]));
        let mut unmet = Vec::new();
        summarize(&rs, &mut unmet);
        assert_eq!(unmet.len(), 2, "{unmet:?}");
        assert!(
            unmet[0].contains("new.ll@g") && unmet[0].contains("missing"),
            "{unmet:?}"
        );
        assert!(unmet[1].contains("9 of 11"), "{unmet:?}");
        // A reason for a function that agrees now is stale.
        let mut unmet = Vec::new();
        summarize(
            &[report("endless-unswitch.ll", &[("d", 9, Some(9))])],
            &mut unmet,
        );
        assert!(unmet[0].contains("drop it"), "{unmet:?}");
        // A Gyre failure and a behaviour difference are missed targets.
        let mut r = report("x.ll", &[]);
        if let Some(a) = r.alone.as_mut() {
            a.gyre = Err("verifier: boom".into());
            a.behaviour.failures.push("@f: differs".into());
        }
        let mut unmet = Vec::new();
        summarize(&[r], &mut unmet);
        assert!(unmet.iter().any(|u| u.contains("boom")), "{unmet:?}");
        assert!(unmet.iter().any(|u| u.contains("differs")), "{unmet:?}");
    }
}
