//! The recursive-descent-free, line-oriented parser and its name/type resolution.
//!
//! One pass reads the text into functions whose instructions already carry the text's
//! value, block and slot numbers. What cannot be known on the way (callees and globals
//! named later, result types that copy a later-defined operand's type) is recorded and
//! resolved at the end: callees and globals by name, then result types by following
//! each result's "same type as operand vN" link to a known type, iteratively.

use super::error::{ParseError, ParseErrors};
use super::lexer::{line_of, Lexer, Tok, Token};
use super::positions::{escape_input, FuncPositions, SourceMap};
use crate::dfg::ValueDef;
use crate::entities::{Block, FuncId, GlobalId, Inst, Slot, Value};
use crate::function::{FuncKind, Function, LoopAttrs, Signature, SlotData, UnrollHint};
use crate::instructions::{
    AtomicOp, BlockCall, FloatCC, InstructionData, IntCC, IntFlags, JumpTableData, MemFlags,
    MemOrder, MemScope, Opcode, ShflMode, SpecialReg, ValueList, VoteMode,
};
use crate::module::{GlobalData, Linkage};
use crate::types::{AddrSpace, Type};
use cranelift_entity::EntityRef;
use rustc_hash::FxHashMap;
use std::borrow::Cow;

/// Stop collecting after this many errors (the rest are usually consequences).
const MAX_ERRORS: usize = 100;
/// "No position" / "no dependency".
const NONE: u32 = u32::MAX;

/// Marker for "an error was recorded"; callers recover by skipping input.
pub(super) struct Fail;
type PResult<T> = Result<T, Fail>;

#[derive(Copy, Clone, PartialEq, Eq)]
enum ValKind {
    Undef,
    Param,
    Result,
    /// Named as the result of a line that failed to parse.
    Broken,
}

#[derive(Copy, Clone, PartialEq, Eq)]
enum Infer {
    Fresh,
    Visiting,
    Done,
}

/// What the parser knows about one value number of a function.
#[derive(Copy, Clone)]
struct ValInfo {
    kind: ValKind,
    /// The type, once known.
    ty: Option<Type>,
    /// For a result typed like one of its operands: that operand's number.
    dep: u32,
    /// Definition offset; while undefined, the first use's offset (NONE: unseen).
    pos: u32,
    infer: Infer,
}

const FRESH_VAL: ValInfo = ValInfo {
    kind: ValKind::Undef,
    ty: None,
    dep: NONE,
    pos: NONE,
    infer: Infer::Fresh,
};

/// Whether a block or slot number was defined, and where (or where first used).
#[derive(Copy, Clone)]
struct EntInfo {
    defined: bool,
    pos: u32,
}

const FRESH_ENT: EntInfo = EntInfo {
    defined: false,
    pos: NONE,
};

/// A reference to a function or global by name, resolved after the whole input is read.
struct Pending<'a> {
    inst: Inst,
    name: Cow<'a, str>,
    pos: u32,
    /// The value number the text assigns the result to, if any.
    result: Option<u32>,
}

/// A function being parsed, with the bookkeeping that resolution needs.
struct FuncState<'a> {
    func: Function,
    vals: Vec<ValInfo>,
    blocks: Vec<EntInfo>,
    slots: Vec<EntInfo>,
    /// The block instructions go to; `None` before the first label or after a broken one
    /// (instructions are then still parsed and created, but not laid out).
    cur_block: Option<Block>,
    seen_block: bool,
    calls: Vec<Pending<'a>>,
    globals: Vec<Pending<'a>>,
    /// Where each instruction's line starts (blocks and slots: `blocks`, `slots`).
    inst_pos: cranelift_entity::SecondaryMap<Inst, u32>,
}

impl FuncState<'_> {
    fn ensure_value(&mut self, n: u32) {
        let n = n as usize;
        if n >= self.vals.len() {
            self.vals.resize(n + 1, FRESH_VAL);
            while self.func.dfg.num_values() <= n {
                self.func.dfg.make_detached_value(Type::I32);
            }
        }
    }

    fn ensure_block(&mut self, n: u32) {
        let n = n as usize;
        if n >= self.blocks.len() {
            self.blocks.resize(n + 1, FRESH_ENT);
            while self.func.dfg.num_blocks() <= n {
                self.func.dfg.make_block();
            }
        }
    }

    fn ensure_slot(&mut self, n: u32) {
        let n = n as usize;
        if n >= self.slots.len() {
            self.slots.resize(n + 1, FRESH_ENT);
            while self.func.slots.len() <= n {
                self.func.slots.push(SlotData { size: 0, align: 1 });
            }
        }
    }
}

/// What an instruction spelling (before any `.type` suffix) stands for.
#[derive(Copy, Clone)]
enum Mnemonic {
    Op(Opcode),
    Atomic(AtomicOp),
    Reg(SpecialReg),
    Shfl(ShflMode),
    Vote(VoteMode),
}

/// `atomic_<op>` spellings, indexed by `AtomicOp as usize` (checked by a unit test).
const ATOMIC_NAMES: [&str; 11] = [
    "atomic_add",
    "atomic_and",
    "atomic_or",
    "atomic_xor",
    "atomic_smin",
    "atomic_smax",
    "atomic_umin",
    "atomic_umax",
    "atomic_exch",
    "atomic_inc",
    "atomic_dec",
];

/// `shfl_<mode>` spellings, indexed by `ShflMode as usize`.
const SHFL_NAMES: [&str; 4] = ["shfl_up", "shfl_down", "shfl_bfly", "shfl_idx"];

/// `vote_<mode>` spellings, indexed by `VoteMode as usize`.
const VOTE_NAMES: [&str; 4] = ["vote_any", "vote_all", "vote_uni", "vote_ballot"];

/// Does `opcode` take its result type from an operand ([`InstructionData::type_operands`])?
/// Such an instruction's type suffix is optional (`iadd.i32 v1, v2`).
fn infers_type(opcode: Opcode) -> bool {
    opcode.is_int_binary()
        || opcode.is_float_binary()
        || ((opcode.is_int_unary() || opcode.is_float_unary()) && !opcode.is_cast())
        || matches!(
            opcode,
            Opcode::Freeze
                | Opcode::Fma
                | Opcode::Select
                | Opcode::PtrAdd
                | Opcode::AtomicRmw
                | Opcode::AtomicCas
                | Opcode::Shfl
        )
}

/// How an instruction's result type is found.
enum TyRule {
    /// The instruction produces no value.
    NoResult,
    /// Known while parsing.
    Known(Type),
    /// The type of this operand (value number).
    Same(Value),
    /// Found when the callee / global is resolved.
    Deferred,
}

/// The parser state.
pub(super) struct Parser<'a> {
    src: &'a str,
    lex: Lexer<'a>,
    tok: Token<'a>,
    /// `(offset, message)`, converted to line/column at the end.
    errors: Vec<(u32, String)>,
    /// Every instruction spelling before the type suffix: opcodes, `atomic_<op>`, and
    /// special-register names (one hash lookup per instruction).
    mnemonics: FxHashMap<&'static str, Mnemonic>,
    /// Entity numbers must be below this.
    limit: u32,
    /// Scratch list of operands (reused, so parsing allocates per instruction only
    /// what the function keeps).
    vals: Vec<Value>,
    /// Module mode (`parse_module`) or single-function mode.
    module_mode: bool,
}

/// Levenshtein distance of two short words (bytes), in O(|a|·|b|) with one row.
fn edit_distance(a: &str, b: &str) -> usize {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, &ca) in a.iter().enumerate() {
        let mut diag = row[0];
        row[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let next = (diag + usize::from(ca != cb))
                .min(row[j] + 1)
                .min(row[j + 1] + 1);
            diag = row[j + 1];
            row[j + 1] = next;
        }
    }
    row[b.len()]
}

/// A short description of a token for messages.
fn describe(t: Token<'_>) -> String {
    match t.kind {
        Tok::Newline => "end of line".into(),
        Tok::Eof => "end of input".into(),
        Tok::Unterminated => "an unterminated quoted name".into(),
        // Binary input is not echoed raw.
        _ => format!("`{}`", escape_input(t.text)),
    }
}

/// The number in `prefix` + decimal digits (no leading zeros, as the printer writes).
fn entity_number(text: &str, prefix: &str) -> Option<u32> {
    let d = text.strip_prefix(prefix)?;
    if d.is_empty() || d.len() > 10 || !d.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    if d.len() > 1 && d.starts_with('0') {
        return None;
    }
    d.parse::<u64>().ok().and_then(|n| u32::try_from(n).ok())
}

