//! Printing functions and modules in the `.gir` text format (grammar: docs/ir.md).
//!
//! The output is canonical: [`parse_module`](crate::parser::parse_module) reads it back to
//! the same entities (values, blocks and slots keep their numbers) and printing that
//! again gives the same text. Globals come first, then functions separated by blank
//! lines; block labels start at column 0, slot declarations and instructions are
//! indented four spaces.

use crate::dfg::ValueDef;
use crate::entities::{Inst, Value};
use crate::function::{FuncKind, Function};
use crate::instructions::{BlockCall, InstructionData, MemOrder, MemScope, Opcode};
use crate::module::{GlobalData, Linkage, Module};
use crate::parser::lexer::is_name_byte;
use crate::types::Type;
use core::fmt::{self, Write};
use cranelift_entity::SecondaryMap;

/// Write a module: globals, then functions separated by blank lines.
pub fn write_module(w: &mut dyn Write, module: &Module) -> fmt::Result {
    for g in module.globals.values() {
        write_global(w, g)?;
    }
    for (i, f) in module.functions.values().enumerate() {
        if i > 0 || !module.globals.is_empty() {
            writeln!(w)?;
        }
        write_function(w, f, Some(module))?;
    }
    Ok(())
}

/// Write one function. `module` supplies callee and global names; without it (or for
/// ids it does not have) they print as `@fnN` and `@gvN`.
pub fn write_function(w: &mut dyn Write, func: &Function, module: Option<&Module>) -> fmt::Result {
    let kind = match func.kind {
        FuncKind::Kernel => "kernel",
        FuncKind::Device => "func",
    };
    write!(w, "{kind} ")?;
    write_name(w, &func.name)?;
    w.write_char('(')?;
    for (i, t) in func.sig.params.iter().enumerate() {
        if i > 0 {
            w.write_str(", ")?;
        }
        write!(w, "{t}")?;
        if let Some(b) = func.byval_param(i) {
            write!(w, " byval({}, align {})", b.size, b.align)?;
        }
    }
    w.write_char(')')?;
    if let Some(r) = func.sig.ret {
        write!(w, " -> {r}")?;
    }
    if func.convergent {
        w.write_str(" convergent")?;
    }
    if func.must_progress {
        w.write_str(" mustprogress")?;
    }
    if func.any_nan {
        w.write_str(" anynan")?;
    }
    if func.internal {
        w.write_str(" internal")?;
    }
    match func.inline {
        crate::InlineHint::Default => {}
        crate::InlineHint::Always => w.write_str(" alwaysinline")?,
        crate::InlineHint::Hint => w.write_str(" inlinehint")?,
        crate::InlineHint::Never => w.write_str(" noinline")?,
    }
    w.write_str(" {\n")?;
    let untyped = results_needing_type(func);
    for (slot, d) in func.slots.iter() {
        writeln!(w, "    {slot} = local {} align {}", d.size, d.align)?;
    }
    for block in func.layout.blocks() {
        write!(w, "{block}")?;
        let params = func.dfg.block_params(block);
        if !params.is_empty() {
            w.write_char('(')?;
            for (i, &p) in params.iter().enumerate() {
                if i > 0 {
                    w.write_str(", ")?;
                }
                write!(w, "{p}: {}", func.dfg.value_type(p))?;
            }
            w.write_char(')')?;
        }
        write_loop_attrs(w, func.loop_attrs(block))?;
        w.write_str(":\n")?;
        for inst in func.layout.block_insts(block) {
            w.write_str("    ")?;
            let spell = untyped.as_ref().is_some_and(|t| {
                func.dfg
                    .inst_result(inst)
                    .is_some_and(|r| !t[r] && !func.dfg.inst(inst).type_operands().is_empty())
            });
            write_inst_spelled(w, func, module, inst, spell)?;
            w.write_char('\n')?;
        }
    }
    w.write_str("}\n")
}

