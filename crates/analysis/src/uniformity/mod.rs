//! Uniformity (divergence) analysis for SIMT execution.
//!
//! The threads of a warp run in lockstep. A value is **uniform** when every thread of a
//! warp that computes the same dynamic instance of it gets the same result, **divergent**
//! otherwise. A dynamic instance is identified, as in LLVM's convergence model, by the
//! value and the iteration of every loop around its definition: two threads that reach a
//! block in different iterations of a loop around it are not "together" there. The
//! analysis is a may-divergence analysis: *uniform* is a guarantee, *divergent* only a
//! possibility. docs/uniformity.md states the rules in full; in short:
//!
//! **Sources** (following LLVM's NVPTX target, `NVPTXTTIImpl::isSourceOfDivergence`):
//! `tid.x/y/z` and `laneid`; results of `atomic_*` and `atomic_cas`; `load`s through a
//! `generic` or `local` pointer; the parameters of device functions (kernel parameters
//! are uniform); results of `call`; results of `shfl` and `vote` (a vote is the same
//! in the threads of its mask, but not across the CTA's warps, and uniformity here means
//! CTA-wide), of `clock` (each thread's own counter) and of `vprintf` (its count of
//! arguments read depends on a format in memory). `ctaid`, `ntid`, `nctaid`, `warpsize`, constants,
//! `global_addr` and `slot_addr` are uniform and stay so whatever happens around them.
//!
//! **Data dependence**: an instruction with a divergent operand has a divergent result;
//! a block parameter with a divergent argument on any incoming edge is divergent; a
//! `brif`/`br_table` on a divergent operand is a divergent branch.
//!
//! **Sync dependence**: a divergent branch at `B` makes divergent the parameters of every
//! *join* of `B` — a block reached from two different out-edges of `B` by disjoint paths
//! within one iteration of the loops around `B` — unless the parameter receives the same
//! SSA value on every incoming edge. Joins are found by the label propagation of
//! Rosemann, Moll and Hack (POPL 2021), as LLVM's `GenericSyncDependenceAnalysis` does it:
//! every out-edge of `B` defines its own label, labels flow forward in the loop-contiguous
//! order (module `order`) and a block reached by two different labels is a join and
//! relabels itself.
//! A loop header takes the labels of its latches (the next iteration) and passes its
//! label straight to the loop's exits.
//!
//! **Divergent loops and temporal divergence**: if an exit of a loop around `B` ends up
//! with a label different from the loop header's (some threads leave while others go on,
//! or `B` exits directly), the outermost loop around `B` not containing that exit has a
//! *divergent exit*. Threads leave it in different iterations, so every use outside the
//! loop of a value defined inside it is divergent *at that use*: Gyre marks the using
//! instruction's result (or branch, or block parameter) divergent — LLVM records the use
//! instead. LCSSA exit parameters are such uses.
//!
//! **Irreducible cycles** (conservative): when a divergent branch lies in an irreducible
//! cycle or its labels reach one, every definition in the cycle is divergent, every
//! block of it runs under divergent control and every exit of it is a join.
//!
//! **Divergent control**: a block may run with part of a warp inactive if it is reached
//! from a divergent branch before the branch's immediate post-dominator (where the warp
//! reconverges). Every block of a device function is assumed to (its callers may be
//! under divergent control).
//!
//! **Complexity**: building def-use lists, the order and its per-block facts (module `order`:
//! loop exits, dead ends, which blocks are *private*, last predecessors, and in functions
//! with irreducible cycles the cycle spans and reach ranges) is O(n + e + loop exits).
//! Data propagation visits each use once. Temporal divergence takes each use that leaves a
//! loop around its definition once, from a segment tree (module `temporal`), instead of
//! walking the blocks of every loop that gets a divergent exit (blocks x depth on deep
//! nests). Divergent-control regions expand each block once in all: a block already
//! expanded for another reconvergence point is either covered or continued from that
//! point (see `mark_divergent_region`). Each divergent branch costs that, plus
//! its label sweep, which is kept local by three rules that change no result (the plain
//! sweep — LLVM's — finds exactly the same joins, divergent exits and touched cycles):
//! - an *inert* block is labelled but not queued. It is private — it dominates every
//!   block the propagation graph reaches from it, that region holds no cycle, and no
//!   cycle span covers it — and is not the header of a loop around the branch. Popping
//!   it could only pass one label into a region no other label can enter, so no join
//!   can form there; whether the block itself is a join is decided by its predecessors;
//! - the sweep stops when one block is queued and either LLVM's rule holds (nothing
//!   but the own sweeps of inert blocks would be left, and those find nothing), or the
//!   label left reaches no cycle and no inert block that still waits for a predecessor
//!   (in reducible functions the second test always applies: a merged label stops);
//! - with irreducible cycles, where how far the plain sweep runs matters (a lone label
//!   that reaches a cycle taints it), a *memo point* — a block whose label the sweep
//!   will run to its end in a way that depends on the block alone (see
//!   `Uniformity::is_memo_point`) — is skipped when an earlier propagation already ran
//!   it: its effects, tainted parameters and cycles, are idempotent.
//!
//! In structured code a merge block dominates what follows it, so a sweep ends at the
//! first such merge after the branch whatever the function's size, and early-return
//! arms (placed at the end of the order) no longer drag it across the rest of the
//! function. Measured with the criterion bench on generated kernels: 4.4 / 41.7 µs per
//! block at 10k / 100k blocks before, 2.2 / 2.6 after (docs/uniformity.md). The worst
//! case is still superlinear (a long chain of branches whose labels all stay apart);
//! nothing recurses.
//!
//! [`reference`](mod@reference) keeps a naive fixed point over all paths, for tests.

mod order;
pub mod print;
pub mod reference;
mod temporal;

