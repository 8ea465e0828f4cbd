//! The IR verifier: checks that a function or module is well formed.
//!
//! [`verify_function`] and [`verify_module`] collect *every* error they find, each with
//! a typed [`VerifierErrorKind`], the entity it is about ([`AnyEntity`]) and a message;
//! they never stop at the first error and never panic on bad input. A [`Verifier`] keeps
//! its scratch (CFG, dominators) between runs when a pass manager verifies often.
//! [`verify_module_trusted`] checks only what a producer that types and lays out every
//! instruction by construction (the `.ll` importer) cannot guarantee: dominance of uses,
//! stores into const space, module items and signatures.
//!
//! # Invariants checked
//!
//! The kind reported for each is in brackets.
//!
//! **Layout**
//! - The function has an entry block (the first laid-out block) [`NoEntryBlock`].
//! - Every laid-out block is a block of the data-flow graph [`InvalidBlock`]; every
//!   laid-out instruction is an instruction of the graph [`InvalidInst`] and the layout
//!   says it belongs to the block whose list holds it [`InstBlockMismatch`].
//! - No block is empty [`EmptyBlock`]; every block ends with a terminator
//!   [`MissingTerminator`] and has no terminator before its last instruction
//!   [`TerminatorNotLast`].
//!
//! **Entry block**
//! - Its parameters match the signature's parameters in number [`EntryParamCount`] and
//!   type [`EntryParamType`].
//! - No branch (in any laid-out block, reachable or not) targets it
//!   [`EntryBlockTargeted`].
//!
//! **SSA**
//! - Every used value (operand or branch argument) is a valid id [`InvalidValue`], is
//!   defined [`DetachedValue`], and its definition is laid out (the defining instruction,
//!   or the block of a parameter) [`DefNotInLayout`].
//! - Bookkeeping: a laid-out instruction's result says it is defined by that
//!   instruction, and a used value defined as an instruction's result is that
//!   instruction's result [`ResultDefMismatch`]; the `n`th parameter of a laid-out block
//!   says `Param(block, n)`, and a used parameter value is in its block's list at its
//!   position [`ParamDefMismatch`].
//! - Dominance [`UseNotDominated`]: in a block reachable from the entry, an instruction
//!   result is used only by later instructions of its block or in blocks its block
//!   strictly dominates; a block parameter is used only in its block or blocks it
//!   dominates. A branch argument is a use at the branch. A definition in an unreachable
//!   block dominates no reachable use.
//! - **Unreachable blocks** (as in LLVM): uses there are checked for being defined and
//!   laid out, not for dominance — dominance is meaningless without a path from the
//!   entry, and passes routinely leave such code behind until cleanup.
//!
//! **Results and formats**
//! - Instructions that produce no value (`store`, `barrier`, branches, `return`,
//!   `unreachable`, a call of a void function) have no result [`UnexpectedResult`]; all
//!   others have one [`MissingResult`]. (Without a module, a call may have either.)
//! - The opcode belongs to the instruction format it is stored in (e.g. a `Binary` holds
//!   a binary opcode) [`OpcodeFormatMismatch`]; integer flags appear only where
//!   [`Opcode::allowed_flags`](crate::Opcode::allowed_flags) allows [`DisallowedFlags`].
//!
//! **Branches**
//! - Every target is a valid, laid-out block [`InvalidBranchTarget`], receives exactly
//!   one argument per parameter [`BranchArgCount`] of the parameter's type
//!   [`BranchArgType`].
//! - `brif`'s condition is `i1`; `br_table`'s scrutinee is an integer
//!   [`BranchCondType`]. The jump table exists [`InvalidJumpTable`]; its case values fit
//!   the scrutinee type as signed or unsigned [`BrTableCaseRange`] and are distinct
//!   modulo that width [`BrTableDuplicateCase`].
//!
//! **Types**
//! - `iconst` yields an integer and `fconst` a float [`ConstType`]; the `iconst` value
//!   fits the type as signed or unsigned [`IconstRange`]; an `f32` constant's bits fit in
//!   32 bits [`FconstBits`].
//! - Integer binary ops (shifts included) and `popcnt`/`clz`/`ctz`: operands and result
//!   are one integer type [`IntArithType`]; float binary and unary ops: one float type
//!   [`FloatArithType`]; `fma`: three operands and result of one float type [`FmaType`];
//!   `select`: `i1` condition, both arms and the result of one type [`SelectType`];
//!   `freeze`: result type is the operand's [`FreezeType`].
//! - `icmp`: two integers or two pointers of one type, result `i1` [`IcmpType`];
//!   `fcmp`: two floats of one type, result `i1` [`FcmpType`].
//! - Casts [`CastType`]: `sext`/`zext` to a strictly wider integer, `trunc` to a strictly
//!   narrower one; `fpext` f32→f64, `fptrunc` f64→f32; `fptosi`/`fptoui` float→integer;
//!   `sitofp`/`uitofp` integer→float; `bitcast` between types of equal width, where two
//!   pointers must be of the same space (changing space is `addrspace_cast`'s job);
//!   `ptrtoint` pointer→`i32`/`i64` (truncating, as LLVM's); `inttoptr` `i32`/`i64`→pointer;
//!   `addrspace_cast` between generic and one specific space, in either direction.
//! - `ptradd`: pointer base, integer index, result of the base's type [`PtrAddType`],
//!   scale > 0 [`PtrAddScale`].
//! - `load` through a pointer [`LoadType`]; `store` through a pointer [`StoreType`], never
//!   into `const` space [`StoreToConst`].
//! - Atomics: pointer operand; `i32`/`i64` values (`f32`/`f64` also for `atomic_add`);
//!   `atomic_cas`'s expected and new values of one type; result of the value type
//!   [`AtomicType`]; only through global, shared or generic pointers [`AtomicAddrSpace`].
//! - `global_addr`: the global exists (needs a module) [`InvalidGlobal`] and the result
//!   is `ptr.<its space>` (any pointer without a module) [`GlobalAddrType`].
//! - `slot_addr`: the slot exists [`InvalidSlot`]; the result is `ptr.local`
//!   [`SlotAddrType`]. `sreg` yields `i32` [`SregType`].
//! - `atomic_inc`/`atomic_dec` on `i32` only [`AtomicType`]. Warp collectives: `shfl` of
//!   an `i32`/`f32` value with `i32` lane, clamp and mask, yielding the value's type;
//!   `vote` of an `i1` with an `i32` mask, yielding `i1` (`i32` for `ballot`);
//!   `warp_sync` of an `i32` mask; `fence` only `acq_rel` or `seq_cst`; `clock` yields
//!   `i32` or `i64` [`WarpOpType`].
//! - System calls: `vprintf` takes two generic pointers and yields `i32`; `assert_fail`
//!   takes generic pointers for the message, file and function and an `i32` line
//!   [`SyscallType`].
//! - Calls (with a module): the callee exists [`UnknownCallee`] and is not a kernel
//!   [`CallToKernel`]; argument count [`CallArgCount`] and types [`CallArgType`] match
//!   its signature; the result has its return type [`CallResultType`].
//! - `return`: a kernel returns nothing, a device function exactly its return type
//!   [`ReturnArgCount`], [`ReturnType`].
//!
//! **Function and module**
//! - Kernels return nothing [`KernelReturnsValue`]; slot alignments are non-zero
//!   powers of two [`SlotAlign`].
//! - `byval` parameters are `ptr.local` parameters of kernels, listed once each by
//!   increasing index, with a power-of-two alignment [`ByValParam`].
//! - Function and global names are unique, together: both are `@name` symbols in PTX
//!   [`DuplicateName`].
//! - Globals live in global, shared or const space [`GlobalAddrSpace`] with a non-zero
//!   power-of-two alignment [`GlobalAlign`]; an initializer has `count` elements
//!   [`GlobalInitLength`] each fitting the element width [`GlobalInitValue`]; shared
//!   globals have no initializer [`SharedGlobalInit`], and neither do pointer-typed
//!   globals, whose addresses are not known at compile time [`PointerGlobalInit`].
//!   Any element type, pointers included, is allowed. Linkage [`GlobalLinkage`]: an
//!   `externally_initialized` global is `visible` and in global or const space (the host
//!   writes it by name); a `visible` global is not shared (shared memory is per CTA and
//!   has no host symbol); an `extern` global is the dynamic shared array: shared, no
//!   elements, no initializer.
//!
//! # Not checked (yet)
//! - Convergence rules (e.g. a barrier under divergent control flow): that needs the
//!   uniformity analysis, which lives outside this crate.
//! - That functions with barriers are marked `convergent`, recursion, and stack/slot size
//!   limits.
//! - Memory alignment of loads/stores and constant-folded poison (out-of-range shift
//!   amounts, division by a zero constant): these are undefined behaviour at run time,
//!   not malformed IR.
//! - Data-flow-graph entities that are not laid out (dead instructions, removed blocks)
//!   are ignored, as they are not part of the program.
//!
//! [`NoEntryBlock`]: VerifierErrorKind::NoEntryBlock
//! [`InvalidBlock`]: VerifierErrorKind::InvalidBlock
//! [`InvalidInst`]: VerifierErrorKind::InvalidInst
//! [`InstBlockMismatch`]: VerifierErrorKind::InstBlockMismatch
//! [`EmptyBlock`]: VerifierErrorKind::EmptyBlock
//! [`MissingTerminator`]: VerifierErrorKind::MissingTerminator
//! [`TerminatorNotLast`]: VerifierErrorKind::TerminatorNotLast
//! [`EntryParamCount`]: VerifierErrorKind::EntryParamCount
//! [`EntryParamType`]: VerifierErrorKind::EntryParamType
//! [`EntryBlockTargeted`]: VerifierErrorKind::EntryBlockTargeted
//! [`InvalidValue`]: VerifierErrorKind::InvalidValue
//! [`DetachedValue`]: VerifierErrorKind::DetachedValue
//! [`DefNotInLayout`]: VerifierErrorKind::DefNotInLayout
//! [`ResultDefMismatch`]: VerifierErrorKind::ResultDefMismatch
//! [`ParamDefMismatch`]: VerifierErrorKind::ParamDefMismatch
//! [`UseNotDominated`]: VerifierErrorKind::UseNotDominated
//! [`UnexpectedResult`]: VerifierErrorKind::UnexpectedResult
//! [`MissingResult`]: VerifierErrorKind::MissingResult
//! [`OpcodeFormatMismatch`]: VerifierErrorKind::OpcodeFormatMismatch
//! [`DisallowedFlags`]: VerifierErrorKind::DisallowedFlags
//! [`InvalidBranchTarget`]: VerifierErrorKind::InvalidBranchTarget
//! [`BranchArgCount`]: VerifierErrorKind::BranchArgCount
//! [`BranchArgType`]: VerifierErrorKind::BranchArgType
//! [`BranchCondType`]: VerifierErrorKind::BranchCondType
//! [`InvalidJumpTable`]: VerifierErrorKind::InvalidJumpTable
//! [`BrTableCaseRange`]: VerifierErrorKind::BrTableCaseRange
//! [`BrTableDuplicateCase`]: VerifierErrorKind::BrTableDuplicateCase
//! [`ConstType`]: VerifierErrorKind::ConstType
//! [`IconstRange`]: VerifierErrorKind::IconstRange
//! [`FconstBits`]: VerifierErrorKind::FconstBits
//! [`IntArithType`]: VerifierErrorKind::IntArithType
//! [`FloatArithType`]: VerifierErrorKind::FloatArithType
//! [`FmaType`]: VerifierErrorKind::FmaType
//! [`SelectType`]: VerifierErrorKind::SelectType
//! [`FreezeType`]: VerifierErrorKind::FreezeType
//! [`IcmpType`]: VerifierErrorKind::IcmpType
//! [`FcmpType`]: VerifierErrorKind::FcmpType
//! [`CastType`]: VerifierErrorKind::CastType
//! [`PtrAddType`]: VerifierErrorKind::PtrAddType
//! [`PtrAddScale`]: VerifierErrorKind::PtrAddScale
//! [`LoadType`]: VerifierErrorKind::LoadType
//! [`StoreType`]: VerifierErrorKind::StoreType
//! [`StoreToConst`]: VerifierErrorKind::StoreToConst
//! [`AtomicType`]: VerifierErrorKind::AtomicType
//! [`AtomicAddrSpace`]: VerifierErrorKind::AtomicAddrSpace
//! [`InvalidGlobal`]: VerifierErrorKind::InvalidGlobal
//! [`GlobalAddrType`]: VerifierErrorKind::GlobalAddrType
//! [`InvalidSlot`]: VerifierErrorKind::InvalidSlot
//! [`SlotAddrType`]: VerifierErrorKind::SlotAddrType
//! [`SregType`]: VerifierErrorKind::SregType
//! [`WarpOpType`]: VerifierErrorKind::WarpOpType
//! [`SyscallType`]: VerifierErrorKind::SyscallType
//! [`UnknownCallee`]: VerifierErrorKind::UnknownCallee
//! [`CallToKernel`]: VerifierErrorKind::CallToKernel
//! [`CallArgCount`]: VerifierErrorKind::CallArgCount
//! [`CallArgType`]: VerifierErrorKind::CallArgType
//! [`CallResultType`]: VerifierErrorKind::CallResultType
//! [`ReturnArgCount`]: VerifierErrorKind::ReturnArgCount
//! [`ReturnType`]: VerifierErrorKind::ReturnType
//! [`KernelReturnsValue`]: VerifierErrorKind::KernelReturnsValue
//! [`SlotAlign`]: VerifierErrorKind::SlotAlign
//! [`ByValParam`]: VerifierErrorKind::ByValParam
//! [`DuplicateName`]: VerifierErrorKind::DuplicateName
//! [`GlobalAddrSpace`]: VerifierErrorKind::GlobalAddrSpace
//! [`GlobalAlign`]: VerifierErrorKind::GlobalAlign
//! [`GlobalInitLength`]: VerifierErrorKind::GlobalInitLength
//! [`GlobalInitValue`]: VerifierErrorKind::GlobalInitValue
//! [`SharedGlobalInit`]: VerifierErrorKind::SharedGlobalInit
//! [`PointerGlobalInit`]: VerifierErrorKind::PointerGlobalInit
//! [`GlobalLinkage`]: VerifierErrorKind::GlobalLinkage
//!
//! # Cost
//! Linear in the size of the function, plus the dominator computation (Cooper–Harvey–
//! Kennedy, two or three linear passes on real code); no recursion anywhere.

