//! Helpers shared by the passes' unit tests.

use crate::analyses::AnalysisCache;
use crate::knobs::Knobs;
use crate::manager::{FunctionPass, PassContext, PassError, PassResult, Stats};
use gyre_ir::Function;

/// Run a pass on `func` with default knobs and an empty cache; returns its result and
/// counters.
pub fn run_pass(pass: &mut dyn FunctionPass, func: &mut Function) -> (PassResult, Stats) {
    let mut stats = Stats::default();
    let res = run_with(pass, func, &mut stats).expect("pass succeeds");
    (res, stats)
}

/// Run a pass that may fail.
pub fn try_run_pass(
    pass: &mut dyn FunctionPass,
    func: &mut Function,
) -> Result<PassResult, PassError> {
    run_with(pass, func, &mut Stats::default())
}

fn run_with(
    pass: &mut dyn FunctionPass,
    func: &mut Function,
    stats: &mut Stats,
) -> Result<PassResult, PassError> {
    let knobs = Knobs::default();
    let (mut cache, mut remarks) = (AnalysisCache::new(), Vec::new());
    let mut cx = PassContext {
        knobs: &knobs,
        analyses: &mut cache,
        stats,
        remarks: &mut remarks,
    };
    pass.run(func, &mut cx)
}
