//! Tokenizer for PTX text.

use crate::error::ParseError;

/// A lexical token kind.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Tok {
    /// Identifier, including `%`/`$`/`_` prefixed names.
    Ident(String),
    /// Directive or modifier: `.name` (stored without the dot).
    Dir(String),
    /// Integer literal (negation is handled by the parser).
    Int(u64),
    /// `0fXXXXXXXX` single-precision bit pattern.
    F32(u32),
    /// `0dXXXXXXXXXXXXXXXX` double-precision bit pattern.
    F64(u64),
    /// Decimal floating point literal.
    Float(f64),
    /// String literal.
    Str(String),
    /// Punctuation character.
    P(char),
    /// End of input.
    Eof,
}

/// A token with its 1-based source position.
#[derive(Clone, Debug)]
pub(crate) struct Token {
    pub tok: Tok,
    pub line: u32,
    pub col: u32,
}

fn is_ident_start(c: char) -> bool {
    c.is_ascii_alphabetic() || c == '_' || c == '$' || c == '%'
}

fn is_ident_cont(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '$'
}

/// Splits `src` into tokens. Always ends with [`Tok::Eof`].
pub(crate) fn lex(src: &str) -> Result<Vec<Token>, ParseError> {
    let chars: Vec<char> = src.chars().collect();
    let mut toks = Vec::new();
    let mut i = 0usize;
    let mut line = 1u32;
    let mut col = 1u32;
    // Advance helper is written inline to keep the borrow checker simple.
    macro_rules! bump {
        () => {{
            if chars[i] == '\n' {
                line = line.saturating_add(1);
                col = 1;
            } else {
                col = col.saturating_add(1);
            }
            i += 1;
        }};
    }
    while i < chars.len() {
        let c = chars[i];
        if c.is_whitespace() {
            bump!();
            continue;
        }
        if c == '/' && chars.get(i + 1) == Some(&'/') {
            while i < chars.len() && chars[i] != '\n' {
                bump!();
            }
            continue;
        }
        if c == '/' && chars.get(i + 1) == Some(&'*') {
            let (sl, sc) = (line, col);
            bump!();
            bump!();
            loop {
                if i >= chars.len() {
                    return Err(ParseError::new(sl, sc, "unterminated block comment"));
                }
                if chars[i] == '*' && chars.get(i + 1) == Some(&'/') {
                    bump!();
                    bump!();
                    break;
                }
                bump!();
            }
            continue;
        }
        let (tl, tc) = (line, col);
        if c == '.'
            && chars
                .get(i + 1)
                .is_some_and(|&n| n.is_ascii_alphabetic() || n == '_')
        {
            bump!();
            let start = i;
            loop {
                while i < chars.len() && is_ident_cont(chars[i]) {
                    bump!();
                }
                // Qualified modifiers such as `.shared::cta` or `.L1::no_allocate`.
                if chars.get(i) == Some(&':')
                    && chars.get(i + 1) == Some(&':')
                    && chars.get(i + 2).is_some_and(|&c| is_ident_cont(c))
                {
                    bump!();
                    bump!();
                    continue;
                }
                break;
            }
            let s: String = chars[start..i].iter().collect();
            toks.push(Token {
                tok: Tok::Dir(s),
                line: tl,
                col: tc,
            });
            continue;
        }
        if is_ident_start(c) {
            let start = i;
            bump!();
            while i < chars.len() && is_ident_cont(chars[i]) {
                bump!();
            }
            let s: String = chars[start..i].iter().collect();
            if s == "%" || s == "$" {
                return Err(ParseError::new(tl, tc, format!("invalid identifier '{s}'")));
            }
            toks.push(Token {
                tok: Tok::Ident(s),
                line: tl,
                col: tc,
            });
            continue;
        }
        if c.is_ascii_digit() {
            let start = i;
            while i < chars.len() && (chars[i].is_ascii_alphanumeric() || chars[i] == '_') {
                bump!();
            }
            let mut text: String = chars[start..i].iter().collect();
            let lower = text.to_ascii_lowercase();
            let is_prefixed = lower.len() > 1
                && lower.starts_with('0')
                && matches!(lower.as_bytes()[1], b'x' | b'f' | b'd' | b'b');
            if !is_prefixed {
                // Possibly a decimal float: digits '.' digits [e[+-]digits].
                let mut is_float = false;
                if i < chars.len()
                    && chars[i] == '.'
                    && chars.get(i + 1).is_some_and(|c| c.is_ascii_digit())
                    && text.chars().all(|c| c.is_ascii_digit())
                {
                    is_float = true;
                    bump!();
                    text.push('.');
                    while i < chars.len() && (chars[i].is_ascii_alphanumeric()) {
                        text.push(chars[i]);
                        bump!();
                    }
                }
                let t = text.to_ascii_lowercase();
                if (t.ends_with('e'))
                    && i < chars.len()
                    && (chars[i] == '+' || chars[i] == '-')
                    && chars.get(i + 1).is_some_and(|c| c.is_ascii_digit())
                {
                    is_float = true;
                    text.push(chars[i]);
                    bump!();
                    while i < chars.len() && chars[i].is_ascii_digit() {
                        text.push(chars[i]);
                        bump!();
                    }
                }
                if t.contains('e')
                    && t.chars()
                        .all(|c| c.is_ascii_digit() || c == 'e' || c == '.')
                {
                    is_float = true;
                }
                if is_float {
                    match text.parse::<f64>() {
                        Ok(v) => {
                            toks.push(Token {
                                tok: Tok::Float(v),
                                line: tl,
                                col: tc,
                            });
                            continue;
                        }
                        Err(_) => {
                            return Err(ParseError::new(
                                tl,
                                tc,
                                format!("invalid float literal '{text}'"),
                            ))
                        }
                    }
                }
            }
            let tok = parse_number(&text).ok_or_else(|| {
                ParseError::new(tl, tc, format!("invalid number literal '{text}'"))
            })?;
            toks.push(Token {
                tok,
                line: tl,
                col: tc,
            });
            continue;
        }
        if c == '"' {
            bump!();
            let start = i;
            while i < chars.len() && chars[i] != '"' && chars[i] != '\n' {
                bump!();
            }
            if i >= chars.len() || chars[i] != '"' {
                return Err(ParseError::new(tl, tc, "unterminated string literal"));
            }
            let s: String = chars[start..i].iter().collect();
            bump!();
            toks.push(Token {
                tok: Tok::Str(s),
                line: tl,
                col: tc,
            });
            continue;
        }
        if ",;:{}[]()<>+-@!|=*".contains(c) {
            bump!();
            toks.push(Token {
                tok: Tok::P(c),
                line: tl,
                col: tc,
            });
            continue;
        }
        return Err(ParseError::new(
            tl,
            tc,
            format!("unexpected character '{}'", c.escape_default()),
        ));
    }
    toks.push(Token {
        tok: Tok::Eof,
        line,
        col,
    });
    Ok(toks)
}

