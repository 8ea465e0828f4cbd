//! `cargo xtask downstream` (part of `cargo xtask test`): a fresh crate that depends on
//! the workspace's library crates by path resolves its dependencies *without* the
//! workspace's lockfile, as a user's crate does, and must build with the declared
//! `rust-version`.
//!
//! Resolution ignores rust-version on purpose (`CARGO_RESOLVER_INCOMPATIBLE_RUST_VERSIONS
//! =allow`, what an edition-2021 crate gets): the bounds in the workspace's `Cargo.toml`
//! alone must keep every dependency at or below the MSRV. The check is then twofold:
//! every resolved package declares a `rust_version` no newer than the workspace's
//! (read from `cargo metadata`, so it holds whatever toolchain runs the check), and
//! `cargo check` of the crate succeeds. Resolution uses the network, and falls back to
//! the local registry cache (`--offline`) when the network is unavailable.

use std::path::Path;
use std::process::Command;

/// The library crates a user may depend on: (package, directory under `crates/`).
pub const LIBRARIES: &[(&str, &str)] = &[
    ("gyre-ir", "ir"),
    ("gyre-analysis", "analysis"),
    ("gyre-interp", "interp"),
    ("gyre-llvm", "llvm"),
    ("gyre-transforms", "transforms"),
    ("gyre-codegen-lite", "codegen-lite"),
    ("gyre-ptx-sim", "ptx-sim"),
    ("gyre-gpu", "gpu"),
];

/// A `main.rs` touching each library, so `cargo check` compiles all of them.
const MAIN: &str = r#"fn main() {
    let src = "kernel @k() {\nblock0:\n    return\n}\n";
    let m = gyre_ir::parse_module(src).expect("parses");
    gyre_ir::verifier::verify_module(&m).expect("verifies");
    let g = gyre_ir::generate::generate_module(
        &gyre_ir::generate::GenOptions::default(),
        &mut gyre_ir::generate::SplitMix64::new(1),
    );
    let _ = gyre_analysis::Cfg::with_function(g.functions.values().next().unwrap());
    let _ = gyre_interp::Memory::new();
    let _ = gyre_llvm::export_module(&m, &Default::default());
    let _ = gyre_transforms::knobs::list_knobs();
    let _ = gyre_codegen_lite::mangle("k");
    let _ = gyre_ptx_sim::parse(".version 7.8");
    let _ = gyre_gpu::median(&[1.0]);
}
"#;

/// The workspace's `rust-version` (`[workspace.package]` of the root `Cargo.toml`).
pub fn workspace_msrv(root: &Path) -> Result<String, String> {
    let toml = std::fs::read_to_string(root.join("Cargo.toml"))
        .map_err(|e| format!("cannot read Cargo.toml: {e}"))?;
    toml.lines()
        .find_map(|l| {
            let v = l.trim().strip_prefix("rust-version")?.trim_start();
            Some(v.strip_prefix('=')?.trim().trim_matches('"').to_string())
        })
        .ok_or_else(|| "no rust-version in the workspace's Cargo.toml".into())
}

/// Compare dotted versions numerically (`1.95` == `1.95.0` < `1.97.0`).
pub fn version_le(a: &str, b: &str) -> bool {
    let parse = |s: &str| -> Vec<u64> {
        let mut v: Vec<u64> = s
            .split('.')
            .map(|p| p.parse().unwrap_or(u64::MAX))
            .collect();
        v.resize(3, 0);
        v
    };
    parse(a) <= parse(b)
}

/// The packages of `cargo metadata` JSON whose `rust_version` is newer than `msrv`, as
/// `manifest path (rust-version X)`. Only package objects have `manifest_path` and
/// `rust_version` keys, `manifest_path` first, so a flat scan of the keys suffices.
pub fn msrv_violations(metadata: &str, msrv: &str) -> Vec<String> {
    /// The string value of `"key": "..."` at the start of `s`, and the rest after it.
    fn value<'a>(s: &'a str, key: &str) -> Option<(&'a str, &'a str)> {
        let after = s.strip_prefix(key)?.trim_start().strip_prefix(':')?;
        let after = after.trim_start().strip_prefix('"')?;
        let end = after.find('"')?;
        Some((&after[..end], &after[end + 1..]))
    }
    let mut out = Vec::new();
    let mut manifest = "?";
    let mut rest = metadata;
    while let Some(i) = rest.find('"') {
        rest = &rest[i..];
        if let Some((v, r)) = value(rest, "\"manifest_path\"") {
            manifest = v;
            rest = r;
        } else if let Some((v, r)) = value(rest, "\"rust_version\"") {
            if !version_le(v, msrv) {
                out.push(format!("{manifest} (rust-version {v})"));
            }
            rest = r;
        } else {
            rest = &rest[1..];
        }
    }
    out
}

