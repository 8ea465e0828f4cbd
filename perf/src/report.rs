//! docs/perf.md: the report's data and its markdown (the `report` binary measures, this
//! module only renders, so the rendering is tested on made-up figures).

use crate::process::Outcome;
use crate::quality::{self, KernelQuality};
use crate::speed::{llvm_has_row, SpeedRow, EMIT, O_TOTAL};
use std::fmt::Write as _;

/// Everything the report shows.
#[derive(Clone, Debug)]
pub struct Report {
    /// `--quick` run (small sizes, fewer repetitions).
    pub quick: bool,
    /// When it ran (UTC, from `date -u`).
    pub date: String,
    /// Machine and versions: (what, value).
    pub machine: Vec<(String, String)>,
    /// Gyre's `-O` pipeline.
    pub pipeline: String,
    /// Its passes, flattened.
    pub passes: Vec<String>,
    /// LLVM's matching pipeline and the passes it lacks.
    pub llvm_pipeline: (String, Vec<String>),
    /// Seconds before a process is killed.
    pub limit: f64,
    /// Address-space limit per process, GiB.
    pub mem_gib: u64,
    /// Compile-speed rows.
    pub speed: Vec<SpeedRow>,
    /// The `analyses` binary's markdown (Gyre, Cranelift, LLVM on the same CFGs).
    pub analyses_md: Option<Result<String, String>>,
    /// Examples and small generated kernels.
    pub local_quality: Vec<KernelQuality>,
    /// Why some of them have no (dynamic) figures.
    pub local_notes: Vec<String>,
    /// The corpus harness's quality JSON, if any (or why not).
    pub corpus_quality: Result<Vec<KernelQuality>, String>,
    /// SVG files written, relative to docs/ (title, path).
    pub plots: Vec<(String, String)>,
    /// Sizes left out, and why.
    pub notes: Vec<String>,
}

impl Default for Report {
    fn default() -> Report {
        Report {
            quick: false,
            date: String::new(),
            machine: Vec::new(),
            pipeline: String::new(),
            passes: Vec::new(),
            llvm_pipeline: (String::new(), Vec::new()),
            limit: 0.0,
            mem_gib: 0,
            speed: Vec::new(),
            analyses_md: None,
            local_quality: Vec::new(),
            local_notes: Vec::new(),
            corpus_quality: Err("not given".into()),
            plots: Vec::new(),
            notes: Vec::new(),
        }
    }
}

/// ns per block.
pub fn ns_per_block(seconds: f64, blocks: usize) -> f64 {
    seconds * 1e9 / blocks.max(1) as f64
}

fn ns_cell(v: Option<f64>) -> String {
    match v {
        None => "-".into(),
        Some(x) if x >= 100.0 => format!("{x:.0}"),
        Some(x) if x >= 10.0 => format!("{x:.1}"),
        Some(x) => format!("{x:.2}"),
    }
}

fn x_cell(a: Option<f64>, b: Option<f64>) -> String {
    match (a, b) {
        (Some(a), Some(b)) if a > 0.0 && b > 0.0 => format!("{:.1}x", a / b),
        _ => "-".into(),
    }
}

/// The `ratio dt+loops` column (Cranelift / Gyre) of the `analyses` binary's sums table:
/// (family, blocks, ratio) per row.
pub fn clif_ratios(md: &str) -> Vec<(String, String, f64)> {
    let Some(start) = md.find("ratios Cranelift / Gyre") else {
        return Vec::new();
    };
    md[start..]
        .lines()
        .skip(1)
        .skip_while(|l| !l.starts_with('|'))
        .take_while(|l| l.starts_with('|'))
        .filter_map(|l| {
            let cells: Vec<&str> = l.split('|').map(str::trim).collect();
            // "", family, blocks, CL dt+loops, Gyre dt+loops, ratio dt+loops, ...
            let r = cells.get(5)?.strip_suffix('x')?.parse::<f64>().ok()?;
            Some((cells[1].to_string(), cells[2].to_string(), r))
        })
        .collect()
}

