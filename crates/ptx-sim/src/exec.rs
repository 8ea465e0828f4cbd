//! The interpreter.

use crate::error::{AssertFailure, ErrorLocation, SimError, SimErrorKind, Space};
use crate::fp;
use crate::ir::*;
use crate::memory::{Memory, Printed, CONST_WINDOW, LOCAL_WINDOW, SHARED_WINDOW, WINDOW_SIZE};
use crate::syscall;
use crate::Module;

/// Grid and block dimensions of a kernel launch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Launch {
    /// Number of CTAs in x, y, z (`%nctaid`).
    pub grid: [u32; 3],
    /// Number of threads per CTA in x, y, z (`%ntid`).
    pub block: [u32; 3],
}

impl Launch {
    /// A one-dimensional launch of `grid` CTAs of `block` threads.
    pub fn linear(grid: u32, block: u32) -> Self {
        Launch {
            grid: [grid, 1, 1],
            block: [block, 1, 1],
        }
    }
}

/// A kernel argument, given in parameter declaration order.
///
/// The value's byte size must equal the declared `.param` size.
#[derive(Clone, Debug, PartialEq)]
pub enum ParamValue {
    /// 1-byte value.
    U8(u8),
    /// 2-byte value.
    U16(u16),
    /// 4-byte unsigned value.
    U32(u32),
    /// 8-byte unsigned value (also used for pointers).
    U64(u64),
    /// 1-byte signed value.
    I8(i8),
    /// 2-byte signed value.
    I16(i16),
    /// 4-byte signed value.
    I32(i32),
    /// 8-byte signed value.
    I64(i64),
    /// 4-byte float.
    F32(f32),
    /// 8-byte float.
    F64(f64),
    /// Raw bytes (e.g. a by-value struct `.param .align 8 .b8 p[16]`).
    Bytes(Vec<u8>),
}

impl ParamValue {
    /// Little-endian byte image of the value.
    pub fn to_bytes(&self) -> Vec<u8> {
        match self {
            ParamValue::U8(v) => v.to_le_bytes().to_vec(),
            ParamValue::U16(v) => v.to_le_bytes().to_vec(),
            ParamValue::U32(v) => v.to_le_bytes().to_vec(),
            ParamValue::U64(v) => v.to_le_bytes().to_vec(),
            ParamValue::I8(v) => v.to_le_bytes().to_vec(),
            ParamValue::I16(v) => v.to_le_bytes().to_vec(),
            ParamValue::I32(v) => v.to_le_bytes().to_vec(),
            ParamValue::I64(v) => v.to_le_bytes().to_vec(),
            ParamValue::F32(v) => v.to_le_bytes().to_vec(),
            ParamValue::F64(v) => v.to_le_bytes().to_vec(),
            ParamValue::Bytes(b) => b.clone(),
        }
    }
}

/// Tunables of [`crate::run_kernel_with_options`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunOptions {
    /// Maximum number of instructions executed by the whole launch
    /// (all threads together) before [`SimErrorKind::StepLimitExceeded`].
    pub step_limit: u64,
    /// Bytes of dynamic shared memory (`.extern .shared` arrays).
    pub dynamic_shared_bytes: u32,
    /// Maximum call depth (frames) per thread.
    pub max_call_depth: usize,
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            step_limit: 100_000_000,
            dynamic_shared_bytes: 0,
            max_call_depth: 1024,
        }
    }
}

/// Statistics of a completed launch.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RunStats {
    /// Instructions executed (including guarded-off ones).
    pub instructions: u64,
    /// CTAs executed.
    pub ctas: u64,
    /// Threads executed.
    pub threads: u64,
    /// Number of CTA-wide barrier releases.
    pub barriers: u64,
}

#[derive(Clone, Copy, Debug)]
struct Frame {
    func: u32,
    pc: u32,
    reg_base: usize,
    param_base: usize,
    local_base: usize,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum TState {
    Run,
    Bar,
    /// Stopped before a warp collective; its operands are in `Thread::warp`.
    Warp,
    Done,
}

/// What a warp collective computes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum WarpKind {
    Shfl(ShflMode),
    Vote(VoteMode),
    Sync,
}

/// A warp collective's operands, read when the thread reached it: `vals` = `[a, b, c]`
/// of `shfl`, `[pred]` of `vote`.
#[derive(Clone, Copy, Debug)]
struct WarpArgs {
    kind: WarpKind,
    d: u32,
    vals: [u64; 3],
    mask: u32,
}

struct Thread {
    regs: Vec<u64>,
    params: Vec<u8>,
    local: Vec<u8>,
    frames: Vec<Frame>,
    tid: [u32; 3],
    linear: u32,
    state: TState,
    warp: WarpArgs,
}

/// Per-frame read-only context for operand evaluation.
struct Cx<'a> {
    tid: [u32; 3],
    ntid: [u32; 3],
    ctaid: [u32; 3],
    nctaid: [u32; 3],
    linear: u32,
    nthreads: u32,
    local_base: u64,
    dyn_base: u64,
    clock: u64,
    gaddrs: &'a [u64],
}

impl Cx<'_> {
    #[inline]
    fn special(&self, k: SReg) -> u64 {
        let lane = (self.linear % 32) as u64;
        match k {
            SReg::Tid(d) => self.tid[d as usize] as u64,
            SReg::Ntid(d) => self.ntid[d as usize] as u64,
            SReg::Ctaid(d) => self.ctaid[d as usize] as u64,
            SReg::Nctaid(d) => self.nctaid[d as usize] as u64,
            SReg::LaneId => lane,
            SReg::WarpId => (self.linear / 32) as u64,
            SReg::NWarpId => self.nthreads.div_ceil(32) as u64,
            SReg::SmId | SReg::GridId => 0,
            SReg::NSmId => 1,
            SReg::Clock => self.clock & 0xffff_ffff,
            SReg::Clock64 => self.clock,
            SReg::LaneMask(m) => {
                let lt = (1u64 << lane) - 1;
                let le = (1u64 << (lane + 1)) - 1;
                let v = match m {
                    0 => 1u64 << lane,
                    1 => lt,
                    2 => le,
                    3 => !le,
                    _ => !lt,
                };
                v & 0xffff_ffff
            }
        }
    }

    /// Address of a symbol in its own state space.
    #[inline]
    fn sym_addr(&self, s: Sym) -> u64 {
        match s {
            Sym::Global(i) => self.gaddrs.get(i as usize).copied().unwrap_or(0),
            Sym::Shared(o) | Sym::Param(o) | Sym::Const(o) => o,
            Sym::DynShared(o) => self.dyn_base + o,
            Sym::Local(o) => self.local_base + o,
        }
    }

    #[inline]
    fn sym_generic(&self, s: Sym) -> u64 {
        let a = self.sym_addr(s);
        match s {
            Sym::Global(_) | Sym::Param(_) => a,
            Sym::Shared(_) | Sym::DynShared(_) => SHARED_WINDOW + a,
            Sym::Local(_) => LOCAL_WINDOW + a,
            Sym::Const(_) => CONST_WINDOW + a,
        }
    }
}

#[inline(always)]
fn rs(r: &[u64], cx: &Cx, s: Src) -> u64 {
    match s {
        Src::Reg(i) => r[i as usize],
        Src::Imm(v) => v,
        Src::Special(k) => cx.special(k),
        Src::Sym(sy) => cx.sym_addr(sy),
    }
}

#[inline(always)]
fn ea(r: &[u64], cx: &Cx, a: &Addr, space: Space) -> u64 {
    let base = match a.base {
        Base::Reg(i) => r[i as usize],
        Base::Abs => 0,
        Base::Sym(s) => {
            if space == Space::Generic {
                cx.sym_generic(s)
            } else {
                cx.sym_addr(s)
            }
        }
    };
    base.wrapping_add(a.off as u64)
}

