//! `passes`: Gyre's loop passes beside LLVM 14's on the same kernels.
//!
//! For each family and size, a kernel is built in Gyre IR and put in loop-simplify and
//! LCSSA form (untimed: both compilers start from the same canonical input), then
//! exported to LLVM IR. Gyre runs `loop(loop-rotate)` in-process (the minimum over
//! `--reps` runs, each on a fresh copy and an empty analysis cache); LLVM 14 runs
//! `opt -disable-output -passes='loop(loop-rotate)' -time-passes` on the exported file and
//! the `LoopRotatePass` row is read. Both exclude parsing; LLVM's row excludes its
//! analyses (they have rows of their own), so Gyre's pass column does too, and the
//! `loop(...)` column adds the adaptor, its canonicalization checks and the one
//! computation of the CFG, dominator tree and loop forest.
//!
//! Families: `nest` (sequential 3-deep `while` nests, 9 blocks each), `deep` (one
//! `while` nest, 3 blocks per level), `random` (the kernel generator's UB-free, reducible
//! kernels with `target_blocks`: the report's, `gyre_perf::kernels::build`), `unswitch-nest` (the nests of `nest` whose inner
//! body branches on a kernel argument: uniform and invariant, 11 blocks each).
//!
//! `--pass unswitch` times `loop(simple-loop-unswitch<nontrivial>)` beside LLVM 14's
//! `SimpleLoopUnswitchPass` row instead (default families `unswitch-nest` and `random`),
//! with `opt -enable-nontrivial-unswitch`: on the NVPTX triple LLVM 14 otherwise unswitches
//! nothing non-trivially (it has no uniformity analysis), so its row would time a scan.
//! `--pass indvars` times `indvars` after `loop-rotate` in the same loop pipeline on both
//! sides (`loop(loop-rotate,indvars)`, LLVM's `IndVarSimplifyPass` row). `-C name=value`
//! sets a Gyre knob (`-C iv-loop-level=100000` makes Gyre simplify every loop, as LLVM
//! does, instead of cicc's outermost loops only).
//!
//! `--pass loop-deletion` or `--pass loop-simplifycfg` times that pass alone beside LLVM's
//! `LoopDeletionPass` / `LoopSimplifyCFGPass` row (the `nest` and `deep` loops have no
//! effect and are dead, so loop-deletion deletes them all; the `changed` column counts
//! loops deleted or unlooped, or branches folded and blocks merged).
//!
//! Usage: `passes [--pass rotate|unswitch|indvars|loop-deletion|loop-simplifycfg]
//! [-C knob=value]... [--family NAME]...
//! [--reps N] [--no-llvm] [--llvm-timeout S] [--keep-ll DIR] [sizes...]` (default sizes 1000 10000 100000).
//! `--keep-ll DIR` keeps the exported LLVM files there (`FAMILY-N.ll`), e.g. to count
//! `opt`'s instructions under callgrind.

use gyre_ir::Module;
use gyre_perf::llvm::{find_opt, time_pass_with};
use gyre_transforms::knobs::apply_setting;
use gyre_transforms::{Knobs, Options, PassManager};
use std::fmt::Write as _;
use std::time::{Duration, Instant};

const FAMILIES: &[&str] = &["nest", "deep", "random", "unswitch-nest"];

/// What is timed: Gyre's pipeline, its pass's name, LLVM's pipeline and `-time-passes`
/// row, and the counters whose sum is the "changed" column.
struct Timed {
    gyre: &'static str,
    pass: &'static str,
    llvm: &'static str,
    llvm_row: &'static str,
    /// Extra `opt` options.
    llvm_flags: &'static [&'static str],
    counters: &'static [&'static str],
    default_families: &'static [&'static str],
}

const ROTATE: Timed = Timed {
    gyre: "loop(loop-rotate)",
    pass: "loop-rotate",
    llvm: "loop(loop-rotate)",
    llvm_row: "LoopRotatePass",
    llvm_flags: &[],
    counters: &["NumRotated"],
    default_families: &["nest", "deep", "random"],
};

