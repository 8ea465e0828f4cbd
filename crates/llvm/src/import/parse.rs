//! The token cursor and the grammar pieces shared by module and body parsing: types,
//! constants, operands and attribute skipping.
//!
//! Types and constants nest; their parsers recurse with an explicit depth argument and
//! stop with an error at [`MAX_NESTING`], so no input can exhaust the stack.

use crate::lexer::{Tok, Token, Tokens};
use crate::types::{LType, Simple, TyId, Types};
use crate::{ErrorKind, ImportError};

/// Deepest nesting of types or constant expressions the parser accepts.
pub(crate) const MAX_NESTING: u32 = 48;

pub(crate) type PResult<T> = Result<T, ImportError>;

/// A cursor over the tokens; reading past the end keeps returning `Eof`.
pub(crate) struct Cur<'t> {
    pub toks: &'t Tokens<'t>,
    pub i: usize,
}

impl<'t> Cur<'t> {
    pub fn new(toks: &'t Tokens<'t>) -> Self {
        debug_assert!(matches!(toks.tok(toks.len() - 1), Tok::Eof));
        Cur { toks, i: 0 }
    }

    pub fn at(&self, i: usize) -> Token<'t> {
        self.toks.get(i.min(self.toks.len() - 1))
    }
    pub fn tok(&self) -> Token<'t> {
        self.at(self.i)
    }
    #[inline]
    pub fn peek(&self) -> Tok<'t> {
        self.toks.tok(self.i.min(self.toks.len() - 1))
    }
    pub fn peek_at(&self, off: usize) -> Tok<'t> {
        self.toks.tok((self.i + off).min(self.toks.len() - 1))
    }
    /// Move to the next token (staying on the final `Eof`). Decodes nothing.
    #[inline]
    pub fn bump(&mut self) {
        if self.i < self.toks.len() - 1 {
            self.i += 1;
        }
    }

    /// The name of the current token if it is a local (`%name`), without decoding
    /// anything else.
    #[inline]
    pub fn peek_local(&self) -> Option<&'t str> {
        self.toks.local(self.i.min(self.toks.len() - 1))
    }

    #[inline]
    pub fn is_punct(&self, c: u8) -> bool {
        self.toks.punct(self.i.min(self.toks.len() - 1)) == Some(c)
    }
    #[inline]
    pub fn is_word(&self, w: &str) -> bool {
        self.toks.word(self.i.min(self.toks.len() - 1)) == Some(w)
    }
    pub fn eat_punct(&mut self, c: u8) -> bool {
        let y = self.is_punct(c);
        if y {
            self.bump();
        }
        y
    }
    pub fn eat_word(&mut self, w: &str) -> bool {
        let y = self.is_word(w);
        if y {
            self.bump();
        }
        y
    }

    pub fn err_at(&self, t: Token<'_>, msg: impl Into<String>) -> ImportError {
        let (line, col) = self.toks.line_col(t.pos);
        ImportError {
            line,
            col,
            kind: ErrorKind::Parse,
            message: msg.into(),
        }
    }
    pub fn unsup_at(&self, t: Token<'_>, msg: impl Into<String>) -> ImportError {
        let (line, col) = self.toks.line_col(t.pos);
        ImportError {
            line,
            col,
            kind: ErrorKind::Unsupported,
            message: msg.into(),
        }
    }
    pub fn err(&self, msg: impl Into<String>) -> ImportError {
        self.err_at(self.tok(), msg)
    }
    pub fn unsup(&self, msg: impl Into<String>) -> ImportError {
        self.unsup_at(self.tok(), msg)
    }

    /// An error naming what was expected and what was found.
    pub fn expected(&self, what: &str) -> ImportError {
        self.err(format!("expected {what}, found {}", describe(self.peek())))
    }

    pub fn expect_punct(&mut self, c: u8) -> PResult<()> {
        if self.eat_punct(c) {
            Ok(())
        } else {
            Err(self.expected(&format!("`{}`", c as char)))
        }
    }
    pub fn expect_word(&mut self, w: &str) -> PResult<()> {
        if self.eat_word(w) {
            Ok(())
        } else {
            Err(self.expected(&format!("`{w}`")))
        }
    }
    pub fn expect_int(&mut self) -> PResult<i128> {
        if let Some(v) = self.toks.small_int(self.i.min(self.toks.len() - 1)) {
            self.bump();
            return Ok(i128::from(v));
        }
        match self.peek() {
            Tok::Int(v) => {
                self.bump();
                Ok(v)
            }
            _ => Err(self.expected("an integer")),
        }
    }
    pub fn expect_local(&mut self) -> PResult<&'t str> {
        match self.peek_local() {
            Some(n) => {
                self.bump();
                Ok(n)
            }
            None => Err(self.expected("a local name")),
        }
    }

    /// Skip one token, or a whole bracketed group if it opens one (iterative).
    pub fn skip_balanced(&mut self) -> PResult<()> {
        let start = self.i;
        let mut depth = 0usize;
        loop {
            // Records only: the skipped tokens are never decoded.
            let i = self.i.min(self.toks.len() - 1);
            match self.toks.punct(i) {
                Some(b'(' | b'[' | b'{') => depth += 1,
                Some(b')' | b']' | b'}') => {
                    if depth == 0 {
                        return Err(self.err("unbalanced bracket"));
                    }
                    depth -= 1
                }
                _ if self.toks.is_eof(i) => {
                    return Err(self.err_at(self.at(start), "unterminated bracket"))
                }
                _ => {}
            }
            self.bump();
            if depth == 0 {
                return Ok(());
            }
        }
    }

    /// Skip a metadata operand: `!5`, `!{...}`, `!"str"`, `!DILocation(...)`.
    pub fn skip_metadata_value(&mut self) -> PResult<()> {
        match self.peek() {
            Tok::Meta(n) => {
                let bare = n.is_empty();
                self.bump();
                if bare {
                    match self.peek() {
                        Tok::Str(_) => {
                            self.bump();
                        }
                        Tok::Punct(b'{') => self.skip_balanced()?,
                        _ => return Err(self.expected("metadata")),
                    }
                } else if self.is_punct(b'(') {
                    self.skip_balanced()?;
                }
                Ok(())
            }
            Tok::Word("distinct") => {
                self.bump();
                self.skip_metadata_value()
            }
            _ => Err(self.expected("metadata")),
        }
    }

    /// Skip `, !name !N` attachments after an instruction or global.
    pub fn skip_attachments(&mut self) -> PResult<()> {
        while self.is_punct(b',') && matches!(self.peek_at(1), Tok::Meta(n) if !n.is_empty()) {
            self.bump();
            self.bump();
            self.skip_metadata_value()?;
        }
        Ok(())
    }
}

