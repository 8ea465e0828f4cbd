//! The type checker: resolves names and computes the type of every expression, with
//! explicit casts only (integer literals without a suffix take the type their context
//! expects). Every error is recorded and checking goes on; an expression with an error
//! has type [`Ty::Error`], which silences follow-up errors about it.
//!
//! The walks recurse over the tree, whose depth the parser bounds.

use crate::ast::*;
use crate::diag::{Diagnostics, Pos};
use rustc_hash::FxHashMap;

/// What a name or a declaration resolved to.
#[derive(Copy, Clone, PartialEq, Eq, Debug, Default)]
pub enum Sym {
    /// Not a name (or not resolved).
    #[default]
    None,
    /// A local variable or parameter (index into [`Checked::locals`]).
    Local(u32),
    /// A shared array (index into [`Checked::shared`]).
    Shared(u32),
}

/// A shared array: a module global of the shared space.
#[derive(Clone, Debug)]
pub struct SharedArray {
    /// The global's name: `kernel.array` (unique in the module).
    pub global: String,
    /// Element type.
    pub elem: Scalar,
    /// Element count.
    pub count: u32,
}

/// The built-in functions (names a device function may not take).
pub const BUILTINS: &[&str] = &[
    "sync",
    "atomic_add",
    "atomic_min",
    "atomic_max",
    "atomic_and",
    "atomic_or",
    "atomic_xor",
    "atomic_exch",
    "atomic_cas",
    "min",
    "max",
    "abs",
    "sqrt",
];

/// The checker's results, side tables keyed by [`NodeId`].
#[derive(Clone, Debug, Default)]
pub struct Checked {
    /// The type of each expression; the variable's type for a declaration.
    pub types: Vec<Ty>,
    /// The name each `Var` expression (and each declaration) resolved to.
    pub syms: Vec<Sym>,
    /// The type of each local variable.
    pub locals: Vec<Ty>,
    /// The shared arrays of every kernel.
    pub shared: Vec<SharedArray>,
    /// Per function: does it contain `sync()` or a call (so it must be `convergent`)?
    pub convergent: Vec<bool>,
}

struct Checker<'a> {
    prog: &'a Program,
    out: Checked,
    diags: &'a mut Diagnostics,
    funcs: FxHashMap<&'a str, usize>,
    scopes: Vec<FxHashMap<String, Sym>>,
    cur: usize,
    loops: u32,
    /// The integer literal under a unary minus being checked (it may be one larger).
    negated: Option<NodeId>,
}

/// Type-check a parsed program.
pub fn check(prog: &Program, diags: &mut Diagnostics) -> Checked {
    let n = prog.num_nodes as usize;
    let mut c = Checker {
        prog,
        out: Checked {
            types: vec![Ty::Error; n],
            syms: vec![Sym::None; n],
            locals: Vec::new(),
            shared: Vec::new(),
            convergent: vec![false; prog.funcs.len()],
        },
        diags,
        funcs: FxHashMap::default(),
        scopes: Vec::new(),
        cur: 0,
        loops: 0,
        negated: None,
    };
    for (i, f) in prog.funcs.iter().enumerate() {
        if BUILTINS.contains(&f.name.as_str()) {
            c.diags
                .error(f.pos, format!("`{}` is a built-in function", f.name));
        } else if c.funcs.insert(&f.name, i).is_some() {
            c.diags
                .error(f.pos, format!("`{}` is defined more than once", f.name));
        }
    }
    for (i, f) in prog.funcs.iter().enumerate() {
        c.cur = i;
        c.func(f);
    }
    c.out
}

fn is_untyped_literal(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Int(_, None) | ExprKind::Float(_, None) => true,
        ExprKind::Unary(UnOp::Neg, inner) => is_untyped_literal(inner),
        _ => false,
    }
}

/// Does a block always end in `return` (on every path, by a simple syntactic rule)?
fn always_returns(b: &Block) -> bool {
    b.last().is_some_and(|s| match &s.kind {
        StmtKind::Return(_) => true,
        StmtKind::If(_, t, Some(e)) => always_returns(t) && always_returns(e),
        StmtKind::Block(inner) => always_returns(inner),
        _ => false,
    })
}

impl<'a> Checker<'a> {
    fn error(&mut self, pos: Pos, msg: impl Into<String>) {
        self.diags.error(pos, msg);
    }

    fn new_local(&mut self, id: NodeId, name: &str, ty: Ty) {
        let l = self.out.locals.len() as u32;
        self.out.locals.push(ty);
        self.out.syms[id as usize] = Sym::Local(l);
        self.out.types[id as usize] = ty;
        if let Some(s) = self.scopes.last_mut() {
            s.insert(name.to_string(), Sym::Local(l));
        }
    }

