//! Building functions: an instruction builder and SSA construction for front ends.
//!
//! Two layers, as in Cranelift:
//!
//! - [`InstBuilder`]: one method per operation, named as the text format spells the
//!   opcode (`and`, `shl`, `lshr`, `ashr`; `ret` for `return`, a Rust keyword). Each
//!   creates the instruction, places it
//!   at the builder's position and returns its result value (or the instruction, for
//!   operations without a result). Result types are inferred as docs/gir-syntax.md
//!   describes: the first operand's type for arithmetic, `select`, `fma`, `ptradd`,
//!   `freeze` and the atomics; `i1` for comparisons; `i32` for special registers;
//!   `ptr.local` for `slot_addr`; the explicit type for constants, loads and casts.
//!   [`FuncCursor`] implements it for plain insertion (at the end of a block, or before
//!   an instruction) with no SSA bookkeeping.
//! - [`FunctionBuilder`]: SSA construction from mutable [`Variable`]s after Braun et al.,
//!   "Simple and Efficient Construction of Static Single Assignment Form" (CC 2013), the
//!   algorithm cranelift-frontend uses. Block parameters appear by themselves; trivial
//!   ones are removed (the paper's `tryRemoveTrivialPhi`).
//!
//! The builder methods do not type-check their operands: the verifier does. Misusing
//! the [`FunctionBuilder`] protocol (building with no current block, appending after a
//! terminator, branching to a sealed block) is a bug in the front end and panics.

use crate::dfg::ValueDef;
use crate::entities::{Block, FuncId, GlobalId, Inst, Slot, Value};
use crate::function::Function;
use crate::instructions::{
    AtomicOp, BlockCall, FloatCC, InstructionData, IntCC, IntFlags, JumpTableData, MemFlags,
    MemOrder, MemScope, Opcode, ShflMode, SpecialReg, ValueList, VoteMode,
};
use crate::module::{FuncRef, GlobalRef};
use crate::parser::FuncPositions;
use crate::types::{AddrSpace, Type};
use bitvec::vec::BitVec;
use core::fmt;
use cranelift_entity::packed_option::PackedOption;
use cranelift_entity::{entity_impl, EntityRef, PrimaryMap, SecondaryMap};
use rustc_hash::FxHashMap;

/// Sign-extend the low `bits` bits of `imm` (the storage convention of `iconst`).
fn sext_imm(imm: i64, bits: u32) -> i64 {
    if bits >= 64 {
        imm
    } else {
        let sh = 64 - bits;
        (imm << sh) >> sh
    }
}

macro_rules! binary_methods {
    ($($name:ident = $op:ident;)*) => {
        $(
            #[doc = concat!("`", stringify!($name), " a, b` (opcode `", stringify!($op),
                "`, no flags); the result has `a`'s type.")]
            fn $name(&mut self, a: Value, b: Value) -> Value {
                self.binary(Opcode::$op, a, b, IntFlags::NONE)
            }
        )*
    };
}

macro_rules! unary_methods {
    ($($name:ident = $op:ident;)*) => {
        $(
            #[doc = concat!("`", stringify!($name), " a` (opcode `", stringify!($op),
                "`); the result has `a`'s type.")]
            fn $name(&mut self, a: Value) -> Value {
                self.unary(Opcode::$op, a)
            }
        )*
    };
}

macro_rules! cast_methods {
    ($($name:ident = $op:ident;)*) => {
        $(
            #[doc = concat!("`", stringify!($name), ".ty arg`: a cast (opcode `",
                stringify!($op), "`) to `ty`.")]
            fn $name(&mut self, ty: Type, arg: Value) -> Value {
                self.cast(Opcode::$op, ty, arg)
            }
        )*
    };
}

/// One method per operation: create the instruction, insert it at the builder's
/// position, return its result.
///
/// Implementors supply access to the function and the placement
/// ([`insert_built`](InstBuilder::insert_built)); everything else is provided.
pub trait InstBuilder {
    /// The function being built.
    fn func(&self) -> &Function;

    /// Mutable access to the function being built.
    fn func_mut(&mut self) -> &mut Function;

    /// Place `inst`, already created in the data-flow graph, at the builder's position.
    fn insert_built(&mut self, inst: Inst);

    /// Create an instruction with a result of type `ty` (if given) and insert it.
    fn build(&mut self, data: InstructionData, ty: Option<Type>) -> (Inst, Option<Value>) {
        let dfg = &mut self.func_mut().dfg;
        let (inst, v) = match ty {
            Some(t) => {
                let (i, v) = dfg.make_inst_with_result(data, t);
                (i, Some(v))
            }
            None => (dfg.make_inst(data), None),
        };
        self.insert_built(inst);
        (inst, v)
    }

    /// Create and insert an instruction with a result of type `ty`; return the result.
    fn build_value(&mut self, data: InstructionData, ty: Type) -> Value {
        self.build(data, Some(ty))
            .1
            .expect("an instruction built with a type has a result")
    }

    /// Create and insert an instruction without a result.
    fn build_inst(&mut self, data: InstructionData) -> Inst {
        self.build(data, None).0
    }

    /// The type of `v` (for result-type inference).
    fn value_type(&self, v: Value) -> Type {
        self.func().dfg.value_type(v)
    }

    /// `iconst.ty imm`. `imm` is truncated to `ty`'s width and stored sign-extended
    /// (so `iconst(I8, 255)` is `-1`).
    fn iconst(&mut self, ty: Type, imm: i64) -> Value {
        let imm = sext_imm(imm, ty.bits());
        self.build_value(InstructionData::IntConst { imm }, ty)
    }

    /// `fconst.f32 x`.
    fn fconst_f32(&mut self, x: f32) -> Value {
        let bits = u64::from(x.to_bits());
        self.build_value(InstructionData::FloatConst { bits }, Type::F32)
    }

    /// `fconst.f64 x`.
    fn fconst_f64(&mut self, x: f64) -> Value {
        let bits = x.to_bits();
        self.build_value(InstructionData::FloatConst { bits }, Type::F64)
    }

    /// Any two-operand integer or float operation with integer flags (`nsw`, `nuw`,
    /// `exact`; pass [`IntFlags::NONE`] for floats). The result has `a`'s type.
    fn binary(&mut self, opcode: Opcode, a: Value, b: Value, flags: IntFlags) -> Value {
        debug_assert!(opcode.is_int_binary() || opcode.is_float_binary());
        let ty = self.value_type(a);
        self.build_value(
            InstructionData::Binary {
                opcode,
                args: [a, b],
                flags,
            },
            ty,
        )
    }

    /// `iadd` with flags, e.g. `iadd nsw`.
    fn iadd_flags(&mut self, a: Value, b: Value, flags: IntFlags) -> Value {
        self.binary(Opcode::Iadd, a, b, flags)
    }

    binary_methods! {
        iadd = Iadd; isub = Isub; imul = Imul; sdiv = Sdiv; udiv = Udiv; srem = Srem;
        urem = Urem; and = And; or = Or; xor = Xor; shl = Shl; lshr = Lshr;
        ashr = Ashr; smin = Smin; smax = Smax; umin = Umin; umax = Umax;
        fadd = Fadd; fsub = Fsub; fmul = Fmul; fdiv = Fdiv; frem = Frem; fmin = Fmin;
        fmax = Fmax; mul24 = Mul24; umul24 = Umul24; fdiv_approx = FdivApprox;
    }

    /// Any one-operand integer or float operation, or `freeze`. The result has `a`'s type.
    fn unary(&mut self, opcode: Opcode, a: Value) -> Value {
        debug_assert!(opcode.is_int_unary() || opcode.is_float_unary() || opcode == Opcode::Freeze);
        let ty = self.value_type(a);
        self.build_value(InstructionData::Unary { opcode, arg: a }, ty)
    }

    unary_methods! {
        popcnt = Popcnt; clz = Clz; ctz = Ctz; fneg = Fneg; fabs = Fabs; sqrt = Sqrt;
        floor = Floor; ceil = Ceil; ftrunc = Ftrunc; nearest = Nearest; freeze = Freeze;
        ex2_approx = Ex2Approx; lg2_approx = Lg2Approx; sin_approx = SinApprox;
        cos_approx = CosApprox; rsqrt_approx = RsqrtApprox;
    }

    /// `icmp cc a, b` (an `i1`).
    fn icmp(&mut self, cond: IntCC, a: Value, b: Value) -> Value {
        self.build_value(InstructionData::IntCompare { cond, args: [a, b] }, Type::I1)
    }

    /// `fcmp cc a, b` (an `i1`).
    fn fcmp(&mut self, cond: FloatCC, a: Value, b: Value) -> Value {
        self.build_value(
            InstructionData::FloatCompare { cond, args: [a, b] },
            Type::I1,
        )
    }

    /// `select c, a, b`: `a` if `c` else `b`, of `a`'s type.
    fn select(&mut self, c: Value, a: Value, b: Value) -> Value {
        let ty = self.value_type(a);
        self.build_value(
            InstructionData::Ternary {
                opcode: Opcode::Select,
                args: [c, a, b],
            },
            ty,
        )
    }

    /// `fma a, b, c` = `a*b+c` with one rounding, of `a`'s type.
    fn fma(&mut self, a: Value, b: Value, c: Value) -> Value {
        let ty = self.value_type(a);
        self.build_value(
            InstructionData::Ternary {
                opcode: Opcode::Fma,
                args: [a, b, c],
            },
            ty,
        )
    }

    /// Any cast (`sext`, `fptosi`, `addrspace_cast`, ...) of `arg` to `ty`.
    fn cast(&mut self, opcode: Opcode, ty: Type, arg: Value) -> Value {
        debug_assert!(opcode.is_cast());
        self.build_value(InstructionData::Unary { opcode, arg }, ty)
    }

    cast_methods! {
        sext = Sext; zext = Zext; trunc = Trunc; fptosi = Fptosi; fptoui = Fptoui;
        sitofp = Sitofp; uitofp = Uitofp; fpext = Fpext; fptrunc = Fptrunc;
        bitcast = Bitcast; ptrtoint = Ptrtoint; inttoptr = Inttoptr;
        addrspace_cast = AddrspaceCast;
    }

    /// `ptradd base, index, scale`: `base + sext(index) * scale` bytes, of `base`'s type.
    fn ptradd(&mut self, base: Value, index: Value, scale: u32) -> Value {
        let ty = self.value_type(base);
        self.build_value(
            InstructionData::PtrAdd {
                args: [base, index],
                scale,
            },
            ty,
        )
    }

    /// `load.ty ptr`.
    fn load(&mut self, ty: Type, ptr: Value) -> Value {
        self.build_value(
            InstructionData::Load {
                ptr,
                flags: MemFlags::default(),
            },
            ty,
        )
    }

    /// `load.ty volatile ptr`.
    fn load_volatile(&mut self, ty: Type, ptr: Value) -> Value {
        self.build_value(
            InstructionData::Load {
                ptr,
                flags: MemFlags { volatile: true },
            },
            ty,
        )
    }

