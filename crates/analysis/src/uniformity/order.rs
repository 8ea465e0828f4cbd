//! The loop-contiguous propagation order of the sync-dependence analysis, and the exit
//! blocks of every loop.
//!
//! This is LLVM's `ModifiedPostOrder` (GenericUniformityImpl.h), built on the natural
//! loops of [`LoopInfo`] and computed as a plain topological sort of a virtually
//! modified CFG `G'`, with one extra node `V(L)` per loop standing for "the start of
//! `L`'s body":
//!
//! - an edge entering loop `L` (`x -> header(L)`, `x` outside `L`) becomes `x -> V(L)`;
//! - `V(L)` has an edge to every successor of the header inside `L` (mapped the same
//!   way) and to the header itself;
//! - the header's own successors are replaced by **all** exit blocks of `L`;
//! - a back edge `latch -> header` is kept: in `G'` it is an ordinary forward edge.
//!
//! For a reducible CFG `G'` is acyclic, and in reverse post-order of `G'`
//! 1. the body of every loop (without its header) is an interval, followed by the header;
//! 2. everything a loop exits to comes after its header;
//! 3. every CFG edge other than a back edge or an edge entering a loop goes forward.
//!
//! So a label propagated in increasing position reaches a header only after every latch
//! of its loop, and a loop's exits only after its header. With irreducible cycles `G'`
//! has cycles; the order is then merely a DFS order, and the propagation (which uses a
//! priority queue, not a single sweep) copes, see [`super`].
//!
//! Beside the order, per-block facts for keeping label sweeps local (see
//! `PropagationOrder::compute_regions` and [`super`]): dead ends, private blocks, the last
//! predecessor and own-sweep extent of each block, cycle spans, and (with irreducible
//! cycles) the range of positions each block reaches.
//!
//! Built with explicit stacks and a few passes over the order: O(blocks + edges + loop
//! exits).

use crate::cfg::Cfg;
use crate::domtree::DomTree;
use crate::loops::LoopInfo;
use cranelift_entity::EntityRef;
use gyre_ir::Block;

/// No position: the block is unreachable.
pub(super) const NO_POS: u32 = u32::MAX;

/// Flag: the block dominates everything its propagation graph reaches, that region is
/// free of cycles, and no cycle span covers the block (see
/// `PropagationOrder::compute_regions`). A label sweep gains nothing by popping it.
pub(super) const PRIVATE: u8 = 1;
/// Flag: the propagation graph reaches no irreducible cycle and no cycle of `G'` from the
/// block (a single label sweeping on from it can only meet labels already there).
pub(super) const CLEAN: u8 = 2;
/// Flag: the block is the exit of some loop.
pub(super) const EXIT: u8 = 4;
/// Scratch flags of `compute_regions`.
const DIRTY: u8 = 8;
const COVERED: u8 = 16;

