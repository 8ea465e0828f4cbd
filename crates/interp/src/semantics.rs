//! The value semantics of each operation, as pure functions on raw bits.
//!
//! Integers of width `w` are held zero-extended in a `u64` (`i1` is 0 or 1); floats as
//! their IEEE bits (an `f32` in the low 32 bits); pointers as 64-bit addresses. Each
//! function returns the result bits and whether the result is poison. docs/ir.md
//! (`## Semantics`) states the same rules in prose.

/// The bits of a `w`-bit integer.
#[inline(always)]
pub fn mask(w: u8) -> u64 {
    if w >= 64 {
        u64::MAX
    } else {
        (1u64 << w) - 1
    }
}

/// Sign-extend the low `w` bits of `x`.
#[inline(always)]
pub fn sext(x: u64, w: u8) -> i64 {
    let sh = 64 - u32::from(w.clamp(1, 64));
    ((x << sh) as i64) >> sh
}

/// Two-operand integer operations that cannot trap.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum BinOp {
    /// `iadd`
    Add,
    /// `isub`
    Sub,
    /// `imul`
    Mul,
    /// `and`
    And,
    /// `or`
    Or,
    /// `xor`
    Xor,
    /// `shl`
    Shl,
    /// `lshr`
    Lshr,
    /// `ashr`
    Ashr,
    /// `smin`
    Smin,
    /// `smax`
    Smax,
    /// `umin`
    Umin,
    /// `umax`
    Umax,
    /// `mul24` (`i32`): product of the sign-extended low 24 bits, low 32 bits kept
    Mul24,
    /// `umul24` (`i32`): product of the zero-extended low 24 bits, low 32 bits kept
    Umul24,
}

/// Flag bits as decoded (mirrors `IntFlags`).
pub const NSW: u8 = 1;
/// No unsigned wrap.
pub const NUW: u8 = 2;
/// Exact.
pub const EXACT: u8 = 4;

/// Evaluate a non-trapping integer operation on defined operands.
#[inline(always)]
pub fn bin(op: BinOp, w: u8, flags: u8, a: u64, b: u64) -> (u64, bool) {
    let m = mask(w);
    match op {
        BinOp::Add => {
            let r = a.wrapping_add(b) & m;
            let mut p = false;
            if flags != 0 {
                if flags & NSW != 0 {
                    p |= i128::from(sext(a, w)) + i128::from(sext(b, w)) != i128::from(sext(r, w));
                }
                if flags & NUW != 0 {
                    p |= u128::from(a) + u128::from(b) > u128::from(m);
                }
            }
            (r, p)
        }
        BinOp::Sub => {
            let r = a.wrapping_sub(b) & m;
            let mut p = false;
            if flags != 0 {
                if flags & NSW != 0 {
                    p |= i128::from(sext(a, w)) - i128::from(sext(b, w)) != i128::from(sext(r, w));
                }
                if flags & NUW != 0 {
                    p |= a < b;
                }
            }
            (r, p)
        }
        BinOp::Mul => {
            let r = a.wrapping_mul(b) & m;
            let mut p = false;
            if flags != 0 {
                if flags & NSW != 0 {
                    p |= i128::from(sext(a, w)) * i128::from(sext(b, w)) != i128::from(sext(r, w));
                }
                if flags & NUW != 0 {
                    p |= u128::from(a) * u128::from(b) > u128::from(m);
                }
            }
            (r, p)
        }
        BinOp::And => (a & b, false),
        BinOp::Or => (a | b, false),
        BinOp::Xor => (a ^ b, false),
        BinOp::Shl => {
            if b >= u64::from(w) {
                return (0, true);
            }
            let r = (a << b) & m;
            let mut p = false;
            if flags & NUW != 0 {
                p |= r >> b != a;
            }
            if flags & NSW != 0 {
                p |= sext(r, w) >> b != sext(a, w);
            }
            (r, p)
        }
        BinOp::Lshr => {
            if b >= u64::from(w) {
                return (0, true);
            }
            let r = a >> b;
            (r, flags & EXACT != 0 && r << b != a)
        }
        BinOp::Ashr => {
            if b >= u64::from(w) {
                return (0, true);
            }
            let r = (sext(a, w) >> b) as u64 & m;
            (r, flags & EXACT != 0 && (r << b) & m != a)
        }
        BinOp::Smin => (if sext(a, w) <= sext(b, w) { a } else { b }, false),
        BinOp::Smax => (if sext(a, w) >= sext(b, w) { a } else { b }, false),
        BinOp::Umin => (a.min(b), false),
        BinOp::Umax => (a.max(b), false),
        BinOp::Mul24 => {
            let (x, y) = (sext(a & 0xff_ffff, 24), sext(b & 0xff_ffff, 24));
            (x.wrapping_mul(y) as u64 & m, false)
        }
        BinOp::Umul24 => ((a & 0xff_ffff).wrapping_mul(b & 0xff_ffff) & m, false),
    }
}

