//! # gyre-ptx-sim
//!
//! An independent simulator for a subset of NVIDIA PTX text, written from the
//! PTX ISA specification. It shares no code with the rest of Gyre and serves
//! as a checker for Gyre's PTX back end: parse the emitted text with
//! [`parse`], allocate buffers in a [`Memory`], and run a kernel with
//! [`run_kernel`]. [`run_kernel_profiled`] also counts each instruction's executions
//! ([`Profile`]), which the corpus report groups by opcode to show what Gyre's PTX
//! executes in excess of llc's.
//!
//! ```
//! use gyre_ptx_sim::{parse, run_kernel, Launch, Memory, ParamValue};
//! let m = parse(r#"
//!     .version 7.0
//!     .target sm_70
//!     .address_size 64
//!     .visible .entry inc(.param .u64 p) {
//!         .reg .b32 %r<3>; .reg .b64 %rd<4>;
//!         ld.param.u64 %rd1, [p];
//!         cvta.to.global.u64 %rd2, %rd1;
//!         mov.u32 %r1, %tid.x;
//!         mul.wide.u32 %rd3, %r1, 4;
//!         add.s64 %rd2, %rd2, %rd3;
//!         ld.global.u32 %r2, [%rd2];
//!         add.s32 %r2, %r2, 1;
//!         st.global.u32 [%rd2], %r2;
//!         ret;
//!     }"#).unwrap();
//! let mut mem = Memory::new();
//! let buf = mem.alloc_u32s(&[1, 2, 3, 4]);
//! run_kernel(&m, "inc", &Launch::linear(1, 4), &[ParamValue::U64(buf)], &mut mem).unwrap();
//! assert_eq!(mem.read_u32s(buf, 4).unwrap(), vec![2, 3, 4, 5]);
//! ```
//!
//! ## Supported PTX
//!
//! * Module directives `.version`, `.target`, `.address_size 64` (other
//!   address sizes are rejected), `.file`/`.loc`/`.pragma`/`.section` (ignored);
//!   `//` and `/* */` comments.
//! * Module- and function-scope variables in `.global`, `.shared`, `.const`
//!   (and `.local`/`.param` inside functions) with `.align`, `.v2`/`.v4`,
//!   multi-dimensional arrays and numeric initializers (integers, `0f`/`0d`
//!   hex floats, decimal floats); `.extern .shared` unsized arrays are the
//!   dynamic shared memory ([`RunOptions::dynamic_shared_bytes`]).
//! * `.entry` and `.func` (optionally with one return `.param`), prototypes,
//!   `.param` formals with `.align`/`.ptr` attributes and array sizes,
//!   performance directives (`.maxntid` etc., ignored).
//! * `.reg` declarations (`%r<N>` ranges and single names), labels, `{ }`
//!   scopes, guards `@%p` / `@!%p`.
//! * Instructions: `mov` (registers, immediates, special registers, variable
//!   addresses, vector pack/unpack `{a,b}`), `ld`/`ldu`/`st` in every state
//!   space including generic, with `.v2`/`.v4` and any cache/volatile/ordering
//!   qualifiers (ignored), `cvta` (to and from generic for global, shared,
//!   local, const), integer `add sub mul{.lo,.hi,.wide} mul24{.lo,.hi} mad{.lo,.hi,.wide}
//!   div rem abs neg min max and or xor not cnot shl shr popc clz brev bfind
//!   bfe bfi prmt` (default mode), `shf.{l,r}.{wrap,clamp}.b32` and `add.sat`/`sub.sat` on `.s32`; float
//!   `add sub mul div fma mad sqrt rcp rsqrt abs neg min max (.NaN) copysign
//!   sin cos ex2 lg2 tanh testp` on `.f32`/`.f64`; `setp` (all comparisons,
//!   `p|q` destinations, `.and/.or/.xor` combination), `set`, `selp`, `cvt`
//!   between all integer and float types including `.f16`, with every
//!   rounding mode and `.sat`; `atom` and `red` (`add min max exch cas and or
//!   xor inc dec`) on global, shared and generic addresses, with any `.sem` /
//!   `.scope` qualifier; `bar.sync` / `barrier.sync`; `membar`/`fence` (no-ops:
//!   execution is sequentially consistent); `shfl.sync.{up,down,bfly,idx}.b32`,
//!   `vote.sync.{any,all,uni}.pred` / `vote.sync.ballot.b32` (with `!p`),
//!   `bar.warp.sync` (see the execution model); `bra` / `bra.uni`; `call`
//!   (direct, with or without return value, `.param` or register arguments);
//!   `ret`, `exit`, `trap`. The CUDA system calls `vprintf` (output in
//!   [`Memory::printf_output`]) and `__assertfail` (ends the launch with
//!   [`SimErrorKind::AssertFailed`]), declared `.extern .func` without a body.
//! * Special registers `%tid`, `%ntid`, `%ctaid`, `%nctaid` (`.x/.y/.z`),
//!   `%laneid`, `%warpid`, `%nwarpid`, `%lanemask_*`, `%clock`, `%clock64`,
//!   `%smid`, `%nsmid`, `%gridid`, and the constant `WARP_SZ`.
//!
//! ## Not supported
//!
//! `shfl`/`vote` without `.sync` (pre-sm_70), `shfl` with a predicate
//! destination, `match`, `redux`, `activemask`, `bar.arrive`/`bar.red` (and
//! the thread count of `bar.sync` is ignored), indirect calls and `brx.idx`, carry chains
//! (`.cc`, `addc`), `.f16`/`.bf16`/`.f16x2` arithmetic (conversions to and
//! from `.f16` are supported), textures/surfaces, `.reg` vector registers,
//! `cvta.param`, tensor-core and async-copy instructions, address
//! initializers (`generic(var)`), clusters.
//!
//! ## Semantics chosen where PTX leaves freedom
//!
//! * Integer division by zero yields all ones for the quotient (`-1` for
//!   signed types) and the dividend for the remainder; `INT_MIN / -1` wraps.
//! * `.ftz` is ignored (subnormals are preserved); `.approx` float operations
//!   are computed with full precision; NaN results of `.f32` arithmetic are
//!   the canonical NaN `0x7FFFFFFF`. Directed rounding (`.rz/.rm/.rp`) is
//!   exact for add/sub/mul/div/sqrt/cvt; for `fma` it is computed via a
//!   wider intermediate and may be off by one ulp in rare double-rounding cases.
//! * Shared, local and param memory and registers start zeroed.
//! * `%clock`/`%clock64` return the number of instructions executed so far.
//! * Limits: 512 KiB of `.local` per function, 16 MiB local stack per thread,
//!   1 MiB static `.shared`, 1 MiB `.const`, 1024 threads per CTA.
//! * Unknown registers, labels and call targets are parse errors, not runtime errors.
//!
//! ## Execution model
//!
//! CTAs run one after another. Within a CTA, threads run cooperatively in
//! linear-thread-id order: each runs until `bar.sync` or exit. When every
//! thread waits at a barrier, all continue; if some threads exited while
//! others wait, the launch fails with [`SimErrorKind::DivergentBarrier`].
//! A thread also stops at a warp collective (`shfl.sync`, `vote.sync`,
//! `bar.warp.sync`), its operands read. When no thread can run, each group
//! (the threads its mask names) is performed if every non-exited member waits
//! at the same instruction with the same mask (lanes past the CTA's end count
//! as exited); otherwise, or if a thread's mask leaves it out, the launch fails
//! with [`SimErrorKind::DivergentWarp`]. Barriers are released only when no
//! thread waits at a collective. A `shfl` reading a lane outside its group
//! reads 0 (undefined in PTX).
//! `%laneid` is the linear thread id modulo 32 and `%warpid` the linear id
//! divided by 32. Atomics are trivially atomic.
//!
//! Generic addresses: global memory uses its own addresses (allocations start
//! at [`memory::GLOBAL_BASE`]); `.shared`, `.local` and `.const` addresses are
//! mapped into disjoint 1 TiB windows at [`memory::SHARED_WINDOW`],
//! [`memory::LOCAL_WINDOW`] and [`memory::CONST_WINDOW`], so `cvta` round-trips
//! and generic loads/stores dispatch on the window. A shared address is the
//! byte offset in the CTA's shared memory; a local address is the byte offset
//! in the thread's local stack (frames of device functions are stacked).
//!
//! The text is decoded once into a compact form with registers resolved to
//! dense indices; unknown registers, symbols, labels and call targets are
//! reported as [`ParseError`]s.

