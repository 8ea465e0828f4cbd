//! LLVM IR text import into Gyre IR, and export of Gyre IR as LLVM IR text.
//!
//! [`import_module`] reads the subset of LLVM IR that GPU kernels and LLVM's own loop
//! regression tests use (docs/llvm.md lists it construct by construct) and rejects
//! everything else with a located [`ImportError`] — never a panic. [`export_module`]
//! prints a Gyre module as LLVM 14 text (typed pointers by default) that `opt`, `llc
//! -march=nvptx64` and `lli` accept, so kernels can be cross-checked with LLVM.
#![warn(missing_docs)]

mod dom;
mod export;
mod import;
mod lexer;
mod types;

use core::fmt;

pub use export::{export_module, ExportOptions};
pub use import::{import_module, import_module_with, ExternalCalls, ImportOptions};

/// What kind of problem an [`ImportError`] reports.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub enum ErrorKind {
    /// The text is not well-formed LLVM IR (or not what this importer can read as such).
    Parse,
    /// Well-formed LLVM IR that uses a construct Gyre does not model.
    Unsupported,
}

/// One import error at a 1-based line and column of the input.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct ImportError {
    /// Line of the offending token.
    pub line: u32,
    /// Column (in bytes, 1-based) of the offending token.
    pub col: u32,
    /// Parse error or unsupported construct.
    pub kind: ErrorKind,
    /// What is wrong, without the `unsupported: ` prefix.
    pub message: String,
}

impl ImportError {
    /// `file:line:col: unsupported: <what>` or `file:line:col: <parse error>`.
    pub fn render(&self, file: &str) -> String {
        format!("{file}:{self}")
    }
}

impl fmt::Display for ImportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.kind {
            ErrorKind::Parse => write!(f, "{}:{}: {}", self.line, self.col, self.message),
            ErrorKind::Unsupported => {
                write!(
                    f,
                    "{}:{}: unsupported: {}",
                    self.line, self.col, self.message
                )
            }
        }
    }
}

impl std::error::Error for ImportError {}

/// Every error of one import, in input order (at least one). A module-level syntax
/// error stops the import; errors inside a function body skip that function and the
/// import goes on with the next, so one run reports every unsupported function.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct ImportErrors {
    /// The errors, sorted by position.
    pub errors: Vec<ImportError>,
}

impl ImportErrors {
    /// The first error.
    pub fn first(&self) -> &ImportError {
        self.errors
            .first()
            .expect("ImportErrors always holds at least one error")
    }

    /// All errors rendered as `file:line:col: message`, each followed by the source line
    /// (non-printable characters escaped) and a caret under the column, as `.gir` parse
    /// errors are. `src` must be the text that was imported.
    pub fn render_source(&self, file: &str, src: &str) -> String {
        let mut s = String::new();
        for e in &self.errors {
            let msg = match e.kind {
                ErrorKind::Parse => e.message.clone(),
                ErrorKind::Unsupported => format!("unsupported: {}", e.message),
            };
            // The importer counts columns in bytes; the caret counts characters.
            let line = e.line as usize;
            let text = src.split('\n').nth(line.saturating_sub(1)).unwrap_or("");
            let mut byte = (e.col as usize).saturating_sub(1).min(text.len());
            while !text.is_char_boundary(byte) {
                byte -= 1;
            }
            let col = text[..byte].trim_start_matches('\u{feff}').chars().count() + 1;
            gyre_ir::parser::render_at(&mut s, file, src, line, col, &msg);
        }
        s
    }

    /// All errors rendered with a file name, one per line.
    pub fn render(&self, file: &str) -> String {
        let mut s = String::new();
        for e in &self.errors {
            s.push_str(&e.render(file));
            s.push('\n');
        }
        s
    }
}

impl fmt::Display for ImportErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, e) in self.errors.iter().enumerate() {
            if i > 0 {
                f.write_str("\n")?;
            }
            write!(f, "{e}")?;
        }
        Ok(())
    }
}

impl std::error::Error for ImportErrors {}
