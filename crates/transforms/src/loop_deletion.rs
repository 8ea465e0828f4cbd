//! `loop-deletion`: delete loops that do nothing observable, and break the backedge of
//! loops that never go round (LLVM's `LoopDeletionPass`, `LoopDeletion.cpp`).
//!
//! Three cases, tried in LLVM's order:
//!
//! 1. **Never entered.** The preheader's only predecessor ends in a `brif`/`br_table` on a
//!    constant that does not lead to the preheader: the edge is folded away and the
//!    preheader, the loop and whatever else only they reached are removed.
//! 2. **Dead.** No operation of the loop (subloops included) has an effect or is
//!    convergent, the loop has one exit block and every exiting edge passes it the same
//!    values, all defined outside the loop, and every loop of the nest provably terminates
//!    (scalar evolution knows a bound of its backedge-taken count). The preheader then
//!    jumps straight to the exit with those values and the loop's blocks are removed.
//! 3. **Backedge never taken.** Scalar evolution says an exiting block that dominates
//!    every latch exits on its first visit (an exit count of zero), or — with
//!    `loop-deletion-enable-symbolic-execution` — evaluating the first iteration with
//!    the preheader's constants reaches no backedge. Every iteration is then a first
//!    iteration, so the branches decided on it are folded to their one live target; the
//!    latches become unreachable and are removed, and what was the loop runs once as
//!    straight-line code. Values used after the loop keep what the single pass computes
//!    (for a loop that exits at its header, the entry values).
//!
//! In every case the loop is gone: it is reported with
//! [`LoopUpdater::mark_loop_deleted`]. Work per loop is proportional to its own blocks
//! where that decides (so a deep nest costs linear time): effects are looked for in the
//! loop's own blocks before its subloops', case 3 computes scalar evolution for the own
//! blocks only ([`ScalarEvolution::compute_loop_own`], which also gives dominance inside
//! the loop) and its symbolic evaluation does not enter subloops; only case 2, on a nest
//! without effects, computes the nest's ([`ScalarEvolution::compute_nest`]: every loop of
//! it must terminate). After cases 2 and 3 the CFG's edges and the
//! loop forest are updated in place ([`LoopInfo::remove_loop`],
//! [`gyre_analysis::Cfg::update_block`]); the dominator tree is dropped (no loop pass of
//! `-O` needs it, and the incremental updater recomputed it whole on removed regions).
//! What case 1 and case 3 leave unreachable past the loop is found by counting live
//! incoming edges from the blocks that lost one (`loop_cleanup::dead_region`) and removed
//! in place when it is whole outermost loops and blocks in no loop; otherwise (a loop
//! nested in one that stays, a block of an irreducible cycle, a loop with an irreducible
//! cycle inside) the pass falls back to a sweep of the function and re-forming the loops
//! (`NumFunctionWideUpdates`).

use crate::analyses::Analyses;
use crate::loop_cleanup::{
    branch_condition, commit_dead_region, commit_local_fold, const_int, dead_region,
    decided_target, eval_int, fold_to_jump, local_fold_outcome, outside_dead, remove_blocks,
    remove_unreachable_blocks, restore_forms, RegionScratch,
};
use crate::manager::{Forms, LoopPass, LoopUpdater, PassContext, PassError, PassResult};
use gyre_analysis::{Cfg, Loop, LoopInfo, ScalarEvolution};
use gyre_ir::{Block, BlockCall, Function, Inst, InstructionData, Opcode, Value};
use gyre_ir::{EntityRef, ValueDef};
use rustc_hash::FxHashMap;

const NAME: &str = "loop-deletion";

