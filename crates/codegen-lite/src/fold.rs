//! Address folding: the `ptradd`s and index extensions that need no PTX instruction of
//! their own; and block parameters that need no copy ([`single_edge_aliases`]).
//!
//! - `q = ptradd p, c, s` with a constant index `c`, whose every use is the address of a
//!   load, store or atomic, is not emitted: those accesses address `[p+c*s]` (PTX's
//!   `[reg+imm]` form, a signed 32-bit offset), as llc's `[%rd17+-4]`.
//! - `x64 = sext x` (or `zext`) of an `i32` whose only use is the index of a `ptradd` is
//!   not emitted: the `ptradd` is `mad.wide.s32 d, x, s, p` (`.u32` for `zext`), one
//!   instruction instead of `cvt.s64.s32` + `mad.lo.s64`, keeping the index math 32-bit.
//! - A constant used only as such folded indices is not emitted either.
//! - Under `-C fp-contract=on` an `fmul` whose only use is an `fadd`, both `contract`
//!   (under `fast`, any such pair), is not emitted: the `fadd` is `fma.rn` (llc's
//!   contraction; one rounding instead of two, which `contract` allows).
//! - An `i32`/`i64` `imul` whose only use is an `iadd` is not emitted: the `iadd` is
//!   `mad.lo.s32`/`.s64` (wrapping arithmetic, the same bits).
//!
//! Skipping the defining instruction is sound because every register of this back end
//! is written once per execution of its definition (block parameters on entry to their
//! block): the folded value's operands dominate the use, and no path from their
//! definition to the use redefines them without passing the folded definition again.
//! O(instructions), one scan for use counts and one for decisions.

use crate::FpContract;
use cranelift_entity::SecondaryMap;
use gyre_analysis::Cfg;
use gyre_ir::{Block, Function, InstructionData, IntFlags, Opcode, Type, Value, ValueDef};

/// How a value is emitted.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub(crate) enum Fold {
    /// By its own instruction.
    #[default]
    None,
    /// Not at all: a `sext`/`zext` of an `i32` the one `ptradd` using it widens itself.
    Ext,
    /// Not at all: a constant used only as the index of folded `ptradd`s, or a
    /// function parameter nothing uses (not loaded from the parameter space).
    Unused,
    /// Not at all: an `fmul` the one `fadd` using it computes as `fma.rn`.
    Fused,
    /// Not at all: an `i32`/`i64` `imul` the one `iadd` using it computes as `mad.lo`.
    MulAdd,
    /// Not at all: an address `base + off` written into each access.
    Addr {
        /// The unfolded base pointer.
        base: Value,
        /// The byte offset (fits PTX's signed 32-bit address offset).
        off: i64,
    },
}

/// The signed value of an integer constant of type `ty`.
fn signed_imm(imm: i64, ty: Type) -> Option<i64> {
    match ty {
        Type::I64 => Some(imm),
        Type::I32 => Some(imm as i32 as i64),
        Type::I16 => Some(imm as i16 as i64),
        Type::I8 => Some(imm as i8 as i64),
        _ => None,
    }
}

