//! Program order: the sequence of blocks and, inside each block, of instructions.
//!
//! Both are doubly linked lists stored in `SecondaryMap`s, so inserting, removing,
//! moving and splitting are O(1). Each instruction also carries a sequence number that
//! increases along its block, so `pp_cmp` answers "which comes first" in O(1); numbers
//! are spaced by [`SEQ_STRIDE`]. When an insertion finds no gap, the numbers after it are
//! pushed up until one fits (a few instructions, as in Cranelift's layout), and only when
//! that runs long is the whole block renumbered, so repeated insertion at one point of a
//! big block stays cheap.

use crate::entities::{Block, Inst};
use core::cmp::Ordering;
use cranelift_entity::packed_option::PackedOption;
use cranelift_entity::SecondaryMap;

/// Gap between consecutive sequence numbers after renumbering.
pub const SEQ_STRIDE: u32 = 16;

/// Gap between the numbers a local renumbering gives (see `insert_inst_before`).
const MINOR_STRIDE: u32 = 2;

/// How far a local renumbering may run past the inserted instruction's number before the
/// whole block is renumbered instead.
const LOCAL_RENUMBER_LIMIT: u32 = 100 * MINOR_STRIDE;

#[derive(Clone, Default, Debug)]
struct BlockNode {
    prev: PackedOption<Block>,
    next: PackedOption<Block>,
    first_inst: PackedOption<Inst>,
    last_inst: PackedOption<Inst>,
    inserted: bool,
}

#[derive(Clone, Default, Debug)]
struct InstNode {
    block: PackedOption<Block>,
    prev: PackedOption<Inst>,
    next: PackedOption<Inst>,
    seq: u32,
}

/// Block order and per-block instruction order.
#[derive(Clone, Default)]
pub struct Layout {
    blocks: SecondaryMap<Block, BlockNode>,
    insts: SecondaryMap<Inst, InstNode>,
    first_block: PackedOption<Block>,
    last_block: PackedOption<Block>,
    num_blocks: usize,
}

impl Layout {
    /// An empty layout.
    pub fn new() -> Self {
        Self::default()
    }

    /// Make room for the blocks and instructions with ids below `blocks` and `insts`
    /// (say, the data-flow graph's counts after a [`DataFlowGraph::reserve`]), so that
    /// laying them out grows no map entry by entry. Changes nothing observable.
    ///
    /// [`DataFlowGraph::reserve`]: crate::DataFlowGraph::reserve
    pub fn reserve(&mut self, blocks: usize, insts: usize) {
        if self.blocks.as_values_slice().len() < blocks {
            self.blocks.resize(blocks);
        }
        if self.insts.as_values_slice().len() < insts {
            self.insts.resize(insts);
        }
    }

    /// The first block: the function's entry.
    #[inline]
    pub fn entry_block(&self) -> Option<Block> {
        self.first_block.expand()
    }

    /// The last block in layout order.
    #[inline]
    pub fn last_block(&self) -> Option<Block> {
        self.last_block.expand()
    }

    /// Number of blocks in the layout.
    #[inline]
    pub fn num_blocks(&self) -> usize {
        self.num_blocks
    }

    /// Is the block in the layout?
    #[inline]
    pub fn is_block_inserted(&self, block: Block) -> bool {
        self.blocks[block].inserted
    }

    /// Append a block at the end of the function.
    pub fn append_block(&mut self, block: Block) {
        assert!(!self.is_block_inserted(block), "{block} already in layout");
        let node = &mut self.blocks[block];
        node.inserted = true;
        node.prev = self.last_block;
        node.next = None.into();
        match self.last_block.expand() {
            Some(last) => self.blocks[last].next = block.into(),
            None => self.first_block = block.into(),
        }
        self.last_block = block.into();
        self.num_blocks += 1;
    }

