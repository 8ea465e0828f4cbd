//! Property tests of `simplifycfg` over generated UB-free kernels (loops, if-thens,
//! switches, memory, barriers, calls), under `--verify-each`:
//! - alone, after `simplify` (which makes some conditions constant), with
//!   `simplifycfg-keep-loops` off, and in `-O`: the interpreter shows the same behaviour
//!   as the input on random inputs that follow the kernel's contract;
//! - idempotence: a second run changes nothing (`-O` ends with simplifycfg).

mod common;

use gyre_ir::generate::{generate_kernel_module, GenOptions, SplitMix64};
use gyre_ir::Module;
use gyre_transforms::{Knobs, Options, PassManager, Report, DEFAULT_PIPELINE};

const NAME: &str = "simplifycfg";
const STATS: [&str; 4] = [
    "NumFoldedBranches",
    "NumBlocksRemoved",
    "NumForwarded",
    "NumMerged",
];

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
    /// Per statistic of [`STATS`], its sum over the cases.
    sums: [u64; 4],
}

fn check_case(opts: &GenOptions, seed: u64, totals: &mut Totals) -> Result<(), String> {
    let (m, contract) = generate_kernel_module(opts, &mut SplitMix64::new(seed));
    let mut knobs = Knobs::default();
    let pipeline = match seed % 4 {
        0 => NAME,
        1 => "simplify,simplifycfg",
        2 => {
            knobs
                .set("simplifycfg-keep-loops", "false")
                .map_err(|e| e.to_string())?;
            "simplify,simplifycfg"
        }
        _ => DEFAULT_PIPELINE,
    };
    let mut a = m.clone();
    let r = apply(pipeline, knobs.clone(), &mut a)?;
    for (k, s) in STATS.iter().enumerate() {
        totals.sums[k] += r.stats.get(NAME, s);
    }
    common::same_behaviour_on_random_inputs(&m, &a, &contract, seed, pipeline)?;
    totals.cases += 1;
    let mut b = a.clone();
    let r2 = apply(NAME, knobs, &mut b)?;
    let again: u64 = STATS.iter().map(|s| r2.stats.get(NAME, s)).sum();
    if again != 0 {
        return Err(format!(
            "{pipeline}: a second simplifycfg changed {again} more"
        ));
    }
    Ok(())
}

#[test]
fn simplifycfg_on_generated_kernels() {
    let per_profile = common::cases(100);
    let mut totals = Totals::default();
    common::sweep(
        &["default", "loopy", "reducible", "switchy"],
        per_profile,
        &mut totals,
        check_case,
    );
    eprintln!("{totals:?}");
    assert!(
        totals.sums.iter().all(|&s| s > 0),
        "the generator must exercise every step of simplifycfg ({STATS:?}): {totals:?}"
    );
}