/// Which results the parser could not type from their operands: `None` when all can
/// (always, in code whose definitions dominate their uses); otherwise `Some(typed)`, and
/// an operand-typed result `r` with `!typed[r]` must have its type written. Such a result
/// is in (or hangs off) a cycle of operand-typed instructions, as `v1 = iadd v2, v2` and
/// `v2 = ineg v1` in an unreachable block, where dominance is not required.
fn results_needing_type(func: &Function) -> Option<SecondaryMap<Value, bool>> {
    let dfg = &func.dfg;
    let mut typed: SecondaryMap<Value, bool> = SecondaryMap::new();
    let anchored = |typed: &SecondaryMap<Value, bool>, a: Value| match dfg.value_def(a) {
        ValueDef::Result(i) => typed[a] || dfg.inst(i).type_operands().is_empty(),
        _ => true,
    };
    // One pass in layout order settles every result whose operands come first.
    let mut pending = false;
    for block in func.layout.blocks() {
        for inst in func.layout.block_insts(block) {
            let Some(r) = dfg.inst_result(inst) else {
                continue;
            };
            let ops = dfg.inst(inst).type_operands();
            if ops.is_empty() {
                continue;
            }
            if ops.iter().any(|&a| anchored(&typed, a)) {
                typed[r] = true;
            } else {
                pending = true;
            }
        }
    }
    if !pending {
        return None;
    }
    // The rest: propagate from typed operands along (operand, user) edges.
    let mut edges: Vec<(Value, Value)> = Vec::new();
    let mut queue: Vec<Value> = Vec::new();
    for block in func.layout.blocks() {
        for inst in func.layout.block_insts(block) {
            let Some(r) = dfg.inst_result(inst) else {
                continue;
            };
            let ops = dfg.inst(inst).type_operands();
            if ops.is_empty() || typed[r] {
                continue;
            }
            if ops.iter().any(|&a| anchored(&typed, a)) {
                typed[r] = true;
                queue.push(r);
            } else {
                edges.extend(ops.iter().map(|&a| (a, r)));
            }
        }
    }
    edges.sort_unstable();
    while let Some(x) = queue.pop() {
        let from = edges.partition_point(|e| e.0 < x);
        for &(a, u) in &edges[from..] {
            if a != x {
                break;
            }
            if !typed[u] {
                typed[u] = true;
                queue.push(u);
            }
        }
    }
    Some(typed)
}

/// Write a loop header's attributes, ` loop(mustprogress, unroll_count=4)`, or nothing.
fn write_loop_attrs(w: &mut dyn Write, a: crate::LoopAttrs) -> fmt::Result {
    if a.is_empty() {
        return Ok(());
    }
    w.write_str(" loop(")?;
    let mut sep = "";
    if a.must_progress {
        w.write_str("mustprogress")?;
        sep = ", ";
    }
    match a.unroll {
        crate::UnrollHint::Default => {}
        crate::UnrollHint::Disable => write!(w, "{sep}unroll_disable")?,
        crate::UnrollHint::Enable => write!(w, "{sep}unroll_enable")?,
        crate::UnrollHint::Full => write!(w, "{sep}unroll_full")?,
        crate::UnrollHint::Count(n) => write!(w, "{sep}unroll_count={n}")?,
    }
    w.write_char(')')
}

/// Write one instruction (no indentation, no newline), e.g. `v3 = iadd nsw v1, v2`.
pub fn write_inst(
    w: &mut dyn Write,
    func: &Function,
    module: Option<&Module>,
    inst: Inst,
) -> fmt::Result {
    write_inst_spelled(w, func, module, inst, false)
}