/// Division and remainder.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum DivOp {
    /// `sdiv`
    Sdiv,
    /// `udiv`
    Udiv,
    /// `srem`
    Srem,
    /// `urem`
    Urem,
}

/// How a division can be undefined.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum DivTrap {
    /// Divisor zero.
    Zero,
    /// `INT_MIN / -1`.
    Overflow,
}

/// Evaluate a division on a defined divisor (the dividend may be poison: the caller
/// passes the result's poison through).
#[inline(always)]
pub fn div(op: DivOp, w: u8, exact: bool, a: u64, b: u64) -> Result<(u64, bool), DivTrap> {
    if b == 0 {
        return Err(DivTrap::Zero);
    }
    let m = mask(w);
    match op {
        DivOp::Udiv => Ok((a / b, exact && !a.is_multiple_of(b))),
        DivOp::Urem => Ok((a % b, false)),
        DivOp::Sdiv | DivOp::Srem => {
            let (sa, sb) = (sext(a, w), sext(b, w));
            let min = sext(1u64 << (w.clamp(1, 64) - 1), w);
            if sa == min && sb == -1 {
                return Err(DivTrap::Overflow);
            }
            if op == DivOp::Sdiv {
                Ok(((sa / sb) as u64 & m, exact && sa % sb != 0))
            } else {
                Ok(((sa % sb) as u64 & m, false))
            }
        }
    }
}

/// One-operand integer operations.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum IUnOp {
    /// `popcnt`
    Popcnt,
    /// `clz`
    Clz,
    /// `ctz`
    Ctz,
}

/// Evaluate a one-operand integer operation.
#[inline(always)]
pub fn iun(op: IUnOp, w: u8, a: u64) -> u64 {
    match op {
        IUnOp::Popcnt => u64::from(a.count_ones()),
        IUnOp::Clz => u64::from(a.leading_zeros() - (64 - u32::from(w))),
        IUnOp::Ctz => u64::from(a.trailing_zeros().min(u32::from(w))),
    }
}

/// The canonical quiet NaN of f32.
pub const NAN32: u32 = 0x7fc0_0000;
/// The canonical quiet NaN of f64.
pub const NAN64: u64 = 0x7ff8_0000_0000_0000;

#[inline(always)]
fn c32(x: f32) -> u64 {
    if x.is_nan() {
        u64::from(NAN32)
    } else {
        u64::from(x.to_bits())
    }
}

#[inline(always)]
fn c64(x: f64) -> u64 {
    if x.is_nan() {
        NAN64
    } else {
        x.to_bits()
    }
}

#[inline(always)]
fn f32_of(x: u64) -> f32 {
    f32::from_bits(x as u32)
}

/// Two-operand float operations.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum FBinOp {
    /// `fadd`
    Add,
    /// `fsub`
    Sub,
    /// `fmul`
    Mul,
    /// `fdiv`
    Div,
    /// `frem`
    Rem,
    /// `fmin`
    Min,
    /// `fmax`
    Max,
    /// `fdiv_approx`: the IR's meaning is the correctly rounded quotient
    DivApprox,
}

/// IEEE minNum/maxNum with `-0 < +0` and NaN operands ignored.
fn minmax<F: Copy + PartialOrd>(
    a: F,
    b: F,
    is_nan: fn(F) -> bool,
    neg: fn(F) -> bool,
    min: bool,
) -> F {
    if is_nan(a) {
        return b;
    }
    if is_nan(b) {
        return a;
    }
    let a_first = if a == b {
        // Equal values differ only in the sign of zero.
        neg(a) == min
    } else {
        (a < b) == min
    };
    if a_first {
        a
    } else {
        b
    }
}

