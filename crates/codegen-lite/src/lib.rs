//! A direct lowering of Gyre IR modules to PTX text.
//!
//! [`compile_module`] verifies the module (any control flow, irreducible too) and emits
//! one `.entry` per kernel and one `.func` per device function. Every SSA value gets its
//! own PTX virtual register (ptxas does the real register allocation), except that a
//! block parameter shares one with the arguments passed to it where their live ranges do
//! not interfere (`coalesce.rs`, [`CodegenFlags::coalesce`]); the remaining block
//! arguments become parallel copies on the incoming edges, sequentialized with a
//! temporary for cycles ([`pcopy`]); blocks are laid out in loop-aware reverse post-order
//! ([`order`]); conditional branches the uniformity analysis proves uniform become
//! `bra.uni` ([`uniform`]). docs/ptx.md describes every lowering.
//!
//! ```
//! use gyre_codegen_lite::{compile_module, CodegenOptions, Sm};
//! let m = gyre_ir::parse_module("
//! kernel @k(ptr.global) {
//! block0(v0: ptr.global):
//!     v1 = tid.x
//!     store v1, v0
//!     return
//! }
//! ").unwrap();
//! let ptx = compile_module(&m, &CodegenOptions { sm: Sm::Sm80 }).unwrap();
//! assert!(ptx.contains(".target sm_80"));
//! assert!(ptx.contains("cvta.to.global.u64"));
//! ```
//!
//! The whole path a front end takes (docs/frontend.md; `crates/toyc` is a complete one):
//! build a kernel with SSA variables, verify it, optimize it, run it in the reference
//! interpreter and lower it to PTX.
//!
//! ```
//! use gyre_codegen_lite::{compile_module, CodegenOptions, Sm};
//! use gyre_ir::builder::{FunctionBuilder, InstBuilder};
//! use gyre_ir::{AddrSpace, FuncKind, Function, IntCC, Module, Signature, SpecialReg, Type};
//! // kernel sum(out: *i32, n: i32) { let s = 0; for i in 0..n { s += i; } out[tid.x] = s; }
//! let sig = Signature { params: vec![Type::Ptr(AddrSpace::Global), Type::I32], ret: None };
//! let mut func = Function::new("sum", FuncKind::Kernel, sig);
//! let mut b = FunctionBuilder::new(&mut func);
//! let (entry, header, body, exit) =
//!     (b.create_block(), b.create_block(), b.create_block(), b.create_block());
//! b.append_block_params_for_function_params(entry);
//! b.switch_to_block(entry);
//! b.seal_block(entry);
//! let (out, n) = (b.block_params(entry)[0], b.block_params(entry)[1]);
//! let (s, i) = (b.declare_var(Type::I32), b.declare_var(Type::I32));
//! let zero = b.iconst(Type::I32, 0);
//! b.def_var(s, zero);
//! b.def_var(i, zero);
//! b.jump(header, &[]);
//! b.switch_to_block(header); // sealed once the back edge exists
//! let iv = b.use_var(i);
//! let c = b.icmp(IntCC::Slt, iv, n);
//! b.brif(c, body, &[], exit, &[]);
//! b.switch_to_block(body);
//! b.seal_block(body);
//! let (sv, iv) = (b.use_var(s), b.use_var(i));
//! let s2 = b.iadd(sv, iv);
//! b.def_var(s, s2);
//! let one = b.iconst(Type::I32, 1);
//! let i2 = b.iadd(iv, one);
//! b.def_var(i, i2);
//! b.jump(header, &[]);
//! b.seal_block(header);
//! b.switch_to_block(exit);
//! b.seal_block(exit);
//! let t = b.sreg(SpecialReg::TidX);
//! let p = b.ptradd(out, t, 4);
//! let sv = b.use_var(s);
//! b.store(sv, p);
//! b.ret(None);
//! b.finalize().unwrap(); // the header now has block parameters for `s` and `i`
//! let mut m = Module::new();
//! m.functions.push(func);
//! gyre_ir::verifier::verify_module(&m).unwrap();
//! gyre_transforms::optimize(&mut m, gyre_transforms::OptLevel::O2).unwrap();
//! let mut mem = gyre_interp::Memory::new();
//! mem.alloc_from("out", &[0i32; 2]);
//! let args = vec![gyre_interp::Arg::buffer("out"), gyre_interp::Arg::Int(5)];
//! gyre_interp::run_kernel(&m, "sum", &gyre_interp::Launch::linear(1, 2, args), &mut mem).unwrap();
//! assert_eq!(mem.read::<i32>("out").unwrap(), vec![10, 10]);
//! let ptx = compile_module(&m, &CodegenOptions { sm: Sm::Sm90 }).unwrap();
//! assert!(ptx.contains(".entry sum"));
//! ```
#![warn(missing_docs)]