/// An integer literal: `-`? then decimal digits or `0x` and hex digits, magnitude at most
/// `u64::MAX`.
fn parse_int(text: &str) -> Option<i128> {
    let (neg, body) = match text.strip_prefix('-') {
        Some(b) => (true, b),
        None => (false, text),
    };
    let (radix, digits) = match body.strip_prefix("0x").or_else(|| body.strip_prefix("0X")) {
        Some(h) => (16, h),
        None => (10, body),
    };
    if digits.is_empty() {
        return None;
    }
    let mut v: u64 = 0;
    for b in digits.bytes() {
        let d = (b as char).to_digit(radix)?;
        v = v.checked_mul(u64::from(radix))?.checked_add(u64::from(d))?;
    }
    Some(if neg { -i128::from(v) } else { i128::from(v) })
}

/// Does `s` look like an integer literal (whatever its size)?
fn is_int_syntax(s: &str) -> bool {
    let body = s.strip_prefix('-').unwrap_or(s);
    match body.strip_prefix("0x").or_else(|| body.strip_prefix("0X")) {
        Some(h) => !h.is_empty() && h.bytes().all(|b| b.is_ascii_hexdigit()),
        None => !body.is_empty() && body.bytes().all(|b| b.is_ascii_digit()),
    }
}

/// Is `s` a decimal float the grammar allows: `-?[0-9]+(.[0-9]*)?([eE][+-]?[0-9]+)?`?
fn is_decimal_float(s: &str) -> bool {
    let b = s.strip_prefix('-').unwrap_or(s).as_bytes();
    let mut i = 0;
    let digits = |i: &mut usize| {
        let st = *i;
        while *i < b.len() && b[*i].is_ascii_digit() {
            *i += 1;
        }
        *i - st
    };
    if digits(&mut i) == 0 {
        return false;
    }
    if i < b.len() && b[i] == b'.' {
        i += 1;
        digits(&mut i);
    }
    if i < b.len() && (b[i] == b'e' || b[i] == b'E') {
        i += 1;
        if i < b.len() && (b[i] == b'+' || b[i] == b'-') {
            i += 1;
        }
        if digits(&mut i) == 0 {
            return false;
        }
    }
    i == b.len()
}

/// The IEEE bits of a float literal of type `ty` (f32 bits in the low 32).
fn parse_float_bits(text: &str, ty: Type) -> Result<u64, String> {
    let is32 = ty == Type::F32;
    match text {
        "inf" => {
            return Ok(if is32 {
                f32::INFINITY.to_bits().into()
            } else {
                f64::INFINITY.to_bits()
            })
        }
        "-inf" => {
            return Ok(if is32 {
                f32::NEG_INFINITY.to_bits().into()
            } else {
                f64::NEG_INFINITY.to_bits()
            })
        }
        _ => {}
    }
    if text.starts_with("0x") || text.starts_with("0X") {
        let bits = parse_int(text).ok_or_else(|| format!("invalid hex float bits `{text}`"))?;
        if is32 && bits > i128::from(u32::MAX) {
            return Err(format!("f32 bits `{text}` do not fit in 32 bits"));
        }
        return Ok(bits as u64);
    }
    if !is_decimal_float(text) {
        return Err(format!("invalid float literal `{text}`"));
    }
    let bits = if is32 {
        text.parse::<f32>().map(|f| u64::from(f.to_bits()))
    } else {
        text.parse::<f64>().map(f64::to_bits)
    };
    bits.map_err(|_| format!("invalid float literal `{text}`"))
}

/// Decode the inside of `@"..."`: `\\`, `\"` and `\HH` (ASCII only).
fn decode_quoted(raw: &str) -> Result<String, String> {
    let mut out = String::with_capacity(raw.len());
    let mut chars = raw.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('\\') => out.push('\\'),
            Some('"') => out.push('"'),
            Some(h) => {
                let l = chars.next();
                let byte = h
                    .to_digit(16)
                    .zip(l.and_then(|l| l.to_digit(16)))
                    .map(|(h, l)| h * 16 + l)
                    .filter(|&b| b < 0x80)
                    .ok_or_else(|| {
                        "invalid escape in quoted name (use \\\\, \\\" or \\HH below 80)"
                            .to_string()
                    })?;
                out.push(char::from(byte as u8));
            }
            None => return Err("invalid escape at the end of a quoted name".into()),
        }
    }
    Ok(out)
}

/// The parse result: globals and functions in text order.
pub(super) struct Parsed {
    pub globals: Vec<GlobalData>,
    pub functions: Vec<Function>,
    pub positions: SourceMap,
}

impl<'a> Parser<'a> {
    /// A parser over `src`; `module_mode` allows globals, calls, global addresses and any
    /// number of functions.
    pub fn new(src: &'a str, module_mode: bool) -> Parser<'a> {
        let mut lex = Lexer::new(src);
        let tok = lex.next_token();
        let mut mnemonics: FxHashMap<&'static str, Mnemonic> = Opcode::ALL
            .iter()
            .filter(|&&o| {
                !matches!(
                    o,
                    Opcode::AtomicRmw | Opcode::Sreg | Opcode::Shfl | Opcode::Vote
                )
            })
            .map(|&o| (o.name(), Mnemonic::Op(o)))
            .collect();
        mnemonics.extend(
            SpecialReg::ALL
                .iter()
                .map(|&r| (r.name(), Mnemonic::Reg(r))),
        );
        mnemonics.extend(
            AtomicOp::ALL
                .iter()
                .map(|&a| (ATOMIC_NAMES[a as usize], Mnemonic::Atomic(a))),
        );
        mnemonics.extend(
            ShflMode::ALL
                .iter()
                .map(|&m| (SHFL_NAMES[m as usize], Mnemonic::Shfl(m))),
        );
        mnemonics.extend(
            VoteMode::ALL
                .iter()
                .map(|&m| (VOTE_NAMES[m as usize], Mnemonic::Vote(m))),
        );
        let limit = (src.len() as u64)
            .saturating_mul(16)
            .clamp(1 << 16, u64::from(u32::MAX - 1)) as u32;
        Parser {
            src,
            lex,
            tok,
            errors: Vec::new(),
            mnemonics,
            limit,
            vals: Vec::new(),
            module_mode,
        }
    }

    fn advance(&mut self) {
        self.tok = self.lex.next_token();
    }

    fn error(&mut self, pos: u32, msg: impl Into<String>) -> Fail {
        if self.errors.len() < MAX_ERRORS {
            self.errors.push((pos, msg.into()));
        }
        Fail
    }

    fn stopped(&self) -> bool {
        self.errors.len() >= MAX_ERRORS
    }

    fn unexpected(&mut self, what: &str) -> Fail {
        let t = self.tok;
        self.error(t.pos, format!("expected {what}, found {}", describe(t)))
    }

    fn expect(&mut self, kind: Tok, what: &str) -> PResult<Token<'a>> {
        let t = self.tok;
        if t.kind == kind {
            self.advance();
            Ok(t)
        } else {
            Err(self.unexpected(what))
        }
    }

    fn expect_word(&mut self, word: &str) -> PResult<()> {
        if self.tok.kind == Tok::Ident && self.tok.text == word {
            self.advance();
            Ok(())
        } else {
            Err(self.unexpected(&format!("`{word}`")))
        }
    }

    fn at_eol(&self) -> bool {
        matches!(self.tok.kind, Tok::Newline | Tok::Eof)
    }

    fn expect_eol(&mut self) -> PResult<()> {
        match self.tok.kind {
            Tok::Newline => {
                self.advance();
                Ok(())
            }
            Tok::Eof => Ok(()),
            _ => Err(self.unexpected("end of line")),
        }
    }

    /// Skip the rest of the current line, newline included.
    fn skip_line(&mut self) {
        while !self.at_eol() {
            self.advance();
        }
        if self.tok.kind == Tok::Newline {
            self.advance();
        }
    }

    fn skip_newlines(&mut self) {
        while self.tok.kind == Tok::Newline {
            self.advance();
        }
    }

    /// Does the current token start a top-level item?
    fn at_item_keyword(&self) -> bool {
        self.tok.kind == Tok::Ident && matches!(self.tok.text, "global" | "func" | "kernel")
    }

    /// The line of an earlier offset (for "first defined at line N").
    fn line(&self, pos: u32) -> usize {
        line_of(self.lex.line_starts(), pos)
    }

    fn check_limit(&mut self, n: u32, pos: u32, prefix: &str) -> PResult<()> {
        if n < self.limit {
            Ok(())
        } else {
            Err(self.error(
                pos,
                format!(
                    "{prefix}{n}: entity number too large (must be below {} for an input of this size)",
                    self.limit
                ),
            ))
        }
    }

