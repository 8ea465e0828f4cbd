//! Gyre's filetests: one runner, one header syntax and one directive set for every kind of
//! textual test, in the manner of Cranelift's `cranelift-filetests`. The format is
//! described in `docs/filetests.md`; in short:
//!
//! ```text
//! ; test: opt | uniformity | print-cfg | print-domtree | print-postdomtree | print-loops | print-scev | compile
//! ; passes: loop-simplify,lcssa     opt: the pipeline (required)
//! ; knobs: name=value ...           opt: knob settings
//! ; expect: unchanged               opt: no pass changes anything
//! ; run: kernel=k grid=2 block=8 args=5,-3
//!                                   opt: the interpreter runs the kernel before and after
//! ; input: unverified               the input need not pass the verifier
//! ; target: sm_70|sm_80|sm_90       compile (default sm_80)
//! ; source: examples/saxpy.gir      the module is that file, not this one
//! ; precise-output                  the whole output is kept after '; output:'
//! ;; prose
//! <module>
//! ; check: / nextln: / sameln: / not: TEXT
//! ; output:
//! ; <each line of the expected output>
//! ```
//!
//! With `GYRE_BLESS=1` a precise-output test whose output differs has its output section
//! rewritten in place instead of failing.
#![warn(missing_docs)]

pub mod diff;
pub mod file;
pub mod kinds;
pub mod matcher;

pub use file::{parse_test_file, FileError, TestFile, TestKind};
pub use matcher::{match_directives, Directive, DirectiveKind, Mismatch};

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// How a run behaves.
#[derive(Clone, Debug)]
pub struct Config {
    /// Where `; source:` paths start.
    pub workspace_root: PathBuf,
    /// Rewrite precise-output sections that differ instead of failing.
    pub bless: bool,
    /// A missing ptxas fails a `test compile` file instead of skipping its assembly.
    pub require_tools: bool,
    /// Run only the files whose path (from the workspace root) contains this.
    pub filter: Option<String>,
}

impl Config {
    /// `GYRE_BLESS=1` blesses; `GYRE_REQUIRE_TOOLS=1` requires the tools;
    /// `GYRE_FILETESTS=text` runs only the files whose path contains `text`.
    pub fn from_env() -> Config {
        Config {
            workspace_root: gyre_test_tools::workspace_root(),
            bless: std::env::var_os("GYRE_BLESS").is_some_and(|v| v == "1"),
            require_tools: gyre_test_tools::tools_required(),
            filter: std::env::var("GYRE_FILETESTS")
                .ok()
                .filter(|f| !f.is_empty()),
        }
    }
}

/// What became of one file that passed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Outcome {
    /// Bless rewrote its output section.
    pub blessed: bool,
    /// Checks that could not run, with why (`ptxas not found (how to get it)`).
    pub skipped: Vec<String>,
}

/// The result of running a tree of files.
#[derive(Clone, Debug, Default)]
pub struct Summary {
    /// Files run.
    pub files: usize,
    /// `path:line: message` for each failing file.
    pub failures: Vec<String>,
    /// Files bless rewrote.
    pub blessed: Vec<PathBuf>,
    /// `path: what` for each check a file skipped (a missing tool).
    pub skipped: Vec<String>,
}

/// Finds tools once per run.
pub struct Runner {
    config: Config,
    ptxas: OnceLock<Option<PathBuf>>,
    opt: OnceLock<Option<PathBuf>>,
}

impl Runner {
    /// A runner with `config`.
    pub fn new(config: Config) -> Runner {
        Runner {
            config,
            ptxas: OnceLock::new(),
            opt: OnceLock::new(),
        }
    }

    /// The configuration.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// LLVM 14 `opt`, searched on first use.
    pub(crate) fn opt(&self) -> Option<&Path> {
        self.opt
            .get_or_init(|| gyre_test_tools::find(gyre_test_tools::Tool::Opt))
            .as_deref()
    }

    /// ptxas, searched on first use.
    pub(crate) fn ptxas(&self) -> Option<&Path> {
        self.ptxas
            .get_or_init(|| gyre_test_tools::find(gyre_test_tools::Tool::Ptxas))
            .as_deref()
    }

    /// `path` from the workspace root when it is under it (as messages name files).
    pub fn display_name(&self, path: &Path) -> String {
        std::fs::canonicalize(path)
            .ok()
            .and_then(|p| {
                let root = std::fs::canonicalize(&self.config.workspace_root).ok()?;
                Some(p.strip_prefix(root).ok()?.display().to_string())
            })
            .unwrap_or_else(|| path.display().to_string())
    }