struct MemView<'a> {
    global: &'a mut Memory,
    shared: &'a mut [u8],
    consts: &'a [u8],
    local: &'a mut [u8],
    params: &'a mut [u8],
}

#[inline]
fn sub_slice(buf: &mut [u8], addr: u64, len: usize) -> Option<&mut [u8]> {
    let a = usize::try_from(addr).ok()?;
    let end = a.checked_add(len)?;
    buf.get_mut(a..end)
}

#[inline]
fn resolve(space: Space, addr: u64) -> (Space, u64) {
    if space != Space::Generic {
        return (space, addr);
    }
    if (SHARED_WINDOW..SHARED_WINDOW + WINDOW_SIZE).contains(&addr) {
        (Space::Shared, addr - SHARED_WINDOW)
    } else if (LOCAL_WINDOW..LOCAL_WINDOW + WINDOW_SIZE).contains(&addr) {
        (Space::Local, addr - LOCAL_WINDOW)
    } else if (CONST_WINDOW..CONST_WINDOW + WINDOW_SIZE).contains(&addr) {
        (Space::Const, addr - CONST_WINDOW)
    } else {
        (Space::Global, addr)
    }
}

impl MemView<'_> {
    /// Bytes for an access of `len` bytes (alignment `align`) at `addr` in `space`.
    #[inline]
    fn bytes(
        &mut self,
        space: Space,
        addr: u64,
        len: usize,
        write: bool,
    ) -> Result<&mut [u8], SimErrorKind> {
        let (sp, a) = resolve(space, addr);
        if !addr.is_multiple_of(len as u64) {
            return Err(SimErrorKind::Misaligned {
                space: sp,
                addr,
                size: len as u32,
            });
        }
        let oob = SimErrorKind::OutOfBounds {
            space: sp,
            addr,
            size: len as u32,
        };
        match sp {
            Space::Global | Space::Generic => self.global.slice_mut(a, len).ok_or(oob),
            Space::Shared => sub_slice(self.shared, a, len).ok_or(oob),
            Space::Local => sub_slice(self.local, a, len).ok_or(oob),
            Space::Param => sub_slice(self.params, a, len).ok_or(oob),
            Space::Const => {
                if write {
                    return Err(SimErrorKind::ReadOnly { addr });
                }
                Err(oob)
            }
        }
    }

    #[inline]
    fn load(&mut self, space: Space, addr: u64, len: usize) -> Result<u64, SimErrorKind> {
        if space == Space::Const
            || (space == Space::Generic && resolve(space, addr).0 == Space::Const)
        {
            let (_, a) = resolve(space, addr);
            if !addr.is_multiple_of(len as u64) {
                return Err(SimErrorKind::Misaligned {
                    space: Space::Const,
                    addr,
                    size: len as u32,
                });
            }
            let b = usize::try_from(a)
                .ok()
                .and_then(|a| self.consts.get(a..a.checked_add(len)?))
                .ok_or(SimErrorKind::OutOfBounds {
                    space: Space::Const,
                    addr,
                    size: len as u32,
                })?;
            return Ok(le(b));
        }
        let b = self.bytes(space, addr, len, false)?;
        Ok(le(b))
    }

    #[inline]
    fn store(&mut self, space: Space, addr: u64, len: usize, v: u64) -> Result<(), SimErrorKind> {
        let b = self.bytes(space, addr, len, true)?;
        b.copy_from_slice(&v.to_le_bytes()[..len]);
        Ok(())
    }

    /// Checks that an access of `len` bytes at `addr` is valid (used for vectors).
    fn check(
        &mut self,
        space: Space,
        addr: u64,
        len: usize,
        write: bool,
    ) -> Result<(), SimErrorKind> {
        if !write && resolve(space, addr).0 == Space::Const {
            // Element loads perform the bounds check; only alignment here.
            if !addr.is_multiple_of(len as u64) {
                return Err(SimErrorKind::Misaligned {
                    space: Space::Const,
                    addr,
                    size: len as u32,
                });
            }
            return Ok(());
        }
        self.bytes(space, addr, len, write).map(|_| ())
    }
}

#[inline(always)]
fn le(b: &[u8]) -> u64 {
    let mut buf = [0u8; 8];
    buf[..b.len()].copy_from_slice(b);
    u64::from_le_bytes(buf)
}

#[inline(always)]
fn sx(ty: Ty, v: u64) -> i64 {
    match ty.bits() {
        8 => v as i8 as i64,
        16 => v as i16 as i64,
        32 => v as i32 as i64,
        _ => v as i64,
    }
}

#[inline(always)]
fn zx(ty: Ty, v: u64) -> u64 {
    match ty.bits() {
        1 => v & 1,
        8 => v & 0xff,
        16 => v & 0xffff,
        32 => v & 0xffff_ffff,
        _ => v,
    }
}

fn ibin(op: IBinOp, ty: Ty, a: u64, b: u64) -> u64 {
    let bits = ty.bits();
    let signed = ty.is_signed();
    let v = match op {
        IBinOp::Add => a.wrapping_add(b),
        IBinOp::Sub => a.wrapping_sub(b),
        IBinOp::MulLo => a.wrapping_mul(b),
        IBinOp::AddSat => (sx(ty, a) + sx(ty, b)).clamp(i32::MIN as i64, i32::MAX as i64) as u64,
        IBinOp::SubSat => (sx(ty, a) - sx(ty, b)).clamp(i32::MIN as i64, i32::MAX as i64) as u64,
        IBinOp::MulHi => {
            if signed {
                ((sx(ty, a) as i128 * sx(ty, b) as i128) >> bits) as u64
            } else {
                ((zx(ty, a) as u128 * zx(ty, b) as u128) >> bits) as u64
            }
        }
        IBinOp::MulWide => {
            let w = ty.widen().unwrap_or(ty);
            let p = if signed {
                (sx(ty, a) as i128 * sx(ty, b) as i128) as u64
            } else {
                (zx(ty, a) as u128 * zx(ty, b) as u128) as u64
            };
            return w.canon(p);
        }
        IBinOp::Mul24Lo | IBinOp::Mul24Hi => {
            // The operands' low 24 bits, sign-extended for .s32; the product fits in 48.
            let low24 = |v: u64| {
                if signed {
                    ((v << 40) as i64 >> 40) as i128
                } else {
                    (v & 0xff_ffff) as i128
                }
            };
            let p = low24(a) * low24(b);
            if op == IBinOp::Mul24Hi {
                (p >> 16) as u64
            } else {
                p as u64
            }
        }
        IBinOp::Div => {
            if signed {
                let (x, y) = (sx(ty, a), sx(ty, b));
                if y == 0 {
                    u64::MAX
                } else {
                    x.wrapping_div(y) as u64
                }
            } else {
                let (x, y) = (zx(ty, a), zx(ty, b));
                x.checked_div(y).unwrap_or(u64::MAX)
            }
        }
        IBinOp::Rem => {
            if signed {
                let (x, y) = (sx(ty, a), sx(ty, b));
                if y == 0 {
                    x as u64
                } else {
                    x.wrapping_rem(y) as u64
                }
            } else {
                let (x, y) = (zx(ty, a), zx(ty, b));
                x.checked_rem(y).unwrap_or(x)
            }
        }
        IBinOp::Min => {
            if signed {
                sx(ty, a).min(sx(ty, b)) as u64
            } else {
                zx(ty, a).min(zx(ty, b))
            }
        }
        IBinOp::Max => {
            if signed {
                sx(ty, a).max(sx(ty, b)) as u64
            } else {
                zx(ty, a).max(zx(ty, b))
            }
        }
        IBinOp::And => a & b,
        IBinOp::Or => a | b,
        IBinOp::Xor => a ^ b,
        IBinOp::Shl => {
            let s = b as u32;
            if s >= bits {
                0
            } else {
                a << s
            }
        }
        IBinOp::Shr => {
            let s = b as u32;
            if signed {
                (sx(ty, a) >> s.min(63)) as u64
            } else if s >= bits {
                0
            } else {
                zx(ty, a) >> s
            }
        }
    };
    ty.canon(v)
}

