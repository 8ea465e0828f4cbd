//! Typed execution errors, each with the dynamic location where it happened.

use core::fmt;
use gyre_ir::{AddrSpace, Block, FuncId, Inst};

/// Where an error happened: which thread, in which function, at which instruction.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Location {
    /// CTA index (x, y, z).
    pub ctaid: [u32; 3],
    /// Thread index within the CTA (x, y, z).
    pub tid: [u32; 3],
    /// Name of the function executing (a kernel or a device function).
    pub function: Box<str>,
    /// The function's id in the module (to find its source position).
    pub func: FuncId,
    /// The block holding the instruction.
    pub block: Block,
    /// The instruction.
    pub inst: Inst,
    /// The instruction, printed (`v7 = load.i32 v6`): what a person can find in the
    /// text, unlike the id `inst`. (A boxed `str` keeps errors small.)
    pub text: Box<str>,
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let [cx, cy, cz] = self.ctaid;
        let [tx, ty, tz] = self.tid;
        write!(
            f,
            "cta ({cx},{cy},{cz}) thread ({tx},{ty},{tz}) in @{} {}",
            self.function, self.block
        )?;
        if self.text.is_empty() {
            write!(f, " at {}", self.inst)
        } else {
            write!(f, " at `{}`", self.text)
        }
    }
}

/// Where an address falls relative to an allocation: the buffer (or module global) by
/// name and the byte offset in it, which may be negative or past the end for an access
/// out of bounds (the nearest allocation is named).
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct BufferRef {
    /// The buffer's or global's name; empty for a thread's local slots and `byval`
    /// copies.
    pub name: String,
    /// Offset of the access from the buffer's first byte.
    pub offset: i64,
    /// The buffer's size in bytes.
    pub len: u64,
}

impl fmt::Display for BufferRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.name.is_empty() {
            write!(f, "offset {} of a local slot", self.offset)?;
        } else {
            write!(f, "offset {} of buffer `{}`", self.offset, self.name)?;
        }
        write!(f, " ({} bytes)", self.len)
    }
}

/// What a failed device `assert` reported (the operands of `assert_fail`).
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct AssertFailure {
    /// The asserted expression.
    pub message: String,
    /// The source file.
    pub file: String,
    /// The source line.
    pub line: u32,
    /// The function (`__PRETTY_FUNCTION__`).
    pub function: String,
}

/// Which use of a poison value was undefined behaviour.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum PoisonUse {
    /// The condition of `brif` or the index of `br_table`.
    Branch,
    /// The address of a load, store or atomic.
    Address,
    /// The divisor of a division or remainder (or the dividend of a signed division by
    /// -1, which might be `INT_MIN`).
    Divisor,
    /// The comparison of `atomic_cas` (expected value or memory contents).
    CasCompare,
    /// The mask of a warp collective, or the lane operands of a `shfl`.
    WarpOperand,
    /// A byte of a `vprintf` format or string, an argument it prints, or an operand of
    /// `assert_fail`: output cannot show "any value".
    Printed,
}

