//! The `.gir` lexer: a byte-level scanner producing one token at a time.
//!
//! Tokens borrow their text from the source, so lexing allocates nothing except the
//! table of line starts (one `u32` per line), which turns byte offsets into
//! `line:col` positions for error messages.

/// The kind of a token.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub(crate) enum Tok {
    /// `[A-Za-z_][A-Za-z0-9_.]*`: keywords, opcodes with suffixes, types, entities.
    Ident,
    /// Starts with a digit or `-`: integers, floats, hex bits, `-inf`. Validated by
    /// the parser, which knows which kind of number it expects.
    Number,
    /// `@name` with a plain name; the text excludes the `@`.
    Name,
    /// `@"..."`; the text is what is between the quotes, escapes not yet decoded.
    QuotedName,
    /// `(`
    LParen,
    /// `)`
    RParen,
    /// `[`
    LBracket,
    /// `]`
    RBracket,
    /// `{`
    LBrace,
    /// `}`
    RBrace,
    /// `,`
    Comma,
    /// `:`
    Colon,
    /// `=`
    Equals,
    /// `->`
    Arrow,
    /// The end of a line (comments are skipped).
    Newline,
    /// The end of the input.
    Eof,
    /// A character that starts no token.
    BadChar,
    /// `@"` without a closing quote on the same line.
    Unterminated,
}

/// A token: kind, text and byte offset of its first character.
#[derive(Copy, Clone, Debug)]
pub(crate) struct Token<'a> {
    pub kind: Tok,
    pub text: &'a str,
    pub pos: u32,
}

/// Scans a source string.
pub(crate) struct Lexer<'a> {
    src: &'a str,
    pos: usize,
    /// Byte offset of the first character of each line seen so far.
    line_starts: Vec<u32>,
}

/// May this byte continue an identifier?
fn is_ident_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'.'
}

/// May this byte appear in a plain `@name`?
pub(crate) fn is_name_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'.' || b == b'$'
}

impl<'a> Lexer<'a> {
    /// A lexer at the start of `src` (which must be shorter than 4 GiB).
    pub fn new(src: &'a str) -> Lexer<'a> {
        Lexer {
            src,
            // A byte-order mark (editors on Windows write one) is not part of the text.
            pos: if src.starts_with('\u{feff}') { 3 } else { 0 },
            line_starts: vec![0],
        }
    }

    /// The next token.
    pub fn next_token(&mut self) -> Token<'a> {
        let bytes = self.src.as_bytes();
        // Skip blanks and comments; newlines are tokens.
        loop {
            match bytes.get(self.pos) {
                Some(b' ' | b'\t' | b'\r') => self.pos += 1,
                Some(b';') => {
                    while self.pos < bytes.len() && bytes[self.pos] != b'\n' {
                        self.pos += 1;
                    }
                }
                _ => break,
            }
        }
        let start = self.pos;
        let Some(&b) = bytes.get(start) else {
            return self.token(Tok::Eof, start, start);
        };
        let single = |kind| (kind, start + 1);
        let (kind, end) = match b {
            b'\n' => {
                self.line_starts.push((start + 1) as u32);
                single(Tok::Newline)
            }
            b'(' => single(Tok::LParen),
            b')' => single(Tok::RParen),
            b'[' => single(Tok::LBracket),
            b']' => single(Tok::RBracket),
            b'{' => single(Tok::LBrace),
            b'}' => single(Tok::RBrace),
            b',' => single(Tok::Comma),
            b':' => single(Tok::Colon),
            b'=' => single(Tok::Equals),
            b'-' if bytes.get(start + 1) == Some(&b'>') => (Tok::Arrow, start + 2),
            b'-' | b'0'..=b'9' => (Tok::Number, self.scan_number(start)),
            b'a'..=b'z' | b'A'..=b'Z' | b'_' => {
                let mut end = start + 1;
                while end < bytes.len() && is_ident_byte(bytes[end]) {
                    end += 1;
                }
                (Tok::Ident, end)
            }
            b'@' => return self.scan_name(start),
            _ => {
                // One whole character, so the text stays on char boundaries.
                let len = self.src[start..].chars().next().map_or(1, char::len_utf8);
                (Tok::BadChar, start + len)
            }
        };
        self.pos = end;
        self.token(kind, start, end)
    }

