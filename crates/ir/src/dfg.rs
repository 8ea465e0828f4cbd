//! The data-flow graph: what each instruction computes, independent of where it sits.
//!
//! The [`Layout`](crate::Layout) holds the order of blocks and instructions; the two are
//! deliberately separate (as in Cranelift) so that moving code never touches operands and
//! rewriting operands never touches order. An instruction or block that exists here but
//! is not in the layout is simply not part of the program.
//!
//! Editing primitives: [`DataFlowGraph::clone_inst`] (a deep copy with a fresh result),
//! [`DataFlowGraph::map_inst_values`] / [`DataFlowGraph::map_inst_blocks`] (remapping),
//! and [`InstKey`] / [`InstTable`] to compare and hash-cons instructions by contents
//! (see [`InstructionData::eq_in`]).

use crate::entities::{Block, Inst, JumpTable, Value};
use crate::instructions::{BlockCall, InstructionData, JumpTableData, ValueList, ValueListPool};
use crate::types::Type;
use core::hash::{Hash, Hasher};
use cranelift_entity::packed_option::PackedOption;
use cranelift_entity::{PrimaryMap, SecondaryMap};
use rustc_hash::{FxHashMap, FxHasher};

/// Where a value comes from.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub enum ValueDef {
    /// The result of an instruction.
    Result(Inst),
    /// The `n`th parameter of a block.
    Param(Block, u32),
    /// Not defined by anything (a removed parameter, or a gap in parsed numbering).
    /// Using such a value is a verifier error.
    Detached,
}

/// Per-value data.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub struct ValueData {
    /// The value's type.
    pub ty: Type,
    /// Its definition.
    pub def: ValueDef,
}

/// Per-block data (parameters only; the instructions are in the layout).
#[derive(Clone, Default, Debug)]
pub struct BlockData {
    params: ValueList,
}

/// The cases of a `br_table`, stored so that all targets form one slice.
impl JumpTableData {
    /// A jump table from a default target and `(value, target)` cases.
    pub fn new(default: BlockCall, cases: Vec<(i64, BlockCall)>) -> JumpTableData {
        JumpTableData { default, cases }
    }
}

/// Instructions, values, block parameters and the pools they live in.
#[derive(Clone, Default)]
pub struct DataFlowGraph {
    insts: PrimaryMap<Inst, InstructionData>,
    results: SecondaryMap<Inst, PackedOption<Value>>,
    values: PrimaryMap<Value, ValueData>,
    blocks: PrimaryMap<Block, BlockData>,
    /// The pool of every value list (call, return and branch arguments, block params).
    pub value_lists: ValueListPool,
    jump_tables: PrimaryMap<JumpTable, JumpTableData>,
}

impl DataFlowGraph {
    /// An empty data-flow graph.
    pub fn new() -> Self {
        Self::default()
    }

    /// Number of instructions ever created (including ones removed from the layout).
    #[inline]
    pub fn num_insts(&self) -> usize {
        self.insts.len()
    }

    /// Number of blocks ever created.
    #[inline]
    pub fn num_blocks(&self) -> usize {
        self.blocks.len()
    }

    /// Number of values ever created.
    #[inline]
    pub fn num_values(&self) -> usize {
        self.values.len()
    }

    /// Make room for `blocks` more blocks, `insts` more instructions and `values` more
    /// values, so that creating them (a pass that clones a region knows how many) grows no
    /// map piece by piece. Changes nothing observable.
    pub fn reserve(&mut self, blocks: usize, insts: usize, values: usize) {
        self.blocks.reserve(blocks);
        self.insts.reserve(insts);
        self.values.reserve(values);
        let n = self.insts.len() + insts;
        if self.results.as_values_slice().len() < n {
            self.results.resize(n);
        }
    }

    /// Create an instruction with no result.
    pub fn make_inst(&mut self, data: InstructionData) -> Inst {
        self.insts.push(data)
    }

    /// Create an instruction and a result value of type `ty`.
    pub fn make_inst_with_result(&mut self, data: InstructionData, ty: Type) -> (Inst, Value) {
        let inst = self.make_inst(data);
        let v = self.values.push(ValueData {
            ty,
            def: ValueDef::Result(inst),
        });
        self.results[inst] = v.into();
        (inst, v)
    }