    /// `store val, ptr`.
    fn store(&mut self, val: Value, ptr: Value) -> Inst {
        self.build_inst(InstructionData::Store {
            args: [val, ptr],
            flags: MemFlags::default(),
        })
    }

    /// `store volatile val, ptr`.
    fn store_volatile(&mut self, val: Value, ptr: Value) -> Inst {
        self.build_inst(InstructionData::Store {
            args: [val, ptr],
            flags: MemFlags { volatile: true },
        })
    }

    /// `atomic_<op> ptr, val`: returns the old value, of `val`'s type.
    fn atomic_rmw(&mut self, op: AtomicOp, ptr: Value, val: Value) -> Value {
        let ty = self.value_type(val);
        self.build_value(
            InstructionData::AtomicRmw {
                op,
                args: [ptr, val],
                order: MemOrder::Relaxed,
                scope: MemScope::Gpu,
            },
            ty,
        )
    }

    /// `atomic_cas ptr, expected, new`: returns the old value, of `expected`'s type.
    fn atomic_cas(&mut self, ptr: Value, expected: Value, new: Value) -> Value {
        let ty = self.value_type(expected);
        self.build_value(
            InstructionData::AtomicCas {
                args: [ptr, expected, new],
                order: MemOrder::Relaxed,
                scope: MemScope::Gpu,
            },
            ty,
        )
    }

    /// `global_addr @g`: a pointer into `space`, which must be the global's space (the
    /// builder does not see the module, so the caller says it).
    fn global_addr(&mut self, global: GlobalId, space: AddrSpace) -> Value {
        self.build_value(InstructionData::GlobalAddr { global }, Type::Ptr(space))
    }

    /// `global_addr @g` for a global named by a handle from its module
    /// ([`Module::push_global`](crate::Module::push_global),
    /// [`Module::global_ref`](crate::Module::global_ref)), which knows its space.
    fn global_addr_ref(&mut self, global: GlobalRef) -> Value {
        self.global_addr(global.id, global.space)
    }

    /// `slot_addr slotN` (a `ptr.local`).
    fn slot_addr(&mut self, slot: Slot) -> Value {
        self.build_value(
            InstructionData::SlotAddr { slot },
            Type::Ptr(AddrSpace::Local),
        )
    }

    /// Read a special register (an `i32`).
    fn sreg(&mut self, reg: SpecialReg) -> Value {
        self.build_value(InstructionData::Sreg { reg }, Type::I32)
    }

    /// `shfl_<mode> value, lane, clamp, mask`: the value read from another lane, of
    /// `value`'s type.
    fn shfl(
        &mut self,
        mode: ShflMode,
        value: Value,
        lane: Value,
        clamp: Value,
        mask: Value,
    ) -> Value {
        let ty = self.value_type(value);
        self.build_value(
            InstructionData::Shfl {
                mode,
                args: [value, lane, clamp, mask],
            },
            ty,
        )
    }

    /// `vote_<mode> pred, mask`: an `i1`, or an `i32` for `ballot`.
    fn vote(&mut self, mode: VoteMode, pred: Value, mask: Value) -> Value {
        let ty = if mode == VoteMode::Ballot {
            Type::I32
        } else {
            Type::I1
        };
        self.build_value(
            InstructionData::Vote {
                mode,
                args: [pred, mask],
            },
            ty,
        )
    }

    /// `warp_sync mask`.
    fn warp_sync(&mut self, mask: Value) -> Inst {
        self.build_inst(InstructionData::WarpSync { mask })
    }

    /// `vprintf fmt, args`: device `printf` of the format at `fmt` with the arguments
    /// packed at `args` (both generic pointers); the `i32` count of arguments read.
    fn vprintf(&mut self, fmt: Value, args: Value) -> Value {
        self.build_value(InstructionData::Vprintf { args: [fmt, args] }, Type::I32)
    }

    /// `assert_fail msg, file, line, func`: a failed device `assert`.
    fn assert_fail(&mut self, msg: Value, file: Value, line: Value, func: Value) -> Inst {
        self.build_inst(InstructionData::AssertFail {
            args: [msg, file, line, func],
        })
    }

    /// `fence <order> <scope>`.
    fn fence(&mut self, order: MemOrder, scope: MemScope) -> Inst {
        self.build_inst(InstructionData::Fence { order, scope })
    }

    /// `clock.T`: the thread's cycle counter (`i32` or `i64`).
    fn clock(&mut self, ty: Type) -> Value {
        self.build_value(
            InstructionData::Nullary {
                opcode: Opcode::Clock,
            },
            ty,
        )
    }

    /// `barrier`.
    fn barrier(&mut self) -> Inst {
        self.build_inst(InstructionData::Nullary {
            opcode: Opcode::Barrier,
        })
    }

    /// `call @func(args)`; `ret_ty` must be the callee's return type (the builder does
    /// not see the module).
    fn call(
        &mut self,
        func: FuncId,
        ret_ty: Option<Type>,
        args: &[Value],
    ) -> (Inst, Option<Value>) {
        let args = ValueList::from_slice(args, &mut self.func_mut().dfg.value_lists);
        self.build(InstructionData::Call { func, args }, ret_ty)
    }

    /// `call @func(args)` for a callee named by a handle from its module
    /// ([`Module::push_function`](crate::Module::push_function),
    /// [`Module::func_ref`](crate::Module::func_ref)), which knows its return type.
    /// Returns the call and its result (`None` for a callee without one).
    fn call_ref(&mut self, callee: FuncRef, args: &[Value]) -> (Inst, Option<Value>) {
        self.call(callee.id, callee.ret, args)
    }

    /// `jump block(args)`.
    fn jump(&mut self, block: Block, args: &[Value]) -> Inst {
        let dest = BlockCall::new(block, args, &mut self.func_mut().dfg.value_lists);
        self.build_inst(InstructionData::Jump { dest })
    }

    /// `brif c, then(then_args), else(else_args)`.
    fn brif(
        &mut self,
        c: Value,
        then_block: Block,
        then_args: &[Value],
        else_block: Block,
        else_args: &[Value],
    ) -> Inst {
        let pool = &mut self.func_mut().dfg.value_lists;
        let t = BlockCall::new(then_block, then_args, pool);
        let e = BlockCall::new(else_block, else_args, pool);
        self.build_inst(InstructionData::Brif {
            arg: c,
            blocks: [t, e],
        })
    }

    /// `br_table v, default(default_args), [k: block(args), ...]`.
    fn br_table(
        &mut self,
        v: Value,
        default: Block,
        default_args: &[Value],
        cases: &[(i64, Block, &[Value])],
    ) -> Inst {
        let dfg = &mut self.func_mut().dfg;
        let default = BlockCall::new(default, default_args, &mut dfg.value_lists);
        let cases = cases
            .iter()
            .map(|&(k, b, args)| (k, BlockCall::new(b, args, &mut dfg.value_lists)))
            .collect();
        let table = dfg.make_jump_table(JumpTableData::new(default, cases));
        self.build_inst(InstructionData::BrTable { arg: v, table })
    }

    /// `return` or `return v`.
    fn ret(&mut self, v: Option<Value>) -> Inst {
        let args = ValueList::from_slice(v.as_slice(), &mut self.func_mut().dfg.value_lists);
        self.build_inst(InstructionData::Return { args })
    }

    /// `unreachable`.
    fn unreachable(&mut self) -> Inst {
        self.build_inst(InstructionData::Nullary {
            opcode: Opcode::Unreachable,
        })
    }
}

/// Where a [`FuncCursor`] inserts.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum CursorPosition {
    /// Nowhere: inserting panics.
    Nowhere,
    /// Before this instruction.
    Before(Inst),
    /// At the end of this block.
    AtEnd(Block),
}

/// A position in a function at which an [`InstBuilder`] inserts, with no SSA
/// bookkeeping (Cranelift's `FuncCursor`).
pub struct FuncCursor<'f> {
    /// The function being edited.
    pub func: &'f mut Function,
    pos: CursorPosition,
}

impl<'f> FuncCursor<'f> {
    /// A cursor pointing nowhere.
    pub fn new(func: &'f mut Function) -> Self {
        FuncCursor {
            func,
            pos: CursorPosition::Nowhere,
        }
    }

    /// This cursor, moved to the end of `block` (which must be in the layout).
    pub fn at_end(mut self, block: Block) -> Self {
        self.goto_end(block);
        self
    }

    /// This cursor, moved to insert before `inst` (which must be in the layout).
    pub fn before_inst(mut self, inst: Inst) -> Self {
        self.goto_before(inst);
        self
    }

    /// Insert at the end of `block` from now on.
    pub fn goto_end(&mut self, block: Block) {
        self.pos = CursorPosition::AtEnd(block);
    }

    /// Insert before `inst` from now on.
    pub fn goto_before(&mut self, inst: Inst) {
        self.pos = CursorPosition::Before(inst);
    }

    /// The current position.
    pub fn position(&self) -> CursorPosition {
        self.pos
    }

    /// The block the cursor inserts into.
    pub fn current_block(&self) -> Option<Block> {
        match self.pos {
            CursorPosition::Nowhere => None,
            CursorPosition::Before(i) => self.func.layout.inst_block(i),
            CursorPosition::AtEnd(b) => Some(b),
        }
    }
}

impl InstBuilder for FuncCursor<'_> {
    fn func(&self) -> &Function {
        self.func
    }

    fn func_mut(&mut self) -> &mut Function {
        self.func
    }

    fn insert_built(&mut self, inst: Inst) {
        match self.pos {
            CursorPosition::Nowhere => panic!("FuncCursor: inserting {inst} with no position"),
            CursorPosition::Before(at) => self.func.layout.insert_inst_before(inst, at),
            CursorPosition::AtEnd(b) => self.func.layout.append_inst(inst, b),
        }
    }
}

/// A mutable variable of the front end's source language; [`FunctionBuilder`] turns
/// its definitions and uses into SSA values.
#[derive(Copy, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Variable(u32);
entity_impl!(Variable, "var");

/// A misuse of the [`FunctionBuilder`] protocol found by [`FunctionBuilder::finalize`].
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum BuilderError {
    /// A block in the layout (or a branch target) was never sealed.
    UnsealedBlock(Block),
    /// A block in the layout does not end in a terminator.
    UnterminatedBlock(Block),
    /// A branch targets a block that was never switched to (so it is not in the layout).
    BlockNotInLayout(Block),
}

impl fmt::Display for BuilderError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BuilderError::UnsealedBlock(b) => write!(f, "{b} was never sealed"),
            BuilderError::UnterminatedBlock(b) => write!(f, "{b} has no terminator"),
            BuilderError::BlockNotInLayout(b) => {
                write!(f, "{b} is a branch target but was never switched to")
            }
        }
    }
}

impl std::error::Error for BuilderError {}

