//! Which conditional branches are uniform (every active thread of a warp takes the same
//! direction), so that they may be emitted as `bra.uni`.
//!
//! The emitter asks one question, [`BranchUniformity::is_branch_uniform`]; the answer
//! comes from [`gyre_analysis::Uniformity`] (sources `tid`/`laneid`, atomics, call
//! results, generic/local loads and device-function parameters; data, sync and
//! temporal dependence — docs/uniformity.md). Keeping the decision behind this one type
//! lets the back end change its policy (e.g. never emit `bra.uni`) in one place.

use gyre_analysis::Uniformity;
use gyre_ir::Inst;

/// The uniformity of every branch of one function: a view of the function's cached
/// [`Uniformity`] (computed once, by whoever asked first: the optimizer or the emitter).
#[derive(Clone, Copy)]
pub struct BranchUniformity<'a> {
    uniformity: &'a Uniformity,
}

impl<'a> BranchUniformity<'a> {
    /// A view of `uniformity`, which must be valid for the function being emitted.
    pub fn new(uniformity: &'a Uniformity) -> BranchUniformity<'a> {
        BranchUniformity { uniformity }
    }

    /// May `inst` (a `brif` or `br_table`) be emitted as `bra.uni`?
    pub fn is_branch_uniform(&self, inst: Inst) -> bool {
        self.uniformity.is_branch_uniform(inst)
    }
}
