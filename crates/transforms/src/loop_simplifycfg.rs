//! `loop-simplifycfg`: simplify the control flow inside a loop (LLVM's
//! `LoopSimplifyCFGPass`, `LoopSimplifyCFG.cpp`).
//!
//! 1. **Fold** every `brif` and `br_table` of the loop (its own blocks, not its subloops',
//!    which were visited before it) whose condition is an integer constant into a jump to
//!    the one target it takes (`enable-loop-simplifycfg-term-folding`).
//! 2. **Remove** the blocks that folding made unreachable from the function's entry: dead
//!    parts of the loop, whole inner loops, and exit paths nothing else reaches. A
//!    barrier among them goes too — it could never execute — and a remark says so.
//! 3. **Merge** each block of the loop that jumps to a block with no other predecessor
//!    (not a header) with that block: the successor's parameters become the jump's
//!    arguments and its instructions move up.
//!
//! A loop whose backedge was folded away stops being a loop: it is reported with
//! [`LoopUpdater::mark_loop_deleted`]. Uses of a merged block's parameters are rewritten in
//! the loop's blocks only: in LCSSA form (which the adaptor establishes) a value of the
//! loop is used outside it only through branch arguments, which lie in the loop.
//!
//! Cost: O(loop) per loop. The CFG's edges and the loop forest are updated in place (the
//! dominator tree is dropped) after merges, and after folds whose effect stays inside the loop
//! (`loop_cleanup::local_fold_outcome`), and, for an outermost loop, after folds that make
//! exit blocks unreachable (what dies past them is found by counting live incoming edges,
//! `loop_cleanup::dead_region`, and removed in place when it is whole outermost loops and
//! blocks in no loop); a fold that makes an exit of a nested loop unreachable, or moves a
//! block out of the loop, or whose dead region touches an irreducible cycle, falls back to
//! a reachability sweep of the function and re-forming the loops (O(function),
//! `NumFunctionWideUpdates`).

use crate::analyses::Analyses;
use crate::loop_cleanup::{
    branch_condition, commit_dead_region, commit_local_fold, const_int, decided_target,
    fold_to_jump, local_fold_outcome, outside_dead, remove_unreachable_blocks, restore_forms,
    RegionScratch,
};
use crate::manager::{Forms, LoopPass, LoopUpdater, PassContext, PassError, PassResult};
use crate::utils::clone::ValueMap;
use gyre_ir::{Block, Function, Inst, InstructionData};
use rustc_hash::FxHashMap;

const NAME: &str = "loop-simplifycfg";

/// The `loop-simplifycfg` loop pass.
///
/// **Requires**: LCSSA form (the adaptor establishes it): uses of a merged block's
/// parameters are rewritten inside the loop only.
///
/// **Establishes**: loop-simplify and LCSSA form of every loop. Merging keeps every edge's
/// source in the same loop, so both forms hold as before. A fold whose dead blocks are all
/// in the loop, with every exit still reached and every live block still reaching a latch
/// (or, with no backedge left, an exit in the parent), changes no other loop's blocks,
/// preheader or exits: the forms hold. Any other fold may take a block out of an outer
/// loop, so both forms are re-established on the function (the `loop-simplify` and
/// `lcssa` passes, which change nothing where they hold). Loops that lose their backedge
/// are no longer loops.
///
/// **Preserves**: the CFG's edges and the loop forest, updated in place, and
/// `nonlocal-uses` (kept sound), after merges and in-place folds (the CFG's order goes
/// stale; the dominator tree is dropped); after a function-wide fold, what re-forming
/// computed; all when it changed nothing.
///
/// **Gives up**: on a loop in or around an irreducible cycle (`Irreducible`, a remark).
/// Branches on values that are not constants are left to other passes (unswitching).
///
/// **Knobs**: `enable-loop-simplifycfg-term-folding` (default true, LLVM's and cicc's):
/// without it, no branch is folded and no block removed; blocks are still merged.
///
/// **Stats**: `NumTerminatorsFolded`, `NumLoopBlocksDeleted` (blocks of the loop removed as
/// unreachable, inner loops' included), `NumBlocksRemoved` (all unreachable blocks
/// removed), `NumBlocksMerged`, `NumLoopsDeleted` (the visited loop lost its backedge),
/// `NumDeadBarriersRemoved`, `NumIrreducible`, `NumFunctionWideUpdates` (folds whose
/// dead blocks were removed by a sweep of the function, the loops re-formed).
///
/// Running it twice changes nothing the second time: no constant branch and no mergeable
/// pair remain.
#[derive(Default)]
pub struct LoopSimplifyCfg {
    /// The blocks reached from the entry (reachability buffer).
    reached: Vec<bool>,
    /// Merged parameters -> the values they stand for.
    map: ValueMap,
    /// Edges into each block of the loop.
    preds: FxHashMap<Block, u32>,
    /// The merged pairs `(into, from)`, in order.
    merges: Vec<(Block, Block)>,
    /// The jump arguments that replaced merged blocks' parameters.
    merged_args: Vec<gyre_ir::Value>,
    /// The folded blocks.
    folded: Vec<Block>,
    /// Liveness marks of [`local_fold_outcome`].
    live: Vec<u8>,
    /// Scratch of [`crate::loop_cleanup::dead_region`].
    region: RegionScratch,
}

