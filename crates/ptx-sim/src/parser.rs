//! PTX text -> decoded [`ModuleData`].
//!
//! The parser is a single pass over the token stream. Registers and
//! variables are resolved to dense indices / offsets while parsing; branch
//! targets and call targets are patched at the end of each function / module.

use rustc_hash::FxHashMap;

use crate::error::ParseError;
use crate::ir::*;
use crate::lexer::{lex, Tok, Token};

/// Largest single variable (bytes) accepted in `.global`/`.shared`/`.local`.
const MAX_VAR_BYTES: u64 = 1 << 26;
/// Largest `.local` frame of one function (the hardware limit).
const MAX_LOCAL_BYTES: u64 = 512 * 1024;
/// Largest total static `.shared` memory.
const MAX_SHARED_BYTES: u64 = 1 << 20;
/// Largest total `.const` bank.
const MAX_CONST_BYTES: u64 = 1 << 20;
/// Largest number of registers per function.
const MAX_REGS: u64 = 1 << 18;
/// Largest number of instructions per function.
const MAX_INSTS: usize = 1 << 22;

type PResult<T> = Result<T, ParseError>;

/// What a name refers to.
#[derive(Clone, Copy, Debug)]
enum Named {
    Reg(u32),
    Sym { sym: Sym, size: u64 },
}

#[derive(Default)]
struct Scope {
    names: FxHashMap<String, Named>,
    /// `%r<N>` declarations: prefix -> (first register, count).
    ranges: FxHashMap<String, (u32, u32)>,
}

#[derive(Clone, Debug)]
enum Lit {
    Int(u64),
    F32(u32),
    F64(u64),
    Float(f64),
}

#[derive(Clone, Debug)]
enum PO {
    Name(String),
    Special(SReg),
    Lit(Lit),
    Addr { base: Option<String>, off: i64 },
    Vec(Vec<Opnd>),
    List(Vec<Opnd>),
    Not(Box<Opnd>),
    Pair(String, String),
    Sink,
}

#[derive(Clone, Debug)]
struct Opnd {
    po: PO,
    line: u32,
    col: u32,
}

fn perr<T>(line: u32, col: u32, msg: impl Into<String>) -> PResult<T> {
    Err(ParseError::new(line, col, msg))
}

fn align_up(v: u64, a: u64) -> u64 {
    let a = a.max(1);
    v.div_ceil(a).saturating_mul(a)
}

/// Per-function builder state.
struct FnB {
    scopes: Vec<Scope>,
    nregs: u64,
    param_size: u64,
    local_size: u64,
    insts: Vec<Inst>,
    lines: Vec<u32>,
    labels: FxHashMap<String, u32>,
    bra_fixups: Vec<(usize, String, u32, u32)>,
    sink: Option<u32>,
}

enum Fixup {
    Label(String),
    Callee {
        name: String,
        nargs: usize,
        has_ret: bool,
    },
}

struct CallFixup {
    func: usize,
    inst: usize,
    name: String,
    nargs: usize,
    has_ret: bool,
    line: u32,
    col: u32,
}

/// Variable declaration (module or function scope).
struct VarDecl {
    name: String,
    ty: Ty,
    align: u64,
    /// Number of elements, `None` for unsized `[]`.
    count: Option<u64>,
    init: Option<Vec<u8>>,
    line: u32,
    col: u32,
}

struct Parser {
    toks: Vec<Token>,
    pos: usize,
    m: ModuleData,
    module_syms: FxHashMap<String, Named>,
    call_fixups: Vec<CallFixup>,
    has_dyn_shared: bool,
    shared_align: u64,
}

/// Parses a whole module.
pub(crate) fn parse_module(src: &str) -> PResult<ModuleData> {
    let toks = lex(src)?;
    let mut p = Parser {
        toks,
        pos: 0,
        m: ModuleData::default(),
        module_syms: FxHashMap::default(),
        call_fixups: Vec::new(),
        has_dyn_shared: false,
        shared_align: 16,
    };
    p.module()?;
    Ok(p.m)
}

impl Parser {
    fn peek(&self) -> &Token {
        let i = self.pos.min(self.toks.len() - 1);
        &self.toks[i]
    }

    fn peek_at(&self, k: usize) -> &Tok {
        let i = (self.pos + k).min(self.toks.len() - 1);
        &self.toks[i].tok
    }

    fn next(&mut self) -> Token {
        let t = self.peek().clone();
        if self.pos < self.toks.len() - 1 {
            self.pos += 1;
        }
        t
    }

    fn err<T>(&self, msg: impl Into<String>) -> PResult<T> {
        let t = self.peek();
        perr(t.line, t.col, msg)
    }

    fn describe(t: &Tok) -> String {
        match t {
            Tok::Ident(s) => format!("'{s}'"),
            Tok::Dir(s) => format!("'.{s}'"),
            Tok::Int(v) => format!("'{v}'"),
            Tok::F32(_) | Tok::F64(_) | Tok::Float(_) => "float literal".into(),
            Tok::Str(_) => "string literal".into(),
            Tok::P(c) => format!("'{c}'"),
            Tok::Eof => "end of input".into(),
        }
    }

    fn is_p(&self, c: char) -> bool {
        self.peek().tok == Tok::P(c)
    }

    fn eat_p(&mut self, c: char) -> bool {
        if self.is_p(c) {
            self.next();
            true
        } else {
            false
        }
    }

    fn expect_p(&mut self, c: char) -> PResult<()> {
        if self.eat_p(c) {
            Ok(())
        } else {
            let d = Self::describe(&self.peek().tok);
            self.err(format!("expected '{c}', found {d}"))
        }
    }

    fn is_dir(&self, s: &str) -> bool {
        matches!(&self.peek().tok, Tok::Dir(d) if d == s)
    }

    fn expect_ident(&mut self) -> PResult<String> {
        match self.peek().tok.clone() {
            Tok::Ident(s) => {
                self.next();
                Ok(s)
            }
            t => self.err(format!("expected identifier, found {}", Self::describe(&t))),
        }
    }

    fn expect_int(&mut self) -> PResult<u64> {
        match self.peek().tok.clone() {
            Tok::Int(v) => {
                self.next();
                Ok(v)
            }
            t => self.err(format!("expected integer, found {}", Self::describe(&t))),
        }
    }

    /// Skips all remaining tokens on the current token's line.
    fn skip_line(&mut self) {
        let line = self.peek().line;
        while self.peek().tok != Tok::Eof && self.peek().line == line {
            self.next();
        }
    }

    fn skip_to_semicolon(&mut self) -> PResult<()> {
        loop {
            match self.next().tok {
                Tok::P(';') => return Ok(()),
                Tok::Eof => return self.err("expected ';'"),
                _ => {}
            }
        }
    }

    fn module(&mut self) -> PResult<()> {
        let mut is_extern = false;
        loop {
            let t = self.peek().clone();
            match &t.tok {
                Tok::Eof => break,
                Tok::Dir(d) => match d.as_str() {
                    "version" => {
                        self.next();
                        let v = self.next();
                        self.m.version = match v.tok {
                            Tok::Float(f) => format!("{f:?}"),
                            Tok::Int(i) => i.to_string(),
                            _ => return perr(v.line, v.col, "expected version number"),
                        };
                    }
                    "target" => {
                        self.next();
                        let mut targets = vec![self.expect_ident()?];
                        while self.eat_p(',') {
                            targets.push(self.expect_ident()?);
                        }
                        self.m.target = targets.join(",");
                    }
                    "address_size" => {
                        self.next();
                        let v = self.expect_int()?;
                        if v != 64 {
                            return perr(t.line, t.col, "only .address_size 64 is supported");
                        }
                    }
                    "visible" | "weak" | "common" => {
                        self.next();
                    }
                    "extern" => {
                        self.next();
                        is_extern = true;
                        continue;
                    }
                    "entry" | "func" => {
                        self.next();
                        self.function(d == "entry")?;
                    }
                    "global" | "shared" | "const" => {
                        self.next();
                        let space = match d.as_str() {
                            "global" => Space::Global,
                            "shared" => Space::Shared,
                            _ => Space::Const,
                        };
                        let v = self.var_decl()?;
                        let named = self.define_static_var(space, is_extern, &v)?;
                        if let Named::Sym {
                            sym: Sym::Const(off),
                            size,
                        } = named
                        {
                            self.m.const_vars.insert(v.name.clone(), (off, size));
                        }
                        if self.module_syms.insert(v.name.clone(), named).is_some() {
                            return perr(v.line, v.col, format!("redefinition of '{}'", v.name));
                        }
                    }
                    "file" | "loc" => self.skip_line(),
                    "pragma" => {
                        self.next();
                        self.skip_to_semicolon()?;
                    }
                    "section" => {
                        self.next();
                        self.skip_section()?;
                    }
                    _ => return self.err(format!("unexpected directive '.{d}' at module scope")),
                },
                other => {
                    return self.err(format!(
                        "unexpected {} at module scope",
                        Self::describe(other)
                    ))
                }
            }
            is_extern = false;
        }
        self.finish_module()
    }

