//! Side-by-side timing of Gyre's control-flow analyses against Cranelift's and LLVM 14's
//! on the same CFGs (see `README.md` and the `analyses` binary).
//!
//! - [`clif`] builds a Cranelift function from a [`CfgShape`](gyre_analysis::cfggen::CfgShape)
//!   and checks that both compilers see the same graph, the same dominators and loops;
//! - [`llvm`] writes the same shape as LLVM IR and reads `opt -time-passes` reports;
//! - [`set`] gives a family's functions at one size (several distinct ones for
//!   `random-reducible`), builds them for Gyre and Cranelift, checks and times them;
//! - [`measure`] holds the timing helper and the result rows.
//!
//! The report (`report` binary, `cargo xtask perf`):
//!
//! - [`kernels`] builds the compile-speed kernels (`nest`, `deep`, `random`,
//!   `exit-ladder`);
//! - [`speed`] times Gyre in-process and as a process, and LLVM 14 per pass and as
//!   processes;
//! - [`process`] runs a process under `/usr/bin/time`, a time limit and a memory limit;
//! - [`quality`] reads the corpus quality JSON and counts PTX instructions;
//! - [`sim`] runs the small generated kernels' PTX (Gyre's and llc's) in ptx-sim;
//! - [`plot`] draws the SVGs; [`report`] renders docs/perf.md.
#![warn(missing_docs)]

pub mod clif;
pub mod llvm;
pub mod measure;
pub mod set;

pub mod kernels;
pub mod plot;
pub mod process;
pub mod quality;
pub mod report;
pub mod sim;
pub mod speed;
