//! Imported LLVM kernels run in the interpreter and compute what the LLVM code says;
//! exported device functions compute under `lli` what the interpreter computes.

use gyre_interp::{run_kernel, Arg, Launch, Memory};
use gyre_ir::verifier::verify_module;
use gyre_ir::{FuncKind, Module};
use gyre_llvm::{export_module, import_module, ExportOptions};
use std::process::Command;

fn import_ok(src: &str) -> Module {
    let m = import_module(src).unwrap_or_else(|e| panic!("{}", e.render("test.ll")));
    verify_module(&m).unwrap_or_else(|e| panic!("imported module does not verify: {e:?}"));
    m
}

/// A CUDA-style saxpy as clang emits it for LLVM 14: typed pointers, `nvvm.annotations`.
const SAXPY: &str = r#"
target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

define void @saxpy(float addrspace(1)* nocapture readonly %x, float addrspace(1)* nocapture %y, float %a, i32 %n) local_unnamed_addr #0 {
entry:
  %0 = tail call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x() #2, !range !3
  %1 = tail call i32 @llvm.nvvm.read.ptx.sreg.ntid.x() #2
  %mul = mul i32 %1, %0
  %2 = tail call i32 @llvm.nvvm.read.ptx.sreg.tid.x() #2
  %add = add i32 %mul, %2
  %cmp = icmp slt i32 %add, %n
  br i1 %cmp, label %if.then, label %if.end

if.then:                                          ; preds = %entry
  %idxprom = sext i32 %add to i64
  %arrayidx = getelementptr inbounds float, float addrspace(1)* %x, i64 %idxprom
  %3 = load float, float addrspace(1)* %arrayidx, align 4, !tbaa !4
  %mul1 = fmul contract float %3, %a
  %arrayidx3 = getelementptr inbounds float, float addrspace(1)* %y, i64 %idxprom
  %4 = load float, float addrspace(1)* %arrayidx3, align 4, !tbaa !4
  %add4 = fadd contract float %mul1, %4
  store float %add4, float addrspace(1)* %arrayidx3, align 4, !tbaa !4
  br label %if.end

if.end:                                           ; preds = %if.then, %entry
  ret void
}

declare i32 @llvm.nvvm.read.ptx.sreg.ctaid.x() #1
declare i32 @llvm.nvvm.read.ptx.sreg.ntid.x() #1
declare i32 @llvm.nvvm.read.ptx.sreg.tid.x() #1

attributes #0 = { convergent mustprogress nofree norecurse nounwind willreturn "frame-pointer"="all" "target-cpu"="sm_70" }
attributes #1 = { nounwind readnone }
attributes #2 = { nounwind }

!nvvm.annotations = !{!0, !1, !2}
!0 = !{void (float addrspace(1)*, float addrspace(1)*, float, i32)* @saxpy, !"kernel", i32 1}
!1 = !{null, !"align", i32 8}
!2 = !{null, !"align", i32 8, !"align", i32 65544}
!3 = !{i32 0, i32 2147483647}
!4 = !{!5, !5, i64 0}
!5 = !{!"float", !6, i64 0}
!6 = !{!"omnipotent char", !7, i64 0}
!7 = !{!"Simple C++ TBAA"}
"#;

#[test]
fn saxpy_kernel_imports_and_runs() {
    let m = import_ok(SAXPY);
    let k = m.func_by_name("saxpy").expect("kernel");
    assert_eq!(m.functions[k].kind, FuncKind::Kernel);
    assert!(
        m.functions[k].convergent,
        "attribute group #0 has convergent"
    );
    let n = 70usize;
    let x: Vec<f32> = (0..n).map(|i| i as f32 * 0.5).collect();
    let y: Vec<f32> = (0..n).map(|i| 100.0 - i as f32).collect();
    let mut mem = Memory::new();
    mem.alloc_from("x", &x);
    mem.alloc_from("y", &y);
    let launch = Launch::linear(
        3,
        32,
        vec![
            Arg::buffer("x"),
            Arg::buffer("y"),
            Arg::F32(3.0),
            Arg::Int(n as u64 - 5),
        ],
    );
    run_kernel(&m, "saxpy", &launch, &mut mem).expect("runs");
    let out: Vec<f32> = mem.read("y").unwrap();
    for i in 0..n {
        let want = if i < n - 5 { x[i] * 3.0 + y[i] } else { y[i] };
        assert_eq!(out[i], want, "y[{i}]");
    }
}

