//! LLVM IR text to Gyre IR.
//!
//! The import runs in three linear passes over the token vector:
//! 1. a scan of the top level that reads named types, attribute groups, metadata
//!    (for `!nvvm.annotations`) and the datalayout, and records where every global,
//!    `define` and `declare` starts (function bodies are skipped by brace matching);
//! 2. globals and function headers, so every body can refer to every global and function
//!    wherever it is defined;
//! 3. function bodies ([`body`]), each lowered independently: an error in one body skips
//!    that function and is reported with the others.

mod body;
mod names;
mod parse;

use crate::lexer::{lex, Tok, Tokens};
use crate::types::{LType, TyId, Types};
use crate::ImportErrors;
use gyre_ir::{
    AddrSpace, FuncId, FuncKind, Function, GlobalData, GlobalId, InlineHint, Linkage, Module,
    Signature, Type,
};
use parse::{
    is_type_start, parse_const, parse_opt_addrspace, parse_type, skip_param_attrs, CVal, Cur,
    PResult,
};
use rustc_hash::FxHashMap;

/// What to do with calls to functions that are only `declare`d (not intrinsics, not
/// libdevice functions with a Gyre equivalent).
#[derive(Copy, Clone, PartialEq, Eq, Debug, Default)]
pub enum ExternalCalls {
    /// Fail with `unsupported: call to external function @f`.
    #[default]
    Reject,
    /// Give each such declaration a stub body that returns zero (or nothing) and has no
    /// effect. Calls stay calls, so passes still treat them as opaque, side-effecting and
    /// convergent; only an interpreter sees the stub. Meant for LLVM's regression tests,
    /// where `declare void @foo()` just stands for "something the optimizer can't see".
    Stub,
}

/// Import options.
#[derive(Copy, Clone, PartialEq, Eq, Debug, Default)]
pub struct ImportOptions {
    /// Treatment of calls to declared external functions.
    pub external_calls: ExternalCalls,
}

/// Parse LLVM IR text into a Gyre module with the default options.
pub fn import_module(src: &str) -> Result<Module, ImportErrors> {
    import_module_with(src, &ImportOptions::default())
}

/// Parse LLVM IR text into a Gyre module.
pub fn import_module_with(src: &str, opts: &ImportOptions) -> Result<Module, ImportErrors> {
    let toks = lex(src).map_err(|e| ImportErrors { errors: vec![e] })?;
    let mut st = ModState::new(*opts);
    let mut errors = Vec::new();
    let items = match st.scan(&toks) {
        Ok(items) => items,
        Err(e) => return Err(ImportErrors { errors: vec![e] }),
    };
    // Globals first: function headers do not depend on them, bodies do.
    for it in &items {
        if let Item::Global(i) = *it {
            if let Err(e) = st.global(&toks, i) {
                errors.push(e);
            }
        }
    }
    let mut bodies = Vec::new();
    for it in &items {
        match *it {
            Item::Define(i) => match st.func_header(&toks, i, true) {
                Ok(Some(b)) => bodies.push(b),
                Ok(None) => {}
                Err(e) => errors.push(e),
            },
            Item::Declare(i) => {
                if let Err(e) = st.func_header(&toks, i, false) {
                    errors.push(e);
                }
            }
            Item::Global(_) => {}
        }
    }
    st.make_stubs();
    for b in bodies {
        match body::lower_body(&mut st, &toks, &b) {
            Ok(f) => st.module.functions[b.id] = f,
            Err(e) => errors.extend(e),
        }
    }
    // The tokens are done with: free them before the verifier builds its tables.
    drop(toks);
    if errors.is_empty() {
        // A safety net: input that slips past the checks above must not become
        // invalid IR. Errors are placed at the function they are about. The lowering
        // checks LLVM's typing rules as it builds each instruction, so only what it
        // cannot see (dominance of uses, stores into const space) is checked again;
        // debug builds (every test) check that the full verifier agrees.
        let verified = gyre_ir::verifier::verify_module_trusted(&st.module);
        #[cfg(debug_assertions)]
        {
            let full = gyre_ir::verifier::verify_module(&st.module);
            assert_eq!(
                full.as_ref().map_err(|e| e.to_string()),
                verified.as_ref().map_err(|e| e.to_string()),
                "the importer built IR that only the full verifier rejects"
            );
        }
        if let Err(ve) = verified {
            let starts = crate::lexer::line_starts(src);
            let mut errors: Vec<crate::ImportError> =
                ve.0.iter()
                    .map(|e| {
                        let (line, col) = e
                            .context
                            .split_once('@')
                            .and_then(|(_, n)| st.fn_pos.get(n).copied())
                            .map_or((1, 1), |pos| crate::lexer::line_col_in(&starts, pos));
                        crate::ImportError {
                            line,
                            col,
                            kind: crate::ErrorKind::Parse,
                            message: format!("imported IR fails verification: {e}"),
                        }
                    })
                    .collect();
            if errors.is_empty() {
                errors.push(crate::ImportError {
                    line: 1,
                    col: 1,
                    kind: crate::ErrorKind::Parse,
                    message: "imported IR fails verification".into(),
                });
            }
            return Err(ImportErrors { errors });
        }
        Ok(st.module)
    } else {
        errors.sort_by_key(|e| (e.line, e.col));
        Err(ImportErrors { errors })
    }
}

