//! `simplify`: an e-graph simplifier in Cranelift's style (its `egraph.rs` and
//! `elaborate.rs`): constant folding, algebraic identities, strength reduction,
//! reassociation of constants, global value numbering, loop-invariant code motion and
//! dead-code removal in one pass.
//!
//! ```text
//!   build:      blocks in dominator-tree preorder; each pure instruction leaves the layout
//!               and becomes an e-node (operands: e-classes), hash-consed, rewritten by
//!               the rules (rules.rs) as it arrives; the rest (loads, stores, atomics,
//!               barriers, calls, warp collectives, divisions that may trap, terminators)
//!               stays in place: the skeleton
//!   elaborate:  dominator-tree preorder again; each skeleton instruction's operands are
//!               elaborated: the cheapest node of the class, its operands first (a
//!               worklist), placed at the deeper of the block its operands are available
//!               in and the block the input computed it in, then hoisted to the
//!               preheader of each enclosing loop that defines none of its operands; a
//!               scoped map reuses a value elaborated in a dominating block (GVN)
//!   clean up:   instructions whose results are unused and that have no effect go
//! ```
//!
//! **Memory.** Loads stay in the skeleton and are never merged or moved, so nothing is
//! reused across a store, an atomic, a call or a barrier (LLVM 14 at -O2 reuses a shared
//! load across `barrier0`; the `barrier-load` filetest has that shape).
//!
//! **Traps.** An operation that can trap (division and remainder) stays in the skeleton,
//! at its place, unless a rule shows it equal to one that cannot (a division by a
//! non-zero constant, a power of two): nothing that may trap is hoisted above its guard.
//!
//! **Known bits.** Every e-class carries the bits known to be zero in its value, computed
//! as each node arrives from its operands' classes and joined when classes merge (an
//! e-class analysis); the demanded-bits rules (rules.rs) read it to drop the parts of a
//! value an operation does not look at (InstCombine's `SimplifyDemandedBits`).
//!
//! Recursion: the rewrite of a node may add nodes that are rewritten in turn; this nests
//! at most `simplify-rewrite-depth` deep (a limit, not program structure). Building and
//! elaboration use explicit worklists.

mod egraph;
pub mod rules;

use crate::analyses::Analyses;
use crate::manager::{FunctionPass, PassContext, PassError, PassResult};
use cranelift_entity::packed_option::PackedOption;
use cranelift_entity::{EntityRef, SecondaryMap};
use egraph::{
    as_node, as_value, pure_args, pure_args_mut, EGraph, GraphStats, Limits, Node, NodeKind,
};
use gyre_analysis::Loop;
use gyre_ir::{Block, Function, Inst, InstructionData, Opcode, Type, Value, ValueDef};
use rules::Family;

const NAME: &str = "simplify";

/// The `simplify` function pass.
///
/// **Requires**: a verified function. Loops need a preheader for code to be hoisted out
/// of them (loops without one keep their invariant code).
///
/// **Establishes**: nothing about loop forms (it changes no edge, so it keeps the forms
/// the input had, except LCSSA: a value may be reused outside the loop that computes it).
///
/// **Preserves**: the CFG, the dominator and post-dominator trees and the loop forest
/// (no block or edge changes); not uniformity or scalar evolution (values change).
///
/// **Gives up**: on nothing; unreachable blocks are left alone (with every value they
/// use kept where it is).
///
/// **Knobs**: `simplify-rewrite-depth`, `simplify-eclass-size`, `simplify-licm`.
pub struct Simplify {
    graph: EGraph,
    value_class: SecondaryMap<Value, PackedOption<Node>>,
    pinned: SecondaryMap<Inst, bool>,
    placed: SecondaryMap<Inst, bool>,
    home_of: SecondaryMap<Inst, PackedOption<Block>>,
    /// Removed input instructions sorted by class, and each class's range in it.
    members: Vec<(Node, Block, Inst)>,
    /// Per class: its range in `members`, and the first index that may be unplaced.
    member_range: SecondaryMap<Node, (u32, u32, u32)>,
    path: Vec<Block>,
    path_idx: SecondaryMap<Block, u32>,
    /// The value of each class elaborated in a dominating block, and the scope (depth on
    /// the dominator-tree path) of its block; cleared when that scope is left.
    elab: SecondaryMap<Node, (PackedOption<Value>, u32)>,
    /// Per scope, the classes elaborated there (the vectors are reused).
    depth: usize,
    undo: Vec<Vec<Node>>,
    stack: Vec<(Node, bool)>,
    preheader: SecondaryMap<Loop, PackedOption<Block>>,
    insts: Vec<Inst>,
    uses: Vec<Value>,
    snapshot: Vec<u32>,
    hoisted: u64,
    elaborated: u64,
    /// Block parameters shown not to be known non-negative ([`mark_nonneg_params`]).
    not_nonneg: SecondaryMap<Value, bool>,
    /// `remove_dead`'s use counts and worklist (kept for their memory).
    count: SecondaryMap<Value, u32>,
    work: Vec<Inst>,
    /// Did the last `remove_dead` see a `bitcast` in the layout? If not, `retype_memory`
    /// has nothing to do.
    has_bitcast: bool,
    /// The pure and guarded instructions in the layout at the last `remove_dead` (the
    /// e-graph's nodes but for leaves and the rules' own: to size it).
    movable_insts: usize,
}

