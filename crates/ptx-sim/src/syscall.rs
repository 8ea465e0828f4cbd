//! The PTX system calls `vprintf` and `__assertfail` (CUDA's device `printf` and
//! `assert`), called as body-less `.extern .func`s: C `printf` formatting.
//!
//! The formatter follows C99 §7.19.6.1 as glibc prints. It is a copy of the Gyre
//! interpreter's (`gyre-interp`'s `printf.rs`; this crate depends on nothing of Gyre's),
//! so comparing the two checks the back end's call sequence and argument buffer, not
//! the formatting, which the interpreter's unit tests check against glibc.
//!
//! The arguments come from a buffer laid out as CUDA's `vprintf` ABI packs them: in
//! order, each at an offset aligned to its size. `int`-sized conversions (`%d %i %u %o
//! %x %X %c` without a length, or with `h`/`hh`) read 4 bytes, `l`/`ll`/`j`/`z`/`t` 8 (a
//! `long` is 64-bit on NVPTX64), every floating conversion 8 (a `double`: C promotes
//! `float`), `%s` and `%p` an 8-byte pointer. `*` widths and precisions read an `int`.
//! `%n` is rejected (it would write memory).

/// Where the formatter gets its inputs from: the packed argument buffer and C strings.
pub(crate) trait Source<E> {
    /// The next argument of `size` (4 or 8) bytes, at the next offset aligned to it.
    fn arg(&mut self, size: u8) -> Result<u64, E>;
    /// The NUL-terminated string at generic address `addr`.
    fn string(&mut self, addr: u64) -> Result<Vec<u8>, E>;
    /// The error for a malformed format.
    fn bad(&self, reason: String) -> E;
}

#[derive(Default)]
struct Spec {
    left: bool,
    plus: bool,
    space: bool,
    alt: bool,
    zero: bool,
    width: usize,
    prec: Option<usize>,
}

