//! Generated UB-free kernels run without error on generated inputs, and give the same
//! memory under different thread orders.

use gyre_interp::{random_inputs, run_kernel, Memory, Outcome, Schedule};
use gyre_ir::generate::{generate_from_seed, GenOptions};
use quickcheck::{QuickCheck, TestResult};

/// The module as text, for failure messages.
fn text(m: &gyre_ir::Module) -> String {
    let mut s = String::new();
    gyre_ir::write_module(&mut s, m).expect("writing to a String cannot fail");
    s
}

/// Run one generated kernel under three schedules; `Err` describes the failure.
fn check_seed(opts: &GenOptions, seed: u64) -> Result<Outcome, String> {
    let (m, contract) = generate_from_seed(opts, seed);
    let kernel = m.functions[contract.kernel].name.clone();
    let inputs = random_inputs(&contract, seed.rotate_left(17) ^ 0x5eed);
    let mut first: Option<Memory> = None;
    let mut outcome = Outcome::default();
    for s in [
        Schedule::Forward,
        Schedule::Reverse,
        Schedule::Shuffle(seed),
    ] {
        let mut mem = inputs.memory.clone();
        let mut l = inputs.launch.clone();
        l.config.schedule = s;
        match run_kernel(&m, &kernel, &l, &mut mem) {
            Ok(o) => outcome = o,
            Err(e) => {
                return Err(format!(
                    "seed {seed}, {s:?}, launch {:?}x{:?}: {e}\n{}",
                    l.grid,
                    l.block,
                    text(&m)
                ))
            }
        }
        match &first {
            None => first = Some(mem),
            Some(f) => {
                for name in f.names() {
                    if f.bytes(name) != mem.bytes(name) || f.poison(name) != mem.poison(name) {
                        return Err(format!(
                            "seed {seed}: buffer {name} differs between Forward and {s:?}\n{}",
                            text(&m)
                        ));
                    }
                }
            }
        }
    }
    Ok(outcome)
}

#[test]
fn generated_kernels_run_deterministically() {
    let opts = GenOptions::default();
    let (mut steps, mut with_barriers) = (0, 0);
    for seed in 0..150 {
        match check_seed(&opts, seed) {
            Ok(o) => {
                steps += o.steps;
                with_barriers += u32::from(o.barriers > 0);
            }
            Err(e) => panic!("{e}"),
        }
    }
    // The kernels do real work, and barriers are exercised.
    assert!(steps > 150 * 1000, "only {steps} steps");
    assert!(
        with_barriers > 10,
        "only {with_barriers} kernels with barriers"
    );
}

/// Kernels with warp collectives: deterministic under every schedule (the rendezvous
/// does not depend on the order threads reach it), and free of errors.
#[test]
fn generated_warp_kernels_run_deterministically() {
    let opts = GenOptions {
        allow_warp_ops: true,
        ..GenOptions::default()
    };
    let mut with_warp = 0;
    for seed in 0..150 {
        check_seed(&opts, seed).unwrap_or_else(|e| panic!("{e}"));
        let m = generate_from_seed(&opts, seed).0;
        with_warp += u32::from(m.functions.values().any(|f| {
            f.layout
                .blocks()
                .flat_map(|b| f.layout.block_insts(b))
                .any(|i| f.dfg.inst(i).opcode().is_warp_collective())
        }));
    }
    assert!(
        with_warp > 20,
        "only {with_warp} kernels with warp collectives"
    );
}

#[test]
fn generated_kernels_quickcheck() {
    fn prop(seed: u64) -> TestResult {
        match check_seed(&GenOptions::default(), seed) {
            Ok(_) => TestResult::passed(),
            Err(e) => TestResult::error(e),
        }
    }
    QuickCheck::new()
        .tests(100)
        .quickcheck(prop as fn(u64) -> TestResult);
}