impl Default for Simplify {
    fn default() -> Self {
        Simplify {
            graph: EGraph::new(Limits {
                rewrite_depth: 4,
                eclass_size: 8,
            }),
            value_class: SecondaryMap::new(),
            pinned: SecondaryMap::new(),
            placed: SecondaryMap::new(),
            home_of: SecondaryMap::new(),
            members: Vec::new(),
            member_range: SecondaryMap::new(),
            path: Vec::new(),
            path_idx: SecondaryMap::new(),
            elab: SecondaryMap::new(),
            depth: 0,
            undo: Vec::new(),
            stack: Vec::new(),
            preheader: SecondaryMap::new(),
            insts: Vec::new(),
            uses: Vec::new(),
            snapshot: Vec::new(),
            hoisted: 0,
            elaborated: 0,
            not_nonneg: SecondaryMap::new(),
            count: SecondaryMap::new(),
            work: Vec::new(),
            has_bitcast: true,
            movable_insts: 0,
        }
    }
}

/// Is this a pure operation the e-graph may place anywhere its operands are available?
fn is_pure(data: &InstructionData) -> bool {
    let op = data.opcode();
    !op.has_side_effects()
        && !op.is_terminator()
        && !op.reads_memory()
        && !op.can_trap()
        && !data.has_pool_data()
}

/// Is this a division or remainder: pure but for its trap, so kept in place unless a rule
/// removes the trap?
fn is_guarded(data: &InstructionData) -> bool {
    matches!(
        data.opcode(),
        Opcode::Sdiv | Opcode::Udiv | Opcode::Srem | Opcode::Urem
    )
}

/// The layout of `func` as numbers (instructions and their operands), to tell whether
/// the pass changed anything.
fn fingerprint(func: &Function, out: &mut Vec<u32>) {
    out.clear();
    for b in func.layout.blocks() {
        out.push(u32::MAX);
        out.push(b.as_u32());
        for i in func.layout.block_insts(b) {
            out.push(u32::MAX - 1);
            out.push(i.as_u32());
            func.dfg.for_each_inst_value(i, |v| out.push(v.as_u32()));
        }
    }
}

/// Is the layout of `func` the one [`fingerprint`] wrote into `snap`? Compared as it is
/// walked (no second copy), stopping at the first difference.
fn same_fingerprint(func: &Function, snap: &[u32]) -> bool {
    let mut it = snap.iter().copied();
    for b in func.layout.blocks() {
        if it.next() != Some(u32::MAX) || it.next() != Some(b.as_u32()) {
            return false;
        }
        for i in func.layout.block_insts(b) {
            if it.next() != Some(u32::MAX - 1) || it.next() != Some(i.as_u32()) {
                return false;
            }
            let mut same = true;
            func.dfg
                .for_each_inst_value(i, |v| same &= it.next() == Some(v.as_u32()));
            if !same {
                return false;
            }
        }
    }
    it.next().is_none()
}

impl Simplify {
    fn class_of(&mut self, func: &Function, v: Value) -> Node {
        match self.value_class[v].expand() {
            Some(c) => self.graph.find(c),
            None => self.graph.leaf(v, func.dfg.value_type(v)),
        }
    }

