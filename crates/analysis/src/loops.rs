//! Natural loops with LLVM's definition, and the irreducible cycles that are not loops.
//!
//! A **loop** is identified by its header `h`: a block with at least one back edge
//! `p -> h` (an edge whose target dominates its source). The loop is `h` plus every block
//! that reaches a latch `p` without passing through `h`; all back edges into `h` belong to
//! one loop (shared/reference/llvm-loop-terminology.rst). Loops nest into a forest.
//!
//! **Algorithm** (LLVM's `LoopInfoBase::analyze`, "discover and build"): headers are visited
//! in post-order, so inner loops are found before the loops around them; from the latches a
//! backward walk claims every unclaimed block for the new loop, and when it meets a block
//! already in a loop it jumps to the outermost loop found so far around it (union-find with
//! path halving), makes that loop a child of the new one and continues from the
//! predecessors of the child's header (the child's latches lead back to the new loop
//! through the union-find). Each block is claimed once and each loop adopted once:
//! O(m α(n)) after the dominator tree. A second phase lays the blocks of every loop out
//! contiguously in one array (a loop's range contains its subloops' ranges), so membership
//! is O(1): `contains(l, b)` compares the range of `b`'s innermost loop with `l`'s.
//!
//! **Cost.** Only the targets of retreating edges can be headers; the `Cfg`'s RPO DFS lists
//! them in post-order, so the predecessors of other blocks are read only by the backward
//! walks. Back edges are recognised with the dominator tree's preorder intervals; unreachable
//! blocks carry their own mark in the innermost-loop array (one sequential pass), so the
//! walks test no reachability per edge. A walk classifies a predecessor when it meets it and
//! claims a free one at once, so a block is pushed at most once per walk: the stack is a
//! preallocated slice with a cursor (no capacity check), popping looks at nothing but the
//! predecessors, and blocks already claimed or unreachable are never pushed. Each loop's
//! own-block count, size and child count are kept in its record during discovery (no side
//! arrays); the per-loop and per-block arrays are locals and slices, so the hot loops keep
//! their lengths in registers. All loop data live in flat arrays (one record per loop with
//! ranges into shared block, child and latch arrays): no per-loop allocation. Phase 2 is one
//! sweep over the loops by descending id (headers in RPO, parents before children) plus one
//! RPO sweep to place the blocks. About 185 instructions per block on `nest3-seq` (a loop
//! per two blocks), 205 on `deep-nest`, 110 on `random-reducible`. Beyond the L2 (from ~30k
//! blocks) `random-reducible` costs about twice its small-graph time, all of it in the walks:
//! each step's next block depends on the loads and the hard-to-predict tests of the last one.
//! Measured without gain there: prefetching the next headers' data, a FIFO walk, branch-free
//! claims, a packed per-block record (innermost loop, RPO number, predecessor range), all
//! latch lists computed before the walks, and storing each loop's entering predecessors.
//!
//! **Orders** (all independent of predecessor order — "stable" LoopInfo):
//! - loop ids follow the post-order of headers: every loop's id is smaller than its
//!   parent's, so iterating [`LoopInfo::loops`] visits inner loops first;
//! - [`LoopInfo::top_level`] and [`LoopInfo::children`] are in reverse post-order of their
//!   headers (program order);
//! - [`LoopInfo::blocks`] starts with the header, then the loop's own blocks (those not in a
//!   subloop) in RPO, then each child's blocks in child order;
//! - latches, exits and loop predecessors are in RPO of the blocks involved.
//!
//! **Irreducible control flow**: a cycle with more than one entry is not a loop. After
//! removing every back edge, the reachable CFG is acyclic iff it is reducible; each
//! remaining non-trivial strongly connected component is reported as an
//! [`IrreducibleCycle`], and the innermost loop around it (and every loop around that) is
//! flagged ([`LoopInfo::contains_irreducible`]) so that passes can skip it. Loops inside an
//! irreducible region are still found. Unreachable blocks are in no loop.

use crate::cfg::Cfg;
use crate::domtree::DomTree;
use crate::scc::Scc;
use bitvec::vec::BitVec;
use cranelift_entity::packed_option::PackedOption;
use cranelift_entity::{entity_impl, EntityRef};
use gyre_ir::{Block, Function, ValueDef};
use std::collections::BTreeMap;

/// Marks a reachable block in no loop in `LoopInfo::innermost`.
const NO_LOOP: u32 = u32::MAX;

/// Marks an unreachable block (in no loop) in `LoopInfo::innermost`.
const DEAD: u32 = u32::MAX - 1;

/// [`Cfg::rpo_numbers`] of an unreachable block.
const UNREACHABLE: u32 = u32::MAX;

/// A natural loop, identified by its header.
#[derive(Copy, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Loop(u32);
entity_impl!(Loop, "loop");

#[derive(Clone, Debug)]
struct LoopData {
    header: Block,
    parent: PackedOption<Loop>,
    depth: u32,
    /// Range into `LoopInfo::blocks`. During discovery: the number of blocks whose
    /// innermost loop this is, and the number of all its blocks.
    blocks: [u32; 2],
    /// Range into `LoopInfo::children`. During discovery: the number of children, twice.
    children: [u32; 2],
    /// Range into `LoopInfo::latches`.
    latches: [u32; 2],
    irreducible: bool,
    /// Exactly one back edge (one CFG edge, not one latch block) enters the header.
    one_back_edge: bool,
    /// Removed by [`LoopInfo::remove_loop`]: no blocks, children or latches any more.
    removed: bool,
}

/// A strongly connected region with several entries (so no header dominates it).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IrreducibleCycle {
    /// Blocks of the region with a predecessor outside it (at least two), in RPO.
    pub entries: Vec<Block>,
    /// All blocks of the region, in RPO.
    pub blocks: Vec<Block>,
    /// The innermost loop containing the whole region, if any.
    pub parent: Option<Loop>,
}

/// The loop forest of a function.
#[derive(Clone, Default)]
pub struct LoopInfo {
    /// Indexed by loop id (`Loop::index`).
    loops: Vec<LoopData>,
    /// Per block index: the innermost loop's id, or `NO_LOOP` / `DEAD` (unreachable).
    innermost: Vec<u32>,
    blocks: Vec<Block>,
    children: Vec<Loop>,
    /// The outermost loops, with [`TOMBSTONE`]s where loops were removed (compacted when
    /// they are half of it, so that removing many outermost loops stays linear).
    top_level: Vec<Loop>,
    /// Tombstones in `top_level`.
    top_dead: usize,
    /// Per loop id: its index in `top_level` when it is outermost (a hint, checked before
    /// use), so that replacing an outermost loop does not scan the list: a scan per
    /// unswitched nest made a function with many nests quadratic.
    top_at: Vec<u32>,
    latches: Vec<Block>,
    irreducible: Vec<IrreducibleCycle>,
    // Scratch, reused across runs.
    /// Union-find over loop ids (discovery), then each loop's next own-block slot (build).
    uf: Vec<u32>,
    /// The walk's stack; never shrinks below the number of blocks.
    stack: Vec<Block>,
    /// Per loop: where the block range of its next child starts (build).
    next_child: Vec<u32>,
    num_children: u32,
    scc: Scc,
    components: Vec<Vec<Block>>,
    marks: BitVec,
    /// Per block: in an irreducible cycle (empty when there is none).
    in_irreducible: BitVec,
    /// Blocks added by [`LoopInfo::add_block`] since the last computation, keyed by the
    /// start of the block range of the loop they were added to (so that the entries of a
    /// loop and of all its subloops form one key range).
    added: BTreeMap<u32, Vec<Block>>,
    /// Per block: its index in the region of [`LoopInfo::replace_nest`] (scratch, reset
    /// after each call).
    region_ix: Vec<u32>,
    /// Scratch of [`LoopInfo::replace_nest`], kept so that a call allocates nothing once
    /// the buffers have grown.
    nest: NestScratch,
    /// Per position of `blocks`: where the range of a removed loop all of whose blocks
    /// were removed, starting there, ends (0: none), so that iterating a loop around it
    /// jumps over it instead of walking its dead blocks (empty until a loop is removed).
    skip: Vec<u32>,
    valid: bool,
}