use crate::cfg::Cfg;
use crate::domtree::DomTree;
use crate::loops::{Loop, LoopInfo};
use crate::postdom::PostDomTree;
use bitvec::vec::BitVec;
use cranelift_entity::packed_option::PackedOption;
use cranelift_entity::EntityRef;
use gyre_ir::{
    AddrSpace, Block, FuncKind, Function, Inst, InstructionData, Opcode, SpecialReg, Value,
    ValueDef,
};
use order::{PosQueue, PropagationOrder, NO_POS};

/// How an instruction's result starts out.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum SourceKind {
    /// Same in every thread whatever its operands: constants, `ctaid`, `ntid`,
    /// `nctaid`, `warpsize`, `global_addr`, `slot_addr`.
    AlwaysUniform,
    /// A source of divergence: `tid.*`, `laneid`, atomics, generic/local loads, calls,
    /// `shfl`, `vote`, `clock`, `vprintf`.
    Divergent,
    /// Divergent exactly when an operand is (or by sync or temporal divergence).
    Propagated,
}

/// Classify an instruction of `func` (see the module doc for the list).
pub fn source_kind(func: &Function, inst: Inst) -> SourceKind {
    use InstructionData as D;
    match func.dfg.inst(inst) {
        D::IntConst { .. } | D::FloatConst { .. } | D::GlobalAddr { .. } | D::SlotAddr { .. } => {
            SourceKind::AlwaysUniform
        }
        D::Sreg { reg } => match reg {
            SpecialReg::TidX | SpecialReg::TidY | SpecialReg::TidZ | SpecialReg::LaneId => {
                SourceKind::Divergent
            }
            _ => SourceKind::AlwaysUniform,
        },
        D::AtomicRmw { .. }
        | D::AtomicCas { .. }
        | D::Call { .. }
        | D::Shfl { .. }
        | D::Vote { .. }
        // The count of arguments `vprintf` read depends on a format in memory.
        | D::Vprintf { .. }
        | D::Nullary {
            opcode: Opcode::Clock,
        } => SourceKind::Divergent,
        D::Load { ptr, .. } => match func.dfg.value_type(*ptr).addr_space() {
            Some(AddrSpace::Generic | AddrSpace::Local) | None => SourceKind::Divergent,
            Some(_) => SourceKind::Propagated,
        },
        _ => SourceKind::Propagated,
    }
}

/// Do `a` and `b` hold the same value in every thread: the same SSA value, or constants
/// of one type with the same bits (LLVM's constants are uniqued; Gyre's are not)?
pub fn same_value(func: &Function, a: Value, b: Value) -> bool {
    if a == b {
        return true;
    }
    let def = |v: Value| match func.dfg.value_def(v) {
        ValueDef::Result(i) => Some(func.dfg.inst(i)),
        _ => None,
    };
    match (def(a), def(b)) {
        (Some(x @ InstructionData::IntConst { .. }), Some(y))
        | (Some(x @ InstructionData::FloatConst { .. }), Some(y)) => {
            x == y && func.dfg.value_type(a) == func.dfg.value_type(b)
        }
        _ => false,
    }
}

/// One use of a value, by what it makes divergent: `target` is a value (a result or a
/// block parameter) or, with [`BRANCH`] set, the block whose terminator branches on it.
/// `block` holds the using instruction; `to` is the block owning the parameter for an
/// argument passed to a block parameter, else `block` again. Operands of instructions
/// without a result are not listed: they make nothing divergent.
#[derive(Copy, Clone)]
struct Use {
    target: u32,
    block: Block,
    to: Block,
}

/// Marks a [`Use`] target that is a branch block.
const BRANCH: u32 = 1 << 31;

/// Marks "never expanded" in the divergent-control memo.
const NEVER: u32 = u32::MAX;
/// The virtual exit as a reconvergence point in the divergent-control memo.
const VIRTUAL_EXIT: u32 = u32::MAX - 1;
/// No label.
const NO_LABEL: u32 = u32::MAX;

/// Uniformity of every value, branch and block of a function.
///
/// Computed from the function and its CFG, dominator tree, post-dominator tree and loop
/// forest; not kept in sync with any of them.
#[derive(Clone, Default)]
pub struct Uniformity {
    div_values: BitVec,
    div_branches: BitVec,
    uniform_branch_insts: BitVec,
    div_control: BitVec,
    div_loops: BitVec,
    div_cycles: BitVec,
    /// Headers of the loops with a divergent exit (for printing without a LoopInfo).
    div_loop_headers: BitVec,
    valid: bool,
    // ---- scratch, reused across runs ----
    order: PropagationOrder,
    use_range: Vec<[u32; 2]>,
    uses: Vec<Use>,
    /// Per value: defined by an [`SourceKind::AlwaysUniform`] instruction.
    always_uniform: BitVec,
    kind: Vec<SourceKind>,
    label: Vec<u32>,
    label_stamp: Vec<u32>,
    heap_stamp: Vec<u32>,
    stamp: u32,
    heap: PosQueue,
    joins: Vec<Block>,
    cycle_exits: Vec<Block>,
    touched: Vec<u32>,
    /// `stamp` of the propagation that last touched each irreducible cycle: an O(1)
    /// membership test for `touched`.
    touched_stamp: Vec<u32>,
    touched_done: usize,
    value_work: Vec<Value>,
    branch_work: Vec<Block>,
    expanded: Vec<u32>,
    region_stamp: Vec<u32>,
    region_epoch: u32,
    bfs: Vec<Block>,
    args_scratch: Vec<Value>,
    /// May inert blocks be parked (the function has no irreducible cycle)?
    park: bool,
    /// Can a join at a loop exit still mark a loop divergent in this propagation (the
    /// branch is in a loop whose outermost loop is not divergent yet)?
    exit_join_matters: bool,
    /// Header of the outermost loop around the branch being propagated: the one private
    /// block that is not inert for it (its loop holds the branch).
    outer_header: PackedOption<Block>,
    /// 1 + the largest position the plain sweep would still have queued for the inert
    /// blocks labelled so far (their own sweeps), 0 if none.
    virtual_end: u32,
    /// 1 + the largest position of a block that can still pass a label to an inert,
    /// unparked block labelled so far, 0 if none.
    live_end: u32,
    /// Use memo points (functions with irreducible cycles: elsewhere a merged label
    /// always stops the sweep)?
    memo: bool,
    /// Per block: has a sweep run everything from this block as a memo point (see
    /// [`Self::is_memo_point`])?
    full_done: BitVec,
    /// Memo points whose run is under way in this sweep, with the last position they
    /// reach (nested: each lies in the previous one's range).
    memo_open: Vec<(Block, u32)>,
    /// Inert, unparked blocks labelled in this sweep (memo functions only): position and
    /// `last_pred`.
    live: Vec<(u32, u32)>,
    /// Uses that leave a loop around their definition, for temporal divergence.
    escapes: temporal::Escapes,
    /// Scratch: the use targets a divergent loop makes divergent.
    escaped: Vec<u32>,
    /// Tests: sweep as the plain propagation does (no inert blocks, no early stop
    /// beyond LLVM's rule, no memo), to check that the shortcuts change nothing.
    plain: bool,
}

