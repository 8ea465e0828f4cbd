//! `simple-loop-unswitch`: hoist loop-invariant branches out of loops (LLVM's
//! `SimpleLoopUnswitchPass`, `SimpleLoopUnswitch.cpp`), gated by warp uniformity.
//!
//! **Trivial unswitching** (no code is duplicated): walking from the header along
//! unconditional jumps through blocks without side effects, a `brif` on a loop-invariant
//! condition with one side leaving the loop (with loop-invariant arguments) is decided
//! once, in the preheader; the branch in the loop becomes a jump. A `br_table` on an
//! invariant value has its exiting cases hoisted the same way (partially, when only some
//! cases exit, as LLVM does).
//!
//! ```text
//!   P:  jump H(a)                       P:  brif c, H(a), E(x)        (then: new preheader)
//!   H(p): ..; brif c, B, E(x)     =>    H(p): ..; jump B
//! ```
//!
//! **Non-trivial unswitching** (`simple-loop-unswitch<nontrivial>`): the loop is cloned
//! once per successor of an invariant `brif` or `br_table` beyond the first, the preheader
//! dispatches on the (frozen, if it may be poison) condition, and in each copy the branch
//! is folded to the successor that copy stands for. A clone is made only of the blocks
//! its copy reaches once the branch is folded; the blocks the original no longer reaches
//! are deleted. The copies branch to the same exit blocks, with their own arguments:
//! re-establishing loop-simplify form splits those exits per copy, so the copies' values
//! merge in the exit blocks' parameters (LCSSA).
//!
//! **GPU rules.** A loop holding a convergent operation (`barrier`, `shfl`, `vote`,
//! `warp_sync`, `call`) is never unswitched, trivially or not: hoisting a branch out of
//! it changes the control dependence of the operation (the ROCm miscompile of LLVM PR
//! 207047). Non-trivially, with `unswitch-uniform-only` (the default), only conditions the
//! uniformity analysis proves warp-uniform are unswitched: a divergent condition would make
//! each warp run both copies one after the other.
//!
//! **Analyses.** Each change keeps the CFG's edges ([`gyre_analysis::Cfg::update_block`])
//! and the loop forest current and re-establishes loop-simplify and LCSSA form itself, in
//! time proportional to the nest it touches and the copies it makes: a trivial hoist gives
//! the loop a new preheader and the exit a dedicated block for the edges left in the
//! loop (blocks added with [`gyre_analysis::LoopInfo::add_block`]); a non-trivial one
//! deletes what the original no longer reaches, gives each copy a preheader and each exit
//! reached by several copies one dedicated block per copy (their values merge in the
//! exit's parameters), and rebuilds the loops of the outermost loop around it
//! ([`gyre_analysis::LoopInfo::replace_nest`]). Dominance, needed by the cost model only
//! inside the loop, is computed for the loop alone; uniformity is read once per function
//! visit and extended to the copies (see [`SimpleLoopUnswitch`]). The dominator tree is
//! left to be recomputed by whoever needs it next. An exit leaving several loop levels
//! is repaired locally too: its dedicated blocks lie outside every loop the edge leaves,
//! and the values of those loops become their parameters. Shapes whose nesting changes
//! beyond the copies (a block of a copy no longer on a cycle, a copy or loop left without
//! an exit into its parent, an irreducible nest) fall back to one run of `loop-simplify`
//! and `lcssa` over the function, as every change did before.

use crate::analyses::Analyses;
use crate::lcssa::Lcssa;
use crate::loop_simplify::LoopSimplify;
use crate::manager::{
    Forms, FunctionPass, LoopPass, LoopUpdater, PassContext, PassError, PassResult,
};
use crate::utils::clone::{clone_blocks, ValueMap};
use crate::utils::split::{split_predecessors, Place};
use gyre_analysis::Loop;
use gyre_ir::{
    Block, BlockCall, EntityRef, FuncKind, Function, Inst, InstructionData, JumpTableData, Opcode,
    Value, ValueDef,
};
use rustc_hash::FxHashSet;

const NAME: &str = "simple-loop-unswitch";

/// Changes made in one visit of a loop at most (each is one unswitched branch; the copies
/// of the loop are visited separately). Bounds the work on a loop with many candidates.
const MAX_ROUNDS: u32 = 64;

/// The `simple-loop-unswitch` loop pass.
///
/// **Requires**: loop-simplify and LCSSA form (the loop adaptor provides both); loops
/// without a preheader are left alone with a remark.
///
/// **Establishes**: loop-simplify and LCSSA form of every loop (re-established after each
/// change, locally; see the module doc). Loops made by cloning
/// are reported to the adaptor ([`LoopUpdater::add_new_loop`], the copies' outermost
/// loops), which visits them; a loop folded away is reported deleted.
///
/// **Preserves**: behaviour; when it changes something, the CFG's edges (its order goes
/// stale), the loop forest and `nonlocal-uses` (kept current by each change), plus
/// whatever a fallback recomputation left valid.
///
/// **Uniformity** (for `unswitch-uniform-only`): the function's analysis is read the
/// first time a condition is asked about in a function visit
/// ([`LoopPass::begin_function`] resets it); a copy's values inherit their originals'
/// answers (the copies are entered on a uniform condition), a newer instruction result
/// is derived from its operands, and only a value none of that covers (a new block
/// parameter) has the analysis computed again.
///
/// **Gives up** (a remark and a counter each): a loop with an invariant branch and a
/// convergent operation (`Convergent`); a loop in or around an irreducible cycle
/// (`Irreducible`); no preheader (`NotLoopSimplifyForm`); non-trivially, a divergent
/// condition under `unswitch-uniform-only` (`DivergentCondition`) and a best candidate
/// whose cost reaches `unswitch-threshold` (`TooCostly`; `NumCostMultiplierSkipped` counts
/// those the multiplier pushed over).
///
/// **Parameters**: `simple-loop-unswitch<nontrivial>` / `<no-nontrivial>` (default: the
/// `enable-nontrivial-unswitch` knob), `<trivial>` / `<no-trivial>` (default on), LLVM's
/// spelling.
///
/// **Knobs** (cicc's names): `enable-simple-loop-unswitch` (true),
/// `disable-loop-unswitching` (false), `enable-nontrivial-unswitch` (false),
/// `unswitch-uniform-only` (true), `unswitch-threshold` (50),
/// `enable-unswitch-cost-multiplier` (true), `unswitch-num-initial-unscaled-candidates`
/// (8), `unswitch-siblings-toplevel-div` (2), `freeze-loop-unswitch-cond` (true).
///
/// **Stats**: `NumTrivial` (branches), `NumSwitchesTrivial` (`br_table`s with exiting
/// cases hoisted), `NumBranches` and `NumSwitches` (non-trivial), `NumLoopsCloned`,
/// `NumFreezes`, `NumCostMultiplierSkipped`, and `Num<remark kind>` per reason above.
///
/// Running it twice changes nothing the second time: an unswitched branch is folded in
/// every copy, so it is no longer a candidate ("already unswitched" needs no marker).
#[derive(Default)]
pub struct SimpleLoopUnswitch {
    /// `Some` when the pipeline said `<nontrivial>` or `<no-nontrivial>`.
    nontrivial: Option<bool>,
    /// `Some(false)` for `<no-trivial>`.
    trivial: Option<bool>,
    simplify: LoopSimplify,
    lcssa: Lcssa,
    map: ValueMap,
    /// Per value, what this function visit knows of its uniformity: 0 not known, 1
    /// uniform, 2 divergent (see [`SimpleLoopUnswitch::divergent`]).
    div: Vec<u8>,
    /// Scratch: dominance in the loop being costed.
    dom: LocalDom,
    /// Scratch for a change: per block of the copies, its copy's number.
    copy_of: BlockTags,
    /// Scratch for a change: blocks reached (per copy, from its header).
    reach: BlockTags,
    /// Scratch for a change: blocks that reach their copy's header (the back edge).
    back: BlockTags,
    /// Scratch for a change: per block, the first of its predecessor edges in `rev`
    /// (index + 1), then per exit its number.
    head: BlockTags,
    /// Scratch for a change: predecessor edges (the predecessor, the next edge's index
    /// + 1 or 0), then (exit, copy, block) triples.
    rev: Vec<(Block, u32)>,
    /// Scratch for a change: edges into the exits (exit number, copy, predecessor).
    into: Vec<(u32, u32, Block)>,
    /// Scratch: a block worklist.
    work: Vec<Block>,
    // The buffers below are kept between visits so that a visit or a change allocates
    // nothing once they have grown (allocation was a sixth of the pass's time).
    /// Scratch: the candidates of the loop visited.
    cands: Vec<Candidate>,
    /// Scratch: the loop's own blocks (candidates).
    own: Vec<Block>,
    /// The visited loop's blocks, with their sizes in `costs`: found by [`check_loop`]'s
    /// walk over the loop's instructions and read by the cost model of the same round
    /// (nothing changes the loop between the two).
    cost_blocks: Vec<Block>,
    /// Scratch: the header's chain of jumps ([`header_chain`]).
    chain: Vec<Block>,
    /// Scratch: the candidates with uniform conditions.
    ok: Vec<Candidate>,
    /// Scratch: the size of each of the loop's blocks (cost model), and prefix sums of
    /// them over the dominator tree ([`LocalDom::subtree_sums`]).
    costs: Vec<u64>,
    acc: Vec<u64>,
    /// Scratch: a terminator's distinct successors, and its distinct block calls.
    succs: Vec<Block>,
    calls: Vec<BlockCall>,
    /// Scratch for a change: the loop's exit blocks, and marks to find them once each.
    exits: Vec<Block>,
    seen: BlockTags,
    /// Scratch for a change: deleted blocks, new blocks, and the region whose loops are
    /// rebuilt.
    removed: Vec<Block>,
    new_blocks: Vec<Block>,
    region: Vec<Block>,
    /// Scratch for a change: the loop's blocks in layout order, the copies (copy 0 the
    /// original), the blocks each copy still reaches, and the preheader's arguments.
    lblocks: Vec<Block>,
    copies: Vec<Vec<Block>>,
    live: Vec<Vec<Block>>,
    args: Vec<Value>,
    /// Scratch for a change: the blocks of the original loop whose terminators changed
    /// (the only ones of it whose CFG edges need updating).
    touched: BlockTags,
    /// Scratch for a change: the blocks a clone is made of (those its copy reaches).
    kept: Vec<Block>,
    /// Scratch for a change: per copy, the block each copy's side of the folded branch
    /// goes to (a `br_table`'s groups), its header, and its copy of the candidate's block.
    fold_to: Vec<Block>,
    heads: Vec<Block>,
    cand_in: Vec<Block>,
}

impl SimpleLoopUnswitch {
    /// A pass with explicit trivial / non-trivial settings (`None`: the defaults, trivial
    /// on and the `enable-nontrivial-unswitch` knob).
    pub fn new(trivial: Option<bool>, nontrivial: Option<bool>) -> SimpleLoopUnswitch {
        SimpleLoopUnswitch {
            trivial,
            nontrivial,
            ..SimpleLoopUnswitch::default()
        }
    }