/// A short description of a token for error messages.
pub(crate) fn describe(t: Tok<'_>) -> String {
    match t {
        Tok::Local(n) => format!("`%{n}`"),
        Tok::Global(n) => format!("`@{n}`"),
        Tok::Label(n) => format!("label `{n}:`"),
        Tok::Meta(n) => format!("`!{n}`"),
        Tok::AttrRef(n) => format!("`#{n}`"),
        Tok::Word(w) => format!("`{w}`"),
        Tok::Int(v) => format!("`{v}`"),
        Tok::Float(v) => format!("`{v}`"),
        Tok::HexFloat(..) => "a hexadecimal constant".into(),
        Tok::Str(_) => "a string".into(),
        Tok::CStr(_) => "a c-string".into(),
        Tok::Punct(c) => format!("`{}`", c as char),
        Tok::Ellipsis => "`...`".into(),
        // It starts with the word, which the unfused tokens described.
        Tok::AddrSpacePtr(_) => "`addrspace`".into(),
        Tok::Eof => "end of input".into(),
    }
}

/// Is `w` a primitive type keyword (`i32`, `float`, `ptr`, ...)?
pub(crate) fn is_type_word(w: &str) -> bool {
    matches!(
        w,
        "void"
            | "float"
            | "double"
            | "half"
            | "bfloat"
            | "fp128"
            | "x86_fp80"
            | "ppc_fp128"
            | "x86_mmx"
            | "x86_amx"
            | "ptr"
            | "label"
            | "metadata"
            | "token"
    ) || int_width(w).is_some()
}

