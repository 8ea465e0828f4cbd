//! `indvars`: induction-variable simplification (LLVM's `IndVarSimplifyPass`, with
//! NVIDIA cicc's guards `iv-loop-level` and `Disable-unknown-trip-iv`).
//!
//! Per loop, in this order, each step using the loop's scalar evolution:
//! 1. **Congruent IVs**: header parameters with the same recurrence become one.
//! 2. **Widening** (`indvars-widen-indvars`): a narrow IV `{a,+,t}` that the loop sign-
//!    (zero-) extends, and that provably does not wrap, gets a wide twin parameter; the
//!    extensions become the twin (`cvt` per iteration gone from 64-bit address arithmetic).
//! 3. **Range folding**: an `icmp` of an IV against a constant that holds (or fails) at
//!    both ends of the IV's range over the loop's iterations becomes a constant.
//! 4. **Exit values** (`replexitval`): a value leaving the loop whose value at the exit has
//!    a closed form is passed from the preheader instead (`for (..) i++` leaves `n`).
//! 5. **Exit predication** (`indvars-predicate-loops`): in a loop without side effects whose
//!    exits all have known counts and pass only loop-invariant values out, each exit tests
//!    its count against the loop's (loop-invariant tests, LLVM's `predicateLoopExits`).
//! 6. **LFTR** (`disable-lftr`): the exit test becomes `icmp eq/ne iv, limit` on a unit-step
//!    IV, with `limit` computed once in the preheader.
//! 7. **Dead code**: instructions and IV cycles (parameter and increment) nothing uses.
//!
//! Every rewrite replaces a value by one equal to it on every execution, so the loop's
//! scalar evolution stays true of the values that remain; it is computed once per loop
//! nest with [`ScalarEvolution::compute_nest`], in time linear in the nest (the dominator
//! tree may be stale after `loop-rotate`, which updates only the loop forest).

use crate::analyses::Analyses;
use crate::knobs::ExitValues;
use crate::manager::{Forms, LoopPass, LoopUpdater, PassContext, PassError, PassResult};
use crate::utils::clone::{remap_instructions, ValueMap};
use crate::utils::loop_dce::LoopDce;
use gyre_analysis::scev::{def_block, edge_args, look_through_params, ScevFlags};
use gyre_analysis::{Cfg, Loop, LoopInfo, ScalarEvolution, Scev};
use gyre_ir::builder::{FuncCursor, InstBuilder};
use gyre_ir::{
    Block, Function, Inst, InstructionData, IntCC, IntFlags, Opcode, Type, Value, ValueDef,
};
use rustc_hash::FxHashMap;

const NAME: &str = "indvars";

/// The most an exit value may cost under `replexitval=cheap` (LLVM's
/// `scev-cheap-expansion-budget`).
pub const CHEAP_EXPANSION_BUDGET: u32 = 4;

/// The most an LFTR limit or a predicated exit's count may cost to compute (once, in the
/// preheader).
pub const LIMIT_EXPANSION_BUDGET: u32 = 8;

/// The `indvars` loop pass.
///
/// **Requires**: the loop in loop-simplify form (a preheader, one latch; others are left
/// alone with a remark) and in LCSSA form (values of the loop reach outside only through
/// exit-block parameters, so rewriting the uses inside the loop rewrites them all), as the
/// loop adaptor establishes before its passes. Only the CFG's edges and the loop forest are
/// needed; the scalar evolution of the loop nest is computed here.
///
/// **Establishes**: nothing new about loop forms (the CFG is not changed); see the module
/// doc for the rewrites.
///
/// **Preserves**: the CFG, dominator and post-dominator trees, the loop forest (no block or
/// edge changes) and `nonlocal-uses` (kept sound). Not uniformity or scalar evolution (new
/// values).
///
/// **Gives up** (a remark and a counter each): loops deeper than `iv-loop-level`
/// (`LoopTooDeep`); with `Disable-unknown-trip-iv`, loops whose trip count is not computable
/// or is a constant at most 1 (`UnknownTripCount`); loops in or around an irreducible cycle
/// (`Irreducible`); loops without a preheader or a single latch (`NotLoopSimplifyForm`).
/// Within a loop, a rewrite is skipped when its proof fails (no closed form, a possible
/// wrap, a cost over budget).
///
/// **Knobs**: `iv-loop-level` (1), `Disable-unknown-trip-iv` (false), `replexitval` (cheap),
/// `disable-lftr` (false), `indvars-widen-indvars` (true), `indvars-post-increment-ranges`
/// (true), `indvars-predicate-loops` (true), `verify-indvars` (false).
///
/// **Stats**: `NumCongruentIVs`, `NumWidened`, `NumFoldedCompares`, `NumReplaced`,
/// `NumExitValuesTooExpensive`, `NumPredicatedExits`, `NumLFTR`, `NumDeadIVs`,
/// `NumDeadInsts`, and one counter per reason for leaving a loop alone.
#[derive(Default)]
pub struct IndVarSimplify {
    se: ScalarEvolution,
    blocks: Vec<Block>,
    map: ValueMap,
    /// Expressions already computed in the current loop's preheader.
    expanded: FxHashMap<Scev, Value>,
    /// Existing values given uses in other blocks (for `nonlocal-uses`).
    touched: Vec<Value>,
    /// Dead-code buffers, reused across loops.
    dce: LoopDce,
}

