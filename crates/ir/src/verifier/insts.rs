//! Per-opcode rules: result presence, formats, flags, operand and result types.
//!
//! Operands with invalid ids are reported by the use check; the rules here skip any
//! check that would need their types, so one bad operand gives one error.

use super::{AnyEntity, FuncCx, VerifierErrorKind as K};
use crate::entities::Inst;
use crate::function::FuncKind;
use crate::instructions::{AtomicOp, InstructionData, MemOrder, Opcode, VoteMode};
use crate::types::{AddrSpace, Type};

/// Does `imm` (sign-extended bits) fit an integer of `bits` width as a signed or an
/// unsigned number?
pub(super) fn imm_fits(imm: i64, bits: u32) -> bool {
    if bits >= 64 {
        return true;
    }
    let min = -(1i64 << (bits - 1));
    let max = (1i64 << bits) - 1;
    (min..=max).contains(&imm)
}

/// Is a cast from `a` to `r` legal for `op`? See the module doc for the rules.
fn cast_ok(op: Opcode, a: Type, r: Type) -> bool {
    let int_ptr_width = |t: Type| matches!(t, Type::I32 | Type::I64);
    match op {
        Opcode::Sext | Opcode::Zext => a.is_int() && r.is_int() && r.bits() > a.bits(),
        Opcode::Trunc => a.is_int() && r.is_int() && r.bits() < a.bits(),
        Opcode::Fpext => a == Type::F32 && r == Type::F64,
        Opcode::Fptrunc => a == Type::F64 && r == Type::F32,
        Opcode::Fptosi | Opcode::Fptoui => a.is_float() && r.is_int(),
        Opcode::Sitofp | Opcode::Uitofp => a.is_int() && r.is_float(),
        Opcode::Bitcast => a.bits() == r.bits() && !(a.is_ptr() && r.is_ptr() && a != r),
        Opcode::Ptrtoint => a.is_ptr() && int_ptr_width(r),
        Opcode::Inttoptr => int_ptr_width(a) && r.is_ptr(),
        Opcode::AddrspaceCast => match (a, r) {
            (Type::Ptr(x), Type::Ptr(y)) => (x == AddrSpace::Generic) != (y == AddrSpace::Generic),
            _ => false,
        },
        _ => false,
    }
}

/// Render an optional result type for messages.
fn show(t: Option<Type>) -> String {
    t.map_or_else(|| "nothing".to_string(), |t| t.to_string())
}

