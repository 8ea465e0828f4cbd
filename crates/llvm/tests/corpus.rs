//! Import every LLVM lit test input of the shared corpus (`../shared/corpus/llvm-lit`
//! next to the workspace, see `gyre_test_tools::corpus`) and report how many
//! import, with the first error of each failure.

use gyre_llvm::{export_module, ExportOptions};
use gyre_llvm::{import_module_with, ExternalCalls, ImportOptions};
use std::path::Path;
use std::process::Command;

fn opt_verify(opt: &Path, text: &str, tag: &str) -> Result<(), String> {
    let p = std::env::temp_dir().join(format!(
        "gyre-llvm-corpus-{}-{}.ll",
        std::process::id(),
        tag.replace('/', "_")
    ));
    std::fs::write(&p, text).map_err(|e| e.to_string())?;
    let out = Command::new(opt)
        .args(["-passes=verify", "-S", "-o", "/dev/null"])
        .arg(&p)
        .output()
        .map_err(|e| e.to_string())?;
    let _ = std::fs::remove_file(&p);
    if out.status.success() {
        Ok(())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).into_owned())
    }
}

#[test]
fn lit_corpus_imports() {
    let Some(corpus) = gyre_test_tools::corpus("llvm-lit", "lit_corpus_imports") else {
        return;
    };
    let manifest = corpus.join("MANIFEST.tsv");
    let text = std::fs::read_to_string(&manifest)
        .unwrap_or_else(|e| panic!("{}: {e}", manifest.display()));
    let opts = ImportOptions {
        external_calls: ExternalCalls::Stub,
    };
    let (mut total, mut ok, mut ok_default) = (0, 0, 0);
    let mut failures = Vec::new();
    let mut bad_ir = Vec::new();
    let mut bad_export = Vec::new();
    // Without opt the imports are still checked; the exports are not checked by LLVM.
    let opt = gyre_test_tools::require(
        gyre_test_tools::Tool::Opt,
        "lit_corpus_imports (LLVM verification of the exports)",
    );
    for line in text.lines().skip(1) {
        let cols: Vec<&str> = line.split('\t').collect();
        if cols.len() < 2 {
            continue;
        }
        let rel = format!("{}/{}", cols[0], cols[1]);
        let Ok(src) = std::fs::read_to_string(corpus.join(&rel)) else {
            panic!("{rel} listed in MANIFEST.tsv but unreadable");
        };
        total += 1;
        if gyre_llvm::import_module(&src).is_ok() {
            ok_default += 1;
        }
        match import_module_with(&src, &opts) {
            Ok(m) => {
                ok += 1;
                if let Err(e) = gyre_ir::verifier::verify_module(&m) {
                    bad_ir.push(format!("{rel}: {e:?}"));
                    continue;
                }
                // Export, let LLVM 14 verify it, import it again.
                let text = export_module(&m, &ExportOptions::default());
                if let Some(opt) = &opt {
                    if let Err(e) = opt_verify(opt, &text, &rel) {
                        bad_export.push(format!("{rel}: {e}"));
                    }
                }
                match gyre_llvm::import_module(&text) {
                    Ok(back) => {
                        if let Err(e) = gyre_ir::verifier::verify_module(&back) {
                            bad_export.push(format!("{rel}: re-import does not verify: {e:?}"));
                        }
                    }
                    Err(e) => bad_export.push(format!("{rel}: re-import: {e}")),
                }
            }
            Err(e) => failures.push(e.first().render(&rel)),
        }
    }
    for f in &failures {
        println!("FAIL {f}");
    }
    println!(
        "imported {ok}/{total} with stubbed externals, {ok_default}/{total} rejecting external calls"
    );
    for b in &bad_ir {
        println!("INVALID {b}");
    }
    for b in &bad_export {
        println!("BAD EXPORT {b}");
    }
    assert!(
        bad_ir.is_empty(),
        "{} imports fail the verifier",
        bad_ir.len()
    );
    assert!(bad_export.is_empty(), "{} exports fail", bad_export.len());
    assert!(total > 0);
    assert!(ok * 100 >= total * 90, "only {ok}/{total} imported");
}
