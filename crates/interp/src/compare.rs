//! Differential testing: run a module before and after a transform on the same inputs.

use crate::error::ExecError;
use crate::memory::Memory;
use crate::{run_kernel, Launch};
use core::fmt;
use gyre_ir::Module;

/// A launch together with the memory it starts from.
#[derive(Clone)]
pub struct Inputs {
    /// Shapes, arguments and knobs.
    pub launch: Launch,
    /// The buffers before the launch.
    pub memory: Memory,
}

/// The first way two runs differ.
#[derive(Clone, Debug)]
pub enum Difference {
    /// One run failed and the other did not, or they failed with different kinds.
    Outcome {
        /// The original's error, if it failed.
        before: Option<Box<ExecError>>,
        /// The transformed module's error, if it failed.
        after: Option<Box<ExecError>>,
    },
    /// A buffer of the original run is missing after the transformed one (a global the
    /// transform removed or renamed).
    MissingBuffer {
        /// Its name.
        name: String,
    },
    /// A buffer whose size differs.
    BufferSize {
        /// Its name.
        name: String,
        /// Size in the original run.
        before: usize,
        /// Size in the transformed run.
        after: usize,
    },
    /// The `vprintf` output differs (both runs succeeded).
    Printf {
        /// Index of the first differing line (a missing line is an empty string).
        line: usize,
        /// The original's text of that line.
        before: String,
        /// The transformed module's text.
        after: String,
    },
    /// The first byte that differs; `None` stands for poison.
    Byte {
        /// The buffer.
        name: String,
        /// Byte offset in it.
        offset: usize,
        /// The original's byte (never poison: poison matches anything).
        before: u8,
        /// The transformed module's byte, `None` if poison.
        after: Option<u8>,
    },
}

impl fmt::Display for Difference {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let show = |e: &Option<Box<ExecError>>| match e {
            Some(e) => e.to_string(),
            None => "success".to_string(),
        };
        match self {
            Difference::Outcome { before, after } => {
                write!(f, "before: {}; after: {}", show(before), show(after))
            }
            Difference::MissingBuffer { name } => write!(f, "buffer {name} missing after"),
            Difference::Printf {
                line,
                before,
                after,
            } => write!(
                f,
                "printf output line {line}: {before:?} before, {after:?} after"
            ),
            Difference::BufferSize {
                name,
                before,
                after,
            } => write!(f, "buffer {name} has {before} bytes before, {after} after"),
            Difference::Byte {
                name,
                offset,
                before,
                after,
            } => match after {
                Some(a) => write!(f, "{name}[{offset}]: {before:#04x} before, {a:#04x} after"),
                None => write!(f, "{name}[{offset}]: {before:#04x} before, poison after"),
            },
        }
    }
}

impl std::error::Error for Difference {}

/// Run `kernel` of `before` and of `after` on copies of `inputs` and report the first
/// difference.
///
/// Two runs agree when both succeed and every byte of every buffer of the original run
/// is equal after the transformed one (a poison byte of the original matches anything:
/// the transform may refine poison) and `vprintf` printed the same lines (in the
/// interpreter's deterministic order), or when both fail with the same [`ErrorKind`](crate::ErrorKind) (the
/// location may differ, since transforms move code). Buffers only the transformed
/// run has are ignored.
pub fn assert_same_behaviour(
    before: &Module,
    after: &Module,
    kernel: &str,
    inputs: &Inputs,
) -> Result<(), Difference> {
    let mut m0 = inputs.memory.clone();
    let mut m1 = inputs.memory.clone();
    let r0 = run_kernel(before, kernel, &inputs.launch, &mut m0);
    let r1 = run_kernel(after, kernel, &inputs.launch, &mut m1);
    match (r0, r1) {
        (Ok(_), Ok(_)) => {
            compare_printf(&m0, &m1)?;
            compare_memory(&m0, &m1)
        }
        (Err(a), Err(b)) if a.kind() == b.kind() => Ok(()),
        (r0, r1) => Err(Difference::Outcome {
            before: r0.err().map(Box::new),
            after: r1.err().map(Box::new),
        }),
    }
}

/// Compare the `vprintf` output of two runs, line by line.
pub(crate) fn compare_printf(m0: &Memory, m1: &Memory) -> Result<(), Difference> {
    let (a, b) = (m0.printf_output(), m1.printf_output());
    for i in 0..a.len().max(b.len()) {
        let x = a.get(i).copied();
        let y = b.get(i).copied();
        if x != y {
            let text = |l: Option<&crate::PrintfLine>| l.map_or(String::new(), |l| l.text.clone());
            return Err(Difference::Printf {
                line: i,
                before: text(x),
                after: text(y),
            });
        }
    }
    Ok(())
}

/// Compare every buffer of `m0` with the same-named buffer of `m1`.
pub(crate) fn compare_memory(m0: &Memory, m1: &Memory) -> Result<(), Difference> {
    for name in m0.names() {
        let (Some(b0), Some(p0)) = (m0.bytes(name), m0.poison(name)) else {
            continue;
        };
        let (Some(b1), Some(p1)) = (m1.bytes(name), m1.poison(name)) else {
            return Err(Difference::MissingBuffer {
                name: name.to_string(),
            });
        };
        if b0.len() != b1.len() {
            return Err(Difference::BufferSize {
                name: name.to_string(),
                before: b0.len(),
                after: b1.len(),
            });
        }
        for i in 0..b0.len() {
            if !p0[i] && (p1[i] || b0[i] != b1[i]) {
                return Err(Difference::Byte {
                    name: name.to_string(),
                    offset: i,
                    before: b0[i],
                    after: (!p1[i]).then_some(b1[i]),
                });
            }
        }
    }
    Ok(())
}
