//! Random well-formed function generator for property tests and fuzzing.
//!
//! Functions are generated as structured programs over mutable variables (straight-line
//! code, if/else, while and do-while loops, nested loops, `continue` (extra back edges),
//! `break` out of any enclosing loop, early `return`, switches with fall-through, and
//! optionally two-entry cycles) and lowered through
//! [`FunctionBuilder`], so SSA form is right by
//! construction. Randomness comes from any [`RandomSource`]: the built-in
//! [`SplitMix64`], a `quickcheck::Gen` or an `arbitrary::Unstructured`; the same source
//! state gives the same function.
//!
//! # The UB-free contract
//!
//! With [`GenOptions::ub_free`], the module's last function is a kernel
//! `(ptr.global out, ptr.global in_i, ptr.global in_f, i32 n, f32 s)` whose
//! [`KernelContract`] says how to launch it so that no execution has undefined
//! behaviour:
//!
//! - Launch a 1-D grid (`ntid.y = ntid.z = nctaid.y = nctaid.z = 1`) of `T` threads in
//!   total with `ntid.x <= max_cta_threads` and `T * out_per_thread <= i32::MAX`.
//! - `out` holds `T * out_per_thread` `i32`s. Thread `gid = ctaid.x * ntid.x + tid.x`
//!   writes only `out[gid * out_per_thread + j]`, `j < out_per_thread` (plain stores and
//!   atomics), so threads never write the same location; `out` is never read except by
//!   those atomics. Initial contents are the host's; compare whole buffers.
//! - `in_i` holds `buffer_len` `i32`s and `in_f` `buffer_len` `f32`s, read-only; every
//!   index is `x urem buffer_len`. `n` and `s` may be anything.
//! - Loops count a fresh counter from 0 up to at most `max_trip_count` (a constant, or
//!   `umin(n or a thread-dependent value, constant)`); two-entry cycles run at most 4
//!   times. A call is generated only where the loops around it times the callee's own
//!   work stay within [`WORK_BUDGET`] iterations. No `nsw`/`nuw`/`exact` flags; divisors are `b | 1` (unsigned) or
//!   `(b & 255) | 1` (signed); shift amounts are `b & (width - 1)`; float-to-int
//!   conversions first clamp with `fmax`/`fmin` (which also map NaN into range).
//! - Barriers only at the kernel's top level, and only while no thread can have left
//!   early (after an early return that might be divergent, no more barriers). Shared
//!   memory (`@smem`, `max_cta_threads` i32s) is written at `tid.x`, then a barrier, then
//!   read at `(tid.x + c) urem ntid.x`, then another barrier. Warp collectives
//!   ([`GenOptions::allow_warp_ops`]) only where barriers may be, with the full mask:
//!   votes, `warp_sync`, `shfl_idx` from lane 0 and `shfl_up` with clamp 0 (whose
//!   source lanes always exist). Local slots are fully
//!   initialized at entry. Device functions have no memory accesses but their slot's.
//!
//! Without `ub_free`, the same shapes are generated with raw operands (arbitrary
//! divisors, shift amounts, flags and load/store indices): valid IR, not necessarily
//! defined behaviour.
//!
//! Generation recurses over the structure being generated, but only to
//! [`GenOptions::max_nesting`] (at most [`MAX_NESTING`]) and a fixed expression depth,
//! independent of function size; [`GenOptions::target_blocks`] makes large functions
//! (100,000 blocks and more) by repeating top-level statements.

use crate::builder::{FunctionBuilder, InstBuilder, Variable};
use crate::entities::{Block, FuncId, GlobalId, Value};
use crate::function::{FuncKind, Function, Signature};
use crate::instructions::{
    AtomicOp, FloatCC, IntCC, IntFlags, Opcode, ShflMode, SpecialReg, VoteMode,
};
use crate::module::{GlobalData, Module};
use crate::types::{AddrSpace, Type};
use core::fmt;

/// The most loop iterations one execution of any point of a function may stand for: the
/// product of the trip bounds of the loops around it (two-entry cycles count 4), times
/// the work of a function called there. A call that would go over it is not generated,
/// so that calls in loops of functions whose own loops call further (each level
/// multiplying) cannot make a kernel that runs for billions of steps in the interpreter.
pub const WORK_BUDGET: u64 = 4096;

/// The deepest statement nesting the generator will produce, whatever the options say.
pub const MAX_NESTING: usize = 16;

/// Depth of generated expression trees.
const EXPR_DEPTH: u32 = 3;

/// A source of random numbers for the generator.
pub trait RandomSource {
    /// 64 random bits.
    fn next_u64(&mut self) -> u64;

    /// A number in `0..n` (0 when `n <= 1`).
    fn below(&mut self, n: u64) -> u64 {
        if n <= 1 {
            0
        } else {
            ((u128::from(self.next_u64()) * u128::from(n)) >> 64) as u64
        }
    }
}

/// SplitMix64 (Steele, Lea and Flood 2014): a tiny, fast, deterministic generator.
#[derive(Clone, Debug)]
pub struct SplitMix64(u64);

impl SplitMix64 {
    /// A generator seeded with `seed`.
    pub fn new(seed: u64) -> Self {
        SplitMix64(seed)
    }
}

impl RandomSource for SplitMix64 {
    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}

#[cfg(any(test, feature = "quickcheck"))]
impl RandomSource for quickcheck::Gen {
    fn next_u64(&mut self) -> u64 {
        <u64 as quickcheck::Arbitrary>::arbitrary(self)
    }
}

/// Exhausted input reads as zeros, which always picks the first (smallest) choice, so
/// generation still terminates.
#[cfg(any(test, feature = "arbitrary"))]
impl RandomSource for arbitrary::Unstructured<'_> {
    fn next_u64(&mut self) -> u64 {
        self.arbitrary::<u64>().unwrap_or(0)
    }

    fn below(&mut self, n: u64) -> u64 {
        if n <= 1 {
            0
        } else {
            self.int_in_range(0..=n - 1).unwrap_or(0)
        }
    }
}

/// Convenience draws over any [`RandomSource`].
trait Draw: RandomSource {
    fn chance(&mut self, num: u64, den: u64) -> bool {
        self.below(den) < num
    }
    fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.below(hi - lo + 1)
    }
    fn pick<T: Copy>(&mut self, xs: &[T]) -> T {
        xs[self.below(xs.len() as u64) as usize]
    }
}

impl<R: RandomSource + ?Sized> Draw for R {}

/// What to generate.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GenOptions {
    /// Stop starting control structures once a function has this many blocks.
    pub max_blocks: usize,
    /// If set, keep adding top-level control structures to the kernel until it has at
    /// least this many blocks (for benchmarks); `max_blocks` is then ignored.
    pub target_blocks: Option<usize>,
    /// Maximum statement nesting (clamped to [`MAX_NESTING`]).
    pub max_nesting: usize,
    /// Maximum statements per region (at least one is generated).
    pub max_stmts: usize,
    /// Number of mutable variables per function (at least 4: one per value type).
    pub num_vars: usize,
    /// Generate loops.
    pub allow_loops: bool,
    /// Generate loops inside loops.
    pub allow_nested_loops: bool,
    /// Generate `continue` (extra back edges to a loop header).
    pub allow_multi_latch: bool,
    /// Generate `break` (to any enclosing loop's exit) and early `return`.
    pub allow_multi_exit: bool,
    /// Generate `br_table` switches.
    pub allow_switch: bool,
    /// Generate loads, stores, atomics and local slots. (A kernel always ends by
    /// storing its results to `out`, whatever this says.)
    pub allow_memory: bool,
    /// Generate barriers (kernel top level only; with memory, a shared-memory exchange).
    pub allow_barriers: bool,
    /// Generate warp collectives (`shfl`, `vote`, `warp_sync`; where barriers may be).
    /// Off by default, so that the modules of existing seeds stay the same.
    pub allow_warp_ops: bool,
    /// Generate two-entry cycles (irreducible control flow).
    pub allow_irreducible: bool,
    /// Generate device functions and calls to them.
    pub allow_calls: bool,
    /// Keep every execution free of undefined behaviour (see the module docs).
    pub ub_free: bool,
    /// Elements of each input buffer.
    pub buffer_len: u32,
    /// Output elements per thread.
    pub out_per_thread: u32,
    /// Maximum loop trip count.
    pub max_trip_count: u32,
    /// Maximum CTA size (`ntid.x`) the kernel supports; the shared array's length.
    pub max_cta_threads: u32,
    /// Maximum number of device functions per module.
    pub max_device_funcs: usize,
    /// Inside loops, sometimes branch on the innermost loop's counter (IV-dependent
    /// branches). Off by default, so that the modules of existing seeds stay the same.
    pub allow_iv_branches: bool,
    /// Index the local slot with constants only (each access picks an element at
    /// generation time), so that scalar replacement (`sroa`) can promote it. Off by
    /// default, so that the modules of existing seeds stay the same.
    pub const_slot_index: bool,
}

impl Default for GenOptions {
    /// Every feature, UB-free, small functions.
    fn default() -> Self {
        GenOptions {
            max_blocks: 40,
            target_blocks: None,
            max_nesting: 3,
            max_stmts: 4,
            num_vars: 6,
            allow_loops: true,
            allow_nested_loops: true,
            allow_multi_latch: true,
            allow_multi_exit: true,
            allow_switch: true,
            allow_memory: true,
            allow_barriers: true,
            allow_warp_ops: false,
            allow_irreducible: true,
            allow_calls: true,
            ub_free: true,
            buffer_len: 64,
            out_per_thread: 4,
            max_trip_count: 4,
            max_cta_threads: 256,
            max_device_funcs: 2,
            allow_iv_branches: false,
            const_slot_index: false,
        }
    }
}

impl GenOptions {
    /// Straight-line code and if/else only: every other feature off.
    pub fn minimal() -> Self {
        GenOptions {
            allow_loops: false,
            allow_nested_loops: false,
            allow_multi_latch: false,
            allow_multi_exit: false,
            allow_switch: false,
            allow_memory: false,
            allow_barriers: false,
            allow_irreducible: false,
            allow_calls: false,
            ..GenOptions::default()
        }
    }

