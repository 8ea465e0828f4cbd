//! The functions one row of the table times: a family's shapes at one size, each built as
//! a Gyre and a Cranelift function with its own analysis objects, checked to agree, and
//! timed as a set (one pass over all of them per repetition).

use crate::clif;
use crate::measure::{min_ns, Triple};
use cranelift_codegen::dominator_tree::DominatorTree;
use cranelift_codegen::flowgraph::ControlFlowGraph;
use cranelift_codegen::ir::Function as ClifFunction;
use cranelift_codegen::loop_analysis::LoopAnalysis;
use gyre_analysis::cfggen::{self, CfgShape};
use gyre_analysis::{Cfg, DomTree, LoopInfo};
use gyre_ir::EntityRef;

/// The families, in table order.
pub const FAMILIES: [&str; 5] = [
    "nest3-seq",
    "random-reducible",
    "deep-nest",
    "exit-ladder",
    "exit-ladder-backwards",
];

/// The first seed of `random-reducible` (the others follow it).
pub const SEED: u64 = 0x5eed;

/// The shapes of `family` at `n` blocks, entries detached ([`clif::detach_entry`]), or
/// `None` for an unknown family. `random-reducible` gives
/// [`cfggen::distinct_functions`]`(n)` distinct functions (seeds [`SEED`], `SEED + 1`, ...)
/// so that timing them in turn keeps one small function out of the caches and the branch
/// predictor, as in a compiler; the deterministic families give one function.
pub fn shapes(family: &str, n: u32) -> Option<Vec<CfgShape>> {
    let shapes = match family {
        "nest3-seq" => vec![cfggen::loop_nest_sequence(n)],
        "random-reducible" => cfggen::random_reducible_set(n, SEED),
        "deep-nest" => vec![cfggen::deep_nest((n / 2).saturating_sub(1))],
        "exit-ladder" => vec![cfggen::exit_ladder(n)],
        "exit-ladder-backwards" => vec![cfggen::exit_ladder_backwards(n)],
        _ => return None,
    };
    Some(shapes.into_iter().map(clif::detach_entry).collect())
}

/// Each shape as a Cranelift and a Gyre function, with one set of analysis objects per
/// function (reused across repetitions, so their buffers are warm, as a compiler keeping
/// its analyses per function).
pub struct FunctionSet {
    shapes: Vec<CfgShape>,
    cfuncs: Vec<ClifFunction>,
    ccfg: Vec<ControlFlowGraph>,
    cdt: Vec<DominatorTree>,
    cla: Vec<LoopAnalysis>,
    gfuncs: Vec<gyre_ir::Function>,
    gcfg: Vec<Cfg>,
    gdt: Vec<DomTree>,
    gli: Vec<LoopInfo>,
}

impl FunctionSet {
    /// Build both functions for every shape (at least one), compute every analysis once and
    /// check, on every function, that both CFGs have the shape's edges and that Gyre and
    /// Cranelift agree on dominators and loops ([`clif::check_agreement`]).
    pub fn new(shapes: Vec<CfgShape>) -> Result<FunctionSet, String> {
        if shapes.is_empty() {
            return Err("no functions to time".into());
        }
        let k = shapes.len();
        let mut s = FunctionSet {
            cfuncs: Vec::with_capacity(k),
            ccfg: Vec::with_capacity(k),
            cdt: Vec::with_capacity(k),
            cla: Vec::with_capacity(k),
            gfuncs: Vec::with_capacity(k),
            gcfg: Vec::with_capacity(k),
            gdt: Vec::with_capacity(k),
            gli: Vec::with_capacity(k),
            shapes,
        };
        for (i, shape) in s.shapes.iter().enumerate() {
            let on = |e: String| format!("function {i} of {k}: {e}");
            let cfunc = clif::build(shape);
            let ccfg = ControlFlowGraph::with_function(&cfunc);
            clif::check_cfg(shape, &cfunc, &ccfg).map_err(on)?;
            let cdt = DominatorTree::with_function(&cfunc, &ccfg);
            let mut cla = LoopAnalysis::new();
            cla.compute(&cfunc, &ccfg, &cdt);
            let gfunc = shape.to_function();
            let gcfg = Cfg::with_function(&gfunc).map_err(|e| on(format!("Gyre CFG: {e}")))?;
            clif::check_gyre_cfg(shape, &gcfg).map_err(on)?;
            let gdt = DomTree::with_function(&gfunc, &gcfg);
            let gli = LoopInfo::with_function(&gfunc, &gcfg, &gdt);
            s.cfuncs.push(cfunc);
            s.ccfg.push(ccfg);
            s.cdt.push(cdt);
            s.cla.push(cla);
            s.gfuncs.push(gfunc);
            s.gcfg.push(gcfg);
            s.gdt.push(gdt);
            s.gli.push(gli);
        }
        s.check()?;
        Ok(s)
    }

    /// The shapes, in timing order.
    pub fn shapes(&self) -> &[CfgShape] {
        &self.shapes
    }

    /// Blocks of all the functions together: the divisor of the ns/block figures.
    pub fn total_blocks(&self) -> u64 {
        self.shapes.iter().map(|s| u64::from(s.num_blocks)).sum()
    }

    /// Check that Gyre's and Cranelift's current results agree on every function (run again
    /// after timing, which recomputed them).
    pub fn check(&self) -> Result<(), String> {
        let k = self.shapes.len();
        for i in 0..k {
            clif::check_agreement(
                self.shapes[i].num_blocks,
                &self.gdt[i],
                &self.gli[i],
                &self.cdt[i],
                &self.cla[i],
            )
            .map_err(|e| format!("function {i} of {k}: {e}"))?;
        }
        Ok(())
    }

