//! The conformance harness on its fixed quick subset: part of `cargo test --workspace`
//! (and so of `cargo xtask test`). Skipped, with a message, when the corpus is absent.

use std::path::Path;
use xtask::conformance::{self as conf, report, Mode, Setup};

#[test]
fn quick_conformance_meets_the_targets() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask lives one level below the workspace root");
    let Some(corpus) = conf::find_corpus(root) else {
        println!("skipped: corpus not found");
        return;
    };
    let setup = Setup {
        corpus,
        opt: conf::find_opt(),
        mode: Mode::Quick,
    };
    let reports = conf::run(&setup).expect("the manifest reads and names every quick file");
    assert_eq!(reports.len(), conf::QUICK_FILES.len());
    let summary = report::summarize(&reports);
    let text = report::console(&setup, &reports, &summary);
    println!("{text}");
    // The subset must exercise Gyre's passes, not only "pass not implemented".
    for pass in ["loop-simplify", "lcssa"] {
        let t = summary
            .passes
            .iter()
            .find(|t| t.pass == pass)
            .unwrap_or_else(|| panic!("no totals for {pass}"));
        assert!(
            t.files >= 3,
            "quick subset runs {pass} on {} files\n{text}",
            t.files
        );
        assert!(
            t.runs > 0,
            "no interpreter runs compared for {pass}\n{text}"
        );
    }
    // With LLVM 14 at hand, LLVM re-runs loop-simplify,lcssa on Gyre's output of every
    // imported file (changes without a known reason are missed targets, checked below).
    if setup.opt.is_some() {
        let imported = reports.iter().filter(|r| r.imported.is_ok()).count() as u32;
        assert_eq!(summary.rerun_files, imported, "{text}");
        assert!(summary.rerun_functions >= imported, "{text}");
    }
    assert!(summary.unmet.is_empty(), "targets missed:\n{text}");
}
