//! End-to-end tests: hand-written PTX kernels checked against plain Rust.

mod common;

use common::*;
use gyre_ptx_sim::{
    parse, run_kernel, run_kernel_profiled, run_kernel_with_options, Launch, Memory, ParamValue,
    Profile, RunOptions, SimErrorKind, Space,
};

#[test]
fn saxpy() {
    let m = parse(SAXPY).unwrap();
    assert_eq!(m.kernels(), vec!["saxpy"]);
    let n = 1000usize;
    let x: Vec<f32> = (0..n).map(|i| i as f32 * 0.37 - 11.0).collect();
    let y: Vec<f32> = (0..n).map(|i| (i as f32).sin()).collect();
    let a = 2.5f32;
    let mut mem = Memory::new();
    let px = mem.alloc_f32s(&x);
    let py = mem.alloc_f32s(&y);
    let stats = run_kernel(
        &m,
        "saxpy",
        &Launch::linear(n.div_ceil(128) as u32, 128),
        &[
            ParamValue::U32(n as u32),
            ParamValue::F32(a),
            ParamValue::U64(px),
            ParamValue::U64(py),
        ],
        &mut mem,
    )
    .unwrap();
    let got = mem.read_f32s(py, n).unwrap();
    for i in 0..n {
        assert_eq!(
            got[i].to_bits(),
            x[i].mul_add(a, y[i]).to_bits(),
            "index {i}"
        );
    }
    assert_eq!(stats.threads, 1024);
    assert_eq!(stats.ctas, 8);
    // x is untouched.
    assert_eq!(mem.read_f32s(px, n).unwrap(), x);
}

#[test]
fn sum_loop() {
    let m = parse(SUM_LOOP).unwrap();
    let data: Vec<i32> = (0..777).map(|i| (i * 7919 % 2001) - 1000).collect();
    let mut mem = Memory::new();
    let pa = mem.alloc_i32s(&data);
    let out = mem.alloc(8, 8);
    run_kernel(
        &m,
        "sum_array",
        &Launch::linear(1, 1),
        &[
            ParamValue::U64(pa),
            ParamValue::I32(data.len() as i32),
            ParamValue::U64(out),
        ],
        &mut mem,
    )
    .unwrap();
    let expect: i64 = data.iter().map(|&v| v as i64).sum();
    assert_eq!(mem.read_i64s(out, 1).unwrap()[0], expect);
    // n = 0 takes the early branch.
    run_kernel(
        &m,
        "sum_array",
        &Launch::linear(1, 1),
        &[
            ParamValue::U64(pa),
            ParamValue::I32(0),
            ParamValue::U64(out),
        ],
        &mut mem,
    )
    .unwrap();
    assert_eq!(mem.read_i64s(out, 1).unwrap()[0], 0);
}

/// The profile of the sum loop: every instruction's executions, by line and by opcode
/// class, adding up to the launch's dynamic count (and accumulating over two launches).
#[test]
fn profile_counts_each_instruction() {
    let m = parse(SUM_LOOP).unwrap();
    let n = 777usize;
    let data: Vec<i32> = (0..n as i32).collect();
    let mut mem = Memory::new();
    let pa = mem.alloc_i32s(&data);
    let out = mem.alloc(8, 8);
    let params = [
        ParamValue::U64(pa),
        ParamValue::I32(n as i32),
        ParamValue::U64(out),
    ];
    let mut prof = Profile::default();
    let opts = RunOptions::default();
    let launch = Launch::linear(1, 1);
    let stats = run_kernel_profiled(
        &m,
        "sum_array",
        &launch,
        &params,
        &mut mem,
        &opts,
        &mut prof,
    )
    .unwrap();
    // 8 instructions before the loop, 8 per iteration, 3 after it.
    assert_eq!(stats.instructions, 8 + 8 * n as u64 + 3);
    let lines = prof.by_line(&m);
    assert_eq!(
        lines.iter().map(|&(_, c)| c).sum::<u64>(),
        stats.instructions
    );
    // The loop's first instruction, `mul.wide.s32` (line 26 of the text: it starts
    // with a newline), runs once per element.
    assert!(SUM_LOOP.lines().nth(25).unwrap().contains("mul.wide.s32"));
    assert!(lines.contains(&(26, n as u64)));
    let ops = prof.by_opcode(&m, SUM_LOOP);
    let get = |k: &str| ops.iter().find(|(o, _)| o == k).map(|&(_, c)| c);
    assert_eq!(ops[0], ("add".to_string(), 3 * n as u64));
    assert_eq!(get("ld.global"), Some(n as u64));
    assert_eq!(get("ld.param"), Some(3));
    // Guarded branches count whether taken or not.
    assert_eq!(get("bra"), Some(n as u64 + 1));
    assert_eq!(get("setp"), Some(n as u64 + 1));
    assert_eq!(get("st.global"), Some(1));
    assert_eq!(get("ret"), Some(1));
    // A second launch adds to the same profile.
    run_kernel_profiled(
        &m,
        "sum_array",
        &launch,
        &params,
        &mut mem,
        &opts,
        &mut prof,
    )
    .unwrap();
    let again = prof.by_opcode(&m, SUM_LOOP);
    assert_eq!(again[0], ("add".to_string(), 6 * n as u64));
}

#[test]
fn shared_block_reduction() {
    let m = parse(REDUCE).unwrap();
    let blocks = 5usize;
    let bs = 256usize;
    let data: Vec<f32> = (0..blocks * bs).map(|i| ((i * 31) % 97) as f32).collect();
    let mut mem = Memory::new();
    let pin = mem.alloc_f32s(&data);
    let pout = mem.alloc_f32s(&vec![0.0; blocks]);
    let stats = run_kernel(
        &m,
        "block_reduce",
        &Launch::linear(blocks as u32, bs as u32),
        &[ParamValue::U64(pin), ParamValue::U64(pout)],
        &mut mem,
    )
    .unwrap();
    let got = mem.read_f32s(pout, blocks).unwrap();
    for b in 0..blocks {
        // Same tree order as the kernel.
        let mut s: Vec<f32> = data[b * bs..(b + 1) * bs].to_vec();
        let mut half = bs / 2;
        while half > 0 {
            for t in 0..half {
                s[t] += s[t + half];
            }
            half /= 2;
        }
        assert_eq!(got[b], s[0], "block {b}");
    }
    // 1 initial barrier + 8 loop iterations per block.
    assert_eq!(stats.barriers, blocks as u64 * 9);
}