fn iun(op: IUnOp, ty: Ty, a: u64) -> u64 {
    let bits = ty.bits();
    match op {
        IUnOp::Abs => ty.canon(sx(ty, a).wrapping_abs() as u64),
        IUnOp::Neg => ty.canon(a.wrapping_neg()),
        IUnOp::Not => {
            if ty == Ty::Pred {
                (a & 1) ^ 1
            } else {
                ty.canon(!a)
            }
        }
        IUnOp::Cnot => ty.canon((zx(ty, a) == 0) as u64),
        IUnOp::Popc => zx(ty, a).count_ones() as u64,
        IUnOp::Clz => (zx(ty, a).leading_zeros() - (64 - bits)) as u64,
        IUnOp::Brev => zx(ty, a).reverse_bits() >> (64 - bits),
        IUnOp::Bfind | IUnOp::BfindShift => {
            let x = if ty.is_signed() {
                let s = sx(ty, a);
                (if s < 0 { !s } else { s }) as u64
            } else {
                zx(ty, a)
            };
            if x == 0 {
                0xffff_ffff
            } else {
                let pos = 63 - x.leading_zeros();
                if op == IUnOp::BfindShift {
                    (bits - 1 - pos) as u64
                } else {
                    pos as u64
                }
            }
        }
    }
}

#[inline]
fn nan32(x: f32) -> u64 {
    if x.is_nan() {
        fp::CANON_NAN_F32 as u64
    } else {
        x.to_bits() as u64
    }
}

fn fbin(op: FBinOp, ty: Ty, rnd: Rnd, a: u64, b: u64) -> u64 {
    if ty == Ty::F32 {
        let (x, y) = (f32::from_bits(a as u32), f32::from_bits(b as u32));
        let nan_any = x.is_nan() || y.is_nan();
        nan32(match op {
            FBinOp::Add => fp::add32(x, y, rnd),
            FBinOp::Sub => fp::add32(x, -y, rnd),
            FBinOp::Mul => fp::mul32(x, y, rnd),
            FBinOp::Div => fp::div32(x, y, rnd),
            FBinOp::Min => fp::min32(x, y),
            FBinOp::Max => fp::max32(x, y),
            FBinOp::MinNan if nan_any => f32::NAN,
            FBinOp::MaxNan if nan_any => f32::NAN,
            FBinOp::MinNan => fp::min32(x, y),
            FBinOp::MaxNan => fp::max32(x, y),
            FBinOp::Copysign => return y.copysign(x).to_bits() as u64,
        })
    } else {
        let (x, y) = (f64::from_bits(a), f64::from_bits(b));
        let nan_any = x.is_nan() || y.is_nan();
        (match op {
            FBinOp::Add => fp::add64(x, y, rnd),
            FBinOp::Sub => fp::add64(x, -y, rnd),
            FBinOp::Mul => fp::mul64(x, y, rnd),
            FBinOp::Div => fp::div64(x, y, rnd),
            FBinOp::Min => fp::min64(x, y),
            FBinOp::Max => fp::max64(x, y),
            FBinOp::MinNan | FBinOp::MaxNan if nan_any => f64::NAN,
            FBinOp::MinNan => fp::min64(x, y),
            FBinOp::MaxNan => fp::max64(x, y),
            FBinOp::Copysign => y.copysign(x),
        })
        .to_bits()
    }
}

fn fun(op: FUnOp, ty: Ty, rnd: Rnd, a: u64) -> u64 {
    if ty == Ty::F32 {
        let x = f32::from_bits(a as u32);
        match op {
            FUnOp::Abs => a & 0x7fff_ffff,
            FUnOp::Neg => (a ^ 0x8000_0000) & 0xffff_ffff,
            FUnOp::Sqrt => nan32(fp::sqrt32(x, rnd)),
            FUnOp::Rcp => nan32(fp::div32(1.0, x, rnd)),
            FUnOp::Rsqrt => nan32(1.0 / x.sqrt()),
            FUnOp::Sin => nan32(x.sin()),
            FUnOp::Cos => nan32(x.cos()),
            FUnOp::Ex2 => nan32(x.exp2()),
            FUnOp::Lg2 => nan32(x.log2()),
            FUnOp::Tanh => nan32(x.tanh()),
        }
    } else {
        let x = f64::from_bits(a);
        match op {
            FUnOp::Abs => a & !(1 << 63),
            FUnOp::Neg => a ^ (1 << 63),
            FUnOp::Sqrt => fp::sqrt64(x, rnd).to_bits(),
            FUnOp::Rcp => fp::div64(1.0, x, rnd).to_bits(),
            FUnOp::Rsqrt => (1.0 / x.sqrt()).to_bits(),
            FUnOp::Sin => x.sin().to_bits(),
            FUnOp::Cos => x.cos().to_bits(),
            FUnOp::Ex2 => x.exp2().to_bits(),
            FUnOp::Lg2 => x.log2().to_bits(),
            FUnOp::Tanh => x.tanh().to_bits(),
        }
    }
}

fn compare(cmp: Cmp, ty: Ty, a: u64, b: u64) -> bool {
    if ty.is_float() {
        let (x, y) = (fp::to_f64(ty, a), fp::to_f64(ty, b));
        let u = x.is_nan() || y.is_nan();
        return match cmp {
            Cmp::Eq => !u && x == y,
            Cmp::Ne => !u && x != y,
            Cmp::Lt | Cmp::Lo => !u && x < y,
            Cmp::Le | Cmp::Ls => !u && x <= y,
            Cmp::Gt | Cmp::Hi => !u && x > y,
            Cmp::Ge | Cmp::Hs => !u && x >= y,
            Cmp::Equ => u || x == y,
            Cmp::Neu => u || x != y,
            Cmp::Ltu => u || x < y,
            Cmp::Leu => u || x <= y,
            Cmp::Gtu => u || x > y,
            Cmp::Geu => u || x >= y,
            Cmp::Num => !u,
            Cmp::Nan => u,
        };
    }
    let signed = ty.is_signed();
    let (sa, sb) = (sx(ty, a), sx(ty, b));
    let (ua, ub) = (zx(ty, a), zx(ty, b));
    match cmp {
        Cmp::Eq | Cmp::Equ => ua == ub,
        Cmp::Ne | Cmp::Neu => ua != ub,
        Cmp::Lt | Cmp::Ltu if signed => sa < sb,
        Cmp::Le | Cmp::Leu if signed => sa <= sb,
        Cmp::Gt | Cmp::Gtu if signed => sa > sb,
        Cmp::Ge | Cmp::Geu if signed => sa >= sb,
        Cmp::Lt | Cmp::Ltu | Cmp::Lo => ua < ub,
        Cmp::Le | Cmp::Leu | Cmp::Ls => ua <= ub,
        Cmp::Gt | Cmp::Gtu | Cmp::Hi => ua > ub,
        Cmp::Ge | Cmp::Geu | Cmp::Hs => ua >= ub,
        Cmp::Num => true,
        Cmp::Nan => false,
    }
}

#[inline]
fn combine(r: bool, c: Option<Combine>, regs: &[u64]) -> (bool, bool) {
    match c {
        None => (r, !r),
        Some(c) => {
            let x = (regs[c.pred as usize] & 1 != 0) != c.neg;
            let f = |v: bool| match c.op {
                BoolOp::And => v && x,
                BoolOp::Or => v || x,
                BoolOp::Xor => v ^ x,
            };
            (f(r), f(!r))
        }
    }
}

