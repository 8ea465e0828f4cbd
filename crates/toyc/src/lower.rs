//! Lowering a checked program to Gyre IR through the public builder API:
//! [`FunctionBuilder`] for blocks and SSA variables (every source variable is a
//! [`Variable`]; block parameters appear by themselves), [`InstBuilder`] for
//! instructions, with the module's [`FuncRef`]/[`GlobalRef`] handles for calls and shared
//! arrays. Every instruction gets the source position of the expression or statement it
//! comes from ([`FunctionBuilder::set_srcloc`]), so the verifier's errors point into the
//! `.toy` file. Runs only on programs the checker accepted, so every type it reads is
//! known.

use crate::ast::*;
use crate::check::{Checked, Sym};
use gyre_ir::builder::{FunctionBuilder, InstBuilder, Variable};
use gyre_ir::parser::{FuncPositions, SourceMap};
use gyre_ir::{
    AddrSpace, AtomicOp, Block, FloatCC, FuncKind, FuncRef, Function, GlobalData, GlobalRef, IntCC,
    Module, Signature, SpecialReg, Type, Value,
};

/// Build the module: one global per shared array, one function per kernel or device
/// function (in source order, so `FuncId` `i` is function `i`), and the source map
/// locating its functions, blocks and instructions in the program's text.
pub fn lower(prog: &Program, ck: &Checked) -> Result<(Module, SourceMap), String> {
    let mut module = Module::new();
    let mut shared_ids = Vec::new();
    for a in &ck.shared {
        let g = GlobalData::new(
            &a.global,
            AddrSpace::Shared,
            a.elem.ir(),
            a.count,
            a.elem.bytes(),
        );
        shared_ids.push(module.push_global(g));
    }
    let mut callees = Vec::new();
    for (i, f) in prog.funcs.iter().enumerate() {
        let sig = Signature {
            params: f.params.iter().filter_map(|p| p.1.ir()).collect(),
            ret: f.ret.map(Scalar::ir),
        };
        let kind = if f.is_kernel {
            FuncKind::Kernel
        } else {
            FuncKind::Device
        };
        let mut func = Function::new(f.name.clone(), kind, sig);
        // Only device functions carry the flag: a caller must not make their barriers
        // control-dependent on more conditions.
        func.convergent = !f.is_kernel && ck.convergent[i];
        callees.push(module.push_function(func));
    }
    let mut map = SourceMap::default();
    for (f, callee) in prog.funcs.iter().zip(&callees) {
        let func = &mut module.functions[callee.id];
        let positions = Lower::run(prog, ck, &shared_ids, &callees, f, func)
            .map_err(|e| format!("`{}`: {e}", f.name))?;
        map.set_function(callee.id, positions);
    }
    Ok((module, map))
}

struct Lower<'a, 'f> {
    prog: &'a Program,
    ck: &'a Checked,
    shared: &'a [GlobalRef],
    /// Function `i` of the program.
    callees: &'a [FuncRef],
    b: FunctionBuilder<'f>,
    vars: Vec<Option<Variable>>,
    /// `(continue target, break target)` of the enclosing loops.
    loops: Vec<(Block, Block)>,
    /// The current position is after a terminator: the rest of the block is dead code
    /// and is not lowered.
    dead: bool,
}

impl<'a, 'f> Lower<'a, 'f> {
    fn run(
        prog: &'a Program,
        ck: &'a Checked,
        shared: &'a [GlobalRef],
        callees: &'a [FuncRef],
        f: &'a Func,
        func: &'f mut Function,
    ) -> Result<FuncPositions, String> {
        let mut l = Lower {
            prog,
            ck,
            shared,
            callees,
            b: FunctionBuilder::new(func),
            vars: vec![None; ck.locals.len()],
            loops: Vec::new(),
            dead: false,
        };
        l.b.set_srcloc(f.pos.offset);
        let entry = l.b.create_block();
        l.b.append_block_params_for_function_params(entry);
        l.b.switch_to_block(entry);
        l.b.seal_block(entry);
        let params: Vec<Value> = l.b.block_params(entry).to_vec();
        for ((_, _, _, id), v) in f.params.iter().zip(params) {
            let var = l.var_of_decl(*id);
            l.b.def_var(var, v);
        }
        l.block(&f.body);
        if !l.dead {
            if f.ret.is_some() {
                // The checker proved every path returns; this end is not reachable.
                l.b.unreachable();
            } else {
                l.b.ret(None);
            }
        }
        l.b.seal_all_blocks();
        l.b.finalize_with_srclocs().map_err(|e| e.to_string())
    }

