//! Every rewrite rule of `simplify`, in one table ([`RULES`]), and the exact constant
//! folder they use.
//!
//! A rule sees an e-node (its operation, operands as class ids) and returns the class it
//! is equal to, adding nodes through the e-graph if it needs new ones. Rules run in table
//! order when a node is inserted. Each rule's comment states it as `lhs => rhs`.
//!
//! Exactness: integer folds never fold what traps (division or remainder by zero, signed
//! `MIN / -1`) or what is poison (a shift by the width or more, a float-to-int conversion
//! out of range); a fold of an operation whose `nsw`/`nuw`/`exact` flag would make it
//! poison gives the wrapped value, which refines poison. Float folds give the
//! interpreter's exact result and never fold when an operand or the result is a NaN
//! (payloads are the target's business) and never use an identity that changes the sign
//! of a zero or a NaN payload (`x + 0.0`, `x * 1.0`, `x - x` are left alone).

use super::egraph::{as_node, as_value, EGraph, Node};
use gyre_ir::{FloatCC, InstructionData as D, IntCC, IntFlags, Opcode, Type};

/// The rule families, each counted in `--stats`.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum Family {
    /// Constant folding.
    Fold = 0,
    /// Algebraic identities.
    Identity = 1,
    /// Strength reduction.
    Strength = 2,
    /// Reassociation of constants.
    Reassoc = 3,
}

impl Family {
    /// Number of families.
    pub const COUNT: usize = 4;
    /// The `--stats` counter of each family.
    pub const COUNTERS: [&'static str; Family::COUNT] = [
        "NumFolded",
        "NumIdentities",
        "NumStrengthReduced",
        "NumReassociated",
    ];
}

/// A rewrite rule.
pub struct Rule {
    /// Name, for the documentation.
    pub name: &'static str,
    /// Family (its counter).
    pub family: Family,
    /// The opcodes it looks at.
    pub ops: &'static [Opcode],
    /// Returns the class the node (operation, result type) is equal to, if the rule
    /// applies.
    pub apply: fn(&mut EGraph, &D, Type) -> Option<Node>,
}

use Opcode::*;

const INT_BIN: &[Opcode] = &[
    Iadd, Isub, Imul, Sdiv, Udiv, Srem, Urem, And, Or, Xor, Shl, Lshr, Ashr, Smin, Smax, Umin,
    Umax, Mul24, Umul24,
];
const FLOAT_BIN: &[Opcode] = &[Fadd, Fsub, Fmul, Fdiv, Frem, Fmin, Fmax];
const FLOAT_UN: &[Opcode] = &[Fneg, Fabs, Sqrt, Floor, Ceil, Ftrunc, Nearest];
const CASTS: &[Opcode] = &[
    Sext, Zext, Trunc, Fptosi, Fptoui, Sitofp, Uitofp, Fpext, Fptrunc, Bitcast,
];

