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
//! **Incremental updates.** [`DomTree::apply_updates`] (see the
//! [`domtree_update`](crate::domtree_update) module) keeps `idom`, `depth` and reachability
//! exact after edge insertions and deletions, at about the cost of the region they affect.
//! It leaves the preorder numbering stale: [`DomTree::dominates`] and
//! [`DomTree::nearest_common_dominator`] then climb the tree (guided by `depth`),
//! [`DomTree::children`] follows explicit sibling links, and [`DomTree::preorder`] and
//! [`DomTree::pre_last`] (and analyses computed from the tree: loops, frontiers) need
//! [`DomTree::renumber`] (O(n)) first; [`DomTree::is_numbered`] says which state it is in.
//!
//! **Unreachable blocks** (from the entry) are not in the tree: `idom` is `None`, they have
//! no children, and — following LLVM — an unreachable block is dominated by every block
//! and dominates only itself. This keeps "a definition dominates its uses" true in dead
//! code, which passes may leave behind.

use crate::cfg::Cfg;
use crate::domtree_update::Dynamic;
use crate::tree::{Builder, Children, DfsOrder, Numbering, Tree, NONE};
use core::cmp::Ordering;
use gyre_ir::{Block, Function, Inst, Layout};

/// The dominator tree of a function.
#[derive(Clone, Default)]
pub struct DomTree {
    pub(crate) tree: Tree,
    builder: Builder,
    /// Own RPO, only when the Cfg's is stale.
    order: DfsOrder,
    valid: bool,
    /// Are `pre`, `last`, `order` and the tree's child order up to date? Cleared by
    /// incremental updates, set by `compute` and `renumber`.
    pub(crate) numbered: bool,
    /// Sibling links and scratch of the incremental updater.
    pub(crate) dynamic: Dynamic,
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
        self.numbered = true;
        self.dynamic.invalidate();
    }

    /// How many computations needed the semi-NCA fallback (tests).
    #[cfg(test)]
    pub(crate) fn fallbacks(&self) -> u32 {
        self.builder.fallbacks
    }

    /// The tree with its preorder numbers (callers read `pre`/`last`): call
    /// [`DomTree::renumber`] first after incremental updates.
    pub(crate) fn tree_ref(&self) -> &Tree {
        debug_assert!(self.numbered, "DomTree numbering is stale: call renumber()");
        &self.tree
    }

    /// Forget the tree (keeps the buffers).
    pub fn clear(&mut self) {
        self.tree.clear();
        self.valid = false;
        self.numbered = false;
        self.dynamic.invalidate();
    }

    /// Are the preorder numbers ([`DomTree::preorder`], [`DomTree::pre_last`]) up to date?
    /// True after `compute` and `renumber`, false after an incremental update changed the
    /// tree.
    pub fn is_numbered(&self) -> bool {
        self.numbered
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

    /// Children of `block` in the tree: in DFS order of the CFG after `compute`; after
    /// incremental updates (and `renumber`), the same set in an unspecified order.
    pub fn children(&self, block: Block) -> Children<'_> {
        if self.numbered || !self.dynamic.is_linked() {
            self.tree.children(block)
        } else {
            let first = if self.is_reachable(block) {
                self.dynamic.first_child(block)
            } else {
                NONE
            };
            self.tree
                .linked_children(first, self.dynamic.next_siblings())
        }
    }

    /// Reachable blocks in preorder of the tree (the entry first; every block comes before
    /// the blocks it dominates). Reverse it for a bottom-up walk. Needs the numbering: after
    /// incremental updates, call [`DomTree::renumber`] first (checked in debug builds).
    pub fn preorder(&self) -> &[Block] {
        debug_assert!(self.numbered, "DomTree numbering is stale: call renumber()");
        &self.tree.order
    }

    /// Preorder number in the tree (from 1) and the largest number in its subtree, or
    /// `None` if unreachable. `a` dominates `b` iff `a.0 <= b.0 <= a.1`. Needs the
    /// numbering, as [`DomTree::preorder`].
    pub fn pre_last(&self, block: Block) -> Option<(u32, u32)> {
        debug_assert!(self.numbered, "DomTree numbering is stale: call renumber()");
        let n = self.tree.node(block);
        (n.pre != 0).then_some((n.pre, n.last))
    }

    /// Does `a` dominate `b` (every path from the entry to `b` passes through `a`)? A block
    /// dominates itself. O(1) with the numbering; after incremental updates (until
    /// [`DomTree::renumber`]) a climb from `b` to the depth of `a`, O(depth(b) - depth(a)).
    #[inline]
    pub fn dominates(&self, a: Block, b: Block) -> bool {
        if self.numbered {
            self.tree.is_ancestor(a, b)
        } else {
            self.dominates_by_climbing(a, b)
        }
    }

    /// [`DomTree::dominates`] without the numbering: climb from `b` by `idom` until the
    /// depth of `a`.
    fn dominates_by_climbing(&self, a: Block, b: Block) -> bool {
        if a == b {
            return true;
        }
        let nb = self.tree.node(b);
        if nb.depth == 0 {
            return true;
        }
        let na = self.tree.node(a);
        if na.depth == 0 || na.depth > nb.depth {
            return false;
        }
        let nodes = &self.tree.nodes[..];
        let mut x = b.as_u32();
        for _ in 0..nb.depth - na.depth {
            x = nodes[x as usize].idom;
        }
        x == a.as_u32()
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
        if self.numbered {
            return self.tree.nca(a, b);
        }
        if !self.is_reachable(a) || !self.is_reachable(b) {
            return None;
        }
        let nodes = &self.tree.nodes[..];
        let (mut x, mut y) = (a.as_u32(), b.as_u32());
        while x != y {
            if nodes[x as usize].depth < nodes[y as usize].depth {
                core::mem::swap(&mut x, &mut y);
            }
            x = nodes[x as usize].idom;
            if x == NONE {
                return None;
            }
        }
        Some(Block::from_u32(x))
    }
}