/// Why a launch failed.
#[derive(Clone, PartialEq, Debug)]
pub enum ExecError {
    /// An access not inside one live allocation of its space.
    OutOfBounds {
        /// Where.
        loc: Location,
        /// The pointer value used (in its own space's coordinates).
        addr: u64,
        /// The space accessed.
        space: AddrSpace,
        /// Access size in bytes.
        size: u32,
        /// The allocation the address is in or nearest to.
        buffer: Option<Box<BufferRef>>,
    },
    /// An address that is not a multiple of the access size.
    Misaligned {
        /// Where.
        loc: Location,
        /// The pointer value used.
        addr: u64,
        /// Access size in bytes.
        size: u32,
        /// The allocation the address is in.
        buffer: Option<Box<BufferRef>>,
    },
    /// A store or atomic into constant memory.
    ConstWrite {
        /// Where.
        loc: Location,
        /// The pointer value used.
        addr: u64,
        /// The global written.
        buffer: Option<Box<BufferRef>>,
    },
    /// Integer division or remainder by zero.
    DivisionByZero {
        /// Where.
        loc: Location,
    },
    /// Signed `INT_MIN / -1` or `INT_MIN % -1`.
    DivisionOverflow {
        /// Where.
        loc: Location,
    },
    /// `unreachable` was executed.
    Unreachable {
        /// Where.
        loc: Location,
    },
    /// Poison used where it makes the program undefined.
    Poison {
        /// Where.
        loc: Location,
        /// Which use.
        what: PoisonUse,
    },
    /// Two threads of a CTA touched the same byte with no barrier in between, at least
    /// one of them writing non-atomically (or one atomically and one plainly).
    DataRace {
        /// The second access.
        loc: Location,
        /// The space (global or shared).
        space: AddrSpace,
        /// The pointer value of the second access.
        addr: u64,
        /// The other thread, if a single one is known (several readers are not tracked).
        other_tid: Option<[u32; 3]>,
        /// The other thread's access (its thread and instruction), when one is known.
        other: Option<Box<Location>>,
        /// The allocation accessed.
        buffer: Option<Box<BufferRef>>,
    },
    /// A barrier that not every thread of the CTA reached, or threads waiting at
    /// different barriers.
    DivergentBarrier {
        /// The barrier of the lowest-numbered waiting thread.
        loc: Location,
        /// A thread that did not join that barrier.
        other_tid: [u32; 3],
        /// Did that thread return (true) or wait at another barrier (false)?
        other_exited: bool,
    },
    /// A warp collective (`shfl`, `vote`, `warp_sync`) whose mask names a thread that
    /// waits elsewhere (another instruction, a barrier, or the same instruction with
    /// another mask), or whose mask leaves out the thread executing it.
    DivergentWarp {
        /// The collective, as reached by the lowest-numbered waiting thread of its group.
        loc: Location,
        /// The thread that did not join (the executing thread itself when its mask
        /// leaves it out).
        other_tid: [u32; 3],
        /// What was wrong.
        reason: String,
    },
    /// The launch executed more instructions than its step limit.
    StepLimit {
        /// The instruction about to execute when the budget ran out.
        loc: Location,
        /// The limit.
        limit: u64,
    },
    /// Calls nested deeper than [`MAX_CALL_DEPTH`](crate::MAX_CALL_DEPTH).
    CallDepth {
        /// The call that went too deep.
        loc: Location,
    },
    /// The IR cannot be executed (missing terminator, bad call, type the interpreter
    /// cannot handle); the verifier would reject it.
    InvalidIr {
        /// The function.
        function: String,
        /// The offending instruction, if one.
        inst: Option<Inst>,
        /// What is wrong.
        reason: String,
    },
    /// A failed device `assert` (`assert_fail`), reported as CUDA does: file, line,
    /// function, thread and the asserted expression.
    AssertFailed {
        /// Where.
        loc: Location,
        /// What the assertion reported.
        failure: Box<AssertFailure>,
    },
    /// A `vprintf` whose format cannot be printed (`%n`, an unknown conversion) or
    /// whose format, strings or arguments cannot be read.
    BadPrintf {
        /// Where.
        loc: Location,
        /// What is wrong.
        reason: String,
    },
    /// The launch itself is wrong: unknown kernel, argument mismatch, zero dimensions.
    BadLaunch {
        /// What is wrong.
        reason: String,
    },
    /// The launch needs more memory than a documented limit allows
    /// ([`Config::memory_limit`](crate::Config::memory_limit),
    /// [`Config::shared_limit`](crate::Config::shared_limit)); checked before allocating.
    ResourceLimit {
        /// The call that needed more, when the limit was reached while running.
        loc: Option<Box<Location>>,
        /// What needs how much, and the limit.
        reason: String,
    },
}

