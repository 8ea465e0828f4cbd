//! Targeted lowering tests: `bra.uni`, parallel-copy cycles, irreducible input, and the
//! instructions the generator does not produce (narrow integers, `i1` arithmetic).

mod common;

use common::{compare, compile, parse, ptxas_or_skip, run_ptxas, text};
use gyre_analysis::{Cfg, DomTree, LoopInfo, PostDomTree, Uniformity};
use gyre_codegen_lite::{compile_module, CodegenError, CodegenOptions, Sm};
use gyre_interp::{Arg, Inputs, Launch, Memory};
use gyre_ir::{Block, EntityRef, Module};

/// Guarded branch lines (`@%p bra ...`) of the PTX, in order.
fn guarded_branches(ptx: &str) -> Vec<String> {
    ptx.lines()
        .map(str::trim)
        .filter(|l| l.starts_with('@') && l.contains(" bra"))
        .map(str::to_string)
        .collect()
}

fn uniformity(m: &Module, func: usize) -> (Uniformity, gyre_ir::Function) {
    let f = m.functions.values().nth(func).expect("function").clone();
    let cfg = Cfg::with_function(&f).expect("cfg");
    let dt = DomTree::with_function(&f, &cfg);
    let pdt = PostDomTree::with_function(&f, &cfg);
    let li = LoopInfo::with_function(&f, &cfg, &dt);
    (Uniformity::with_function(&f, &cfg, &dt, &pdt, &li), f)
}

const UNIFORM_THEN_DIVERGENT: &str = "
kernel @k(ptr.global, i32) {
block0(v0: ptr.global, v1: i32):
    v2 = tid.x
    v3 = iconst.i32 0
    v4 = icmp sgt v1, v3
    brif v4, block1, block2
block1:
    v5 = icmp eq v2, v3
    brif v5, block3, block2
block3:
    store v2, v0
    jump block2
block2:
    return
}
";

#[test]
fn uniform_branch_is_bra_uni_and_tid_branch_is_not() {
    let m = parse(UNIFORM_THEN_DIVERGENT);
    let (u, f) = uniformity(&m, 0);
    let term = |b: usize| f.terminator(Block::new(b)).expect("terminator");
    assert!(
        u.is_branch_uniform(term(0)),
        "branch on a kernel argument is uniform"
    );
    assert!(
        !u.is_branch_uniform(term(1)),
        "branch on tid.x is divergent"
    );
    let ptx = compile(&m, Sm::Sm90);
    let br = guarded_branches(&ptx);
    assert_eq!(br.len(), 2, "{ptx}");
    assert!(br[0].contains("bra.uni "), "uniform branch: {}", br[0]);
    assert!(
        br[1].contains(" bra ") && !br[1].contains("bra.uni"),
        "tid branch: {}",
        br[1]
    );
}

#[test]
fn loop_with_a_divergent_if_keeps_a_uniform_loop_branch() {
    // block_reduce: the tree loop's condition depends only on ntid.x; the `tid < s`
    // branch inside it is divergent.
    let src = std::fs::read_to_string(format!(
        "{}/../../examples/block_reduce.gir",
        env!("CARGO_MANIFEST_DIR")
    ))
    .expect("example");
    let m = parse(&src);
    let (u, f) = uniformity(&m, 0);
    let term = |b: usize| f.terminator(Block::new(b)).expect("terminator");
    assert!(u.is_branch_uniform(term(1)), "loop condition on ntid.x");
    assert!(!u.is_branch_uniform(term(2)), "tid.x < s");
    assert!(!u.is_branch_uniform(term(5)), "tid.x == 0");
    let br = guarded_branches(&compile(&m, Sm::Sm80));
    assert_eq!(
        br.iter().filter(|l| l.contains("bra.uni")).count(),
        1,
        "{br:?}"
    );
}

