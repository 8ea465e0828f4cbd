//! Generated UB-free kernels, lowered with and without the `-O` pipeline: ptxas accepts
//! them for sm_70/80/90 without a message, and ptx-sim computes the same memory as the
//! IR interpreter on the contract's random inputs.

mod common;

use common::{compare, compare_with, compile, ptxas_or_skip, run_ptxas, text};
use gyre_codegen_lite::Sm;
use gyre_interp::random_inputs;
use gyre_ir::generate::{generate_from_seed, GenOptions};
use gyre_ir::Module;
use gyre_transforms::{Knobs, Options, PassManager};
use std::path::PathBuf;

/// The pipeline `-O` runs today (the passes that exist).
const O_PIPELINE: &str = gyre_transforms::DEFAULT_PIPELINE;

/// Kernels per run (each compiled for three targets, with and without `-O`);
/// `GYRE_CODEGEN_SEEDS` overrides it.
fn seeds() -> u64 {
    std::env::var("GYRE_CODEGEN_SEEDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(100)
}

fn optimize(m: &Module) -> Result<Module, String> {
    let mut m = m.clone();
    let mut pm = PassManager::from_pipeline(O_PIPELINE, Knobs::default(), Options::default())?;
    pm.run_module(&mut m).map_err(|e| format!("{e:?}"))?;
    Ok(m)
}

fn options() -> GenOptions {
    // The generator's defaults, irreducible cycles included: PTX lowering takes any
    // control flow.
    GenOptions::default()
}

/// Check one seed; ptxas runs only when given.
fn check_seed(seed: u64, ptxas: Option<&PathBuf>) -> Result<(), String> {
    let (m, contract) = generate_from_seed(&options(), seed);
    let kernel = m.functions[contract.kernel].name.clone();
    let inputs = random_inputs(&contract, seed ^ 0x0123_4567);
    let opt = optimize(&m).map_err(|e| format!("seed {seed}: -O pipeline: {e}"))?;
    for (what, module) in [("plain", &m), ("-O", &opt)] {
        let fail = |e: String, ptx: &str| {
            format!(
                "seed {seed} ({what}): {e}\n--- IR\n{}\n--- PTX\n{ptx}",
                text(module)
            )
        };
        // Targets differ only in the `.version`/`.target` lines, so three are enough here
        // (ptxas dominates the run time); examples.rs assembles for every target.
        for sm in [Sm::Sm70, Sm::Sm80, Sm::Sm90] {
            let ptx = compile(module, sm);
            if let Some(p) = ptxas {
                run_ptxas(p, &ptx, sm).map_err(|e| fail(e, &ptx))?;
            }
            if sm == Sm::Sm90 {
                compare(module, &kernel, &inputs, &ptx).map_err(|e| fail(e, &ptx))?;
            }
        }
    }
    Ok(())
}

#[test]
fn generated_kernels_assemble_and_match_the_interpreter() {
    // Without ptxas the interpreter/ptx-sim comparison still runs.
    let ptxas = ptxas_or_skip("generated_kernels_assemble_and_match_the_interpreter (ptxas part)");
    // Two workers: ptxas dominates the run time and the machine has two cores.
    let n = seeds();
    let failures: Vec<String> = std::thread::scope(|s| {
        let workers: Vec<_> = (0..2u64)
            .map(|w| {
                let ptxas = ptxas.clone();
                s.spawn(move || {
                    (0..n)
                        .filter(|seed| seed % 2 == w)
                        .filter_map(|seed| check_seed(seed, ptxas.as_ref()).err())
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        workers
            .into_iter()
            .flat_map(|h| h.join().expect("worker panicked"))
            .collect()
    });
    assert!(
        failures.is_empty(),
        "{} of {n} seeds failed; first:\n{}",
        failures.len(),
        failures[0]
    );
}

/// The generator's other shapes: bigger functions, memory-free and call-free variants.
#[test]
fn generated_kernel_variants_match_the_interpreter() {
    let variants = [
        GenOptions {
            max_blocks: 120,
            max_nesting: 4,
            ..options()
        },
        GenOptions {
            allow_memory: false,
            allow_calls: false,
            ..options()
        },
        GenOptions {
            allow_switch: false,
            allow_multi_exit: false,
            ..options()
        },
    ];
    for (k, opts) in variants.iter().enumerate() {
        for seed in 0..25u64 {
            let seed = 1000 * (k as u64 + 1) + seed;
            let (m, contract) = generate_from_seed(opts, seed);
            let kernel = m.functions[contract.kernel].name.clone();
            let inputs = random_inputs(&contract, seed);
            let ptx = compile(&m, Sm::Sm80);
            if let Err(e) = compare(&m, &kernel, &inputs, &ptx) {
                panic!(
                    "variant {k}, seed {seed}: {e}\n--- IR\n{}\n--- PTX\n{ptx}",
                    text(&m)
                );
            }
        }
    }
}

/// Generated kernels with every function marked `anynan`: the emitter drops the NaN
/// canonicalization, and ptx-sim must still compute the interpreter's memory except for
/// the payloads of NaNs (compared as NaN-ness only). The attribute must change the PTX of
/// some seeds (canonicalizing ones), or the comparison tested nothing new. (Compared
/// strictly, seed 1 already differs: a stored NaN's bits, interpreter vs ptx-sim.)
#[test]
fn anynan_kernels_match_the_interpreter_up_to_nan_payloads() {
    let mut changed = 0;
    for seed in 0..40u64 {
        let (mut m, contract) = generate_from_seed(&options(), seed);
        let kernel = m.functions[contract.kernel].name.clone();
        let inputs = random_inputs(&contract, seed ^ 0x0123_4567);
        let canonical = compile(&m, Sm::Sm80);
        for f in m.functions.values_mut() {
            f.any_nan = true;
        }
        let ptx = compile(&m, Sm::Sm80);
        if canonical.contains("setp.nan") && !ptx.contains("0f7FC00000") {
            changed += 1;
        }
        if let Err(e) = compare_with(&m, &kernel, &inputs, &ptx, true) {
            panic!("seed {seed}: {e}\n--- IR\n{}\n--- PTX\n{ptx}", text(&m));
        }
    }
    assert!(changed > 0, "no seed's PTX canonicalized a NaN");
}

/// Raw (not UB-free) and irreducible generated modules: lowering never panics; it
/// either succeeds or reports the irreducible cycle.
#[test]
fn raw_and_irreducible_modules_never_panic() {
    let opts = GenOptions {
        ub_free: false,
        allow_irreducible: true,
        ..GenOptions::default()
    };
    let mut irreducible = 0;
    for seed in 0..200u64 {
        let (m, _) = generate_from_seed(&opts, seed);
        match gyre_codegen_lite::compile_module(
            &m,
            &gyre_codegen_lite::CodegenOptions { sm: Sm::Sm70 },
        ) {
            Ok(ptx) => assert!(ptx.contains(".entry"), "seed {seed}"),
            Err(e) => panic!("seed {seed}: {e}\n{}", text(&m)),
        }
        // Irreducible modules compile too (the count shows the generator made some).
        let f = m.functions.values().last().expect("a kernel");
        let cfg = gyre_analysis::Cfg::with_function(f).expect("verified");
        let dt = gyre_analysis::DomTree::with_function(f, &cfg);
        let li = gyre_analysis::LoopInfo::with_function(f, &cfg, &dt);
        if !li.irreducible_cycles().is_empty() {
            irreducible += 1;
        }
    }
    assert!(
        irreducible > 0,
        "the generator made no irreducible cycle in 200 seeds"
    );
}
