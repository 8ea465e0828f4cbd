//! `uniformity`: every value the uniformity analysis calls uniform is equal across the
//! threads of each warp in an interpreter run, and every uniform branch sends a warp's
//! threads one way. The kernel is instrumented by the analysis crate's own trace harness
//! (crates/analysis/tests/common/trace.rs) and run with CTAs of whole warps.

use crate::uni_trace::{self, Claims, Observed, TraceError};
use crate::{Case, Features, Input, InputKind, Target};
use gyre_analysis::{Cfg, DomTree, LoopInfo, PostDomTree, Uniformity};
use gyre_interp::{random_inputs_for_shape, run_kernel, Inputs};
use gyre_ir::generate::{RandomSource, SplitMix64};

/// The target.
pub const TARGET: Target = Target {
    name: "uniformity",
    doc: "values claimed uniform are equal across each warp in an interpreter run",
    kind: InputKind::Kernel,
    generate,
    check,
};

/// Events logged per thread before the trace saturates (the case is then skipped).
const CAP: u64 = 3000;

fn generate(seed: u64) -> Input {
    Input::Kernel(Case::generate(seed, |o| {
        o.max_cta_threads = o.max_cta_threads.max(32);
    }))
}

fn check(input: &Input) -> Result<Features, String> {
    let case = input.kernel();
    let (m, contract) = (&case.module, &case.contract);
    let kid = contract.kernel;
    let f = &m.functions[kid];
    let cfg = Cfg::with_function(f).map_err(|e| e.to_string())?;
    let dt = DomTree::with_function(f, &cfg);
    let pdt = PostDomTree::with_function(f, &cfg);
    let li = LoopInfo::with_function(f, &cfg, &dt);
    let u = Uniformity::with_function(f, &cfg, &dt, &pdt, &li);
    if contract.max_cta_threads < 32 {
        return Ok(vec!["skipped: CTA below a warp".into()]);
    }

    let mut rng = SplitMix64::new(case.seed ^ 0x0123_4567_89ab_cdef);
    let ntid: u32 = if contract.max_cta_threads >= 64 && rng.below(2) == 0 {
        64
    } else {
        32
    };
    let nctaid = 1 + rng.below(2) as u32;
    let threads = u64::from(ntid * nctaid);
    let Inputs {
        mut launch,
        memory: mut mem,
    } = random_inputs_for_shape(contract, nctaid, ntid, &mut rng);
    let im = uni_trace::instrument(m, kid, threads, CAP);
    launch.config.detect_races = false;
    if let Err(e) = run_kernel(&im, &f.name, &launch, &mut mem) {
        // The instrumented kernel runs what the original would: an error here is for the
        // pipeline and roundtrip targets (which run the kernel as is), not this analysis.
        return Ok(vec![format!("skipped: {:?}", e.kind())]);
    }
    let words: Vec<u64> = mem
        .read::<u64>(uni_trace::TRACE_GLOBAL)
        .ok_or("no trace buffer")?;
    let poison = mem
        .poison(uni_trace::TRACE_GLOBAL)
        .ok_or("no trace buffer")?;
    let claims = Claims::of(f, &u);
    let mut obs = Observed::new(f);
    match uni_trace::check_trace(
        f,
        &li,
        &claims,
        &words,
        poison,
        threads,
        u64::from(ntid),
        CAP,
        &mut obs,
    ) {
        Ok(()) => Ok(vec![format!("checked, branches {}", obs.branches.min(3))]),
        Err(TraceError::Saturated { .. }) => Ok(vec!["skipped: trace saturated".into()]),
        Err(TraceError::Unsound(msg)) => Err(format!("uniformity unsound: {msg}")),
    }
}