mod dom;
mod insts;
#[cfg(test)]
mod tests;

use crate::dfg::ValueDef;
use crate::entities::FuncId;
use crate::entities::{Block, GlobalId, Inst, Slot, Value};
use crate::function::{FuncKind, Function};
use crate::instructions::{BlockCall, InstructionData};
use crate::module::{Linkage, Module};
use crate::parser::{line_col, render_at, SourceMap};
use crate::types::{AddrSpace, Type};
use core::fmt;
use core::fmt::Write as _;
use rustc_hash::FxHashMap;

/// The entity an error is about.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub enum AnyEntity {
    /// A whole function, by name (signature, entry, duplicate names).
    Function(String),
    /// A block.
    Block(Block),
    /// An instruction.
    Inst(Inst),
    /// A value.
    Value(Value),
    /// A module global.
    Global(GlobalId),
    /// A local slot.
    Slot(Slot),
}

impl fmt::Display for AnyEntity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AnyEntity::Function(name) => write!(f, "@{name}"),
            AnyEntity::Block(b) => write!(f, "{b}"),
            AnyEntity::Inst(i) => write!(f, "{i}"),
            AnyEntity::Value(v) => write!(f, "{v}"),
            AnyEntity::Global(g) => write!(f, "{g}"),
            AnyEntity::Slot(s) => write!(f, "{s}"),
        }
    }
}

