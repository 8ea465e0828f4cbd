//! The front and back of `gyre compile` on generated kernels of 1k, 10k and 100k blocks:
//! `.ll` import ([`gyre_llvm::import_module`]), `.gir` parse ([`gyre_ir::parse_module`])
//! and PTX emission ([`gyre_codegen_lite::compile_module_with`] with warm analysis
//! caches, so only the verifier and emission run; `verify` times the verifier alone,
//! and emission is the difference).
//!
//! Every input is the same module ([`gyre_benches::large_module`]) printed both ways,
//! so the two parsers read the same kernel. Throughput is in blocks: ns/block =
//! 1e9 / thrpt. Uniformity on the deep family is in `gyre-analysis`'s `uniformity`
//! bench (group `uniformity-deep`).
//!
//! Run: `cargo bench -p gyre-benches --bench import_emit`; sizes:
//! `GYRE_BENCH_SIZES=1000,10000` (default 1k, 10k, 100k); a quick run adds
//! `-- --warm-up-time 1 --measurement-time 3`.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use gyre_analysis::ModuleAnalyses;
use gyre_benches::{count_blocks, large_module};
use gyre_codegen_lite::{compile_module_with, CodegenOptions, Sm};
use gyre_llvm::{export_module, import_module, ExportOptions};
use std::hint::black_box;

fn sizes() -> Vec<usize> {
    std::env::var("GYRE_BENCH_SIZES")
        .ok()
        .map(|s| s.split(',').filter_map(|x| x.trim().parse().ok()).collect())
        .unwrap_or_else(|| vec![1_000, 10_000, 100_000])
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("front-back");
    for n in sizes() {
        let m = large_module(n);
        let blocks = count_blocks(&m) as u64;
        let gir = m.to_string();
        let ll = export_module(&m, &ExportOptions::default());
        // The imported module, not the generated one, is what `gyre compile x.ll` emits.
        let imported = import_module(&ll).expect("the exported kernel imports");
        let opts = CodegenOptions { sm: Sm::Sm90 };
        let mut analyses = ModuleAnalyses::new();
        let ptx = compile_module_with(&imported, &opts, &mut analyses).expect("compiles");
        eprintln!(
            "front-back/{n}: {blocks} blocks, .ll {} bytes, .gir {} bytes, {} PTX lines",
            ll.len(),
            gir.len(),
            ptx.lines().count()
        );
        g.throughput(Throughput::Elements(blocks));
        if n >= 50_000 {
            g.sample_size(10);
        }
        g.bench_function(BenchmarkId::new("import-ll", n), |b| {
            b.iter(|| import_module(black_box(&ll)).expect("imports"))
        });
        g.bench_function(BenchmarkId::new("parse-gir", n), |b| {
            b.iter(|| gyre_ir::parse_module(black_box(&gir)).expect("parses"))
        });
        // The caches hold every analysis emission reads, so this is verify + emit.
        g.bench_function(BenchmarkId::new("emit-warm", n), |b| {
            b.iter(|| {
                compile_module_with(black_box(&imported), &opts, &mut analyses).expect("compiles")
            })
        });
        g.bench_function(BenchmarkId::new("verify", n), |b| {
            b.iter(|| gyre_ir::verifier::verify_module(black_box(&imported)).expect("verifies"))
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
