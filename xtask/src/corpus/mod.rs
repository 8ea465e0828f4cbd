//! `cargo xtask corpus`: real CUDA kernels (clang 14's device IR) end to end.
//!
//! For every file of the corpus (`../shared/corpus/cuda/`, or `GYRE_CUDA_CORPUS`), with
//! the kernel symbol, features and host launch from `MANIFEST.tsv`, the harness
//! 1. **import**s it with gyre-llvm (every import error is kept) and **verify**s it;
//! 2. runs Gyre's `-O` pipeline (the one `gyre compile -O` runs) with `verify_each`
//!    (**opt**);
//! 3. lowers the optimized module to PTX for every target of [`Sm::ALL`] and assembles
//!    each with ptxas (**ptx**);
//! 4. runs the input and the optimized module in the interpreter on the same launch and
//!    random inputs ([`launches`]) and compares every buffer bit for bit (**interp**);
//!    a run where the input itself fails is "not comparable" with the error;
//! 5. compiles the input `.ll` with LLVM 14 `opt -O2 | llc -O2 -mcpu=sm_70` (libdevice
//!    linked first when the kernel calls `__nv_*` functions) (**llc**), then runs llc's
//!    PTX and Gyre's
//!    sm_70 PTX in ptx-sim on the same inputs (and Gyre's PTX of any other target whose
//!    text differs from sm_70's beyond `.version`/`.target`, without llc): Gyre's
//!    buffers must equal the
//!    interpreter's bit for bit, and llc's exactly on integer buffers and within
//!    [`TOLERANCE`] on float buffers (**sim**).
//!
//! Globals marked `externally_initialized` in the `.ll` (host-filled `__constant__` and
//! `__device__` data) are inputs: each gets a buffer of its name with random contents
//! for the interpreter, and the same bytes are written into the PTX variable in ptx-sim
//! (`__constant__` ones only where the interpreter reads them from the caller, see
//! [`interp_reads_host_constants`]). Every global-space global is compared after the
//! run like a buffer.
//!
//! Along the way it measures the quality of both PTX texts ([`Quality`]): static
//! instructions, `ptxas -v` registers and spills, and the instructions ptx-sim executes
//! on the first compared launch.
//!
//! [`report`] turns the results into totals, target checks, the quality table,
//! docs/corpus.md and the `--quality-json` rows.

pub mod launches;
pub mod report;

use gyre_codegen_lite::{
    compile_module_with_flags, mangle, CodegenFlags, CodegenOptions, FpContract, Sm,
};
use gyre_interp::{run_kernel, Arg, Config, ExecError, Launch, Memory};
use gyre_ir::generate::SplitMix64;
use gyre_ir::{AddrSpace, Module};
use gyre_transforms::{Knobs, Options, PassManager};
use launches::{Case, Plan, Value};
use std::path::{Path, PathBuf};
use std::process::Command;

/// Gyre's `-O` pipeline, the one `gyre compile -O` runs.
pub const DEFAULT_PIPELINE: &str = gyre_transforms::DEFAULT_PIPELINE;

/// What `gyre compile -O` runs: the `-O` pipeline, then the codegen passes
/// (constant-offset splitting and loop strength reduction, as llc runs them before
/// emission).
pub fn compile_pipeline() -> String {
    format!(
        "{DEFAULT_PIPELINE},{}",
        gyre_transforms::CODEGEN_LOOP_PIPELINE
    )
}

/// IR instructions (interpreter) or PTX instructions (ptx-sim) one launch may execute.
const STEP_LIMIT: u64 = 50_000_000;
/// Dynamic shared memory given to every ptx-sim launch (`extern __shared__` arrays).
const DYNAMIC_SHARED: u32 = 16 * 1024;

/// One line of `MANIFEST.tsv`.
#[derive(Clone, Debug)]
pub struct Entry {
    /// File name in the corpus directory.
    pub file: String,
    /// The kernel's symbol without `@`.
    pub symbol: String,
    /// The IR features column.
    pub features: String,
    /// The host launch column.
    pub launch: String,
}

/// Read `MANIFEST.tsv` (columns found by their header names).
pub fn read_manifest(corpus: &Path) -> Result<Vec<Entry>, String> {
    let path = corpus.join("MANIFEST.tsv");
    let rows = crate::read_tsv(&path, &["file", "symbol", "features", "launch"])?;
    rows.iter()
        .map(|(line, row)| {
            let get = |i| crate::tsv_cell(&path, *line, row, i);
            Ok(Entry {
                file: get(0)?,
                symbol: get(1)?.trim_start_matches('@').to_string(),
                features: get(2)?,
                launch: get(3)?,
            })
        })
        .collect()
}

/// The corpus: `GYRE_CUDA_CORPUS` if set, else `<workspace root>/../shared/corpus/cuda`;
/// `None` if it has no `MANIFEST.tsv`.
pub fn find_corpus(workspace_root: &Path) -> Option<PathBuf> {
    let dir = match std::env::var_os("GYRE_CUDA_CORPUS") {
        Some(p) => PathBuf::from(p),
        None => workspace_root.join("../shared/corpus/cuda"),
    };
    dir.join("MANIFEST.tsv").is_file().then_some(dir)
}

/// The external tools; each stage that needs a missing one is skipped with a reason.
#[derive(Clone, Debug, Default)]
pub struct Tools {
    /// NVIDIA ptxas.
    pub ptxas: Option<PathBuf>,
    /// LLVM 14 `llc`.
    pub llc: Option<PathBuf>,
    /// LLVM 14 `opt` (the `-O2` run before llc; without it llc reads the input as is).
    pub opt: Option<PathBuf>,
    /// LLVM 14 `llvm-link` (only for kernels that call libdevice).
    pub llvm_link: Option<PathBuf>,
    /// `libdevice.10.bc`.
    pub libdevice: Option<PathBuf>,
}

impl Tools {
    /// Find the tools: ptxas and llc as the tests find them (gyre-test-tools),
    /// `llvm-link` next to llc, libdevice beside ptxas in the CUDA wheel
    /// (`.../cuda_nvcc/nvvm/libdevice/libdevice.10.bc`) or at `GYRE_LIBDEVICE`.
    pub fn find() -> Tools {
        use gyre_test_tools::{find, Tool};
        let ptxas = find(Tool::Ptxas);
        let llc = find(Tool::Llc);
        let opt = find(Tool::Opt);
        let llvm_link = llc.as_ref().and_then(|llc| {
            let sibling = llc.with_file_name(
                llc.file_name()
                    .and_then(|n| n.to_str())
                    .map_or("llvm-link".to_string(), |n| n.replace("llc", "llvm-link")),
            );
            [sibling, "/usr/lib/llvm-14/bin/llvm-link".into()]
                .into_iter()
                .find(|p| gyre_test_tools::is_llvm14(p))
        });
        let libdevice = match std::env::var_os("GYRE_LIBDEVICE") {
            Some(p) => Some(PathBuf::from(p)),
            None => ptxas.as_ref().and_then(|p| {
                let p = p.parent()?.parent()?.join("nvvm/libdevice/libdevice.10.bc");
                p.is_file().then_some(p)
            }),
        };
        Tools {
            ptxas,
            llc,
            opt,
            llvm_link,
            libdevice,
        }
    }
}

/// What to run.
#[derive(Clone, Debug)]
pub struct Setup {
    /// The corpus directory.
    pub corpus: PathBuf,
    /// The tools found.
    pub tools: Tools,
    /// Only these files (the test's slice); `None` for the whole manifest.
    pub only: Option<Vec<String>>,
    /// Random inputs per kernel.
    pub runs: u32,
}

/// The result of one stage.
#[derive(Clone, PartialEq, Eq, Debug)]
pub enum Outcome {
    /// Done and correct (a short note, possibly empty).
    Pass(String),
    /// Done and wrong, or failed: the reason.
    Fail(String),
    /// Ran, but no run could be compared (the input itself faults): the reason.
    NotComparable(String),
    /// Not run: an earlier stage failed or a tool is missing.
    Skipped(String),
}

impl Outcome {
    /// Did the stage pass?
    pub fn passed(&self) -> bool {
        matches!(self, Outcome::Pass(_))
    }

    /// The reason of a failure, if it is one.
    pub fn failure(&self) -> Option<&str> {
        match self {
            Outcome::Fail(r) => Some(r),
            _ => None,
        }
    }
}

/// Every stage of one kernel.
#[derive(Clone, Debug)]
pub struct Report {
    /// The manifest line.
    pub entry: Entry,
    /// Import (all errors in the reason).
    pub import: Outcome,
    /// Verifier on the imported module.
    pub verify: Outcome,
    /// `-O` with verify-each.
    pub opt: Outcome,
    /// PTX for every target through ptxas.
    pub ptx: Outcome,
    /// Input vs optimized module in the interpreter.
    pub interp: Outcome,
    /// llc on the input.
    pub llc: Outcome,
    /// Gyre's and llc's PTX in ptx-sim.
    pub sim: Outcome,
    /// The launch (grid x block) used.
    pub launch: String,
    /// Float differences accepted between Gyre's PTX and llc's PTX in ptx-sim.
    pub closeness: Closeness,
    /// Hardware-approximate opcodes of the optimized module (`ex2_approx`, ...).
    pub approx: Vec<&'static str>,
    /// Float differences accepted between the interpreter and Gyre's PTX (only with
    /// approximate opcodes; otherwise the two must agree bit for bit).
    pub interp_closeness: Closeness,
    /// Seconds this kernel took.
    pub seconds: f64,
    /// The kernel uses `extern __shared__` arrays (dynamic shared memory).
    pub dynamic_shared: bool,
    /// Quality of Gyre's sm_70 PTX (absent when there is none).
    pub gyre_quality: Option<Quality>,
    /// Quality of LLVM's (`opt -O2 | llc -O2 -mcpu=sm_70`) PTX.
    pub llvm_quality: Option<Quality>,
    /// The dynamic instructions of [`Quality::dynamic`] by opcode class
    /// ([`gyre_ptx_sim::Profile::by_opcode`]), Gyre's then LLVM's; empty when not run.
    pub dynamic_ops: (OpCounts, OpCounts),
    /// Distinct bodies (beyond `.version`/`.target`) among Gyre's PTX texts for
    /// [`Sm::ALL`]; 0 when there is no PTX for every target.
    pub ptx_bodies: usize,
}

