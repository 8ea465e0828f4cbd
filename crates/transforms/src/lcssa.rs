//! `lcssa`: loop-closed SSA form.
//!
//! A value defined in a loop reaches uses outside the loop only through a parameter of an
//! exit block (LLVM's LCSSA phis). Follows LLVM's `formLCSSAForInstructions`, with block
//! parameters for phis and the pruned `DF+` SSA updater ([`SsaUpdater`]):
//!
//! 1. One scan of the reachable blocks finds every use of a value outside the innermost
//!    loop of its definition, and queues the value on that loop.
//! 2. Loops are processed innermost first (a priority queue on loop ids, which number
//!    inner loops before outer ones). For a value `v` of loop `L` with outside uses:
//!    - a backward walk from the use blocks, stopping at exit blocks of `L`, finds where
//!      `v` is live outside `L` and which exit blocks are needed (each must be dominated
//!      by `v`'s definition, otherwise the input was not valid SSA);
//!    - each needed exit gets a parameter, passed `v` on every edge from inside `L`;
//!    - the SSA updater, given the exit parameters as the variable's definitions, rewrites
//!      every outside use and every argument for the exit parameters from outside `L`:
//!      `DF+` of the needed exits, pruned to the blocks where `v` is live (Cytron et al.
//!      1991; pruned as in LLVM's `SSAUpdaterBulk`), gets a parameter too (the merge of
//!      several exits' values), and each use reads the nearest dominating new parameter.
//! 3. A new exit parameter that lies inside an outer loop and is itself used outside that
//!    loop is queued on it, so every level of a nest is closed.
//!
//! Cost per (value, loop): linear in its outside uses, the blocks where it is live outside
//! the loop and their frontiers. The dominance frontiers are computed once per run.

use crate::analyses::{Analyses, AnalysisCache};
use crate::loop_simplify::def_block;
use crate::manager::{Forms, FunctionPass, PassContext, PassError, PassResult};
use crate::utils::ssa_updater::{SsaContext, SsaUpdater};
use gyre_analysis::{DominanceFrontiers, Loop, LoopInfo};
use gyre_ir::{Block, EntityRef, Function, Inst, Value};
use std::collections::BTreeSet;

const NAME: &str = "lcssa";
const NO_USE: u32 = u32::MAX;
const NO_LOOP: u32 = u32::MAX;

/// The `lcssa` pass (LLVM's `LCSSAPass`).
///
/// **Requires**: valid IR (definitions dominate uses). Not loop-simplify form: exit blocks
/// with predecessors outside the loop are handled (their new parameter receives, from such
/// predecessors, the value reaching them).
///
/// **Establishes**: LCSSA form for every loop ([`LoopInfo::is_all_lcssa_form`]): no value
/// defined in a loop is used by an instruction of a reachable block outside it; values
/// leave a loop only as arguments to parameters of its exit blocks. Every level of a nest
/// is closed.
///
/// **Preserves**: the CFG, so every control-flow analysis (it only adds block parameters
/// and rewrites uses); behaviour; loop-simplify form.
///
/// **Invalidates**: `nonlocal-uses` (uses move to exit-block parameters).
///
/// **Gives up when**: never on valid IR. Uses in unreachable blocks are left alone (they
/// need no dominance). A use that its definition does not dominate is an error.
///
/// **Knobs**: `verify-loop-lcssa` (default false, LLVM's option of that name): after
/// forming, check LCSSA form on every loop and fail the pass naming the first loop where
/// it does not hold (the check `--verify-each` always does; counted in
/// `NumLoopsVerified`).
///
/// **Stats**: `NumLCSSAParams` (exit and merge parameters added),
/// `NumOutsideUsesRewritten` (instructions whose operands were rewritten).
///
/// Running it twice changes nothing the second time.
#[derive(Default)]
pub struct Lcssa {
    s: Scratch,
    /// Computed once per run, read by every update (outside `Scratch`, which the
    /// updates borrow mutably).
    df: DominanceFrontiers,
}

