//! `select-formation`: if-thens and if-then-elses whose arms only compute cheap pure values
//! become `select`s (LLVM's SimplifyCFG `FoldTwoEntryPHINode` and
//! `SpeculativelyExecuteBB`).
//!
//! ```text
//!   A: ..; brif c, T, J(a)                A: ..; <T's instructions>
//!   T: t = iadd x, y; jump J(t)     =>        s = select c, t, a
//!   J(p): ..                                   jump J(s)
//!                                          J(p): ..
//! ```
//!
//! Three shapes, each ending in the branch of a block `A`:
//! - **both edges to one block** `brif c, J(a..), J(b..)`: one `jump J(select c, a, b ..)`;
//! - **triangle**: one target `T` (no parameters, `A` its only predecessor) ends in
//!   `jump J(..)` where `J` is the other target: `T`'s instructions move to `A`
//!   (speculated) and the two edges into `J` become one, with a `select` per parameter
//!   whose arguments differ;
//! - **diamond**: both targets `T` and `F` are such blocks jumping to the same `J`.
//!
//! **Speculation** is allowed for instructions without effects, memory reads, traps or
//! convergence (`Opcode::has_side_effects`, `reads_memory`, `can_trap`, `is_convergent`):
//! their results may be poison where the arm would not have run, and a `select` of an
//! unchosen poison operand is not poison (docs/ir.md), so the program computes the same.
//! Constants are free; the other speculated instructions and the `select`s together may
//! cost at most `select-formation-threshold` (4, LLVM's
//! `two-entry-phi-node-folding-threshold`), so only cheap arms are flattened.
//!
//! **GPU rule**: no convergent operation is speculated or moved, and removing a branch
//! only removes divergence, so barriers and warp collectives keep their control
//! dependence.

use crate::analyses::Analyses;
use crate::manager::{FunctionPass, PassContext, PassError, PassResult};
use gyre_ir::{Block, BlockCall, Function, Inst, InstructionData, Opcode, SecondaryMap, Value};

const NAME: &str = "select-formation";

/// The `select-formation` function pass (see the module documentation).
///
/// **Requires**: a verified function. **Establishes**: nothing about loop forms (a loop
/// whose latch was an arm keeps one latch; loop-simplify form may need re-establishing).
/// **Preserves**: nothing when it changes a branch (the CFG changes).
/// **Knobs**: `select-formation-threshold`. **Stats**: `NumTriangles`, `NumDiamonds`,
/// `NumSameTarget`, `NumSelects`, `NumSpeculated`.
#[derive(Default)]
pub struct SelectFormation {
    preds: SecondaryMap<Block, u32>,
    args: Vec<Value>,
}

/// The jump ending `b` when `b` is an arm that may be folded: no parameters, one
/// predecessor, only speculatable instructions before a `jump`. Returns the jump, its
/// target, and the number of non-constant instructions.
fn arm(func: &Function, b: Block, preds: &SecondaryMap<Block, u32>) -> Option<(Inst, Block, u32)> {
    if preds[b] != 1 || !func.dfg.block_params(b).is_empty() || func.entry_block() == Some(b) {
        return None;
    }
    let term = func.terminator(b)?;
    let InstructionData::Jump { dest } = func.dfg.inst(term) else {
        return None;
    };
    let mut cost = 0;
    for i in func.layout.block_insts(b) {
        if i == term {
            break;
        }
        let op = func.dfg.inst(i).opcode();
        if op.has_side_effects()
            || op.reads_memory()
            || op.can_trap()
            || op.is_convergent()
            || op.is_terminator()
        {
            return None;
        }
        if !matches!(op, Opcode::Iconst | Opcode::Fconst) {
            cost += 1;
        }
    }
    Some((term, dest.block, cost))
}

