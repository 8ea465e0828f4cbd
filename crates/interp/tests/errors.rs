//! One test per error kind, each checking the reported location.

mod common;

use common::parse;
use gyre_interp::{run_kernel, Arg, ExecError, Launch, Location, Memory, PoisonUse, Schedule};
use gyre_ir::{Block, Inst, Module};

/// The `idx`th instruction of block `block` of function `func`, by layout.
fn inst(m: &Module, func: &str, block: u32, idx: usize) -> (Block, Inst) {
    let f = &m.functions[m.func_by_name(func).expect("function")];
    let b = f
        .layout
        .blocks()
        .find(|b| b.as_u32() == block)
        .expect("block in layout");
    (b, f.layout.block_insts(b).nth(idx).expect("instruction"))
}

fn expect_loc(
    loc: &Location,
    m: &Module,
    func: &str,
    block: u32,
    idx: usize,
    ctaid: [u32; 3],
    tid: [u32; 3],
) {
    let (b, i) = inst(m, func, block, idx);
    let id = m.func_by_name(func).expect("function");
    let f = &m.functions[id];
    let mut text = String::new();
    gyre_ir::write::write_inst(&mut text, f, Some(m), i).unwrap();
    assert_eq!(
        loc,
        &Location {
            ctaid,
            tid,
            function: func.into(),
            func: id,
            block: b,
            inst: i,
            text: text.into(),
        }
    );
}

const LOAD_AT: &str = "
kernel @k(ptr.global, i64, ptr.global) {
block0(v0: ptr.global, v1: i64, v2: ptr.global):
    v3 = tid.x
    v4 = sext.i64 v3
    v5 = iadd v1, v4
    v6 = ptradd v0, v5, 1
    v7 = load.i32 v6
    store v7, v2
    return
}
";

#[test]
fn out_of_bounds() {
    let m = parse(LOAD_AT);
    let mut mem = Memory::new();
    mem.alloc_zeroed("a", 16);
    mem.alloc_zeroed("o", 4);
    // Thread 1 reads bytes 13..17 of a 16-byte buffer... but 13 is misaligned; use
    // offset 12 + 4 * tid with scale 1: thread 0 reads 12..16, thread 1 16..20.
    let l = Launch::linear(1, 1, vec![Arg::buffer("a"), Arg::Int(16), Arg::buffer("o")]);
    let e = run_kernel(&m, "k", &l, &mut mem).unwrap_err();
    let ExecError::OutOfBounds {
        loc, addr, size, ..
    } = &e
    else {
        panic!("{e}")
    };
    expect_loc(loc, &m, "k", 0, 4, [0, 0, 0], [0, 0, 0]);
    assert_eq!((*addr, *size), (mem.base("a").unwrap() + 16, 4));
    // In bounds at offset 12: fine.
    let l = Launch::linear(1, 1, vec![Arg::buffer("a"), Arg::Int(12), Arg::buffer("o")]);
    run_kernel(&m, "k", &l, &mut mem).unwrap();
}

#[test]
fn misaligned() {
    let m = parse(LOAD_AT);
    let mut mem = Memory::new();
    mem.alloc_zeroed("a", 64);
    mem.alloc_zeroed("o", 4);
    // Thread t reads at offset t; thread 0 is aligned, thread 1 is not.
    let l = Launch::new(
        [1, 2, 1],
        [2, 1, 1],
        vec![Arg::buffer("a"), Arg::Int(0), Arg::buffer("o")],
    );
    let mut l2 = l.clone();
    l2.config.detect_races = false;
    let e = run_kernel(&m, "k", &l2, &mut mem).unwrap_err();
    let ExecError::Misaligned { loc, size, .. } = &e else {
        panic!("{e}")
    };
    assert_eq!(*size, 4);
    expect_loc(loc, &m, "k", 0, 4, [0, 0, 0], [1, 0, 0]);
}

#[test]
fn const_write() {
    let m = parse(
        "
global @tab: const [4 x i32] align 4 = [1, 2, 3, 4]
kernel @k() {
block0:
    v0 = global_addr @tab
    v1 = load.i32 v0
    store v1, v0
    return
}",
    );
    let e = run_kernel(&m, "k", &Launch::linear(1, 1, vec![]), &mut Memory::new()).unwrap_err();
    let ExecError::ConstWrite { loc, .. } = &e else {
        panic!("{e}")
    };
    expect_loc(loc, &m, "k", 0, 2, [0, 0, 0], [0, 0, 0]);
}

