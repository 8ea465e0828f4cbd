//! `codegen`: a generated (reducible) kernel, optionally after `-O`, lowered to PTX by
//! codegen-lite: ptx-sim computes the same memory as the IR interpreter on the contract's
//! random inputs (codegen-lite's own test harness, crates/codegen-lite/tests/common), and
//! ptxas accepts the PTX when it is installed. An eighth of the kernels are raw (not
//! UB-free, irreducible allowed): those are only lowered (and assembled).

use crate::{ptx_harness, Case, Features, Input, InputKind, Target};
use gyre_codegen_lite::{compile_module, CodegenError, CodegenOptions, Sm};
use gyre_ir::generate::{RandomSource, SplitMix64};
use gyre_test_tools::Tool;
use gyre_transforms::{Knobs, Options, PassManager, DEFAULT_PIPELINE};

/// The target.
pub const TARGET: Target = Target {
    name: "codegen",
    doc: "PTX from codegen-lite: ptx-sim equals the interpreter; ptxas accepts it",
    kind: InputKind::Kernel,
    generate,
    check,
};

fn generate(seed: u64) -> Input {
    let mut rng = SplitMix64::new(seed ^ 0x7074_7820);
    // An eighth are raw modules (not UB-free, irreducible allowed): lowering must still
    // succeed or report the irreducible cycle, but there is nothing to run.
    let raw = rng.below(8) == 0;
    let mut case = Case::generate(seed, |o| {
        o.allow_irreducible = raw && o.allow_irreducible;
        o.ub_free = !raw;
    });
    case.meta.push(("raw".into(), format!("{raw}")));
    let sm = Sm::ALL[rng.below(Sm::ALL.len() as u64) as usize];
    case.meta.push(("sm".into(), format!("{}", sm.number())));
    case.meta
        .push(("optimize".into(), format!("{}", rng.below(2) == 0)));
    // ptxas costs far more than the rest; assemble a quarter of the kernels.
    case.meta
        .push(("ptxas".into(), format!("{}", rng.below(4) == 0)));
    Input::Kernel(case)
}

fn check(input: &Input) -> Result<Features, String> {
    let case = input.kernel();
    let sm = case
        .meta("sm")
        .and_then(|s| s.parse().ok())
        .and_then(Sm::from_number)
        .unwrap_or(Sm::Sm80);
    let mut m = case.module.clone();
    if case.meta("optimize") == Some("true") {
        let mut pm =
            PassManager::from_pipeline(DEFAULT_PIPELINE, Knobs::default(), Options::default())?;
        pm.run_module(&mut m)
            .map_err(|e| format!("-O failed: {e}"))?;
    }
    let ptx = match compile_module(&m, &CodegenOptions { sm }) {
        Ok(p) => p,
        // Lowering needs reducible control flow; saying so is the right answer.
        Err(CodegenError::Irreducible { .. }) => return Ok(vec!["irreducible".into()]),
        Err(e) => return Err(format!("codegen failed: {e}")),
    };
    let mut features = vec![format!("sm_{}", sm.number())];
    if case.meta("ptxas") == Some("true") {
        if let Some(ptxas) = gyre_test_tools::find(Tool::Ptxas) {
            gyre_test_tools::run_ptxas(&ptxas, &ptx, sm.target())
                .map_err(|e| format!("ptxas rejects the PTX: {e}\n--- PTX\n{ptx}"))?;
            features.push("ptxas".into());
        }
    }
    if case.meta("raw") == Some("true") {
        return Ok(features);
    }
    let inputs = crate::case::inputs(case, 0);
    match ptx_harness::compare(&m, case.kernel_name(), &inputs, &ptx) {
        Ok(()) => Ok(features),
        // Nothing to compare with (see `case::STEP_LIMIT`).
        Err(e) if e.starts_with("interpreter:") && e.contains("step limit") => {
            Ok(vec!["skipped: step limit".into()])
        }
        Err(e) => Err(format!("ptx-sim differs from the interpreter: {e}")),
    }
}