/// Executions per opcode class (`add`, `ld.global`, `setp`, ...), most first.
pub type OpCounts = Vec<(String, u64)>;

/// Code-quality figures of one PTX text of a kernel, all for sm_70.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Quality {
    /// Instructions in the kernel's `.entry` body and the bodies of the `.func`s the
    /// text defines (device functions, helpers): not directives, labels or braces
    /// ([`static_instructions`]).
    pub static_insts: u64,
    /// Instructions ptx-sim executed (all threads, guarded-off ones included) on the
    /// first launch the sim stage compared; `None` when there was none.
    pub dynamic: Option<u64>,
    /// `ptxas -v -arch=sm_70`: registers of the kernel (0 without ptxas).
    pub regs: u32,
    /// `ptxas -v -arch=sm_70`: bytes of spill stores plus spill loads of the kernel.
    pub spill_bytes: u64,
}

/// Static PTX instructions of `ptx` for [`Quality::static_insts`]: statements (split at
/// `;`, comments dropped) inside function bodies (`.entry` of `kernel` and every
/// `.func` with a body) that are neither directives (`.reg`, `.param`, `.pragma`, ...)
/// nor empty once labels and scope braces are stripped.
pub fn static_instructions(ptx: &str, kernel: &str) -> u64 {
    let mut count = 0;
    // Brace depth; a body is counted while inside a counted function's braces.
    let mut depth = 0u32;
    let mut counted = false;
    // Whether the function header being read (`.entry`/`.func` up to its `{`) counts.
    let mut header: Option<bool> = None;
    for line in ptx.lines() {
        let line = line.split("//").next().unwrap_or("");
        if depth == 0 {
            let t = line.trim_start();
            if let Some(rest) = t
                .strip_prefix(".visible .entry ")
                .or_else(|| t.strip_prefix(".entry "))
            {
                let name = rest.split(['(', ' ']).next().unwrap_or("");
                header = Some(name == kernel);
            } else if t.starts_with(".func ") || t.starts_with(".visible .func ") {
                header = Some(true);
            } else if t.starts_with(".extern ") {
                header = None;
            }
        }
        for stmt in line.split_inclusive([';', '{', '}']) {
            let mut body = stmt.trim();
            if body.ends_with('{') {
                if depth == 0 {
                    counted = header.take().unwrap_or(false);
                }
                depth += 1;
                body = body[..body.len() - 1].trim();
            } else if body.ends_with('}') {
                depth = depth.saturating_sub(1);
                body = body[..body.len() - 1].trim();
            }
            if depth == 0 {
                // A prototype or declaration ends its header without a body.
                if body.ends_with(';') {
                    header = None;
                }
                continue;
            }
            if !counted || !body.ends_with(';') {
                continue;
            }
            // A leading label (`$L__BB3:`, `LBB0_1:`) belongs to the next instruction.
            let mut b = body;
            while let Some((l, r)) = b.split_once(':') {
                if l.trim().contains(char::is_whitespace) || l.contains('[') {
                    break;
                }
                b = r;
            }
            let b = b.trim();
            if b.len() > 1 && !b.starts_with('.') {
                count += 1;
            }
        }
    }
    count
}

/// `ptxas -v -arch=sm_70` on `ptx`: the registers and spill bytes (stores plus loads)
/// of entry `kernel`, or why not.
pub fn ptxas_usage(ptxas: &Path, ptx: &str, kernel: &str) -> Result<(u32, u64), String> {
    let dir = std::env::temp_dir().join("gyre-corpus");
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    let file = dir.join(format!("{}.{kernel}.quality.ptx", std::process::id()));
    std::fs::write(&file, ptx).map_err(|e| e.to_string())?;
    let out = Command::new(ptxas)
        .args(["-v", "-arch=sm_70", "-o", "/dev/null"])
        .arg(&file)
        .output();
    let _ = std::fs::remove_file(&file);
    let out = out.map_err(|e| format!("cannot run ptxas: {e}"))?;
    let text =
        String::from_utf8_lossy(&out.stderr).into_owned() + &String::from_utf8_lossy(&out.stdout);
    parse_ptxas_usage(&text, kernel)
        .ok_or_else(|| format!("no ptxas -v figures for {kernel}: {}", text.trim()))
}

/// The registers and spill bytes of entry `kernel` in `ptxas -v` output.
pub fn parse_ptxas_usage(text: &str, kernel: &str) -> Option<(u32, u64)> {
    let start = format!("Compiling entry function '{kernel}'");
    let mut lines = text.lines().skip_while(|l| !l.contains(&start)).skip(1);
    let mut spill = None;
    for l in lines.by_ref() {
        if l.contains("Compiling entry function") {
            break;
        }
        if l.contains("spill stores") {
            // "0 bytes stack frame, 8 bytes spill stores, 8 bytes spill loads"
            let mut n = 0u64;
            for part in l.split(',') {
                if part.contains("spill") {
                    n += part.split_whitespace().next()?.parse::<u64>().ok()?;
                }
            }
            spill = Some(n);
        }
        if let Some(rest) = l.split("Used ").nth(1) {
            let regs = rest.split_whitespace().next()?.parse().ok()?;
            return Some((regs, spill.unwrap_or(0)));
        }
    }
    None
}

/// The static and `ptxas -v` figures of one PTX text (dynamic ones come from the sim
/// stage).
fn quality(setup: &Setup, ptx: &str, kernel: &str) -> Quality {
    let (regs, spill_bytes) = setup
        .tools
        .ptxas
        .as_ref()
        .and_then(|p| ptxas_usage(p, ptx, kernel).ok())
        .unwrap_or((0, 0));
    Quality {
        static_insts: static_instructions(ptx, kernel),
        dynamic: None,
        regs,
        spill_bytes,
    }
}