    /// Build from pipeline parameters (`nontrivial`, `no-nontrivial`, `trivial`,
    /// `no-trivial`).
    pub fn from_params(params: &[String]) -> Result<SimpleLoopUnswitch, String> {
        let (mut trivial, mut nontrivial) = (None, None);
        for p in params {
            match p.as_str() {
                "nontrivial" => nontrivial = Some(true),
                "no-nontrivial" => nontrivial = Some(false),
                "trivial" => trivial = Some(true),
                "no-trivial" => trivial = Some(false),
                other => {
                    return Err(format!(
                        "pass '{NAME}': unknown parameter '{other}' (expected nontrivial, \
                         no-nontrivial, trivial or no-trivial)"
                    ))
                }
            }
        }
        Ok(SimpleLoopUnswitch::new(trivial, nontrivial))
    }
}

/// The knob values of one visit.
#[derive(Copy, Clone)]
struct Config {
    trivial: bool,
    nontrivial: bool,
    uniform_only: bool,
    threshold: u64,
    multiplier: bool,
    unscaled: u32,
    toplevel_div: u32,
    freeze: bool,
}

/// A loop-invariant conditional terminator.
#[derive(Copy, Clone)]
struct Candidate {
    block: Block,
    inst: Inst,
    cond: Value,
}

/// One hoisting of a trivial branch.
#[derive(Copy, Clone)]
enum Trivial {
    /// `brif` in `block`: side `exit_side` (0 = then) leaves the loop.
    Brif { block: Block, exit_side: usize },
    /// `br_table` in `block` with exiting cases.
    Table { block: Block },
}

/// Why a loop is left alone.
#[derive(Copy, Clone)]
enum Skip {
    Convergent,
    Irreducible,
    NotLoopSimplifyForm,
    DivergentCondition,
    TooCostly,
}

impl Skip {
    fn kind(self) -> &'static str {
        match self {
            Skip::Convergent => "Convergent",
            Skip::Irreducible => "Irreducible",
            Skip::NotLoopSimplifyForm => "NotLoopSimplifyForm",
            Skip::DivergentCondition => "DivergentCondition",
            Skip::TooCostly => "TooCostly",
        }
    }
    fn counter(self) -> &'static str {
        match self {
            Skip::Convergent => "NumConvergent",
            Skip::Irreducible => "NumIrreducible",
            Skip::NotLoopSimplifyForm => "NumNotLoopSimplifyForm",
            Skip::DivergentCondition => "NumDivergentCondition",
            Skip::TooCostly => "NumTooCostly",
        }
    }
}

impl LoopPass for SimpleLoopUnswitch {
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

    fn begin_function(&mut self, _func: &Function) {
        self.div.clear();
    }

    fn run_on_loop(
        &mut self,
        func: &mut Function,
        header: Block,
        cx: &mut PassContext<'_>,
        updater: &mut LoopUpdater,
    ) -> Result<PassResult, PassError> {
        // Every knob is read on every visit (the registry test checks each is read).
        let k = cx.knobs;
        let enabled = k.enable_simple_loop_unswitch() & !k.disable_loop_unswitching();
        let nontrivial_knob = k.enable_nontrivial_unswitch();
        let cfg = Config {
            trivial: self.trivial.unwrap_or(true),
            // As in LLVM, the knob turns non-trivial unswitching on whatever the parameter.
            nontrivial: nontrivial_knob || self.nontrivial == Some(true),
            uniform_only: k.unswitch_uniform_only(),
            threshold: u64::from(k.unswitch_threshold()),
            multiplier: k.enable_unswitch_cost_multiplier(),
            unscaled: k.unswitch_num_initial_unscaled_candidates(),
            toplevel_div: k.unswitch_siblings_toplevel_div().max(1),
            freeze: k.freeze_loop_unswitch_cond(),
        };
        if !enabled || !(cfg.trivial || cfg.nontrivial) {
            return Ok(PassResult::UNCHANGED);
        }
        let mut changed = false;
        // Divergent candidates already remarked in this visit (one remark each).
        let mut remarked: Vec<Inst> = Vec::new();
        for _ in 0..MAX_ROUNDS {
            // The CFG's edges and the loop forest, kept current by every change below;
            // nothing is recomputed when they are valid (the CFG's order may be stale).
            if !cx.analyses.cfg_edges_valid() {
                self.ensure(func, cx, Analyses::CFG)?;
            }
            self.ensure(func, cx, Analyses::LOOPS)?;
            let li = &cx.analyses.loops;
            let Some(l) = li
                .innermost_loop(header)
                .filter(|&l| li.header(l) == header)
            else {
                break;
            };
            candidates(func, cx, l, &mut self.own, &mut self.cands);
            if self.cands.is_empty() {
                break;
            }
            if let Err((skip, msg)) =
                check_loop(func, cx, l, &mut self.cost_blocks, &mut self.costs)
            {
                if !changed {
                    cx.stats.add(NAME, skip.counter(), 1);
                    cx.remark(NAME, func, Some(header), skip.kind(), msg);
                }
                break;
            }
            if cfg.trivial {
                if let Some(t) = find_trivial(func, cx, l, &mut self.chain) {
                    self.trivial_local(func, cx, l, &t)?;
                    changed = true;
                    continue;
                }
            }
            if !cfg.nontrivial {
                break;
            }
            let cands = core::mem::take(&mut self.cands);
            let picked = self.pick(func, cx, l, &cands, &cfg, &mut remarked);
            self.cands = cands;
            let Some((cand, nsucc)) = picked? else {
                break;
            };
            let new_headers = self.apply_nontrivial(func, cx, l, cand, nsucc, &cfg)?;
            for h in new_headers {
                updater.add_new_loop(h);
            }
            changed = true;
        }
        if !changed {
            return Ok(PassResult::UNCHANGED);
        }
        self.ensure(func, cx, Analyses::LOOPS)?;
        if !cx.analyses.loops.is_header(header) {
            updater.mark_loop_deleted();
        }
        // The CFG's edges, the loop forest and nonlocal-uses are kept current by each
        // change (the CFG's order goes stale; the dominator tree is not kept).
        let mut kept = cx.analyses.valid().union(Analyses::LOOPS);
        if cx.analyses.cfg_edges_valid() {
            kept = kept.union(Analyses::CFG);
        }
        Ok(PassResult::changed(kept))
    }
}

/// The block that defines `v`.
fn def_block(func: &Function, v: Value) -> Option<Block> {
    match func.dfg.value_def(v) {
        ValueDef::Result(i) => func.layout.inst_block(i),
        ValueDef::Param(b, _) => Some(b),
        ValueDef::Detached => None,
    }
}

/// Is `v` defined outside loop `l` (so the same on every iteration)?
fn invariant(func: &Function, cx: &PassContext<'_>, l: Loop, v: Value) -> bool {
    def_block(func, v).is_some_and(|b| !cx.analyses.loops.contains(l, b))
}

/// Is `v` an integer constant?
fn is_const(func: &Function, v: Value) -> bool {
    matches!(
        func.dfg.value_def(v),
        ValueDef::Result(i) if matches!(func.dfg.inst(i), InstructionData::IntConst { .. })
    )
}

/// The invariant conditional terminators of blocks of `l` itself (not of its sub-loops,
/// which were visited first, as in LLVM), with non-constant conditions.
/// Written to `out`; `own` is scratch.
fn candidates(
    func: &Function,
    cx: &PassContext<'_>,
    l: Loop,
    own: &mut Vec<Block>,
    out: &mut Vec<Candidate>,
) {
    let li = &cx.analyses.loops;
    out.clear();
    // The loop's own blocks, its subloops' ranges jumped over: filtering every block of
    // the nest made each level of a deep nest walk all the levels below it (quadratic).
    own.clear();
    li.own_blocks(l, own);
    for &b in own.iter() {
        let Some(t) = func.terminator(b) else {
            continue;
        };
        let cond = match func.dfg.inst(t) {
            InstructionData::Brif { arg, .. } | InstructionData::BrTable { arg, .. } => *arg,
            _ => continue,
        };
        if invariant(func, cx, l, cond) && !is_const(func, cond) {
            out.push(Candidate {
                block: b,
                inst: t,
                cond,
            });
        }
    }
}

/// The loop-level refusals: irreducible cycles, no preheader, convergent operations.
///
/// On success `blocks` holds the loop's blocks ([`gyre_analysis::LoopInfo::blocks`]
/// order) and `costs` their sizes for the cost model (instructions other than constants),
/// counted in the same walk as the convergence check.
fn check_loop(
    func: &Function,
    cx: &PassContext<'_>,
    l: Loop,
    blocks: &mut Vec<Block>,
    costs: &mut Vec<u64>,
) -> Result<(), (Skip, String)> {
    let li = &cx.analyses.loops;
    let header = li.header(l);
    if li.contains_irreducible(l) || li.in_irreducible_cycle(header) {
        return Err((
            Skip::Irreducible,
            "the loop is in or around an irreducible cycle".into(),
        ));
    }
    let pre = li.preheader(l, &cx.analyses.cfg);
    let pre_jumps = pre
        .and_then(|p| func.terminator(p))
        .is_some_and(|t| matches!(func.dfg.inst(t), InstructionData::Jump { .. }));
    if !pre_jumps {
        return Err((
            Skip::NotLoopSimplifyForm,
            "the loop has no preheader ending in a jump (run loop-simplify first)".into(),
        ));
    }
    blocks.clear();
    costs.clear();
    for b in li.blocks(l) {
        let mut cost = 0;
        for i in func.layout.block_insts(b) {
            let op = func.dfg.inst(i).opcode();
            cost += u64::from(!matches!(op, Opcode::Iconst | Opcode::Fconst));
            if op.is_convergent() {
                return Err((
                    Skip::Convergent,
                    format!(
                        "the loop holds a convergent operation ({}) in {b}: hoisting a \
                         branch would change its control dependence",
                        op.name()
                    ),
                ));
            }
        }
        blocks.push(b);
        costs.push(cost);
    }
    Ok(())
}

/// The blocks reached from the header along unconditional jumps inside `l` itself
/// (stopping at a sub-loop, a block with side effects, or a conditional branch, which is
/// included): on the first iteration each of them runs before anything observable.
/// Writes the chain to `chain`; returns false when the last block has side effects.
fn header_chain(func: &Function, cx: &PassContext<'_>, l: Loop, chain: &mut Vec<Block>) -> bool {
    let li = &cx.analyses.loops;
    chain.clear();
    chain.push(li.header(l));
    loop {
        let b = *chain.last().expect("non-empty");
        let effects = func
            .layout
            .block_insts(b)
            .any(|i| func.dfg.inst(i).opcode().has_side_effects());
        if effects {
            return false;
        }
        let t = func.terminator(b).expect("a CFG block has a terminator");
        let InstructionData::Jump { dest } = func.dfg.inst(t) else {
            return true;
        };
        let n = dest.block;
        if li.innermost_loop(n) != Some(l) || chain.contains(&n) {
            return true;
        }
        chain.push(n);
    }
}

