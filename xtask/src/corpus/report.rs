//! Totals, target checks and docs/corpus.md for `cargo xtask corpus`.
//!
//! Targets (a miss makes the command fail): every kernel that imports must verify,
//! survive `-O` with verify-each, give PTX that ptxas accepts for every target, and
//! behave the same before and after `-O` in the interpreter (a run where the input
//! itself faults is not comparable, not a miss). A ptx-sim difference is a miss too
//! unless [`KNOWN`] explains it.

use super::{launches, Closeness, OpCounts, Outcome, Quality, Report, Setup, TOLERANCE};
use std::fmt::Write as _;

/// Behaviour-comparison failures (the interp stage: the input against `-O`; the sim stage:
/// Gyre's PTX against llc's) with a known cause (file, reason): reported, not missed
/// targets.
pub const KNOWN: &[(&str, &str)] = &[(
    "cudasamples__clock_timedReduction.ll",
    "the kernel writes `clock()` readings, which differ between any two executions: the \
     interpreter counts the thread's IR instructions (so `-O`, which changes them, changes \
     the readings), ptx-sim its PTX instructions, a GPU its cycles",
)];

/// Why a kernel's runs are not comparable whatever the launch (file, reason).
pub const NOT_COMPARABLE: &[(&str, &str)] = &[(
    "cudasamples__eigenvalues_bisectKernel.ll",
    "the sample's shared flag `all_threads_converged` is written by several threads \
     between two barriers (a benign race in CUDA practice, a data race in Gyre's \
     semantics and the PTX memory model), so the interpreter rejects the input under any \
     launch",
)];

/// Totals over the reports.
#[derive(Clone, Debug, Default)]
pub struct Summary {
    /// Kernels.
    pub kernels: usize,
    /// Per stage: (name, passed, failed, not comparable, skipped).
    pub stages: Vec<(&'static str, usize, usize, usize, usize)>,
    /// Kernels that pass every stage.
    pub all_pass: usize,
    /// Missed targets, one line each.
    pub unmet: Vec<String>,
    /// Float differences accepted between Gyre's PTX and llc's PTX over all kernels.
    pub closeness: Closeness,
    /// Kernels with hardware-approximate opcodes.
    pub approx_kernels: usize,
    /// Float differences accepted between the interpreter and Gyre's PTX in those.
    pub interp_closeness: Closeness,
    /// Seconds over all kernels.
    pub seconds: f64,
    /// Kernels with PTX for every target: those whose texts differ only in
    /// `.version`/`.target`, and those with more than one distinct body.
    pub ptx_one_body: usize,
    /// See [`Summary::ptx_one_body`].
    pub ptx_many_bodies: usize,
}

/// Count and check the targets.
pub fn summarize(reports: &[Report]) -> Summary {
    let mut s = Summary {
        kernels: reports.len(),
        ..Summary::default()
    };
    let names = reports.first().map(|r| r.stages().map(|(n, _)| n));
    for (i, name) in names.into_iter().flatten().enumerate() {
        let mut t = (name, 0, 0, 0, 0);
        for r in reports {
            match r.stages()[i].1 {
                Outcome::Pass(_) => t.1 += 1,
                Outcome::Fail(_) => t.2 += 1,
                Outcome::NotComparable(_) => t.3 += 1,
                Outcome::Skipped(_) => t.4 += 1,
            }
        }
        s.stages.push(t);
    }
    for r in reports {
        s.closeness.merge(r.closeness);
        s.interp_closeness.merge(r.interp_closeness);
        if !r.approx.is_empty() {
            s.approx_kernels += 1;
        }
        s.seconds += r.seconds;
        match r.ptx_bodies {
            0 => {}
            1 => s.ptx_one_body += 1,
            _ => s.ptx_many_bodies += 1,
        }
        if r.stages().iter().all(|(_, o)| o.passed()) {
            s.all_pass += 1;
        }
        if !r.import.passed() {
            continue;
        }
        let known = KNOWN.iter().any(|(f, _)| *f == r.entry.file);
        for (name, o) in &r.stages()[1..5] {
            if let Outcome::Fail(why) = o {
                if !(known && *name == "interp") {
                    s.unmet.push(format!("{}: {name}: {why}", r.entry.file));
                }
            }
        }
        if let Outcome::Fail(why) = &r.sim {
            if !known {
                s.unmet.push(format!("{}: sim: {why}", r.entry.file));
            }
        }
    }
    s
}

fn cell(o: &Outcome) -> &'static str {
    match o {
        Outcome::Pass(_) => "pass",
        Outcome::Fail(_) => "**fail**",
        Outcome::NotComparable(_) => "n/c",
        Outcome::Skipped(_) => "-",
    }
}

