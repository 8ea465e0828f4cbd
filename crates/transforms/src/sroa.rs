//! `sroa`: scalar replacement of local slots (LLVM's `SROAPass`, which ends in
//! `mem2reg`'s promotion of the new scalars).
//!
//! A slot (`slotN = local SIZE align A`, an `alloca`) whose address is only ever used to
//! load and store at constant offsets is split into one scalar per accessed location,
//! and each scalar is promoted to SSA values: PTX then keeps it in registers instead of
//! the local-memory depot (`ld.local`/`st.local`).
//!
//! 1. **Uses.** From each `slot_addr`, a worklist follows the address through `ptradd`
//!    with a constant index (the offset grows by `index * scale`) and `addrspace_cast` to
//!    the generic or local space (the LLVM importer casts every `alloca` to a generic
//!    pointer), over a use-list index of the function. Every other use refuses the slot.
//! 2. **Partition.** The accesses of an accepted slot, sorted by offset, form one scalar
//!    per `(offset, size)`; accesses of one scalar whose types differ but have the same
//!    width share an integer scalar of that width and are reinterpreted with `bitcast`
//!    (an `f32` stored and read back as `i32`, a pointer as `i64`).
//! 3. **Promotion.** Per scalar, in layout order: a load after a store of the same block
//!    reads the stored value; the last store of each block is the scalar's value at its
//!    end ([`SsaUpdater::add_available_value`]); the loads before any store of their
//!    block read the value on entry to it, which the SSA updater computes for all of them
//!    at once, adding block parameters where values meet (pruned `DF+`).
//! 4. **Cleanup.** The loads' results are replaced in one batch, the loads, stores,
//!    `ptradd`s, casts and `slot_addr`s removed, and the slot table compacted (the kept
//!    slots are renumbered in order).
//!
//! **Uninitialized memory.** A load that no store reaches reads uninitialized local
//! memory, which is poison (docs/ir.md, *Values and poison*); any value refines poison,
//! and the pass uses zero of the load's type (`iconst 0`, `fconst 0.0`, a null pointer
//! as `bitcast` of `iconst.i64 0`), defined at the top of the entry block, as LLVM's
//! `mem2reg` uses `undef` (Gyre has no `undef`).
//!
//! **Cost.** Linear in the function (the scan, the use lists, the batch replacement) plus,
//! per scalar, the SSA updater's cost: its accesses, the blocks where it is live and the
//! frontiers of its defining blocks. The dominance frontiers are computed once per run.

use crate::analyses::Analyses;
use crate::manager::{FunctionPass, PassContext, PassError, PassResult};
use crate::utils::clone::ValueMap;
use crate::utils::ssa_updater::{SsaContext, SsaUpdater};
use crate::utils::uses::{replace_uses_batch, UseLists};
use gyre_analysis::DominanceFrontiers;
use gyre_ir::{
    AddrSpace, Block, EntityRef, Function, Inst, InstructionData, Opcode, PrimaryMap,
    SecondaryMap, Slot, Type, Value, ValueDef,
};

const NAME: &str = "sroa";