    /// Options drawn from `rng`: every feature on or off, sizes from tiny to the largest
    /// the property tests use, UB-free. The one options struct thus serves seeds
    /// ([`SplitMix64`]), `quickcheck` and `arbitrary` ([`ArbOptions`]) alike.
    pub fn random(rng: &mut (impl RandomSource + ?Sized)) -> Self {
        let mut flag = |num: u64| rng.below(4) < num;
        let allow_loops = flag(3);
        let allow_nested_loops = flag(3);
        let allow_multi_latch = flag(3);
        let allow_multi_exit = flag(3);
        let allow_switch = flag(3);
        let allow_memory = flag(3);
        let allow_barriers = flag(3);
        let allow_warp_ops = flag(2);
        let allow_irreducible = flag(2);
        let allow_calls = flag(2);
        let allow_iv_branches = flag(3);
        GenOptions {
            max_blocks: 1 + rng.below(100) as usize,
            target_blocks: None,
            max_nesting: 1 + rng.below(5) as usize,
            max_stmts: 1 + rng.below(6) as usize,
            num_vars: 4 + rng.below(6) as usize,
            allow_loops,
            allow_nested_loops,
            allow_multi_latch,
            allow_multi_exit,
            allow_switch,
            allow_memory,
            allow_barriers,
            allow_warp_ops,
            allow_irreducible,
            allow_calls,
            ub_free: true,
            buffer_len: 1 + rng.below(128) as u32,
            out_per_thread: 1 + rng.below(6) as u32,
            max_trip_count: rng.below(9) as u32,
            max_cta_threads: [32, 64, 128, 256][rng.below(4) as usize],
            max_device_funcs: 1 + rng.below(3) as usize,
            allow_iv_branches,
            // Not drawn: a new draw would change every later option of existing seeds.
            const_slot_index: false,
        }
    }
}

/// Generator options for `quickcheck` and `arbitrary`, drawn by [`GenOptions::random`].
#[derive(Clone, Debug)]
pub struct ArbOptions(pub GenOptions);

#[cfg(any(test, feature = "quickcheck"))]
impl quickcheck::Arbitrary for ArbOptions {
    fn arbitrary(g: &mut quickcheck::Gen) -> Self {
        ArbOptions(GenOptions::random(g))
    }
}

#[cfg(any(test, feature = "arbitrary"))]
impl<'a> arbitrary::Arbitrary<'a> for ArbOptions {
    fn arbitrary(u: &mut arbitrary::Unstructured<'a>) -> arbitrary::Result<Self> {
        Ok(ArbOptions(GenOptions::random(u)))
    }
}

/// How the host must provide one kernel parameter.
#[derive(Clone, Debug, PartialEq)]
pub enum ParamContract {
    /// A buffer of `threads * per_thread` elements of `elem`; each thread writes only
    /// its own `per_thread` elements.
    Output {
        /// Element type.
        elem: Type,
        /// Elements per launched thread.
        per_thread: u32,
    },
    /// A read-only buffer of `len` elements of `elem`.
    Input {
        /// Element type.
        elem: Type,
        /// Number of elements.
        len: u32,
    },
    /// A scalar of type `ty`; any value is allowed.
    Scalar {
        /// The scalar's type.
        ty: Type,
    },
}

/// How to run a generated kernel without undefined behaviour (see the module docs).
#[derive(Clone, Debug, PartialEq)]
pub struct KernelContract {
    /// The kernel (the module's last function).
    pub kernel: FuncId,
    /// One entry per kernel parameter.
    pub params: Vec<ParamContract>,
    /// Output elements per thread.
    pub out_per_thread: u32,
    /// Largest allowed `ntid.x`; the grid must be 1-D.
    pub max_cta_threads: u32,
    /// Was the kernel generated UB-free? If not, the contract only describes shapes.
    pub ub_free: bool,
}

impl KernelContract {
    /// Elements of the output buffer for a launch of `threads` threads in total.
    pub fn out_len(&self, threads: u64) -> u64 {
        threads * u64::from(self.out_per_thread)
    }
}

/// A module from the default options, for `quickcheck` properties (no shrinking) and
/// `arbitrary`-driven fuzzing: the features `quickcheck` and `arbitrary` implement
/// their traits (and [`RandomSource`] for `quickcheck::Gen` and
/// `arbitrary::Unstructured`), so a crate that needs neither does not build them.
#[derive(Clone)]
pub struct ArbModule(pub Module);

/// Prints the module in the text format, so failing properties show the input.
impl fmt::Debug for ArbModule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        crate::write::write_module(f, &self.0)
    }
}

#[cfg(any(test, feature = "quickcheck"))]
impl quickcheck::Arbitrary for ArbModule {
    fn arbitrary(g: &mut quickcheck::Gen) -> Self {
        ArbModule(generate_module(&GenOptions::default(), g))
    }
}

#[cfg(any(test, feature = "arbitrary"))]
impl<'a> arbitrary::Arbitrary<'a> for ArbModule {
    fn arbitrary(u: &mut arbitrary::Unstructured<'a>) -> arbitrary::Result<Self> {
        Ok(ArbModule(generate_module(&GenOptions::default(), u)))
    }
}

/// Generate a module: device functions (if calls are allowed), then one kernel.
pub fn generate_module(opts: &GenOptions, rng: &mut (impl RandomSource + ?Sized)) -> Module {
    generate_kernel_module(opts, rng).0
}

/// Generate a module and the contract under which its kernel (the last function) runs.
pub fn generate_kernel_module(
    opts: &GenOptions,
    rng: &mut (impl RandomSource + ?Sized),
) -> (Module, KernelContract) {
    let mut module = Module::new();
    let shared = (opts.allow_barriers && opts.allow_memory).then(|| {
        module.globals.push(GlobalData {
            name: "smem".to_string(),
            space: AddrSpace::Shared,
            elem: Type::I32,
            count: opts.max_cta_threads.max(1),
            align: 4,
            init: None,
            linkage: crate::Linkage::Internal,
            externally_initialized: false,
        })
    });
    let mut callees: Vec<Callee> = Vec::new();
    if opts.allow_calls {
        let n = rng.range(1, opts.max_device_funcs.max(1) as u64) as usize;
        for k in 0..n.min(opts.max_device_funcs) {
            let (f, work) = gen_function(opts, rng, false, &callees, None, &format!("dev{k}"));
            let sig = f.sig.clone();
            let id = module.functions.push(f);
            callees.push(Callee { id, sig, work });
        }
    }
    let (kernel, _) = gen_function(opts, rng, true, &callees, shared, "kernel");
    let kernel = module.functions.push(kernel);
    let contract = KernelContract {
        kernel,
        params: vec![
            ParamContract::Output {
                elem: Type::I32,
                per_thread: opts.out_per_thread.max(1),
            },
            ParamContract::Input {
                elem: Type::I32,
                len: opts.buffer_len.max(1),
            },
            ParamContract::Input {
                elem: Type::F32,
                len: opts.buffer_len.max(1),
            },
            ParamContract::Scalar { ty: Type::I32 },
            ParamContract::Scalar { ty: Type::F32 },
        ],
        out_per_thread: opts.out_per_thread.max(1),
        max_cta_threads: opts.max_cta_threads.max(1),
        ub_free: opts.ub_free,
    };
    (module, contract)
}

/// Generate one standalone kernel (no calls, no module globals).
pub fn generate_function(opts: &GenOptions, rng: &mut (impl RandomSource + ?Sized)) -> Function {
    gen_function(opts, rng, true, &[], None, "kernel").0
}

/// Generate a module from a seed with [`SplitMix64`].
pub fn generate_from_seed(opts: &GenOptions, seed: u64) -> (Module, KernelContract) {
    generate_kernel_module(opts, &mut SplitMix64::new(seed))
}

const VAR_TYPES: [Type; 4] = [Type::I32, Type::F32, Type::I64, Type::F64];

const INT_BINARY: [Opcode; 17] = [
    Opcode::Iadd,
    Opcode::Isub,
    Opcode::Imul,
    Opcode::Sdiv,
    Opcode::Udiv,
    Opcode::Srem,
    Opcode::Urem,
    Opcode::And,
    Opcode::Or,
    Opcode::Xor,
    Opcode::Shl,
    Opcode::Lshr,
    Opcode::Ashr,
    Opcode::Smin,
    Opcode::Smax,
    Opcode::Umin,
    Opcode::Umax,
];

const FLOAT_BINARY: [Opcode; 7] = [
    Opcode::Fadd,
    Opcode::Fsub,
    Opcode::Fmul,
    Opcode::Fdiv,
    Opcode::Frem,
    Opcode::Fmin,
    Opcode::Fmax,
];

const INT_UNARY: [Opcode; 4] = [Opcode::Popcnt, Opcode::Clz, Opcode::Ctz, Opcode::Freeze];

const FLOAT_UNARY: [Opcode; 8] = [
    Opcode::Fneg,
    Opcode::Fabs,
    Opcode::Sqrt,
    Opcode::Floor,
    Opcode::Ceil,
    Opcode::Ftrunc,
    Opcode::Nearest,
    Opcode::Freeze,
];

const ATOMIC_OPS: [AtomicOp; 9] = [
    AtomicOp::Add,
    AtomicOp::And,
    AtomicOp::Or,
    AtomicOp::Xor,
    AtomicOp::Smin,
    AtomicOp::Smax,
    AtomicOp::Umin,
    AtomicOp::Umax,
    AtomicOp::Exch,
];

/// Elements (i32) of each function's local slot.
const SLOT_ELEMS: u32 = 4;

/// A device function that later functions may call.
struct Callee {
    id: FuncId,
    sig: Signature,
    /// The most loop iterations one call may run ([`WORK_BUDGET`]).
    work: u64,
}

/// An enclosing loop, for `break` and `continue`.
#[derive(Copy, Clone)]
struct LoopCtx {
    header: Block,
    exit: Block,
    counter: Variable,
    bound: Value,
    do_while: bool,
}

/// Values every statement may use.
struct Env {
    kernel: bool,
    ret: Option<Type>,
    /// Kernel buffers: out, in_i, in_f.
    bufs: Option<[Value; 3]>,
    /// Uniform scalars: an i32 and an f32 (kernel `n`, `s`; a device function's first
    /// params of those types or constants).
    n: Value,
    s: Value,
    tid: Value,
    ctaid: Value,
    /// `gid * out_per_thread`: the start of this thread's part of `out`.
    out_base: Option<Value>,
    /// The local slot's address (SLOT_ELEMS i32s, initialized at entry).
    slot: Option<Value>,
    shared: Option<GlobalId>,
}

