//! Fuzz targets for Gyre, as plain library functions.
//!
//! Each [`Target`] checks one concern against an independent oracle (see docs/fuzzing.md):
//! it makes an input from a seed ([`Target::generate`]: the generator of
//! `gyre_ir::generate` with options drawn by `GenOptions::random`, or mutated text) and
//! checks it ([`Target::check`]). [`campaign`] drives targets on the stable toolchain
//! (`cargo xtask fuzz`), keeps a corpus, shrinks failures ([`shrink`]) and writes them as
//! regression files that `cargo test` here replays; the libFuzzer target `parse`
//! (fuzz_targets/) calls [`check_parse`] where `cargo fuzz` is available.
//!
//! A check returns `Err` for a failed oracle; a panic anywhere in the code under test is a
//! failure too ([`protect`] turns it into an `Err`).
#![warn(missing_docs)]

pub mod analyses;
pub mod campaign;
pub mod case;
pub mod codegen;
pub mod mutate;
pub mod parse_gir;
pub mod parse_ll;
pub mod pipeline;
pub mod roundtrip_llvm;
pub mod shrink;
pub mod supervise;
pub mod uniformity;
pub mod verify;

// The differential harnesses of the crates' own tests, reused rather than copied.
#[path = "../../crates/codegen-lite/tests/common/mod.rs"]
mod ptx_harness;
#[allow(dead_code)]
#[path = "../../crates/analysis/tests/common/trace.rs"]
mod uni_trace;

pub use case::{Case, Input};
pub use parse_gir::check_parse;

use std::cell::RefCell;

/// What a passing check observed: short tags (an error kind, a pass counter that fired).
/// A campaign keeps an input in its corpus when it shows a tag not seen before.
pub type Features = Vec<String>;

/// One fuzz target.
pub struct Target {
    /// Name on the command line (`cargo xtask fuzz <name>`) and directory name under
    /// `seeds/`, `regressions/` and `corpus/`.
    pub name: &'static str,
    /// What it checks, in one line.
    pub doc: &'static str,
    /// Whether inputs are raw text or generated kernels.
    pub kind: InputKind,
    /// A fresh input from a seed (the same seed gives the same input).
    pub generate: fn(u64) -> Input,
    /// The oracle: `Err` describes the failure.
    pub check: fn(&Input) -> Result<Features, String>,
}

/// The kind of a target's inputs.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum InputKind {
    /// Bytes, stored as files with this extension.
    Text(&'static str),
    /// A generated kernel with its contract ([`Case`]), stored as `.gir`.
    Kernel,
}

impl InputKind {
    /// File extension of stored inputs.
    pub fn ext(self) -> &'static str {
        match self {
            InputKind::Text(e) => e,
            InputKind::Kernel => "gir",
        }
    }
}

/// Every target.
pub const TARGETS: &[Target] = &[
    parse_gir::TARGET,
    parse_ll::TARGET,
    verify::TARGET,
    analyses::TARGET,
    uniformity::TARGET,
    pipeline::TARGET,
    codegen::TARGET,
    roundtrip_llvm::TARGET,
];

/// The target with this name.
pub fn target(name: &str) -> Option<&'static Target> {
    TARGETS.iter().find(|t| t.name == name)
}

thread_local! {
    static LAST_PANIC: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// Install a panic hook that records the message and location of a panic for
/// [`protect`] instead of printing it (a campaign panics by design, often).
pub fn quiet_panics() {
    std::panic::set_hook(Box::new(|info| {
        let msg = info.to_string();
        LAST_PANIC.with(|l| *l.borrow_mut() = Some(msg));
    }));
}

/// Run `f`; a panic becomes `Err("panic: <message>")`.
pub fn protect<T>(f: impl FnOnce() -> Result<T, String>) -> Result<T, String> {
    LAST_PANIC.with(|l| *l.borrow_mut() = None);
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)) {
        Ok(r) => r,
        Err(payload) => {
            let recorded = LAST_PANIC.with(|l| l.borrow_mut().take());
            let msg = recorded.unwrap_or_else(|| {
                payload
                    .downcast_ref::<&str>()
                    .map(|s| s.to_string())
                    .or_else(|| payload.downcast_ref::<String>().cloned())
                    .unwrap_or_else(|| "non-string payload".to_string())
            });
            Err(format!("panic: {msg}"))
        }
    }
}

/// Run `target`'s check on `input`, panics included.
pub fn run_check(target: &Target, input: &Input) -> Result<Features, String> {
    protect(|| (target.check)(input))
}

/// The kind of a failure, to tell whether a shrunk input still fails the same way: the
/// first three `: `-separated parts of the message's first line, each without quoted
/// text, digits and hexadecimal numbers and cut to four words (value numbers, offsets
/// and seeds change while shrinking; the parts after the first keep, say, "ptx-sim
/// differs from the interpreter: buffer ..." apart from "...: interpreter: data race").
pub fn signature(failure: &str) -> String {
    let line = failure.lines().next().unwrap_or("");
    line.split(": ")
        .take(3)
        .map(error_class)
        .collect::<Vec<_>>()
        .join(": ")
}

/// A coarse class of an error message, as a feature: quoted parts and digits dropped,
/// at most the first four words (so names and numbers in messages do not make every
/// input look new).
pub fn error_class(msg: &str) -> String {
    let mut out = String::new();
    let mut quote: Option<char> = None;
    let line = msg.lines().next().unwrap_or("");
    // Hexadecimal numbers (`0x1f`) go whole: their letters vary too.
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        if quote.is_none() && c == '0' && chars.peek() == Some(&'x') {
            chars.next();
            while chars.peek().is_some_and(|c| c.is_ascii_hexdigit()) {
                chars.next();
            }
            continue;
        }
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => {}
            None if matches!(c, '\'' | '"' | '`') => quote = Some(c),
            None if c.is_ascii_digit() => {}
            None => out.push(c),
        }
    }
    out.split_whitespace().take(4).collect::<Vec<_>>().join(" ")
}

/// Where campaigns keep their files: this crate's directory, or `GYRE_FUZZ_ROOT` when set
/// (the supervisor's tests write into a temporary directory).
pub fn fuzz_root() -> std::path::PathBuf {
    std::env::var_os("GYRE_FUZZ_ROOT")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")))
}

/// A directory of this crate (`seeds`, `regressions`, `corpus`) for `target`.
pub fn target_dir(what: &str, target: &str) -> std::path::PathBuf {
    fuzz_root().join(what).join(target)
}
