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
    common::same_behaviour_on_random_inputs(&m, &a, &contract, seed, "")?;
    // A second run keeps every trip count (verify-indvars) and the behaviour.
    let mut b = a.clone();
    apply("loop(indvars)", &knobs, &mut b)?;
    let inputs = random_inputs(&contract, seed.wrapping_add(7));
    let kernel = &m.functions[contract.kernel].name;
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

/// One `while` nest `depth` deep, each level counting to the kernel's argument (the
/// `deep` family of `cargo xtask perf passes`).
fn deep_nest(depth: usize) -> String {
    use std::fmt::Write as _;
    let mut s = String::from(
        "global @out: global [4 x i32] align 4\n\nkernel @k(i32) {\nblock0(v0: i32):\n    v1 = iconst.i32 0\n    v2 = iconst.i32 1\n    jump block1(v1)\n",
    );
    let exit = 3 * depth + 1;
    for i in 0..depth {
        let (h, pre, latch) = (3 * i + 1, 3 * i + 2, 3 * i + 3);
        let (x, c, y) = (3 + 3 * i, 4 + 3 * i, 5 + 3 * i);
        let out = if i == 0 { exit } else { 3 * (i - 1) + 3 };
        let inner = if i + 1 < depth { pre } else { latch };
        let _ = write!(
            s,
            "block{h}(v{x}: i32):\n    v{c} = icmp slt v{x}, v0\n    brif v{c}, block{inner}, block{out}\n"
        );
        if i + 1 < depth {
            let _ = write!(s, "block{pre}:\n    jump block{}(v1)\n", h + 3);
        }
        let _ = write!(
            s,
            "block{latch}:\n    v{y} = iadd v{x}, v2\n    jump block{h}(v{y})\n"
        );
    }
    let v = 3 + 3 * depth;
    let _ = write!(
        s,
        "block{exit}:\n    v{v} = global_addr @out\n    store v0, v{v}\n    return\n}}\n"
    );
    s
}

/// LLVM 14's `indvars` overflows its stack on a 2,497-deep nest. Gyre's `-O` loop pipeline
/// handles a 10,000-deep one on the test's default thread stack, simplifying the outermost
/// loop (cicc's `iv-loop-level=1`) with the scalar evolution of the whole nest; and with
/// `iv-loop-level=10000` every loop of a 1,000-deep one (each loop computes its own nest's).
#[test]
fn deep_nests() {
    for (depth, level, visited) in [(10_000usize, 1u32, 1u64), (1_000, 1_000, 1_000)] {
        let mut m = gyre_ir::parse_module(&deep_nest(depth)).expect("parses");
        let mut knobs = Knobs::default();
        apply_setting(&mut knobs, &format!("iv-loop-level={level}")).expect("knob");
        let mut pm = PassManager::from_pipeline(
            gyre_transforms::DEFAULT_PIPELINE,
            knobs,
            Options::default(),
        )
        .expect("pipeline");
        let r = pm.run_module(&mut m).expect("runs");
        gyre_ir::verifier::verify_module(&m).expect("verifies");
        let too_deep = r.stats.get("indvars", "NumLoopTooDeep");
        assert_eq!(too_deep, depth as u64 - visited, "depth {depth}");
        // Every simplified level's exit test became `!=` against its limit.
        assert_eq!(r.stats.get("indvars", "NumLFTR"), visited, "depth {depth}");
    }
}