/// The `loop-deletion` loop pass.
///
/// **Requires**: loop-simplify form (a preheader; loops without one are left alone with a
/// remark) and LCSSA form (values of the loop reach outside uses only through exit-block
/// parameters, so the exit's arguments are all the loop gives the rest of the function),
/// which the loop adaptor establishes before any loop pass runs.
///
/// **Establishes**: loop-simplify and LCSSA form of every loop, as it found them: a dead
/// loop's surroundings keep their forms (the preheader now jumps to the exit, which stays
/// dedicated to the loops around); after case 3 what is left of the loop joins its parent
/// in place when that keeps the parent's blocks, latches and exits
/// (`loop_cleanup::local_fold_outcome`); otherwise, and after case 1, a block of an outer
/// loop may have left it, so both forms are re-established on the function (the
/// `loop-simplify` and `lcssa` passes, which change nothing where they hold).
///
/// **Preserves**: after case 2 and an in-place case 3, the CFG's edges and the loop forest,
/// updated in place (the CFG's order goes stale), and `nonlocal-uses` (kept sound); after a function-wide fold, what
/// re-establishing the forms computed afresh; every analysis when it changed nothing.
///
/// **Gives up** (a remark and a counter each): a loop in or around an irreducible cycle
/// (`Irreducible`); no preheader (`NotLoopSimplifyForm`); a loop with an operation that has
/// an effect — a store, an atomic, a fence, a barrier or other convergent operation, a
/// call, `vprintf`, a volatile load, a `return` or `unreachable` inside it
/// (`HasSideEffects`: such a loop is never deleted, whatever its trip count, unless it
/// never runs); no exit at all, or exits to more than one block (`NoSingleExit`); an exit
/// receiving a value computed in the loop, or different values from different exiting
/// edges (`ValueUsedOutside`); a loop of the nest with no computable bound on its trip
/// count (`MayNotTerminate`: an unbounded loop may be an intended infinite loop), unless
/// the function is `mustprogress` (LLVM's rule: a loop without effects that never ends is
/// undefined behaviour there, so it is deleted without a proof, and one with no exit at
/// all leaves `unreachable` in its preheader) or the loop is (its header's
/// `loop(mustprogress)`, LLVM's `llvm.loop.mustprogress`; then its subloops need no bound
/// either).
///
/// **Knobs**: `disable-LoopDeletionPass` (default false, cicc's) turns the pass off;
/// `loop-deletion-enable-symbolic-execution` (default true, LLVM's) enables the
/// first-iteration evaluation of case 3.
///
/// **Stats**: `NumDeleted` (dead loops), `NumNeverEntered`, `NumBackedgesBroken`,
/// `NumOutsideBlocksRemoved` (blocks outside the loop that only the folded branches
/// reached, removed as unreachable), `NumFunctionWideUpdates` (changes whose dead blocks
/// were removed by a sweep of the function, the loops re-formed), and one
/// counter per reason for keeping a loop (`NumIrreducible`, `NumNotLoopSimplifyForm`,
/// `NumHasSideEffects`, `NumNoSingleExit`, `NumValueUsedOutside`, `NumMayNotTerminate`).
///
/// Running it twice changes nothing the second time: a loop it kept is kept again for
/// the same reason.
#[derive(Default)]
pub struct LoopDeletion {
    s: Scratch,
    /// Scalar evolution of the visited loop (computed only when a count is needed).
    se: ScalarEvolution,
    /// What `se` covers for the loop being visited.
    se_scope: SeScope,
    /// Scratch of [`dead_region`].
    region: RegionScratch,
}

/// What [`LoopDeletion::se`] was computed for, on the current visit.
#[derive(Copy, Clone, PartialEq, Eq, Default)]
enum SeScope {
    /// Nothing yet.
    #[default]
    None,
    /// The loop's own blocks ([`ScalarEvolution::compute_loop_own`]): its own exits.
    Own,
    /// The loop's whole nest ([`ScalarEvolution::compute_nest`]), which answers for its
    /// own exits the same.
    Nest,
}

#[derive(Default)]
struct Scratch {
    /// The loop's blocks in reverse post-order (symbolic execution).
    blocks: Vec<Block>,
    /// Known constant values of the first iteration.
    konst: FxHashMap<Value, u64>,
    /// Per block reached on the first iteration: the known values of its parameters
    /// (`None`: two live edges disagree or one is not constant).
    incoming: FxHashMap<Block, Vec<Option<u64>>>,
    /// Terminators to fold, with the target they take.
    folds: Vec<(Inst, BlockCall)>,
    /// Reachability buffer.
    reached: Vec<bool>,
    /// Loop-local marks (live blocks, DFS visits), by block index.
    mark: Vec<u32>,
    /// The generation of `mark`'s current use.
    gen: u32,
    /// DFS stack.
    stack: Vec<(Block, usize)>,
    /// Blocks of the loop, gathered.
    list: Vec<Block>,
    /// Liveness marks of [`local_fold_outcome`].
    live: Vec<u8>,
}

impl Scratch {
    /// A fresh generation of `mark`, sized for `n` blocks.
    fn next_gen(&mut self, n: usize) -> u32 {
        if self.mark.len() < n {
            self.mark.resize(n, 0);
        }
        if self.gen == u32::MAX {
            self.mark.iter_mut().for_each(|m| *m = 0);
            self.gen = 0;
        }
        self.gen += 1;
        self.gen
    }
}

/// Why a loop is kept: the remark kind, and its counter.
#[derive(Copy, Clone)]
enum Keep {
    Irreducible,
    NotLoopSimplifyForm,
    HasSideEffects,
    NoSingleExit,
    ValueUsedOutside,
    MayNotTerminate,
}

