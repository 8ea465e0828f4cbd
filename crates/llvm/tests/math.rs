//! CUDA math functions (libdevice `__nv_*`, NVVM and LLVM math intrinsics) imported
//! from LLVM IR: each is run on a few thousand inputs (special values, subnormals,
//! values around 1, wide random bit patterns, the interesting range) in the interpreter
//! and compared with the host's libm, within the ulps docs/llvm.md documents. A selection
//! also goes through PTX: ptxas accepts it for sm_70/80/90 and ptx-sim computes the same
//! values within the bound (+1 ulp: ptx-sim's `.approx` primitives are the host's f32
//! functions, not the exactly rounded ones). The export of the module passes
//! `opt -passes=verify`.

use gyre_codegen_lite::{compile_module, CodegenOptions, Sm};
use gyre_interp::{run_kernel, Arg, Launch, Memory};
use gyre_llvm::{export_module, import_module, ExportOptions};
use gyre_test_tools::Tool;
use std::process::Command;

const THREADS: u32 = 128;

/// Distance in units in the last place between two f32s; NaN only matches NaN.
fn ulps(a: f32, b: f32) -> u64 {
    if a.is_nan() || b.is_nan() {
        return if a.is_nan() && b.is_nan() {
            0
        } else {
            u64::MAX
        };
    }
    let key = |x: f32| {
        let b = x.to_bits();
        if b >> 31 == 1 {
            -i64::from(b & 0x7fff_ffff)
        } else {
            i64::from(b)
        }
    };
    (key(a) - key(b)).unsigned_abs()
}

/// xorshift64*: the inputs are reproducible without a dependency.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn unit(&mut self) -> f32 {
        (self.next() >> 40) as f32 / (1u64 << 24) as f32
    }
}

/// Inputs for a unary f32 function: special values, subnormals, neighbours of 1, random
/// bit patterns over the whole range and uniform values in `[lo, hi]`.
fn inputs(lo: f32, hi: f32) -> Vec<f32> {
    let mut v = vec![
        0.0,
        -0.0,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::NAN,
        -f32::NAN,
        1.0,
        -1.0,
        0.5,
        2.0,
        10.0,
        f32::MIN_POSITIVE,
        -f32::MIN_POSITIVE,
        f32::from_bits(1),
        f32::from_bits(0x8000_0001),
        f32::from_bits(0x007f_ffff),
        f32::from_bits(0x0000_1234),
        f32::MAX,
        f32::MIN,
        88.72,
        88.73,
        -87.33,
        -103.9,
        -104.0,
        89.0,
        38.5,
        -45.0,
        std::f32::consts::PI,
        std::f32::consts::FRAC_PI_2,
    ];
    for k in 1..64u32 {
        v.push(f32::from_bits(1.0f32.to_bits() + k));
        v.push(f32::from_bits(1.0f32.to_bits() - k));
    }
    let mut r = Rng(0x9e37_79b9_7f4a_7c15);
    for _ in 0..1500 {
        v.push(f32::from_bits(r.next() as u32));
    }
    for _ in 0..1500 {
        v.push(lo + (hi - lo) * r.unit());
    }
    for _ in 0..300 {
        v.push(0.5 + 1.5 * r.unit());
    }
    for _ in 0..200 {
        v.push(f32::from_bits((r.next() as u32) & 0x807f_ffff)); // subnormals
    }
    while !v.len().is_multiple_of(THREADS as usize) {
        v.push(r.unit());
    }
    v
}

/// An LLVM kernel `out[i] = F(a[i] [, b[i]])` with F of `arity` f32 arguments.
fn kernel(callee: &str, arity: usize) -> String {
    let params: Vec<&str> = ["float"; 2][..arity].to_vec();
    let loads: String = (0..arity)
        .map(|j| {
            format!(
                "  %p{j} = getelementptr float, float* %in{j}, i64 %ie\n  %x{j} = load float, float* %p{j}\n"
            )
        })
        .collect();
    let args: Vec<String> = (0..arity).map(|j| format!("float %x{j}")).collect();
    let ins: Vec<String> = (0..arity).map(|j| format!("float* %in{j}")).collect();
    format!(
        r#"
declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
declare float @{callee}({params})

define void @k({ins}, float* %out) {{
entry:
  %t = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %c = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %n = call i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
  %cn = mul i32 %c, %n
  %i = add i32 %cn, %t
  %ie = sext i32 %i to i64
{loads}  %y = call float @{callee}({args})
  %po = getelementptr float, float* %out, i64 %ie
  store float %y, float* %po
  ret void
}}
!nvvm.annotations = !{{!0}}
!0 = !{{void ({ins_ty}float*)* @k, !"kernel", i32 1}}
"#,
        params = params.join(", "),
        ins = ins.join(", "),
        args = args.join(", "),
        ins_ty = "float*, ".repeat(arity),
    )
}

/// Run `m`'s kernel on the inputs in the interpreter.
fn run_interp(m: &gyre_ir::Module, ins: &[Vec<f32>]) -> Vec<f32> {
    let n = ins[0].len();
    let mut mem = Memory::new();
    let mut args = Vec::new();
    for (j, v) in ins.iter().enumerate() {
        mem.alloc_from(&format!("in{j}"), v);
        args.push(Arg::buffer(&format!("in{j}")));
    }
    mem.alloc_from("out", &vec![0f32; n]);
    args.push(Arg::buffer("out"));
    let launch = Launch::linear(n as u32 / THREADS, THREADS, args);
    run_kernel(m, "k", &launch, &mut mem).expect("interpreter runs");
    mem.read("out").expect("out")
}

