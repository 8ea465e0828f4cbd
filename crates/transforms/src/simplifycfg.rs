//! `simplifycfg`: function-level control-flow cleanup (the core of LLVM's `SimplifyCFGPass`,
//! `SimplifyCFG.cpp` and `Local.cpp`), run after `simplify` has made conditions constant.
//!
//! Each round does four steps, in this order:
//! 1. **Fold** every `brif` and `br_table` whose condition is an integer constant into a
//!    jump to the target it takes, and every `brif` whose two targets are the same block
//!    with the same arguments into a jump. A `br_table` whose default only reaches
//!    `unreachable`, or whose cases cover every value of its condition `x & c`, makes its most frequent case target the default, and drops the cases
//!    that go where the default goes (a jump when none is left).
//! 2. **Remove** the blocks no longer reachable from the entry (a barrier among them could
//!    never execute; a remark says so).
//! 3. **Forward** empty blocks: a block `E` (not the entry, not a loop header) holding only
//!    `jump T(b..)` has every edge into it redirected to `T`, with `E`'s parameters in
//!    `b..` replaced by the edge's arguments, and is removed. `E`'s parameters must have no
//!    use outside that jump. Blocks are forwarded target first (a chain of empty blocks is
//!    walked once), so every edge moves once.
//! 4. **Merge** a block `S` into its predecessor `P` when `P` ends in `jump S(a..)` and that
//!    is the only edge into `S` (not the entry): `S`'s parameters become `a..` and its
//!    instructions move to the end of `P`.
//!
//! At the end, the constants that were conditions of folded branches and have no use left
//! are removed (the back end would materialize each in a predicate register).
//!
//! A merge can give a branch a constant condition (`jump S(true)` into `S(c): brif c ..`),
//! so rounds repeat while one changes something (at most [`MAX_ROUNDS`]). Each round is
//! linear in the function: the block list is taken from the layout once per run (steps
//! only remove blocks); folding reads each terminator, forwarding sweeps the terminators
//! once for edge counts and predecessor lists (one shared array, no allocation per
//! block) that merging reuses, and the instructions for use counts only when an empty
//! block with parameters could be forwarded or a folded condition may be left unused;
//! plus one remapping sweep when merged blocks had parameters.
//!
//! **Loops**: with `simplifycfg-keep-loops` (the default, LLVM's `NeedCanonicalLoops`), an
//! empty block that jumps to a loop header (a preheader or a latch) or is a loop's exit
//! block is kept, so the loop forms `loop(loop-reduce)` needs after `-O` hold as they were
//! (its adaptor would otherwise re-create the exits, each a `bra.uni` in the PTX) and the
//! backedge stays single.
//!
//! **GPU rule**: nothing is speculated or moved across a branch that still exists; folding
//! only removes edges no thread takes, so barriers and warp collectives keep their control
//! dependence.

use crate::analyses::Analyses;
use crate::loop_cleanup::{
    branch_condition, const_int, decided_target, fold_to_jump, remove_unreachable_blocks,
};
use crate::manager::{FunctionPass, PassContext, PassError, PassResult};
use crate::utils::clone::ValueMap;
use gyre_ir::{Block, BlockCall, EntityRef, Function, Inst, InstructionData, SecondaryMap, Value};

const NAME: &str = "simplifycfg";

/// The most rounds one run does; each round that changes something removes a branch or
/// a block, so this only bounds pathological inputs (a chain of merges each exposing a
/// constant branch), which the next run of the pass continues.
pub const MAX_ROUNDS: u32 = 8;

/// Functions with more blocks than this (arena size) give the pass's buffers back at the
/// end of a run.
const RELEASE_ABOVE: usize = 1 << 14;

