//! Totals, target checks and the text of docs/conformance.md.

use super::{rerun, FileReport, Mode, OptOutcome, Setup};
use std::fmt::Write as _;

/// One-line reasons for each file whose Gyre result differs from `opt`'s (or where
/// `opt` could not be compared), keyed by `dir/file`. Written after looking at each
/// case; a disagreement missing here fails the targets.
pub const KNOWN: &[(&str, &str)] = &[
    (
        "LoopSimplify/2004-04-12-LoopSimplify-SwitchBackedges.ll",
        "LLVM's loop-simplify splits the header's backedges into an outer loop \
         (`separateNestedLoop`, because a header phi takes a different value on one \
         backedge); Gyre merges them into one latch instead, which is also simplify form",
    ),
    (
        "LoopSimplify/phi-node-simplify.ll",
        "LLVM's `separateNestedLoop` turns `no_exit.2` into a loop nest \
         (`no_exit.2.outer`); Gyre gives the loop a single latch instead",
    ),
    (
        "LoopSimplify/preserve-scev.ll",
        "LLVM's `separateNestedLoop` splits `for.cond` and `while.cond191` into nests \
         (`*.outer`); Gyre gives each a single latch instead",
    ),
    (
        "LoopSimplify/pr28272.ll",
        "@foo2: LLVM's `separateNestedLoop` splits `loop2` (whose header phis take \
         different values on its four backedges) into a nest; Gyre gives it a single latch \
         instead (the file's `indvars` changes no loop count on either side)",
    ),
    (
        "SimpleLoopUnswitch/endless-unswitch.ll",
        "LLVM (with MemorySSA, `loop-mssa`) unswitches on a `load` inside the loop that \
         nothing in the loop clobbers (partial unswitching of a partially invariant \
         condition) and then on its copies; Gyre unswitches loop-invariant values only, \
         so @d keeps 4 loops where opt makes 9",
    ),
    (
        "LoopDeletion/2017-07-11-incremental-dt.ll",
        "both delete the never-entered loop `for.cond1`; Gyre also removes the blocks only \
         it reached (`for.cond3.loopexit`), which leaves the 7-block irreducible cycle \
         after it with one entry, so Gyre's output has two natural loops where LLVM's \
         keeps an irreducible cycle (no natural loop); the same program either way",
    ),
    (
        "LoopDeletion/assume.ll",
        "the loop's induction variable is a pointer stepped by 12 bytes (`getelementptr \
         inbounds`) until it equals the argument; LLVM counts the trips because an \
         `inbounds` GEP may not wrap, but Gyre's `ptradd` wraps (docs/ir.md), so the loop \
         may never end (it runs endlessly on all the harness's inputs) and is kept",
    ),
    (
        "LoopSimplify/2004-04-13-LoopSimplifyUpdateDomFrontier.ll",
        "compared on `loop(loop-simplifycfg)` alone: LLVM's loop-simplify splits \
         `loopentry.0.outer1111` (whose header phi takes different values on its \
         backedges) into a nest with `separateNestedLoop`, Gyre's gives it one latch (as in \
         the LoopSimplify/ differences above); neither removes a loop (LLVM 14 does not \
         fold the inner loop's `switch`, which would delete the current loop; Gyre's \
         single loop keeps its backedge after the fold)",
    ),
    (
        "LoopDeletion/pr56266.ll",
        "LLVM 14 `opt` crashes in loop-deletion on this file (the bug the test guards, \
         fixed in LLVM 15); Gyre's result verifies and keeps its behaviour",
    ),
    (
        "LoopSimplify/pr33494.ll",
        "LLVM's loop-unroll fully unrolls `while.body13`, whose exit count (23) its \
         exhaustive evaluation finds by doubling 15872 (`shl nsw`) until it wraps to 0; \
         Gyre's scalar evolution stops its brute-force evaluation at the signed overflow \
         (poison under `nsw`), so the loop has no count and stays",
    ),
    // --- licm (issue 23) ---
    (
        "SimpleLoopUnswitch/2007-08-01-Dom.ll",
        "LLVM's loop-simplify (run by licm's loop adaptor) splits `cond_true90` into a nest \
         (`separateNestedLoop`: its header phi takes 0 on two backedges and itself on the \
         third), and licm then hoists the compare into the new outer loop's header; Gyre \
         gives the loop a single latch instead (1 loop, opt 2)",
    ),
];

