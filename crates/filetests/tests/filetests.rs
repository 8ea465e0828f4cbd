//! Runs every file under `crates/filetests/filetests/` (see `docs/filetests.md`).
//! `GYRE_BLESS=1` rewrites the output section of precise-output tests that differ;
//! `GYRE_REQUIRE_TOOLS=1` turns a missing ptxas into a failure; `GYRE_FILETESTS=text`
//! runs only the files whose path contains `text`.

use gyre_filetests::{Config, Runner};
use std::path::Path;

#[test]
fn filetests() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("filetests");
    let runner = Runner::new(Config::from_env());
    let s = runner.run_tree(&root);
    let filtered = runner.config().filter.is_some();
    assert!(
        s.files > 0 || filtered,
        "no filetests under {}",
        root.display()
    );
    for k in &s.skipped {
        eprintln!("SKIP {k}");
    }
    for b in &s.blessed {
        eprintln!("blessed {}", b.display());
    }
    println!(
        "{} filetests, {} failed, {} blessed, {} skipped a tool",
        s.files,
        s.failures.len(),
        s.blessed.len(),
        s.skipped.len()
    );
    assert!(s.failures.is_empty(), "\n{}", s.failures.join("\n\n"));
}