    /// Attach a result of type `ty` to an instruction that has none.
    pub fn attach_result(&mut self, inst: Inst, ty: Type) -> Value {
        assert!(self.results[inst].is_none(), "{inst} already has a result");
        let v = self.values.push(ValueData {
            ty,
            def: ValueDef::Result(inst),
        });
        self.results[inst] = v.into();
        v
    }

    /// Make `v` (which must be detached) the result of `inst`. The parser uses this to
    /// keep value numbers from the text.
    pub fn attach_result_value(&mut self, inst: Inst, v: Value, ty: Type) {
        debug_assert_eq!(self.values[v].def, ValueDef::Detached);
        self.values[v] = ValueData {
            ty,
            def: ValueDef::Result(inst),
        };
        self.results[inst] = v.into();
    }

    /// Create a value that is not defined by anything yet.
    pub fn make_detached_value(&mut self, ty: Type) -> Value {
        self.values.push(ValueData {
            ty,
            def: ValueDef::Detached,
        })
    }

    /// The instruction's operands.
    #[inline]
    pub fn inst(&self, inst: Inst) -> &InstructionData {
        &self.insts[inst]
    }

    /// Mutable access to the instruction's operands.
    pub fn inst_mut(&mut self, inst: Inst) -> &mut InstructionData {
        &mut self.insts[inst]
    }

    /// Replace an instruction's data, keeping its result (if any).
    pub fn replace_inst(&mut self, inst: Inst, data: InstructionData) {
        self.insts[inst] = data;
    }

    /// The result of an instruction, if it has one.
    #[inline]
    pub fn inst_result(&self, inst: Inst) -> Option<Value> {
        self.results[inst].expand()
    }

    /// Detach the result of `inst` (its value becomes `Detached`).
    pub fn detach_result(&mut self, inst: Inst) -> Option<Value> {
        let v = self.results[inst].take()?;
        self.values[v].def = ValueDef::Detached;
        Some(v)
    }

    /// The value operands of an instruction, branch arguments excluded.
    #[inline]
    pub fn inst_args(&self, inst: Inst) -> &[Value] {
        self.insts[inst].arguments(&self.value_lists)
    }

    /// Is `inst` a valid instruction id of this graph?
    pub fn inst_is_valid(&self, inst: Inst) -> bool {
        self.insts.is_valid(inst)
    }

    /// Is `v` a valid value id of this graph?
    pub fn value_is_valid(&self, v: Value) -> bool {
        self.values.is_valid(v)
    }

    /// Is `b` a valid block id of this graph?
    pub fn block_is_valid(&self, b: Block) -> bool {
        self.blocks.is_valid(b)
    }

    /// The type of a value.
    #[inline]
    pub fn value_type(&self, v: Value) -> Type {
        self.values[v].ty
    }

    /// Change the type of a value (the caller keeps the IR type-correct).
    pub fn set_value_type(&mut self, v: Value, ty: Type) {
        self.values[v].ty = ty;
    }

    /// Where a value is defined.
    #[inline]
    pub fn value_def(&self, v: Value) -> ValueDef {
        self.values[v].def
    }