impl Report {
    /// The stages in order, with their names.
    pub fn stages(&self) -> [(&'static str, &Outcome); 7] {
        [
            ("import", &self.import),
            ("verify", &self.verify),
            ("opt", &self.opt),
            ("ptx", &self.ptx),
            ("interp", &self.interp),
            ("llc", &self.llc),
            ("sim", &self.sim),
        ]
    }

    /// The first stage that failed, with its reason.
    pub fn first_failure(&self) -> Option<(&'static str, &str)> {
        self.stages()
            .into_iter()
            .find_map(|(n, o)| o.failure().map(|r| (n, r)))
    }
}

/// Run the harness over the corpus (or the slice).
pub fn run(setup: &Setup) -> Result<Vec<Report>, String> {
    let entries = read_manifest(&setup.corpus)?;
    let mut out = Vec::new();
    if let Some(only) = &setup.only {
        for f in only {
            let e = entries
                .iter()
                .find(|e| &e.file == f)
                .ok_or_else(|| format!("{f}: not in the manifest"))?;
            out.push(run_one(setup, e)?);
        }
    } else {
        for e in &entries {
            out.push(run_one(setup, e)?);
        }
    }
    Ok(out)
}

/// A global the host fills before the launch, or a global-space global whose final
/// contents are compared.
#[derive(Clone, Debug)]
struct HostGlobal {
    name: String,
    space: AddrSpace,
    bytes: usize,
    /// `externally_initialized`: the harness gives it random contents.
    filled: bool,
}

/// Names of the globals marked `externally_initialized` in LLVM IR text.
pub fn externally_initialized(src: &str) -> Vec<String> {
    src.lines()
        .filter(|l| l.starts_with('@') && l.contains(" externally_initialized "))
        .filter_map(|l| {
            let name = l[1..].split(" = ").next()?.trim();
            Some(name.trim_matches('"').to_string())
        })
        .collect()
}

/// Does LLVM IR text declare an `extern __shared__` array (a 0-element external
/// shared global, sized by the launch)?
pub fn uses_dynamic_shared(src: &str) -> bool {
    src.lines().any(|l| {
        l.starts_with('@') && l.contains(" external ") && l.contains("addrspace(3) global [0 x")
    })
}

/// The name llc gives a global in PTX: `.` and `@` are not PTX identifier characters
/// (LLVM's NVPTXAssignValidGlobalNames writes `_$_` for them).
fn llc_name(name: &str) -> String {
    name.chars()
        .map(|c| match c {
            '.' | '@' => "_$_".to_string(),
            c => c.to_string(),
        })
        .collect()
}

fn skipped(why: &str) -> Outcome {
    Outcome::Skipped(why.to_string())
}

/// All stages of one kernel. `Err` only for a harness problem (unreadable file).
pub fn run_one(setup: &Setup, e: &Entry) -> Result<Report, String> {
    let path = setup.corpus.join(&e.file);
    let src = std::fs::read_to_string(&path)
        .map_err(|err| format!("cannot read {}: {err}", path.display()))?;
    let plan = launches::plan(&e.file, &e.features, &e.launch);
    Ok(run_planned(setup, e, &path, &src, plan, None))
}

/// All stages of one kernel whose LLVM IR `src` is in the file `path` (`e.file` names
/// it, without `/`), launched by `plan`. Gyre imports `src`, unless `given` is the
/// module `src` was exported from (an example: Gyre compiles the module itself, LLVM
/// its export, as the perf report's quality table does).
pub fn run_planned(
    setup: &Setup,
    e: &Entry,
    path: &Path,
    src: &str,
    plan: Plan,
    given: Option<Module>,
) -> Report {
    let start = std::time::Instant::now();
    let mut r = Report {
        entry: e.clone(),
        import: skipped(""),
        verify: skipped("not imported"),
        opt: skipped("not imported"),
        ptx: skipped("not imported"),
        interp: skipped("not imported"),
        llc: skipped(""),
        sim: skipped("not imported"),
        launch: format!(
            "({},{},{})x({},{},{})",
            plan.grid[0], plan.grid[1], plan.grid[2], plan.block[0], plan.block[1], plan.block[2]
        ),
        closeness: Closeness::default(),
        approx: Vec::new(),
        interp_closeness: Closeness::default(),
        seconds: 0.0,
        dynamic_shared: uses_dynamic_shared(src),
        gyre_quality: None,
        llvm_quality: None,
        dynamic_ops: Default::default(),
        ptx_bodies: 0,
    };
    // LLVM's side does not depend on Gyre's import.
    let llc_ptx = llc_compile(setup, &e.file, path, src);
    r.llc = match &llc_ptx {
        // Whether ptx-sim can read llc's PTX is known even when Gyre cannot import the
        // kernel: it names the PTX the simulator still lacks.
        Ok(ptx) => Outcome::Pass(match gyre_ptx_sim::parse(ptx) {
            Ok(_) => String::new(),
            Err(e) => format!("ptx-sim cannot read llc's PTX: {e}"),
        }),
        Err(o) => o.clone(),
    };
    if let Ok(ptx) = &llc_ptx {
        r.llvm_quality = Some(quality(setup, ptx, &Producer::Llc.kernel_name(&e.symbol)));
    }
    let imported = match given {
        Some(m) => Ok(m),
        None => gyre_llvm::import_module(src),
    };
    let input = match imported {
        Ok(m) => m,
        Err(errs) => {
            r.import = Outcome::Fail(errs.to_string().replace('\n', "; "));
            r.seconds = start.elapsed().as_secs_f64();
            return r;
        }
    };
    r.import = Outcome::Pass(String::new());
    if let Err(errs) = gyre_ir::verifier::verify_module(&input) {
        r.verify = Outcome::Fail(errs.to_string().replace('\n', "; "));
        for s in [&mut r.opt, &mut r.ptx, &mut r.interp, &mut r.sim] {
            *s = skipped("does not verify");
        }
        r.seconds = start.elapsed().as_secs_f64();
        return r;
    }
    r.verify = Outcome::Pass(String::new());
    let mut optimized = input.clone();
    let opt = PassManager::from_pipeline(
        &compile_pipeline(),
        Knobs::default(),
        Options {
            verify_each: true,
            ..Options::default()
        },
    )
    .and_then(|mut pm| pm.run_module(&mut optimized).map_err(|e| e.to_string()));
    if let Err(err) = opt {
        r.opt = Outcome::Fail(err.replace('\n', "; "));
        for s in [&mut r.ptx, &mut r.interp, &mut r.sim] {
            *s = skipped("-O failed");
        }
        r.seconds = start.elapsed().as_secs_f64();
        return r;
    }
    r.opt = Outcome::Pass(String::new());
    let (ptx_outcome, gyre_ptx, other_ptx) = gyre_ptx(setup, &optimized);
    if ptx_outcome.passed() {
        r.ptx_bodies = 1 + other_ptx.len();
    }
    r.ptx = ptx_outcome;
    let kernel = e.symbol.as_str();
    if let Some(ptx) = &gyre_ptx {
        r.gyre_quality = Some(quality(setup, ptx, &Producer::Gyre.kernel_name(kernel)));
    }
    let host = host_globals(src, &input);
    let Some(fid) = input.func_by_name(kernel) else {
        r.interp = Outcome::Fail(format!("no kernel @{kernel} in the imported module"));
        r.sim = skipped("no kernel");
        r.seconds = start.elapsed().as_secs_f64();
        return r;
    };
    let params = input.functions[fid].sig.params.clone();
    let byval: Vec<(usize, usize)> = input.functions[fid]
        .byval
        .iter()
        .map(|b| (b.index as usize, b.size as usize))
        .collect();
    let cases: Vec<Case> = (0..u64::from(setup.runs))
        .map(|s| launches::case(&plan, &params, &byval, s))
        .collect();
    let (interp, interp_mem) = interp_stage(&input, &optimized, kernel, &plan, &cases, &host);
    r.interp = interp;
    r.sim = match (&gyre_ptx, &llc_ptx) {
        (None, _) => skipped("no Gyre PTX"),
        (Some(g), llc) => {
            r.approx = approx_opcodes(&optimized);
            let (o, vs_llc, vs_interp, steps) = sim_stage(
                g,
                llc.as_ref().ok().map(String::as_str),
                kernel,
                &plan,
                &cases,
                &host,
                &interp_mem,
                !r.approx.is_empty(),
            );
            r.closeness = vs_llc;
            r.interp_closeness = vs_interp;
            // Every other distinct body against the interpreter too (without llc: its
            // figures are sm_70's); the first failure is the stage's.
            let mut o = o;
            for (sm, text) in &other_ptx {
                if !o.passed() {
                    break;
                }
                let (other, _, c, _) = sim_stage(
                    text,
                    None,
                    kernel,
                    &plan,
                    &cases,
                    &host,
                    &interp_mem,
                    !r.approx.is_empty(),
                );
                r.interp_closeness.merge(c);
                if let Outcome::Fail(e) = other {
                    o = Outcome::Fail(format!("{}: {e}", sm.target()));
                }
            }
            if let (Some(q), Some(((g, gops), l))) = (&mut r.gyre_quality, steps) {
                q.dynamic = Some(g);
                r.dynamic_ops.0 = gops;
                if let (Some(lq), Some((l, lops))) = (&mut r.llvm_quality, l) {
                    lq.dynamic = Some(l);
                    r.dynamic_ops.1 = lops;
                }
            }
            o
        }
    };
    r.seconds = start.elapsed().as_secs_f64();
    r
}

/// The `externally_initialized` globals of `src` that the imported module has. A
/// `__constant__` one is left out (its initializer stands in both the interpreter and
/// ptx-sim) while the interpreter does not read host-filled constants from the caller's
/// memory ([`interp_reads_host_constants`]).
///
/// Every other global of the global space is listed too, not filled: its final contents
/// are compared like a buffer's.
fn host_globals(src: &str, m: &Module) -> Vec<HostGlobal> {
    let filled = externally_initialized(src);
    m.globals
        .values()
        .filter_map(|g| {
            // The IR's flag (which also covers `extern_weak` declarations such as the
            // real cooperative-groups header's `threadIdx`), or the `.ll` text's.
            let host = g.externally_initialized || filled.contains(&g.name);
            let keep = match g.space {
                AddrSpace::Const => host && interp_reads_host_constants(),
                AddrSpace::Global => true,
                _ => false,
            };
            keep.then(|| HostGlobal {
                name: g.name.clone(),
                space: g.space,
                bytes: g.size() as usize,
                filled: host,
            })
        })
        .collect()
}

/// Does the interpreter take an `externally_initialized` `__constant__` global's
/// contents from the caller's buffer of the same name (rather than its initializer)?
/// Probed once on a small kernel, so the harness follows the interpreter's semantics as
/// they change.
pub fn interp_reads_host_constants() -> bool {
    static PROBE: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *PROBE.get_or_init(|| {
        let src = r#"
target triple = "nvptx64-nvidia-cuda"
@c = dso_local addrspace(4) externally_initialized global i32 7, align 4
define void @k(i32* %out) {
  %v = load i32, i32 addrspace(4)* @c, align 4
  store i32 %v, i32* %out, align 4
  ret void
}
!nvvm.annotations = !{!0}
!0 = !{void (i32*)* @k, !"kernel", i32 1}
"#;
        let Ok(m) = gyre_llvm::import_module(src) else {
            return false;
        };
        let mut mem = Memory::new();
        mem.alloc_buffer("c", 99u32.to_le_bytes().to_vec());
        mem.alloc_zeroed("out", 4);
        let launch = Launch::linear(1, 1, vec![Arg::buffer("out")]);
        run_kernel(&m, "k", &launch, &mut mem).is_ok()
            && mem.bytes("out") == Some(&99u32.to_le_bytes()[..])
    })
}

/// The hardware-approximate opcodes `m` uses (their IR meaning is the exact value
/// rounded; PTX approximates it), without repeats.
fn approx_opcodes(m: &Module) -> Vec<&'static str> {
    let mut out = Vec::new();
    for f in m.functions.values() {
        for b in f.layout.blocks() {
            for i in f.layout.block_insts(b) {
                let data = f.dfg.inst(i);
                let name = data.opcode().name();
                if name.ends_with("_approx") && !out.contains(&name) {
                    out.push(name);
                }
                // `contract` multiply-adds may be fused (`-C fp-contract=on`): rounded
                // once in PTX, twice in the interpreter.
                if let gyre_ir::InstructionData::Binary { flags, .. } = data {
                    if flags.contains(gyre_ir::IntFlags::CONTRACT) && !out.contains(&"contract") {
                        out.push("contract");
                    }
                }
            }
        }
    }
    out
}