    /// Move every pure instruction of the reachable blocks into the e-graph.
    fn build(&mut self, func: &mut Function, cx: &PassContext<'_>) {
        let cfg = &cx.analyses.cfg;
        // Values used by unreachable blocks stay where they are: those blocks are not
        // elaborated, so nothing would define the value for them.
        for b in func.layout.blocks() {
            if cfg.is_reachable(b) {
                continue;
            }
            for i in func.layout.block_insts(b) {
                let (dfg, layout, pinned) = (&func.dfg, &func.layout, &mut self.pinned);
                dfg.for_each_inst_value(i, |v| {
                    if let ValueDef::Result(d) = dfg.value_def(v) {
                        if layout.inst_block(d).is_some() {
                            pinned[d] = true;
                        }
                    }
                });
            }
        }
        let preorder = cx.analyses.domtree.preorder();
        for &b in preorder {
            self.insts.clear();
            self.insts.extend(func.layout.block_insts(b));
            for idx in 0..self.insts.len() {
                let inst = self.insts[idx];
                if self.pinned[inst] {
                    continue;
                }
                let data = func.dfg.inst(inst);
                let pure = is_pure(data);
                if !pure && !is_guarded(data) {
                    continue;
                }
                let Some(result) = func.dfg.inst_result(inst) else {
                    continue;
                };
                let ty = func.dfg.value_type(result);
                let mut d = data.clone();
                for a in pure_args_mut(&mut d) {
                    *a = as_value(self.class_of(func, *a));
                }
                let class = if pure {
                    Some(self.graph.insert_inst(d, ty, inst, b))
                } else {
                    self.graph.rewrite_trapping(d, ty, b)
                };
                if let Some(c) = class {
                    self.value_class[result] = c.into();
                    self.home_of[inst] = b.into();
                    func.layout.remove_inst(inst);
                }
            }
        }
    }

    /// Group the removed instructions by class: each placement of a class reuses one of
    /// them (preferably one from the block it is placed in), so that values keep their
    /// numbers and a second run finds the same instructions.
    fn group_members(&mut self, func: &Function) {
        // Sorted by class, then block, then instruction: a counting sort by class of the
        // instructions taken in their order (two sweeps: count, then place; stable, so
        // each class's run is in instruction order), then a sort of each run of more than
        // one by block. Linear but for the short runs, where sorting the whole list was
        // most of the time on large functions.
        let n = self.graph.num_nodes();
        self.member_range.clear();
        self.member_range.resize(n);
        let mut total = 0u32;
        for pass in 0..2 {
            for (inst, home) in self.home_of.iter() {
                let Some(home) = home.expand() else {
                    continue;
                };
                let Some(r) = func.dfg.inst_result(inst) else {
                    continue;
                };
                let Some(c) = self.value_class[r].expand() else {
                    continue;
                };
                let c = self.graph.find(c);
                let range = &mut self.member_range[c];
                if pass == 0 {
                    range.1 += 1;
                    total += 1;
                } else {
                    self.members[range.2 as usize] = (c, home, inst);
                    range.2 += 1;
                }
            }
            if pass == 0 {
                // Per class: (start, end, fill cursor), from the counts.
                let mut sum = 0u32;
                for k in 0..n {
                    let r = &mut self.member_range[Node::new(k)];
                    let count = r.1;
                    *r = (sum, sum + count, sum);
                    sum += count;
                }
                self.members.clear();
                self.members
                    .resize(total as usize, (Node::new(0), Block::new(0), Inst::new(0)));
            }
        }
        for k in 0..n {
            let r = &mut self.member_range[Node::new(k)];
            if r.1 - r.0 > 1 {
                self.members[r.0 as usize..r.1 as usize].sort_unstable();
            }
            r.2 = r.0;
        }
    }

    /// Is the leaf value `v` available before the cursor, and at which scope?
    fn leaf_scope(&self, func: &Function, v: Value, cursor: Inst) -> Option<u32> {
        let (b, inst) = match func.dfg.value_def(v) {
            ValueDef::Param(b, _) => (b, None),
            ValueDef::Result(i) => (func.layout.inst_block(i)?, Some(i)),
            ValueDef::Detached => return None,
        };
        let s = self.scope_of(b)?;
        if let (Some(i), true) = (inst, s as usize == self.path.len() - 1) {
            if func.layout.pp_cmp(i, cursor) != core::cmp::Ordering::Less {
                return None;
            }
        }
        Some(s)
    }

    fn scope_of(&self, b: Block) -> Option<u32> {
        let s = self.path_idx[b];
        (self.path.get(s as usize) == Some(&b)).then_some(s)
    }

