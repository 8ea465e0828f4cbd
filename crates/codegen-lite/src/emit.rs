//! The lowering proper: module directives, globals, one function at a time.
//!
//! Register classes: `i1` lives in `.pred` (`%p`); `i8`, `i16` and `i32` in `.b32`
//! (`%r`), the narrow ones **zero-extended** (every instruction that produces an `i8` or
//! `i16` re-establishes that, and signed operations sign-extend their operands first);
//! `i64` and pointers in `.b64` (`%rd`); `f32` in `.f32` (`%f`); `f64` in `.f64` (`%fd`).
//! Each IR value has its own virtual register; temporaries are fresh registers too.

use crate::fold::{add_zext_aliases, address_folds, single_edge_aliases, Fold};
use crate::space::infer_spaces;
use crate::uniform::BranchUniformity;
use crate::{fmod, mangle, nan, order, pcopy, CodegenError, CodegenFlags, CodegenOptions};
use bitvec::vec::BitVec;
use core::fmt::{self, Write};
use cranelift_entity::{EntityRef, SecondaryMap};
use gyre_analysis::{Analyses, Cfg, DomTree, LoopInfo, ModuleAnalyses};
use gyre_ir::{
    AddrSpace, AtomicOp, Block, BlockCall, FloatCC, FuncKind, Function, Inst, InstructionData,
    IntCC, Linkage, MemOrder, MemScope, Module, Opcode, SpecialReg, Type, Value, ValueDef,
    VoteMode,
};
use rustc_hash::FxHashMap;

/// A PTX register class.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
enum Class {
    Pred,
    B32,
    B64,
    F32,
    F64,
}

const CLASSES: [Class; 5] = [Class::Pred, Class::B32, Class::B64, Class::F32, Class::F64];

impl Class {
    fn of(ty: Type) -> Class {
        match ty {
            Type::I1 => Class::Pred,
            Type::I8 | Type::I16 | Type::I32 => Class::B32,
            Type::I64 | Type::Ptr(_) => Class::B64,
            Type::F32 => Class::F32,
            Type::F64 => Class::F64,
        }
    }
    fn index(self) -> usize {
        self as usize
    }
    fn prefix(self) -> &'static str {
        ["%p", "%r", "%rd", "%f", "%fd"][self.index()]
    }
    fn decl(self) -> &'static str {
        [".pred", ".b32", ".b64", ".f32", ".f64"][self.index()]
    }
    fn mov(self) -> &'static str {
        ["mov.pred", "mov.b32", "mov.b64", "mov.f32", "mov.f64"][self.index()]
    }
}

/// A virtual register.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
struct Reg {
    class: Class,
    n: u32,
}

impl fmt::Display for Reg {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Registers are most of the PTX text: digits into a stack buffer and one
        // `write_str`, instead of a nested `write!` per register.
        let mut buf = [0u8; 16];
        let prefix = self.class.prefix().as_bytes();
        buf[..prefix.len()].copy_from_slice(prefix);
        let mut digits = [0u8; 10];
        let (mut n, mut k) = (self.n, digits.len());
        loop {
            k -= 1;
            digits[k] = b'0' + (n % 10) as u8;
            n /= 10;
            if n == 0 {
                break;
            }
        }
        let len = prefix.len() + digits.len() - k;
        buf[prefix.len()..len].copy_from_slice(&digits[k..]);
        // Only ASCII was written.
        f.write_str(core::str::from_utf8(&buf[..len]).map_err(|_| fmt::Error)?)
    }
}

/// An instruction operand: a register, or a constant folded into the instruction
/// (`crate::fold::imm_slots`) written as PTX writes immediates.
#[derive(Copy, Clone, Debug)]
enum Opnd {
    Reg(Reg),
    /// An integer, in decimal (signed for `.s` instructions, unsigned otherwise).
    Signed(i64),
    Unsigned(u64),
    /// A float's bits: `0fXXXXXXXX` or `0dXXXXXXXXXXXXXXXX`.
    F32(u32),
    F64(u64),
}

impl fmt::Display for Opnd {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Opnd::Reg(r) => r.fmt(f),
            Opnd::Signed(x) => write!(f, "{x}"),
            Opnd::Unsigned(x) => write!(f, "{x}"),
            Opnd::F32(b) => write!(f, "0f{b:08X}"),
            Opnd::F64(b) => write!(f, "0d{b:016X}"),
        }
    }
}

/// An edge stub of a `br_table`: its label, the edge's copies and the target.
type Stub = (String, Vec<(Reg, Opnd)>, Block);

/// Which runtime helpers the module needs.
#[derive(Default)]
struct Helpers {
    fmod: [bool; 2],
    /// The module calls the PTX system calls `vprintf` / `__assertfail`.
    vprintf: bool,
    assertfail: bool,
}

/// The CUDA runtime's declaration of `vprintf` (as llc prints it).
const VPRINTF_DECL: &str = ".extern .func (.param .b32 func_retval0) vprintf\n(\n\t.param .b64 vprintf_param_0,\n\t.param .b64 vprintf_param_1\n)\n;";

/// The CUDA runtime's declaration of `__assertfail` (as llc prints it).
const ASSERTFAIL_DECL: &str = ".extern .func __assertfail\n(\n\t.param .b64 __assertfail_param_0,\n\t.param .b64 __assertfail_param_1,\n\t.param .b32 __assertfail_param_2,\n\t.param .b64 __assertfail_param_3,\n\t.param .b64 __assertfail_param_4\n)\n;";

/// Write one instruction line: a tab, the text, `;` and a newline.
macro_rules! ins {
    ($s:expr, $($arg:tt)*) => {{
        $s.out.push('\t');
        let _ = write!($s.out, $($arg)*);
        $s.out.push_str(";\n");
    }};
}

/// A memory operand's contents: a register and a byte offset (`%rd3`, `%rd3+8`,
/// `%rd3+-4`, PTX's `[reg+imm]` form as llc writes it).
#[derive(Copy, Clone)]
struct Addr {
    reg: Reg,
    off: i64,
}

impl fmt::Display for Addr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.off == 0 {
            write!(f, "{}", self.reg)
        } else {
            write!(f, "{}+{}", self.reg, self.off)
        }
    }
}

/// All-ones mask of an integer type's width.
fn mask_of(ty: Type) -> u64 {
    match ty.bits() {
        64 => u64::MAX,
        b => (1u64 << b) - 1,
    }
}

/// Is this a narrow integer kept zero-extended in a 32-bit register?
fn is_narrow(ty: Type) -> bool {
    matches!(ty, Type::I8 | Type::I16)
}

/// The `.param` type of a kernel parameter.
fn kernel_param_type(ty: Type) -> &'static str {
    match ty {
        Type::I1 | Type::I8 => ".u8",
        Type::I16 => ".u16",
        Type::I32 => ".u32",
        Type::I64 | Type::Ptr(_) => ".u64",
        Type::F32 => ".f32",
        Type::F64 => ".f64",
    }
}

/// The `.param` type of a device-function parameter or return value (sub-word integers
/// are widened to 32 bits, as the PTX ABI does).
fn func_param_type(ty: Type) -> &'static str {
    match ty {
        Type::I1 | Type::I8 | Type::I16 | Type::I32 => "b32",
        Type::I64 | Type::Ptr(_) => "b64",
        Type::F32 => "f32",
        Type::F64 => "f64",
    }
}

/// The memory type suffix of a load or store of `ty` (`i1` is a byte).
fn mem_type(ty: Type) -> &'static str {
    match ty {
        Type::I1 | Type::I8 => "u8",
        Type::I16 => "u16",
        Type::I32 => "u32",
        Type::I64 | Type::Ptr(_) => "u64",
        Type::F32 => "f32",
        Type::F64 => "f64",
    }
}

/// The state-space qualifier (with its dot) for an address space; generic has none.
fn space_qual(space: AddrSpace) -> &'static str {
    match space {
        AddrSpace::Generic => "",
        AddrSpace::Global => ".global",
        AddrSpace::Shared => ".shared",
        AddrSpace::Const => ".const",
        AddrSpace::Local => ".local",
    }
}

/// `global`, `shared`, ... for `cvta`.
fn space_name(space: AddrSpace) -> &'static str {
    space.name()
}

fn float_imm(is64: bool, bits: u64) -> String {
    if is64 {
        format!("0d{bits:016X}")
    } else {
        format!("0f{:08X}", bits as u32)
    }
}

fn label(b: Block) -> String {
    format!("$L__BB{}", b.index())
}

/// The PTX header of a function: linkage, return parameter, name and parameters.
fn func_header(f: &Function) -> String {
    let name = mangle(&f.name);
    let mut s = String::new();
    match f.kind {
        FuncKind::Kernel => {
            let _ = write!(s, ".visible .entry {name}(");
            for (i, &t) in f.sig.params.iter().enumerate() {
                let sep = if i == 0 { "" } else { "," };
                match f.byval_param(i) {
                    // LLVM's kernel byval ABI: the struct's bytes in param space.
                    Some(b) => {
                        let _ = write!(
                            s,
                            "{sep}\n\t.param .align {} .b8 $$param{i}[{}]",
                            b.align.max(1),
                            b.size.max(1)
                        );
                    }
                    None => {
                        let _ = write!(s, "{sep}\n\t.param {} $$param{i}", kernel_param_type(t));
                    }
                }
            }
        }
        FuncKind::Device => {
            s.push_str(".func ");
            if let Some(r) = f.sig.ret {
                let _ = write!(s, "(.param .{} $$retval) ", func_param_type(r));
            }
            let _ = write!(s, "{name}(");
            for (i, &t) in f.sig.params.iter().enumerate() {
                let sep = if i == 0 { "" } else { "," };
                let _ = write!(s, "{sep}\n\t.param .{} $$param{i}", func_param_type(t));
            }
        }
    }
    s.push_str(if f.sig.params.is_empty() { ")" } else { "\n)" });
    s
}

