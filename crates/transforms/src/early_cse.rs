//! `early-cse`: redundant load elimination and store-to-load forwarding (the memory half
//! of LLVM's `EarlyCSE`; the e-graph `simplify` already merges pure values, never loads).
//!
//! ```text
//!   v1 = load.f32 p                       v1 = load.f32 p
//!   ..                               =>   ..
//!   v2 = load.f32 p   ; v2 -> v1          (removed)
//!   store v3, q                           store v3, q
//!   v4 = load.f32 q   ; v4 -> v3          (removed)
//! ```
//!
//! One preorder walk of the dominator tree (an explicit stack, no recursion) keeps a
//! scoped table of **available memory values**: for each location, the value a dominating
//! load read there or a dominating store wrote there. A location is `(base, offset,
//! type)`: the address with its chain of `ptradd base, iconst k, scale` folded into a
//! constant byte offset from `base`, and the access type. A non-volatile load of an
//! available location is replaced by the available value and removed; otherwise its
//! result becomes available. A non-volatile store makes its stored value available.
//! Leaving a subtree of the dominator tree drops what it added.
//!
//! **Pure instructions** are merged in the same walk, as EarlyCSE does: one without
//! effects, memory reads or convergence (not `freeze`, each of which may pick its own
//! value) that equals an available one (same operation, operands and result type, after
//! the operands' replacements) is replaced by it. Replacing loads makes new duplicates
//! (two `fsub x, v` of two loads of one location), which `simplify`, earlier in `-O`,
//! can no longer see.
//!
//! **Kills.** Each address space has a generation number; an available value is valid
//! only while the generation of its space is the one it was recorded in, so a kill is
//! O(1) (a fresh generation):
//! - a store or atomic to space `S` kills `S` and `generic` (a generic store kills every
//!   space): different specific spaces never alias, generic aliases all. The values of
//!   the same `base` whose bytes do not overlap the written ones are provably distinct
//!   and survive (re-recorded in the new generation; only the latest `SURVIVOR_SCAN`
//!   records are examined, so a store costs O(1));
//! - an atomic with acquire semantics, `barrier`, `warp_sync` and `fence` kill `global`,
//!   `shared` and `generic`: other threads' writes become visible there, so nothing is
//!   forwarded across them (`local` is private to the thread);
//! - `call`, `vprintf` and `assert_fail` kill every space but `const`.
//!
//! `const` is never killed: a kernel cannot write it (a write is undefined behaviour, the
//! interpreter's `ConstWrite`). Volatile loads and stores never take part (a volatile
//! store still kills what it may overwrite).
//!
//! **Joins.** As in EarlyCSE, values flow only from a block to a dominator-tree child
//! whose single predecessor is that block. A child with several predecessors (a join, a
//! loop header) starts fresh generations for every space but `const`: some path into it
//! may have killed what its dominator saw. Loads from `const` stay available across joins
//! since nothing can kill them.
//!
//! **Requires**: a verified function. **Establishes**: nothing about loop forms (it
//! changes no block). **Preserves**: the CFG, dominator and post-dominator trees and the
//! loop forest (only loads are removed). **Gives up**: locations whose addresses differ
//! other than by a constant offset from the same SSA base (no alias analysis beyond
//! that), values across joins, and unreachable blocks (their uses of removed loads are
//! rewritten, nothing in them is removed). **Knobs**: none. **Stats**: `NumLoadsCSE`
//! (load replaced by an earlier load), `NumForwarded` (load replaced by a stored value),
//! `NumPureCSE` (pure instruction replaced by an identical dominating one).

use crate::analyses::Analyses;
use crate::manager::{FunctionPass, PassContext, PassError, PassResult};
use gyre_analysis::DomTree;
use gyre_ir::dfg::InstTable;
use gyre_ir::{
    AddrSpace, Block, Function, Inst, InstructionData, Opcode, SecondaryMap, Type, Value, ValueDef,
};
use rustc_hash::FxHashMap;

const NAME: &str = "early-cse";
/// How many of the latest records a store examines for same-base survivors.
const SURVIVOR_SCAN: usize = 64;
/// How many `ptradd`s an address is followed through to its base.
const MAX_CHAIN: usize = 16;
/// Functions with more values than this (arena size) give the pass's tables back at the
/// end of a run.
const RELEASE_ABOVE: usize = 1 << 16;
/// Spaces, indexed as in [`AddrSpace::ALL`].
const NUM_SPACES: usize = AddrSpace::ALL.len();