const DIV: &str = "
kernel @k(i32, i32, ptr.global) {
block0(v0: i32, v1: i32, v2: ptr.global):
    v3 = sdiv v0, v1
    store v3, v2
    return
}
";

#[test]
fn division_by_zero() {
    let m = parse(DIV);
    let mut mem = Memory::new();
    mem.alloc_zeroed("o", 4);
    let l = Launch::linear(2, 1, vec![Arg::Int(7), Arg::Int(0), Arg::buffer("o")]);
    let e = run_kernel(&m, "k", &l, &mut mem).unwrap_err();
    let ExecError::DivisionByZero { loc } = &e else {
        panic!("{e}")
    };
    expect_loc(loc, &m, "k", 0, 0, [0, 0, 0], [0, 0, 0]);
}

#[test]
fn division_overflow() {
    let m = parse(DIV);
    let mut mem = Memory::new();
    mem.alloc_zeroed("o", 4);
    let l = Launch::linear(
        1,
        1,
        vec![Arg::Int(0x8000_0000), Arg::Int(u64::MAX), Arg::buffer("o")],
    );
    let e = run_kernel(&m, "k", &l, &mut mem).unwrap_err();
    let ExecError::DivisionOverflow { loc } = &e else {
        panic!("{e}")
    };
    expect_loc(loc, &m, "k", 0, 0, [0, 0, 0], [0, 0, 0]);
    // -8 / 2 is fine and rounds toward zero.
    let l = Launch::linear(
        1,
        1,
        vec![Arg::Int((-7i64) as u64), Arg::Int(2), Arg::buffer("o")],
    );
    run_kernel(&m, "k", &l, &mut mem).unwrap();
    assert_eq!(mem.read::<i32>("o").unwrap(), vec![-3]);
}

#[test]
fn unreachable() {
    let m = parse(
        "
kernel @k() {
block0:
    v0 = tid.x
    v1 = iconst.i32 2
    v2 = icmp eq v0, v1
    brif v2, block1, block2
block1:
    unreachable
block2:
    return
}",
    );
    let e = run_kernel(
        &m,
        "k",
        &Launch::new([1, 2, 1], [3, 1, 1], vec![]),
        &mut Memory::new(),
    )
    .unwrap_err();
    let ExecError::Unreachable { loc } = &e else {
        panic!("{e}")
    };
    expect_loc(loc, &m, "k", 1, 0, [0, 0, 0], [2, 0, 0]);
}

#[test]
fn branch_on_poison() {
    let m = parse(
        "
kernel @k(i32) {
block0(v0: i32):
    v1 = iconst.i32 1
    v2 = iadd nsw v0, v1
    v3 = icmp sgt v2, v0
    brif v3, block1, block1
block1:
    return
}",
    );
    let ok = Launch::linear(1, 1, vec![Arg::Int(5)]);
    run_kernel(&m, "k", &ok, &mut Memory::new()).unwrap();
    let l = Launch::linear(1, 1, vec![Arg::Int(0x7fff_ffff)]);
    let e = run_kernel(&m, "k", &l, &mut Memory::new()).unwrap_err();
    let ExecError::Poison { loc, what } = &e else {
        panic!("{e}")
    };
    assert_eq!(*what, PoisonUse::Branch);
    expect_loc(loc, &m, "k", 0, 3, [0, 0, 0], [0, 0, 0]);
}

#[test]
fn poison_address() {
    let m = parse(
        "
kernel @k(ptr.global, i64) {
block0(v0: ptr.global, v1: i64):
    v2 = iconst.i64 64
    v3 = shl v1, v2
    v4 = ptradd v0, v3, 4
    v5 = iconst.i32 0
    store v5, v4
    return
}",
    );
    let mut mem = Memory::new();
    mem.alloc_zeroed("a", 4);
    let e = run_kernel(
        &m,
        "k",
        &Launch::linear(1, 1, vec![Arg::buffer("a"), Arg::Int(0)]),
        &mut mem,
    )
    .unwrap_err();
    let ExecError::Poison { loc, what } = &e else {
        panic!("{e}")
    };
    assert_eq!(*what, PoisonUse::Address);
    expect_loc(loc, &m, "k", 0, 4, [0, 0, 0], [0, 0, 0]);
}