/// A top-level entity whose processing waits for the scan to finish.
#[derive(Copy, Clone)]
enum Item {
    Global(usize),
    Define(usize),
    Declare(usize),
}

/// How a function name resolves at a call site.
#[derive(Clone)]
pub(crate) enum Callee {
    /// A function of the module (defined, or a stubbed external).
    Func(FuncId),
    /// Declared only: an intrinsic, a libdevice function or an external.
    Declared,
}

/// What is known about a function name.
#[derive(Clone)]
pub(crate) struct FuncInfo {
    pub ret: TyId,
    pub params: Vec<TyId>,
    /// The `byval(T)` type of each parameter that has one: the caller passes a pointer
    /// to a fresh copy of `sizeof(T)` bytes.
    pub byval: Vec<Option<TyId>>,
    pub vararg: bool,
    pub callee: Callee,
}

/// A module global as bodies see it.
#[derive(Copy, Clone)]
pub(crate) struct GlobalInfo {
    pub id: GlobalId,
    /// The LLVM address space of the global's address.
    pub llvm_space: u32,
}

/// A function body waiting to be lowered.
pub(crate) struct PendingBody {
    pub id: FuncId,
    /// Token index of the `{`.
    pub open: usize,
    /// Parameter names (`None` for unnamed ones) and types.
    pub params: Vec<(Option<String>, TyId)>,
    /// Token index of the function name, for errors about the whole function.
    pub name_tok: usize,
}

/// Module-wide import state.
pub(crate) struct ModState {
    pub opts: ImportOptions,
    pub types: Types,
    pub module: Module,
    pub globals: FxHashMap<String, GlobalInfo>,
    pub funcs: FxHashMap<String, FuncInfo>,
    /// Attribute groups that contain `convergent`.
    convergent_groups: FxHashMap<u32, bool>,
    /// Attribute groups that contain `mustprogress`.
    mustprogress_groups: FxHashMap<u32, bool>,
    /// Attribute groups that contain `alwaysinline` or `noinline` (for the inliner).
    inline_groups: FxHashMap<u32, InlineHint>,
    /// Metadata nodes: the global names, strings and integers each mentions.
    meta_nodes: FxHashMap<String, Vec<MetaItem>>,
    /// Node names listed by `!nvvm.annotations`.
    annotations: Vec<String>,
    /// Declared externals that get a stub body (in declaration order).
    stubs: Vec<String>,
    /// Where (byte offset) each defined function's name is, for errors about a whole
    /// function: made a line and column only for an error.
    fn_pos: FxHashMap<String, u32>,
}

#[derive(Clone, PartialEq)]
enum MetaItem {
    Global(String),
    Str(Vec<u8>),
    Int(i128),
    Node(String),
}

impl ModState {
    fn new(opts: ImportOptions) -> Self {
        ModState {
            opts,
            types: Types::default(),
            module: Module::new(),
            globals: FxHashMap::default(),
            funcs: FxHashMap::default(),
            convergent_groups: FxHashMap::default(),
            mustprogress_groups: FxHashMap::default(),
            inline_groups: FxHashMap::default(),
            meta_nodes: FxHashMap::default(),
            annotations: Vec::new(),
            stubs: Vec::new(),
            fn_pos: FxHashMap::default(),
        }
    }

    /// Pass 1: read what needs no other entity and note where the rest starts.
    fn scan(&mut self, toks: &Tokens<'_>) -> PResult<Vec<Item>> {
        let mut c = Cur::new(toks);
        let mut items = Vec::new();
        loop {
            let start = c.i;
            match c.peek() {
                Tok::Eof => return Ok(items),
                Tok::Word(w) => match w {
                    "source_filename" => {
                        c.bump();
                        c.expect_punct(b'=')?;
                        c.bump();
                    }
                    "target" => {
                        c.bump();
                        let is_dl = c.is_word("datalayout");
                        if !(is_dl || c.is_word("triple")) {
                            return Err(c.expected("`datalayout` or `triple`"));
                        }
                        c.bump();
                        c.expect_punct(b'=')?;
                        let t = c.tok();
                        match &t.tok {
                            Tok::Str(s) => {
                                c.bump();
                                if is_dl {
                                    let s = String::from_utf8_lossy(s);
                                    self.datalayout(&s).map_err(|m| c.unsup_at(t, m))?;
                                }
                            }
                            _ => return Err(c.expected("a string")),
                        }
                    }
                    "define" | "declare" => {
                        c.bump();
                        items.push(if w == "define" {
                            Item::Define(start)
                        } else {
                            Item::Declare(start)
                        });
                        // Skip to the body (or the end of the declaration).
                        self.skip_to_top_level(&mut c, w == "define")?;
                    }
                    "attributes" => {
                        c.bump();
                        let n = match c.peek() {
                            Tok::AttrRef(n) => n,
                            _ => return Err(c.expected("an attribute group `#N`")),
                        };
                        c.bump();
                        c.expect_punct(b'=')?;
                        if !c.is_punct(b'{') {
                            return Err(c.expected("`{`"));
                        }
                        let from = c.i;
                        c.skip_balanced()?;
                        let conv = (from..c.i).any(|j| toks.tok(j) == Tok::Word("convergent"));
                        self.convergent_groups.insert(n, conv);
                        let progress =
                            (from..c.i).any(|j| toks.tok(j) == Tok::Word("mustprogress"));
                        self.mustprogress_groups.insert(n, progress);
                        let hint = (from..c.i)
                            .filter_map(|j| inline_hint(toks.tok(j)))
                            .fold(InlineHint::Default, stronger_hint);
                        if hint != InlineHint::Default {
                            self.inline_groups.insert(n, hint);
                        }
                    }
                    "module" => return Err(c.unsup("module-level inline asm")),
                    "uselistorder" | "uselistorder_bb" => {
                        return Err(c.unsup("uselistorder directive"))
                    }
                    _ if w.starts_with('$') => {
                        // `$name = comdat any`
                        c.bump();
                        c.expect_punct(b'=')?;
                        c.expect_word("comdat")?;
                        c.bump();
                    }
                    _ => return Err(c.err(format!("unexpected `{w}` at top level"))),
                },
                Tok::Local(name) => {
                    c.bump();
                    c.expect_punct(b'=')?;
                    c.expect_word("type")?;
                    let idx = self.types.named(name);
                    if c.eat_word("opaque") {
                        continue;
                    }
                    let body = parse_type(&mut c, &mut self.types)?;
                    if self.types.named[idx as usize].1.is_some() {
                        return Err(c.err_at(c.at(start), format!("type %{name} redefined")));
                    }
                    self.types.named[idx as usize].1 = Some(body);
                }
                Tok::Global(_) => {
                    items.push(Item::Global(start));
                    c.bump();
                    self.skip_to_top_level(&mut c, false)?;
                }
                Tok::Meta(name) => {
                    c.bump();
                    c.expect_punct(b'=')?;
                    self.metadata_def(&mut c, name.to_string())?;
                }
                _ => {
                    return Err(c.err(format!(
                        "unexpected {} at top level",
                        parse::describe(c.peek())
                    )))
                }
            }
        }
    }

