//! Address folding: the `ptradd`s and index extensions that need no PTX instruction of
//! their own; and block parameters that need no copy ([`single_edge_aliases`]), narrow
//! `zext`s that need no `mov` ([`add_zext_aliases`]), and narrowing `trunc`s read only by
//! narrow stores and `sext` that need no `and` ([`add_trunc_aliases`]).
//!
//! - `q = ptradd p, c, s` with a constant index `c`, whose every use is the address of a
//!   load, store or atomic, is not emitted: those accesses address `[p+c*s]` (PTX's
//!   `[reg+imm]` form, a signed 32-bit offset), as llc's `[%rd17+-4]`.
//! - `x64 = sext x` (or `zext`) of an `i32` whose every use is the index of a `ptradd` is
//!   not emitted: each such `ptradd` is `mad.wide.s32 d, x, s, p` (`.u32` for `zext`),
//!   instead of one `cvt.s64.s32` plus a `mad.lo.s64` each, keeping the index math
//!   32-bit.
//! - A constant used only as such folded indices is not emitted either.
//! - `q = ptradd p, sext(x + c), s` with an `nsw` add (or `sub`) used only there, whose
//!   every use is an access address, is `mad.wide.s32 q', x, s, p` and the accesses
//!   address `[q'+c*s]` ([`Fold::Shifted`]): no add, no `cvt`, as llc's `[%rd8+4]`.
//! - Under `-C fp-contract=on` an `fmul` whose only use is an `fadd`, both `contract`
//!   (under `fast`, any such pair), is not emitted: the `fadd` is `fma.rn` (llc's
//!   contraction; one rounding instead of two, which `contract` allows).
//! - An `i32`/`i64` `imul` whose only use is an `iadd` is not emitted: the `iadd` is
//!   `mad.lo.s32`/`.s64` (wrapping arithmetic, the same bits).
//! - An `i32`/`i64`/`f32`/`f64` constant whose every use is an operand PTX takes as an
//!   immediate ([`imm_slots`], or a branch argument, which its edge's copy moves) is
//!   not emitted: each use writes the immediate, as llc does (`add.s32 %r2, %r1, -1`),
//!   instead of a `mov` into a register first.
//!
//! Skipping the defining instruction is sound because a register of this back end holds
//! its value wherever that value is live: written once per execution of its definition
//! (block parameters on entry to their block), and, when block parameters share
//! registers with their arguments ([`crate::coalesce`]), never written by another value
//! of its class while live, where a folded value's uses count as uses of its operands.
//! The folded value's operands dominate the use, and no path from their definition to
//! the use redefines them without passing the folded definition again.
//! O(instructions), one scan for use counts and one for decisions.

use crate::FpContract;
use cranelift_entity::{EntityRef, SecondaryMap};
use gyre_analysis::Cfg;
use gyre_ir::{
    AddrSpace, Block, DataFlowGraph, Function, Inst, InstructionData, IntFlags, Opcode, Type,
    Value, ValueDef,
};

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
    /// Not at all: a constant each use writes as an immediate operand.
    Imm,
    /// Not at all: an `iadd nsw x, c` (or `isub nsw x, c`) whose only use is the `sext`
    /// index of a [`Fold::Shifted`] `ptradd`, which widens `x` itself.
    IndexAdd {
        /// The non-constant operand.
        x: Value,
    },
    /// Emitted, but as `p + sext(x) * s` for `ptradd p, sext(x + c), s`: every use is
    /// an access address, written `[reg+off]` with `off = c * s` (an `nsw` add cannot
    /// wrap, so `sext(x + c) = sext(x) + c`), as llc's `[%rd8+4]`.
    Shifted {
        /// The byte offset each access adds.
        off: i64,
    },
    /// Not at all: an address `base + off` written into each access.
    Addr {
        /// The unfolded base pointer.
        base: Value,
        /// The byte offset (fits PTX's signed 32-bit address offset).
        off: i64,
    },
}

/// A map with an entry (the default) for each of the first `n` keys, so that indexing
/// it never grows it.
pub(crate) fn dense<K: EntityRef, V: Clone + Default>(n: usize) -> SecondaryMap<K, V> {
    let mut m = SecondaryMap::with_capacity(n);
    m.resize(n);
    m
}