/// A target's verdict line.
struct Target {
    what: String,
    met: Option<bool>,
    figure: String,
    /// How far a miss is from the target ("3.1x over the bound").
    by: Option<String>,
}

/// `Some("Nx over the bound")` for a figure above `bound` (lower is better).
fn over(figure: f64, bound: f64, unit: &str) -> Option<String> {
    (figure > bound).then(|| format!("{:.1}x over the {bound}{unit} bound", figure / bound))
}

/// The families of the rows, in first-seen order.
fn families(rows: &[SpeedRow]) -> Vec<&str> {
    let mut f: Vec<&str> = Vec::new();
    for r in rows {
        if !f.contains(&r.family.as_str()) {
            f.push(&r.family);
        }
    }
    f
}

fn targets(r: &Report) -> Vec<Target> {
    let mut t = Vec::new();
    // 1. domtree + loops against Cranelift.
    let clif = match &r.analyses_md {
        Some(Ok(md)) => clif_ratios(md),
        _ => Vec::new(),
    };
    let worst = clif.iter().min_by(|a, b| a.2.total_cmp(&b.2));
    t.push(Target {
        what: "domtree + loops at least 3x faster than Cranelift's".into(),
        met: worst.map(|w| w.2 >= 3.0),
        figure: match worst {
            Some((f, b, x)) => format!(
                "lowest ratio {x:.1}x ({f}, {b} blocks) over {} rows",
                clif.len()
            ),
            None => "not measured".into(),
        },
        by: worst
            .filter(|w| w.2 < 3.0)
            .map(|w| format!("{:.1}x short of 3x", 3.0 / w.2.max(1e-9))),
    });
    // 2. Each pass linear and under 1 µs/block (nest and deep).
    let mut phases: Vec<String> = r.passes.clone();
    phases.push(O_TOTAL.into());
    phases.push(EMIT.into());
    for p in &phases {
        let mut growth: Vec<String> = Vec::new();
        let mut worst_growth: f64 = 0.0;
        let mut linear = true;
        let mut max_ns: f64 = 0.0;
        let mut any = false;
        for fam in ["nest", "deep"] {
            let pts: Vec<(usize, f64)> = r
                .speed
                .iter()
                .filter(|row| row.family == fam)
                .filter_map(|row| Some((row.blocks, ns_per_block(row.gyre_s(p)?, row.blocks))))
                .collect();
            for &(_, ns) in &pts {
                max_ns = max_ns.max(ns);
            }
            if let (Some(first), Some(last)) = (pts.first(), pts.last()) {
                if pts.len() >= 2 {
                    any = true;
                    let g = last.1 / first.1.max(1e-9);
                    linear &= g <= 1.5;
                    worst_growth = worst_growth.max(g);
                    growth.push(format!(
                        "{fam} {:.2}x ({:.0} → {:.0} ns/block, {} → {} blocks)",
                        g, first.1, last.1, first.0, last.0
                    ));
                }
            }
        }
        let sizes_note = if r.quick {
            " (--quick: 1k → 10k only)"
        } else {
            ""
        };
        t.push(Target {
            what: format!("`{p}` linear: ns/block within 1.5x from the smallest to the largest size{sizes_note}"),
            met: any.then_some(linear),
            figure: if growth.is_empty() { "not measured".into() } else { growth.join("; ") },
            by: over(worst_growth, 1.5, "x"),
        });
        t.push(Target {
            what: format!("`{p}` under 1 µs/block"),
            met: any.then_some(max_ns < 1000.0),
            figure: if any {
                format!("worst {max_ns:.0} ns/block (nest, deep)")
            } else {
                "not measured".into()
            },
            by: over(max_ns, 1000.0, " ns/block"),
        });
    }
    // 3. -O + emission >= 100x opt -O2 + llc at 10k blocks.
    for fam in families(&r.speed) {
        let Some(row) = r
            .speed
            .iter()
            .find(|row| row.family == fam && row.target == 10_000)
        else {
            continue;
        };
        let g = row.gyre_o_emit();
        let l = row.llvm_total();
        let (met, fig) = match (g, l) {
            (Some(g), Some(l)) => (
                Some(l / g >= 100.0),
                format!(
                    "{:.0}x (Gyre -O + emission {:.1} ms in-process, `opt -O2` + `llc` {:.2} s; process to process {})",
                    l / g,
                    g * 1e3,
                    l,
                    x_cell(Some(l), row.gyre_process.wall())
                ),
            ),
            // LLVM did not finish within the limit (or was skipped after a smaller size
            // did not): the ratio is at least limit / Gyre.
            // Below 100x the bound decides nothing: not measured.
            (Some(g), None) => (
                (r.limit / g >= 100.0).then_some(true),
                format!(
                    "at least {:.0}x: LLVM did not finish within {:.0} s at this or a smaller size (opt {}, llc {}; Gyre {:.1} ms)",
                    r.limit / g,
                    r.limit,
                    row.opt.wall_cell(),
                    row.llc.wall_cell(),
                    g * 1e3
                ),
            ),
            _ => (None, "not measured".into()),
        };
        let by = match (g, l) {
            (Some(g), Some(l)) if l / g < 100.0 => {
                Some(format!("{:.1}x short of 100x", 100.0 / (l / g).max(1e-9)))
            }
            _ => None,
        };
        t.push(Target {
            what: format!("{fam} at 10k blocks: Gyre -O + PTX emission at least 100x faster than `opt -O2` + `llc`"),
            met,
            figure: fig,
            by,
        });
    }
    // 4. Under 10 s at 1M blocks.
    for fam in families(&r.speed) {
        let row = r
            .speed
            .iter()
            .find(|row| row.family == fam && row.target >= 1_000_000);
        let (met, fig, by) = match row {
            None => (None, "not measured (no 1M-block run)".to_string(), None),
            Some(row) => match (&row.gyre_process, row.gyre_o_emit()) {
                (Outcome::Ok { wall, rss_kib }, _) => (
                    Some(*wall < 10.0),
                    format!(
                        "`gyre compile -O` {wall:.2} s, {:.0} MiB ({} blocks)",
                        *rss_kib as f64 / 1024.0,
                        row.blocks
                    ),
                    over(*wall, 10.0, " s"),
                ),
                (Outcome::Skipped, Some(s)) => (
                    Some(s < 10.0),
                    format!("in-process -O + emission {s:.2} s (no process run)"),
                    over(s, 10.0, " s"),
                ),
                (Outcome::Timeout(limit), _) => (
                    Some(false),
                    format!("`gyre compile -O`: {}", row.gyre_process.wall_cell()),
                    Some(format!("at least {:.0}x over the 10 s bound", limit / 10.0)),
                ),
                (o, _) => (
                    Some(false),
                    format!("`gyre compile -O`: {}", o.wall_cell()),
                    None,
                ),
            },
        };
        t.push(Target {
            what: format!("{fam} at 1M blocks: whole `gyre compile -O` under 10 s"),
            met,
            figure: fig,
            by,
        });
    }
    t
}