/// The reason shown for a kernel: the first failure, else the first "not comparable"
/// or skip reason, else the notes of the passing stages.
fn reason(r: &Report) -> String {
    if let Some((stage, why)) = r.first_failure() {
        return format!("{stage}: {why}");
    }
    for (stage, o) in r.stages() {
        match o {
            Outcome::NotComparable(why) => return format!("{stage} not comparable: {why}"),
            Outcome::Skipped(why) if !why.is_empty() && !why.starts_with("not ") => {
                return format!("{stage} skipped: {why}")
            }
            _ => {}
        }
    }
    let mut notes = Vec::new();
    if let Outcome::Pass(n) = &r.llc {
        if !n.is_empty() {
            notes.push(n.clone());
        }
    }
    if let Outcome::Pass(n) = &r.interp {
        notes.push(format!("interp {n}"));
    }
    if let Outcome::Pass(n) = &r.sim {
        notes.push(format!("sim {n}"));
    }
    let c = &r.interp_closeness;
    if !r.approx.is_empty() {
        notes.push(format!(
            "uses {}: vs interp {} words differ, scaled error at most {:.1e}",
            r.approx.join(" "),
            c.words,
            c.max_err
        ));
    }
    let c = &r.closeness;
    if *c != Closeness::default() {
        notes.push(format!(
            "vs llc: {} words differ, scaled error at most {:.1e} ({} ulp)",
            c.words, c.max_err, c.max_ulp
        ));
    }
    notes.join("; ")
}

/// Shorten and make a reason safe for a Markdown table cell.
fn md(s: &str) -> String {
    let mut t: String = s.chars().take(300).collect();
    if t.len() < s.len() {
        t.push('…');
    }
    t.replace('|', "\\|").replace('\n', " ")
}

fn totals(s: &Summary, out: &mut String) {
    let pct = |n: usize| (100 * n).checked_div(s.kernels).unwrap_or(0);
    let _ = writeln!(
        out,
        "- Kernels: {}; every stage passes: {} ({}%).",
        s.kernels,
        s.all_pass,
        pct(s.all_pass)
    );
    for (name, pass, fail, nc, skip) in &s.stages {
        let _ = writeln!(
            out,
            "- {name}: {pass} pass ({}%), {fail} fail, {nc} not comparable, {skip} skipped.",
            pct(*pass)
        );
    }
    let _ = writeln!(
        out,
        "- Gyre's PTX vs the interpreter: bit for bit, except in the {} kernels with \
         hardware-approximate opcodes (`ex2_approx`, ...: the IR means the exact value \
         rounded, PTX approximates it) or `contract` multiply-adds (fused into `fma` \
         under `fp-contract=on`, rounded once), where {} float words differ, scaled error at most \
         {:.1e}. Gyre's PTX vs llc's PTX: {} float words differ, scaled error at most \
         {:.1e} (tolerance {TOLERANCE:e}), at most {} ulp.",
        s.approx_kernels,
        s.interp_closeness.words,
        s.interp_closeness.max_err,
        s.closeness.words,
        s.closeness.max_err,
        s.closeness.max_ulp
    );
    let _ = writeln!(
        out,
        "- PTX for all {} targets: {} kernels, of which {} have one body (the texts differ \
         only in `.version`/`.target`: ptx-sim runs the sm_70 text) and {} several (each \
         distinct body runs in ptx-sim).",
        gyre_codegen_lite::Sm::ALL.len(),
        s.ptx_one_body + s.ptx_many_bodies,
        s.ptx_one_body,
        s.ptx_many_bodies
    );
    if s.unmet.is_empty() {
        let _ = writeln!(out, "- Targets: all met.");
    } else {
        let _ = writeln!(out, "- Targets missed: {}.", s.unmet.len());
    }
}