/// A `u32` per entity below `n`, all zero at first: one zeroed allocation
/// (`vec![0; n]`, a `calloc`, which needs no clearing where the pages are fresh), indexed
/// without `SecondaryMap`'s default for keys past the end (every key here is a value of
/// the function, below its value count). The use counters and register numbers cover
/// every value ever created, most of them dead after the optimizer.
pub(crate) struct Zeroed<K> {
    counts: Vec<u32>,
    key: core::marker::PhantomData<K>,
}

impl<K: EntityRef> Zeroed<K> {
    /// `n` zeros, one per key below `n`.
    pub(crate) fn new(n: usize) -> Zeroed<K> {
        Zeroed {
            counts: vec![0; n],
            key: core::marker::PhantomData,
        }
    }

    /// The counts, by key index.
    pub(crate) fn into_vec(self) -> Vec<u32> {
        self.counts
    }
}

impl<K: EntityRef> core::ops::Index<K> for Zeroed<K> {
    type Output = u32;
    #[inline]
    fn index(&self, k: K) -> &u32 {
        &self.counts[k.index()]
    }
}

impl<K: EntityRef> core::ops::IndexMut<K> for Zeroed<K> {
    #[inline]
    fn index_mut(&mut self, k: K) -> &mut u32 {
        &mut self.counts[k.index()]
    }
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

/// The byte offset `sext(c) * scale` (wrapping, as 64-bit address arithmetic does) of
/// a `ptradd` whose index is the integer constant `c`, if it is one. Such an index
/// never needs a register: a folded `ptradd` writes the offset into its accesses, any
/// other is `add.s64 r, base, offset` (`FnEmitter`'s `ptradd`), whatever else uses it.
pub(crate) fn const_index_offset(dfg: &DataFlowGraph, index: Value, scale: u32) -> Option<i64> {
    let ValueDef::Result(inst) = dfg.value_def(index) else {
        return None;
    };
    let InstructionData::IntConst { imm } = *dfg.inst(inst) else {
        return None;
    };
    signed_imm(imm, dfg.value_type(index)).map(|c| c.wrapping_mul(i64::from(scale)))
}

/// Decide the folds of `f`. Each value folded into its uses that reads registers there
/// (`Fused`, `MulAdd`, `Addr`, `Ext`, `IndexAdd`) is pushed on `reading` too (maybe more
/// than once), for coalescing's liveness (`crate::coalesce`).
pub(crate) fn address_folds(
    f: &Function,
    contract: FpContract,
    reading: &mut Vec<Value>,
) -> SecondaryMap<Value, Fold> {
    let dfg = &f.dfg;
    // Every map covers all values up front: a map grown on first touch of each new
    // index calls its resize path (and reallocates) all the way up.
    let n = dfg.num_values();
    let mut folds: SecondaryMap<Value, Fold> = dense(n);
    let mut uses: Zeroed<Value> = Zeroed::new(n);
    let mut addr_uses: Zeroed<Value> = Zeroed::new(n);
    // Uses as the index (not also the base) of a `ptradd` with a scale `mad.wide` takes.
    let mut index_uses: Zeroed<Value> = Zeroed::new(n);
    // The instructions the decisions below look at (`fadd`, `iadd`, `ptradd`), in
    // program order, and the constants' results: the later walks visit only these.
    let mut candidates: Vec<Inst> = Vec::new();
    let mut constants: Vec<Value> = Vec::new();
    // Uses at an immediate slot ([`imm_slots`]) or as a branch argument (an edge's copy
    // moves an immediate as well as a register), counted in the same walk; the slots of
    // an instruction found later to be a `Fold::IndexAdd` (not emitted) are taken back
    // out below.
    let mut imm_uses: Zeroed<Value> = Zeroed::new(n);
    for b in f.layout.blocks() {
        for inst in f.layout.block_insts(b) {
            let data = dfg.inst(inst);
            let args = dfg.inst_args(inst);
            for &v in args {
                uses[v] += 1;
            }
            for &k in imm_slots(data, dfg) {
                imm_uses[args[k]] += 1;
            }
            match *data {
                InstructionData::PtrAdd { args, scale } => {
                    candidates.push(inst);
                    if args[0] != args[1] && scale <= i32::MAX as u32 {
                        index_uses[args[1]] += 1
                    }
                }
                InstructionData::Binary {
                    opcode: Opcode::Fadd | Opcode::Iadd,
                    ..
                } => candidates.push(inst),
                InstructionData::IntConst { .. } | InstructionData::FloatConst { .. } => {
                    constants.extend(dfg.inst_result(inst));
                }
                InstructionData::Load { ptr, .. } => addr_uses[ptr] += 1,
                InstructionData::Store { args, .. } => addr_uses[args[1]] += 1,
                InstructionData::AtomicRmw { args, .. } => addr_uses[args[0]] += 1,
                InstructionData::AtomicCas { args, .. } => addr_uses[args[0]] += 1,
                _ => {}
            }
        }
        // Only a block's last instruction branches (the verifier's terminator rule).
        if let Some(term) = f.layout.last_inst(b) {
            dfg.for_each_dest(term, |bc| {
                for &a in dfg.block_call_args(bc) {
                    uses[a] += 1;
                    imm_uses[a] += 1;
                }
            });
        }
    }
    // The values made `Fold::IndexAdd` below.
    let mut index_adds: Vec<Value> = Vec::new();
    // Uses of each constant consumed by folded `ptradd`s.
    let mut consumed: Zeroed<Value> = Zeroed::new(n);
    let def = |v: Value| match dfg.value_def(v) {
        ValueDef::Result(i) => Some(dfg.inst(i)),
        _ => None,
    };
    // `iadd nsw x, c` / `isub nsw x, c` (i32, `x` emitted as itself) as `(x, c * scale)`.
    let index_add = |v: Value, scale: u32| -> Option<(Value, i64)> {
        let Some(&InstructionData::Binary {
            opcode: opcode @ (Opcode::Iadd | Opcode::Isub),
            args,
            flags,
        }) = def(v)
        else {
            return None;
        };
        if !flags.contains(IntFlags::NSW) || args[0] == args[1] {
            return None;
        }
        let konst = |a: Value| match def(a) {
            Some(&InstructionData::IntConst { imm }) => Some(i64::from(imm as i32)),
            _ => None,
        };
        let (x, c) = match (konst(args[0]), konst(args[1])) {
            (None, Some(c)) => (args[0], c),
            (Some(c), None) if opcode == Opcode::Iadd => (args[1], c),
            _ => return None,
        };
        // `x` must have its own register: not an `imul` the add would fuse.
        let fusable_mul = uses[x] == 1
            && matches!(
                def(x),
                Some(&InstructionData::Binary {
                    opcode: Opcode::Imul,
                    ..
                })
            );
        if fusable_mul {
            return None;
        }
        let c = if opcode == Opcode::Isub {
            c.checked_neg()?
        } else {
            c
        };
        let off = c.checked_mul(i64::from(scale))?;
        i32::try_from(off).is_ok().then_some((x, off))
    };
    let may_fuse = |flags: IntFlags| match contract {
        FpContract::Off => false,
        FpContract::On => flags.contains(IntFlags::CONTRACT),
        FpContract::Fast => true,
    };
    for &inst in &candidates {
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
                    reading.push(m);
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
                    reading.push(m);
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
            Some(&InstructionData::IntConst { imm }) => {
                if const_index_offset(dfg, index, scale).is_none() {
                    continue;
                }
                // Written as an immediate either way (see `const_index_offset`).
                consumed[index] += 1;
                if consumed[index] == uses[index] {
                    folds[index] = Fold::Unused;
                }
                let off = signed_imm(imm, dfg.value_type(index))
                    .and_then(|c| c.checked_mul(i64::from(scale)));
                if let Some(off) = off.filter(|o| i32::try_from(*o).is_ok()) {
                    if uses[r] > 0 && addr_uses[r] == uses[r] {
                        folds[r] = Fold::Addr { base, off };
                        reading.push(r);
                    }
                }
            }
            Some(&InstructionData::Unary {
                opcode: Opcode::Sext,
                arg,
            }) if uses[index] == 1
                && index_uses[index] == 1
                && uses[arg] == 1
                && uses[r] > 0
                && addr_uses[r] == uses[r]
                && dfg.value_type(arg) == Type::I32
                && dfg.value_type(index) == Type::I64
                && index_add(arg, scale).is_some() =>
            {
                let (x, off) = index_add(arg, scale).expect("checked");
                folds[index] = Fold::Ext;
                folds[arg] = Fold::IndexAdd { x };
                reading.extend([index, arg]);
                index_adds.push(arg);
                folds[r] = Fold::Shifted { off };
                // The constant operand is used by the add alone here, never emitted.
                if let Some(&InstructionData::Binary { args, .. }) = def(arg) {
                    if let Some(c) = args.into_iter().find(|&v| v != x) {
                        consumed[c] += 1;
                    }
                }
            }
            Some(&InstructionData::Unary {
                opcode: Opcode::Sext | Opcode::Zext,
                arg,
            }) if index_uses[index] == uses[index]
                && dfg.value_type(arg) == Type::I32
                && dfg.value_type(index) == Type::I64 =>
            {
                // Every use is such an index (this one included): each `ptradd`
                // widens the `i32` itself.
                folds[index] = Fold::Ext;
                reading.push(index);
            }
            _ => {}
        }
    }
    for p in f.entry_block().map_or(&[][..], |e| dfg.block_params(e)) {
        if uses[*p] == 0 {
            folds[*p] = Fold::Unused;
        }
    }
    // Constants every use of which is an immediate slot (or a folded `ptradd` index).
    // An instruction whose result is a `Fold::IndexAdd` is not emitted (its constant
    // is counted as consumed), so its immediate slots are no uses as immediates.
    index_adds.sort_unstable();
    index_adds.dedup();
    for &v in &index_adds {
        let ValueDef::Result(inst) = dfg.value_def(v) else {
            continue;
        };
        if !matches!(folds[v], Fold::IndexAdd { .. }) {
            continue;
        }
        let args = dfg.inst_args(inst);
        for &k in imm_slots(dfg.inst(inst), dfg) {
            imm_uses[args[k]] -= 1;
        }
    }
    for &r in &constants {
        let ValueDef::Result(inst) = dfg.value_def(r) else {
            continue;
        };
        let constant = match *dfg.inst(inst) {
            InstructionData::IntConst { .. } => {
                matches!(dfg.value_type(r), Type::I32 | Type::I64)
            }
            InstructionData::FloatConst { .. } => true,
            _ => false,
        };
        if constant && folds[r] == Fold::None && uses[r] > 0 && imm_uses[r] + consumed[r] == uses[r]
        {
            folds[r] = Fold::Imm;
        }
    }
    folds
}