    fn skip_section(&mut self) -> PResult<()> {
        while !self.is_p('{') {
            if self.peek().tok == Tok::Eof {
                return self.err("expected '{' after .section");
            }
            self.next();
        }
        let mut depth = 0usize;
        loop {
            match self.next().tok {
                Tok::P('{') => depth += 1,
                Tok::P('}') => {
                    depth -= 1;
                    if depth == 0 {
                        return Ok(());
                    }
                }
                Tok::Eof => return self.err("unterminated .section"),
                _ => {}
            }
        }
    }

    fn finish_module(&mut self) -> PResult<()> {
        // Dynamic shared memory goes after all static shared variables.
        self.m.dyn_shared_base = align_up(self.m.shared_size, self.shared_align.max(16));
        let fixups = std::mem::take(&mut self.call_fixups);
        for f in fixups {
            let Some(&ci) = self.m.func_index.get(&f.name) else {
                return perr(
                    f.line,
                    f.col,
                    format!("call to unknown function '{}'", f.name),
                );
            };
            let callee = &self.m.funcs[ci as usize];
            if callee.is_entry {
                return perr(f.line, f.col, format!("cannot call kernel '{}'", f.name));
            }
            if callee.params.len() != f.nargs {
                return perr(
                    f.line,
                    f.col,
                    format!(
                        "'{}' takes {} arguments, call passes {}",
                        f.name,
                        callee.params.len(),
                        f.nargs
                    ),
                );
            }
            if f.has_ret && callee.ret.is_none() {
                return perr(f.line, f.col, format!("'{}' has no return value", f.name));
            }
            if let Op::Call { callee, .. } = &mut self.m.funcs[f.func].insts[f.inst].op {
                *callee = ci;
            }
        }
        Ok(())
    }

    /// Parses `[.align N] [.vN] .type name[dims] [= init] ;` after the space directive.
    fn var_decl(&mut self) -> PResult<VarDecl> {
        let mut align = 0u64;
        let mut ty = None;
        let mut vec = 1u64;
        loop {
            let t = self.peek().clone();
            match &t.tok {
                Tok::Dir(d) if d == "align" => {
                    self.next();
                    align = self.expect_int()?;
                    if align == 0 || !align.is_power_of_two() || align > 4096 {
                        return perr(t.line, t.col, "alignment must be a power of two <= 4096");
                    }
                }
                Tok::Dir(d) if d == "v2" || d == "v4" => {
                    self.next();
                    vec = if d == "v2" { 2 } else { 4 };
                }
                Tok::Dir(d) if d == "ptr" || d == "global" || d == "shared" || d == "const" => {
                    self.next();
                }
                Tok::Dir(d) => {
                    let Some(t2) = Ty::parse(d) else {
                        return perr(t.line, t.col, format!("unexpected '.{d}' in declaration"));
                    };
                    self.next();
                    ty = Some(t2);
                }
                _ => break,
            }
        }
        let Some(ty) = ty else {
            return self.err("missing type in variable declaration");
        };
        if ty == Ty::Pred {
            return self.err(".pred variables are not supported in memory");
        }
        let nt = self.peek().clone();
        let name = self.expect_ident()?;
        let mut count = Some(vec);
        let mut dims = 0;
        while self.eat_p('[') {
            dims += 1;
            if self.eat_p(']') {
                if dims != 1 {
                    return self.err("only the first dimension may be unsized");
                }
                count = None;
                continue;
            }
            let n = self.expect_int()?;
            self.expect_p(']')?;
            count = count.map(|c| c.saturating_mul(n));
        }
        let init = if self.eat_p('=') {
            Some(self.initializer(ty)?)
        } else {
            None
        };
        self.expect_p(';')?;
        let count = match (count, &init) {
            (None, Some(bytes)) => Some(bytes.len() as u64 / ty.bytes() as u64),
            (c, _) => c,
        };
        let elem = ty.bytes() as u64;
        if let (Some(c), Some(init)) = (count, &init) {
            if init.len() as u64 > c.saturating_mul(elem) {
                return perr(nt.line, nt.col, "too many initializers");
            }
        }
        if count.unwrap_or(0).saturating_mul(elem) > MAX_VAR_BYTES {
            return perr(nt.line, nt.col, "variable too large");
        }
        Ok(VarDecl {
            name,
            ty,
            align: if align == 0 { elem * vec } else { align },
            count,
            init,
            line: nt.line,
            col: nt.col,
        })
    }

    /// Parses an initializer (scalar or nested braces) into bytes.
    fn initializer(&mut self, ty: Ty) -> PResult<Vec<u8>> {
        let mut out = Vec::new();
        let mut depth = 0usize;
        loop {
            if self.eat_p('{') {
                depth += 1;
                continue;
            }
            let t = self.peek().clone();
            let neg = self.eat_p('-');
            let lit = match self.next().tok {
                Tok::Int(v) => Lit::Int(v),
                Tok::F32(v) => Lit::F32(v),
                Tok::F64(v) => Lit::F64(v),
                Tok::Float(v) => Lit::Float(v),
                _ => {
                    return perr(
                        t.line,
                        t.col,
                        "unsupported initializer (only numeric literals are supported)",
                    )
                }
            };
            let lit = if neg { negate_lit(lit) } else { lit };
            let bits = lit_bits(&lit, ty).map_err(|m| ParseError::new(t.line, t.col, m))?;
            out.extend_from_slice(&bits.to_le_bytes()[..ty.bytes() as usize]);
            if out.len() as u64 > MAX_VAR_BYTES {
                return perr(t.line, t.col, "initializer too large");
            }
            loop {
                if depth > 0 && self.eat_p('}') {
                    depth -= 1;
                    continue;
                }
                break;
            }
            if depth == 0 {
                return Ok(out);
            }
            self.expect_p(',')?;
            // Allow `{1, 2}, {3, 4}` inside an outer brace.
        }
    }

    /// Allocates a `.global`/`.shared`/`.const` variable and returns its symbol.
    fn define_static_var(&mut self, space: Space, is_extern: bool, v: &VarDecl) -> PResult<Named> {
        let elem = v.ty.bytes() as u64;
        let size = v.count.unwrap_or(0).saturating_mul(elem);
        match space {
            Space::Shared => {
                self.shared_align = self.shared_align.max(v.align);
                if is_extern || v.count.is_none() {
                    self.has_dyn_shared = true;
                    return Ok(Named::Sym {
                        sym: Sym::DynShared(0),
                        size: 0,
                    });
                }
                if v.init.is_some() {
                    return perr(v.line, v.col, ".shared variables cannot be initialized");
                }
                let off = align_up(self.m.shared_size, v.align);
                self.m.shared_size = off + size;
                if self.m.shared_size > MAX_SHARED_BYTES {
                    return perr(v.line, v.col, "too much shared memory");
                }
                Ok(Named::Sym {
                    sym: Sym::Shared(off),
                    size,
                })
            }
            Space::Const => {
                let off = align_up(self.m.consts.len() as u64, v.align);
                let end = off.saturating_add(size);
                if end > MAX_CONST_BYTES {
                    return perr(v.line, v.col, "constant bank too large");
                }
                self.m.consts.resize(end as usize, 0);
                if let Some(init) = &v.init {
                    self.m.consts[off as usize..off as usize + init.len()].copy_from_slice(init);
                }
                Ok(Named::Sym {
                    sym: Sym::Const(off),
                    size,
                })
            }
            _ => {
                if v.count.is_none() {
                    return perr(v.line, v.col, "unsized .global variables are not supported");
                }
                let idx = self.m.globals.len() as u32;
                self.m.globals.push(GlobalVar {
                    name: v.name.clone(),
                    size,
                    align: v.align,
                    init: v.init.clone().unwrap_or_default(),
                });
                Ok(Named::Sym {
                    sym: Sym::Global(idx),
                    size,
                })
            }
        }
    }