impl Uniformity {
    /// An empty, invalid analysis.
    pub fn new() -> Uniformity {
        Uniformity::default()
    }

    /// Compute the uniformity of `func`.
    pub fn with_function(
        func: &Function,
        cfg: &Cfg,
        dt: &DomTree,
        pdt: &PostDomTree,
        li: &LoopInfo,
    ) -> Uniformity {
        let mut u = Uniformity::new();
        u.compute(func, cfg, dt, pdt, li);
        u
    }

    /// Forget the results (keeps the buffers).
    pub fn clear(&mut self) {
        self.div_values.clear();
        self.div_branches.clear();
        self.uniform_branch_insts.clear();
        self.div_control.clear();
        self.div_loops.clear();
        self.div_cycles.clear();
        self.div_loop_headers.clear();
        self.valid = false;
    }

    /// Has `compute` run since the last `clear`?
    pub fn is_valid(&self) -> bool {
        self.valid
    }

    /// Is `v` divergent (may differ between threads of a warp in one dynamic instance)?
    /// Values created after `compute` are reported divergent.
    pub fn is_divergent(&self, v: Value) -> bool {
        self.div_values.get(v.index()).is_none_or(|b| *b)
    }

    /// Is `v` uniform (the same in all threads of a warp in each dynamic instance)?
    pub fn is_uniform(&self, v: Value) -> bool {
        !self.is_divergent(v)
    }

    /// Is `inst` a branch all *active* threads of a warp take the same way (what PTX's
    /// `bra.uni` asks)? True for every `jump` and for `brif`/`br_table` on a uniform
    /// operand, even in a block that runs under divergent control. False for divergent
    /// branches and for instructions that are not branches.
    pub fn is_branch_uniform(&self, inst: Inst) -> bool {
        self.uniform_branch_insts
            .get(inst.index())
            .is_some_and(|b| *b)
    }

    /// Does `block` end in a divergent `brif` or `br_table`?
    pub fn is_block_branch_divergent(&self, block: Block) -> bool {
        self.div_branches.get(block.index()).is_some_and(|b| *b)
    }

    /// May `block` run with only part of a warp active (after a divergent branch and
    /// before the warp reconverges, in a device function, or in an irreducible cycle
    /// reached by divergent control)?
    pub fn block_may_be_divergent_control(&self, block: Block) -> bool {
        self.div_control.get(block.index()).is_none_or(|b| *b)
    }

    /// Does loop `l` have a divergent exit (threads may leave it in different
    /// iterations or by different exits)?
    pub fn is_loop_divergent(&self, l: Loop) -> bool {
        self.div_loops.get(l.index()).is_some_and(|b| *b)
    }

    /// Is `block` the header of a loop with a divergent exit?
    pub fn is_divergent_loop_header(&self, block: Block) -> bool {
        self.div_loop_headers.get(block.index()).is_some_and(|b| *b)
    }

    /// Is the `i`th irreducible cycle of the [`LoopInfo`] assumed divergent?
    pub fn is_irreducible_cycle_divergent(&self, i: usize) -> bool {
        self.div_cycles.get(i).is_some_and(|b| *b)
    }

    /// Number of divergent values among the values defined in the layout.
    pub fn num_divergent(&self) -> usize {
        self.div_values.count_ones()
    }