#[test]
fn values_leaving_a_divergent_loop_are_divergent() {
    // The exit depends on tid.x, so threads leave in different iterations and the
    // counter after the loop differs between them.
    let m = parse(
        "
kernel @k(ptr.global) {
block0(v0: ptr.global):
    v1 = tid.x
    v2 = iconst.i32 0
    v3 = iconst.i32 1
    jump block1(v2)
block1(v10: i32):
    v11 = iadd v10, v3
    v12 = icmp ult v10, v1
    brif v12, block1(v11), block2
block2:
    v13 = icmp eq v11, v3
    brif v13, block3, block4
block3:
    store v11, v0
    jump block4
block4:
    return
}
",
    );
    let (u, f) = uniformity(&m, 0);
    assert!(!u.is_branch_uniform(f.terminator(Block::new(1)).expect("term")));
    assert!(!u.is_branch_uniform(f.terminator(Block::new(2)).expect("term")));
}

/// A loop that swaps two values (and rotates three) every iteration: block arguments
/// form cycles that need a temporary. The latch is also the exiting block, so both of
/// its edges carry copies (one through an edge stub).
const SWAP: &str = "
kernel @swap(ptr.global, i32, i32, f32, i32) {
block0(v0: ptr.global, v1: i32, v2: i32, v3: f32, v4: i32):
    v5 = iconst.i32 0
    v6 = iconst.i32 1
    v7 = iconst.i32 7
    jump block1(v1, v2, v5, v3, v6, v7)
block1(v10: i32, v11: i32, v12: i32, v13: f32, v14: i32, v15: i32):
    v16 = iadd v12, v6
    v17 = icmp slt v16, v4
    brif v17, block1(v11, v10, v16, v13, v15, v10), block2(v10, v11, v14, v15)
block2(v20: i32, v21: i32, v22: i32, v23: i32):
    store v20, v0
    v24 = iconst.i64 1
    v25 = ptradd v0, v24, 4
    store v21, v25
    v26 = iconst.i64 2
    v27 = ptradd v0, v26, 4
    store v22, v27
    v28 = iconst.i64 3
    v29 = ptradd v0, v28, 4
    store v23, v29
    return
}
";

#[test]
fn swap_loop_parallel_copies() {
    let m = parse(SWAP);
    let ptx = compile(&m, Sm::Sm70);
    if let Some(p) = ptxas_or_skip("swap_loop_parallel_copies") {
        for sm in Sm::ALL {
            run_ptxas(&p, &compile(&m, sm), sm).unwrap_or_else(|e| panic!("{e}\n{ptx}"));
        }
    }
    for n in 0..7u64 {
        let mut mem = Memory::new();
        mem.alloc_from("out", &[0i32; 4]);
        let args = vec![
            Arg::buffer("out"),
            Arg::Int(10),
            Arg::Int(20),
            Arg::F32(1.5),
            Arg::Int(n),
        ];
        let inputs = Inputs {
            launch: Launch::linear(1, 1, args),
            memory: mem.clone(),
        };
        compare(&m, "swap", &inputs, &ptx).unwrap_or_else(|e| panic!("n = {n}: {e}\n{ptx}"));
        // And against the expected values, so a wrong interpreter cannot hide a bug.
        let mut run = mem;
        gyre_interp::run_kernel(&m, "swap", &inputs.launch, &mut run).expect("interpreter");
        let iters = n.max(1) - 1; // back edges taken
        let (a, b) = if iters % 2 == 0 { (10, 20) } else { (20, 10) };
        let got = run.read::<i32>("out").expect("out");
        assert_eq!(&got[..2], &[a, b], "n = {n}");
    }
}

