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
//! 2. **Partition.** The starts and ends of an accepted slot's accesses cut it into byte
//!    ranges; each range some access covers is one scalar (LLVM's SROA partitions slices
//!    the same way). Accesses of one range whose types differ but have the same width
//!    share an integer scalar of that width and are reinterpreted with `bitcast` (an
//!    `f32` stored and read back as `i32`, a pointer as `i64`). An access that covers
//!    several ranges (an `i64` piece of a struct copy over two `f32` fields) is split:
//!    a store stores each piece (`lshr` and `trunc` of its value as an integer), a load
//!    reassembles them (`zext`, `shl`, `or`, little-endian as memory is). A split access
//!    does not choose its ranges' types (the fields stay `f32`); and when the stored
//!    value is a load used by nothing else (a copy from memory into the slot), that load
//!    is split instead, one load per piece in the piece's type at the same place, as
//!    LLVM's SROA splits the loads and stores of a copy.
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
    AddrSpace, Block, EntityRef, Function, Inst, InstructionData, IntFlags, Opcode, PrimaryMap,
    SecondaryMap, Slot, Type, Value, ValueDef,
};

const NAME: &str = "sroa";
/// Rounds per function: each round after the first needs a slot whose address was stored
/// in a slot promoted by the round before (a chain of references), which real code keeps
/// short.
const MAX_ROUNDS: usize = 4;

/// The `sroa` function pass.
///
/// **Requires**: valid IR. No loop form.
///
/// **Establishes**: no form; every slot it accepts is gone (its accesses are SSA values).
///
/// **Promotes** a slot when every use of its address — through `ptradd` with a constant
/// index and `addrspace_cast` to `ptr` or `ptr.local`, in any number of steps — is the
/// address operand of a non-volatile `load` or `store` whose bytes lie inside the slot, and
/// the ranges between the boundaries of its accesses are 1, 2, 4 or 8 bytes long, each
/// with one bit width. A slot with no access at all (dead, or only stored to) is removed
/// with its stores.
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
/// - is accessed at partly overlapping ranges that leave a range no integer type holds
///   (`PartialOverlap`: an `i32` and an `i8` at its last byte leave 3 bytes), or at one
///   range with two bit widths (`MixedWidths`: `i1` and `i8`). LLVM would still split
///   or widen the integers; Gyre keeps the slot.
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
/// **Example** (the join block's parameter is the slot's value):
///
/// ```
/// use gyre_transforms::{Knobs, Options, PassManager};
/// let mut m = gyre_ir::parse_module(
///     "kernel @k(i32, ptr.global) {
///         slot0 = local 4 align 4
///     block0(v0: i32, v1: ptr.global):
///         v2 = slot_addr slot0
///         v3 = iconst.i32 0
///         v4 = icmp slt v0, v3
///         brif v4, block1, block2
///     block1:
///         store v0, v2
///         jump block3
///     block2:
///         store v3, v2
///         jump block3
///     block3:
///         v5 = load.i32 v2
///         store v5, v1
///         return
///     }",
/// )
/// .unwrap();
/// let mut pm = PassManager::from_pipeline("sroa", Knobs::default(), Options::default()).unwrap();
/// let report = pm.run_module(&mut m).unwrap();
/// assert_eq!(report.stats.get("sroa", "NumSlotsPromoted"), 1);
/// assert_eq!(report.stats.get("sroa", "NumBlockParams"), 1);
/// assert!(m.functions.values().all(|f| f.slots.is_empty()));
/// ```
///
/// A slot whose address is stored in another slot is kept while that slot is; once that
/// slot is promoted the address flows straight to its accesses, and the pass goes round
/// again (at most 4 rounds per function, each linear).
///
/// Running it twice changes nothing the second time (short of a chain of more than 4
/// slots each holding the address of the next): the kept slots are refused again.
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
            Refusal::Escapes(_) => format!("its address escapes (used by {op})"),
            Refusal::VariableIndex(_) => "a ptradd indexes it with a variable".to_string(),
            Refusal::Volatile(_) => format!("a volatile {op} accesses it"),
            Refusal::OutOfBounds(_) => format!("a {op} accesses bytes outside it"),
            Refusal::PartialOverlap(_) => format!(
                "a {op} partly overlaps another access, leaving a range of a size no integer has"
            ),
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

/// The part of an access that one variable holds: `bytes` bytes from byte `rel` of the
/// access.
#[derive(Copy, Clone)]
struct Piece {
    var: u32,
    rel: u32,
    bytes: u32,
}

