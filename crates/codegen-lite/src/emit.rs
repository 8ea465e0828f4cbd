//! The lowering proper: module directives, globals, one function at a time.
//!
//! Register classes: `i1` lives in `.pred` (`%p`); `i8`, `i16` and `i32` in `.b32`
//! (`%r`), the narrow ones **zero-extended** (every instruction that produces an `i8` or
//! `i16` re-establishes that, and signed operations sign-extend their operands first);
//! `i64` and pointers in `.b64` (`%rd`); `f32` in `.f32` (`%f`); `f64` in `.f64` (`%fd`).
//! Each IR value has its own virtual register; temporaries are fresh registers too.

use crate::coalesce::{Coalesced, Collector, Ir};
use crate::fold::{
    add_cast_aliases, add_trunc_aliases, add_zext_aliases, address_folds, const_index_offset,
    single_edge_aliases, Fold, Zeroed,
};
use crate::space::infer_spaces;
use crate::uniform::BranchUniformity;
use crate::{fmod, mangle, nan, order, pcopy, uniform, CodegenError, CodegenFlags, CodegenOptions};
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
    // Matches, not arrays indexed by class: an indexed array literal is built on the
    // stack at each call, and registers are most of the text.
    fn prefix(self) -> &'static str {
        match self {
            Class::Pred => "%p",
            Class::B32 => "%r",
            Class::B64 => "%rd",
            Class::F32 => "%f",
            Class::F64 => "%fd",
        }
    }
    /// [`Class::prefix`] for [`put_prefixed`].
    fn padded_prefix(self) -> &'static Prefix {
        const P: [Prefix; 5] = [
            Prefix::new("%p"),
            Prefix::new("%r"),
            Prefix::new("%rd"),
            Prefix::new("%f"),
            Prefix::new("%fd"),
        ];
        match self {
            Class::Pred => &P[0],
            Class::B32 => &P[1],
            Class::B64 => &P[2],
            Class::F32 => &P[3],
            Class::F64 => &P[4],
        }
    }
    fn decl(self) -> &'static str {
        match self {
            Class::Pred => ".pred",
            Class::B32 => ".b32",
            Class::B64 => ".b64",
            Class::F32 => ".f32",
            Class::F64 => ".f64",
        }
    }
    fn mov(self) -> &'static str {
        match self {
            Class::Pred => "mov.pred",
            Class::B32 => "mov.b32",
            Class::B64 => "mov.b64",
            Class::F32 => "mov.f32",
            Class::F64 => "mov.f64",
        }
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
        f.write_str(&piece_string(self))
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

impl Piece for Opnd {
    #[inline]
    fn put(&self, out: &mut Buf) {
        match *self {
            Opnd::Reg(r) => r.put(out),
            Opnd::Signed(x) => x.put(out),
            Opnd::Unsigned(x) => x.put(out),
            Opnd::F32(b) => float_imm(false, u64::from(b)).put(out),
            Opnd::F64(b) => float_imm(true, b).put(out),
        }
    }
}

/// An edge stub of a `br_table`: its label, the edge's copies and the target.
type Stub = (StubLabel, Vec<(Reg, Opnd)>, Block);

/// The label of an edge stub, `$L__E<n>`.
#[derive(Copy, Clone)]
struct StubLabel(u32);

impl Piece for StubLabel {
    fn put(&self, out: &mut Buf) {
        put_prefixed(out, &STUB_PREFIX, self.0);
    }
}

/// A `br_table` case's branch target: the block, or the stub that copies first.
#[derive(Copy, Clone)]
enum Target {
    Block(Label),
    Stub(StubLabel),
}

impl Piece for Target {
    fn put(&self, out: &mut Buf) {
        match self {
            Target::Block(l) => l.put(out),
            Target::Stub(s) => s.put(out),
        }
    }
}

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

/// Write one instruction line from [`Piece`]s: a tab, the pieces, `;` and a newline.
/// Most of a kernel's PTX text goes through here, so no `core::fmt`: each piece appends
/// its bytes to the function's buffer directly.
macro_rules! put {
    ($s:expr; $($p:expr),+ $(,)?) => {{
        $s.out.push('\t');
        $( Piece::put(&$p, &mut $s.out); )+
        $s.out.push_str(";\n");
    }};
}

/// The PTX text being written: bytes, each appended from a `&str` or a `char`, so
/// always UTF-8 ([`Buf::into_string`]). A `String` checks every `char` it is given
/// for its UTF-8 length; the digits and letters here are ASCII bytes.
#[derive(Default)]
struct Buf(Vec<u8>);

impl Buf {
    fn with_capacity(n: usize) -> Buf {
        Buf(Vec::with_capacity(n))
    }

    #[inline]
    fn push_str(&mut self, s: &str) {
        self.0.extend_from_slice(s.as_bytes());
    }

    #[inline]
    fn push(&mut self, c: char) {
        if c.is_ascii() {
            self.0.push(c as u8);
        } else {
            self.push_str(c.encode_utf8(&mut [0; 4]));
        }
    }

    /// Append an ASCII byte (a digit or a hex letter).
    #[inline]
    fn byte(&mut self, b: u8) {
        debug_assert!(b.is_ascii());
        self.0.push(if b.is_ascii() { b } else { b'?' });
    }

    fn push_buf(&mut self, b: &Buf) {
        self.0.extend_from_slice(&b.0);
    }

    fn clear(&mut self) {
        self.0.clear();
    }

    fn reserve(&mut self, n: usize) {
        self.0.reserve(n);
    }

    fn len(&self) -> usize {
        self.0.len()
    }

    /// The text. Only `&str`s, `char`s and ASCII bytes were appended, so the bytes are
    /// UTF-8 and the lossy branch never runs (it keeps this free of panics).
    fn into_string(self) -> String {
        String::from_utf8(self.0)
            .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
    }
}

impl Write for Buf {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        self.push_str(s);
        Ok(())
    }
}

/// A piece of a PTX line, appended to the output without `core::fmt` (registers,
/// immediates and labels are most of the text; `write!` per operand cost more than
/// everything else in emission).
trait Piece {
    /// Append the text.
    fn put(&self, out: &mut Buf);
}

impl Piece for str {
    #[inline]
    fn put(&self, out: &mut Buf) {
        out.push_str(self);
    }
}

impl Piece for String {
    #[inline]
    fn put(&self, out: &mut Buf) {
        out.push_str(self);
    }
}

impl<T: Piece + ?Sized> Piece for &T {
    #[inline]
    fn put(&self, out: &mut Buf) {
        (**self).put(out);
    }
}

/// "00" to "99": two digits per division in [`put_u64`].
const DIGIT_PAIRS: &[u8; 200] = b"\
0001020304050607080910111213141516171819\
2021222324252627282930313233343536373839\
4041424344454647484950515253545556575859\
6061626364656667686970717273747576777879\
8081828384858687888990919293949596979899";

/// Decimal digits of `n` (an itoa: two digits at a time into a stack buffer, then one
/// append; register numbers are most of the calls).
#[inline]
fn put_u64(out: &mut Buf, n: u64) {
    if n < 10 {
        out.byte(b'0' + n as u8);
        return;
    }
    // Digits end at 20; the 16 bytes after them make room for a fixed-size copy.
    let mut buf = [0u8; 36];
    let mut k = 20;
    // 32-bit divisions where they suffice (every register and most immediates).
    let n32 = match u32::try_from(n) {
        Ok(n32) => n32,
        Err(_) => {
            let mut n = n;
            while n > u64::from(u32::MAX) {
                let r = (n % 100) as usize;
                n /= 100;
                k -= 2;
                buf[k..k + 2].copy_from_slice(&DIGIT_PAIRS[2 * r..2 * r + 2]);
            }
            n as u32
        }
    };
    let k = u32_digits(&mut buf, k, n32);
    match buf[k..].first_chunk::<16>() {
        Some(d) if 20 - k <= 16 => put_chunk(out, d, 20 - k),
        _ => out.0.extend_from_slice(&buf[k..20]),
    }
}

