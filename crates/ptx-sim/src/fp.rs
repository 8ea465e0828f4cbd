//! Floating-point semantics: directed rounding, half precision, conversions.

use crate::ir::{Rnd, Ty};

/// Canonical NaN produced by `.f32` arithmetic.
pub(crate) const CANON_NAN_F32: u32 = 0x7fff_ffff;

/// Applies a directed rounding mode to a round-to-nearest result `r`,
/// given the sign of `exact - r` (`err`: -1, 0 or 1).
macro_rules! adjust_impl {
    ($name:ident, $t:ty) => {
        #[inline]
        pub(crate) fn $name(r: $t, err: i32, rnd: Rnd) -> $t {
            if err == 0 || r.is_nan() {
                return r;
            }
            match rnd {
                Rnd::N => r,
                Rnd::P => {
                    if err > 0 {
                        r.next_up()
                    } else {
                        r
                    }
                }
                Rnd::M => {
                    if err < 0 {
                        r.next_down()
                    } else {
                        r
                    }
                }
                Rnd::Z => {
                    if r > 0.0 && err < 0 {
                        r.next_down()
                    } else if r < 0.0 && err > 0 {
                        r.next_up()
                    } else {
                        r
                    }
                }
            }
        }
    };
}
adjust_impl!(adjust32, f32);
adjust_impl!(adjust64, f64);

fn sgn32(x: f32) -> i32 {
    if x > 0.0 {
        1
    } else if x < 0.0 {
        -1
    } else {
        0
    }
}
fn sgn64(x: f64) -> i32 {
    if x > 0.0 {
        1
    } else if x < 0.0 {
        -1
    } else {
        0
    }
}

macro_rules! arith_impl {
    ($add:ident, $mul:ident, $div:ident, $sqrt:ident, $t:ty, $adj:ident, $sgn:ident) => {
        /// Correctly rounded addition in the given mode.
        pub(crate) fn $add(a: $t, b: $t, rnd: Rnd) -> $t {
            let s = a + b;
            if rnd == Rnd::N || !a.is_finite() || !b.is_finite() {
                return s;
            }
            if s.is_infinite() {
                return $adj(s, -$sgn(s), rnd);
            }
            let bb = s - a;
            let err = (a - (s - bb)) + (b - bb);
            $adj(s, $sgn(err), rnd)
        }
        /// Correctly rounded multiplication in the given mode.
        pub(crate) fn $mul(a: $t, b: $t, rnd: Rnd) -> $t {
            let p = a * b;
            if rnd == Rnd::N || !a.is_finite() || !b.is_finite() {
                return p;
            }
            if p.is_infinite() {
                return $adj(p, -$sgn(p), rnd);
            }
            let err = a.mul_add(b, -p);
            $adj(p, $sgn(err), rnd)
        }
        /// Correctly rounded division in the given mode.
        pub(crate) fn $div(a: $t, b: $t, rnd: Rnd) -> $t {
            let q = a / b;
            if rnd == Rnd::N || !q.is_finite() || !a.is_finite() || b == 0.0 {
                if q.is_infinite() && a.is_finite() && b != 0.0 && b.is_finite() {
                    return $adj(q, -$sgn(q), rnd);
                }
                return q;
            }
            let r = (-q).mul_add(b, a);
            $adj(q, $sgn(r) * $sgn(b), rnd)
        }
        /// Correctly rounded square root in the given mode.
        pub(crate) fn $sqrt(x: $t, rnd: Rnd) -> $t {
            let s = x.sqrt();
            if rnd == Rnd::N || !s.is_finite() || s == 0.0 {
                return s;
            }
            let r = (-s).mul_add(s, x);
            $adj(s, $sgn(r), rnd)
        }
    };
}
arith_impl!(add32, mul32, div32, sqrt32, f32, adjust32, sgn32);
arith_impl!(add64, mul64, div64, sqrt64, f64, adjust64, sgn64);

/// Fused multiply-add for `.f32` (computed exactly in f64 then rounded;
/// directed modes may suffer double rounding in rare cases).
pub(crate) fn fma32(a: f32, b: f32, c: f32, rnd: Rnd) -> f32 {
    if rnd == Rnd::N {
        return a.mul_add(b, c);
    }
    let e = (a as f64).mul_add(b as f64, c as f64);
    f64_to_f32(e, rnd)
}

/// Fused multiply-add for `.f64`; directed modes are approximated (see crate docs).
pub(crate) fn fma64(a: f64, b: f64, c: f64, rnd: Rnd) -> f64 {
    let r = a.mul_add(b, c);
    if rnd == Rnd::N || !r.is_finite() {
        return r;
    }
    // Estimate the residual: exact - r ≈ (a*b - r) + c computed with an fma.
    let err = a.mul_add(b, -r) + c;
    adjust64(r, sgn64(err), rnd)
}