/// Buffers reused across runs.
#[derive(Default)]
struct Scratch {
    /// Per value: first record of its list of outside uses (`NO_USE` if none).
    use_head: Vec<u32>,
    /// Per use record: the next record of the same value.
    use_next: Vec<u32>,
    /// Per use record: the using instruction.
    use_inst: Vec<Inst>,
    /// Per value: queued on its loop already.
    queued: Vec<bool>,
    /// Per value existing at the start: the innermost loop of its definition (`NO_LOOP`
    /// if none), so that the scan of every operand costs one lookup, not five.
    def_loop: Vec<u32>,
    /// Per loop: values to close.
    pending: Vec<Vec<Value>>,
    /// Generation of `visited` (one per closed value).
    epoch: u32,
    /// Blocks the liveness walk of the value being closed has seen.
    visited: Vec<u32>,
    pred_mark: Vec<u32>,
    pred_stamp: u32,
    stack: Vec<Block>,
    exits: Vec<Block>,
    uses: Vec<(Inst, Block)>,
    /// Terminators of the reachable predecessors outside the loop of the needed exits,
    /// with their blocks: their argument for the exit's parameter is a use to rewrite.
    arg_uses: Vec<(Inst, Block)>,
    /// The instructions handed to the updater.
    insts: Vec<Inst>,
    up: SsaUpdater,
}

impl FunctionPass for Lcssa {
    fn name(&self) -> &'static str {
        NAME
    }

    fn establishes(&self) -> Forms {
        Forms {
            lcssa: true,
            ..Forms::default()
        }
    }

    fn run(
        &mut self,
        func: &mut Function,
        cx: &mut PassContext<'_>,
    ) -> Result<PassResult, PassError> {
        let res = self.form(func, cx)?;
        if cx.knobs.verify_loop_lcssa() {
            // The pass preserves every analysis, so the cached ones describe the result.
            cx.analyses
                .ensure(
                    func,
                    Analyses::CFG
                        .union(Analyses::DOMTREE)
                        .union(Analyses::LOOPS),
                )
                .map_err(|e| PassError(format!("{NAME}: @{}: {e}", func.name)))?;
            verify_lcssa(func, cx.analyses).map_err(|m| {
                PassError(format!("{NAME}: @{}: verify-loop-lcssa: {m}", func.name))
            })?;
            cx.stats.add(
                NAME,
                "NumLoopsVerified",
                cx.analyses.loops.num_loops() as u64,
            );
        }
        Ok(res)
    }
}

/// `-C verify-loop-lcssa`: check that every loop of `func` is in LCSSA form, naming the
/// first loop (outermost first) that is not. `cache` must hold valid loops and dominators.
pub fn verify_lcssa(func: &Function, cache: &AnalysisCache) -> Result<(), String> {
    let (loops, dt) = (&cache.loops, &cache.domtree);
    match loops
        .loops()
        .rev()
        .find(|&l| !loops.is_lcssa_form(l, func, dt))
    {
        Some(l) => Err(format!(
            "the loop at {} is not in LCSSA form: a value defined in it is used outside \
             it, not through an exit-block parameter",
            loops.header(l)
        )),
        None => Ok(()),
    }
}

impl Lcssa {
    fn form(
        &mut self,
        func: &mut Function,
        cx: &mut PassContext<'_>,
    ) -> Result<PassResult, PassError> {
        let fname = func.name.clone();
        let err = |m: String| PassError(format!("{NAME}: @{fname}: {m}"));
        cx.analyses
            .ensure(
                func,
                Analyses::CFG
                    .union(Analyses::DOMTREE)
                    .union(Analyses::LOOPS),
            )
            .map_err(|e| err(e.into()))?;
        let cache: &AnalysisCache = cx.analyses;
        let (cfg, loops) = (&cache.cfg, &cache.loops);
        if loops.num_loops() == 0 {
            return Ok(PassResult::UNCHANGED);
        }
        let s = &mut self.s;
        s.reset(func, loops);
        let mut active = BTreeSet::new();
        for b in func.layout.blocks() {
            if !cfg.is_reachable(b) {
                continue;
            }
            let user_loop = loops.innermost_loop(b).map_or(NO_LOOP, |l| l.as_u32());
            for inst in func.layout.block_insts(b) {
                func.dfg.for_each_inst_value(inst, |v| {
                    // Fast path: defined outside loops, or in the user's own loop.
                    let dl = s.def_loop.get(v.index()).copied().unwrap_or(NO_LOOP);
                    if dl != NO_LOOP && dl != user_loop {
                        s.note_use(func, loops, v, inst, b, &mut active);
                    }
                });
            }
        }
        if active.is_empty() {
            return Ok(PassResult::UNCHANGED);
        }
        self.df.compute(func, cfg, &cache.domtree);
        let df = &self.df;
        let (mut params, mut rewritten) = (0, 0);
        while let Some(l) = active.pop_first() {
            let vals = core::mem::take(&mut s.pending[l as usize]);
            for v in vals {
                let (p, r) = s
                    .close(func, cache, df, Loop::from_u32(l), v, &mut active)
                    .map_err(err)?;
                params += p;
                rewritten += r;
            }
        }
        cx.stats.add(NAME, "NumLCSSAParams", params);
        cx.stats.add(NAME, "NumOutsideUsesRewritten", rewritten);
        // Only block parameters and operands changed: the CFG and everything computed from
        // it still hold.
        // Uses move to exit-block parameters: which values are used outside their
        // block changes.
        Ok(PassResult::changed(
            Analyses::ALL.minus(Analyses::NONLOCAL_USES),
        ))
    }
}