    fn token(&self, kind: Tok, start: usize, end: usize) -> Token<'a> {
        Token {
            kind,
            text: &self.src[start..end],
            pos: start as u32,
        }
    }

    /// A number: `-`? then letters, digits, `_` and `.`, plus a sign right after the
    /// exponent `e` of a decimal number (`1e-30`).
    fn scan_number(&self, start: usize) -> usize {
        let bytes = self.src.as_bytes();
        let mut end = start + 1;
        let digits = if bytes[start] == b'-' {
            start + 1
        } else {
            start
        };
        let hex =
            bytes.get(digits) == Some(&b'0') && matches!(bytes.get(digits + 1), Some(b'x' | b'X'));
        while end < bytes.len() {
            let c = bytes[end];
            let sign_ok = !hex
                && (c == b'+' || c == b'-')
                && matches!(bytes[end - 1], b'e' | b'E')
                && end - 1 > digits;
            if is_ident_byte(c) || sign_ok {
                end += 1;
            } else {
                break;
            }
        }
        end
    }

    fn scan_name(&mut self, start: usize) -> Token<'a> {
        let bytes = self.src.as_bytes();
        if bytes.get(start + 1) == Some(&b'"') {
            let mut end = start + 2;
            loop {
                match bytes.get(end) {
                    None | Some(b'\n') => {
                        self.pos = end;
                        return self.token(Tok::Unterminated, start, end);
                    }
                    Some(b'"') => break,
                    // Skip the escaped byte (ASCII in every valid escape; a non-ASCII
                    // byte here is rejected when decoding, and we only slice at quotes).
                    Some(b'\\') if matches!(bytes.get(end + 1), Some(b'"' | b'\\')) => end += 2,
                    Some(_) => end += 1,
                }
            }
            self.pos = end + 1;
            return self.token(Tok::QuotedName, start + 2, end);
        }
        let mut end = start + 1;
        while end < bytes.len() && is_name_byte(bytes[end]) {
            end += 1;
        }
        self.pos = end;
        if end == start + 1 {
            return self.token(Tok::BadChar, start, end);
        }
        let mut t = self.token(Tok::Name, start + 1, end);
        t.pos = start as u32;
        t
    }

    /// Byte offsets of the starts of the lines seen so far.
    pub fn line_starts(&self) -> &[u32] {
        &self.line_starts
    }
}

/// The 1-based line number of a byte offset, given line starts.
pub(crate) fn line_of(line_starts: &[u32], pos: u32) -> usize {
    line_starts.partition_point(|&s| s <= pos).max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(src: &str) -> Vec<(Tok, &str)> {
        let mut l = Lexer::new(src);
        let mut out = Vec::new();
        loop {
            let t = l.next_token();
            if t.kind == Tok::Eof {
                return out;
            }
            out.push((t.kind, t.text));
        }
    }

    #[test]
    fn tokens() {
        use Tok::*;
        assert_eq!(
            kinds("v1 = fconst.f32 -1.5e-3 ; c\n@f @\"a b\" -> -inf 0x1e-5"),
            vec![
                (Ident, "v1"),
                (Equals, "="),
                (Ident, "fconst.f32"),
                (Number, "-1.5e-3"),
                (Newline, "\n"),
                (Name, "f"),
                (QuotedName, "a b"),
                (Arrow, "->"),
                (Number, "-inf"),
                (Number, "0x1e"),
                (Number, "-5"),
            ]
        );
        assert_eq!(
            kinds("@\"x\ny"),
            vec![(Unterminated, "@\"x"), (Newline, "\n"), (Ident, "y")]
        );
        assert_eq!(kinds("é#"), vec![(BadChar, "é"), (BadChar, "#")]);
    }

    #[test]
    fn lines() {
        let mut l = Lexer::new("a\nb\n\nc");
        while l.next_token().kind != Tok::Eof {}
        assert_eq!(l.line_starts(), &[0, 2, 4, 5]);
        assert_eq!(line_of(l.line_starts(), 0), 1);
        assert_eq!(line_of(l.line_starts(), 1), 1);
        assert_eq!(line_of(l.line_starts(), 2), 2);
        assert_eq!(line_of(l.line_starts(), 5), 4);
    }
}
