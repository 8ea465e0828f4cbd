//! The LLVM side: the shape as textual LLVM IR, and the analysis rows of
//! `opt -time-passes` (LLVM 14, new pass manager).

use crate::clif::successors;
use gyre_analysis::cfggen::CfgShape;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// Write `copies` functions `@f0..`, each `void (i32 %x)`, cycling through `shapes`
/// (`@fK` is `shapes[K % shapes.len()]`, so LLVM too sees distinct functions in turn when
/// there are several). LLVM's entry block may have no predecessors, so each function starts
/// with an extra `entry` block that computes `%c = trunc %x` and branches to `%b0`; block
/// `i` is `%b{i}`. 0 successors: `ret void`; 1: `br label`; 2: `br i1 %c`; 3 or more:
/// `switch i32 %x` whose default is the first target and whose cases `0, 1, ..` are the
/// others.
pub fn write_ll(shapes: &[CfgShape], copies: usize, w: &mut impl Write) -> io::Result<()> {
    let succs: Vec<(Vec<u32>, Vec<u32>)> = shapes.iter().take(copies).map(successors).collect();
    for k in 0..copies {
        let shape = &shapes[k % shapes.len()];
        let (start, targets) = &succs[k % shapes.len()];
        writeln!(w, "define void @f{k}(i32 %x) {{")?;
        writeln!(w, "entry:\n  %c = trunc i32 %x to i1\n  br label %b0")?;
        for i in 0..shape.num_blocks as usize {
            writeln!(w, "b{i}:")?;
            match targets[start[i] as usize..start[i + 1] as usize] {
                [] => writeln!(w, "  ret void")?,
                [t] => writeln!(w, "  br label %b{t}")?,
                [t, e] => writeln!(w, "  br i1 %c, label %b{t}, label %b{e}")?,
                [d, ref rest @ ..] => {
                    write!(w, "  switch i32 %x, label %b{d} [")?;
                    for (case, t) in rest.iter().enumerate() {
                        write!(w, " i32 {case}, label %b{t}")?;
                    }
                    writeln!(w, " ]")?;
                }
            }
        }
        writeln!(w, "}}")?;
    }
    Ok(())
}

/// Blocks of the shapes in a module of `copies` functions written by [`write_ll`] (without
/// the extra `entry` blocks): the divisor of LLVM's ns/block.
pub fn module_blocks(shapes: &[CfgShape], copies: usize) -> u64 {
    (0..copies)
        .map(|k| u64::from(shapes[k % shapes.len()].num_blocks))
        .sum()
}

/// LLVM 14 `opt`: `$GYRE_OPT` if set, else `opt-14` or `opt` on the `PATH` (as
/// `cargo xtask conformance`). Returns the path and its version line.
pub fn find_opt() -> Option<(PathBuf, String)> {
    let candidates: Vec<PathBuf> = match std::env::var_os("GYRE_OPT") {
        Some(p) => vec![PathBuf::from(p)],
        None => vec!["opt-14".into(), "opt".into()],
    };
    candidates.into_iter().find_map(|path| {
        let out = Command::new(&path).arg("--version").output().ok()?;
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        let line = text.lines().find(|l| l.contains("LLVM version 14."))?;
        Some((path, line.trim().to_string()))
    })
}

/// Wall seconds of the analyses in one `-time-passes` report (summed over all functions).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AnalysisTimes {
    /// The `DominatorTreeAnalysis` row.
    pub domtree: f64,
    /// The `LoopAnalysis` row (LLVM's timers pause an analysis while a nested one runs,
    /// and the dominator tree is cached by then, so it does not include it).
    pub loops: f64,
}

/// The wall time of the row named exactly `name` in the pass execution report.
fn wall_time(report: &str, name: &str) -> Option<f64> {
    let section = report
        .split("Pass execution timing report")
        .nth(1)?
        .split("LLVM IR Parsing")
        .next()?;
    section.lines().find_map(|line| {
        let rest = line.trim_end().strip_suffix(name)?;
        // The name must be the whole last column ("LoopAnalysis", not
        // "RequireAnalysisPass<llvm::LoopAnalysis, ...>").
        if !rest.ends_with(' ') {
            return None;
        }
        // Columns: [user (pct)] [system (pct)] [user+system (pct)] wall (pct); the wall
        // time is the last plain number.
        rest.split_whitespace()
            .rev()
            .find_map(|t| t.parse::<f64>().ok())
    })
}

/// Parse an `opt -time-passes` report.
pub fn parse_time_passes(report: &str) -> Result<AnalysisTimes, String> {
    let get = |name| {
        wall_time(report, name)
            .ok_or_else(|| format!("no `{name}` row in the -time-passes report:\n{report}"))
    };
    Ok(AnalysisTimes {
        domtree: get("DominatorTreeAnalysis")?,
        loops: get("LoopAnalysis")?,
    })
}

/// What one `opt` run gave.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum OptRun {
    /// The analyses' wall seconds.
    Times(AnalysisTimes),
    /// Killed after the time limit.
    TimedOut,
}