#[test]
fn data_race_without_barrier() {
    // Every thread writes slot 0 of a shared word: a write-write race.
    let m = parse(
        "
global @s: shared [1 x i32] align 4
kernel @k() {
block0:
    v0 = global_addr @s
    v1 = tid.x
    store v1, v0
    return
}",
    );
    let e = run_kernel(&m, "k", &Launch::linear(2, 4, vec![]), &mut Memory::new()).unwrap_err();
    let ExecError::DataRace { loc, other_tid, .. } = &e else {
        panic!("{e}")
    };
    expect_loc(loc, &m, "k", 0, 2, [0, 0, 0], [1, 0, 0]);
    assert_eq!(*other_tid, Some([0, 0, 0]));
    // Reverse order: thread 2 is the second to write.
    let mut l = Launch::linear(2, 4, vec![]);
    l.config.schedule = Schedule::Reverse;
    let e = run_kernel(&m, "k", &l, &mut Memory::new()).unwrap_err();
    let ExecError::DataRace { loc, other_tid, .. } = &e else {
        panic!("{e}")
    };
    expect_loc(loc, &m, "k", 0, 2, [0, 0, 0], [2, 0, 0]);
    assert_eq!(*other_tid, Some([3, 0, 0]));
    // Off: no error (the last writer wins).
    l.config.detect_races = false;
    run_kernel(&m, "k", &l, &mut Memory::new()).unwrap();
}

#[test]
fn reduction_missing_barrier_is_a_race() {
    // The block reduction with the barrier inside the loop removed: thread 1 writes
    // sdata[1], which thread 0 read in the same epoch (at s = 1).
    let src = include_str!("examples.rs");
    let start = src.find("global @sdata").unwrap();
    let end = start + src[start..].find("\";").unwrap();
    let reduce = src[start..end].replacen("block4:\n    barrier\n", "block4:\n", 1);
    assert_ne!(reduce, src[start..end], "the barrier was removed");
    let m = parse(&reduce);
    let mut mem = Memory::new();
    mem.alloc_from("in", &[1.0f32; 64]);
    mem.alloc_zeroed("out", 4);
    let l = Launch::linear(1, 64, vec![Arg::buffer("in"), Arg::buffer("out")]);
    let e = run_kernel(&m, "reduce", &l, &mut mem).unwrap_err();
    let ExecError::DataRace { loc, other_tid, .. } = &e else {
        panic!("{e}")
    };
    expect_loc(loc, &m, "reduce", 3, 5, [0, 0, 0], [1, 0, 0]);
    // Thread 1 itself read sdata[1] too, so the readers are "several": not named.
    assert_eq!(*other_tid, None);
}

#[test]
fn divergent_barrier() {
    let m = parse(
        "
kernel @k() convergent {
block0:
    v0 = tid.x
    v1 = iconst.i32 4
    v2 = icmp ult v0, v1
    brif v2, block1, block2
block1:
    barrier
    jump block2
block2:
    return
}",
    );
    // Every thread of a 2x4 CTA has tid.x < 4: the barrier is uniform.
    let out = run_kernel(
        &m,
        "k",
        &Launch::new([1, 1, 1], [2, 4, 1], vec![]),
        &mut Memory::new(),
    )
    .unwrap();
    assert_eq!(out.barriers, 1);
    for s in [Schedule::Forward, Schedule::Reverse, Schedule::Shuffle(3)] {
        let mut l = Launch::new([2, 1, 1], [8, 1, 1], vec![]);
        l.config.schedule = s;
        let e = run_kernel(&m, "k", &l, &mut Memory::new()).unwrap_err();
        let ExecError::DivergentBarrier {
            loc,
            other_tid,
            other_exited,
        } = &e
        else {
            panic!("{e}")
        };
        expect_loc(loc, &m, "k", 1, 0, [0, 0, 0], [0, 0, 0]);
        assert_eq!((*other_tid, *other_exited), ([4, 0, 0], true));
    }
}

#[test]
fn threads_at_different_barriers() {
    let m = parse(
        "
kernel @k() convergent {
block0:
    v0 = tid.x
    v1 = iconst.i32 1
    v2 = icmp ult v0, v1
    brif v2, block1, block3
block1:
    barrier
    jump block2
block3:
    barrier
    jump block2
block2:
    return
}",
    );
    let e = run_kernel(&m, "k", &Launch::linear(1, 2, vec![]), &mut Memory::new()).unwrap_err();
    let ExecError::DivergentBarrier {
        loc,
        other_tid,
        other_exited,
    } = &e
    else {
        panic!("{e}")
    };
    expect_loc(loc, &m, "k", 1, 0, [0, 0, 0], [0, 0, 0]);
    assert_eq!((*other_tid, *other_exited), ([1, 0, 0], false));
}