mod coalesce;
mod emit;
mod fmod;
mod fold;
mod nan;
pub mod order;
pub mod pcopy;
mod space;
pub mod uniform;

use core::fmt;
use gyre_analysis::ModuleAnalyses;
use gyre_ir::verifier::{verify_module, VerifierErrors};
use gyre_ir::{Block, Inst, Module};

pub use uniform::BranchUniformity;

/// A PTX target architecture. Gyre's PTX does not depend on the target beyond the
/// `.version` and `.target` lines, so every target ptxas accepts from Volta on is here.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub enum Sm {
    /// Volta, `sm_70` (PTX ISA 6.0).
    Sm70,
    /// Xavier, `sm_72` (PTX ISA 6.1).
    Sm72,
    /// Turing, `sm_75` (PTX ISA 6.3).
    Sm75,
    /// Ampere, `sm_80` (PTX ISA 7.0).
    Sm80,
    /// Ampere (GA10x), `sm_86` (PTX ISA 7.1).
    Sm86,
    /// Orin, `sm_87` (PTX ISA 7.4).
    Sm87,
    /// Ada, `sm_89` (PTX ISA 7.8).
    Sm89,
    /// Hopper, `sm_90` (PTX ISA 7.8).
    Sm90,
    /// Blackwell, `sm_100` (PTX ISA 8.6).
    Sm100,
    /// Blackwell (GB20x), `sm_120` (PTX ISA 8.7).
    Sm120,
}

impl Sm {
    /// Every supported target.
    pub const ALL: [Sm; 10] = [
        Sm::Sm70,
        Sm::Sm72,
        Sm::Sm75,
        Sm::Sm80,
        Sm::Sm86,
        Sm::Sm87,
        Sm::Sm89,
        Sm::Sm90,
        Sm::Sm100,
        Sm::Sm120,
    ];

    /// The target for a compute-capability number as written after `--sm` (70, 80, 90).
    pub fn from_number(n: u32) -> Option<Sm> {
        Sm::ALL.into_iter().find(|sm| sm.number() == n)
    }

    /// The target for `--sm`: a number (`90`) or a target name (`sm_90`).
    pub fn from_name(s: &str) -> Option<Sm> {
        let n = s.strip_prefix("sm_").unwrap_or(s);
        // Only plain digits: `u32::from_str` would also take `+90`.
        if n.is_empty() || !n.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        n.parse().ok().and_then(Sm::from_number)
    }

    /// The compute-capability number (70, 80, 90).
    pub fn number(self) -> u32 {
        match self {
            Sm::Sm70 => 70,
            Sm::Sm72 => 72,
            Sm::Sm75 => 75,
            Sm::Sm80 => 80,
            Sm::Sm86 => 86,
            Sm::Sm87 => 87,
            Sm::Sm89 => 89,
            Sm::Sm90 => 90,
            Sm::Sm100 => 100,
            Sm::Sm120 => 120,
        }
    }

