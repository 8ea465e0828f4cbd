//! Parse errors with source positions, and their rendering.

use core::fmt;

/// One problem found in the input, at a 1-based line and column (columns count
/// characters, a tab being one).
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct ParseError {
    /// 1-based line number.
    pub line: usize,
    /// 1-based column, in characters.
    pub col: usize,
    /// What is wrong, in words.
    pub message: String,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: {}", self.line, self.col, self.message)
    }
}

impl std::error::Error for ParseError {}

/// Every error found in one input, in source order (never empty).
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct ParseErrors {
    /// The errors, sorted by position.
    pub errors: Vec<ParseError>,
}

impl ParseErrors {
    /// Render every error as `file:line:col: message`, followed by the source line and a
    /// caret under the column.
    ///
    /// `src` must be the text that was parsed (lines are split at `\n`).
    pub fn render(&self, filename: &str, src: &str) -> String {
        let mut out = String::new();
        for e in &self.errors {
            super::positions::render_at(&mut out, filename, src, e.line, e.col, &e.message);
        }
        out
    }
}

impl fmt::Display for ParseErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, e) in self.errors.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            write!(f, "{e}")?;
        }
        Ok(())
    }
}

impl std::error::Error for ParseErrors {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn render_caret() {
        let errs = ParseErrors {
            errors: vec![
                ParseError {
                    line: 2,
                    col: 6,
                    message: "bad".into(),
                },
                ParseError {
                    line: 9,
                    col: 1,
                    message: "past the end".into(),
                },
            ],
        };
        assert_eq!(
            errs.render("f.gir", "one\n\tab x\n"),
            "f.gir:2:6: bad\n\tab x\n\t    ^\nf.gir:9:1: past the end\n"
        );
        assert_eq!(errs.to_string(), "2:6: bad\n9:1: past the end");
    }
}
