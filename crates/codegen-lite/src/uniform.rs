//! Which conditional branches are uniform (every active thread of a warp takes the same
//! direction), so that they may be emitted as `bra.uni`.
//!
//! The emitter asks one question, [`BranchUniformity::is_branch_uniform`]; the answer
//! comes from [`gyre_analysis::Uniformity`] (sources `tid`/`laneid`, atomics, call
//! results, generic/local loads and device-function parameters; data, sync and
//! temporal dependence — docs/uniformity.md). Keeping the decision behind this one type
//! lets the back end change its policy (e.g. never emit `bra.uni`) in one place.
//!
//! A kernel without any source of divergence ([`needs_analysis`] is false) has no
//! divergent value, so no divergent branch either: the analysis (and the
//! post-dominator tree it is computed from, about a third of the emission time on
//! large generated kernels) would only confirm [`BranchUniformity::all_uniform`].

use gyre_analysis::{source_kind, SourceKind, Uniformity};
use gyre_ir::{FuncKind, Function, Inst};

/// The uniformity of every branch of one function: a view of the function's cached
/// [`Uniformity`] (computed once, by whoever asked first: the optimizer or the emitter),
/// or every branch uniform for a function without sources of divergence.
#[derive(Clone, Copy)]
pub struct BranchUniformity<'a> {
    /// `None`: every branch is uniform ([`BranchUniformity::all_uniform`]).
    uniformity: Option<&'a Uniformity>,
}

impl<'a> BranchUniformity<'a> {
    /// A view of `uniformity`, which must be valid for the function being emitted.
    pub fn new(uniformity: &'a Uniformity) -> BranchUniformity<'a> {
        BranchUniformity {
            uniformity: Some(uniformity),
        }
    }

    /// Every branch uniform: what [`Uniformity`] finds for a function where
    /// [`needs_analysis`] is false, without computing it.
    pub fn all_uniform() -> BranchUniformity<'static> {
        BranchUniformity { uniformity: None }
    }

    /// May `inst` (a `brif` or `br_table`) be emitted as `bra.uni`?
    pub fn is_branch_uniform(&self, inst: Inst) -> bool {
        self.uniformity.is_none_or(|u| u.is_branch_uniform(inst))
    }
}

/// Can a branch of `f` be divergent, so that [`Uniformity`] must be computed to tell?
/// False for a kernel none of whose instructions has a result of
/// [`SourceKind::Divergent`]: the analysis's seeds are exactly those results (and a
/// device function's parameters), and with no divergent value there is no divergent
/// branch, hence no sync or temporal divergence either. One scan of the instructions.
pub fn needs_analysis(f: &Function) -> bool {
    if f.kind != FuncKind::Kernel {
        return true;
    }
    f.layout.blocks().any(|b| {
        f.layout
            .block_insts(b)
            .any(|i| source_kind(f, i) == SourceKind::Divergent && f.dfg.inst_result(i).is_some())
    })
}