    /// Recompute from scratch, reusing buffers.
    pub fn compute(
        &mut self,
        func: &Function,
        cfg: &Cfg,
        dt: &DomTree,
        pdt: &PostDomTree,
        li: &LoopInfo,
    ) {
        debug_assert!(
            cfg.is_valid() && cfg.is_order_valid() && dt.is_valid() && pdt.is_valid(),
            "Uniformity::compute needs valid Cfg, DomTree and PostDomTree"
        );
        debug_assert!(li.is_valid(), "Uniformity::compute needs a valid LoopInfo");
        self.clear();
        let nv = func.dfg.num_values();
        let nb = cfg.num_block_slots().max(func.dfg.num_blocks());
        let ni = func.dfg.num_insts();
        self.div_values.resize(nv, false);
        self.div_branches.resize(nb, false);
        self.uniform_branch_insts.resize(ni, false);
        self.div_control.resize(nb, false);
        self.div_loop_headers.resize(nb, false);
        self.div_loops.resize(li.num_loops(), false);
        self.div_cycles.resize(li.irreducible_cycles().len(), false);
        self.build_uses(func);
        self.escapes
            .compute(func, li, &self.use_range, &self.uses, &self.kind);
        self.order.compute(cfg, dt, li);
        self.label.clear();
        self.label.resize(nb, NO_LABEL);
        self.label_stamp.clear();
        self.label_stamp.resize(nb, 0);
        self.heap_stamp.clear();
        self.heap_stamp.resize(nb, 0);
        self.heap.reset(self.order.order.len());
        self.touched_stamp.clear();
        self.touched_stamp.resize(li.irreducible_cycles().len(), 0);
        self.stamp = 0;
        self.expanded.clear();
        self.expanded.resize(nb, NEVER);
        self.region_stamp.clear();
        self.region_stamp.resize(nb, 0);
        self.region_epoch = 0;
        self.full_done.clear();
        self.full_done.resize(nb, false);
        self.memo = !li.irreducible_cycles().is_empty() && !self.plain;
        // Parking is only proven to change nothing on reducible functions: there the
        // plain sweep parked sinks too, and its stopping point does not matter.
        self.park = li.irreducible_cycles().is_empty();
        self.value_work.clear();
        self.branch_work.clear();

        // Seeds.
        if func.kind == FuncKind::Device {
            if let Some(entry) = func.entry_block() {
                for &p in func.dfg.block_params(entry) {
                    self.mark_value(p);
                }
            }
            for b in func.layout.blocks() {
                self.div_control.set(b.index(), true);
            }
        }
        for b in func.layout.blocks() {
            for inst in func.layout.block_insts(b) {
                if self.kind[inst.index()] == SourceKind::Divergent {
                    if let Some(r) = func.dfg.inst_result(inst) {
                        self.mark_value(r);
                    }
                }
            }
        }

        // Propagate: values first (cheap), then one divergent branch at a time.
        loop {
            while let Some(v) = self.value_work.pop() {
                self.push_users(cfg, v);
            }
            match self.branch_work.pop() {
                Some(b) => self.analyze_branch(func, cfg, pdt, li, b),
                None => break,
            }
        }

        for b in func.layout.blocks() {
            if let Some(t) = func.terminator(b) {
                let uniform = match func.dfg.inst(t).opcode() {
                    Opcode::Jump => true,
                    Opcode::Brif | Opcode::BrTable => !self.div_branches[b.index()],
                    _ => false,
                };
                self.uniform_branch_insts.set(t.index(), uniform);
            }
        }
        self.valid = true;
    }

    /// Def-use lists in CSR form, and the source kind of every instruction.
    fn build_uses(&mut self, func: &Function) {
        let nv = func.dfg.num_values();
        self.kind.clear();
        self.kind
            .resize(func.dfg.num_insts(), SourceKind::Propagated);
        self.use_range.clear();
        self.use_range.resize(nv, [0, 0]);
        self.always_uniform.clear();
        self.always_uniform.resize(nv, false);
        // Count.
        for b in func.layout.blocks() {
            for inst in func.layout.block_insts(b) {
                let k = source_kind(func, inst);
                self.kind[inst.index()] = k;
                if k == SourceKind::AlwaysUniform {
                    if let Some(r) = func.dfg.inst_result(inst) {
                        self.always_uniform.set(r.index(), true);
                    }
                }
                let range = &mut self.use_range;
                func.dfg
                    .for_each_inst_value(inst, |v| range[v.index()][1] += 1);
            }
        }
        let mut off = 0u32;
        for r in &mut self.use_range {
            let c = r[1];
            *r = [off, off];
            off += c;
        }
        let none = Use {
            target: 0,
            block: Block::new(0),
            to: Block::new(0),
        };
        self.uses.clear();
        self.uses.resize(off as usize, none);
        // Fill (a range ends where its filling stopped: uses without effect leave gaps).
        for b in func.layout.blocks() {
            for inst in func.layout.block_insts(b) {
                let target = match func.dfg.inst(inst).opcode() {
                    Opcode::Brif | Opcode::BrTable => Some(BRANCH | b.as_u32()),
                    _ => func.dfg.inst_result(inst).map(|r| r.as_u32()),
                };
                if let Some(target) = target {
                    for &v in func.dfg.inst_args(inst) {
                        let r = &mut self.use_range[v.index()];
                        self.uses[r[1] as usize] = Use {
                            target,
                            block: b,
                            to: b,
                        };
                        r[1] += 1;
                    }
                }
                let (range, uses) = (&mut self.use_range, &mut self.uses);
                func.dfg.for_each_dest(inst, |bc| {
                    let params = func.dfg.block_params(bc.block);
                    for (k, &a) in func.dfg.block_call_args(bc).iter().enumerate() {
                        // A wrong argument count is the verifier's business; without a
                        // parameter to flow into, the argument has no effect here.
                        let Some(&p) = params.get(k) else { continue };
                        let r = &mut range[a.index()];
                        uses[r[1] as usize] = Use {
                            target: p.as_u32(),
                            block: b,
                            to: bc.block,
                        };
                        r[1] += 1;
                    }
                });
            }
        }
    }

    fn mark_value(&mut self, v: Value) {
        if !self.div_values[v.index()] && !self.always_uniform[v.index()] {
            self.div_values.set(v.index(), true);
            self.value_work.push(v);
        }
    }

    fn mark_branch(&mut self, cfg: &Cfg, b: Block) {
        if !self.div_branches[b.index()] {
            self.div_branches.set(b.index(), true);
            // Nothing runs in an unreachable block: no control divergence from it.
            if cfg.is_reachable(b) {
                self.branch_work.push(b);
            }
        }
    }

    /// Make a use's target divergent: the value, or the branch.
    fn mark_target(&mut self, cfg: &Cfg, target: u32) {
        if target & BRANCH != 0 {
            self.mark_branch(cfg, Block::from_u32(target & !BRANCH));
        } else {
            self.mark_value(Value::from_u32(target));
        }
    }