/// Which invariant an error breaks; the module documentation describes each.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub enum VerifierErrorKind {
    // Layout.
    /// The function has no blocks.
    NoEntryBlock,
    /// A laid-out block is not a block of the data-flow graph.
    InvalidBlock,
    /// A laid-out instruction is not an instruction of the data-flow graph.
    InvalidInst,
    /// An instruction is listed in one block but the layout places it in another.
    InstBlockMismatch,
    /// A laid-out block has no instructions.
    EmptyBlock,
    /// A block's last instruction is not a terminator.
    MissingTerminator,
    /// A terminator appears before the end of its block.
    TerminatorNotLast,
    // Entry block.
    /// The entry block has a different number of parameters than the signature.
    EntryParamCount,
    /// An entry parameter's type differs from the signature's.
    EntryParamType,
    /// A branch targets the entry block.
    EntryBlockTargeted,
    // SSA.
    /// A used value id is not a value of the function.
    InvalidValue,
    /// A used value is defined by nothing.
    DetachedValue,
    /// A used value's defining instruction or block is not laid out.
    DefNotInLayout,
    /// An instruction's result and the value's definition disagree.
    ResultDefMismatch,
    /// A block parameter list and the parameter value's definition disagree.
    ParamDefMismatch,
    /// A use in reachable code is not dominated by its definition.
    UseNotDominated,
    // Results and formats.
    /// An instruction that produces no value has a result.
    UnexpectedResult,
    /// An instruction that produces a value has no result.
    MissingResult,
    /// The opcode does not belong to the instruction format holding it.
    OpcodeFormatMismatch,
    /// Integer flags the opcode does not accept.
    DisallowedFlags,
    // Branches.
    /// A branch target is not a laid-out block.
    InvalidBranchTarget,
    /// A branch passes a different number of arguments than the target has parameters.
    BranchArgCount,
    /// A branch argument's type differs from the target parameter's.
    BranchArgType,
    /// `brif` on a non-`i1`, or `br_table` on a non-integer.
    BranchCondType,
    /// `br_table` names a jump table that does not exist.
    InvalidJumpTable,
    /// A `br_table` case value does not fit the scrutinee type.
    BrTableCaseRange,
    /// Two `br_table` cases have the same value.
    BrTableDuplicateCase,
    // Types.
    /// `iconst` not yielding an integer, or `fconst` not yielding a float.
    ConstType,
    /// An `iconst` value does not fit its type.
    IconstRange,
    /// An `f32` constant has bits above the low 32.
    FconstBits,
    /// Integer arithmetic on mismatched or non-integer types.
    IntArithType,
    /// Float arithmetic on mismatched or non-float types.
    FloatArithType,
    /// `fma` operands and result are not one float type.
    FmaType,
    /// `select` without an `i1` condition or with mismatched arms/result.
    SelectType,
    /// `freeze` yields a type other than its operand's.
    FreezeType,
    /// `icmp` on mismatched types or non-int/pointer types, or not yielding `i1`.
    IcmpType,
    /// `fcmp` on mismatched or non-float types, or not yielding `i1`.
    FcmpType,
    /// A cast between types it does not convert.
    CastType,
    /// `ptradd` without a pointer base and integer index, or with a different result type.
    PtrAddType,
    /// `ptradd` with scale 0.
    PtrAddScale,
    /// `load` through a non-pointer.
    LoadType,
    /// `store` through a non-pointer.
    StoreType,
    /// `store` into const space.
    StoreToConst,
    /// An atomic with a non-pointer address or unsupported/mismatched value types.
    AtomicType,
    /// An atomic through a pointer of a space atomics do not support.
    AtomicAddrSpace,
    /// `global_addr` of a global the module does not have.
    InvalidGlobal,
    /// `global_addr` yields the wrong pointer type.
    GlobalAddrType,
    /// `slot_addr` of a slot the function does not have.
    InvalidSlot,
    /// `slot_addr` does not yield `ptr.local`.
    SlotAddrType,
    /// A special-register read does not yield `i32`.
    SregType,
    /// A warp collective, fence or clock read with operands, order or result out of its
    /// rules.
    WarpOpType,
    /// `vprintf` or `assert_fail` with operands or a result of the wrong types.
    SyscallType,
    /// A call of a function the module does not have.
    UnknownCallee,
    /// A call of a kernel.
    CallToKernel,
    /// A call passes a different number of arguments than the callee takes.
    CallArgCount,
    /// A call argument's type differs from the callee's parameter type.
    CallArgType,
    /// A call's result type differs from the callee's return type.
    CallResultType,
    /// A `return` with the wrong number of values for the function.
    ReturnArgCount,
    /// A `return` value of the wrong type.
    ReturnType,
    // Function and module.
    /// A kernel signature with a return type.
    KernelReturnsValue,
    /// A slot alignment that is not a non-zero power of two.
    SlotAlign,
    /// A `byval` parameter that is not a kernel's `ptr.local` parameter, is listed twice
    /// or out of order, or has an alignment that is not a power of two.
    ByValParam,
    /// Two functions or globals share a name.
    DuplicateName,
    /// A global in generic or local space.
    GlobalAddrSpace,
    /// A global alignment that is not a non-zero power of two.
    GlobalAlign,
    /// An initializer whose length differs from the element count.
    GlobalInitLength,
    /// An initial value wider than the element type.
    GlobalInitValue,
    /// A shared-memory global with an initializer.
    SharedGlobalInit,
    /// A pointer-typed global with an initializer.
    PointerGlobalInit,
    /// A linkage or `externally_initialized` flag the global's space or shape does not
    /// allow.
    GlobalLinkage,
}