    /// Gyre's loops of function `i`: (header, parent loop's header) per loop.
    pub fn gyre_loops(&self, i: usize) -> Vec<(usize, Option<usize>)> {
        let gli = &self.gli[i];
        gli.loops()
            .map(|l| {
                let parent = gli.parent(l).map(|p| gli.header(p).index());
                (gli.header(l).index(), parent)
            })
            .collect()
    }

    /// Loops of all the functions together.
    pub fn total_loops(&self) -> usize {
        self.gli.iter().map(|l| l.num_loops()).sum()
    }

    /// Cranelift's ns/block: each analysis timed as one pass over all the functions, the
    /// minimum over `reps` passes, divided by [`total_blocks`](Self::total_blocks).
    pub fn time_cranelift(&mut self, reps: usize) -> Triple {
        let blocks = self.total_blocks() as f64;
        let (funcs, ccfg, cdt, cla) = (&self.cfuncs, &mut self.ccfg, &mut self.cdt, &mut self.cla);
        let cfg = min_ns(reps, || {
            for (f, cfg) in funcs.iter().zip(ccfg.iter_mut()) {
                cfg.compute(f);
            }
        });
        let domtree = min_ns(reps, || {
            for ((f, cfg), dt) in funcs.iter().zip(ccfg.iter()).zip(cdt.iter_mut()) {
                dt.compute(f, cfg);
            }
        });
        let loops = min_ns(reps, || {
            for (((f, cfg), dt), la) in funcs
                .iter()
                .zip(ccfg.iter())
                .zip(cdt.iter())
                .zip(cla.iter_mut())
            {
                la.compute(f, cfg, dt);
            }
        });
        Triple {
            cfg: cfg / blocks,
            domtree: domtree / blocks,
            loops: loops / blocks,
        }
    }

    /// Gyre's ns/block, measured as [`time_cranelift`](Self::time_cranelift).
    pub fn time_gyre(&mut self, reps: usize) -> Triple {
        let blocks = self.total_blocks() as f64;
        let (funcs, gcfg, gdt, gli) = (&self.gfuncs, &mut self.gcfg, &mut self.gdt, &mut self.gli);
        let cfg = min_ns(reps, || {
            for (f, cfg) in funcs.iter().zip(gcfg.iter_mut()) {
                cfg.compute(f).expect("checked valid before timing");
            }
        });
        let domtree = min_ns(reps, || {
            for ((f, cfg), dt) in funcs.iter().zip(gcfg.iter()).zip(gdt.iter_mut()) {
                dt.compute(f, cfg);
            }
        });
        let loops = min_ns(reps, || {
            for (((f, cfg), dt), li) in funcs
                .iter()
                .zip(gcfg.iter())
                .zip(gdt.iter())
                .zip(gli.iter_mut())
            {
                li.compute(f, cfg, dt);
            }
        });
        Triple {
            cfg: cfg / blocks,
            domtree: domtree / blocks,
            loops: loops / blocks,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn random_reducible_rotates_over_distinct_functions() {
        let set = shapes("random-reducible", 1_000).expect("known family");
        assert_eq!(set.len(), cfggen::distinct_functions(1_000));
        assert!(set.len() > 1, "the test needs several functions");
        for (i, s) in set.iter().enumerate() {
            assert!(
                s.edges.iter().all(|&(_, t)| t != 0),
                "shape {i}: entry detached"
            );
            assert!(s.num_blocks == 1_000 || s.num_blocks == 1_001, "shape {i}");
            assert!(set[..i].iter().all(|t| t != s), "shape {i} repeats");
        }
        for family in [
            "nest3-seq",
            "deep-nest",
            "exit-ladder",
            "exit-ladder-backwards",
        ] {
            assert_eq!(shapes(family, 1_000).expect("known family").len(), 1);
        }
        assert!(shapes("nope", 1_000).is_none());
    }

    #[test]
    fn every_random_reducible_function_agrees() {
        // FunctionSet::new checks each function; so does check() after timing.
        let mut set = FunctionSet::new(shapes("random-reducible", 1_000).expect("known family"))
            .expect("agree");
        assert_eq!(set.shapes().len(), 16);
        let sum: u64 = set.shapes().iter().map(|s| u64::from(s.num_blocks)).sum();
        assert_eq!(set.total_blocks(), sum);
        let loops: usize = (0..16).map(|i| set.gyre_loops(i).len()).sum();
        assert_eq!(set.total_loops(), loops);
        let (c, g) = (set.time_cranelift(1), set.time_gyre(1));
        for t in [c, g] {
            assert!(t.all().is_finite() && t.cfg > 0.0 && t.domtree > 0.0 && t.loops > 0.0);
        }
        set.check().expect("still agree after timing");
    }

    #[test]
    fn the_check_covers_the_last_function() {
        let mut set = FunctionSet::new(shapes("random-reducible", 1_000).expect("known family"))
            .expect("agree");
        let k = set.shapes().len();
        // Give the last two functions each other's Cranelift dominator trees: only a check
        // that looks past the first function sees it.
        set.cdt.swap(k - 2, k - 1);
        let err = set
            .check()
            .expect_err("swapped dominator trees must disagree");
        assert!(
            err.starts_with(&format!("function {} of {k}", k - 2)),
            "{err}"
        );
    }
}