/// A branch from `block` (its terminator `inst`) to the block owning this record.
#[derive(Copy, Clone, Debug)]
struct PredEdge {
    block: Block,
    inst: Inst,
}

/// Per-block SSA construction state.
#[derive(Clone, Default)]
struct SsaBlock {
    /// All predecessors are known (the paper's "sealed").
    sealed: bool,
    /// Has a terminator been built through the builder?
    filled: bool,
    /// Did the builder add parameters (so `finalize` must look for trivial ones)?
    has_phis: bool,
    /// Predecessor branches, one per branch instruction (an instruction that reaches
    /// this block on two edges appears once; both edges get arguments).
    preds: Vec<PredEdge>,
    /// Parameters added while unsealed, completed by `seal_block` (the paper's
    /// `incompletePhis`), in creation order.
    incomplete: Vec<(Variable, Value)>,
}

/// A step of the iterative variable lookup (the paper's mutually recursive
/// `readVariable` / `addPhiOperands`, unrolled onto an explicit stack).
#[derive(Copy, Clone)]
enum Frame {
    /// Find the variable's value at the end of `block`; pushes one result.
    Lookup(Block),
    /// Record the top result as the variable's value in a single-predecessor block.
    Record(Block),
    /// Pop one result per predecessor of `block`, pass them as arguments of `param`,
    /// then try to remove `param`; pushes the (possibly replaced) value.
    FinishPhi { block: Block, param: Value },
}

fn bit(set: &BitVec, i: usize) -> bool {
    set.get(i).is_some_and(|b| *b)
}

fn set_bit(set: &mut BitVec, i: usize, v: bool) {
    if i >= set.len() {
        if !v {
            return;
        }
        set.resize(i + 1, false);
    }
    set.set(i, v);
}

/// SSA construction for front ends (Braun et al. 2013), in the style of
/// cranelift-frontend.
///
/// Protocol: [`create_block`](Self::create_block), [`switch_to_block`](Self::switch_to_block)
/// (which also appends the block to the layout), build instructions through
/// [`InstBuilder`], [`def_var`](Self::def_var) / [`use_var`](Self::use_var) freely, and
/// [`seal_block`](Self::seal_block) each block once all branches to it have been built
/// (or [`seal_all_blocks`](Self::seal_all_blocks) at the end). Then
/// [`finalize`](Self::finalize): it removes trivial parameters and rewrites their uses,
/// so the function is only well-formed after it.
///
/// Block parameters appear by themselves: a use in an unsealed block adds one (completed
/// when the block is sealed); a use in a sealed block with several predecessors adds one
/// and passes the variable's value on every incoming edge (both edges, when one branch
/// reaches the block twice). Explicit parameters made with
/// [`append_block_param`](Self::append_block_param) must come before any the builder
/// adds, i.e. be appended before the first use of a variable in that block; branches
/// pass only the explicit arguments.
///
/// A use of a variable that no path defines (reaching a block with no predecessors, the
/// entry included) yields a zero of the variable's type (`iconst 0`, `fconst 0.0`, a
/// null pointer via `inttoptr`) inserted at the top of that block, as cranelift-frontend
/// does; this keeps front ends simple and the IR defined.
///
/// Lookups and trivial-parameter removal use explicit stacks, so a chain of a million
/// single-predecessor blocks does not grow the native stack. A lookup costs time
/// proportional to the blocks it walks, and caches its result in each of them.
pub struct FunctionBuilder<'f> {
    /// The function being built.
    pub func: &'f mut Function,
    vars: PrimaryMap<Variable, Type>,
    /// The current definition of a variable per block (the paper's `currentDef`), also
    /// caching the results of non-local lookups. Sparse: front ends (and the generator)
    /// declare many short-lived variables, and a dense map per variable would cost
    /// variables x blocks.
    defs: FxHashMap<(Variable, Block), Value>,
    blocks: SecondaryMap<Block, SsaBlock>,
    current: Option<Block>,
    /// Trivial parameters replaced by another value (a union-find without ranks).
    alias: SecondaryMap<Value, PackedOption<Value>>,
    num_aliases: usize,
    /// Values that are builder-made parameters.
    is_phi: BitVec,
    /// For a builder parameter, the completed parameters that take it as an argument
    /// (the paper's `phi.users` restricted to phis; other uses are rewritten at the end).
    phi_users: FxHashMap<Value, Vec<Value>>,
    /// Blocks marked while a single-predecessor lookup passes through them, to detect
    /// cycles of single-predecessor blocks (only possible in unreachable code).
    visiting: BitVec,
    frames: Vec<Frame>,
    results: Vec<Value>,
    worklist: Vec<Value>,
    scratch: Vec<Value>,
    targets: Vec<Block>,
    /// The source position given to instructions built now (`u32::MAX`: none).
    srcloc: u32,
    /// Source positions recorded while `srcloc` was set.
    positions: FuncPositions,
}

impl<'f> FunctionBuilder<'f> {
    /// A builder adding to `func` (usually empty, with its signature set).
    pub fn new(func: &'f mut Function) -> Self {
        FunctionBuilder {
            func,
            vars: PrimaryMap::new(),
            defs: FxHashMap::default(),
            blocks: SecondaryMap::new(),
            current: None,
            alias: SecondaryMap::new(),
            num_aliases: 0,
            is_phi: BitVec::new(),
            phi_users: FxHashMap::default(),
            visiting: BitVec::new(),
            frames: Vec::new(),
            results: Vec::new(),
            worklist: Vec::new(),
            scratch: Vec::new(),
            targets: Vec::new(),
            srcloc: u32::MAX,
            positions: FuncPositions::default(),
        }
    }

    /// Give the instructions built from now on the source position `offset` (a byte
    /// offset into the front end's source text), until the next `set_srcloc` or
    /// [`clear_srcloc`](Self::clear_srcloc). The first position set is also the
    /// function's, and a block takes the position current when it is first switched to.
    /// [`finalize_with_srclocs`](Self::finalize_with_srclocs) returns them, for a
    /// [`SourceMap`](crate::parser::SourceMap) that the verifier renders
    /// ([`VerifierErrors::render`](crate::verifier::VerifierErrors::render)) as
    /// `file:line:col` of that source. Instructions the builder adds by itself (the
    /// zero of a variable no path defines) have no position.
    pub fn set_srcloc(&mut self, offset: u32) {
        if self.positions.header().is_none() {
            self.positions.header = offset;
        }
        self.srcloc = offset;
    }

    /// Build the following instructions without a source position.
    pub fn clear_srcloc(&mut self) {
        self.srcloc = u32::MAX;
    }

    /// The source position given to instructions built now.
    pub fn srcloc(&self) -> Option<u32> {
        (self.srcloc != u32::MAX).then_some(self.srcloc)
    }

    /// Declare a variable of type `ty`.
    pub fn declare_var(&mut self, ty: Type) -> Variable {
        self.vars.push(ty)
    }

    /// The type of a variable.
    pub fn var_type(&self, var: Variable) -> Type {
        self.vars[var]
    }

    /// Create a block (it joins the layout when first switched to).
    pub fn create_block(&mut self) -> Block {
        self.func.dfg.make_block()
    }

    /// Append an explicit parameter to `block` (before any the builder adds).
    pub fn append_block_param(&mut self, block: Block, ty: Type) -> Value {
        debug_assert!(
            !self.blocks[block].has_phis,
            "explicit parameters must precede builder-made ones"
        );
        self.func.dfg.append_block_param(block, ty)
    }

    /// Give `block` one parameter per function parameter (for the entry block).
    pub fn append_block_params_for_function_params(&mut self, block: Block) {
        for i in 0..self.func.sig.params.len() {
            let ty = self.func.sig.params[i];
            self.append_block_param(block, ty);
        }
    }

    /// The parameters of `block` (explicit and builder-made so far).
    pub fn block_params(&self, block: Block) -> &[Value] {
        self.func.dfg.block_params(block)
    }

    /// Build into `block` from now on, appending it to the layout if needed.
    pub fn switch_to_block(&mut self, block: Block) {
        if !self.func.layout.is_block_inserted(block) {
            self.func.layout.append_block(block);
        }
        if self.srcloc != u32::MAX && self.positions.block(block).is_none() {
            self.positions.blocks[block] = self.srcloc;
        }
        self.current = Some(block);
    }

    /// The block being built.
    pub fn current_block(&self) -> Option<Block> {
        self.current
    }

    /// Has `block` been sealed?
    pub fn is_sealed(&self, block: Block) -> bool {
        self.blocks[block].sealed
    }

    /// Does `block` end in a terminator built through this builder?
    pub fn is_filled(&self, block: Block) -> bool {
        self.blocks[block].filled
    }

    /// Is the current block already terminated (so nothing more can be appended)?
    pub fn is_unreachable_position(&self) -> bool {
        self.current.is_none_or(|b| self.blocks[b].filled)
    }

