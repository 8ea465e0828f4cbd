//! Instruction semantics observed through small kernels: calls, poison and freeze,
//! memory spaces and casts, atomics, switches, float edge cases.

mod common;

use common::{parse, run};
use gyre_interp::{
    assert_same_behaviour, run_kernel, Arg, Difference, ExecError, Inputs, Launch, Memory,
    PoisonUse,
};

fn one(args: Vec<Arg>) -> Launch {
    Launch::linear(1, 1, args)
}

#[test]
fn device_function_calls_and_local_slots() {
    // @sumsq(n) = sum of i*i for i < n, accumulated through a local slot; called twice.
    let src = "
func @sumsq(i32) -> i32 {
    slot0 = local 4 align 4
block0(v0: i32):
    v1 = slot_addr slot0
    v2 = iconst.i32 0
    store v2, v1
    jump block1(v2)
block1(v3: i32):
    v4 = icmp slt v3, v0
    brif v4, block2, block3
block2:
    v5 = imul v3, v3
    v6 = load.i32 v1
    v7 = iadd v6, v5
    store v7, v1
    v8 = iconst.i32 1
    v9 = iadd v3, v8
    jump block1(v9)
block3:
    v10 = load.i32 v1
    return v10
}
kernel @k(ptr.global) {
block0(v0: ptr.global):
    v1 = tid.x
    v2 = call @sumsq(v1)
    v3 = iconst.i32 3
    v4 = call @sumsq(v3)
    v5 = iadd v2, v4
    v6 = sext.i64 v1
    v7 = ptradd v0, v6, 4
    store v5, v7
    return
}";
    let mut mem = Memory::new();
    mem.alloc_zeroed("o", 40);
    run(
        src,
        "k",
        &Launch::linear(1, 10, vec![Arg::buffer("o")]),
        &mut mem,
    )
    .unwrap();
    let want: Vec<i32> = (0..10)
        .map(|t: i32| (0..t).map(|i| i * i).sum::<i32>() + 5)
        .collect();
    assert_eq!(mem.read::<i32>("o").unwrap(), want);
}

#[test]
fn dangling_slot_pointer_is_out_of_bounds() {
    let src = "
func @leak() -> ptr.local {
    slot0 = local 4 align 4
block0:
    v0 = slot_addr slot0
    return v0
}
kernel @k() {
block0:
    v0 = call @leak()
    v1 = load.i32 v0
    return
}";
    let e = run(src, "k", &one(vec![]), &mut Memory::new()).unwrap_err();
    assert!(matches!(e, ExecError::OutOfBounds { .. }), "{e}");
}

const POISON: &str = "
kernel @k(ptr.global, i32, i32) {
block0(v0: ptr.global, v1: i32, v2: i32):
    v3 = iconst.i32 40
    v4 = shl v1, v3
    v5 = iconst.i32 1
    v6 = select v2, v4, v5
    v7 = freeze v4
    v8 = iconst.i64 0
    v9 = iconst.i64 1
    v10 = iconst.i64 2
    v11 = ptradd v0, v8, 4
    v12 = ptradd v0, v9, 4
    v13 = ptradd v0, v10, 4
    store v6, v11
    store v7, v12
    store v4, v13
    return
}";

#[test]
fn poison_select_freeze_and_memory() {
    // (select on i32 needs an i1 condition: use the low bit via trunc.)
    let src = POISON.replace(
        "v6 = select v2, v4, v5",
        "v20 = trunc.i1 v2\n    v6 = select v20, v4, v5",
    );
    let m = parse(&src);
    let mut mem = Memory::new();
    mem.alloc_from::<i32>("o", &[9, 9, 9]);
    run_kernel(
        &m,
        "k",
        &one(vec![Arg::buffer("o"), Arg::Int(5), Arg::Int(0)]),
        &mut mem,
    )
    .unwrap();
    // select picked the defined arm; freeze gave 0; the raw poison store made poison bytes.
    assert_eq!(&mem.read::<i32>("o").unwrap()[..2], &[1, 0]);
    assert_eq!(
        mem.poison("o").unwrap(),
        &[[false; 8].as_slice(), &[true; 4]].concat()[..]
    );
    run_kernel(
        &m,
        "k",
        &one(vec![Arg::buffer("o"), Arg::Int(5), Arg::Int(1)]),
        &mut mem,
    )
    .unwrap();
    assert!(
        mem.poison("o").unwrap()[..4].iter().all(|&p| p),
        "selected poison is poison"
    );
}