/// The first trivially unswitchable branch on the header's chain, if any.
/// `chain` is scratch.
fn find_trivial(
    func: &Function,
    cx: &PassContext<'_>,
    l: Loop,
    chain: &mut Vec<Block>,
) -> Option<Trivial> {
    let li = &cx.analyses.loops;
    let pure = header_chain(func, cx, l, chain);
    if !pure {
        return None;
    }
    let b = *chain.last().expect("non-empty");
    let t = func.terminator(b)?;
    let exits = |bc: &BlockCall| {
        !li.contains(l, bc.block)
            && func
                .dfg
                .block_call_args(bc)
                .iter()
                .all(|&v| invariant(func, cx, l, v))
    };
    match func.dfg.inst(t) {
        InstructionData::Brif { arg, blocks } => {
            if !invariant(func, cx, l, *arg) || is_const(func, *arg) {
                return None;
            }
            let inside = [
                li.contains(l, blocks[0].block),
                li.contains(l, blocks[1].block),
            ];
            match inside {
                [true, false] if exits(&blocks[1]) => Some(Trivial::Brif {
                    block: b,
                    exit_side: 1,
                }),
                [false, true] if exits(&blocks[0]) => Some(Trivial::Brif {
                    block: b,
                    exit_side: 0,
                }),
                _ => None,
            }
        }
        InstructionData::BrTable { arg, table } => {
            if !invariant(func, cx, l, *arg) || is_const(func, *arg) {
                return None;
            }
            let jt = func.dfg.jump_table(*table);
            let default_exits = exits(&jt.default);
            let any_case_exits = jt.cases.iter().any(|(_, bc)| exits(bc));
            let inside_left = jt.cases.iter().any(|(_, bc)| li.contains(l, bc.block))
                || li.contains(l, jt.default.block);
            // Something must exit through hoistable edges and something must stay.
            let stays = if default_exits {
                jt.cases.iter().any(|(_, bc)| !exits(bc))
            } else {
                inside_left
            };
            ((default_exits || any_case_exits) && stays).then_some(Trivial::Table { block: b })
        }
        _ => None,
    }
}

/// A copy of a block call (its own argument list).
fn copy_call(func: &mut Function, bc: &BlockCall) -> BlockCall {
    let args: Vec<Value> = func.dfg.block_call_args(bc).to_vec();
    BlockCall::new(bc.block, &args, &mut func.dfg.value_lists)
}

/// Are two block calls the same target with the same arguments?
fn same_call(func: &Function, a: &BlockCall, b: &BlockCall) -> bool {
    a.block == b.block && func.dfg.block_call_args(a) == func.dfg.block_call_args(b)
}

impl SimpleLoopUnswitch {
    fn ensure(
        &self,
        func: &Function,
        cx: &mut PassContext<'_>,
        what: Analyses,
    ) -> Result<(), PassError> {
        cx.analyses
            .ensure(func, what)
            .map_err(|e| PassError(format!("{NAME}: @{}: {e}", func.name)))
    }

    /// After an edit: drop every analysis, then re-establish loop-simplify and LCSSA form
    /// on the function (recomputing the CFG, dominator tree and loop forest once).
    fn resimplify(
        &mut self,
        func: &mut Function,
        cx: &mut PassContext<'_>,
    ) -> Result<(), PassError> {
        cx.analyses.invalidate(Analyses::NONE);
        let r = self.simplify.run(func, cx)?;
        cx.analyses.invalidate(r.preserved);
        let r = self.lcssa.run(func, cx)?;
        cx.analyses.invalidate(r.preserved);
        Ok(())
    }

    /// Hoist a trivial branch into the preheader.
    fn apply_trivial(
        &mut self,
        func: &mut Function,
        cx: &mut PassContext<'_>,
        l: Loop,
        t: Trivial,
    ) {
        let li = &cx.analyses.loops;
        let header = li.header(l);
        let pre = li
            .preheader(l, &cx.analyses.cfg)
            .expect("checked: the loop has a preheader");
        let inside: FxHashSet<Block> = li.blocks(l).collect();
        let pre_term = func.terminator(pre).expect("terminator");
        let InstructionData::Jump { dest } = *func.dfg.inst(pre_term) else {
            unreachable!("checked: the preheader ends in a jump");
        };
        let enter = copy_call(func, &dest);
        debug_assert_eq!(enter.block, header);
        match t {
            Trivial::Brif { block, exit_side } => {
                let term = func.terminator(block).expect("terminator");
                let InstructionData::Brif { arg, blocks } = *func.dfg.inst(term) else {
                    unreachable!("found as a brif");
                };
                let exit = copy_call(func, &blocks[exit_side]);
                let mut both = [enter, enter];
                both[exit_side] = exit;
                both[1 - exit_side] = enter;
                func.dfg
                    .replace_inst(pre_term, InstructionData::Brif { arg, blocks: both });
                func.dfg.replace_inst(
                    term,
                    InstructionData::Jump {
                        dest: blocks[1 - exit_side],
                    },
                );
                cx.stats.add(NAME, "NumTrivial", 1);
            }
            Trivial::Table { block } => {
                let term = func.terminator(block).expect("terminator");
                let InstructionData::BrTable { arg, table } = *func.dfg.inst(term) else {
                    unreachable!("found as a br_table");
                };
                let jt = func.dfg.jump_table(table).clone();
                let exits = |func: &Function, bc: &BlockCall| {
                    !inside.contains(&bc.block)
                        && func
                            .dfg
                            .block_call_args(bc)
                            .iter()
                            .all(|&v| def_block(func, v).is_some_and(|b| !inside.contains(&b)))
                };
                let default_exits = exits(func, &jt.default);
                let mut hoisted: Vec<(i64, BlockCall)> = Vec::new();
                let mut kept: Vec<(i64, BlockCall)> = Vec::new();
                for &(k, bc) in &jt.cases {
                    if exits(func, &bc) {
                        hoisted.push((k, bc));
                    } else {
                        kept.push((k, bc));
                    }
                }
                // The preheader's table: exiting cases (and the default, if it exits)
                // leave; the rest enter the loop.
                let mut pre_cases = Vec::new();
                for &(k, bc) in &hoisted {
                    let c = copy_call(func, &bc);
                    pre_cases.push((k, c));
                }
                let pre_default = if default_exits {
                    for &(k, _) in &kept {
                        let c = copy_call(func, &enter);
                        pre_cases.push((k, c));
                    }
                    copy_call(func, &jt.default)
                } else {
                    enter
                };
                pre_cases.sort_by_key(|&(k, _)| k);
                let pre_jt = func
                    .dfg
                    .make_jump_table(JumpTableData::new(pre_default, pre_cases));
                func.dfg
                    .replace_inst(pre_term, InstructionData::BrTable { arg, table: pre_jt });
                // The loop's table: the exiting values cannot reach it any more. When the
                // default exited, the first kept case becomes the default.
                let (loop_default, loop_cases) = if default_exits {
                    let (_, first) = kept[0];
                    (first, kept[1..].to_vec())
                } else {
                    (jt.default, kept)
                };
                if loop_cases
                    .iter()
                    .all(|(_, bc)| same_call(func, bc, &loop_default))
                {
                    func.dfg
                        .replace_inst(term, InstructionData::Jump { dest: loop_default });
                } else {
                    let new = func
                        .dfg
                        .make_jump_table(JumpTableData::new(loop_default, loop_cases));
                    func.dfg
                        .replace_inst(term, InstructionData::BrTable { arg, table: new });
                }
                cx.stats.add(NAME, "NumSwitchesTrivial", 1);
            }
        }
    }

    /// Choose the cheapest uniform candidate under the threshold (LLVM's cost model with
    /// its multiplier). Returns it with its number of distinct successors.
    fn pick(
        &mut self,
        func: &Function,
        cx: &mut PassContext<'_>,
        l: Loop,
        cands: &[Candidate],
        cfg: &Config,
        remarked: &mut Vec<Inst>,
    ) -> Result<Option<(Candidate, usize)>, PassError> {
        let mut ok = core::mem::take(&mut self.ok);
        ok.clear();
        let r = self.pick_from(func, cx, l, cands, cfg, remarked, &mut ok);
        self.ok = ok;
        r
    }

    /// [`SimpleLoopUnswitch::pick`] with the buffer for the uniform candidates.
    #[allow(clippy::too_many_arguments)]
    fn pick_from(
        &mut self,
        func: &Function,
        cx: &mut PassContext<'_>,
        l: Loop,
        cands: &[Candidate],
        cfg: &Config,
        remarked: &mut Vec<Inst>,
        ok: &mut Vec<Candidate>,
    ) -> Result<Option<(Candidate, usize)>, PassError> {
        let header = cx.analyses.loops.header(l);
        for &c in cands {
            if cfg.uniform_only && self.divergent(func, cx, c.cond)? {
                if !remarked.contains(&c.inst) {
                    remarked.push(c.inst);
                    let skip = Skip::DivergentCondition;
                    cx.stats.add(NAME, skip.counter(), 1);
                    cx.remark(
                        NAME,
                        func,
                        Some(header),
                        skip.kind(),
                        format!(
                            "the condition {} of the branch in {} may differ between the \
                             threads of a warp: each warp would run both copies",
                            c.cond, c.block
                        ),
                    );
                }
                continue;
            }
            ok.push(c);
        }
        if ok.is_empty() {
            return Ok(None);
        }
        let li = &cx.analyses.loops;
        // Dominance inside the loop (all it asks about), computed for the loop alone.
        self.dom.compute(li, &cx.analyses.cfg, l);
        let dt = &self.dom;
        let gcfg = &cx.analyses.cfg;
        // The loop's blocks and each one's size, once (the part not duplicated sums them
        // again per successor): counted by `check_loop` in this round.
        let (blocks, costs) = (&*self.cost_blocks, &*self.costs);
        debug_assert_eq!(blocks.len(), li.num_blocks(l));
        let succs = &mut self.succs;
        let loop_cost: u64 = costs.iter().sum();
        // The multiplier (LLVM's `CalculateUnswitchCostMultiplier`): clones all candidates
        // may cause, and the loop's siblings.
        let mult = if cfg.multiplier {
            let siblings = match li.parent(l) {
                Some(p) => li.children(p).len() as u32,
                None => (li.top_level().len() as u32) / cfg.toplevel_div,
            }
            .max(1);
            let t = cfg.threshold.max(1);
            if u64::from(siblings) > t {
                // Saturated whatever the clones: the candidates' successors are not
                // looked at (a function with many nests costs each outer loop this way).
                t
            } else {
                let latch = li.latch(l);
                let mut clones: u32 = 0;
                for c in cands {
                    let skip_exiting = latch.is_some_and(|lt| dt.dominates(c.block, lt));
                    distinct_succs(func, c.inst, succs);
                    let n = succs
                        .iter()
                        .filter(|&&s| !skip_exiting || li.contains(l, s))
                        .count() as u32;
                    clones += n.max(1).ilog2();
                }
                let power = clones.saturating_sub(cfg.unscaled);
                if u64::from(power) > u64::from(t.ilog2()) {
                    t
                } else {
                    (u64::from(siblings) << power).min(t)
                }
            }
        } else {
            1
        };
        // The size of the blocks each block dominates, from prefix sums over the dominator
        // tree's preorder (computed the first time the part not duplicated is asked).
        let mut sums_ready = false;
        let mut best: Option<(u64, u64, Candidate, usize)> = None;
        for &c in ok.iter() {
            let copies = copies_needed(func, c.inst, &mut self.calls);
            if copies < 2 {
                // Every way leads to the same place with the same arguments.
                continue;
            }
            distinct_succs(func, c.inst, succs);
            let mut not_dup = 0u64;
            for &s in succs.iter() {
                if !li.contains(l, s) || s == header {
                    continue;
                }
                let exclusive = gcfg
                    .preds(s)
                    .iter()
                    .all(|&p| p == c.block || dt.dominates(s, p));
                if exclusive {
                    if !sums_ready {
                        dt.subtree_sums(blocks, costs, &mut self.acc);
                        sums_ready = true;
                    }
                    not_dup += dt.dominated_size(s, &self.acc);
                }
            }
            let base = loop_cost.saturating_sub(not_dup) * (copies as u64 - 1);
            let cost = base.saturating_mul(mult);
            if best.is_none_or(|(bc, ..)| cost < bc) {
                best = Some((cost, base, c, copies));
            }
        }
        let Some((cost, base, c, n)) = best else {
            return Ok(None);
        };
        if cost >= cfg.threshold {
            if base < cfg.threshold {
                cx.stats.add(NAME, "NumCostMultiplierSkipped", 1);
            }
            let skip = Skip::TooCostly;
            cx.stats.add(NAME, skip.counter(), 1);
            cx.remark(
                NAME,
                func,
                Some(header),
                skip.kind(),
                format!(
                    "the cheapest candidate (the branch in {}) costs {base} x multiplier \
                     {mult} = {cost}, at or above unswitch-threshold {}",
                    c.block, cfg.threshold
                ),
            );
            return Ok(None);
        }
        Ok(Some((c, n)))
    }