/// The console summary.
pub fn console(setup: &Setup, reports: &[Report], s: &Summary) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "corpus: {}", setup.corpus.display());
    let _ = writeln!(
        out,
        "host-filled __constant__ globals: {}",
        if super::interp_reads_host_constants() {
            "random contents (the interpreter reads the caller's buffer)"
        } else {
            "initializer (the interpreter does not read the caller's buffer yet)"
        }
    );
    for r in reports {
        let stages: Vec<String> = r
            .stages()
            .iter()
            .map(|(n, o)| format!("{n}={}", cell(o).trim_matches('*')))
            .collect();
        let _ = writeln!(
            out,
            "{:<60} {} ({:.1}s) {}",
            r.entry.file,
            stages.join(" "),
            r.seconds,
            reason(r)
        );
    }
    totals(s, &mut out);
    let _ = writeln!(out, "{}", quality_line(&quality_means(reports)));
    for u in &s.unmet {
        let _ = writeln!(out, "missed: {u}");
    }
    let _ = writeln!(out, "time: {:.1}s", s.seconds);
    out
}

/// A ratio above this (static or dynamic instructions, Gyre/LLVM) needs a reason in
/// docs/quality-reasons.tsv (issue 23: "every kernel above 1.25 listed with its reason").
pub const REASON_THRESHOLD: f64 = 1.25;

/// One line of docs/quality-reasons.tsv: why Gyre's PTX of a kernel is behind llc's.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reason {
    /// The kernel, as the quality table names it (the file name without `.ll`).
    pub kernel: String,
    /// The category: `unrolling`, `LICM`, `inlining`, `instcombine`, `codegen: ...`.
    pub category: String,
    /// What the two PTX texts show, in one line.
    pub why: String,
}

/// Parse docs/quality-reasons.tsv: a header line, then `kernel<TAB>category<TAB>why`
/// lines; `#` lines and blank lines are comments. A malformed or repeated line is an
/// error naming it.
pub fn parse_reasons(text: &str) -> Result<Vec<Reason>, String> {
    let mut out: Vec<Reason> = Vec::new();
    let mut lines = text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty() && !l.starts_with('#'));
    match lines.next() {
        Some((_, h)) if h.split('\t').collect::<Vec<_>>() == ["kernel", "category", "reason"] => {}
        _ => {
            return Err(
                "quality reasons: the first line must be kernel<TAB>category<TAB>reason".into(),
            )
        }
    }
    for (i, l) in lines {
        let f: Vec<&str> = l.split('\t').collect();
        let [kernel, category, why] = f[..] else {
            return Err(format!(
                "quality reasons, line {}: expected 3 tab-separated fields",
                i + 1
            ));
        };
        if kernel.is_empty() || category.is_empty() || why.is_empty() {
            return Err(format!("quality reasons, line {}: an empty field", i + 1));
        }
        if out.iter().any(|r| r.kernel == kernel) {
            return Err(format!(
                "quality reasons, line {}: {kernel} listed twice",
                i + 1
            ));
        }
        out.push(Reason {
            kernel: kernel.to_string(),
            category: category.to_string(),
            why: why.to_string(),
        });
    }
    Ok(out)
}

/// Warnings about the reasons: every measured kernel above [`REASON_THRESHOLD`] (static
/// or dynamic) without one, and on a `full` run (the whole corpus) every reason for a
/// kernel that has no quality row (a misspelt or stale name).
pub fn reason_warnings(reports: &[Report], reasons: &[Reason], full: bool) -> Vec<String> {
    let mut out = Vec::new();
    let mut rows = Vec::new();
    for (r, _, _, ratios) in quality_rows(reports) {
        let name = r.entry.file.trim_end_matches(".ll");
        rows.push(name);
        let above: Vec<String> = [("static", ratios[0]), ("dynamic", ratios[1])]
            .iter()
            .filter_map(|&(what, x)| {
                x.filter(|&x| x > REASON_THRESHOLD)
                    .map(|x| format!("{what} {x:.2}"))
            })
            .collect();
        if !above.is_empty() && !reasons.iter().any(|x| x.kernel == name) {
            out.push(format!(
                "{name}: {} above {REASON_THRESHOLD} without a reason in docs/quality-reasons.tsv",
                above.join(", ")
            ));
        }
    }
    if full {
        for x in reasons {
            if !rows.contains(&x.kernel.as_str()) {
                out.push(format!(
                    "{}: a reason in docs/quality-reasons.tsv, but no quality row",
                    x.kernel
                ));
            }
        }
    }
    out
}