/// The `simplifycfg` function pass (see the module documentation).
///
/// **Requires**: a verified function.
///
/// **Establishes**: nothing about loop forms in general (a preheader that is not empty
/// may merge into its predecessor only when it jumps to the header through a block of
/// its own; with `simplifycfg-keep-loops` empty preheaders and latches are kept).
///
/// **Preserves**: nothing when it changes something (the CFG changes); everything when
/// it changes nothing.
///
/// **Gives up**: on nothing; branches on values that are not constants are left to
/// `select-formation` and unswitching, and empty blocks whose parameters are used past
/// their jump are kept.
///
/// **Knobs**: `simplifycfg-keep-loops` (default true).
///
/// **Stats**: `NumFoldedBranches`, `NumBlocksRemoved`, `NumDeadBarriersRemoved`,
/// `NumForwarded`, `NumMerged`, `NumRounds`.
#[derive(Default)]
pub struct SimplifyCfg {
    reached: Vec<bool>,
    /// Per value: its number of uses (operands and branch arguments), counted only when
    /// `have_uses` (see [`SimplifyCfg::forward_empty`]).
    uses: SecondaryMap<Value, u32>,
    /// Were `uses` counted in this round?
    have_uses: bool,
    /// Predecessor lists of all blocks in one array (CSR): block `b`'s are
    /// `pred_list[pred_off[b]..pred_off[b + 1]]`, repeats possible; one array rather than
    /// a `Vec` per block, which cost an allocation and a free per block and run at 1M
    /// blocks.
    pred_off: Vec<u32>,
    pred_list: Vec<Block>,
    /// Predecessors gained by forwarding (edges moved onto a block after the lists were
    /// built): per block the head of a chain through `extra` (`NONE` ends it).
    extra_head: Vec<u32>,
    /// `(predecessor, next)` links of the chains of `extra_head`.
    extra: Vec<(Block, u32)>,
    /// The edges `(target, predecessor)` as the sweep finds them, before sorting into
    /// `pred_list`.
    edges: Vec<(Block, Block)>,
    /// Per block: edges into it, counted when the lists are built and kept exact through
    /// forwarding, so merging needs no sweep of its own.
    npreds: SecondaryMap<Block, u32>,
    /// Loop headers, computed at the start and again in each round after a change.
    header: SecondaryMap<Block, bool>,
    /// Exit blocks of loops (outside a loop, a successor of one of its blocks), computed
    /// with `header`: with `simplifycfg-keep-loops` they are not forwarded, so dedicated
    /// exits and LCSSA parameters stay for `loop(loop-reduce)` after `-O`.
    exit: SecondaryMap<Block, bool>,
    /// Per block: 0 unvisited, 1 on the current chain, 2 done (forwarding order).
    mark: SecondaryMap<Block, u8>,
    chain: Vec<Block>,
    map: ValueMap,
    blocks: Vec<Block>,
    args: Vec<Value>,
    /// The conditions of folded branches: constants that may be left without a use.
    conds: Vec<Value>,
    /// Scratch for one forwarded or merged block: its predecessors, parameters and the
    /// arguments of its jump.
    scratch_preds: Vec<Block>,
    params: Vec<Value>,
    through: Vec<Value>,
}

/// The end of a chain of `SimplifyCfg::extra`.
const NONE: u32 = u32::MAX;

/// The jump that is the only instruction of `b`, if any.
fn only_jump(func: &Function, b: Block) -> Option<Inst> {
    let first = func.layout.first_inst(b)?;
    match func.dfg.inst(first) {
        InstructionData::Jump { .. } => Some(first),
        _ => None,
    }
}

/// Does `b` hold nothing but `unreachable`?
fn only_unreachable(func: &Function, b: Block) -> bool {
    func.layout
        .first_inst(b)
        .is_some_and(|i| func.dfg.inst(i).opcode() == gyre_ir::Opcode::Unreachable)
}

/// Two branch targets that are the same block with the same arguments.
fn same_call(func: &Function, a: &BlockCall, b: &BlockCall) -> bool {
    a.block == b.block && func.dfg.block_call_args(a) == func.dfg.block_call_args(b)
}