/// The `sroa` function pass.
///
/// **Requires**: valid IR. No loop form.
///
/// **Establishes**: no form; every slot it accepts is gone (its accesses are SSA values).
///
/// **Promotes** a slot when every use of its address — through `ptradd` with a constant
/// index and `addrspace_cast` to `ptr` or `ptr.local`, in any number of steps — is the
/// address operand of a non-volatile `load` or `store` whose bytes lie inside the slot, and
/// the accessed ranges either coincide or do not overlap, with one bit width per range.
/// A slot with no access at all (dead, or only stored to) is removed with its stores.
///
/// **Gives up** on a slot (it stays in local memory, with a remark of the kind named
/// here, counted in `NumSlotsKept`) when its address
/// - escapes (`Escapes`): stored as a value, passed to a call or a branch, compared,
///   selected, converted to an integer, cast to another space, used by an atomic or any
///   other instruction;
/// - is indexed by a value that is not a constant (`VariableIndex`; LLVM's SROA gives up
///   there too);
/// - is accessed by a volatile load or store (`Volatile`);
/// - is accessed outside the slot's bytes (`OutOfBounds`; undefined behaviour if it runs);
/// - is accessed at overlapping but different ranges (`PartialOverlap`: an `i64` over two
///   `i32`s, as a wide `memcpy` expansion makes) or at one range with two bit widths
///   (`MixedWidths`: `i1` and `i8`). LLVM would split or combine the integers; Gyre keeps
///   the slot.
///
/// **Preserves**: the CFG, dominator and post-dominator trees and the loop forest (it
/// adds block parameters and branch arguments, never edges). Not uniformity, scalar
/// evolution or `nonlocal-uses` (values change).
///
/// **Knobs**: none.
///
/// **Stats**: `NumSlotsPromoted` (slots removed), `NumSlotsKept`, `NumScalars` (promoted
/// variables), `NumLoadsRemoved`, `NumStoresRemoved`, `NumBlockParams` (parameters the SSA
/// updater added).
///
/// Running it twice changes nothing the second time: the kept slots are refused again.
#[derive(Default)]
pub struct Sroa {
    s: Scratch,
    df: DominanceFrontiers,
    up: SsaUpdater,
}

/// Why a slot stays in memory, with the instruction that decided it.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
enum Refusal {
    Escapes(Inst),
    VariableIndex(Inst),
    Volatile(Inst),
    OutOfBounds(Inst),
    PartialOverlap(Inst),
    MixedWidths(Inst),
}

impl Refusal {
    fn inst(self) -> Inst {
        match self {
            Refusal::Escapes(i)
            | Refusal::VariableIndex(i)
            | Refusal::Volatile(i)
            | Refusal::OutOfBounds(i)
            | Refusal::PartialOverlap(i)
            | Refusal::MixedWidths(i) => i,
        }
    }

    fn kind(self) -> &'static str {
        match self {
            Refusal::Escapes(_) => "Escapes",
            Refusal::VariableIndex(_) => "VariableIndex",
            Refusal::Volatile(_) => "Volatile",
            Refusal::OutOfBounds(_) => "OutOfBounds",
            Refusal::PartialOverlap(_) => "PartialOverlap",
            Refusal::MixedWidths(_) => "MixedWidths",
        }
    }

    fn message(self, func: &Function, slot: Slot) -> String {
        let op = func.dfg.inst(self.inst()).opcode().name();
        let why = match self {
            Refusal::Escapes(_) => format!("its address escapes into a {op}"),
            Refusal::VariableIndex(_) => "a ptradd indexes it with a variable".to_string(),
            Refusal::Volatile(_) => format!("a volatile {op} accesses it"),
            Refusal::OutOfBounds(_) => format!("a {op} accesses bytes outside it"),
            Refusal::PartialOverlap(_) => {
                format!("a {op} overlaps another access at a different offset or size")
            }
            Refusal::MixedWidths(_) => {
                format!("a {op} accesses its bytes with another bit width")
            }
        };
        format!("{slot} kept in local memory: {why}")
    }
}

/// One load or store of a slot.
#[derive(Copy, Clone)]
struct Access {
    slot: u32,
    offset: u32,
    ty: Type,
    inst: Inst,
}

/// A promoted scalar: its slot's location and the type it is kept in.
#[derive(Copy, Clone)]
struct Var {
    ty: Type,
}

/// Buffers reused across runs.
#[derive(Default)]
struct Scratch {
    /// Per address value on the worklist: its slot and its byte offset there (written
    /// before it is read, so never reset).
    derived: SecondaryMap<Value, (u32, i64)>,
    users: Vec<Inst>,
    /// The `slot_addr`, `ptradd` and cast instructions of each slot's address.
    addr_insts: Vec<(u32, Inst)>,
    worklist: Vec<Value>,
    uses: UseLists,
    /// Per slot: why it is kept, if it is.
    refused: Vec<Option<Refusal>>,
    accesses: Vec<Access>,
    order: Vec<u32>,
    /// Per access instruction: its variable plus one (0: not promoted).
    var_of: SecondaryMap<Inst, u32>,
    vars: Vec<Var>,
    /// `(variable, instruction)` in layout order, then sorted by variable (stable).
    seq: Vec<(u32, Inst)>,
    pending_blocks: Vec<Block>,
    pending_loads: Vec<Inst>,
    entry_vals: Vec<Value>,
    zeros: Vec<(Type, Value)>,
    remove: Vec<Inst>,
    map: ValueMap,
}