#[test]
fn step_limit() {
    let m = parse(
        "
kernel @k(i32) {
block0(v0: i32):
    v1 = iconst.i32 0
    jump block1(v1)
block1(v2: i32):
    v3 = iconst.i32 1
    v4 = iadd v2, v3
    v5 = icmp ne v4, v0
    brif v5, block1(v4), block2
block2:
    return
}",
    );
    // 100 iterations of 4 instructions: well within a limit of 1000.
    let mut l = Launch::linear(1, 1, vec![Arg::Int(100)]);
    l.config.step_limit = 1000;
    let out = run_kernel(&m, "k", &l, &mut Memory::new()).unwrap();
    assert_eq!(out.steps, 2 + 4 * 100 + 1);
    // Counting from 0 to 0 wraps around 2^32 times: the limit stops it.
    l.args = vec![Arg::Int(0)];
    let e = run_kernel(&m, "k", &l, &mut Memory::new()).unwrap_err();
    let ExecError::StepLimit { loc, limit } = &e else {
        panic!("{e}")
    };
    assert_eq!(*limit, 1000);
    // Step 1000 is the 1001st instruction: 2 + 4 * 249 + 2 -> block1's third.
    expect_loc(loc, &m, "k", 1, 2, [0, 0, 0], [0, 0, 0]);
}

#[test]
fn call_depth() {
    let m = parse(
        "
func @f(i32) -> i32 {
block0(v0: i32):
    v1 = call @f(v0)
    return v1
}
kernel @k() {
block0:
    v0 = iconst.i32 1
    v1 = call @f(v0)
    return
}",
    );
    let e = run_kernel(&m, "k", &Launch::linear(1, 1, vec![]), &mut Memory::new()).unwrap_err();
    let ExecError::CallDepth { loc } = &e else {
        panic!("{e}")
    };
    expect_loc(loc, &m, "f", 0, 0, [0, 0, 0], [0, 0, 0]);
}

#[test]
fn invalid_ir_and_bad_launch() {
    // A block without a terminator, built with the raw API (the parser would refuse).
    let mut m = Module::new();
    let mut f = gyre_ir::Function::new("k", gyre_ir::FuncKind::Kernel, Default::default());
    let b = f.append_new_block();
    let (i, _) = f.append_inst(
        b,
        gyre_ir::InstructionData::IntConst { imm: 1 },
        Some(gyre_ir::Type::I32),
    );
    m.functions.push(f);
    let e = run_kernel(&m, "k", &Launch::linear(1, 1, vec![]), &mut Memory::new()).unwrap_err();
    assert!(
        matches!(&e, ExecError::InvalidIr { inst: Some(x), .. } if *x == i),
        "{e}"
    );

    let m = parse(DIV);
    let cases = [
        Launch::linear(1, 1, vec![Arg::Int(1)]),
        Launch::linear(0, 1, vec![Arg::Int(1), Arg::Int(1), Arg::buffer("o")]),
        Launch::linear(1, 1, vec![Arg::Int(1), Arg::F32(1.0), Arg::buffer("o")]),
        Launch::linear(1, 1, vec![Arg::Int(1), Arg::Int(1), Arg::buffer("nope")]),
    ];
    for l in cases {
        let e = run_kernel(&m, "k", &l, &mut Memory::new()).unwrap_err();
        assert!(matches!(e, ExecError::BadLaunch { .. }), "{e}");
    }
    let e = run_kernel(
        &m,
        "nope",
        &Launch::linear(1, 1, vec![]),
        &mut Memory::new(),
    )
    .unwrap_err();
    assert!(matches!(e, ExecError::BadLaunch { .. }), "{e}");
}