impl Keep {
    fn kind(self) -> &'static str {
        match self {
            Keep::Irreducible => "Irreducible",
            Keep::NotLoopSimplifyForm => "NotLoopSimplifyForm",
            Keep::HasSideEffects => "HasSideEffects",
            Keep::NoSingleExit => "NoSingleExit",
            Keep::ValueUsedOutside => "ValueUsedOutside",
            Keep::MayNotTerminate => "MayNotTerminate",
        }
    }
    fn counter(self) -> &'static str {
        match self {
            Keep::Irreducible => "NumIrreducible",
            Keep::NotLoopSimplifyForm => "NumNotLoopSimplifyForm",
            Keep::HasSideEffects => "NumHasSideEffects",
            Keep::NoSingleExit => "NumNoSingleExit",
            Keep::ValueUsedOutside => "NumValueUsedOutside",
            Keep::MayNotTerminate => "NumMayNotTerminate",
        }
    }
}

impl LoopPass for LoopDeletion {
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

    fn visits_irreducible_insides(&self) -> bool {
        true
    }

    fn run_on_loop(
        &mut self,
        func: &mut Function,
        header: Block,
        cx: &mut PassContext<'_>,
        updater: &mut LoopUpdater,
    ) -> Result<PassResult, PassError> {
        // The visit computes scalar evolution in the loop pipeline's shared buffers
        // (`AnalysisCache::loop_scev`), not in function-sized tables of its own.
        core::mem::swap(&mut self.se, &mut cx.analyses.loop_scev);
        let result = self.visit(func, header, cx, updater);
        core::mem::swap(&mut self.se, &mut cx.analyses.loop_scev);
        result
    }
}

impl LoopDeletion {
    /// One visit of the loop headed by `header` ([`LoopPass::run_on_loop`]).
    fn visit(
        &mut self,
        func: &mut Function,
        header: Block,
        cx: &mut PassContext<'_>,
        updater: &mut LoopUpdater,
    ) -> Result<PassResult, PassError> {
        // Read both knobs on every visit, so that each counts as read.
        let disabled = cx.knobs.disable_loop_deletion_pass();
        let symbolic = cx.knobs.loop_deletion_enable_symbolic_execution();
        if disabled {
            return Ok(PassResult::UNCHANGED);
        }
        self.se_scope = SeScope::None;
        let err = |func: &Function, m: String| PassError(format!("{NAME}: @{}: {m}", func.name));
        // The loop forest and the CFG's edges are all this needs (the adaptor keeps
        // both); scalar evolution is computed for the loop's nest only, when a count is
        // asked for, and dominance inside the loop is decided by a walk of the loop.
        cx.analyses
            .ensure(func, Analyses::LOOPS)
            .map_err(|e| err(func, e.to_string()))?;
        if !cx.analyses.cfg_edges_valid() {
            cx.analyses
                .ensure(func, Analyses::CFG)
                .map_err(|e| err(func, e.to_string()))?;
        }
        let keep = |cx: &mut PassContext<'_>, func: &Function, k: Keep, msg: String| {
            cx.stats.add(NAME, k.counter(), 1);
            cx.remark(NAME, func, Some(header), k.kind(), msg);
            Ok(PassResult::UNCHANGED)
        };
        let li = &cx.analyses.loops;
        let cfg = &cx.analyses.cfg;
        let Some(l) = li
            .innermost_loop(header)
            .filter(|&l| li.header(l) == header)
        else {
            return keep(
                cx,
                func,
                Keep::NotLoopSimplifyForm,
                "no loop here".to_string(),
            );
        };
        if li.in_irreducible_cycle(header) {
            return keep(
                cx,
                func,
                Keep::Irreducible,
                "the loop is in an irreducible cycle".into(),
            );
        }
        // A natural loop with an irreducible cycle inside: only the cases that fold
        // constant branches (1 and 3) apply; no trip count proves that the cycle ends.
        let irreducible_inside = li.contains_irreducible(l);
        let Some(preheader) = li.preheader(l, cfg) else {
            return keep(
                cx,
                func,
                Keep::NotLoopSimplifyForm,
                "the loop has no preheader (run loop-simplify first)".into(),
            );
        };
        // 1. Never entered. What the folded guard leaves unreachable may reach past the
        // loop (its exits lose every predecessor): found by counting live edges from the
        // guard's old targets, and removed in place when it is whole outermost loops and
        // blocks in no loop ([`dead_region`]); else unreachable blocks are removed and
        // loops re-formed on the whole function.
        if let Some((term, dest)) = never_entered(func, cfg, preheader) {
            let guard = func
                .layout
                .inst_block(term)
                .expect("a terminator is placed");
            self.s.list.clear();
            self.s.list.extend_from_slice(cfg.succs(guard));
            fold_to_jump(func, term, dest);
            cx.stats.add(NAME, "NumNeverEntered", 1);
            updater.mark_loop_deleted();
            let a = &mut *cx.analyses;
            a.cfg
                .update_block(func, guard)
                .map_err(|e| err(func, e.to_string()))?;
            if let Some(dead) = dead_region(&a.cfg, &a.loops, &self.s.list, &[], &mut self.region) {
                count_outside(cx, l, preheader, &dead);
                let kept =
                    commit_dead_region(func, cx.analyses, &dead).map_err(|m| err(func, m))?;
                return Ok(PassResult::changed(kept));
            }
            cx.stats.add(NAME, "NumFunctionWideUpdates", 1);
            let removed = remove_unreachable_blocks(func, &mut self.s.reached);
            count_outside(cx, l, preheader, &removed.blocks);
            restore_forms(func, cx)?;
            return Ok(PassResult::changed(cx.analyses.valid()));
        }
        // 2. Dead.
        let dead = if irreducible_inside {
            Err((
                Keep::Irreducible,
                "the loop contains an irreducible cycle, which may not terminate".into(),
            ))
        } else {
            self.check_dead(func, l, cx)
        };
        let why_kept = match dead {
            Ok((exit, args)) => {
                let preserved = self
                    .delete_dead(func, cx, l, preheader, exit, &args)
                    .map_err(|m| err(func, m))?;
                cx.stats.add(NAME, "NumDeleted", 1);
                updater.mark_loop_deleted();
                return Ok(PassResult::changed(preserved));
            }
            Err(why) => why,
        };
        // 3. Backedge never taken.
        if self.backedge_never_taken(func, l, preheader, symbolic, irreducible_inside, cx) {
            let folds = core::mem::take(&mut self.s.folds);
            // The loop forest's record of an irreducible cycle inside `l` is not moved
            // in place: such a (rare) loop takes the function-wide path.
            let local = if irreducible_inside {
                for &(term, dest) in &folds {
                    fold_to_jump(func, term, dest);
                }
                None
            } else {
                self.break_backedge(func, cx, l, &folds)
                    .map_err(|m| err(func, m))?
            };
            self.s.folds = folds;
            cx.stats.add(NAME, "NumBackedgesBroken", 1);
            updater.mark_loop_deleted();
            if let Some(preserved) = local {
                return Ok(PassResult::changed(preserved));
            }
            cx.stats.add(NAME, "NumFunctionWideUpdates", 1);
            let removed = remove_unreachable_blocks(func, &mut self.s.reached);
            count_outside(cx, l, preheader, &removed.blocks);
            restore_forms(func, cx)?;
            return Ok(PassResult::changed(cx.analyses.valid()));
        }
        keep(cx, func, why_kept.0, why_kept.1)
    }
}

