//! Compile speed of one kernel: Gyre in-process (each phase, analysis and `-O` pass) and
//! as a process (`gyre compile -O`), LLVM 14 per pass (`opt -time-passes` on the matching
//! pipeline) and as processes (`opt -O2`, then `llc -march=nvptx64 -mcpu=sm_70`).

use crate::process::{measure, Outcome};
use gyre_analysis::{Cfg, DomTree, LoopInfo, PostDomTree, ScalarEvolution, Uniformity};
use gyre_codegen_lite::{compile_module, CodegenOptions, Sm};
use gyre_ir::Module;
use gyre_transforms::pipeline::{parse_pipeline, PipelineElement};
use gyre_transforms::{Knobs, Options, PassManager, DEFAULT_PIPELINE};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Gyre's analysis rows and the LLVM 14 `-time-passes` row of each (none for `cfg`: LLVM's
/// predecessors are use lists; none for `scev`: LLVM's `ScalarEvolutionAnalysis` is lazy,
/// its row is only the set-up, while Gyre's computes every value and loop count).
pub const ANALYSES: &[(&str, &str)] = &[
    ("cfg", ""),
    ("domtree", "DominatorTreeAnalysis"),
    ("postdom", "PostDominatorTreeAnalysis"),
    ("loops", "LoopAnalysis"),
    ("uniformity", "DivergenceAnalysis"),
    ("scev", ""),
];

/// The `opt -passes=` pipeline computing LLVM's counterparts of [`ANALYSES`].
pub const LLVM_ANALYSES: &str =
    "require<domtree>,require<postdomtree>,require<loops>,require<divergence>";

/// Gyre pass name -> (LLVM 14 pass name, its `-time-passes` row), each checked under
/// `opt-14 -passes=`. Gyre's `simplify` (the e-graph simplifier) has no exact
/// counterpart; `instcombine` is LLVM's nearest. Gyre's `loop-unroll` unrolls fully only,
/// as LLVM's `loop-unroll-full`. A module-level inliner is LLVM's CGSCC `inline` (see
/// [`llvm_pipeline`] for the `function(...)` wrapping that needs). A pass not listed
/// gets a row without an LLVM column.
pub const PASS_MAP: &[(&str, &str, &str)] = &[
    ("inline", "cgscc(inline)", "InlinerPass"),
    ("loop-simplify", "loop-simplify", "LoopSimplifyPass"),
    ("lcssa", "lcssa", "LCSSAPass"),
    ("loop-rotate", "loop-rotate", "LoopRotatePass"),
    ("indvars", "indvars", "IndVarSimplifyPass"),
    (
        "simple-loop-unswitch",
        "simple-loop-unswitch",
        "SimpleLoopUnswitchPass",
    ),
    ("loop-deletion", "loop-deletion", "LoopDeletionPass"),
    (
        "loop-simplifycfg",
        "loop-simplifycfg",
        "LoopSimplifyCFGPass",
    ),
    ("licm", "licm", "LICMPass"),
    ("simplify", "instcombine", "InstCombinePass"),
    ("loop-unroll", "loop-unroll-full", "LoopFullUnrollPass"),
    ("sroa", "sroa", "SROAPass"),
    ("early-cse", "early-cse", "EarlyCSEPass"),
    // Select formation is one of SimplifyCFG's folds (FoldTwoEntryPHINode).
    ("select-formation", "simplifycfg", "SimplifyCFGPass"),
];

/// The passes of Gyre's `-O` pipeline ([`DEFAULT_PIPELINE`], read at run time since it
/// grows), adaptors flattened, in order, each once.
pub fn pipeline_passes(pipeline: &str) -> Result<Vec<String>, String> {
    let elems = parse_pipeline(pipeline).map_err(|e| e.message)?;
    let mut out: Vec<String> = Vec::new();
    // Explicit stack of the elements still to visit, in reverse order.
    let mut stack: Vec<&PipelineElement> = elems.iter().rev().collect();
    while let Some(e) = stack.pop() {
        if e.nested.is_empty() {
            if !out.contains(&e.name) {
                out.push(e.name.clone());
            }
        } else {
            stack.extend(e.nested.iter().rev());
        }
    }
    Ok(out)
}

