//! Decoding: each function reachable from the kernel becomes a flat array of compact
//! instructions over a register file indexed by value number.
//!
//! Block parameters are registers like any other value; a branch names an [`Edge`],
//! which lists the parallel copies from branch arguments to the target's parameters and
//! the target's first instruction. Module globals are resolved to constant addresses
//! here, since their layout is fixed for a launch. Decoding walks the layout with
//! explicit loops and a worklist of called functions: no recursion.

use crate::error::ExecError;
use crate::memory::window_base;
use crate::semantics::{self as sem, BinOp, DivOp, FBinOp, FUnOp, IUnOp};
use cranelift_entity::{EntityRef, SecondaryMap};
use gyre_ir::{
    AddrSpace, AtomicOp, Block, BlockCall, FloatCC, FuncId, Function, GlobalId, Inst,
    InstructionData as D, IntCC, Module, Opcode, ShflMode, SpecialReg, Type, VoteMode,
};

/// A register index (the value's number; one extra scratch register per frame).
pub(crate) type R = u32;

/// Conversions.
#[derive(Copy, Clone, Debug)]
pub(crate) enum CastOp {
    /// Sign-extend from a width (result masked to `to`).
    Sext {
        from: u8,
        to: u8,
    },
    /// Keep the low `to` bits: zext, trunc, bitcast, ptrtoint, inttoptr.
    Mask {
        to: u8,
    },
    FpToInt {
        src64: bool,
        w: u8,
        signed: bool,
    },
    IntToFp {
        w: u8,
        signed: bool,
        dst64: bool,
    },
    Fpext,
    Fptrunc,
    Addrspace {
        from: AddrSpace,
        to: AddrSpace,
    },
}

/// The value kind an atomic works on.
#[derive(Copy, Clone, Debug)]
pub(crate) enum AtomKind {
    Int(u8),
    F32,
    F64,
}

/// A decoded instruction.
#[derive(Copy, Clone, Debug)]
pub(crate) enum Op {
    Const {
        dst: R,
        bits: u64,
    },
    Bin {
        op: BinOp,
        w: u8,
        flags: u8,
        dst: R,
        a: R,
        b: R,
    },
    // Flag-free forms of the commonest integer operations, one dispatch each.
    Add {
        m: u64,
        dst: R,
        a: R,
        b: R,
    },
    Sub {
        m: u64,
        dst: R,
        a: R,
        b: R,
    },
    Mul {
        m: u64,
        dst: R,
        a: R,
        b: R,
    },
    And {
        dst: R,
        a: R,
        b: R,
    },
    Or {
        dst: R,
        a: R,
        b: R,
    },
    Xor {
        dst: R,
        a: R,
        b: R,
    },
    Div {
        op: DivOp,
        w: u8,
        exact: bool,
        dst: R,
        a: R,
        b: R,
    },
    IUn {
        op: IUnOp,
        w: u8,
        dst: R,
        a: R,
    },
    FBin {
        op: FBinOp,
        f64: bool,
        dst: R,
        a: R,
        b: R,
    },
    FUn {
        op: FUnOp,
        f64: bool,
        dst: R,
        a: R,
    },
    Fma {
        f64: bool,
        dst: R,
        a: R,
        b: R,
        c: R,
    },
    Icmp {
        cc: IntCC,
        w: u8,
        dst: R,
        a: R,
        b: R,
    },
    Fcmp {
        cc: FloatCC,
        f64: bool,
        dst: R,
        a: R,
        b: R,
    },
    Select {
        dst: R,
        c: R,
        a: R,
        b: R,
    },
    Cast {
        op: CastOp,
        dst: R,
        a: R,
    },
    PtrAdd {
        dst: R,
        base: R,
        idx: R,
        w: u8,
        scale: u32,
    },
    Load {
        space: AddrSpace,
        size: u8,
        i1: bool,
        dst: R,
        ptr: R,
    },
    Store {
        space: AddrSpace,
        size: u8,
        val: R,
        ptr: R,
    },
    Rmw {
        op: AtomicOp,
        kind: AtomKind,
        space: AddrSpace,
        dst: R,
        ptr: R,
        val: R,
    },
    Cas {
        space: AddrSpace,
        size: u8,
        dst: R,
        ptr: R,
        exp: R,
        new: R,
    },
    SlotAddr {
        dst: R,
        off: u64,
        generic: bool,
    },
    Sreg {
        dst: R,
        reg: SpecialReg,
    },
    Barrier,
    /// A warp collective: the thread stops here and the CTA loop performs it for the
    /// whole group (`DFunc::warp[idx]`).
    Warp {
        idx: u32,
    },
    /// A fence: the interpreter runs one thread at a time, so every execution is
    /// sequentially consistent and a fence has nothing to order.
    Nop,
    /// Read the thread's instruction count (`clock`), truncated to `w` bits.
    Clock {
        dst: R,
        w: u8,
    },
    Freeze {
        dst: R,
        a: R,
    },
    /// `vprintf fmt, args`.
    Vprintf {
        dst: R,
        fmt: R,
        args: R,
    },
    /// `assert_fail msg, file, line, func`.
    AssertFail {
        args: [R; 4],
    },
    Call {
        func: u32,
        args: u32,
        nargs: u32,
        dst: R,
    },
    Jump {
        edge: u32,
    },
    Brif {
        c: R,
        t: u32,
        f: u32,
    },
    BrTable {
        idx: R,
        table: u32,
    },
    Return {
        val: R,
        has_val: bool,
    },
    Unreachable,
}