    /// The node to elaborate for class `c`: its cheapest, unless that is a leaf not
    /// available here.
    fn choose(
        &self,
        func: &Function,
        c: Node,
        cursor: Inst,
    ) -> Result<(Node, Option<u32>), PassError> {
        let (best, best_pure) = self.graph.best(c);
        if let NodeKind::Leaf(v, _) = self.graph.kind(best) {
            if let Some(s) = self.leaf_scope(func, *v, cursor) {
                return Ok((best, Some(s)));
            }
            return match best_pure {
                Some(p) => Ok((p, None)),
                None => Err(PassError(format!(
                    "{NAME}: @{}: {v} is used where it is not available",
                    func.name
                ))),
            };
        }
        Ok((best, None))
    }

    /// The value of class `root` before `cursor`, placing what is missing.
    fn elaborate(
        &mut self,
        func: &mut Function,
        cx: &PassContext<'_>,
        root: Node,
        cursor: Inst,
        licm: bool,
    ) -> Result<Value, PassError> {
        if let Some(v) = self.elab[root].0.expand() {
            return Ok(v);
        }
        self.stack.clear();
        self.stack.push((root, false));
        while let Some((c, ready)) = self.stack.pop() {
            if self.elab[c].0.is_some() {
                continue;
            }
            let (n, leaf_scope) = self.choose(func, c, cursor)?;
            if let Some(s) = leaf_scope {
                let NodeKind::Leaf(v, _) = *self.graph.kind(n) else {
                    unreachable!("a leaf scope is given for leaves only")
                };
                self.record(c, v, s);
                continue;
            }
            let NodeKind::Pure { data, ty, inst } = self.graph.kind(n).clone() else {
                unreachable!("choose gives a pure node unless it gives a leaf scope")
            };
            if !ready {
                self.stack.push((c, true));
                // Reversed, so that operands are placed in their order.
                for &a in pure_args(&data).iter().rev() {
                    let r = self.graph.find(as_node(a));
                    if self.elab[r].0.is_none() {
                        self.stack.push((r, false));
                    }
                }
                continue;
            }
            self.place(func, cx, c, data, ty, inst.expand(), cursor, licm);
        }
        Ok(self.elab[root].0.expand().expect("elaborated above"))
    }

    fn record(&mut self, c: Node, v: Value, s: u32) {
        self.elab[c] = (v.into(), s);
        self.undo[s as usize].push(c);
    }

    #[allow(clippy::too_many_arguments)]
    fn place(
        &mut self,
        func: &mut Function,
        cx: &PassContext<'_>,
        c: Node,
        mut data: InstructionData,
        ty: gyre_ir::Type,
        inst: Option<Inst>,
        cursor: Inst,
        licm: bool,
    ) {
        let cur = (self.path.len() - 1) as u32;
        let mut s_args = 0;
        for a in pure_args_mut(&mut data) {
            let r = self.graph.find(as_node(*a));
            let (v, s) = self.elab[r];
            *a = v.expand().expect("operands are elaborated first");
            s_args = s_args.max(s);
        }
        // Not above the block the input computed it in: no speculation but out of loops.
        let s_home = self
            .graph
            .home(c)
            .and_then(|h| self.scope_of(h))
            .unwrap_or(cur);
        let mut s = s_args.max(s_home);
        if licm {
            let loops = &cx.analyses.loops;
            let mut l = loops.innermost_loop(self.path[s as usize]);
            while let Some(lp) = l {
                let Some(ph) = self.preheader[lp].expand() else {
                    break;
                };
                let Some(ps) = self.scope_of(ph) else { break };
                let defined_inside = pure_args(&data).iter().any(|&v| {
                    let b = match func.dfg.value_def(v) {
                        ValueDef::Param(b, _) => Some(b),
                        ValueDef::Result(i) => func.layout.inst_block(i),
                        ValueDef::Detached => None,
                    };
                    b.is_none_or(|b| loops.contains(lp, b))
                });
                if defined_inside || ps < s_args {
                    break;
                }
                s = ps;
                self.hoisted += 1;
                l = loops.innermost_loop(ph);
            }
        }
        let before = if s == cur {
            cursor
        } else {
            let b = self.path[s as usize];
            func.layout
                .last_inst(b)
                .expect("a reachable block has a terminator")
        };
        let target = func.layout.inst_block(before);
        // An input instruction of the class, preferably one from the target block (binary
        // search: members are sorted by class, then block), else the node's own, else the
        // first unplaced one (a moving index: placements stay linear).
        let (lo, hi, next) = self.member_range[c];
        let list = &self.members[lo as usize..hi as usize];
        let placed = &self.placed;
        let same_block = target.and_then(|t| {
            let k = list.partition_point(|&(_, b, _)| b < t);
            list[k..]
                .iter()
                .take_while(|&&(_, b, _)| b == t)
                .map(|&(_, _, i)| i)
                .find(|&i| !placed[i])
        });
        let mut reuse = same_block.or(inst.filter(|&i| !placed[i]));
        if reuse.is_none() {
            let mut k = next;
            while k < hi && placed[self.members[k as usize].2] {
                k += 1;
            }
            self.member_range[c].2 = k;
            reuse = (k < hi).then(|| self.members[k as usize].2);
        }
        let value = match reuse {
            Some(i) => {
                func.dfg.replace_inst(i, data);
                self.placed[i] = true;
                func.layout.insert_inst_before(i, before);
                func.dfg
                    .inst_result(i)
                    .expect("a pure instruction has a result")
            }
            _ => {
                let (i, v) = func.dfg.make_inst_with_result(data, ty);
                func.layout.insert_inst_before(i, before);
                v
            }
        };
        self.elaborated += 1;
        self.record(c, value, s);
    }