/// Do the cases cover every value `arg` can have? Only for `arg = x & c` with a
/// non-negative constant `c` of at most 6 set bits (LLVM's `eliminateDeadSwitchCases`
/// reads the same from known bits): its values are the submasks of `c`, each checked
/// (at most 64). clang lowers a `switch (i % 4)` over all four residues with a default
/// that the IR keeps (shfl_scan's `uint4` lane pick).
fn cases_cover(func: &Function, arg: Value, cases: &[(i64, BlockCall)]) -> bool {
    let gyre_ir::ValueDef::Result(i) = func.dfg.value_def(arg) else {
        return false;
    };
    let InstructionData::Binary {
        opcode: gyre_ir::Opcode::And,
        args,
        ..
    } = *func.dfg.inst(i)
    else {
        return false;
    };
    let Some(c) = const_int(func, args[1]).or_else(|| const_int(func, args[0])) else {
        return false;
    };
    let w = func.dfg.value_type(arg).bits();
    if c.count_ones() > 6 || (w < 64 && c >> (w - 1) != 0) || (w == 64 && c >> 63 != 0) {
        return false;
    }
    // Every submask of c, walked as s = (s - 1) & c down from c.
    let mut s = c;
    loop {
        if !cases.iter().any(|&(k, _)| k == s as i64) {
            return false;
        }
        if s == 0 {
            return true;
        }
        s = (s - 1) & c;
    }
}

/// Simplify the jump table of a `br_table` (LLVM's `createUnreachableSwitchDefault` and
/// the all-cases-alike fold of `SimplifyCFGOpt::simplifySwitch`): a default that only
/// reaches `unreachable`, or that no value of the condition reaches ([`cases_cover`]),
/// is never taken, so the most frequent case target becomes the
/// default and its cases go (the first such target on a tie); cases that go where the
/// default goes are dropped. Returns `None` when nothing changes, else `Some` of the
/// target when no case is left: the branch is a jump (clang's cleanup switch after
/// inlining, `switch %dest [0: ret, 1: ret]` with an unreachable default, was a
/// `br_table` every thread executed, with a `mov` of the case number on every path).
fn simplify_table(
    func: &mut Function,
    arg: Value,
    table: gyre_ir::JumpTable,
) -> Option<Option<BlockCall>> {
    let jt = func.dfg.jump_table(table);
    let mut default = jt.default;
    let dead_default = only_unreachable(func, default.block) || cases_cover(func, arg, &jt.cases);
    if dead_default && !jt.cases.is_empty() {
        let mut best = (0, 0usize);
        for (i, (_, c)) in jt.cases.iter().enumerate() {
            // Quadratic in the cases of one table; tables are short (a switch's arms).
            let count = jt
                .cases
                .iter()
                .filter(|(_, d)| same_call(func, c, d))
                .count();
            if count > best.1 {
                best = (i, count);
            }
        }
        default = jt.cases[best.0].1;
    }
    let keep: Vec<(i64, BlockCall)> = jt
        .cases
        .iter()
        .filter(|(_, c)| !same_call(func, c, &default))
        .copied()
        .collect();
    if keep.len() == jt.cases.len() {
        // No case went where the (old or new) default goes: nothing to change.
        return None;
    }
    let jt = func.dfg.jump_table_mut(table);
    jt.default = default;
    jt.cases = keep;
    Some(jt.cases.is_empty().then_some(default))
}