/// Run `opt` with `args` on `file`, killing it after `limit`; returns its stderr.
fn run_opt(
    opt: &Path,
    args: &[&str],
    file: &Path,
    limit: Duration,
) -> Result<Option<String>, String> {
    let err_path = file.with_extension("stderr");
    let err_file = std::fs::File::create(&err_path)
        .map_err(|e| format!("cannot create {}: {e}", err_path.display()))?;
    let mut child = Command::new(opt)
        .args(args)
        .arg(file)
        .stdout(std::process::Stdio::null())
        .stderr(err_file)
        .spawn()
        .map_err(|e| format!("cannot start {}: {e}", opt.display()))?;
    let t = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().map_err(|e| e.to_string())? {
            break s;
        }
        if t.elapsed() > limit {
            // Only the child we started.
            let _ = child.kill();
            let _ = child.wait();
            let _ = std::fs::remove_file(&err_path);
            return Ok(None);
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let stderr = std::fs::read_to_string(&err_path)
        .map_err(|e| format!("cannot read {}: {e}", err_path.display()))?;
    let _ = std::fs::remove_file(&err_path);
    if !status.success() {
        return Err(format!(
            "`{} {}` failed ({status}):\n{stderr}",
            opt.display(),
            args.join(" ")
        ));
    }
    Ok(Some(stderr))
}

/// The `-passes=` pipeline computing the dominator tree and the loops `reps` times per
/// function (invalidating both between computations).
pub fn pipeline(reps: usize) -> String {
    let once = "require<domtree>,require<loops>";
    let again = ",invalidate<loops>,invalidate<domtree>,require<domtree>,require<loops>";
    let mut p = String::from(once);
    for _ in 1..reps.max(1) {
        p.push_str(again);
    }
    p
}

/// Time LLVM's `DominatorTreeAnalysis` and `LoopAnalysis` on `file` with
/// `opt -disable-output -passes=<pipeline(reps)> -time-passes` (times summed over all
/// functions and repetitions).
pub fn time_analyses(
    opt: &Path,
    file: &Path,
    reps: usize,
    limit: Duration,
) -> Result<OptRun, String> {
    let passes = format!("-passes={}", pipeline(reps));
    let args = ["-disable-output", passes.as_str(), "-time-passes"];
    match run_opt(opt, &args, file, limit)? {
        None => Ok(OptRun::TimedOut),
        Some(report) => parse_time_passes(&report).map(OptRun::Times),
    }
}

/// The loops LLVM finds in `file` (one function): each loop's header block index and its
/// parent loop's header, from `print<loops>` (headers are the blocks marked `<header>`;
/// the parent is the loop printed last at a smaller depth before it).
pub fn loop_headers(
    opt: &Path,
    file: &Path,
    limit: Duration,
) -> Result<Vec<(usize, Option<usize>)>, String> {
    let args = ["-disable-output", "-passes=print<loops>"];
    let out = run_opt(opt, &args, file, limit)?.ok_or("print<loops> timed out")?;
    let mut loops = Vec::new();
    // Headers of the enclosing loops, by depth.
    let mut stack: Vec<usize> = Vec::new();
    for line in out.lines() {
        let Some(rest) = line.trim_start().strip_prefix("Loop at depth ") else {
            continue;
        };
        let (depth, blocks) = rest
            .split_once(" containing: ")
            .ok_or_else(|| format!("unexpected print<loops> line: {line}"))?;
        let depth: usize = depth.parse().map_err(|_| format!("bad depth in: {line}"))?;
        let header = blocks
            .split(',')
            .find(|b| b.contains("<header>"))
            .and_then(|b| b.trim().strip_prefix("%b"))
            .and_then(|b| b.split('<').next())
            .and_then(|b| b.parse::<usize>().ok())
            .ok_or_else(|| format!("no header in: {line}"))?;
        stack.truncate(depth - 1);
        loops.push((header, stack.last().copied()));
        stack.push(header);
    }
    Ok(loops)
}

/// The wall seconds of pass `row` (a `-time-passes` row name, e.g. `LoopRotatePass`) when
/// `opt -disable-output -passes=<pipeline> -time-passes` runs on `file`; `None` if it was
/// killed after `limit`.
pub fn time_pass(
    opt: &Path,
    file: &Path,
    pipeline: &str,
    row: &str,
    limit: Duration,
) -> Result<Option<f64>, String> {
    time_pass_with(opt, file, pipeline, &[], row, limit)
}

/// [`time_pass`] with extra `opt` options before the file (e.g.
/// `-enable-nontrivial-unswitch`, without which LLVM 14 unswitches nothing non-trivially
/// on a target with divergent branches such as NVPTX, whatever the pipeline says).
pub fn time_pass_with(
    opt: &Path,
    file: &Path,
    pipeline: &str,
    flags: &[&str],
    row: &str,
    limit: Duration,
) -> Result<Option<f64>, String> {
    let passes = format!("-passes={pipeline}");
    let mut args = vec!["-disable-output", passes.as_str(), "-time-passes"];
    args.extend_from_slice(flags);
    match run_opt(opt, &args, file, limit)? {
        None => Ok(None),
        Some(report) => wall_time(&report, row)
            .map(Some)
            .ok_or_else(|| format!("no `{row}` row in the -time-passes report:\n{report}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const REPORT: &str = "\
===-------------------------------------------------------------------------===
                      ... Pass execution timing report ...
===-------------------------------------------------------------------------===
  Total Execution Time: 0.0301 seconds (0.0302 wall clock)

   ---User Time---   --System Time--   --User+System--   ---Wall Time---  --- Name ---
   0.0100 ( 33.0%)   0.0000 ( 27.5%)   0.0100 ( 26.9%)   0.0123 ( 26.3%)  VerifierPass
   0.0000 ( 18.8%)   0.0000 ( 21.6%)   0.0000 ( 20.9%)   0.0007 ( 21.8%)  RequireAnalysisPass<llvm::LoopAnalysis, llvm::Function>
   0.0050 ( 18.8%)   0.0000 ( 17.6%)   0.0000 ( 17.9%)   0.0051 ( 18.0%)  LoopAnalysis
   0.0020 ( 12.5%)   0.0000 ( 11.8%)   0.0000 ( 11.9%)   0.0042 ( 12.8%)  DominatorTreeAnalysis
   0.0300 (100.0%)   0.0001 (100.0%)   0.0001 (100.0%)   0.0302 (100.0%)  Total

===-------------------------------------------------------------------------===
                                LLVM IR Parsing
===-------------------------------------------------------------------------===
   0.0000 (100.0%)   0.0001 (100.0%)   0.0001 (100.0%)   0.9999 (100.0%)  LoopAnalysis
";

    #[test]
    fn parses_wall_times_of_the_analysis_rows() {
        let t = parse_time_passes(REPORT).expect("parses");
        assert_eq!(
            t,
            AnalysisTimes {
                domtree: 0.0042,
                loops: 0.0051
            }
        );
    }

    #[test]
    fn pipeline_repeats_with_invalidation() {
        assert_eq!(pipeline(1), "require<domtree>,require<loops>");
        assert_eq!(
            pipeline(2),
            "require<domtree>,require<loops>,invalidate<loops>,invalidate<domtree>,require<domtree>,require<loops>"
        );
    }

    #[test]
    fn missing_row_is_an_error() {
        let r = REPORT.replace("  DominatorTreeAnalysis", "  Something");
        assert!(parse_time_passes(&r).is_err());
    }

    #[test]
    fn writes_each_terminator_kind() {
        let shape = CfgShape {
            num_blocks: 4,
            edges: vec![(0, 1), (1, 2), (1, 0), (2, 3), (2, 3), (2, 1)],
        };
        let mut out = Vec::new();
        write_ll(std::slice::from_ref(&shape), 1, &mut out).expect("write to memory");
        let text = String::from_utf8(out).expect("utf-8");
        assert!(text.contains("b0:\n  br label %b1\n"), "{text}");
        assert!(
            text.contains("b1:\n  br i1 %c, label %b2, label %b0\n"),
            "{text}"
        );
        assert!(
            text.contains(
                "b2:\n  switch i32 %x, label %b3 [ i32 0, label %b3 i32 1, label %b1 ]\n"
            ),
            "{text}"
        );
        assert!(text.contains("b3:\n  ret void\n"), "{text}");
    }

    /// The body of function `@f{k}` in a written module.
    fn body(text: &str, k: usize) -> &str {
        let head = format!("define void @f{k}(i32 %x) {{\n");
        let start = text.find(&head).expect("function present") + head.len();
        let len = text[start..].find("}\n").expect("function ends");
        &text[start..start + len]
    }

    #[test]
    fn copies_cycle_through_distinct_shapes() {
        let a = CfgShape {
            num_blocks: 3,
            edges: vec![(0, 1), (1, 2), (1, 1)],
        };
        let b = CfgShape {
            num_blocks: 2,
            edges: vec![(0, 1)],
        };
        let shapes = [a.clone(), b.clone()];
        let mut out = Vec::new();
        write_ll(&shapes, 3, &mut out).expect("write to memory");
        let text = String::from_utf8(out).expect("utf-8");
        let one = |s: &CfgShape| {
            let mut o = Vec::new();
            write_ll(std::slice::from_ref(s), 1, &mut o).expect("write to memory");
            let t = String::from_utf8(o).expect("utf-8");
            body(&t, 0).to_string()
        };
        assert_eq!(body(&text, 0), one(&a));
        assert_eq!(body(&text, 1), one(&b));
        assert_eq!(body(&text, 2), one(&a));
        assert_ne!(one(&a), one(&b));
        assert!(!text.contains("@f3"));
        assert_eq!(module_blocks(&shapes, 3), 3 + 2 + 3);
    }
}