    /// `.param [.align N] .type [.ptr .space .align N] name[N]`.
    fn param_decl(&mut self, offset: &mut u64) -> PResult<ParamDecl> {
        let t = self.peek().clone();
        if !self.is_dir("param") {
            if self.is_dir("reg") {
                return self.err(".reg parameters are not supported");
            }
            return self.err("expected '.param'");
        }
        self.next();
        let mut align = 0u64;
        let mut ty = None;
        loop {
            let t = self.peek().clone();
            match &t.tok {
                Tok::Dir(d) if d == "align" => {
                    self.next();
                    let a = self.expect_int()?;
                    if a == 0 || !a.is_power_of_two() || a > 4096 {
                        return perr(t.line, t.col, "alignment must be a power of two <= 4096");
                    }
                    if ty.is_none() {
                        align = a;
                    }
                }
                Tok::Dir(d)
                    if matches!(d.as_str(), "ptr" | "global" | "shared" | "const" | "local") =>
                {
                    self.next();
                }
                Tok::Dir(d) => {
                    let Some(t2) = Ty::parse(d) else {
                        return perr(t.line, t.col, format!("unexpected '.{d}' in parameter"));
                    };
                    if t2 == Ty::Pred {
                        return perr(t.line, t.col, ".pred parameters are not supported");
                    }
                    self.next();
                    ty = Some(t2);
                }
                _ => break,
            }
        }
        let Some(ty) = ty else {
            return perr(t.line, t.col, "missing parameter type");
        };
        let name = self.expect_ident()?;
        let mut count = 1u64;
        while self.eat_p('[') {
            let n = self.expect_int()?;
            self.expect_p(']')?;
            count = count.saturating_mul(n);
        }
        let size = count.saturating_mul(ty.bytes() as u64);
        if size > 1 << 16 {
            return perr(t.line, t.col, "parameter too large");
        }
        let a = if align == 0 { ty.bytes() as u64 } else { align };
        let off = align_up(*offset, a);
        *offset = off + size;
        Ok(ParamDecl {
            name,
            offset: off,
            size,
        })
    }

    fn function(&mut self, is_entry: bool) -> PResult<()> {
        let mut psize = 0u64;
        let mut ret = None;
        if !is_entry && self.is_p('(') {
            self.next();
            ret = Some(self.param_decl(&mut psize)?);
            self.expect_p(')')?;
        }
        let name_tok = self.peek().clone();
        let name = self.expect_ident()?;
        let mut params = Vec::new();
        if self.eat_p('(') {
            if !self.is_p(')') {
                loop {
                    params.push(self.param_decl(&mut psize)?);
                    if !self.eat_p(',') {
                        break;
                    }
                }
            }
            self.expect_p(')')?;
        }
        // Performance-tuning directives.
        loop {
            let t = self.peek().clone();
            match &t.tok {
                Tok::Dir(d)
                    if matches!(
                        d.as_str(),
                        "maxntid"
                            | "reqntid"
                            | "minnctapersm"
                            | "maxnctapersm"
                            | "maxnreg"
                            | "noreturn"
                            | "maxclusterrank"
                            | "reqnctapercluster"
                            | "explicitcluster"
                    ) =>
                {
                    self.next();
                    while matches!(self.peek().tok, Tok::Int(_)) {
                        self.next();
                        if !self.eat_p(',') {
                            break;
                        }
                    }
                }
                Tok::Dir(d) if d == "pragma" => {
                    self.next();
                    self.skip_to_semicolon()?;
                }
                _ => break,
            }
        }
        let existing = self.m.func_index.get(&name).copied();
        if let Some(i) = existing {
            let f = &self.m.funcs[i as usize];
            if f.has_body && !self.is_p(';') {
                return perr(
                    name_tok.line,
                    name_tok.col,
                    format!("redefinition of '{name}'"),
                );
            }
            if f.is_entry != is_entry {
                return perr(
                    name_tok.line,
                    name_tok.col,
                    format!("conflicting declaration of '{name}'"),
                );
            }
        }
        let mut func = Function {
            name: name.clone(),
            is_entry,
            has_body: false,
            nregs: 0,
            params,
            ret,
            param_size: psize,
            local_size: 0,
            insts: Vec::new(),
            lines: Vec::new(),
        };
        let idx = match existing {
            Some(i) => i as usize,
            None => {
                let i = self.m.funcs.len();
                self.m.funcs.push(func.clone());
                self.m.func_index.insert(name.clone(), i as u32);
                i
            }
        };
        if self.eat_p(';') {
            return Ok(());
        }
        if !self.is_p('{') {
            return self.err("expected '{' or ';' after function header");
        }
        self.next();
        self.body(&mut func, idx)?;
        func.has_body = true;
        self.m.funcs[idx] = func;
        Ok(())
    }

    fn body(&mut self, func: &mut Function, fidx: usize) -> PResult<()> {
        let mut outer = Scope::default();
        for p in func.params.iter().chain(func.ret.iter()) {
            outer.names.insert(
                p.name.clone(),
                Named::Sym {
                    sym: Sym::Param(p.offset),
                    size: p.size,
                },
            );
        }
        let mut fb = FnB {
            scopes: vec![outer, Scope::default()],
            nregs: 0,
            param_size: func.param_size,
            local_size: 0,
            insts: Vec::new(),
            lines: Vec::new(),
            labels: FxHashMap::default(),
            bra_fixups: Vec::new(),
            sink: None,
        };
        loop {
            let t = self.peek().clone();
            match &t.tok {
                Tok::Eof => return self.err("unexpected end of input in function body"),
                Tok::P('{') => {
                    self.next();
                    fb.scopes.push(Scope::default());
                }
                Tok::P('}') => {
                    self.next();
                    fb.scopes.pop();
                    if fb.scopes.len() == 1 {
                        break;
                    }
                }
                Tok::Dir(d) => match d.as_str() {
                    "reg" => {
                        self.next();
                        self.reg_decl(&mut fb)?;
                    }
                    "local" | "shared" | "param" | "global" | "const" => {
                        self.next();
                        let space = d.clone();
                        let v = self.var_decl()?;
                        let named = match space.as_str() {
                            "local" => {
                                if v.init.is_some() {
                                    return perr(
                                        v.line,
                                        v.col,
                                        ".local variables cannot be initialized",
                                    );
                                }
                                let Some(c) = v.count else {
                                    return perr(v.line, v.col, "unsized .local variable");
                                };
                                let size = c * v.ty.bytes() as u64;
                                let off = align_up(fb.local_size, v.align);
                                fb.local_size = off + size;
                                if fb.local_size > MAX_LOCAL_BYTES {
                                    return perr(v.line, v.col, "too much local memory");
                                }
                                Named::Sym {
                                    sym: Sym::Local(off),
                                    size,
                                }
                            }
                            "param" => {
                                let Some(c) = v.count else {
                                    return perr(v.line, v.col, "unsized .param variable");
                                };
                                let size = c * v.ty.bytes() as u64;
                                let off = align_up(fb.param_size, v.align.max(8));
                                fb.param_size = off + size;
                                if fb.param_size > MAX_VAR_BYTES {
                                    return perr(v.line, v.col, "too much param memory");
                                }
                                Named::Sym {
                                    sym: Sym::Param(off),
                                    size,
                                }
                            }
                            "shared" => self.define_static_var(Space::Shared, false, &v)?,
                            "const" => self.define_static_var(Space::Const, false, &v)?,
                            _ => self.define_static_var(Space::Global, false, &v)?,
                        };
                        let scope = fb.scopes.last_mut().expect("scope stack is non-empty");
                        scope.names.insert(v.name.clone(), named);
                    }
                    "pragma" => {
                        self.next();
                        self.skip_to_semicolon()?;
                    }
                    "loc" | "file" => self.skip_line(),
                    _ => return self.err(format!("unexpected directive '.{d}' in function body")),
                },
                Tok::Ident(name) if *self.peek_at(1) == Tok::P(':') => {
                    self.next();
                    self.next();
                    if matches!(self.peek_at(0), Tok::Dir(d) if d == "callprototype") {
                        self.skip_to_semicolon()?;
                        continue;
                    }
                    if fb
                        .labels
                        .insert(name.clone(), fb.insts.len() as u32)
                        .is_some()
                    {
                        return perr(t.line, t.col, format!("duplicate label '{name}'"));
                    }
                }
                Tok::P('@') | Tok::Ident(_) => {
                    self.instruction(&mut fb, fidx)?;
                    if fb.insts.len() > MAX_INSTS {
                        return perr(t.line, t.col, "function too large");
                    }
                }
                other => {
                    return self.err(format!(
                        "unexpected {} in function body",
                        Self::describe(other)
                    ))
                }
            }
        }
        for (i, label, line, col) in std::mem::take(&mut fb.bra_fixups) {
            let Some(&target) = fb.labels.get(&label) else {
                return perr(line, col, format!("unknown label '{label}'"));
            };
            if let Op::Bra { target: t } = &mut fb.insts[i].op {
                *t = target;
            }
        }
        func.nregs = fb.nregs as usize;
        func.param_size = fb.param_size;
        func.local_size = fb.local_size;
        func.insts = fb.insts;
        func.lines = fb.lines;
        Ok(())
    }

