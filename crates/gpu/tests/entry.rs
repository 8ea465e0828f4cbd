//! `.entry` signatures of Gyre's and llc's PTX, their parameter layout and the
//! marshalling of arguments into the parameter buffer. No device needed.

use gyre_gpu::{entry_names, entry_signature, EntrySignature, GpuError, KernelArg, ParamKind};

/// A kernel with every parameter kind: sub-word integers, a byval struct with 8-byte
/// alignment, a pointer, f64, i1 and f32 (the layout needs padding in three places).
const LL: &str = r#"
target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"
%struct.P = type { i8, double, i32 }
define void @k(i8 %a, %struct.P* byval(%struct.P) align 8 %p, i16 %s, float* %out, double %d, i1 %b, float %f) {
  %x = getelementptr %struct.P, %struct.P* %p, i32 0, i32 1
  %v = load double, double* %x
  %w = fadd double %v, %d
  %t = fptrunc double %w to float
  %t3 = fadd float %t, %f
  store float %t3, float* %out
  ret void
}
!nvvm.annotations = !{!0}
!0 = !{void (i8, %struct.P*, i16, float*, double, i1, float)* @k, !"kernel", i32 1}
"#;

/// What LLVM 14 `llc -O2 -mcpu=sm_80` prints for `LL` (its signature part), with a
/// comment inside the list as hand-written PTX may have.
const LLC_PTX: &str = r#"
.version 7.0
.target sm_80
.address_size 64
	// .globl	k
.visible .entry k(
	.param .u8 k_param_0,
	.param .align 8 .b8 k_param_1[24], // the struct
	.param .u16 k_param_2,
	.param .u64 k_param_3,
	/* a pointer */ .param .f64 k_param_4,
	.param .u8 k_param_5,
	.param .f32 k_param_6
)
{
	ret;
}
"#;

/// Offsets, sizes, alignments and kinds of `k`'s parameters.
const LAYOUT: [(usize, usize, usize, ParamKind); 7] = [
    (0, 1, 1, ParamKind::Int),
    (8, 24, 8, ParamKind::Array),
    (32, 2, 2, ParamKind::Int),
    (40, 8, 8, ParamKind::Int),
    (48, 8, 8, ParamKind::Float),
    (56, 1, 1, ParamKind::Int),
    (60, 4, 4, ParamKind::Float),
];

fn check_layout(sig: &EntrySignature) {
    let got: Vec<_> = sig
        .params
        .iter()
        .map(|p| (p.offset, p.size, p.align, p.kind))
        .collect();
    assert_eq!(got, LAYOUT);
    assert_eq!(sig.size, 64);
}

fn gyre_ptx() -> String {
    let m = gyre_llvm::import_module(LL).expect("imports");
    gyre_codegen_lite::compile_module(
        &m,
        &gyre_codegen_lite::CodegenOptions {
            sm: gyre_codegen_lite::Sm::from_number(80).unwrap(),
        },
    )
    .expect("compiles")
}

#[test]
fn llc_signature_layout() {
    let sig = entry_signature(LLC_PTX, "k").unwrap();
    check_layout(&sig);
    assert_eq!(sig.params[1].name, "k_param_1");
    assert_eq!(entry_names(LLC_PTX), vec!["k".to_string()]);
}

#[test]
fn gyre_signature_layout_matches_llc() {
    let ptx = gyre_ptx();
    let sig = entry_signature(&ptx, "k").unwrap();
    check_layout(&sig);
}

#[test]
fn ptr_attributes_and_empty_lists() {
    let ptx = ".visible .entry e()\n{ ret; }\n.entry f(.param .u64 .ptr .global .align 16 p, .param .b32 q)\n{ ret; }";
    let e = entry_signature(ptx, "e").unwrap();
    assert!(e.params.is_empty());
    assert_eq!(e.size, 0);
    let f = entry_signature(ptx, "f").unwrap();
    // `.align` after `.ptr` is the pointee's: the parameter stays 8-aligned.
    assert_eq!((f.params[0].size, f.params[0].align), (8, 8));
    assert_eq!((f.params[1].offset, f.size), (8, 12));
    assert_eq!(entry_names(ptx), vec!["e".to_string(), "f".to_string()]);
}