    fn lookup(&self, name: &str) -> Option<Sym> {
        self.scopes.iter().rev().find_map(|s| s.get(name).copied())
    }

    fn func(&mut self, f: &'a Func) {
        self.scopes.clear();
        self.scopes.push(FxHashMap::default());
        self.loops = 0;
        if f.is_kernel && f.ret.is_some() {
            self.error(f.pos, format!("kernel `{}` cannot return a value", f.name));
        }
        for (name, ty, pos, id) in &f.params {
            if f.params.iter().filter(|p| &p.0 == name).count() > 1 {
                self.error(
                    *pos,
                    format!("parameter `{name}` is declared more than once"),
                );
            }
            self.new_local(*id, name, *ty);
        }
        self.block(&f.body);
        if f.ret.is_some() && !always_returns(&f.body) {
            self.error(
                f.pos,
                format!(
                    "function `{}` may reach its end without returning a value \
                     (end every path with `return`)",
                    f.name
                ),
            );
        }
        self.scopes.clear();
    }

    fn block(&mut self, b: &'a Block) {
        self.scopes.push(FxHashMap::default());
        for s in b {
            self.stmt(s);
        }
        self.scopes.pop();
    }

    fn stmt(&mut self, s: &'a Stmt) {
        let f = &self.prog.funcs[self.cur];
        match &s.kind {
            StmtKind::Let { name, ty, init, id } => {
                let t = self.expr(init, *ty);
                let t = match ty {
                    Some(ann) => {
                        if t != *ann && t != Ty::Error {
                            self.error(
                                init.pos,
                                format!(
                                    "mismatched types: `{name}` is {} but the value is {}",
                                    ann.name(),
                                    t.name()
                                ),
                            );
                        }
                        *ann
                    }
                    None => t,
                };
                if t == Ty::Void {
                    self.error(init.pos, "this expression has no value");
                }
                self.new_local(*id, name, t);
            }
            StmtKind::Shared {
                name,
                elem,
                count,
                id,
            } => {
                if !f.is_kernel {
                    self.error(s.pos, "shared arrays are declared in kernels only");
                }
                let mut global = format!("{}.{}", f.name, name);
                if self.out.shared.iter().any(|a| a.global == global) {
                    global = format!("{global}.{}", self.out.shared.len());
                }
                let k = self.out.shared.len() as u32;
                self.out.shared.push(SharedArray {
                    global,
                    elem: *elem,
                    count: *count,
                });
                self.out.syms[*id as usize] = Sym::Shared(k);
                if let Some(sc) = self.scopes.last_mut() {
                    sc.insert(name.clone(), Sym::Shared(k));
                }
            }
            StmtKind::Assign(place, op, value) => {
                let pt = match &place.kind {
                    ExprKind::Var(name) => {
                        let t = self.expr(place, None);
                        if let Some(Sym::Shared(_)) = self.lookup(name) {
                            self.error(
                                place.pos,
                                "cannot assign to a shared array; assign to an element",
                            );
                            Ty::Error
                        } else {
                            t
                        }
                    }
                    ExprKind::Index(..) => self.expr(place, None),
                    _ => {
                        self.expr(place, None);
                        self.error(
                            place.pos,
                            "cannot assign to this expression (a variable or `a[i]` is needed)",
                        );
                        Ty::Error
                    }
                };
                let vt = self.expr(value, Some(pt).filter(|t| *t != Ty::Error));
                if let Some(op) = op {
                    self.binary_types(*op, pt, vt, s.pos);
                } else if pt != vt && pt != Ty::Error && vt != Ty::Error {
                    self.error(
                        value.pos,
                        format!("mismatched types: assigning {} to {}", vt.name(), pt.name()),
                    );
                }
            }
            StmtKind::Expr(e) => {
                self.expr(e, None);
            }
            StmtKind::If(c, t, e) => {
                self.cond(c);
                self.block(t);
                if let Some(e) = e {
                    self.block(e);
                }
            }
            StmtKind::While(c, body) => {
                self.cond(c);
                self.loops += 1;
                self.block(body);
                self.loops -= 1;
            }
            StmtKind::For {
                name,
                lo,
                hi,
                body,
                id,
            } => {
                let (lt, ht) = self.operands(lo, hi, None);
                let t = if lt == ht || lt == Ty::Error || ht == Ty::Error {
                    if lt == Ty::Error {
                        ht
                    } else {
                        lt
                    }
                } else {
                    self.error(
                        hi.pos,
                        format!(
                            "mismatched types: the range is {} .. {}",
                            lt.name(),
                            ht.name()
                        ),
                    );
                    Ty::Error
                };
                if !matches!(t, Ty::Num(s) if !s.is_float()) && t != Ty::Error {
                    self.error(
                        lo.pos,
                        format!("a `for` range must be of integers, not {}", t.name()),
                    );
                }
                self.scopes.push(FxHashMap::default());
                self.new_local(*id, name, t);
                self.loops += 1;
                self.block(body);
                self.loops -= 1;
                self.scopes.pop();
            }
            StmtKind::Break | StmtKind::Continue => {
                if self.loops == 0 {
                    let w = if matches!(s.kind, StmtKind::Break) {
                        "break"
                    } else {
                        "continue"
                    };
                    self.error(s.pos, format!("`{w}` outside of a loop"));
                }
            }
            StmtKind::Return(v) => {
                let want = f.ret;
                match (v, want) {
                    (None, None) => {}
                    (Some(e), None) => {
                        self.expr(e, None);
                        let what = if f.is_kernel {
                            "a kernel"
                        } else {
                            "this function"
                        };
                        self.error(e.pos, format!("{what} returns no value"));
                    }
                    (None, Some(w)) => {
                        self.error(
                            s.pos,
                            format!("this function returns a value of type {}", w.name()),
                        );
                    }
                    (Some(e), Some(w)) => {
                        let t = self.expr(e, Some(Ty::Num(w)));
                        if t != Ty::Num(w) && t != Ty::Error {
                            self.error(
                                e.pos,
                                format!(
                                    "mismatched types: returning {} from a function returning {}",
                                    t.name(),
                                    w.name()
                                ),
                            );
                        }
                    }
                }
            }
            StmtKind::Block(b) => self.block(b),
        }
    }