    /// The predecessor blocks of `block` known so far, one per branch.
    pub fn predecessors(&self, block: Block) -> impl Iterator<Item = Block> + '_ {
        self.blocks[block].preds.iter().map(|e| e.block)
    }

    /// Define `var` as `val` at the current position.
    ///
    /// # Panics
    /// With no current block.
    pub fn def_var(&mut self, var: Variable, val: Value) {
        debug_assert_eq!(
            self.func.dfg.value_type(val),
            self.vars[var],
            "def_var: {val} has the wrong type for {var}"
        );
        let block = self.current.expect("def_var with no current block");
        self.defs.insert((var, block), val);
    }

    /// The value of `var` at the current position, adding block parameters as needed.
    ///
    /// # Panics
    /// With no current block.
    pub fn use_var(&mut self, var: Variable) -> Value {
        let block = self.current.expect("use_var with no current block");
        debug_assert!(self.frames.is_empty() && self.results.is_empty());
        self.frames.push(Frame::Lookup(block));
        self.run(var);
        self.results.pop().expect("a lookup yields one value")
    }

    /// Declare that every predecessor of `block` has been built; completes the
    /// parameters added while it was unsealed. Sealing twice is harmless.
    pub fn seal_block(&mut self, block: Block) {
        if self.blocks[block].sealed {
            return;
        }
        self.blocks[block].sealed = true;
        let incomplete = core::mem::take(&mut self.blocks[block].incomplete);
        for &(var, param) in &incomplete {
            debug_assert!(self.frames.is_empty() && self.results.is_empty());
            self.push_phi_operands(block, param);
            self.run(var);
            self.results
                .pop()
                .expect("a phi completion yields one value");
        }
    }

    /// Seal every block created so far.
    pub fn seal_all_blocks(&mut self) {
        for i in 0..self.func.dfg.num_blocks() {
            self.seal_block(Block::new(i));
        }
    }

    /// Finish construction: remove the trivial parameters found during construction
    /// (and their branch arguments) and rewrite every use of them.
    ///
    /// Errors if a laid-out block or branch target was never sealed, a laid-out block
    /// has no terminator, or a branch targets a block that is not in the layout.
    pub fn finalize(mut self) -> Result<(), BuilderError> {
        self.finish()
    }

    /// [`finalize`](Self::finalize), and return the source positions given with
    /// [`set_srcloc`](Self::set_srcloc), for [`SourceMap::set_function`].
    ///
    /// [`SourceMap::set_function`]: crate::parser::SourceMap::set_function
    pub fn finalize_with_srclocs(mut self) -> Result<FuncPositions, BuilderError> {
        self.finish()?;
        Ok(core::mem::take(&mut self.positions))
    }

    fn finish(&mut self) -> Result<(), BuilderError> {
        let layout_blocks: Vec<Block> = self.func.layout.blocks().collect();
        for &b in &layout_blocks {
            if !self.blocks[b].sealed {
                return Err(BuilderError::UnsealedBlock(b));
            }
        }
        for &b in &layout_blocks {
            let Some(t) = self.func.terminator(b) else {
                return Err(BuilderError::UnterminatedBlock(b));
            };
            let mut missing = None;
            self.func.dfg.for_each_dest(t, |bc| {
                if missing.is_none() && !self.func.layout.is_block_inserted(bc.block) {
                    missing = Some(bc.block);
                }
            });
            if let Some(m) = missing {
                return Err(BuilderError::BlockNotInLayout(m));
            }
        }
        if self.num_aliases == 0 {
            return Ok(());
        }
        for &b in &layout_blocks {
            if !self.blocks[b].has_phis {
                continue;
            }
            let n = self.func.dfg.block_params(b).len();
            for idx in (0..n).rev() {
                let p = self.func.dfg.block_params(b)[idx];
                if self.alias[p].is_none() {
                    continue;
                }
                self.func.dfg.remove_block_param(b, idx);
                for k in 0..self.blocks[b].preds.len() {
                    let inst = self.blocks[b].preds[k].inst;
                    self.func.dfg.for_each_dest_mut(inst, |bc, pool| {
                        if bc.block == b {
                            bc.args.remove(idx, pool);
                        }
                    });
                }
            }
        }
        let alias = &mut self.alias;
        for &b in &layout_blocks {
            let mut cur = self.func.layout.first_inst(b);
            while let Some(i) = cur {
                self.func.dfg.map_inst_values(i, |v| resolve(alias, v));
                cur = self.func.layout.next_inst(i);
            }
        }
        Ok(())
    }

    /// Push the frames that compute `param`'s operands and complete it.
    fn push_phi_operands(&mut self, block: Block, param: Value) {
        self.frames.push(Frame::FinishPhi { block, param });
        for e in self.blocks[block].preds.iter().rev() {
            self.frames.push(Frame::Lookup(e.block));
        }
    }

    fn add_phi(&mut self, block: Block, ty: Type) -> Value {
        let p = self.func.dfg.append_block_param(block, ty);
        set_bit(&mut self.is_phi, p.index(), true);
        self.blocks[block].has_phis = true;
        p
    }

    /// Run the lookup machine for `var` until its frame stack is empty.
    fn run(&mut self, var: Variable) {
        let ty = self.vars[var];
        while let Some(frame) = self.frames.pop() {
            match frame {
                Frame::Lookup(block) => {
                    if let Some(&v) = self.defs.get(&(var, block)) {
                        let v = resolve(&mut self.alias, v);
                        self.results.push(v);
                        continue;
                    }
                    if !self.blocks[block].sealed {
                        let p = self.add_phi(block, ty);
                        self.blocks[block].incomplete.push((var, p));
                        self.defs.insert((var, block), p);
                        self.results.push(p);
                        continue;
                    }
                    let npreds = self.blocks[block].preds.len();
                    let revisit = bit(&self.visiting, block.index());
                    if npreds == 0 {
                        let z = self.zero_at_top(block, ty);
                        self.defs.insert((var, block), z);
                        self.results.push(z);
                    } else if npreds == 1 && !revisit {
                        let pred = self.blocks[block].preds[0].block;
                        set_bit(&mut self.visiting, block.index(), true);
                        self.frames.push(Frame::Record(block));
                        self.frames.push(Frame::Lookup(pred));
                    } else {
                        // Several predecessors, or a cycle of single-predecessor blocks:
                        // define a parameter first so that cycles end here.
                        let p = self.add_phi(block, ty);
                        self.defs.insert((var, block), p);
                        self.push_phi_operands(block, p);
                    }
                }
                Frame::Record(block) => {
                    set_bit(&mut self.visiting, block.index(), false);
                    let v = *self.results.last().expect("a lookup result to record");
                    self.defs.insert((var, block), v);
                }
                Frame::FinishPhi { block, param } => {
                    let n = self.blocks[block].preds.len();
                    let start = self.results.len() - n;
                    for k in 0..n {
                        let arg = self.results[start + k];
                        let inst = self.blocks[block].preds[k].inst;
                        self.func.dfg.for_each_dest_mut(inst, |bc, pool| {
                            if bc.block == block {
                                bc.args.push(arg, pool);
                            }
                        });
                        if arg != param && bit(&self.is_phi, arg.index()) {
                            self.phi_users.entry(arg).or_default().push(param);
                        }
                    }
                    self.results.truncate(start);
                    let v = self.try_remove_trivial(param);
                    self.results.push(v);
                }
            }
        }
    }

    /// The paper's `tryRemoveTrivialPhi`, on a worklist: if every operand of `param`
    /// is one value (or `param` itself), alias `param` to it and re-examine the
    /// parameters that used `param`. Returns what `param` now stands for.
    fn try_remove_trivial(&mut self, param: Value) -> Value {
        debug_assert!(self.worklist.is_empty());
        self.worklist.push(param);
        while let Some(q) = self.worklist.pop() {
            if self.alias[q].is_some() {
                continue;
            }
            let ValueDef::Param(block, idx) = self.func.dfg.value_def(q) else {
                unreachable!("{q} is a builder-made block parameter");
            };
            self.scratch.clear();
            for e in &self.blocks[block].preds {
                let scratch = &mut self.scratch;
                self.func.dfg.for_each_dest(e.inst, |bc| {
                    if bc.block == block {
                        scratch.push(bc.args.as_slice(&self.func.dfg.value_lists)[idx as usize]);
                    }
                });
            }
            let mut same = None;
            let mut trivial = true;
            for k in 0..self.scratch.len() {
                let a = resolve(&mut self.alias, self.scratch[k]);
                if a == q || Some(a) == same {
                    continue;
                }
                if same.is_some() {
                    trivial = false;
                    break;
                }
                same = Some(a);
            }
            if !trivial {
                continue;
            }
            let ty = self.func.dfg.value_type(q);
            let same = match same {
                Some(s) => s,
                // Only reachable through itself: the value is undefined.
                None => self.zero_at_top(block, ty),
            };
            self.alias[q] = same.into();
            self.num_aliases += 1;
            if let Some(users) = self.phi_users.remove(&q) {
                self.worklist
                    .extend(users.iter().copied().filter(|&u| u != q));
                if bit(&self.is_phi, same.index()) {
                    self.phi_users.entry(same).or_default().extend(users);
                }
            }
        }
        resolve(&mut self.alias, param)
    }

    /// A zero of type `ty` at the top of `block` (the value of an undefined variable).
    fn zero_at_top(&mut self, block: Block, ty: Type) -> Value {
        let first = self.func.layout.first_inst(block);
        let put = |func: &mut Function, data: InstructionData, ty: Type| {
            match first {
                Some(f) => func.insert_inst_before(f, data, Some(ty)).1,
                None => func.append_inst(block, data, Some(ty)).1,
            }
            .expect("a constant has a result")
        };
        match ty {
            Type::F32 => put(self.func, InstructionData::FloatConst { bits: 0 }, ty),
            Type::F64 => put(self.func, InstructionData::FloatConst { bits: 0 }, ty),
            Type::Ptr(_) => {
                let z = put(self.func, InstructionData::IntConst { imm: 0 }, Type::I64);
                let data = InstructionData::Unary {
                    opcode: Opcode::Inttoptr,
                    arg: z,
                };
                put(self.func, data, ty)
            }
            _ => put(self.func, InstructionData::IntConst { imm: 0 }, ty),
        }
    }
}

/// Follow aliases to the representative value, compressing the path.
fn resolve(alias: &mut SecondaryMap<Value, PackedOption<Value>>, v: Value) -> Value {
    let mut root = v;
    while let Some(next) = alias[root].expand() {
        root = next;
    }
    let mut cur = v;
    while let Some(next) = alias[cur].expand() {
        if next != root {
            alias[cur] = root.into();
        }
        cur = next;
    }
    root
}

impl InstBuilder for FunctionBuilder<'_> {
    fn func(&self) -> &Function {
        self.func
    }

    fn func_mut(&mut self) -> &mut Function {
        self.func
    }

    /// Append to the current block; a branch registers its edges.
    ///
    /// # Panics
    /// With no current block, after the block's terminator, or when branching to a
    /// sealed block.
    fn insert_built(&mut self, inst: Inst) {
        let block = self
            .current
            .unwrap_or_else(|| panic!("building {inst} with no current block"));
        assert!(
            !self.blocks[block].filled,
            "building {inst} after the terminator of {block}"
        );
        self.func.layout.append_inst(inst, block);
        if self.srcloc != u32::MAX {
            self.positions.insts[inst] = self.srcloc;
        }
        let opcode = self.func.dfg.inst(inst).opcode();
        if !opcode.is_terminator() {
            return;
        }
        self.blocks[block].filled = true;
        self.targets.clear();
        let targets = &mut self.targets;
        self.func
            .dfg
            .for_each_dest(inst, |bc| targets.push(bc.block));
        // One record per (branch, target): arguments go to every edge at once.
        self.targets.sort_unstable();
        self.targets.dedup();
        for k in 0..self.targets.len() {
            let t = self.targets[k];
            assert!(
                !self.blocks[t].sealed,
                "branch from {block} to sealed block {t}"
            );
            self.blocks[t].preds.push(PredEdge { block, inst });
        }
    }
}

/// Structural checks shared by the builder and generator tests: branch argument counts
/// and types match parameters, every use is defined, and every def dominates its uses
/// (Cooper, Harvey and Kennedy's iterative dominators, over the reachable blocks).
#[cfg(test)]
pub(crate) mod test_util {
    use crate::dfg::ValueDef;
    use crate::entities::{Block, Inst, Value};
    use crate::function::Function;
    use cranelift_entity::SecondaryMap;

    /// Reverse post-order of the reachable blocks, by an explicit-stack DFS.
    pub(crate) fn rpo(f: &Function) -> Vec<Block> {
        let Some(entry) = f.entry_block() else {
            return Vec::new();
        };
        let mut seen: SecondaryMap<Block, bool> = SecondaryMap::new();
        let mut post = Vec::new();
        let mut stack: Vec<(Block, Vec<Block>, usize)> = vec![(entry, f.successors(entry), 0)];
        seen[entry] = true;
        while let Some(top) = stack.last_mut() {
            if top.2 < top.1.len() {
                let s = top.1[top.2];
                top.2 += 1;
                if !seen[s] {
                    seen[s] = true;
                    let succ = f.successors(s);
                    stack.push((s, succ, 0));
                }
            } else {
                post.push(top.0);
                stack.pop();
            }
        }
        post.reverse();
        post
    }