impl Scratch {
    fn reset(&mut self, func: &Function, loops: &LoopInfo) {
        let num_loops = loops.num_loops();
        let nb = func.dfg.num_blocks();
        let nv = func.dfg.num_values();
        self.def_loop.clear();
        self.def_loop.resize(nv, NO_LOOP);
        for b in func.layout.blocks() {
            let Some(l) = loops.innermost_loop(b) else {
                continue;
            };
            for &p in func.dfg.block_params(b) {
                self.def_loop[p.index()] = l.as_u32();
            }
            for i in func.layout.block_insts(b) {
                if let Some(r) = func.dfg.inst_result(i) {
                    self.def_loop[r.index()] = l.as_u32();
                }
            }
        }
        self.use_head.clear();
        self.use_head.resize(nv, NO_USE);
        self.use_next.clear();
        self.use_inst.clear();
        self.queued.clear();
        self.queued.resize(nv, false);
        self.pending.clear();
        self.pending.resize(num_loops, Vec::new());
        self.epoch = 0;
        self.visited.clear();
        self.visited.resize(nb, 0);
        self.pred_mark.clear();
        self.pred_mark.resize(nb, 0);
        self.pred_stamp = 0;
    }

    /// Record that `inst` in block `user` uses `v`, if that is outside the innermost loop
    /// of `v`'s definition, and queue `v` on that loop.
    fn note_use(
        &mut self,
        func: &Function,
        loops: &LoopInfo,
        v: Value,
        inst: Inst,
        user: Block,
        active: &mut BTreeSet<u32>,
    ) {
        let Some(d) = def_block(func, v) else { return };
        let Some(ld) = loops.innermost_loop(d) else {
            return;
        };
        if loops.contains(ld, user) {
            return;
        }
        let i = v.index();
        if i >= self.use_head.len() {
            self.use_head.resize(i + 1, NO_USE);
            self.queued.resize(i + 1, false);
        }
        let h = self.use_head[i];
        // Operands of one instruction come together: record the instruction once.
        if h == NO_USE || self.use_inst[h as usize] != inst {
            self.use_next.push(h);
            self.use_inst.push(inst);
            self.use_head[i] = (self.use_inst.len() - 1) as u32;
        }
        if !self.queued[i] {
            self.queued[i] = true;
            self.pending[ld.index()].push(v);
            active.insert(ld.as_u32());
        }
    }

