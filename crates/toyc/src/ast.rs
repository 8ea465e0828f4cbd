//! The syntax tree. Every expression and declaration carries a [`NodeId`]; the type
//! checker's results (types, resolved names) are side tables indexed by it.

use crate::diag::Pos;

/// Index of an expression or declaration in the checker's side tables.
pub type NodeId = u32;

/// A numeric type.
#[derive(Copy, Clone, PartialEq, Eq, Debug, Hash)]
pub enum Scalar {
    /// 32-bit signed integer.
    I32,
    /// 64-bit signed integer.
    I64,
    /// 32-bit unsigned integer.
    U32,
    /// IEEE binary32.
    F32,
    /// IEEE binary64.
    F64,
}

impl Scalar {
    /// `f32` or `f64`?
    pub fn is_float(self) -> bool {
        matches!(self, Scalar::F32 | Scalar::F64)
    }

    /// Unsigned integer?
    pub fn is_unsigned(self) -> bool {
        self == Scalar::U32
    }

    /// Size in bytes.
    pub fn bytes(self) -> u32 {
        match self {
            Scalar::I32 | Scalar::U32 | Scalar::F32 => 4,
            Scalar::I64 | Scalar::F64 => 8,
        }
    }

    /// The source spelling.
    pub fn name(self) -> &'static str {
        match self {
            Scalar::I32 => "i32",
            Scalar::I64 => "i64",
            Scalar::U32 => "u32",
            Scalar::F32 => "f32",
            Scalar::F64 => "f64",
        }
    }

    /// The IR type.
    pub fn ir(self) -> gyre_ir::Type {
        use gyre_ir::Type;
        match self {
            Scalar::I32 | Scalar::U32 => Type::I32,
            Scalar::I64 => Type::I64,
            Scalar::F32 => Type::F32,
            Scalar::F64 => Type::F64,
        }
    }
}

/// A type of the language.
#[derive(Copy, Clone, PartialEq, Eq, Debug, Hash)]
pub enum Ty {
    /// A number.
    Num(Scalar),
    /// `bool`: comparison results and conditions.
    Bool,
    /// `*T`: a pointer into global memory.
    Ptr(Scalar),
    /// No value (a call of a function without a result, `sync()`).
    Void,
    /// The type of an expression that had an error (suppresses follow-up errors).
    Error,
}

impl Ty {
    /// The source spelling.
    pub fn name(self) -> String {
        match self {
            Ty::Num(s) => s.name().to_string(),
            Ty::Bool => "bool".to_string(),
            Ty::Ptr(s) => format!("*{}", s.name()),
            Ty::Void => "no value".to_string(),
            Ty::Error => "<error>".to_string(),
        }
    }

    /// The IR type (`None` for `Void` and `Error`).
    pub fn ir(self) -> Option<gyre_ir::Type> {
        use gyre_ir::{AddrSpace, Type};
        match self {
            Ty::Num(s) => Some(s.ir()),
            Ty::Bool => Some(Type::I1),
            Ty::Ptr(_) => Some(Type::Ptr(AddrSpace::Global)),
            Ty::Void | Ty::Error => None,
        }
    }
}

/// A special register: `tid`, `ntid`, `ctaid`, `nctaid`.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum Reg {
    /// Thread index in the CTA.
    Tid,
    /// CTA size.
    Ntid,
    /// CTA index in the grid.
    Ctaid,
    /// Grid size.
    Nctaid,
}

/// Unary operators.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum UnOp {
    /// `-x`
    Neg,
    /// `!b`
    Not,
    /// `~i`
    BitNot,
}

/// Binary operators.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum BinOp {
    /// `+`
    Add,
    /// `-`
    Sub,
    /// `*`
    Mul,
    /// `/`
    Div,
    /// `%`
    Rem,
    /// `&`
    And,
    /// `|`
    Or,
    /// `^`
    Xor,
    /// `<<`
    Shl,
    /// `>>`
    Shr,
    /// `==`
    Eq,
    /// `!=`
    Ne,
    /// `<`
    Lt,
    /// `<=`
    Le,
    /// `>`
    Gt,
    /// `>=`
    Ge,
    /// `&&` (short-circuit)
    LogAnd,
    /// `||` (short-circuit)
    LogOr,
}

impl BinOp {
    /// A comparison (result `bool`)?
    pub fn is_comparison(self) -> bool {
        matches!(
            self,
            BinOp::Eq | BinOp::Ne | BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge
        )
    }