    fn reg_decl(&mut self, fb: &mut FnB) -> PResult<()> {
        let mut ty = None;
        while let Tok::Dir(d) = &self.peek().tok {
            if d == "v2" || d == "v4" {
                return self.err("vector registers are not supported");
            }
            match Ty::parse(d) {
                Some(t) => ty = Some(t),
                None => return self.err(format!("unexpected '.{d}' in .reg declaration")),
            }
            self.next();
        }
        if ty.is_none() {
            return self.err("missing type in .reg declaration");
        }
        loop {
            let t = self.peek().clone();
            let name = self.expect_ident()?;
            let scope = fb.scopes.last_mut().expect("scope stack is non-empty");
            if self.eat_p('<') {
                let n = self.expect_int()?;
                self.expect_p('>')?;
                if fb.nregs.saturating_add(n) > MAX_REGS {
                    return perr(t.line, t.col, "too many registers");
                }
                scope.ranges.insert(name, (fb.nregs as u32, n as u32));
                fb.nregs += n;
            } else {
                if fb.nregs + 1 > MAX_REGS {
                    return perr(t.line, t.col, "too many registers");
                }
                scope.names.insert(name, Named::Reg(fb.nregs as u32));
                fb.nregs += 1;
            }
            if !self.eat_p(',') {
                break;
            }
        }
        self.expect_p(';')
    }

    fn operand(&mut self) -> PResult<Opnd> {
        let t = self.next();
        let (line, col) = (t.line, t.col);
        let po = match t.tok {
            Tok::P('[') => {
                let mut base = None;
                let mut off = 0i64;
                let mut first = true;
                loop {
                    if self.eat_p(']') {
                        if first {
                            return perr(line, col, "empty address");
                        }
                        break;
                    }
                    let mut neg = false;
                    if !first {
                        if self.eat_p('-') {
                            neg = true;
                        } else {
                            self.expect_p('+')?;
                        }
                    }
                    if self.eat_p('-') {
                        neg = !neg;
                    }
                    let t2 = self.next();
                    match t2.tok {
                        Tok::Ident(s) if first && !neg => base = Some(s),
                        Tok::Int(v) => {
                            let v = v as i64;
                            off = if neg {
                                off.wrapping_sub(v)
                            } else {
                                off.wrapping_add(v)
                            };
                        }
                        _ => return perr(t2.line, t2.col, "malformed address operand"),
                    }
                    first = false;
                }
                PO::Addr { base, off }
            }
            Tok::P(c @ ('{' | '(')) => {
                let close = if c == '{' { '}' } else { ')' };
                let mut items = Vec::new();
                if !self.eat_p(close) {
                    loop {
                        let o = self.operand()?;
                        if matches!(o.po, PO::Vec(_) | PO::List(_)) {
                            return perr(o.line, o.col, "nested operand lists are not allowed");
                        }
                        items.push(o);
                        if self.eat_p(close) {
                            break;
                        }
                        self.expect_p(',')?;
                    }
                }
                if c == '{' {
                    PO::Vec(items)
                } else {
                    PO::List(items)
                }
            }
            Tok::P('!') => {
                let o = self.operand()?;
                if !matches!(o.po, PO::Name(_)) {
                    return perr(line, col, "'!' must be followed by a predicate register");
                }
                PO::Not(Box::new(o))
            }
            Tok::P('-') => {
                let t2 = self.next();
                let lit = match t2.tok {
                    Tok::Int(v) => Lit::Int(v),
                    Tok::F32(v) => Lit::F32(v),
                    Tok::F64(v) => Lit::F64(v),
                    Tok::Float(v) => Lit::Float(v),
                    _ => return perr(t2.line, t2.col, "expected number after '-'"),
                };
                PO::Lit(negate_lit(lit))
            }
            Tok::Int(v) => PO::Lit(Lit::Int(v)),
            Tok::F32(v) => PO::Lit(Lit::F32(v)),
            Tok::F64(v) => PO::Lit(Lit::F64(v)),
            Tok::Float(v) => PO::Lit(Lit::Float(v)),
            Tok::Ident(s) => {
                if s == "_" {
                    PO::Sink
                } else if s == "WARP_SZ" {
                    PO::Lit(Lit::Int(32))
                } else if let Some(k) = self.special(&s)? {
                    PO::Special(k)
                } else if self.eat_p('|') {
                    let s2 = self.expect_ident()?;
                    PO::Pair(s, s2)
                } else {
                    PO::Name(s)
                }
            }
            other => {
                return perr(
                    line,
                    col,
                    format!("unexpected {} in operand", Self::describe(&other)),
                )
            }
        };
        Ok(Opnd { po, line, col })
    }

    /// Recognizes special register names (consuming a `.x/.y/.z` suffix).
    fn special(&mut self, s: &str) -> PResult<Option<SReg>> {
        let dim = |p: &mut Parser| -> PResult<u8> {
            match p.peek().tok.clone() {
                Tok::Dir(d) if d == "x" || d == "y" || d == "z" => {
                    p.next();
                    Ok(match d.as_str() {
                        "x" => 0,
                        "y" => 1,
                        _ => 2,
                    })
                }
                _ => p.err("expected .x, .y or .z"),
            }
        };
        Ok(Some(match s {
            "%tid" => SReg::Tid(dim(self)?),
            "%ntid" => SReg::Ntid(dim(self)?),
            "%ctaid" => SReg::Ctaid(dim(self)?),
            "%nctaid" => SReg::Nctaid(dim(self)?),
            "%laneid" => SReg::LaneId,
            "%warpid" => SReg::WarpId,
            "%nwarpid" => SReg::NWarpId,
            "%smid" => SReg::SmId,
            "%nsmid" => SReg::NSmId,
            "%gridid" => SReg::GridId,
            "%clock" => SReg::Clock,
            "%clock64" | "%globaltimer" => SReg::Clock64,
            "%lanemask_eq" => SReg::LaneMask(0),
            "%lanemask_lt" => SReg::LaneMask(1),
            "%lanemask_le" => SReg::LaneMask(2),
            "%lanemask_gt" => SReg::LaneMask(3),
            "%lanemask_ge" => SReg::LaneMask(4),
            _ => return Ok(None),
        }))
    }

    fn instruction(&mut self, fb: &mut FnB, fidx: usize) -> PResult<()> {
        let start = self.peek().clone();
        let mut guard = NO_REG;
        let mut guard_neg = false;
        if self.eat_p('@') {
            guard_neg = self.eat_p('!');
            let gt = self.peek().clone();
            let g = self.expect_ident()?;
            guard = match lookup(fb, &self.module_syms, &g) {
                Some(Named::Reg(r)) => r,
                _ => return perr(gt.line, gt.col, format!("unknown predicate register '{g}'")),
            };
        }
        let ot = self.peek().clone();
        let opc = self.expect_ident()?;
        let mut mods = Vec::new();
        while let Tok::Dir(d) = &self.peek().tok {
            mods.push(d.clone());
            self.next();
        }
        let mut ops = Vec::new();
        if !self.is_p(';') {
            loop {
                ops.push(self.operand()?);
                if !self.eat_p(',') {
                    break;
                }
            }
        }
        self.expect_p(';')?;
        let mut d = Dec {
            fb,
            ms: &self.module_syms,
            line: ot.line,
            col: ot.col,
        };
        let (op, fix) = d.decode(&opc, &mods, &ops)?;
        let idx = fb.insts.len();
        match fix {
            Some(Fixup::Label(l)) => fb.bra_fixups.push((idx, l, ot.line, ot.col)),
            Some(Fixup::Callee {
                name,
                nargs,
                has_ret,
            }) => self.call_fixups.push(CallFixup {
                func: fidx,
                inst: idx,
                name,
                nargs,
                has_ret,
                line: ot.line,
                col: ot.col,
            }),
            None => {}
        }
        fb.insts.push(Inst {
            op,
            guard,
            guard_neg,
        });
        fb.lines.push(start.line);
        Ok(())
    }
}

fn lookup(fb: &FnB, ms: &FxHashMap<String, Named>, name: &str) -> Option<Named> {
    for s in fb.scopes.iter().rev() {
        if let Some(n) = s.names.get(name) {
            return Some(*n);
        }
        if !s.ranges.is_empty() {
            let digits = name.len() - name.trim_end_matches(|c: char| c.is_ascii_digit()).len();
            if digits > 0 {
                let (prefix, num) = name.split_at(name.len() - digits);
                if num == "0" || !num.starts_with('0') {
                    if let (Some(&(base, n)), Ok(k)) = (s.ranges.get(prefix), num.parse::<u32>()) {
                        if k < n {
                            return Some(Named::Reg(base + k));
                        }
                    }
                }
            }
        }
    }
    ms.get(name).copied()
}

fn negate_lit(l: Lit) -> Lit {
    match l {
        Lit::Int(v) => Lit::Int(v.wrapping_neg()),
        Lit::F32(b) => Lit::F32(b ^ 0x8000_0000),
        Lit::F64(b) => Lit::F64(b ^ (1 << 63)),
        Lit::Float(f) => Lit::Float(-f),
    }
}

