//! Cloning blocks with a value map (LLVM's `CloneBasicBlock` + `remapInstructionsInBlocks`,
//! as `cloneLoopWithPreheader` uses them): copy every block first, then rewrite the
//! copies' operands and branch targets once, through one [`ValueMap`].
//!
//! The copies are built in two sweeps so that uses of values defined later in the cloned
//! set (loop-carried values, blocks listed after their users) find their copies.

use super::split::Place;
use cranelift_entity::packed_option::PackedOption;
use gyre_ir::{Block, Function, SecondaryMap, Value};
use std::fmt;

/// A map from values to values and from blocks to blocks: what a clone made of what, or
/// which value stands for which (aliases for [`replace_uses_batch`]).
///
/// Dense: `SecondaryMap`s indexed by the source id (memory grows with the largest id
/// inserted), plus the list of inserted keys so that [`ValueMap::clear`] and iteration
/// cost O(entries). An unmapped value or block maps to itself.
///
/// [`replace_uses_batch`]: super::uses::replace_uses_batch
#[derive(Clone, Default)]
pub struct ValueMap {
    // Packed (4 bytes an entry, not 8): the maps are sized by the function, and every
    // pass that clones keeps one or two for the whole run.
    values: SecondaryMap<Value, PackedOption<Value>>,
    blocks: SecondaryMap<Block, PackedOption<Block>>,
    value_keys: Vec<Value>,
    block_keys: Vec<Block>,
}

/// A cycle of value mappings (`v1 -> v2 -> v1`): [`ValueMap::resolve_chains`] cannot give
/// its values a final replacement. Holds one value on the cycle.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AliasCycle(pub Value);

impl fmt::Display for AliasCycle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "the value map has a cycle through {}", self.0)
    }
}

impl std::error::Error for AliasCycle {}

impl ValueMap {
    /// An empty map.
    pub fn new() -> ValueMap {
        ValueMap::default()
    }

    /// Forget every entry, in O(entries).
    pub fn clear(&mut self) {
        for &v in &self.value_keys {
            self.values[v] = None.into();
        }
        for &b in &self.block_keys {
            self.blocks[b] = None.into();
        }
        self.value_keys.clear();
        self.block_keys.clear();
    }

    /// Make room for keys below `values` and `blocks` (the function's counts before a
    /// clone: its keys are originals), so that inserting grows no map entry by entry.
    pub fn reserve(&mut self, values: usize, blocks: usize) {
        if self.values.as_values_slice().len() < values {
            self.values.resize(values);
        }
        if self.blocks.as_values_slice().len() < blocks {
            self.blocks.resize(blocks);
        }
    }

    /// Map `from` to `to` (replacing an earlier entry for `from`).
    pub fn insert(&mut self, from: Value, to: Value) {
        if core::mem::replace(&mut self.values[from], to.into()).is_none() {
            self.value_keys.push(from);
        }
    }

    /// What `v` is mapped to, if anything.
    #[inline]
    pub fn get(&self, v: Value) -> Option<Value> {
        self.values.get(v).and_then(|p| p.expand())
    }

    /// What `v` is mapped to, or `v` itself.
    #[inline]
    pub fn map(&self, v: Value) -> Value {
        self.get(v).unwrap_or(v)
    }

    /// Map block `from` to `to` (replacing an earlier entry).
    pub fn insert_block(&mut self, from: Block, to: Block) {
        if core::mem::replace(&mut self.blocks[from], to.into()).is_none() {
            self.block_keys.push(from);
        }
    }

    /// What block `b` is mapped to, if anything.
    #[inline]
    pub fn get_block(&self, b: Block) -> Option<Block> {
        self.blocks.get(b).and_then(|p| p.expand())
    }

    /// What block `b` is mapped to, or `b` itself.
    #[inline]
    pub fn map_block(&self, b: Block) -> Block {
        self.get_block(b).unwrap_or(b)
    }