/// docs/corpus.md.
pub fn document(setup: &Setup, reports: &[Report], s: &Summary, reasons: &[Reason]) -> String {
    let mut out = String::new();
    out.push_str("# Corpus: real CUDA kernels end to end\n\n");
    out.push_str(
        "Generated by `cargo xtask corpus --write-doc` from the kernels in \
         `../shared/corpus/cuda/` (clang 14's device IR of PolyBench-ACC, Rodinia and \
         NVIDIA cuda-samples kernels, see its README). Do not edit by hand. \
         `cargo test -p xtask` runs the same harness on a fixed slice of fast kernels.\n\n",
    );
    let _ = writeln!(
        out,
        "Stages, for every kernel (xtask/src/corpus/mod.rs):\n\n\
         - **import**: gyre-llvm reads the `.ll` (every import error is listed);\n\
         - **verify**: the imported module verifies;\n\
         - **opt**: Gyre's `-O` pipeline (`{}`) with `--verify-each` checks;\n\
         - **ptx**: PTX for every supported target ({}), each accepted by ptxas; \
         a target's text that differs from sm_70's in more than its `.version` and \
         `.target` lines is run in ptx-sim against the interpreter too (sim stage; the \
         ptx stage's note says how many distinct bodies a kernel has);\n\
         - **interp**: the input and the `-O` output run in the interpreter on {} random \
         inputs and leave the same bytes in every buffer (bit for bit), print the same \
         device `printf` output and fail the same device `assert` (same message, thread \
         and line) if the input fails one (a run where the input itself faults otherwise \
         is *not comparable*, n/c);\n\
         - **llc**: LLVM 14 `opt -O2 | llc -O2 -march=nvptx64 -mcpu=sm_70` compiles the \
         input (libdevice linked first with `llvm-link --only-needed` when the kernel \
         calls `__nv_*`), and ptxas accepts llc's PTX;\n\
         - **sim**: Gyre's sm_70 PTX and llc's PTX run in ptx-sim on the same inputs; \
         Gyre's buffers must match the interpreter's bit for bit (NaN payloads aside; \
         float buffers within the tolerance below when the kernel uses a \
         hardware-approximate opcode or has `contract` flags, which Gyre's PTX fuses \
         into `fma` as `gyre compile` does) \
         and llc's exactly on integer buffers and, on buffers filled with floats, within \
         `|a - b| <= {:e} * max(1, |a|, |b|)` (both contract `contract` multiply-adds \
         into `fma`, not always the same pairs; a fused result that cancels to near zero \
         is many ulps off but close in absolute terms); a buffer's type is not known, so an integer \
         result in a float-filled buffer gets the tolerance too. The `printf` output and \
         a failed `assert` of both PTX texts must be exactly the interpreter's. A run the \
         interpreter rejects is not compared.\n\n\
         Launches: the block shape from the manifest (else 16x8 for 2-D indexing, 64 \
         threads otherwise), a grid of 2x2 or 2 CTAs, integer scalars 32, float scalars \
         random in [0.5, 2.5), every pointer a 128 KiB buffer of random floats in [-2, 2); \
         globals marked `externally_initialized` (host-filled `__constant__`/`__device__` \
         data) get random contents, the same in the interpreter and in ptx-sim (but see \
         below for `__constant__`); 16 KiB of dynamic shared memory back the \
         `extern __shared__` arrays in both. Kernels whose \
         launch must differ are listed in xtask/src/corpus/launches.rs, each with its \
         reason. Targets: every kernel that imports must pass verify, opt, ptx and interp; \
         a sim failure must be explained in `report::KNOWN`.\n",
        super::compile_pipeline(),
        gyre_codegen_lite::Sm::ALL.map(|s| s.target()).join(", "),
        setup.runs,
        TOLERANCE
    );
    let _ = writeln!(
        out,
        "Host-filled `__constant__` data: {}\n",
        if super::interp_reads_host_constants() {
            "the interpreter takes it from the caller's buffer of the global's name, so \
             the harness gives it random contents there and the same bytes to both PTX \
             texts."
        } else {
            "the interpreter of this build keeps the initializer of an \
             `externally_initialized` `__constant__` global, so the harness leaves those \
             globals at their initializers everywhere (host-filled `__device__` globals \
             still get random contents)."
        }
    );
    out.push_str("## Totals\n\n");
    totals(s, &mut out);
    let _ = writeln!(out, "- Full run time: {:.0} s.\n", s.seconds);
    if !s.unmet.is_empty() {
        out.push_str("### Missed targets\n\n");
        for u in &s.unmet {
            let _ = writeln!(out, "- {}", md(u));
        }
        out.push('\n');
    }
    let nc: Vec<&Report> = reports
        .iter()
        .filter(|r| matches!(r.interp, Outcome::NotComparable(_)))
        .collect();
    if !nc.is_empty() {
        out.push_str("### Not comparable\n\n");
        for r in nc {
            let why = NOT_COMPARABLE
                .iter()
                .find(|(f, _)| *f == r.entry.file)
                .map(|(_, w)| *w)
                .unwrap_or("no explanation yet: see the kernel's row");
            let _ = writeln!(out, "- `{}`: {why}", r.entry.file.trim_end_matches(".ll"));
        }
        out.push('\n');
    }
    if !KNOWN.is_empty() {
        out.push_str("### Known ptx-sim differences\n\n");
        for (f, why) in KNOWN {
            let _ = writeln!(out, "- `{f}`: {why}");
        }
        out.push('\n');
    }
    import_failures(reports, &mut out);
    let unread: Vec<(&str, &str)> = reports
        .iter()
        .filter_map(|r| match &r.llc {
            Outcome::Pass(n) if !n.is_empty() => Some((r.entry.file.as_str(), n.as_str())),
            _ => None,
        })
        .collect();
    if !unread.is_empty() {
        out.push_str("## llc's PTX that ptx-sim cannot read\n\n");
        out.push_str(
            "Checked for every kernel, imported or not: what the simulator still lacks \
             for the sim stage of kernels Gyre cannot import yet.\n\n",
        );
        for (f, n) in unread {
            let _ = writeln!(out, "- `{}`: {}", f.trim_end_matches(".ll"), md(n));
        }
        out.push('\n');
    }
    quality_section(reports, reasons, &mut out);
    out.push_str("## Kernels\n\n");
    out.push_str(
        "Launch is grid x block; `*` marks a launch from the table in \
         xtask/src/corpus/launches.rs (reasons below).\n\n",
    );
    out.push_str("| kernel | launch | import | verify | opt | ptx | interp | llc | sim | first failure, or notes |\n");
    out.push_str("|---|---|---|---|---|---|---|---|---|---|\n");
    for r in reports {
        let cells: Vec<&str> = r.stages().iter().map(|(_, o)| cell(o)).collect();
        let _ = writeln!(
            out,
            "| `{}` | {} | {} | {} |",
            r.entry.file.trim_end_matches(".ll"),
            if launches::special(&r.entry.file).is_some() {
                format!("{}*", r.launch)
            } else {
                r.launch.clone()
            },
            cells.join(" | "),
            md(&reason(r))
        );
    }
    out.push_str("\n## Launches that are not the default\n\n");
    for sp in launches::LAUNCHES {
        let _ = writeln!(
            out,
            "- `{}`: {}",
            sp.file.trim_end_matches(".ll"),
            sp.reason
        );
    }
    out
}