/// Count the removed blocks that were neither in `l` nor its preheader: code after the
/// loop that only the branches folded away reached (an outer loop may lose its backedge
/// with them, which can give a later run of the pass more to do).
fn count_outside(cx: &mut PassContext<'_>, l: Loop, preheader: Block, removed: &[Block]) {
    let li = &cx.analyses.loops;
    let n = removed
        .iter()
        .filter(|&&b| b != preheader && !li.contains(l, b))
        .count() as u64;
    if n > 0 {
        cx.stats.add(NAME, "NumOutsideBlocksRemoved", n);
    }
}

/// The preheader's only predecessor, when it branches on a constant that never leads to
/// the preheader: its terminator and the target it always takes.
fn never_entered(
    func: &Function,
    cfg: &gyre_analysis::Cfg,
    preheader: Block,
) -> Option<(Inst, BlockCall)> {
    let [p] = cfg.preds(preheader) else {
        return None;
    };
    let term = func.terminator(*p)?;
    let c = const_int(func, branch_condition(func, term)?)?;
    let dest = decided_target(func, term, c)?;
    (dest.block != preheader).then_some((term, dest))
}

/// Is `v` defined in a block of `l`?
fn defined_in(func: &Function, li: &LoopInfo, l: Loop, v: Value) -> bool {
    let b = match func.dfg.value_def(v) {
        ValueDef::Result(i) => func.layout.inst_block(i),
        ValueDef::Param(b, _) => Some(b),
        _ => None,
    };
    b.is_some_and(|b| li.contains(l, b))
}

/// Does `e`, an own block of `l`, dominate every latch of `l`? Asked of the dominance
/// inside `l` that scalar evolution computed for it (a path from the header leaving the
/// loop comes back through the header, so paths inside the loop are all there is), which
/// collapses subloops: O(1) per latch.
fn dominates_latches(se: &ScalarEvolution, li: &LoopInfo, l: Loop, e: Block) -> bool {
    e == li.header(l)
        || li
            .latches(l)
            .iter()
            .all(|&lt| se.scope_dominates(e, lt) == Some(true))
}

