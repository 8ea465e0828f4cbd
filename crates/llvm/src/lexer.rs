//! Tokens of LLVM IR text.
//!
//! The lexer is a single forward scan over the bytes (linear time, no backtracking past
//! one token) producing a vector of tokens with their 1-based line and column. It knows
//! nothing about the grammar: keywords, types and attribute names are all [`Tok::Word`].

use crate::{ErrorKind, ImportError};

/// One token.
#[derive(Clone, PartialEq, Debug)]
pub(crate) enum Tok {
    /// `%name`, `%"quoted"`, `%12`.
    Local(String),
    /// `@name`, `@"quoted"`, `@12`.
    Global(String),
    /// `name:`, `"quoted":`, `12:` (a block label).
    Label(String),
    /// `!name`, `!12`, or a bare `!` (as in `!{` and `!"..."`): the part after `!`.
    Meta(String),
    /// `#12`: an attribute-group reference.
    AttrRef(u32),
    /// A bare word: keyword, type name, attribute, `$comdat`.
    Word(String),
    /// A decimal integer literal.
    Int(i128),
    /// A decimal floating-point literal, as written.
    Float(f64),
    /// A hexadecimal floating-point literal `0x...`: the kind letter (`'\0'` for the plain
    /// double form, else `K`, `L`, `M`, `H`, `R`) and the low 64 bits of the digits.
    HexFloat(char, u64),
    /// `"..."` with escapes decoded.
    Str(Vec<u8>),
    /// `c"..."`: a byte-string constant.
    CStr(Vec<u8>),
    /// Punctuation: `= , ( ) [ ] { } < > * |`.
    Punct(u8),
    /// `...`.
    Ellipsis,
    /// End of input.
    Eof,
}

/// A token with its position.
#[derive(Clone, Debug)]
pub(crate) struct Token {
    pub tok: Tok,
    pub line: u32,
    pub col: u32,
}

fn is_ident_byte(c: u8) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, b'-' | b'$' | b'.' | b'_')
}

struct Lexer<'a> {
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
    fn string(&mut self) -> Result<Vec<u8>, ImportError> {
        let start = self.pos;
        self.pos += 1;
        let mut out = Vec::new();
        loop {
            let Some(&c) = self.src.get(self.pos) else {
                return Err(self.err(start, "unterminated string"));
            };
            self.pos += 1;
            match c {
                b'"' => return Ok(out),
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

    /// The name after a `%`, `@` or `!` sigil.
    fn sigil_name(&mut self, start: usize) -> Result<String, ImportError> {
        if self.peek(0) == b'"' {
            let s = self.string()?;
            return Ok(String::from_utf8_lossy(&s).into_owned());
        }
        let run = self.ident_run();
        if run.is_empty() {
            return Err(self.err(start, "expected a name after sigil"));
        }
        Ok(String::from_utf8_lossy(run).into_owned())
    }

    fn number(&mut self, start: usize) -> Result<Tok, ImportError> {
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
        let text = std::str::from_utf8(&self.src[start..self.pos]).unwrap_or("");
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

    fn next(&mut self) -> Result<Token, ImportError> {
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
                    Tok::Meta(String::new())
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
                let run = self.ident_run();
                Tok::Word(format!("#{}", String::from_utf8_lossy(run)))
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
                    Tok::Label(String::from_utf8_lossy(&s).into_owned())
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
                    Tok::Label(String::from_utf8_lossy(run).into_owned())
                } else {
                    self.pos = save;
                    self.number(start)?
                }
            }
            _ if is_ident_byte(c) => {
                let run = self.ident_run();
                let s = String::from_utf8_lossy(run).into_owned();
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
pub(crate) fn lex(src: &str) -> Result<Vec<Token>, ImportError> {
    let mut lx = Lexer {
        src: src.as_bytes(),
        // A byte-order mark is not part of the text.
        pos: if src.starts_with('\u{feff}') { 3 } else { 0 },
        line: 1,
        line_start: 0,
    };
    let mut out = Vec::with_capacity(src.len() / 4);
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
                Tok::Meta(String::new()),
                Tok::Punct(b'{'),
                Tok::AttrRef(3),
                Tok::CStr(vec![b'a', 0]),
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
