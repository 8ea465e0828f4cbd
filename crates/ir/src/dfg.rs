//! The data-flow graph: what each instruction computes, independent of where it sits.
//!
//! The [`Layout`](crate::Layout) holds the order of blocks and instructions; the two are
//! deliberately separate (as in Cranelift) so that moving code never touches operands and
//! rewriting operands never touches order. An instruction or block that exists here but
//! is not in the layout is simply not part of the program.

use crate::entities::{Block, Inst, JumpTable, Value};
use crate::instructions::{BlockCall, InstructionData, JumpTableData, ValueList, ValueListPool};
use crate::types::Type;
use cranelift_entity::packed_option::PackedOption;
use cranelift_entity::{PrimaryMap, SecondaryMap};

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