fn cvt(dty: Ty, sty: Ty, rnd: CvtRnd, sat: bool, a: u64) -> u64 {
    let (fr, ir) = match rnd {
        CvtRnd::None => (None, None),
        CvtRnd::F(r) => (Some(r), None),
        CvtRnd::I(r) => (None, Some(r)),
    };
    match (dty.is_float(), sty.is_float()) {
        (false, false) => {
            let v: i128 = if sty.is_signed() {
                sx(sty, a) as i128
            } else {
                zx(sty, a) as i128
            };
            let v = if sat {
                let (lo, hi): (i128, i128) = if dty.is_signed() {
                    (
                        -(1i128 << (dty.bits() - 1)),
                        (1i128 << (dty.bits() - 1)) - 1,
                    )
                } else {
                    (0, (1i128 << dty.bits()) - 1)
                };
                v.clamp(lo, hi)
            } else {
                v
            };
            dty.canon(v as u64)
        }
        (true, false) => {
            let v: i128 = if sty.is_signed() {
                sx(sty, a) as i128
            } else {
                zx(sty, a) as i128
            };
            let out = fp::int_to_float(v, dty, fr.unwrap_or(Rnd::N));
            if sat {
                fp::float_to_float(out, dty, dty, None, None, true)
            } else {
                out
            }
        }
        (false, true) => dty.canon(fp::float_to_int(
            fp::to_f64(sty, a),
            dty,
            ir.unwrap_or(Rnd::Z),
        )),
        (true, true) => fp::float_to_float(a, sty, dty, fr, ir, sat),
    }
}

fn testp(kind: TestpKind, ty: Ty, a: u64) -> bool {
    let x = fp::to_f64(ty, a);
    let sub = if ty == Ty::F32 {
        f32::from_bits(a as u32).is_subnormal()
    } else {
        x.is_subnormal()
    };
    match kind {
        TestpKind::Finite => x.is_finite(),
        TestpKind::Infinite => x.is_infinite(),
        TestpKind::Number => !x.is_nan(),
        TestpKind::NotANumber => x.is_nan(),
        TestpKind::Normal => x.is_finite() && x != 0.0 && !sub,
        TestpKind::Subnormal => sub,
    }
}

fn atom_new(op: AtomOp, ty: Ty, old: u64, b: u64, c: u64) -> u64 {
    let v = match op {
        AtomOp::Add => match ty {
            Ty::F32 => (f32::from_bits(old as u32) + f32::from_bits(b as u32)).to_bits() as u64,
            Ty::F64 => (f64::from_bits(old) + f64::from_bits(b)).to_bits(),
            _ => old.wrapping_add(b),
        },
        AtomOp::Min => {
            if ty.is_signed() {
                sx(ty, old).min(sx(ty, b)) as u64
            } else {
                zx(ty, old).min(zx(ty, b))
            }
        }
        AtomOp::Max => {
            if ty.is_signed() {
                sx(ty, old).max(sx(ty, b)) as u64
            } else {
                zx(ty, old).max(zx(ty, b))
            }
        }
        AtomOp::Exch => b,
        AtomOp::Cas => {
            if zx(ty, old) == zx(ty, b) {
                c
            } else {
                old
            }
        }
        AtomOp::And => old & b,
        AtomOp::Or => old | b,
        AtomOp::Xor => old ^ b,
        AtomOp::Inc => {
            let (o, b) = (zx(ty, old), zx(ty, b));
            if o >= b {
                0
            } else {
                o + 1
            }
        }
        AtomOp::Dec => {
            let (o, b) = (zx(ty, old), zx(ty, b));
            if o == 0 || o > b {
                b
            } else {
                o - 1
            }
        }
    };
    zx(ty, v)
}

enum Event {
    Bar,
    Warp(WarpArgs),
    Exit,
    Ret,
    Call,
}

type ExecResult = Result<(Event, usize), (SimErrorKind, usize)>;

/// Runs the current frame from `pc` until a control event.
/// The launch's instruction count, its limit, and the current function's count per
/// instruction (empty when no profile is kept).
struct Steps<'a> {
    done: &'a mut u64,
    limit: u64,
    per_inst: &'a mut [u64],
}