/// Is this LLVM pipeline text (a top-level element) a module-level one? opt 14 parses a
/// pipeline at the level of its first element, so function passes after a CGSCC or
/// module pass must be wrapped in `function(...)`.
fn module_level(text: &str) -> bool {
    ["cgscc(", "module("].iter().any(|p| text.starts_with(p))
}

/// LLVM 14's pipeline matching Gyre's `pipeline`: each pass mapped by [`PASS_MAP`] (its
/// parameters kept), adaptors kept, passes without a counterpart left out (returned as
/// the second element). When a top-level element maps to a module-level pass (the
/// inliner), the runs of function-level elements around it go into `function(...)`.
pub fn llvm_pipeline(pipeline: &str) -> Result<(String, Vec<String>), String> {
    let elems = parse_pipeline(pipeline).map_err(|e| e.message)?;
    let mut missing = Vec::new();
    let mut top: Vec<String> = Vec::new();
    for e in &elems {
        let (t, m) = llvm_element(e)?;
        missing.extend(m);
        if !t.is_empty() {
            top.push(t);
        }
    }
    if !top.iter().any(|t| module_level(t)) {
        return Ok((top.join(","), missing));
    }
    let mut parts: Vec<String> = Vec::new();
    let mut run: Vec<String> = Vec::new();
    for t in top {
        if module_level(&t) {
            if !run.is_empty() {
                parts.push(format!("function({})", run.join(",")));
                run.clear();
            }
            parts.push(t);
        } else {
            run.push(t);
        }
    }
    if !run.is_empty() {
        parts.push(format!("function({})", run.join(",")));
    }
    Ok((parts.join(","), missing))
}

/// One top-level element of [`llvm_pipeline`]: its LLVM text (empty when nothing in it
/// maps) and the passes without a counterpart.
fn llvm_element(top: &PipelineElement) -> Result<(String, Vec<String>), String> {
    let mut text = String::new();
    let mut missing = Vec::new();
    // (element, entering?) pairs; closing an adaptor writes its `)`.
    let mut stack: Vec<(&PipelineElement, bool)> = vec![(top, true)];
    let mut need_comma = false;
    while let Some((e, entering)) = stack.pop() {
        if !entering {
            text.push(')');
            need_comma = true;
            continue;
        }
        if !e.nested.is_empty() {
            if need_comma {
                text.push(',');
            }
            text.push_str(&e.name);
            text.push('(');
            need_comma = false;
            stack.push((e, false));
            stack.extend(e.nested.iter().rev().map(|n| (n, true)));
            continue;
        }
        let Some((_, llvm, _)) = PASS_MAP.iter().find(|(g, _, _)| *g == e.name) else {
            missing.push(e.name.clone());
            continue;
        };
        if need_comma {
            text.push(',');
        }
        text.push_str(llvm);
        if !e.params.is_empty() {
            text.push('<');
            text.push_str(&e.params.join(";"));
            text.push('>');
        }
        need_comma = true;
    }
    Ok((text, missing))
}

/// Every `(name, wall seconds)` row of the section of an `opt -time-passes` report whose
/// title contains `section` ("Pass execution timing report" or "LLVM IR Parsing").
pub fn time_passes_rows(report: &str, section: &str) -> Vec<(String, f64)> {
    let Some(start) = report.find(section) else {
        return Vec::new();
    };
    let mut rows = Vec::new();
    let mut seen_header = false;
    for line in report[start..].lines().skip(1) {
        if line.starts_with("===") && seen_header {
            break;
        }
        if line.contains("--- Name ---") {
            seen_header = true;
            continue;
        }
        if !seen_header {
            continue;
        }
        // Columns: up to four "time (pct%)" pairs, then the name; the wall time is the
        // last number before the name.
        let Some(close) = line.rfind("%)") else {
            continue;
        };
        let name = line[close + 2..].trim();
        let nums: Vec<f64> = line[..close]
            .split(|c: char| c.is_whitespace() || c == '(')
            .filter_map(|t| t.parse::<f64>().ok())
            .collect();
        // Pairs of (time, pct): the wall time is the second to last number.
        if nums.len() >= 2 && !name.is_empty() {
            rows.push((name.to_string(), nums[nums.len() - 2]));
        }
    }
    rows
}