/// The order and the exit lists, with their scratch buffers.
#[derive(Clone, Default)]
pub(super) struct PropagationOrder {
    /// Position of each block (by index); `NO_POS` for unreachable blocks.
    pub pos: Vec<u32>,
    /// Blocks by position.
    pub order: Vec<Block>,
    /// Per loop (by index), a range into `exits`.
    exit_range: Vec<[u32; 2]>,
    /// Distinct exit blocks of each loop, in block-index order.
    exits: Vec<Block>,
    // Scratch.
    pairs: Vec<(u32, u32)>,
    gp_range: Vec<[u32; 2]>,
    /// Targets of `G'` (virtual loop nodes as `Block`s numbered from `nb`).
    gp: Vec<Block>,
    /// Blocks on a cycle of `G'` (only in functions with irreducible cycles): the only
    /// places where an edge may go backwards in the order.
    pub on_cycle: Vec<bool>,
    /// Can a label at this block still meet another one: does the block reach (in the
    /// propagation graph: headers go to their loop's exits) a block with two incoming
    /// edges, or a cycle? A label that cannot is dropped instead of queued.
    pub reaches_merge: Vec<bool>,
    indeg: Vec<u32>,
    /// Per block (by index): [`PRIVATE`], [`CLEAN`] and [`EXIT`] bits.
    pub flags: Vec<u8>,
    /// Per block: 1 + the largest position of a block that can pass a label to it (an
    /// edge of the propagation graph), 0 if none. Once the sweep is past it, the block's
    /// label is final.
    pub last_pred: Vec<u32>,
    /// Per block: 1 + the largest position a label sweep started at this block alone
    /// would queue (it stops at blocks that are dead ends).
    pub last_flood: Vec<u32>,
    /// Difference array over positions: how many cycle spans (see `compute_regions`)
    /// cover each position.
    cover: Vec<i32>,
    /// Per block: preorder range in the dominator tree of the blocks its propagation
    /// graph reaches (scratch of `compute_regions`).
    reach_pre: Vec<[u32; 2]>,
    /// Per block: 1 + the index of its irreducible cycle, 0 if none.
    pub irr_of: Vec<u32>,
    /// Per block (functions with irreducible cycles only): the smallest and largest
    /// position of a block reachable from it along CFG or `G'` edges (itself included).
    pub reach_lo: Vec<u32>,
    /// See `reach_lo`.
    pub reach_hi: Vec<u32>,
    /// Per position `q` (and one past the end): the smallest `reach_lo` of the blocks at
    /// positions `q` and later.
    pub suffix_lo: Vec<u32>,
    /// Scratch: CSR of the union of CFG and `G'` edges.
    union_range: Vec<[u32; 2]>,
    union_targets: Vec<Block>,
    comp_stamp: Vec<u32>,
    /// Scratch of `compute_regions`.
    cycle_span: Vec<[u32; 2]>,
    scc: crate::scc::Scc,
    stack: Vec<(u32, u32)>,
    seen: Vec<bool>,
    post: Vec<u32>,
}

impl PropagationOrder {
    /// Distinct exit blocks of loop `l` (blocks outside `l` with a predecessor inside).
    pub fn exits(&self, l: crate::Loop) -> &[Block] {
        let [a, b] = self.exit_range[l.index()];
        &self.exits[a as usize..b as usize]
    }