/// Numbered values, unnamed blocks, blocks out of order (uses before definitions),
/// a switch with duplicate destinations and duplicated phi entries, struct GEPs, an
/// alloca, `undef`, a constant-expression GEP and addrspacecast on a shared array,
/// intrinsics, libdevice, cmpxchg + extractvalue, `ptx_kernel` with opaque pointers.
const MIXED: &str = r#"
%struct.P = type { i8, i32, [3 x i16] }

@tab = internal addrspace(3) global [8 x i32] undef, align 4
@lut = internal addrspace(4) constant [4 x i32] [i32 10, i32 20, i32 30, i32 40], align 4
@cnt = internal addrspace(1) global i32 0, align 4

declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare void @llvm.nvvm.barrier0()
declare i32 @llvm.smin.i32(i32, i32)
declare i32 @llvm.ctpop.i32(i32)
declare float @llvm.fabs.f32(float)
declare float @__nv_sqrtf(float)
declare void @llvm.assume(i1)
declare void @llvm.lifetime.start.p0(i64, ptr)

define internal i32 @pick(i32 %0, i32 %1) {
  %3 = icmp ugt i32 %0, 3
  br i1 %3, label %big, label %5

big:
  ret i32 %1

5:
  %6 = mul nsw i32 %0, %1
  ret i32 %6
}

define ptx_kernel void @mixed(ptr addrspace(1) %out, ptr addrspace(1) %pts) {
entry:
  %slot = alloca i32, align 4
  call void @llvm.lifetime.start.p0(i64 4, ptr %slot)
  %t = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  store i32 %t, ptr %slot, align 4
  %gen = addrspacecast ptr addrspace(3) @tab to ptr
  %e = getelementptr [8 x i32], ptr %gen, i32 0, i32 %t
  %sq = mul i32 %t, %t
  store i32 %sq, ptr %e, align 4
  call void @llvm.nvvm.barrier0()
  switch i32 %t, label %dflt [
    i32 0, label %two
    i32 1, label %two
    i32 2, label %later
  ]

two:                                            ; two edges from %entry
  %w = phi i32 [ 7, %entry ], [ 7, %entry ]
  br label %join

later:
  %n = load i32, ptr getelementptr inbounds ([8 x i32], ptr addrspacecast (ptr addrspace(3) @tab to ptr), i64 0, i64 3), align 4
  br label %join

dflt:
  %l = load i32, ptr %slot, align 4
  %m = call i32 @llvm.smin.i32(i32 %l, i32 5)
  %k = and i32 %m, 3
  %lp = getelementptr inbounds [4 x i32], ptr addrspace(4) @lut, i64 0, i32 %k
  %lv = load i32, ptr addrspace(4) %lp, align 4
  br label %join

join:
  %r = phi i32 [ %w, %two ], [ %fwd, %later ], [ %lv, %dflt ]
  %p = call i32 @pick(i32 %t, i32 %r)
  %c = call i32 @llvm.ctpop.i32(i32 %p)
  %f = sitofp i32 %p to float
  %fs = call float @__nv_sqrtf(float %f)
  %fa = call float @llvm.fabs.f32(float %fs)
  %fi = fptosi float %fa to i32
  %u = add i32 %fi, undef
  %z = freeze i32 %u
  %sel = select i1 true, i32 %c, i32 %z
  %pp = getelementptr inbounds %struct.P, ptr addrspace(1) %pts, i32 %t, i32 1
  %pv = load i32, ptr addrspace(1) %pp, align 4
  %pq = getelementptr inbounds %struct.P, ptr addrspace(1) %pts, i32 %t, i32 2, i64 2
  %pw = load i16, ptr addrspace(1) %pq, align 2
  %pwx = sext i16 %pw to i32
  %o1 = getelementptr inbounds i32, ptr addrspace(1) %out, i32 %t
  %s1 = add i32 %pv, %pwx
  %s2 = mul i32 %s1, 1000
  %s3 = add i32 %s2, %sel
  store i32 %s3, ptr addrspace(1) %o1, align 4
  %old = cmpxchg ptr addrspace(1) @cnt, i32 %t, i32 99 monotonic monotonic
  %ok = extractvalue { i32, i1 } %old, 1
  %cas = zext i1 %ok to i32
  %o2 = getelementptr inbounds i32, ptr addrspace(1) %out, i32 8
  %o3 = getelementptr inbounds i32, ptr addrspace(1) %o2, i32 %t
  store i32 %cas, ptr addrspace(1) %o3, align 4
  ret void

; A definition after its use in %join (the block list need not be in dominance order
; in the text, only in the CFG).
}
"#;