/// Why a loop is left alone: the remark kind, and its counter.
#[derive(Copy, Clone)]
enum Skip {
    LoopTooDeep,
    UnknownTripCount,
    Irreducible,
    NotLoopSimplifyForm,
}

impl Skip {
    fn kind(self) -> &'static str {
        match self {
            Skip::LoopTooDeep => "LoopTooDeep",
            Skip::UnknownTripCount => "UnknownTripCount",
            Skip::Irreducible => "Irreducible",
            Skip::NotLoopSimplifyForm => "NotLoopSimplifyForm",
        }
    }
    fn counter(self) -> &'static str {
        match self {
            Skip::LoopTooDeep => "NumLoopTooDeep",
            Skip::UnknownTripCount => "NumUnknownTripCount",
            Skip::Irreducible => "NumIrreducible",
            Skip::NotLoopSimplifyForm => "NumNotLoopSimplifyForm",
        }
    }
}

/// The knob values of one run.
#[derive(Copy, Clone)]
struct Settings {
    replexitval: ExitValues,
    lftr: bool,
    widen: bool,
    post_increment_ranges: bool,
    predicate: bool,
    verify: bool,
}

/// The loop being simplified.
struct Ctx {
    l: Loop,
    header: Block,
    preheader: Block,
    latch: Block,
}

impl LoopPass for IndVarSimplify {
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
        // The visit computes scalar evolution in the loop pipeline's shared buffers
        // (`AnalysisCache::loop_scev`), not in function-sized tables of its own.
        core::mem::swap(&mut self.se, &mut cx.analyses.loop_scev);
        let result = self.visit(func, header, cx, updater);
        core::mem::swap(&mut self.se, &mut cx.analyses.loop_scev);
        result
    }
}

