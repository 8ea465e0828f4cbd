//! Decoded, compact instruction form executed by the interpreter.

use rustc_hash::FxHashMap;

pub(crate) use crate::error::Space;

/// Register index meaning "no register".
pub(crate) const NO_REG: u32 = u32::MAX;

/// PTX fundamental type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Ty {
    B8,
    B16,
    B32,
    B64,
    U8,
    U16,
    U32,
    U64,
    S8,
    S16,
    S32,
    S64,
    F16,
    F32,
    F64,
    Pred,
}

impl Ty {
    pub(crate) fn parse(s: &str) -> Option<Ty> {
        Some(match s {
            "b8" => Ty::B8,
            "b16" => Ty::B16,
            "b32" => Ty::B32,
            "b64" => Ty::B64,
            "u8" => Ty::U8,
            "u16" => Ty::U16,
            "u32" => Ty::U32,
            "u64" => Ty::U64,
            "s8" => Ty::S8,
            "s16" => Ty::S16,
            "s32" => Ty::S32,
            "s64" => Ty::S64,
            "f16" => Ty::F16,
            "f32" => Ty::F32,
            "f64" => Ty::F64,
            "pred" => Ty::Pred,
            _ => return None,
        })
    }

    pub(crate) fn bits(self) -> u32 {
        match self {
            Ty::B8 | Ty::U8 | Ty::S8 => 8,
            Ty::B16 | Ty::U16 | Ty::S16 | Ty::F16 => 16,
            Ty::B32 | Ty::U32 | Ty::S32 | Ty::F32 => 32,
            Ty::B64 | Ty::U64 | Ty::S64 | Ty::F64 => 64,
            Ty::Pred => 1,
        }
    }

    /// Size in memory (predicates occupy one byte).
    pub(crate) fn bytes(self) -> u32 {
        match self {
            Ty::Pred => 1,
            t => t.bits() / 8,
        }
    }

    pub(crate) fn is_signed(self) -> bool {
        matches!(self, Ty::S8 | Ty::S16 | Ty::S32 | Ty::S64)
    }

    pub(crate) fn is_float(self) -> bool {
        matches!(self, Ty::F16 | Ty::F32 | Ty::F64)
    }

    /// Integer type of twice the width with the same signedness.
    pub(crate) fn widen(self) -> Option<Ty> {
        Some(match self {
            Ty::U8 => Ty::U16,
            Ty::U16 => Ty::U32,
            Ty::U32 => Ty::U64,
            Ty::S8 => Ty::S16,
            Ty::S16 => Ty::S32,
            Ty::S32 => Ty::S64,
            Ty::B8 => Ty::B16,
            Ty::B16 => Ty::B32,
            Ty::B32 => Ty::B64,
            _ => return None,
        })
    }

    /// Canonical 64-bit register image of `v` interpreted as this type:
    /// signed integers are sign-extended, everything else zero-extended.
    #[inline(always)]
    pub(crate) fn canon(self, v: u64) -> u64 {
        match self {
            Ty::B8 | Ty::U8 => v & 0xff,
            Ty::S8 => v as u8 as i8 as i64 as u64,
            Ty::B16 | Ty::U16 | Ty::F16 => v & 0xffff,
            Ty::S16 => v as u16 as i16 as i64 as u64,
            Ty::B32 | Ty::U32 | Ty::F32 => v & 0xffff_ffff,
            Ty::S32 => v as u32 as i32 as i64 as u64,
            Ty::B64 | Ty::U64 | Ty::S64 | Ty::F64 => v,
            Ty::Pred => (v != 0) as u64,
        }
    }
}

/// Special (read-only) registers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum SReg {
    Tid(u8),
    Ntid(u8),
    Ctaid(u8),
    Nctaid(u8),
    LaneId,
    WarpId,
    NWarpId,
    SmId,
    NSmId,
    GridId,
    Clock,
    Clock64,
    /// `%lanemask_{eq,lt,le,gt,ge}` as 0..=4.
    LaneMask(u8),
}

/// A resolved variable reference (its address in its own state space).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Sym {
    /// Module `.global` variable index (address assigned at launch).
    Global(u32),
    /// Offset in the CTA's static shared memory.
    Shared(u64),
    /// Offset within dynamic (`.extern .shared`) shared memory.
    DynShared(u64),
    /// Offset in the current frame's local area.
    Local(u64),
    /// Offset in the current frame's param area.
    Param(u64),
    /// Offset in the module's constant bank.
    Const(u64),
}

/// Instruction source operand.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Src {
    Reg(u32),
    Imm(u64),
    Special(SReg),
    Sym(Sym),
}

/// Base of an address operand.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Base {
    Reg(u32),
    Sym(Sym),
    Abs,
}

