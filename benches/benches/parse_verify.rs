//! Parse + verify of a generated ~100,000-block kernel (the IR core's throughput).
//!
//! Run: `cargo bench -p gyre-benches --bench parse_verify`. Criterion reports time per
//! iteration and, through `Throughput::Elements`, instructions per second; divide to get
//! ns per instruction.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use gyre_benches::{count_blocks, count_insts, large_module};
use std::hint::black_box;

fn parse_verify(c: &mut Criterion) {
    let module = large_module(100_000);
    let text = module.to_string();
    let insts = count_insts(&module);
    eprintln!(
        "parse_verify input: {} blocks, {insts} instructions, {} bytes",
        count_blocks(&module),
        text.len()
    );
    let mut g = c.benchmark_group("ir");
    g.sample_size(10);
    g.throughput(Throughput::Elements(insts as u64));
    g.bench_function("parse_100k_blocks", |b| {
        b.iter(|| black_box(gyre_ir::parse_module(black_box(&text)).expect("parses")))
    });
    let parsed = gyre_ir::parse_module(&text).expect("parses");
    g.bench_function("verify_100k_blocks", |b| {
        b.iter(|| gyre_ir::verifier::verify_module(black_box(&parsed)).expect("verifies"))
    });
    g.bench_function("parse_and_verify_100k_blocks", |b| {
        b.iter(|| {
            let m = gyre_ir::parse_module(black_box(&text)).expect("parses");
            gyre_ir::verifier::verify_module(&m).expect("verifies");
            black_box(m)
        })
    });
    g.finish();
}

criterion_group!(benches, parse_verify);
criterion_main!(benches);