#[derive(Copy, Clone, PartialEq, Eq)]
enum Stmt {
    Assign,
    Store,
    SlotStore,
    Atomic,
    Call,
    If,
    Loop,
    Switch,
    Irreducible,
    Barrier,
    Warp,
}

struct FnGen<'a, 'f, R: RandomSource + ?Sized> {
    o: &'a GenOptions,
    r: &'a mut R,
    b: FunctionBuilder<'f>,
    env: Env,
    /// Variables with their types, in definition order.
    vars: Vec<(Variable, Type)>,
    loops: Vec<LoopCtx>,
    /// Number of enclosing constructs whose condition may differ between threads.
    divergent: usize,
    /// No thread can have returned early in a way that other threads of its CTA did not.
    barriers_ok: bool,
    budget: usize,
    callees: &'a [Callee],
    max_nesting: usize,
    /// The product of the trip bounds of the enclosing loops and cycles.
    iterations: u64,
    /// The most iterations any point of the function stands for so far (its callers'
    /// [`Callee::work`]).
    work: u64,
}

fn gen_function<R: RandomSource + ?Sized>(
    o: &GenOptions,
    r: &mut R,
    kernel: bool,
    callees: &[Callee],
    shared: Option<GlobalId>,
    name: &str,
) -> (Function, u64) {
    let sig = if kernel {
        let g = Type::Ptr(AddrSpace::Global);
        Signature {
            params: vec![g, g, g, Type::I32, Type::F32],
            ret: None,
        }
    } else {
        let np = r.range(1, 3) as usize;
        Signature {
            params: (0..np)
                .map(|_| r.pick(&[Type::I32, Type::F32, Type::I64]))
                .collect(),
            ret: Some(r.pick(&[Type::I32, Type::F32])),
        }
    };
    let kind = if kernel {
        FuncKind::Kernel
    } else {
        FuncKind::Device
    };
    let mut func = Function::new(name, kind, sig);
    let slot = o.allow_memory.then(|| {
        func.slots.push(crate::function::SlotData {
            size: 4 * SLOT_ELEMS,
            align: 4,
        })
    });
    let mut b = FunctionBuilder::new(&mut func);
    let entry = b.create_block();
    b.append_block_params_for_function_params(entry);
    b.switch_to_block(entry);
    b.seal_block(entry);
    let params = b.block_params(entry).to_vec();
    let tid = b.sreg(SpecialReg::TidX);
    let ctaid = b.sreg(SpecialReg::CtaidX);
    let env = if kernel {
        let ntid = b.sreg(SpecialReg::NtidX);
        let base = b.imul(ctaid, ntid);
        let gid = b.iadd(base, tid);
        let k = b.iconst(Type::I32, i64::from(o.out_per_thread.max(1)));
        let out_base = b.imul(gid, k);
        Env {
            kernel,
            ret: None,
            bufs: Some([params[0], params[1], params[2]]),
            n: params[3],
            s: params[4],
            tid,
            ctaid,
            out_base: Some(out_base),
            slot: None,
            shared,
        }
    } else {
        let find = |b: &mut FunctionBuilder, ty: Type| {
            params
                .iter()
                .copied()
                .find(|&p| b.func.dfg.value_type(p) == ty)
        };
        let n = match find(&mut b, Type::I32) {
            Some(v) => v,
            None => b.iconst(Type::I32, 7),
        };
        let s = match find(&mut b, Type::F32) {
            Some(v) => v,
            None => b.fconst_f32(0.5),
        };
        Env {
            kernel,
            ret: b.func.sig.ret,
            bufs: None,
            n,
            s,
            tid,
            ctaid,
            out_base: None,
            slot: None,
            shared: None,
        }
    };
    let budget = match (kernel, o.target_blocks) {
        (true, Some(t)) => t.saturating_add(64),
        _ => o.max_blocks,
    };
    let mut g = FnGen {
        o,
        r,
        b,
        env,
        vars: Vec::new(),
        loops: Vec::new(),
        divergent: 0,
        barriers_ok: true,
        budget,
        callees,
        max_nesting: o.max_nesting.min(MAX_NESTING),
        iterations: 1,
        work: 1,
    };
    g.prologue(slot, &params);
    g.top_level();
    g.epilogue();
    g.b.seal_all_blocks();
    g.b.finalize()
        .expect("the generator follows the builder protocol");
    let work = g.work;
    (func, work)
}

impl<R: RandomSource + ?Sized> FnGen<'_, '_, R> {
    fn num_blocks(&self) -> usize {
        self.b.func.dfg.num_blocks()
    }

    fn has_room(&self, blocks: usize) -> bool {
        self.num_blocks() + blocks <= self.budget
    }

    /// Slot initialization and the variables' initial values.
    fn prologue(&mut self, slot: Option<crate::entities::Slot>, params: &[Value]) {
        if let Some(slot) = slot {
            let p = self.b.slot_addr(slot);
            for k in 0..SLOT_ELEMS {
                let v = if k == 0 { self.env.tid } else { self.env.n };
                let i = self.b.iconst(Type::I32, i64::from(k));
                let a = self.b.ptradd(p, i, 4);
                self.b.store(v, a);
            }
            self.env.slot = Some(p);
        }
        let nvars = self.o.num_vars.max(VAR_TYPES.len());
        for k in 0..nvars {
            let ty = VAR_TYPES[k % VAR_TYPES.len()];
            let init = match params
                .iter()
                .find(|&&p| self.b.func.dfg.value_type(p) == ty)
            {
                Some(&p) if !self.env.kernel && k < VAR_TYPES.len() => p,
                _ => self.expr(ty, 2),
            };
            let var = self.b.declare_var(ty);
            self.b.def_var(var, init);
            self.vars.push((var, ty));
        }
    }

    fn top_level(&mut self) {
        if let (true, Some(target)) = (self.env.kernel, self.o.target_blocks) {
            while self.num_blocks() < target {
                self.stmt(0, true);
            }
        } else {
            self.region(0);
        }
    }

    /// Kernel: store the first `out_per_thread` variables to this thread's part of
    /// `out`. Device function: return a variable.
    fn epilogue(&mut self) {
        if self.env.kernel {
            let out = self.env.bufs.expect("kernel buffers")[0];
            let base = self.env.out_base.expect("kernel out base");
            for j in 0..self.o.out_per_thread.max(1) {
                let (var, _) = self.vars[j as usize % self.vars.len()];
                let v = self.b.use_var(var);
                let v = self.as_i32(v);
                let jv = self.b.iconst(Type::I32, i64::from(j));
                let idx = self.b.iadd(base, jv);
                let p = self.b.ptradd(out, idx, 4);
                self.b.store(v, p);
            }
            self.b.ret(None);
        } else {
            let v = self.ret_value();
            self.b.ret(Some(v));
        }
    }

    fn ret_value(&mut self) -> Value {
        let ty = self.env.ret.expect("device functions return a value");
        let var = self.var_of(ty);
        self.b.use_var(var)
    }

    fn var_of(&mut self, ty: Type) -> Variable {
        let n = self.vars.iter().filter(|v| v.1 == ty).count();
        let k = self.r.below(n as u64) as usize;
        self.vars
            .iter()
            .filter(|v| v.1 == ty)
            .nth(k)
            .expect("a variable of every type")
            .0
    }

    fn region(&mut self, depth: usize) {
        let n = self.r.range(1, self.o.max_stmts.max(1) as u64);
        for _ in 0..n {
            self.stmt(depth, false);
        }
    }

    /// One statement; `structured_only` forces a control structure (so that
    /// `target_blocks` always makes progress).
    fn stmt(&mut self, depth: usize, structured_only: bool) {
        let o = self.o;
        let nest = depth < self.max_nesting;
        let mut c: Vec<(Stmt, u64)> = Vec::with_capacity(10);
        if !structured_only {
            c.push((Stmt::Assign, 5));
            if o.allow_memory && self.env.kernel {
                c.push((Stmt::Store, 2));
                c.push((Stmt::Atomic, 1));
            }
            if o.allow_memory {
                c.push((Stmt::SlotStore, 1));
            }
            if o.allow_calls && !self.callees.is_empty() {
                c.push((Stmt::Call, 1));
            }
            if o.allow_barriers
                && self.env.kernel
                && depth == 0
                && self.loops.is_empty()
                && self.divergent == 0
                && self.barriers_ok
            {
                c.push((Stmt::Barrier, 1));
            }
            if o.allow_warp_ops
                && self.env.kernel
                && depth == 0
                && self.loops.is_empty()
                && self.divergent == 0
                && self.barriers_ok
            {
                c.push((Stmt::Warp, 2));
            }
        }
        if (nest && self.has_room(4)) || structured_only {
            c.push((Stmt::If, 3));
            let nested_ok = o.allow_nested_loops || self.loops.is_empty();
            if o.allow_loops && nested_ok {
                c.push((Stmt::Loop, 3));
            }
            if o.allow_switch {
                c.push((Stmt::Switch, 1));
            }
            if o.allow_irreducible {
                c.push((Stmt::Irreducible, 1));
            }
        }
        if c.is_empty() {
            c.push((Stmt::Assign, 1));
        }
        let total: u64 = c.iter().map(|x| x.1).sum();
        let mut roll = self.r.below(total);
        let mut kind = c[0].0;
        for &(k, w) in &c {
            if roll < w {
                kind = k;
                break;
            }
            roll -= w;
        }
        match kind {
            Stmt::Assign => {
                let k = self.r.below(self.vars.len() as u64) as usize;
                let (var, ty) = self.vars[k];
                let v = self.expr(ty, EXPR_DEPTH);
                self.b.def_var(var, v);
            }
            Stmt::Store => self.store_out(),
            Stmt::SlotStore => {
                let v = self.expr(Type::I32, 2);
                let p = self.slot_ptr();
                self.b.store(v, p);
            }
            Stmt::Atomic => self.atomic(),
            Stmt::Call => self.call_stmt(),
            Stmt::Barrier => self.barrier(),
            Stmt::Warp => self.warp_op(),
            Stmt::If => self.if_stmt(depth),
            Stmt::Loop => self.loop_stmt(depth),
            Stmt::Switch => self.switch_stmt(depth),
            Stmt::Irreducible => self.irreducible(depth),
        }
    }

