//! Which values may be used outside the block that defines them.
//!
//! One sweep over the function's instructions sets a bit per value that some instruction
//! (an operand or a branch argument) of another block uses. Loop passes ask it whether a
//! value of a block they duplicate or move matters elsewhere — `loop-rotate` asks it of
//! the header's values, which would otherwise cost a scan of the whole loop per loop
//! (quadratic on a deep nest).
//!
//! The answer is an over-approximation that passes keep **sound** while editing: a value
//! used outside its block always has its bit set; a value whose bit is set may have lost
//! such uses since (so "no" is exact, "yes" means "maybe"). `--verify-each` checks exactly
//! that against a fresh computation. O(instructions + arguments) to compute.

use bitvec::vec::BitVec;
use gyre_ir::{EntityRef, Function, Value, ValueDef};

/// Per value: may it be used outside its defining block?
#[derive(Clone, Default)]
pub struct NonLocalUses {
    bits: BitVec,
    valid: bool,
}

impl NonLocalUses {
    /// An empty, invalid result.
    pub fn new() -> NonLocalUses {
        NonLocalUses::default()
    }

    /// Compute it for `func`.
    pub fn with_function(func: &Function) -> NonLocalUses {
        let mut n = NonLocalUses::new();
        n.compute(func);
        n
    }

    /// Recompute from scratch, reusing the buffer.
    pub fn compute(&mut self, func: &Function) {
        self.bits.clear();
        self.bits.resize(func.dfg.num_values(), false);
        for b in func.layout.blocks() {
            for i in func.layout.block_insts(b) {
                func.dfg.for_each_inst_value(i, |v| {
                    let def = match func.dfg.value_def(v) {
                        ValueDef::Result(d) => func.layout.inst_block(d),
                        ValueDef::Param(d, _) => Some(d),
                        ValueDef::Detached => None,
                    };
                    if def != Some(b) {
                        if let Some(mut bit) = self.bits.get_mut(v.index()) {
                            *bit = true;
                        }
                    }
                });
            }
        }
        self.valid = true;
    }

    /// Forget the result (keeps the buffer).
    pub fn clear(&mut self) {
        self.bits.clear();
        self.valid = false;
    }

    /// Has it been computed since the last `clear`?
    pub fn is_valid(&self) -> bool {
        self.valid
    }

    /// May `v` be used outside its defining block? Values created after the computation
    /// and never recorded answer `true`.
    #[inline]
    pub fn may_be_used_elsewhere(&self, v: Value) -> bool {
        self.bits.get(v.index()).is_none_or(|b| *b)
    }

    /// Record what a pass knows about `v` after an edit: `true` when it may now be used
    /// outside its block, `false` only when every use is in its block.
    pub fn set(&mut self, v: Value, elsewhere: bool) {
        let i = v.index();
        if self.bits.len() <= i {
            self.bits.resize(i + 1, true);
        }
        self.bits.set(i, elsewhere);
    }
}
