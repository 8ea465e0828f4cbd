//! Driver loading errors (no device needed) and runs on a real GPU, which are skipped,
//! with the reason printed, only when no driver or no device is found.

use gyre_gpu::{Gpu, GpuError, Job, KernelArg, LaunchShape};

#[test]
fn no_library_is_no_driver() {
    match Gpu::open_library("/nonexistent/libcuda.so.1", 0) {
        Err(e @ GpuError::NoDriver { .. }) => {
            assert!(e.to_string().contains("/nonexistent/libcuda.so.1"), "{e}")
        }
        Err(e) => panic!("{e}"),
        Ok(_) => panic!("opened a library that does not exist"),
    }
}

#[test]
fn a_library_that_is_not_the_driver_lacks_its_symbols() {
    // libc loads everywhere Gyre runs, and has no cuInit.
    match Gpu::open_library("libc.so.6", 0) {
        Err(GpuError::MissingSymbol { symbol, .. }) => assert_eq!(symbol, "cuInit"),
        Err(e) => panic!("{e}"),
        Ok(_) => panic!("libc taken for the CUDA driver"),
    }
}

/// The device, or `None` after printing why the device tests are skipped (only for no
/// driver or no device; any other failure fails the test).
fn device(test: &str) -> Option<Gpu> {
    match Gpu::open() {
        Ok(g) => Some(g),
        Err(e @ (GpuError::NoDriver { .. } | GpuError::NoDevice { .. })) => {
            eprintln!("skipping {test}: no GPU: {e}");
            None
        }
        Err(e) => panic!("{e}"),
    }
}

/// `y[i] = a * x[i] + y[i]` for `i < n`, hand-written so the test needs no compiler.
const SAXPY: &str = r#"
.version 7.0
.target sm_70
.address_size 64
.visible .entry saxpy(.param .u64 x, .param .u64 y, .param .f32 a, .param .u32 n)
{
    .reg .pred %p<2>; .reg .b32 %r<6>; .reg .f32 %f<5>; .reg .b64 %rd<8>;
    ld.param.u64 %rd1, [x]; ld.param.u64 %rd2, [y];
    ld.param.f32 %f1, [a]; ld.param.u32 %r1, [n];
    mov.u32 %r2, %ctaid.x; mov.u32 %r3, %ntid.x; mov.u32 %r4, %tid.x;
    mad.lo.s32 %r5, %r2, %r3, %r4;
    setp.ge.u32 %p1, %r5, %r1;
    @%p1 bra DONE;
    cvta.to.global.u64 %rd3, %rd1; cvta.to.global.u64 %rd4, %rd2;
    mul.wide.u32 %rd5, %r5, 4;
    add.s64 %rd6, %rd3, %rd5; add.s64 %rd7, %rd4, %rd5;
    ld.global.f32 %f2, [%rd6]; ld.global.f32 %f3, [%rd7];
    fma.rn.f32 %f4, %f1, %f2, %f3;
    st.global.f32 [%rd7], %f4;
DONE:
    ret;
}
"#;

fn f32s(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

#[test]
fn saxpy_on_the_device() {
    let Some(gpu) = device("saxpy_on_the_device") else {
        return;
    };
    let n = 1000usize;
    let x: Vec<f32> = (0..n).map(|i| i as f32).collect();
    let y: Vec<f32> = (0..n).map(|i| 1.0 - i as f32).collect();
    let out = gpu
        .run(&Job {
            ptx: SAXPY,
            entry: "saxpy",
            shape: LaunchShape {
                grid: [8, 1, 1],
                block: [128, 1, 1],
                dynamic_shared: 0,
            },
            args: &[
                KernelArg::Buffer(0, 0),
                KernelArg::Buffer(1, 0),
                KernelArg::F32(2.0),
                KernelArg::Int(n as u64 - 1),
            ],
            buffers: &[f32s(&x), f32s(&y)],
            globals: &[],
            timed_launches: 3,
        })
        .unwrap();
    let want: Vec<f32> = (0..n)
        .map(|i| if i < n - 1 { 2.0 * x[i] + y[i] } else { y[i] })
        .collect();
    assert_eq!(out.buffers[0], f32s(&x));
    assert_eq!(out.buffers[1], f32s(&want));
    assert_eq!(out.times_ms.len(), 3);
    assert!(out.median_ms().unwrap() >= 0.0);
}

#[test]
fn jit_errors_carry_the_log() {
    let Some(gpu) = device("jit_errors_carry_the_log") else {
        return;
    };
    let bad = SAXPY.replace("fma.rn.f32", "fma.rn.q32");
    match gpu.run(&Job {
        ptx: &bad,
        entry: "saxpy",
        shape: LaunchShape {
            grid: [1; 3],
            block: [1; 3],
            dynamic_shared: 0,
        },
        args: &[
            KernelArg::Buffer(0, 0),
            KernelArg::Buffer(0, 0),
            KernelArg::F32(0.0),
            KernelArg::Int(0),
        ],
        buffers: &[vec![0; 4]],
        globals: &[],
        timed_launches: 0,
    }) {
        Err(GpuError::Jit { log, .. }) => assert!(!log.is_empty()),
        other => panic!("{other:?}"),
    }
}