/// Every rule, in the order they are tried.
pub const RULES: &[Rule] = &[
    // ---- constant folding ----
    // op(c1, c2) => c, integer binary operations (not when it traps or is poison)
    Rule {
        name: "fold-int-binary",
        family: Family::Fold,
        ops: INT_BIN,
        apply: fold_int_binary,
    },
    // popcnt/clz/ctz(c) => c'
    Rule {
        name: "fold-int-unary",
        family: Family::Fold,
        ops: &[Popcnt, Clz, Ctz],
        apply: fold_int_unary,
    },
    // icmp cc c1, c2 => true/false
    Rule {
        name: "fold-icmp",
        family: Family::Fold,
        ops: &[Icmp],
        apply: fold_icmp,
    },
    // fop(c1, c2) => c (no NaN operand or result)
    Rule {
        name: "fold-float-binary",
        family: Family::Fold,
        ops: FLOAT_BIN,
        apply: fold_float_binary,
    },
    // fneg/fabs(c) (bits), sqrt/floor/ceil/ftrunc/nearest(c) (no NaN)
    Rule {
        name: "fold-float-unary",
        family: Family::Fold,
        ops: FLOAT_UN,
        apply: fold_float_unary,
    },
    // fma(c1, c2, c3) => c (one rounding, no NaN)
    Rule {
        name: "fold-fma",
        family: Family::Fold,
        ops: &[Fma],
        apply: fold_fma,
    },
    // fcmp cc c1, c2 => true/false (NaN operands compare as IEEE says)
    Rule {
        name: "fold-fcmp",
        family: Family::Fold,
        ops: &[Fcmp],
        apply: fold_fcmp,
    },
    // casts of constants (not fptosi/fptoui out of range, not NaN)
    Rule {
        name: "fold-cast",
        family: Family::Fold,
        ops: CASTS,
        apply: fold_cast,
    },
    // freeze(c) => c
    Rule {
        name: "fold-freeze",
        family: Family::Fold,
        ops: &[Freeze],
        apply: fold_freeze,
    },
    // select true, a, b => a; select false, a, b => b
    Rule {
        name: "select-const",
        family: Family::Fold,
        ops: &[Select],
        apply: select_const,
    },
    // ---- identities ----
    // x + 0, x - 0, x | 0, x ^ 0, x << 0, x >> 0, x * 1, x / 1, x & -1 => x
    Rule {
        name: "neutral",
        family: Family::Identity,
        ops: &[Iadd, Isub, Or, Xor, Shl, Lshr, Ashr, Imul, Sdiv, Udiv, And],
        apply: neutral,
    },
    // x * 0, x & 0 => 0; x | -1 => -1; x urem 1, x srem 1 => 0
    Rule {
        name: "absorbing",
        family: Family::Identity,
        ops: &[Imul, And, Or, Urem, Srem],
        apply: absorbing,
    },
    // x - x, x ^ x => 0
    Rule {
        name: "self-zero",
        family: Family::Identity,
        ops: &[Isub, Xor],
        apply: self_zero,
    },
    // x & x, x | x, min/max(x, x) => x
    Rule {
        name: "idempotent",
        family: Family::Identity,
        ops: &[And, Or, Smin, Smax, Umin, Umax],
        apply: idempotent,
    },
    // icmp eq/sle/sge/ule/uge x, x => true; ne/slt/sgt/ult/ugt x, x => false
    Rule {
        name: "icmp-self",
        family: Family::Identity,
        ops: &[Icmp],
        apply: icmp_self,
    },
    // select c, x, x => x
    Rule {
        name: "select-same",
        family: Family::Identity,
        ops: &[Select],
        apply: select_same,
    },
    // select c, true, false => c; select c, 1, 0 => zext c; select c, -1, 0 => sext c
    // (c: i1; the emitter otherwise turns c into 0/1 and back with selp and setp)
    Rule {
        name: "select-bool",
        family: Family::Identity,
        ops: &[Select],
        apply: select_bool,
    },
    // icmp ne (zext/sext b), 0 => b; icmp eq (zext/sext b), 0 => b ^ true (b: i1)
    Rule {
        name: "icmp-bool-ext",
        family: Family::Identity,
        ops: &[Icmp],
        apply: icmp_bool_ext,
    },
    // icmp ne/ugt (shl c, x), 0 => true; icmp eq/ule (shl c, x), 0 => false (c odd: bit x
    // of the result is set, as x < width or the shift is poison): `1 << k` is non-zero
    Rule {
        name: "icmp-shl-odd",
        family: Family::Identity,
        ops: &[Icmp],
        apply: icmp_shl_odd,
    },
    // fneg(fneg x) => x; fabs(fabs x), fabs(fneg x) => fabs x (sign-bit operations)
    Rule {
        name: "sign-bits",
        family: Family::Identity,
        ops: &[Fneg, Fabs],
        apply: sign_bits,
    },
    // trunc(zext/sext x) => x (same type); zext(zext x) => zext x; sext(sext x) => sext x;
    // trunc(trunc x) => trunc x
    Rule {
        name: "ext-trunc",
        family: Family::Identity,
        ops: &[Trunc, Zext, Sext],
        apply: ext_trunc,
    },
    // bitcast(bitcast x) => x (the same type again) or bitcast x (bits unchanged: SROA's
    // integer view of a float slot leaves such pairs)
    Rule {
        name: "bitcast-pair",
        family: Family::Identity,
        ops: &[Bitcast],
        apply: bitcast_pair,
    },
    // ---- known and demanded bits (InstCombine's SimplifyDemandedBits) ----
    // zext(trunc x) => x & mask (x of the result type)
    Rule {
        name: "zext-trunc",
        family: Family::Identity,
        ops: &[Zext],
        apply: zext_trunc,
    },
    // sext(trunc(x >>u/>>s c)) => x >>s c when the truncation keeps exactly the bits
    // above c (the sign of the narrow value is bit w-1 of x)
    Rule {
        name: "sext-trunc-shift",
        family: Family::Identity,
        ops: &[Sext],
        apply: sext_trunc_shift,
    },
    // (x >>u c) << c => x & (-1 << c); (x << c) >>u c => x & (-1 >>u c)
    Rule {
        name: "shift-pair",
        family: Family::Identity,
        ops: &[Shl, Lshr],
        apply: shift_pair,
    },
    // (x & c1) | (x & c2) => x & (c1 | c2)
    Rule {
        name: "or-of-masks",
        family: Family::Identity,
        ops: &[Or],
        apply: or_of_masks,
    },
    // x & c => x when every bit c clears is known zero in x
    Rule {
        name: "and-known-zero",
        family: Family::Identity,
        ops: &[And],
        apply: and_known_zero,
    },
    // op(x) => op(x') where x' equals x on the bits op reads: x >>u c, x << c, x & c,
    // trunc x look through or/xor with an operand known zero there and and with a mask
    // that keeps them
    Rule {
        name: "demanded-bits",
        family: Family::Identity,
        ops: &[Lshr, Shl, And, Trunc],
        apply: demanded_bits,
    },
    // trunc(op(a, b)) => op(a', b') for and/or/xor/iadd/isub/imul, each operand a constant
    // (truncated) or an extension of a value of the result type (unwrapped): the low bits
    // of these operations depend only on the operands' low bits
    Rule {
        name: "trunc-narrow",
        family: Family::Identity,
        ops: &[Trunc],
        apply: trunc_narrow,
    },
    // icmp eq/ne ((x >>u c1) & c2), 0 => icmp eq/ne (x & (c2 << c1)), 0 (the bits c2 keeps
    // of the shifted value, at their place in x); likewise (x << c1) & c2 with c2 >>u c1
    Rule {
        name: "icmp-mask-shift",
        family: Family::Identity,
        ops: &[Icmp],
        apply: icmp_mask_shift,
    },
    // ---- strength reduction ----
    // x * 2^k => x << k
    Rule {
        name: "mul-pow2",
        family: Family::Strength,
        ops: &[Imul],
        apply: mul_pow2,
    },
    // x udiv 2^k => x >>u k (exact kept)
    Rule {
        name: "udiv-pow2",
        family: Family::Strength,
        ops: &[Udiv],
        apply: udiv_pow2,
    },
    // x urem 2^k => x & (2^k - 1)
    Rule {
        name: "urem-pow2",
        family: Family::Strength,
        ops: &[Urem],
        apply: urem_pow2,
    },
    // x sdiv 2^k => (x + ((x >>s (w-1)) >>u (w-k))) >>s k; exact: x >>s k;
    // x sdiv 2 => (x + (x >>u (w-1))) >>s 1; x known non-negative: x >>u k
    Rule {
        name: "sdiv-pow2",
        family: Family::Strength,
        ops: &[Sdiv],
        apply: sdiv_pow2,
    },
    // x srem 2^k => x - ((x + ((x >>s (w-1)) >>u (w-k))) & -2^k)
    Rule {
        name: "srem-pow2",
        family: Family::Strength,
        ops: &[Srem],
        apply: srem_pow2,
    },
    // ---- reassociation ----
    // x - c => x + (-c)
    Rule {
        name: "sub-const",
        family: Family::Reassoc,
        ops: &[Isub],
        apply: sub_const,
    },
    // (x op c1) op c2 => x op (c1 op c2) for op in iadd, imul, and, or, xor
    Rule {
        name: "reassoc-const",
        family: Family::Reassoc,
        ops: &[Iadd, Imul, And, Or, Xor],
        apply: reassoc_const,
    },
];

/// The mask of the low `w` bits.
pub fn mask(w: u32) -> u64 {
    if w >= 64 {
        u64::MAX
    } else {
        (1u64 << w) - 1
    }
}

fn sext(x: u64, w: u32) -> i64 {
    if w >= 64 {
        x as i64
    } else {
        ((x << (64 - w)) as i64) >> (64 - w)
    }
}