/// Evaluate a two-operand float operation; NaN results are canonical.
#[inline(always)]
pub fn fbin(op: FBinOp, is64: bool, a: u64, b: u64) -> u64 {
    if is64 {
        let (x, y) = (f64::from_bits(a), f64::from_bits(b));
        c64(match op {
            FBinOp::Add => x + y,
            FBinOp::Sub => x - y,
            FBinOp::Mul => x * y,
            FBinOp::Div | FBinOp::DivApprox => x / y,
            FBinOp::Rem => x % y,
            FBinOp::Min => minmax(x, y, f64::is_nan, f64::is_sign_negative, true),
            FBinOp::Max => minmax(x, y, f64::is_nan, f64::is_sign_negative, false),
        })
    } else {
        let (x, y) = (f32_of(a), f32_of(b));
        c32(match op {
            FBinOp::Add => x + y,
            FBinOp::Sub => x - y,
            FBinOp::Mul => x * y,
            FBinOp::Div | FBinOp::DivApprox => x / y,
            FBinOp::Rem => x % y,
            FBinOp::Min => minmax(x, y, f32::is_nan, f32::is_sign_negative, true),
            FBinOp::Max => minmax(x, y, f32::is_nan, f32::is_sign_negative, false),
        })
    }
}

/// One-operand float operations.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum FUnOp {
    /// `fneg` (sign bit only; NaN payload kept)
    Neg,
    /// `fabs` (sign bit only)
    Abs,
    /// `sqrt`
    Sqrt,
    /// `floor`
    Floor,
    /// `ceil`
    Ceil,
    /// `ftrunc`
    Trunc,
    /// `nearest` (ties to even)
    Nearest,
    /// `ex2_approx`: 2^x
    Ex2,
    /// `lg2_approx`: log2(x)
    Lg2,
    /// `sin_approx`
    Sin,
    /// `cos_approx`
    Cos,
    /// `rsqrt_approx`: 1/sqrt(x)
    Rsqrt,
}

/// Evaluate a one-operand float operation.
#[inline(always)]
pub fn fun(op: FUnOp, is64: bool, a: u64) -> u64 {
    if is64 {
        let x = f64::from_bits(a);
        match op {
            FUnOp::Neg => a ^ (1 << 63),
            FUnOp::Abs => a & !(1 << 63),
            FUnOp::Sqrt => c64(x.sqrt()),
            FUnOp::Floor => c64(x.floor()),
            FUnOp::Ceil => c64(x.ceil()),
            FUnOp::Trunc => c64(x.trunc()),
            FUnOp::Nearest => c64(x.round_ties_even()),
            // The f64 forms of the approximations exist only for rsqrt; the others are
            // f32-only in the IR, but the decoder does not rely on that.
            FUnOp::Ex2 => c64(x.exp2()),
            FUnOp::Lg2 => c64(x.log2()),
            FUnOp::Sin => c64(x.sin()),
            FUnOp::Cos => c64(x.cos()),
            FUnOp::Rsqrt => c64(1.0 / x.sqrt()),
        }
    } else {
        let x = f32_of(a);
        match op {
            FUnOp::Neg => a ^ (1 << 31),
            FUnOp::Abs => a & !(1 << 31),
            FUnOp::Sqrt => c32(x.sqrt()),
            FUnOp::Floor => c32(x.floor()),
            FUnOp::Ceil => c32(x.ceil()),
            FUnOp::Trunc => c32(x.trunc()),
            FUnOp::Nearest => c32(x.round_ties_even()),
            // The exact value, rounded once to f32: computed in f64, whose error (below
            // 1 ulp of f64) only matters when the exact value is within 2^-29 ulp of an f32
            // rounding boundary.
            FUnOp::Ex2 => c32(f64::from(x).exp2() as f32),
            FUnOp::Lg2 => c32(f64::from(x).log2() as f32),
            FUnOp::Sin => c32(f64::from(x).sin() as f32),
            FUnOp::Cos => c32(f64::from(x).cos() as f32),
            FUnOp::Rsqrt => c32((1.0 / f64::from(x).sqrt()) as f32),
        }
    }
}

/// Fused multiply-add with a single rounding.
#[inline(always)]
pub fn fma(is64: bool, a: u64, b: u64, c: u64) -> u64 {
    if is64 {
        c64(f64::from_bits(a).mul_add(f64::from_bits(b), f64::from_bits(c)))
    } else {
        c32(f32_of(a).mul_add(f32_of(b), f32_of(c)))
    }
}