    /// Insert `block` right after `after`.
    pub fn insert_block_after(&mut self, block: Block, after: Block) {
        assert!(!self.is_block_inserted(block), "{block} already in layout");
        assert!(self.is_block_inserted(after), "{after} not in layout");
        let next = self.blocks[after].next;
        {
            let node = &mut self.blocks[block];
            node.inserted = true;
            node.prev = after.into();
            node.next = next;
        }
        self.blocks[after].next = block.into();
        match next.expand() {
            Some(n) => self.blocks[n].prev = block.into(),
            None => self.last_block = block.into(),
        }
        self.num_blocks += 1;
    }

    /// Move a block that is in the layout, with its instructions, to right after `after`.
    /// The entry block cannot move (it must stay first) and `after` must differ from
    /// `block`; both must be in the layout (panics otherwise).
    pub fn move_block_after(&mut self, block: Block, after: Block) {
        assert!(self.is_block_inserted(block), "{block} not in layout");
        assert!(self.is_block_inserted(after), "{after} not in layout");
        assert_ne!(block, after, "a block cannot move after itself");
        assert_ne!(
            self.first_block.expand(),
            Some(block),
            "the entry block stays first"
        );
        if self.blocks[after].next.expand() == Some(block) {
            return;
        }
        let (prev, next) = (self.blocks[block].prev, self.blocks[block].next);
        match prev.expand() {
            Some(p) => self.blocks[p].next = next,
            None => self.first_block = next,
        }
        match next.expand() {
            Some(n) => self.blocks[n].prev = prev,
            None => self.last_block = prev,
        }
        let after_next = self.blocks[after].next;
        self.blocks[block].prev = after.into();
        self.blocks[block].next = after_next;
        self.blocks[after].next = block.into();
        match after_next.expand() {
            Some(n) => self.blocks[n].prev = block.into(),
            None => self.last_block = block.into(),
        }
    }

    /// Insert `block` right before `before`.
    pub fn insert_block_before(&mut self, block: Block, before: Block) {
        assert!(!self.is_block_inserted(block), "{block} already in layout");
        assert!(self.is_block_inserted(before), "{before} not in layout");
        let prev = self.blocks[before].prev;
        {
            let node = &mut self.blocks[block];
            node.inserted = true;
            node.prev = prev;
            node.next = before.into();
        }
        self.blocks[before].prev = block.into();
        match prev.expand() {
            Some(p) => self.blocks[p].next = block.into(),
            None => self.first_block = block.into(),
        }
        self.num_blocks += 1;
    }

    /// Remove a block (which must be empty of instructions) from the layout.
    pub fn remove_block(&mut self, block: Block) {
        assert!(self.is_block_inserted(block), "{block} not in layout");
        assert!(
            self.blocks[block].first_inst.is_none(),
            "{block} still has instructions"
        );
        let BlockNode { prev, next, .. } = self.blocks[block].clone();
        match prev.expand() {
            Some(p) => self.blocks[p].next = next,
            None => self.first_block = next,
        }
        match next.expand() {
            Some(n) => self.blocks[n].prev = prev,
            None => self.last_block = prev,
        }
        self.blocks[block] = BlockNode::default();
        self.num_blocks -= 1;
    }