const UNSWITCH: Timed = Timed {
    gyre: "loop(simple-loop-unswitch<nontrivial>)",
    pass: "simple-loop-unswitch",
    llvm: "loop(simple-loop-unswitch<nontrivial>)",
    llvm_row: "SimpleLoopUnswitchPass",
    // LLVM 14 does no non-trivial unswitching on a target with divergent branches
    // (NVPTX, the exported modules' triple) unless forced: without the flag its row times
    // a pass that clones nothing (bug 48819; Gyre asks the uniformity analysis instead).
    llvm_flags: &["-enable-nontrivial-unswitch"],
    counters: &[
        "NumTrivial",
        "NumSwitchesTrivial",
        "NumBranches",
        "NumSwitches",
    ],
    default_families: &["unswitch-nest", "random"],
};

const INDVARS: Timed = Timed {
    gyre: "loop(loop-rotate,indvars)",
    pass: "indvars",
    llvm: "loop(loop-rotate,indvars)",
    llvm_row: "IndVarSimplifyPass",
    llvm_flags: &[],
    counters: &["NumLFTR"],
    default_families: &["nest", "deep", "random"],
};

const DELETION: Timed = Timed {
    gyre: "loop(loop-deletion)",
    pass: "loop-deletion",
    llvm: "loop(loop-deletion)",
    llvm_row: "LoopDeletionPass",
    llvm_flags: &[],
    counters: &["NumDeleted", "NumBackedgesBroken", "NumNeverEntered"],
    default_families: &["nest", "deep", "random"],
};

const SIMPLIFYCFG: Timed = Timed {
    gyre: "loop(loop-simplifycfg)",
    pass: "loop-simplifycfg",
    llvm: "loop(loop-simplifycfg)",
    llvm_row: "LoopSimplifyCFGPass",
    llvm_flags: &[],
    counters: &["NumTerminatorsFolded", "NumBlocksMerged"],
    default_families: &["nest", "deep", "random"],
};

/// The nests of [`nest`] with a branch on `v0 != 0` (uniform, invariant) in the innermost
/// body: 11 blocks per nest.
fn unswitch_nest(n: usize) -> String {
    let nests = (n / 11).max(1);
    let mut s = String::from(
        "global @out: global [4 x i32] align 4\n\nkernel @k(i32) {\nblock0(v0: i32):\n    v1 = iconst.i32 0\n    v2 = iconst.i32 1\n    v3 = icmp ne v0, v1\n    jump block1\n",
    );
    let (mut b, mut v) = (1usize, 4usize);
    for _ in 0..nests {
        let (pre, ho, pm, hm, pi, hi, bi, ba, bb, lm, lo) = (
            b,
            b + 1,
            b + 2,
            b + 3,
            b + 4,
            b + 5,
            b + 6,
            b + 7,
            b + 8,
            b + 9,
            b + 10,
        );
        let next = b + 11;
        let (xo, co, xm, cm, xi, ci, ya, yb, zb, ym, yo) = (
            v,
            v + 1,
            v + 2,
            v + 3,
            v + 4,
            v + 5,
            v + 6,
            v + 7,
            v + 8,
            v + 9,
            v + 10,
        );
        v += 11;
        let _ = write!(
            s,
            "block{pre}:\n    jump block{ho}(v1)\n\
             block{ho}(v{xo}: i32):\n    v{co} = icmp slt v{xo}, v0\n    brif v{co}, block{pm}, block{next}\n\
             block{pm}:\n    jump block{hm}(v1)\n\
             block{hm}(v{xm}: i32):\n    v{cm} = icmp slt v{xm}, v0\n    brif v{cm}, block{pi}, block{lo}\n\
             block{pi}:\n    jump block{hi}(v1)\n\
             block{hi}(v{xi}: i32):\n    v{ci} = icmp slt v{xi}, v0\n    brif v{ci}, block{bi}, block{lm}\n\
             block{bi}:\n    brif v3, block{ba}, block{bb}\n\
             block{ba}:\n    v{ya} = iadd v{xi}, v2\n    jump block{hi}(v{ya})\n\
             block{bb}:\n    v{yb} = iadd v{xi}, v2\n    v{zb} = iadd v{yb}, v2\n    jump block{hi}(v{zb})\n\
             block{lm}:\n    v{ym} = iadd v{xm}, v2\n    jump block{hm}(v{ym})\n\
             block{lo}:\n    v{yo} = iadd v{xo}, v2\n    jump block{ho}(v{yo})\n"
        );
        b = next;
    }
    let _ = write!(
        s,
        "block{b}:\n    v{v} = global_addr @out\n    store v0, v{v}\n    return\n}}\n"
    );
    s
}

