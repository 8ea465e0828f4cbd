//! Tokens of LLVM IR text.
//!
//! The lexer is a single forward scan over the bytes (linear time, no backtracking past
//! one token) producing a vector of tokens with their 1-based line and column. It knows
//! nothing about the grammar: keywords, types and attribute names are all [`Tok::Word`].
//!
//! Names, words and strings borrow from the input: a token allocates nothing unless its
//! text must be rewritten (a quoted string with `\XX` escapes, a `#dbg_` record word),
//! so lexing costs no allocation per token, only the token vector.

use crate::{ErrorKind, ImportError};
use std::borrow::Cow;

/// One token; `'a` is the input's lifetime.
#[derive(Clone, PartialEq, Debug)]
pub(crate) enum Tok<'a> {
    /// `%name`, `%"quoted"`, `%12`.
    Local(Cow<'a, str>),
    /// `@name`, `@"quoted"`, `@12`.
    Global(Cow<'a, str>),
    /// `name:`, `"quoted":`, `12:` (a block label).
    Label(Cow<'a, str>),
    /// `!name`, `!12`, or a bare `!` (as in `!{` and `!"..."`): the part after `!`.
    Meta(Cow<'a, str>),
    /// `#12`: an attribute-group reference.
    AttrRef(u32),
    /// A bare word: keyword, type name, attribute, `$comdat`.
    Word(Cow<'a, str>),
    /// A decimal integer literal.
    Int(i128),
    /// A decimal floating-point literal, as written.
    Float(f64),
    /// A hexadecimal floating-point literal `0x...`: the kind letter (`'\0'` for the plain
    /// double form, else `K`, `L`, `M`, `H`, `R`) and the low 64 bits of the digits.
    HexFloat(char, u64),
    /// `"..."` with escapes decoded.
    Str(Cow<'a, [u8]>),
    /// `c"..."`: a byte-string constant.
    CStr(Cow<'a, [u8]>),
    /// Punctuation: `= , ( ) [ ] { } < > * |`.
    Punct(u8),
    /// `...`.
    Ellipsis,
    /// End of input.
    Eof,
}

/// A token with its position.
#[derive(Clone, Debug)]
pub(crate) struct Token<'a> {
    pub tok: Tok<'a>,
    pub line: u32,
    pub col: u32,
}

fn is_ident_byte(c: u8) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, b'-' | b'$' | b'.' | b'_')
}

struct Lexer<'a> {
    /// The input as text, for slicing names out (they split at ASCII bytes, so every
    /// slice is valid UTF-8 without a check of its contents).
    text: &'a str,
    src: &'a [u8],
    pos: usize,
    line: u32,
    line_start: usize,
}

impl<'a> Lexer<'a> {
    fn err(&self, at: usize, msg: impl Into<String>) -> ImportError {
        ImportError {
            line: self.line,
            col: at.saturating_sub(self.line_start) as u32 + 1,
            kind: ErrorKind::Parse,
            message: msg.into(),
        }
    }

    fn peek(&self, off: usize) -> u8 {
        self.src.get(self.pos + off).copied().unwrap_or(0)
    }

    fn ident_run(&mut self) -> &'a [u8] {
        let start = self.pos;
        while self.pos < self.src.len() && is_ident_byte(self.src[self.pos]) {
            self.pos += 1;
        }
        &self.src[start..self.pos]
    }

    /// A quoted string starting at the opening quote; escapes are `\\` and `\XX`.
    /// Without escapes (the usual case) it is a slice of the input.
    fn string(&mut self) -> Result<Cow<'a, [u8]>, ImportError> {
        let start = self.pos;
        self.pos += 1;
        // Fast path: scan to the closing quote; only a backslash needs a decoded copy.
        let body = self.pos;
        let mut i = body;
        while let Some(&c) = self.src.get(i) {
            match c {
                b'"' => {
                    self.pos = i + 1;
                    return Ok(Cow::Borrowed(&self.src[body..i]));
                }
                b'\\' => break,
                b'\n' => {
                    // Strings may span lines; keep positions right.
                    self.line += 1;
                    self.line_start = i + 1;
                }
                _ => {}
            }
            i += 1;
        }
        // Decode the rest; the newlines before `i` are counted already.
        let mut out = Vec::new();
        out.extend_from_slice(&self.src[body..i]);
        self.pos = i;
        loop {
            let Some(&c) = self.src.get(self.pos) else {
                return Err(self.err(start, "unterminated string"));
            };
            self.pos += 1;
            match c {
                b'"' => return Ok(Cow::Owned(out)),
                b'\\' => {
                    if self.peek(0) == b'\\' {
                        out.push(b'\\');
                        self.pos += 1;
                    } else {
                        let h = |c: u8| (c as char).to_digit(16);
                        match (h(self.peek(0)), h(self.peek(1))) {
                            (Some(a), Some(b)) => {
                                out.push((a * 16 + b) as u8);
                                self.pos += 2;
                            }
                            _ => out.push(b'\\'),
                        }
                    }
                }
                b'\n' => {
                    // Strings may span lines; keep positions right.
                    out.push(c);
                    self.line += 1;
                    self.line_start = self.pos;
                }
                _ => out.push(c),
            }
        }
    }

    /// The input text of `start..end`, both at ASCII bytes (or the ends of the input).
    fn slice(&self, start: usize, end: usize) -> &'a str {
        self.text.get(start..end).unwrap_or("")
    }

    /// The text of a quoted string: borrowed when it had no escapes and is valid UTF-8.
    fn string_text(s: Cow<'a, [u8]>) -> Cow<'a, str> {
        match s {
            Cow::Borrowed(b) => String::from_utf8_lossy(b),
            Cow::Owned(v) => Cow::Owned(match String::from_utf8(v) {
                Ok(s) => s,
                Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
            }),
        }
    }

    /// The name after a `%`, `@` or `!` sigil.
    fn sigil_name(&mut self, start: usize) -> Result<Cow<'a, str>, ImportError> {
        if self.peek(0) == b'"' {
            let s = self.string()?;
            return Ok(Self::string_text(s));
        }
        let from = self.pos;
        let run = self.ident_run();
        if run.is_empty() {
            return Err(self.err(start, "expected a name after sigil"));
        }
        Ok(Cow::Borrowed(self.slice(from, self.pos)))
    }

    fn number(&mut self, start: usize) -> Result<Tok<'a>, ImportError> {
        if self.peek(0) == b'0' && self.peek(1) == b'x' {
            self.pos += 2;
            let kind = match self.peek(0) {
                k @ (b'K' | b'L' | b'M' | b'H' | b'R') => {
                    self.pos += 1;
                    k as char
                }
                _ => '\0',
            };
            let digits_start = self.pos;
            let mut v: u64 = 0;
            while self.peek(0).is_ascii_hexdigit() {
                v = (v << 4) | (self.peek(0) as char).to_digit(16).unwrap_or(0) as u64;
                self.pos += 1;
            }
            if self.pos == digits_start {
                return Err(self.err(start, "malformed hexadecimal constant"));
            }
            return Ok(Tok::HexFloat(kind, v));
        }
        if self.peek(0) == b'-' || self.peek(0) == b'+' {
            self.pos += 1;
        }
        while self.peek(0).is_ascii_digit() {
            self.pos += 1;
        }
        let mut is_float = false;
        if self.peek(0) == b'.' {
            is_float = true;
            self.pos += 1;
            while self.peek(0).is_ascii_digit() {
                self.pos += 1;
            }
            if matches!(self.peek(0), b'e' | b'E') {
                let save = self.pos;
                self.pos += 1;
                if matches!(self.peek(0), b'+' | b'-') {
                    self.pos += 1;
                }
                if self.peek(0).is_ascii_digit() {
                    while self.peek(0).is_ascii_digit() {
                        self.pos += 1;
                    }
                } else {
                    self.pos = save;
                }
            }
        }
        let text = self.slice(start, self.pos);
        if is_float {
            text.parse::<f64>()
                .map(Tok::Float)
                .map_err(|_| self.err(start, format!("malformed number `{text}`")))
        } else {
            text.parse::<i128>()
                .map(Tok::Int)
                .map_err(|_| self.err(start, format!("integer literal `{text}` too large")))
        }
    }

    fn next(&mut self) -> Result<Token<'a>, ImportError> {
        // Skip whitespace and comments.
        loop {
            match self.peek(0) {
                b'\n' => {
                    self.pos += 1;
                    self.line += 1;
                    self.line_start = self.pos;
                }
                b' ' | b'\t' | b'\r' | 0x0c => self.pos += 1,
                b';' => {
                    while self.pos < self.src.len() && self.src[self.pos] != b'\n' {
                        self.pos += 1;
                    }
                }
                _ => break,
            }
        }
        let start = self.pos;
        let line = self.line;
        let col = (start - self.line_start) as u32 + 1;
        let mk = |tok| Token { tok, line, col };
        if self.pos >= self.src.len() {
            return Ok(mk(Tok::Eof));
        }
        let c = self.src[self.pos];
        let tok = match c {
            b'%' | b'@' | b'!' => {
                self.pos += 1;
                if c == b'!' && !(is_ident_byte(self.peek(0)) || self.peek(0) == b'\\') {
                    Tok::Meta(Cow::Borrowed(""))
                } else {
                    let name = self.sigil_name(start)?;
                    match c {
                        b'%' => Tok::Local(name),
                        b'@' => Tok::Global(name),
                        _ => Tok::Meta(name),
                    }
                }
            }
            b'#' if self.peek(1).is_ascii_alphabetic() => {
                // `#dbg_value(...)` debug records.
                self.pos += 1;
                self.ident_run();
                Tok::Word(Cow::Borrowed(self.slice(start, self.pos)))
            }
            b'#' => {
                self.pos += 1;
                let run = self.ident_run();
                let n = std::str::from_utf8(run)
                    .ok()
                    .and_then(|s| s.parse::<u32>().ok())
                    .ok_or_else(|| self.err(start, "malformed attribute group reference"))?;
                Tok::AttrRef(n)
            }
            b'"' => {
                let s = self.string()?;
                if self.peek(0) == b':' {
                    self.pos += 1;
                    Tok::Label(Self::string_text(s))
                } else {
                    Tok::Str(s)
                }
            }
            b'.' if self.peek(1) == b'.' && self.peek(2) == b'.' => {
                self.pos += 3;
                Tok::Ellipsis
            }
            b'=' | b',' | b'(' | b')' | b'[' | b']' | b'{' | b'}' | b'<' | b'>' | b'*' | b'|' => {
                self.pos += 1;
                Tok::Punct(c)
            }
            b'c' if self.peek(1) == b'"' => {
                self.pos += 1;
                Tok::CStr(self.string()?)
            }
            _ if c.is_ascii_digit()
                || ((c == b'-' || c == b'+') && self.peek(1).is_ascii_digit()) =>
            {
                // A numbered label (`12:`) or a number.
                let save = self.pos;
                let run = self.ident_run();
                if !run.is_empty() && self.peek(0) == b':' && run.iter().all(|b| b.is_ascii_digit())
                {
                    self.pos += 1;
                    Tok::Label(Cow::Borrowed(self.slice(save, save + run.len())))
                } else {
                    self.pos = save;
                    self.number(start)?
                }
            }
            _ if is_ident_byte(c) => {
                self.ident_run();
                let s = Cow::Borrowed(self.slice(start, self.pos));
                if self.peek(0) == b':' {
                    self.pos += 1;
                    Tok::Label(s)
                } else {
                    Tok::Word(s)
                }
            }
            _ => {
                return Err(self.err(
                    start,
                    format!(
                        "unexpected character `{}`",
                        String::from_utf8_lossy(&self.src[start..start + 1]).escape_debug()
                    ),
                ))
            }
        };
        Ok(mk(tok))
    }
}