/// A resolved branch target.
#[derive(Copy, Clone, Debug)]
pub(crate) struct Edge {
    pub pc: u32,
    pub copies: u32,
    pub ncopies: u32,
    /// Some destination is also a source: copy through a temporary.
    pub overlap: bool,
}

/// A decoded `br_table`.
#[derive(Clone, Debug)]
pub(crate) struct Table {
    pub default: u32,
    /// `(case bits masked to the index width, edge)`.
    pub cases: Vec<(u64, u32)>,
}

/// A decoded function.
/// What a warp collective computes.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum WarpKind {
    Shfl(ShflMode),
    Vote(VoteMode),
    Sync,
}

/// A decoded warp collective: operands `[value, lane, clamp, mask]` for `shfl`,
/// `[pred, mask]` for `vote`, `[mask]` for `warp_sync`; `dst` unused for `warp_sync`.
#[derive(Copy, Clone, Debug)]
pub(crate) struct WarpOp {
    pub kind: WarpKind,
    pub dst: R,
    pub args: [R; 4],
}

impl WarpOp {
    /// The register holding the member mask.
    pub fn mask(&self) -> R {
        match self.kind {
            WarpKind::Shfl(_) => self.args[3],
            WarpKind::Vote(_) => self.args[1],
            WarpKind::Sync => self.args[0],
        }
    }
}

pub(crate) struct DFunc {
    pub name: String,
    /// The function's id in the module.
    pub id: FuncId,
    /// The program-wide site number of `code[0]` (sites number every instruction of
    /// every decoded function, so one `u32` names an access in race shadows).
    pub site_base: u32,
    /// Warp collectives, indexed by `Op::Warp::idx`.
    pub warp: Vec<WarpOp>,
    pub code: Vec<Op>,
    /// The IR position of each `code` entry.
    pub locs: Vec<(Block, Inst)>,
    pub edges: Vec<Edge>,
    pub copies: Vec<(R, R)>,
    pub call_args: Vec<R>,
    pub tables: Vec<Table>,
    /// Registers per frame, including the scratch register at index `nregs - 1`.
    pub nregs: u32,
    /// Entry-block parameters.
    pub params: Vec<R>,
    /// Slot `(offset, size)` within the frame's local area.
    pub slots: Vec<(u64, u64)>,
    pub frame_size: u64,
    pub frame_align: u64,
}

/// Every function a launch may execute, decoded.
pub(crate) struct Program {
    pub funcs: Vec<DFunc>,
}

/// Where each module global lives: its pointer value in its own space.
pub(crate) type GlobalAddrs = SecondaryMap<GlobalId, u64>;