/// f64 -> f32 with the given rounding mode.
pub(crate) fn f64_to_f32(x: f64, rnd: Rnd) -> f32 {
    let r = x as f32;
    if rnd == Rnd::N || x.is_nan() || x.is_infinite() {
        return r;
    }
    if r.is_infinite() {
        return adjust32(r, -sgn32(r), rnd);
    }
    let d = x - r as f64;
    adjust32(r, sgn64(d), rnd)
}

/// f16 bits -> f64 (exact).
pub(crate) fn f16_to_f64(h: u16) -> f64 {
    let sign = if h & 0x8000 != 0 { -1.0 } else { 1.0 };
    let e = ((h >> 10) & 0x1f) as i32;
    let m = (h & 0x3ff) as f64;
    if e == 0 {
        sign * m * 2f64.powi(-24)
    } else if e == 31 {
        if m == 0.0 {
            sign * f64::INFINITY
        } else {
            f64::NAN
        }
    } else {
        sign * (1.0 + m / 1024.0) * 2f64.powi(e - 15)
    }
}

/// f64 -> f16 bits with the given rounding mode.
pub(crate) fn f64_to_f16(x: f64, rnd: Rnd) -> u16 {
    if x.is_nan() {
        return 0x7fff;
    }
    let sign: u16 = if x.is_sign_negative() { 0x8000 } else { 0 };
    let a = x.abs();
    if a.is_infinite() {
        return sign | 0x7c00;
    }
    // Magnitude rounding: N = nearest-even, "up" = away from zero, "down" = toward zero.
    let away = match rnd {
        Rnd::N => None,
        Rnd::Z => Some(false),
        Rnd::P => Some(sign == 0),
        Rnd::M => Some(sign != 0),
    };
    let round = |v: f64| -> f64 {
        match away {
            None => v.round_ties_even(),
            Some(true) => v.ceil(),
            Some(false) => v.floor(),
        }
    };
    if a < 2f64.powi(-14) {
        // Subnormal range: units of 2^-24.
        let f = round(a * 2f64.powi(24));
        return sign | f as u16; // 1024 encodes the smallest normal, as desired
    }
    let e = ((a.to_bits() >> 52) & 0x7ff) as i32 - 1023;
    let mut f = round(a * 2f64.powi(10 - e));
    let mut e = e;
    if f >= 2048.0 {
        f = 1024.0;
        e += 1;
    }
    if e + 15 >= 31 {
        // Overflow: infinity when rounding away/nearest, else max finite.
        return match away {
            Some(false) => sign | 0x7bff,
            _ => sign | 0x7c00,
        };
    }
    sign | (((e + 15) as u16) << 10) | (f as u16 - 1024)
}

/// Reads a float register image of type `ty` as f64 (f16/f32 widened exactly).
pub(crate) fn to_f64(ty: Ty, v: u64) -> f64 {
    match ty {
        Ty::F16 => f16_to_f64(v as u16),
        Ty::F32 => f32::from_bits(v as u32) as f64,
        _ => f64::from_bits(v),
    }
}

fn round_int(x: f64, r: Rnd) -> f64 {
    match r {
        Rnd::N => x.round_ties_even(),
        Rnd::Z => x.trunc(),
        Rnd::M => x.floor(),
        Rnd::P => x.ceil(),
    }
}

/// Integer value -> float of type `dty` with rounding mode `rnd`.
/// `v` is the exact integer (already sign/zero-extended).
pub(crate) fn int_to_float(v: i128, dty: Ty, rnd: Rnd) -> u64 {
    match dty {
        Ty::F64 => {
            let r = v as f64;
            let err = v.cmp(&(r as i128)) as i32;
            adjust64(r, if r.is_finite() { err } else { 0 }, rnd).to_bits()
        }
        Ty::F32 => {
            let r = v as f32;
            let err = if r.is_finite() {
                v.cmp(&(r as i128)) as i32
            } else {
                0
            };
            adjust32(r, err, rnd).to_bits() as u64
        }
        _ => {
            // f16: every integer below 2^53 is exact in f64; larger ones saturate anyway.
            f64_to_f16(v as f64, rnd) as u64
        }
    }
}

/// Float -> integer type `dty` with integer rounding `r` and saturation
/// (NaN -> 0, out-of-range clamps to the type's range).
pub(crate) fn float_to_int(x: f64, dty: Ty, r: Rnd) -> u64 {
    let x = round_int(x, r);
    match dty {
        Ty::S8 => x as i8 as i64 as u64,
        Ty::S16 => x as i16 as i64 as u64,
        Ty::S32 => x as i32 as i64 as u64,
        Ty::S64 => x as i64 as u64,
        Ty::U8 | Ty::B8 => x as u8 as u64,
        Ty::U16 | Ty::B16 => x as u16 as u64,
        Ty::U32 | Ty::B32 => x as u32 as u64,
        _ => x as u64,
    }
}