    /// Rewrite every skeleton instruction's operands to elaborated values, block by block
    /// in dominator-tree preorder.
    fn elaborate_all(
        &mut self,
        func: &mut Function,
        cx: &PassContext<'_>,
        licm: bool,
    ) -> Result<(), PassError> {
        let domtree = &cx.analyses.domtree;
        let Some(entry) = domtree.root() else {
            return Ok(());
        };
        let mut dfs: Vec<(Block, bool)> = vec![(entry, false)];
        let mut pairs: Vec<(Value, Value)> = Vec::new();
        while let Some((b, entered)) = dfs.pop() {
            if entered {
                self.path.pop();
                self.depth -= 1;
                for c in self.undo[self.depth].drain(..) {
                    self.elab[c].0 = None.into();
                }
                continue;
            }
            self.path_idx[b] = self.path.len() as u32;
            self.path.push(b);
            if self.undo.len() == self.depth {
                self.undo.push(Vec::new());
            }
            self.undo[self.depth].clear();
            self.depth += 1;
            dfs.push((b, true));
            // Children in their order: the first to be elaborated keeps the input's
            // instruction (and value number).
            let mark = dfs.len();
            dfs.extend(domtree.children(b).map(|c| (c, false)));
            dfs[mark..].reverse();
            let mut next = func.layout.first_inst(b);
            while let Some(inst) = next {
                next = func.layout.next_inst(inst);
                self.uses.clear();
                {
                    let uses = &mut self.uses;
                    func.dfg.for_each_inst_value(inst, |v| uses.push(v));
                }
                pairs.clear();
                for k in 0..self.uses.len() {
                    let v = self.uses[k];
                    if pairs.iter().any(|&(f, _)| f == v) {
                        continue;
                    }
                    let c = self.class_of(func, v);
                    let nv = self.elaborate(func, cx, c, inst, licm)?;
                    if nv != v {
                        pairs.push((v, nv));
                    }
                }
                if !pairs.is_empty() {
                    func.dfg.map_inst_values(inst, |v| {
                        pairs.iter().find(|&&(f, _)| f == v).map_or(v, |&(_, t)| t)
                    });
                }
            }
        }
        Ok(())
    }

    /// Remove instructions whose results are unused and that have no effect (pure
    /// operations, non-volatile loads, divisions: removing a division that would trap only
    /// removes undefined behaviour).
    fn remove_dead(&mut self, func: &mut Function) -> u64 {
        // One sweep counts uses and collects the candidates (in layout order, so that the
        // worklist below is the same as a second sweep's); `has_bitcast` tells
        // `retype_memory` whether it has anything to look at.
        let count = &mut self.count;
        count.clear();
        count.resize(func.dfg.num_values());
        let removable = |func: &Function, i: Inst| {
            let d = func.dfg.inst(i);
            is_pure(d)
                || is_guarded(d)
                || matches!(d, InstructionData::Load { flags, .. } if !flags.volatile)
        };
        let mut work = core::mem::take(&mut self.work);
        work.clear();
        self.has_bitcast = false;
        let mut movable = 0;
        for b in func.layout.blocks() {
            for i in func.layout.block_insts(b) {
                func.dfg.for_each_inst_value(i, |v| count[v] += 1);
                let d = func.dfg.inst(i);
                movable += usize::from(is_pure(d) || is_guarded(d));
                self.has_bitcast |= d.opcode() == Opcode::Bitcast;
                if func.dfg.inst_result(i).is_some() && removable(func, i) {
                    work.push(i);
                }
            }
        }
        self.movable_insts = movable;
        work.retain(|&i| {
            let r = func.dfg.inst_result(i).expect("collected with a result");
            count[r] == 0
        });
        let mut removed = 0;
        while let Some(i) = work.pop() {
            if func.layout.inst_block(i).is_none() {
                continue;
            }
            func.layout.remove_inst(i);
            removed += 1;
            self.uses.clear();
            {
                let uses = &mut self.uses;
                func.dfg.for_each_inst_value(i, |v| uses.push(v));
            }
            for &v in &self.uses {
                let count = &mut self.count;
                count[v] -= 1;
                if count[v] == 0 {
                    if let ValueDef::Result(d) = func.dfg.value_def(v) {
                        if func.layout.inst_block(d).is_some() && removable(func, d) {
                            work.push(d);
                        }
                    }
                }
            }
        }
        self.work = work;
        removed
    }
}

