//! `cargo xtask gpu-table`: every example and every corpus kernel Gyre compiles, run on a
//! real GPU: Gyre's PTX (after `-O`) and `opt -O2 | llc -O2` PTX of the same input, each
//! compared with the interpreter's run of the input and timed with CUDA events; the
//! result is docs/gpu.md.
//!
//! Without a GPU (no driver or no device) the compile columns are still filled and the
//! GPU columns say "not yet measured"; the document says why.

use crate::corpus::launches::{self, Case, Fill, Plan, Scalar, Value};
use crate::corpus::{self, Tools};
use gyre_codegen_lite::{
    compile_module_with_flags, mangle, CodegenFlags, CodegenOptions, FpContract, Sm,
};
use gyre_gpu::compare::{first_difference, Bound, ElemKind};
use gyre_gpu::{best_target, GlobalInit, Gpu, GpuError, Job, KernelArg, LaunchShape};
use gyre_interp::{run_kernel, Arg, Launch, Memory};
use gyre_ir::{AddrSpace, Module};
use gyre_transforms::{Knobs, Options, PassManager};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Kernels whose results depend on the order threads run in (file, reason): the
/// interpreter and ptx-sim run them in one fixed order, a GPU in any.
const ORDER_DEPENDENT: &[(&str, &str)] = &[
    (
        "cudasamples__systemWideAtomics_atomicKernel.ll",
        "atomicExch and atomicCAS leave whichever thread's value came last (and atomicInc/\
         atomicDec wrap in between), which depends on the order threads run in",
    ),
    (
        "cudasamples__simpleAtomicIntrinsics_testKernel.ll",
        "atomicExch and atomicCAS leave whichever thread's value came last, which depends \
         on the order threads run in",
    ),
];

/// Timed launches per kernel and compiler (after one untimed launch).
pub const TIMED_LAUNCHES: u32 = 100;
/// IR instructions the interpreter may execute per launch.
const STEP_LIMIT: u64 = 50_000_000;
/// Dynamic shared memory of kernels with an `extern __shared__` array (as the corpus
/// run gives them).
const DYNAMIC_SHARED: u32 = 16 * 1024;
/// The newest target LLVM 14's NVPTX back end knows; its PTX is JIT-compiled for newer
/// devices.
const LLC_NEWEST: u32 = 86;

/// How an example is launched: grid, block, scalars and buffer contents by parameter
/// index (the corpus's [`Plan`] shape), chosen after the example's header comment.
struct ExampleLaunch {
    file: &'static str,
    kernel: &'static str,
    grid: [u32; 3],
    block: [u32; 3],
    scalars: &'static [(usize, Scalar)],
    fills: &'static [(usize, Fill)],
}

const fn ex(
    file: &'static str,
    kernel: &'static str,
    grid: [u32; 3],
    block: [u32; 3],
    scalars: &'static [(usize, Scalar)],
    fills: &'static [(usize, Fill)],
) -> ExampleLaunch {
    ExampleLaunch {
        file,
        kernel,
        grid,
        block,
        scalars,
        fills,
    }
}

/// Bytes of each example buffer: 16384 four-byte elements, more than any launch below
/// touches.
const EXAMPLE_BYTES: usize = 64 * 1024;

const EXAMPLES: &[ExampleLaunch] = &[
    ex(
        "block_reduce.gir",
        "block_reduce",
        [8, 1, 1],
        [256, 1, 1],
        &[],
        &[],
    ),
    ex(
        "block_reduce.toy",
        "block_reduce",
        [16, 1, 1],
        [64, 1, 1],
        &[(2, Scalar::Int(1000))],
        &[(0, Fill::Zero), (1, Fill::U32Below(100))],
    ),
    ex(
        "histogram.toy",
        "histogram",
        [8, 1, 1],
        [128, 1, 1],
        &[(2, Scalar::Int(1000)), (3, Scalar::Int(64))],
        &[(0, Fill::Zero), (1, Fill::U32Below(1000))],
    ),
    ex(
        "invariant_branch.gir",
        "invariant_branch",
        [4, 1, 1],
        [128, 1, 1],
        &[
            (2, Scalar::Int(1000)),
            (3, Scalar::Float(1.5)),
            (4, Scalar::Int(1)),
        ],
        &[],
    ),
    ex(
        "invariant_branch.toy",
        "invariant_branch",
        [2, 1, 1],
        [64, 1, 1],
        &[
            (2, Scalar::Int(100)),
            (3, Scalar::Int(32)),
            (4, Scalar::Int(1)),
        ],
        &[(0, Fill::F64), (1, Fill::F64)],
    ),
    ex(
        "matmul_tiled.gir",
        "matmul_tiled",
        [4, 4, 1],
        [16, 16, 1],
        &[(3, Scalar::Int(64))],
        &[],
    ),
    ex(
        "matmul_tiled.toy",
        "matmul_tiled",
        [4, 4, 1],
        [16, 16, 1],
        &[(3, Scalar::Int(64))],
        &[],
    ),
    ex(
        "prefix_scan.toy",
        "prefix_scan",
        [8, 1, 1],
        [128, 1, 1],
        &[(2, Scalar::Int(1024))],
        &[(0, Fill::Zero), (1, Fill::U64Below(1000))],
    ),
    ex(
        "saxpy.gir",
        "saxpy",
        [4, 1, 1],
        [256, 1, 1],
        &[(3, Scalar::Int(1000))],
        &[],
    ),
    ex(
        "saxpy.toy",
        "saxpy",
        [4, 1, 1],
        [256, 1, 1],
        &[(3, Scalar::Int(1000))],
        &[],
    ),
    ex(
        "search.gir",
        "search",
        [2, 1, 1],
        [64, 1, 1],
        &[(2, Scalar::Int(7)), (3, Scalar::Int(16))],
        &[(0, Fill::Zero), (1, Fill::U32Below(50))],
    ),
    ex(
        "stencil2d.gir",
        "stencil2d",
        [2, 1, 1],
        [64, 1, 1],
        &[
            (2, Scalar::Int(2)),
            (3, Scalar::Int(32)),
            (4, Scalar::Int(32)),
        ],
        &[],
    ),
    ex(
        "stencil2d.toy",
        "stencil2d",
        [2, 4, 1],
        [16, 8, 1],
        &[(2, Scalar::Int(32)), (3, Scalar::Int(32))],
        &[],
    ),
    ex(
        "tid_branch.gir",
        "tid_branch",
        [2, 1, 1],
        [64, 1, 1],
        &[(2, Scalar::Int(100))],
        &[],
    ),
    ex(
        "vadd.toy",
        "vadd",
        [4, 1, 1],
        [256, 1, 1],
        &[(3, Scalar::Int(1000))],
        &[],
    ),
];

