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
//!
//! A front end builds functions with [`builder::FunctionBuilder`]: one
//! [`builder::Variable`] per source variable, and block parameters appear by themselves
//! (docs/frontend.md; `crates/toyc` is a complete front end). Handles from the module
//! ([`Module::push_function`], [`Module::func_ref`]) carry what a call needs.
//!
//! ```
//! use gyre_ir::builder::{FunctionBuilder, InstBuilder};
//! use gyre_ir::{AddrSpace, FuncKind, Function, IntCC, Module, Signature, SpecialReg, Type};
//! // kernel k(out: *i32) { let s = tid.x; if s < 4 { s = s * 2; } out[tid.x] = s; }
//! let mut m = Module::new();
//! let sig = Signature { params: vec![Type::Ptr(AddrSpace::Global)], ret: None };
//! let k = m.push_function(Function::new("k", FuncKind::Kernel, sig));
//! let mut b = FunctionBuilder::new(&mut m.functions[k.id]);
//! let (entry, then, merge) = (b.create_block(), b.create_block(), b.create_block());
//! b.append_block_params_for_function_params(entry);
//! b.switch_to_block(entry);
//! b.seal_block(entry);
//! let out = b.block_params(entry)[0];
//! let s = b.declare_var(Type::I32);
//! let t = b.sreg(SpecialReg::TidX);
//! b.def_var(s, t);
//! let four = b.iconst(Type::I32, 4);
//! let c = b.icmp(IntCC::Slt, t, four);
//! b.brif(c, then, &[], merge, &[]);
//! b.switch_to_block(then);
//! b.seal_block(then);
//! let two = b.iconst(Type::I32, 2);
//! let d = b.imul(t, two);
//! b.def_var(s, d);
//! b.jump(merge, &[]);
//! b.switch_to_block(merge);
//! b.seal_block(merge);
//! let p = b.ptradd(out, t, 4);
//! let v = b.use_var(s); // two definitions reach `merge`: a block parameter
//! b.store(v, p);
//! b.ret(None);
//! b.finalize().unwrap();
//! assert_eq!(m.functions[k.id].dfg.block_params(merge).len(), 1);
//! gyre_ir::verifier::verify_module(&m).unwrap();
//! ```
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
pub use function::{
    ByValParam, FuncKind, Function, InlineHint, LoopAttrs, Signature, SlotData, UnrollHint,
};
pub use instructions::{
    AtomicOp, BlockCall, FloatCC, InstructionData, IntCC, IntFlags, JumpTableData, MemFlags,
    MemOrder, MemScope, Opcode, ShflMode, SpecialReg, ValueList, ValueListPool, VoteMode,
};
pub use layout::Layout;
pub use module::{FuncRef, GlobalData, GlobalRef, Linkage, Module};
pub use parser::{parse_function, parse_module, ParseError, ParseErrors};
pub use types::{AddrSpace, Type};
pub use write::{write_function, write_module, DisplayFunction};