/// The operands of `data` (indices into its value arguments) that the emitter writes
/// with `FnEmitter::opnd`, so that a constant there may be an immediate: either operand
/// of `i32`/`i64` arithmetic, shifts and comparisons and of `f32`/`f64` arithmetic and
/// comparisons (the first only when the second is not a constant too: PTX wants a
/// register somewhere), both values of a non-`i1` `select`, the addend and either factor
/// of `fma` (the first only when the second is not a constant: the emitter swaps them),
/// the value of a store and of an integer atomic read-modify-write. The emitter must use `opnd` at each of these
/// (and a constant folded to [`Fold::Imm`] is only used at these).
pub(crate) fn imm_slots(data: &InstructionData, dfg: &DataFlowGraph) -> &'static [usize] {
    let ty = |v: Value| dfg.value_type(v);
    let constant = |v: Value| match dfg.value_def(v) {
        ValueDef::Result(i) => matches!(
            dfg.inst(i),
            InstructionData::IntConst { .. } | InstructionData::FloatConst { .. }
        ),
        _ => false,
    };
    let either = |b: Value| -> &'static [usize] {
        if constant(b) {
            &[1]
        } else {
            &[0, 1]
        }
    };
    let wide = |t: Type| matches!(t, Type::I32 | Type::I64 | Type::F32 | Type::F64);
    match *data {
        InstructionData::Binary { opcode, args, .. } => {
            let t = ty(args[0]);
            let int = matches!(t, Type::I32 | Type::I64);
            let float = matches!(t, Type::F32 | Type::F64);
            let ok = match opcode {
                Opcode::Iadd
                | Opcode::Isub
                | Opcode::Imul
                | Opcode::And
                | Opcode::Or
                | Opcode::Xor
                | Opcode::Udiv
                | Opcode::Urem
                | Opcode::Umin
                | Opcode::Umax
                | Opcode::Sdiv
                | Opcode::Srem
                | Opcode::Smin
                | Opcode::Smax
                | Opcode::Shl
                | Opcode::Lshr
                | Opcode::Ashr => int,
                Opcode::Fadd
                | Opcode::Fsub
                | Opcode::Fmul
                | Opcode::Fdiv
                | Opcode::Fmin
                | Opcode::Fmax => float,
                _ => false,
            };
            if ok {
                either(args[1])
            } else {
                &[]
            }
        }
        InstructionData::IntCompare { args, .. }
            if matches!(ty(args[0]), Type::I32 | Type::I64) =>
        {
            either(args[1])
        }
        InstructionData::FloatCompare { args, .. } => either(args[1]),
        InstructionData::Ternary {
            opcode: Opcode::Select,
            args,
        } if wide(ty(args[1])) => &[1, 2],
        // The factors commute: a constant first factor is written second
        // (`FnEmitter::factors`), unless the second is a constant too.
        InstructionData::Ternary {
            opcode: Opcode::Fma,
            args,
        } => {
            if constant(args[1]) {
                &[1, 2]
            } else {
                &[0, 1, 2]
            }
        }
        InstructionData::Store { args, .. } if wide(ty(args[0])) => &[0],
        // `add.s64 d, p, c`: a pointer stepped by a constant (loop-reduce's increments).
        InstructionData::PtrAdd { args, scale: 1 } if ty(args[1]) == Type::I64 => &[1],
        // `atom.global.add.u32 %r5, [%rd2], 10`, as llc writes integer atomics.
        InstructionData::AtomicRmw { args, .. } if matches!(ty(args[1]), Type::I32 | Type::I64) => {
            &[1]
        }
        _ => &[],
    }
}