impl FuncCx<'_> {
    fn bad(&mut self, inst: Inst, kind: K, message: String) {
        self.report(AnyEntity::Inst(inst), kind, message);
    }

    /// Check result presence, format, flags and types of one valid instruction.
    pub(super) fn check_inst_types(&mut self, inst: Inst) {
        let func = self.func;
        let dfg = &func.dfg;
        let data = dfg.inst(inst);
        let op = data.opcode();
        let res = dfg.inst_result(inst);
        // `None` when absent or invalid; an invalid result id is reported by layout.
        let r = res.and_then(|v| self.ty(v));

        // Result presence. `None` = unknown (a call without a module).
        let callee = match data {
            InstructionData::Call { func: f, .. } => self.module.map(|m| m.functions.get(*f)),
            _ => None,
        };
        let wants_result = match data {
            InstructionData::Nullary { opcode } => Some(*opcode == Opcode::Clock),
            InstructionData::Store { .. }
            | InstructionData::WarpSync { .. }
            | InstructionData::AssertFail { .. }
            | InstructionData::Fence { .. }
            | InstructionData::Jump { .. }
            | InstructionData::Brif { .. }
            | InstructionData::BrTable { .. }
            | InstructionData::Return { .. } => Some(false),
            InstructionData::Call { .. } => callee.flatten().map(|c| c.sig.ret.is_some()),
            _ => Some(true),
        };
        match (wants_result, res) {
            (Some(true), None) => {
                self.bad(inst, K::MissingResult, format!("{op} must have a result"))
            }
            (Some(false), Some(v)) => self.bad(
                inst,
                K::UnexpectedResult,
                format!("{op} produces no value but has result {v}"),
            ),
            _ => {}
        }

        // Borrows only the function, not `self`, so errors can be reported meanwhile.
        let ty = |v: crate::entities::Value| dfg.value_is_valid(v).then(|| dfg.value_type(v));
        match *data {
            InstructionData::IntConst { imm } => {
                if let Some(t) = r {
                    if !t.is_int() {
                        self.bad(
                            inst,
                            K::ConstType,
                            format!("iconst must yield an integer, not {t}"),
                        );
                    } else if !imm_fits(imm, t.bits()) {
                        self.bad(inst, K::IconstRange, format!("{imm} does not fit in {t}"));
                    }
                }
            }
            InstructionData::FloatConst { bits } => {
                if let Some(t) = r {
                    if !t.is_float() {
                        self.bad(
                            inst,
                            K::ConstType,
                            format!("fconst must yield a float, not {t}"),
                        );
                    } else if t == Type::F32 && bits >> 32 != 0 {
                        self.bad(
                            inst,
                            K::FconstBits,
                            format!("f32 constant bits {bits:#x} do not fit in 32 bits"),
                        );
                    }
                }
            }
            InstructionData::Unary { opcode, arg } => {
                let Some(a) = ty(arg) else { return };
                if opcode.is_int_unary() {
                    if !(a.is_int() && r.is_none_or(|r| r == a)) {
                        self.bad(
                            inst,
                            K::IntArithType,
                            format!("{opcode} needs one integer type, got {a} -> {}", show(r)),
                        );
                    }
                } else if opcode.is_float_unary() {
                    let only = opcode.required_type().is_none_or(|t| t == a);
                    if !(a.is_float() && only && r.is_none_or(|r| r == a)) {
                        self.bad(
                            inst,
                            K::FloatArithType,
                            format!("{opcode} needs one float type, got {a} -> {}", show(r)),
                        );
                    }
                } else if opcode == Opcode::Freeze {
                    if r.is_some_and(|r| r != a) {
                        self.bad(
                            inst,
                            K::FreezeType,
                            format!("freeze of {a} yields {}", show(r)),
                        );
                    }
                } else if opcode.is_cast() {
                    if let Some(rt) = r {
                        if !cast_ok(opcode, a, rt) {
                            self.bad(
                                inst,
                                K::CastType,
                                format!("illegal {opcode} from {a} to {rt}"),
                            );
                        }
                    }
                } else {
                    self.format_mismatch(inst, opcode, "unary");
                }
            }
            InstructionData::Binary {
                opcode,
                args,
                flags,
            } => {
                if !opcode.allowed_flags().contains(flags) {
                    let names: Vec<&str> = flags.names().collect();
                    self.bad(
                        inst,
                        K::DisallowedFlags,
                        format!("{opcode} does not accept flags {}", names.join(" ")),
                    );
                }
                let (Some(a), Some(b)) = (ty(args[0]), ty(args[1])) else {
                    if !opcode.is_int_binary() && !opcode.is_float_binary() {
                        self.format_mismatch(inst, opcode, "binary");
                    }
                    return;
                };
                let same = a == b
                    && r.is_none_or(|r| r == a)
                    && opcode.required_type().is_none_or(|t| t == a);
                if opcode.is_int_binary() {
                    if !(a.is_int() && same) {
                        self.bad(
                            inst,
                            K::IntArithType,
                            format!(
                                "{opcode} needs equal integer types, got {a}, {b} -> {}",
                                show(r)
                            ),
                        );
                    }
                } else if opcode.is_float_binary() {
                    if !(a.is_float() && same) {
                        self.bad(
                            inst,
                            K::FloatArithType,
                            format!(
                                "{opcode} needs equal float types, got {a}, {b} -> {}",
                                show(r)
                            ),
                        );
                    }
                } else {
                    self.format_mismatch(inst, opcode, "binary");
                }
            }
            InstructionData::Ternary { opcode, args } => {
                let (Some(a), Some(b), Some(c)) = (ty(args[0]), ty(args[1]), ty(args[2])) else {
                    if !matches!(opcode, Opcode::Fma | Opcode::Select) {
                        self.format_mismatch(inst, opcode, "ternary");
                    }
                    return;
                };
                match opcode {
                    Opcode::Fma => {
                        if !(a.is_float() && a == b && b == c && r.is_none_or(|r| r == a)) {
                            self.bad(
                                inst,
                                K::FmaType,
                                format!(
                                    "fma needs one float type, got {a}, {b}, {c} -> {}",
                                    show(r)
                                ),
                            );
                        }
                    }
                    Opcode::Select => {
                        if !(a == Type::I1 && b == c && r.is_none_or(|r| r == b)) {
                            self.bad(
                                inst,
                                K::SelectType,
                                format!(
                                    "select needs an i1 condition and equal arm and result types, got {a}, {b}, {c} -> {}",
                                    show(r)
                                ),
                            );
                        }
                    }
                    _ => self.format_mismatch(inst, opcode, "ternary"),
                }
            }
            InstructionData::IntCompare { args, .. } => {
                let (Some(a), Some(b)) = (ty(args[0]), ty(args[1])) else {
                    return;
                };
                if !((a.is_int() || a.is_ptr()) && a == b && r.is_none_or(|r| r == Type::I1)) {
                    self.bad(
                        inst,
                        K::IcmpType,
                        format!(
                            "icmp needs two integers or pointers of one type and yields i1, got {a}, {b} -> {}",
                            show(r)
                        ),
                    );
                }
            }
            InstructionData::FloatCompare { args, .. } => {
                let (Some(a), Some(b)) = (ty(args[0]), ty(args[1])) else {
                    return;
                };
                if !(a.is_float() && a == b && r.is_none_or(|r| r == Type::I1)) {
                    self.bad(
                        inst,
                        K::FcmpType,
                        format!(
                            "fcmp needs two floats of one type and yields i1, got {a}, {b} -> {}",
                            show(r)
                        ),
                    );
                }
            }
            InstructionData::PtrAdd { args, scale } => {
                if scale == 0 {
                    self.bad(
                        inst,
                        K::PtrAddScale,
                        "ptradd scale must be positive".to_string(),
                    );
                }
                let (Some(a), Some(b)) = (ty(args[0]), ty(args[1])) else {
                    return;
                };
                if !(a.is_ptr() && b.is_int() && r.is_none_or(|r| r == a)) {
                    self.bad(
                        inst,
                        K::PtrAddType,
                        format!(
                            "ptradd needs a pointer base and an integer index and yields the base type, got {a}, {b} -> {}",
                            show(r)
                        ),
                    );
                }
            }
            InstructionData::Load { ptr, .. } => {
                if let Some(p) = ty(ptr) {
                    if !p.is_ptr() {
                        self.bad(
                            inst,
                            K::LoadType,
                            format!("load through {p}, not a pointer"),
                        );
                    }
                }
            }
            InstructionData::Store { args, .. } => match ty(args[1]) {
                Some(Type::Ptr(AddrSpace::Const)) => self.check_store_space(inst, args[1]),
                Some(p) if !p.is_ptr() => self.bad(
                    inst,
                    K::StoreType,
                    format!("store through {p}, not a pointer"),
                ),
                _ => {}
            },
            InstructionData::AtomicRmw { op: aop, args, .. } => {
                self.check_atomic_ptr(inst, args[0]);
                let Some(v) = ty(args[1]) else { return };
                let val_ok = match aop {
                    AtomicOp::Inc | AtomicOp::Dec => v == Type::I32,
                    AtomicOp::Add => matches!(v, Type::I32 | Type::I64) || v.is_float(),
                    _ => matches!(v, Type::I32 | Type::I64),
                };
                if !val_ok || r.is_some_and(|r| r != v) {
                    self.bad(
                        inst,
                        K::AtomicType,
                        format!(
                            "atomic_{aop} needs an i32/i64 value (f32/f64 only for add, i32 only for inc/dec) and yields its type, got {v} -> {}",
                            show(r)
                        ),
                    );
                }
            }
            InstructionData::Shfl { mode, args } => {
                let tys = args.map(ty);
                let ok = matches!(tys[0], None | Some(Type::I32 | Type::F32))
                    && tys[1..].iter().all(|t| t.is_none_or(|t| t == Type::I32))
                    && (r.is_none() || r == tys[0]);
                if !ok {
                    self.bad(
                        inst,
                        K::WarpOpType,
                        format!(
                            "shfl_{mode} needs an i32/f32 value and i32 lane, clamp and mask, and yields the value's type, got {} -> {}",
                            show(tys[0]),
                            show(r)
                        ),
                    );
                }
            }
            InstructionData::Vote { mode, args } => {
                let want = if mode == VoteMode::Ballot {
                    Type::I32
                } else {
                    Type::I1
                };
                let ok = ty(args[0]).is_none_or(|t| t == Type::I1)
                    && ty(args[1]).is_none_or(|t| t == Type::I32)
                    && r.is_none_or(|r| r == want);
                if !ok {
                    self.bad(
                        inst,
                        K::WarpOpType,
                        format!(
                            "vote_{mode} needs an i1 predicate and an i32 mask and yields {want}, got {} -> {}",
                            show(ty(args[0])),
                            show(r)
                        ),
                    );
                }
            }
            InstructionData::WarpSync { mask } => {
                if ty(mask).is_some_and(|t| t != Type::I32) {
                    self.bad(
                        inst,
                        K::WarpOpType,
                        format!("warp_sync needs an i32 mask, got {}", show(ty(mask))),
                    );
                }
            }
            InstructionData::Vprintf { args } => {
                let gp = Type::Ptr(AddrSpace::Generic);
                let ok = args.iter().all(|&a| ty(a).is_none_or(|t| t == gp))
                    && r.is_none_or(|r| r == Type::I32);
                if !ok {
                    self.bad(
                        inst,
                        K::SyscallType,
                        format!(
                            "vprintf takes two generic pointers and yields i32, got {}, {} -> {}",
                            show(ty(args[0])),
                            show(ty(args[1])),
                            show(r)
                        ),
                    );
                }
            }
            InstructionData::AssertFail { args } => {
                let gp = Type::Ptr(AddrSpace::Generic);
                let want = [gp, gp, Type::I32, gp];
                let ok = args
                    .iter()
                    .zip(want)
                    .all(|(&a, w)| ty(a).is_none_or(|t| t == w));
                if !ok {
                    self.bad(
                        inst,
                        K::SyscallType,
                        format!(
                            "assert_fail takes (ptr, ptr, i32, ptr), got ({}, {}, {}, {})",
                            show(ty(args[0])),
                            show(ty(args[1])),
                            show(ty(args[2])),
                            show(ty(args[3]))
                        ),
                    );
                }
            }
            InstructionData::Fence { order, .. } => {
                if !matches!(order, MemOrder::AcqRel | MemOrder::SeqCst) {
                    self.bad(
                        inst,
                        K::WarpOpType,
                        format!("a fence is acq_rel or seq_cst, not {order}"),
                    );
                }
            }
            InstructionData::AtomicCas { args, .. } => {
                self.check_atomic_ptr(inst, args[0]);
                let (Some(e), Some(n)) = (ty(args[1]), ty(args[2])) else {
                    return;
                };
                if !(matches!(e, Type::I32 | Type::I64) && e == n && r.is_none_or(|r| r == e)) {
                    self.bad(
                        inst,
                        K::AtomicType,
                        format!(
                            "atomic_cas needs i32/i64 expected and new values of one type and yields it, got {e}, {n} -> {}",
                            show(r)
                        ),
                    );
                }
            }
            InstructionData::GlobalAddr { global } => match self.module {
                Some(m) => match m.globals.get(global) {
                    None => self.bad(
                        inst,
                        K::InvalidGlobal,
                        format!("{global} is not a global of the module"),
                    ),
                    Some(g) => {
                        if r.is_some_and(|r| r != Type::Ptr(g.space)) {
                            self.bad(
                                inst,
                                K::GlobalAddrType,
                                format!(
                                    "address of @{} must be {}, not {}",
                                    g.name,
                                    Type::Ptr(g.space),
                                    show(r)
                                ),
                            );
                        }
                    }
                },
                None => {
                    if r.is_some_and(|r| !r.is_ptr()) {
                        self.bad(
                            inst,
                            K::GlobalAddrType,
                            format!("global_addr must yield a pointer, not {}", show(r)),
                        );
                    }
                }
            },
            InstructionData::SlotAddr { slot } => {
                if !func.slots.is_valid(slot) {
                    self.bad(
                        inst,
                        K::InvalidSlot,
                        format!("{slot} is not a slot of the function"),
                    );
                }
                if r.is_some_and(|r| r != Type::Ptr(AddrSpace::Local)) {
                    self.bad(
                        inst,
                        K::SlotAddrType,
                        format!("slot_addr must yield ptr.local, not {}", show(r)),
                    );
                }
            }
            InstructionData::Sreg { reg } => {
                if r.is_some_and(|r| r != Type::I32) {
                    self.bad(inst, K::SregType, format!("{reg} is i32, not {}", show(r)));
                }
            }
            InstructionData::Nullary { opcode } => {
                if !matches!(
                    opcode,
                    Opcode::Barrier | Opcode::Unreachable | Opcode::Clock
                ) {
                    self.format_mismatch(inst, opcode, "nullary");
                } else if opcode == Opcode::Clock
                    && r.is_some_and(|r| !matches!(r, Type::I32 | Type::I64))
                {
                    self.bad(
                        inst,
                        K::WarpOpType,
                        format!("clock yields i32 or i64, not {}", show(r)),
                    );
                }
            }
            InstructionData::Call { func: f, .. } => {
                let Some(callee) = callee else { return };
                let Some(callee) = callee else {
                    self.bad(
                        inst,
                        K::UnknownCallee,
                        format!("{f} is not a function of the module"),
                    );
                    return;
                };
                if callee.kind == FuncKind::Kernel {
                    self.bad(
                        inst,
                        K::CallToKernel,
                        format!(
                            "call of kernel @{}; kernels are launched, not called",
                            callee.name
                        ),
                    );
                }
                let args = dfg.inst_args(inst);
                let params = &callee.sig.params;
                if args.len() != params.len() {
                    self.bad(
                        inst,
                        K::CallArgCount,
                        format!(
                            "@{} takes {} arguments, {} given",
                            callee.name,
                            params.len(),
                            args.len()
                        ),
                    );
                } else {
                    for (n, (&a, &p)) in args.iter().zip(params).enumerate() {
                        if let Some(at) = ty(a) {
                            if at != p {
                                self.bad(
                                    inst,
                                    K::CallArgType,
                                    format!(
                                        "argument #{n} {a} is {at}, @{} expects {p}",
                                        callee.name
                                    ),
                                );
                            }
                        }
                    }
                }
                if let (Some(rt), Some(ct)) = (r, callee.sig.ret) {
                    if rt != ct {
                        self.bad(
                            inst,
                            K::CallResultType,
                            format!("@{} returns {ct}, result is {rt}", callee.name),
                        );
                    }
                }
            }
            InstructionData::Jump { .. } => {}
            InstructionData::Brif { arg, .. } => {
                if let Some(c) = ty(arg) {
                    if c != Type::I1 {
                        self.bad(
                            inst,
                            K::BranchCondType,
                            format!("brif condition is {c}, not i1"),
                        );
                    }
                }
            }
            InstructionData::BrTable { arg, table } => {
                let scrutinee = ty(arg);
                if let Some(s) = scrutinee {
                    if !s.is_int() {
                        self.bad(
                            inst,
                            K::BranchCondType,
                            format!("br_table scrutinee is {s}, not an integer"),
                        );
                    }
                }
                if !dfg.jump_table_is_valid(table) {
                    self.bad(
                        inst,
                        K::InvalidJumpTable,
                        format!("{table} is not a jump table of the function"),
                    );
                    return;
                }
                let Some(s) = scrutinee.filter(|s| s.is_int()) else {
                    return;
                };
                self.check_cases(inst, table, s);
            }
            InstructionData::Return { .. } => {
                let args = dfg.inst_args(inst);
                let want = match func.kind {
                    FuncKind::Kernel => None,
                    FuncKind::Device => func.sig.ret,
                };
                if args.len() != usize::from(want.is_some()) {
                    self.bad(
                        inst,
                        K::ReturnArgCount,
                        format!(
                            "return of {} values; the function returns {}",
                            args.len(),
                            show(want)
                        ),
                    );
                } else if let (Some(&a), Some(w)) = (args.first(), want) {
                    if let Some(at) = ty(a) {
                        if at != w {
                            self.bad(
                                inst,
                                K::ReturnType,
                                format!("return of {at}; the function returns {w}"),
                            );
                        }
                    }
                }
            }
        }
    }

    fn format_mismatch(&mut self, inst: Inst, opcode: Opcode, format: &str) {
        self.bad(
            inst,
            K::OpcodeFormatMismatch,
            format!("{opcode} is not a {format} opcode"),
        );
    }

    /// An atomic's address: a pointer into global, shared or generic space.
    fn check_atomic_ptr(&mut self, inst: Inst, ptr: crate::entities::Value) {
        match self.ty(ptr) {
            Some(Type::Ptr(AddrSpace::Global | AddrSpace::Shared | AddrSpace::Generic)) | None => {}
            Some(Type::Ptr(sp)) => self.bad(
                inst,
                K::AtomicAddrSpace,
                format!("atomic through a {sp} pointer; only global, shared and generic allowed"),
            ),
            Some(t) => self.bad(
                inst,
                K::AtomicType,
                format!("atomic through {t}, not a pointer"),
            ),
        }
    }

    /// A `store` through `ptr` does not write const space (the one type rule that the
    /// trusted verification keeps: LLVM allows such a store).
    pub(super) fn check_store_space(&mut self, inst: Inst, ptr: crate::entities::Value) {
        let dfg = &self.func.dfg;
        if dfg.value_is_valid(ptr) && dfg.value_type(ptr) == Type::Ptr(AddrSpace::Const) {
            self.bad(inst, K::StoreToConst, "store into const space".to_string());
        }
    }

    /// `br_table` cases fit the scrutinee type and are distinct modulo its width.
    fn check_cases(&mut self, inst: Inst, table: crate::entities::JumpTable, s: Type) {
        let jt = self.func.dfg.jump_table(table);
        let bits = s.bits();
        let mask = if bits >= 64 {
            u64::MAX
        } else {
            (1u64 << bits) - 1
        };
        let mut cases = core::mem::take(self.cases);
        cases.clear();
        let mut bad_range = Vec::new();
        for (k, &(imm, _)) in jt.cases.iter().enumerate() {
            if imm_fits(imm, bits) {
                cases.push((imm as u64 & mask, k));
            } else {
                bad_range.push(imm);
            }
        }
        for imm in bad_range {
            self.bad(
                inst,
                K::BrTableCaseRange,
                format!("case value {imm} does not fit the scrutinee type {s}"),
            );
        }
        // Sorting (not hashing) keeps the report order deterministic.
        cases.sort_unstable();
        for w in cases.windows(2) {
            if w[0].0 == w[1].0 {
                let imm = jt.cases[w[1].1].0;
                self.bad(
                    inst,
                    K::BrTableDuplicateCase,
                    format!("case value {imm} appears more than once"),
                );
            }
        }
        *self.cases = cases;
    }
}