/// The barriers among the instructions of `blocks`.
fn count_barriers(func: &Function, blocks: &[Block]) -> u32 {
    let mut n = 0;
    for &b in blocks {
        for i in func.layout.block_insts(b) {
            if func.dfg.inst(i).opcode() == gyre_ir::Opcode::Barrier {
                n += 1;
            }
        }
    }
    n
}

impl LoopPass for LoopSimplifyCfg {
    fn name(&self) -> &'static str {
        NAME
    }

    fn establishes(&self) -> Forms {
        Forms {
            loop_simplify: true,
            lcssa: true,
            rotated: false,
        }
    }

    fn run_on_loop(
        &mut self,
        func: &mut Function,
        header: Block,
        cx: &mut PassContext<'_>,
        updater: &mut LoopUpdater,
    ) -> Result<PassResult, PassError> {
        let term_folding = cx.knobs.enable_loop_simplifycfg_term_folding();
        let err = |func: &Function, m: String| PassError(format!("{NAME}: @{}: {m}", func.name));
        cx.analyses
            .ensure(func, Analyses::LOOPS)
            .map_err(|e| err(func, e.to_string()))?;
        let li = &cx.analyses.loops;
        let Some(l) = li
            .innermost_loop(header)
            .filter(|&l| li.header(l) == header)
        else {
            return Ok(PassResult::UNCHANGED);
        };
        if li.contains_irreducible(l) || li.in_irreducible_cycle(header) {
            cx.stats.add(NAME, "NumIrreducible", 1);
            cx.remark(
                NAME,
                func,
                Some(header),
                "Irreducible",
                "the loop is in or around an irreducible cycle",
            );
            return Ok(PassResult::UNCHANGED);
        }
        // The loop's own blocks (header first), without walking its subloops: a loop
        // pass visits every loop, so walking each nest would be quadratic in its depth.
        let mut own: Vec<Block> = Vec::new();
        li.own_blocks(l, &mut own);
        // 1. Fold constant branches.
        let mut folded = 0u64;
        self.folded.clear();
        if term_folding {
            for &b in &own {
                let Some(term) = func.terminator(b) else {
                    continue;
                };
                let Some(c) = branch_condition(func, term).and_then(|c| const_int(func, c)) else {
                    continue;
                };
                if let Some(dest) = decided_target(func, term, c) {
                    self.folded.push(b);
                    fold_to_jump(func, term, dest);
                    folded += 1;
                }
            }
        }
        // 2. Remove what became unreachable: in place when it is inside the loop and the
        // loop's place in the forest stays clean, else by a sweep of the function.
        // `local`: the analyses kept so far, and whether the loop lost its backedges.
        let mut local: Option<(Analyses, bool)> = None;
        if folded > 0 {
            cx.stats.add(NAME, "NumTerminatorsFolded", folded);
            let a = &mut *cx.analyses;
            let outcome = local_fold_outcome(func, &a.cfg, &a.loops, l, &mut self.live);
            // Blocks past exits that died: in place when whole outermost loops and
            // blocks in no loop die with them.
            let outside = match &outcome {
                Some(out) => outside_dead(func, a, &self.folded, out, &mut self.region)
                    .map_err(|m| err(func, m))?,
                None => None,
            };
            let (removed, in_loop, barriers) = match (outcome, outside) {
                (Some(out), Some(outside)) => {
                    let barriers = count_barriers(func, &out.dead) + count_barriers(func, &outside);
                    let mut kept = commit_local_fold(func, a, l, &self.folded, &out)
                        .map_err(|m| err(func, m))?;
                    if !outside.is_empty() {
                        let k = commit_dead_region(func, a, &outside).map_err(|m| err(func, m))?;
                        kept = kept.minus(kept.minus(k));
                    }
                    local = Some((kept, out.latches.is_empty()));
                    (
                        (out.dead.len() + outside.len()) as u64,
                        out.dead.len() as u64,
                        barriers,
                    )
                }
                _ => {
                    cx.stats.add(NAME, "NumFunctionWideUpdates", 1);
                    let removed = remove_unreachable_blocks(func, &mut self.reached);
                    let li = &a.loops;
                    let in_loop = removed
                        .blocks
                        .iter()
                        .filter(|&&b| li.contains(l, b))
                        .count() as u64;
                    (removed.blocks.len() as u64, in_loop, removed.barriers)
                }
            };
            if in_loop > 0 {
                cx.stats.add(NAME, "NumLoopBlocksDeleted", in_loop);
            }
            if removed > 0 {
                cx.stats.add(NAME, "NumBlocksRemoved", removed);
            }
            if barriers > 0 {
                cx.stats
                    .add(NAME, "NumDeadBarriersRemoved", u64::from(barriers));
                cx.remark(
                    NAME,
                    func,
                    Some(header),
                    "DeadBarrierRemoved",
                    format!(
                        "{barriers} barrier(s) in blocks made unreachable by folding were \
                         removed with them: they could never execute"
                    ),
                );
            }
        }
        // The loop forest still describes the loop as it was; removed blocks are no
        // longer in the layout, which is what "alive" means below.
        let li = &cx.analyses.loops;
        // 3. Merge straight-line pairs. A candidate is an own block of the loop, not its
        // header, so its predecessors are blocks of the loop: count the edges into them
        // from the CFG when it is current (no fold, or folds applied in place), else from
        // the terminators of all the loop's blocks.
        let cfg_current = folded == 0 || local.is_some();
        self.preds.clear();
        if cfg_current {
            for &b in own.iter().filter(|&&b| func.layout.is_block_inserted(b)) {
                self.preds.insert(b, cx.analyses.cfg.preds(b).len() as u32);
            }
        } else {
            let all: Vec<Block> = li.blocks(l).collect();
            for &b in all.iter().filter(|&&b| func.layout.is_block_inserted(b)) {
                if let Some(t) = func.terminator(b) {
                    let preds = &mut self.preds;
                    func.dfg
                        .for_each_dest(t, |bc| *preds.entry(bc.block).or_default() += 1);
                }
            }
        }
        self.map.clear();
        self.merges.clear();
        self.merged_args.clear();
        let mut merged = 0u64;
        for &b in &own {
            if !func.layout.is_block_inserted(b) {
                continue;
            }
            while let Some(term) = func.terminator(b) {
                let InstructionData::Jump { dest } = func.dfg.inst(term) else {
                    break;
                };
                let s = dest.block;
                let mergeable = s != b
                    && s != header
                    && func.layout.is_block_inserted(s)
                    && li.innermost_loop(s) == Some(l)
                    && !li.is_header(s)
                    && self.preds.get(&s).copied() == Some(1);
                if !mergeable {
                    break;
                }
                let args: Vec<gyre_ir::Value> = func.dfg.block_call_args(dest).to_vec();
                let params: Vec<gyre_ir::Value> = func.dfg.block_params(s).to_vec();
                for (&p, &a) in params.iter().zip(&args) {
                    self.map.insert(p, a);
                    self.merged_args.push(a);
                }
                func.layout.remove_inst(term);
                let insts: Vec<Inst> = func.layout.block_insts(s).collect();
                for i in insts {
                    func.layout.remove_inst(i);
                    func.layout.append_inst(i, b);
                }
                for k in (0..params.len()).rev() {
                    func.dfg.remove_block_param(s, k);
                }
                func.layout.remove_block(s);
                self.merges.push((b, s));
                merged += 1;
            }
        }
        if merged > 0 {
            cx.stats.add(NAME, "NumBlocksMerged", merged);
            self.map
                .resolve_chains()
                .map_err(|c| err(func, format!("internal error: {c}")))?;
            // Uses of the merged parameters lie in the loop (subloops included): a
            // walk of the nest, only for a loop that merged something.
            let all: Vec<Block> = cx.analyses.loops.blocks(l).collect();
            for &b in &all {
                if !func.layout.is_block_inserted(b) {
                    continue;
                }
                let insts: Vec<Inst> = func.layout.block_insts(b).collect();
                for i in insts {
                    func.dfg.map_inst_values(i, |v| self.map.map(v));
                }
            }
        }
        if folded == 0 && merged == 0 {
            return Ok(PassResult::UNCHANGED);
        }
        if let Some((kept, gone)) = local {
            if gone {
                cx.stats.add(NAME, "NumLoopsDeleted", 1);
                updater.mark_loop_deleted();
            }
            let mut kept = kept;
            if merged > 0 {
                let m = self
                    .update_after_merges(func, cx)
                    .map_err(|m| err(func, m))?;
                kept = kept.minus(Analyses::ALL.minus(m));
            }
            return Ok(PassResult::changed(kept));
        }
        // Is the loop still a loop? Folding may have removed its backedge.
        if folded > 0 {
            restore_forms(func, cx)?;
            cx.analyses
                .ensure(func, Analyses::LOOPS)
                .map_err(|e| err(func, e.to_string()))?;
            if !cx.analyses.loops.is_header(header) {
                cx.stats.add(NAME, "NumLoopsDeleted", 1);
                updater.mark_loop_deleted();
            }
            // The fresh analyses describe the function as it is now: keep them.
            return Ok(PassResult::changed(cx.analyses.valid()));
        }
        let kept = self
            .update_after_merges(func, cx)
            .map_err(|m| err(func, m))?;
        Ok(PassResult::changed(kept))
    }
}