    /// Route every use of `v` outside `l` (the innermost loop of its definition) through
    /// parameters of `l`'s exit blocks. Returns (parameters added, instructions rewritten).
    fn close(
        &mut self,
        func: &mut Function,
        cache: &AnalysisCache,
        df: &DominanceFrontiers,
        l: Loop,
        v: Value,
        active: &mut BTreeSet<u32>,
    ) -> Result<(u64, u64), String> {
        let (cfg, dt, loops) = (&cache.cfg, &cache.domtree, &cache.loops);
        let h = loops.header(l);
        let d = def_block(func, v).ok_or_else(|| format!("{v} is used but not defined"))?;

        // The uses still outside `l`, in program order (the list is last-in first-out).
        self.uses.clear();
        let mut u = self.use_head[v.index()];
        self.use_head[v.index()] = NO_USE;
        while u != NO_USE {
            let inst = self.use_inst[u as usize];
            if let Some(b) = func.layout.inst_block(inst) {
                if cfg.is_reachable(b) && !loops.contains(l, b) {
                    self.uses.push((inst, b));
                }
            }
            u = self.use_next[u as usize];
        }
        self.uses.reverse();
        if self.uses.is_empty() {
            return Ok((0, 0));
        }

        // Liveness outside `l`, backwards from the uses; exit blocks stop the walk (their
        // new parameter defines the value there) but need arguments from any outside
        // predecessors, which are therefore live-out.
        self.epoch += 1;
        let ep = self.epoch;
        self.exits.clear();
        self.stack.clear();
        self.stack.extend(self.uses.iter().map(|&(_, b)| b));
        let not_dominated = |b: Block| {
            format!(
                "{v}, defined in the loop at {h}, reaches {b} without dominating it: not valid SSA"
            )
        };
        while let Some(b) = self.stack.pop() {
            if self.visited[b.index()] == ep {
                continue;
            }
            self.visited[b.index()] = ep;
            if loops.contains(l, b) {
                return Err(not_dominated(b));
            }
            let preds = cfg.preds(b);
            if preds.iter().any(|&p| loops.contains(l, p)) {
                if !dt.dominates(d, b) {
                    return Err(not_dominated(b));
                }
                self.exits.push(b);
                for &p in preds {
                    if cfg.is_reachable(p) && !loops.contains(l, p) {
                        self.stack.push(p);
                    }
                }
            } else {
                if cfg.entry() == Some(b) {
                    return Err(not_dominated(b));
                }
                self.stack
                    .extend(preds.iter().copied().filter(|&p| cfg.is_reachable(p)));
            }
        }

        let rpo = |b: &Block| cfg.rpo_number(*b);
        self.exits.sort_unstable_by_key(rpo);

        // Exit parameters, passed `v` on every edge; from reachable predecessors outside
        // `l` that argument is a use for the updater to rewrite (unreachable ones need no
        // dominance: `v` will do).
        let ty = func.dfg.value_type(v);
        self.up.reset(ty);
        self.up.set_unreachable_value(v);
        self.arg_uses.clear();
        for k in 0..self.exits.len() {
            let j = self.exits[k];
            let param = func.dfg.append_block_param(j, ty);
            self.up.add_available_value(j, param);
            self.pred_stamp += 1;
            let stamp = self.pred_stamp;
            for &p in cfg.preds(j) {
                if self.pred_mark[p.index()] == stamp {
                    continue;
                }
                self.pred_mark[p.index()] = stamp;
                let t = func
                    .terminator(p)
                    .ok_or_else(|| format!("{p} branches to {j} but has no terminator"))?;
                func.dfg.for_each_dest_mut(t, |bc, pool| {
                    if bc.block == j {
                        bc.args.push(v, pool);
                    }
                });
                if cfg.is_reachable(p) && !loops.contains(l, p) {
                    self.arg_uses.push((t, p));
                }
            }
        }
        // Merge parameters and every rewrite, in one update.
        self.insts.clear();
        self.insts.extend(self.uses.iter().map(|&(i, _)| i));
        self.insts.extend(self.arg_uses.iter().map(|&(i, _)| i));
        let sx = SsaContext::new(cfg, dt, df);
        let ssa_err = |e| format!("{v}, defined in the loop at {h}: {e}");
        self.up
            .rewrite_uses(func, &sx, &self.insts, v)
            .map_err(ssa_err)?;

        // Queue the new values used outside an outer loop: the exits' arguments, the merge
        // parameters' arguments, then the uses (this order decides the order of the
        // outer loops' new parameters).
        for k in 0..self.arg_uses.len() {
            let (t, p) = self.arg_uses[k];
            let arg = self.up.value_at_end(func, &sx, p).map_err(ssa_err)?;
            if arg != v {
                self.note_use(func, loops, arg, t, p, active);
            }
        }
        let nmerge = self.up.new_params().len();
        for k in 0..nmerge {
            let j = self.up.new_params()[k].0;
            self.pred_stamp += 1;
            let stamp = self.pred_stamp;
            for &p in cfg.preds(j) {
                if self.pred_mark[p.index()] == stamp {
                    continue;
                }
                self.pred_mark[p.index()] = stamp;
                if !cfg.is_reachable(p) || loops.contains(l, p) {
                    continue;
                }
                let t = func
                    .terminator(p)
                    .ok_or_else(|| format!("{p} branches to {j} but has no terminator"))?;
                let arg = self.up.value_at_end(func, &sx, p).map_err(ssa_err)?;
                if arg != v {
                    self.note_use(func, loops, arg, t, p, active);
                }
            }
        }
        for k in 0..self.uses.len() {
            let (inst, b) = self.uses[k];
            let w = self.up.use_value(func, &sx, inst).map_err(ssa_err)?;
            self.note_use(func, loops, w, inst, b, active);
        }
        Ok(((self.exits.len() + nmerge) as u64, self.uses.len() as u64))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::loop_simplify::LoopSimplify;
    use crate::testutil::{run_pass, try_run_pass};
    use gyre_analysis::{Cfg, DomTree};
    use std::fmt::Write as _;

    /// A canonical nest of `depth` loops; the innermost header defines v2, returned after
    /// the whole nest: it must leave through an exit parameter at every level.
    fn deep_nest(depth: usize) -> String {
        let mut s = String::from(
            "func @f(i32) -> i32 {\nblock0(v0: i32):\n    v1 = icmp slt v0, v0\n    jump block1\n",
        );
        for k in 1..depth {
            let _ = writeln!(s, "block{k}:\n    jump block{}", k + 1);
        }
        let _ = writeln!(
            s,
            "block{depth}:\n    v2 = iadd v0, v0\n    brif v1, block{depth}, block{}",
            2 * depth
        );
        for k in 1..=depth {
            if k == 1 {
                let _ = writeln!(s, "block{}:\n    return v2", depth + 1);
            } else {
                let _ = writeln!(
                    s,
                    "block{}:\n    brif v1, block{}, block{}",
                    depth + k,
                    k - 1,
                    depth + k - 1
                );
            }
        }
        s.push_str("}\n");
        s
    }

    #[test]
    fn every_level_of_a_deep_nest_is_closed() {
        let depth = 1000;
        let mut f = gyre_ir::parse_function(&deep_nest(depth)).expect("parses");
        let (ls, _) = run_pass(&mut LoopSimplify::default(), &mut f);
        assert_eq!(ls, PassResult::UNCHANGED, "the nest is canonical already");
        let (res, stats) = run_pass(&mut Lcssa::default(), &mut f);
        assert_eq!(
            res,
            PassResult::changed(Analyses::ALL.minus(Analyses::NONLOCAL_USES))
        );
        assert_eq!(stats.get(NAME, "NumLCSSAParams"), depth as u64);
        assert_eq!(stats.get(NAME, "NumOutsideUsesRewritten"), depth as u64);
        gyre_ir::verifier::verify_function(&f, None).expect("verifies");
        let cfg = Cfg::with_function(&f).expect("valid");
        let dt = DomTree::with_function(&f, &cfg);
        let li = LoopInfo::with_function(&f, &cfg, &dt);
        assert!(li.is_all_lcssa_form(&f, &dt));
        let (again, _) = run_pass(&mut Lcssa::default(), &mut f);
        assert_eq!(again, PassResult::UNCHANGED);
    }

    #[test]
    fn undominated_use_is_an_error() {
        // v3 is used in block2, which the loop's exit does not dominate (block0 reaches
        // it directly): not valid SSA, reported rather than miscompiled.
        let src = "kernel @k(i32) {
block0(v0: i32):
    v1 = icmp slt v0, v0
    brif v1, block1, block2
block1:
    v3 = iadd v0, v0
    brif v1, block1, block2
block2:
    v4 = iadd v3, v3
    return
}
";
        let mut f = gyre_ir::parse_function(src).expect("parses");
        let e = try_run_pass(&mut Lcssa::default(), &mut f).unwrap_err();
        assert!(e.0.contains("not valid SSA"), "{e}");
    }
}