#[test]
fn device_function_calls() {
    let m = parse(CALLS).unwrap();
    let n = 20usize;
    let mut mem = Memory::new();
    let o1 = mem.alloc_u32s(&vec![0; n]);
    let o2 = mem.alloc_u64s(&vec![0; n]);
    let o3 = mem.alloc_u32s(&vec![0; n]);
    run_kernel(
        &m,
        "calls",
        &Launch::linear(1, n as u32),
        &[
            ParamValue::U64(o1),
            ParamValue::U64(o2),
            ParamValue::U64(o3),
        ],
        &mut mem,
    )
    .unwrap();
    let r1 = mem.read_u32s(o1, n).unwrap();
    let r2 = mem.read_u64s(o2, n).unwrap();
    let r3 = mem.read_u32s(o3, n).unwrap();
    for t in 0..n as u64 {
        assert_eq!(r1[t as usize] as u64, t * t + 7);
        assert_eq!(r2[t as usize], (1..=t.max(1)).product::<u64>(), "fact({t})");
        assert_eq!(r3[t as usize] as u64, 28 + 8 * t);
    }
}

fn run_atomics(grid: u32, block: u32) -> (Vec<u32>, Vec<u32>) {
    let m = parse(ATOMICS).unwrap();
    let mut mem = Memory::new();
    let out = mem.alloc_u32s(&[0, 0, 0x8000_0000, 0x7fff_ffff, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0]);
    let per = mem.alloc_u32s(&vec![0; 2 * grid as usize]);
    run_kernel(
        &m,
        "atomics",
        &Launch::linear(grid, block),
        &[ParamValue::U64(out), ParamValue::U64(per)],
        &mut mem,
    )
    .unwrap();
    (
        mem.read_u32s(out, 14).unwrap(),
        mem.read_u32s(per, 2 * grid as usize).unwrap(),
    )
}

#[test]
fn atomics_global_and_shared() {
    let (grid, block) = (3u32, 64u32);
    let total = grid * block;
    let (out, per) = run_atomics(grid, block);
    assert_eq!(out[0], total);
    assert_eq!(out[1], grid * (0..block).sum::<u32>());
    assert_eq!(out[2] as i32, total as i32 - 1 - 40);
    assert_eq!(out[3] as i32, -40);
    // inc wraps to 0 after reaching 9: counts modulo 10.
    assert_eq!(out[4], total % 10);
    let fsum: f32 = (0..grid)
        .flat_map(|_| 0..block)
        .fold(0.0f32, |acc, t| acc + t as f32);
    assert_eq!(f32::from_bits(out[5]), fsum);
    let mut x = 1u32;
    for _ in 0..total {
        x = x.wrapping_mul(3).wrapping_add(1);
    }
    assert_eq!(out[6], x);
    let s64 = out[8] as u64 | (out[9] as u64) << 32;
    assert_eq!(s64, (0..total as u64).sum::<u64>());
    assert_eq!(out[10], u32::MAX);
    // Threads run in order, so the last thread's exchange wins.
    assert_eq!(out[11], total - 1);
    assert_eq!(out[12], 2 * total);
    for b in 0..grid as usize {
        assert_eq!(per[2 * b], block, "shared counter of block {b}");
        assert_eq!(per[2 * b + 1], block - 1, "shared max of block {b}");
    }
}

#[test]
fn predicated_branches_collatz() {
    let m = parse(COLLATZ).unwrap();
    let n = 300u32;
    let mut mem = Memory::new();
    let out = mem.alloc_u32s(&vec![0xdead; n as usize + 7]);
    run_kernel(
        &m,
        "collatz",
        &Launch::linear(10, 32),
        &[ParamValue::U64(out), ParamValue::U32(n)],
        &mut mem,
    )
    .unwrap();
    let got = mem.read_u32s(out, n as usize + 7).unwrap();
    for i in 0..n {
        let mut x = i + 1;
        let mut steps = 0;
        while x != 1 {
            x = if x % 2 == 1 { 3 * x + 1 } else { x / 2 };
            steps += 1;
        }
        assert_eq!(got[i as usize], steps, "collatz({})", i + 1);
    }
    // Threads past n exited early and wrote nothing.
    assert!(got[n as usize..].iter().all(|&v| v == 0xdead));
}

#[test]
fn divergent_barrier_is_an_error() {
    let m = parse(DIVERGENT_BARRIER).unwrap();
    let mut mem = Memory::new();
    let e = run_kernel(&m, "divbar", &Launch::linear(1, 32), &[], &mut mem).unwrap_err();
    assert_eq!(
        e.kind,
        SimErrorKind::DivergentBarrier {
            waiting: 16,
            exited: 16
        }
    );
    let loc = e.location.unwrap();
    assert_eq!(loc.function, "divbar");
    assert_eq!(loc.tid, [0, 0, 0]);
    assert_eq!(loc.line, 12);
    // With only 16 threads every thread reaches the barrier.
    run_kernel(&m, "divbar", &Launch::linear(1, 16), &[], &mut mem).unwrap();
}

#[test]
fn out_of_bounds_is_an_error() {
    let m = parse(OOB).unwrap();
    let mut mem = Memory::new();
    let buf = mem.alloc_u32s(&[0; 10]);
    let e = run_kernel(
        &m,
        "oob",
        &Launch::linear(1, 16),
        &[ParamValue::U64(buf)],
        &mut mem,
    )
    .unwrap_err();
    assert_eq!(
        e.kind,
        SimErrorKind::OutOfBounds {
            space: Space::Global,
            addr: buf + 40,
            size: 4
        }
    );
    let loc = e.location.unwrap();
    assert_eq!(loc.tid, [10, 0, 0]);
    assert_eq!(loc.inst_index, 4);
    assert_eq!(loc.line, 13);
    // The first ten threads did their work before thread 10 faulted.
    assert_eq!(mem.read_u32s(buf, 10).unwrap(), vec![1; 10]);
    // Misaligned pointer.
    let e = run_kernel(
        &m,
        "oob",
        &Launch::linear(1, 1),
        &[ParamValue::U64(buf + 2)],
        &mut mem,
    )
    .unwrap_err();
    assert!(
        matches!(e.kind, SimErrorKind::Misaligned { size: 4, .. }),
        "{e}"
    );
    // Null pointer.
    let e = run_kernel(
        &m,
        "oob",
        &Launch::linear(1, 1),
        &[ParamValue::U64(0)],
        &mut mem,
    )
    .unwrap_err();
    assert!(
        matches!(e.kind, SimErrorKind::OutOfBounds { addr: 0, .. }),
        "{e}"
    );
}

#[test]
fn step_limit() {
    let m = parse(SPIN).unwrap();
    let mut mem = Memory::new();
    let opts = RunOptions {
        step_limit: 10_000,
        ..RunOptions::default()
    };
    let e = run_kernel_with_options(&m, "spin", &Launch::linear(1, 4), &[], &mut mem, &opts)
        .unwrap_err();
    assert_eq!(e.kind, SimErrorKind::StepLimitExceeded { limit: 10_000 });
    assert!(e.to_string().contains("step limit"));
}

