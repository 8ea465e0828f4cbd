//! Minimising a failing input while it keeps failing the same way ([`crate::signature`]).
//!
//! Kernels shrink by edits that keep the module valid (each candidate is verified and
//! dropped if it is not): a conditional branch or `br_table` becomes a jump to one of its
//! targets (and blocks no longer reachable go), an instruction without a result (a store,
//! an atomic, a barrier, a call) goes, a result is replaced by a zero constant, and dead
//! pure instructions go. Text shrinks by dropping line ranges, then byte ranges.
//!
//! Those edits can break a UB-free kernel's contract (a removed store leaves a local
//! slot uninitialized, a zeroed `b | 1` divides by zero, a zeroed clamp no longer
//! guards a conversion), and the interpreter comparison counts two errors of the same
//! kind as the same behaviour, so such a candidate can keep the failure's signature while
//! hiding what it was about. A candidate kernel therefore must also stay free of
//! undefined behaviour on every input the original ran without any
//! ([`crate::case::undefined_behaviour`]).

use crate::{run_check, signature, Input, Target};
use gyre_ir::verifier::verify_module;
use gyre_ir::{Block, FuncId, Function, Inst, InstructionData, Module, Opcode};
use std::time::{Duration, Instant};

/// Shrink `input`, which fails `target` with `failure`, for at most `budget`; returns the
/// smallest input that still fails with the same signature, and its failure.
pub fn shrink(target: &Target, input: Input, failure: String, budget: Duration) -> (Input, String) {
    let deadline = Instant::now() + budget;
    let sig = signature(&failure);
    let still_fails = |candidate: &Input| -> Option<String> {
        match run_check(target, candidate) {
            Err(e) if signature(&e) == sig => Some(e),
            _ => None,
        }
    };
    match input {
        Input::Bytes(b) => {
            let (b, f) = shrink_bytes(b, failure, &still_fails, deadline);
            (Input::Bytes(b), f)
        }
        Input::Kernel(mut case) => {
            // The inputs on which the original has no undefined behaviour (all of them
            // for a generated UB-free kernel); candidates must keep it so.
            let clean: Vec<u64> = (0..crate::case::UB_CHECKED_INPUTS)
                .filter(|&k| crate::case::undefined_behaviour(&case, &case.module, k).is_none())
                .collect();
            let mut failure = failure;
            let mut progress = true;
            while progress && Instant::now() < deadline {
                progress = false;
                for edit in edits(&case.module) {
                    if Instant::now() >= deadline {
                        break;
                    }
                    let mut m = case.module.clone();
                    if !apply(&mut m, edit) || verify_module(&m).is_err() {
                        continue;
                    }
                    let mut candidate = case.clone();
                    candidate.module = m;
                    let defined = |c: &crate::Case| {
                        clean
                            .iter()
                            .all(|&k| crate::case::undefined_behaviour(c, &c.module, k).is_none())
                    };
                    let candidate = Input::Kernel(candidate);
                    if let Some(f) = still_fails(&candidate) {
                        let Input::Kernel(c) = candidate else {
                            unreachable!()
                        };
                        if !defined(&c) {
                            continue;
                        }
                        case = c;
                        failure = f;
                        progress = true;
                    }
                }
            }
            (Input::Kernel(case), failure)
        }
    }
}

fn shrink_bytes(
    mut data: Vec<u8>,
    mut failure: String,
    still_fails: &dyn Fn(&Input) -> Option<String>,
    deadline: Instant,
) -> (Vec<u8>, String) {
    // Lines first (delta debugging with shrinking chunk sizes), then bytes.
    for unit_is_line in [true, false] {
        let mut chunk = 64usize;
        while chunk >= 1 && Instant::now() < deadline {
            let units = split_units(&data, unit_is_line);
            let mut i = units.len();
            let mut changed = false;
            while i > 0 && Instant::now() < deadline {
                let lo = i.saturating_sub(chunk);
                let mut cand = Vec::with_capacity(data.len());
                let units = split_units(&data, unit_is_line);
                if i > units.len() {
                    i = units.len();
                    continue;
                }
                for (k, u) in units.iter().enumerate() {
                    if k < lo || k >= i {
                        cand.extend_from_slice(u);
                    }
                }
                if let Some(f) = still_fails(&Input::Bytes(cand.clone())) {
                    data = cand;
                    failure = f;
                    changed = true;
                }
                i = lo;
            }
            if !changed {
                chunk /= 2;
            }
        }
    }
    (data, failure)
}

fn split_units(data: &[u8], lines: bool) -> Vec<Vec<u8>> {
    if lines {
        data.split_inclusive(|&b| b == b'\n')
            .map(|l| l.to_vec())
            .collect()
    } else {
        data.iter().map(|&b| vec![b]).collect()
    }
}

/// One shrinking step.
#[derive(Copy, Clone)]
enum Edit {
    /// Replace the terminator of a block by a jump to its `k`th target.
    Fold(FuncId, Block, usize),
    /// Remove an instruction without a result.
    Remove(FuncId, Inst),
    /// Replace a result by a zero constant of its type.
    Zero(FuncId, Inst),
    /// Remove every pure instruction whose result is unused.
    Dce,
}