/// One broken invariant.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct VerifierError {
    /// The function, as the text format introduces it (`kernel @saxpy`, `func @f`);
    /// empty for module-level errors.
    pub context: String,
    /// The entity the error is about.
    pub location: AnyEntity,
    /// The instruction, printed, when `location` is one (for messages only: a compact
    /// rendering, not the canonical printer).
    pub inst_text: Option<String>,
    /// Which invariant.
    pub kind: VerifierErrorKind,
    /// What is wrong, in words.
    pub message: String,
    /// The function of the module the error is in (`None` for module-level errors and
    /// for [`verify_function`]), to find its source position.
    pub func: Option<FuncId>,
    /// The laid-out block holding the error's place: an instruction's block, the block
    /// itself, or the block defining a value (named in messages for builder-made IR).
    pub block: Option<Block>,
    /// The instruction the error points at: the location itself, or the definition of
    /// a value location.
    pub inst: Option<Inst>,
}

impl VerifierError {
    /// Where in parsed text the error is, given the module's source map.
    pub fn source_offset(&self, map: &SourceMap) -> Option<u32> {
        let f = self.func;
        let at_inst = || f.zip(self.inst).and_then(|(f, i)| map.inst(f, i));
        let at_block = || f.zip(self.block).and_then(|(f, b)| map.block(f, b));
        match &self.location {
            AnyEntity::Global(g) => map.global(*g),
            AnyEntity::Slot(s) => f.and_then(|f| map.slot(f, *s)),
            AnyEntity::Function(_) => f.and_then(|f| map.function(f)),
            AnyEntity::Block(_) => at_block(),
            AnyEntity::Inst(_) | AnyEntity::Value(_) => at_inst().or_else(at_block),
        }
        .or_else(|| f.and_then(|f| map.function(f)))
    }
}

impl fmt::Display for VerifierError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if !self.context.is_empty() {
            write!(f, "{}: ", self.context)?;
        }
        // A function location is already named by the context.
        let named_by_context =
            !self.context.is_empty() && matches!(self.location, AnyEntity::Function(_));
        if let (Some(b), AnyEntity::Inst(_) | AnyEntity::Value(_)) = (self.block, &self.location) {
            write!(f, "{b}: ")?;
        }
        if !named_by_context {
            write!(f, "{}", self.location)?;
            if let Some(t) = &self.inst_text {
                write!(f, " ({t})")?;
            }
            f.write_str(": ")?;
        }
        f.write_str(&self.message)
    }
}

/// Every error found in a function or module, in a deterministic order (module-level
/// errors, then functions in definition order, each in layout order).
#[derive(Clone, PartialEq, Eq, Debug, Default)]
pub struct VerifierErrors(pub Vec<VerifierError>);

impl VerifierErrors {
    /// Is there an error of this kind?
    pub fn has(&self, kind: VerifierErrorKind) -> bool {
        self.0.iter().any(|e| e.kind == kind)
    }

    /// Render every error for a person: `file:line:col: message`, the source line and a
    /// caret when the module was parsed from `source` (text and its [`SourceMap`]), else
    /// `file: message` naming the block and printing the instruction.
    pub fn render(&self, filename: &str, source: Option<(&str, &SourceMap)>) -> String {
        let mut out = String::new();
        for e in &self.0 {
            let at = source.and_then(|(src, map)| Some((src, e.source_offset(map)?)));
            match at {
                Some((src, pos)) => {
                    let (line, col) = line_col(src, pos);
                    // The source line shows the instruction: no ids, no reprint.
                    let mut msg = String::from("error: ");
                    if !e.context.is_empty() {
                        msg.push_str(&e.context);
                        msg.push_str(": ");
                    }
                    msg.push_str(&e.message);
                    render_at(&mut out, filename, src, line, col, &msg);
                }
                None => {
                    let _ = writeln!(out, "{filename}: error: {e}");
                }
            }
        }
        out
    }
}