impl SimplifyCfg {
    /// Step 1: fold constant and same-target branches. Returns the number folded.
    ///
    /// `self.blocks` is the layout's blocks in order: listed in the first round (`fresh`);
    /// later rounds drop the blocks removed since, as every step only removes blocks
    /// (none is inserted or moved), which is cheaper than walking the layout's links.
    fn fold_branches(&mut self, func: &mut Function, fresh: bool) -> u64 {
        let mut n = 0;
        if fresh {
            self.blocks.clear();
            self.blocks.extend(func.layout.blocks());
        } else {
            self.blocks.retain(|&b| func.layout.is_block_inserted(b));
        }
        for &b in &self.blocks {
            let Some(term) = func.terminator(b) else {
                continue;
            };
            let cond = branch_condition(func, term);
            if let Some(c) = cond.and_then(|c| const_int(func, c)) {
                if let Some(dest) = decided_target(func, term, c) {
                    self.conds.extend(cond);
                    fold_to_jump(func, term, dest);
                    n += 1;
                    continue;
                }
            }
            if let InstructionData::Brif { blocks, .. } = *func.dfg.inst(term) {
                if blocks[0].block == blocks[1].block
                    && func.dfg.block_call_args(&blocks[0]) == func.dfg.block_call_args(&blocks[1])
                {
                    fold_to_jump(func, term, blocks[0]);
                    n += 1;
                }
            }
            if let InstructionData::BrTable { arg, table } = *func.dfg.inst(term) {
                match simplify_table(func, arg, table) {
                    Some(Some(dest)) => fold_to_jump(func, term, dest),
                    Some(None) => {}
                    None => continue,
                }
                // Edges went either way (counted as a fold: unreachable blocks go next).
                n += 1;
            }
        }
        n
    }

    /// Can the empty block `e` (ending in `jump`) be forwarded?
    fn forwardable(&self, func: &Function, e: Block, keep_loops: bool) -> Option<Inst> {
        if func.layout.entry_block() == Some(e) || self.header[e] || self.exit[e] {
            return None;
        }
        let j = only_jump(func, e)?;
        let InstructionData::Jump { dest } = func.dfg.inst(j) else {
            return None;
        };
        if dest.block == e || (keep_loops && self.header[dest.block]) {
            return None;
        }
        // Every use of a parameter must be in the jump itself. Without counted uses no
        // block with parameters could pass the checks above (`forward_empty`).
        if !self.have_uses && !func.dfg.block_params(e).is_empty() {
            return None;
        }
        for &p in func.dfg.block_params(e) {
            let here = func
                .dfg
                .block_call_args(dest)
                .iter()
                .filter(|&&a| a == p)
                .count() as u32;
            if self.uses[p] != here {
                return None;
            }
        }
        Some(j)
    }

