//! Which float results must have their NaNs canonicalized.
//!
//! The IR says every NaN an arithmetic operation produces is the canonical quiet NaN
//! (`0x7fc00000` / `0x7ff8000000000000`), while PTX hardware produces `0x7fffffff`.
//! The difference is only visible where a float's *bits* escape: a `bitcast` to an
//! integer, a store, an atomic, a call argument or a return value. This backward
//! analysis marks the float values whose bits may reach such a point — through `fneg`,
//! `fabs`, `freeze`, `select` arms, `shfl` values, float-to-float `bitcast` and block
//! parameters, which keep payloads — and the emitter canonicalizes exactly the marked results of
//! NaN-producing operations (`setp.nan` + `selp`, two instructions). Comparisons,
//! conversions to integers and further arithmetic never see the difference, so the
//! common case costs nothing. O(values + uses), worklist-driven (a marked block parameter
//! visits the branches of its block's predecessors).
//!
//! Not run at all (nothing is canonicalized) in a function marked `anynan`, whose NaNs
//! may have any payload (every function imported from LLVM IR), nor under
//! `CodegenFlags::canonical_nans = false` (`-C canonical-nans=false`), for every function.

use bitvec::vec::BitVec;
use cranelift_entity::EntityRef;
use gyre_analysis::Cfg;
use gyre_ir::{Function, InstructionData, Opcode, Value, ValueDef};

/// Per value: may its NaN bit pattern be observed?
pub(crate) fn observed_floats(func: &Function, cfg: &Cfg) -> BitVec {
    let dfg = &func.dfg;
    let mut marked: BitVec = BitVec::repeat(false, dfg.num_values());
    // Only floats are marked: a function without any needs no scan.
    if !dfg.values().any(|v| dfg.value_type(v).is_float()) {
        return marked;
    }
    let mut work: Vec<Value> = Vec::new();
    let is_float = |v: Value| dfg.value_type(v).is_float();
    let mark = |v: Value, marked: &mut BitVec, work: &mut Vec<Value>| {
        if is_float(v) && !marked[v.index()] {
            marked.set(v.index(), true);
            work.push(v);
        }
    };
    for &b in cfg.rpo() {
        for inst in func.layout.block_insts(b) {
            let data = dfg.inst(inst);
            match data {
                InstructionData::Unary {
                    opcode: Opcode::Bitcast,
                    arg,
                } => {
                    let to = dfg.inst_result(inst).map(|r| dfg.value_type(r));
                    if !to.is_some_and(|t| t.is_float()) {
                        mark(*arg, &mut marked, &mut work);
                    }
                }
                InstructionData::Store { args, .. } => mark(args[0], &mut marked, &mut work),
                InstructionData::AtomicRmw { args, .. } => mark(args[1], &mut marked, &mut work),
                InstructionData::Call { .. } | InstructionData::Return { .. } => {
                    for &a in dfg.inst_args(inst) {
                        mark(a, &mut marked, &mut work);
                    }
                }
                _ => {}
            }
        }
    }
    if work.is_empty() {
        return marked;
    }
    while let Some(v) = work.pop() {
        match dfg.value_def(v) {
            ValueDef::Result(inst) => match dfg.inst(inst) {
                InstructionData::Unary {
                    opcode: Opcode::Fneg | Opcode::Fabs | Opcode::Freeze | Opcode::Bitcast,
                    arg,
                } => mark(*arg, &mut marked, &mut work),
                InstructionData::Ternary {
                    opcode: Opcode::Select,
                    args,
                } => {
                    mark(args[1], &mut marked, &mut work);
                    mark(args[2], &mut marked, &mut work);
                }
                // A shuffle moves another lane's bits unchanged: its value operand's
                // NaNs are observed wherever the result's are.
                InstructionData::Shfl { args, .. } => mark(args[0], &mut marked, &mut work),
                _ => {}
            },
            // The arguments of a marked parameter, from the branches of its block's
            // reachable predecessors, looked up when it is marked (only a block's last
            // instruction branches: the verifier's terminator rule). A function's
            // parameter edges are not all listed up front: few parameters are marked.
            ValueDef::Param(b, i) => {
                let mut last = None;
                for &pred in cfg.preds(b) {
                    // One visit per predecessor: its edges to `b` are listed side by
                    // side, and one visit of its branch covers them all (a `br_table`'s
                    // many cases would otherwise be walked once per case).
                    if last == Some(pred) || !cfg.is_reachable(pred) {
                        continue;
                    }
                    last = Some(pred);
                    let Some(term) = func.layout.last_inst(pred) else {
                        continue;
                    };
                    dfg.for_each_dest(term, |bc| {
                        if bc.block == b {
                            if let Some(&a) = dfg.block_call_args(bc).get(i as usize) {
                                mark(a, &mut marked, &mut work);
                            }
                        }
                    });
                }
            }
            ValueDef::Detached => {}
        }
    }
    marked
}