/// What the importer rejects, by construct: the message of every import error without
/// its position (and without the function or type it names, after `@`/`%`/`of type`),
/// with the kernels it stops.
fn import_failures(reports: &[Report], out: &mut String) {
    let mut by: Vec<(String, Vec<&str>)> = Vec::new();
    for r in reports {
        let Outcome::Fail(all) = &r.import else {
            continue;
        };
        for e in all.split("; ") {
            // `line:col: message`.
            let msg = e.splitn(3, ':').nth(2).unwrap_or(e).trim();
            let name = r.entry.file.trim_end_matches(".ll");
            match by.iter_mut().find(|(m, _)| m == msg) {
                Some((_, files)) => {
                    if !files.contains(&name) {
                        files.push(name)
                    }
                }
                None => by.push((msg.to_string(), vec![name])),
            }
        }
    }
    if by.is_empty() {
        return;
    }
    by.sort_by(|a, b| b.1.len().cmp(&a.1.len()).then(a.0.cmp(&b.0)));
    out.push_str("## Import errors by message\n\n");
    out.push_str("| error | kernels | which |\n|---|---|---|\n");
    for (msg, files) in by {
        let _ = writeln!(
            out,
            "| {} | {} | {} |",
            md(&msg),
            files.len(),
            files.join(", ")
        );
    }
    out.push('\n');
}

