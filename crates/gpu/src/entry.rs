//! The parameters of a PTX `.entry`, read from the PTX text, their layout in the
//! parameter buffer the driver copies to the device, and the marshalling of host
//! arguments into that buffer.
//!
//! The layout is the PTX ABI's for kernel parameters: in declaration order, each at the
//! next multiple of its alignment (a scalar's size, or an array's `.align`). The buffer is
//! passed to `cuLaunchKernel` whole (`CU_LAUNCH_PARAM_BUFFER_POINTER`), so the layout here
//! is exactly what the kernel reads with `ld.param`.

use crate::GpuError;

/// What a `.param` holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ParamKind {
    /// An unsigned, signed or untyped integer (`.u32`, `.s64`, `.b16`, ...).
    Int,
    /// A float (`.f16`, `.f32`, `.f64`).
    Float,
    /// A byte array (`.align 4 .b8 p[16]`): an aggregate passed by value.
    Array,
}

/// One parameter of an `.entry`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Param {
    /// Its name in the PTX.
    pub name: String,
    /// Its kind.
    pub kind: ParamKind,
    /// Its size in bytes.
    pub size: usize,
    /// Its alignment in bytes.
    pub align: usize,
    /// Its offset in the parameter buffer.
    pub offset: usize,
}

/// The parameters of one `.entry` and the size of their buffer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EntrySignature {
    /// The entry's name.
    pub name: String,
    /// Its parameters in order, with their offsets.
    pub params: Vec<Param>,
    /// Bytes of the parameter buffer (the end of the last parameter).
    pub size: usize,
}

/// A kernel argument from the host, before marshalling.
#[derive(Clone, Debug, PartialEq)]
pub enum KernelArg {
    /// An integer; its low bytes fill an integer parameter.
    Int(u64),
    /// An `f32` for an `.f32` or `.b32` parameter.
    F32(f32),
    /// An `f64` for an `.f64` or `.b64` parameter.
    F64(f64),
    /// A raw 64-bit address.
    Ptr(u64),
    /// The device address of buffer `.0` of the run plus a byte offset.
    Buffer(usize, u64),
    /// The bytes of an aggregate passed by value (an array parameter of that size).
    Bytes(Vec<u8>),
}

/// Strip `//` and `/* */` comments, which may sit inside a parameter list.
fn strip_comments(ptx: &str) -> String {
    let mut out = String::with_capacity(ptx.len());
    let mut rest = ptx;
    while !rest.is_empty() {
        match (rest.find("//"), rest.find("/*")) {
            (Some(l), b) if b.is_none_or(|b| l < b) => {
                out.push_str(&rest[..l]);
                rest = rest[l..].find('\n').map_or("", |e| &rest[l + e..]);
            }
            (_, Some(b)) => {
                out.push_str(&rest[..b]);
                out.push(' ');
                rest = rest[b + 2..]
                    .find("*/")
                    .map_or("", |e| &rest[b + 2 + e + 2..]);
            }
            _ => {
                out.push_str(rest);
                rest = "";
            }
        }
    }
    out
}

/// Is `c` part of a PTX identifier?
fn ident_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '$' | '%' | '.')
}

/// The names of every `.entry` in the PTX, in order.
pub fn entry_names(ptx: &str) -> Vec<String> {
    let text = strip_comments(ptx);
    let mut names = Vec::new();
    let mut rest = text.as_str();
    while let Some(at) = rest.find(".entry") {
        let after = &rest[at + ".entry".len()..];
        let starts_word = at == 0 || !ident_char(rest[..at].chars().next_back().unwrap_or(' '));
        if starts_word && after.starts_with(char::is_whitespace) {
            let name: String = after
                .trim_start()
                .chars()
                .take_while(|&c| ident_char(c) && c != '.')
                .collect();
            if !name.is_empty() {
                names.push(name);
            }
        }
        rest = after;
    }
    names
}

/// Size, alignment and kind of a PTX fundamental type (`.u32`, `.f64`, `.b8`, ...).
fn scalar(ty: &str) -> Option<(ParamKind, usize)> {
    let (kind, bits) = match ty.as_bytes().first()? {
        b'u' | b's' | b'b' => (ParamKind::Int, &ty[1..]),
        b'f' => (ParamKind::Float, &ty[1..]),
        _ => return None,
    };
    let size = match bits {
        "8" if kind == ParamKind::Int => 1,
        "16" => 2,
        "32" => 4,
        "64" => 8,
        _ => return None,
    };
    Some((kind, size))
}

/// Parse one parameter declaration: `.param .u64 p`, `.param .align 8 .b8 p[24]`, or with
/// the PTX 7 pointer attributes `.param .u64 .ptr .global .align 4 p`.
fn parse_param(decl: &str) -> Result<(String, ParamKind, usize, usize), String> {
    let mut words = decl.split_whitespace().peekable();
    if words.next() != Some(".param") {
        return Err(format!("`{decl}` is not a .param declaration"));
    }
    let mut align: Option<usize> = None;
    let mut ty: Option<(ParamKind, usize)> = None;
    let mut name: Option<&str> = None;
    while let Some(w) = words.next() {
        match w {
            ".align" => {
                let n = words
                    .next()
                    .and_then(|n| n.parse::<usize>().ok())
                    .filter(|n| n.is_power_of_two())
                    .ok_or_else(|| format!("`{decl}`: .align needs a power of two"))?;
                // After `.ptr`, `.align` is the pointee's, not the parameter's.
                if ty.is_none() {
                    align = Some(n);
                }
            }
            ".ptr" | ".global" | ".const" | ".shared" | ".local" => {}
            _ if w.starts_with('.') => {
                if ty.is_some() {
                    return Err(format!("`{decl}`: two types"));
                }
                ty = Some(scalar(&w[1..]).ok_or_else(|| format!("`{decl}`: unknown type {w}"))?);
            }
            _ => {
                if name.is_some() {
                    return Err(format!("`{decl}`: unexpected `{w}`"));
                }
                name = Some(w);
            }
        }
    }
    let (kind, elem) = ty.ok_or_else(|| format!("`{decl}`: no type"))?;
    let name = name.ok_or_else(|| format!("`{decl}`: no name"))?;
    match name.split_once('[') {
        Some((base, dim)) => {
            let count: usize = dim
                .strip_suffix(']')
                .and_then(|d| d.trim().parse().ok())
                .ok_or_else(|| format!("`{decl}`: bad array size"))?;
            Ok((
                base.to_string(),
                ParamKind::Array,
                count * elem,
                align.unwrap_or(elem),
            ))
        }
        None => Ok((
            name.to_string(),
            kind,
            elem,
            align.unwrap_or(elem).max(elem),
        )),
    }
}

