//! The reference interpreter for Gyre IR: the oracle every transform is tested against.
//!
//! [`run_kernel`] executes one kernel of a [`Module`] over a grid of CTAs. The threads of
//! a CTA run cooperatively: each runs until it reaches a `barrier` or returns, then the
//! next; when all have stopped they must all wait at the same barrier (which then
//! releases them) or all have returned. A barrier only part of the CTA reaches is a
//! [`ExecError::DivergentBarrier`], never a hang. CTAs run one after another.
//!
//! Every function the kernel can reach is first decoded into a flat array of compact
//! instructions over a register file indexed by value number (block parameters are
//! registers; branch arguments become parallel copies on the edge), so the inner loop
//! is one `match` per IR instruction.
//!
//! # Memory model
//!
//! Pointers are 64-bit. Each address space is a set of live allocations separated by
//! unmapped guard bytes; an access must lie entirely inside one live allocation of its
//! space ([`ExecError::OutOfBounds`]) and be a multiple of its size
//! ([`ExecError::Misaligned`]).
//!
//! - **global**: the caller's named buffers in [`Memory`], plus the module's globals of
//!   the global space (added under their names, zeroed or from their initializer, unless
//!   the caller already made a buffer of that name, which then stands for the global).
//! - **const**: the module's const globals, from their initializers; read-only
//!   ([`ExecError::ConstWrite`]).
//! - **host-initialised** (`externally_initialized`) globals, const or global: their
//!   contents are an input of the launch, the caller's buffer of the same name (copied
//!   for const). A missing buffer is [`ExecError::BadLaunch`], never zeros: the host
//!   writes such globals (`cudaMemcpyToSymbol`) before launching.
//! - **shared**: the module's shared globals, fresh for every CTA and uninitialized
//!   (poison) unless they have an initializer. The `extern` shared arrays all start at
//!   one block of [`Launch::dynamic_shared_bytes`] bytes (CUDA's dynamic shared memory).
//! - **local**: each thread's slots, fresh (poison) at each call and freed at return.
//!
//! A generic pointer is the address inside a window whose top bits tell the space
//! (global `0x0…`, const `0x1…`, shared `0x2…`, local `0x3…` in bits 60–63); a pointer
//! of a specific space holds the offset inside its window (for global, the same value).
//! `addrspace_cast` adds or removes the window base; converting a generic pointer that
//! is outside the target window gives poison.
//!
//! # Poison
//!
//! Every register and every byte of memory carries a poison flag. Poison comes from
//! `nsw`/`nuw`/`exact` violations, shifts by at least the width, out-of-range or NaN
//! `fptosi`/`fptoui`, bad generic-to-specific casts, uninitialized shared and local
//! memory, and undefined values. It propagates through arithmetic, comparisons, casts
//! and `select` (a poison condition poisons the result; the unselected arm does not),
//! through stores into memory bytes and back through loads. `freeze` turns poison
//! into 0. Branching on poison, a poison address, a poison divisor and a poison
//! `atomic_cas` comparison are errors ([`ExecError::Poison`]).
//!
//! # Device printf and assert
//!
//! `vprintf` formats with C's rules (module `printf`) and appends the text to
//! [`Memory::printf_output`], ordered per launch by CTA, then linear thread id, then
//! program order, whatever the [`Schedule`]. `assert_fail` ends the launch with
//! [`ExecError::AssertFailed`]; what was printed before stays in the memory.
//!
//! # Races and determinism
//!
//! With [`Config::detect_races`] (the default), every byte of global and shared memory
//! remembers its last writer and its reader(s) with the barrier epoch of the access; two
//! threads of one CTA touching a byte in the same epoch, at least one writing (atomics
//! conflict only with plain accesses), is a [`ExecError::DataRace`]. A race-free kernel
//! therefore gives the same memory whatever the [`Schedule`]. docs/ir.md
//! (`## Semantics`) is the full statement of the semantics.
//!
//! # Example
//!
//! A front end checks what it compiled against a plain implementation on the same
//! inputs (docs/frontend.md):
//!
//! ```
//! use gyre_interp::{run_kernel, Arg, Launch, Memory};
//! use gyre_ir::builder::{FunctionBuilder, InstBuilder};
//! use gyre_ir::{AddrSpace, FuncKind, Function, Module, Signature, SpecialReg, Type};
//! // kernel scale(x: *f32, a: f32) { let i = ctaid.x * ntid.x + tid.x; x[i] = a * x[i]; }
//! let mut m = Module::new();
//! let sig = Signature { params: vec![Type::Ptr(AddrSpace::Global), Type::F32], ret: None };
//! let k = m.push_function(Function::new("scale", FuncKind::Kernel, sig));
//! let mut b = FunctionBuilder::new(&mut m.functions[k.id]);
//! let entry = b.create_block();
//! b.append_block_params_for_function_params(entry);
//! b.switch_to_block(entry);
//! b.seal_block(entry);
//! let (x, a) = (b.block_params(entry)[0], b.block_params(entry)[1]);
//! let (cta, ntid, tid) =
//!     (b.sreg(SpecialReg::CtaidX), b.sreg(SpecialReg::NtidX), b.sreg(SpecialReg::TidX));
//! let base = b.imul(cta, ntid);
//! let i = b.iadd(base, tid);
//! let p = b.ptradd(x, i, 4);
//! let xi = b.load(Type::F32, p);
//! let y = b.fmul(a, xi);
//! b.store(y, p);
//! b.ret(None);
//! b.finalize().unwrap();
//! gyre_ir::verifier::verify_module(&m).unwrap();
//! let data: Vec<f32> = (0..64).map(|k| k as f32).collect();
//! let mut mem = Memory::new();
//! mem.alloc_from("x", &data);
//! let args = vec![Arg::Buffer("x".into(), 0), Arg::F32(0.5)];
//! run_kernel(&m, "scale", &Launch::new([2, 1, 1], [32, 1, 1], args), &mut mem).unwrap();
//! let want: Vec<f32> = data.iter().map(|v| 0.5 * v).collect();
//! assert_eq!(mem.read::<f32>("x").unwrap(), want);
//! ```
#![warn(missing_docs)]

