//! `llvm.memcpy`/`memmove`/`memset` of a variable length (and of a constant one too long
//! to unroll), which the importer expands into a guarded byte loop at the call site.
//! Each kernel runs in the interpreter, for lengths including 0 and odd ones and for
//! `memmove` overlapping both ways, to the bytes a model computes; then again after
//! `loop-simplify,lcssa,loop(loop-rotate)` (verified after each pass). The input, the
//! export of both modules (LLVM 14 `opt -passes=verify`) and their PTX (`ptxas`, sm_70)
//! are checked too, and that PTX (with llc's of the input) runs in ptx-sim to the model.

use gyre_codegen_lite::{compile_module, CodegenOptions, Sm};
use gyre_interp::{run_kernel, Arg, Launch, Memory};
use gyre_ir::verifier::verify_module;
use gyre_ir::{Function, Module};
use gyre_llvm::{export_module, import_module, ExportOptions};
use gyre_test_tools::Tool;
use gyre_transforms::{Knobs, Options, PassManager};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};

const SRC: &str = r#"target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

declare void @llvm.memcpy.p1i8.p1i8.i64(i8 addrspace(1)*, i8 addrspace(1)*, i64, i1)
declare void @llvm.memmove.p1i8.p1i8.i32(i8 addrspace(1)*, i8 addrspace(1)*, i32, i1)
declare void @llvm.memset.p1i8.i64(i8 addrspace(1)*, i8, i64, i1)
declare void @llvm.memset.p0i8.i32(i8*, i8, i32, i1)
declare void @llvm.memcpy.p1i8.p0i8.i32(i8 addrspace(1)*, i8*, i32, i1)

; Two copies in one block (the block is split twice), then a store after them:
; d[0..n] = s[0..n]; d[n..2n] = s[0..n]; d[2n] = 0x77.
define void @cpy(i8 addrspace(1)* %d, i8 addrspace(1)* %s, i64 %n) {
entry:
  call void @llvm.memcpy.p1i8.p1i8.i64(i8 addrspace(1)* align 4 %d, i8 addrspace(1)* align 4 %s, i64 %n, i1 false)
  %d2 = getelementptr i8, i8 addrspace(1)* %d, i64 %n
  call void @llvm.memcpy.p1i8.p1i8.i64(i8 addrspace(1)* %d2, i8 addrspace(1)* %s, i64 %n, i1 false)
  %n2 = shl i64 %n, 1
  %e = getelementptr i8, i8 addrspace(1)* %d, i64 %n2
  store i8 119, i8 addrspace(1)* %e, align 1
  ret void
}

; memmove(buf + doff, buf + soff, n) with an i32 length, volatile.
define void @mv(i8 addrspace(1)* %buf, i32 %doff, i32 %soff, i32 %n) {
entry:
  %dx = sext i32 %doff to i64
  %sx = sext i32 %soff to i64
  %dp = getelementptr i8, i8 addrspace(1)* %buf, i64 %dx
  %sp = getelementptr i8, i8 addrspace(1)* %buf, i64 %sx
  call void @llvm.memmove.p1i8.p1i8.i32(i8 addrspace(1)* %dp, i8 addrspace(1)* %sp, i32 %n, i1 true)
  ret void
}

; A conditional memset in a block its successor's phi names:
; if n > 3 { d[0..n] = v; t = 1 } else { t = 2 }; d[n] = t.
define void @set(i8 addrspace(1)* %d, i32 %v, i64 %n) {
entry:
  %c = icmp ugt i64 %n, 3
  %vb = trunc i32 %v to i8
  br i1 %c, label %a, label %j
a:
  call void @llvm.memset.p1i8.i64(i8 addrspace(1)* align 8 %d, i8 %vb, i64 %n, i1 false)
  br label %j
j:
  %t = phi i8 [ 1, %a ], [ 2, %entry ]
  %e = getelementptr i8, i8 addrspace(1)* %d, i64 %n
  store i8 %t, i8 addrspace(1)* %e, align 1
  ret void
}