    /// All values, defined or detached.
    pub fn values(&self) -> impl ExactSizeIterator<Item = Value> + '_ {
        self.values.keys()
    }

    /// Create a block with no parameters (not yet in the layout).
    pub fn make_block(&mut self) -> Block {
        self.blocks.push(BlockData::default())
    }

    /// The parameters of a block.
    #[inline]
    pub fn block_params(&self, block: Block) -> &[Value] {
        self.blocks[block].params.as_slice(&self.value_lists)
    }

    /// Append a parameter of type `ty` to a block.
    pub fn append_block_param(&mut self, block: Block, ty: Type) -> Value {
        let n = self.blocks[block].params.len(&self.value_lists) as u32;
        let v = self.values.push(ValueData {
            ty,
            def: ValueDef::Param(block, n),
        });
        self.blocks[block].params.push(v, &mut self.value_lists);
        v
    }

    /// Append an existing detached value as a parameter of `block` (parser use).
    pub fn attach_block_param(&mut self, block: Block, v: Value, ty: Type) {
        debug_assert_eq!(self.values[v].def, ValueDef::Detached);
        let n = self.blocks[block].params.len(&self.value_lists) as u32;
        self.values[v] = ValueData {
            ty,
            def: ValueDef::Param(block, n),
        };
        self.blocks[block].params.push(v, &mut self.value_lists);
    }

    /// Remove the `idx`th parameter of a block; the value becomes detached and later
    /// parameters move down. Branches to the block must be updated by the caller.
    pub fn remove_block_param(&mut self, block: Block, idx: usize) -> Value {
        let v = self.blocks[block].params.as_slice(&self.value_lists)[idx];
        self.blocks[block].params.remove(idx, &mut self.value_lists);
        self.values[v].def = ValueDef::Detached;
        let params: Vec<Value> = self.block_params(block)[idx..].to_vec();
        for (i, p) in params.into_iter().enumerate() {
            self.values[p].def = ValueDef::Param(block, (idx + i) as u32);
        }
        v
    }

    /// Create a jump table.
    pub fn make_jump_table(&mut self, data: JumpTableData) -> JumpTable {
        self.jump_tables.push(data)
    }

    /// Is `jt` a valid jump table id of this graph?
    pub fn jump_table_is_valid(&self, jt: JumpTable) -> bool {
        self.jump_tables.is_valid(jt)
    }

    /// A jump table's cases.
    #[inline]
    pub fn jump_table(&self, jt: JumpTable) -> &JumpTableData {
        &self.jump_tables[jt]
    }

    /// Mutable access to a jump table.
    pub fn jump_table_mut(&mut self, jt: JumpTable) -> &mut JumpTableData {
        &mut self.jump_tables[jt]
    }

    /// Call `f` on every branch target of `inst` in order (for `br_table`: the default
    /// first, then the cases). Non-branches have none.
    #[inline]
    pub fn for_each_dest(&self, inst: Inst, mut f: impl FnMut(&BlockCall)) {
        match &self.insts[inst] {
            InstructionData::Jump { dest } => f(dest),
            InstructionData::Brif { blocks, .. } => blocks.iter().for_each(f),
            InstructionData::BrTable { table, .. } => {
                let jt = &self.jump_tables[*table];
                f(&jt.default);
                jt.cases.iter().for_each(|(_, c)| f(c));
            }
            _ => {}
        }
    }

    /// Call `f` on every branch target of `inst`, mutably.
    pub fn for_each_dest_mut(
        &mut self,
        inst: Inst,
        mut f: impl FnMut(&mut BlockCall, &mut ValueListPool),
    ) {
        let pool = &mut self.value_lists;
        match &mut self.insts[inst] {
            InstructionData::Jump { dest } => f(dest, pool),
            InstructionData::Brif { blocks, .. } => blocks.iter_mut().for_each(|b| f(b, pool)),
            InstructionData::BrTable { table, .. } => {
                let jt = &mut self.jump_tables[*table];
                f(&mut jt.default, pool);
                jt.cases.iter_mut().for_each(|(_, c)| f(c, pool));
            }
            _ => {}
        }
    }

    /// The successor blocks of a terminator in branch order, repeats included.
    pub fn successors(&self, inst: Inst) -> Vec<Block> {
        let mut out = Vec::new();
        self.for_each_dest(inst, |bc| out.push(bc.block));
        out
    }

    /// The arguments passed on a branch target.
    #[inline]
    pub fn block_call_args(&self, bc: &BlockCall) -> &[Value] {
        bc.args.as_slice(&self.value_lists)
    }

    /// Call `f` on every value `inst` uses: operands first, then branch arguments.
    pub fn for_each_inst_value(&self, inst: Inst, mut f: impl FnMut(Value)) {
        for &v in self.inst_args(inst) {
            f(v);
        }
        self.for_each_dest(inst, |bc| {
            for &v in bc.args.as_slice(&self.value_lists) {
                f(v)
            }
        });
    }

    /// A deep copy of `inst`'s data: the same operation and operands, with call, return
    /// and branch argument lists copied into fresh lists of the pool and a `br_table`'s
    /// jump table copied into a new [`JumpTable`], so editing the copy never changes the
    /// original. (A plain `clone()` of [`InstructionData`] shares both.)
    pub fn deep_clone_data(&mut self, inst: Inst) -> InstructionData {
        let pool = &mut self.value_lists;
        let call = |bc: &BlockCall, pool: &mut ValueListPool| BlockCall {
            block: bc.block,
            args: bc.args.deep_clone(pool),
        };
        match &self.insts[inst] {
            InstructionData::Call { func, args } => InstructionData::Call {
                func: *func,
                args: args.deep_clone(pool),
            },
            InstructionData::Return { args } => InstructionData::Return {
                args: args.deep_clone(pool),
            },
            InstructionData::Jump { dest } => InstructionData::Jump {
                dest: call(dest, pool),
            },
            InstructionData::Brif { arg, blocks } => InstructionData::Brif {
                arg: *arg,
                blocks: [call(&blocks[0], pool), call(&blocks[1], pool)],
            },
            InstructionData::BrTable { arg, table } => {
                let (arg, jt) = (*arg, &self.jump_tables[*table]);
                let data = JumpTableData {
                    default: call(&jt.default, pool),
                    cases: jt
                        .cases
                        .iter()
                        .map(|(k, bc)| (*k, call(bc, pool)))
                        .collect(),
                };
                let table = self.jump_tables.push(data);
                InstructionData::BrTable { arg, table }
            }
            other => {
                debug_assert!(!other.has_pool_data());
                other.clone()
            }
        }
    }

    /// A new instruction computing what `inst` computes (Cranelift's `clone_inst`): its
    /// data is a [deep copy](DataFlowGraph::deep_clone_data), and if `inst` has a result
    /// the copy gets a fresh result value of the same type. The copy is not in the
    /// layout; operands and branch targets are the original's until the caller rewrites
    /// them (see [`DataFlowGraph::clone_inst_with`], [`DataFlowGraph::map_inst_values`],
    /// [`DataFlowGraph::map_inst_blocks`]). O(size of `inst`).
    pub fn clone_inst(&mut self, inst: Inst) -> Inst {
        let data = self.deep_clone_data(inst);
        match self.inst_result(inst) {
            Some(r) => {
                let ty = self.value_type(r);
                self.make_inst_with_result(data, ty).0
            }
            None => self.make_inst(data),
        }
    }

    /// [`DataFlowGraph::clone_inst`], then every value the copy uses (operands and branch
    /// arguments) rewritten through `f`.
    pub fn clone_inst_with(&mut self, inst: Inst, f: impl FnMut(Value) -> Value) -> Inst {
        let copy = self.clone_inst(inst);
        self.map_inst_values(copy, f);
        copy
    }

    /// Rewrite every branch target of `inst` through `f`, leaving the arguments alone
    /// (the caller keeps them matching the new targets' parameters).
    pub fn map_inst_blocks(&mut self, inst: Inst, mut f: impl FnMut(Block) -> Block) {
        self.for_each_dest_mut(inst, |bc, _| bc.block = f(bc.block));
    }

    /// Rewrite every value `inst` uses (operands and branch arguments) through `f`.
    pub fn map_inst_values(&mut self, inst: Inst, mut f: impl FnMut(Value) -> Value) {
        for v in self.insts[inst].arguments_mut(&mut self.value_lists) {
            *v = f(*v);
        }
        self.for_each_dest_mut(inst, |bc, pool| {
            for v in bc.args.as_mut_slice(pool) {
                *v = f(*v);
            }
        });
    }
}

