//! Functions: a signature, a data-flow graph, a layout and local slots.

use crate::dfg::DataFlowGraph;
use crate::entities::{Block, Inst, Slot, Value};
use crate::instructions::InstructionData;
use crate::layout::Layout;
use crate::types::Type;
use cranelift_entity::PrimaryMap;
use rustc_hash::FxHashMap;

/// Whether a function is a kernel entry point or a device function.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub enum FuncKind {
    /// A kernel (`.entry`): launched from the host, returns nothing.
    Kernel,
    /// A device function (`.func`): called from kernels or other device functions.
    Device,
}

/// What a function asks of an inliner (LLVM's `alwaysinline` / `noinline` attributes).
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug, Default)]
pub enum InlineHint {
    /// No request: the inliner's cost model decides.
    #[default]
    Default,
    /// Inline every call that can be inlined, whatever its cost (`alwaysinline`).
    Always,
    /// Inlining is desirable: the inliner's larger `inlinehint-threshold` applies
    /// (`inlinehint`, which clang gives C++ `inline` functions and templates).
    Hint,
    /// Never inline a call to this function (`noinline`).
    Never,
}

/// Parameter and return types.
#[derive(Clone, PartialEq, Eq, Hash, Debug, Default)]
pub struct Signature {
    /// Parameter types; the entry block has one parameter per entry, same types.
    pub params: Vec<Type>,
    /// The return type, if the function returns a value (never for kernels).
    pub ret: Option<Type>,
}

/// What the source asks of loop unrolling for one loop (LLVM's `llvm.loop.unroll.*`
/// loop metadata, clang's `#pragma unroll`).
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug, Default)]
pub enum UnrollHint {
    /// No request: the unroller's cost model decides.
    #[default]
    Default,
    /// Do not unroll (`llvm.loop.unroll.disable`, `#pragma unroll 1`, or a loop an
    /// unroller already unrolled by a requested count).
    Disable,
    /// Unroll with the larger pragma threshold (`llvm.loop.unroll.enable`, `#pragma
    /// unroll` without a count).
    Enable,
    /// Unroll fully if the trip count is known (`llvm.loop.unroll.full`).
    Full,
    /// Unroll by this many copies (`llvm.loop.unroll.count N`, `#pragma unroll N`).
    Count(u32),
}

/// Attributes of one loop, kept on its header block (LLVM keeps them as `!llvm.loop`
/// metadata on the latch's branch; Gyre's passes track a loop by its header). They are
/// hints: a block that is not a loop header ignores them, and dropping them never changes
/// what a program computes.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug, Default)]
pub struct LoopAttrs {
    /// The loop terminates or has an effect (`llvm.loop.mustprogress`), as
    /// [`Function::must_progress`] says of every loop of a function.
    pub must_progress: bool,
    /// What unrolling should do with the loop.
    pub unroll: UnrollHint,
}

impl LoopAttrs {
    /// No attribute set?
    pub fn is_empty(&self) -> bool {
        *self == LoopAttrs::default()
    }
}

/// A per-thread local-memory slot (an `alloca`).
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub struct SlotData {
    /// Size in bytes.
    pub size: u32,
    /// Alignment in bytes (a power of two).
    pub align: u32,
}

/// A `byval` parameter: the parameter (a `ptr.local`) points to a fresh private copy of
/// `size` bytes, aligned to `align`, that the function owns. For a kernel the launch
/// supplies the bytes (PTX: `.param .align A .b8 p[N]`, LLVM's kernel `byval` ABI).
/// Only kernels have them: the LLVM importer makes a device function's copy at the call.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub struct ByValParam {
    /// Index of the parameter in the signature.
    pub index: u32,
    /// Size of the copy in bytes.
    pub size: u32,
    /// Alignment of the copy in bytes (a power of two).
    pub align: u32,
}

/// A function of a module.
#[derive(Clone)]
pub struct Function {
    /// Name without the `@`.
    pub name: String,
    /// Kernel or device function.
    pub kind: FuncKind,
    /// Parameter and return types.
    pub sig: Signature,
    /// A convergent function may not be made control-dependent on more conditions
    /// (LLVM's `convergent` attribute); every kernel with a barrier is one in effect.
    pub convergent: bool,
    /// Every loop of the function without an effect terminates (LLVM's `mustprogress`
    /// attribute, C++'s forward-progress rule): one that would not is undefined
    /// behaviour, so such a loop may be deleted without a proof that it ends.
    pub must_progress: bool,
    /// NaNs that arithmetic in this function produces have an unspecified payload and
    /// sign (any quiet NaN), as in LLVM IR, instead of the canonical NaN the IR
    /// otherwise requires (`anynan`, docs/ir.md). The canonical NaN is one permitted
    /// result, so the interpreter's runs stay valid; the PTX emitter then leaves the
    /// hardware's NaNs as they are. The LLVM importer sets it on every function.
    pub any_nan: bool,
    /// Only this module can name the function (LLVM's `internal`/`private` linkage): once
    /// no call to it is left (after inlining) it may be deleted. `false` means visible or
    /// unknown, and the function is kept.
    pub internal: bool,
    /// Whether an inliner must, should, may or must not inline calls to the function.
    pub inline: InlineHint,
    /// Instructions and values.
    pub dfg: DataFlowGraph,
    /// Program order.
    pub layout: Layout,
    /// Local-memory slots.
    pub slots: PrimaryMap<Slot, SlotData>,
    /// The `byval` parameters, by increasing index (empty for most functions).
    pub byval: Vec<ByValParam>,
    /// Loop attributes by header block (sparse: most loops have none). Read and write
    /// them through [`Function::loop_attrs`] and [`Function::set_loop_attrs`].
    pub loop_attrs: FxHashMap<Block, LoopAttrs>,
}