/// Converts a literal into the register image for type `ty`.
fn lit_bits(l: &Lit, ty: Ty) -> Result<u64, String> {
    Ok(match (l, ty) {
        (Lit::Int(v), Ty::F32) => (*v as i64 as f32).to_bits() as u64,
        (Lit::Int(v), Ty::F64) => (*v as i64 as f64).to_bits(),
        (Lit::Int(v), Ty::F16) => crate::fp::f64_to_f16(*v as i64 as f64, Rnd::N) as u64,
        (Lit::Int(v), t) => t.canon(*v),
        (Lit::F32(b), Ty::F32) => *b as u64,
        (Lit::F32(b), Ty::F64) => (f32::from_bits(*b) as f64).to_bits(),
        (Lit::F32(b), Ty::F16) => crate::fp::f64_to_f16(f32::from_bits(*b) as f64, Rnd::N) as u64,
        (Lit::F32(b), t) => t.canon(*b as u64),
        (Lit::F64(b), Ty::F32) => (f64::from_bits(*b) as f32).to_bits() as u64,
        (Lit::F64(b), Ty::F64) => *b,
        (Lit::F64(b), Ty::F16) => crate::fp::f64_to_f16(f64::from_bits(*b), Rnd::N) as u64,
        (Lit::F64(b), t) => t.canon(*b),
        (Lit::Float(f), Ty::F32) => (*f as f32).to_bits() as u64,
        (Lit::Float(f), Ty::F64) => f.to_bits(),
        (Lit::Float(f), Ty::F16) => crate::fp::f64_to_f16(*f, Rnd::N) as u64,
        (Lit::Float(_), _) => return Err("floating-point literal used with integer type".into()),
    })
}

/// Instruction decoder context.
struct Dec<'a> {
    fb: &'a mut FnB,
    ms: &'a FxHashMap<String, Named>,
    line: u32,
    col: u32,
}

fn space_of(mods: &[String]) -> Space {
    for m in mods {
        match m.as_str() {
            "global" => return Space::Global,
            "shared" | "shared::cta" => return Space::Shared,
            "local" => return Space::Local,
            "const" => return Space::Const,
            "param" => return Space::Param,
            _ => {}
        }
    }
    Space::Generic
}

fn rnd_of(mods: &[String]) -> Option<Rnd> {
    mods.iter().find_map(|m| match m.as_str() {
        "rn" => Some(Rnd::N),
        "rz" => Some(Rnd::Z),
        "rm" => Some(Rnd::M),
        "rp" => Some(Rnd::P),
        _ => None,
    })
}

fn int_ty_for_bits(bits: u32) -> Option<Ty> {
    Some(match bits {
        8 => Ty::B8,
        16 => Ty::B16,
        32 => Ty::B32,
        64 => Ty::B64,
        _ => return None,
    })
}

