//! Criterion benchmark of the uniformity analysis on generated UB-free kernels of about
//! 10k and 100k blocks (every generator feature on). Throughput is in blocks:
//! ns/block = 1e9 / thrpt. Only `Uniformity::compute` is timed; the CFG, trees and loops
//! are computed once outside the loop.
//!
//! The `uniformity-deep` group times the `deep` family at 1k, 10k and 100k blocks: one
//! `while` nest `n / 3` deep whose every level exits when its counter reaches `tid.x` (a
//! divergent exit at every level, so every loop is divergent), the case that was
//! blocks x depth before temporal divergence and divergent-control regions became linear.
//!
//! Sizes: `GYRE_BENCH_SIZES=10000` (default 10k and 100k; the deep group: 1k, 10k, 100k).
//! A quick run:
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

/// The `deep` family: one `while` nest `n / 3` deep, level `i` counting to `tid.x` and
/// exiting to the latch of level `i - 1` (the last level to the kernel's exit).
fn deep_nest_kernel(n: usize) -> String {
    use std::fmt::Write as _;
    let d = (n / 3).max(1);
    let mut s = String::from(
        "kernel @k(i32) {\nblock0(v0: i32):\n    v1 = iconst.i32 0\n    v2 = iconst.i32 1\n    v3 = tid.x\n    jump block1(v1)\n",
    );
    let exit = 3 * d + 1;
    for i in 0..d {
        let (h, pre, latch) = (3 * i + 1, 3 * i + 2, 3 * i + 3);
        let (x, c, y) = (4 + 3 * i, 5 + 3 * i, 6 + 3 * i);
        let out = if i == 0 { exit } else { 3 * i };
        let inner = if i + 1 < d { pre } else { latch };
        let _ = write!(
            s,
            "block{h}(v{x}: i32):\n    v{c} = icmp slt v{x}, v3\n    brif v{c}, block{inner}, block{out}\n"
        );
        if i + 1 < d {
            let _ = write!(s, "block{pre}:\n    jump block{}(v1)\n", h + 3);
        }
        let _ = write!(
            s,
            "block{latch}:\n    v{y} = iadd v{x}, v2\n    jump block{h}(v{y})\n"
        );
    }
    let _ = write!(s, "block{exit}:\n    return\n}}\n");
    s
}

fn bench_deep(c: &mut Criterion) {
    let mut g = c.benchmark_group("uniformity-deep");
    for n in [1_000, 10_000, 100_000] {
        let m = gyre_ir::parse_module(&deep_nest_kernel(n)).expect("the deep kernel parses");
        let f = m.functions.values().next().expect("one kernel");
        let blocks = f.layout.num_blocks() as u64;
        let cfg = Cfg::with_function(f).expect("the deep kernel is valid");
        let dt = DomTree::with_function(f, &cfg);
        let pdt = PostDomTree::with_function(f, &cfg);
        let li = LoopInfo::with_function(f, &cfg, &dt);
        let mut u = Uniformity::new();
        u.compute(f, &cfg, &dt, &pdt, &li);
        let div = li.loops().filter(|&l| u.is_loop_divergent(l)).count();
        eprintln!(
            "uniformity-deep/{n}: {blocks} blocks, {div} of {} loops divergent",
            li.num_loops()
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

criterion_group!(benches, bench, bench_deep);
criterion_main!(benches);