/// One kernel to measure.
struct Subject {
    /// `examples/saxpy.gir` or the corpus file name.
    name: String,
    /// The module as given (the interpreter's reference).
    input: Module,
    /// LLVM IR text of the input, for opt and llc.
    ll: String,
    kernel: String,
    plan: Plan,
    case: Case,
    /// Element type of each buffer of `case`.
    kinds: Vec<ElemKind>,
    /// Host-initialised globals: name, contents.
    host: Vec<(String, Vec<u8>)>,
    dynamic_shared: u32,
}

/// The outcome of one kernel.
#[derive(Clone, Debug)]
pub struct Row {
    /// Example path or corpus file.
    pub name: String,
    /// `(gx,gy,gz)x(bx,by,bz)`.
    pub launch: String,
    /// Gyre's `-O` PTX: `Ok` or why not.
    pub gyre: Result<(), String>,
    /// llc's PTX: `Ok` or why not.
    pub llc: Result<(), String>,
    /// Measured on the device (`None`: no GPU).
    pub measured: Option<Measured>,
}

/// What the device said about one kernel.
#[derive(Clone, Debug, Default)]
pub struct Measured {
    /// Gyre's PTX against the interpreter: `Ok` or the first difference / error.
    pub gyre_equal: Option<Result<(), String>>,
    /// llc's PTX against the interpreter.
    pub llc_equal: Option<Result<(), String>>,
    /// Median kernel time of Gyre's PTX (ms).
    pub gyre_ms: Option<f32>,
    /// Median kernel time of llc's PTX (ms).
    pub llc_ms: Option<f32>,
    /// Why no run of this kernel can equal the interpreter's (the corpus's known
    /// causes, `corpus::report`): a difference is then shown as "n/c", not a failure.
    pub not_comparable: Option<&'static str>,
}

fn kind_of(fill: Fill) -> ElemKind {
    match fill {
        Fill::F32 => ElemKind::F32,
        Fill::F64 => ElemKind::F64,
        Fill::U64Below(_) => ElemKind::Int(8),
        _ => ElemKind::Int(4),
    }
}

/// Element kinds of a case's buffers (named `__corpus.argN` after their parameter).
fn kinds(plan: &Plan, case: &Case) -> Vec<ElemKind> {
    case.buffers
        .iter()
        .map(|(name, _)| {
            let idx: Option<usize> = name.rsplit("arg").next().and_then(|n| n.parse().ok());
            let fill = idx
                .and_then(|i| plan.fills.iter().find(|(k, _)| *k == i))
                .map_or(Fill::F32, |p| p.1);
            kind_of(fill)
        })
        .collect()
}

/// A subject from a module, its LLVM text and a plan; `Err` when the kernel is missing.
fn subject(
    name: String,
    input: Module,
    ll: String,
    kernel: &str,
    plan: Plan,
    filled: &[String],
    dynamic_shared: u32,
) -> Result<Subject, String> {
    let fid = input
        .func_by_name(kernel)
        .ok_or_else(|| format!("no kernel @{kernel}"))?;
    let f = &input.functions[fid];
    let byval: Vec<(usize, usize)> = f
        .byval
        .iter()
        .map(|b| (b.index as usize, b.size as usize))
        .collect();
    let case = launches::case(&plan, &f.sig.params, &byval, 0);
    let kinds = kinds(&plan, &case);
    let mut rng = gyre_ir::generate::SplitMix64::new(0x6c6f_6261_6c73);
    let host = input
        .globals
        .values()
        .filter(|g| g.externally_initialized || filled.contains(&g.name))
        .filter(|g| matches!(g.space, AddrSpace::Const | AddrSpace::Global))
        .map(|g| {
            let bytes = launches::fill_bytes(Fill::F32, g.size() as usize, &mut rng);
            (g.name.clone(), bytes)
        })
        .collect();
    Ok(Subject {
        name,
        kernel: kernel.to_string(),
        input,
        ll,
        plan,
        case,
        kinds,
        host,
        dynamic_shared,
    })
}

/// A subject, or its name and why it cannot be measured.
type Planned = Result<Subject, (String, String)>;

/// The examples, parsed and planned.
fn examples(root: &Path) -> Vec<Planned> {
    EXAMPLES
        .iter()
        .map(|e| {
            let name = format!("examples/{}", e.file);
            let fail = |m: String| (name.clone(), m);
            let src = std::fs::read_to_string(root.join(&name)).map_err(|x| fail(x.to_string()))?;
            let m = if e.file.ends_with(".toy") {
                gyre_toyc::compile(&name, &src).map_err(|d| fail(d.render(&name, &src)))?
            } else {
                gyre_ir::parse_module(&src).map_err(|x| fail(x.render(&name, &src)))?
            };
            let ll = gyre_llvm::export_module(&m, &gyre_llvm::ExportOptions::default());
            let plan = Plan {
                grid: e.grid,
                block: e.block,
                scalars: e.scalars.to_vec(),
                fills: e.fills.to_vec(),
                buffer_bytes: EXAMPLE_BYTES,
                reason: None,
            };
            subject(name.clone(), m, ll, e.kernel, plan, &[], 0).map_err(fail)
        })
        .collect()
}