/// Lower a verified module, reading (and filling) the per-function analysis caches.
pub(crate) fn emit_module(
    m: &Module,
    opts: &CodegenOptions,
    flags: &CodegenFlags,
    analyses: &mut ModuleAnalyses,
) -> Result<String, CodegenError> {
    let mut helpers = Helpers::default();
    let mut bodies = String::new();
    let needed = Analyses::CFG
        .union(Analyses::LOOPS)
        .union(Analyses::UNIFORMITY);
    for (id, f) in m.functions.iter() {
        let cache = analyses.get_mut(id);
        cache.ensure(f, needed).map_err(|e| match e {
            gyre_analysis::AnalysisError::Cfg(
                ref c @ gyre_analysis::CfgError::InvalidTarget { inst, .. },
            ) => CodegenError::Unsupported {
                func: f.name.clone(),
                inst,
                what: c.to_string(),
            },
        })?;
        // Irreducible cycles need nothing special: PTX branches anywhere, the block
        // order places every reachable block once, parallel copies are per edge, and the
        // uniformity analysis treats such cycles conservatively (`bra.uni` stays sound).
        let (cfg, li) = (&cache.cfg, &cache.loops);
        let mut folds = address_folds(f, flags.fp_contract);
        let mut alias = single_edge_aliases(f, cfg);
        add_zext_aliases(f, &mut alias);
        for v in f.dfg.values() {
            // A value standing for a constant (a single-edge block parameter) is read
            // through `v`, so the constant keeps its register.
            if let Some(a) = alias[v] {
                if folds[a] == Fold::Imm {
                    folds[a] = Fold::None;
                }
            }
        }
        let mut e = FnEmitter {
            m,
            f,
            uni: BranchUniformity::new(&cache.uniformity),
            canon: if flags.canonical_nans {
                nan::observed_floats(f, cfg)
            } else {
                BitVec::repeat(false, f.dfg.num_values())
            },
            folds,
            alias,
            spaces: infer_spaces(m, f),
            li,
            escaping: BitVec::new(),
            regs: SecondaryMap::with_default(0),
            counts: [0; 5],
            out: String::new(),
            stubs: 0,
            slot_offsets: Vec::new(),
            byval_offsets: Vec::new(),
            helpers: &mut helpers,
            widened: FxHashMap::default(),
        };
        e.emit_function(cfg, &cache.domtree, li, &mut bodies)?;
    }

    let mut out = String::with_capacity(bodies.len() + 1024);
    let _ = writeln!(out, "//\n// Generated by gyre-codegen-lite\n//\n");
    let _ = writeln!(out, ".version {}", opts.sm.ptx_version());
    let _ = writeln!(out, ".target {}", opts.sm.target());
    let _ = writeln!(out, ".address_size 64\n");
    // Prototypes, so that calls may precede definitions.
    let mut any_proto = false;
    for f in m.functions.values().filter(|f| f.kind == FuncKind::Device) {
        let _ = writeln!(out, "{};", func_header(f));
        any_proto = true;
    }
    for is64 in [false, true] {
        if helpers.fmod[usize::from(is64)] {
            let _ = writeln!(out, "{};", fmod::helper_decl(is64));
            any_proto = true;
        }
    }
    for (used, decl) in [
        (helpers.vprintf, VPRINTF_DECL),
        (helpers.assertfail, ASSERTFAIL_DECL),
    ] {
        if used {
            let _ = writeln!(out, "{decl}");
            any_proto = true;
        }
    }
    if any_proto {
        out.push('\n');
    }
    for g in m.globals.values() {
        let space = space_qual(g.space);
        if g.linkage == Linkage::Extern {
            // The dynamic shared array: its size is the launch's, as llc declares it.
            let _ = writeln!(
                out,
                ".extern {space} .align {} .b8 {}[];",
                g.align.max(1),
                mangle(&g.name)
            );
            continue;
        }
        let size = g.size().max(1);
        let visible = if g.linkage == Linkage::Visible {
            ".visible "
        } else {
            ""
        };
        let _ = write!(
            out,
            "{visible}{space} .align {} .b8 {}[{size}]",
            g.align.max(1),
            mangle(&g.name)
        );
        // PTX zero-fills `.global` and `.const` variables, so an all-zero initializer is
        // left out (as llc does; for a host-initialised global it would only be noise).
        let init = g.init.as_ref().filter(|v| v.iter().any(|&b| b != 0));
        if let (Some(init), false) = (init, g.space == AddrSpace::Shared) {
            out.push_str(" = {");
            let n = g.elem.bytes() as usize;
            let mut first = true;
            for &bits in init {
                for byte in &bits.to_le_bytes()[..n] {
                    if !first {
                        out.push_str(", ");
                    }
                    first = false;
                    let _ = write!(out, "{byte}");
                }
            }
            if first {
                out.push('0');
            }
            out.push('}');
        }
        out.push_str(";\n");
    }
    if !m.globals.is_empty() {
        out.push('\n');
    }
    out.push_str(&bodies);
    for is64 in [false, true] {
        if helpers.fmod[usize::from(is64)] {
            out.push_str(&fmod::helper_def(is64));
            out.push('\n');
        }
    }
    Ok(out)
}

struct FnEmitter<'a> {
    m: &'a Module,
    f: &'a Function,
    uni: BranchUniformity<'a>,
    /// Float values whose NaNs must be canonical (see [`nan`]).
    canon: BitVec,
    /// Values folded into their uses (see [`crate::fold`]).
    folds: SecondaryMap<Value, Fold>,
    /// Block parameters that share their only argument's register.
    alias: SecondaryMap<Value, Option<Value>>,
    /// Generic pointers held as addresses of a specific space (see [`crate::space`]).
    spaces: SecondaryMap<Value, Option<AddrSpace>>,
    /// The function's loops.
    li: &'a LoopInfo,
    /// Per value: a loop header's parameter whose register is read outside the loop
    /// (directly or through an alias), so its back-edge copies may not run on the exit
    /// path (see [`FnEmitter::brif`]).
    escaping: BitVec,
    /// Register number per value (0: none yet).
    regs: SecondaryMap<Value, u32>,
    /// Registers used per class.
    counts: [u32; 5],
    /// The function body.
    out: String,
    /// Edge-stub labels used so far.
    stubs: u32,
    /// Byte offset of each slot in the local depot.
    slot_offsets: Vec<u32>,
    /// Byte offset of each `byval` parameter's copy in the local depot, by parameter.
    byval_offsets: Vec<(usize, u32)>,
    helpers: &'a mut Helpers,
    /// The `mad.wide` `ptradd`s of the current block by (base, `i32` index, scale,
    /// signed): a second one with the same key shares the first's register (llc's
    /// CSE; `[reg+off]` accesses of `x-1`, `x`, `x+1` then need one `mad.wide`).
    widened: FxHashMap<(Value, Value, u32, bool), Value>,
}