/// The random contents of the host globals for run `seed`.
fn host_contents(host: &[HostGlobal], seed: u64) -> Vec<Vec<u8>> {
    let mut rng = SplitMix64::new(seed ^ 0x6c6f_6261_6c73);
    host.iter()
        .map(|g| match g.filled {
            true => launches::fill_bytes(launches::Fill::F32, g.bytes, &mut rng),
            false => Vec::new(),
        })
        .collect()
}

/// The body of a PTX text: every line but `.version` and `.target`, the only lines
/// that may differ between two targets' texts of the same module.
fn ptx_body(ptx: &str) -> impl Iterator<Item = &str> {
    ptx.lines().filter(|l| {
        let t = l.trim_start();
        !t.starts_with(".version") && !t.starts_with(".target")
    })
}

/// Gyre's PTX for every target through ptxas (with `gyre compile`'s default
/// `fp-contract=on`); the sm_70 text for ptx-sim and quality, then one text of each
/// further distinct body (a target whose text differs from sm_70's in more than the
/// `.version`/`.target` lines), each with its target, for ptx-sim too.
fn gyre_ptx(setup: &Setup, m: &Module) -> (Outcome, Option<String>, Vec<(Sm, String)>) {
    let mut sm70: Option<String> = None;
    let mut distinct: Vec<(Sm, String)> = Vec::new();
    // What `gyre compile` does: contract where the IR allows it, as llc does.
    let flags = CodegenFlags {
        fp_contract: FpContract::On,
        ..CodegenFlags::default()
    };
    for sm in Sm::ALL {
        let ptx = match compile_module_with_flags(
            m,
            &CodegenOptions { sm },
            &flags,
            &mut gyre_analysis::ModuleAnalyses::new(),
        ) {
            Ok(p) => p,
            Err(e) => {
                return (
                    Outcome::Fail(format!("{}: {e}", sm.target())),
                    None,
                    distinct,
                )
            }
        };
        if let Some(ptxas) = &setup.tools.ptxas {
            if let Err(e) = gyre_test_tools::run_ptxas(ptxas, &ptx, sm.target()) {
                let first = e.lines().nth(1).unwrap_or(&e).to_string();
                return (
                    Outcome::Fail(format!("{}: {first}", sm.target())),
                    sm70,
                    distinct,
                );
            }
        }
        match &sm70 {
            None => sm70 = Some(ptx),
            Some(first) => {
                let same = |t: &str| ptx_body(t).eq(ptx_body(&ptx));
                if !same(first) && !distinct.iter().any(|(_, t)| same(t)) {
                    distinct.push((sm, ptx));
                }
            }
        }
    }
    // Which texts ptx-sim runs: said in the stage's note, as the report shows it.
    let note = match distinct.len() {
        0 => format!(
            "{} targets, one body (only .version/.target differ)",
            Sm::ALL.len()
        ),
        n => format!("{} targets, {} distinct bodies", Sm::ALL.len(), n + 1),
    };
    match setup.tools.ptxas {
        Some(_) => (Outcome::Pass(note), sm70, distinct),
        None => (skipped("ptxas not found"), sm70, distinct),
    }
}

/// llc's PTX of the input, with libdevice linked first when the kernel calls it.
fn llc_compile(setup: &Setup, file: &str, path: &Path, src: &str) -> Result<String, Outcome> {
    let Some(llc) = &setup.tools.llc else {
        return Err(skipped("LLVM 14 llc not found"));
    };
    let dir = std::env::temp_dir().join("gyre-corpus");
    std::fs::create_dir_all(&dir).map_err(|e| Outcome::Fail(e.to_string()))?;
    let mut input = path.to_path_buf();
    let uses_libdevice = src
        .lines()
        .any(|l| l.starts_with("declare") && l.contains("@__nv_"));
    if uses_libdevice {
        let (Some(link), Some(lib)) = (&setup.tools.llvm_link, &setup.tools.libdevice) else {
            return Err(skipped(
                "calls libdevice; llvm-link or libdevice.10.bc not found",
            ));
        };
        let linked = dir.join(format!("{}.{file}.bc", std::process::id()));
        let out = Command::new(link)
            .arg(path)
            .arg(lib)
            .arg("--only-needed")
            .arg("-o")
            .arg(&linked)
            .output()
            .map_err(|e| Outcome::Fail(format!("cannot run llvm-link: {e}")))?;
        if !out.status.success() {
            return Err(Outcome::Fail(format!(
                "llvm-link: {}",
                String::from_utf8_lossy(&out.stderr)
                    .lines()
                    .next()
                    .unwrap_or("")
            )));
        }
        input = linked;
    }
    // LLVM's side is `opt -O2 | llc -O2`, the pipeline clang runs, so the quality
    // figures compare Gyre with LLVM's whole optimizer. llc runs NVVMReflect itself
    // (NVPTX's IR passes) for libdevice's __nvvm_reflect calls either way.
    let optimized = dir.join(format!("{}.{file}.opt.bc", std::process::id()));
    let mut llc_input = input.clone();
    if let Some(opt) = &setup.tools.opt {
        let out = Command::new(opt)
            .args(["-O2", "-mcpu=sm_70", "-o"])
            .arg(&optimized)
            .arg(&input)
            .output()
            .map_err(|e| Outcome::Fail(format!("cannot run opt: {e}")))?;
        if !out.status.success() {
            if uses_libdevice {
                let _ = std::fs::remove_file(&input);
            }
            return Err(Outcome::Fail(format!(
                "opt -O2: {}",
                String::from_utf8_lossy(&out.stderr)
                    .lines()
                    .next()
                    .unwrap_or("")
            )));
        }
        llc_input = optimized.clone();
    }
    let out = Command::new(llc)
        .args(["-march=nvptx64", "-mcpu=sm_70", "-O2", "-o", "-"])
        .arg(&llc_input)
        .output();
    if uses_libdevice {
        let _ = std::fs::remove_file(&input);
    }
    let _ = std::fs::remove_file(&optimized);
    let out = out.map_err(|e| Outcome::Fail(format!("cannot run llc: {e}")))?;
    if !out.status.success() {
        return Err(Outcome::Fail(format!(
            "llc: {}",
            String::from_utf8_lossy(&out.stderr)
                .lines()
                .next()
                .unwrap_or("")
        )));
    }
    let ptx = String::from_utf8_lossy(&out.stdout).into_owned();
    if let Some(ptxas) = &setup.tools.ptxas {
        if let Err(e) = gyre_test_tools::run_ptxas(ptxas, &ptx, "sm_70") {
            return Err(Outcome::Fail(format!(
                "ptxas on llc's PTX: {}",
                e.lines().nth(1).unwrap_or(&e)
            )));
        }
    }
    Ok(ptx)
}

/// The interpreter's memory and arguments for one case.
fn interp_inputs(case: &Case, host: &[HostGlobal], contents: &[Vec<u8>]) -> (Vec<Arg>, Memory) {
    let mut mem = Memory::new();
    for (name, bytes) in &case.buffers {
        mem.alloc_buffer(name, bytes.clone());
    }
    for (g, bytes) in host.iter().zip(contents) {
        if g.filled {
            mem.alloc_buffer(&g.name, bytes.clone());
        }
    }
    let args = case
        .args
        .iter()
        .map(|v| match v {
            Value::Int(n) => Arg::Int(*n),
            Value::F32(x) => Arg::F32(*x),
            Value::F64(x) => Arg::F64(*x),
            Value::Buffer(i, off) => Arg::Buffer(case.buffers[*i].0.clone(), *off),
            Value::Bytes(b) => Arg::Bytes(b.clone()),
        })
        .collect();
    (args, mem)
}

/// One interpreter run of the input: its final memory (with what `vprintf` printed) and,
/// when a device `assert` ended it, the failed assertion (as [`assertion`] writes it).
#[derive(Clone)]
pub(crate) struct InterpRun {
    mem: Memory,
    assert: Option<String>,
}

/// A failed device assertion, as the interpreter and ptx-sim both report it: where,
/// which thread, what.
fn assertion(
    file: &str,
    line: u32,
    function: &str,
    ctaid: [u32; 3],
    tid: [u32; 3],
    message: &str,
) -> String {
    format!(
        "{file}:{line}: {function}: block {ctaid:?}, thread {tid:?}: Assertion `{message}` failed"
    )
}

/// The assertion of an interpreter error, if it is a failed `assert_fail`.
fn interp_assertion(e: &ExecError) -> Option<String> {
    match e {
        ExecError::AssertFailed { loc, failure } => Some(assertion(
            &failure.file,
            failure.line,
            &failure.function,
            loc.ctaid,
            loc.tid,
            &failure.message,
        )),
        _ => None,
    }
}

/// Everything `vprintf` printed into `m`, in the interpreter's order.
fn printed(m: &Memory) -> String {
    m.printf_output().iter().map(|l| l.text.as_str()).collect()
}

