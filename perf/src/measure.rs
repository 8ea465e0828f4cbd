//! Timing helper and the figures of one row of the table.

use std::time::Instant;

/// The minimum wall time of `f` over `reps` runs, in nanoseconds (the minimum is the most
/// robust statistic on a busy machine: noise only ever adds time).
pub fn min_ns(reps: usize, mut f: impl FnMut()) -> f64 {
    let mut best = f64::MAX;
    for _ in 0..reps {
        let t = Instant::now();
        f();
        best = best.min(t.elapsed().as_nanos() as f64);
    }
    best
}

/// Repetitions when one repetition analyses `num_blocks` blocks (all the functions of a
/// row): about 20M block visits per analysis, at least 5 and at most 2000 (as
/// `crates/analysis/examples/timing.rs`).
pub fn default_reps(num_blocks: u64) -> usize {
    (20_000_000 / num_blocks.max(1)).clamp(5, 2000) as usize
}

/// Nanoseconds per block of one compiler's `cfg`, `domtree` and `loops`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Triple {
    /// Building the CFG (successor/predecessor lists; Gyre's also its RPO).
    pub cfg: f64,
    /// The dominator tree, given the CFG.
    pub domtree: f64,
    /// The loop forest, given the CFG and dominator tree.
    pub loops: f64,
}

impl Triple {
    /// `domtree + loops`.
    pub fn dt_loops(&self) -> f64 {
        self.domtree + self.loops
    }
    /// `cfg + domtree + loops`.
    pub fn all(&self) -> f64 {
        self.cfg + self.domtree + self.loops
    }
    /// The per-field minimum of two measurements.
    pub fn min(&self, o: &Triple) -> Triple {
        Triple {
            cfg: self.cfg.min(o.cfg),
            domtree: self.domtree.min(o.domtree),
            loops: self.loops.min(o.loops),
        }
    }
}

/// ns/block of LLVM's `DominatorTreeAnalysis` and `LoopAnalysis`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LlvmTimes {
    /// `DominatorTreeAnalysis`.
    pub domtree: f64,
    /// `LoopAnalysis`.
    pub loops: f64,
}

impl LlvmTimes {
    /// `domtree + loops`.
    pub fn sum(&self) -> f64 {
        self.domtree + self.loops
    }
    /// The per-field minimum.
    pub fn min(&self, o: &LlvmTimes) -> LlvmTimes {
        LlvmTimes {
            domtree: self.domtree.min(o.domtree),
            loops: self.loops.min(o.loops),
        }
    }
}

/// LLVM's figures for one row.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Llvm {
    /// Not measured (`--no-llvm`, or no `opt`).
    Skipped,
    /// `opt` exceeded the time limit even on one copy of the function (or did at a smaller
    /// size of the same family).
    TimedOut,
    /// Measured.
    Measured {
        /// Functions in the module (copies cycling through the row's distinct functions).
        copies: usize,
        /// ns/block per computation (the average over the repeated computations).
        times: LlvmTimes,
    },
}

impl Llvm {
    /// The per-field minimum; a measurement beats a time-out or a skip.
    pub fn min(&self, o: &Llvm) -> Llvm {
        match (*self, *o) {
            (Llvm::Measured { copies, times }, Llvm::Measured { times: t2, .. }) => {
                Llvm::Measured {
                    copies,
                    times: times.min(&t2),
                }
            }
            (m @ Llvm::Measured { .. }, _) | (_, m @ Llvm::Measured { .. }) => m,
            (Llvm::TimedOut, _) | (_, Llvm::TimedOut) => Llvm::TimedOut,
            _ => Llvm::Skipped,
        }
    }
}

/// One row: a family at one size.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    /// Family name.
    pub family: &'static str,
    /// Distinct functions timed in turn (several for `random-reducible` at small sizes).
    pub functions: usize,
    /// Blocks per function (the mean over the functions, rounded).
    pub blocks: u32,
    /// Edges per function (branch targets, repeats included; the mean, rounded).
    pub edges: usize,
    /// Loops per function (the mean, rounded; all three compilers agree).
    pub loops: usize,
    /// Cranelift ns/block.
    pub clif: Triple,
    /// Gyre ns/block.
    pub gyre: Triple,
    /// LLVM 14 ns/block.
    pub llvm: Llvm,
}

impl Row {
    /// The per-cell minimum of two measurements of the same row.
    pub fn min(&self, o: &Row) -> Row {
        Row {
            clif: self.clif.min(&o.clif),
            gyre: self.gyre.min(&o.gyre),
            llvm: self.llvm.min(&o.llvm),
            ..self.clone()
        }
    }
}

fn f1(x: f64) -> String {
    format!("{x:.1}")
}

fn ratio(a: f64, b: f64) -> String {
    format!("{:.1}x", a / b)
}

/// The markdown tables: raw ns/block, sums and ratios to Gyre, then LLVM.
pub fn markdown(rows: &[Row]) -> String {
    let mut s = String::new();
    s.push_str("Gyre and Cranelift, ns/block (min over repetitions of one pass over `fns` distinct functions, warm buffers; blocks, edges and loops are per function, the mean over the `fns`):\n\n");
    s.push_str("| family | fns | blocks | edges | loops | CL cfg | CL domtree | CL loops | Gyre cfg | Gyre domtree | Gyre loops |\n");
    s.push_str("|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n");
    for r in rows {
        s.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |\n",
            r.family,
            r.functions,
            r.blocks,
            r.edges,
            r.loops,
            f1(r.clif.cfg),
            f1(r.clif.domtree),
            f1(r.clif.loops),
            f1(r.gyre.cfg),
            f1(r.gyre.domtree),
            f1(r.gyre.loops),
        ));
    }
    s.push_str("\nSums (ns/block) and ratios Cranelift / Gyre (target >= 3x):\n\n");
    s.push_str("| family | blocks | CL dt+loops | Gyre dt+loops | ratio dt+loops | CL cfg+dt+loops | Gyre cfg+dt+loops | ratio all |\n");
    s.push_str("|---|--:|--:|--:|--:|--:|--:|--:|\n");
    for r in rows {
        s.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} | {} | {} |\n",
            r.family,
            r.blocks,
            f1(r.clif.dt_loops()),
            f1(r.gyre.dt_loops()),
            ratio(r.clif.dt_loops(), r.gyre.dt_loops()),
            f1(r.clif.all()),
            f1(r.gyre.all()),
            ratio(r.clif.all(), r.gyre.all()),
        ));
    }
    if rows.iter().all(|r| r.llvm == Llvm::Skipped) {
        return s;
    }
    s.push_str("\nLLVM 14 ns/block (the average over repeated computations) and ratios LLVM / Gyre (target >= 10x):\n\n");
    s.push_str("| family | blocks | copies | LLVM domtree | LLVM loops | LLVM dt+loops | LLVM / Gyre dt+loops | LLVM / Gyre all |\n");
    s.push_str("|---|--:|--:|--:|--:|--:|--:|--:|\n");
    for r in rows {
        let cells = match r.llvm {
            Llvm::Measured { copies, times } => format!(
                "{copies} | {} | {} | {} | {} | {}",
                f1(times.domtree),
                f1(times.loops),
                f1(times.sum()),
                ratio(times.sum(), r.gyre.dt_loops()),
                ratio(times.sum(), r.gyre.all())
            ),
            Llvm::TimedOut => "- | timeout | timeout | - | - | -".into(),
            Llvm::Skipped => "- | - | - | - | - | -".into(),
        };
        s.push_str(&format!("| {} | {} | {cells} |\n", r.family, r.blocks));
    }
    s
}