    /// A pointer to an element of this thread's part of `out` (UB-free) or anywhere
    /// in it (otherwise).
    fn out_ptr(&mut self) -> Value {
        let out = self.env.bufs.expect("kernel buffers")[0];
        let e = self.expr(Type::I32, 2);
        let idx = if self.o.ub_free {
            let k = self
                .b
                .iconst(Type::I32, i64::from(self.o.out_per_thread.max(1)));
            let j = self.b.urem(e, k);
            let base = self.env.out_base.expect("kernel out base");
            self.b.iadd(base, j)
        } else {
            e
        };
        self.b.ptradd(out, idx, 4)
    }

    fn store_out(&mut self) {
        let ty = self.r.pick(&VAR_TYPES);
        let v = self.expr(ty, 2);
        let v = self.as_i32(v);
        let p = self.out_ptr();
        if self.r.chance(1, 8) {
            self.b.store_volatile(v, p);
        } else {
            self.b.store(v, p);
        }
    }

    fn atomic(&mut self) {
        let p = self.out_ptr();
        let v = self.expr(Type::I32, 2);
        let old = if self.r.chance(1, 4) {
            let e = self.expr(Type::I32, 1);
            self.b.atomic_cas(p, e, v)
        } else {
            let op = self.r.pick(&ATOMIC_OPS);
            self.b.atomic_rmw(op, p, v)
        };
        let var = self.var_of(Type::I32);
        self.b.def_var(var, old);
    }

    fn slot_ptr(&mut self) -> Value {
        let p = self.env.slot.expect("a slot when memory is allowed");
        if self.o.const_slot_index {
            let k = self.r.below(u64::from(SLOT_ELEMS));
            let i = self.b.iconst(Type::I32, k as i64);
            return self.b.ptradd(p, i, 4);
        }
        let e = self.expr(Type::I32, 1);
        let idx = if self.o.ub_free {
            let k = self.b.iconst(Type::I32, i64::from(SLOT_ELEMS));
            self.b.urem(e, k)
        } else {
            e
        };
        self.b.ptradd(p, idx, 4)
    }

    /// Multiply the iterations by a loop's or cycle's trip bound; returns the previous
    /// product, to restore when the loop's body is done.
    fn enter_iterations(&mut self, trips: u64) -> u64 {
        let outer = self.iterations;
        self.iterations = outer.saturating_mul(trips);
        self.work = self.work.max(self.iterations);
        outer
    }

    fn call_stmt(&mut self) {
        let k = self.r.below(self.callees.len() as u64) as usize;
        let work = self.iterations.saturating_mul(self.callees[k].work);
        if work > WORK_BUDGET {
            return;
        }
        self.work = self.work.max(work);
        let id = self.callees[k].id;
        let sig = self.callees[k].sig.clone();
        let args: Vec<Value> = sig.params.iter().map(|&t| self.expr(t, 1)).collect();
        let (_, v) = self.b.call(id, sig.ret, &args);
        if let (Some(v), Some(ty)) = (v, sig.ret) {
            let var = self.var_of(ty);
            self.b.def_var(var, v);
        }
    }

    fn barrier(&mut self) {
        self.b.func.convergent = true;
        let Some(g) = self.env.shared else {
            self.b.barrier();
            return;
        };
        // Write own element, barrier, read a neighbour's, barrier (so later writes do
        // not race with this read).
        let size = i64::from(self.o.max_cta_threads.max(1));
        let base = self.b.global_addr(g, AddrSpace::Shared);
        let v = self.expr(Type::I32, 2);
        let sz = self.b.iconst(Type::I32, size);
        let mine = self.b.urem(self.env.tid, sz);
        let p = self.b.ptradd(base, mine, 4);
        self.b.store(v, p);
        self.b.barrier();
        let c = self.b.iconst(Type::I32, self.r.range(1, 33) as i64);
        let t = self.b.iadd(self.env.tid, c);
        let ntid = self.b.sreg(SpecialReg::NtidX);
        let other = self.b.urem(t, ntid);
        let q = self.b.ptradd(base, other, 4);
        let x = self.b.load(Type::I32, q);
        self.b.barrier();
        let var = self.var_of(Type::I32);
        self.b.def_var(var, x);
    }

    /// A warp collective over the full mask, its result in a variable. Only sources that
    /// always take part: every thread of the CTA reaches it, so a lane is missing only
    /// past the CTA's end, above every lane `shfl_idx 0` and `shfl_up` read.
    fn warp_op(&mut self) {
        self.b.func.convergent = true;
        let mask = self.b.iconst(Type::I32, -1);
        match self.r.below(4) {
            0 => {
                let p = self.cond(2);
                let mode = self.r.pick(VoteMode::ALL);
                let v = self.b.vote(mode, p, mask);
                let v = if mode == VoteMode::Ballot {
                    v
                } else {
                    self.b.zext(Type::I32, v)
                };
                let var = self.var_of(Type::I32);
                self.b.def_var(var, v);
            }
            1 | 2 => {
                let ty = if self.r.chance(1, 3) {
                    Type::F32
                } else {
                    Type::I32
                };
                let x = self.expr(ty, 2);
                let (mode, lane, clamp) = if self.r.chance(1, 2) {
                    (ShflMode::Idx, 0, 31)
                } else {
                    (ShflMode::Up, self.r.range(0, 40) as i64, 0)
                };
                let lane = self.b.iconst(Type::I32, lane);
                let clamp = self.b.iconst(Type::I32, clamp);
                let v = self.b.shfl(mode, x, lane, clamp, mask);
                let var = self.var_of(ty);
                self.b.def_var(var, v);
            }
            _ => {
                self.b.warp_sync(mask);
            }
        }
    }

    /// A branch condition and whether it is the same for every thread of a CTA.
    fn branch_cond(&mut self) -> (Value, bool) {
        if self.o.allow_iv_branches && !self.loops.is_empty() && self.r.chance(1, 4) {
            // IV-dependent: the innermost counter against a constant. Not claimed uniform
            // (the loop itself may be divergent), which is always safe.
            let ctx = *self.loops.last().expect("inside a loop");
            let i = self.b.use_var(ctx.counter);
            let k = self.b.iconst(
                Type::I32,
                self.r.range(0, u64::from(self.o.max_trip_count.max(1))) as i64,
            );
            let cc = self.r.pick(IntCC::ALL);
            return (self.b.icmp(cc, i, k), false);
        }
        if self.r.chance(2, 5) {
            (self.uniform_cond(), true)
        } else {
            (self.cond(2), false)
        }
    }

    fn uniform_cond(&mut self) -> Value {
        match self.r.below(3) {
            0 => {
                let cc = self.r.pick(IntCC::ALL);
                let k = self.b.iconst(Type::I32, self.r.range(0, 16) as i64 - 4);
                self.b.icmp(cc, self.env.n, k)
            }
            1 => {
                let one = self.b.iconst(Type::I32, 1);
                let bit = self.b.and(self.env.ctaid, one);
                let zero = self.b.iconst(Type::I32, 0);
                self.b.icmp(IntCC::Eq, bit, zero)
            }
            _ => {
                let cc = self.r.pick(FloatCC::ALL);
                let k = self.b.fconst_f32(self.r.range(0, 8) as f32 - 2.0);
                self.b.fcmp(cc, self.env.s, k)
            }
        }
    }

    /// A condition over arbitrary (usually thread-dependent) values.
    fn cond(&mut self, depth: u32) -> Value {
        match self.r.below(4) {
            0 | 1 => {
                let ty = self.r.pick(&[Type::I32, Type::I64]);
                let a = self.expr(ty, depth);
                let b = self.expr(ty, depth);
                let cc = self.r.pick(IntCC::ALL);
                self.b.icmp(cc, a, b)
            }
            2 => {
                let ty = self.r.pick(&[Type::F32, Type::F64]);
                let a = self.expr(ty, depth);
                let b = self.expr(ty, depth);
                let cc = self.r.pick(FloatCC::ALL);
                self.b.fcmp(cc, a, b)
            }
            _ => {
                let k = self.b.iconst(Type::I32, self.r.range(1, 40) as i64);
                let cc = self.r.pick(&[IntCC::Ult, IntCC::Ugt, IntCC::Eq, IntCC::Ne]);
                self.b.icmp(cc, self.env.tid, k)
            }
        }
    }

    fn if_stmt(&mut self, depth: usize) {
        let (c, uniform) = self.branch_cond();
        let then_b = self.b.create_block();
        let else_b = self.r.chance(1, 2).then(|| self.b.create_block());
        let merge = self.b.create_block();
        self.b.brif(c, then_b, &[], else_b.unwrap_or(merge), &[]);
        self.b.seal_block(then_b);
        if let Some(e) = else_b {
            self.b.seal_block(e);
        }
        if !uniform {
            self.divergent += 1;
        }
        self.b.switch_to_block(then_b);
        self.region(depth + 1);
        if !self.exit_stmt() {
            self.b.jump(merge, &[]);
        }
        if let Some(e) = else_b {
            self.b.switch_to_block(e);
            self.region(depth + 1);
            self.b.jump(merge, &[]);
        }
        if !uniform {
            self.divergent -= 1;
        }
        self.b.seal_block(merge);
        self.b.switch_to_block(merge);
    }