#[test]
fn launch_and_param_errors() {
    let m = parse(SAXPY).unwrap();
    let mut mem = Memory::new();
    let l = Launch::linear(1, 1);
    let e = run_kernel(&m, "nope", &l, &[], &mut mem).unwrap_err();
    assert_eq!(e.kind, SimErrorKind::UnknownKernel("nope".into()));
    let e = run_kernel(&m, "saxpy", &l, &[], &mut mem).unwrap_err();
    assert_eq!(
        e.kind,
        SimErrorKind::ParamCount {
            expected: 4,
            got: 0
        }
    );
    let p = [
        ParamValue::U64(0),
        ParamValue::F32(1.0),
        ParamValue::U64(0),
        ParamValue::U64(0),
    ];
    let e = run_kernel(&m, "saxpy", &l, &p, &mut mem).unwrap_err();
    assert_eq!(
        e.kind,
        SimErrorKind::ParamSize {
            index: 0,
            expected: 4,
            got: 8
        }
    );
    let e = run_kernel(&m, "saxpy", &Launch::linear(1, 2048), &p, &mut mem).unwrap_err();
    assert!(matches!(e.kind, SimErrorKind::InvalidLaunch(_)));
    assert_eq!(m.kernel_param_sizes("saxpy"), Some(vec![4, 4, 8, 8]));
}

#[test]
fn trap() {
    let src = format!(
        "{HEADER}.visible .entry t() {{ .reg .pred %p; setp.eq.u32 %p, 1, 1; @%p trap; ret; }}"
    );
    let m = parse(&src).unwrap();
    let e = run_kernel(&m, "t", &Launch::linear(1, 1), &[], &mut Memory::new()).unwrap_err();
    assert_eq!(e.kind, SimErrorKind::Trap);
}

#[test]
fn parse_errors_have_positions() {
    let cases = [
        (".version 7.0\n.target sm_80\n.address_size 64\n.entry k() {\n  add.s32 %r1, %r2, 1;\n}", 5, 11, "unknown register"),
        (".entry k() {\n .reg .b32 %r<2>;\n bra $nowhere;\n}", 3, 2, "unknown label"),
        (".entry k() {\n  frobnicate.u32 %r1;\n}", 2, 3, "unsupported instruction"),
        (".entry k() {\n .reg .f32 %f<2>;\n cvt.s32.f32 %f1, %f0;\n}", 3, 2, "requires .rni"),
        (".address_size 32", 1, 1, "address_size"),
        (".entry k() { ret; ", 1, 19, "end of input"),
        (".entry k() {\n call.uni foo, ();\n}", 2, 2, "unknown function"),
        ("@", 1, 1, "unexpected"),
        ("/* open", 1, 1, "unterminated"),
    ];
    for (src, line, col, msg) in cases {
        let e = parse(src).unwrap_err();
        assert_eq!((e.line, e.col), (line, col), "{src:?}: {e}");
        assert!(e.message.contains(msg), "{src:?}: {e}");
        assert!(e.to_string().starts_with(&format!("{line}:{col}: ")));
    }
}

#[test]
fn generic_shared_local_const_and_vectors() {
    let src = format!(
        r#"{HEADER}
.const .align 4 .u32 table[4] = {{10, 20, 30, 40}};
.global .align 8 .f64 gscale = 0d4000000000000000;
.global .align 4 .b8 gbytes[6] = {{1, 2, 3, 4, 5, 6}};
.visible .entry k(.param .u64 out)
{{
	.local .align 16 .b8 __local_depot0[16];
	.shared .align 16 .b8 sbuf[64];
	.reg .b32 %r<20>;
	.reg .b16 %rs<4>;
	.reg .f64 %fd<4>;
	.reg .b64 %rd<20>;
	ld.param.u64 %rd1, [out];
	mov.u32 %r1, %tid.x;
	// shared through a generic pointer, read back through .shared
	mov.u64 %rd2, sbuf;
	cvta.shared.u64 %rd3, %rd2;
	mul.wide.u32 %rd4, %r1, 4;
	add.s64 %rd5, %rd3, %rd4;
	mul.lo.s32 %r2, %r1, 100;
	st.u32 [%rd5], %r2;
	bar.sync 0;
	xor.b32 %r3, %r1, 1;
	mul.wide.u32 %rd6, %r3, 4;
	cvta.to.shared.u64 %rd7, %rd5;
	sub.s64 %rd7, %rd7, %rd4;
	add.s64 %rd7, %rd7, %rd6;
	ld.shared.u32 %r4, [%rd7];
	// local through generic
	mov.u64 %rd8, __local_depot0;
	cvta.local.u64 %rd9, %rd8;
	st.v4.u32 [%rd9], {{%r1, %r2, %r3, %r4}};
	ld.local.v2.u32 {{%r5, %r6}}, [__local_depot0+8];
	// const via .const and via generic
	and.b32 %r7, %r1, 3;
	mul.wide.u32 %rd10, %r7, 4;
	mov.u64 %rd11, table;
	add.s64 %rd12, %rd11, %rd10;
	ld.const.u32 %r8, [%rd12];
	cvta.const.u64 %rd13, %rd11;
	ld.u32 %r9, [%rd13+4];
	// module globals
	ld.global.f64 %fd1, [gscale];
	mov.u64 %rd14, gbytes;
	ld.global.u8 %rs1, [%rd14+5];
	cvt.u32.u16 %r10, %rs1;
	// pack / unpack
	mov.b64 %rd15, {{%r5, %r6}};
	mov.b64 {{%r11, %r12}}, %rd15;
	// results
	mul.wide.u32 %rd16, %r1, 32;
	add.s64 %rd17, %rd1, %rd16;
	st.global.v4.u32 [%rd17], {{%r4, %r5, %r6, %r8}};
	st.global.v2.u32 [%rd17+16], {{%r9, %r10}};
	st.global.f64 [%rd17+24], %fd1;
	st.global.u64 [%rd1+256], %rd15;
	ret;
}}
"#
    );
    let m = parse(&src).unwrap();
    let mut mem = Memory::new();
    let out = mem.alloc(8 * 32 + 8, 16);
    run_kernel(
        &m,
        "k",
        &Launch::linear(1, 8),
        &[ParamValue::U64(out)],
        &mut mem,
    )
    .unwrap();
    for t in 0..8u32 {
        let row = mem.read_u32s(out + 32 * t as u64, 6).unwrap();
        let other = t ^ 1;
        assert_eq!(
            row,
            vec![
                other * 100,
                t ^ 1,
                other * 100,
                [10, 20, 30, 40][(t & 3) as usize],
                20,
                6
            ],
            "t={t}"
        );
        assert_eq!(mem.read_f64s(out + 32 * t as u64 + 24, 1).unwrap()[0], 2.0);
    }
    let last = mem.read_u64s(out + 256, 1).unwrap()[0];
    assert_eq!(last, 6 | (600 << 32));
    assert!(mem.symbol("gscale").is_some());
}

