//! Gyre IR to LLVM IR text that LLVM 14 accepts.
//!
//! - Values print as `%vN`, blocks as `%blockN`; constants (`iconst`, `fconst`) and
//!   global addresses are printed inline at each use, so they need no instruction.
//! - Block parameters become `phi`s. An edge whose target has parameters and that
//!   shares its (predecessor, target) pair with another edge of the same terminator
//!   passing different arguments goes through a trampoline block, since LLVM `phi`s name
//!   predecessors, not edges. Edges passing the same arguments stay direct (a `phi` may
//!   repeat a predecessor with the same value): a trampoline would be a block outside the
//!   loop of the branch, so a loop exit edge through one breaks LCSSA for LLVM. A branch
//!   to the entry block gets a fresh LLVM entry (`start`) in front of it.
//! - Pointers are `i8 addrspace(N)*` (typed, default) or `ptr addrspace(N)` (opaque):
//!   `ptradd` is a byte `getelementptr`, loads and stores bitcast to the accessed type.
//! - Slots become `alloca i8, i32 SIZE` in the entry block; `slot_addr` casts one to
//!   the local address space. Operations without an LLVM instruction are intrinsic
//!   calls (`llvm.smin`, `llvm.ctpop`, `llvm.nvvm.read.ptx.sreg.*`, ...).
//! - Only blocks reachable from the entry are printed (unreachable code may break
//!   dominance, which LLVM's verifier would reject in a reachable block's phis).
//!
//! Kernels are listed in `!nvvm.annotations`; a `convergent` function gets the
//! attribute. Loads and stores claim natural alignment; atomics are `monotonic`. A loop
//! header's attributes become an `!llvm.loop` node on every back edge's branch.

use crate::import::{f32_bits_to_f64_bits, trunc_bits};
use core::fmt::Write;
use gyre_ir::{
    AddrSpace, AtomicOp, Block, FuncKind, Function, InstructionData, Linkage, LoopAttrs, MemOrder,
    MemScope, Module, Opcode, SecondaryMap, Type, UnrollHint, Value, ValueDef, VoteMode,
};
use rustc_hash::FxHashMap;
use std::cell::RefCell;
use std::collections::BTreeMap;

/// Export options.
#[derive(Copy, Clone, PartialEq, Eq, Debug, Default)]
pub struct ExportOptions {
    /// Print opaque pointers (`ptr addrspace(1)`); LLVM 14 needs `-opaque-pointers`
    /// to read them. The default prints typed `i8 addrspace(1)*` pointers.
    pub opaque_pointers: bool,
}

/// Print `m` as LLVM IR text. `m` should pass the Gyre verifier; the output of an
/// invalid module is unspecified (it may be rejected by LLVM).
pub fn export_module(m: &Module, opts: &ExportOptions) -> String {
    let mut x = Exporter {
        opaque: opts.opaque_pointers,
        m,
        decls: RefCell::new(BTreeMap::new()),
        out: String::new(),
        loop_md: String::new(),
        next_md: m
            .functions
            .values()
            .filter(|f| f.kind == FuncKind::Kernel)
            .count(),
    };
    x.out.push_str("; Exported from Gyre IR.\n");
    x.out
        .push_str("target datalayout = \"e-i64:64-i128:128-v16:16-v32:32-n16:32:64\"\n");
    x.out
        .push_str("target triple = \"nvptx64-nvidia-cuda\"\n\n");
    for (_, g) in m.globals.iter() {
        x.global(g);
    }
    if !m.globals.is_empty() {
        x.out.push('\n');
    }
    for (_, f) in m.functions.iter() {
        x.function(f);
        x.out.push('\n');
    }
    let decls = x.decls.take();
    for d in decls.values() {
        x.out.push_str(d);
        x.out.push('\n');
    }
    let kernels: Vec<&Function> = m
        .functions
        .values()
        .filter(|f| f.kind == FuncKind::Kernel)
        .collect();
    if !kernels.is_empty() {
        let ids: Vec<String> = (0..kernels.len()).map(|i| format!("!{i}")).collect();
        let _ = writeln!(x.out, "\n!nvvm.annotations = !{{{}}}", ids.join(", "));
        for (i, f) in kernels.iter().enumerate() {
            let fty = if x.opaque {
                "ptr".to_string()
            } else {
                let ps: Vec<String> = f
                    .sig
                    .params
                    .iter()
                    .enumerate()
                    .map(|(i, &t)| match f.byval_param(i) {
                        Some(b) => x.byval_ty(b.size),
                        None => x.ty(t),
                    })
                    .collect();
                format!("{} ({})*", x.ret_ty(f.sig.ret), ps.join(", "))
            };
            let _ = writeln!(
                x.out,
                "!{i} = !{{{fty} {}, !\"kernel\", i32 1}}",
                global_name(&f.name)
            );
        }
    }
    if !x.loop_md.is_empty() {
        x.out.push('\n');
        x.out.push_str(&x.loop_md);
    }
    x.out
}

/// `@name`, quoted when it has characters LLVM identifiers can't.
fn global_name(n: &str) -> String {
    let plain = !n.is_empty()
        && !n.as_bytes()[0].is_ascii_digit()
        && n.bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'$' | b'.' | b'_'));
    if plain {
        format!("@{n}")
    } else {
        let mut s = String::from("@\"");
        for b in n.bytes() {
            if b == b'"' || b == b'\\' || !(0x20..0x7f).contains(&b) {
                let _ = write!(s, "\\{b:02X}");
            } else {
                s.push(b as char);
            }
        }
        s.push('"');
        s
    }
}

fn int_name(t: Type) -> &'static str {
    match t {
        Type::I1 => "i1",
        Type::I8 => "i8",
        Type::I16 => "i16",
        Type::I32 => "i32",
        Type::I64 => "i64",
        Type::F32 => "float",
        Type::F64 => "double",
        Type::Ptr(_) => "i64",
    }
}