    /// Immediate dominators of the reachable blocks (entry maps to itself).
    pub(crate) fn idoms(f: &Function) -> (Vec<Block>, SecondaryMap<Block, Option<Block>>) {
        let order = rpo(f);
        let mut num: SecondaryMap<Block, usize> = SecondaryMap::with_default(usize::MAX);
        for (i, &b) in order.iter().enumerate() {
            num[b] = i;
        }
        let mut preds: SecondaryMap<Block, Vec<Block>> = SecondaryMap::new();
        for &b in &order {
            for s in f.successors(b) {
                preds[s].push(b);
            }
        }
        let mut idom: SecondaryMap<Block, Option<Block>> = SecondaryMap::new();
        if order.is_empty() {
            return (order, idom);
        }
        idom[order[0]] = Some(order[0]);
        let mut changed = true;
        while changed {
            changed = false;
            for &b in &order[1..] {
                let mut new: Option<Block> = None;
                for &p in &preds[b] {
                    if idom[p].is_none() {
                        continue;
                    }
                    new = Some(match new {
                        None => p,
                        Some(mut a) => {
                            let mut c = p;
                            while a != c {
                                while num[a] > num[c] {
                                    a = idom[a].unwrap();
                                }
                                while num[c] > num[a] {
                                    c = idom[c].unwrap();
                                }
                            }
                            a
                        }
                    });
                }
                if new != idom[b] {
                    idom[b] = new;
                    changed = true;
                }
            }
        }
        (order, idom)
    }

    /// Pre/post numbers of the dominator tree, for O(1) dominance queries.
    pub(crate) struct DomTree {
        pre: SecondaryMap<Block, usize>,
        post: SecondaryMap<Block, usize>,
    }

    impl DomTree {
        pub(crate) fn new(f: &Function) -> (Vec<Block>, DomTree) {
            let (order, idom) = idoms(f);
            let mut children: SecondaryMap<Block, Vec<Block>> = SecondaryMap::new();
            for &b in order.iter().skip(1) {
                children[idom[b].unwrap()].push(b);
            }
            let mut t = DomTree {
                pre: SecondaryMap::with_default(usize::MAX),
                post: SecondaryMap::with_default(usize::MAX),
            };
            let mut clock = 0;
            if let Some(&root) = order.first() {
                let mut stack = vec![(root, 0usize)];
                t.pre[root] = clock;
                clock += 1;
                while let Some(top) = stack.last_mut() {
                    let (b, k) = *top;
                    if k < children[b].len() {
                        top.1 += 1;
                        let c = children[b][k];
                        t.pre[c] = clock;
                        clock += 1;
                        stack.push((c, 0));
                    } else {
                        t.post[b] = clock;
                        clock += 1;
                        stack.pop();
                    }
                }
            }
            (order, t)
        }

        /// Does `a` dominate `b` (both reachable)?
        pub(crate) fn dominates(&self, a: Block, b: Block) -> bool {
            self.pre[a] <= self.pre[b] && self.post[b] <= self.post[a]
        }
    }