/// Runs a single-thread snippet; `%o` holds the output pointer.
fn snippet(decls: &str, body: &str, n: usize) -> Vec<u64> {
    let src = format!(
        "{HEADER}.visible .entry s(.param .u64 out) {{\n.reg .b64 %o;\n{decls}\nld.param.u64 %o, [out];\n{body}\nret;\n}}"
    );
    let m = parse(&src).unwrap_or_else(|e| panic!("{e}\n{src}"));
    let mut mem = Memory::new();
    let out = mem.alloc_u64s(&vec![0xAAAA_AAAA_AAAA_AAAA; n]);
    run_kernel(
        &m,
        "s",
        &Launch::linear(1, 1),
        &[ParamValue::U64(out)],
        &mut mem,
    )
    .unwrap();
    mem.read_u64s(out, n).unwrap()
}

/// Builds a snippet that computes `exprs` (each an instruction writing `%x`)
/// and stores `%x` (as 64 bits) into consecutive output slots.
fn eval_each(decls: &str, instrs: &[&str]) -> Vec<u64> {
    let mut body = String::new();
    for (i, ins) in instrs.iter().enumerate() {
        body.push_str(&format!(
            "mov.b64 %x, 0;\n{ins}\nst.global.u64 [%o+{}], %x;\n",
            8 * i
        ));
    }
    snippet(&format!(".reg .b64 %x;\n{decls}"), &body, instrs.len())
}

#[test]
fn integer_64bit_math() {
    let d = ".reg .b64 %a, %b; .reg .b32 %r<4>;";
    let r = eval_each(
        d,
        &[
            "mov.u64 %a, 0xFFFFFFFFFFFFFFFF; mov.u64 %b, 3; mul.hi.u64 %x, %a, %b;",
            "mov.u64 %a, -5; mov.u64 %b, 3; mul.hi.s64 %x, %a, %b;",
            "mov.u32 %r1, -7; mov.u32 %r2, 100000; mul.wide.s32 %x, %r1, %r2;",
            "mov.u32 %r1, 0xFFFFFFFF; mul.wide.u32 %x, %r1, %r1;",
            "mov.s64 %a, -17; mov.s64 %b, 5; div.s64 %x, %a, %b;",
            "mov.s64 %a, -17; mov.s64 %b, 5; rem.s64 %x, %a, %b;",
            "mov.u64 %a, 17; mov.u64 %b, 0; div.u64 %x, %a, %b;",
            "mov.u64 %a, 17; mov.u64 %b, 0; rem.u64 %x, %a, %b;",
            "mov.u32 %r1, 9; mov.u32 %r2, 0; div.u32 %r3, %r1, %r2; cvt.u64.u32 %x, %r3;",
            "mov.s64 %a, 0x8000000000000000; mov.s64 %b, -1; div.s64 %x, %a, %b;",
            "mov.s64 %a, -1024; mov.u32 %r1, 70; shr.s64 %x, %a, %r1;",
            "mov.s64 %a, -1024; shr.u64 %x, %a, 60;",
            "mov.b64 %a, 1; shl.b64 %x, %a, 64;",
            "mov.u64 %a, 0x00F0000000000000; clz.b64 %r1, %a; cvt.u64.u32 %x, %r1;",
            "mov.u64 %a, 0x00F0000000000001; popc.b64 %r1, %a; cvt.u64.u32 %x, %r1;",
            "mov.u64 %a, 1; brev.b64 %x, %a;",
            "mov.s64 %a, -3; bfind.s64 %r1, %a; cvt.u64.u32 %x, %r1;",
            "mov.u64 %a, 0; bfind.u64 %r1, %a; cvt.u64.u32 %x, %r1;",
            "mov.s64 %a, -9; abs.s64 %x, %a;",
            "mov.s64 %a, -9; mov.s64 %b, 4; min.s64 %x, %a, %b;",
            "mov.s64 %a, -9; mov.s64 %b, 4; min.u64 %x, %a, %b;",
            "mov.u64 %a, 6; mov.u64 %b, 7; mad.lo.s64 %x, %a, %b, 100;",
            "mov.u32 %r1, 0x10000; mad.wide.u32 %x, %r1, %r1, 5;",
            "mov.u32 %r1, 0x7FFFFFFF; add.sat.s32 %r2, %r1, 5; cvt.u64.u32 %x, %r2;",
            "mov.u32 %r1, 0xF0F0; bfe.u32 %r2, %r1, 4, 8; cvt.u64.u32 %x, %r2;",
            "mov.u32 %r1, 0xF0F0; bfe.s32 %r2, %r1, 8, 8; cvt.s64.s32 %x, %r2;",
            "mov.u32 %r1, 0x12345678; prmt.b32 %r2, %r1, 0, 0x0123; cvt.u64.u32 %x, %r2;",
            "mov.u32 %r1, 0; bfi.b32 %r2, 0xF, %r1, 8, 4; cvt.u64.u32 %x, %r2;",
            "mov.u64 %a, 5; cnot.b64 %x, %a;",
            "mov.u64 %a, 5; not.b64 %x, %a;",
            // Funnel shifts (llc's rotates and 64-bit shifts by parts).
            "mov.u32 %r1, 0x89ABCDEF; mov.u32 %r2, 0x01234567; shf.l.wrap.b32 %r3, %r1, %r2, 36; cvt.u64.u32 %x, %r3;",
            "mov.u32 %r1, 0x89ABCDEF; mov.u32 %r2, 0x01234567; shf.l.clamp.b32 %r3, %r1, %r2, 36; cvt.u64.u32 %x, %r3;",
            "mov.u32 %r1, 0x89ABCDEF; mov.u32 %r2, 0x01234567; shf.r.wrap.b32 %r3, %r1, %r2, 8; cvt.u64.u32 %x, %r3;",
            "mov.u32 %r1, 0x89ABCDEF; mov.u32 %r2, 0x01234567; shf.r.clamp.b32 %r3, %r1, %r2, 40; cvt.u64.u32 %x, %r3;",
        ],
    );
    let want: Vec<u64> = vec![
        2,
        (-1i64) as u64,
        (-700000i64) as u64,
        0xFFFF_FFFE_0000_0001,
        (-3i64) as u64,
        (-2i64) as u64,
        u64::MAX,
        17,
        0xFFFF_FFFF,
        i64::MIN as u64,
        u64::MAX,
        15,
        0,
        8,
        5,
        1 << 63,
        1,
        0xFFFF_FFFF,
        9,
        (-9i64) as u64,
        4,
        142,
        (1u64 << 32) + 5,
        i32::MAX as u64,
        0x0F,
        (-16i64) as u64,
        0x78563412,
        0xF00,
        0,
        !5u64,
        // b:a = 0x01234567_89ABCDEF; left by 36 wraps to 4: high word 0x12345678.
        0x1234_5678,
        // Clamped to 32: the high word is a.
        0x89AB_CDEF,
        // Right by 8: the low word 0x6789ABCD.
        0x6789_ABCD,
        // Clamped to 32: the low word is b.
        0x0123_4567,
    ];
    for (i, (g, w)) in r.iter().zip(&want).enumerate() {
        assert_eq!(g, w, "case {i}: got {g:#x} want {w:#x}");
    }
}