fn int_width(w: &str) -> Option<u32> {
    int_width_bytes(w.as_bytes())
}

/// [`int_width`] of a word's bytes. At most 8 digits always fit: summed in place
/// instead of `str::parse` (every integer type of every instruction comes here).
#[inline]
fn int_width_bytes(w: &[u8]) -> Option<u32> {
    let d = w.strip_prefix(b"i")?;
    if d.is_empty() || d.len() > 8 || !d.iter().all(u8::is_ascii_digit) {
        return None;
    }
    Some(d.iter().fold(0u32, |n, &b| n * 10 + u32::from(b - b'0')))
}

/// Can this token start a type?
pub(crate) fn is_type_start(t: Tok<'_>) -> bool {
    match t {
        Tok::Word(w) => is_type_word(w),
        Tok::Local(_) => true,
        Tok::Punct(b'[' | b'{' | b'<') => true,
        _ => false,
    }
}

/// Parse `addrspace(N)` if present.
pub(crate) fn parse_opt_addrspace(c: &mut Cur) -> PResult<Option<u32>> {
    if let Some(n) = c.toks.addrspace_ptr(c.i.min(c.toks.len() - 1)) {
        // `addrspace(N)*` where only `addrspace(N)` may be: the `*` is unexpected, as
        // when it was a token of its own.
        return Err(c.err_at(
            Token {
                tok: Tok::Punct(b'*'),
                pos: c.toks.addrspace_star_pos(c.i),
            },
            format!("unexpected `*` after `addrspace({n})`"),
        ));
    }
    if !c.is_word("addrspace") {
        return Ok(None);
    }
    c.bump();
    c.expect_punct(b'(')?;
    let t = c.tok();
    let n = c.expect_int()?;
    c.expect_punct(b')')?;
    u32::try_from(n)
        .map(Some)
        .map_err(|_| c.err_at(t, "address space out of range"))
}

/// Parse a type.
pub(crate) fn parse_type(c: &mut Cur, ty: &mut Types) -> PResult<TyId> {
    parse_type_depth(c, ty, 0, true)
}

/// Parse a type but stop before a function-type suffix: the return type of a `call`
/// whose callee type is spelled out (`call i32 (i32, ...) @f(...)`).
pub(crate) fn parse_ret_type(c: &mut Cur, ty: &mut Types) -> PResult<TyId> {
    parse_type_depth(c, ty, 0, false)
}