/// Block parameters that share their argument's register: every parameter of a
/// reachable block (not the entry) with exactly one incoming edge is that edge's
/// argument on every execution, so it needs no copy. An SSA copy propagation, sound
/// for the same reason as the folds above; the map points each such parameter at its
/// argument (which may itself be one; chains follow strict dominance, so they end).
/// Each parameter given an alias is pushed on `aliased` too (the later walks over
/// aliases visit that list, not every value). With `copies`, the same walk lists the
/// (parameter, argument, predecessor) of every edge into a block with several incoming
/// edges, for coalescing (`crate::coalesce`).
pub(crate) fn single_edge_aliases(
    f: &Function,
    cfg: &Cfg,
    aliased: &mut Vec<Value>,
    mut copies: Option<&mut Vec<(Value, Value, Block)>>,
) -> SecondaryMap<Value, Option<Value>> {
    let dfg = &f.dfg;
    let mut alias: SecondaryMap<Value, Option<Value>> = dense(dfg.num_values());
    let entry = f.entry_block();
    // Exactly one incoming edge from a reachable block: the CFG lists one predecessor
    // per edge (no counting walk over the branches first).
    let single_edge = |b: Block| {
        let mut n = 0;
        for &p in cfg.preds(b) {
            if cfg.is_reachable(p) {
                n += 1;
                if n > 1 {
                    return false;
                }
            }
        }
        n == 1
    };
    // Only a block's last instruction branches (the verifier's terminator rule), so
    // only terminators are visited.
    for &b in cfg.rpo() {
        if let Some(inst) = f.layout.last_inst(b) {
            dfg.for_each_dest(inst, |bc| {
                if Some(bc.block) == entry {
                    return;
                }
                if !single_edge(bc.block) {
                    if let Some(c) = copies.as_deref_mut() {
                        let params = dfg.block_params(bc.block);
                        c.extend(
                            params
                                .iter()
                                .zip(dfg.block_call_args(bc))
                                .map(|(&p, &a)| (p, a, b)),
                        );
                    }
                    return;
                }
                for (&p, &a) in dfg
                    .block_params(bc.block)
                    .iter()
                    .zip(dfg.block_call_args(bc))
                {
                    if p != a {
                        alias[p] = Some(a);
                        aliased.push(p);
                    }
                }
            });
        }
    }
    alias
}