/// Float -> float conversion (including same-size integral rounding).
pub(crate) fn float_to_float(
    v: u64,
    sty: Ty,
    dty: Ty,
    rnd: Option<Rnd>,
    irnd: Option<Rnd>,
    sat: bool,
) -> u64 {
    let out = match (sty, dty) {
        (Ty::F32, Ty::F32) => {
            let x = f32::from_bits(v as u32);
            let x = match irnd {
                Some(r) => round_int(x as f64, r) as f32,
                None => x,
            };
            let x = if sat { sat32(x) } else { x };
            return x.to_bits() as u64;
        }
        (Ty::F64, Ty::F64) => {
            let x = f64::from_bits(v);
            let x = match irnd {
                Some(r) => round_int(x, r),
                None => x,
            };
            let x = if sat { sat64(x) } else { x };
            return x.to_bits();
        }
        _ => {
            let x = to_f64(sty, v);
            let x = match irnd {
                Some(r) => round_int(x, r),
                None => x,
            };
            let r = rnd.unwrap_or(Rnd::N);
            match dty {
                Ty::F64 => x.to_bits(),
                Ty::F32 => f64_to_f32(x, r).to_bits() as u64,
                _ => f64_to_f16(x, r) as u64,
            }
        }
    };
    if sat {
        match dty {
            Ty::F64 => sat64(f64::from_bits(out)).to_bits(),
            Ty::F32 => sat32(f32::from_bits(out as u32)).to_bits() as u64,
            _ => f64_to_f16(sat64(f16_to_f64(out as u16)), Rnd::N) as u64,
        }
    } else {
        out
    }
}

fn sat32(x: f32) -> f32 {
    if x.is_nan() {
        0.0
    } else {
        x.clamp(0.0, 1.0)
    }
}

fn sat64(x: f64) -> f64 {
    if x.is_nan() {
        0.0
    } else {
        x.clamp(0.0, 1.0)
    }
}

/// PTX `min` on floats: NaN operands are ignored; -0 < +0.
macro_rules! minmax_impl {
    ($min:ident, $max:ident, $t:ty) => {
        pub(crate) fn $min(a: $t, b: $t) -> $t {
            if a.is_nan() {
                return b;
            }
            if b.is_nan() {
                return a;
            }
            if a == b {
                return if a.is_sign_negative() { a } else { b };
            }
            if a < b {
                a
            } else {
                b
            }
        }
        pub(crate) fn $max(a: $t, b: $t) -> $t {
            if a.is_nan() {
                return b;
            }
            if b.is_nan() {
                return a;
            }
            if a == b {
                return if a.is_sign_negative() { b } else { a };
            }
            if a > b {
                a
            } else {
                b
            }
        }
    };
}
minmax_impl!(min32, max32, f32);
minmax_impl!(min64, max64, f64);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn half_roundtrip() {
        for (x, h) in [
            (1.0, 0x3c00u16),
            (-2.0, 0xc000),
            (65504.0, 0x7bff),
            (65520.0, 0x7c00),
            (0.0, 0),
        ] {
            assert_eq!(f64_to_f16(x, Rnd::N), h, "{x}");
        }
        assert_eq!(f64_to_f16(2f64.powi(-24), Rnd::N), 1);
        assert_eq!(f64_to_f16(2f64.powi(-26), Rnd::P), 1);
        assert_eq!(f64_to_f16(2f64.powi(-26), Rnd::N), 0);
        for h in 0..0x7c00u16 {
            assert_eq!(f64_to_f16(f16_to_f64(h), Rnd::N), h);
        }
    }

    #[test]
    fn directed() {
        let third_dn = div32(1.0, 3.0, Rnd::M);
        let third_up = div32(1.0, 3.0, Rnd::P);
        assert_eq!(third_up, third_dn.next_up());
        assert_eq!(div32(1.0, 3.0, Rnd::Z), third_dn);
        assert_eq!(add32(1.0, 1e-10, Rnd::P), 1.0f32.next_up());
        assert_eq!(add32(1.0, 1e-10, Rnd::N), 1.0);
        assert_eq!(mul32(f32::MAX, 2.0, Rnd::Z), f32::MAX);
        assert_eq!(
            int_to_float(16_777_217, Ty::F32, Rnd::P),
            16_777_218f32.to_bits() as u64
        );
        assert_eq!(
            int_to_float(16_777_217, Ty::F32, Rnd::M),
            16_777_216f32.to_bits() as u64
        );
        assert_eq!(f64_to_f32(1e300, Rnd::Z), f32::MAX);
        assert_eq!(f64_to_f32(1e300, Rnd::N), f32::INFINITY);
        assert_eq!(
            sqrt64(2.0, Rnd::P),
            2f64.sqrt().next_up().min(sqrt64(2.0, Rnd::P))
        );
    }
}