/// Fold an integer binary operation on `w`-bit operands (zero-extended bits); `None`
/// when it traps or the result is poison whatever the flags.
pub fn fold_int_bin(op: Opcode, w: u32, a: u64, b: u64) -> Option<u64> {
    let m = mask(w);
    let (a, b) = (a & m, b & m);
    let (sa, sb) = (sext(a, w), sext(b, w));
    let smin = sext(1u64 << (w - 1), w);
    let r = match op {
        Iadd => a.wrapping_add(b),
        Isub => a.wrapping_sub(b),
        Imul => a.wrapping_mul(b),
        Udiv => a.checked_div(b)?,
        Urem => a.checked_rem(b)?,
        Sdiv | Srem => {
            if b == 0 || (sa == smin && sb == -1) {
                return None;
            }
            if op == Sdiv {
                sa.wrapping_div(sb) as u64
            } else {
                sa.wrapping_rem(sb) as u64
            }
        }
        And => a & b,
        Or => a | b,
        Xor => a ^ b,
        Shl | Lshr | Ashr if b >= u64::from(w) => return None,
        Shl => a << b,
        Lshr => a >> b,
        Ashr => (sa >> b) as u64,
        Smin => sa.min(sb) as u64,
        Smax => sa.max(sb) as u64,
        Umin => a.min(b),
        Umax => a.max(b),
        Mul24 => (sext(a & 0xff_ffff, 24).wrapping_mul(sext(b & 0xff_ffff, 24))) as u64,
        Umul24 => (a & 0xff_ffff).wrapping_mul(b & 0xff_ffff),
        _ => return None,
    };
    Some(r & m)
}

fn bin_args(d: &D) -> Option<(Opcode, Node, Node, IntFlags)> {
    match *d {
        D::Binary {
            opcode,
            args,
            flags,
        } => Some((opcode, as_node(args[0]), as_node(args[1]), flags)),
        _ => None,
    }
}

fn fold_int_binary(g: &mut EGraph, d: &D, ty: Type) -> Option<Node> {
    let (op, a, b, _) = bin_args(d)?;
    let r = fold_int_bin(op, ty.bits(), g.iconst(a)?, g.iconst(b)?)?;
    Some(g.int(ty, r))
}

fn fold_int_unary(g: &mut EGraph, d: &D, ty: Type) -> Option<Node> {
    let D::Unary { opcode, arg } = *d else {
        return None;
    };
    let w = ty.bits();
    let a = g.iconst(as_node(arg))?;
    let r = match opcode {
        Popcnt => u64::from(a.count_ones()),
        Clz => u64::from((a << (64 - w)).leading_zeros().min(w)),
        Ctz => u64::from(a.trailing_zeros().min(w)),
        _ => return None,
    };
    Some(g.int(ty, r))
}

fn fold_icmp(g: &mut EGraph, d: &D, ty: Type) -> Option<Node> {
    let D::IntCompare { cond, args } = *d else {
        return None;
    };
    let (a, b) = (as_node(args[0]), as_node(args[1]));
    let (x, y) = (g.iconst(a)?, g.iconst(b)?);
    let w = g.ty_of(a);
    Some(g.int(ty, u64::from(cond.eval(w.bits(), x, y))))
}

fn is_nan(is64: bool, x: u64) -> bool {
    if is64 {
        f64::from_bits(x).is_nan()
    } else {
        f32::from_bits(x as u32).is_nan()
    }
}

