//! Inputs shared by the workspace-level benchmarks.

use gyre_ir::generate::{generate_from_seed, GenOptions};
use gyre_ir::Module;

/// A generated kernel module of at least `blocks` blocks, with every control-flow feature
/// (nests, several latches and exits, switches) but no irreducible regions.
pub fn large_module(blocks: usize) -> Module {
    let opts = GenOptions {
        target_blocks: Some(blocks),
        allow_irreducible: false,
        allow_calls: false,
        ..GenOptions::default()
    };
    generate_from_seed(&opts, 0x5eed).0
}

/// Number of instructions laid out in a module.
pub fn count_insts(m: &Module) -> usize {
    m.functions.values().map(|f| f.num_laid_out_insts()).sum()
}

/// Number of blocks laid out in a module.
pub fn count_blocks(m: &Module) -> usize {
    m.functions.values().map(|f| f.layout.num_blocks()).sum()
}
