//! Criterion benchmark of PTX emission on generated kernels of 10k and 100k blocks.
//!
//! `compile` is the whole of [`compile_module`] (verifier, CFG/dominator/loop analyses,
//! uniformity and NaN analyses, block order, emission) and `verify-only` the verifier's
//! share of it; throughput is in blocks, so
//! ns/block is 1e9 / thrpt. Sizes: `GYRE_BENCH_SIZES=10000,100000` (the default).
//! A quick run: `cargo bench -p gyre-codegen-lite -- --warm-up-time 1 --measurement-time 5`.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use gyre_codegen_lite::{compile_module, CodegenOptions, Sm};
use gyre_ir::generate::{generate_from_seed, GenOptions};
use std::hint::black_box;

fn sizes() -> Vec<usize> {
    std::env::var("GYRE_BENCH_SIZES")
        .ok()
        .map(|s| s.split(',').filter_map(|x| x.trim().parse().ok()).collect())
        .unwrap_or_else(|| vec![10_000, 100_000])
}

fn benches(c: &mut Criterion) {
    let mut g = c.benchmark_group("emit");
    for n in sizes() {
        let opts = GenOptions {
            target_blocks: Some(n),
            allow_irreducible: false,
            ..GenOptions::default()
        };
        let (m, contract) = generate_from_seed(&opts, 7);
        let blocks: usize = m.functions.values().map(|f| f.layout.num_blocks()).sum();
        let kernel_blocks = m.functions[contract.kernel].layout.num_blocks();
        let opts = CodegenOptions { sm: Sm::Sm90 };
        let ptx = compile_module(&m, &opts).expect("generated kernels compile");
        eprintln!(
            "emit/{n}: {blocks} blocks ({kernel_blocks} in the kernel), {} PTX lines",
            ptx.lines().count()
        );
        g.throughput(Throughput::Elements(blocks as u64));
        g.sample_size(10);
        g.bench_function(BenchmarkId::new("compile", n), |b| {
            b.iter(|| compile_module(black_box(&m), &opts).expect("compiles"))
        });
        // The verifier's share of `compile`, for comparison.
        g.bench_function(BenchmarkId::new("verify-only", n), |b| {
            b.iter(|| gyre_ir::verifier::verify_module(black_box(&m)).expect("verifies"))
        });
    }
    g.finish();
}

criterion_group!(emit, benches);
criterion_main!(emit);