    /// Blocks in layout order.
    #[inline]
    pub fn blocks(&self) -> Blocks<'_> {
        Blocks {
            layout: self,
            next: self.first_block.expand(),
        }
    }

    /// The block after `block` in layout order.
    #[inline]
    pub fn next_block(&self, block: Block) -> Option<Block> {
        self.blocks[block].next.expand()
    }

    /// The block before `block` in layout order.
    #[inline]
    pub fn prev_block(&self, block: Block) -> Option<Block> {
        self.blocks[block].prev.expand()
    }

    /// The first instruction of a block.
    #[inline]
    pub fn first_inst(&self, block: Block) -> Option<Inst> {
        self.blocks[block].first_inst.expand()
    }

    /// The last instruction of a block (its terminator in valid IR).
    #[inline]
    pub fn last_inst(&self, block: Block) -> Option<Inst> {
        self.blocks[block].last_inst.expand()
    }

    /// The instruction after `inst` in its block.
    #[inline]
    pub fn next_inst(&self, inst: Inst) -> Option<Inst> {
        self.insts[inst].next.expand()
    }

    /// The instruction before `inst` in its block.
    #[inline]
    pub fn prev_inst(&self, inst: Inst) -> Option<Inst> {
        self.insts[inst].prev.expand()
    }

    /// The block holding `inst`, if it is in the layout.
    #[inline]
    pub fn inst_block(&self, inst: Inst) -> Option<Block> {
        self.insts[inst].block.expand()
    }

    /// Instructions of a block in order.
    #[inline]
    pub fn block_insts(&self, block: Block) -> Insts<'_> {
        Insts {
            layout: self,
            next: self.blocks[block].first_inst.expand(),
        }
    }

    /// Append an instruction at the end of a block.
    pub fn append_inst(&mut self, inst: Inst, block: Block) {
        assert!(self.insts[inst].block.is_none(), "{inst} already in layout");
        assert!(self.is_block_inserted(block), "{block} not in layout");
        let last = self.blocks[block].last_inst;
        let seq = match last.expand() {
            Some(l) => self.insts[l].seq.checked_add(SEQ_STRIDE),
            None => Some(0),
        };
        {
            let node = &mut self.insts[inst];
            node.block = block.into();
            node.prev = last;
            node.next = None.into();
        }
        match last.expand() {
            Some(l) => self.insts[l].next = inst.into(),
            None => self.blocks[block].first_inst = inst.into(),
        }
        self.blocks[block].last_inst = inst.into();
        match seq {
            Some(s) => self.insts[inst].seq = s,
            None => self.renumber(block),
        }
    }

    /// Insert `inst` right before `before` in `before`'s block.
    pub fn insert_inst_before(&mut self, inst: Inst, before: Inst) {
        assert!(self.insts[inst].block.is_none(), "{inst} already in layout");
        let block = self.insts[before]
            .block
            .expand()
            .expect("insertion point not in layout");
        let prev = self.insts[before].prev;
        {
            let node = &mut self.insts[inst];
            node.block = block.into();
            node.prev = prev;
            node.next = before.into();
        }
        self.insts[before].prev = inst.into();
        match prev.expand() {
            Some(p) => self.insts[p].next = inst.into(),
            None => self.blocks[block].first_inst = inst.into(),
        }
        let lo = prev.expand().map(|p| self.insts[p].seq);
        let hi = self.insts[before].seq;
        match lo {
            None if hi > 0 => self.insts[inst].seq = hi / 2,
            Some(lo) if hi - lo > 1 => self.insts[inst].seq = lo + (hi - lo) / 2,
            _ => {
                // No gap: push the following numbers up until one fits (as Cranelift's
                // layout does). Renumbering the whole block every few insertions at one
                // point made a pass that places many values in one big block quadratic
                // (simplify on a million-block exit ladder).
                let start = lo.map_or(Some(0), |l| l.checked_add(MINOR_STRIDE));
                let local = start.is_some_and(|s| {
                    self.renumber_from(inst, s, s.saturating_add(LOCAL_RENUMBER_LIMIT))
                });
                if !local {
                    self.renumber(block);
                }
            }
        }
    }

    /// Number `first` as `seq` and the instructions after it `MINOR_STRIDE` apart, until
    /// the next one's number is already larger (true) or the numbers pass `limit` (false:
    /// the block needs a full renumbering).
    fn renumber_from(&mut self, first: Inst, mut seq: u32, limit: u32) -> bool {
        let mut inst = first;
        loop {
            self.insts[inst].seq = seq;
            let Some(next) = self.insts[inst].next.expand() else {
                return true;
            };
            if self.insts[next].seq > seq {
                return true;
            }
            match seq.checked_add(MINOR_STRIDE) {
                Some(s) if s <= limit => seq = s,
                _ => return false,
            }
            inst = next;
        }
    }

    /// Remove an instruction from the layout (it stays in the data-flow graph).
    pub fn remove_inst(&mut self, inst: Inst) {
        let InstNode {
            block, prev, next, ..
        } = self.insts[inst].clone();
        let block = block.expand().expect("instruction not in layout");
        match prev.expand() {
            Some(p) => self.insts[p].next = next,
            None => self.blocks[block].first_inst = next,
        }
        match next.expand() {
            Some(n) => self.insts[n].prev = prev,
            None => self.blocks[block].last_inst = prev,
        }
        self.insts[inst] = InstNode::default();
    }

    /// Split `inst`'s block before `inst`: `inst` and everything after it move, in order,
    /// to `new_block`, which is inserted in the layout right after the old block.
    pub fn split_block(&mut self, new_block: Block, inst: Inst) {
        let old = self.inst_block(inst).expect("split point not in layout");
        self.insert_block_after(new_block, old);
        let prev = self.insts[inst].prev;
        let last = self.blocks[old].last_inst;
        match prev.expand() {
            Some(p) => self.insts[p].next = None.into(),
            None => self.blocks[old].first_inst = None.into(),
        }
        self.blocks[old].last_inst = prev;
        self.insts[inst].prev = None.into();
        self.blocks[new_block].first_inst = inst.into();
        self.blocks[new_block].last_inst = last;
        let mut cur = Some(inst);
        while let Some(i) = cur {
            self.insts[i].block = new_block.into();
            cur = self.insts[i].next.expand();
        }
    }

    /// Compare the program order of two instructions of the same block in O(1).
    pub fn pp_cmp(&self, a: Inst, b: Inst) -> Ordering {
        debug_assert_eq!(self.inst_block(a), self.inst_block(b));
        self.insts[a].seq.cmp(&self.insts[b].seq)
    }

    fn renumber(&mut self, block: Block) {
        #[cfg(test)]
        tests::FULL_RENUMBERS.with(|c| c.set(c.get() + 1));
        let mut seq = 0u32;
        let mut cur = self.blocks[block].first_inst.expand();
        while let Some(i) = cur {
            self.insts[i].seq = seq;
            seq = seq.saturating_add(SEQ_STRIDE);
            cur = self.insts[i].next.expand();
        }
    }
}