/// Interpreter: input vs optimized, bit-exact on every buffer, the same `printf` output
/// and the same failed `assert` (if one ends the input's run). Returns the outcome and,
/// per case, the input module's run (for the PTX comparison) when it ran.
fn interp_stage(
    input: &Module,
    optimized: &Module,
    kernel: &str,
    plan: &Plan,
    cases: &[Case],
    host: &[HostGlobal],
) -> (Outcome, Vec<Option<InterpRun>>) {
    let mut finals = Vec::new();
    let mut compared = 0;
    let mut written = 0;
    let mut input_error = None;
    for (seed, case) in cases.iter().enumerate() {
        let contents = host_contents(host, seed as u64);
        let (args, mem) = interp_inputs(case, host, &contents);
        let mut launch = Launch::new(plan.grid, plan.block, args);
        // The `extern __shared__` arrays' storage, as ptx-sim gets it.
        launch.dynamic_shared_bytes = DYNAMIC_SHARED;
        launch.config = Config {
            step_limit: STEP_LIMIT,
            ..Config::default()
        };
        let mut m0 = mem.clone();
        // A failed device `assert` is the kernel's behaviour (CUDA reports it), not
        // undefined behaviour: the -O output must fail the same way.
        let assert0 = match run_kernel(input, kernel, &launch, &mut m0) {
            Ok(_) => None,
            Err(e) => match interp_assertion(&e) {
                Some(a) => Some(a),
                None => {
                    input_error.get_or_insert_with(|| format!("input fails: {e}"));
                    finals.push(None);
                    continue;
                }
            },
        };
        written += changed_bytes(&mem, &m0) + printed(&m0).len() + usize::from(assert0.is_some());
        let mut m1 = mem;
        // The optimized module may take a few more steps (new blocks, jumps).
        launch.config.step_limit = 2 * STEP_LIMIT;
        let r1 = run_kernel(optimized, kernel, &launch, &mut m1);
        match (&assert0, r1) {
            (None, Ok(_)) => {}
            (None, Err(e)) => {
                return (
                    Outcome::Fail(format!("seed {seed}: input succeeds, -O output fails: {e}")),
                    finals,
                );
            }
            (Some(a), r1) => {
                let a1 = r1.as_ref().err().and_then(interp_assertion);
                if a1.as_ref() != Some(a) {
                    let got = match r1 {
                        Ok(_) => "succeeds".to_string(),
                        Err(e) => format!("fails: {e}"),
                    };
                    return (
                        Outcome::Fail(format!("seed {seed}: input fails {a}, -O output {got}")),
                        finals,
                    );
                }
            }
        }
        if let Some(d) = interp_difference(&m0, &m1) {
            return (Outcome::Fail(format!("seed {seed}: {d}")), finals);
        }
        let (p0, p1) = (printed(&m0), printed(&m1));
        if p0 != p1 {
            return (
                Outcome::Fail(format!(
                    "seed {seed}: printf output differs: input {:?}, -O {:?}",
                    first_difference(&p0, &p1).0,
                    first_difference(&p0, &p1).1
                )),
                finals,
            );
        }
        compared += 1;
        finals.push(Some(InterpRun {
            mem: m0,
            assert: assert0,
        }));
    }
    let o = match (compared, input_error) {
        (0, Some(e)) => Outcome::NotComparable(e),
        (0, None) => Outcome::NotComparable("no runs".into()),
        // A kernel that writes nothing on these inputs proves little: say so.
        (_, _) if written == 0 => Outcome::NotComparable(
            "the input writes no buffer, prints nothing and fails no assertion".into(),
        ),
        (n, _) => Outcome::Pass(format!("{n} runs, {written} bytes written")),
    };
    (o, finals)
}

/// The first line where two printf outputs differ, from each.
fn first_difference<'a>(a: &'a str, b: &'a str) -> (&'a str, &'a str) {
    let (mut x, mut y) = (a.lines(), b.lines());
    loop {
        match (x.next(), y.next()) {
            (Some(p), Some(q)) if p == q => {}
            (p, q) => return (p.unwrap_or(""), q.unwrap_or("")),
        }
    }
}

/// Bytes of the buffers of `before` that differ (or became poison) in `after`.
fn changed_bytes(before: &Memory, after: &Memory) -> usize {
    before
        .names()
        .map(|name| {
            let (Some(b0), Some(b1), Some(p1)) =
                (before.bytes(name), after.bytes(name), after.poison(name))
            else {
                return 0;
            };
            b0.iter()
                .zip(b1)
                .zip(p1)
                .filter(|((x, y), p)| x != y || **p)
                .count()
        })
        .sum()
}

/// The first byte of a buffer of `m0` that `m1` does not reproduce (poison in `m0`
/// matches anything).
fn interp_difference(m0: &Memory, m1: &Memory) -> Option<String> {
    for name in m0.names() {
        let (Some(b0), Some(p0)) = (m0.bytes(name), m0.poison(name)) else {
            continue;
        };
        let (Some(b1), Some(p1)) = (m1.bytes(name), m1.poison(name)) else {
            return Some(format!("buffer {name} missing after -O"));
        };
        if b0.len() != b1.len() {
            return Some(format!("buffer {name} changed size"));
        }
        if let Some(i) = (0..b0.len()).find(|&i| !p0[i] && (p1[i] || b0[i] != b1[i])) {
            let after = if p1[i] {
                "poison".to_string()
            } else {
                format!("{:#04x}", b1[i])
            };
            return Some(format!("{name}[{i}]: {:#04x} input, {after} -O", b0[i]));
        }
    }
    None
}

/// The PTX text's name for an IR global, by which compiler made the text.
#[derive(Copy, Clone, PartialEq, Eq)]
enum Producer {
    Gyre,
    Llc,
}

impl Producer {
    fn global_name(self, name: &str) -> String {
        match self {
            Producer::Gyre => mangle(name),
            Producer::Llc => llc_name(name),
        }
    }

    fn kernel_name(self, name: &str) -> String {
        self.global_name(name)
    }

    fn label(self) -> &'static str {
        match self {
            Producer::Gyre => "Gyre's PTX",
            Producer::Llc => "llc's PTX",
        }
    }
}

/// What one PTX text did in ptx-sim on a case.
struct SimOut {
    /// The final bytes of every buffer: the case's, then the global-space globals of
    /// `host` (empty for one the PTX does not declare).
    bufs: Vec<Vec<u8>>,
    /// Everything `vprintf` printed.
    printed: String,
    /// The failed device assertion that ended the run, if one did.
    assert: Option<String>,
    /// Instructions executed (ptx-sim's count; 0 when an assertion ended the run).
    steps: u64,
    /// The same by opcode class (empty when an assertion ended the run).
    ops: OpCounts,
}

/// Run one PTX text in ptx-sim on a case: what it did, or the error (a failed
/// `__assertfail` is an outcome, not an error).
fn sim_run(
    ptx: &str,
    who: Producer,
    kernel: &str,
    plan: &Plan,
    case: &Case,
    host: &[HostGlobal],
    contents: &[Vec<u8>],
) -> Result<SimOut, String> {
    use gyre_ptx_sim as sim;
    let mut m = sim::parse(ptx).map_err(|e| format!("ptx-sim cannot read {}: {e}", who.label()))?;
    let mut mem = sim::Memory::new();
    let addrs: Vec<u64> = case
        .buffers
        .iter()
        .map(|(_, b)| {
            let a = mem.alloc(b.len(), 256);
            mem.write_bytes(a, b)
                .expect("fresh allocation is in bounds");
            a
        })
        .collect();
    for (g, bytes) in host.iter().zip(contents).filter(|(g, _)| g.filled) {
        let name = who.global_name(&g.name);
        match g.space {
            AddrSpace::Const => m.set_const(&name, bytes)?,
            _ => {
                mem.define_symbol(&name, bytes, 16);
            }
        }
    }
    let kname = who.kernel_name(kernel);
    let sizes = m
        .kernel_param_sizes(&kname)
        .ok_or_else(|| format!("{}: no kernel {kname}", who.label()))?;
    if sizes.len() != case.args.len() {
        return Err(format!(
            "{}: {} parameters, the IR kernel has {}",
            who.label(),
            sizes.len(),
            case.args.len()
        ));
    }
    let params: Vec<sim::ParamValue> = case
        .args
        .iter()
        .zip(&sizes)
        .map(|(v, &size)| {
            let bytes = match v {
                Value::Int(n) => n.to_le_bytes().to_vec(),
                Value::F32(x) => x.to_le_bytes().to_vec(),
                Value::F64(x) => x.to_le_bytes().to_vec(),
                Value::Buffer(i, off) => (addrs[*i] + off).to_le_bytes().to_vec(),
                Value::Bytes(b) => b.clone(),
            };
            let mut b = bytes;
            b.resize(size, 0);
            sim::ParamValue::Bytes(b)
        })
        .collect();
    let launch = sim::Launch {
        grid: plan.grid,
        block: plan.block,
    };
    let opts = sim::RunOptions {
        step_limit: STEP_LIMIT,
        dynamic_shared_bytes: DYNAMIC_SHARED,
        ..sim::RunOptions::default()
    };
    let mut steps = 0;
    let mut ops = Vec::new();
    let mut profile = sim::Profile::default();
    let assert =
        match sim::run_kernel_profiled(&m, &kname, &launch, &params, &mut mem, &opts, &mut profile)
        {
            Ok(stats) => {
                steps = stats.instructions;
                ops = profile.by_opcode(&m, ptx);
                None
            }
            Err(e) => match (&e.kind, &e.location) {
                (sim::SimErrorKind::AssertFailed(a), Some(at)) => Some(assertion(
                    &a.file,
                    a.line,
                    &a.function,
                    at.ctaid,
                    at.tid,
                    &a.message,
                )),
                _ => return Err(format!("{} fails in ptx-sim: {e}", who.label())),
            },
        };
    let printed: String = mem
        .printf_output()
        .iter()
        .map(|l| l.text.as_str())
        .collect();
    let mut out = Vec::new();
    for (a, (_, b)) in addrs.iter().zip(&case.buffers) {
        out.push(mem.read_bytes(*a, b.len()).map_err(|e| e.to_string())?);
    }
    for g in host.iter().filter(|g| g.space != AddrSpace::Const) {
        // A global the PTX does not declare was never allocated: the kernel cannot
        // have touched it, so it keeps the interpreter's view (compared as absent).
        out.push(match mem.symbol(&who.global_name(&g.name)) {
            Some(a) => mem.read_bytes(a, g.bytes).map_err(|e| e.to_string())?,
            None => Vec::new(),
        });
    }
    Ok(SimOut {
        bufs: out,
        printed,
        assert,
        steps,
        ops,
    })
}