/// A promoted scalar: the type it is kept in.
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
    /// Per access instruction: its pieces in `pieces` (start, count; count 0: not
    /// promoted).
    pieces_of: SecondaryMap<Inst, (u32, u32)>,
    pieces: Vec<Piece>,
    vars: Vec<Var>,
    /// Access boundaries of one slot, the type and variable of each range between them.
    bounds: Vec<u32>,
    range_ty: Vec<Option<Type>>,
    range_var: Vec<u32>,
    /// `(variable, instruction, piece)` in layout order, then sorted by variable (stable).
    seq: Vec<(u32, Inst, u32)>,
    /// The value each load piece reads.
    piece_val: Vec<Value>,
    pending_blocks: Vec<Block>,
    pending_pieces: Vec<u32>,
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
        let fname = func.name.clone();
        let err = |m: String| PassError(format!("{NAME}: @{fname}: {m}"));
        let mut changed = false;
        // Refusals of the last analysis (none yet: the remarks below read them).
        self.s.refused.clear();
        let [mut promoted, mut scalars, mut loads, mut stores, mut params] = [0u64; 5];
        for _ in 0..MAX_ROUNDS {
            if func.slots.is_empty() {
                break;
            }
            self.s.analyze(func);
            let s = &mut self.s;
            if s.refused.iter().all(Option::is_some) {
                break;
            }
            if !s.vars.is_empty() {
                cx.analyses
                    .ensure(func, Analyses::CFG.union(Analyses::DOMTREE))
                    .map_err(|e| err(e.into()))?;
                let cache = &*cx.analyses;
                self.df.compute(func, &cache.cfg, &cache.domtree);
                let ssa = SsaContext::new(&cache.cfg, &cache.domtree, &self.df);
                let (l, st, p) = s.promote(func, &ssa, &mut self.up).map_err(&err)?;
                (loads, stores, params) = (loads + l, stores + st, params + p);
            }
            promoted += s.finish(func).map_err(&err)?;
            scalars += s.vars.len() as u64;
            changed = true;
            // A slot whose address was stored in a promoted one (a reference kept in a
            // local struct) now reaches its accesses directly: go round again, as LLVM's
            // SROA revisits the allocas its promotions expose.
            let stored = |r: &Option<Refusal>| match *r {
                Some(Refusal::Escapes(i)) => func.dfg.inst(i).opcode() == Opcode::Store,
                _ => false,
            };
            if !s.refused.iter().any(stored) {
                break;
            }
        }
        // The kept slots of the last analysis, numbered as they are now (in order).
        let mut kept = 0;
        for r in self.s.refused.iter().flatten() {
            let slot = Slot::new(kept);
            kept += 1;
            let block = func.layout.inst_block(r.inst());
            cx.remark(NAME, func, block, r.kind(), r.message(func, slot));
        }
        cx.stats.add(NAME, "NumSlotsKept", kept as u64);
        if !changed {
            return Ok(PassResult::UNCHANGED);
        }
        cx.stats.add(NAME, "NumSlotsPromoted", promoted);
        cx.stats.add(NAME, "NumScalars", scalars);
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

/// The indices of the ranges between `bounds` that `[offset, offset + bytes)` covers.
fn ranges_of(bounds: &[u32], offset: u32, bytes: u32) -> (usize, usize) {
    let lo = bounds.partition_point(|&b| b < offset);
    let hi = bounds.partition_point(|&b| b < offset + bytes);
    (lo, hi)
}

fn unary(func: &mut Function, opcode: Opcode, arg: Value, ty: Type, before: Inst) -> Value {
    let data = InstructionData::Unary { opcode, arg };
    func.insert_inst_before(before, data, Some(ty))
        .1
        .expect("a unary operation has a result")
}

fn binary(func: &mut Function, opcode: Opcode, a: Value, b: Value, before: Inst) -> Value {
    let ty = func.dfg.value_type(a);
    let data = InstructionData::Binary {
        opcode,
        args: [a, b],
        flags: IntFlags::NONE,
    };
    func.insert_inst_before(before, data, Some(ty))
        .1
        .expect("a binary operation has a result")
}

fn iconst(func: &mut Function, ty: Type, imm: i64, before: Inst) -> Value {
    func.insert_inst_before(before, InstructionData::IntConst { imm }, Some(ty))
        .1
        .expect("a constant has a result")
}

