//! Criterion benchmark of the uniformity analysis on generated UB-free kernels of about
//! 10k and 100k blocks (every generator feature on). Throughput is in blocks:
//! ns/block = 1e9 / thrpt. Only `Uniformity::compute` is timed; the CFG, trees and loops
//! are computed once outside the loop.
//!
//! Sizes: `GYRE_BENCH_SIZES=10000` (default 10k and 100k). A quick run:
//! `cargo bench -p gyre-analysis --bench uniformity -- --warm-up-time 1 --measurement-time 3`.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use gyre_analysis::{Cfg, DomTree, LoopInfo, PostDomTree, Uniformity};
use gyre_ir::generate::{generate_from_seed, GenOptions};
use std::hint::black_box;

fn sizes() -> Vec<usize> {
    std::env::var("GYRE_BENCH_SIZES")
        .ok()
        .map(|s| s.split(',').filter_map(|x| x.trim().parse().ok()).collect())
        .unwrap_or_else(|| vec![10_000, 100_000])
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("uniformity");
    for n in sizes() {
        let opts = GenOptions {
            target_blocks: Some(n),
            // GYRE_BENCH_NO_IRREDUCIBLE=1: no two-entry cycles (for comparison).
            allow_irreducible: std::env::var_os("GYRE_BENCH_NO_IRREDUCIBLE").is_none(),
            ..GenOptions::default()
        };
        let (m, contract) = generate_from_seed(&opts, 7);
        let f = &m.functions[contract.kernel];
        let blocks = f.layout.num_blocks() as u64;
        let cfg = Cfg::with_function(f).expect("generated kernels are valid");
        let dt = DomTree::with_function(f, &cfg);
        let pdt = PostDomTree::with_function(f, &cfg);
        let li = LoopInfo::with_function(f, &cfg, &dt);
        let mut u = Uniformity::new();
        u.compute(f, &cfg, &dt, &pdt, &li);
        eprintln!(
            "uniformity/{n}: {blocks} blocks, {} values, {} divergent",
            f.dfg.num_values(),
            u.num_divergent()
        );
        g.throughput(Throughput::Elements(blocks));
        if blocks >= 50_000 {
            g.sample_size(10);
        }
        g.bench_function(BenchmarkId::new("compute", blocks), |b| {
            b.iter(|| {
                u.compute(
                    black_box(f),
                    black_box(&cfg),
                    black_box(&dt),
                    black_box(&pdt),
                    black_box(&li),
                )
            })
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