    /// The `.target` name (`sm_90`).
    pub fn target(self) -> &'static str {
        match self {
            Sm::Sm70 => "sm_70",
            Sm::Sm72 => "sm_72",
            Sm::Sm75 => "sm_75",
            Sm::Sm80 => "sm_80",
            Sm::Sm86 => "sm_86",
            Sm::Sm87 => "sm_87",
            Sm::Sm89 => "sm_89",
            Sm::Sm90 => "sm_90",
            Sm::Sm100 => "sm_100",
            Sm::Sm120 => "sm_120",
        }
    }

    /// The `.version`: the first PTX ISA version that supports the target.
    pub fn ptx_version(self) -> &'static str {
        match self {
            Sm::Sm70 => "6.0",
            Sm::Sm72 => "6.1",
            Sm::Sm75 => "6.3",
            Sm::Sm80 => "7.0",
            Sm::Sm86 => "7.1",
            Sm::Sm87 => "7.4",
            Sm::Sm89 | Sm::Sm90 => "7.8",
            Sm::Sm100 => "8.6",
            Sm::Sm120 => "8.7",
        }
    }
}

impl fmt::Display for Sm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.target())
    }
}

/// What to generate.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub struct CodegenOptions {
    /// The target architecture.
    pub sm: Sm,
}

/// When a multiply and an add become one `fma.rn` (llc's `-fp-contract`).
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug, Default)]
pub enum FpContract {
    /// Never: every `fmul` and `fadd` is rounded on its own, exactly as the IR's
    /// reference semantics (the interpreter) computes.
    #[default]
    Off,
    /// Where the IR allows it: an `fmul` whose only use is an `fadd`, both with the
    /// `contract` flag (imported from LLVM's `contract`/`fast`).
    On,
    /// Every `fmul` whose only use is an `fadd`, flags or not.
    Fast,
}

impl FpContract {
    /// The spellings, as `-C fp-contract=` takes them.
    pub const WORDS: &'static [&'static str] = &["off", "on", "fast"];

    /// The mode for `off`, `on` or `fast`.
    pub fn from_name(s: &str) -> Option<FpContract> {
        match s {
            "off" => Some(FpContract::Off),
            "on" => Some(FpContract::On),
            "fast" => Some(FpContract::Fast),
            _ => None,
        }
    }
}

/// Lowering choices that trade exactness against the IR's reference semantics for
/// speed; the default keeps the IR's semantics bit for bit.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub struct CodegenFlags {
    /// Multiply-add contraction (default [`FpContract::Off`]).
    pub fp_contract: FpContract,
    /// Canonicalize the NaNs whose bits may be observed (`setp.nan` + `selp`, see
    /// docs/ptx.md) in functions without `anynan` (those with it never need it);
    /// `false` leaves the hardware's NaN payloads everywhere, as llc does (default
    /// `true`, what the IR says).
    pub canonical_nans: bool,
    /// Coalesce block parameters with their arguments where their live ranges do not
    /// interfere (one register, no copy on the edge; docs/ptx.md); `false` gives every
    /// multi-edge parameter its own register and copies, for measuring and bisecting
    /// (default `true`; the PTX computes the same either way).
    pub coalesce: bool,
}

impl Default for CodegenFlags {
    fn default() -> Self {
        CodegenFlags {
            fp_contract: FpContract::Off,
            canonical_nans: true,
            coalesce: true,
        }
    }
}