/// Append the first `len` bytes of `chunk`: one copy of a fixed size, which the
/// compiler writes as a few moves, then a truncation (a copy of a variable length
/// calls `memcpy`, and registers and labels are most of the text).
#[inline]
fn put_chunk<const N: usize>(out: &mut Buf, chunk: &[u8; N], len: usize) {
    let end = out.0.len() + len.min(N);
    out.0.extend_from_slice(chunk);
    out.0.truncate(end);
}

/// A register or label prefix padded to 8 bytes, appended with [`put_chunk`].
struct Prefix {
    bytes: [u8; 8],
    len: usize,
}

impl Prefix {
    /// The prefix `s` (at most 8 bytes; a longer one is cut, never used).
    const fn new(s: &str) -> Prefix {
        let b = s.as_bytes();
        let mut bytes = [0u8; 8];
        let mut i = 0;
        while i < b.len() && i < 8 {
            bytes[i] = b[i];
            i += 1;
        }
        Prefix { bytes, len: i }
    }
}

/// The label prefixes.
const BLOCK_PREFIX: Prefix = Prefix::new("$L__BB");
const STUB_PREFIX: Prefix = Prefix::new("$L__E");

/// Write the decimal digits of `n` into `buf` so that they end just before `end`, two at
/// a time; returns where they start.
#[inline]
fn u32_digits(buf: &mut [u8], end: usize, mut n: u32) -> usize {
    let mut k = end;
    while n >= 100 {
        let r = (n % 100) as usize;
        n /= 100;
        k -= 2;
        buf[k..k + 2].copy_from_slice(&DIGIT_PAIRS[2 * r..2 * r + 2]);
    }
    if n >= 10 {
        let r = n as usize;
        k -= 2;
        buf[k..k + 2].copy_from_slice(&DIGIT_PAIRS[2 * r..2 * r + 2]);
    } else {
        k -= 1;
        buf[k] = b'0' + n as u8;
    }
    k
}

/// `prefix` and the decimal digits of `n` (a register or a label: the most frequent
/// pieces), each appended as one copy of a fixed size ([`put_chunk`]).
#[inline]
fn put_prefixed(out: &mut Buf, prefix: &Prefix, n: u32) {
    // Digits end at 16 (at most 10 of them, from 6 on); the bytes after make room for
    // the copy of 16.
    let mut buf = [0u8; 32];
    let k = u32_digits(&mut buf, 16, n);
    put_chunk(out, &prefix.bytes, prefix.len);
    match buf[k..].first_chunk::<16>() {
        Some(d) => put_chunk(out, d, 16 - k),
        None => out.0.extend_from_slice(&buf[k..16]),
    }
}

/// Upper-case hex digits of `n`, at least `width` of them (zero-padded).
fn put_hex(out: &mut Buf, n: u64, width: u32) {
    let digits = (64 - n.leading_zeros()).div_ceil(4).max(width).max(1);
    for k in (0..digits).rev() {
        let d = ((n >> (4 * k)) & 0xf) as u8;
        out.byte(if d < 10 { b'0' + d } else { b'A' + d - 10 });
    }
}

macro_rules! unsigned_pieces {
    ($($t:ty),*) => {$(
        impl Piece for $t {
            fn put(&self, out: &mut Buf) {
                put_u64(out, *self as u64);
            }
        }
    )*};
}
unsigned_pieces!(u8, u16, u32, u64, usize);

macro_rules! signed_pieces {
    ($($t:ty),*) => {$(
        impl Piece for $t {
            fn put(&self, out: &mut Buf) {
                if *self < 0 {
                    out.push('-');
                }
                put_u64(out, (*self as i64).unsigned_abs());
            }
        }
    )*};
}
signed_pieces!(i32, i64);

/// An integer as `{:#X}` writes it: `0x` and upper-case hex digits.
#[derive(Copy, Clone)]
struct Hex(u64);

impl Piece for Hex {
    fn put(&self, out: &mut Buf) {
        out.push_str("0x");
        put_hex(out, self.0, 1);
    }
}

/// A piece's text on its own (for the `Display` impls the slow paths use).
fn piece_string(p: &impl Piece) -> String {
    let mut s = Buf::default();
    p.put(&mut s);
    s.into_string()
}

impl Piece for Reg {
    #[inline]
    fn put(&self, out: &mut Buf) {
        put_prefixed(out, self.class.padded_prefix(), self.n);
    }
}

impl Piece for Addr {
    fn put(&self, out: &mut Buf) {
        self.reg.put(out);
        if self.off != 0 {
            out.push('+');
            self.off.put(out);
        }
    }
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

/// A float immediate as PTX writes its bits: `0dXXXXXXXXXXXXXXXX` or `0fXXXXXXXX`.
#[derive(Copy, Clone)]
struct FloatImm {
    is64: bool,
    bits: u64,
}

impl Piece for FloatImm {
    fn put(&self, out: &mut Buf) {
        if self.is64 {
            out.push_str("0d");
            put_hex(out, self.bits, 16);
        } else {
            out.push_str("0f");
            put_hex(out, u64::from(self.bits as u32), 8);
        }
    }
}

impl fmt::Display for FloatImm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&piece_string(self))
    }
}

fn float_imm(is64: bool, bits: u64) -> FloatImm {
    FloatImm { is64, bits }
}

/// A block's label, `$L__BB<index>`.
#[derive(Copy, Clone)]
struct Label(Block);

impl Piece for Label {
    fn put(&self, out: &mut Buf) {
        match u32::try_from(self.0.index()) {
            Ok(n) => put_prefixed(out, &BLOCK_PREFIX, n),
            Err(_) => {
                out.push_str("$L__BB");
                put_u64(out, self.0.index() as u64);
            }
        }
    }
}

impl fmt::Display for Label {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&piece_string(self))
    }
}

