//! Entity references: dense `u32` ids for everything the IR owns.
//!
//! Each id is an index into a [`PrimaryMap`](cranelift_entity::PrimaryMap) owned by a
//! [`Function`](crate::Function) or [`Module`](crate::Module). The display prefix given
//! to `entity_impl!` (`block`, `v`, ...) is the spelling the printer, the parser and
//! error messages share.

use cranelift_entity::entity_impl;

/// A basic block of a function.
#[derive(Copy, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Block(u32);
entity_impl!(Block, "block");

/// An instruction of a function.
#[derive(Copy, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Inst(u32);
entity_impl!(Inst, "inst");

/// An SSA value: an instruction result or a block parameter.
#[derive(Copy, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Value(u32);
entity_impl!(Value, "v");

/// A per-thread local-memory slot of a function (what LLVM's `alloca` becomes).
#[derive(Copy, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Slot(u32);
entity_impl!(Slot, "slot");

/// A function of a module.
#[derive(Copy, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FuncId(u32);
entity_impl!(FuncId, "fn");

/// A global variable of a module (shared arrays, constant tables, global buffers).
#[derive(Copy, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct GlobalId(u32);
entity_impl!(GlobalId, "gv");

/// A switch table (the case list of a `br_table` terminator).
#[derive(Copy, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct JumpTable(u32);
entity_impl!(JumpTable, "jt");