/// The markdown of the whole report.
pub fn render(r: &Report) -> String {
    let mut s = String::new();
    s.push_str("# Performance report\n\n");
    s.push_str(
        "<!-- Written by `cargo xtask perf` (perf/src/bin/report.rs); do not edit by hand. -->\n\n",
    );
    let _ = writeln!(
        s,
        "Generated {} by `cargo xtask perf{}`. Gyre's compile speed against LLVM 14 (and its CFG analyses against Cranelift) on the same kernels, and the quality of the PTX each makes. Figures are for this machine at this time: it is a shared, noisy box (other builds ran beside this one), so read ratios, not absolute times, and expect 1.5-3x run-to-run noise on LLVM's process times.\n",
        r.date,
        if r.quick { " --quick" } else { "" }
    );
    s.push_str("## Machine and versions\n\n| | |\n|---|---|\n");
    for (k, v) in &r.machine {
        let _ = writeln!(s, "| {k} | {v} |");
    }
    let _ = writeln!(
        s,
        "\nGyre's `-O` pipeline (`DEFAULT_PIPELINE`): `{}`. LLVM's matching pipeline for the per-pass rows: `{}`{}. Processes are killed after {:.0} s and limited to {} GiB of address space (`ulimit -v`).\n",
        r.pipeline,
        r.llvm_pipeline.0,
        if r.llvm_pipeline.1.is_empty() {
            String::new()
        } else {
            format!(" (no LLVM counterpart: {})", r.llvm_pipeline.1.join(", "))
        },
        r.limit,
        r.mem_gib
    );
    // ---- Targets first: what a reader wants.
    s.push_str("## Targets\n\nShown as figures, never asserted by tests.\n\n| target | met | figure |\n|---|---|---|\n");
    let ts = targets(r);
    for t in &ts {
        let met = match t.met {
            Some(true) => "met",
            Some(false) => "**missed**",
            None => "-",
        };
        let by = match (&t.by, t.met) {
            (Some(b), Some(false)) => format!(" (**{b}**)"),
            _ => String::new(),
        };
        let _ = writeln!(s, "| {} | {met} | {}{by} |", t.what, t.figure);
    }
    // ---- Compile speed.
    s.push_str("\n## Compile speed\n\n");
    s.push_str("Kernels: the families `nest` (sequential 3-deep `while` nests, 11 blocks each, a load, a branch and a store in the innermost body), `deep` (one `while` nest, 3 blocks per level, a load and a store in each latch), `random` (the kernel generator's UB-free kernels at `target_blocks`) and `exit-ladder` (a chain of blocks each loading and leaving for one exit), built as Gyre IR and exported once to LLVM IR: both compilers read the same `.ll` file.\n\n");
    s.push_str("| family | blocks | instructions | .ll size |\n|---|--:|--:|--:|\n");
    for row in &r.speed {
        let _ = writeln!(
            s,
            "| {} | {} | {} | {:.1} MiB |",
            row.family,
            row.blocks,
            row.insts,
            row.ll_bytes as f64 / (1024.0 * 1024.0)
        );
    }
    for n in &r.notes {
        let _ = writeln!(s, "\n{n}");
    }
    s.push_str("\n### Whole compiles (processes)\n\n");
    s.push_str("`gyre compile -O --sm 70 k.ll` against `opt -O2 k.ll -o k.bc` then `llc -O2 -march=nvptx64 -mcpu=sm_70 k.bc`, wall time and peak resident memory from `/usr/bin/time`; the last columns compare LLVM's two processes with Gyre's in-process `-O` pipeline plus PTX emission (no import, no process start).\n\n");
    s.push_str("| family | blocks | gyre compile -O | peak | opt -O2 | peak | llc | peak | LLVM / Gyre (process) | Gyre -O + emit (in-process) | LLVM / Gyre -O + emit |\n|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n");
    for row in &r.speed {
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            row.family,
            row.blocks,
            row.gyre_process.wall_cell(),
            row.gyre_process.mem_cell(),
            row.opt.wall_cell(),
            row.opt.mem_cell(),
            row.llc.wall_cell(),
            row.llc.mem_cell(),
            x_cell(row.llvm_total(), row.gyre_process.wall()),
            row.gyre_o_emit()
                .map_or("-".into(), |g| format!("{:.2} ms", g * 1e3)),
            x_cell(row.llvm_total(), row.gyre_o_emit()),
        );
    }
    s.push_str("\n### Each phase, ns/block\n\n");
    s.push_str("Gyre in-process, the median of several runs after a warm-up (one run at 1M blocks, and for a phase whose warm-up took over 1 s, which is then the figure): `.ll` import, `.gir` parse of the same module, the verifier, each analysis over all functions (one reused object each, warm buffers), each pass of `-O` (loop passes summed over loops, from the pass manager's timers), the whole `-O` run (with its analyses and loop adaptor) and PTX emission. LLVM 14: the wall-time rows of `opt -disable-output -time-passes` (one run, so noisier), `Parse IR` for the import, the analyses from `-passes=require<...>` and the passes from the matching pipeline; `-O total` is LLVM's whole matching pipeline. `x` is LLVM / Gyre.\n\n");
    for fam in families(&r.speed) {
        let rows: Vec<&SpeedRow> = r.speed.iter().filter(|x| x.family == fam).collect();
        let _ = writeln!(s, "**{fam}**\n");
        s.push_str("| phase |");
        for row in &rows {
            let _ = write!(s, " Gyre {} | LLVM | x |", row.blocks);
        }
        s.push_str("\n|---|");
        for _ in &rows {
            s.push_str("--:|--:|--:|");
        }
        s.push('\n');
        let phases: Vec<String> = rows
            .iter()
            .flat_map(|row| row.gyre.iter().map(|(n, _)| n.clone()))
            .fold(Vec::new(), |mut v, n| {
                if !v.contains(&n) {
                    v.push(n);
                }
                v
            });
        for p in &phases {
            let _ = write!(s, "| {p} |");
            for row in &rows {
                let g = row.gyre_s(p).map(|x| ns_per_block(x, row.blocks));
                let l = row.llvm_s(p).map(|x| ns_per_block(x, row.blocks));
                let l_cell = match (&row.llvm_rows, l) {
                    // Below `-time-passes`' 0.1 ms resolution.
                    (_, Some(0.0)) => "< 0.1 ms".into(),
                    (_, Some(_)) => ns_cell(l),
                    (Outcome::Timeout(_), None) if llvm_has_row(p) => "timeout".into(),
                    (Outcome::Crash(_), None) if llvm_has_row(p) => "crash".into(),
                    _ => "-".into(),
                };
                let _ = write!(s, " {} | {l_cell} | {} |", ns_cell(g), x_cell(l, g));
            }
            s.push('\n');
        }
        for row in &rows {
            if let Outcome::Crash(why) = &row.llvm_rows {
                let _ = writeln!(
                    s,
                    "\nLLVM's `-time-passes` runs at {} blocks: crash: {why}",
                    row.blocks
                );
            }
        }
        s.push('\n');
    }
    for (title, path) in r.plots.iter().filter(|p| p.1.contains("speed")) {
        let _ = writeln!(s, "![{title}]({path})\n");
    }
    // ---- Analyses against Cranelift.
    s.push_str("## CFG analyses against Cranelift and LLVM 14\n\n");
    match &r.analyses_md {
        Some(Ok(md)) => {
            s.push_str("From the `analyses` binary (perf/README.md explains the method) on `cfggen`'s families:\n\n");
            s.push_str(md.trim_end());
            s.push_str("\n\n");
        }
        Some(Err(e)) => {
            let _ = writeln!(s, "The `analyses` binary failed: {e}\n");
        }
        None => s.push_str("Not run.\n\n"),
    }
    // ---- Quality.
    s.push_str("## Generated-code quality\n\n");
    s.push_str("### Corpus kernels\n\n");
    match &r.corpus_quality {
        Ok(ks) => {
            s.push_str("From `cargo xtask corpus --quality-json`: static and dynamic (ptx-sim, same launch and inputs) PTX instruction counts, and `ptxas -v` registers and spill bytes, Gyre `-O` against `opt -O2` + `llc -O2 -mcpu=sm_70`.\n\n");
            s.push_str(&quality::render(ks));
            s.push('\n');
        }
        Err(why) => {
            let _ = writeln!(s, "Not in this report: {why}\n");
        }
    }
    s.push_str("### Examples and small generated kernels\n\n");
    s.push_str("PTX instruction counts of examples/ (`.gir` and `.toy`) and of small generated kernels (`gyre_ir::generate`, about 30 blocks, UB-free, reducible), Gyre `-O` at sm_70 against the unoptimized module exported to LLVM IR and put through `opt -O2` + `llc -O2 -mcpu=sm_70`; registers and spills from `ptxas -v` when ptxas is installed (`cargo xtask ptxas`). Dynamic counts are the instructions ptx-sim executes over the whole launch, both PTX texts on the same launch and inputs, counted only when both leave memory as the interpreter does: the examples on their launches of `cargo xtask gpu-table` (one random input, through the corpus harness's stages: `cargo xtask perf` measures them and hands them over with `--examples-json`), the generated kernels on the generator contract's random inputs (seed 0).\n\n");
    if r.local_quality.is_empty() {
        s.push_str("Not measured (no LLVM 14 `opt`/`llc`).\n\n");
    } else {
        s.push_str(&quality::render(&r.local_quality));
        s.push('\n');
    }
    if !r.local_notes.is_empty() {
        s.push_str("Missing figures:\n\n");
        for n in &r.local_notes {
            let _ = writeln!(s, "- {n}");
        }
        s.push('\n');
    }
    for (title, path) in r.plots.iter().filter(|p| p.1.contains("quality")) {
        let _ = writeln!(s, "![{title}]({path})\n");
    }
    // ---- Closing note.
    s.push_str("## Closing note\n\n");
    let missed: Vec<&Target> = ts.iter().filter(|t| t.met == Some(false)).collect();
    let met = ts.iter().filter(|t| t.met == Some(true)).count();
    let unmeasured = ts.iter().filter(|t| t.met.is_none()).count();
    let _ = writeln!(
        s,
        "{met} targets met, {} missed, {unmeasured} not measured in this run.",
        missed.len()
    );
    if !missed.is_empty() {
        s.push_str("\nMissed:\n\n");
        for t in missed {
            let by =
                t.by.as_ref()
                    .map_or(String::new(), |b| format!(" (**{b}**)"));
            let _ = writeln!(s, "- {}: {}{by}", t.what, t.figure);
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(family: &str, n: usize, scale: f64, opt: f64) -> SpeedRow {
        let gyre = vec![
            ("import .ll".to_string(), 200e-9 * n as f64),
            ("loop-rotate".to_string(), 50e-9 * n as f64 * scale),
            (O_TOTAL.to_string(), 300e-9 * n as f64 * scale),
            (EMIT.to_string(), 100e-9 * n as f64),
        ];
        SpeedRow {
            family: family.into(),
            target: n,
            blocks: n,
            insts: 4 * n,
            ll_bytes: 100 * n,
            gyre,
            gyre_process: Outcome::Ok {
                wall: 0.01,
                rss_kib: 10240,
            },
            llvm: vec![("loop-rotate".to_string(), 5e-6 * n as f64)],
            llvm_rows: Outcome::Ok {
                wall: 1.0,
                rss_kib: 1,
            },
            opt: Outcome::Ok {
                wall: opt,
                rss_kib: 102400,
            },
            llc: if n >= 1_000_000 {
                Outcome::Skipped
            } else {
                Outcome::Ok {
                    wall: opt,
                    rss_kib: 102400,
                }
            },
        }
    }

    const ANALYSES_MD: &str = "\
Sums (ns/block) and ratios Cranelift / Gyre (target >= 3x):

| family | blocks | CL dt+loops | Gyre dt+loops | ratio dt+loops | CL cfg+dt+loops | Gyre cfg+dt+loops | ratio all |
|---|--:|--:|--:|--:|--:|--:|--:|
| nest3-seq | 1000 | 90.0 | 20.0 | 4.5x | 120.0 | 30.0 | 4.0x |
| deep-nest | 1000 | 50.0 | 20.0 | 2.5x | 80.0 | 30.0 | 2.7x |
";

    #[test]
    fn reads_the_cranelift_ratios() {
        let r = clif_ratios(ANALYSES_MD);
        assert_eq!(
            r,
            [
                ("nest3-seq".to_string(), "1000".to_string(), 4.5),
                ("deep-nest".to_string(), "1000".to_string(), 2.5)
            ]
        );
        assert!(clif_ratios("no table").is_empty());
    }

    #[test]
    fn renders_tables_and_marks_targets_met_and_missed() {
        // LLVM killed at the 60 s limit: Gyre's 4 ms makes it at least 15000x.
        let mut timed_out = row("random", 10_000, 1.0, 0.0);
        timed_out.opt = Outcome::Timeout(60.0);
        timed_out.llc = Outcome::Skipped;
        let r = Report {
            quick: false,
            date: "today".into(),
            machine: vec![("cores".into(), "2".into())],
            pipeline: "loop(loop-rotate)".into(),
            passes: vec!["loop-rotate".into()],
            llvm_pipeline: ("loop(loop-rotate)".into(), vec![]),
            limit: 60.0,
            mem_gib: 8,
            speed: vec![
                row("nest", 1_000, 1.0, 0.5),
                row("nest", 10_000, 1.2, 5.0),
                row("nest", 1_000_000, 1.3, 100.0),
                // deep: loop-rotate grows 2x: not linear.
                row("deep", 1_000, 1.0, 0.5),
                row("deep", 10_000, 2.0, 0.01),
                timed_out,
            ],
            analyses_md: Some(Ok(ANALYSES_MD.into())),
            local_quality: vec![],
            local_notes: vec![],
            corpus_quality: Err("no JSON".into()),
            plots: vec![("nest".into(), "perf/speed-nest.svg".into())],
            notes: vec!["`random` at 1000000 blocks: left out".into()],
        };
        let md = render(&r);
        assert!(md.contains("| domtree + loops at least 3x faster than Cranelift's | **missed** | lowest ratio 2.5x (deep-nest, 1000 blocks) over 2 rows (**1.2x short of 3x**) |"), "{md}");
        assert!(md.contains("`loop-rotate` linear: ns/block within 1.5x from the smallest to the largest size | **missed** | nest 1.30x (50 → 65 ns/block, 1000 → 1000000 blocks); deep 2.00x"), "{md}");
        assert!(
            md.contains("| `loop-rotate` under 1 µs/block | met | worst 100 ns/block"),
            "{md}"
        );
        // nest 10k: (5 + 5) s / (3.6 ms + 1 ms) = 2174x; deep 10k: 0.02 s / 7 ms = 3x.
        assert!(md.contains("| nest at 10k blocks: Gyre -O + PTX emission at least 100x faster than `opt -O2` + `llc` | met | 2174x"), "{md}");
        assert!(md.contains("| deep at 10k blocks: Gyre -O + PTX emission at least 100x faster than `opt -O2` + `llc` | **missed** | 3x"), "{md}");
        assert!(md.contains("| random at 10k blocks: Gyre -O + PTX emission at least 100x faster than `opt -O2` + `llc` | met | at least 15000x: LLVM did not finish within 60 s"), "{md}");
        assert!(
            md.contains("| random | 10000 | 0.01 s | 10 MiB | timeout (> 60 s) | - | - |"),
            "{md}"
        );
        assert!(
            md.contains("\n`random` at 1000000 blocks: left out\n"),
            "{md}"
        );
        assert!(md.contains("| nest at 1M blocks: whole `gyre compile -O` under 10 s | met | `gyre compile -O` 0.01 s, 10 MiB (1000000 blocks) |"), "{md}");
        assert!(
            md.contains(
                "| deep at 1M blocks: whole `gyre compile -O` under 10 s | - | not measured"
            ),
            "{md}"
        );
        // Phase table: Gyre 50 ns/block, LLVM 5000, ratio 100x.
        assert!(
            md.contains("| loop-rotate | 50.0 | 5000 | 100.0x |"),
            "{md}"
        );
        assert!(
            md.contains("| nest | 1000000 | 0.01 s | 10 MiB | 100.00 s | 100 MiB | - | - | - |"),
            "{md}"
        );
        assert!(md.contains("![nest](perf/speed-nest.svg)"), "{md}");
        assert!(md.contains("Not in this report: no JSON"), "{md}");
        assert!(
            md.contains("missed, 0 not measured") || md.contains("not measured in this run"),
            "{md}"
        );
        assert!(md.contains("Missed:\n\n- domtree + loops"), "{md}");
        // Each miss says by how much.
        assert!(md.contains("deep 2.00x (50 → 100 ns/block, 1000 → 10000 blocks) (**1.3x over the 1.5x bound**)"), "{md}");
        assert!(md.contains("| **missed** | 3x (Gyre -O + emission"), "{md}");
        assert!(md.contains("(**35.0x short of 100x**)"), "{md}");
    }
}