/// Build the downstream crate in `work` (created or reused) against the workspace at
/// `root`; see the module docs.
pub fn check(root: &Path, work: &Path) -> Result<(), String> {
    let msrv = workspace_msrv(root)?;
    std::fs::create_dir_all(work.join("src")).map_err(|e| format!("{}: {e}", work.display()))?;
    let mut toml = String::from(
        "[package]\nname = \"gyre-downstream-check\"\nversion = \"0.0.0\"\nedition = \"2021\"\n\
         publish = false\n\n# Not part of any enclosing workspace.\n[workspace]\n\n[dependencies]\n",
    );
    for (name, dir) in LIBRARIES {
        let path = root.join("crates").join(dir);
        toml.push_str(&format!(
            "{name} = {{ path = {:?} }}\n",
            path.display().to_string()
        ));
    }
    let write = |file: &str, text: &str| {
        std::fs::write(work.join(file), text).map_err(|e| format!("{file}: {e}"))
    };
    write("Cargo.toml", &toml)?;
    write("src/main.rs", MAIN)?;
    // A fresh resolution every time: no lockfile from an earlier run.
    let _ = std::fs::remove_file(work.join("Cargo.lock"));
    let cargo = |args: &[&str]| -> Result<String, String> {
        let out = Command::new("cargo")
            .args(args)
            .current_dir(work)
            .env("CARGO_RESOLVER_INCOMPATIBLE_RUST_VERSIONS", "allow")
            .env_remove("CARGO_TARGET_DIR")
            .output()
            .map_err(|e| format!("cannot run cargo: {e}"))?;
        if out.status.success() {
            Ok(String::from_utf8_lossy(&out.stdout).into_owned())
        } else {
            Err(format!(
                "`cargo {}` in {} failed:\n{}",
                args.join(" "),
                work.display(),
                String::from_utf8_lossy(&out.stderr)
            ))
        }
    };
    eprintln!("xtask: resolving a downstream crate without the workspace's lockfile");
    if let Err(online) = cargo(&["generate-lockfile"]) {
        eprintln!("xtask: online resolution failed; trying the local registry cache");
        cargo(&["generate-lockfile", "--offline"])
            .map_err(|offline| format!("{online}\n(offline as well:)\n{offline}"))?;
    }
    let metadata = cargo(&["metadata", "--format-version", "1", "--locked"])?;
    let bad = msrv_violations(&metadata, &msrv);
    if !bad.is_empty() {
        return Err(format!(
            "the workspace's dependency bounds let a downstream crate resolve packages \
             newer than rust-version {msrv}:\n  {}\ntighten the bounds in Cargo.toml",
            bad.join("\n  ")
        ));
    }
    cargo(&["check", "--locked", "--quiet"])?;
    eprintln!("xtask: downstream crate builds (every dependency within rust-version {msrv})");
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_compare_numerically() {
        assert!(version_le("1.95", "1.95.0"));
        assert!(version_le("1.84.0", "1.95"));
        assert!(version_le("1.9.0", "1.10"));
        assert!(!version_le("1.97.0", "1.95"));
    }

    #[test]
    fn violations_name_the_package() {
        let json = r#"{"packages":[
            {"name":"a","dependencies":[{"name":"b","req":"1"}],"manifest_path":"/r/a-1.0.0/Cargo.toml","rust_version":"1.84"},
            {"name":"b","manifest_path":"/r/b-2.0.0/Cargo.toml","rust_version":"1.97.0"},
            {"name":"c","manifest_path":"/r/c-0.1.0/Cargo.toml","rust_version":null}
        ]}"#;
        assert_eq!(
            msrv_violations(json, "1.95"),
            vec!["/r/b-2.0.0/Cargo.toml (rust-version 1.97.0)".to_string()]
        );
        assert!(msrv_violations(json, "1.97").is_empty());
    }
}