/// The kind of an [`ExecError`], without its payload (for comparing outcomes).
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
#[allow(missing_docs)]
pub enum ErrorKind {
    OutOfBounds,
    Misaligned,
    ConstWrite,
    DivisionByZero,
    DivisionOverflow,
    Unreachable,
    Poison,
    DataRace,
    DivergentBarrier,
    DivergentWarp,
    StepLimit,
    CallDepth,
    InvalidIr,
    AssertFailed,
    BadPrintf,
    BadLaunch,
    ResourceLimit,
}

impl ExecError {
    /// Where it happened, if it happened while running a thread.
    pub fn location(&self) -> Option<&Location> {
        use ExecError::*;
        match self {
            OutOfBounds { loc, .. }
            | Misaligned { loc, .. }
            | ConstWrite { loc, .. }
            | DivisionByZero { loc }
            | DivisionOverflow { loc }
            | Unreachable { loc }
            | Poison { loc, .. }
            | DataRace { loc, .. }
            | DivergentBarrier { loc, .. }
            | DivergentWarp { loc, .. }
            | StepLimit { loc, .. }
            | CallDepth { loc }
            | AssertFailed { loc, .. }
            | BadPrintf { loc, .. } => Some(loc),
            ResourceLimit { loc, .. } => loc.as_deref(),
            InvalidIr { .. } | BadLaunch { .. } => None,
        }
    }

    /// Every location the error names (the access and, for a race, the other access),
    /// to fill in or look up.
    pub fn locations_mut(&mut self) -> Vec<&mut Location> {
        use ExecError::*;
        match self {
            DataRace {
                loc,
                other: Some(o),
                ..
            } => vec![loc, &mut **o],
            ResourceLimit { loc: Some(loc), .. } => vec![&mut **loc],
            OutOfBounds { loc, .. }
            | Misaligned { loc, .. }
            | ConstWrite { loc, .. }
            | DivisionByZero { loc }
            | DivisionOverflow { loc }
            | Unreachable { loc }
            | Poison { loc, .. }
            | DataRace { loc, .. }
            | DivergentBarrier { loc, .. }
            | DivergentWarp { loc, .. }
            | StepLimit { loc, .. }
            | CallDepth { loc }
            | AssertFailed { loc, .. }
            | BadPrintf { loc, .. } => vec![loc],
            InvalidIr { .. } | BadLaunch { .. } | ResourceLimit { loc: None, .. } => Vec::new(),
        }
    }

    /// The kind of error.
    pub fn kind(&self) -> ErrorKind {
        use ExecError::*;
        match self {
            OutOfBounds { .. } => ErrorKind::OutOfBounds,
            Misaligned { .. } => ErrorKind::Misaligned,
            ConstWrite { .. } => ErrorKind::ConstWrite,
            DivisionByZero { .. } => ErrorKind::DivisionByZero,
            DivisionOverflow { .. } => ErrorKind::DivisionOverflow,
            Unreachable { .. } => ErrorKind::Unreachable,
            Poison { .. } => ErrorKind::Poison,
            DataRace { .. } => ErrorKind::DataRace,
            DivergentBarrier { .. } => ErrorKind::DivergentBarrier,
            DivergentWarp { .. } => ErrorKind::DivergentWarp,
            StepLimit { .. } => ErrorKind::StepLimit,
            CallDepth { .. } => ErrorKind::CallDepth,
            InvalidIr { .. } => ErrorKind::InvalidIr,
            AssertFailed { .. } => ErrorKind::AssertFailed,
            BadPrintf { .. } => ErrorKind::BadPrintf,
            BadLaunch { .. } => ErrorKind::BadLaunch,
            ResourceLimit { .. } => ErrorKind::ResourceLimit,
        }
    }
}

