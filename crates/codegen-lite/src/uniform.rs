//! Which conditional branches are uniform (every active thread of a warp takes the same
//! direction), so that they may be emitted as `bra.uni`.
//!
//! The emitter asks one question, [`BranchUniformity::is_branch_uniform`]; the answer
//! comes from [`gyre_analysis::Uniformity`] (sources `tid`/`laneid`, atomics, call
//! results, generic/local loads and device-function parameters; data, sync and
//! temporal dependence — docs/uniformity.md). Keeping the decision behind this one type
//! lets the back end change its policy (e.g. never emit `bra.uni`) in one place.

use gyre_analysis::{Cfg, DomTree, LoopInfo, PostDomTree, Uniformity};
use gyre_ir::{Function, Inst};

/// The uniformity of every branch of one function.
#[derive(Clone, Default)]
pub struct BranchUniformity {
    uniformity: Uniformity,
}

impl BranchUniformity {
    /// Analyse `func` (the analyses must be valid for it).
    pub fn compute(
        func: &Function,
        cfg: &Cfg,
        dt: &DomTree,
        pdt: &PostDomTree,
        li: &LoopInfo,
    ) -> BranchUniformity {
        BranchUniformity {
            uniformity: Uniformity::with_function(func, cfg, dt, pdt, li),
        }
    }

    /// May `inst` (a `brif` or `br_table`) be emitted as `bra.uni`?
    pub fn is_branch_uniform(&self, inst: Inst) -> bool {
        self.uniformity.is_branch_uniform(inst)
    }
}