/// Units in the last place between two floats of the same width given as bits (`None`
/// if one is NaN and the other not, or the signs differ on non-zero values).
fn ulps(a: u64, b: u64, width: u32) -> Option<u64> {
    let sign = 1u64 << (width - 1);
    let (fa, fb) = if width == 32 {
        (
            f64::from(f32::from_bits(a as u32)),
            f64::from(f32::from_bits(b as u32)),
        )
    } else {
        (f64::from_bits(a), f64::from_bits(b))
    };
    if fa.is_nan() || fb.is_nan() {
        return (fa.is_nan() && fb.is_nan()).then_some(0);
    }
    // Map the sign-magnitude bits onto a monotonic integer line.
    let key = |x: u64| -> i128 {
        if x & sign != 0 {
            -((x & !sign) as i128)
        } else {
            x as i128
        }
    };
    Some(key(a).abs_diff(key(b)) as u64)
}

/// How far apart two buffers were where they differ.
#[derive(Copy, Clone, Default, Debug, PartialEq)]
pub struct Closeness {
    /// Words that differ but were accepted.
    pub words: u64,
    /// The largest scaled error accepted (see [`TOLERANCE`]).
    pub max_err: f64,
    /// The largest ulp distance accepted (for the report: near zero it is large).
    pub max_ulp: u64,
}

impl Closeness {
    pub(crate) fn merge(&mut self, o: Closeness) {
        self.words += o.words;
        self.max_err = self.max_err.max(o.max_err);
        self.max_ulp = self.max_ulp.max(o.max_ulp);
    }
}

/// Largest `|a - b| / max(1, |a|, |b|)` accepted between a float of Gyre's PTX and the
/// same float of llc's PTX: llc contracts `contract` multiply-adds into `fma`, Gyre
/// keeps them apart, so results differ in their last bits, and by many ulps where
/// they cancel to near zero (inputs are in [-2, 2], so results are of order one). About
/// 84 ulps of an `f32` of magnitude above one.
pub const TOLERANCE: f64 = 1e-5;

/// The scaled error of two floats, `None` if one is NaN and the other not.
fn scaled_error(x: f64, y: f64) -> Option<f64> {
    if x.is_nan() || y.is_nan() {
        return (x.is_nan() && y.is_nan()).then_some(0.0);
    }
    if x == y {
        return Some(0.0);
    }
    Some((x - y).abs() / 1f64.max(x.abs()).max(y.abs()))
}

/// Compare two byte images of a buffer (`poison` marks bytes of `a` that match
/// anything): equal, except that a differing 4-byte word is accepted when both sides
/// are NaN (as an `f32`, or as part of an `f64`: payloads differ between the
/// interpreter and ptx-sim) and, if `floats`, when it is within [`TOLERANCE`] as an
/// `f32` or as part of an `f64`. The error names the first word not accepted.
///
/// Buffer types are not known, so only buffers filled with floats are compared with a
/// tolerance: on integer data a one-ulp "float" difference is an off-by-one.
fn close(a: &[u8], b: &[u8], poison: Option<&[bool]>, floats: bool) -> Result<Closeness, String> {
    if a.len() != b.len() {
        return Err(format!(": {} bytes vs {}", a.len(), b.len()));
    }
    let mut c = Closeness::default();
    let word = |s: &[u8], i: usize, n: usize| {
        let mut v = 0u64;
        for k in (0..n).rev() {
            v = v << 8 | u64::from(s[i + k]);
        }
        v
    };
    let mut i = 0;
    while i + 4 <= a.len() {
        let differs = (i..i + 4).any(|k| a[k] != b[k] && !poison.is_some_and(|p| p[k]));
        if differs {
            let (wa, wb) = (word(a, i, 4), word(b, i, 4));
            let (fa, fb) = (f32::from_bits(wa as u32), f32::from_bits(wb as u32));
            let base = i & !7;
            let (da, db) = if base + 8 <= a.len() {
                (word(a, base, 8), word(b, base, 8))
            } else {
                (0, u64::MAX)
            };
            let (xa, xb) = (f64::from_bits(da), f64::from_bits(db));
            let both_nan = (fa.is_nan() && fb.is_nan()) || (xa.is_nan() && xb.is_nan());
            let err = [
                scaled_error(f64::from(fa), f64::from(fb)),
                scaled_error(xa, xb),
            ]
            .into_iter()
            .flatten()
            .fold(f64::INFINITY, f64::min);
            if both_nan {
                // NaN payloads differ between the interpreter and ptx-sim.
            } else if floats && err <= TOLERANCE {
                c.words += 1;
                c.max_err = c.max_err.max(err);
                let ulp = [ulps(wa, wb, 32), ulps(da, db, 64)]
                    .into_iter()
                    .flatten()
                    .min()
                    .unwrap_or(0);
                c.max_ulp = c.max_ulp.max(ulp);
            } else {
                return Err(format!("[{i}]: {wa:#010x} ({fa:e}) vs {wb:#010x} ({fb:e})"));
            }
        }
        i += 4;
    }
    if let Some(k) = (i..a.len()).find(|&k| a[k] != b[k] && !poison.is_some_and(|p| p[k])) {
        return Err(format!("[{k}]: {:#04x} vs {:#04x}", a[k], b[k]));
    }
    Ok(c)
}

/// Where two runs' printf output or failed assertion differ, if they do.
fn same_events(
    a: (&str, &Option<String>),
    b: (&str, &Option<String>),
    what: &str,
) -> Option<String> {
    if a.0 != b.0 {
        let (x, y) = first_difference(a.0, b.0);
        return Some(format!("printf output {x:?} vs {y:?}: {what}"));
    }
    if a.1 != b.1 {
        return Some(format!("assertion {:?} vs {:?}: {what}", a.1, b.1));
    }
    None
}

/// Instructions executed on one run, in all and by opcode class.
type Executed = (u64, OpCounts);

/// What [`sim_stage`] found: the outcome, the closeness to llc's PTX and to the
/// interpreter, and the instructions executed on the first compared case by Gyre's PTX
/// and (when run) llc's.
type SimStage = (
    Outcome,
    Closeness,
    Closeness,
    Option<(Executed, Option<Executed>)>,
);