    /// Skip tokens of a global or function header up to the next top-level entity; for
    /// a definition, also skip the body by brace matching.
    fn skip_to_top_level(&mut self, c: &mut Cur, define: bool) -> PResult<()> {
        let start = c.tok();
        loop {
            match c.peek() {
                Tok::Eof => {
                    if define {
                        return Err(c.err_at(start, "function without a body"));
                    }
                    return Ok(());
                }
                Tok::Punct(b'{') if define => {
                    // Body: find the matching `}`.
                    return match c.toks.skip_braces(c.i) {
                        Some(end) => {
                            c.i = end;
                            Ok(())
                        }
                        None => Err(c.err_at(start, "unterminated function body")),
                    };
                }
                Tok::Punct(b'(' | b'[' | b'{') => c.skip_balanced()?,
                Tok::Word(w)
                    if !define
                        && (matches!(
                            w,
                            "define"
                                | "declare"
                                | "attributes"
                                | "target"
                                | "source_filename"
                                | "module"
                                | "uselistorder"
                        ) || w.starts_with('$')) =>
                {
                    return Ok(())
                }
                Tok::Global(_) | Tok::Local(_)
                    if !define && matches!(c.peek_at(1), Tok::Punct(b'=')) =>
                {
                    return Ok(())
                }
                Tok::Meta(_) if !define && matches!(c.peek_at(1), Tok::Punct(b'=')) => {
                    return Ok(())
                }
                _ => {
                    c.bump();
                }
            }
        }
    }

