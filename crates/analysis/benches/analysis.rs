//! Criterion benchmarks of the CFG, dominator tree, post-dominator tree and loop analysis
//! on generated CFGs. Throughput is in blocks, so criterion's `thrpt` (elem/s) gives
//! ns/block as 1e9 / thrpt.
//!
//! Sizes: `GYRE_BENCH_SIZES=1000,10000` (default 1k, 10k, 100k, 1M). A quick run:
//! `cargo bench -p gyre-analysis -- --warm-up-time 1 --measurement-time 3`.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use gyre_analysis::cfggen::{self, CfgShape};
use gyre_analysis::{Cfg, DomTree, LoopInfo, PostDomTree};
use std::hint::black_box;

fn sizes() -> Vec<u32> {
    std::env::var("GYRE_BENCH_SIZES")
        .ok()
        .map(|s| s.split(',').filter_map(|x| x.trim().parse().ok()).collect())
        .unwrap_or_else(|| vec![1_000, 10_000, 100_000, 1_000_000])
}

fn bench_shape(c: &mut Criterion, family: &str, shape: &CfgShape) {
    let func = shape.to_function();
    let n = u64::from(shape.num_blocks);
    let cfg = Cfg::with_function(&func).expect("generated CFGs are valid");
    let dt = DomTree::with_function(&func, &cfg);
    let mut g = c.benchmark_group(family);
    g.throughput(Throughput::Elements(n));
    if n >= 100_000 {
        g.sample_size(10);
    }
    let mut cfg2 = Cfg::new();
    g.bench_function(BenchmarkId::new("cfg", n), |b| {
        b.iter(|| cfg2.compute(black_box(&func)).expect("valid"))
    });
    let mut dt2 = DomTree::new();
    g.bench_function(BenchmarkId::new("domtree", n), |b| {
        b.iter(|| dt2.compute(black_box(&func), black_box(&cfg)))
    });
    let mut li = LoopInfo::new();
    g.bench_function(BenchmarkId::new("loopinfo", n), |b| {
        b.iter(|| li.compute(black_box(&func), black_box(&cfg), black_box(&dt)))
    });
    g.bench_function(BenchmarkId::new("domtree+loopinfo", n), |b| {
        b.iter(|| {
            dt2.compute(black_box(&func), black_box(&cfg));
            li.compute(black_box(&func), black_box(&cfg), &dt2)
        })
    });
    let mut pdt = PostDomTree::new();
    g.bench_function(BenchmarkId::new("postdomtree", n), |b| {
        b.iter(|| pdt.compute(black_box(&func), black_box(&cfg)))
    });
    g.finish();
}

fn benches(c: &mut Criterion) {
    for n in sizes() {
        bench_shape(c, "nest3-seq", &cfggen::loop_nest_sequence(n));
        bench_shape(c, "random-reducible", &cfggen::random_reducible(n, 0x5eed));
        bench_shape(c, "exit-ladder", &cfggen::exit_ladder(n));
    }
    bench_shape(c, "deep-nest-10000", &cfggen::deep_nest(10_000));
}

criterion_group!(analysis, benches);
criterion_main!(analysis);