impl FunctionPass for Sroa {
    fn name(&self) -> &'static str {
        NAME
    }

    fn run(
        &mut self,
        func: &mut Function,
        cx: &mut PassContext<'_>,
    ) -> Result<PassResult, PassError> {
        if func.slots.is_empty() {
            return Ok(PassResult::UNCHANGED);
        }
        self.s.analyze(func);
        let s = &mut self.s;
        let mut kept = 0;
        for (k, r) in s.refused.iter().enumerate() {
            if let Some(r) = *r {
                kept += 1;
                let slot = Slot::new(k);
                let block = func.layout.inst_block(r.inst());
                cx.remark(NAME, func, block, r.kind(), r.message(func, slot));
            }
        }
        cx.stats.add(NAME, "NumSlotsKept", kept);
        if kept == s.refused.len() as u64 {
            return Ok(PassResult::UNCHANGED);
        }
        let fname = func.name.clone();
        let err = |m: String| PassError(format!("{NAME}: @{fname}: {m}"));
        let (mut loads, mut stores, mut params) = (0u64, 0u64, 0u64);
        if !s.vars.is_empty() {
            cx.analyses
                .ensure(func, Analyses::CFG.union(Analyses::DOMTREE))
                .map_err(|e| err(e.into()))?;
            let cache = &*cx.analyses;
            self.df.compute(func, &cache.cfg, &cache.domtree);
            let ssa = SsaContext::new(&cache.cfg, &cache.domtree, &self.df);
            let (l, st, p) = s.promote(func, &ssa, &mut self.up).map_err(err)?;
            (loads, stores, params) = (l, st, p);
        }
        let promoted = s.finish(func).map_err(err)?;
        cx.stats.add(NAME, "NumSlotsPromoted", promoted);
        cx.stats.add(NAME, "NumScalars", s.vars.len() as u64);
        cx.stats.add(NAME, "NumLoadsRemoved", loads);
        cx.stats.add(NAME, "NumStoresRemoved", stores);
        cx.stats.add(NAME, "NumBlockParams", params);
        // Only block parameters, branch arguments and straight-line code changed.
        Ok(PassResult::changed(
            Analyses::CFG
                .union(Analyses::DOMTREE)
                .union(Analyses::POSTDOM)
                .union(Analyses::LOOPS),
        ))
    }
}

/// The constant value of `v`, if an `iconst` defines it.
fn const_of(func: &Function, v: Value) -> Option<i64> {
    match func.dfg.value_def(v) {
        ValueDef::Result(i) => match *func.dfg.inst(i) {
            InstructionData::IntConst { imm } => Some(imm),
            _ => None,
        },
        _ => None,
    }
}

/// `v` as type `to` (a `bitcast` before `before` when the types differ; same width).
fn cast(func: &mut Function, v: Value, to: Type, before: Inst) -> Value {
    if func.dfg.value_type(v) == to {
        return v;
    }
    let data = InstructionData::Unary {
        opcode: Opcode::Bitcast,
        arg: v,
    };
    func.insert_inst_before(before, data, Some(to))
        .1
        .expect("a bitcast has a result")
}