    /// Step 3: forward empty blocks. Returns the number removed.
    fn forward_empty(&mut self, func: &mut Function, keep_loops: bool) -> u64 {
        // Edge counts and predecessor lists of the function as it is now, in one sweep of
        // the terminators; the maps are sized once (a memset) rather than grown entry by
        // entry.
        let nb = func.dfg.num_blocks();
        self.npreds.clear();
        self.npreds.resize(nb);
        self.edges.clear();
        // Unreachable blocks went since `fold_branches` listed the blocks.
        self.blocks.retain(|&b| func.layout.is_block_inserted(b));
        let entry = func.layout.entry_block();
        // Does some empty block with parameters pass every check of `forwardable` but the
        // uses? Its parameters' uses must be counted. A block failing them now fails
        // them for the whole step: its target is itself or a header, neither forwarded,
        // so its jump keeps its target.
        let mut need_uses = !self.conds.is_empty();
        for &b in &self.blocks {
            let Some(t) = func.terminator(b) else {
                continue;
            };
            let (np, edges) = (&mut self.npreds, &mut self.edges);
            func.dfg.for_each_dest(t, |bc| {
                np[bc.block] += 1;
                edges.push((bc.block, b));
            });
            if !need_uses {
                if let InstructionData::Jump { dest } = func.dfg.inst(t) {
                    need_uses = func.layout.first_inst(b) == Some(t)
                        && !func.dfg.block_params(b).is_empty()
                        && entry != Some(b)
                        && !self.header[b]
                        && !self.exit[b]
                        && dest.block != b
                        && !(keep_loops && self.header[dest.block]);
                }
            }
        }
        // Uses of every value: a sweep of every instruction, so only when needed (the
        // constants of folded branches, or such a block).
        self.have_uses = need_uses;
        if need_uses {
            self.uses.clear();
            self.uses.resize(func.dfg.num_values());
            for &b in &self.blocks {
                for i in func.layout.block_insts(b) {
                    let uses = &mut self.uses;
                    func.dfg.for_each_inst_value(i, |v| uses[v] += 1);
                }
            }
        }
        // Counting sort of the edges by target: `pred_off[t]` first holds the end of
        // `t`'s range and counts down to its start as `t`'s edges are placed (walked in
        // reverse, so each list keeps the order of the sweep).
        self.pred_off.clear();
        self.pred_off.reserve(nb + 1);
        let mut end = 0u32;
        for &n in self.npreds.values() {
            end += n;
            self.pred_off.push(end);
        }
        self.pred_off.resize(nb + 1, end);
        self.pred_list.clear();
        self.pred_list.resize(end as usize, Block::new(0));
        for &(t, p) in self.edges.iter().rev() {
            let o = &mut self.pred_off[t.index()];
            *o -= 1;
            self.pred_list[*o as usize] = p;
        }
        self.extra_head.clear();
        self.extra_head.resize(nb, NONE);
        self.extra.clear();
        self.remove_dead_conditions(func);
        self.mark.clear();
        self.mark.resize(nb);
        let mut n = 0;
        for k in 0..self.blocks.len() {
            let start = self.blocks[k];
            if self.mark[start] != 0 {
                continue;
            }
            // Walk the chain of empty blocks from `start`, then forward it back to front,
            // so each block's target is final when its edges move.
            self.chain.clear();
            let mut b = start;
            while self.mark[b] == 0 {
                self.mark[b] = 1;
                self.chain.push(b);
                match only_jump(func, b).map(|j| func.dfg.inst(j)) {
                    Some(InstructionData::Jump { dest }) => b = dest.block,
                    _ => break,
                }
            }
            while let Some(e) = self.chain.pop() {
                self.mark[e] = 2;
                if !func.layout.is_block_inserted(e) {
                    continue;
                }
                if let Some(j) = self.forwardable(func, e, keep_loops) {
                    self.forward(func, e, j);
                    n += 1;
                }
            }
        }
        n
    }

    /// Redirect every edge into the empty block `e` (ending in the jump `j`) to its target.
    fn forward(&mut self, func: &mut Function, e: Block, j: Inst) {
        let InstructionData::Jump { dest } = *func.dfg.inst(j) else {
            unreachable!("forwardable blocks end in a jump");
        };
        let target = dest.block;
        self.params.clear();
        self.params.extend_from_slice(func.dfg.block_params(e));
        self.through.clear();
        self.through
            .extend_from_slice(func.dfg.block_call_args(&dest));
        if self.have_uses {
            for &v in &self.through {
                self.uses[v] -= 1;
            }
        }
        // `e`'s predecessors: its list, then those it gained by forwarding. A stale entry
        // (a block forwarded since, or one whose edges already moved) finds no edge to
        // move.
        self.scratch_preds.clear();
        let range = self.pred_off[e.index()] as usize..self.pred_off[e.index() + 1] as usize;
        self.scratch_preds.extend_from_slice(&self.pred_list[range]);
        let mut x = std::mem::replace(&mut self.extra_head[e.index()], NONE);
        while x != NONE {
            let (p, next) = self.extra[x as usize];
            self.scratch_preds.push(p);
            x = next;
        }
        let mut moved_all = 0u32;
        for k in 0..self.scratch_preds.len() {
            let p = self.scratch_preds[k];
            let Some(t) = func.terminator(p) else {
                continue;
            };
            let mut moved = 0u32;
            let (uses, args) = (&mut self.uses, &mut self.args);
            let (params, through, have_uses) = (&self.params, &self.through, self.have_uses);
            func.dfg.for_each_dest_mut(t, |bc, pool| {
                if bc.block != e {
                    return;
                }
                args.clear();
                let old = bc.args.as_slice(pool);
                for &v in through {
                    let nv = match params.iter().position(|&q| q == v) {
                        Some(i) => old[i],
                        None => v,
                    };
                    args.push(nv);
                }
                if have_uses {
                    for &v in old {
                        uses[v] -= 1;
                    }
                    for &v in args.iter() {
                        uses[v] += 1;
                    }
                }
                *bc = BlockCall::new(target, args, pool);
                moved += 1;
            });
            for _ in 0..moved {
                let head = &mut self.extra_head[target.index()];
                self.extra.push((p, *head));
                *head = (self.extra.len() - 1) as u32;
            }
            moved_all += moved;
        }
        // The moved edges now enter `target`, and `e`'s own jump to it goes.
        self.npreds[target] = self.npreds[target] + moved_all - 1;
        self.npreds[e] = 0;
        func.layout.remove_inst(j);
        for k in (0..self.params.len()).rev() {
            func.dfg.remove_block_param(e, k);
        }
        func.layout.remove_block(e);
    }