    fn push_users(&mut self, cfg: &Cfg, v: Value) {
        let [a, b] = self.use_range[v.index()];
        for i in a..b {
            let t = self.uses[i as usize].target;
            self.mark_target(cfg, t);
        }
    }

    /// Control divergence of the divergent branch ending `b`.
    fn analyze_branch(
        &mut self,
        func: &Function,
        cfg: &Cfg,
        pdt: &PostDomTree,
        li: &LoopInfo,
        b: Block,
    ) {
        self.mark_divergent_region(cfg, pdt, b);
        self.propagate_labels(func, cfg, li, b);
        let joins = core::mem::take(&mut self.joins);
        for &j in &joins {
            self.taint_params(func, cfg, j);
        }
        self.joins = joins;
        let exits = core::mem::take(&mut self.cycle_exits);
        for &e in &exits {
            self.taint_params(func, cfg, e);
            // The outermost loop around `b` that `e` is outside of.
            let mut l = li.innermost_loop(b);
            let mut outer = None;
            while let Some(x) = l {
                if li.contains(x, e) {
                    break;
                }
                outer = Some(x);
                l = li.parent(x);
            }
            if let Some(o) = outer {
                self.mark_divergent_loop(cfg, li, o);
            }
        }
        self.cycle_exits = exits;
        let touched = core::mem::take(&mut self.touched);
        for &c in &touched {
            self.taint_cycle(func, cfg, li, c as usize);
        }
        self.touched = touched;
    }

    /// Blocks reachable from `b`'s successors before its immediate post-dominator run
    /// under divergent control. A block already expanded for the same reconvergence
    /// point is not expanded again: everything it reaches is marked.
    fn mark_divergent_region(&mut self, cfg: &Cfg, pdt: &PostDomTree, b: Block) {
        let ipdom = pdt.ipdom(b);
        let stop_code = ipdom.map_or(VIRTUAL_EXIT, |p| p.as_u32());
        self.region_epoch += 1;
        let epoch = self.region_epoch;
        self.bfs.clear();
        for &s in cfg.succs(b) {
            if Some(s) != ipdom && self.region_stamp[s.index()] != epoch {
                self.region_stamp[s.index()] = epoch;
                self.bfs.push(s);
            }
        }
        while let Some(y) = self.bfs.pop() {
            self.div_control.set(y.index(), true);
            let done = self.expanded[y.index()];
            if done == stop_code {
                continue;
            }
            if done != NEVER {
                // `y` was expanded for another reconvergence point `q`: everything it
                // reaches before `q` is marked. `q` and `ipdom` both post-dominate `y`
                // (a block reached from a branch before its ipdom is post-dominated by
                // it), so one post-dominates the other. If `q` does, every path from `y`
                // reaches `ipdom` before `q`: nothing is left. Otherwise every path from
                // `y` to `ipdom` passes `q` first: the region goes on from `q` only.
                // So each block is expanded once in all, where re-expanding it per
                // reconvergence point cost blocks x depth on deep nests.
                if done == VIRTUAL_EXIT {
                    continue;
                }
                let q = Block::from_u32(done);
                if ipdom.is_some_and(|p| pdt.post_dominates(q, p)) {
                    continue;
                }
                if self.region_stamp[q.index()] != epoch {
                    self.region_stamp[q.index()] = epoch;
                    self.bfs.push(q);
                }
                continue;
            }
            self.expanded[y.index()] = stop_code;
            for &s in cfg.succs(y) {
                if Some(s) != ipdom && self.region_stamp[s.index()] != epoch {
                    self.region_stamp[s.index()] = epoch;
                    self.bfs.push(s);
                }
            }
        }
    }

    fn label_of(&self, b: Block) -> u32 {
        if self.label_stamp[b.index()] == self.stamp {
            self.label[b.index()]
        } else {
            NO_LABEL
        }
    }

    fn set_label(&mut self, b: Block, l: u32) {
        self.label_stamp[b.index()] = self.stamp;
        self.label[b.index()] = l;
    }

    /// Is inert block `b` one whose join status can have no effect now (in a reducible
    /// function)? Joins at it are still found while the propagation runs; those missed
    /// by stopping earlier are harmless: a join's only effects are tainting its
    /// parameters (none left that are not divergent already — no value changes during a
    /// propagation) and, for a loop exit, marking the outermost loop around the branch
    /// divergent (already done, or no loop).
    fn parked(&self, func: &Function, b: Block) -> bool {
        self.park
            && !(self.order.is_exit(b) && self.exit_join_matters)
            && func
                .dfg
                .block_params(b)
                .iter()
                .all(|p| self.div_values[p.index()])
    }

    fn push_block(&mut self, func: &Function, b: Block) {
        let p = self.order.pos[b.index()];
        // A label that can meet no other one, at this block (one incoming edge) or
        // downstream, has nothing left to do: dropping it keeps a dead-end arm (an early
        // return) from holding the stopping rule off until the end of the function.
        if p == NO_POS || self.order.is_dead_end(b) || self.heap_stamp[b.index()] == self.stamp {
            return;
        }
        self.heap_stamp[b.index()] = self.stamp;
        if self.order.is_private(b) && self.outer_header.expand() != Some(b) && !self.plain {
            // Inert: popping it could only pass one label into a region nothing else
            // enters, so it is not queued; only whether it becomes a join matters, and
            // that is decided by its predecessors (see the module doc).
            let bi = b.index();
            self.virtual_end = self.virtual_end.max(self.order.last_flood[bi]);
            if !self.parked(func, b) {
                self.live_end = self.live_end.max(self.order.last_pred[bi]);
                if self.memo {
                    self.live.push((p, self.order.last_pred[bi]));
                }
            }
            return;
        }
        self.heap.push(p);
    }