#[test]
fn irreducible_input_compiles_and_runs_like_the_interpreter() {
    // A cycle entered at block1 and at block2, with a value carried around it.
    let src = "
kernel @irr(ptr.global, i32) {
block0(v0: ptr.global, v1: i32):
    v2 = tid.x
    v3 = iconst.i32 1
    v4 = and v2, v3
    v5 = icmp eq v4, v3
    v6 = iconst.i32 0
    brif v5, block1(v6), block2(v2)
block1(v7: i32):
    v8 = iadd v7, v3
    jump block2(v8)
block2(v9: i32):
    v10 = iconst.i32 3
    v11 = iadd v9, v10
    v12 = icmp slt v11, v1
    brif v12, block1(v11), block3
block3:
    v13 = sext.i64 v2
    v14 = ptradd v0, v13, 4
    store v11, v14
    return
}
";
    let m = parse(src);
    let ptx = compile_module(&m, &CodegenOptions { sm: Sm::Sm70 }).expect("irreducible compiles");
    if let Some(ptxas) = gyre_test_tools::require(gyre_test_tools::Tool::Ptxas, "irreducible") {
        gyre_test_tools::run_ptxas(&ptxas, &ptx, "sm_70").expect("ptxas accepts it");
    }
    // ptx-sim against the interpreter on 8 threads.
    let mut mem = gyre_interp::Memory::new();
    mem.alloc_from("out", &[0i32; 8]);
    let args = vec![gyre_interp::Arg::buffer("out"), gyre_interp::Arg::Int(40)];
    gyre_interp::run_kernel(
        &m,
        "irr",
        &gyre_interp::Launch::linear(1, 8, args),
        &mut mem,
    )
    .expect("the interpreter runs it");
    let want = mem.read::<i32>("out").expect("out");
    let sm = gyre_ptx_sim::parse(&ptx).expect("ptx-sim reads it");
    let mut sim_mem = gyre_ptx_sim::Memory::new();
    let out = sim_mem.alloc(32, 256);
    let params = [
        gyre_ptx_sim::ParamValue::U64(out),
        gyre_ptx_sim::ParamValue::I32(40),
    ];
    let launch = gyre_ptx_sim::Launch {
        grid: [1, 1, 1],
        block: [8, 1, 1],
    };
    gyre_ptx_sim::run_kernel(&sm, "irr", &launch, &params, &mut sim_mem).expect("ptx-sim runs it");
    let bytes = sim_mem.read_bytes(out, 32).expect("in bounds");
    let got: Vec<i32> = bytes
        .chunks(4)
        .map(|c| i32::from_le_bytes(c.try_into().expect("4 bytes")))
        .collect();
    assert_eq!(got, want);
    assert!(want.iter().all(|&v| v >= 40), "{want:?}");
}

#[test]
fn unverified_input_is_an_error() {
    let m = parse(
        "
kernel @bad(i32) {
block0(v0: i32):
    v1 = fneg v0
    return
}
",
    );
    let err = compile_module(&m, &CodegenOptions { sm: Sm::Sm90 }).expect_err("invalid");
    assert!(matches!(err, CodegenError::Verify(_)), "{err}");
}

