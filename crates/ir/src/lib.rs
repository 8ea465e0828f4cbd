//! Gyre's intermediate representation.
//!
//! An arena SSA IR in Cranelift's style: every entity is a dense `u32` id
//! ([`Block`], [`Inst`], [`Value`], ...), per-entity data lives in `PrimaryMap`s and
//! `SecondaryMap`s, and a [`Function`] is a [`DataFlowGraph`] (what is computed) plus a
//! [`Layout`] (in which order). SSA uses block parameters instead of phi instructions:
//! each branch passes one argument per parameter of its target.
//!
//! The text format, the verifier, the builder and the random generator live in
//! submodules; docs/ir.md describes the instruction set and grammar.
#![warn(missing_docs)]

pub mod builder;
pub mod dfg;
pub mod entities;
pub mod function;
pub mod generate;
pub mod instructions;
pub mod layout;
pub mod module;
pub mod parser;
pub mod types;
pub mod verifier;
pub mod write;

pub use cranelift_entity::{EntityRef, PrimaryMap, SecondaryMap};
pub use dfg::{DataFlowGraph, ValueDef};
pub use entities::{Block, FuncId, GlobalId, Inst, JumpTable, Slot, Value};
pub use function::{ByValParam, FuncKind, Function, Signature, SlotData};
pub use instructions::{
    AtomicOp, BlockCall, FloatCC, InstructionData, IntCC, IntFlags, JumpTableData, MemFlags,
    MemOrder, MemScope, Opcode, ShflMode, SpecialReg, ValueList, ValueListPool, VoteMode,
};
pub use layout::Layout;
pub use module::{FuncRef, GlobalData, GlobalRef, Linkage, Module};
pub use parser::{parse_function, parse_module, ParseError, ParseErrors};
pub use types::{AddrSpace, Type};
pub use write::{write_function, write_module, DisplayFunction};