    /// Build what `f` makes at source position `pos`, then return to the enclosing
    /// position (so an operator built after its operands carries its own).
    fn at<R>(&mut self, pos: u32, f: impl FnOnce(&mut Self) -> R) -> R {
        let outer = self.b.srcloc();
        self.b.set_srcloc(pos);
        let r = f(self);
        match outer {
            Some(o) => self.b.set_srcloc(o),
            None => self.b.clear_srcloc(),
        }
        r
    }

    fn ty(&self, e: &Expr) -> Ty {
        self.ck.types[e.id as usize]
    }

    fn var_of_local(&mut self, l: u32) -> Variable {
        if let Some(v) = self.vars[l as usize] {
            return v;
        }
        let ty = self.ck.locals[l as usize].ir().unwrap_or(Type::I32);
        let v = self.b.declare_var(ty);
        self.vars[l as usize] = Some(v);
        v
    }

    fn var_of_decl(&mut self, id: NodeId) -> Variable {
        match self.ck.syms[id as usize] {
            Sym::Local(l) => self.var_of_local(l),
            _ => unreachable!("a checked declaration names a local"),
        }
    }

    /// Continue in a new block `b` (after a branch to it).
    fn start(&mut self, b: Block) {
        self.b.switch_to_block(b);
        self.dead = false;
    }

    fn block(&mut self, stmts: &[Stmt]) {
        for s in stmts {
            if self.dead {
                // Unreachable code after `break`, `continue` or `return`.
                break;
            }
            self.stmt(s);
        }
    }

    fn stmt(&mut self, s: &Stmt) {
        self.at(s.pos.offset, |l| l.stmt_here(s));
    }