impl Function {
    /// Make room for `blocks` more blocks, `insts` more instructions and `values` more
    /// values in the data-flow graph and the layout ([`DataFlowGraph::reserve`],
    /// [`Layout::reserve`]): a pass about to create a known number of them (a clone)
    /// then pays no growth of the per-entity maps one entry at a time. Changes nothing
    /// observable.
    pub fn reserve(&mut self, blocks: usize, insts: usize, values: usize) {
        self.dfg.reserve(blocks, insts, values);
        self.layout
            .reserve(self.dfg.num_blocks() + blocks, self.dfg.num_insts() + insts);
    }

    /// The `byval` description of parameter `index`, if it has one.
    pub fn byval_param(&self, index: usize) -> Option<ByValParam> {
        self.byval
            .iter()
            .find(|b| b.index as usize == index)
            .copied()
    }

    /// An empty function with no blocks.
    pub fn new(name: impl Into<String>, kind: FuncKind, sig: Signature) -> Function {
        Function {
            name: name.into(),
            kind,
            sig,
            convergent: false,
            must_progress: false,
            any_nan: false,
            internal: false,
            inline: InlineHint::Default,
            dfg: DataFlowGraph::new(),
            layout: Layout::new(),
            slots: PrimaryMap::new(),
            byval: Vec::new(),
            loop_attrs: FxHashMap::default(),
        }
    }

    /// The attributes of the loop headed by `header` (empty for any other block).
    pub fn loop_attrs(&self, header: Block) -> LoopAttrs {
        self.loop_attrs.get(&header).copied().unwrap_or_default()
    }

    /// Set the attributes of the loop headed by `header` (empty ones remove the entry).
    pub fn set_loop_attrs(&mut self, header: Block, attrs: LoopAttrs) {
        if attrs.is_empty() {
            self.loop_attrs.remove(&header);
        } else {
            self.loop_attrs.insert(header, attrs);
        }
    }

    /// The loop headed by `from` is now headed by `to` (rotation): its attributes move.
    pub fn move_loop_attrs(&mut self, from: Block, to: Block) {
        if from != to {
            if let Some(a) = self.loop_attrs.remove(&from) {
                self.loop_attrs.insert(to, a);
            }
        }
    }

    /// The entry block (first in layout).
    pub fn entry_block(&self) -> Option<Block> {
        self.layout.entry_block()
    }

    /// The terminator of a block, if its last instruction is one.
    #[inline]
    pub fn terminator(&self, block: Block) -> Option<Inst> {
        let last = self.layout.last_inst(block)?;
        self.dfg.inst(last).opcode().is_terminator().then_some(last)
    }

    /// Successor blocks of `block` in branch order, repeats included.
    pub fn successors(&self, block: Block) -> Vec<Block> {
        match self.terminator(block) {
            Some(t) => self.dfg.successors(t),
            None => Vec::new(),
        }
    }

    /// Call `f` on each successor edge of `block` in branch order.
    pub fn for_each_successor(&self, block: Block, mut f: impl FnMut(Block)) {
        if let Some(t) = self.terminator(block) {
            self.dfg.for_each_dest(t, |bc| f(bc.block));
        }
    }

    /// Create a block and append it to the layout.
    pub fn append_new_block(&mut self) -> Block {
        let b = self.dfg.make_block();
        self.layout.append_block(b);
        b
    }

    /// Create an instruction and append it to `block`; returns its result, if `ty` asks for one.
    pub fn append_inst(
        &mut self,
        block: Block,
        data: InstructionData,
        ty: Option<Type>,
    ) -> (Inst, Option<Value>) {
        let (inst, v) = self.make_inst(data, ty);
        self.layout.append_inst(inst, block);
        (inst, v)
    }

    /// Create an instruction and insert it before `before`.
    pub fn insert_inst_before(
        &mut self,
        before: Inst,
        data: InstructionData,
        ty: Option<Type>,
    ) -> (Inst, Option<Value>) {
        let (inst, v) = self.make_inst(data, ty);
        self.layout.insert_inst_before(inst, before);
        (inst, v)
    }

    /// Create an instruction (with a result of type `ty`, if given) outside the layout.
    fn make_inst(&mut self, data: InstructionData, ty: Option<Type>) -> (Inst, Option<Value>) {
        match ty {
            Some(t) => {
                let (i, v) = self.dfg.make_inst_with_result(data, t);
                (i, Some(v))
            }
            None => (self.dfg.make_inst(data), None),
        }
    }

    /// Number of instructions in the layout (linear in the function's size).
    pub fn num_laid_out_insts(&self) -> usize {
        self.layout
            .blocks()
            .map(|b| self.layout.block_insts(b).count())
            .sum()
    }

    /// Replace every use of `from` by `to` in the laid-out instructions (a linear scan;
    /// passes that rewrite many values at once should batch through a map instead).
    ///
    /// `gyre_transforms::utils::uses` has the batch version (`replace_uses_batch`: one
    /// sweep applying a whole alias map, chains resolved) and an index (`UseLists`) with
    /// which each replacement costs O(uses of `from`).
    pub fn replace_all_uses(&mut self, from: Value, to: Value) {
        let blocks: Vec<Block> = self.layout.blocks().collect();
        for b in blocks {
            let mut cur = self.layout.first_inst(b);
            while let Some(i) = cur {
                self.dfg
                    .map_inst_values(i, |v| if v == from { to } else { v });
                cur = self.layout.next_inst(i);
            }
        }
    }
}