fn parse_type_depth(c: &mut Cur, ty: &mut Types, depth: u32, fn_suffix: bool) -> PResult<TyId> {
    if depth > MAX_NESTING {
        return Err(c.unsup("type nesting too deep"));
    }
    // Most types are one word (`i32`, `float`, `ptr`), or a typed pointer
    // (`float addrspace(1)*`, `i8**`): read them from the records only, without building
    // tokens. Anything else (a function type, `ptr addrspace(N)`, malformed input) goes to
    // the general parser below, from the same token.
    if let Some((t, next)) = simple_type_at(c, c.i) {
        c.i = next;
        return Ok(ty.intern_simple(t));
    }
    let start = c.tok();
    let mut t = match c.peek() {
        Tok::Word(w) => {
            c.bump();
            match w {
                "void" => ty.intern(LType::Void),
                "float" => ty.intern(LType::Float),
                "double" => ty.intern(LType::Double),
                "ptr" => match c.toks.addrspace_ptr(c.i.min(c.toks.len() - 1)) {
                    // `ptr addrspace(N)*`: a pointer to an `addrspace(N)` pointer.
                    Some(n) => {
                        c.bump();
                        ty.intern(LType::Ptr(n));
                        ty.intern(LType::Ptr(0))
                    }
                    None => {
                        let n = parse_opt_addrspace(c)?.unwrap_or(0);
                        ty.intern(LType::Ptr(n))
                    }
                },
                "label" => ty.intern(LType::Label),
                "metadata" => ty.intern(LType::Metadata),
                "token" => ty.intern(LType::Token),
                "half" | "bfloat" | "fp128" | "x86_fp80" | "ppc_fp128" | "x86_mmx" | "x86_amx" => {
                    ty.intern(LType::OtherFloat(w.to_string()))
                }
                _ => match int_width(w) {
                    Some(n) if (1..=(1 << 23)).contains(&n) => ty.intern(LType::Int(n)),
                    _ => return Err(c.err_at(start, format!("expected a type, found `{w}`"))),
                },
            }
        }
        Tok::Local(n) => {
            let idx = ty.named(n);
            c.bump();
            ty.intern(LType::Named(idx))
        }
        Tok::Punct(b'[') => {
            c.bump();
            let n = c.expect_int()?;
            let n = u64::try_from(n).map_err(|_| c.err_at(start, "negative array length"))?;
            c.expect_word("x")?;
            let e = parse_type_depth(c, ty, depth + 1, true)?;
            c.expect_punct(b']')?;
            ty.intern(LType::Array(n, e))
        }
        Tok::Punct(b'{') => {
            c.bump();
            let f = parse_struct_fields(c, ty, depth)?;
            ty.intern(LType::Struct(f, false))
        }
        Tok::Punct(b'<') => {
            c.bump();
            if c.eat_punct(b'{') {
                let f = parse_struct_fields(c, ty, depth)?;
                c.expect_punct(b'>')?;
                ty.intern(LType::Struct(f, true))
            } else {
                // A vector: `<4 x i32>`, `<vscale x 2 x float>`.
                c.eat_word("vscale");
                c.eat_word("x");
                c.expect_int()?;
                c.expect_word("x")?;
                parse_type_depth(c, ty, depth + 1, true)?;
                c.expect_punct(b'>')?;
                ty.intern(LType::Vector)
            }
        }
        _ => return Err(c.expected("a type")),
    };
    // Suffixes: pointers to `t` and function types returning `t`.
    loop {
        if c.is_punct(b'*') {
            c.bump();
            t = ty.intern(LType::Ptr(0));
        } else if let Some(n) = c.toks.addrspace_ptr(c.i.min(c.toks.len() - 1)) {
            c.bump();
            t = ty.intern(LType::Ptr(n));
        } else if c.is_word("addrspace") && matches!(c.peek_at(4), Tok::Punct(b'*')) {
            let n = parse_opt_addrspace(c)?.unwrap_or(0);
            c.expect_punct(b'*')?;
            t = ty.intern(LType::Ptr(n));
        } else if fn_suffix
            && c.is_punct(b'(')
            && matches!(
                ty.get(t),
                LType::Void
                    | LType::Int(_)
                    | LType::Float
                    | LType::Double
                    | LType::Ptr(_)
                    | LType::Struct(..)
                    | LType::Named(_)
                    | LType::OtherFloat(_)
            )
            && looks_like_fn_type(c)
        {
            c.bump();
            let mut first = true;
            while !c.is_punct(b')') {
                if !first {
                    c.expect_punct(b',')?;
                }
                first = false;
                if c.is_punct(b')') {
                    break;
                }
                if matches!(c.peek(), Tok::Ellipsis) {
                    c.bump();
                    continue;
                }
                parse_type_depth(c, ty, depth + 1, true)?;
                skip_param_attrs(c, ty)?;
            }
            c.expect_punct(b')')?;
            t = ty.intern(LType::Func);
        } else {
            return Ok(t);
        }
    }
}

/// The type at token `i` and the token after it, if it is a [`simple_type`] word with
/// only `*` and `addrspace(N)*` suffixes after it.
#[inline]
fn simple_type_at(c: &Cur, i: usize) -> Option<(Simple, usize)> {
    let toks = c.toks;
    let last = toks.len() - 1;
    let w = toks.word_bytes(i.min(last))?;
    let mut t = simple_type(w)?;
    let mut j = i + 1;
    loop {
        let k = j.min(last);
        match toks.punct(k) {
            Some(b'*') => {
                t = Simple::Ptr(0);
                j += 1;
            }
            // A function type.
            Some(b'(') => return None,
            Some(_) => return Some((t, j)),
            None if toks.addrspace_ptr(k).is_some() => {
                // `ptr addrspace(N)*`: the general parser reads it.
                if j == i + 1 && w == b"ptr" {
                    return None;
                }
                t = Simple::Ptr(toks.addrspace_ptr(k)?);
                j += 1;
            }
            None if toks.word_bytes(k) == Some(&b"addrspace"[..]) => {
                // `ptr addrspace(N)` is the pointer itself, not a suffix.
                if j == i + 1 && w == b"ptr" {
                    return None;
                }
                let n = toks.small_int((j + 2).min(last))?;
                let shape = toks.punct((j + 1).min(last)) == Some(b'(')
                    && toks.punct((j + 3).min(last)) == Some(b')')
                    && toks.punct((j + 4).min(last)) == Some(b'*');
                if !shape {
                    return None;
                }
                t = Simple::Ptr(n);
                j += 5;
            }
            None => return Some((t, j)),
        }
    }
}