#[test]
fn uninitialized_shared_memory_is_poison() {
    let src = "
global @s: shared [4 x i32] align 4
kernel @k() {
block0:
    v0 = global_addr @s
    v1 = load.i32 v0
    v2 = iconst.i32 0
    v3 = icmp eq v1, v2
    brif v3, block1, block1
block1:
    return
}";
    let e = run(src, "k", &one(vec![]), &mut Memory::new()).unwrap_err();
    assert!(
        matches!(
            e,
            ExecError::Poison {
                what: PoisonUse::Branch,
                ..
            }
        ),
        "{e}"
    );
}

#[test]
fn address_spaces_and_generic_pointers() {
    // A const table read through a generic pointer; shared written through generic and
    // read back through shared; a global buffer through generic; a bad cast is poison.
    let src = "
global @tab: const [4 x i32] align 4 = [10, 20, 30, -40]
global @s: shared [1 x i32] align 4
global @g: global [2 x i32] align 4
kernel @k(ptr.global) {
block0(v0: ptr.global):
    v1 = global_addr @tab
    v2 = addrspace_cast.ptr v1
    v3 = iconst.i64 3
    v4 = ptradd v2, v3, 4
    v5 = load.i32 v4
    v6 = global_addr @s
    v7 = addrspace_cast.ptr v6
    store v5, v7
    v8 = load.i32 v6
    v9 = addrspace_cast.ptr v0
    store v8, v9
    v10 = global_addr @g
    v11 = iconst.i64 1
    v12 = ptradd v10, v11, 4
    store v8, v12
    v13 = addrspace_cast.ptr.shared v9
    v14 = freeze v13
    v15 = ptrtoint.i64 v14
    v16 = iconst.i64 1
    v17 = ptradd v0, v16, 4
    v18 = trunc.i32 v15
    store v18, v17
    return
}";
    let mut mem = Memory::new();
    mem.alloc_from::<i32>("o", &[0, 7]);
    run(src, "k", &one(vec![Arg::buffer("o")]), &mut mem).unwrap();
    // A generic pointer into global memory cast to shared is poison; frozen it is 0.
    assert_eq!(mem.read::<i32>("o").unwrap(), vec![-40, 0]);
    // The module's global-space variable became a buffer of its own.
    assert_eq!(mem.read::<i32>("g").unwrap(), vec![0, -40]);
}

#[test]
fn atomics_and_switch() {
    // Every thread adds tid to a counter, maxes it into another, and classifies tid % 4
    // with a br_table into a histogram.
    let src = "
kernel @k(ptr.global, ptr.global) {
block0(v0: ptr.global, v1: ptr.global):
    v2 = tid.x
    v3 = atomic_add v0, v2
    v4 = iconst.i64 1
    v5 = ptradd v0, v4, 4
    v6 = atomic_smax v5, v2
    v7 = iconst.i32 3
    v8 = and v2, v7
    br_table v8, block4, [0: block1, 1: block2, 2: block3]
block1:
    v10 = iconst.i64 0
    jump block5(v10)
block2:
    v11 = iconst.i64 1
    jump block5(v11)
block3:
    v12 = iconst.i64 2
    jump block5(v12)
block4:
    v13 = iconst.i64 3
    jump block5(v13)
block5(v20: i64):
    v21 = ptradd v1, v20, 4
    v22 = iconst.i32 1
    v23 = atomic_add v21, v22
    return
}";
    let mut mem = Memory::new();
    mem.alloc_from::<i32>("c", &[0, -5]);
    mem.alloc_zeroed("h", 16);
    run(
        src,
        "k",
        &Launch::linear(2, 10, vec![Arg::buffer("c"), Arg::buffer("h")]),
        &mut mem,
    )
    .unwrap();
    assert_eq!(mem.read::<i32>("c").unwrap(), vec![2 * 45, 9]);
    assert_eq!(mem.read::<i32>("h").unwrap(), vec![6, 6, 4, 4]);
}