/// Functions with more instructions than this (arena size) give their buffers back at the
/// end of a run.
const RELEASE_ABOVE: usize = 1 << 16;

/// Most build-and-elaborate rounds per run.
const MAX_ROUNDS: usize = 3;

/// Loads and stores in the type their value is used in (LLVM's instcombine,
/// `combineLoadToOperationType` and `combineStoreToValueType`): a non-volatile load whose
/// only use is a `bitcast` loads the cast's type instead, and a store of a `bitcast` used
/// by nothing else stores the cast's operand. Memory holds bits, so the access is the
/// same; what goes is the reinterpretation (a `mov.b32` in PTX) that SROA's integer view
/// of a float slot leaves around loads and stores. Pointers are left alone (a cast from
/// or to a pointer is not a plain reinterpretation everywhere). Returns the number of
/// accesses changed.
fn retype_memory(func: &mut Function) -> u64 {
    let mut count: SecondaryMap<Value, u32> = SecondaryMap::with_capacity(func.dfg.num_values());
    for b in func.layout.blocks() {
        for i in func.layout.block_insts(b) {
            func.dfg.for_each_inst_value(i, |v| count[v] += 1);
        }
    }
    let plain = |t: Type| !t.is_ptr();
    // Each removed load-side bitcast's result -> the retyped load's.
    let mut map = crate::utils::clone::ValueMap::default();
    let mut changed = 0;
    let mut dead: Vec<Inst> = Vec::new();
    let blocks: Vec<Block> = func.layout.blocks().collect();
    for b in blocks {
        let mut cur = func.layout.first_inst(b);
        while let Some(i) = cur {
            cur = func.layout.next_inst(i);
            match *func.dfg.inst(i) {
                InstructionData::Unary {
                    opcode: Opcode::Bitcast,
                    arg,
                } => {
                    // A bitcast of a load's result that is its only use.
                    let Some(w) = func.dfg.inst_result(i) else {
                        continue;
                    };
                    let ValueDef::Result(l) = func.dfg.value_def(arg) else {
                        continue;
                    };
                    let InstructionData::Load { flags, .. } = *func.dfg.inst(l) else {
                        continue;
                    };
                    let (from, to) = (func.dfg.value_type(arg), func.dfg.value_type(w));
                    if flags.volatile || count[arg] != 1 || !plain(from) || !plain(to) {
                        continue;
                    }
                    func.dfg.set_value_type(arg, to);
                    map.insert(w, arg);
                    dead.push(i);
                    changed += 1;
                }
                InstructionData::Store {
                    args: [val, ptr],
                    flags,
                } => {
                    let ValueDef::Result(c) = func.dfg.value_def(val) else {
                        continue;
                    };
                    let InstructionData::Unary {
                        opcode: Opcode::Bitcast,
                        arg,
                    } = *func.dfg.inst(c)
                    else {
                        continue;
                    };
                    let (from, to) = (func.dfg.value_type(arg), func.dfg.value_type(val));
                    if count[val] != 1 || !plain(from) || !plain(to) {
                        continue;
                    }
                    func.dfg.replace_inst(
                        i,
                        InstructionData::Store {
                            args: [arg, ptr],
                            flags,
                        },
                    );
                    dead.push(c);
                    changed += 1;
                }
                _ => {}
            }
        }
    }
    if changed > 0 {
        crate::utils::uses::replace_uses_batch(func, &mut map)
            .expect("each bitcast maps to its load, never to another bitcast");
        // A bitcast between a load and a store is both a load's and a store's.
        dead.sort_unstable();
        dead.dedup();
        for i in dead {
            func.layout.remove_inst(i);
        }
    }
    changed
}