/// A loop found by [`LoopInfo::replace_nest`], before it gets its id.
#[derive(Clone, Copy)]
struct NewLoop {
    header: Block,
    /// Index in the found loops, or `u32::MAX`.
    parent: u32,
    own: u32,
    size: u32,
    kids: u32,
    /// Its latches: a range of `NestScratch::latches`.
    latches: [u32; 2],
    one_back_edge: bool,
}

/// The buffers of [`LoopInfo::replace_nest`] (all cleared before use).
#[derive(Clone, Default)]
struct NestScratch {
    ids: Vec<u32>,
    work: Vec<Loop>,
    /// Per region block: 0 new, 1 on the stack, 2 done.
    state: Vec<u8>,
    post: Vec<u32>,
    back: Vec<(u32, Block)>,
    /// Per region block: its range in the sorted `back` (its back edges as a header).
    back_at: Vec<[u32; 2]>,
    stack: Vec<(u32, u32)>,
    rpo_of: Vec<u32>,
    found: Vec<NewLoop>,
    latches: Vec<Block>,
    loop_of: Vec<u32>,
    uf: Vec<u32>,
    walk: Vec<u32>,
    todo: Vec<u32>,
    keys: Vec<u32>,
    next_own: Vec<u32>,
    next_child: Vec<u32>,
    child_at: Vec<u32>,
    new_top: Vec<Loop>,
}

/// Record that the outermost loop `l` is at index `at` of the top-level list.
/// The first added-block list at or after `pos` and before `end` (its key and blocks),
/// jumping over the ranges of removed nests (`skip`), whose lists hold removed blocks only:
/// deleting a deep nest level by level would otherwise walk every inner level's list again
/// at each level.
fn next_added<'a>(
    added: &'a BTreeMap<u32, Vec<Block>>,
    skip: &[u32],
    mut pos: u32,
    end: u32,
) -> Option<(u32, &'a Vec<Block>)> {
    while pos < end {
        let (&key, list) = added.range(pos..end).next()?;
        match skip.get(key as usize) {
            Some(&to) if to != 0 && to > key => pos = to,
            _ => return Some((key, list)),
        }
    }
    None
}

/// What a removed outermost loop leaves in [`LoopInfo`]'s list of them.
const TOMBSTONE: Loop = Loop(u32::MAX);

/// The outermost loops of a function in program order ([`LoopInfo::top_level`]): a view
/// that skips the places of removed loops.
#[derive(Copy, Clone, Debug)]
pub struct TopLevel<'a> {
    list: &'a [Loop],
    live: usize,
}

impl<'a> TopLevel<'a> {
    /// The loops, in program order.
    pub fn iter(&self) -> TopLevelIter<'a> {
        self.list.iter().filter(is_live)
    }

    /// How many there are.
    pub fn len(&self) -> usize {
        self.live
    }

    /// Are there none?
    pub fn is_empty(&self) -> bool {
        self.live == 0
    }

    /// The first, if any.
    pub fn first(&self) -> Option<Loop> {
        self.iter().next().copied()
    }

    /// Is `l` one of them?
    pub fn contains(&self, l: &Loop) -> bool {
        *l != TOMBSTONE && self.list.contains(l)
    }

    /// The loops in a vector.
    pub fn to_vec(&self) -> Vec<Loop> {
        self.iter().copied().collect()
    }
}

fn is_live(l: &&Loop) -> bool {
    **l != TOMBSTONE
}

/// The iterator of [`TopLevel::iter`].
pub type TopLevelIter<'a> = core::iter::Filter<core::slice::Iter<'a, Loop>, fn(&&Loop) -> bool>;

impl<'a> IntoIterator for TopLevel<'a> {
    type Item = &'a Loop;
    type IntoIter = TopLevelIter<'a>;
    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

impl PartialEq for TopLevel<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.iter().eq(other.iter())
    }
}

fn set_top_at(top_at: &mut Vec<u32>, l: Loop, at: usize) {
    if top_at.len() <= l.index() {
        top_at.resize(l.index() + 1, u32::MAX);
    }
    top_at[l.index()] = at as u32;
}

impl LoopInfo {
    /// An empty, invalid loop forest.
    pub fn new() -> LoopInfo {
        LoopInfo::default()
    }

    /// Compute the loops of `func`.
    pub fn with_function(func: &Function, cfg: &Cfg, domtree: &DomTree) -> LoopInfo {
        let mut li = LoopInfo::new();
        li.compute(func, cfg, domtree);
        li
    }

    /// Forget all loops (keeps the buffers).
    pub fn clear(&mut self) {
        self.loops.clear();
        self.innermost.clear();
        self.blocks.clear();
        self.children.clear();
        self.top_level.clear();
        self.top_dead = 0;
        self.top_at.clear();
        self.latches.clear();
        self.irreducible.clear();
        self.in_irreducible.clear();
        self.added.clear();
        self.skip.clear();
        self.valid = false;
    }

    /// Has `compute` run since the last `clear`?
    pub fn is_valid(&self) -> bool {
        self.valid
    }

    /// Recompute from scratch, reusing buffers.
    pub fn compute(&mut self, func: &Function, cfg: &Cfg, dt: &DomTree) {
        debug_assert!(cfg.is_valid() && cfg.is_order_valid() && dt.is_valid());
        let _ = func;
        self.clear();
        // Unreachable blocks get their own mark so that the backward walks need no
        // reachability test per edge (one sequential pass, as cheap as a fill).
        self.innermost.extend(cfg.rpo_numbers().iter().map(|&r| {
            if r == UNREACHABLE {
                DEAD
            } else {
                NO_LOOP
            }
        }));
        let irreducible = self.discover(cfg, dt);
        self.build(cfg);
        if irreducible {
            self.find_irreducible(cfg, dt);
        }
        self.valid = true;
    }