/// The reason recorded for `key`, if any.
pub fn explanation(key: &str) -> Option<&'static str> {
    KNOWN.iter().find(|(k, _)| *k == key).map(|(_, v)| *v)
}

/// Totals over the files whose pipeline contains one pass.
#[derive(Clone, Default, Debug)]
pub struct PassTotals {
    /// The pass.
    pub pass: String,
    /// Files (imported, every pass implemented) whose pipeline has the pass.
    pub files: u32,
    /// Of those, Gyre's pipeline ran and the output verifies.
    pub verified: u32,
    /// Of those, the promised forms already hold in the input.
    pub input_holds: u32,
    /// Of those, the promised forms hold in Gyre's output.
    pub holds: u32,
    /// `opt`'s output was imported and compared.
    pub compared: u32,
    /// Gyre and `opt` agree on the promised forms.
    pub agree: u32,
    /// Gyre's and `opt`'s outputs have the same loops and form counts.
    pub same_loops: u32,
    /// Functions of the files whose outputs were compared with `opt`'s.
    pub fn_compared: u32,
    /// Of those, functions with the same loops and form counts in both outputs.
    pub fn_same: u32,
    /// Files where they disagree or `opt` could not be compared, with a known reason.
    pub explained: u32,
    /// Files whose differential runs found no difference.
    pub behaviour_ok: u32,
    /// Functions run in the interpreter.
    pub functions: u32,
    /// Runs compared.
    pub runs: u32,
    /// Runs where input and output both hit the step limit.
    pub endless: u32,
    /// Runs where the input itself failed.
    pub not_comparable: u32,
    /// Functions run that call external declarations (through the importer's stubs).
    pub external: u32,
}

/// Totals of a run and the targets it misses.
#[derive(Clone, Default, Debug)]
pub struct Summary {
    /// Files checked.
    pub files: u32,
    /// Files imported.
    pub imported: u32,
    /// Files whose pipeline names a pass Gyre lacks ("pass not implemented").
    pub not_implemented: u32,
    /// Of those, imported.
    pub not_implemented_imported: u32,
    /// Per Gyre pass, in registry order.
    pub passes: Vec<PassTotals>,
    /// Files on which LLVM was re-run on Gyre's `loop-simplify,lcssa` output
    /// ([`super::rerun`]) without error.
    pub rerun_files: u32,
    /// Functions compared by the re-run.
    pub rerun_functions: u32,
    /// Of those, functions LLVM changed.
    pub rerun_changed: u32,
    /// Of those, functions with a reason in [`super::rerun::KNOWN`].
    pub rerun_explained: u32,
    /// Functions of the files with `loop-deletion` or `loop-simplifycfg` whose outputs
    /// were compared with `opt`'s.
    pub cleanup_fn_compared: u32,
    /// Of those, functions with the same loops and form counts in both outputs.
    pub cleanup_fn_same: u32,
    /// Per pass compared alone on its directory ([`super::alone`]).
    pub alone: Vec<super::alone::AloneTotals>,
    /// Each missed target, as a sentence.
    pub unmet: Vec<String>,
}

/// Is a file's outcome a disagreement with `opt` (when `opt` is available)?
fn disagreement(r: &FileReport) -> Option<String> {
    let c = r.checked.as_ref()?;
    match &c.opt {
        OptOutcome::Unavailable => None,
        OptOutcome::Failed(e) => Some(format!("opt failed: {e}")),
        OptOutcome::ImportFailed(e) => Some(format!("opt's output does not import: {e}")),
        OptOutcome::Ran { .. } => match &c.agree {
            Some(Err(d)) => Some(d.clone()),
            Some(Ok(())) => None,
            None => Some("Gyre's pipeline failed, nothing to compare".into()),
        },
    }
}

/// Do the outputs differ in their loops although the property agrees?
fn loop_difference(r: &FileReport) -> Option<String> {
    let c = r.checked.as_ref()?;
    match (&c.agree, &c.same_loops) {
        (Some(Ok(())), Some(Err(d))) => Some(d.clone()),
        _ => None,
    }
}