#[test]
fn cvt_rounding_and_saturation() {
    let d = ".reg .f32 %f<3>; .reg .f64 %d<3>; .reg .b32 %r<3>; .reg .b16 %h<2>; .reg .b64 %a;";
    let nan32 = "mov.b32 %f1, 0f7FC00000;";
    let ins = [
        format!("{nan32} cvt.rzi.s32.f32 %r1, %f1; cvt.s64.s32 %x, %r1;"),
        "mov.f32 %f1, 0f501502F9; cvt.rzi.s32.f32 %r1, %f1; cvt.s64.s32 %x, %r1;".into(), // 1e10
        "mov.f32 %f1, 0fD01502F9; cvt.rzi.s32.f32 %r1, %f1; cvt.s64.s32 %x, %r1;".into(), // -1e10
        "mov.f32 %f1, 2.5; cvt.rni.s32.f32 %r1, %f1; cvt.s64.s32 %x, %r1;".into(),
        "mov.f32 %f1, 3.5; cvt.rni.s32.f32 %r1, %f1; cvt.s64.s32 %x, %r1;".into(),
        "mov.f32 %f1, -1.5; cvt.rmi.s32.f32 %r1, %f1; cvt.s64.s32 %x, %r1;".into(),
        "mov.f32 %f1, -1.5; cvt.rpi.s32.f32 %r1, %f1; cvt.s64.s32 %x, %r1;".into(),
        "mov.f32 %f1, -3.0; cvt.rzi.u32.f32 %r1, %f1; cvt.u64.u32 %x, %r1;".into(),
        "mov.f64 %d1, 1e300; cvt.rzi.u64.f64 %x, %d1;".into(),
        "mov.f64 %d1, 0dFFF8000000000000; cvt.rzi.s64.f64 %x, %d1;".into(),
        "mov.f64 %d1, 1e300; cvt.rn.f32.f64 %f1, %d1; mov.b32 %r1, %f1; cvt.u64.u32 %x, %r1;"
            .into(),
        "mov.f64 %d1, 1e300; cvt.rz.f32.f64 %f1, %d1; mov.b32 %r1, %f1; cvt.u64.u32 %x, %r1;"
            .into(),
        "mov.u64 %a, 16777217; cvt.rn.f32.u64 %f1, %a; mov.b32 %r1, %f1; cvt.u64.u32 %x, %r1;"
            .into(),
        "mov.u64 %a, 16777217; cvt.rp.f32.u64 %f1, %a; mov.b32 %r1, %f1; cvt.u64.u32 %x, %r1;"
            .into(),
        "mov.s64 %a, -1; cvt.rn.f64.s64 %d1, %a; mov.b64 %x, %d1;".into(),
        "mov.u32 %r1, 0x1FF; cvt.u8.u32 %h1, %r1; cvt.u64.u16 %x, %h1;".into(),
        "mov.u32 %r1, 0x80; cvt.s64.s8 %x, %r1;".into(),
        "mov.u32 %r1, 300; cvt.sat.u8.s32 %h1, %r1; cvt.u64.u16 %x, %h1;".into(),
        "mov.u32 %r1, -300; cvt.sat.s8.s32 %h1, %r1; cvt.s64.s16 %x, %h1;".into(),
        "mov.f32 %f1, -2.7; cvt.rzi.f32.f32 %f2, %f1; mov.b32 %r1, %f2; cvt.u64.u32 %x, %r1;"
            .into(),
        "mov.f32 %f1, 1.5; cvt.sat.f32.f32 %f2, %f1; mov.b32 %r1, %f2; cvt.u64.u32 %x, %r1;".into(),
        "mov.f32 %f1, 0f3DCCCCCD; cvt.f64.f32 %d1, %f1; mov.b64 %x, %d1;".into(),
        "mov.f32 %f1, 1.0; cvt.rn.f16.f32 %h1, %f1; cvt.u64.u16 %x, %h1;".into(),
        "mov.b16 %h1, 0x3E00; cvt.f32.f16 %f1, %h1; mov.b32 %r1, %f1; cvt.u64.u32 %x, %r1;".into(),
        "mov.f32 %f1, 0f7F7FFFFF; cvt.rn.f16.f32 %h1, %f1; cvt.u64.u16 %x, %h1;".into(),
        "mov.u32 %r1, -1; cvt.u64.u32 %x, %r1;".into(),
        "mov.u32 %r1, -1; cvt.s64.s32 %x, %r1;".into(),
        "mov.u32 %r1, -1; cvt.u64.s32 %x, %r1;".into(),
    ];
    let refs: Vec<&str> = ins.iter().map(|s| s.as_str()).collect();
    let r = eval_each(d, &refs);
    let f = |x: f32| x.to_bits() as u64;
    let want: Vec<u64> = vec![
        0,
        i32::MAX as u64,
        i32::MIN as i64 as u64,
        2,
        4,
        (-2i64) as u64,
        (-1i64) as u64,
        0,
        u64::MAX,
        0,
        f(f32::INFINITY),
        f(f32::MAX),
        f(16777216.0),
        f(16777218.0),
        (-1.0f64).to_bits(),
        0xFF,
        (-128i64) as u64,
        255,
        (-128i64) as u64,
        f(-2.0),
        f(1.0),
        (0.1f32 as f64).to_bits(),
        0x3C00,
        f(1.5),
        0x7C00,
        0xFFFF_FFFF,
        u64::MAX,
        u64::MAX,
    ];
    for (i, (g, w)) in r.iter().zip(&want).enumerate() {
        assert_eq!(g, w, "case {i} ({}): got {g:#x} want {w:#x}", refs[i]);
    }
}