#[test]
fn random_inputs_follow_the_contract() {
    let (_, contract) = generate_from_seed(&GenOptions::default(), 1);
    for seed in 0..50 {
        let inputs = random_inputs(&contract, seed);
        let [gx, gy, gz] = inputs.launch.grid;
        let [bx, by, bz] = inputs.launch.block;
        assert_eq!((gy, gz, by, bz), (1, 1, 1, 1));
        assert!(bx >= 1 && bx <= contract.max_cta_threads && gx >= 1);
        let threads = u64::from(gx) * u64::from(bx);
        assert_eq!(inputs.launch.args.len(), contract.params.len());
        for (i, p) in contract.params.iter().enumerate() {
            let name = format!("p{i}");
            match p {
                gyre_ir::generate::ParamContract::Output { elem, per_thread } => assert_eq!(
                    inputs.memory.bytes(&name).unwrap().len() as u64,
                    threads * u64::from(*per_thread) * u64::from(elem.bytes())
                ),
                gyre_ir::generate::ParamContract::Input { elem, len } => assert_eq!(
                    inputs.memory.bytes(&name).unwrap().len() as u64,
                    u64::from(*len) * u64::from(elem.bytes())
                ),
                gyre_ir::generate::ParamContract::Scalar { .. } => {
                    assert!(!inputs.memory.contains(&name))
                }
            }
        }
        // Same seed, same inputs.
        let again = random_inputs(&contract, seed);
        assert_eq!(
            format!("{:?}", again.launch),
            format!("{:?}", inputs.launch)
        );
        assert_eq!(again.memory.bytes("p1"), inputs.memory.bytes("p1"));
    }
}

/// Kernels generated with options drawn by `GenOptions::random` (every feature set and
/// size the fuzz targets use, all UB-free), as the fuzz targets draw them, run on the
/// targets' random inputs without undefined behaviour: no poison branch, division by
/// zero, out-of-bounds access, race... Only the step limit may stop them (deep nests may
/// legitimately run long). (Issue 27 suspected the generator of a poison `fptoui` loop
/// bound; the kernel behind it was the fuzz shrinker's edit, see docs/fuzzing.md.)
#[test]
fn random_option_kernels_have_no_undefined_behaviour() {
    use gyre_interp::ErrorKind;
    use gyre_ir::generate::{generate_kernel_module, SplitMix64};
    let (mut runs, mut finished, mut steps) = (0, 0, 0u64);
    for seed in 0..1000u64 {
        let mut rng = SplitMix64::new(seed);
        let opts = GenOptions::random(&mut rng);
        let (m, contract) = generate_kernel_module(&opts, &mut rng);
        let kernel = m.functions[contract.kernel].name.clone();
        for k in 0..3u64 {
            let mut inputs = random_inputs(&contract, seed.wrapping_mul(31).wrapping_add(k));
            inputs.launch.config.step_limit = 2_000_000;
            runs += 1;
            match run_kernel(&m, &kernel, &inputs.launch, &mut inputs.memory) {
                Ok(o) => {
                    finished += 1;
                    steps += o.steps;
                }
                Err(e) if e.kind() == ErrorKind::StepLimit => {}
                Err(e) => panic!(
                    "seed {seed} inputs {k}, {opts:?}, launch {:?}x{:?}: {e}\n{}",
                    inputs.launch.grid,
                    inputs.launch.block,
                    text(&m)
                ),
            }
        }
    }
    // Most runs finish, and do real work, so the check covers whole executions.
    assert!(
        finished * 10 > runs * 9,
        "only {finished} of {runs} runs finished"
    );
    assert!(steps > finished * 1000, "only {steps} steps");
}

/// This seed used to make a kernel whose loops called a device function from its loops,
/// which called another from its own: over 200 million interpreter steps (the limit).
/// The generator's work budget keeps such calls out now.
#[test]
fn nested_calls_in_loops_stay_within_the_step_limit() {
    check_seed(&GenOptions::default(), 7234858131870537092).unwrap();
}
