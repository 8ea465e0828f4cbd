//! `Gpu::run` end to end against a stand-in driver (tests/mock/libcuda_mock.c, built
//! here with the system C compiler): the same entry points, looked up by the same names,
//! with host memory for device memory and host versions of two kernels that read their
//! arguments from the parameter buffer as the device does. This checks the FFI layer
//! (signatures, JIT log options, the launch's `extra` array, copies, globals, events,
//! frees) on machines without a GPU; tests/device.rs runs the same path on a real one.

use gyre_gpu::{GlobalInit, Gpu, GpuError, Job, KernelArg, LaunchShape};
use std::path::PathBuf;
use std::process::Command;

/// Build the mock driver into a scratch directory and return its path.
fn build_mock() -> PathBuf {
    let src = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/mock/libcuda_mock.c");
    let dir = std::env::temp_dir().join(format!("gyre-gpu-mock-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let lib = dir.join("libcuda_mock.so");
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let out = Command::new(&cc)
        .args(["-shared", "-fPIC", "-O1", "-o"])
        .arg(&lib)
        .arg(&src)
        .output()
        .unwrap_or_else(|e| panic!("cannot run the C compiler {cc}: {e}"));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    lib
}

fn f32s(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

const SAXPY: &str = ".version 7.0\n.target sm_70\n.address_size 64\n\
    .visible .entry saxpy(\n\t.param .u64 x,\n\t.param .u64 y,\n\t.param .f32 a,\n\t.param .u32 n\n)\n{\n\tret;\n}\n";
const COPY_TAB: &str = ".visible .const .align 4 .b8 tab[16];\n\
    .visible .entry copy_tab(.param .u8 flag, .param .align 8 .b8 s[12], .param .u64 out)\n{\n\tret;\n}\n";

fn shape(threads: u32) -> LaunchShape {
    LaunchShape {
        grid: [1, 1, 1],
        block: [threads, 1, 1],
        dynamic_shared: 0,
    }
}

#[test]
fn runs_through_the_mock_driver() {
    let lib = build_mock();
    let path = lib.to_str().unwrap();
    let gpu = Gpu::open_library(path, 0).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(gpu.name(), "Mock GPU 0");
    assert_eq!(gpu.compute_capability(), (8, 7));
    match Gpu::open_library(path, 1) {
        Err(GpuError::NoDevice { message }) => assert!(message.contains("1 device")),
        other => panic!("{:?}", other.err()),
    }

    // saxpy: the parameter buffer's layout (0, 8, 16, 20; 24 bytes) is what the mock
    // kernel reads; 3 of 4 elements updated; the timed launches restart from the inputs.
    let x = f32s(&[1.0, 2.0, 3.0, 4.0]);
    let y = f32s(&[10.0, 20.0, 30.0, 40.0]);
    let out = gpu
        .run(&Job {
            ptx: SAXPY,
            entry: "saxpy",
            shape: shape(4),
            args: &[
                KernelArg::Buffer(0, 0),
                KernelArg::Buffer(1, 0),
                KernelArg::F32(2.0),
                KernelArg::Int(3),
            ],
            buffers: &[x.clone(), y, Vec::new()],
            globals: &[],
            timed_launches: 3,
        })
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(out.buffers[0], x);
    assert_eq!(out.buffers[1], f32s(&[12.0, 24.0, 36.0, 40.0]));
    assert_eq!(out.buffers[2], Vec::<u8>::new());
    assert_eq!(out.times_ms, vec![0.25; 3]);
    assert_eq!(out.median_ms(), Some(0.25));

    // A by-value struct at offset 8 (`.align 8`), a pointer at 24, and a host-filled
    // global found under its second spelling; the kernel's write to it comes back.
    let tab = GlobalInit {
        symbols: vec!["tab$2E".into(), "tab".into()],
        bytes: f32s(&[1.0, 2.0, 3.0, 4.0]),
    };
    let mut s = vec![0u8; 12];
    s[0] = 100;
    let out = gpu
        .run(&Job {
            ptx: COPY_TAB,
            entry: "copy_tab",
            shape: shape(1),
            args: &[
                KernelArg::Int(7),
                KernelArg::Bytes(s.clone()),
                KernelArg::Buffer(0, 0),
            ],
            buffers: &[vec![0; 20]],
            globals: std::slice::from_ref(&tab),
            timed_launches: 0,
        })
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(out.buffers[0], f32s(&[101.0, 102.0, 103.0, 104.0, 7.0]));
    assert_eq!(out.globals[0], f32s(&[-1.0, 2.0, 3.0, 4.0]));
    assert!(out.times_ms.is_empty());
    // Every allocation of the two runs was freed (a failed run leaves its allocations
    // to the context's destruction, as on the driver).
    // SAFETY: the mock's own counter, `int mock_live_allocs(void)`.
    let live = unsafe {
        let l = libloading::Library::new(path).unwrap();
        let f = l
            .get::<unsafe extern "C" fn() -> i32>(b"mock_live_allocs\0")
            .unwrap();
        f()
    };
    assert_eq!(live, 0);

    // Errors: a global the module lacks, one of another size, a JIT rejection with its
    // log, an entry the PTX declares but the module lacks, arguments that do not fit.
    let job = |ptx: &'static str, entry: &'static str, globals: &[GlobalInit]| {
        let args = [
            KernelArg::Int(0),
            KernelArg::Bytes(s.clone()),
            KernelArg::Buffer(0, 0),
        ];
        gpu.run(&Job {
            ptx,
            entry,
            shape: shape(1),
            args: &args,
            buffers: &[vec![0; 20]],
            globals,
            timed_launches: 0,
        })
    };
    let missing = GlobalInit {
        symbols: vec!["nope".into()],
        bytes: vec![0; 16],
    };
    match job(COPY_TAB, "copy_tab", &[missing]) {
        Err(GpuError::Global { message, .. }) => assert!(message.contains("not in the loaded")),
        other => panic!("{other:?}"),
    }
    let short = GlobalInit {
        symbols: vec!["tab".into()],
        bytes: vec![0; 8],
    };
    match job(COPY_TAB, "copy_tab", &[short]) {
        Err(GpuError::Global { message, .. }) => {
            assert!(
                message.contains("8 bytes given, the module's tab has 16"),
                "{message}"
            )
        }
        other => panic!("{other:?}"),
    }
    const INVALID: &str = "// MOCK_INVALID\n.visible .entry copy_tab(.param .u8 flag, .param .align 8 .b8 s[12], .param .u64 out)\n{\n}\n";
    match job(INVALID, "copy_tab", &[]) {
        Err(e @ GpuError::Jit { .. }) => {
            let text = e.to_string();
            assert!(text.contains("CUDA_ERROR_INVALID_PTX"), "{text}");
            assert!(text.contains("mock rejects this PTX"), "{text}");
        }
        other => panic!("{other:?}"),
    }
    const OTHER: &str = ".visible .entry other(.param .u8 flag, .param .align 8 .b8 s[12], .param .u64 out)\n{\n}\n";
    match job(OTHER, "other", &[]) {
        Err(GpuError::NoEntry { name, available }) => {
            assert_eq!(name, "other");
            assert_eq!(available, vec!["other".to_string()]);
        }
        other => panic!("{other:?}"),
    }
    match job(SAXPY, "saxpy", &[]) {
        Err(GpuError::Arguments { message, .. }) => {
            assert!(
                message.contains("3 arguments given, the entry has 4"),
                "{message}"
            )
        }
        other => panic!("{other:?}"),
    }

    drop(gpu);
    let _ = std::fs::remove_dir_all(lib.parent().unwrap());
}