    /// Maybe end the current block with `break`, `continue` or `return`; says whether
    /// it did.
    fn exit_stmt(&mut self) -> bool {
        let o = self.o;
        let mut kinds: Vec<u8> = Vec::new();
        if !self.loops.is_empty() {
            if o.allow_multi_exit {
                kinds.push(0);
            }
            // A do-while `continue` tests the condition, adding an exit edge too.
            if o.allow_multi_latch
                && (o.allow_multi_exit || self.loops.last().is_some_and(|l| !l.do_while))
            {
                kinds.push(1);
            }
        }
        if o.allow_multi_exit {
            kinds.push(2);
        }
        if kinds.is_empty() || !self.r.chance(1, 3) {
            return false;
        }
        match self.r.pick(&kinds) {
            0 => {
                let k = self.r.below(self.loops.len() as u64) as usize;
                let exit = self.loops[k].exit;
                self.b.jump(exit, &[]);
            }
            1 => {
                // Continuing an outer loop leaves the inner ones: an exit edge for them.
                let n = self.loops.len();
                let k = if o.allow_multi_exit {
                    self.r.below(n as u64) as usize
                } else {
                    n - 1
                };
                let ctx = self.loops[k];
                self.latch(ctx);
            }
            _ => {
                // Leaving early where other threads of the CTA may not: no more barriers.
                if self.divergent > 0 || !self.loops.is_empty() {
                    self.barriers_ok = false;
                }
                if self.env.kernel {
                    self.b.ret(None);
                } else {
                    let v = self.ret_value();
                    self.b.ret(Some(v));
                }
            }
        }
        true
    }

    /// Increment the loop's counter and go round again (or leave, for do-while).
    fn latch(&mut self, ctx: LoopCtx) {
        let i = self.b.use_var(ctx.counter);
        let one = self.b.iconst(Type::I32, 1);
        let next = self.b.iadd(i, one);
        self.b.def_var(ctx.counter, next);
        if ctx.do_while {
            let c = self.b.icmp(IntCC::Ult, next, ctx.bound);
            self.b.brif(c, ctx.header, &[], ctx.exit, &[]);
        } else {
            self.b.jump(ctx.header, &[]);
        }
    }

    fn loop_stmt(&mut self, depth: usize) {
        let max_trip = i64::from(self.o.max_trip_count.max(1));
        let uniform = self.r.chance(1, 2);
        // The most iterations the loop may run (for the work budget).
        let mut trips = max_trip as u64;
        let bound = if uniform {
            if self.r.chance(1, 2) {
                let c = self.r.range(1, max_trip as u64);
                trips = c;
                self.b.iconst(Type::I32, c as i64)
            } else {
                let c = self.b.iconst(Type::I32, max_trip);
                self.b.umin(self.env.n, c)
            }
        } else {
            let e = self.expr(Type::I32, 2);
            let c = self.b.iconst(Type::I32, max_trip);
            self.b.umin(e, c)
        };
        let counter = self.b.declare_var(Type::I32);
        let zero = self.b.iconst(Type::I32, 0);
        self.b.def_var(counter, zero);
        let do_while = self.r.chance(1, 3);
        let header = self.b.create_block();
        let exit = self.b.create_block();
        self.b.jump(header, &[]);
        self.b.switch_to_block(header);
        if !do_while {
            let i = self.b.use_var(counter);
            let c = self.b.icmp(IntCC::Ult, i, bound);
            let body = self.b.create_block();
            self.b.brif(c, body, &[], exit, &[]);
            self.b.seal_block(body);
            self.b.switch_to_block(body);
        }
        let ctx = LoopCtx {
            header,
            exit,
            counter,
            bound,
            do_while,
        };
        self.loops.push(ctx);
        if !uniform {
            self.divergent += 1;
        }
        // A do-while body runs at least once.
        let outer = self.enter_iterations(trips.max(1));
        self.region(depth + 1);
        self.iterations = outer;
        self.latch(ctx);
        if !uniform {
            self.divergent -= 1;
        }
        self.loops.pop();
        self.b.seal_block(header);
        self.b.seal_block(exit);
        self.b.switch_to_block(exit);
    }

    fn switch_stmt(&mut self, depth: usize) {
        let mut sel = self.expr(Type::I32, 2);
        if self.r.chance(1, 2) {
            let m = self.b.iconst(Type::I32, self.r.range(2, 6) as i64);
            sel = self.b.urem(sel, m);
        }
        let nblocks = self.r.range(1, 3) as usize;
        let blocks: Vec<Block> = (0..nblocks).map(|_| self.b.create_block()).collect();
        let merge = self.b.create_block();
        let default = match self.r.below(3) {
            0 => merge,
            1 => blocks[self.r.below(nblocks as u64) as usize],
            _ => self.b.create_block(),
        };
        let ncases = nblocks + self.r.below(3) as usize;
        // Distinct case values: a random start and random positive steps.
        let mut values: Vec<i64> = Vec::with_capacity(ncases);
        let mut v = self.r.range(0, 4) as i64 - 2;
        for _ in 0..ncases {
            values.push(v);
            v += self.r.range(1, 3) as i64;
        }
        let cases: Vec<(i64, Block, &[Value])> = values
            .iter()
            .enumerate()
            .map(|(k, &v)| {
                let blk = if k < nblocks {
                    blocks[k]
                } else {
                    blocks[self.r.below(nblocks as u64) as usize]
                };
                (v, blk, &[][..])
            })
            .collect();
        self.b.br_table(sel, default, &[], &cases);
        self.divergent += 1;
        let mut bodies = blocks.clone();
        if !blocks.contains(&default) && default != merge {
            bodies.push(default);
        }
        // Keep the merge block reachable: the last body must reach it if nothing else has.
        let mut merge_reached = default == merge;
        for k in 0..bodies.len() {
            self.b.switch_to_block(bodies[k]);
            self.region(depth + 1);
            let last = k + 1 == bodies.len();
            // Fall through into the next case now and then.
            if !last && self.r.chance(1, 3) {
                self.b.jump(bodies[k + 1], &[]);
            } else if (merge_reached || !last) && self.exit_stmt() {
                // Left the switch by break, continue or return.
            } else {
                self.b.jump(merge, &[]);
                merge_reached = true;
            }
        }
        self.divergent -= 1;
        for &blk in &bodies {
            self.b.seal_block(blk);
        }
        self.b.seal_block(merge);
        self.b.switch_to_block(merge);
    }

    /// A cycle with two entries: `brif c, A, B`; A and B each run a region, count, and
    /// branch to the other or out.
    fn irreducible(&mut self, depth: usize) {
        let (c, _) = self.branch_cond();
        let counter = self.b.declare_var(Type::I32);
        let zero = self.b.iconst(Type::I32, 0);
        self.b.def_var(counter, zero);
        let limit = self.b.iconst(Type::I32, self.r.range(2, 4) as i64);
        let a = self.b.create_block();
        let bb = self.b.create_block();
        let exit = self.b.create_block();
        self.b.brif(c, a, &[], bb, &[]);
        self.divergent += 1;
        // Each half runs at most `limit + 1` times.
        let outer = self.enter_iterations(4);
        for (this, other) in [(a, bb), (bb, a)] {
            self.b.switch_to_block(this);
            self.region(depth + 1);
            let i = self.b.use_var(counter);
            let one = self.b.iconst(Type::I32, 1);
            let next = self.b.iadd(i, one);
            self.b.def_var(counter, next);
            let mut go = self.b.icmp(IntCC::Ult, next, limit);
            if self.r.chance(1, 2) {
                let extra = self.cond(1);
                go = self.b.and(go, extra);
            }
            self.b.brif(go, other, &[], exit, &[]);
        }
        self.iterations = outer;
        self.divergent -= 1;
        self.b.seal_block(a);
        self.b.seal_block(bb);
        self.b.seal_block(exit);
        self.b.switch_to_block(exit);
    }

    fn iconst_for(&mut self, ty: Type) -> Value {
        let v = match self.r.below(8) {
            0 => self.r.pick(&[
                0i64,
                1,
                -1,
                i64::from(i32::MAX),
                i64::from(i32::MIN),
                0x5555,
            ]),
            1 if ty == Type::I64 => self.r.pick(&[i64::MAX, i64::MIN, 1 << 40]),
            _ => self.r.range(0, 20) as i64 - 5,
        };
        self.b.iconst(ty, v)
    }

    fn fconst_for(&mut self, ty: Type) -> Value {
        let x = match self.r.below(10) {
            0 => self.r.pick(&[0.0, -0.0, f64::INFINITY, 1e30, -1e-30, 0.1]),
            _ => (self.r.range(0, 32) as f64 - 8.0) * 0.5,
        };
        if ty == Type::F32 {
            self.b.fconst_f32(x as f32)
        } else {
            self.b.fconst_f64(x)
        }
    }

    fn leaf(&mut self, ty: Type) -> Value {
        match self.r.below(6) {
            0..=2 if self.vars.iter().any(|v| v.1 == ty) => {
                let var = self.var_of(ty);
                self.b.use_var(var)
            }
            3 => {
                if ty.is_int() {
                    self.iconst_for(ty)
                } else {
                    self.fconst_for(ty)
                }
            }
            4 if self.o.allow_memory => self.load(ty),
            _ => match ty {
                Type::I32 => {
                    let r =
                        self.r
                            .pick(&[SpecialReg::TidX, SpecialReg::CtaidX, SpecialReg::LaneId]);
                    if self.r.chance(1, 2) {
                        self.env.n
                    } else {
                        self.b.sreg(r)
                    }
                }
                Type::I64 => self.b.sext(Type::I64, self.env.tid),
                Type::F32 => self.env.s,
                _ => self.b.fpext(Type::F64, self.env.s),
            },
        }
    }

    /// A load from an input buffer (kernels) or the local slot, converted to `ty`.
    fn load(&mut self, ty: Type) -> Value {
        let (p, elem) = match self.env.bufs {
            Some(bufs) if self.r.chance(3, 4) => {
                let float = ty.is_float();
                let buf = if float { bufs[2] } else { bufs[1] };
                let elem = if float { Type::F32 } else { Type::I32 };
                let mut buf = buf;
                if self.r.chance(1, 8) {
                    buf = self.b.addrspace_cast(Type::Ptr(AddrSpace::Generic), buf);
                }
                let e = self.expr(Type::I32, 1);
                let idx = if self.o.ub_free {
                    let len = self
                        .b
                        .iconst(Type::I32, i64::from(self.o.buffer_len.max(1)));
                    self.b.urem(e, len)
                } else {
                    e
                };
                (self.b.ptradd(buf, idx, 4), elem)
            }
            _ => (self.slot_ptr(), Type::I32),
        };
        let v = if self.r.chance(1, 8) {
            self.b.load_volatile(elem, p)
        } else {
            self.b.load(elem, p)
        };
        self.convert(v, ty)
    }

