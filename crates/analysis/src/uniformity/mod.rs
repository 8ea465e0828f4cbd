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
//! are uniform); results of `call`. `ctaid`, `ntid`, `nctaid`, `warpsize`, constants,
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
//! [`order`] and a block reached by two different labels is a join and relabels itself.
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
//! **Complexity**: building def-use lists and the order is O(n + e + loop exits). Data
//! propagation visits each use once. Each divergent branch costs its label region
//! (which stops as soon as all labels merged into one block, as LLVM's does) plus
//! the words it spans in a bitset queue, plus the part of its divergent-control region not
//! already covered with the same reconvergence point; each divergent loop costs one pass
//! over its uses. Nothing recurses. The label sweeps make the worst case superlinear:
//! labels of a branch whose arms reach different exits never merge and cross the rest
//! of the function (see docs/uniformity.md for the analysis and measured figures).
//!
//! [`reference`] keeps a naive fixed point over all paths, for tests.

mod order;
pub mod print;
pub mod reference;

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
    /// A source of divergence: `tid.*`, `laneid`, atomics, generic/local loads, calls.
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
        D::AtomicRmw { .. } | D::AtomicCas { .. } | D::Call { .. } => SourceKind::Divergent,
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

/// One use of a value: an operand of `inst`, or (when `param` is set) the argument that
/// `inst`, a branch, passes to block parameter `param`.
#[derive(Copy, Clone)]
struct Use {
    inst: Inst,
    param: PackedOption<Value>,
}

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
    use_fill: Vec<u32>,
    kind: Vec<SourceKind>,
    irr_of: Vec<u32>,
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
    /// Per block: 0 = not a sink, 1 = a reachable block without successors, 2 = such a
    /// block that is also a loop exit.
    sink: Vec<u8>,
    /// Can a join at a loop-exit sink still mark a loop divergent in this propagation
    /// (the branch is in a loop whose outermost loop is not divergent yet)?
    exit_join_matters: bool,
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
        self.order.compute(cfg, li);
        self.irr_of.clear();
        self.irr_of.resize(nb, 0);
        for (i, c) in li.irreducible_cycles().iter().enumerate() {
            for &b in &c.blocks {
                self.irr_of[b.index()] = i as u32 + 1;
            }
        }
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
        self.sink.clear();
        self.sink.resize(nb, 0);
        // Parking is only proven to change nothing on reducible functions: stopping the
        // sweep early could skip an irreducible cycle the conservative rule would taint.
        let park = li.irreducible_cycles().is_empty();
        for &x in self.order.order.iter().filter(|_| park) {
            if cfg.succs(x).is_empty() {
                let exit = cfg.preds(x).iter().any(|&p| li.innermost_loop(p).is_some());
                self.sink[x.index()] = if exit { 2 } else { 1 };
            }
        }
        self.value_work.clear();
        self.branch_work.clear();

        // Seeds.
        if func.kind == FuncKind::Device {
            if let Some(entry) = func.entry_block() {
                for &p in func.dfg.block_params(entry) {
                    self.mark_value(func, p);
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
                        self.mark_value(func, r);
                    }
                }
            }
        }

        // Propagate: values first (cheap), then one divergent branch at a time.
        loop {
            while let Some(v) = self.value_work.pop() {
                self.push_users(func, cfg, v);
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
        // Count.
        for b in func.layout.blocks() {
            for inst in func.layout.block_insts(b) {
                self.kind[inst.index()] = source_kind(func, inst);
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
        self.uses.clear();
        self.uses.resize(
            off as usize,
            Use {
                inst: Inst::new(0),
                param: None.into(),
            },
        );
        // Fill.
        self.use_fill.clear();
        for b in func.layout.blocks() {
            for inst in func.layout.block_insts(b) {
                for &v in func.dfg.inst_args(inst) {
                    let r = &mut self.use_range[v.index()];
                    self.uses[r[1] as usize] = Use {
                        inst,
                        param: None.into(),
                    };
                    r[1] += 1;
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
                            inst,
                            param: p.into(),
                        };
                        r[1] += 1;
                    }
                });
            }
        }
    }

    fn always_uniform(&self, func: &Function, v: Value) -> bool {
        match func.dfg.value_def(v) {
            ValueDef::Result(i) => self.kind[i.index()] == SourceKind::AlwaysUniform,
            _ => false,
        }
    }

    fn mark_value(&mut self, func: &Function, v: Value) {
        if !self.div_values[v.index()] && !self.always_uniform(func, v) {
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

    /// Mark what an instruction operand use makes divergent: the branch, or the result.
    fn mark_user(&mut self, func: &Function, cfg: &Cfg, inst: Inst) {
        match func.dfg.inst(inst).opcode() {
            Opcode::Brif | Opcode::BrTable => {
                if let Some(b) = func.layout.inst_block(inst) {
                    self.mark_branch(cfg, b);
                }
            }
            _ => {
                if let Some(r) = func.dfg.inst_result(inst) {
                    self.mark_value(func, r);
                }
            }
        }
    }

    fn push_users(&mut self, func: &Function, cfg: &Cfg, v: Value) {
        let [a, b] = self.use_range[v.index()];
        for i in a..b {
            let u = self.uses[i as usize];
            match u.param.expand() {
                Some(p) => self.mark_value(func, p),
                None => self.mark_user(func, cfg, u.inst),
            }
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
                self.mark_divergent_loop(func, cfg, li, o);
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
            if self.expanded[y.index()] == stop_code {
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

    /// Is `b` a sink whose join status can have no effect now, so that it need not be
    /// queued? A sink propagates nothing when popped; queued, it only holds the stopping
    /// rule off (an early-return block with several predecessors near the end of the
    /// order would make every branch reaching it sweep the rest of the function). Its
    /// label is still set, so joins at it are still found while the propagation runs;
    /// those missed by stopping earlier are harmless: a join's only effects are tainting
    /// its parameters (none left that are not divergent already — no value changes
    /// during a propagation) and, for a loop exit, marking the outermost loop around the
    /// branch divergent (already done, or no loop).
    fn parked(&self, func: &Function, b: Block) -> bool {
        match self.sink[b.index()] {
            0 => false,
            k => {
                !(k == 2 && self.exit_join_matters)
                    && func
                        .dfg
                        .block_params(b)
                        .iter()
                        .all(|p| self.div_values[p.index()])
            }
        }
    }

    fn push_block(&mut self, func: &Function, b: Block) {
        let p = self.order.pos[b.index()];
        // A label that can meet no other one, at this block (one incoming edge) or
        // downstream, has nothing left to do: dropping it keeps a dead-end arm (an early
        // return) from holding the stopping rule off until the end of the function.
        if p != NO_POS
            && !self.order.is_dead_end(b)
            && self.heap_stamp[b.index()] != self.stamp
            && !self.parked(func, b)
        {
            self.heap_stamp[b.index()] = self.stamp;
            self.heap.push(p);
        }
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
        let c = self.irr_of[s.index()];
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
        let mut outer = inner;
        while let Some(p) = outer.and_then(|l| li.parent(l)) {
            outer = Some(p);
        }
        // A sink is in no loop: a loop exit becoming a join marks the outermost loop
        // around `b` divergent (see `analyze_branch`).
        self.exit_join_matters = outer.is_some_and(|o| !self.div_loops[o.index()]);
        if self.irr_of[b.index()] != 0 {
            self.touch_cycle_full(func, cfg, li, self.irr_of[b.index()] - 1);
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
            if self.heap.len() == 1 && p > max_popped {
                let x = self.order.order[p as usize];
                if !self.order.on_cycle[x.index()] {
                    // All paths merged into one block that no processed block follows:
                    // no further join is possible (LLVM's stopping rule; edges leave a
                    // block not on a cycle of the order's graph only forwards).
                    break;
                }
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
                if self.irr_of[e.index()] != c + 1 && self.order.pos[e.index()] != NO_POS {
                    if self.label_of(e) != e.as_u32() {
                        self.set_label(e, e.as_u32());
                        self.push_block(func, e);
                    }
                    // Once the cycle is divergent its exits' parameters were tainted
                    // (by the branch that touched it first): no need to list them again.
                    if !self.div_cycles[c as usize] {
                        self.joins.push(e);
                    }
                    let d = self.irr_of[e.index()];
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
                self.mark_value(func, p);
            }
        }
    }

    /// Loop `l` has a divergent exit: uses outside it of values defined inside it are
    /// temporally divergent.
    fn mark_divergent_loop(&mut self, func: &Function, cfg: &Cfg, li: &LoopInfo, l: Loop) {
        if self.div_loops[l.index()] {
            return;
        }
        self.div_loops.set(l.index(), true);
        self.div_loop_headers.set(li.header(l).index(), true);
        for &x in li.blocks(l) {
            for k in 0..func.dfg.block_params(x).len() {
                let v = func.dfg.block_params(x)[k];
                self.temporal_uses(func, cfg, li, l, v);
            }
            for inst in func.layout.block_insts(x) {
                if let Some(v) = func.dfg.inst_result(inst) {
                    if self.kind[inst.index()] != SourceKind::AlwaysUniform {
                        self.temporal_uses(func, cfg, li, l, v);
                    }
                }
            }
        }
    }

    fn temporal_uses(&mut self, func: &Function, cfg: &Cfg, li: &LoopInfo, l: Loop, v: Value) {
        let [a, b] = self.use_range[v.index()];
        for i in a..b {
            let u = self.uses[i as usize];
            let Some(ub) = func.layout.inst_block(u.inst) else {
                continue;
            };
            match u.param.expand() {
                Some(p) => {
                    let tb = match func.dfg.value_def(p) {
                        ValueDef::Param(t, _) => t,
                        _ => continue,
                    };
                    if !li.contains(l, ub) || !li.contains(l, tb) {
                        self.mark_value(func, p);
                    }
                }
                None => {
                    if !li.contains(l, ub) {
                        self.mark_user(func, cfg, u.inst);
                    }
                }
            }
        }
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
                self.mark_value(func, p);
            }
            for inst in func.layout.block_insts(y) {
                if let Some(r) = func.dfg.inst_result(inst) {
                    self.mark_value(func, r);
                }
            }
        }
    }
}
