//! `loop-unroll`: full and partial unrolling of innermost loops with a constant trip count,
//! runtime unrolling of those whose trip count is known only at run time (LLVM's
//! `LoopUnrollPass` / `LoopFullUnrollPass`, `LoopUnroll.cpp`, `LoopUnrollRuntime.cpp`).
//!
//! ```text
//!   P: jump H(a)                          P: jump H
//!   H(i): ..; brif c, B, X(..)            H: <iteration 0, i := a>       brif -> B
//!   B: ..; jump H(i+1)            =>      B: jump H1
//!   X(..): ..                             H1: <iteration 1, i := a+1>    brif -> B1
//!                                         ...
//!                                         Hn: <last iteration>           jump X(..)
//! ```
//!
//! The loop's blocks are copied once per iteration (the originals are iteration 0); the
//! latch of each copy branches to the next copy's header, the header's parameters are
//! replaced by the values that entered it (the preheader's arguments, then the previous
//! copy's latch arguments), and every exit whose count scalar evolution knows as a
//! constant `c` is folded in each copy: it stays in iterations before `c` and leaves in
//! iteration `c`. The copies' blocks that the folds leave unreachable (the rest of the
//! last iteration, the back edge of the last latch) are removed. What is left has no back
//! edge: the loop is gone and its blocks belong to the loop around it.
//!
//! **Partial unrolling** (a factor `f` dividing the trip count, so no remainder loop) makes
//! `f` copies the same way, but the last copy's latch goes back to the first copy's header,
//! which keeps its parameters: the loop stays, each of its iterations running `f` of the
//! old ones. An exit with a constant count `c` can only leave in the copy running
//! iteration `c`, copy `c mod f`: it is folded to "stay" in the others.
//!
//! **Runtime unrolling** (no exit with a constant count; the latch the only exiting block;
//! a loop-invariant backedge-taken count): LLVM's epilogue scheme. The preheader computes
//! the trip count `tc`, `xtra = tc & (f - 1)` and branches to the remainder when
//! `tc - 1 < f - 1`; otherwise the loop, unrolled by `f` like a partial unrolling with
//! only the last copy's latch testing (a new counter from `tc - xtra` down by `f`), runs
//! first, and its new exit block enters the remainder (a clone of the original loop) when
//! `xtra != 0`. See [`LoopUnroll`] and docs/passes.md.
//!
//! **Values.** In LCSSA form a value of the loop reaches code after it only through an
//! exit block's parameters, that is through branch arguments inside the loop, which are
//! copied and remapped with the rest: no use outside the copies needs rewriting.
//!
//! **Cost.** Per unrolled loop: the unrolled code (at most `unroll-threshold`
//! instructions, or the per-function growth budget) plus the loop's own size (scalar
//! evolution of the loop, its size). The CFG's edges and the loop forest are updated in
//! place ([`gyre_analysis::Cfg::update_block`], [`LoopInfo::remove_loop`],
//! [`LoopInfo::add_block`]); the dominator tree is left to be recomputed by whoever needs
//! it next. A loop that is left alone costs its size and its scalar evolution.
//!
//! [`LoopInfo::remove_loop`]: gyre_analysis::LoopInfo::remove_loop
//! [`LoopInfo::add_block`]: gyre_analysis::LoopInfo::add_block

use crate::analyses::Analyses;
use crate::loop_cleanup::{
    const_int, eval_int, fold_to_jump, remove_blocks, remove_unreachable_blocks, restore_forms,
    sext,
};
use crate::manager::{Forms, LoopPass, LoopUpdater, PassContext, PassError, PassResult};
use crate::utils::clone::{clone_blocks, remap_instructions, ValueMap};
use crate::utils::split::{split_edge, Place};
use gyre_analysis::scev::{def_block, edge_args};
use gyre_analysis::{Loop, ScalarEvolution, Scev};
use gyre_ir::builder::{FuncCursor, InstBuilder};
use gyre_ir::{
    Block, BlockCall, EntityRef, Function, Inst, InstructionData, IntCC, IntFlags, LoopAttrs,
    Opcode, UnrollHint, Value, ValueDef,
};
use rustc_hash::FxHashMap;

const NAME: &str = "loop-unroll";

/// LLVM's `BEInsns`: the compare and branch of the back edge, which unrolling removes from
/// every copy but one (`getUnrolledLoopSize`).
const BE_INSNS: u64 = 2;

/// The size limit for a loop whose source asks for unrolling (`unroll_full`,
/// `unroll_enable`, `unroll_count`): LLVM's `-pragma-unroll-threshold` default.
const PRAGMA_THRESHOLD: u32 = 16 * 1024;

/// Instructions full unrolling may add to one function, at least: the budget is this or
/// four times the function's size when the adaptor starts on it, whichever is larger, so
/// that a function with thousands of small constant loops grows linearly, by a bounded
/// factor.
const MIN_GROWTH_BUDGET: u64 = 1 << 16;

/// Blocks of loop nests runtime unrolling may rebuild in one function, at least: the
/// budget is this or 4 times the function's blocks. Runtime-unrolling a loop inside
/// another rebuilds the forest of the outermost loop around it (to add the remainder
/// loop), so thousands of sibling loops in one big nest would cost the nest's size each
/// (quadratic: 8.8 s for 3,000 siblings in one loop, debug build; 0.5 s of CPU with
/// this budget, 0.2 s without runtime unrolling); past the budget such loops are left
/// alone (`GrowthBudgetSpent`).
const MIN_REBUILD_BUDGET: u64 = 1 << 18;

/// The `loop-unroll` loop pass (full unrolling; partial unrolling by a divisor of the trip
/// count when allowed; runtime unrolling with a remainder loop when the trip count is not
/// a constant).
///
/// **Requires**: the loop innermost, in loop-simplify form (a preheader ending in a jump,
/// one latch, dedicated exits) and in LCSSA form, which the loop adaptor establishes
/// before any loop pass runs; at least one exit with a constant count from scalar
/// evolution (computed for the loop alone, [`ScalarEvolution::compute_nest`]): the
/// smallest bounds the trip count (LLVM 14's rule), exits without one stay conditional in
/// every copy. An exit of the header or latch without one (a counter that doubles or
/// halves) gets one from `exhaustive_count` (LLVM's `computeExitCountExhaustively`):
/// the loop's integer arithmetic run on constants, at most 100 iterations. Run after
/// `loop-rotate` and `indvars`, as `-O` does: a
/// rotated, canonical induction variable is what gives most loops a count. Runtime
/// unrolling needs instead the latch as the only exiting block (a `brif` to the header
/// and the exit) and a loop-invariant backedge-taken count the preheader can compute.
///
/// **Establishes**: fully unrolled, the loop is gone (reported with
/// [`LoopUpdater::mark_loop_deleted`]);
/// its copies are straight-line code in the loop around it, which keeps loop-simplify and
/// LCSSA form (its preheader, latches and exits are untouched; the exits of the unrolled
/// loop become ordinary blocks of it, their parameters fed from inside it). Runtime
/// unrolled, the loop stays (a new preheader, a counter parameter, a new dedicated exit)
/// and its remainder is a new loop ([`LoopUpdater::add_new_loop`], marked
/// `unroll_disable`), both in loop-simplify and LCSSA form.
///
/// **Preserves**: the CFG's edges (its order goes stale) and the loop forest, updated in
/// place, and `nonlocal-uses` (kept sound: the copies' uses are marked); not the
/// dominator tree, post-dominator tree or uniformity. Runtime unrolling rebuilds the
/// forest of the outermost loop around the unrolled one
/// ([`gyre_analysis::LoopInfo::replace_nest`]) to add the remainder loop.
/// When the folds leave an exit block with no predecessor (an exit that is never taken),
/// unreachable code is removed from the whole function and the forms re-established
/// (`loop-simplify`, `lcssa`), keeping what those computed; so are they when a live copy
/// reaches only exits outside the loop around (its exit folded to leave several loops),
/// which takes that copy out of the outer loop.
///
/// **Gives up** (a remark and a counter each): a loop with a subloop (`NotInnermost`); in
/// or around an irreducible cycle (`Irreducible`); not in loop-simplify form
/// (`NotLoopSimplifyForm`); no constant trip count and no runtime unrolling possible
/// (`UnknownTripCount`: `unroll-runtime` off, the latch not exiting, or no invariant
/// count; `MultipleExits`; `Convergent`; `ExpensiveTripCount`; `SmallMaxTripCount`: at
/// most 7 iterations; `NeedsRemainder`: a requested count that is not a power of two); a trip count over `unroll-full-max-count`
/// (`TripCountTooLarge`) or an unrolled size of `unroll-threshold` or more (`TooLarge`),
/// when partial unrolling is not allowed or no factor fits; `unroll-count` set below the
/// trip count and not dividing it (`NeedsRemainder`: no remainder loops); the function's
/// growth budget spent (`GrowthBudgetSpent`); the loop marked `unroll_disable`
/// (`Disabled`). `disable-loop-unrolling` turns the pass off silently (LLVM's pipeline
/// then does not add it).
///
/// **Source hints** (the header's [`gyre_ir::LoopAttrs`], LLVM's `llvm.loop.unroll.*`):
/// `unroll_disable` leaves the loop alone; `unroll_full`, `unroll_enable` and
/// `unroll_count=N` raise the size limit to LLVM's pragma threshold, and `N` is the factor
/// as the `unroll-count` knob's is (the knob wins when set); `unroll_enable` and
/// `unroll_count=N` also turn runtime unrolling on (LLVM's
/// `UP.Runtime |= PragmaEnableUnroll || PragmaCount > 0`).
///
/// **GPU rule**: full unrolling, and partial unrolling by a divisor of the trip count, are
/// legal for loops with convergent operations (barriers, shuffles, votes, calls): every
/// copy runs under the control dependence the original iteration had, and no remainder
/// loop is added (LLVM's rule). Runtime unrolling is not done on loops with convergent
/// operations (the remainder would run them under a new condition) unless cicc's
/// `unroll-runtime-convergent` is set.
///
/// **Size** (LLVM's `getUnrolledLoopSize`): the loop's size counts every instruction
/// except constants (not instructions in LLVM IR) and block parameters (phis, free), the
/// terminators included; the unrolled size is `(size - 2) * trip_count + 2`, the compare
/// and branch of the back edge counted once.
///
/// **Knobs**: `unroll-threshold` (default 150, LLVM's `-O2` threshold), `unroll-full-max-count`
/// (default unlimited), `unroll-count` (default 0: not set; below the trip count, the
/// partial factor), `unroll-allow-partial` (default false), `unroll-partial-threshold`
/// (default 37, NVPTX's `Threshold / 4`), `unroll-max-count` (default unlimited: the
/// largest factor the heuristic picks), `disable-loop-unrolling`, `unroll-runtime`
/// (default true, NVPTX's `UP.Runtime`), `unroll-runtime-convergent` (default false).
///
/// **Stats**: `NumFullyUnrolled`, `NumPartiallyUnrolled`, `NumRuntimeUnrolled`,
/// `NumUnrolledInstrs` (instructions of the unrolled code), `NumExitsFolded`,
/// `NumBlocksMerged`, `NumConstantsFolded` (instructions of the copies whose operands
/// became constants, folded as LLVM's `simplifyLoopAfterUnroll` does), and one counter
/// per reason for leaving a loop alone (`NumNotInnermost`, `NumIrreducible`, `NumNotLoopSimplifyForm`, `NumUnknownTripCount`,
/// `NumTripCountTooLarge`, `NumTooLarge`, `NumNeedsRemainder`, `NumGrowthBudgetSpent`,
/// `NumDisabled`, `NumMultipleExits`, `NumConvergent`, `NumExpensiveTripCount`,
/// `NumSmallMaxTripCount`).
#[derive(Default)]
pub struct LoopUnroll {
    se: ScalarEvolution,
    /// Instructions this pass may still add to the current function.
    budget: u64,
    /// Blocks of enclosing loop nests that runtime unrolling may still rebuild in the
    /// current function (see [`MIN_REBUILD_BUDGET`]).
    rebuild_budget: u64,
    s: Scratch,
}

