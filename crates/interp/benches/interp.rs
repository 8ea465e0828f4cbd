//! Interpreter throughput: IR instructions per second on straight-line integer code
//! and on a loop nest, one core, race detection off (and on, for the loop nest).
//!
//! Criterion reports elements/s where one element is one executed IR instruction
//! (`Outcome::steps`), i.e. the figure is IR instructions per second.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use gyre_interp::{run_kernel, Arg, Launch, Memory};
use std::fmt::Write;

/// A kernel with one block of `n` dependent integer operations, storing the result.
fn straight_line(n: usize) -> String {
    let mut s = String::from(
        "kernel @k(ptr.global) {\nblock0(v0: ptr.global):\n    v1 = tid.x\n    v2 = iconst.i32 7\n",
    );
    let ops = ["iadd", "imul", "xor", "isub", "and", "or", "shl", "umax"];
    let mut last = 1;
    for i in 0..n {
        let v = 3 + i;
        let op = ops[i % ops.len()];
        if op == "shl" {
            // Keep the amount in range: shift by the constant 7.
            writeln!(s, "    v{v} = shl v{last}, v2").unwrap();
        } else {
            writeln!(
                s,
                "    v{v} = {op} v{last}, v{}",
                if i % 3 == 0 { 1 } else { 2 }
            )
            .unwrap();
        }
        last = v;
    }
    let t = 3 + n;
    writeln!(s, "    v{t} = sext.i64 v1\n    v{} = ptradd v0, v{t}, 4\n    store v{last}, v{}\n    return\n}}", t + 1, t + 1).unwrap();
    s
}

/// A three-deep loop nest accumulating `i*j + k` into a register.
const LOOP_NEST: &str = "
kernel @k(ptr.global, i32) {
block0(v0: ptr.global, v1: i32):
    v2 = iconst.i32 0
    v3 = iconst.i32 1
    jump block1(v2, v2)
block1(v10: i32, v11: i32):
    v12 = icmp slt v10, v1
    brif v12, block2(v2, v11), block7
block2(v20: i32, v21: i32):
    v22 = icmp slt v20, v1
    brif v22, block3(v2, v21), block6
block3(v30: i32, v31: i32):
    v32 = icmp slt v30, v1
    brif v32, block4, block5
block4:
    v40 = imul v10, v20
    v41 = iadd v40, v30
    v42 = xor v31, v41
    v43 = iadd v30, v3
    jump block3(v43, v42)
block5:
    v50 = iadd v20, v3
    jump block2(v50, v31)
block6:
    v60 = iadd v10, v3
    jump block1(v60, v21)
block7:
    v70 = tid.x
    v71 = sext.i64 v70
    v72 = ptradd v0, v71, 4
    store v11, v72
    return
}
";

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("interp");
    g.sample_size(10);

    let m = gyre_ir::parse_module(&straight_line(4000)).expect("benchmark kernel parses");
    let threads = 256;
    let mut l = Launch::linear(4, threads, vec![Arg::buffer("out")]);
    l.config.detect_races = false;
    let mut mem = Memory::new();
    mem.alloc_zeroed("out", threads as usize * 4);
    let steps = run_kernel(&m, "k", &l, &mut mem).expect("runs").steps;
    g.throughput(Throughput::Elements(steps));
    g.bench_function("straight_line_int", |b| {
        b.iter(|| run_kernel(&m, "k", &l, &mut mem).expect("runs"))
    });

    let m = gyre_ir::parse_module(LOOP_NEST).expect("benchmark kernel parses");
    for detect in [false, true] {
        let mut l = Launch::linear(2, 32, vec![Arg::buffer("out"), Arg::Int(40)]);
        l.config.detect_races = detect;
        let mut mem = Memory::new();
        mem.alloc_zeroed("out", 32 * 4);
        let steps = run_kernel(&m, "k", &l, &mut mem).expect("runs").steps;
        g.throughput(Throughput::Elements(steps));
        let name = if detect {
            "loop_nest_race_check"
        } else {
            "loop_nest"
        };
        g.bench_function(name, |b| {
            b.iter(|| run_kernel(&m, "k", &l, &mut mem).expect("runs"))
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