    fn stmt_here(&mut self, s: &Stmt) {
        match &s.kind {
            StmtKind::Let { init, id, .. } => {
                let v = self.expr(init);
                let var = self.var_of_decl(*id);
                self.b.def_var(var, v);
            }
            StmtKind::Shared { .. } => {}
            StmtKind::Assign(place, op, value) => self.assign(place, *op, value),
            StmtKind::Expr(e) => {
                self.expr_any(e);
            }
            StmtKind::If(c, t, e) => {
                let cv = self.expr(c);
                let then_b = self.b.create_block();
                let merge = self.b.create_block();
                let else_b = if e.is_some() {
                    self.b.create_block()
                } else {
                    merge
                };
                self.b.brif(cv, then_b, &[], else_b, &[]);
                self.b.seal_block(then_b);
                self.start(then_b);
                self.block(t);
                let mut reached = false;
                if !self.dead {
                    self.b.jump(merge, &[]);
                    reached = true;
                }
                if let Some(e) = e {
                    self.b.seal_block(else_b);
                    self.start(else_b);
                    self.block(e);
                    if !self.dead {
                        self.b.jump(merge, &[]);
                        reached = true;
                    }
                } else {
                    reached = true;
                }
                if reached {
                    self.b.seal_block(merge);
                    self.start(merge);
                } else {
                    // Both arms left: the merge block is never laid out.
                    self.dead = true;
                }
            }
            StmtKind::While(c, body) => {
                let header = self.b.create_block();
                let body_b = self.b.create_block();
                let exit = self.b.create_block();
                self.b.jump(header, &[]);
                self.start(header);
                let cv = self.expr(c);
                self.b.brif(cv, body_b, &[], exit, &[]);
                self.b.seal_block(body_b);
                self.start(body_b);
                self.loops.push((header, exit));
                self.block(body);
                self.loops.pop();
                if !self.dead {
                    self.b.jump(header, &[]);
                }
                self.b.seal_block(header);
                self.b.seal_block(exit);
                self.start(exit);
            }
            StmtKind::For {
                lo, hi, body, id, ..
            } => {
                let lv = self.expr(lo);
                let hv = self.expr(hi);
                let t = self.ck.types[*id as usize];
                let var = self.var_of_decl(*id);
                self.b.def_var(var, lv);
                // The bound is evaluated once, into a variable of its own.
                let bound = self.b.declare_var(self.b.func.dfg.value_type(hv));
                self.b.def_var(bound, hv);
                let header = self.b.create_block();
                let body_b = self.b.create_block();
                let latch = self.b.create_block();
                let exit = self.b.create_block();
                self.b.jump(header, &[]);
                self.start(header);
                let i = self.b.use_var(var);
                let n = self.b.use_var(bound);
                let cc = if matches!(t, Ty::Num(Scalar::U32)) {
                    IntCC::Ult
                } else {
                    IntCC::Slt
                };
                let cv = self.b.icmp(cc, i, n);
                self.b.brif(cv, body_b, &[], exit, &[]);
                self.b.seal_block(body_b);
                self.start(body_b);
                self.loops.push((latch, exit));
                self.block(body);
                self.loops.pop();
                if !self.dead {
                    self.b.jump(latch, &[]);
                }
                self.b.seal_block(latch);
                self.start(latch);
                let i = self.b.use_var(var);
                let ty = self.b.func.dfg.value_type(i);
                let one = self.b.iconst(ty, 1);
                let next = self.b.iadd(i, one);
                self.b.def_var(var, next);
                self.b.jump(header, &[]);
                self.b.seal_block(header);
                self.b.seal_block(exit);
                self.start(exit);
            }
            StmtKind::Break | StmtKind::Continue => {
                let &(cont, brk) = self.loops.last().expect("checked: inside a loop");
                let target = if matches!(s.kind, StmtKind::Break) {
                    brk
                } else {
                    cont
                };
                self.b.jump(target, &[]);
                self.dead = true;
            }
            StmtKind::Return(v) => {
                let v = v.as_ref().map(|e| self.expr(e));
                self.b.ret(v);
                self.dead = true;
            }
            StmtKind::Block(b) => self.block(b),
        }
    }

    fn assign(&mut self, place: &Expr, op: Option<BinOp>, value: &Expr) {
        match &place.kind {
            ExprKind::Var(_) => {
                let Sym::Local(l) = self.ck.syms[place.id as usize] else {
                    unreachable!("checked: assignment to a local")
                };
                let var = self.var_of_local(l);
                let v = self.expr(value);
                let v = match op {
                    Some(op) => {
                        let old = self.b.use_var(var);
                        self.binary_values(op, self.ty(place), old, v)
                    }
                    None => v,
                };
                self.b.def_var(var, v);
            }
            ExprKind::Index(base, idx) => {
                let (ptr, elem) = self.address(base, idx);
                let v = self.expr(value);
                let v = match op {
                    Some(op) => {
                        let old = self.b.load(elem.ir(), ptr);
                        self.binary_values(op, Ty::Num(elem), old, v)
                    }
                    None => v,
                };
                self.b.store(v, ptr);
            }
            _ => unreachable!("checked: assignable place"),
        }
    }

