//! `cargo xtask gpu-table`: every example and every corpus kernel Gyre compiles, run on a
//! real GPU: Gyre's PTX (after `-O`) and `opt -O2 | llc -O2` PTX of the same input, each
//! compared with the interpreter's run of the input and timed with CUDA events; the
//! result is docs/gpu.md.
//!
//! Without a GPU (no driver or no device) the compile columns are still filled and the
//! GPU columns say "not yet measured"; the document says why.

use crate::corpus::launches::{self, Case, Fill, Plan, Scalar, Value};
use crate::corpus::{self, Tools};
use gyre_codegen_lite::{compile_module, mangle, CodegenOptions, Sm};
use gyre_gpu::compare::{first_difference, Bound, ElemKind};
use gyre_gpu::{best_target, GlobalInit, Gpu, GpuError, Job, KernelArg, LaunchShape};
use gyre_interp::{run_kernel, Arg, Launch, Memory};
use gyre_ir::{AddrSpace, Module};
use gyre_transforms::{Knobs, Options, PassManager};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Timed launches per kernel and compiler (after one untimed launch).
pub const TIMED_LAUNCHES: u32 = 20;
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

/// Gyre's `-O` module of a subject, compiled for `sm`.
fn gyre_ptx(s: &Subject, sm: Sm) -> Result<String, String> {
    gyre_ir::verifier::verify_module(&s.input).map_err(|e| format!("verify: {e}"))?;
    let mut m = s.input.clone();
    let mut pm = PassManager::from_pipeline(
        gyre_transforms::DEFAULT_PIPELINE,
        Knobs::default(),
        Options::default(),
    )?;
    pm.run_module(&mut m).map_err(|e| format!("-O: {e}"))?;
    compile_module(&m, &CodegenOptions { sm }).map_err(|e| format!("PTX: {e}"))
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
/// opcodes (as `gyre run --compare`), or, for llc's PTX, which contracts multiply-adds
/// into `fma`, the corpus tolerance's ulps.
fn bound(m: &Module, llc: bool) -> Bound {
    let approx = m.functions.values().any(|f| {
        f.layout.blocks().any(|b| {
            f.layout
                .block_insts(b)
                .any(|i| f.dfg.inst(i).opcode().name().ends_with("_approx"))
        })
    });
    match (approx, llc) {
        (false, false) => Bound::EXACT,
        (true, false) => Bound {
            ulps: 4,
            abs: (2f64).powi(-20),
        },
        (_, true) => Bound {
            ulps: 84,
            abs: (2f64).powi(-20),
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
    let globals: Vec<GlobalInit> = s
        .host
        .iter()
        .map(|(n, b)| GlobalInit {
            symbols: vec![mangle(n), n.replace(['.', '@'], "_$_"), n.clone()],
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
    let time = out.median_ms();
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
        .chain(s.host.iter().map(|(n, _)| (n.as_str(), ElemKind::F32)));
    for ((name, kind), got) in named.zip(out.buffers.iter().chain(&out.globals)) {
        let expected = mem.bytes(name).unwrap_or(&[]);
        if let Some(i) = first_difference(kind, expected, got, mem.poison(name), bound) {
            let shown = name.trim_start_matches("__corpus.");
            return (Err(format!("{shown}[{i}] differs")), time);
        }
    }
    (Ok(()), time)
}

/// Measure every subject; `gpu` is the device or why there is none.
fn measure(
    root: &Path,
    tools: &Tools,
    gpu: &mut Result<Gpu, GpuError>,
) -> Result<Vec<Row>, String> {
    let mut subjects = examples(root);
    if let Some(dir) = corpus::find_corpus(root) {
        subjects.extend(corpus_subjects(&dir)?);
    }
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
        let g = gyre_ptx(&s, sm);
        let l = llc_ptx(tools, opt.as_deref(), &s, llc_sm);
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
            let mut m = Measured::default();
            let runs = [
                (Some(gptx), mangle(&s.kernel), false),
                (l.as_ref().ok(), s.kernel.replace(['.', '@'], "_$_"), true),
            ];
            for (ptx, entry, is_llc) in runs {
                let (Some(ptx), Ok(dev)) = (ptx, &*gpu) else {
                    continue;
                };
                let (eq, t) = device_run(dev, &s, ptx, &entry, &want, bound(&s.input, is_llc));
                if eq.is_err() && t.is_none() {
                    // A fault or trap poisons the context; the next kernel gets a new one.
                    *gpu = Gpu::open();
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
                 {TIMED_LAUNCHES} more times from the same inputs; the times are the median \
                 of those launches (CUDA events, kernel only). Gyre's PTX is `-O` for the \
                 device's sm_XX; llc's is `opt -O2 | llc -O2 -mcpu=sm_XX` (LLVM 14 knows \
                 targets up to sm_{LLC_NEWEST}; the driver JIT-compiles that PTX for newer \
                 devices).\n"
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
        let _ = writeln!(
            out,
            "Gyre's PTX equal to the interpreter on the GPU: {equal} of {compiled}."
        );
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
        let eq = |e: &Option<Result<(), String>>| match e {
            Some(Ok(())) => "yes".to_string(),
            Some(Err(e)) => format!("**no**: {}", md(e)),
            None => "-".to_string(),
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

/// `cargo xtask gpu-table [--write-doc]`.
pub fn run(root: &Path, write_doc: bool) -> Result<(), String> {
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
    let rows = measure(root, &tools, &mut gpu)?;
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
            }),
        }
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
            gyre_ptx(&s, Sm::Sm70).unwrap_or_else(|e| panic!("{}: {e}", s.name));
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
