//! Side-by-side timing of Gyre's control-flow analyses against Cranelift's and LLVM 14's
//! on the same CFGs (see `README.md` and the `analyses` binary).
//!
//! - [`clif`] builds a Cranelift function from a [`CfgShape`](gyre_analysis::cfggen::CfgShape)
//!   and checks that both compilers see the same graph, the same dominators and loops;
//! - [`llvm`] writes the same shape as LLVM IR and reads `opt -time-passes` reports;
//! - [`set`] gives a family's functions at one size (several distinct ones for
//!   `random-reducible`), builds them for Gyre and Cranelift, checks and times them;
//! - [`measure`] holds the timing helper and the result rows.
#![warn(missing_docs)]

pub mod clif;
pub mod llvm;
pub mod measure;
pub mod set;