    pub fn compute(&mut self, cfg: &Cfg, dt: &DomTree, li: &LoopInfo) {
        let nb = cfg.num_block_slots();
        let nl = li.num_loops();
        self.compute_exits(cfg, li, nl);

        // Node ids: blocks 0..nb, then V(L) = nb + loop index.
        let map = |from: Block, to: Block| -> Block {
            match li.innermost_loop(to) {
                Some(l) if li.header(l) == to && !li.contains(l, from) => {
                    Block::new(nb + l.index())
                }
                _ => to,
            }
        };
        // CSR of G': count-free build, one range per node filled in node order.
        self.gp.clear();
        self.gp_range.clear();
        self.gp_range.resize(nb + nl, [0, 0]);
        for &b in cfg.layout_blocks() {
            let start = self.gp.len() as u32;
            let header_of = li.innermost_loop(b).filter(|&l| li.header(l) == b);
            match header_of {
                Some(l) => {
                    let [x0, x1] = self.exit_range[l.index()];
                    for i in x0..x1 {
                        let m = map(b, self.exits[i as usize]);
                        self.gp.push(m);
                    }
                }
                None => {
                    for &s in cfg.succs(b) {
                        let m = map(b, s);
                        self.gp.push(m);
                    }
                }
            }
            self.gp_range[b.index()] = [start, self.gp.len() as u32];
        }
        for l in li.loops() {
            let h = li.header(l);
            let start = self.gp.len() as u32;
            for &s in cfg.succs(h) {
                if s != h && li.contains(l, s) {
                    let m = map(h, s);
                    self.gp.push(m);
                }
            }
            self.gp.push(h);
            self.gp_range[nb + l.index()] = [start, self.gp.len() as u32];
        }

        // Iterative DFS post-order of G' from the entry, successors last-to-first so
        // that the first successor's region comes first (as Cfg's RPO does).
        self.pos.clear();
        self.pos.resize(nb, NO_POS);
        self.order.clear();
        self.post.clear();
        self.seen.clear();
        self.seen.resize(nb + nl, false);
        let Some(entry) = cfg.entry() else { return };
        let root = match li.innermost_loop(entry) {
            Some(l) if li.header(l) == entry => (nb + l.index()) as u32,
            _ => entry.as_u32(),
        };
        self.seen[root as usize] = true;
        self.stack.clear();
        self.stack.push((root, self.gp_range[root as usize][1]));
        while let Some(top) = self.stack.last_mut() {
            let node = top.0;
            let lo = self.gp_range[node as usize][0];
            if top.1 == lo {
                self.post.push(node);
                self.stack.pop();
                continue;
            }
            top.1 -= 1;
            let s = self.gp[top.1 as usize].as_u32();
            if !self.seen[s as usize] {
                self.seen[s as usize] = true;
                let end = self.gp_range[s as usize][1];
                self.stack.push((s, end));
            }
        }
        for &node in self.post.iter().rev() {
            if (node as usize) < nb {
                self.pos[node as usize] = self.order.len() as u32;
                self.order.push(Block::from_u32(node));
            }
        }
        self.on_cycle.clear();
        self.on_cycle.resize(nb, false);
        self.cover.clear();
        self.cover.resize(self.order.len() + 1, 0);
        if !li.irreducible_cycles().is_empty() {
            let adj = crate::tree::Adj {
                ranges: &self.gp_range,
                targets: &self.gp,
            };
            let (on_cycle, cover, pos) = (&mut self.on_cycle, &mut self.cover, &self.pos);
            self.scc.run(
                nb + nl,
                [Block::from_u32(root)],
                adj,
                |_, _| true,
                |members, _| {
                    if members.len() > 1 {
                        let (mut lo, mut hi) = (u32::MAX, 0);
                        for m in members.iter().filter(|m| m.index() < nb) {
                            on_cycle[m.index()] = true;
                            lo = lo.min(pos[m.index()]);
                            hi = hi.max(pos[m.index()]);
                        }
                        if lo <= hi {
                            cover[lo as usize] += 1;
                            cover[hi as usize + 1] -= 1;
                        }
                    }
                },
            );
        }
        self.compute_reaches_merge(cfg, li, nb);
        self.compute_regions(cfg, dt, li, nb);
        self.reach_lo.clear();
        self.reach_hi.clear();
        self.suffix_lo.clear();
        if !li.irreducible_cycles().is_empty() {
            self.compute_reach_ranges(cfg, nb, nl, root);
        }
        debug_assert_eq!(
            self.order.len(),
            cfg.rpo().len(),
            "the modified order covers exactly the reachable blocks"
        );
    }

    /// `reaches_merge`, by one backward sweep over the order (blocks on cycles of `G'`
    /// count as merges: the sweep is not topological there).
    fn compute_reaches_merge(&mut self, cfg: &Cfg, li: &LoopInfo, nb: usize) {
        let header_loop = |b: Block| li.innermost_loop(b).filter(|&l| li.header(l) == b);
        self.indeg.clear();
        self.indeg.resize(nb, 0);
        for &b in &self.order {
            match header_loop(b) {
                Some(l) => {
                    let [x0, x1] = self.exit_range[l.index()];
                    for i in x0..x1 {
                        self.indeg[self.exits[i as usize].index()] += 1;
                    }
                }
                None => {
                    for &s in cfg.succs(b) {
                        self.indeg[s.index()] += 1;
                    }
                }
            }
            // Latches and loop entries all count: a header with a back edge merges.
            if header_loop(b).is_some() {
                self.indeg[b.index()] += 2;
            }
        }
        self.reaches_merge.clear();
        self.reaches_merge.resize(nb, false);
        for k in (0..self.order.len()).rev() {
            let b = self.order[k];
            let look = |s: Block, me: &Self| {
                me.indeg[s.index()] >= 2 || me.on_cycle[s.index()] || me.reaches_merge[s.index()]
            };
            let r = self.on_cycle[b.index()]
                || match header_loop(b) {
                    Some(l) => {
                        let [x0, x1] = self.exit_range[l.index()];
                        (x0..x1).any(|i| look(self.exits[i as usize], self))
                    }
                    None => cfg.succs(b).iter().any(|&s| look(s, self)),
                };
            self.reaches_merge[b.index()] = r;
        }
    }