/// A one-word type without operands: an integer type, `float`, `double`, `void`, `ptr`
/// (with no `addrspace` after it: the caller checks).
/// Read from the word's bytes: no `str` slicing (and its character-boundary checks).
#[inline]
fn simple_type(w: &[u8]) -> Option<Simple> {
    match w {
        // The usual widths without parsing digits.
        b"i32" => Some(Simple::Int(32)),
        b"i64" => Some(Simple::Int(64)),
        b"i8" => Some(Simple::Int(8)),
        b"i1" => Some(Simple::Int(1)),
        b"float" => Some(Simple::Float),
        b"double" => Some(Simple::Double),
        b"ptr" => Some(Simple::Ptr(0)),
        b"void" => Some(Simple::Void),
        [b'i', ..] => match int_width_bytes(w) {
            Some(n) if (1..=(1 << 23)).contains(&n) => Some(Simple::Int(n)),
            _ => None,
        },
        _ => None,
    }
}

/// After a type, `(` starts a function type only if a type, `...` or `)` follows
/// (in `call void (i32) @f(...)` and `i32 (i32)*`), not an argument list.
fn looks_like_fn_type(c: &Cur) -> bool {
    let next = c.peek_at(1);
    is_type_start(next) || matches!(next, Tok::Ellipsis | Tok::Punct(b')'))
}

fn parse_struct_fields(c: &mut Cur, ty: &mut Types, depth: u32) -> PResult<Vec<TyId>> {
    let mut f = Vec::new();
    if c.eat_punct(b'}') {
        return Ok(f);
    }
    loop {
        f.push(parse_type_depth(c, ty, depth + 1, true)?);
        if c.eat_punct(b'}') {
            return Ok(f);
        }
        c.expect_punct(b',')?;
    }
}

/// What a parameter attribute list contained that matters.
#[derive(Default)]
pub(crate) struct ParamAttrs {
    /// `inalloca`, `preallocated`: a hidden copy Gyre does not model.
    pub by_copy: Option<String>,
    /// `byval(T)`: the type of the hidden copy (the importer copies at the call).
    pub byval: Option<TyId>,
    /// `align N`: the alignment the pointer argument is known to have.
    pub align: Option<u64>,
}

/// Skip parameter or return attributes (`nocapture`, `align 4`, `dereferenceable(8)`,
/// `byval(%T)`, `"str"`, ...) up to the next value, `,` or `)`.
pub(crate) fn skip_param_attrs(c: &mut Cur, types: &mut Types) -> PResult<ParamAttrs> {
    let mut out = ParamAttrs::default();
    loop {
        match c.peek() {
            Tok::Word(w) if !is_type_word(w) && !is_value_word(w) => {
                if matches!(w, "inalloca" | "preallocated") {
                    out.by_copy = Some(w.to_string());
                }
                c.bump();
                if w == "byval" {
                    if c.eat_punct(b'(') {
                        out.byval = Some(parse_type(c, types)?);
                        c.expect_punct(b')')?;
                    } else {
                        // Old syntax without the type: the size is unknown.
                        out.by_copy = Some(w.to_string());
                    }
                } else if w == "align" && matches!(c.peek(), Tok::Int(_)) {
                    if let Tok::Int(a) = c.peek() {
                        out.align = u64::try_from(a).ok();
                    }
                    c.bump();
                } else if c.is_punct(b'(') {
                    c.skip_balanced()?;
                } else if matches!(c.peek(), Tok::Int(_)) && takes_int(w) {
                    c.bump();
                }
            }
            Tok::Str(_) => {
                c.bump();
                if c.eat_punct(b'=') {
                    if let Tok::Str(_) = c.peek() {
                        c.bump();
                    }
                }
            }
            _ => return Ok(out),
        }
    }
}