fn exec(
    steps: Steps<'_>,
    cx: &Cx,
    mv: &mut MemView,
    r: &mut [u64],
    insts: &[Inst],
    mut pc: usize,
) -> ExecResult {
    loop {
        let Some(inst) = insts.get(pc) else {
            return Ok((Event::Ret, pc));
        };
        *steps.done += 1;
        if *steps.done > steps.limit {
            let limit = steps.limit;
            return Err((SimErrorKind::StepLimitExceeded { limit }, pc));
        }
        if let Some(c) = steps.per_inst.get_mut(pc) {
            *c += 1;
        }
        if inst.guard != NO_REG && ((r[inst.guard as usize] & 1 != 0) == inst.guard_neg) {
            pc += 1;
            continue;
        }
        macro_rules! tryk {
            ($e:expr) => {
                match $e {
                    Ok(v) => v,
                    Err(k) => return Err((k, pc)),
                }
            };
        }
        match &inst.op {
            Op::Mov { ty, d, a } => r[*d as usize] = ty.canon(rs(r, cx, *a)),
            Op::IBin { op, ty, d, a, b } => {
                r[*d as usize] = ibin(*op, *ty, rs(r, cx, *a), rs(r, cx, *b));
            }
            Op::FBin {
                op,
                ty,
                rnd,
                d,
                a,
                b,
            } => {
                r[*d as usize] = fbin(*op, *ty, *rnd, rs(r, cx, *a), rs(r, cx, *b));
            }
            Op::IUn { op, ty, d, a } => r[*d as usize] = iun(*op, *ty, rs(r, cx, *a)),
            Op::FUn { op, ty, rnd, d, a } => r[*d as usize] = fun(*op, *ty, *rnd, rs(r, cx, *a)),
            Op::IMad {
                mode,
                ty,
                d,
                a,
                b,
                c,
            } => {
                let (a, b, c) = (rs(r, cx, *a), rs(r, cx, *b), rs(r, cx, *c));
                r[*d as usize] = match mode {
                    MadMode::Lo => ty.canon(a.wrapping_mul(b).wrapping_add(c)),
                    MadMode::Hi => ty.canon(ibin(IBinOp::MulHi, *ty, a, b).wrapping_add(c)),
                    MadMode::Wide => {
                        let w = ty.widen().unwrap_or(*ty);
                        w.canon(ibin(IBinOp::MulWide, *ty, a, b).wrapping_add(c))
                    }
                };
            }
            Op::Fma {
                ty,
                rnd,
                d,
                a,
                b,
                c,
            } => {
                let (a, b, c) = (rs(r, cx, *a), rs(r, cx, *b), rs(r, cx, *c));
                r[*d as usize] = if *ty == Ty::F32 {
                    nan32(fp::fma32(
                        f32::from_bits(a as u32),
                        f32::from_bits(b as u32),
                        f32::from_bits(c as u32),
                        *rnd,
                    ))
                } else {
                    fp::fma64(
                        f64::from_bits(a),
                        f64::from_bits(b),
                        f64::from_bits(c),
                        *rnd,
                    )
                    .to_bits()
                };
            }
            Op::Setp {
                cmp,
                ty,
                p,
                q,
                a,
                b,
                comb,
            } => {
                let res = compare(*cmp, *ty, rs(r, cx, *a), rs(r, cx, *b));
                let (pv, qv) = combine(res, *comb, r);
                r[*p as usize] = pv as u64;
                if *q != NO_REG {
                    r[*q as usize] = qv as u64;
                }
            }
            Op::Set {
                cmp,
                dty,
                sty,
                d,
                a,
                b,
                comb,
            } => {
                let res = compare(*cmp, *sty, rs(r, cx, *a), rs(r, cx, *b));
                let (v, _) = combine(res, *comb, r);
                r[*d as usize] = match (v, dty) {
                    (false, _) => 0,
                    (true, Ty::F32) => 1.0f32.to_bits() as u64,
                    (true, t) => t.canon(u64::MAX),
                };
            }
            Op::Selp { ty, d, a, b, c } => {
                let v = if rs(r, cx, *c) & 1 != 0 {
                    rs(r, cx, *a)
                } else {
                    rs(r, cx, *b)
                };
                r[*d as usize] = ty.canon(v);
            }
            Op::Cvt {
                dty,
                sty,
                rnd,
                sat,
                d,
                a,
            } => {
                r[*d as usize] = cvt(*dty, *sty, *rnd, *sat, rs(r, cx, *a));
            }
            Op::Ld {
                space,
                ty,
                ds,
                n,
                addr,
            } => {
                let a0 = ea(r, cx, addr, *space);
                let sz = ty.bytes() as usize;
                if *n == 1 {
                    let v = tryk!(mv.load(*space, a0, sz));
                    r[ds[0] as usize] = ty.canon(v);
                } else {
                    tryk!(mv.check(*space, a0, sz * *n as usize, false));
                    for i in 0..*n as usize {
                        let v = tryk!(mv.load(*space, a0.wrapping_add((i * sz) as u64), sz));
                        r[ds[i] as usize] = ty.canon(v);
                    }
                }
            }
            Op::St {
                space,
                ty,
                srcs,
                n,
                addr,
            } => {
                let a0 = ea(r, cx, addr, *space);
                let sz = ty.bytes() as usize;
                if *n > 1 {
                    tryk!(mv.check(*space, a0, sz * *n as usize, true));
                }
                for (i, s) in srcs.iter().enumerate().take(*n as usize) {
                    let v = rs(r, cx, *s);
                    tryk!(mv.store(*space, a0.wrapping_add((i * sz) as u64), sz, v));
                }
            }
            Op::Cvta {
                to_generic,
                space,
                ty,
                d,
                a,
            } => {
                let v = rs(r, cx, *a);
                let w = match space {
                    Space::Shared => SHARED_WINDOW,
                    Space::Local => LOCAL_WINDOW,
                    Space::Const => CONST_WINDOW,
                    _ => 0,
                };
                let out = if *to_generic {
                    v.wrapping_add(w)
                } else {
                    v.wrapping_sub(w)
                };
                r[*d as usize] = ty.canon(out);
            }
            Op::Atom {
                space,
                op,
                ty,
                d,
                addr,
                b,
                c,
            } => {
                let a = ea(r, cx, addr, *space);
                let sz = ty.bytes() as usize;
                let bv = rs(r, cx, *b);
                let cv = rs(r, cx, *c);
                let bytes = tryk!(mv.bytes(*space, a, sz, true));
                let old = le(bytes);
                let new = atom_new(*op, *ty, old, bv, cv);
                bytes.copy_from_slice(&new.to_le_bytes()[..sz]);
                r[*d as usize] = ty.canon(old);
            }
            Op::Pack {
                elem_bits,
                d,
                parts,
            } => {
                let mask = if *elem_bits == 64 {
                    u64::MAX
                } else {
                    (1u64 << elem_bits) - 1
                };
                let mut v = 0u64;
                for (i, p) in parts.iter().enumerate() {
                    v |= (rs(r, cx, *p) & mask) << (i as u32 * elem_bits);
                }
                r[*d as usize] = v;
            }
            Op::Unpack { elem_bits, ds, a } => {
                let mask = if *elem_bits == 64 {
                    u64::MAX
                } else {
                    (1u64 << elem_bits) - 1
                };
                let v = rs(r, cx, *a);
                for (i, dr) in ds.iter().enumerate() {
                    r[*dr as usize] = (v >> (i as u32 * elem_bits)) & mask;
                }
            }
            Op::Bfe { ty, d, a, b, c } => {
                let bits = ty.bits() as u64;
                let v = rs(r, cx, *a);
                let pos = rs(r, cx, *b) & 0xff;
                let len = rs(r, cx, *c) & 0xff;
                let mut out = 0u64;
                let sbit = if ty.is_signed() {
                    if len == 0 {
                        false
                    } else {
                        let i = (pos + len - 1).min(bits - 1);
                        (v >> i) & 1 != 0
                    }
                } else {
                    false
                };
                for i in 0..bits {
                    let bit = if i < len && pos + i < bits {
                        (v >> (pos + i)) & 1 != 0
                    } else {
                        sbit
                    };
                    out |= (bit as u64) << i;
                }
                r[*d as usize] = ty.canon(out);
            }
            Op::Bfi {
                ty,
                d,
                f,
                b,
                pos,
                len,
            } => {
                let bits = ty.bits() as u64;
                let fv = rs(r, cx, *f);
                let mut out = rs(r, cx, *b);
                let pos = rs(r, cx, *pos) & 0xff;
                let len = rs(r, cx, *len) & 0xff;
                let mut i = 0;
                while i < len && pos + i < bits {
                    let bit = (fv >> i) & 1;
                    out = (out & !(1 << (pos + i))) | (bit << (pos + i));
                    i += 1;
                }
                r[*d as usize] = ty.canon(out);
            }
            Op::Shf {
                left,
                wrap,
                d,
                a,
                b,
                c,
            } => {
                let v = (rs(r, cx, *a) & 0xffff_ffff) | ((rs(r, cx, *b) & 0xffff_ffff) << 32);
                let c = rs(r, cx, *c) & 0xffff_ffff;
                let n = if *wrap { c & 31 } else { c.min(32) };
                r[*d as usize] = if *left {
                    (v << n) >> 32
                } else {
                    (v >> n) & 0xffff_ffff
                };
            }
            Op::Prmt { d, a, b, c } => {
                let src = (rs(r, cx, *a) & 0xffff_ffff) | ((rs(r, cx, *b) & 0xffff_ffff) << 32);
                let sel = rs(r, cx, *c);
                let mut out = 0u64;
                for i in 0..4 {
                    let s = (sel >> (4 * i)) & 0xf;
                    let byte = (src >> ((s & 7) * 8)) & 0xff;
                    let byte = if s & 8 != 0 {
                        if byte & 0x80 != 0 {
                            0xff
                        } else {
                            0
                        }
                    } else {
                        byte
                    };
                    out |= byte << (8 * i);
                }
                r[*d as usize] = out;
            }
            Op::Testp { kind, ty, p, a } => {
                r[*p as usize] = testp(*kind, *ty, rs(r, cx, *a)) as u64;
            }
            Op::Bar => return Ok((Event::Bar, pc)),
            Op::Shfl {
                mode,
                d,
                a,
                b,
                c,
                mask,
            } => {
                let w = WarpArgs {
                    kind: WarpKind::Shfl(*mode),
                    d: *d,
                    vals: [rs(r, cx, *a), rs(r, cx, *b), rs(r, cx, *c)],
                    mask: rs(r, cx, *mask) as u32,
                };
                return Ok((Event::Warp(w), pc));
            }
            Op::Vote {
                mode,
                d,
                p,
                neg,
                mask,
            } => {
                let w = WarpArgs {
                    kind: WarpKind::Vote(*mode),
                    d: *d,
                    vals: [u64::from((r[*p as usize] & 1 != 0) != *neg), 0, 0],
                    mask: rs(r, cx, *mask) as u32,
                };
                return Ok((Event::Warp(w), pc));
            }
            Op::WarpSync { mask } => {
                let w = WarpArgs {
                    kind: WarpKind::Sync,
                    d: 0,
                    vals: [0; 3],
                    mask: rs(r, cx, *mask) as u32,
                };
                return Ok((Event::Warp(w), pc));
            }
            Op::Bra { target } => {
                pc = *target as usize;
                continue;
            }
            Op::Call { .. } => return Ok((Event::Call, pc)),
            Op::Ret => return Ok((Event::Ret, pc)),
            Op::Exit => return Ok((Event::Exit, pc)),
            Op::Trap => return Err((SimErrorKind::Trap, pc)),
            Op::Nop => {}
        }
        pc += 1;
    }
}

/// Largest local-memory stack per thread.
const MAX_LOCAL_STACK: usize = 16 << 20;

enum Stop {
    Bar,
    Warp,
    Exit,
}

