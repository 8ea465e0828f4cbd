//! Textbook algorithms, for tests only: slow, simple, and independent of the fast ones.
//!
//! - dominators and post-dominators as sets by iterative data flow (Allen–Cocke);
//! - the post-dominator roots by their definition (blocks without successors, plus the
//!   last-in-layout block of every sink component among the blocks that reach none);
//! - natural loops from back edges, one backward search per back edge;
//! - dominance frontiers by their definition (Cytron et al.) and iterated to a fixed point;
//! - irreducible blocks: blocks on a cycle once back edges are removed.
//!
//! Everything here is quadratic or worse; use only on small graphs.

use crate::cfg::Cfg;
use bitvec::vec::BitVec;
use cranelift_entity::EntityRef;
use gyre_ir::Block;

fn blocks_of(set: &BitVec) -> Vec<Block> {
    set.iter_ones().map(Block::new).collect()
}

/// Blocks reachable from `starts` along `next`.
pub fn reach(n: usize, starts: &[Block], next: impl Fn(Block) -> Vec<Block>) -> BitVec {
    let mut seen: BitVec = BitVec::repeat(false, n);
    let mut work: Vec<Block> = starts.to_vec();
    for &s in starts {
        seen.set(s.index(), true);
    }
    while let Some(b) = work.pop() {
        for s in next(b) {
            if !seen[s.index()] {
                seen.set(s.index(), true);
                work.push(s);
            }
        }
    }
    seen
}

/// Dominator sets of a graph with nodes `0..n`, a root and a predecessor function;
/// `sets[b]` is empty for nodes the root does not reach.
fn dataflow(
    n: usize,
    root: usize,
    reachable: &BitVec,
    preds: impl Fn(usize) -> Vec<usize>,
) -> Vec<BitVec> {
    let full: BitVec = BitVec::repeat(true, n);
    let mut sets: Vec<BitVec> = (0..n)
        .map(|b| {
            if reachable[b] {
                full.clone()
            } else {
                BitVec::repeat(false, n)
            }
        })
        .collect();
    sets[root] = BitVec::repeat(false, n);
    sets[root].set(root, true);
    let mut changed = true;
    while changed {
        changed = false;
        for b in 0..n {
            if b == root || !reachable[b] {
                continue;
            }
            let mut s = full.clone();
            for p in preds(b) {
                if reachable[p] {
                    s &= &sets[p];
                }
            }
            s.set(b, true);
            if s != sets[b] {
                sets[b] = s;
                changed = true;
            }
        }
    }
    sets
}

/// The deepest strict dominator in a set (the one with the most dominators itself).
fn immediate(sets: &[BitVec], b: usize) -> Option<usize> {
    sets[b]
        .iter_ones()
        .filter(|&d| d != b)
        .max_by_key(|&d| sets[d].count_ones())
}

/// Dominators by iterative data flow.
pub struct RefDom {
    /// `sets[b]`: the dominators of `b` (empty if unreachable).
    pub sets: Vec<BitVec>,
    /// Blocks reachable from the entry.
    pub reachable: BitVec,
}

impl RefDom {
    /// Compute from the CFG's edges.
    pub fn new(cfg: &Cfg) -> RefDom {
        let n = cfg.num_block_slots();
        let Some(entry) = cfg.entry() else {
            return RefDom {
                sets: vec![BitVec::repeat(false, n); n],
                reachable: BitVec::repeat(false, n),
            };
        };
        let reachable = reach(n, &[entry], |b| cfg.succs(b).to_vec());
        let sets = dataflow(n, entry.index(), &reachable, |b| {
            cfg.preds(Block::new(b)).iter().map(|p| p.index()).collect()
        });
        RefDom { sets, reachable }
    }

    /// Does `a` dominate `b`, with the same convention for unreachable blocks as
    /// [`DomTree::dominates`](crate::DomTree::dominates)?
    pub fn dominates(&self, a: Block, b: Block) -> bool {
        a == b || !self.reachable[b.index()] || self.sets[b.index()][a.index()]
    }

    /// The immediate dominator.
    pub fn idom(&self, b: Block) -> Option<Block> {
        if !self.reachable[b.index()] {
            return None;
        }
        immediate(&self.sets, b.index()).map(Block::new)
    }

    /// Strict dominators of `b`.
    pub fn dominators(&self, b: Block) -> Vec<Block> {
        blocks_of(&self.sets[b.index()])
    }
}

/// Post-dominators by iterative data flow on the reverse CFG with a virtual exit (node
/// index `n`), with the roots computed from their definition.
pub struct RefPostDom {
    /// `sets[b]`: the post-dominators of `b` (bit `n` is the virtual exit).
    pub sets: Vec<BitVec>,
    /// The roots, in layout order of the two kinds (see the `postdom` module).
    pub roots: Vec<Block>,
    n: usize,
}