/// [`write_inst`], with the result type written (`iadd.i32`) also where the text format
/// leaves it to inference when `spell` holds.
fn write_inst_spelled(
    w: &mut dyn Write,
    func: &Function,
    module: Option<&Module>,
    inst: Inst,
    spell: bool,
) -> fmt::Result {
    use InstructionData as D;
    let dfg = &func.dfg;
    let result = dfg.inst_result(inst);
    let rty = result.map(|r| dfg.value_type(r));
    if let Some(r) = result {
        write!(w, "{r} = ")?;
    }
    let data = dfg.inst(inst);
    let suffix = |w: &mut dyn Write| match rty {
        Some(t) => write!(w, ".{t}"),
        None => Ok(()),
    };
    // The optional suffix of an operand-typed instruction.
    let spelled = |w: &mut dyn Write| if spell { suffix(w) } else { Ok(()) };
    let pool = &dfg.value_lists;
    let list = |w: &mut dyn Write, vals: &[crate::Value]| {
        for (i, v) in vals.iter().enumerate() {
            if i > 0 {
                w.write_str(", ")?;
            }
            write!(w, "{v}")?;
        }
        Ok(())
    };
    let block_call = |w: &mut dyn Write, bc: &BlockCall| {
        write!(w, "{}", bc.block)?;
        let args = bc.args.as_slice(pool);
        if !args.is_empty() {
            w.write_char('(')?;
            list(w, args)?;
            w.write_char(')')?;
        }
        Ok(())
    };
    match data {
        D::IntConst { imm } => {
            w.write_str("iconst")?;
            suffix(w)?;
            write!(w, " {imm}")
        }
        D::FloatConst { bits } => {
            w.write_str("fconst")?;
            suffix(w)?;
            w.write_char(' ')?;
            write_float(w, *bits, rty == Some(Type::F32))
        }
        D::Unary { opcode, arg } => {
            w.write_str(opcode.name())?;
            if opcode.is_cast() {
                suffix(w)?;
            } else {
                spelled(w)?;
            }
            write!(w, " {arg}")
        }
        D::Binary {
            opcode,
            args,
            flags,
        } => {
            w.write_str(opcode.name())?;
            spelled(w)?;
            for f in flags.names() {
                write!(w, " {f}")?;
            }
            write!(w, " {}, {}", args[0], args[1])
        }
        D::Ternary { opcode, args } => {
            w.write_str(opcode.name())?;
            spelled(w)?;
            write!(w, " {}, {}, {}", args[0], args[1], args[2])
        }
        D::IntCompare { cond, args } => write!(w, "icmp {cond} {}, {}", args[0], args[1]),
        D::FloatCompare { cond, args } => write!(w, "fcmp {cond} {}, {}", args[0], args[1]),
        D::PtrAdd { args, scale } => {
            w.write_str("ptradd")?;
            spelled(w)?;
            write!(w, " {}, {}, {scale}", args[0], args[1])
        }
        D::Load { ptr, flags } => {
            w.write_str("load")?;
            suffix(w)?;
            if flags.volatile {
                w.write_str(" volatile")?;
            }
            write!(w, " {ptr}")
        }
        D::Store { args, flags } => {
            w.write_str("store")?;
            if flags.volatile {
                w.write_str(" volatile")?;
            }
            write!(w, " {}, {}", args[0], args[1])
        }
        D::AtomicRmw {
            op,
            args,
            order,
            scope,
        } => {
            write!(w, "atomic_{op}")?;
            spelled(w)?;
            order_scope(w, *order, *scope)?;
            write!(w, " {}, {}", args[0], args[1])
        }
        D::AtomicCas { args, order, scope } => {
            w.write_str("atomic_cas")?;
            spelled(w)?;
            order_scope(w, *order, *scope)?;
            write!(w, " {}, {}, {}", args[0], args[1], args[2])
        }
        D::Shfl { mode, args } => {
            write!(w, "shfl_{mode}")?;
            spelled(w)?;
            write!(w, " {}, {}, {}, {}", args[0], args[1], args[2], args[3])
        }
        D::Vote { mode, args } => write!(w, "vote_{mode} {}, {}", args[0], args[1]),
        D::WarpSync { mask } => write!(w, "warp_sync {mask}"),
        D::Vprintf { args } => write!(w, "vprintf {}, {}", args[0], args[1]),
        D::AssertFail { args } => write!(
            w,
            "assert_fail {}, {}, {}, {}",
            args[0], args[1], args[2], args[3]
        ),
        D::Fence { order, scope } => write!(w, "fence {order} {scope}"),
        D::Nullary {
            opcode: Opcode::Clock,
        } => {
            w.write_str("clock")?;
            suffix(w)
        }
        D::GlobalAddr { global } => {
            w.write_str("global_addr ")?;
            match module.and_then(|m| m.globals.get(*global)) {
                Some(g) => write_name(w, &g.name),
                None => write!(w, "@{global}"),
            }
        }
        D::SlotAddr { slot } => write!(w, "slot_addr {slot}"),
        D::Sreg { reg } => w.write_str(reg.name()),
        D::Nullary { opcode } => w.write_str(opcode.name()),
        D::Call { func: callee, args } => {
            w.write_str("call ")?;
            match module.and_then(|m| m.functions.get(*callee)) {
                Some(f) => write_name(w, &f.name)?,
                None => write!(w, "@{callee}")?,
            }
            w.write_char('(')?;
            list(w, args.as_slice(pool))?;
            w.write_char(')')
        }
        D::Jump { dest } => {
            w.write_str("jump ")?;
            block_call(w, dest)
        }
        D::Brif { arg, blocks } => {
            write!(w, "brif {arg}, ")?;
            block_call(w, &blocks[0])?;
            w.write_str(", ")?;
            block_call(w, &blocks[1])
        }
        D::BrTable { arg, table } => {
            let jt = dfg.jump_table(*table);
            write!(w, "br_table {arg}, ")?;
            block_call(w, &jt.default)?;
            w.write_str(", [")?;
            for (i, (k, bc)) in jt.cases.iter().enumerate() {
                if i > 0 {
                    w.write_str(", ")?;
                }
                write!(w, "{k}: ")?;
                block_call(w, bc)?;
            }
            w.write_char(']')
        }
        D::Return { args } => {
            w.write_str(Opcode::Return.name())?;
            let args = args.as_slice(pool);
            if !args.is_empty() {
                w.write_char(' ')?;
                list(w, args)?;
            }
            Ok(())
        }
    }
}