/// Suffix of overloaded intrinsics (`i32`, `f32`, ...).
fn intr_suffix(t: Type) -> &'static str {
    match t {
        Type::F32 => "f32",
        Type::F64 => "f64",
        _ => int_name(t),
    }
}

/// A signed integer constant of `t`'s width.
fn int_lit(t: Type, imm: i64) -> String {
    if t == Type::I1 {
        return if imm & 1 != 0 { "true" } else { "false" }.into();
    }
    let bits = t.bits();
    let u = trunc_bits(i128::from(imm), bits);
    let s = if bits >= 64 {
        u as i64
    } else {
        ((u << (64 - bits)) as i64) >> (64 - bits)
    };
    s.to_string()
}

fn float_lit(t: Type, bits: u64) -> String {
    let d = if t == Type::F32 {
        f32_bits_to_f64_bits(bits as u32)
    } else {
        bits
    };
    format!("0x{d:016X}")
}

struct Exporter<'m> {
    opaque: bool,
    m: &'m Module,
    /// Intrinsic declarations by name (sorted, so output is deterministic).
    decls: RefCell<BTreeMap<String, String>>,
    out: String,
    /// `!llvm.loop` nodes, printed after the annotations.
    loop_md: String,
    /// The next free metadata number (the annotations take the first ones).
    next_md: usize,
}

/// Per-function printing state.
struct FnOut<'f> {
    f: &'f Function,
    body: String,
    tmp: u32,
}

impl FnOut<'_> {
    fn tmp(&mut self) -> String {
        self.tmp += 1;
        format!("%t{}", self.tmp)
    }
}