    /// Phase 1: find loops, their nesting, their latches (in RPO), and per loop the
    /// number of blocks whose innermost loop it is, its size and its number of children.
    /// Returns whether a retreating edge that is not a back edge was seen (the CFG is
    /// irreducible).
    fn discover(&mut self, cfg: &Cfg, dt: &DomTree) -> bool {
        let mut irreducible = false;
        let nodes = &dt.tree_ref().nodes[..];
        let rpo_number = cfg.rpo_numbers();
        // Only the targets of retreating edges can be headers (a dominator comes before
        // the blocks it dominates in RPO); the Cfg's DFS lists them in post-order.
        let headers = cfg.retreat_targets();
        let preds = cfg.pred_adj();
        let innermost = &mut self.innermost[..];
        let loops = &mut self.loops;
        let latches = &mut self.latches;
        loops.reserve(headers.len());
        self.uf.clear();
        self.uf.resize(headers.len(), 0);
        let uf = &mut self.uf[..];
        // A free block is claimed when it is pushed and a loop's header is pushed when the
        // loop is adopted (once), so a walk pushes each block at most once and never its
        // own header: `innermost.len()` slots suffice, and the stack is a plain slice with
        // a cursor (no capacity check per push).
        if self.stack.len() < innermost.len() {
            self.stack.resize(innermost.len(), Block::new(0));
        }
        let stack = &mut self.stack[..];
        let mut num_children = 0;
        for &h in headers {
            let rh = rpo_number[h.index()];
            let nh = nodes[h.index()];
            let latch_start = latches.len();
            for &p in preds.edges(h.index()) {
                let rp = rpo_number[p.index()];
                if rp < rh || rp == UNREACHABLE {
                    continue;
                }
                // `h` dominates `p` iff `p`'s preorder number is in `h`'s range.
                let pp = nodes[p.index()].pre;
                if nh.pre <= pp && pp <= nh.last {
                    latches.push(p);
                } else {
                    irreducible = true;
                }
            }
            // Back edges are counted with multiplicity before the latches are deduplicated:
            // a latch whose terminator reaches the header twice is two back edges.
            let one_back_edge = latches.len() - latch_start == 1;
            match latches.len() - latch_start {
                0 => continue,
                1 => {}
                _ => {
                    latches[latch_start..].sort_unstable_by_key(|b| rpo_number[b.index()]);
                    let mut w = latch_start + 1;
                    for r in latch_start + 1..latches.len() {
                        if latches[r] != latches[w - 1] {
                            latches[w] = latches[r];
                            w += 1;
                        }
                    }
                    latches.truncate(w);
                }
            }
            let l = Loop::new(loops.len());
            let lu = l.as_u32();
            uf[l.index()] = lu;
            innermost[h.index()] = lu;
            let (mut own, mut subtree, mut kids) = (1u32, 0u32, 0u32);
            // Backward walk from the latches. Each predecessor is classified when met: a
            // free block is claimed and pushed; a block of a loop found earlier leads to
            // the outermost loop around it so far, which becomes a child and whose header
            // is pushed, so that the walk goes on from the header's predecessors (those
            // inside the child resolve to this loop through `find`); blocks of this loop
            // and unreachable ones are skipped.
            let mut sp = 0;
            let mut todo = &latches[latch_start..];
            loop {
                for &p in todo {
                    let m = innermost[p.index()];
                    if m == NO_LOOP {
                        innermost[p.index()] = lu;
                        own += 1;
                        stack[sp] = p;
                        sp += 1;
                    } else if m != lu && m != DEAD {
                        let top = find(uf, m);
                        if top != lu {
                            uf[top as usize] = lu;
                            let sub = &mut loops[top as usize];
                            sub.parent = l.into();
                            subtree += sub.blocks[1];
                            kids += 1;
                            stack[sp] = sub.header;
                            sp += 1;
                        }
                    }
                }
                if sp == 0 {
                    break;
                }
                sp -= 1;
                todo = preds.edges(stack[sp].index());
            }
            num_children += kids;
            loops.push(LoopData {
                header: h,
                parent: None.into(),
                depth: 0,
                blocks: [own, own + subtree],
                children: [kids, kids],
                latches: [latch_start as u32, latches.len() as u32],
                irreducible: false,
                one_back_edge,
                removed: false,
            });
        }
        self.num_children = num_children;
        irreducible
    }

    /// Phase 2: child lists, contiguous block ranges, depths. One sweep over the loops by
    /// descending id (a child's id is below its parent's, and descending ids are headers
    /// in RPO) and one over the blocks in RPO; child counts and sizes come from discovery.
    fn build(&mut self, cfg: &Cfg) {
        let loops = &mut self.loops[..];
        if loops.is_empty() {
            return;
        }
        let children = &mut self.children;
        children.resize(self.num_children as usize, Loop::new(0));
        // Per loop: where its own blocks go next, then (`next_child`) where the block
        // range of its next child starts. `uf` is free again after discovery.
        let next_own = &mut self.uf[..loops.len()];
        self.next_child.resize(loops.len(), 0);
        let next_child = &mut self.next_child[..loops.len()];
        // Parents first, siblings in program order: take a child list range, append to
        // the parent's child list, take the next block range of the parent (after its own
        // blocks and its earlier children).
        let mut pos = 0u32;
        let mut child_off = 0u32;
        for i in (0..loops.len()).rev() {
            let [own, size] = loops[i].blocks;
            let kids = loops[i].children[1];
            let (start, depth) = match loops[i].parent.expand() {
                Some(p) => {
                    let pd = &mut loops[p.index()];
                    children[pd.children[1] as usize] = Loop::new(i);
                    pd.children[1] += 1;
                    let start = next_child[p.index()];
                    next_child[p.index()] = start + size;
                    (start, pd.depth + 1)
                }
                None => {
                    set_top_at(&mut self.top_at, Loop::new(i), self.top_level.len());
                    self.top_level.push(Loop::new(i));
                    pos += size;
                    (pos - size, 1)
                }
            };
            let d = &mut loops[i];
            d.blocks = [start, start + size];
            d.depth = depth;
            d.children = [child_off, child_off];
            child_off += kids;
            next_own[i] = start;
            next_child[i] = start + own;
        }
        self.blocks.resize(pos as usize, Block::new(0));
        let blocks = &mut self.blocks[..];
        let innermost = &self.innermost[..];
        for &b in cfg.rpo() {
            let l = innermost[b.index()];
            if l < DEAD {
                let slot = &mut next_own[l as usize];
                blocks[*slot as usize] = b;
                *slot += 1;
            }
        }
    }

    /// Phase 3 (only for irreducible CFGs): SCCs of the reachable CFG without back edges.
    fn find_irreducible(&mut self, cfg: &Cfg, dt: &DomTree) {
        let n = cfg.num_block_slots();
        let mut comps = core::mem::take(&mut self.components);
        comps.clear();
        self.scc.run(
            n,
            cfg.rpo().iter().copied(),
            cfg.succ_adj(),
            |from, to| dt.is_reachable(to) && !dt.dominates(to, from),
            |members, _| {
                if members.len() > 1 {
                    comps.push(members.to_vec());
                }
            },
        );
        self.marks.clear();
        self.marks.resize(n, false);
        for comp in comps.iter_mut() {
            comp.sort_unstable_by_key(|&b| cfg.rpo_number(b));
            for &b in comp.iter() {
                self.marks.set(b.index(), true);
            }
            let entries = comp
                .iter()
                .copied()
                .filter(|&b| {
                    cfg.preds(b)
                        .iter()
                        .any(|&p| dt.is_reachable(p) && !self.marks[p.index()])
                })
                .collect();
            let mut parent = self.innermost_loop(comp[0]);
            for &b in &comp[1..] {
                parent = self.common_loop(parent, self.innermost_loop(b));
            }
            let mut up = parent;
            while let Some(l) = up {
                let d = &mut self.loops[l.index()];
                d.irreducible = true;
                up = d.parent.expand();
            }
            if self.in_irreducible.is_empty() {
                self.in_irreducible.resize(n, false);
            }
            for &b in comp.iter() {
                self.marks.set(b.index(), false);
                self.in_irreducible.set(b.index(), true);
            }
            self.irreducible.push(IrreducibleCycle {
                entries,
                blocks: core::mem::take(comp),
                parent,
            });
        }
        self.components = comps;
    }

    /// The innermost loop containing both (`None` = no loop).
    fn common_loop(&self, a: Option<Loop>, b: Option<Loop>) -> Option<Loop> {
        let (mut a, mut b) = (a?, b?);
        while self.data(a).depth > self.data(b).depth {
            a = self.data(a).parent.expand()?;
        }
        while self.data(b).depth > self.data(a).depth {
            b = self.data(b).parent.expand()?;
        }
        while a != b {
            a = self.data(a).parent.expand()?;
            b = self.data(b).parent.expand()?;
        }
        Some(a)
    }

    #[inline]
    fn data(&self, l: Loop) -> &LoopData {
        &self.loops[l.index()]
    }

    // ---- Queries -----------------------------------------------------------------------

