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
//! Built with an explicit stack: O(blocks + edges + loop exits).

use crate::cfg::Cfg;
use crate::loops::LoopInfo;
use cranelift_entity::EntityRef;
use gyre_ir::Block;

/// No position: the block is unreachable.
pub(super) const NO_POS: u32 = u32::MAX;

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

    pub fn compute(&mut self, cfg: &Cfg, li: &LoopInfo) {
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
        if !li.irreducible_cycles().is_empty() {
            let adj = crate::tree::Adj {
                ranges: &self.gp_range,
                targets: &self.gp,
            };
            let on_cycle = &mut self.on_cycle;
            self.scc.run(
                nb + nl,
                [Block::from_u32(root)],
                adj,
                |_, _| true,
                |members, _| {
                    if members.len() > 1 {
                        for m in members {
                            if m.index() < nb {
                                on_cycle[m.index()] = true;
                            }
                        }
                    }
                },
            );
        }
        self.compute_reaches_merge(cfg, li, nb);
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

/// A min-priority queue of positions in the order, as a bitset: pushing is setting a
/// bit, popping the minimum is a forward scan from a cursor that only moves back when a
/// smaller position is pushed (an edge going backwards, in irreducible cycles only). A
/// label sweep moves forward, so a whole propagation costs its pushes plus one scan of
/// the words it spans — several times cheaper than a binary heap per operation.
#[derive(Clone, Default)]
pub(super) struct PosQueue {
    bits: Vec<u64>,
    len: usize,
    /// No bit is set in a word before this one.
    cursor: usize,
}

impl PosQueue {
    /// Empty, for positions below `n`.
    pub fn reset(&mut self, n: usize) {
        self.bits.clear();
        self.bits.resize(n.div_ceil(64), 0);
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
        self.len += 1;
        self.cursor = self.cursor.min(w);
    }

    /// The smallest position, without removing it.
    pub fn peek(&mut self) -> Option<u32> {
        if self.len == 0 {
            return None;
        }
        while self.bits[self.cursor] == 0 {
            self.cursor += 1;
        }
        let w = self.bits[self.cursor];
        Some((self.cursor * 64) as u32 + w.trailing_zeros())
    }

    /// Remove and return the smallest position.
    pub fn pop(&mut self) -> Option<u32> {
        let p = self.peek()?;
        self.bits[self.cursor] &= self.bits[self.cursor] - 1;
        self.len -= 1;
        Some(p)
    }
}
