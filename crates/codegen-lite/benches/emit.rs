//! Criterion benchmark of PTX emission on generated kernels of 1k, 10k and 100k blocks.
//!
//! `compile` is the whole of [`compile_module`] (verifier, CFG/dominator/loop analyses,
//! uniformity and NaN analyses, block order, emission) and `verify-only` the verifier's
//! share of it. `emit-warm` is what `gyre compile` pays after loading or after a
//! pipeline: [`compile_verified_module`] with the analysis caches already filled (by a
//! first run outside the timing), so no verifier and no analysis, only the block order,
//! the per-function scans and the text. `compile-nomem` is `compile` on a kernel
//! generated without memory and calls, and `compile-nomem-no-tid` on the same kernel
//! with every `tid`/`laneid` read made `ctaid.x`: no source of divergence is left, so
//! no uniformity analysis (`uniform::needs_analysis`), as on the perf report's `nest`,
//! `deep` and `exit-ladder` families. Throughput is in blocks, so ns/block is
//! 1e9 / thrpt. Sizes: `GYRE_BENCH_SIZES=1000,10000,100000` (the default).
//! A quick run: `cargo bench -p gyre-codegen-lite -- --warm-up-time 1 --measurement-time 5`.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use gyre_analysis::manager::ModuleAnalyses;
use gyre_codegen_lite::{
    compile_module, compile_verified_module, CodegenFlags, CodegenOptions, Sm,
};
use gyre_ir::generate::{generate_from_seed, GenOptions};
use gyre_ir::{InstructionData, SpecialReg};
use std::hint::black_box;

fn sizes() -> Vec<usize> {
    std::env::var("GYRE_BENCH_SIZES")
        .ok()
        .map(|s| s.split(',').filter_map(|x| x.trim().parse().ok()).collect())
        .unwrap_or_else(|| vec![1_000, 10_000, 100_000])
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
        // Emission alone, as `gyre compile` runs it: caches filled once outside the timing
        // (nothing invalidates them: the module does not change).
        let flags = CodegenFlags::default();
        let mut analyses = ModuleAnalyses::new();
        let warm = compile_verified_module(&m, &opts, &flags, &mut analyses).expect("compiles");
        assert_eq!(warm, ptx, "warm caches give the same PTX");
        g.bench_function(BenchmarkId::new("emit-warm", n), |b| {
            b.iter(|| {
                compile_verified_module(black_box(&m), &opts, &flags, &mut analyses)
                    .expect("compiles")
            })
        });
        // A kernel without memory and calls, with and without sources of divergence
        // (without: every branch uniform, no analysis).
        let nomem = GenOptions {
            target_blocks: Some(n),
            allow_irreducible: false,
            allow_memory: false,
            allow_calls: false,
            ..GenOptions::default()
        };
        let (divergent, _) = generate_from_seed(&nomem, 7);
        let mut uniform = divergent.clone();
        for f in uniform.functions.values_mut() {
            let insts: Vec<_> = f
                .layout
                .blocks()
                .flat_map(|b| f.layout.block_insts(b))
                .collect();
            for i in insts {
                if let InstructionData::Sreg { reg } = f.dfg.inst_mut(i) {
                    if matches!(
                        reg,
                        SpecialReg::TidX | SpecialReg::TidY | SpecialReg::TidZ | SpecialReg::LaneId
                    ) {
                        *reg = SpecialReg::CtaidX;
                    }
                }
            }
        }
        let needs = uniform
            .functions
            .values()
            .filter(|f| gyre_codegen_lite::uniform::needs_analysis(f))
            .count();
        assert_eq!(needs, 0, "no source of divergence is left");
        g.bench_function(BenchmarkId::new("compile-nomem", n), |b| {
            b.iter(|| compile_module(black_box(&divergent), &opts).expect("compiles"))
        });
        g.bench_function(BenchmarkId::new("compile-nomem-no-tid", n), |b| {
            b.iter(|| compile_module(black_box(&uniform), &opts).expect("compiles"))
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