    /// Number of loop ids: the loops of the last computation, those removed since by
    /// [`LoopInfo::remove_loop`] included (ids stay stable, so arrays indexed by loop id
    /// are sized by this).
    pub fn num_loops(&self) -> usize {
        self.loops.len()
    }

    /// All loops, inner loops before the loops containing them (removed loops skipped).
    pub fn loops(&self) -> impl DoubleEndedIterator<Item = Loop> + '_ {
        (0..self.loops.len())
            .filter(|&i| !self.loops[i].removed)
            .map(Loop::new)
    }

    /// Has `l` been removed by [`LoopInfo::remove_loop`] since the computation?
    pub fn is_removed(&self, l: Loop) -> bool {
        self.data(l).removed
    }

    /// Outermost loops in program order (RPO of headers).
    pub fn top_level(&self) -> TopLevel<'_> {
        TopLevel {
            list: &self.top_level,
            live: self.top_level.len() - self.top_dead,
        }
    }

    /// The header of `l`.
    #[inline]
    pub fn header(&self, l: Loop) -> Block {
        self.data(l).header
    }

    /// The loop containing `l` directly.
    #[inline]
    pub fn parent(&self, l: Loop) -> Option<Loop> {
        self.data(l).parent.expand()
    }

    /// Direct subloops of `l` in program order.
    #[inline]
    pub fn children(&self, l: Loop) -> &[Loop] {
        let [a, b] = self.data(l).children;
        &self.children[a as usize..b as usize]
    }

    /// Nesting depth: 1 for an outermost loop.
    #[inline]
    pub fn depth(&self, l: Loop) -> u32 {
        self.data(l).depth
    }

    /// Every block of `l` (subloops included): the header first, see the module doc;
    /// blocks added since the computation ([`LoopInfo::add_block`]) come last, in order
    /// of addition per loop.
    pub fn blocks(&self, l: Loop) -> LoopBlocks<'_> {
        let [a, b] = self.data(l).blocks;
        LoopBlocks {
            blocks: &self.blocks,
            pos: a as usize,
            end: b as usize,
            skip: &self.skip,
            added: &self.added,
            added_pos: a,
            current: [].iter(),
            innermost: &self.innermost,
        }
    }

    /// Append the blocks of `l` that are in no subloop (its own blocks, header first) to
    /// `out`. O(own blocks + subloops): each subloop's range is jumped over, not walked
    /// (unlike filtering [`LoopInfo::blocks`], which walks the whole nest).
    pub fn own_blocks(&self, l: Loop, out: &mut Vec<Block>) {
        let [a, b] = self.data(l).blocks;
        let me = l.as_u32();
        let mut k = a as usize;
        while k < b as usize {
            if let Some(&to) = self.skip.get(k).filter(|&&to| to != 0) {
                k = to as usize;
                continue;
            }
            let blk = self.blocks[k];
            let m = self.innermost.get(blk.index()).copied().unwrap_or(DEAD);
            if m == me {
                out.push(blk);
                k += 1;
            } else if m >= DEAD {
                k += 1;
            } else {
                // A block of a subloop: jump past the child of `l` containing it.
                let mut c = Loop::from_u32(m);
                while let Some(p) = self.parent(c).filter(|&p| p != l) {
                    c = p;
                }
                let end = self.data(c).blocks[1] as usize;
                k = if end > k { end } else { k + 1 };
            }
        }
        if let Some(list) = self.added.get(&a) {
            out.extend(
                list.iter()
                    .copied()
                    .filter(|blk| self.innermost[blk.index()] == me),
            );
        }
    }

    /// Number of blocks of `l` (subloops included). O(blocks of `l`).
    pub fn num_blocks(&self, l: Loop) -> usize {
        self.blocks(l).count()
    }

    // ---- Incremental updates ------------------------------------------------------------
    //
    // For loop passes that keep the forest current instead of having it recomputed (LLVM's
    // `LoopInfo::addBasicBlockToLoop`, `Loop::moveToHeader`). Each is O(1) or linear in
    // the blocks of one loop not in a subloop, so that a pass visiting every loop once
    // stays linear.

    /// `block` (new, or in no loop so far) now belongs to `l` and every loop around it
    /// (`None`: to no loop). It is listed by [`LoopInfo::blocks`] after the computed
    /// blocks. O(log of the number of loops given blocks).
    pub fn add_block(&mut self, block: Block, l: Option<Loop>) {
        let i = block.index();
        if self.innermost.len() <= i {
            self.innermost.resize(i + 1, DEAD);
        }
        match l {
            Some(l) => {
                self.innermost[i] = l.as_u32();
                let start = self.data(l).blocks[0];
                self.added.entry(start).or_default().push(block);
            }
            None => self.innermost[i] = NO_LOOP,
        }
    }

    /// The header of `l` is now `header`, one of the blocks of `l` outside its subloops,
    /// and its only latch is `latch` (loop rotation). The header moves to the front of
    /// [`LoopInfo::blocks`]. O(blocks of `l` outside subloops). Returns `false` (and
    /// changes nothing) if `header` is not such a block of `l` or `l` has not exactly one
    /// latch entry.
    pub fn set_header_and_latch(&mut self, l: Loop, header: Block, latch: Block) -> bool {
        if self.innermost_loop(header) != Some(l) || !self.contains(l, latch) {
            return false;
        }
        let [la, lb] = self.data(l).latches;
        if lb != la + 1 {
            return false;
        }
        let [a, b] = self.data(l).blocks;
        let (a, b) = (a as usize, b as usize);
        let old = self.data(l).header;
        if header != old {
            match self.blocks[a..b].iter().position(|&x| x == header) {
                Some(k) => self.blocks.swap(a, a + k),
                None => {
                    // Added after the computation: it takes the header's place.
                    let start = a as u32;
                    let Some(list) = self.added.get_mut(&start) else {
                        return false;
                    };
                    let Some(k) = list.iter().position(|&x| x == header) else {
                        return false;
                    };
                    list[k] = old;
                    self.blocks[a] = header;
                }
            }
        }
        self.latches[la as usize] = latch;
        let d = &mut self.loops[l.index()];
        d.header = header;
        d.one_back_edge = true;
        true
    }

    /// Replace the outermost loop `old` and every loop nested in it by the loops of
    /// `region`, found afresh (LLVM's loop passes rebuild the loops of a cloned nest the
    /// same way: `rebuildLoopAfterUnswitch`). For passes that change one nest (clone it,
    /// fold its branches) and keep the rest of the forest: O(size of the region), nothing
    /// proportional to the function.
    ///
    /// `region` lists, once each, every reachable block of the new nest area: the blocks
    /// `old` had that are still laid out, and the new blocks in or around the loops that
    /// replace it; no block of another loop. Its CFG must be reducible (a clone of a
    /// reducible nest with branches folded is) and `cfg`'s edges current (its order may
    /// be stale): back edges are then the retreating edges of a depth-first search from
    /// the blocks entered from outside the region, so no dominator tree is needed.
    ///
    /// The new loops take the ids of the old ones (inner loops still numbered before the
    /// loops around them) plus fresh ids; their blocks are listed in a new range (the old
    /// one is left unused). Returns `false`, changing nothing, when that is not possible:
    /// `old` is not outermost, holds an irreducible cycle, or the region has fewer loops
    /// than the nest had (ids would be left over); the caller recomputes instead.
    pub fn replace_nest(&mut self, cfg: &Cfg, old: Loop, region: &[Block]) -> bool {
        if self.data(old).parent.is_some() || self.data(old).irreducible {
            return false;
        }
        let mut sc = core::mem::take(&mut self.nest);
        let done = self.replace_nest_with(cfg, old, region, &mut sc);
        self.nest = sc;
        done
    }

    /// [`LoopInfo::replace_nest`] with its buffers.
    fn replace_nest_with(
        &mut self,
        cfg: &Cfg,
        old: Loop,
        region: &[Block],
        sc: &mut NestScratch,
    ) -> bool {
        const NONE: u32 = u32::MAX;
        // The ids of the old nest, ascending.
        let ids = &mut sc.ids;
        ids.clear();
        sc.work.clear();
        sc.work.push(old);
        while let Some(l) = sc.work.pop() {
            ids.push(l.as_u32());
            sc.work.extend_from_slice(self.children(l));
        }
        ids.sort_unstable();
        // Region index per block (a scratch array reset before returning).
        let max = region.iter().map(|b| b.index() + 1).max().unwrap_or(0);
        let nslots = max.max(cfg.num_block_slots());
        if self.region_ix.len() < nslots {
            self.region_ix.resize(nslots, NONE);
        }
        for (k, &b) in region.iter().enumerate() {
            self.region_ix[b.index()] = k as u32;
        }
        let ix = |s: &Self, b: Block| s.region_ix.get(b.index()).copied().unwrap_or(NONE);
        let n = region.len();
        // Depth-first search from the blocks entered from outside: post-order, and the
        // retreating (back) edges per target, counted per edge.
        let state = &mut sc.state;
        state.clear();
        state.resize(n, 0);
        let post = &mut sc.post;
        post.clear();
        let back = &mut sc.back;
        back.clear();
        let stack = &mut sc.stack;
        stack.clear();
        let entered = |s: &Self, k: usize| cfg.preds(region[k]).iter().any(|&p| ix(s, p) == NONE);
        // Roots: the blocks entered from outside first, then every block.
        let roots = (0..n).filter(|&k| entered(self, k)).chain(0..n);
        for r in roots {
            if state[r] != 0 {
                continue;
            }
            state[r] = 1;
            stack.push((r as u32, 0));
            while let Some(&mut (k, ref mut next)) = stack.last_mut() {
                let succs = cfg.succs(region[k as usize]);
                match succs.get(*next as usize) {
                    Some(&s) => {
                        *next += 1;
                        let j = ix(self, s);
                        if j == NONE {
                            continue;
                        }
                        match state[j as usize] {
                            0 => {
                                state[j as usize] = 1;
                                stack.push((j, 0));
                            }
                            1 => back.push((j, region[k as usize])),
                            _ => {}
                        }
                    }
                    None => {
                        state[k as usize] = 2;
                        post.push(k);
                        stack.pop();
                    }
                }
            }
        }
        let rpo_of = &mut sc.rpo_of;
        rpo_of.clear();
        rpo_of.resize(n, 0);
        for (i, &k) in post.iter().rev().enumerate() {
            rpo_of[k as usize] = i as u32;
        }
        back.sort_unstable_by_key(|&(h, p)| (h, rpo_of[ix(self, p) as usize]));
        // Each header's range of back edges, found once (two binary searches per block
        // of the region cost more than the rest of the discovery).
        let back_at = &mut sc.back_at;
        back_at.clear();
        back_at.resize(n, [0, 0]);
        let mut e = 0;
        while e < back.len() {
            let h = back[e].0;
            let start = e;
            while e < back.len() && back[e].0 == h {
                e += 1;
            }
            back_at[h as usize] = [start as u32, e as u32];
        }
        // Discovery, headers in post-order (inner before outer), as in `discover`.
        let found = &mut sc.found;
        found.clear();
        sc.latches.clear();
        let loop_of = &mut sc.loop_of;
        loop_of.clear();
        loop_of.resize(n, NONE);
        let uf = &mut sc.uf;
        uf.clear();
        let walk = &mut sc.walk;
        let todo = &mut sc.todo;
        for &hk in post.iter() {
            let [lo, hi] = back_at[hk as usize];
            let (lo, hi) = (lo as usize, hi as usize);
            if lo == hi {
                continue;
            }
            let la = sc.latches.len();
            for &(_, p) in &back[lo..hi] {
                if sc.latches.len() == la || sc.latches.last() != Some(&p) {
                    sc.latches.push(p);
                }
            }
            let me = found.len() as u32;
            uf.push(me);
            loop_of[hk as usize] = me;
            let (mut own, mut size, mut kids) = (1u32, 1u32, 0u32);
            todo.clear();
            todo.extend(sc.latches[la..].iter().map(|&p| ix(self, p)));
            walk.clear();
            loop {
                for &k in todo.iter() {
                    let m = loop_of[k as usize];
                    if m == NONE {
                        loop_of[k as usize] = me;
                        own += 1;
                        size += 1;
                        walk.push(k);
                    } else if m != me {
                        let top = find(uf, m);
                        if top != me {
                            uf[top as usize] = me;
                            let sub = &mut found[top as usize];
                            sub.parent = me;
                            size += sub.size;
                            kids += 1;
                            walk.push(ix(self, sub.header));
                        }
                    }
                }
                let Some(k) = walk.pop() else {
                    break;
                };
                todo.clear();
                todo.extend(
                    cfg.preds(region[k as usize])
                        .iter()
                        .map(|&p| ix(self, p))
                        .filter(|&j| j != NONE),
                );
            }
            found.push(NewLoop {
                header: region[hk as usize],
                parent: NONE,
                own,
                size,
                kids,
                one_back_edge: hi - lo == 1,
                latches: [la as u32, sc.latches.len() as u32],
            });
        }
        let ids = &mut sc.ids;
        if found.len() < ids.len() {
            for &b in region {
                self.region_ix[b.index()] = NONE;
            }
            return false;
        }
        // Ids: the old ones ascending, then fresh ones; post-order keeps children first.
        while ids.len() < found.len() {
            ids.push(self.loops.len() as u32);
            self.loops.push(LoopData {
                header: region[0],
                parent: None.into(),
                depth: 0,
                blocks: [0, 0],
                children: [0, 0],
                latches: [0, 0],
                irreducible: false,
                one_back_edge: false,
                removed: false,
            });
        }
        // The blocks listed by the old nest's additions are in the region now.
        let [oa, ob] = self.data(old).blocks;
        sc.keys.clear();
        sc.keys.extend(self.added.range(oa..ob).map(|(&k, _)| k));
        for &k in &sc.keys {
            self.added.remove(&k);
        }
        // Layout as in `build`: parents first (descending local ids are headers in RPO).
        let base = self.blocks.len() as u32;
        let mut pos = base;
        let next_own = &mut sc.next_own;
        next_own.clear();
        next_own.resize(found.len(), 0);
        let next_child = &mut sc.next_child;
        next_child.clear();
        next_child.resize(found.len(), 0);
        let child_at = &mut sc.child_at;
        child_at.clear();
        child_at.resize(found.len(), 0);
        let new_top = &mut sc.new_top;
        new_top.clear();
        let child_base = self.children.len() as u32;
        let mut child_off = child_base;
        self.children.resize(
            (child_base + found.iter().map(|f| f.kids).sum::<u32>()) as usize,
            old,
        );
        for i in (0..found.len()).rev() {
            let f = &found[i];
            let id = ids[i];
            let (start, depth) = if f.parent == NONE {
                new_top.push(Loop::from_u32(id));
                pos += f.size;
                (pos - f.size, 1)
            } else {
                let p = f.parent as usize;
                self.children[child_at[p] as usize] = Loop::from_u32(id);
                child_at[p] += 1;
                let start = next_child[p];
                next_child[p] = start + f.size;
                (start, self.loops[ids[p] as usize].depth + 1)
            };
            let la = self.latches.len() as u32;
            let [fa, fb] = f.latches;
            self.latches
                .extend_from_slice(&sc.latches[fa as usize..fb as usize]);
            self.loops[id as usize] = LoopData {
                header: f.header,
                parent: if f.parent == NONE {
                    None.into()
                } else {
                    Some(Loop::from_u32(ids[f.parent as usize])).into()
                },
                depth,
                blocks: [start, start + f.size],
                children: [child_off, child_off + f.kids],
                latches: [la, la + (fb - fa)],
                irreducible: false,
                one_back_edge: f.one_back_edge,
                removed: false,
            };
            child_at[i] = child_off;
            child_off += f.kids;
            next_own[i] = start;
            next_child[i] = start + f.own;
        }
        self.blocks.resize(pos as usize, region[0]);
        if self.innermost.len() < nslots {
            self.innermost.resize(nslots, DEAD);
        }
        for &k in post.iter().rev() {
            let b = region[k as usize];
            let m = loop_of[k as usize];
            if m == NONE {
                self.innermost[b.index()] = NO_LOOP;
            } else {
                let slot = &mut next_own[m as usize];
                self.blocks[*slot as usize] = b;
                *slot += 1;
                self.innermost[b.index()] = ids[m as usize];
            }
        }
        for &b in region {
            self.region_ix[b.index()] = NONE;
        }
        // The new outermost loops (in program order) take the old one's place.
        if let Some(at) = self.top_position(old) {
            self.splice_top(at, new_top);
        } else {
            for &t in new_top.iter() {
                set_top_at(&mut self.top_at, t, self.top_level.len());
                self.top_level.push(t);
            }
        }
        true
    }

    /// The index of the outermost loop `l` in `top_level`: O(1) through its hint, which
    /// every change of the list keeps current; a scan only if it is stale.
    fn top_position(&self, l: Loop) -> Option<usize> {
        let hint = self.top_at.get(l.index()).map(|&k| k as usize);
        if let Some(k) = hint.filter(|&k| self.top_level.get(k) == Some(&l)) {
            return Some(k);
        }
        self.top_level.iter().position(|&t| t == l)
    }

    /// Replace `top_level[at]` by `with`, keeping the order and the hints: O(1) when one
    /// loop replaces one (an unswitched inner loop rebuilt with its nest) or none (a
    /// deleted loop leaves a tombstone; amortized, as the list is compacted when half of
    /// it is tombstones), otherwise the list's tail moves (a memmove and one hint each).
    fn splice_top(&mut self, at: usize, with: &[Loop]) {
        if with.len() == 1 {
            self.top_level[at] = with[0];
            set_top_at(&mut self.top_at, with[0], at);
            return;
        }
        if with.is_empty() {
            self.top_level[at] = TOMBSTONE;
            self.top_dead += 1;
            if 2 * self.top_dead > self.top_level.len() {
                self.compact_top();
            }
            return;
        }
        self.top_level.splice(at..=at, with.iter().copied());
        for k in at..self.top_level.len() {
            // A tombstone has no hint (its id is `u32::MAX`: a hint for it would size
            // the hint array to 2^32 entries).
            let t = self.top_level[k];
            if t != TOMBSTONE {
                set_top_at(&mut self.top_at, t, k);
            }
        }
    }

    /// The keys in `a..b` of the added-block lists outside removed nests ([`next_added`]).
    fn added_keys(&self, a: u32, b: u32) -> Vec<u32> {
        let mut keys = Vec::new();
        let mut pos = a;
        while let Some((key, _)) = next_added(&self.added, &self.skip, pos, b) {
            keys.push(key);
            pos = key + 1;
        }
        keys
    }

    /// Drop the tombstones of `top_level` and renumber the hints. O(outermost loops).
    fn compact_top(&mut self) {
        self.top_level.retain(|&l| l != TOMBSTONE);
        self.top_dead = 0;
        for k in 0..self.top_level.len() {
            set_top_at(&mut self.top_at, self.top_level[k], k);
        }
    }

    /// `block` was taken out of the function: it is in no loop any more, and
    /// [`LoopInfo::blocks`] no longer lists it. O(1). A header or latch of a loop that
    /// stays must not be removed this way (the loop would be left without one); remove
    /// the loop too ([`LoopInfo::remove_loop`]).
    pub fn remove_block(&mut self, block: Block) {
        if let Some(m) = self.innermost.get_mut(block.index()) {
            *m = DEAD;
        }
    }

    /// `from`, a block of a loop whose only predecessor was `into` (in the same innermost
    /// loop), was merged into `into` and taken out of the function: `from` is removed as
    /// by [`LoopInfo::remove_block`], and if it was a latch of its innermost loop, `into`
    /// is that latch now. O(latches of that loop). A block is a latch of its innermost
    /// loop only, in loop-simplify form (an edge to an outer header would be an exit of
    /// the inner loop that is not dedicated).
    pub fn merge_block(&mut self, into: Block, from: Block) {
        if let Some(l) = self.innermost_loop(from) {
            let [a, b] = self.data(l).latches;
            for k in a as usize..b as usize {
                if self.latches[k] == from {
                    self.latches[k] = into;
                }
            }
        }
        self.remove_block(from);
    }

    /// The latches of `l` are now `latches`, a subset of the old ones (branches to the
    /// header were folded away, or latches removed), in the same order; `one_back_edge`
    /// says whether exactly one edge enters the header from them. O(latches of `l`).
    /// Returns `false` (and changes nothing) if `latches` is longer than the old list or
    /// empty (then the loop is gone: [`LoopInfo::remove_loop`]).
    pub fn set_latches(&mut self, l: Loop, latches: &[Block], one_back_edge: bool) -> bool {
        let [a, b] = self.data(l).latches;
        if latches.is_empty() || latches.len() > (b - a) as usize {
            return false;
        }
        let a = a as usize;
        self.latches[a..a + latches.len()].copy_from_slice(latches);
        let d = &mut self.loops[l.index()];
        d.latches = [a as u32, (a + latches.len()) as u32];
        d.one_back_edge = one_back_edge;
        true
    }

    /// `l` is no longer a loop (deleted, or its back edges are gone): its own blocks (not
    /// in a subloop, and not removed with [`LoopInfo::remove_block`]) now belong to its
    /// parent (or to no loop), and its children become children of its parent, in its
    /// place in the parent's child list (or [`LoopInfo::top_level`]), one level shallower.
    /// The id stays allocated and marked ([`LoopInfo::is_removed`]); [`LoopInfo::loops`]
    /// skips it. Cost: the blocks of `l` (its range is scanned once), the loops of its
    /// subtree (depths) and the children of its parent (the list is rewritten in place,
    /// or once at the end of the shared array when `l` had several children). Does
    /// nothing to a removed loop.
    pub fn remove_loop(&mut self, l: Loop) {
        if self.data(l).removed {
            return;
        }
        let parent = self.data(l).parent;
        let own = parent.expand().map_or(NO_LOOP, |p| p.as_u32());
        let [a, b] = self.data(l).blocks;
        let mut live = 0usize;
        let mut k = a as usize;
        while k < b as usize {
            if let Some(&to) = self.skip.get(k).filter(|&&to| to != 0) {
                k = to as usize;
                continue;
            }
            let i = self.blocks[k].index();
            k += 1;
            if self.innermost[i] == l.as_u32() {
                self.innermost[i] = own;
            }
            live += usize::from(self.innermost[i] != DEAD);
        }
        // Added blocks of `l` go to the parent and are listed under the parent's range
        // start, where `own_blocks` and `set_header_and_latch` look for them. (They may be
        // listed under a removed subloop's start too, so the whole range is searched.)
        let mut moved: Vec<Block> = Vec::new();
        let mut emptied: Vec<u32> = Vec::new();
        let keys = self.added_keys(a, b);
        let innermost = &mut self.innermost;
        for &key in &keys {
            let Some(list) = self.added.get_mut(&key) else {
                continue;
            };
            list.retain(|&blk| {
                if innermost[blk.index()] == l.as_u32() {
                    innermost[blk.index()] = own;
                    moved.push(blk);
                    false
                } else {
                    true
                }
            });
            if list.is_empty() {
                emptied.push(key);
            }
        }
        for key in emptied {
            self.added.remove(&key);
        }
        if let Some(p) = parent.expand() {
            if !moved.is_empty() {
                let start = self.data(p).blocks[0];
                self.added.entry(start).or_default().extend(moved);
            }
        }
        // Every block of the range removed (a deleted nest): loops around it jump over it
        // from now on, so that deleting a deep nest level by level stays linear.
        let added_live = keys.iter().any(|key| {
            self.added.get(key).is_some_and(|v| {
                v.iter()
                    .any(|blk| self.innermost.get(blk.index()) != Some(&DEAD))
            })
        });
        if live == 0 && !added_live && b > a {
            if self.skip.len() < self.blocks.len() {
                self.skip.resize(self.blocks.len(), 0);
            }
            self.skip[a as usize] = b;
        }
        // Added blocks listed under `l`'s range start stay listed by the parent, whose
        // range contains it; `l`'s own range becomes empty.
        let kids: Vec<Loop> = self.children(l).to_vec();
        // The subtree moves up one level.
        let mut stack = kids.clone();
        while let Some(x) = stack.pop() {
            self.loops[x.index()].depth -= 1;
            stack.extend_from_slice(self.children(x));
        }
        for &k in &kids {
            self.loops[k.index()].parent = parent;
        }
        match parent.expand() {
            None => {
                if let Some(pos) = self.top_position(l) {
                    self.splice_top(pos, &kids);
                }
            }
            Some(p) => {
                let [c0, c1] = self.data(p).children;
                let (c0, c1) = (c0 as usize, c1 as usize);
                if let Some(pos) = self.children[c0..c1].iter().position(|&x| x == l) {
                    let pos = c0 + pos;
                    match kids.len() {
                        0 => {
                            self.children.copy_within(pos + 1..c1, pos);
                            self.loops[p.index()].children[1] -= 1;
                        }
                        1 => self.children[pos] = kids[0],
                        _ => {
                            let start = self.children.len();
                            self.children.extend_from_within(c0..pos);
                            self.children.extend_from_slice(&kids);
                            self.children.extend_from_within(pos + 1..c1);
                            let end = self.children.len();
                            self.loops[p.index()].children = [start as u32, end as u32];
                        }
                    }
                }
            }
        }
        let d = &mut self.loops[l.index()];
        d.blocks = [a, a];
        d.children = [0, 0];
        d.latches = [0, 0];
        d.parent = None.into();
        d.removed = true;
    }

    /// The innermost loop containing `block`.
    #[inline]
    pub fn innermost_loop(&self, block: Block) -> Option<Loop> {
        match self.innermost.get(block.index()) {
            Some(&l) if l < DEAD => Some(Loop::from_u32(l)),
            _ => None,
        }
    }

    /// Number of loops containing `block` (0 if none).
    pub fn loop_depth(&self, block: Block) -> u32 {
        self.innermost_loop(block).map_or(0, |l| self.depth(l))
    }

    /// Is `block` the header of a loop?
    #[inline]
    pub fn is_header(&self, block: Block) -> bool {
        self.innermost_loop(block)
            .is_some_and(|l| self.data(l).header == block)
    }

    /// Is `block` in `l` (or one of its subloops)? O(1).
    #[inline]
    pub fn contains(&self, l: Loop, block: Block) -> bool {
        match self.innermost_loop(block) {
            Some(m) => self.contains_loop(l, m),
            None => false,
        }
    }

    /// Is `inner` equal to `outer` or nested in it? O(1).
    #[inline]
    pub fn contains_loop(&self, outer: Loop, inner: Loop) -> bool {
        let [a, b] = self.data(outer).blocks;
        let s = self.data(inner).blocks[0];
        a <= s && s < b
    }

    /// Blocks of `l` with an edge to the header, each once (however many edges it has),
    /// in RPO.
    #[inline]
    pub fn latches(&self, l: Loop) -> &[Block] {
        let [a, b] = self.data(l).latches;
        &self.latches[a as usize..b as usize]
    }

    /// The latch, if exactly one back edge enters the header (LLVM's `getLoopLatch`,
    /// which walks the header's predecessors one per edge): a single latch block whose
    /// terminator branches to the header twice (a `brif` with both targets the header, a
    /// `br_table` with two entries for it) is two back edges, and `None`. Passes ported
    /// from LLVM rely on "the" back edge being one edge.
    #[inline]
    pub fn latch(&self, l: Loop) -> Option<Block> {
        match self.latches(l) {
            [one] if self.data(l).one_back_edge => Some(*one),
            _ => None,
        }
    }

    /// Number of back edges into the header of `l`, counted per CFG edge (LLVM's
    /// `getNumBackEdges`); at least [`LoopInfo::latches`]`.len()`.
    pub fn num_back_edges(&self, l: Loop, cfg: &Cfg) -> usize {
        cfg.preds(self.header(l))
            .iter()
            .filter(|&&p| self.contains(l, p))
            .count()
    }

    /// Does `l` or one of its subloops contain an irreducible cycle?
    #[inline]
    pub fn contains_irreducible(&self, l: Loop) -> bool {
        self.data(l).irreducible
    }

    /// Is `block` in one of the [`LoopInfo::irreducible_cycles`]? O(1).
    #[inline]
    pub fn in_irreducible_cycle(&self, block: Block) -> bool {
        self.in_irreducible.get(block.index()).is_some_and(|b| *b)
    }

    /// The irreducible cycles of the function (empty iff its reachable CFG is reducible).
    pub fn irreducible_cycles(&self) -> &[IrreducibleCycle] {
        &self.irreducible
    }

    /// Is `block` in `l` and has it a successor outside `l`?
    pub fn is_exiting(&self, l: Loop, block: Block, cfg: &Cfg) -> bool {
        self.contains(l, block) && cfg.succs(block).iter().any(|&s| !self.contains(l, s))
    }

    /// Blocks of `l` with a successor outside it, in [`LoopInfo::blocks`] order.
    pub fn exiting_blocks(&self, l: Loop, cfg: &Cfg) -> Vec<Block> {
        self.blocks(l)
            .filter(|&b| cfg.succs(b).iter().any(|&s| !self.contains(l, s)))
            .collect()
    }

    /// Edges `(inside, outside)` leaving `l`, one per CFG edge.
    pub fn exit_edges(&self, l: Loop, cfg: &Cfg) -> Vec<(Block, Block)> {
        let mut out = Vec::new();
        for b in self.blocks(l) {
            for &s in cfg.succs(b) {
                if !self.contains(l, s) {
                    out.push((b, s));
                }
            }
        }
        out
    }

    /// Targets of the edges leaving `l`, one per edge (repeats possible, as LLVM's
    /// `getExitBlocks`).
    pub fn exit_blocks(&self, l: Loop, cfg: &Cfg) -> Vec<Block> {
        self.exit_edges(l, cfg)
            .into_iter()
            .map(|(_, s)| s)
            .collect()
    }

    /// Distinct exit blocks, in order of first appearance.
    pub fn unique_exit_blocks(&self, l: Loop, cfg: &Cfg) -> Vec<Block> {
        let mut out = self.exit_blocks(l, cfg);
        dedup_keep_first(&mut out);
        out
    }

    /// Distinct predecessors of the header outside `l` (unreachable ones included, as in
    /// LLVM), in RPO, unreachable ones last by index.
    pub fn loop_predecessors(&self, l: Loop, cfg: &Cfg) -> Vec<Block> {
        let h = self.header(l);
        let mut out: Vec<Block> = cfg
            .preds(h)
            .iter()
            .copied()
            .filter(|&p| !self.contains(l, p))
            .collect();
        out.sort_unstable_by_key(|&p| (cfg.rpo_number(p).unwrap_or(u32::MAX), p));
        out.dedup();
        out
    }

    /// The preheader: the only loop predecessor, if it has the header as its only
    /// successor edge (LLVM's `getLoopPreheader`: successors are counted per edge, so a
    /// block whose terminator branches to the header twice is not a preheader).
    pub fn preheader(&self, l: Loop, cfg: &Cfg) -> Option<Block> {
        // The distinct loop predecessors, without collecting and sorting them: loop
        // passes ask on every visit.
        let mut only = None;
        for &p in cfg.preds(self.header(l)) {
            if self.contains(l, p) || only == Some(p) {
                continue;
            }
            if only.is_some() {
                return None;
            }
            only = Some(p);
        }
        only.filter(|&p| cfg.succs(p).len() == 1)
    }

    /// Do all predecessors of every exit block lie in `l` (LLVM's `hasDedicatedExits`)?
    /// Unreachable predecessors count: they are outside every loop.
    pub fn has_dedicated_exits(&self, l: Loop, cfg: &Cfg) -> bool {
        self.exit_edges(l, cfg)
            .iter()
            .all(|&(_, e)| cfg.preds(e).iter().all(|&p| self.contains(l, p)))
    }

    /// Loop-simplify form (LLVM's `isLoopSimplifyForm`): a preheader, a single back edge
    /// ([`LoopInfo::latch`]) and dedicated exits.
    pub fn is_loop_simplify_form(&self, l: Loop, cfg: &Cfg) -> bool {
        self.preheader(l, cfg).is_some()
            && self.latch(l).is_some()
            && self.has_dedicated_exits(l, cfg)
    }

    /// Rotated form (LLVM's `isRotatedForm`): a latch ([`LoopInfo::latch`], so a single
    /// back edge) that is also exiting (a do-while loop).
    pub fn is_rotated_form(&self, l: Loop, cfg: &Cfg) -> bool {
        self.latch(l).is_some_and(|b| self.is_exiting(l, b, cfg))
    }

    /// LCSSA: no value defined in `l` is used by an instruction of a reachable block
    /// outside `l`. (A branch argument is used in the branching block, so values leave a
    /// loop only through block parameters of its exit blocks.) O(size of the function).
    pub fn is_lcssa_form(&self, l: Loop, func: &Function, dt: &DomTree) -> bool {
        self.first_lcssa_violation(func, dt, |def, user| {
            self.contains(l, def) && !self.contains(l, user)
        })
        .is_none()
    }

    /// Is `l` and every loop nested in it in LCSSA form? O(size of the function).
    pub fn is_recursively_lcssa_form(&self, l: Loop, func: &Function, dt: &DomTree) -> bool {
        self.first_lcssa_violation(func, dt, |def, user| {
            match self.innermost_loop(def) {
                // If the innermost loop of the definition holds the user, so do all
                // the loops around it.
                Some(d) => self.contains_loop(l, d) && !self.contains(d, user),
                None => false,
            }
        })
        .is_none()
    }

    /// Is every loop of the function in LCSSA form?
    pub fn is_all_lcssa_form(&self, func: &Function, dt: &DomTree) -> bool {
        self.first_lcssa_violation(func, dt, |def, user| {
            self.innermost_loop(def)
                .is_some_and(|d| !self.contains(d, user))
        })
        .is_none()
    }

    /// The first `(def block, user block)` pair, over reachable users in layout order, for
    /// which `bad` holds.
    fn first_lcssa_violation(
        &self,
        func: &Function,
        dt: &DomTree,
        bad: impl Fn(Block, Block) -> bool,
    ) -> Option<(Block, Block)> {
        for user in func.layout.blocks() {
            if !dt.is_reachable(user) {
                continue;
            }
            for inst in func.layout.block_insts(user) {
                let mut found = None;
                func.dfg.for_each_inst_value(inst, |v| {
                    let def = match func.dfg.value_def(v) {
                        ValueDef::Result(i) => func.layout.inst_block(i),
                        ValueDef::Param(b, _) => Some(b),
                        ValueDef::Detached => None,
                    };
                    if let Some(d) = def {
                        if d != user && found.is_none() && bad(d, user) {
                            found = Some((d, user));
                        }
                    }
                });
                if found.is_some() {
                    return found;
                }
            }
        }
        None
    }
}