#[test]
fn mixed_constructs_import_and_run() {
    // `%fwd` is used in %join but defined nowhere: that must be an error...
    let e = import_module(MIXED).expect_err("undefined %fwd");
    assert!(e.first().message.contains("undefined value %fwd"), "{}", e);
    // ...and with %later defining it (after %join in the text), the module imports.
    let src = MIXED.replace(
        "  br label %join\n\ndflt:",
        "  %fwd = add i32 %n, 0\n  br label %join\n\ndflt:",
    );
    let m = import_ok(&src);
    assert_eq!(
        m.functions[m.func_by_name("mixed").unwrap()].kind,
        FuncKind::Kernel
    );
    assert_eq!(
        m.functions[m.func_by_name("pick").unwrap()].kind,
        FuncKind::Device
    );
    let threads = 8u32;
    // %struct.P is { i8, i32, [3 x i16] }: the i32 at 4, the i16s at 8, 10, 12, and
    // 16 bytes in all (14 rounded up to the struct's 4-byte alignment).
    let mut pts = vec![0u8; 16 * threads as usize];
    for t in 0..threads as usize {
        pts[16 * t + 4..16 * t + 8].copy_from_slice(&(t as i32 + 1).to_le_bytes());
        pts[16 * t + 12..16 * t + 14].copy_from_slice(&(-(t as i16)).to_le_bytes());
    }
    let mut mem = Memory::new();
    mem.alloc_buffer("pts", pts);
    mem.alloc_zeroed("out", 16 * 4);
    let launch = Launch::linear(1, threads, vec![Arg::buffer("out"), Arg::buffer("pts")]);
    run_kernel(&m, "mixed", &launch, &mut mem).expect("runs");
    let out: Vec<i32> = mem.read("out").unwrap();
    let lut = [10, 20, 30, 40];
    for t in 0..threads as i32 {
        let r = match t {
            0 | 1 => 7,
            2 => 9, // tab[3] = 3 * 3
            _ => lut[(t.min(5) & 3) as usize],
        };
        let p = if t > 3 { r } else { t * r };
        let sel = p.count_ones() as i32;
        let s1 = (t + 1) + (-t);
        assert_eq!(out[t as usize], s1 * 1000 + sel, "out[{t}]");
        // Only thread 0 finds @cnt == its tid (0); then it holds 99.
        assert_eq!(out[8 + t as usize], i32::from(t == 0), "cas[{t}]");
    }
}

