//! Criterion benchmarks of `loop-simplify` and `lcssa` on generated UB-free kernels of
//! about 10k and 100k blocks (`gyre_ir::generate` with `target_blocks`). Throughput is in
//! blocks: ns/block = 1e9 / criterion's `thrpt` (elem/s).
//!
//! For each pass two figures: `cold` starts from an empty analysis cache (the pass pays
//! for the CFG, dominator tree and loop forest it needs, and for recomputing them after
//! it changes the CFG), `warm` starts with them cached (what LLVM's `-time-passes`
//! line for the pass itself measures; analyses are listed separately there). `lcssa` runs
//! on the output of `loop-simplify`, as in the standard pipeline.
//!
//! `GYRE_BENCH_SIZES=10000` picks sizes; `GYRE_BENCH_DUMP=DIR` writes the kernels as
//! `.gir` (input of each pass) for comparison with other compilers. A quick run:
//! `cargo bench -p gyre-transforms --bench loop_passes -- --warm-up-time 1 --measurement-time 3`.

use criterion::{criterion_group, criterion_main, BatchSize, BenchmarkId, Criterion, Throughput};
use gyre_ir::generate::{generate_kernel_module, GenOptions, SplitMix64};
use gyre_ir::{Function, InstructionData, Module, Type, ValueList};
use gyre_transforms::lcssa::Lcssa;
use gyre_transforms::loop_simplify::LoopSimplify;
use gyre_transforms::{Analyses, AnalysisCache, FunctionPass, Knobs, PassContext, Stats};
use std::hint::black_box;

fn sizes() -> Vec<usize> {
    std::env::var("GYRE_BENCH_SIZES")
        .ok()
        .map(|s| s.split(',').filter_map(|x| x.trim().parse().ok()).collect())
        .unwrap_or_else(|| vec![10_000, 100_000])
}

/// A generated kernel of at least `n` blocks (the module's last function).
fn kernel(n: usize) -> Module {
    let opts = GenOptions {
        target_blocks: Some(n),
        allow_calls: false,
        ..GenOptions::default()
    };
    generate_kernel_module(&opts, &mut SplitMix64::new(0x100b5 + n as u64)).0
}

fn run(pass: &mut dyn FunctionPass, func: &mut Function, cache: &mut AnalysisCache) {
    let knobs = Knobs::default();
    let (mut stats, mut remarks) = (Stats::default(), Vec::new());
    let mut cx = PassContext {
        knobs: &knobs,
        analyses: cache,
        stats: &mut stats,
        remarks: &mut remarks,
    };
    let res = pass
        .run(func, &mut cx)
        .expect("generated kernels are valid");
    cache.invalidate(res.preserved);
}

/// A clone's arenas are exactly full, so the first block, value, instruction or value
/// list a pass adds would copy each whole arena (megabytes at 100k blocks); a function built
/// incrementally has room to spare. Grow them in the (untimed) setup instead.
fn pregrow(mut f: Function) -> Function {
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
    f
}

fn dump(name: &str, m: &Module) {
    if let Ok(dir) = std::env::var("GYRE_BENCH_DUMP") {
        let mut s = String::new();
        gyre_ir::write_module(&mut s, m).expect("write to String");
        let path = std::path::Path::new(&dir).join(name);
        std::fs::write(&path, s).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    }
}

fn bench_size(c: &mut Criterion, n: usize) {
    let mut m = kernel(n);
    let id = m.functions.keys().next_back().expect("a kernel");
    let input = m.functions[id].clone();
    let blocks = input.layout.num_blocks() as u64;
    dump(&format!("loop-simplify-{n}.gir"), &m);
    // lcssa's input: the kernel after loop-simplify.
    let mut simplified = input.clone();
    run(
        &mut LoopSimplify::default(),
        &mut simplified,
        &mut AnalysisCache::new(),
    );
    m.functions[id] = simplified.clone();
    dump(&format!("lcssa-{n}.gir"), &m);

    let mut g = c.benchmark_group(format!("loop-passes-{n}"));
    g.throughput(Throughput::Elements(blocks));
    g.sample_size(if n >= 100_000 { 10 } else { 20 });
    let warm = |f: &Function| {
        let f = pregrow(f.clone());
        let mut cache = AnalysisCache::new();
        cache.ensure(&f, Analyses::LOOPS).expect("valid");
        (f, cache)
    };
    let mut ls = LoopSimplify::default();
    g.bench_function(BenchmarkId::new("loop-simplify/cold", blocks), |b| {
        b.iter_batched(
            || (pregrow(input.clone()), AnalysisCache::new()),
            |(mut f, mut cache)| {
                run(&mut ls, &mut f, &mut cache);
                black_box(f)
            },
            BatchSize::LargeInput,
        )
    });
    g.bench_function(BenchmarkId::new("loop-simplify/warm", blocks), |b| {
        b.iter_batched(
            || warm(&input),
            |(mut f, mut cache)| {
                run(&mut ls, &mut f, &mut cache);
                black_box(f)
            },
            BatchSize::LargeInput,
        )
    });
    let mut lcssa = Lcssa::default();
    g.bench_function(BenchmarkId::new("lcssa/cold", blocks), |b| {
        b.iter_batched(
            || (pregrow(simplified.clone()), AnalysisCache::new()),
            |(mut f, mut cache)| {
                run(&mut lcssa, &mut f, &mut cache);
                black_box(f)
            },
            BatchSize::LargeInput,
        )
    });
    g.bench_function(BenchmarkId::new("lcssa/warm", blocks), |b| {
        b.iter_batched(
            || warm(&simplified),
            |(mut f, mut cache)| {
                run(&mut lcssa, &mut f, &mut cache);
                black_box(f)
            },
            BatchSize::LargeInput,
        )
    });
    g.finish();
}

fn benches(c: &mut Criterion) {
    for n in sizes() {
        bench_size(c, n);
    }
}

criterion_group!(loop_passes, benches);
criterion_main!(loop_passes);