/// Format `fmt` with the arguments of `src`; returns the text and the number of
/// arguments read.
pub(crate) fn format<E>(fmt: &[u8], src: &mut impl Source<E>) -> Result<(String, i32), E> {
    let mut out: Vec<u8> = Vec::new();
    let mut nargs = 0i32;
    let mut i = 0;
    while i < fmt.len() {
        let c = fmt[i];
        i += 1;
        if c != b'%' {
            out.push(c);
            continue;
        }
        let mut s = Spec::default();
        while i < fmt.len() {
            match fmt[i] {
                b'-' => s.left = true,
                b'+' => s.plus = true,
                b' ' => s.space = true,
                b'#' => s.alt = true,
                b'0' => s.zero = true,
                _ => break,
            }
            i += 1;
        }
        if fmt.get(i) == Some(&b'*') {
            i += 1;
            let w = src.arg(4)? as u32 as i32;
            nargs += 1;
            if w < 0 {
                s.left = true;
            }
            s.width = w.unsigned_abs() as usize;
        } else {
            while let Some(d @ b'0'..=b'9') = fmt.get(i) {
                s.width = s.width * 10 + usize::from(d - b'0');
                i += 1;
            }
        }
        if fmt.get(i) == Some(&b'.') {
            i += 1;
            if fmt.get(i) == Some(&b'*') {
                i += 1;
                let p = src.arg(4)? as u32 as i32;
                nargs += 1;
                s.prec = (p >= 0).then_some(p as usize);
            } else {
                let mut p = 0;
                while let Some(d @ b'0'..=b'9') = fmt.get(i) {
                    p = p * 10 + usize::from(d - b'0');
                    i += 1;
                }
                s.prec = Some(p);
            }
        }
        // Length modifier: only its size matters.
        let mut long = false;
        let mut short = 0;
        while let Some(&m) = fmt.get(i) {
            match m {
                b'l' | b'j' | b'z' | b't' | b'L' | b'q' => long = true,
                b'h' => short += 1,
                _ => break,
            }
            i += 1;
        }
        let Some(&conv) = fmt.get(i) else {
            return Err(src.bad("format ends inside a conversion".into()));
        };
        i += 1;
        let size = if long { 8 } else { 4 };
        let body: Vec<u8> = match conv {
            b'%' => {
                out.push(b'%');
                continue;
            }
            b'd' | b'i' => {
                let raw = src.arg(size)?;
                nargs += 1;
                let v = match (long, short) {
                    (true, _) => raw as i64,
                    (false, 1) => i64::from(raw as u16 as i16),
                    (false, 2..) => i64::from(raw as u8 as i8),
                    _ => i64::from(raw as u32 as i32),
                };
                let sign = if v < 0 {
                    "-"
                } else if s.plus {
                    "+"
                } else if s.space {
                    " "
                } else {
                    ""
                };
                let digits = int_digits(v.unsigned_abs().to_string(), s.prec);
                pad_num(&s, s.prec.is_none(), sign, "", &digits)
            }
            b'u' | b'o' | b'x' | b'X' => {
                let raw = src.arg(size)?;
                nargs += 1;
                let v = match (long, short) {
                    (true, _) => raw,
                    (false, 1) => u64::from(raw as u16),
                    (false, 2..) => u64::from(raw as u8),
                    _ => u64::from(raw as u32),
                };
                let text = match conv {
                    b'u' => v.to_string(),
                    b'o' => format!("{v:o}"),
                    b'x' => format!("{v:x}"),
                    _ => format!("{v:X}"),
                };
                let mut digits = int_digits(text, s.prec);
                if conv == b'o' && s.alt && !digits.starts_with('0') {
                    digits.insert(0, '0');
                }
                let prefix = match conv {
                    b'x' if s.alt && v != 0 => "0x",
                    b'X' if s.alt && v != 0 => "0X",
                    _ => "",
                };
                pad_num(&s, s.prec.is_none(), "", prefix, &digits)
            }
            b'c' => {
                let raw = src.arg(4)?;
                nargs += 1;
                pad(&s, vec![raw as u8])
            }
            b's' => {
                let p = src.arg(8)?;
                nargs += 1;
                let mut text = if p == 0 {
                    b"(null)".to_vec()
                } else {
                    src.string(p)?
                };
                if let Some(n) = s.prec {
                    text.truncate(n);
                }
                pad(&s, text)
            }
            b'p' => {
                let p = src.arg(8)?;
                nargs += 1;
                pad(&s, format!("0x{p:x}").into_bytes())
            }
            b'f' | b'F' | b'e' | b'E' | b'g' | b'G' | b'a' | b'A' => {
                let v = f64::from_bits(src.arg(8)?);
                nargs += 1;
                let sign = if v.is_sign_negative() {
                    "-"
                } else if s.plus {
                    "+"
                } else if s.space {
                    " "
                } else {
                    ""
                };
                let upper = conv.is_ascii_uppercase();
                let a = v.abs();
                if !a.is_finite() {
                    let t = match (a.is_nan(), upper) {
                        (true, false) => "nan",
                        (true, true) => "NAN",
                        (false, false) => "inf",
                        (false, true) => "INF",
                    };
                    pad_num(&s, false, sign, "", t)
                } else {
                    let text = match conv.to_ascii_lowercase() {
                        b'f' => fixed(a, s.prec.unwrap_or(6), s.alt),
                        b'e' => expo(a, s.prec.unwrap_or(6), s.alt),
                        b'g' => general(a, s.prec.unwrap_or(6), s.alt),
                        _ => hex_float(a, s.prec),
                    };
                    let text = if upper {
                        text.to_ascii_uppercase()
                    } else {
                        text
                    };
                    let (prefix, digits) = if conv.eq_ignore_ascii_case(&b'a') {
                        (if upper { "0X" } else { "0x" }, &text[2..])
                    } else {
                        ("", &text[..])
                    };
                    pad_num(&s, true, sign, prefix, digits)
                }
            }
            b'n' => return Err(src.bad("%n is not supported in device printf".into())),
            other => {
                return Err(src.bad(format!(
                    "unknown conversion `%{}`",
                    char::from(other).escape_default()
                )))
            }
        };
        out.extend(body);
    }
    Ok((String::from_utf8_lossy(&out).into_owned(), nargs))
}

/// Integer digits with C's precision: at least `prec` digits; precision 0 prints
/// nothing for 0.
fn int_digits(d: String, prec: Option<usize>) -> String {
    match prec {
        Some(0) if d == "0" => String::new(),
        Some(p) if d.len() < p => format!("{}{d}", "0".repeat(p - d.len())),
        _ => d,
    }
}

/// Pad to the width (spaces, left or right).
fn pad(s: &Spec, text: Vec<u8>) -> Vec<u8> {
    if text.len() >= s.width {
        return text;
    }
    let fill = vec![b' '; s.width - text.len()];
    if s.left {
        [text, fill].concat()
    } else {
        [fill, text].concat()
    }
}