fn minmax<T: PartialOrd + Copy>(a: T, b: T, neg: impl Fn(T) -> bool, min: bool) -> T {
    // Operands are not NaN here; equal values differ only in the sign of zero.
    let a_first = if a == b {
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

/// Fold a float binary operation (IEEE bits; `f32` in the low half); `None` if an operand
/// or the result is a NaN.
pub fn fold_float_bin(op: Opcode, is64: bool, a: u64, b: u64) -> Option<u64> {
    if is_nan(is64, a) || is_nan(is64, b) {
        return None;
    }
    let r = if is64 {
        let (x, y) = (f64::from_bits(a), f64::from_bits(b));
        match op {
            Fadd => x + y,
            Fsub => x - y,
            Fmul => x * y,
            Fdiv => x / y,
            Frem => x % y,
            Fmin => minmax(x, y, f64::is_sign_negative, true),
            Fmax => minmax(x, y, f64::is_sign_negative, false),
            _ => return None,
        }
        .to_bits()
    } else {
        let (x, y) = (f32::from_bits(a as u32), f32::from_bits(b as u32));
        u64::from(
            match op {
                Fadd => x + y,
                Fsub => x - y,
                Fmul => x * y,
                Fdiv => x / y,
                Frem => x % y,
                Fmin => minmax(x, y, f32::is_sign_negative, true),
                Fmax => minmax(x, y, f32::is_sign_negative, false),
                _ => return None,
            }
            .to_bits(),
        )
    };
    (!is_nan(is64, r)).then_some(r)
}

/// Fold a float unary operation; `None` for a NaN operand or result (except the sign-bit
/// operations, which are exact on every input).
pub fn fold_float_un(op: Opcode, is64: bool, a: u64) -> Option<u64> {
    let sign = if is64 { 1u64 << 63 } else { 1u64 << 31 };
    match op {
        Fneg => return Some(a ^ sign),
        Fabs => return Some(a & !sign),
        _ => {}
    }
    if is_nan(is64, a) {
        return None;
    }
    let r = if is64 {
        let x = f64::from_bits(a);
        match op {
            Sqrt => x.sqrt(),
            Floor => x.floor(),
            Ceil => x.ceil(),
            Ftrunc => x.trunc(),
            Nearest => x.round_ties_even(),
            _ => return None,
        }
        .to_bits()
    } else {
        let x = f32::from_bits(a as u32);
        u64::from(
            match op {
                Sqrt => x.sqrt(),
                Floor => x.floor(),
                Ceil => x.ceil(),
                Ftrunc => x.trunc(),
                Nearest => x.round_ties_even(),
                _ => return None,
            }
            .to_bits(),
        )
    };
    (!is_nan(is64, r)).then_some(r)
}

fn fconst(g: &mut EGraph, ty: Type, bits: u64) -> Node {
    g.add(D::FloatConst { bits }, ty)
}

fn fold_float_binary(g: &mut EGraph, d: &D, ty: Type) -> Option<Node> {
    let (op, a, b, _) = bin_args(d)?;
    let r = fold_float_bin(op, ty == Type::F64, g.fconst(a)?, g.fconst(b)?)?;
    Some(fconst(g, ty, r))
}

fn fold_float_unary(g: &mut EGraph, d: &D, ty: Type) -> Option<Node> {
    let D::Unary { opcode, arg } = *d else {
        return None;
    };
    let r = fold_float_un(opcode, ty == Type::F64, g.fconst(as_node(arg))?)?;
    Some(fconst(g, ty, r))
}

fn fold_fma(g: &mut EGraph, d: &D, ty: Type) -> Option<Node> {
    let D::Ternary { args, .. } = *d else {
        return None;
    };
    let is64 = ty == Type::F64;
    let a = g.fconst(as_node(args[0]))?;
    let b = g.fconst(as_node(args[1]))?;
    let c = g.fconst(as_node(args[2]))?;
    if [a, b, c].iter().any(|&x| is_nan(is64, x)) {
        return None;
    }
    let r = if is64 {
        f64::from_bits(a)
            .mul_add(f64::from_bits(b), f64::from_bits(c))
            .to_bits()
    } else {
        u64::from(
            f32::from_bits(a as u32)
                .mul_add(f32::from_bits(b as u32), f32::from_bits(c as u32))
                .to_bits(),
        )
    };
    if is_nan(is64, r) {
        return None;
    }
    Some(fconst(g, ty, r))
}

fn as_f64(is64: bool, x: u64) -> f64 {
    if is64 {
        f64::from_bits(x)
    } else {
        f64::from(f32::from_bits(x as u32))
    }
}

fn fold_fcmp(g: &mut EGraph, d: &D, ty: Type) -> Option<Node> {
    let D::FloatCompare { cond, args } = *d else {
        return None;
    };
    let (a, b) = (as_node(args[0]), as_node(args[1]));
    let is64 = g.ty_of(a) == Type::F64;
    let (x, y) = (g.fconst(a)?, g.fconst(b)?);
    let r = cond.eval(as_f64(is64, x), as_f64(is64, y));
    let _: FloatCC = cond;
    Some(g.int(ty, u64::from(r)))
}

/// Fold a cast of a constant of type `from` (zero-extended integer bits or IEEE bits) to
/// `to`; `None` when the result is poison or would involve a NaN.
pub fn fold_cast_bits(op: Opcode, from: Type, to: Type, a: u64) -> Option<u64> {
    let (fw, tw) = (from.bits(), to.bits());
    let r = match op {
        Sext if from.is_int() && to.is_int() => sext(a, fw) as u64,
        Zext if from.is_int() && to.is_int() => a & mask(fw),
        Trunc if from.is_int() && to.is_int() => a,
        Bitcast if !from.is_ptr() && !to.is_ptr() => a,
        Sitofp | Uitofp if from.is_int() && to.is_float() => {
            let signed = op == Sitofp;
            if to == Type::F64 {
                if signed {
                    (sext(a, fw) as f64).to_bits()
                } else {
                    ((a & mask(fw)) as f64).to_bits()
                }
            } else if signed {
                u64::from((sext(a, fw) as f32).to_bits())
            } else {
                u64::from(((a & mask(fw)) as f32).to_bits())
            }
        }
        Fptosi | Fptoui if from.is_float() && to.is_int() => {
            let t = as_f64(from == Type::F64, a).trunc();
            if t.is_nan() {
                return None;
            }
            let in_range = if op == Fptosi {
                let lim = 2f64.powi(tw as i32 - 1);
                t >= -lim && t < lim
            } else {
                t >= 0.0 && t < 2f64.powi(tw as i32)
            };
            if !in_range {
                return None;
            }
            if op == Fptosi {
                (t as i64) as u64
            } else {
                t as u64
            }
        }
        Fpext if from == Type::F32 && to == Type::F64 => {
            if is_nan(false, a) {
                return None;
            }
            f64::from(f32::from_bits(a as u32)).to_bits()
        }
        Fptrunc if from == Type::F64 && to == Type::F32 => {
            if is_nan(true, a) {
                return None;
            }
            u64::from((f64::from_bits(a) as f32).to_bits())
        }
        _ => return None,
    };
    Some(if to.is_int() { r & mask(tw) } else { r })
}

fn fold_cast(g: &mut EGraph, d: &D, ty: Type) -> Option<Node> {
    let D::Unary { opcode, arg } = *d else {
        return None;
    };
    let a = as_node(arg);
    let from = g.ty_of(a);
    let bits = if from.is_int() {
        g.iconst(a)?
    } else if from.is_float() {
        g.fconst(a)?
    } else {
        return None;
    };
    let r = fold_cast_bits(opcode, from, ty, bits)?;
    Some(if ty.is_int() {
        g.int(ty, r)
    } else {
        fconst(g, ty, r)
    })
}

fn fold_freeze(g: &mut EGraph, d: &D, _ty: Type) -> Option<Node> {
    let D::Unary { arg, .. } = *d else {
        return None;
    };
    let a = as_node(arg);
    (g.iconst(a).is_some() || g.fconst(a).is_some()).then(|| g.find(a))
}

fn select_const(g: &mut EGraph, d: &D, _ty: Type) -> Option<Node> {
    let D::Ternary { args, .. } = *d else {
        return None;
    };
    let c = g.iconst(as_node(args[0]))?;
    Some(g.find(as_node(if c & 1 != 0 { args[1] } else { args[2] })))
}

fn neutral(g: &mut EGraph, d: &D, ty: Type) -> Option<Node> {
    let (op, a, b, _) = bin_args(d)?;
    let all = mask(ty.bits());
    let cb = g.iconst(b);
    let ca = g.iconst(a);
    let right = match op {
        Iadd | Isub | Or | Xor | Shl | Lshr | Ashr => Some(0),
        Imul | Sdiv | Udiv => Some(1),
        And => Some(all),
        _ => None,
    }?;
    if cb == Some(right) {
        return Some(g.find(a));
    }
    // The commutative ones also with the constant on the left.
    if matches!(op, Iadd | Or | Xor | Imul | And) && ca == Some(right) {
        return Some(g.find(b));
    }
    None
}

fn absorbing(g: &mut EGraph, d: &D, ty: Type) -> Option<Node> {
    let (op, a, b, _) = bin_args(d)?;
    let all = mask(ty.bits());
    let (ca, cb) = (g.iconst(a), g.iconst(b));
    let z = match op {
        Imul | And => 0,
        Or => all,
        Urem | Srem if cb == Some(1) => return Some(g.int(ty, 0)),
        _ => return None,
    };
    (ca == Some(z) || cb == Some(z)).then(|| g.int(ty, z))
}

fn self_zero(g: &mut EGraph, d: &D, ty: Type) -> Option<Node> {
    let (_, a, b, _) = bin_args(d)?;
    (g.find(a) == g.find(b)).then(|| g.int(ty, 0))
}

fn idempotent(g: &mut EGraph, d: &D, _ty: Type) -> Option<Node> {
    let (_, a, b, _) = bin_args(d)?;
    let a = g.find(a);
    (a == g.find(b)).then_some(a)
}

fn icmp_self(g: &mut EGraph, d: &D, ty: Type) -> Option<Node> {
    let D::IntCompare { cond, args } = *d else {
        return None;
    };
    if g.find(as_node(args[0])) != g.find(as_node(args[1])) {
        return None;
    }
    let t = matches!(
        cond,
        IntCC::Eq | IntCC::Sle | IntCC::Sge | IntCC::Ule | IntCC::Uge
    );
    Some(g.int(ty, u64::from(t)))
}

fn select_same(g: &mut EGraph, d: &D, _ty: Type) -> Option<Node> {
    let D::Ternary { args, .. } = *d else {
        return None;
    };
    let a = g.find(as_node(args[1]));
    (a == g.find(as_node(args[2]))).then_some(a)
}

fn select_bool(g: &mut EGraph, d: &D, ty: Type) -> Option<Node> {
    let D::Ternary { args, .. } = *d else {
        return None;
    };
    let c = as_node(args[0]);
    if !ty.is_int() || g.ty_of(c).bits() != 1 {
        return None;
    }
    let m = mask(ty.bits());
    let a = g.iconst(as_node(args[1]))? & m;
    if g.iconst(as_node(args[2]))? & m != 0 {
        return None;
    }
    if ty.bits() == 1 {
        return (a == 1).then(|| g.find(c));
    }
    let opcode = match a {
        1 => Zext,
        x if x == m => Sext,
        _ => return None,
    };
    Some(g.add(
        D::Unary {
            opcode,
            arg: args[0],
        },
        ty,
    ))
}

fn icmp_bool_ext(g: &mut EGraph, d: &D, ty: Type) -> Option<Node> {
    let D::IntCompare { cond, args } = *d else {
        return None;
    };
    if !matches!(cond, IntCC::Eq | IntCC::Ne) || g.iconst(as_node(args[1])) != Some(0) {
        return None;
    }
    let (inner, _) = g.def(as_node(args[0]))?;
    let D::Unary {
        opcode: Zext | Sext,
        arg: b,
    } = inner
    else {
        return None;
    };
    if g.ty_of(as_node(b)).bits() != 1 || ty.bits() != 1 {
        return None;
    }
    if cond == IntCC::Ne {
        return Some(g.find(as_node(b)));
    }
    let t = g.int(ty, 1);
    Some(g.add(
        D::Binary {
            opcode: Xor,
            args: [b, as_value(t)],
            flags: IntFlags::NONE,
        },
        ty,
    ))
}

fn icmp_shl_odd(g: &mut EGraph, d: &D, ty: Type) -> Option<Node> {
    let D::IntCompare { cond, args } = *d else {
        return None;
    };
    let t = match cond {
        IntCC::Ne | IntCC::Ugt => 1,
        IntCC::Eq | IntCC::Ule => 0,
        _ => return None,
    };
    if g.iconst(as_node(args[1])) != Some(0) {
        return None;
    }
    let (inner, _) = g.def(as_node(args[0]))?;
    let D::Binary {
        opcode: Shl,
        args: sargs,
        ..
    } = inner
    else {
        return None;
    };
    (g.iconst(as_node(sargs[0]))? & 1 == 1).then(|| g.int(ty, t))
}

fn sign_bits(g: &mut EGraph, d: &D, ty: Type) -> Option<Node> {
    let D::Unary { opcode, arg } = *d else {
        return None;
    };
    let (inner, _) = g.def(as_node(arg))?;
    let D::Unary {
        opcode: iop,
        arg: x,
    } = inner
    else {
        return None;
    };
    match (opcode, iop) {
        (Fneg, Fneg) => Some(g.find(as_node(x))),
        (Fabs, Fabs) | (Fabs, Fneg) => Some(g.add(
            D::Unary {
                opcode: Fabs,
                arg: x,
            },
            ty,
        )),
        _ => None,
    }
}

fn ext_trunc(g: &mut EGraph, d: &D, ty: Type) -> Option<Node> {
    let D::Unary { opcode, arg } = *d else {
        return None;
    };
    let (inner, _) = g.def(as_node(arg))?;
    let D::Unary {
        opcode: iop,
        arg: x,
    } = inner
    else {
        return None;
    };
    let xty = g.ty_of(as_node(x));
    match (opcode, iop) {
        (Trunc, Zext | Sext) if xty == ty => Some(g.find(as_node(x))),
        (Zext, Zext) | (Sext, Sext) | (Trunc, Trunc) => {
            Some(g.add(D::Unary { opcode, arg: x }, ty))
        }
        _ => None,
    }
}

fn bitcast_pair(g: &mut EGraph, d: &D, ty: Type) -> Option<Node> {
    let D::Unary { arg, .. } = *d else {
        return None;
    };
    let (inner, _) = g.def(as_node(arg))?;
    let D::Unary {
        opcode: Bitcast,
        arg: x,
    } = inner
    else {
        return None;
    };
    let xty = g.ty_of(as_node(x));
    if xty == ty {
        Some(g.find(as_node(x)))
    } else if !xty.is_ptr() && !ty.is_ptr() {
        Some(g.add(
            D::Unary {
                opcode: Bitcast,
                arg: x,
            },
            ty,
        ))
    } else {
        None
    }
}

/// `k` if `c` is `2^k` with `1 <= k < w`.
fn log2(c: u64, w: u32) -> Option<u32> {
    (c.is_power_of_two() && c > 1 && c.trailing_zeros() < w).then(|| c.trailing_zeros())
}

fn shift(g: &mut EGraph, op: Opcode, x: Node, k: u64, ty: Type, flags: IntFlags) -> Node {
    let k = g.int(ty, k);
    g.add(
        D::Binary {
            opcode: op,
            args: [as_value(x), as_value(k)],
            flags,
        },
        ty,
    )
}

fn mul_pow2(g: &mut EGraph, d: &D, ty: Type) -> Option<Node> {
    let (_, a, b, flags) = bin_args(d)?;
    let w = ty.bits();
    // The flags carry over as LLVM's InstCombine carries them: `nuw` always, `nsw` when
    // `2^k` is positive (`k < w - 1`): then `shl nsw` is poison exactly when the signed
    // product overflows. Loop strength reduction needs `nsw` to see through `sext`. An
    // existing flag-free `x << k` is reused instead (flags differ in the hash key, so a
    // flagged copy would not be merged with it: one shift computed twice).
    let x = if g.iconst(b).is_some() { a } else { b };
    let shl = |kc: Node, flags: IntFlags| D::Binary {
        opcode: Shl,
        args: [as_value(x), as_value(kc)],
        flags,
    };
    let shl_flags = |k: u32| {
        let mut f = IntFlags::NONE;
        if flags.contains(IntFlags::NUW) {
            f = f.union(IntFlags::NUW);
        }
        if flags.contains(IntFlags::NSW) && k + 1 < w {
            f = f.union(IntFlags::NSW);
        }
        f
    };
    let k = match g.iconst(b) {
        Some(c) => log2(c, w)?,
        None => g.iconst(a).and_then(|c| log2(c, w))?,
    };
    let kc = g.int(ty, u64::from(k));
    if let Some(existing) = g.lookup(shl(kc, IntFlags::NONE), ty) {
        return Some(existing);
    }
    Some(g.add(shl(kc, shl_flags(k)), ty))
}

fn udiv_pow2(g: &mut EGraph, d: &D, ty: Type) -> Option<Node> {
    let (_, a, b, flags) = bin_args(d)?;
    let k = log2(g.iconst(b)?, ty.bits())?;
    let flags = if flags.contains(IntFlags::EXACT) {
        IntFlags::EXACT
    } else {
        IntFlags::NONE
    };
    Some(shift(g, Lshr, a, u64::from(k), ty, flags))
}

fn urem_pow2(g: &mut EGraph, d: &D, ty: Type) -> Option<Node> {
    let (_, a, b, _) = bin_args(d)?;
    let c = g.iconst(b)?;
    log2(c, ty.bits())?;
    let m = g.int(ty, c - 1);
    Some(g.add(
        D::Binary {
            opcode: And,
            args: [as_value(a), as_value(m)],
            flags: IntFlags::NONE,
        },
        ty,
    ))
}

/// `x + ((x >>s (w-1)) >>u (w-k))`: `x` biased so that a shift right by `k` rounds
/// toward zero (adds `2^k - 1` to negative `x`); `x + (x >>u (w-1))` for `k = 1`.
fn biased(g: &mut EGraph, x: Node, k: u32, ty: Type) -> Node {
    let w = ty.bits();
    let bias = if k == 1 {
        // The bias is the sign bit alone: one shift (llc's `shr.u32 %r2, %r1, 31` before
        // its add and `shr.s32`), where the general form takes two.
        shift(g, Lshr, x, u64::from(w - 1), ty, IntFlags::NONE)
    } else {
        let sign = shift(g, Ashr, x, u64::from(w - 1), ty, IntFlags::NONE);
        shift(g, Lshr, sign, u64::from(w - k), ty, IntFlags::NONE)
    };
    g.add(
        D::Binary {
            opcode: Iadd,
            args: [as_value(x), as_value(bias)],
            flags: IntFlags::NONE,
        },
        ty,
    )
}

/// `k` if the signed divisor is `2^k`, `1 <= k <= w - 2` (a positive power of two).
fn signed_log2(g: &EGraph, b: Node, ty: Type) -> Option<u32> {
    let c = g.iconst(b)?;
    log2(c, ty.bits() - 1)
}

fn sdiv_pow2(g: &mut EGraph, d: &D, ty: Type) -> Option<Node> {
    let (_, a, b, flags) = bin_args(d)?;
    let k = signed_log2(g, b, ty)?;
    if g.is_nonneg(a) {
        // A non-negative dividend rounds toward zero by a plain shift.
        let f = if flags.contains(IntFlags::EXACT) {
            IntFlags::EXACT
        } else {
            IntFlags::NONE
        };
        return Some(shift(g, Lshr, a, u64::from(k), ty, f));
    }
    if flags.contains(IntFlags::EXACT) {
        return Some(shift(g, Ashr, a, u64::from(k), ty, IntFlags::EXACT));
    }
    let t = biased(g, a, k, ty);
    Some(shift(g, Ashr, t, u64::from(k), ty, IntFlags::NONE))
}

fn srem_pow2(g: &mut EGraph, d: &D, ty: Type) -> Option<Node> {
    let (_, a, b, _) = bin_args(d)?;
    let k = signed_log2(g, b, ty)?;
    let t = biased(g, a, k, ty);
    let m = g.int(ty, (u64::MAX << k) & mask(ty.bits()));
    let q = g.add(
        D::Binary {
            opcode: And,
            args: [as_value(t), as_value(m)],
            flags: IntFlags::NONE,
        },
        ty,
    );
    Some(g.add(
        D::Binary {
            opcode: Isub,
            args: [as_value(a), as_value(q)],
            flags: IntFlags::NONE,
        },
        ty,
    ))
}

fn sub_const(g: &mut EGraph, d: &D, ty: Type) -> Option<Node> {
    let (_, a, b, _) = bin_args(d)?;
    let c = g.iconst(b)?;
    if c == 0 || g.iconst(a).is_some() {
        return None;
    }
    let n = g.int(ty, c.wrapping_neg());
    Some(g.add(
        D::Binary {
            opcode: Iadd,
            args: [as_value(a), as_value(n)],
            flags: IntFlags::NONE,
        },
        ty,
    ))
}

/// Class `x` seen as `y op c` for a constant `c`: the class's operation itself, or the
/// forms other rules turned it into (`y - c` is `y + -c`; `y << k` is `y * 2^k`), since a
/// class keeps only its cheapest node.
fn with_const(g: &EGraph, x: Node, op: Opcode, ty: Type) -> Option<(Node, u64)> {
    let (inner, _) = g.def(x)?;
    let (iop, p, q, _) = bin_args(&inner)?;
    let (y, c) = match (g.iconst(p), g.iconst(q)) {
        (None, Some(c)) => (p, c),
        (Some(c), None) if iop != Isub && iop != Shl => (q, c),
        _ => return None,
    };
    match (op, iop) {
        _ if op == iop => Some((y, c)),
        (Iadd, Isub) => Some((y, c.wrapping_neg() & mask(ty.bits()))),
        (Imul, Shl) if c < u64::from(ty.bits()) => Some((y, 1u64 << c)),
        _ => None,
    }
}

fn reassoc_const(g: &mut EGraph, d: &D, ty: Type) -> Option<Node> {
    let (op, a, b, _) = bin_args(d)?;
    let (x, c2) = match (g.iconst(a), g.iconst(b)) {
        (None, Some(c)) => (a, c),
        (Some(c), None) => (b, c),
        _ => return None,
    };
    let (y, c1) = with_const(g, x, op, ty)?;
    let c = fold_int_bin(op, ty.bits(), c1, c2)?;
    let c = g.int(ty, c);
    Some(g.add(
        D::Binary {
            opcode: op,
            args: [as_value(y), as_value(c)],
            flags: IntFlags::NONE,
        },
        ty,
    ))
}

/// The constant shift amount of `x op k`, if `k` is a constant below the width `w`.
fn shift_amount(g: &EGraph, k: Node, w: u32) -> Option<u32> {
    let k = g.iconst(k)?;
    (k < u64::from(w)).then_some(k as u32)
}

/// The bits known to be zero in the result of `data` (its operands are class ids), from
/// its operands' known zeros: a constant's clear bits, `and` (either operand's), `or`,
/// `xor` and `select` (both operands'), shifts by a constant (the bits shifted in),
/// `zext` (the new high bits), `trunc`. Computed once per node as it enters the e-graph,
/// so a class's known bits cost no walk (LLVM's `computeKnownBits` walks up to six
/// operands deep at every query instead).
pub fn known_zeros(g: &EGraph, data: &D, ty: Type) -> u64 {
    if !ty.is_int() {
        return 0;
    }
    let w = ty.bits();
    let m = mask(w);
    let z = |v| g.zeros(as_node(v));
    let r = match *data {
        D::IntConst { imm } => !(imm as u64),
        D::Binary { opcode, args, .. } => match opcode {
            And => z(args[0]) | z(args[1]),
            Or | Xor => z(args[0]) & z(args[1]),
            Shl => match shift_amount(g, as_node(args[1]), w) {
                Some(k) => (z(args[0]) << k) | mask(k),
                None => 0,
            },
            Lshr => match shift_amount(g, as_node(args[1]), w) {
                Some(k) => ((z(args[0]) & m) >> k) | !(m >> k),
                None => 0,
            },
            Ashr => match shift_amount(g, as_node(args[1]), w) {
                // The bits shifted in copy the sign bit: zero only where it is.
                Some(k) if z(args[0]) & (1u64 << (w - 1)) != 0 => {
                    ((z(args[0]) & m) >> k) | !(m >> k)
                }
                Some(k) => (z(args[0]) & m) >> k & (m >> k),
                None => 0,
            },
            _ => 0,
        },
        D::Unary { opcode, arg } => {
            let aw = g.ty_of(as_node(arg)).bits();
            match opcode {
                Zext => (z(arg) & mask(aw)) | !mask(aw),
                Trunc => z(arg),
                _ => 0,
            }
        }
        D::Ternary {
            opcode: Select,
            args,
        } => z(args[1]) & z(args[2]),
        _ => 0,
    };
    r & m
}

/// `x op c` or `c op x` for a constant `c`: `(x, c)`.
fn with_const_operand(g: &EGraph, a: Node, b: Node) -> Option<(Node, u64)> {
    match (g.iconst(a), g.iconst(b)) {
        (None, Some(c)) => Some((a, c)),
        (Some(c), None) => Some((b, c)),
        _ => None,
    }
}

fn zext_trunc(g: &mut EGraph, d: &D, ty: Type) -> Option<Node> {
    let D::Unary { arg, .. } = *d else {
        return None;
    };
    let (inner, nty) = g.def(as_node(arg))?;
    let D::Unary {
        opcode: Trunc,
        arg: x,
    } = inner
    else {
        return None;
    };
    if g.ty_of(as_node(x)) != ty {
        return None;
    }
    let m = g.int(ty, mask(nty.bits()));
    Some(g.add(
        D::Binary {
            opcode: And,
            args: [x, as_value(m)],
            flags: IntFlags::NONE,
        },
        ty,
    ))
}

fn and_with(g: &mut EGraph, x: Node, c: u64, ty: Type) -> Node {
    let c = g.int(ty, c);
    g.add(
        D::Binary {
            opcode: And,
            args: [as_value(x), as_value(c)],
            flags: IntFlags::NONE,
        },
        ty,
    )
}

fn shift_pair(g: &mut EGraph, d: &D, ty: Type) -> Option<Node> {
    let (op, a, b, _) = bin_args(d)?;
    let w = ty.bits();
    let k = shift_amount(g, b, w)?;
    let (inner, _) = g.def(a)?;
    let (iop, x, ik, _) = bin_args(&inner)?;
    if shift_amount(g, ik, w)? != k {
        return None;
    }
    // The flags of either shift only add poison, which the mask refines.
    let m = mask(w);
    let keep = match (op, iop) {
        (Shl, Lshr) => (m << k) & m,
        (Lshr, Shl) => m >> k,
        _ => return None,
    };
    Some(and_with(g, x, keep, ty))
}

fn or_of_masks(g: &mut EGraph, d: &D, ty: Type) -> Option<Node> {
    let (_, a, b, _) = bin_args(d)?;
    let masked = |g: &EGraph, n: Node| -> Option<(Node, u64)> {
        let (inner, _) = g.def(n)?;
        let (iop, p, q, _) = bin_args(&inner)?;
        if iop != And {
            return None;
        }
        with_const_operand(g, p, q)
    };
    let (x, c1) = masked(g, a)?;
    let (y, c2) = masked(g, b)?;
    if g.find(x) != g.find(y) {
        return None;
    }
    Some(and_with(g, x, c1 | c2, ty))
}

fn and_known_zero(g: &mut EGraph, d: &D, ty: Type) -> Option<Node> {
    let (_, a, b, _) = bin_args(d)?;
    let (x, c) = with_const_operand(g, a, b)?;
    ((g.zeros(x) | c) & mask(ty.bits()) == mask(ty.bits())).then(|| g.find(x))
}

/// Steps [`demanded_bits`] takes through a chain of masks and inserts (each one `def`
/// lookup; bitfield code as clang emits it takes one or two per field).
const DEMANDED_STEPS: u32 = 32;

/// A class equal to `x` on the bits in `demanded`, found by walking down `x`'s cheapest
/// nodes: `a | b` and `a ^ b` are `a` there when `b` is known zero there, and `a & c` is
/// `a` when the constant `c` keeps them all, and `zext(trunc y)` is `y` when the
/// truncation keeps them all. `None` when the walk does not move. An
/// explicit loop with a step limit: a chain, not a tree, is followed.
fn demanded_class(g: &EGraph, x: Node, demanded: u64) -> Option<Node> {
    let mut cur = g.find_ro(x);
    for _ in 0..DEMANDED_STEPS {
        let Some((inner, ty)) = g.def(cur) else {
            break;
        };
        if let Some(y) = zext_of_trunc(g, &inner, ty) {
            // zext(trunc y) is y on the bits the truncation keeps.
            let (x, nw) = y;
            if demanded & !mask(nw) == 0 {
                cur = g.find_ro(x);
                continue;
            }
            break;
        }
        let Some((op, a, b, _)) = bin_args(&inner) else {
            break;
        };
        let next = match op {
            Or | Xor if g.zeros(b) & demanded == demanded => a,
            Or | Xor if g.zeros(a) & demanded == demanded => b,
            And => match with_const_operand(g, a, b) {
                Some((y, c)) if c & demanded == demanded => y,
                _ => break,
            },
            _ => break,
        };
        cur = g.find_ro(next);
    }
    (cur != g.find_ro(x)).then_some(cur)
}

/// `(y, n)` when `inner` (of type `ty`) is `zext(trunc y)` with `y` of type `ty` and the
/// truncation to `n` bits.
fn zext_of_trunc(g: &EGraph, inner: &D, ty: Type) -> Option<(Node, u32)> {
    let D::Unary {
        opcode: Zext,
        arg: t,
    } = *inner
    else {
        return None;
    };
    let (tr, nty) = g.def(as_node(t))?;
    let D::Unary {
        opcode: Trunc,
        arg: y,
    } = tr
    else {
        return None;
    };
    (g.ty_of(as_node(y)) == ty).then_some((as_node(y), nty.bits()))
}

fn demanded_bits(g: &mut EGraph, d: &D, ty: Type) -> Option<Node> {
    let w = ty.bits();
    let m = mask(w);
    match *d {
        D::Binary {
            opcode,
            args,
            flags,
        } => {
            let (a, b) = (as_node(args[0]), as_node(args[1]));
            let (x, demanded, other) = match opcode {
                Lshr => (a, (m << shift_amount(g, b, w)?) & m, b),
                Shl => (a, m >> shift_amount(g, b, w)?, b),
                And => {
                    let (x, c) = with_const_operand(g, a, b)?;
                    let other = if x == a { b } else { a };
                    (x, c & m, other)
                }
                _ => return None,
            };
            let y = demanded_class(g, x, demanded)?;
            Some(g.add(
                D::Binary {
                    opcode,
                    args: [as_value(y), as_value(other)],
                    flags,
                },
                ty,
            ))
        }
        D::Unary { opcode: Trunc, arg } => {
            let y = demanded_class(g, as_node(arg), m)?;
            Some(g.add(
                D::Unary {
                    opcode: Trunc,
                    arg: as_value(y),
                },
                ty,
            ))
        }
        _ => None,
    }
}

fn trunc_narrow(g: &mut EGraph, d: &D, ty: Type) -> Option<Node> {
    let D::Unary { arg, .. } = *d else {
        return None;
    };
    let (inner, _) = g.def(as_node(arg))?;
    let (op, a, b, _) = bin_args(&inner)?;
    if !matches!(op, And | Or | Xor | Iadd | Isub | Imul) {
        return None;
    }
    // Each operand narrowed: a constant truncated, an extension of a `ty` value unwrapped.
    let narrow = |g: &mut EGraph, n: Node| -> Option<Node> {
        if let Some(c) = g.iconst(n) {
            return Some(g.int(ty, c));
        }
        let (ext, _) = g.def(n)?;
        match ext {
            D::Unary {
                opcode: Zext | Sext,
                arg: y,
            } if g.ty_of(as_node(y)) == ty => Some(g.find(as_node(y))),
            _ => None,
        }
    };
    let (x, y) = (narrow(g, a)?, narrow(g, b)?);
    Some(g.add(
        D::Binary {
            opcode: op,
            args: [as_value(x), as_value(y)],
            flags: IntFlags::NONE,
        },
        ty,
    ))
}

fn icmp_mask_shift(g: &mut EGraph, d: &D, ty: Type) -> Option<Node> {
    let D::IntCompare { cond, args } = *d else {
        return None;
    };
    if !matches!(cond, IntCC::Eq | IntCC::Ne) || g.iconst(as_node(args[1])) != Some(0) {
        return None;
    }
    let (and, aty) = g.def(as_node(args[0]))?;
    let (And, p, q, _) = bin_args(&and)? else {
        return None;
    };
    let (s, c2) = with_const_operand(g, p, q)?;
    let (shift, _) = g.def(s)?;
    let (sop, x, k, _) = bin_args(&shift)?;
    let w = aty.bits();
    let m = mask(w);
    let k = shift_amount(g, k, w)?;
    // Bit i of (x >>u k) is bit i + k of x, and bit i of (x << k) is bit i - k of x (the
    // other bits are zero): the same bits of x, tested in place.
    let c = match sop {
        Lshr => ((c2 & (m >> k)) << k) & m,
        Shl => (c2 & m) >> k,
        _ => return None,
    };
    let masked = and_with(g, x, c, aty);
    let zero = g.int(aty, 0);
    Some(g.add(
        D::IntCompare {
            cond,
            args: [as_value(masked), as_value(zero)],
        },
        ty,
    ))
}

fn sext_trunc_shift(g: &mut EGraph, d: &D, ty: Type) -> Option<Node> {
    let D::Unary { arg, .. } = *d else {
        return None;
    };
    let (inner, nty) = g.def(as_node(arg))?;
    let D::Unary {
        opcode: Trunc,
        arg: s,
    } = inner
    else {
        return None;
    };
    let (shift, sty) = g.def(as_node(s))?;
    let (op, x, k, _) = bin_args(&shift)?;
    let w = sty.bits();
    if sty != ty || !matches!(op, Lshr | Ashr) || shift_amount(g, k, w)? != w - nty.bits() {
        return None;
    }
    Some(g.add(
        D::Binary {
            opcode: Ashr,
            args: [as_value(x), as_value(k)],
            flags: IntFlags::NONE,
        },
        ty,
    ))
}