#[test]
fn float_ops_and_setp() {
    let d = ".reg .f32 %f<4>; .reg .f64 %d<3>; .reg .b32 %r<3>; .reg .pred %p<4>;";
    let nan = "0f7FC00000";
    let ins = [
        format!("mov.f32 %f1, {nan}; mov.f32 %f2, 3.0; min.f32 %f3, %f1, %f2; mov.b32 %r1, %f3; cvt.u64.u32 %x, %r1;"),
        format!("mov.f32 %f1, {nan}; mov.f32 %f2, 3.0; max.f32 %f3, %f2, %f1; mov.b32 %r1, %f3; cvt.u64.u32 %x, %r1;"),
        format!("mov.f32 %f1, {nan}; mov.f32 %f2, 3.0; setp.lt.f32 %p1, %f1, %f2; selp.u64 %x, 1, 0, %p1;"),
        format!("mov.f32 %f1, {nan}; mov.f32 %f2, 3.0; setp.ltu.f32 %p1, %f1, %f2; selp.u64 %x, 1, 0, %p1;"),
        format!("mov.f32 %f1, {nan}; setp.ne.f32 %p1, %f1, %f1; selp.u64 %x, 1, 0, %p1;"),
        format!("mov.f32 %f1, {nan}; setp.nan.f32 %p1, %f1, %f1; selp.u64 %x, 1, 0, %p1;"),
        "mov.f32 %f1, 1.0; mov.f32 %f2, 3.0; div.rn.f32 %f3, %f1, %f2; mov.b32 %r1, %f3; cvt.u64.u32 %x, %r1;".into(),
        "mov.f32 %f1, 1.0; mov.f32 %f2, 3.0; div.rz.f32 %f3, %f1, %f2; mov.b32 %r1, %f3; cvt.u64.u32 %x, %r1;".into(),
        "mov.f64 %d1, 2.0; sqrt.rn.f64 %d2, %d1; mov.b64 %x, %d2;".into(),
        "mov.f32 %f1, 4.0; rcp.rn.f32 %f2, %f1; mov.b32 %r1, %f2; cvt.u64.u32 %x, %r1;".into(),
        "mov.f32 %f1, -0.0; abs.f32 %f2, %f1; mov.b32 %r1, %f2; cvt.u64.u32 %x, %r1;".into(),
        "mov.f32 %f1, 1.0; neg.f32 %f2, %f1; mov.b32 %r1, %f2; cvt.u64.u32 %x, %r1;".into(),
        "mov.f32 %f1, 0f00000001; testp.subnormal.f32 %p1, %f1; selp.u64 %x, 1, 0, %p1;".into(),
        "mov.u32 %r1, 5; setp.gt.s32 %p1|%p2, %r1, 3; selp.u64 %x, 1, 0, %p2;".into(),
        "mov.u32 %r1, 5; setp.eq.s32 %p3, %r1, 5; setp.gt.and.s32 %p1, %r1, 9, %p3; selp.u64 %x, 1, 0, %p1;".into(),
        "mov.u32 %r1, 5; setp.eq.s32 %p3, %r1, 5; setp.gt.or.s32 %p1, %r1, 9, !%p3; selp.u64 %x, 1, 0, %p1;".into(),
        "mov.u32 %r1, -1; setp.hi.u32 %p1, %r1, 1; selp.u64 %x, 1, 0, %p1;".into(),
        "mov.u32 %r1, -1; setp.lt.s32 %p1, %r1, 1; selp.u64 %x, 1, 0, %p1;".into(),
        "mov.pred %p1, 1; mov.pred %p2, 0; xor.pred %p3, %p1, %p2; not.pred %p3, %p3; selp.u64 %x, 1, 0, %p3;".into(),
        "mov.f32 %f1, 2.0; set.gt.u32.f32 %r1, %f1, 1.0; cvt.u64.u32 %x, %r1;".into(),
        "mov.f32 %f1, 2.0; mov.f32 %f2, -1.0; copysign.f32 %f3, %f2, %f1; mov.b32 %r1, %f3; cvt.u64.u32 %x, %r1;".into(),
        "mov.f32 %f1, 0f7F7FFFFF; mul.rz.f32 %f2, %f1, 2.0; mov.b32 %r1, %f2; cvt.u64.u32 %x, %r1;".into(),
        "mov.f64 %d1, 0.1; mov.f64 %d2, 0.2; add.rn.f64 %d1, %d1, %d2; mov.b64 %x, %d1;".into(),
        "mov.f64 %d1, 0.1; mov.f64 %d2, 10.0; fma.rn.f64 %d1, %d1, %d2, -1.0; mov.b64 %x, %d1;".into(),
    ];
    let refs: Vec<&str> = ins.iter().map(|s| s.as_str()).collect();
    let r = eval_each(d, &refs);
    let f = |x: f32| x.to_bits() as u64;
    let third = 1.0f32 / 3.0;
    let want: Vec<u64> = vec![
        f(3.0),
        f(3.0),
        0,
        1,
        0,
        1,
        f(third),
        f(third).wrapping_sub(1), // 1/3 rounds up to nearest; rz is one ulp below
        2f64.sqrt().to_bits(),
        f(0.25),
        f(0.0),
        f(-1.0),
        1,
        0,
        0,
        0,
        1,
        1,
        0,
        0xFFFF_FFFF,
        f(-2.0),
        f(f32::MAX),
        (0.1f64 + 0.2).to_bits(),
        0.1f64.mul_add(10.0, -1.0).to_bits(),
    ];
    for (i, (g, w)) in r.iter().zip(&want).enumerate() {
        assert_eq!(g, w, "case {i} ({}): got {g:#x} want {w:#x}", refs[i]);
    }
}

#[test]
fn multi_dimensional_launch_special_registers() {
    let src = format!(
        r#"{HEADER}
.visible .entry ids(.param .u64 out)
{{
	.reg .b32 %r<16>;
	.reg .b64 %rd<4>;
	ld.param.u64 %rd1, [out];
	mov.u32 %r1, %tid.x; mov.u32 %r2, %tid.y; mov.u32 %r3, %tid.z;
	mov.u32 %r4, %ntid.x; mov.u32 %r5, %ntid.y;
	mov.u32 %r6, %ctaid.x; mov.u32 %r7, %ctaid.y; mov.u32 %r8, %nctaid.x;
	mad.lo.s32 %r9, %r3, %r5, %r2;
	mad.lo.s32 %r9, %r9, %r4, %r1;       // linear tid
	mov.u32 %r10, %laneid;
	mov.u32 %r11, %warpid;
	mad.lo.s32 %r12, %r7, %r8, %r6;      // linear cta
	mov.u32 %r13, %ntid.z;
	mul.lo.s32 %r13, %r13, %r5;
	mul.lo.s32 %r13, %r13, %r4;          // threads per cta
	mad.lo.s32 %r14, %r12, %r13, %r9;    // global id
	mul.wide.u32 %rd2, %r14, 16;
	add.s64 %rd3, %rd1, %rd2;
	st.global.v4.u32 [%rd3], {{%r9, %r10, %r11, %r12}};
	ret;
}}"#
    );
    let m = parse(&src).unwrap();
    let mut mem = Memory::new();
    let launch = Launch {
        grid: [3, 2, 1],
        block: [8, 5, 2],
    };
    let n = 6 * 80;
    let out = mem.alloc(16 * n, 16);
    run_kernel(&m, "ids", &launch, &[ParamValue::U64(out)], &mut mem).unwrap();
    let v = mem.read_u32s(out, 4 * n).unwrap();
    for g in 0..n {
        let (cta, t) = (g / 80, g % 80);
        assert_eq!(
            &v[4 * g..4 * g + 4],
            &[t as u32, t as u32 % 32, t as u32 / 32, cta as u32]
        );
    }
}