/// ptx-sim stage: Gyre's PTX against llc's PTX and against the interpreter's output.
#[allow(clippy::too_many_arguments)]
fn sim_stage(
    gyre: &str,
    llc: Option<&str>,
    kernel: &str,
    plan: &Plan,
    cases: &[Case],
    host: &[HostGlobal],
    interp: &[Option<InterpRun>],
    approx: bool,
) -> SimStage {
    let mut worst = Closeness::default();
    let mut steps = None;
    let mut vs_interp = Closeness::default();
    let mut compared = 0;
    let mut not_comparable = None;
    let names = |case: &Case| -> Vec<String> {
        case.buffers
            .iter()
            .map(|(n, _)| n.clone())
            .chain(
                host.iter()
                    .filter(|g| g.space != AddrSpace::Const)
                    .map(|g| g.name.clone()),
            )
            .collect()
    };
    for (seed, case) in cases.iter().enumerate() {
        // A run the interpreter rejects (out of bounds, race, poison branch) is undefined
        // behaviour: the two PTX texts may legitimately differ on it.
        let Some(run) = interp.get(seed).and_then(Option::as_ref) else {
            not_comparable.get_or_insert_with(|| "the input fails in the interpreter".into());
            continue;
        };
        let contents = host_contents(host, seed as u64);
        let m = &run.mem;
        let gout = match sim_run(gyre, Producer::Gyre, kernel, plan, case, host, &contents) {
            Ok(g) => g,
            Err(e) => {
                return (
                    Outcome::Fail(format!("seed {seed}: {e}")),
                    worst,
                    vs_interp,
                    None,
                )
            }
        };
        // printf output and a failed assertion: exactly the interpreter's.
        let ip = printed(m);
        if let Some(d) = same_events(
            (&ip, &run.assert),
            (&gout.printed, &gout.assert),
            "interpreter vs Gyre's PTX in ptx-sim",
        ) {
            return (
                Outcome::Fail(format!("seed {seed}: {d}")),
                worst,
                vs_interp,
                None,
            );
        }
        let g = &gout.bufs;
        let names = names(case);
        // Gyre's PTX against the interpreter first, bit for bit: both keep every
        // rounding step, so a difference here is Gyre's own.
        // An empty image is a global the PTX does not declare (see `sim_run`).
        let absent = |k: usize, b: &[u8]| k >= case.buffers.len() && b.is_empty();
        for (k, gb) in g.iter().enumerate() {
            let (Some(ib), poison) = (m.bytes(&names[k]), m.poison(&names[k])) else {
                continue;
            };
            if absent(k, gb) {
                continue;
            }
            // Hardware-approximate opcodes mean the exact value rounded in the IR, an
            // approximation in PTX (ptx-sim's may differ in the last bit): float
            // buffers get the tolerance then.
            let floats = approx && case.floats.get(k).copied().unwrap_or(false);
            match close(ib, gb, poison, floats) {
                Ok(c) => vs_interp.merge(c),
                Err(at) => {
                    return (
                        Outcome::Fail(format!(
                            "seed {seed}: {}{at}: interpreter vs Gyre's PTX in ptx-sim",
                            names[k]
                        )),
                        worst,
                        vs_interp,
                        None,
                    )
                }
            }
        }
        let mut llc_steps = None;
        if let Some(t) = llc {
            let lout = match sim_run(t, Producer::Llc, kernel, plan, case, host, &contents) {
                Ok(l) => l,
                Err(e) => {
                    return (
                        Outcome::Fail(format!("seed {seed}: {e}")),
                        worst,
                        vs_interp,
                        None,
                    )
                }
            };
            if let Some(d) = same_events(
                (&gout.printed, &gout.assert),
                (&lout.printed, &lout.assert),
                "Gyre's PTX vs llc's PTX in ptx-sim",
            ) {
                return (
                    Outcome::Fail(format!("seed {seed}: {d}")),
                    worst,
                    vs_interp,
                    None,
                );
            }
            llc_steps = Some((lout.steps, lout.ops));
            let l = lout.bufs;
            for (k, (gb, lb)) in g.iter().zip(&l).enumerate() {
                if absent(k, gb) || absent(k, lb) {
                    continue;
                }
                let floats = case.floats.get(k).copied().unwrap_or(false);
                match close(gb, lb, None, floats) {
                    Ok(c) => worst.merge(c),
                    Err(at) => {
                        return (
                            Outcome::Fail(format!(
                                "seed {seed}: {}{at}: Gyre's PTX vs llc's PTX in ptx-sim",
                                names[k]
                            )),
                            worst,
                            vs_interp,
                            None,
                        )
                    }
                }
            }
        }
        if compared == 0 {
            steps = Some(((gout.steps, gout.ops.clone()), llc_steps));
        }
        compared += 1;
    }
    let o = match (compared, not_comparable) {
        (0, Some(e)) => Outcome::NotComparable(e),
        (0, None) => Outcome::NotComparable("no runs".into()),
        (n, _) => Outcome::Pass(match llc {
            Some(_) => format!("{n} runs, with llc"),
            None => format!("{n} runs, without llc"),
        }),
    };
    (o, worst, vs_interp, steps)
}

#[cfg(test)]
mod tests {
    use super::*;
    use gyre_codegen_lite::compile_module;

    #[test]
    fn static_instructions_count_only_instructions_of_bodies() {
        let ptx = "\
.version 6.0
.target sm_70
.address_size 64
.func (.param .b32 r) f(.param .b32 a);
.global .align 4 .b8 g[8] = {1, 0, 0, 0, 2, 0, 0, 0};
.visible .entry k(
\t.param .u64 p
)
{
\t.reg .b32 %r<3>; // a comment; with a semicolon
\tld.param.u64 %rd1, [p];
$L__BB1:
\t@%p1 bra $L__BB1;
\t{ .param .b32 a0;
\tst.param.b32 [a0], %r1;
\tcall (r0), f, (a0);
\t}
LBB0_1: add.s32 %r1, %r1, 1;
\t.pragma \"nounroll\";
\tret;
}
.visible .entry other()
{
\tret;
\tret;
}
.func (.param .b32 r) f(.param .b32 a)
{
\tret;
}
";
        // k: ld.param, bra, st.param, call, add, ret; f: ret; not `other`.
        assert_eq!(static_instructions(ptx, "k"), 7);
        assert_eq!(static_instructions(ptx, "other"), 3);
    }

    #[test]
    fn ptxas_usage_is_read_for_the_kernel() {
        let text = "\
ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function 'a' for 'sm_70'
ptxas info    : Function properties for a
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 9 registers, used 0 barriers, 360 bytes cmem[0]
ptxas info    : Compiling entry function 'k' for 'sm_70'
ptxas info    : Function properties for k
    8 bytes stack frame, 12 bytes spill stores, 4 bytes spill loads
ptxas info    : Used 255 registers, used 1 barriers, 400 bytes cmem[0]
";
        assert_eq!(parse_ptxas_usage(text, "a"), Some((9, 0)));
        assert_eq!(parse_ptxas_usage(text, "k"), Some((255, 16)));
        assert_eq!(parse_ptxas_usage(text, "z"), None);
    }

    #[test]
    fn target_texts_of_one_module_have_one_body() {
        // Gyre's texts for every target differ only in `.version`/`.target`, so the
        // harness simulates one; a text that differs in more is a body of its own.
        let m = gyre_ir::parse_module(
            "kernel @k(ptr.global) {\nblock0(v0: ptr.global):\n    v1 = iconst.i32 7\n    store v1, v0\n    return\n}\n",
        )
        .unwrap();
        let texts: Vec<String> = Sm::ALL
            .iter()
            .map(|&sm| compile_module(&m, &CodegenOptions { sm }).unwrap())
            .collect();
        assert!(texts.iter().all(|t| ptx_body(t).eq(ptx_body(&texts[0]))));
        assert_ne!(texts[0], texts[1]);
        let other = texts[0].replace("st.global.u32", "st.global.b32");
        assert!(!ptx_body(&other).eq(ptx_body(&texts[0])));
    }

    #[test]
    fn ulp_distance() {
        let one = 1.0f32.to_bits() as u64;
        assert_eq!(ulps(one, one + 3, 32), Some(3));
        let neg = (-0.0f32).to_bits() as u64;
        assert_eq!(ulps(0, neg, 32), Some(0));
        assert_eq!(ulps(f32::NAN.to_bits() as u64, one, 32), None);
        let d = 1.0f64.to_bits();
        assert_eq!(ulps(d, d + 2, 64), Some(2));
    }

    #[test]
    fn closeness_of_buffers() {
        let bytes = |v: &[f32]| -> Vec<u8> { v.iter().flat_map(|x| x.to_le_bytes()).collect() };
        let a = bytes(&[1.0, 2.0]);
        let mut b = a.clone();
        b[0] ^= 1; // one ulp
        assert_eq!(
            close(&a, &b, None, true).map(|c| (c.words, c.max_ulp)),
            Ok((1, 1))
        );
        // Integer data: the same bits are an off-by-one.
        assert!(close(&a, &b, None, false).is_err());
        let nan = bytes(&[f32::NAN, 2.0]);
        let mut other_nan = nan.clone();
        other_nan[0] ^= 1;
        assert!(close(&nan, &other_nan, None, false).is_ok());
        let (zero, minus_zero) = (bytes(&[0.0]), bytes(&[-0.0]));
        assert!(close(&zero, &minus_zero, None, false).is_err());
        let c = bytes(&[1.0, 3.0]);
        assert!(close(&a, &c, None, true).unwrap_err().starts_with("[4]:"));
        let poison = vec![false, false, false, false, true, true, true, true];
        assert_eq!(
            close(&a, &c, Some(&poison), false),
            Ok(Closeness::default())
        );
        // Cancellation: far apart in ulps, close in absolute terms.
        let d = bytes(&[1e-7, 2.0]);
        let e = bytes(&[-2e-7, 2.0]);
        assert_eq!(close(&d, &e, None, true).map(|c| c.words), Ok(1));
        let f = bytes(&[1e-7, 2.001]);
        assert!(close(&d, &f, None, true).unwrap_err().starts_with("[4]:"));
    }

    const KERNEL: &str = r#"
target triple = "nvptx64-nvidia-cuda"
define void @k(float* %a, i32 %n) {
entry:
  %t = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %c = icmp slt i32 %t, %n
  br i1 %c, label %body, label %exit
body:
  %i = sext i32 %t to i64
  %p = getelementptr inbounds float, float* %a, i64 %i
  %v = load float, float* %p
  %w = fadd float %v, 1.0
  store float %w, float* %p
  br label %exit
exit:
  ret void
}
declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
!nvvm.annotations = !{!0}
!0 = !{void (float*, i32)* @k, !"kernel", i32 1}
"#;

    /// A kernel that prints its thread id and asserts `tid < n`.
    const PRINTS: &str = r#"
target triple = "nvptx64-nvidia-cuda"
@.f = internal unnamed_addr constant [6 x i8] c"t=%d\0A\00", align 1
@.m = internal unnamed_addr constant [6 x i8] c"t < n\00", align 1
define void @k(float* %a, i32 %n) {
entry:
  %b = alloca i32, align 4
  %t = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  store i32 %t, i32* %b, align 4
  %bp = bitcast i32* %b to i8*
  %r = call i32 @vprintf(i8* getelementptr inbounds ([6 x i8], [6 x i8]* @.f, i64 0, i64 0), i8* %bp)
  %c = icmp slt i32 %t, %n
  br i1 %c, label %exit, label %fail
fail:
  call void @__assertfail(i8* getelementptr inbounds ([6 x i8], [6 x i8]* @.m, i64 0, i64 0), i8* getelementptr inbounds ([6 x i8], [6 x i8]* @.m, i64 0, i64 0), i32 3, i8* getelementptr inbounds ([6 x i8], [6 x i8]* @.m, i64 0, i64 0), i64 1)
  br label %exit
exit:
  ret void
}
declare i32 @vprintf(i8*, i8*)
declare void @__assertfail(i8*, i8*, i32, i8*, i64)
declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
!nvvm.annotations = !{!0}
!0 = !{void (float*, i32)* @k, !"kernel", i32 1}
"#;