    fn cond(&mut self, c: &'a Expr) {
        let t = self.expr(c, Some(Ty::Bool));
        if t != Ty::Bool && t != Ty::Error {
            self.error(
                c.pos,
                format!(
                    "a condition must be bool, not {} (compare with `!= 0`)",
                    t.name()
                ),
            );
        }
    }

    /// Check two operands that must have one type; an untyped literal takes the other
    /// operand's type.
    fn operands(&mut self, a: &'a Expr, b: &'a Expr, expected: Option<Ty>) -> (Ty, Ty) {
        if is_untyped_literal(a) && !is_untyped_literal(b) {
            let bt = self.expr(b, expected);
            let at = self.expr(a, Some(bt).filter(|t| *t != Ty::Error));
            (at, bt)
        } else {
            let at = self.expr(a, expected);
            let bt = self.expr(b, Some(at).filter(|t| *t != Ty::Error));
            (at, bt)
        }
    }

    /// The result type of `a op b` with operand types `at`, `bt` (errors reported at `pos`).
    fn binary_types(&mut self, op: BinOp, at: Ty, bt: Ty, pos: Pos) -> Ty {
        if at == Ty::Error || bt == Ty::Error {
            return if op.is_comparison() {
                Ty::Bool
            } else {
                Ty::Error
            };
        }
        if at != bt {
            self.error(
                pos,
                format!(
                    "mismatched types: {} {} {} (convert one side with `as`)",
                    at.name(),
                    op.text(),
                    bt.name()
                ),
            );
            return if op.is_comparison() {
                Ty::Bool
            } else {
                Ty::Error
            };
        }
        let ok = match (op, at) {
            (BinOp::LogAnd | BinOp::LogOr, Ty::Bool) => true,
            (BinOp::Eq | BinOp::Ne, Ty::Bool | Ty::Num(_)) => true,
            (BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge, Ty::Num(_)) => true,
            (BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::Div | BinOp::Rem, Ty::Num(_)) => true,
            (BinOp::And | BinOp::Or | BinOp::Xor, Ty::Bool) => true,
            (BinOp::And | BinOp::Or | BinOp::Xor | BinOp::Shl | BinOp::Shr, Ty::Num(s)) => {
                !s.is_float()
            }
            _ => false,
        };
        if !ok {
            self.error(
                pos,
                format!("operator `{}` does not apply to {}", op.text(), at.name()),
            );
            return if op.is_comparison() {
                Ty::Bool
            } else {
                Ty::Error
            };
        }
        if op.is_comparison() {
            Ty::Bool
        } else {
            at
        }
    }

    fn set(&mut self, e: &Expr, t: Ty) -> Ty {
        self.out.types[e.id as usize] = t;
        t
    }

