//! Control-flow analyses of Gyre IR, the ground every loop pass stands on.
//!
//! | analysis | computed from | algorithm |
//! |---|---|---|
//! | [`Cfg`] | [`Function`](gyre_ir::Function) | successor/predecessor CSR arrays, DFS reverse post-order |
//! | [`DomTree`] | `Cfg` | one Cooper–Harvey–Kennedy pass over the RPO, checked; semi-NCA (Georgiadis 2005) fallback |
//! | [`PostDomTree`] | `Cfg` | the same on the reverse CFG with a virtual exit (semi-NCA directly with several exits) |
//! | [`DominanceFrontiers`] | `Cfg` + a tree | Cooper–Harvey–Kennedy runner walk; [`IdfCalculator`] iterates |
//! | [`LoopInfo`] | `Cfg` + `DomTree` | LLVM's discover-and-build with union-find; irreducible SCCs reported |
//! | [`ScalarEvolution`] | `Cfg` + `DomTree` + `LoopInfo` | hash-consed closed forms of integer values, add-recurrences, loop trip counts ([`scev`](mod@scev)) |
//!
//! Every analysis has the same lifecycle: `new()` (empty, invalid), `compute(&Function,
//! &deps...)` (recompute from scratch, reusing its scratch buffers), `clear()` and
//! `is_valid()`. Nothing is kept in sync with the function implicitly: after a pass changes
//! the CFG, the caller recomputes (or, for the [`Cfg`], updates one block).
//!
//! All per-block data are dense arrays indexed by the block's `u32` index; nothing recurses
//! over program structure (a 1,000,000-block function or a 10,000-deep loop nest is fine).
//! Beside each fast algorithm, [`reference`](mod@reference) keeps the textbook one for tests only.
//!
//! # Performance
//!
//! Everything is linear or near-linear: [`Cfg`] O(n + m); [`DomTree`] and [`PostDomTree`]
//! O(n + m) on the fast path (its climbs are budgeted) and O(m log n) in the semi-NCA
//! fallback; [`LoopInfo`] O(m α(n)) given the `Cfg` and `DomTree`. Best-of-N ns per block
//! on a shared 2-core AMD EPYC (release build, `compute` with warm buffers), for
//! `cfg / domtree / loops / postdom`:
//!
//! | graph | 1k | 10k | 100k | 1M |
//! |---|---|---|---|---|
//! | nest3-seq (a loop per 2 blocks) | 12 / 7 / 10 / 13 | 12 / 7 / 10 / 13 | 13 / 7 / 10 / 13 | 17 / 9 / 11 / 15 |
//! | deep-nest (one nest, n/2 deep) | 11 / 7 / 11 / 13 | 11 / 7 / 11 / 13 | 12 / 7 / 11 / 13 | 16 / 8 / 13 / 15 |
//! | random-reducible, distinct functions | 12 / 8 / 7 / 37 | 26 / 13 / 15 / 46 | 25 / 14 / 15 / 43 | 30 / 18 / 18 / 50 |
//! | random-reducible, one function repeated | 11 / 8 / 6 / 19 | 12 / 8 / 7 / 20 | – | – |
//! | exit-ladder (one shared exit) | 12 / 8 / 0 / 15 | 13 / 8 / 0 / 15 | 13 / 8 / 0 / 15 | 18 / 9 / 0 / 16 |
//! | exit-ladder-backwards (semi-NCA fallback) | 12 / 22 / 0 / 13 | 13 / 24 / 0 / 13 | 14 / 24 / 0 / 14 | 18 / 27 / 0 / 15 |
//!
//! Side by side with Cranelift and LLVM 14 on the same CFGs: `cargo xtask perf analyses` (the
//! separate `perf/` workspace; docs/analyses.md has the table).
//! Graphs with code-like locality stay flat up to 1M blocks. `random-reducible` is timed
//! over [`cfggen::distinct_functions`] distinct functions at 1k and 10k blocks (one small
//! function repeated stays in the caches and lets the branch predictor learn its random
//! branches: the one-function row). Its dominator tree and loops grow about 2.2x and 2.8x
//! per block from 1k to 1M, nearly all of it between 1k and 10k (10k to 1M: 1.4x and
//! 1.2x): a 1k function's arrays stay in L2, a larger one's far edges (a few percent, many
//! of them back edges) miss it. Transparent huge pages change nothing, so it is not the
//! TLB; instructions per block are flat (dominator tree 155-156, loops 115-116 from 1k to
//! 1M, callgrind). Its post-dominator tree has several exits and takes semi-NCA, whose
//! reverse-DFS order is unrelated to block order.
//! Reproduce with `cargo run --release -p gyre-analysis --example timing [sizes...]`
//! (min of repeated runs; `GYRE_TIMING_REPS=1` under `valgrind --tool=callgrind`) or with
//! the criterion bench `cargo bench -p gyre-analysis --bench analysis`.
#![warn(missing_docs)]

pub mod cfg;
pub mod cfggen;
pub mod domtree;
pub mod domtree_update;
pub mod frontier;
pub mod loops;
pub mod manager;
pub mod nonlocal;
pub mod postdom;
pub mod print;
pub mod reference;
mod scc;
pub mod scev;
pub mod testutil;
mod tree;
pub mod uniformity;

pub use cfg::{Cfg, CfgError};
pub use domtree::DomTree;
pub use domtree_update::{DomUpdate, DomUpdateError};
pub use frontier::{DominanceFrontiers, IdfCalculator};
pub use loops::{IrreducibleCycle, Loop, LoopBlocks, LoopInfo, TopLevel, TopLevelIter};
pub use manager::{Analyses, Analysis, AnalysisCache, AnalysisError, ModuleAnalyses};
pub use nonlocal::NonLocalUses;
pub use postdom::PostDomTree;
pub use print::{print_cfg, print_domtree, print_loops, print_postdomtree};
pub use scev::{print_scev, ScalarEvolution, Scev, ScevKind};
pub use tree::Children;
pub use uniformity::{print::print_uniformity, source_kind, SourceKind, Uniformity};