/// Union-find `find` with path halving over loop ids.
#[inline]
fn find(uf: &mut [u32], mut x: u32) -> u32 {
    while uf[x as usize] != x {
        let g = uf[uf[x as usize] as usize];
        uf[x as usize] = g;
        x = g;
    }
    x
}

fn dedup_keep_first(v: &mut Vec<Block>) {
    let mut seen = rustc_hash::FxHashSet::default();
    v.retain(|b| seen.insert(*b));
}

/// The blocks of a loop ([`LoopInfo::blocks`]): those found by the last computation,
/// then those added since.
#[derive(Clone)]
pub struct LoopBlocks<'a> {
    blocks: &'a [Block],
    pos: usize,
    end: usize,
    skip: &'a [u32],
    /// The added blocks, by the range start they are listed under, and the first start
    /// not visited yet (the lists of a removed nest's range are jumped over too).
    added: &'a BTreeMap<u32, Vec<Block>>,
    added_pos: u32,
    current: std::slice::Iter<'a, Block>,
    /// To skip the blocks removed by [`LoopInfo::remove_block`] (marked `DEAD`).
    innermost: &'a [u32],
}

impl LoopBlocks<'_> {
    /// An upper bound on the blocks left: the rest of the range, the current list and the
    /// lists not visited yet. O(those lists), removed nests' ranges jumped over.
    pub fn upper_bound(&self) -> usize {
        let mut n = (self.end - self.pos) + self.current.len();
        let mut pos = self.added_pos;
        while let Some((key, list)) = next_added(self.added, self.skip, pos, self.end as u32) {
            n += list.len();
            pos = key + 1;
        }
        n
    }
}

