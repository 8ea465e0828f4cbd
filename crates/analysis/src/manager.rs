//! The per-function analysis cache shared by the optimizer and the back end (cf.
//! Cranelift's `Context`, LLVM's `FunctionAnalysisManager`).
//!
//! Every analysis is registered once, in the `analyses!` table at the bottom of this file:
//! its field name, its type, its bit in [`Analyses`], its printed name and the analyses it
//! is computed from. The table generates the cache's fields, the [`Analyses`] constants,
//! [`AnalysisCache::ensure`] (compute what is missing, dependencies first),
//! [`AnalysisCache::invalidate`] (clear what a pass did not preserve) and the timing
//! counters. Adding an analysis (scalar evolution, say)
//! is one line in the table plus an [`Analysis`] impl for its type.
//!
//! Passes ask for what they need with [`AnalysisCache::ensure`]; a valid cached result
//! costs nothing. After a pass runs, the pass manager calls [`AnalysisCache::invalidate`]
//! with what the pass reported it preserves. Nothing is kept in sync implicitly.
//!
//! The CFG has a third state besides valid and invalid: **edges valid, order stale**, after
//! a pass updated the edges of the blocks it changed with [`Cfg::update_block`] but did not
//! recompute the reverse post-order. [`AnalysisCache::valid`] does not count such a CFG as
//! valid, [`AnalysisCache::cfg_edges_valid`] does, and [`AnalysisCache::ensure`] repairs it
//! with [`Cfg::compute_order`] (linear, no terminator decoding) instead of a full rebuild.
//! The dominator tree has the same third state after [`DomTree::apply_updates`]: immediate
//! dominators exact, preorder numbering stale ([`AnalysisCache::domtree_idoms_valid`]);
//! `ensure` repairs it with [`DomTree::renumber`].
//!
//! [`ModuleAnalyses`] holds one cache per function, so that `gyre compile -O` hands the
//! analyses its passes left valid to the PTX emitter, which computes nothing twice.

use crate::{
    Cfg, CfgError, DomTree, LoopInfo, NonLocalUses, PostDomTree, ScalarEvolution, Uniformity,
};
use gyre_ir::{EntityRef, FuncId, Function};
use std::fmt;
use std::time::{Duration, Instant};

/// Why an analysis could not be computed: the function is malformed in a way the
/// analyses cannot represent (the verifier reports such functions properly).
#[derive(Clone, PartialEq, Eq, Debug)]
pub enum AnalysisError {
    /// The CFG could not be built (a branch to a block outside the layout).
    Cfg(CfgError),
}

