//! The CUDA corpus kernels with warp collectives, ordered and system-scope atomics and
//! fences, end to end: the import runs in the interpreter, Gyre's PTX (sm_70/80/90,
//! through ptxas when present) and LLVM 14 `llc -mcpu=sm_70`'s PTX of the input run in
//! ptx-sim, and the three agree on every buffer byte the interpreter did not leave
//! poison.

use gyre_codegen_lite::{compile_module, CodegenOptions, Sm};
use gyre_interp::{Arg, Launch, Memory};
use gyre_test_tools::Tool;
use std::path::Path;

/// One kernel: file, mangled name, launch and buffers (`name`, bytes).
struct Case {
    file: &'static str,
    kernel: &'static str,
    grid: [u32; 3],
    block: [u32; 3],
    /// Buffers, in parameter order where `args` says `Buf(i)`.
    buffers: Vec<Vec<u8>>,
    args: Vec<A>,
}

#[derive(Clone, Copy)]
enum A {
    Buf(usize),
    I32(i32),
}

fn words(v: impl IntoIterator<Item = u32>) -> Vec<u8> {
    v.into_iter().flat_map(u32::to_le_bytes).collect()
}

fn cases() -> Vec<Case> {
    let mut x = 0x9e37_79b9u32;
    let mut rnd = move || {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        x
    };
    vec![
        Case {
            file: "cudasamples__simpleVoteIntrinsics_VoteAnyKernel3.ll",
            kernel: "_Z14VoteAnyKernel3Pbi",
            grid: [1, 1, 1],
            block: [96, 1, 1],
            buffers: vec![vec![0; 3 * 96]],
            args: vec![A::Buf(0), A::I32(32)],
        },
        Case {
            file: "cudasamples__simpleAtomicIntrinsics_testKernel.ll",
            kernel: "_Z10testKernelPi",
            grid: [2, 1, 1],
            block: [64, 1, 1],
            buffers: vec![words([0, 0, 0xffff, 0, 0xff, 0, 0, 0, 0, 0, 0])],
            args: vec![A::Buf(0)],
        },
        Case {
            file: "cudasamples__systemWideAtomics_atomicKernel.ll",
            kernel: "_Z12atomicKernelPi",
            grid: [2, 1, 1],
            block: [64, 1, 1],
            buffers: vec![words([0, 0, 0xffff, 0, 0xff, 0, 0, 0, 0, 0, 0])],
            args: vec![A::Buf(0)],
        },
        {
            // Bit-packing with atomicOr: 32 threads, 4 source words each, destination
            // positions the prefix sums of the bit sizes. Sizes are whole words: with
            // others, a thread's last atomicOr reaches the word after its range, which
            // the next thread stores to plainly, a real race the interpreter reports.
            let sizes: Vec<u32> = (0..32).map(|_| 32 * (1 + rnd() % 4)).collect();
            let pos: Vec<u32> = sizes
                .iter()
                .scan(0, |acc, &s| {
                    let p = *acc;
                    *acc += s;
                    Some(p)
                })
                .collect();
            let total: u32 = sizes.iter().sum();
            Case {
                file: "rodinia__huffman_pack2.ll",
                kernel: "_ZL5pack2PjS_S_S_j",
                grid: [2, 1, 1],
                block: [16, 1, 1],
                buffers: vec![
                    words((0..128).map(|_| rnd())),
                    words(sizes),
                    words(pos),
                    words((0..total / 32 + 2).map(|_| 0)),
                ],
                args: vec![A::Buf(0), A::Buf(1), A::Buf(2), A::Buf(3), A::I32(4)],
            }
        },
        Case {
            file: "cudasamples__shfl_scan_shfl_vertical_shfl.ll",
            kernel: "_Z18shfl_vertical_shflPjii",
            // The kernel walks 135 steps of 8 rows whatever the height.
            grid: [1, 1, 1],
            block: [32, 8, 1],
            buffers: vec![words((0..32 * 1080).map(|_| rnd() % 1000))],
            args: vec![A::Buf(0), A::I32(32), A::I32(1080)],
        },
    ]
}

/// Run PTX in ptx-sim; the final contents of every buffer.
fn sim(ptx: &str, kernel: &str, c: &Case) -> Result<Vec<Vec<u8>>, String> {
    let m = gyre_ptx_sim::parse(ptx).map_err(|e| format!("ptx-sim parse: {e}"))?;
    let mut mem = gyre_ptx_sim::Memory::new();
    let bases: Vec<u64> = c
        .buffers
        .iter()
        .map(|b| {
            let base = mem.alloc(b.len().max(1), 256);
            mem.write_bytes(base, b).expect("fresh allocation");
            base
        })
        .collect();
    let params: Vec<_> = c
        .args
        .iter()
        .map(|a| match *a {
            A::Buf(i) => gyre_ptx_sim::ParamValue::U64(bases[i]),
            A::I32(v) => gyre_ptx_sim::ParamValue::U32(v as u32),
        })
        .collect();
    let launch = gyre_ptx_sim::Launch {
        grid: c.grid,
        block: c.block,
    };
    gyre_ptx_sim::run_kernel(&m, kernel, &launch, &params, &mut mem)
        .map_err(|e| format!("ptx-sim: {e}"))?;
    Ok(bases
        .iter()
        .zip(&c.buffers)
        .map(|(&b, buf)| mem.read_bytes(b, buf.len()).expect("allocated"))
        .collect())
}