/// The examples through the corpus harness's stages, each on its launch above: Gyre
/// compiles the example's module, LLVM its export (`opt -O2 | llc -O2 -mcpu=sm_70`),
/// and both PTX texts run in ptx-sim against the interpreter on one random input. The
/// reports carry the quality figures (static, dynamic, `ptxas -v`) that
/// `cargo xtask perf` hands the perf report (`corpus::report::quality_json`); an
/// example that cannot be read is an `Err` with its name.
pub fn examples_quality(
    root: &Path,
    tools: &corpus::Tools,
) -> Vec<Result<corpus::Report, (String, String)>> {
    let dir = std::env::temp_dir().join(format!("gyre-examples-quality-{}", std::process::id()));
    let setup = corpus::Setup {
        corpus: dir.clone(),
        tools: tools.clone(),
        only: None,
        runs: 1,
    };
    let out = examples(root)
        .into_iter()
        .map(|planned| {
            let s = planned?;
            let file = s.name.trim_start_matches("examples/").to_string();
            std::fs::create_dir_all(&dir).map_err(|e| (s.name.clone(), e.to_string()))?;
            let path = dir.join(format!("{file}.ll"));
            std::fs::write(&path, &s.ll).map_err(|e| (s.name.clone(), e.to_string()))?;
            let entry = corpus::Entry {
                file,
                symbol: s.kernel.clone(),
                features: String::new(),
                launch: String::new(),
            };
            Ok(corpus::run_planned(
                &setup,
                &entry,
                &path,
                &s.ll,
                s.plan,
                Some(s.input),
            ))
        })
        .collect();
    let _ = std::fs::remove_dir_all(&dir);
    out
}

/// [`examples_quality`]'s results in the format of `cargo xtask corpus --quality-json`
/// (see `corpus::report::quality_json`), each row with a `"note"` when the ptx-sim stage
/// did not pass (why there is no dynamic count) and a row with both sides `null` and the
/// reason for an example that could not be planned.
pub fn examples_quality_json(results: &[Result<corpus::Report, (String, String)>]) -> String {
    let esc = |t: &str| {
        t.replace('\\', "\\\\")
            .replace('"', "\\\"")
            .replace('\n', " ")
    };
    let side = |q: Option<corpus::Quality>| match q {
        None => "null".to_string(),
        Some(q) => format!(
            "{{\"static\": {}, \"dynamic\": {}, \"regs\": {}, \"spill_bytes\": {}}}",
            q.static_insts,
            q.dynamic.map_or("null".to_string(), |d| d.to_string()),
            q.regs,
            q.spill_bytes
        ),
    };
    let rows: Vec<String> = results
        .iter()
        .map(|r| match r {
            Ok(r) => {
                let note = match (&r.sim, r.first_failure()) {
                    (_, Some((stage, why))) => format!(", \"note\": \"{stage}: {}\"", esc(why)),
                    (corpus::Outcome::Pass(_), None) => String::new(),
                    (corpus::Outcome::NotComparable(why) | corpus::Outcome::Skipped(why), None) => {
                        format!(", \"note\": \"sim: {}\"", esc(why))
                    }
                    (corpus::Outcome::Fail(why), None) => {
                        format!(", \"note\": \"sim: {}\"", esc(why))
                    }
                };
                format!(
                    "  {{\"kernel\": \"{}\", \"gyre\": {}, \"llvm\": {}{note}}}",
                    esc(&r.entry.file),
                    side(r.gyre_quality),
                    side(r.llvm_quality)
                )
            }
            Err((name, why)) => format!(
                "  {{\"kernel\": \"{}\", \"gyre\": null, \"llvm\": null, \"note\": \"{}\"}}",
                esc(name.trim_start_matches("examples/")),
                esc(why)
            ),
        })
        .collect();
    format!("[\n{}\n]\n", rows.join(",\n"))
}

/// The corpus kernels Gyre imports, planned as `cargo xtask corpus` runs them.
fn corpus_subjects(dir: &Path) -> Result<Vec<Planned>, String> {
    let mut out = Vec::new();
    for e in corpus::read_manifest(dir)? {
        let path = dir.join(&e.file);
        let src = std::fs::read_to_string(&path)
            .map_err(|x| format!("cannot read {}: {x}", path.display()))?;
        let m = match gyre_llvm::import_module(&src) {
            Ok(m) => m,
            Err(errs) => {
                let first = errs.to_string().lines().next().unwrap_or("").to_string();
                out.push(Err((e.file.clone(), format!("import: {first}"))));
                continue;
            }
        };
        let plan = launches::plan(&e.file, &e.features, &e.launch);
        let filled = corpus::externally_initialized(&src);
        let dynamic = if corpus::uses_dynamic_shared(&src) {
            DYNAMIC_SHARED
        } else {
            0
        };
        out.push(
            subject(e.file.clone(), m, src, &e.symbol, plan, &filled, dynamic)
                .map_err(|x| (e.file.clone(), x)),
        );
    }
    Ok(out)
}

/// Gyre's PTX of a subject for `sm`, as `gyre compile -O` makes it: the `-O` pipeline,
/// the codegen loop passes, and contraction as `fp_contract` says (`gyre compile`'s
/// default, [`FpContract::On`], contracts where the IR allows it, as the corpus's
/// quality comparison does).
fn gyre_ptx(s: &Subject, sm: Sm, fp_contract: FpContract) -> Result<String, String> {
    gyre_ir::verifier::verify_module(&s.input).map_err(|e| format!("verify: {e}"))?;
    let mut m = s.input.clone();
    let mut pm = PassManager::from_pipeline(
        &corpus::compile_pipeline(),
        Knobs::default(),
        Options::default(),
    )?;
    pm.run_module(&mut m).map_err(|e| format!("-O: {e}"))?;
    let flags = CodegenFlags {
        fp_contract,
        ..CodegenFlags::default()
    };
    compile_module_with_flags(
        &m,
        &CodegenOptions { sm },
        &flags,
        &mut gyre_analysis::ModuleAnalyses::new(),
    )
    .map_err(|e| format!("PTX: {e}"))
}