/// A kernel computing every integer operation, comparison and cast on `i1`, `i8` and
/// `i16` operands (read from `in`), storing each result zero-extended to `out`.
fn narrow_kernel() -> (String, usize) {
    let mut body = String::new();
    let mut n = 10; // value numbers
    let mut outs = 0usize;
    let mut v = |body: &mut String, text: String| -> String {
        n += 1;
        body.push_str(&format!("    v{n} = {text}\n"));
        format!("v{n}")
    };
    let mut store = |body: &mut String,
                     val: &str,
                     ty: &str,
                     v: &mut dyn FnMut(&mut String, String) -> String| {
        let w = if ty == "i32" {
            val.to_string()
        } else {
            v(body, format!("zext.i32 {val}"))
        };
        let k = v(body, format!("iconst.i64 {outs}"));
        let p = v(body, format!("ptradd v0, {k}, 4"));
        body.push_str(&format!("    store {w}, {p}\n"));
        outs += 1;
    };
    // Loads: a, b as i32 from in[2*gid], in[2*gid+1].
    let gid = "v2";
    let two = v(&mut body, "iconst.i32 2".into());
    let i0 = v(&mut body, format!("imul {gid}, {two}"));
    let i0w = v(&mut body, format!("sext.i64 {i0}"));
    let pa = v(&mut body, format!("ptradd v1, {i0w}, 4"));
    let a32 = v(&mut body, format!("load.i32 {pa}"));
    let one64 = v(&mut body, "iconst.i64 1".into());
    let pb = v(&mut body, format!("ptradd {pa}, {one64}, 4"));
    let b32 = v(&mut body, format!("load.i32 {pb}"));
    for ty in ["i8", "i16", "i1"] {
        let a = v(&mut body, format!("trunc.{ty} {a32}"));
        let b = v(&mut body, format!("trunc.{ty} {b32}"));
        let one = v(&mut body, format!("iconst.{ty} 1"));
        // Safe divisors: b | 1 unsigned; for signed, (b & 0x3f) | 1 (never -1 or 0).
        let bu = v(&mut body, format!("or {b}, {one}"));
        let bs = if ty == "i1" {
            bu.clone()
        } else {
            let m = v(&mut body, format!("iconst.{ty} 63"));
            let t = v(&mut body, format!("and {b}, {m}"));
            v(&mut body, format!("or {t}, {one}"))
        };
        let width = match ty {
            "i8" => 8,
            "i16" => 16,
            _ => 1,
        };
        let amt = if ty == "i1" {
            v(&mut body, "iconst.i1 0".into())
        } else {
            let m = v(&mut body, format!("iconst.{ty} {}", width - 1));
            v(&mut body, format!("and {b}, {m}"))
        };
        for op in [
            "iadd", "isub", "imul", "and", "or", "xor", "smin", "smax", "umin", "umax",
        ] {
            let r = v(&mut body, format!("{op} {a}, {b}"));
            store(&mut body, &r, ty, &mut v);
        }
        for op in ["udiv", "urem"] {
            let r = v(&mut body, format!("{op} {a}, {bu}"));
            store(&mut body, &r, ty, &mut v);
        }
        if ty != "i1" {
            for op in ["sdiv", "srem"] {
                let r = v(&mut body, format!("{op} {a}, {bs}"));
                store(&mut body, &r, ty, &mut v);
            }
        }
        for op in ["shl", "lshr", "ashr"] {
            let r = v(&mut body, format!("{op} {a}, {amt}"));
            store(&mut body, &r, ty, &mut v);
        }
        for op in ["popcnt", "clz", "ctz"] {
            let r = v(&mut body, format!("{op} {a}"));
            store(&mut body, &r, ty, &mut v);
        }
        for cc in [
            "eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge",
        ] {
            let r = v(&mut body, format!("icmp {cc} {a}, {b}"));
            store(&mut body, &r, "i1", &mut v);
        }
        let c = v(&mut body, format!("icmp ult {a}, {b}"));
        let r = v(&mut body, format!("select {c}, {a}, {b}"));
        store(&mut body, &r, ty, &mut v);
        for to in ["i8", "i16", "i32", "i64"] {
            let tw = match to {
                "i8" => 8,
                "i16" => 16,
                "i32" => 32,
                _ => 64,
            };
            if tw > width {
                for op in ["sext", "zext"] {
                    let r = v(&mut body, format!("{op}.{to} {a}"));
                    let r32 = if to == "i64" {
                        v(&mut body, format!("trunc.i32 {r}"))
                    } else {
                        r
                    };
                    let st = if to == "i64" { "i32" } else { to };
                    store(&mut body, &r32, st, &mut v);
                }
            }
        }
        for op in ["sitofp", "uitofp"] {
            for f in ["f32", "f64"] {
                let r = v(&mut body, format!("{op}.{f} {a}"));
                let back = v(&mut body, format!("fptosi.i32 {r}"));
                store(&mut body, &back, "i32", &mut v);
            }
        }
        // Float to narrow: the value is in range by construction (from the same type).
        let fl = v(&mut body, format!("uitofp.f32 {a}"));
        let r = v(&mut body, format!("fptoui.{ty} {fl}"));
        store(&mut body, &r, ty, &mut v);
        let fs = v(&mut body, format!("sitofp.f64 {a}"));
        let r = v(&mut body, format!("fptosi.{ty} {fs}"));
        store(&mut body, &r, ty, &mut v);
        // Through memory and back.
        let slot_p = v(&mut body, "slot_addr slot0".into());
        body.push_str(&format!("    store {a}, {slot_p}\n"));
        let r = v(&mut body, format!("load.{ty} {slot_p}"));
        store(&mut body, &r, ty, &mut v);
    }
    let text = format!(
        "kernel @narrow(ptr.global, ptr.global) {{
    slot0 = local 8 align 8
block0(v0: ptr.global, v1: ptr.global):
    v2 = tid.x
{body}    return
}}
"
    );
    (text, outs)
}