/// Sign, prefix and digits padded to the width: zeros go after the sign and prefix (the
/// `0` flag, ignored with `-` and where C ignores it: `zero_ok` false for an integer
/// with a precision and for inf/NaN).
fn pad_num(s: &Spec, zero_ok: bool, sign: &str, prefix: &str, digits: &str) -> Vec<u8> {
    let len = sign.len() + prefix.len() + digits.len();
    let zero = s.zero && zero_ok && !s.left;
    if len >= s.width {
        return format!("{sign}{prefix}{digits}").into_bytes();
    }
    let n = s.width - len;
    let text = if s.left {
        format!("{sign}{prefix}{digits}{}", " ".repeat(n))
    } else if zero {
        format!("{sign}{prefix}{}{digits}", "0".repeat(n))
    } else {
        format!("{}{sign}{prefix}{digits}", " ".repeat(n))
    };
    text.into_bytes()
}

/// `%f` of a finite non-negative `a` (Rust's formatting is exact and rounds half to
/// even on the exact decimal value, as glibc does).
fn fixed(a: f64, prec: usize, alt: bool) -> String {
    let mut t = format!("{a:.prec$}");
    if alt && prec == 0 {
        t.push('.');
    }
    t
}

/// `%e`: `d.ddde±XX`, at least two exponent digits.
fn expo(a: f64, prec: usize, alt: bool) -> String {
    let t = format!("{a:.prec$e}");
    let (m, e) = t.split_once('e').expect("Rust's {:e} has an exponent");
    let e: i32 = e.parse().expect("exponent is an integer");
    let mut m = m.to_string();
    if alt && prec == 0 {
        m.push('.');
    }
    let sign = if e < 0 { '-' } else { '+' };
    format!("{m}e{sign}{:02}", e.unsigned_abs())
}

/// `%g`: `%e` or `%f` by the exponent, trailing zeros removed unless `#`.
fn general(a: f64, prec: usize, alt: bool) -> String {
    let p = prec.max(1);
    // The exponent `%e` would print at precision p - 1.
    let x: i32 = if a == 0.0 {
        0
    } else {
        let t = format!("{a:.*e}", p - 1);
        t.split_once('e').expect("exponent").1.parse().expect("int")
    };
    let mut t = if x < p as i32 && x >= -4 {
        fixed(a, (p as i32 - 1 - x) as usize, alt)
    } else {
        expo(a, p - 1, alt)
    };
    if !alt {
        let (m, e) = match t.find('e') {
            Some(k) => (t[..k].to_string(), t[k..].to_string()),
            None => (t.clone(), String::new()),
        };
        let m = if m.contains('.') {
            m.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            m
        };
        t = format!("{m}{e}");
    }
    t
}

/// `%a`: `0x1.hhhp±d` (exact without a precision; rounded to nearest even with one).
fn hex_float(a: f64, prec: Option<usize>) -> String {
    if a == 0.0 {
        return match prec {
            Some(p) if p > 0 => format!("0x0.{}p+0", "0".repeat(p)),
            _ => "0x0p+0".into(),
        };
    }
    let bits = a.to_bits();
    let mut e = ((bits >> 52) & 0x7ff) as i32;
    let mut m = bits & ((1 << 52) - 1);
    let mut lead = 1u64;
    if e == 0 {
        // Subnormal: glibc prints 0x0.hhh with the minimum exponent.
        lead = 0;
        e = 1;
    }
    let e = e - 1023;
    let mut digits = 13;
    if let Some(p) = prec.filter(|&p| p < 13) {
        let drop = 4 * (13 - p) as u32;
        let half = 1u64 << (drop - 1);
        let rest = m & ((1 << drop) - 1);
        m >>= drop;
        if rest > half || (rest == half && m & 1 == 1) {
            m += 1;
            if m >> (4 * p) != 0 {
                m &= (1 << (4 * p)) - 1;
                lead += 1;
            }
        }
        digits = p;
    }
    let mut h = if digits == 0 {
        String::new()
    } else {
        format!("{m:0digits$x}")
    };
    if prec.is_none() {
        h = h.trim_end_matches('0').to_string();
    } else if let Some(p) = prec.filter(|&p| p > 13) {
        h.push_str(&"0".repeat(p - 13));
    }
    let dot = if h.is_empty() { "" } else { "." };
    let sign = if e < 0 { '-' } else { '+' };
    format!("0x{lead}{dot}{h}p{sign}{}", e.unsigned_abs())
}