    /// The address of `base[idx]` and the element type.
    fn address(&mut self, base: &Expr, idx: &Expr) -> (Value, Scalar) {
        let (ptr, elem) = match self.ck.syms[base.id as usize] {
            Sym::Shared(k) => {
                let a = &self.ck.shared[k as usize];
                let p = self.b.global_addr_ref(self.shared[k as usize]);
                (p, a.elem)
            }
            _ => {
                let Ty::Ptr(elem) = self.ty(base) else {
                    unreachable!("checked: indexing a pointer")
                };
                (self.expr(base), elem)
            }
        };
        let mut i = self.expr(idx);
        // `ptradd` sign-extends its index; an unsigned index is zero-extended first.
        if matches!(self.ty(idx), Ty::Num(Scalar::U32)) {
            i = self.b.zext(Type::I64, i);
        }
        (self.b.ptradd(ptr, i, elem.bytes()), elem)
    }

    /// Lower an expression that has a value.
    fn expr(&mut self, e: &Expr) -> Value {
        self.expr_any(e)
            .expect("checked: the expression has a value")
    }

    /// Lower an expression (`None` for calls without a result and `sync()`).
    fn expr_any(&mut self, e: &Expr) -> Option<Value> {
        self.at(e.pos.offset, |l| l.expr_here(e))
    }

    fn expr_here(&mut self, e: &Expr) -> Option<Value> {
        let t = self.ty(e);
        Some(match &e.kind {
            ExprKind::Int(v, _) => match t {
                Ty::Num(s) if s.is_float() => self.fconst(s, *v as f64),
                Ty::Num(s) => self.b.iconst(s.ir(), *v as i64),
                _ => unreachable!("checked: integer literal type"),
            },
            ExprKind::Float(x, _) => match t {
                Ty::Num(s) => self.fconst(s, *x),
                _ => unreachable!("checked: float literal type"),
            },
            ExprKind::Bool(v) => self.b.iconst(Type::I1, i64::from(*v)),
            ExprKind::Builtin(reg, dim) => {
                use SpecialReg::*;
                let r = match (reg, dim) {
                    (Reg::Tid, 0) => TidX,
                    (Reg::Tid, 1) => TidY,
                    (Reg::Tid, _) => TidZ,
                    (Reg::Ntid, 0) => NtidX,
                    (Reg::Ntid, 1) => NtidY,
                    (Reg::Ntid, _) => NtidZ,
                    (Reg::Ctaid, 0) => CtaidX,
                    (Reg::Ctaid, 1) => CtaidY,
                    (Reg::Ctaid, _) => CtaidZ,
                    (Reg::Nctaid, 0) => NctaidX,
                    (Reg::Nctaid, 1) => NctaidY,
                    (Reg::Nctaid, _) => NctaidZ,
                };
                self.b.sreg(r)
            }
            ExprKind::Var(_) => {
                let Sym::Local(l) = self.ck.syms[e.id as usize] else {
                    unreachable!("checked: a variable")
                };
                let var = self.var_of_local(l);
                self.b.use_var(var)
            }
            ExprKind::Unary(op, inner) => {
                let v = self.expr(inner);
                match (op, t) {
                    (UnOp::Neg, Ty::Num(s)) if s.is_float() => self.b.fneg(v),
                    (UnOp::Neg, Ty::Num(s)) => {
                        let z = self.b.iconst(s.ir(), 0);
                        self.b.isub(z, v)
                    }
                    (UnOp::Not, _) => {
                        let one = self.b.iconst(Type::I1, 1);
                        self.b.xor(v, one)
                    }
                    (_, Ty::Num(s)) => {
                        let ones = self.b.iconst(s.ir(), -1);
                        self.b.xor(v, ones)
                    }
                    _ => unreachable!("checked: unary operand"),
                }
            }
            ExprKind::Binary(op @ (BinOp::LogAnd | BinOp::LogOr), a, b) => {
                // Short-circuit: `b` is evaluated only when `a` does not decide.
                let av = self.expr(a);
                let tmp = self.b.declare_var(Type::I1);
                self.b.def_var(tmp, av);
                let rhs = self.b.create_block();
                let merge = self.b.create_block();
                if *op == BinOp::LogAnd {
                    self.b.brif(av, rhs, &[], merge, &[]);
                } else {
                    self.b.brif(av, merge, &[], rhs, &[]);
                }
                self.b.seal_block(rhs);
                self.start(rhs);
                let bv = self.expr(b);
                self.b.def_var(tmp, bv);
                self.b.jump(merge, &[]);
                self.b.seal_block(merge);
                self.start(merge);
                self.b.use_var(tmp)
            }
            ExprKind::Binary(op, a, b) => {
                let at = self.ty(a);
                let av = self.expr(a);
                let bv = self.expr(b);
                self.binary_values(*op, at, av, bv)
            }
            ExprKind::Cast(inner, to) => {
                let from = self.ty(inner);
                let v = self.expr(inner);
                self.cast(v, from, *to)
            }
            ExprKind::Index(base, idx) => {
                let (p, elem) = self.address(base, idx);
                self.b.load(elem.ir(), p)
            }
            ExprKind::Call(name, args) => return self.call(e, name, args),
        })
    }

