//! Gyre's transforms: the pass manager, the knob registry and the loop passes.
//!
//! Every pass documents what it **requires**, what it **establishes**, what it
//! **preserves**, when it **gives up**, and its knobs (docs/passes.md collects them).
#![warn(missing_docs)]

pub mod analyses;
pub mod knobs;
pub mod lcssa;
pub mod loop_rotate;
pub mod loop_simplify;
pub mod manager;
pub mod pipeline;
pub mod registry;
#[cfg(test)]
mod testutil;
pub mod utils;
pub mod verify;
// --- loop-deletion, loop-simplifycfg (issue 22) ---
mod loop_cleanup;
pub mod loop_deletion;
pub mod loop_simplifycfg;

pub use analyses::{Analyses, AnalysisCache, ModuleAnalyses};
pub use knobs::Knobs;
pub use manager::{
    Forms, FunctionPass, LoopHandle, LoopPass, LoopUpdater, Options, PassContext, PassError,
    PassManager, PassResult, Remark, Report, Stats,
};
pub use pipeline::DEFAULT_PIPELINE;