    /// Honour the `i64` and `f64` alignments. Pointer sizes are ignored: Gyre pointers
    /// are 64-bit, so a 32-bit target's structs are laid out as on a 64-bit one.
    fn datalayout(&mut self, s: &str) -> Result<(), String> {
        for spec in s.split('-') {
            let mut parts = spec.split(':');
            let head = parts.next().unwrap_or("");
            let abi = parts.next().and_then(|a| a.parse::<u64>().ok());
            match head {
                "i64" => {
                    if let Some(a) = abi {
                        self.types.layout.i64_align = (a / 8).max(1);
                    }
                }
                "f64" => {
                    if let Some(a) = abi {
                        self.types.layout.f64_align = (a / 8).max(1);
                    }
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// `!name = ...` or `!N = ...`: keep what `!nvvm.annotations` needs, skip the rest.
    fn metadata_def(&mut self, c: &mut Cur, name: String) -> PResult<()> {
        c.eat_word("distinct");
        let from = c.i;
        c.skip_metadata_value()?;
        let mut items = Vec::new();
        for j in from..c.i {
            match c.toks.tok(j) {
                Tok::Global(g) => items.push(MetaItem::Global(g.to_string())),
                Tok::Str(s) => items.push(MetaItem::Str(s.to_vec())),
                Tok::Int(v) => items.push(MetaItem::Int(v)),
                // The unfused tokens had `N` as an integer token of the node.
                Tok::AddrSpacePtr(n) => items.push(MetaItem::Int(i128::from(n))),
                Tok::Meta(m) if !m.is_empty() => items.push(MetaItem::Node(m.to_string())),
                _ => {}
            }
        }
        if name == "nvvm.annotations" {
            self.annotations
                .extend(items.iter().filter_map(|i| match i {
                    MetaItem::Node(n) => Some(n.clone()),
                    _ => None,
                }));
        } else if name.bytes().all(|b| b.is_ascii_digit()) {
            self.meta_nodes.insert(name, items);
        }
        Ok(())
    }

    /// Is `name` marked as a kernel by `!nvvm.annotations` (`!{@f, !"kernel", i32 1}`)?
    fn annotated_kernel(&self, name: &str) -> bool {
        self.annotations.iter().any(|n| {
            let Some(items) = self.meta_nodes.get(n) else {
                return false;
            };
            items.contains(&MetaItem::Global(name.to_string()))
                && items
                    .windows(2)
                    .any(|w| w[0] == MetaItem::Str(b"kernel".to_vec()) && w[1] == MetaItem::Int(1))
        })
    }

    /// Pass 2: a global variable.
    fn global(&mut self, toks: &Tokens<'_>, at: usize) -> PResult<()> {
        let mut c = Cur::new(toks);
        c.i = at;
        let name_tok = c.tok();
        c.bump();
        let Tok::Global(name) = name_tok.tok else {
            return Err(c.err_at(name_tok, "expected a global name"));
        };
        c.expect_punct(b'=')?;
        let mut space = 0u32;
        let mut external = false;
        let mut internal = false;
        let mut externally_initialized = false;
        let is_const;
        loop {
            match c.peek() {
                Tok::Word(w) => match w {
                    "global" => {
                        is_const = false;
                        c.bump();
                        break;
                    }
                    "constant" => {
                        is_const = true;
                        c.bump();
                        break;
                    }
                    "alias" | "ifunc" => return Err(c.unsup(format!("global {w}"))),
                    "addrspace" => space = parse_opt_addrspace(&mut c)?.unwrap_or(0),
                    "thread_local" => return Err(c.unsup("thread_local global")),
                    "external" | "extern_weak" => {
                        external = true;
                        c.bump();
                    }
                    "internal" | "private" => {
                        internal = true;
                        c.bump();
                    }
                    "externally_initialized" => {
                        externally_initialized = true;
                        c.bump();
                    }
                    _ => {
                        c.bump();
                        if c.is_punct(b'(') {
                            c.skip_balanced()?;
                        }
                    }
                },
                Tok::AddrSpacePtr(_) => {
                    // `addrspace(N)*`: the `*` is what the unfused tokens stopped at.
                    let star = crate::lexer::Token {
                        tok: Tok::Punct(b'*'),
                        pos: toks.addrspace_star_pos(c.i),
                    };
                    return Err(c.err_at(star, "expected `global` or `constant`, found `*`"));
                }
                _ => return Err(c.expected("`global` or `constant`")),
            }
        }
        let ty_tok = c.tok();
        let ty = parse_type(&mut c, &mut self.types)?;
        let init = if external || c.is_punct(b',') || !starts_const(c.peek()) {
            None
        } else {
            Some(parse_const(&mut c, &mut self.types, 0)?)
        };
        if name == "llvm.used" || name == "llvm.compiler.used" {
            // Only keeps the listed symbols alive through LLVM's optimizer: Gyre never
            // deletes globals, so the list is checked for its form and dropped.
            let ok = match &init {
                Some(CVal::Aggregate(es)) => es.iter().all(|(_, e)| {
                    matches!(e, CVal::Global(_) | CVal::Cast { .. } | CVal::Gep { .. })
                }),
                Some(CVal::Zero) => true,
                _ => false,
            };
            if !ok {
                return Err(c.unsup_at(ty_tok, format!("@{name} of this form")));
            }
            return Ok(());
        }
        let mut align = None;
        while c.eat_punct(b',') {
            match c.peek() {
                Tok::Word("align") => {
                    c.bump();
                    let t = c.tok();
                    let a = c.expect_int()?;
                    align = Some(u32::try_from(a).map_err(|_| c.err_at(t, "bad alignment"))?);
                }
                Tok::Word(w) if w == "section" || w == "partition" => {
                    c.bump();
                    c.bump();
                }
                Tok::Word("comdat") => {
                    c.bump();
                    if c.is_punct(b'(') {
                        c.skip_balanced()?;
                    }
                }
                Tok::Meta(_) => {
                    c.bump();
                    c.skip_metadata_value()?;
                }
                _ => {
                    c.bump();
                }
            }
        }
        let gspace = match space {
            0 if is_const => AddrSpace::Const,
            0 => AddrSpace::Global,
            n => AddrSpace::from_llvm_number(n)
                .ok_or_else(|| c.unsup_at(name_tok, format!("address space {n}")))?,
        };
        if !matches!(
            gspace,
            AddrSpace::Global | AddrSpace::Shared | AddrSpace::Const
        ) {
            return Err(c.unsup_at(name_tok, format!("global in the {gspace} address space")));
        }
        let (elem, count, init) = self
            .flatten_global(ty, init.as_ref())
            .map_err(|m| c.unsup_at(ty_tok, m))?;
        let (_, abi) = self
            .types
            .size_align(ty)
            .map_err(|m| c.unsup_at(ty_tok, m))?;
        // Shared memory has no initializer in PTX (only `undef` is faithful), and
        // pointer-typed globals have none in Gyre (addresses are unknown before launch):
        // for those, `None` means zero, so only a zero initializer is accepted.
        let init = if gspace == AddrSpace::Shared && init.is_some() {
            return Err(c.unsup_at(ty_tok, "initialized shared global"));
        } else if elem.is_ptr() {
            if init.as_ref().is_some_and(|v| v.iter().any(|&x| x != 0)) {
                return Err(c.unsup_at(ty_tok, "non-null pointer initializer"));
            }
            None
        } else {
            init
        };
        // Linkage. Shared memory is per CTA and has no host symbol: a declared-only
        // shared array of no elements is the dynamic shared memory (`extern __shared__`),
        // any other shared global is module-private. Elsewhere a symbol LLVM does not
        // keep private is visible to the host; one only declared here (`external`,
        // `extern_weak`) has contents that come from outside, like an
        // `externally_initialized` one.
        let (linkage, externally_initialized) = if gspace == AddrSpace::Shared {
            if external {
                if count != 0 {
                    return Err(c.unsup_at(name_tok, "external shared global with a size"));
                }
                (Linkage::Extern, false)
            } else {
                (Linkage::Internal, false)
            }
        } else if internal && !externally_initialized {
            (Linkage::Internal, false)
        } else {
            // (`internal externally_initialized` keeps the flag: that the contents may
            // change before launch matters more than the symbol's visibility.)
            (Linkage::Visible, externally_initialized || external)
        };
        let id = self.module.globals.push(GlobalData {
            name: name.to_string(),
            space: gspace,
            elem,
            count,
            align: align.unwrap_or(abi as u32).max(1),
            init,
            linkage,
            externally_initialized,
        });
        self.globals.insert(
            name.to_string(),
            GlobalInfo {
                id,
                llvm_space: space,
            },
        );
        Ok(())
    }

    /// Flatten an LLVM global's type and initializer into Gyre's `[count x elem]` form:
    /// a homogeneous aggregate keeps its scalar type, anything else becomes bytes.
    fn flatten_global(
        &self,
        ty: TyId,
        init: Option<&CVal>,
    ) -> Result<(Type, u32, Option<Vec<u64>>), String> {
        const MAX_BYTES: u64 = 1 << 26;
        let (size, _) = self.types.size_align(ty)?;
        if size > MAX_BYTES {
            return Err(format!("global of {size} bytes"));
        }
        // Leaves: (offset, scalar type, type id), in memory order, by an explicit walk.
        let mut leaves: Vec<(u64, Type)> = Vec::new();
        let mut bits: Vec<u64> = Vec::new();
        let zero_init = matches!(init, None | Some(CVal::Zero | CVal::Undef | CVal::Poison));
        // Fast path: nested arrays of one scalar.
        let mut t = ty;
        let mut n = 1u64;
        loop {
            let r = self.types.resolve(t).ok_or("unresolvable type")?;
            match self.types.get(r) {
                LType::Array(k, e) => {
                    n = n.saturating_mul(*k);
                    t = *e;
                }
                _ => break,
            }
        }
        if let Ok(s) = self.types.scalar(t) {
            if zero_init {
                let count = u32::try_from(n).map_err(|_| "global too large".to_string())?;
                let init = matches!(init, Some(CVal::Zero)).then(|| vec![0u64; count as usize]);
                return Ok((s, count, init));
            }
        }
        let mut stack: Vec<(u64, TyId, Option<&CVal>)> = vec![(0, ty, init)];
        while let Some((off, t, v)) = stack.pop() {
            let r = self.types.resolve(t).ok_or("unresolvable type")?;
            match self.types.get(r).clone() {
                LType::Array(k, e) => {
                    let (es, _) = self.types.size_align(e)?;
                    let elems: Option<Vec<Option<&CVal>>> = match v {
                        Some(CVal::Aggregate(vs)) => {
                            if vs.len() as u64 != k {
                                return Err("initializer length does not match its type".into());
                            }
                            Some(vs.iter().map(|(_, x)| Some(x)).collect())
                        }
                        Some(CVal::CStr(_))
                        | None
                        | Some(CVal::Zero | CVal::Undef | CVal::Poison) => None,
                        Some(_) => return Err("initializer does not match an array type".into()),
                    };
                    if let Some(CVal::CStr(s)) = v {
                        if self.types.get(e) != &LType::Int(8) || s.len() as u64 != k {
                            return Err("string initializer does not match its type".into());
                        }
                        for (i, &b) in s.iter().enumerate() {
                            leaves.push((off + i as u64, Type::I8));
                            bits.push(u64::from(b));
                        }
                        continue;
                    }
                    for i in (0..k).rev() {
                        let ev = match &elems {
                            Some(vs) => vs[i as usize],
                            None => v,
                        };
                        stack.push((off + i * es, e, ev));
                    }
                }
                LType::Struct(fields, _) => {
                    let vals: Option<Vec<&CVal>> = match v {
                        Some(CVal::Aggregate(vs)) => {
                            if vs.len() != fields.len() {
                                return Err("initializer does not match its struct type".into());
                            }
                            Some(vs.iter().map(|(_, x)| x).collect())
                        }
                        None | Some(CVal::Zero | CVal::Undef | CVal::Poison) => None,
                        Some(_) => return Err("initializer does not match a struct type".into()),
                    };
                    for i in (0..fields.len()).rev() {
                        let (fo, ft) = self.types.field_offset(r, i as u64)?;
                        let fv = match &vals {
                            Some(vs) => Some(vs[i]),
                            None => v,
                        };
                        stack.push((off + fo, ft, fv));
                    }
                }
                _ => {
                    let s = self.types.scalar(r)?;
                    let b = match v {
                        None | Some(CVal::Zero | CVal::Undef | CVal::Poison | CVal::Null) => 0,
                        Some(CVal::Int(x)) if s.is_int() => trunc_bits(*x, s.bits()),
                        Some(CVal::Bool(x)) if s == Type::I1 => u64::from(*x),
                        Some(x @ (CVal::Float(_) | CVal::HexFloat(..))) if s.is_float() => {
                            float_bits(x, s)?
                        }
                        Some(CVal::Global(_) | CVal::Gep { .. } | CVal::Cast { .. }) => {
                            return Err("address-valued global initializer".into())
                        }
                        Some(_) => return Err("initializer does not match its type".into()),
                    };
                    leaves.push((off, s));
                    bits.push(b);
                    if leaves.len() as u64 > MAX_BYTES {
                        return Err("global too large".into());
                    }
                }
            }
        }
        let first = leaves.first().map(|l| l.1);
        let homogeneous = first.is_some_and(|f| {
            let sz = u64::from(f.bytes());
            leaves
                .iter()
                .enumerate()
                .all(|(i, &(o, t))| t == f && o == i as u64 * sz)
                && sz * leaves.len() as u64 == size
        });
        let keep_init = init.is_some() && !matches!(init, Some(CVal::Undef | CVal::Poison));
        if homogeneous {
            let elem = first.expect("homogeneous implies a leaf");
            let count = leaves.len() as u32;
            return Ok((elem, count, keep_init.then_some(bits)));
        }
        let mut bytes = vec![0u64; size as usize];
        for (&(o, t), &b) in leaves.iter().zip(&bits) {
            for k in 0..u64::from(t.bytes()) {
                bytes[(o + k) as usize] = (b >> (8 * k)) & 0xff;
            }
        }
        let count = u32::try_from(size).map_err(|_| "global too large".to_string())?;
        Ok((Type::I8, count, keep_init.then_some(bytes)))
    }

    /// Pass 2: a `define` or `declare` header. Returns the body to lower for a definition.
    fn func_header(
        &mut self,
        toks: &Tokens<'_>,
        at: usize,
        define: bool,
    ) -> PResult<Option<PendingBody>> {
        let mut c = Cur::new(toks);
        c.i = at + 1;
        let mut kernel_cc = false;
        let mut internal = false;
        // Linkage, visibility, calling convention, return attributes.
        while !is_type_start(c.peek()) {
            match c.peek() {
                Tok::Word(w) => {
                    if w == "ptx_kernel" {
                        kernel_cc = true;
                    }
                    // Only the module can name such a function: the inliner may delete
                    // it once no call is left.
                    if w == "internal" || w == "private" {
                        internal = true;
                    }
                    let takes = matches!(w, "cc" | "align" | "dereferenceable");
                    c.bump();
                    if c.is_punct(b'(') {
                        c.skip_balanced()?;
                    } else if takes && matches!(c.peek(), Tok::Int(_)) {
                        c.bump();
                    }
                }
                Tok::Str(_) => {
                    c.bump();
                }
                _ => return Err(c.expected("a return type")),
            }
        }
        let ret_i = c.i;
        let ret = parse_type(&mut c, &mut self.types)?;
        let name_i = c.i;
        let name = match c.peek() {
            Tok::Global(n) => n.to_string(),
            _ => return Err(c.expected("a function name")),
        };
        c.bump();
        c.expect_punct(b'(')?;
        let mut params = Vec::new();
        let mut ptoks = Vec::new();
        let mut vararg = false;
        let mut by_copy = None;
        let mut byval = Vec::new();
        if !c.eat_punct(b')') {
            loop {
                if matches!(c.peek(), Tok::Ellipsis) {
                    c.bump();
                    vararg = true;
                } else {
                    ptoks.push(c.i);
                    let t = parse_type(&mut c, &mut self.types)?;
                    let pt = c.tok();
                    let attrs = skip_param_attrs(&mut c, &mut self.types)?;
                    if let Some(a) = attrs.by_copy {
                        by_copy = Some((pt, a));
                    }
                    byval.push(attrs.byval.map(|b| (b, pt, attrs.align.unwrap_or(1))));
                    let pname = match c.peek() {
                        Tok::Local(n) => {
                            let n = n.to_string();
                            c.bump();
                            Some(n)
                        }
                        _ => None,
                    };
                    params.push((pname, t));
                }
                if c.eat_punct(b')') {
                    break;
                }
                c.expect_punct(b',')?;
            }
        }
        // Function attributes, up to the body (or the end of a declaration).
        let mut convergent = false;
        let mut must_progress = false;
        let mut inline = InlineHint::Default;
        loop {
            if let Some(h) = inline_hint(c.peek()) {
                inline = stronger_hint(inline, h);
            }
            match c.peek() {
                Tok::Punct(b'{') if define => break,
                Tok::Word("convergent") => {
                    convergent = true;
                    c.bump();
                }
                Tok::Word("mustprogress") => {
                    must_progress = true;
                    c.bump();
                }
                Tok::AttrRef(n) => {
                    convergent |= self.convergent_groups.get(&n).copied().unwrap_or(false);
                    must_progress |= self.mustprogress_groups.get(&n).copied().unwrap_or(false);
                    if let Some(&h) = self.inline_groups.get(&n) {
                        inline = stronger_hint(inline, h);
                    }
                    c.bump();
                }
                Tok::Word(w) if w == "prefix" || w == "prologue" => {
                    return Err(c.unsup(format!("function {w} data")))
                }
                Tok::Eof if define => return Err(c.expected("`{`")),
                _ if !define => {
                    // A declaration ends where the next top-level entity starts.
                    match c.peek() {
                        Tok::Word(w)
                            if !matches!(
                                w,
                                "define"
                                    | "declare"
                                    | "attributes"
                                    | "target"
                                    | "source_filename"
                                    | "module"
                                    | "uselistorder"
                            ) && !w.starts_with('$') =>
                        {
                            c.bump();
                            if c.is_punct(b'(') {
                                c.skip_balanced()?;
                            }
                        }
                        Tok::Str(_) | Tok::Punct(b'=') | Tok::Int(_) => {
                            c.bump();
                        }
                        Tok::Meta(_) if !matches!(c.peek_at(1), Tok::Punct(b'=')) => {
                            c.bump();
                            c.skip_metadata_value()?;
                        }
                        _ => break,
                    }
                }
                Tok::Punct(b'(' | b'[') => c.skip_balanced()?,
                _ => {
                    c.bump();
                }
            }
        }
        if self.funcs.contains_key(&name) {
            return Err(c.err_at(c.at(name_i), format!("function @{name} redefined")));
        }
        let ptypes: Vec<TyId> = params.iter().map(|p| p.1).collect();
        if !define {
            if name.starts_with("llvm.") || name.starts_with("__nv_") {
                // Intrinsics and libdevice: resolved by name at each call.
            } else if self.opts.external_calls == ExternalCalls::Stub {
                self.stubs.push(name.clone());
            }
            self.funcs.insert(
                name,
                FuncInfo {
                    ret,
                    params: ptypes,
                    byval: byval.iter().map(|b| b.map(|(t, _, _)| t)).collect(),
                    vararg,
                    callee: Callee::Declared,
                },
            );
            return Ok(None);
        }
        let name_tok = c.at(name_i);
        if vararg {
            return Err(c.unsup_at(name_tok, "variadic function"));
        }
        if let Some((t, a)) = by_copy {
            return Err(c.unsup_at(t, format!("{a} parameter")));
        }
        let kernel = kernel_cc || self.annotated_kernel(&name);
        let mut sig = self.signature(&c, ret_i, ret, &ptoks, &ptypes)?;
        // A kernel's byval parameter keeps LLVM's ABI (the launch passes the bytes):
        // a `ptr.local` parameter with a `byval` description. A device function's is a
        // plain pointer; each call makes the copy.
        let mut byval_params = Vec::new();
        if kernel {
            let mut gi = 0usize;
            for (k, &p) in ptypes.iter().enumerate() {
                if let Some((bt, t, a)) = byval[k] {
                    let (size, abi) = self.types.size_align(bt).map_err(|m| c.unsup_at(t, m))?;
                    let size = u32::try_from(size)
                        .map_err(|_| c.unsup_at(t, "byval parameter too large"))?;
                    if !matches!(self.types.get(p), LType::Ptr(0 | 5)) {
                        return Err(c.unsup_at(t, "byval parameter in this address space"));
                    }
                    let align = abi.max(a).clamp(1, 1 << 16);
                    if !align.is_power_of_two() {
                        return Err(c.err_at(t, "byval alignment must be a power of two"));
                    }
                    sig.params[gi] = Type::Ptr(AddrSpace::Local);
                    byval_params.push(gyre_ir::ByValParam {
                        index: gi as u32,
                        size,
                        align: align as u32,
                    });
                }
                gi += self
                    .types
                    .leaf_count(p)
                    .map_err(|m| c.unsup_at(c.at(ptoks[k]), m))?;
            }
        }
        if kernel && !matches!(self.types.get(ret), LType::Void) {
            return Err(c.unsup_at(name_tok, "kernel returning a value"));
        }
        let kind = if kernel {
            FuncKind::Kernel
        } else {
            FuncKind::Device
        };
        let mut f = Function::new(name.clone(), kind, sig);
        f.convergent = convergent;
        f.must_progress = must_progress;
        // LLVM leaves the payload of a NaN that arithmetic produces unspecified (LangRef,
        // "Floating-Point Semantics"): so does every function imported from it.
        f.any_nan = true;
        f.internal = internal;
        f.inline = inline;
        f.byval = byval_params;
        let id = self.module.functions.push(f);
        self.fn_pos.insert(name.clone(), name_tok.pos);
        self.funcs.insert(
            name,
            FuncInfo {
                ret,
                params: ptypes,
                byval: byval.iter().map(|b| b.map(|(t, _, _)| t)).collect(),
                vararg,
                callee: Callee::Func(id),
            },
        );
        Ok(Some(PendingBody {
            id,
            open: c.i,
            params,
            name_tok: name_i,
        }))
    }

    /// The Gyre signature of an LLVM function type. An aggregate parameter becomes one
    /// parameter per leaf; an aggregate return becomes a hidden last parameter, a
    /// `ptr.local` to the caller's buffer the callee stores the leaves into (at their
    /// offsets in the LLVM layout), and the function returns nothing.
    fn signature(
        &self,
        c: &Cur,
        ret_i: usize,
        ret: TyId,
        ptoks: &[usize],
        params: &[TyId],
    ) -> PResult<Signature> {
        let mut out = Vec::new();
        for (&p, &i) in params.iter().zip(ptoks) {
            let err = |m| c.unsup_at(c.at(i), m);
            match self.types.leaves(p).map_err(err)? {
                Some(ls) => {
                    for (_, lt) in ls {
                        out.push(self.types.scalar(lt).map_err(err)?);
                    }
                }
                None => out.push(self.types.scalar(p).map_err(err)?),
            }
        }
        let err = |m| c.unsup_at(c.at(ret_i), m);
        let ret = match self.types.get(ret) {
            LType::Void => None,
            _ => match self.types.leaves(ret).map_err(err)? {
                Some(ls) => {
                    for (_, lt) in ls {
                        self.types.scalar(lt).map_err(err)?;
                    }
                    out.push(Type::Ptr(AddrSpace::Local));
                    None
                }
                None => Some(self.types.scalar(ret).map_err(err)?),
            },
        };
        Ok(Signature { params: out, ret })
    }

    /// Give stubbed externals a body: return zero of the return type, or nothing.
    fn make_stubs(&mut self) {
        for name in std::mem::take(&mut self.stubs) {
            let Some(info) = self.funcs.get(&name).cloned() else {
                continue;
            };
            let ret = match self.types.get(info.ret) {
                LType::Void => None,
                _ => match self.types.scalar(info.ret) {
                    Ok(t) => Some(t),
                    Err(_) => continue,
                },
            };
            let Ok(params) = info
                .params
                .iter()
                .map(|&p| self.types.scalar(p))
                .collect::<Result<Vec<_>, _>>()
            else {
                continue;
            };
            if info.vararg {
                continue;
            }
            let mut f = Function::new(
                name.clone(),
                FuncKind::Device,
                Signature {
                    params: params.clone(),
                    ret,
                },
            );
            // Imported like any other function (and a caller with `anynan` that inlines
            // it keeps the attribute).
            f.any_nan = true;
            let b = f.append_new_block();
            for &p in &params {
                f.dfg.append_block_param(b, p);
            }
            let mut rets = Vec::new();
            if let Some(t) = ret {
                rets.push(body::zero_in_block(&mut f, b, t));
            }
            let args = gyre_ir::ValueList::from_slice(&rets, &mut f.dfg.value_lists);
            f.append_inst(b, gyre_ir::InstructionData::Return { args }, None);
            let id = self.module.functions.push(f);
            if let Some(fi) = self.funcs.get_mut(&name) {
                fi.callee = Callee::Func(id);
            }
        }
    }
}

/// Can this token start a constant (so a global has an initializer)?
/// The inliner request an attribute token makes, if it is `alwaysinline`, `noinline` or
/// `inlinehint`.
fn inline_hint(t: Tok<'_>) -> Option<InlineHint> {
    match t {
        Tok::Word("alwaysinline") => Some(InlineHint::Always),
        Tok::Word("noinline") => Some(InlineHint::Never),
        Tok::Word("inlinehint") => Some(InlineHint::Hint),
        _ => None,
    }
}

/// Of two requests on one function, the one that wins: `noinline`, then `alwaysinline`,
/// then `inlinehint` (LLVM's inliner checks them in that order).
fn stronger_hint(a: InlineHint, b: InlineHint) -> InlineHint {
    let rank = |h| match h {
        InlineHint::Default => 0,
        InlineHint::Hint => 1,
        InlineHint::Always => 2,
        InlineHint::Never => 3,
    };
    if rank(b) > rank(a) {
        b
    } else {
        a
    }
}

fn starts_const(t: Tok<'_>) -> bool {
    match t {
        Tok::Int(_) | Tok::Float(_) | Tok::HexFloat(..) | Tok::Global(_) | Tok::CStr(_) => true,
        Tok::Punct(b'[' | b'{' | b'<') => true,
        Tok::Word(w) => parse::is_value_word(w),
        _ => false,
    }
}

/// The low `bits` bits of `v` (two's complement).
pub(crate) fn trunc_bits(v: i128, bits: u32) -> u64 {
    let v = v as u128 as u64;
    if bits >= 64 {
        v
    } else {
        v & ((1u64 << bits) - 1)
    }
}

/// IEEE bits of a float literal for `ty` (an f32 in the low 32 bits).
pub(crate) fn float_bits(v: &CVal, ty: Type) -> Result<u64, String> {
    let d = match *v {
        CVal::Float(f) => f.to_bits(),
        CVal::HexFloat('\0', b) => b,
        CVal::HexFloat(k, _) => return Err(format!("0x{k} floating-point constant")),
        _ => return Err("not a floating-point constant".into()),
    };
    Ok(match ty {
        Type::F64 => d,
        Type::F32 => u64::from(f64_bits_to_f32_bits(d)),
        _ => return Err("floating-point constant for a non-float type".into()),
    })
}

/// Narrow double bits to float bits: exact for representable values, NaN payloads kept
/// (LLVM writes float constants as the equivalent double).
pub(crate) fn f64_bits_to_f32_bits(d: u64) -> u32 {
    let f = f64::from_bits(d);
    if f.is_nan() {
        let sign = ((d >> 63) as u32) << 31;
        let mant = ((d >> 29) & 0x7f_ffff) as u32;
        sign | 0x7f80_0000 | mant.max(1)
    } else {
        (f as f32).to_bits()
    }
}

/// Widen float bits to double bits exactly, NaN payloads kept.
pub(crate) fn f32_bits_to_f64_bits(b: u32) -> u64 {
    let f = f32::from_bits(b);
    if f.is_nan() {
        let sign = u64::from(b >> 31) << 63;
        let mant = u64::from(b & 0x7f_ffff) << 29;
        sign | 0x7ff0_0000_0000_0000 | mant
    } else {
        f64::from(f).to_bits()
    }
}