impl LoopSimplifyCfg {
    /// Bring the CFG's edges and the loop forest up to date after the merges in
    /// `self.merges`, in time proportional to the merged blocks: `into` took the
    /// terminator of `from`, its only successor, and `from` left the function (and takes
    /// its place as a latch). Returns the analyses kept (the dominator tree is dropped, as
    /// in `loop_cleanup::commit_local_fold`).
    fn update_after_merges(
        &mut self,
        func: &Function,
        cx: &mut PassContext<'_>,
    ) -> Result<Analyses, String> {
        let a = &mut *cx.analyses;
        let cfg_err = |e: gyre_analysis::CfgError| e.to_string();
        for &(into, from) in &self.merges {
            a.cfg.update_block(func, from).map_err(cfg_err)?;
            a.loops.merge_block(into, from);
        }
        for &(into, _) in &self.merges {
            a.cfg.update_block(func, into).map_err(cfg_err)?;
        }
        let mut kept = Analyses::CFG.union(Analyses::LOOPS);
        // A merged block's parameters were replaced by the jump's arguments wherever they
        // were used: mark those (the analysis over-approximates).
        if a.nonlocal.is_valid() {
            for &v in &self.merged_args {
                a.nonlocal.set(v, true);
            }
            kept = kept.union(Analyses::NONLOCAL_USES);
        }
        Ok(kept)
    }
}