    #[test]
    fn printf_output_and_assertions_are_compared() {
        let m = gyre_llvm::import_module(PRINTS).expect("the test kernel imports");
        let plan = small_plan();
        let cases = cases(&m, &plan);
        // 64 threads, n = 32: every run prints and thread 32 fails the assertion.
        let (o, mems) = interp_stage(&m, &m, "k", &plan, &cases, &[]);
        assert!(o.passed(), "{o:?}");
        let run = mems[0].as_ref().expect("seed 0 is compared");
        assert!(run
            .assert
            .as_deref()
            .is_some_and(|a| a.contains("thread [32, 0, 0]")));
        assert!(printed(&run.mem).starts_with("t=0\nt=1\n"));
        // A different format, or a different assertion line, is found.
        let other = gyre_llvm::import_module(&PRINTS.replace("t=%d", "u=%d")).expect("imports");
        let (o, _) = interp_stage(&m, &other, "k", &plan, &cases, &[]);
        assert!(
            o.failure()
                .is_some_and(|r| r.contains("printf output differs")),
            "{o:?}"
        );
        let other = gyre_llvm::import_module(&PRINTS.replace("i32 3,", "i32 4,")).expect("imports");
        let (o, _) = interp_stage(&m, &other, "k", &plan, &cases, &[]);
        assert!(
            o.failure().is_some_and(|r| r.contains("-O output fails")),
            "{o:?}"
        );
        // Both PTX texts in ptx-sim against the interpreter: equal; a PTX text of the
        // other format differs.
        let opts = CodegenOptions { sm: Sm::Sm70 };
        let ptx = compile_module(&m, &opts).expect("compiles");
        let (o, _, _, _) = sim_stage(&ptx, Some(&ptx), "k", &plan, &cases, &[], &mems, false);
        assert!(o.passed(), "{o:?}");
        let other = gyre_llvm::import_module(&PRINTS.replace("t=%d", "u=%d")).expect("imports");
        let wrong = compile_module(&other, &opts).expect("compiles");
        let (o, _, _, _) = sim_stage(&wrong, None, "k", &plan, &cases, &[], &mems, false);
        assert!(
            o.failure().is_some_and(|r| r.contains("printf output")),
            "{o:?}"
        );
    }

    fn small_plan() -> Plan {
        let mut p = launches::default_plan("", "-");
        p.buffer_bytes = 256;
        p
    }

    fn cases(m: &Module, plan: &Plan) -> Vec<Case> {
        let fid = m.func_by_name("k").expect("the test kernel is there");
        let params = m.functions[fid].sig.params.clone();
        (0..2)
            .map(|s| launches::case(plan, &params, &[], s))
            .collect()
    }

    #[test]
    fn the_interpreter_stage_finds_a_changed_kernel() {
        let m = gyre_llvm::import_module(KERNEL).expect("the test kernel imports");
        let plan = small_plan();
        let cases = cases(&m, &plan);
        let (same, mems) = interp_stage(&m, &m, "k", &plan, &cases, &[]);
        assert!(same.passed(), "{same:?}");
        assert!(mems.iter().all(Option::is_some));
        let changed = gyre_llvm::import_module(&KERNEL.replace("fadd float %v", "fsub float %v"))
            .expect("the changed kernel imports");
        let (o, _) = interp_stage(&m, &changed, "k", &plan, &cases, &[]);
        assert!(
            o.failure().is_some_and(|r| r.contains("__corpus.arg0")),
            "{o:?}"
        );
    }

    #[test]
    fn an_input_that_faults_is_not_comparable() {
        let m = gyre_llvm::import_module(KERNEL).expect("the test kernel imports");
        let mut plan = small_plan();
        // 64 floats of buffer, 128 threads allowed in: the input reads past the end.
        plan.scalars = vec![(1, launches::Scalar::Int(128))];
        plan.block = [128, 1, 1];
        let cases = cases(&m, &plan);
        let (o, _) = interp_stage(&m, &m, "k", &plan, &cases, &[]);
        assert!(
            matches!(&o, Outcome::NotComparable(r) if r.contains("out of bounds")),
            "{o:?}"
        );
    }

    #[test]
    fn the_ptx_stage_finds_wrong_ptx() {
        let m = gyre_llvm::import_module(KERNEL).expect("the test kernel imports");
        let plan = small_plan();
        let cases = cases(&m, &plan);
        let (_, mems) = interp_stage(&m, &m, "k", &plan, &cases, &[]);
        let opts = CodegenOptions { sm: Sm::Sm70 };
        let ptx = compile_module(&m, &opts).expect("the test kernel compiles");
        let (o, _, _, steps) = sim_stage(&ptx, Some(&ptx), "k", &plan, &cases, &[], &mems, false);
        assert!(o.passed(), "{o:?}");
        // The same text on both sides executes the same number of instructions, and
        // its opcode classes add up to it.
        assert!(
            matches!(&steps, Some((g, Some(l))) if g.0 > 0 && g == l),
            "{steps:?}"
        );
        let (g, _) = steps.expect("measured");
        assert_eq!(g.1.iter().map(|(_, n)| n).sum::<u64>(), g.0);
        assert!(g.1.iter().any(|(op, _)| op == "add"), "{:?}", g.1);
        let changed =
            gyre_llvm::import_module(&KERNEL.replace("fadd float %v, 1.0", "fadd float %v, 2.0"))
                .expect("the changed kernel imports");
        let wrong = compile_module(&changed, &opts).expect("the changed kernel compiles");
        // Wrong against the interpreter...
        let (o, _, _, _) = sim_stage(&wrong, None, "k", &plan, &cases, &[], &mems, false);
        assert!(
            o.failure()
                .is_some_and(|r| r.contains("interpreter vs Gyre's PTX")),
            "{o:?}"
        );
        // ...and against another compiler's PTX, when the interpreter could not run.
        let none = vec![None; cases.len()];
        let (o, _, _, _) = sim_stage(&ptx, Some(&wrong), "k", &plan, &cases, &[], &none, false);
        assert!(
            matches!(&o, Outcome::NotComparable(_)),
            "without interpreter runs nothing is compared: {o:?}"
        );
        let (o, _, _, _) = sim_stage(&wrong, Some(&ptx), "k", &plan, &cases, &[], &mems, false);
        assert!(o.failure().is_some(), "{o:?}");
    }

    const GLOBALS: &str = r#"
target triple = "nvptx64-nvidia-cuda"
@g = dso_local addrspace(1) externally_initialized global i32 0, align 4
@cnt = dso_local addrspace(1) global i32 0, align 4
define void @k(i32* %out) {
entry:
  %v = load i32, i32 addrspace(1)* @g, align 4
  store i32 %v, i32* %out, align 4
  %w = add i32 %v, 1
  store i32 %w, i32 addrspace(1)* @cnt, align 4
  ret void
}
!nvvm.annotations = !{!0}
!0 = !{void (i32*)* @k, !"kernel", i32 1}
"#;

    #[test]
    fn host_filled_and_device_globals_are_inputs_and_outputs() {
        let m = gyre_llvm::import_module(GLOBALS).expect("the test kernel imports");
        let host = host_globals(GLOBALS, &m);
        let flags: Vec<(&str, bool)> = host.iter().map(|g| (g.name.as_str(), g.filled)).collect();
        assert_eq!(flags, vec![("g", true), ("cnt", false)]);
        let mut plan = small_plan();
        plan.grid = [1, 1, 1];
        plan.block = [1, 1, 1];
        let cases = cases(&m, &plan);
        let (o, mems) = interp_stage(&m, &m, "k", &plan, &cases, &host);
        assert!(o.passed(), "{o:?}");
        // The kernel copied the random host contents of @g.
        let contents = host_contents(&host, 0);
        let mem = &mems[0].as_ref().expect("seed 0 ran").mem;
        assert_eq!(
            &mem.bytes("__corpus.arg0").expect("the buffer")[..4],
            &contents[0][..]
        );
        let opts = CodegenOptions { sm: Sm::Sm70 };
        let ptx = compile_module(&m, &opts).expect("the test kernel compiles");
        let (o, _, _, _) = sim_stage(&ptx, None, "k", &plan, &cases, &host, &mems, false);
        assert!(o.passed(), "{o:?}");
        // A wrong value left in @cnt is found.
        let changed = gyre_llvm::import_module(&GLOBALS.replace("add i32 %v, 1", "add i32 %v, 2"))
            .expect("the changed kernel imports");
        let wrong = compile_module(&changed, &opts).expect("the changed kernel compiles");
        let (o, _, _, _) = sim_stage(&wrong, None, "k", &plan, &cases, &host, &mems, false);
        assert!(o.failure().is_some_and(|r| r.contains("cnt")), "{o:?}");
    }

    #[test]
    fn externally_initialized_globals_are_found() {
        let src = "@a = dso_local addrspace(4) externally_initialized global i32 0, align 4\n\
                   @b = dso_local addrspace(1) global i32 0\n\
                   @\"c.d\" = addrspace(1) externally_initialized global float 0.0\n";
        assert_eq!(externally_initialized(src), vec!["a", "c.d"]);
        assert_eq!(llc_name("c.d"), "c_$_d");
    }
}