impl Scratch {
    /// Find each slot's accesses and decide which slots are promoted (`refused`), giving
    /// the accesses of the promoted ones their variables (`var_of`, `vars`).
    fn analyze(&mut self, func: &Function) {
        let nslots = func.slots.len();
        self.refused.clear();
        self.refused.resize(nslots, None);
        self.accesses.clear();
        self.addr_insts.clear();
        self.worklist.clear();
        self.vars.clear();
        // Stale entries of `var_of` would promote instructions of another function.
        self.var_of.clear();
        self.zeros.clear();
        self.remove.clear();
        self.map.clear();
        self.seq.clear();
        for b in func.layout.blocks() {
            for i in func.layout.block_insts(b) {
                if let InstructionData::SlotAddr { slot } = *func.dfg.inst(i) {
                    let r = func.dfg.inst_result(i).expect("slot_addr has a result");
                    self.addr_insts.push((slot.as_u32(), i));
                    self.note_derived(r, slot.as_u32(), 0);
                }
            }
        }
        if !self.worklist.is_empty() {
            self.uses.compute(func);
        }
        while let Some(v) = self.worklist.pop() {
            let (slot, off) = self.derived[v];
            let size = i64::from(func.slots[Slot::from_u32(slot)].size);
            self.users.clear();
            self.users.extend(self.uses.users(v));
            for k in 0..self.users.len() {
                if self.refused[slot as usize].is_some() {
                    break;
                }
                let u = self.users[k];
                let access = |ty: Type| {
                    let bytes = i64::from(ty.bytes());
                    if off < 0 || off + bytes > size {
                        Err(Refusal::OutOfBounds(u))
                    } else {
                        Ok(Access {
                            slot,
                            offset: off as u32,
                            ty,
                            inst: u,
                        })
                    }
                };
                let r = match *func.dfg.inst(u) {
                    InstructionData::Load { flags, .. } => {
                        if flags.volatile {
                            Err(Refusal::Volatile(u))
                        } else {
                            let r = func.dfg.inst_result(u).expect("a load has a result");
                            access(func.dfg.value_type(r)).map(|a| self.accesses.push(a))
                        }
                    }
                    InstructionData::Store {
                        args: [val, p],
                        flags,
                    } if p == v && val != v => {
                        if flags.volatile {
                            Err(Refusal::Volatile(u))
                        } else {
                            access(func.dfg.value_type(val)).map(|a| self.accesses.push(a))
                        }
                    }
                    InstructionData::PtrAdd {
                        args: [base, idx],
                        scale,
                    } if base == v && idx != v => match const_of(func, idx) {
                        Some(i) => match i
                            .checked_mul(i64::from(scale))
                            .and_then(|d| d.checked_add(off))
                        {
                            Some(o) => {
                                let r = func.dfg.inst_result(u).expect("ptradd has a result");
                                self.addr_insts.push((slot, u));
                                self.note_derived(r, slot, o);
                                Ok(())
                            }
                            None => Err(Refusal::OutOfBounds(u)),
                        },
                        None => Err(Refusal::VariableIndex(u)),
                    },
                    InstructionData::Unary {
                        opcode: Opcode::AddrspaceCast,
                        ..
                    } => {
                        let r = func.dfg.inst_result(u).expect("a cast has a result");
                        match func.dfg.value_type(r) {
                            Type::Ptr(AddrSpace::Generic | AddrSpace::Local) => {
                                self.addr_insts.push((slot, u));
                                self.note_derived(r, slot, off);
                                Ok(())
                            }
                            _ => Err(Refusal::Escapes(u)),
                        }
                    }
                    _ => Err(Refusal::Escapes(u)),
                };
                if let Err(e) = r {
                    self.refused[slot as usize] = Some(e);
                }
            }
        }
        self.partition();
    }

    fn note_derived(&mut self, v: Value, slot: u32, off: i64) {
        self.derived[v] = (slot, off);
        self.worklist.push(v);
    }