    fn expr(&mut self, ty: Type, depth: u32) -> Value {
        if depth == 0 || self.r.chance(1, 3) {
            return self.leaf(ty);
        }
        let d = depth - 1;
        match self.r.below(7) {
            0..=2 => {
                let a = self.expr(ty, d);
                let b = self.expr(ty, d);
                self.binary(ty, a, b)
            }
            3 => {
                let a = self.expr(ty, d);
                let op = if ty.is_int() {
                    self.r.pick(&INT_UNARY)
                } else {
                    self.r.pick(&FLOAT_UNARY)
                };
                self.b.unary(op, a)
            }
            4 => {
                let c = self.cond(d);
                let a = self.expr(ty, d);
                let b = self.expr(ty, d);
                self.b.select(c, a, b)
            }
            5 => {
                let from = self.r.pick(&VAR_TYPES);
                let v = self.expr(from, d);
                self.convert(v, ty)
            }
            _ => {
                if ty.is_float() {
                    let a = self.expr(ty, d);
                    let b = self.expr(ty, d);
                    let c = self.expr(ty, d);
                    self.b.fma(a, b, c)
                } else {
                    let a = self.expr(ty, d);
                    self.b.freeze(a)
                }
            }
        }
    }

    fn binary(&mut self, ty: Type, a: Value, b: Value) -> Value {
        if ty.is_float() {
            let op = self.r.pick(&FLOAT_BINARY);
            return self.b.binary(op, a, b, IntFlags::NONE);
        }
        let op = self.r.pick(&INT_BINARY);
        if !self.o.ub_free {
            let allowed = op.allowed_flags();
            let mut flags = IntFlags::NONE;
            for f in [IntFlags::NSW, IntFlags::NUW, IntFlags::EXACT] {
                if allowed.contains(f) && self.r.chance(1, 4) {
                    flags = flags.union(f);
                }
            }
            return self.b.binary(op, a, b, flags);
        }
        let b = match op {
            Opcode::Udiv | Opcode::Urem => {
                let one = self.b.iconst(ty, 1);
                self.b.or(b, one)
            }
            Opcode::Sdiv | Opcode::Srem => {
                // In [1, 255]: never zero, never -1 (so no MIN / -1 overflow).
                let m = self.b.iconst(ty, 255);
                let low = self.b.and(b, m);
                let one = self.b.iconst(ty, 1);
                self.b.or(low, one)
            }
            Opcode::Shl | Opcode::Lshr | Opcode::Ashr => {
                let m = self.b.iconst(ty, i64::from(ty.bits() - 1));
                self.b.and(b, m)
            }
            _ => b,
        };
        self.b.binary(op, a, b, IntFlags::NONE)
    }

    /// Convert between the generator's value types, avoiding poison in UB-free mode.
    fn convert(&mut self, v: Value, to: Type) -> Value {
        let from = self.b.func.dfg.value_type(v);
        if from == to {
            return v;
        }
        let pick_signed = self.r.chance(1, 2);
        match (from.is_int(), to.is_int()) {
            (true, true) => {
                if to.bits() > from.bits() {
                    if pick_signed {
                        self.b.sext(to, v)
                    } else {
                        self.b.zext(to, v)
                    }
                } else {
                    self.b.trunc(to, v)
                }
            }
            (true, false) => {
                if from.bits() == to.bits() && self.r.chance(1, 3) {
                    self.b.bitcast(to, v)
                } else if pick_signed {
                    self.b.sitofp(to, v)
                } else {
                    self.b.uitofp(to, v)
                }
            }
            (false, false) => {
                if to.bits() > from.bits() {
                    self.b.fpext(to, v)
                } else {
                    self.b.fptrunc(to, v)
                }
            }
            (false, true) => {
                if from.bits() == to.bits() && self.r.chance(1, 3) {
                    return self.b.bitcast(to, v);
                }
                let v = if self.o.ub_free {
                    // Clamp into range; fmax/fmin also turn NaN into a bound.
                    let lim = if to.bits() == 32 { 1e9 } else { 1e18 };
                    let lo = if pick_signed { -lim } else { 0.0 };
                    let (lo, hi) = if from == Type::F32 {
                        (self.b.fconst_f32(lo as f32), self.b.fconst_f32(lim as f32))
                    } else {
                        (self.b.fconst_f64(lo), self.b.fconst_f64(lim))
                    };
                    let x = self.b.fmax(v, lo);
                    self.b.fmin(x, hi)
                } else {
                    v
                };
                if pick_signed {
                    self.b.fptosi(to, v)
                } else {
                    self.b.fptoui(to, v)
                }
            }
        }
    }

