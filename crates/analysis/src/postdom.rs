//! The post-dominator tree, with a virtual exit.
//!
//! `a` post-dominates `b` if every path from `b` to the virtual exit passes through `a`.
//! The virtual exit is the root of the tree (it is no block: a block whose immediate
//! post-dominator is the virtual exit has `ipdom == None`). Its children, the **roots**,
//! are chosen as in LLVM:
//! 1. every block in the layout with no successors (`return`, `unreachable`, or no
//!    terminator), in layout order;
//! 2. for the blocks that reach none of those (infinite loops), one root per *sink* strongly
//!    connected component of that region (a component no edge leaves): the block of the
//!    component that comes **last in layout order**, the roots ordered by layout. LLVM picks
//!    the "furthest away" block of a DFS for the same purpose; the last-in-layout rule is
//!    deterministic, independent of predecessor order, tends to pick the loop's latch as
//!    LLVM's rule does, and gives the fewest roots (each sink component needs one, and
//!    every block of the region reaches a sink component).
//!
//! Every block in the layout is in the tree, including blocks unreachable from the entry.
//!
//! **Algorithm** (see the `tree` module). With a single block without successors, one
//! Cooper–Harvey–Kennedy sweep over the reverse CFG, in the order of one DFS along
//! predecessors (for each root in [`PostDomTree::roots`] order, the reverse post-order of
//! the blocks it newly reaches), checked, with semi-NCA as the fallback; children then come
//! in that order. With several exits, semi-NCA directly, children in DFS preorder: the
//! reverse of a reducible CFG is often irreducible (a loop with two exits has two entries
//! backwards), and with early returns inside loops the check failed on most of them
//! (measured on `cfggen::random_reducible`: the wasted sweep cost more than it saved).
//! Either way in practice linear, no recursion; the child order is deterministic for a
//! given CFG.

use crate::cfg::Cfg;
use crate::scc::Scc;
use crate::tree::{Adj, Builder, Children, DfsOrder, Preorder, Tree};
use cranelift_entity::EntityRef;
use gyre_ir::{Block, Function};

/// The post-dominator tree of a function.
#[derive(Clone, Default)]
pub struct PostDomTree {
    tree: Tree,
    builder: Builder,
    order: DfsOrder,
    preorder: Preorder,
    scc: Scc,
    layout_pos: Vec<u32>,
    /// Trivial roots, then the sink-component roots.
    roots: Vec<Block>,
    extra_roots: Vec<Block>,
    valid: bool,
}

impl PostDomTree {
    /// An empty, invalid tree.
    pub fn new() -> PostDomTree {
        PostDomTree::default()
    }

    /// Compute the tree of `func`.
    pub fn with_function(func: &Function, cfg: &Cfg) -> PostDomTree {
        let mut t = PostDomTree::new();
        t.compute(func, cfg);
        t
    }

    /// Recompute from scratch, reusing buffers.
    pub fn compute(&mut self, func: &Function, cfg: &Cfg) {
        debug_assert!(cfg.is_valid(), "PostDomTree::compute needs a valid Cfg");
        let _ = func;
        let n = cfg.num_block_slots();
        let (succs, preds) = (cfg.succ_adj(), cfg.pred_adj());
        self.roots.clear();
        self.roots.extend(
            cfg.layout_blocks()
                .iter()
                .copied()
                .filter(|&b| cfg.succs(b).is_empty()),
        );
        let all = cfg.layout_blocks().len();
        if self.roots.len() == 1 {
            // One exit: try the CHK sweep (see the module doc).
            self.order.reset(n);
            self.order.add_root(self.roots[0], preds);
            if self.order.num_visited() < all {
                let order = &mut self.order;
                Self::add_sink_roots(
                    cfg,
                    &mut self.scc,
                    &mut self.layout_pos,
                    &mut self.extra_roots,
                    |b| order.is_visited(b),
                );
                for &r in &self.extra_roots {
                    self.order.add_root(r, preds);
                }
                self.roots.extend_from_slice(&self.extra_roots);
            }
            self.order.finish();
            let numbering = self.order.numbering(preds, succs);
            self.builder.run(&numbering, &mut self.tree, n);
        } else {
            self.preorder.reset(n);
            for &r in &self.roots {
                self.preorder.dfs(r, preds);
            }
            if self.preorder.num_visited() < all {
                let preorder = &self.preorder;
                Self::add_sink_roots(
                    cfg,
                    &mut self.scc,
                    &mut self.layout_pos,
                    &mut self.extra_roots,
                    |b| preorder.is_visited(b),
                );
                for &r in &self.extra_roots {
                    self.preorder.dfs(r, preds);
                }
                self.roots.extend_from_slice(&self.extra_roots);
            }
            self.builder
                .run_semi(&self.preorder, succs, &mut self.tree, n);
        }
        self.valid = true;
    }