    /// Clone the loop once per successor of the candidate beyond the first, dispatch in
    /// the preheader, fold the branch in each copy. Returns the headers of the copies'
    /// outermost loops.
    fn apply_nontrivial(
        &mut self,
        func: &mut Function,
        cx: &mut PassContext<'_>,
        l: Loop,
        cand: Candidate,
        nsucc: usize,
        cfg: &Config,
    ) -> Result<Vec<Block>, PassError> {
        let li = &cx.analyses.loops;
        let pre = li
            .preheader(l, &cx.analyses.cfg)
            .expect("checked: the loop has a preheader");
        header_chain(func, cx, l, &mut self.chain);
        let every_iteration = self.chain.contains(&cand.block);
        let local = can_update_locally(cx, l);
        // The exits, read before the copies change the CFG: distinct, in order of first
        // appearance (as `LoopInfo::unique_exit_blocks`, without its hash set).
        let mut exits = core::mem::take(&mut self.exits);
        exits.clear();
        self.seen.clear();
        // The loop's blocks as `check_loop` listed them in this round (nothing changed
        // since): walking the forest's list again costs more.
        debug_assert_eq!(self.cost_blocks.len(), li.num_blocks(l));
        for &b in self.cost_blocks.iter() {
            for &s in cx.analyses.cfg.succs(b) {
                if !li.contains(l, s) && self.seen.insert(s) {
                    exits.push(s);
                }
            }
        }
        let mut blocks = core::mem::take(&mut self.lblocks);
        let mut copies = core::mem::take(&mut self.copies);
        let mut args = core::mem::take(&mut self.args);
        let r = self.apply_nontrivial_with(
            func,
            cx,
            l,
            cand,
            nsucc,
            cfg,
            pre,
            every_iteration,
            local,
            &exits,
            &mut blocks,
            &mut args,
            &mut copies,
        );
        (self.exits, self.lblocks, self.copies, self.args) = (exits, blocks, copies, args);
        r
    }

    /// [`SimpleLoopUnswitch::apply_nontrivial`] once the preheader, the exits and whether
    /// the candidate runs on every iteration are known.
    #[allow(clippy::too_many_arguments)]
    fn apply_nontrivial_with(
        &mut self,
        func: &mut Function,
        cx: &mut PassContext<'_>,
        l: Loop,
        cand: Candidate,
        nsucc: usize,
        cfg: &Config,
        pre: Block,
        every_iteration: bool,
        local: bool,
        exits: &[Block],
        blocks: &mut Vec<Block>,
        enter_args: &mut Vec<Value>,
        copies: &mut Vec<Vec<Block>>,
    ) -> Result<Vec<Block>, PassError> {
        let li = &cx.analyses.loops;
        let header = li.header(l);
        blocks.clear();
        if local {
            loop_blocks_in_layout(func, li, l, self.cost_blocks.len(), blocks);
        } else {
            blocks.extend(func.layout.blocks().filter(|&b| li.contains(l, b)));
        }
        let blocks = &*blocks;
        let last = *blocks.last().expect("a loop has blocks");
        let pre_term = func.terminator(pre).expect("terminator");
        let InstructionData::Jump { dest: enter } = *func.dfg.inst(pre_term) else {
            unreachable!("checked: the preheader ends in a jump");
        };
        enter_args.clear();
        enter_args.extend_from_slice(func.dfg.block_call_args(&enter));
        let enter_args = &*enter_args;
        // Freeze the condition unless it is branched on every iteration (then the
        // original already branched on it whenever the loop ran) or cannot be poison.
        let mut cond = cand.cond;
        // The preheader uses the condition now (nonlocal-uses is kept when it was valid).
        if cx.analyses.nonlocal.is_valid() {
            cx.analyses.nonlocal.set(cand.cond, true);
        }
        if cfg.freeze && !every_iteration && !not_poison(func, cand.cond) {
            let ty = func.dfg.value_type(cand.cond);
            let (fi, fv) = func.dfg.make_inst_with_result(
                InstructionData::Unary {
                    opcode: Opcode::Freeze,
                    arg: cand.cond,
                },
                ty,
            );
            func.layout.insert_inst_before(fi, pre_term);
            cond = fv;
            if let Some(&d) = self.div.get(cand.cond.index()) {
                self.set_div(fv, d);
            }
            cx.stats.add(NAME, "NumFreezes", 1);
        }
        // Copy 0 is the original loop; copies 1.. are clones.
        copies.truncate(1);
        if copies.is_empty() {
            copies.push(Vec::new());
        }
        copies[0].clear();
        copies[0].extend_from_slice(blocks);
        // Where each copy's side of the folded branch goes: a `brif`'s sides (every
        // `brif` on the condition folds, each to its own side `j`), a `br_table`'s groups
        // of equal block calls, default first (only the candidate's table folds).
        let table_groups = match func.dfg.inst(cand.inst) {
            InstructionData::BrTable { table, .. } => {
                let jt = func.dfg.jump_table(*table);
                self.calls.clear();
                self.calls.push(jt.default);
                for (_, bc) in &jt.cases {
                    if !self.calls.iter().any(|g| same_call(func, g, bc)) {
                        self.calls.push(*bc);
                    }
                }
                debug_assert_eq!(self.calls.len(), nsucc);
                self.fold_to.clear();
                self.fold_to.extend(self.calls.iter().map(|g| g.block));
                true
            }
            _ => false,
        };
        self.heads.clear();
        self.heads.push(header);
        self.cand_in.clear();
        self.cand_in.push(cand.block);
        let mut anchor = last;
        for j in 1..nsucc {
            // Only the blocks copy `j` reaches from its header once its branch is folded
            // are cloned: cloning the whole loop and deleting the other sides' blocks
            // (LLVM's way) made and deleted about a third of what a nest's unswitch
            // copied. A block the copy does not reach defines nothing a reached block
            // uses (its uses are in blocks it dominates, and the copy's paths are paths
            // of the loop), so the clone needs no value of it; the only edges of the
            // clone to a block not cloned are the folded sides, replaced below.
            self.reach.clear();
            self.work.clear();
            self.reach.insert(header);
            self.work.push(header);
            let li = &cx.analyses.loops;
            while let Some(b) = self.work.pop() {
                let Some(t) = func.terminator(b) else {
                    continue;
                };
                let (reach, work) = (&mut self.reach, &mut self.work);
                let mut visit = |s: Block| {
                    if li.contains(l, s) && reach.insert(s) {
                        work.push(s);
                    }
                };
                match func.dfg.inst(t) {
                    InstructionData::Brif { arg, blocks: sides }
                        if !table_groups && *arg == cand.cond =>
                    {
                        visit(sides[j].block);
                    }
                    _ if table_groups && b == cand.block => visit(self.fold_to[j]),
                    _ => func.dfg.for_each_dest(t, |bc| visit(bc.block)),
                }
            }
            self.kept.clear();
            self.kept
                .extend(blocks.iter().copied().filter(|&b| self.reach.contains(b)));
            self.map.clear();
            let c = clone_blocks(func, &self.kept, &mut self.map, Place::After(anchor))
                .map_err(|e| PassError(format!("{NAME}: @{}: {e}", func.name)))?;
            anchor = *c.last().expect("non-empty");
            self.heads.push(self.map.map_block(header));
            self.cand_in.push(self.map.map_block(cand.block));
            // A copy's values are as uniform as their originals: the copies are entered
            // on a uniform condition (or uniformity is not asked).
            for (from, to) in self.map.values() {
                let d = self.div.get(from.index()).copied().unwrap_or(0);
                if d != 0 {
                    if self.div.len() <= to.index() {
                        self.div.resize(to.index() + 1, 0);
                    }
                    self.div[to.index()] = d;
                }
            }
            copies.push(c);
        }
        cx.stats.add(NAME, "NumLoopsCloned", (nsucc - 1) as u64);
        let heads = &*self.heads;
        let enter_copy = |func: &mut Function, j: usize| {
            BlockCall::new(heads[j], enter_args, &mut func.dfg.value_lists)
        };
        self.touched.clear();
        match func.dfg.inst(cand.inst).clone() {
            InstructionData::Brif { .. } => {
                let to = [enter_copy(func, 0), enter_copy(func, 1)];
                func.dfg.replace_inst(
                    pre_term,
                    InstructionData::Brif {
                        arg: cond,
                        blocks: to,
                    },
                );
                // Every brif on the condition folds in each copy (LLVM replaces the
                // condition's uses in the loop).
                for (j, copy) in copies.iter().enumerate() {
                    for &b in copy {
                        let t = func.terminator(b).expect("terminator");
                        if let InstructionData::Brif { arg, blocks } = *func.dfg.inst(t) {
                            if arg == cand.cond {
                                func.dfg
                                    .replace_inst(t, InstructionData::Jump { dest: blocks[j] });
                                if j == 0 {
                                    self.touched.insert(b);
                                }
                            }
                        }
                    }
                }
                cx.stats.add(NAME, "NumBranches", 1);
            }
            InstructionData::BrTable { table, .. } => {
                // Groups: the distinct successors (target and arguments), default first.
                let jt = func.dfg.jump_table(table).clone();
                let mut groups: Vec<BlockCall> = vec![jt.default];
                let mut case_group: Vec<usize> = Vec::with_capacity(jt.cases.len());
                for (_, bc) in &jt.cases {
                    let g = match groups.iter().position(|g| same_call(func, g, bc)) {
                        Some(g) => g,
                        None => {
                            groups.push(*bc);
                            groups.len() - 1
                        }
                    };
                    case_group.push(g);
                }
                debug_assert_eq!(groups.len(), nsucc);
                let default = enter_copy(func, 0);
                let mut cases = Vec::with_capacity(jt.cases.len());
                for (k, &(v, _)) in jt.cases.iter().enumerate() {
                    if case_group[k] != 0 {
                        cases.push((v, enter_copy(func, case_group[k])));
                    }
                }
                let pt = func.dfg.make_jump_table(JumpTableData::new(default, cases));
                func.dfg.replace_inst(
                    pre_term,
                    InstructionData::BrTable {
                        arg: cond,
                        table: pt,
                    },
                );
                for j in 0..copies.len() {
                    let b = self.cand_in[j];
                    let t = func.terminator(b).expect("terminator");
                    let InstructionData::BrTable { table, .. } = *func.dfg.inst(t) else {
                        unreachable!("the copy of a br_table");
                    };
                    let cjt = func.dfg.jump_table(table);
                    let dest = if j == 0 {
                        cjt.default
                    } else {
                        let k = case_group.iter().position(|&g| g == j).expect("a case");
                        cjt.cases[k].1
                    };
                    func.dfg.replace_inst(t, InstructionData::Jump { dest });
                    if j == 0 {
                        self.touched.insert(b);
                    }
                }
                cx.stats.add(NAME, "NumSwitches", 1);
            }
            _ => unreachable!("candidates are brif or br_table"),
        }
        if local {
            if let Some(h) = self.finish_local(func, cx, l, pre, copies, exits, cond, enter_args)? {
                return Ok(h);
            }
        }
        remove_unreachable(func, copies);
        self.resimplify(func, cx)?;
        self.ensure(func, cx, Analyses::LOOPS)?;
        // The copies' outermost loops, for the adaptor to visit.
        let li = &cx.analyses.loops;
        let mut new_headers = Vec::new();
        for copy in &copies[1..] {
            let set: FxHashSet<Block> = copy.iter().copied().collect();
            for &b in copy {
                if !li.is_header(b) {
                    continue;
                }
                let Some(lb) = li.innermost_loop(b) else {
                    continue;
                };
                let outer = li.parent(lb).is_none_or(|p| !set.contains(&li.header(p)));
                if outer {
                    new_headers.push(b);
                }
            }
        }
        Ok(new_headers)
    }
}