/// Count the LLVM re-run of one file; unexplained changes, stale reasons and failures
/// are missed targets.
fn rerun_totals(r: &FileReport, s: &mut Summary) {
    let key = r.entry.key();
    let rr = match &r.rerun {
        None => return,
        Some(Err(e)) => {
            s.unmet
                .push(format!("{key}: LLVM re-run on Gyre's output: {e}"));
            return;
        }
        Some(Ok(rr)) => rr,
    };
    s.rerun_files += 1;
    s.rerun_functions += rr.functions;
    for c in &rr.changed {
        s.rerun_changed += 1;
        if rerun::known(&key, &c.function).is_some() {
            s.rerun_explained += 1;
        } else {
            s.unmet.push(format!(
                "{key}@{}: LLVM's {} changes Gyre's output, unexplained: {}",
                c.function,
                rerun::PIPELINE,
                c.first
            ));
        }
    }
    for (k, _) in rerun::KNOWN {
        if let Some((file, f)) = k.split_once('@') {
            if file == key && !rr.changed.iter().any(|c| c.function == f) {
                s.unmet.push(format!(
                    "{k}: LLVM no longer changes this function; drop it from rerun::KNOWN"
                ));
            }
        }
    }
}

/// Compute totals and check the targets.
pub fn summarize(reports: &[FileReport]) -> Summary {
    let mut s = Summary {
        files: reports.len() as u32,
        ..Summary::default()
    };
    let mut names: Vec<String> = gyre_transforms::registry::PASSES
        .iter()
        .map(|p| p.name.to_string())
        .filter(|n| n != "verify")
        .collect();
    for r in reports {
        for p in r.checked.iter().flat_map(|c| c.passes.iter()) {
            if !names.contains(p) && p != "verify" {
                names.push(p.clone());
            }
        }
    }
    s.passes = names
        .into_iter()
        .map(|pass| PassTotals {
            pass,
            ..PassTotals::default()
        })
        .collect();
    let mut implemented = 0u32;
    let mut implemented_imported = 0u32;
    let mut opt_seen = false;
    for r in reports {
        rerun_totals(r, &mut s);
        let imported = r.imported.is_ok();
        s.imported += u32::from(imported);
        if !r.implemented() {
            s.not_implemented += 1;
            s.not_implemented_imported += u32::from(imported);
            continue;
        }
        implemented += 1;
        implemented_imported += u32::from(imported);
        let Some(c) = &r.checked else { continue };
        let key = r.entry.key();
        opt_seen |= !matches!(c.opt, OptOutcome::Unavailable);
        let dis = disagreement(r);
        if explanation(&key).is_none() {
            if let Some(d) = &dis {
                s.unmet
                    .push(format!("{key}: unexplained disagreement with opt: {d}"));
            } else if let Some(d) = loop_difference(r) {
                s.unmet.push(format!(
                    "{key}: unexplained difference from opt's loops: {d}"
                ));
            }
        }
        if let Err(e) = &c.gyre {
            s.unmet
                .push(format!("{key}: Gyre's output does not verify: {e}"));
        } else if let Err(e) = &c.gyre_holds {
            s.unmet.push(format!(
                "{key}: promised form does not hold in Gyre's output: {e}"
            ));
        }
        for f in &c.behaviour.failures {
            s.unmet.push(format!("{key}: behaviour differs: {f}"));
        }
        let same_functions = match (&c.gyre, &c.opt) {
            (Ok(g), OptOutcome::Ran { shape, .. }) => Some(g.count_same(shape, c.forms)),
            _ => None,
        };
        let cleanup = super::pipeline::COMPARED_ALONE
            .iter()
            .any(|p| c.passes.iter().any(|q| q == p));
        if let (true, Some((same, n))) = (cleanup, same_functions) {
            s.cleanup_fn_same += same;
            s.cleanup_fn_compared += n;
        }
        for t in s.passes.iter_mut().filter(|t| c.passes.contains(&t.pass)) {
            t.files += 1;
            t.verified += u32::from(c.gyre.is_ok());
            t.holds += u32::from(c.gyre_holds.is_ok());
            t.input_holds += u32::from(c.input_holds.is_ok());
            t.compared += u32::from(c.agree.is_some());
            t.agree += u32::from(matches!(c.agree, Some(Ok(()))));
            t.same_loops += u32::from(matches!(c.same_loops, Some(Ok(()))));
            if let Some((same, n)) = same_functions {
                t.fn_same += same;
                t.fn_compared += n;
            }
            t.explained += u32::from(
                (dis.is_some() || loop_difference(r).is_some()) && explanation(&key).is_some(),
            );
            t.behaviour_ok += u32::from(c.gyre.is_ok() && c.behaviour.failures.is_empty());
            t.functions += c.behaviour.functions;
            t.runs += c.behaviour.runs;
            t.endless += c.behaviour.endless;
            t.not_comparable += c.behaviour.not_comparable;
            t.external += c.behaviour.external;
        }
    }
    s.alone = super::alone::summarize(reports, &mut s.unmet);
    if implemented > 0 && implemented_imported * 10 < implemented * 9 {
        s.unmet.push(format!(
            "only {implemented_imported} of {implemented} files with implemented passes imported (target 90%)"
        ));
    }
    if opt_seen {
        for t in &s.passes {
            if t.files > 0 && t.agree * 10 < t.files * 9 {
                s.unmet.push(format!(
                    "{}: Gyre agrees with opt on {} of {} files (target 90%)",
                    t.pass, t.agree, t.files
                ));
            }
        }
        // Issue 22: loop-deletion and loop-simplifycfg leave the same loops as LLVM's in
        // at least 90% of the functions of their files.
        if s.cleanup_fn_same * 10 < s.cleanup_fn_compared * 9 {
            s.unmet.push(format!(
                "{}: the same loops as opt in {} of {} functions (target 90%)",
                super::pipeline::COMPARED_ALONE.join(" and "),
                s.cleanup_fn_same,
                s.cleanup_fn_compared
            ));
        }
    }
    s
}