impl Exporter<'_> {
    fn ty(&self, t: Type) -> String {
        match t {
            Type::Ptr(a) => self.ptr_ty("i8", a),
            _ => int_name(t).to_string(),
        }
    }

    fn ret_ty(&self, t: Option<Type>) -> String {
        t.map_or_else(|| "void".to_string(), |t| self.ty(t))
    }

    /// The generic pointer type of a `byval` parameter of `size` bytes (the attribute's
    /// type is `[size x i8]`).
    fn byval_ty(&self, size: u32) -> String {
        self.ptr_ty(&format!("[{size} x i8]"), AddrSpace::Generic)
    }

    /// A pointer to `elem` in space `a` (opaque mode ignores `elem`).
    fn ptr_ty(&self, elem: &str, a: AddrSpace) -> String {
        let n = a.llvm_number();
        match (self.opaque, n) {
            (true, 0) => "ptr".into(),
            (true, n) => format!("ptr addrspace({n})"),
            (false, 0) => format!("{elem}*"),
            (false, n) => format!("{elem} addrspace({n})*"),
        }
    }

    /// A `membar` line of `scope` in `o`'s body.
    fn fence_call(&self, o: &mut FnOut, scope: MemScope) {
        let n = membar_name(scope);
        self.declare(n, "void", &[]);
        let _ = writeln!(o.body, "  call void @{n}()");
    }

    fn declare(&self, name: &str, ret: &str, params: &[&str]) {
        self.decls
            .borrow_mut()
            .entry(name.to_string())
            .or_insert_with(|| format!("declare {ret} @{name}({})", params.join(", ")));
    }

    fn global(&mut self, g: &gyre_ir::GlobalData) {
        let elem = self.ty(g.elem);
        let arr = format!("[{} x {elem}]", g.count);
        let n = g.space.llvm_number();
        let space = if n == 0 {
            String::new()
        } else {
            format!("addrspace({n}) ")
        };
        // Contents the host may write are not a `constant` for LLVM.
        let kind = if g.space == AddrSpace::Const && !g.externally_initialized {
            "constant"
        } else {
            "global"
        };
        let (linkage, ext_init) = match g.linkage {
            Linkage::Internal => ("internal ", ""),
            Linkage::Visible if g.externally_initialized => ("", "externally_initialized "),
            Linkage::Visible => ("", ""),
            Linkage::Extern => {
                let _ = writeln!(
                    self.out,
                    "{} = external {space}global {arr}, align {}",
                    global_name(&g.name),
                    g.align.max(1)
                );
                return;
            }
        };
        let init = match &g.init {
            None if g.space == AddrSpace::Shared => "undef".to_string(),
            Some(v) if v.iter().any(|&b| b != 0) => {
                let items: Vec<String> = v
                    .iter()
                    .map(|&b| {
                        let lit = match g.elem {
                            Type::F32 | Type::F64 => float_lit(g.elem, b),
                            Type::Ptr(_) if b == 0 => "null".into(),
                            Type::Ptr(_) => format!("inttoptr (i64 {} to {elem})", b as i64),
                            t => int_lit(t, b as i64),
                        };
                        format!("{elem} {lit}")
                    })
                    .collect();
                format!("[{}]", items.join(", "))
            }
            _ => "zeroinitializer".to_string(),
        };
        let _ = writeln!(
            self.out,
            "{} = {linkage}{space}{ext_init}{kind} {arr} {init}, align {}",
            global_name(&g.name),
            g.align.max(1)
        );
    }

    /// The text of value `v` as an operand (without its type).
    fn op(&self, f: &Function, v: Value) -> String {
        if let ValueDef::Result(i) = f.dfg.value_def(v) {
            let t = f.dfg.value_type(v);
            match *f.dfg.inst(i) {
                InstructionData::IntConst { imm } if t.is_int() => return int_lit(t, imm),
                InstructionData::FloatConst { bits } if t.is_float() => return float_lit(t, bits),
                InstructionData::GlobalAddr { global } if self.m.globals.is_valid(global) => {
                    let g = &self.m.globals[global];
                    let name = global_name(&g.name);
                    let gs = g.space;
                    if t != Type::Ptr(gs) {
                        // An ill-typed global_addr: fall through to a plain name.
                    } else if self.opaque {
                        return name;
                    } else {
                        let arr = format!("[{} x {}]", g.count, self.ty(g.elem));
                        return format!(
                            "bitcast ({} {name} to {})",
                            self.ptr_ty(&arr, gs),
                            self.ty(t)
                        );
                    }
                }
                _ => {}
            }
        }
        format!("%v{}", v.as_u32())
    }

    /// `T op` for value `v`.
    fn typed(&self, f: &Function, v: Value) -> String {
        format!("{} {}", self.ty(f.dfg.value_type(v)), self.op(f, v))
    }

    /// A pointer to `elem` from the i8 pointer `p` (a bitcast in typed mode).
    fn elem_ptr(&self, o: &mut FnOut, p: Value, elem: Type) -> String {
        let pt = o.f.dfg.value_type(p);
        let a = pt.addr_space().unwrap_or(AddrSpace::Generic);
        let src = self.op(o.f, p);
        if self.opaque {
            return format!("{} {src}", self.ptr_ty("", a));
        }
        let et = self.ty(elem);
        let to = self.ptr_ty(&et, a);
        let t = o.tmp();
        let _ = writeln!(o.body, "  {t} = bitcast {} {src} to {to}", self.ty(pt));
        format!("{to} {t}")
    }

    fn function(&mut self, f: &Function) {
        let Some(entry) = f.entry_block() else {
            // A body-less function: declare it.
            let ps: Vec<String> = f.sig.params.iter().map(|&t| self.ty(t)).collect();
            let _ = writeln!(
                self.out,
                "declare {} {}({})",
                self.ret_ty(f.sig.ret),
                global_name(&f.name),
                ps.join(", ")
            );
            return;
        };
        // Reachable blocks in layout order.
        let mut reach: SecondaryMap<Block, bool> = SecondaryMap::new();
        let mut stack = vec![entry];
        reach[entry] = true;
        while let Some(b) = stack.pop() {
            f.for_each_successor(b, |s| {
                if !reach[s] {
                    reach[s] = true;
                    stack.push(s);
                }
            });
        }
        let blocks: Vec<Block> = f.layout.blocks().filter(|&b| reach[b]).collect();
        // Incoming edges per block: (LLVM predecessor label, arguments).
        let mut incoming: SecondaryMap<Block, Vec<(String, Vec<Value>)>> = SecondaryMap::new();
        // Trampolines: (label, target) for split edges; per (block, edge index) marker.
        let mut split: SecondaryMap<Block, Vec<bool>> = SecondaryMap::new();
        let mut tramps: Vec<(String, Block)> = Vec::new();
        let mut entry_has_preds = false;
        for &b in &blocks {
            let Some(t) = f.terminator(b) else { continue };
            let mut dests: Vec<(Block, Vec<Value>)> = Vec::new();
            f.dfg.for_each_dest(t, |bc| {
                dests.push((bc.block, f.dfg.block_call_args(bc).to_vec()))
            });
            let mut marks = vec![false; dests.len()];
            // Per target: the number of edges, and whether they all pass the arguments of
            // the first one.
            let mut times: FxHashMap<Block, (u32, bool)> = FxHashMap::default();
            let mut first: FxHashMap<Block, usize> = FxHashMap::default();
            for (k, d) in dests.iter().enumerate() {
                let f = *first.entry(d.0).or_insert(k);
                let e = times.entry(d.0).or_insert((0, true));
                e.0 += 1;
                e.1 &= dests[f].1 == d.1;
            }
            for (k, (tb, args)) in dests.iter().enumerate() {
                if *tb == entry {
                    entry_has_preds = true;
                }
                let has_params = !f.dfg.block_params(*tb).is_empty() || *tb == entry;
                let (n, same) = times[tb];
                let dup = n > 1 && !same;
                let label = if has_params && dup {
                    marks[k] = true;
                    let l = format!("block{}.e{k}", b.as_u32());
                    tramps.push((l.clone(), *tb));
                    l
                } else {
                    format!("block{}", b.as_u32())
                };
                // One phi entry per LLVM edge: a duplicate unsplit edge repeats it.
                incoming[*tb].push((label, args.clone()));
            }
            split[b] = marks;
        }
        // Loop attributes go back on the latches' branches as `!llvm.loop`: every edge
        // into an attributed header from a block it dominates (a back edge), on the
        // trampoline when the edge is split.
        let mut latch_md: FxHashMap<Block, usize> = FxHashMap::default();
        let mut tramp_md: FxHashMap<String, usize> = FxHashMap::default();
        if !f.loop_attrs.is_empty() {
            let dom = crate::dom::Dominators::new(f, entry);
            let dominates = |h: Block, p: Block| dom.dominates(h, p);
            let mut node_of: FxHashMap<Block, usize> = FxHashMap::default();
            for &b in &blocks {
                let Some(t) = f.terminator(b) else { continue };
                let mut k = 0;
                f.dfg.for_each_dest(t, |bc| {
                    let h = bc.block;
                    if f.loop_attrs.contains_key(&h) && dominates(h, b) {
                        let id = *node_of
                            .entry(h)
                            .or_insert_with(|| self.loop_node(f.loop_attrs(h)));
                        if split[b].get(k).copied().unwrap_or(false) {
                            tramp_md.insert(format!("block{}.e{k}", b.as_u32()), id);
                        } else {
                            latch_md.entry(b).or_insert(id);
                        }
                    }
                    k += 1;
                });
            }
        }
        // Header.
        let entry_params = f.dfg.block_params(entry);
        let mut byval_casts = String::new();
        let params: Vec<String> = f
            .sig
            .params
            .iter()
            .enumerate()
            .map(|(i, &t)| {
                let name = if entry_has_preds {
                    format!("%arg{i}")
                } else {
                    match entry_params.get(i) {
                        Some(&v) => format!("%v{}", v.as_u32()),
                        None => format!("%arg{i}"),
                    }
                };
                match f.byval_param(i) {
                    // A byval pointer is generic in LLVM; the body sees it as local.
                    Some(b) => {
                        let bt = self.byval_ty(b.size);
                        let from = if self.opaque {
                            format!("{bt} {name}.byval")
                        } else {
                            // Typed pointers cast the address space of an `i8*`.
                            let _ = writeln!(
                                byval_casts,
                                "  {name}.i8 = bitcast {bt} {name}.byval to i8*"
                            );
                            format!("i8* {name}.i8")
                        };
                        let _ = writeln!(
                            byval_casts,
                            "  {name} = addrspacecast {from} to {}",
                            self.ty(t)
                        );
                        format!(
                            "{bt} byval([{} x i8]) align {} {name}.byval",
                            b.size,
                            b.align.max(1)
                        )
                    }
                    None => format!("{} {name}", self.ty(t)),
                }
            })
            .collect();
        let conv = match (f.convergent, f.must_progress) {
            (true, true) => " convergent mustprogress",
            (true, false) => " convergent",
            (false, true) => " mustprogress",
            (false, false) => "",
        };
        let inline = match f.inline {
            gyre_ir::InlineHint::Default => "",
            gyre_ir::InlineHint::Always => " alwaysinline",
            gyre_ir::InlineHint::Hint => " inlinehint",
            gyre_ir::InlineHint::Never => " noinline",
        };
        let linkage = if f.internal { "internal " } else { "" };
        let _ = writeln!(
            self.out,
            "define {linkage}{} {}({}){conv}{inline} {{",
            self.ret_ty(f.sig.ret),
            global_name(&f.name),
            params.join(", ")
        );
        let mut o = FnOut {
            f,
            body: String::new(),
            tmp: 0,
        };
        // Allocas go first in the LLVM entry block.
        let mut allocas = byval_casts;
        for (s, d) in f.slots.iter() {
            let _ = writeln!(
                allocas,
                "  %slot{} = alloca i8, i32 {}, align {}",
                s.as_u32(),
                d.size.max(1),
                d.align.max(1)
            );
        }
        if entry_has_preds {
            o.body.push_str("start:\n");
            o.body.push_str(&allocas);
            let _ = writeln!(o.body, "  br label %block{}", entry.as_u32());
        }
        for &b in &blocks {
            let _ = writeln!(o.body, "block{}:", b.as_u32());
            if b == entry && !entry_has_preds {
                o.body.push_str(&allocas);
            } else {
                let params = f.dfg.block_params(b);
                for (i, &p) in params.iter().enumerate() {
                    let t = self.ty(f.dfg.value_type(p));
                    let mut ents: Vec<String> = incoming[b]
                        .iter()
                        .map(|(l, args)| match args.get(i) {
                            Some(&a) => format!("[ {}, %{l} ]", self.op(f, a)),
                            None => format!("[ undef, %{l} ]"),
                        })
                        .collect();
                    if b == entry {
                        ents.insert(0, format!("[ %arg{i}, %start ]"));
                    }
                    let _ = writeln!(o.body, "  %v{} = phi {t} {}", p.as_u32(), ents.join(", "));
                }
            }
            for i in f.layout.block_insts(b) {
                self.inst(&mut o, i, b, &split[b]);
            }
            if let Some(id) = latch_md.get(&b) {
                // The terminator's line was the last one written.
                o.body.pop();
                let _ = writeln!(o.body, ", !llvm.loop !{id}");
            }
        }
        for (l, t) in &tramps {
            let _ = write!(o.body, "{l}:\n  br label %block{}", t.as_u32());
            match tramp_md.get(l) {
                Some(id) => {
                    let _ = writeln!(o.body, ", !llvm.loop !{id}");
                }
                None => o.body.push('\n'),
            }
        }
        self.out.push_str(&o.body);
        self.out.push_str("}\n");
    }

    /// A new `distinct !{!self, !prop, ...}` loop node for `a`; its number.
    fn loop_node(&mut self, a: LoopAttrs) -> usize {
        let id = self.next_md;
        let mut props = Vec::new();
        if a.must_progress {
            props.push("!\"llvm.loop.mustprogress\"".to_string());
        }
        match a.unroll {
            UnrollHint::Default => {}
            UnrollHint::Disable => props.push("!\"llvm.loop.unroll.disable\"".into()),
            UnrollHint::Enable => props.push("!\"llvm.loop.unroll.enable\"".into()),
            UnrollHint::Full => props.push("!\"llvm.loop.unroll.full\"".into()),
            UnrollHint::Count(n) => props.push(format!("!\"llvm.loop.unroll.count\", i32 {n}")),
        }
        let refs: Vec<String> = (0..props.len())
            .map(|j| format!("!{}", id + 1 + j))
            .collect();
        let _ = writeln!(
            self.loop_md,
            "!{id} = distinct !{{!{id}{}{}}}",
            if refs.is_empty() { "" } else { ", " },
            refs.join(", ")
        );
        for (j, p) in props.iter().enumerate() {
            let _ = writeln!(self.loop_md, "!{} = !{{{p}}}", id + 1 + j);
        }
        self.next_md = id + 1 + props.len();
        id
    }

    /// The label a branch from `from` uses for its `k`th destination.
    fn dest_label(from: Block, k: usize, target: Block, split: &[bool]) -> String {
        if split.get(k).copied().unwrap_or(false) {
            format!("%block{}.e{k}", from.as_u32())
        } else {
            format!("%block{}", target.as_u32())
        }
    }

    fn inst(&mut self, o: &mut FnOut, i: gyre_ir::Inst, b: Block, split: &[bool]) {
        let f = o.f;
        let data = f.dfg.inst(i).clone();
        let res = f.dfg.inst_result(i);
        let rt = res.map(|v| f.dfg.value_type(v));
        let lhs = res
            .map(|v| format!("%v{} = ", v.as_u32()))
            .unwrap_or_default();
        let op = |v: Value| self.op(f, v);
        let typed = |v: Value| self.typed(f, v);
        let line: String = match data {
            InstructionData::IntConst { .. } | InstructionData::FloatConst { .. } => return,
            InstructionData::GlobalAddr { .. } => {
                // Printed inline at each use; an ill-typed one still needs a definition.
                let v = res.expect("global_addr has a result");
                if self.op(f, v).starts_with("%v") {
                    format!(
                        "{lhs}bitcast {} undef to {}",
                        self.ty(rt.unwrap_or(Type::I64)),
                        self.ty(rt.unwrap_or(Type::I64))
                    )
                } else {
                    return;
                }
            }
            InstructionData::Binary {
                opcode,
                args,
                flags,
            } => {
                let t = f.dfg.value_type(args[0]);
                let name = match opcode {
                    Opcode::Iadd => "add",
                    Opcode::Isub => "sub",
                    Opcode::Imul => "mul",
                    Opcode::Sdiv => "sdiv",
                    Opcode::Udiv => "udiv",
                    Opcode::Srem => "srem",
                    Opcode::Urem => "urem",
                    Opcode::And => "and",
                    Opcode::Or => "or",
                    Opcode::Xor => "xor",
                    Opcode::Shl => "shl",
                    Opcode::Lshr => "lshr",
                    Opcode::Ashr => "ashr",
                    Opcode::Fadd => "fadd",
                    Opcode::Fsub => "fsub",
                    Opcode::Fmul => "fmul",
                    // The IR's meaning of fdiv_approx is the exact quotient, which is
                    // what LLVM's fdiv computes (the approximation is a lowering choice).
                    Opcode::Fdiv | Opcode::FdivApprox => "fdiv",
                    Opcode::Frem => "frem",
                    Opcode::Mul24 | Opcode::Umul24 => {
                        let n = if opcode == Opcode::Mul24 {
                            "llvm.nvvm.mul24.i"
                        } else {
                            "llvm.nvvm.umul24.i"
                        };
                        self.declare(n, "i32", &["i32", "i32"]);
                        let line = format!(
                            "  {lhs}call i32 @{n}({}, {})",
                            typed(args[0]),
                            typed(args[1])
                        );
                        o.body.push_str(&line);
                        o.body.push('\n');
                        return;
                    }
                    Opcode::Smin
                    | Opcode::Smax
                    | Opcode::Umin
                    | Opcode::Umax
                    | Opcode::Fmin
                    | Opcode::Fmax => {
                        let base = match opcode {
                            Opcode::Smin => "smin",
                            Opcode::Smax => "smax",
                            Opcode::Umin => "umin",
                            Opcode::Umax => "umax",
                            Opcode::Fmin => "minnum",
                            _ => "maxnum",
                        };
                        let n = format!("llvm.{base}.{}", intr_suffix(t));
                        let ts = self.ty(t);
                        self.declare(&n, &ts, &[&ts, &ts]);
                        let line = format!(
                            "  {lhs}call {ts} @{n}({}, {})",
                            typed(args[0]),
                            typed(args[1])
                        );
                        o.body.push_str(&line);
                        o.body.push('\n');
                        return;
                    }
                    _ => "add",
                };
                let mut fl = String::new();
                for n in flags.names() {
                    fl.push_str(n);
                    fl.push(' ');
                }
                format!(
                    "{lhs}{name} {fl}{} {}, {}",
                    self.ty(t),
                    op(args[0]),
                    op(args[1])
                )
            }
            InstructionData::Unary { opcode, arg } => {
                let at = f.dfg.value_type(arg);
                let rt = rt.unwrap_or(at);
                let cast = |name: &str| format!("{lhs}{name} {} to {}", typed(arg), self.ty(rt));
                match opcode {
                    Opcode::Fneg => format!("{lhs}fneg {}", typed(arg)),
                    Opcode::Freeze => format!("{lhs}freeze {}", typed(arg)),
                    Opcode::Popcnt
                    | Opcode::Clz
                    | Opcode::Ctz
                    | Opcode::Fabs
                    | Opcode::Sqrt
                    | Opcode::Floor
                    | Opcode::Ceil
                    | Opcode::Ftrunc
                    | Opcode::Nearest => {
                        let (base, zero_flag) = match opcode {
                            Opcode::Popcnt => ("ctpop", false),
                            Opcode::Clz => ("ctlz", true),
                            Opcode::Ctz => ("cttz", true),
                            Opcode::Fabs => ("fabs", false),
                            Opcode::Sqrt => ("sqrt", false),
                            Opcode::Floor => ("floor", false),
                            Opcode::Ceil => ("ceil", false),
                            Opcode::Ftrunc => ("trunc", false),
                            _ => ("rint", false),
                        };
                        let n = format!("llvm.{base}.{}", intr_suffix(at));
                        let ts = self.ty(at);
                        if zero_flag {
                            self.declare(&n, &ts, &[&ts, "i1"]);
                            format!("{lhs}call {ts} @{n}({}, i1 false)", typed(arg))
                        } else {
                            self.declare(&n, &ts, &[&ts]);
                            format!("{lhs}call {ts} @{n}({})", typed(arg))
                        }
                    }
                    Opcode::Ex2Approx
                    | Opcode::Lg2Approx
                    | Opcode::SinApprox
                    | Opcode::CosApprox
                    | Opcode::RsqrtApprox => {
                        // NVVM's intrinsics for the same PTX instructions.
                        let (n, ts) = match (opcode, at == Type::F64) {
                            (Opcode::Ex2Approx, _) => ("llvm.nvvm.ex2.approx.f", "float"),
                            (Opcode::Lg2Approx, _) => ("llvm.nvvm.lg2.approx.f", "float"),
                            (Opcode::SinApprox, _) => ("llvm.nvvm.sin.approx.f", "float"),
                            (Opcode::CosApprox, _) => ("llvm.nvvm.cos.approx.f", "float"),
                            (_, false) => ("llvm.nvvm.rsqrt.approx.f", "float"),
                            (_, true) => ("llvm.nvvm.rsqrt.approx.d", "double"),
                        };
                        self.declare(n, ts, &[ts]);
                        format!("{lhs}call {ts} @{n}({})", typed(arg))
                    }
                    Opcode::Sext => cast("sext"),
                    Opcode::Zext => cast("zext"),
                    Opcode::Trunc => cast("trunc"),
                    Opcode::Fptosi => cast("fptosi"),
                    Opcode::Fptoui => cast("fptoui"),
                    Opcode::Sitofp => cast("sitofp"),
                    Opcode::Uitofp => cast("uitofp"),
                    Opcode::Fpext => cast("fpext"),
                    Opcode::Fptrunc => cast("fptrunc"),
                    Opcode::Ptrtoint => cast("ptrtoint"),
                    Opcode::Inttoptr => cast("inttoptr"),
                    Opcode::AddrspaceCast => {
                        if at == rt {
                            format!("{lhs}getelementptr i8, {}, i64 0", typed(arg))
                        } else {
                            cast("addrspacecast")
                        }
                    }
                    Opcode::Bitcast => match (at.is_ptr(), rt.is_ptr()) {
                        (false, false) => cast("bitcast"),
                        (true, false) if rt == Type::I64 => cast("ptrtoint"),
                        (false, true) if at == Type::I64 => cast("inttoptr"),
                        (true, true) if at == rt => {
                            format!("{lhs}getelementptr i8, {}, i64 0", typed(arg))
                        }
                        (true, true) => {
                            let t = o.tmp();
                            let _ = writeln!(o.body, "  {t} = ptrtoint {} to i64", typed(arg));
                            format!("{lhs}inttoptr i64 {t} to {}", self.ty(rt))
                        }
                        (true, false) => {
                            let t = o.tmp();
                            let _ = writeln!(o.body, "  {t} = ptrtoint {} to i64", typed(arg));
                            format!("{lhs}bitcast i64 {t} to {}", self.ty(rt))
                        }
                        (false, true) => {
                            let t = o.tmp();
                            let _ = writeln!(o.body, "  {t} = bitcast {} to i64", typed(arg));
                            format!("{lhs}inttoptr i64 {t} to {}", self.ty(rt))
                        }
                    },
                    _ => format!("{lhs}freeze {}", typed(arg)),
                }
            }
            InstructionData::Ternary { opcode, args } => match opcode {
                Opcode::Select => format!(
                    "{lhs}select {}, {}, {}",
                    typed(args[0]),
                    typed(args[1]),
                    typed(args[2])
                ),
                _ => {
                    let t = f.dfg.value_type(args[0]);
                    let n = format!("llvm.fma.{}", intr_suffix(t));
                    let ts = self.ty(t);
                    self.declare(&n, &ts, &[&ts, &ts, &ts]);
                    format!(
                        "{lhs}call {ts} @{n}({}, {}, {})",
                        typed(args[0]),
                        typed(args[1]),
                        typed(args[2])
                    )
                }
            },
            InstructionData::IntCompare { cond, args } => {
                format!(
                    "{lhs}icmp {} {}, {}",
                    cond.name(),
                    typed(args[0]),
                    op(args[1])
                )
            }
            InstructionData::FloatCompare { cond, args } => {
                format!(
                    "{lhs}fcmp {} {}, {}",
                    cond.name(),
                    typed(args[0]),
                    op(args[1])
                )
            }
            InstructionData::PtrAdd { args, scale } => {
                let it = f.dfg.value_type(args[1]);
                let off = match f.dfg.value_def(args[1]) {
                    ValueDef::Result(ci) => match *f.dfg.inst(ci) {
                        InstructionData::IntConst { imm } if it.is_int() => {
                            let sv = int_lit(it, imm).parse::<i64>().unwrap_or(0);
                            let sv = if it == Type::I1 { -(imm & 1) } else { sv };
                            Some(sv.wrapping_mul(i64::from(scale)).to_string())
                        }
                        _ => None,
                    },
                    _ => None,
                };
                // A variable index scaled by an integer type's size: a GEP over that type
                // with the index as it is (LLVM sign-extends GEP indices, as `ptradd`
                // does), which imports back as one `ptradd`. A byte GEP of `sext` and
                // `mul` imports as three instructions: a kernel full of `ptradd`s in loops
                // then ran a fifth more steps after the round trip and went over the
                // fuzz targets' step limit.
                let elem = if matches!(it, Type::I8 | Type::I16 | Type::I32 | Type::I64) {
                    match scale {
                        1 => Some("i8"),
                        2 => Some("i16"),
                        4 => Some("i32"),
                        8 => Some("i64"),
                        _ => None,
                    }
                } else {
                    None
                };
                if let (None, Some(e)) = (&off, elem) {
                    let pt = f.dfg.value_type(args[0]);
                    let a = pt.addr_space().unwrap_or(AddrSpace::Generic);
                    if self.opaque {
                        format!(
                            "{lhs}getelementptr {e}, {}, {}",
                            typed(args[0]),
                            typed(args[1])
                        )
                    } else {
                        let to = self.ptr_ty(e, a);
                        let t = o.tmp();
                        let _ = writeln!(o.body, "  {t} = bitcast {} to {to}", typed(args[0]));
                        let g = o.tmp();
                        let _ = writeln!(
                            o.body,
                            "  {g} = getelementptr {e}, {to} {t}, {}",
                            typed(args[1])
                        );
                        format!("{lhs}bitcast {to} {g} to {}", self.ty(pt))
                    }
                } else {
                    let off = match off {
                        Some(s) => s,
                        None => {
                            let mut idx = op(args[1]);
                            if it != Type::I64 {
                                let t = o.tmp();
                                let _ = writeln!(o.body, "  {t} = sext {} to i64", typed(args[1]));
                                idx = t;
                            }
                            if scale != 1 {
                                let t = o.tmp();
                                let _ = writeln!(o.body, "  {t} = mul i64 {idx}, {scale}");
                                idx = t;
                            }
                            idx
                        }
                    };
                    format!("{lhs}getelementptr i8, {}, i64 {off}", typed(args[0]))
                }
            }
            InstructionData::Load { ptr, flags } => {
                let t = rt.unwrap_or(Type::I32);
                let p = self.elem_ptr(o, ptr, t);
                let vol = if flags.volatile { "volatile " } else { "" };
                format!("{lhs}load {vol}{}, {p}, align {}", self.ty(t), t.bytes())
            }
            InstructionData::Store { args, flags } => {
                let t = f.dfg.value_type(args[0]);
                let p = self.elem_ptr(o, args[1], t);
                let vol = if flags.volatile { "volatile " } else { "" };
                format!("store {vol}{}, {p}, align {}", typed(args[0]), t.bytes())
            }
            InstructionData::AtomicRmw {
                op: aop @ (AtomicOp::Inc | AtomicOp::Dec),
                args,
                order,
                scope,
            } => {
                // LLVM 14 has no wrapping inc/dec atomicrmw: the NVVM intrinsics (relaxed),
                // between fences for a stronger order.
                let p = self.elem_ptr(o, args[0], Type::I32);
                let a = f
                    .dfg
                    .value_type(args[0])
                    .addr_space()
                    .unwrap_or(AddrSpace::Generic)
                    .llvm_number();
                let pm = if self.opaque {
                    format!("p{a}")
                } else {
                    format!("p{a}i32")
                };
                let opn = if aop == AtomicOp::Inc { "inc" } else { "dec" };
                let n = match scope {
                    MemScope::Gpu => format!("llvm.nvvm.atomic.load.{opn}.32.{pm}"),
                    s => format!("llvm.nvvm.atomic.{opn}.gen.i.{}.i32.{pm}", scope_name(s)),
                };
                let pty = p.rsplit_once(' ').map_or("", |x| x.0).to_string();
                self.declare(&n, "i32", &[&pty, "i32"]);
                if order.releases() {
                    self.fence_call(o, scope);
                }
                let call = format!("call i32 @{n}({p}, {})", typed(args[1]));
                if order.acquires() {
                    let tmp = o.tmp();
                    let _ = writeln!(o.body, "  {tmp} = {call}");
                    self.fence_call(o, scope);
                    format!("{lhs}add i32 {tmp}, 0")
                } else {
                    format!("{lhs}{call}")
                }
            }
            InstructionData::AtomicRmw {
                op: aop,
                args,
                order,
                scope,
            } => {
                let ord = llvm_order(order, scope);
                let t = f.dfg.value_type(args[1]);
                // Pointers are exchanged as i64.
                let (vt, val) = if t.is_ptr() {
                    let tmp = o.tmp();
                    let _ = writeln!(o.body, "  {tmp} = ptrtoint {} to i64", typed(args[1]));
                    (Type::I64, tmp)
                } else {
                    (t, op(args[1]))
                };
                let p = self.elem_ptr(o, args[0], vt);
                let name = match aop {
                    AtomicOp::Add if vt.is_float() => "fadd",
                    AtomicOp::Add => "add",
                    AtomicOp::And => "and",
                    AtomicOp::Or => "or",
                    AtomicOp::Xor => "xor",
                    AtomicOp::Smin => "min",
                    AtomicOp::Smax => "max",
                    AtomicOp::Umin => "umin",
                    AtomicOp::Umax => "umax",
                    AtomicOp::Exch => "xchg",
                    AtomicOp::Inc | AtomicOp::Dec => unreachable!("exported above"),
                };
                if t.is_ptr() {
                    let tmp = o.tmp();
                    let _ = writeln!(o.body, "  {tmp} = atomicrmw {name} {p}, i64 {val} {ord}");
                    format!("{lhs}inttoptr i64 {tmp} to {}", self.ty(t))
                } else {
                    format!("{lhs}atomicrmw {name} {p}, {} {val} {ord}", self.ty(vt))
                }
            }
            InstructionData::AtomicCas { args, order, scope } => {
                let ord = llvm_order(order, scope);
                // The failure order may not release.
                let ford = llvm_order(
                    match order {
                        MemOrder::Release => MemOrder::Relaxed,
                        MemOrder::AcqRel => MemOrder::Acquire,
                        o => o,
                    },
                    scope,
                );
                let ford = ford.rsplit(' ').next().unwrap_or("monotonic");
                let t = f.dfg.value_type(args[1]);
                let it = match t {
                    Type::F32 => Type::I32,
                    Type::F64 | Type::Ptr(_) => Type::I64,
                    t => t,
                };
                let conv = |o: &mut FnOut, v: Value| -> String {
                    if it == t {
                        return op(v);
                    }
                    let tmp = o.tmp();
                    let c = if t.is_ptr() { "ptrtoint" } else { "bitcast" };
                    let _ = writeln!(o.body, "  {tmp} = {c} {} to {}", typed(v), self.ty(it));
                    tmp
                };
                let e = conv(o, args[1]);
                let n = conv(o, args[2]);
                let p = self.elem_ptr(o, args[0], it);
                let its = self.ty(it);
                let pair = o.tmp();
                let _ = writeln!(
                    o.body,
                    "  {pair} = cmpxchg {p}, {its} {e}, {its} {n} {ord} {ford}"
                );
                if it == t {
                    format!("{lhs}extractvalue {{ {its}, i1 }} {pair}, 0")
                } else {
                    let old = o.tmp();
                    let _ = writeln!(o.body, "  {old} = extractvalue {{ {its}, i1 }} {pair}, 0");
                    let c = if t.is_ptr() { "inttoptr" } else { "bitcast" };
                    format!("{lhs}{c} {its} {old} to {}", self.ty(t))
                }
            }
            InstructionData::SlotAddr { slot } => {
                let t = rt.unwrap_or(Type::Ptr(AddrSpace::Local));
                let src = format!(
                    "{} %slot{}",
                    self.ptr_ty("i8", AddrSpace::Generic),
                    slot.as_u32()
                );
                if t == Type::Ptr(AddrSpace::Generic) {
                    format!("{lhs}getelementptr i8, {src}, i64 0")
                } else {
                    format!("{lhs}addrspacecast {src} to {}", self.ty(t))
                }
            }
            InstructionData::Sreg { reg } => {
                let n = format!("llvm.nvvm.read.ptx.sreg.{}", reg.name());
                self.declare(&n, "i32", &[]);
                format!("{lhs}call i32 @{n}()")
            }
            InstructionData::Shfl { mode, args } => {
                let t = f.dfg.value_type(args[0]);
                let ts = self.ty(t);
                let n = format!("llvm.nvvm.shfl.sync.{}.{}", mode.name(), intr_suffix(t));
                self.declare(&n, &ts, &["i32", &ts, "i32", "i32"]);
                format!(
                    "{lhs}call {ts} @{n}({}, {}, {}, {})",
                    typed(args[3]),
                    typed(args[0]),
                    typed(args[1]),
                    typed(args[2])
                )
            }
            InstructionData::Vote { mode, args } => {
                let rt = if mode == VoteMode::Ballot {
                    "i32"
                } else {
                    "i1"
                };
                let n = format!("llvm.nvvm.vote.{}.sync", mode.name());
                self.declare(&n, rt, &["i32", "i1"]);
                format!(
                    "{lhs}call {rt} @{n}({}, {})",
                    typed(args[1]),
                    typed(args[0])
                )
            }
            InstructionData::WarpSync { mask } => {
                self.declare("llvm.nvvm.bar.warp.sync", "void", &["i32"]);
                format!("call void @llvm.nvvm.bar.warp.sync({})", typed(mask))
            }
            InstructionData::Vprintf { args } => {
                let gp = self.ty(Type::Ptr(gyre_ir::AddrSpace::Generic));
                self.declare("vprintf", "i32", &[&gp, &gp]);
                format!(
                    "{lhs}call i32 @vprintf({}, {})",
                    typed(args[0]),
                    typed(args[1])
                )
            }
            InstructionData::AssertFail { args } => {
                let gp = self.ty(Type::Ptr(gyre_ir::AddrSpace::Generic));
                self.declare("__assertfail", "void", &[&gp, &gp, "i32", &gp, "i64"]);
                format!(
                    "call void @__assertfail({}, {}, {}, {}, i64 1)",
                    typed(args[0]),
                    typed(args[1]),
                    typed(args[2]),
                    typed(args[3])
                )
            }
            InstructionData::Fence { scope, .. } => {
                // LLVM 14's NVPTX back end selects no `fence`; `membar` is `fence.sc`,
                // at least as strong as either order a Gyre fence has.
                let n = membar_name(scope);
                self.declare(n, "void", &[]);
                format!("call void @{n}()")
            }
            InstructionData::Nullary { opcode } => match opcode {
                Opcode::Barrier => {
                    self.declare("llvm.nvvm.barrier0", "void", &[]);
                    "call void @llvm.nvvm.barrier0()".into()
                }
                Opcode::Clock => {
                    let (n, t) = if rt == Some(Type::I64) {
                        ("llvm.nvvm.read.ptx.sreg.clock64", "i64")
                    } else {
                        ("llvm.nvvm.read.ptx.sreg.clock", "i32")
                    };
                    self.declare(n, t, &[]);
                    format!("{lhs}call {t} @{n}()")
                }
                _ => "unreachable".into(),
            },
            InstructionData::Call { func, args } => {
                let args: Vec<String> = args
                    .as_slice(&f.dfg.value_lists)
                    .iter()
                    .map(|&a| typed(a))
                    .collect();
                let (name, ret) = match self.m.functions.get(func) {
                    Some(cf) => (global_name(&cf.name), cf.sig.ret),
                    None => (format!("@fn{}", func.as_u32()), rt),
                };
                format!("{lhs}call {} {name}({})", self.ret_ty(ret), args.join(", "))
            }
            InstructionData::Jump { dest } => {
                format!("br label {}", Self::dest_label(b, 0, dest.block, split))
            }
            InstructionData::Brif { arg, blocks } => format!(
                "br {}, label {}, label {}",
                typed(arg),
                Self::dest_label(b, 0, blocks[0].block, split),
                Self::dest_label(b, 1, blocks[1].block, split)
            ),
            InstructionData::BrTable { arg, table } => {
                let jt = f.dfg.jump_table(table);
                let t = f.dfg.value_type(arg);
                let mut s = format!(
                    "switch {}, label {} [",
                    typed(arg),
                    Self::dest_label(b, 0, jt.default.block, split)
                );
                for (k, (val, bc)) in jt.cases.iter().enumerate() {
                    let _ = write!(
                        s,
                        "\n    {} {}, label {}",
                        self.ty(t),
                        int_lit(t, *val),
                        Self::dest_label(b, k + 1, bc.block, split)
                    );
                }
                s.push_str("\n  ]");
                s
            }
            InstructionData::Return { args } => match args.as_slice(&f.dfg.value_lists).first() {
                Some(&v) => format!("ret {}", typed(v)),
                None => "ret void".into(),
            },
        };
        o.body.push_str("  ");
        o.body.push_str(&line);
        o.body.push('\n');
    }
}