#[test]
fn narrow_integers_and_booleans_match_the_interpreter() {
    let (src, outs) = narrow_kernel();
    let m = parse(&src);
    let ptx = compile(&m, Sm::Sm80);
    if let Some(p) = ptxas_or_skip("narrow_integers") {
        run_ptxas(&p, &ptx, Sm::Sm80).unwrap_or_else(|e| panic!("{e}\n{ptx}"));
    }
    // Operand pairs covering signs, extremes and zero in each width.
    let vals: [i32; 12] = [
        0,
        1,
        -1,
        2,
        7,
        -7,
        127,
        -128,
        255,
        32767,
        -32768,
        0x1234_5678,
    ];
    let mut input = Vec::new();
    for &x in &vals {
        for &y in &vals {
            input.push(x);
            input.push(y);
        }
    }
    // One thread per operand pair, each with its own copy of the kernel's outputs.
    for (t, pair) in input.chunks(2).enumerate() {
        let mut mem = Memory::new();
        mem.alloc_from("out", &vec![0i32; outs]);
        mem.alloc_from("in", pair);
        let inputs = Inputs {
            launch: Launch::linear(1, 1, vec![Arg::buffer("out"), Arg::buffer("in")]),
            memory: mem,
        };
        compare(&m, "narrow", &inputs, &ptx).unwrap_or_else(|e| panic!("pair {t} {pair:?}: {e}"));
    }
}

/// A kernel `byval` parameter: LLVM's ABI (`.param .align A .b8 p[N]`), copied into the
/// thread's local frame; the callee-visible copy is private (writes to it stay local).
#[test]
fn byval_kernel_parameter_matches_the_interpreter() {
    let src = "kernel @k(ptr.global, ptr.local byval(12, align 4), i32) {
block0(v0: ptr.global, v1: ptr.local, v2: i32):
    v3 = load.i32 v1
    v4 = iconst.i64 4
    v5 = ptradd v1, v4, 1
    v6 = load.i8 v5
    v7 = iconst.i64 8
    v8 = ptradd v1, v7, 1
    v9 = load.i32 v8
    v10 = zext.i32 v6
    v11 = iadd v3, v10
    v12 = iadd v11, v9
    v13 = iadd v12, v2
    store v13, v8
    v14 = load.i32 v8
    store v14, v0
    return
}
";
    let m = parse(src);
    let f = &m.functions[m.func_by_name("k").unwrap()];
    assert_eq!(f.byval.len(), 1);
    assert_eq!(text(&m), src, "byval prints as it parses");
    let ptx = compile(&m, Sm::Sm70);
    assert!(
        ptx.contains(".param .align 4 .b8 $$param1[12]"),
        "LLVM's byval ABI:\n{ptx}"
    );
    if let Some(ptxas) = ptxas_or_skip("byval_kernel_parameter_matches_the_interpreter") {
        for sm in [Sm::Sm70, Sm::Sm80, Sm::Sm90] {
            run_ptxas(&ptxas, &compile(&m, sm), sm).unwrap_or_else(|e| panic!("{e}\n{ptx}"));
        }
    }
    for (a, c, d, x) in [(1i32, 2u8, 3i32, 4i32), (-100, 255, 7, 0)] {
        let mut bytes = a.to_le_bytes().to_vec();
        bytes.extend_from_slice(&[c, 0xee, 0xee, 0xee]);
        bytes.extend_from_slice(&d.to_le_bytes());
        let mut mem = Memory::new();
        mem.alloc_from("out", &[0i32]);
        let args = vec![
            Arg::buffer("out"),
            Arg::Bytes(bytes),
            Arg::Int(x as u32 as u64),
        ];
        let inputs = Inputs {
            launch: Launch::linear(1, 1, args),
            memory: mem.clone(),
        };
        compare(&m, "k", &inputs, &ptx).unwrap_or_else(|e| panic!("{e}\n{ptx}"));
        // Against the expected value too, so a wrong interpreter cannot hide a bug.
        let mut run = mem;
        gyre_interp::run_kernel(&m, "k", &inputs.launch, &mut run).expect("interpreter");
        let want = a.wrapping_add(i32::from(c)).wrapping_add(d).wrapping_add(x);
        assert_eq!(run.read::<i32>("out").unwrap(), vec![want]);
    }
    // A byval parameter needs bytes of exactly its size.
    let mut mem = Memory::new();
    mem.alloc_from("out", &[0i32]);
    let bad = Launch::linear(
        1,
        1,
        vec![Arg::buffer("out"), Arg::Bytes(vec![0; 4]), Arg::Int(0)],
    );
    assert!(gyre_interp::run_kernel(&m, "k", &bad, &mut mem).is_err());
}