    /// A hint for an unknown opcode: the Gyre spelling of an LLVM instruction, or the
    /// nearest known mnemonic by edit distance (a typo).
    fn suggest(&self, mn: &str) -> Option<String> {
        const LLVM: &[(&str, &str)] = &[
            ("add", "iadd"),
            ("sub", "isub"),
            ("mul", "imul"),
            ("neg", "isub from 0, or fneg"),
            ("not", "xor with -1"),
            ("br", "jump or brif"),
            ("ret", "return"),
            ("switch", "br_table"),
            ("getelementptr", "ptradd"),
            ("gep", "ptradd"),
            ("alloca", "slot_addr of a slot"),
            ("phi", "block parameters, passed by the branches"),
            ("cmpxchg", "atomic_cas"),
            ("atomicrmw", "atomic_add, atomic_exch, ..."),
            ("const", "iconst or fconst"),
            ("mov", "a value is used directly; no copies"),
        ];
        if let Some(&(_, to)) = LLVM.iter().find(|&&(from, _)| from == mn) {
            return Some(format!("did you mean `{to}`?"));
        }
        if mn.len() > 32 {
            return None;
        }
        // A typo: one or two edits away (one for short words, where two reach anything).
        let max = if mn.len() <= 4 { 1 } else { 2 };
        let mut best: Option<(usize, &str)> = None;
        for &name in self.mnemonics.keys() {
            let d = edit_distance(mn, name);
            if d <= max && best.is_none_or(|(bd, bn)| (d, name) < (bd, bn)) {
                best = Some((d, name));
            }
        }
        best.map(|(_, name)| format!("did you mean `{name}`?"))
    }

    // ---------------------------------------------------------------- top level

    /// Parse the whole input.
    pub fn parse(mut self) -> Result<Parsed, ParseErrors> {
        match self.run() {
            Some(p) if self.errors.is_empty() => Ok(p),
            _ => Err(self.into_errors()),
        }
    }

    fn into_errors(mut self) -> ParseErrors {
        if self.errors.is_empty() {
            self.errors
                .push((0, "internal error: parse failed without a message".into()));
        }
        self.errors.sort_by_key(|e| e.0);
        // Finish lexing so every error offset has its line start.
        while self.tok.kind != Tok::Eof {
            self.advance();
        }
        let starts = self.lex.line_starts();
        let errors = self
            .errors
            .iter()
            .map(|(pos, msg)| {
                let pos = (*pos).min(self.src.len() as u32);
                let line = line_of(starts, pos);
                let ls = starts[line - 1] as usize;
                let col = self
                    .src
                    .get(ls..pos as usize)
                    .map_or(1, |s| s.trim_start_matches('\u{feff}').chars().count() + 1);
                ParseError {
                    line,
                    col,
                    message: msg.clone(),
                }
            })
            .collect();
        ParseErrors { errors }
    }