impl Iterator for LoopBlocks<'_> {
    type Item = Block;

    #[inline]
    fn next(&mut self) -> Option<Block> {
        let live = |b: Block, innermost: &[u32]| innermost.get(b.index()) != Some(&DEAD);
        while self.pos < self.end {
            match self.skip.get(self.pos) {
                Some(&to) if to != 0 => self.pos = (to as usize).min(self.end),
                _ => {
                    let b = self.blocks[self.pos];
                    self.pos += 1;
                    if live(b, self.innermost) {
                        return Some(b);
                    }
                }
            }
        }
        loop {
            for &b in self.current.by_ref() {
                if live(b, self.innermost) {
                    return Some(b);
                }
            }
            let (key, list) = next_added(self.added, self.skip, self.added_pos, self.end as u32)?;
            self.added_pos = key + 1;
            self.current = list.iter();
        }
    }

    /// O(1): `Vec::extend` asks at every growth, so walking the added-block lists here
    /// (as [`LoopBlocks::upper_bound`] does) cost each collection of a deep nest's blocks
    /// a walk of every list per doubling (a fifth of `indvars` on a 100k-block nest). The
    /// upper bound is given only when no block was added since the computation.
    fn size_hint(&self) -> (usize, Option<usize>) {
        if self.added.is_empty() {
            (0, Some((self.end - self.pos) + self.current.len()))
        } else {
            (0, None)
        }
    }
}