    /// The static facts behind the "inert block" and memo rules of the label sweep (see
    /// [`super`]): two passes over the order, O(blocks + edges + loop exits).
    ///
    /// With `R(y)` the blocks the propagation graph reaches from `y` (a header goes to its
    /// loop's exits, every other block to its successors), `y` is [`PRIVATE`] when
    /// - `y` dominates every block of `R(y)`: a label can enter `R(y)` only through `y`
    ///   (a path from the entry to a predecessor of some `z` in `R(y)` passes `y`, so the
    ///   predecessor is in `R(y)` too);
    /// - `R(y)` holds no block of an irreducible cycle and none on a cycle of `G'`: no
    ///   cycle is touched and every edge goes forward there ([`CLEAN`]);
    /// - no cycle span covers `y`'s position. A sweep queues a block behind the one it
    ///   processes only along an edge of a cycle of `G'` (span: the cycle's first to last
    ///   block), or when a label first reaches an irreducible cycle, which queues its
    ///   blocks and exits (span: from the first of those to the last block that can pass
    ///   a label into the cycle, or into a cycle whose exit is in it). Outside every span,
    ///   a block's label is final when it is popped, and it is popped once.
    ///
    /// [`EXIT`]: some predecessor lies in a loop that does not contain `y`.
    fn compute_regions(&mut self, cfg: &Cfg, dt: &DomTree, li: &LoopInfo, nb: usize) {
        let header_loop = |b: Block| li.innermost_loop(b).filter(|&l| li.header(l) == b);
        let cycles = li.irreducible_cycles();
        self.flags.clear();
        self.flags.resize(nb, 0);
        self.last_pred.clear();
        self.last_pred.resize(nb, 0);
        self.last_flood.clear();
        self.last_flood.resize(nb, 0);
        self.reach_pre.clear();
        self.reach_pre.resize(nb, [0, 0]);
        self.irr_of.clear();
        self.irr_of.resize(nb, 0);
        // Per irreducible cycle: [first position it queues when touched, 1 + last
        // position of a block whose processing can touch it].
        self.cycle_span.clear();
        self.cycle_span.resize(cycles.len(), [u32::MAX, 0]);
        for (i, c) in cycles.iter().enumerate() {
            for &y in &c.blocks {
                self.irr_of[y.index()] = i as u32 + 1;
            }
        }
        // Forward: last predecessors (propagation-graph and CFG edges alike), exits, and
        // the cycle spans.
        for k in 0..self.order.len() {
            let b = self.order[k];
            let cb = self.irr_of[b.index()];
            let inner = li.innermost_loop(b);
            let succs: &[Block] = match header_loop(b) {
                Some(l) => {
                    let [x0, x1] = self.exit_range[l.index()];
                    &self.exits[x0 as usize..x1 as usize]
                }
                None => &[],
            };
            for &s in succs.iter().chain(cfg.succs(b)) {
                let si = s.index();
                if self.pos[si] == NO_POS {
                    continue;
                }
                self.last_pred[si] = self.last_pred[si].max(k as u32 + 1);
                if inner.is_some_and(|l| !li.contains(l, s)) {
                    self.flags[si] |= EXIT;
                }
                let cs = self.irr_of[si];
                if cs != cb {
                    if cs != 0 {
                        let sp = &mut self.cycle_span[cs as usize - 1];
                        sp[1] = sp[1].max(k as u32 + 1);
                    }
                    if cb != 0 {
                        let sp = &mut self.cycle_span[cb as usize - 1];
                        sp[0] = sp[0].min(self.pos[si]);
                    }
                }
            }
            if cb != 0 {
                let sp = &mut self.cycle_span[cb as usize - 1];
                sp[0] = sp[0].min(k as u32);
            }
        }
        // A touch also touches the cycles its exits lie in: their spans take the
        // touching blocks of the first cycle too (to a fixed point; the exit relation
        // between cycles is acyclic, so this settles).
        let mut changed = !cycles.is_empty();
        while changed {
            changed = false;
            for (i, c) in cycles.iter().enumerate() {
                let hi = self.cycle_span[i][1];
                for &y in &c.blocks {
                    for &e in cfg.succs(y) {
                        let d = self.irr_of[e.index()];
                        if d != 0 && d as usize != i + 1 {
                            let sp = &mut self.cycle_span[d as usize - 1];
                            if sp[1] < hi {
                                sp[1] = hi;
                                changed = true;
                            }
                        }
                    }
                }
            }
        }
        for (i, c) in cycles.iter().enumerate() {
            let [lo, hi] = self.cycle_span[i];
            if hi > lo {
                self.cover[lo as usize] += 1;
                self.cover[hi as usize] -= 1;
            }
            // An exit's label changes when the cycle is touched, up to the last block
            // that can touch it.
            for &y in &c.blocks {
                for &e in cfg.succs(y) {
                    if self.irr_of[e.index()] as usize != i + 1 {
                        let lp = &mut self.last_pred[e.index()];
                        *lp = (*lp).max(hi);
                    }
                }
            }
        }
        let mut covered = 0i32;
        for k in 0..self.order.len() {
            covered += self.cover[k];
            if covered > 0 {
                self.flags[self.order[k].index()] |= COVERED;
            }
        }
        // Backward: dirty (reaches a cycle), dominance of the reached region, flood ends.
        for k in (0..self.order.len()).rev() {
            let y = self.order[k];
            let yi = y.index();
            let (pre, last) = dt
                .pre_last(y)
                .expect("a block in the order is reachable, so in the dominator tree");
            let mut dirty = self.irr_of[yi] != 0 || self.on_cycle[yi];
            let [mut lo, mut hi] = [pre, pre];
            let mut flood = k as u32 + 1;
            let succs: &[Block] = match header_loop(y) {
                Some(l) => self.exits(l),
                None => cfg.succs(y),
            };
            for &s in succs {
                let q = self.pos[s.index()];
                if q == NO_POS {
                    continue;
                }
                // A successor not after `y` closes a cycle: `y` is on it (and dirty).
                if q as usize <= k || self.flags[s.index()] & DIRTY != 0 {
                    dirty = true;
                    continue;
                }
                let [a, c] = self.reach_pre[s.index()];
                lo = lo.min(a);
                hi = hi.max(c);
                if !self.is_dead_end(s) {
                    flood = flood.max(self.last_flood[s.index()]);
                }
            }
            self.reach_pre[yi] = [lo, hi];
            self.last_flood[yi] = flood;
            let f = &mut self.flags[yi];
            if dirty {
                *f |= DIRTY;
            } else {
                *f |= CLEAN;
                if pre <= lo && hi <= last && *f & COVERED == 0 {
                    *f |= PRIVATE;
                }
            }
        }
    }