    fn fconst(&mut self, s: Scalar, x: f64) -> Value {
        if s == Scalar::F32 {
            self.b.fconst_f32(x as f32)
        } else {
            self.b.fconst_f64(x)
        }
    }

    /// `a op b` for operands of type `t` (not the short-circuit operators).
    fn binary_values(&mut self, op: BinOp, t: Ty, a: Value, b: Value) -> Value {
        let (float, unsigned) = match t {
            Ty::Num(s) => (s.is_float(), s.is_unsigned()),
            _ => (false, true),
        };
        let b_ = &mut self.b;
        if op.is_comparison() {
            if float {
                // `!=` is true for NaN (as in C); the others are ordered.
                let cc = match op {
                    BinOp::Eq => FloatCC::Oeq,
                    BinOp::Ne => FloatCC::Une,
                    BinOp::Lt => FloatCC::Olt,
                    BinOp::Le => FloatCC::Ole,
                    BinOp::Gt => FloatCC::Ogt,
                    _ => FloatCC::Oge,
                };
                return b_.fcmp(cc, a, b);
            }
            let cc = match (op, unsigned) {
                (BinOp::Eq, _) => IntCC::Eq,
                (BinOp::Ne, _) => IntCC::Ne,
                (BinOp::Lt, false) => IntCC::Slt,
                (BinOp::Le, false) => IntCC::Sle,
                (BinOp::Gt, false) => IntCC::Sgt,
                (BinOp::Ge, false) => IntCC::Sge,
                (BinOp::Lt, true) => IntCC::Ult,
                (BinOp::Le, true) => IntCC::Ule,
                (BinOp::Gt, true) => IntCC::Ugt,
                _ => IntCC::Uge,
            };
            return b_.icmp(cc, a, b);
        }
        match op {
            BinOp::Add if float => b_.fadd(a, b),
            BinOp::Sub if float => b_.fsub(a, b),
            BinOp::Mul if float => b_.fmul(a, b),
            BinOp::Div if float => b_.fdiv(a, b),
            BinOp::Rem if float => b_.frem(a, b),
            BinOp::Add => b_.iadd(a, b),
            BinOp::Sub => b_.isub(a, b),
            BinOp::Mul => b_.imul(a, b),
            BinOp::Div if unsigned => b_.udiv(a, b),
            BinOp::Div => b_.sdiv(a, b),
            BinOp::Rem if unsigned => b_.urem(a, b),
            BinOp::Rem => b_.srem(a, b),
            BinOp::And => b_.and(a, b),
            BinOp::Or => b_.or(a, b),
            BinOp::Xor => b_.xor(a, b),
            BinOp::Shl => b_.shl(a, b),
            BinOp::Shr if unsigned => b_.lshr(a, b),
            BinOp::Shr => b_.ashr(a, b),
            _ => unreachable!("comparisons and short-circuit operators are handled apart"),
        }
    }