/// An instruction's data and result type, hashed and compared by contents
/// ([`InstructionData::eq_in`], [`InstructionData::hash_in`]): a key for a
/// value-numbering map (`FxHashMap<InstKey, Value>`) over a graph that is not edited
/// while the map lives. The result type is part of the key, since the data alone does not
/// say it (`iconst.i32 0` and `iconst.i64 0` have equal data).
///
/// When the graph must be edited between lookups, use [`InstTable`], which keeps no
/// borrow.
#[derive(Copy, Clone)]
pub struct InstKey<'a> {
    data: &'a InstructionData,
    ty: Option<Type>,
    dfg: &'a DataFlowGraph,
}

impl<'a> InstKey<'a> {
    /// The key of instruction `inst`: its data and its result's type.
    pub fn new(dfg: &'a DataFlowGraph, inst: Inst) -> InstKey<'a> {
        InstKey {
            data: dfg.inst(inst),
            ty: dfg.inst_result(inst).map(|v| dfg.value_type(v)),
            dfg,
        }
    }

    /// The key of data not (yet) in an instruction, whose list and table handles refer
    /// to `dfg`, with result type `ty`.
    pub fn from_data(
        dfg: &'a DataFlowGraph,
        data: &'a InstructionData,
        ty: Option<Type>,
    ) -> InstKey<'a> {
        InstKey { data, ty, dfg }
    }
}

