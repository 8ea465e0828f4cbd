//! The external tools Gyre's tests run, found in one place, and one policy for when they
//! are missing.
//!
//! - [`Tool::Ptxas`]: `GYRE_PTXAS`, else the workspace's `.tools/venv` (where
//!   `cargo xtask test` installs NVIDIA's `nvidia-cuda-nvcc-cu12` wheel), else `PATH`.
//! - LLVM 14's [`Tool::Opt`], [`Tool::Llc`], [`Tool::Lli`] and [`Tool::FileCheck`]:
//!   `GYRE_OPT` / `GYRE_LLC` / `GYRE_LLI` / `GYRE_FILECHECK`, else `<name>-14` or `<name>`
//!   on `PATH` or in `/usr/lib/llvm-14/bin`. Only a tool whose `--version` says LLVM 14 is
//!   taken: the tests pass LLVM 14 options (`-opaque-pointers`) and read its output.
//!
//! [`require`] is what a test calls: with the tool missing it prints
//! `SKIP <test>: <tool> not found (<how to get it>)` and returns `None`, except under
//! `GYRE_REQUIRE_TOOLS=1` (set by `cargo xtask test`, which CI runs), where it panics: a
//! check that did not run must not pass there.
#![warn(missing_docs)]

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

/// An external tool some test runs.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Tool {
    /// NVIDIA's PTX assembler (any version that knows sm_90).
    Ptxas,
    /// LLVM 14 `opt`.
    Opt,
    /// LLVM 14 `llc`.
    Llc,
    /// LLVM 14 `lli`.
    Lli,
    /// LLVM 14 `FileCheck`.
    FileCheck,
}

impl Tool {
    /// Every tool, in a fixed order (the index of each is its cache slot).
    pub const ALL: [Tool; 5] = [
        Tool::Ptxas,
        Tool::Opt,
        Tool::Llc,
        Tool::Lli,
        Tool::FileCheck,
    ];

    /// The program's base name.
    pub fn name(self) -> &'static str {
        match self {
            Tool::Ptxas => "ptxas",
            Tool::Opt => "opt",
            Tool::Llc => "llc",
            Tool::Lli => "lli",
            Tool::FileCheck => "FileCheck",
        }
    }

    /// The environment variable that names the tool's path, overriding the search.
    pub fn env_var(self) -> &'static str {
        match self {
            Tool::Ptxas => "GYRE_PTXAS",
            Tool::Opt => "GYRE_OPT",
            Tool::Llc => "GYRE_LLC",
            Tool::Lli => "GYRE_LLI",
            Tool::FileCheck => "GYRE_FILECHECK",
        }
    }

    /// How to get the tool, for the skip notice and the failure message.
    pub fn hint(self) -> &'static str {
        match self {
            Tool::Ptxas => {
                "`cargo xtask ptxas` installs it into .tools/venv; or set GYRE_PTXAS"
            }
            _ => "install LLVM 14 (Debian/Ubuntu: apt-get install llvm-14); or set GYRE_OPT, GYRE_LLC, GYRE_LLI, GYRE_FILECHECK",
        }
    }

    fn slot(self) -> usize {
        Tool::ALL.iter().position(|&t| t == self).expect("in ALL")
    }
}

/// The workspace root (this crate lives at `crates/test-tools`).
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Where `tool` is, searched once per process; `None` if it is not to be had.
pub fn find(tool: Tool) -> Option<PathBuf> {
    static CACHE: [OnceLock<Option<PathBuf>>; 5] = [
        OnceLock::new(),
        OnceLock::new(),
        OnceLock::new(),
        OnceLock::new(),
        OnceLock::new(),
    ];
    CACHE[tool.slot()]
        .get_or_init(|| {
            let env = std::env::var_os(tool.env_var());
            match tool {
                Tool::Ptxas => locate_ptxas(env, &workspace_root(), &path_dirs()),
                _ => locate_llvm14(tool.name(), env, &llvm_dirs()),
            }
        })
        .clone()
}

/// `PATH`'s directories.
fn path_dirs() -> Vec<PathBuf> {
    std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).collect())
        .unwrap_or_default()
}

/// `PATH`'s directories, then LLVM 14's own bin directory (Debian keeps the unsuffixed
/// names only there).
fn llvm_dirs() -> Vec<PathBuf> {
    let mut dirs = path_dirs();
    dirs.push(PathBuf::from("/usr/lib/llvm-14/bin"));
    dirs
}

/// ptxas: `env` (the value of `GYRE_PTXAS`) if set, else the newest Python's
/// `site-packages/nvidia/cuda_nvcc/bin/ptxas` under `root/.tools/venv/lib`, else `ptxas`
/// in one of `dirs`. A named file must exist.
pub fn locate_ptxas(env: Option<OsString>, root: &Path, dirs: &[PathBuf]) -> Option<PathBuf> {
    if let Some(p) = env {
        let p = PathBuf::from(p);
        return p.is_file().then_some(p);
    }
    if let Ok(entries) = std::fs::read_dir(root.join(".tools/venv/lib")) {
        let mut found: Vec<PathBuf> = entries
            .flatten()
            .map(|e| e.path().join("site-packages/nvidia/cuda_nvcc/bin/ptxas"))
            .filter(|p| p.is_file())
            .collect();
        found.sort();
        if let Some(p) = found.pop() {
            return Some(p);
        }
    }
    dirs.iter().map(|d| d.join("ptxas")).find(|p| p.is_file())
}