#[test]
fn missing_entry_and_bad_lists_are_errors() {
    match entry_signature(LLC_PTX, "kk") {
        Err(GpuError::NoEntry { name, available }) => {
            assert_eq!(name, "kk");
            assert_eq!(available, vec!["k".to_string()]);
        }
        other => panic!("{other:?}"),
    }
    for bad in [
        ".entry k(.param .u7 a)\n{}",
        ".entry k(.param .u32)\n{}",
        ".entry k(.param .align 3 .b8 a[4])\n{}",
        ".entry k(.param .b8 a[x])\n{}",
        ".entry k(.param .u32 a",
        ".entry k(.reg .u32 a)\n{}",
    ] {
        match entry_signature(bad, "k") {
            Err(GpuError::Signature { entry, .. }) => assert_eq!(entry, "k"),
            other => panic!("{bad}: {other:?}"),
        }
    }
}

#[test]
fn marshalling_writes_each_argument_at_its_offset() {
    let sig = entry_signature(LLC_PTX, "k").unwrap();
    let strukt: Vec<u8> = (1..=24).collect();
    let args = [
        KernelArg::Int(0x1ff), // only the low byte
        KernelArg::Bytes(strukt.clone()),
        KernelArg::Int(0xbeef),
        KernelArg::Buffer(1, 16),
        KernelArg::F64(-2.5),
        KernelArg::Int(1),
        KernelArg::F32(1.5),
    ];
    let bytes = sig
        .marshal(&args, |i| [0x1000u64, 0x7000_0000_0000][..].get(i).copied())
        .unwrap();
    let mut want = vec![0u8; 64];
    want[0] = 0xff;
    want[8..32].copy_from_slice(&strukt);
    want[32..34].copy_from_slice(&0xbeefu16.to_le_bytes());
    want[40..48].copy_from_slice(&0x7000_0000_0010u64.to_le_bytes());
    want[48..56].copy_from_slice(&(-2.5f64).to_le_bytes());
    want[56] = 1;
    want[60..64].copy_from_slice(&1.5f32.to_le_bytes());
    assert_eq!(bytes, want);
}

#[test]
fn untyped_params_take_float_bits() {
    let ptx = ".entry k(.param .b32 a, .param .b64 b)\n{}";
    let sig = entry_signature(ptx, "k").unwrap();
    let bytes = sig
        .marshal(&[KernelArg::F32(2.0), KernelArg::F64(0.5)], |_| None)
        .unwrap();
    assert_eq!(&bytes[0..4], &2.0f32.to_bits().to_le_bytes());
    assert_eq!(&bytes[8..16], &0.5f64.to_bits().to_le_bytes());
}

#[test]
fn mismatched_arguments_are_errors() {
    let sig = entry_signature(LLC_PTX, "k").unwrap();
    let good = vec![
        KernelArg::Int(0),
        KernelArg::Bytes(vec![0; 24]),
        KernelArg::Int(0),
        KernelArg::Ptr(0),
        KernelArg::F64(0.0),
        KernelArg::Int(0),
        KernelArg::F32(0.0),
    ];
    assert!(sig.marshal(&good, |_| None).is_ok());
    let cases: Vec<(usize, KernelArg, &str)> = vec![
        (1, KernelArg::Bytes(vec![0; 16]), "16 bytes"),
        (3, KernelArg::F32(1.0), "f32"),
        (0, KernelArg::Ptr(8), "address"),
        (6, KernelArg::Int(3), "integer"),
        (4, KernelArg::F32(1.0), "f32"),
        (3, KernelArg::Buffer(5, 0), "no buffer 5"),
    ];
    for (i, arg, what) in cases {
        let mut args = good.clone();
        args[i] = arg;
        match sig.marshal(&args, |_| None) {
            Err(e @ GpuError::Arguments { .. }) => {
                assert!(e.to_string().contains(what), "{e}")
            }
            other => panic!("{i}: {other:?}"),
        }
    }
    match sig.marshal(&good[..6], |_| None) {
        Err(e @ GpuError::Arguments { .. }) => assert!(e.to_string().contains("6 arguments")),
        other => panic!("{other:?}"),
    }
}
