//! Tokens of LLVM IR text.
//!
//! The lexer is a single forward scan over the bytes (linear time, no backtracking past
//! one token) producing [`Tokens`]: one compact 8-byte record per token. It knows
//! nothing about the grammar: keywords, types and attribute names are all [`Tok::Word`].
//!
//! Names, words, numbers and strings are not copied: a record holds the byte range of
//! its text in the input, and [`Tokens::tok`] hands out a [`Tok`] borrowing from it.
//! Only a quoted string with `\XX` escapes is decoded into a side table, so lexing
//! allocates nothing per token. Lines and columns are not stored either: a table of
//! line starts, built by the first error that needs one, turns a token's byte offset
//! into both.

use crate::{ErrorKind, ImportError};
use std::cell::OnceCell;

/// One token, borrowing its text from the input (or from the decoded-string table).
#[derive(Copy, Clone, PartialEq, Debug)]
pub(crate) enum Tok<'a> {
    /// `%name`, `%"quoted"`, `%12`.
    Local(&'a str),
    /// `@name`, `@"quoted"`, `@12`.
    Global(&'a str),
    /// `name:`, `"quoted":`, `12:` (a block label).
    Label(&'a str),
    /// `!name`, `!12`, or a bare `!` (as in `!{` and `!"..."`): the part after `!`.
    Meta(&'a str),
    /// `#12`: an attribute-group reference.
    AttrRef(u32),
    /// A bare word: keyword, type name, attribute, `$comdat`, `#dbg_value`.
    Word(&'a str),
    /// A decimal integer literal.
    Int(i128),
    /// A decimal floating-point literal, as written.
    Float(f64),
    /// A hexadecimal floating-point literal `0x...`: the kind letter (`'\0'` for the plain
    /// double form, else `K`, `L`, `M`, `H`, `R`) and the low 64 bits of the digits.
    HexFloat(char, u64),
    /// `"..."` with escapes decoded.
    Str(&'a [u8]),
    /// `c"..."`: a byte-string constant.
    CStr(&'a [u8]),
    /// Punctuation: `= , ( ) [ ] { } < > * |`.
    Punct(u8),
    /// `...`.
    Ellipsis,
    /// `addrspace(N)*` written without spaces: the pointer suffix of a typed pointer
    /// (`i32 addrspace(1)*`), one token instead of five (see [`Kind::AddrSpacePtr`]).
    AddrSpacePtr(u32),
    /// End of input.
    Eof,
}

/// A token with its byte offset in the input (see [`Tokens::line_col`]).
#[derive(Copy, Clone, Debug)]
pub(crate) struct Token<'a> {
    pub tok: Tok<'a>,
    pub pos: u32,
}

/// What a [`Raw`] record is; its payload is described per kind.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
#[repr(u8)]
enum Kind {
    Local,
    Global,
    Label,
    Meta,
    Word,
    Str,
    CStr,
    /// `len` is the value (`0..=u32::MAX`).
    SmallInt,
    /// Any other integer: `len` bytes of text at `start`, parsed when read.
    Int,
    /// `len` bytes of text at `start`, parsed when read.
    Float,
    /// `len` bytes of text at `start`; `aux` is the kind letter (0 for plain).
    HexFloat,
    /// `len` is the group number.
    AttrRef,
    /// `aux` is the character.
    Punct,
    Ellipsis,
    /// `addrspace(N)*` with no space inside and `N` in canonical decimal of at most nine
    /// digits; `len` is `N`. Typed-pointer IR spells a pointer type this way about once
    /// per instruction: as five tokens it was a fifth of the records of such input.
    AddrSpacePtr,
    Eof,
}

/// `aux` bit of a text token whose text is `decoded[len]` instead of input bytes.
const DECODED: u8 = 0x80;

/// One token as the lexer makes it. For text kinds (names, words, strings) the text is
/// `len` bytes at `start + (aux & 3)` (the sigil and quote skipped), or, with the
/// [`DECODED`] bit, the decoded string `len`.
#[derive(Copy, Clone, Debug)]
struct Lexed {
    kind: Kind,
    aux: u8,
    start: u32,
    len: u32,
}

/// One token as stored: 8 bytes, a [`Lexed`] whose `len` (a length, a value or an
/// index) is cut to 16 bits. The records are a third of an import's peak memory, and
/// almost every payload fits; a larger one is [`WIDE`] here and kept in
/// [`Tokens::wide`] under the token's start (every token starts at its own byte).
#[derive(Copy, Clone, Debug)]
struct Raw {
    start: u32,
    kind: Kind,
    aux: u8,
    len: u16,
}

/// [`Raw::len`] of a token whose payload is in [`Tokens::wide`].
const WIDE: u16 = u16::MAX;

/// The tokens of one input; the last one is [`Tok::Eof`].
#[derive(Debug)]
pub(crate) struct Tokens<'a> {
    src: &'a str,
    raw: Vec<Raw>,
    /// Quoted strings with escapes, decoded (names as valid UTF-8).
    decoded: Vec<Box<[u8]>>,
    /// Byte offset of the start of every line (line 1 starts at 0), made by the first
    /// [`Tokens::line_col`]: only errors need it, and a table of every line cost a
    /// push per line and 4 bytes per line for every import.
    line_starts: OnceCell<Vec<u32>>,
    /// Every top-level `{ ... }` group (function bodies), counted while lexing so that
    /// lowering need not scan a body twice.
    groups: Vec<Group>,
    /// `(start, payload)` of every token whose payload does not fit its record, in
    /// input order.
    wide: Vec<(u32, u32)>,
}

/// A top-level brace group: its `{` token, its matching `}` token ([`NO_CLOSE`] while
/// unterminated), and the `%name =` definitions and labels in it (what
/// [`Tokens::count_defs`] returns).
#[derive(Copy, Clone, Debug)]
struct Group {
    open: u32,
    close: u32,
    defs: u32,
    labels: u32,
}

/// [`Group::close`] of a group without its `}`.
const NO_CLOSE: u32 = u32::MAX;

impl<'a> Tokens<'a> {
    /// Number of tokens, `Eof` included.
    pub fn len(&self) -> usize {
        self.raw.len()
    }

    /// Byte offset of token `i`.
    #[cfg(test)]
    pub fn pos(&self, i: usize) -> u32 {
        self.raw[i].start
    }

    /// Token `i` with its position.
    #[inline]
    pub fn get(&self, i: usize) -> Token<'_> {
        Token {
            tok: self.tok(i),
            pos: self.raw[i].start,
        }
    }

    /// The payload of `r` (see [`Lexed`]).
    #[inline(always)]
    fn payload(&self, r: &Raw) -> u32 {
        if r.len != WIDE {
            u32::from(r.len)
        } else {
            self.wide_len(r.start)
        }
    }

    #[cold]
    fn wide_len(&self, start: u32) -> u32 {
        match self.wide.binary_search_by_key(&start, |&(s, _)| s) {
            Ok(k) => self.wide[k].1,
            Err(_) => 0,
        }
    }

    #[inline]
    fn text(&self, r: &Raw) -> &[u8] {
        if r.aux & DECODED != 0 {
            &self.decoded[self.payload(r) as usize]
        } else {
            let s = r.start as usize + (r.aux & 3) as usize;
            &self.src.as_bytes()[s..s + self.payload(r) as usize]
        }
    }

    #[inline(always)]
    fn text_str(&self, r: &Raw) -> &str {
        if r.aux & DECODED != 0 {
            // Decoded names were made valid UTF-8 by the lexer.
            std::str::from_utf8(&self.decoded[self.payload(r) as usize]).unwrap_or("")
        } else {
            let s = r.start as usize + (r.aux & 3) as usize;
            self.src.get(s..s + self.payload(r) as usize).unwrap_or("")
        }
    }

    /// The text of a number token (`aux` is not an offset there).
    fn number_text(&self, r: &Raw) -> &str {
        let s = r.start as usize;
        self.src.get(s..s + self.payload(r) as usize).unwrap_or("")
    }

    /// The punctuation character of token `i`, if it is one (without decoding it).
    #[inline]
    pub fn punct(&self, i: usize) -> Option<u8> {
        let r = &self.raw[i];
        (r.kind == Kind::Punct).then_some(r.aux)
    }

    /// The text of token `i` if it is a [`Tok::Word`] (without decoding anything else).
    #[inline]
    pub fn word(&self, i: usize) -> Option<&str> {
        let r = &self.raw[i];
        (r.kind == Kind::Word).then(|| self.text_str(r))
    }

    /// The bytes of token `i` if it is a [`Tok::Word`]: [`Tokens::word`] without the
    /// `str` slicing, for callers that compare bytes.
    #[inline]
    pub fn word_bytes(&self, i: usize) -> Option<&[u8]> {
        let r = &self.raw[i];
        (r.kind == Kind::Word).then(|| self.text(r))
    }

    /// The name of token `i` if it is a [`Tok::Local`] (without decoding anything else).
    #[inline]
    pub fn local(&self, i: usize) -> Option<&str> {
        let r = &self.raw[i];
        (r.kind == Kind::Local).then(|| self.text_str(r))
    }

    /// The value of token `i` if it is an integer literal below 2^32 (most are), without
    /// building a [`Tok`].
    #[inline]
    pub fn small_int(&self, i: usize) -> Option<u32> {
        let r = &self.raw[i];
        (r.kind == Kind::SmallInt).then(|| self.payload(r))
    }

    /// The address space of token `i` if it is a fused `addrspace(N)*`
    /// ([`Tok::AddrSpacePtr`]), without building a [`Tok`].
    #[inline]
    pub fn addrspace_ptr(&self, i: usize) -> Option<u32> {
        let r = &self.raw[i];
        (r.kind == Kind::AddrSpacePtr).then(|| self.payload(r))
    }

    /// Byte offset just past token `i`'s last byte, for a fused `addrspace(N)*`: where
    /// its `*` is (errors about the `*` point there, as they did at the `*` token).
    pub fn addrspace_star_pos(&self, i: usize) -> u32 {
        let r = &self.raw[i];
        let digits = self.payload(r).checked_ilog10().unwrap_or(0) + 1;
        r.start + 11 + digits
    }

    /// Is token `i` a label (`name:`)?
    #[inline]
    pub fn is_label(&self, i: usize) -> bool {
        self.raw[i].kind == Kind::Label
    }

    /// Is token `i` the end of input?
    #[inline]
    pub fn is_eof(&self, i: usize) -> bool {
        self.raw[i].kind == Kind::Eof
    }

    /// The index just past the `}` matching the `{` at `i`, or `None` if the input
    /// ends first. Looks at the records only: bodies are skipped without decoding.
    pub fn skip_braces(&self, i: usize) -> Option<usize> {
        // A function body is a top-level group whose end the lexer noted: no second
        // scan of its tokens (about 1% of an import).
        if let Ok(k) = self.groups.binary_search_by_key(&i, |g| g.open as usize) {
            let close = self.groups[k].close;
            if close != NO_CLOSE {
                return Some(close as usize + 1);
            }
        }
        self.scan_braces(i)
    }

    /// [`Tokens::skip_braces`] by scanning the records.
    fn scan_braces(&self, i: usize) -> Option<usize> {
        let mut depth = 0usize;
        for (j, r) in self.raw.iter().enumerate().skip(i) {
            match r.kind {
                Kind::Punct if r.aux == b'{' => depth += 1,
                Kind::Punct if r.aux == b'}' => {
                    depth -= 1;
                    if depth == 0 {
                        return Some(j + 1);
                    }
                }
                Kind::Eof => return None,
                _ => {}
            }
        }
        None
    }

    /// In the body whose `{` is token `open`: the number of `%name =` definitions and
    /// of labels, to size the name tables once instead of growing them.
    pub fn count_defs(&self, open: usize) -> (usize, usize) {
        // Counted by the lexer for every top-level group.
        if let Ok(k) = self.groups.binary_search_by_key(&open, |g| g.open as usize) {
            let g = self.groups[k];
            return (g.defs as usize, g.labels as usize);
        }
        self.scan_defs(open)
    }

    /// [`Tokens::count_defs`] by scanning the group's records.
    fn scan_defs(&self, open: usize) -> (usize, usize) {
        let end = self.skip_braces(open).unwrap_or(self.raw.len());
        let body = &self.raw[open.min(end)..end];
        let mut defs = 0;
        let mut labels = 0;
        for (k, r) in body.iter().enumerate() {
            match r.kind {
                Kind::Local => {
                    defs += usize::from(matches!(
                        body.get(k + 1),
                        Some(n) if n.kind == Kind::Punct && n.aux == b'='
                    ))
                }
                Kind::Label => labels += 1,
                _ => {}
            }
        }
        (defs, labels)
    }

    /// Token `i`.
    #[inline]
    pub fn tok(&self, i: usize) -> Tok<'_> {
        let r = &self.raw[i];
        match r.kind {
            Kind::Local => Tok::Local(self.text_str(r)),
            Kind::Global => Tok::Global(self.text_str(r)),
            Kind::Label => Tok::Label(self.text_str(r)),
            Kind::Meta => Tok::Meta(self.text_str(r)),
            Kind::Word => Tok::Word(self.text_str(r)),
            Kind::Str => Tok::Str(self.text(r)),
            Kind::CStr => Tok::CStr(self.text(r)),
            Kind::SmallInt => Tok::Int(i128::from(self.payload(r))),
            // The lexer checked that these parse.
            Kind::Int => Tok::Int(self.number_text(r).parse().unwrap_or(0)),
            Kind::Float => Tok::Float(self.number_text(r).parse().unwrap_or(0.0)),
            Kind::HexFloat => {
                let t = self.number_text(r).as_bytes();
                let digits = &t[2 + usize::from(r.aux != 0)..];
                Tok::HexFloat(char::from(r.aux), hex_low64(digits))
            }
            Kind::AttrRef => Tok::AttrRef(self.payload(r)),
            Kind::Punct => Tok::Punct(r.aux),
            Kind::Ellipsis => Tok::Ellipsis,
            Kind::AddrSpacePtr => Tok::AddrSpacePtr(self.payload(r)),
            Kind::Eof => Tok::Eof,
        }
    }

    /// The 1-based line and byte column of the byte offset `pos`.
    pub fn line_col(&self, pos: u32) -> (u32, u32) {
        // Every newline byte ends a line, in strings and comments too (as the lexer
        // counts them).
        let starts = self.line_starts.get_or_init(|| line_starts(self.src));
        line_col_in(starts, pos)
    }

    /// Do tokens `a <= b` start on the same line? (Linear in the bytes between them.)
    // `contains` is a `memchr` call: see below.
    #[allow(clippy::manual_contains)]
    pub fn same_line(&self, a: usize, b: usize) -> bool {
        let (pa, pb) = (self.raw[a].start as usize, self.raw[b].start as usize);
        // A few bytes apart as a rule: a plain loop, not a `memchr` call (whose setup
        // cost more than the scan, once per instruction).
        pa >= pb || !self.src.as_bytes()[pa..pb].iter().any(|&c| c == b'\n')
    }
}

/// The byte offset of the start of every line of `src` (line 1 starts at 0). Every
/// newline byte ends a line, in strings and comments too, as the lexer counts them.
pub(crate) fn line_starts(src: &str) -> Vec<u32> {
    std::iter::once(0)
        .chain(
            src.bytes()
                .enumerate()
                .filter(|&(_, c)| c == b'\n')
                .map(|(i, _)| i as u32 + 1),
        )
        .collect()
}

/// The 1-based line and byte column of the byte offset `pos`, given [`line_starts`].
pub(crate) fn line_col_in(starts: &[u32], pos: u32) -> (u32, u32) {
    let line = starts.partition_point(|&s| s <= pos).max(1);
    (line as u32, pos - starts[line - 1] + 1)
}

/// The low 64 bits of hexadecimal digits.
fn hex_low64(digits: &[u8]) -> u64 {
    digits.iter().fold(0u64, |v, &c| {
        (v << 4) | (c as char).to_digit(16).unwrap_or(0) as u64
    })
}

/// Bytes of an identifier run, as a table: the lexer tests every byte of every name and
/// word, and a load beats the chain of range comparisons.
static IDENT: [bool; 256] = {
    let mut t = [false; 256];
    let mut c = 0;
    while c < 256 {
        let b = c as u8;
        t[c] = b.is_ascii_alphanumeric() || matches!(b, b'-' | b'$' | b'.' | b'_');
        c += 1;
    }
    t
};

#[inline]
fn is_ident_byte(c: u8) -> bool {
    IDENT[c as usize]
}

struct Lexer<'a> {
    src: &'a [u8],
    pos: usize,
    line: u32,
    line_start: usize,
    decoded: Vec<Box<[u8]>>,
}

/// A quoted string: where its text is (`aux`, `len` of a [`Raw`]).
struct Quoted {
    aux: u8,
    len: u32,
    /// The decoded bytes, for a string with escapes (not yet in the table).
    bytes: Option<Vec<u8>>,
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

    fn newline(&mut self, after: usize) {
        self.line += 1;
        self.line_start = after;
    }

    #[inline]
    fn ident_run(&mut self) -> usize {
        let (src, start) = (self.src, self.pos);
        let mut p = start;
        // Eight bytes at a time: a mask of which are identifier bytes, and its first
        // zero. Almost every name and word ends within eight bytes, found without a
        // branch per byte (the exit of a byte loop mispredicted once per token: a
        // quarter of the lexer's time).
        while let Some(chunk) = src.get(p..).and_then(<[u8]>::first_chunk::<8>) {
            let mut m = 0u32;
            for (k, &c) in chunk.iter().enumerate() {
                m |= u32::from(IDENT[c as usize]) << k;
            }
            let n = (!m).trailing_zeros() as usize;
            p += n;
            if n < 8 {
                self.pos = p;
                return p - start;
            }
        }
        while p < src.len() && is_ident_byte(src[p]) {
            p += 1;
        }
        self.pos = p;
        p - start
    }

    /// After the word `addrspace`, at its `(`: if `(N)*` follows with no space, `N` in
    /// canonical decimal of one to nine digits, the value of `N` with the position moved
    /// past the `*`. Otherwise nothing moves (the word stays a word).
    #[inline]
    fn addrspace_ptr(&mut self) -> Option<u32> {
        let rest = self.src.get(self.pos + 1..)?;
        let digits = rest
            .iter()
            .take(10)
            .take_while(|c| c.is_ascii_digit())
            .count();
        if digits == 0 || digits > 9 || (digits > 1 && rest[0] == b'0') {
            return None;
        }
        if rest.get(digits..digits + 2) != Some(&b")*"[..]) {
            return None;
        }
        let n = rest[..digits]
            .iter()
            .fold(0u32, |v, &d| v * 10 + u32::from(d - b'0'));
        self.pos += 1 + digits + 2;
        Some(n)
    }

    /// A quoted string at `self.pos` (the opening quote), `off` bytes after the token
    /// start; escapes are `\\` and `\XX`. Without escapes (the usual case) it stays in
    /// the input.
    fn string(&mut self, off: u8) -> Result<Quoted, ImportError> {
        let start = self.pos;
        self.pos += 1;
        let body = self.pos;
        let mut i = body;
        while let Some(&c) = self.src.get(i) {
            match c {
                b'"' => {
                    self.pos = i + 1;
                    return Ok(Quoted {
                        aux: off + 1,
                        len: (i - body) as u32,
                        bytes: None,
                    });
                }
                b'\\' => break,
                // Strings may span lines; keep positions right.
                b'\n' => self.newline(i + 1),
                _ => {}
            }
            i += 1;
        }
        // Decode the rest; the newlines before `i` are counted already.
        let mut out = self.src[body..i].to_vec();
        self.pos = i;
        loop {
            let Some(&c) = self.src.get(self.pos) else {
                return Err(self.err(start, "unterminated string"));
            };
            self.pos += 1;
            match c {
                b'"' => {
                    return Ok(Quoted {
                        aux: DECODED,
                        len: 0,
                        bytes: Some(out),
                    })
                }
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
                    out.push(c);
                    self.newline(self.pos);
                }
                _ => out.push(c),
            }
        }
    }

    /// Store a quoted string's text: `(aux, len)` of its record. A name (`utf8`) with
    /// escapes is made valid UTF-8 as the text it names.
    fn quoted(&mut self, q: Quoted, utf8: bool) -> (u8, u32) {
        match q.bytes {
            None => (q.aux, q.len),
            Some(b) => {
                let b = if utf8 {
                    match String::from_utf8(b) {
                        Ok(s) => s.into_bytes(),
                        Err(e) => String::from_utf8_lossy(e.as_bytes())
                            .into_owned()
                            .into_bytes(),
                    }
                } else {
                    b
                };
                self.decoded.push(b.into_boxed_slice());
                (DECODED, (self.decoded.len() - 1) as u32)
            }
        }
    }

    /// The name after a `%`, `@` or `!` sigil at `start`: `(aux, len)`.
    fn sigil_name(&mut self, start: usize) -> Result<(u8, u32), ImportError> {
        if self.peek(0) == b'"' {
            let q = self.string(1)?;
            return Ok(self.quoted(q, true));
        }
        let n = self.ident_run();
        if n == 0 {
            return Err(self.err(start, "expected a name after sigil"));
        }
        Ok((1, n as u32))
    }

    fn number(&mut self, start: usize) -> Result<Lexed, ImportError> {
        let raw = |kind, aux, len| Lexed {
            kind,
            aux,
            start: start as u32,
            len,
        };
        if self.peek(0) == b'0' && self.peek(1) == b'x' {
            self.pos += 2;
            let kind = match self.peek(0) {
                k @ (b'K' | b'L' | b'M' | b'H' | b'R') => {
                    self.pos += 1;
                    k
                }
                _ => 0,
            };
            let digits_start = self.pos;
            while self.peek(0).is_ascii_hexdigit() {
                self.pos += 1;
            }
            if self.pos == digits_start {
                return Err(self.err(start, "malformed hexadecimal constant"));
            }
            return Ok(raw(Kind::HexFloat, kind, (self.pos - start) as u32));
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
        let bytes = &self.src[start..self.pos];
        let len = (self.pos - start) as u32;
        // Most integers are small and non-negative: keep the value, not the text (and
        // skip the UTF-8 check of the text, which is ASCII).
        if !is_float
            && !bytes.is_empty()
            && bytes.len() <= 9
            && bytes.iter().all(u8::is_ascii_digit)
        {
            let v = bytes
                .iter()
                .fold(0u32, |v, &d| v * 10 + u32::from(d - b'0'));
            return Ok(raw(Kind::SmallInt, 0, v));
        }
        let text = std::str::from_utf8(bytes).unwrap_or("");
        if is_float {
            text.parse::<f64>()
                .map(|_| raw(Kind::Float, 0, len))
                .map_err(|_| self.err(start, format!("malformed number `{text}`")))
        } else {
            text.parse::<i128>()
                .map(|_| raw(Kind::Int, 0, len))
                .map_err(|_| self.err(start, format!("integer literal `{text}` too large")))
        }
    }

    fn next(&mut self) -> Result<Lexed, ImportError> {
        // Skip whitespace and comments, with the position in a local (a quarter of the
        // input is indentation).
        let src = self.src;
        let mut p = self.pos;
        while let Some(&c) = src.get(p) {
            match c {
                b' ' | b'\t' | b'\r' | 0x0c => p += 1,
                b'\n' => {
                    p += 1;
                    self.newline(p);
                }
                b';' => {
                    let rest = &src[p..];
                    p += rest.iter().position(|&c| c == b'\n').unwrap_or(rest.len());
                }
                _ => break,
            }
        }
        self.pos = p;
        let start = self.pos;
        let mk = |kind, aux, len| Lexed {
            kind,
            aux,
            start: start as u32,
            len,
        };
        if self.pos >= self.src.len() {
            return Ok(mk(Kind::Eof, 0, 0));
        }
        let c = self.src[self.pos];
        let raw = match c {
            b'%' | b'@' | b'!' => {
                self.pos += 1;
                let kind = match c {
                    b'%' => Kind::Local,
                    b'@' => Kind::Global,
                    _ => Kind::Meta,
                };
                if c == b'!' && !(is_ident_byte(self.peek(0)) || self.peek(0) == b'\\') {
                    mk(Kind::Meta, 1, 0)
                } else {
                    let (aux, len) = self.sigil_name(start)?;
                    mk(kind, aux, len)
                }
            }
            b'#' if self.peek(1).is_ascii_alphabetic() => {
                // `#dbg_value(...)` debug records: the word includes the `#`.
                self.pos += 1;
                self.ident_run();
                mk(Kind::Word, 0, (self.pos - start) as u32)
            }
            b'#' => {
                self.pos += 1;
                let n = self.ident_run();
                let n = std::str::from_utf8(&self.src[self.pos - n..self.pos])
                    .ok()
                    .and_then(|s| s.parse::<u32>().ok())
                    .ok_or_else(|| self.err(start, "malformed attribute group reference"))?;
                mk(Kind::AttrRef, 0, n)
            }
            b'"' => {
                let q = self.string(0)?;
                if self.peek(0) == b':' {
                    self.pos += 1;
                    let (aux, len) = self.quoted(q, true);
                    mk(Kind::Label, aux, len)
                } else {
                    let (aux, len) = self.quoted(q, false);
                    mk(Kind::Str, aux, len)
                }
            }
            b'.' if self.peek(1) == b'.' && self.peek(2) == b'.' => {
                self.pos += 3;
                mk(Kind::Ellipsis, 0, 0)
            }
            b'=' | b',' | b'(' | b')' | b'[' | b']' | b'{' | b'}' | b'<' | b'>' | b'*' | b'|' => {
                self.pos += 1;
                mk(Kind::Punct, c, 0)
            }
            b'c' if self.peek(1) == b'"' => {
                self.pos += 1;
                let q = self.string(1)?;
                let (aux, len) = self.quoted(q, false);
                mk(Kind::CStr, aux, len)
            }
            _ if c.is_ascii_digit()
                || ((c == b'-' || c == b'+') && self.peek(1).is_ascii_digit()) =>
            {
                // A numbered label (`12:`) or a number.
                let n = self.ident_run();
                let run = &self.src[start..start + n];
                if n != 0 && self.peek(0) == b':' && run.iter().all(|b| b.is_ascii_digit()) {
                    self.pos += 1;
                    mk(Kind::Label, 0, n as u32)
                } else {
                    self.pos = start;
                    self.number(start)?
                }
            }
            _ if is_ident_byte(c) => {
                let n = self.ident_run() as u32;
                if self.peek(0) == b':' {
                    self.pos += 1;
                    mk(Kind::Label, 0, n)
                } else if n == 9
                    && self.peek(0) == b'('
                    && &self.src[start..self.pos] == b"addrspace"
                {
                    match self.addrspace_ptr() {
                        Some(space) => mk(Kind::AddrSpacePtr, 0, space),
                        None => mk(Kind::Word, 0, n),
                    }
                } else {
                    mk(Kind::Word, 0, n)
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
        Ok(raw)
    }
}

/// Split `src` into tokens; the last one is [`Tok::Eof`]. `src` is at most 4 GiB (the
/// records hold 32-bit offsets); a longer input is an error.
pub(crate) fn lex(src: &str) -> Result<Tokens<'_>, ImportError> {
    if u32::try_from(src.len()).is_err() {
        return Err(ImportError {
            line: 1,
            col: 1,
            kind: ErrorKind::Parse,
            message: "input larger than 4 GiB".into(),
        });
    }
    let mut lx = Lexer {
        src: src.as_bytes(),
        // A byte-order mark is not part of the text.
        pos: if src.starts_with('\u{feff}') { 3 } else { 0 },
        line: 1,
        line_start: 0,
        decoded: Vec::new(),
    };
    // About one token per 5 bytes of clang's and the generators' output.
    let mut raw: Vec<Raw> = Vec::with_capacity(src.len() / 5 + 16);
    let mut groups: Vec<Group> = Vec::new();
    let mut wide: Vec<(u32, u32)> = Vec::new();
    let mut depth = 0u32;
    loop {
        let t = lx.next()?;
        match t.kind {
            Kind::Punct if t.aux == b'{' => {
                if depth == 0 {
                    groups.push(Group {
                        open: raw.len() as u32,
                        close: NO_CLOSE,
                        defs: 0,
                        labels: 0,
                    });
                }
                depth += 1;
            }
            Kind::Punct if t.aux == b'}' => {
                if depth == 1 {
                    if let Some(g) = groups.last_mut() {
                        g.close = raw.len() as u32;
                    }
                }
                depth = depth.saturating_sub(1);
            }
            Kind::Punct if t.aux == b'=' && depth > 0 => {
                if let (Some(g), Some(Kind::Local)) =
                    (groups.last_mut(), raw.last().map(|r| r.kind))
                {
                    g.defs += 1;
                }
            }
            Kind::Label if depth > 0 => {
                if let Some(g) = groups.last_mut() {
                    g.labels += 1;
                }
            }
            Kind::Eof => {
                push(&mut raw, &mut wide, t);
                raw.shrink_to_fit();
                return Ok(Tokens {
                    src,
                    raw,
                    decoded: lx.decoded,
                    line_starts: OnceCell::new(),
                    groups,
                    wide,
                });
            }
            _ => {}
        }
        push(&mut raw, &mut wide, t);
    }
}

/// Store `t` as an 8-byte record (its payload in `wide` if it does not fit).
#[inline]
fn push(raw: &mut Vec<Raw>, wide: &mut Vec<(u32, u32)>, t: Lexed) {
    let len = match u16::try_from(t.len) {
        Ok(l) if l != WIDE => l,
        _ => {
            wide.push((t.start, t.len));
            WIDE
        }
    };
    raw.push(Raw {
        start: t.start,
        kind: t.kind,
        aux: t.aux,
        len,
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toks(s: &str) -> Vec<Tok<'_>> {
        let t = lex(s).unwrap();
        // The tokens borrow from `t`; leaked so they can be returned.
        let t: &Tokens<'_> = Box::leak(Box::new(t));
        (0..t.len()).map(|i| t.tok(i)).collect()
    }

    #[test]
    fn basic_tokens() {
        assert_eq!(
            toks("%x = add nsw i32 %0, -5 ; c\nbb.1:"),
            vec![
                Tok::Local("x"),
                Tok::Punct(b'='),
                Tok::Word("add"),
                Tok::Word("nsw"),
                Tok::Word("i32"),
                Tok::Local("0"),
                Tok::Punct(b','),
                Tok::Int(-5),
                Tok::Label("bb.1"),
                Tok::Eof
            ]
        );
        assert_eq!(
            toks("12: 1.5e+3 0x3FF0000000000000 !dbg !{ #3 c\"a\\00\" ..."),
            vec![
                Tok::Label("12"),
                Tok::Float(1500.0),
                Tok::HexFloat('\0', 0x3FF0000000000000),
                Tok::Meta("dbg"),
                Tok::Meta(""),
                Tok::Punct(b'{'),
                Tok::AttrRef(3),
                Tok::CStr(&[b'a', 0]),
                Tok::Ellipsis,
                Tok::Eof
            ]
        );
    }

    #[test]
    fn literals_and_quoted_names() {
        assert_eq!(
            toks("4294967295 4294967296 -0 0xK4000 @\"a\\22b\" %\"q r\" \"s\\\\t\": c\"\""),
            vec![
                Tok::Int(4294967295),
                Tok::Int(4294967296),
                Tok::Int(0),
                Tok::HexFloat('K', 0x4000),
                Tok::Global("a\"b"),
                Tok::Local("q r"),
                Tok::Label("s\\t"),
                Tok::CStr(&[]),
                Tok::Eof
            ]
        );
        assert_eq!(
            toks("170141183460469231731687303715884105727"),
            vec![Tok::Int(i128::MAX), Tok::Eof]
        );
        assert_eq!(
            toks("#dbg_value("),
            vec![Tok::Word("#dbg_value"), Tok::Punct(b'('), Tok::Eof]
        );
    }

    #[test]
    fn fused_addrspace_pointers() {
        use Tok::*;
        // Only the exact spelling fuses: no space inside, canonical digits, then `*`.
        assert_eq!(
            toks("i32 addrspace(1)* addrspace(0)** addrspace(01)* addrspace (1)* addrspace(1) * addrspace(7)"),
            vec![
                Word("i32"),
                AddrSpacePtr(1),
                AddrSpacePtr(0),
                Punct(b'*'),
                Word("addrspace"),
                Punct(b'('),
                Int(1),
                Punct(b')'),
                Punct(b'*'),
                Word("addrspace"),
                Punct(b'('),
                Int(1),
                Punct(b')'),
                Punct(b'*'),
                Word("addrspace"),
                Punct(b'('),
                Int(1),
                Punct(b')'),
                Punct(b'*'),
                Word("addrspace"),
                Punct(b'('),
                Int(7),
                Punct(b')'),
                Eof
            ]
        );
        assert_eq!(
            toks("addrspace(123456789)* addrspace(1234567890)*")[..2],
            [AddrSpacePtr(123_456_789), Word("addrspace")]
        );
        // Errors about the `*` point where it is.
        let t = lex("  addrspace(0)* addrspace(42)*").unwrap();
        assert_eq!(t.addrspace_star_pos(0), 14);
        assert_eq!(t.addrspace_star_pos(1), 29);
        assert_eq!(t.addrspace_ptr(1), Some(42));
        // A module reads the same with its pointer types fused or spelled apart.
        let fused = "@g = internal addrspace(3) global [4 x i32] undef\n\
            !nvvm.annotations = !{!0}\n\
            !0 = !{void (float addrspace(1)*, i32 addrspace(3)**)* @k, !\"kernel\", i32 1}\n\
            define void @k(float addrspace(1)* %o, i32 addrspace(3)** %q) {\n\
            entry:\n\
              %p = getelementptr [4 x i32], [4 x i32] addrspace(3)* @g, i32 0, i32 1\n\
              %a = alloca ptr addrspace(1)*, align 8\n\
              %r = load i32 addrspace(3)*, i32 addrspace(3)** %q\n\
              %v = load i32, i32 addrspace(3)* %r\n\
              %f = sitofp i32 %v to float\n\
              store float %f, float addrspace(1)* %o\n\
              ret void\n\
            }\n";
        let apart = fused.replace(")*", ") *");
        assert_ne!(fused, apart);
        let a = crate::import_module(fused).expect("imports");
        let b = crate::import_module(&apart).expect("imports");
        assert_eq!(a.to_string(), b.to_string());
        assert_eq!(
            a.functions.values().next().map(|f| f.kind),
            Some(gyre_ir::FuncKind::Kernel)
        );
        // Where only `addrspace(N)` may be, the `*` is reported at its place.
        for src in [
            "@g = addrspace(3)* global i32 0\n",
            "define void @f() {\n  %a = alloca i32, addrspace(5)*\n  ret void\n}\n",
        ] {
            let e = crate::import_module(src).unwrap_err();
            let e2 = crate::import_module(&src.replace(")*", ") *")).unwrap_err();
            assert_eq!(e.first().line, e2.first().line, "{src}");
            let star = src
                .lines()
                .nth(e.first().line as usize - 1)
                .unwrap()
                .find('*')
                .unwrap();
            assert_eq!(e.first().col as usize, star + 1, "{src}: {e}");
        }
    }

    #[test]
    fn wide_payloads() {
        // Payloads above 16 bits live beside the records: long names and strings, large
        // small integers and group numbers, and the same tokens around them.
        let long = "n".repeat(70_000);
        let src =
            format!("%{long} 65534 65535 999999999 #70000 \"{long}\" c\"{long}\" x {long}: %a");
        let t = lex(&src).unwrap();
        assert!(t.wide.len() >= 6, "{}", t.wide.len());
        let got: Vec<Tok<'_>> = (0..t.len()).map(|i| t.tok(i)).collect();
        assert_eq!(
            got,
            vec![
                Tok::Local(&long),
                Tok::Int(65534),
                Tok::Int(65535),
                Tok::Int(999_999_999),
                Tok::AttrRef(70000),
                Tok::Str(long.as_bytes()),
                Tok::CStr(long.as_bytes()),
                Tok::Word("x"),
                Tok::Label(&long),
                Tok::Local("a"),
                Tok::Eof
            ]
        );
        assert_eq!(t.small_int(2), Some(65535));
        assert_eq!(t.local(0), Some(long.as_str()));
        assert_eq!(std::mem::size_of::<Raw>(), 8);
        // A string with escapes whose decoded index would be wide is found too.
        let many: String = (0..70_000)
            .map(|i| format!("\"a\\{:02x}\" ", i % 200 + 32))
            .collect();
        let t = lex(&many).unwrap();
        assert_eq!(t.tok(69_999), Tok::Str(&[b'a', (69_999 % 200 + 32) as u8]));
    }

    #[test]
    fn body_scans() {
        let t = lex("define void @f() {\nentry:\n  %a = add i32 1, 2\n  br label %x\nx:\n  \"q\":\n  %b = call i32 @g(i32 %a) [ \"b\"(i32 0) ]\n  ret void\n}\n@z = global i32 0").unwrap();
        let open = (0..t.len()).find(|&i| t.punct(i) == Some(b'{')).unwrap();
        assert_eq!(t.count_defs(open), (2, 3));
        let end = t.skip_braces(open).unwrap();
        assert_eq!(t.tok(end), Tok::Global("z"));
        assert_eq!(t.word(open - 4), Some("void"));
        assert_eq!(lex("{ { }").unwrap().skip_braces(0), None);
        // A group closed by a stray `}` after an unterminated one, and one after it.
        let t = lex("{ } } { { } x").unwrap();
        for i in [0, 3, 4] {
            assert_eq!(t.skip_braces(i), t.scan_braces(i), "group at {i}");
        }
        assert_eq!(t.skip_braces(0), Some(2));
        assert_eq!(t.skip_braces(3), None);
        // The lexer's counts are the scan's, nested braces included; a `{` that is not
        // at the top level is scanned.
        let src = "%T = type { i32 }\n@g = global %T { i32 1 }\ndefine void @f() {\n%a = add i32 1, 2\n%s = insertvalue { i32 } { i32 0 }, i32 %a, 0\nb:\n ret void\n}\ndefine void @h() {\n0:\n ret void\n}\n}";
        let t = lex(src).unwrap();
        let mut seen = 0;
        for i in 0..t.len() {
            if t.punct(i) == Some(b'{') {
                assert_eq!(t.count_defs(i), t.scan_defs(i), "group at {i}");
                assert_eq!(t.skip_braces(i), t.scan_braces(i), "group at {i}");
                seen += 1;
            }
        }
        assert_eq!(seen, 6);
        let f = (0..t.len()).find(|&i| t.word(i) == Some("define")).unwrap();
        let open = (f..t.len()).find(|&i| t.punct(i) == Some(b'{')).unwrap();
        assert_eq!(t.count_defs(open), (2, 1));
    }

    #[test]
    fn positions_and_errors() {
        let t = lex("a\n  %\"q r\"").unwrap();
        assert_eq!(t.line_col(t.pos(1)), (2, 3));
        assert_eq!(t.tok(1), Tok::Local("q r"));
        // A string spanning lines moves the next token's line.
        let t = lex("\"x\ny\" %a\n%b").unwrap();
        assert_eq!(t.line_col(t.pos(1)), (2, 4));
        assert!(!t.same_line(0, 1));
        assert!(!t.same_line(1, 2));
        assert!(lex("%a = %b").unwrap().same_line(0, 2));
        assert_eq!(t.line_col(t.pos(2)), (3, 1));
        // A byte-order mark counts in the first line's columns, as before.
        let t = lex("\u{feff}%x").unwrap();
        assert_eq!(t.line_col(t.pos(0)), (1, 4));
        let e = lex("\n  ~").unwrap_err();
        assert_eq!((e.line, e.col), (2, 3));
        assert!(lex("\"abc").is_err());
        assert!(lex("99999999999999999999999999999999999999999999").is_err());
    }
}
