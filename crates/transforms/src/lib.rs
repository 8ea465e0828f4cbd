//! Gyre's transforms: the pass manager, the knob registry and the loop passes.
//!
//! Every pass documents what it **requires**, what it **establishes**, what it
//! **preserves**, when it **gives up**, and its knobs (docs/passes.md collects them).
//!
//! A front end optimizes a verified module with one call, [`optimize`]; build a
//! [`PassManager`] for knobs, another pipeline or `verify_each`:
//!
//! ```
//! use gyre_ir::builder::{FunctionBuilder, InstBuilder};
//! use gyre_ir::{AddrSpace, FuncKind, Function, IntCC, Module, Signature, Type};
//! use gyre_transforms::{optimize, OptLevel};
//! // kernel k(out: *i32, n: i32) { let i = 0; while i < n { out[i] = i; i += 1; } }
//! let mut m = Module::new();
//! let sig = Signature { params: vec![Type::Ptr(AddrSpace::Global), Type::I32], ret: None };
//! let k = m.push_function(Function::new("k", FuncKind::Kernel, sig));
//! let mut b = FunctionBuilder::new(&mut m.functions[k.id]);
//! let (entry, header, body, exit) =
//!     (b.create_block(), b.create_block(), b.create_block(), b.create_block());
//! b.append_block_params_for_function_params(entry);
//! b.switch_to_block(entry);
//! b.seal_block(entry);
//! let (out, n) = (b.block_params(entry)[0], b.block_params(entry)[1]);
//! let i = b.declare_var(Type::I32);
//! let zero = b.iconst(Type::I32, 0);
//! b.def_var(i, zero);
//! b.jump(header, &[]);
//! b.switch_to_block(header); // sealed after the back edge
//! let iv = b.use_var(i);
//! let c = b.icmp(IntCC::Slt, iv, n);
//! b.brif(c, body, &[], exit, &[]);
//! b.switch_to_block(body);
//! b.seal_block(body);
//! let p = b.ptradd(out, iv, 4);
//! b.store(iv, p);
//! let one = b.iconst(Type::I32, 1);
//! let next = b.iadd(iv, one);
//! b.def_var(i, next);
//! b.jump(header, &[]);
//! b.seal_block(header);
//! b.switch_to_block(exit);
//! b.seal_block(exit);
//! b.ret(None);
//! b.finalize().unwrap();
//! gyre_ir::verifier::verify_module(&m).unwrap();
//! let report = optimize(&mut m, OptLevel::O2).unwrap();
//! gyre_ir::verifier::verify_module(&m).unwrap();
//! // loop-rotate moved the test to the bottom, behind a guard: more blocks than before;
//! // loop-unroll unrolled it at run time (`n` is unknown), and the loop pipeline then
//! // visited its remainder loop too.
//! assert_eq!(report.stats.get("loop-unroll", "NumRuntimeUnrolled"), 1);
//! assert!(report.loop_visits.iter().any(|&(pass, n)| pass == "loop-rotate" && n == 2));
//! assert!(m.functions[k.id].layout.blocks().count() > 4);
//! ```
#![warn(missing_docs)]

pub mod analyses;
pub mod indvars;
pub mod knobs;
pub mod lcssa;
pub mod loop_rotate;
pub mod loop_simplify;
pub mod manager;
pub mod optimize;
pub mod pipeline;
pub mod registry;
pub mod simple_loop_unswitch;
pub mod simplify;
#[cfg(test)]
mod testutil;
pub mod utils;
pub mod verify;
// --- loop-deletion, loop-simplifycfg (issue 22) ---
mod loop_cleanup;
pub mod loop_deletion;
pub mod loop_simplifycfg;
// --- loop-unroll (issue 23) ---
pub mod loop_unroll;
// --- licm (issue 23) ---
pub mod licm;
// --- inline (issue 23) ---
pub mod inline;
// --- sroa (issue 23) ---
pub mod sroa;
// --- select-formation (issue 23) ---
pub mod select_formation;
// --- simplifycfg (issue 23) ---
pub mod simplifycfg;
// --- loop-reduce (issue 23) ---
pub mod loop_reduce;
// --- separate-const-offset (issue 23) ---
pub mod const_offset;
// --- early-cse (issue 23) ---
pub mod early_cse;
// --- sink (issue 23) ---
pub mod sink;

pub use analyses::{Analyses, AnalysisCache, ModuleAnalyses};
pub use knobs::Knobs;
pub use manager::{
    Forms, FunctionPass, LoopHandle, LoopPass, LoopUpdater, ModulePass, ModulePassContext,
    ModulePassResult, Options, PassContext, PassError, PassManager, PassResult, Remark, Report,
    Stats,
};
pub use optimize::{optimize, OptLevel};
pub use pipeline::{CODEGEN_LOOP_PIPELINE, DEFAULT_PIPELINE};