    /// How many computations needed the semi-NCA fallback (tests).
    #[cfg(test)]
    pub(crate) fn fallbacks(&self) -> u32 {
        self.builder.fallbacks
    }

    /// Roots for the reverse-unreachable region (the blocks not `visited`): one per sink
    /// SCC, see the module doc; into `extra_roots`, in layout order.
    fn add_sink_roots(
        cfg: &Cfg,
        scc: &mut Scc,
        layout_pos: &mut Vec<u32>,
        extra_roots: &mut Vec<Block>,
        visited: impl Fn(Block) -> bool,
    ) {
        let n = cfg.num_block_slots();
        layout_pos.clear();
        layout_pos.resize(n, 0);
        for (i, &b) in cfg.layout_blocks().iter().enumerate() {
            layout_pos[b.index()] = i as u32;
        }
        extra_roots.clear();
        let unvisited = cfg.layout_blocks().iter().copied().filter(|&b| !visited(b));
        let succs: Adj<'_> = cfg.succ_adj();
        scc.run(
            n,
            unvisited,
            succs,
            |_, _| true,
            |members, out| {
                if !out {
                    let root = *members
                        .iter()
                        .max_by_key(|b| layout_pos[b.index()])
                        .expect("components are not empty");
                    extra_roots.push(root);
                }
            },
        );
        extra_roots.sort_unstable_by_key(|b| layout_pos[b.index()]);
    }

    pub(crate) fn tree_ref(&self) -> &Tree {
        &self.tree
    }

    /// Forget the tree (keeps the buffers).
    pub fn clear(&mut self) {
        self.tree.clear();
        self.roots.clear();
        self.valid = false;
    }

    /// Has `compute` run since the last `clear`?
    pub fn is_valid(&self) -> bool {
        self.valid
    }

    /// The roots: blocks without successors in layout order, then one block per
    /// infinite-loop region (see the module doc). They are children of the virtual exit,
    /// as is every block with paths to several roots.
    pub fn roots(&self) -> &[Block] {
        &self.roots
    }

    /// Is `block` in the tree (in the layout when the tree was computed)?
    pub fn contains(&self, block: Block) -> bool {
        self.tree.contains(block)
    }

    /// The immediate post-dominator; `None` for roots (their parent is the virtual exit)
    /// and for blocks not in the tree.
    #[inline]
    pub fn ipdom(&self, block: Block) -> Option<Block> {
        self.tree.parent(block)
    }

    /// Depth in the tree: 1 for roots, 0 for blocks not in the tree.
    pub fn depth(&self, block: Block) -> u32 {
        self.tree.node(block).depth
    }

    /// Children of `block` in the tree.
    pub fn children(&self, block: Block) -> Children<'_> {
        self.tree.children(block)
    }

    /// Blocks in preorder of the tree (roots in [`PostDomTree::roots`] order).
    pub fn preorder(&self) -> &[Block] {
        &self.tree.order
    }

    /// Preorder number in the tree (from 1) and the largest number in its subtree.
    pub fn pre_last(&self, block: Block) -> Option<(u32, u32)> {
        let n = self.tree.node(block);
        (n.pre != 0).then_some((n.pre, n.last))
    }

    /// Does `a` post-dominate `b`? A block post-dominates itself; a block not in the tree
    /// is post-dominated by every block. O(1).
    #[inline]
    pub fn post_dominates(&self, a: Block, b: Block) -> bool {
        self.tree.is_ancestor(a, b)
    }

    /// The nearest block that post-dominates both; `None` if that is the virtual exit or
    /// either block is not in the tree.
    pub fn nearest_common_post_dominator(&self, a: Block, b: Block) -> Option<Block> {
        self.tree.nca(a, b)
    }
}
