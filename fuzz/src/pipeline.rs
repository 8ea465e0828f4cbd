//! `pipeline`: a generated kernel through a random pipeline over every registered pass
//! (`gyre_transforms::registry::PASSES`, loop passes inside `loop(...)`, random
//! parameters) with random knob values, under `--verify-each` (the verifier, every
//! promised loop form, preserved analyses equal to fresh ones, loop bookkeeping after
//! each pass); then the interpreter shows the same behaviour before and after.

use crate::{Case, Features, Input, InputKind, Target};
use gyre_ir::generate::{RandomSource, SplitMix64};
use gyre_transforms::knobs::{KnobType, KNOBS};
use gyre_transforms::registry::{PassKind, PASSES};
use gyre_transforms::{Knobs, Options, PassManager};

/// The target.
pub const TARGET: Target = Target {
    name: "pipeline",
    doc: "random pipelines and knobs: --verify-each, then interpreter equivalence",
    kind: InputKind::Kernel,
    generate,
    check,
};

/// A random pipeline text over every registered pass.
pub fn random_pipeline(rng: &mut impl RandomSource) -> String {
    let mut elems: Vec<String> = Vec::new();
    let mut loop_group: Vec<String> = Vec::new();
    let n = 1 + rng.below(7);
    for _ in 0..n {
        let p = &PASSES[rng.below(PASSES.len() as u64) as usize];
        let mut text = p.name.to_string();
        if !p.params.is_empty() && rng.below(3) == 0 {
            text += &format!("<{}>", p.params[rng.below(p.params.len() as u64) as usize]);
        }
        match p.kind {
            PassKind::Loop => loop_group.push(text),
            // Module passes (the inliner) run at the top level, like function passes.
            PassKind::Function | PassKind::Module => {
                if !loop_group.is_empty() && rng.below(2) == 0 {
                    elems.push(format!("loop({})", loop_group.join(",")));
                    loop_group.clear();
                }
                elems.push(text);
            }
        }
    }
    if !loop_group.is_empty() {
        elems.push(format!("loop({})", loop_group.join(",")));
    }
    // Loop passes need loop-simplify form and often LCSSA: usually provide them first.
    if rng.below(4) != 0 {
        elems.insert(0, "loop-simplify,lcssa".to_string());
    }
    elems.join(",")
}

/// Random values for about a third of the knobs, as `name=value` settings.
pub fn random_knobs(rng: &mut impl RandomSource) -> Vec<String> {
    let mut out = Vec::new();
    for k in KNOBS {
        if rng.below(3) != 0 {
            continue;
        }
        let v = match k.ty {
            KnobType::Bool => ["true", "false"][rng.below(2) as usize].to_string(),
            KnobType::UInt => {
                [0u32, 1, 2, 3, 4, 8, 16, 50, 1000][rng.below(9) as usize].to_string()
            }
            KnobType::Enum(words) => words[rng.below(words.len() as u64) as usize].to_string(),
        };
        out.push(format!("{}={v}", k.name));
    }
    out
}

fn generate(seed: u64) -> Input {
    let mut case = Case::generate(seed, |_| {});
    let mut rng = SplitMix64::new(seed ^ 0x7069_7065);
    case.meta
        .push(("pipeline".into(), random_pipeline(&mut rng)));
    case.meta
        .push(("knobs".into(), random_knobs(&mut rng).join(" ")));
    Input::Kernel(case)
}

/// Run the case's pipeline with its knobs under `--verify-each`; the counters that fired.
pub fn run(case: &Case) -> Result<(gyre_ir::Module, Features), String> {
    let pipeline = case.meta("pipeline").ok_or("no `;; pipeline:` line")?;
    let mut knobs = Knobs::default();
    for kv in case.meta("knobs").unwrap_or("").split_whitespace() {
        gyre_transforms::knobs::apply_setting(&mut knobs, kv)
            .map_err(|e| format!("knob {kv}: {e}"))?;
    }
    let options = Options {
        verify_each: true,
        ..Options::default()
    };
    let mut pm = PassManager::from_pipeline(pipeline, knobs, options)
        .map_err(|e| format!("pipeline {pipeline}: {e}"))?;
    let mut m = case.module.clone();
    let report = pm
        .run_module(&mut m)
        .map_err(|e| format!("pipeline failed: {e}"))?;
    let features = report
        .stats
        .iter()
        .filter(|s| s.2 > 0)
        .map(|(p, c, _)| format!("{p}.{c}"))
        .collect();
    Ok((m, features))
}

fn check(input: &Input) -> Result<Features, String> {
    let case = input.kernel();
    let (after, mut features) = run(case)?;
    for k in 0..2 {
        if !crate::case::same_behaviour(case, &case.module, &after, k)
            .map_err(|d| format!("behaviour differs after the pipeline: {d}"))?
        {
            features.push("skipped: step limit".into());
        }
    }
    Ok(features)
}