impl FnEmitter<'_> {
    fn err(&self, inst: Inst, what: impl Into<String>) -> CodegenError {
        CodegenError::Unsupported {
            func: self.f.name.clone(),
            inst,
            what: what.into(),
        }
    }

    /// The `.sem.scope` qualifiers of an atomic (empty for the default relaxed GPU-scope
    /// one, which plain `atom` is); a sequentially consistent atomic is preceded by
    /// `fence.sc`, the PTX memory model's mapping of a C++ `seq_cst` RMW.
    fn atom_sem(&mut self, order: MemOrder, scope: MemScope) -> String {
        let sem = match order {
            MemOrder::Relaxed if scope == MemScope::Gpu => return String::new(),
            MemOrder::Relaxed => "relaxed",
            MemOrder::Acquire => "acquire",
            MemOrder::Release => "release",
            MemOrder::AcqRel => "acq_rel",
            MemOrder::SeqCst => {
                ins!(self, "fence.sc.{}", scope.name());
                "acq_rel"
            }
        };
        format!(".{sem}.{}", scope.name())
    }

    fn ty(&self, v: Value) -> Type {
        self.f.dfg.value_type(v)
    }

    /// The register of a value.
    fn v(&mut self, mut v: Value) -> Reg {
        while let Some(a) = self.alias[v] {
            v = a;
        }
        if self.folds[v] == Fold::Imm {
            // Only reached if a use outside `imm_slots` read it: still correct.
            return self.materialize(v);
        }
        let class = Class::of(self.ty(v));
        let n = match self.regs[v] {
            0 => {
                let c = &mut self.counts[class.index()];
                *c += 1;
                self.regs[v] = *c;
                *c
            }
            n => n,
        };
        Reg { class, n }
    }

    /// The [`FnEmitter::widened`] key of `ptradd base, ext(x), scale` whose extension is
    /// folded (`mad.wide` of `x`, seeing through a `Fold::IndexAdd`).
    fn widened_key(&self, args: [Value; 2], scale: u32) -> Option<(Value, Value, u32, bool)> {
        if self.folds[args[1]] != Fold::Ext {
            return None;
        }
        let dfg = &self.f.dfg;
        let ValueDef::Result(ext) = dfg.value_def(args[1]) else {
            return None;
        };
        let InstructionData::Unary { opcode, arg } = *dfg.inst(ext) else {
            return None;
        };
        let x = match self.folds[arg] {
            Fold::IndexAdd { x } => x,
            _ => arg,
        };
        let resolve = |mut v: Value| {
            while let Some(a) = self.alias[v] {
                v = a;
            }
            v
        };
        Some((resolve(args[0]), resolve(x), scale, opcode == Opcode::Sext))
    }

    /// A constant folded to [`Fold::Imm`] in a fresh register.
    fn materialize(&mut self, v: Value) -> Reg {
        let class = Class::of(self.ty(v));
        let t = self.tmp(class);
        let o = self.imm(v, false);
        ins!(
            self,
            "mov.{} {t}, {o}",
            ["pred", "b32", "b64", "f32", "f64"][class.index()]
        );
        t
    }

    /// The immediate of a constant folded to [`Fold::Imm`]; integers signed or not.
    fn imm(&self, v: Value, signed: bool) -> Opnd {
        let dfg = &self.f.dfg;
        let ValueDef::Result(i) = dfg.value_def(v) else {
            unreachable!("only constants are immediates")
        };
        let ty = self.ty(v);
        match (dfg.inst(i), ty) {
            (&InstructionData::IntConst { imm }, Type::I32) if signed => {
                Opnd::Signed(i64::from(imm as i32))
            }
            (&InstructionData::IntConst { imm }, Type::I32) => {
                Opnd::Unsigned(u64::from(imm as u32))
            }
            (&InstructionData::IntConst { imm }, _) if signed => Opnd::Signed(imm),
            (&InstructionData::IntConst { imm }, _) => Opnd::Unsigned(imm as u64),
            (&InstructionData::FloatConst { bits }, Type::F64) => Opnd::F64(bits),
            (&InstructionData::FloatConst { bits }, _) => Opnd::F32(bits as u32),
            _ => unreachable!("only constants are immediates"),
        }
    }

    /// An operand at one of `crate::fold::imm_slots`: the immediate of a folded
    /// constant (integers `signed` or not, as the instruction's type says), else the
    /// register.
    fn opnd(&mut self, mut v: Value, signed: bool) -> Opnd {
        while let Some(a) = self.alias[v] {
            v = a;
        }
        if self.folds[v] == Fold::Imm {
            self.imm(v, signed)
        } else {
            Opnd::Reg(self.v(v))
        }
    }

    /// The memory operand of an access through `ptr`: its register, or the base and
    /// offset of a folded `ptradd`.
    fn addr(&mut self, ptr: Value) -> Addr {
        match self.folds[ptr] {
            Fold::Addr { base, off } => Addr {
                reg: self.v(base),
                off,
            },
            Fold::Shifted { off } => Addr {
                reg: self.v(ptr),
                off,
            },
            _ => Addr {
                reg: self.v(ptr),
                off: 0,
            },
        }
    }

    /// The space an access through `ptr` names: its type's, or the inferred one.
    fn space(&self, ptr: Value) -> AddrSpace {
        self.spaces[ptr]
            .or(self.ty(ptr).addr_space())
            .unwrap_or(AddrSpace::Generic)
    }

    /// A fresh temporary.
    fn tmp(&mut self, class: Class) -> Reg {
        let c = &mut self.counts[class.index()];
        *c += 1;
        Reg { class, n: *c }
    }

    fn emit_function(
        &mut self,
        cfg: &Cfg,
        dt: &DomTree,
        li: &LoopInfo,
        bodies: &mut String,
    ) -> Result<(), CodegenError> {
        let f = self.f;
        let entry = f
            .entry_block()
            .expect("a verified function has an entry block");
        // Local depot: the slots, each at its alignment.
        let mut size = 0u64;
        let mut align = 1u32;
        for s in f.slots.values() {
            let a = s.align.max(1);
            size = size.div_ceil(u64::from(a)) * u64::from(a);
            self.slot_offsets.push(size as u32);
            size += u64::from(s.size);
            align = align.max(a);
        }
        // Then the copies of the byval parameters.
        for b in &f.byval {
            let a = b.align.max(1);
            size = size.div_ceil(u64::from(a)) * u64::from(a);
            self.byval_offsets.push((b.index as usize, size as u32));
            size += u64::from(b.size);
            align = align.max(a);
        }
        if size > u64::from(u32::MAX) {
            return Err(CodegenError::Unsupported {
                func: f.name.clone(),
                inst: Inst::new(0),
                what: "local slots larger than 4 GiB".into(),
            });
        }

        self.find_escaping(cfg);
        let homes = self.param_homes(cfg, dt, li, entry);
        for &(b, i) in homes.iter().filter(|h| h.0 == entry) {
            debug_assert_eq!(b, entry);
            self.load_param(i);
        }
        let order = order::block_order(cfg, li);
        for (i, &b) in order.iter().enumerate() {
            let next = order.get(i + 1).copied();
            if b != entry {
                let _ = writeln!(self.out, "{}:", label(b));
                self.widened.clear();
                for &(_, k) in homes.iter().filter(|h| h.0 == b) {
                    self.load_param(k);
                }
            }
            for inst in f.layout.block_insts(b) {
                self.inst(inst, next)?;
            }
        }

        let _ = writeln!(bodies, "{}\n{{", func_header(f));
        if !f.slots.is_empty() || !f.byval.is_empty() {
            let _ = writeln!(
                bodies,
                "\t.local .align {align} .b8 $$depot[{}];",
                size.max(1)
            );
        }
        for c in CLASSES {
            let n = self.counts[c.index()];
            if n > 0 {
                let _ = writeln!(bodies, "\t.reg {} {}<{}>;", c.decl(), c.prefix(), n + 1);
            }
        }
        bodies.push('\n');
        bodies.push_str(&self.out);
        bodies.push_str("}\n\n");
        Ok(())
    }

    /// Mark the loop-header parameters whose registers are read outside their loop.
    fn find_escaping(&mut self, cfg: &Cfg) {
        let f = self.f;
        let dfg = &f.dfg;
        let mut escaping: BitVec = BitVec::repeat(false, dfg.num_values());
        for &b in cfg.rpo() {
            for inst in f.layout.block_insts(b) {
                dfg.for_each_inst_value(inst, |mut v| {
                    while let Some(a) = self.alias[v] {
                        v = a;
                    }
                    if let ValueDef::Param(h, _) = dfg.value_def(v) {
                        if let Some(l) = self.li.innermost_loop(h) {
                            if self.li.header(l) == h && !self.li.contains(l, b) {
                                escaping.set(v.index(), true);
                            }
                        }
                    }
                });
            }
        }
        self.escaping = escaping;
    }

    /// May the copies of an edge from `from` to `to` run before the branch that picks
    /// between `to` and `other`, on `other`'s path too? Yes for a back edge to a loop
    /// header whose parameters are never read outside the loop when `other` leaves the
    /// loop (a parameter is redefined before any read once the loop is re-entered),
    /// provided no copy overwrites the branch condition.
    fn copies_may_precede(
        &self,
        from: Block,
        to: Block,
        other: Block,
        copies: &[(Reg, Opnd)],
        cond: Reg,
    ) -> bool {
        let li = self.li;
        let Some(l) = li.innermost_loop(to) else {
            return false;
        };
        li.header(l) == to
            && to != other
            && li.contains(l, from)
            && !li.contains(l, other)
            && copies.iter().all(|&(d, _)| d != cond)
            && self
                .f
                .dfg
                .block_params(to)
                .iter()
                .all(|p| !self.escaping[p.index()])
    }

    /// Where each used parameter (by index) is loaded from the parameter space: the
    /// nearest common dominator of its uses, or the nearest dominator of that outside
    /// every loop, as llc sinks `ld.param` past an early-exit guard (threads that leave
    /// early never load it). A kernel's `byval` parameters are copied in the entry.
    /// Sorted by parameter index; a register of a parameter is then written on every
    /// path to each use, once per execution.
    fn param_homes(
        &self,
        cfg: &Cfg,
        dt: &DomTree,
        li: &LoopInfo,
        entry: Block,
    ) -> Vec<(Block, usize)> {
        let f = self.f;
        let dfg = &f.dfg;
        let params = dfg.block_params(entry);
        let mut home: Vec<Option<Block>> = vec![None; params.len()];
        let ncd = |mut a: Block, mut b: Block| {
            while a != b {
                if dt.depth(a) >= dt.depth(b) {
                    a = dt.idom(a).unwrap_or(entry);
                } else {
                    b = dt.idom(b).unwrap_or(entry);
                }
            }
            a
        };
        for &b in cfg.rpo() {
            for inst in f.layout.block_insts(b) {
                dfg.for_each_inst_value(inst, |mut v| {
                    while let Some(a) = self.alias[v] {
                        v = a;
                    }
                    if let ValueDef::Param(pb, i) = dfg.value_def(v) {
                        if pb == entry {
                            let h = &mut home[i as usize];
                            *h = Some(h.map_or(b, |h| ncd(h, b)));
                        }
                    }
                });
            }
        }
        let kernel = f.kind == FuncKind::Kernel;
        let mut out = Vec::new();
        for (i, h) in home.into_iter().enumerate() {
            if self.folds[params[i]] == Fold::Unused {
                // Nothing reads it (a kernel's `byval` copy included).
                continue;
            }
            let mut h = match h {
                Some(h) if !(kernel && f.byval_param(i).is_some()) => h,
                _ => entry,
            };
            // Out of loops and irreducible cycles, which would load it per iteration.
            while h != entry && (li.loop_depth(h) > 0 || li.in_irreducible_cycle(h)) {
                h = dt.idom(h).unwrap_or(entry);
            }
            out.push((h, i));
        }
        out
    }

    /// Load parameter `i` into its register (at the current position: see
    /// [`FnEmitter::param_homes`]).
    fn load_param(&mut self, i: usize) {
        let entry = self
            .f
            .entry_block()
            .expect("a verified function has an entry block");
        let p = self.f.dfg.block_params(entry)[i];
        let kernel = self.f.kind == FuncKind::Kernel;
        {
            let ty = self.ty(p);
            let d = self.v(p);
            if let (true, Some(b)) = (kernel, self.f.byval_param(i)) {
                // Copy the bytes from param space into the thread's local frame; the
                // parameter is the copy's address.
                let off = self
                    .byval_offsets
                    .iter()
                    .find(|x| x.0 == i)
                    .map_or(0, |x| x.1);
                let (size, align) = (u64::from(b.size), u64::from(b.align.max(1)));
                let unit_max = 1u64 << align.min(8).trailing_zeros();
                let mut k = 0u64;
                while k < size {
                    let mut u = unit_max;
                    while u > 1 && (!k.is_multiple_of(u) || k + u > size) {
                        u /= 2;
                    }
                    let bits = u * 8;
                    let t = self.tmp(if u == 8 { Class::B64 } else { Class::B32 });
                    ins!(self, "ld.param.u{bits} {t}, [$$param{i}+{k}]");
                    ins!(
                        self,
                        "st.local.u{bits} [$$depot+{}], {t}",
                        u64::from(off) + k
                    );
                    k += u;
                }
                if off == 0 {
                    ins!(self, "mov.u64 {d}, $$depot");
                } else {
                    let t = self.tmp(Class::B64);
                    ins!(self, "mov.u64 {t}, $$depot");
                    ins!(self, "add.s64 {d}, {t}, {off}");
                }
                return;
            }
            if kernel {
                let pt = &kernel_param_type(ty)[1..];
                match ty {
                    Type::I1 => {
                        let t = self.tmp(Class::B32);
                        ins!(self, "ld.param.u8 {t}, [$$param{i}]");
                        ins!(self, "and.b32 {t}, {t}, 1");
                        ins!(self, "setp.ne.b32 {d}, {t}, 0");
                    }
                    Type::Ptr(AddrSpace::Global) => {
                        let t = self.tmp(Class::B64);
                        ins!(self, "ld.param.u64 {t}, [$$param{i}]");
                        ins!(self, "cvta.to.global.u64 {d}, {t}");
                    }
                    // A generic pointer whose web was inferred global (`crate::space`).
                    Type::Ptr(AddrSpace::Generic) if self.spaces[p].is_some() => {
                        let t = self.tmp(Class::B64);
                        ins!(self, "ld.param.u64 {t}, [$$param{i}]");
                        ins!(self, "cvta.to.global.u64 {d}, {t}");
                    }
                    _ => ins!(self, "ld.param.{pt} {d}, [$$param{i}]"),
                }
            } else {
                let pt = func_param_type(ty);
                if ty == Type::I1 {
                    let t = self.tmp(Class::B32);
                    ins!(self, "ld.param.b32 {t}, [$$param{i}]");
                    ins!(self, "setp.ne.b32 {d}, {t}, 0");
                } else {
                    ins!(self, "ld.param.{pt} {d}, [$$param{i}]");
                }
            }
        }
    }

    /// `and` a narrow integer result back to its width.
    fn renarrow(&mut self, d: Reg, ty: Type) {
        if is_narrow(ty) {
            ins!(self, "and.b32 {d}, {d}, {:#X}", mask_of(ty));
        }
    }

    /// A 32-bit register holding `v` (i8/i16/i32) sign-extended.
    fn sext32(&mut self, v: Value) -> Reg {
        let r = self.v(v);
        match self.ty(v) {
            Type::I8 => {
                let t = self.tmp(Class::B32);
                ins!(self, "cvt.s32.s8 {t}, {r}");
                t
            }
            Type::I16 => {
                let t = self.tmp(Class::B32);
                ins!(self, "cvt.s32.s16 {t}, {r}");
                t
            }
            _ => r,
        }
    }

    /// A 32-bit register holding `v` as an integer (i1 as 0/1, or 0/-1 if `signed`);
    /// narrow integers sign-extended if `signed`.
    fn int32(&mut self, v: Value, signed: bool) -> Reg {
        if self.ty(v) == Type::I1 {
            let p = self.v(v);
            let t = self.tmp(Class::B32);
            let one = if signed { "-1" } else { "1" };
            ins!(self, "selp.b32 {t}, {one}, 0, {p}");
            t
        } else if signed {
            self.sext32(v)
        } else {
            self.v(v)
        }
    }

    /// Canonicalize a float result's NaN if its bits may be observed.
    fn canonicalize(&mut self, result: Value) {
        if !self.canon[result.index()] {
            return;
        }
        let d = self.v(result);
        let is64 = self.ty(result) == Type::F64;
        let t = if is64 { "f64" } else { "f32" };
        let nan = float_imm(
            is64,
            if is64 {
                0x7ff8_0000_0000_0000
            } else {
                0x7fc0_0000
            },
        );
        let p = self.tmp(Class::Pred);
        ins!(self, "setp.nan.{t} {p}, {d}, {d}");
        ins!(self, "selp.{t} {d}, {nan}, {d}, {p}");
    }

    fn inst(&mut self, inst: Inst, next: Option<Block>) -> Result<(), CodegenError> {
        let f = self.f;
        let dfg = &f.dfg;
        let data = dfg.inst(inst);
        let result = dfg.inst_result(inst);
        if result.is_some_and(|r| {
            !matches!(self.folds[r], Fold::None | Fold::Shifted { .. }) || self.alias[r].is_some()
        }) {
            // Emitted inside its uses (addresses, `mad.wide`), or its operand's register
            // is its own (a narrow `zext`).
            return Ok(());
        }
        match *data {
            InstructionData::IntConst { imm } => {
                let r = result.expect("iconst has a result");
                let ty = self.ty(r);
                let d = self.v(r);
                let bits = (imm as u64) & mask_of(ty);
                match d.class {
                    Class::Pred => ins!(self, "mov.pred {d}, {bits}"),
                    Class::B32 => ins!(self, "mov.b32 {d}, {bits:#X}"),
                    _ => ins!(self, "mov.b64 {d}, {bits:#X}"),
                }
            }
            InstructionData::FloatConst { bits } => {
                let r = result.expect("fconst has a result");
                let is64 = self.ty(r) == Type::F64;
                let d = self.v(r);
                let t = if is64 { "f64" } else { "f32" };
                ins!(self, "mov.{t} {d}, {}", float_imm(is64, bits));
            }
            InstructionData::Binary { opcode, args, .. } => {
                let r = result.expect("binary ops have a result");
                if self.ty(r).is_float() {
                    self.float_binary(inst, opcode, args, r)?;
                } else {
                    self.int_binary(opcode, args, r);
                }
            }
            InstructionData::Unary { opcode, arg } => {
                let r = result.expect("unary ops have a result");
                self.unary(inst, opcode, arg, r)?;
            }
            InstructionData::Ternary { opcode, args } => {
                let r = result.expect("ternary ops have a result");
                let d = self.v(r);
                let a = self.v(args[0]);
                let (b, c) = match d.class {
                    Class::Pred => (Opnd::Reg(self.v(args[1])), Opnd::Reg(self.v(args[2]))),
                    _ => (self.opnd(args[1], false), self.opnd(args[2], false)),
                };
                match opcode {
                    Opcode::Fma => {
                        let t = if d.class == Class::F64 { "f64" } else { "f32" };
                        ins!(self, "fma.rn.{t} {d}, {a}, {b}, {c}");
                        self.canonicalize(r);
                    }
                    Opcode::Select => match d.class {
                        Class::Pred => {
                            ins!(self, "@{a} mov.pred {d}, {b}");
                            ins!(self, "@!{a} mov.pred {d}, {c}");
                        }
                        cl => {
                            let t = ["", "b32", "b64", "f32", "f64"][cl.index()];
                            ins!(self, "selp.{t} {d}, {b}, {c}, {a}");
                        }
                    },
                    _ => return Err(self.err(inst, format!("ternary opcode {}", opcode.name()))),
                }
            }
            InstructionData::IntCompare { cond, args } => {
                let r = result.expect("icmp has a result");
                self.icmp(cond, args, r);
            }
            InstructionData::FloatCompare { cond, args } => {
                let r = result.expect("fcmp has a result");
                let d = self.v(r);
                let t = if self.ty(args[0]) == Type::F64 {
                    "f64"
                } else {
                    "f32"
                };
                let (a, b) = (self.opnd(args[0], false), self.opnd(args[1], false));
                let op = match cond {
                    FloatCC::False => {
                        ins!(self, "mov.pred {d}, 0");
                        return Ok(());
                    }
                    FloatCC::True => {
                        ins!(self, "mov.pred {d}, 1");
                        return Ok(());
                    }
                    FloatCC::Oeq => "eq",
                    FloatCC::Ogt => "gt",
                    FloatCC::Oge => "ge",
                    FloatCC::Olt => "lt",
                    FloatCC::Ole => "le",
                    FloatCC::One => "ne",
                    FloatCC::Ord => "num",
                    FloatCC::Ueq => "equ",
                    FloatCC::Ugt => "gtu",
                    FloatCC::Uge => "geu",
                    FloatCC::Ult => "ltu",
                    FloatCC::Ule => "leu",
                    FloatCC::Une => "neu",
                    FloatCC::Uno => "nan",
                };
                ins!(self, "setp.{op}.{t} {d}, {a}, {b}");
            }
            InstructionData::PtrAdd { args, scale } => {
                let r = result.expect("ptradd has a result");
                let key = self.widened_key(args, scale);
                if let Some(prev) = key.and_then(|k| self.widened.get(&k).copied()) {
                    // The same register value, computed earlier in this block.
                    self.alias[r] = Some(prev);
                    return Ok(());
                }
                if let Some(k) = key {
                    self.widened.insert(k, r);
                }
                let d = self.v(r);
                let base = self.v(args[0]);
                if self.folds[args[1]] == Fold::Ext {
                    let ValueDef::Result(ext) = dfg.value_def(args[1]) else {
                        unreachable!("only instruction results are folded")
                    };
                    let InstructionData::Unary { opcode, arg } = *dfg.inst(ext) else {
                        unreachable!("Fold::Ext is a sext or zext")
                    };
                    let s = if opcode == Opcode::Sext { "s" } else { "u" };
                    // The add of a `Fold::Shifted` index is left to the accesses.
                    let i = match self.folds[arg] {
                        Fold::IndexAdd { x } => self.v(x),
                        _ => self.v(arg),
                    };
                    ins!(self, "mad.wide.{s}32 {d}, {i}, {scale}, {base}");
                    return Ok(());
                }
                match self.ty(args[1]) {
                    Type::I64 => {
                        let i = self.v(args[1]);
                        if scale == 1 {
                            ins!(self, "add.s64 {d}, {base}, {i}");
                        } else {
                            ins!(self, "mad.lo.s64 {d}, {i}, {scale}, {base}");
                        }
                    }
                    _ => {
                        let i = self.int32(args[1], true);
                        if scale <= i32::MAX as u32 {
                            ins!(self, "mad.wide.s32 {d}, {i}, {scale}, {base}");
                        } else {
                            let t = self.tmp(Class::B64);
                            ins!(self, "cvt.s64.s32 {t}, {i}");
                            ins!(self, "mad.lo.s64 {d}, {t}, {scale}, {base}");
                        }
                    }
                }
            }
            InstructionData::Load { ptr, flags } => {
                let r = result.expect("load has a result");
                let ty = self.ty(r);
                let space = self.space(ptr);
                let p = self.addr(ptr);
                let vol = if flags.volatile && volatile_ok(space) {
                    ".volatile"
                } else {
                    ""
                };
                let sq = space_qual(space);
                let mt = mem_type(ty);
                let d = self.v(r);
                if ty == Type::I1 {
                    let t = self.tmp(Class::B32);
                    ins!(self, "ld{vol}{sq}.u8 {t}, [{p}]");
                    ins!(self, "and.b32 {t}, {t}, 1");
                    ins!(self, "setp.ne.b32 {d}, {t}, 0");
                } else {
                    ins!(self, "ld{vol}{sq}.{mt} {d}, [{p}]");
                }
            }
            InstructionData::Store { args, flags } => {
                let ty = self.ty(args[0]);
                let space = self.space(args[1]);
                let p = self.addr(args[1]);
                let vol = if flags.volatile && volatile_ok(space) {
                    ".volatile"
                } else {
                    ""
                };
                let sq = space_qual(space);
                let mt = mem_type(ty);
                let v = if ty == Type::I1 {
                    Opnd::Reg(self.int32(args[0], false))
                } else {
                    self.opnd(args[0], false)
                };
                ins!(self, "st{vol}{sq}.{mt} [{p}], {v}");
            }
            InstructionData::AtomicRmw {
                op,
                args,
                order,
                scope,
            } => {
                let r = result.expect("atomics have a result");
                let sem = self.atom_sem(order, scope);
                let ty = self.ty(r);
                let space = self.space(args[0]);
                let w = if ty.bits() == 64 { "64" } else { "32" };
                let o = match (op, ty.is_float()) {
                    (AtomicOp::Add, true) => format!("add.f{w}"),
                    (AtomicOp::Add, false) => format!("add.u{w}"),
                    (AtomicOp::And, _) => format!("and.b{w}"),
                    (AtomicOp::Or, _) => format!("or.b{w}"),
                    (AtomicOp::Xor, _) => format!("xor.b{w}"),
                    (AtomicOp::Smin, _) => format!("min.s{w}"),
                    (AtomicOp::Smax, _) => format!("max.s{w}"),
                    (AtomicOp::Umin, _) => format!("min.u{w}"),
                    (AtomicOp::Umax, _) => format!("max.u{w}"),
                    (AtomicOp::Exch, _) => format!("exch.b{w}"),
                    (AtomicOp::Inc, _) => format!("inc.u{w}"),
                    (AtomicOp::Dec, _) => format!("dec.u{w}"),
                };
                if !matches!(ty, Type::I32 | Type::I64 | Type::F32 | Type::F64) {
                    return Err(self.err(inst, format!("atomic on {ty}")));
                }
                let (p, v, d) = (self.addr(args[0]), self.v(args[1]), self.v(r));
                ins!(self, "atom{sem}{}.{o} {d}, [{p}], {v}", space_qual(space));
            }
            InstructionData::AtomicCas { args, order, scope } => {
                let r = result.expect("atomics have a result");
                let sem = self.atom_sem(order, scope);
                let ty = self.ty(r);
                let space = self.space(args[0]);
                if !matches!(ty, Type::I32 | Type::I64) {
                    return Err(self.err(inst, format!("atomic_cas on {ty}")));
                }
                let w = ty.bits();
                let (p, e, n, d) = (
                    self.addr(args[0]),
                    self.v(args[1]),
                    self.v(args[2]),
                    self.v(r),
                );
                ins!(
                    self,
                    "atom{sem}{}.cas.b{w} {d}, [{p}], {e}, {n}",
                    space_qual(space)
                );
            }
            InstructionData::GlobalAddr { global } => {
                let r = result.expect("global_addr has a result");
                let g = &self.m.globals[global];
                let name = mangle(&g.name);
                let gspace = g.space;
                let d = self.v(r);
                match self.ty(r).addr_space() {
                    Some(AddrSpace::Generic)
                        if gspace != AddrSpace::Generic && self.spaces[r].is_none() =>
                    {
                        let t = self.tmp(Class::B64);
                        ins!(self, "mov.u64 {t}, {name}");
                        ins!(self, "cvta.{}.u64 {d}, {t}", space_name(gspace));
                    }
                    _ => ins!(self, "mov.u64 {d}, {name}"),
                }
            }
            InstructionData::SlotAddr { slot } => {
                let r = result.expect("slot_addr has a result");
                let off = self.slot_offsets.get(slot.index()).copied().unwrap_or(0);
                let d = self.v(r);
                if off == 0 {
                    ins!(self, "mov.u64 {d}, $$depot");
                } else {
                    let t = self.tmp(Class::B64);
                    ins!(self, "mov.u64 {t}, $$depot");
                    ins!(self, "add.s64 {d}, {t}, {off}");
                }
            }
            InstructionData::Sreg { reg } => {
                let r = result.expect("sreg has a result");
                let d = self.v(r);
                let src = match reg {
                    SpecialReg::WarpSize => "WARP_SZ".to_string(),
                    SpecialReg::LaneId => "%laneid".to_string(),
                    other => format!("%{}", other.name()),
                };
                ins!(self, "mov.u32 {d}, {src}");
            }
            InstructionData::Shfl { mode, args } => {
                let r = result.expect("shfl has a result");
                let (d, a) = (self.v(r), self.v(args[0]));
                let (b, c, m) = (self.v(args[1]), self.v(args[2]), self.v(args[3]));
                ins!(
                    self,
                    "shfl.sync.{}.b32 {d}, {a}, {b}, {c}, {m}",
                    mode.name()
                );
            }
            InstructionData::Vote { mode, args } => {
                let r = result.expect("vote has a result");
                let (d, p, m) = (self.v(r), self.v(args[0]), self.v(args[1]));
                let t = if mode == VoteMode::Ballot {
                    "b32"
                } else {
                    "pred"
                };
                ins!(self, "vote.sync.{}.{t} {d}, {p}, {m}", mode.name());
            }
            InstructionData::WarpSync { mask } => {
                let m = self.v(mask);
                ins!(self, "bar.warp.sync {m}");
            }
            InstructionData::Fence { order, scope } => {
                let sem = if order == MemOrder::SeqCst {
                    "sc"
                } else {
                    "acq_rel"
                };
                ins!(self, "fence.{sem}.{}", scope.name());
            }
            InstructionData::Nullary { opcode } => match opcode {
                Opcode::Clock => {
                    let r = result.expect("clock has a result");
                    let d = self.v(r);
                    if self.ty(r) == Type::I64 {
                        ins!(self, "mov.u64 {d}, %clock64");
                    } else {
                        ins!(self, "mov.u32 {d}, %clock");
                    }
                }
                Opcode::Barrier => ins!(self, "bar.sync 0"),
                Opcode::Unreachable => ins!(self, "trap"),
                _ => return Err(self.err(inst, format!("opcode {}", opcode.name()))),
            },
            InstructionData::Vprintf { args } => {
                // llc's call sequence for the system call (plain `call`: it may be
                // divergent).
                self.helpers.vprintf = true;
                let (f0, a0) = (self.v(args[0]), self.v(args[1]));
                let d = self.v(result.expect("vprintf has a result"));
                self.out.push_str("\t{\n");
                ins!(self, "\t.param .b64 $$arg0");
                ins!(self, "\tst.param.b64 [$$arg0], {f0}");
                ins!(self, "\t.param .b64 $$arg1");
                ins!(self, "\tst.param.b64 [$$arg1], {a0}");
                ins!(self, "\t.param .b32 $$ret");
                ins!(self, "\tcall ($$ret), vprintf, ($$arg0, $$arg1)");
                ins!(self, "\tld.param.b32 {d}, [$$ret]");
                self.out.push_str("\t}\n");
            }
            InstructionData::AssertFail { args } => {
                self.helpers.assertfail = true;
                let [m, fl, l, fun] = args.map(|a| self.v(a));
                self.out.push_str("\t{\n");
                for (i, (t, v)) in [("b64", m), ("b64", fl), ("b32", l), ("b64", fun)]
                    .into_iter()
                    .enumerate()
                {
                    ins!(self, "\t.param .{t} $$arg{i}");
                    ins!(self, "\tst.param.{t} [$$arg{i}], {v}");
                }
                // The character size: always 1 (CUDA's `assert`).
                ins!(self, "\t.param .b64 $$arg4");
                ins!(self, "\tst.param.b64 [$$arg4], 1");
                ins!(
                    self,
                    "\tcall __assertfail, ($$arg0, $$arg1, $$arg2, $$arg3, $$arg4)"
                );
                self.out.push_str("\t}\n");
            }
            InstructionData::Call { func, ref args } => {
                let args: Vec<Value> = args.as_slice(&dfg.value_lists).to_vec();
                let callee = &self.m.functions[func];
                let name = mangle(&callee.name);
                let ret = callee.sig.ret;
                self.out.push_str("\t{\n");
                let mut names = Vec::with_capacity(args.len());
                for (i, &a) in args.iter().enumerate() {
                    let ty = self.ty(a);
                    let pt = func_param_type(ty);
                    let v = if ty == Type::I1 {
                        self.int32(a, false)
                    } else {
                        self.v(a)
                    };
                    ins!(self, "\t.param .{pt} $$arg{i}");
                    ins!(self, "\tst.param.{pt} [$$arg{i}], {v}");
                    names.push(format!("$$arg{i}"));
                }
                let list = names.join(", ");
                match (ret, result) {
                    (Some(rt), Some(r)) => {
                        let pt = func_param_type(rt);
                        ins!(self, "\t.param .{pt} $$ret");
                        ins!(self, "\tcall ($$ret), {name}, ({list})");
                        let d = self.v(r);
                        if rt == Type::I1 {
                            let t = self.tmp(Class::B32);
                            ins!(self, "\tld.param.b32 {t}, [$$ret]");
                            ins!(self, "\tsetp.ne.b32 {d}, {t}, 0");
                        } else {
                            ins!(self, "\tld.param.{pt} {d}, [$$ret]");
                        }
                    }
                    _ => ins!(self, "\tcall {name}, ({list})"),
                }
                self.out.push_str("\t}\n");
            }
            InstructionData::Jump { ref dest } => {
                let dest = *dest;
                let copies = self.edge_copies(&dest);
                self.copies(&copies);
                if next != Some(dest.block) {
                    ins!(self, "bra.uni {}", label(dest.block));
                }
            }
            InstructionData::Brif { arg, ref blocks } => {
                let [t, e] = *blocks;
                self.brif(inst, arg, t, e, next);
            }
            InstructionData::BrTable { arg, table } => {
                let jt = dfg.jump_table(table).clone();
                self.br_table(inst, arg, jt, next);
            }
            InstructionData::Return { ref args } => {
                let args: Vec<Value> = args.as_slice(&dfg.value_lists).to_vec();
                if let Some(&a) = args.first() {
                    let ty = self.ty(a);
                    let pt = func_param_type(ty);
                    let v = if ty == Type::I1 {
                        self.int32(a, false)
                    } else {
                        self.v(a)
                    };
                    ins!(self, "st.param.{pt} [$$retval], {v}");
                }
                ins!(self, "ret");
            }
        }
        Ok(())
    }

    fn int_binary(&mut self, op: Opcode, args: [Value; 2], r: Value) {
        let ty = self.ty(r);
        let d = self.v(r);
        if ty == Type::I1 {
            let (a, b) = (self.v(args[0]), self.v(args[1]));
            match op {
                Opcode::Iadd | Opcode::Isub | Opcode::Xor => ins!(self, "xor.pred {d}, {a}, {b}"),
                Opcode::Imul | Opcode::And | Opcode::Umin | Opcode::Smax => {
                    ins!(self, "and.pred {d}, {a}, {b}")
                }
                Opcode::Or | Opcode::Umax | Opcode::Smin => ins!(self, "or.pred {d}, {a}, {b}"),
                // The divisor must be 1 and a shift amount 0 (anything else is UB or
                // poison), so the result is the dividend / shifted value.
                Opcode::Srem | Opcode::Urem => ins!(self, "mov.pred {d}, 0"),
                _ => ins!(self, "mov.pred {d}, {a}"),
            }
            return;
        }
        let w = if ty.bits() == 64 { 64 } else { 32 };
        let shift_amount = |s: &mut Self, v: Value| -> Opnd {
            match s.opnd(v, false) {
                // What `cvt.u32.u64` of the register would leave.
                Opnd::Unsigned(x) => Opnd::Unsigned(x & 0xFFFF_FFFF),
                Opnd::Reg(r) if w == 64 => {
                    let t = s.tmp(Class::B32);
                    ins!(s, "cvt.u32.u64 {t}, {r}");
                    Opnd::Reg(t)
                }
                o => o,
            }
        };
        if op == Opcode::Iadd {
            // A fused `imul` operand (see `crate::fold`): one `mad.lo`.
            let fused = [(0, 1), (1, 0)]
                .into_iter()
                .find(|&(m, _)| self.folds[args[m]] == Fold::MulAdd);
            if let Some((m, other)) = fused {
                let dfg = &self.f.dfg;
                let ValueDef::Result(mi) = dfg.value_def(args[m]) else {
                    unreachable!("only instruction results are fused")
                };
                let InstructionData::Binary { args: margs, .. } = *dfg.inst(mi) else {
                    unreachable!("Fold::MulAdd is an imul")
                };
                let x = self.v(margs[0]);
                let (y, c) = (self.opnd(margs[1], true), self.opnd(args[other], true));
                ins!(self, "mad.lo.s{w} {d}, {x}, {y}, {c}");
                return;
            }
        }
        match op {
            Opcode::Iadd | Opcode::Isub | Opcode::Imul | Opcode::Shl => {
                let a = self.opnd(args[0], op != Opcode::Shl);
                let (name, b) = match op {
                    Opcode::Iadd => (format!("add.s{w}"), self.opnd(args[1], true)),
                    Opcode::Isub => (format!("sub.s{w}"), self.opnd(args[1], true)),
                    Opcode::Imul => (format!("mul.lo.s{w}"), self.opnd(args[1], true)),
                    _ => (format!("shl.b{w}"), shift_amount(self, args[1])),
                };
                ins!(self, "{name} {d}, {a}, {b}");
                self.renarrow(d, ty);
            }
            Opcode::Sdiv | Opcode::Srem | Opcode::Smin | Opcode::Smax => {
                let a = match self.folds[args[0]] {
                    // i32/i64 only (`imm_slots`): no sign extension to do.
                    Fold::Imm => self.opnd(args[0], true),
                    _ => Opnd::Reg(self.sext32(args[0])),
                };
                let b = match self.folds[args[1]] {
                    // i32/i64 only (`imm_slots`): no sign extension to do.
                    Fold::Imm => self.opnd(args[1], true),
                    _ => Opnd::Reg(self.sext32(args[1])),
                };
                let name = match op {
                    Opcode::Sdiv => "div",
                    Opcode::Srem => "rem",
                    Opcode::Smin => "min",
                    _ => "max",
                };
                ins!(self, "{name}.s{w} {d}, {a}, {b}");
                self.renarrow(d, ty);
            }
            Opcode::Udiv | Opcode::Urem | Opcode::Umin | Opcode::Umax => {
                let (a, b) = (self.opnd(args[0], false), self.opnd(args[1], false));
                let name = match op {
                    Opcode::Udiv => "div",
                    Opcode::Urem => "rem",
                    Opcode::Umin => "min",
                    _ => "max",
                };
                ins!(self, "{name}.u{w} {d}, {a}, {b}");
            }
            Opcode::And | Opcode::Or | Opcode::Xor => {
                let (a, b) = (self.opnd(args[0], false), self.opnd(args[1], false));
                let name = match op {
                    Opcode::And => "and",
                    Opcode::Or => "or",
                    _ => "xor",
                };
                ins!(self, "{name}.b{w} {d}, {a}, {b}");
            }
            // The verifier allows these on i32 only, PTX's one width for mul24.
            Opcode::Mul24 | Opcode::Umul24 => {
                let (a, b) = (self.v(args[0]), self.v(args[1]));
                let s = if op == Opcode::Mul24 { "s" } else { "u" };
                ins!(self, "mul24.lo.{s}32 {d}, {a}, {b}");
            }
            Opcode::Lshr => {
                let a = self.opnd(args[0], false);
                let b = shift_amount(self, args[1]);
                ins!(self, "shr.u{w} {d}, {a}, {b}");
            }
            Opcode::Ashr => {
                let a = match self.folds[args[0]] {
                    Fold::Imm => self.opnd(args[0], true),
                    _ => Opnd::Reg(self.sext32(args[0])),
                };
                let b = shift_amount(self, args[1]);
                ins!(self, "shr.s{w} {d}, {a}, {b}");
                self.renarrow(d, ty);
            }
            _ => unreachable!("{} is not an integer binary op", op.name()),
        }
    }

    fn float_binary(
        &mut self,
        inst: Inst,
        op: Opcode,
        args: [Value; 2],
        r: Value,
    ) -> Result<(), CodegenError> {
        let is64 = self.ty(r) == Type::F64;
        let t = if is64 { "f64" } else { "f32" };
        if op == Opcode::Fadd {
            // A fused `fmul` operand (see `crate::fold`): one `fma.rn`.
            let dfg = &self.f.dfg;
            let fused = [(0, 1), (1, 0)]
                .into_iter()
                .find(|&(m, _)| self.folds[args[m]] == Fold::Fused);
            if let Some((m, other)) = fused {
                let ValueDef::Result(mi) = dfg.value_def(args[m]) else {
                    unreachable!("only instruction results are fused")
                };
                let InstructionData::Binary { args: margs, .. } = *dfg.inst(mi) else {
                    unreachable!("Fold::Fused is an fmul")
                };
                let (x, y, c, d) = (
                    self.v(margs[0]),
                    self.opnd(margs[1], false),
                    self.opnd(args[other], false),
                    self.v(r),
                );
                ins!(self, "fma.rn.{t} {d}, {x}, {y}, {c}");
                self.canonicalize(r);
                return Ok(());
            }
        }
        let (a, b, d) = (
            self.opnd(args[0], false),
            self.opnd(args[1], false),
            self.v(r),
        );
        let name = match op {
            Opcode::Fadd => "add.rn",
            Opcode::Fsub => "sub.rn",
            Opcode::Fmul => "mul.rn",
            Opcode::Fdiv => "div.rn",
            // f32 only (verifier): full-range, at most 2 ulp from the IR's exact quotient.
            Opcode::FdivApprox => "div.full",
            Opcode::Fmin => "min",
            Opcode::Fmax => "max",
            Opcode::Frem => {
                self.helpers.fmod[usize::from(is64)] = true;
                self.out.push_str("\t{\n");
                ins!(self, "\t.param .{t} $$x");
                ins!(self, "\tst.param.{t} [$$x], {a}");
                ins!(self, "\t.param .{t} $$y");
                ins!(self, "\tst.param.{t} [$$y], {b}");
                ins!(self, "\t.param .{t} $$r");
                ins!(
                    self,
                    "\tcall ($$r), {}, ($$x, $$y)",
                    fmod::helper_name(is64)
                );
                ins!(self, "\tld.param.{t} {d}, [$$r]");
                self.out.push_str("\t}\n");
                self.canonicalize(r);
                return Ok(());
            }
            _ => return Err(self.err(inst, format!("float opcode {}", op.name()))),
        };
        ins!(self, "{name}.{t} {d}, {a}, {b}");
        self.canonicalize(r);
        Ok(())
    }

    fn unary(&mut self, inst: Inst, op: Opcode, arg: Value, r: Value) -> Result<(), CodegenError> {
        let from = self.ty(arg);
        let to = self.ty(r);
        let a = self.v(arg);
        let d = self.v(r);
        let ft = |t: Type| if t == Type::F64 { "f64" } else { "f32" };
        match op {
            Opcode::Freeze => ins!(self, "{} {d}, {a}", d.class.mov()),
            Opcode::Popcnt | Opcode::Clz | Opcode::Ctz => match from {
                Type::I1 => match op {
                    Opcode::Popcnt => ins!(self, "mov.pred {d}, {a}"),
                    _ => ins!(self, "not.pred {d}, {a}"),
                },
                Type::I64 => {
                    let t = self.tmp(Class::B32);
                    match op {
                        Opcode::Popcnt => ins!(self, "popc.b64 {t}, {a}"),
                        Opcode::Clz => ins!(self, "clz.b64 {t}, {a}"),
                        _ => {
                            let u = self.tmp(Class::B64);
                            ins!(self, "brev.b64 {u}, {a}");
                            ins!(self, "clz.b64 {t}, {u}");
                        }
                    }
                    ins!(self, "cvt.u64.u32 {d}, {t}");
                }
                _ => {
                    let w = from.bits();
                    match op {
                        Opcode::Popcnt => ins!(self, "popc.b32 {d}, {a}"),
                        Opcode::Clz => {
                            ins!(self, "clz.b32 {d}, {a}");
                            if w < 32 {
                                ins!(self, "sub.s32 {d}, {d}, {}", 32 - w);
                            }
                        }
                        _ => {
                            let u = self.tmp(Class::B32);
                            ins!(self, "brev.b32 {u}, {a}");
                            ins!(self, "clz.b32 {d}, {u}");
                            if w < 32 {
                                ins!(self, "min.u32 {d}, {d}, {w}");
                            }
                        }
                    }
                }
            },
            // Sign-bit operations on the bits keep NaN payloads exactly, as the IR says.
            Opcode::Fneg | Opcode::Fabs => {
                let (b, m) = match (from == Type::F64, op == Opcode::Fneg) {
                    (true, true) => ("b64", "0x8000000000000000"),
                    (true, false) => ("b64", "0x7FFFFFFFFFFFFFFF"),
                    (false, true) => ("b32", "0x80000000"),
                    (false, false) => ("b32", "0x7FFFFFFF"),
                };
                let o = if op == Opcode::Fneg { "xor" } else { "and" };
                ins!(self, "{o}.{b} {d}, {a}, {m}");
            }
            Opcode::Sqrt => {
                ins!(self, "sqrt.rn.{} {d}, {a}", ft(from));
                self.canonicalize(r);
            }
            // The hardware approximations of the math primitives (docs/ir.md gives the
            // error bounds); subnormals are kept (no `.ftz`), as in the IR.
            Opcode::Ex2Approx
            | Opcode::Lg2Approx
            | Opcode::SinApprox
            | Opcode::CosApprox
            | Opcode::RsqrtApprox => {
                let name = match op {
                    Opcode::Ex2Approx => "ex2",
                    Opcode::Lg2Approx => "lg2",
                    Opcode::SinApprox => "sin",
                    Opcode::CosApprox => "cos",
                    _ => "rsqrt",
                };
                ins!(self, "{name}.approx.{} {d}, {a}", ft(from));
                self.canonicalize(r);
            }
            Opcode::Floor | Opcode::Ceil | Opcode::Ftrunc | Opcode::Nearest => {
                let m = match op {
                    Opcode::Floor => "rmi",
                    Opcode::Ceil => "rpi",
                    Opcode::Ftrunc => "rzi",
                    _ => "rni",
                };
                let t = ft(from);
                ins!(self, "cvt.{m}.{t}.{t} {d}, {a}");
                self.canonicalize(r);
            }
            _ => self.cast(inst, op, arg, from, to, a, d)?,
        }
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    fn cast(
        &mut self,
        inst: Inst,
        op: Opcode,
        arg: Value,
        from: Type,
        to: Type,
        a: Reg,
        d: Reg,
    ) -> Result<(), CodegenError> {
        let ft = |t: Type| if t == Type::F64 { "f64" } else { "f32" };
        match op {
            Opcode::Sext | Opcode::Zext => {
                let signed = op == Opcode::Sext;
                match (from, to) {
                    (Type::I1, Type::I64) => {
                        let one = if signed { "-1" } else { "1" };
                        ins!(self, "selp.b64 {d}, {one}, 0, {a}");
                    }
                    (Type::I1, _) => {
                        let one = if signed { mask_of(to) } else { 1 };
                        ins!(self, "selp.b32 {d}, {one:#X}, 0, {a}");
                    }
                    (_, Type::I64) => {
                        let s = if signed { "s" } else { "u" };
                        ins!(self, "cvt.{s}64.{s}{} {d}, {a}", from.bits());
                    }
                    _ => {
                        if signed {
                            ins!(self, "cvt.s32.s{} {d}, {a}", from.bits());
                            self.renarrow(d, to);
                        } else {
                            ins!(self, "mov.b32 {d}, {a}");
                        }
                    }
                }
            }
            Opcode::Trunc => match (from, to) {
                (Type::I64, Type::I1) => {
                    let t = self.tmp(Class::B64);
                    ins!(self, "and.b64 {t}, {a}, 1");
                    ins!(self, "setp.ne.b64 {d}, {t}, 0");
                }
                (_, Type::I1) => {
                    let t = self.tmp(Class::B32);
                    ins!(self, "and.b32 {t}, {a}, 1");
                    ins!(self, "setp.ne.b32 {d}, {t}, 0");
                }
                (Type::I64, _) => {
                    ins!(self, "cvt.u32.u64 {d}, {a}");
                    self.renarrow(d, to);
                }
                _ => ins!(self, "and.b32 {d}, {a}, {:#X}", mask_of(to)),
            },
            Opcode::Fptosi | Opcode::Fptoui => {
                let s = if op == Opcode::Fptosi { "s" } else { "u" };
                let f = ft(from);
                match to {
                    Type::I64 => ins!(self, "cvt.rzi.{s}64.{f} {d}, {a}"),
                    Type::I1 => {
                        let t = self.tmp(Class::B32);
                        ins!(self, "cvt.rzi.{s}32.{f} {t}, {a}");
                        ins!(self, "setp.ne.b32 {d}, {t}, 0");
                    }
                    _ => {
                        ins!(self, "cvt.rzi.{s}32.{f} {d}, {a}");
                        self.renarrow(d, to);
                    }
                }
            }
            Opcode::Sitofp | Opcode::Uitofp => {
                let signed = op == Opcode::Sitofp;
                let s = if signed { "s" } else { "u" };
                let f = ft(to);
                if from == Type::I64 {
                    ins!(self, "cvt.rn.{f}.{s}64 {d}, {a}");
                } else {
                    let src = self.int32(arg, signed);
                    ins!(self, "cvt.rn.{f}.{s}32 {d}, {src}");
                }
            }
            Opcode::Fpext => {
                ins!(self, "cvt.f64.f32 {d}, {a}");
                self.canonicalize_value(inst);
            }
            Opcode::Fptrunc => {
                ins!(self, "cvt.rn.f32.f64 {d}, {a}");
                self.canonicalize_value(inst);
            }
            Opcode::Bitcast => {
                if a.class == d.class {
                    ins!(self, "{} {d}, {a}", d.class.mov());
                } else {
                    let b = if to.bits() == 64 { "b64" } else { "b32" };
                    ins!(self, "mov.{b} {d}, {a}");
                }
            }
            Opcode::Ptrtoint => {
                if to == Type::I64 {
                    ins!(self, "mov.b64 {d}, {a}");
                } else {
                    ins!(self, "cvt.u32.u64 {d}, {a}");
                    self.renarrow(d, to);
                }
            }
            Opcode::Inttoptr => {
                if from == Type::I64 {
                    ins!(self, "mov.b64 {d}, {a}");
                } else {
                    let src = self.int32(arg, false);
                    ins!(self, "cvt.u64.u32 {d}, {src}");
                }
            }
            Opcode::AddrspaceCast => {
                let fs = from.addr_space().unwrap_or(AddrSpace::Generic);
                let ts = to.addr_space().unwrap_or(AddrSpace::Generic);
                match (fs, ts) {
                    (AddrSpace::Generic, AddrSpace::Generic) => ins!(self, "mov.b64 {d}, {a}"),
                    (AddrSpace::Generic, s) => ins!(self, "cvta.to.{}.u64 {d}, {a}", space_name(s)),
                    // The result's web holds `s`-space addresses (see `crate::space`).
                    (_, AddrSpace::Generic)
                        if self
                            .f
                            .dfg
                            .inst_result(inst)
                            .is_some_and(|r| self.spaces[r].is_some()) =>
                    {
                        ins!(self, "mov.b64 {d}, {a}")
                    }
                    (s, AddrSpace::Generic) => ins!(self, "cvta.{}.u64 {d}, {a}", space_name(s)),
                    _ => return Err(self.err(inst, "addrspace_cast between two specific spaces")),
                }
            }
            _ => return Err(self.err(inst, format!("opcode {}", op.name()))),
        }
        Ok(())
    }

    fn canonicalize_value(&mut self, inst: Inst) {
        if let Some(r) = self.f.dfg.inst_result(inst) {
            self.canonicalize(r);
        }
    }

    fn icmp(&mut self, cond: IntCC, args: [Value; 2], r: Value) {
        let d = self.v(r);
        let ty = self.ty(args[0]);
        let signed = matches!(cond, IntCC::Slt | IntCC::Sle | IntCC::Sgt | IntCC::Sge);
        let op = match cond {
            IntCC::Eq => "eq",
            IntCC::Ne => "ne",
            IntCC::Slt => "lt",
            IntCC::Sle => "le",
            IntCC::Sgt => "gt",
            IntCC::Sge => "ge",
            IntCC::Ult => "lo",
            IntCC::Ule => "ls",
            IntCC::Ugt => "hi",
            IntCC::Uge => "hs",
        };
        let s = if signed { "s" } else { "u" };
        if ty.bits() == 64 {
            let (a, b) = (self.opnd(args[0], signed), self.opnd(args[1], signed));
            ins!(self, "setp.{op}.{s}64 {d}, {a}, {b}");
        } else {
            let a = match self.folds[args[0]] {
                // i32 only (`imm_slots`).
                Fold::Imm => self.opnd(args[0], signed),
                _ => Opnd::Reg(self.int32(args[0], signed)),
            };
            let b = match self.folds[args[1]] {
                // i32 only (`imm_slots`).
                Fold::Imm => self.opnd(args[1], signed),
                _ => Opnd::Reg(self.int32(args[1], signed)),
            };
            ins!(self, "setp.{op}.{s}32 {d}, {a}, {b}");
        }
    }

    /// The register copies of one edge, `(parameter, argument)`, trivial ones dropped.
    fn edge_copies(&mut self, bc: &BlockCall) -> Vec<(Reg, Opnd)> {
        let f = self.f;
        let dfg = &f.dfg;
        let pairs: Vec<(Value, Value)> = dfg
            .block_params(bc.block)
            .iter()
            .copied()
            .zip(dfg.block_call_args(bc).iter().copied())
            .collect();
        pairs
            .into_iter()
            .map(|(p, a)| (self.v(p), self.opnd(a, false)))
            .filter(|(p, a)| !matches!(a, Opnd::Reg(r) if r == p))
            .collect()
    }

    /// Emit a parallel copy as a sequence of moves: the register copies sequentialized,
    /// then the immediates (no copy reads a destination after that, and the
    /// destinations are distinct).
    fn copies(&mut self, copies: &[(Reg, Opnd)]) {
        if copies.is_empty() {
            return;
        }
        let regs: Vec<(Reg, Reg)> = copies
            .iter()
            .filter_map(|&(d, s)| match s {
                Opnd::Reg(s) => Some((d, s)),
                _ => None,
            })
            .collect();
        let mut moves = Vec::with_capacity(regs.len() + 1);
        let counts = &mut self.counts;
        pcopy::sequentialize(
            &regs,
            |r| {
                let c = &mut counts[r.class.index()];
                *c += 1;
                Reg {
                    class: r.class,
                    n: *c,
                }
            },
            |d, s| moves.push((d, s)),
        );
        for (d, s) in moves {
            ins!(self, "{} {d}, {s}", d.class.mov());
        }
        for &(d, s) in copies {
            if !matches!(s, Opnd::Reg(_)) {
                ins!(self, "{} {d}, {s}", d.class.mov());
            }
        }
    }

    fn new_stub(&mut self) -> String {
        self.stubs += 1;
        format!("$L__E{}", self.stubs)
    }

    fn brif(&mut self, inst: Inst, arg: Value, t: BlockCall, e: BlockCall, next: Option<Block>) {
        let c = self.v(arg);
        let bra = if self.uni.is_branch_uniform(inst) {
            "bra.uni"
        } else {
            "bra"
        };
        let ct = self.edge_copies(&t);
        let ce = self.edge_copies(&e);
        let (tb, eb) = (t.block, e.block);
        if ct.is_empty() && ce.is_empty() {
            if tb == eb {
                if next != Some(tb) {
                    ins!(self, "bra.uni {}", label(tb));
                }
            } else if next == Some(tb) {
                ins!(self, "@!{c} {bra} {}", label(eb));
            } else {
                ins!(self, "@{c} {bra} {}", label(tb));
                if next != Some(eb) {
                    ins!(self, "bra.uni {}", label(eb));
                }
            }
            return;
        }
        let from = self.f.layout.inst_block(inst);
        let early = |s: &Self, to: Block, other: Block, copies: &[(Reg, Opnd)]| {
            from.is_some_and(|b| s.copies_may_precede(b, to, other, copies, c))
        };
        if ct.is_empty() && early(self, eb, tb, &ce) {
            // The back edge's copies first, then one branch (a loop latch as llc
            // writes it: `@!p bra header`, falling through to the exit).
            self.copies(&ce);
            ins!(self, "@!{c} {bra} {}", label(eb));
            if next != Some(tb) {
                ins!(self, "bra.uni {}", label(tb));
            }
        } else if ce.is_empty() && early(self, tb, eb, &ct) {
            self.copies(&ct);
            ins!(self, "@{c} {bra} {}", label(tb));
            if next != Some(eb) {
                ins!(self, "bra.uni {}", label(eb));
            }
        } else if ct.is_empty() {
            ins!(self, "@{c} {bra} {}", label(tb));
            self.copies(&ce);
            if next != Some(eb) {
                ins!(self, "bra.uni {}", label(eb));
            }
        } else if ce.is_empty() {
            ins!(self, "@!{c} {bra} {}", label(eb));
            self.copies(&ct);
            if next != Some(tb) {
                ins!(self, "bra.uni {}", label(tb));
            }
        } else {
            let stub = self.new_stub();
            ins!(self, "@!{c} {bra} {stub}");
            self.copies(&ct);
            ins!(self, "bra.uni {}", label(tb));
            let _ = writeln!(self.out, "{stub}:");
            self.copies(&ce);
            if next != Some(eb) {
                ins!(self, "bra.uni {}", label(eb));
            }
        }
    }

    fn br_table(
        &mut self,
        inst: Inst,
        arg: Value,
        jt: gyre_ir::JumpTableData,
        next: Option<Block>,
    ) {
        let ty = self.ty(arg);
        let bra = if self.uni.is_branch_uniform(inst) {
            "bra.uni"
        } else {
            "bra"
        };
        let (v, w) = if ty == Type::I64 {
            (self.v(arg), 64)
        } else {
            (self.int32(arg, false), 32)
        };
        let mask = if ty == Type::I1 { 1 } else { mask_of(ty) };
        let mut stubs: Vec<Stub> = Vec::new();
        for (k, bc) in &jt.cases {
            let copies = self.edge_copies(bc);
            let target = if copies.is_empty() {
                label(bc.block)
            } else {
                let s = self.new_stub();
                stubs.push((s.clone(), copies, bc.block));
                s
            };
            let p = self.tmp(Class::Pred);
            let kv = (*k as u64) & mask;
            ins!(self, "setp.eq.b{w} {p}, {v}, {kv:#X}");
            ins!(self, "@{p} {bra} {target}");
        }
        let copies = self.edge_copies(&jt.default);
        self.copies(&copies);
        if next != Some(jt.default.block) || !stubs.is_empty() {
            ins!(self, "bra.uni {}", label(jt.default.block));
        }
        for (s, copies, b) in stubs {
            let _ = writeln!(self.out, "{s}:");
            self.copies(&copies);
            ins!(self, "bra.uni {}", label(b));
        }
    }
}

/// May `ld`/`st` carry `.volatile` in this space? (PTX allows it for global, shared and
/// generic accesses; local and const memory are private or read-only, so nothing else
/// can observe the difference.)
fn volatile_ok(space: AddrSpace) -> bool {
    matches!(
        space,
        AddrSpace::Generic | AddrSpace::Global | AddrSpace::Shared
    )
}