impl Simplify {
    fn round(
        &mut self,
        func: &mut Function,
        cx: &PassContext<'_>,
        limits: Limits,
        licm: bool,
    ) -> Result<(), PassError> {
        self.graph.clear(limits);
        // Nodes: about one per pure instruction plus leaves and the rules' nodes. The
        // hash table is touched all over (its size is what it costs), the rest only as
        // used.
        self.graph
            .reserve(self.movable_insts, func.dfg.num_values());
        // Cleared and sized once (a memset), rather than grown entry by entry as indices
        // arrive.
        let (nv, ni) = (func.dfg.num_values(), func.dfg.num_insts());
        self.value_class.clear();
        self.value_class.resize(nv);
        self.pinned.clear();
        self.pinned.resize(ni);
        self.placed.clear();
        self.placed.resize(ni);
        self.home_of.clear();
        self.home_of.resize(ni);
        self.path.clear();
        self.path_idx.clear();
        self.path_idx.resize(func.dfg.num_blocks());
        self.elab.clear();
        self.depth = 0;
        self.preheader.clear();
        {
            let (loops, cfg) = (&cx.analyses.loops, &cx.analyses.cfg);
            for l in loops.loops() {
                self.preheader[l] = loops.preheader(l, cfg).into();
            }
        }
        mark_nonneg_params(func, &mut self.graph, &mut self.not_nonneg);
        self.build(func, cx);
        let domtree = &cx.analyses.domtree;
        self.graph.resolve_homes(|a, b| {
            if domtree.dominates(a, b) {
                Some(a)
            } else {
                domtree.nearest_common_dominator(a, b)
            }
        });
        // Elaboration adds no node: its maps over nodes are sized once.
        self.elab.resize(self.graph.num_nodes());
        self.group_members(func);
        self.elaborate_all(func, cx, licm)
    }
}

/// Is `v` non-negative as a signed integer by its definition alone: a constant with the
/// sign bit clear, a logical shift right by a non-zero constant, a zero extension?
fn nonneg_by_def(func: &Function, v: Value) -> bool {
    let ValueDef::Result(i) = func.dfg.value_def(v) else {
        return false;
    };
    let const_of = |x: Value| match func.dfg.value_def(x) {
        ValueDef::Result(j) => match *func.dfg.inst(j) {
            InstructionData::IntConst { imm } => Some(imm),
            _ => None,
        },
        _ => None,
    };
    match *func.dfg.inst(i) {
        InstructionData::IntConst { imm } => imm >= 0,
        InstructionData::Binary {
            opcode: Opcode::Lshr,
            args,
            ..
        } => const_of(args[1]).is_some_and(|k| k > 0),
        InstructionData::Unary {
            opcode: Opcode::Zext,
            ..
        } => true,
        _ => false,
    }
}

/// The value a `brif` ending in `term` shows non-negative on its target `edge` (0: taken
/// when true, 1: when false): `x` of `icmp sgt x, c` (c >= -1) or `icmp sge x, c` (c >= 0)
/// on the true edge, of `icmp slt x, c` (c >= 0) or `icmp sle x, c` (c >= -1) on the false
/// edge.
fn nonneg_on_edge(func: &Function, term: Inst, edge: usize) -> Option<Value> {
    let InstructionData::Brif { arg, .. } = *func.dfg.inst(term) else {
        return None;
    };
    let ValueDef::Result(i) = func.dfg.value_def(arg) else {
        return None;
    };
    let InstructionData::IntCompare { cond, args } = *func.dfg.inst(i) else {
        return None;
    };
    let ValueDef::Result(j) = func.dfg.value_def(args[1]) else {
        return None;
    };
    let InstructionData::IntConst { imm: c } = *func.dfg.inst(j) else {
        return None;
    };
    use gyre_ir::IntCC::*;
    let ok = match (edge, cond) {
        (0, Sgt) | (1, Sle) => c >= -1,
        (0, Sge) | (1, Slt) => c >= 0,
        _ => false,
    };
    ok.then_some(args[0])
}