/// Buffers reused across loops.
#[derive(Default)]
struct Scratch {
    /// The loop's blocks, header first (the loop forest's order).
    body: Vec<Block>,
    /// Every copy's blocks, copy after copy: copy `k` of `body[i]` is at
    /// `k * body.len() + i` (copy 0 is the loop itself).
    copies: Vec<Block>,
    /// Clone map of one copy.
    map: ValueMap,
    /// Header parameter of each copy -> the value that entered it.
    subst: ValueMap,
    /// Exits with a constant count: (index in `body`, count, index of the staying target
    /// in the `brif`, `None` when both targets leave).
    exits: Vec<(usize, u64, Option<usize>)>,
    /// Region marks (generation per block index) and reached marks.
    mark: Vec<u32>,
    reached: Vec<u32>,
    gen: u32,
    stack: Vec<Block>,
    dead: Vec<Block>,
    exit_blocks: Vec<Block>,
    args: Vec<gyre_ir::Value>,
    bools: Vec<bool>,
    /// The copies' blocks still reachable, in copy order.
    live: Vec<Block>,
    /// Edges into each live block from live blocks (by block index), and the last one's
    /// source.
    npred: Vec<(u32, Block)>,
    /// Use counts of the values the live blocks use.
    uses: FxHashMap<Value, u32>,
    /// Values of one iteration, for [`exhaustive_count`].
    values: FxHashMap<Value, u64>,
    insts: Vec<Inst>,
}

impl Scratch {
    fn next_gen(&mut self, n: usize) -> u32 {
        if self.mark.len() < n {
            self.mark.resize(n, 0);
            self.reached.resize(n, 0);
        }
        if self.gen == u32::MAX {
            self.mark.iter_mut().for_each(|m| *m = 0);
            self.reached.iter_mut().for_each(|m| *m = 0);
            self.gen = 0;
        }
        self.gen += 1;
        self.gen
    }
}

/// Why a loop is left alone: the remark kind, and its counter.
#[derive(Copy, Clone)]
enum Skip {
    NotInnermost,
    Irreducible,
    NotLoopSimplifyForm,
    UnknownTripCount,
    TripCountTooLarge,
    TooLarge,
    NeedsRemainder,
    GrowthBudgetSpent,
    Disabled,
    MultipleExits,
    Convergent,
    ExpensiveTripCount,
    SmallMaxTripCount,
}

impl Skip {
    fn kind(self) -> &'static str {
        match self {
            Skip::NotInnermost => "NotInnermost",
            Skip::Irreducible => "Irreducible",
            Skip::NotLoopSimplifyForm => "NotLoopSimplifyForm",
            Skip::UnknownTripCount => "UnknownTripCount",
            Skip::TripCountTooLarge => "TripCountTooLarge",
            Skip::TooLarge => "TooLarge",
            Skip::NeedsRemainder => "NeedsRemainder",
            Skip::GrowthBudgetSpent => "GrowthBudgetSpent",
            Skip::Disabled => "Disabled",
            Skip::MultipleExits => "MultipleExits",
            Skip::Convergent => "Convergent",
            Skip::ExpensiveTripCount => "ExpensiveTripCount",
            Skip::SmallMaxTripCount => "SmallMaxTripCount",
        }
    }
    fn counter(self) -> &'static str {
        match self {
            Skip::NotInnermost => "NumNotInnermost",
            Skip::Irreducible => "NumIrreducible",
            Skip::NotLoopSimplifyForm => "NumNotLoopSimplifyForm",
            Skip::UnknownTripCount => "NumUnknownTripCount",
            Skip::TripCountTooLarge => "NumTripCountTooLarge",
            Skip::TooLarge => "NumTooLarge",
            Skip::NeedsRemainder => "NumNeedsRemainder",
            Skip::GrowthBudgetSpent => "NumGrowthBudgetSpent",
            Skip::Disabled => "NumDisabled",
            Skip::MultipleExits => "NumMultipleExits",
            Skip::Convergent => "NumConvergent",
            Skip::ExpensiveTripCount => "NumExpensiveTripCount",
            Skip::SmallMaxTripCount => "NumSmallMaxTripCount",
        }
    }
}

/// The knobs' limits, read once per loop.
struct Limits {
    threshold: u32,
    full_max_count: u32,
    user_count: u32,
    allow_partial: bool,
    partial_threshold: u32,
    max_count: u32,
    /// Runtime unrolling allowed (`unroll-runtime`, or asked for by the source).
    runtime: bool,
    runtime_convergent: bool,
    /// The count was asked for (`unroll_count=N` or the `unroll-count` knob): LLVM's
    /// `UP.Force`, which waives the small-bound and expensive-trip-count rules.
    forced: bool,
}

/// What runtime unrolling needs besides [`Plan`]'s fields.
#[derive(Copy, Clone)]
struct RuntimePlan {
    /// The trip count (backedge-taken count + 1, wrapping to 0 for 2^bits iterations).
    tc: Scev,
    /// Index of the header's edge in the latch's `brif` (the other one leaves).
    stay: usize,
    /// The exit block the latch leaves to.
    exit: Block,
    /// The count was asked for: the unrolled loop is marked `unroll_disable` (LLVM's
    /// `setLoopAlreadyUnrolled` when the count is set explicitly).
    forced: bool,
}

/// Where [`LoopUnroll::check`] found the loop, for [`LoopUnroll::check_runtime`].
struct RuntimeAt {
    l: Loop,
    preheader: Block,
    latch: Block,
    header_at: usize,
    latch_at: usize,
    size: u64,
}

/// LLVM's `DefaultUnrollRuntimeCount`: the first runtime unrolling count tried, halved
/// until the unrolled size fits `unroll-partial-threshold`.
const DEFAULT_RUNTIME_COUNT: u64 = 8;

/// LLVM's `-unroll-max-upperbound` default: a loop known to run fewer iterations than
/// this is not runtime-unrolled unless a count was asked for (the remainder would run
/// most of them).
const MAX_UPPER_BOUND: u64 = 8;

/// What the checks found about a loop to unroll fully.
struct Plan {
    l: Loop,
    preheader: Block,
    /// Index of the header and of the latch in `Scratch::body`.
    header_at: usize,
    latch_at: usize,
    /// The number of iterations (backedge-taken count + 1).
    trip_count: u64,
    /// The number of copies: the trip count (full unrolling) or a divisor of it.
    factor: u64,
    /// The unrolled size estimate.
    unrolled_size: u64,
    /// The loop's size.
    size: u64,
    /// Set when the trip count is known only at run time (`factor` copies and a
    /// remainder loop).
    runtime: Option<RuntimePlan>,
}