/// One row's measurement: a family at one size.
#[derive(Clone, Debug)]
pub struct SpeedRow {
    /// Family name.
    pub family: String,
    /// The size asked for.
    pub target: usize,
    /// Blocks in the kernel.
    pub blocks: usize,
    /// Instructions in the kernel.
    pub insts: usize,
    /// Size of the `.ll` file, bytes.
    pub ll_bytes: usize,
    /// Gyre in-process: (phase, median seconds), in order.
    pub gyre: Vec<(String, f64)>,
    /// `gyre compile -O --sm 70` as a process.
    pub gyre_process: Outcome,
    /// LLVM 14 per-row seconds under Gyre's names (the analyses run and the `-O` run).
    pub llvm: Vec<(String, f64)>,
    /// How the two `-time-passes` runs ended (Ok with the sum of their wall times).
    pub llvm_rows: Outcome,
    /// `opt -O2` as a process.
    pub opt: Outcome,
    /// `llc -march=nvptx64 -mcpu=sm_70` on `opt`'s output.
    pub llc: Outcome,
}

impl SpeedRow {
    /// Gyre's seconds for `phase`.
    pub fn gyre_s(&self, phase: &str) -> Option<f64> {
        self.gyre.iter().find(|(n, _)| n == phase).map(|(_, s)| *s)
    }
    /// LLVM's seconds for `phase`.
    pub fn llvm_s(&self, phase: &str) -> Option<f64> {
        self.llvm.iter().find(|(n, _)| n == phase).map(|(_, s)| *s)
    }
    /// `opt -O2` + `llc` wall seconds when both finished.
    pub fn llvm_total(&self) -> Option<f64> {
        Some(self.opt.wall()? + self.llc.wall()?)
    }
    /// Gyre's `-O` pipeline + PTX emission, in-process seconds.
    pub fn gyre_o_emit(&self) -> Option<f64> {
        Some(self.gyre_s(O_TOTAL)? + self.gyre_s(EMIT)?)
    }
}

/// Does LLVM 14 have a `-time-passes` row for Gyre's phase `phase` (so that a missing
/// figure is the run's time-out or crash, not a phase LLVM lacks)?
pub fn llvm_has_row(phase: &str) -> bool {
    phase == IMPORT
        || phase == O_TOTAL
        || ANALYSES.iter().any(|(g, l)| *g == phase && !l.is_empty())
        || PASS_MAP.iter().any(|(g, _, _)| *g == phase)
}

/// The row name of the whole `-O` pipeline run (adaptors and analyses included).
pub const O_TOTAL: &str = "-O total";
/// The row name of PTX emission.
pub const EMIT: &str = "emit PTX";
/// The row name of the `.ll` import.
pub const IMPORT: &str = "import .ll";

/// Settings of a measurement.
#[derive(Clone, Debug)]
pub struct Settings {
    /// Timed repetitions (the median is kept) at up to 10k blocks; fewer above.
    pub reps: usize,
    /// Seconds before an LLVM or Gyre process is killed.
    pub limit: f64,
    /// Address-space limit of each process, GiB.
    pub mem_gib: u64,
    /// LLVM 14 `opt` and `llc`, if found.
    pub llvm: Option<(PathBuf, PathBuf)>,
    /// The `gyre` binary, if given.
    pub gyre: Option<PathBuf>,
    /// Scratch directory.
    pub scratch: PathBuf,
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    if v.is_empty() {
        return 0.0;
    }
    v[v.len() / 2]
}

/// Repetitions at `blocks` blocks: `reps` up to 10k, 3 up to 100k, then 1.
fn reps_for(reps: usize, blocks: usize) -> usize {
    match blocks {
        0..=20_000 => reps.max(1),
        20_001..=200_000 => reps.clamp(1, 3),
        _ => 1,
    }
}