/// The source lane of `shfl.sync` (PTX ISA pseudocode): `b` is the lane or offset, `c`
/// packs the clamp value (bits 0-4) and the segment mask (bits 8-12). When the source
/// is out of range the thread reads its own value.
fn shfl_source(mode: ShflMode, lane: u32, b: u32, c: u32) -> u32 {
    let (bval, cval, seg) = (b & 31, c & 31, (c >> 8) & 31);
    let max_lane = (lane & seg) | (cval & !seg);
    let min_lane = lane & seg;
    let (j, ok) = match mode {
        ShflMode::Up => {
            let j = lane as i32 - bval as i32;
            (j, j >= max_lane as i32)
        }
        ShflMode::Down => {
            let j = (lane + bval) as i32;
            (j, j <= max_lane as i32)
        }
        ShflMode::Bfly => {
            let j = (lane ^ bval) as i32;
            (j, j <= max_lane as i32)
        }
        ShflMode::Idx => {
            let j = (min_lane | (bval & !seg)) as i32;
            (j, j <= max_lane as i32)
        }
    };
    if ok {
        j as u32
    } else {
        lane
    }
}

/// Do `a` and `b` wait at the same dynamic instruction (same call stack and pc)?
fn same_point(a: &Thread, b: &Thread) -> bool {
    a.frames.len() == b.frames.len()
        && a.frames
            .iter()
            .zip(&b.frames)
            .all(|(x, y)| x.func == y.func && x.pc == y.pc)
}

/// Perform every warp collective threads wait at. Each group is the threads named by a
/// waiting thread's mask; every non-exited one (lanes past the CTA's end count as
/// exited) must wait at the same instruction with the same mask. A `shfl` whose source
/// lane is not in the group reads 0 (undefined in PTX).
fn warp_round(env: &Env, threads: &mut [Thread]) -> Result<(), SimError> {
    let n = threads.len();
    for lo in (0..n).step_by(32) {
        let hi = (lo + 32).min(n);
        let mut handled = 0u32;
        for l in lo..hi {
            let bit = 1u32 << (l - lo);
            if threads[l].state != TState::Warp || handled & bit != 0 {
                continue;
            }
            let lead = &threads[l];
            let w = lead.warp;
            let fail = |reason: String| {
                let fr = lead
                    .frames
                    .last()
                    .copied()
                    .expect("waiting thread has a frame");
                SimError {
                    kind: SimErrorKind::DivergentWarp { reason },
                    location: Some(loc(env, lead, fr.func, fr.pc as usize)),
                }
            };
            if w.mask & bit == 0 {
                return Err(fail(format!(
                    "lane {} executes it with mask {:#x}, which leaves it out",
                    l - lo,
                    w.mask
                )));
            }
            let mut members = 0u32;
            for lane in 0..32 {
                let lb = 1u32 << lane;
                let j = lo + lane;
                if w.mask & lb == 0 || j >= hi {
                    continue;
                }
                let t = &threads[j];
                let reason = match t.state {
                    TState::Done => continue,
                    TState::Warp if same_point(t, lead) && handled & lb == 0 => {
                        if t.warp.mask == w.mask && t.warp.kind == w.kind {
                            members |= lb;
                            continue;
                        }
                        "reaches it with another mask"
                    }
                    TState::Warp => "waits at another warp collective",
                    TState::Bar => "waits at a barrier",
                    TState::Run => unreachable!("no thread runs during a warp round"),
                };
                return Err(fail(format!("thread {:?} {reason}", t.tid)));
            }
            let mut res = [0u64; 32];
            match w.kind {
                WarpKind::Sync => {}
                WarpKind::Shfl(mode) => {
                    for (lane, out) in res.iter_mut().enumerate() {
                        if members & (1 << lane) != 0 {
                            let a = &threads[lo + lane].warp;
                            let src =
                                shfl_source(mode, lane as u32, a.vals[1] as u32, a.vals[2] as u32);
                            if members & (1 << src) != 0 {
                                *out = threads[lo + src as usize].warp.vals[0];
                            }
                        }
                    }
                }
                WarpKind::Vote(mode) => {
                    let mut ballot = 0u32;
                    for lane in 0..32 {
                        if members & (1 << lane) != 0 {
                            ballot |= ((threads[lo + lane].warp.vals[0] & 1) as u32) << lane;
                        }
                    }
                    let v = match mode {
                        VoteMode::Any => u64::from(ballot != 0),
                        VoteMode::All => u64::from(ballot == members),
                        VoteMode::Uni => u64::from(ballot == 0 || ballot == members),
                        VoteMode::Ballot => u64::from(ballot),
                    };
                    res = [v; 32];
                }
            }
            for (lane, &v) in res.iter().enumerate() {
                if members & (1 << lane) != 0 {
                    let t = &mut threads[lo + lane];
                    let fr = t.frames.last_mut().expect("waiting thread has a frame");
                    if w.kind != WarpKind::Sync {
                        let base = fr.reg_base;
                        t.regs[base + w.d as usize] = v;
                    }
                }
            }
            handled |= members;
        }
    }
    for t in threads.iter_mut() {
        if t.state == TState::Warp {
            if let Some(f) = t.frames.last_mut() {
                f.pc += 1;
            }
            t.state = TState::Run;
        }
    }
    Ok(())
}

struct Env<'a> {
    m: &'a ModuleData,
    gaddrs: Vec<u64>,
    launch: Launch,
    nthreads: u32,
    ctaid: [u32; 3],
    steps: u64,
    opts: &'a RunOptions,
    /// Executions per function and instruction, when asked for.
    profile: Option<&'a mut Vec<Vec<u64>>>,
}

fn loc(env: &Env, t: &Thread, func: u32, pc: usize) -> ErrorLocation {
    let f = &env.m.funcs[func as usize];
    ErrorLocation {
        ctaid: env.ctaid,
        tid: t.tid,
        function: f.name.clone(),
        inst_index: pc,
        line: f.lines.get(pc).copied().unwrap_or(0),
    }
}

fn write_le(buf: &mut [u8], off: usize, size: usize, v: u64) {
    let bytes = v.to_le_bytes();
    let n = size.min(8);
    if let Some(dst) = buf.get_mut(off..off + n) {
        dst.copy_from_slice(&bytes[..n]);
    }
}

/// Reads C strings and the `vprintf` argument buffer through generic addresses.
struct Reader<'a> {
    mv: MemView<'a>,
    /// The argument buffer's address and the offset of the next argument in it.
    args: u64,
    off: u64,
}

impl Reader<'_> {
    /// The NUL-terminated string at generic `addr` (at most 64 KiB).
    fn c_string(&mut self, addr: u64) -> Result<Vec<u8>, SimErrorKind> {
        let mut out = Vec::new();
        loop {
            let b = self
                .mv
                .load(Space::Generic, addr.wrapping_add(out.len() as u64), 1)?
                as u8;
            if b == 0 {
                return Ok(out);
            }
            if out.len() == 1 << 16 {
                return Err(SimErrorKind::BadPrintf(format!(
                    "string at {addr:#x} is not terminated"
                )));
            }
            out.push(b);
        }
    }
}

impl syscall::Source<SimErrorKind> for Reader<'_> {
    fn arg(&mut self, size: u8) -> Result<u64, SimErrorKind> {
        let sz = u64::from(size);
        self.off = self.off.div_ceil(sz) * sz;
        let v = self.mv.load(
            Space::Generic,
            self.args.wrapping_add(self.off),
            size as usize,
        )?;
        self.off += sz;
        Ok(v)
    }
    fn string(&mut self, addr: u64) -> Result<Vec<u8>, SimErrorKind> {
        self.c_string(addr)
    }
    fn bad(&self, reason: String) -> SimErrorKind {
        SimErrorKind::BadPrintf(reason)
    }
}

