//! Globals whose storage comes from the launch: host-initialised (`externally_initialized`)
//! constants and device variables, and the dynamic shared array.

mod common;

use common::{parse, run};
use gyre_interp::{run_kernel, Arg, ExecError, Launch, Memory};

/// A 3-tap filter whose weights live in a host-initialised `__constant__` array, as in
/// the stencil kernels of the CUDA corpus. The module's initializer is zeros (what clang
/// emits for `__constant__ float w[3];`).
const FILTER: &str = "
global @w: const [3 x f32] align 4 visible externally_initialized = [0.0, 0.0, 0.0]

kernel @filter(ptr.global, ptr.global) {
block0(v0: ptr.global, v1: ptr.global):
    v2 = tid.x
    v3 = global_addr @w
    v4 = iconst.i32 0
    v5 = iconst.i32 1
    v6 = iconst.i32 2
    v7 = ptradd v3, v4, 4
    v8 = ptradd v3, v5, 4
    v9 = ptradd v3, v6, 4
    v10 = load.f32 v7
    v11 = load.f32 v8
    v12 = load.f32 v9
    v13 = iadd v2, v5
    v14 = iadd v2, v6
    v15 = ptradd v0, v2, 4
    v16 = ptradd v0, v13, 4
    v17 = ptradd v0, v14, 4
    v18 = load.f32 v15
    v19 = load.f32 v16
    v20 = load.f32 v17
    v21 = fmul v10, v18
    v22 = fmul v11, v19
    v23 = fmul v12, v20
    v24 = fadd v21, v22
    v25 = fadd v24, v23
    v26 = ptradd v1, v2, 4
    store v25, v26
    return
}
";

fn filter_inputs(weights: Option<&[f32]>) -> (Launch, Memory) {
    let mut mem = Memory::new();
    mem.alloc_from::<f32>("in", &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
    mem.alloc_from::<f32>("out", &[0.0; 4]);
    if let Some(w) = weights {
        mem.alloc_from::<f32>("w", w);
    }
    let launch = Launch::linear(1, 4, vec![Arg::buffer("in"), Arg::buffer("out")]);
    (launch, mem)
}

#[test]
fn host_initialised_constant_is_read_from_the_launch() {
    let (launch, mut mem) = filter_inputs(Some(&[1.0, 10.0, 100.0]));
    run(FILTER, "filter", &launch, &mut mem).unwrap();
    // With the module's zeros the output would be all zero: the host's weights count.
    assert_eq!(
        mem.read::<f32>("out").unwrap(),
        vec![321.0, 432.0, 543.0, 654.0]
    );
    let (launch, mut mem) = filter_inputs(Some(&[0.5, 0.0, 0.0]));
    run(FILTER, "filter", &launch, &mut mem).unwrap();
    assert_eq!(mem.read::<f32>("out").unwrap(), vec![0.5, 1.0, 1.5, 2.0]);
}

#[test]
fn host_initialised_constant_without_contents_is_an_error_not_zeros() {
    let (launch, mut mem) = filter_inputs(None);
    let e = run(FILTER, "filter", &launch, &mut mem).unwrap_err();
    assert!(matches!(e, ExecError::BadLaunch { .. }), "{e}");
    let msg = e.to_string();
    assert!(msg.contains("@w is externally_initialized"), "{msg}");
    // A buffer too small for the global is refused too.
    let (launch, mut mem) = filter_inputs(Some(&[1.0]));
    let e = run(FILTER, "filter", &launch, &mut mem).unwrap_err();
    assert!(matches!(e, ExecError::BadLaunch { .. }), "{e}");
}

#[test]
fn host_initialised_constant_stays_read_only() {
    let src = "
global @w: const [1 x i32] align 4 visible externally_initialized = [0]
kernel @k() {
block0:
    v0 = global_addr @w
    v1 = iconst.i32 3
    store v1, v0
    return
}
";
    let mut mem = Memory::new();
    mem.alloc_from::<i32>("w", &[1]);
    let e = run(src, "k", &Launch::linear(1, 1, vec![]), &mut mem).unwrap_err();
    assert!(matches!(e, ExecError::ConstWrite { .. }), "{e}");
    // The caller's buffer is the host's copy: the kernel's view is a copy of it.
    assert_eq!(mem.read::<i32>("w").unwrap(), vec![1]);
}

#[test]
fn host_initialised_device_variable_is_the_callers_buffer() {
    // A `__device__ int n;` the host sets: reads see the host's value, writes reach it.
    let src = "
global @n: global [1 x i32] align 4 visible externally_initialized = [0]
kernel @k() {
block0:
    v0 = global_addr @n
    v1 = load.i32 v0
    v2 = iadd v1, v1
    store v2, v0
    return
}
";
    let mut mem = Memory::new();
    mem.alloc_from::<i32>("n", &[21]);
    run(src, "k", &Launch::linear(1, 1, vec![]), &mut mem).unwrap();
    assert_eq!(mem.read::<i32>("n").unwrap(), vec![42]);
    let e = run(src, "k", &Launch::linear(1, 1, vec![]), &mut Memory::new()).unwrap_err();
    assert!(matches!(e, ExecError::BadLaunch { .. }), "{e}");
}

/// Reverse a block through dynamic shared memory, seen through two `extern` arrays (which
/// alias, as in CUDA).
const REVERSE: &str = "
global @s: shared [0 x i32] align 4 extern
global @t: shared [0 x i32] align 16 extern

kernel @rev(ptr.global) convergent {
block0(v0: ptr.global):
    v1 = tid.x
    v2 = ntid.x
    v3 = ptradd v0, v1, 4
    v4 = load.i32 v3
    v5 = global_addr @s
    v6 = ptradd v5, v1, 4
    store v4, v6
    barrier
    v7 = iconst.i32 1
    v8 = isub v2, v1
    v9 = isub v8, v7
    v10 = global_addr @t
    v11 = ptradd v10, v9, 4
    v12 = load.i32 v11
    store v12, v3
    return
}
";

#[test]
fn extern_shared_arrays_share_the_dynamic_shared_memory() {
    let m = parse(REVERSE);
    let mut mem = Memory::new();
    mem.alloc_from::<i32>("a", &[1, 2, 3, 4, 5, 6, 7, 8]);
    let mut launch = Launch::linear(1, 8, vec![Arg::buffer("a")]);
    launch.dynamic_shared_bytes = 32;
    run_kernel(&m, "rev", &launch, &mut mem).unwrap();
    assert_eq!(mem.read::<i32>("a").unwrap(), vec![8, 7, 6, 5, 4, 3, 2, 1]);
}

#[test]
fn extern_shared_arrays_hold_only_the_launch_bytes() {
    let m = parse(REVERSE);
    let mut mem = Memory::new();
    mem.alloc_from::<i32>("a", &[1, 2, 3, 4]);
    let mut launch = Launch::linear(1, 4, vec![Arg::buffer("a")]);
    launch.dynamic_shared_bytes = 8;
    let e = run_kernel(&m, "rev", &launch, &mut mem).unwrap_err();
    assert!(matches!(e, ExecError::OutOfBounds { .. }), "{e}");
}