#[test]
fn dynamic_shared_memory() {
    let src = format!(
        r#"{HEADER}
.extern .shared .align 16 .b8 dsmem[];
.visible .entry rev(.param .u64 p)
{{
	.reg .b32 %r<8>;
	.reg .b64 %rd<8>;
	ld.param.u64 %rd1, [p];
	mov.u32 %r1, %tid.x;
	mov.u32 %r2, %ntid.x;
	mul.wide.u32 %rd2, %r1, 4;
	add.s64 %rd3, %rd1, %rd2;
	ld.global.u32 %r3, [%rd3];
	mov.u32 %r4, dsmem;
	shl.b32 %r5, %r1, 2;
	add.s32 %r6, %r4, %r5;
	st.shared.u32 [%r6], %r3;
	bar.sync 0;
	sub.s32 %r7, %r2, %r1;
	add.s32 %r7, %r7, -1;
	shl.b32 %r7, %r7, 2;
	add.s32 %r7, %r4, %r7;
	ld.shared.u32 %r3, [%r7];
	st.global.u32 [%rd3], %r3;
	ret;
}}"#
    );
    let m = parse(&src).unwrap();
    let mut mem = Memory::new();
    let data: Vec<u32> = (0..64).collect();
    let p = mem.alloc_u32s(&data);
    let opts = RunOptions {
        dynamic_shared_bytes: 256,
        ..RunOptions::default()
    };
    run_kernel_with_options(
        &m,
        "rev",
        &Launch::linear(1, 64),
        &[ParamValue::U64(p)],
        &mut mem,
        &opts,
    )
    .unwrap();
    let want: Vec<u32> = (0..64).rev().collect();
    assert_eq!(mem.read_u32s(p, 64).unwrap(), want);
    // Without dynamic shared memory the access is out of bounds.
    let e = run_kernel(
        &m,
        "rev",
        &Launch::linear(1, 64),
        &[ParamValue::U64(p)],
        &mut mem,
    )
    .unwrap_err();
    assert!(
        matches!(
            e.kind,
            SimErrorKind::OutOfBounds {
                space: Space::Shared,
                ..
            }
        ),
        "{e}"
    );
}

#[test]
fn throughput() {
    // A tight loop of ~6 instructions per iteration; prints the rate.
    let src = format!(
        r#"{HEADER}
.visible .entry spin(.param .u64 out, .param .u32 n)
{{
	.reg .pred %p<2>;
	.reg .b32 %r<6>;
	.reg .b64 %rd<2>;
	ld.param.u64 %rd1, [out];
	ld.param.u32 %r1, [n];
	mov.u32 %r2, 0;
	mov.u32 %r3, 0;
$L:
	mad.lo.s32 %r3, %r2, 3, %r3;
	xor.b32 %r3, %r3, %r2;
	add.s32 %r2, %r2, 1;
	setp.lt.u32 %p1, %r2, %r1;
	@%p1 bra $L;
	st.global.u32 [%rd1], %r3;
	ret;
}}"#
    );
    let m = parse(&src).unwrap();
    let mut mem = Memory::new();
    let out = mem.alloc(4, 4);
    let n = 1_000_000u32;
    let t0 = std::time::Instant::now();
    let stats = run_kernel(
        &m,
        "spin",
        &Launch::linear(1, 1),
        &[ParamValue::U64(out), ParamValue::U32(n)],
        &mut mem,
    )
    .unwrap();
    let dt = t0.elapsed().as_secs_f64();
    let mut x = 0u32;
    for i in 0..n {
        x = i.wrapping_mul(3).wrapping_add(x) ^ i;
    }
    assert_eq!(mem.read_u32s(out, 1).unwrap()[0], x);
    eprintln!(
        "{} instructions in {:.3}s = {:.1} M instr/s",
        stats.instructions,
        dt,
        stats.instructions as f64 / dt / 1e6
    );
}

#[test]
fn llvm_nvptx_style() {
    let src = r#"
//
// Generated by LLVM NVPTX Back-End
//

.version 8.0
.target sm_90
.address_size 64

	// .globl	scale_add               // -- Begin function scale_add
                                        // @scale_add
.visible .entry scale_add(
	.param .u64 .ptr .global .align 4 scale_add_param_0,
	.param .align 8 .b8 scale_add_param_1[16],
	.param .u32 scale_add_param_2
)
.maxntid 128, 1, 1
{
	.reg .pred 	%p<3>;
	.reg .b32 	%r<8>;
	.reg .f32 	%f<4>;
	.reg .b64 	%rd<6>;

// %bb.0:                               // %entry
	ld.param.b64 	%rd1, [scale_add_param_0];
	ld.param.v2.b32 	{%r1, %r2}, [scale_add_param_1];
	ld.param.b64 	%rd2, [scale_add_param_1+8];
	ld.param.b32 	%r3, [scale_add_param_2];
	mov.b32 	%r4, %tid.x;
	setp.lt.u32 	%p1, %r4, %r3;
	@!%p1 bra 	$L__BB0_2;
// %bb.1:                               // %if.then
	mul.wide.u32 	%rd3, %r4, 4;
	add.s64 	%rd4, %rd1, %rd3;
	ld.global.nc.L1::no_allocate.b32 	%r5, [%rd4];
	mad.lo.s32 	%r6, %r5, %r1, %r2;
	cvt.u32.u64 	%r7, %rd2;
	add.s32 	%r6, %r6, %r7;
	st.volatile.global.b32 	[%rd4], %r6;
	.pragma "nounroll";
$L__BB0_2:
	exit;
                                        // -- End function
}
"#;
    let m = parse(src).unwrap();
    assert_eq!(m.version(), "8.0");
    assert_eq!(m.target(), "sm_90");
    assert_eq!(m.kernel_param_sizes("scale_add"), Some(vec![8, 16, 4]));
    let mut mem = Memory::new();
    let data: Vec<u32> = (0..100).collect();
    let p = mem.alloc_u32s(&data);
    let mut s = Vec::new();
    s.extend_from_slice(&3u32.to_le_bytes());
    s.extend_from_slice(&5u32.to_le_bytes());
    s.extend_from_slice(&1000u64.to_le_bytes());
    run_kernel(
        &m,
        "scale_add",
        &Launch::linear(1, 128),
        &[
            ParamValue::U64(p),
            ParamValue::Bytes(s),
            ParamValue::U32(90),
        ],
        &mut mem,
    )
    .unwrap();
    let got = mem.read_u32s(p, 100).unwrap();
    for (i, &g) in got.iter().enumerate() {
        let i = i as u32;
        assert_eq!(g, if i < 90 { i * 3 + 5 + 1000 } else { i });
    }
}