fn run_thread(
    env: &mut Env,
    mem: &mut Memory,
    shared: &mut [u8],
    t: &mut Thread,
) -> Result<Stop, SimError> {
    loop {
        let Some(&fr) = t.frames.last() else {
            return Ok(Stop::Exit);
        };
        let m = env.m;
        let func = &m.funcs[fr.func as usize];
        let cx = Cx {
            tid: t.tid,
            ntid: env.launch.block,
            ctaid: env.ctaid,
            nctaid: env.launch.grid,
            linear: t.linear,
            nthreads: env.nthreads,
            local_base: fr.local_base as u64,
            dyn_base: m.dyn_shared_base,
            clock: env.steps,
            gaddrs: &env.gaddrs,
        };
        let res = {
            let regs = &mut t.regs[fr.reg_base..fr.reg_base + func.nregs];
            let params = &mut t.params[fr.param_base..fr.param_base + func.param_size as usize];
            let local_end = fr.local_base + func.local_size as usize;
            let mut mv = MemView {
                global: mem,
                shared,
                consts: &m.consts,
                local: &mut t.local[..local_end],
                params,
            };
            let steps = Steps {
                done: &mut env.steps,
                limit: env.opts.step_limit,
                per_inst: match env.profile.as_deref_mut() {
                    Some(p) => &mut p[fr.func as usize],
                    None => &mut [],
                },
            };
            exec(steps, &cx, &mut mv, regs, &func.insts, fr.pc as usize)
        };
        let (ev, pc) = match res {
            Ok(v) => v,
            Err((kind, pc)) => {
                return Err(SimError {
                    kind,
                    location: Some(loc(env, t, fr.func, pc)),
                });
            }
        };
        match ev {
            Event::Bar => {
                if let Some(f) = t.frames.last_mut() {
                    f.pc = pc as u32 + 1;
                }
                return Ok(Stop::Bar);
            }
            Event::Warp(w) => {
                // Stay at the collective; `warp_round` performs it and moves on.
                if let Some(f) = t.frames.last_mut() {
                    f.pc = pc as u32;
                }
                t.warp = w;
                return Ok(Stop::Warp);
            }
            Event::Exit => {
                t.frames.clear();
                return Ok(Stop::Exit);
            }
            Event::Ret => {
                if t.frames.len() <= 1 {
                    t.frames.clear();
                    return Ok(Stop::Exit);
                }
                let callee_fr = t.frames.pop().expect("at least two frames");
                let caller = *t.frames.last().expect("at least one frame");
                let cfunc = &m.funcs[caller.func as usize];
                let callee = &m.funcs[callee_fr.func as usize];
                let call_pc = caller.pc as usize - 1;
                if let Some(Inst {
                    op: Op::Call { ret: Some(rd), .. },
                    ..
                }) = cfunc.insts.get(call_pc)
                {
                    if let Some(cret) = &callee.ret {
                        let src = callee_fr.param_base + cret.offset as usize;
                        match *rd {
                            RetDst::Param { off, size } => {
                                let n = size.min(cret.size) as usize;
                                let dst = caller.param_base + off as usize;
                                t.params.copy_within(src..src + n, dst);
                            }
                            RetDst::Reg(rr) => {
                                let n = (cret.size as usize).min(8);
                                let v = le(&t.params[src..src + n]);
                                t.regs[caller.reg_base + rr as usize] = v;
                            }
                        }
                    }
                }
            }
            Event::Call => {
                let Some(Inst {
                    op: Op::Call { callee, args, .. },
                    ..
                }) = func.insts.get(pc)
                else {
                    unreachable!("Call event without call instruction");
                };
                let cf = &m.funcs[*callee as usize];
                if !cf.has_body && matches!(cf.name.as_str(), "vprintf" | "__assertfail") {
                    let at = loc(env, t, fr.func, pc);
                    let here = |kind| SimError {
                        kind,
                        location: Some(at.clone()),
                    };
                    // A CUDA system call: its argument values, by formal.
                    let mut vals = Vec::with_capacity(args.len());
                    for (a, formal) in args.iter().zip(&cf.params) {
                        vals.push(match *a {
                            ArgSrc::Param { off, size } => {
                                let n = size.min(formal.size).min(8) as usize;
                                let src = fr.param_base + off as usize;
                                le(&t.params[src..src + n])
                            }
                            ArgSrc::Val(s) => {
                                rs(&t.regs[fr.reg_base..fr.reg_base + func.nregs], &cx, s)
                            }
                        });
                    }
                    let ret = match &func.insts[pc].op {
                        Op::Call { ret, .. } => *ret,
                        _ => None,
                    };
                    let mut rd = Reader {
                        mv: MemView {
                            global: &mut *mem,
                            shared: &mut *shared,
                            consts: &m.consts,
                            local: &mut t.local[..],
                            params: &mut [],
                        },
                        args: vals.get(1).copied().unwrap_or(0),
                        off: 0,
                    };
                    if cf.name == "__assertfail" {
                        let [msg, file, line, fun] = [0, 1, 2, 3].map(|i| vals.get(i).copied());
                        let mut text = |a: Option<u64>| -> Result<String, SimErrorKind> {
                            let a = a.ok_or(SimErrorKind::BadPrintf(
                                "__assertfail takes 5 arguments".into(),
                            ))?;
                            Ok(String::from_utf8_lossy(&rd.c_string(a)?).into_owned())
                        };
                        let r = (|| {
                            Ok(SimErrorKind::AssertFailed(Box::new(AssertFailure {
                                message: text(msg)?,
                                file: text(file)?,
                                line: line.unwrap_or(0) as u32,
                                function: text(fun)?,
                            })))
                        })();
                        return Err(here(r.unwrap_or_else(|e| e)));
                    }
                    let fmt = vals.first().copied().unwrap_or(0);
                    let n = if fmt == 0 {
                        -1
                    } else {
                        let f = rd.c_string(fmt).map_err(here)?;
                        let (text, n) = syscall::format(&f, &mut rd).map_err(here)?;
                        let [gx, gy, _] = env.launch.grid;
                        let [cx_, cy, cz] = env.ctaid;
                        let cta = u64::from(cx_)
                            + u64::from(gx) * (u64::from(cy) + u64::from(gy) * u64::from(cz));
                        mem.printed.push((
                            cta,
                            t.linear,
                            Printed {
                                ctaid: env.ctaid,
                                tid: t.tid,
                                text,
                            },
                        ));
                        n
                    };
                    match ret {
                        Some(RetDst::Param { off, size }) => {
                            let dst = fr.param_base + off as usize;
                            write_le(&mut t.params, dst, size.min(4) as usize, n as u32 as u64);
                        }
                        Some(RetDst::Reg(rr)) => {
                            t.regs[fr.reg_base + rr as usize] = u64::from(n as u32);
                        }
                        None => {}
                    }
                    if let Some(f) = t.frames.last_mut() {
                        f.pc = pc as u32 + 1;
                    }
                    continue;
                }
                let here = |kind| SimError {
                    kind,
                    location: Some(loc(env, t, fr.func, pc)),
                };
                if !cf.has_body {
                    return Err(here(SimErrorKind::MissingBody(cf.name.clone())));
                }
                if t.frames.len() >= env.opts.max_call_depth {
                    return Err(here(SimErrorKind::CallDepthExceeded {
                        limit: env.opts.max_call_depth,
                    }));
                }
                let new_reg = fr.reg_base + func.nregs;
                let new_param = (fr.param_base + func.param_size as usize).next_multiple_of(16);
                let new_local = (fr.local_base + func.local_size as usize).next_multiple_of(16);
                let reg_end = new_reg + cf.nregs;
                if new_local + cf.local_size as usize > MAX_LOCAL_STACK {
                    return Err(here(SimErrorKind::LocalStackOverflow {
                        bytes: new_local + cf.local_size as usize,
                    }));
                }
                let param_end = new_param + cf.param_size as usize;
                let local_end = new_local + cf.local_size as usize;
                if t.regs.len() < reg_end {
                    t.regs.resize(reg_end, 0);
                }
                if t.params.len() < param_end {
                    t.params.resize(param_end, 0);
                }
                if t.local.len() < local_end {
                    t.local.resize(local_end, 0);
                }
                t.regs[new_reg..reg_end].fill(0);
                t.params[new_param..param_end].fill(0);
                t.local[new_local..local_end].fill(0);
                for (a, formal) in args.iter().zip(&cf.params) {
                    let dst = new_param + formal.offset as usize;
                    match *a {
                        ArgSrc::Param { off, size } => {
                            let n = size.min(formal.size) as usize;
                            let src = fr.param_base + off as usize;
                            t.params.copy_within(src..src + n, dst);
                        }
                        ArgSrc::Val(s) => {
                            let v = rs(&t.regs[fr.reg_base..fr.reg_base + func.nregs], &cx, s);
                            write_le(&mut t.params, dst, formal.size as usize, v);
                        }
                    }
                }
                if let Some(f) = t.frames.last_mut() {
                    f.pc = pc as u32 + 1;
                }
                t.frames.push(Frame {
                    func: *callee,
                    pc: 0,
                    reg_base: new_reg,
                    param_base: new_param,
                    local_base: new_local,
                });
            }
        }
    }
}

