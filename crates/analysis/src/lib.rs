//! Control-flow analyses of Gyre IR, the ground every loop pass stands on.
//!
//! | analysis | computed from | algorithm |
//! |---|---|---|
//! | [`Cfg`] | [`Function`](gyre_ir::Function) | successor/predecessor CSR arrays, DFS reverse post-order |
//! | [`DomTree`] | `Cfg` | one Cooper–Harvey–Kennedy pass over the RPO, checked; semi-NCA (Georgiadis 2005) fallback |
//! | [`PostDomTree`] | `Cfg` | the same on the reverse CFG with a virtual exit (semi-NCA directly with several exits) |
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
//!
//! # Performance
//!
//! Everything is linear or near-linear: [`Cfg`] O(n + m); [`DomTree`] and [`PostDomTree`]
//! O(n + m) on the fast path (its climbs are budgeted) and O(m log n) in the semi-NCA
//! fallback; [`LoopInfo`] O(m α(n)) given the `Cfg` and `DomTree`. Best-of-N ns per block
//! on a shared 2-core AMD EPYC (release build, `compute` with warm buffers), for
//! `cfg / domtree / loops / postdom`:
//!
//! | graph | 1k | 100k | 1M |
//! |---|---|---|---|
//! | nest3-seq (a loop per 2 blocks) | 17 / 7 / 10 / 13 | 18 / 8 / 10 / 13 | 19 / 9 / 11 / 15 |
//! | deep-nest (one nest, n/2 deep) | 17 / 7 / 11 / 13 | 17 / 8 / 11 / 13 | 21 / 8 / 12 / 14 |
//! | random-reducible | 16 / 8 / 6 / 19 | 31 / 14 / 15 / 42 | 36 / 18 / 18 / 49 |
//! | exit-ladder (one shared exit) | 20 / 8 / 0 / 14 | 23 / 8 / 0 / 14 | 23 / 12 / 0 / 16 |
//!
//! Side by side with Cranelift and LLVM 14 on the same CFGs: `cargo xtask perf` (the
//! separate `perf/` workspace; docs/analyses.md has the table).
//! Graphs with code-like locality stay flat up to 1M blocks. `random-reducible` sends ~5%
//! of its edges (and many back edges) far away, so from 100k blocks on (working set beyond
//! the 1 MiB L2) its time is bound by cache misses on those edges: about 2.2x from 1k to
//! 1M for the dominator tree and the loops (transparent huge pages change nothing, so it is
//! not the TLB). Its post-dominator tree has several exits and takes semi-NCA, whose
//! reverse-DFS order is unrelated to block order.
//! Reproduce with `cargo run --release -p gyre-analysis --example timing [sizes...]`
//! (min of repeated runs; `GYRE_TIMING_REPS=1` under `valgrind --tool=callgrind`) or with
//! the criterion bench `cargo bench -p gyre-analysis --bench analysis`.
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
pub mod uniformity;

pub use cfg::{Cfg, CfgError};
pub use domtree::DomTree;
pub use frontier::{DominanceFrontiers, IdfCalculator};
pub use loops::{IrreducibleCycle, Loop, LoopInfo};
pub use postdom::PostDomTree;
pub use print::{print_cfg, print_domtree, print_loops, print_postdomtree};
pub use tree::Children;
pub use uniformity::{print::print_uniformity, source_kind, SourceKind, Uniformity};
