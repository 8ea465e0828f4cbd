//! Criterion benchmark of `simplify` on generated UB-free kernels of about 10k and 100k
//! blocks (`gyre_ir::generate` with `target_blocks`), after `loop-simplify` (so that loops
//! have preheaders, as in `-O`). Throughput is in instructions of the input: ns per
//! instruction = 1e9 / criterion's `thrpt` (elem/s). `warm` starts with the CFG, dominator
//! tree and loop forest cached (what the pass itself costs), `cold` with an empty cache.
//!
//! `GYRE_BENCH_SIZES=10000` picks sizes. A quick run:
//! `cargo bench -p gyre-transforms --bench simplify -- --warm-up-time 1 --measurement-time 3`.

use criterion::{criterion_group, criterion_main, BatchSize, BenchmarkId, Criterion, Throughput};
use gyre_ir::generate::{generate_kernel_module, GenOptions, SplitMix64};
use gyre_ir::{Function, InstructionData, Type, ValueList};
use gyre_transforms::loop_simplify::LoopSimplify;
use gyre_transforms::simplify::Simplify;
use gyre_transforms::{Analyses, AnalysisCache, FunctionPass, Knobs, PassContext, Stats};
use std::hint::black_box;

fn sizes() -> Vec<usize> {
    std::env::var("GYRE_BENCH_SIZES")
        .ok()
        .map(|s| s.split(',').filter_map(|x| x.trim().parse().ok()).collect())
        .unwrap_or_else(|| vec![10_000, 100_000])
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

/// Give a clone's arenas room (see benches/loop_passes.rs): the first instruction a pass
/// adds would otherwise copy a whole arena inside the timed part.
fn pregrow(mut f: Function) -> Function {
    let b = f.dfg.make_block();
    let v = f.dfg.append_block_param(b, Type::I32);
    let mut list = ValueList::new();
    list.push(v, &mut f.dfg.value_lists);
    list.clear(&mut f.dfg.value_lists);
    f.layout.append_block(b);
    let (i, _) = f.append_inst(b, InstructionData::IntConst { imm: 0 }, Some(Type::I32));
    f.layout.remove_inst(i);
    f.layout.remove_block(b);
    f
}

fn bench_size(c: &mut Criterion, n: usize) {
    let opts = GenOptions {
        target_blocks: Some(n),
        allow_calls: false,
        ..GenOptions::default()
    };
    let m = generate_kernel_module(&opts, &mut SplitMix64::new(0x100b5 + n as u64)).0;
    let id = m.functions.keys().next_back().expect("a kernel");
    let mut input = m.functions[id].clone();
    run(
        &mut LoopSimplify::default(),
        &mut input,
        &mut AnalysisCache::new(),
    );
    let insts = input.num_laid_out_insts() as u64;
    let blocks = input.layout.num_blocks();
    let mut g = c.benchmark_group(format!("simplify-{n}"));
    g.throughput(Throughput::Elements(insts));
    g.sample_size(10);
    let mut pass = Simplify::default();
    let label = format!("{blocks}blocks-{insts}insts");
    g.bench_function(BenchmarkId::new("warm", &label), |b| {
        b.iter_batched(
            || {
                let f = pregrow(input.clone());
                let mut cache = AnalysisCache::new();
                cache.ensure(&f, Analyses::LOOPS).expect("valid");
                (f, cache)
            },
            |(mut f, mut cache)| {
                run(&mut pass, &mut f, &mut cache);
                black_box(f)
            },
            BatchSize::LargeInput,
        )
    });
    g.bench_function(BenchmarkId::new("cold", &label), |b| {
        b.iter_batched(
            || (pregrow(input.clone()), AnalysisCache::new()),
            |(mut f, mut cache)| {
                run(&mut pass, &mut f, &mut cache);
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

criterion_group!(simplify, benches);
criterion_main!(simplify);