    /// Push label `l` into `s`; returns whether `s` becomes (or is) a join.
    fn compute_join(&mut self, func: &Function, li: &LoopInfo, s: Block, l: u32) -> bool {
        if self.order.pos[s.index()] == NO_POS {
            return false;
        }
        let old = self.label_of(s);
        if old == l {
            return false;
        }
        if old != s.as_u32() {
            self.push_block(func, s);
        }
        let join = old != NO_LABEL;
        self.set_label(s, if join { s.as_u32() } else { l });
        let c = self.order.irr_of[s.index()];
        if c != 0 {
            self.touch_cycle(func, li, c - 1);
        }
        join
    }

    /// A label reached irreducible cycle `c`: every block of it becomes a join with its
    /// own label (the conservative treatment, see the module doc; the callers make its
    /// exits joins too).
    fn touch_cycle(&mut self, func: &Function, li: &LoopInfo, c: u32) {
        if self.touched_stamp[c as usize] == self.stamp {
            return;
        }
        self.touched_stamp[c as usize] = self.stamp;
        self.touched.push(c);
        let cycle = &li.irreducible_cycles()[c as usize];
        for &y in &cycle.blocks {
            self.set_label(y, y.as_u32());
            self.push_block(func, y);
        }
    }

    /// Sync dependence of the divergent branch ending `b`: fills `joins`,
    /// `cycle_exits` and `touched`.
    fn propagate_labels(&mut self, func: &Function, cfg: &Cfg, li: &LoopInfo, b: Block) {
        self.stamp += 1;
        self.heap.clear();
        self.joins.clear();
        self.cycle_exits.clear();
        self.touched.clear();
        self.touched_done = 0;
        let inner = li.innermost_loop(b);
        // O(1): a walk up the forest here cost depth per branch on deep nests.
        let outer = inner.map(|l| self.escapes.root(l));
        // An inert block is in no loop but `outer`: a loop exit becoming a join marks the
        // outermost loop around `b` divergent (see `analyze_branch`).
        self.exit_join_matters = outer.is_some_and(|o| !self.div_loops[o.index()]);
        self.outer_header = outer.map(|o| li.header(o)).into();
        self.virtual_end = 0;
        self.live_end = 0;
        self.memo_open.clear();
        self.live.clear();
        if self.order.irr_of[b.index()] != 0 {
            self.touch_cycle_full(func, cfg, li, self.order.irr_of[b.index()] - 1);
        }
        let mut max_popped = 0u32;
        let succs = cfg.succs(b);
        for (i, &s) in succs.iter().enumerate() {
            if succs[..i].contains(&s) {
                // Two edges into one block: its parameters can see both.
                self.joins.push(s);
            }
            if let Some(l) = inner {
                if !li.contains(l, s) {
                    // `b` leaves its loop directly (LLVM's immediate divergent exit).
                    self.cycle_exits.push(s);
                }
            }
            if self.compute_join_full(func, cfg, li, s, s.as_u32()) {
                self.joins.push(s);
            }
        }
        while let Some(p) = self.heap.peek() {
            // Memo runs the sweep is past are complete.
            while let Some(&(y, m)) = self.memo_open.last() {
                if p <= m {
                    break;
                }
                self.full_done.set(y.index(), true);
                self.memo_open.pop();
            }
            let x = self.order.order[p as usize];
            if self.heap.len() == 1
                && p > max_popped
                && !self.order.on_cycle[x.index()]
                && (p >= self.virtual_end
                    || (p >= self.live_end && self.order.is_clean(x) && !self.plain))
            {
                // All paths merged into one block that no processed block follows
                // (edges leave a block not on a cycle of the order's graph only
                // forwards). Either the plain sweep stops here too (LLVM's stopping
                // rule: only inert blocks' own sweeps were left, and they find nothing),
                // or the one label left can meet no other: it reaches no cycle, and no
                // inert block it could reach is still waiting for a predecessor.
                break;
            }
            if self.memo && p > max_popped && self.is_memo_point(li, outer, x, p) {
                if self.full_done[x.index()] {
                    // An earlier sweep ran everything from here: same effects.
                    self.heap.pop();
                    self.heap_stamp[x.index()] = 0;
                    continue;
                }
                self.memo_open.push((x, self.order.reach_hi[x.index()]));
            }
            self.heap.pop();
            max_popped = max_popped.max(p);
            let x = self.order.order[p as usize];
            self.heap_stamp[x.index()] = 0;
            let header_of = li.innermost_loop(x).filter(|&l| li.header(l) == x);
            if x == b && header_of.is_none() {
                continue;
            }
            let lab = self.label_of(x);
            match header_of {
                Some(l) => {
                    // The header's label goes to the loop's exits (its body is either
                    // entered by one label only, or already done: it comes first).
                    let inside = li.contains(l, b);
                    let n = self.order.exits(l).len();
                    for k in 0..n {
                        let e = self.order.exits(l)[k];
                        if self.compute_join_full(func, cfg, li, e, lab) {
                            self.joins.push(e);
                            if inside {
                                self.cycle_exits.push(e);
                            }
                        }
                    }
                }
                None => {
                    for &s in cfg.succs(x) {
                        if self.compute_join_full(func, cfg, li, s, lab) {
                            self.joins.push(s);
                        }
                    }
                }
            }
        }
        // Open runs ended with the sweep: it ran out, or what was left could find
        // nothing.
        for (y, _) in self.memo_open.drain(..) {
            self.full_done.set(y.index(), true);
        }
    }