impl RefPostDom {
    /// Compute from the CFG's edges.
    pub fn new(cfg: &Cfg) -> RefPostDom {
        let n = cfg.num_block_slots();
        let layout = cfg.layout_blocks();
        let pos = |b: Block| layout.iter().position(|&x| x == b).expect("in layout");
        let mut roots: Vec<Block> = layout
            .iter()
            .copied()
            .filter(|&b| cfg.succs(b).is_empty())
            .collect();
        let reaches_exit = reach(n, &roots, |b| cfg.preds(b).to_vec());
        let mut extra = Vec::new();
        for &b in layout {
            if reaches_exit[b.index()] {
                continue;
            }
            let fwd = reach(n, &[b], |x| cfg.succs(x).to_vec());
            let bwd = reach(n, &[b], |x| cfg.preds(x).to_vec());
            // A sink component: everything `b` reaches reaches `b` back.
            if fwd.iter_ones().all(|c| bwd[c]) {
                let root = fwd
                    .iter_ones()
                    .map(Block::new)
                    .max_by_key(|&c| pos(c))
                    .expect("b reaches itself");
                if !extra.contains(&root) {
                    extra.push(root);
                }
            }
        }
        extra.sort_by_key(|&b| pos(b));
        roots.extend(extra);
        // Reverse graph on n + 1 nodes: the virtual exit `n` precedes nothing and is
        // "succeeded" by the roots; a node's predecessors in it are its CFG successors.
        let mut in_layout: BitVec = BitVec::repeat(false, n + 1);
        for &b in layout {
            in_layout.set(b.index(), true);
        }
        in_layout.set(n, true);
        let sets = dataflow(n + 1, n, &in_layout, |b| {
            let mut p: Vec<usize> = cfg.succs(Block::new(b)).iter().map(|s| s.index()).collect();
            if roots.contains(&Block::new(b)) {
                p.push(n);
            }
            p
        });
        RefPostDom { sets, roots, n }
    }

    /// Does `a` post-dominate `b`?
    pub fn post_dominates(&self, a: Block, b: Block) -> bool {
        a == b || self.sets[b.index()].not_any() || self.sets[b.index()][a.index()]
    }

    /// The immediate post-dominator (`None` for the virtual exit).
    pub fn ipdom(&self, b: Block) -> Option<Block> {
        if self.sets[b.index()].not_any() {
            return None;
        }
        immediate(&self.sets, b.index())
            .filter(|&d| d != self.n)
            .map(Block::new)
    }
}

/// Natural loops: per header (in block index order), the set of its blocks.
pub fn natural_loops(cfg: &Cfg, dom: &RefDom) -> Vec<(Block, BitVec)> {
    let n = cfg.num_block_slots();
    let mut loops: Vec<(Block, BitVec)> = Vec::new();
    for h in (0..n).map(Block::new) {
        if !dom.reachable[h.index()] {
            continue;
        }
        let mut body: BitVec = BitVec::repeat(false, n);
        let mut any = false;
        for &p in cfg.preds(h) {
            if dom.reachable[p.index()] && dom.sets[p.index()][h.index()] {
                any = true;
                // Blocks reaching p without passing through h.
                body.set(h.index(), true);
                let mut work = vec![p];
                while let Some(b) = work.pop() {
                    if body[b.index()] {
                        continue;
                    }
                    body.set(b.index(), true);
                    work.extend(cfg.preds(b).iter().filter(|x| dom.reachable[x.index()]));
                }
            }
        }
        if any {
            loops.push((h, body));
        }
    }
    loops
}

/// The index (into `loops`) of the smallest loop strictly containing loop `i`.
pub fn loop_parent(loops: &[(Block, BitVec)], i: usize) -> Option<usize> {
    let me = &loops[i].1;
    (0..loops.len())
        .filter(|&j| j != i)
        .filter(|&j| {
            let other = &loops[j].1;
            other[loops[i].0.index()] && me.iter_ones().all(|b| other[b])
        })
        .min_by_key(|&j| loops[j].1.count_ones())
}

/// Dominance frontiers by definition: `DF(x) = { y | x dom p for a pred p of y, and not
/// x sdom y }`, reachable blocks only.
pub fn dominance_frontiers(cfg: &Cfg, dom: &RefDom) -> Vec<BitVec> {
    let n = cfg.num_block_slots();
    let mut df = vec![BitVec::repeat(false, n); n];
    for (x, dfx) in df.iter_mut().enumerate() {
        if !dom.reachable[x] {
            continue;
        }
        for y in 0..n {
            if !dom.reachable[y] {
                continue;
            }
            let strict = x != y && dom.sets[y][x];
            let dom_pred = cfg
                .preds(Block::new(y))
                .iter()
                .any(|p| dom.reachable[p.index()] && dom.sets[p.index()][x]);
            if dom_pred && !strict {
                dfx.set(y, true);
            }
        }
    }
    df
}

/// `DF+(defs)` as a fixed point of `X = DF(defs ∪ X)`.
pub fn iterated_frontier(df: &[BitVec], defs: &[Block]) -> Vec<Block> {
    let n = df.len();
    let mut x: BitVec = BitVec::repeat(false, n);
    loop {
        let mut next: BitVec = BitVec::repeat(false, n);
        for d in defs.iter().map(|d| d.index()).chain(x.iter_ones()) {
            next |= &df[d];
        }
        if next == x {
            return blocks_of(&x);
        }
        x = next;
    }
}

/// Reachable blocks that lie on a cycle after removing every back edge (non-empty iff
/// the reachable CFG is irreducible).
pub fn irreducible_blocks(cfg: &Cfg, dom: &RefDom) -> BitVec {
    let n = cfg.num_block_slots();
    let fwd = |b: Block| -> Vec<Block> {
        cfg.succs(b)
            .iter()
            .copied()
            .filter(|&s| !dom.sets[b.index()][s.index()])
            .collect()
    };
    let mut out: BitVec = BitVec::repeat(false, n);
    for b in (0..n).map(Block::new) {
        if dom.reachable[b.index()] {
            let r = reach(n, &fwd(b), fwd);
            if r[b.index()] {
                out.set(b.index(), true);
            }
        }
    }
    out
}