/// Write a float literal: shortest round-trip decimal (always with `.` or an exponent),
/// `inf`/`-inf`, or the raw bits in hex for NaNs (an f32's in the low 32 bits).
pub fn write_float(w: &mut dyn Write, bits: u64, is_f32: bool) -> fmt::Result {
    if is_f32 {
        let b = bits as u32;
        let f = f32::from_bits(b);
        if f.is_nan() {
            write!(w, "{b:#x}")
        } else if f.is_infinite() {
            w.write_str(if f > 0.0 { "inf" } else { "-inf" })
        } else {
            // `Debug` is the shortest round-trip form and always has `.` or `e`.
            write!(w, "{f:?}")
        }
    } else {
        let f = f64::from_bits(bits);
        if f.is_nan() {
            write!(w, "{bits:#x}")
        } else if f.is_infinite() {
            w.write_str(if f > 0.0 { "inf" } else { "-inf" })
        } else {
            write!(w, "{f:?}")
        }
    }
}

/// Write `@name`, quoting names that are not plain (`@"a b"`, with `\\`, `\"` and `\HH`
/// for control characters).
fn write_name(w: &mut dyn Write, name: &str) -> fmt::Result {
    if !name.is_empty() && name.bytes().all(is_name_byte) {
        return write!(w, "@{name}");
    }
    w.write_str("@\"")?;
    for c in name.chars() {
        match c {
            '"' => w.write_str("\\\"")?,
            '\\' => w.write_str("\\\\")?,
            c if (c as u32) < 0x20 || c as u32 == 0x7f => write!(w, "\\{:02x}", c as u32)?,
            c => w.write_char(c)?,
        }
    }
    w.write_char('"')
}