impl Program {
    /// Decode `kernel` and every function it can call.
    pub fn decode(m: &Module, kernel: FuncId, globals: &GlobalAddrs) -> Result<Program, ExecError> {
        let mut index: SecondaryMap<FuncId, u32> = SecondaryMap::with_default(u32::MAX);
        let mut order = vec![kernel];
        index[kernel] = 0;
        let mut funcs = Vec::new();
        let mut next = 0;
        while next < order.len() {
            let id = order[next];
            next += 1;
            let f = &m.functions[id];
            let mut resolve = |callee: FuncId| -> Result<u32, ExecError> {
                if !m.functions.is_valid(callee) {
                    return Err(invalid(
                        f,
                        None,
                        format!("call of unknown function {callee}"),
                    ));
                }
                if index[callee] == u32::MAX {
                    index[callee] = order.len() as u32;
                    order.push(callee);
                }
                Ok(index[callee])
            };
            funcs.push(decode_func(m, id, globals, &mut resolve)?);
        }
        // Check call arities now that every callee is decoded.
        for f in &funcs {
            for op in &f.code {
                if let Op::Call { func, nargs, .. } = *op {
                    if funcs[func as usize].params.len() != nargs as usize {
                        return Err(ExecError::InvalidIr {
                            function: f.name.clone(),
                            inst: None,
                            reason: format!(
                                "call of @{} with {nargs} arguments",
                                funcs[func as usize].name
                            ),
                        });
                    }
                }
            }
        }
        let mut site = 0u32;
        for f in &mut funcs {
            f.site_base = site;
            site = site.saturating_add(f.code.len() as u32);
        }
        Ok(Program { funcs })
    }

    /// The function index and pc of a site number.
    pub fn site(&self, site: u32) -> Option<(u32, u32)> {
        let i = self
            .funcs
            .partition_point(|f| f.site_base <= site)
            .checked_sub(1)?;
        let pc = site - self.funcs[i].site_base;
        ((pc as usize) < self.funcs[i].code.len()).then_some((i as u32, pc))
    }
}

fn invalid(f: &Function, inst: Option<Inst>, reason: impl Into<String>) -> ExecError {
    ExecError::InvalidIr {
        function: f.name.clone(),
        inst,
        reason: reason.into(),
    }
}