; A local buffer: a constant 300-byte memset (too long to unroll), one of a variable
; i32 length, then an alloca after the splits, a constant 300-byte copy out of it to d:
; d[0..300] = n bytes of v then zeros; d[300] = 9 (through the second alloca).
define void @loc(i8 addrspace(1)* %d, i32 %v, i32 %n) {
entry:
  %buf = alloca [300 x i8], align 1
  %b = getelementptr [300 x i8], [300 x i8]* %buf, i64 0, i64 0
  call void @llvm.memset.p0i8.i32(i8* %b, i8 0, i32 300, i1 false)
  %vb = trunc i32 %v to i8
  call void @llvm.memset.p0i8.i32(i8* %b, i8 %vb, i32 %n, i1 false)
  %x = alloca i8, align 1
  store i8 9, i8* %x, align 1
  call void @llvm.memcpy.p1i8.p0i8.i32(i8 addrspace(1)* %d, i8* %b, i32 300, i1 false)
  %y = load i8, i8* %x, align 1
  %e = getelementptr i8, i8 addrspace(1)* %d, i64 300
  store i8 %y, i8 addrspace(1)* %e, align 1
  ret void
}

!nvvm.annotations = !{!0, !1, !2, !3}
!0 = !{void (i8 addrspace(1)*, i8 addrspace(1)*, i64)* @cpy, !"kernel", i32 1}
!1 = !{void (i8 addrspace(1)*, i32, i32, i32)* @mv, !"kernel", i32 1}
!2 = !{void (i8 addrspace(1)*, i32, i64)* @set, !"kernel", i32 1}
!3 = !{void (i8 addrspace(1)*, i32, i32)* @loc, !"kernel", i32 1}
"#;