/// Sequential 3-deep `while` nests counting to the kernel's argument, about `n` blocks.
fn nest(n: usize) -> String {
    let nests = (n / 9).max(1);
    let mut s = String::from(
        "global @out: global [4 x i32] align 4\n\nkernel @k(i32) {\nblock0(v0: i32):\n    v1 = iconst.i32 0\n    v2 = iconst.i32 1\n    jump block1\n",
    );
    let (mut b, mut v) = (1usize, 3usize);
    for _ in 0..nests {
        // pre, hO, preM, hM, preI, hI, bodyI, latchM, latchO; the next nest's pre exits.
        let (pre, ho, pm, hm, pi, hi, bi, lm, lo) =
            (b, b + 1, b + 2, b + 3, b + 4, b + 5, b + 6, b + 7, b + 8);
        let next = b + 9;
        let (xo, co, xm, cm, xi, ci, yi, ym, yo) =
            (v, v + 1, v + 2, v + 3, v + 4, v + 5, v + 6, v + 7, v + 8);
        v += 9;
        let _ = write!(
            s,
            "block{pre}:\n    jump block{ho}(v1)\n\
             block{ho}(v{xo}: i32):\n    v{co} = icmp slt v{xo}, v0\n    brif v{co}, block{pm}, block{next}\n\
             block{pm}:\n    jump block{hm}(v1)\n\
             block{hm}(v{xm}: i32):\n    v{cm} = icmp slt v{xm}, v0\n    brif v{cm}, block{pi}, block{lo}\n\
             block{pi}:\n    jump block{hi}(v1)\n\
             block{hi}(v{xi}: i32):\n    v{ci} = icmp slt v{xi}, v0\n    brif v{ci}, block{bi}, block{lm}\n\
             block{bi}:\n    v{yi} = iadd v{xi}, v2\n    jump block{hi}(v{yi})\n\
             block{lm}:\n    v{ym} = iadd v{xm}, v2\n    jump block{hm}(v{ym})\n\
             block{lo}:\n    v{yo} = iadd v{xo}, v2\n    jump block{ho}(v{yo})\n"
        );
        b = next;
    }
    let _ = write!(
        s,
        "block{b}:\n    v{v} = global_addr @out\n    store v0, v{v}\n    return\n}}\n"
    );
    s
}

/// One `while` nest `n / 3` deep, each level counting to the kernel's argument.
fn deep(n: usize) -> String {
    let d = (n / 3).max(1);
    let mut s = String::from(
        "global @out: global [4 x i32] align 4\n\nkernel @k(i32) {\nblock0(v0: i32):\n    v1 = iconst.i32 0\n    v2 = iconst.i32 1\n    jump block1(v1)\n",
    );
    // Level i: header 3i+1, preheader of level i+1: 3i+2, latch 3i+3; exit 3d+1.
    let exit = 3 * d + 1;
    for i in 0..d {
        let (h, pre, latch) = (3 * i + 1, 3 * i + 2, 3 * i + 3);
        let (x, c, y) = (3 + 3 * i, 4 + 3 * i, 5 + 3 * i);
        let out = if i == 0 { exit } else { 3 * (i - 1) + 3 };
        let inner = if i + 1 < d { pre } else { latch };
        let _ = write!(
            s,
            "block{h}(v{x}: i32):\n    v{c} = icmp slt v{x}, v0\n    brif v{c}, block{inner}, block{out}\n"
        );
        if i + 1 < d {
            let _ = write!(s, "block{pre}:\n    jump block{}(v1)\n", h + 3);
        }
        let _ = write!(
            s,
            "block{latch}:\n    v{y} = iadd v{x}, v2\n    jump block{h}(v{y})\n"
        );
    }
    let v = 3 + 3 * d;
    let _ = write!(
        s,
        "block{exit}:\n    v{v} = global_addr @out\n    store v0, v{v}\n    return\n}}\n"
    );
    s
}