    fn cast(&mut self, v: Value, from: Ty, to: Scalar) -> Value {
        let b = &mut self.b;
        let to_ty = to.ir();
        match from {
            Ty::Bool => b.zext(to_ty, v),
            Ty::Num(f) if f.is_float() && to.is_float() => {
                if f == to {
                    v
                } else if to == Scalar::F64 {
                    b.fpext(to_ty, v)
                } else {
                    b.fptrunc(to_ty, v)
                }
            }
            Ty::Num(f) if f.is_float() => {
                if to.is_unsigned() {
                    b.fptoui(to_ty, v)
                } else {
                    b.fptosi(to_ty, v)
                }
            }
            Ty::Num(f) if to.is_float() => {
                if f.is_unsigned() {
                    b.uitofp(to_ty, v)
                } else {
                    b.sitofp(to_ty, v)
                }
            }
            Ty::Num(f) => {
                let (fb, tb) = (f.ir().bits(), to_ty.bits());
                if fb == tb {
                    v
                } else if fb > tb {
                    b.trunc(to_ty, v)
                } else if f.is_unsigned() {
                    b.zext(to_ty, v)
                } else {
                    b.sext(to_ty, v)
                }
            }
            _ => unreachable!("checked: cast of a number or bool"),
        }
    }

    fn call(&mut self, e: &Expr, name: &str, args: &[Expr]) -> Option<Value> {
        let t = self.ty(e);
        let scalar = match t {
            Ty::Num(s) => Some(s),
            _ => None,
        };
        match name {
            "sync" => {
                self.b.barrier();
                None
            }
            "min" | "max" => {
                let a = self.expr(&args[0]);
                let c = self.expr(&args[1]);
                let s = scalar.expect("checked: numeric");
                Some(match (name, s.is_float(), s.is_unsigned()) {
                    ("min", true, _) => self.b.fmin(a, c),
                    ("max", true, _) => self.b.fmax(a, c),
                    ("min", _, true) => self.b.umin(a, c),
                    ("max", _, true) => self.b.umax(a, c),
                    ("min", _, _) => self.b.smin(a, c),
                    _ => self.b.smax(a, c),
                })
            }
            "sqrt" => {
                let a = self.expr(&args[0]);
                Some(self.b.sqrt(a))
            }
            "abs" => {
                let a = self.expr(&args[0]);
                let s = scalar.expect("checked: numeric");
                if s.is_float() {
                    Some(self.b.fabs(a))
                } else {
                    let z = self.b.iconst(s.ir(), 0);
                    let neg = self.b.isub(z, a);
                    Some(self.b.smax(a, neg))
                }
            }
            _ if name.starts_with("atomic_") => {
                let ExprKind::Index(base, idx) = &args[0].kind else {
                    unreachable!("checked: atomic on an element")
                };
                let (p, elem) = self.address(base, idx);
                let v = self.expr(&args[1]);
                if name == "atomic_cas" {
                    let n = self.expr(&args[2]);
                    return Some(self.b.atomic_cas(p, v, n));
                }
                let op = match (name, elem.is_unsigned()) {
                    ("atomic_add", _) => AtomicOp::Add,
                    ("atomic_min", false) => AtomicOp::Smin,
                    ("atomic_max", false) => AtomicOp::Smax,
                    ("atomic_min", true) => AtomicOp::Umin,
                    ("atomic_max", true) => AtomicOp::Umax,
                    ("atomic_and", _) => AtomicOp::And,
                    ("atomic_or", _) => AtomicOp::Or,
                    ("atomic_xor", _) => AtomicOp::Xor,
                    _ => AtomicOp::Exch,
                };
                Some(self.b.atomic_rmw(op, p, v))
            }
            _ => {
                let fi = self
                    .prog
                    .funcs
                    .iter()
                    .position(|f| f.name == name)
                    .expect("checked: a device function");
                let vals: Vec<Value> = args.iter().map(|a| self.expr(a)).collect();
                self.b.call_ref(self.callees[fi], &vals).1
            }
        }
    }
}
