//! The dominator tree.
//!
//! Computed by one Cooper–Harvey–Kennedy sweep over the [`Cfg`]'s reverse post-order,
//! verified in O(1) per retreating edge, with semi-NCA (Georgiadis 2005) as the fallback
//! when the check fails (some irreducible CFGs); see the `tree` module. In practice linear
//! (no DFS of its own: the Cfg already did it), O(n) space, no recursion. If the Cfg's
//! order is stale (after [`Cfg::update_block`]), the same RPO is recomputed here first.
//!
//! [`DomTree::children`] and [`DomTree::preorder`] list children in RPO of the CFG:
//! deterministic, and independent of predecessor order and block numbering.
//!
//! **Unreachable blocks** (from the entry) are not in the tree: `idom` is `None`, they have
//! no children, and — following LLVM — an unreachable block is dominated by every block
//! and dominates only itself. This keeps "a definition dominates its uses" true in dead
//! code, which passes may leave behind.

use crate::cfg::Cfg;
use crate::tree::{Builder, Children, DfsOrder, Numbering, Tree};
use core::cmp::Ordering;
use gyre_ir::{Block, Function, Inst, Layout};

/// The dominator tree of a function.
#[derive(Clone, Default)]
pub struct DomTree {
    tree: Tree,
    builder: Builder,
    /// Own RPO, only when the Cfg's is stale.
    order: DfsOrder,
    valid: bool,
}

impl DomTree {
    /// An empty, invalid tree.
    pub fn new() -> DomTree {
        DomTree::default()
    }

    /// Compute the tree of `func`.
    pub fn with_function(func: &Function, cfg: &Cfg) -> DomTree {
        let mut t = DomTree::new();
        t.compute(func, cfg);
        t
    }

    /// Recompute from scratch, reusing buffers.
    pub fn compute(&mut self, func: &Function, cfg: &Cfg) {
        debug_assert!(cfg.is_valid(), "DomTree::compute needs a valid Cfg");
        let _ = func;
        let n = cfg.num_block_slots();
        let (succs, preds) = (cfg.succ_adj(), cfg.pred_adj());
        if cfg.is_order_valid() {
            let rpo_number = cfg.rpo_numbers();
            let numbering = Numbering {
                blocks: cfg.rpo(),
                // RPO numbers from 1; unreachable (`u32::MAX`) becomes 0.
                num: |b: usize| rpo_number[b].wrapping_add(1),
                roots: if cfg.entry().is_some() { &[1] } else { &[] },
                forward: succs,
                backward: preds,
            };
            self.builder.run(&numbering, &mut self.tree, n);
        } else {
            self.order.reset(n);
            if let Some(entry) = cfg.entry() {
                self.order.add_root(entry, succs);
            }
            self.order.finish();
            let numbering = self.order.numbering(succs, preds);
            self.builder.run(&numbering, &mut self.tree, n);
        }
        self.valid = true;
    }

    /// How many computations needed the semi-NCA fallback (tests).
    #[cfg(test)]
    pub(crate) fn fallbacks(&self) -> u32 {
        self.builder.fallbacks
    }

    pub(crate) fn tree_ref(&self) -> &Tree {
        &self.tree
    }

    /// Forget the tree (keeps the buffers).
    pub fn clear(&mut self) {
        self.tree.clear();
        self.valid = false;
    }

    /// Has `compute` run since the last `clear`?
    pub fn is_valid(&self) -> bool {
        self.valid
    }

    /// The entry block, if the function has one.
    pub fn root(&self) -> Option<Block> {
        self.tree.roots.first().copied()
    }

    /// Is `block` reachable from the entry?
    #[inline]
    pub fn is_reachable(&self, block: Block) -> bool {
        self.tree.contains(block)
    }

    /// The immediate dominator; `None` for the entry and unreachable blocks.
    #[inline]
    pub fn idom(&self, block: Block) -> Option<Block> {
        self.tree.parent(block)
    }

    /// Depth in the tree: 1 for the entry, 0 for unreachable blocks.
    pub fn depth(&self, block: Block) -> u32 {
        self.tree.node(block).depth
    }

    /// Children of `block` in the tree (in DFS order of the CFG).
    pub fn children(&self, block: Block) -> Children<'_> {
        self.tree.children(block)
    }

    /// Reachable blocks in preorder of the tree (the entry first; every block comes before
    /// the blocks it dominates). Reverse it for a bottom-up walk.
    pub fn preorder(&self) -> &[Block] {
        &self.tree.order
    }

    /// Preorder number in the tree (from 1) and the largest number in its subtree, or
    /// `None` if unreachable. `a` dominates `b` iff `a.0 <= b.0 <= a.1`.
    pub fn pre_last(&self, block: Block) -> Option<(u32, u32)> {
        let n = self.tree.node(block);
        (n.pre != 0).then_some((n.pre, n.last))
    }

    /// Does `a` dominate `b` (every path from the entry to `b` passes through `a`)? A block
    /// dominates itself. O(1).
    #[inline]
    pub fn dominates(&self, a: Block, b: Block) -> bool {
        self.tree.is_ancestor(a, b)
    }

    /// Does `a` dominate `b` and differ from it?
    #[inline]
    pub fn strictly_dominates(&self, a: Block, b: Block) -> bool {
        a != b && self.dominates(a, b)
    }

    /// Does instruction `a` dominate instruction `b`? Within one block, `a` must come no
    /// later than `b` (an instruction dominates itself); across blocks, block dominance.
    /// `false` if either instruction is not in the layout.
    pub fn dominates_inst(&self, a: Inst, b: Inst, layout: &Layout) -> bool {
        let (Some(ba), Some(bb)) = (layout.inst_block(a), layout.inst_block(b)) else {
            return false;
        };
        if ba == bb {
            layout.pp_cmp(a, b) != Ordering::Greater
        } else {
            self.dominates(ba, bb)
        }
    }

    /// The nearest block that dominates both `a` and `b`; `None` if either is unreachable.
    /// O(depth of `a`).
    pub fn nearest_common_dominator(&self, a: Block, b: Block) -> Option<Block> {
        self.tree.nca(a, b)
    }
}