/// A clone's arenas are exactly full, so the first block, value or instruction a pass
/// adds would copy a whole arena inside the timed region; a function built incrementally,
/// as a compiler's are, has room to spare. Grow them untimed (as the `passes` binary).
pub fn pregrow(m: &mut Module) {
    use gyre_ir::{InstructionData, Type, ValueList};
    for f in m.functions.values_mut() {
        let b = f.dfg.make_block();
        let v = f.dfg.append_block_param(b, Type::I32);
        let mut list = ValueList::new();
        list.push(v, &mut f.dfg.value_lists);
        list.clear(&mut f.dfg.value_lists);
        f.layout.append_block(b);
        let (i, _) = f.append_inst(b, InstructionData::IntConst { imm: 0 }, Some(Type::I32));
        let (j, _) = f.append_inst(
            b,
            InstructionData::Return {
                args: ValueList::new(),
            },
            None,
        );
        f.layout.remove_inst(i);
        f.layout.remove_inst(j);
        f.layout.remove_block(b);
    }
}

/// A phase whose warm-up run takes longer than this many seconds is not repeated: that
/// run is its figure (noise is small beside it, and repeating a quadratic phase on a
/// deep nest would take most of a `--quick` run).
pub const SLOW_PHASE_S: f64 = 1.0;

/// Gyre in-process: the phases of compiling `ll` (LLVM IR text) with `-O`, median
/// seconds over `reps` runs (after a warm-up run up to 100k blocks; a phase whose
/// warm-up takes over [`SLOW_PHASE_S`] is measured by that run alone).
pub fn gyre_in_process(ll: &str, reps: usize) -> Result<Vec<(String, f64)>, String> {
    let t = Instant::now();
    let m = gyre_llvm::import_module(ll).map_err(|e| e.render("kernel.ll"))?;
    let first_import = t.elapsed().as_secs_f64();
    let blocks = crate::kernels::blocks(&m);
    let reps = reps_for(reps, blocks);
    let warm = blocks <= 200_000;
    let runs = reps + usize::from(warm);
    let mut out: Vec<(String, f64)> = Vec::new();
    let timed = |f: &mut dyn FnMut() -> Result<(), String>| {
        let mut v = Vec::new();
        for r in 0..runs {
            let t = Instant::now();
            f()?;
            let e = t.elapsed().as_secs_f64();
            if warm && r == 0 && e > SLOW_PHASE_S {
                return Ok(e);
            }
            if !(warm && r == 0) {
                v.push(e);
            }
        }
        Ok::<f64, String>(median(v))
    };
    if reps == 1 && !warm {
        out.push((IMPORT.into(), first_import));
    } else {
        let t = timed(&mut || {
            gyre_llvm::import_module(ll)
                .map(drop)
                .map_err(|e| e.render("kernel.ll"))
        })?;
        out.push((IMPORT.into(), t));
    }
    let mut gir = String::new();
    gyre_ir::write_module(&mut gir, &m).map_err(|e| e.to_string())?;
    let t = timed(&mut || {
        gyre_ir::parse_module(&gir)
            .map(drop)
            .map_err(|e| format!("{e:?}"))
    })?;
    out.push(("parse .gir".into(), t));
    let t = timed(&mut || gyre_ir::verifier::verify_module(&m).map_err(|e| format!("{e:?}")))?;
    out.push(("verify".into(), t));
    // Analyses: one reused object per analysis (warm buffers, as a compiler keeping one
    // per function), each timed alone over all functions.
    let funcs: Vec<&gyre_ir::Function> = m.functions.values().collect();
    let mut cfg = Cfg::new();
    let mut dt = DomTree::new();
    let mut pdt = PostDomTree::new();
    let mut li = LoopInfo::new();
    let mut un = Uniformity::new();
    let mut se = ScalarEvolution::new();
    let mut sums = [const { Vec::new() }; 6];
    for r in 0..runs {
        let mut acc = [0f64; 6];
        for f in &funcs {
            let t = Instant::now();
            cfg.compute(f).map_err(|e| format!("{e:?}"))?;
            acc[0] += t.elapsed().as_secs_f64();
            let t = Instant::now();
            dt.compute(f, &cfg);
            acc[1] += t.elapsed().as_secs_f64();
            let t = Instant::now();
            pdt.compute(f, &cfg);
            acc[2] += t.elapsed().as_secs_f64();
            let t = Instant::now();
            li.compute(f, &cfg, &dt);
            acc[3] += t.elapsed().as_secs_f64();
            let t = Instant::now();
            un.compute(f, &cfg, &dt, &pdt, &li);
            acc[4] += t.elapsed().as_secs_f64();
            let t = Instant::now();
            se.compute(f, &cfg, &dt, &li);
            acc[5] += t.elapsed().as_secs_f64();
        }
        if !(warm && r == 0) || acc.iter().sum::<f64>() > SLOW_PHASE_S {
            for (s, a) in sums.iter_mut().zip(acc) {
                s.push(a);
            }
        }
        if warm && r == 0 && acc.iter().sum::<f64>() > SLOW_PHASE_S {
            break;
        }
    }
    for ((name, _), v) in ANALYSES.iter().zip(sums) {
        out.push((name.to_string(), median(v)));
    }
    // The -O pipeline: per pass (loop passes summed over loops) and the whole run.
    let mut per_pass: Vec<(String, Vec<f64>)> = Vec::new();
    let mut totals = Vec::new();
    let mut optimized = None;
    for r in 0..runs {
        let mut c = m.clone();
        pregrow(&mut c);
        let options = Options {
            time_loop_passes: true,
            ..Options::default()
        };
        let mut pm = PassManager::from_pipeline(DEFAULT_PIPELINE, Knobs::default(), options)
            .map_err(|e| format!("{e:?}"))?;
        let t = Instant::now();
        let rep = pm.run_module(&mut c).map_err(|e| format!("{e:?}"))?;
        let total = t.elapsed().as_secs_f64();
        let slow = warm && r == 0 && total > SLOW_PHASE_S;
        if warm && r == 0 && !slow {
            continue;
        }
        totals.push(total);
        for (name, d) in &rep.pass_times {
            match per_pass.iter_mut().find(|(n, _)| n == name) {
                Some((_, v)) => v.push(d.as_secs_f64()),
                None => per_pass.push((name.to_string(), vec![d.as_secs_f64()])),
            }
        }
        optimized = Some(c);
        if slow {
            break;
        }
    }
    for (name, v) in per_pass {
        out.push((name, median(v)));
    }
    out.push((O_TOTAL.into(), median(totals)));
    let optimized = optimized.ok_or("no timed run")?;
    let opts = CodegenOptions {
        sm: Sm::from_number(70).ok_or("sm_70 unsupported")?,
    };
    let t = timed(&mut || {
        compile_module(&optimized, &opts)
            .map(drop)
            .map_err(|e| e.to_string())
    })?;
    out.push((EMIT.into(), t));
    Ok(out)
}

