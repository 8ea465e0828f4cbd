//! Instruction opcodes, condition codes, flags and the instruction data formats.
//!
//! Every instruction has at most one result. Its type is the type of the result value
//! (kept in the [`DataFlowGraph`](crate::DataFlowGraph)), so casts, constants and loads
//! do not repeat it here.

use crate::entities::{Block, FuncId, GlobalId, JumpTable, Slot, Value};
use crate::types::Type;
use core::fmt;
use core::hash::{Hash, Hasher};
use cranelift_entity::{EntityList, ListPool};

/// A list of values in a [`ListPool`] (call arguments, branch arguments).
pub type ValueList = EntityList<Value>;
/// The pool that owns every [`ValueList`] of a function.
pub type ValueListPool = ListPool<Value>;

macro_rules! opcodes {
    ($($(#[$doc:meta])* $variant:ident = $name:literal,)*) => {
        /// An instruction opcode.
        #[derive(Copy, Clone, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
        pub enum Opcode { $($(#[$doc])* $variant,)* }

        impl Opcode {
            /// Every opcode, in declaration order.
            pub const ALL: &'static [Opcode] = &[$(Opcode::$variant,)*];

            /// The text-format spelling.
            pub fn name(self) -> &'static str {
                match self { $(Opcode::$variant => $name,)* }
            }
        }
    };
}

opcodes! {
    /// Integer constant: `v = iconst.i32 42`.
    Iconst = "iconst",
    /// Float constant: `v = fconst.f32 1.5`.
    Fconst = "fconst",
    /// Wrapping integer addition (nsw/nuw make overflow poison).
    Iadd = "iadd",
    /// Wrapping integer subtraction.
    Isub = "isub",
    /// Wrapping integer multiplication (low half).
    Imul = "imul",
    /// Signed division, rounding toward zero (`exact` makes a remainder poison).
    Sdiv = "sdiv",
    /// Unsigned division.
    Udiv = "udiv",
    /// Signed remainder (sign of the dividend).
    Srem = "srem",
    /// Unsigned remainder.
    Urem = "urem",
    /// Bitwise and.
    And = "and",
    /// Bitwise or.
    Or = "or",
    /// Bitwise exclusive or.
    Xor = "xor",
    /// Shift left; a shift amount >= the width gives poison.
    Shl = "shl",
    /// Logical shift right.
    Lshr = "lshr",
    /// Arithmetic shift right.
    Ashr = "ashr",
    /// Signed minimum.
    Smin = "smin",
    /// Signed maximum.
    Smax = "smax",
    /// Unsigned minimum.
    Umin = "umin",
    /// Unsigned maximum.
    Umax = "umax",
    /// Population count.
    Popcnt = "popcnt",
    /// Count leading zeros (the width for zero).
    Clz = "clz",
    /// Count trailing zeros (the width for zero).
    Ctz = "ctz",
    /// IEEE addition, round to nearest even.
    Fadd = "fadd",
    /// IEEE subtraction.
    Fsub = "fsub",
    /// IEEE multiplication.
    Fmul = "fmul",
    /// IEEE division.
    Fdiv = "fdiv",
    /// Floating remainder with the sign of the dividend (C `fmod`).
    Frem = "frem",
    /// IEEE-754 minNum: a NaN operand is ignored unless both are NaN.
    Fmin = "fmin",
    /// IEEE-754 maxNum.
    Fmax = "fmax",
    /// Negation (flips the sign bit).
    Fneg = "fneg",
    /// Absolute value (clears the sign bit).
    Fabs = "fabs",
    /// Correctly rounded square root.
    Sqrt = "sqrt",
    /// Round toward negative infinity.
    Floor = "floor",
    /// Round toward positive infinity.
    Ceil = "ceil",
    /// Round toward zero.
    Ftrunc = "ftrunc",
    /// Round to nearest, ties to even.
    Nearest = "nearest",
    /// Fused multiply-add `a*b+c` with one rounding.
    Fma = "fma",
    // --- math (PTX primitives behind CUDA's math library) ---
    /// `mul24`: the low 32 bits of the product of the sign-extended low 24 bits of each
    /// operand (PTX `mul24.lo.s32`); `i32` only.
    Mul24 = "mul24",
    /// `umul24`: the low 32 bits of the product of the zero-extended low 24 bits of each
    /// operand (PTX `mul24.lo.u32`); `i32` only.
    Umul24 = "umul24",
    /// `2^x`, exactly rounded in the IR (PTX `ex2.approx.f32`: max relative error
    /// 2^-22 on hardware); `f32` only.
    Ex2Approx = "ex2_approx",
    /// `log2(x)`, exactly rounded in the IR (PTX `lg2.approx.f32`: max absolute error
    /// 2^-22 on hardware); `f32` only.
    Lg2Approx = "lg2_approx",
    /// `sin(x)` (radians), exactly rounded in the IR (PTX `sin.approx.f32`: max absolute
    /// error 2^-20.5 in [-100π, 100π] on hardware); `f32` only.
    SinApprox = "sin_approx",
    /// `cos(x)`, like `sin_approx` (PTX `cos.approx.f32`); `f32` only.
    CosApprox = "cos_approx",
    /// `1/sqrt(x)`, exactly rounded in the IR for `f32` and within 1 ulp for `f64` (PTX
    /// `rsqrt.approx`: max relative error about 2^-22.9 for `f32` on hardware); `f32` or
    /// `f64`.
    RsqrtApprox = "rsqrt_approx",
    /// `a/b`, exactly rounded in the IR (PTX `div.full.f32`: max 2 ulp over the full
    /// range on hardware); `f32` only.
    FdivApprox = "fdiv_approx",
    // --- warp-level operations, memory ordering, clock ---
    /// Warp shuffle `shfl_<mode> value, lane, clamp, mask` (`shfl.sync`); convergent.
    Shfl = "shfl",
    /// Warp vote `vote_<mode> pred, mask` (`vote.sync`); convergent.
    Vote = "vote",
    /// Warp barrier `warp_sync mask` (`__syncwarp`, `bar.warp.sync`); convergent.
    WarpSync = "warp_sync",
    /// Memory fence `fence <order> <scope>` (`fence.sc`/`fence.acq_rel`, `membar`).
    Fence = "fence",
    /// Cycle counter read `clock.i32` / `clock.i64`: never merged, removed or moved.
    Clock = "clock",
    // --- PTX system calls: device printf and assert ---
    /// `v = vprintf fmt, args`: CUDA's device `printf` (PTX system call `vprintf`):
    /// prints the C format string at generic pointer `fmt` with the arguments packed at
    /// generic pointer `args` (each at an offset aligned to its size: 4 bytes for
    /// `int`/`char`, 8 for `long`, `double` and pointers); the `i32` result is the
    /// number of arguments read (-1 for a null format). Side effects, not convergent.
    Vprintf = "vprintf",
    /// `assert_fail msg, file, line, func`: a failed device `assert` (PTX system call
    /// `__assertfail`): ends the launch with an error naming the message, file, line
    /// (`i32`) and function (generic pointers to C strings). Not a terminator (clang's
    /// code continues after the call), but nothing after it executes.
    AssertFail = "assert_fail",
    /// Integer comparison producing `i1`.
    Icmp = "icmp",
    /// Float comparison producing `i1`.
    Fcmp = "fcmp",
    /// `select c, a, b`: `a` if `c` else `b`.
    Select = "select",
    /// Sign extension to a wider integer.
    Sext = "sext",
    /// Zero extension to a wider integer.
    Zext = "zext",
    /// Truncation to a narrower integer.
    Trunc = "trunc",
    /// Float to signed integer, toward zero (NaN/out of range: poison).
    Fptosi = "fptosi",
    /// Float to unsigned integer, toward zero (NaN/out of range: poison).
    Fptoui = "fptoui",
    /// Signed integer to float, round to nearest.
    Sitofp = "sitofp",
    /// Unsigned integer to float, round to nearest.
    Uitofp = "uitofp",
    /// f32 to f64 (exact).
    Fpext = "fpext",
    /// f64 to f32, round to nearest.
    Fptrunc = "fptrunc",
    /// Reinterpret bits between types of equal width (int/float/pointer).
    Bitcast = "bitcast",
    /// Pointer to integer.
    Ptrtoint = "ptrtoint",
    /// Integer to pointer.
    Inttoptr = "inttoptr",
    /// Convert a pointer between the generic and a specific address space (`cvta`).
    AddrspaceCast = "addrspace_cast",
    /// `ptradd base, index, scale`: `base + sext(index) * scale` bytes.
    PtrAdd = "ptradd",
    /// Typed load through a pointer; the space is the pointer's.
    Load = "load",
    /// Store a value through a pointer.
    Store = "store",
    /// Atomic read-modify-write returning the old value.
    AtomicRmw = "atomic_rmw",
    /// Atomic compare-and-swap returning the old value.
    AtomicCas = "atomic_cas",
    /// Address of a module global.
    GlobalAddr = "global_addr",
    /// Address of a per-thread local slot.
    SlotAddr = "slot_addr",
    /// Read a special register (`tid.x`, `ctaid.y`, `laneid`, ...).
    Sreg = "sreg",
    /// CTA-wide barrier (`__syncthreads`, `bar.sync 0`); convergent.
    Barrier = "barrier",
    /// Stop poison from propagating: an arbitrary but fixed value.
    Freeze = "freeze",
    /// Direct call of a function of the module.
    Call = "call",
    /// Unconditional branch.
    Jump = "jump",
    /// Two-way conditional branch on an `i1`.
    Brif = "brif",
    /// Multi-way branch on an integer (LLVM's `switch`).
    BrTable = "br_table",
    /// Return from the function.
    Return = "return",
    /// Undefined behaviour if reached.
    Unreachable = "unreachable",
}

impl Opcode {
    /// Does this opcode end a block?
    #[inline]
    pub fn is_terminator(self) -> bool {
        matches!(
            self,
            Opcode::Jump | Opcode::Brif | Opcode::BrTable | Opcode::Return | Opcode::Unreachable
        )
    }

    /// Does this opcode branch to other blocks of the function?
    pub fn is_branch(self) -> bool {
        matches!(self, Opcode::Jump | Opcode::Brif | Opcode::BrTable)
    }

    /// Does this opcode touch memory or otherwise have effects beyond its result?
    /// Such instructions may not be removed, duplicated speculatively or reordered freely.
    #[inline]
    pub fn has_side_effects(self) -> bool {
        matches!(
            self,
            Opcode::Store
                | Opcode::AtomicRmw
                | Opcode::AtomicCas
                | Opcode::Barrier
                | Opcode::Shfl
                | Opcode::Vote
                | Opcode::WarpSync
                | Opcode::Fence
                | Opcode::Clock
                | Opcode::Vprintf
                | Opcode::AssertFail
                | Opcode::Call
                | Opcode::Unreachable
                | Opcode::Return
        )
    }

    /// Does this opcode read memory?
    pub fn reads_memory(self) -> bool {
        matches!(
            self,
            Opcode::Load
                | Opcode::AtomicRmw
                | Opcode::AtomicCas
                | Opcode::Fence
                | Opcode::Vprintf
                | Opcode::AssertFail
                | Opcode::Call
        )
    }

    /// May executing this opcode be undefined behaviour for some operands (so it must
    /// not be hoisted past a condition that guards it)?
    pub fn can_trap(self) -> bool {
        matches!(
            self,
            Opcode::Sdiv
                | Opcode::Udiv
                | Opcode::Srem
                | Opcode::Urem
                | Opcode::Load
                | Opcode::Store
                | Opcode::AtomicRmw
                | Opcode::AtomicCas
                | Opcode::Vprintf
                | Opcode::AssertFail
                | Opcode::Call
                | Opcode::Unreachable
        )
    }

    /// Is this operation convergent (all threads of a CTA, or of a warp's mask for the
    /// warp collectives, must reach it together)? Calls are conservatively convergent:
    /// the callee may contain a barrier.
    #[inline]
    pub fn is_convergent(self) -> bool {
        matches!(
            self,
            Opcode::Barrier | Opcode::Shfl | Opcode::Vote | Opcode::WarpSync | Opcode::Call
        )
    }

    /// Is this a warp collective (`shfl`, `vote`, `warp_sync`): the threads named by its
    /// mask exchange data or synchronise at it?
    pub fn is_warp_collective(self) -> bool {
        matches!(self, Opcode::Shfl | Opcode::Vote | Opcode::WarpSync)
    }

    /// Is this a cast whose result type is written as a suffix (`sext.i64 v1`)?
    pub fn is_cast(self) -> bool {
        matches!(
            self,
            Opcode::Sext
                | Opcode::Zext
                | Opcode::Trunc
                | Opcode::Fptosi
                | Opcode::Fptoui
                | Opcode::Sitofp
                | Opcode::Uitofp
                | Opcode::Fpext
                | Opcode::Fptrunc
                | Opcode::Bitcast
                | Opcode::Ptrtoint
                | Opcode::Inttoptr
                | Opcode::AddrspaceCast
        )
    }

    /// Is this opcode a two-operand integer operation?
    pub fn is_int_binary(self) -> bool {
        matches!(
            self,
            Opcode::Iadd
                | Opcode::Isub
                | Opcode::Imul
                | Opcode::Sdiv
                | Opcode::Udiv
                | Opcode::Srem
                | Opcode::Urem
                | Opcode::And
                | Opcode::Or
                | Opcode::Xor
                | Opcode::Shl
                | Opcode::Lshr
                | Opcode::Ashr
                | Opcode::Smin
                | Opcode::Smax
                | Opcode::Umin
                | Opcode::Umax
                | Opcode::Mul24
                | Opcode::Umul24
        )
    }

    /// Is this opcode a two-operand float operation?
    pub fn is_float_binary(self) -> bool {
        matches!(
            self,
            Opcode::Fadd
                | Opcode::Fsub
                | Opcode::Fmul
                | Opcode::Fdiv
                | Opcode::Frem
                | Opcode::Fmin
                | Opcode::Fmax
                | Opcode::FdivApprox
        )
    }

    /// Is this opcode a one-operand integer operation?
    pub fn is_int_unary(self) -> bool {
        matches!(self, Opcode::Popcnt | Opcode::Clz | Opcode::Ctz)
    }

    /// Is this opcode a one-operand float operation?
    pub fn is_float_unary(self) -> bool {
        matches!(
            self,
            Opcode::Fneg
                | Opcode::Fabs
                | Opcode::Sqrt
                | Opcode::Floor
                | Opcode::Ceil
                | Opcode::Ftrunc
                | Opcode::Nearest
                | Opcode::Ex2Approx
                | Opcode::Lg2Approx
                | Opcode::SinApprox
                | Opcode::CosApprox
                | Opcode::RsqrtApprox
        )
    }

    /// The only type an arithmetic opcode accepts, for those restricted to one (the
    /// PTX instruction behind them exists for that type only); `None` otherwise.
    pub fn required_type(self) -> Option<Type> {
        match self {
            Opcode::Mul24 | Opcode::Umul24 => Some(Type::I32),
            Opcode::Ex2Approx
            | Opcode::Lg2Approx
            | Opcode::SinApprox
            | Opcode::CosApprox
            | Opcode::FdivApprox => Some(Type::F32),
            _ => None,
        }
    }

    /// Which flags (`nsw`, `nuw`, `exact`, `contract`) this opcode accepts.
    pub fn allowed_flags(self) -> IntFlags {
        match self {
            Opcode::Fadd | Opcode::Fsub | Opcode::Fmul => IntFlags::CONTRACT,
            Opcode::Iadd | Opcode::Isub | Opcode::Imul | Opcode::Shl => {
                IntFlags::NSW.union(IntFlags::NUW)
            }
            Opcode::Sdiv | Opcode::Udiv | Opcode::Lshr | Opcode::Ashr => IntFlags::EXACT,
            _ => IntFlags::NONE,
        }
    }

    /// Look an opcode up by its text spelling.
    pub fn from_name(s: &str) -> Option<Opcode> {
        Opcode::ALL.iter().copied().find(|o| o.name() == s)
    }
}

impl fmt::Display for Opcode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Flags of binary arithmetic, as in LLVM: the poison-generating flags of integer
/// arithmetic, and `contract` on `fadd`/`fsub`/`fmul` (LLVM's fast-math flag of that
/// name: the result may be computed as part of a fused multiply-add, rounded once).
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug, Default)]
pub struct IntFlags(u8);

impl IntFlags {
    /// No flags.
    pub const NONE: IntFlags = IntFlags(0);
    /// No signed wrap: signed overflow is poison.
    pub const NSW: IntFlags = IntFlags(1);
    /// No unsigned wrap: unsigned overflow is poison.
    pub const NUW: IntFlags = IntFlags(2);
    /// Exact: a non-zero remainder (or shifted-out one bits) is poison.
    pub const EXACT: IntFlags = IntFlags(4);
    /// Contract (floats): an `fmul` and the `fadd` using it, both `contract`, may be
    /// computed as one `fma` (a single rounding). The interpreter rounds each step, which
    /// is always one of the allowed results.
    pub const CONTRACT: IntFlags = IntFlags(8);

    /// Both sets of flags.
    pub const fn union(self, o: IntFlags) -> IntFlags {
        IntFlags(self.0 | o.0)
    }
    /// Does `self` contain every flag of `o`?
    pub const fn contains(self, o: IntFlags) -> bool {
        self.0 & o.0 == o.0
    }
    /// Are no flags set?
    pub const fn is_empty(self) -> bool {
        self.0 == 0
    }
    /// Flags in text order with their spellings.
    pub fn names(self) -> impl Iterator<Item = &'static str> {
        [
            (Self::NSW, "nsw"),
            (Self::NUW, "nuw"),
            (Self::EXACT, "exact"),
            (Self::CONTRACT, "contract"),
        ]
        .into_iter()
        .filter(move |(f, _)| self.contains(*f))
        .map(|(_, n)| n)
    }
    /// The flag with this spelling.
    pub fn from_name(s: &str) -> Option<IntFlags> {
        Some(match s {
            "nsw" => Self::NSW,
            "nuw" => Self::NUW,
            "exact" => Self::EXACT,
            "contract" => Self::CONTRACT,
            _ => return None,
        })
    }
}

/// Flags of a memory access.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug, Default)]
pub struct MemFlags {
    /// A volatile access: never removed, merged or reordered with other volatile ones.
    pub volatile: bool,
}

macro_rules! condcodes {
    ($(#[$tdoc:meta])* $ty:ident { $($(#[$doc:meta])* $variant:ident = $name:literal,)* }) => {
        $(#[$tdoc])*
        #[derive(Copy, Clone, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
        pub enum $ty { $($(#[$doc])* $variant,)* }

        impl $ty {
            /// Every condition code.
            pub const ALL: &'static [$ty] = &[$($ty::$variant,)*];
            /// The text spelling.
            pub fn name(self) -> &'static str {
                match self { $($ty::$variant => $name,)* }
            }
            /// Look a condition code up by its spelling.
            pub fn from_name(s: &str) -> Option<$ty> {
                Self::ALL.iter().copied().find(|c| c.name() == s)
            }
        }

        impl fmt::Display for $ty {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.name())
            }
        }
    };
}

condcodes! {
    /// Integer comparison predicates (LLVM's `icmp`).
    IntCC {
        /// Equal.
        Eq = "eq",
        /// Not equal.
        Ne = "ne",
        /// Signed less than.
        Slt = "slt",
        /// Signed less or equal.
        Sle = "sle",
        /// Signed greater than.
        Sgt = "sgt",
        /// Signed greater or equal.
        Sge = "sge",
        /// Unsigned less than.
        Ult = "ult",
        /// Unsigned less or equal.
        Ule = "ule",
        /// Unsigned greater than.
        Ugt = "ugt",
        /// Unsigned greater or equal.
        Uge = "uge",
    }
}

condcodes! {
    /// Float comparison predicates (LLVM's `fcmp`): ordered ones are false when either
    /// operand is NaN, unordered ones true.
    FloatCC {
        /// Always false.
        False = "false",
        /// Ordered and equal.
        Oeq = "oeq",
        /// Ordered and greater.
        Ogt = "ogt",
        /// Ordered and greater or equal.
        Oge = "oge",
        /// Ordered and less.
        Olt = "olt",
        /// Ordered and less or equal.
        Ole = "ole",
        /// Ordered and not equal.
        One = "one",
        /// Neither is NaN.
        Ord = "ord",
        /// Unordered or equal.
        Ueq = "ueq",
        /// Unordered or greater.
        Ugt = "ugt",
        /// Unordered or greater or equal.
        Uge = "uge",
        /// Unordered or less.
        Ult = "ult",
        /// Unordered or less or equal.
        Ule = "ule",
        /// Unordered or not equal.
        Une = "une",
        /// Either is NaN.
        Uno = "uno",
        /// Always true.
        True = "true",
    }
}

impl IntCC {
    /// The predicate with operands swapped (`a < b` == `b > a`).
    pub fn swapped(self) -> IntCC {
        use IntCC::*;
        match self {
            Eq => Eq,
            Ne => Ne,
            Slt => Sgt,
            Sle => Sge,
            Sgt => Slt,
            Sge => Sle,
            Ult => Ugt,
            Ule => Uge,
            Ugt => Ult,
            Uge => Ule,
        }
    }
    /// The negated predicate (`!(a < b)` == `a >= b`).
    pub fn inverse(self) -> IntCC {
        use IntCC::*;
        match self {
            Eq => Ne,
            Ne => Eq,
            Slt => Sge,
            Sle => Sgt,
            Sgt => Sle,
            Sge => Slt,
            Ult => Uge,
            Ule => Ugt,
            Ugt => Ule,
            Uge => Ult,
        }
    }
    /// Evaluate on two integers of `bits` width, given as raw (zero-extended) bits.
    pub fn eval(self, bits: u32, a: u64, b: u64) -> bool {
        let sh = 64 - bits;
        let (sa, sb) = (((a << sh) as i64) >> sh, ((b << sh) as i64) >> sh);
        let mask = if bits == 64 {
            u64::MAX
        } else {
            (1u64 << bits) - 1
        };
        let (ua, ub) = (a & mask, b & mask);
        use IntCC::*;
        match self {
            Eq => ua == ub,
            Ne => ua != ub,
            Slt => sa < sb,
            Sle => sa <= sb,
            Sgt => sa > sb,
            Sge => sa >= sb,
            Ult => ua < ub,
            Ule => ua <= ub,
            Ugt => ua > ub,
            Uge => ua >= ub,
        }
    }
}

impl FloatCC {
    /// The negated predicate (ordered <-> unordered complement).
    pub fn inverse(self) -> FloatCC {
        use FloatCC::*;
        match self {
            False => True,
            Oeq => Une,
            Ogt => Ule,
            Oge => Ult,
            Olt => Uge,
            Ole => Ugt,
            One => Ueq,
            Ord => Uno,
            Ueq => One,
            Ugt => Ole,
            Uge => Olt,
            Ult => Oge,
            Ule => Ogt,
            Une => Oeq,
            Uno => Ord,
            True => False,
        }
    }
    /// Evaluate on two floats (f32 operands widened exactly to f64).
    pub fn eval(self, a: f64, b: f64) -> bool {
        use FloatCC::*;
        let uno = a.is_nan() || b.is_nan();
        match self {
            False => false,
            True => true,
            Ord => !uno,
            Uno => uno,
            Oeq => !uno && a == b,
            Ogt => !uno && a > b,
            Oge => !uno && a >= b,
            Olt => !uno && a < b,
            Ole => !uno && a <= b,
            One => !uno && a != b,
            Ueq => uno || a == b,
            Ugt => uno || a > b,
            Uge => uno || a >= b,
            Ult => uno || a < b,
            Ule => uno || a <= b,
            Une => uno || a != b,
        }
    }
}

condcodes! {
    /// Atomic read-modify-write operations (`atomic_add`, ...).
    AtomicOp {
        /// Integer or float addition.
        Add = "add",
        /// Bitwise and.
        And = "and",
        /// Bitwise or.
        Or = "or",
        /// Bitwise xor.
        Xor = "xor",
        /// Signed minimum.
        Smin = "smin",
        /// Signed maximum.
        Smax = "smax",
        /// Unsigned minimum.
        Umin = "umin",
        /// Unsigned maximum.
        Umax = "umax",
        /// Exchange.
        Exch = "exch",
        /// Wrapping increment (`atomicInc`, i32 only): `old >= x ? 0 : old + 1`.
        Inc = "inc",
        /// Wrapping decrement (`atomicDec`, i32 only): `old == 0 || old > x ? x : old - 1`.
        Dec = "dec",
    }
}

condcodes! {
    /// Which lane a `shfl` reads (PTX `shfl.sync` modes).
    ShflMode {
        /// From lane `self - delta` (kept when below the segment start).
        Up = "up",
        /// From lane `self + delta` (kept when past the clamp).
        Down = "down",
        /// From lane `self ^ mask`.
        Bfly = "bfly",
        /// From the given lane.
        Idx = "idx",
    }
}

condcodes! {
    /// What a `vote` computes over the predicates of its mask's threads.
    VoteMode {
        /// Some predicate is true (`i1`).
        Any = "any",
        /// All predicates are true (`i1`).
        All = "all",
        /// All predicates are equal (`i1`).
        Uni = "uni",
        /// The predicates as a bit set by lane (`i32`).
        Ballot = "ballot",
    }
}

condcodes! {
    /// The memory order of an atomic or a fence (LLVM's orderings; `relaxed` is LLVM's
    /// `monotonic`, the default).
    #[derive(Default)]
    MemOrder {
        /// No ordering beyond atomicity.
        #[default]
        Relaxed = "relaxed",
        /// Later accesses stay after it.
        Acquire = "acquire",
        /// Earlier accesses stay before it.
        Release = "release",
        /// Both acquire and release.
        AcqRel = "acq_rel",
        /// Acquire-release and part of one total order of sequentially consistent operations.
        SeqCst = "seq_cst",
    }
}

condcodes! {
    /// The set of threads an atomic or a fence synchronises with (PTX scopes).
    #[derive(Default)]
    MemScope {
        /// The threads of the CTA.
        Cta = "cta",
        /// The threads of the GPU (the default).
        #[default]
        Gpu = "gpu",
        /// The threads of the system, host included.
        Sys = "sys",
    }
}

impl MemOrder {
    /// Does this order include acquire semantics?
    pub fn acquires(self) -> bool {
        matches!(
            self,
            MemOrder::Acquire | MemOrder::AcqRel | MemOrder::SeqCst
        )
    }
    /// Does this order include release semantics?
    pub fn releases(self) -> bool {
        matches!(
            self,
            MemOrder::Release | MemOrder::AcqRel | MemOrder::SeqCst
        )
    }
}

condcodes! {
    /// Special registers readable with `sreg`, printed by name (`v1 = tid.x`). All are i32.
    SpecialReg {
        /// Thread index within the CTA, x.
        TidX = "tid.x",
        /// Thread index, y.
        TidY = "tid.y",
        /// Thread index, z.
        TidZ = "tid.z",
        /// CTA size, x.
        NtidX = "ntid.x",
        /// CTA size, y.
        NtidY = "ntid.y",
        /// CTA size, z.
        NtidZ = "ntid.z",
        /// CTA index within the grid, x.
        CtaidX = "ctaid.x",
        /// CTA index, y.
        CtaidY = "ctaid.y",
        /// CTA index, z.
        CtaidZ = "ctaid.z",
        /// Grid size in CTAs, x.
        NctaidX = "nctaid.x",
        /// Grid size, y.
        NctaidY = "nctaid.y",
        /// Grid size, z.
        NctaidZ = "nctaid.z",
        /// Lane within the warp.
        LaneId = "laneid",
        /// Threads per warp (32).
        WarpSize = "warpsize",
    }
}

/// A branch target with the arguments passed to the target's block parameters.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub struct BlockCall {
    /// The target block.
    pub block: Block,
    /// One argument per block parameter of `block`.
    pub args: ValueList,
}

impl BlockCall {
    /// A branch target with arguments taken from a slice.
    pub fn new(block: Block, args: &[Value], pool: &mut ValueListPool) -> BlockCall {
        BlockCall {
            block,
            args: ValueList::from_slice(args, pool),
        }
    }
}

/// The cases of a `br_table` terminator.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub struct JumpTableData {
    /// Taken when no case matches.
    pub default: BlockCall,
    /// `(value, target)` pairs; values are distinct, stored sign-extended to 64 bits.
    pub cases: Vec<(i64, BlockCall)>,
}

/// The operands of an instruction, by format. The opcode says which operation.
///
/// The derived `PartialEq` and `Hash` compare value-list handles and jump-table ids, not
/// their contents: use [`InstructionData::eq_in`] / [`InstructionData::hash_in`] (or
/// [`InstKey`](crate::dfg::InstKey)) to compare instructions by what they compute.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
#[allow(missing_docs)]
pub enum InstructionData {
    /// `iconst`: the constant as sign-extended bits.
    IntConst { imm: i64 },
    /// `fconst`: IEEE bits (an f32 in the low 32 bits).
    FloatConst { bits: u64 },
    /// One operand: float and integer unary operations, casts, `freeze`.
    Unary { opcode: Opcode, arg: Value },
    /// Two operands, with integer flags where the opcode allows them.
    Binary {
        opcode: Opcode,
        args: [Value; 2],
        flags: IntFlags,
    },
    /// Three operands: `fma`, `select`.
    Ternary { opcode: Opcode, args: [Value; 3] },
    /// `icmp cond a, b`.
    IntCompare { cond: IntCC, args: [Value; 2] },
    /// `fcmp cond a, b`.
    FloatCompare { cond: FloatCC, args: [Value; 2] },
    /// `ptradd base, index, scale`.
    PtrAdd { args: [Value; 2], scale: u32 },
    /// `load.T ptr`.
    Load { ptr: Value, flags: MemFlags },
    /// `store value, ptr`.
    Store { args: [Value; 2], flags: MemFlags },
    /// `atomic_<op> [order] [scope] ptr, value`.
    AtomicRmw {
        op: AtomicOp,
        args: [Value; 2],
        order: MemOrder,
        scope: MemScope,
    },
    /// `atomic_cas [order] [scope] ptr, expected, new`.
    AtomicCas {
        args: [Value; 3],
        order: MemOrder,
        scope: MemScope,
    },
    /// `shfl_<mode> value, lane, clamp, mask`.
    Shfl { mode: ShflMode, args: [Value; 4] },
    /// `vote_<mode> pred, mask`.
    Vote { mode: VoteMode, args: [Value; 2] },
    /// `warp_sync mask`.
    WarpSync { mask: Value },
    /// `fence <order> <scope>`.
    Fence { order: MemOrder, scope: MemScope },
    /// `global_addr @g`.
    GlobalAddr { global: GlobalId },
    /// `slot_addr slotN`.
    SlotAddr { slot: Slot },
    /// Special register read.
    Sreg { reg: SpecialReg },
    /// `barrier`, `unreachable`, `clock.T`: no operands.
    Nullary { opcode: Opcode },
    /// `vprintf fmt, args`.
    Vprintf { args: [Value; 2] },
    /// `assert_fail msg, file, line, func`.
    AssertFail { args: [Value; 4] },
    /// `call @f(args)`.
    Call { func: FuncId, args: ValueList },
    /// `jump block(args)`.
    Jump { dest: BlockCall },
    /// `brif c, then(args), else(args)`.
    Brif { arg: Value, blocks: [BlockCall; 2] },
    /// `br_table v, default(args), [k: block(args), ...]`.
    BrTable { arg: Value, table: JumpTable },
    /// `return` or `return v`.
    Return { args: ValueList },
}

impl InstructionData {
    /// The operands whose type the result has by rule (`iadd` both, `select` its two
    /// choices, `ptradd` its base, an atomic its value, ...): the text format leaves the
    /// result type of these instructions out and infers it from any of them. Empty for
    /// instructions whose result type is fixed or written (constants, casts, loads,
    /// compares) and for those without a result.
    pub fn type_operands(&self) -> &[Value] {
        use InstructionData as D;
        match self {
            D::Unary { opcode, arg } if !opcode.is_cast() => std::slice::from_ref(arg),
            D::Binary { args, .. } => args,
            D::Ternary {
                opcode: Opcode::Select,
                args,
            } => &args[1..],
            D::Ternary { args, .. } => args,
            D::PtrAdd { args, .. } => &args[..1],
            D::AtomicRmw { args, .. } => &args[1..],
            D::AtomicCas { args, .. } => &args[1..],
            D::Shfl { args, .. } => &args[..1],
            _ => &[],
        }
    }
}

impl InstructionData {
    /// The opcode of the instruction.
    #[inline]
    pub fn opcode(&self) -> Opcode {
        match *self {
            InstructionData::IntConst { .. } => Opcode::Iconst,
            InstructionData::FloatConst { .. } => Opcode::Fconst,
            InstructionData::Unary { opcode, .. }
            | InstructionData::Binary { opcode, .. }
            | InstructionData::Ternary { opcode, .. }
            | InstructionData::Nullary { opcode } => opcode,
            InstructionData::IntCompare { .. } => Opcode::Icmp,
            InstructionData::FloatCompare { .. } => Opcode::Fcmp,
            InstructionData::PtrAdd { .. } => Opcode::PtrAdd,
            InstructionData::Load { .. } => Opcode::Load,
            InstructionData::Store { .. } => Opcode::Store,
            InstructionData::AtomicRmw { .. } => Opcode::AtomicRmw,
            InstructionData::AtomicCas { .. } => Opcode::AtomicCas,
            InstructionData::Shfl { .. } => Opcode::Shfl,
            InstructionData::Vote { .. } => Opcode::Vote,
            InstructionData::WarpSync { .. } => Opcode::WarpSync,
            InstructionData::Fence { .. } => Opcode::Fence,
            InstructionData::GlobalAddr { .. } => Opcode::GlobalAddr,
            InstructionData::SlotAddr { .. } => Opcode::SlotAddr,
            InstructionData::Sreg { .. } => Opcode::Sreg,
            InstructionData::Vprintf { .. } => Opcode::Vprintf,
            InstructionData::AssertFail { .. } => Opcode::AssertFail,
            InstructionData::Call { .. } => Opcode::Call,
            InstructionData::Jump { .. } => Opcode::Jump,
            InstructionData::Brif { .. } => Opcode::Brif,
            InstructionData::BrTable { .. } => Opcode::BrTable,
            InstructionData::Return { .. } => Opcode::Return,
        }
    }

    /// The value operands, not counting branch arguments (see
    /// [`DataFlowGraph::for_each_inst_value`](crate::DataFlowGraph::for_each_inst_value) for all uses).
    pub fn arguments<'a>(&'a self, pool: &'a ValueListPool) -> &'a [Value] {
        match self {
            InstructionData::IntConst { .. }
            | InstructionData::FloatConst { .. }
            | InstructionData::GlobalAddr { .. }
            | InstructionData::SlotAddr { .. }
            | InstructionData::Sreg { .. }
            | InstructionData::Nullary { .. }
            | InstructionData::Fence { .. }
            | InstructionData::Jump { .. } => &[],
            InstructionData::Unary { arg, .. }
            | InstructionData::Brif { arg, .. }
            | InstructionData::BrTable { arg, .. } => core::slice::from_ref(arg),
            InstructionData::Load { ptr, .. } => core::slice::from_ref(ptr),
            InstructionData::WarpSync { mask } => core::slice::from_ref(mask),
            InstructionData::Shfl { args, .. } => args,
            InstructionData::Binary { args, .. }
            | InstructionData::IntCompare { args, .. }
            | InstructionData::FloatCompare { args, .. }
            | InstructionData::PtrAdd { args, .. }
            | InstructionData::Store { args, .. }
            | InstructionData::Vote { args, .. }
            | InstructionData::Vprintf { args }
            | InstructionData::AtomicRmw { args, .. } => args,
            InstructionData::AssertFail { args } => args,
            InstructionData::Ternary { args, .. } | InstructionData::AtomicCas { args, .. } => args,
            InstructionData::Call { args, .. } | InstructionData::Return { args } => {
                args.as_slice(pool)
            }
        }
    }

    /// Mutable access to the value operands (not branch arguments).
    pub fn arguments_mut<'a>(&'a mut self, pool: &'a mut ValueListPool) -> &'a mut [Value] {
        match self {
            InstructionData::IntConst { .. }
            | InstructionData::FloatConst { .. }
            | InstructionData::GlobalAddr { .. }
            | InstructionData::SlotAddr { .. }
            | InstructionData::Sreg { .. }
            | InstructionData::Nullary { .. }
            | InstructionData::Fence { .. }
            | InstructionData::Jump { .. } => &mut [],
            InstructionData::Unary { arg, .. }
            | InstructionData::Brif { arg, .. }
            | InstructionData::BrTable { arg, .. } => core::slice::from_mut(arg),
            InstructionData::Load { ptr, .. } => core::slice::from_mut(ptr),
            InstructionData::WarpSync { mask } => core::slice::from_mut(mask),
            InstructionData::Shfl { args, .. } => args,
            InstructionData::Binary { args, .. }
            | InstructionData::IntCompare { args, .. }
            | InstructionData::FloatCompare { args, .. }
            | InstructionData::PtrAdd { args, .. }
            | InstructionData::Store { args, .. }
            | InstructionData::Vote { args, .. }
            | InstructionData::Vprintf { args }
            | InstructionData::AtomicRmw { args, .. } => args,
            InstructionData::AssertFail { args } => args,
            InstructionData::Ternary { args, .. } | InstructionData::AtomicCas { args, .. } => args,
            InstructionData::Call { args, .. } | InstructionData::Return { args } => {
                args.as_mut_slice(pool)
            }
        }
    }
}

/// Pool-aware comparison and hashing.
///
/// The derived `PartialEq`/`Hash` of [`InstructionData`] compare [`ValueList`] handles
/// (offsets into the function's pool) and [`JumpTable`] ids, so two `call`s with the same
/// arguments in different lists differ, and a list reused after being freed can make
/// unrelated instructions equal. GVN, an e-graph or any hash-consing must use these
/// instead: call and return arguments, branch targets with their arguments, and
/// `br_table` cases compare **by contents**, read through the
/// [`DataFlowGraph`](crate::DataFlowGraph) they belong to.
///
/// What is compared is the data alone: the result type is not part of it (`iconst.i32 0`
/// and `iconst.i64 0` have equal data), so a value-numbering key must add the type, as
/// [`InstKey`](crate::dfg::InstKey) does. Jump-table cases compare in stored order (two
/// tables with the same cases in another order are unequal: conservative, never wrong).
impl InstructionData {
    /// Are `self` and `other`, both of `dfg`, the same operation on the same operands
    /// (value lists and jump tables compared by contents)?
    pub fn eq_in(&self, other: &InstructionData, dfg: &crate::DataFlowGraph) -> bool {
        use InstructionData as D;
        let pool = &dfg.value_lists;
        let lists = |a: &ValueList, b: &ValueList| a.as_slice(pool) == b.as_slice(pool);
        let calls = |a: &BlockCall, b: &BlockCall| a.block == b.block && lists(&a.args, &b.args);
        match (self, other) {
            (D::Call { func: f, args: a }, D::Call { func: g, args: b }) => f == g && lists(a, b),
            (D::Return { args: a }, D::Return { args: b }) => lists(a, b),
            (D::Jump { dest: a }, D::Jump { dest: b }) => calls(a, b),
            (D::Brif { arg: c, blocks: a }, D::Brif { arg: d, blocks: b }) => {
                c == d && calls(&a[0], &b[0]) && calls(&a[1], &b[1])
            }
            (D::BrTable { arg: c, table: s }, D::BrTable { arg: d, table: t }) => {
                let (s, t) = (dfg.jump_table(*s), dfg.jump_table(*t));
                c == d
                    && calls(&s.default, &t.default)
                    && s.cases.len() == t.cases.len()
                    && s.cases
                        .iter()
                        .zip(&t.cases)
                        .all(|((k, a), (l, b))| k == l && calls(a, b))
            }
            // Every other format holds only plain data, for which the derived
            // equality is the right one.
            (a, b) if !a.has_pool_data() && !b.has_pool_data() => a == b,
            _ => false,
        }
    }

    /// Feed `self` (of `dfg`) to `state`, consistently with [`InstructionData::eq_in`]:
    /// data equal by `eq_in` hash equally.
    pub fn hash_in<H: Hasher>(&self, state: &mut H, dfg: &crate::DataFlowGraph) {
        use InstructionData as D;
        let pool = &dfg.value_lists;
        let call = |bc: &BlockCall, state: &mut H| {
            bc.block.hash(state);
            bc.args.as_slice(pool).hash(state);
        };
        if !self.has_pool_data() {
            return self.hash(state);
        }
        core::mem::discriminant(self).hash(state);
        match self {
            D::Call { func, args } => {
                func.hash(state);
                args.as_slice(pool).hash(state);
            }
            D::Return { args } => args.as_slice(pool).hash(state),
            D::Jump { dest } => call(dest, state),
            D::Brif { arg, blocks } => {
                arg.hash(state);
                call(&blocks[0], state);
                call(&blocks[1], state);
            }
            D::BrTable { arg, table } => {
                arg.hash(state);
                let jt = dfg.jump_table(*table);
                call(&jt.default, state);
                jt.cases.len().hash(state);
                for (k, bc) in &jt.cases {
                    k.hash(state);
                    call(bc, state);
                }
            }
            _ => unreachable!("formats without pool data are hashed above"),
        }
    }

    /// Does this format refer to data outside itself (a value list or a jump table), so
    /// that the derived `==` and `Hash` compare handles rather than contents?
    pub fn has_pool_data(&self) -> bool {
        matches!(
            self,
            InstructionData::Call { .. }
                | InstructionData::Return { .. }
                | InstructionData::Jump { .. }
                | InstructionData::Brif { .. }
                | InstructionData::BrTable { .. }
        )
    }
}