/// Iterator over blocks in layout order.
pub struct Blocks<'a> {
    layout: &'a Layout,
    next: Option<Block>,
}

impl Iterator for Blocks<'_> {
    type Item = Block;
    #[inline]
    fn next(&mut self) -> Option<Block> {
        let b = self.next?;
        self.next = self.layout.next_block(b);
        Some(b)
    }
}

/// Iterator over the instructions of a block.
pub struct Insts<'a> {
    layout: &'a Layout,
    next: Option<Inst>,
}

impl Iterator for Insts<'_> {
    type Item = Inst;
    #[inline]
    fn next(&mut self) -> Option<Inst> {
        let i = self.next?;
        self.next = self.layout.next_inst(i);
        Some(i)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cranelift_entity::EntityRef;

    thread_local! {
        /// Whole-block renumberings done on this thread (each test runs on its own).
        pub(super) static FULL_RENUMBERS: std::cell::Cell<u32> = const { std::cell::Cell::new(0) };
    }

    #[test]
    fn reserve_changes_nothing_observable() {
        let mut l = Layout::new();
        let (b0, b1, b9) = (Block::new(0), Block::new(1), Block::new(9));
        l.append_block(b0);
        l.append_inst(Inst::new(0), b0);
        l.reserve(16, 16);
        // A smaller reservation shrinks nothing.
        l.reserve(1, 1);
        assert_eq!(l.blocks().collect::<Vec<_>>(), [b0]);
        assert_eq!(l.block_insts(b0).collect::<Vec<_>>(), [Inst::new(0)]);
        assert!(!l.is_block_inserted(b1) && !l.is_block_inserted(b9));
        assert_eq!(l.inst_block(Inst::new(5)), None);
        // Ids inside and beyond the reservation lay out as before.
        l.append_block(b9);
        l.append_inst(Inst::new(20), b9);
        l.append_inst(Inst::new(5), b9);
        assert_eq!(l.blocks().collect::<Vec<_>>(), [b0, b9]);
        assert_eq!(
            l.block_insts(b9).collect::<Vec<_>>(),
            [Inst::new(20), Inst::new(5)]
        );
        assert_eq!(l.pp_cmp(Inst::new(20), Inst::new(5)), Ordering::Less);
    }

    #[test]
    fn move_block_after_keeps_instructions_and_ends() {
        let mut l = Layout::new();
        let b: Vec<Block> = (0..4).map(Block::new).collect();
        for &x in &b {
            l.append_block(x);
        }
        let i = Inst::new(0);
        l.append_inst(i, b[1]);
        l.move_block_after(b[1], b[3]);
        assert_eq!(l.blocks().collect::<Vec<_>>(), [b[0], b[2], b[3], b[1]]);
        assert_eq!(l.last_block(), Some(b[1]));
        assert_eq!(l.inst_block(i), Some(b[1]));
        assert_eq!(l.block_insts(b[1]).collect::<Vec<_>>(), [i]);
        l.move_block_after(b[1], b[0]);
        assert_eq!(l.blocks().collect::<Vec<_>>(), [b[0], b[1], b[2], b[3]]);
        assert_eq!(l.last_block(), Some(b[3]));
        l.move_block_after(b[3], b[2]);
        assert_eq!(l.num_blocks(), 4);
        assert_eq!(l.prev_block(b[2]), Some(b[1]));
    }

    #[test]
    fn insert_split_and_order() {
        let mut l = Layout::new();
        let (b0, b1) = (Block::new(0), Block::new(1));
        l.append_block(b0);
        let insts: Vec<Inst> = (0..5).map(Inst::new).collect();
        for &i in &insts {
            l.append_inst(i, b0);
        }
        // Repeated insertion at one point forces renumbering.
        let mut before = insts[1];
        for k in 5..40 {
            let i = Inst::new(k);
            l.insert_inst_before(i, before);
            assert_eq!(l.pp_cmp(i, before), Ordering::Less);
            assert_eq!(l.pp_cmp(insts[0], i), Ordering::Less);
            before = i;
        }
        l.split_block(b1, insts[2]);
        assert_eq!(l.block_insts(b1).collect::<Vec<_>>(), &insts[2..]);
        assert_eq!(l.inst_block(insts[4]), Some(b1));
        assert_eq!(l.last_inst(b0), Some(insts[1]));
        assert_eq!(l.blocks().collect::<Vec<_>>(), vec![b0, b1]);
        l.remove_inst(insts[3]);
        assert_eq!(
            l.block_insts(b1).collect::<Vec<_>>(),
            vec![insts[2], insts[4]]
        );
    }

    /// Numbers increase along the block after insertions at the end, at the head and in
    /// the middle of a big block, and insertions at one point do not renumber the whole
    /// block every few times.
    #[test]
    fn insertions_keep_order_and_renumber_locally() {
        let mut l = Layout::new();
        let b = Block::new(0);
        l.append_block(b);
        let n = 2000;
        for k in 0..n {
            l.append_inst(Inst::new(k), b);
        }
        let term = Inst::new(n - 1);
        let mut next = n;
        // Appending before the terminator, as passes that place values at a block's end do.
        let before = FULL_RENUMBERS.with(|c| c.get());
        for _ in 0..3000 {
            l.insert_inst_before(Inst::new(next), term);
            next += 1;
        }
        let full = FULL_RENUMBERS.with(|c| c.get()) - before;
        assert!(
            full <= 1,
            "{full} whole-block renumberings for 3000 insertions"
        );
        // Inserting at the head, and repeatedly at one point in the middle.
        for _ in 0..50 {
            let head = l.first_inst(b).unwrap();
            l.insert_inst_before(Inst::new(next), head);
            next += 1;
        }
        let mut at = Inst::new(1000);
        for _ in 0..50 {
            l.insert_inst_before(Inst::new(next), at);
            at = Inst::new(next);
            next += 1;
        }
        let order: Vec<Inst> = l.block_insts(b).collect();
        assert_eq!(order.len(), next);
        for w in order.windows(2) {
            assert!(
                l.insts[w[0]].seq < l.insts[w[1]].seq,
                "{} !< {}",
                w[0],
                w[1]
            );
            assert_eq!(l.pp_cmp(w[0], w[1]), Ordering::Less);
        }
    }
}