/// Split `src` into tokens; the last one is [`Tok::Eof`].
pub(crate) fn lex(src: &str) -> Result<Vec<Token<'_>>, ImportError> {
    let mut lx = Lexer {
        text: src,
        src: src.as_bytes(),
        // A byte-order mark is not part of the text.
        pos: if src.starts_with('\u{feff}') { 3 } else { 0 },
        line: 1,
        line_start: 0,
    };
    // About one token per 5 bytes of clang's and the generators' output.
    let mut out = Vec::with_capacity(src.len() / 5 + 16);
    loop {
        let t = lx.next()?;
        let eof = t.tok == Tok::Eof;
        out.push(t);
        if eof {
            return Ok(out);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toks(s: &str) -> Vec<Tok> {
        lex(s).unwrap().into_iter().map(|t| t.tok).collect()
    }

    #[test]
    fn basic_tokens() {
        assert_eq!(
            toks("%x = add nsw i32 %0, -5 ; c\nbb.1:"),
            vec![
                Tok::Local("x".into()),
                Tok::Punct(b'='),
                Tok::Word("add".into()),
                Tok::Word("nsw".into()),
                Tok::Word("i32".into()),
                Tok::Local("0".into()),
                Tok::Punct(b','),
                Tok::Int(-5),
                Tok::Label("bb.1".into()),
                Tok::Eof
            ]
        );
        assert_eq!(
            toks("12: 1.5e+3 0x3FF0000000000000 !dbg !{ #3 c\"a\\00\" ..."),
            vec![
                Tok::Label("12".into()),
                Tok::Float(1500.0),
                Tok::HexFloat('\0', 0x3FF0000000000000),
                Tok::Meta("dbg".into()),
                Tok::Meta("".into()),
                Tok::Punct(b'{'),
                Tok::AttrRef(3),
                Tok::CStr(vec![b'a', 0].into()),
                Tok::Ellipsis,
                Tok::Eof
            ]
        );
    }

    #[test]
    fn positions_and_errors() {
        let t = lex("a\n  %\"q r\"").unwrap();
        assert_eq!((t[1].line, t[1].col), (2, 3));
        assert_eq!(t[1].tok, Tok::Local("q r".into()));
        let e = lex("\n  ~").unwrap_err();
        assert_eq!((e.line, e.col), (2, 3));
        assert!(lex("\"abc").is_err());
        assert!(lex("99999999999999999999999999999999999999999999").is_err());
    }
}
