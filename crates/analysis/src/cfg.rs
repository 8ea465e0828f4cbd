//! The control-flow graph: successors, predecessors, reverse post-order, reachability.
//!
//! Edges are kept in CSR form: one `Vec<Block>` of targets and, per block index, a
//! `[start, end)` range into it, for successors and for predecessors. Walking all edges is
//! a linear scan over two arrays, with no per-block allocation. A block that is not in the
//! layout (or has no terminator) has empty ranges.
//!
//! Edges are counted with multiplicity: `brif v, block1, block1` gives `block1` twice in the
//! successors of the block and the block twice in the predecessors of `block1`. Successors
//! are in branch order (for `br_table`: the default first, then the cases); predecessors in
//! layout order of the source after [`Cfg::compute`] (after [`Cfg::update_block`] the new
//! edges come last; every analysis of this crate is independent of predecessor order).
//!
//! The reverse post-order comes from one iterative DFS from the entry that visits the
//! successors of a block last-to-first, so the first successor's region comes first in
//! RPO (the then-branch before the else-branch).
//!
//! **Cost** of [`Cfg::compute`]: O(n + m), no allocation once the buffers have grown.
//! Each block's last instruction is decoded once, by one match on its data (a non-branch
//! has no targets, so no separate terminator check: that double decode, through
//! `Function::terminator`, was ~10% of the time). One pass over the layout lists the blocks,
//! reads the branches into a preallocated slice and counts predecessors; targets outside
//! the layout are caught in the prefix-sum sweep that follows (a counted block that was
//! never laid out), so valid input pays no per-edge layout test. The predecessor array is filled
//! from the successor array by counting sort, and the RPO DFS runs on the CSR arrays and
//! numbers each block as it finishes (no reversal or renumbering pass). The same DFS lists
//! the targets of retreating edges (the loop header candidates, for
//! [`LoopInfo`](crate::LoopInfo)) in post-order: a block still on
//! the stack when an edge reaches it is marked, and listed when it finishes.

use core::fmt;
use cranelift_entity::packed_option::PackedOption;
use cranelift_entity::EntityRef;
use gyre_ir::{Block, Function, Inst, InstructionData};

/// Marks an unreachable block in [`Cfg::rpo_number`]'s backing array.
const UNREACHABLE: u32 = u32::MAX;

/// Why a CFG could not be built.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum CfgError {
    /// A branch targets a block that does not exist or is not in the layout.
    InvalidTarget {
        /// The block holding the branch.
        block: Block,
        /// The branch instruction.
        inst: Inst,
        /// The bad target.
        target: Block,
    },
}

impl fmt::Display for CfgError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CfgError::InvalidTarget {
                block,
                inst,
                target,
            } => write!(
                f,
                "{inst} in {block} branches to {target}, which is not in the layout"
            ),
        }
    }
}

impl std::error::Error for CfgError {}

/// Successors and predecessors of every block, plus reverse post-order.
///
/// Not kept in sync with the function: after changing the terminator of one block, call
/// [`Cfg::update_block`] (edges) and then [`Cfg::compute_order`] (RPO), or recompute.
#[derive(Clone, Default)]
pub struct Cfg {
    entry: PackedOption<Block>,
    succ_range: Vec<[u32; 2]>,
    succs: Vec<Block>,
    pred_range: Vec<[u32; 2]>,
    preds: Vec<Block>,
    layout: Vec<Block>,
    rpo: Vec<Block>,
    rpo_number: Vec<u32>,
    /// Targets of retreating edges (loop header candidates), in post-order.
    retreat_targets: Vec<Block>,
    /// DFS frames `(block, next edge, end)`, reused across runs.
    dfs_stack: Vec<(u32, u32, u32)>,
    /// Scratch: the source of each edge during `compute`, new targets in `update_block`.
    scratch: Vec<Block>,
    valid: bool,
    order_valid: bool,
}