/// Run the PTX of `m` in ptx-sim on the inputs.
fn run_sim(m: &gyre_ir::Module, ptx: &str, ins: &[Vec<f32>]) -> Vec<f32> {
    let _ = m;
    let n = ins[0].len();
    let sim = gyre_ptx_sim::parse(ptx).unwrap_or_else(|e| panic!("ptx-sim parse: {e}\n{ptx}"));
    let mut mem = gyre_ptx_sim::Memory::new();
    let mut params = Vec::new();
    let bytes = |v: &[f32]| -> Vec<u8> { v.iter().flat_map(|x| x.to_le_bytes()).collect() };
    for v in ins {
        let b = mem.alloc(n * 4, 256);
        mem.write_bytes(b, &bytes(v)).expect("write");
        params.push(gyre_ptx_sim::ParamValue::U64(b));
    }
    let out = mem.alloc(n * 4, 256);
    params.push(gyre_ptx_sim::ParamValue::U64(out));
    let launch = gyre_ptx_sim::Launch {
        grid: [n as u32 / THREADS, 1, 1],
        block: [THREADS, 1, 1],
    };
    gyre_ptx_sim::run_kernel(
        &sim,
        &gyre_codegen_lite::mangle("k"),
        &launch,
        &params,
        &mut mem,
    )
    .expect("ptx-sim runs");
    let got = mem.read_bytes(out, n * 4).expect("read");
    got.chunks(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

type Bound = fn(&[f32]) -> u64;

/// Check `callee` against `reference` on `ins` within `bound(args)` ulps in the
/// interpreter, and (with `ptx`) through PTX in ptx-sim within `bound + 1`.
fn check(callee: &str, ins: &[Vec<f32>], reference: fn(&[f32]) -> f32, bound: Bound, ptx: bool) {
    let src = kernel(callee, ins.len());
    let m = import_module(&src).unwrap_or_else(|e| panic!("{callee}: {e:?}"));
    let got = run_interp(&m, ins);
    let mut worst = (0u64, 0usize);
    let args_of = |i: usize| -> Vec<f32> { ins.iter().map(|v| v[i]).collect() };
    for (i, &y) in got.iter().enumerate() {
        let a = args_of(i);
        let want = reference(&a);
        let d = ulps(y, want);
        assert!(
            d <= bound(&a),
            "{callee}{a:?} = {y:e} ({:#x}), libm {want:e} ({:#x}): {d} ulp > {}",
            y.to_bits(),
            want.to_bits(),
            bound(&a)
        );
        if d > worst.0 {
            worst = (d, i);
        }
    }
    println!(
        "{callee}: {} inputs, worst {} ulp at {:?}",
        got.len(),
        worst.0,
        args_of(worst.1)
    );
    if !ptx {
        return;
    }
    let text = compile_module(&m, &CodegenOptions { sm: Sm::Sm70 }).expect("codegen");
    if let Some(ptxas) = gyre_test_tools::require(Tool::Ptxas, "math") {
        for sm in [Sm::Sm70, Sm::Sm80, Sm::Sm90] {
            let t = compile_module(&m, &CodegenOptions { sm }).expect("codegen");
            gyre_test_tools::run_ptxas(&ptxas, &t, sm.target())
                .unwrap_or_else(|e| panic!("{callee}: ptxas {}: {e}", sm.target()));
        }
    }
    let sim = run_sim(&m, &text, ins);
    for (i, &y) in sim.iter().enumerate() {
        let a = args_of(i);
        let want = reference(&a);
        let d = ulps(y, want);
        assert!(
            d <= bound(&a).saturating_add(1),
            "{callee}{a:?} in ptx-sim = {y:e}, libm {want:e}: {d} ulp"
        );
    }
}

fn f64_ref(x: f32, f: fn(f64) -> f64) -> f32 {
    f(f64::from(x)) as f32
}

#[test]
fn accurate_exp_and_log() {
    let ins = vec![inputs(-110.0, 110.0)];
    check("__nv_expf", &ins, |a| f64_ref(a[0], f64::exp), |_| 1, true);
    let ins10 = vec![inputs(-50.0, 50.0)];
    check(
        "__nv_exp10f",
        &ins10,
        |a| f64_ref(a[0], |x| 10f64.powf(x)),
        |_| 1,
        true,
    );
    let pos = vec![inputs(0.0, 1000.0)];
    check("__nv_logf", &pos, |a| f64_ref(a[0], f64::ln), |_| 1, true);
    check(
        "__nv_log2f",
        &pos,
        |a| f64_ref(a[0], f64::log2),
        |_| 1,
        true,
    );
    check(
        "__nv_log10f",
        &pos,
        |a| f64_ref(a[0], f64::log10),
        |_| 1,
        true,
    );
    check(
        "llvm.exp.f32",
        &ins,
        |a| f64_ref(a[0], f64::exp),
        |_| 1,
        false,
    );
    check(
        "llvm.log.f32",
        &pos,
        |a| f64_ref(a[0], f64::ln),
        |_| 1,
        false,
    );
    check(
        "llvm.log2.f32",
        &pos,
        |a| f64_ref(a[0], f64::log2),
        |_| 1,
        false,
    );
    check(
        "llvm.log10.f32",
        &pos,
        |a| f64_ref(a[0], f64::log10),
        |_| 1,
        false,
    );
}

#[test]
fn primitives_and_fast_functions() {
    let ins = vec![inputs(-100.0, 100.0)];
    // exp2f and the primitives are exactly rounded in the interpreter.
    check(
        "__nv_exp2f",
        &ins,
        |a| f64_ref(a[0], f64::exp2),
        |_| 0,
        true,
    );
    check(
        "llvm.exp2.f32",
        &ins,
        |a| f64_ref(a[0], f64::exp2),
        |_| 0,
        false,
    );
    check(
        "__nv_fast_log2f",
        &ins,
        |a| f64_ref(a[0], f64::log2),
        |_| 0,
        true,
    );
    check(
        "__nv_rsqrtf",
        &ins,
        |a| f64_ref(a[0], |x| 1.0 / x.sqrt()),
        |_| 0,
        true,
    );
    check(
        "__nv_fast_sinf",
        &ins,
        |a| f64_ref(a[0], f64::sin),
        |_| 0,
        true,
    );
    check(
        "__nv_fast_cosf",
        &ins,
        |a| f64_ref(a[0], f64::cos),
        |_| 0,
        true,
    );
    // The scaled ones: CUDA's documented bounds for __expf (2 + 1.16|x|) and
    // __exp10f (2 + 2.95|x|); the logs are two roundings from the exact value.
    check(
        "__nv_fast_expf",
        &ins,
        |a| f64_ref(a[0], f64::exp),
        |a| ((1.16 * a[0].abs()) as u64).saturating_add(2),
        true,
    );
    check(
        "__nv_fast_exp10f",
        &ins,
        |a| f64_ref(a[0], |x| 10f64.powf(x)),
        |a| ((2.95 * a[0].abs()) as u64).saturating_add(2),
        true,
    );
    check(
        "__nv_fast_logf",
        &ins,
        |a| f64_ref(a[0], f64::ln),
        |_| 2,
        true,
    );
    check(
        "__nv_fast_log10f",
        &ins,
        |a| f64_ref(a[0], f64::log10),
        |_| 2,
        true,
    );
    check(
        "__nv_fast_tanf",
        &ins,
        |a| f64_ref(a[0], f64::tan),
        |_| 2,
        true,
    );
    check(
        "__nv_saturatef",
        &ins,
        |a| {
            if a[0].is_nan() {
                0.0
            } else {
                a[0].clamp(0.0, 1.0)
            }
        },
        |_| 0,
        true,
    );
}

#[test]
fn two_argument_functions() {
    let mut r = Rng(7);
    let a = inputs(0.0, 10.0);
    let b: Vec<f32> = a
        .iter()
        .map(|_| match r.next() % 8 {
            0 => f32::from_bits(r.next() as u32),
            _ => -5.0 + 10.0 * r.unit(),
        })
        .collect();
    let ins = vec![a, b];
    check("__nv_fast_fdividef", &ins, |a| a[0] / a[1], |_| 0, true);
    check(
        "llvm.copysign.f32",
        &ins,
        |a| a[0].copysign(a[1]),
        |_| 0,
        true,
    );
    // ex2(y·lg2 x): the rounding of the product is amplified by |y·log2 x|.
    let small: Vec<Vec<f32>> = vec![
        ins[0].iter().map(|x| x.abs().min(1e3)).collect(),
        ins[1].iter().map(|y| y.clamp(-5.0, 5.0)).collect(),
    ];
    check(
        "__nv_fast_powf",
        &small,
        |a| (f64::from(a[0]).powf(f64::from(a[1]))) as f32,
        |a| {
            let e = (f64::from(a[1]) * f64::from(a[0]).log2()).abs();
            if e.is_finite() {
                2 + (2.0 * e) as u64
            } else {
                0
            }
        },
        true,
    );
}

/// frexpf, and the four spellings of the 24-bit multiplies.
const FREXP_MUL24: &str = r#"
declare float @__nv_frexpf(float, i32*)
declare i32 @__nv_umul24(i32, i32)
declare i32 @__nv_mul24(i32, i32)
declare i32 @llvm.nvvm.mul24.i(i32, i32)
declare i32 @llvm.nvvm.umul24.i(i32, i32)
declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ntid.x()

define void @k(float* %x, float* %m, i32* %e, i32* %a, i32* %b, i32* %r) {
entry:
  %t = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %c = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %n = call i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
  %cn = mul i32 %c, %n
  %i = add i32 %cn, %t
  %ie = sext i32 %i to i64
  %px = getelementptr float, float* %x, i64 %ie
  %xv = load float, float* %px
  %pe = getelementptr i32, i32* %e, i64 %ie
  %mv = call float @__nv_frexpf(float %xv, i32* %pe)
  %pm = getelementptr float, float* %m, i64 %ie
  store float %mv, float* %pm
  %pa = getelementptr i32, i32* %a, i64 %ie
  %av = load i32, i32* %pa
  %pb = getelementptr i32, i32* %b, i64 %ie
  %bv = load i32, i32* %pb
  %u1 = call i32 @__nv_umul24(i32 %av, i32 %bv)
  %s1 = call i32 @__nv_mul24(i32 %av, i32 %bv)
  %u2 = call i32 @llvm.nvvm.umul24.i(i32 %av, i32 %bv)
  %s2 = call i32 @llvm.nvvm.mul24.i(i32 %av, i32 %bv)
  %ie4 = mul i64 %ie, 4
  %p0 = getelementptr i32, i32* %r, i64 %ie4
  store i32 %u1, i32* %p0
  %p1 = getelementptr i32, i32* %p0, i64 1
  store i32 %s1, i32* %p1
  %p2 = getelementptr i32, i32* %p0, i64 2
  store i32 %u2, i32* %p2
  %p3 = getelementptr i32, i32* %p0, i64 3
  store i32 %s2, i32* %p3
  ret void
}
!nvvm.annotations = !{!0}
!0 = !{void (float*, float*, i32*, i32*, i32*, i32*)* @k, !"kernel", i32 1}
"#;

/// `frexpf` and the 24-bit multiplies are exact: checked bit for bit.
#[test]
fn frexp_and_mul24_are_exact() {
    let m = import_module(FREXP_MUL24).expect("imports");
    let x = inputs(-1e6, 1e6);
    let n = x.len();
    let mut r = Rng(99);
    let a: Vec<u32> = (0..n).map(|_| r.next() as u32).collect();
    let b: Vec<u32> = (0..n).map(|_| r.next() as u32).collect();
    let mut mem = Memory::new();
    mem.alloc_from("x", &x);
    mem.alloc_from("m", &vec![0f32; n]);
    mem.alloc_from("e", &vec![0u32; n]);
    mem.alloc_from("a", &a);
    mem.alloc_from("b", &b);
    mem.alloc_from("r", &vec![0u32; 4 * n]);
    let args = ["x", "m", "e", "a", "b", "r"].map(Arg::buffer).to_vec();
    let launch = Launch::linear(n as u32 / THREADS, THREADS, args);
    run_kernel(&m, "k", &launch, &mut mem).expect("runs");
    let mant: Vec<f32> = mem.read("m").unwrap();
    let ex: Vec<i32> = mem.read("e").unwrap();
    let res: Vec<u32> = mem.read("r").unwrap();
    for i in 0..n {
        let (xv, mv, ev) = (x[i], mant[i], ex[i]);
        if xv == 0.0 || !xv.is_finite() {
            assert!(
                ev == 0 && (mv.to_bits() == xv.to_bits() || (xv.is_nan() && mv.is_nan())),
                "frexpf({xv:e}) = {mv:e}, {ev}"
            );
        } else {
            assert!(
                (0.5..1.0).contains(&mv.abs()) && mv.is_sign_negative() == xv.is_sign_negative(),
                "frexpf({xv:e}) mantissa {mv:e}"
            );
            // m·2^e == x, exactly (in f64, where every f32 scaling is exact).
            assert_eq!(
                f64::from(mv) * 2f64.powi(ev),
                f64::from(xv),
                "frexpf({xv:e})"
            );
        }
        let u = (a[i] & 0xff_ffff).wrapping_mul(b[i] & 0xff_ffff);
        let s24 = |v: u32| ((v << 8) as i32) >> 8;
        let s = s24(a[i]).wrapping_mul(s24(b[i])) as u32;
        assert_eq!(res[4 * i], u, "umul24({:#x}, {:#x})", a[i], b[i]);
        assert_eq!(res[4 * i + 1], s, "mul24({:#x}, {:#x})", a[i], b[i]);
        assert_eq!(res[4 * i + 2], u);
        assert_eq!(res[4 * i + 3], s);
    }
    // The PTX: ptxas accepts it, and ptx-sim agrees bit for bit on the integer parts.
    if let Some(ptxas) = gyre_test_tools::require(Tool::Ptxas, "math") {
        for sm in [Sm::Sm70, Sm::Sm80, Sm::Sm90] {
            let t = compile_module(&m, &CodegenOptions { sm }).expect("codegen");
            gyre_test_tools::run_ptxas(&ptxas, &t, sm.target()).expect("ptxas");
        }
    }
}

/// The f64 `rsqrt` and the NVVM primitive intrinsics (with and without `.ftz`).
#[test]
fn nvvm_intrinsics_and_f64_rsqrt() {
    let ins = vec![inputs(-100.0, 100.0)];
    for (name, f) in [
        ("llvm.nvvm.ex2.approx.f", f64::exp2 as fn(f64) -> f64),
        ("llvm.nvvm.ex2.approx.ftz.f", f64::exp2),
        ("llvm.nvvm.lg2.approx.f", f64::log2),
        ("llvm.nvvm.sin.approx.f", f64::sin),
        ("llvm.nvvm.cos.approx.ftz.f", f64::cos),
    ] {
        let src = kernel(name, 1);
        let m = import_module(&src).expect("imports");
        let got = run_interp(&m, &ins);
        for (x, y) in ins[0].iter().zip(&got) {
            let want = f(f64::from(*x)) as f32;
            assert_eq!(ulps(*y, want), 0, "{name}({x:e}) = {y:e}, want {want:e}");
        }
    }
    // f64 rsqrt: the exactly rounded 1/sqrt(x) of the IR, here 1.0 / sqrt in f64.
    const SRC: &str = r#"
declare double @__nv_rsqrt(double)
declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
define void @k(double* %p) {
entry:
  %t = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %ie = sext i32 %t to i64
  %q = getelementptr double, double* %p, i64 %ie
  %x = load double, double* %q
  %r = call double @__nv_rsqrt(double %x)
  store double %r, double* %q
  ret void
}
!nvvm.annotations = !{!0}
!0 = !{void (double*)* @k, !"kernel", i32 1}
"#;
    let m = import_module(SRC).expect("imports");
    let xs: Vec<f64> = vec![
        4.0,
        2.0,
        0.0,
        -0.0,
        -1.0,
        f64::INFINITY,
        1e-310,
        1e300,
        0.3,
        7.5,
    ];
    let mut mem = Memory::new();
    mem.alloc_from("p", &xs);
    let launch = Launch::linear(1, xs.len() as u32, vec![Arg::buffer("p")]);
    run_kernel(&m, "k", &launch, &mut mem).expect("runs");
    let got: Vec<f64> = mem.read("p").unwrap();
    for (x, y) in xs.iter().zip(&got) {
        let want = 1.0 / x.sqrt();
        assert!(
            y.to_bits() == want.to_bits() || (y.is_nan() && want.is_nan()),
            "rsqrt({x:e}) = {y:e}, want {want:e}"
        );
    }
    assert_eq!(got[0], 0.5);
}

/// The export of every math opcode passes `opt -passes=verify` (LLVM 14).
#[test]
fn export_passes_opt_verify() {
    let mut src = String::new();
    let mut modules = vec![(
        "frexp/mul24".to_string(),
        import_module(FREXP_MUL24).expect("imports"),
    )];
    for (c, arity) in [
        ("__nv_expf", 1),
        ("__nv_logf", 1),
        ("__nv_fast_tanf", 1),
        ("__nv_rsqrtf", 1),
        ("__nv_fast_powf", 2),
        ("__nv_fast_fdividef", 2),
    ] {
        let m = import_module(&kernel(c, arity)).unwrap_or_else(|e| panic!("{c}: {e:?}"));
        modules.push((c.to_string(), m));
    }
    for (c, m) in &modules {
        let text = export_module(m, &ExportOptions::default());
        src.push_str(&text);
        let Some(opt) = gyre_test_tools::require(Tool::Opt, "math export") else {
            return;
        };
        let p = std::env::temp_dir().join(format!(
            "gyre-math-{}-{}.ll",
            std::process::id(),
            c.replace('/', "_")
        ));
        std::fs::write(&p, &text).unwrap();
        let out = Command::new(&opt)
            .args(["-passes=verify", "-S", "-o", "/dev/null"])
            .arg(&p)
            .output()
            .expect("opt runs");
        let _ = std::fs::remove_file(&p);
        assert!(
            out.status.success(),
            "{c}: {}\n{text}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    for name in [
        "llvm.nvvm.ex2.approx.f",
        "llvm.nvvm.rsqrt.approx.f",
        "llvm.nvvm.mul24.i",
    ] {
        assert!(src.contains(name), "export uses {name}");
    }
}

fn ulps64(a: f64, b: f64) -> u64 {
    if a.is_nan() || b.is_nan() {
        return if a.is_nan() && b.is_nan() {
            0
        } else {
            u64::MAX
        };
    }
    let key = |x: f64| {
        let b = x.to_bits();
        if b >> 63 == 1 {
            -((b & !(1 << 63)) as i128)
        } else {
            b as i128
        }
    };
    (key(a) - key(b)).unsigned_abs() as u64
}

/// The f64 functions against the host's f64 libm (itself within 1 ulp, so two correct
/// implementations may differ by 1 ulp more than either's error).
#[test]
fn f64_exp_and_log() {
    let mut r = Rng(0xfeed);
    let mut xs: Vec<f64> = vec![
        0.0,
        -0.0,
        1.0,
        -1.0,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::NAN,
        f64::MIN_POSITIVE,
        f64::from_bits(1),
        f64::from_bits(0x000f_ffff_ffff_ffff),
        f64::MAX,
        709.78,
        709.79,
        -708.4,
        -745.1,
        -745.2,
        std::f64::consts::E,
        0.5,
        2.0,
    ];
    for k in 1..64u64 {
        xs.push(f64::from_bits(1f64.to_bits() + k));
        xs.push(f64::from_bits(1f64.to_bits() - k));
    }
    for _ in 0..1200 {
        xs.push(f64::from_bits(r.next()));
    }
    for _ in 0..1200 {
        xs.push(-750.0 + 1470.0 * f64::from(r.unit()) + f64::from(r.unit()) * 1e-7);
    }
    for _ in 0..300 {
        xs.push(f64::from_bits(r.next() & 0x800f_ffff_ffff_ffff));
    }
    for (name, f) in [
        ("__nv_exp", f64::exp as fn(f64) -> f64),
        ("__nv_log", f64::ln),
        ("llvm.exp.f64", f64::exp),
        ("llvm.log.f64", f64::ln),
    ] {
        check_f64(name, f, &mut xs, &[Sm::Sm80]);
    }
}

/// f64 sin and cos (msun's kernels after a three-part Cody-Waite reduction) against the
/// host's libm over |x| < 2^20·π/2 (the Cody-Waite path): special values,
/// subnormals, multiples and near-multiples of π/2 (the cancellation that takes the
/// second and third reduction rounds), and random bit patterns folded into the range.
#[test]
fn f64_sin_and_cos() {
    use std::f64::consts::FRAC_PI_2;
    let range = 1_647_099.0; // just under 2^20·π/2
    let mut r = Rng(0x5eed);
    let mut xs: Vec<f64> = vec![
        0.0,
        -0.0,
        1.0,
        -1.0,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::NAN,
        f64::MIN_POSITIVE,
        -f64::MIN_POSITIVE,
        f64::from_bits(1),
        f64::from_bits(0x8000_0000_0000_0001),
        f64::from_bits(0x000f_ffff_ffff_ffff),
        1e-300,
        1e-9,
        std::f64::consts::FRAC_PI_4,
        -std::f64::consts::FRAC_PI_4,
        range,
        -range,
    ];
    for k in -2000i32..2000 {
        let m = f64::from(k) * FRAC_PI_2;
        xs.push(m);
        for d in 1..4u64 {
            xs.push(f64::from_bits(m.to_bits() + d));
            xs.push(f64::from_bits(m.to_bits().wrapping_sub(d)));
        }
    }
    // Multiples of π/2 up to the top of the range.
    for _ in 0..600 {
        let n = (r.next() % 1_048_000) as f64;
        let m = n * FRAC_PI_2;
        xs.push(m);
        xs.push(f64::from_bits(m.to_bits() + 1));
        xs.push(-f64::from_bits(m.to_bits().wrapping_sub(1)));
    }
    // The doubles closest to a multiple of π/2 in the range (|x - n·π/2| ≈ 2^-70·|x|,
    // found by an exact search over n < 2^20): they take the third reduction round.
    for bits in [
        0x4113_9c6f_d678_05a7u64,
        0x4123_9c6f_d678_05a7,
        0x4133_9c6f_d678_05a7,
        0x412a_9adc_c7f9_6cf0,
        0x4119_3c05_c9ed_3cbc,
        0x4129_3c05_c9ed_3cbc,
        0x4132_ed04_5771_ed8d,
        0x4134_4bdb_557e_1dc1,
        0x411e_db9b_bd62_73d1,
        0x412e_db9b_bd62_73d1,
        0x4138_8c9a_4ae7_24a2,
        0x4122_3d98_d86b_d573,
        0x4132_3d98_d86b_d573,
        0x410b_f9b3_c605_9d24,
        0x411b_f9b3_c605_9d24,
        0x4124_fb46_d484_35db,
    ] {
        for d in 0..3 {
            let x = f64::from_bits(bits + d);
            xs.extend([x, -x]);
        }
    }
    for _ in 0..2000 {
        // A random significand and sign with an exponent in [2^-1022, 2^20].
        let bits = r.next();
        let e = (bits >> 52) % 1043;
        let x = f64::from_bits((bits & 0x800f_ffff_ffff_ffff) | (e << 52));
        xs.push(x);
    }
    for _ in 0..1500 {
        xs.push((f64::from(r.unit()) * 2.0 - 1.0) * 20.0 + f64::from(r.unit()) * 1e-8);
    }
    for _ in 0..300 {
        xs.push(f64::from_bits(r.next() & 0x800f_ffff_ffff_ffff));
    }
    xs.retain(|x| !x.is_finite() || x.abs() < range);
    for (name, f) in [
        ("__nv_sin", f64::sin as fn(f64) -> f64),
        ("__nv_cos", f64::cos),
        ("llvm.sin.f64", f64::sin),
        ("llvm.cos.f64", f64::cos),
    ] {
        check_f64(name, f, &mut xs, &Sm::ALL);
    }
}

/// ⌊π/2·2^1200⌋, least significant word first (from the hex digits of π: independent of
/// the 2/π table the importer uses).
const HALF_PI_2_1200: [u64; 19] = [
    0x5b2c_38c5_e6ac_410a,
    0x9ebf_06ca_ba47_b947,
    0xa734_d22c_7f51_fa49,
    0x7e0b_31b4_906c_38ab,
    0xb67b_8400_f971_42c7,
    0x3fcc_9250_cca3_d9c8,
    0x3f4b_5d3e_4822_f896,
    0x6fdb_dc70_d7f6_b513,
    0xdad6_17fe_b96d_e80d,
    0xfd8d_e898_85d3_4c6f,
    0x848b_c90b_6aec_c4bc,
    0x286e_9fc2_6ada_daa3,
    0x8636_6056_14db_e4be,
    0x09bb_df2a_3367_9a74,
    0x3644_a294_10f3_1c68,
    0x98e8_0417_7d4c_7627,
    0x39a2_5204_9c11_14cf,
    0x8469_898c_c517_01b8,
    0x0001_921f_b544_42d1,
];

/// `|x| = k·π/2 + r` for a normal |x| >= 1, by exact long division of `|x|·2^1200` by
/// `HALF_PI_2_1200` (error of `r` below 2^-170): returns `r` as a double-double
/// (|r| <= π/4) and `k mod 4`. The test's reference reduction for huge arguments, where
/// the host's libm is itself up to 2 ulp off (glibc: sin(2·6381956970095103·2^797)).
fn reduce_exact(x: f64) -> (f64, f64, u32) {
    let bits = x.abs().to_bits();
    let e = (bits >> 52) as i64;
    let m = (bits & ((1 << 52) - 1)) | (1 << 52);
    let shift = (e - 1075 + 1200) as u64;
    let p = &HALF_PI_2_1200;
    let mut rem = [0u64; 19];
    let mut q = 0u32;
    let ge = |a: &[u64; 19]| {
        for i in (0..19).rev() {
            if a[i] != p[i] {
                return a[i] > p[i];
            }
        }
        true
    };
    let sub = |a: &mut [u64; 19], b: &[u64; 19]| {
        let mut borrow = false;
        for i in 0..19 {
            let (d, b1) = a[i].overflowing_sub(b[i]);
            let (d, b2) = d.overflowing_sub(u64::from(borrow));
            a[i] = d;
            borrow = b1 || b2;
        }
    };
    for i in (0..53 + shift).rev() {
        let bit = i >= shift && (m >> (i - shift)) & 1 != 0;
        let mut carry = u64::from(bit);
        for w in rem.iter_mut() {
            let c = *w >> 63;
            *w = (*w << 1) | carry;
            carry = c;
        }
        q = (q << 1) & 3;
        if ge(&rem) {
            sub(&mut rem, p);
            q |= 1;
        }
    }
    // Past π/4: r - π/2, one more quadrant.
    let mut half = *p;
    for i in 0..19 {
        half[i] = (half[i] >> 1) | if i < 18 { p[i + 1] << 63 } else { 0 };
    }
    let neg = ge(&rem) && rem != half;
    if neg {
        let mut d = *p;
        sub(&mut d, &rem);
        rem = d;
        q = (q + 1) & 3;
    }
    // The top 128 bits of rem as h + l.
    let hb = (0..19 * 64)
        .rev()
        .find(|&b| rem[b / 64] >> (b % 64) & 1 != 0);
    let Some(hb) = hb else { return (0.0, 0.0, q) };
    let get = |lo: usize| -> u64 {
        // 64 bits of rem from bit `lo` up (bits below 0 read as zero)
        let mut v = 0u64;
        for k in 0..64 {
            let b = lo + k;
            if b >= 64 && b - 64 < 19 * 64 {
                let bb = b - 64;
                v |= (rem[bb / 64] >> (bb % 64) & 1) << k;
            }
        }
        v
    };
    let t = get(hb + 1); // bits hb-63..=hb (offset by 64 so that negative indices read 0)
    let t2 = get(hb + 1 - 64);
    let sc = |k: i64| 2f64.powi(k as i32);
    let h = (t >> 11) as f64 * sc(hb as i64 - 52 - 1200);
    let l = (((t & 0x7ff) << 53) | (t2 >> 11)) as f64 * sc(hb as i64 - 116 - 1200);
    if neg {
        (-h, -l, q)
    } else {
        (h, l, q)
    }
}

/// sin(x) for |x| >= 1 through [`reduce_exact`]: sin(h + l) = sin h + l·cos h.
fn sin_large_ref(x: f64) -> f64 {
    if !x.is_finite() {
        return f64::NAN;
    }
    let (h, l, q) = reduce_exact(x);
    let s = h.sin() + l * h.cos();
    let c = h.cos() - l * h.sin();
    let v = [s, c, -s, -c][q as usize];
    if x < 0.0 {
        -v
    } else {
        v
    }
}

/// cos(x) for |x| >= 1 through [`reduce_exact`].
fn cos_large_ref(x: f64) -> f64 {
    if !x.is_finite() {
        return f64::NAN;
    }
    let (h, l, q) = reduce_exact(x);
    let s = h.sin() + l * h.cos();
    let c = h.cos() - l * h.sin();
    [c, -s, -c, s][q as usize]
}

/// The exact reduction itself, checked where the host's libm is reliable (small
/// arguments and exact identities), so that the large test's reference is tested.
#[test]
fn reference_reduction_is_exact() {
    let mut r = Rng(0x7e57);
    for _ in 0..2000 {
        let x = 1.0 + f64::from(r.unit()) * 1e5;
        let (s, c) = (sin_large_ref(x), cos_large_ref(x));
        assert!(ulps64(s, x.sin()) <= 1, "sin {x}: {s} vs {}", x.sin());
        assert!(ulps64(c, x.cos()) <= 1, "cos {x}: {c} vs {}", x.cos());
        assert!(ulps64(sin_large_ref(-x), -x.sin()) <= 1);
    }
    // Muller's worst case: x - k·π/2 = 4.687165924254628e-19 with k odd (quadrant 1).
    let worst = 6_381_956_970_095_103.0 * 2f64.powi(797);
    let (h, l, q) = reduce_exact(worst);
    assert_eq!((h + l, q), (4.687_165_924_254_628e-19, 1));
}

/// f64 sin and cos over |x| >= 2^20, where the reduction is Payne-Hanek, against an
/// exact reduction ([`reduce_exact`]) and the host's sin/cos of the remainder (the host's
/// libm on the argument itself is up to 2 ulp off here): the boundary of the two reductions, 1e22, the largest doubles, the double
/// closest to a multiple of π/2 (6381956970095103·2^797, Muller's worst case) and its
/// neighbours, doubles near multiples of π/2 and random significands at every exponent
/// from 2^20 to 2^1023.
#[test]
fn f64_sin_and_cos_large() {
    use std::f64::consts::FRAC_PI_2;
    let mut r = Rng(0xb16a);
    let worst = 6_381_956_970_095_103.0 * 2f64.powi(797);
    let mut xs: Vec<f64> = vec![
        1e22,
        -1e22,
        1e300,
        -1e300,
        f64::MAX,
        -f64::MAX,
        2f64.powi(1023),
        1_048_576.0,
        -1_048_576.0,
        1_647_099.5,
        1_647_100.0,
        worst,
        -worst,
        2.0 * worst,
        0.5 * worst,
    ];
    for d in 1..40u64 {
        for base in [
            worst,
            1_048_576.0,
            2f64.powi(1023),
            f64::MAX,
            1e22,
            2f64.powi(63),
        ] {
            xs.push(f64::from_bits(base.to_bits() - d));
            if base != f64::MAX {
                xs.push(-f64::from_bits(base.to_bits() + d));
            }
        }
    }
    // Near multiples of π/2 (the double product, then its neighbours), n up to 2^60.
    for _ in 0..400 {
        let sh = r.next() % 41 + 20;
        let n = (r.next() >> (64 - sh)) as f64;
        let m = n * FRAC_PI_2;
        if m >= 1_048_576.0 {
            xs.push(m);
            xs.push(-f64::from_bits(m.to_bits() + 1));
            xs.push(f64::from_bits(m.to_bits() - 1));
        }
    }
    // Random significands and signs at every exponent from 2^20 up.
    for e in 1043u64..2047 {
        for _ in 0..3 {
            let bits = r.next() & 0x800f_ffff_ffff_ffff;
            xs.push(f64::from_bits(bits | (e << 52)));
        }
    }
    for _ in 0..1500 {
        let bits = r.next();
        let x = f64::from_bits(bits);
        if x.is_finite() && x.abs() >= 1_048_576.0 {
            xs.push(x);
        }
    }
    for (name, f) in [
        ("__nv_sin", sin_large_ref as fn(f64) -> f64),
        ("__nv_cos", cos_large_ref),
        ("llvm.sin.f64", sin_large_ref),
        ("llvm.cos.f64", cos_large_ref),
    ] {
        check_f64(name, f, &mut xs, &Sm::ALL);
    }
}

/// Runs the f64 function `name` (libdevice or LLVM intrinsic) over `xs` in the
/// interpreter, asserts ≤ 1 ulp against `f`, that ptx-sim agrees bit for bit, and that
/// ptxas accepts the PTX for each of `ptxas_sms` (when ptxas is installed).
fn check_f64(name: &str, f: fn(f64) -> f64, xs: &mut Vec<f64>, ptxas_sms: &[Sm]) {
    let src = format!(
        r#"
declare double @{name}(double)
declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
define void @k(double* %p) {{
entry:
  %t = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %c = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %n = call i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
  %cn = mul i32 %c, %n
  %i = add i32 %cn, %t
  %ie = sext i32 %i to i64
  %q = getelementptr double, double* %p, i64 %ie
  %x = load double, double* %q
  %y = call double @{name}(double %x)
  store double %y, double* %q
  ret void
}}
!nvvm.annotations = !{{!0}}
!0 = !{{void (double*)* @k, !"kernel", i32 1}}
"#
    );
    while !xs.len().is_multiple_of(THREADS as usize) {
        xs.push(1.5);
    }
    let m = import_module(&src).expect("imports");
    let mut mem = Memory::new();
    mem.alloc_from("p", xs);
    let launch = Launch::linear(xs.len() as u32 / THREADS, THREADS, vec![Arg::buffer("p")]);
    run_kernel(&m, "k", &launch, &mut mem).expect("runs");
    let got: Vec<f64> = mem.read("p").unwrap();
    let mut worst = 0;
    for (x, y) in xs.iter().zip(&got) {
        let want = f(*x);
        let d = ulps64(*y, want);
        assert!(d <= 1, "{name}({x:e}) = {y:e}, libm {want:e}: {d} ulp");
        // ulps64 puts -0 and +0 together: a zero result must also have libm's sign.
        assert!(
            want != 0.0 || y.to_bits() == want.to_bits(),
            "{name}({x:e}) = {y:e}, libm {want:e}"
        );
        worst = worst.max(d);
    }
    println!("{name}: {} inputs, worst {worst} ulp", xs.len());
    // ptx-sim agrees with the interpreter bit for bit: no approximate primitive.
    let ptx = compile_module(&m, &CodegenOptions { sm: Sm::Sm80 }).expect("codegen");
    let sim = gyre_ptx_sim::parse(&ptx).expect("ptx-sim parses");
    let mut smem = gyre_ptx_sim::Memory::new();
    let bytes: Vec<u8> = xs.iter().flat_map(|x| x.to_le_bytes()).collect();
    let base = smem.alloc(bytes.len(), 256);
    smem.write_bytes(base, &bytes).unwrap();
    gyre_ptx_sim::run_kernel(
        &sim,
        &gyre_codegen_lite::mangle("k"),
        &gyre_ptx_sim::Launch {
            grid: [xs.len() as u32 / THREADS, 1, 1],
            block: [THREADS, 1, 1],
        },
        &[gyre_ptx_sim::ParamValue::U64(base)],
        &mut smem,
    )
    .expect("ptx-sim runs");
    let sb = smem.read_bytes(base, bytes.len()).unwrap();
    for (i, c) in sb.chunks(8).enumerate() {
        let v = f64::from_le_bytes(c.try_into().unwrap());
        assert!(
            v.to_bits() == got[i].to_bits() || (v.is_nan() && got[i].is_nan()),
            "{name}({:e}): ptx-sim {v:e}, interpreter {:e}",
            xs[i],
            got[i]
        );
    }
    if let Some(ptxas) = gyre_test_tools::require(Tool::Ptxas, "math f64") {
        for sm in ptxas_sms {
            let p = compile_module(&m, &CodegenOptions { sm: *sm }).expect("codegen");
            gyre_test_tools::run_ptxas(&ptxas, &p, sm.target()).expect("ptxas");
        }
    }
}

/// powf against the host's pow (in f64, rounded): ≤ 1 ulp, on random pairs and on every
/// pair of special values (C99 Annex F's cases).
#[test]
fn accurate_powf() {
    let specials = [
        0.0f32,
        -0.0,
        1.0,
        -1.0,
        0.5,
        -0.5,
        2.0,
        -2.0,
        3.0,
        -3.0,
        2.5,
        -2.5,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::NAN,
        f32::MIN_POSITIVE,
        f32::from_bits(1),
        f32::MAX,
        16777216.0,
        -16777215.0,
        1.0000001,
        0.99999994,
    ];
    let (mut a, mut b) = (Vec::new(), Vec::new());
    for &x in &specials {
        for &y in &specials {
            a.push(x);
            b.push(y);
        }
    }
    let mut r = Rng(31);
    for _ in 0..3000 {
        let x = match r.next() % 4 {
            0 => f32::from_bits(r.next() as u32),
            1 => -10.0 + 20.0 * r.unit(),
            _ => 1e-3 + 100.0 * r.unit(),
        };
        let y = match r.next() % 4 {
            0 => f32::from_bits(r.next() as u32),
            1 => ((r.next() % 41) as f32) - 20.0,
            _ => -40.0 + 80.0 * r.unit(),
        };
        a.push(x);
        b.push(y);
    }
    while !a.len().is_multiple_of(THREADS as usize) {
        a.push(2.0);
        b.push(0.5);
    }
    let ins = vec![a, b];
    let reference = |v: &[f32]| f64::from(v[0]).powf(f64::from(v[1])) as f32;
    check("__nv_powf", &ins, reference, |_| 1, true);
    check("llvm.pow.f32", &ins, reference, |_| 1, false);
}

/// sinf, cosf, tanf (and llvm.sin/cos.f32) over the whole range, large arguments
/// included (Payne-Hanek), against the host's f64 functions rounded: ≤ 1 ulp.
#[test]
fn accurate_trig() {
    let mut v = inputs(-10.0, 10.0);
    let mut r = Rng(2024);
    // Around the switch to Payne-Hanek, and near multiples of π/2 (cancellation).
    for _ in 0..200 {
        v.push(524_288.0 * (0.5 + r.unit()));
        v.push(-(1e6 + 1e8 * r.unit()));
    }
    for k in 1..200i32 {
        let m = (f64::from(k) * std::f64::consts::FRAC_PI_2) as f32;
        v.push(m);
        v.push(f32::from_bits(m.to_bits() + 1));
        v.push(-m);
    }
    // Huge arguments (π·2^100 among them) and the extremes.
    v.extend([
        1.0e22f32,
        6.0e22,
        f32::from_bits(0x71c9_0fdb),
        3.4e38,
        -3.4e38,
        105_615.0,
        1.5707964,
    ]);
    while !v.len().is_multiple_of(THREADS as usize) {
        v.push(r.unit() * 1e30);
    }
    let ins = vec![v];
    check("__nv_sinf", &ins, |a| f64_ref(a[0], f64::sin), |_| 1, true);
    check("__nv_cosf", &ins, |a| f64_ref(a[0], f64::cos), |_| 1, true);
    check("__nv_tanf", &ins, |a| f64_ref(a[0], f64::tan), |_| 1, true);
    check(
        "llvm.sin.f32",
        &ins,
        |a| f64_ref(a[0], f64::sin),
        |_| 1,
        false,
    );
    check(
        "llvm.cos.f32",
        &ins,
        |a| f64_ref(a[0], f64::cos),
        |_| 1,
        false,
    );
}

/// sincosf stores sinf and cosf through its pointers.
#[test]
fn sincosf_stores_both() {
    const SRC: &str = r#"
declare void @__nv_sincosf(float, float*, float*)
declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
define void @k(float* %x, float* %s, float* %c) {
entry:
  %t = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %ie = sext i32 %t to i64
  %px = getelementptr float, float* %x, i64 %ie
  %xv = load float, float* %px
  %ps = getelementptr float, float* %s, i64 %ie
  %pc = getelementptr float, float* %c, i64 %ie
  call void @__nv_sincosf(float %xv, float* %ps, float* %pc)
  ret void
}
!nvvm.annotations = !{!0}
!0 = !{void (float*, float*, float*)* @k, !"kernel", i32 1}
"#;
    let m = import_module(SRC).expect("imports");
    let xs: Vec<f32> = (0..64).map(|i| (i as f32 - 32.0) * 0.7).collect();
    let mut mem = Memory::new();
    mem.alloc_from("x", &xs);
    mem.alloc_from("s", &[0f32; 64]);
    mem.alloc_from("c", &[0f32; 64]);
    let args = ["x", "s", "c"].map(Arg::buffer).to_vec();
    run_kernel(&m, "k", &Launch::linear(1, 64, args), &mut mem).expect("runs");
    let s: Vec<f32> = mem.read("s").unwrap();
    let c: Vec<f32> = mem.read("c").unwrap();
    for i in 0..64 {
        let x = f64::from(xs[i]);
        assert!(ulps(s[i], x.sin() as f32) <= 1, "sin({x})");
        assert!(ulps(c[i], x.cos() as f32) <= 1, "cos({x})");
    }
}

/// compiler-rt's `__powisf2`/`__powidf2` (square and multiply), the reference for
/// libdevice's `powif`/`powi` and `llvm.powi`.
fn powi_ref<F: Copy + std::ops::Mul<Output = F> + std::ops::Div<Output = F>>(
    mut a: F,
    mut b: i32,
    one: F,
) -> F {
    let recip = b < 0;
    let mut r = one;
    loop {
        if b & 1 != 0 {
            r = r * a;
        }
        b /= 2;
        if b == 0 {
            break;
        }
        a = a * a;
    }
    if recip {
        one / r
    } else {
        r
    }
}

/// powif/powi (libdevice and `llvm.powi`) become a call of one library device function
/// per module (a loop): bit for bit the reference algorithm, in the interpreter and in
/// ptx-sim, and ptxas accepts the `.func`.
#[test]
fn powi_library_function() {
    const SRC: &str = r#"
declare float @__nv_powif(float, i32)
declare double @__nv_powi(double, i32)
declare float @llvm.powi.f32.i32(float, i32)
declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
define void @k(float* %x, double* %d, i32* %n, float* %o1, double* %o2, float* %o3) {
entry:
  %t = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %c = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %nt = call i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
  %cn = mul i32 %c, %nt
  %i = add i32 %cn, %t
  %ie = sext i32 %i to i64
  %px = getelementptr float, float* %x, i64 %ie
  %xv = load float, float* %px
  %pd = getelementptr double, double* %d, i64 %ie
  %dv = load double, double* %pd
  %pn = getelementptr i32, i32* %n, i64 %ie
  %nv = load i32, i32* %pn
  %r1 = call float @__nv_powif(float %xv, i32 %nv)
  %r2 = call double @__nv_powi(double %dv, i32 %nv)
  %r3 = call float @llvm.powi.f32.i32(float %xv, i32 %nv)
  %p1 = getelementptr float, float* %o1, i64 %ie
  store float %r1, float* %p1
  %p2 = getelementptr double, double* %o2, i64 %ie
  store double %r2, double* %p2
  %p3 = getelementptr float, float* %o3, i64 %ie
  store float %r3, float* %p3
  ret void
}
!nvvm.annotations = !{!0}
!0 = !{void (float*, double*, i32*, float*, double*, float*)* @k, !"kernel", i32 1}
"#;
    let m = import_module(SRC).expect("imports");
    // One library function per callee, added once.
    let names: Vec<&str> = m.functions.values().map(|f| f.name.as_str()).collect();
    assert_eq!(
        names.iter().filter(|n| **n == "__nv_powif").count(),
        1,
        "{names:?}"
    );
    assert_eq!(
        names.iter().filter(|n| **n == "__nv_powi").count(),
        1,
        "{names:?}"
    );
    let mut r = Rng(5);
    let n = 1024usize;
    let mut xs: Vec<f32> = Vec::new();
    let mut ns: Vec<i32> = Vec::new();
    for i in 0..n {
        xs.push(match i % 5 {
            0 => f32::from_bits(r.next() as u32),
            1 => 0.5 + r.unit(),
            2 => -2.0 + 4.0 * r.unit(),
            3 => [0.0, -0.0, f32::INFINITY, f32::NAN, -1.0, 1.0][i % 6],
            _ => 1.0 + 1e-3 * r.unit(),
        });
        ns.push(match i % 4 {
            0 => (r.next() as i32) % 64,
            1 => r.next() as i32,
            2 => [0, 1, -1, i32::MIN, i32::MAX, 2, -2][i % 7],
            _ => (r.next() % 2000) as i32 - 1000,
        });
    }
    let ds: Vec<f64> = xs.iter().map(|&x| f64::from(x) * 1.000_000_1).collect();
    let mut mem = Memory::new();
    mem.alloc_from("x", &xs);
    mem.alloc_from("d", &ds);
    mem.alloc_from("n", &ns);
    mem.alloc_from("o1", &vec![0f32; n]);
    mem.alloc_from("o2", &vec![0f64; n]);
    mem.alloc_from("o3", &vec![0f32; n]);
    let args = ["x", "d", "n", "o1", "o2", "o3"].map(Arg::buffer).to_vec();
    run_kernel(&m, "k", &Launch::linear(8, 128, args), &mut mem).expect("runs");
    let o1: Vec<f32> = mem.read("o1").unwrap();
    let o2: Vec<f64> = mem.read("o2").unwrap();
    let o3: Vec<f32> = mem.read("o3").unwrap();
    for i in 0..n {
        let w1 = powi_ref(xs[i], ns[i], 1.0f32);
        let w2 = powi_ref(ds[i], ns[i], 1.0f64);
        let same32 = |a: f32, b: f32| a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan());
        assert!(
            same32(o1[i], w1),
            "powif({:e}, {}) = {:e}, want {w1:e}",
            xs[i],
            ns[i],
            o1[i]
        );
        assert!(same32(o3[i], w1), "llvm.powi({:e}, {})", xs[i], ns[i]);
        assert!(
            o2[i].to_bits() == w2.to_bits() || (o2[i].is_nan() && w2.is_nan()),
            "powi({:e}, {}) = {:e}, want {w2:e}",
            ds[i],
            ns[i],
            o2[i]
        );
    }
    // PTX: ptxas, and ptx-sim's o1 equals the interpreter's.
    let ptx = compile_module(&m, &CodegenOptions { sm: Sm::Sm70 }).expect("codegen");
    assert!(ptx.contains(".func"), "a device function");
    if let Some(ptxas) = gyre_test_tools::require(Tool::Ptxas, "math powi") {
        gyre_test_tools::run_ptxas(&ptxas, &ptx, Sm::Sm70.target()).expect("ptxas");
    }
    let sim = gyre_ptx_sim::parse(&ptx).expect("parses");
    let mut smem = gyre_ptx_sim::Memory::new();
    let mut params = Vec::new();
    let mut outs = Vec::new();
    let bufs: [(Vec<u8>, bool); 6] = [
        (xs.iter().flat_map(|v| v.to_le_bytes()).collect(), false),
        (ds.iter().flat_map(|v| v.to_le_bytes()).collect(), false),
        (ns.iter().flat_map(|v| v.to_le_bytes()).collect(), false),
        (vec![0; 4 * n], true),
        (vec![0; 8 * n], true),
        (vec![0; 4 * n], true),
    ];
    for (bytes, out) in &bufs {
        let base = smem.alloc(bytes.len(), 256);
        smem.write_bytes(base, bytes).unwrap();
        params.push(gyre_ptx_sim::ParamValue::U64(base));
        if *out {
            outs.push((base, bytes.len()));
        }
    }
    gyre_ptx_sim::run_kernel(
        &sim,
        &gyre_codegen_lite::mangle("k"),
        &gyre_ptx_sim::Launch {
            grid: [8, 1, 1],
            block: [128, 1, 1],
        },
        &params,
        &mut smem,
    )
    .expect("ptx-sim runs");
    let got = smem.read_bytes(outs[0].0, outs[0].1).unwrap();
    for (i, c) in got.chunks(4).enumerate() {
        let v = f32::from_le_bytes(c.try_into().unwrap());
        assert!(
            v.to_bits() == o1[i].to_bits() || (v.is_nan() && o1[i].is_nan()),
            "ptx-sim powif({:e}, {}) = {v:e}, interpreter {:e}",
            xs[i],
            ns[i],
            o1[i]
        );
    }
}

/// The f32 functions evaluated in f64 (hyperbolic, expm1/log1p, cbrt, inverse
/// trigonometric): ≤ 1 ulp against the host's f64 functions rounded.
#[test]
fn f32_functions_via_f64() {
    let wide = vec![inputs(-100.0, 100.0)];
    let unit = vec![inputs(-1.0, 1.0)];
    let small = vec![inputs(-0.1, 0.1)];
    let cases: [(&str, &Vec<Vec<f32>>); 13] = [
        ("__nv_sinhf", &wide),
        ("__nv_coshf", &wide),
        ("__nv_tanhf", &wide),
        ("__nv_tanhf", &small),
        ("__nv_expm1f", &wide),
        ("__nv_expm1f", &small),
        ("__nv_log1pf", &wide),
        ("__nv_log1pf", &small),
        ("__nv_cbrtf", &wide),
        ("__nv_atanf", &wide),
        ("__nv_asinf", &unit),
        ("__nv_acosf", &unit),
        ("__nv_sinhf", &small),
    ];
    for (name, ins) in cases {
        let reference = match name {
            "__nv_sinhf" => |a: &[f32]| f64::from(a[0]).sinh() as f32,
            "__nv_coshf" => |a: &[f32]| f64::from(a[0]).cosh() as f32,
            "__nv_tanhf" => |a: &[f32]| f64::from(a[0]).tanh() as f32,
            "__nv_expm1f" => |a: &[f32]| f64::from(a[0]).exp_m1() as f32,
            "__nv_log1pf" => |a: &[f32]| f64::from(a[0]).ln_1p() as f32,
            "__nv_cbrtf" => |a: &[f32]| f64::from(a[0]).cbrt() as f32,
            "__nv_atanf" => |a: &[f32]| f64::from(a[0]).atan() as f32,
            "__nv_asinf" => |a: &[f32]| f64::from(a[0]).asin() as f32,
            _ => |a: &[f32]| f64::from(a[0]).acos() as f32,
        };
        check(name, ins, reference, |_| 1, name == "__nv_atanf");
    }
    // Two arguments, with every pair of special values.
    let sp = [
        0.0f32,
        -0.0,
        1.0,
        -1.0,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::NAN,
        f32::MIN_POSITIVE,
        f32::MAX,
        -3.5,
        1e-30,
    ];
    let (mut a, mut b) = (Vec::new(), Vec::new());
    for &x in &sp {
        for &y in &sp {
            a.push(x);
            b.push(y);
        }
    }
    let mut r = Rng(77);
    while !a.len().is_multiple_of(THREADS as usize) || a.len() < 3000 {
        let pick = |r: &mut Rng| match r.next() % 3 {
            0 => f32::from_bits(r.next() as u32),
            _ => -10.0 + 20.0 * r.unit(),
        };
        a.push(pick(&mut r));
        b.push(pick(&mut r));
    }
    let ins = vec![a, b];
    check(
        "__nv_atan2f",
        &ins,
        |v| f64::from(v[0]).atan2(f64::from(v[1])) as f32,
        |_| 1,
        true,
    );
    check(
        "__nv_hypotf",
        &ins,
        |v| f64::from(v[0]).hypot(f64::from(v[1])) as f32,
        |_| 1,
        false,
    );
}

/// More of libdevice's f32 set: inverse hyperbolic functions, reciprocal cube root and
/// hypotenuse (≤ 1 ulp), and the exact ones (fdimf, copysignf).
#[test]
fn more_f32_functions() {
    let wide = vec![inputs(-100.0, 100.0)];
    let unit = vec![inputs(-1.0, 1.0)];
    let above1 = vec![inputs(1.0, 50.0)];
    check(
        "__nv_asinhf",
        &wide,
        |a| f64::from(a[0]).asinh() as f32,
        |_| 1,
        true,
    );
    check(
        "__nv_acoshf",
        &above1,
        |a| f64::from(a[0]).acosh() as f32,
        |_| 1,
        false,
    );
    check(
        "__nv_atanhf",
        &unit,
        |a| f64::from(a[0]).atanh() as f32,
        |_| 1,
        false,
    );
    check(
        "__nv_rcbrtf",
        &wide,
        |a| (1.0 / f64::from(a[0]).cbrt()) as f32,
        |_| 1,
        false,
    );
    let mut r = Rng(11);
    let a = inputs(-10.0, 10.0);
    let b: Vec<f32> = a
        .iter()
        .map(|_| match r.next() % 3 {
            0 => f32::from_bits(r.next() as u32),
            _ => -10.0 + 20.0 * r.unit(),
        })
        .collect();
    let two = vec![a, b];
    check(
        "__nv_rhypotf",
        &two,
        |v| (1.0 / f64::from(v[0]).hypot(f64::from(v[1]))) as f32,
        |_| 1,
        false,
    );
    check(
        "__nv_fdimf",
        &two,
        |v| {
            if v[0].is_nan() || v[1].is_nan() {
                f32::NAN
            } else if v[0] > v[1] {
                v[0] - v[1]
            } else {
                0.0
            }
        },
        |_| 0,
        true,
    );
    check(
        "__nv_copysignf",
        &two,
        |v| v[0].copysign(v[1]),
        |_| 0,
        false,
    );
}

/// ldexpf/scalbnf: correctly rounded x·2^n for any n (exact unless the result is
/// subnormal or overflows).
#[test]
fn ldexpf_is_correctly_rounded() {
    const SRC: &str = r#"
declare float @__nv_ldexpf(float, i32)
declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
define void @k(float* %x, i32* %n) {
entry:
  %t = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %c = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %nt = call i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
  %cn = mul i32 %c, %nt
  %i = add i32 %cn, %t
  %ie = sext i32 %i to i64
  %px = getelementptr float, float* %x, i64 %ie
  %xv = load float, float* %px
  %pn = getelementptr i32, i32* %n, i64 %ie
  %nv = load i32, i32* %pn
  %r = call float @__nv_ldexpf(float %xv, i32 %nv)
  store float %r, float* %px
  ret void
}
!nvvm.annotations = !{!0}
!0 = !{void (float*, i32*)* @k, !"kernel", i32 1}
"#;
    let m = import_module(SRC).expect("imports");
    let xs = inputs(-1e3, 1e3);
    let mut r = Rng(3);
    let ns: Vec<i32> = (0..xs.len())
        .map(|i| match i % 3 {
            0 => r.next() as i32,
            _ => (r.next() % 600) as i32 - 300,
        })
        .collect();
    let mut mem = Memory::new();
    mem.alloc_from("x", &xs);
    mem.alloc_from("n", &ns);
    let launch = Launch::linear(
        xs.len() as u32 / THREADS,
        THREADS,
        vec![Arg::buffer("x"), Arg::buffer("n")],
    );
    run_kernel(&m, "k", &launch, &mut mem).expect("runs");
    let got: Vec<f32> = mem.read("x").unwrap();
    for i in 0..xs.len() {
        // x·2^n in f64 is exact for n in [-400, 400]; beyond, 400 already saturates.
        let n = ns[i].clamp(-400, 400);
        let want = (f64::from(xs[i]) * 2f64.powi(n)) as f32;
        assert!(
            got[i].to_bits() == want.to_bits() || (got[i].is_nan() && want.is_nan()),
            "ldexpf({:e}, {}) = {:e}, want {want:e}",
            xs[i],
            ns[i],
            got[i]
        );
    }
}
