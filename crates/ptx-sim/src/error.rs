//! Error types for parsing and execution.

use std::fmt;

/// A syntax or semantic error found while parsing PTX text.
///
/// Displayed as `line:col: message` (both 1-based).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseError {
    /// 1-based source line.
    pub line: u32,
    /// 1-based source column (in characters).
    pub col: u32,
    /// Human-readable description.
    pub message: String,
}

impl ParseError {
    pub(crate) fn new(line: u32, col: u32, message: impl Into<String>) -> Self {
        ParseError {
            line,
            col,
            message: message.into(),
        }
    }
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: {}", self.line, self.col, self.message)
    }
}

impl std::error::Error for ParseError {}

/// A PTX state space, as reported in memory errors.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Space {
    /// `.global` memory (the caller's [`crate::Memory`]).
    Global,
    /// `.shared` memory of the current CTA.
    Shared,
    /// `.local` memory of the current thread.
    Local,
    /// `.const` memory of the module.
    Const,
    /// `.param` space of the current function frame.
    Param,
    /// Generic addressing (no explicit state space).
    Generic,
}

impl fmt::Display for Space {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = match self {
            Space::Global => "global",
            Space::Shared => "shared",
            Space::Local => "local",
            Space::Const => "const",
            Space::Param => "param",
            Space::Generic => "generic",
        };
        f.write_str(s)
    }
}

/// Where in the simulated program an error happened.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ErrorLocation {
    /// `%ctaid` of the faulting thread.
    pub ctaid: [u32; 3],
    /// `%tid` of the faulting thread.
    pub tid: [u32; 3],
    /// Name of the function (kernel or device function) being executed.
    pub function: String,
    /// Index of the instruction within the function's decoded body.
    pub inst_index: usize,
    /// 1-based source line of the instruction.
    pub line: u32,
}

/// What a failed device `assert` (`__assertfail`) reported.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AssertFailure {
    /// The asserted expression.
    pub message: String,
    /// The source file.
    pub file: String,
    /// The source line.
    pub line: u32,
    /// The function.
    pub function: String,
}

/// The kind of a runtime failure.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SimErrorKind {
    /// No `.entry` function with this name exists in the module.
    UnknownKernel(String),
    /// Wrong number of kernel parameters.
    ParamCount {
        /// Number of parameters the kernel declares.
        expected: usize,
        /// Number of values supplied.
        got: usize,
    },
    /// A kernel parameter value has the wrong byte size.
    ParamSize {
        /// Parameter index (declaration order).
        index: usize,
        /// Declared size in bytes.
        expected: usize,
        /// Supplied size in bytes.
        got: usize,
    },
    /// Launch configuration is invalid (zero dimension, too many threads, ...).
    InvalidLaunch(String),
    /// A memory access touched bytes outside any valid object of the space.
    OutOfBounds {
        /// State space the address resolved to.
        space: Space,
        /// Address used by the instruction (in the instruction's own space).
        addr: u64,
        /// Access size in bytes.
        size: u32,
    },
    /// A memory access was not naturally aligned.
    Misaligned {
        /// State space the address resolved to.
        space: Space,
        /// Address used by the instruction.
        addr: u64,
        /// Required alignment (access size) in bytes.
        size: u32,
    },
    /// A store or atomic targeted read-only (`.const`) memory.
    ReadOnly {
        /// Address used by the instruction.
        addr: u64,
    },
    /// A `bar.sync` was reached by only part of the CTA (the rest exited).
    DivergentBarrier {
        /// Threads waiting at the barrier.
        waiting: u32,
        /// Threads that had already exited.
        exited: u32,
    },
    /// A warp collective (`shfl.sync`, `vote.sync`, `bar.warp.sync`) whose member mask
    /// names a non-exited thread that waits elsewhere or with another mask, or leaves out
    /// the executing thread.
    DivergentWarp {
        /// What was wrong.
        reason: String,
    },
    /// The configured instruction budget was exhausted.
    StepLimitExceeded {
        /// The limit that was exceeded.
        limit: u64,
    },
    /// A `trap` instruction was executed.
    Trap,
    /// Too many nested `call`s.
    CallDepthExceeded {
        /// The configured maximum depth.
        limit: usize,
    },
    /// The thread's local-memory stack (all active frames) exceeded 16 MiB.
    LocalStackOverflow {
        /// Bytes the stack would have needed.
        bytes: usize,
    },
    /// A call targets a function that has no body.
    MissingBody(String),
    /// `__assertfail` was called: a failed device `assert`.
    AssertFailed(Box<AssertFailure>),
    /// A `vprintf` whose format cannot be printed or whose inputs cannot be read.
    BadPrintf(String),
}