/// Device functions without GPU intrinsics, exported and run by `lli` on the host,
/// agree with the interpreter (via a kernel that stores what `main` returns).
#[test]
fn lli_agrees_with_interpreter() {
    let test = "lli_agrees_with_interpreter";
    let Some(lli) = gyre_test_tools::require(gyre_test_tools::Tool::Lli, test) else {
        return;
    };
    let bodies = [
        // Triangular sum with a loop-carried pair of block parameters.
        "block0:\n    v0 = iconst.i32 0\n    v1 = iconst.i32 1\n    jump block1(v0, v0)\nblock1(v2: i32, v3: i32):\n    v4 = iadd v3, v2\n    v5 = iadd v2, v1\n    v6 = iconst.i32 23\n    v7 = icmp slt v5, v6\n    brif v7, block1(v5, v4), block2\nblock2:\n    return v4",
        // Switch with two edges to one block carrying different arguments.
        "block0:\n    v0 = iconst.i32 2\n    v1 = iconst.i32 11\n    v2 = iconst.i32 13\n    br_table v0, block2(v1), [1: block1(v1), 2: block1(v2), 3: block2(v2)]\nblock1(v3: i32):\n    v4 = imul v3, v3\n    return v4\nblock2(v5: i32):\n    return v5",
        // Float math: sqrt, fma, min/max, floor, conversion back to int.
        "block0:\n    v0 = fconst.f32 30.25\n    v1 = sqrt v0\n    v2 = fconst.f32 2.5\n    v3 = fma v1, v2, v0\n    v4 = fmin v3, v0\n    v5 = floor v4\n    v6 = fptosi.i32 v5\n    return v6",
        // Integer ops: smin/umax, popcnt, clz, shifts, select, sdiv/srem.
        "block0:\n    v0 = iconst.i32 -77\n    v1 = iconst.i32 5\n    v2 = smin v0, v1\n    v3 = umax v0, v1\n    v4 = popcnt v3\n    v5 = clz v1\n    v6 = iadd v4, v5\n    v7 = srem v2, v1\n    v8 = sdiv v0, v1\n    v9 = icmp slt v7, v8\n    v10 = select v9, v6, v7\n    v11 = ashr v0, v1\n    v12 = isub v10, v11\n    return v12",
        // Local memory through a slot and 64-bit arithmetic.
        "    slot0 = local 16 align 8\nblock0:\n    v0 = slot_addr slot0\n    v1 = iconst.i64 123456789012\n    v2 = iconst.i64 1\n    v3 = ptradd v0, v2, 8\n    store v1, v3\n    v4 = load.i64 v3\n    v5 = iconst.i64 1000\n    v6 = urem v4, v5\n    v7 = trunc.i32 v6\n    return v7",
    ];
    for (k, body) in bodies.iter().enumerate() {
        let (slots, blocks) = match body.find("block0") {
            Some(i) => body.split_at(i),
            None => ("", *body),
        };
        let src = format!(
            "func @main() -> i32 {{\n{slots}{blocks}\n}}\n\nkernel @k(ptr.global) {{\nblock0(v0: ptr.global):\n    v1 = call @main()\n    store v1, v0\n    return\n}}\n"
        );
        let m = gyre_ir::parser::parse_module(&src)
            .unwrap_or_else(|e| panic!("case {k}: {e:?}\n{src}"));
        verify_module(&m).unwrap_or_else(|e| panic!("case {k}: {e:?}"));
        let mut mem = Memory::new();
        mem.alloc_zeroed("out", 4);
        run_kernel(
            &m,
            "k",
            &Launch::linear(1, 1, vec![Arg::buffer("out")]),
            &mut mem,
        )
        .unwrap_or_else(|e| panic!("case {k}: {e}"));
        let want = mem.read::<i32>("out").unwrap()[0];
        for opaque in [false, true] {
            let text = export_module(
                &m,
                &ExportOptions {
                    opaque_pointers: opaque,
                },
            );
            // lli runs on the host: drop the NVPTX target lines.
            let host: String = text
                .lines()
                .filter(|l| !l.starts_with("target "))
                .map(|l| format!("{l}\n"))
                .collect();
            let p =
                std::env::temp_dir().join(format!("gyre-llvm-lli-{}-{k}.ll", std::process::id()));
            std::fs::write(&p, &host).unwrap();
            let mut cmd = Command::new(&lli);
            if opaque {
                cmd.arg("-opaque-pointers");
            }
            let out = cmd.arg(&p).output().expect("lli runs");
            let _ = std::fs::remove_file(&p);
            let code = out.status.code().unwrap_or_else(|| {
                panic!(
                    "case {k}: lli crashed: {}",
                    String::from_utf8_lossy(&out.stderr)
                )
            });
            assert_eq!(
                code,
                want & 0xff,
                "case {k} (opaque={opaque}): lli exit code vs interpreter result {want}\n{}\n{host}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
    }
}

#[test]
fn globals_are_flattened_with_their_initializers() {
    let m = import_ok(
        r#"
%pair = type { i16, i32 }
@a = addrspace(1) global [2 x [3 x i32]] [[3 x i32] [i32 1, i32 -2, i32 3], [3 x i32] zeroinitializer], align 16
@s = constant [4 x i8] c"ok!\00"
@p = global %pair { i16 -1, i32 258 }
@f = internal addrspace(4) constant [2 x float] [float 0x3FF8000000000000, float -2.500000e+00]
@z = addrspace(3) global [64 x double] undef
@e = external addrspace(1) global [4 x i64]
"#,
    );
    let g = |n: &str| m.globals[m.global_by_name(n).expect(n)].clone();
    use gyre_ir::{AddrSpace, Type};
    let a = g("a");
    assert_eq!(
        (a.space, a.elem, a.count, a.align),
        (AddrSpace::Global, Type::I32, 6, 16)
    );
    assert_eq!(a.init, Some(vec![1, 0xffff_fffe, 3, 0, 0, 0]));
    let s = g("s");
    assert_eq!((s.space, s.elem, s.count), (AddrSpace::Const, Type::I8, 4));
    assert_eq!(s.init, Some(vec![b'o' as u64, b'k' as u64, b'!' as u64, 0]));
    // A mixed struct becomes bytes: i16 at 0, padding, i32 at 4 (little-endian).
    let p = g("p");
    assert_eq!(
        (p.space, p.elem, p.count, p.align),
        (AddrSpace::Global, Type::I8, 8, 4)
    );
    assert_eq!(p.init, Some(vec![0xff, 0xff, 0, 0, 2, 1, 0, 0]));
    let f = g("f");
    assert_eq!((f.space, f.elem, f.count), (AddrSpace::Const, Type::F32, 2));
    assert_eq!(
        f.init,
        Some(vec![1.5f32.to_bits() as u64, (-2.5f32).to_bits() as u64])
    );
    let z = g("z");
    assert_eq!(
        (z.space, z.elem, z.count, z.init),
        (AddrSpace::Shared, Type::F64, 64, None)
    );
    let e = g("e");
    assert_eq!(
        (e.space, e.elem, e.count, e.init),
        (AddrSpace::Global, Type::I64, 4, None)
    );
}

/// Numbered arguments and the implicit entry label, `undef`/`poison` as zero, `llvm.abs`,
/// i1 constants, debug records, a convergent attribute written inline.
#[test]
fn numbering_undef_and_small_features() {
    let src = r#"
declare i32 @llvm.abs.i32(i32, i1)
define i32 @f(i32, i32) convergent {
  %3 = add i32 %0, undef
  %4 = call i32 @llvm.abs.i32(i32 %3, i1 false)
    #dbg_value(i32 %4, !1, !DIExpression(), !2)
  %5 = icmp eq i32 %1, poison
  %6 = select i1 %5, i32 %4, i32 -1
  br i1 true, label %7, label %8

7:
  ret i32 %6

8:
  ret i32 0
}
define ptx_kernel void @k(ptr addrspace(1) %o, i32 %a, i32 %b) {
  %r = call i32 @f(i32 %a, i32 %b)
  store i32 %r, ptr addrspace(1) %o
  ret void
}
"#;
    let m = import_ok(src);
    let f = &m.functions[m.func_by_name("f").unwrap()];
    assert!(f.convergent);
    assert_eq!(f.kind, FuncKind::Device);
    let run = |a: i32, b: i32| {
        let mut mem = Memory::new();
        mem.alloc_zeroed("o", 4);
        let args = vec![
            Arg::buffer("o"),
            Arg::Int(a as u32 as u64),
            Arg::Int(b as u32 as u64),
        ];
        run_kernel(&m, "k", &Launch::linear(1, 1, args), &mut mem).expect("runs");
        mem.read::<i32>("o").unwrap()[0]
    };
    assert_eq!(run(-5, 0), 5);
    assert_eq!(run(7, 0), 7);
    assert_eq!(run(i32::MIN, 0), i32::MIN);
    assert_eq!(run(3, 1), -1);
}
