//! Property tests of `loop-unroll` over generated UB-free kernels (nests, `continue`
//! latches, `break`s to any enclosing loop, early returns, switches, two-entry cycles,
//! barriers, calls; constant and argument-bounded loops).
//!
//! For every generated module, under `--verify-each` (the verifier after every pass, every
//! loop report checked against a fresh loop forest, every analysis kept checked against a
//! fresh one, every "no change" claim checked), with random unroll knobs
//! (thresholds, counts, partial unrolling on or off):
//! - after `loop(loop-unroll)` alone, behind `loop-rotate,indvars` (rotated loops with
//!   canonical counters, what `-O` gives it), and in the whole `-O` pipeline, the
//!   interpreter shows the same behaviour as the input on random inputs that follow the
//!   kernel's contract;
//! - every loop visit of `loop-unroll` either unrolled the loop (fully or partially) or
//!   left a remark saying why.

mod common;

use gyre_interp::{assert_same_behaviour, random_inputs};
use gyre_ir::generate::{generate_kernel_module, GenOptions, RandomSource, SplitMix64};
use gyre_ir::Module;
use gyre_transforms::knobs::apply_setting;
use gyre_transforms::{Knobs, Options, PassManager, Report, DEFAULT_PIPELINE};

fn apply(pipeline: &str, knobs: &Knobs, m: &mut Module) -> Result<Report, String> {
    let options = Options {
        verify_each: true,
        ..Options::default()
    };
    let mut pm = PassManager::from_pipeline(pipeline, knobs.clone(), options)?;
    pm.run_module(m).map_err(|e| e.to_string())
}

#[derive(Default, Debug)]
struct Totals {
    cases: u64,
    unrolled: u64,
    partial: u64,
    kept: u64,
    exits_folded: u64,
    blocks_merged: u64,
    /// Remarks by kind.
    reasons: std::collections::BTreeMap<&'static str, u64>,
}

const UNROLL: &str = "loop-unroll";

fn check_case(opts: &GenOptions, seed: u64, totals: &mut Totals) -> Result<(), String> {
    let (m, contract) = generate_kernel_module(opts, &mut SplitMix64::new(seed));
    let mut knobs = Knobs::default();
    let mut r = SplitMix64::new(seed ^ 0x5eed);
    let mut set = |k: String| apply_setting(&mut knobs, &k).map_err(|e| e.to_string());
    match r.next_u64() % 4 {
        // Full unrolling at various thresholds and count limits.
        0 | 1 => {
            let threshold = [30, 150, 400, 2000, 20000][(r.next_u64() % 5) as usize];
            set(format!("unroll-threshold={threshold}"))?;
            if r.next_u64() % 4 == 0 {
                set(format!("unroll-full-max-count={}", 1 + r.next_u64() % 16))?;
            }
        }
        // Partial unrolling: full unrolling made impossible, so that every loop with a
        // constant count divisible by some factor is unrolled partially.
        2 => {
            set("unroll-threshold=2".into())?;
            set("unroll-allow-partial=true".into())?;
            let pt = [20, 37, 100, 400][(r.next_u64() % 4) as usize];
            set(format!("unroll-partial-threshold={pt}"))?;
            if r.next_u64() % 3 == 0 {
                set(format!("unroll-max-count={}", 2 + r.next_u64() % 6))?;
            }
        }
        // An explicit count (0: not set, 1: no unrolling).
        _ => {
            set(format!("unroll-count={}", r.next_u64() % 6))?;
            if r.next_u64() % 2 == 0 {
                set("unroll-threshold=2000".into())?;
            }
        }
    }
    let kernel = &m.functions[contract.kernel].name;
    let o = DEFAULT_PIPELINE.to_string();
    let pipelines = [
        "loop-simplify,lcssa,loop(loop-unroll)",
        "loop-simplify,lcssa,loop(loop-rotate,indvars,loop-unroll)",
        o.as_str(),
    ];
    for pipeline in pipelines {
        let mut a = m.clone();
        let r = apply(pipeline, &knobs, &mut a).map_err(|e| format!("{pipeline}: {e}"))?;
        let full = r.stats.get(UNROLL, "NumFullyUnrolled");
        let partial = r.stats.get(UNROLL, "NumPartiallyUnrolled");
        let unrolled = full + partial;
        totals.unrolled += full;
        totals.partial += partial;
        totals.exits_folded += r.stats.get(UNROLL, "NumExitsFolded");
        totals.blocks_merged += r.stats.get(UNROLL, "NumBlocksMerged");
        let remarks = r.remarks.iter().filter(|x| x.pass == UNROLL).count() as u64;
        for x in r.remarks.iter().filter(|x| x.pass == UNROLL) {
            *totals.reasons.entry(x.kind).or_default() += 1;
        }
        totals.kept += remarks;
        let visits = r
            .loop_visits
            .iter()
            .find(|(p, _)| *p == UNROLL)
            .map_or(0, |(_, n)| *n);
        if unrolled + remarks != visits {
            return Err(format!(
                "{pipeline}: {visits} loops visited, {unrolled} unrolled, {remarks} remarks: \
                 every loop kept must say why"
            ));
        }
        for k in 0..3 {
            let inputs = random_inputs(&contract, seed.wrapping_mul(31).wrapping_add(k));
            assert_same_behaviour(&m, &a, kernel, &inputs)
                .map_err(|d| format!("{pipeline}: behaviour differs (inputs {k}): {d}"))?;
        }
    }
    totals.cases += 1;
    Ok(())
}

#[test]
fn loop_unroll_on_generated_kernels() {
    let per_profile = common::cases(40);
    let mut totals = Totals::default();
    common::sweep(
        &["default", "loopy", "reducible", "switchy"],
        per_profile,
        &mut totals,
        check_case,
    );
    assert!(
        totals.unrolled > 20 && totals.partial > 20 && totals.kept > 100,
        "the generator must exercise full unrolling: {totals:?}"
    );
}