fn parse_number(text: &str) -> Option<Tok> {
    let t = text.strip_suffix(['U', 'u']).unwrap_or(text);
    let lower = t.to_ascii_lowercase();
    if let Some(h) = lower.strip_prefix("0x") {
        return u64::from_str_radix(h, 16).ok().map(Tok::Int);
    }
    if let Some(h) = text.to_ascii_lowercase().strip_prefix("0f") {
        if h.len() != 8 {
            return None;
        }
        return u32::from_str_radix(h, 16).ok().map(Tok::F32);
    }
    if let Some(h) = text.to_ascii_lowercase().strip_prefix("0d") {
        if h.len() != 16 {
            return None;
        }
        return u64::from_str_radix(h, 16).ok().map(Tok::F64);
    }
    if let Some(b) = lower.strip_prefix("0b") {
        return u64::from_str_radix(b, 2).ok().map(Tok::Int);
    }
    if lower.len() > 1 && lower.starts_with('0') {
        return u64::from_str_radix(&lower[1..], 8).ok().map(Tok::Int);
    }
    lower.parse::<u64>().ok().map(Tok::Int)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers() {
        let t = lex("0f3F800000 0d3FF0000000000000 0x10 010 12U 1.5 2e3 1.0e-2").unwrap();
        let k: Vec<Tok> = t.into_iter().map(|t| t.tok).collect();
        assert_eq!(
            k,
            vec![
                Tok::F32(0x3F80_0000),
                Tok::F64(0x3FF0_0000_0000_0000),
                Tok::Int(16),
                Tok::Int(8),
                Tok::Int(12),
                Tok::Float(1.5),
                Tok::Float(2000.0),
                Tok::Float(0.01),
                Tok::Eof
            ]
        );
    }

    #[test]
    fn idents_and_dirs() {
        let t = lex("ld.global.u32 %r1, [%rd1+-4]; // c\n$L__BB0_1: /* x */").unwrap();
        assert_eq!(t[0].tok, Tok::Ident("ld".into()));
        assert_eq!(t[1].tok, Tok::Dir("global".into()));
        assert!(t
            .iter()
            .any(|t| t.tok == Tok::Ident("$L__BB0_1".into()) && t.line == 2));
    }
}