/// LLVM's spelling of an atomic order with its sync scope (LLVM's default scope is the
/// system; the GPU and CTA scopes are the `device` and `block` of later LLVM versions).
fn llvm_order(order: MemOrder, scope: MemScope) -> String {
    let o = match order {
        MemOrder::Relaxed => "monotonic",
        MemOrder::Acquire => "acquire",
        MemOrder::Release => "release",
        MemOrder::AcqRel => "acq_rel",
        MemOrder::SeqCst => "seq_cst",
    };
    match scope {
        MemScope::Sys => o.to_string(),
        MemScope::Gpu => format!("syncscope(\"device\") {o}"),
        MemScope::Cta => format!("syncscope(\"block\") {o}"),
    }
}

/// The NVVM intrinsic name part of a scope (`atomic.<op>.gen.i.<scope>`).
fn scope_name(scope: MemScope) -> &'static str {
    match scope {
        MemScope::Cta => "cta",
        MemScope::Gpu => "gpu",
        MemScope::Sys => "sys",
    }
}

/// The `membar` intrinsic of a scope.
fn membar_name(scope: MemScope) -> &'static str {
    match scope {
        MemScope::Cta => "llvm.nvvm.membar.cta",
        MemScope::Gpu => "llvm.nvvm.membar.gl",
        MemScope::Sys => "llvm.nvvm.membar.sys",
    }
}