fn space_index(s: AddrSpace) -> usize {
    AddrSpace::ALL
        .iter()
        .position(|&a| a == s)
        .expect("every space is in ALL")
}

const fn bit(s: AddrSpace) -> u8 {
    1 << (s as u8)
}
/// Every space a thread may write: all but `const`.
const WRITABLE: u8 = bit(AddrSpace::Generic)
    | bit(AddrSpace::Global)
    | bit(AddrSpace::Shared)
    | bit(AddrSpace::Local);
/// The spaces other threads' writes reach: a barrier or fence makes them visible.
const SHARED_WITH_OTHERS: u8 =
    bit(AddrSpace::Generic) | bit(AddrSpace::Global) | bit(AddrSpace::Shared);

/// A memory location: base address, constant byte offset, access type.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
struct Loc {
    base: Value,
    off: i64,
    ty: Type,
}

/// An available value of a location, valid while its space is at generation `gen`.
#[derive(Copy, Clone, Debug)]
struct Avail {
    val: Value,
    gen: u32,
    /// Was it written by a store (for the counters)?
    stored: bool,
}

/// One step of the iterative dominator-tree walk.
enum Step {
    Enter(Block),
    /// Leave a block's subtree: restore the generations and the table to their state
    /// before the block.
    Exit {
        gens: [u32; NUM_SPACES],
        log: usize,
        pure_log: usize,
    },
}

/// The `early-cse` function pass (see the module documentation).
#[derive(Default)]
pub struct EarlyCse {
    table: FxHashMap<Loc, Avail>,
    /// Every record in the current dominator-tree path with what it shadowed, for undo.
    log: Vec<(Loc, Option<Avail>)>,
    gens: [u32; NUM_SPACES],
    next_gen: u32,
    subst: SecondaryMap<Value, Option<Value>>,
    survivors: Vec<(Loc, Avail)>,
    stack: Vec<Step>,
    /// Pure instructions available in the current dominator-tree path.
    pure: InstTable,
    /// The instructions `pure` holds, in insertion order, for undo.
    pure_log: Vec<Inst>,
    pure_cse: u64,
    loads_cse: u64,
    forwarded: u64,
}

impl EarlyCse {
    /// The pass object lives as long as the pipeline: a large function's tables are
    /// given back rather than kept through every later pass (small ones are reused).
    fn release_if_large(&mut self, func: &Function) {
        if func.dfg.num_values() > RELEASE_ABOVE {
            *self = EarlyCse::default();
        }
    }

    fn record(&mut self, loc: Loc, val: Value, stored: bool, space: usize) {
        let a = Avail {
            val,
            gen: self.gens[space],
            stored,
        };
        let old = self.table.insert(loc, a);
        self.log.push((loc, old));
    }

    /// Start fresh generations for the spaces in `mask`, keeping the valid records of
    /// `keep.0` whose bytes do not overlap `keep.1..keep.2` (same base, disjoint bytes:
    /// provably not written).
    fn kill(&mut self, func: &Function, mask: u8, keep: Option<(Value, i64, i64)>) {
        self.survivors.clear();
        if let Some((base, lo, hi)) = keep {
            for &(loc, _) in self.log.iter().rev().take(SURVIVOR_SCAN) {
                if loc.base != base {
                    continue;
                }
                let s = space_of(func, base);
                let Some(&a) = self.table.get(&loc) else {
                    continue;
                };
                let end = loc.off.saturating_add(i64::from(loc.ty.bytes()));
                if a.gen == self.gens[s] && (end <= lo || hi <= loc.off) {
                    self.survivors.push((loc, a));
                }
            }
        }
        for (i, s) in AddrSpace::ALL.iter().enumerate() {
            if mask & bit(*s) != 0 {
                self.next_gen += 1;
                self.gens[i] = self.next_gen;
            }
        }
        let survivors = core::mem::take(&mut self.survivors);
        for &(loc, a) in &survivors {
            let s = space_of(func, loc.base);
            if self.table.get(&loc).is_some_and(|b| b.gen == self.gens[s]) {
                continue; // already re-recorded (the log named it twice)
            }
            self.record(loc, a.val, a.stored, s);
        }
        self.survivors = survivors;
    }