#![warn(missing_docs)]

mod error;
mod exec;
mod fp;
mod ir;
mod lexer;
pub mod memory;
mod parser;
mod syscall;

pub use error::{
    AssertFailure, ErrorLocation, MemoryError, ParseError, SimError, SimErrorKind, Space,
};
pub use exec::{Launch, ParamValue, RunOptions, RunStats};
pub use memory::{Memory, Printed};

/// A parsed and decoded PTX module, ready to run.
#[derive(Clone, Debug)]
pub struct Module {
    data: ir::ModuleData,
}

impl Module {
    /// The `.version` of the module (empty if absent).
    pub fn version(&self) -> &str {
        &self.data.version
    }

    /// The `.target` list of the module, comma separated (empty if absent).
    pub fn target(&self) -> &str {
        &self.data.target
    }

    /// Names of the `.entry` functions that have a body.
    pub fn kernels(&self) -> Vec<&str> {
        self.data
            .funcs
            .iter()
            .filter(|f| f.is_entry && f.has_body)
            .map(|f| f.name.as_str())
            .collect()
    }

    /// Names of all functions (entries and device functions), in declaration order.
    pub fn functions(&self) -> Vec<&str> {
        self.data.funcs.iter().map(|f| f.name.as_str()).collect()
    }

    /// Byte sizes of the parameters of kernel `name`, in declaration order.
    pub fn kernel_param_sizes(&self, name: &str) -> Option<Vec<usize>> {
        let &i = self.data.func_index.get(name)?;
        let f = &self.data.funcs[i as usize];
        f.is_entry
            .then(|| f.params.iter().map(|p| p.size as usize).collect())
    }