#[test]
fn atomic_and_plain_access_race() {
    let src = "
kernel @k(ptr.global) {
block0(v0: ptr.global):
    v1 = tid.x
    v2 = iconst.i32 0
    v3 = icmp eq v1, v2
    brif v3, block1, block2
block1:
    store v1, v0
    return
block2:
    v4 = atomic_add v0, v1
    return
}";
    let mut mem = Memory::new();
    mem.alloc_zeroed("c", 4);
    let e = run(
        src,
        "k",
        &Launch::linear(1, 2, vec![Arg::buffer("c")]),
        &mut mem,
    )
    .unwrap_err();
    assert!(matches!(e, ExecError::DataRace { .. }), "{e}");
}

#[test]
fn float_edges() {
    // fcmp ordered/unordered on NaN, fptosi in and out of range, canonical NaN.
    let src = "
kernel @k(ptr.global, f32) {
block0(v0: ptr.global, v1: f32):
    v2 = fcmp olt v1, v1
    v3 = fcmp uno v1, v1
    v4 = zext.i32 v2
    v5 = zext.i32 v3
    v6 = fptosi.i32 v1
    v7 = freeze v6
    v8 = fadd v1, v1
    v9 = bitcast.i32 v8
    v10 = iconst.i64 0
    v11 = iconst.i64 1
    v12 = iconst.i64 2
    v13 = iconst.i64 3
    v14 = ptradd v0, v10, 4
    v15 = ptradd v0, v11, 4
    v16 = ptradd v0, v12, 4
    v17 = ptradd v0, v13, 4
    store v4, v14
    store v5, v15
    store v7, v16
    store v9, v17
    return
}";
    let m = parse(src);
    let go = |x: f32| {
        let mut mem = Memory::new();
        mem.alloc_zeroed("o", 16);
        run_kernel(&m, "k", &one(vec![Arg::buffer("o"), Arg::F32(x)]), &mut mem).unwrap();
        mem.read::<u32>("o").unwrap()
    };
    assert_eq!(go(-2.75), vec![0, 0, (-2i32) as u32, (-5.5f32).to_bits()]);
    assert_eq!(go(f32::from_bits(0x7f80_0001)), vec![0, 1, 0, 0x7fc0_0000]);
    assert_eq!(go(3e9), vec![0, 0, 0, 6e9f32.to_bits()]);
}