/// The host's `cudaMemcpyToSymbol`: `.const` and `.global` variables filled before the
/// launch replace their initializers.
#[test]
fn host_filled_variables() {
    let src = r#"
        .version 7.0
        .target sm_70
        .address_size 64
        .const .align 4 .b8 coef[8] = {1, 0, 0, 0, 2, 0, 0, 0};
        .global .align 4 .u32 counter = 5;
        .visible .entry k(.param .u64 out) {
            .reg .b32 %r<5>; .reg .b64 %rd<3>;
            ld.param.u64 %rd1, [out];
            cvta.to.global.u64 %rd2, %rd1;
            ld.const.u32 %r1, [coef+4];
            ld.global.u32 %r2, [counter];
            add.s32 %r3, %r1, %r2;
            st.global.u32 [%rd2], %r3;
            st.global.u32 [counter], %r3;
            ret;
        }"#;
    let run = |m: &gyre_ptx_sim::Module, mem: &mut Memory| {
        let out = mem.alloc_u32s(&[0]);
        run_kernel(m, "k", &Launch::linear(1, 1), &[ParamValue::U64(out)], mem).unwrap();
        mem.read_u32s(out, 1).unwrap()[0]
    };
    let m = parse(src).unwrap();
    assert_eq!(run(&m, &mut Memory::new()), 2 + 5);
    let mut m2 = m.clone();
    m2.set_const("coef", &[0, 0, 0, 0, 40, 0, 0, 0]).unwrap();
    let mut mem = Memory::new();
    let counter = mem.define_symbol("counter", &300u32.to_le_bytes(), 4);
    assert_eq!(run(&m2, &mut mem), 340);
    // The kernel's store went to the caller's variable.
    assert_eq!(mem.read_u32s(counter, 1).unwrap(), vec![340]);
    assert_eq!(mem.symbol("counter"), Some(counter));
    assert!(m2.set_const("missing", &[0]).is_err());
    assert!(m2.set_const("coef", &[0; 9]).is_err());
}

/// `mul24.lo`/`.hi` on `.u32` and `.s32` (llc emits them for CUDA's `__mul24`/`__umul24`):
/// the operands' low 24 bits (sign-extended for `.s32`) multiplied into 48 bits, of
/// which `.lo` keeps bits 0..32 and `.hi` bits 16..48.
#[test]
fn mul24() {
    let src = r#"
        .version 7.0
        .target sm_70
        .address_size 64
        .visible .entry k(.param .u64 out, .param .u32 a, .param .u32 b) {
            .reg .b32 %r<7>; .reg .b64 %rd<3>;
            ld.param.u64 %rd1, [out];
            cvta.to.global.u64 %rd2, %rd1;
            ld.param.u32 %r1, [a];
            ld.param.u32 %r2, [b];
            mul24.lo.u32 %r3, %r1, %r2;
            mul24.hi.u32 %r4, %r1, %r2;
            mul24.lo.s32 %r5, %r1, %r2;
            mul24.hi.s32 %r6, %r1, %r2;
            st.global.v4.u32 [%rd2], {%r3, %r4, %r5, %r6};
            ret;
        }"#;
    let m = parse(src).unwrap();
    let cases = [
        (3u32, 5u32),
        (0xff12_3456, 0x0080_0001),
        (0x00ff_ffff, 0x00ff_ffff),
        (0x0080_0000, 0x0000_0002),
    ];
    for (a, b) in cases {
        let mut mem = Memory::new();
        let out = mem.alloc_u32s(&[0; 4]);
        run_kernel(
            &m,
            "k",
            &Launch::linear(1, 1),
            &[ParamValue::U64(out), ParamValue::U32(a), ParamValue::U32(b)],
            &mut mem,
        )
        .unwrap();
        let pu = u64::from(a & 0xff_ffff) * u64::from(b & 0xff_ffff);
        let s24 = |v: u32| i64::from(((v << 8) as i32) >> 8);
        let ps = (s24(a) * s24(b)) as u64;
        assert_eq!(
            mem.read_u32s(out, 4).unwrap(),
            vec![pu as u32, (pu >> 16) as u32, ps as u32, (ps >> 16) as u32],
            "{a:#x} * {b:#x}"
        );
    }
    assert!(parse(&src.replace("mul24.lo.u32 %r3", "mul24.lo.u16 %r3")).is_err());
}

/// `mul24.lo`: the low 32 bits of the product of the low 24 bits, sign-extended for
/// `.s32`, zero-extended for `.u32` (what llc emits for `llvm.nvvm.mul24.i`).
#[test]
fn mul24_lo() {
    const SRC: &str = r#"
.version 7.0
.target sm_70
.address_size 64
.visible .entry m24(.param .u64 out, .param .u32 a, .param .u32 b)
{
    .reg .b32 %r<5>;
    .reg .b64 %rd<2>;
    ld.param.u64 %rd1, [out];
    ld.param.u32 %r1, [a];
    ld.param.u32 %r2, [b];
    mul24.lo.s32 %r3, %r1, %r2;
    mul24.lo.u32 %r4, %r1, %r2;
    st.global.u32 [%rd1], %r3;
    st.global.u32 [%rd1+4], %r4;
    ret;
}
"#;
    let m = parse(SRC).unwrap();
    for (a, b) in [
        (0x01ff_ffffu32, 3u32),
        (0xff_ffff, 0xff_ffff),
        (0x0080_0000, 2),
        (123_456, 7_890),
        (0xdead_beef, 0x1234_5678),
    ] {
        let mut mem = Memory::new();
        let out = mem.alloc(8, 8);
        run_kernel(
            &m,
            "m24",
            &Launch::linear(1, 1),
            &[ParamValue::U64(out), ParamValue::U32(a), ParamValue::U32(b)],
            &mut mem,
        )
        .unwrap();
        let got = mem.read_bytes(out, 8).unwrap();
        let s = u32::from_le_bytes(got[0..4].try_into().unwrap());
        let u = u32::from_le_bytes(got[4..8].try_into().unwrap());
        let s24 = |v: u32| ((v << 8) as i32) >> 8;
        assert_eq!(
            s,
            s24(a).wrapping_mul(s24(b)) as u32,
            "mul24.lo.s32 {a:#x} {b:#x}"
        );
        assert_eq!(
            u,
            (a & 0xff_ffff).wrapping_mul(b & 0xff_ffff),
            "mul24.lo.u32"
        );
    }
    let bad = SRC.replace("mul24.lo.s32", "mul24.lo.s64");
    assert!(parse(&bad).is_err(), "mul24 is 32-bit only");
}