    /// The source spelling.
    pub fn text(self) -> &'static str {
        match self {
            BinOp::Add => "+",
            BinOp::Sub => "-",
            BinOp::Mul => "*",
            BinOp::Div => "/",
            BinOp::Rem => "%",
            BinOp::And => "&",
            BinOp::Or => "|",
            BinOp::Xor => "^",
            BinOp::Shl => "<<",
            BinOp::Shr => ">>",
            BinOp::Eq => "==",
            BinOp::Ne => "!=",
            BinOp::Lt => "<",
            BinOp::Le => "<=",
            BinOp::Gt => ">",
            BinOp::Ge => ">=",
            BinOp::LogAnd => "&&",
            BinOp::LogOr => "||",
        }
    }
}

/// An expression.
#[derive(Clone, Debug)]
pub struct Expr {
    /// What.
    pub kind: ExprKind,
    /// Where (the operator for binary expressions).
    pub pos: Pos,
    /// Key of the checker's side tables.
    pub id: NodeId,
    /// Nesting depth of the tree below (1 for a leaf): bounded by the parser, so every
    /// later walk over the tree has a bounded native stack.
    pub depth: u32,
}

/// The kinds of expression.
#[derive(Clone, Debug)]
pub enum ExprKind {
    /// An integer literal and its optional suffix type.
    Int(u64, Option<Scalar>),
    /// A float literal and its optional suffix type.
    Float(f64, Option<Scalar>),
    /// `true` / `false`.
    Bool(bool),
    /// A variable, parameter or shared array.
    Var(String),
    /// `tid.x` etc.: the register and the dimension (0 = x).
    Builtin(Reg, u8),
    /// A unary operation.
    Unary(UnOp, Box<Expr>),
    /// A binary operation.
    Binary(BinOp, Box<Expr>, Box<Expr>),
    /// `e as T`.
    Cast(Box<Expr>, Scalar),
    /// `base[index]`.
    Index(Box<Expr>, Box<Expr>),
    /// `name(args)`: a device function or a built-in function.
    Call(String, Vec<Expr>),
}

/// A `{ ... }` block.
pub type Block = Vec<Stmt>;

/// A statement.
#[derive(Clone, Debug)]
pub struct Stmt {
    /// What.
    pub kind: StmtKind,
    /// Where.
    pub pos: Pos,
}

/// The kinds of statement.
#[derive(Clone, Debug)]
pub enum StmtKind {
    /// `let name [: T] = init;` (the id keys the declared variable).
    Let {
        /// The variable.
        name: String,
        /// The annotation.
        ty: Option<Ty>,
        /// The initial value.
        init: Expr,
        /// The declaration's id.
        id: NodeId,
    },
    /// `shared name: [T; N];` (kernels only).
    Shared {
        /// The array.
        name: String,
        /// Element type.
        elem: Scalar,
        /// Element count.
        count: u32,
        /// The declaration's id.
        id: NodeId,
    },
    /// `place = value;` or `place op= value;`.
    Assign(Expr, Option<BinOp>, Expr),
    /// An expression evaluated for its effect (a call).
    Expr(Expr),
    /// `if cond { .. } else { .. }` (`else if` is an else block holding one `if`).
    If(Expr, Block, Option<Block>),
    /// `while cond { .. }`.
    While(Expr, Block),
    /// `for name in lo..hi { .. }` (the id keys the loop variable).
    For {
        /// The loop variable.
        name: String,
        /// First value.
        lo: Expr,
        /// Bound (exclusive), evaluated once.
        hi: Expr,
        /// The body.
        body: Block,
        /// The loop variable's id.
        id: NodeId,
    },
    /// `break;`
    Break,
    /// `continue;`
    Continue,
    /// `return [value];`
    Return(Option<Expr>),
    /// A nested `{ .. }`.
    Block(Block),
}

/// A kernel or a device function.
#[derive(Clone, Debug)]
pub struct Func {
    /// `kernel` (an entry point) or `fn` (a device function).
    pub is_kernel: bool,
    /// The name.
    pub name: String,
    /// Where the name is.
    pub pos: Pos,
    /// Parameters: name, type, position, id.
    pub params: Vec<(String, Ty, Pos, NodeId)>,
    /// The result type of a device function.
    pub ret: Option<Scalar>,
    /// The body.
    pub body: Block,
}

/// A parsed program.
#[derive(Clone, Debug, Default)]
pub struct Program {
    /// The functions, in source order.
    pub funcs: Vec<Func>,
    /// One more than the highest node id used.
    pub num_nodes: u32,
}