    fn run(&mut self) -> Option<Parsed> {
        if u32::try_from(self.src.len()).is_err() {
            self.error(0, "input too large (at most 4 GiB)");
            return None;
        }
        let mut globals: Vec<(GlobalData, u32)> = Vec::new();
        let mut funcs: Vec<(FuncState<'a>, u32)> = Vec::new();
        let mut global_ids: FxHashMap<String, GlobalId> = FxHashMap::default();
        let mut func_ids: FxHashMap<String, FuncId> = FxHashMap::default();
        loop {
            self.skip_newlines();
            if self.tok.kind == Tok::Eof || self.stopped() {
                break;
            }
            let t = self.tok;
            match (t.kind, t.text) {
                (Tok::Ident, "global") => {
                    if !self.module_mode {
                        self.error(t.pos, "globals need a module (use parse_module)");
                        self.skip_line();
                        continue;
                    }
                    match self.global() {
                        Ok((g, pos)) => {
                            let id = GlobalId::new(globals.len());
                            if global_ids.insert(g.name.clone(), id).is_some() {
                                self.error(pos, format!("global @{} is defined twice", g.name));
                            }
                            globals.push((g, pos));
                        }
                        Err(Fail) => self.skip_line(),
                    }
                }
                (Tok::Ident, "func" | "kernel") => {
                    if !self.module_mode && !funcs.is_empty() {
                        self.error(
                            t.pos,
                            "expected one function only (use parse_module for several)",
                        );
                    }
                    if let Some((fs, pos)) = self.function() {
                        let id = FuncId::new(funcs.len());
                        if func_ids.insert(fs.func.name.clone(), id).is_some() {
                            self.error(pos, format!("function @{} is defined twice", fs.func.name));
                        }
                        funcs.push((fs, pos));
                    }
                }
                _ => {
                    self.unexpected("`global`, `func` or `kernel`");
                    self.skip_line();
                }
            }
        }
        if !self.module_mode && funcs.is_empty() && self.errors.is_empty() {
            self.unexpected("a function");
        }
        if !self.errors.is_empty() {
            return None;
        }
        // Resolve names, then infer result types.
        let rets: Vec<Option<Type>> = funcs.iter().map(|(f, _)| f.func.sig.ret).collect();
        let mut functions = Vec::with_capacity(funcs.len());
        let mut positions = SourceMap {
            funcs: Vec::with_capacity(funcs.len()),
            globals: globals.iter().map(|&(_, pos)| pos).collect(),
        };
        for (mut fs, pos) in funcs {
            self.resolve_refs(&mut fs, &func_ids, &rets, &global_ids, &globals);
            self.infer_types(&mut fs);
            let mut fp = FuncPositions::new(pos);
            fp.insts = core::mem::take(&mut fs.inst_pos);
            for (n, b) in fs.blocks.iter().enumerate() {
                if b.defined {
                    fp.blocks[Block::new(n)] = b.pos;
                }
            }
            for (n, sl) in fs.slots.iter().enumerate() {
                if sl.defined {
                    fp.slots[Slot::new(n)] = sl.pos;
                }
            }
            positions.funcs.push(fp);
            functions.push(fs.func);
        }
        Some(Parsed {
            globals: globals.into_iter().map(|(g, _)| g).collect(),
            functions,
            positions,
        })
    }

    /// `@name` or `@"quoted"`, returning the name and the offset of the `@`.
    fn name(&mut self) -> PResult<(Cow<'a, str>, u32)> {
        let t = self.tok;
        match t.kind {
            Tok::Name => {
                self.advance();
                Ok((Cow::Borrowed(t.text), t.pos))
            }
            Tok::QuotedName => {
                self.advance();
                match decode_quoted(t.text) {
                    Ok(s) => Ok((Cow::Owned(s), t.pos - 2)),
                    Err(m) => Err(self.error(t.pos - 2, m)),
                }
            }
            _ => Err(self.unexpected("a name (`@name`)")),
        }
    }

    fn ty(&mut self) -> PResult<Type> {
        let t = self.tok;
        if t.kind != Tok::Ident {
            return Err(self.unexpected("a type"));
        }
        match Type::from_name(t.text) {
            Some(ty) => {
                self.advance();
                Ok(ty)
            }
            None => Err(self.error(t.pos, format!("unknown type `{}`", t.text))),
        }
    }

    /// An integer literal in `lo..=hi`.
    fn int(&mut self, lo: i128, hi: i128, what: &str) -> PResult<i128> {
        let t = self.tok;
        if t.kind != Tok::Number {
            return Err(self.unexpected(what));
        }
        match parse_int(t.text) {
            Some(v) if (lo..=hi).contains(&v) => {
                self.advance();
                Ok(v)
            }
            Some(_) => Err(self.error(t.pos, format!("{what} out of range: `{}`", t.text))),
            // Well-formed digits that overflow 64 bits are out of range too.
            None if is_int_syntax(t.text) => {
                Err(self.error(t.pos, format!("{what} out of range: `{}`", t.text)))
            }
            None => Err(self.unexpected(what)),
        }
    }

    fn u32_lit(&mut self, what: &str) -> PResult<u32> {
        Ok(self.int(0, i128::from(u32::MAX), what)? as u32)
    }

    /// A 64-bit integer literal (signed or unsigned spelling), as i64 bits.
    fn i64_lit(&mut self, what: &str) -> PResult<i64> {
        Ok(self.int(i128::from(i64::MIN), i128::from(u64::MAX), what)? as i64)
    }

    fn float_lit(&mut self, ty: Type) -> PResult<u64> {
        let t = self.tok;
        if !matches!(t.kind, Tok::Number | Tok::Ident) {
            return Err(self.unexpected("a float literal"));
        }
        match parse_float_bits(t.text, ty) {
            Ok(b) => {
                self.advance();
                Ok(b)
            }
            Err(m) => Err(self.error(t.pos, m)),
        }
    }

    /// `global @name: space [count x type] align A [visible|extern]
    /// [externally_initialized] [= [lit, ...]]`
    fn global(&mut self) -> PResult<(GlobalData, u32)> {
        self.advance();
        let (name, pos) = self.name()?;
        self.expect(Tok::Colon, "`:`")?;
        let st = self.tok;
        let space = match (st.kind, AddrSpace::from_name(st.text)) {
            (Tok::Ident, Some(s)) => s,
            _ => return Err(self.unexpected("an address space")),
        };
        self.advance();
        self.expect(Tok::LBracket, "`[`")?;
        let count = self.u32_lit("an element count")?;
        self.expect_word("x")?;
        let elem = self.ty()?;
        self.expect(Tok::RBracket, "`]`")?;
        self.expect_word("align")?;
        let align = self.u32_lit("an alignment")?;
        let mut linkage = Linkage::Internal;
        if self.tok.kind == Tok::Ident {
            linkage = match self.tok.text {
                "visible" => Linkage::Visible,
                "extern" => Linkage::Extern,
                _ => Linkage::Internal,
            };
            if linkage != Linkage::Internal {
                self.advance();
            }
        }
        let externally_initialized =
            self.tok.kind == Tok::Ident && self.tok.text == "externally_initialized";
        if externally_initialized {
            self.advance();
        }
        let mut init = None;
        if self.tok.kind == Tok::Equals {
            self.advance();
            let open = self.expect(Tok::LBracket, "`[`")?;
            let mut elems = Vec::new();
            if self.tok.kind != Tok::RBracket {
                loop {
                    elems.push(self.init_elem(elem)?);
                    if self.tok.kind != Tok::Comma {
                        break;
                    }
                    self.advance();
                }
            }
            self.expect(Tok::RBracket, "`,` or `]`")?;
            if elems.len() as u64 != u64::from(count) {
                return Err(self.error(
                    open.pos,
                    format!(
                        "initializer has {} elements but @{name} has {count}",
                        elems.len()
                    ),
                ));
            }
            init = Some(elems);
        }
        self.expect_eol()?;
        let g = GlobalData {
            name: name.into_owned(),
            space,
            elem,
            count,
            align,
            init,
            linkage,
            externally_initialized,
        };
        Ok((g, pos))
    }

    /// One initializer element of type `elem`, as zero-extended bits.
    fn init_elem(&mut self, elem: Type) -> PResult<u64> {
        if elem.is_float() {
            return self.float_lit(elem);
        }
        let w = elem.bits();
        let (lo, hi) = if w == 1 {
            (-1, 1)
        } else {
            (-(1i128 << (w - 1)), (1i128 << w) - 1)
        };
        let v = self.int(lo, hi, &format!("an {elem} initializer"))?;
        let mask = if w == 64 { u64::MAX } else { (1u64 << w) - 1 };
        Ok((v as u64) & mask)
    }

    // ---------------------------------------------------------------- functions

    /// A function definition. Returns `None` after a header error (having skipped the
    /// function); body errors are recorded but the function is still returned.
    fn function(&mut self) -> Option<(FuncState<'a>, u32)> {
        let header = self.header();
        let (func, name_pos) = match header {
            Ok(h) => h,
            Err(Fail) => {
                self.skip_function();
                return None;
            }
        };
        let mut fs = FuncState {
            func,
            vals: Vec::new(),
            blocks: Vec::new(),
            slots: Vec::new(),
            cur_block: None,
            seen_block: false,
            calls: Vec::new(),
            globals: Vec::new(),
            inst_pos: cranelift_entity::SecondaryMap::with_default(NONE),
        };
        loop {
            self.skip_newlines();
            if self.stopped() {
                return None;
            }
            let t = self.tok;
            match t.kind {
                Tok::RBrace => {
                    self.advance();
                    if self.expect_eol().is_err() {
                        self.skip_line();
                    }
                    break;
                }
                Tok::Eof => {
                    self.error(t.pos, format!("expected `}}` to close @{}", fs.func.name));
                    break;
                }
                _ if self.at_item_keyword() => {
                    self.error(t.pos, format!("expected `}}` to close @{}", fs.func.name));
                    break;
                }
                _ => {}
            }
            let r = if t.kind == Tok::Ident && t.text.starts_with("slot") {
                self.slot_decl(&mut fs)
            } else if t.kind == Tok::Ident && entity_number(t.text, "block").is_some() {
                self.block_label(&mut fs)
            } else {
                self.inst(&mut fs)
            };
            if r.is_err() {
                self.skip_line();
            }
        }
        self.check_undefined(&fs);
        Some((fs, name_pos))
    }

    /// Skip a function whose header is broken: up to a line starting with `}` (consumed)
    /// or with a top-level keyword (not consumed).
    fn skip_function(&mut self) {
        self.skip_line();
        loop {
            self.skip_newlines();
            match self.tok.kind {
                Tok::Eof => return,
                Tok::RBrace => {
                    self.skip_line();
                    return;
                }
                _ if self.at_item_keyword() => return,
                _ => self.skip_line(),
            }
        }
    }

    /// `kernel|func @name(types) [-> type] [convergent] [mustprogress] [anynan] [internal]
    /// [alwaysinline|noinline|inlinehint] {`
    fn header(&mut self) -> PResult<(Function, u32)> {
        let kind = if self.tok.text == "kernel" {
            FuncKind::Kernel
        } else {
            FuncKind::Device
        };
        self.advance();
        let (name, pos) = self.name()?;
        self.expect(Tok::LParen, "`(`")?;
        let mut sig = Signature::default();
        let mut byval = Vec::new();
        if self.tok.kind != Tok::RParen {
            loop {
                sig.params.push(self.ty()?);
                if self.tok.kind == Tok::Ident && self.tok.text == "byval" {
                    // `byval(SIZE, align A)`
                    self.advance();
                    self.expect(Tok::LParen, "`(`")?;
                    let size = self.u32_lit("a byval size")?;
                    self.expect(Tok::Comma, "`,`")?;
                    self.expect_word("align")?;
                    let align = self.u32_lit("a byval alignment")?;
                    self.expect(Tok::RParen, "`)`")?;
                    byval.push(crate::ByValParam {
                        index: sig.params.len() as u32 - 1,
                        size,
                        align,
                    });
                }
                if self.tok.kind != Tok::Comma {
                    break;
                }
                self.advance();
            }
        }
        self.expect(Tok::RParen, "`,` or `)`")?;
        if self.tok.kind == Tok::Arrow {
            self.advance();
            sig.ret = Some(self.ty()?);
        }
        let mut convergent = false;
        if self.tok.kind == Tok::Ident && self.tok.text == "convergent" {
            self.advance();
            convergent = true;
        }
        let mut must_progress = false;
        if self.tok.kind == Tok::Ident && self.tok.text == "mustprogress" {
            self.advance();
            must_progress = true;
        }
        let mut any_nan = false;
        if self.tok.kind == Tok::Ident && self.tok.text == "anynan" {
            self.advance();
            any_nan = true;
        }
        let mut internal = false;
        if self.tok.kind == Tok::Ident && self.tok.text == "internal" {
            self.advance();
            internal = true;
        }
        let mut inline = crate::InlineHint::Default;
        if self.tok.kind == Tok::Ident && self.tok.text == "alwaysinline" {
            self.advance();
            inline = crate::InlineHint::Always;
        } else if self.tok.kind == Tok::Ident && self.tok.text == "noinline" {
            self.advance();
            inline = crate::InlineHint::Never;
        } else if self.tok.kind == Tok::Ident && self.tok.text == "inlinehint" {
            self.advance();
            inline = crate::InlineHint::Hint;
        }
        self.expect(Tok::LBrace, "`{`")?;
        self.expect_eol()?;
        let mut f = Function::new(name.into_owned(), kind, sig);
        f.convergent = convergent;
        f.must_progress = must_progress;
        f.any_nan = any_nan;
        f.internal = internal;
        f.inline = inline;
        f.byval = byval;
        Ok((f, pos))
    }

    /// `slotN = local SIZE align A`
    fn slot_decl(&mut self, fs: &mut FuncState<'a>) -> PResult<()> {
        let t = self.tok;
        let Some(n) = entity_number(t.text, "slot") else {
            return self.inst(fs);
        };
        if fs.seen_block {
            return Err(self.error(t.pos, "slot declarations must come before the first block"));
        }
        self.check_limit(n, t.pos, "slot")?;
        self.advance();
        self.expect(Tok::Equals, "`=`")?;
        self.expect_word("local")?;
        let size = self.u32_lit("a slot size")?;
        self.expect_word("align")?;
        let align = self.u32_lit("an alignment")?;
        self.expect_eol()?;
        fs.ensure_slot(n);
        let info = &mut fs.slots[n as usize];
        if info.defined {
            let line = self.line(info.pos);
            return Err(self.error(
                t.pos,
                format!("slot{n} is defined twice (first on line {line})"),
            ));
        }
        *info = EntInfo {
            defined: true,
            pos: t.pos,
        };
        fs.func.slots[Slot::from_u32(n)] = SlotData { size, align };
        Ok(())
    }

    /// `blockN[(vA: type, ...)]:`
    fn block_label(&mut self, fs: &mut FuncState<'a>) -> PResult<()> {
        let mut label = None;
        let r = self.block_label_inner(fs, &mut label);
        if let (Err(_), Some((n, pos))) = (&r, label) {
            // As for values: a broken label still counts as a definition (the block
            // stays out of the layout), so branches to it do not cascade.
            fs.ensure_block(n);
            let info = &mut fs.blocks[n as usize];
            if !info.defined {
                *info = EntInfo { defined: true, pos };
            }
        }
        r
    }

    /// `loop(mustprogress, unroll_disable)` after a block label: the loop attributes of
    /// the loop the block heads (each at most once; one unroll hint).
    fn loop_attrs(&mut self) -> PResult<LoopAttrs> {
        self.advance();
        self.expect(Tok::LParen, "`(` after `loop`")?;
        let mut a = LoopAttrs::default();
        loop {
            let t = self.tok;
            if t.kind != Tok::Ident {
                return Err(self.unexpected("a loop attribute"));
            }
            self.advance();
            let hint = match t.text {
                "mustprogress" if !a.must_progress => {
                    a.must_progress = true;
                    None
                }
                "unroll_disable" => Some(UnrollHint::Disable),
                "unroll_enable" => Some(UnrollHint::Enable),
                "unroll_full" => Some(UnrollHint::Full),
                "unroll_count" => {
                    self.expect(Tok::Equals, "`=` after `unroll_count`")?;
                    Some(UnrollHint::Count(self.u32_lit("an unroll count")?))
                }
                _ => {
                    return Err(self.error(
                        t.pos,
                        format!("unknown or repeated loop attribute `{}`", t.text),
                    ))
                }
            };
            if let Some(h) = hint {
                if a.unroll != UnrollHint::Default {
                    return Err(self.error(t.pos, "a loop has at most one unroll attribute"));
                }
                a.unroll = h;
            }
            if self.tok.kind != Tok::Comma {
                break;
            }
            self.advance();
        }
        self.expect(Tok::RParen, "`,` or `)`")?;
        Ok(a)
    }

    fn block_label_inner(
        &mut self,
        fs: &mut FuncState<'a>,
        label: &mut Option<(u32, u32)>,
    ) -> PResult<()> {
        let t = self.tok;
        // Until the label is known to be good, instructions go nowhere.
        fs.cur_block = None;
        fs.seen_block = true;
        let n = entity_number(t.text, "block").expect("caller checked the label");
        self.check_limit(n, t.pos, "block")?;
        *label = Some((n, t.pos));
        self.advance();
        let mut params: Vec<(u32, u32, Type)> = Vec::new();
        if self.tok.kind == Tok::LParen {
            self.advance();
            loop {
                let vt = self.tok;
                let Some(v) = (vt.kind == Tok::Ident)
                    .then(|| entity_number(vt.text, "v"))
                    .flatten()
                else {
                    return Err(self.unexpected("a parameter (`vN: type`)"));
                };
                self.check_limit(v, vt.pos, "v")?;
                self.advance();
                self.expect(Tok::Colon, "`:`")?;
                let ty = self.ty()?;
                params.push((v, vt.pos, ty));
                if self.tok.kind != Tok::Comma {
                    break;
                }
                self.advance();
            }
            self.expect(Tok::RParen, "`,` or `)`")?;
        }
        let attrs = if self.tok.kind == Tok::Ident && self.tok.text == "loop" {
            self.loop_attrs()?
        } else {
            LoopAttrs::default()
        };
        self.expect(Tok::Colon, "`:` after the block label")?;
        self.expect_eol()?;
        fs.ensure_block(n);
        let info = &mut fs.blocks[n as usize];
        if info.defined {
            let line = self.line(info.pos);
            return Err(self.error(
                t.pos,
                format!("block{n} is defined twice (first on line {line})"),
            ));
        }
        *info = EntInfo {
            defined: true,
            pos: t.pos,
        };
        let block = Block::from_u32(n);
        fs.func.layout.append_block(block);
        fs.func.set_loop_attrs(block, attrs);
        fs.cur_block = Some(block);
        let mut ok = true;
        for (v, pos, ty) in params {
            if self.define_value(fs, v, pos).is_err() {
                ok = false;
                continue;
            }
            fs.func
                .dfg
                .attach_block_param(block, Value::from_u32(v), ty);
            let vi = &mut fs.vals[v as usize];
            vi.kind = ValKind::Param;
            vi.ty = Some(ty);
        }
        if ok {
            Ok(())
        } else {
            Err(Fail)
        }
    }

    /// Check that `vN` is not yet defined; record `pos` as its definition.
    fn define_value(&mut self, fs: &mut FuncState<'a>, n: u32, pos: u32) -> PResult<()> {
        fs.ensure_value(n);
        let vi = fs.vals[n as usize];
        if vi.kind != ValKind::Undef {
            let line = self.line(vi.pos);
            return Err(self.error(pos, format!("v{n} is defined twice (first on line {line})")));
        }
        fs.vals[n as usize].pos = pos;
        Ok(())
    }

    fn value(&mut self, fs: &mut FuncState<'a>) -> PResult<Value> {
        let t = self.tok;
        if t.kind == Tok::Ident {
            if let Some(n) = entity_number(t.text, "v") {
                self.check_limit(n, t.pos, "v")?;
                fs.ensure_value(n);
                let vi = &mut fs.vals[n as usize];
                if vi.kind == ValKind::Undef && vi.pos == NONE {
                    vi.pos = t.pos;
                }
                self.advance();
                return Ok(Value::from_u32(n));
            }
        }
        Err(self.unexpected("a value (`vN`)"))
    }

    fn block_ref(&mut self, fs: &mut FuncState<'a>) -> PResult<Block> {
        let t = self.tok;
        if t.kind == Tok::Ident {
            if let Some(n) = entity_number(t.text, "block") {
                self.check_limit(n, t.pos, "block")?;
                fs.ensure_block(n);
                let bi = &mut fs.blocks[n as usize];
                if !bi.defined && bi.pos == NONE {
                    bi.pos = t.pos;
                }
                self.advance();
                return Ok(Block::from_u32(n));
            }
        }
        Err(self.unexpected("a block (`blockN`)"))
    }

    fn slot_ref(&mut self, fs: &mut FuncState<'a>) -> PResult<Slot> {
        let t = self.tok;
        if t.kind == Tok::Ident {
            if let Some(n) = entity_number(t.text, "slot") {
                self.check_limit(n, t.pos, "slot")?;
                fs.ensure_slot(n);
                let si = &mut fs.slots[n as usize];
                if !si.defined && si.pos == NONE {
                    si.pos = t.pos;
                }
                self.advance();
                return Ok(Slot::from_u32(n));
            }
        }
        Err(self.unexpected("a slot (`slotN`)"))
    }

    /// `blockN[(args)]`
    fn block_call(&mut self, fs: &mut FuncState<'a>) -> PResult<BlockCall> {
        let b = self.block_ref(fs)?;
        self.vals.clear();
        if self.tok.kind == Tok::LParen {
            self.advance();
            if self.tok.kind != Tok::RParen {
                loop {
                    let v = self.value(fs)?;
                    self.vals.push(v);
                    if self.tok.kind != Tok::Comma {
                        break;
                    }
                    self.advance();
                }
            }
            self.expect(Tok::RParen, "`,` or `)`")?;
        }
        Ok(BlockCall::new(b, &self.vals, &mut fs.func.dfg.value_lists))
    }

    /// Comma-separated values up to the end of the line, into `self.vals`.
    fn values_to_eol(&mut self, fs: &mut FuncState<'a>) -> PResult<()> {
        self.vals.clear();
        if self.at_eol() {
            return Ok(());
        }
        loop {
            let v = self.value(fs)?;
            self.vals.push(v);
            if self.tok.kind != Tok::Comma {
                break;
            }
            self.advance();
        }
        if self.at_eol() {
            Ok(())
        } else {
            Err(self.unexpected("`,` or end of line"))
        }
    }

    /// Integer flags, then exactly `n` operands up to the end of the line.
    fn flags_and_operands(
        &mut self,
        fs: &mut FuncState<'a>,
        op: Token<'a>,
        opcode: Opcode,
        n: usize,
    ) -> PResult<IntFlags> {
        let mut flags = IntFlags::NONE;
        while self.tok.kind == Tok::Ident {
            let Some(f) = IntFlags::from_name(self.tok.text) else {
                break;
            };
            let t = self.tok;
            if !opcode.allowed_flags().contains(f) {
                return Err(self.error(
                    t.pos,
                    format!("flag `{}` is not allowed on `{}`", t.text, op.text),
                ));
            }
            if flags.contains(f) {
                return Err(self.error(t.pos, format!("flag `{}` is repeated", t.text)));
            }
            flags = flags.union(f);
            self.advance();
        }
        self.operands(fs, op, n)?;
        Ok(flags)
    }

    /// Exactly `n` operands up to the end of the line, into `self.vals`.
    fn operands(&mut self, fs: &mut FuncState<'a>, op: Token<'a>, n: usize) -> PResult<()> {
        self.values_to_eol(fs)?;
        if self.vals.len() == n {
            return Ok(());
        }
        let s = if n == 1 { "" } else { "s" };
        Err(self.error(
            op.pos,
            format!(
                "`{}` takes {n} operand{s}, found {}",
                op.text,
                self.vals.len()
            ),
        ))
    }

    /// `[order] [scope]` of an atomic or fence; absent words are the defaults.
    fn order_scope(&mut self) -> (MemOrder, MemScope) {
        let mut order = MemOrder::default();
        let mut scope = MemScope::default();
        if self.tok.kind == Tok::Ident {
            if let Some(o) = MemOrder::from_name(self.tok.text) {
                order = o;
                self.advance();
            }
        }
        if self.tok.kind == Tok::Ident {
            if let Some(sc) = MemScope::from_name(self.tok.text) {
                scope = sc;
                self.advance();
            }
        }
        (order, scope)
    }

    /// `[volatile]`
    fn mem_flags(&mut self) -> MemFlags {
        let volatile = self.tok.kind == Tok::Ident && self.tok.text == "volatile";
        if volatile {
            self.advance();
        }
        MemFlags { volatile }
    }

    /// An instruction line: `[vN =] opcode[.type] operands`.
    fn inst(&mut self, fs: &mut FuncState<'a>) -> PResult<()> {
        let mut result = None;
        let r = self.inst_inner(fs, &mut result);
        if let (Err(_), Some((n, pos))) = (&r, result) {
            // A result named on a broken line counts as defined, so that its uses do not
            // cascade into "never defined" errors.
            fs.ensure_value(n);
            let vi = &mut fs.vals[n as usize];
            if vi.kind == ValKind::Undef {
                vi.kind = ValKind::Broken;
                vi.pos = pos;
            }
        }
        r
    }

    fn inst_inner(
        &mut self,
        fs: &mut FuncState<'a>,
        result: &mut Option<(u32, u32)>,
    ) -> PResult<()> {
        let first = self.tok;
        if first.kind == Tok::Ident {
            if let Some(n) = entity_number(first.text, "v") {
                self.check_limit(n, first.pos, "v")?;
                *result = Some((n, first.pos));
                self.advance();
                if self.tok.kind == Tok::Comma {
                    return Err(self.error(self.tok.pos, "an instruction has at most one result"));
                }
                self.expect(Tok::Equals, "`=`")?;
            }
        }
        let result = *result;
        if !fs.seen_block {
            return Err(self.error(first.pos, "instruction before the first block label"));
        }
        let op = self.tok;
        if op.kind != Tok::Ident {
            return Err(self.unexpected("an instruction"));
        }
        self.advance();
        let (data, rule, pending) = self.operation(fs, op)?;
        self.expect_eol()?;

        let name = op.text.split('.').next().unwrap_or(op.text);
        match (&rule, result) {
            (TyRule::NoResult, Some((_, pos))) => {
                return Err(self.error(pos, format!("`{name}` produces no value")));
            }
            (TyRule::Known(_) | TyRule::Same(_), None) => {
                return Err(self.error(
                    op.pos,
                    format!("`{name}` produces a value: write `vN = {}`", op.text),
                ));
            }
            (TyRule::Deferred, None) if data.opcode() == Opcode::GlobalAddr => {
                return Err(self.error(
                    op.pos,
                    format!("`{name}` produces a value: write `vN = {}`", op.text),
                ));
            }
            _ => {}
        }
        let inst = fs.func.dfg.make_inst(data);
        fs.inst_pos[inst] = first.pos;
        if let Some(b) = fs.cur_block {
            fs.func.layout.append_inst(inst, b);
        }
        if let Some((n, pos)) = result {
            self.define_value(fs, n, pos)?;
            let (ty, dep) = match rule {
                TyRule::Known(t) => (Some(t), NONE),
                TyRule::Same(v) => (None, v.as_u32()),
                _ => (None, NONE),
            };
            fs.func
                .dfg
                .attach_result_value(inst, Value::from_u32(n), ty.unwrap_or(Type::I32));
            let vi = &mut fs.vals[n as usize];
            vi.kind = ValKind::Result;
            vi.ty = ty;
            vi.dep = dep;
        }
        if let Some((is_call, name, pos)) = pending {
            let p = Pending {
                inst,
                name,
                pos,
                result: result.map(|r| r.0),
            };
            if is_call {
                fs.calls.push(p);
            } else {
                fs.globals.push(p);
            }
        }
        Ok(())
    }

    /// The opcode and operands of an instruction, up to (not including) the end of line.
    /// Returns the data, how the result type is found, and a name to resolve later
    /// (`(is_call, name, offset)`).
    #[allow(clippy::type_complexity)]
    fn operation(
        &mut self,
        fs: &mut FuncState<'a>,
        op: Token<'a>,
    ) -> PResult<(InstructionData, TyRule, Option<(bool, Cow<'a, str>, u32)>)> {
        use InstructionData as D;
        use TyRule::*;
        let text = op.text;
        // Special registers contain a `.`, so look the whole spelling up first.
        if let Some(&Mnemonic::Reg(reg)) = self.mnemonics.get(text) {
            return Ok((D::Sreg { reg }, Known(Type::I32), None));
        }
        let (mn, suffix) = match text.find('.') {
            Some(i) => (&text[..i], Some((&text[i + 1..], op.pos + i as u32 + 1))),
            None => (text, None),
        };
        let mut atomic = None;
        let mut shfl = None;
        let mut vote = None;
        let opcode = match self.mnemonics.get(mn) {
            Some(&Mnemonic::Op(o)) => o,
            Some(&Mnemonic::Atomic(a)) => {
                atomic = Some(a);
                Opcode::AtomicRmw
            }
            Some(&Mnemonic::Shfl(m)) => {
                shfl = Some(m);
                Opcode::Shfl
            }
            Some(&Mnemonic::Vote(m)) => {
                vote = Some(m);
                Opcode::Vote
            }
            _ if matches!(mn, "tid" | "ntid" | "ctaid" | "nctaid") => {
                return Err(self.error(op.pos, format!("unknown special register `{text}`")));
            }
            _ => {
                let msg = match self.suggest(mn) {
                    Some(hint) => format!("unknown opcode `{mn}` ({hint})"),
                    None => format!("unknown opcode `{mn}`"),
                };
                return Err(self.error(op.pos, escape_input(&msg)));
            }
        };
        let wants_suffix = matches!(
            opcode,
            Opcode::Iconst | Opcode::Fconst | Opcode::Load | Opcode::Clock
        ) || opcode.is_cast();
        // Instructions typed like an operand may still spell their type out: the printer
        // does so where inference from the operands would go round in a cycle (possible
        // only in unreachable code, where dominance is not required).
        let may_suffix = !wants_suffix && infers_type(opcode);
        let written = match (may_suffix, suffix) {
            (true, Some((s, pos))) => match Type::from_name(s) {
                Some(t) => Some(t),
                None => return Err(self.error(pos, format!("unknown type `{s}`"))),
            },
            _ => None,
        };
        let suffix = if may_suffix { None } else { suffix };
        let sty = match (wants_suffix, suffix) {
            (true, Some((s, pos))) => match Type::from_name(s) {
                Some(t) => t,
                None => return Err(self.error(pos, format!("unknown type `{s}`"))),
            },
            (true, None) => {
                return Err(self.error(
                    op.pos,
                    format!("`{mn}` needs a result type suffix, as in `{mn}.i32`"),
                ))
            }
            (false, Some((_, pos))) => {
                return Err(self.error(pos - 1, format!("`{mn}` takes no type suffix")))
            }
            (false, None) => Type::I32, // unused
        };
        let r = match opcode {
            Opcode::Iconst => {
                if !sty.is_int() {
                    return Err(
                        self.error(op.pos, format!("`iconst` needs an integer type, not {sty}"))
                    );
                }
                let imm = self.i64_lit("an integer literal")?;
                (D::IntConst { imm }, Known(sty), None)
            }
            Opcode::Fconst => {
                if !sty.is_float() {
                    return Err(self.error(op.pos, format!("`fconst` needs f32 or f64, not {sty}")));
                }
                let bits = self.float_lit(sty)?;
                (D::FloatConst { bits }, Known(sty), None)
            }
            o if o.is_int_binary() || o.is_float_binary() => {
                let flags = self.flags_and_operands(fs, op, o, 2)?;
                let args = [self.vals[0], self.vals[1]];
                (
                    D::Binary {
                        opcode: o,
                        args,
                        flags,
                    },
                    Same(args[0]),
                    None,
                )
            }
            o if o.is_int_unary() || o.is_float_unary() || o == Opcode::Freeze => {
                self.flags_and_operands(fs, op, o, 1)?;
                let arg = self.vals[0];
                (D::Unary { opcode: o, arg }, Same(arg), None)
            }
            o if o.is_cast() => {
                self.flags_and_operands(fs, op, o, 1)?;
                (
                    D::Unary {
                        opcode: o,
                        arg: self.vals[0],
                    },
                    Known(sty),
                    None,
                )
            }
            o @ (Opcode::Fma | Opcode::Select) => {
                self.flags_and_operands(fs, op, o, 3)?;
                let args = [self.vals[0], self.vals[1], self.vals[2]];
                let dep = if o == Opcode::Select {
                    args[1]
                } else {
                    args[0]
                };
                (D::Ternary { opcode: o, args }, Same(dep), None)
            }
            Opcode::Icmp => {
                let t = self.tok;
                let Some(cond) = (t.kind == Tok::Ident)
                    .then(|| IntCC::from_name(t.text))
                    .flatten()
                else {
                    return Err(self.unexpected("an integer condition code (`eq`, `slt`, ...)"));
                };
                self.advance();
                self.operands(fs, op, 2)?;
                let args = [self.vals[0], self.vals[1]];
                (D::IntCompare { cond, args }, Known(Type::I1), None)
            }
            Opcode::Fcmp => {
                let t = self.tok;
                let Some(cond) = (t.kind == Tok::Ident)
                    .then(|| FloatCC::from_name(t.text))
                    .flatten()
                else {
                    return Err(self.unexpected("a float condition code (`oeq`, `ult`, ...)"));
                };
                self.advance();
                self.operands(fs, op, 2)?;
                let args = [self.vals[0], self.vals[1]];
                (D::FloatCompare { cond, args }, Known(Type::I1), None)
            }
            Opcode::PtrAdd => {
                let base = self.value(fs)?;
                self.expect(Tok::Comma, "`,`")?;
                let index = self.value(fs)?;
                self.expect(Tok::Comma, "`,` and a scale")?;
                let scale = self.u32_lit("a scale")?;
                (
                    D::PtrAdd {
                        args: [base, index],
                        scale,
                    },
                    Same(base),
                    None,
                )
            }
            Opcode::Load => {
                let flags = self.mem_flags();
                self.operands(fs, op, 1)?;
                (
                    D::Load {
                        ptr: self.vals[0],
                        flags,
                    },
                    Known(sty),
                    None,
                )
            }
            Opcode::Store => {
                let flags = self.mem_flags();
                self.operands(fs, op, 2)?;
                (
                    D::Store {
                        args: [self.vals[0], self.vals[1]],
                        flags,
                    },
                    NoResult,
                    None,
                )
            }
            Opcode::AtomicRmw => {
                let (order, scope) = self.order_scope();
                self.operands(fs, op, 2)?;
                let args = [self.vals[0], self.vals[1]];
                let op = atomic.expect("atomic opcode parsed with its operation");
                (
                    D::AtomicRmw {
                        op,
                        args,
                        order,
                        scope,
                    },
                    Same(args[1]),
                    None,
                )
            }
            Opcode::AtomicCas => {
                let (order, scope) = self.order_scope();
                self.operands(fs, op, 3)?;
                let args = [self.vals[0], self.vals[1], self.vals[2]];
                (D::AtomicCas { args, order, scope }, Same(args[1]), None)
            }
            Opcode::Shfl => {
                self.operands(fs, op, 4)?;
                let args = [self.vals[0], self.vals[1], self.vals[2], self.vals[3]];
                let mode = shfl.expect("shfl opcode parsed with its mode");
                (D::Shfl { mode, args }, Same(args[0]), None)
            }
            Opcode::Vote => {
                self.operands(fs, op, 2)?;
                let args = [self.vals[0], self.vals[1]];
                let mode = vote.expect("vote opcode parsed with its mode");
                let ty = if mode == VoteMode::Ballot {
                    Type::I32
                } else {
                    Type::I1
                };
                (D::Vote { mode, args }, Known(ty), None)
            }
            Opcode::WarpSync => {
                self.operands(fs, op, 1)?;
                (D::WarpSync { mask: self.vals[0] }, NoResult, None)
            }
            Opcode::Vprintf => {
                self.operands(fs, op, 2)?;
                let args = [self.vals[0], self.vals[1]];
                (D::Vprintf { args }, Known(Type::I32), None)
            }
            Opcode::AssertFail => {
                self.operands(fs, op, 4)?;
                let args = [self.vals[0], self.vals[1], self.vals[2], self.vals[3]];
                (D::AssertFail { args }, NoResult, None)
            }
            Opcode::Fence => {
                let (order, scope) = self.order_scope();
                self.operands(fs, op, 0)?;
                (D::Fence { order, scope }, NoResult, None)
            }
            Opcode::Clock => {
                self.operands(fs, op, 0)?;
                (D::Nullary { opcode }, Known(sty), None)
            }
            Opcode::GlobalAddr => {
                if !self.module_mode {
                    return Err(
                        self.error(op.pos, "`global_addr` needs a module (use parse_module)")
                    );
                }
                let (name, pos) = self.name()?;
                (
                    D::GlobalAddr {
                        global: GlobalId::new(0),
                    },
                    Deferred,
                    Some((false, name, pos)),
                )
            }
            Opcode::SlotAddr => {
                let slot = self.slot_ref(fs)?;
                (
                    D::SlotAddr { slot },
                    Known(Type::Ptr(AddrSpace::Local)),
                    None,
                )
            }
            Opcode::Barrier | Opcode::Unreachable => {
                self.operands(fs, op, 0)?;
                (D::Nullary { opcode }, NoResult, None)
            }
            Opcode::Call => {
                if !self.module_mode {
                    return Err(self.error(op.pos, "`call` needs a module (use parse_module)"));
                }
                let (name, pos) = self.name()?;
                self.expect(Tok::LParen, "`(`")?;
                self.vals.clear();
                if self.tok.kind != Tok::RParen {
                    loop {
                        let v = self.value(fs)?;
                        self.vals.push(v);
                        if self.tok.kind != Tok::Comma {
                            break;
                        }
                        self.advance();
                    }
                }
                self.expect(Tok::RParen, "`,` or `)`")?;
                let args = ValueList::from_slice(&self.vals, &mut fs.func.dfg.value_lists);
                (
                    D::Call {
                        func: FuncId::new(0),
                        args,
                    },
                    Deferred,
                    Some((true, name, pos)),
                )
            }
            Opcode::Jump => {
                let dest = self.block_call(fs)?;
                (D::Jump { dest }, NoResult, None)
            }
            Opcode::Brif => {
                let arg = self.value(fs)?;
                self.expect(Tok::Comma, "`,`")?;
                let then = self.block_call(fs)?;
                self.expect(Tok::Comma, "`,`")?;
                let els = self.block_call(fs)?;
                (
                    D::Brif {
                        arg,
                        blocks: [then, els],
                    },
                    NoResult,
                    None,
                )
            }
            Opcode::BrTable => {
                let arg = self.value(fs)?;
                self.expect(Tok::Comma, "`,`")?;
                let default = self.block_call(fs)?;
                self.expect(Tok::Comma, "`,` and a case list")?;
                self.expect(Tok::LBracket, "`[`")?;
                let mut cases = Vec::new();
                if self.tok.kind != Tok::RBracket {
                    loop {
                        let k = self.i64_lit("a case value")?;
                        self.expect(Tok::Colon, "`:`")?;
                        cases.push((k, self.block_call(fs)?));
                        if self.tok.kind != Tok::Comma {
                            break;
                        }
                        self.advance();
                    }
                }
                self.expect(Tok::RBracket, "`,` or `]`")?;
                let table = fs
                    .func
                    .dfg
                    .make_jump_table(JumpTableData::new(default, cases));
                (D::BrTable { arg, table }, NoResult, None)
            }
            Opcode::Return => {
                self.values_to_eol(fs)?;
                let args = ValueList::from_slice(&self.vals, &mut fs.func.dfg.value_lists);
                (D::Return { args }, NoResult, None)
            }
            Opcode::Sreg => unreachable!("`sreg` is rejected as a mnemonic above"),
            o => return Err(self.error(op.pos, format!("unknown opcode `{o}`"))),
        };
        match (written, r) {
            (Some(t), (data, Same(_), pending)) => Ok((data, Known(t), pending)),
            (_, r) => Ok(r),
        }
    }

    /// The slow path of [`Self::infer_types`], taken only when following first operands
    /// went round a cycle (unreachable code): a result still untyped takes the type of
    /// any of its [`InstructionData::type_operands`] that has one, propagated from the
    /// typed values along reverse operand edges (linear in the untyped values' operands).
    fn infer_from_any_operand(fs: &mut FuncState<'a>) {
        let untyped = |fs: &FuncState<'a>, n: usize| {
            fs.vals[n].kind == ValKind::Result && fs.vals[n].ty.is_none()
        };
        // Edges (operand, user) between untyped results; typed operands seed the queue.
        let mut edges: Vec<(u32, u32)> = Vec::new();
        let mut queue: Vec<u32> = Vec::new();
        for n in 0..fs.vals.len() {
            if !untyped(fs, n) {
                continue;
            }
            let ValueDef::Result(inst) = fs.func.dfg.value_def(Value::new(n)) else {
                continue;
            };
            let mut found = None;
            for &a in fs.func.dfg.inst(inst).type_operands() {
                let i = a.index();
                let known = fs.vals.get(i).filter(|c| c.kind != ValKind::Undef);
                match known.and_then(|c| c.ty) {
                    Some(t) => found = found.or(Some(t)),
                    None => edges.push((i as u32, n as u32)),
                }
            }
            if let Some(t) = found {
                fs.vals[n].ty = Some(t);
                queue.push(n as u32);
            }
        }
        edges.sort_unstable();
        while let Some(x) = queue.pop() {
            let from = edges.partition_point(|e| e.0 < x);
            for &(a, u) in &edges[from..] {
                if a != x {
                    break;
                }
                if fs.vals[u as usize].ty.is_none() {
                    fs.vals[u as usize].ty = fs.vals[x as usize].ty;
                    queue.push(u);
                }
            }
        }
    }

    /// Report blocks, slots and values used but never defined (at their first use).
    fn check_undefined(&mut self, fs: &FuncState<'a>) {
        for (n, b) in fs.blocks.iter().enumerate() {
            if !b.defined && b.pos != NONE {
                self.error(b.pos, format!("block{n} is used but never defined"));
            }
        }
        for (n, s) in fs.slots.iter().enumerate() {
            if !s.defined && s.pos != NONE {
                self.error(s.pos, format!("slot{n} is used but never declared"));
            }
        }
        for (n, v) in fs.vals.iter().enumerate() {
            if v.kind == ValKind::Undef && v.pos != NONE {
                self.error(v.pos, format!("v{n} is used but never defined"));
            }
        }
    }

    // ---------------------------------------------------------------- resolution

    /// Resolve callees and globals by name; give their results types.
    fn resolve_refs(
        &mut self,
        fs: &mut FuncState<'a>,
        func_ids: &FxHashMap<String, FuncId>,
        rets: &[Option<Type>],
        global_ids: &FxHashMap<String, GlobalId>,
        globals: &[(GlobalData, u32)],
    ) {
        for p in core::mem::take(&mut fs.calls) {
            let Some(&id) = func_ids.get(p.name.as_ref()) else {
                self.error(p.pos, format!("unknown function @{}", p.name));
                continue;
            };
            if let InstructionData::Call { func, .. } = fs.func.dfg.inst_mut(p.inst) {
                *func = id;
            }
            match (rets[id.index()], p.result) {
                (Some(t), Some(n)) => fs.vals[n as usize].ty = Some(t),
                (None, None) => {}
                (Some(t), None) => {
                    self.error(
                        p.pos,
                        format!(
                            "@{} returns {t}: write `vN = call @{}(...)`",
                            p.name, p.name
                        ),
                    );
                }
                (None, Some(n)) => {
                    let pos = fs.vals[n as usize].pos;
                    self.error(
                        pos,
                        format!("@{} returns nothing, so the call has no result", p.name),
                    );
                }
            }
        }
        for p in core::mem::take(&mut fs.globals) {
            let Some(&id) = global_ids.get(p.name.as_ref()) else {
                self.error(p.pos, format!("unknown global @{}", p.name));
                continue;
            };
            if let InstructionData::GlobalAddr { global } = fs.func.dfg.inst_mut(p.inst) {
                *global = id;
            }
            if let Some(n) = p.result {
                fs.vals[n as usize].ty = Some(Type::Ptr(globals[id.index()].0.space));
            }
        }
    }

    /// Give every result whose type copies an operand's the type at the end of its
    /// chain of such links. Each value is visited a bounded number of times: linear.
    fn infer_types(&mut self, fs: &mut FuncState<'a>) {
        let mut chain: Vec<usize> = Vec::new();
        let mut cyclic: Vec<usize> = Vec::new();
        for n in 0..fs.vals.len() {
            let v = fs.vals[n];
            if v.kind != ValKind::Result || v.ty.is_some() || v.infer != Infer::Fresh {
                continue;
            }
            chain.clear();
            let mut cur = n;
            let ty = loop {
                let c = fs.vals[cur];
                if c.kind != ValKind::Undef && c.ty.is_some() {
                    break c.ty;
                }
                if c.infer == Infer::Visiting {
                    // A cycle through first operands; another operand may still say.
                    cyclic.push(n);
                    break None;
                }
                if c.kind != ValKind::Result || c.infer == Infer::Done || c.dep == NONE {
                    break None;
                }
                fs.vals[cur].infer = Infer::Visiting;
                chain.push(cur);
                cur = c.dep as usize;
            };
            for &c in &chain {
                fs.vals[c].infer = Infer::Done;
                fs.vals[c].ty = ty;
            }
        }
        if !cyclic.is_empty() {
            Self::infer_from_any_operand(fs);
            for &n in &cyclic {
                if fs.vals[n].ty.is_none() {
                    self.error(
                        fs.vals[n].pos,
                        format!(
                            "cannot infer the type of v{n}: it depends on itself (write it, as in `iadd.i32`)"
                        ),
                    );
                }
            }
        }
        for (n, v) in fs.vals.iter().enumerate() {
            if v.kind != ValKind::Result {
                continue;
            }
            match v.ty {
                Some(t) => fs.func.dfg.set_value_type(Value::new(n), t),
                // Normally a consequence of an error already reported (an undefined or
                // unresolved operand); never return a value of unknown type silently.
                None if self.errors.is_empty() => {
                    self.error(v.pos, format!("cannot infer the type of v{n}"));
                }
                None => {}
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literals() {
        assert_eq!(parse_int("-0x10"), Some(-16));
        assert_eq!(parse_int("18446744073709551615"), Some(u64::MAX.into()));
        assert_eq!(parse_int("18446744073709551616"), None);
        assert_eq!(parse_int("-"), None);
        assert_eq!(parse_int("1e3"), None);
        assert!(is_decimal_float("1e-30"));
        assert!(is_decimal_float("-2.5E+3"));
        assert!(is_decimal_float("1."));
        assert!(!is_decimal_float("-nan"));
        assert!(!is_decimal_float("1e"));
        assert!(!is_decimal_float(".5"));
        assert_eq!(
            parse_float_bits("1.5", Type::F32),
            Ok(u64::from(1.5f32.to_bits()))
        );
        assert_eq!(parse_float_bits("0x7fc00000", Type::F32), Ok(0x7fc0_0000));
        assert!(parse_float_bits("0x17fc00000", Type::F32).is_err());
        assert_eq!(
            parse_float_bits("-inf", Type::F64),
            Ok(f64::NEG_INFINITY.to_bits())
        );
        assert!(parse_float_bits("-infinity", Type::F64).is_err());
    }

    #[test]
    fn atomic_names_match_ops() {
        assert_eq!(ATOMIC_NAMES.len(), AtomicOp::ALL.len());
        for &a in AtomicOp::ALL {
            assert_eq!(ATOMIC_NAMES[a as usize], format!("atomic_{}", a.name()));
        }
        for &m in ShflMode::ALL {
            assert_eq!(SHFL_NAMES[m as usize], format!("shfl_{}", m.name()));
        }
        for &m in VoteMode::ALL {
            assert_eq!(VOTE_NAMES[m as usize], format!("vote_{}", m.name()));
        }
    }

    #[test]
    fn entity_numbers() {
        assert_eq!(entity_number("v17", "v"), Some(17));
        assert_eq!(entity_number("v0", "v"), Some(0));
        assert_eq!(entity_number("v01", "v"), None);
        assert_eq!(entity_number("v", "v"), None);
        assert_eq!(entity_number("v99999999999", "v"), None);
        assert_eq!(entity_number("block3", "block"), Some(3));
        assert_eq!(entity_number("volatile", "v"), None);
    }

    #[test]
    fn quoted_names() {
        assert_eq!(decode_quoted(r#"a\"b\\c\0a"#).as_deref(), Ok("a\"b\\c\n"));
        assert!(decode_quoted(r"\ff").is_err());
        assert!(decode_quoted(r"\").is_err());
    }
}