fn edits(m: &Module) -> Vec<Edit> {
    let mut folds = Vec::new();
    let mut removes = Vec::new();
    let mut zeros = Vec::new();
    for (id, f) in m.functions.iter() {
        for b in f.layout.blocks() {
            for i in f.layout.block_insts(b) {
                let data = f.dfg.inst(i);
                let op = data.opcode();
                if op.is_terminator() {
                    let n = f.successors(b).len();
                    if n >= 2 {
                        for k in 0..n {
                            folds.push(Edit::Fold(id, b, k));
                        }
                    }
                } else if let Some(v) = f.dfg.inst_result(i) {
                    let ty = f.dfg.value_type(v);
                    let is_const = matches!(op, Opcode::Iconst | Opcode::Fconst);
                    if !is_const && (ty.is_int() || ty.is_float()) {
                        zeros.push(Edit::Zero(id, i));
                    }
                } else {
                    removes.push(Edit::Remove(id, i));
                }
            }
        }
    }
    // Folds remove the most; later instructions first, so removals cut loose whole tails.
    let mut out = folds;
    out.push(Edit::Dce);
    out.extend(removes.into_iter().rev());
    out.extend(zeros.into_iter().rev());
    out.push(Edit::Dce);
    out
}

fn apply(m: &mut Module, edit: Edit) -> bool {
    match edit {
        Edit::Fold(id, b, k) => {
            let f = &mut m.functions[id];
            if !f.layout.is_block_inserted(b) {
                return false;
            }
            let Some(t) = f.terminator(b) else {
                return false;
            };
            let mut dests = Vec::new();
            f.dfg.for_each_dest(t, |bc| dests.push(*bc));
            let Some(dest) = dests.get(k).copied() else {
                return false;
            };
            let args: Vec<_> = f.dfg.block_call_args(&dest).to_vec();
            let bc = gyre_ir::BlockCall::new(dest.block, &args, &mut f.dfg.value_lists);
            f.dfg.replace_inst(t, InstructionData::Jump { dest: bc });
            remove_unreachable(f);
            true
        }
        Edit::Remove(id, i) => {
            let f = &mut m.functions[id];
            if f.layout.inst_block(i).is_none() {
                return false;
            }
            f.layout.remove_inst(i);
            true
        }
        Edit::Zero(id, i) => {
            let f = &mut m.functions[id];
            if f.layout.inst_block(i).is_none() {
                return false;
            }
            let Some(v) = f.dfg.inst_result(i) else {
                return false;
            };
            let ty = f.dfg.value_type(v);
            let data = if ty.is_float() {
                InstructionData::FloatConst { bits: 0 }
            } else {
                InstructionData::IntConst { imm: 0 }
            };
            f.dfg.replace_inst(i, data);
            true
        }
        Edit::Dce => {
            let mut any = false;
            for f in m.functions.values_mut() {
                any |= dce(f);
            }
            any
        }
    }
}

/// Remove the blocks not reachable from the entry (explicit worklist).
fn remove_unreachable(f: &mut Function) {
    let Some(entry) = f.entry_block() else {
        return;
    };
    let mut seen = vec![false; f.dfg.num_blocks()];
    let mut stack = vec![entry];
    seen[entry.index_of()] = true;
    while let Some(b) = stack.pop() {
        for s in f.successors(b) {
            if !seen[s.index_of()] {
                seen[s.index_of()] = true;
                stack.push(s);
            }
        }
    }
    let dead: Vec<Block> = f.layout.blocks().filter(|b| !seen[b.index_of()]).collect();
    for b in dead {
        let insts: Vec<Inst> = f.layout.block_insts(b).collect();
        for i in insts {
            f.layout.remove_inst(i);
        }
        f.layout.remove_block(b);
    }
}

/// Remove pure instructions with unused results until none is left; whether any went.
fn dce(f: &mut Function) -> bool {
    let mut any = false;
    loop {
        let mut used = vec![false; f.dfg.num_values()];
        let mut insts = Vec::new();
        for b in f.layout.blocks() {
            for i in f.layout.block_insts(b) {
                f.dfg.for_each_inst_value(i, |v| used[v.index_of()] = true);
                insts.push(i);
            }
        }
        let mut removed = false;
        for i in insts {
            let op = f.dfg.inst(i).opcode();
            if let Some(v) = f.dfg.inst_result(i) {
                if !used[v.index_of()] && !op.has_side_effects() && !op.is_terminator() {
                    f.layout.remove_inst(i);
                    removed = true;
                }
            }
        }
        if !removed {
            return any;
        }
        any = true;
    }
}

/// `EntityRef::index` without importing the trait everywhere.
trait IndexOf {
    fn index_of(self) -> usize;
}
impl<T: gyre_ir::EntityRef> IndexOf for T {
    fn index_of(self) -> usize {
        self.index()
    }
}