impl fmt::Display for ExecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use ExecError::*;
        match self {
            OutOfBounds {
                loc,
                addr,
                space,
                size,
                buffer,
            } => {
                write!(
                    f,
                    "{loc}: {size}-byte access at {space} address {addr:#x} is out of bounds"
                )?;
                match buffer {
                    Some(b) => write!(f, ": {b}"),
                    None => write!(f, ": no {space} allocation near it"),
                }
            }
            Misaligned {
                loc,
                addr,
                size,
                buffer,
            } => {
                write!(f, "{loc}: {size}-byte access at {addr:#x} is misaligned")?;
                at(f, buffer)
            }
            ConstWrite { loc, addr, buffer } => {
                write!(f, "{loc}: write to constant memory at {addr:#x}")?;
                at(f, buffer)
            }
            DivisionByZero { loc } => write!(f, "{loc}: division by zero"),
            DivisionOverflow { loc } => write!(f, "{loc}: signed division overflow (INT_MIN / -1)"),
            Unreachable { loc } => write!(f, "{loc}: reached unreachable"),
            Poison { loc, what } => write!(f, "{loc}: poison used as {what}"),
            DataRace {
                loc,
                space,
                addr,
                other_tid,
                other,
                buffer,
            } => {
                write!(f, "{loc}: data race on {space} address {addr:#x}")?;
                at(f, buffer)?;
                match (other, other_tid) {
                    (Some(o), _) => write!(f, "; the other access: {o}"),
                    (None, Some([x, y, z])) => write!(f, " with thread ({x},{y},{z})"),
                    (None, None) => write!(f, " with several reading threads"),
                }
            }
            DivergentBarrier {
                loc,
                other_tid: [x, y, z],
                other_exited,
            } => write!(
                f,
                "{loc}: divergent barrier: thread ({x},{y},{z}) {}",
                if *other_exited {
                    "returned"
                } else {
                    "waits at another barrier"
                }
            ),
            DivergentWarp {
                loc,
                other_tid: [x, y, z],
                reason,
            } => write!(
                f,
                "{loc}: divergent warp collective: thread ({x},{y},{z}) {reason}"
            ),
            StepLimit { loc, limit } => write!(f, "{loc}: step limit of {limit} reached"),
            CallDepth { loc } => write!(f, "{loc}: call depth limit reached"),
            InvalidIr {
                function,
                inst,
                reason,
            } => {
                write!(f, "invalid IR in @{function}")?;
                if let Some(i) = inst {
                    write!(f, " at {i}")?;
                }
                write!(f, ": {reason}")
            }
            AssertFailed { loc, failure } => {
                let AssertFailure {
                    message,
                    file,
                    line,
                    function,
                } = &**failure;
                let [bx, by, bz] = loc.ctaid;
                let [tx, ty, tz] = loc.tid;
                write!(
                    f,
                    "{file}:{line}: {function}: block: [{bx},{by},{bz}], thread: [{tx},{ty},{tz}] \
                     Assertion `{message}` failed. ({loc})"
                )
            }
            BadPrintf { loc, reason } => write!(f, "{loc}: vprintf: {reason}"),
            BadLaunch { reason } => write!(f, "bad launch: {reason}"),
            ResourceLimit { loc, reason } => {
                if let Some(loc) = loc {
                    write!(f, "{loc}: ")?;
                }
                write!(f, "resource limit: {reason}")
            }
        }
    }
}

impl std::error::Error for ExecError {}

/// ` (offset N of buffer `x` (M bytes))` when the allocation is known.
fn at(f: &mut fmt::Formatter<'_>, buffer: &Option<Box<BufferRef>>) -> fmt::Result {
    match buffer {
        Some(b) => write!(f, " ({b})"),
        None => Ok(()),
    }
}

impl fmt::Display for PoisonUse {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            PoisonUse::Branch => "a branch condition",
            PoisonUse::Address => "an address",
            PoisonUse::Divisor => "a divisor",
            PoisonUse::CasCompare => "the comparison of atomic_cas",
            PoisonUse::WarpOperand => "a warp collective's mask or lane",
            PoisonUse::Printed => "a value vprintf or assert_fail reads",
        })
    }
}