/// An LLVM 14 tool: `env` (its `GYRE_*` variable) if set, else `<name>-14` then `<name>`
/// in each of `dirs`; the first whose `--version` says LLVM 14.
pub fn locate_llvm14(name: &str, env: Option<OsString>, dirs: &[PathBuf]) -> Option<PathBuf> {
    let candidates: Vec<PathBuf> = match env {
        Some(p) => vec![PathBuf::from(p)],
        None => {
            let names = [format!("{name}-14"), name.to_string()];
            names
                .iter()
                .flat_map(|n| dirs.iter().map(move |d| d.join(n)))
                .filter(|p| p.is_file())
                .collect()
        }
    };
    candidates.into_iter().find(|p| is_llvm14(p))
}

/// Whether `tool --version` runs and reports LLVM 14.
pub fn is_llvm14(tool: &Path) -> bool {
    let Ok(out) = Command::new(tool).arg("--version").output() else {
        return false;
    };
    let text = String::from_utf8_lossy(&out.stdout);
    text.lines().any(|l| l.contains("LLVM version 14."))
}

/// Whether a missing tool fails the test (`GYRE_REQUIRE_TOOLS=1`, set by
/// `cargo xtask test`).
pub fn tools_required() -> bool {
    std::env::var_os("GYRE_REQUIRE_TOOLS").is_some_and(|v| v == "1")
}

/// The policy, on a search result: `Ok(Some)` with the tool; `Ok(None)` with the skip
/// notice to print; `Err` with the failure message when tools are `required`.
pub fn decide(
    found: Option<PathBuf>,
    tool: Tool,
    test: &str,
    required: bool,
) -> Result<Option<PathBuf>, String> {
    match found {
        Some(p) => Ok(Some(p)),
        None if required => Err(format!(
            "{test}: {} not found and GYRE_REQUIRE_TOOLS=1 forbids skipping ({})",
            tool.name(),
            tool.hint()
        )),
        None => Ok(None),
    }
}

/// The skip notice for `test` without `tool`.
pub fn skip_notice(tool: Tool, test: &str) -> String {
    format!("SKIP {test}: {} not found ({})", tool.name(), tool.hint())
}

/// The tool for `test`, or `None` after printing the skip notice.
///
/// # Panics
///
/// When the tool is missing and `GYRE_REQUIRE_TOOLS=1`: under CI a check that cannot run
/// is a failure.
pub fn require(tool: Tool, test: &str) -> Option<PathBuf> {
    match decide(find(tool), tool, test, tools_required()) {
        Ok(Some(p)) => Some(p),
        Ok(None) => {
            // Both streams: libtest captures stdout of passing tests, and the notice
            // should be visible in a plain `cargo test` run.
            eprintln!("{}", skip_notice(tool, test));
            None
        }
        Err(msg) => panic!("{msg}"),
    }
}

static COUNTER: AtomicU64 = AtomicU64::new(0);

/// Assemble `ptx` with `ptxas` for `target` (`sm_70`, `sm_80`, `sm_90`). `Err` holds
/// ptxas's output when it fails or prints anything: a warning counts as a failure.
pub fn run_ptxas(ptxas: &Path, ptx: &str, target: &str) -> Result<(), String> {
    let dir = std::env::temp_dir().join("gyre-ptxas");
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let file = dir.join(format!("k{}_{n}.ptx", std::process::id()));
    std::fs::write(&file, ptx).map_err(|e| e.to_string())?;
    let out = Command::new(ptxas)
        .arg(format!("-arch={target}"))
        .args(["-o", "/dev/null"])
        .arg(&file)
        .output();
    let _ = std::fs::remove_file(&file);
    let out = out.map_err(|e| format!("cannot run {}: {e}", ptxas.display()))?;
    let stderr = String::from_utf8_lossy(&out.stderr);
    let stdout = String::from_utf8_lossy(&out.stdout);
    if out.status.success() && stderr.trim().is_empty() && stdout.trim().is_empty() {
        Ok(())
    } else {
        Err(format!(
            "ptxas -arch={target} failed ({}):\n{stderr}{stdout}",
            out.status
        ))
    }
}

#[cfg(test)]
mod tests;

/// The shared corpus directory `name` (`llvm-lit`, `cuda`): `$GYRE_CORPUS_DIR/<name>`
/// if that variable is set, else `../shared/corpus/<name>` relative to the workspace
/// root (where a checkout next to the shared material finds it), when it holds a
/// `MANIFEST.tsv`. Missing, it is `None` with a skip notice, or a panic when tools are
/// required (`GYRE_REQUIRE_TOOLS=1`, as under `cargo xtask test`), so a test that needs
/// the corpus fails rather than passes silently there.
pub fn corpus(name: &str, test: &str) -> Option<PathBuf> {
    let base = std::env::var_os("GYRE_CORPUS_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace_root().join("../shared/corpus"));
    let dir = base.join(name);
    if dir.join("MANIFEST.tsv").is_file() {
        return Some(dir);
    }
    let msg = format!(
        "{test}: the {name} corpus is not at {} (set GYRE_CORPUS_DIR to the folder that \
         holds {name}/MANIFEST.tsv)",
        dir.display()
    );
    if tools_required() {
        panic!("{msg}; GYRE_REQUIRE_TOOLS=1 makes this a failure");
    }
    eprintln!("skipped: {msg}");
    None
}