    /// The spaces a write to `space` may change.
    fn write_mask(space: AddrSpace) -> u8 {
        match space {
            AddrSpace::Generic => WRITABLE,
            s => bit(s) | bit(AddrSpace::Generic),
        }
    }

    fn visit_block(&mut self, func: &mut Function, b: Block) {
        let mut cur = func.layout.first_inst(b);
        while let Some(i) = cur {
            cur = func.layout.next_inst(i);
            if self.loads_cse + self.forwarded + self.pure_cse > 0 {
                let subst = &self.subst;
                func.dfg.map_inst_values(i, |v| subst[v].unwrap_or(v));
            }
            self.visit_inst(func, i);
        }
    }

    fn visit_inst(&mut self, func: &mut Function, i: Inst) {
        let op = func.dfg.inst(i).opcode();
        if is_pure(op) {
            if let Some(res) = func.dfg.inst_result(i) {
                let j = self.pure.get_or_insert(&func.dfg, i);
                if j == i {
                    self.pure_log.push(i);
                } else {
                    self.subst[res] = func.dfg.inst_result(j);
                    self.pure_cse += 1;
                    func.layout.remove_inst(i);
                }
            }
            return;
        }
        match *func.dfg.inst(i) {
            InstructionData::Load { ptr, flags } => {
                if flags.volatile {
                    return;
                }
                let Some(res) = func.dfg.inst_result(i) else {
                    return;
                };
                let ty = func.dfg.value_type(res);
                let (base, off) = decompose(func, ptr);
                let s = space_of(func, base);
                let loc = Loc { base, off, ty };
                match self.table.get(&loc) {
                    Some(a) if a.gen == self.gens[s] => {
                        self.subst[res] = Some(a.val);
                        if a.stored {
                            self.forwarded += 1;
                        } else {
                            self.loads_cse += 1;
                        }
                        func.layout.remove_inst(i);
                    }
                    _ => self.record(loc, res, false, s),
                }
            }
            InstructionData::Store { args, flags } => {
                let [val, ptr] = args;
                let ty = func.dfg.value_type(val);
                let (base, off) = decompose(func, ptr);
                let space = func.dfg.value_type(base).addr_space().expect("pointer");
                let hi = off.saturating_add(i64::from(ty.bytes()));
                self.kill(func, Self::write_mask(space), Some((base, off, hi)));
                if !flags.volatile {
                    self.record(Loc { base, off, ty }, val, true, space_index(space));
                }
            }
            InstructionData::AtomicRmw { args, order, .. } => {
                self.kill_atomic(func, args[0], args[1], order.acquires())
            }
            InstructionData::AtomicCas { args, order, .. } => {
                self.kill_atomic(func, args[0], args[1], order.acquires())
            }
            InstructionData::Nullary {
                opcode: Opcode::Barrier,
            }
            | InstructionData::WarpSync { .. }
            | InstructionData::Fence { .. } => self.kill(func, SHARED_WITH_OTHERS, None),
            InstructionData::Call { .. }
            | InstructionData::Vprintf { .. }
            | InstructionData::AssertFail { .. } => self.kill(func, WRITABLE, None),
            _ => {}
        }
    }

    /// An atomic writes its location (never forwarded: its result is the old value) and,
    /// when it acquires, makes other threads' writes visible.
    fn kill_atomic(&mut self, func: &Function, ptr: Value, val: Value, acquires: bool) {
        let (base, off) = decompose(func, ptr);
        let space = func.dfg.value_type(base).addr_space().expect("pointer");
        let mut mask = Self::write_mask(space);
        let mut keep = Some((
            base,
            off,
            off.saturating_add(i64::from(func.dfg.value_type(val).bytes())),
        ));
        if acquires {
            mask |= SHARED_WITH_OTHERS;
            keep = None;
        }
        self.kill(func, mask, keep);
    }
}

/// May an instruction with this opcode be replaced by an identical one that dominates it?
/// Not if it has effects, reads memory (loads are handled by location), is convergent or
/// is a `freeze` (each may choose its own value).
fn is_pure(op: Opcode) -> bool {
    !(op.has_side_effects()
        || op.reads_memory()
        || op.is_convergent()
        || op.is_terminator()
        || op == Opcode::Freeze)
}

fn space_of(func: &Function, base: Value) -> usize {
    space_index(
        func.dfg
            .value_type(base)
            .addr_space()
            .expect("an address is a pointer"),
    )
}

