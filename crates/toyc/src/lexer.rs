//! The lexer: source text to tokens with positions. Never fails: a bad character is an
//! error in the [`Diagnostics`] and is skipped.

use crate::ast::Scalar;
use crate::diag::{Diagnostics, Pos};

/// A token's kind.
#[derive(Clone, PartialEq, Debug)]
pub enum Tok {
    /// A name or keyword.
    Ident(String),
    /// An integer literal, with its optional type suffix (`7u32`).
    Int(u64, Option<Scalar>),
    /// A float literal, with its optional type suffix (`1.5f64`).
    Float(f64, Option<Scalar>),
    /// Punctuation or an operator, as written (`+=`, `..`, `{`).
    Punct(&'static str),
    /// The end of the input.
    Eof,
}

/// A token and where it starts.
#[derive(Clone, PartialEq, Debug)]
pub struct Token {
    /// What.
    pub tok: Tok,
    /// Where.
    pub pos: Pos,
}

/// Operators and punctuation, longest first (the lexer takes the first that matches).
const PUNCTS: &[&str] = &[
    "<<=", ">>=", "..", "->", "==", "!=", "<=", ">=", "&&", "||", "<<", ">>", "+=", "-=", "*=",
    "/=", "%=", "&=", "|=", "^=", "+", "-", "*", "/", "%", "&", "|", "^", "!", "~", "<", ">", "=",
    "(", ")", "{", "}", "[", "]", ",", ";", ":", ".",
];

fn suffix(s: &str) -> Option<Scalar> {
    match s {
        "i32" => Some(Scalar::I32),
        "i64" => Some(Scalar::I64),
        "u32" => Some(Scalar::U32),
        "f32" => Some(Scalar::F32),
        "f64" => Some(Scalar::F64),
        _ => None,
    }
}

/// Split `src` into tokens (the last is [`Tok::Eof`]), recording lexical errors in `diags`.
pub fn lex(src: &str, diags: &mut Diagnostics) -> Vec<Token> {
    let bytes = src.as_bytes();
    let mut toks = Vec::new();
    let mut i = 0usize;
    let mut line = 1u32;
    let mut line_start = 0usize;
    // A byte-order mark is not part of the program (and not counted in columns).
    if src.starts_with('\u{feff}') {
        i = 3;
        line_start = 3;
    }
    // Columns are counted incrementally from the last position on the same line, so a
    // long line costs linear time, not quadratic.
    let mut cache = (0usize, 1u32);
    let mut pos_at = |i: usize, line: u32, line_start: usize| {
        if cache.0 < line_start || cache.0 > i {
            cache = (line_start, 1);
        }
        cache.1 += src[cache.0..i].chars().count() as u32;
        cache.0 = i;
        Pos {
            line,
            col: cache.1,
            offset: i as u32,
        }
    };
    while i < bytes.len() {
        let c = bytes[i];
        if c == b'\n' {
            i += 1;
            line += 1;
            line_start = i;
            continue;
        }
        if c == b' ' || c == b'\t' || c == b'\r' {
            i += 1;
            continue;
        }
        if src[i..].starts_with("//") {
            while i < bytes.len() && bytes[i] != b'\n' {
                i += 1;
            }
            continue;
        }
        if src[i..].starts_with("/*") {
            let start = pos_at(i, line, line_start);
            i += 2;
            let mut closed = false;
            while i < bytes.len() {
                if bytes[i..].starts_with(b"*/") {
                    i += 2;
                    closed = true;
                    break;
                }
                if bytes[i] == b'\n' {
                    line += 1;
                    line_start = i + 1;
                }
                i += 1;
            }
            if !closed {
                diags.error(start, "unterminated block comment");
            }
            continue;
        }
        let pos = pos_at(i, line, line_start);
        if c.is_ascii_alphabetic() || c == b'_' {
            let start = i;
            while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
                i += 1;
            }
            toks.push(Token {
                tok: Tok::Ident(src[start..i].to_string()),
                pos,
            });
            continue;
        }
        if c.is_ascii_digit() {
            let start = i;
            let hex = src[i..].starts_with("0x") || src[i..].starts_with("0X");
            if hex {
                i += 2;
            }
            while i < bytes.len() && (bytes[i].is_ascii_hexdigit() || bytes[i] == b'_') {
                // Decimal literals stop at an exponent or suffix letter (`1e5`, `2f32`).
                if !hex && !bytes[i].is_ascii_digit() && bytes[i] != b'_' {
                    break;
                }
                i += 1;
            }
            let mut is_float = false;
            // `1.5` is a float; `0..n` is a range, and `1.x` is not a number either.
            if !hex && i + 1 < bytes.len() && bytes[i] == b'.' && bytes[i + 1].is_ascii_digit() {
                is_float = true;
                i += 1;
                while i < bytes.len() && (bytes[i].is_ascii_digit() || bytes[i] == b'_') {
                    i += 1;
                }
            }
            if !hex && i < bytes.len() && (bytes[i] == b'e' || bytes[i] == b'E') {
                let mut j = i + 1;
                if j < bytes.len() && (bytes[j] == b'+' || bytes[j] == b'-') {
                    j += 1;
                }
                if j < bytes.len() && bytes[j].is_ascii_digit() {
                    is_float = true;
                    i = j;
                    while i < bytes.len() && bytes[i].is_ascii_digit() {
                        i += 1;
                    }
                }
            }
            let digits: String = src[start..i].chars().filter(|&c| c != '_').collect();
            // A suffix: letters and digits glued to the number.
            let sstart = i;
            while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
                i += 1;
            }
            let sfx_text = &src[sstart..i];
            let sfx = if sfx_text.is_empty() {
                None
            } else {
                match suffix(sfx_text) {
                    Some(s) => Some(s),
                    None => {
                        diags.error(
                            pos,
                            format!("unknown literal suffix `{sfx_text}` (use i32, i64, u32, f32 or f64)"),
                        );
                        None
                    }
                }
            };
            if is_float || sfx.is_some_and(Scalar::is_float) {
                if is_float && sfx.is_some_and(|s| !s.is_float()) {
                    diags.error(pos, "a float literal cannot have an integer suffix");
                }
                match digits.parse::<f64>() {
                    Ok(x) if !hex => toks.push(Token {
                        tok: Tok::Float(x, sfx.filter(|s| s.is_float())),
                        pos,
                    }),
                    _ => {
                        diags.error(pos, format!("malformed float literal `{digits}`"));
                        toks.push(Token {
                            tok: Tok::Float(0.0, None),
                            pos,
                        });
                    }
                }
            } else {
                let v = if hex {
                    u64::from_str_radix(&digits[2..], 16)
                } else {
                    digits.parse::<u64>()
                };
                match v {
                    Ok(v) => toks.push(Token {
                        tok: Tok::Int(v, sfx),
                        pos,
                    }),
                    Err(_) => {
                        diags.error(
                            pos,
                            format!("malformed or too large integer literal `{digits}`"),
                        );
                        toks.push(Token {
                            tok: Tok::Int(0, sfx),
                            pos,
                        });
                    }
                }
            }
            continue;
        }
        if let Some(p) = PUNCTS.iter().find(|p| src[i..].starts_with(**p)) {
            i += p.len();
            toks.push(Token {
                tok: Tok::Punct(p),
                pos,
            });
            continue;
        }
        let ch = src[i..].chars().next().unwrap_or('?');
        let shown = if ch.is_control() {
            format!("\\u{{{:x}}}", ch as u32)
        } else {
            ch.to_string()
        };
        diags.error(pos, format!("unexpected character `{shown}`"));
        i += ch.len_utf8();
    }
    toks.push(Token {
        tok: Tok::Eof,
        pos: pos_at(bytes.len(), line, line_start.min(bytes.len())),
    });
    toks
}
