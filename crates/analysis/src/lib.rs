//! Control-flow analyses of Gyre IR, the ground every loop pass stands on.
//!
//! | analysis | computed from | algorithm |
//! |---|---|---|
//! | [`Cfg`] | [`Function`](gyre_ir::Function) | successor/predecessor CSR arrays, DFS reverse post-order |
//! | [`DomTree`] | `Cfg` | semi-NCA (Georgiadis 2005), iterative, O(m log n) |
//! | [`PostDomTree`] | `Cfg` | semi-NCA on the reverse CFG with a virtual exit |
//! | [`DominanceFrontiers`] | `Cfg` + a tree | Cooper–Harvey–Kennedy runner walk; [`IdfCalculator`] iterates |
//! | [`LoopInfo`] | `Cfg` + `DomTree` | LLVM's discover-and-build with union-find; irreducible SCCs reported |
//!
//! Every analysis has the same lifecycle: `new()` (empty, invalid), `compute(&Function,
//! &deps...)` (recompute from scratch, reusing its scratch buffers), `clear()` and
//! `is_valid()`. Nothing is kept in sync with the function implicitly: after a pass changes
//! the CFG, the caller recomputes (or, for the [`Cfg`], updates one block).
//!
//! All per-block data are dense arrays indexed by the block's `u32` index; nothing recurses
//! over program structure (a 1,000,000-block function or a 10,000-deep loop nest is fine).
//! Beside each fast algorithm, [`reference`](mod@reference) keeps the textbook one for tests only.
#![warn(missing_docs)]

pub mod cfg;
pub mod cfggen;
pub mod domtree;
pub mod frontier;
pub mod loops;
pub mod postdom;
pub mod print;
pub mod reference;
mod scc;
pub mod testutil;
mod tree;

pub use cfg::{Cfg, CfgError};
pub use domtree::DomTree;
pub use frontier::{DominanceFrontiers, IdfCalculator};
pub use loops::{IrreducibleCycle, Loop, LoopInfo};
pub use postdom::PostDomTree;
pub use print::{print_cfg, print_domtree, print_loops, print_postdomtree};
pub use tree::Children;