/// LLVM 14 per row: the analyses run and the matching `-O` pipeline run, each under
/// `opt -disable-output -time-passes`, rows renamed to Gyre's.
pub fn llvm_rows(opt: &Path, file: &Path, s: &Settings) -> (Vec<(String, f64)>, Outcome) {
    let (pipeline, _) = match llvm_pipeline(DEFAULT_PIPELINE) {
        Ok(p) => p,
        Err(e) => return (Vec::new(), Outcome::Crash(e)),
    };
    let mut rows = Vec::new();
    let mut wall = 0.0;
    let mut rss = 0;
    let file_s = file.to_string_lossy();
    for (k, passes) in [LLVM_ANALYSES.to_string(), pipeline].iter().enumerate() {
        let arg = format!("-passes={passes}");
        let (o, stderr) = measure(
            opt,
            &["-disable-output", "-time-passes", &arg, &file_s],
            None,
            s.limit,
            s.mem_gib,
            &s.scratch,
        );
        match o {
            Outcome::Ok { wall: w, rss_kib } => {
                wall += w;
                rss = rss.max(rss_kib);
            }
            other => return (rows, other),
        }
        let exec = time_passes_rows(&stderr, "Pass execution timing report");
        if k == 0 {
            let parse = time_passes_rows(&stderr, "LLVM IR Parsing");
            if let Some((_, p)) = parse.iter().find(|(n, _)| n == "Parse IR") {
                rows.push((IMPORT.to_string(), *p));
            }
            for (g, l) in ANALYSES.iter().filter(|(_, l)| !l.is_empty()) {
                if let Some((_, t)) = exec.iter().find(|(n, _)| n == l) {
                    rows.push((g.to_string(), *t));
                }
            }
        } else {
            for (g, _, l) in PASS_MAP {
                if let Some((_, t)) = exec.iter().find(|(n, _)| n == l) {
                    rows.push((g.to_string(), *t));
                }
            }
            if let Some((_, t)) = exec.iter().find(|(n, _)| n == "Total") {
                rows.push((O_TOTAL.to_string(), *t));
            }
        }
    }
    (rows, Outcome::Ok { wall, rss_kib: rss })
}