mod compare;
mod decode;
mod error;
mod exec;
mod inputs;
mod memory;
mod printf;
pub mod semantics;

pub use compare::{assert_same_behaviour, Difference, Inputs};
pub use error::{AssertFailure, BufferRef, ErrorKind, ExecError, Location, PoisonUse};
pub use inputs::{random_inputs, random_inputs_for_shape, MAX_RANDOM_CTA, MAX_RANDOM_GRID};
pub use memory::{
    split_generic, window_base, Element, Memory, PrintfLine, GLOBAL_START, GUARD, WINDOW,
};

use gyre_ir::Module;

/// How deep device-function calls may nest before [`ExecError::CallDepth`].
pub const MAX_CALL_DEPTH: usize = 1024;

/// The default [`Config::step_limit`]: IR instructions per launch, over all threads.
pub const DEFAULT_STEP_LIMIT: u64 = 200_000_000;

/// A kernel argument.
#[derive(Clone, PartialEq, Debug)]
pub enum Arg {
    /// An integer (its low bits for narrower parameters).
    Int(u64),
    /// An `f32`.
    F32(f32),
    /// An `f64`.
    F64(f64),
    /// A raw pointer value.
    Ptr(u64),
    /// The address of a named buffer of [`Memory`] plus a byte offset.
    Buffer(String, u64),
    /// The bytes of a kernel's `byval` parameter: each thread's parameter points to
    /// its own fresh local copy of them (exactly the declared size).
    Bytes(Vec<u8>),
}

impl core::fmt::Display for Arg {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Arg::Int(x) => write!(f, "the integer {x}"),
            Arg::F32(x) => write!(f, "the f32 {x}"),
            Arg::F64(x) => write!(f, "the f64 {x}"),
            Arg::Ptr(p) => write!(f, "the pointer {p:#x}"),
            Arg::Buffer(name, 0) => write!(f, "the address of buffer `{name}`"),
            Arg::Buffer(name, off) => write!(f, "the address of buffer `{name}` + {off}"),
            Arg::Bytes(b) => write!(f, "{} bytes", b.len()),
        }
    }
}

impl Arg {
    /// The address of the start of a named buffer.
    pub fn buffer(name: &str) -> Arg {
        Arg::Buffer(name.to_string(), 0)
    }
}

/// In which order the threads of a CTA run between barriers.
#[derive(Copy, Clone, PartialEq, Eq, Debug, Default)]
pub enum Schedule {
    /// Increasing linear thread id.
    #[default]
    Forward,
    /// Decreasing linear thread id.
    Reverse,
    /// A pseudo-random permutation per round, from this seed.
    Shuffle(u64),
}