    /// `reach_lo`, `reach_hi` and `suffix_lo`: one Tarjan pass over the union of the CFG
    /// and `G'` (a superset of every edge along which a sweep queues blocks, cycle
    /// touches included), whose components come out sinks first.
    fn compute_reach_ranges(&mut self, cfg: &Cfg, nb: usize, nl: usize, root: u32) {
        self.union_targets.clear();
        self.union_range.clear();
        self.union_range.resize(nb + nl, [0, 0]);
        for node in 0..nb + nl {
            let start = self.union_targets.len() as u32;
            let [a, b] = self.gp_range[node];
            self.union_targets
                .extend_from_slice(&self.gp[a as usize..b as usize]);
            if node < nb && self.pos[node] != NO_POS {
                self.union_targets
                    .extend_from_slice(cfg.succs(Block::from_u32(node as u32)));
            }
            self.union_range[node] = [start, self.union_targets.len() as u32];
        }
        self.reach_lo.clear();
        self.reach_lo.resize(nb + nl, u32::MAX);
        self.reach_hi.clear();
        self.reach_hi.resize(nb + nl, 0);
        self.comp_stamp.clear();
        self.comp_stamp.resize(nb + nl, 0);
        let adj = crate::tree::Adj {
            ranges: &self.union_range,
            targets: &self.union_targets,
        };
        let (lo_of, hi_of, stamp, pos) = (
            &mut self.reach_lo,
            &mut self.reach_hi,
            &mut self.comp_stamp,
            &self.pos,
        );
        let (ranges, targets) = (&self.union_range, &self.union_targets);
        let mut comp = 0u32;
        self.scc.run(
            nb + nl,
            [Block::from_u32(root)],
            adj,
            |_, _| true,
            |members, _| {
                comp += 1;
                for m in members {
                    stamp[m.index()] = comp;
                }
                let (mut lo, mut hi) = (u32::MAX, 0u32);
                for m in members {
                    if m.index() < nb {
                        lo = lo.min(pos[m.index()]);
                        hi = hi.max(pos[m.index()]);
                    }
                    let [a, b] = ranges[m.index()];
                    for t in &targets[a as usize..b as usize] {
                        if stamp[t.index()] != comp {
                            // Another component, finished before this one.
                            lo = lo.min(lo_of[t.index()]);
                            hi = hi.max(hi_of[t.index()]);
                        }
                    }
                }
                for m in members {
                    lo_of[m.index()] = lo;
                    hi_of[m.index()] = hi;
                }
            },
        );
        self.suffix_lo.clear();
        self.suffix_lo.resize(self.order.len() + 1, u32::MAX);
        for k in (0..self.order.len()).rev() {
            self.suffix_lo[k] = self.suffix_lo[k + 1].min(self.reach_lo[self.order[k].index()]);
        }
    }