/// `opt -O2 file -o file.bc`, then `llc -march=nvptx64 -mcpu=sm_70` on it.
pub fn llvm_processes(opt: &Path, llc: &Path, file: &Path, s: &Settings) -> (Outcome, Outcome) {
    let bc = file.with_extension("bc");
    let ptx = file.with_extension("llc.ptx");
    let (bc_s, ptx_s, file_s) = (
        bc.to_string_lossy(),
        ptx.to_string_lossy(),
        file.to_string_lossy(),
    );
    let (o, _) = measure(
        opt,
        &["-O2", &file_s, "-o", &bc_s],
        None,
        s.limit,
        s.mem_gib,
        &s.scratch,
    );
    let l = if o.wall().is_some() {
        measure(
            llc,
            &["-O2", "-march=nvptx64", "-mcpu=sm_70", &bc_s, "-o", &ptx_s],
            None,
            s.limit,
            s.mem_gib,
            &s.scratch,
        )
        .0
    } else {
        Outcome::Skipped
    };
    let _ = std::fs::remove_file(&bc);
    let _ = std::fs::remove_file(&ptx);
    (o, l)
}

/// `gyre compile -O --sm 70 file -o file.gyre.ptx` as a process.
pub fn gyre_process(gyre: &Path, file: &Path, s: &Settings) -> Outcome {
    let ptx = file.with_extension("gyre.ptx");
    let (file_s, ptx_s) = (file.to_string_lossy(), ptx.to_string_lossy());
    let (o, _) = measure(
        gyre,
        &["compile", "-O", "--sm", "70", &file_s, "-o", &ptx_s],
        None,
        s.limit,
        s.mem_gib,
        &s.scratch,
    );
    let _ = std::fs::remove_file(&ptx);
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flattens_and_maps_the_default_pipeline() {
        let p = pipeline_passes("loop-simplify,lcssa,loop(loop-rotate,indvars),simplify")
            .expect("parses");
        assert_eq!(
            p,
            [
                "loop-simplify",
                "lcssa",
                "loop-rotate",
                "indvars",
                "simplify"
            ]
        );
        let (l, missing) = llvm_pipeline(
            "loop-simplify,lcssa,loop(loop-rotate,simple-loop-unswitch<nontrivial>,frob),simplify,frob",
        )
        .expect("parses");
        assert_eq!(
            l,
            "loop-simplify,lcssa,loop(loop-rotate,simple-loop-unswitch<nontrivial>),instcombine"
        );
        assert_eq!(missing, ["frob", "frob"]);
        // A module-level inliner first: opt 14 then needs the function passes wrapped.
        let (l, missing) =
            llvm_pipeline("inline,loop-simplify,loop(loop-rotate),simplify,inline,lcssa")
                .expect("parses");
        assert_eq!(
            l,
            "cgscc(inline),function(loop-simplify,loop(loop-rotate),instcombine),cgscc(inline),function(lcssa)"
        );
        assert!(missing.is_empty());
        // Whatever -O is today, every pass in it is in the flattened list.
        let today = pipeline_passes(DEFAULT_PIPELINE).expect("-O parses");
        assert!(today.iter().any(|p| p == "loop-rotate"), "{today:?}");
    }

    /// The matching pipelines are accepted by LLVM 14's `opt` and run every mapped pass
    /// (each has its `-time-passes` row) on a kernel with loops.
    #[test]
    fn matching_pipelines_run_under_opt_14() {
        let Some(opt) = ["opt-14", "opt"].into_iter().find(|p| {
            std::process::Command::new(p)
                .arg("--version")
                .output()
                .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).contains("LLVM version 14."))
        }) else {
            eprintln!("skipped: no LLVM 14 opt");
            return;
        };
        let m = crate::kernels::build("nest", 200).expect("builds");
        let ll = gyre_llvm::export_module(&m, &gyre_llvm::ExportOptions::default());
        let dir = std::env::temp_dir().join(format!("gyre-perf-map-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let file = dir.join("k.ll");
        std::fs::write(&file, ll).expect("write");
        let with_inline = format!("inline,{DEFAULT_PIPELINE}");
        for gyre in [DEFAULT_PIPELINE, with_inline.as_str()] {
            let (text, missing) = llvm_pipeline(gyre).expect("maps");
            assert!(missing.is_empty(), "{gyre}: unmapped {missing:?}");
            let out = std::process::Command::new(opt)
                .args([
                    "-disable-output",
                    "-time-passes",
                    &format!("-passes={text}"),
                ])
                .arg(&file)
                .output()
                .expect("runs opt");
            let err = String::from_utf8_lossy(&out.stderr);
            assert!(
                out.status.success() && !err.contains("invalid"),
                "{text}: {err}"
            );
            let rows = time_passes_rows(&err, "Pass execution timing report");
            for p in pipeline_passes(gyre).expect("parses") {
                let (_, _, row) = PASS_MAP.iter().find(|m| m.0 == p).expect("mapped");
                assert!(
                    rows.iter().any(|(n, _)| n == row),
                    "{text}: no {row} row in {err}"
                );
            }
        }
        let _ = std::fs::remove_dir_all(&dir);
    }

    const REPORT: &str = "\
===-------------------------------------------------------------------------===
                      ... Pass execution timing report ...
===-------------------------------------------------------------------------===
  Total Execution Time: 0.0301 seconds (0.0302 wall clock)

   ---User Time---   --System Time--   --User+System--   ---Wall Time---  --- Name ---
   0.0100 ( 33.0%)   0.0000 ( 27.5%)   0.0100 ( 26.9%)   0.0123 ( 26.3%)  LoopRotatePass
   0.0000 ( 18.8%)   0.0000 ( 21.6%)   0.0000 ( 20.9%)   0.0007 ( 21.8%)  RequireAnalysisPass<llvm::LoopAnalysis, llvm::Function>
   0.0300 (100.0%)   0.0001 (100.0%)   0.0001 (100.0%)   0.0302 (100.0%)  Total

===-------------------------------------------------------------------------===
                                LLVM IR Parsing
===-------------------------------------------------------------------------===
  Total Execution Time: 0.0002 seconds (0.0002 wall clock)

   --System Time--   --User+System--   ---Wall Time---  --- Name ---
   0.0002 (100.0%)   0.0002 (100.0%)   0.0031 (100.0%)  Parse IR
   0.0002 (100.0%)   0.0002 (100.0%)   0.0031 (100.0%)  Total
";

    #[test]
    fn reads_every_row_of_both_sections() {
        let exec = time_passes_rows(REPORT, "Pass execution timing report");
        assert_eq!(
            exec,
            [
                ("LoopRotatePass".to_string(), 0.0123),
                (
                    "RequireAnalysisPass<llvm::LoopAnalysis, llvm::Function>".to_string(),
                    0.0007
                ),
                ("Total".to_string(), 0.0302)
            ]
        );
        let parse = time_passes_rows(REPORT, "LLVM IR Parsing");
        assert_eq!(parse[0], ("Parse IR".to_string(), 0.0031));
        assert!(time_passes_rows("nothing", "LLVM IR Parsing").is_empty());
    }

    #[test]
    fn in_process_phases_cover_the_pipeline() {
        let m = crate::kernels::build("nest", 200).expect("builds");
        let ll = gyre_llvm::export_module(&m, &gyre_llvm::ExportOptions::default());
        let rows = gyre_in_process(&ll, 1).expect("compiles");
        let names: Vec<&str> = rows.iter().map(|(n, _)| n.as_str()).collect();
        for want in [IMPORT, "parse .gir", "verify", "cfg", "scev", O_TOTAL, EMIT] {
            assert!(names.contains(&want), "{want} missing from {names:?}");
        }
        for p in pipeline_passes(DEFAULT_PIPELINE).expect("-O parses") {
            assert!(names.contains(&p.as_str()), "{p} missing from {names:?}");
        }
        assert!(rows.iter().all(|(_, s)| *s >= 0.0 && s.is_finite()));
    }
}