impl PartialEq for InstKey<'_> {
    fn eq(&self, other: &Self) -> bool {
        debug_assert!(
            core::ptr::eq(self.dfg, other.dfg),
            "InstKeys of different graphs"
        );
        self.ty == other.ty && self.data.eq_in(other.data, self.dfg)
    }
}

impl Eq for InstKey<'_> {}

impl Hash for InstKey<'_> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.ty.hash(state);
        self.data.hash_in(state, self.dfg);
    }
}

/// A hash-consing table of instructions, by contents and result type (as [`InstKey`]),
/// that keeps no borrow of the graph: the graph may be edited between calls. Stored
/// instructions must keep their data while they are in the table (an instruction whose
/// operands are rewritten must be removed first and re-inserted after, or its entry goes
/// stale: found under its old hash, compared with its new data).
///
/// Entries are keyed by their 64-bit hash; the rare instructions whose hash collides with
/// a different stored one go to a small overflow list scanned linearly.
#[derive(Clone, Default)]
pub struct InstTable {
    first: FxHashMap<u64, Inst>,
    overflow: Vec<(u64, Inst)>,
}

impl InstTable {
    /// An empty table.
    pub fn new() -> InstTable {
        InstTable::default()
    }

    /// Forget every entry, keeping the memory.
    pub fn clear(&mut self) {
        self.first.clear();
        self.overflow.clear();
    }

    /// Number of instructions stored.
    pub fn len(&self) -> usize {
        self.first.len() + self.overflow.len()
    }

    /// Is the table empty?
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn hash_of(key: InstKey<'_>) -> u64 {
        let mut h = FxHasher::default();
        key.hash(&mut h);
        h.finish()
    }

    fn find(&self, h: u64, key: InstKey<'_>) -> Option<Inst> {
        let same = |i: Inst| InstKey::new(key.dfg, i) == key;
        match self.first.get(&h) {
            Some(&i) if same(i) => Some(i),
            Some(_) => self
                .overflow
                .iter()
                .find(|&&(g, i)| g == h && same(i))
                .map(|&(_, i)| i),
            None => None,
        }
    }

    /// A stored instruction equal to `key`, if any.
    pub fn get(&self, key: InstKey<'_>) -> Option<Inst> {
        self.find(Self::hash_of(key), key)
    }

    /// The stored instruction equal to `inst` (of `dfg`) if there is one; otherwise store
    /// `inst` and return it. GVN's lookup-or-insert.
    pub fn get_or_insert(&mut self, dfg: &DataFlowGraph, inst: Inst) -> Inst {
        let key = InstKey::new(dfg, inst);
        let h = Self::hash_of(key);
        if let Some(i) = self.find(h, key) {
            return i;
        }
        match self.first.entry(h) {
            std::collections::hash_map::Entry::Vacant(e) => {
                e.insert(inst);
            }
            std::collections::hash_map::Entry::Occupied(_) => self.overflow.push((h, inst)),
        }
        inst
    }

    /// Remove `inst` (of `dfg`, with the data it had when inserted) if it is stored;
    /// returns whether it was.
    pub fn remove(&mut self, dfg: &DataFlowGraph, inst: Inst) -> bool {
        let h = Self::hash_of(InstKey::new(dfg, inst));
        if self.first.get(&h) == Some(&inst) {
            // Promote a colliding entry, if any, so `first` keeps one per hash.
            match self.overflow.iter().position(|&(g, _)| g == h) {
                Some(k) => {
                    let (_, j) = self.overflow.swap_remove(k);
                    self.first.insert(h, j);
                }
                None => {
                    self.first.remove(&h);
                }
            }
            return true;
        }
        match self.overflow.iter().position(|&(g, i)| g == h && i == inst) {
            Some(k) => {
                self.overflow.swap_remove(k);
                true
            }
            None => false,
        }
    }
}