    /// See [`PRIVATE`].
    pub fn is_private(&self, b: Block) -> bool {
        self.flags[b.index()] & PRIVATE != 0
    }

    /// See [`CLEAN`].
    pub fn is_clean(&self, b: Block) -> bool {
        self.flags[b.index()] & CLEAN != 0
    }

    /// Does no cycle span cover `b` (see `compute_regions`)? Then nothing processed after
    /// `b` can queue a block before it again.
    pub fn is_uncovered(&self, b: Block) -> bool {
        self.flags[b.index()] & COVERED == 0
    }

    /// See [`EXIT`].
    pub fn is_exit(&self, b: Block) -> bool {
        self.flags[b.index()] & EXIT != 0
    }

    /// A block with at most one incoming edge that reaches no merge: no label can meet
    /// another one at it or after it.
    pub fn is_dead_end(&self, b: Block) -> bool {
        self.indeg[b.index()] < 2 && !self.reaches_merge[b.index()]
    }

    /// Exit blocks per loop: every edge `x -> e` exits the loops around `x` that do not
    /// contain `e`, found by walking up from `x`'s innermost loop.
    fn compute_exits(&mut self, cfg: &Cfg, li: &LoopInfo, nl: usize) {
        self.pairs.clear();
        for &b in cfg.layout_blocks() {
            let Some(inner) = li.innermost_loop(b) else {
                continue;
            };
            for &s in cfg.succs(b) {
                let mut l = Some(inner);
                while let Some(x) = l {
                    if li.contains(x, s) {
                        break;
                    }
                    self.pairs.push((x.as_u32(), s.as_u32()));
                    l = li.parent(x);
                }
            }
        }
        self.pairs.sort_unstable();
        self.pairs.dedup();
        self.exits.clear();
        self.exit_range.clear();
        self.exit_range.resize(nl, [0, 0]);
        let mut i = 0;
        for l in 0..nl {
            let start = self.exits.len() as u32;
            while i < self.pairs.len() && self.pairs[i].0 as usize == l {
                self.exits.push(Block::from_u32(self.pairs[i].1));
                i += 1;
            }
            self.exit_range[l] = [start, self.exits.len() as u32];
        }
    }
}

/// A min-priority queue of positions in the order, as a two-level bitset: pushing is
/// setting a bit (and its word's bit in the summary), popping the minimum is a forward
/// scan from a cursor that only moves back when a smaller position is pushed (an edge
/// going backwards, in irreducible cycles only); empty words are skipped through the
/// summary. A label sweep moves forward, so a whole propagation costs its pushes plus one
/// scan of the summary words it spans — several times cheaper than a binary heap per
/// operation. The summary makes "the next member after
/// `p`" cheap however far it is.
#[derive(Clone, Default)]
pub(super) struct PosQueue {
    bits: Vec<u64>,
    /// Bit `w` set iff `bits[w] != 0`.
    summary: Vec<u64>,
    len: usize,
    /// No bit is set in a word before this one.
    cursor: usize,
}