impl CodegenFlags {
    /// Apply one `-C` setting of the back end: `fp-contract=off|on|fast`,
    /// `canonical-nans=true|false` or `ptx-coalesce=true|false`. `Ok(false)` when `setting` is not a back-end
    /// setting (a pass knob, for the caller to apply).
    pub fn apply(&mut self, setting: &str) -> Result<bool, String> {
        let Some((name, value)) = setting.split_once('=') else {
            return Ok(false);
        };
        match name {
            "fp-contract" => {
                self.fp_contract = FpContract::from_name(value).ok_or_else(|| {
                    format!(
                        "fp-contract: '{value}' is not one of {}",
                        FpContract::WORDS.join("|")
                    )
                })?;
            }
            "canonical-nans" => {
                self.canonical_nans = match value {
                    "true" | "1" | "on" => true,
                    "false" | "0" | "off" => false,
                    _ => return Err(format!("canonical-nans: '{value}' is not a bool")),
                };
            }
            "ptx-coalesce" => {
                self.coalesce = match value {
                    "true" | "1" | "on" => true,
                    "false" | "0" | "off" => false,
                    _ => return Err(format!("ptx-coalesce: '{value}' is not a bool")),
                };
            }
            _ => return Ok(false),
        }
        Ok(true)
    }
}

/// Why a module could not be lowered.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CodegenError {
    /// The module does not pass the IR verifier.
    Verify(VerifierErrors),
    /// A function has a cycle with several entries. No longer produced: irreducible
    /// control flow compiles (kept so that callers matching on it still build).
    Irreducible {
        /// The function's name.
        func: String,
        /// The cycle's entry blocks (at least two), in RPO.
        entries: Vec<Block>,
        /// All blocks of the cycle, in RPO.
        blocks: Vec<Block>,
    },
    /// A kernel uses more statically declared shared memory than
    /// [`MAX_STATIC_SHARED`] (ptxas: "uses too much shared data").
    SharedMemory {
        /// The kernel's name.
        func: String,
        /// Bytes of the shared arrays it (and the functions it calls) reference.
        bytes: u64,
    },
    /// An instruction this back end cannot lower.
    Unsupported {
        /// The function's name.
        func: String,
        /// The instruction.
        inst: Inst,
        /// What is not supported.
        what: String,
    },
}

impl fmt::Display for CodegenError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let list = |bs: &[Block]| {
            bs.iter()
                .map(|b| b.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        };
        match self {
            CodegenError::Verify(e) => write!(f, "module does not verify:\n{e}"),
            CodegenError::Irreducible {
                func,
                entries,
                blocks,
            } => write!(
                f,
                "@{func}: irreducible control flow: a cycle entered at {} (blocks {})",
                list(entries),
                list(blocks)
            ),
            CodegenError::Unsupported { func, inst, what } => {
                write!(f, "@{func}: {inst}: unsupported: {what}")
            }
            CodegenError::SharedMemory { func, bytes } => write!(
                f,
                "kernel @{func} uses {bytes} bytes of static shared memory; every target \
                 allows at most {MAX_STATIC_SHARED} (48 KiB): use an `extern` (dynamic) \
                 shared array for more"
            ),
        }
    }
}

impl std::error::Error for CodegenError {}

/// Lower a module to PTX text for `opts.sm`.
///
/// The module must verify; any control flow compiles, irreducible cycles included.
/// Never panics on bad input.
pub fn compile_module(module: &Module, opts: &CodegenOptions) -> Result<String, CodegenError> {
    compile_module_with(module, opts, &mut ModuleAnalyses::new())
}

/// [`compile_module`] reading the analyses it needs (CFG, dominator trees, loops,
/// uniformity) from `analyses`, computing only those that are not valid there: after an
/// optimization pipeline run with the same caches
/// (`PassManager::run_module_with`), nothing is computed twice. The caches must describe
/// `module` as it is now.
pub fn compile_module_with(
    module: &Module,
    opts: &CodegenOptions,
    analyses: &mut ModuleAnalyses,
) -> Result<String, CodegenError> {
    compile_module_with_flags(module, opts, &CodegenFlags::default(), analyses)
}

/// [`compile_module_with`] with explicit [`CodegenFlags`] (fp contraction, NaN
/// canonicalization).
pub fn compile_module_with_flags(
    module: &Module,
    opts: &CodegenOptions,
    flags: &CodegenFlags,
    analyses: &mut ModuleAnalyses,
) -> Result<String, CodegenError> {
    verify_module(module).map_err(CodegenError::Verify)?;
    compile_verified_module(module, opts, flags, analyses)
}