fn pct(a: u32, b: u32) -> String {
    if b == 0 {
        "-".into()
    } else {
        format!("{:.0}%", 100.0 * f64::from(a) / f64::from(b))
    }
}

/// Short text for the console.
pub fn console(setup: &Setup, reports: &[FileReport], s: &Summary) -> String {
    let mut o = String::new();
    let _ = writeln!(
        o,
        "conformance ({}): {} files, {} imported ({}), {} pass not implemented",
        if setup.mode == Mode::Quick {
            "quick"
        } else {
            "full"
        },
        s.files,
        s.imported,
        pct(s.imported, s.files),
        s.not_implemented
    );
    match &setup.opt {
        Some(opt) => {
            let _ = writeln!(o, "opt: {} ({})", opt.path.display(), opt.version);
        }
        None => {
            let _ = writeln!(o, "opt: LLVM 14 opt not found; no comparison with opt");
        }
    }
    for t in &s.passes {
        let _ = writeln!(
            o,
            "  {:<14} files {:>3} (form already in input {:>3})  verified {:>3}  form holds {:>3}  agree with opt {:>3}/{:<3} same loops {:>3} ({} explained; functions {}/{} {})  behaviour ok {:>3}  ({} functions, {} runs compared, {} endless, {} not comparable)",
            t.pass, t.files, t.input_holds, t.verified, t.holds, t.agree, t.files, t.same_loops, t.explained, t.fn_same, t.fn_compared, pct(t.fn_same, t.fn_compared), t.behaviour_ok, t.functions, t.runs, t.endless, t.not_comparable
        );
    }
    let _ = writeln!(
        o,
        "  loop-deletion and loop-simplifycfg files: the same loops as opt in {}/{} functions ({})",
        s.cleanup_fn_same,
        s.cleanup_fn_compared,
        pct(s.cleanup_fn_same, s.cleanup_fn_compared)
    );
    if s.rerun_files > 0 {
        let _ = writeln!(
            o,
            "  LLVM re-run ({}) on Gyre's output changes {} of {} functions ({} files), {} explained",
            rerun::PIPELINE,
            s.rerun_changed,
            s.rerun_functions,
            s.rerun_files,
            s.rerun_explained
        );
    }
    for r in reports {
        if let Some(Ok(rr)) = &r.rerun {
            for c in &rr.changed {
                let key = r.entry.key();
                let why = rerun::known(&key, &c.function).unwrap_or("UNEXPLAINED");
                let _ = writeln!(
                    o,
                    "  re-run changes {key}@{}: [{why}] {}",
                    c.function, c.first
                );
            }
        }
    }
    super::alone::console(&mut o, &s.alone);
    for r in reports {
        let key = r.entry.key();
        let why = explanation(&key).unwrap_or("UNEXPLAINED");
        if let Some(d) = disagreement(r) {
            let _ = writeln!(o, "  disagreement {key}: {d} -- {why}");
        } else if let Some(d) = loop_difference(r) {
            let _ = writeln!(o, "  loops differ {key}: {d} -- {why}");
        }
    }
    if s.unmet.is_empty() {
        let _ = writeln!(o, "all targets met");
    } else {
        for u in &s.unmet {
            let _ = writeln!(o, "target missed: {u}");
        }
    }
    o
}