/// Count one more predecessor of `s` (in `pred_range[s][1]`), or note a target past the
/// end of the block numbering.
#[inline(always)]
fn count(pred_range: &mut [[u32; 2]], s: Block, bad: &mut bool) {
    match pred_range.get_mut(s.index()) {
        Some(r) => r[1] += 1,
        None => *bad = true,
    }
}

impl Cfg {
    /// An empty, invalid CFG.
    pub fn new() -> Cfg {
        Cfg::default()
    }

    /// Build the CFG of `func`.
    pub fn with_function(func: &Function) -> Result<Cfg, CfgError> {
        let mut cfg = Cfg::new();
        cfg.compute(func)?;
        Ok(cfg)
    }

    /// Forget everything (keeps the buffers).
    pub fn clear(&mut self) {
        self.entry = None.into();
        self.succ_range.clear();
        self.succs.clear();
        self.pred_range.clear();
        self.preds.clear();
        self.layout.clear();
        self.rpo.clear();
        self.rpo_number.clear();
        self.retreat_targets.clear();
        self.valid = false;
        self.order_valid = false;
    }

    /// Has `compute` succeeded since the last `clear`?
    pub fn is_valid(&self) -> bool {
        self.valid
    }

    /// Is the reverse post-order up to date with the edges?
    pub fn is_order_valid(&self) -> bool {
        self.order_valid
    }

