//! Property tests of `select-formation` over generated UB-free kernels (if-thens and
//! if-then-elses of every shape the generator makes, loops, memory, barriers, calls,
//! divisions), under `--verify-each`:
//! - alone, at the default threshold and at 20, and after `-O`: the interpreter shows
//!   the same behaviour as the input on random inputs that follow the kernel's contract;
//! - idempotence: a second run folds nothing (alone; `-O` ends with simplifycfg, whose
//!   merges can make new arms).

mod common;

use gyre_ir::generate::{generate_kernel_module, GenOptions, SplitMix64};
use gyre_ir::Module;
use gyre_transforms::{Knobs, Options, PassManager, Report, DEFAULT_PIPELINE};

fn apply(pipeline: &str, knobs: Knobs, m: &mut Module) -> Result<Report, String> {
    let options = Options {
        verify_each: true,
        ..Options::default()
    };
    let mut pm = PassManager::from_pipeline(pipeline, knobs, options)?;
    pm.run_module(m).map_err(|e| e.to_string())
}

#[derive(Default, Debug)]
struct Totals {
    cases: u64,
    triangles: u64,
    diamonds: u64,
    same_target: u64,
    speculated: u64,
}

fn check_case(opts: &GenOptions, seed: u64, totals: &mut Totals) -> Result<(), String> {
    let (m, contract) = generate_kernel_module(opts, &mut SplitMix64::new(seed));
    let mut knobs = Knobs::default();
    let pipeline = match seed % 3 {
        0 => "select-formation",
        1 => {
            knobs
                .set("select-formation-threshold", "20")
                .map_err(|e| e.to_string())?;
            "select-formation"
        }
        _ => DEFAULT_PIPELINE,
    };
    let mut a = m.clone();
    let r = apply(pipeline, knobs.clone(), &mut a)?;
    totals.triangles += r.stats.get("select-formation", "NumTriangles");
    totals.diamonds += r.stats.get("select-formation", "NumDiamonds");
    totals.same_target += r.stats.get("select-formation", "NumSameTarget");
    totals.speculated += r.stats.get("select-formation", "NumSpeculated");
    common::same_behaviour_on_random_inputs(&m, &a, &contract, seed, pipeline)?;
    if pipeline == DEFAULT_PIPELINE {
        // -O ends with simplifycfg, whose merges can make new arms.
        totals.cases += 1;
        return Ok(());
    }
    let mut b = a.clone();
    let r2 = apply("select-formation", knobs, &mut b)?;
    let again = r2.stats.get("select-formation", "NumSelects")
        + r2.stats.get("select-formation", "NumTriangles")
        + r2.stats.get("select-formation", "NumDiamonds")
        + r2.stats.get("select-formation", "NumSameTarget");
    if again != 0 {
        return Err(format!("{pipeline}: a second run folded {again} more"));
    }
    totals.cases += 1;
    Ok(())
}

#[test]
fn select_formation_on_generated_kernels() {
    let per_profile = common::cases(100);
    let mut totals = Totals::default();
    common::sweep(
        &["default", "loopy", "reducible", "switchy"],
        per_profile,
        &mut totals,
        check_case,
    );
    assert!(
        totals.triangles > 0 && totals.diamonds > 0 && totals.speculated > 0,
        "the generator must exercise select-formation: {totals:?}"
    );
}