/// `opt -passes=verify` accepts `text` (skipped with a notice when LLVM 14 is missing).
fn llvm_accepts(text: &str, tag: &str) {
    let Some(opt) = gyre_test_tools::require(Tool::Opt, tag) else {
        return;
    };
    // Tests run in parallel: a file per call.
    static N: AtomicUsize = AtomicUsize::new(0);
    let k = N.fetch_add(1, Ordering::Relaxed);
    let p = std::env::temp_dir().join(format!("gyre-memv-{}-{k}-{tag}.ll", std::process::id()));
    std::fs::write(&p, text).expect("temp dir is writable");
    let out = Command::new(opt)
        .args(["-passes=verify", "-S", "-o", "/dev/null"])
        .arg(&p)
        .output()
        .expect("opt runs");
    let _ = std::fs::remove_file(&p);
    assert!(
        out.status.success(),
        "opt rejects {tag}:\n{}\n{text}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The imported module and the same after `loop-simplify,lcssa,loop(loop-rotate)`.
fn modules() -> Vec<(&'static str, Module)> {
    llvm_accepts(SRC, "input");
    let m = import_module(SRC).unwrap_or_else(|e| panic!("{}", e.render("mem_loops.ll")));
    verify_module(&m).unwrap_or_else(|e| panic!("imported module does not verify: {e:?}"));
    let mut r = m.clone();
    let opts = Options {
        verify_each: true,
        ..Options::default()
    };
    let mut pm =
        PassManager::from_pipeline(gyre_transforms::DEFAULT_PIPELINE, Knobs::default(), opts)
            .expect("pipeline");
    pm.run_module(&mut r)
        .expect("the pipeline runs and verifies");
    verify_module(&r).unwrap_or_else(|e| panic!("rotated module does not verify: {e:?}"));
    vec![("imported", m), ("rotated", r)]
}

/// Run kernel `k` of `m` with buffer `b` (initially `init`) and the given scalars.
fn run(m: &Module, k: &str, init: &[u8], scalars: &[u64]) -> Vec<u8> {
    let mut mem = Memory::new();
    mem.alloc_from("b", init);
    let mut args = vec![Arg::buffer("b")];
    args.extend(scalars.iter().map(|&s| Arg::Int(s)));
    run_kernel(m, k, &Launch::linear(1, 1, args), &mut mem)
        .unwrap_or_else(|e| panic!("{k} {scalars:?}: {e}"));
    mem.read::<u8>("b").unwrap()
}

fn text(m: &Module) -> String {
    let mut s = String::new();
    gyre_ir::write_module(&mut s, m).expect("writes");
    s
}

fn pattern(n: usize) -> Vec<u8> {
    (0..n).map(|i| (i * 37 + 11) as u8).collect()
}

const LENS: [u64; 9] = [0, 1, 2, 3, 4, 5, 7, 16, 33];

#[test]
fn memcpy_of_a_variable_length() {
    for (tag, m) in modules() {
        for n in LENS {
            let n = n as usize;
            // `s` follows `d` in one buffer: d is 2n+1 bytes, s is n bytes.
            let init = pattern(3 * n + 8);
            let mut want = init.clone();
            let s = 2 * n + 1;
            want.copy_within(s..s + n, 0);
            want.copy_within(s..s + n, n);
            want[2 * n] = 0x77;
            let mut mem = Memory::new();
            mem.alloc_from("b", &init[..]);
            let args = vec![
                Arg::buffer("b"),
                Arg::Buffer("b".into(), s as u64),
                Arg::Int(n as u64),
            ];
            run_kernel(&m, "cpy", &Launch::linear(1, 1, args), &mut mem)
                .unwrap_or_else(|e| panic!("{tag} cpy {n}: {e}"));
            assert_eq!(mem.read::<u8>("b").unwrap(), want, "{tag}: cpy n = {n}");
        }
    }
}

#[test]
fn memmove_overlapping_both_ways() {
    for (tag, m) in modules() {
        for n in LENS {
            let n = n as usize;
            // Destination above the source (backwards), below it (forwards), equal,
            // and apart.
            for (doff, soff) in [(3, 0), (1, 0), (0, 3), (0, 1), (2, 2), (40, 0)] {
                let init = pattern(n + 48);
                let mut want = init.clone();
                want.copy_within(soff..soff + n, doff);
                let got = run(&m, "mv", &init, &[doff as u64, soff as u64, n as u64]);
                assert_eq!(got, want, "{tag}: mv doff {doff} soff {soff} n {n}");
            }
        }
    }
}

#[test]
fn memset_of_a_variable_length_before_a_phi() {
    for (tag, m) in modules() {
        for n in LENS {
            let n = n as usize;
            let init = pattern(n + 4);
            let mut want = init.clone();
            if n > 3 {
                want[..n].fill(0xC5);
            }
            want[n] = if n > 3 { 1 } else { 2 };
            let got = run(&m, "set", &init, &[0x1C5, n as u64]);
            assert_eq!(got, want, "{tag}: set n = {n}");
        }
    }
}

#[test]
fn local_buffer_and_a_long_constant_copy() {
    for (tag, m) in modules() {
        for n in [0u64, 1, 5, 299, 300] {
            let init = pattern(304);
            let mut want = init.clone();
            want[..300].fill(0);
            want[..n as usize].fill(0xE1);
            want[300] = 9;
            let got = run(&m, "loc", &init, &[0xE1, n]);
            assert_eq!(got, want, "{tag}: loc n = {n}");
        }
    }
}

/// Each expansion is one natural loop per direction, in loop-simplify form: a
/// preheader that only enters it and an exit block only it reaches.
#[test]
fn loops_are_in_simplified_form_and_export_and_ptx_are_accepted() {
    let ms = modules();
    let m = &ms[0].1;
    let loops = |f: &Function| -> usize {
        // Blocks that branch to themselves: one per byte loop.
        f.layout
            .blocks()
            .filter(|&b| f.successors(b).contains(&b))
            .count()
    };
    let want = [("cpy", 2), ("mv", 2), ("set", 1), ("loc", 3)];
    for (name, n) in want {
        let f = m
            .functions
            .values()
            .find(|f| f.name == name)
            .expect("kernel imported");
        assert_eq!(loops(f), n, "{name}: byte loops");
        // Loop-simplify changes nothing: the shape is already canonical.
        let mut one = Module::default();
        one.functions.push(f.clone());
        let before = text(&one);
        let mut pm = PassManager::from_pipeline(
            "loop-simplify",
            Knobs::default(),
            Options {
                verify_each: true,
                ..Options::default()
            },
        )
        .expect("pipeline");
        pm.run_module(&mut one).expect("runs");
        assert_eq!(text(&one), before, "{name}");
    }
    let ptxas = gyre_test_tools::require(Tool::Ptxas, "mem_loops");
    for (tag, m) in &ms {
        llvm_accepts(&export_module(m, &ExportOptions::default()), tag);
        let ptx = compile_module(m, &CodegenOptions { sm: Sm::Sm70 }).expect("codegen");
        if let Some(p) = &ptxas {
            gyre_test_tools::run_ptxas(p, &ptx, Sm::Sm70.target())
                .unwrap_or_else(|e| panic!("{tag}: ptxas: {e}\n{ptx}"));
        }
    }
}

/// The PTX of the expansion, before and after rotation, and llc's PTX of the input run
/// in ptx-sim to the model's bytes: `memmove` both ways and `memset` before a `phi`.
#[test]
fn ptx_runs_in_ptx_sim_to_the_model() {
    use gyre_ptx_sim::ParamValue as P;
    let mut ptx: Vec<(String, String)> = modules()
        .into_iter()
        .map(|(tag, m)| {
            let t = compile_module(&m, &CodegenOptions { sm: Sm::Sm70 }).expect("codegen");
            (tag.to_string(), t)
        })
        .collect();
    if let Some(llc) = gyre_test_tools::require(Tool::Llc, "mem_loops") {
        let p = std::env::temp_dir().join(format!("gyre-memv-{}-llc.ll", std::process::id()));
        std::fs::write(&p, SRC).expect("temp dir is writable");
        let out = Command::new(llc)
            .args(["-march=nvptx64", "-mcpu=sm_70", "-o", "-"])
            .arg(&p)
            .output()
            .expect("llc runs");
        let _ = std::fs::remove_file(&p);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        ptx.push(("llc".into(), String::from_utf8(out.stdout).expect("text")));
    }
    // Runs kernel `k` on a buffer holding `init`, the buffer's address first.
    let sim_run = |who: &str, sim: &gyre_ptx_sim::Module, k: &str, init: &[u8], rest: &[P]| {
        let mut smem = gyre_ptx_sim::Memory::new();
        let a = smem.alloc(init.len().max(1), 256);
        smem.write_bytes(a, init).unwrap();
        let mut pv = vec![P::U64(a)];
        pv.extend(rest.iter().cloned());
        let name = if who == "llc" {
            k.to_string()
        } else {
            gyre_codegen_lite::mangle(k)
        };
        let l = gyre_ptx_sim::Launch {
            grid: [1, 1, 1],
            block: [1, 1, 1],
        };
        gyre_ptx_sim::run_kernel(sim, &name, &l, &pv, &mut smem)
            .unwrap_or_else(|e| panic!("{who}'s PTX of {k} in ptx-sim: {e}"));
        smem.read_bytes(a, init.len()).unwrap()
    };
    for (who, text) in &ptx {
        let sim = gyre_ptx_sim::parse(text).unwrap_or_else(|e| panic!("{who}'s PTX: {e}"));
        for n in LENS {
            let n = n as usize;
            for (doff, soff) in [(3, 0), (1, 0), (0, 3), (0, 1), (2, 2)] {
                let init = pattern(n + 8);
                let mut want = init.clone();
                want.copy_within(soff..soff + n, doff);
                let rest = [P::U32(doff as u32), P::U32(soff as u32), P::U32(n as u32)];
                let got = sim_run(who, &sim, "mv", &init, &rest);
                assert_eq!(got, want, "{who}: mv doff {doff} soff {soff} n {n}");
            }
            let init = pattern(n + 4);
            let mut want = init.clone();
            if n > 3 {
                want[..n].fill(0x5E);
            }
            want[n] = if n > 3 { 1 } else { 2 };
            let got = sim_run(who, &sim, "set", &init, &[P::U32(0x5E), P::U64(n as u64)]);
            assert_eq!(got, want, "{who}: set n = {n}");
        }
    }
}