/// Geometric means of Gyre/LLVM over the kernels where both PTX texts have the figure.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct QualityMeans {
    /// Static instructions: (geomean of Gyre/LLVM, kernels).
    pub static_insts: (f64, usize),
    /// Dynamic instructions under ptx-sim: (geomean, kernels).
    pub dynamic: (f64, usize),
    /// ptxas registers: (geomean, kernels).
    pub regs: (f64, usize),
    /// Spill bytes over all measured kernels: (Gyre, LLVM).
    pub spill_bytes: (u64, u64),
}

/// Kernels with both qualities measured, with their ratios Gyre/LLVM (static, dynamic,
/// registers; `None` where a figure is missing or 0).
fn quality_rows(
    reports: &[Report],
) -> impl Iterator<Item = (&Report, Quality, Quality, [Option<f64>; 3])> {
    reports.iter().filter_map(|r| {
        let (g, l) = (r.gyre_quality?, r.llvm_quality?);
        let ratio = |a: Option<u64>, b: Option<u64>| match (a, b) {
            (Some(a), Some(b)) if a > 0 && b > 0 => Some(a as f64 / b as f64),
            _ => None,
        };
        let ratios = [
            ratio(Some(g.static_insts), Some(l.static_insts)),
            ratio(g.dynamic, l.dynamic),
            ratio(Some(u64::from(g.regs)), Some(u64::from(l.regs))),
        ];
        Some((r, g, l, ratios))
    })
}

/// The geometric means of [`quality_rows`].
pub fn quality_means(reports: &[Report]) -> QualityMeans {
    let mut logs = [(0.0f64, 0usize); 3];
    let mut spills = (0, 0);
    for (_, g, l, ratios) in quality_rows(reports) {
        for (acc, r) in logs.iter_mut().zip(ratios) {
            if let Some(r) = r {
                acc.0 += r.ln();
                acc.1 += 1;
            }
        }
        spills.0 += g.spill_bytes;
        spills.1 += l.spill_bytes;
    }
    let mean = |(sum, n): (f64, usize)| (if n == 0 { 1.0 } else { (sum / n as f64).exp() }, n);
    QualityMeans {
        static_insts: mean(logs[0]),
        dynamic: mean(logs[1]),
        regs: mean(logs[2]),
        spill_bytes: spills,
    }
}

/// One line with the geometric means.
pub fn quality_line(m: &QualityMeans) -> String {
    format!(
        "Gyre/LLVM geometric means: static instructions {:.3} ({} kernels), dynamic \
         instructions {:.3} ({}), registers {:.3} ({}); spill bytes {} (Gyre) vs {} (LLVM)",
        m.static_insts.0,
        m.static_insts.1,
        m.dynamic.0,
        m.dynamic.1,
        m.regs.0,
        m.regs.1,
        m.spill_bytes.0,
        m.spill_bytes.1
    )
}