/// See [`crate::run_kernel_with_options`].
pub(crate) fn run(
    module: &Module,
    kernel: &str,
    launch: &Launch,
    params: &[ParamValue],
    mem: &mut Memory,
    opts: &RunOptions,
) -> Result<RunStats, SimError> {
    run_counting(module, kernel, launch, params, mem, opts, None)
}

/// [`run`], and when `profile` is given, each instruction's executions (guarded-off ones
/// too) added to it, per function of the module and per instruction.
pub(crate) fn run_counting(
    module: &Module,
    kernel: &str,
    launch: &Launch,
    params: &[ParamValue],
    mem: &mut Memory,
    opts: &RunOptions,
    profile: Option<&mut Vec<Vec<u64>>>,
) -> Result<RunStats, SimError> {
    let start = mem.printed.len();
    let r = run_launch(module, kernel, launch, params, mem, opts, profile);
    // By CTA, then thread; stable, so each thread's lines keep their order.
    mem.printed[start..].sort_by_key(|p| (p.0, p.1));
    r
}

fn run_launch(
    module: &Module,
    kernel: &str,
    launch: &Launch,
    params: &[ParamValue],
    mem: &mut Memory,
    opts: &RunOptions,
    profile: Option<&mut Vec<Vec<u64>>>,
) -> Result<RunStats, SimError> {
    let m = &module.data;
    let kidx = match m.func_index.get(kernel) {
        Some(&i) if m.funcs[i as usize].is_entry && m.funcs[i as usize].has_body => i,
        _ => {
            return Err(SimError::global(SimErrorKind::UnknownKernel(
                kernel.to_string(),
            )))
        }
    };
    let kf = &m.funcs[kidx as usize];
    if launch.grid.contains(&0) || launch.block.contains(&0) {
        return Err(SimError::global(SimErrorKind::InvalidLaunch(
            "zero dimension".into(),
        )));
    }
    let nthreads = launch.block.iter().map(|&d| d as u64).product::<u64>();
    if nthreads > 1024 {
        return Err(SimError::global(SimErrorKind::InvalidLaunch(format!(
            "{nthreads} threads per CTA exceeds 1024"
        ))));
    }
    if launch.block[2] > 64 {
        return Err(SimError::global(SimErrorKind::InvalidLaunch(
            "block.z exceeds 64".into(),
        )));
    }
    if params.len() != kf.params.len() {
        return Err(SimError::global(SimErrorKind::ParamCount {
            expected: kf.params.len(),
            got: params.len(),
        }));
    }
    let mut ptemplate = vec![0u8; kf.param_size as usize];
    for (i, (p, d)) in params.iter().zip(&kf.params).enumerate() {
        let b = p.to_bytes();
        if b.len() as u64 != d.size {
            return Err(SimError::global(SimErrorKind::ParamSize {
                index: i,
                expected: d.size as usize,
                got: b.len(),
            }));
        }
        ptemplate[d.offset as usize..d.offset as usize + b.len()].copy_from_slice(&b);
    }
    let gaddrs: Vec<u64> = m
        .globals
        .iter()
        .map(|g| mem.symbol_or_alloc(&g.name, g.size, g.align, &g.init))
        .collect();
    let shared_size = (m.shared_size as usize)
        .max(m.dyn_shared_base as usize + opts.dynamic_shared_bytes as usize);
    let mut env = Env {
        m,
        gaddrs,
        launch: *launch,
        nthreads: nthreads as u32,
        ctaid: [0; 3],
        steps: 0,
        opts,
        profile: match profile {
            Some(p) => {
                p.resize(m.funcs.len(), Vec::new());
                for (c, f) in p.iter_mut().zip(&m.funcs) {
                    c.resize(f.insts.len(), 0);
                }
                Some(p)
            }
            None => None,
        },
    };
    let mut stats = RunStats::default();
    let [bx, by, bz] = launch.block;
    let mut shared = vec![0u8; shared_size];
    let mut threads = Vec::with_capacity(nthreads as usize);
    for tz in 0..bz {
        for ty in 0..by {
            for tx in 0..bx {
                threads.push(Thread {
                    regs: Vec::new(),
                    params: Vec::new(),
                    local: Vec::new(),
                    frames: Vec::new(),
                    tid: [tx, ty, tz],
                    linear: tx + bx * (ty + by * tz),
                    state: TState::Run,
                    warp: WarpArgs {
                        kind: WarpKind::Sync,
                        d: 0,
                        vals: [0; 3],
                        mask: 0,
                    },
                });
            }
        }
    }
    for cz in 0..launch.grid[2] {
        for cy in 0..launch.grid[1] {
            for cxx in 0..launch.grid[0] {
                env.ctaid = [cxx, cy, cz];
                shared.fill(0);
                let entry = Frame {
                    func: kidx,
                    pc: 0,
                    reg_base: 0,
                    param_base: 0,
                    local_base: 0,
                };
                for t in threads.iter_mut() {
                    t.regs.clear();
                    t.regs.resize(kf.nregs, 0);
                    t.params.clear();
                    t.params.extend_from_slice(&ptemplate);
                    t.local.clear();
                    t.local.resize(kf.local_size as usize, 0);
                    t.frames.clear();
                    t.frames.push(entry);
                    t.state = TState::Run;
                }
                stats.ctas += 1;
                stats.threads += nthreads;
                loop {
                    for t in threads.iter_mut() {
                        if t.state == TState::Run {
                            t.state = match run_thread(&mut env, mem, &mut shared, t)? {
                                Stop::Bar => TState::Bar,
                                Stop::Warp => TState::Warp,
                                Stop::Exit => TState::Done,
                            };
                        }
                    }
                    if threads.iter().any(|t| t.state == TState::Warp) {
                        warp_round(&env, &mut threads)?;
                        continue;
                    }
                    let waiting = threads.iter().filter(|t| t.state == TState::Bar).count() as u32;
                    if waiting == 0 {
                        break;
                    }
                    let exited = nthreads as u32 - waiting;
                    if exited > 0 {
                        let t = threads
                            .iter()
                            .find(|t| t.state == TState::Bar)
                            .expect("waiting > 0");
                        let fr = t
                            .frames
                            .last()
                            .copied()
                            .expect("waiting thread has a frame");
                        return Err(SimError {
                            kind: SimErrorKind::DivergentBarrier { waiting, exited },
                            location: Some(loc(&env, t, fr.func, fr.pc as usize - 1)),
                        });
                    }
                    stats.barriers += 1;
                    for t in threads.iter_mut() {
                        t.state = TState::Run;
                    }
                }
            }
        }
    }
    stats.instructions = env.steps;
    Ok(stats)
}