impl IndVarSimplify {
    /// One visit of the loop headed by `header` ([`LoopPass::run_on_loop`]).
    fn visit(
        &mut self,
        func: &mut Function,
        header: Block,
        cx: &mut PassContext<'_>,
        _updater: &mut LoopUpdater,
    ) -> Result<PassResult, PassError> {
        let err = |func: &Function, m: String| PassError(format!("{NAME}: @{}: {m}", func.name));
        cx.analyses
            .ensure(func, Analyses::LOOPS)
            .map_err(|e| err(func, e.to_string()))?;
        // Every knob is read on every run (so each is seen to be in use).
        let level = cx.knobs.iv_loop_level();
        let unknown_trip = cx.knobs.disable_unknown_trip_iv();
        let set = Settings {
            replexitval: cx.knobs.replexitval(),
            lftr: !cx.knobs.disable_lftr(),
            widen: cx.knobs.indvars_widen_indvars(),
            post_increment_ranges: cx.knobs.indvars_post_increment_ranges(),
            predicate: cx.knobs.indvars_predicate_loops(),
            verify: cx.knobs.verify_indvars(),
        };
        let skip = |cx: &mut PassContext<'_>, func: &Function, s: Skip, msg: String| {
            cx.stats.add(NAME, s.counter(), 1);
            cx.remark(NAME, func, Some(header), s.kind(), msg);
            Ok(PassResult::UNCHANGED)
        };
        let li = &cx.analyses.loops;
        let cfg = &cx.analyses.cfg;
        let Some(l) = li
            .innermost_loop(header)
            .filter(|&l| li.header(l) == header)
        else {
            return skip(cx, func, Skip::NotLoopSimplifyForm, "no loop here".into());
        };
        let depth = li.depth(l);
        if depth > level {
            let msg = format!("the loop is at depth {depth}, deeper than iv-loop-level={level}");
            return skip(cx, func, Skip::LoopTooDeep, msg);
        }
        if li.contains_irreducible(l) || li.in_irreducible_cycle(header) {
            let msg = "the loop is in or around an irreducible cycle".to_string();
            return skip(cx, func, Skip::Irreducible, msg);
        }
        let (Some(preheader), Some(latch)) = (li.preheader(l, cfg), li.latch(l)) else {
            let msg = "the loop has no preheader or no single latch".to_string();
            return skip(cx, func, Skip::NotLoopSimplifyForm, msg);
        };
        self.se.compute_nest(func, cfg, li, l);
        let btc = self.se.backedge_taken_count(l);
        if unknown_trip {
            let trivial = btc.and_then(|s| self.se.as_const(s)) == Some(0);
            if btc.is_none() || trivial {
                let msg = if trivial {
                    "the loop runs once (Disable-unknown-trip-iv skips trip counts <= 1)"
                } else {
                    "the trip count is not computable (Disable-unknown-trip-iv)"
                };
                return skip(cx, func, Skip::UnknownTripCount, msg.into());
            }
        }
        self.blocks.clear();
        self.blocks.extend(li.blocks(l));
        let c = Ctx {
            l,
            header,
            preheader,
            latch,
        };
        let before_btc = btc.and_then(|s| self.se.as_const(s));
        let changed = self.simplify(func, cx, &c, set);
        if !changed {
            return Ok(PassResult::UNCHANGED);
        }
        // Keep `nonlocal-uses` sound: new values are unmarked (so "may be used
        // elsewhere"); existing ones that gained uses are marked.
        if cx.analyses.nonlocal.is_valid() {
            for &v in &self.touched {
                cx.analyses.nonlocal.set(v, true);
            }
        }
        if set.verify {
            self.verify(func, cx, &c, before_btc)
                .map_err(|m| err(func, m))?;
        }
        Ok(PassResult::changed(
            Analyses::CFG
                .union(Analyses::DOMTREE)
                .union(Analyses::POSTDOM)
                .union(Analyses::LOOPS)
                .union(Analyses::NONLOCAL_USES),
        ))
    }
}

/// Append `v` to the arguments of every edge `from → to`.
fn push_edge_arg(func: &mut Function, from: Block, to: Block, v: Value) {
    let t = func.terminator(from).expect("a terminator");
    func.dfg.for_each_dest_mut(t, |bc, pool| {
        if bc.block == to {
            bc.args.push(v, pool);
        }
    });
}

fn sext(x: u64, bits: u32) -> i128 {
    let sh = 64 - bits;
    i128::from(((x << sh) as i64) >> sh)
}

