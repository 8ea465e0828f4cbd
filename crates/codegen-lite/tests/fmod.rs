//! The `frem` helpers (`$$gyre_fmod_f32`, `$$gyre_fmod_f64`): exact IEEE `fmod` on hard
//! operands (huge exponent gaps, subnormals, exact multiples, signed zeros, infinities,
//! NaN) and random bit patterns, in ptx-sim against the interpreter and against Rust's
//! `%` (C `fmod`); a bound on the instructions a call executes, which the per-bit long
//! division the helper used to be exceeded by an order of magnitude; ptxas acceptance.

mod common;

use common::{compile, parse, ptxas_or_skip, run_ptxas};
use gyre_codegen_lite::Sm;
use gyre_interp::{Arg, Launch, Memory};
use gyre_ir::Module;
use gyre_ptx_sim::ParamValue;

/// Threads per CTA of the launches.
const CTA: usize = 256;

/// `out[i] = x[i] frem y[i]` over `elem` (`f32` or `f64`).
fn kernel(elem: &str) -> Module {
    let size = if elem == "f64" { 8 } else { 4 };
    parse(&format!(
        "kernel @k(ptr.global, ptr.global, ptr.global) {{
block0(v0: ptr.global, v1: ptr.global, v2: ptr.global):
    v3 = tid.x
    v4 = ctaid.x
    v5 = ntid.x
    v6 = imul v4, v5
    v7 = iadd v6, v3
    v8 = ptradd v0, v7, {size}
    v9 = load.{elem} v8
    v10 = ptradd v1, v7, {size}
    v11 = load.{elem} v10
    v12 = frem v9, v11
    v13 = ptradd v2, v7, {size}
    store v12, v13
    return
}}
"
    ))
}

/// A float type the helpers exist for.
trait Float: gyre_interp::Element + Copy + std::fmt::Debug + std::fmt::LowerExp + PartialEq {
    const NAME: &'static str;
    fn rem(self, y: Self) -> Self;
    fn bits(self) -> u64;
    fn from_bits(b: u64) -> Self;
    fn is_nan(self) -> bool;
}

impl Float for f32 {
    const NAME: &'static str = "f32";
    fn rem(self, y: f32) -> f32 {
        self % y
    }
    fn bits(self) -> u64 {
        u64::from(self.to_bits())
    }
    fn from_bits(b: u64) -> f32 {
        f32::from_bits(b as u32)
    }
    fn is_nan(self) -> bool {
        f32::is_nan(self)
    }
}

impl Float for f64 {
    const NAME: &'static str = "f64";
    fn rem(self, y: f64) -> f64 {
        self % y
    }
    fn bits(self) -> u64 {
        self.to_bits()
    }
    fn from_bits(b: u64) -> f64 {
        f64::from_bits(b)
    }
    fn is_nan(self) -> bool {
        f64::is_nan(self)
    }
}

/// Same value, or both NaN (the helper returns the canonical NaN, `%` may propagate a
/// payload; the IR does not specify NaN bits).
fn same<T: Float>(a: T, b: T) -> bool {
    a.bits() == b.bits() || (a.is_nan() && b.is_nan())
}

/// Run the kernel on the pairs (padded to whole CTAs) in the interpreter and in ptx-sim;
/// check both against `%` bit for bit. Returns ptx-sim's instructions per thread.
fn check_pairs<T: Float>(m: &Module, ptx: &str, pairs: &[(T, T)]) -> u64 {
    let mut xs: Vec<T> = pairs.iter().map(|p| p.0).collect();
    let mut ys: Vec<T> = pairs.iter().map(|p| p.1).collect();
    let n = pairs.len().div_ceil(CTA) * CTA;
    let (x0, y0) = pairs[0];
    xs.resize(n, x0);
    ys.resize(n, y0);
    let want: Vec<T> = xs.iter().zip(&ys).map(|(&x, &y)| x.rem(y)).collect();

    // The interpreter, the reference semantics.
    let mut mem = Memory::new();
    mem.alloc_from("x", &xs);
    mem.alloc_from("y", &ys);
    mem.alloc_from("out", &vec![T::from_bits(0); n]);
    let launch = Launch::linear(
        (n / CTA) as u32,
        CTA as u32,
        vec![Arg::buffer("x"), Arg::buffer("y"), Arg::buffer("out")],
    );
    gyre_interp::run_kernel(m, "k", &launch, &mut mem).expect("interpreter");
    let interp = mem.read::<T>("out").unwrap();

    // ptx-sim.
    let sim = gyre_ptx_sim::parse(ptx).unwrap_or_else(|e| panic!("{e}\n{ptx}"));
    let mut smem = gyre_ptx_sim::Memory::new();
    let size = std::mem::size_of::<T>();
    let mut params = Vec::new();
    let mut bases = Vec::new();
    for v in [&xs, &ys, &vec![T::from_bits(0); n]] {
        let bytes: Vec<u8> = v
            .iter()
            .flat_map(|e| e.bits().to_le_bytes()[..size].to_vec())
            .collect();
        let b = smem.alloc(bytes.len(), 256);
        smem.write_bytes(b, &bytes).unwrap();
        bases.push(b);
        params.push(ParamValue::U64(b));
    }
    let stats = gyre_ptx_sim::run_kernel(
        &sim,
        &gyre_codegen_lite::mangle("k"),
        &gyre_ptx_sim::Launch {
            grid: [(n / CTA) as u32, 1, 1],
            block: [CTA as u32, 1, 1],
        },
        &params,
        &mut smem,
    )
    .unwrap_or_else(|e| panic!("ptx-sim: {e}"));
    let out = smem.read_bytes(bases[2], n * size).unwrap();

    for i in 0..n {
        let mut b = [0u8; 8];
        b[..size].copy_from_slice(&out[i * size..(i + 1) * size]);
        let got = T::from_bits(u64::from_le_bytes(b));
        let (x, y) = (xs[i], ys[i]);
        assert!(
            same(interp[i], want[i]),
            "{} interpreter: {x:e} frem {y:e} = {:e}, fmod says {:e}",
            T::NAME,
            interp[i],
            want[i]
        );
        assert!(
            same(got, want[i]),
            "{} ptx-sim: {x:e} frem {y:e} ({:#x} frem {:#x}) = {got:e} ({:#x}), fmod says {:e} ({:#x})",
            T::NAME,
            x.bits(),
            y.bits(),
            got.bits(),
            want[i],
            want[i].bits()
        );
    }
    stats.instructions / n as u64
}