impl SelectFormation {
    /// Fold the branch ending `a` if it has one of the three shapes; did it?
    fn fold(
        &mut self,
        func: &mut Function,
        a: Block,
        budget: u32,
        cx: &mut PassContext<'_>,
    ) -> bool {
        let Some(term) = func.terminator(a) else {
            return false;
        };
        let InstructionData::Brif { arg: c, blocks } = *func.dfg.inst(term) else {
            return false;
        };
        let (b0, b1) = (blocks[0].block, blocks[1].block);
        // The arms (None: the edge goes straight to the join) and the join.
        let (arm0, arm1, join) = if b0 == b1 {
            (None, None, b0)
        } else {
            let x0 = arm(func, b0, &self.preds).filter(|&(_, j, _)| j != a && j != b0);
            let x1 = arm(func, b1, &self.preds).filter(|&(_, j, _)| j != a && j != b1);
            match (x0, x1) {
                (Some(t), Some(f)) if t.1 == f.1 => (Some(t), Some(f), t.1),
                (Some(t), _) if t.1 == b1 => (Some(t), None, b1),
                (_, Some(f)) if f.1 == b0 => (None, Some(f), b0),
                _ => return false,
            }
        };
        if join == a {
            return false;
        }
        // The values each side passes to the join.
        let side = |func: &Function, arm: Option<(Inst, Block, u32)>, k: usize| -> Vec<Value> {
            match arm {
                Some((j, _, _)) => match func.dfg.inst(j) {
                    InstructionData::Jump { dest } => func.dfg.block_call_args(dest).to_vec(),
                    _ => unreachable!("an arm ends in a jump"),
                },
                None => func.dfg.block_call_args(&blocks[k]).to_vec(),
            }
        };
        let v0 = side(func, arm0, 0);
        let v1 = side(func, arm1, 1);
        let selects = v0.iter().zip(&v1).filter(|(x, y)| x != y).count() as u32;
        let spec = arm0.map_or(0, |x| x.2) + arm1.map_or(0, |x| x.2);
        if spec + selects > budget {
            return false;
        }
        // Speculate the arms' instructions into `a`, before its branch.
        for (x, _, _) in [arm0, arm1].into_iter().flatten() {
            let b = func.layout.inst_block(x).expect("laid out");
            while let Some(i) = func.layout.first_inst(b) {
                func.layout.remove_inst(i);
                if i != x {
                    func.layout.insert_inst_before(i, term);
                }
            }
            func.layout.remove_block(b);
        }
        // Two edges into the join (from `a` or its arms) become one.
        self.preds[join] -= 1;
        self.args.clear();
        for (&x, &y) in v0.iter().zip(&v1) {
            if x == y {
                self.args.push(x);
                continue;
            }
            let ty = func.dfg.value_type(x);
            let (i, v) = func.dfg.make_inst_with_result(
                InstructionData::Ternary {
                    opcode: Opcode::Select,
                    args: [c, x, y],
                },
                ty,
            );
            func.layout.insert_inst_before(i, term);
            self.args.push(v);
        }
        let dest = BlockCall::new(join, &self.args, &mut func.dfg.value_lists);
        func.dfg.replace_inst(term, InstructionData::Jump { dest });
        let (kind, n) = match (arm0, arm1) {
            (None, None) => ("NumSameTarget", 1),
            (Some(_), Some(_)) => ("NumDiamonds", 1),
            _ => ("NumTriangles", 1),
        };
        cx.stats.add(NAME, kind, n);
        cx.stats.add(NAME, "NumSelects", u64::from(selects));
        cx.stats.add(NAME, "NumSpeculated", u64::from(spec));
        true
    }
}

impl FunctionPass for SelectFormation {
    fn name(&self) -> &'static str {
        NAME
    }

    fn run(
        &mut self,
        func: &mut Function,
        cx: &mut PassContext<'_>,
    ) -> Result<PassResult, PassError> {
        let budget = cx.knobs.select_formation_threshold();
        // Predecessor edges per block (an edge listed twice counts twice).
        self.preds.clear();
        for b in func.layout.blocks() {
            if let Some(t) = func.terminator(b) {
                let preds = &mut self.preds;
                func.dfg.for_each_dest(t, |bc| preds[bc.block] += 1);
            }
        }
        let mut changed = false;
        // Sweeps in layout order until one folds nothing: a fold can make its block an
        // arm of the branch above it (nested if-thens fold inside out). Each fold removes
        // a conditional branch, so this ends; the cap bounds pathological nests.
        for _ in 0..8 {
            let mut any = false;
            let mut cur = func.layout.entry_block();
            while let Some(b) = cur {
                cur = func.layout.next_block(b);
                while self.fold(func, b, budget, cx) {
                    any = true;
                    // `cur` may have been folded away: restart after `b`.
                    cur = func.layout.next_block(b);
                }
            }
            changed |= any;
            if !any {
                break;
            }
        }
        if changed {
            Ok(PassResult::changed(Analyses::NONE))
        } else {
            Ok(PassResult::UNCHANGED)
        }
    }
}
