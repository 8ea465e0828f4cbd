//! The per-function analysis cache (cf. Cranelift's `Context`).
//!
//! Passes ask for what they need with [`AnalysisCache::ensure`]; a valid cached result
//! costs nothing. After a pass runs, the pass manager calls
//! [`AnalysisCache::invalidate`] with what the pass reported it preserves, and every
//! other analysis is cleared visibly. Nothing is kept in sync implicitly.

use gyre_analysis::{Cfg, DomTree, LoopInfo, PostDomTree};
use gyre_ir::Function;
use std::time::{Duration, Instant};

/// A set of analyses (what a pass needs, or what it preserves).
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug, Default)]
pub struct Analyses(u8);

impl Analyses {
    /// No analysis.
    pub const NONE: Analyses = Analyses(0);
    /// The control-flow graph.
    pub const CFG: Analyses = Analyses(1);
    /// The dominator tree.
    pub const DOMTREE: Analyses = Analyses(2);
    /// The post-dominator tree.
    pub const POSTDOM: Analyses = Analyses(4);
    /// The loop forest.
    pub const LOOPS: Analyses = Analyses(8);
    /// Every analysis: what a pass that changed nothing preserves.
    pub const ALL: Analyses = Analyses(0xff);

    /// The union of two sets.
    pub const fn union(self, o: Analyses) -> Analyses {
        Analyses(self.0 | o.0)
    }
    /// Does `self` contain all of `o`?
    pub const fn contains(self, o: Analyses) -> bool {
        self.0 & o.0 == o.0
    }
    /// Names of the analyses in the set.
    pub fn names(self) -> Vec<&'static str> {
        [
            (Self::CFG, "cfg"),
            (Self::DOMTREE, "domtree"),
            (Self::POSTDOM, "postdomtree"),
            (Self::LOOPS, "loops"),
        ]
        .into_iter()
        .filter(|(a, _)| self.contains(*a))
        .map(|(_, n)| n)
        .collect()
    }
}

/// Cached analyses of one function, and how long each took to compute.
#[derive(Default)]
pub struct AnalysisCache {
    /// The control-flow graph.
    pub cfg: Cfg,
    /// The dominator tree.
    pub domtree: DomTree,
    /// The post-dominator tree.
    pub postdom: PostDomTree,
    /// The loop forest.
    pub loops: LoopInfo,
    /// Time spent computing each analysis, in [`AnalysisCache::TIMED`] order.
    pub times: [Duration; 4],
    /// Number of computations of each analysis.
    pub counts: [u32; 4],
}

impl AnalysisCache {
    /// Analysis names in the order of `times` and `counts`.
    pub const TIMED: [&'static str; 4] = ["cfg", "domtree", "postdomtree", "loops"];

    /// An empty cache.
    pub fn new() -> AnalysisCache {
        AnalysisCache::default()
    }

    /// Which analyses are currently valid.
    pub fn valid(&self) -> Analyses {
        let mut a = Analyses::NONE;
        if self.cfg.is_valid() {
            a = a.union(Analyses::CFG);
        }
        if self.domtree.is_valid() {
            a = a.union(Analyses::DOMTREE);
        }
        if self.postdom.is_valid() {
            a = a.union(Analyses::POSTDOM);
        }
        if self.loops.is_valid() {
            a = a.union(Analyses::LOOPS);
        }
        a
    }

    /// Compute whatever of `what` (and its dependencies) is not valid.
    ///
    /// Fails only if the function is malformed (e.g. a branch to a block outside the
    /// layout): the verifier reports such functions properly.
    pub fn ensure(&mut self, func: &Function, what: Analyses) -> Result<(), String> {
        let needs_cfg = what.0 != 0;
        if needs_cfg && !self.cfg.is_valid() {
            let t = Instant::now();
            self.cfg.compute(func).map_err(|e| e.to_string())?;
            self.record(0, t);
        }
        let needs_dom = what.contains(Analyses::DOMTREE) || what.contains(Analyses::LOOPS);
        if needs_dom && !self.domtree.is_valid() {
            let t = Instant::now();
            self.domtree.compute(func, &self.cfg);
            self.record(1, t);
        }
        if what.contains(Analyses::POSTDOM) && !self.postdom.is_valid() {
            let t = Instant::now();
            self.postdom.compute(func, &self.cfg);
            self.record(2, t);
        }
        if what.contains(Analyses::LOOPS) && !self.loops.is_valid() {
            let t = Instant::now();
            self.loops.compute(func, &self.cfg, &self.domtree);
            self.record(3, t);
        }
        Ok(())
    }

    fn record(&mut self, idx: usize, start: Instant) {
        self.times[idx] += start.elapsed();
        self.counts[idx] += 1;
    }

    /// Clear every analysis not in `preserved`. Dependents go with what they depend on:
    /// a changed CFG invalidates everything.
    pub fn invalidate(&mut self, preserved: Analyses) {
        if !preserved.contains(Analyses::CFG) {
            self.cfg.clear();
            self.domtree.clear();
            self.postdom.clear();
            self.loops.clear();
            return;
        }
        if !preserved.contains(Analyses::DOMTREE) {
            self.domtree.clear();
            self.loops.clear();
        }
        if !preserved.contains(Analyses::POSTDOM) {
            self.postdom.clear();
        }
        if !preserved.contains(Analyses::LOOPS) {
            self.loops.clear();
        }
    }

    /// Clear everything (a new function).
    pub fn clear(&mut self) {
        self.invalidate(Analyses::NONE);
    }
}