/// Decide the folds of `f`.
pub(crate) fn address_folds(f: &Function, contract: FpContract) -> SecondaryMap<Value, Fold> {
    let dfg = &f.dfg;
    // Sized up front: a map grown one index at a time reallocates all the way up.
    let n = dfg.num_values();
    let mut folds: SecondaryMap<Value, Fold> = SecondaryMap::with_capacity(n);
    let mut uses: SecondaryMap<Value, u32> = SecondaryMap::with_capacity(n);
    let mut addr_uses: SecondaryMap<Value, u32> = SecondaryMap::with_capacity(n);
    for b in f.layout.blocks() {
        for inst in f.layout.block_insts(b) {
            dfg.for_each_inst_value(inst, |v| uses[v] += 1);
            match *dfg.inst(inst) {
                InstructionData::Load { ptr, .. } => addr_uses[ptr] += 1,
                InstructionData::Store { args, .. } => addr_uses[args[1]] += 1,
                InstructionData::AtomicRmw { args, .. } => addr_uses[args[0]] += 1,
                InstructionData::AtomicCas { args, .. } => addr_uses[args[0]] += 1,
                _ => {}
            }
        }
    }
    // Uses of each constant consumed by folded `ptradd`s.
    let mut consumed: SecondaryMap<Value, u32> = SecondaryMap::new();
    let def = |v: Value| match dfg.value_def(v) {
        ValueDef::Result(i) => Some(dfg.inst(i)),
        _ => None,
    };
    let may_fuse = |flags: IntFlags| match contract {
        FpContract::Off => false,
        FpContract::On => flags.contains(IntFlags::CONTRACT),
        FpContract::Fast => true,
    };
    for b in f.layout.blocks() {
        for inst in f.layout.block_insts(b) {
            if let InstructionData::Binary {
                opcode: Opcode::Fadd,
                args,
                flags,
            } = *dfg.inst(inst)
            {
                if may_fuse(flags) && args[0] != args[1] {
                    // At most one operand is fused; the emitter tries them in this order.
                    let fusable = |v: Value| {
                        uses[v] == 1
                            && matches!(def(v), Some(&InstructionData::Binary {
                                opcode: Opcode::Fmul,
                                flags,
                                ..
                            }) if may_fuse(flags))
                    };
                    if let Some(&m) = args.iter().find(|&&v| fusable(v)) {
                        folds[m] = Fold::Fused;
                    }
                }
                continue;
            }
            if let InstructionData::Binary {
                opcode: Opcode::Iadd,
                args,
                ..
            } = *dfg.inst(inst)
            {
                let ty = dfg.value_type(args[0]);
                if matches!(ty, Type::I32 | Type::I64) && args[0] != args[1] {
                    // At most one operand; the emitter tries them in this order.
                    let fusable = |v: Value| {
                        uses[v] == 1
                            && matches!(
                                def(v),
                                Some(&InstructionData::Binary {
                                    opcode: Opcode::Imul,
                                    ..
                                })
                            )
                    };
                    if let Some(&m) = args.iter().find(|&&v| fusable(v)) {
                        folds[m] = Fold::MulAdd;
                    }
                }
                continue;
            }
            let InstructionData::PtrAdd { args, scale } = *dfg.inst(inst) else {
                continue;
            };
            let Some(r) = dfg.inst_result(inst) else {
                continue;
            };
            let [base, index] = args;
            match def(index) {
                Some(&InstructionData::IntConst { imm })
                    if uses[r] > 0 && addr_uses[r] == uses[r] =>
                {
                    let off = signed_imm(imm, dfg.value_type(index))
                        .and_then(|c| c.checked_mul(i64::from(scale)));
                    if let Some(off) = off.filter(|o| i32::try_from(*o).is_ok()) {
                        folds[r] = Fold::Addr { base, off };
                        consumed[index] += 1;
                        if consumed[index] == uses[index] {
                            folds[index] = Fold::Unused;
                        }
                    }
                }
                Some(&InstructionData::Unary {
                    opcode: Opcode::Sext | Opcode::Zext,
                    arg,
                }) if uses[index] == 1
                    && index != base
                    && dfg.value_type(arg) == Type::I32
                    && dfg.value_type(index) == Type::I64
                    && scale <= i32::MAX as u32 =>
                {
                    folds[index] = Fold::Ext;
                }
                _ => {}
            }
        }
    }
    for p in f.entry_block().map_or(&[][..], |e| dfg.block_params(e)) {
        if uses[*p] == 0 {
            folds[*p] = Fold::Unused;
        }
    }
    folds
}

/// Block parameters that share their argument's register: every parameter of a
/// reachable block (not the entry) with exactly one incoming edge is that edge's
/// argument on every execution, so it needs no copy. An SSA copy propagation, sound
/// for the same reason as the folds above; the map points each such parameter at its
/// argument (which may itself be one; chains follow strict dominance, so they end).
pub(crate) fn single_edge_aliases(f: &Function, cfg: &Cfg) -> SecondaryMap<Value, Option<Value>> {
    let dfg = &f.dfg;
    let mut alias: SecondaryMap<Value, Option<Value>> =
        SecondaryMap::with_capacity(dfg.num_values());
    let mut edges: SecondaryMap<Block, u32> = SecondaryMap::with_capacity(dfg.num_blocks());
    let entry = f.entry_block();
    for &b in cfg.rpo() {
        for inst in f.layout.block_insts(b) {
            dfg.for_each_dest(inst, |bc| edges[bc.block] += 1);
        }
    }
    for &b in cfg.rpo() {
        for inst in f.layout.block_insts(b) {
            dfg.for_each_dest(inst, |bc| {
                if edges[bc.block] != 1 || Some(bc.block) == entry {
                    return;
                }
                for (&p, &a) in dfg
                    .block_params(bc.block)
                    .iter()
                    .zip(dfg.block_call_args(bc))
                {
                    if p != a {
                        alias[p] = Some(a);
                    }
                }
            });
        }
    }
    alias
}