    /// Is the sweep, about to pop `x` at position `p` (its smallest queued position,
    /// beyond everything popped), at a memo point: will it process everything `x`'s label
    /// reaches, in a way that depends on `x` alone? That holds when
    /// - nothing behind `p` can be queued again (`x` on no cycle, covered by no span) and
    ///   `x` is in no loop around the branch (no exit of such a loop can be a divergent
    ///   exit through `x`);
    /// - everything reachable from `x` lies in `[p, m]`, and whatever else is pending —
    ///   queued blocks, whose reach starts after `m`, or the own sweeps of inert blocks
    ///   — outlasts `m`, so that the plain sweep cannot stop before `x`'s label has run
    ///   its course (and cannot meet it);
    /// - no inert block in `[p, m]` still waits for a predecessor (its label would be
    ///   this sweep's own).
    ///
    /// Labelled blocks in `[p, m]` are then `x`, dead ends and inert blocks that nothing
    /// can reach any more; cycles there are untouched. So the sweep from `x` finds the
    /// same joins and touches the same cycles in every propagation that reaches this
    /// state, and once one has run it, the others may skip it (the effects are
    /// idempotent: tainting parameters and cycles).
    fn is_memo_point(&mut self, li: &LoopInfo, outer: Option<Loop>, x: Block, p: u32) -> bool {
        let xi = x.index();
        if self.order.on_cycle[xi]
            || !self.order.is_uncovered(x)
            || outer.is_some_and(|o| li.contains(o, x))
            || self.order.reach_lo[xi] < p
        {
            return false;
        }
        let m = self.order.reach_hi[xi];
        let outlasted = match self.heap.next_after(p) {
            Some(q) => q > m && self.order.suffix_lo[q as usize] > m,
            None => self.virtual_end > m + 1,
        };
        if !outlasted {
            return false;
        }
        // Live inert blocks: forget those whose predecessors are all behind.
        self.live.retain(|&(_, lp)| lp > p);
        !self.live.iter().any(|&(q, _)| q <= m)
    }

    /// [`Self::compute_join`], plus the exits of the irreducible cycles it touches.
    fn compute_join_full(
        &mut self,
        func: &Function,
        cfg: &Cfg,
        li: &LoopInfo,
        s: Block,
        l: u32,
    ) -> bool {
        let j = self.compute_join(func, li, s, l);
        self.flush_cycles(func, cfg, li);
        j
    }

    fn touch_cycle_full(&mut self, func: &Function, cfg: &Cfg, li: &LoopInfo, c: u32) {
        self.touch_cycle(func, li, c);
        self.flush_cycles(func, cfg, li);
    }

    /// Make joins of the exits of every cycle touched since the last flush (which may
    /// touch further cycles).
    fn flush_cycles(&mut self, func: &Function, cfg: &Cfg, li: &LoopInfo) {
        while self.touched_done < self.touched.len() {
            let c = self.touched[self.touched_done];
            self.touched_done += 1;
            self.cycle_exits_to_joins(func, cfg, li, c);
        }
    }

    /// Every exit of irreducible cycle `c` is a join with its own label.
    fn cycle_exits_to_joins(&mut self, func: &Function, cfg: &Cfg, li: &LoopInfo, c: u32) {
        let cycle = &li.irreducible_cycles()[c as usize];
        for &y in &cycle.blocks {
            for &e in cfg.succs(y) {
                if self.order.irr_of[e.index()] != c + 1 && self.order.pos[e.index()] != NO_POS {
                    if self.label_of(e) != e.as_u32() {
                        self.set_label(e, e.as_u32());
                        self.push_block(func, e);
                    }
                    // Once the cycle is divergent its exits' parameters were tainted
                    // (by the branch that touched it first): no need to list them again.
                    if !self.div_cycles[c as usize] {
                        self.joins.push(e);
                    }
                    let d = self.order.irr_of[e.index()];
                    if d != 0 {
                        self.touch_cycle(func, li, d - 1);
                    }
                }
            }
        }
    }

    /// Parameters of join `j` become divergent unless every incoming edge passes the
    /// same value.
    fn taint_params(&mut self, func: &Function, cfg: &Cfg, j: Block) {
        let n = func.dfg.block_params(j).len();
        for k in 0..n {
            let p = func.dfg.block_params(j)[k];
            if self.div_values[p.index()] {
                continue;
            }
            let mut args = core::mem::take(&mut self.args_scratch);
            args.clear();
            let mut seen_pred = Block::new(u32::MAX as usize - 1);
            for &pred in cfg.preds(j) {
                // A predecessor with several edges to `j` is listed once per edge; its
                // terminator is scanned once, for all of them.
                if pred == seen_pred {
                    continue;
                }
                seen_pred = pred;
                if let Some(t) = func.terminator(pred) {
                    func.dfg.for_each_dest(t, |bc| {
                        if bc.block == j {
                            if let Some(&a) = func.dfg.block_call_args(bc).get(k) {
                                args.push(a);
                            }
                        }
                    });
                }
            }
            let same = args.windows(2).all(|w| same_value(func, w[0], w[1]));
            self.args_scratch = args;
            if !same {
                self.mark_value(p);
            }
        }
    }

    /// Loop `l` has a divergent exit: uses outside it of values defined inside it are
    /// temporally divergent. Each such use is found once over the whole analysis (module
    /// `temporal`), not by walking `l`'s blocks: on a deep nest whose every level exits
    /// divergently that walk was blocks x depth.
    fn mark_divergent_loop(&mut self, cfg: &Cfg, li: &LoopInfo, l: Loop) {
        if self.div_loops[l.index()] {
            return;
        }
        self.div_loops.set(l.index(), true);
        self.div_loop_headers.set(li.header(l).index(), true);
        let mut escaped = core::mem::take(&mut self.escaped);
        escaped.clear();
        self.escapes.take(li, l, &mut escaped);
        for &t in &escaped {
            self.mark_target(cfg, t);
        }
        self.escaped = escaped;
    }