impl SimpleLoopUnswitch {
    /// Record what is known of the uniformity of `v` (1 uniform, 2 divergent).
    fn set_div(&mut self, v: Value, d: u8) {
        if self.div.len() <= v.index() {
            self.div.resize(v.index() + 1, 0);
        }
        self.div[v.index()] = d;
    }

    /// May `v` differ between the threads of a warp? A value whose operands lead, through
    /// propagating instructions, only to uniform sources and a kernel's parameters is
    /// derived without the analysis (the common case: a condition on kernel arguments).
    /// Otherwise the function's uniformity analysis is read (once per function visit)
    /// and kept for the values it knew; copies made since inherit their originals'
    /// answers, and a new instruction result is derived from its operands. Only a value
    /// none of that covers (a new block parameter) has the analysis computed again.
    fn divergent(
        &mut self,
        func: &Function,
        cx: &mut PassContext<'_>,
        v: Value,
    ) -> Result<bool, PassError> {
        if let Some(&d) = self.div.get(v.index()).filter(|&&d| d != 0) {
            return Ok(d == 2);
        }
        // A kernel's parameters (entry block parameters: no edge enters the entry) are
        // uniform, so a condition on them needs no function-wide analysis.
        let entry_uniform = func.kind == FuncKind::Kernel
            && func
                .entry_block()
                .is_some_and(|e| cx.analyses.cfg.preds(e).is_empty());
        if let Some(d) = self.derive(func, v, entry_uniform) {
            self.set_div(v, 1 + u8::from(d));
            return Ok(d);
        }
        self.ensure(func, cx, Analyses::UNIFORMITY.union(Analyses::LOOPS))?;
        let u = &cx.analyses.uniformity;
        self.div.clear();
        self.div.resize(func.dfg.num_values(), 0);
        for w in func.dfg.values() {
            self.div[w.index()] = 1 + u8::from(u.is_divergent(w));
        }
        Ok(self.div.get(v.index()).is_none_or(|&d| d != 1))
    }

    /// The uniformity of an instruction result not in the snapshot, from its operands:
    /// divergent iff a chain of propagating instructions reaches a divergent value or
    /// source (sync and temporal divergence reach block parameters only). `None` when
    /// the walk meets a value it cannot judge or grows past a bound. With
    /// `entry_uniform`, the entry block's parameters are uniform (a kernel's parameters,
    /// as the analysis seeds them).
    fn derive(&self, func: &Function, v: Value, entry_uniform: bool) -> Option<bool> {
        use gyre_analysis::uniformity::{source_kind, SourceKind};
        let mut work = vec![v];
        let mut seen = 0;
        let mut divergent = false;
        while let Some(w) = work.pop() {
            seen += 1;
            if seen > 32 {
                return None;
            }
            match self.div.get(w.index()).copied().unwrap_or(0) {
                1 => continue,
                2 => {
                    divergent = true;
                    continue;
                }
                _ => {}
            }
            let i = match func.dfg.value_def(w) {
                ValueDef::Result(i) => i,
                ValueDef::Param(b, _) if entry_uniform && func.entry_block() == Some(b) => continue,
                _ => return None,
            };
            match source_kind(func, i) {
                SourceKind::AlwaysUniform => {}
                SourceKind::Divergent => divergent = true,
                SourceKind::Propagated => func.dfg.for_each_inst_value(i, |a| work.push(a)),
            }
        }
        Some(divergent)
    }

    /// Trivial unswitching with the analyses kept current: after the hoisting
    /// ([`SimpleLoopUnswitch::apply_trivial`]) the preheader, which branches now, gets a
    /// new preheader block, and an exit still reached from inside the loop gets a
    /// dedicated block for those edges (what `loop-simplify` would do). An exit outside
    /// the loop around `l` (the edges leave several levels) also gets a dedicated block
    /// for the preheader's new edge, which leaves that loop now, and the values of the
    /// loops left become parameters of the new blocks (LCSSA). The CFG's edges and the
    /// loop forest are updated in place. When the hoist leaves `l` without an exit into
    /// the loop around it, the forms are re-established on the function here.
    fn trivial_local(
        &mut self,
        func: &mut Function,
        cx: &mut PassContext<'_>,
        l: Loop,
        t: &Trivial,
    ) -> Result<(), PassError> {
        let li = &cx.analyses.loops;
        let parent = li.parent(l);
        let header = li.header(l);
        let pre = li
            .preheader(l, &cx.analyses.cfg)
            .expect("checked: the loop has a preheader");
        let block = match *t {
            Trivial::Brif { block, .. } | Trivial::Table { block } => block,
        };
        let term = func.terminator(block).expect("terminator");
        // The exits the preheader will branch to, and the values it will pass them.
        let mut exits: Vec<Block> = Vec::new();
        let mut used: Vec<Value> = Vec::new();
        let outside = |func: &Function, bc: &BlockCall| {
            !li.contains(l, bc.block)
                && func
                    .dfg
                    .block_call_args(bc)
                    .iter()
                    .all(|&v| invariant(func, cx, l, v))
        };
        match (*t, func.dfg.inst(term)) {
            (Trivial::Brif { exit_side, .. }, InstructionData::Brif { arg, blocks }) => {
                exits.push(blocks[exit_side].block);
                used.extend_from_slice(func.dfg.block_call_args(&blocks[exit_side]));
                used.push(*arg);
            }
            (Trivial::Table { .. }, InstructionData::BrTable { arg, .. }) => {
                func.dfg.for_each_dest(term, |bc| {
                    if outside(func, bc) {
                        exits.push(bc.block);
                        used.extend_from_slice(func.dfg.block_call_args(bc));
                    }
                });
                used.push(*arg);
            }
            _ => unreachable!("found as a brif or br_table"),
        }
        exits.sort_unstable();
        exits.dedup();
        // Per exit, the outermost loop its edges leave (`l` when the exit is in the loop
        // around `l`).
        let lefts: Vec<Loop> = exits.iter().map(|&e| outermost_left(li, l, e)).collect();
        let pre_term = func.terminator(pre).expect("terminator");
        used.extend_from_slice(func.dfg.inst_args(pre_term));
        func.dfg.for_each_dest(pre_term, |bc| {
            used.extend_from_slice(func.dfg.block_call_args(bc));
        });
        self.apply_trivial(func, cx, l, *t);
        let np = split_predecessors(func, header, &[pre], Place::Before(header), |_, _| true);
        let err = |e: gyre_analysis::CfgError| PassError(format!("{NAME}: {e}"));
        let cfg = &mut cx.analyses.cfg;
        for b in [pre, np, block] {
            cfg.update_block(func, b).map_err(err)?;
        }
        // A loop whose last exit into the loop around it was hoisted is no longer inside
        // that loop (it runs forever once entered): the nesting and LCSSA change beyond
        // this loop, so the forms are re-established on the function instead.
        if let Some(q) = parent {
            let li = &cx.analyses.loops;
            let exits_into_q = li.blocks(l).any(|b| {
                cx.analyses
                    .cfg
                    .succs(b)
                    .iter()
                    .any(|&s| !li.contains(l, s) && li.contains(q, s))
            });
            if !exits_into_q {
                self.resimplify(func, cx)?;
                return Ok(());
            }
        }
        let cfg = &mut cx.analyses.cfg;
        let li = &mut cx.analyses.loops;
        li.add_block(np, parent);
        for (&e, &left) in exits.iter().zip(&lefts) {
            // A value defined in a loop the edges leave becomes a parameter of the new
            // block (LCSSA for each of those loops); others are passed on as they are.
            let mut inside: Vec<Block> = cfg
                .preds(e)
                .iter()
                .copied()
                .filter(|&p| li.contains(l, p))
                .collect();
            inside.sort_unstable();
            inside.dedup();
            if !inside.is_empty() {
                let li_ref = &*li;
                let el = split_predecessors(func, e, &inside, Place::Before(e), |f, v| {
                    def_block(f, v).is_some_and(|d| !li_ref.contains(left, d))
                });
                cfg.update_block(func, el).map_err(err)?;
                for &p in &inside {
                    cfg.update_block(func, p).map_err(err)?;
                }
                let x = li.innermost_loop(e);
                li.add_block(el, x);
            }
            if left != l {
                // The exit lies outside the loop around `l`: the preheader's new edge
                // leaves that loop (and those up to `left`) too, so it gets a dedicated
                // block of its own.
                let li_ref = &*li;
                let ep = split_predecessors(func, e, &[pre], Place::Before(e), |f, v| {
                    def_block(f, v).is_some_and(|d| !li_ref.contains(left, d))
                });
                cfg.update_block(func, ep).map_err(err)?;
                cfg.update_block(func, pre).map_err(err)?;
                let x = li.innermost_loop(e);
                li.add_block(ep, x);
            }
        }
        if cx.analyses.nonlocal.is_valid() {
            for v in used {
                cx.analyses.nonlocal.set(v, true);
            }
        }
        cx.analyses.invalidate(
            Analyses::CFG
                .union(Analyses::LOOPS)
                .union(Analyses::NONLOCAL_USES),
        );
        Ok(())
    }

    /// The end of a non-trivial unswitch with the analyses kept current: delete what the
    /// original no longer reaches (a clone holds only what its copy reaches, and the
    /// headers of the copies are `self.heads`), give each copy a preheader and each exit reached by
    /// several copies one dedicated block per copy (the copies' values then merge in the
    /// exit's parameters: LCSSA), update the CFG's edges, and rebuild the loops of the
    /// outermost loop around `l` ([`gyre_analysis::LoopInfo::replace_nest`]). All of it
    /// costs the size of that nest and of the copies. Returns the headers of the copies'
    /// outermost loops.
    #[allow(clippy::too_many_arguments)]
    fn finish_local(
        &mut self,
        func: &mut Function,
        cx: &mut PassContext<'_>,
        l: Loop,
        pre: Block,
        copies: &[Vec<Block>],
        exits: &[Block],
        cond: Value,
        enter_args: &[Value],
    ) -> Result<Option<Vec<Block>>, PassError> {
        let mut bufs = [
            core::mem::take(&mut self.removed),
            core::mem::take(&mut self.new_blocks),
            core::mem::take(&mut self.region),
        ];
        for b in &mut bufs {
            b.clear();
        }
        let [removed, new_blocks, region] = &mut bufs;
        let r = self.finish_local_with(
            func, cx, l, pre, copies, exits, cond, enter_args, removed, new_blocks, region,
        );
        [self.removed, self.new_blocks, self.region] = bufs;
        r
    }

