//! Dominance frontiers and iterated dominance frontiers.
//!
//! `DF(x)` is the set of blocks `y` such that `x` dominates a predecessor of `y` but does
//! not strictly dominate `y` (Cytron et al. 1991): where `x`'s dominance ends. Computed with
//! the runner walk of Cooper, Harvey and Kennedy ("A Simple, Fast Dominance Algorithm",
//! 2001): for each block `y` and each predecessor `p`, walk from `p` up the tree to
//! `idom(y)`, adding `y` to the frontier of every block passed. Time is proportional to the
//! total size of the frontiers.
//!
//! The same code gives post-dominance frontiers (control dependence) on the reverse CFG
//! with [`DominanceFrontiers::compute_post`].
//!
//! The iterated frontier `DF+(S)` of a set of definition blocks is where SSA repair
//! (LCSSA, unswitching, cloning) places block parameters; [`IdfCalculator`] computes it
//! with a worklist.

use crate::cfg::Cfg;
use crate::domtree::DomTree;
use crate::postdom::PostDomTree;
use crate::tree::{Adj, Tree};
use bitvec::vec::BitVec;
use cranelift_entity::EntityRef;
use gyre_ir::{Block, Function};

/// The dominance frontier of every block, as CSR arrays.
#[derive(Clone, Default)]
pub struct DominanceFrontiers {
    range: Vec<[u32; 2]>,
    list: Vec<Block>,
    /// `(runner, join)` pairs before bucketing by runner.
    pairs: Vec<(u32, Block)>,
    /// Per block: index + 1 of the last join added to its frontier (deduplication).
    mark: Vec<u32>,
    valid: bool,
}

impl DominanceFrontiers {
    /// Empty, invalid frontiers.
    pub fn new() -> Self {
        Self::default()
    }

    /// Compute the dominance frontiers. Each frontier lists its blocks in reverse
    /// post-order; unreachable blocks have empty frontiers and appear in none.
    pub fn compute(&mut self, func: &Function, cfg: &Cfg, domtree: &DomTree) {
        debug_assert!(cfg.is_valid() && domtree.is_valid());
        let _ = func;
        self.run(
            cfg.num_block_slots(),
            cfg.rpo(),
            cfg.pred_adj(),
            domtree_tree(domtree),
        );
    }

    /// Compute the post-dominance frontiers: `y` is in the frontier of `x` iff `x`
    /// post-dominates a successor of `y` but does not strictly post-dominate `y` (so `y`'s
    /// branch decides whether `x` runs: `x` is control dependent on `y`).
    /// Frontiers list blocks in layout order.
    pub fn compute_post(&mut self, func: &Function, cfg: &Cfg, postdom: &PostDomTree) {
        debug_assert!(cfg.is_valid() && postdom.is_valid());
        let _ = func;
        self.run(
            cfg.num_block_slots(),
            cfg.layout_blocks(),
            cfg.succ_adj(),
            postdom_tree(postdom),
        );
    }

    fn run(&mut self, n: usize, order: &[Block], in_edges: Adj<'_>, tree: &Tree) {
        self.pairs.clear();
        self.mark.clear();
        self.mark.resize(n, 0);
        for &y in order {
            if !tree.contains(y) {
                continue;
            }
            let stop = tree.node(y).idom;
            let tag = y.as_u32() + 1;
            for &p in in_edges.edges(y.index()) {
                if !tree.contains(p) {
                    continue;
                }
                let mut runner = p.as_u32();
                while runner != stop && self.mark[runner as usize] != tag {
                    self.mark[runner as usize] = tag;
                    self.pairs.push((runner, y));
                    runner = tree.nodes[runner as usize].idom;
                    if runner == crate::tree::NONE {
                        break;
                    }
                }
            }
        }
        // Bucket by runner, keeping `order` within each frontier.
        self.range.clear();
        self.range.resize(n, [0, 0]);
        for &(r, _) in &self.pairs {
            self.range[r as usize][1] += 1;
        }
        let mut off = 0;
        for r in &mut self.range {
            let c = r[1];
            *r = [off, off];
            off += c;
        }
        self.list.clear();
        self.list.resize(off as usize, Block::new(0));
        for &(r, y) in &self.pairs {
            let slot = &mut self.range[r as usize][1];
            self.list[*slot as usize] = y;
            *slot += 1;
        }
        self.valid = true;
    }

    /// Forget the frontiers (keeps the buffers).
    pub fn clear(&mut self) {
        self.range.clear();
        self.list.clear();
        self.valid = false;
    }

    /// Has `compute` run since the last `clear`?
    pub fn is_valid(&self) -> bool {
        self.valid
    }

    /// The frontier of `block`.
    pub fn frontier(&self, block: Block) -> &[Block] {
        match self.range.get(block.index()) {
            Some(&[a, b]) => &self.list[a as usize..b as usize],
            None => &[],
        }
    }
}

fn domtree_tree(d: &DomTree) -> &Tree {
    d.tree_ref()
}

fn postdom_tree(p: &PostDomTree) -> &Tree {
    p.tree_ref()
}

/// Iterated dominance frontiers with reusable scratch sets.
#[derive(Clone, Default)]
pub struct IdfCalculator {
    in_idf: BitVec,
    queued: BitVec,
    worklist: Vec<Block>,
}

impl IdfCalculator {
    /// A calculator with empty scratch.
    pub fn new() -> Self {
        Self::default()
    }

    /// `DF+(defs)`, the least fixed point of `X = DF(defs ∪ X)`, into `out` (cleared first),
    /// sorted by block index.
    pub fn compute(&mut self, df: &DominanceFrontiers, defs: &[Block], out: &mut Vec<Block>) {
        out.clear();
        let n = df.range.len();
        self.in_idf.clear();
        self.in_idf.resize(n, false);
        self.queued.clear();
        self.queued.resize(n, false);
        self.worklist.clear();
        for &d in defs {
            if d.index() < n && !self.queued[d.index()] {
                self.queued.set(d.index(), true);
                self.worklist.push(d);
            }
        }
        while let Some(x) = self.worklist.pop() {
            for &y in df.frontier(x) {
                if !self.in_idf[y.index()] {
                    self.in_idf.set(y.index(), true);
                    out.push(y);
                    if !self.queued[y.index()] {
                        self.queued.set(y.index(), true);
                        self.worklist.push(y);
                    }
                }
            }
        }
        out.sort_unstable();
    }
}