    /// The value entries `(from, to)`, in order of first insertion.
    pub fn values(&self) -> impl Iterator<Item = (Value, Value)> + '_ {
        self.value_keys
            .iter()
            .map(|&v| (v, self.values[v].expect("listed keys are mapped")))
    }

    /// The block entries `(from, to)`, in order of first insertion.
    pub fn blocks(&self) -> impl Iterator<Item = (Block, Block)> + '_ {
        self.block_keys
            .iter()
            .map(|&b| (b, self.blocks[b].expect("listed keys are mapped")))
    }

    /// Number of value entries.
    pub fn num_values(&self) -> usize {
        self.value_keys.len()
    }

    /// Number of block entries.
    pub fn num_blocks(&self) -> usize {
        self.block_keys.len()
    }

    /// Replace every value entry by the end of its chain (`v1 -> v2 -> v3` becomes
    /// `v1 -> v3`, `v2 -> v3`), so that one lookup gives the final value. A value mapped
    /// to itself ends a chain. O(entries), iterative.
    ///
    /// On a cycle, returns [`AliasCycle`]; entries are then partly resolved, each still
    /// pointing along its original chain, so the map means what it meant.
    pub fn resolve_chains(&mut self) -> Result<(), AliasCycle> {
        const ON_PATH: u8 = 1;
        const DONE: u8 = 2;
        // A hash map, not a per-value array: a map of a few entries in a function of
        // millions of values (one unrolled loop's copies) must not cost the function.
        let mut state: rustc_hash::FxHashMap<Value, u8> = Default::default();
        let mut path = Vec::new();
        for k in 0..self.value_keys.len() {
            let start = self.value_keys[k];
            let mut cur = start;
            let root = loop {
                if state.get(&cur) == Some(&DONE) {
                    // Resolved already: its entry (or itself) is a chain's end.
                    break self.map(cur);
                }
                match self.get(cur) {
                    None => break cur,
                    Some(next) if next == cur => break cur,
                    Some(next) => {
                        if state.get(&cur) == Some(&ON_PATH) {
                            return Err(AliasCycle(cur));
                        }
                        state.insert(cur, ON_PATH);
                        path.push(cur);
                        cur = next;
                    }
                }
            };
            for v in path.drain(..) {
                self.values[v] = root.into();
                state.insert(v, DONE);
            }
        }
        Ok(())
    }
}

/// Why blocks could not be cloned. The function is unchanged when one is returned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CloneError {
    /// A block to clone, or the anchor of the placement, is not in the layout.
    NotLaidOut(Block),
    /// A block is listed twice.
    Duplicate(Block),
    /// A parameter of `block` was given a value in the map (so its copy has no such
    /// parameter), but a cloned branch, from the copy of `from`, would enter that copy.
    SeededParamTargeted {
        /// The block whose copy loses parameters.
        block: Block,
        /// A cloned block whose terminator branches to it.
        from: Block,
    },
}

impl fmt::Display for CloneError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CloneError::NotLaidOut(b) => write!(f, "{b} is not in the layout"),
            CloneError::Duplicate(b) => write!(f, "{b} is listed twice"),
            CloneError::SeededParamTargeted { block, from } => write!(
                f,
                "parameters of {block} are mapped, but the clone of {from} branches to it"
            ),
        }
    }
}

impl std::error::Error for CloneError {}