#[test]
fn warp_and_atomic_kernels_agree_in_the_interpreter_and_both_ptx() {
    let Some(corpus) = gyre_test_tools::corpus("cuda", "warp_corpus") else {
        return;
    };
    let ptxas = gyre_test_tools::require(Tool::Ptxas, "warp_corpus (ptxas)");
    let llc = gyre_test_tools::require(Tool::Llc, "warp_corpus (llc)");
    for c in cases() {
        let path = corpus.join(c.file).display().to_string();
        let src = std::fs::read_to_string(&path).unwrap();
        let m = gyre_llvm::import_module(&src).unwrap_or_else(|e| panic!("{}", e.render(&path)));

        // The interpreter on the import.
        let mut imem = Memory::new();
        let names: Vec<String> = (0..c.buffers.len()).map(|i| format!("b{i}")).collect();
        for (n, b) in names.iter().zip(&c.buffers) {
            imem.alloc_buffer(n, b.clone());
        }
        let args = c
            .args
            .iter()
            .map(|a| match *a {
                A::Buf(i) => Arg::buffer(&names[i]),
                A::I32(v) => Arg::Int(v as u32 as u64),
            })
            .collect();
        let mut launch = Launch::linear(1, 1, args);
        launch.grid = c.grid;
        launch.block = c.block;
        gyre_interp::run_kernel(&m, c.kernel, &launch, &mut imem)
            .unwrap_or_else(|e| panic!("{}: interpreter: {e}", c.file));
        let check = |what: &str, got: Vec<Vec<u8>>| {
            for (i, n) in names.iter().enumerate() {
                let want = imem.bytes(n).unwrap();
                let poison = imem.poison(n).unwrap();
                for j in 0..want.len() {
                    assert!(
                        poison[j] || want[j] == got[i][j],
                        "{}: {what}: buffer {i} byte {j}: interpreter {:#x}, ptx-sim {:#x}",
                        c.file,
                        want[j],
                        got[i][j]
                    );
                }
            }
        };
        // The buffers must have been written, or the comparison proves little.
        assert!(
            names
                .iter()
                .zip(&c.buffers)
                .any(|(n, b)| imem.bytes(n).unwrap() != &b[..]),
            "{}: the kernel wrote nothing",
            c.file
        );

        for sm in [Sm::Sm70, Sm::Sm80, Sm::Sm90] {
            let ptx = compile_module(&m, &CodegenOptions { sm })
                .unwrap_or_else(|e| panic!("{}: codegen: {e}", c.file));
            if let Some(p) = &ptxas {
                gyre_test_tools::run_ptxas(p, &ptx, sm.target())
                    .unwrap_or_else(|e| panic!("{} {}: ptxas: {e}", c.file, sm.target()));
            }
            let got = sim(&ptx, &gyre_codegen_lite::mangle(c.kernel), &c)
                .unwrap_or_else(|e| panic!("{}: Gyre PTX: {e}", c.file));
            check("Gyre PTX", got);
        }
        if let Some(llc) = &llc {
            let out = std::process::Command::new(llc)
                .args(["-mcpu=sm_70", "-o", "-", &path])
                .output()
                .unwrap();
            assert!(out.status.success(), "{}: llc failed", c.file);
            let ptx = String::from_utf8(out.stdout).unwrap();
            let got =
                sim(&ptx, c.kernel, &c).unwrap_or_else(|e| panic!("{}: llc PTX: {e}", c.file));
            check("llc PTX", got);
        }
    }
}

/// llc's PTX of shfl_scan_test (shfl.sync.up with a computed clamp, dynamic shared
/// memory) runs in ptx-sim and computes the inclusive scan of each CTA.
#[test]
fn llc_shfl_scan_test_runs_in_ptx_sim() {
    let Some(corpus) = gyre_test_tools::corpus("cuda", "llc_shfl_scan_test") else {
        return;
    };
    let path = corpus
        .join("cudasamples__shfl_scan_shfl_scan_test.ll")
        .display()
        .to_string();
    let Some(llc) = gyre_test_tools::require(Tool::Llc, "llc_shfl_scan_test") else {
        return;
    };
    if !Path::new(&path).exists() {
        panic!("{path} is listed in the corpus but missing");
    }
    let out = std::process::Command::new(llc)
        .args(["-mcpu=sm_70", "-o", "-", &path])
        .output()
        .unwrap();
    assert!(out.status.success());
    let ptx = String::from_utf8(out.stdout).unwrap();
    let m = gyre_ptx_sim::parse(&ptx).unwrap();
    let n = 256u32;
    let data: Vec<u32> = (0..n).map(|i| i % 7 + 1).collect();
    let mut mem = gyre_ptx_sim::Memory::new();
    let d = mem.alloc(4 * n as usize, 256);
    mem.write_bytes(d, &words(data.iter().copied())).unwrap();
    let sums = mem.alloc(4 * 8, 256);
    let params = [
        gyre_ptx_sim::ParamValue::U64(d),
        gyre_ptx_sim::ParamValue::U32(32),
        gyre_ptx_sim::ParamValue::U64(sums),
    ];
    let opts = gyre_ptx_sim::RunOptions {
        dynamic_shared_bytes: 4 * 8,
        ..Default::default()
    };
    gyre_ptx_sim::run_kernel_with_options(
        &m,
        "_Z14shfl_scan_testPiiS_",
        &gyre_ptx_sim::Launch {
            grid: [1, 1, 1],
            block: [n, 1, 1],
        },
        &params,
        &mut mem,
        &opts,
    )
    .unwrap();
    let got = mem.read_bytes(d, 4 * n as usize).unwrap();
    let mut acc = 0;
    for (i, x) in data.iter().enumerate() {
        acc += x;
        let v = u32::from_le_bytes(got[4 * i..4 * i + 4].try_into().unwrap());
        assert_eq!(v, acc, "element {i}");
    }
}