/// `[base+off]` address operand.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Addr {
    pub base: Base,
    pub off: i64,
}

/// Float rounding modifier.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Rnd {
    N,
    Z,
    M,
    P,
}

/// Rounding modifier of `cvt`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum CvtRnd {
    None,
    F(Rnd),
    I(Rnd),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum IBinOp {
    Add,
    Sub,
    AddSat,
    SubSat,
    MulLo,
    MulHi,
    MulWide,
    /// `mul24.lo`: low 32 bits of the 48-bit product of the operands' low 24 bits.
    Mul24Lo,
    /// `mul24.hi`: bits 16..48 of that product.
    Mul24Hi,
    Div,
    Rem,
    Min,
    Max,
    And,
    Or,
    Xor,
    Shl,
    Shr,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum FBinOp {
    Add,
    Sub,
    Mul,
    Div,
    Min,
    Max,
    MinNan,
    MaxNan,
    Copysign,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum IUnOp {
    Abs,
    Neg,
    Not,
    Cnot,
    Popc,
    Clz,
    Brev,
    Bfind,
    BfindShift,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum FUnOp {
    Abs,
    Neg,
    Sqrt,
    Rcp,
    Rsqrt,
    Sin,
    Cos,
    Ex2,
    Lg2,
    Tanh,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum MadMode {
    Lo,
    Hi,
    Wide,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Cmp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    Lo,
    Ls,
    Hi,
    Hs,
    Equ,
    Neu,
    Ltu,
    Leu,
    Gtu,
    Geu,
    Num,
    Nan,
}

impl Cmp {
    pub(crate) fn parse(s: &str) -> Option<Cmp> {
        Some(match s {
            "eq" => Cmp::Eq,
            "ne" => Cmp::Ne,
            "lt" => Cmp::Lt,
            "le" => Cmp::Le,
            "gt" => Cmp::Gt,
            "ge" => Cmp::Ge,
            "lo" => Cmp::Lo,
            "ls" => Cmp::Ls,
            "hi" => Cmp::Hi,
            "hs" => Cmp::Hs,
            "equ" => Cmp::Equ,
            "neu" => Cmp::Neu,
            "ltu" => Cmp::Ltu,
            "leu" => Cmp::Leu,
            "gtu" => Cmp::Gtu,
            "geu" => Cmp::Geu,
            "num" => Cmp::Num,
            "nan" => Cmp::Nan,
            _ => return None,
        })
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum BoolOp {
    And,
    Or,
    Xor,
}

/// Optional `.and/.or/.xor` combination with a (possibly negated) predicate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Combine {
    pub op: BoolOp,
    pub pred: u32,
    pub neg: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum TestpKind {
    Finite,
    Infinite,
    Number,
    NotANumber,
    Normal,
    Subnormal,
}

/// `shfl.sync` mode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ShflMode {
    Up,
    Down,
    Bfly,
    Idx,
}

/// `vote.sync` mode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum VoteMode {
    Any,
    All,
    Uni,
    Ballot,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum AtomOp {
    Add,
    Min,
    Max,
    Exch,
    Cas,
    And,
    Or,
    Xor,
    Inc,
    Dec,
}

/// Call argument source.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ArgSrc {
    /// Bytes of a `.param` variable of the caller frame.
    Param { off: u64, size: u64 },
    /// A register or immediate, stored with the formal's size.
    Val(Src),
}

/// Call return destination.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum RetDst {
    Param { off: u64, size: u64 },
    Reg(u32),
}

/// Decoded operation.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Op {
    Mov {
        ty: Ty,
        d: u32,
        a: Src,
    },
    /// `mov.bN d, {a, b, ...}`: pack `parts` (each `elem_bits` wide, first = lowest).
    Pack {
        elem_bits: u32,
        d: u32,
        parts: Box<[Src]>,
    },
    /// `mov.bN {d0, d1, ...}, a`: unpack.
    Unpack {
        elem_bits: u32,
        ds: Box<[u32]>,
        a: Src,
    },
    IBin {
        op: IBinOp,
        ty: Ty,
        d: u32,
        a: Src,
        b: Src,
    },
    FBin {
        op: FBinOp,
        ty: Ty,
        rnd: Rnd,
        d: u32,
        a: Src,
        b: Src,
    },
    IUn {
        op: IUnOp,
        ty: Ty,
        d: u32,
        a: Src,
    },
    FUn {
        op: FUnOp,
        ty: Ty,
        rnd: Rnd,
        d: u32,
        a: Src,
    },
    IMad {
        mode: MadMode,
        ty: Ty,
        d: u32,
        a: Src,
        b: Src,
        c: Src,
    },
    Fma {
        ty: Ty,
        rnd: Rnd,
        d: u32,
        a: Src,
        b: Src,
        c: Src,
    },
    Bfe {
        ty: Ty,
        d: u32,
        a: Src,
        b: Src,
        c: Src,
    },
    Bfi {
        ty: Ty,
        d: u32,
        f: Src,
        b: Src,
        pos: Src,
        len: Src,
    },
    /// `shf.{l,r}.{wrap,clamp}.b32 d, a, b, c`: the 64-bit value `b:a` shifted by `c`
    /// (modulo 32 when `wrap`, at most 32 when not), its high (left) or low (right) word.
    Shf {
        left: bool,
        wrap: bool,
        d: u32,
        a: Src,
        b: Src,
        c: Src,
    },
    Prmt {
        d: u32,
        a: Src,
        b: Src,
        c: Src,
    },
    Setp {
        cmp: Cmp,
        ty: Ty,
        p: u32,
        q: u32,
        a: Src,
        b: Src,
        comb: Option<Combine>,
    },
    Set {
        cmp: Cmp,
        dty: Ty,
        sty: Ty,
        d: u32,
        a: Src,
        b: Src,
        comb: Option<Combine>,
    },
    Selp {
        ty: Ty,
        d: u32,
        a: Src,
        b: Src,
        c: Src,
    },
    Testp {
        kind: TestpKind,
        ty: Ty,
        p: u32,
        a: Src,
    },
    Cvt {
        dty: Ty,
        sty: Ty,
        rnd: CvtRnd,
        sat: bool,
        d: u32,
        a: Src,
    },
    Ld {
        space: Space,
        ty: Ty,
        ds: [u32; 4],
        n: u8,
        addr: Addr,
    },
    St {
        space: Space,
        ty: Ty,
        srcs: [Src; 4],
        n: u8,
        addr: Addr,
    },
    Cvta {
        to_generic: bool,
        space: Space,
        ty: Ty,
        d: u32,
        a: Src,
    },
    Atom {
        space: Space,
        op: AtomOp,
        ty: Ty,
        d: u32,
        addr: Addr,
        b: Src,
        c: Src,
    },
    Bar,
    /// `shfl.sync.mode.b32 d, a, b, c, membermask`.
    Shfl {
        mode: ShflMode,
        d: u32,
        a: Src,
        b: Src,
        c: Src,
        mask: Src,
    },
    /// `vote.sync.mode.{pred,b32} d, {!}p, membermask`.
    Vote {
        mode: VoteMode,
        d: u32,
        p: u32,
        neg: bool,
        mask: Src,
    },
    /// `bar.warp.sync membermask`.
    WarpSync {
        mask: Src,
    },
    Bra {
        target: u32,
    },
    Call {
        callee: u32,
        args: Box<[ArgSrc]>,
        ret: Option<RetDst>,
    },
    Ret,
    Exit,
    Trap,
    Nop,
}

/// A decoded instruction with its guard.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Inst {
    pub op: Op,
    /// Guard predicate register, or [`NO_REG`].
    pub guard: u32,
    /// Execute when the guard is false (`@!%p`).
    pub guard_neg: bool,
}

/// A formal `.param` of a function.
#[derive(Clone, Debug)]
pub(crate) struct ParamDecl {
    pub name: String,
    pub offset: u64,
    pub size: u64,
}

/// A decoded function.
#[derive(Clone, Debug)]
pub(crate) struct Function {
    pub name: String,
    pub is_entry: bool,
    pub has_body: bool,
    pub nregs: usize,
    pub params: Vec<ParamDecl>,
    pub ret: Option<ParamDecl>,
    /// Bytes of param space needed by the frame (formals + call scopes).
    pub param_size: u64,
    /// Bytes of local space needed by the frame.
    pub local_size: u64,
    pub insts: Vec<Inst>,
    pub lines: Vec<u32>,
}

/// A module-scope `.global` variable.
#[derive(Clone, Debug)]
pub(crate) struct GlobalVar {
    pub name: String,
    pub size: u64,
    pub align: u64,
    pub init: Vec<u8>,
}

/// Parsed module (opaque to users; see [`crate::Module`]).
#[derive(Clone, Debug, Default)]
pub(crate) struct ModuleData {
    pub version: String,
    pub target: String,
    pub funcs: Vec<Function>,
    pub func_index: FxHashMap<String, u32>,
    pub globals: Vec<GlobalVar>,
    pub consts: Vec<u8>,
    /// Module-scope `.const` variables: name -> (offset in `consts`, size).
    pub const_vars: FxHashMap<String, (u64, u64)>,
    pub shared_size: u64,
    /// Offset of dynamic shared memory (after static shared variables).
    pub dyn_shared_base: u64,
}
