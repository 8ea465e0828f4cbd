//! Property tests of `inline` over generated modules (device functions with loops,
//! memory, barriers and calls to earlier device functions, and a kernel calling them).
//!
//! For every generated module — device functions marked `internal` on half the seeds,
//! one `noinline` on some — after `inline` at thresholds 0, 225 (the default) and
//! unbounded, and after `-O`, under `--verify-each` (the verifier; every function the
//! pass did not report changed prints as before):
//! - the interpreter shows the same behaviour as the input, on random inputs;
//! - at an unbounded threshold no call is left but those of `noinline` callees, and no
//!   internal function without a call survives.
//!
//! And the manager catches a module pass that changes a function it does not report.

mod common;

use gyre_interp::{assert_same_behaviour, random_inputs};
use gyre_ir::generate::{generate_kernel_module, GenOptions, SplitMix64};
use gyre_ir::instructions::InstructionData;
use gyre_ir::{FuncKind, InlineHint, Module};
use gyre_transforms::{
    Knobs, ModulePass, ModulePassContext, ModulePassResult, Options, PassError, PassManager,
    Report, DEFAULT_PIPELINE,
};

fn apply(pipeline: &str, knobs: Knobs, m: &mut Module) -> Result<Report, String> {
    let options = Options {
        verify_each: true,
        ..Options::default()
    };
    let mut pm = PassManager::from_pipeline(pipeline, knobs, options)?;
    pm.run_module(m).map_err(|e| e.to_string())
}

/// The callees of every call left in `m`.
fn callees(m: &Module) -> Vec<gyre_ir::FuncId> {
    let mut out = Vec::new();
    for f in m.functions.values() {
        for b in f.layout.blocks() {
            for i in f.layout.block_insts(b) {
                if let InstructionData::Call { func, .. } = f.dfg.inst(i) {
                    out.push(*func);
                }
            }
        }
    }
    out
}

#[derive(Default, Debug)]
struct Totals {
    cases: u64,
    with_calls: u64,
    inlined: u64,
    deleted: u64,
    not_inlined: u64,
}

fn check_case(opts: &GenOptions, seed: u64, totals: &mut Totals) -> Result<(), String> {
    let (mut m, contract) = generate_kernel_module(opts, &mut SplitMix64::new(seed));
    let devices: Vec<_> = m
        .functions
        .iter()
        .filter(|(_, f)| f.kind == FuncKind::Device)
        .map(|(id, _)| id)
        .collect();
    for &d in &devices {
        m.functions[d].internal = seed.is_multiple_of(2);
    }
    if seed.is_multiple_of(5) {
        if let Some(&d) = devices.first() {
            m.functions[d].inline = InlineHint::Never;
        }
    }
    if !callees(&m).is_empty() {
        totals.with_calls += 1;
    }
    let (pipeline, threshold) = match seed % 4 {
        0 => ("inline", 0),
        1 => ("inline", 225),
        2 => ("inline", u32::MAX),
        _ => (DEFAULT_PIPELINE, 225),
    };
    let mut knobs = Knobs::default();
    knobs
        .set("inline-threshold", &threshold.to_string())
        .map_err(|e| e.to_string())?;
    let mut a = m.clone();
    let r = apply(pipeline, knobs, &mut a)?;
    totals.inlined += r.stats.get("inline", "NumInlined");
    totals.deleted += r.stats.get("inline", "NumDeleted");
    totals.not_inlined += r.stats.get("inline", "NumNotInlined");
    let kernel = &m.functions[contract.kernel].name;
    for k in 0..3 {
        let inputs = random_inputs(&contract, seed.wrapping_mul(31).wrapping_add(k));
        assert_same_behaviour(&m, &a, kernel, &inputs).map_err(|d| {
            format!("{pipeline} (threshold {threshold}): behaviour differs (inputs {k}): {d}")
        })?;
    }
    if threshold == u32::MAX {
        // The generator's calls go to earlier functions: no recursion, so every call of
        // a callee that may be inlined was.
        for c in callees(&a) {
            if a.functions[c].inline != InlineHint::Never {
                return Err(format!(
                    "a call of @{} is left at an unbounded threshold",
                    a.functions[c].name
                ));
            }
        }
        let called = callees(&a);
        for (id, f) in a.functions.iter() {
            if f.internal && f.kind == FuncKind::Device && !called.contains(&id) {
                return Err(format!("@{} is internal and uncalled, but kept", f.name));
            }
        }
    }
    totals.cases += 1;
    Ok(())
}

#[test]
fn inline_on_generated_modules() {
    let per_profile = common::cases(150);
    let mut totals = Totals::default();
    common::sweep(
        &["default", "reducible"],
        per_profile,
        &mut totals,
        check_case,
    );
    assert!(
        totals.with_calls > 50
            && totals.inlined > 100
            && totals.deleted > 20
            && totals.not_inlined > 10,
        "the generator must exercise the inliner: {totals:?}"
    );
}

/// A module pass that changes a function without reporting it.
struct Liar;

impl ModulePass for Liar {
    fn name(&self) -> &'static str {
        "liar"
    }
    fn run(
        &mut self,
        module: &mut Module,
        _cx: &mut ModulePassContext<'_>,
    ) -> Result<ModulePassResult, PassError> {
        let f = module.functions.values_mut().next().expect("a function");
        f.must_progress = !f.must_progress;
        Ok(ModulePassResult::default())
    }
}

#[test]
fn verify_each_catches_an_unreported_change() {
    let (m, _) = generate_kernel_module(&GenOptions::default(), &mut SplitMix64::new(1));
    for verify_each in [false, true] {
        let mut pm = PassManager::new(
            Knobs::default(),
            Options {
                verify_each,
                ..Options::default()
            },
        );
        pm.add_module_pass(Box::new(Liar));
        let mut a = m.clone();
        let r = pm.run_module(&mut a);
        if verify_each {
            let e = r.expect_err("the liar is caught").to_string();
            assert!(e.contains("not reported as changed"), "{e}");
        } else {
            r.expect("nothing checks without --verify-each");
        }
    }
}

#[test]
fn module_passes_only_at_the_top_level() {
    for (p, msg) in [
        ("function(inline)", "cannot run inside function(...)"),
        (
            "loop(inline)",
            "is a module pass and cannot run inside loop(...)",
        ),
        ("inline<x>", "takes no parameters"),
    ] {
        let e = PassManager::from_pipeline(p, Knobs::default(), Options::default())
            .err()
            .expect("rejected");
        assert!(e.contains(msg), "{p}: {e}");
    }
    for p in [
        "inline",
        "module(inline,verify)",
        "default<O2>",
        "inline,inline",
    ] {
        PassManager::from_pipeline(p, Knobs::default(), Options::default())
            .unwrap_or_else(|e| panic!("{p}: {e}"));
    }
}