/// `ptr` as a base and a constant byte offset: `ptradd`s with a constant index are
/// folded (at most [`MAX_CHAIN`], stopping before an offset that would overflow).
fn decompose(func: &Function, mut ptr: Value) -> (Value, i64) {
    let mut off = 0i64;
    for _ in 0..MAX_CHAIN {
        let ValueDef::Result(def) = func.dfg.value_def(ptr) else {
            break;
        };
        let InstructionData::PtrAdd { args, scale } = *func.dfg.inst(def) else {
            break;
        };
        let ValueDef::Result(k) = func.dfg.value_def(args[1]) else {
            break;
        };
        let InstructionData::IntConst { imm } = *func.dfg.inst(k) else {
            break;
        };
        // The index is sign-extended from its width: `imm` is stored sign-extended.
        let Some(next) = imm
            .checked_mul(i64::from(scale))
            .and_then(|d| off.checked_add(d))
        else {
            break;
        };
        off = next;
        ptr = args[0];
    }
    (ptr, off)
}

impl FunctionPass for EarlyCse {
    fn name(&self) -> &'static str {
        NAME
    }

    fn run(
        &mut self,
        func: &mut Function,
        cx: &mut PassContext<'_>,
    ) -> Result<PassResult, PassError> {
        cx.analyses
            .ensure(func, Analyses::DOMTREE)
            .map_err(|e| PassError(format!("{NAME}: @{}: {e}", func.name)))?;
        let (cfg, dt): (_, &DomTree) = (&cx.analyses.cfg, &cx.analyses.domtree);
        self.table.clear();
        self.log.clear();
        self.subst.clear();
        self.stack.clear();
        self.pure.clear();
        self.pure_log.clear();
        self.pure_cse = 0;
        self.gens = [0; NUM_SPACES];
        self.next_gen = 0;
        self.loads_cse = 0;
        self.forwarded = 0;
        let Some(root) = dt.root() else {
            return Ok(PassResult::UNCHANGED);
        };
        self.stack.push(Step::Enter(root));
        while let Some(step) = self.stack.pop() {
            match step {
                Step::Exit {
                    gens,
                    log,
                    pure_log,
                } => {
                    self.gens = gens;
                    while self.pure_log.len() > pure_log {
                        let i = self.pure_log.pop().expect("longer than `pure_log`");
                        self.pure.remove(&func.dfg, i);
                    }
                    while self.log.len() > log {
                        let (loc, old) = self.log.pop().expect("longer than `log`");
                        match old {
                            Some(a) => self.table.insert(loc, a),
                            None => self.table.remove(&loc),
                        };
                    }
                }
                Step::Enter(b) => {
                    self.stack.push(Step::Exit {
                        gens: self.gens,
                        log: self.log.len(),
                        pure_log: self.pure_log.len(),
                    });
                    // Only a block whose one predecessor is its parent sees the parent's
                    // values: on another path into a join something may have killed them.
                    let parent = dt.idom(b);
                    let preds = cfg.preds(b);
                    if b != root && (preds.is_empty() || preds.iter().any(|&p| Some(p) != parent)) {
                        self.kill(func, WRITABLE, None);
                    }
                    self.visit_block(func, b);
                    for c in dt.children(b) {
                        self.stack.push(Step::Enter(c));
                    }
                }
            }
        }
        if self.loads_cse + self.forwarded + self.pure_cse == 0 {
            self.release_if_large(func);
            return Ok(PassResult::UNCHANGED);
        }
        // Unreachable blocks may use a removed load (dominance holds vacuously there).
        let mut cur = func.layout.entry_block();
        while let Some(b) = cur {
            cur = func.layout.next_block(b);
            if dt.is_reachable(b) {
                continue;
            }
            let mut inst = func.layout.first_inst(b);
            while let Some(i) = inst {
                inst = func.layout.next_inst(i);
                let subst = &self.subst;
                func.dfg.map_inst_values(i, |v| subst[v].unwrap_or(v));
            }
        }
        cx.stats.add(NAME, "NumLoadsCSE", self.loads_cse);
        cx.stats.add(NAME, "NumForwarded", self.forwarded);
        cx.stats.add(NAME, "NumPureCSE", self.pure_cse);
        self.release_if_large(func);
        Ok(PassResult::changed(
            Analyses::CFG
                .union(Analyses::DOMTREE)
                .union(Analyses::POSTDOM)
                .union(Analyses::LOOPS),
        ))
    }
}