/// Static shared memory over 48 KiB is refused as ptxas refuses it, counting only the
/// arrays a kernel (or a function it calls) references; exactly 48 KiB assembles.
#[test]
fn static_shared_memory_limit_is_ptxas_limit() {
    let module = |words: u32, extra: &str| {
        parse(&format!(
            "global @a: shared [{words} x i32] align 4\n\
             global @unused: shared [12000 x i32] align 4\n\
             func @f(ptr.global) {{\nblock0(v0: ptr.global):\n    v1 = global_addr @a\n    \
             v2 = load.i32 v1\n    store v2, v0\n    return\n}}\n\
             kernel @k(ptr.global) {{\nblock0(v0: ptr.global):\n{extra}    call @f(v0)\n    return\n}}\n"
        ))
    };
    let opts = CodegenOptions { sm: Sm::Sm90 };
    // 48 KiB through a callee, plus an unreferenced 47 KiB array: fine.
    let ok = compile_module(&module(12288, ""), &opts).expect("48 KiB is allowed");
    let err = compile_module(&module(12289, ""), &opts).unwrap_err();
    assert!(
        matches!(err, CodegenError::SharedMemory { bytes: 49156, .. }),
        "{err}"
    );
    assert!(
        err.to_string().contains("kernel @k uses 49156 bytes"),
        "{err}"
    );
    // Referencing the other array as well goes over.
    let both = "    v9 = global_addr @unused\n    store v9, v0\n";
    let both = compile_module(&module(12288, both), &opts).unwrap_err();
    assert!(matches!(both, CodegenError::SharedMemory { .. }), "{both}");
    if let Some(ptxas) = ptxas_or_skip("static_shared_memory_limit_is_ptxas_limit") {
        run_ptxas(&ptxas, &ok, Sm::Sm90).expect("ptxas accepts 48 KiB");
        // The refused module is what ptxas refuses too: emit it by hand to check.
        let mut m = module(12289, "");
        let small = compile_module(&m, &opts);
        assert!(small.is_err());
        m.globals
            .values_mut()
            .for_each(|g| g.count = g.count.min(12288));
        let at_limit = compile_module(&m, &opts).unwrap();
        let over = at_limit.replace("[49152]", "[49156]");
        assert_ne!(over, at_limit, "the array is declared in bytes");
        let e = run_ptxas(&ptxas, &over, Sm::Sm90).unwrap_err();
        assert!(e.contains("too much shared data"), "{e}");
    }
}