/// Where llc's PTX comes from.
#[derive(Clone, Debug)]
pub enum LlcSource {
    /// Run LLVM 14's `opt` and `llc` here.
    Run,
    /// Read the files `gpu-table --save-llc-ptx DIR` wrote (on a machine with LLVM 14),
    /// for a GPU machine without LLVM.
    Saved(PathBuf),
}

/// The file name llc's PTX of `name` for `sm_XX` is saved under.
fn saved_name(name: &str, sm: u32) -> String {
    format!("{}.sm_{sm}.ptx", name.replace('/', "_"))
}

/// llc's PTX of a subject from `source`.
fn llc_source_ptx(
    source: &LlcSource,
    tools: &Tools,
    opt: Option<&Path>,
    s: &Subject,
    sm: u32,
) -> Result<String, String> {
    match source {
        LlcSource::Run => llc_ptx(tools, opt, s, sm),
        LlcSource::Saved(dir) => {
            let path = dir.join(saved_name(&s.name, sm));
            std::fs::read_to_string(&path)
                .map_err(|e| format!("no saved llc PTX {}: {e}", path.display()))
        }
    }
}

/// `opt -O2 | llc -O2 -mcpu=sm_XX` of the subject's LLVM IR (with libdevice linked
/// first when it calls it).
fn llc_ptx(tools: &Tools, opt: Option<&Path>, s: &Subject, sm: u32) -> Result<String, String> {
    let (Some(llc), Some(opt)) = (&tools.llc, opt) else {
        return Err("LLVM 14 opt or llc not found".into());
    };
    let dir = std::env::temp_dir().join(format!("gyre-gpu-table-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    let stem = s.name.replace('/', "_");
    let ll = dir.join(format!("{stem}.ll"));
    std::fs::write(&ll, &s.ll).map_err(|e| e.to_string())?;
    let mut input = ll.clone();
    if s.ll
        .lines()
        .any(|l| l.starts_with("declare") && l.contains("@__nv_"))
    {
        let (Some(link), Some(lib)) = (&tools.llvm_link, &tools.libdevice) else {
            return Err("calls libdevice; llvm-link or libdevice.10.bc not found".into());
        };
        let linked = dir.join(format!("{stem}.linked.bc"));
        run_tool(
            Command::new(link)
                .arg(&ll)
                .arg(lib)
                .arg("--only-needed")
                .arg("-o")
                .arg(&linked),
            "llvm-link",
        )?;
        input = linked;
    }
    let optimized = dir.join(format!("{stem}.opt.bc"));
    run_tool(
        Command::new(opt)
            .arg("-O2")
            .arg(&input)
            .arg("-o")
            .arg(&optimized),
        "opt -O2",
    )?;
    let ptx = run_tool(
        Command::new(llc)
            .args([
                "-O2",
                "-march=nvptx64",
                &format!("-mcpu=sm_{sm}"),
                "-o",
                "-",
            ])
            .arg(&optimized),
        "llc -O2",
    )?;
    let _ = std::fs::remove_dir_all(&dir);
    Ok(ptx)
}

fn run_tool(c: &mut Command, what: &str) -> Result<String, String> {
    let out = c.output().map_err(|e| format!("cannot run {what}: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "{what}: {}",
            String::from_utf8_lossy(&out.stderr)
                .lines()
                .next()
                .unwrap_or("")
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// The interpreter's run of the input: final memory, or why it did not finish.
fn interp(s: &Subject) -> Result<Memory, String> {
    let mut mem = Memory::new();
    for (name, bytes) in &s.case.buffers {
        mem.alloc_buffer(name, bytes.clone());
    }
    for (name, bytes) in &s.host {
        mem.alloc_buffer(name, bytes.clone());
    }
    let args = s
        .case
        .args
        .iter()
        .map(|v| match v {
            Value::Int(n) => Arg::Int(*n),
            Value::F32(x) => Arg::F32(*x),
            Value::F64(x) => Arg::F64(*x),
            Value::Buffer(i, off) => Arg::Buffer(s.case.buffers[*i].0.clone(), *off),
            Value::Bytes(b) => Arg::Bytes(b.clone()),
        })
        .collect();
    let mut launch = Launch::new(s.plan.grid, s.plan.block, args);
    launch.dynamic_shared_bytes = s.dynamic_shared;
    launch.config.step_limit = STEP_LIMIT;
    run_kernel(&s.input, &s.kernel, &launch, &mut mem).map_err(|e| e.to_string())?;
    Ok(mem)
}

/// The float bound for a module: exact, or 4 ulp / 2^-20 absolute with approximate
/// opcodes (as `gyre run --compare`), or the corpus tolerance's ulps where the PTX may
/// contract multiply-adds into `fma` (one rounding where the interpreter rounds twice):
/// llc's always, Gyre's with `fp-contract=fast`, or `on` (`gyre compile`'s default) when
/// the module has `contract` arithmetic.
fn bound(m: &Module, llc: bool, fp_contract: FpContract) -> Bound {
    let any = |p: &dyn Fn(&gyre_ir::InstructionData) -> bool| {
        m.functions.values().any(|f| {
            f.layout
                .blocks()
                .any(|b| f.layout.block_insts(b).any(|i| p(f.dfg.inst(i))))
        })
    };
    let approx = any(&|d| d.opcode().name().ends_with("_approx"));
    let contracts = match fp_contract {
        _ if llc => true,
        FpContract::Off => false,
        FpContract::Fast => true,
        FpContract::On => any(&|d| {
            matches!(d, gyre_ir::InstructionData::Binary { flags, .. }
                if flags.contains(gyre_ir::IntFlags::CONTRACT))
        }),
    };
    match (approx, contracts) {
        (false, false) => Bound::EXACT,
        (true, false) => Bound {
            ulps: 4,
            abs: (2f64).powi(-20),
        },
        // The corpus's tolerance between contracted and uncontracted results
        // (`corpus::TOLERANCE`, absolute for results of order one).
        (_, true) => Bound {
            ulps: 84,
            abs: corpus::TOLERANCE,
        },
    }
}

/// Run PTX on the device and compare with the interpreter.
fn device_run(
    gpu: &Gpu,
    s: &Subject,
    ptx: &str,
    entry: &str,
    want: &Result<Memory, String>,
    bound: Bound,
) -> (Result<(), String>, Option<f32>) {
    let args: Vec<KernelArg> = s
        .case
        .args
        .iter()
        .map(|v| match v {
            Value::Int(n) => KernelArg::Int(*n),
            Value::F32(x) => KernelArg::F32(*x),
            Value::F64(x) => KernelArg::F64(*x),
            Value::Buffer(i, off) => KernelArg::Buffer(*i, *off),
            Value::Bytes(b) => KernelArg::Bytes(b.clone()),
        })
        .collect();
    let buffers: Vec<Vec<u8>> = s.case.buffers.iter().map(|b| b.1.clone()).collect();
    // Host-initialised globals this PTX declares (llc's drops those `opt` found unused).
    let host: Vec<&(String, Vec<u8>)> = s
        .host
        .iter()
        .filter(|(n, _)| spellings(n).iter().any(|sym| declares_global(ptx, sym)))
        .collect();
    let globals: Vec<GlobalInit> = host
        .iter()
        .map(|(n, b)| GlobalInit {
            symbols: spellings(n),
            bytes: b.clone(),
        })
        .collect();
    let out = gpu.run(&Job {
        ptx,
        entry,
        shape: LaunchShape {
            grid: s.plan.grid,
            block: s.plan.block,
            dynamic_shared: s.dynamic_shared,
        },
        args: &args,
        buffers: &buffers,
        globals: &globals,
        timed_launches: TIMED_LAUNCHES,
    });
    let out = match out {
        Ok(o) => o,
        Err(e) => return (Err(e.to_string().replace('\n', "; ")), None),
    };
    // (A failed launch leaves the context unusable: `measure` opens a new one.)
    // The fastest launch: these launches are a few CTAs, so a launch is mostly the
    // driver's and the event's latency, whose noise only ever adds time.
    let time = out.times_ms.iter().copied().reduce(f32::min);
    let mem = match want {
        Ok(m) => m,
        Err(e) => return (Err(format!("interpreter: {e}")), time),
    };
    let named = s
        .case
        .buffers
        .iter()
        .zip(&s.kinds)
        .map(|((n, _), k)| (n.as_str(), *k))
        .chain(host.iter().map(|(n, _)| (n.as_str(), ElemKind::F32)));
    for ((name, kind), got) in named.zip(out.buffers.iter().chain(&out.globals)) {
        let expected = mem.bytes(name).unwrap_or(&[]);
        if let Some(i) = first_difference(kind, expected, got, mem.poison(name), bound) {
            let shown = name.trim_start_matches("__corpus.");
            return (
                Err(format!(
                    "{shown}[{i}] differs: {} on the GPU, {} in the interpreter",
                    element(kind, got, i),
                    element(kind, expected, i)
                )),
                time,
            );
        }
    }
    (Ok(()), time)
}

/// Measure every subject; `gpu` is the device or why there is none.
/// Every example, then every corpus kernel (when the corpus is found).
fn all_subjects(root: &Path) -> Result<Vec<Planned>, String> {
    let mut subjects = examples(root);
    if let Some(dir) = corpus::find_corpus(root) {
        subjects.extend(corpus_subjects(&dir)?);
    }
    Ok(subjects)
}

fn measure(
    root: &Path,
    tools: &Tools,
    opts: &TableOptions,
    gpu: &mut Result<Gpu, GpuError>,
) -> Result<Vec<Row>, String> {
    let subjects = all_subjects(root)?;
    let opt = gyre_test_tools::find(gyre_test_tools::Tool::Opt);
    let numbers: Vec<u32> = Sm::ALL.iter().map(|s| s.number()).collect();
    let (sm, llc_sm) = match &*gpu {
        Ok(g) => {
            let n = best_target(g.compute_capability(), &numbers)
                .ok_or("the device is older than every target Gyre supports")?;
            (n, n.min(LLC_NEWEST))
        }
        Err(_) => (70, 70),
    };
    let sm = Sm::from_number(sm).ok_or("no such target")?;
    let mut rows = Vec::new();
    for s in subjects {
        let s = match s {
            Ok(s) => s,
            Err((name, why)) => {
                rows.push(Row {
                    name,
                    launch: String::new(),
                    gyre: Err(why.clone()),
                    llc: Err(String::new()),
                    measured: None,
                });
                continue;
            }
        };
        eprintln!("gpu-table: {}", s.name);
        let g = gyre_ptx(&s, sm, opts.fp_contract);
        let l = llc_source_ptx(&opts.llc, tools, opt.as_deref(), &s, llc_sm);
        let mut row = Row {
            name: s.name.clone(),
            launch: format!(
                "({},{},{})x({},{},{})",
                s.plan.grid[0],
                s.plan.grid[1],
                s.plan.grid[2],
                s.plan.block[0],
                s.plan.block[1],
                s.plan.block[2]
            ),
            gyre: g.as_ref().map(|_| ()).map_err(Clone::clone),
            llc: l.as_ref().map(|_| ()).map_err(Clone::clone),
            measured: None,
        };
        if let (true, Ok(gptx)) = (gpu.is_ok(), &g) {
            let want = interp(&s);
            if let Err(why) = &want {
                // The input is not a valid run (a data race, a fault): its PTX would run
                // on the device with nothing to compare against, and may fault there.
                row.measured = Some(Measured {
                    gyre_equal: Some(Err(format!("not run: the interpreter: {why}"))),
                    not_comparable: Some("the interpreter rejects the input"),
                    ..Measured::default()
                });
                rows.push(row);
                continue;
            }
            let mut m = Measured {
                not_comparable: corpus::report::KNOWN
                    .iter()
                    .chain(corpus::report::NOT_COMPARABLE)
                    .chain(ORDER_DEPENDENT)
                    .find(|(f, _)| *f == s.name)
                    .map(|(_, why)| *why),
                ..Measured::default()
            };
            let runs = [
                (Some(gptx), mangle(&s.kernel), false),
                (l.as_ref().ok(), s.kernel.replace(['.', '@'], "_$_"), true),
            ];
            for (ptx, entry, is_llc) in runs {
                let (Some(ptx), Ok(dev)) = (ptx, &*gpu) else {
                    continue;
                };
                let bound = bound(&s.input, is_llc, opts.fp_contract);
                let (eq, t) = device_run(dev, &s, ptx, &entry, &want, bound);
                if eq.is_err() && t.is_none() {
                    // A fault or trap poisons the context; the next kernel gets a new one,
                    // made after the poisoned one is destroyed (the driver refuses a new
                    // context while it is current).
                    *gpu = Err(GpuError::NoDevice {
                        message: "reopening after a failed launch".into(),
                    });
                    *gpu = Gpu::open();
                    if let Err(e) = &*gpu {
                        eprintln!("gpu-table: cannot reopen the device: {e}");
                    }
                }
                if is_llc {
                    (m.llc_equal, m.llc_ms) = (Some(eq), t);
                } else {
                    (m.gyre_equal, m.gyre_ms) = (Some(eq), t);
                }
            }
            row.measured = Some(m);
        }
        rows.push(row);
    }
    Ok(rows)
}

/// The PTX names a global of the IR may have: Gyre's mangling, llc's, and the name as is.
fn spellings(name: &str) -> Vec<String> {
    vec![
        mangle(name),
        name.replace(['.', '@'], "_$_"),
        name.to_string(),
    ]
}

/// Does `ptx` declare a variable named `sym` (`.global .align 4 .b8 sym[16];`)?
fn declares_global(ptx: &str, sym: &str) -> bool {
    ptx.lines().any(|l| {
        let l = l.trim_start();
        (l.starts_with(".visible") || l.starts_with(".global") || l.starts_with(".const"))
            && [format!(" {sym}["), format!(" {sym};"), format!(" {sym} =")]
                .iter()
                .any(|p| l.contains(p.as_str()))
    })
}

/// Element `i` of a buffer as text (`?` past its end).
fn element(kind: ElemKind, bytes: &[u8], i: usize) -> String {
    let n = kind.size();
    let Some(b) = bytes.get(i * n..(i + 1) * n) else {
        return "?".into();
    };
    let mut raw = [0u8; 8];
    raw[..n].copy_from_slice(b);
    let v = u64::from_le_bytes(raw);
    match kind {
        ElemKind::F32 => format!("{:e}", f32::from_bits(v as u32)),
        ElemKind::F64 => format!("{:e}", f64::from_bits(v)),
        ElemKind::Int(_) => format!("{v:#x}"),
    }
}

/// Markdown-safe one-line text.
fn md(s: &str) -> String {
    let one = s.lines().next().unwrap_or("").replace('|', "\\|");
    if one.len() > 90 {
        format!(
            "{}...",
            &one[..one.char_indices().nth(87).map_or(one.len(), |c| c.0)]
        )
    } else {
        one
    }
}

/// The geometric mean of Gyre's time over llc's, over kernels where both were timed and
/// both were equal to the interpreter.
pub fn geomean_ratio(rows: &[Row]) -> Option<(f64, usize)> {
    let ratios: Vec<f64> = rows
        .iter()
        .filter_map(|r| {
            let m = r.measured.as_ref()?;
            let ok = matches!(m.gyre_equal, Some(Ok(()))) && matches!(m.llc_equal, Some(Ok(())));
            let (g, l) = (m.gyre_ms?, m.llc_ms?);
            (ok && g > 0.0 && l > 0.0).then(|| f64::from(g) / f64::from(l))
        })
        .collect();
    if ratios.is_empty() {
        return None;
    }
    let log: f64 = ratios.iter().map(|r| r.ln()).sum::<f64>() / ratios.len() as f64;
    Some((log.exp(), ratios.len()))
}

/// How to use `--gpu`; the head of docs/gpu.md.
const USAGE: &str = include_str!("gpu_table_usage.md");

/// docs/gpu.md for the rows; `device` names the GPU or says why there was none.
pub fn document(rows: &[Row], device: &Result<String, String>) -> String {
    let mut out = String::new();
    out.push_str(USAGE);
    out.push_str("\n## Measurements\n\n");
    out.push_str("Generated by `cargo xtask gpu-table --write-doc`; do not edit by hand.\n\n");
    let na = "not yet measured";
    match device {
        Ok(d) => {
            let _ = writeln!(
                out,
                "Measured on **{d}**. Each kernel runs once (compared with the interpreter's \
                 run of the input, every buffer and host-initialised global), then \
                 {TIMED_LAUNCHES} more times from the same inputs; the times are the \
                 fastest of those launches (CUDA events around the launch). Gyre's PTX is \
                 what `gyre compile -O` makes for the device's sm_XX (contracting \
                 `contract` multiply-adds, as llc does); llc's is \
                 `opt -O2 | llc -O2 -mcpu=sm_XX` (LLVM 14 knows targets up to \
                 sm_{LLC_NEWEST}; the driver JIT-compiles that PTX for newer devices). \
                 Contracted results are compared within the corpus's tolerance (84 ulps, \
                 or 1e-5 absolute).\n\n\
                 **Read the times with care**: these are the corpus's launches (2 to 16 \
                 CTAs, sized for the interpreter), so a launch takes a few microseconds and \
                 most of it is the driver's and the events' latency, not the kernel's \
                 code: the times say that neither compiler's code is grossly slower, no \
                 more. Instruction counts under ptx-sim (docs/corpus.md) compare the code \
                 itself.\n"
            );
        }
        Err(why) => {
            let _ = writeln!(
                out,
                "**No GPU was available** when this table was written ({}), so the GPU \
                 columns say \"{na}\". On a machine with an NVIDIA GPU and its driver, \
                 `cargo xtask gpu-table --write-doc` fills them in: nothing else changes.\n",
                why.replace('\n', " ")
            );
        }
    }
    let compiled = rows.iter().filter(|r| r.gyre.is_ok()).count();
    let _ = writeln!(
        out,
        "{} kernels (examples and corpus); Gyre compiles {compiled}; llc compiles {}.\n",
        rows.len(),
        rows.iter().filter(|r| r.llc.is_ok()).count()
    );
    if device.is_ok() {
        let equal = rows
            .iter()
            .filter(|r| {
                r.measured
                    .as_ref()
                    .is_some_and(|m| matches!(m.gyre_equal, Some(Ok(()))))
            })
            .count();
        let nc: Vec<(&str, &str)> = rows
            .iter()
            .filter_map(|r| Some((r.name.as_str(), r.measured.as_ref()?.not_comparable?)))
            .collect();
        let _ = writeln!(
            out,
            "Gyre's PTX equal to the interpreter on the GPU: {equal} of {compiled}; \
             {} of them are not comparable whatever the compiler (*n/c* below):\n",
            nc.len()
        );
        for (name, why) in nc {
            let _ = writeln!(out, "- `{name}`: {}", md(why));
        }
        out.push('\n');
        match geomean_ratio(rows) {
            Some((g, n)) => {
                let _ = writeln!(
                    out,
                    "Gyre's kernel time over llc's, geometric mean over the {n} kernels both \
                     ran correctly: **{g:.3}** (below 1: Gyre faster).\n"
                );
            }
            None => out.push_str("No kernel was timed with both compilers.\n\n"),
        }
    }
    out.push_str(
        "| kernel | launch | Gyre PTX | llc PTX | Gyre = interpreter | llc = interpreter | \
         Gyre ms | llc ms | Gyre / llc |\n|---|---|---|---|---|---|---|---|---|\n",
    );
    for r in rows {
        let compiled = |c: &Result<(), String>| match c {
            Ok(()) => "yes".to_string(),
            // Not tried (the kernel did not import).
            Err(e) if e.is_empty() => "-".to_string(),
            Err(e) => format!("no: {}", md(e)),
        };
        let nc = r.measured.as_ref().and_then(|m| m.not_comparable);
        let eq = |e: &Option<Result<(), String>>| match (e, nc) {
            (Some(Ok(())), _) => "yes".to_string(),
            (Some(Err(e)), Some(_)) => format!("n/c: {}", md(e)),
            (Some(Err(e)), None) => format!("**no**: {}", md(e)),
            (None, _) => "-".to_string(),
        };
        let ms = |t: Option<f32>| t.map_or("-".to_string(), |t| format!("{t:.4}"));
        let (ge, le, gm, lm, ratio) = match &r.measured {
            Some(m) => (
                eq(&m.gyre_equal),
                eq(&m.llc_equal),
                ms(m.gyre_ms),
                ms(m.llc_ms),
                match (m.gyre_ms, m.llc_ms) {
                    (Some(g), Some(l)) if l > 0.0 => format!("{:.2}", g / l),
                    _ => "-".to_string(),
                },
            ),
            None if device.is_ok() || r.gyre.is_err() => {
                let d = "-".to_string();
                (d.clone(), d.clone(), d.clone(), d.clone(), d)
            }
            None => {
                let n = na.to_string();
                (n.clone(), n.clone(), n.clone(), n.clone(), n)
            }
        };
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {ge} | {le} | {gm} | {lm} | {ratio} |",
            md(&r.name),
            r.launch,
            compiled(&r.gyre),
            compiled(&r.llc),
        );
    }
    out
}

/// `cargo xtask gpu-table --save-llc-ptx DIR --sm N`: llc's PTX of every subject for the
/// target llc would use on an `sm_N` device, written to `DIR` for [`LlcSource::Saved`].
pub fn save_llc(root: &Path, dir: &Path, sm: u32) -> Result<(), String> {
    let tools = Tools::find();
    let opt = gyre_test_tools::find(gyre_test_tools::Tool::Opt);
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let llc_sm = sm.min(LLC_NEWEST);
    let (mut saved, mut failed) = (0, 0);
    for s in all_subjects(root)?.into_iter().flatten() {
        match llc_ptx(&tools, opt.as_deref(), &s, llc_sm) {
            Ok(ptx) => {
                let path = dir.join(saved_name(&s.name, llc_sm));
                std::fs::write(&path, ptx)
                    .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
                saved += 1;
            }
            Err(e) => {
                eprintln!("gpu-table: {}: {e}", s.name);
                failed += 1;
            }
        }
    }
    println!(
        "saved llc's sm_{llc_sm} PTX of {saved} kernels in {} ({failed} failed)",
        dir.display()
    );
    Ok(())
}

/// What `cargo xtask gpu-table` measures.
#[derive(Clone, Debug)]
pub struct TableOptions {
    /// Where llc's PTX comes from.
    pub llc: LlcSource,
    /// Gyre's contraction (`--fp-contract`, as `gyre compile -C fp-contract=`); with
    /// `off` Gyre's floats must equal the interpreter's bit for bit.
    pub fp_contract: FpContract,
}

/// `cargo xtask gpu-table [--write-doc] [--llc-ptx DIR] [--fp-contract off|on|fast]`.
pub fn run(root: &Path, write_doc: bool, opts: &TableOptions) -> Result<(), String> {
    let tools = Tools::find();
    let mut gpu = Gpu::open();
    let device = match &gpu {
        Ok(g) => {
            let (a, b) = g.compute_capability();
            Ok(format!("{} (compute capability {a}.{b})", g.name()))
        }
        Err(e) => Err(e.to_string()),
    };
    match &device {
        Ok(d) => eprintln!("gpu-table: measuring on {d}"),
        Err(e) => eprintln!("gpu-table: no GPU ({e}); compile columns only"),
    }
    let rows = measure(root, &tools, opts, &mut gpu)?;
    let doc = document(&rows, &device);
    let path: PathBuf = root.join("docs/gpu.md");
    if write_doc {
        std::fs::write(&path, &doc).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        println!("wrote {}", path.display());
    } else {
        print!("{}", &doc[doc.find("## Measurements").unwrap_or(0)..]);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(name: &str, g: f32, l: f32, equal: bool) -> Row {
        Row {
            name: name.into(),
            launch: "(1,1,1)x(1,1,1)".into(),
            gyre: Ok(()),
            llc: Ok(()),
            measured: Some(Measured {
                gyre_equal: Some(if equal {
                    Ok(())
                } else {
                    Err("x[0] differs".into())
                }),
                llc_equal: Some(Ok(())),
                gyre_ms: Some(g),
                llc_ms: Some(l),
                not_comparable: None,
            }),
        }
    }

    #[test]
    fn not_comparable_differences_are_not_failures() {
        let mut r = row("k.ll", 1.0, 1.0, false);
        r.measured.as_mut().unwrap().not_comparable = Some("it reads clock()");
        let doc = document(&[r], &Ok("NVIDIA H200".into()));
        assert!(doc.contains("| n/c: x[0] differs | yes |"), "{doc}");
        assert!(doc.contains("1 of them are not comparable"), "{doc}");
        assert!(doc.contains("- `k.ll`: it reads clock()"), "{doc}");
        assert!(!doc.contains("**no**"), "{doc}");
    }

    #[test]
    fn globals_are_found_by_their_ptx_declarations() {
        let ptx = ".visible .global .align 4 .u32 retirementCount;\n\
                   .global .align 1 .b8 tile_$_0[16];\n\
                   .const .align 4 .b8 c_Kernel[68] = {0};\n\
                   \tld.global.u32 %r1, [threadIdx];\n";
        assert!(declares_global(ptx, "retirementCount"));
        assert!(declares_global(ptx, "tile_$_0"));
        assert!(declares_global(ptx, "c_Kernel"));
        // A use is not a declaration, and a prefix is not the name.
        assert!(!declares_global(ptx, "threadIdx"));
        assert!(!declares_global(ptx, "retirement"));
        assert!(spellings("a.b").contains(&"a_$_b".to_string()));
    }

    #[test]
    fn differing_elements_are_shown_as_their_type() {
        let f: Vec<u8> = [1.5f32, -2.0]
            .iter()
            .flat_map(|x| x.to_le_bytes())
            .collect();
        assert_eq!(element(ElemKind::F32, &f, 1), "-2e0");
        assert_eq!(element(ElemKind::Int(2), &f, 0), "0x0");
        assert_eq!(element(ElemKind::F32, &f, 2), "?");
        assert_eq!(
            saved_name("examples/saxpy.gir", 86),
            "examples_saxpy.gir.sm_86.ptx"
        );
    }

    #[test]
    fn geomean_counts_only_correct_kernels() {
        let rows = [
            row("a", 1.0, 2.0, true),
            row("b", 4.0, 2.0, true),
            row("c", 9.0, 1.0, false),
        ];
        let (g, n) = geomean_ratio(&rows).unwrap();
        assert_eq!(n, 2);
        assert!((g - 1.0).abs() < 1e-12, "{g}");
        assert_eq!(geomean_ratio(&rows[2..]), None);
    }

    #[test]
    fn without_a_gpu_the_gpu_columns_are_not_yet_measured() {
        let rows = vec![
            Row {
                name: "examples/saxpy.gir".into(),
                launch: "(4,1,1)x(256,1,1)".into(),
                gyre: Ok(()),
                llc: Ok(()),
                measured: None,
            },
            Row {
                name: "x.ll".into(),
                launch: String::new(),
                gyre: Err("import: unsupported".into()),
                llc: Err(String::new()),
                measured: None,
            },
        ];
        let doc = document(&rows, &Err("no CUDA driver".into()));
        assert!(doc.contains("No GPU was available"));
        assert!(doc.contains(
            "| examples/saxpy.gir | (4,1,1)x(256,1,1) | yes | yes | not yet measured | not yet measured | not yet measured | not yet measured | not yet measured |"
        ), "{doc}");
        assert!(doc.contains("| x.ll |  | no: import: unsupported | - | - |"));
        let measured = document(&[row("k", 1.0, 2.0, false)], &Ok("NVIDIA H200".into()));
        assert!(measured.contains("Measured on **NVIDIA H200**"));
        assert!(measured.contains("| **no**: x[0] differs | yes | 1.0000 | 2.0000 | 0.50 |"));
        assert!(measured.contains("equal to the interpreter on the GPU: 0 of 1"));
    }

    #[test]
    fn examples_quality_json_escapes_and_marks_unplanned_examples() {
        let json = examples_quality_json(&[Err((
            "examples/x.gir".into(),
            "a \"quoted\" reason\non two lines".into(),
        ))]);
        assert_eq!(
            json,
            "[\n  {\"kernel\": \"x.gir\", \"gyre\": null, \"llvm\": null, \"note\": \"a \\\"quoted\\\" reason on two lines\"}\n]\n"
        );
    }

    #[test]
    fn every_example_is_planned_and_its_kernel_exists() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let subjects = examples(&root);
        assert_eq!(subjects.len(), EXAMPLES.len());
        for s in subjects {
            let s = s.unwrap_or_else(|(n, e)| panic!("{n}: {e}"));
            // Each example runs in the interpreter with its plan (the GPU's reference).
            interp(&s).unwrap_or_else(|e| panic!("{}: {e}", s.name));
            gyre_ptx(&s, Sm::Sm70, FpContract::On).unwrap_or_else(|e| panic!("{}: {e}", s.name));
        }
        let mut files: Vec<&str> = EXAMPLES.iter().map(|e| e.file).collect();
        files.sort();
        let mut on_disk: Vec<String> = std::fs::read_dir(root.join("examples"))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        on_disk.sort();
        assert_eq!(files, on_disk, "every example has a launch in EXAMPLES");
    }
}