/// Copy `blocks` (distinct, laid out) into new blocks placed together, in the given order,
/// at `place`, and return the copies (`copies[k]` is the copy of `blocks[k]`).
///
/// Each copy gets a copy of every block parameter, and a deep copy
/// ([`gyre_ir::DataFlowGraph::clone_inst`]) of every instruction; `map` records
/// original → copy for each block, parameter and result. Then every copied instruction is
/// remapped ([`remap_instructions`]): operands and branch arguments through `map`, branch
/// targets in the cloned set to their copies. Targets outside the set, and values defined
/// outside it, stay — unless the caller mapped them beforehand.
///
/// **Pre-seeding.** Entries already in `map` are honoured: a value defined outside the
/// set is replaced by its mapping in the copies (e.g. a header's parameters by the
/// preheader's values when rotating), and a pre-mapped block is retargeted likewise. A
/// **parameter** of a cloned block that is already mapped gets no copy: the copy has only
/// the unmapped parameters, in order, and uses the given value for the others; cloned
/// branches may then not enter that copy ([`CloneError::SeededParamTargeted`]), since
/// their arguments would have nowhere to go. Entries for instruction results of the
/// cloned blocks are overwritten with the copies.
///
/// **Requires**: nothing beyond laid-out, distinct blocks and a laid-out anchor (typed
/// error otherwise, function unchanged); the map should hold only entries meant for this
/// clone ([`ValueMap::clear`] between unrelated ones).
///
/// **Guarantees**: the copies compute what the originals do, given equal parameters (and
/// mapped values): no instruction or jump table is shared with the originals. Until the
/// caller branches to them the copies are unreachable, so the function still verifies
/// and behaves the same. Nothing else changes. Redirecting edges into the copies is the
/// caller's job, as is repairing SSA for values defined in the set and used outside it
/// (see `ssa_updater`; in LCSSA form a whole loop's copy needs none, since its exit edges
/// pass the copied values to the exit blocks' parameters).
///
/// **GPU rule**: the copies hold the originals' convergent operations (barriers, calls).
/// Entering a copy under a condition the original was not under (unswitching, rotation)
/// changes their control dependence: the caller checks for them first
/// ([`gyre_ir::Opcode::is_convergent`]) and backs off.
///
/// **Invalidates**: the CFG gains the copies' edges (call `Cfg::update_block` on each
/// copy, or recompute); dominators and loops once the copies are entered. Cost:
/// O(size of the copied blocks + blocks listed · log).
pub fn clone_blocks(
    func: &mut Function,
    blocks: &[Block],
    map: &mut ValueMap,
    place: Place,
) -> Result<Vec<Block>, CloneError> {
    let laid_out = |b: Block| func.dfg.block_is_valid(b) && func.layout.is_block_inserted(b);
    if let Some(b) = blocks.iter().copied().find(|&b| !laid_out(b)) {
        return Err(CloneError::NotLaidOut(b));
    }
    if let Some(a) = place.anchor().filter(|&a| !laid_out(a)) {
        return Err(CloneError::NotLaidOut(a));
    }
    let mut sorted = blocks.to_vec();
    sorted.sort_unstable();
    if let Some(w) = sorted.windows(2).find(|w| w[0] == w[1]) {
        return Err(CloneError::Duplicate(w[0]));
    }
    // Blocks whose copies lose parameters must not be entered by cloned branches.
    let mut specialized: Vec<Block> = blocks
        .iter()
        .copied()
        .filter(|&b| {
            func.dfg
                .block_params(b)
                .iter()
                .any(|&p| map.get(p).is_some())
        })
        .collect();
    specialized.sort_unstable();
    if !specialized.is_empty() {
        for &from in blocks {
            let Some(t) = func.terminator(from) else {
                continue;
            };
            let mut hit = None;
            func.dfg.for_each_dest(t, |bc| {
                if hit.is_none() && specialized.binary_search(&bc.block).is_ok() {
                    hit = Some(bc.block);
                }
            });
            if let Some(block) = hit {
                return Err(CloneError::SeededParamTargeted { block, from });
            }
        }
    }

    // Room for what the copies add, so the function's and the map's per-entity arrays
    // grow once here rather than entry by entry below.
    let (mut insts, mut params) = (0, 0);
    for &b in blocks {
        insts += func.layout.block_insts(b).count();
        params += func.dfg.block_params(b).len();
    }
    map.reserve(func.dfg.num_values(), func.dfg.num_blocks());
    func.reserve(blocks.len(), insts, insts + params);
    let mut copies = Vec::with_capacity(blocks.len());
    let mut at = place;
    for &b in blocks {
        let nb = func.dfg.make_block();
        at.insert(&mut func.layout, nb);
        at = Place::After(nb);
        map.insert_block(b, nb);
        // A copied loop (unswitching) keeps its unroll hints; callers that do not copy
        // a loop (unrolling) clear them.
        if let Some(&a) = func.loop_attrs.get(&b) {
            func.loop_attrs.insert(nb, a);
        }
        for k in 0..func.dfg.block_params(b).len() {
            let p = func.dfg.block_params(b)[k];
            if map.get(p).is_none() {
                let np = func.dfg.append_block_param(nb, func.dfg.value_type(p));
                map.insert(p, np);
            }
        }
        let mut cur = func.layout.first_inst(b);
        while let Some(i) = cur {
            let c = func.dfg.clone_inst(i);
            func.layout.append_inst(c, nb);
            if let (Some(r), Some(s)) = (func.dfg.inst_result(i), func.dfg.inst_result(c)) {
                map.insert(r, s);
            }
            cur = func.layout.next_inst(i);
        }
        copies.push(nb);
    }
    remap_instructions(func, &copies, map);
    Ok(copies)
}