/// [`compile_module_with_flags`] without its verifier run, for a caller that has verified
/// `module` since its last change (`gyre compile` after loading, or after a pipeline run
/// with `--verify-each`): the verifier is about a tenth of the emission time on large
/// kernels. The module must verify; an unverified one may panic here.
pub fn compile_verified_module(
    module: &Module,
    opts: &CodegenOptions,
    flags: &CodegenFlags,
    analyses: &mut ModuleAnalyses,
) -> Result<String, CodegenError> {
    check_static_shared(module)?;
    emit::emit_module(module, opts, flags, analyses)
}

/// The most statically declared shared memory one kernel may reference, on every
/// target: 48 KiB (`0xc000`, ptxas's "uses too much shared data" limit; more needs
/// dynamic shared memory, Gyre's `extern` shared arrays).
pub const MAX_STATIC_SHARED: u64 = 0xc000;

/// Reject a kernel whose reachable functions reference more than [`MAX_STATIC_SHARED`]
/// bytes of non-`extern` shared globals (ptxas counts only the arrays an entry uses).
fn check_static_shared(module: &Module) -> Result<(), CodegenError> {
    use gyre_ir::{FuncId, GlobalId, InstructionData, Linkage, SecondaryMap};
    // Without static shared arrays there is nothing to count: no walk over every
    // instruction (most modules, and every large generated one).
    let static_shared = |g: &gyre_ir::GlobalData| {
        g.space == gyre_ir::AddrSpace::Shared && g.linkage != Linkage::Extern
    };
    if !module.globals.values().any(static_shared) {
        return Ok(());
    }
    let mut seen: SecondaryMap<FuncId, u32> = SecondaryMap::new();
    let mut used: SecondaryMap<GlobalId, u32> = SecondaryMap::new();
    for (kid, kf) in module.functions.iter() {
        if kf.kind != gyre_ir::FuncKind::Kernel {
            continue;
        }
        // Marks are the kernel's index + 1, so no clearing between kernels.
        let mark = kid.as_u32() + 1;
        let mut bytes = 0u64;
        let mut work = vec![kid];
        seen[kid] = mark;
        while let Some(fid) = work.pop() {
            let f = &module.functions[fid];
            for b in f.layout.blocks() {
                for i in f.layout.block_insts(b) {
                    match *f.dfg.inst(i) {
                        InstructionData::GlobalAddr { global } => {
                            let Some(g) = module.globals.get(global) else {
                                continue;
                            };
                            if used[global] != mark && static_shared(g) {
                                used[global] = mark;
                                bytes += g.size().next_multiple_of(u64::from(g.align.max(1)));
                            }
                        }
                        InstructionData::Call { func, .. }
                            if module.functions.is_valid(func) && seen[func] != mark =>
                        {
                            seen[func] = mark;
                            work.push(func);
                        }
                        _ => {}
                    }
                }
            }
        }
        if bytes > MAX_STATIC_SHARED {
            return Err(CodegenError::SharedMemory {
                func: kf.name.clone(),
                bytes,
            });
        }
    }
    Ok(())
}

/// The PTX identifier for an IR name: letters, digits and `_` are kept, every other
/// byte (and a leading digit) becomes `$XX` (two upper-case hex digits). The mapping is
/// injective and never produces `$$`, which the back end keeps for its own names.
pub fn mangle(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for (i, byte) in name.bytes().enumerate() {
        let keep = byte.is_ascii_alphabetic() || byte == b'_' || (i > 0 && byte.is_ascii_digit());
        if keep {
            out.push(byte as char);
        } else {
            out.push_str(&format!("${byte:02X}"));
        }
    }
    if out.is_empty() {
        out.push_str("$$empty");
    }
    out
}