    /// Run one file. `Err` is `path:line: message`, with the output attached where it
    /// helps.
    pub fn run_file(&self, path: &Path) -> Result<Outcome, String> {
        let src = std::fs::read_to_string(path)
            .map_err(|e| format!("{}: cannot read: {e}", path.display()))?;
        let name = self.display_name(path);
        self.run_text(&name, &src)
            .map_err(|e| match e.line {
                Some(l) => format!("{name}:{l}: {}", e.message),
                None => format!("{name}: {}", e.message),
            })
            .and_then(|(outcome, new_text)| {
                if let Some(text) = new_text {
                    std::fs::write(path, text).map_err(|e| format!("{name}: cannot bless: {e}"))?;
                }
                Ok(outcome)
            })
    }

    /// Run the test in `src` (named `name` in messages); with the file's new text when
    /// bless rewrote it.
    pub fn run_text(&self, name: &str, src: &str) -> Result<(Outcome, Option<String>), FileError> {
        let t = parse_test_file(src)?;
        let (module_name, module_src) = match &t.source {
            Some(s) => {
                let p = self.config.workspace_root.join(&s.value);
                let text = std::fs::read_to_string(&p).map_err(|e| {
                    FileError::at(s.line, format!("cannot read {}: {e}", p.display()))
                })?;
                (s.value.clone(), text)
            }
            None => (name.to_string(), src.to_string()),
        };
        // LLVM IR comments are `;` lines too, so a `.ll` file carries the same header.
        let module = if module_name.ends_with(".ll") {
            gyre_llvm::import_module(&module_src).map_err(|e| {
                FileError::whole(format!(
                    "the LLVM module does not import:\n{}",
                    e.render(&module_name)
                ))
            })?
        } else {
            gyre_ir::parse_module(&module_src).map_err(|e| {
                FileError::whole(format!(
                    "the module does not parse:\n{}",
                    e.render(&module_name, &module_src)
                ))
            })?
        };
        let mut outcome = Outcome::default();
        let produced = kinds::produce(&t, &module)?;
        let output = produced.text.as_str();
        let show = |m: String| format!("{m}\n--- output ---\n{output}--------------");
        match_directives(output, &t.directives)
            .map_err(|m| FileError::at(m.line, show(m.message)))?;
        kinds::semantic_checks(self, &t, &module, &produced, &mut outcome).map_err(|e| {
            FileError {
                message: show(e.message),
                ..e
            }
        })?;
        let mut new_text = None;
        if t.precise {
            let expected = t.output.as_ref().map_or(&[][..], |s| &s.lines[..]);
            let actual: Vec<&str> = output.lines().map(str::trim_end).collect();
            let same = expected.len() == actual.len()
                && expected
                    .iter()
                    .zip(&actual)
                    .all(|(e, a)| e.trim_end() == *a);
            if !same {
                if self.config.bless {
                    new_text = Some(file::with_output(src, t.output.as_ref(), output));
                    outcome.blessed = true;
                } else {
                    let at = t
                        .output
                        .as_ref()
                        .map_or(src.lines().count(), |s| s.marker + 1);
                    let what = if t.output.is_some() {
                        "the output differs from the output section"
                    } else {
                        "'; precise-output' without an '; output:' section"
                    };
                    let expected: Vec<&str> = expected.iter().map(String::as_str).collect();
                    return Err(FileError::at(
                        at,
                        format!(
                            "{what} (GYRE_BLESS=1 rewrites it):\n{}",
                            diff::line_diff(&expected, &actual)
                        ),
                    ));
                }
            }
        }
        Ok((outcome, new_text))
    }

    /// Run every `.gir` file under `root` (that passes the filter), in path order.
    pub fn run_tree(&self, root: &Path) -> Summary {
        let mut s = Summary::default();
        for f in collect(root) {
            if let Some(filter) = &self.config.filter {
                if !self.display_name(&f).contains(filter.as_str()) {
                    continue;
                }
            }
            s.files += 1;
            match self.run_file(&f) {
                Ok(o) => {
                    if o.blessed {
                        s.blessed.push(f.clone());
                    }
                    for k in o.skipped {
                        s.skipped.push(format!("{}: {k}", self.display_name(&f)));
                    }
                }
                Err(e) => s.failures.push(e),
            }
        }
        s
    }
}

/// Every `.gir` and `.ll` file under `root`, sorted (an explicit stack: no recursion over the tree).
pub fn collect(root: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "gir" || x == "ll") {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

#[cfg(test)]
mod tests;