impl fmt::Display for VerifierErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (k, e) in self.0.iter().enumerate() {
            if k > 0 {
                f.write_str("\n")?;
            }
            write!(f, "{e}")?;
        }
        Ok(())
    }
}

impl std::error::Error for VerifierErrors {}

/// Verify one function. With a module, calls and `global_addr` are checked against it.
pub fn verify_function(func: &Function, module: Option<&Module>) -> Result<(), VerifierErrors> {
    Verifier::new().verify_function(func, module)
}

/// Verify a module: module-level invariants, then every function against the module.
pub fn verify_module(m: &Module) -> Result<(), VerifierErrors> {
    Verifier::new().verify_module(m)
}

/// Verify a module built by a producer that shapes and types every instruction by
/// construction, as the `.ll` importer does (it checks LLVM's own typing rules, which
/// imply Gyre's, as it reads each instruction): module items, signatures, slots, every
/// use (valid, defined, laid out, dominated by its definition: LLVM's rule too, which
/// the producer cannot see while it reads one instruction at a time) and `store` into
/// const space (legal LLVM that Gyre forbids, left to the verifier). It skips the
/// layout rules, branch targets and arguments and the per-opcode type rules (every
/// other rule under *Results and formats*, *Branches* and *Types* above), which such a
/// producer guarantees. The errors it finds are the ones [`verify_module`] finds, in
/// the same order, as long as that guarantee holds; a producer's tests should check it
/// with [`verify_module`] (the importer does on every import in debug builds).
pub fn verify_module_trusted(m: &Module) -> Result<(), VerifierErrors> {
    Verifier::new().verify_module_trusted(m)
}

/// A verifier with reusable scratch memory (CFG, dominators, sort buffers).
#[derive(Default)]
pub struct Verifier {
    dom: dom::Dominance,
    errors: Vec<VerifierError>,
    cases: Vec<(u64, usize)>,
}

impl Verifier {
    /// A verifier with empty scratch.
    pub fn new() -> Verifier {
        Verifier::default()
    }

    /// Verify one function; see [`verify_function`].
    pub fn verify_function(
        &mut self,
        func: &Function,
        module: Option<&Module>,
    ) -> Result<(), VerifierErrors> {
        self.errors.clear();
        self.check_function(func, module, None, false);
        self.finish()
    }

    /// Verify a module; see [`verify_module`].
    pub fn verify_module(&mut self, m: &Module) -> Result<(), VerifierErrors> {
        self.errors.clear();
        self.check_module_items(m);
        for (id, f) in m.functions.iter() {
            self.check_function(f, Some(m), Some(id), false);
        }
        self.finish()
    }

    /// Verify a module from a trusted producer; see [`verify_module_trusted`].
    pub fn verify_module_trusted(&mut self, m: &Module) -> Result<(), VerifierErrors> {
        self.errors.clear();
        self.check_module_items(m);
        for (id, f) in m.functions.iter() {
            self.check_function(f, Some(m), Some(id), true);
        }
        self.finish()
    }

    fn finish(&mut self) -> Result<(), VerifierErrors> {
        if self.errors.is_empty() {
            Ok(())
        } else {
            Err(VerifierErrors(core::mem::take(&mut self.errors)))
        }
    }

    /// Check one function: every rule, or (`trusted`) only what
    /// [`verify_module_trusted`] keeps.
    fn check_function(
        &mut self,
        func: &Function,
        module: Option<&Module>,
        id: Option<FuncId>,
        trusted: bool,
    ) {
        self.dom.compute(func);
        let mut cx = FuncCx {
            func,
            module,
            id,
            context: format!(
                "{} @{}",
                match func.kind {
                    FuncKind::Kernel => "kernel",
                    FuncKind::Device => "func",
                },
                func.name
            ),
            dom: &self.dom,
            errors: &mut self.errors,
            cases: &mut self.cases,
        };
        cx.check_signature();
        if trusted {
            // A trusted producer's layout, instructions and blocks are valid by
            // construction: only the uses and the store spaces are its input's.
            for b in func.layout.blocks() {
                for i in func.layout.block_insts(b) {
                    cx.check_uses(b, i);
                    if let InstructionData::Store { args, .. } = func.dfg.inst(i) {
                        cx.check_store_space(i, args[1]);
                    }
                }
            }
            return;
        }
        cx.check_layout();
        for b in func.layout.blocks() {
            if !func.dfg.block_is_valid(b) {
                continue;
            }
            for i in func.layout.block_insts(b) {
                if func.dfg.inst_is_valid(i) {
                    cx.check_uses(b, i);
                    cx.check_branches(i);
                    cx.check_inst_types(i);
                }
            }
        }
    }