    /// [`SimpleLoopUnswitch::finish_local`] with its buffers (empty).
    #[allow(clippy::too_many_arguments)]
    fn finish_local_with(
        &mut self,
        func: &mut Function,
        cx: &mut PassContext<'_>,
        l: Loop,
        pre: Block,
        copies: &[Vec<Block>],
        exits: &[Block],
        cond: Value,
        enter_args: &[Value],
        removed: &mut Vec<Block>,
        new_blocks: &mut Vec<Block>,
        region: &mut Vec<Block>,
    ) -> Result<Option<Vec<Block>>, PassError> {
        let li = &cx.analyses.loops;
        let mut outer = l;
        while let Some(p) = li.parent(outer) {
            outer = p;
        }
        // Per block of the copies, its copy (dense scratch: no hashing per change).
        self.copy_of.clear();
        for (j, copy) in copies.iter().enumerate() {
            for &b in copy {
                self.copy_of.set(b, j as u32);
            }
        }
        // What each copy still reaches from its header (the only way into it). The
        // copies are disjoint, so one set of marks serves them all.
        self.reach.clear();
        let mut live = core::mem::take(&mut self.live);
        live.truncate(copies.len());
        live.resize_with(copies.len(), Vec::new);
        let r = self.finish_local_live(
            func, cx, l, pre, copies, exits, cond, enter_args, removed, new_blocks, region, outer,
            &mut live,
        );
        self.live = live;
        r
    }

    /// [`SimpleLoopUnswitch::finish_local_with`] from the reachability walk on, with the
    /// buffer for the blocks each copy still reaches (one per copy, any contents).
    #[allow(clippy::too_many_arguments)]
    fn finish_local_live(
        &mut self,
        func: &mut Function,
        cx: &mut PassContext<'_>,
        l: Loop,
        pre: Block,
        copies: &[Vec<Block>],
        exits: &[Block],
        cond: Value,
        enter_args: &[Value],
        removed: &mut Vec<Block>,
        new_blocks: &mut Vec<Block>,
        region: &mut Vec<Block>,
        outer: Loop,
        live: &mut [Vec<Block>],
    ) -> Result<Option<Vec<Block>>, PassError> {
        let li = &cx.analyses.loops;
        for (j, copy) in copies.iter().enumerate() {
            let j = j as u32;
            let keep = &mut live[j as usize];
            keep.clear();
            if j > 0 {
                // A clone is made of what its copy reaches (`apply_nontrivial_with`).
                for &b in copy {
                    self.reach.insert(b);
                }
                keep.extend_from_slice(copy);
                continue;
            }
            let h = self.heads[j as usize];
            self.work.clear();
            self.work.push(h);
            self.reach.insert(h);
            while let Some(b) = self.work.pop() {
                let Some(t) = func.terminator(b) else {
                    continue;
                };
                let (copy_of, reach, work) = (&self.copy_of, &mut self.reach, &mut self.work);
                func.dfg.for_each_dest(t, |bc| {
                    if copy_of.get(bc.block) == Some(j) && reach.insert(bc.block) {
                        work.push(bc.block);
                    }
                });
            }
            for &b in copy {
                if self.reach.contains(b) {
                    keep.push(b);
                } else {
                    removed.push(b);
                }
            }
        }
        let live = &*live;
        // A block of a copy that no longer reaches the copy's back edge (the folded branch
        // led it there) has left the loop: values of the loop it uses would need new
        // exit parameters (LCSSA), so the caller re-establishes the forms instead.
        // Predecessor lists inside each live copy, as linked lists in `rev`.
        self.head.clear();
        self.rev.clear();
        for (j, keep) in live.iter().enumerate() {
            let j = j as u32;
            for &b in keep {
                if let Some(t) = func.terminator(b) {
                    let (copy_of, reach, head, rev) =
                        (&self.copy_of, &self.reach, &mut self.head, &mut self.rev);
                    func.dfg.for_each_dest(t, |bc| {
                        let s = bc.block;
                        if copy_of.get(s) == Some(j) && reach.contains(s) {
                            rev.push((b, head.get(s).unwrap_or(0)));
                            head.set(s, rev.len() as u32);
                        }
                    });
                }
            }
        }
        self.back.clear();
        for (&h, keep) in self.heads.iter().zip(live) {
            self.back.insert(h);
            let mut inside = 1;
            self.work.clear();
            self.work.push(h);
            while let Some(b) = self.work.pop() {
                let mut e = self.head.get(b).unwrap_or(0);
                while e != 0 {
                    let (p, next) = self.rev[e as usize - 1];
                    if self.back.insert(p) {
                        inside += 1;
                        self.work.push(p);
                    }
                    e = next;
                }
            }
            if inside < keep.len() {
                return Ok(None);
            }
        }
        // A copy left without an exit into the loop around `l` (none, or only exits
        // leaving several levels) cannot get back to that loop's header, so it is no
        // longer inside it: the nesting and LCSSA change beyond the copies, and the caller
        // re-establishes the forms instead.
        if let Some(q) = li.parent(l) {
            for (j, keep) in live.iter().enumerate() {
                let j = j as u32;
                let copy_of = &self.copy_of;
                let exits_left = keep.iter().any(|&b| {
                    func.terminator(b).is_some_and(|t| {
                        let mut out = false;
                        func.dfg.for_each_dest(t, |bc| {
                            out |= copy_of.get(bc.block) != Some(j) && li.contains(q, bc.block)
                        });
                        out
                    })
                });
                if !exits_left {
                    return Ok(None);
                }
            }
        }
        for &b in removed.iter() {
            while let Some(i) = func.layout.first_inst(b) {
                func.layout.remove_inst(i);
            }
            func.layout.remove_block(b);
        }
        // Room for the blocks split off below (a preheader per copy, at most one block
        // per exit and copy; one jump each), so the layout's maps grow once.
        let split = copies.len() * (1 + exits.len());
        func.reserve(split, split, 0);
        // A preheader per copy (the old one dispatches).
        for &h in &self.heads {
            new_blocks.push(split_predecessors(
                func,
                h,
                &[pre],
                Place::Before(h),
                |_, _| true,
            ));
        }
        // Per exit and copy, the copy's blocks branching to it: (exit number, copy,
        // block) in the order found, grouped by a stable sort.
        self.head.clear();
        for (k, &e) in exits.iter().enumerate() {
            self.head.set(e, k as u32);
        }
        self.into.clear();
        for (j, keep) in live.iter().enumerate() {
            let j = j as u32;
            for &b in keep {
                let Some(t) = func.terminator(b) else {
                    continue;
                };
                let (head, into) = (&self.head, &mut self.into);
                func.dfg.for_each_dest(t, |bc| {
                    if let Some(k) = head.get(bc.block) {
                        if into.last() != Some(&(k, j, b)) {
                            into.push((k, j, b));
                        }
                    }
                });
            }
        }
        self.into.sort_by_key(|&(k, j, _)| (k, j));
        let mut at = 0;
        let mut preds: Vec<Block> = Vec::new();
        while at < self.into.len() {
            let k = self.into[at].0;
            let end = at + self.into[at..].partition_point(|&(k2, ..)| k2 == k);
            let group = &self.into[at..end];
            at = end;
            // Several copies branch to this exit: one block per copy.
            if group.first().map(|g| g.1) == group.last().map(|g| g.1) {
                continue;
            }
            let e = exits[k as usize];
            // The loops the edges to `e` leave: `l` up to `left`. A value defined in one
            // of them becomes a parameter of the new block (LCSSA for each; when `e` is
            // in `l`'s parent that is `l` alone), other values are passed on as they are.
            let left = outermost_left(&cx.analyses.loops, l, e);
            let mut g = 0;
            while g < group.len() {
                let j = group[g].1;
                preds.clear();
                while g < group.len() && group[g].1 == j {
                    if preds.last() != Some(&group[g].2) {
                        preds.push(group[g].2);
                    }
                    g += 1;
                }
                if j == 0 {
                    for &p in preds.iter() {
                        self.touched.insert(p);
                    }
                }
                let (copy_of, li) = (&self.copy_of, &cx.analyses.loops);
                new_blocks.push(split_predecessors(
                    func,
                    e,
                    &preds,
                    Place::Before(e),
                    |f, v| {
                        def_block(f, v)
                            .is_some_and(|d| !copy_of.contains(d) && !li.contains(left, d))
                    },
                ));
            }
        }
        // The CFG's edges.
        let err = |e: gyre_analysis::CfgError| PassError(format!("{NAME}: {e}"));
        let cfg = &mut cx.analyses.cfg;
        cfg.update_block(func, pre).map_err(err)?;
        // The original loop's blocks keep their edges unless a branch folded or an exit
        // edge moved to a new block; the copies, the deleted and the new blocks all change.
        let touched = &self.touched;
        for &b in live[0]
            .iter()
            .filter(|&&b| touched.contains(b))
            .chain(live[1..].iter().flatten())
            // A deleted block of a clone never had edges in the CFG.
            .chain(removed.iter().filter(|&&b| self.copy_of.get(b) == Some(0)))
            .chain(new_blocks.iter())
        {
            cfg.update_block(func, b).map_err(err)?;
        }
        // The loops: those of the outermost loop around `l`, found again.
        let li = &mut cx.analyses.loops;
        if outer == l {
            // The copies' headers first: the search for back edges starts there.
            region.extend_from_slice(&self.heads);
            for (&h, keep) in self.heads.iter().zip(live) {
                region.extend(keep.iter().filter(|&&b| b != h));
            }
            for &b in new_blocks.iter() {
                li.add_block(b, None);
            }
        } else {
            region.extend(
                li.blocks(outer)
                    .filter(|&b| func.layout.is_block_inserted(b)),
            );
            region.extend(live[1..].iter().flatten());
            region.extend(new_blocks.iter());
        }
        for &b in removed.iter() {
            li.add_block(b, None);
        }
        if !li.replace_nest(cfg, outer, region) {
            cx.analyses.invalidate(Analyses::NONE);
            self.ensure(func, cx, Analyses::LOOPS)?;
        }
        if cx.analyses.nonlocal.is_valid() {
            for &v in enter_args.iter().chain([&cond]) {
                cx.analyses.nonlocal.set(v, true);
            }
        }
        cx.analyses.invalidate(
            Analyses::CFG
                .union(Analyses::LOOPS)
                .union(Analyses::NONLOCAL_USES),
        );
        let li = &cx.analyses.loops;
        let mut new_headers = Vec::new();
        for (j, copy) in live.iter().enumerate().skip(1) {
            let j = j as u32;
            for &b in copy {
                if !li.is_header(b) {
                    continue;
                }
                let Some(lb) = li.innermost_loop(b) else {
                    continue;
                };
                // Live blocks of copy `j`: tagged `j` and reached.
                let in_copy = |h: Block| self.copy_of.get(h) == Some(j) && self.reach.contains(h);
                if li.parent(lb).is_none_or(|p| !in_copy(li.header(p))) {
                    new_headers.push(b);
                }
            }
        }
        Ok(Some(new_headers))
    }
}

