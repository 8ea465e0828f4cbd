//! A hand-written recursive-descent parser; expressions by precedence climbing.
//!
//! Recursion is bounded: the parser counts its nesting (blocks, parentheses, unary
//! operators, operands) and every expression node records the depth of its subtree; past
//! [`MAX_NESTING`] it reports "nesting too deep" at the place and gives up on that
//! construct, so no input can overflow the stack here or in the checker and lowering,
//! which walk the same trees. After an error the parser skips to the end of the
//! statement (or to the next item) and goes on, so one run reports many errors.

use crate::ast::*;
use crate::diag::{Diagnostics, Pos};
use crate::lexer::{Tok, Token};

/// The deepest nesting of blocks and expressions accepted.
pub const MAX_NESTING: u32 = 200;

/// Parse tokens (from [`crate::lexer::lex`]) into a program, recording errors.
pub fn parse(toks: Vec<Token>, diags: &mut Diagnostics) -> Program {
    let mut p = Parser {
        toks,
        i: 0,
        depth: 0,
        next_id: 0,
        diags,
    };
    let mut prog = Program::default();
    while !p.at_eof() {
        let before = p.i;
        match p.item() {
            Some(f) => prog.funcs.push(f),
            None => p.skip_item(before),
        }
    }
    prog.num_nodes = p.next_id;
    prog
}

/// Marker for "an error was reported; recover".
type R<T> = Option<T>;

struct Parser<'d> {
    toks: Vec<Token>,
    i: usize,
    depth: u32,
    next_id: NodeId,
    diags: &'d mut Diagnostics,
}

/// Binary operators: token, operator, precedence (higher binds tighter).
const BINOPS: &[(&str, BinOp, u32)] = &[
    ("||", BinOp::LogOr, 1),
    ("&&", BinOp::LogAnd, 2),
    ("==", BinOp::Eq, 3),
    ("!=", BinOp::Ne, 3),
    ("<", BinOp::Lt, 3),
    ("<=", BinOp::Le, 3),
    (">", BinOp::Gt, 3),
    (">=", BinOp::Ge, 3),
    ("|", BinOp::Or, 4),
    ("^", BinOp::Xor, 5),
    ("&", BinOp::And, 6),
    ("<<", BinOp::Shl, 7),
    (">>", BinOp::Shr, 7),
    ("+", BinOp::Add, 8),
    ("-", BinOp::Sub, 8),
    ("*", BinOp::Mul, 9),
    ("/", BinOp::Div, 9),
    ("%", BinOp::Rem, 9),
];

/// Compound assignment operators.
const COMPOUND: &[(&str, BinOp)] = &[
    ("+=", BinOp::Add),
    ("-=", BinOp::Sub),
    ("*=", BinOp::Mul),
    ("/=", BinOp::Div),
    ("%=", BinOp::Rem),
    ("&=", BinOp::And),
    ("|=", BinOp::Or),
    ("^=", BinOp::Xor),
    ("<<=", BinOp::Shl),
    (">>=", BinOp::Shr),
];

const KEYWORDS: &[&str] = &[
    "kernel", "fn", "let", "shared", "if", "else", "while", "for", "in", "break", "continue",
    "return", "as", "true", "false", "i32", "i64", "u32", "f32", "f64", "bool", "tid", "ntid",
    "ctaid", "nctaid",
];

fn describe(t: &Tok) -> String {
    match t {
        Tok::Ident(s) => format!("`{s}`"),
        Tok::Int(v, _) => format!("`{v}`"),
        Tok::Float(x, _) => format!("`{x}`"),
        Tok::Punct(p) => format!("`{p}`"),
        Tok::Eof => "the end of the file".to_string(),
    }
}

fn scalar_named(s: &str) -> Option<Scalar> {
    match s {
        "i32" => Some(Scalar::I32),
        "i64" => Some(Scalar::I64),
        "u32" => Some(Scalar::U32),
        "f32" => Some(Scalar::F32),
        "f64" => Some(Scalar::F64),
        _ => None,
    }
}