    /// Group each accepted slot's accesses into variables, refusing slots whose accesses
    /// overlap partially or mix widths.
    fn partition(&mut self) {
        let acc = &self.accesses;
        self.order.clear();
        self.order.extend(0..acc.len() as u32);
        // Sorted by instruction too, so variable numbers do not depend on hash or
        // worklist order.
        self.order.sort_unstable_by_key(|&k| {
            let a = acc[k as usize];
            (a.slot, a.offset, a.ty.bytes(), a.inst.as_u32())
        });
        // First pass: refusals.
        let mut k = 0;
        while k < self.order.len() {
            let a = acc[self.order[k] as usize];
            let mut end = a.offset + a.ty.bytes();
            let (mut go, mut gb, mut bits) = (a.offset, a.ty.bytes(), a.ty.bits());
            let mut j = k + 1;
            while j < self.order.len() && acc[self.order[j] as usize].slot == a.slot {
                let b = acc[self.order[j] as usize];
                if self.refused[a.slot as usize].is_none() {
                    if b.offset == go && b.ty.bytes() == gb {
                        if b.ty.bits() != bits {
                            self.refused[a.slot as usize] = Some(Refusal::MixedWidths(b.inst));
                        }
                    } else if b.offset < end {
                        self.refused[a.slot as usize] = Some(Refusal::PartialOverlap(b.inst));
                    } else {
                        (go, gb, bits) = (b.offset, b.ty.bytes(), b.ty.bits());
                    }
                }
                end = end.max(b.offset + b.ty.bytes());
                j += 1;
            }
            k = j;
        }
        // Second pass: variables of the accepted slots, one per (slot, offset, size).
        let mut last: Option<(u32, u32, u32)> = None;
        for &k in &self.order {
            let a = acc[k as usize];
            if self.refused[a.slot as usize].is_some() {
                continue;
            }
            let key = (a.slot, a.offset, a.ty.bytes());
            if last != Some(key) {
                last = Some(key);
                self.vars.push(Var { ty: a.ty });
            }
            let var = self.vars.len() - 1;
            if self.vars[var].ty != a.ty {
                // Same width (checked above): share the integer of that width.
                self.vars[var].ty = Type::int(a.ty.bits()).expect("a width of 8 to 64 bits");
            }
            self.var_of[a.inst] = var as u32 + 1;
        }
    }

    /// The zero constant of `ty` at the top of the entry block (made once per run; a null
    /// pointer is a `bitcast` of the `i64` zero, placed right after it).
    fn zero(&mut self, func: &mut Function, ty: Type) -> Value {
        if let Some(&(_, z)) = self.zeros.iter().find(|(t, _)| *t == ty) {
            return z;
        }
        let entry = func.entry_block().expect("a function with slots has blocks");
        let (data, ty0) = match ty {
            Type::F32 | Type::F64 => (InstructionData::FloatConst { bits: 0 }, ty),
            Type::Ptr(_) => (InstructionData::IntConst { imm: 0 }, Type::I64),
            _ => (InstructionData::IntConst { imm: 0 }, ty),
        };
        let z = match self.zeros.iter().find(|(t, _)| *t == ty0) {
            Some(&(_, z)) => z,
            None => {
                let first = func.layout.first_inst(entry).expect("the entry has a terminator");
                let z = func.insert_inst_before(first, data, Some(ty0)).1;
                let z = z.expect("constants have a result");
                self.zeros.push((ty0, z));
                z
            }
        };
        if ty0 == ty {
            return z;
        }
        let ValueDef::Result(zi) = func.dfg.value_def(z) else {
            unreachable!("zeros are instructions")
        };
        let after = func.layout.next_inst(zi).expect("the entry has a terminator");
        let v = cast(func, z, ty, after);
        self.zeros.push((ty, v));
        v
    }