    /// Remove the constants that were conditions of folded branches and have no use left
    /// (the back end would otherwise materialize each in a register), with the use counts
    /// `forward_empty` just took: before forwarding, so that a block holding only such a
    /// constant and a jump is forwarded in this run, not the next.
    fn remove_dead_conditions(&mut self, func: &mut Function) {
        for k in 0..self.conds.len() {
            let c = self.conds[k];
            let gyre_ir::ValueDef::Result(i) = func.dfg.value_def(c) else {
                continue;
            };
            if self.uses[c] == 0
                && func.layout.inst_block(i).is_some()
                && matches!(func.dfg.inst(i), InstructionData::IntConst { .. })
            {
                func.layout.remove_inst(i);
            }
        }
        self.conds.clear();
    }

    /// Step 4: merge single-predecessor blocks into their jumping predecessor. Returns the
    /// number merged; the parameters' uses are remapped at the end. Runs right after
    /// [`Self::forward_empty`], whose edge counts (`npreds`) and block list it uses:
    /// merging moves terminators between blocks but no edge changes its target.
    fn merge_blocks(&mut self, func: &mut Function) -> u64 {
        self.map.clear();
        let entry = func.layout.entry_block();
        let mut n = 0;
        for k in 0..self.blocks.len() {
            let b = self.blocks[k];
            if !func.layout.is_block_inserted(b) {
                continue;
            }
            while let Some(term) = func.terminator(b) {
                let InstructionData::Jump { dest } = *func.dfg.inst(term) else {
                    break;
                };
                let s = dest.block;
                if s == b || Some(s) == entry || self.npreds[s] != 1 {
                    break;
                }
                self.params.clear();
                self.params.extend_from_slice(func.dfg.block_params(s));
                for (&p, &a) in self.params.iter().zip(func.dfg.block_call_args(&dest)) {
                    self.map.insert(p, a);
                }
                func.layout.remove_inst(term);
                while let Some(i) = func.layout.first_inst(s) {
                    func.layout.remove_inst(i);
                    func.layout.append_inst(i, b);
                }
                for k in (0..self.params.len()).rev() {
                    func.dfg.remove_block_param(s, k);
                }
                func.layout.remove_block(s);
                n += 1;
            }
        }
        n
    }
}

