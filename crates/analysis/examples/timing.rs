//! Quick ns/block table (minimum over repeated runs, robust on a busy machine):
//! `cargo run --release -p gyre-analysis --example timing [sizes...]`.
//!
//! Families: `nest3-seq` (3-deep rotated nests, one loop per two blocks),
//! `random-reducible` (seed 0x5eed), `deep-nest` (one nest of `size / 2 - 1` loops) and
//! `exit-ladder` (a chain whose blocks all also branch to one exit: quadratic for a
//! dominator sweep that reads the exit's predecessors in layout order).
//! `GYRE_TIMING_REPS=N` fixes the repetitions (e.g. 1 under callgrind);
//! `GYRE_TIMING_FAMILY=name` runs one family only.

use gyre_analysis::cfggen::{self, CfgShape};
use gyre_analysis::{Cfg, DomTree, LoopInfo, PostDomTree};
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

fn row(name: &str, shape: &CfgShape) {
    let func = shape.to_function();
    let n = f64::from(shape.num_blocks);
    let reps = std::env::var("GYRE_TIMING_REPS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or_else(|| (20_000_000 / shape.num_blocks as usize).clamp(5, 2000));
    let mut cfg = Cfg::new();
    let t_cfg = min_ns(reps, || cfg.compute(&func).expect("valid"));
    let mut dt = DomTree::new();
    let t_dt = min_ns(reps, || dt.compute(&func, &cfg));
    let mut li = LoopInfo::new();
    let t_li = min_ns(reps, || li.compute(&func, &cfg, &dt));
    let mut pdt = PostDomTree::new();
    let t_pdt = min_ns(reps, || pdt.compute(&func, &cfg));
    println!(
        "{name:<18} {:>9} {:>8.1} {:>8.1} {:>8.1} {:>8.1}",
        shape.num_blocks,
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
        "{:<18} {:>9} {:>8} {:>8} {:>8} {:>8}",
        "graph", "blocks", "cfg", "domtree", "loops", "postdom"
    );
    for &n in &sizes {
        if want("nest3-seq") {
            row("nest3-seq", &cfggen::loop_nest_sequence(n));
        }
        if want("random-reducible") {
            row("random-reducible", &cfggen::random_reducible(n, 0x5eed));
        }
        if want("deep-nest") {
            row("deep-nest", &cfggen::deep_nest((n / 2).saturating_sub(1)));
        }
        if want("exit-ladder") {
            row("exit-ladder", &cfggen::exit_ladder(n));
        }
    }
}