    /// Irreducible cycle `c` is reached by divergent control: every definition in it is
    /// divergent and every block of it runs under divergent control.
    fn taint_cycle(&mut self, func: &Function, cfg: &Cfg, li: &LoopInfo, c: usize) {
        if self.div_cycles[c] {
            return;
        }
        self.div_cycles.set(c, true);
        let _ = cfg;
        for &y in &li.irreducible_cycles()[c].blocks {
            self.div_control.set(y.index(), true);
            for k in 0..func.dfg.block_params(y).len() {
                let p = func.dfg.block_params(y)[k];
                self.mark_value(p);
            }
            for inst in func.layout.block_insts(y) {
                if let Some(r) = func.dfg.inst_result(inst) {
                    self.mark_value(r);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cfggen;
    use gyre_ir::generate::{generate_from_seed, GenOptions};

    /// Every result of the fast analysis and of the plain sweep (no inert blocks, no
    /// early stop, no memo points) on `f`; returns whether `f` has irreducible cycles.
    fn fast_equals_plain(f: &Function, what: &str) -> bool {
        let cfg = Cfg::with_function(f).expect("generated functions are valid");
        let dt = DomTree::with_function(f, &cfg);
        let pdt = PostDomTree::with_function(f, &cfg);
        let li = LoopInfo::with_function(f, &cfg, &dt);
        let fast = Uniformity::with_function(f, &cfg, &dt, &pdt, &li);
        let mut plain = Uniformity::new();
        plain.plain = true;
        plain.compute(f, &cfg, &dt, &pdt, &li);
        assert_eq!(fast.div_values, plain.div_values, "{what}: values");
        assert_eq!(fast.div_branches, plain.div_branches, "{what}: branches");
        assert_eq!(fast.div_control, plain.div_control, "{what}: control");
        assert_eq!(fast.div_loops, plain.div_loops, "{what}: loops");
        assert_eq!(fast.div_cycles, plain.div_cycles, "{what}: cycles");
        !li.irreducible_cycles().is_empty()
    }

    #[test]
    fn shortcuts_change_nothing_on_generated_functions() {
        let mut irreducible = 0;
        for seed in 0..150 {
            let opts = GenOptions {
                target_blocks: (seed % 25 == 0).then_some(1500),
                ..GenOptions::default()
            };
            let (m, _) = generate_from_seed(&opts, seed);
            for f in m.functions.values() {
                let what = format!("seed {seed} @{}", f.name);
                irreducible += usize::from(fast_equals_plain(f, &what));
            }
        }
        assert!(irreducible > 50, "only {irreducible} irreducible functions");
    }

    /// A kernel with the CFG of `shape`: every block but the entry has an `i32`
    /// parameter, every block passes its own constant to all its successors (so a join
    /// taints the parameter), and two branches in three test `tid.x`.
    fn kernel_from_shape(shape: &cfggen::CfgShape) -> Function {
        use gyre_ir::{BlockCall, JumpTableData, Signature, Type, ValueList};
        let n = shape.num_blocks as usize;
        let mut f = Function::new("k", FuncKind::Kernel, Signature::default());
        let blocks: Vec<Block> = (0..n).map(|_| f.append_new_block()).collect();
        for &b in &blocks[1..] {
            f.dfg.append_block_param(b, Type::I32);
        }
        for (i, &b) in blocks.iter().enumerate() {
            let succs: Vec<Block> = shape
                .edges
                .iter()
                .filter(|e| e.0 as usize == i)
                .map(|e| blocks[e.1 as usize])
                .collect();
            let imm = i as i64;
            let (_, k) = f.append_inst(b, InstructionData::IntConst { imm }, Some(Type::I32));
            let k = k.expect("iconst has a result");
            let call = |f: &mut Function, t: Block| {
                let args: &[Value] = if t == blocks[0] { &[] } else { &[k] };
                BlockCall::new(t, args, &mut f.dfg.value_lists)
            };
            let cond = |f: &mut Function, ty: Type| {
                let data = if i % 3 == 0 {
                    InstructionData::IntConst { imm: 0 }
                } else {
                    InstructionData::Sreg {
                        reg: SpecialReg::TidX,
                    }
                };
                f.append_inst(b, data, Some(ty)).1.expect("has a result")
            };
            match succs.len() {
                0 => {
                    let args = ValueList::new();
                    f.append_inst(b, InstructionData::Return { args }, None);
                }
                1 => {
                    let dest = call(&mut f, succs[0]);
                    f.append_inst(b, InstructionData::Jump { dest }, None);
                }
                2 => {
                    let arg = cond(&mut f, Type::I1);
                    let blocks = [call(&mut f, succs[0]), call(&mut f, succs[1])];
                    f.append_inst(b, InstructionData::Brif { arg, blocks }, None);
                }
                _ => {
                    let arg = cond(&mut f, Type::I32);
                    let default = call(&mut f, succs[0]);
                    let cases = succs[1..]
                        .iter()
                        .enumerate()
                        .map(|(c, &t)| (c as i64, call(&mut f, t)))
                        .collect();
                    let table = f.dfg.make_jump_table(JumpTableData::new(default, cases));
                    f.append_inst(b, InstructionData::BrTable { arg, table }, None);
                }
            }
        }
        f
    }

    #[test]
    fn shortcuts_change_nothing_on_random_cfgs() {
        // Arbitrary graphs: irreducible cycles, self-loops, unreachable blocks, infinite
        // loops, several returns.
        let mut irreducible = 0;
        for seed in 0..400u64 {
            let size = [12, 40, 150, 600][seed as usize % 4];
            let f = kernel_from_shape(&cfggen::random_cfg(size, seed));
            irreducible += usize::from(fast_equals_plain(&f, &format!("random seed {seed}")));
        }
        assert!(irreducible > 100, "only {irreducible} irreducible graphs");
    }
}