/// Rewrite every instruction of `blocks` (distinct: a block listed twice is rewritten
/// twice) through `map` (LLVM's
/// `remapInstructionsInBlocks`): each value it uses (operands and branch arguments) to
/// its mapping, each branch target to its mapping; unmapped ones stay. One step of the
/// map is applied (no chains: call [`ValueMap::resolve_chains`] first if needed).
///
/// Requires that the result is well formed (the caller's business: mapped values of the
/// same types, mapped targets with the same parameters). **Invalidates** the CFG of
/// `blocks` when a target changes. O(size of the blocks).
pub fn remap_instructions(func: &mut Function, blocks: &[Block], map: &ValueMap) {
    for &b in blocks {
        let mut cur = func.layout.first_inst(b);
        while let Some(i) = cur {
            func.dfg.map_inst_values(i, |v| map.map(v));
            func.dfg.map_inst_blocks(i, |t| map.map_block(t));
            cur = func.layout.next_inst(i);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gyre_ir::verifier::verify_function;
    use gyre_ir::{parse_function, write_function, BlockCall, EntityRef, InstructionData};

    const LOOP: &str = "kernel @k(i32) {
block0(v0: i32):
    v1 = iconst.i32 0
    jump block1(v1)
block1(v2: i32):
    v3 = iadd v2, v0
    v4 = icmp slt v3, v0
    brif v4, block1(v3), block2
block2:
    return
}
";

    fn text(f: &Function) -> String {
        let mut s = String::new();
        write_function(&mut s, f, None).expect("writes");
        s
    }

    #[test]
    fn clone_a_loop_remaps_inside_and_keeps_outside() {
        let mut f = parse_function(LOOP).expect("parses");
        let (b1, b2) = (Block::new(1), Block::new(2));
        let mut map = ValueMap::new();
        let copies = clone_blocks(&mut f, &[b1], &mut map, Place::After(b1)).expect("clones");
        verify_function(&f, None).expect("unreachable copy verifies");
        let out = text(&f);
        assert!(
            out.contains(
                "block3(v5: i32):\n    v6 = iadd v5, v0\n    v7 = icmp slt v6, v0\n    brif v7, block3(v6), block2"
            ),
            "{out}"
        );
        assert_eq!(copies, vec![Block::new(3)]);
        assert_eq!(map.get_block(b1), Some(copies[0]));
        assert_eq!(map.map(Value::new(3)), Value::new(6));
        assert_eq!(map.map(Value::new(0)), Value::new(0));
        assert_eq!(map.map_block(b2), b2);
        // A seeded header parameter that the backedge would enter: refused, unchanged.
        let mut g = parse_function(LOOP).expect("parses");
        let mut seeded = ValueMap::new();
        seeded.insert(Value::new(2), Value::new(1));
        let before = text(&g);
        assert_eq!(
            clone_blocks(&mut g, &[b1], &mut seeded, Place::End),
            Err(CloneError::SeededParamTargeted {
                block: b1,
                from: b1
            })
        );
        assert_eq!(text(&g), before);
        assert_eq!(
            clone_blocks(&mut g, &[b1, b2, b1], &mut ValueMap::new(), Place::End),
            Err(CloneError::Duplicate(b1))
        );
    }

    #[test]
    fn seeded_header_param_rotates() {
        // Rotation-style: copy the header into the preheader's place with its parameter
        // bound to the value the preheader passes, and enter the copy instead.
        let src = "kernel @k(i32) {
block0(v0: i32):
    v1 = iconst.i32 0
    jump block1(v1)
block1(v2: i32):
    v3 = icmp slt v2, v0
    brif v3, block2, block3
block2:
    v4 = iadd v0, v0
    jump block1(v4)
block3:
    return
}
";
        let mut f = parse_function(src).expect("parses");
        let (b0, b1) = (Block::new(0), Block::new(1));
        let mut map = ValueMap::new();
        map.insert(Value::new(2), Value::new(1));
        let copies = clone_blocks(&mut f, &[b1], &mut map, Place::After(b0)).expect("clones");
        assert!(f.dfg.block_params(copies[0]).is_empty());
        let jump = f.terminator(b0).expect("jump");
        let d = BlockCall::new(copies[0], &[], &mut f.dfg.value_lists);
        f.dfg.replace_inst(jump, InstructionData::Jump { dest: d });
        verify_function(&f, None).expect("verifies");
        let out = text(&f);
        assert!(
            out.contains("block4:\n    v5 = icmp slt v1, v0\n    brif v5, block2, block3"),
            "{out}"
        );
    }

    #[test]
    fn resolve_chains_and_cycles() {
        let v = |n| Value::new(n);
        let mut m = ValueMap::new();
        m.insert(v(1), v(2));
        m.insert(v(2), v(3));
        m.insert(v(5), v(1));
        m.insert(v(7), v(7));
        m.resolve_chains().expect("acyclic");
        assert_eq!(
            m.values().collect::<Vec<_>>(),
            vec![(v(1), v(3)), (v(2), v(3)), (v(5), v(3)), (v(7), v(7))]
        );
        m.insert(v(3), v(5));
        assert!(m.resolve_chains().is_err());
        // Meaning kept: following the (now cyclic) chain from 1 still meets 3 and 5.
        assert!(m.get(v(1)).is_some());
        m.clear();
        assert_eq!(m.num_values(), 0);
        assert_eq!(m.get(v(1)), None);
    }
}