/// The signature of entry `name` in the PTX text, with the parameters laid out.
pub fn entry_signature(ptx: &str, name: &str) -> Result<EntrySignature, GpuError> {
    let text = strip_comments(ptx);
    let bad = |m: String| GpuError::Signature {
        entry: name.to_string(),
        message: m,
    };
    let mut rest = text.as_str();
    let list = loop {
        let Some(at) = rest.find(".entry") else {
            return Err(GpuError::NoEntry {
                name: name.to_string(),
                available: entry_names(ptx),
            });
        };
        let after = rest[at + ".entry".len()..].trim_start();
        if let Some(tail) = after.strip_prefix(name) {
            let tail = tail.trim_start();
            if let Some(params) = tail.strip_prefix('(') {
                let end = params
                    .find(')')
                    .ok_or_else(|| bad("the parameter list does not end".into()))?;
                break &params[..end];
            }
            if tail.starts_with('{') || tail.starts_with('.') {
                break "";
            }
        }
        rest = &rest[at + ".entry".len()..];
    };
    let mut params = Vec::new();
    let mut offset = 0usize;
    for decl in list.split(',').map(str::trim).filter(|d| !d.is_empty()) {
        let (pname, kind, size, align) = parse_param(decl).map_err(bad)?;
        offset = offset.next_multiple_of(align);
        params.push(Param {
            name: pname,
            kind,
            size,
            align,
            offset,
        });
        offset += size;
    }
    Ok(EntrySignature {
        name: name.to_string(),
        params,
        size: offset,
    })
}

impl EntrySignature {
    /// The parameter buffer for `args`, one per parameter; `buffer_address(i)` is the
    /// device address of buffer `i` of the run (for [`KernelArg::Buffer`]).
    pub fn marshal(
        &self,
        args: &[KernelArg],
        buffer_address: impl Fn(usize) -> Option<u64>,
    ) -> Result<Vec<u8>, GpuError> {
        let bad = |m: String| GpuError::Arguments {
            entry: self.name.clone(),
            message: m,
        };
        if args.len() != self.params.len() {
            return Err(bad(format!(
                "{} arguments given, the entry has {} parameters",
                args.len(),
                self.params.len()
            )));
        }
        let mut out = vec![0u8; self.size];
        for (k, (p, a)) in self.params.iter().zip(args).enumerate() {
            let wrong = |what: &str| {
                bad(format!(
                    "parameter {k} ({}, {} bytes{}) cannot take {what}",
                    p.name,
                    p.size,
                    match p.kind {
                        ParamKind::Int => ", integer",
                        ParamKind::Float => ", float",
                        ParamKind::Array => ", by value",
                    }
                ))
            };
            let bytes: Vec<u8> = match (a, p.kind, p.size) {
                (KernelArg::Int(v), ParamKind::Int, n) => v.to_le_bytes()[..n].to_vec(),
                (KernelArg::Ptr(v), ParamKind::Int, 8) => v.to_le_bytes().to_vec(),
                (KernelArg::Buffer(i, off), ParamKind::Int, 8) => {
                    let base = buffer_address(*i).ok_or_else(|| bad(format!("no buffer {i}")))?;
                    base.wrapping_add(*off).to_le_bytes().to_vec()
                }
                // `.b32` is untyped: llc declares some float parameters so.
                (KernelArg::F32(v), ParamKind::Float, 4) => v.to_le_bytes().to_vec(),
                (KernelArg::F32(v), ParamKind::Int, 4) => v.to_bits().to_le_bytes().to_vec(),
                (KernelArg::F64(v), ParamKind::Float, 8) => v.to_le_bytes().to_vec(),
                (KernelArg::F64(v), ParamKind::Int, 8) => v.to_bits().to_le_bytes().to_vec(),
                (KernelArg::Bytes(b), ParamKind::Array, n) if b.len() == n => b.clone(),
                (KernelArg::Bytes(b), _, _) => return Err(wrong(&format!("{} bytes", b.len()))),
                (KernelArg::Int(v), _, _) => return Err(wrong(&format!("the integer {v}"))),
                (KernelArg::Ptr(v), _, _) => return Err(wrong(&format!("the address {v:#x}"))),
                (KernelArg::Buffer(i, _), _, _) => {
                    return Err(wrong(&format!("the address of buffer {i}")))
                }
                (KernelArg::F32(v), _, _) => return Err(wrong(&format!("the f32 {v}"))),
                (KernelArg::F64(v), _, _) => return Err(wrong(&format!("the f64 {v}"))),
            };
            out[p.offset..p.offset + p.size].copy_from_slice(&bytes);
        }
        Ok(out)
    }
}