    /// Overwrite the contents of module-scope `.const` variable `name`, as the host does
    /// with `cudaMemcpyToSymbol` before a launch (`bytes` may be shorter than the
    /// variable; the rest keeps its initializer). Fails if there is no such variable or
    /// `bytes` is longer than it.
    pub fn set_const(&mut self, name: &str, bytes: &[u8]) -> Result<(), String> {
        let &(off, size) = self
            .data
            .const_vars
            .get(name)
            .ok_or_else(|| format!("no .const variable '{name}'"))?;
        if bytes.len() as u64 > size {
            return Err(format!(
                ".const variable '{name}' has {size} bytes, not {}",
                bytes.len()
            ));
        }
        let off = off as usize;
        self.data.consts[off..off + bytes.len()].copy_from_slice(bytes);
        Ok(())
    }

    /// Number of decoded instructions of function `name`, if it exists.
    pub fn instruction_count(&self, name: &str) -> Option<usize> {
        self.data
            .func_index
            .get(name)
            .map(|&i| self.data.funcs[i as usize].insts.len())
    }
}

/// Executions of each instruction of a module over one or more launches
/// ([`run_kernel_profiled`]): what a dynamic instruction count is made of.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Profile {
    /// Per function (the module's order), per decoded instruction.
    counts: Vec<Vec<u64>>,
}

