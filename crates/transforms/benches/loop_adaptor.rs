//! The loop adaptor's overhead: a function with 30,000 loops (10,000 nests of depth 3)
//! through `loop(a,b,c)` of passes that change nothing, against one function-level
//! computation of what the adaptor needs (CFG, dominator tree, loop forest).
//!
//! The first two start from an empty analysis cache, so the pipeline's figure includes its
//! one computation of the loop forest; the third starts with the analyses cached and
//! measures the adaptor alone (three pass invocations and the bookkeeping of a stable
//! loop handle per loop).
//! `cargo bench -p gyre-transforms --bench loop_adaptor -- --warm-up-time 1 --measurement-time 3`

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use gyre_ir::{Block, Function, Module};
use gyre_transforms::{
    Analyses, AnalysisCache, Knobs, LoopPass, LoopUpdater, ModuleAnalyses, Options, PassContext,
    PassError, PassManager, PassResult,
};
use std::fmt::Write as _;
use std::hint::black_box;

/// `nests` loop nests of depth 3 in sequence; every loop counts to the parameter.
fn nests(nests: usize) -> Module {
    let mut s = String::from("kernel @k(i32) {\nblock0(v0: i32):\n    v1 = iconst.i32 0\n    v2 = iconst.i32 1\n    jump block1\n");
    let (mut b, mut v) = (1usize, 3usize);
    for _ in 0..nests {
        // pre -> h1 -> h2 -> h3 (self loop) -> l2 -> l1 -> next
        let (pre, h1, h2, h3, l2, l1, next) = (b, b + 1, b + 2, b + 3, b + 4, b + 5, b + 6);
        let (i1, i2, i3) = (v, v + 1, v + 2);
        let _ = write!(
            s,
            "block{pre}:\n    jump block{h1}(v1)\n\
             block{h1}(v{i1}: i32):\n    jump block{h2}(v1)\n\
             block{h2}(v{i2}: i32):\n    jump block{h3}(v1)\n\
             block{h3}(v{i3}: i32):\n    v{a} = iadd v{i3}, v2\n    v{c} = icmp slt v{a}, v0\n    brif v{c}, block{h3}(v{a}), block{l2}\n\
             block{l2}:\n    v{d} = iadd v{i2}, v2\n    v{e} = icmp slt v{d}, v0\n    brif v{e}, block{h2}(v{d}), block{l1}\n\
             block{l1}:\n    v{f} = iadd v{i1}, v2\n    v{g} = icmp slt v{f}, v0\n    brif v{g}, block{h1}(v{f}), block{next}\n",
            a = v + 3,
            c = v + 4,
            d = v + 5,
            e = v + 6,
            f = v + 7,
            g = v + 8,
        );
        b += 6;
        v += 9;
    }
    let _ = writeln!(s, "block{b}:\n    return\n}}");
    gyre_ir::parse_module(&s).expect("generated module parses")
}

struct NoOp(&'static str);

impl LoopPass for NoOp {
    fn name(&self) -> &'static str {
        self.0
    }
    fn run_on_loop(
        &mut self,
        _: &mut Function,
        header: Block,
        cx: &mut PassContext<'_>,
        _: &mut LoopUpdater,
    ) -> Result<PassResult, PassError> {
        black_box(cx.analyses.loops.innermost_loop(header));
        Ok(PassResult::UNCHANGED)
    }
}

fn bench(c: &mut Criterion) {
    let m = nests(10_000);
    let f = m.functions.values().next().expect("k");
    let blocks = f.layout.num_blocks() as u64;
    {
        let mut cache = AnalysisCache::new();
        cache.ensure(f, Analyses::LOOPS).expect("valid");
        assert_eq!(cache.loops.num_loops(), 30_000);
    }
    let mut g = c.benchmark_group("loop-adaptor-30000-loops");
    g.throughput(Throughput::Elements(blocks));
    g.sample_size(20);
    // Same setup as the pipeline's (a fresh copy of the module), so that both run on
    // memory in the same state.
    g.bench_function("cfg+domtree+loops", |bch| {
        bch.iter_batched(
            || (m.clone(), AnalysisCache::new()),
            |(m, mut cache)| {
                let f = m.functions.values().next().expect("k");
                cache.ensure(f, Analyses::LOOPS).expect("valid");
                black_box((m, cache))
            },
            BatchSize::LargeInput,
        )
    });
    let mut pm = PassManager::new(Knobs::default(), Options::default());
    pm.add_loop_passes(vec![
        Box::new(NoOp("a")),
        Box::new(NoOp("b")),
        Box::new(NoOp("c")),
    ]);
    g.bench_function("loop(a,b,c) no-op", |bch| {
        bch.iter_batched(
            || (m.clone(), ModuleAnalyses::new()),
            |(mut m, mut an)| {
                let r = pm.run_module_with(&mut m, &mut an).expect("runs");
                black_box((m, an, r))
            },
            BatchSize::LargeInput,
        )
    });
    // The same with the analyses already cached: the adaptor's own cost.
    g.bench_function("loop(a,b,c) no-op, analyses cached", |bch| {
        bch.iter_batched(
            || {
                let m = m.clone();
                let mut an = ModuleAnalyses::new();
                for (id, f) in m.functions.iter() {
                    an.get_mut(id).ensure(f, Analyses::LOOPS).expect("valid");
                }
                (m, an)
            },
            |(mut m, mut an)| {
                let r = pm.run_module_with(&mut m, &mut an).expect("runs");
                black_box((m, an, r))
            },
            BatchSize::LargeInput,
        )
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
