//! Quick ns/block table (minimum over repeated runs, robust on a busy machine):
//! `cargo run --release -p gyre-analysis --example timing [sizes...]`.
//!
//! Families: `nest3-seq` (3-deep rotated nests, one loop per two blocks),
//! `random-reducible`, `deep-nest` (one nest of `size / 2 - 1` loops) and `exit-ladder` (a
//! chain whose blocks all also branch to one exit: quadratic for a dominator sweep that
//! reads the exit's predecessors in layout order) and `exit-ladder-backwards` (the same
//! laid out against the chain: the dominator tree's semi-NCA fallback).
//!
//! `random-reducible` is timed over `cfggen::distinct_functions(size)` distinct functions
//! (`cfggen::random_reducible_set`, seeds 0x5eed, 0x5eed + 1, ...: 16 at 1k blocks, 10 at
//! 10k, one from 100k on), each with its own analysis objects, and reported as the time of
//! one pass over all of them divided by their total blocks: one small function repeated
//! stays in the caches and lets the branch predictor learn its branches (see
//! `distinct_functions`).
//! Where it rotates, the row `random-reducible-1fn` times the first function alone, the old
//! way, to keep that difference visible. The other families are deterministic and periodic
//! and are timed on one function.
//!
//! Each analysis is timed separately (the CFGs and dominator trees it needs are computed
//! beforehand), minimum over repetitions of about 20M blocks in all (5..2000).
//! `GYRE_TIMING_REPS=N` fixes the repetitions (e.g. 1 under callgrind);
//! `GYRE_TIMING_FAMILY=name` runs one family only (`random-reducible` includes its `-1fn`
//! row).

use gyre_analysis::cfggen::{self, CfgShape};
use gyre_analysis::{Cfg, DomTree, LoopInfo, PostDomTree};
use gyre_ir::Function;
use std::time::Instant;

fn min_ns(reps: usize, mut f: impl FnMut()) -> f64 {
    let mut best = f64::MAX;
    for _ in 0..reps {
        let t = Instant::now();
        f();
        best = best.min(t.elapsed().as_nanos() as f64);
    }
    best
}

/// Time the four analyses, each over all of `shapes` per repetition (one analysis object
/// per function, so every function's buffers stay warm), and print ns per block.
fn row(name: &str, shapes: &[CfgShape]) {
    let funcs: Vec<Function> = shapes.iter().map(CfgShape::to_function).collect();
    let total: u64 = shapes.iter().map(|s| u64::from(s.num_blocks)).sum();
    let n = total as f64;
    let reps = std::env::var("GYRE_TIMING_REPS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or_else(|| (20_000_000 / total.max(1) as usize).clamp(5, 2000));
    let mut cfgs: Vec<Cfg> = funcs.iter().map(|_| Cfg::new()).collect();
    let t_cfg = min_ns(reps, || {
        for (f, cfg) in funcs.iter().zip(&mut cfgs) {
            cfg.compute(f).expect("valid");
        }
    });
    let mut dts: Vec<DomTree> = funcs.iter().map(|_| DomTree::new()).collect();
    let t_dt = min_ns(reps, || {
        for ((f, cfg), dt) in funcs.iter().zip(&cfgs).zip(&mut dts) {
            dt.compute(f, cfg);
        }
    });
    let mut lis: Vec<LoopInfo> = funcs.iter().map(|_| LoopInfo::new()).collect();
    let t_li = min_ns(reps, || {
        for (((f, cfg), dt), li) in funcs.iter().zip(&cfgs).zip(&dts).zip(&mut lis) {
            li.compute(f, cfg, dt);
        }
    });
    let mut pdts: Vec<PostDomTree> = funcs.iter().map(|_| PostDomTree::new()).collect();
    let t_pdt = min_ns(reps, || {
        for ((f, cfg), pdt) in funcs.iter().zip(&cfgs).zip(&mut pdts) {
            pdt.compute(f, cfg);
        }
    });
    println!(
        "{name:<20} {:>9} {:>4} {:>8.1} {:>8.1} {:>8.1} {:>8.1}",
        total / shapes.len() as u64,
        shapes.len(),
        t_cfg / n,
        t_dt / n,
        t_li / n,
        t_pdt / n
    );
}

fn main() {
    let sizes: Vec<u32> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let sizes = if sizes.is_empty() {
        vec![1_000, 10_000, 100_000, 1_000_000]
    } else {
        sizes
    };
    let family = std::env::var("GYRE_TIMING_FAMILY").ok();
    let want = |f: &str| family.as_deref().is_none_or(|x| x == f);
    println!(
        "{:<20} {:>9} {:>4} {:>8} {:>8} {:>8} {:>8}",
        "graph", "blocks", "fns", "cfg", "domtree", "loops", "postdom"
    );
    for &n in &sizes {
        if want("nest3-seq") {
            row("nest3-seq", &[cfggen::loop_nest_sequence(n)]);
        }
        if want("random-reducible") {
            let set = cfggen::random_reducible_set(n, 0x5eed);
            row("random-reducible", &set);
            if set.len() > 1 {
                row("random-reducible-1fn", &set[..1]);
            }
        }
        if want("deep-nest") {
            row("deep-nest", &[cfggen::deep_nest((n / 2).saturating_sub(1))]);
        }
        if want("exit-ladder") {
            row("exit-ladder", &[cfggen::exit_ladder(n)]);
        }
        if want("exit-ladder-backwards") {
            row("exit-ladder-backwards", &[cfggen::exit_ladder_backwards(n)]);
        }
    }
}
