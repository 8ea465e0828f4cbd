//! `sink`: move each instruction down the dominator tree to the block where its uses are,
//! so that paths which do not use the value do not compute it (LLVM's `Sink` pass, and
//! the sinking half of InstCombine; llc's MachineSink does the same late).
//!
//! ```text
//!   A: r = srem x, n                      A: brif c, T, E
//!      q = sdiv x, n                 =>   T: r = srem x, n
//!      brif c, T, E                          q = sdiv x, n
//!   T: ..uses r, q..                         ..uses r, q..
//!   E: return                             E: return
//! ```
//!
//! The typical GPU case is a kernel's index and address arithmetic computed before its
//! bounds guard (`if (i < n) {..}`): the threads that fail the guard still ran it, and
//! the parameters it reads were loaded for them too.
//!
//! **Where to.** For an instruction `I` of block `B`, the target is the nearest common
//! dominator of its uses' blocks (a branch argument is used in the branching block, as
//! a phi's operand is used in its incoming block in LLVM). Walking up the dominator tree
//! from there towards `B`, the first *acceptable* block is taken; `B` itself means no
//! move. A block `T` is acceptable when its only predecessor is `B`, or otherwise when
//! `I` reads no memory, `T` is in no loop or in `B`'s innermost loop, and `T` is in no
//! irreducible cycle: so `I` never moves into a loop (where it would run more often)
//! nor along a join where another path may have written memory. `I` goes first in
//! `T`, before what was there.
//!
//! **What moves.** Instructions without side effects and not convergent; constants
//! stay (they cost nothing until used); of memory reads only non-volatile `load`s, and
//! only when nothing after them in `B` has side effects (a store, atomic, barrier, fence
//! or call may write what they read) and the target's only predecessor is `B`, so no
//! write can come between. Volatile loads are not moved. Instructions without uses
//! stay (dead code is `simplify`'s). Divisions move: executing them on fewer paths is
//! always safe.
//!
//! **Order.** Blocks are visited in dominator-tree preorder, each bottom-up, so a chain
//! of instructions sinks together (the user first, then its operands follow it) and
//! what moved into a block is reconsidered there. Sweeps repeat until one moves nothing
//! (at most [`MAX_SWEEPS`]): sinking a user deeper can free the operands above it.
//!
//! **GPU rule**: no convergent operation (`barrier`, warp collectives, calls) moves, and
//! no load moves past one; the values computed are the same on every path that uses
//! them, so uniformity of a value is not changed by where it is computed (temporal
//! divergence aside: the uniformity analysis is invalidated).
//!
//! **Requires**: a verified function. **Establishes**: nothing new about loop forms.
//! **Preserves**: the CFG, dominator and post-dominator trees and the loop forest (no
//! block changes). **Gives up**: targets more than [`MAX_WALK`] dominator-tree steps
//! below the use's common dominator (the instruction stays), sinking out of an inner loop
//! into its parent loop (LLVM's rule), sinking a load across a join, splitting critical
//! edges. **Knobs**: none. **Stats**: `NumSunk` (instructions moved), `NumSunkLoads`
//! (of which loads).

use crate::analyses::Analyses;
use crate::manager::{FunctionPass, PassContext, PassError, PassResult};
use gyre_ir::{Block, Function, Inst, InstructionData, Opcode, SecondaryMap, Value};

const NAME: &str = "sink";
/// The most sweeps over the function.
pub const MAX_SWEEPS: usize = 4;
/// The most dominator-tree steps from the uses' common dominator up to an acceptable
/// target, which bounds the work per instruction in very deep trees.
pub const MAX_WALK: usize = 64;

/// Functions with more values than this (arena size) give the pass's use lists back at the
/// end of a run.
const RELEASE_ABOVE: usize = 1 << 16;

/// The `sink` function pass (see the module documentation).
#[derive(Default)]
pub struct Sink {
    /// Use lists in CSR form: the users of value `v` are `users[start[v]..start[v+1]]`
    /// (an instruction using `v` twice is listed twice; instructions do not change while
    /// the pass runs, only their blocks).
    start: SecondaryMap<Value, u32>,
    users: Vec<Inst>,
    /// The instructions of the block being visited, bottom-up.
    insts: Vec<Inst>,
}

impl Sink {
    fn build_uses(&mut self, func: &Function) {
        let n = func.dfg.num_values();
        self.start.clear();
        self.start.resize(n + 1);
        // Count, then prefix sums (shifted by one), then fill.
        for b in func.layout.blocks() {
            for i in func.layout.block_insts(b) {
                func.dfg.for_each_inst_value(i, |v| self.start[v] += 1);
            }
        }
        let mut sum = 0u32;
        for k in 0..=n {
            let v = Value::from_u32(k as u32);
            let c = self.start[v];
            self.start[v] = sum;
            sum += c;
        }
        self.users.clear();
        self.users.resize(sum as usize, Inst::from_u32(0));
        // `start[v]` is the next free slot of `v` while filling; restored below.
        for b in func.layout.blocks() {
            for i in func.layout.block_insts(b) {
                let (start, users) = (&mut self.start, &mut self.users);
                func.dfg.for_each_inst_value(i, |v| {
                    users[start[v] as usize] = i;
                    start[v] += 1;
                });
            }
        }
        // Each `start[v]` is now the end of `v`'s run, the start of the next one's.
        for k in (1..=n).rev() {
            let prev = self.start[Value::from_u32(k as u32 - 1)];
            self.start[Value::from_u32(k as u32)] = prev;
        }
        self.start[Value::from_u32(0)] = 0;
    }