#[test]
fn faults_name_the_instruction_the_buffer_and_the_offset() {
    let m = parse(LOAD_AT);
    let mut mem = Memory::new();
    mem.alloc_zeroed("a", 16);
    mem.alloc_zeroed("o", 4);
    let l = Launch::linear(1, 1, vec![Arg::buffer("a"), Arg::Int(20), Arg::buffer("o")]);
    let e = run_kernel(&m, "k", &l, &mut mem).unwrap_err();
    let msg = e.to_string();
    assert!(
        msg.starts_with(
            "cta (0,0,0) thread (0,0,0) in @k block0 at `v7 = load.i32 v6`: 4-byte access"
        ),
        "{msg}"
    );
    assert!(
        msg.ends_with(": offset 20 of buffer `a` (16 bytes)"),
        "{msg}"
    );
    // Before the start: a negative offset.
    let l = Launch::linear(
        1,
        1,
        vec![Arg::buffer("a"), Arg::Int(-8i64 as u64), Arg::buffer("o")],
    );
    let msg = run_kernel(&m, "k", &l, &mut mem).unwrap_err().to_string();
    assert!(
        msg.ends_with(": offset -8 of buffer `a` (16 bytes)"),
        "{msg}"
    );
    // An argument of the wrong kind is named in words, not as Rust data.
    let l = Launch::linear(1, 1, vec![Arg::F32(1.0), Arg::Int(0), Arg::buffer("o")]);
    let msg = run_kernel(&m, "k", &l, &mut mem).unwrap_err().to_string();
    assert_eq!(
        msg,
        "bad launch: argument 0: the f32 1 does not fit ptr.global"
    );
}

#[test]
fn a_race_names_both_accesses() {
    let m = parse(
        "
global @s: shared [4 x i32] align 4
kernel @k() {
block0:
    v0 = global_addr @s
    v1 = tid.x
    v2 = iconst.i32 0
    brif v1, block1, block2
block1:
    v3 = load.i32 v0
    return
block2:
    store v2, v0
    return
}",
    );
    let e = run_kernel(&m, "k", &Launch::linear(1, 2, vec![]), &mut Memory::new()).unwrap_err();
    let ExecError::DataRace { other, .. } = &e else {
        panic!("{e}")
    };
    expect_loc(
        other.as_ref().expect("the other access"),
        &m,
        "k",
        2,
        0,
        [0, 0, 0],
        [0, 0, 0],
    );
    assert_eq!(
        e.to_string(),
        "cta (0,0,0) thread (1,0,0) in @k block1 at `v3 = load.i32 v0`: data race on shared \
         address 0x100 (offset 0 of buffer `s` (16 bytes)); the other access: cta (0,0,0) \
         thread (0,0,0) in @k block2 at `store v2, v0`"
    );
}

#[test]
fn memory_limits_are_errors_before_allocating() {
    // 32 GiB of global and 16 GiB of shared memory: refused before any allocation.
    for (decl, want) in [
        (
            "global @g: global [4294967295 x i64] align 8",
            "interpreter memory",
        ),
        (
            "global @g: shared [4294967295 x i32] align 4",
            "bytes of shared memory per CTA",
        ),
    ] {
        let src = format!("{decl}\nkernel @k() {{\nblock0:\n    return\n}}\n");
        let m = parse(&src);
        let e = run_kernel(&m, "k", &Launch::linear(1, 1, vec![]), &mut Memory::new()).unwrap_err();
        assert!(matches!(e, ExecError::ResourceLimit { .. }), "{e}");
        assert!(e.to_string().contains(want), "{e}");
    }
    // A 4 GiB stack slot in each of 1024 threads.
    let m = parse(
        "kernel @k() {\n    slot0 = local 4294967295 align 4\nblock0:\n    v0 = slot_addr slot0\n    return\n}\n",
    );
    let e = run_kernel(
        &m,
        "k",
        &Launch::linear(1, 1024, vec![]),
        &mut Memory::new(),
    )
    .unwrap_err();
    assert!(
        e.to_string().contains("a thread's local frames need"),
        "{e}"
    );
    // A call chain that grows the stack past its share stops at the call.
    let m = parse(
        "func @f() {\n    slot0 = local 1048576 align 4\nblock0:\n    call @f()\n    return\n}\n\
         kernel @k() {\nblock0:\n    call @f()\n    return\n}\n",
    );
    let mut l = Launch::linear(1, 1, vec![]);
    l.config.memory_limit = 64 << 20;
    let e = run_kernel(&m, "k", &l, &mut Memory::new()).unwrap_err();
    assert!(matches!(e, ExecError::ResourceLimit { .. }), "{e}");
    assert!(e.to_string().contains("in @f block0 at `call @f()`"), "{e}");
}