impl fmt::Display for AnalysisError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AnalysisError::Cfg(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for AnalysisError {}

impl From<CfgError> for AnalysisError {
    fn from(e: CfgError) -> AnalysisError {
        AnalysisError::Cfg(e)
    }
}

impl From<AnalysisError> for String {
    fn from(e: AnalysisError) -> String {
        e.to_string()
    }
}

/// An analysis the cache can hold.
///
/// `compute` may read the analyses it declared as dependencies in the registration table
/// from `cache`: the cache guarantees they are valid when it calls `compute`. (The
/// analysis itself is taken out of the cache while it is computed, so its own field in
/// `cache` is empty then.)
pub trait Analysis: Default {
    /// Compute the analysis of `func` from scratch (reusing buffers).
    fn compute(&mut self, func: &Function, cache: &AnalysisCache) -> Result<(), AnalysisError>;
    /// Bring an analysis that is not [`Analysis::is_valid`] up to date. The default is
    /// [`Analysis::compute`]; the CFG overrides it to repair a stale order cheaply.
    fn update(&mut self, func: &Function, cache: &AnalysisCache) -> Result<(), AnalysisError> {
        self.compute(func, cache)
    }
    /// Forget the result (keeping buffers).
    fn clear(&mut self);
    /// Is the result up to date (as far as the analysis itself knows)?
    fn is_valid(&self) -> bool;
}

impl Analysis for Cfg {
    fn compute(&mut self, func: &Function, _: &AnalysisCache) -> Result<(), AnalysisError> {
        Cfg::compute(self, func).map_err(AnalysisError::from)
    }
    fn update(&mut self, func: &Function, cache: &AnalysisCache) -> Result<(), AnalysisError> {
        if Cfg::is_valid(self) {
            // Edges valid, order stale: no terminator needs decoding again.
            self.compute_order(func);
            Ok(())
        } else {
            Analysis::compute(self, func, cache)
        }
    }
    fn clear(&mut self) {
        Cfg::clear(self)
    }
    fn is_valid(&self) -> bool {
        Cfg::is_valid(self) && self.is_order_valid()
    }
}

impl Analysis for DomTree {
    fn compute(&mut self, func: &Function, cache: &AnalysisCache) -> Result<(), AnalysisError> {
        DomTree::compute(self, func, &cache.cfg);
        Ok(())
    }
    fn update(&mut self, func: &Function, cache: &AnalysisCache) -> Result<(), AnalysisError> {
        if DomTree::is_valid(self) {
            // Idoms kept current by `DomTree::apply_updates`; only the preorder numbering
            // (which the loop forest and dominance frontiers read) is stale.
            self.renumber();
            Ok(())
        } else {
            Analysis::compute(self, func, cache)
        }
    }
    fn clear(&mut self) {
        DomTree::clear(self)
    }
    fn is_valid(&self) -> bool {
        DomTree::is_valid(self) && self.is_numbered()
    }
}

impl Analysis for PostDomTree {
    fn compute(&mut self, func: &Function, cache: &AnalysisCache) -> Result<(), AnalysisError> {
        PostDomTree::compute(self, func, &cache.cfg);
        Ok(())
    }
    fn clear(&mut self) {
        PostDomTree::clear(self)
    }
    fn is_valid(&self) -> bool {
        PostDomTree::is_valid(self)
    }
}

impl Analysis for LoopInfo {
    fn compute(&mut self, func: &Function, cache: &AnalysisCache) -> Result<(), AnalysisError> {
        LoopInfo::compute(self, func, &cache.cfg, &cache.domtree);
        Ok(())
    }
    fn clear(&mut self) {
        LoopInfo::clear(self)
    }
    fn is_valid(&self) -> bool {
        LoopInfo::is_valid(self)
    }
}

impl Analysis for ScalarEvolution {
    fn compute(&mut self, func: &Function, cache: &AnalysisCache) -> Result<(), AnalysisError> {
        ScalarEvolution::compute(self, func, &cache.cfg, &cache.domtree, &cache.loops);
        Ok(())
    }
    fn clear(&mut self) {
        ScalarEvolution::clear(self)
    }
    fn is_valid(&self) -> bool {
        ScalarEvolution::is_valid(self)
    }
}

impl Analysis for NonLocalUses {
    fn compute(&mut self, func: &Function, _cache: &AnalysisCache) -> Result<(), AnalysisError> {
        NonLocalUses::compute(self, func);
        Ok(())
    }
    fn clear(&mut self) {
        NonLocalUses::clear(self)
    }
    fn is_valid(&self) -> bool {
        NonLocalUses::is_valid(self)
    }
}

impl Analysis for Uniformity {
    fn compute(&mut self, func: &Function, cache: &AnalysisCache) -> Result<(), AnalysisError> {
        Uniformity::compute(
            self,
            func,
            &cache.cfg,
            &cache.domtree,
            &cache.postdom,
            &cache.loops,
        );
        Ok(())
    }
    fn clear(&mut self) {
        Uniformity::clear(self)
    }
    fn is_valid(&self) -> bool {
        Uniformity::is_valid(self)
    }
}

/// Generates the cache from the registration table. Entries must be listed after their
/// dependencies (a unit test checks it), which makes declaration order a topological
/// order for `ensure` and `invalidate`.
macro_rules! analyses {
    ($(
        $(#[$doc:meta])*
        $field:ident : $ty:ty = $konst:ident, $name:literal, deps [$($dep:ident),*];
    )*) => {
        /// Bit positions of the registered analyses, in table order.
        #[allow(non_camel_case_types, clippy::upper_case_acronyms)]
        #[repr(u8)]
        enum Bit { $($konst,)* }

        /// Number of registered analyses.
        pub const NUM_ANALYSES: usize = [$($name),*].len();

        impl Analyses {
            $(
                $(#[$doc])*
                pub const $konst: Analyses = Analyses(1 << Bit::$konst as u32);
            )*
            /// Every registered analysis.
            pub const ALL: Analyses = Analyses(0 $(| (1 << Bit::$konst as u32))*);
            /// The printed names, in table order.
            pub const NAMES: [&'static str; NUM_ANALYSES] = [$($name),*];
            /// What each analysis is computed from (direct dependencies), in table order.
            pub const DEPS: [Analyses; NUM_ANALYSES] =
                [$(Analyses::NONE $(.union(Analyses::$dep))*),*];
        }

        /// Cached analyses of one function, and how long each took to compute.
        #[derive(Default)]
        pub struct AnalysisCache {
            $(
                $(#[$doc])*
                pub $field: $ty,
            )*
            /// Time spent computing each analysis, in [`AnalysisCache::TIMED`] order.
            pub times: [Duration; NUM_ANALYSES],
            /// Number of computations of each analysis, in [`AnalysisCache::TIMED`] order.
            pub counts: [u32; NUM_ANALYSES],
            /// Not an analysis: the buffers that loop passes compute one loop nest's scalar
            /// evolution in ([`ScalarEvolution::compute_nest`]), shared by all of them so
            /// that one set of function-sized tables serves the whole loop pipeline (each
            /// pass holding its own kept three or four alive until the process ended).
            /// A pass recomputes it on every visit and leaves it invalid; the loop adaptor
            /// frees it after the function's loop pipeline.
            pub loop_scev: ScalarEvolution,
        }

        impl AnalysisCache {
            /// Analysis names in the order of `times` and `counts`.
            pub const TIMED: [&'static str; NUM_ANALYSES] = Analyses::NAMES;

            /// Which analyses are currently valid.
            pub fn valid(&self) -> Analyses {
                let mut a = Analyses::NONE;
                $(
                    if Analysis::is_valid(&self.$field) {
                        a = a.union(Analyses::$konst);
                    }
                )*
                a
            }

            /// Compute whatever of `what` is not valid, with the dependencies that needs,
            /// dependencies first. A valid analysis is left as it is, and so are its
            /// dependencies (a pass may keep the loop forest current while the dominator
            /// tree it was computed from goes stale: ask for both to get both). Fails only
            /// if the function is malformed (a branch to a block outside the layout).
            pub fn ensure(&mut self, func: &Function, what: Analyses) -> Result<(), AnalysisError> {
                let need = what.minus(self.valid()).with_dependencies();
                $(
                    if need.contains(Analyses::$konst) && !Analysis::is_valid(&self.$field) {
                        let start = Instant::now();
                        let mut a = core::mem::take(&mut self.$field);
                        let r = Analysis::update(&mut a, func, self);
                        self.$field = a;
                        self.record(Bit::$konst as usize, start);
                        r?;
                    }
                )*
                Ok(())
            }

            /// Clear every analysis not in `preserved`. As in LLVM, an analysis the pass
            /// preserves stays even when one it was computed from is cleared: the pass
            /// kept it current itself (`--verify-each` compares every claim with a fresh
            /// computation).
            pub fn invalidate(&mut self, preserved: Analyses) {
                $(
                    if !preserved.contains(Analyses::$konst) {
                        Analysis::clear(&mut self.$field);
                    }
                )*
            }
        }
    };
}

/// A set of analyses (what a pass needs, or what it preserves), as bits in table order.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug, Default)]
pub struct Analyses(u32);

impl Analyses {
    /// No analysis.
    pub const NONE: Analyses = Analyses(0);

    /// The union of two sets.
    pub const fn union(self, o: Analyses) -> Analyses {
        Analyses(self.0 | o.0)
    }
    /// The analyses of `self` not in `o`.
    pub const fn minus(self, o: Analyses) -> Analyses {
        Analyses(self.0 & !o.0)
    }
    /// Does `self` contain all of `o`?
    pub const fn contains(self, o: Analyses) -> bool {
        self.0 & o.0 == o.0
    }
    /// Do the two sets share an analysis?
    pub const fn intersects(self, o: Analyses) -> bool {
        self.0 & o.0 != 0
    }
    /// Is the set empty?
    pub const fn is_empty(self) -> bool {
        self.0 == 0
    }
    /// The registered analyses in the set, as table indices.
    fn indices(self) -> impl Iterator<Item = usize> {
        (0..NUM_ANALYSES).filter(move |&i| self.0 & (1 << i) != 0)
    }
    /// The direct dependencies of every analysis in the set.
    pub fn dependencies(self) -> Analyses {
        self.indices()
            .fold(Analyses::NONE, |a, i| a.union(Analyses::DEPS[i]))
    }
    /// The set with everything its members are computed from, transitively.
    pub fn with_dependencies(self) -> Analyses {
        // Dependencies point to earlier table entries, so one backwards sweep closes it.
        let mut a = self;
        for i in (0..NUM_ANALYSES).rev() {
            if a.0 & (1 << i) != 0 {
                a = a.union(Analyses::DEPS[i]);
            }
        }
        a
    }
    /// Names of the analyses in the set, in table order.
    pub fn names(self) -> Vec<&'static str> {
        self.indices().map(|i| Analyses::NAMES[i]).collect()
    }
}

impl AnalysisCache {
    /// An empty cache.
    pub fn new() -> AnalysisCache {
        AnalysisCache::default()
    }

    /// Are the CFG's edges valid (its order may be stale)?
    pub fn cfg_edges_valid(&self) -> bool {
        self.cfg.is_valid()
    }

    /// Are the dominator tree's immediate dominators valid (its preorder numbering may be
    /// stale after [`DomTree::apply_updates`])?
    pub fn domtree_idoms_valid(&self) -> bool {
        self.domtree.is_valid()
    }

    fn record(&mut self, idx: usize, start: Instant) {
        self.times[idx] += start.elapsed();
        self.counts[idx] += 1;
    }

    /// Clear everything (a new function).
    pub fn clear(&mut self) {
        self.invalidate(Analyses::NONE);
    }

    /// Number of computations of the analyses in `what` so far.
    pub fn computations(&self, what: Analyses) -> u32 {
        what.indices().map(|i| self.counts[i]).sum()
    }
}

/// One [`AnalysisCache`] per function of a module, indexed by [`FuncId`].
///
/// The caches describe the functions as they were when the analyses were computed: whoever
/// changes a function outside a pass manager must invalidate its cache.
#[derive(Default)]
pub struct ModuleAnalyses {
    caches: Vec<AnalysisCache>,
    /// Times and counts of the caches of removed functions, kept in the totals.
    retired: Vec<(Duration, u32)>,
}

impl ModuleAnalyses {
    /// Empty caches.
    pub fn new() -> ModuleAnalyses {
        ModuleAnalyses::default()
    }

    /// The cache of function `f` (created empty on first use).
    pub fn get_mut(&mut self, f: FuncId) -> &mut AnalysisCache {
        if self.caches.len() <= f.index() {
            self.caches.resize_with(f.index() + 1, AnalysisCache::new);
        }
        &mut self.caches[f.index()]
    }

    /// The cache of function `f`, if one was created.
    pub fn get(&self, f: FuncId) -> Option<&AnalysisCache> {
        self.caches.get(f.index())
    }

    /// Computations of the analyses in `what`, summed over all functions.
    pub fn computations(&self, what: Analyses) -> u32 {
        self.caches.iter().map(|c| c.computations(what)).sum()
    }

    /// The functions `removed` (ids increasing, as they were before the removal) left the
    /// module and the others moved down, keeping their order (what a module pass that
    /// deletes functions does to the module's function table): drop their caches so that
    /// the rest stay at their functions' new ids. Their times and counts stay in
    /// [`ModuleAnalyses::totals`].
    pub fn remove_functions(&mut self, removed: &[FuncId]) {
        if removed.is_empty() {
            return;
        }
        if self.retired.is_empty() {
            self.retired = vec![(Duration::ZERO, 0); NUM_ANALYSES];
        }
        let mut next = removed.iter().peekable();
        let mut index = 0;
        let retired = &mut self.retired;
        self.caches.retain(|c| {
            let gone = next.peek().is_some_and(|f| f.index() == index);
            index += 1;
            if gone {
                next.next();
                for (k, slot) in retired.iter_mut().enumerate() {
                    slot.0 += c.times[k];
                    slot.1 += c.counts[k];
                }
            }
            !gone
        });
    }

    /// Time and number of computations per analysis, summed over all functions, in
    /// [`AnalysisCache::TIMED`] order.
    pub fn totals(&self) -> [(Duration, u32); NUM_ANALYSES] {
        let mut t = [(Duration::ZERO, 0u32); NUM_ANALYSES];
        for (slot, r) in t.iter_mut().zip(&self.retired) {
            *slot = *r;
        }
        for c in &self.caches {
            for (k, slot) in t.iter_mut().enumerate() {
                slot.0 += c.times[k];
                slot.1 += c.counts[k];
            }
        }
        t
    }
}

analyses! {
    /// The control-flow graph.
    cfg: Cfg = CFG, "cfg", deps [];
    /// The dominator tree.
    domtree: DomTree = DOMTREE, "domtree", deps [CFG];
    /// The post-dominator tree.
    postdom: PostDomTree = POSTDOM, "postdomtree", deps [CFG];
    /// The loop forest.
    loops: LoopInfo = LOOPS, "loops", deps [CFG, DOMTREE];
    /// Warp uniformity (divergence) of every value and branch.
    uniformity: Uniformity = UNIFORMITY, "uniformity", deps [CFG, DOMTREE, POSTDOM, LOOPS];
    /// Scalar evolution: closed forms of integer values and loop trip counts, computed
    /// for the whole function at once (linear; queries are then `&self`).
    scev: ScalarEvolution = SCEV, "scalar-evolution", deps [CFG, DOMTREE, LOOPS];
    /// Which values may be used outside their defining block.
    nonlocal: NonLocalUses = NONLOCAL_USES, "nonlocal-uses", deps [];
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_lists_dependencies_first() {
        for (i, d) in Analyses::DEPS.iter().enumerate() {
            for j in d.indices() {
                assert!(
                    j < i,
                    "{} depends on later {}",
                    Analyses::NAMES[i],
                    Analyses::NAMES[j]
                );
            }
        }
    }

    #[test]
    fn closure_and_invalidation_follow_dependencies() {
        assert_eq!(
            Analyses::UNIFORMITY.with_dependencies(),
            Analyses::ALL
                .minus(Analyses::SCEV)
                .minus(Analyses::NONLOCAL_USES),
            "uniformity needs every control-flow analysis"
        );
        assert_eq!(
            Analyses::SCEV.with_dependencies(),
            Analyses::ALL
                .minus(Analyses::POSTDOM)
                .minus(Analyses::UNIFORMITY)
                .minus(Analyses::NONLOCAL_USES)
        );
        assert_eq!(
            Analyses::LOOPS.with_dependencies(),
            Analyses::CFG
                .union(Analyses::DOMTREE)
                .union(Analyses::LOOPS)
        );
        let src = "kernel @k(i32) {
block0(v0: i32):
    v1 = iconst.i32 0
    jump block1(v1)
block1(v2: i32):
    v3 = icmp slt v2, v0
    brif v3, block2, block3
block2:
    v4 = iconst.i32 1
    v5 = iadd v2, v4
    jump block1(v5)
block3:
    return
}
";
        let f = gyre_ir::parse_function(src).expect("parses");
        let mut c = AnalysisCache::new();
        c.ensure(&f, Analyses::UNIFORMITY).expect("valid");
        assert_eq!(
            c.valid(),
            Analyses::ALL
                .minus(Analyses::SCEV)
                .minus(Analyses::NONLOCAL_USES)
        );
        assert_eq!(c.computations(Analyses::ALL), 5);
        c.ensure(&f, Analyses::ALL).expect("valid");
        assert_eq!(c.valid(), Analyses::ALL);
        assert_eq!(c.computations(Analyses::ALL), 7);
        // Asking again computes nothing.
        c.ensure(&f, Analyses::ALL).expect("valid");
        assert_eq!(c.computations(Analyses::ALL), 7);
        // Invalidation clears exactly what was not preserved: a pass that kept
        // uniformity current while losing the post-dominator tree keeps it.
        c.invalidate(Analyses::ALL.minus(Analyses::POSTDOM));
        assert_eq!(c.valid(), Analyses::ALL.minus(Analyses::POSTDOM));
        c.ensure(&f, Analyses::ALL).expect("valid");
        assert_eq!(c.computations(Analyses::ALL), 8);
        // The loops kept without the dominator tree (a loop pass that updates the forest
        // in place): asking for the loops computes nothing, asking for the tree computes
        // the tree alone.
        c.invalidate(Analyses::CFG.union(Analyses::LOOPS));
        c.ensure(&f, Analyses::LOOPS).expect("valid");
        assert_eq!(c.computations(Analyses::ALL), 8);
        assert_eq!(c.valid(), Analyses::CFG.union(Analyses::LOOPS));
        c.ensure(&f, Analyses::DOMTREE).expect("valid");
        assert_eq!(c.computations(Analyses::ALL), 9);
        // A stale order is repaired, not rebuilt.
        c.ensure(&f, Analyses::ALL).expect("valid");
        let b0 = f.entry_block().expect("entry");
        c.cfg.update_block(&f, b0).expect("valid");
        assert!(c.cfg_edges_valid() && !c.valid().contains(Analyses::CFG));
        c.ensure(&f, Analyses::CFG).expect("valid");
        assert!(c.valid().contains(Analyses::CFG));
    }

    #[test]
    fn a_dominator_tree_kept_by_incremental_updates_is_renumbered_not_rebuilt() {
        use crate::DomUpdate;
        use gyre_ir::{Block, BlockCall, InstructionData};
        let src = "kernel @k(i32) {
block0(v0: i32):
    v1 = iconst.i32 0
    v2 = icmp slt v0, v1
    jump block1
block1:
    jump block2
block2:
    return
}
";
        let mut f = gyre_ir::parse_function(src).expect("parses");
        let mut c = AnalysisCache::new();
        c.ensure(&f, Analyses::ALL).expect("valid");
        let (b0, b1, b2) = (Block::from_u32(0), Block::from_u32(1), Block::from_u32(2));
        assert_eq!(c.domtree.idom(b2), Some(b1));
        // block0 now branches to block2 as well: block2's idom becomes block0.
        let t = f.terminator(b0).expect("terminator");
        let icmp = f.layout.prev_inst(t).expect("icmp");
        let v2 = f.dfg.inst_result(icmp).expect("a result");
        let pool = &mut f.dfg.value_lists;
        let blocks = [BlockCall::new(b1, &[], pool), BlockCall::new(b2, &[], pool)];
        f.dfg
            .replace_inst(t, InstructionData::Brif { arg: v2, blocks });
        c.cfg.update_block(&f, b0).expect("valid");
        c.domtree
            .apply_updates(&f, &c.cfg, &[DomUpdate::Insert(b0, b2)])
            .expect("valid");
        // The pass kept the CFG edges and the idoms; the loops and the rest go.
        c.invalidate(Analyses::CFG.union(Analyses::DOMTREE));
        assert!(c.cfg_edges_valid() && c.domtree_idoms_valid());
        assert!(!c.valid().intersects(Analyses::CFG.union(Analyses::DOMTREE)));
        let n = c.computations(Analyses::DOMTREE);
        c.ensure(&f, Analyses::LOOPS).expect("valid");
        assert_eq!(
            c.valid(),
            Analyses::CFG
                .union(Analyses::DOMTREE)
                .union(Analyses::LOOPS)
        );
        assert_eq!(c.domtree.idom(b2), Some(b0));
        assert!(c.domtree.dominates(b0, b2) && !c.domtree.dominates(b1, b2));
        // Repaired (counted as one computation), from the kept idoms.
        assert_eq!(c.computations(Analyses::DOMTREE), n + 1);
        let fresh =
            crate::DomTree::with_function(&f, &crate::Cfg::with_function(&f).expect("valid"));
        for b in [b0, b1, b2] {
            assert_eq!(c.domtree.idom(b), fresh.idom(b));
        }
    }
}