/// The range of `a + k*t` over `k` in `0..=m` as exact integers in the signed (or
/// unsigned) reading of `bits`-wide values, if no value leaves it (no wrap).
fn iv_range(bits: u32, a: u64, t: u64, m: u64, signed: bool) -> Option<(i128, i128)> {
    let (lo, hi) = if signed {
        (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
    } else {
        (0, (1i128 << bits) - 1)
    };
    let a = if signed { sext(a, bits) } else { i128::from(a) };
    let end = a.checked_add(sext(t, bits).checked_mul(i128::from(m))?)?;
    (lo <= end && end <= hi).then_some((a, end))
}

/// Does `x pred c` hold for every value of `a + k*t`, `k` in `0..=m` (`Some(true)`), for
/// none (`Some(false)`), or does it depend on `k` (`None`)?
fn fold_by_range(bits: u32, a: u64, t: u64, m: u64, c: u64, pred: IntCC) -> Option<bool> {
    use IntCC::*;
    let signed = matches!(pred, Slt | Sle | Sgt | Sge);
    let readings: &[bool] = match pred {
        Eq | Ne => &[false, true],
        _ => &[signed],
    };
    for &s in readings {
        let Some((a0, end)) = iv_range(bits, a, t, m, s) else {
            continue;
        };
        let cv = if s { sext(c, bits) } else { i128::from(c) };
        let test = |x: i128| match pred {
            Eq => x == cv,
            Ne => x != cv,
            Slt | Ult => x < cv,
            Sle | Ule => x <= cv,
            Sgt | Ugt => x > cv,
            Sge | Uge => x >= cv,
        };
        if matches!(pred, Eq | Ne) {
            let step = sext(t, bits);
            let (lo, hi) = (a0.min(end), a0.max(end));
            let hit = cv >= lo && cv <= hi && (step == 0 || (cv - a0) % step == 0);
            if !hit {
                return Some(pred == Ne);
            }
            return None;
        }
        // The set of `k` where a linear test holds is a prefix or a suffix of `0..=m`.
        let (r0, r1) = (test(a0), test(end));
        return (r0 == r1).then_some(r0);
    }
    None
}

impl IndVarSimplify {
    /// `s` computed before the preheader's terminator (once per loop and expression).
    fn expand(
        &mut self,
        func: &mut Function,
        li: &LoopInfo,
        l: Loop,
        pre: Block,
        s: Scev,
    ) -> Option<Value> {
        if let Some(&v) = self.expanded.get(&s) {
            return Some(v);
        }
        let at = func.terminator(pre)?;
        // Definitions outside the loop that it uses dominate its preheader.
        let v = self
            .se
            .expand_with(func, |d, _| !li.contains(l, d), s, at)?;
        self.expanded.insert(s, v);
        self.touched.push(v);
        Some(v)
    }

    /// Would [`IndVarSimplify::expand`] succeed? (Nothing is inserted.)
    fn expandable(&self, func: &Function, li: &LoopInfo, l: Loop, pre: Block, s: Scev) -> bool {
        func.terminator(pre).is_some_and(|at| {
            self.se
                .can_expand_with(func, |d, _| !li.contains(l, d), s, at)
        })
    }

    /// Run the rewrites on one loop; `true` if anything changed.
    fn simplify(
        &mut self,
        func: &mut Function,
        cx: &mut PassContext<'_>,
        c: &Ctx,
        set: Settings,
    ) -> bool {
        let mut changed = false;
        self.expanded.clear();
        self.touched.clear();
        changed |= self.congruent_ivs(func, cx, c);
        if set.widen {
            changed |= self.widen(func, cx, c);
        }
        changed |= self.fold_compares(func, cx, c, set.post_increment_ranges);
        let mut predicated: Vec<Block> = Vec::new();
        if set.replexitval != ExitValues::Never {
            changed |= self.exit_values(func, cx, c, set.replexitval);
        }
        if set.predicate {
            changed |= self.predicate_exits(func, cx, c, &mut predicated);
        }
        if set.lftr {
            changed |= self.lftr(func, cx, c, &predicated);
        }
        changed |= self.dead_code(func, cx, c);
        changed
    }

    /// Header parameters with the same recurrence: later ones become the first.
    fn congruent_ivs(&mut self, func: &mut Function, cx: &mut PassContext<'_>, c: &Ctx) -> bool {
        let mut first: FxHashMap<Scev, Value> = FxHashMap::default();
        self.map.clear();
        let mut n = 0;
        for &p in func.dfg.block_params(c.header) {
            let Some(s) = self.se.value(p) else { continue };
            if self.se.addrec_loop(s) != Some(c.l) {
                continue;
            }
            match first.get(&s) {
                Some(&q) => {
                    self.map.insert(p, q);
                    self.touched.push(q);
                    n += 1;
                }
                None => {
                    first.insert(s, p);
                }
            }
        }
        if n == 0 {
            return false;
        }
        remap_instructions(func, &self.blocks, &self.map);
        cx.stats.add(NAME, "NumCongruentIVs", n);
        true
    }

    /// Widen narrow IVs that the loop extends.
    fn widen(&mut self, func: &mut Function, cx: &mut PassContext<'_>, c: &Ctx) -> bool {
        let se = &self.se;
        let (li, cfg) = (&cx.analyses.loops, &cx.analyses.cfg);
        let m = se.max_backedge_taken_count(c.l);
        let (Some(pre_args), Some(latch_args)) = (
            edge_args(func, c.preheader, c.header),
            edge_args(func, c.latch, c.header),
        ) else {
            return false;
        };
        let params = func.dfg.block_params(c.header).to_vec();
        let mut changed = false;
        for (idx, &p) in params.iter().enumerate() {
            let ty = func.dfg.value_type(p);
            if !ty.is_int() || ty.bits() >= 64 {
                continue;
            }
            let bits = ty.bits();
            let Some(s) = se.value(p) else { continue };
            if se.addrec_loop(s) != Some(c.l) {
                continue;
            }
            let Some(t) = se.as_const(se.operands(s)[1]) else {
                continue;
            };
            let inc = look_through_params(func, cfg, li, c.l, latch_args[idx]);
            let ValueDef::Result(inc_inst) = func.dfg.value_def(inc) else {
                continue;
            };
            if !func
                .layout
                .inst_block(inc_inst)
                .is_some_and(|b| li.contains(c.l, b))
            {
                continue;
            }
            // The extensions of `p` and of its increment, of one kind and width.
            let mut users: Vec<(Inst, Value, bool)> = Vec::new();
            let mut kind: Option<(Opcode, Type)> = None;
            for &b in &self.blocks {
                for i in func.layout.block_insts(b) {
                    let InstructionData::Unary { opcode, arg } = *func.dfg.inst(i) else {
                        continue;
                    };
                    if !matches!(opcode, Opcode::Sext | Opcode::Zext) || (arg != p && arg != inc) {
                        continue;
                    }
                    let r = func.dfg.inst_result(i).expect("an extension has a result");
                    let rty = func.dfg.value_type(r);
                    if kind.is_none_or(|k| k == (opcode, rty)) {
                        kind = Some((opcode, rty));
                        users.push((i, r, arg == p));
                    }
                }
            }
            let Some((op, wide)) = kind else { continue };
            let signed = op == Opcode::Sext;
            // No wrap over every value the IV and its increment take.
            let flags = se.flags(s);
            let start = se.as_const(se.operands(s)[0]);
            let by_range = match (start, m) {
                (Some(a), Some(m)) => m
                    .checked_add(1)
                    .is_some_and(|m1| iv_range(bits, a, t, m1, signed).is_some()),
                _ => false,
            };
            let nowrap = if signed {
                flags.contains(ScevFlags::NSW) || by_range
            } else {
                sext(t, bits) > 0 && (flags.contains(ScevFlags::NUW) || by_range)
            };
            if !nowrap {
                continue;
            }
            // The wide twin: started from the extended start, stepped next to the increment.
            let pre_term = func.terminator(c.preheader).expect("a terminator");
            let mut cur = FuncCursor::new(func).before_inst(pre_term);
            let ws = cur.cast(op, wide, pre_args[idx]);
            let step = if signed {
                sext(t, bits) as i64
            } else {
                t as i64
            };
            let wstep = cur.iconst(wide, step);
            let pw = func.dfg.append_block_param(c.header, wide);
            push_edge_arg(func, c.preheader, c.header, ws);
            let after = func.layout.next_inst(inc_inst).expect("not a terminator");
            let mut cur = FuncCursor::new(func).before_inst(after);
            let wnext = cur.binary(Opcode::Iadd, pw, wstep, IntFlags::NONE);
            push_edge_arg(func, c.latch, c.header, wnext);
            self.map.clear();
            for &(i, r, of_param) in &users {
                self.map.insert(r, if of_param { pw } else { wnext });
                func.layout.remove_inst(i);
            }
            remap_instructions(func, &self.blocks, &self.map);
            cx.stats.add(NAME, "NumWidened", 1);
            changed = true;
        }
        changed
    }

    /// `icmp`s of an IV against a constant decided by the IV's range.
    fn fold_compares(
        &mut self,
        func: &mut Function,
        cx: &mut PassContext<'_>,
        c: &Ctx,
        post_increment: bool,
    ) -> bool {
        let se = &self.se;
        let Some(m) = se.max_backedge_taken_count(c.l) else {
            return false;
        };
        let mut folds: Vec<(Inst, bool)> = Vec::new();
        for &b in &self.blocks {
            for i in func.layout.block_insts(b) {
                let InstructionData::IntCompare { cond, args } = *func.dfg.inst(i) else {
                    continue;
                };
                let (Some(x), Some(y)) = (se.value(args[0]), se.value(args[1])) else {
                    continue;
                };
                let (rec, k, pred, rv) = if se.addrec_loop(x) == Some(c.l) {
                    (x, y, cond, args[0])
                } else if se.addrec_loop(y) == Some(c.l) {
                    (y, x, cond.swapped(), args[1])
                } else {
                    continue;
                };
                if !post_increment
                    && !matches!(func.dfg.value_def(rv), ValueDef::Param(h, _) if h == c.header)
                {
                    continue;
                }
                let (Some(a), Some(t), Some(k)) = (
                    se.as_const(se.operands(rec)[0]),
                    se.as_const(se.operands(rec)[1]),
                    se.as_const(k),
                ) else {
                    continue;
                };
                if let Some(r) = fold_by_range(se.bits(rec), a, t, m, k, pred) {
                    folds.push((i, r));
                }
            }
        }
        for &(i, r) in &folds {
            func.dfg
                .replace_inst(i, InstructionData::IntConst { imm: i64::from(r) });
        }
        cx.stats.add(NAME, "NumFoldedCompares", folds.len() as u64);
        !folds.is_empty()
    }

    /// Does the loop (nest) hold an operation with effects beyond its result?
    fn has_side_effects(&self, func: &Function) -> bool {
        self.blocks.iter().any(|&b| {
            func.layout.block_insts(b).any(|i| {
                let op = func.dfg.inst(i).opcode();
                op.has_side_effects() || op.is_convergent()
            })
        })
    }

    /// The exit edges of the loop: (exiting block, exit block).
    fn exit_edges(&self, li: &LoopInfo, cfg: &Cfg, l: Loop) -> Vec<(Block, Block)> {
        let mut out = Vec::new();
        for &b in &self.blocks {
            for &s in cfg.succs(b) {
                if !li.contains(l, s) && !out.contains(&(b, s)) {
                    out.push((b, s));
                }
            }
        }
        out
    }

    /// Values leaving the loop replaced by their closed forms, computed in the preheader.
    fn exit_values(
        &mut self,
        func: &mut Function,
        cx: &mut PassContext<'_>,
        c: &Ctx,
        mode: ExitValues,
    ) -> bool {
        if self.se.backedge_taken_count(c.l).is_none() {
            return false;
        }
        let li = &cx.analyses.loops;
        let edges = self.exit_edges(li, &cx.analyses.cfg, c.l);
        // Candidates: (exiting, exit, argument index, closed form, cost).
        let mut cands: Vec<(Block, Block, usize, Scev, u32)> = Vec::new();
        let mut all = true;
        for &(x, e) in &edges {
            let Some(args) = edge_args(func, x, e) else {
                all = false;
                continue;
            };
            for (i, &a) in args.iter().enumerate() {
                if def_block(func, a).is_none_or(|d| !li.contains(c.l, d)) {
                    continue; // already loop-invariant
                }
                let ev = self
                    .se
                    .value(a)
                    .and_then(|s| self.se.exit_value(s, c.l))
                    .and_then(|ev| self.se.expansion_cost(ev).map(|k| (ev, k)));
                match ev {
                    Some((ev, k)) => cands.push((x, e, i, ev, k)),
                    None => all = false,
                }
            }
        }
        // LLVM's rule: an expensive closed form is still worth it when it leaves the loop
        // with nothing to compute for anyone (loop deletion then removes it).
        let deletable = all && !self.has_side_effects(func);
        let l = c.l;
        let mut n = 0u64;
        let mut expensive = 0u64;
        for &(x, e, i, ev, cost) in &cands {
            let ok = mode == ExitValues::Always || cost <= CHEAP_EXPANSION_BUDGET || deletable;
            if !ok {
                expensive += 1;
                continue;
            }
            let Some(v) = self.expand(func, li, l, c.preheader, ev) else {
                continue;
            };
            let t = func.terminator(x).expect("a terminator");
            func.dfg.for_each_dest_mut(t, |bc, pool| {
                if bc.block == e {
                    bc.args.as_mut_slice(pool)[i] = v;
                }
            });
            n += 1;
        }
        cx.stats.add(NAME, "NumReplaced", n);
        cx.stats.add(NAME, "NumExitValuesTooExpensive", expensive);
        n > 0
    }

    /// Loop-invariant exit tests for a side-effect-free loop whose exits pass only
    /// loop-invariant values (LLVM's `predicateLoopExits`): the first exit whose count is
    /// the loop's is taken at once; which exit is taken is all that is observable.
    fn predicate_exits(
        &mut self,
        func: &mut Function,
        cx: &mut PassContext<'_>,
        c: &Ctx,
        predicated: &mut Vec<Block>,
    ) -> bool {
        let Some(btc) = self.se.backedge_taken_count(c.l) else {
            return false;
        };
        let counts = self.se.loop_counts(c.l).exits.clone();
        if counts.len() < 2 || self.has_side_effects(func) {
            return false;
        }
        let li = &cx.analyses.loops;
        let l = c.l;
        for &(x, e) in &self.exit_edges(li, &cx.analyses.cfg, l) {
            let Some(args) = edge_args(func, x, e) else {
                return false;
            };
            if args
                .iter()
                .any(|&a| def_block(func, a).is_some_and(|d| li.contains(l, d)))
            {
                return false;
            }
        }
        let mut exits: Vec<(Block, Scev, bool)> = Vec::new();
        for &(x, ec) in &counts {
            let Some(ec) = ec.exact else { return false };
            let t = func.terminator(x).expect("a terminator");
            let InstructionData::Brif { blocks, .. } = func.dfg.inst(t) else {
                return false;
            };
            let exit_on_then = !li.contains(l, blocks[0].block);
            if ec != btc
                && self
                    .se
                    .expansion_cost(ec)
                    .is_none_or(|k| k > LIMIT_EXPANSION_BUDGET)
            {
                return false;
            }
            exits.push((x, ec, exit_on_then));
        }
        if self
            .se
            .expansion_cost(btc)
            .is_none_or(|k| k > LIMIT_EXPANSION_BUDGET)
        {
            return false;
        }
        // All or nothing: an exit left testing its own condition could be overtaken.
        if !exits
            .iter()
            .all(|&(_, ec, _)| ec == btc || self.expandable(func, li, l, c.preheader, ec))
            || !self.expandable(func, li, l, c.preheader, btc)
        {
            return false;
        }
        let Some(vb) = self.expand(func, li, l, c.preheader, btc) else {
            return false;
        };
        let pre_term = func.terminator(c.preheader).expect("a terminator");
        let wb = func.dfg.value_type(vb);
        for &(x, ec, exit_on_then) in &exits {
            let cond = if ec == btc {
                let mut cur = FuncCursor::new(func).before_inst(pre_term);
                cur.iconst(Type::I1, i64::from(exit_on_then))
            } else {
                let mut ve = self
                    .expand(func, li, l, c.preheader, ec)
                    .expect("checked expandable");
                let mut cur = FuncCursor::new(func).before_inst(pre_term);
                if cur.func_mut().dfg.value_type(ve).bits() < wb.bits() {
                    ve = cur.cast(Opcode::Zext, wb, ve);
                }
                let cc = if exit_on_then { IntCC::Eq } else { IntCC::Ne };
                cur.icmp(cc, ve, vb)
            };
            let t = func.terminator(x).expect("a terminator");
            if let InstructionData::Brif { arg, .. } = func.dfg.inst_mut(t) {
                *arg = cond;
            }
            predicated.push(x);
        }
        cx.stats
            .add(NAME, "NumPredicatedExits", predicated.len() as u64);
        !predicated.is_empty()
    }

    /// Linear-function test replacement on each counted exit.
    fn lftr(
        &mut self,
        func: &mut Function,
        cx: &mut PassContext<'_>,
        c: &Ctx,
        predicated: &[Block],
    ) -> bool {
        let li = &cx.analyses.loops;
        let l = c.l;
        let counts = self.se.loop_counts(l).exits.clone();
        let btc_max = self.se.max_backedge_taken_count(l);
        let Some(latch_args) = edge_args(func, c.latch, c.header) else {
            return false;
        };
        let params = func.dfg.block_params(c.header).to_vec();
        let mut n = 0u64;
        for &(x, ec) in &counts {
            let Some(ec) = ec.exact else { continue };
            if predicated.contains(&x) || self.se.as_const(ec) == Some(0) {
                continue;
            }
            let t = func.terminator(x).expect("a terminator");
            let InstructionData::Brif { arg: cond, blocks } = *func.dfg.inst(t) else {
                continue;
            };
            let exit_on_then = !li.contains(l, blocks[0].block);
            let ValueDef::Result(ci) = func.dfg.value_def(cond) else {
                continue;
            };
            let InstructionData::IntCompare { cond: cc, args } = *func.dfg.inst(ci) else {
                continue;
            };
            let is_iv = |v: Value| {
                params.contains(&v)
                    || latch_args.contains(&v)
                    || latch_args
                        .iter()
                        .any(|&a| look_through_params(func, &cx.analyses.cfg, li, l, a) == v)
            };
            let invariant = |v: Value| def_block(func, v).is_none_or(|d| !li.contains(l, d));
            if matches!(cc, IntCC::Eq | IntCC::Ne)
                && ((is_iv(args[0]) && invariant(args[1]))
                    || (is_iv(args[1]) && invariant(args[0])))
            {
                continue; // already a canonical exit test
            }
            // The IV: a unit-step recurrence of this loop, the widest; its increment when
            // the exit is the latch's (the post-increment value is what the latch has).
            let mut best: Option<(usize, Scev, u32)> = None;
            for (i, &p) in params.iter().enumerate() {
                let Some(s) = self.se.value(p) else { continue };
                if self.se.addrec_loop(s) != Some(l) {
                    continue;
                }
                let bits = self.se.bits(s);
                let unit = self
                    .se
                    .as_const(self.se.operands(s)[1])
                    .is_some_and(|t| t == 1 || sext(t, bits) == -1);
                if unit && best.is_none_or(|(_, _, b)| bits > b) {
                    best = Some((i, s, bits));
                }
            }
            let Some((idx, s, bits)) = best else { continue };
            let inc = look_through_params(func, &cx.analyses.cfg, li, l, latch_args[idx]);
            let use_post = x == c.latch
                && matches!(func.dfg.value_def(inc), ValueDef::Result(i)
                    if func.layout.inst_block(i).is_some_and(|b| li.contains(l, b)));
            // The count in the IV's width; a truncation must not lose anything.
            let ew = self.se.bits(ec);
            let count = if ew > bits {
                let max = self
                    .se
                    .loop_counts(l)
                    .exits
                    .iter()
                    .find(|e| e.0 == x)
                    .and_then(|e| e.1.max)
                    .or(btc_max);
                if !max.is_some_and(|m| bits < 64 && m < (1u64 << bits)) {
                    continue;
                }
                self.se.trunc(ec, bits)
            } else if ew < bits {
                self.se.zext(ec, bits)
            } else {
                ec
            };
            let (a, step) = (self.se.operands(s)[0], self.se.operands(s)[1]);
            let k = if use_post {
                let one = self.se.constant(bits, 1);
                self.se.add(count, one)
            } else {
                count
            };
            let off = self.se.mul(step, k);
            let limit = self.se.add(a, off);
            if self
                .se
                .expansion_cost(limit)
                .is_none_or(|k| k > LIMIT_EXPANSION_BUDGET)
            {
                continue;
            }
            let Some(vl) = self.expand(func, li, l, c.preheader, limit) else {
                continue;
            };
            let iv = if use_post { inc } else { params[idx] };
            self.touched.push(iv);
            if use_post {
                // The increment is now branched on: an overflow must not be poison.
                if let ValueDef::Result(ii) = func.dfg.value_def(inc) {
                    if let InstructionData::Binary { flags, .. } = func.dfg.inst_mut(ii) {
                        *flags = IntFlags::NONE;
                    }
                }
            }
            let mut cur = FuncCursor::new(func).before_inst(t);
            let pred = if exit_on_then { IntCC::Eq } else { IntCC::Ne };
            let newc = cur.icmp(pred, iv, vl);
            if let InstructionData::Brif { arg, .. } = func.dfg.inst_mut(t) {
                *arg = newc;
            }
            n += 1;
        }
        cx.stats.add(NAME, "NumLFTR", n);
        n > 0
    }

    /// Remove the loop's pure instructions and block parameters that nothing needs
    /// (aggressive dead-code elimination over the nest: a value is live when an effect, a
    /// branch condition or an exit needs it), so an IV cycle (a header parameter and its
    /// increment) that only fed itself goes with everything that fed only it.
    fn dead_code(&mut self, func: &mut Function, cx: &mut PassContext<'_>, c: &Ctx) -> bool {
        let r = self.dce.run(
            func,
            &cx.analyses.cfg,
            &cx.analyses.loops,
            c.l,
            c.header,
            &self.blocks,
        );
        cx.stats.add(NAME, "NumDeadInsts", r.insts);
        cx.stats.add(NAME, "NumDeadIVs", r.header_params);
        r.insts + r.params > 0
    }

    /// `verify-indvars`: the function verifies and a constant trip count, computed again,
    /// has not grown.
    fn verify(
        &mut self,
        func: &Function,
        cx: &mut PassContext<'_>,
        c: &Ctx,
        before: Option<u64>,
    ) -> Result<(), String> {
        gyre_ir::verifier::verify_function(func, None)
            .map_err(|e| format!("verify-indvars: the function no longer verifies: {e:?}"))?;
        self.se
            .compute_nest(func, &cx.analyses.cfg, &cx.analyses.loops, c.l);
        let after = self
            .se
            .backedge_taken_count(c.l)
            .and_then(|s| self.se.as_const(s));
        // A count may become unknown (a rewritten test SCEV reads less well: the loop
        // still runs as often), and may shrink: exit predication makes a loop without
        // side effects leave on its first iteration (LLVM's check is the same: "we may
        // have *changed* the exit count, but only by reducing it"). It never grows.
        if let (Some(b), Some(a)) = (before, after) {
            if a > b {
                return Err(format!(
                    "verify-indvars: the backedge-taken count grew from {b} to {a}"
                ));
            }
        }
        Ok(())
    }
}