impl fmt::Display for SimErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SimErrorKind::UnknownKernel(k) => write!(f, "unknown kernel '{k}'"),
            SimErrorKind::ParamCount { expected, got } => {
                write!(f, "kernel expects {expected} parameters, got {got}")
            }
            SimErrorKind::ParamSize {
                index,
                expected,
                got,
            } => {
                write!(f, "parameter {index} is {expected} bytes, value has {got}")
            }
            SimErrorKind::InvalidLaunch(m) => write!(f, "invalid launch: {m}"),
            SimErrorKind::OutOfBounds { space, addr, size } => {
                write!(
                    f,
                    "out-of-bounds {space} access of {size} bytes at {addr:#x}"
                )
            }
            SimErrorKind::Misaligned { space, addr, size } => {
                write!(f, "misaligned {space} access of {size} bytes at {addr:#x}")
            }
            SimErrorKind::ReadOnly { addr } => write!(f, "write to read-only memory at {addr:#x}"),
            SimErrorKind::DivergentBarrier { waiting, exited } => write!(
                f,
                "divergent barrier: {waiting} threads waiting, {exited} threads exited"
            ),
            SimErrorKind::DivergentWarp { reason } => {
                write!(f, "divergent warp collective: {reason}")
            }
            SimErrorKind::StepLimitExceeded { limit } => {
                write!(f, "step limit of {limit} instructions exceeded")
            }
            SimErrorKind::Trap => write!(f, "trap executed"),
            SimErrorKind::CallDepthExceeded { limit } => {
                write!(f, "call depth limit {limit} exceeded")
            }
            SimErrorKind::LocalStackOverflow { bytes } => {
                write!(f, "local memory stack overflow ({bytes} bytes)")
            }
            SimErrorKind::MissingBody(n) => write!(f, "function '{n}' has no body"),
            SimErrorKind::AssertFailed(a) => write!(
                f,
                "{}:{}: {}: Assertion `{}` failed.",
                a.file, a.line, a.function, a.message
            ),
            SimErrorKind::BadPrintf(r) => write!(f, "vprintf: {r}"),
        }
    }
}

/// A runtime failure of [`crate::run_kernel`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SimError {
    /// What went wrong.
    pub kind: SimErrorKind,
    /// Faulting thread and instruction, if the error happened while executing.
    pub location: Option<ErrorLocation>,
}

impl SimError {
    pub(crate) fn global(kind: SimErrorKind) -> Self {
        SimError {
            kind,
            location: None,
        }
    }
}

impl fmt::Display for SimError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.location {
            Some(l) => {
                let [cx, cy, cz] = l.ctaid;
                let [tx, ty, tz] = l.tid;
                write!(
                    f,
                    "{} (in {} at instruction {} line {}, ctaid ({cx},{cy},{cz}) tid ({tx},{ty},{tz}))",
                    self.kind, l.function, l.inst_index, l.line
                )
            }
            None => write!(f, "{}", self.kind),
        }
    }
}

impl std::error::Error for SimError {}

/// Error from host-side [`crate::Memory`] accesses.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MemoryError {
    /// Start address of the failed access.
    pub addr: u64,
    /// Length in bytes of the failed access.
    pub len: usize,
}

impl fmt::Display for MemoryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "host access of {} bytes at {:#x} is outside any allocation",
            self.len, self.addr
        )
    }
}

impl std::error::Error for MemoryError {}