    fn check_module_items(&mut self, m: &Module) {
        let err = |errors: &mut Vec<VerifierError>, loc, kind, message| {
            // A clash of a function's name is reported at that function.
            let func = match &loc {
                AnyEntity::Function(name) => m.functions.iter().find(|(_, f)| f.name == *name),
                _ => None,
            }
            .map(|(id, _)| id);
            errors.push(VerifierError {
                context: String::new(),
                location: loc,
                inst_text: None,
                kind,
                message,
                func,
                block: None,
                inst: None,
            })
        };
        // Only looked up, never iterated: output order stays definition order.
        let mut names: FxHashMap<&str, String> = FxHashMap::default();
        for (id, f) in m.functions.iter() {
            if let Some(prev) = names.insert(&f.name, format!("{id}")) {
                err(
                    &mut self.errors,
                    AnyEntity::Function(f.name.clone()),
                    VerifierErrorKind::DuplicateName,
                    format!("name @{} of {id} is already used by {prev}", f.name),
                );
            }
        }
        for (id, g) in m.globals.iter() {
            let loc = AnyEntity::Global(id);
            if let Some(prev) = names.insert(&g.name, format!("{id}")) {
                err(
                    &mut self.errors,
                    loc.clone(),
                    VerifierErrorKind::DuplicateName,
                    format!("name @{} of {id} is already used by {prev}", g.name),
                );
            }
            if matches!(g.space, AddrSpace::Generic | AddrSpace::Local) {
                err(
                    &mut self.errors,
                    loc.clone(),
                    VerifierErrorKind::GlobalAddrSpace,
                    format!(
                        "global @{} lives in {} space; globals must be global, shared or const",
                        g.name, g.space
                    ),
                );
            }
            if !g.align.is_power_of_two() {
                err(
                    &mut self.errors,
                    loc.clone(),
                    VerifierErrorKind::GlobalAlign,
                    format!(
                        "global @{} has alignment {}, not a power of two",
                        g.name, g.align
                    ),
                );
            }
            let linkage_error = if g.externally_initialized
                && (g.linkage != Linkage::Visible || g.space == AddrSpace::Shared)
            {
                Some(
                    "is externally_initialized, so it must be visible and in global or const space",
                )
            } else if g.linkage == Linkage::Visible && g.space == AddrSpace::Shared {
                Some("is visible but shared: shared memory has no host-visible symbol")
            } else if g.linkage == Linkage::Extern
                && (g.space != AddrSpace::Shared || g.count != 0 || g.init.is_some())
            {
                Some("is extern, which only the dynamic shared array (shared, no elements, no initializer) may be")
            } else {
                None
            };
            if let Some(why) = linkage_error {
                err(
                    &mut self.errors,
                    loc.clone(),
                    VerifierErrorKind::GlobalLinkage,
                    format!("global @{} {why}", g.name),
                );
            }
            let Some(init) = &g.init else { continue };
            if g.space == AddrSpace::Shared {
                err(
                    &mut self.errors,
                    loc.clone(),
                    VerifierErrorKind::SharedGlobalInit,
                    format!("shared global @{} has an initializer", g.name),
                );
            }
            if g.elem.is_ptr() {
                err(
                    &mut self.errors,
                    loc.clone(),
                    VerifierErrorKind::PointerGlobalInit,
                    format!(
                        "global @{} of pointer type {} has an initializer",
                        g.name, g.elem
                    ),
                );
            }
            if init.len() as u64 != u64::from(g.count) {
                err(
                    &mut self.errors,
                    loc.clone(),
                    VerifierErrorKind::GlobalInitLength,
                    format!(
                        "global @{} has {} elements but {} initial values",
                        g.name,
                        g.count,
                        init.len()
                    ),
                );
            }
            let bits = g.elem.bits();
            // One error per global is enough to point at the table.
            if let Some((k, &x)) = init
                .iter()
                .enumerate()
                .find(|&(_, &x)| bits < 64 && x >> bits != 0)
            {
                err(
                    &mut self.errors,
                    loc,
                    VerifierErrorKind::GlobalInitValue,
                    format!(
                        "initial value #{k} of global @{} is {x:#x}, wider than {}",
                        g.name, g.elem
                    ),
                );
            }
        }
    }
}

/// The state of verifying one function.
struct FuncCx<'a> {
    func: &'a Function,
    module: Option<&'a Module>,
    id: Option<FuncId>,
    context: String,
    dom: &'a dom::Dominance,
    errors: &'a mut Vec<VerifierError>,
    cases: &'a mut Vec<(u64, usize)>,
}

