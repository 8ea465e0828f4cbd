//! Device `printf` and `assert` end to end: clang's `vprintf` / `__assertfail` calls
//! import to `vprintf` / `assert_fail`, run in the interpreter, and Gyre's PTX and llc's
//! PTX print the same lines (and fail the same assertion) in ptx-sim; ptxas accepts
//! Gyre's PTX for every target and LLVM 14 accepts the export.

use gyre_codegen_lite::{compile_module, mangle, CodegenOptions, Sm};
use gyre_interp::{run_kernel, Arg, ExecError, Launch, Memory};
use gyre_ir::verifier::verify_module;
use gyre_llvm::{export_module, import_module, ExportOptions};
use gyre_test_tools::Tool;
use std::process::Command;

const CORPUS: &str = "/work/shared/corpus/cuda";

/// A kernel printing every kind of argument clang packs: int, long, double (a float
/// promoted), char, a string, an unsigned long and a double again, from a
/// `printf_args` struct of clang's layout; it also stores vprintf's result (7).
const RICH: &str = r#"
%printf_args = type { i32, i64, double, i32, i8*, i64, double }
@.fmt = internal unnamed_addr constant [46 x i8] c"t%d l=%ld x=%+.3e c=%c s=%-6s| u=%lu %5.1f%%\0A\00", align 1
@.word = internal unnamed_addr constant [5 x i8] c"gyre\00", align 1

define void @k(i32* %out, float %scale) {
  %a = alloca %printf_args, align 8
  %t = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %c = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %n = call i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
  %cn = mul i32 %c, %n
  %g = add i32 %cn, %t
  %p0 = getelementptr inbounds %printf_args, %printf_args* %a, i32 0, i32 0
  store i32 %g, i32* %p0, align 8
  %gl = sext i32 %g to i64
  %big = mul i64 %gl, -3000000000
  %p1 = getelementptr inbounds %printf_args, %printf_args* %a, i32 0, i32 1
  store i64 %big, i64* %p1, align 8
  %gf = sitofp i32 %g to float
  %xf = fmul float %gf, %scale
  %xd = fpext float %xf to double
  %p2 = getelementptr inbounds %printf_args, %printf_args* %a, i32 0, i32 2
  store double %xd, double* %p2, align 8
  %ch = add i32 %g, 65
  %p3 = getelementptr inbounds %printf_args, %printf_args* %a, i32 0, i32 3
  store i32 %ch, i32* %p3, align 8
  %p4 = getelementptr inbounds %printf_args, %printf_args* %a, i32 0, i32 4
  store i8* getelementptr inbounds ([5 x i8], [5 x i8]* @.word, i64 0, i64 0), i8** %p4, align 8
  %p5 = getelementptr inbounds %printf_args, %printf_args* %a, i32 0, i32 5
  store i64 %gl, i64* %p5, align 8
  %p6 = getelementptr inbounds %printf_args, %printf_args* %a, i32 0, i32 6
  store double %xd, double* %p6, align 8
  %ab = bitcast %printf_args* %a to i8*
  %fmt = getelementptr inbounds [46 x i8], [46 x i8]* @.fmt, i64 0, i64 0
  %r = call i32 @vprintf(i8* %fmt, i8* %ab)
  %q = getelementptr inbounds i32, i32* %out, i32 %g
  store i32 %r, i32* %q, align 4
  ret void
}

declare i32 @vprintf(i8*, i8*)
declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ntid.x()

!nvvm.annotations = !{!0}
!0 = !{void (i32*, float)* @k, !"kernel", i32 1}
"#;

/// llc's PTX of `src` for sm_70, when llc is installed.
fn llc_ptx(src: &str, tag: &str) -> Option<String> {
    let llc = gyre_test_tools::require(Tool::Llc, tag)?;
    let p = std::env::temp_dir().join(format!("gyre-syscalls-{}-{tag}.ll", std::process::id()));
    std::fs::write(&p, src).expect("temp dir is writable");
    let out = Command::new(llc)
        .args(["-march=nvptx64", "-mcpu=sm_70"])
        .arg(&p)
        .args(["-o", "-"])
        .output()
        .expect("llc runs");
    let _ = std::fs::remove_file(&p);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some(String::from_utf8(out.stdout).expect("PTX is text"))
}