fn takes_int(w: &str) -> bool {
    matches!(
        w,
        "align" | "alignstack" | "cc" | "dereferenceable" | "addrspace"
    )
}

/// Words that start a value rather than an attribute.
pub(crate) fn is_value_word(w: &str) -> bool {
    matches!(
        w,
        "true"
            | "false"
            | "null"
            | "undef"
            | "poison"
            | "zeroinitializer"
            | "none"
            | "getelementptr"
            | "bitcast"
            | "addrspacecast"
            | "ptrtoint"
            | "inttoptr"
            | "trunc"
            | "zext"
            | "sext"
            | "fptrunc"
            | "fpext"
            | "fptoui"
            | "fptosi"
            | "uitofp"
            | "sitofp"
            | "add"
            | "sub"
            | "mul"
            | "shl"
            | "lshr"
            | "ashr"
            | "and"
            | "or"
            | "xor"
            | "icmp"
            | "fcmp"
            | "select"
            | "extractelement"
            | "insertelement"
            | "shufflevector"
            | "extractvalue"
            | "insertvalue"
            | "blockaddress"
            | "dso_local_equivalent"
            | "no_cfi"
            | "asm"
            | "udiv"
            | "sdiv"
            | "urem"
            | "srem"
            | "x"
    )
}

/// A parsed constant, before its type is applied.
#[derive(Clone, PartialEq, Debug)]
pub(crate) enum CVal<'t> {
    Int(i128),
    Bool(bool),
    Float(f64),
    HexFloat(char, u64),
    Null,
    Undef,
    Poison,
    Zero,
    Global(&'t str),
    /// `[T v, ...]` or `{T v, ...}` (also packed and vector literals).
    Aggregate(Vec<(TyId, CVal<'t>)>),
    CStr(&'t [u8]),
    Gep {
        src: TyId,
        base: Box<(TyId, CVal<'t>)>,
        idx: Vec<(TyId, CVal<'t>)>,
    },
    Cast {
        op: &'t str,
        val: Box<(TyId, CVal<'t>)>,
        to: TyId,
    },
    Bin {
        op: &'t str,
        args: Box<[(TyId, CVal<'t>); 2]>,
    },
}

/// An instruction operand: a named local or a constant, with its token position.
#[derive(Clone, Debug)]
pub(crate) enum Operand<'t> {
    Local(&'t str),
    Const(CVal<'t>),
}

/// Parse a value (operand) of a known type. `depth` bounds constant-expression nesting.
pub(crate) fn parse_value<'t>(c: &mut Cur<'t>, ty: &mut Types) -> PResult<Operand<'t>> {
    if let Some(n) = c.peek_local() {
        c.bump();
        return Ok(Operand::Local(n));
    }
    Ok(Operand::Const(parse_const(c, ty, 0)?))
}

/// Parse a constant.
pub(crate) fn parse_const<'t>(c: &mut Cur<'t>, ty: &mut Types, depth: u32) -> PResult<CVal<'t>> {
    if depth > MAX_NESTING {
        return Err(c.unsup("constant expression nesting too deep"));
    }
    let start = c.tok();
    let v = match c.peek() {
        Tok::Int(v) => {
            c.bump();
            CVal::Int(v)
        }
        Tok::Float(f) => {
            c.bump();
            CVal::Float(f)
        }
        Tok::HexFloat(k, b) => {
            c.bump();
            CVal::HexFloat(k, b)
        }
        Tok::Global(n) => {
            c.bump();
            CVal::Global(n)
        }
        Tok::CStr(s) => {
            c.bump();
            CVal::CStr(s)
        }
        Tok::Local(_) => return Err(c.err("a local value cannot appear in a constant")),
        Tok::Punct(open @ (b'[' | b'{' | b'<')) => {
            c.bump();
            let packed = open == b'<' && c.eat_punct(b'{');
            let close = match open {
                b'[' => b']',
                b'{' => b'}',
                _ if packed => b'}',
                _ => b'>',
            };
            let mut elems = Vec::new();
            if !c.eat_punct(close) {
                loop {
                    let t = parse_type(c, ty)?;
                    let v = parse_const(c, ty, depth + 1)?;
                    elems.push((t, v));
                    if c.eat_punct(close) {
                        break;
                    }
                    c.expect_punct(b',')?;
                }
            }
            if packed {
                c.expect_punct(b'>')?;
            }
            if open == b'<' && !packed {
                return Err(c.unsup_at(start, "vector constant"));
            }
            CVal::Aggregate(elems)
        }
        Tok::Word(w) => {
            c.bump();
            match w {
                "true" => CVal::Bool(true),
                "false" => CVal::Bool(false),
                "null" => CVal::Null,
                "undef" => CVal::Undef,
                "poison" => CVal::Poison,
                "zeroinitializer" => CVal::Zero,
                "getelementptr" => {
                    while matches!(c.peek(), Tok::Word(w) if matches!(w, "inbounds" | "nuw" | "nusw"))
                    {
                        c.bump();
                    }
                    if c.is_word("inrange") {
                        c.bump();
                        if c.is_punct(b'(') {
                            c.skip_balanced()?;
                        }
                    }
                    c.expect_punct(b'(')?;
                    let src = parse_type(c, ty)?;
                    c.expect_punct(b',')?;
                    let bt = parse_type(c, ty)?;
                    let bv = parse_const(c, ty, depth + 1)?;
                    let mut idx = Vec::new();
                    while c.eat_punct(b',') {
                        if c.is_word("inrange") {
                            c.bump();
                        }
                        let it = parse_type(c, ty)?;
                        let iv = parse_const(c, ty, depth + 1)?;
                        idx.push((it, iv));
                    }
                    c.expect_punct(b')')?;
                    CVal::Gep {
                        src,
                        base: Box::new((bt, bv)),
                        idx,
                    }
                }
                "bitcast" | "addrspacecast" | "ptrtoint" | "inttoptr" | "trunc" | "zext"
                | "sext" | "fptrunc" | "fpext" | "fptoui" | "fptosi" | "uitofp" | "sitofp" => {
                    c.expect_punct(b'(')?;
                    let t = parse_type(c, ty)?;
                    let v = parse_const(c, ty, depth + 1)?;
                    c.expect_word("to")?;
                    let to = parse_type(c, ty)?;
                    c.expect_punct(b')')?;
                    CVal::Cast {
                        op: w,
                        val: Box::new((t, v)),
                        to,
                    }
                }
                "add" | "sub" | "mul" | "shl" | "lshr" | "ashr" | "and" | "or" | "xor" => {
                    while matches!(c.peek(), Tok::Word(f) if matches!(f, "nsw" | "nuw" | "exact" | "disjoint"))
                    {
                        c.bump();
                    }
                    c.expect_punct(b'(')?;
                    let ta = parse_type(c, ty)?;
                    let a = parse_const(c, ty, depth + 1)?;
                    c.expect_punct(b',')?;
                    let tb = parse_type(c, ty)?;
                    let b = parse_const(c, ty, depth + 1)?;
                    c.expect_punct(b')')?;
                    CVal::Bin {
                        op: w,
                        args: Box::new([(ta, a), (tb, b)]),
                    }
                }
                "asm" => return Err(c.unsup_at(start, "inline asm")),
                "blockaddress" => return Err(c.unsup_at(start, "blockaddress")),
                "none" => return Err(c.unsup_at(start, "token constant `none`")),
                _ if is_value_word(w) => {
                    return Err(c.unsup_at(start, format!("constant expression `{w}`")))
                }
                _ => return Err(c.err_at(start, format!("expected a value, found `{w}`"))),
            }
        }
        Tok::Meta(_) => return Err(c.unsup("metadata operand")),
        _ => return Err(c.expected("a value")),
    };
    Ok(v)
}