    fn as_i32(&mut self, v: Value) -> Value {
        match self.b.func.dfg.value_type(v) {
            Type::I32 => v,
            Type::I64 => self.b.trunc(Type::I32, v),
            Type::F32 => self.b.bitcast(Type::I32, v),
            _ => {
                let f = self.b.fptrunc(Type::F32, v);
                self.b.bitcast(Type::I32, f)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::builder::test_util::{check_structure, rpo, DomTree};
    use crate::dfg::ValueDef;
    use crate::entities::Inst;
    use crate::instructions::InstructionData;
    use cranelift_entity::SecondaryMap;

    /// Everything about a module that identical generation must reproduce.
    fn fingerprint(m: &Module) -> String {
        let mut s = String::new();
        for g in m.globals.values() {
            s += &format!("{g:?}\n");
        }
        for f in m.functions.values() {
            s += &format!("{} {:?} {:?} {}\n", f.name, f.kind, f.sig, f.convergent);
            for b in f.layout.blocks() {
                let params: Vec<_> = f
                    .dfg
                    .block_params(b)
                    .iter()
                    .map(|&p| (p, f.dfg.value_type(p)))
                    .collect();
                s += &format!("{b}{params:?}\n");
                for i in f.layout.block_insts(b) {
                    let mut ops = Vec::new();
                    f.dfg.for_each_inst_value(i, |v| ops.push(v));
                    let mut dests = Vec::new();
                    f.dfg.for_each_dest(i, |bc| dests.push(bc.block));
                    let data = match f.dfg.inst(i) {
                        InstructionData::BrTable { table, .. } => {
                            format!(
                                "{:?}",
                                f.dfg
                                    .jump_table(*table)
                                    .cases
                                    .iter()
                                    .map(|c| c.0)
                                    .collect::<Vec<_>>()
                            )
                        }
                        d => format!("{:?}", (d.opcode(), core::mem::discriminant(d))),
                    };
                    s += &format!(
                        "  {:?} = {data} {ops:?} {dests:?}\n",
                        f.dfg.inst_result(i).map(|v| (v, f.dfg.value_type(v)))
                    );
                }
            }
        }
        s
    }

    fn check_module(m: &Module) {
        if let Err(e) = crate::verifier::verify_module(m) {
            panic!("verifier:\n{e}");
        }
        for (id, f) in m.functions.iter() {
            if let Err(e) = check_structure(f) {
                panic!("{id} ({}): {e}", f.name);
            }
            assert_eq!(
                rpo(f).len(),
                f.layout.num_blocks(),
                "{id}: unreachable blocks"
            );
            // Calls go to earlier functions with matching signatures.
            for b in f.layout.blocks() {
                for i in f.layout.block_insts(b) {
                    if let InstructionData::Call { func, .. } = f.dfg.inst(i) {
                        assert!(*func < id, "call graph is acyclic");
                        let sig = &m.functions[*func].sig;
                        let args = f.dfg.inst_args(i);
                        assert_eq!(args.len(), sig.params.len());
                        for (a, t) in args.iter().zip(&sig.params) {
                            assert_eq!(f.dfg.value_type(*a), *t);
                        }
                        assert_eq!(f.dfg.inst_result(i).map(|v| f.dfg.value_type(v)), sig.ret);
                    }
                }
            }
        }
    }

    fn option_sets() -> Vec<(&'static str, GenOptions)> {
        vec![
            ("default", GenOptions::default()),
            ("minimal", GenOptions::minimal()),
            (
                "raw",
                GenOptions {
                    ub_free: false,
                    ..GenOptions::default()
                },
            ),
            (
                "deep",
                GenOptions {
                    max_nesting: 5,
                    max_stmts: 5,
                    max_blocks: 150,
                    ..GenOptions::default()
                },
            ),
            (
                "loops only",
                GenOptions {
                    allow_loops: true,
                    allow_nested_loops: true,
                    allow_multi_latch: true,
                    allow_multi_exit: true,
                    ..GenOptions::minimal()
                },
            ),
        ]
    }

    #[test]
    fn thousand_seeds_per_option_set() {
        for (name, opts) in option_sets() {
            for seed in 0..1000 {
                let (m, c) = generate_from_seed(&opts, seed);
                let k = &m.functions[c.kernel];
                assert_eq!(k.kind, FuncKind::Kernel, "{name} seed {seed}");
                assert_eq!(k.sig.params.len(), c.params.len());
                check_module(&m);
            }
        }
    }

    /// Options drawn at random (as `cargo xtask fuzz` draws them) give well-formed
    /// modules, and the draws cover both values of every feature flag.
    #[test]
    fn random_options_give_valid_modules() {
        let mut seen_iv = [false; 2];
        let mut iv_branch = false;
        for seed in 0..300u64 {
            let mut rng = SplitMix64::new(seed);
            let opts = GenOptions::random(&mut rng);
            seen_iv[usize::from(opts.allow_iv_branches)] = true;
            let (m, c) = generate_kernel_module(&opts, &mut rng);
            assert_eq!(m.functions[c.kernel].kind, FuncKind::Kernel);
            check_module(&m);
            iv_branch |= opts.allow_iv_branches && iv_compares(&m.functions[c.kernel]);
        }
        assert_eq!(seen_iv, [true, true]);
        assert!(iv_branch, "allow_iv_branches never compared a loop counter");
    }

    /// Does some `icmp` other than `ult` compare a loop counter (an `i32` block
    /// parameter `p` with an `iadd p, 1` somewhere: expressions never read counters)
    /// against a constant? The generator's own loop tests use only `ult`.
    fn iv_compares(f: &Function) -> bool {
        let konst = |v: Value| match f.dfg.value_def(v) {
            ValueDef::Result(d) => match f.dfg.inst(d) {
                InstructionData::IntConst { imm } => Some(*imm),
                _ => None,
            },
            _ => None,
        };
        let insts: Vec<Inst> = f
            .layout
            .blocks()
            .flat_map(|b| f.layout.block_insts(b))
            .collect();
        let incremented = |p: Value| {
            insts.iter().any(|&i| {
                f.dfg.inst(i).opcode() == Opcode::Iadd
                    && f.dfg.inst_args(i)[0] == p
                    && konst(f.dfg.inst_args(i)[1]) == Some(1)
            })
        };
        insts.iter().any(|&i| match f.dfg.inst(i) {
            InstructionData::IntCompare { cond, args } => {
                *cond != IntCC::Ult
                    && matches!(f.dfg.value_def(args[0]), ValueDef::Param(..))
                    && f.dfg.value_type(args[0]) == Type::I32
                    && konst(args[1]).is_some()
                    && incremented(args[0])
            }
            _ => false,
        })
    }

    #[test]
    fn same_seed_same_module() {
        let opts = GenOptions::default();
        let mut distinct = std::collections::BTreeSet::new();
        for seed in 0..50 {
            let a = fingerprint(&generate_from_seed(&opts, seed).0);
            let b = fingerprint(&generate_from_seed(&opts, seed).0);
            assert_eq!(a, b, "seed {seed}");
            distinct.insert(a);
        }
        assert!(distinct.len() > 45, "seeds should give different modules");
        // quickcheck::Gen with the same seed also reproduces.
        let a = generate_module(&opts, &mut quickcheck::Gen::from_size_and_seed(10, 7));
        let b = generate_module(&opts, &mut quickcheck::Gen::from_size_and_seed(10, 7));
        assert_eq!(fingerprint(&a), fingerprint(&b));
    }

    /// Natural loops: back edges (u -> h, h dominates u) grouped by header, with bodies.
    struct Loops {
        /// (header, latches, body blocks)
        loops: Vec<(Block, Vec<Block>, Vec<Block>)>,
    }

    fn natural_loops(f: &Function) -> Loops {
        let (order, dom) = DomTree::new(f);
        let mut latches: SecondaryMap<Block, Vec<Block>> = SecondaryMap::new();
        let mut headers = Vec::new();
        let mut preds: SecondaryMap<Block, Vec<Block>> = SecondaryMap::new();
        for &u in &order {
            let mut succ = f.successors(u);
            succ.dedup();
            for h in succ {
                preds[h].push(u);
                if dom.dominates(h, u) {
                    if latches[h].is_empty() {
                        headers.push(h);
                    }
                    latches[h].push(u);
                }
            }
        }
        let mut loops = Vec::new();
        for h in headers {
            let mut body = vec![h];
            let mut seen: SecondaryMap<Block, bool> = SecondaryMap::new();
            seen[h] = true;
            let mut work = latches[h].clone();
            while let Some(b) = work.pop() {
                if !seen[b] {
                    seen[b] = true;
                    body.push(b);
                    work.extend(preds[b].iter().copied());
                }
            }
            loops.push((h, latches[h].clone(), body));
        }
        Loops { loops }
    }

    /// Is there a retreating DFS edge whose target does not dominate its source (a
    /// cycle with more than one entry)?
    fn has_irreducible_cycle(f: &Function) -> bool {
        let (order, dom) = DomTree::new(f);
        let Some(&entry) = order.first() else {
            return false;
        };
        let mut state: SecondaryMap<Block, u8> = SecondaryMap::new(); // 1 on stack, 2 done
        let mut stack = vec![(entry, f.successors(entry), 0usize)];
        state[entry] = 1;
        while let Some(top) = stack.last_mut() {
            if top.2 < top.1.len() {
                let (u, s) = (top.0, top.1[top.2]);
                top.2 += 1;
                match state[s] {
                    0 => {
                        state[s] = 1;
                        let succ = f.successors(s);
                        stack.push((s, succ, 0));
                    }
                    1 if !dom.dominates(s, u) => return true,
                    _ => {}
                }
            } else {
                state[top.0] = 2;
                stack.pop();
            }
        }
        false
    }

    fn count_opcode(m: &Module, op: Opcode) -> usize {
        m.functions
            .values()
            .map(|f| {
                f.layout
                    .blocks()
                    .flat_map(|b| f.layout.block_insts(b))
                    .filter(|&i| f.dfg.inst(i).opcode() == op)
                    .count()
            })
            .sum()
    }

    #[derive(Default, Debug)]
    struct Features {
        br_table: bool,
        loops: bool,
        nested: bool,
        multi_latch: bool,
        multi_exit: bool,
        memory: bool,
        barrier: bool,
        warp: bool,
        irreducible: bool,
        calls: bool,
    }

    fn features(m: &Module) -> Features {
        let mut ft = Features {
            br_table: count_opcode(m, Opcode::BrTable) > 0,
            // The epilogue's result stores are always there; memory means the rest.
            memory: [
                Opcode::Load,
                Opcode::AtomicRmw,
                Opcode::AtomicCas,
                Opcode::SlotAddr,
            ]
            .iter()
            .any(|&op| count_opcode(m, op) > 0)
                || count_opcode(m, Opcode::Store) > GenOptions::default().out_per_thread as usize,
            barrier: count_opcode(m, Opcode::Barrier) > 0,
            warp: [Opcode::Shfl, Opcode::Vote, Opcode::WarpSync]
                .iter()
                .any(|&op| count_opcode(m, op) > 0),
            calls: count_opcode(m, Opcode::Call) > 0,
            ..Features::default()
        };
        for f in m.functions.values() {
            ft.irreducible |= has_irreducible_cycle(f);
            let l = natural_loops(f);
            ft.loops |= !l.loops.is_empty();
            for (h, latches, body) in &l.loops {
                ft.multi_latch |= latches.len() >= 2;
                ft.nested |= l
                    .loops
                    .iter()
                    .any(|(h2, _, _)| h2 != h && body.contains(h2));
                let mut exits = 0;
                for &b in body {
                    if f.terminator(b).map(|t| f.dfg.inst(t).opcode()) == Some(Opcode::Return) {
                        exits += 1;
                    }
                    let mut succ = f.successors(b);
                    succ.dedup();
                    exits += succ.iter().filter(|s| !body.contains(s)).count();
                }
                ft.multi_exit |= exits >= 2;
            }
        }
        ft
    }

    #[test]
    fn each_flag_produces_its_feature() {
        type Get = fn(&Features) -> bool;
        type Set = fn(&mut GenOptions, bool);
        let cases: Vec<(&str, Get, Set)> = vec![
            ("switch", |f| f.br_table, |o, v| o.allow_switch = v),
            ("loops", |f| f.loops, |o, v| o.allow_loops = v),
            (
                "nested loops",
                |f| f.nested,
                |o, v| o.allow_nested_loops = v,
            ),
            (
                "multi latch",
                |f| f.multi_latch,
                |o, v| o.allow_multi_latch = v,
            ),
            (
                "multi exit",
                |f| f.multi_exit,
                |o, v| o.allow_multi_exit = v,
            ),
            ("memory", |f| f.memory, |o, v| o.allow_memory = v),
            ("barriers", |f| f.barrier, |o, v| o.allow_barriers = v),
            ("warp ops", |f| f.warp, |o, v| o.allow_warp_ops = v),
            (
                "irreducible",
                |f| f.irreducible,
                |o, v| o.allow_irreducible = v,
            ),
            ("calls", |f| f.calls, |o, v| o.allow_calls = v),
        ];
        for (name, get, set) in cases {
            // Irreducible cycles also look like multi-latch/multi-exit loops to the
            // natural-loop finder; keep them out unless they are what is measured.
            let mut on = GenOptions {
                allow_irreducible: name == "irreducible",
                ..GenOptions::default()
            };
            set(&mut on, true);
            let mut off = on.clone();
            set(&mut off, false);
            let mut hits = 0;
            for seed in 0..300 {
                let m = generate_from_seed(&on, seed).0;
                hits += usize::from(get(&features(&m)));
                let m = generate_from_seed(&off, seed).0;
                assert!(
                    !get(&features(&m)),
                    "{name} off, seed {seed}: feature present"
                );
            }
            assert!(hits >= 15, "{name}: only {hits}/300 modules have it");
        }
    }

    #[test]
    fn barrier_kernels_are_marked_convergent() {
        for seed in 0..200 {
            let m = generate_from_seed(&GenOptions::default(), seed).0;
            for f in m.functions.values() {
                let has = f
                    .layout
                    .blocks()
                    .flat_map(|b| f.layout.block_insts(b))
                    .any(|i| f.dfg.inst(i).opcode() == Opcode::Barrier);
                assert_eq!(has, f.convergent, "seed {seed}");
                assert!(!has || f.kind == FuncKind::Kernel);
            }
        }
    }

    /// Pattern matching on definitions, for the UB-free checks.
    struct Pat<'f>(&'f Function);

    impl Pat<'_> {
        fn def(&self, v: Value) -> Option<&InstructionData> {
            match self.0.dfg.value_def(v) {
                ValueDef::Result(i) => Some(self.0.dfg.inst(i)),
                _ => None,
            }
        }
        fn iconst(&self, v: Value) -> Option<i64> {
            match self.def(v)? {
                InstructionData::IntConst { imm } => Some(*imm),
                _ => None,
            }
        }
        fn bin(&self, v: Value, op: Opcode) -> Option<[Value; 2]> {
            match self.def(v)? {
                InstructionData::Binary {
                    opcode,
                    args,
                    flags,
                } if *opcode == op => {
                    assert!(flags.is_empty(), "flags in UB-free code");
                    Some(*args)
                }
                _ => None,
            }
        }
        fn sreg(&self, v: Value, r: SpecialReg) -> bool {
            matches!(self.def(v), Some(InstructionData::Sreg { reg }) if *reg == r)
        }
        fn param(&self, v: Value, n: u32) -> bool {
            let entry = self.0.entry_block().unwrap();
            self.0.dfg.value_def(v) == ValueDef::Param(entry, n)
        }
        /// `gid * K` with gid = ctaid.x * ntid.x + tid.x.
        fn out_base(&self, v: Value, k: i64) -> bool {
            let Some([gid, kk]) = self.bin(v, Opcode::Imul) else {
                return false;
            };
            let Some([base, tid]) = self.bin(gid, Opcode::Iadd) else {
                return false;
            };
            let Some([c, n]) = self.bin(base, Opcode::Imul) else {
                return false;
            };
            self.iconst(kk) == Some(k)
                && self.sreg(tid, SpecialReg::TidX)
                && self.sreg(c, SpecialReg::CtaidX)
                && self.sreg(n, SpecialReg::NtidX)
        }
        /// Is `ptr` inside this thread's part of `out`, its slot, its shared element, or
        /// an input buffer (for loads)?
        fn safe_ptr(&self, ptr: Value, k: i64, len: i64, store: bool) -> bool {
            let Some(InstructionData::PtrAdd {
                args: [base, idx],
                scale: 4,
            }) = self.def(ptr)
            else {
                return false;
            };
            let (base, idx) = (*base, *idx);
            let urem_by = |v: Value| self.bin(v, Opcode::Urem).and_then(|[_, m]| self.iconst(m));
            if self.param(base, 0) {
                let Some([ob, j]) = self.bin(idx, Opcode::Iadd) else {
                    return false;
                };
                let j_ok =
                    urem_by(j) == Some(k) || self.iconst(j).is_some_and(|j| (0..k).contains(&j));
                return self.out_base(ob, k) && j_ok;
            }
            match self.def(base) {
                Some(InstructionData::SlotAddr { .. }) => {
                    urem_by(idx) == Some(i64::from(SLOT_ELEMS))
                        || self
                            .iconst(idx)
                            .is_some_and(|j| (0..i64::from(SLOT_ELEMS)).contains(&j))
                }
                Some(InstructionData::GlobalAddr { .. }) if store => {
                    // Own shared element: tid.x urem size.
                    self.bin(idx, Opcode::Urem)
                        .is_some_and(|[t, _]| self.sreg(t, SpecialReg::TidX))
                }
                Some(InstructionData::GlobalAddr { .. }) => self
                    .bin(idx, Opcode::Urem)
                    .is_some_and(|[_, m]| self.sreg(m, SpecialReg::NtidX)),
                _ if store => false,
                _ => {
                    let in_buf = |b: Value| {
                        self.param(b, 1)
                            || self.param(b, 2)
                            || matches!(self.def(b),
                                Some(InstructionData::Unary { opcode: Opcode::AddrspaceCast, arg })
                                    if self.param(*arg, 1) || self.param(*arg, 2))
                    };
                    in_buf(base) && urem_by(idx) == Some(len)
                }
            }
        }
    }

    #[test]
    fn ub_free_code_follows_the_contract() {
        let opts = GenOptions::default();
        let (k, len) = (i64::from(opts.out_per_thread), i64::from(opts.buffer_len));
        let mut stores = 0;
        for seed in 0..300 {
            let (m, contract) = generate_from_seed(&opts, seed);
            assert!(contract.ub_free);
            for f in m.functions.values() {
                let p = Pat(f);
                for b in f.layout.blocks() {
                    for i in f.layout.block_insts(b) {
                        let data = f.dfg.inst(i);
                        let args = f.dfg.inst_args(i);
                        let ctx = || format!("seed {seed} {} {i}: {data:?}", f.name);
                        match data.opcode() {
                            Opcode::Store | Opcode::AtomicRmw | Opcode::AtomicCas => {
                                let ptr = if data.opcode() == Opcode::Store {
                                    args[1]
                                } else {
                                    args[0]
                                };
                                assert!(p.safe_ptr(ptr, k, len, true), "{}", ctx());
                                stores += 1;
                            }
                            Opcode::Load => {
                                assert!(p.safe_ptr(args[0], k, len, false), "{}", ctx())
                            }
                            Opcode::Udiv | Opcode::Urem | Opcode::Sdiv | Opcode::Srem => {
                                let d = args[1];
                                let ok = p.iconst(d).is_some_and(|c| c > 0)
                                    || p.bin(d, Opcode::Or).is_some_and(|[x, one]| {
                                        p.iconst(one) == Some(1)
                                            && (matches!(
                                                data.opcode(),
                                                Opcode::Udiv | Opcode::Urem
                                            ) || p
                                                .bin(x, Opcode::And)
                                                .is_some_and(|[_, m]| p.iconst(m) == Some(255)))
                                    })
                                    || p.sreg(d, SpecialReg::NtidX);
                                assert!(ok, "{}", ctx());
                            }
                            Opcode::Shl | Opcode::Lshr | Opcode::Ashr => {
                                let w = i64::from(f.dfg.value_type(args[0]).bits()) - 1;
                                let ok = p
                                    .bin(args[1], Opcode::And)
                                    .is_some_and(|[_, m]| p.iconst(m) == Some(w));
                                assert!(ok, "{}", ctx());
                            }
                            Opcode::Fptosi | Opcode::Fptoui => {
                                let ok = p
                                    .bin(args[0], Opcode::Fmin)
                                    .is_some_and(|[x, _]| p.bin(x, Opcode::Fmax).is_some());
                                assert!(ok, "{}", ctx());
                            }
                            _ => {
                                if let InstructionData::Binary { flags, .. } = data {
                                    assert!(flags.is_empty(), "{}", ctx());
                                }
                            }
                        }
                    }
                }
            }
        }
        assert!(stores > 1000, "too few stores checked: {stores}");
    }

    #[test]
    fn raw_mode_uses_flags_and_raw_divisors() {
        let opts = GenOptions {
            ub_free: false,
            ..GenOptions::default()
        };
        let mut flagged = 0;
        for seed in 0..100 {
            let m = generate_from_seed(&opts, seed).0;
            for f in m.functions.values() {
                for b in f.layout.blocks() {
                    for i in f.layout.block_insts(b) {
                        if let InstructionData::Binary { flags, .. } = f.dfg.inst(i) {
                            flagged += usize::from(!flags.is_empty());
                        }
                    }
                }
            }
        }
        assert!(flagged > 0);
    }

    #[test]
    fn quickcheck_and_arbitrary_drive_the_generator() {
        fn prop(m: ArbModule) -> bool {
            check_module(&m.0);
            m.0.functions
                .values()
                .last()
                .is_some_and(|f| f.kind == FuncKind::Kernel)
        }
        quickcheck::QuickCheck::new()
            .tests(100)
            .quickcheck(prop as fn(ArbModule) -> bool);

        let mut bytes = vec![0u8; 4096];
        let mut r = SplitMix64::new(3);
        for chunk in 0..40 {
            for b in bytes.iter_mut() {
                *b = r.next_u64() as u8;
            }
            let len = chunk * 100;
            let mut u = arbitrary::Unstructured::new(&bytes[..len]);
            let m = <ArbModule as arbitrary::Arbitrary>::arbitrary(&mut u).unwrap();
            check_module(&m.0);
        }
    }

    #[test]
    fn large_function_on_a_small_stack() {
        let h = std::thread::Builder::new()
            .stack_size(2 << 20)
            .spawn(|| {
                let opts = GenOptions {
                    target_blocks: Some(100_000),
                    ..GenOptions::default()
                };
                let f = generate_function(&opts, &mut SplitMix64::new(1));
                assert!(f.layout.num_blocks() >= 100_000);
                assert_eq!(
                    rpo(&f).len(),
                    f.layout.num_blocks(),
                    "every block is reachable"
                );
                check_structure(&f).unwrap();
                crate::verifier::verify_function(&f, None).unwrap();
            })
            .unwrap();
        h.join().unwrap();
    }

    #[test]
    fn branches_are_both_uniform_and_divergent() {
        // A condition is divergent when it depends (through operands and block
        // parameters) on tid.x, laneid or a load; uniform otherwise.
        let (mut uniform, mut divergent) = (0, 0);
        for seed in 0..100 {
            let m = generate_from_seed(&GenOptions::default(), seed).0;
            let f = m.functions.values().last().unwrap();
            let mut div: SecondaryMap<Value, bool> = SecondaryMap::new();
            let mut changed = true;
            while changed {
                changed = false;
                for b in f.layout.blocks() {
                    for i in f.layout.block_insts(b) {
                        let data = f.dfg.inst(i);
                        if let Some(r) = f.dfg.inst_result(i) {
                            let src = matches!(
                                data,
                                InstructionData::Sreg {
                                    reg: SpecialReg::TidX | SpecialReg::LaneId
                                } | InstructionData::Load { .. }
                                    | InstructionData::AtomicRmw { .. }
                                    | InstructionData::AtomicCas { .. }
                                    | InstructionData::Call { .. }
                            );
                            let d = src || f.dfg.inst_args(i).iter().any(|&a| div[a]);
                            if d && !div[r] {
                                div[r] = true;
                                changed = true;
                            }
                        }
                        let mut edges: Vec<(Block, Vec<Value>)> = Vec::new();
                        f.dfg.for_each_dest(i, |bc| {
                            edges.push((bc.block, f.dfg.block_call_args(bc).to_vec()))
                        });
                        for (t, args) in edges {
                            for (&p, a) in f.dfg.block_params(t).iter().zip(args) {
                                if div[a] && !div[p] {
                                    div[p] = true;
                                    changed = true;
                                }
                            }
                        }
                    }
                }
            }
            for b in f.layout.blocks() {
                let t: Inst = f.terminator(b).unwrap();
                if let InstructionData::Brif { arg, .. } = f.dfg.inst(t) {
                    if div[*arg] {
                        divergent += 1;
                    } else {
                        uniform += 1;
                    }
                }
            }
        }
        assert!(
            uniform > 50 && divergent > 50,
            "uniform {uniform}, divergent {divergent}"
        );
    }

    #[test]
    fn generated_modules_round_trip_through_text() {
        let raw = GenOptions {
            ub_free: false,
            ..GenOptions::default()
        };
        for opts in [GenOptions::default(), raw] {
            for seed in 0..100 {
                let m = generate_from_seed(&opts, seed).0;
                let mut text = String::new();
                crate::write::write_module(&mut text, &m).unwrap();
                let back = crate::parser::parse_module(&text)
                    .unwrap_or_else(|e| panic!("seed {seed}: {e}\n{text}"));
                let mut again = String::new();
                crate::write::write_module(&mut again, &back).unwrap();
                assert_eq!(text, again, "seed {seed}");
            }
        }
    }
}
