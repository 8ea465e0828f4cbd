//! Dead-code removal inside one loop: the liveness walk `indvars` and `loop-reduce` share
//! after rewriting a loop's induction variables.
//!
//! A value of the loop is live when an instruction with an effect (a store, a call, a
//! terminator: anything not [`pure`]) uses it, when it leaves the loop as a branch argument,
//! or when a live value uses it; a block parameter of the loop passes liveness to the
//! arguments its predecessors give it. So an IV cycle (a header parameter and its
//! increment) that only feeds itself is dead, with everything that fed only it.
//!
//! Requires the loop's exits to carry its values out only through branch arguments or
//! instruction operands outside it (LCSSA form, or any form where a use outside the loop
//! is an argument of a branch leaving it): a value of the loop used directly by an
//! instruction outside it would be removed while used. Changes no block or edge, so the
//! CFG, dominator trees and loop forest stay valid.

use gyre_analysis::{Cfg, Loop, LoopInfo};
use gyre_ir::{Block, Function, Inst, Value, ValueDef};
use rustc_hash::FxHashSet;

/// Is `i` an instruction without effects whose only output is its result (so it may be
/// removed when the result is unused)?
pub fn pure(func: &Function, i: Inst) -> bool {
    let op = func.dfg.inst(i).opcode();
    !op.is_terminator()
        && !op.has_side_effects()
        && !op.reads_memory()
        && !op.is_convergent()
        && func.dfg.inst_result(i).is_some()
}

/// What [`LoopDce::run`] removed.
#[derive(Clone, Copy, Default, Debug, PartialEq, Eq)]
pub struct Removed {
    /// Pure instructions.
    pub insts: u64,
    /// Block parameters (with their incoming arguments), in any block of the loop.
    pub params: u64,
    /// Of `params`, those of the header (dead induction variables).
    pub header_params: u64,
}

/// Reusable buffers of the loop dead-code sweep (thousands of small loops must not each
/// allocate).
#[derive(Default)]
pub struct LoopDce {
    live: FxHashSet<Value>,
    work: Vec<Value>,
    preds: Vec<Block>,
}

impl LoopDce {
    /// Remove the pure instructions and block parameters of `blocks` (the blocks of loop
    /// `l`, whose header is `header`) that nothing live needs. O(instructions and
    /// arguments of the loop); no recursion.
    pub fn run(
        &mut self,
        func: &mut Function,
        cfg: &Cfg,
        li: &LoopInfo,
        l: Loop,
        header: Block,
        blocks: &[Block],
    ) -> Removed {
        let live = &mut self.live;
        let work = &mut self.work;
        let preds = &mut self.preds;
        live.clear();
        work.clear();
        for &b in blocks {
            for i in func.layout.block_insts(b) {
                if pure(func, i) {
                    continue;
                }
                work.extend_from_slice(func.dfg.inst_args(i));
                // Arguments leaving the loop are live; those to its own blocks follow
                // their parameters.
                func.dfg.for_each_dest(i, |bc| {
                    if !li.contains(l, bc.block) {
                        work.extend_from_slice(func.dfg.block_call_args(bc));
                    }
                });
            }
        }
        while let Some(v) = work.pop() {
            if !live.insert(v) {
                continue;
            }
            match func.dfg.value_def(v) {
                ValueDef::Result(i) => work.extend_from_slice(func.dfg.inst_args(i)),
                ValueDef::Param(b, j) if li.contains(l, b) => {
                    sorted_preds(cfg, b, preds);
                    for &pr in preds.iter() {
                        let t = func.terminator(pr).expect("a terminator");
                        func.dfg.for_each_dest(t, |bc| {
                            if bc.block == b {
                                if let Some(&a) = func.dfg.block_call_args(bc).get(j as usize) {
                                    work.push(a);
                                }
                            }
                        });
                    }
                }
                _ => {}
            }
        }
        let mut removed = Removed::default();
        for &b in blocks {
            let n = func.dfg.block_params(b).len();
            for j in (0..n).rev() {
                let p = func.dfg.block_params(b)[j];
                if live.contains(&p) {
                    continue;
                }
                sorted_preds(cfg, b, preds);
                for &pr in preds.iter() {
                    let t = func.terminator(pr).expect("a terminator");
                    func.dfg.for_each_dest_mut(t, |bc, pool| {
                        if bc.block == b {
                            bc.args.remove(j, pool);
                        }
                    });
                }
                func.dfg.remove_block_param(b, j);
                removed.params += 1;
                if b == header {
                    removed.header_params += 1;
                }
            }
            let mut cur = func.layout.first_inst(b);
            while let Some(i) = cur {
                cur = func.layout.next_inst(i);
                if pure(func, i) && !live.contains(&func.dfg.inst_result(i).expect("pure")) {
                    func.layout.remove_inst(i);
                    removed.insts += 1;
                }
            }
        }
        removed
    }
}

/// The distinct predecessors of `b` (a terminator with two edges to `b` is visited once).
fn sorted_preds(cfg: &Cfg, b: Block, out: &mut Vec<Block>) {
    out.clear();
    out.extend_from_slice(cfg.preds(b));
    out.sort_unstable();
    out.dedup();
}