impl FuncCx<'_> {
    fn report(&mut self, location: AnyEntity, kind: VerifierErrorKind, message: String) {
        let inst_text = match location {
            AnyEntity::Inst(i) if self.func.dfg.inst_is_valid(i) => {
                Some(render_inst(self.func, self.module, i))
            }
            _ => None,
        };
        let dfg = &self.func.dfg;
        let layout = &self.func.layout;
        let inst = match location {
            AnyEntity::Inst(i) => Some(i),
            AnyEntity::Value(v) if dfg.value_is_valid(v) => match dfg.value_def(v) {
                ValueDef::Result(i) => Some(i),
                _ => None,
            },
            _ => None,
        };
        let block = match location {
            AnyEntity::Block(b) => Some(b),
            AnyEntity::Value(v) if dfg.value_is_valid(v) => match dfg.value_def(v) {
                ValueDef::Param(b, _) => Some(b),
                _ => None,
            },
            _ => None,
        }
        .or_else(|| {
            inst.filter(|&i| dfg.inst_is_valid(i))
                .and_then(|i| layout.inst_block(i))
        });
        self.errors.push(VerifierError {
            func: self.id,
            block,
            inst,
            context: self.context.clone(),
            location,
            inst_text,
            kind,
            message,
        });
    }

    /// The type of a value, if it is a valid id (invalid ones are reported as uses).
    fn ty(&self, v: Value) -> Option<Type> {
        self.func
            .dfg
            .value_is_valid(v)
            .then(|| self.func.dfg.value_type(v))
    }

    fn check_signature(&mut self) {
        let func = self.func;
        if func.kind == FuncKind::Kernel {
            if let Some(t) = func.sig.ret {
                self.report(
                    AnyEntity::Function(func.name.clone()),
                    VerifierErrorKind::KernelReturnsValue,
                    format!("kernel declares return type {t}; kernels return nothing"),
                );
            }
        }
        let mut prev: Option<u32> = None;
        for b in &func.byval {
            let bad = if func.kind != FuncKind::Kernel {
                Some("byval parameters are only for kernels".to_string())
            } else if func.sig.params.get(b.index as usize) != Some(&Type::Ptr(AddrSpace::Local)) {
                Some(format!(
                    "byval parameter {} is not a ptr.local parameter",
                    b.index
                ))
            } else if prev.is_some_and(|p| p >= b.index) {
                Some(format!(
                    "byval parameter {} listed twice or out of order",
                    b.index
                ))
            } else if !b.align.is_power_of_two() {
                Some(format!("byval alignment {} is not a power of two", b.align))
            } else {
                None
            };
            prev = Some(b.index);
            if let Some(m) = bad {
                self.report(
                    AnyEntity::Function(func.name.clone()),
                    VerifierErrorKind::ByValParam,
                    m,
                );
            }
        }
        for (s, data) in func.slots.iter() {
            if !data.align.is_power_of_two() {
                self.report(
                    AnyEntity::Slot(s),
                    VerifierErrorKind::SlotAlign,
                    format!("slot alignment {} is not a power of two", data.align),
                );
            }
        }
    }

    /// Blocks, instruction lists, terminators, entry parameters and the definition side
    /// of result/parameter bookkeeping.
    fn check_layout(&mut self) {
        let func = self.func;
        let dfg = &func.dfg;
        let Some(entry) = func.layout.entry_block() else {
            self.report(
                AnyEntity::Function(func.name.clone()),
                VerifierErrorKind::NoEntryBlock,
                "function has no blocks".to_string(),
            );
            return;
        };
        for b in func.layout.blocks() {
            if !dfg.block_is_valid(b) {
                self.report(
                    AnyEntity::Block(b),
                    VerifierErrorKind::InvalidBlock,
                    format!("laid-out {b} is not a block of the function"),
                );
                continue;
            }
            for (n, &p) in dfg.block_params(b).iter().enumerate() {
                if !dfg.value_is_valid(p) || dfg.value_def(p) != ValueDef::Param(b, n as u32) {
                    self.report(
                        AnyEntity::Block(b),
                        VerifierErrorKind::ParamDefMismatch,
                        format!("parameter #{n} {p} of {b} is not defined as that parameter"),
                    );
                }
            }
            if b == entry {
                self.check_entry_params(b);
            }
            let mut count = 0usize;
            let last = func.layout.last_inst(b);
            for i in func.layout.block_insts(b) {
                count += 1;
                if !dfg.inst_is_valid(i) {
                    self.report(
                        AnyEntity::Inst(i),
                        VerifierErrorKind::InvalidInst,
                        format!("laid-out {i} in {b} is not an instruction of the function"),
                    );
                    continue;
                }
                if func.layout.inst_block(i) != Some(b) {
                    self.report(
                        AnyEntity::Inst(i),
                        VerifierErrorKind::InstBlockMismatch,
                        format!("{i} is listed in {b} but the layout places it elsewhere"),
                    );
                }
                let is_term = dfg.inst(i).opcode().is_terminator();
                if is_term && Some(i) != last {
                    self.report(
                        AnyEntity::Inst(i),
                        VerifierErrorKind::TerminatorNotLast,
                        format!("terminator in the middle of {b}"),
                    );
                }
                if !is_term && Some(i) == last {
                    self.report(
                        AnyEntity::Inst(i),
                        VerifierErrorKind::MissingTerminator,
                        format!("{b} does not end with a terminator"),
                    );
                }
                if let Some(r) = dfg.inst_result(i) {
                    if !dfg.value_is_valid(r) || dfg.value_def(r) != ValueDef::Result(i) {
                        self.report(
                            AnyEntity::Inst(i),
                            VerifierErrorKind::ResultDefMismatch,
                            format!("result {r} is not defined as this instruction's result"),
                        );
                    }
                }
            }
            if count == 0 {
                self.report(
                    AnyEntity::Block(b),
                    VerifierErrorKind::EmptyBlock,
                    format!("{b} has no instructions"),
                );
            }
        }
    }

    fn check_entry_params(&mut self, entry: Block) {
        let params = self.func.dfg.block_params(entry);
        let sig = &self.func.sig.params;
        if params.len() != sig.len() {
            self.report(
                AnyEntity::Block(entry),
                VerifierErrorKind::EntryParamCount,
                format!(
                    "entry {entry} has {} parameters but the signature has {}",
                    params.len(),
                    sig.len()
                ),
            );
            return;
        }
        for (n, (&p, &t)) in params.iter().zip(sig).enumerate() {
            if let Some(pt) = self.ty(p) {
                if pt != t {
                    self.report(
                        AnyEntity::Block(entry),
                        VerifierErrorKind::EntryParamType,
                        format!("entry parameter #{n} {p} is {pt} but the signature says {t}"),
                    );
                }
            }
        }
    }

    /// Every value `inst` (in `block`) uses is valid, defined, laid out and — in
    /// reachable code — dominated by its definition.
    fn check_uses(&mut self, block: Block, inst: Inst) {
        let dfg = &self.func.dfg;
        for &v in dfg.inst_args(inst) {
            self.check_use(block, inst, v);
        }
        let func = self.func;
        for bc in dests(func, inst) {
            for &v in dfg.block_call_args(bc) {
                self.check_use(block, inst, v);
            }
        }
    }

    fn check_use(&mut self, block: Block, inst: Inst, v: Value) {
        use VerifierErrorKind as K;
        let func = self.func;
        let dfg = &func.dfg;
        let loc = AnyEntity::Inst(inst);
        if !dfg.value_is_valid(v) {
            self.report(loc, K::InvalidValue, format!("use of invalid value {v}"));
            return;
        }
        let reachable = self.dom.is_reachable(block);
        match dfg.value_def(v) {
            ValueDef::Detached => {
                self.report(loc, K::DetachedValue, format!("use of undefined value {v}"))
            }
            ValueDef::Result(d) => {
                if !dfg.inst_is_valid(d) || dfg.inst_result(d) != Some(v) {
                    self.report(
                        loc,
                        K::ResultDefMismatch,
                        format!("{v} claims to be the result of {d}, which does not have it"),
                    );
                    return;
                }
                let db = match func.layout.inst_block(d) {
                    Some(db) if func.layout.is_block_inserted(db) => db,
                    _ => {
                        self.report(
                            loc,
                            K::DefNotInLayout,
                            format!("use of {v}, whose defining {d} is not laid out"),
                        );
                        return;
                    }
                };
                if !reachable {
                    return;
                }
                let ok = if db == block {
                    // Both in `block` per the layout (a mismatch is reported elsewhere).
                    func.layout.inst_block(inst) == Some(block)
                        && func.layout.pp_cmp(d, inst) == core::cmp::Ordering::Less
                } else {
                    self.dom.dominates(db, block)
                };
                if !ok {
                    self.report(
                        loc,
                        K::UseNotDominated,
                        format!("use of {v} not dominated by its definition"),
                    );
                }
            }
            ValueDef::Param(pb, n) => {
                if !dfg.block_is_valid(pb) || dfg.block_params(pb).get(n as usize) != Some(&v) {
                    self.report(
                        loc,
                        K::ParamDefMismatch,
                        format!("{v} claims to be parameter #{n} of {pb}, which it is not"),
                    );
                    return;
                }
                if !func.layout.is_block_inserted(pb) {
                    self.report(
                        loc,
                        K::DefNotInLayout,
                        format!("use of {v}, a parameter of {pb}, which is not laid out"),
                    );
                    return;
                }
                if reachable && !self.dom.dominates(pb, block) {
                    self.report(
                        loc,
                        K::UseNotDominated,
                        format!("use of {v} not dominated by its definition"),
                    );
                }
            }
        }
    }

    /// Branch targets: valid, laid out, not the entry, argument count and types.
    fn check_branches(&mut self, inst: Inst) {
        use VerifierErrorKind as K;
        let func = self.func;
        let dfg = &func.dfg;
        let entry = func.layout.entry_block();
        for bc in dests(func, inst) {
            let loc = AnyEntity::Inst(inst);
            let t = bc.block;
            if !dfg.block_is_valid(t) || !func.layout.is_block_inserted(t) {
                self.report(
                    loc,
                    K::InvalidBranchTarget,
                    format!("branch to {t}, which is not a laid-out block"),
                );
                continue;
            }
            if Some(t) == entry {
                self.report(
                    loc.clone(),
                    K::EntryBlockTargeted,
                    format!("branch to the entry block {t}"),
                );
            }
            let params = dfg.block_params(t);
            let args = dfg.block_call_args(bc);
            if params.len() != args.len() {
                self.report(
                    loc,
                    K::BranchArgCount,
                    format!(
                        "branch passes {} arguments to {t}, which has {} parameters",
                        args.len(),
                        params.len()
                    ),
                );
                continue;
            }
            for (n, (&a, &p)) in args.iter().zip(params).enumerate() {
                if let (Some(at), Some(pt)) = (self.ty(a), self.ty(p)) {
                    if at != pt {
                        self.report(
                            loc.clone(),
                            K::BranchArgType,
                            format!("argument #{n} {a} to {t} is {at}, parameter {p} is {pt}"),
                        );
                    }
                }
            }
        }
    }
}

