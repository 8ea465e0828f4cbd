//! Located error messages: `file:line:col: error: message`, the source line and a caret.

use core::fmt;
use gyre_ir::parser::SourceMap;
use gyre_ir::verifier::VerifierErrors;

/// The most errors one run reports; the rest are counted in a last line.
pub const MAX_ERRORS: usize = 100;

/// A position in the source: 1-based line, 1-based column counted in characters, and
/// the byte offset (to find the line again when rendering).
#[derive(Copy, Clone, PartialEq, Eq, Debug, Default)]
pub struct Pos {
    /// 1-based line.
    pub line: u32,
    /// 1-based column, in characters.
    pub col: u32,
    /// Byte offset of the position in the source.
    pub offset: u32,
}

/// One error at a place in the source.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Diagnostic {
    /// Where.
    pub pos: Pos,
    /// What, without the position (`mismatched types: i32 and f32`).
    pub message: String,
    /// An internal error: the front end built IR the verifier rejects (a bug in toyc,
    /// never the program's fault). Tests assert that no input produces one.
    pub internal: bool,
}

/// Every error of one compilation, in source order of discovery.
#[derive(Clone, PartialEq, Eq, Debug, Default)]
pub struct Diagnostics {
    /// The errors (at most [`MAX_ERRORS`] are kept).
    pub errors: Vec<Diagnostic>,
    /// Errors found beyond [`MAX_ERRORS`] (counted, not kept).
    pub dropped: usize,
}

impl Diagnostics {
    /// Record an error.
    pub fn error(&mut self, pos: Pos, message: impl Into<String>) {
        if self.errors.len() < MAX_ERRORS {
            self.errors.push(Diagnostic {
                pos,
                message: message.into(),
                internal: false,
            });
        } else {
            self.dropped += 1;
        }
    }

    /// Record an internal error (a front-end bug), at the start of the file.
    pub fn internal(&mut self, message: impl Into<String>) {
        self.errors.push(Diagnostic {
            pos: Pos {
                line: 1,
                col: 1,
                offset: 0,
            },
            message: format!("internal error: {}", message.into()),
            internal: true,
        });
    }

    /// The verifier's errors for IR lowered from `src`, as internal errors located in
    /// `src` through the lowering's source map (each instruction carries the position of
    /// the expression or statement it was built for; an error without one is put at its
    /// function, or at the start of the file).
    pub fn from_verifier(errs: &VerifierErrors, map: &SourceMap, src: &str) -> Diagnostics {
        let mut diags = Diagnostics::default();
        for e in &errs.0 {
            let mut message = String::from("the generated IR does not verify: ");
            if !e.context.is_empty() {
                message.push_str(&e.context);
                message.push_str(": ");
            }
            message.push_str(&e.message);
            match e.source_offset(map) {
                Some(offset) => {
                    let (line, col) = gyre_ir::parser::line_col(src, offset);
                    diags.errors.push(Diagnostic {
                        pos: Pos {
                            line: line as u32,
                            col: col as u32,
                            offset,
                        },
                        message: format!("internal error: {message}"),
                        internal: true,
                    });
                }
                None => diags.internal(message),
            }
        }
        diags
    }

    /// No errors?
    pub fn is_empty(&self) -> bool {
        self.errors.is_empty()
    }

    /// Render every error as `file:line:col: error: message`, the source line and a caret
    /// under the column. Characters that are not printable are shown as `?` so binary
    /// input is never echoed raw and the caret stays aligned.
    pub fn render(&self, file: &str, src: &str) -> String {
        let mut out = String::new();
        for d in &self.errors {
            out.push_str(&format!(
                "{file}:{}:{}: error: {}\n",
                d.pos.line,
                d.pos.col,
                sanitize(&d.message)
            ));
            let start = (d.pos.offset as usize).min(src.len());
            // The offset is always at a char boundary (the lexer makes it), but rendering
            // must not panic on a hand-made Pos either.
            let start = (0..=start)
                .rev()
                .find(|&i| src.is_char_boundary(i))
                .unwrap_or(0);
            let line_start = src[..start].rfind('\n').map_or(0, |i| i + 1);
            let line_end = src[line_start..]
                .find('\n')
                .map_or(src.len(), |i| line_start + i);
            let line = &src[line_start..line_end];
            out.push_str(&format!("    {}\n", sanitize(line)));
            let caret_col = d.pos.col.saturating_sub(1) as usize;
            out.push_str(&format!("    {}^\n", " ".repeat(caret_col)));
        }
        if self.dropped > 0 {
            out.push_str(&format!("{file}: {} more errors not shown\n", self.dropped));
        }
        out
    }
}

/// Printable characters kept, tabs as spaces, everything else `?` (one per character,
/// so columns stay aligned).
fn sanitize(s: &str) -> String {
    s.chars()
        .map(|c| match c {
            '\t' => ' ',
            '\r' => ' ',
            c if c.is_control() || c == '\u{fffd}' => '?',
            c => c,
        })
        .collect()
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: {}", self.pos.line, self.pos.col, self.message)
    }
}