    /// Check `e`, with the type the context expects (for unsuffixed literals).
    fn expr(&mut self, e: &'a Expr, expected: Option<Ty>) -> Ty {
        let t = self.expr_inner(e, expected);
        self.set(e, t)
    }

    fn expr_inner(&mut self, e: &'a Expr, expected: Option<Ty>) -> Ty {
        match &e.kind {
            ExprKind::Int(v, sfx) => {
                let s = match (sfx, expected) {
                    (Some(s), _) => *s,
                    (None, Some(Ty::Num(s))) if !s.is_float() => s,
                    (None, Some(Ty::Num(s))) => {
                        self.error(
                            e.pos,
                            format!(
                                "an integer literal where {} is expected; write `{v}.0`",
                                s.name()
                            ),
                        );
                        return Ty::Error;
                    }
                    _ => Scalar::I32,
                };
                if s.is_float() {
                    return Ty::Num(s);
                }
                // A negated literal may reach the magnitude of the minimum.
                let neg = u64::from(self.negated == Some(e.id));
                let max: u64 = match s {
                    Scalar::I32 => (1 << 31) - 1 + neg,
                    Scalar::U32 => u64::from(u32::MAX),
                    _ => (1 << 63) - 1 + neg,
                };
                if *v > max {
                    self.error(e.pos, format!("literal {v} does not fit in {}", s.name()));
                    return Ty::Error;
                }
                Ty::Num(s)
            }
            ExprKind::Float(_, sfx) => match (sfx, expected) {
                (Some(s), _) => Ty::Num(*s),
                (None, Some(Ty::Num(Scalar::F64))) => Ty::Num(Scalar::F64),
                _ => Ty::Num(Scalar::F32),
            },
            ExprKind::Bool(_) => Ty::Bool,
            ExprKind::Builtin(..) => Ty::Num(Scalar::I32),
            ExprKind::Var(name) => match self.lookup(name) {
                Some(Sym::Local(l)) => {
                    self.out.syms[e.id as usize] = Sym::Local(l);
                    self.out.locals[l as usize]
                }
                Some(Sym::Shared(k)) => {
                    self.out.syms[e.id as usize] = Sym::Shared(k);
                    // A shared array is only a value when indexed (checked by `Index`).
                    Ty::Error
                }
                _ => {
                    self.error(e.pos, format!("unknown variable `{name}`"));
                    Ty::Error
                }
            },
            ExprKind::Unary(op, inner) => {
                if *op == UnOp::Neg && matches!(inner.kind, ExprKind::Int(..)) {
                    self.negated = Some(inner.id);
                }
                let t = self.expr(inner, expected);
                let ok = match (op, t) {
                    (_, Ty::Error) => return Ty::Error,
                    (UnOp::Neg, Ty::Num(s)) => !s.is_unsigned(),
                    (UnOp::Not, Ty::Bool) => true,
                    (UnOp::BitNot, Ty::Num(s)) => !s.is_float(),
                    _ => false,
                };
                if !ok {
                    let o = match op {
                        UnOp::Neg => "-",
                        UnOp::Not => "!",
                        UnOp::BitNot => "~",
                    };
                    self.error(
                        e.pos,
                        format!("operator `{o}` does not apply to {}", t.name()),
                    );
                    return Ty::Error;
                }
                t
            }
            ExprKind::Binary(op, a, b) => {
                let exp = match op {
                    BinOp::LogAnd | BinOp::LogOr => Some(Ty::Bool),
                    o if o.is_comparison() => None,
                    _ => expected,
                };
                let (at, bt) = self.operands(a, b, exp);
                self.binary_types(*op, at, bt, e.pos)
            }
            ExprKind::Cast(inner, to) => {
                let t = self.expr(inner, None);
                match t {
                    Ty::Num(_) | Ty::Error => {}
                    Ty::Bool if !to.is_float() => {}
                    _ => {
                        self.error(e.pos, format!("cannot cast {} to {}", t.name(), to.name()));
                    }
                }
                Ty::Num(*to)
            }
            ExprKind::Index(base, idx) => {
                let elem = match &base.kind {
                    ExprKind::Var(name) if matches!(self.lookup(name), Some(Sym::Shared(_))) => {
                        let Some(Sym::Shared(k)) = self.lookup(name) else {
                            unreachable!("matched above")
                        };
                        self.out.syms[base.id as usize] = Sym::Shared(k);
                        Some(self.out.shared[k as usize].elem)
                    }
                    _ => match self.expr(base, None) {
                        Ty::Ptr(s) => Some(s),
                        Ty::Error => None,
                        t => {
                            self.error(base.pos, format!("cannot index {}", t.name()));
                            None
                        }
                    },
                };
                let it = self.expr(idx, Some(Ty::Num(Scalar::I32)));
                if !matches!(it, Ty::Num(s) if !s.is_float()) && it != Ty::Error {
                    self.error(
                        idx.pos,
                        format!("an index must be an integer, not {}", it.name()),
                    );
                }
                elem.map_or(Ty::Error, Ty::Num)
            }
            ExprKind::Call(name, args) => self.call(e, name, args, expected),
        }
    }