    /// Check the function; the error names the first problem found.
    pub(crate) fn check_structure(f: &Function) -> Result<(), String> {
        crate::verifier::verify_function(f, None).map_err(|e| format!("verifier:\n{e}"))?;
        let (order, dom) = DomTree::new(f);
        let mut pos: SecondaryMap<Inst, usize> = SecondaryMap::new();
        for b in f.layout.blocks() {
            let insts: Vec<Inst> = f.layout.block_insts(b).collect();
            let Some(&last) = insts.last() else {
                return Err(format!("{b} is empty"));
            };
            for (k, &i) in insts.iter().enumerate() {
                pos[i] = k;
                let term = f.dfg.inst(i).opcode().is_terminator();
                if term != (i == last) {
                    return Err(format!("{b}: terminator misplaced at {i}"));
                }
            }
            let mut err = None;
            f.dfg.for_each_dest(last, |bc| {
                let params = f.dfg.block_params(bc.block);
                let args = f.dfg.block_call_args(bc);
                if !f.layout.is_block_inserted(bc.block) {
                    err = Some(format!("{last} targets {} outside the layout", bc.block));
                } else if params.len() != args.len() {
                    err = Some(format!(
                        "{last} passes {} args to {} with {} params",
                        args.len(),
                        bc.block,
                        params.len()
                    ));
                } else if params
                    .iter()
                    .zip(args)
                    .any(|(&p, &a)| f.dfg.value_type(p) != f.dfg.value_type(a))
                {
                    err = Some(format!("{last}: argument type mismatch to {}", bc.block));
                }
            });
            if let Some(e) = err {
                return Err(e);
            }
        }
        for &b in &order {
            for i in f.layout.block_insts(b) {
                let mut err = None;
                f.dfg.for_each_inst_value(i, |v: Value| {
                    if err.is_some() {
                        return;
                    }
                    let ok = match f.dfg.value_def(v) {
                        ValueDef::Detached => false,
                        ValueDef::Param(db, _) => {
                            f.layout.is_block_inserted(db)
                                && dom.pre[db] != usize::MAX
                                && dom.dominates(db, b)
                        }
                        ValueDef::Result(di) => match f.layout.inst_block(di) {
                            None => false,
                            Some(db) if db == b => pos[di] < pos[i],
                            Some(db) => dom.pre[db] != usize::MAX && dom.dominates(db, b),
                        },
                    };
                    if !ok {
                        err = Some(format!("{i} in {b} uses {v}, not dominated by its def"));
                    }
                });
                if let Some(e) = err {
                    return Err(e);
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::test_util::check_structure;
    use super::*;
    use crate::function::{FuncKind, Signature};

    fn func(params: &[Type]) -> (Function, Block) {
        let mut f = Function::new(
            "t",
            FuncKind::Device,
            Signature {
                params: params.to_vec(),
                ret: None,
            },
        );
        let b = f.append_new_block();
        for &t in params {
            f.dfg.append_block_param(b, t);
        }
        (f, b)
    }

    fn def_inst(f: &Function, v: Value) -> Inst {
        match f.dfg.value_def(v) {
            ValueDef::Result(i) => i,
            d => panic!("{v} is not an instruction result: {d:?}"),
        }
    }

    /// Check opcode, result type and value operands of the instruction defining `v`.
    fn expect(f: &Function, v: Value, op: Opcode, ty: Type, args: &[Value]) {
        let i = def_inst(f, v);
        assert_eq!(f.dfg.inst(i).opcode(), op, "{v}");
        assert_eq!(f.dfg.value_type(v), ty, "{v} ({op})");
        assert_eq!(f.dfg.inst_args(i), args, "{v} ({op})");
    }

    #[test]
    fn every_method_builds_its_instruction() {
        use AddrSpace::*;
        let types = [
            Type::I32,
            Type::I32,
            Type::F32,
            Type::F64,
            Type::Ptr(Global),
            Type::I1,
            Type::I64,
        ];
        let (mut f, b) = func(&types);
        let p: Vec<Value> = f.dfg.block_params(b).to_vec();
        let (a, bb, x, d, ptr, c, l) = (p[0], p[1], p[2], p[3], p[4], p[5], p[6]);
        let slot = f
            .slots
            .push(crate::function::SlotData { size: 8, align: 4 });
        let mut cur = FuncCursor::new(&mut f).at_end(b);

        let k = cur.iconst(Type::I8, 255);
        let k2 = cur.iconst(Type::I64, -7);
        let fc = cur.fconst_f32(1.5);
        let fd = cur.fconst_f64(-2.25);
        let int_bin: Vec<(Value, Opcode)> = vec![
            (cur.iadd(a, bb), Opcode::Iadd),
            (cur.isub(a, bb), Opcode::Isub),
            (cur.imul(a, bb), Opcode::Imul),
            (cur.sdiv(a, bb), Opcode::Sdiv),
            (cur.udiv(a, bb), Opcode::Udiv),
            (cur.srem(a, bb), Opcode::Srem),
            (cur.urem(a, bb), Opcode::Urem),
            (cur.and(a, bb), Opcode::And),
            (cur.or(a, bb), Opcode::Or),
            (cur.xor(a, bb), Opcode::Xor),
            (cur.shl(a, bb), Opcode::Shl),
            (cur.lshr(a, bb), Opcode::Lshr),
            (cur.ashr(a, bb), Opcode::Ashr),
            (cur.smin(a, bb), Opcode::Smin),
            (cur.smax(a, bb), Opcode::Smax),
            (cur.umin(a, bb), Opcode::Umin),
            (cur.umax(a, bb), Opcode::Umax),
        ];
        let fl_bin: Vec<(Value, Opcode)> = vec![
            (cur.fadd(x, x), Opcode::Fadd),
            (cur.fsub(x, x), Opcode::Fsub),
            (cur.fmul(x, x), Opcode::Fmul),
            (cur.fdiv(x, x), Opcode::Fdiv),
            (cur.frem(x, x), Opcode::Frem),
            (cur.fmin(x, x), Opcode::Fmin),
            (cur.fmax(x, x), Opcode::Fmax),
        ];
        let flagged = cur.iadd_flags(a, bb, IntFlags::NSW.union(IntFlags::NUW));
        let exact = cur.binary(Opcode::Udiv, l, l, IntFlags::EXACT);
        let int_un = vec![
            (cur.popcnt(a), Opcode::Popcnt),
            (cur.clz(a), Opcode::Clz),
            (cur.ctz(a), Opcode::Ctz),
            (cur.freeze(a), Opcode::Freeze),
        ];
        let fl_un = vec![
            (cur.fneg(d), Opcode::Fneg),
            (cur.fabs(d), Opcode::Fabs),
            (cur.sqrt(d), Opcode::Sqrt),
            (cur.floor(d), Opcode::Floor),
            (cur.ceil(d), Opcode::Ceil),
            (cur.ftrunc(d), Opcode::Ftrunc),
            (cur.nearest(d), Opcode::Nearest),
        ];
        let ic = cur.icmp(IntCC::Slt, a, bb);
        let fcmp = cur.fcmp(FloatCC::Uno, x, x);
        let sel = cur.select(c, x, x);
        let fma = cur.fma(d, d, d);
        let casts = vec![
            (cur.sext(Type::I64, a), Opcode::Sext, Type::I64, a),
            (cur.zext(Type::I64, a), Opcode::Zext, Type::I64, a),
            (cur.trunc(Type::I16, a), Opcode::Trunc, Type::I16, a),
            (cur.fptosi(Type::I32, x), Opcode::Fptosi, Type::I32, x),
            (cur.fptoui(Type::I64, d), Opcode::Fptoui, Type::I64, d),
            (cur.sitofp(Type::F32, a), Opcode::Sitofp, Type::F32, a),
            (cur.uitofp(Type::F64, a), Opcode::Uitofp, Type::F64, a),
            (cur.fpext(Type::F64, x), Opcode::Fpext, Type::F64, x),
            (cur.fptrunc(Type::F32, d), Opcode::Fptrunc, Type::F32, d),
            (cur.bitcast(Type::I32, x), Opcode::Bitcast, Type::I32, x),
            (
                cur.ptrtoint(Type::I64, ptr),
                Opcode::Ptrtoint,
                Type::I64,
                ptr,
            ),
            (
                cur.inttoptr(Type::Ptr(Shared), l),
                Opcode::Inttoptr,
                Type::Ptr(Shared),
                l,
            ),
            (
                cur.addrspace_cast(Type::Ptr(Generic), ptr),
                Opcode::AddrspaceCast,
                Type::Ptr(Generic),
                ptr,
            ),
            (
                cur.cast(Opcode::Sext, Type::I64, bb),
                Opcode::Sext,
                Type::I64,
                bb,
            ),
        ];
        let pa = cur.ptradd(ptr, a, 4);
        let ld = cur.load(Type::F32, pa);
        let ldv = cur.load_volatile(Type::I64, pa);
        let st = cur.store(x, pa);
        let stv = cur.store_volatile(l, pa);
        let rmw = cur.atomic_rmw(AtomicOp::Add, pa, a);
        let cas = cur.atomic_cas(pa, l, l);
        let ga = cur.global_addr(GlobalId::new(3), Shared);
        let sa = cur.slot_addr(slot);
        let tid = cur.sreg(SpecialReg::TidX);
        let bar = cur.barrier();
        let (call_i, call_v) = cur.call(FuncId::new(1), Some(Type::F64), &[a, x]);
        let (call2, none) = cur.call(FuncId::new(2), None, &[]);
        let f = cur.func;

        let ki = def_inst(f, k);
        assert_eq!(f.dfg.inst(ki), &InstructionData::IntConst { imm: -1 });
        assert_eq!(f.dfg.value_type(k), Type::I8);
        assert_eq!(
            f.dfg.inst(def_inst(f, k2)),
            &InstructionData::IntConst { imm: -7 }
        );
        assert_eq!(
            f.dfg.inst(def_inst(f, fc)),
            &InstructionData::FloatConst {
                bits: u64::from(1.5f32.to_bits())
            }
        );
        assert_eq!(f.dfg.value_type(fc), Type::F32);
        assert_eq!(
            f.dfg.inst(def_inst(f, fd)),
            &InstructionData::FloatConst {
                bits: (-2.25f64).to_bits()
            }
        );
        assert_eq!(f.dfg.value_type(fd), Type::F64);
        for (v, op) in int_bin {
            expect(f, v, op, Type::I32, &[a, bb]);
        }
        for (v, op) in fl_bin {
            expect(f, v, op, Type::F32, &[x, x]);
        }
        expect(f, flagged, Opcode::Iadd, Type::I32, &[a, bb]);
        match f.dfg.inst(def_inst(f, flagged)) {
            InstructionData::Binary { flags, .. } => {
                assert!(flags.contains(IntFlags::NSW) && flags.contains(IntFlags::NUW))
            }
            other => panic!("{other:?}"),
        }
        expect(f, exact, Opcode::Udiv, Type::I64, &[l, l]);
        for (v, op) in int_un {
            expect(f, v, op, Type::I32, &[a]);
        }
        for (v, op) in fl_un {
            expect(f, v, op, Type::F64, &[d]);
        }
        expect(f, ic, Opcode::Icmp, Type::I1, &[a, bb]);
        expect(f, fcmp, Opcode::Fcmp, Type::I1, &[x, x]);
        expect(f, sel, Opcode::Select, Type::F32, &[c, x, x]);
        expect(f, fma, Opcode::Fma, Type::F64, &[d, d, d]);
        for (v, op, ty, arg) in casts {
            expect(f, v, op, ty, &[arg]);
        }
        expect(f, pa, Opcode::PtrAdd, Type::Ptr(Global), &[ptr, a]);
        expect(f, ld, Opcode::Load, Type::F32, &[pa]);
        expect(f, ldv, Opcode::Load, Type::I64, &[pa]);
        assert!(matches!(
            f.dfg.inst(def_inst(f, ldv)),
            InstructionData::Load {
                flags: MemFlags { volatile: true },
                ..
            }
        ));
        assert_eq!(f.dfg.inst(st).opcode(), Opcode::Store);
        assert_eq!(f.dfg.inst_args(st), &[x, pa]);
        assert_eq!(f.dfg.inst_result(st), None);
        assert!(matches!(
            f.dfg.inst(stv),
            InstructionData::Store {
                flags: MemFlags { volatile: true },
                ..
            }
        ));
        expect(f, rmw, Opcode::AtomicRmw, Type::I32, &[pa, a]);
        expect(f, cas, Opcode::AtomicCas, Type::I64, &[pa, l, l]);
        expect(f, ga, Opcode::GlobalAddr, Type::Ptr(Shared), &[]);
        expect(f, sa, Opcode::SlotAddr, Type::Ptr(Local), &[]);
        expect(f, tid, Opcode::Sreg, Type::I32, &[]);
        assert_eq!(f.dfg.inst(bar).opcode(), Opcode::Barrier);
        expect(f, call_v.unwrap(), Opcode::Call, Type::F64, &[a, x]);
        assert_eq!(def_inst(f, call_v.unwrap()), call_i);
        assert_eq!(none, None);
        assert_eq!(f.dfg.inst(call2).opcode(), Opcode::Call);
        // Everything went into the block, in order.
        assert_eq!(f.layout.last_inst(b), Some(call2));
    }

    #[test]
    fn terminators_and_cursor_positions() {
        let (mut f, b0) = func(&[Type::I32, Type::I1]);
        let (a, c) = (f.dfg.block_params(b0)[0], f.dfg.block_params(b0)[1]);
        let b1 = f.append_new_block();
        let x = f.dfg.append_block_param(b1, Type::I32);
        let b2 = f.append_new_block();
        let b3 = f.append_new_block();
        let mut cur = FuncCursor::new(&mut f).at_end(b0);
        let br = cur.brif(c, b1, &[a], b2, &[]);
        cur.goto_end(b1);
        let tab = cur.br_table(x, b2, &[], &[(0, b1, &[x]), (-3, b3, &[])]);
        cur.goto_end(b2);
        let r = cur.ret(Some(a));
        cur.goto_end(b3);
        let u = cur.unreachable();
        // Insert before the brif: lands between the params and the branch.
        cur.goto_before(br);
        assert_eq!(cur.current_block(), Some(b0));
        let k = cur.iconst(Type::I32, 5);
        let j = cur.jump(b1, &[k]);
        let f = cur.func;
        assert_eq!(
            f.layout.block_insts(b0).collect::<Vec<_>>(),
            vec![def_inst(f, k), j, br]
        );
        assert_eq!(f.successors(b0), vec![b1, b2]);
        match f.dfg.inst(br) {
            InstructionData::Brif { arg, blocks } => {
                assert_eq!(*arg, c);
                assert_eq!(f.dfg.block_call_args(&blocks[0]), &[a]);
                assert!(f.dfg.block_call_args(&blocks[1]).is_empty());
            }
            other => panic!("{other:?}"),
        }
        match f.dfg.inst(tab) {
            InstructionData::BrTable { arg, table } => {
                assert_eq!(*arg, x);
                let jt = f.dfg.jump_table(*table);
                assert_eq!(jt.default.block, b2);
                assert_eq!(jt.cases.len(), 2);
                assert_eq!((jt.cases[0].0, jt.cases[0].1.block), (0, b1));
                assert_eq!(f.dfg.block_call_args(&jt.cases[0].1), &[x]);
                assert_eq!((jt.cases[1].0, jt.cases[1].1.block), (-3, b3));
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(f.dfg.inst_args(r), &[a]);
        assert_eq!(f.dfg.inst(u).opcode(), Opcode::Unreachable);
        let mut g = f.clone();
        let mut cur = FuncCursor::new(&mut g).at_end(b2);
        let r2 = cur.ret(None);
        assert!(cur.func.dfg.inst_args(r2).is_empty());
    }

    fn new_func(params: &[Type]) -> Function {
        Function::new(
            "ssa",
            FuncKind::Device,
            Signature {
                params: params.to_vec(),
                ret: Some(Type::I32),
            },
        )
    }

    /// The arguments of every edge into `target`, per edge.
    fn incoming(f: &Function, target: Block) -> Vec<Vec<Value>> {
        let mut out = Vec::new();
        for b in f.layout.blocks() {
            if let Some(t) = f.terminator(b) {
                f.dfg.for_each_dest(t, |bc| {
                    if bc.block == target {
                        out.push(f.dfg.block_call_args(bc).to_vec());
                    }
                });
            }
        }
        out
    }

    #[test]
    fn diamond_merges_with_one_param() {
        let mut f = new_func(&[Type::I1, Type::I32]);
        let mut b = FunctionBuilder::new(&mut f);
        let x = b.declare_var(Type::I32);
        let y = b.declare_var(Type::I32);
        let entry = b.create_block();
        b.append_block_params_for_function_params(entry);
        b.switch_to_block(entry);
        b.seal_block(entry);
        let (c, p) = (b.block_params(entry)[0], b.block_params(entry)[1]);
        b.def_var(x, p);
        b.def_var(y, p);
        let (t, e, m) = (b.create_block(), b.create_block(), b.create_block());
        b.brif(c, t, &[], e, &[]);
        b.seal_block(t);
        b.seal_block(e);
        b.switch_to_block(t);
        let one = b.iconst(Type::I32, 1);
        b.def_var(x, one);
        b.jump(m, &[]);
        b.switch_to_block(e);
        b.jump(m, &[]);
        b.seal_block(m);
        b.switch_to_block(m);
        let xv = b.use_var(x);
        let yv = b.use_var(y);
        let s = b.iadd(xv, yv);
        b.ret(Some(s));
        b.finalize().unwrap();
        check_structure(&f).unwrap();
        // x differs between the arms: one parameter; y does not: none.
        assert_eq!(f.dfg.block_params(m), &[xv]);
        assert_eq!(yv, p);
        let mut inc = incoming(&f, m);
        inc.sort();
        let mut want = vec![vec![one], vec![p]];
        want.sort();
        assert_eq!(inc, want);
    }

    #[test]
    fn loop_with_unsealed_header() {
        let mut f = new_func(&[Type::I32]);
        let mut b = FunctionBuilder::new(&mut f);
        let i = b.declare_var(Type::I32);
        let n = b.declare_var(Type::I32);
        let entry = b.create_block();
        b.append_block_params_for_function_params(entry);
        b.switch_to_block(entry);
        b.seal_block(entry);
        let np = b.block_params(entry)[0];
        b.def_var(n, np);
        let zero = b.iconst(Type::I32, 0);
        b.def_var(i, zero);
        let (header, body, exit) = (b.create_block(), b.create_block(), b.create_block());
        b.jump(header, &[]);
        b.switch_to_block(header);
        // Header is unsealed: uses make incomplete parameters.
        let iv = b.use_var(i);
        let nv = b.use_var(n);
        assert_eq!(b.block_params(header).len(), 2);
        let c = b.icmp(IntCC::Slt, iv, nv);
        b.brif(c, body, &[], exit, &[]);
        b.seal_block(body);
        b.switch_to_block(body);
        let iv2 = b.use_var(i);
        assert_eq!(iv2, iv, "single predecessor: the header's value");
        let one = b.iconst(Type::I32, 1);
        let inc = b.iadd(iv2, one);
        b.def_var(i, inc);
        b.jump(header, &[]);
        b.seal_block(header);
        b.seal_block(exit);
        b.switch_to_block(exit);
        let out = b.use_var(i);
        b.ret(Some(out));
        b.finalize().unwrap();
        check_structure(&f).unwrap();
        // i is a real loop-carried value; n is loop-invariant and its parameter goes.
        assert_eq!(f.dfg.block_params(header), &[iv]);
        assert_eq!(out, iv);
        let cmp = def_inst(&f, c);
        assert_eq!(
            f.dfg.inst_args(cmp),
            &[iv, np],
            "uses of the trivial param rewritten"
        );
        let mut inc_args = incoming(&f, header);
        inc_args.sort();
        let mut want = vec![vec![zero], vec![inc]];
        want.sort();
        assert_eq!(inc_args, want);
    }

    /// The front-end demo: a doubly nested loop summing into a variable, with no block
    /// parameter written by hand.
    #[test]
    fn nested_loops_without_handwritten_params() {
        let mut f = new_func(&[Type::I32, Type::I32]);
        let mut b = FunctionBuilder::new(&mut f);
        let (i, j, sum) = (
            b.declare_var(Type::I32),
            b.declare_var(Type::I32),
            b.declare_var(Type::I32),
        );
        let (n, m) = (b.declare_var(Type::I32), b.declare_var(Type::I32));
        let entry = b.create_block();
        b.append_block_params_for_function_params(entry);
        b.switch_to_block(entry);
        b.seal_block(entry);
        let (pn, pm) = (b.block_params(entry)[0], b.block_params(entry)[1]);
        b.def_var(n, pn);
        b.def_var(m, pm);
        let zero = b.iconst(Type::I32, 0);
        b.def_var(i, zero);
        b.def_var(sum, zero);
        let outer = b.create_block();
        let outer_body = b.create_block();
        let inner = b.create_block();
        let inner_body = b.create_block();
        let outer_latch = b.create_block();
        let exit = b.create_block();
        b.jump(outer, &[]);

        b.switch_to_block(outer);
        let (iv, nv) = (b.use_var(i), b.use_var(n));
        let c = b.icmp(IntCC::Slt, iv, nv);
        b.brif(c, outer_body, &[], exit, &[]);

        b.seal_block(outer_body);
        b.switch_to_block(outer_body);
        let z = b.iconst(Type::I32, 0);
        b.def_var(j, z);
        b.jump(inner, &[]);

        b.switch_to_block(inner);
        let (jv, mv) = (b.use_var(j), b.use_var(m));
        let c2 = b.icmp(IntCC::Slt, jv, mv);
        b.brif(c2, inner_body, &[], outer_latch, &[]);

        b.seal_block(inner_body);
        b.switch_to_block(inner_body);
        let (s, iv, jv) = (b.use_var(sum), b.use_var(i), b.use_var(j));
        let prod = b.imul(iv, jv);
        let s2 = b.iadd(s, prod);
        b.def_var(sum, s2);
        let one = b.iconst(Type::I32, 1);
        let j2 = b.iadd(jv, one);
        b.def_var(j, j2);
        b.jump(inner, &[]);
        b.seal_block(inner);

        b.seal_block(outer_latch);
        b.switch_to_block(outer_latch);
        let iv = b.use_var(i);
        let one = b.iconst(Type::I32, 1);
        let i2 = b.iadd(iv, one);
        b.def_var(i, i2);
        b.jump(outer, &[]);
        b.seal_block(outer);

        b.seal_block(exit);
        b.switch_to_block(exit);
        let r = b.use_var(sum);
        b.ret(Some(r));
        b.finalize().unwrap();

        check_structure(&f).unwrap();
        // Outer header carries i and sum (n, m are invariant: removed); the inner
        // header carries j and sum (i, n, m invariant in it: removed).
        assert_eq!(f.dfg.block_params(outer).len(), 2);
        assert_eq!(f.dfg.block_params(inner).len(), 2);
        for blk in [entry, outer_body, inner_body, outer_latch, exit] {
            let want = if blk == entry { 2 } else { 0 };
            assert_eq!(f.dfg.block_params(blk).len(), want, "{blk}");
        }
        for blk in [outer, inner] {
            let np = f.dfg.block_params(blk).len();
            let inc = incoming(&f, blk);
            assert_eq!(inc.len(), 2);
            assert!(inc.iter().all(|a| a.len() == np));
        }
        // The returned sum is the outer header's sum parameter.
        assert!(f.dfg.block_params(outer).contains(&r));
    }

    #[test]
    fn trivial_params_cascade_away() {
        // Three nested loop headers, none of which changes x: all their x parameters
        // are trivial, and removing the innermost exposes the outer ones.
        let mut f = new_func(&[Type::I32]);
        let mut b = FunctionBuilder::new(&mut f);
        let x = b.declare_var(Type::I32);
        let entry = b.create_block();
        b.append_block_params_for_function_params(entry);
        b.switch_to_block(entry);
        b.seal_block(entry);
        let p = b.block_params(entry)[0];
        b.def_var(x, p);
        let h: Vec<Block> = (0..3).map(|_| b.create_block()).collect();
        let exit = b.create_block();
        b.jump(h[0], &[]);
        for k in 0..3 {
            b.switch_to_block(h[k]);
            if k < 2 {
                b.jump(h[k + 1], &[]);
            }
        }
        // Innermost header: use x (three incomplete params up the chain? no: only
        // here, since h2 is unsealed), then loop back to every header.
        let xv = b.use_var(x);
        let c = b.icmp(IntCC::Eq, xv, xv);
        b.brif(c, h[0], &[], exit, &[]);
        // h1, h2 have one predecessor each, but stay unsealed until the end.
        for &blk in h.iter().rev() {
            b.seal_block(blk);
        }
        b.seal_block(exit);
        b.switch_to_block(exit);
        let xe = b.use_var(x);
        b.ret(Some(xe));
        b.finalize().unwrap();
        check_structure(&f).unwrap();
        for &blk in &h {
            assert!(f.dfg.block_params(blk).is_empty(), "{blk}");
        }
        assert_eq!(xe, p);
        let ci = def_inst(&f, c);
        assert_eq!(f.dfg.inst_args(ci), &[p, p]);
    }

    #[test]
    fn removing_a_param_rechecks_its_users() {
        // q = param(v from T, pH from E) is complete before the loop header H is
        // sealed; sealing H finds pH trivial (= v), which must make q trivial too.
        let mut f = new_func(&[Type::I32, Type::I1]);
        let mut b = FunctionBuilder::new(&mut f);
        let x = b.declare_var(Type::I32);
        let entry = b.create_block();
        b.append_block_params_for_function_params(entry);
        b.switch_to_block(entry);
        b.seal_block(entry);
        let (v, c) = (b.block_params(entry)[0], b.block_params(entry)[1]);
        b.def_var(x, v);
        let [h, a, t, e, m, l, exit] = [(); 7].map(|_| b.create_block());
        b.jump(h, &[]);
        b.switch_to_block(h);
        b.brif(c, a, &[], exit, &[]);
        for (blk, (x1, x2)) in [(a, (t, e)), (e, (m, l))] {
            b.seal_block(blk);
            b.switch_to_block(blk);
            b.brif(c, x1, &[], x2, &[]);
        }
        b.seal_block(t);
        b.switch_to_block(t);
        b.def_var(x, v);
        b.jump(m, &[]);
        b.seal_block(m);
        b.switch_to_block(m);
        let q = b.use_var(x);
        assert_ne!(q, v, "not yet known to be trivial");
        assert_eq!(b.block_params(m).len(), 1);
        b.ret(Some(q));
        b.seal_block(l);
        b.switch_to_block(l);
        b.jump(h, &[]);
        b.seal_block(h);
        b.seal_block(exit);
        b.switch_to_block(exit);
        let xe = b.use_var(x);
        assert_eq!(xe, v);
        b.ret(Some(xe));
        b.finalize().unwrap();
        check_structure(&f).unwrap();
        assert!(f.dfg.block_params(m).is_empty() && f.dfg.block_params(h).is_empty());
        assert_eq!(f.dfg.inst_args(f.terminator(m).unwrap()), &[v]);
    }

    #[test]
    fn both_edges_of_one_branch_get_arguments() {
        let mut f = new_func(&[Type::I32, Type::I1]);
        let mut b = FunctionBuilder::new(&mut f);
        let x = b.declare_var(Type::I32);
        let entry = b.create_block();
        b.append_block_params_for_function_params(entry);
        b.switch_to_block(entry);
        b.seal_block(entry);
        let (p, c) = (b.block_params(entry)[0], b.block_params(entry)[1]);
        b.def_var(x, p);
        let (l, tail) = (b.create_block(), b.create_block());
        b.jump(l, &[]);
        b.switch_to_block(l);
        let xv = b.use_var(x);
        let one = b.iconst(Type::I32, 1);
        let x2 = b.iadd(xv, one);
        b.def_var(x, x2);
        // Two edges back to l from the brif and three more from a br_table.
        b.brif(c, l, &[], tail, &[]);
        b.switch_to_block(tail);
        b.br_table(x2, l, &[], &[(0, l, &[]), (1, l, &[])]);
        b.seal_block(l);
        b.seal_block(tail);
        b.finalize().unwrap();
        check_structure(&f).unwrap();
        assert_eq!(f.dfg.block_params(l), &[xv]);
        let inc = incoming(&f, l);
        assert_eq!(inc.len(), 5);
        assert_eq!(inc.iter().filter(|a| a.as_slice() == [p]).count(), 1);
        assert_eq!(inc.iter().filter(|a| a.as_slice() == [x2]).count(), 4);
    }

    #[test]
    fn undefined_variables_read_as_zero() {
        let mut f = new_func(&[]);
        let mut b = FunctionBuilder::new(&mut f);
        let vi = b.declare_var(Type::I64);
        let vf = b.declare_var(Type::F32);
        let vp = b.declare_var(Type::Ptr(AddrSpace::Global));
        let entry = b.create_block();
        b.switch_to_block(entry);
        b.seal_block(entry);
        let k = b.iconst(Type::I32, 9);
        let (i, fl, p) = (b.use_var(vi), b.use_var(vf), b.use_var(vp));
        b.ret(Some(k));
        b.finalize().unwrap();
        check_structure(&f).unwrap();
        assert_eq!(
            f.dfg.inst(def_inst(&f, i)),
            &InstructionData::IntConst { imm: 0 }
        );
        assert_eq!(f.dfg.value_type(i), Type::I64);
        assert_eq!(
            f.dfg.inst(def_inst(&f, fl)),
            &InstructionData::FloatConst { bits: 0 }
        );
        assert_eq!(f.dfg.value_type(fl), Type::F32);
        assert_eq!(f.dfg.inst(def_inst(&f, p)).opcode(), Opcode::Inttoptr);
        assert_eq!(f.dfg.value_type(p), Type::Ptr(AddrSpace::Global));
        // The zeros sit at the top of the entry block, before the first instruction.
        let first: Vec<Opcode> = f
            .layout
            .block_insts(entry)
            .map(|i| f.dfg.inst(i).opcode())
            .collect();
        assert_eq!(first.last(), Some(&Opcode::Return));
        assert_eq!(
            first[first.len() - 2],
            Opcode::Iconst,
            "iconst 9 stays last"
        );
    }

    #[test]
    fn unreachable_single_predecessor_cycle_terminates() {
        let mut f = new_func(&[]);
        let mut b = FunctionBuilder::new(&mut f);
        let x = b.declare_var(Type::I32);
        let entry = b.create_block();
        b.switch_to_block(entry);
        b.seal_block(entry);
        let k = b.iconst(Type::I32, 1);
        b.def_var(x, k);
        b.ret(Some(k));
        // a -> b2 -> a, unreachable, each with one predecessor.
        let (a, b2) = (b.create_block(), b.create_block());
        b.switch_to_block(a);
        b.jump(b2, &[]);
        b.switch_to_block(b2);
        b.jump(a, &[]);
        b.seal_block(a);
        b.seal_block(b2);
        let v = b.use_var(x);
        assert_eq!(
            b.func.dfg.inst(def_inst(b.func, v)),
            &InstructionData::IntConst { imm: 0 }
        );
        b.finalize().unwrap();
        check_structure(&f).unwrap();
        assert!(f.dfg.block_params(a).is_empty() && f.dfg.block_params(b2).is_empty());
    }

    #[test]
    fn finalize_reports_protocol_errors() {
        let mut f = new_func(&[]);
        let mut b = FunctionBuilder::new(&mut f);
        let entry = b.create_block();
        b.switch_to_block(entry);
        let next = b.create_block();
        b.jump(next, &[]);
        b.seal_block(next);
        assert_eq!(b.finalize(), Err(BuilderError::UnsealedBlock(entry)));

        let mut f = new_func(&[]);
        let mut b = FunctionBuilder::new(&mut f);
        let entry = b.create_block();
        b.switch_to_block(entry);
        let next = b.create_block();
        b.jump(next, &[]);
        b.seal_all_blocks();
        assert_eq!(b.finalize(), Err(BuilderError::BlockNotInLayout(next)));

        let mut f = new_func(&[]);
        let mut b = FunctionBuilder::new(&mut f);
        let entry = b.create_block();
        b.switch_to_block(entry);
        b.iconst(Type::I32, 0);
        b.seal_all_blocks();
        assert_eq!(b.finalize(), Err(BuilderError::UnterminatedBlock(entry)));
    }

    #[test]
    #[should_panic(expected = "sealed block")]
    fn branching_to_a_sealed_block_panics() {
        let mut f = new_func(&[]);
        let mut b = FunctionBuilder::new(&mut f);
        let entry = b.create_block();
        let next = b.create_block();
        b.seal_block(next);
        b.switch_to_block(entry);
        b.jump(next, &[]);
    }

    /// A chain of `n` diamonds; `x` is redefined in the then-arm of each iff `redefine`.
    /// Everything is sealed only at the end, so the final use walks the whole chain.
    fn diamond_chain(n: usize, redefine: bool) -> Function {
        let mut f = new_func(&[Type::I32, Type::I1]);
        let mut b = FunctionBuilder::new(&mut f);
        let x = b.declare_var(Type::I32);
        let entry = b.create_block();
        b.append_block_params_for_function_params(entry);
        b.switch_to_block(entry);
        let (p, c) = (b.block_params(entry)[0], b.block_params(entry)[1]);
        b.def_var(x, p);
        for k in 0..n {
            let (t, e, m) = (b.create_block(), b.create_block(), b.create_block());
            b.brif(c, t, &[], e, &[]);
            b.switch_to_block(t);
            if redefine {
                let k = b.iconst(Type::I32, k as i64);
                b.def_var(x, k);
            }
            b.jump(m, &[]);
            b.switch_to_block(e);
            b.jump(m, &[]);
            b.switch_to_block(m);
        }
        b.seal_all_blocks();
        let v = b.use_var(x);
        b.ret(Some(v));
        b.finalize().unwrap();
        f
    }

    #[test]
    fn hundred_thousand_blocks_on_a_small_stack() {
        let h = std::thread::Builder::new()
            .stack_size(2 << 20)
            .spawn(|| {
                // A straight chain of 100k single-predecessor blocks.
                let mut f = new_func(&[Type::I32]);
                let mut b = FunctionBuilder::new(&mut f);
                let x = b.declare_var(Type::I32);
                let entry = b.create_block();
                b.append_block_params_for_function_params(entry);
                b.switch_to_block(entry);
                let p = b.block_params(entry)[0];
                b.def_var(x, p);
                for _ in 0..100_000 {
                    let next = b.create_block();
                    b.jump(next, &[]);
                    b.switch_to_block(next);
                }
                b.seal_all_blocks();
                let v = b.use_var(x);
                b.ret(Some(v));
                b.finalize().unwrap();
                assert_eq!(v, p);
                assert_eq!(f.layout.num_blocks(), 100_001);

                // 33k diamonds (100k blocks): a parameter at every merge...
                let f = diamond_chain(33_333, true);
                let merges_with_params = f
                    .layout
                    .blocks()
                    .filter(|&b| f.dfg.block_params(b).len() == 1)
                    .count();
                assert_eq!(merges_with_params, 33_333);
                check_structure(&f).unwrap();
                // ...or none, when every one is trivial.
                let f = diamond_chain(33_333, false);
                let entry = f.entry_block().unwrap();
                assert!(f
                    .layout
                    .blocks()
                    .all(|b| b == entry || f.dfg.block_params(b).is_empty()));
                check_structure(&f).unwrap();
            })
            .unwrap();
        h.join().unwrap();
    }

    /// Handles from the module carry what the builder cannot look up: the callee's
    /// return type and the global's space.
    #[test]
    fn module_handles_for_calls_and_globals() {
        use crate::module::{GlobalData, Module};
        let mut m = Module::new();
        let tile = m.push_global(GlobalData::new("tile", AddrSpace::Shared, Type::F32, 8, 4));
        let sig = Signature {
            params: vec![Type::I32],
            ret: Some(Type::F32),
        };
        let f = m.push_function(Function::new("f", FuncKind::Device, sig));
        let g = m.push_function(Function::new("g", FuncKind::Device, Signature::default()));
        assert_eq!(m.func_ref("f"), Some(f));
        assert_eq!(m.global_ref("tile"), Some(tile));
        assert_eq!((f.ret, tile.space), (Some(Type::F32), AddrSpace::Shared));
        assert_eq!(m.func_ref("h"), None);
        assert_eq!(m.global_ref("h"), None);
        let mut k = Function::new("k", FuncKind::Kernel, Signature::default());
        let mut b = FunctionBuilder::new(&mut k);
        let e = b.create_block();
        b.switch_to_block(e);
        b.seal_block(e);
        let x = b.iconst(Type::I32, 3);
        let (_, r) = b.call_ref(f, &[x]);
        let r = r.expect("f returns a value");
        assert!(b.call_ref(g, &[]).1.is_none());
        let p = b.global_addr_ref(tile);
        assert_eq!(b.value_type(r), Type::F32);
        assert_eq!(b.value_type(p), Type::Ptr(AddrSpace::Shared));
        b.store(r, p);
        b.ret(None);
        b.finalize().unwrap();
        m.push_function(k);
        // The callees need bodies to verify.
        for id in [f.id, g.id] {
            let func = &mut m.functions[id];
            let mut b = FunctionBuilder::new(func);
            let e = b.create_block();
            b.append_block_params_for_function_params(e);
            b.switch_to_block(e);
            b.seal_block(e);
            let v = (id == f.id).then(|| b.fconst_f32(1.0));
            b.ret(v);
            b.finalize().unwrap();
        }
        crate::verifier::verify_module(&m).unwrap();
    }

    /// Positions given with `set_srcloc` reach the verifier's messages as
    /// `file:line:col` of the front end's source.
    #[test]
    fn srclocs_locate_verifier_errors() {
        use crate::module::Module;
        use crate::parser::SourceMap;
        let src = "kernel k {\n  let a = 1;\n  let b = a + 2.5;\n}\n";
        let at = |s: &str| src.find(s).unwrap() as u32;
        let mut k = Function::new("k", FuncKind::Kernel, Signature::default());
        let mut b = FunctionBuilder::new(&mut k);
        assert_eq!(b.srcloc(), None);
        b.set_srcloc(at("kernel"));
        let e = b.create_block();
        b.switch_to_block(e);
        b.seal_block(e);
        b.set_srcloc(at("1;"));
        let a = b.iconst(Type::I32, 1);
        b.set_srcloc(at("2.5"));
        let c = b.fconst_f32(2.5);
        b.set_srcloc(at("a + 2.5"));
        // A broken lowering: an integer add of a float.
        let bad = b.iadd(a, c);
        b.clear_srcloc();
        let r = b.ret(None);
        let pos = b.finalize_with_srclocs().unwrap();
        assert_eq!(pos.header(), Some(0));
        assert_eq!(pos.block(e), Some(0));
        assert_eq!(pos.inst(r), None);
        let bad_inst = match k.dfg.value_def(bad) {
            ValueDef::Result(i) => i,
            other => panic!("{other:?}"),
        };
        assert_eq!(pos.inst(bad_inst), Some(at("a + 2.5")));
        let mut m = Module::new();
        let id = m.push_function(k).id;
        let mut map = SourceMap::default();
        map.set_function(id, pos);
        let errs = crate::verifier::verify_module(&m).unwrap_err();
        let text = errs.render("k.toy", Some((src, &map)));
        assert!(text.starts_with("k.toy:3:11: error: "), "{text}");
        assert!(text.contains("  let b = a + 2.5;\n          ^\n"), "{text}");
        // Without positions, the message names the block instead.
        let plain = errs.render("k.toy", None);
        assert!(plain.starts_with("k.toy: error: "), "{plain}");
    }
}