/// Add to `alias` every `addrspace_cast` the emitter would write as a `mov.b64`: generic
/// to generic, or from a specific space `s` to generic when the result's web holds
/// `s`-space addresses (`spaces`, see `crate::space`: its accesses name `s` and use the
/// address as it is). The result is then the operand's register (as llc emits no
/// instruction for such a cast), sound as the `zext` aliases are. Each result given an
/// alias is pushed on `aliased` too.
pub(crate) fn add_cast_aliases(
    f: &Function,
    spaces: &SecondaryMap<Value, Option<AddrSpace>>,
    alias: &mut SecondaryMap<Value, Option<Value>>,
    aliased: &mut Vec<Value>,
) {
    let dfg = &f.dfg;
    for b in f.layout.blocks() {
        for inst in f.layout.block_insts(b) {
            let InstructionData::Unary {
                opcode: Opcode::AddrspaceCast,
                arg,
            } = *dfg.inst(inst)
            else {
                continue;
            };
            let Some(r) = dfg.inst_result(inst) else {
                continue;
            };
            let from = dfg
                .value_type(arg)
                .addr_space()
                .unwrap_or(AddrSpace::Generic);
            let to = dfg.value_type(r).addr_space().unwrap_or(AddrSpace::Generic);
            let plain = match (from, to) {
                (AddrSpace::Generic, AddrSpace::Generic) => true,
                (s, AddrSpace::Generic) => spaces[r] == Some(s),
                _ => false,
            };
            if plain && alias[r].is_none() {
                alias[r] = Some(arg);
                aliased.push(r);
            }
        }
    }
}