impl LoopDeletion {
    /// Compute the scalar evolution of `l`'s nest, once per visit: O(nest).
    fn nest_scev(&mut self, func: &Function, cfg: &Cfg, li: &LoopInfo, l: Loop) {
        if self.se_scope != SeScope::Nest {
            self.se.compute_nest(func, cfg, li, l);
            self.se_scope = SeScope::Nest;
        }
    }

    /// Compute the scalar evolution of `l`'s own blocks (enough for its own exits), once
    /// per visit: O(own blocks), so that visiting every level of a deep nest stays linear.
    fn own_scev(&mut self, func: &Function, cfg: &Cfg, li: &LoopInfo, l: Loop) {
        if self.se_scope == SeScope::None {
            self.se.compute_loop_own(func, cfg, li, l);
            self.se_scope = SeScope::Own;
        }
    }

    /// The own blocks of `l` and the headers of its subloops (not entered), in reverse
    /// post-order of a walk from its header that stays in `l` and does not follow edges
    /// back to the header, into `self.s.blocks`. O(own blocks).
    fn local_rpo(&mut self, func: &Function, cfg: &Cfg, li: &LoopInfo, l: Loop) {
        let _ = func;
        let header = li.header(l);
        let s = &mut self.s;
        let g = s.next_gen(cfg.num_block_slots().max(func.dfg.num_blocks()));
        s.blocks.clear();
        s.stack.clear();
        s.stack.push((header, 0));
        s.mark[header.index()] = g;
        while let Some(&mut (b, ref mut next)) = s.stack.last_mut() {
            let succs = cfg.succs(b);
            // A subloop's header is a leaf: the evaluation stops there if it is reached,
            // and its blocks are not walked (O(own blocks) per visit on a deep nest).
            let succs = if b == header || li.innermost_loop(b) == Some(l) {
                succs
            } else {
                &[]
            };
            if let Some(&t) = succs.get(*next) {
                *next += 1;
                if t != header && s.mark[t.index()] != g && li.contains(l, t) {
                    s.mark[t.index()] = g;
                    s.stack.push((t, 0));
                }
            } else {
                s.stack.pop();
                s.blocks.push(b);
            }
        }
        s.blocks.reverse();
    }

    /// Delete the dead loop `l`: the preheader jumps to `exit` with `args` (or, for a loop
    /// with no exit in a `mustprogress` function, ends in `unreachable`), the loop's
    /// blocks go, and the CFG's edges and the loop forest are updated in place, in time
    /// proportional to the loop. The forms
    /// hold as before: the exit, dedicated to `l`, now has the preheader, in `l`'s parent,
    /// as its only predecessor, and the values it receives were defined outside `l`.
    /// Returns the analyses kept.
    fn delete_dead(
        &mut self,
        func: &mut Function,
        cx: &mut PassContext<'_>,
        l: Loop,
        preheader: Block,
        exit: Option<Block>,
        args: &[Value],
    ) -> Result<Analyses, String> {
        let a = &mut *cx.analyses;
        self.s.list.clear();
        self.s.list.extend(a.loops.blocks(l));
        let blocks = &self.s.list;
        let pre_term = func
            .terminator(preheader)
            .expect("a CFG block has a terminator");
        match exit {
            Some(exit) => {
                let dest = BlockCall::new(exit, args, &mut func.dfg.value_lists);
                fold_to_jump(func, pre_term, dest);
            }
            None => func.dfg.replace_inst(
                pre_term,
                InstructionData::Nullary {
                    opcode: Opcode::Unreachable,
                },
            ),
        }
        remove_blocks(func, blocks);
        let cfg_err = |e: gyre_analysis::CfgError| e.to_string();
        a.cfg.update_block(func, preheader).map_err(cfg_err)?;
        for &b in blocks {
            a.cfg.update_block(func, b).map_err(cfg_err)?;
            a.loops.remove_block(b);
        }
        // The nest's loops, innermost first (each has no child left when removed).
        let mut nest = vec![l];
        let mut k = 0;
        while k < nest.len() {
            nest.extend_from_slice(a.loops.children(nest[k]));
            k += 1;
        }
        for &x in nest.iter().rev() {
            a.loops.remove_loop(x);
        }
        let mut kept = Analyses::CFG.union(Analyses::LOOPS);
        // The exit's arguments are now used in the preheader: mark them (the analysis is
        // an over-approximation, and the removed uses may stay marked).
        if a.nonlocal.is_valid() {
            for &v in args {
                a.nonlocal.set(v, true);
            }
            kept = kept.union(Analyses::NONLOCAL_USES);
        }
        Ok(kept)
    }

