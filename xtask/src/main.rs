//! Project automation: `cargo xtask <task>`.
//!
//! - `test`: everything CI checks: formatting, clippy with warnings denied, the whole
//!   workspace's tests, and the fuzz crate's seed corpus.

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("test") => test(),
        _ => {
            eprintln!("usage: cargo xtask test");
            return ExitCode::from(2);
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("xtask: {e}");
            ExitCode::FAILURE
        }
    }
}

/// The workspace root (the parent of this crate's directory).
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask lives one level below the workspace root")
        .to_path_buf()
}

fn run(dir: &Path, program: &str, args: &[&str]) -> Result<(), String> {
    eprintln!("xtask: running `{program} {}`", args.join(" "));
    let status = Command::new(program)
        .args(args)
        .current_dir(dir)
        .status()
        .map_err(|e| format!("cannot start {program}: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("`{program} {}` failed ({status})", args.join(" ")))
    }
}

fn test() -> Result<(), String> {
    let root = root();
    run(&root, "cargo", &["fmt", "--all", "--check"])?;
    run(
        &root,
        "cargo",
        &["clippy", "--workspace", "--all-targets", "--", "-D", "warnings"],
    )?;
    run(&root, "cargo", &["test", "--workspace"])?;
    // The fuzz crate is its own workspace; its tests replay the seed corpus.
    run(&root.join("fuzz"), "cargo", &["test"])?;
    Ok(())
}