/// A float as f64 (f32 widened exactly).
#[inline(always)]
pub fn as_f64(is64: bool, a: u64) -> f64 {
    if is64 {
        f64::from_bits(a)
    } else {
        f64::from(f32_of(a))
    }
}

/// Float to integer toward zero; NaN or out of range gives poison.
pub fn fp_to_int(src64: bool, w: u8, signed: bool, a: u64) -> (u64, bool) {
    let t = as_f64(src64, a).trunc();
    if t.is_nan() {
        return (0, true);
    }
    let w = w.clamp(1, 64);
    let in_range = if signed {
        let lim = (2f64).powi(i32::from(w) - 1);
        t >= -lim && t < lim
    } else {
        t >= 0.0 && t < (2f64).powi(i32::from(w))
    };
    if !in_range {
        return (0, true);
    }
    let r = if signed { (t as i64) as u64 } else { t as u64 };
    (r & mask(w), false)
}

/// Integer to float, rounding to nearest even.
pub fn int_to_fp(w: u8, signed: bool, dst64: bool, a: u64) -> u64 {
    if dst64 {
        if signed {
            (sext(a, w) as f64).to_bits()
        } else {
            (a as f64).to_bits()
        }
    } else if signed {
        u64::from((sext(a, w) as f32).to_bits())
    } else {
        u64::from((a as f32).to_bits())
    }
}

/// f32 to f64 (exact; NaN canonical).
pub fn fpext(a: u64) -> u64 {
    c64(f64::from(f32_of(a)))
}