/// Can a non-trivial unswitch of `l` keep the loop forest and the forms current by
/// itself? It rebuilds the loops of `l`'s outermost loop only, which needs that nest
/// reducible. (Exits leaving several loop levels are repaired locally too: see
/// [`SimpleLoopUnswitch::finish_local`].)
fn can_update_locally(cx: &PassContext<'_>, l: Loop) -> bool {
    let li = &cx.analyses.loops;
    let mut outer = l;
    while let Some(p) = li.parent(outer) {
        outer = p;
    }
    !li.contains_irreducible(outer)
}

/// The outermost loop that `l` is in and `e` (an exit block of `l`) is not: the loops an
/// edge from `l` to `e` leaves are `l` up to it.
fn outermost_left(li: &gyre_analysis::LoopInfo, l: Loop, e: Block) -> Loop {
    let mut m = l;
    while let Some(p) = li.parent(m).filter(|&p| !li.contains(p, e)) {
        m = p;
    }
    m
}

/// The blocks of `l` (`n` of them) in layout order. Walks the layout from the header
/// forward, then backward, until every block is found: the span of the loop in the
/// layout, not the function (a scan of every block per change would make many loops
/// quadratic). Written to `out` (empty).
fn loop_blocks_in_layout(
    func: &Function,
    li: &gyre_analysis::LoopInfo,
    l: Loop,
    n: usize,
    out: &mut Vec<Block>,
) {
    let header = li.header(l);
    let mut at = Some(header);
    while let Some(b) = at {
        if out.len() == n {
            break;
        }
        if li.contains(l, b) {
            out.push(b);
        }
        at = func.layout.next_block(b);
    }
    if out.len() < n {
        let mut before = Vec::new();
        let mut at = func.layout.prev_block(header);
        while let Some(b) = at {
            if out.len() + before.len() == n {
                break;
            }
            if li.contains(l, b) {
                before.push(b);
            }
            at = func.layout.prev_block(b);
        }
        before.reverse();
        // The blocks before the header go first (rare: a loop laid out around its
        // header).
        let after = out.len();
        out.extend_from_slice(&before);
        out.rotate_right(before.len());
        debug_assert_eq!(out.len(), after + before.len());
    }
}

/// Per-block scratch tags (a `u32` each), dense by block index and cleared in O(1) by a
/// new generation: the pass keeps them between changes, so a change costs no hashing
/// and no allocation once they have grown to the function's size.
#[derive(Default)]
struct BlockTags {
    /// Per block index: the generation that last set it (stale: not set), and its tag,
    /// meaningful when the generation is current. One array, not two: a lookup touches
    /// one cache line, and growing it is one reallocation (at tens of thousands of
    /// blocks the pass's growing scratch arrays cost more page faults and copies than
    /// their use).
    slot: Vec<[u32; 2]>,
    /// The current generation; 0 before the first [`BlockTags::clear`].
    generation: u32,
}

impl BlockTags {
    /// Forget every tag.
    fn clear(&mut self) {
        self.generation = self.generation.wrapping_add(1);
        if self.generation == 0 {
            // Wrapped: old stamps could look current.
            self.slot.fill([0, 0]);
            self.generation = 1;
        }
    }

    /// Tag `b` with `v`.
    #[inline]
    fn set(&mut self, b: Block, v: u32) {
        debug_assert!(self.generation != 0, "cleared before use");
        let i = b.index();
        if self.slot.len() <= i {
            // Geometric growth: the blocks a change creates have ever higher indices, and
            // growing by one each time made every tag of a new block a resize.
            let n = (i + 1).max(self.slot.len() * 2).max(64);
            self.slot.resize(n, [0, 0]);
        }
        self.slot[i] = [self.generation, v];
    }

    /// Tag `b` (with 0) unless it is tagged; true if it was not.
    #[inline]
    fn insert(&mut self, b: Block) -> bool {
        if self.get(b).is_some() {
            return false;
        }
        self.set(b, 0);
        true
    }

    /// The tag of `b`, if set since the last clear.
    #[inline]
    fn get(&self, b: Block) -> Option<u32> {
        match self.slot.get(b.index()) {
            Some(&[g, v]) if g == self.generation && g != 0 => Some(v),
            _ => None,
        }
    }

    /// Is `b` tagged?
    #[inline]
    fn contains(&self, b: Block) -> bool {
        self.get(b).is_some()
    }
}

/// The most blocks a loop may have for [`LocalDom`]'s bit-set path (one `u64` per block).
const SMALL_LOOP: usize = 64;

/// Dominance among the blocks of one loop, computed for the loop alone (the header
/// dominates every block of the loop, so this is the function's dominance there).
/// Semi-NCA (as the verifier's `dom.rs` and LLVM's `SemiNCAInfo`) over a depth-first
/// preorder of the loop's blocks from the header: near-linear in the loop's size on every
/// shape (Cooper-Harvey-Kennedy's iteration, used before, walked the whole chain per
/// predecessor of an exit ladder's latch: quadratic). The dominator tree is then numbered
/// with pre/post times so [`LocalDom::dominates`] is O(1). Kept in the pass and
/// recomputed in place (its buffers are reused).
///
/// A loop of at most [`SMALL_LOOP`] blocks (nearly every loop the cost model sees) takes
/// a cheaper path: each block's dominators as a 64-bit set, iterated to the fixed point
/// (`dom(b) = {b} ∪ ⋂ dom(p)` over its predecessors, swept in reverse post-order: one
/// sweep and a check of the retreating edges on a reducible loop, more sweeps
/// otherwise). On the few dozen blocks of the loops the cost model sees,
/// the semidominator machinery and the tree numbering cost more than that.
#[derive(Default)]
struct LocalDom {
    /// Whether the last compute took the small-loop path (`sets` holds the answer, not the
    /// tree times).
    small: bool,
    /// Small path, per preorder number: the set of the preorder numbers of its
    /// dominators.
    sets: Vec<u64>,
    /// Small path: the predecessors inside the loop, as preorder numbers, CSR by preorder
    /// number.
    pred_start: Vec<u32>,
    preds: Vec<u32>,
    /// Per block of the loop reached from the header: its preorder number.
    num: BlockTags,
    /// The loop's blocks in preorder (the header first).
    order: Vec<Block>,
    /// Per preorder number: the depth-first parent, then the immediate dominator.
    idom: Vec<u32>,
    /// Per preorder number: the semidominator.
    semi: Vec<u32>,
    /// Per preorder number: the path-compression ancestor and its best label.
    ancestor: Vec<u32>,
    label: Vec<u32>,
    /// Scratch: the path compressed by one `eval`.
    path: Vec<u32>,
    /// The dominator tree's children, CSR by preorder number.
    child_start: Vec<u32>,
    children: Vec<u32>,
    /// Per preorder number: pre- and post-order times in the dominator tree.
    pre: Vec<u32>,
    post: Vec<u32>,
    /// The depth-first search's stack: a block, its preorder number and its next
    /// successor.
    stack: Vec<(Block, u32, u32)>,
    /// The preorder numbers in post-order of that search (the sweep order, reversed, of
    /// the small path: one sweep settles a reducible loop, a check of its retreating
    /// edges confirms).
    postorder: Vec<u32>,
    /// The dominator-tree walk's stack: a node and its next child slot.
    tstack: Vec<(u32, u32)>,
    /// Small path: the retreating edges met by the first sweep (source, target), as
    /// preorder numbers.
    late: Vec<(u32, u32)>,
}

impl LocalDom {
    /// Compute dominance in `l`.
    fn compute(&mut self, li: &gyre_analysis::LoopInfo, cfg: &gyre_analysis::Cfg, l: Loop) {
        self.compute_with(li, cfg, l, SMALL_LOOP);
    }

    /// [`LocalDom::compute`], taking the bit-set path for loops of at most `small_limit`
    /// blocks (the tests force either path).
    fn compute_with(
        &mut self,
        li: &gyre_analysis::LoopInfo,
        cfg: &gyre_analysis::Cfg,
        l: Loop,
        small_limit: usize,
    ) {
        let header = li.header(l);
        // Preorder of the loop's blocks from the header, along edges inside the loop.
        self.num.clear();
        self.order.clear();
        self.idom.clear();
        self.stack.clear();
        self.postorder.clear();
        self.num.set(header, 0);
        self.order.push(header);
        self.idom.push(0);
        self.stack.push((header, 0, 0));
        while let Some((b, n, next)) = self.stack.last_mut() {
            let (b, parent) = (*b, *n);
            match cfg.succs(b).get(*next as usize) {
                Some(&s) => {
                    *next += 1;
                    if li.contains(l, s) && !self.num.contains(s) {
                        let k = self.order.len() as u32;
                        self.num.set(s, k);
                        self.order.push(s);
                        self.idom.push(parent);
                        self.stack.push((s, k, 0));
                    }
                }
                None => {
                    self.postorder.push(parent);
                    self.stack.pop();
                }
            }
        }
        let m = self.order.len();
        self.small = m <= small_limit.min(SMALL_LOOP);
        if self.small {
            self.compute_small(cfg);
            return;
        }
        // Semidominators in reverse preorder (blocks outside the loop are not tagged).
        self.semi.clear();
        self.semi.extend(0..m as u32);
        self.label.clear();
        self.label.extend(0..m as u32);
        self.ancestor.clear();
        self.ancestor.extend_from_slice(&self.idom);
        for w in (1..m).rev() {
            let mut semi = self.idom[w];
            for &p in cfg.preds(self.order[w]) {
                let Some(pn) = self.num.get(p) else {
                    continue;
                };
                let u = self.eval(pn, w as u32 + 1);
                semi = semi.min(self.semi[u as usize]);
            }
            self.semi[w] = semi;
        }
        // Each immediate dominator: the nearest ancestor of the parent numbered at most
        // the semidominator (ancestors' idoms are final by then).
        for w in 1..m {
            let mut c = self.idom[w];
            while c > self.semi[w] {
                c = self.idom[c as usize];
            }
            self.idom[w] = c;
        }
        // Pre/post times of the dominator tree.
        self.child_start.clear();
        self.child_start.resize(m + 1, 0);
        for &d in &self.idom[1..] {
            self.child_start[d as usize + 1] += 1;
        }
        for i in 0..m {
            self.child_start[i + 1] += self.child_start[i];
        }
        self.children.clear();
        self.children.resize(m.saturating_sub(1), 0);
        // `pre` doubles as each list's fill cursor until the walk overwrites it.
        self.pre.clear();
        self.pre.extend_from_slice(&self.child_start[..m]);
        for w in 1..m {
            let d = self.idom[w] as usize;
            self.children[self.pre[d] as usize] = w as u32;
            self.pre[d] += 1;
        }
        self.post.clear();
        self.post.resize(m, 0);
        let mut clock = 0u32;
        self.tstack.clear();
        self.tstack.push((0, self.child_start[0]));
        self.pre[0] = clock;
        clock += 1;
        while let Some(top) = self.tstack.last_mut() {
            let (node, next) = *top;
            if next < self.child_start[node as usize + 1] {
                top.1 += 1;
                let c = self.children[next as usize];
                self.pre[c as usize] = clock;
                clock += 1;
                self.tstack.push((c, self.child_start[c as usize]));
            } else {
                self.post[node as usize] = clock;
                clock += 1;
                self.tstack.pop();
            }
        }
    }

