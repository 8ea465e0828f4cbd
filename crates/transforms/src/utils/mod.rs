//! The IR editing toolkit the loop passes share: cloning blocks with a value map,
//! splitting edges and predecessors, replacing uses, an SSA updater on block
//! parameters, and the dead-code sweep of one loop.
//!
//! These live in `gyre-transforms` rather than `gyre-ir` because most of them read or
//! update analyses (CFG, dominator tree, loop forest) that `gyre-ir` cannot depend on;
//! the purely data-flow pieces (deep copy of one instruction, pool-aware equality and
//! hashing of instruction data) are in `gyre-ir` itself.

pub mod clone;
pub mod loop_dce;
pub mod split;
pub mod ssa_updater;
pub mod uses;