fn build(family: &str, n: usize) -> Module {
    let mut m = match family {
        "nest" => gyre_ir::parse_module(&nest(n)).expect("the nest kernel parses"),
        "deep" => gyre_ir::parse_module(&deep(n)).expect("the deep kernel parses"),
        "unswitch-nest" => {
            gyre_ir::parse_module(&unswitch_nest(n)).expect("the unswitch-nest kernel parses")
        }
        // The report's `random` kernel: UB-free and reducible. (This binary used to take
        // the generator's defaults, which allow irreducible cycles: 3,745 at 100k blocks,
        // whose loops every pass skips.)
        _ => gyre_perf::kernels::build("random", n).expect("the random kernel builds"),
    };
    let mut pm =
        PassManager::from_pipeline("loop-simplify,lcssa", Knobs::default(), Options::default())
            .expect("pipeline");
    pm.run_module(&mut m).expect("canonicalization runs");
    m
}

/// A clone's arenas are exactly full, so the first block, value or instruction a pass adds
/// would copy a whole arena (megabytes at 100k blocks) inside the timed region; a function
/// built incrementally, as a compiler's are, has room to spare. Grow them untimed (as the
/// criterion benchmarks of crates/transforms do).
fn pregrow(m: &mut Module) {
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

fn blocks(m: &Module) -> usize {
    m.functions.values().map(|f| f.layout.num_blocks()).sum()
}

struct Row {
    family: &'static str,
    blocks: usize,
    loops: u64,
    rotated: u64,
    pass_s: f64,
    adaptor_s: f64,
    llvm: Option<Result<Option<f64>, String>>,
}

fn main() {
    let mut args = std::env::args().skip(1);
    let (mut families, mut sizes) = (Vec::new(), Vec::new());
    let (mut reps, mut llvm, mut timeout) = (5usize, true, 120u64);
    let mut keep_ll: Option<std::path::PathBuf> = None;
    let mut timed = &ROTATE;
    let mut knobs = Knobs::default();
    while let Some(a) = args.next() {
        match a.as_str() {
            "-C" => {
                let k = args.next().expect("-C name=value");
                apply_setting(&mut knobs, &k).unwrap_or_else(|e| panic!("{e}"));
            }
            "--pass" => {
                timed = match args.next().as_deref() {
                    Some("rotate") => &ROTATE,
                    Some("unswitch") => &UNSWITCH,
                    Some("indvars") => &INDVARS,
                    Some("loop-deletion") => &DELETION,
                    Some("loop-simplifycfg") => &SIMPLIFYCFG,
                    _ => panic!("--pass rotate|unswitch|indvars|loop-deletion|loop-simplifycfg"),
                }
            }
            "--family" => families.push(args.next().expect("--family NAME")),
            "--reps" => reps = args.next().and_then(|s| s.parse().ok()).expect("--reps N"),
            "--no-llvm" => llvm = false,
            "--keep-ll" => keep_ll = Some(args.next().expect("--keep-ll DIR").into()),
            "--llvm-timeout" => {
                timeout = args
                    .next()
                    .and_then(|s| s.parse().ok())
                    .expect("--llvm-timeout S")
            }
            "--help" | "-h" => {
                println!("passes [--pass rotate|unswitch|indvars|loop-deletion|loop-simplifycfg] [-C knob=value]... [--family nest|deep|random|unswitch-nest]... [--reps N] [--no-llvm] [--llvm-timeout S] [--keep-ll DIR] [sizes...]");
                return;
            }
            s => sizes.push(s.parse::<usize>().expect("a size in blocks")),
        }
    }
    if sizes.is_empty() {
        sizes = vec![1_000, 10_000, 100_000];
    }
    let families: Vec<&'static str> = if families.is_empty() {
        timed.default_families.to_vec()
    } else {
        FAMILIES
            .iter()
            .copied()
            .filter(|f| families.iter().any(|g| g == f))
            .collect()
    };
    let opt = if llvm { find_opt() } else { None };
    match &opt {
        Some((p, v)) => eprintln!("LLVM: {} ({v})", p.display()),
        None => eprintln!("LLVM: not used"),
    }
    let dir = std::env::temp_dir().join(format!("gyre-perf-passes-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temporary directory");
    let mut rows = Vec::new();
    for &family in &families {
        for &n in &sizes {
            let m = build(family, n);
            let nb = blocks(&m);
            let (mut pass_s, mut adaptor_s) = (f64::MAX, f64::MAX);
            let (mut loops, mut rotated) = (0, 0);
            for _ in 0..reps.max(1) {
                let mut c = m.clone();
                pregrow(&mut c);
                let options = Options {
                    time_loop_passes: true,
                    ..Options::default()
                };
                let mut pm = PassManager::from_pipeline(timed.gyre, knobs.clone(), options)
                    .expect("pipeline");
                let t = Instant::now();
                let r = pm.run_module(&mut c).expect("the pass runs");
                adaptor_s = adaptor_s.min(t.elapsed().as_secs_f64());
                let p = r
                    .pass_times
                    .iter()
                    .find(|(name, _)| *name == timed.pass)
                    .map_or(0.0, |(_, d)| d.as_secs_f64());
                pass_s = pass_s.min(p);
                loops = r
                    .loop_visits
                    .iter()
                    .find(|(name, _)| *name == timed.pass)
                    .map_or(0, |(_, n)| *n);
                rotated = timed
                    .counters
                    .iter()
                    .map(|c| r.stats.get(timed.pass, c))
                    .sum();
            }
            let llvm = opt.as_ref().map(|(path, _)| {
                let file = dir.join(format!("{family}-{n}.ll"));
                let text = gyre_llvm::export_module(&m, &gyre_llvm::ExportOptions::default());
                std::fs::write(&file, text).map_err(|e| e.to_string())?;
                let r = time_pass_with(
                    path,
                    &file,
                    timed.llvm,
                    timed.llvm_flags,
                    timed.llvm_row,
                    Duration::from_secs(timeout),
                );
                match &keep_ll {
                    Some(d) => {
                        std::fs::create_dir_all(d).map_err(|e| e.to_string())?;
                        std::fs::copy(&file, d.join(format!("{family}-{n}.ll")))
                            .map_err(|e| e.to_string())?;
                        let _ = std::fs::remove_file(&file);
                    }
                    None => {
                        let _ = std::fs::remove_file(&file);
                    }
                }
                r
            });
            eprintln!("{family} {nb} blocks: done");
            rows.push(Row {
                family,
                blocks: nb,
                loops,
                rotated,
                pass_s,
                adaptor_s,
                llvm,
            });
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    println!(
        "| family | blocks | loops | changed | Gyre {} | ns/block | Gyre {} | ns/block | LLVM 14 {} | ns/block | LLVM / Gyre |",
        timed.pass, timed.gyre, timed.llvm_row
    );
    println!("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    for r in &rows {
        let ns = |s: f64| s * 1e9 / r.blocks as f64;
        let (l, lns, ratio) = match &r.llvm {
            None => ("not run".to_string(), "-".to_string(), "-".to_string()),
            Some(Ok(Some(s))) => (
                format!("{:.2} ms", s * 1e3),
                format!("{:.0}", ns(*s)),
                // Two significant digits below 10x, so that a ratio under 1 (LLVM
                // faster) does not print as `0x`.
                match s / r.pass_s {
                    x if x < 10.0 => format!("{x:.2}x"),
                    x => format!("{x:.0}x"),
                },
            ),
            Some(Ok(None)) => (format!("> {timeout} s (killed)"), "-".into(), "-".into()),
            Some(Err(e)) => (
                format!("failed: {}", e.lines().next().unwrap_or("")),
                "-".into(),
                "-".into(),
            ),
        };
        println!(
            "| {} | {} | {} | {} | {:.2} ms | {:.0} | {:.2} ms | {:.0} | {l} | {lns} | {ratio} |",
            r.family,
            r.blocks,
            r.loops,
            r.rotated,
            r.pass_s * 1e3,
            ns(r.pass_s),
            r.adaptor_s * 1e3,
            ns(r.adaptor_s),
        );
    }
}