/// Escape a table cell.
fn cell(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

/// The text of docs/conformance.md.
pub fn document(setup: &Setup, reports: &[FileReport], s: &Summary) -> String {
    let mut o = String::new();
    let w = &mut o;
    let _ = writeln!(w, "# Conformance: LLVM's loop tests, Gyre and LLVM 14\n");
    let _ = writeln!(
        w,
        "Generated by `cargo xtask conformance --write-doc` from the corpus in \
         `../shared/corpus/llvm-lit/` (LLVM's own regression tests, see its README). Do not \
         edit by hand. `cargo test -p xtask` runs the same harness on a fixed subset.\n"
    );
    let _ = writeln!(
        w,
        "For each file, the first RUN line's pipeline (analysis-only elements such as \
         `verify<...>`, `print<...>`, `require<...>` dropped) runs in Gyre with verification \
         after each pass and in LLVM 14 `opt` ({}). Both outputs are judged by Gyre's \
         analyses: the loop forms the pipeline's passes promise (loop-simplify: preheader, \
         single back edge, dedicated exits on every reducible loop, edges counted as LLVM \
         counts them; lcssa: every loop in LCSSA form), plus the loop count of every function. Gyre's output then runs against the \
         input in the interpreter on random arguments: each function is called from a \
         wrapper kernel, pointer arguments point into 4 KiB buffers, calls to external \
         declarations reach the importer's stubs (no effect, result 0: sound, since passes \
         treat those calls as opaque). Runs where the input itself fails (out of bounds, \
         `unreachable`, poison branch) are \"not comparable\"; runs where the input never \
         ends must not end in the output either (\"endless\"). When LLVM 14 cannot read a \
         file (newer syntax), `opt` is given Gyre's export of the imported input instead \
         (marked *on export*). Files whose pipeline names a pass Gyre does not have yet are \
         \"pass not implemented\" and counted apart, except that a file whose pipeline also \
         has `loop-deletion` or `loop-simplifycfg` is compared on those passes alone \
         (`loop(loop-deletion)` in both: each loop adaptor puts the loops in loop-simplify \
         and LCSSA form first; marked *alone* in the file table), so that every file of \
         those two passes counts. \"Same loops, by function\" counts the functions (of the \
         files compared with `opt`) whose loop and form counts agree with `opt`'s.\n",
        setup
            .opt
            .as_ref()
            .map_or("not found".to_string(), |o| o.version.clone())
    );
    let _ = writeln!(w, "## Totals\n");
    let _ = writeln!(
        w,
        "- Files: {}; imported: {} ({}).",
        s.files,
        s.imported,
        pct(s.imported, s.files)
    );
    let implemented = s.files - s.not_implemented;
    let imp_imported = s.imported - s.not_implemented_imported;
    let _ = writeln!(
        w,
        "- Pipelines Gyre can run: {implemented} files, {imp_imported} imported ({}).",
        pct(imp_imported, implemented)
    );
    let _ = writeln!(
        w,
        "- Pass not implemented: {} files ({} of them import).",
        s.not_implemented, s.not_implemented_imported
    );
    if s.rerun_files > 0 {
        let _ = writeln!(
            w,
            "- LLVM re-run on Gyre's output: `opt -passes={}` changes {} of {} functions \
             ({} files), {} of them explained (see below).",
            rerun::PIPELINE,
            s.rerun_changed,
            s.rerun_functions,
            s.rerun_files,
            s.rerun_explained
        );
    }
    let _ = writeln!(
        w,
        "- Files with `loop-deletion` or `loop-simplifycfg` (target 90%): the same loops as \
         `opt` in {} of {} functions ({}).",
        s.cleanup_fn_same,
        s.cleanup_fn_compared,
        pct(s.cleanup_fn_same, s.cleanup_fn_compared)
    );
    if s.unmet.is_empty() {
        let _ = writeln!(w, "- Targets: all met.\n");
    } else {
        let _ = writeln!(w, "- Targets missed:");
        for u in &s.unmet {
            let _ = writeln!(w, "  - {}", cell(u));
        }
        let _ = writeln!(w);
    }
    let _ = writeln!(w, "### Per pass\n");
    let _ = writeln!(
        w,
        "| pass | files | form already held in input | verified | form holds | agree with opt | same loops as opt | same loops, by function | differences explained | behaviour preserved | functions run | runs compared | runs endless in both | runs not comparable | of the functions, calling externals (stubbed) |"
    );
    let _ = writeln!(
        w,
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
    );
    for t in &s.passes {
        let _ = writeln!(
            w,
            "| {} | {} | {} | {} | {} | {} ({}) | {} | {}/{} ({}) | {} | {} | {} | {} | {} | {} | {} |",
            t.pass,
            t.files,
            t.input_holds,
            t.verified,
            t.holds,
            t.agree,
            pct(t.agree, t.files),
            t.same_loops,
            t.fn_same,
            t.fn_compared,
            pct(t.fn_same, t.fn_compared),
            t.explained,
            t.behaviour_ok,
            t.functions,
            t.runs,
            t.endless,
            t.not_comparable,
            t.external
        );
    }
    let _ = writeln!(w, "\n### Pass not implemented, by missing pass\n");
    let mut missing: Vec<(String, u32)> = Vec::new();
    for r in reports {
        if let Ok(super::pipeline::Mapped::Missing(m)) = &r.mapped {
            for p in m {
                match missing.iter_mut().find(|(n, _)| n == p) {
                    Some(e) => e.1 += 1,
                    None => missing.push((p.clone(), 1)),
                }
            }
        }
    }
    missing.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    let line: Vec<String> = missing.iter().map(|(p, n)| format!("`{p}` {n}")).collect();
    let _ = writeln!(w, "{}\n", line.join(", "));

    let _ = writeln!(w, "## Disagreements with opt on the promised forms\n");
    let mut any = false;
    for r in reports {
        if let Some(d) = disagreement(r) {
            any = true;
            let key = r.entry.key();
            let _ = writeln!(
                w,
                "- `{key}`: {} ({})",
                explanation(&key).unwrap_or("**unexplained**"),
                cell(&d)
            );
        }
    }
    if !any {
        let _ = writeln!(w, "None.");
    }
    let _ = writeln!(w, "\n## Other differences from opt's loops\n");
    let _ = writeln!(
        w,
        "Files where the promised forms agree but the outputs have different loops.\n"
    );
    any = false;
    for r in reports {
        if let Some(d) = loop_difference(r) {
            any = true;
            let key = r.entry.key();
            let _ = writeln!(
                w,
                "- `{key}`: {} ({})",
                explanation(&key).unwrap_or("**unexplained**"),
                cell(&d)
            );
        }
    }
    if !any {
        let _ = writeln!(w, "None.");
    }
    super::alone::document(w, reports, &s.alone);
    rerun_section(w, reports, s);
    let _ = writeln!(w, "\n## Import failures\n");
    any = false;
    for r in reports {
        if let Err(e) = &r.imported {
            any = true;
            let _ = writeln!(w, "- `{}`: {}", r.entry.key(), cell(e));
        }
    }
    if !any {
        let _ = writeln!(w, "None.");
    }
    let _ = writeln!(w, "\n## Files\n");
    let _ = writeln!(
        w,
        "| dir | file | pipeline | imported | Gyre verifies | Gyre form | opt form | agree | behaviour |"
    );
    let _ = writeln!(w, "|---|---|---|---|---|---|---|---|---|");
    for r in reports {
        let imported = match &r.imported {
            Ok(n) => format!("yes ({n} fn)"),
            Err(_) => "no".into(),
        };
        let (verifies, gform, oform, agree, beh) = match (&r.mapped, &r.checked) {
            (Err(e), _) => (
                format!("pipeline: {e}"),
                "".into(),
                "".into(),
                "".into(),
                "".into(),
            ),
            (Ok(super::pipeline::Mapped::Missing(m)), _) => (
                format!("pass not implemented ({})", m.join(", ")),
                String::new(),
                String::new(),
                String::new(),
                String::new(),
            ),
            (_, None) => ("-".into(), "".into(), "".into(), "".into(), "".into()),
            (_, Some(c)) => {
                let verifies = match &c.gyre {
                    Ok(_) => "yes".to_string(),
                    Err(e) => format!("no: {e}"),
                };
                let form = |h: &Result<(), String>, loops: u32| match h {
                    Ok(()) => format!("holds ({loops} loops)"),
                    Err(e) => format!("fails: {e}"),
                };
                let gform = match &c.gyre {
                    Ok(sh) => format!(
                        "{}{}",
                        form(&c.gyre_holds, sh.loops()),
                        if c.input_holds.is_ok() {
                            ", input already"
                        } else {
                            ""
                        }
                    ),
                    Err(_) => "-".into(),
                };
                let oform = match (&c.opt, &c.opt_holds) {
                    (OptOutcome::Ran { shape, on_export }, Some(h)) => format!(
                        "{}{}",
                        form(h, shape.loops()),
                        if *on_export { ", on export" } else { "" }
                    ),
                    (OptOutcome::Unavailable, _) => "no opt".into(),
                    (OptOutcome::Failed(e), _) => format!("opt failed: {e}"),
                    (OptOutcome::ImportFailed(e), _) => format!("import failed: {e}"),
                    _ => "-".into(),
                };
                let agree = match (&c.agree, &c.same_loops) {
                    (Some(Ok(())), Some(Ok(()))) => "yes".to_string(),
                    (Some(Ok(())), _) => "yes (loops differ, see below)".to_string(),
                    (Some(Err(_)), _) => "**no** (see below)".to_string(),
                    (None, _) => "-".to_string(),
                };
                let b = &c.behaviour;
                let beh = if c.gyre.is_err() {
                    "-".to_string()
                } else if !b.failures.is_empty() {
                    format!("**differs**: {}", b.failures[0])
                } else {
                    let mut t = format!(
                        "same ({} fn, {} runs, {} endless, {} n/c",
                        b.functions, b.runs, b.endless, b.not_comparable
                    );
                    if !b.input_errors.is_empty() {
                        let kinds: Vec<String> = b
                            .input_errors
                            .iter()
                            .map(|(k, n)| format!("{k} {n}"))
                            .collect();
                        let _ = write!(t, ": {}", kinds.join(", "));
                    }
                    if b.external > 0 {
                        let _ = write!(t, ", {} fn via stubs", b.external);
                    }
                    if b.unrunnable > 0 {
                        let _ = write!(t, ", {} fn not runnable", b.unrunnable);
                    }
                    t.push(')');
                    t
                };
                (verifies, gform, oform, agree, beh)
            }
        };
        let _ = writeln!(
            w,
            "| {} | {} | `{}` | {} | {} | {} | {} | {} | {} |",
            r.entry.dir,
            cell(&r.entry.file),
            match &r.cleanup_alone {
                Some(m) => cell(&format!(
                    "{}` *alone* as `{}`, lacking `{}",
                    r.pipeline,
                    r.checked.as_ref().map_or("-", |c| c.gyre_pipeline.as_str()),
                    m.join(", ")
                )),
                None => cell(&r.pipeline),
            },
            imported,
            cell(&verifies),
            cell(&gform),
            cell(&oform),
            agree,
            cell(&beh)
        );
    }
    o
}

/// The section on LLVM's re-run of `loop-simplify,lcssa` on Gyre's output.
fn rerun_section(w: &mut String, reports: &[FileReport], s: &Summary) {
    let _ = writeln!(w, "\n## LLVM re-run on Gyre's output\n");
    let _ = writeln!(
        w,
        "Every imported file, whatever its pipeline, goes through Gyre's `{p}` (the module \
         verifies and every reducible loop has both forms), is exported, and LLVM 14 runs \
         `opt -passes={p}` on the export. A function whose text LLVM changes (compared with \
         `opt -passes=verify` on the same export) is one where LLVM finds work left: either \
         Gyre's forms and LLVM's definitions differ, or LLVM's passes do more than their \
         forms ask. Gyre's forms count edges as LLVM does: a preheader has one successor \
         edge, a loop has one back edge (a latch with two edges to the header, through a \
         `brif` or a `br_table`, gets a backedge block), and the export sends two edges of \
         one terminator to one block through trampoline blocks only when their arguments \
         differ (a trampoline on a loop exit lies outside the loop, where LLVM's LCSSA \
         wants a phi). Set `GYRE_RERUN_DUMP=<dir>` to keep the three texts of every file.\n",
        p = rerun::PIPELINE
    );
    let _ = writeln!(
        w,
        "LLVM changes {} of {} functions ({} files checked); {} explained.\n",
        s.rerun_changed, s.rerun_functions, s.rerun_files, s.rerun_explained
    );
    let _ = writeln!(w, "| reason | explanation |\n|---|---|");
    for (k, v) in rerun::REASONS {
        let _ = writeln!(w, "| `{k}` | {} |", cell(v));
    }
    let _ = writeln!(
        w,
        "\n| file | function | reason | first difference (before -> after) |"
    );
    let _ = writeln!(w, "|---|---|---|---|");
    let mut failed = Vec::new();
    for r in reports {
        let key = r.entry.key();
        match &r.rerun {
            Some(Ok(rr)) => {
                for c in &rr.changed {
                    let why = rerun::known(&key, &c.function)
                        .map_or("**unexplained**".to_string(), |k| format!("`{k}`"));
                    let _ = writeln!(
                        w,
                        "| `{key}` | `@{}` | {why} | {} |",
                        cell(&c.function),
                        cell(&c.first)
                    );
                }
            }
            Some(Err(e)) => failed.push(format!("- `{key}`: {}", cell(e))),
            None => {}
        }
    }
    if !failed.is_empty() {
        let _ = writeln!(w, "\nFiles the re-run could not check:\n");
        for f in failed {
            let _ = writeln!(w, "{f}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::conformance::rerun::{Changed, Rerun};
    use crate::conformance::Entry;

    fn report(dir: &str, file: &str, changed: &[&str]) -> FileReport {
        FileReport {
            entry: Entry {
                dir: dir.into(),
                file: file.into(),
                run_passes: "loop-simplify".into(),
                parses_with_llvm14: true,
                notes: String::new(),
            },
            pipeline: "loop-simplify".into(),
            imported: Ok(2),
            mapped: Err("not looked at".into()),
            checked: None,
            cleanup_alone: None,
            rerun: Some(Ok(Rerun {
                functions: 2,
                changed: changed
                    .iter()
                    .map(|f| Changed {
                        function: f.to_string(),
                        first: "`a` -> `b`".into(),
                    })
                    .collect(),
            })),
            alone: None,
        }
    }

    #[test]
    fn rerun_changes_need_a_known_reason() {
        // A known function: counted and explained.
        let s = summarize(&[report("LoopSimplify", "pr26682.ll", &["foo"])]);
        assert_eq!((s.rerun_files, s.rerun_functions), (1, 2));
        assert_eq!((s.rerun_changed, s.rerun_explained), (1, 1));
        assert!(s.unmet.is_empty(), "{:?}", s.unmet);
        // Another function of the same file: a missed target.
        let s = summarize(&[report("LoopSimplify", "pr26682.ll", &["foo", "bar"])]);
        assert_eq!((s.rerun_changed, s.rerun_explained), (2, 1));
        assert_eq!(s.unmet.len(), 1, "{:?}", s.unmet);
        assert!(s.unmet[0].contains("pr26682.ll@bar"), "{:?}", s.unmet);
        // A known function LLVM no longer changes: a stale reason, also missed.
        let s = summarize(&[report("LoopSimplify", "pr26682.ll", &[])]);
        assert_eq!(s.unmet.len(), 1, "{:?}", s.unmet);
        assert!(s.unmet[0].contains("no longer changes"), "{:?}", s.unmet);
        // A failed re-run is missed too.
        let mut r = report("LoopSimplify", "other.ll", &[]);
        r.rerun = Some(Err("opt: boom".into()));
        let s = summarize(&[r]);
        assert_eq!(s.rerun_files, 0);
        assert!(s.unmet[0].contains("opt: boom"), "{:?}", s.unmet);
    }
}