impl Profile {
    /// Every instruction executed at least once: its source line (1-based, in the text
    /// the module was parsed from) and its executions, guarded-off ones included.
    pub fn by_line(&self, m: &Module) -> Vec<(u32, u64)> {
        let mut out = Vec::new();
        for (c, f) in self.counts.iter().zip(&m.data.funcs) {
            for (&n, &line) in c.iter().zip(&f.lines) {
                if n > 0 {
                    out.push((line, n));
                }
            }
        }
        out
    }

    /// Executions grouped by opcode class, most executed first (ties by name): the
    /// opcode before its first `.`, with the state space kept for memory operations
    /// (`ld.global`, `st.local`, `atom.shared`; `ld.param` and `ld.const` too), read from
    /// `src`, the text `m` was parsed from.
    pub fn by_opcode(&self, m: &Module, src: &str) -> Vec<(String, u64)> {
        let lines: Vec<&str> = src.lines().collect();
        let mut groups: rustc_hash::FxHashMap<String, u64> = Default::default();
        for (line, n) in self.by_line(m) {
            let text = lines.get(line as usize - 1).copied().unwrap_or("");
            *groups.entry(opcode_class(text)).or_default() += n;
        }
        let mut v: Vec<(String, u64)> = groups.into_iter().collect();
        v.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        v
    }
}

/// The opcode class of one PTX instruction line (see [`Profile::by_opcode`]).
fn opcode_class(line: &str) -> String {
    let mut t = line.trim_start();
    // A guard: `@%p1` or `@!%p1`.
    if t.starts_with('@') {
        t = t
            .split_once(char::is_whitespace)
            .map_or("", |(_, r)| r.trim_start());
    }
    let word = t
        .split(|c: char| c.is_whitespace() || c == ';')
        .next()
        .unwrap_or("");
    let mut parts = word.split('.');
    let op = parts.next().unwrap_or("");
    let space = parts.find(|p| {
        matches!(
            *p,
            "global" | "shared" | "local" | "param" | "const" | "generic"
        )
    });
    match (op, space) {
        ("ld" | "st" | "atom" | "red" | "ldu", Some(sp)) => format!("{op}.{sp}"),
        _ => op.to_string(),
    }
}

/// Parses and decodes PTX text. Never panics; errors carry `line:col`.
pub fn parse(src: &str) -> Result<Module, ParseError> {
    parser::parse_module(src).map(|data| Module { data })
}

/// Runs `kernel` of module `m` over the whole grid with default [`RunOptions`].
///
/// `params` are the kernel arguments in declaration order; each value's size
/// must match the declared `.param` size.
pub fn run_kernel(
    m: &Module,
    kernel: &str,
    launch: &Launch,
    params: &[ParamValue],
    mem: &mut Memory,
) -> Result<RunStats, SimError> {
    exec::run(m, kernel, launch, params, mem, &RunOptions::default())
}

/// Like [`run_kernel_with_options`], counting each instruction's executions into
/// `profile` (added to what it holds, so several launches can share one; a fresh
/// [`Profile::default`] fits any module).
pub fn run_kernel_profiled(
    m: &Module,
    kernel: &str,
    launch: &Launch,
    params: &[ParamValue],
    mem: &mut Memory,
    opts: &RunOptions,
    profile: &mut Profile,
) -> Result<RunStats, SimError> {
    exec::run_counting(
        m,
        kernel,
        launch,
        params,
        mem,
        opts,
        Some(&mut profile.counts),
    )
}

/// Like [`run_kernel`] with explicit options (step limit, dynamic shared
/// memory, call depth).
pub fn run_kernel_with_options(
    m: &Module,
    kernel: &str,
    launch: &Launch,
    params: &[ParamValue],
    mem: &mut Memory,
    opts: &RunOptions,
) -> Result<RunStats, SimError> {
    exec::run(m, kernel, launch, params, mem, opts)
}