    /// The small-loop path of [`LocalDom::compute`], once the preorder is known: the
    /// dominator sets by iteration to the fixed point. Blocks the walk from the header did
    /// not reach are not tagged and play no part (as on the general path).
    fn compute_small(&mut self, cfg: &gyre_analysis::Cfg) {
        let m = self.order.len();
        self.pred_start.clear();
        self.preds.clear();
        for &b in &self.order {
            self.pred_start.push(self.preds.len() as u32);
            for &p in cfg.preds(b) {
                if let Some(pn) = self.num.get(p) {
                    self.preds.push(pn);
                }
            }
        }
        self.pred_start.push(self.preds.len() as u32);
        // Every set starts full (the header's: itself) and only shrinks: the greatest
        // fixed point is dominance, whatever the sweep order.
        let full = if m == 64 { u64::MAX } else { (1u64 << m) - 1 };
        self.sets.clear();
        self.sets.resize(m, full);
        self.sets[0] = 1;
        // The first sweep, in reverse post-order, meets every forward edge's source
        // before its target and reads a retreating edge's source still full (the edge
        // is ignored): it leaves the dominators of the graph without its retreating
        // edges. Those are the loop's dominators if each retreating edge's target
        // dominates its source (then `dom(target) ⊆ dom(source)` and the edge changes
        // no set): true of a reducible loop, the only kind costed, so the confirming
        // sweep is replaced by that check of the retreating edges alone.
        let mut done = 1u64;
        self.late.clear();
        for &w in self.postorder.iter().rev().skip(1) {
            let w = w as usize;
            let (a, b) = (self.pred_start[w] as usize, self.pred_start[w + 1] as usize);
            let mut d = full;
            for &p in &self.preds[a..b] {
                if done >> p & 1 == 0 {
                    self.late.push((p, w as u32));
                }
                d &= self.sets[p as usize];
            }
            self.sets[w] = d | 1 << w;
            done |= 1 << w;
        }
        if self
            .late
            .iter()
            .all(|&(p, w)| self.sets[p as usize] >> w & 1 != 0)
        {
            return;
        }
        loop {
            let mut changed = false;
            for &w in self.postorder.iter().rev().skip(1) {
                let w = w as usize;
                let (a, b) = (self.pred_start[w] as usize, self.pred_start[w + 1] as usize);
                let mut d = full;
                for &p in &self.preds[a..b] {
                    d &= self.sets[p as usize];
                }
                d |= 1 << w;
                if d != self.sets[w] {
                    self.sets[w] = d;
                    changed = true;
                }
            }
            if !changed {
                break;
            }
        }
    }

    /// The label with the smallest semidominator on the path from `v` up to the root of
    /// its virtual tree (nodes numbered `last_linked` or more are linked), compressing the
    /// path on the way (LLVM's `SemiNCAInfo::eval`, iterative).
    fn eval(&mut self, v: u32, last_linked: u32) -> u32 {
        if self.ancestor[v as usize] < last_linked {
            return self.label[v as usize];
        }
        self.path.clear();
        let mut x = v;
        loop {
            self.path.push(x);
            x = self.ancestor[x as usize];
            if self.ancestor[x as usize] < last_linked {
                break;
            }
        }
        let mut p = x;
        let mut p_label = self.label[p as usize];
        while let Some(y) = self.path.pop() {
            self.ancestor[y as usize] = self.ancestor[p as usize];
            let y_label = self.label[y as usize];
            if self.semi[p_label as usize] < self.semi[y_label as usize] {
                self.label[y as usize] = p_label;
            } else {
                p_label = y_label;
            }
            p = y;
        }
        self.label[v as usize]
    }

    /// Prepare [`LocalDom::dominated_size`]: `costs[k]` is the size of `blocks[k]`, the
    /// loop's blocks (each once).
    /// The sums go to `acc`.
    fn subtree_sums(&self, blocks: &[Block], costs: &[u64], acc: &mut Vec<u64>) {
        // Every node's pre and post times lie in 0..2m; a subtree's nodes have their pre
        // times in [pre, post) of its root.
        let m = self.order.len();
        acc.clear();
        if self.small {
            // Per preorder number: the sizes of the blocks whose sets hold it.
            acc.resize(m, 0);
            for (&b, &k) in blocks.iter().zip(costs) {
                if let Some(n) = self.num.get(b) {
                    let mut d = self.sets[n as usize];
                    while d != 0 {
                        acc[d.trailing_zeros() as usize] += k;
                        d &= d - 1;
                    }
                }
            }
            return;
        }
        acc.resize(2 * m + 1, 0);
        for (&b, &k) in blocks.iter().zip(costs) {
            if let Some(n) = self.num.get(b) {
                acc[self.pre[n as usize] as usize + 1] = k;
            }
        }
        for t in 0..2 * m {
            acc[t + 1] += acc[t];
        }
    }

    /// The total size of the blocks `s` dominates (itself included; 0 if the walk from
    /// the header did not reach it), as summing the sizes of the blocks `b` with
    /// `dominates(s, b)`. Needs [`LocalDom::subtree_sums`] since the last compute.
    fn dominated_size(&self, s: Block, acc: &[u64]) -> u64 {
        let Some(n) = self.num.get(s) else {
            return 0;
        };
        let n = n as usize;
        if self.small {
            return acc[n];
        }
        acc[self.post[n] as usize] - acc[self.pre[n] as usize]
    }

    /// Does `a` dominate `b` (both blocks of the loop)?
    fn dominates(&self, a: Block, b: Block) -> bool {
        let (Some(na), Some(nb)) = (self.num.get(a), self.num.get(b)) else {
            return false;
        };
        let (na, nb) = (na as usize, nb as usize);
        if self.small {
            return self.sets[nb] >> na & 1 != 0;
        }
        self.pre[na] <= self.pre[nb] && self.post[nb] <= self.post[na]
    }
}

/// How many copies of the loop unswitching `t` makes: one per distinct way out of it
/// (target and arguments): 2 for a `brif` whose sides differ, the distinct cases and
/// default of a `br_table`.
/// `calls` is scratch.
fn copies_needed(func: &Function, t: Inst, calls: &mut Vec<BlockCall>) -> usize {
    calls.clear();
    func.dfg.for_each_dest(t, |bc| {
        if !calls.iter().any(|c| same_call(func, c, bc)) {
            calls.push(*bc);
        }
    });
    calls.len()
}

/// The distinct successor blocks of a terminator.
/// Written to `s`.
fn distinct_succs(func: &Function, t: Inst, s: &mut Vec<Block>) {
    s.clear();
    func.dfg.for_each_dest(t, |bc| {
        if !s.contains(&bc.block) {
            s.push(bc.block);
        }
    });
}

/// Can `v` be shown not to be poison (docs/ir.md, "Values and poison")? Constants,
/// special registers, `freeze`, kernel parameters (launch inputs), and comparisons or
/// flag-free wrapping arithmetic of such values. A bounded walk with a worklist.
fn not_poison(func: &Function, v: Value) -> bool {
    let entry = func.entry_block();
    let mut work = vec![v];
    let mut seen = 0;
    while let Some(v) = work.pop() {
        seen += 1;
        if seen > 32 {
            return false;
        }
        match func.dfg.value_def(v) {
            ValueDef::Param(b, _) => {
                if !(func.kind == FuncKind::Kernel && Some(b) == entry) {
                    return false;
                }
            }
            ValueDef::Detached => return false,
            ValueDef::Result(i) => match func.dfg.inst(i) {
                InstructionData::IntConst { .. }
                | InstructionData::FloatConst { .. }
                | InstructionData::Sreg { .. } => {}
                InstructionData::Unary {
                    opcode: Opcode::Freeze,
                    ..
                } => {}
                InstructionData::IntCompare { args, .. } => work.extend_from_slice(args),
                InstructionData::Binary {
                    opcode: Opcode::And | Opcode::Or | Opcode::Xor,
                    args,
                    ..
                } => work.extend_from_slice(args),
                InstructionData::Binary {
                    opcode: Opcode::Iadd | Opcode::Isub | Opcode::Imul,
                    args,
                    flags,
                } if flags.is_empty() => work.extend_from_slice(args),
                _ => return false,
            },
        }
    }
    true
}

/// Delete the blocks of `copies` that the entry no longer reaches (the folded-away sides).
/// Their values are used only in blocks they dominate, all unreachable too.
fn remove_unreachable(func: &mut Function, copies: &[Vec<Block>]) {
    let Some(entry) = func.entry_block() else {
        return;
    };
    let mut reached: FxHashSet<Block> = FxHashSet::default();
    let mut stack = vec![entry];
    reached.insert(entry);
    while let Some(b) = stack.pop() {
        let Some(t) = func.terminator(b) else {
            continue;
        };
        func.dfg.for_each_dest(t, |bc| {
            if reached.insert(bc.block) {
                stack.push(bc.block);
            }
        });
    }
    for copy in copies {
        for &b in copy {
            if reached.contains(&b) {
                continue;
            }
            while let Some(i) = func.layout.first_inst(b) {
                func.layout.remove_inst(i);
            }
            func.layout.remove_block(b);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{LocalDom, SMALL_LOOP};
    use gyre_analysis::{Cfg, DomTree, LoopInfo};
    use gyre_ir::generate::{generate_from_seed, GenOptions};

    /// The loop-local dominance agrees with the function's dominator tree on every pair
    /// of blocks of every loop of generated kernels (multi-latch, multi-exit, switches).
    #[test]
    fn local_dominance_matches_the_dominator_tree() {
        let mut dom = LocalDom::default();
        let mut loops = 0;
        // Irreducible kernels too: a loop holding a two-entry cycle fails the small
        // path's check of its retreating edges and is swept to the fixed point.
        let seeds = (0..150).map(|seed| (seed, false));
        for (seed, irreducible) in seeds.chain((0..60).map(|seed| (seed, true))) {
            let opts = GenOptions {
                allow_multi_latch: true,
                allow_multi_exit: true,
                allow_switch: true,
                allow_irreducible: irreducible,
                ..GenOptions::default()
            };
            let (m, _) = generate_from_seed(&opts, seed);
            for func in m.functions.values() {
                let Ok(cfg) = Cfg::with_function(func) else {
                    continue;
                };
                let dt = DomTree::with_function(func, &cfg);
                let li = LoopInfo::with_function(func, &cfg, &dt);
                for (l, small_limit) in li.loops().flat_map(|l| [(l, 0), (l, SMALL_LOOP)]) {
                    loops += 1;
                    dom.compute_with(&li, &cfg, l, small_limit);
                    let blocks: Vec<_> = li.blocks(l).collect();
                    // Distinct sizes (powers of two) so that a wrong set shows in a sum.
                    let costs: Vec<u64> = (0..blocks.len()).map(|k| 1 << (k % 60)).collect();
                    let mut acc = Vec::new();
                    dom.subtree_sums(&blocks, &costs, &mut acc);
                    for &a in &blocks {
                        let mut dominated = 0;
                        for (&b, &k) in blocks.iter().zip(&costs) {
                            assert_eq!(
                                dom.dominates(a, b),
                                dt.dominates(a, b),
                                "seed {seed} (irreducible: {irreducible}): {a} dom {b}"
                            );
                            if dt.dominates(a, b) {
                                dominated += k;
                            }
                        }
                        assert_eq!(
                            dom.dominated_size(a, &acc),
                            dominated,
                            "seed {seed} (irreducible: {irreducible}): size dominated by {a}"
                        );
                    }
                }
            }
        }
        assert!(loops > 100, "only {loops} loop computations");
    }
}