fn decode_func(
    m: &Module,
    id: FuncId,
    globals: &GlobalAddrs,
    resolve: &mut dyn FnMut(FuncId) -> Result<u32, ExecError>,
) -> Result<DFunc, ExecError> {
    let f = &m.functions[id];
    let dfg = &f.dfg;
    let nvals = dfg.num_values() as u32;
    let scratch = nvals;
    let entry = f
        .entry_block()
        .ok_or_else(|| invalid(f, None, "function has no blocks"))?;

    // Block start pcs.
    let mut block_pc: SecondaryMap<Block, u32> = SecondaryMap::with_default(u32::MAX);
    let mut pc = 0u32;
    for b in f.layout.blocks() {
        block_pc[b] = pc;
        let n = f.layout.block_insts(b).count() as u32;
        if n == 0 {
            return Err(invalid(f, None, format!("{b} is empty")));
        }
        pc += n;
    }

    // Slots: each its own allocation, separated by guard gaps.
    let mut slots = Vec::new();
    let mut off = 0u64;
    let mut frame_align = 16u64;
    for (_, s) in f.slots.iter() {
        let align = u64::from(s.align.max(1)).next_power_of_two();
        frame_align = frame_align.max(align);
        off = (off + crate::memory::GUARD).next_multiple_of(align);
        slots.push((off, u64::from(s.size)));
        off += u64::from(s.size);
    }

    let mut out = DFunc {
        warp: Vec::new(),
        name: f.name.clone(),
        id,
        site_base: 0,
        code: Vec::with_capacity(pc as usize),
        locs: Vec::with_capacity(pc as usize),
        edges: Vec::new(),
        copies: Vec::new(),
        call_args: Vec::new(),
        tables: Vec::new(),
        nregs: nvals + 1,
        params: dfg
            .block_params(entry)
            .iter()
            .map(|v| v.index() as u32)
            .collect(),
        slots,
        frame_size: off,
        frame_align,
    };

    let r = |v: gyre_ir::Value| -> R { v.index() as u32 };
    for b in f.layout.blocks() {
        let last = f.layout.last_inst(b);
        for inst in f.layout.block_insts(b) {
            let data = dfg.inst(inst);
            let opc = data.opcode();
            if opc.is_terminator() != (Some(inst) == last) {
                return Err(invalid(
                    f,
                    Some(inst),
                    if opc.is_terminator() {
                        "terminator in the middle of a block"
                    } else {
                        "block does not end in a terminator"
                    },
                ));
            }
            let res = dfg.inst_result(inst);
            let rty = res.map(|v| dfg.value_type(v));
            let dst = res.map_or(scratch, r);
            let ty_of = |v: gyre_ir::Value| dfg.value_type(v);
            let need_ty = || rty.ok_or_else(|| invalid(f, Some(inst), "missing result"));
            let float_ty = |t: Type| -> Result<bool, ExecError> {
                match t {
                    Type::F32 => Ok(false),
                    Type::F64 => Ok(true),
                    _ => Err(invalid(f, Some(inst), format!("{opc} on {t}"))),
                }
            };
            let edge = |bc: &BlockCall, out: &mut DFunc| -> Result<u32, ExecError> {
                let target = bc.block;
                if !dfg.block_is_valid(target) || block_pc[target] == u32::MAX {
                    return Err(invalid(
                        f,
                        Some(inst),
                        format!("branch to {target} outside the layout"),
                    ));
                }
                let args = dfg.block_call_args(bc);
                let params = dfg.block_params(target);
                if args.len() != params.len() {
                    return Err(invalid(
                        f,
                        Some(inst),
                        format!("wrong argument count for {target}"),
                    ));
                }
                let start = out.copies.len() as u32;
                for (&a, &p) in args.iter().zip(params) {
                    if a != p {
                        out.copies.push((r(p), r(a)));
                    }
                }
                let cs = &out.copies[start as usize..];
                let overlap = cs.iter().any(|&(d, _)| cs.iter().any(|&(_, s)| s == d));
                out.edges.push(Edge {
                    pc: block_pc[target],
                    copies: start,
                    ncopies: cs.len() as u32,
                    overlap,
                });
                Ok(out.edges.len() as u32 - 1)
            };
            let op = match *data {
                D::IntConst { imm } => {
                    let t = need_ty()?;
                    Op::Const {
                        dst,
                        bits: imm as u64 & sem::mask(t.bits() as u8),
                    }
                }
                D::FloatConst { bits } => {
                    let t = need_ty()?;
                    Op::Const {
                        dst,
                        bits: bits & sem::mask(t.bits() as u8),
                    }
                }
                D::Binary {
                    opcode,
                    args: [a, b],
                    flags,
                } => {
                    let t = need_ty()?;
                    let w = t.bits() as u8;
                    let mut fl = 0;
                    if flags.contains(gyre_ir::IntFlags::NSW) {
                        fl |= sem::NSW;
                    }
                    if flags.contains(gyre_ir::IntFlags::NUW) {
                        fl |= sem::NUW;
                    }
                    if flags.contains(gyre_ir::IntFlags::EXACT) {
                        fl |= sem::EXACT;
                    }
                    let (a, b) = (r(a), r(b));
                    let m = sem::mask(w);
                    let bin = |op| match op {
                        _ if fl != 0 => Op::Bin {
                            op,
                            w,
                            flags: fl,
                            dst,
                            a,
                            b,
                        },
                        BinOp::Add => Op::Add { m, dst, a, b },
                        BinOp::Sub => Op::Sub { m, dst, a, b },
                        BinOp::Mul => Op::Mul { m, dst, a, b },
                        BinOp::And => Op::And { dst, a, b },
                        BinOp::Or => Op::Or { dst, a, b },
                        BinOp::Xor => Op::Xor { dst, a, b },
                        _ => Op::Bin {
                            op,
                            w,
                            flags: fl,
                            dst,
                            a,
                            b,
                        },
                    };
                    let dv = |op| Op::Div {
                        op,
                        w,
                        exact: fl & sem::EXACT != 0,
                        dst,
                        a,
                        b,
                    };
                    let fb = |op| -> Result<Op, ExecError> {
                        Ok(Op::FBin {
                            op,
                            f64: float_ty(t)?,
                            dst,
                            a,
                            b,
                        })
                    };
                    if opc.is_int_binary() && !t.is_int() && !t.is_ptr() {
                        return Err(invalid(f, Some(inst), format!("{opc} on {t}")));
                    }
                    match opcode {
                        Opcode::Iadd => bin(BinOp::Add),
                        Opcode::Isub => bin(BinOp::Sub),
                        Opcode::Imul => bin(BinOp::Mul),
                        Opcode::And => bin(BinOp::And),
                        Opcode::Or => bin(BinOp::Or),
                        Opcode::Xor => bin(BinOp::Xor),
                        Opcode::Shl => bin(BinOp::Shl),
                        Opcode::Lshr => bin(BinOp::Lshr),
                        Opcode::Ashr => bin(BinOp::Ashr),
                        Opcode::Smin => bin(BinOp::Smin),
                        Opcode::Smax => bin(BinOp::Smax),
                        Opcode::Umin => bin(BinOp::Umin),
                        Opcode::Umax => bin(BinOp::Umax),
                        Opcode::Mul24 => bin(BinOp::Mul24),
                        Opcode::Umul24 => bin(BinOp::Umul24),
                        Opcode::Sdiv => dv(DivOp::Sdiv),
                        Opcode::Udiv => dv(DivOp::Udiv),
                        Opcode::Srem => dv(DivOp::Srem),
                        Opcode::Urem => dv(DivOp::Urem),
                        Opcode::Fadd => fb(FBinOp::Add)?,
                        Opcode::Fsub => fb(FBinOp::Sub)?,
                        Opcode::Fmul => fb(FBinOp::Mul)?,
                        Opcode::Fdiv => fb(FBinOp::Div)?,
                        Opcode::Frem => fb(FBinOp::Rem)?,
                        Opcode::Fmin => fb(FBinOp::Min)?,
                        Opcode::Fmax => fb(FBinOp::Max)?,
                        Opcode::FdivApprox => fb(FBinOp::DivApprox)?,
                        _ => return Err(invalid(f, Some(inst), format!("{opc} is not binary"))),
                    }
                }
                D::Unary { opcode, arg } => {
                    let t = need_ty()?;
                    let a = r(arg);
                    let at = ty_of(arg);
                    let w = t.bits() as u8;
                    let cast = |op| Op::Cast { op, dst, a };
                    match opcode {
                        Opcode::Popcnt => Op::IUn {
                            op: IUnOp::Popcnt,
                            w,
                            dst,
                            a,
                        },
                        Opcode::Clz => Op::IUn {
                            op: IUnOp::Clz,
                            w,
                            dst,
                            a,
                        },
                        Opcode::Ctz => Op::IUn {
                            op: IUnOp::Ctz,
                            w,
                            dst,
                            a,
                        },
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
                        | Opcode::RsqrtApprox => {
                            let op = match opcode {
                                Opcode::Ex2Approx => FUnOp::Ex2,
                                Opcode::Lg2Approx => FUnOp::Lg2,
                                Opcode::SinApprox => FUnOp::Sin,
                                Opcode::CosApprox => FUnOp::Cos,
                                Opcode::RsqrtApprox => FUnOp::Rsqrt,
                                Opcode::Fneg => FUnOp::Neg,
                                Opcode::Fabs => FUnOp::Abs,
                                Opcode::Sqrt => FUnOp::Sqrt,
                                Opcode::Floor => FUnOp::Floor,
                                Opcode::Ceil => FUnOp::Ceil,
                                Opcode::Ftrunc => FUnOp::Trunc,
                                _ => FUnOp::Nearest,
                            };
                            Op::FUn {
                                op,
                                f64: float_ty(t)?,
                                dst,
                                a,
                            }
                        }
                        Opcode::Freeze => Op::Freeze { dst, a },
                        Opcode::Sext => cast(CastOp::Sext {
                            from: at.bits() as u8,
                            to: w,
                        }),
                        Opcode::Zext
                        | Opcode::Trunc
                        | Opcode::Bitcast
                        | Opcode::Ptrtoint
                        | Opcode::Inttoptr => {
                            if opcode == Opcode::Bitcast && at.bits() != t.bits() {
                                return Err(invalid(f, Some(inst), "bitcast between widths"));
                            }
                            cast(CastOp::Mask { to: w })
                        }
                        Opcode::Fptosi | Opcode::Fptoui => cast(CastOp::FpToInt {
                            src64: float_ty(at)?,
                            w,
                            signed: opcode == Opcode::Fptosi,
                        }),
                        Opcode::Sitofp | Opcode::Uitofp => cast(CastOp::IntToFp {
                            w: at.bits() as u8,
                            signed: opcode == Opcode::Sitofp,
                            dst64: float_ty(t)?,
                        }),
                        Opcode::Fpext => cast(CastOp::Fpext),
                        Opcode::Fptrunc => cast(CastOp::Fptrunc),
                        Opcode::AddrspaceCast => match (at, t) {
                            (Type::Ptr(from), Type::Ptr(to)) => {
                                cast(CastOp::Addrspace { from, to })
                            }
                            _ => {
                                return Err(invalid(
                                    f,
                                    Some(inst),
                                    "addrspace_cast of non-pointers",
                                ))
                            }
                        },
                        _ => return Err(invalid(f, Some(inst), format!("{opc} is not unary"))),
                    }
                }
                D::Ternary {
                    opcode,
                    args: [a, b, c],
                } => match opcode {
                    Opcode::Fma => Op::Fma {
                        f64: float_ty(need_ty()?)?,
                        dst,
                        a: r(a),
                        b: r(b),
                        c: r(c),
                    },
                    Opcode::Select => Op::Select {
                        dst,
                        c: r(a),
                        a: r(b),
                        b: r(c),
                    },
                    _ => return Err(invalid(f, Some(inst), format!("{opc} is not ternary"))),
                },
                D::IntCompare { cond, args: [a, b] } => Op::Icmp {
                    cc: cond,
                    w: ty_of(a).bits() as u8,
                    dst,
                    a: r(a),
                    b: r(b),
                },
                D::FloatCompare { cond, args: [a, b] } => Op::Fcmp {
                    cc: cond,
                    f64: float_ty(ty_of(a))?,
                    dst,
                    a: r(a),
                    b: r(b),
                },
                D::PtrAdd {
                    args: [base, idx],
                    scale,
                } => Op::PtrAdd {
                    dst,
                    base: r(base),
                    idx: r(idx),
                    w: ty_of(idx).bits() as u8,
                    scale,
                },
                D::Load { ptr, .. } => {
                    let t = need_ty()?;
                    Op::Load {
                        space: space_of(f, inst, ty_of(ptr))?,
                        size: t.bytes() as u8,
                        i1: t == Type::I1,
                        dst,
                        ptr: r(ptr),
                    }
                }
                D::Store {
                    args: [val, ptr], ..
                } => Op::Store {
                    space: space_of(f, inst, ty_of(ptr))?,
                    size: ty_of(val).bytes() as u8,
                    val: r(val),
                    ptr: r(ptr),
                },
                D::AtomicRmw {
                    op,
                    args: [ptr, val],
                    ..
                } => {
                    let vt = ty_of(val);
                    let kind = match vt {
                        Type::F32 => AtomKind::F32,
                        Type::F64 => AtomKind::F64,
                        t => AtomKind::Int(t.bits() as u8),
                    };
                    if !matches!(kind, AtomKind::Int(_))
                        && !matches!(op, AtomicOp::Add | AtomicOp::Exch)
                    {
                        return Err(invalid(f, Some(inst), format!("atomic_{op} on {vt}")));
                    }
                    if vt == Type::I1 {
                        return Err(invalid(f, Some(inst), "atomic on i1"));
                    }
                    Op::Rmw {
                        op,
                        kind,
                        space: space_of(f, inst, ty_of(ptr))?,
                        dst,
                        ptr: r(ptr),
                        val: r(val),
                    }
                }
                D::AtomicCas {
                    args: [ptr, exp, new],
                    ..
                } => Op::Cas {
                    space: space_of(f, inst, ty_of(ptr))?,
                    size: ty_of(new).bytes() as u8,
                    dst,
                    ptr: r(ptr),
                    exp: r(exp),
                    new: r(new),
                },
                D::GlobalAddr { global } => {
                    if !m.globals.is_valid(global) {
                        return Err(invalid(f, Some(inst), format!("unknown global {global}")));
                    }
                    let g = &m.globals[global];
                    let generic = need_ty()? == Type::Ptr(AddrSpace::Generic);
                    let base = if generic { window_base(g.space) } else { 0 };
                    Op::Const {
                        dst,
                        bits: base + globals[global],
                    }
                }
                D::SlotAddr { slot } => {
                    let Some(&(off, _)) = out.slots.get(slot.index()) else {
                        return Err(invalid(f, Some(inst), format!("unknown {slot}")));
                    };
                    Op::SlotAddr {
                        dst,
                        off,
                        generic: need_ty()? == Type::Ptr(AddrSpace::Generic),
                    }
                }
                D::Sreg { reg } => Op::Sreg { dst, reg },
                D::Shfl { mode, args } => {
                    out.warp.push(WarpOp {
                        kind: WarpKind::Shfl(mode),
                        dst,
                        args: args.map(r),
                    });
                    Op::Warp {
                        idx: out.warp.len() as u32 - 1,
                    }
                }
                D::Vote { mode, args: [p, m] } => {
                    out.warp.push(WarpOp {
                        kind: WarpKind::Vote(mode),
                        dst,
                        args: [r(p), r(m), 0, 0],
                    });
                    Op::Warp {
                        idx: out.warp.len() as u32 - 1,
                    }
                }
                D::WarpSync { mask } => {
                    out.warp.push(WarpOp {
                        kind: WarpKind::Sync,
                        dst,
                        args: [r(mask), 0, 0, 0],
                    });
                    Op::Warp {
                        idx: out.warp.len() as u32 - 1,
                    }
                }
                D::Fence { .. } => Op::Nop,
                D::Vprintf { args: [fmt, args] } => Op::Vprintf {
                    dst,
                    fmt: r(fmt),
                    args: r(args),
                },
                D::AssertFail { args } => Op::AssertFail {
                    args: [r(args[0]), r(args[1]), r(args[2]), r(args[3])],
                },
                D::Nullary { opcode } => match opcode {
                    Opcode::Clock => Op::Clock {
                        dst,
                        w: need_ty()?.bits() as u8,
                    },
                    Opcode::Barrier => Op::Barrier,
                    Opcode::Unreachable => Op::Unreachable,
                    _ => return Err(invalid(f, Some(inst), format!("{opc} is not nullary"))),
                },
                D::Call { func, ref args } => {
                    let idx = resolve(func)?;
                    let args = args.as_slice(&dfg.value_lists);
                    let start = out.call_args.len() as u32;
                    out.call_args.extend(args.iter().map(|&v| r(v)));
                    Op::Call {
                        func: idx,
                        args: start,
                        nargs: args.len() as u32,
                        dst,
                    }
                }
                D::Jump { ref dest } => Op::Jump {
                    edge: edge(dest, &mut out)?,
                },
                D::Brif { arg, ref blocks } => {
                    let t = edge(&blocks[0], &mut out)?;
                    let e = edge(&blocks[1], &mut out)?;
                    Op::Brif { c: r(arg), t, f: e }
                }
                D::BrTable { arg, table } => {
                    let jt = dfg.jump_table(table);
                    let w = ty_of(arg).bits() as u8;
                    let default = edge(&jt.default, &mut out)?;
                    let mut cases = Vec::with_capacity(jt.cases.len());
                    for (k, bc) in &jt.cases {
                        cases.push((*k as u64 & sem::mask(w), edge(bc, &mut out)?));
                    }
                    out.tables.push(Table { default, cases });
                    Op::BrTable {
                        idx: r(arg),
                        table: out.tables.len() as u32 - 1,
                    }
                }
                D::Return { ref args } => {
                    let args = args.as_slice(&dfg.value_lists);
                    match args {
                        [] => Op::Return {
                            val: scratch,
                            has_val: false,
                        },
                        [v] => Op::Return {
                            val: r(*v),
                            has_val: true,
                        },
                        _ => return Err(invalid(f, Some(inst), "return of several values")),
                    }
                }
            };
            out.code.push(op);
            out.locs.push((b, inst));
        }
    }
    Ok(out)
}

fn space_of(f: &Function, inst: Inst, t: Type) -> Result<AddrSpace, ExecError> {
    t.addr_space()
        .ok_or_else(|| invalid(f, Some(inst), format!("memory access through {t}")))
}