    fn users(&self, v: Value) -> &[Inst] {
        let s = self.start[v] as usize;
        let e = self.start[Value::from_u32(v.as_u32() + 1)] as usize;
        &self.users[s..e]
    }
}

/// May `i` be moved at all (ignoring memory ordering, checked by the caller)?
fn movable(func: &Function, i: Inst) -> bool {
    let data = func.dfg.inst(i);
    let op = data.opcode();
    if op.has_side_effects() || op.is_convergent() || op.is_terminator() {
        return false;
    }
    if matches!(op, Opcode::Iconst | Opcode::Fconst) {
        return false;
    }
    if op.reads_memory() {
        return matches!(data, InstructionData::Load { flags, .. } if !flags.volatile);
    }
    true
}

impl FunctionPass for Sink {
    fn name(&self) -> &'static str {
        NAME
    }

    fn run(
        &mut self,
        func: &mut Function,
        cx: &mut PassContext<'_>,
    ) -> Result<PassResult, PassError> {
        cx.analyses
            .ensure(
                func,
                Analyses::CFG
                    .union(Analyses::DOMTREE)
                    .union(Analyses::LOOPS),
            )
            .map_err(|e| PassError(format!("{NAME}: @{}: {e}", func.name)))?;
        // The preorder below needs the numbering (no-op when it is current).
        cx.analyses.domtree.renumber();
        let (cfg, dt, li) = (&cx.analyses.cfg, &cx.analyses.domtree, &cx.analyses.loops);
        self.build_uses(func);
        let (mut sunk, mut sunk_loads) = (0u64, 0u64);
        for _ in 0..MAX_SWEEPS {
            let mut moved = false;
            for &b in dt.preorder() {
                // Bottom-up, terminator excluded; `clobbered`: something after the
                // instruction in `b` may write memory.
                self.insts.clear();
                self.insts.extend(func.layout.block_insts(b));
                self.insts
                    .pop_if(|&mut t| func.dfg.inst(t).opcode().is_terminator());
                let mut clobbered = false;
                while let Some(i) = self.insts.pop() {
                    let data = func.dfg.inst(i);
                    let op = data.opcode();
                    if op.has_side_effects()
                        || matches!(data, InstructionData::Load { flags, .. } if flags.volatile)
                    {
                        clobbered = true;
                    }
                    if !movable(func, i) {
                        continue;
                    }
                    let is_load = op.reads_memory();
                    if is_load && clobbered {
                        continue;
                    }
                    let Some(v) = func.dfg.inst_result(i) else {
                        continue;
                    };
                    // The nearest common dominator of the uses (unreachable ones aside).
                    let mut ncd: Option<Block> = None;
                    let mut ok = true;
                    for &u in self.users(v) {
                        let Some(ub) = func.layout.inst_block(u) else {
                            continue;
                        };
                        if !dt.is_reachable(ub) {
                            continue;
                        }
                        let n = match ncd {
                            None => Some(ub),
                            Some(x) => dt.nearest_common_dominator(x, ub),
                        };
                        if n.is_none_or(|n| n == b || !dt.dominates(b, n)) {
                            ok = false;
                            break;
                        }
                        ncd = n;
                    }
                    let (true, Some(mut t)) = (ok, ncd) else {
                        continue;
                    };
                    let lb = li.innermost_loop(b);
                    let acceptable = |t: Block| {
                        let preds = cfg.preds(t);
                        if !preds.is_empty() && preds.iter().all(|&p| p == b) {
                            return true;
                        }
                        if is_load || li.in_irreducible_cycle(t) {
                            return false;
                        }
                        li.innermost_loop(t).is_none_or(|l| Some(l) == lb)
                    };
                    let mut steps = 0;
                    while t != b && !acceptable(t) && steps < MAX_WALK {
                        t = dt.idom(t).expect("a block strictly below `b` has an idom");
                        steps += 1;
                    }
                    if t == b || !acceptable(t) {
                        continue;
                    }
                    func.layout.remove_inst(i);
                    match func.layout.first_inst(t) {
                        Some(first) => func.layout.insert_inst_before(i, first),
                        None => func.layout.append_inst(i, t),
                    }
                    moved = true;
                    sunk += 1;
                    sunk_loads += u64::from(is_load);
                }
            }
            if !moved {
                break;
            }
        }
        // The pass object lives as long as the pipeline: a large function's use lists are
        // given back rather than kept through every later pass and emission.
        if func.dfg.num_values() > RELEASE_ABOVE {
            *self = Sink::default();
        }
        if sunk == 0 {
            return Ok(PassResult::UNCHANGED);
        }
        cx.stats.add(NAME, "NumSunk", sunk);
        cx.stats.add(NAME, "NumSunkLoads", sunk_loads);
        Ok(PassResult::changed(
            Analyses::CFG
                .union(Analyses::DOMTREE)
                .union(Analyses::POSTDOM)
                .union(Analyses::LOOPS),
        ))
    }
}
