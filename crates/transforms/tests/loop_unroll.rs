//! Property tests of `loop-unroll` over generated UB-free kernels (nests, `continue`
//! latches, `break`s to any enclosing loop, early returns, switches, two-entry cycles,
//! barriers, calls; constant and argument-bounded loops).
//!
//! For every generated module, under `--verify-each` (the verifier after every pass, every
//! loop report checked against a fresh loop forest, every analysis kept checked against a
//! fresh one, every "no change" claim checked), with random unroll knobs:
//! - after `loop(loop-unroll)` alone, behind `loop-rotate,indvars` (rotated loops with
//!   canonical counters, what `-O` gives it), and in the whole `-O` pipeline, the
//!   interpreter shows the same behaviour as the input on random inputs that follow the
//!   kernel's contract;
//! - every loop visit of `loop-unroll` either unrolled the loop or left a remark saying why.

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
    kept: u64,
    exits_folded: u64,
    blocks_merged: u64,
}

const UNROLL: &str = "loop-unroll";

fn check_case(opts: &GenOptions, seed: u64, totals: &mut Totals) -> Result<(), String> {
    let (m, contract) = generate_kernel_module(opts, &mut SplitMix64::new(seed));
    let mut knobs = Knobs::default();
    let mut r = SplitMix64::new(seed ^ 0x5eed);
    let threshold = [150, 400, 2000, 20000][(r.next_u64() % 4) as usize];
    apply_setting(&mut knobs, &format!("unroll-threshold={threshold}")).map_err(|e| e.to_string())?;
    if r.next_u64() % 4 == 0 {
        let max = 1 + r.next_u64() % 16;
        apply_setting(&mut knobs, &format!("unroll-full-max-count={max}"))
            .map_err(|e| e.to_string())?;
    }
    if r.next_u64() % 8 == 0 {
        let count = r.next_u64() % 8;
        apply_setting(&mut knobs, &format!("unroll-count={count}")).map_err(|e| e.to_string())?;
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
        let unrolled = r.stats.get(UNROLL, "NumFullyUnrolled");
        totals.unrolled += unrolled;
        totals.exits_folded += r.stats.get(UNROLL, "NumExitsFolded");
        totals.blocks_merged += r.stats.get(UNROLL, "NumBlocksMerged");
        let remarks = r.remarks.iter().filter(|x| x.pass == UNROLL).count() as u64;
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
        totals.unrolled > 20 && totals.kept > 100,
        "the generator must exercise full unrolling: {totals:?}"
    );
}