/// The size of a function as the growth budget counts it.
fn function_size(func: &Function) -> u64 {
    func.layout
        .blocks()
        .map(|b| func.layout.block_insts(b).count() as u64)
        .sum()
}

impl LoopPass for LoopUnroll {
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

    fn begin_function(&mut self, func: &Function) {
        self.budget = (4 * function_size(func)).max(MIN_GROWTH_BUDGET);
        let blocks = func.layout.blocks().count() as u64;
        self.rebuild_budget = (4 * blocks).max(MIN_REBUILD_BUDGET);
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

impl LoopUnroll {
    /// One visit of the loop headed by `header` ([`LoopPass::run_on_loop`]).
    fn visit(
        &mut self,
        func: &mut Function,
        header: Block,
        cx: &mut PassContext<'_>,
        updater: &mut LoopUpdater,
    ) -> Result<PassResult, PassError> {
        let err = |func: &Function, m: String| PassError(format!("{NAME}: @{}: {m}", func.name));
        if cx.knobs.disable_loop_unrolling() {
            return Ok(PassResult::UNCHANGED);
        }
        cx.analyses
            .ensure(func, Analyses::LOOPS)
            .map_err(|e| err(func, e.to_string()))?;
        let mut limits = Limits {
            threshold: cx.knobs.unroll_threshold(),
            full_max_count: cx.knobs.unroll_full_max_count(),
            user_count: cx.knobs.unroll_count(),
            allow_partial: cx.knobs.unroll_allow_partial(),
            partial_threshold: cx.knobs.unroll_partial_threshold(),
            max_count: cx.knobs.unroll_max_count(),
            runtime: cx.knobs.unroll_runtime(),
            runtime_convergent: cx.knobs.unroll_runtime_convergent(),
            forced: false,
        };
        limits.forced = limits.user_count != 0;
        // The source's request (`#pragma unroll`, LLVM's `llvm.loop.unroll.*`), as
        // LLVM's `computeUnrollCount` reads it: `disable` wins; a count or `full` or
        // `enable` raises the size limit to `PRAGMA_THRESHOLD`. The `unroll-count` knob
        // (LLVM's `-unroll-count`) still overrides a pragma count.
        match func.loop_attrs(header).unroll {
            UnrollHint::Default => {}
            UnrollHint::Disable => {
                cx.stats.add(NAME, Skip::Disabled.counter(), 1);
                cx.remark(
                    NAME,
                    func,
                    Some(header),
                    Skip::Disabled.kind(),
                    "the loop is marked unroll_disable (llvm.loop.unroll.disable)",
                );
                return Ok(PassResult::UNCHANGED);
            }
            UnrollHint::Full => {
                limits.threshold = limits.threshold.max(PRAGMA_THRESHOLD);
            }
            // LLVM's `UP.Runtime |= PragmaEnableUnroll || PragmaCount > 0`.
            UnrollHint::Enable => {
                limits.threshold = limits.threshold.max(PRAGMA_THRESHOLD);
                limits.runtime = true;
            }
            UnrollHint::Count(n) => {
                limits.threshold = limits.threshold.max(PRAGMA_THRESHOLD);
                limits.runtime = true;
                limits.forced = true;
                if limits.user_count == 0 {
                    limits.user_count = n;
                }
            }
        }
        let plan = match self.check(func, header, cx, &limits) {
            Ok(p) => p,
            Err((skip, msg)) => {
                cx.stats.add(NAME, skip.counter(), 1);
                cx.remark(NAME, func, Some(header), skip.kind(), msg);
                return Ok(PassResult::UNCHANGED);
            }
        };
        self.budget = self
            .budget
            .saturating_sub(plan.unrolled_size.saturating_sub(plan.size));
        if plan.runtime.is_some() {
            let preserved = self
                .unroll_runtime(func, &plan, cx, updater)
                .map_err(|m| err(func, m))?;
            cx.stats.add(NAME, "NumRuntimeUnrolled", 1);
            cx.stats.add(NAME, "NumUnrolledInstrs", plan.unrolled_size);
            return Ok(PassResult::changed(preserved));
        }
        let preserved = self.unroll(func, &plan, cx).map_err(|m| err(func, m))?;
        if plan.factor == plan.trip_count {
            updater.mark_loop_deleted();
            cx.stats.add(NAME, "NumFullyUnrolled", 1);
        } else {
            cx.stats.add(NAME, "NumPartiallyUnrolled", 1);
        }
        cx.stats.add(NAME, "NumUnrolledInstrs", plan.unrolled_size);
        Ok(PassResult::changed(preserved))
    }
}

impl LoopUnroll {
    /// Decide whether the loop at `header` can and should be fully unrolled; fills
    /// `self.s.body` and `self.s.exits`.
    fn check(
        &mut self,
        func: &Function,
        header: Block,
        cx: &PassContext<'_>,
        limits: &Limits,
    ) -> Result<Plan, (Skip, String)> {
        let li = &cx.analyses.loops;
        let cfg = &cx.analyses.cfg;
        let l = li
            .innermost_loop(header)
            .filter(|&l| li.header(l) == header)
            .ok_or((Skip::NotLoopSimplifyForm, "no loop here".to_string()))?;
        if li.contains_irreducible(l) || li.in_irreducible_cycle(header) {
            return Err((
                Skip::Irreducible,
                "the loop is in or around an irreducible cycle".into(),
            ));
        }
        if !li.children(l).is_empty() {
            return Err((
                Skip::NotInnermost,
                "the loop has a subloop; only innermost loops are unrolled".into(),
            ));
        }
        let not_simplified = |what: &str| {
            Err((
                Skip::NotLoopSimplifyForm,
                format!("the loop {what} (run loop-simplify first)"),
            ))
        };
        let Some(latch) = li.latch(l) else {
            return not_simplified("has no single latch");
        };
        let Some(preheader) = li.preheader(l, cfg) else {
            return not_simplified("has no preheader");
        };
        if !li.has_dedicated_exits(l, cfg) || li.num_back_edges(l, cfg) != 1 {
            return not_simplified("has exits shared with other code or several back edges");
        }
        let pre_term = func
            .terminator(preheader)
            .expect("a CFG block has a terminator");
        if !matches!(func.dfg.inst(pre_term), InstructionData::Jump { .. }) {
            return not_simplified("has a preheader that does not end in a jump");
        }

        // Size first: it is cheaper than scalar evolution and rules out most big loops.
        let s = &mut self.s;
        s.body.clear();
        s.body.extend(li.blocks(l));
        let mut size = 0u64;
        for &b in &s.body {
            for i in func.layout.block_insts(b) {
                if !matches!(func.dfg.inst(i).opcode(), Opcode::Iconst | Opcode::Fconst) {
                    size += 1;
                }
            }
        }
        let header_at = s.body.iter().position(|&b| b == header).expect("header");
        let latch_at = s.body.iter().position(|&b| b == latch).expect("latch");

        self.se.compute_nest(func, cfg, li, l);
        let se = &self.se;
        // The exits (LLVM's `tryToUnrollLoop`): the smallest constant count of any exit
        // bounds the trip count, and unrolling by it removes that exit's branches; exits
        // without a constant count stay conditional in every copy. Scalar evolution gives
        // counts only to exits that dominate the latch, so the smallest one leaves in the
        // last iteration and the last copy's back edge is dead. An exit of the header or
        // the latch whose condition compares constants (what unswitching leaves) gets a
        // count here when scalar evolution has none: 0 if it leaves, never if it stays.
        // A value is known when it is a constant, has a constant evolution, or is the
        // parameter of a block with one predecessor passing a known value (a few steps).
        let known = |mut v: Value| -> Option<u64> {
            for _ in 0..8 {
                if let Some(c) =
                    const_int(func, v).or_else(|| se.value(v).and_then(|x| se.as_const(x)))
                {
                    return Some(c);
                }
                let ValueDef::Param(b, i) = func.dfg.value_def(v) else {
                    return None;
                };
                let &[p] = cfg.preds(b) else {
                    return None;
                };
                v = *edge_args(func, p, b)?.get(i as usize)?;
            }
            None
        };
        s.exits.clear();
        let mut btc: Option<u64> = None;
        for &(b, ref ec) in &se.loop_counts(l).exits {
            let term = func.terminator(b).expect("a CFG block has a terminator");
            let InstructionData::Brif { arg, blocks } = *func.dfg.inst(term) else {
                continue;
            };
            let stay = match (
                li.contains(l, blocks[0].block),
                li.contains(l, blocks[1].block),
            ) {
                (true, false) => Some(0),
                (false, true) => Some(1),
                (false, false) => None,
                (true, true) => continue,
            };
            let c = match ec.exact.and_then(|c| se.as_const(c)) {
                Some(c) => c,
                None if b == header || b == latch => {
                    let ValueDef::Result(ci) = func.dfg.value_def(arg) else {
                        continue;
                    };
                    match (eval_int(func, ci, known), stay) {
                        (Some(v), Some(st)) if usize::from(v & 1 == 0) == st => u64::MAX,
                        (Some(_), _) => 0,
                        (None, Some(st)) if size <= u64::from(limits.threshold) => {
                            let at = (header, latch, preheader);
                            match exhaustive_count(func, cfg, &s.body, &mut s.values, at, arg, st) {
                                Some(c) => c,
                                None => continue,
                            }
                        }
                        (None, _) => continue,
                    }
                }
                None => continue,
            };
            if c != u64::MAX {
                btc = Some(btc.map_or(c, |m| m.min(c)));
            }
            let at = s.body.iter().position(|&x| x == b).expect("exiting block");
            s.exits.push((at, c, stay));
        }
        let Some(btc) = btc else {
            let at = RuntimeAt {
                l,
                preheader,
                latch,
                header_at,
                latch_at,
                size,
            };
            return self.check_runtime(func, cx, limits, at);
        };
        if btc == u64::MAX {
            return Err((
                Skip::TripCountTooLarge,
                "the trip count 2^64 is over unroll-full-max-count".into(),
            ));
        }
        let trip_count = btc + 1;
        let per_iter = size.max(BE_INSNS + 1) - BE_INSNS;
        let unrolled = |f: u64| per_iter.saturating_mul(f).saturating_add(BE_INSNS);
        let user = u64::from(limits.user_count);
        let threshold = u64::from(limits.threshold);
        // Full unrolling first, then partial (LLVM's `computeUnrollCount` order).
        let full_no = if user != 0 && user < trip_count {
            Some((
                Skip::TooLarge,
                format!(
                    "unroll-count={user} asks for fewer copies than the {trip_count} iterations"
                ),
            ))
        } else if btc >= u64::from(limits.full_max_count) {
            Some((
                Skip::TripCountTooLarge,
                format!(
                    "the trip count {trip_count} is over unroll-full-max-count={}",
                    limits.full_max_count
                ),
            ))
        } else if unrolled(trip_count) >= threshold {
            Some((
                Skip::TooLarge,
                format!(
                    "the unrolled size {} ({trip_count} iterations of {size} instructions) is \
                     not under unroll-threshold={threshold}",
                    unrolled(trip_count)
                ),
            ))
        } else {
            None
        };
        let factor = match full_no {
            None => trip_count,
            Some(why) if user == 0 && !limits.allow_partial => return Err(why),
            Some(why) => {
                // Partial unrolling by a factor dividing the trip count: no remainder loop
                // (not implemented), which is also what makes it legal with convergent
                // operations.
                let f = if user != 0 {
                    if user >= trip_count {
                        // A full unrolling was asked for and is not possible.
                        return Err(why);
                    }
                    if trip_count % user != 0 {
                        return Err((
                            Skip::NeedsRemainder,
                            format!(
                                "unroll-count={user} does not divide the trip count \
                                 {trip_count}: a remainder loop would be needed (not \
                                 implemented)"
                            ),
                        ));
                    }
                    user
                } else {
                    let mut f = (u64::from(limits.partial_threshold).saturating_sub(BE_INSNS)
                        / per_iter)
                        .min(u64::from(limits.max_count))
                        .min(trip_count - 1);
                    while f > 1 && trip_count % f != 0 {
                        f -= 1;
                    }
                    f
                };
                let limit = if user != 0 {
                    threshold
                } else {
                    u64::from(limits.partial_threshold)
                };
                if f <= 1 || unrolled(f) >= limit.max(1) {
                    let (skip, msg) = why;
                    return Err((
                        skip,
                        format!(
                            "{msg}; no partial unrolling factor dividing the trip count \
                             fits (size {size}, threshold {limit})"
                        ),
                    ));
                }
                f
            }
        };
        let unrolled_size = unrolled(factor);
        if unrolled_size.saturating_sub(size) > self.budget {
            return Err((
                Skip::GrowthBudgetSpent,
                format!(
                    "unrolling would add {} instructions; the function's growth budget has {} \
                     left",
                    unrolled_size - size,
                    self.budget
                ),
            ));
        }

        Ok(Plan {
            l,
            preheader,
            header_at,
            latch_at,
            trip_count,
            factor,
            unrolled_size,
            size,
            runtime: None,
        })
    }

    /// The loop has no exit with a constant count: can and should it be unrolled with a
    /// count known only at run time? LLVM 14's `computeUnrollCount` (runtime case) and
    /// the checks of `UnrollRuntimeLoopRemainder`. `self.se` holds the loop's scalar
    /// evolution and `self.s.body` its blocks.
    fn check_runtime(
        &mut self,
        func: &Function,
        cx: &PassContext<'_>,
        limits: &Limits,
        at: RuntimeAt,
    ) -> Result<Plan, (Skip, String)> {
        let li = &cx.analyses.loops;
        let cfg = &cx.analyses.cfg;
        let l = at.l;
        if !limits.runtime {
            return Err((
                Skip::UnknownTripCount,
                "no exit has a constant count, and runtime unrolling is off \
                 (unroll-runtime=false)"
                    .into(),
            ));
        }
        let header = self.s.body[at.header_at];
        let term = func
            .terminator(at.latch)
            .expect("a CFG block has a terminator");
        let stay_exit = match *func.dfg.inst(term) {
            InstructionData::Brif { blocks, .. } => {
                let (a, b) = (blocks[0].block, blocks[1].block);
                if a == header && !li.contains(l, b) {
                    Some((0, b))
                } else if b == header && !li.contains(l, a) {
                    Some((1, a))
                } else {
                    None
                }
            }
            _ => None,
        };
        let Some((stay, exit)) = stay_exit else {
            return Err((
                Skip::UnknownTripCount,
                "no exit has a constant count, and the latch does not exit (runtime \
                 unrolling needs the exit test at the latch: run loop-rotate first)"
                    .into(),
            ));
        };
        // The latch must be the only exiting block (LLVM 14 without
        // `unroll-runtime-multi-exit`): only the last copy then tests.
        let other_exit = self
            .s
            .body
            .iter()
            .any(|&b| b != at.latch && cfg.succs(b).iter().any(|&t| !li.contains(l, t)));
        if other_exit {
            return Err((
                Skip::MultipleExits,
                "no exit has a constant count, and the loop has exits besides its latch's \
                 (runtime unrolling needs the latch as the only exiting block)"
                    .into(),
            ));
        }
        let se = &self.se;
        let Some(btc) = se
            .backedge_taken_count(l)
            .filter(|&b| se.is_invariant(b, l))
        else {
            return Err((
                Skip::UnknownTripCount,
                "scalar evolution knows no loop-invariant trip count for the loop".into(),
            ));
        };
        // GPU rule: the remainder loop runs the convergent operations of the last
        // iterations under a condition the original did not have (LLVM forbids the
        // remainder for convergent loops; cicc's `unroll-runtime-convergent` allows it).
        if !limits.runtime_convergent {
            let convergent = self.s.body.iter().any(|&b| {
                func.layout
                    .block_insts(b)
                    .any(|i| func.dfg.inst(i).opcode().is_convergent())
            });
            if convergent {
                return Err((
                    Skip::Convergent,
                    "the loop has no constant trip count and has convergent operations \
                     (barriers, shuffles, votes, calls): a remainder loop would put them \
                     under a new condition (unroll-runtime-convergent=false)"
                        .into(),
                ));
            }
        }
        let size = at.size;
        let per_iter = size.max(BE_INSNS + 1) - BE_INSNS;
        let unrolled = |f: u64| per_iter.saturating_mul(f).saturating_add(BE_INSNS);
        let max_tc = se.max_backedge_taken_count(l).map(|m| m.saturating_add(1));
        let user = u64::from(limits.user_count);
        let count = if limits.forced {
            if user < 2 {
                return Err((
                    Skip::TooLarge,
                    format!("the unroll count {user} asks for no copies"),
                ));
            }
            if unrolled(user) >= u64::from(limits.threshold) {
                return Err((
                    Skip::TooLarge,
                    format!(
                        "the unrolled size {} ({user} copies of {size} instructions) is not \
                         under the threshold {}",
                        unrolled(user),
                        limits.threshold
                    ),
                ));
            }
            if !user.is_power_of_two() {
                return Err((
                    Skip::NeedsRemainder,
                    format!(
                        "runtime unrolling by {user}: only powers of two are implemented \
                         (the remainder is the trip count's low bits)"
                    ),
                ));
            }
            user
        } else {
            if let Some(m) = max_tc.filter(|&m| m < MAX_UPPER_BOUND) {
                return Err((
                    Skip::SmallMaxTripCount,
                    format!(
                        "the loop runs at most {m} iterations (under {MAX_UPPER_BOUND}): not \
                         worth a remainder loop"
                    ),
                ));
            }
            let pt = u64::from(limits.partial_threshold);
            let mut c = DEFAULT_RUNTIME_COUNT;
            while c != 0 && unrolled(c) > pt {
                c >>= 1;
            }
            c = c.min(u64::from(limits.max_count));
            if let Some(m) = max_tc {
                c = c.min(m);
            }
            // A power of two (the remainder is `tc & (c - 1)`).
            if c != 0 {
                c = 1 << (63 - c.leading_zeros());
            }
            if c < 2 {
                return Err((
                    Skip::TooLarge,
                    format!(
                        "no runtime unrolling count of 2 or more fits: {} for 2 copies of \
                         {size} instructions is over unroll-partial-threshold={pt} (or \
                         unroll-max-count={} is under 2)",
                        unrolled(2),
                        limits.max_count
                    ),
                ));
            }
            c
        };
        // The trip count is computed in the preheader: it must be possible there and,
        // unless a count was asked for, cheap (LLVM's `AllowExpensiveTripCount` false,
        // `SCEVCheapExpansionBudget`).
        let se = &mut self.se;
        let one = se.constant(se.bits(btc), 1);
        let tc = se.add(btc, one);
        let pre_term = func
            .terminator(at.preheader)
            .expect("a CFG block has a terminator");
        let cost = se.expansion_cost(tc);
        let shown = || se.display(tc, func);
        if cost.is_none() || !se.can_expand_with(func, |d, _| !li.contains(l, d), tc, pre_term) {
            return Err((
                Skip::ExpensiveTripCount,
                format!(
                    "the trip count {} cannot be computed in the preheader",
                    shown()
                ),
            ));
        }
        let cost = cost.unwrap_or(u32::MAX);
        if !limits.forced && cost > crate::indvars::CHEAP_EXPANSION_BUDGET {
            return Err((
                Skip::ExpensiveTripCount,
                format!(
                    "computing the trip count {} costs {cost} instructions, over the \
                     budget {} (LLVM's scev-cheap-expansion-budget)",
                    shown(),
                    crate::indvars::CHEAP_EXPANSION_BUDGET
                ),
            ));
        }
        // The loop forest around a nested loop is rebuilt (its outermost nest): bounded
        // per function.
        if let Some(p) = li.parent(l) {
            let mut top = p;
            while let Some(q) = li.parent(top) {
                top = q;
            }
            let nest = li.blocks(top).upper_bound() as u64;
            let nest = nest.saturating_add((count + 1).saturating_mul(self.s.body.len() as u64));
            if nest > self.rebuild_budget {
                return Err((
                    Skip::GrowthBudgetSpent,
                    format!(
                        "runtime unrolling would rebuild the loop forest of the {nest}-block \
                         nest around the loop; the function's budget for that has {} blocks \
                         left",
                        self.rebuild_budget
                    ),
                ));
            }
        }
        // The copies and the remainder loop (a copy of the loop).
        let unrolled_size = unrolled(count).saturating_add(size);
        if unrolled(count) > self.budget {
            return Err((
                Skip::GrowthBudgetSpent,
                format!(
                    "unrolling would add {} instructions; the function's growth budget has {} \
                     left",
                    unrolled(count),
                    self.budget
                ),
            ));
        }
        Ok(Plan {
            l,
            preheader: at.preheader,
            header_at: at.header_at,
            latch_at: at.latch_at,
            trip_count: 0,
            factor: count,
            unrolled_size,
            size,
            runtime: Some(RuntimePlan {
                tc,
                stay,
                exit,
                forced: limits.forced,
            }),
        })
    }

    /// Unroll the loop of `plan` by `plan.factor` with a remainder loop after it (LLVM's
    /// `UnrollRuntimeLoopRemainder`, epilogue form, then `UnrollLoop`). Returns the
    /// analyses kept.
    fn unroll_runtime(
        &mut self,
        func: &mut Function,
        plan: &Plan,
        cx: &mut PassContext<'_>,
        updater: &mut LoopUpdater,
    ) -> Result<Analyses, String> {
        let rt = plan.runtime.ok_or("internal error: no runtime plan")?;
        let s = &mut self.s;
        let n = s.body.len();
        let f = plan.factor as usize;
        let l = plan.l;
        let header = s.body[plan.header_at];
        let latch = s.body[plan.latch_at];
        let exit = rt.exit;
        let not_brif = || "internal error: the latch does not end in a brif".to_string();

        // 1. In the preheader: the trip count, the remainder `xtra = tc & (f - 1)`, the
        // unrolled loop's iterations `tc - xtra`, and whether only the remainder runs.
        // That test is `tc - 1 < f - 1` rather than `tc < f`, so that 2^bits iterations
        // (a trip count wrapped to 0) take the unrolled loop, which counts modulo 2^bits.
        let pre_term = func.terminator(plan.preheader).expect("terminator");
        let li = &cx.analyses.loops;
        let tc = self
            .se
            .expand_with(func, |d, _| !li.contains(l, d), rt.tc, pre_term)
            .ok_or("internal error: the trip count could not be expanded")?;
        let ty = func.dfg.value_type(tc);
        let mut cur = FuncCursor::new(func).before_inst(pre_term);
        let one = cur.iconst(ty, 1);
        let btc = cur.binary(Opcode::Isub, tc, one, IntFlags::NONE);
        let mask = cur.iconst(ty, f as i64 - 1);
        let xtra = cur.binary(Opcode::And, tc, mask, IntFlags::NONE);
        let uiter = cur.binary(Opcode::Isub, tc, xtra, IntFlags::NONE);
        let few = cur.icmp(IntCC::Ult, btc, mask);

        // 2. The copies, then the remainder loop, all cloned from the untouched loop.
        s.copies.clear();
        s.copies.extend_from_slice(&s.body);
        let mut last = latch;
        for _ in 1..f {
            s.map.clear();
            let c = clone_blocks(func, &s.body, &mut s.map, Place::After(last))
                .map_err(|e| format!("internal error: {e}"))?;
            last = *c.last().expect("copies");
            s.copies.extend_from_slice(&c);
        }
        s.map.clear();
        let epi = clone_blocks(func, &s.body, &mut s.map, Place::After(last))
            .map_err(|e| format!("internal error: {e}"))?;
        let epi_header = s.map.map_block(header);
        let epi_latch = s.map.map_block(latch);
        for &c in s.copies[n..].iter().chain(&epi) {
            func.loop_attrs.remove(&c);
        }
        // The remainder runs fewer than `f` iterations: LLVM marks it not to be unrolled;
        // a loop unrolled by an explicit count is not unrolled again.
        let mut attrs = func.loop_attrs(header);
        func.set_loop_attrs(
            epi_header,
            LoopAttrs {
                unroll: UnrollHint::Disable,
                ..attrs
            },
        );
        if rt.forced {
            attrs.unroll = UnrollHint::Disable;
            func.set_loop_attrs(header, attrs);
        }
        let htys: Vec<gyre_ir::Type> = func
            .dfg
            .block_params(header)
            .iter()
            .map(|&p| func.dfg.value_type(p))
            .collect();
        let xtys: Vec<gyre_ir::Type> = func
            .dfg
            .block_params(exit)
            .iter()
            .map(|&p| func.dfg.value_type(p))
            .collect();
        let at = |k: usize, i: usize| k * n + i;

        // 3. Chain the copies: the latch of copy k (k < f - 1) jumps to copy k + 1's
        // header, whose parameters stand for the latch's arguments (its exit test is
        // folded: the count says the unrolled loop never leaves there).
        s.subst.clear();
        for k in 0..f - 1 {
            let term = func
                .terminator(s.copies[at(k, plan.latch_at)])
                .expect("terminator");
            let InstructionData::Brif { blocks, .. } = *func.dfg.inst(term) else {
                return Err(not_brif());
            };
            let next = s.copies[at(k + 1, plan.header_at)];
            let args = blocks[rt.stay].args.as_slice(&func.dfg.value_lists);
            for (j, &a) in args.iter().enumerate() {
                s.subst.insert(func.dfg.block_params(next)[j], a);
            }
            let dest = BlockCall::new(next, &[], &mut func.dfg.value_lists);
            fold_to_jump(func, term, dest);
        }
        // The last latch counts down a new header parameter from `tc - xtra` by `f` and
        // leaves at 0 (LLVM's `niter`), to a new exit block that passes the next header
        // values and the exit's values on.
        let last_latch = s.copies[at(f - 1, plan.latch_at)];
        let term = func.terminator(last_latch).expect("terminator");
        let InstructionData::Brif { blocks, .. } = *func.dfg.inst(term) else {
            return Err(not_brif());
        };
        let pool = &func.dfg.value_lists;
        let mut hargs: Vec<Value> = blocks[rt.stay].args.as_slice(pool).to_vec();
        let xargs: Vec<Value> = blocks[1 - rt.stay].args.as_slice(pool).to_vec();
        let niter = func.dfg.append_block_param(header, ty);
        let mut cur = FuncCursor::new(func).before_inst(term);
        let step = cur.iconst(ty, f as i64);
        let next = cur.binary(Opcode::Isub, niter, step, IntFlags::NONE);
        let zero = cur.iconst(ty, 0);
        let more = cur.icmp(IntCC::Ne, next, zero);
        let ux = func.dfg.make_block();
        func.layout.insert_block_after(ux, last);
        let ux_h: Vec<Value> = htys
            .iter()
            .map(|&t| func.dfg.append_block_param(ux, t))
            .collect();
        let ux_x: Vec<Value> = xtys
            .iter()
            .map(|&t| func.dfg.append_block_param(ux, t))
            .collect();
        let mut uargs = hargs.clone();
        uargs.extend_from_slice(&xargs);
        hargs.push(next);
        let pool = &mut func.dfg.value_lists;
        let back = BlockCall::new(header, &hargs, pool);
        let out = BlockCall::new(ux, &uargs, pool);
        func.dfg.replace_inst(
            term,
            InstructionData::Brif {
                arg: more,
                blocks: [back, out],
            },
        );

        // 4. The remainder's preheader (entered from the preheader when only the
        // remainder runs, and from the unrolled loop's exit when `xtra != 0`) and its
        // dedicated exit.
        let eph = func.dfg.make_block();
        func.layout.insert_block_after(eph, ux);
        let eph_h: Vec<Value> = htys
            .iter()
            .map(|&t| func.dfg.append_block_param(eph, t))
            .collect();
        let mut cur = FuncCursor::new(func).at_end(ux);
        let zero = cur.iconst(ty, 0);
        let any = cur.icmp(IntCC::Ne, xtra, zero);
        cur.brif(any, eph, &ux_h, exit, &ux_x);
        FuncCursor::new(func).at_end(eph).jump(epi_header, &eph_h);
        let ex =
            split_edge(func, epi_latch, exit, None).map_err(|e| format!("internal error: {e}"))?;

        // 5. The unrolled loop's own preheader; the old preheader chooses.
        let InstructionData::Jump { dest } = *func.dfg.inst(pre_term) else {
            return Err("internal error: the preheader does not end in a jump".into());
        };
        let mut a: Vec<Value> = dest.args.as_slice(&func.dfg.value_lists).to_vec();
        let nph = func.dfg.make_block();
        func.layout.insert_block_before(nph, header);
        a.push(uiter);
        FuncCursor::new(func).at_end(nph).jump(header, &a);
        a.pop();
        let pool = &mut func.dfg.value_lists;
        let to_rem = BlockCall::new(eph, &a, pool);
        let to_unr = BlockCall::new(nph, &[], pool);
        func.dfg.replace_inst(
            pre_term,
            InstructionData::Brif {
                arg: few,
                blocks: [to_rem, to_unr],
            },
        );

        // 6. Values, then the straight line (as for partial unrolling).
        s.subst
            .resolve_chains()
            .map_err(|e| format!("internal error: {e}"))?;
        remap_instructions(func, &s.copies, &s.subst);
        for k in 1..f {
            let h = s.copies[at(k, plan.header_at)];
            while let Some(last) = func.dfg.block_params(h).len().checked_sub(1) {
                func.dfg.remove_block_param(h, last);
            }
        }
        let g = s.next_gen(func.dfg.num_blocks());
        for &b in &s.copies {
            s.mark[b.index()] = g;
            s.reached[b.index()] = g;
        }
        s.live.clear();
        s.live.extend_from_slice(&s.copies);
        let merged = cleanup(func, s, g, header);
        cx.stats.add(NAME, "NumBlocksMerged", merged.len() as u64);
        cx.stats.add(NAME, "NumExitsFolded", (f - 1) as u64);

        // 7. Analyses, kept current in time proportional to the loop nest (recomputing
        // them function-wide per unrolled loop would make `-O` quadratic in the number of
        // loops): the CFG's edges of every block that changed or is new, the loops of the
        // outermost loop around this one rebuilt with the remainder loop in it
        // ([`gyre_analysis::LoopInfo::replace_nest`]), `nonlocal-uses` marked for the
        // values the new and changed blocks use from other blocks.
        updater.add_new_loop(epi_header);
        let a = &mut *cx.analyses;
        let cfg_err = |e: gyre_analysis::CfgError| e.to_string();
        let new_blocks = [nph, ux, eph, ex];
        a.cfg.update_block(func, plan.preheader).map_err(cfg_err)?;
        for &b in new_blocks.iter().chain(&s.copies).chain(&epi) {
            a.cfg.update_block(func, b).map_err(cfg_err)?;
        }
        let mut top = l;
        while let Some(p) = a.loops.parent(top) {
            top = p;
        }
        let mut region: Vec<Block> = a
            .loops
            .blocks(top)
            .filter(|&b| func.layout.is_block_inserted(b))
            .collect();
        region.extend(
            s.copies[n..]
                .iter()
                .chain(&epi)
                .chain(&new_blocks)
                .copied()
                .filter(|&b| func.layout.is_block_inserted(b)),
        );
        if top != l {
            self.rebuild_budget = self.rebuild_budget.saturating_sub(region.len() as u64);
        }
        let mut kept = Analyses::CFG;
        if a.nonlocal.is_valid() {
            let touched = s.copies.iter().chain(&epi).chain(&new_blocks);
            mark_uses_from_elsewhere(
                func,
                &mut a.nonlocal,
                touched.chain(core::iter::once(&plan.preheader)),
            );
            kept = kept.union(Analyses::NONLOCAL_USES);
        }
        // A nest replace_nest refuses (an irreducible cycle in it) is recomputed by
        // whoever needs it next; so is a nest inside an irreducible cycle, whose blocks
        // other blocks of the cycle may enter: replace_nest's retreating edges are then
        // not its back edges, and the cycle's own block list would go stale.
        let in_cycle = a.loops.in_irreducible_cycle(a.loops.header(top));
        if !in_cycle && a.loops.replace_nest(&a.cfg, top, &region) {
            kept = kept.union(Analyses::LOOPS);
        }
        Ok(kept)
    }

    /// Unroll the loop of `plan` fully. Returns the analyses kept.
    fn unroll(
        &mut self,
        func: &mut Function,
        plan: &Plan,
        cx: &mut PassContext<'_>,
    ) -> Result<Analyses, String> {
        let s = &mut self.s;
        let n = s.body.len();
        let tc = plan.factor as usize;
        let full = plan.factor == plan.trip_count;
        let btc = plan.trip_count - 1;
        let li = &cx.analyses.loops;
        s.exit_blocks.clear();
        s.exit_blocks
            .extend(li.unique_exit_blocks(plan.l, &cx.analyses.cfg));
        let parent = li.parent(plan.l);

        // 1. The copies, all cloned from the untouched loop.
        s.copies.clear();
        s.copies.extend_from_slice(&s.body);
        // The copies go after the latch, usually the loop's last block.
        let mut last = s.body[plan.latch_at];
        for _ in 1..tc {
            s.map.clear();
            let c = clone_blocks(func, &s.body, &mut s.map, Place::After(last))
                .map_err(|e| format!("internal error: {e}"))?;
            last = *c.last().expect("copies");
            s.copies.extend_from_slice(&c);
        }
        // The copies head no loop; a fully unrolled loop is gone. A loop partially
        // unrolled by its `unroll_count` is not unrolled again (LLVM's
        // `setLoopAlreadyUnrolled`).
        for &c in &s.copies[n..] {
            func.loop_attrs.remove(&c);
        }
        let header0 = s.copies[plan.header_at];
        let mut attrs = func.loop_attrs(header0);
        if full {
            attrs = LoopAttrs::default();
        } else if matches!(attrs.unroll, UnrollHint::Count(_)) {
            attrs.unroll = UnrollHint::Disable;
        }
        func.set_loop_attrs(header0, attrs);
        let at = |k: usize, i: usize| k * n + i;

        // 2. Chain the copies: each latch enters the next copy's header; each header's
        // parameters stand for the values that entered it.
        s.subst.clear();
        let header0 = s.copies[at(0, plan.header_at)];
        let pre_term = func.terminator(plan.preheader).expect("terminator");
        s.args.clear();
        // Partial unrolling keeps the loop: its header keeps its parameters.
        if full {
            let args = &mut s.args;
            func.dfg.for_each_dest_mut(pre_term, |bc, pool| {
                args.extend_from_slice(bc.args.as_slice(pool));
                bc.args.clear(pool);
            });
        }
        for (j, &a) in s.args.iter().enumerate() {
            s.subst.insert(func.dfg.block_params(header0)[j], a);
        }
        for k in 0..tc - usize::from(full) {
            // The last copy of a partial unrolling goes back to the loop's header.
            let h = s.copies[at(k, plan.header_at)];
            let next = s.copies[at((k + 1) % tc, plan.header_at)];
            let term = func
                .terminator(s.copies[at(k, plan.latch_at)])
                .expect("terminator");
            s.args.clear();
            let args = &mut s.args;
            func.dfg.for_each_dest_mut(term, |bc, pool| {
                if bc.block == h {
                    if next != header0 {
                        args.extend_from_slice(bc.args.as_slice(pool));
                        bc.args.clear(pool);
                    }
                    bc.block = next;
                }
            });
            if next != header0 {
                for (j, &a) in s.args.iter().enumerate() {
                    s.subst.insert(func.dfg.block_params(next)[j], a);
                }
            }
        }
        s.subst
            .resolve_chains()
            .map_err(|e| format!("internal error: {e}"))?;
        remap_instructions(func, &s.copies, &s.subst);

        // 3. Fold the exits with constant counts. Fully unrolled, copy k runs iteration k:
        // stay before the count, leave at it. Partially, copy k runs iterations k, k + f,
        // k + 2f, ..: an exit whose count is not among them (or past the last iteration)
        // stays.
        let mut folded = 0u64;
        for k in 0..tc {
            for &(i, c, stay) in &s.exits {
                let term = func.terminator(s.copies[at(k, i)]).expect("terminator");
                let InstructionData::Brif { blocks, .. } = *func.dfg.inst(term) else {
                    continue;
                };
                let dest = match stay {
                    Some(st) if full && (k as u64) < c => blocks[st],
                    Some(st) if full && k as u64 == c => blocks[1 - st],
                    Some(st) if !full && (c > btc || c % tc as u64 != k as u64) => blocks[st],
                    _ => continue,
                };
                fold_to_jump(func, term, dest);
                folded += 1;
            }
        }
        cx.stats.add(NAME, "NumExitsFolded", folded);

        // 4. What the folds left reachable: a walk from the first header inside the copies.
        let g = s.next_gen(func.dfg.num_blocks());
        for &b in &s.copies {
            s.mark[b.index()] = g;
        }
        s.stack.clear();
        s.stack.push(header0);
        s.reached[header0.index()] = g;
        let mut live_exits = 0usize;
        s.bools.clear();
        s.bools.resize(s.exit_blocks.len(), false);
        while let Some(b) = s.stack.pop() {
            let (mark, reached, stack) = (&s.mark, &mut s.reached, &mut s.stack);
            let (exits, bools) = (&s.exit_blocks, &mut s.bools);
            func.for_each_successor(b, |t| {
                if mark[t.index()] == g {
                    if reached[t.index()] != g {
                        reached[t.index()] = g;
                        stack.push(t);
                    }
                } else if let Some(e) = exits.iter().position(|&x| x == t) {
                    if !bools[e] {
                        bools[e] = true;
                        live_exits += 1;
                    }
                }
            });
        }
        let last_latch = s.copies[at(tc - 1, plan.latch_at)];
        let last_header = s.copies[at(tc - 1, plan.header_at)];
        if full && s.reached[last_latch.index()] == g {
            let mut back = false;
            func.for_each_successor(last_latch, |t| back |= t == last_header);
            if back {
                return Err(format!(
                    "internal error: the last iteration's back edge at {last_latch} is live"
                ));
            }
        }
        s.dead.clear();
        s.dead.extend(
            s.copies
                .iter()
                .copied()
                .filter(|b| s.reached[b.index()] != g && *b != header0),
        );
        remove_blocks(func, &s.dead);

        // 5. The headers lose their parameters (every edge into them carries none now).
        for k in usize::from(!full)..tc {
            let h = s.copies[at(k, plan.header_at)];
            if !func.layout.is_block_inserted(h) {
                continue;
            }
            while let Some(last) = func.dfg.block_params(h).len().checked_sub(1) {
                func.dfg.remove_block_param(h, last);
            }
        }

        // 6. Clean up the straight line: forward parameters of blocks with one
        // predecessor, merge jump chains, remove what no longer has a use.
        s.live.clear();
        s.live.extend(
            s.copies
                .iter()
                .copied()
                .filter(|b| s.reached[b.index()] == g || *b == header0),
        );
        let merged = cleanup(func, s, g, header0);
        cx.stats.add(NAME, "NumBlocksMerged", merged.len() as u64);
        // After the cleanup, which forwarded the parameters of the copies' inner blocks
        // (a counter passed from a rotated loop's header to its latch); the preheader
        // first: the start of a widened counter (`zext` of a constant) is computed there.
        let consts = fold_constants(func, &[plan.preheader]) + fold_constants(func, &s.copies);
        if consts > 0 {
            cx.stats.add(NAME, "NumConstantsFolded", consts);
        }

        // 7. Analyses. An exit never taken any more leaves code unreachable beyond the
        // copies: remove it from the whole function and re-form the loops (rare). So does
        // a copy that, its exits folded, can only leave the loop around through an exit
        // outside it (an iv-dependent exit out of several loops, taken in that
        // iteration): the copy is no longer in that loop, the forest's update in place
        // would be wrong, and the copy's uses of the loop's values break LCSSA.
        let leaves_parent = match parent {
            Some(p) if full => copies_leave_loop(func, s, g, &cx.analyses.loops, p),
            _ => false,
        };
        if live_exits < s.exit_blocks.len() || leaves_parent {
            let mut reached = core::mem::take(&mut s.bools);
            remove_unreachable_blocks(func, &mut reached);
            s.bools = reached;
            restore_forms(func, cx).map_err(|e| e.0)?;
            return Ok(cx.analyses.valid());
        }
        let a = &mut *cx.analyses;
        let cfg_err = |e: gyre_analysis::CfgError| e.to_string();
        a.cfg.update_block(func, plan.preheader).map_err(cfg_err)?;
        // Every copy: live ones changed terminators, removed and merged ones lose their
        // edges.
        for &b in &s.copies {
            a.cfg.update_block(func, b).map_err(cfg_err)?;
        }
        if full {
            for &b in s.dead.iter().chain(&merged) {
                a.loops.remove_block(b);
            }
            a.loops.remove_loop(plan.l);
            for &b in &s.copies[n..] {
                if func.layout.is_block_inserted(b) {
                    a.loops.add_block(b, parent);
                }
            }
        } else {
            for &b in &s.copies[n..] {
                if func.layout.is_block_inserted(b) {
                    a.loops.add_block(b, Some(plan.l));
                }
            }
            // The latch is the live copy that branches to the header (the last copy's
            // latch, or the block it was merged into).
            let latch = s
                .copies
                .iter()
                .copied()
                .filter(|&b| func.layout.is_block_inserted(b))
                .find(|&b| a.cfg.succs(b).contains(&header0))
                .ok_or("internal error: the partially unrolled loop lost its latch")?;
            if !a.loops.set_header_and_latch(plan.l, header0, latch) {
                return Err("internal error: the loop forest refused the new latch".into());
            }
            for &b in s.dead.iter().chain(&merged) {
                a.loops.remove_block(b);
            }
        }
        // Keep `nonlocal-uses` sound in time proportional to the copies (recomputing it
        // function-wide at the next loop-rotate, once per unrolled loop, was quadratic):
        // every use an edit moves to another block — a forwarded parameter's incoming
        // value, a header's start value, a merged block's operands — is in a live copy,
        // and uses after the loop go through the exits' arguments, passed from the copies
        // (LCSSA). New values are unmarked, which reads "may be used elsewhere".
        let mut kept = Analyses::CFG.union(Analyses::LOOPS);
        if a.nonlocal.is_valid() {
            mark_uses_from_elsewhere(func, &mut a.nonlocal, &s.copies);
            kept = kept.union(Analyses::NONLOCAL_USES);
        }
        Ok(kept)
    }
}

/// Tidy the live copies (`s.live`, region generation `g` in `s.mark`/`s.reached`), as
/// LLVM's `simplifyLoopAfterUnroll` does: a block with one incoming edge gets its
/// parameters replaced by that edge's arguments (so each copy's induction variable is the
/// constant of its iteration), a block that jumps to a block with no other predecessor
/// absorbs it, and instructions of the copies left without a use and without an effect
/// are removed. Returns the blocks merged away (out of the layout). O(size of the copies).
/// LLVM's `MaxBruteForceIterations`: the iterations [`exhaustive_count`] simulates.
const MAX_BRUTE_FORCE_ITERATIONS: u64 = 100;

/// The iteration in which the exit of the header or latch branching on `cond` leaves (its
/// `brif` staying through target `stay` before), found by running the loop's integer
/// arithmetic on constants (LLVM's `computeExitCountExhaustively`): for a counter scalar
/// evolution has no closed form for, `for (i = 1; i < 32; i *= 2)` or `for (i = 16; i >
/// 0; i >>= 1)`, the warp-shuffle loops of reductions and scans. Every header parameter
/// must start as a constant and its latch argument must be computed from the parameters
/// and constants by operations that cannot trap (`eval_int`); `None` when one is not, or
/// when the exit is not taken within [`MAX_BRUTE_FORCE_ITERATIONS`]. The count is exact:
/// each iteration's condition is the value the loop computes in that iteration. Costs at
/// most that many walks of the loop's instructions.
fn exhaustive_count(
    func: &Function,
    cfg: &gyre_analysis::Cfg,
    body: &[Block],
    values: &mut FxHashMap<Value, u64>,
    (header, latch, preheader): (Block, Block, Block),
    cond: Value,
    stay: usize,
) -> Option<u64> {
    let params = func.dfg.block_params(header);
    let start = edge_args(func, preheader, header)?;
    let next = edge_args(func, latch, header)?;
    if start.len() != params.len() || next.len() != params.len() {
        return None;
    }
    // The body in reverse post-order from the header (back edge ignored), so that every
    // value is evaluated after the values it uses (an innermost reducible loop is a DAG
    // without its back edge).
    let in_loop: rustc_hash::FxHashSet<Block> = body.iter().copied().collect();
    let mut order: Vec<Block> = Vec::with_capacity(body.len());
    let mut seen: rustc_hash::FxHashSet<Block> = rustc_hash::FxHashSet::default();
    let mut stack: Vec<(Block, usize)> = vec![(header, 0)];
    seen.insert(header);
    while let Some(&mut (b, ref mut at)) = stack.last_mut() {
        let succs = cfg.succs(b);
        if let Some(&t) = succs.get(*at) {
            *at += 1;
            if t != header && in_loop.contains(&t) && seen.insert(t) {
                stack.push((t, 0));
            }
        } else {
            order.push(b);
            stack.pop();
        }
    }
    order.reverse();
    let mut state: Vec<Option<u64>> = start.iter().map(|&v| const_int(func, v)).collect();
    let mut after: Vec<Option<u64>> = Vec::with_capacity(params.len());
    for k in 0..MAX_BRUTE_FORCE_ITERATIONS {
        values.clear();
        for (&p, &c) in params.iter().zip(&state) {
            if let Some(c) = c {
                values.insert(p, c);
            }
        }
        for &b in &order {
            // The parameters of a block with one predecessor (a latch the cleanups left
            // with parameters) are that edge's arguments.
            if let (true, &[p]) = (b != header, cfg.preds(b)) {
                for (j, a) in edge_args(func, p, b)?.into_iter().enumerate() {
                    let v = values.get(&a).copied().or_else(|| const_int(func, a));
                    if let (Some(v), Some(&bp)) = (v, func.dfg.block_params(b).get(j)) {
                        values.insert(bp, v);
                    }
                }
            }
            for i in func.layout.block_insts(b) {
                let Some(r) = func.dfg.inst_result(i) else {
                    continue;
                };
                let known = |v: Value| values.get(&v).copied().or_else(|| const_int(func, v));
                if let Some(c) = eval_int(func, i, known) {
                    values.insert(r, c);
                }
            }
        }
        let known = |v: Value| values.get(&v).copied().or_else(|| const_int(func, v));
        let c = known(cond)?;
        if usize::from(c & 1 == 0) != stay {
            return Some(k);
        }
        // A parameter the exit does not depend on may stay unknown; one it depends on
        // makes the condition unknown in the next iteration, which gives up there.
        after.clear();
        after.extend(next.iter().map(|&v| known(v)));
        core::mem::swap(&mut state, &mut after);
    }
    None
}

/// Folds every integer instruction of `blocks` (in their order; removed blocks skipped)
/// whose operands are now
/// constants into an `iconst`, and returns how many: LLVM's `simplifyLoopAfterUnroll`.
/// Once the header's parameters are replaced by the values entering each copy, an
/// induction variable's `iadd` becomes `iconst + iconst`; folding it here makes the
/// addresses of a private array indexed by the counter constant offsets, which `sroa`
/// (run after the loop passes, as LLVM runs SROA after full unrolling) promotes. A fold
/// missed here (an operand defined later in the list) is left to `simplify`.
fn fold_constants(func: &mut Function, blocks: &[Block]) -> u64 {
    let mut folded = 0;
    for &b in blocks {
        if !func.layout.is_block_inserted(b) {
            continue;
        }
        let mut next = func.layout.first_inst(b);
        while let Some(i) = next {
            next = func.layout.next_inst(i);
            if matches!(func.dfg.inst(i), InstructionData::IntConst { .. }) {
                continue;
            }
            let Some(r) = func.dfg.inst_result(i) else {
                continue;
            };
            if let Some(c) = eval_int(func, i, |v| const_int(func, v)) {
                let imm = sext(c, func.dfg.value_type(r));
                func.dfg.replace_inst(i, InstructionData::IntConst { imm });
                folded += 1;
            }
        }
    }
    folded
}

fn cleanup(func: &mut Function, s: &mut Scratch, g: u32, header0: Block) -> Vec<Block> {
    let in_region = |s: &Scratch, b: Block| s.mark[b.index()] == g && s.reached[b.index()] == g;
    let n = func.dfg.num_blocks();
    if s.npred.len() < n {
        s.npred.resize(n, (0, header0));
    }
    for &b in &s.live {
        s.npred[b.index()] = (0, b);
    }
    for k in 0..s.live.len() {
        let b = s.live[k];
        let term = func.terminator(b).expect("terminator");
        let (mark, reached, npred) = (&s.mark, &s.reached, &mut s.npred);
        func.dfg.for_each_dest(term, |bc| {
            let t = bc.block;
            if mark[t.index()] == g && reached[t.index()] == g {
                let e = &mut npred[t.index()];
                *e = (e.0 + 1, b);
            }
        });
    }
    // Forward parameters over single edges.
    s.subst.clear();
    for k in 0..s.live.len() {
        let t = s.live[k];
        let (count, pred) = s.npred[t.index()];
        if t == header0 || count != 1 || func.dfg.block_params(t).is_empty() {
            continue;
        }
        let term = func.terminator(pred).expect("terminator");
        s.args.clear();
        let args = &mut s.args;
        func.dfg.for_each_dest_mut(term, |bc, pool| {
            if bc.block == t {
                args.extend_from_slice(bc.args.as_slice(pool));
                bc.args.clear(pool);
            }
        });
        for (j, &a) in s.args.iter().enumerate() {
            s.subst.insert(func.dfg.block_params(t)[j], a);
        }
        while let Some(last) = func.dfg.block_params(t).len().checked_sub(1) {
            func.dfg.remove_block_param(t, last);
        }
    }
    if s.subst.num_values() > 0 {
        // Chains only run from later copies to earlier ones: no cycle.
        if s.subst.resolve_chains().is_ok() {
            remap_instructions(func, &s.live, &s.subst);
        }
    }
    // Merge jump chains.
    let mut merged = Vec::new();
    for k in 0..s.live.len() {
        let b = s.live[k];
        if !func.layout.is_block_inserted(b) {
            continue;
        }
        loop {
            let term = func.terminator(b).expect("terminator");
            let InstructionData::Jump { dest } = *func.dfg.inst(term) else {
                break;
            };
            let t = dest.block;
            if t == b
                || t == header0
                || !in_region(s, t)
                || s.npred[t.index()].0 != 1
                || !func.dfg.block_params(t).is_empty()
            {
                break;
            }
            func.layout.remove_inst(term);
            while let Some(i) = func.layout.first_inst(t) {
                func.layout.remove_inst(i);
                func.layout.append_inst(i, b);
            }
            func.layout.remove_block(t);
            merged.push(t);
        }
    }
    // Remove instructions without a use or an effect, users first.
    s.uses.clear();
    s.insts.clear();
    for &b in &s.live {
        if !func.layout.is_block_inserted(b) {
            continue;
        }
        for i in func.layout.block_insts(b) {
            let uses = &mut s.uses;
            func.dfg
                .for_each_inst_value(i, |v| *uses.entry(v).or_default() += 1);
            s.insts.push(i);
        }
    }
    let removable = |func: &Function, i: Inst| {
        let op = func.dfg.inst(i).opcode();
        !(op.is_terminator() || op.has_side_effects() || op.can_trap() || op.is_convergent())
            && func.dfg.inst_result(i).is_some()
    };
    let mut work: Vec<Inst> = s
        .insts
        .iter()
        .copied()
        .filter(|&i| {
            removable(func, i)
                && !s
                    .uses
                    .contains_key(&func.dfg.inst_result(i).expect("result"))
        })
        .collect();
    while let Some(i) = work.pop() {
        if func.layout.inst_block(i).is_none() {
            continue;
        }
        func.layout.remove_inst(i);
        for k in 0..func.dfg.inst_args(i).len() {
            let v = func.dfg.inst_args(i)[k];
            let Some(u) = s.uses.get_mut(&v) else {
                continue;
            };
            *u -= 1;
            if *u == 0 {
                if let ValueDef::Result(d) = func.dfg.value_def(v) {
                    let here = func.layout.inst_block(d).is_some_and(|db| in_region(s, db));
                    if here && removable(func, d) {
                        work.push(d);
                    }
                }
            }
        }
    }
    merged
}

/// Whether a live copy (`s.live` still laid out, region generation `g`) reaches no exit
/// block inside `p`, the loop around the fully unrolled one: such a copy cannot get back
/// to `p`'s header, so it is not in `p` any more. The copies form a DAG left only through
/// the exits (`s.exit_blocks`), and a block of `p` reaches `p`'s header, so a backward walk
/// from the copies branching to an exit in `p` finds every copy still in `p`. O(copies and
/// their edges).
fn copies_leave_loop(
    func: &Function,
    s: &Scratch,
    g: u32,
    li: &gyre_analysis::LoopInfo,
    p: Loop,
) -> bool {
    let live = |b: Block| {
        s.mark[b.index()] == g && s.reached[b.index()] == g && func.layout.is_block_inserted(b)
    };
    // Edges between live copies, as (target, source), and the walk's roots.
    let mut edges: Vec<(Block, Block)> = Vec::new();
    let mut stack: Vec<Block> = Vec::new();
    let mut count = 0usize;
    for &b in &s.live {
        if !func.layout.is_block_inserted(b) {
            continue;
        }
        count += 1;
        let mut root = false;
        func.for_each_successor(b, |t| {
            if live(t) {
                edges.push((t, b));
            } else if s.exit_blocks.contains(&t) && li.contains(p, t) {
                root = true;
            }
        });
        if root {
            stack.push(b);
        }
    }
    edges.sort_unstable();
    let mut inside: rustc_hash::FxHashSet<Block> = stack.iter().copied().collect();
    while let Some(b) = stack.pop() {
        let from = edges.partition_point(|e| e.0 < b);
        for &(t, src) in &edges[from..] {
            if t != b {
                break;
            }
            if inside.insert(src) {
                stack.push(src);
            }
        }
    }
    inside.len() < count
}

/// Mark in `nonlocal` every value that an instruction of `blocks` (those still laid out)
/// uses outside the value's own block: the copies' uses, which keep the analysis sound.
fn mark_uses_from_elsewhere<'a>(
    func: &Function,
    nonlocal: &mut gyre_analysis::NonLocalUses,
    blocks: impl IntoIterator<Item = &'a Block>,
) {
    for &b in blocks {
        if !func.layout.is_block_inserted(b) {
            continue;
        }
        for i in func.layout.block_insts(b) {
            func.dfg.for_each_inst_value(i, |v| {
                if def_block(func, v) != Some(b) {
                    nonlocal.set(v, true);
                }
            });
        }
    }
}