/// Execution knobs.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub struct Config {
    /// Most IR instructions the whole launch may execute ([`DEFAULT_STEP_LIMIT`]).
    pub step_limit: u64,
    /// Thread order ([`Schedule::Forward`]).
    pub schedule: Schedule,
    /// Check for data races in global and shared memory (on by default; off makes
    /// memory accesses cheaper, for benchmarks).
    pub detect_races: bool,
    /// Most bytes the launch may hold at once ([`DEFAULT_MEMORY_LIMIT`]): the caller's
    /// buffers and the module's globals, one CTA's shared memory and every thread's
    /// local frames, with the interpreter's per-byte bookkeeping (a poison flag per byte,
    /// and a race shadow of [`SHADOW_BYTES`] per byte of global and shared memory when
    /// races are checked). Checked before allocating: exceeding it is
    /// [`ExecError::ResourceLimit`], never an allocation failure.
    pub memory_limit: u64,
    /// Most bytes of shared memory per CTA, static arrays plus
    /// [`Launch::dynamic_shared_bytes`] ([`DEFAULT_SHARED_LIMIT`]).
    pub shared_limit: u64,
}

/// The default [`Config::memory_limit`]: 4 GiB.
pub const DEFAULT_MEMORY_LIMIT: u64 = 4 << 30;

/// The default [`Config::shared_limit`]: 227 KiB, the most shared memory one CTA may
/// have on any GPU Gyre targets (sm_90; sm_80 allows 163 KiB, sm_86/89 99 KiB, sm_75
/// 64 KiB, sm_70 96 KiB, each counting dynamic shared memory; statically declared
/// arrays are limited to 48 KiB everywhere, which `gyre compile` checks).
pub const DEFAULT_SHARED_LIMIT: u64 = 227 << 10;

/// Bytes of race-detection state per byte of global and shared memory.
pub const SHADOW_BYTES: u64 = core::mem::size_of::<memory::Shadow>() as u64;

impl Default for Config {
    fn default() -> Self {
        Config {
            step_limit: DEFAULT_STEP_LIMIT,
            schedule: Schedule::Forward,
            detect_races: true,
            memory_limit: DEFAULT_MEMORY_LIMIT,
            shared_limit: DEFAULT_SHARED_LIMIT,
        }
    }
}

/// A launch configuration: grid and CTA shapes, arguments and knobs.
#[derive(Clone, PartialEq, Debug)]
pub struct Launch {
    /// CTAs per grid dimension (x, y, z); each at least 1.
    pub grid: [u32; 3],
    /// Threads per CTA dimension (x, y, z); each at least 1.
    pub block: [u32; 3],
    /// One argument per kernel parameter.
    pub args: Vec<Arg>,
    /// Bytes of dynamic shared memory per CTA (the third launch parameter of
    /// `<<<grid, block, bytes>>>`): the storage of the module's `extern` shared arrays,
    /// which all start at its first byte. 0 by default.
    pub dynamic_shared_bytes: u32,
    /// Knobs.
    pub config: Config,
}

impl Launch {
    /// A launch with default knobs.
    pub fn new(grid: [u32; 3], block: [u32; 3], args: Vec<Arg>) -> Launch {
        Launch {
            grid,
            block,
            args,
            dynamic_shared_bytes: 0,
            config: Config::default(),
        }
    }

    /// A 1-D launch of `ctas` CTAs of `threads` threads.
    pub fn linear(ctas: u32, threads: u32, args: Vec<Arg>) -> Launch {
        Launch::new([ctas, 1, 1], [threads, 1, 1], args)
    }
}

/// What a successful launch did. The written memory is in the caller's [`Memory`].
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub struct Outcome {
    /// IR instructions executed over all threads.
    pub steps: u64,
    /// Barrier releases over all CTAs.
    pub barriers: u64,
    /// CTAs run.
    pub ctas: u64,
}

/// Run the kernel named `kernel` of `module` over the launch, reading and writing the
/// buffers of `memory`.
///
/// On error, `memory` holds whatever was written before the error.
///
/// ```
/// use gyre_interp::{run_kernel, Arg, Launch, Memory};
/// let module = gyre_ir::Module::new();
/// let mut mem = Memory::new();
/// let err = run_kernel(&module, "missing", &Launch::linear(1, 1, vec![]), &mut mem);
/// assert!(err.is_err());
/// ```
pub fn run_kernel(
    module: &Module,
    kernel: &str,
    launch: &Launch,
    memory: &mut Memory,
) -> Result<Outcome, ExecError> {
    exec::run(module, kernel, launch, memory).map_err(|mut e| {
        // Print the instructions an error names, once, now that it is known which.
        for loc in e.locations_mut() {
            if module.functions.is_valid(loc.func) {
                let func = &module.functions[loc.func];
                if func.dfg.inst_is_valid(loc.inst) {
                    let mut text = String::new();
                    let _ = gyre_ir::write::write_inst(&mut text, func, Some(module), loc.inst);
                    loc.text = text.into();
                }
            }
        }
        e
    })
}