impl Dec<'_> {
    fn err<T>(&self, msg: impl Into<String>) -> PResult<T> {
        perr(self.line, self.col, msg)
    }

    fn sink(&mut self) -> u32 {
        if let Some(s) = self.fb.sink {
            return s;
        }
        let s = self.fb.nregs as u32;
        self.fb.nregs += 1;
        self.fb.sink = Some(s);
        s
    }

    fn lookup(&self, o: &Opnd, name: &str) -> PResult<Named> {
        lookup(self.fb, self.ms, name).ok_or_else(|| {
            ParseError::new(
                o.line,
                o.col,
                format!("unknown register or symbol '{name}'"),
            )
        })
    }

    fn dreg(&mut self, o: &Opnd) -> PResult<u32> {
        match &o.po {
            PO::Name(n) => match self.lookup(o, n)? {
                Named::Reg(r) => Ok(r),
                Named::Sym { .. } => perr(o.line, o.col, format!("'{n}' is not a register")),
            },
            PO::Sink => Ok(self.sink()),
            _ => perr(o.line, o.col, "expected destination register"),
        }
    }

    fn src(&mut self, o: &Opnd, ty: Ty) -> PResult<Src> {
        match &o.po {
            PO::Name(n) => Ok(match self.lookup(o, n)? {
                Named::Reg(r) => Src::Reg(r),
                Named::Sym { sym, .. } => Src::Sym(sym),
            }),
            PO::Special(s) => Ok(Src::Special(*s)),
            PO::Lit(l) => lit_bits(l, ty)
                .map(Src::Imm)
                .map_err(|m| ParseError::new(o.line, o.col, m)),
            _ => perr(o.line, o.col, "expected register or immediate operand"),
        }
    }

    fn pred(&mut self, o: &Opnd) -> PResult<(u32, bool)> {
        match &o.po {
            PO::Not(inner) => Ok((self.dreg(inner)?, true)),
            PO::Name(_) => Ok((self.dreg(o)?, false)),
            _ => perr(o.line, o.col, "expected predicate register"),
        }
    }

    fn addr(&mut self, o: &Opnd) -> PResult<Addr> {
        match &o.po {
            PO::Addr { base: None, off } => Ok(Addr {
                base: Base::Abs,
                off: *off,
            }),
            PO::Addr { base: Some(n), off } => {
                let base = match self.lookup(o, n)? {
                    Named::Reg(r) => Base::Reg(r),
                    Named::Sym { sym, .. } => Base::Sym(sym),
                };
                Ok(Addr { base, off: *off })
            }
            _ => perr(o.line, o.col, "expected address operand '[...]'"),
        }
    }

    fn nops(&self, ops: &[Opnd], n: usize) -> PResult<()> {
        if ops.len() != n {
            return self.err(format!("expected {n} operands, found {}", ops.len()));
        }
        Ok(())
    }

    fn decode(&mut self, opc: &str, mods: &[String], ops: &[Opnd]) -> PResult<(Op, Option<Fixup>)> {
        let types: Vec<Ty> = mods.iter().filter_map(|m| Ty::parse(m)).collect();
        let has = |s: &str| mods.iter().any(|m| m == s);
        let one_ty = |d: &Dec| -> PResult<Ty> {
            match types.as_slice() {
                [t] => Ok(*t),
                [] => d.err(format!("'{opc}' requires a type suffix")),
                _ => d.err(format!("'{opc}' takes exactly one type suffix")),
            }
        };
        let op = match opc {
            "mov" => {
                let ty = one_ty(self)?;
                self.nops(ops, 2)?;
                match (&ops[0].po, &ops[1].po) {
                    (PO::Vec(ds), _) => {
                        if ds.is_empty() || ty.bits() % ds.len() as u32 != 0 {
                            return self.err("bad vector unpack");
                        }
                        let eb = ty.bits() / ds.len() as u32;
                        if int_ty_for_bits(eb).is_none() {
                            return self.err("bad vector unpack element size");
                        }
                        let ds = ds
                            .iter()
                            .map(|o| self.dreg(o))
                            .collect::<PResult<Vec<_>>>()?;
                        let a = self.src(&ops[1], ty)?;
                        Op::Unpack {
                            elem_bits: eb,
                            ds: ds.into(),
                            a,
                        }
                    }
                    (_, PO::Vec(parts)) => {
                        if parts.is_empty() || ty.bits() % parts.len() as u32 != 0 {
                            return self.err("bad vector pack");
                        }
                        let eb = ty.bits() / parts.len() as u32;
                        let Some(et) = int_ty_for_bits(eb) else {
                            return self.err("bad vector pack element size");
                        };
                        let d = self.dreg(&ops[0])?;
                        let parts = parts
                            .iter()
                            .map(|o| self.src(o, et))
                            .collect::<PResult<Vec<_>>>()?;
                        Op::Pack {
                            elem_bits: eb,
                            d,
                            parts: parts.into(),
                        }
                    }
                    _ => {
                        let d = self.dreg(&ops[0])?;
                        let a = self.src(&ops[1], ty)?;
                        Op::Mov { ty, d, a }
                    }
                }
            }
            "ld" | "ldu" | "st" => {
                let ty = match types.last() {
                    Some(t) if *t != Ty::Pred => *t,
                    _ => return self.err(format!("'{opc}' requires a memory type")),
                };
                let space = space_of(mods);
                let n: usize = if has("v2") {
                    2
                } else if has("v4") {
                    4
                } else if has("v8") {
                    return self.err("v8 vectors are not supported");
                } else {
                    1
                };
                self.nops(ops, 2)?;
                let (vo, ao) = if opc == "st" {
                    (&ops[1], &ops[0])
                } else {
                    (&ops[0], &ops[1])
                };
                let addr = self.addr(ao)?;
                let items: Vec<Opnd> = match (&vo.po, n) {
                    (PO::Vec(v), n) if v.len() == n && n > 1 => v.clone(),
                    (PO::Vec(_), _) => {
                        return perr(vo.line, vo.col, "vector operand size mismatch")
                    }
                    (_, 1) => vec![vo.clone()],
                    _ => return perr(vo.line, vo.col, "expected vector operand"),
                };
                if opc == "st" {
                    let mut srcs = [Src::Imm(0); 4];
                    for (i, o) in items.iter().enumerate() {
                        srcs[i] = self.src(o, ty)?;
                    }
                    Op::St {
                        space,
                        ty,
                        srcs,
                        n: n as u8,
                        addr,
                    }
                } else {
                    let mut ds = [NO_REG; 4];
                    for (i, o) in items.iter().enumerate() {
                        ds[i] = self.dreg(o)?;
                    }
                    Op::Ld {
                        space,
                        ty,
                        ds,
                        n: n as u8,
                        addr,
                    }
                }
            }
            "cvta" => {
                let ty = one_ty(self)?;
                if ty.bits() != 32 && ty.bits() != 64 || ty.is_float() {
                    return self.err("cvta requires .u32 or .u64");
                }
                let space = space_of(mods);
                if !matches!(
                    space,
                    Space::Global | Space::Shared | Space::Local | Space::Const
                ) {
                    return self.err("cvta requires .global, .shared, .local or .const");
                }
                self.nops(ops, 2)?;
                let d = self.dreg(&ops[0])?;
                let a = self.src(&ops[1], ty)?;
                Op::Cvta {
                    to_generic: !has("to"),
                    space,
                    ty,
                    d,
                    a,
                }
            }
            "add" | "sub" | "mul" | "mul24" | "div" | "rem" | "min" | "max" | "and" | "or"
            | "xor" | "shl" | "shr" | "copysign" => {
                let ty = one_ty(self)?;
                self.nops(ops, 3)?;
                if has("cc") {
                    return self.err("carry-chain arithmetic (.cc) is not supported");
                }
                let d = self.dreg(&ops[0])?;
                if ty.is_float() {
                    if ty == Ty::F16 {
                        return self.err(".f16 arithmetic is not supported");
                    }
                    let op = match opc {
                        "add" => FBinOp::Add,
                        "sub" => FBinOp::Sub,
                        "mul" => FBinOp::Mul,
                        "div" => FBinOp::Div,
                        "min" if has("NaN") => FBinOp::MinNan,
                        "max" if has("NaN") => FBinOp::MaxNan,
                        "min" => FBinOp::Min,
                        "max" => FBinOp::Max,
                        "copysign" => FBinOp::Copysign,
                        _ => {
                            return self
                                .err(format!("'{opc}' is not defined for floating-point types"))
                        }
                    };
                    let rnd = rnd_of(mods);
                    if op == FBinOp::Div && rnd.is_none() && !has("approx") && !has("full") {
                        return self.err("div on floating-point types requires .rn/.rz/.rm/.rp, .approx or .full");
                    }
                    let a = self.src(&ops[1], ty)?;
                    let b = self.src(&ops[2], ty)?;
                    Op::FBin {
                        op,
                        ty,
                        rnd: rnd.unwrap_or(Rnd::N),
                        d,
                        a,
                        b,
                    }
                } else {
                    let is_pred = ty == Ty::Pred;
                    let op = match opc {
                        "add" if has("sat") => IBinOp::AddSat,
                        "sub" if has("sat") => IBinOp::SubSat,
                        "add" => IBinOp::Add,
                        "sub" => IBinOp::Sub,
                        "mul" if has("hi") => IBinOp::MulHi,
                        "mul" if has("wide") => IBinOp::MulWide,
                        "mul" => IBinOp::MulLo,
                        "mul24" if has("hi") => IBinOp::Mul24Hi,
                        "mul24" => IBinOp::Mul24Lo,
                        "div" => IBinOp::Div,
                        "rem" => IBinOp::Rem,
                        "min" => IBinOp::Min,
                        "max" => IBinOp::Max,
                        "and" => IBinOp::And,
                        "or" => IBinOp::Or,
                        "xor" => IBinOp::Xor,
                        "shl" => IBinOp::Shl,
                        "shr" => IBinOp::Shr,
                        _ => return self.err(format!("'{opc}' requires a floating-point type")),
                    };
                    if is_pred && !matches!(op, IBinOp::And | IBinOp::Or | IBinOp::Xor) {
                        return self.err(format!("'{opc}' is not defined for .pred"));
                    }
                    if matches!(op, IBinOp::AddSat | IBinOp::SubSat) && ty != Ty::S32 {
                        return self.err(".sat integer arithmetic requires .s32");
                    }
                    if matches!(op, IBinOp::Mul24Lo | IBinOp::Mul24Hi)
                        && !matches!(ty, Ty::U32 | Ty::S32)
                    {
                        return self.err("mul24 requires .u32 or .s32");
                    }
                    if op == IBinOp::MulWide && ty.widen().is_none() {
                        return self.err("mul.wide requires a 16- or 32-bit integer type");
                    }
                    let a = self.src(&ops[1], ty)?;
                    let bt = if matches!(op, IBinOp::Shl | IBinOp::Shr) {
                        Ty::U32
                    } else {
                        ty
                    };
                    let b = self.src(&ops[2], bt)?;
                    Op::IBin { op, ty, d, a, b }
                }
            }
            "abs" | "neg" | "not" | "cnot" | "popc" | "clz" | "brev" | "bfind" | "sqrt" | "rcp"
            | "rsqrt" | "sin" | "cos" | "ex2" | "lg2" | "tanh" => {
                let ty = one_ty(self)?;
                self.nops(ops, 2)?;
                let d = self.dreg(&ops[0])?;
                let a = self.src(&ops[1], ty)?;
                if ty.is_float() {
                    if ty == Ty::F16 {
                        return self.err(".f16 arithmetic is not supported");
                    }
                    let op = match opc {
                        "abs" => FUnOp::Abs,
                        "neg" => FUnOp::Neg,
                        "sqrt" => FUnOp::Sqrt,
                        "rcp" => FUnOp::Rcp,
                        "rsqrt" => FUnOp::Rsqrt,
                        "sin" => FUnOp::Sin,
                        "cos" => FUnOp::Cos,
                        "ex2" => FUnOp::Ex2,
                        "lg2" => FUnOp::Lg2,
                        "tanh" => FUnOp::Tanh,
                        _ => return self.err(format!("'{opc}' requires an integer type")),
                    };
                    let rnd = rnd_of(mods);
                    if matches!(op, FUnOp::Sqrt | FUnOp::Rcp) && rnd.is_none() && !has("approx") {
                        return self.err(format!("{opc} requires a rounding modifier or .approx"));
                    }
                    Op::FUn {
                        op,
                        ty,
                        rnd: rnd.unwrap_or(Rnd::N),
                        d,
                        a,
                    }
                } else {
                    let op = match opc {
                        "abs" => IUnOp::Abs,
                        "neg" => IUnOp::Neg,
                        "not" => IUnOp::Not,
                        "cnot" => IUnOp::Cnot,
                        "popc" => IUnOp::Popc,
                        "clz" => IUnOp::Clz,
                        "brev" => IUnOp::Brev,
                        "bfind" if has("shiftamt") => IUnOp::BfindShift,
                        "bfind" => IUnOp::Bfind,
                        _ => return self.err(format!("'{opc}' requires a floating-point type")),
                    };
                    if ty == Ty::Pred && op != IUnOp::Not {
                        return self.err(format!("'{opc}' is not defined for .pred"));
                    }
                    Op::IUn { op, ty, d, a }
                }
            }
            "mad" | "fma" => {
                let ty = one_ty(self)?;
                self.nops(ops, 4)?;
                let d = self.dreg(&ops[0])?;
                if ty.is_float() {
                    if ty == Ty::F16 {
                        return self.err(".f16 arithmetic is not supported");
                    }
                    let Some(rnd) = rnd_of(mods) else {
                        return self.err(format!(
                            "{opc}.{} requires a rounding modifier",
                            format!("{ty:?}").to_lowercase()
                        ));
                    };
                    let a = self.src(&ops[1], ty)?;
                    let b = self.src(&ops[2], ty)?;
                    let c = self.src(&ops[3], ty)?;
                    Op::Fma {
                        ty,
                        rnd,
                        d,
                        a,
                        b,
                        c,
                    }
                } else {
                    if opc == "fma" || ty == Ty::Pred {
                        return self.err("fma requires a floating-point type");
                    }
                    let mode = if has("hi") {
                        MadMode::Hi
                    } else if has("wide") {
                        MadMode::Wide
                    } else {
                        MadMode::Lo
                    };
                    let ct = if mode == MadMode::Wide {
                        match ty.widen() {
                            Some(w) => w,
                            None => return self.err("mad.wide requires a 16- or 32-bit type"),
                        }
                    } else {
                        ty
                    };
                    let a = self.src(&ops[1], ty)?;
                    let b = self.src(&ops[2], ty)?;
                    let c = self.src(&ops[3], ct)?;
                    Op::IMad {
                        mode,
                        ty,
                        d,
                        a,
                        b,
                        c,
                    }
                }
            }
            "bfe" => {
                let ty = one_ty(self)?;
                if !matches!(ty, Ty::U32 | Ty::S32 | Ty::U64 | Ty::S64) {
                    return self.err("bfe requires .u32/.s32/.u64/.s64");
                }
                self.nops(ops, 4)?;
                let d = self.dreg(&ops[0])?;
                let a = self.src(&ops[1], ty)?;
                let b = self.src(&ops[2], Ty::U32)?;
                let c = self.src(&ops[3], Ty::U32)?;
                Op::Bfe { ty, d, a, b, c }
            }
            "bfi" => {
                let ty = one_ty(self)?;
                if !matches!(ty, Ty::B32 | Ty::B64) {
                    return self.err("bfi requires .b32/.b64");
                }
                self.nops(ops, 5)?;
                let d = self.dreg(&ops[0])?;
                let f = self.src(&ops[1], ty)?;
                let b = self.src(&ops[2], ty)?;
                let pos = self.src(&ops[3], Ty::U32)?;
                let len = self.src(&ops[4], Ty::U32)?;
                Op::Bfi {
                    ty,
                    d,
                    f,
                    b,
                    pos,
                    len,
                }
            }
            "shf" => {
                if one_ty(self)? != Ty::B32 {
                    return self.err("shf requires .b32");
                }
                let left = match (mods.iter().any(|m| m == "l"), mods.iter().any(|m| m == "r")) {
                    (true, false) => true,
                    (false, true) => false,
                    _ => return self.err("shf requires one of .l and .r"),
                };
                let wrap = match (
                    mods.iter().any(|m| m == "wrap"),
                    mods.iter().any(|m| m == "clamp"),
                ) {
                    (true, false) => true,
                    (false, true) => false,
                    _ => return self.err("shf requires one of .wrap and .clamp"),
                };
                self.nops(ops, 4)?;
                let d = self.dreg(&ops[0])?;
                let a = self.src(&ops[1], Ty::B32)?;
                let b = self.src(&ops[2], Ty::B32)?;
                let c = self.src(&ops[3], Ty::U32)?;
                Op::Shf {
                    left,
                    wrap,
                    d,
                    a,
                    b,
                    c,
                }
            }
            "prmt" => {
                if one_ty(self)? != Ty::B32 {
                    return self.err("prmt requires .b32");
                }
                if mods.len() > 1 {
                    return self.err("prmt modes other than the default are not supported");
                }
                self.nops(ops, 4)?;
                let d = self.dreg(&ops[0])?;
                let a = self.src(&ops[1], Ty::B32)?;
                let b = self.src(&ops[2], Ty::B32)?;
                let c = self.src(&ops[3], Ty::B32)?;
                Op::Prmt { d, a, b, c }
            }
            "setp" | "set" => {
                let Some(cmp) = mods.iter().find_map(|m| Cmp::parse(m)) else {
                    return self.err(format!("'{opc}' requires a comparison"));
                };
                let bop = mods.iter().find_map(|m| match m.as_str() {
                    "and" => Some(BoolOp::And),
                    "or" => Some(BoolOp::Or),
                    "xor" => Some(BoolOp::Xor),
                    _ => None,
                });
                let (dty, sty) = match (opc, types.as_slice()) {
                    ("setp", [t]) => (Ty::Pred, *t),
                    ("set", [d, s]) => (*d, *s),
                    _ => return self.err(format!("bad type suffixes for '{opc}'")),
                };
                if sty == Ty::Pred || sty == Ty::F16 {
                    return self.err(format!("'{opc}' does not support this source type"));
                }
                let is_float_cmp = matches!(
                    cmp,
                    Cmp::Equ
                        | Cmp::Neu
                        | Cmp::Ltu
                        | Cmp::Leu
                        | Cmp::Gtu
                        | Cmp::Geu
                        | Cmp::Num
                        | Cmp::Nan
                );
                let is_uns_cmp = matches!(cmp, Cmp::Lo | Cmp::Ls | Cmp::Hi | Cmp::Hs);
                if (is_float_cmp && !sty.is_float()) || (is_uns_cmp && sty.is_float()) {
                    return self.err("comparison not valid for this type");
                }
                let want = if bop.is_some() { 4 } else { 3 };
                self.nops(ops, want)?;
                let (p, q) = match &ops[0].po {
                    PO::Pair(a, b) if opc == "setp" => {
                        let pa = Opnd {
                            po: PO::Name(a.clone()),
                            ..ops[0].clone()
                        };
                        let pb = Opnd {
                            po: PO::Name(b.clone()),
                            ..ops[0].clone()
                        };
                        (self.dreg(&pa)?, self.dreg(&pb)?)
                    }
                    _ => (self.dreg(&ops[0])?, NO_REG),
                };
                let a = self.src(&ops[1], sty)?;
                let b = self.src(&ops[2], sty)?;
                let comb = match bop {
                    Some(op) => {
                        let (pred, neg) = self.pred(&ops[3])?;
                        Some(Combine { op, pred, neg })
                    }
                    None => None,
                };
                if opc == "setp" {
                    Op::Setp {
                        cmp,
                        ty: sty,
                        p,
                        q,
                        a,
                        b,
                        comb,
                    }
                } else {
                    if !matches!(dty, Ty::U32 | Ty::S32 | Ty::F32) {
                        return self.err("set destination type must be .u32, .s32 or .f32");
                    }
                    Op::Set {
                        cmp,
                        dty,
                        sty,
                        d: p,
                        a,
                        b,
                        comb,
                    }
                }
            }
            "selp" => {
                let ty = one_ty(self)?;
                self.nops(ops, 4)?;
                let d = self.dreg(&ops[0])?;
                let a = self.src(&ops[1], ty)?;
                let b = self.src(&ops[2], ty)?;
                let c = self.src(&ops[3], Ty::Pred)?;
                Op::Selp { ty, d, a, b, c }
            }
            "testp" => {
                let ty = one_ty(self)?;
                if !matches!(ty, Ty::F32 | Ty::F64) {
                    return self.err("testp requires .f32 or .f64");
                }
                let Some(kind) = mods.iter().find_map(|m| match m.as_str() {
                    "finite" => Some(TestpKind::Finite),
                    "infinite" => Some(TestpKind::Infinite),
                    "number" => Some(TestpKind::Number),
                    "notanumber" => Some(TestpKind::NotANumber),
                    "normal" => Some(TestpKind::Normal),
                    "subnormal" => Some(TestpKind::Subnormal),
                    _ => None,
                }) else {
                    return self.err("testp requires a test kind");
                };
                self.nops(ops, 2)?;
                let p = self.dreg(&ops[0])?;
                let a = self.src(&ops[1], ty)?;
                Op::Testp { kind, ty, p, a }
            }
            "cvt" => {
                let [dty, sty] = types.as_slice() else {
                    return self.err("cvt requires destination and source types");
                };
                let (dty, sty) = (*dty, *sty);
                if dty == Ty::Pred || sty == Ty::Pred {
                    return self.err("cvt does not support .pred");
                }
                let rnd = mods
                    .iter()
                    .find_map(|m| match m.as_str() {
                        "rn" => Some(CvtRnd::F(Rnd::N)),
                        "rz" => Some(CvtRnd::F(Rnd::Z)),
                        "rm" => Some(CvtRnd::F(Rnd::M)),
                        "rp" => Some(CvtRnd::F(Rnd::P)),
                        "rni" => Some(CvtRnd::I(Rnd::N)),
                        "rzi" => Some(CvtRnd::I(Rnd::Z)),
                        "rmi" => Some(CvtRnd::I(Rnd::M)),
                        "rpi" => Some(CvtRnd::I(Rnd::P)),
                        _ => None,
                    })
                    .unwrap_or(CvtRnd::None);
                match (dty.is_float(), sty.is_float(), rnd) {
                    (false, true, CvtRnd::I(_)) => {}
                    (false, true, _) => {
                        return self.err("float-to-integer cvt requires .rni/.rzi/.rmi/.rpi")
                    }
                    (true, false, CvtRnd::F(_)) => {}
                    (true, false, _) => {
                        return self.err("integer-to-float cvt requires .rn/.rz/.rm/.rp")
                    }
                    (false, false, CvtRnd::None) => {}
                    (false, false, _) => {
                        return self.err("integer-to-integer cvt takes no rounding modifier")
                    }
                    (true, true, r) => {
                        if dty.bits() < sty.bits() && !matches!(r, CvtRnd::F(_)) {
                            return self.err("narrowing float cvt requires .rn/.rz/.rm/.rp");
                        }
                        if dty.bits() > sty.bits() && r != CvtRnd::None {
                            return self.err("widening float cvt takes no rounding modifier");
                        }
                        if dty.bits() == sty.bits() && matches!(r, CvtRnd::F(_)) {
                            return self.err("same-size float cvt takes only integer rounding");
                        }
                    }
                }
                self.nops(ops, 2)?;
                let d = self.dreg(&ops[0])?;
                let a = self.src(&ops[1], sty)?;
                Op::Cvt {
                    dty,
                    sty,
                    rnd,
                    sat: has("sat"),
                    d,
                    a,
                }
            }
            "atom" | "red" => {
                let ty = match types.as_slice() {
                    [t] => *t,
                    _ => return self.err(format!("'{opc}' requires one type suffix")),
                };
                let space = space_of(mods);
                if !matches!(space, Space::Global | Space::Shared | Space::Generic) {
                    return self.err("atomics require .global, .shared or generic addressing");
                }
                let Some(aop) = mods.iter().find_map(|m| match m.as_str() {
                    "add" => Some(AtomOp::Add),
                    "min" => Some(AtomOp::Min),
                    "max" => Some(AtomOp::Max),
                    "exch" => Some(AtomOp::Exch),
                    "cas" => Some(AtomOp::Cas),
                    "and" => Some(AtomOp::And),
                    "or" => Some(AtomOp::Or),
                    "xor" => Some(AtomOp::Xor),
                    "inc" => Some(AtomOp::Inc),
                    "dec" => Some(AtomOp::Dec),
                    _ => None,
                }) else {
                    return self.err(format!("'{opc}' requires an operation"));
                };
                let ok = match aop {
                    AtomOp::Add => matches!(
                        ty,
                        Ty::U32 | Ty::S32 | Ty::U64 | Ty::S64 | Ty::F32 | Ty::F64
                    ),
                    AtomOp::Min | AtomOp::Max => {
                        matches!(ty, Ty::U32 | Ty::S32 | Ty::U64 | Ty::S64)
                    }
                    AtomOp::Inc | AtomOp::Dec => ty == Ty::U32,
                    AtomOp::And | AtomOp::Or | AtomOp::Xor => matches!(ty, Ty::B32 | Ty::B64),
                    AtomOp::Exch | AtomOp::Cas => {
                        matches!(
                            ty,
                            Ty::B32 | Ty::B64 | Ty::U32 | Ty::U64 | Ty::S32 | Ty::S64
                        )
                    }
                };
                if !ok {
                    return self.err(format!("{opc} operation not supported for this type"));
                }
                let nsrc = if aop == AtomOp::Cas { 2 } else { 1 };
                let has_d = opc == "atom";
                if opc == "red" && matches!(aop, AtomOp::Cas | AtomOp::Exch) {
                    return self.err("red does not support exch/cas");
                }
                self.nops(ops, nsrc + 1 + has_d as usize)?;
                let mut k = 0;
                let d = if has_d {
                    k = 1;
                    self.dreg(&ops[0])?
                } else {
                    self.sink()
                };
                let addr = self.addr(&ops[k])?;
                let b = self.src(&ops[k + 1], ty)?;
                let c = if nsrc == 2 {
                    self.src(&ops[k + 2], ty)?
                } else {
                    Src::Imm(0)
                };
                Op::Atom {
                    space,
                    op: aop,
                    ty,
                    d,
                    addr,
                    b,
                    c,
                }
            }
            "bar" | "barrier" => {
                if has("warp") {
                    self.nops(ops, 1)?;
                    Op::WarpSync {
                        mask: self.src(&ops[0], Ty::B32)?,
                    }
                } else if has("arrive") || has("red") {
                    return self.err("bar.arrive / bar.red are not supported");
                } else {
                    if ops.is_empty() || ops.len() > 2 {
                        return self.err("bar.sync takes a barrier id and optional thread count");
                    }
                    for o in ops {
                        self.src(o, Ty::U32)?;
                    }
                    Op::Bar
                }
            }
            "shfl" => {
                if !has("sync") {
                    return self.err("shfl without .sync is not supported (sm_70 and later)");
                }
                let Some(mode) = mods.iter().find_map(|m| match m.as_str() {
                    "up" => Some(ShflMode::Up),
                    "down" => Some(ShflMode::Down),
                    "bfly" => Some(ShflMode::Bfly),
                    "idx" => Some(ShflMode::Idx),
                    _ => None,
                }) else {
                    return self.err("shfl requires a mode (.up, .down, .bfly, .idx)");
                };
                if one_ty(self)? != Ty::B32 {
                    return self.err("shfl.sync requires .b32");
                }
                self.nops(ops, 5)?;
                if matches!(ops[0].po, PO::Pair(..)) {
                    return self.err("shfl with a predicate destination is not supported");
                }
                Op::Shfl {
                    mode,
                    d: self.dreg(&ops[0])?,
                    a: self.src(&ops[1], Ty::B32)?,
                    b: self.src(&ops[2], Ty::B32)?,
                    c: self.src(&ops[3], Ty::B32)?,
                    mask: self.src(&ops[4], Ty::B32)?,
                }
            }
            "vote" => {
                if !has("sync") {
                    return self.err("vote without .sync is not supported (sm_70 and later)");
                }
                let Some(mode) = mods.iter().find_map(|m| match m.as_str() {
                    "any" => Some(VoteMode::Any),
                    "all" => Some(VoteMode::All),
                    "uni" => Some(VoteMode::Uni),
                    "ballot" => Some(VoteMode::Ballot),
                    _ => None,
                }) else {
                    return self.err("vote requires a mode (.any, .all, .uni, .ballot)");
                };
                let want = if mode == VoteMode::Ballot {
                    Ty::B32
                } else {
                    Ty::Pred
                };
                if one_ty(self)? != want {
                    return self.err("vote.sync.ballot needs .b32, the other modes .pred");
                }
                self.nops(ops, 3)?;
                let (p, neg) = self.pred(&ops[1])?;
                Op::Vote {
                    mode,
                    d: self.dreg(&ops[0])?,
                    p,
                    neg,
                    mask: self.src(&ops[2], Ty::B32)?,
                }
            }
            "membar" | "fence" | "nanosleep" | "pmevent" => Op::Nop,
            "bra" | "brx" => {
                if opc == "brx" {
                    return self.err("brx.idx is not supported");
                }
                self.nops(ops, 1)?;
                let PO::Name(l) = &ops[0].po else {
                    return perr(ops[0].line, ops[0].col, "expected branch target label");
                };
                return Ok((Op::Bra { target: 0 }, Some(Fixup::Label(l.clone()))));
            }
            "call" => return self.call(ops),
            "ret" => Op::Ret,
            "exit" => Op::Exit,
            "trap" | "brkpt" => Op::Trap,
            _ => return self.err(format!("unsupported instruction '{opc}'")),
        };
        if !ops.is_empty() && matches!(op, Op::Ret | Op::Exit | Op::Trap) {
            return self.err(format!("'{opc}' takes no operands"));
        }
        Ok((op, None))
    }

    fn call(&mut self, ops: &[Opnd]) -> PResult<(Op, Option<Fixup>)> {
        let (ret, name, args): (Option<&Vec<Opnd>>, &Opnd, Option<&Vec<Opnd>>) = match ops {
            [n] => (None, n, None),
            [Opnd {
                po: PO::List(r), ..
            }, n] => (Some(r), n, None),
            [n, Opnd {
                po: PO::List(a), ..
            }] => (None, n, Some(a)),
            [Opnd {
                po: PO::List(r), ..
            }, n, Opnd {
                po: PO::List(a), ..
            }] => (Some(r), n, Some(a)),
            _ => return self.err("malformed call"),
        };
        let PO::Name(fname) = &name.po else {
            return perr(
                name.line,
                name.col,
                "expected function name (indirect calls are not supported)",
            );
        };
        let ret = match ret.map(|r| r.as_slice()) {
            None | Some([]) => None,
            Some([o]) => Some(match &o.po {
                PO::Name(n) => match self.lookup(o, n)? {
                    Named::Reg(r) => RetDst::Reg(r),
                    Named::Sym {
                        sym: Sym::Param(off),
                        size,
                    } => RetDst::Param { off, size },
                    Named::Sym { .. } => {
                        return perr(o.line, o.col, "return value must be a .param or register")
                    }
                },
                _ => return perr(o.line, o.col, "malformed return operand"),
            }),
            Some(_) => return self.err("multiple return values are not supported"),
        };
        let mut av = Vec::new();
        for o in args.map(|a| a.as_slice()).unwrap_or(&[]) {
            av.push(match &o.po {
                PO::Name(n) => match self.lookup(o, n)? {
                    Named::Reg(r) => ArgSrc::Val(Src::Reg(r)),
                    Named::Sym {
                        sym: Sym::Param(off),
                        size,
                    } => ArgSrc::Param { off, size },
                    Named::Sym { .. } => {
                        return perr(
                            o.line,
                            o.col,
                            "argument must be a .param, register or immediate",
                        )
                    }
                },
                PO::Lit(Lit::Int(v)) => ArgSrc::Val(Src::Imm(*v)),
                PO::Lit(Lit::F32(v)) => ArgSrc::Val(Src::Imm(*v as u64)),
                PO::Lit(Lit::F64(v)) => ArgSrc::Val(Src::Imm(*v)),
                _ => return perr(o.line, o.col, "unsupported call argument"),
            });
        }
        let nargs = av.len();
        let has_ret = ret.is_some();
        Ok((
            Op::Call {
                callee: 0,
                args: av.into(),
                ret,
            },
            Some(Fixup::Callee {
                name: fname.clone(),
                nargs,
                has_ret,
            }),
        ))
    }
}
