//! Property tests of `indvars` over generated UB-free kernels (nests, several exits,
//! switches, barriers, calls; zero-trip loops come from the random `n`).
//!
//! For every generated module, after `loop-simplify,lcssa,loop(loop-rotate,indvars)` with
//! random knob settings (every indvars knob, `iv-loop-level` from 1 to 4, each rewrite on
//! or off) under `--verify-each` (the verifier, loop-simplify and LCSSA form on every
//! loop, every preserved analysis equal to a fresh one) and `verify-indvars`, the
//! interpreter shows the same behaviour as the input on random inputs; and running
//! `indvars` again changes no trip count.

mod common;

use gyre_interp::{assert_same_behaviour, random_inputs};
use gyre_ir::generate::{generate_kernel_module, GenOptions, RandomSource, SplitMix64};
use gyre_ir::Module;
use gyre_transforms::knobs::apply_setting;
use gyre_transforms::{Knobs, Options, PassManager, Report};

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
    replaced: u64,
    lftr: u64,
    widened: u64,
    folded: u64,
    predicated: u64,
    dead_ivs: u64,
    congruent: u64,
}

fn check_case(opts: &GenOptions, seed: u64, totals: &mut Totals) -> Result<(), String> {
    let (m, contract) = generate_kernel_module(opts, &mut SplitMix64::new(seed));
    let mut knobs = Knobs::default();
    let mut rng = SplitMix64::new(seed ^ 0x1d5);
    let mut set = |s: String| apply_setting(&mut knobs, &s).map_err(|e| e.to_string());
    set(format!("iv-loop-level={}", 1 + rng.below(4)))?;
    set(format!(
        "replexitval={}",
        ["never", "cheap", "always"][rng.below(3) as usize]
    ))?;
    for k in [
        "disable-lftr",
        "indvars-widen-indvars",
        "indvars-post-increment-ranges",
        "indvars-predicate-loops",
        "Disable-unknown-trip-iv",
    ] {
        set(format!("{k}={}", rng.below(2) == 1))?;
    }
    set("verify-indvars=true".into())?;
    let mut a = m.clone();
    let r = apply(
        "loop-simplify,lcssa,loop(loop-rotate,indvars)",
        &knobs,
        &mut a,
    )?;
    let get = |c: &str| r.stats.get("indvars", c);
    totals.replaced += get("NumReplaced");
    totals.lftr += get("NumLFTR");
    totals.widened += get("NumWidened");
    totals.folded += get("NumFoldedCompares");
    totals.predicated += get("NumPredicatedExits");
    totals.dead_ivs += get("NumDeadIVs");
    totals.congruent += get("NumCongruentIVs");
    let kernel = &m.functions[contract.kernel].name;
    for k in 0..3 {
        let inputs = random_inputs(&contract, seed.wrapping_mul(31).wrapping_add(k));
        assert_same_behaviour(&m, &a, kernel, &inputs)
            .map_err(|d| format!("behaviour differs (inputs {k}): {d}"))?;
    }
    // A second run keeps every trip count (verify-indvars) and the behaviour.
    let mut b = a.clone();
    apply("loop(indvars)", &knobs, &mut b)?;
    let inputs = random_inputs(&contract, seed.wrapping_add(7));
    assert_same_behaviour(&m, &b, kernel, &inputs)
        .map_err(|d| format!("behaviour differs after a second indvars: {d}"))?;
    totals.cases += 1;
    Ok(())
}

#[test]
fn indvars_on_generated_kernels() {
    let per_profile = common::cases(150);
    let mut totals = Totals::default();
    common::sweep(
        &["default", "loopy", "reducible", "switchy"],
        per_profile,
        &mut totals,
        check_case,
    );
    assert!(
        totals.replaced > 10 && totals.lftr > 10 && totals.dead_ivs > 10,
        "the generator must exercise indvars: {totals:?}"
    );
}
