//! `ptradd` with a variable index through export and import (the roundtrip_llvm fuzz
//! finding 54009023): a scale that is an integer type's size exports as a GEP over that
//! type, which imports back as one `ptradd`, so a round-tripped kernel executes as many
//! instructions as the original; other scales keep the byte GEP of `sext` and `mul`.
//! Negative indices of every width check that the index is sign-extended both ways, and
//! LLVM 14 accepts both pointer styles.

use gyre_interp::{run_kernel, Arg, Launch, Memory};
use gyre_ir::verifier::verify_module;
use gyre_ir::{Module, Opcode};
use gyre_llvm::{export_module, import_module, ExportOptions};
use gyre_test_tools::Tool;
use std::process::Command;

/// `out[tid] = sum of loads at base + sext(idx) * scale` for indices of every width and
/// the scales 1, 2, 4, 8 (a type's size) and 12 (none), in a loop so that the steps
/// count; `base` points into the middle of `buf`, and the indices come from `idx`
/// (negative ones too).
const SRC: &str = "kernel @k(ptr.global, ptr.global, ptr.global) {
block0(v0: ptr.global, v1: ptr.global, v2: ptr.global):
    v3 = tid.x
    v4 = iconst.i32 64
    v5 = ptradd v0, v4, 4
    v6 = ptradd v2, v3, 4
    v7 = load.i32 v6
    v8 = iconst.i32 0
    jump block1(v8, v8)
block1(v9: i32, v10: i32):
    v11 = iconst.i32 4
    v12 = icmp slt v9, v11
    brif v12, block2, block3
block2:
    v13 = iadd v7, v9
    v14 = trunc.i8 v13
    v15 = ptradd v5, v14, 1
    v16 = load.i8 v15
    v17 = sext.i32 v16
    v18 = trunc.i16 v13
    v19 = ptradd v5, v18, 2
    v20 = load.i16 v19
    v21 = sext.i32 v20
    v22 = ptradd v5, v13, 4
    v23 = load.i32 v22
    v24 = sext.i64 v13
    v25 = ptradd v5, v24, 8
    v26 = load.i32 v25
    v27 = ptradd v5, v13, 12
    v28 = load.i32 v27
    v29 = iadd v17, v21
    v30 = iadd v29, v23
    v31 = iadd v30, v26
    v32 = iadd v31, v28
    v33 = iadd v10, v32
    v34 = iconst.i32 1
    v35 = iadd v9, v34
    jump block1(v35, v33)
block3:
    v36 = ptradd v1, v3, 4
    store v10, v36
    return
}
";

fn module() -> Module {
    gyre_ir::parse_module(SRC).unwrap_or_else(|e| panic!("{}", e.render("ptradd", SRC)))
}

fn opts(opaque: bool) -> ExportOptions {
    ExportOptions {
        opaque_pointers: opaque,
    }
}

/// How many instructions of the kernel have `opcode`.
fn count(m: &Module, opcode: Opcode) -> usize {
    let f = &m.functions[m.func_by_name("k").expect("kernel k")];
    f.layout
        .blocks()
        .flat_map(|b| f.layout.block_insts(b))
        .filter(|&i| f.dfg.inst(i).opcode() == opcode)
        .count()
}

/// Run the kernel on 8 threads; the output buffer and the steps it took.
fn run(m: &Module) -> (Vec<i32>, u64) {
    let mut mem = Memory::new();
    // Bytes with distinct values, so that every width and offset reads something else.
    let buf: Vec<i32> = (0..128).map(|i| i * 0x0101_0101 - 0x4000_0000).collect();
    mem.alloc_from("buf", &buf);
    mem.alloc_from("out", &[0i32; 8]);
    mem.alloc_from("idx", &[-5i32, -1, 0, 1, 3, -4, 2, -2]);
    let launch = Launch::linear(
        1,
        8,
        vec![Arg::buffer("buf"), Arg::buffer("out"), Arg::buffer("idx")],
    );
    let outcome = run_kernel(m, "k", &launch, &mut mem).expect("the kernel runs");
    (mem.read::<i32>("out").unwrap(), outcome.steps)
}

#[test]
fn ptradd_round_trips_as_one_instruction() {
    let m = module();
    let (want, steps) = run(&m);
    for opaque in [false, true] {
        let text = export_module(&m, &opts(opaque));
        // Scales 1, 2, 4 and 8 are GEPs over i8, i16, i32 and i64 with the index as it is;
        // 12 is a byte GEP of a sign-extended, multiplied index.
        for gep in [
            "getelementptr i16, ",
            "getelementptr i32, ",
            "getelementptr i64, ",
        ] {
            assert!(text.contains(gep), "no `{gep}` in\n{text}");
        }
        assert!(text.contains("mul i64"), "scale 12 multiplies:\n{text}");
        let back = import_module(&text)
            .unwrap_or_else(|e| panic!("re-import failed: {}\n{text}", e.render("export")));
        verify_module(&back).unwrap_or_else(|e| panic!("{e}\n{text}"));
        assert_eq!(count(&back, Opcode::PtrAdd), count(&m, Opcode::PtrAdd));
        // Only the scale-12 index is widened and multiplied.
        assert_eq!(count(&back, Opcode::Sext), count(&m, Opcode::Sext) + 1);
        assert_eq!(count(&back, Opcode::Imul), 1);
        let (got, back_steps) = run(&back);
        assert_eq!(
            got, want,
            "opaque {opaque}: same result after the round trip"
        );
        // The scale-12 `sext` and `imul` run 4 times on 8 threads; the byte GEPs of the
        // other scales added 6 instructions per iteration, 192 steps.
        assert!(
            back_steps <= steps + 2 * 4 * 8 + 16,
            "opaque {opaque}: {back_steps} steps after the round trip, {steps} before"
        );
    }
}

#[test]
fn ptradd_export_passes_opt() {
    let Some(opt) = gyre_test_tools::require(Tool::Opt, "ptradd_export_passes_opt") else {
        return;
    };
    let m = module();
    for opaque in [false, true] {
        let text = export_module(&m, &opts(opaque));
        let p = std::env::temp_dir().join(format!(
            "gyre-llvm-ptradd-{}-{opaque}.ll",
            std::process::id()
        ));
        std::fs::write(&p, &text).expect("temp dir is writable");
        let mut cmd = Command::new(&opt);
        cmd.args(["-passes=verify", "-disable-output"]);
        if opaque {
            cmd.arg("-opaque-pointers");
        }
        let out = cmd.arg(&p).output().expect("opt runs");
        let _ = std::fs::remove_file(&p);
        assert!(
            out.status.success(),
            "opt rejects the export:\n{}\n{text}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}