/// Add to `alias` every `zext` of an `i8`/`i16` to `i16`/`i32`: a narrow integer is kept
/// zero-extended in its 32-bit register, so the result is the operand's register as it
/// is (no `mov`). Sound as the block-parameter aliases are: the operand's register is
/// written once per execution of its definition, which dominates the `zext`. Each
/// result given an alias is pushed on `aliased` too.
pub(crate) fn add_zext_aliases(
    f: &Function,
    alias: &mut SecondaryMap<Value, Option<Value>>,
    aliased: &mut Vec<Value>,
) {
    let dfg = &f.dfg;
    for b in f.layout.blocks() {
        for inst in f.layout.block_insts(b) {
            if let InstructionData::Unary {
                opcode: Opcode::Zext,
                arg,
            } = *dfg.inst(inst)
            {
                let Some(r) = dfg.inst_result(inst) else {
                    continue;
                };
                if matches!(dfg.value_type(arg), Type::I8 | Type::I16)
                    && matches!(dfg.value_type(r), Type::I16 | Type::I32)
                {
                    alias[r] = Some(arg);
                    aliased.push(r);
                }
            }
        }
    }
}

/// Add to `alias` every `trunc` of an `i32`/`i16` to `i16`/`i8` whose every use reads
/// only its low bits: the value stored by a `store` (`st.u16`/`st.u8` write the
/// register's low bits) or the operand of a `sext` (`cvt.s32.s16` reads them). PTX lets
/// `st` and `cvt` take a register wider than their type, so the result is the operand's
/// register as it is, without the `and.b32` that keeps a narrow value zero-extended
/// (llc stores `(x + 32768) >> 16` with `st.shared.u16` alone; dct8x8's ShortDCT did an
/// `and.b32 .., 0xFFFF` before each). Any other use (a `zext`, which relies on the zero
/// high bits, a comparison, a branch argument) keeps the `and`. Sound as the
/// block-parameter aliases are: the operand's register is written once per execution
/// of its definition, which dominates the `trunc`. Each result given an alias is pushed
/// on `aliased` too. Two scans, no allocation beyond the map.
pub(crate) fn add_trunc_aliases(
    f: &Function,
    alias: &mut SecondaryMap<Value, Option<Value>>,
    aliased: &mut Vec<Value>,
) {
    let dfg = &f.dfg;
    // 0: not a candidate, 1: a candidate so far, 2: some use needs the mask.
    let mut state: SecondaryMap<Value, u8> = SecondaryMap::new();
    let mut any = false;
    for b in f.layout.blocks() {
        for inst in f.layout.block_insts(b) {
            if let InstructionData::Unary {
                opcode: Opcode::Trunc,
                arg,
            } = *dfg.inst(inst)
            {
                let Some(r) = dfg.inst_result(inst) else {
                    continue;
                };
                if matches!(dfg.value_type(arg), Type::I16 | Type::I32)
                    && matches!(dfg.value_type(r), Type::I8 | Type::I16)
                {
                    state[r] = 1;
                    any = true;
                }
            }
        }
    }
    if !any {
        return;
    }
    for b in f.layout.blocks() {
        for inst in f.layout.block_insts(b) {
            match *dfg.inst(inst) {
                InstructionData::Store { args, .. } => {
                    // The stored value may be one; the address is never narrow.
                    if state[args[1]] == 1 {
                        state[args[1]] = 2;
                    }
                }
                InstructionData::Unary {
                    opcode: Opcode::Sext,
                    ..
                } => {}
                _ => dfg.for_each_inst_value(inst, |v| {
                    if state[v] == 1 {
                        state[v] = 2;
                    }
                }),
            }
        }
    }
    for b in f.layout.blocks() {
        for inst in f.layout.block_insts(b) {
            if let InstructionData::Unary {
                opcode: Opcode::Trunc,
                arg,
            } = *dfg.inst(inst)
            {
                if let Some(r) = dfg.inst_result(inst) {
                    if state[r] == 1 {
                        alias[r] = Some(arg);
                        aliased.push(r);
                    }
                }
            }
        }
    }
}
