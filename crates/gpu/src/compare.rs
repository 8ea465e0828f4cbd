//! Element-wise comparison of a buffer from the GPU with the interpreter's: integers
//! exactly, floats exactly or within a stated bound (for kernels that use approximate
//! math opcodes, which the interpreter rounds exactly and the hardware does not).

/// The element type of a buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ElemKind {
    /// An integer of this many bytes (1, 2, 4 or 8).
    Int(usize),
    /// `f32`.
    F32,
    /// `f64`.
    F64,
}

impl ElemKind {
    /// Bytes per element.
    pub fn size(self) -> usize {
        match self {
            ElemKind::Int(n) => n,
            ElemKind::F32 => 4,
            ElemKind::F64 => 8,
        }
    }
}

/// How far apart two floats may be and still count as equal: within `ulps` units in the
/// last place, or within `abs` of each other (PTX's `sin.approx`, `cos.approx` and
/// `lg2.approx` bound the absolute error, which is many ulps near zero). Both NaN is
/// equal whatever the payloads.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Bound {
    /// Units in the last place.
    pub ulps: u64,
    /// Absolute difference.
    pub abs: f64,
}

impl Bound {
    /// Bit-exact (but any NaN equals any NaN).
    pub const EXACT: Bound = Bound { ulps: 0, abs: 0.0 };

    /// Is the bound exact?
    pub fn is_exact(&self) -> bool {
        self.ulps == 0 && self.abs == 0.0
    }
}

impl std::fmt::Display for Bound {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.is_exact() {
            f.write_str("exact")
        } else if self.abs == 0.0 {
            write!(f, "within {} ulp", self.ulps)
        } else {
            write!(f, "within {} ulp or {:e} absolute", self.ulps, self.abs)
        }
    }
}

/// Units in the last place between two finite or infinite floats of the same width
/// (bits in the low `width` bits), along the monotonic integer line of their bits.
pub fn ulps(a: u64, b: u64, width: u32) -> u64 {
    let sign = 1u64 << (width - 1);
    let key = |x: u64| -> i128 {
        if x & sign != 0 {
            -((x & !sign) as i128)
        } else {
            x as i128
        }
    };
    key(a).abs_diff(key(b)) as u64
}

/// Are two elements equal under `bound`?
fn element_equal(kind: ElemKind, a: u64, b: u64, bound: Bound) -> bool {
    if a == b {
        return true;
    }
    let (x, y, width) = match kind {
        ElemKind::Int(_) => return false,
        ElemKind::F32 => (
            f64::from(f32::from_bits(a as u32)),
            f64::from(f32::from_bits(b as u32)),
            32,
        ),
        ElemKind::F64 => (f64::from_bits(a), f64::from_bits(b), 64),
    };
    if x.is_nan() || y.is_nan() {
        return x.is_nan() && y.is_nan();
    }
    // +0 and -0 differ in bits only; a kernel storing one where the other is expected
    // is still a difference unless the bound allows inexactness.
    if bound.is_exact() {
        return false;
    }
    ulps(a, b, width) <= bound.ulps || (x - y).abs() <= bound.abs
}

/// One element's bits (little-endian).
fn bits(b: &[u8]) -> u64 {
    let mut raw = [0u8; 8];
    raw[..b.len()].copy_from_slice(b);
    u64::from_le_bytes(raw)
}

/// The index of the first element of `got` that differs from `expected` under `bound`;
/// elements with a byte marked in `poison` (undefined in the interpreter) match anything.
/// Buffers of different lengths differ at the shorter length.
pub fn first_difference(
    kind: ElemKind,
    expected: &[u8],
    got: &[u8],
    poison: Option<&[bool]>,
    bound: Bound,
) -> Option<usize> {
    let n = kind.size();
    let count = expected.len().min(got.len()) / n;
    for i in 0..count {
        let r = i * n..(i + 1) * n;
        if poison.is_some_and(|p| p.get(r.clone()).is_some_and(|p| p.iter().any(|&b| b))) {
            continue;
        }
        if !element_equal(kind, bits(&expected[r.clone()]), bits(&got[r]), bound) {
            return Some(i);
        }
    }
    (expected.len() != got.len()).then_some(count)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f32s(v: &[f32]) -> Vec<u8> {
        v.iter().flat_map(|x| x.to_le_bytes()).collect()
    }

    #[test]
    fn exact_floats_and_ints() {
        let a = f32s(&[1.0, 2.0, 3.0]);
        let mut b = a.clone();
        assert_eq!(
            first_difference(ElemKind::F32, &a, &b, None, Bound::EXACT),
            None
        );
        b[4] ^= 1; // one ulp off in element 1
        assert_eq!(
            first_difference(ElemKind::F32, &a, &b, None, Bound::EXACT),
            Some(1)
        );
        let one = Bound { ulps: 1, abs: 0.0 };
        assert_eq!(first_difference(ElemKind::F32, &a, &b, None, one), None);
        // As integers, one bit is a difference whatever the bound.
        assert_eq!(
            first_difference(ElemKind::Int(4), &a, &b, None, one),
            Some(1)
        );
        assert_eq!(
            first_difference(ElemKind::Int(2), &a, &b, None, one),
            Some(2)
        );
    }

    #[test]
    fn nans_poison_and_lengths() {
        let a = f32s(&[f32::NAN, 5.0]);
        let b = f32s(&[-f32::NAN, 6.0]);
        assert_eq!(
            first_difference(ElemKind::F32, &a, &b, None, Bound::EXACT),
            Some(1)
        );
        let poison = [false, false, false, false, false, true, false, false];
        assert_eq!(
            first_difference(ElemKind::F32, &a, &b, Some(&poison), Bound::EXACT),
            None
        );
        assert_eq!(
            first_difference(ElemKind::F32, &a, &a[..4], None, Bound::EXACT),
            Some(1)
        );
    }

    #[test]
    fn ulps_cross_zero_and_absolute_bounds() {
        assert_eq!(ulps(0x8000_0001, 0x0000_0001, 32), 2);
        assert_eq!(ulps(1.0f64.to_bits(), 1.0f64.to_bits() + 3, 64), 3);
        let a = f32s(&[1e-9]);
        let b = f32s(&[-1e-9]);
        let abs = Bound { ulps: 4, abs: 1e-6 };
        assert_eq!(first_difference(ElemKind::F32, &a, &b, None, abs), None);
        let ulp_only = Bound { ulps: 4, abs: 0.0 };
        assert_eq!(
            first_difference(ElemKind::F32, &a, &b, None, ulp_only),
            Some(0)
        );
        assert_eq!(abs.to_string(), "within 4 ulp or 1e-6 absolute");
        assert_eq!(Bound::EXACT.to_string(), "exact");
    }
}
