//! Constructs clang's CUDA output uses that the importer lowers away: first-class
//! aggregates (scalarized), `byval` device-function parameters (copied at the call),
//! `llvm.memcpy`/`memmove`/`memset` of constant length, odd-width integers (emulated)
//! and `@llvm.compiler.used`. Each kernel runs in the interpreter to the values the LLVM
//! code computes; each input is valid for LLVM 14 (`opt -passes=verify`) and each export
//! of the imported module too.

use gyre_interp::{run_kernel, Arg, Launch, Memory};
use gyre_ir::verifier::verify_module;
use gyre_ir::Module;
use gyre_llvm::{export_module, import_module, ExportOptions};
use gyre_test_tools::Tool;
use std::process::Command;

fn import_ok(src: &str) -> Module {
    let m = import_module(src).unwrap_or_else(|e| panic!("{}", e.render("test.ll")));
    verify_module(&m).unwrap_or_else(|e| panic!("imported module does not verify: {e:?}"));
    m
}

/// `opt -passes=verify` accepts `text` (skipped with a notice when LLVM 14 is missing).
fn llvm_accepts(text: &str, tag: &str) {
    let Some(opt) = gyre_test_tools::require(Tool::Opt, tag) else {
        return;
    };
    let p = std::env::temp_dir().join(format!("gyre-agg-{}-{tag}.ll", std::process::id()));
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

/// Import (checking the input and the export with LLVM), then run kernel `k` with one
/// `i32` output buffer of `n` elements and the given scalar arguments.
fn run_i32(src: &str, tag: &str, n: usize, scalars: &[u64]) -> Vec<i32> {
    llvm_accepts(src, &format!("{tag}-input"));
    let m = import_ok(src);
    let text = export_module(&m, &ExportOptions::default());
    llvm_accepts(&text, &format!("{tag}-export"));
    let mut mem = Memory::new();
    mem.alloc_zeroed("o", n * 4);
    let mut args = vec![Arg::buffer("o")];
    args.extend(scalars.iter().map(|&s| Arg::Int(s)));
    run_kernel(&m, "k", &Launch::linear(1, 1, args), &mut mem)
        .unwrap_or_else(|e| panic!("{tag}: {e}"));
    mem.read::<i32>("o").unwrap()
}

const HEADER: &str = "target datalayout = \"e-i64:64-i128:128-v16:16-v32:32-n16:32:64\"\ntarget triple = \"nvptx64-nvidia-cuda\"\n";
const KERNEL_MD: &str =
    "!nvvm.annotations = !{!0}\n!0 = !{void (i32 addrspace(1)*, i32, i32)* @k, !\"kernel\", i32 1}\n";

/// A `uint4`-returning device function taking a struct by value, `insertvalue` /
/// `extractvalue` with nested paths, an aggregate `phi` in a loop, an aggregate
/// `select`, aggregate loads and stores, and aggregate constants.
#[test]
fn aggregate_values_and_struct_returns() {
    let src = format!(
        r#"{HEADER}
%struct.uint4 = type {{ i32, i32, i32, i32 }}
%struct.pair = type {{ i32, {{ i8, i64 }} }}

define internal %struct.uint4 @mk(i32 %a, %struct.pair %p) {{
  %x = extractvalue %struct.pair %p, 1, 1
  %t = trunc i64 %x to i32
  %y = extractvalue %struct.pair %p, 0
  %c = extractvalue %struct.pair %p, 1, 0
  %cz = zext i8 %c to i32
  %r0 = insertvalue %struct.uint4 undef, i32 %a, 0
  %r1 = insertvalue %struct.uint4 %r0, i32 %t, 1
  %r2 = insertvalue %struct.uint4 %r1, i32 %y, 2
  %r3 = insertvalue %struct.uint4 %r2, i32 %cz, 3
  ret %struct.uint4 %r3
}}

define void @k(i32 addrspace(1)* %o, i32 %n, i32 %s) {{
entry:
  %buf = alloca %struct.uint4, align 16
  %in = insertvalue {{ i8, i64 }} {{ i8 7, i64 0 }}, i64 40, 1
  %p0 = insertvalue %struct.pair zeroinitializer, i32 %s, 0
  %p = insertvalue %struct.pair %p0, {{ i8, i64 }} %in, 1
  br label %loop

loop:
  %acc = phi %struct.uint4 [ {{ i32 1, i32 2, i32 3, i32 4 }}, %entry ], [ %next, %loop ]
  %i = phi i32 [ 0, %entry ], [ %i1, %loop ]
  %a0 = extractvalue %struct.uint4 %acc, 0
  %v = call %struct.uint4 @mk(i32 %a0, %struct.pair %p)
  %odd = and i32 %i, 1
  %isodd = icmp ne i32 %odd, 0
  %sw = select i1 %isodd, %struct.uint4 %v, %struct.uint4 %acc
  %e0 = extractvalue %struct.uint4 %sw, 0
  %e0b = add i32 %e0, %i
  %next = insertvalue %struct.uint4 %sw, i32 %e0b, 0
  %i1 = add i32 %i, 1
  %done = icmp eq i32 %i1, %n
  br i1 %done, label %exit, label %loop

exit:
  store %struct.uint4 %next, %struct.uint4* %buf, align 16
  %back = load %struct.uint4, %struct.uint4* %buf, align 16
  %f0 = extractvalue %struct.uint4 %back, 0
  %f1 = extractvalue %struct.uint4 %back, 1
  %f2 = extractvalue %struct.uint4 %back, 2
  %f3 = extractvalue %struct.uint4 %back, 3
  %o1 = getelementptr i32, i32 addrspace(1)* %o, i64 1
  %o2 = getelementptr i32, i32 addrspace(1)* %o, i64 2
  %o3 = getelementptr i32, i32 addrspace(1)* %o, i64 3
  store i32 %f0, i32 addrspace(1)* %o
  store i32 %f1, i32 addrspace(1)* %o1
  store i32 %f2, i32 addrspace(1)* %o2
  store i32 %f3, i32 addrspace(1)* %o3
  ret void
}}
{KERNEL_MD}"#
    );
    // The loop in Rust: odd iterations take mk(acc.0, p) = (acc.0, 40, s, 7).
    let model = |n: i32, s: i32| {
        let mut acc = [1, 2, 3, 4];
        for i in 0..n {
            let sw = if i & 1 == 1 { [acc[0], 40, s, 7] } else { acc };
            acc = sw;
            acc[0] = sw[0] + i;
        }
        acc.to_vec()
    };
    for (n, s) in [(1, 5), (2, 9), (5, -3)] {
        let got = run_i32(&src, "aggregates", 4, &[n as u64, s as u32 as u64]);
        assert_eq!(got, model(n, s), "n={n} s={s}");
    }
}

/// `byval`: the callee gets a private copy (its writes do not reach the caller's
/// struct), filled from the caller's struct at the call.
#[test]
fn byval_parameter_is_a_copy() {
    let src = format!(
        r#"{HEADER}
%struct.S = type {{ i32, float, i8, i64 }}

define internal i32 @use(%struct.S* byval(%struct.S) align 8 %s) {{
  %a = getelementptr %struct.S, %struct.S* %s, i64 0, i32 0
  %v = load i32, i32* %a, align 8
  %d = getelementptr %struct.S, %struct.S* %s, i64 0, i32 3
  %w = load i64, i64* %d, align 8
  %w32 = trunc i64 %w to i32
  %r = add i32 %v, %w32
  store i32 1000, i32* %a, align 8
  ret i32 %r
}}

define void @k(i32 addrspace(1)* %o, i32 %x, i32 %y) {{
  %s = alloca %struct.S, align 8
  %a = getelementptr %struct.S, %struct.S* %s, i64 0, i32 0
  store i32 %x, i32* %a, align 8
  %d = getelementptr %struct.S, %struct.S* %s, i64 0, i32 3
  %y64 = sext i32 %y to i64
  store i64 %y64, i64* %d, align 8
  %r1 = call i32 @use(%struct.S* byval(%struct.S) align 8 %s)
  %r2 = call i32 @use(%struct.S* byval(%struct.S) align 8 %s)
  %after = load i32, i32* %a, align 8
  %o1 = getelementptr i32, i32 addrspace(1)* %o, i64 1
  %o2 = getelementptr i32, i32 addrspace(1)* %o, i64 2
  store i32 %r1, i32 addrspace(1)* %o
  store i32 %r2, i32 addrspace(1)* %o1
  store i32 %after, i32 addrspace(1)* %o2
  ret void
}}
{KERNEL_MD}"#
    );
    for (x, y) in [(3, 4), (-10, 100)] {
        let got = run_i32(&src, "byval", 3, &[x as u32 as u64, y as u32 as u64]);
        assert_eq!(got, vec![x + y, x + y, x], "x={x} y={y}");
    }
}

/// `memcpy` (aligned and byte-wise), `memmove` over an overlap, `memset` with a
/// variable byte, `volatile` copies.
#[test]
fn memcpy_memmove_memset() {
    let src = format!(
        r#"{HEADER}
declare void @llvm.memcpy.p0i8.p1i8.i64(i8*, i8 addrspace(1)*, i64, i1)
declare void @llvm.memmove.p0i8.p0i8.i64(i8*, i8*, i64, i1)
declare void @llvm.memset.p0i8.i64(i8*, i8, i64, i1)
declare void @llvm.memcpy.p1i8.p0i8.i64(i8 addrspace(1)*, i8*, i64, i1)

define void @k(i32 addrspace(1)* %o, i32 %x, i32 %y) {{
  %buf = alloca [8 x i32], align 16
  %b = bitcast [8 x i32]* %buf to i8*
  %yb = trunc i32 %y to i8
  call void @llvm.memset.p0i8.i64(i8* align 16 %b, i8 %yb, i64 32, i1 false)
  %e1 = getelementptr [8 x i32], [8 x i32]* %buf, i64 0, i64 1
  store i32 %x, i32* %e1, align 4
  %ob = bitcast i32 addrspace(1)* %o to i8 addrspace(1)*
  ; o[0..2] = buf[0..2] (8 bytes, 4-aligned), then bytes 3..5 of buf to buf[4..]
  %b4 = getelementptr i8, i8* %b, i64 16
  call void @llvm.memcpy.p0i8.p1i8.i64(i8* align 4 %b4, i8 addrspace(1)* align 4 %ob, i64 4, i1 true)
  %b1 = getelementptr i8, i8* %b, i64 1
  call void @llvm.memmove.p0i8.p0i8.i64(i8* align 1 %b1, i8* align 1 %b, i64 7, i1 false)
  call void @llvm.memcpy.p1i8.p0i8.i64(i8 addrspace(1)* align 4 %ob, i8* align 4 %b, i64 20, i1 false)
  ret void
}}
{KERNEL_MD}"#
    );
    let (x, y) = (0x0403_0201u32, 0xAB);
    // A byte model of the same steps.
    let mut o = [0u8; 20];
    o[..4].copy_from_slice(&7u32.to_le_bytes());
    let mut buf = [y as u8; 32];
    buf[4..8].copy_from_slice(&x.to_le_bytes());
    let o0 = o[..4].to_vec();
    buf[16..20].copy_from_slice(&o0);
    buf.copy_within(0..7, 1);
    o.copy_from_slice(&buf[..20]);
    let want: Vec<i32> = o
        .chunks(4)
        .map(|c| i32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    llvm_accepts(&src, "mem-input");
    let m = import_ok(&src);
    llvm_accepts(&export_module(&m, &ExportOptions::default()), "mem-export");
    let mut mem = Memory::new();
    mem.alloc_from("o", &[7i32, 0, 0, 0, 0]);
    let args = vec![Arg::buffer("o"), Arg::Int(u64::from(x)), Arg::Int(y)];
    run_kernel(&m, "k", &Launch::linear(1, 1, args), &mut mem).expect("runs");
    assert_eq!(mem.read::<i32>("o").unwrap(), want);
}

/// The `i56` pattern SROA leaves in the reduction kernels (trunc to `i56`, zext back,
/// shifts and ors in `i64`), plus arithmetic, signed compares and `sext` on odd widths.
#[test]
fn odd_width_integers() {
    let src = format!(
        r#"{HEADER}
define void @k(i32 addrspace(1)* %o, i32 %x, i32 %y) {{
  %x64 = zext i32 %x to i64
  %sh = shl i64 %x64, 20
  %t = trunc i64 %sh to i56
  %z = zext i56 %t to i64
  %hi = lshr i64 %z, 32
  %r0 = trunc i64 %hi to i32
  %a = trunc i32 %x to i5
  %b = trunc i32 %y to i5
  %s = add i5 %a, %b
  %r1 = zext i5 %s to i32
  %neg = icmp slt i5 %s, 0
  %r2 = zext i1 %neg to i32
  %se = sext i5 %s to i32
  %d = sdiv i5 %a, 3
  %r3 = sext i5 %d to i32
  %u = zext i56 undef to i64
  %o1 = getelementptr i32, i32 addrspace(1)* %o, i64 1
  %o2 = getelementptr i32, i32 addrspace(1)* %o, i64 2
  %o3 = getelementptr i32, i32 addrspace(1)* %o, i64 3
  %o4 = getelementptr i32, i32 addrspace(1)* %o, i64 4
  store i32 %r0, i32 addrspace(1)* %o
  store i32 %r1, i32 addrspace(1)* %o1
  store i32 %r2, i32 addrspace(1)* %o2
  store i32 %se, i32 addrspace(1)* %o3
  store i32 %r3, i32 addrspace(1)* %o4
  ret void
}}
{KERNEL_MD}"#
    );
    let sext5 = |v: u32| ((v << 27) as i32) >> 27;
    for (x, y) in [
        (0xFFFF_FFFFu32, 1u32),
        (0x1234_5678, 0x9),
        (13, 14),
        (31, 31),
    ] {
        let got = run_i32(&src, "odd", 5, &[u64::from(x), u64::from(y)]);
        let sh = (u64::from(x) << 20) & ((1 << 56) - 1);
        let s = x.wrapping_add(y) & 31;
        let want = vec![
            (sh >> 32) as i32,
            s as i32,
            i32::from(sext5(s) < 0),
            sext5(s),
            sext5(x & 31) / 3,
        ];
        assert_eq!(got, want, "x={x:#x} y={y:#x}");
    }
}

/// `@llvm.compiler.used` / `@llvm.used` are accepted (and dropped: Gyre keeps every
/// global anyway).
#[test]
fn compiler_used_is_accepted() {
    let src = format!(
        r#"{HEADER}
@c = internal addrspace(4) global [2 x i32] [i32 5, i32 6], align 4
@llvm.compiler.used = appending global [1 x i8*] [i8* addrspacecast (i8 addrspace(4)* bitcast ([2 x i32] addrspace(4)* @c to i8 addrspace(4)*) to i8*)], section "llvm.metadata"
@llvm.used = appending global [1 x i8*] [i8* addrspacecast (i8 addrspace(4)* bitcast ([2 x i32] addrspace(4)* @c to i8 addrspace(4)*) to i8*)], section "llvm.metadata"

define void @k(i32 addrspace(1)* %o, i32 %x, i32 %y) {{
  %p = getelementptr [2 x i32], [2 x i32] addrspace(4)* @c, i64 0, i64 1
  %v = load i32, i32 addrspace(4)* %p, align 4
  store i32 %v, i32 addrspace(1)* %o
  ret void
}}
{KERNEL_MD}"#
    );
    let m = import_ok(&src);
    assert_eq!(m.globals.len(), 1, "only @c is a Gyre global");
    assert_eq!(run_i32(&src, "used", 1, &[0, 0]), vec![6]);
}

/// A kernel `byval` struct parameter keeps LLVM's ABI: a `ptr.local byval(N, align A)`
/// parameter whose bytes the launch supplies; the export is `byval([N x i8])` again.
#[test]
fn kernel_byval_parameter() {
    let src = format!(
        r#"{HEADER}
%struct.uchar4 = type {{ i8, i8, i8, i8 }}

define void @k(i32 addrspace(1)* %o, %struct.uchar4* byval(%struct.uchar4) align 4 %c, i32 %x) {{
  %g = getelementptr inbounds %struct.uchar4, %struct.uchar4* %c, i32 0, i32 1
  %v = load i8, i8* %g, align 1
  %w = zext i8 %v to i32
  %r = mul i32 %w, %x
  store i8 9, i8* %g, align 1
  %v2 = load i8, i8* %g, align 1
  %w2 = zext i8 %v2 to i32
  %r2 = add i32 %r, %w2
  store i32 %r2, i32 addrspace(1)* %o
  ret void
}}
!nvvm.annotations = !{{!0}}
!0 = !{{void (i32 addrspace(1)*, %struct.uchar4*, i32)* @k, !"kernel", i32 1}}
"#
    );
    llvm_accepts(&src, "kbyval-input");
    let m = import_ok(&src);
    let f = &m.functions[m.func_by_name("k").unwrap()];
    assert_eq!(
        f.byval,
        vec![gyre_ir::ByValParam {
            index: 1,
            size: 4,
            align: 4
        }]
    );
    for opaque in [false, true] {
        let text = export_module(
            &m,
            &ExportOptions {
                opaque_pointers: opaque,
            },
        );
        assert!(text.contains("byval([4 x i8]) align 4"), "{text}");
        if !opaque {
            llvm_accepts(&text, "kbyval-export");
            let back = import_ok(&text);
            assert_eq!(
                back.functions[back.func_by_name("k").unwrap()].byval,
                f.byval
            );
        }
    }
    let mut mem = Memory::new();
    mem.alloc_zeroed("o", 4);
    let args = vec![Arg::buffer("o"), Arg::Bytes(vec![1, 20, 3, 4]), Arg::Int(3)];
    run_kernel(&m, "k", &Launch::linear(1, 1, args), &mut mem).expect("runs");
    assert_eq!(mem.read::<i32>("o").unwrap(), vec![69]);
}

/// A byval argument's `align` is the known alignment of the source: a struct with an
/// `i64` passed from a 4-aligned address is copied with 4-byte accesses (an `i64` load
/// there would be misaligned), into a copy aligned for the type.
#[test]
fn byval_copy_respects_the_source_alignment() {
    let src = format!(
        r#"{HEADER}
%struct.T = type {{ i64 }}

define internal i32 @use(%struct.T* byval(%struct.T) align 4 %t) {{
  %a = getelementptr %struct.T, %struct.T* %t, i64 0, i32 0
  %v = load i64, i64* %a, align 8
  %s = lshr i64 %v, 32
  %h = trunc i64 %s to i32
  %l = trunc i64 %v to i32
  %r = sub i32 %h, %l
  ret i32 %r
}}

define void @k(i32 addrspace(1)* %o, i32 %x, i32 %y) {{
  %buf = alloca [4 x i32], align 8
  %e1 = getelementptr [4 x i32], [4 x i32]* %buf, i64 0, i64 1
  %e2 = getelementptr [4 x i32], [4 x i32]* %buf, i64 0, i64 2
  store i32 %x, i32* %e1, align 4
  store i32 %y, i32* %e2, align 4
  %p = bitcast i32* %e1 to %struct.T*
  %r = call i32 @use(%struct.T* byval(%struct.T) align 4 %p)
  store i32 %r, i32 addrspace(1)* %o
  ret void
}}
{KERNEL_MD}"#
    );
    assert_eq!(run_i32(&src, "byval-align", 1, &[5, 12]), vec![7]);
}

/// The corpus's byval kernel (cuda-samples Mandelbrot, a `uchar4` colour passed by
/// value): Gyre's PTX keeps llc's parameter layout, so the same parameter buffer
/// launches both, and in ptx-sim both write what the interpreter writes.
#[test]
fn mandelbrot_byval_kernel_matches_llc_in_ptx_sim() {
    use gyre_ptx_sim::ParamValue as P;
    let (w, h) = (8u32, 8u32);
    let int = |v: u32| Param::Val(Arg::Int(u64::from(v)), P::U32(v));
    let float = |v: f32| Param::Val(Arg::F32(v), P::F32(v));
    let colors = vec![10u8, 20, 30, 40];
    let out = corpus_kernel_agrees(
        "cudasamples__Mandelbrot_Mandelbrot0_float.ll",
        "_Z11Mandelbrot0IfEvP6uchar4iiiT_S2_S2_S2_S2_S0_iiiib",
        [w, h, 1],
        vec![
            Param::Buf(vec![0; (w * h * 4) as usize]),
            int(w),
            int(h),
            int(64),
            float(-1.0),
            float(-1.0),
            float(0.0),
            float(0.0),
            float(0.25),
            Param::Val(Arg::Bytes(colors.clone()), P::Bytes(colors)),
            int(0),
            int(0),
            int(1),
            int(1),
            Param::Val(Arg::Int(0), P::U8(0)),
        ],
    );
    if let Some(out) = out {
        assert!(out[0].iter().any(|&b| b != 0), "the kernel writes colours");
    }
}

/// A kernel parameter for [`corpus_kernel_agrees`]: a buffer (its initial bytes) or a
/// scalar given to the interpreter and to ptx-sim.
enum Param {
    Buf(Vec<u8>),
    Val(Arg, gyre_ptx_sim::ParamValue),
}

/// Run kernel `k` of corpus file `file` on one CTA of `block` threads in the
/// interpreter, and in ptx-sim from Gyre's PTX and from llc's (one parameter list for
/// both: the same ABI); every buffer must end equal. Returns the interpreter's
/// buffers (`None` when the corpus is missing).
fn corpus_kernel_agrees(
    file: &str,
    k: &str,
    block: [u32; 3],
    params: Vec<Param>,
) -> Option<Vec<Vec<u8>>> {
    let path = gyre_test_tools::corpus("cuda", file)?.join(file);
    let src = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{file}: {e}"));
    let m = import_ok(&src);
    let mut mem = Memory::new();
    let mut args = Vec::new();
    for (i, p) in params.iter().enumerate() {
        match p {
            Param::Buf(b) => {
                mem.alloc_buffer(&format!("b{i}"), b.clone());
                args.push(Arg::buffer(&format!("b{i}")));
            }
            Param::Val(a, _) => args.push(a.clone()),
        }
    }
    let launch = Launch {
        grid: [1, 1, 1],
        block,
        ..Launch::linear(1, 1, args)
    };
    run_kernel(&m, k, &launch, &mut mem).expect("interpreter runs");
    let mut sims = vec![(
        "gyre".to_string(),
        gyre_codegen_lite::compile_module(
            &m,
            &gyre_codegen_lite::CodegenOptions {
                sm: gyre_codegen_lite::Sm::Sm70,
            },
        )
        .expect("compiles"),
        gyre_codegen_lite::mangle(k),
    )];
    if let Some(llc) = gyre_test_tools::require(Tool::Llc, "corpus_kernel_agrees") {
        let out = Command::new(llc)
            .args(["-march=nvptx64", "-mcpu=sm_70", "-o", "-"])
            .arg(&path)
            .output()
            .expect("llc runs");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let text = String::from_utf8(out.stdout).expect("PTX is text");
        sims.push(("llc".to_string(), text, k.to_string()));
    }
    for (who, text, name) in sims {
        let sim = gyre_ptx_sim::parse(&text).unwrap_or_else(|e| panic!("{who}'s PTX: {e}"));
        let mut smem = gyre_ptx_sim::Memory::new();
        let mut pv = Vec::new();
        let mut bufs = Vec::new();
        for (i, p) in params.iter().enumerate() {
            match p {
                Param::Buf(b) => {
                    let a = smem.alloc(b.len().max(1), 256);
                    smem.write_bytes(a, b).unwrap();
                    bufs.push((i, a, b.len()));
                    pv.push(gyre_ptx_sim::ParamValue::U64(a));
                }
                Param::Val(_, v) => pv.push(v.clone()),
            }
        }
        let l = gyre_ptx_sim::Launch {
            grid: [1, 1, 1],
            block,
        };
        gyre_ptx_sim::run_kernel(&sim, &name, &l, &pv, &mut smem)
            .unwrap_or_else(|e| panic!("{who}'s PTX in ptx-sim: {e}"));
        for (i, a, len) in bufs {
            let want = mem.bytes(&format!("b{i}")).unwrap();
            assert_eq!(
                smem.read_bytes(a, len).unwrap(),
                want,
                "{who}'s PTX, buffer {i}"
            );
        }
    }
    let bufs = params
        .iter()
        .enumerate()
        .filter(|(_, p)| matches!(p, Param::Buf(_)))
        .map(|(i, _)| mem.bytes(&format!("b{i}")).unwrap().to_vec())
        .collect();
    Some(bufs)
}

/// cuda-samples alignedTypes (RGBA32): a 16-byte struct copied with `llvm.memcpy`
/// (two 8-byte accesses after import) agrees with llc.
#[test]
fn aligned_types_memcpy_kernel_matches_llc_in_ptx_sim() {
    use gyre_ptx_sim::ParamValue as P;
    let n = 40usize;
    let input: Vec<u8> = (0..n * 16).map(|i| (i * 7 + 3) as u8).collect();
    let out = corpus_kernel_agrees(
        "cudasamples__alignedTypes_testKernel_RGBA32.ll",
        "_Z10testKernelI6RGBA32EvPT_S2_i",
        [32, 1, 1],
        vec![
            Param::Buf(vec![0; n * 16]),
            Param::Buf(input),
            Param::Val(Arg::Int(n as u64 - 3), P::U32(n as u32 - 3)),
        ],
    );
    // The first n - 3 elements are copied, the rest stay zero.
    if let Some(out) = out {
        let want: Vec<u8> = (0..n * 16)
            .map(|i| {
                if i < (n - 3) * 16 {
                    (i * 7 + 3) as u8
                } else {
                    0
                }
            })
            .collect();
        assert_eq!(out[0], want);
    }
}