/// Where Gyre's PTX executes more instructions than LLVM's: the (at most) `n` opcode
/// classes with the largest excess, `+4096 setp, +4096 selp, +2048 bra`, from the two
/// sides' [`OpCounts`]; empty when no class is above LLVM's.
pub fn excess_ops(gyre: &OpCounts, llvm: &OpCounts, n: usize) -> String {
    let mut d: Vec<(&str, i128)> = gyre
        .iter()
        .map(|(op, g)| {
            let l = llvm.iter().find(|(o, _)| o == op).map_or(0, |&(_, l)| l);
            (op.as_str(), *g as i128 - l as i128)
        })
        .filter(|&(_, x)| x > 0)
        .collect();
    d.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(b.0)));
    d.iter()
        .take(n)
        .map(|(op, x)| format!("+{x} {op}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// [`excess_ops`] of a kernel whose Gyre PTX executes more instructions than LLVM's
/// (the three largest classes), else `None`.
fn kernel_excess(r: &Report, g: &Quality, l: &Quality) -> Option<String> {
    let (gd, ld) = (g.dynamic?, l.dynamic?);
    (gd > ld && !r.dynamic_ops.0.is_empty())
        .then(|| excess_ops(&r.dynamic_ops.0, &r.dynamic_ops.1, 3))
}

/// The quality rows as JSON for `cargo xtask corpus --quality-json FILE` (read by the
/// perf report): an array of `{"kernel", "gyre": {"static", "dynamic", "regs",
/// "spill_bytes"}, "llvm": {...}}`, `dynamic` `null` when not measured; a kernel with
/// only one side measured has `null` for the other. A kernel whose Gyre PTX executes
/// more instructions also has `"excess"` ([`excess_ops`]), and one with a row in
/// docs/quality-reasons.tsv its `"reason"` (`category: why`).
pub fn quality_json(reports: &[Report], reasons: &[Reason]) -> String {
    let side = |q: Option<Quality>| match q {
        None => "null".to_string(),
        Some(q) => format!(
            "{{\"static\": {}, \"dynamic\": {}, \"regs\": {}, \"spill_bytes\": {}}}",
            q.static_insts,
            q.dynamic.map_or("null".to_string(), |d| d.to_string()),
            q.regs,
            q.spill_bytes
        ),
    };
    let rows: Vec<String> = reports
        .iter()
        .filter(|r| r.gyre_quality.is_some() || r.llvm_quality.is_some())
        .map(|r| {
            let name = r.entry.file.trim_end_matches(".ll");
            let mut extra = String::new();
            if let Some(x) = r
                .gyre_quality
                .zip(r.llvm_quality)
                .and_then(|(g, l)| kernel_excess(r, &g, &l))
            {
                let _ = write!(extra, ", \"excess\": \"{}\"", json_str(&x));
            }
            if let Some(x) = reasons.iter().find(|x| x.kernel == name) {
                let _ = write!(
                    extra,
                    ", \"reason\": \"{}\"",
                    json_str(&format!("{}: {}", x.category, x.why))
                );
            }
            format!(
                "  {{\"kernel\": \"{}\", \"gyre\": {}, \"llvm\": {}{extra}}}",
                name.replace(['"', '\\'], "_"),
                side(r.gyre_quality),
                side(r.llvm_quality)
            )
        })
        .collect();
    format!("[\n{}\n]\n", rows.join(",\n"))
}

/// `s` escaped for a JSON string literal.
fn json_str(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out
}

/// The docs/corpus.md section with the quality table.
fn quality_section(reports: &[Report], reasons: &[Reason], out: &mut String) {
    let m = quality_means(reports);
    out.push_str("## PTX quality: Gyre vs LLVM\n\n");
    let _ = write!(
        out,
        "Gyre's sm_70 PTX (`-O`) against LLVM's (`opt -O2 | llc -O2 -mcpu=sm_70`) on every \
         kernel both compile. *static*: instructions in the kernel's body and the \
         `.func` bodies of the text (no directives or labels); *dynamic*: instructions \
         ptx-sim executes over the whole launch of the first compared run (guarded-off \
         ones too); *regs*/*spill*: `ptxas -v -arch=sm_70` registers and spill bytes \
         (stores plus loads). Ratios are Gyre/LLVM; `cargo xtask corpus --quality-json \
         FILE` writes the same rows as JSON. *reason*: why Gyre is behind, from \
         docs/quality-reasons.tsv (checked in, each verified by reading both PTX texts; \
         the run warns about every kernel above {REASON_THRESHOLD} on static or dynamic \
         instructions that has none). *extra executed*: for every kernel whose PTX \
         executes more instructions than LLVM's, the three opcode classes with the \
         largest excess on that run (ptx-sim's count per instruction, grouped by \
         opcode, memory operations by state space): what the extra instructions are, \
         measured, where *reason* says why.\n\n"
    );
    let _ = writeln!(out, "- {}.\n", quality_line(&m));
    let warnings = reason_warnings(reports, reasons, true);
    if !warnings.is_empty() {
        let _ = writeln!(
            out,
            "Kernels above {REASON_THRESHOLD} without a reason yet:\n"
        );
        for w in &warnings {
            let _ = writeln!(out, "- {}", md(w));
        }
        out.push('\n');
    }
    out.push_str("| kernel | static Gyre | static LLVM | ratio | dynamic Gyre | dynamic LLVM | ratio | regs Gyre | regs LLVM | spill Gyre | spill LLVM | extra executed | reason |\n");
    out.push_str("|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    let r2 = |r: Option<f64>| r.map_or("-".to_string(), |r| format!("{r:.2}"));
    let d = |d: Option<u64>| d.map_or("-".to_string(), |d| d.to_string());
    for (r, g, l, ratios) in quality_rows(reports) {
        let _ = writeln!(
            out,
            "| `{}` | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            r.entry.file.trim_end_matches(".ll"),
            g.static_insts,
            l.static_insts,
            r2(ratios[0]),
            d(g.dynamic),
            d(l.dynamic),
            r2(ratios[1]),
            g.regs,
            l.regs,
            g.spill_bytes,
            l.spill_bytes,
            kernel_excess(r, &g, &l).unwrap_or_default(),
            reasons
                .iter()
                .find(|x| x.kernel == r.entry.file.trim_end_matches(".ll"))
                // Whole (a reason is one line; `md` would cut it at 300 characters).
                .map_or(String::new(), |x| format!("{}: {}", x.category, x.why)
                    .replace('|', "\\|"))
        );
    }
    out.push('\n');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn excess_ops_lists_the_largest_extra_classes() {
        let ops = |v: &[(&str, u64)]| -> OpCounts {
            v.iter().map(|&(o, n)| (o.to_string(), n)).collect()
        };
        let g = ops(&[
            ("add", 100),
            ("setp", 60),
            ("selp", 40),
            ("bra", 30),
            ("mov", 5),
        ]);
        let l = ops(&[
            ("add", 100),
            ("setp", 20),
            ("bra", 10),
            ("mov", 9),
            ("fma", 50),
        ]);
        // add is equal, mov below LLVM's, fma only LLVM's: none of them is listed.
        assert_eq!(excess_ops(&g, &l, 3), "+40 selp, +40 setp, +20 bra");
        assert_eq!(excess_ops(&g, &l, 1), "+40 selp");
        assert_eq!(excess_ops(&l, &l, 3), "");
        assert_eq!(json_str("a \"b\" \\ c\n"), "a \\\"b\\\" \\\\ c\\u000a");
    }

    #[test]
    fn reasons_are_parsed_and_bad_lines_rejected() {
        let text = "# why Gyre is behind\nkernel\tcategory\treason\n\nk1\tunrolling\tllc unrolls the loop 4x\n";
        let r = parse_reasons(text).unwrap();
        assert_eq!(
            r,
            vec![Reason {
                kernel: "k1".into(),
                category: "unrolling".into(),
                why: "llc unrolls the loop 4x".into(),
            }]
        );
        assert!(parse_reasons("k1\tx\ty\n")
            .unwrap_err()
            .contains("first line"));
        let head = "kernel\tcategory\treason\n";
        assert!(parse_reasons(&format!("{head}k1\tx\n"))
            .unwrap_err()
            .contains("line 2"));
        assert!(parse_reasons(&format!("{head}k1\t\ty\n"))
            .unwrap_err()
            .contains("empty"));
        assert!(parse_reasons(&format!("{head}k1\tx\ty\nk1\tx\tz\n"))
            .unwrap_err()
            .contains("twice"));
    }
}
