//! Criterion benchmarks of the CFG, dominator tree, post-dominator tree and loop analysis
//! on generated CFGs. Throughput is in blocks, so criterion's `thrpt` (elem/s) gives
//! ns/block as 1e9 / thrpt. `random-reducible` iterates over
//! `cfggen::distinct_functions(n)` distinct functions per iteration (16 at 1k blocks, 10 at
//! 10k, one from 100k on; throughput = their total blocks): one small function repeated
//! stays in the caches and lets the branch predictor learn its random branches. The
//! deterministic families are one function each.
//!
//! Sizes: `GYRE_BENCH_SIZES=1000,10000` (default 1k, 10k, 100k, 1M). A quick run:
//! `cargo bench -p gyre-analysis -- --warm-up-time 1 --measurement-time 3`.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use gyre_analysis::cfggen::{self, CfgShape};
use gyre_analysis::{Cfg, DomTree, LoopInfo, PostDomTree};
use gyre_ir::Function;
use std::hint::black_box;

fn sizes() -> Vec<u32> {
    std::env::var("GYRE_BENCH_SIZES")
        .ok()
        .map(|s| s.split(',').filter_map(|x| x.trim().parse().ok()).collect())
        .unwrap_or_else(|| vec![1_000, 10_000, 100_000, 1_000_000])
}

/// Benchmark the analyses on `shapes`: every iteration runs one analysis over all of them,
/// each function with its own analysis objects (warm buffers), and the throughput is their
/// total blocks. Random families pass `cfggen::distinct_functions` shapes so the branch
/// predictor and caches cannot hold one small function; deterministic ones pass one.
fn bench_shapes(c: &mut Criterion, family: &str, shapes: &[CfgShape]) {
    let funcs: Vec<Function> = shapes.iter().map(CfgShape::to_function).collect();
    let n = u64::from(shapes[0].num_blocks);
    let total: u64 = shapes.iter().map(|s| u64::from(s.num_blocks)).sum();
    let cfgs: Vec<Cfg> = funcs
        .iter()
        .map(|f| Cfg::with_function(f).expect("generated CFGs are valid"))
        .collect();
    let dts: Vec<DomTree> = funcs
        .iter()
        .zip(&cfgs)
        .map(|(f, cfg)| DomTree::with_function(f, cfg))
        .collect();
    let mut g = c.benchmark_group(family);
    g.throughput(Throughput::Elements(total));
    if n >= 100_000 {
        g.sample_size(10);
    }
    let mut cfg2: Vec<Cfg> = funcs.iter().map(|_| Cfg::new()).collect();
    g.bench_function(BenchmarkId::new("cfg", n), |b| {
        b.iter(|| {
            for (f, cfg) in funcs.iter().zip(&mut cfg2) {
                cfg.compute(black_box(f)).expect("valid");
            }
        })
    });
    let mut dt2: Vec<DomTree> = funcs.iter().map(|_| DomTree::new()).collect();
    g.bench_function(BenchmarkId::new("domtree", n), |b| {
        b.iter(|| {
            for ((f, cfg), dt) in funcs.iter().zip(&cfgs).zip(&mut dt2) {
                dt.compute(black_box(f), black_box(cfg));
            }
        })
    });
    let mut li: Vec<LoopInfo> = funcs.iter().map(|_| LoopInfo::new()).collect();
    g.bench_function(BenchmarkId::new("loopinfo", n), |b| {
        b.iter(|| {
            for (((f, cfg), dt), li) in funcs.iter().zip(&cfgs).zip(&dts).zip(&mut li) {
                li.compute(black_box(f), black_box(cfg), black_box(dt));
            }
        })
    });
    g.bench_function(BenchmarkId::new("domtree+loopinfo", n), |b| {
        b.iter(|| {
            for (((f, cfg), dt), li) in funcs.iter().zip(&cfgs).zip(&mut dt2).zip(&mut li) {
                dt.compute(black_box(f), black_box(cfg));
                li.compute(black_box(f), black_box(cfg), dt);
            }
        })
    });
    let mut pdt: Vec<PostDomTree> = funcs.iter().map(|_| PostDomTree::new()).collect();
    g.bench_function(BenchmarkId::new("postdomtree", n), |b| {
        b.iter(|| {
            for ((f, cfg), pdt) in funcs.iter().zip(&cfgs).zip(&mut pdt) {
                pdt.compute(black_box(f), black_box(cfg));
            }
        })
    });
    g.finish();
}

fn benches(c: &mut Criterion) {
    for n in sizes() {
        bench_shapes(c, "nest3-seq", &[cfggen::loop_nest_sequence(n)]);
        bench_shapes(
            c,
            "random-reducible",
            &cfggen::random_reducible_set(n, 0x5eed),
        );
        bench_shapes(c, "exit-ladder", &[cfggen::exit_ladder(n)]);
        // The dominator tree's semi-NCA fallback (CHK would be quadratic here).
        bench_shapes(
            c,
            "exit-ladder-backwards",
            &[cfggen::exit_ladder_backwards(n)],
        );
    }
    bench_shapes(c, "deep-nest-10000", &[cfggen::deep_nest(10_000)]);
}

criterion_group!(analysis, benches);
criterion_main!(analysis);