    fn call(&mut self, e: &'a Expr, name: &str, args: &'a [Expr], expected: Option<Ty>) -> Ty {
        let arity = |n: usize, me: &mut Self| -> bool {
            if args.len() != n {
                me.error(
                    e.pos,
                    format!(
                        "`{name}` takes {n} argument{}, not {}",
                        if n == 1 { "" } else { "s" },
                        args.len()
                    ),
                );
                for a in args {
                    me.expr(a, None);
                }
                false
            } else {
                true
            }
        };
        match name {
            "sync" => {
                self.out.convergent[self.cur] = true;
                arity(0, self);
                Ty::Void
            }
            "min" | "max" => {
                if !arity(2, self) {
                    return Ty::Error;
                }
                let (at, bt) = self.operands(&args[0], &args[1], expected);
                match self.binary_types(BinOp::Add, at, bt, e.pos) {
                    Ty::Num(s) => Ty::Num(s),
                    _ => Ty::Error,
                }
            }
            "abs" | "sqrt" => {
                if !arity(1, self) {
                    return Ty::Error;
                }
                let t = self.expr(&args[0], expected);
                match t {
                    Ty::Num(s) if s.is_float() => t,
                    Ty::Num(s) if name == "abs" && !s.is_unsigned() => t,
                    Ty::Error => Ty::Error,
                    _ => {
                        self.error(e.pos, format!("`{name}` does not apply to {}", t.name()));
                        Ty::Error
                    }
                }
            }
            _ if name.starts_with("atomic_") && BUILTINS.contains(&name) => {
                let n = if name == "atomic_cas" { 3 } else { 2 };
                if !arity(n, self) {
                    return Ty::Error;
                }
                if !matches!(args[0].kind, ExprKind::Index(..)) {
                    self.error(
                        args[0].pos,
                        format!("the first argument of `{name}` must be an element `a[i]`"),
                    );
                    for a in args {
                        self.expr(a, None);
                    }
                    return Ty::Error;
                }
                let pt = self.expr(&args[0], None);
                let mut ok = true;
                for a in &args[1..] {
                    let t = self.expr(a, Some(pt).filter(|t| *t != Ty::Error));
                    if t != pt && t != Ty::Error && pt != Ty::Error {
                        self.error(
                            a.pos,
                            format!(
                                "mismatched types: {} for an element of {}",
                                t.name(),
                                pt.name()
                            ),
                        );
                        ok = false;
                    }
                }
                let Ty::Num(s) = pt else {
                    return Ty::Error;
                };
                let allowed = match name {
                    "atomic_add" => true,
                    _ => !s.is_float(),
                };
                if !allowed {
                    self.error(e.pos, format!("`{name}` does not apply to {}", s.name()));
                    ok = false;
                }
                if ok {
                    pt
                } else {
                    Ty::Error
                }
            }
            _ => {
                let Some(&fi) = self.funcs.get(name) else {
                    self.error(e.pos, format!("unknown function `{name}`"));
                    for a in args {
                        self.expr(a, None);
                    }
                    return Ty::Error;
                };
                let callee = &self.prog.funcs[fi];
                self.out.convergent[self.cur] = true;
                if callee.is_kernel {
                    self.error(
                        e.pos,
                        format!("`{name}` is a kernel; only device functions (`fn`) can be called"),
                    );
                    return Ty::Error;
                }
                if args.len() != callee.params.len() {
                    self.error(
                        e.pos,
                        format!(
                            "`{name}` takes {} arguments, not {}",
                            callee.params.len(),
                            args.len()
                        ),
                    );
                    for a in args {
                        self.expr(a, None);
                    }
                    return Ty::Error;
                }
                for (a, p) in args.iter().zip(&callee.params) {
                    let t = self.expr(a, Some(p.1));
                    if t != p.1 && t != Ty::Error {
                        self.error(
                            a.pos,
                            format!(
                                "mismatched types: {} passed for `{}` of type {}",
                                t.name(),
                                p.0,
                                p.1.name()
                            ),
                        );
                    }
                }
                callee.ret.map_or(Ty::Void, Ty::Num)
            }
        }
    }
}