    /// After the branches `folds` of case 3 were decided, fold them and try to keep the
    /// analyses current in time proportional to the loop
    /// ([`local_fold_outcome`]: what died is inside `l`, and what is left of `l` joins
    /// its parent cleanly). Returns the analyses kept, or `None` with the folds applied
    /// and nothing else changed: the caller then removes unreachable blocks and re-forms
    /// loops on the whole function.
    fn break_backedge(
        &mut self,
        func: &mut Function,
        cx: &mut PassContext<'_>,
        l: Loop,
        folds: &[(Inst, BlockCall)],
    ) -> Result<Option<Analyses>, String> {
        let a = &mut *cx.analyses;
        let mut folded: Vec<Block> = Vec::with_capacity(folds.len());
        for &(term, dest) in folds {
            folded.push(
                func.layout
                    .inst_block(term)
                    .expect("a folded terminator is placed"),
            );
            fold_to_jump(func, term, dest);
        }
        let Some(out) = local_fold_outcome(func, &a.cfg, &a.loops, l, &mut self.s.live) else {
            return Ok(None);
        };
        if !out.latches.is_empty() {
            return Ok(None); // not expected: the folds leave no live backedge
        }
        let Some(outside) = outside_dead(func, a, &folded, &out, &mut self.region)? else {
            return Ok(None);
        };
        let kept = commit_local_fold(func, a, l, &folded, &out)?;
        if outside.is_empty() {
            return Ok(Some(kept));
        }
        let k = commit_dead_region(func, a, &outside)?;
        cx.stats
            .add(NAME, "NumOutsideBlocksRemoved", outside.len() as u64);
        Ok(Some(kept.minus(kept.minus(k))))
    }

    /// Can the loop be deleted as dead? Its exit block and the values to pass it.
    fn check_dead(
        &mut self,
        func: &Function,
        l: Loop,
        cx: &PassContext<'_>,
    ) -> Result<(Option<Block>, Vec<Value>), (Keep, String)> {
        let li = &cx.analyses.loops;
        let cfg = &cx.analyses.cfg;
        // Effects first: a loop with one is kept whatever else holds. The loop's own
        // blocks are scanned before its subloops', so that a nest with an effect at every
        // level costs each visit its own blocks only.
        let mut own = core::mem::take(&mut self.s.list);
        own.clear();
        li.own_blocks(l, &mut own);
        let nested = li.blocks(l).filter(|&b| li.innermost_loop(b) != Some(l));
        let found = own.iter().copied().chain(nested).find_map(|b| {
            func.layout
                .block_insts(b)
                .find_map(|i| {
                    let data = func.dfg.inst(i);
                    let op = data.opcode();
                    let volatile =
                        matches!(data, InstructionData::Load { flags, .. } if flags.volatile);
                    if op.has_side_effects() || op.is_convergent() || volatile {
                        Some(if volatile {
                            "a volatile load".to_string()
                        } else {
                            format!("'{op}'")
                        })
                    } else {
                        None
                    }
                })
                .map(|what| (b, what))
        });
        self.s.list = own;
        if let Some((b, what)) = found {
            return Err((
                Keep::HasSideEffects,
                format!("{b} holds {what}, which has an effect: the loop is kept"),
            ));
        }
        let exits = li.exit_edges(l, cfg);
        let Some(&(_, exit)) = exits.first() else {
            // With no exit, the loop never ends: undefined behaviour in a `mustprogress`
            // function (as it has no effect), so it is never entered there (LLVM's
            // `deleteDeadLoop` puts `unreachable` in the preheader).
            if must_progress(func, li, l) {
                return Ok((None, Vec::new()));
            }
            return Err((
                Keep::NoSingleExit,
                "the loop has no exit: it never terminates".into(),
            ));
        };
        if exits.iter().any(|&(_, e)| e != exit) {
            return Err((
                Keep::NoSingleExit,
                "the loop exits to more than one block".into(),
            ));
        }
        // The arguments every exiting edge passes to the exit.
        let mut args: Option<Vec<Value>> = None;
        let mut seen: Vec<Block> = Vec::new();
        for &(from, _) in &exits {
            if seen.contains(&from) {
                continue;
            }
            seen.push(from);
            let term = func.terminator(from).expect("a CFG block has a terminator");
            let mut bad = None;
            func.dfg.for_each_dest(term, |bc| {
                if bc.block != exit || bad.is_some() {
                    return;
                }
                let a = func.dfg.block_call_args(bc);
                if let Some(v) = a.iter().find(|&&v| defined_in(func, li, l, v)) {
                    bad = Some(format!(
                        "{v}, computed in the loop, is passed to the exit {exit} from {from}"
                    ));
                    return;
                }
                match &args {
                    None => args = Some(a.to_vec()),
                    Some(prev) if prev[..] != *a => {
                        bad = Some(format!(
                            "the exiting edges pass different values to the exit {exit}"
                        ));
                    }
                    Some(_) => {}
                }
            });
            if let Some(m) = bad {
                return Err((Keep::ValueUsedOutside, m));
            }
        }
        // Termination of every loop of the nest, with an explicit stack; in a
        // `mustprogress` function a loop without effects terminates by definition, and so
        // does a loop of the nest marked `mustprogress` (LLVM's `isLoopDead`: it needs no
        // trip count, nor do its subloops, which it could not terminate without).
        if func.must_progress {
            return Ok((Some(exit), args.unwrap_or_default()));
        }
        self.nest_scev(func, cfg, li, l);
        let se = &self.se;
        let mut stack = vec![l];
        while let Some(x) = stack.pop() {
            if func.loop_attrs(li.header(x)).must_progress {
                continue;
            }
            let c = se.loop_counts(x);
            if c.backedge_taken.exact.is_none() && c.backedge_taken.max.is_none() {
                let which = if x == l {
                    "the loop".to_string()
                } else {
                    format!("the inner loop at {}", li.header(x))
                };
                return Err((
                    Keep::MayNotTerminate,
                    format!(
                        "{which} has no computable trip count: it may not terminate, and \
                         an infinite loop is kept"
                    ),
                ));
            }
            stack.extend_from_slice(li.children(x));
        }
        Ok((Some(exit), args.unwrap_or_default()))
    }