#[test]
fn same_behaviour_reports_first_difference() {
    let before = parse(
        "
kernel @k(ptr.global, i32) {
block0(v0: ptr.global, v1: i32):
    v2 = tid.x
    v3 = imul v2, v1
    v4 = sext.i64 v2
    v5 = ptradd v0, v4, 4
    store v3, v5
    return
}",
    );
    // A correct strength reduction for v1 == 2 inputs, and a wrong "optimization".
    let good = parse(&write(&before).replace("v3 = imul v2, v1", "v3 = imul v1, v2"));
    let bad = parse(&write(&before).replace("v3 = imul v2, v1", "v3 = iadd v2, v1"));
    let mut memory = Memory::new();
    memory.alloc_zeroed("o", 16);
    let inputs = Inputs {
        launch: Launch::linear(1, 4, vec![Arg::buffer("o"), Arg::Int(3)]),
        memory,
    };
    assert_same_behaviour(&before, &good, "k", &inputs).unwrap();
    // tid 0: 0*3 = 0 vs 0+3 = 3: byte 0 differs.
    match assert_same_behaviour(&before, &bad, "k", &inputs) {
        Err(Difference::Byte {
            name,
            offset,
            before,
            after,
        }) => {
            assert_eq!((name.as_str(), offset, before, after), ("o", 0, 0, Some(3)));
        }
        other => panic!("{other:?}"),
    }
    // An error on one side only is an outcome difference.
    let trap = parse(&write(&before).replace("v3 = imul v2, v1", "v3 = udiv v1, v2"));
    match assert_same_behaviour(&before, &trap, "k", &inputs) {
        Err(Difference::Outcome {
            before: None,
            after: Some(e),
        }) => {
            assert!(matches!(*e, ExecError::DivisionByZero { .. }))
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn poison_in_the_original_matches_anything() {
    let before = parse(
        "
kernel @k(ptr.global, i32) {
block0(v0: ptr.global, v1: i32):
    v2 = iconst.i32 1
    v3 = iadd nsw v1, v2
    store v3, v0
    return
}",
    );
    let after = parse(&write(&before).replace("iadd nsw", "iadd"));
    let mut memory = Memory::new();
    memory.alloc_zeroed("o", 4);
    let inputs = Inputs {
        launch: one(vec![Arg::buffer("o"), Arg::Int(0x7fff_ffff)]),
        memory,
    };
    // Dropping nsw refines poison to a value: allowed. Adding it is not.
    assert_same_behaviour(&before, &after, "k", &inputs).unwrap();
    assert!(matches!(
        assert_same_behaviour(&after, &before, "k", &inputs),
        Err(Difference::Byte { after: None, .. })
    ));
}

fn write(m: &gyre_ir::Module) -> String {
    let mut s = String::new();
    gyre_ir::write_module(&mut s, m).expect("writing to a String cannot fail");
    s
}

#[test]
fn barrier_inside_a_device_function() {
    // @exchange writes tid to shared, synchronizes, and reads the neighbour's slot.
    let src = "
global @s: shared [64 x i32] align 4
func @exchange(i32, i32) -> i32 convergent {
block0(v0: i32, v1: i32):
    v2 = global_addr @s
    v3 = sext.i64 v0
    v4 = ptradd v2, v3, 4
    store v0, v4
    barrier
    v5 = iconst.i32 1
    v6 = iadd v0, v5
    v7 = urem v6, v1
    v8 = sext.i64 v7
    v9 = ptradd v2, v8, 4
    v10 = load.i32 v9
    barrier
    return v10
}
kernel @k(ptr.global, i32) convergent {
block0(v0: ptr.global, v1: i32):
    v2 = tid.x
    v3 = ntid.x
    v4 = icmp ult v2, v1
    brif v4, block1, block2
block1:
    v5 = call @exchange(v2, v3)
    jump block3(v5)
block2:
    v6 = call @exchange(v2, v3)
    jump block3(v6)
block3(v7: i32):
    v8 = sext.i64 v2
    v9 = ptradd v0, v8, 4
    store v7, v9
    return
}";
    let m = parse(src);
    // All threads take block1: one call site, fine.
    let mut mem = Memory::new();
    mem.alloc_zeroed("o", 32);
    let out = run_kernel(
        &m,
        "k",
        &Launch::linear(1, 8, vec![Arg::buffer("o"), Arg::Int(100)]),
        &mut mem,
    )
    .unwrap();
    assert_eq!(out.barriers, 2);
    assert_eq!(mem.read::<i32>("o").unwrap(), vec![1, 2, 3, 4, 5, 6, 7, 0]);
    // Half the threads call from block2: the same barrier under different call sites.
    let e = run_kernel(
        &m,
        "k",
        &Launch::linear(1, 8, vec![Arg::buffer("o"), Arg::Int(4)]),
        &mut mem,
    )
    .unwrap_err();
    let ExecError::DivergentBarrier {
        loc,
        other_tid,
        other_exited,
    } = &e
    else {
        panic!("{e}")
    };
    assert_eq!(
        (&*loc.function, loc.tid, *other_tid, *other_exited),
        ("exchange", [0, 0, 0], [4, 0, 0], false)
    );
}