/// `opt -passes=verify` accepts `text`.
fn llvm_accepts(text: &str, tag: &str) {
    let Some(opt) = gyre_test_tools::require(Tool::Opt, tag) else {
        return;
    };
    let p = std::env::temp_dir().join(format!("gyre-syscalls-{}-{tag}.exp.ll", std::process::id()));
    std::fs::write(&p, text).expect("temp dir is writable");
    let out = Command::new(opt)
        .args(["-passes=verify", "-S", "-o", "/dev/null"])
        .arg(&p)
        .output()
        .expect("opt runs");
    let _ = std::fs::remove_file(&p);
    assert!(
        out.status.success(),
        "{}\n{text}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Gyre's PTX (sm_70) and llc's PTX of `src`, each with the kernel's name in it.
fn ptx_texts(
    m: &gyre_ir::Module,
    src: &str,
    kernel: &str,
    tag: &str,
) -> Vec<(String, String, String)> {
    let mut v = vec![(
        "Gyre".to_string(),
        compile_module(m, &CodegenOptions { sm: Sm::Sm70 }).expect("compiles"),
        mangle(kernel),
    )];
    if let Some(ptxas) = gyre_test_tools::require(Tool::Ptxas, tag) {
        for sm in Sm::ALL {
            let p = compile_module(m, &CodegenOptions { sm }).expect("compiles");
            gyre_test_tools::run_ptxas(&ptxas, &p, sm.target()).expect("ptxas accepts");
        }
    }
    if let Some(text) = llc_ptx(src, tag) {
        v.push(("llc".to_string(), text, kernel.to_string()));
    }
    v
}

#[test]
fn printf_agrees_in_interpreter_and_both_ptx_texts() {
    let m = import_module(RICH).unwrap_or_else(|e| panic!("{}", e.render("rich.ll")));
    verify_module(&m).expect("verifies");
    let (ctas, threads) = (2u32, 3u32);
    let n = (ctas * threads) as usize;
    let scale = 0.5f32;
    let mut want = String::new();
    for g in 0..n as i64 {
        let x = f64::from(g as f32 * scale);
        want += &format!(
            "t{g} l={} x={} c={} s=gyre  | u={g} {:5.1}%\n",
            g * -3_000_000_000,
            c_exp(x),
            char::from(b'A' + g as u8),
            x
        );
    }
    let mut mem = Memory::new();
    mem.alloc_zeroed("out", 4 * n);
    let launch = Launch::linear(ctas, threads, vec![Arg::buffer("out"), Arg::F32(scale)]);
    run_kernel(&m, "k", &launch, &mut mem).expect("runs");
    let got: String = mem
        .printf_output()
        .iter()
        .map(|l| l.text.as_str())
        .collect();
    assert_eq!(got, want);
    assert_eq!(mem.read::<i32>("out").unwrap(), vec![7; n]);
    // The export is valid LLVM and imports back to the same behaviour.
    let exported = export_module(&m, &ExportOptions::default());
    llvm_accepts(&exported, "rich");
    let back = import_module(&exported).expect("the export imports");
    let mut mem2 = Memory::new();
    mem2.alloc_zeroed("out", 4 * n);
    run_kernel(&back, "k", &launch, &mut mem2).expect("runs");
    assert_eq!(mem2.printf_output(), mem.printf_output());
    for (who, text, name) in ptx_texts(&m, RICH, "k", "printf") {
        let sim = gyre_ptx_sim::parse(&text).unwrap_or_else(|e| panic!("{who}'s PTX: {e}"));
        let mut smem = gyre_ptx_sim::Memory::new();
        let out = smem.alloc(4 * n, 256);
        gyre_ptx_sim::run_kernel(
            &sim,
            &name,
            &gyre_ptx_sim::Launch {
                grid: [ctas, 1, 1],
                block: [threads, 1, 1],
            },
            &[
                gyre_ptx_sim::ParamValue::U64(out),
                gyre_ptx_sim::ParamValue::F32(scale),
            ],
            &mut smem,
        )
        .unwrap_or_else(|e| panic!("{who}'s PTX in ptx-sim: {e}"));
        let text: String = smem
            .printf_output()
            .iter()
            .map(|l| l.text.as_str())
            .collect();
        assert_eq!(text, want, "{who}'s PTX");
        let lines = smem.printf_output();
        assert_eq!(
            (lines[4].ctaid, lines[4].tid),
            ([1, 0, 0], [1, 0, 0]),
            "{who}"
        );
        assert_eq!(
            smem.read_u32s(out, n).unwrap(),
            vec![7; n],
            "{who}'s result"
        );
    }
}

/// C's `%+.3e` of a finite `x` (for the expected text).
fn c_exp(x: f64) -> String {
    let t = format!("{x:+.3e}");
    let (m, e) = t.split_once('e').unwrap();
    let e: i32 = e.parse().unwrap();
    format!("{m}e{}{:02}", if e < 0 { '-' } else { '+' }, e.abs())
}

#[test]
fn cuda_samples_simple_printf() {
    let path = format!("{CORPUS}/cudasamples__simplePrintf_testKernel.ll");
    let Ok(src) = std::fs::read_to_string(&path) else {
        eprintln!("skipped: {path} is missing");
        return;
    };
    let m = import_module(&src).unwrap_or_else(|e| panic!("{}", e.render(&path)));
    let k = "_Z10testKerneli";
    // simplePrintf's launch: grid (2, 2), block (8, 2), value 10.
    let mut launch = Launch::new([2, 2, 1], [8, 2, 1], vec![Arg::Int(10)]);
    launch.config.schedule = gyre_interp::Schedule::Reverse;
    let mut mem = Memory::new();
    run_kernel(&m, k, &launch, &mut mem).expect("runs");
    let mut want = String::new();
    for (cx, cy) in [(0, 0), (1, 0), (0, 1), (1, 1)] {
        for t in 0..16 {
            want += &format!("[{}, {t}]:\t\tValue is:10\n", cy * 2 + cx);
        }
    }
    let got: String = mem
        .printf_output()
        .iter()
        .map(|l| l.text.as_str())
        .collect();
    assert_eq!(got, want);
    for (who, text, name) in ptx_texts(&m, &src, k, "simplePrintf") {
        let sim = gyre_ptx_sim::parse(&text).unwrap_or_else(|e| panic!("{who}'s PTX: {e}"));
        let mut smem = gyre_ptx_sim::Memory::new();
        gyre_ptx_sim::run_kernel(
            &sim,
            &name,
            &gyre_ptx_sim::Launch {
                grid: [2, 2, 1],
                block: [8, 2, 1],
            },
            &[gyre_ptx_sim::ParamValue::U32(10)],
            &mut smem,
        )
        .unwrap_or_else(|e| panic!("{who}'s PTX in ptx-sim: {e}"));
        let text: String = smem
            .printf_output()
            .iter()
            .map(|l| l.text.as_str())
            .collect();
        assert_eq!(text, want, "{who}'s PTX");
    }
}

#[test]
fn cuda_samples_simple_assert() {
    let path = format!("{CORPUS}/cudasamples__simpleAssert_testKernel.ll");
    let Ok(src) = std::fs::read_to_string(&path) else {
        eprintln!("skipped: {path} is missing");
        return;
    };
    let m = import_module(&src).unwrap_or_else(|e| panic!("{}", e.render(&path)));
    let k = "_Z10testKerneli";
    let exported = export_module(&m, &ExportOptions::default());
    llvm_accepts(&exported, "simpleAssert");
    // simpleAssert's launch: 2 CTAs of 32 threads, N = 60: thread 28 of CTA 1 fails.
    let launch = Launch::linear(2, 32, vec![Arg::Int(60)]);
    let e = run_kernel(&m, k, &launch, &mut Memory::new()).unwrap_err();
    let ExecError::AssertFailed {
        ref loc,
        ref failure,
    } = e
    else {
        panic!("not an assertion failure: {e}");
    };
    let gyre_interp::AssertFailure {
        message,
        file,
        line,
        function,
    } = &**failure;
    let line = *line;
    assert_eq!((loc.ctaid, loc.tid), ([1, 0, 0], [28, 0, 0]));
    let fields = (message.clone(), file.clone(), line, function.clone());
    assert_eq!(
        fields,
        (
            "gtid < N".to_string(),
            "simpleAssert.cu".to_string(),
            64,
            "void testKernel(int)".to_string()
        )
    );
    // N = 64: no thread fails.
    run_kernel(
        &m,
        k,
        &Launch::linear(2, 32, vec![Arg::Int(64)]),
        &mut Memory::new(),
    )
    .expect("no assertion fails");
    for (who, text, name) in ptx_texts(&m, &src, k, "simpleAssert") {
        let sim = gyre_ptx_sim::parse(&text).unwrap_or_else(|e| panic!("{who}'s PTX: {e}"));
        let l = gyre_ptx_sim::Launch {
            grid: [2, 1, 1],
            block: [32, 1, 1],
        };
        let run = |n: u32| {
            gyre_ptx_sim::run_kernel(
                &sim,
                &name,
                &l,
                &[gyre_ptx_sim::ParamValue::U32(n)],
                &mut gyre_ptx_sim::Memory::new(),
            )
        };
        run(64).unwrap_or_else(|e| panic!("{who}'s PTX: {e}"));
        let e = run(60).expect_err("the assertion fails");
        let gyre_ptx_sim::SimErrorKind::AssertFailed(ref a) = e.kind else {
            panic!("{who}'s PTX: {e}");
        };
        let got = (
            a.message.clone(),
            a.file.clone(),
            a.line,
            a.function.clone(),
        );
        assert_eq!(got, fields, "{who}'s PTX");
        let at = e.location.expect("a thread failed");
        assert_eq!((at.ctaid, at.tid), ([1, 0, 0], [28, 0, 0]), "{who}'s PTX");
    }
}
