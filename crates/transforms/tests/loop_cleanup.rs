//! Property tests of `loop-deletion` and `loop-simplifycfg` over generated UB-free kernels
//! (nests, `continue` latches, `break`s to any enclosing loop, early returns, switches,
//! two-entry cycles, barriers, calls; zero-trip loops come from the random `n`).
//!
//! For every generated module, under `--verify-each` (the verifier after every pass, every
//! loop report checked against a fresh loop forest, every "no change" claim checked):
//! - after `loop-simplify,lcssa,loop(loop-deletion)`, after
//!   `loop-simplify,lcssa,loop(loop-simplifycfg)`, and after both behind `loop-rotate`
//!   (whose folded guards and rotated loops give them more to do), the interpreter shows
//!   the same behaviour as the input on random inputs that follow the kernel's contract;
//! - idempotence: running each pass again changes nothing and prints the same module,
//!   unless the first run removed code outside the loops it deleted (which may end an
//!   outer loop and so give the pass more to do); then the runs reach a fixpoint within
//!   four, with the same behaviour;
//! - every loop visit of `loop-deletion` either changed the loop or left a remark.

mod common;

use gyre_interp::{assert_same_behaviour, random_inputs};
use gyre_ir::generate::{generate_kernel_module, GenOptions, SplitMix64};
use gyre_ir::{write_module, Module};
use gyre_transforms::knobs::apply_setting;
use gyre_transforms::{Knobs, Options, PassManager, Report};

fn print(m: &Module) -> String {
    let mut s = String::new();
    write_module(&mut s, m).expect("writing to a String");
    s
}

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
    deleted: u64,
    never_entered: u64,
    backedges_broken: u64,
    kept: u64,
    folded: u64,
    merged: u64,
    loops_unlooped: u64,
    /// Cases where a second run found more after code outside a loop was removed.
    refixed: u64,
}

const DELETION: &str = "loop-deletion";
const SIMPLIFYCFG: &str = "loop-simplifycfg";

fn check_case(opts: &GenOptions, seed: u64, totals: &mut Totals) -> Result<(), String> {
    let (m, contract) = generate_kernel_module(opts, &mut SplitMix64::new(seed));
    let mut knobs = Knobs::default();
    if seed % 5 == 2 {
        apply_setting(&mut knobs, "loop-deletion-enable-symbolic-execution=false")
            .map_err(|e| e.to_string())?;
    }
    if seed % 7 == 3 {
        apply_setting(&mut knobs, "enable-loop-simplifycfg-term-folding=false")
            .map_err(|e| e.to_string())?;
    }
    let kernel = &m.functions[contract.kernel].name;
    let pipelines = [
        (
            "loop-simplify,lcssa,loop(loop-deletion)",
            "loop(loop-deletion)",
        ),
        (
            "loop-simplify,lcssa,loop(loop-simplifycfg)",
            "loop(loop-simplifycfg)",
        ),
        (
            "loop-simplify,lcssa,loop(loop-rotate,loop-simplifycfg,loop-deletion)",
            "",
        ),
    ];
    for (pipeline, again) in pipelines {
        let mut a = m.clone();
        let r = apply(pipeline, &knobs, &mut a).map_err(|e| format!("{pipeline}: {e}"))?;
        let deleted = r.stats.get(DELETION, "NumDeleted")
            + r.stats.get(DELETION, "NumNeverEntered")
            + r.stats.get(DELETION, "NumBackedgesBroken");
        totals.deleted += r.stats.get(DELETION, "NumDeleted");
        totals.never_entered += r.stats.get(DELETION, "NumNeverEntered");
        totals.backedges_broken += r.stats.get(DELETION, "NumBackedgesBroken");
        totals.folded += r.stats.get(SIMPLIFYCFG, "NumTerminatorsFolded");
        totals.merged += r.stats.get(SIMPLIFYCFG, "NumBlocksMerged");
        totals.loops_unlooped += r.stats.get(SIMPLIFYCFG, "NumLoopsDeleted");
        let remarks = r.remarks.iter().filter(|x| x.pass == DELETION).count() as u64;
        totals.kept += remarks;
        let visits = r
            .loop_visits
            .iter()
            .find(|(p, _)| *p == DELETION)
            .map_or(0, |(_, n)| *n);
        if deleted + remarks != visits {
            return Err(format!(
                "{pipeline}: {visits} loops visited, {deleted} deleted, {remarks} remarks: \
                 every loop kept must say why"
            ));
        }
        for k in 0..3 {
            let inputs = random_inputs(&contract, seed.wrapping_mul(31).wrapping_add(k));
            assert_same_behaviour(&m, &a, kernel, &inputs)
                .map_err(|d| format!("{pipeline}: behaviour differs (inputs {k}): {d}"))?;
        }
        if !again.is_empty() {
            // Removing code outside a loop (the exit paths only the folded branches
            // reached) may end an outer loop and give scalar evolution a count it had not,
            // so a second run may find more; a run that removes nothing outside its loops
            // is a fixpoint at once, and every run is one within a few.
            let mut outside = r.stats.get(DELETION, "NumOutsideBlocksRemoved")
                + r.stats.get(SIMPLIFYCFG, "NumBlocksRemoved");
            let mut b = a.clone();
            for round in 0..4 {
                let before = print(&b);
                let r2 =
                    apply(again, &knobs, &mut b).map_err(|e| format!("{again} (again): {e}"))?;
                if before == print(&b) {
                    break;
                }
                if outside == 0 || round == 3 {
                    return Err(format!(
                        "{pipeline}: run {} of {again} changed the module",
                        round + 2
                    ));
                }
                totals.refixed += 1;
                outside = r2.stats.get(DELETION, "NumOutsideBlocksRemoved")
                    + r2.stats.get(SIMPLIFYCFG, "NumBlocksRemoved");
            }
            for k in 0..2 {
                let inputs = random_inputs(&contract, seed.wrapping_mul(37).wrapping_add(k));
                assert_same_behaviour(&m, &b, kernel, &inputs)
                    .map_err(|d| format!("{again} again: behaviour differs: {d}"))?;
            }
        }
    }
    totals.cases += 1;
    Ok(())
}

#[test]
fn loop_deletion_and_simplifycfg_on_generated_kernels() {
    let per_profile = common::cases(60);
    let mut totals = Totals::default();
    common::sweep(
        &["default", "loopy", "reducible", "switchy"],
        per_profile,
        &mut totals,
        check_case,
    );
    assert!(
        totals.deleted + totals.backedges_broken > 10 && totals.kept > 100,
        "the generator must exercise loop deletion: {totals:?}"
    );
}