/// Mark in `g` the integer block parameters (not the entry's) that every incoming edge
/// passes a non-negative value: itself (a loop's unchanged value), a value non-negative
/// by its definition ([`nonneg_by_def`]), or the value the edge's branch tested
/// ([`nonneg_on_edge`]: the `offset > 0` of a halving loop). One sweep of the terminators;
/// `bad` is scratch.
fn mark_nonneg_params(func: &Function, g: &mut EGraph, bad: &mut SecondaryMap<Value, bool>) {
    bad.clear();
    for b in func.layout.blocks() {
        let Some(t) = func.terminator(b) else {
            continue;
        };
        let mut edge = 0;
        func.dfg.for_each_dest(t, |bc| {
            let tested = nonneg_on_edge(func, t, edge);
            edge += 1;
            let params = func.dfg.block_params(bc.block);
            for (&p, &a) in params.iter().zip(func.dfg.block_call_args(bc)) {
                if !(a == p || Some(a) == tested || nonneg_by_def(func, a)) {
                    bad[p] = true;
                }
            }
        });
    }
    let entry = func.layout.entry_block();
    for b in func.layout.blocks() {
        if Some(b) == entry {
            continue;
        }
        for &p in func.dfg.block_params(b) {
            if func.dfg.value_type(p).is_int() && !bad[p] {
                g.set_nonneg(p);
            }
        }
    }
}

impl FunctionPass for Simplify {
    fn name(&self) -> &'static str {
        NAME
    }

    fn run(
        &mut self,
        func: &mut Function,
        cx: &mut PassContext<'_>,
    ) -> Result<PassResult, PassError> {
        let limits = Limits {
            rewrite_depth: cx.knobs.simplify_rewrite_depth(),
            eclass_size: cx.knobs.simplify_eclass_size().max(1),
        };
        let licm = cx.knobs.simplify_licm();
        if func.layout.entry_block().is_none() {
            return Ok(PassResult::UNCHANGED);
        }
        cx.analyses
            .ensure(
                func,
                Analyses::CFG
                    .union(Analyses::DOMTREE)
                    .union(Analyses::LOOPS),
            )
            .map_err(|e| PassError(format!("{NAME}: @{}: {e}", func.name)))?;
        fingerprint(func, &mut self.snapshot);

        // Dead code first, so that elaboration places values before the uses that remain.
        let mut dead = self.remove_dead(func);
        let mut retyped = if self.has_bitcast {
            retype_memory(func)
        } else {
            0
        };
        let mut totals = GraphStats::default();
        self.hoisted = 0;
        // A round that leaves dead code behind (a load whose only use folded away) placed
        // values for it: one more round places them for the uses that remain, so that a
        // second run of the pass finds nothing to do.
        for _ in 0..MAX_ROUNDS {
            self.round(func, cx, limits, licm)?;
            let st = self.graph.stats;
            for k in 0..Family::COUNT {
                totals.fired[k] += st.fired[k];
            }
            totals.gvn_hits += st.gvn_hits;
            totals.stop_depth += st.stop_depth;
            totals.stop_size += st.stop_size;
            let d = self.remove_dead(func);
            dead += d;
            if d == 0 {
                break;
            }
        }
        // The rounds may leave a load or store next to a bitcast (a pair folded to one).
        if self.has_bitcast {
            retyped += retype_memory(func);
        }

        // Removing dead code or retyping an access changes the layout: no need to compare.
        let changed = dead > 0 || retyped > 0 || !same_fingerprint(func, &self.snapshot);
        let st = totals;
        let mut add = |counter: &'static str, n: u64| {
            // Counters that stayed zero are not printed.
            if n > 0 {
                cx.stats.add(NAME, counter, n);
            }
        };
        for (k, name) in Family::COUNTERS.iter().enumerate() {
            add(name, st.fired[k]);
        }
        add("NumGVN", st.gvn_hits);
        add("NumAccessesRetyped", retyped);
        add("NumHoisted", self.hoisted);
        add("NumDeadRemoved", dead);
        add("StopRewriteDepth", st.stop_depth);
        add("StopEClassSize", st.stop_size);
        // The pass object lives as long as the pipeline: the buffers of a large function
        // (hundreds of MB at a million blocks) would otherwise stay allocated through
        // every later pass and emission. Small ones are kept for the next function.
        if func.dfg.num_insts() > RELEASE_ABOVE {
            *self = Simplify::default();
        }
        if !changed {
            return Ok(PassResult::UNCHANGED);
        }
        Ok(PassResult::changed(
            Analyses::CFG
                .union(Analyses::DOMTREE)
                .union(Analyses::POSTDOM)
                .union(Analyses::LOOPS),
        ))
    }
}