/// Both signs of every pair, and every pair swapped.
fn with_signs<T: Float>(base: &[(T, T)], neg: impl Fn(T) -> T) -> Vec<(T, T)> {
    let mut out = Vec::new();
    for &(x, y) in base {
        for (a, b) in [(x, y), (y, x)] {
            out.extend([(a, b), (neg(a), b), (a, neg(b)), (neg(a), neg(b))]);
        }
    }
    out
}

/// A small deterministic generator (SplitMix64) for random bit patterns.
fn splitmix(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

fn hard_f64() -> Vec<(f64, f64)> {
    let sub = f64::from_bits(1); // the smallest subnormal
    let big_sub = f64::from_bits(0x000f_ffff_ffff_ffff); // the largest subnormal
    let odd_small = f64::from_bits(0x001f_ffff_ffff_ffff); // 53-bit mantissa, ey = 1
    let base = [
        (f64::MAX, sub),
        (f64::MAX, 3.0 * sub),
        (f64::MAX, big_sub),
        (f64::MAX, odd_small),
        (f64::MAX, f64::MIN_POSITIVE),
        (f64::MAX, 0.1),
        (f64::MAX, 3.0),
        (f64::MAX, std::f64::consts::PI),
        (f64::MAX, f64::MAX),
        (f64::MAX, f64::from_bits(f64::MAX.to_bits() - 1)),
        (1e308, 1e-308),
        (1e300, 7e-320),
        (big_sub, sub),
        (big_sub, 3.0 * sub),
        (big_sub, f64::from_bits(0x0000_0000_0012_3457)),
        (f64::MIN_POSITIVE, big_sub),
        (f64::MIN_POSITIVE * 3.0, f64::MIN_POSITIVE),
        (odd_small * 1.5, odd_small),
        (6.0, 3.0),
        (6.0, 2.0),
        (5.5, 2.0),
        (1.0, 0.1),
        (0.1, 0.1),
        (f64::from_bits(0.1f64.to_bits() + 1), 0.1),
        (1.0, 1.0 - f64::EPSILON / 2.0),
        (2.0_f64.powi(60), 3.0),
        (9007199254740993.0, 2.0),
        (0.0, 1.0),
        (0.0, sub),
        (0.0, f64::INFINITY),
        (1.0, f64::INFINITY),
        (f64::MAX, f64::INFINITY),
        (f64::INFINITY, 1.0),
        (f64::INFINITY, f64::INFINITY),
        (1.0, 0.0),
        (0.0, 0.0),
        (f64::NAN, 1.0),
        (1.0, f64::NAN),
        (f64::NAN, f64::INFINITY),
    ];
    with_signs(&base, |v: f64| -v)
}

fn hard_f32() -> Vec<(f32, f32)> {
    let sub = f32::from_bits(1);
    let big_sub = f32::from_bits(0x007f_ffff);
    let odd_small = f32::from_bits(0x00ff_ffff);
    let base = [
        (f32::MAX, sub),
        (f32::MAX, 3.0 * sub),
        (f32::MAX, big_sub),
        (f32::MAX, odd_small),
        (f32::MAX, f32::MIN_POSITIVE),
        (f32::MAX, 0.1),
        (f32::MAX, 3.0),
        (f32::MAX, std::f32::consts::PI),
        (f32::MAX, f32::MAX),
        (f32::MAX, f32::from_bits(f32::MAX.to_bits() - 1)),
        (1e38, 1e-38),
        (1e30, 7e-44),
        (big_sub, sub),
        (big_sub, 3.0 * sub),
        (big_sub, f32::from_bits(0x0001_2345)),
        (f32::MIN_POSITIVE, big_sub),
        (f32::MIN_POSITIVE * 3.0, f32::MIN_POSITIVE),
        (odd_small * 1.5, odd_small),
        (6.0, 3.0),
        (6.0, 2.0),
        (5.5, 2.0),
        (1.0, 0.1),
        (0.1, 0.1),
        (f32::from_bits(0.1f32.to_bits() + 1), 0.1),
        (1.0, 1.0 - f32::EPSILON / 2.0),
        (16777217.0, 2.0),
        (0.0, 1.0),
        (0.0, sub),
        (0.0, f32::INFINITY),
        (1.0, f32::INFINITY),
        (f32::INFINITY, 1.0),
        (f32::INFINITY, f32::INFINITY),
        (1.0, 0.0),
        (0.0, 0.0),
        (f32::NAN, 1.0),
        (1.0, f32::NAN),
    ];
    with_signs(&base, |v: f32| -v)
}

/// Random bit patterns, half of them finite with exponents near each other (where the
/// remainder keeps many bits), a quarter of them subnormal-heavy.
fn random_pairs<T: Float>(seed: u64, count: usize, width: u32) -> Vec<(T, T)> {
    let mut s = seed;
    let mant_bits = if width == 64 { 52 } else { 23 };
    let mask = if width == 64 {
        u64::MAX
    } else {
        u64::from(u32::MAX)
    };
    let mut out = Vec::new();
    for i in 0..count {
        let a = splitmix(&mut s) & mask;
        let mut b = splitmix(&mut s) & mask;
        match i % 4 {
            // y within a few binades of x.
            0 | 1 => {
                let exp_mask = (mask >> 1) & !((1u64 << mant_bits) - 1);
                let ea = (a & exp_mask) >> mant_bits;
                let eb = ea.saturating_sub(splitmix(&mut s) % 8);
                b = (b & !exp_mask) | (eb << mant_bits);
            }
            // y subnormal.
            2 => b &= ((1u64 << mant_bits) - 1) | (1u64 << (width - 1)),
            _ => {}
        }
        out.push((T::from_bits(a), T::from_bits(b)));
    }
    out
}

#[test]
fn fmod_f64_is_exact_in_ptx_sim() {
    let m = kernel("f64");
    let ptx = compile(&m, Sm::Sm70);
    assert!(ptx.contains("$$gyre_fmod_f64"), "{ptx}");
    check_pairs(&m, &ptx, &hard_f64());
    check_pairs(&m, &ptx, &random_pairs::<f64>(1, 4 * CTA, 64));
}

#[test]
fn fmod_f32_is_exact_in_ptx_sim() {
    let m = kernel("f32");
    let ptx = compile(&m, Sm::Sm70);
    assert!(ptx.contains("$$gyre_fmod_f32"), "{ptx}");
    check_pairs(&m, &ptx, &hard_f32());
    check_pairs(&m, &ptx, &random_pairs::<f32>(2, 4 * CTA, 32));
}

/// The largest exponent gaps with a `y` of a full mantissa (the chunks are then
/// shortest): a bounded number of instructions per call. The per-bit long division took
/// about 25,000 (f64) and 3,000 (f32).
#[test]
fn fmod_worst_case_is_fast() {
    let m = kernel("f64");
    let ptx = compile(&m, Sm::Sm70);
    let y = f64::from_bits(0x001f_ffff_ffff_ffff);
    let per_thread = check_pairs(&m, &ptx, &[(f64::MAX, y)]);
    assert!(
        per_thread < 1600,
        "f64: {per_thread} instructions per thread"
    );
    let m = kernel("f32");
    let ptx = compile(&m, Sm::Sm70);
    let y = f32::from_bits(0x00ff_ffff);
    let per_thread = check_pairs(&m, &ptx, &[(f32::MAX, y)]);
    assert!(
        per_thread < 150,
        "f32: {per_thread} instructions per thread"
    );
}

#[test]
fn fmod_helpers_pass_ptxas() {
    let Some(ptxas) = ptxas_or_skip("fmod_helpers_pass_ptxas") else {
        return;
    };
    for elem in ["f32", "f64"] {
        for sm in [Sm::Sm70, Sm::Sm80, Sm::Sm90] {
            let ptx = compile(&kernel(elem), sm);
            run_ptxas(&ptxas, &ptx, sm).unwrap_or_else(|e| panic!("{e}\n{ptx}"));
        }
    }
}