impl Parser<'_> {
    fn peek(&self) -> &Tok {
        &self.toks[self.i].tok
    }

    fn peek_at(&self, k: usize) -> &Tok {
        &self.toks[(self.i + k).min(self.toks.len() - 1)].tok
    }

    fn pos(&self) -> Pos {
        self.toks[self.i].pos
    }

    fn at_eof(&self) -> bool {
        matches!(self.peek(), Tok::Eof)
    }

    fn bump(&mut self) {
        if self.i + 1 < self.toks.len() {
            self.i += 1;
        }
    }

    fn is(&self, p: &str) -> bool {
        matches!(self.peek(), Tok::Punct(q) if *q == p)
    }

    fn is_kw(&self, k: &str) -> bool {
        matches!(self.peek(), Tok::Ident(s) if s == k)
    }

    fn eat(&mut self, p: &str) -> bool {
        if self.is(p) {
            self.bump();
            true
        } else {
            false
        }
    }

    fn eat_kw(&mut self, k: &str) -> bool {
        if self.is_kw(k) {
            self.bump();
            true
        } else {
            false
        }
    }

    fn error_here(&mut self, what: &str) {
        let msg = format!("expected {what}, found {}", describe(self.peek()));
        let pos = self.pos();
        self.diags.error(pos, msg);
    }

    fn expect(&mut self, p: &str) -> R<()> {
        if self.eat(p) {
            Some(())
        } else {
            self.error_here(&format!("`{p}`"));
            None
        }
    }

    fn ident(&mut self, what: &str) -> R<(String, Pos)> {
        if let Tok::Ident(s) = self.peek() {
            if !KEYWORDS.contains(&s.as_str()) {
                let s = s.clone();
                let pos = self.pos();
                self.bump();
                return Some((s, pos));
            }
        }
        self.error_here(what);
        None
    }

    fn id(&mut self) -> NodeId {
        let id = self.next_id;
        self.next_id += 1;
        id
    }

    /// Enter one level of nesting; `None` (after the error) past the limit.
    fn enter(&mut self) -> R<()> {
        self.depth += 1;
        if self.depth > MAX_NESTING {
            let pos = self.pos();
            self.diags.error(
                pos,
                format!("nesting too deep (more than {MAX_NESTING} levels)"),
            );
            self.depth -= 1;
            return None;
        }
        Some(())
    }

    fn leave(&mut self) {
        self.depth -= 1;
    }

    /// Skip to the next item keyword at brace depth 0 (always making progress).
    fn skip_item(&mut self, before: usize) {
        if self.i == before {
            self.bump();
        }
        let mut depth = 0i64;
        while !self.at_eof() {
            if depth <= 0 && (self.is_kw("kernel") || self.is_kw("fn")) {
                return;
            }
            if self.is("{") {
                depth += 1;
            } else if self.is("}") {
                depth -= 1;
            }
            self.bump();
        }
    }

    /// Skip the rest of a broken statement: past the next `;` at this brace depth, or up
    /// to (not past) the `}` closing the enclosing block.
    fn skip_stmt(&mut self, before: usize) {
        let mut depth = 0i64;
        let mut moved = self.i != before;
        while !self.at_eof() {
            if self.is("}") {
                if depth == 0 {
                    if !moved {
                        // A stray `}` at the start: consuming it is the only progress.
                        self.bump();
                    }
                    return;
                }
                depth -= 1;
            } else if self.is("{") {
                depth += 1;
            } else if self.is(";") && depth == 0 {
                self.bump();
                return;
            }
            self.bump();
            moved = true;
        }
    }

    fn ty(&mut self) -> R<Ty> {
        if self.eat("*") {
            let s = self.scalar()?;
            return Some(Ty::Ptr(s));
        }
        if self.eat_kw("bool") {
            return Some(Ty::Bool);
        }
        Some(Ty::Num(self.scalar()?))
    }

    fn scalar(&mut self) -> R<Scalar> {
        if let Tok::Ident(s) = self.peek() {
            if let Some(sc) = scalar_named(s) {
                self.bump();
                return Some(sc);
            }
        }
        self.error_here("a type (i32, i64, u32, f32, f64)");
        None
    }

    fn item(&mut self) -> R<Func> {
        let is_kernel = if self.eat_kw("kernel") {
            true
        } else if self.eat_kw("fn") {
            false
        } else {
            self.error_here("`kernel` or `fn`");
            return None;
        };
        let (name, pos) = self.ident("a function name")?;
        self.expect("(")?;
        let mut params = Vec::new();
        if !self.is(")") {
            loop {
                let (pname, ppos) = self.ident("a parameter name")?;
                self.expect(":")?;
                let ty = self.ty()?;
                let id = self.id();
                params.push((pname, ty, ppos, id));
                if !self.eat(",") {
                    break;
                }
            }
        }
        self.expect(")")?;
        let ret = if self.eat("->") {
            Some(self.scalar()?)
        } else {
            None
        };
        let body = self.block()?;
        Some(Func {
            is_kernel,
            name,
            pos,
            params,
            ret,
            body,
        })
    }

    /// `{ stmt* }`. Errors inside are recovered from; `None` only when the block itself
    /// cannot be parsed (no `{`, too deep).
    fn block(&mut self) -> R<Block> {
        self.expect("{")?;
        self.enter()?;
        let mut stmts = Vec::new();
        loop {
            if self.eat("}") {
                break;
            }
            if self.at_eof() {
                self.error_here("`}`");
                break;
            }
            let before = self.i;
            match self.stmt() {
                Some(s) => stmts.push(s),
                None => self.skip_stmt(before),
            }
        }
        self.leave();
        Some(stmts)
    }

    fn stmt(&mut self) -> R<Stmt> {
        let pos = self.pos();
        let kind = if self.eat_kw("let") {
            let (name, _) = self.ident("a variable name")?;
            let ty = if self.eat(":") {
                Some(self.ty()?)
            } else {
                None
            };
            self.expect("=")?;
            let init = self.expr()?;
            self.expect(";")?;
            let id = self.id();
            StmtKind::Let { name, ty, init, id }
        } else if self.eat_kw("shared") {
            let (name, _) = self.ident("an array name")?;
            self.expect(":")?;
            self.expect("[")?;
            let elem = self.scalar()?;
            self.expect(";")?;
            let count = match *self.peek() {
                Tok::Int(v, None) if v > 0 && v <= u64::from(u32::MAX) => v as u32,
                _ => {
                    self.error_here("a positive element count");
                    return None;
                }
            };
            self.bump();
            self.expect("]")?;
            self.expect(";")?;
            let id = self.id();
            StmtKind::Shared {
                name,
                elem,
                count,
                id,
            }
        } else if self.eat_kw("if") {
            return self.if_stmt(pos);
        } else if self.eat_kw("while") {
            let cond = self.expr()?;
            let body = self.block()?;
            StmtKind::While(cond, body)
        } else if self.eat_kw("for") {
            let (name, _) = self.ident("a loop variable")?;
            if !self.eat_kw("in") {
                self.error_here("`in`");
                return None;
            }
            let lo = self.expr()?;
            self.expect("..")?;
            let hi = self.expr()?;
            let body = self.block()?;
            let id = self.id();
            StmtKind::For {
                name,
                lo,
                hi,
                body,
                id,
            }
        } else if self.eat_kw("break") {
            self.expect(";")?;
            StmtKind::Break
        } else if self.eat_kw("continue") {
            self.expect(";")?;
            StmtKind::Continue
        } else if self.eat_kw("return") {
            let v = if self.is(";") {
                None
            } else {
                Some(self.expr()?)
            };
            self.expect(";")?;
            StmtKind::Return(v)
        } else if self.is("{") {
            StmtKind::Block(self.block()?)
        } else {
            let e = self.expr()?;
            let compound = COMPOUND.iter().find(|(t, _)| self.is(t)).map(|&(_, op)| op);
            if let Some(op) = compound {
                self.bump();
                let v = self.expr()?;
                self.expect(";")?;
                StmtKind::Assign(e, Some(op), v)
            } else if self.eat("=") {
                let v = self.expr()?;
                self.expect(";")?;
                StmtKind::Assign(e, None, v)
            } else {
                self.expect(";")?;
                StmtKind::Expr(e)
            }
        };
        Some(Stmt { kind, pos })
    }

    /// After `if`: `cond { .. } [else (if ..| { .. })]`. An `else if` chain is parsed
    /// with a loop (each `else if` nests one level in the tree, counted as nesting).
    fn if_stmt(&mut self, pos: Pos) -> R<Stmt> {
        let cond = self.expr()?;
        let then = self.block()?;
        let els = if self.eat_kw("else") {
            if self.is_kw("if") {
                let ipos = self.pos();
                self.bump();
                self.enter()?;
                let inner = self.if_stmt(ipos);
                self.leave();
                Some(vec![inner?])
            } else {
                Some(self.block()?)
            }
        } else {
            None
        };
        Some(Stmt {
            kind: StmtKind::If(cond, then, els),
            pos,
        })
    }

    fn mk(&mut self, kind: ExprKind, pos: Pos, depth: u32) -> R<Expr> {
        // Subtree depth plus the statement nesting around it: the walks of the checker and
        // the lowering recurse this deep.
        if depth + self.depth > 2 * MAX_NESTING {
            self.diags.error(
                pos,
                format!("expression nesting too deep (more than {MAX_NESTING} levels)"),
            );
            return None;
        }
        let id = self.id();
        Some(Expr {
            kind,
            pos,
            id,
            depth,
        })
    }

    fn expr(&mut self) -> R<Expr> {
        self.binary(1)
    }

    /// Precedence climbing: operands of operators binding at least `min_prec`.
    fn binary(&mut self, min_prec: u32) -> R<Expr> {
        self.enter()?;
        let r = self.binary_inner(min_prec);
        self.leave();
        r
    }

    fn binary_inner(&mut self, min_prec: u32) -> R<Expr> {
        let mut lhs = self.cast()?;
        while let Some(&(_, op, prec)) = BINOPS.iter().find(|(t, _, _)| self.is(t)) {
            if prec < min_prec {
                break;
            }
            let pos = self.pos();
            self.bump();
            // Comparisons do not chain (`a < b < c` is an error, as in Rust).
            let next = prec + 1;
            let rhs = self.binary(next)?;
            if op.is_comparison() {
                if let Some(&(_, op2, p2)) = BINOPS.iter().find(|(t, _, _)| self.is(t)) {
                    if p2 == prec && op2.is_comparison() {
                        let pos2 = self.pos();
                        self.diags.error(
                            pos2,
                            "comparisons cannot be chained; use parentheses or `&&`",
                        );
                        return None;
                    }
                }
            }
            let depth = lhs.depth.max(rhs.depth) + 1;
            lhs = self.mk(
                ExprKind::Binary(op, Box::new(lhs), Box::new(rhs)),
                pos,
                depth,
            )?;
        }
        Some(lhs)
    }

    fn unary(&mut self) -> R<Expr> {
        let pos = self.pos();
        let op = if self.is("-") {
            Some(UnOp::Neg)
        } else if self.is("!") {
            Some(UnOp::Not)
        } else if self.is("~") {
            Some(UnOp::BitNot)
        } else {
            None
        };
        if let Some(op) = op {
            self.bump();
            self.enter()?;
            let inner = self.unary();
            self.leave();
            let inner = inner?;
            let depth = inner.depth + 1;
            self.mk(ExprKind::Unary(op, Box::new(inner)), pos, depth)
        } else {
            self.postfix()
        }
    }

    /// A unary expression and its casts: `as` binds looser than unary operators, so
    /// `-x as i64` is `(-x) as i64`, as in Rust.
    fn cast(&mut self) -> R<Expr> {
        let mut e = self.unary()?;
        while self.is_kw("as") {
            let pos = self.pos();
            self.bump();
            let s = self.scalar()?;
            let depth = e.depth + 1;
            e = self.mk(ExprKind::Cast(Box::new(e), s), pos, depth)?;
        }
        Some(e)
    }

    fn postfix(&mut self) -> R<Expr> {
        let mut e = self.primary()?;
        while self.is("[") {
            let pos = self.pos();
            self.bump();
            let idx = self.expr()?;
            self.expect("]")?;
            let depth = e.depth.max(idx.depth) + 1;
            e = self.mk(ExprKind::Index(Box::new(e), Box::new(idx)), pos, depth)?;
        }
        Some(e)
    }

    fn primary(&mut self) -> R<Expr> {
        let pos = self.pos();
        match self.peek().clone() {
            Tok::Int(v, s) => {
                self.bump();
                self.mk(ExprKind::Int(v, s), pos, 1)
            }
            Tok::Float(x, s) => {
                self.bump();
                self.mk(ExprKind::Float(x, s), pos, 1)
            }
            Tok::Punct("(") => {
                self.bump();
                let e = self.expr()?;
                self.expect(")")?;
                Some(e)
            }
            Tok::Ident(name) => {
                let reg = match name.as_str() {
                    "true" | "false" => {
                        self.bump();
                        return self.mk(ExprKind::Bool(name == "true"), pos, 1);
                    }
                    "tid" => Some(Reg::Tid),
                    "ntid" => Some(Reg::Ntid),
                    "ctaid" => Some(Reg::Ctaid),
                    "nctaid" => Some(Reg::Nctaid),
                    _ => None,
                };
                if let Some(reg) = reg {
                    self.bump();
                    self.expect(".")?;
                    let dim = match self.peek() {
                        Tok::Ident(d) if d == "x" => 0,
                        Tok::Ident(d) if d == "y" => 1,
                        Tok::Ident(d) if d == "z" => 2,
                        _ => {
                            self.error_here("`x`, `y` or `z`");
                            return None;
                        }
                    };
                    self.bump();
                    return self.mk(ExprKind::Builtin(reg, dim), pos, 1);
                }
                let (name, _) = self.ident("an expression")?;
                if matches!(self.peek_at(0), Tok::Punct("(")) {
                    self.bump();
                    let mut args = Vec::new();
                    let mut depth = 1;
                    if !self.is(")") {
                        loop {
                            let a = self.expr()?;
                            depth = depth.max(a.depth + 1);
                            args.push(a);
                            if !self.eat(",") {
                                break;
                            }
                        }
                    }
                    self.expect(")")?;
                    return self.mk(ExprKind::Call(name, args), pos, depth);
                }
                self.mk(ExprKind::Var(name), pos, 1)
            }
            _ => {
                self.error_here("an expression");
                None
            }
        }
    }
}