/// Every branch target of `inst` in `for_each_dest` order, borrowed from the function
/// (no allocation per branch: this runs on every instruction of every import). An
/// invalid jump table (which `check_inst_types` reports) has none instead of panicking.
fn dests(func: &Function, inst: Inst) -> impl Iterator<Item = &BlockCall> {
    let (first, cases): (&[BlockCall], &[(i64, BlockCall)]) = match func.dfg.inst(inst) {
        InstructionData::Jump { dest } => (core::slice::from_ref(dest), &[]),
        InstructionData::Brif { blocks, .. } => (&blocks[..], &[]),
        InstructionData::BrTable { table, .. } if func.dfg.jump_table_is_valid(*table) => {
            let jt = func.dfg.jump_table(*table);
            (core::slice::from_ref(&jt.default), &jt.cases[..])
        }
        _ => (&[], &[]),
    };
    first.iter().chain(cases.iter().map(|(_, c)| c))
}

/// A compact rendering of an instruction for error messages. It follows the text
/// format closely but is not the canonical printer (which lives in `write`).
fn render_inst(func: &Function, module: Option<&Module>, inst: Inst) -> String {
    let dfg = &func.dfg;
    let data = dfg.inst(inst);
    let op = data.opcode();
    let mut s = String::new();
    let res = dfg.inst_result(inst);
    let rty = res
        .filter(|&r| dfg.value_is_valid(r))
        .map(|r| dfg.value_type(r));
    if let Some(r) = res {
        let _ = write!(s, "{r} = ");
    }
    let list = |vs: &[Value]| {
        vs.iter()
            .map(|v| v.to_string())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let call = |bc: &BlockCall| {
        let args = dfg.block_call_args(bc);
        if args.is_empty() {
            bc.block.to_string()
        } else {
            format!("{}({})", bc.block, list(args))
        }
    };
    match data {
        InstructionData::Sreg { reg } => s.push_str(reg.name()),
        InstructionData::AtomicRmw { op, .. } => {
            let _ = write!(s, "atomic_{}", op.name());
        }
        _ => s.push_str(op.name()),
    }
    if matches!(
        op,
        crate::Opcode::Iconst | crate::Opcode::Fconst | crate::Opcode::Load
    ) || op.is_cast()
    {
        if let Some(t) = rty {
            let _ = write!(s, ".{t}");
        }
    }
    let _ = match data {
        InstructionData::IntConst { imm } => write!(s, " {imm}"),
        InstructionData::FloatConst { bits } => match rty {
            Some(Type::F32) => write!(s, " {}", f32::from_bits(*bits as u32)),
            _ => write!(s, " {}", f64::from_bits(*bits)),
        },
        InstructionData::Binary { args, flags, .. } => {
            for n in flags.names() {
                let _ = write!(s, " {n}");
            }
            write!(s, " {}", list(args))
        }
        InstructionData::IntCompare { cond, args } => write!(s, " {cond} {}", list(args)),
        InstructionData::FloatCompare { cond, args } => write!(s, " {cond} {}", list(args)),
        InstructionData::PtrAdd { args, scale } => write!(s, " {}, {scale}", list(args)),
        InstructionData::Load { ptr, flags } => {
            write!(s, "{} {ptr}", if flags.volatile { " volatile" } else { "" })
        }
        InstructionData::Store { args, flags } => write!(
            s,
            "{} {}",
            if flags.volatile { " volatile" } else { "" },
            list(args)
        ),
        InstructionData::GlobalAddr { global } => {
            match module.and_then(|m| m.globals.get(*global)) {
                Some(g) => write!(s, " @{}", g.name),
                None => write!(s, " {global}"),
            }
        }
        InstructionData::SlotAddr { slot } => write!(s, " {slot}"),
        InstructionData::Call { func: callee, .. } => {
            let args = list(data.arguments(&dfg.value_lists));
            match module.and_then(|m| m.functions.get(*callee)) {
                Some(c) => write!(s, " @{}({args})", c.name),
                None => write!(s, " {callee}({args})"),
            }
        }
        InstructionData::Jump { dest } => write!(s, " {}", call(dest)),
        InstructionData::Brif { arg, blocks } => {
            write!(s, " {arg}, {}, {}", call(&blocks[0]), call(&blocks[1]))
        }
        InstructionData::BrTable { arg, table } => {
            if dfg.jump_table_is_valid(*table) {
                let jt = dfg.jump_table(*table);
                let cases = jt
                    .cases
                    .iter()
                    .map(|(k, c)| format!("{k}: {}", call(c)))
                    .collect::<Vec<_>>()
                    .join(", ");
                write!(s, " {arg}, {}, [{cases}]", call(&jt.default))
            } else {
                write!(s, " {arg}, {table}")
            }
        }
        _ => {
            let args = data.arguments(&dfg.value_lists);
            if args.is_empty() {
                Ok(())
            } else {
                write!(s, " {}", list(args))
            }
        }
    };
    s
}