fn label(b: Block) -> Label {
    Label(b)
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

/// About how many bytes of PTX one IR instruction becomes (about 1.4 lines of 30 bytes
/// on generated kernels): the output buffer's initial size.
const BYTES_PER_INST: usize = 48;

/// Lower a verified module, reading (and filling) the per-function analysis caches.
pub(crate) fn emit_module(
    m: &Module,
    opts: &CodegenOptions,
    flags: &CodegenFlags,
    analyses: &mut ModuleAnalyses,
) -> Result<String, CodegenError> {
    let mut helpers = Helpers::default();
    // One output buffer, sized from the instruction counts so that it rarely grows (a
    // grown buffer copies all the text so far); the module's header and globals are
    // written first and each function after them, so the text is never copied as a
    // whole. One scratch buffer holds the body being emitted (its declarations come
    // first but are known only at the end).
    let estimate = |f: &Function| f.dfg.num_insts() * BYTES_PER_INST + f.layout.num_blocks() * 16;
    let globals_estimate: usize = m
        .globals
        .values()
        .map(|g| 64 + g.name.len() + g.init.as_ref().map_or(0, |v| v.len() * 8 * 5))
        .sum();
    let mut out = Buf::with_capacity(
        m.functions.values().map(estimate).sum::<usize>() + globals_estimate + 1024,
    );
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
    // The runtime helpers' declarations go here, once the bodies have said which are
    // used (rare: the text after this point is moved only then).
    let helpers_at = out.len();
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

    let mut scratch = Buf::default();
    for (id, f) in m.functions.iter() {
        let cache = analyses.get_mut(id);
        // The uniformity only where a branch may be divergent (and not already cached,
        // where it costs nothing): see `uniform::needs_analysis`.
        let all_uniform =
            !cache.valid().contains(Analyses::UNIFORMITY) && !uniform::needs_analysis(f);
        let needed = if all_uniform {
            Analyses::CFG.union(Analyses::LOOPS)
        } else {
            Analyses::CFG
                .union(Analyses::LOOPS)
                .union(Analyses::UNIFORMITY)
        };
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
        let mut folded = Vec::new();
        let mut folds = address_folds(f, flags.fp_contract, &mut folded);
        let mut aliased = Vec::new();
        let mut edge_args = Vec::new();
        let copies = flags.coalesce.then_some(&mut edge_args);
        let mut alias = single_edge_aliases(f, cfg, &mut aliased, copies);
        add_zext_aliases(f, &mut alias, &mut aliased);
        add_trunc_aliases(f, &mut alias, &mut aliased);
        let spaces = infer_spaces(m, f);
        add_cast_aliases(f, &spaces, &mut alias, &mut aliased);
        for &v in &aliased {
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
            uni: if all_uniform {
                BranchUniformity::all_uniform()
            } else {
                BranchUniformity::new(&cache.uniformity)
            },
            // `anynan`: the function's NaNs may have any payload (LLVM's rule), so the
            // hardware's are as good as the canonical one.
            canon: if flags.canonical_nans && !f.any_nan {
                nan::observed_floats(f, cfg)
            } else {
                BitVec::repeat(false, f.dfg.num_values())
            },
            folds,
            alias,
            aliased,
            spaces,
            li,
            cfg,
            edge_args,
            folded,
            coal: Coalesced::default(),
            escaping: BitVec::new(),
            regs: Zeroed::new(f.dfg.num_values()),
            counts: [0; 5],
            out: core::mem::take(&mut scratch),
            stubs: 0,
            slot_offsets: Vec::new(),
            byval_offsets: Vec::new(),
            copy_pool: Vec::new(),
            reg_copies: Vec::new(),
            moves: Vec::new(),
            helpers: &mut helpers,
            widened: FxHashMap::default(),
        };
        e.out.clear();
        e.out.reserve(estimate(f));
        e.emit_function(cfg, &cache.domtree, li, &mut out)?;
        scratch = core::mem::take(&mut e.out);
    }

    let mut decls = Buf::default();
    for is64 in [false, true] {
        if helpers.fmod[usize::from(is64)] {
            let _ = writeln!(decls, "{};", fmod::helper_decl(is64));
        }
    }
    for (used, decl) in [
        (helpers.vprintf, VPRINTF_DECL),
        (helpers.assertfail, ASSERTFAIL_DECL),
    ] {
        if used {
            let _ = writeln!(decls, "{decl}");
        }
    }
    if decls.len() > 0 {
        if !any_proto {
            // The blank line after the prototypes, which the device functions' did not
            // write.
            decls.push('\n');
        }
        out.0.splice(helpers_at..helpers_at, decls.0);
    }
    for is64 in [false, true] {
        if helpers.fmod[usize::from(is64)] {
            out.push_str(&fmod::helper_def(is64));
            out.push('\n');
        }
    }
    Ok(out.into_string())
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
    /// The values with an entry in `alias` before emission starts.
    aliased: Vec<Value>,
    /// Generic pointers held as addresses of a specific space (see [`crate::space`]).
    spaces: SecondaryMap<Value, Option<AddrSpace>>,
    /// The function's loops.
    li: &'a LoopInfo,
    /// The function's CFG.
    cfg: &'a Cfg,
    /// The (parameter, argument, predecessor) of each edge into a block with several
    /// incoming edges, when coalescing ([`CodegenFlags::coalesce`]; empty otherwise).
    edge_args: Vec<(Value, Value, Block)>,
    /// The values folded into their uses that read registers there (see
    /// [`crate::fold::address_folds`]).
    folded: Vec<Value>,
    /// Block parameters sharing a register with their arguments (see
    /// [`crate::coalesce`]), decided after [`FnEmitter::scan_uses`].
    coal: Coalesced,
    /// Per value: a loop header's parameter whose register is read outside the loop
    /// (directly or through an alias), so its back-edge copies may not run on the exit
    /// path (see [`FnEmitter::brif`]; for a parameter alone in its register's class: a
    /// coalesced one asks [`Coalesced::may_write_on_exit`]).
    escaping: BitVec,
    /// Register number per value (0: none yet).
    regs: Zeroed<Value>,
    /// Registers used per class.
    counts: [u32; 5],
    /// The function body.
    out: Buf,
    /// Edge-stub labels used so far.
    stubs: u32,
    /// Byte offset of each slot in the local depot.
    slot_offsets: Vec<u32>,
    /// Byte offset of each `byval` parameter's copy in the local depot, by parameter.
    byval_offsets: Vec<(usize, u32)>,
    /// Spare vectors for [`FnEmitter::edge_copies`].
    copy_pool: Vec<Vec<(Reg, Opnd)>>,
    /// The register-to-register part of one parallel copy (kept for the next).
    reg_copies: Vec<(Reg, Reg)>,
    /// The moves of one parallel copy (kept for the next).
    moves: Vec<(Reg, Reg)>,
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
                put!(self; "fence.sc.", scope.name());
                "acq_rel"
            }
        };
        format!(".{sem}.{}", scope.name())
    }

    fn ty(&self, v: Value) -> Type {
        self.f.dfg.value_type(v)
    }

    /// The register of a value.
    #[inline]
    fn v(&mut self, v: Value) -> Reg {
        // Known already (every use after the first): no aliases to follow.
        match self.regs[v] {
            0 => self.v_first(v),
            n => Reg {
                class: Class::of(self.ty(v)),
                n,
            },
        }
    }

    /// [`FnEmitter::v`] of a value without a register number yet: follow its aliases,
    /// number the register, and remember the number for `v` itself too (an alias has
    /// its target's class: a block parameter its argument's type, a narrow `zext` and
    /// its operand are both `.b32`; the check keeps that an assumption no more).
    #[inline(never)]
    fn v_first(&mut self, v0: Value) -> Reg {
        let mut v = v0;
        while let Some(a) = self.alias[v] {
            v = a;
        }
        // A coalesced value has its class's register.
        if let Some(r) = self.coal.rep(v) {
            v = r;
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
        if v != v0 && Class::of(self.ty(v0)) == class {
            self.regs[v0] = n;
        }
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
        let ty = ["pred", "b32", "b64", "f32", "f64"][class.index()];
        put!(self; "mov.", ty, " ", t, ", ", o);
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
    fn opnd(&mut self, v: Value, signed: bool) -> Opnd {
        // A value with a register number is no immediate (see `FnEmitter::v`).
        if self.regs[v] != 0 {
            return Opnd::Reg(self.v(v));
        }
        let mut r = v;
        while let Some(a) = self.alias[r] {
            r = a;
        }
        if self.folds[r] == Fold::Imm {
            self.imm(r, signed)
        } else {
            Opnd::Reg(self.v(v))
        }
    }

    /// Will [`FnEmitter::opnd`] write `v` as an immediate?
    fn is_imm(&self, v: Value) -> bool {
        if self.regs[v] != 0 {
            return false;
        }
        let mut r = v;
        while let Some(a) = self.alias[r] {
            r = a;
        }
        self.folds[r] == Fold::Imm
    }

    /// The factors of a product `x * y` for `mad`/`fma`, whose first factor must be a
    /// register: a folded constant `x` goes second (the product commutes), where PTX
    /// takes an immediate, instead of costing a `mov` into a register.
    fn factors(&mut self, x: Value, y: Value, signed: bool) -> (Reg, Opnd) {
        let (x, y) = if self.is_imm(x) && !self.is_imm(y) {
            (y, x)
        } else {
            (x, y)
        };
        (self.v(x), self.opnd(y, signed))
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
        bodies: &mut Buf,
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

        let ir = Ir {
            f,
            folds: &self.folds,
            alias: &self.alias,
        };
        let mut collector =
            Collector::new(&ir, li, cfg, &self.edge_args, &self.folded, &self.aliased);
        let homes = self.scan_uses(cfg, dt, li, entry, collector.as_mut());
        if let Some(c) = collector {
            self.coal = c.finish(f, cfg, dt);
        }
        for &(b, i) in homes.iter().filter(|h| h.0 == entry) {
            debug_assert_eq!(b, entry);
            self.load_param(i);
        }
        let order = order::block_order(cfg, li);
        for (i, &b) in order.iter().enumerate() {
            let next = order.get(i + 1).copied();
            if b != entry {
                Label(b).put(&mut self.out);
                self.out.push_str(":\n");
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
        bodies.push_buf(&self.out);
        bodies.push_str("}\n\n");
        Ok(())
    }

    /// May the copies of `edge` (from `from`) run before the branch that picks between
    /// its block and `other`, on `other`'s path too? Yes for a back edge to a loop header
    /// when `other` leaves the loop and no register the copies write is read on
    /// `other`'s path before it is written again: for a parameter alone in its class, one
    /// never read outside the loop (a parameter is redefined before any read once the loop
    /// is re-entered); for a coalesced one, no member of its class live into `other` or a
    /// parameter of it. No copy may overwrite the branch condition either.
    fn copies_may_precede(
        &self,
        from: Block,
        edge: &BlockCall,
        other: Block,
        copies: &[(Reg, Opnd)],
        cond: Reg,
    ) -> bool {
        let li = self.li;
        let to = edge.block;
        let Some(l) = li.innermost_loop(to) else {
            return false;
        };
        if !(li.header(l) == to
            && to != other
            && li.contains(l, from)
            && !li.contains(l, other)
            && copies.iter().all(|&(d, _)| d != cond))
        {
            return false;
        }
        let dfg = &self.f.dfg;
        let exit_rpo = self.cfg.rpo_number(other);
        dfg.block_params(to)
            .iter()
            .zip(dfg.block_call_args(edge))
            .all(|(&p, &a)| {
                if !self.coal.is_member(p) {
                    return !self.escaping[p.index()];
                }
                let mut r = a;
                while let Some(x) = self.alias[r] {
                    r = x;
                }
                // No copy when the argument is in the parameter's class.
                self.coal.rep(r) == self.coal.rep(p)
                    || exit_rpo.is_some_and(|n| self.coal.may_write_on_exit(self.f, p, other, n))
            })
    }

    /// One walk over every use, for two questions: which loop-header parameters have
    /// registers read outside their loop (kept in [`FnEmitter::escaping`], see
    /// [`FnEmitter::brif`]), and where each used function parameter (by index) is loaded
    /// from the parameter space: the nearest common dominator of its uses, or the
    /// nearest dominator of that outside every loop, as llc sinks `ld.param` past an
    /// early-exit guard (threads that leave early never load it). A kernel's `byval`
    /// parameters are copied in the entry. The homes are sorted by parameter index; a
    /// register of a parameter is then written on every path to each use, once per
    /// execution. The same walk feeds `collector` the reads of the coalescing
    /// candidates.
    fn scan_uses(
        &mut self,
        cfg: &Cfg,
        dt: &DomTree,
        li: &LoopInfo,
        entry: Block,
        collector: Option<&mut Collector>,
    ) -> Vec<(Block, usize)> {
        let f = self.f;
        let dfg = &f.dfg;
        let alias = &self.alias;
        let params = dfg.block_params(entry);
        let mut home: Vec<Option<Block>> = vec![None; params.len()];
        let mut escaping: BitVec = BitVec::repeat(false, dfg.num_values());
        // The nearest common dominator of the home so far and a new use: the home's
        // lowest ancestor that dominates the use. Climbing from the home (never from the
        // use) makes each home only rise, so a parameter costs its uses plus the tree's
        // depth (climbing from each use, as deep as a 10,000-deep nest, was quadratic).
        let ncd = |mut h: Block, b: Block| {
            while h != entry && !dt.dominates(h, b) {
                h = dt.idom(h).unwrap_or(entry);
            }
            h
        };
        // The values whose uses count: the parameters of the entry block and of loop
        // headers, and the values aliased to one of them (their uses are the
        // parameter's). Every other use is passed over after one byte test, without
        // resolving its aliases or looking at its definition.
        let is_header = |pb: Block| li.innermost_loop(pb).is_some_and(|l| li.header(l) == pb);
        let mut hot = vec![false; dfg.num_values()];
        for &p in params {
            hot[p.index()] = true;
        }
        for l in li.loops() {
            let h = li.header(l);
            if is_header(h) {
                for &p in dfg.block_params(h) {
                    hot[p.index()] = true;
                }
            }
        }
        for &v in &self.aliased {
            if alias[v].is_some() {
                let mut r = v;
                while let Some(a) = alias[r] {
                    r = a;
                }
                if hot[r.index()] {
                    hot[v.index()] = true;
                }
            }
        }
        let mut visit = |mut v: Value, b: Block| {
            if !hot[v.index()] {
                return;
            }
            while let Some(a) = alias[v] {
                v = a;
            }
            if let ValueDef::Param(pb, i) = dfg.value_def(v) {
                if pb == entry {
                    let h = &mut home[i as usize];
                    *h = Some(h.map_or(b, |h| ncd(h, b)));
                }
                if let Some(l) = li.innermost_loop(pb) {
                    if li.header(l) == pb && !li.contains(l, b) {
                        escaping.set(v.index(), true);
                    }
                }
            }
        };
        // The coalescing candidates' reads are recorded in the same walk.
        let ir = Ir {
            f,
            folds: &self.folds,
            alias,
        };
        let mut col = collector;
        for (bi, &b) in cfg.rpo().iter().enumerate() {
            let bi = bi as u32;
            for inst in f.layout.block_insts(b) {
                for &v in dfg.inst_args(inst) {
                    visit(v, b);
                    if let Some(c) = col.as_deref_mut().filter(|c| c.wants(v)) {
                        c.read_operand(&ir, inst, v, bi);
                    }
                }
            }
            // Only a block's last instruction branches (the verifier's terminator rule).
            if let Some(term) = f.layout.last_inst(b) {
                dfg.for_each_dest(term, |bc| {
                    let params = dfg.block_params(bc.block);
                    for (&p, &v) in params.iter().zip(dfg.block_call_args(bc)) {
                        visit(v, b);
                        if let Some(c) = col.as_deref_mut() {
                            c.read_edge(&ir, p, v, bi);
                        }
                    }
                });
            }
        }
        self.escaping = escaping;
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
                    put!(self; "ld.param.u", bits, " ", t, ", [$$param", i, "+", k, "]");
                    put!(self; "st.local.u", bits, " [$$depot+", u64::from(off) + k, "], ", t);
                    k += u;
                }
                if off == 0 {
                    put!(self; "mov.u64 ", d, ", $$depot");
                } else {
                    let t = self.tmp(Class::B64);
                    put!(self; "mov.u64 ", t, ", $$depot");
                    put!(self; "add.s64 ", d, ", ", t, ", ", off);
                }
                return;
            }
            if kernel {
                let pt = &kernel_param_type(ty)[1..];
                match ty {
                    Type::I1 => {
                        let t = self.tmp(Class::B32);
                        put!(self; "ld.param.u8 ", t, ", [$$param", i, "]");
                        put!(self; "and.b32 ", t, ", ", t, ", 1");
                        put!(self; "setp.ne.b32 ", d, ", ", t, ", 0");
                    }
                    Type::Ptr(AddrSpace::Global) => {
                        let t = self.tmp(Class::B64);
                        put!(self; "ld.param.u64 ", t, ", [$$param", i, "]");
                        put!(self; "cvta.to.global.u64 ", d, ", ", t);
                    }
                    // A generic pointer whose web was inferred global (`crate::space`).
                    Type::Ptr(AddrSpace::Generic) if self.spaces[p].is_some() => {
                        let t = self.tmp(Class::B64);
                        put!(self; "ld.param.u64 ", t, ", [$$param", i, "]");
                        put!(self; "cvta.to.global.u64 ", d, ", ", t);
                    }
                    _ => put!(self; "ld.param.", pt, " ", d, ", [$$param", i, "]"),
                }
            } else {
                let pt = func_param_type(ty);
                if ty == Type::I1 {
                    let t = self.tmp(Class::B32);
                    put!(self; "ld.param.b32 ", t, ", [$$param", i, "]");
                    put!(self; "setp.ne.b32 ", d, ", ", t, ", 0");
                } else {
                    put!(self; "ld.param.", pt, " ", d, ", [$$param", i, "]");
                }
            }
        }
    }

    /// `and` a narrow integer result back to its width.
    fn renarrow(&mut self, d: Reg, ty: Type) {
        if is_narrow(ty) {
            put!(self; "and.b32 ", d, ", ", d, ", ", Hex(mask_of(ty)));
        }
    }

    /// A 32-bit register holding `v` (i8/i16/i32) sign-extended.
    fn sext32(&mut self, v: Value) -> Reg {
        let r = self.v(v);
        match self.ty(v) {
            Type::I8 => {
                let t = self.tmp(Class::B32);
                put!(self; "cvt.s32.s8 ", t, ", ", r);
                t
            }
            Type::I16 => {
                let t = self.tmp(Class::B32);
                put!(self; "cvt.s32.s16 ", t, ", ", r);
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
            put!(self; "selp.b32 ", t, ", ", one, ", 0, ", p);
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
        put!(self; "setp.nan.", t, " ", p, ", ", d, ", ", d);
        put!(self; "selp.", t, " ", d, ", ", nan, ", ", d, ", ", p);
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
                    Class::Pred => put!(self; "mov.pred ", d, ", ", bits),
                    Class::B32 => put!(self; "mov.b32 ", d, ", ", Hex(bits)),
                    _ => put!(self; "mov.b64 ", d, ", ", Hex(bits)),
                }
            }
            InstructionData::FloatConst { bits } => {
                let r = result.expect("fconst has a result");
                let is64 = self.ty(r) == Type::F64;
                let d = self.v(r);
                let t = if is64 { "f64" } else { "f32" };
                put!(self; "mov.", t, " ", d, ", ", float_imm(is64, bits));
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
                match opcode {
                    Opcode::Fma => {
                        let t = if d.class == Class::F64 { "f64" } else { "f32" };
                        let (a, b) = self.factors(args[0], args[1], false);
                        let c = self.opnd(args[2], false);
                        put!(self; "fma.rn.", t, " ", d, ", ", a, ", ", b, ", ", c);
                        self.canonicalize(r);
                    }
                    Opcode::Select => {
                        let a = self.v(args[0]);
                        let (b, c) = match d.class {
                            Class::Pred => (Opnd::Reg(self.v(args[1])), Opnd::Reg(self.v(args[2]))),
                            _ => (self.opnd(args[1], false), self.opnd(args[2], false)),
                        };
                        match d.class {
                            Class::Pred => {
                                put!(self; "@", a, " mov.pred ", d, ", ", b);
                                put!(self; "@!", a, " mov.pred ", d, ", ", c);
                            }
                            cl => {
                                let t = ["", "b32", "b64", "f32", "f64"][cl.index()];
                                put!(self; "selp.", t, " ", d, ", ", b, ", ", c, ", ", a);
                            }
                        }
                    }
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
                        put!(self; "mov.pred ", d, ", 0");
                        return Ok(());
                    }
                    FloatCC::True => {
                        put!(self; "mov.pred ", d, ", 1");
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
                put!(self; "setp.", op, ".", t, " ", d, ", ", a, ", ", b);
            }
            InstructionData::PtrAdd { args, scale } => {
                let r = result.expect("ptradd has a result");
                // A register shared with other values may be written again while a
                // second `ptradd` would still read it: members of classes never share.
                let key = if self.coal.is_member(r) {
                    None
                } else {
                    self.widened_key(args, scale)
                };
                if let Some(prev) = key.and_then(|k| self.widened.get(&k).copied()) {
                    // The same register value, computed earlier in this block.
                    self.alias[r] = Some(prev);
                    // A number given to `r` before (never: uses follow the definition)
                    // would hide the alias from `v`.
                    self.regs[r] = 0;
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
                    put!(self; "mad.wide.", s, "32 ", d, ", ", i, ", ", scale, ", ", base);
                    return Ok(());
                }
                // A constant index (of a `ptradd` also used as a value, or whose offset
                // is too wide for an address): one add of the byte offset, as llc's
                // `add.s64 %rd2, %rd1, 16`; the constant gets no register of its own.
                if let Some(off) = const_index_offset(dfg, args[1], scale) {
                    put!(self; "add.s64 ", d, ", ", base, ", ", off);
                    return Ok(());
                }
                match self.ty(args[1]) {
                    Type::I64 => {
                        if scale == 1 {
                            // A constant step is an immediate (`fold::imm_slots`).
                            let i = self.opnd(args[1], true);
                            put!(self; "add.s64 ", d, ", ", base, ", ", i);
                        } else {
                            let i = self.v(args[1]);
                            put!(self; "mad.lo.s64 ", d, ", ", i, ", ", scale, ", ", base);
                        }
                    }
                    _ => {
                        let i = self.int32(args[1], true);
                        if scale <= i32::MAX as u32 {
                            put!(self; "mad.wide.s32 ", d, ", ", i, ", ", scale, ", ", base);
                        } else {
                            let t = self.tmp(Class::B64);
                            put!(self; "cvt.s64.s32 ", t, ", ", i);
                            put!(self; "mad.lo.s64 ", d, ", ", t, ", ", scale, ", ", base);
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
                    put!(self; "ld", vol, sq, ".u8 ", t, ", [", p, "]");
                    put!(self; "and.b32 ", t, ", ", t, ", 1");
                    put!(self; "setp.ne.b32 ", d, ", ", t, ", 0");
                } else {
                    put!(self; "ld", vol, sq, ".", mt, " ", d, ", [", p, "]");
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
                put!(self; "st", vol, sq, ".", mt, " [", p, "], ", v);
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
                    (AtomicOp::Add, true) => "add.f",
                    (AtomicOp::Add, false) => "add.u",
                    (AtomicOp::And, _) => "and.b",
                    (AtomicOp::Or, _) => "or.b",
                    (AtomicOp::Xor, _) => "xor.b",
                    (AtomicOp::Smin, _) => "min.s",
                    (AtomicOp::Smax, _) => "max.s",
                    (AtomicOp::Umin, _) => "min.u",
                    (AtomicOp::Umax, _) => "max.u",
                    (AtomicOp::Exch, _) => "exch.b",
                    (AtomicOp::Inc, _) => "inc.u",
                    (AtomicOp::Dec, _) => "dec.u",
                };
                if !matches!(ty, Type::I32 | Type::I64 | Type::F32 | Type::F64) {
                    return Err(self.err(inst, format!("atomic on {ty}")));
                }
                let signed = matches!(op, AtomicOp::Smin | AtomicOp::Smax);
                let p = self.addr(args[0]);
                // An integer constant is an immediate (`fold::imm_slots`).
                let v = if ty.is_float() {
                    Opnd::Reg(self.v(args[1]))
                } else {
                    self.opnd(args[1], signed)
                };
                let d = self.v(r);
                put!(self; "atom", sem, space_qual(space), ".", o, w, " ", d, ", [", p, "], ", v);
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
                put!(self; "atom", sem, space_qual(space), ".cas.b", w, " ", d, ", [", p, "], ", e, ", ", n);
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
                        put!(self; "mov.u64 ", t, ", ", name);
                        put!(self; "cvta.", space_name(gspace), ".u64 ", d, ", ", t);
                    }
                    _ => put!(self; "mov.u64 ", d, ", ", name),
                }
            }
            InstructionData::SlotAddr { slot } => {
                let r = result.expect("slot_addr has a result");
                let off = self.slot_offsets.get(slot.index()).copied().unwrap_or(0);
                let d = self.v(r);
                if off == 0 {
                    put!(self; "mov.u64 ", d, ", $$depot");
                } else {
                    let t = self.tmp(Class::B64);
                    put!(self; "mov.u64 ", t, ", $$depot");
                    put!(self; "add.s64 ", d, ", ", t, ", ", off);
                }
            }
            InstructionData::Sreg { reg } => {
                let r = result.expect("sreg has a result");
                let d = self.v(r);
                let (pct, src) = match reg {
                    SpecialReg::WarpSize => ("", "WARP_SZ"),
                    SpecialReg::LaneId => ("%", "laneid"),
                    other => ("%", other.name()),
                };
                put!(self; "mov.u32 ", d, ", ", pct, src);
            }
            InstructionData::Shfl { mode, args } => {
                let r = result.expect("shfl has a result");
                let (d, a) = (self.v(r), self.v(args[0]));
                let (b, c, m) = (self.v(args[1]), self.v(args[2]), self.v(args[3]));
                put!(self; "shfl.sync.", mode.name(), ".b32 ", d, ", ", a, ", ", b, ", ", c, ", ", m);
            }
            InstructionData::Vote { mode, args } => {
                let r = result.expect("vote has a result");
                let (d, p, m) = (self.v(r), self.v(args[0]), self.v(args[1]));
                let t = if mode == VoteMode::Ballot {
                    "b32"
                } else {
                    "pred"
                };
                put!(self; "vote.sync.", mode.name(), ".", t, " ", d, ", ", p, ", ", m);
            }
            InstructionData::WarpSync { mask } => {
                let m = self.v(mask);
                put!(self; "bar.warp.sync ", m);
            }
            InstructionData::Fence { order, scope } => {
                let sem = if order == MemOrder::SeqCst {
                    "sc"
                } else {
                    "acq_rel"
                };
                put!(self; "fence.", sem, ".", scope.name());
            }
            InstructionData::Nullary { opcode } => match opcode {
                Opcode::Clock => {
                    let r = result.expect("clock has a result");
                    let d = self.v(r);
                    if self.ty(r) == Type::I64 {
                        put!(self; "mov.u64 ", d, ", %clock64");
                    } else {
                        put!(self; "mov.u32 ", d, ", %clock");
                    }
                }
                Opcode::Barrier => put!(self; "bar.sync 0"),
                Opcode::Unreachable => put!(self; "trap"),
                _ => return Err(self.err(inst, format!("opcode {}", opcode.name()))),
            },
            InstructionData::Vprintf { args } => {
                // llc's call sequence for the system call (plain `call`: it may be
                // divergent).
                self.helpers.vprintf = true;
                let (f0, a0) = (self.v(args[0]), self.v(args[1]));
                let d = self.v(result.expect("vprintf has a result"));
                self.out.push_str("\t{\n");
                put!(self; "\t.param .b64 $$arg0");
                put!(self; "\tst.param.b64 [$$arg0], ", f0);
                put!(self; "\t.param .b64 $$arg1");
                put!(self; "\tst.param.b64 [$$arg1], ", a0);
                put!(self; "\t.param .b32 $$ret");
                put!(self; "\tcall ($$ret), vprintf, ($$arg0, $$arg1)");
                put!(self; "\tld.param.b32 ", d, ", [$$ret]");
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
                    put!(self; "\t.param .", t, " $$arg", i);
                    put!(self; "\tst.param.", t, " [$$arg", i, "], ", v);
                }
                // The character size: always 1 (CUDA's `assert`).
                put!(self; "\t.param .b64 $$arg4");
                put!(self; "\tst.param.b64 [$$arg4], 1");
                put!(self; "\tcall __assertfail, ($$arg0, $$arg1, $$arg2, $$arg3, $$arg4)");
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
                    put!(self; "\t.param .", pt, " $$arg", i);
                    put!(self; "\tst.param.", pt, " [$$arg", i, "], ", v);
                    names.push(format!("$$arg{i}"));
                }
                let list = names.join(", ");
                match (ret, result) {
                    (Some(rt), Some(r)) => {
                        let pt = func_param_type(rt);
                        put!(self; "\t.param .", pt, " $$ret");
                        put!(self; "\tcall ($$ret), ", name, ", (", list, ")");
                        let d = self.v(r);
                        if rt == Type::I1 {
                            let t = self.tmp(Class::B32);
                            put!(self; "\tld.param.b32 ", t, ", [$$ret]");
                            put!(self; "\tsetp.ne.b32 ", d, ", ", t, ", 0");
                        } else {
                            put!(self; "\tld.param.", pt, " ", d, ", [$$ret]");
                        }
                    }
                    _ => put!(self; "\tcall ", name, ", (", list, ")"),
                }
                self.out.push_str("\t}\n");
            }
            InstructionData::Jump { ref dest } => {
                let dest = *dest;
                let copies = self.edge_copies(&dest);
                self.copies(&copies);
                self.recycle(copies);
                if next != Some(dest.block) {
                    put!(self; "bra.uni ", label(dest.block));
                }
            }
            InstructionData::Brif { arg, ref blocks } => {
                let [t, e] = *blocks;
                self.brif(inst, arg, t, e, next);
            }
            InstructionData::BrTable { arg, table } => {
                // Borrowed from the function, not from `self` (no copy of the table).
                let jt = f.dfg.jump_table(table);
                self.br_table(inst, arg, jt, next);
            }
            InstructionData::Return { ref args } => {
                let args = args.as_slice(&f.dfg.value_lists);
                if let Some(&a) = args.first() {
                    let ty = self.ty(a);
                    let pt = func_param_type(ty);
                    let v = if ty == Type::I1 {
                        self.int32(a, false)
                    } else {
                        self.v(a)
                    };
                    put!(self; "st.param.", pt, " [$$retval], ", v);
                }
                put!(self; "ret");
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
                Opcode::Iadd | Opcode::Isub | Opcode::Xor => {
                    put!(self; "xor.pred ", d, ", ", a, ", ", b)
                }
                Opcode::Imul | Opcode::And | Opcode::Umin | Opcode::Smax => {
                    put!(self; "and.pred ", d, ", ", a, ", ", b)
                }
                Opcode::Or | Opcode::Umax | Opcode::Smin => {
                    put!(self; "or.pred ", d, ", ", a, ", ", b)
                }
                // The divisor must be 1 and a shift amount 0 (anything else is UB or
                // poison), so the result is the dividend / shifted value.
                Opcode::Srem | Opcode::Urem => put!(self; "mov.pred ", d, ", 0"),
                _ => put!(self; "mov.pred ", d, ", ", a),
            }
            return;
        }
        // The width as text: one append, no digits to compute.
        let wide = ty.bits() == 64;
        let w = if wide { "64" } else { "32" };
        let shift_amount = |s: &mut Self, v: Value| -> Opnd {
            match s.opnd(v, false) {
                // What `cvt.u32.u64` of the register would leave.
                Opnd::Unsigned(x) => Opnd::Unsigned(x & 0xFFFF_FFFF),
                Opnd::Reg(r) if wide => {
                    let t = s.tmp(Class::B32);
                    put!(s; "cvt.u32.u64 ", t, ", ", r);
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
                let (x, y) = self.factors(margs[0], margs[1], true);
                let c = self.opnd(args[other], true);
                put!(self; "mad.lo.s", w, " ", d, ", ", x, ", ", y, ", ", c);
                return;
            }
        }
        match op {
            Opcode::Iadd | Opcode::Isub | Opcode::Imul | Opcode::Shl => {
                let a = self.opnd(args[0], op != Opcode::Shl);
                let (name, b) = match op {
                    Opcode::Iadd => ("add.s", self.opnd(args[1], true)),
                    Opcode::Isub => ("sub.s", self.opnd(args[1], true)),
                    Opcode::Imul => ("mul.lo.s", self.opnd(args[1], true)),
                    _ => ("shl.b", shift_amount(self, args[1])),
                };
                put!(self; name, w, " ", d, ", ", a, ", ", b);
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
                put!(self; name, ".s", w, " ", d, ", ", a, ", ", b);
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
                put!(self; name, ".u", w, " ", d, ", ", a, ", ", b);
            }
            Opcode::And | Opcode::Or | Opcode::Xor => {
                let (a, b) = (self.opnd(args[0], false), self.opnd(args[1], false));
                let name = match op {
                    Opcode::And => "and",
                    Opcode::Or => "or",
                    _ => "xor",
                };
                put!(self; name, ".b", w, " ", d, ", ", a, ", ", b);
            }
            // The verifier allows these on i32 only, PTX's one width for mul24.
            Opcode::Mul24 | Opcode::Umul24 => {
                let (a, b) = (self.v(args[0]), self.v(args[1]));
                let s = if op == Opcode::Mul24 { "s" } else { "u" };
                put!(self; "mul24.lo.", s, "32 ", d, ", ", a, ", ", b);
            }
            Opcode::Lshr => {
                let a = self.opnd(args[0], false);
                let b = shift_amount(self, args[1]);
                put!(self; "shr.u", w, " ", d, ", ", a, ", ", b);
            }
            Opcode::Ashr => {
                let a = match self.folds[args[0]] {
                    Fold::Imm => self.opnd(args[0], true),
                    _ => Opnd::Reg(self.sext32(args[0])),
                };
                let b = shift_amount(self, args[1]);
                put!(self; "shr.s", w, " ", d, ", ", a, ", ", b);
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
                let (x, y) = self.factors(margs[0], margs[1], false);
                let (c, d) = (self.opnd(args[other], false), self.v(r));
                put!(self; "fma.rn.", t, " ", d, ", ", x, ", ", y, ", ", c);
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
                put!(self; "\t.param .", t, " $$x");
                put!(self; "\tst.param.", t, " [$$x], ", a);
                put!(self; "\t.param .", t, " $$y");
                put!(self; "\tst.param.", t, " [$$y], ", b);
                put!(self; "\t.param .", t, " $$r");
                put!(self; "\tcall ($$r), ", fmod::helper_name(is64), ", ($$x, $$y)");
                put!(self; "\tld.param.", t, " ", d, ", [$$r]");
                self.out.push_str("\t}\n");
                self.canonicalize(r);
                return Ok(());
            }
            _ => return Err(self.err(inst, format!("float opcode {}", op.name()))),
        };
        put!(self; name, ".", t, " ", d, ", ", a, ", ", b);
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
            Opcode::Freeze => put!(self; d.class.mov(), " ", d, ", ", a),
            Opcode::Popcnt | Opcode::Clz | Opcode::Ctz => match from {
                Type::I1 => match op {
                    Opcode::Popcnt => put!(self; "mov.pred ", d, ", ", a),
                    _ => put!(self; "not.pred ", d, ", ", a),
                },
                Type::I64 => {
                    let t = self.tmp(Class::B32);
                    match op {
                        Opcode::Popcnt => put!(self; "popc.b64 ", t, ", ", a),
                        Opcode::Clz => put!(self; "clz.b64 ", t, ", ", a),
                        _ => {
                            let u = self.tmp(Class::B64);
                            put!(self; "brev.b64 ", u, ", ", a);
                            put!(self; "clz.b64 ", t, ", ", u);
                        }
                    }
                    put!(self; "cvt.u64.u32 ", d, ", ", t);
                }
                _ => {
                    let w = from.bits();
                    match op {
                        Opcode::Popcnt => put!(self; "popc.b32 ", d, ", ", a),
                        Opcode::Clz => {
                            put!(self; "clz.b32 ", d, ", ", a);
                            if w < 32 {
                                put!(self; "sub.s32 ", d, ", ", d, ", ", 32 - w);
                            }
                        }
                        _ => {
                            let u = self.tmp(Class::B32);
                            put!(self; "brev.b32 ", u, ", ", a);
                            put!(self; "clz.b32 ", d, ", ", u);
                            if w < 32 {
                                put!(self; "min.u32 ", d, ", ", d, ", ", w);
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
                put!(self; o, ".", b, " ", d, ", ", a, ", ", m);
            }
            Opcode::Sqrt => {
                put!(self; "sqrt.rn.", ft(from), " ", d, ", ", a);
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
                put!(self; name, ".approx.", ft(from), " ", d, ", ", a);
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
                put!(self; "cvt.", m, ".", t, ".", t, " ", d, ", ", a);
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
                        put!(self; "selp.b64 ", d, ", ", one, ", 0, ", a);
                    }
                    (Type::I1, _) => {
                        let one = if signed { mask_of(to) } else { 1 };
                        put!(self; "selp.b32 ", d, ", ", Hex(one), ", 0, ", a);
                    }
                    (_, Type::I64) => {
                        let s = if signed { "s" } else { "u" };
                        put!(self; "cvt.", s, "64.", s, from.bits(), " ", d, ", ", a);
                    }
                    _ => {
                        if signed {
                            put!(self; "cvt.s32.s", from.bits(), " ", d, ", ", a);
                            self.renarrow(d, to);
                        } else {
                            put!(self; "mov.b32 ", d, ", ", a);
                        }
                    }
                }
            }
            Opcode::Trunc => match (from, to) {
                (Type::I64, Type::I1) => {
                    let t = self.tmp(Class::B64);
                    put!(self; "and.b64 ", t, ", ", a, ", 1");
                    put!(self; "setp.ne.b64 ", d, ", ", t, ", 0");
                }
                (_, Type::I1) => {
                    let t = self.tmp(Class::B32);
                    put!(self; "and.b32 ", t, ", ", a, ", 1");
                    put!(self; "setp.ne.b32 ", d, ", ", t, ", 0");
                }
                (Type::I64, _) => {
                    put!(self; "cvt.u32.u64 ", d, ", ", a);
                    self.renarrow(d, to);
                }
                _ => put!(self; "and.b32 ", d, ", ", a, ", ", Hex(mask_of(to))),
            },
            Opcode::Fptosi | Opcode::Fptoui => {
                let s = if op == Opcode::Fptosi { "s" } else { "u" };
                let f = ft(from);
                match to {
                    Type::I64 => put!(self; "cvt.rzi.", s, "64.", f, " ", d, ", ", a),
                    Type::I1 => {
                        let t = self.tmp(Class::B32);
                        put!(self; "cvt.rzi.", s, "32.", f, " ", t, ", ", a);
                        put!(self; "setp.ne.b32 ", d, ", ", t, ", 0");
                    }
                    _ => {
                        put!(self; "cvt.rzi.", s, "32.", f, " ", d, ", ", a);
                        self.renarrow(d, to);
                    }
                }
            }
            Opcode::Sitofp | Opcode::Uitofp => {
                let signed = op == Opcode::Sitofp;
                let s = if signed { "s" } else { "u" };
                let f = ft(to);
                if from == Type::I64 {
                    put!(self; "cvt.rn.", f, ".", s, "64 ", d, ", ", a);
                } else {
                    let src = self.int32(arg, signed);
                    put!(self; "cvt.rn.", f, ".", s, "32 ", d, ", ", src);
                }
            }
            Opcode::Fpext => {
                put!(self; "cvt.f64.f32 ", d, ", ", a);
                self.canonicalize_value(inst);
            }
            Opcode::Fptrunc => {
                put!(self; "cvt.rn.f32.f64 ", d, ", ", a);
                self.canonicalize_value(inst);
            }
            Opcode::Bitcast => {
                if a.class == d.class {
                    put!(self; d.class.mov(), " ", d, ", ", a);
                } else {
                    let b = if to.bits() == 64 { "b64" } else { "b32" };
                    put!(self; "mov.", b, " ", d, ", ", a);
                }
            }
            Opcode::Ptrtoint => {
                if to == Type::I64 {
                    put!(self; "mov.b64 ", d, ", ", a);
                } else {
                    put!(self; "cvt.u32.u64 ", d, ", ", a);
                    self.renarrow(d, to);
                }
            }
            Opcode::Inttoptr => {
                if from == Type::I64 {
                    put!(self; "mov.b64 ", d, ", ", a);
                } else {
                    let src = self.int32(arg, false);
                    put!(self; "cvt.u64.u32 ", d, ", ", src);
                }
            }
            Opcode::AddrspaceCast => {
                let fs = from.addr_space().unwrap_or(AddrSpace::Generic);
                let ts = to.addr_space().unwrap_or(AddrSpace::Generic);
                match (fs, ts) {
                    (AddrSpace::Generic, AddrSpace::Generic) => put!(self; "mov.b64 ", d, ", ", a),
                    (AddrSpace::Generic, s) => {
                        put!(self; "cvta.to.", space_name(s), ".u64 ", d, ", ", a)
                    }
                    // The result's web holds `s`-space addresses (see `crate::space`).
                    (_, AddrSpace::Generic)
                        if self
                            .f
                            .dfg
                            .inst_result(inst)
                            .is_some_and(|r| self.spaces[r].is_some()) =>
                    {
                        put!(self; "mov.b64 ", d, ", ", a)
                    }
                    (s, AddrSpace::Generic) => {
                        put!(self; "cvta.", space_name(s), ".u64 ", d, ", ", a)
                    }
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
            put!(self; "setp.", op, ".", s, "64 ", d, ", ", a, ", ", b);
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
            put!(self; "setp.", op, ".", s, "32 ", d, ", ", a, ", ", b);
        }
    }

    /// The register copies of one edge, `(parameter, argument)`, trivial ones dropped.
    /// The vector comes from a pool: hand it back with [`FnEmitter::recycle`] (an empty
    /// one needs nothing), so that edges allocate nothing once the pool is warm.
    fn edge_copies(&mut self, bc: &BlockCall) -> Vec<(Reg, Opnd)> {
        let f = self.f;
        let dfg = &f.dfg;
        let mut out = self.copy_pool.pop().unwrap_or_default();
        for (&p, &a) in dfg
            .block_params(bc.block)
            .iter()
            .zip(dfg.block_call_args(bc))
        {
            let (p, a) = (self.v(p), self.opnd(a, false));
            if !matches!(a, Opnd::Reg(r) if r == p) {
                out.push((p, a));
            }
        }
        if out.is_empty() {
            self.copy_pool.push(out);
            return Vec::new();
        }
        out
    }

    /// Return a vector of [`FnEmitter::edge_copies`] to the pool.
    fn recycle(&mut self, mut copies: Vec<(Reg, Opnd)>) {
        if copies.capacity() > 0 {
            copies.clear();
            self.copy_pool.push(copies);
        }
    }

    /// Emit a parallel copy as a sequence of moves: the register copies sequentialized,
    /// then the immediates (no copy reads a destination after that, and the
    /// destinations are distinct).
    fn copies(&mut self, copies: &[(Reg, Opnd)]) {
        if copies.is_empty() {
            return;
        }
        // Buffers kept between edges: no allocation per parallel copy.
        let mut regs = core::mem::take(&mut self.reg_copies);
        regs.clear();
        regs.extend(copies.iter().filter_map(|&(d, s)| match s {
            Opnd::Reg(s) => Some((d, s)),
            _ => None,
        }));
        let mut moves = core::mem::take(&mut self.moves);
        moves.clear();
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
        for &(d, s) in &moves {
            put!(self; d.class.mov(), " ", d, ", ", s);
        }
        for &(d, s) in copies {
            if !matches!(s, Opnd::Reg(_)) {
                put!(self; d.class.mov(), " ", d, ", ", s);
            }
        }
        self.moves = moves;
        self.reg_copies = regs;
    }

    fn new_stub(&mut self) -> StubLabel {
        self.stubs += 1;
        StubLabel(self.stubs)
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
                    put!(self; "bra.uni ", label(tb));
                }
            } else if next == Some(tb) {
                put!(self; "@!", c, " ", bra, " ", label(eb));
            } else {
                put!(self; "@", c, " ", bra, " ", label(tb));
                if next != Some(eb) {
                    put!(self; "bra.uni ", label(eb));
                }
            }
            return;
        }
        let from = self.f.layout.inst_block(inst);
        let early = |s: &Self, edge: &BlockCall, other: Block, copies: &[(Reg, Opnd)]| {
            from.is_some_and(|b| s.copies_may_precede(b, edge, other, copies, c))
        };
        if ct.is_empty() && early(self, &e, tb, &ce) {
            // The back edge's copies first, then one branch (a loop latch as llc
            // writes it: `@!p bra header`, falling through to the exit).
            self.copies(&ce);
            put!(self; "@!", c, " ", bra, " ", label(eb));
            if next != Some(tb) {
                put!(self; "bra.uni ", label(tb));
            }
        } else if ce.is_empty() && early(self, &t, eb, &ct) {
            self.copies(&ct);
            put!(self; "@", c, " ", bra, " ", label(tb));
            if next != Some(eb) {
                put!(self; "bra.uni ", label(eb));
            }
        } else if ct.is_empty() {
            put!(self; "@", c, " ", bra, " ", label(tb));
            self.copies(&ce);
            if next != Some(eb) {
                put!(self; "bra.uni ", label(eb));
            }
        } else if ce.is_empty() {
            put!(self; "@!", c, " ", bra, " ", label(eb));
            self.copies(&ct);
            if next != Some(tb) {
                put!(self; "bra.uni ", label(tb));
            }
        } else {
            let stub = self.new_stub();
            put!(self; "@!", c, " ", bra, " ", stub);
            self.copies(&ct);
            put!(self; "bra.uni ", label(tb));
            stub.put(&mut self.out);
            self.out.push_str(":\n");
            self.copies(&ce);
            if next != Some(eb) {
                put!(self; "bra.uni ", label(eb));
            }
        }
        self.recycle(ct);
        self.recycle(ce);
    }

    fn br_table(
        &mut self,
        inst: Inst,
        arg: Value,
        jt: &gyre_ir::JumpTableData,
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
                Target::Block(label(bc.block))
            } else {
                let s = self.new_stub();
                stubs.push((s, copies, bc.block));
                Target::Stub(s)
            };
            let p = self.tmp(Class::Pred);
            let kv = (*k as u64) & mask;
            put!(self; "setp.eq.b", w, " ", p, ", ", v, ", ", Hex(kv));
            put!(self; "@", p, " ", bra, " ", target);
        }
        let copies = self.edge_copies(&jt.default);
        self.copies(&copies);
        if next != Some(jt.default.block) || !stubs.is_empty() {
            put!(self; "bra.uni ", label(jt.default.block));
        }
        for (s, copies, b) in stubs {
            s.put(&mut self.out);
            self.out.push_str(":\n");
            self.copies(&copies);
            put!(self; "bra.uni ", label(b));
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

#[cfg(test)]
mod tests {
    use super::*;

    fn text(p: impl Piece) -> String {
        piece_string(&p)
    }

    /// The pieces write what `format!` wrote before them, byte for byte.
    #[test]
    fn pieces_match_core_fmt() {
        let mut ns: Vec<u64> = (0..2000).collect();
        for k in 1..20 {
            let p = 10u64.pow(k);
            ns.extend([p - 1, p, p + 1, p.wrapping_mul(7).wrapping_add(3)]);
        }
        ns.extend([
            u64::from(u32::MAX) - 1,
            u64::from(u32::MAX),
            u64::from(u32::MAX) + 1,
            u64::MAX - 1,
            u64::MAX,
            0x7ff8_0000_0000_0000,
        ]);
        for &n in &ns {
            assert_eq!(text(n), format!("{n}"));
            assert_eq!(text(Hex(n)), format!("{n:#X}"));
            assert_eq!(text(n as u32), format!("{}", n as u32));
            assert_eq!(text(n as i64), format!("{}", n as i64));
            assert_eq!(text(n as i32), format!("{}", n as i32));
            assert_eq!(text(float_imm(true, n)), format!("0d{n:016X}"));
            assert_eq!(text(float_imm(false, n)), format!("0f{:08X}", n as u32));
        }
        assert_eq!(text(i64::MIN), i64::MIN.to_string());
        let r = Reg {
            class: Class::B64,
            n: 12345,
        };
        assert_eq!(text(r), "%rd12345");
        assert_eq!(r.to_string(), "%rd12345");
        let a = Addr { reg: r, off: -4 };
        assert_eq!(text(a), "%rd12345+-4");
        assert_eq!(text(a), a.to_string());
        assert_eq!(text(Label(Block::new(907))), "$L__BB907");
        // Registers, labels and stub labels (prefix and digits as one append), at every
        // digit count, after other text.
        for &n in ns.iter().filter(|&&n| n <= u64::from(u32::MAX)) {
            let n32 = n as u32;
            for c in CLASSES {
                let mut b = Buf::default();
                b.push_str("x ");
                Reg { class: c, n: n32 }.put(&mut b);
                b.push(';');
                assert_eq!(b.into_string(), format!("x {}{n32};", c.prefix()));
            }
            assert_eq!(text(StubLabel(n32)), format!("$L__E{n32}"));
            // Entity indices stop below `u32::MAX` (the reserved value).
            if n32 < u32::MAX {
                assert_eq!(
                    text(Label(Block::new(n32 as usize))),
                    format!("$L__BB{n32}")
                );
            }
        }
        assert_eq!(label(Block::new(3)).to_string(), "$L__BB3");
        let mut b = Buf::default();
        b.push('é');
        b.push_str("x");
        assert_eq!(b.into_string(), "éx");
    }
}