impl FunctionPass for SimplifyCfg {
    fn name(&self) -> &'static str {
        NAME
    }

    fn run(
        &mut self,
        func: &mut Function,
        cx: &mut PassContext<'_>,
    ) -> Result<PassResult, PassError> {
        let err = |func: &Function, m: String| PassError(format!("{NAME}: @{}: {m}", func.name));
        let keep_loops = cx.knobs.simplifycfg_keep_loops();
        self.conds.clear();
        if func.layout.entry_block().is_none() {
            return Ok(PassResult::UNCHANGED);
        }
        let headers = |this: &mut Self, func: &Function, cx: &mut PassContext<'_>, fresh| {
            this.header.clear();
            this.exit.clear();
            if !keep_loops {
                return Ok(());
            }
            if fresh {
                cx.analyses.invalidate(Analyses::NONE);
            }
            cx.analyses
                .ensure(func, Analyses::LOOPS)
                .map_err(|e| err(func, e.to_string()))?;
            let li = &cx.analyses.loops;
            for b in func.layout.blocks() {
                if li.is_header(b) {
                    this.header[b] = true;
                }
                let (Some(l), Some(t)) = (li.innermost_loop(b), func.terminator(b)) else {
                    continue;
                };
                let exit = &mut this.exit;
                func.dfg.for_each_dest(t, |bc| {
                    if !li.contains(l, bc.block) {
                        exit[bc.block] = true;
                    }
                });
            }
            Ok::<(), PassError>(())
        };
        headers(self, func, cx, false)?;
        let mut changed = false;
        let mut dirty = false;
        for round in 0..MAX_ROUNDS {
            let folded = self.fold_branches(func, round == 0);
            let mut removed_blocks = 0;
            // Unreachable blocks of the input go in the first round; later, only folds
            // make blocks unreachable.
            if folded > 0 || round == 0 {
                if folded > 0 {
                    cx.stats.add(NAME, "NumFoldedBranches", folded);
                }
                let removed = remove_unreachable_blocks(func, &mut self.reached);
                removed_blocks = removed.blocks.len() as u64;
                if removed_blocks > 0 {
                    cx.stats.add(NAME, "NumBlocksRemoved", removed_blocks);
                }
                if removed.barriers > 0 {
                    cx.stats
                        .add(NAME, "NumDeadBarriersRemoved", u64::from(removed.barriers));
                    cx.remark(
                        NAME,
                        func,
                        None,
                        "DeadBarrierRemoved",
                        format!(
                            "{} barrier(s) in blocks made unreachable by folding were removed \
                             with them: they could never execute",
                            removed.barriers
                        ),
                    );
                }
            }
            // Any change since they were computed (a fold removes a backedge, a removed
            // unreachable cycle takes its exits along) may change headers and exits: they
            // are recomputed, so that a second run finds nothing left to do.
            if dirty || folded > 0 || removed_blocks > 0 {
                headers(self, func, cx, true)?;
            }
            let forwarded = self.forward_empty(func, keep_loops);
            if forwarded > 0 {
                cx.stats.add(NAME, "NumForwarded", forwarded);
            }
            let merged = self.merge_blocks(func);
            if merged > 0 {
                cx.stats.add(NAME, "NumMerged", merged);
            }
            // Remapping sweeps every instruction: only when a merged block had parameters.
            if merged > 0 && self.map.num_values() > 0 {
                self.map
                    .resolve_chains()
                    .map_err(|c| err(func, format!("internal error: {c}")))?;
                self.blocks.retain(|&b| func.layout.is_block_inserted(b));
                for &b in &self.blocks {
                    let mut cur = func.layout.first_inst(b);
                    while let Some(i) = cur {
                        cur = func.layout.next_inst(i);
                        func.dfg.map_inst_values(i, |v| self.map.map(v));
                    }
                }
            }
            let any = folded + removed_blocks + forwarded + merged > 0;
            dirty = forwarded + merged > 0;
            if !any {
                break;
            }
            changed = true;
            cx.stats.add(NAME, "NumRounds", 1);
        }
        // The pass object lives as long as the pipeline: a large function's buffers are
        // given back rather than kept through every later pass.
        if func.dfg.num_blocks() > RELEASE_ABOVE {
            *self = SimplifyCfg::default();
        }
        if changed {
            cx.analyses.invalidate(Analyses::NONE);
            Ok(PassResult::changed(Analyses::NONE))
        } else {
            Ok(PassResult::UNCHANGED)
        }
    }
}