/// f64 to f32, round to nearest even (NaN canonical).
pub fn fptrunc(a: u64) -> u64 {
    c32(f64::from_bits(a) as f32)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wrapping_and_flags() {
        assert_eq!(bin(BinOp::Add, 8, 0, 200, 100), (44, false));
        assert_eq!(bin(BinOp::Add, 8, NUW, 200, 100), (44, true));
        assert_eq!(bin(BinOp::Add, 8, NSW, 200, 100), (44, false)); // -56 + 100
        assert_eq!(bin(BinOp::Add, 8, NSW, 100, 100), (200, true));
        assert_eq!(bin(BinOp::Sub, 32, NUW, 1, 2), (u64::from(u32::MAX), true));
        assert!(bin(BinOp::Mul, 64, NSW, 1 << 62, 2).1);
        assert_eq!(bin(BinOp::Mul, 64, NUW, 1 << 62, 2), (1 << 63, false));
        assert_eq!(bin(BinOp::Add, 1, 0, 1, 1), (0, false));
    }

    #[test]
    fn shifts() {
        assert_eq!(bin(BinOp::Shl, 32, 0, 1, 31), (1 << 31, false));
        assert!(bin(BinOp::Shl, 32, 0, 1, 32).1);
        assert!(bin(BinOp::Lshr, 8, 0, 1, 8).1);
        assert_eq!(bin(BinOp::Ashr, 8, 0, 0x80, 7), (0xff, false));
        assert!(bin(BinOp::Ashr, 8, EXACT, 0x81, 1).1);
        assert!(!bin(BinOp::Ashr, 8, EXACT, 0x80, 1).1);
        assert!(bin(BinOp::Shl, 8, NUW, 0x81, 1).1);
        assert!(bin(BinOp::Shl, 8, NSW, 0x40, 1).1);
        assert!(!bin(BinOp::Shl, 8, NSW, 0xc0, 1).1);
    }

    #[test]
    fn division() {
        assert_eq!(
            div(DivOp::Sdiv, 32, false, (-7i32) as u32 as u64, 2),
            Ok((u64::from((-3i32) as u32), false))
        );
        assert_eq!(
            div(DivOp::Srem, 32, false, (-7i32) as u32 as u64, 2),
            Ok((u64::from((-1i32) as u32), false))
        );
        assert_eq!(div(DivOp::Udiv, 32, false, 7, 0), Err(DivTrap::Zero));
        assert_eq!(
            div(DivOp::Sdiv, 8, false, 0x80, 0xff),
            Err(DivTrap::Overflow)
        );
        assert_eq!(
            div(DivOp::Srem, 64, false, 1 << 63, u64::MAX),
            Err(DivTrap::Overflow)
        );
        assert_eq!(div(DivOp::Udiv, 8, true, 7, 2), Ok((3, true)));
    }

    #[test]
    fn counts() {
        assert_eq!(iun(IUnOp::Clz, 32, 0), 32);
        assert_eq!(iun(IUnOp::Clz, 8, 1), 7);
        assert_eq!(iun(IUnOp::Ctz, 16, 0), 16);
        assert_eq!(iun(IUnOp::Popcnt, 64, u64::MAX), 64);
    }

    #[test]
    fn floats() {
        let f = |x: f32| u64::from(x.to_bits());
        assert_eq!(fbin(FBinOp::Add, false, f(1.5), f(2.25)), f(3.75));
        assert_eq!(fbin(FBinOp::Min, false, f(f32::NAN), f(2.0)), f(2.0));
        assert_eq!(fbin(FBinOp::Min, false, f(0.0), f(-0.0)), f(-0.0));
        assert_eq!(fbin(FBinOp::Max, false, f(-0.0), f(0.0)), f(0.0));
        assert_eq!(
            fbin(FBinOp::Sub, false, f(f32::INFINITY), f(f32::INFINITY)),
            u64::from(NAN32)
        );
        assert_eq!(fun(FUnOp::Nearest, false, f(2.5)), f(2.0));
        // The math primitives: exactly rounded values; mul24 on the low 24 bits.
        assert_eq!(fun(FUnOp::Ex2, false, f(-1.0)), f(0.5));
        assert_eq!(fun(FUnOp::Ex2, false, f(f32::NEG_INFINITY)), f(0.0));
        assert_eq!(fun(FUnOp::Lg2, false, f(0.0)), f(f32::NEG_INFINITY));
        assert_eq!(fun(FUnOp::Lg2, false, f(-1.0)), u64::from(0x7fc0_0000u32));
        assert_eq!(fun(FUnOp::Rsqrt, false, f(0.25)), f(2.0));
        assert_eq!(fun(FUnOp::Rsqrt, false, f(-0.0)), f(f32::NEG_INFINITY));
        assert_eq!(fun(FUnOp::Sin, false, f(0.5)), f(0.5f64.sin() as f32));
        assert_eq!(fbin(FBinOp::DivApprox, false, f(1.0), f(3.0)), f(1.0 / 3.0));
        // 0x00ff_ffff is -1 in 24 bits; bit 24 and up are ignored.
        assert_eq!(
            bin(BinOp::Mul24, 32, 0, 0x01ff_ffff, 3),
            (0xffff_fffd, false)
        );
        assert_eq!(
            bin(BinOp::Umul24, 32, 0, 0x01ff_ffff, 3),
            (0x02ff_fffd, false)
        );
        assert_eq!(
            bin(BinOp::Umul24, 32, 0, 0xff_ffff, 0xff_ffff),
            (0xfe00_0001, false)
        );
        assert_eq!(fun(FUnOp::Neg, false, 0x7fc0_0001), 0xffc0_0001);
        // fma rounds once: (1+2^-12)^2 - 1 keeps the 2^-24 term a separate multiply drops.
        let e = 1.0f32 + 1.0 / 4096.0;
        assert_eq!(fma(false, f(e), f(e), f(-1.0)), f(e.mul_add(e, -1.0)));
        assert_ne!(fma(false, f(e), f(e), f(-1.0)), f(e * e - 1.0));
    }

    #[test]
    fn conversions() {
        let f = |x: f32| u64::from(x.to_bits());
        assert_eq!(
            fp_to_int(false, 32, true, f(-2.9)),
            (u64::from((-2i32) as u32), false)
        );
        assert!(fp_to_int(false, 32, true, f(f32::NAN)).1);
        assert!(fp_to_int(false, 32, true, f(2147483648.0)).1);
        assert!(!fp_to_int(false, 32, true, f(-2147483648.0)).1);
        assert!(fp_to_int(false, 8, false, f(-1.0)).1);
        assert_eq!(fp_to_int(false, 8, false, f(-0.5)), (0, false));
        assert_eq!(fp_to_int(false, 8, false, f(255.9)), (255, false));
        assert_eq!(int_to_fp(32, true, false, u64::from(u32::MAX)), f(-1.0));
        assert_eq!(
            int_to_fp(32, false, false, u64::from(u32::MAX)),
            f(4294967296.0)
        );
        // 2^24 + 1 rounds to even.
        assert_eq!(int_to_fp(32, true, false, (1 << 24) + 1), f(16777216.0));
        assert_eq!(fptrunc(1.0f64.to_bits()), f(1.0));
        assert_eq!(fpext(u64::from(0x7fc0_1234u32)), NAN64);
    }
}