/// The bytes of stored value `v` that `piece` covers (`v` itself for a whole access):
/// the integer of `v`'s width shifted right by the piece's offset (little-endian) and
/// truncated to its size.
fn extract(func: &mut Function, v: Value, piece: Piece, before: Inst) -> Value {
    let vt = func.dfg.value_type(v);
    if piece.rel == 0 && piece.bytes == vt.bytes() {
        return v;
    }
    let it = Type::int(vt.bits()).expect("a split access is 2 to 8 bytes");
    let mut x = cast(func, v, it, before);
    if piece.rel > 0 {
        let sh = iconst(func, it, i64::from(piece.rel * 8), before);
        x = binary(func, Opcode::Lshr, x, sh, before);
    }
    let pt = Type::int(piece.bytes * 8).expect("checked by partition");
    unary(func, Opcode::Trunc, x, pt, before)
}

impl Scratch {
    /// Find each slot's accesses and decide which slots are promoted (`refused`), giving
    /// the accesses of the promoted ones their variables (`pieces_of`, `vars`).
    fn analyze(&mut self, func: &Function) {
        let nslots = func.slots.len();
        self.refused.clear();
        self.refused.resize(nslots, None);
        self.accesses.clear();
        self.addr_insts.clear();
        self.worklist.clear();
        self.vars.clear();
        // Stale entries of `pieces_of` would promote instructions of another function.
        self.pieces_of.clear();
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

    /// Split each accepted slot into variables: the byte ranges between consecutive
    /// boundaries (starts and ends) of its accesses, each covered range one variable. An
    /// access that covers several ranges is split into pieces (a wide `memcpy` piece over
    /// two fields); refuses a slot with a covered range that is not 1, 2, 4 or 8 bytes
    /// long (no integer type holds it) or with two bit widths on one range (`i1`, `i8`).
    fn partition(&mut self) {
        let acc = &self.accesses;
        self.order.clear();
        self.order.extend(0..acc.len() as u32);
        // Sorted by instruction too, so variable numbers do not depend on the worklist.
        self.order.sort_unstable_by_key(|&k| {
            let a = acc[k as usize];
            (a.slot, a.offset, a.ty.bytes(), a.inst.as_u32())
        });
        self.pieces.clear();
        let mut k = 0;
        while k < self.order.len() {
            let slot = acc[self.order[k] as usize].slot;
            let mut end = k;
            while end < self.order.len() && acc[self.order[end] as usize].slot == slot {
                end += 1;
            }
            let run = k..end;
            k = end;
            if self.refused[slot as usize].is_some() {
                continue;
            }
            self.bounds.clear();
            for &j in &self.order[run.clone()] {
                let a = acc[j as usize];
                self.bounds.push(a.offset);
                self.bounds.push(a.offset + a.ty.bytes());
            }
            self.bounds.sort_unstable();
            self.bounds.dedup();
            let n = self.bounds.len() - 1;
            self.range_ty.clear();
            self.range_ty.resize(n, None);
            let mut refusal = None;
            // Accesses of one range first, then those split over several: a split piece
            // takes whatever type the range has (bitcasts make it any type of its width),
            // so that a float field copied as part of an `i64` stays a float; only a
            // range no single access types is an integer.
            let whole = self.order[run.clone()].iter().filter(|&&j| {
                let a = acc[j as usize];
                let (lo, hi) = ranges_of(&self.bounds, a.offset, a.ty.bytes());
                hi - lo == 1
            });
            let split = self.order[run.clone()].iter().filter(|&&j| {
                let a = acc[j as usize];
                let (lo, hi) = ranges_of(&self.bounds, a.offset, a.ty.bytes());
                hi - lo != 1
            });
            for &j in whole.chain(split) {
                let a = acc[j as usize];
                let (lo, hi) = ranges_of(&self.bounds, a.offset, a.ty.bytes());
                for r in lo..hi {
                    let len = self.bounds[r + 1] - self.bounds[r];
                    let Some(int) = Type::int(len * 8) else {
                        refusal.get_or_insert(Refusal::PartialOverlap(a.inst));
                        continue;
                    };
                    if hi - lo != 1 {
                        self.range_ty[r].get_or_insert(int);
                        continue;
                    }
                    let t = a.ty;
                    self.range_ty[r] = match self.range_ty[r] {
                        None => Some(t),
                        Some(u) if u == t => Some(u),
                        Some(u) if u.bits() != t.bits() => {
                            refusal.get_or_insert(Refusal::MixedWidths(a.inst));
                            Some(u)
                        }
                        // Same width, two types: the integer, reinterpreted by bitcasts.
                        Some(_) => Some(int),
                    };
                }
            }
            if let Some(r) = refusal {
                self.refused[slot as usize] = Some(r);
                continue;
            }
            // Variables of the covered ranges, then each access's pieces.
            self.range_var.clear();
            for r in 0..n {
                self.range_var.push(self.vars.len() as u32);
                if let Some(ty) = self.range_ty[r] {
                    self.vars.push(Var { ty });
                }
            }
            for &j in &self.order[run] {
                let a = acc[j as usize];
                let (lo, hi) = ranges_of(&self.bounds, a.offset, a.ty.bytes());
                let start = self.pieces.len() as u32;
                for r in lo..hi {
                    self.pieces.push(Piece {
                        var: self.range_var[r],
                        rel: self.bounds[r] - a.offset,
                        bytes: self.bounds[r + 1] - self.bounds[r],
                    });
                }
                self.pieces_of[a.inst] = (start, (hi - lo) as u32);
            }
        }
    }

    /// The zero constant of `ty` at the top of the entry block (made once per run; a null
    /// pointer is a `bitcast` of the `i64` zero, placed right after it).
    fn zero(&mut self, func: &mut Function, ty: Type) -> Value {
        if let Some(&(_, z)) = self.zeros.iter().find(|(t, _)| *t == ty) {
            return z;
        }
        let entry = func
            .entry_block()
            .expect("a function with slots has blocks");
        let (data, ty0) = match ty {
            Type::F32 | Type::F64 => (InstructionData::FloatConst { bits: 0 }, ty),
            Type::Ptr(_) => (InstructionData::IntConst { imm: 0 }, Type::I64),
            _ => (InstructionData::IntConst { imm: 0 }, ty),
        };
        let z = match self.zeros.iter().find(|(t, _)| *t == ty0) {
            Some(&(_, z)) => z,
            None => {
                let first = func
                    .layout
                    .first_inst(entry)
                    .expect("the entry has a terminator");
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
        let after = func
            .layout
            .next_inst(zi)
            .expect("the entry has a terminator");
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
        let (mut loads, mut stores) = (0, 0);
        for b in func.layout.blocks() {
            for i in func.layout.block_insts(b) {
                let Some(&(start, count)) = self.pieces_of.get(i) else {
                    continue;
                };
                for p in start..start + count {
                    self.seq.push((self.pieces[p as usize].var, i, p));
                }
                if count > 0 {
                    self.remove.push(i);
                    match func.dfg.inst(i) {
                        InstructionData::Load { .. } => loads += 1,
                        _ => stores += 1,
                    }
                }
            }
        }
        // Stable: each variable's accesses stay in layout order.
        self.seq.sort_by_key(|&(v, _, _)| v);
        self.piece_val.clear();
        self.piece_val.resize(self.pieces.len(), Value::new(0));
        let entry = func.entry_block().ok_or("no entry block")?;
        let mut params = 0;
        let mut k = 0;
        while k < self.seq.len() {
            let var = self.seq[k].0;
            let ty = self.vars[var as usize].ty;
            let zero = self.zero(func, ty);
            up.reset(ty);
            up.set_unreachable_value(zero);
            up.add_available_value(entry, zero);
            self.pending_blocks.clear();
            self.pending_pieces.clear();
            // The block being walked: (block, reachable, value so far, stored in it).
            let mut cur: Option<(Block, bool, Option<Value>, bool)> = None;
            while k < self.seq.len() && self.seq[k].0 == var {
                let (_, inst, p) = self.seq[k];
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
                match *func.dfg.inst(inst) {
                    InstructionData::Load { .. } => {
                        if !c.1 {
                            // Never runs: the whole load becomes zero (`finish_loads`).
                            self.piece_val[p as usize] = zero;
                        } else if let Some(v) = c.2 {
                            self.piece_val[p as usize] = v;
                        } else {
                            self.pending_blocks.push(b);
                            self.pending_pieces.push(p);
                        }
                    }
                    InstructionData::Store { args: [val, _], .. } => {
                        if c.1 {
                            let piece = self.pieces[p as usize];
                            let first = p == self.pieces_of[inst].0;
                            let v = match self.split_load_of(func, inst, val, first) {
                                // A copy into the slot (a load stored unchanged, as an
                                // imported `memcpy` is): load the piece itself, in its
                                // own type, instead of slicing the wide value.
                                Some(load) => self.narrow_load(func, load, piece, ty),
                                None => extract(func, val, piece, inst),
                            };
                            c.2 = Some(cast(func, v, ty, inst));
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
                for (j, &p) in self.pending_pieces.iter().enumerate() {
                    self.piece_val[p as usize] = self.entry_vals[j];
                }
            }
            params += up.new_params().len() as u64;
        }
        self.finish_loads(func, ssa);
        Ok((loads, stores, params))
    }

    /// The load whose value `store` (a promoted store of `val` split into several pieces)
    /// copies into the slot, when it can be split instead (LLVM's SROA splits the loads
    /// and stores of a copy the same way): `val` is the result of a non-volatile load
    /// used only by this store, and each piece starts at a multiple of its size (so that
    /// narrower loads at the same place stay naturally aligned); not a load of a slot
    /// being promoted (its address goes away). The load is removed with the slot's
    /// accesses (queued when `first`, the store's first piece, asks).
    fn split_load_of(
        &mut self,
        func: &Function,
        store: Inst,
        val: Value,
        first: bool,
    ) -> Option<Inst> {
        let (start, count) = *self.pieces_of.get(store)?;
        if count < 2 {
            return None;
        }
        let ValueDef::Result(load) = func.dfg.value_def(val) else {
            return None;
        };
        let InstructionData::Load { flags, .. } = *func.dfg.inst(load) else {
            return None;
        };
        if flags.volatile
            || func.layout.inst_block(load).is_none()
            || self.pieces_of.get(load).is_some_and(|&(_, n)| n > 0)
        {
            return None;
        }
        let mut users = self.uses.users(val);
        if users.next() != Some(store) || users.next().is_some() {
            return None;
        }
        let pieces = &self.pieces[start as usize..(start + count) as usize];
        if pieces.iter().any(|p| p.rel % p.bytes != 0) {
            return None;
        }
        if first {
            self.remove.push(load);
        }
        Some(load)
    }

    /// A load of `piece`'s bytes of what `load` reads, as type `ty`, placed right before
    /// `load` (the same point of the program: the same bytes).
    fn narrow_load(&mut self, func: &mut Function, load: Inst, piece: Piece, ty: Type) -> Value {
        let InstructionData::Load { ptr, flags } = *func.dfg.inst(load) else {
            unreachable!("split_load_of checked the load");
        };
        let mut addr = ptr;
        if piece.rel > 0 {
            let k = iconst(func, Type::I64, i64::from(piece.rel), load);
            let pty = func.dfg.value_type(ptr);
            addr = func
                .insert_inst_before(
                    load,
                    InstructionData::PtrAdd {
                        args: [ptr, k],
                        scale: 1,
                    },
                    Some(pty),
                )
                .1
                .expect("a ptradd has a result");
        }
        func.insert_inst_before(load, InstructionData::Load { ptr: addr, flags }, Some(ty))
            .1
            .expect("a load has a result")
    }

    /// Map each promoted load's result to its pieces' values, combined (an integer of the
    /// load's width, each piece zero-extended and shifted into place, little-endian) and
    /// reinterpreted as the load's type.
    fn finish_loads(&mut self, func: &mut Function, ssa: &SsaContext<'_>) {
        for k in 0..self.remove.len() {
            let inst = self.remove[k];
            if !matches!(func.dfg.inst(inst), InstructionData::Load { .. }) {
                continue;
            }
            let (start, count) = self.pieces_of[inst];
            if count == 0 {
                // A copy's source load split by `split_load_of`: its only user, a
                // store into the slot, goes too.
                continue;
            }
            let r = func.dfg.inst_result(inst).expect("a load has a result");
            let lt = func.dfg.value_type(r);
            let reachable = func
                .layout
                .inst_block(inst)
                .is_some_and(|b| ssa.cfg.is_reachable(b));
            let w = if !reachable {
                // Never runs: any value will do, and a dominating one avoids cycles
                // among unreachable loads.
                self.zero(func, lt)
            } else if count == 1 {
                cast(func, self.piece_val[start as usize], lt, inst)
            } else {
                let it = Type::int(lt.bits()).expect("a split access is 2 to 8 bytes");
                let mut acc: Option<Value> = None;
                for p in start..start + count {
                    let piece = self.pieces[p as usize];
                    let pt = Type::int(piece.bytes * 8).expect("checked by partition");
                    let v = cast(func, self.piece_val[p as usize], pt, inst);
                    let mut v = unary(func, Opcode::Zext, v, it, inst);
                    if piece.rel > 0 {
                        let sh = iconst(func, it, i64::from(piece.rel * 8), inst);
                        v = binary(func, Opcode::Shl, v, sh, inst);
                    }
                    acc = Some(match acc {
                        None => v,
                        Some(a) => binary(func, Opcode::Or, a, v, inst),
                    });
                }
                cast(func, acc.expect("a split load has pieces"), lt, inst)
            };
            self.map.insert(r, w);
        }
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