    /// Is the backedge of `l` never taken? If so, `self.s.folds` holds the branches to
    /// fold so that it is gone.
    fn backedge_never_taken(
        &mut self,
        func: &Function,
        l: Loop,
        preheader: Block,
        symbolic: bool,
        irreducible_inside: bool,
        cx: &PassContext<'_>,
    ) -> bool {
        let li = &cx.analyses.loops;
        let cfg = &cx.analyses.cfg;
        self.s.folds.clear();
        if irreducible_inside {
            // Scalar evolution covers no loop with an irreducible cycle inside.
            return symbolic && self.first_iteration_exits(func, l, li, cfg, preheader);
        }
        self.own_scev(func, cfg, li, l);
        // Scalar evolution: an exiting block that dominates every latch and exits on its
        // first visit.
        for k in 0..self.se.loop_counts(l).exits.len() {
            let (e, count) = &self.se.loop_counts(l).exits[k];
            let e = *e;
            let zero = count.exact.is_some_and(|s| self.se.as_const(s) == Some(0));
            // An exiting block of a subloop may exit after some of the subloop's
            // iterations, still on the first iteration of `l`: only `l`'s own blocks are
            // known to exit on their first visit.
            if !zero || li.innermost_loop(e) != Some(l) || !dominates_latches(&self.se, li, l, e) {
                continue;
            }
            let Some(term) = func.terminator(e) else {
                continue;
            };
            let mut out: Option<BlockCall> = None;
            let mut n_out = 0;
            func.dfg.for_each_dest(term, |bc| {
                if !li.contains(l, bc.block) {
                    n_out += 1;
                    out = Some(*bc);
                }
            });
            // A `br_table` with several exits is left to the symbolic evaluation.
            if let (1, Some(dest)) = (n_out, out) {
                if matches!(func.dfg.inst(term), InstructionData::Brif { .. }) {
                    self.s.folds.push((term, dest));
                    return true;
                }
            }
        }
        symbolic && self.first_iteration_exits(func, l, li, cfg, preheader)
    }