    /// Promote every variable; returns the loads and stores removed and the block
    /// parameters added.
    fn promote(
        &mut self,
        func: &mut Function,
        ssa: &SsaContext<'_>,
        up: &mut SsaUpdater,
    ) -> Result<(u64, u64, u64), String> {
        for b in func.layout.blocks() {
            for i in func.layout.block_insts(b) {
                if let Some(&v) = self.var_of.get(i).filter(|&&v| v != 0) {
                    self.seq.push((v - 1, i));
                }
            }
        }
        // Stable: each variable's accesses stay in layout order.
        self.seq.sort_by_key(|&(v, _)| v);
        let entry = func.entry_block().ok_or("no entry block")?;
        let (mut loads, mut stores, mut params) = (0, 0, 0);
        let mut k = 0;
        while k < self.seq.len() {
            let var = self.seq[k].0;
            let ty = self.vars[var as usize].ty;
            let zero = self.zero(func, ty);
            up.reset(ty);
            up.set_unreachable_value(zero);
            up.add_available_value(entry, zero);
            self.pending_blocks.clear();
            self.pending_loads.clear();
            // The block being walked: (block, reachable, value so far, stored in it).
            let mut cur: Option<(Block, bool, Option<Value>, bool)> = None;
            while k < self.seq.len() && self.seq[k].0 == var {
                let inst = self.seq[k].1;
                k += 1;
                let b = func.layout.inst_block(inst).expect("laid out");
                if cur.map(|c| c.0) != Some(b) {
                    if let Some((pb, true, Some(v), true)) = cur {
                        up.add_available_value(pb, v);
                    }
                    let start = (b == entry).then_some(zero);
                    cur = Some((b, ssa.cfg.is_reachable(b), start, false));
                }
                let c = cur.as_mut().expect("set above");
                self.remove.push(inst);
                match *func.dfg.inst(inst) {
                    InstructionData::Load { .. } => {
                        loads += 1;
                        let r = func.dfg.inst_result(inst).expect("load");
                        let lt = func.dfg.value_type(r);
                        if !c.1 {
                            // Never runs: any value will do, and a dominating one
                            // avoids cycles among unreachable loads.
                            let z = self.zero(func, lt);
                            self.map.insert(r, z);
                        } else if let Some(v) = c.2 {
                            let w = cast(func, v, lt, inst);
                            self.map.insert(r, w);
                        } else {
                            self.pending_blocks.push(b);
                            self.pending_loads.push(inst);
                        }
                    }
                    InstructionData::Store { args: [val, _], .. } => {
                        stores += 1;
                        if c.1 {
                            c.2 = Some(cast(func, val, ty, inst));
                            c.3 = true;
                        }
                    }
                    _ => return Err(format!("{inst} is not a load or store")),
                }
            }
            if let Some((pb, true, Some(v), true)) = cur {
                up.add_available_value(pb, v);
            }
            if !self.pending_blocks.is_empty() {
                self.entry_vals.clear();
                up.values_in_middle(func, ssa, &self.pending_blocks, &mut self.entry_vals)
                    .map_err(|e| e.to_string())?;
                for j in 0..self.pending_loads.len() {
                    let inst = self.pending_loads[j];
                    let r = func.dfg.inst_result(inst).expect("load");
                    let w = cast(func, self.entry_vals[j], func.dfg.value_type(r), inst);
                    self.map.insert(r, w);
                }
            }
            params += up.new_params().len() as u64;
        }
        Ok((loads, stores, params))
    }

    /// Remove the promoted slots' accesses and addresses, replace the loads' results and
    /// compact the slot table. Returns the number of slots removed.
    fn finish(&mut self, func: &mut Function) -> Result<u64, String> {
        for &i in &self.remove {
            func.layout.remove_inst(i);
        }
        for &(slot, i) in &self.addr_insts {
            if self.refused[slot as usize].is_none() {
                func.layout.remove_inst(i);
            }
        }
        replace_uses_batch(func, &mut self.map).map_err(|e| e.to_string())?;
        // Renumber the kept slots in order.
        let mut slots = PrimaryMap::new();
        let mut renumber = vec![None; func.slots.len()];
        for (s, data) in func.slots.iter() {
            if self.refused[s.index()].is_some() {
                renumber[s.index()] = Some(slots.push(*data));
            }
        }
        let promoted = (func.slots.len() - slots.len()) as u64;
        func.slots = slots;
        for &(slot, i) in &self.addr_insts {
            if let Some(new) = renumber[slot as usize] {
                if let InstructionData::SlotAddr { slot } = func.dfg.inst_mut(i) {
                    *slot = new;
                }
            }
        }
        Ok(promoted)
    }
}
