//! `roundtrip_llvm`: export a generated kernel to LLVM IR (typed or opaque pointers),
//! import it back: the import succeeds and verifies, and the interpreter shows the same
//! behaviour; LLVM 14 `opt -passes=verify` accepts the export when it is installed.

use crate::{Case, Features, Input, InputKind, Target};
use gyre_ir::generate::{RandomSource, SplitMix64};
use gyre_llvm::{export_module, import_module, ExportOptions};
use gyre_test_tools::Tool;

/// The target.
pub const TARGET: Target = Target {
    name: "roundtrip_llvm",
    doc: "export to .ll and import back: same behaviour; opt accepts the export",
    kind: InputKind::Kernel,
    generate,
    check,
};

fn generate(seed: u64) -> Input {
    let mut case = Case::generate(seed, |_| {});
    let mut rng = SplitMix64::new(seed ^ 0x6c6c_766d);
    case.meta
        .push(("opaque".into(), format!("{}", rng.below(2) == 0)));
    // opt is a process per module; check a quarter of them.
    case.meta
        .push(("opt".into(), format!("{}", rng.below(4) == 0)));
    Input::Kernel(case)
}

fn check(input: &Input) -> Result<Features, String> {
    let case = input.kernel();
    let opaque = case.meta("opaque") == Some("true");
    let text = export_module(
        &case.module,
        &ExportOptions {
            opaque_pointers: opaque,
        },
    );
    if case.meta("opt") == Some("true") {
        if let Some(opt) = gyre_test_tools::find(Tool::Opt) {
            opt_verify(&opt, &text, opaque)?;
        }
    }
    let back = import_module(&text)
        .map_err(|e| format!("re-import failed: {}\n{text}", e.first().render("export")))?;
    gyre_ir::verifier::verify_module(&back)
        .map_err(|e| format!("the re-import does not verify: {e}"))?;
    for k in 0..2 {
        crate::case::same_behaviour(case, &case.module, &back, k)
            .map_err(|d| format!("behaviour differs after export and import: {d}"))?;
    }
    Ok(vec![format!("opaque {opaque}")])
}

fn opt_verify(opt: &std::path::Path, text: &str, opaque: bool) -> Result<(), String> {
    use std::io::Write;
    use std::process::{Command, Stdio};
    let mut cmd = Command::new(opt);
    cmd.args(["-passes=verify", "-disable-output"]);
    if opaque {
        cmd.arg("-opaque-pointers");
    }
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("running opt: {e}"))?;
    child
        .stdin
        .take()
        .expect("piped")
        .write_all(text.as_bytes())
        .map_err(|e| format!("writing to opt: {e}"))?;
    let out = child.wait_with_output().map_err(|e| e.to_string())?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "opt rejects the export: {}\n{text}",
            String::from_utf8_lossy(&out.stderr)
        ))
    }
}