/// Write a global declaration line.
fn write_global(w: &mut dyn Write, g: &GlobalData) -> fmt::Result {
    w.write_str("global ")?;
    write_name(w, &g.name)?;
    write!(
        w,
        ": {} [{} x {}] align {}",
        g.space, g.count, g.elem, g.align
    )?;
    if g.linkage != Linkage::Internal {
        write!(w, " {}", g.linkage.name())?;
    }
    if g.externally_initialized {
        w.write_str(" externally_initialized")?;
    }
    if let Some(init) = &g.init {
        w.write_str(" = [")?;
        for (i, &bits) in init.iter().enumerate() {
            if i > 0 {
                w.write_str(", ")?;
            }
            write_init_elem(w, g.elem, bits)?;
        }
        w.write_char(']')?;
    }
    w.write_char('\n')
}

/// An initializer element: floats as literals, `i1` as 0/1, other integers and pointers
/// as signed decimals of their width.
fn write_init_elem(w: &mut dyn Write, elem: Type, bits: u64) -> fmt::Result {
    if elem.is_float() {
        return write_float(w, bits, elem == Type::F32);
    }
    let width = elem.bits();
    if width == 1 {
        return write!(w, "{}", bits & 1);
    }
    let sh = 64 - width;
    write!(w, "{}", ((bits << sh) as i64) >> sh)
}

/// A function with the module that names its callees and globals, for `Display`.
#[derive(Copy, Clone)]
pub struct DisplayFunction<'a> {
    /// The function to print.
    pub func: &'a Function,
    /// The module it belongs to, if any.
    pub module: Option<&'a Module>,
}

impl fmt::Display for DisplayFunction<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_function(f, self.func, self.module)
    }
}

impl Function {
    /// Display this function in the text format; `module` names callees and globals.
    pub fn display<'a>(&'a self, module: Option<&'a Module>) -> DisplayFunction<'a> {
        DisplayFunction { func: self, module }
    }
}

impl fmt::Display for Module {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_module(f, self)
    }
}

/// Debug output is the text format (callees and globals as `@fnN` / `@gvN`).
impl fmt::Debug for Function {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_function(f, self, None)
    }
}

/// Debug output is the text format.
impl fmt::Debug for Module {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_module(f, self)
    }
}

/// ` <order> <scope>` of an atomic, each left out when it is the default (relaxed, gpu),
/// so that atomics written before orderings existed print as they did.
fn order_scope(w: &mut dyn Write, order: MemOrder, scope: MemScope) -> fmt::Result {
    if order != MemOrder::default() {
        write!(w, " {order}")?;
    }
    if scope != MemScope::default() {
        write!(w, " {scope}")?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn float(bits: u64, is_f32: bool) -> String {
        let mut s = String::new();
        write_float(&mut s, bits, is_f32).unwrap();
        s
    }

    #[test]
    fn floats() {
        assert_eq!(float(1.0f64.to_bits(), false), "1.0");
        assert_eq!(float(1e-30f64.to_bits(), false), "1e-30");
        assert_eq!(float(1e300f64.to_bits(), false), "1e300");
        assert_eq!(float((-0.0f64).to_bits(), false), "-0.0");
        assert_eq!(float(0.1f32.to_bits().into(), true), "0.1");
        assert_eq!(float(f32::INFINITY.to_bits().into(), true), "inf");
        assert_eq!(float(f64::NEG_INFINITY.to_bits(), false), "-inf");
        assert_eq!(float(0x7fc0_0000, true), "0x7fc00000");
        assert_eq!(float(f64::NAN.to_bits(), false), "0x7ff8000000000000");
    }

    #[test]
    fn names() {
        let mut s = String::new();
        write_name(&mut s, "_Z3fooi.x$1").unwrap();
        write_name(&mut s, "a \"b\"\\\n").unwrap();
        write_name(&mut s, "").unwrap();
        assert_eq!(s, "@_Z3fooi.x$1@\"a \\\"b\\\"\\\\\\0a\"@\"\"");
    }
}