    /// LLVM's `canProveExitOnFirstIteration`: walk the loop's blocks in reverse
    /// post-order from the header, following only the edges the first iteration can take
    /// given the constants the preheader passes; `true` if no backedge is live.
    fn first_iteration_exits(
        &mut self,
        func: &Function,
        l: Loop,
        li: &LoopInfo,
        cfg: &gyre_analysis::Cfg,
        preheader: Block,
    ) -> bool {
        let header = li.header(l);
        self.local_rpo(func, cfg, li, l);
        let s = &mut self.s;
        s.konst.clear();
        s.incoming.clear();
        s.folds.clear();
        let Some(pt) = func.terminator(preheader) else {
            return false;
        };
        let mut entry: Vec<Option<u64>> = Vec::new();
        func.dfg.for_each_dest(pt, |bc| {
            if bc.block == header {
                entry = func
                    .dfg
                    .block_call_args(bc)
                    .iter()
                    .map(|&a| const_int(func, a))
                    .collect();
            }
        });
        s.incoming.insert(header, entry);
        // Blocks whose turn has come carry the mark `done`.
        let done = s.next_gen(func.dfg.num_blocks());
        for k in 0..s.blocks.len() {
            let b = s.blocks[k];
            s.mark[b.index()] = done;
            let Some(known) = s.incoming.get(&b) else {
                continue; // not reached on the first iteration
            };
            if b != header && li.innermost_loop(b) != Some(l) {
                // An inner loop: its header would need its own backedge's values.
                return false;
            }
            for (&p, c) in func.dfg.block_params(b).iter().zip(known.clone()) {
                if let Some(c) = c {
                    s.konst.insert(p, c);
                }
            }
            let mut term = None;
            for i in func.layout.block_insts(b) {
                if func.dfg.inst(i).opcode().is_terminator() {
                    term = Some(i);
                    break;
                }
                let konst = &s.konst;
                let known = |v: Value| konst.get(&v).copied().or_else(|| const_int(func, v));
                if let (Some(r), Some(c)) = (func.dfg.inst_result(i), eval_int(func, i, known)) {
                    s.konst.insert(r, c);
                }
            }
            let Some(term) = term else {
                return false;
            };
            let cond = branch_condition(func, term)
                .and_then(|c| s.konst.get(&c).copied().or_else(|| const_int(func, c)));
            let decided = cond.and_then(|c| decided_target(func, term, c));
            let mut live: Vec<(Block, Vec<Option<u64>>)> = Vec::new();
            let konst = &s.konst;
            let mut note = |bc: &BlockCall| {
                let vals = func
                    .dfg
                    .block_call_args(bc)
                    .iter()
                    .map(|&a| konst.get(&a).copied().or_else(|| const_int(func, a)))
                    .collect();
                live.push((bc.block, vals));
            };
            match &decided {
                Some(bc) => note(bc),
                None => func.dfg.for_each_dest(term, |bc| note(bc)),
            }
            for (t, vals) in live {
                if t == header {
                    return false;
                }
                if !li.contains(l, t) {
                    continue;
                }
                if s.mark[t.index()] == done {
                    // An edge back to a block already evaluated: only inside an
                    // irreducible cycle (a natural loop's only retreating edges go to its
                    // header). Sound only if the block was evaluated and the edge brings no
                    // value it did not assume.
                    let Some(prev) = s.incoming.get(&t) else {
                        return false;
                    };
                    if prev.iter().zip(&vals).any(|(p, v)| p.is_some() && p != v) {
                        return false;
                    }
                    continue;
                }
                s.incoming
                    .entry(t)
                    .and_modify(|prev| {
                        for (p, v) in prev.iter_mut().zip(&vals) {
                            if *p != *v {
                                *p = None;
                            }
                        }
                    })
                    .or_insert(vals);
            }
            if let Some(bc) = decided {
                if func.dfg.inst(term).opcode() != Opcode::Jump {
                    s.folds.push((term, bc));
                }
            }
        }
        // No live backedge: some live branch was decided away from it (a loop whose
        // every branch is undecided always has a live path to its latch).
        !s.folds.is_empty()
    }
}

/// Must `l` terminate or have an effect? LLVM's `Loop::isMustProgress`: the function is
/// `mustprogress`, or the loop carries `llvm.loop.mustprogress` (a header attribute here).
fn must_progress(func: &Function, li: &LoopInfo, l: Loop) -> bool {
    func.must_progress || func.loop_attrs(li.header(l)).must_progress
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Knobs, Options, PassManager, Report};

    fn run(src: &str, pipeline: &str) -> (String, Report) {
        let mut m = gyre_ir::parse_module(src).expect("parses");
        let options = Options {
            verify_each: true,
            ..Options::default()
        };
        let mut pm = PassManager::from_pipeline(pipeline, Knobs::default(), options).unwrap();
        let r = pm.run_module(&mut m).expect("runs");
        let mut out = String::new();
        gyre_ir::write_module(&mut out, &m).unwrap();
        (out, r)
    }

    #[test]
    fn deletes_a_dead_counted_loop_and_keeps_one_with_a_store() {
        let dead = "kernel @k(i32) {
block0(v0: i32):
    v1 = iconst.i32 0
    jump block1(v1)
block1(v2: i32):
    v3 = icmp slt v2, v0
    brif v3, block2, block3
block2:
    v4 = iconst.i32 1
    v5 = iadd v2, v4
    jump block1(v5)
block3:
    return
}
";
        let (out, report) = run(dead, "loop(loop-deletion)");
        assert_eq!(report.stats.get(NAME, "NumDeleted"), 1, "{out}");
        assert!(!out.contains("icmp"), "{out}");
        let kept = dead.replace(
            "    v5 = iadd v2, v4\n",
            "    v5 = iadd v2, v4\n    v6 = global_addr @g\n    store v5, v6\n",
        );
        let kept = format!("global @g: global [1 x i32] align 4\n\n{kept}");
        let (out, report) = run(&kept, "loop(loop-deletion)");
        assert_eq!(report.stats.get(NAME, "NumDeleted"), 0, "{out}");
        assert_eq!(report.stats.get(NAME, "NumHasSideEffects"), 1, "{out}");
    }
}