    /// Recompute edges and order from scratch. On error the CFG is left invalid.
    ///
    /// One pass over the layout reads each terminator once and counts predecessors; the
    /// predecessor array is then filled from the successor array, and the RPO computed.
    /// The error names the first bad branch in layout order.
    pub fn compute(&mut self, func: &Function) -> Result<(), CfgError> {
        self.clear();
        let n = func.dfg.num_blocks();
        self.succ_range.resize(n, [0, 0]);
        // One pass over the layout: list the blocks, decode each terminator once, count
        // predecessors in `pred_range[t][1]` and mark each laid-out block by setting
        // `pred_range[b][0]`. Targets outside the layout are found afterwards, in the
        // prefix-sum sweep (a target with predecessors but no mark), so the common case
        // pays no second walk of the layout and no per-edge mark test.
        self.pred_range.resize(n, [0, 0]);
        // The decode loop writes into plain slices at cursors instead of pushing: a `Vec`
        // that a push may grow lives in memory, and its length was stored and reloaded
        // for every edge. `layout` has exactly one slot per laid-out block; `succs` starts
        // with two per block (a `jump` or `brif` needs no more) and grows, outside the
        // loop, only for a `br_table` that does not fit.
        let nl = func.layout.num_blocks();
        self.layout.resize(nl, Block::new(0));
        self.succs.resize(2 * nl + 2, Block::new(0));
        // The source of each edge, beside `succs`, so the predecessor fill below is one
        // flat loop over the edges (a loop per block mispredicts its trip count).
        self.scratch.clear();
        self.scratch.resize(2 * nl + 2, Block::new(0));
        let pred_range = &mut self.pred_range[..];
        let succ_range = &mut self.succ_range[..];
        let layout = &mut self.layout[..];
        let mut bad = false;
        let (mut k, mut li) = (0usize, 0usize);
        let mut next = func.layout.entry_block();
        'grow: loop {
            let out = &mut self.succs[..];
            let src = &mut self.scratch[..];
            while let Some(b) = next {
                let start = k;
                if let Some(t) = func.layout.last_inst(b) {
                    // The last instruction's targets (none unless it is a branch): one
                    // decode of the instruction, no separate terminator check.
                    match func.dfg.inst(t) {
                        // `jump` and `brif` count their predecessors inline: a loop over
                        // one or two targets mispredicts its trip count on mixed code.
                        InstructionData::Jump { dest } => {
                            out[k] = dest.block;
                            src[k] = b;
                            k += 1;
                            count(pred_range, dest.block, &mut bad);
                        }
                        InstructionData::Brif { blocks, .. } => {
                            out[k] = blocks[0].block;
                            out[k + 1] = blocks[1].block;
                            src[k] = b;
                            src[k + 1] = b;
                            k += 2;
                            count(pred_range, blocks[0].block, &mut bad);
                            count(pred_range, blocks[1].block, &mut bad);
                        }
                        &InstructionData::BrTable { table, .. } => {
                            let jt = func.dfg.jump_table(table);
                            // Keep two free slots for the rest of the blocks' worst case.
                            if k + jt.cases.len() + 1 + 2 * (nl - li) > out.len() {
                                let want = k + jt.cases.len() + 1 + 2 * (nl - li);
                                let len = want.max(2 * self.succs.len());
                                self.succs.resize(len, Block::new(0));
                                self.scratch.resize(len, Block::new(0));
                                continue 'grow;
                            }
                            out[k] = jt.default.block;
                            src[k] = b;
                            k += 1;
                            for (_, c) in &jt.cases {
                                out[k] = c.block;
                                src[k] = b;
                                k += 1;
                            }
                            for &s in &out[start..k] {
                                count(pred_range, s, &mut bad);
                            }
                        }
                        _ => {}
                    }
                }
                layout[li] = b;
                li += 1;
                pred_range[b.index()][0] = 1;
                succ_range[b.index()] = [start as u32, k as u32];
                next = func.layout.next_block(b);
            }
            break;
        }
        self.succs.truncate(k);
        let mut off = 0u32;
        for r in &mut self.pred_range {
            let [mark, cnt] = *r;
            bad |= cnt != 0 && mark == 0;
            *r = [off, off];
            off += cnt;
        }
        if bad {
            return Err(self.invalid_target(func));
        }
        self.preds.resize(off as usize, Block::new(0));
        let (pred_range, preds) = (&mut self.pred_range[..], &mut self.preds[..]);
        for (&s, &b) in self.succs.iter().zip(&self.scratch) {
            let r = &mut pred_range[s.index()];
            preds[r[1] as usize] = b;
            r[1] += 1;
        }
        self.entry = func.layout.entry_block().into();
        self.valid = true;
        self.compute_rpo();
        Ok(())
    }

    /// The first branch, in layout order, to a block that does not exist or is not in the
    /// layout (the slow path of a failed [`Cfg::compute`]); leaves the CFG cleared.
    #[cold]
    fn invalid_target(&mut self, func: &Function) -> CfgError {
        self.clear();
        let n = func.dfg.num_blocks();
        let mut found = None;
        for b in func.layout.blocks() {
            let Some(t) = func.layout.last_inst(b) else {
                continue;
            };
            func.dfg.for_each_dest(t, |bc| {
                let s = bc.block;
                if found.is_none() && (s.index() >= n || !func.layout.is_block_inserted(s)) {
                    found = Some(CfgError::InvalidTarget {
                        block: b,
                        inst: t,
                        target: s,
                    });
                }
            });
            if let Some(e) = found {
                return e;
            }
        }
        unreachable!(
            "invalid_target called on a function whose branches all target laid-out blocks"
        )
    }

    /// Recompute the edges out of `block` after its terminator changed (or it was added to
    /// or removed from the layout), in time proportional to the old and new edges. The
    /// order becomes stale: call [`Cfg::compute_order`] before asking for RPO.
    ///
    /// Replaced ranges are left as garbage in the edge arrays until the next `compute`.
    pub fn update_block(&mut self, func: &Function, block: Block) -> Result<(), CfgError> {
        debug_assert!(self.valid, "update_block on an invalid Cfg");
        let n = func.dfg.num_blocks();
        if n > self.succ_range.len() {
            let start = self.succs.len() as u32;
            self.succ_range.resize(n, [start, start]);
            let pstart = self.preds.len() as u32;
            self.pred_range.resize(n, [pstart, pstart]);
        }
        let mut new = core::mem::take(&mut self.scratch);
        new.clear();
        let term = if func.layout.is_block_inserted(block) {
            func.terminator(block)
        } else {
            None
        };
        if let Some(t) = term {
            func.dfg.for_each_dest(t, |bc| new.push(bc.block));
            if let Some(&s) = new
                .iter()
                .find(|s| s.index() >= n || !func.layout.is_block_inserted(**s))
            {
                self.scratch = new;
                return Err(CfgError::InvalidTarget {
                    block,
                    inst: t,
                    target: s,
                });
            }
        }
        // Drop `block` from the predecessors of its old successors.
        let [o0, o1] = self.succ_range[block.index()];
        for i in o0..o1 {
            let s = self.succs[i as usize];
            let [p0, p1] = self.pred_range[s.index()];
            let mut w = p0;
            for r in p0..p1 {
                let p = self.preds[r as usize];
                if p != block {
                    self.preds[w as usize] = p;
                    w += 1;
                }
            }
            self.pred_range[s.index()][1] = w;
        }
        // Write the new successors in place if they fit, else at the end.
        let start = if new.len() as u32 <= o1 - o0 {
            o0
        } else {
            self.succs.len() as u32
        };
        for (k, &s) in new.iter().enumerate() {
            let at = start as usize + k;
            if at < self.succs.len() {
                self.succs[at] = s;
            } else {
                self.succs.push(s);
            }
        }
        self.succ_range[block.index()] = [start, start + new.len() as u32];
        // Append `block` to the predecessors of each new successor, moving a list to the
        // end of the array when it has no room to grow.
        for &s in &new {
            let [p0, p1] = self.pred_range[s.index()];
            if p1 as usize != self.preds.len() {
                let at = self.preds.len() as u32;
                self.preds.extend_from_within(p0 as usize..p1 as usize);
                self.pred_range[s.index()] = [at, at + (p1 - p0)];
            }
            self.preds.push(block);
            self.pred_range[s.index()][1] += 1;
        }
        self.scratch = new;
        self.order_valid = false;
        Ok(())
    }

    /// Recompute the layout list and the reverse post-order after [`Cfg::update_block`].
    pub fn compute_order(&mut self, func: &Function) {
        self.layout.clear();
        self.layout.extend(func.layout.blocks());
        self.entry = func.layout.entry_block().into();
        self.compute_rpo();
    }

    fn compute_rpo(&mut self) {
        let n = self.succ_range.len();
        self.rpo.clear();
        self.retreat_targets.clear();
        self.rpo_number.clear();
        self.rpo_number.resize(n, UNREACHABLE);
        let Some(entry) = self.entry.expand() else {
            self.order_valid = true;
            return;
        };
        // At most `n` blocks are reachable (bounding by the block slots rather than the
        // layout keeps the slices in range even if a caller left an edge to a block taken
        // out of the layout). The DFS writes each finished block at the back of `rpo` and
        // gives it its final number at once (`slot` counts down), so there is no reversal
        // and no renumbering sweep; only when fewer blocks are reached are the numbers
        // shifted down, over the reachable blocks alone.
        //
        // `rpo_number` doubles as the DFS state: `UNREACHABLE` = not seen, `ON_STACK` /
        // `ON_STACK_RETREAT` = on the stack (the latter once an edge from a descendant,
        // i.e. a retreating edge, reached it), else the RPO slot. The current frame
        // `(block, next edge, end)` lives in locals; successors are visited last-to-first
        // (`i` counts down to `end`).
        const ON_STACK: u32 = UNREACHABLE - 1;
        const ON_STACK_RETREAT: u32 = UNREACHABLE - 2;
        let mut slot = n;
        self.rpo.resize(slot, Block::new(0));
        // The stack is a slice with a cursor, sized once for the deepest possible path (a
        // pushed `Vec` kept its length in memory, stored and reloaded at every step).
        if self.dfs_stack.len() < slot {
            self.dfs_stack.resize(slot, (0, 0, 0));
        }
        let stack = &mut self.dfs_stack[..];
        let mut sp = 0usize;
        let succs = &self.succs[..];
        let ranges = &self.succ_range[..];
        let mark = &mut self.rpo_number[..];
        let rpo = &mut self.rpo[..];
        let retreat = &mut self.retreat_targets;
        let mut v = entry.as_u32();
        mark[v as usize] = ON_STACK;
        let [mut end, mut i] = ranges[v as usize];
        loop {
            if i > end {
                i -= 1;
                let s = succs[i as usize].as_u32();
                let m = &mut mark[s as usize];
                if *m == UNREACHABLE {
                    *m = ON_STACK;
                    stack[sp] = (v, i, end);
                    sp += 1;
                    v = s;
                    [end, i] = ranges[s as usize];
                } else if *m == ON_STACK {
                    *m = ON_STACK_RETREAT;
                }
            } else {
                let m = &mut mark[v as usize];
                if *m == ON_STACK_RETREAT {
                    retreat.push(Block::from_u32(v));
                }
                slot -= 1;
                *m = slot as u32;
                rpo[slot] = Block::from_u32(v);
                if sp == 0 {
                    break;
                }
                sp -= 1;
                (v, i, end) = stack[sp];
            }
        }
        if slot > 0 {
            self.rpo.drain(..slot);
            for &b in &self.rpo {
                self.rpo_number[b.index()] -= slot as u32;
            }
        }
        self.order_valid = true;
    }

    /// The entry block.
    pub fn entry(&self) -> Option<Block> {
        self.entry.expand()
    }

    /// One more than the largest block index (the size of per-block arrays).
    pub fn num_block_slots(&self) -> usize {
        self.succ_range.len()
    }

    /// Blocks in layout order (as of the last `compute` or `compute_order`).
    pub fn layout_blocks(&self) -> &[Block] {
        &self.layout
    }

    /// Successors of `block` in branch order, repeats included.
    #[inline]
    pub fn succs(&self, block: Block) -> &[Block] {
        match self.succ_range.get(block.index()) {
            Some(&[a, b]) => &self.succs[a as usize..b as usize],
            None => &[],
        }
    }

    /// Predecessors of `block`, one per edge.
    #[inline]
    pub fn preds(&self, block: Block) -> &[Block] {
        match self.pred_range.get(block.index()) {
            Some(&[a, b]) => &self.preds[a as usize..b as usize],
            None => &[],
        }
    }

    /// Reachable blocks in reverse post-order (the entry first).
    pub fn rpo(&self) -> &[Block] {
        debug_assert!(self.order_valid, "Cfg order is stale: call compute_order");
        &self.rpo
    }

    /// The position of `block` in [`Cfg::rpo`], or `None` if it is unreachable.
    #[inline]
    pub fn rpo_number(&self, block: Block) -> Option<u32> {
        match self.rpo_number.get(block.index()) {
            Some(&n) if n != UNREACHABLE => Some(n),
            _ => None,
        }
    }

    /// Is `block` reachable from the entry?
    #[inline]
    pub fn is_reachable(&self, block: Block) -> bool {
        self.rpo_number(block).is_some()
    }

    /// Is `from -> to` a retreating edge of the DFS (its target no later in RPO)?
    /// Every back edge is one; in a reducible CFG every one is a back edge.
    #[inline]
    pub fn is_retreating(&self, from: Block, to: Block) -> bool {
        match (self.rpo_number(from), self.rpo_number(to)) {
            (Some(f), Some(t)) => t <= f,
            _ => false,
        }
    }

    /// [`Cfg::rpo_number`] of every block index, `u32::MAX` for unreachable blocks.
    #[inline]
    pub(crate) fn rpo_numbers(&self) -> &[u32] {
        &self.rpo_number
    }

    /// Targets of the retreating edges (every loop header, and in an irreducible CFG the
    /// other targets of retreating edges), each once, in post-order.
    #[inline]
    pub(crate) fn retreat_targets(&self) -> &[Block] {
        debug_assert!(self.order_valid, "Cfg order is stale: call compute_order");
        &self.retreat_targets
    }

    pub(crate) fn succ_adj(&self) -> crate::tree::Adj<'_> {
        crate::tree::Adj {
            ranges: &self.succ_range,
            targets: &self.succs,
        }
    }

    pub(crate) fn pred_adj(&self) -> crate::tree::Adj<'_> {
        crate::tree::Adj {
            ranges: &self.pred_range,
            targets: &self.preds,
        }
    }
}