impl PosQueue {
    /// Empty, for positions below `n`.
    pub fn reset(&mut self, n: usize) {
        self.bits.clear();
        self.bits.resize(n.div_ceil(64), 0);
        self.summary.clear();
        self.summary.resize(n.div_ceil(64 * 64), 0);
        self.len = 0;
        self.cursor = 0;
    }

    /// Empty the queue (scans from the cursor to the last member).
    pub fn clear(&mut self) {
        while self.len > 0 {
            self.pop();
        }
        self.cursor = 0;
    }

    pub fn len(&self) -> usize {
        self.len
    }

    /// Insert `p`, which must not be in the queue already.
    pub fn push(&mut self, p: u32) {
        let (w, b) = (p as usize / 64, p % 64);
        debug_assert!(self.bits[w] & (1 << b) == 0, "position queued twice");
        self.bits[w] |= 1 << b;
        self.summary[w / 64] |= 1 << (w % 64);
        self.len += 1;
        self.cursor = self.cursor.min(w);
    }

    /// The smallest position, without removing it.
    pub fn peek(&mut self) -> Option<u32> {
        if self.len == 0 {
            return None;
        }
        if self.bits[self.cursor] == 0 {
            // Jump to the next non-empty word through the summary: a sweep's members can
            // lie far apart (a label reaching a loop exit at the end of a deep nest), and
            // a word-by-word scan made each such sweep linear in the function.
            let w = self.cursor + 1;
            let mut sw = w / 64;
            let mut m = self.summary[sw] & (!0u64 << (w % 64));
            while m == 0 {
                sw += 1;
                m = self.summary[sw];
            }
            self.cursor = sw * 64 + m.trailing_zeros() as usize;
        }
        let w = self.bits[self.cursor];
        Some((self.cursor * 64) as u32 + w.trailing_zeros())
    }

    /// Remove and return the smallest position.
    pub fn pop(&mut self) -> Option<u32> {
        let p = self.peek()?;
        let w = self.cursor;
        self.bits[w] &= self.bits[w] - 1;
        if self.bits[w] == 0 {
            self.summary[w / 64] &= !(1 << (w % 64));
        }
        self.len -= 1;
        Some(p)
    }

    /// The smallest member greater than `p`, if any.
    pub fn next_after(&self, p: u32) -> Option<u32> {
        let (w, b) = (p as usize / 64, p % 64);
        let rest = if b == 63 {
            0
        } else {
            self.bits[w] & (!0u64 << (b + 1))
        };
        if rest != 0 {
            return Some((w * 64) as u32 + rest.trailing_zeros());
        }
        // The next non-empty word, through the summary.
        let w = w + 1;
        let (mut sw, sb) = (w / 64, w % 64);
        if sw >= self.summary.len() {
            return None;
        }
        let mut m = self.summary[sw] & (!0u64 << sb);
        while m == 0 {
            sw += 1;
            if sw >= self.summary.len() {
                return None;
            }
            m = self.summary[sw];
        }
        let w = sw * 64 + m.trailing_zeros() as usize;
        Some((w * 64) as u32 + self.bits[w].trailing_zeros())
    }
}

#[cfg(test)]
mod tests {
    use super::PosQueue;
    use std::collections::BTreeSet;

    #[test]
    fn pos_queue_agrees_with_an_ordered_set() {
        let n = 10_000u32;
        let mut q = PosQueue::default();
        q.reset(n as usize);
        let mut set = BTreeSet::new();
        let mut x = 0x2545_f491_4f6c_dd1du64;
        for step in 0..20_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let p = (x % u64::from(n)) as u32;
            if step % 3 != 0 {
                if set.insert(p) {
                    q.push(p);
                }
            } else {
                assert_eq!(q.pop(), set.pop_first(), "pop at step {step}");
            }
            assert_eq!(q.len(), set.len());
            assert_eq!(
                q.next_after(p),
                set.range(p + 1..).next().copied(),
                "after {p}"
            );
            if let Some(&first) = set.first() {
                assert_eq!(q.peek(), Some(first));
            }
        }
        q.clear();
        assert_eq!(q.peek(), None);
        assert_eq!(q.next_after(0), None);
    }
}
