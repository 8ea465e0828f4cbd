//! `report`: every measurement of `cargo xtask perf`, written to docs/perf.md with SVG
//! plots in docs/perf/ (see perf/README.md).
//!
//! Usage: `report [--quick] [--family NAME]... [--reps N] [--limit S] [--mem-gib G]
//! [--gyre PATH] [--quality-json PATH] [--examples-json PATH] [--no-llvm] [--no-analyses] [--out FILE]
//! [--svg-dir DIR] [--max-blocks FAMILY=N] [sizes...]`.

use gyre_perf::kernels;
use gyre_perf::plot::{ratio_bars, speed_plot, Series};
use gyre_perf::process::{measure, Outcome};
use gyre_perf::quality::{self, Figures, KernelQuality};
use gyre_perf::report::{ns_per_block, render, Report};
use gyre_perf::speed::{self, Settings, SpeedRow};
use gyre_transforms::DEFAULT_PIPELINE;
use indicatif::{ProgressBar, ProgressStyle};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

struct Args {
    quick: bool,
    families: Vec<String>,
    sizes: Vec<usize>,
    reps: Option<usize>,
    limit: Option<f64>,
    mem_gib: u64,
    gyre: Option<PathBuf>,
    quality_json: Option<PathBuf>,
    /// The examples' figures from `cargo xtask perf` (`--examples-json`).
    examples_json: Option<PathBuf>,
    llvm: bool,
    analyses: bool,
    out: PathBuf,
    svg_dir: PathBuf,
    /// Largest size per family (`--max-blocks FAMILY=N`).
    caps: Vec<(String, usize)>,
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("perf/ has a parent")
        .to_path_buf()
}

fn parse_args() -> Result<Args, String> {
    let mut a = Args {
        quick: false,
        families: Vec::new(),
        sizes: Vec::new(),
        reps: None,
        limit: None,
        mem_gib: 8,
        gyre: None,
        quality_json: None,
        examples_json: None,
        llvm: true,
        analyses: true,
        // Set after the arguments: a `--quick` run must not overwrite the full report.
        out: PathBuf::new(),
        svg_dir: PathBuf::new(),
        // No cap by default: every family runs at every size; where Gyre's in-process
        // phases would run past the limit, only its process is measured (see `run`).
        caps: Vec::new(),
    };
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        let mut val = |what: &str| it.next().ok_or(format!("{arg} needs {what}"));
        match arg.as_str() {
            "--quick" => a.quick = true,
            "--family" => a.families.push(val("a family")?),
            "--reps" => a.reps = Some(val("N")?.parse().map_err(|_| "--reps N")?),
            "--limit" => a.limit = Some(val("S")?.parse().map_err(|_| "--limit S")?),
            "--mem-gib" => a.mem_gib = val("G")?.parse().map_err(|_| "--mem-gib G")?,
            "--gyre" => a.gyre = Some(val("a path")?.into()),
            "--quality-json" => a.quality_json = Some(val("a path")?.into()),
            "--examples-json" => a.examples_json = Some(val("a path")?.into()),
            "--no-llvm" => a.llvm = false,
            "--no-analyses" => a.analyses = false,
            "--out" => a.out = val("a path")?.into(),
            "--svg-dir" => a.svg_dir = val("a path")?.into(),
            "--max-blocks" => {
                let v = val("FAMILY=N")?;
                let (f, n) = v.split_once('=').ok_or("--max-blocks FAMILY=N")?;
                let n: usize = n.parse().map_err(|_| "--max-blocks FAMILY=N")?;
                a.caps.retain(|(g, _)| g != f);
                a.caps.push((f.to_string(), n));
            }
            "--help" | "-h" => {
                println!("report [--quick] [--family nest|deep|random|exit-ladder]... [--reps N] [--limit S] [--mem-gib G] [--gyre PATH] [--quality-json PATH] [--examples-json PATH] [--no-llvm] [--no-analyses] [--out FILE] [--svg-dir DIR] [--max-blocks FAMILY=N] [sizes...]");
                std::process::exit(0);
            }
            s => a
                .sizes
                .push(s.parse().map_err(|_| format!("unknown argument `{s}`"))?),
        }
    }
    // docs/perf.md is the full report; a quick run goes to target/perf-quick/.
    let dir = if a.quick {
        root().join("target/perf-quick")
    } else {
        root().join("docs")
    };
    if a.out.as_os_str().is_empty() {
        a.out = dir.join("perf.md");
    }
    if a.svg_dir.as_os_str().is_empty() {
        a.svg_dir = a.out.parent().unwrap_or(&dir).join("perf");
    }
    for f in &a.families {
        if !kernels::FAMILIES.contains(&f.as_str()) {
            return Err(format!("unknown family `{f}`"));
        }
    }
    Ok(a)
}

/// The first line of `program args`' standard output (or error), if it runs.
fn first_line(program: &str, args: &[&str]) -> Option<String> {
    let out = Command::new(program).args(args).output().ok()?;
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    text.lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .map(str::to_string)
}

fn read_field(path: &str, key: &str) -> Option<String> {
    let text = std::fs::read_to_string(path).ok()?;
    text.lines()
        .find(|l| l.starts_with(key))
        .and_then(|l| l.split_once(':'))
        .map(|(_, v)| v.trim().to_string())
}

fn loadavg() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "?".into())
}

/// An LLVM 14 tool: `name-14`, then `name`.
fn find_tool(name: &str) -> Option<PathBuf> {
    [format!("{name}-14"), name.to_string()]
        .into_iter()
        .find(|p| {
            first_line(p, &["--version"]).is_some_and(|_| {
                Command::new(p)
                    .arg("--version")
                    .output()
                    .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).contains("LLVM version 14."))
            })
        })
        .map(PathBuf::from)
}

fn find_ptxas() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("GYRE_PTXAS") {
        return Some(p.into());
    }
    let lib = root().join(".tools/venv/lib");
    std::fs::read_dir(lib).ok()?.flatten().find_map(|e| {
        let p = e.path().join("site-packages/nvidia/cuda_nvcc/bin/ptxas");
        p.is_file().then_some(p)
    })
}

/// Registers (the largest over entries) and spill bytes (summed) from `ptxas -v`.
fn ptxas_figures(ptxas: &Path, ptx: &Path) -> Option<(u64, u64)> {
    let out = Command::new(ptxas)
        .args(["-v", "--gpu-name", "sm_70", "-o", "/dev/null"])
        .arg(ptx)
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    let text = String::from_utf8_lossy(&out.stderr);
    let (mut regs, mut spill) = (0, 0);
    for l in text.lines() {
        if let Some(i) = l.find("Used ") {
            if let Some(n) = l[i + 5..]
                .split_whitespace()
                .next()
                .and_then(|n| n.parse().ok())
            {
                regs = regs.max(n);
            }
        }
        // "0 bytes spill stores, 0 bytes spill loads"
        let toks: Vec<&str> = l.split_whitespace().collect();
        for w in toks.windows(3) {
            if w[1] == "bytes" && w[2] == "spill" {
                spill += w[0].parse::<u64>().unwrap_or(0);
            }
        }
    }
    Some((regs, spill))
}

/// Small generated kernels in the quality table.
const GENERATED: u64 = 8;

/// Static counts (and `ptxas -v` figures) of examples/ (unless `with_examples` is false:
/// `--examples-json` gives them) and small generated kernels, Gyre `-O` against
/// `opt -O2` + `llc -O2 -mcpu=sm_70` on the unoptimized module; the generated kernels'
/// dynamic counts from ptx-sim on the generator's random inputs (see [`gyre_perf::sim`]),
/// or a note saying why there is none.
fn local_quality(
    opt: &Path,
    llc: &Path,
    ptxas: Option<&Path>,
    scratch: &Path,
    with_examples: bool,
    notes: &mut Vec<String>,
) -> Vec<KernelQuality> {
    type Contract = gyre_ir::generate::KernelContract;
    let mut mods: Vec<(String, gyre_ir::Module, Option<Contract>)> = Vec::new();
    let mut files: Vec<PathBuf> = std::fs::read_dir(root().join("examples"))
        .map(|d| d.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    files.sort();
    if !with_examples {
        files.clear();
    }
    for f in files {
        let name = f
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned();
        let Ok(src) = std::fs::read_to_string(&f) else {
            continue;
        };
        let m = if name.ends_with(".gir") {
            gyre_ir::parse_module(&src).ok()
        } else if name.ends_with(&format!(".{}", gyre_toyc::EXTENSION)) {
            gyre_toyc::compile(&name, &src).ok()
        } else {
            continue;
        };
        if let Some(m) = m {
            mods.push((name, m, None));
        }
    }
    for seed in 1..=GENERATED {
        let opts = gyre_ir::generate::GenOptions {
            target_blocks: Some(30),
            allow_calls: false,
            allow_irreducible: false,
            ..Default::default()
        };
        let (m, contract) = gyre_ir::generate::generate_kernel_module(
            &opts,
            &mut gyre_ir::generate::SplitMix64::new(seed),
        );
        mods.push((format!("generated seed {seed}"), m, Some(contract)));
    }
    let sm = gyre_codegen_lite::Sm::from_number(70).expect("sm_70");
    let mut out = Vec::new();
    for (name, m, contract) in mods {
        let mut g = m.clone();
        let mut pm = match gyre_transforms::PassManager::from_pipeline(
            DEFAULT_PIPELINE,
            gyre_transforms::Knobs::default(),
            gyre_transforms::Options::default(),
        ) {
            Ok(pm) => pm,
            Err(_) => continue,
        };
        if pm.run_module(&mut g).is_err() {
            continue;
        }
        let Ok(gptx) =
            gyre_codegen_lite::compile_module(&g, &gyre_codegen_lite::CodegenOptions { sm })
        else {
            continue;
        };
        let ll = scratch.join("q.ll");
        let bc = scratch.join("q.bc");
        let lptx = scratch.join("q.llc.ptx");
        let gptx_path = scratch.join("q.gyre.ptx");
        let text = gyre_llvm::export_module(&m, &gyre_llvm::ExportOptions::default());
        if std::fs::write(&ll, text).is_err() || std::fs::write(&gptx_path, &gptx).is_err() {
            continue;
        }
        let (ll_s, bc_s, lptx_s) = (
            ll.to_string_lossy().into_owned(),
            bc.to_string_lossy().into_owned(),
            lptx.to_string_lossy().into_owned(),
        );
        let (o, _) = measure(opt, &["-O2", &ll_s, "-o", &bc_s], None, 60.0, 4, scratch);
        if o.wall().is_none() {
            continue;
        }
        let (l, _) = measure(
            llc,
            &["-O2", "-march=nvptx64", "-mcpu=sm_70", &bc_s, "-o", &lptx_s],
            None,
            60.0,
            4,
            scratch,
        );
        if l.wall().is_none() {
            continue;
        }
        let Ok(lptx_text) = std::fs::read_to_string(&lptx) else {
            continue;
        };
        let dynamic = contract.map(|c| {
            gyre_perf::sim::generated_dynamic(&m, &c, 0, &gptx, &lptx_text)
                .map_err(|e| notes.push(format!("`{name}`: no dynamic counts: {e}")))
                .ok()
        });
        let (gd, ld) = dynamic.flatten().unzip();
        let figs = |text: &str, path: &Path, dynamic: Option<u64>| {
            let p = ptxas.and_then(|p| ptxas_figures(p, path));
            Figures {
                static_insts: quality::static_count(text),
                dynamic,
                regs: p.map(|p| p.0),
                spill_bytes: p.map(|p| p.1),
            }
        };
        out.push(KernelQuality {
            gyre: Some(figs(&gptx, &gptx_path, gd)),
            llvm: Some(figs(&lptx_text, &lptx, ld)),
            excess: None,
            reason: None,
            kernel: name,
        });
    }
    out
}

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("report: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run() -> Result<(), String> {
    let a = parse_args()?;
    let sizes = if !a.sizes.is_empty() {
        a.sizes.clone()
    } else if a.quick {
        vec![1_000, 10_000]
    } else {
        vec![1_000, 10_000, 100_000, 1_000_000]
    };
    let families: Vec<&str> = kernels::FAMILIES
        .iter()
        .copied()
        .filter(|f| a.families.is_empty() || a.families.iter().any(|g| g == f))
        .collect();
    // `--quick` stays under two minutes on the loaded 2-core machine: LLVM's runs are
    // cut at 3 s (most of them time out at 1k-10k blocks anyway).
    let limit = a.limit.unwrap_or(if a.quick { 3.0 } else { 120.0 });
    // The median of 3 or 7 shrugs off one (three) runs slowed by the other builds.
    let reps = a.reps.unwrap_or(if a.quick { 3 } else { 7 });
    let scratch = std::env::temp_dir().join(format!("gyre-perf-report-{}", std::process::id()));
    std::fs::create_dir_all(&scratch).map_err(|e| e.to_string())?;
    let llvm = if a.llvm {
        find_tool("opt").zip(find_tool("llc"))
    } else {
        None
    };
    let settings = Settings {
        reps,
        limit,
        mem_gib: a.mem_gib,
        llvm: llvm.clone(),
        gyre: a.gyre.clone(),
        scratch: scratch.clone(),
    };
    let load_start = loadavg();
    let mut report = Report {
        quick: a.quick,
        date: first_line("date", &["-u", "+%Y-%m-%d %H:%M UTC"]).unwrap_or_default(),
        pipeline: DEFAULT_PIPELINE.to_string(),
        passes: speed::pipeline_passes(DEFAULT_PIPELINE)?,
        llvm_pipeline: speed::llvm_pipeline(DEFAULT_PIPELINE)?,
        limit,
        mem_gib: a.mem_gib,
        corpus_quality: Err("no quality JSON given (`cargo xtask perf` passes `cargo xtask corpus --quality-json`'s file when that option exists; or `--quality-json FILE`)".into()),
        ..Report::default()
    };
    let steps = families.len() * sizes.len() * 4 + 2;
    let pb = ProgressBar::new(steps as u64);
    pb.set_style(
        ProgressStyle::with_template("{elapsed_precise} [{bar:30}] {pos}/{len} {msg}")
            .map_err(|e| e.to_string())?
            .progress_chars("=> "),
    );
    // Each step's start on standard error too (above the bar), so a log says where the
    // time went.
    let started = std::time::Instant::now();
    let step = |pb: &ProgressBar, msg: String| {
        pb.suspend(|| eprintln!("[{:7.1} s] {msg}", started.elapsed().as_secs_f64()));
        pb.set_message(msg);
    };
    // The CFG analyses beside Cranelift: the `analyses` binary next to this one.
    if a.analyses {
        step(&pb, "analyses vs Cranelift".into());
        let exe = std::env::current_exe()
            .map_err(|e| e.to_string())?
            .with_file_name("analyses");
        let mut args: Vec<String> = vec!["--no-llvm".into()];
        if a.quick {
            args.extend(["--reps".into(), "20".into()]);
        }
        args.extend(sizes.iter().map(|s| s.to_string()));
        report.analyses_md = Some(
            Command::new(&exe)
                .args(&args)
                .output()
                .map_err(|e| format!("cannot run {}: {e}", exe.display()))
                .and_then(|o| {
                    if o.status.success() {
                        Ok(String::from_utf8_lossy(&o.stdout).into_owned())
                    } else {
                        Err(String::from_utf8_lossy(&o.stderr).into_owned())
                    }
                }),
        );
    }
    pb.inc(1);
    // Compile speed.
    for &fam in &families {
        // LLVM's larger sizes are skipped once a smaller one timed out or crashed.
        let (mut rows_dead, mut procs_dead) = (false, false);
        // (blocks, seconds of one run of every in-process phase) of the last size
        // measured in-process: the next size's estimate, linear in blocks.
        let mut last_in_process: Option<(usize, f64)> = None;
        for &n in &sizes {
            if let Some((_, cap)) = a.caps.iter().find(|(f, c)| f == fam && n > *c) {
                report.notes.push(format!(
                    "`{fam}` at {n} blocks: left out (`--max-blocks {fam}={cap}`: its `.ll` file and Gyre's in-memory module would need more memory than this shared machine has to spare)."
                ));
                pb.inc(4);
                continue;
            }
            step(&pb, format!("{fam} {n}: Gyre in-process"));
            let m = kernels::build(fam, n)?;
            let ll = gyre_llvm::export_module(&m, &gyre_llvm::ExportOptions::default());
            let file = scratch.join(format!("{fam}-{n}.ll"));
            std::fs::write(&file, &ll).map_err(|e| e.to_string())?;
            let blocks = kernels::blocks(&m);
            // The phases are timed without a limit in this process, so a size whose
            // linear estimate exceeds the limit gets its process row only (which is
            // limited: the 1M-block target is still measured).
            let estimate = last_in_process.map(|(b, t)| t * blocks as f64 / b.max(1) as f64);
            let gyre = match estimate {
                Some(e) if e > limit => {
                    let (b, t) = last_in_process.unwrap_or_default();
                    report.notes.push(format!(
                        "`{fam}` at {blocks} blocks: Gyre's in-process phases not measured: one run of them took {t:.1} s at {b} blocks, so about {e:.0} s here even if linear, over the {limit:.0} s limit; `gyre compile -O` is measured as a process (under the limit)."
                    ));
                    Vec::new()
                }
                _ => {
                    let g = speed::gyre_in_process(&ll, reps)
                        .map_err(|e| format!("{fam} {n}: Gyre: {e}"))?;
                    // The per-pass rows are inside `-O total`.
                    let one_run: f64 = g
                        .iter()
                        .filter(|(p, _)| !report.passes.contains(p))
                        .map(|(_, t)| t)
                        .sum();
                    last_in_process = Some((blocks, one_run));
                    g
                }
            };
            let mut row = SpeedRow {
                family: fam.to_string(),
                target: n,
                blocks,
                insts: kernels::insts(&m),
                ll_bytes: ll.len(),
                gyre,
                gyre_process: Outcome::Skipped,
                llvm: Vec::new(),
                llvm_rows: Outcome::Skipped,
                opt: Outcome::Skipped,
                llc: Outcome::Skipped,
            };
            drop((m, ll));
            pb.inc(1);
            step(&pb, format!("{fam} {n}: gyre compile -O"));
            if let Some(g) = &settings.gyre {
                row.gyre_process = speed::gyre_process(g, &file, &settings);
            }
            pb.inc(1);
            if let Some((opt, llc)) = &settings.llvm {
                step(&pb, format!("{fam} {n}: opt -time-passes"));
                if !rows_dead {
                    let (rows, o) = speed::llvm_rows(opt, &file, &settings);
                    rows_dead = !matches!(o, Outcome::Ok { .. });
                    row.llvm = rows;
                    row.llvm_rows = o;
                }
                pb.inc(1);
                step(&pb, format!("{fam} {n}: opt -O2 + llc"));
                if !procs_dead {
                    let (o, l) = speed::llvm_processes(opt, llc, &file, &settings);
                    procs_dead = o.wall().is_none() || l.wall().is_none();
                    row.opt = o;
                    row.llc = l;
                }
                pb.inc(1);
            } else {
                pb.inc(2);
            }
            let _ = std::fs::remove_file(&file);
            report.speed.push(row);
        }
    }
    // Quality.
    step(&pb, "code quality".into());
    // The examples' figures from `cargo xtask perf` (which has their launches), or
    // static counts only.
    let examples = a.examples_json.as_ref().map(|p| {
        std::fs::read_to_string(p)
            .map_err(|e| format!("cannot read {}: {e}", p.display()))
            .and_then(|t| Ok((quality::parse_quality_json(&t)?, quality::parse_notes(&t))))
    });
    let mut notes = Vec::new();
    let examples = match examples {
        Some(Ok((ks, ns))) => {
            notes.extend(ns.into_iter().map(|(k, n)| format!("`{k}`: {n}")));
            Some(ks)
        }
        Some(Err(e)) => {
            notes.push(format!("the examples' JSON: {e}; static counts only"));
            None
        }
        None => {
            notes.push("examples: static counts only (`cargo xtask perf` passes their dynamic counts with `--examples-json`)".into());
            None
        }
    };
    if let Some((opt, llc)) = &settings.llvm {
        let ptxas = find_ptxas();
        let local = local_quality(
            opt,
            llc,
            ptxas.as_deref(),
            &scratch,
            examples.is_none(),
            &mut notes,
        );
        report.local_quality = examples.unwrap_or_default();
        report.local_quality.extend(local);
    }
    report.local_notes = notes;
    if let Some(p) = &a.quality_json {
        report.corpus_quality = std::fs::read_to_string(p)
            .map_err(|e| format!("cannot read {}: {e}", p.display()))
            .and_then(|t| quality::parse_quality_json(&t));
    }
    pb.inc(1);
    pb.finish_and_clear();
    eprintln!("[{:7.1} s] measured", started.elapsed().as_secs_f64());
    // Machine and versions.
    let cpu = read_field("/proc/cpuinfo", "model name").unwrap_or_else(|| "?".into());
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    let mem = read_field("/proc/meminfo", "MemTotal")
        .and_then(|m| m.trim_end_matches("kB").trim().parse::<f64>().ok())
        .map_or("?".into(), |kb| {
            format!("{:.1} GiB", kb / (1024.0 * 1024.0))
        });
    let git = first_line(
        "git",
        &[
            "-C",
            &root().to_string_lossy(),
            "rev-parse",
            "--short",
            "HEAD",
        ],
    )
    .unwrap_or_default();
    let dirty = Command::new("git")
        .args([
            "-C",
            &root().to_string_lossy(),
            "status",
            "--porcelain",
            "--untracked-files=no",
        ])
        .output()
        .is_ok_and(|o| !o.stdout.is_empty());
    report.machine = vec![
        ("CPU".into(), format!("{cpu}, {cores} cores")),
        ("memory".into(), mem),
        (
            "load average (1, 5, 15 min)".into(),
            format!("{load_start} at the start, {} at the end", loadavg()),
        ),
        (
            "OS".into(),
            first_line("uname", &["-sr"]).unwrap_or_default(),
        ),
        (
            "rustc".into(),
            first_line("rustc", &["-V"]).unwrap_or_default(),
        ),
        (
            "LLVM".into(),
            match &llvm {
                Some((o, l)) => format!(
                    "`{}` {}, `{}`",
                    o.display(),
                    first_line(&o.to_string_lossy(), &["--version"])
                        .and_then(|_| {
                            Command::new(o)
                                .arg("--version")
                                .output()
                                .ok()
                                .and_then(|x| {
                                    String::from_utf8_lossy(&x.stdout)
                                        .lines()
                                        .find(|l| l.contains("LLVM version"))
                                        .map(|l| l.trim().to_string())
                                })
                        })
                        .unwrap_or_default(),
                    l.display()
                ),
                None => "not used".into(),
            },
        ),
        (
            "Cranelift".into(),
            "cranelift-codegen 0.135.8 (perf/Cargo.toml)".into(),
        ),
        (
            "Gyre".into(),
            format!(
                "{git}{}",
                if dirty {
                    " with uncommitted changes"
                } else {
                    ""
                }
            ),
        ),
        (
            "GPU".into(),
            "none used by this report: its quality figures are instruction counts (ptx-sim, \
             ptxas); run times on a GPU are in docs/gpu.md (`cargo xtask gpu-table`)"
                .into(),
        ),
    ];
    // Plots.
    std::fs::create_dir_all(&a.svg_dir).map_err(|e| e.to_string())?;
    // Plot links relative to the markdown file when the plots are beside it.
    let svg_rel = a
        .out
        .parent()
        .and_then(|d| a.svg_dir.strip_prefix(d).ok())
        .map(Path::to_path_buf)
        .unwrap_or_else(|| a.svg_dir.clone());
    let rel = |name: &str| svg_rel.join(name).to_string_lossy().into_owned();
    for fam in &families {
        let rows: Vec<&SpeedRow> = report.speed.iter().filter(|r| r.family == *fam).collect();
        let mut series = Vec::new();
        let mut phases: Vec<String> = vec![speed::IMPORT.into(), "verify".into()];
        phases.extend(report.passes.iter().cloned());
        phases.push(speed::O_TOTAL.into());
        phases.push(speed::EMIT.into());
        for p in &phases {
            let pts: Vec<(f64, f64)> = rows
                .iter()
                .filter_map(|r| Some((r.blocks as f64, ns_per_block(r.gyre_s(p)?, r.blocks))))
                .collect();
            series.push(Series {
                label: format!("Gyre {p}"),
                points: pts,
                llvm: false,
            });
        }
        let pts: Vec<(f64, f64)> = rows
            .iter()
            .filter_map(|r| Some((r.blocks as f64, ns_per_block(r.llvm_total()?, r.blocks))))
            .collect();
        series.push(Series {
            label: "LLVM opt -O2 + llc (processes)".into(),
            points: pts,
            llvm: true,
        });
        let pts: Vec<(f64, f64)> = rows
            .iter()
            .filter_map(|r| {
                Some((
                    r.blocks as f64,
                    ns_per_block(r.llvm_s(speed::O_TOTAL)?, r.blocks),
                ))
            })
            .collect();
        series.push(Series {
            label: "LLVM matching -O pipeline".into(),
            points: pts,
            llvm: true,
        });
        let name = format!("speed-{fam}.svg");
        let title = format!("{fam}: ns/block against blocks (log-log)");
        if speed_plot(&a.svg_dir.join(&name), &title, &series).is_ok() {
            report.plots.push((title, rel(&name)));
        }
    }
    let static_bars = |ks: &[KernelQuality]| -> Vec<(String, f64)> {
        ks.iter()
            .filter_map(|k| {
                let (g, l) = k.both()?;
                (l.static_insts > 0).then(|| {
                    (
                        k.kernel.clone(),
                        g.static_insts as f64 / l.static_insts as f64,
                    )
                })
            })
            .collect()
    };
    let dynamic_bars = |ks: &[KernelQuality]| -> Vec<(String, f64)> {
        ks.iter()
            .filter_map(|k| {
                let (g, l) = k.both()?;
                Some((
                    k.kernel.clone(),
                    g.dynamic? as f64 / l.dynamic?.max(1) as f64,
                ))
            })
            .collect()
    };
    let mut charts = vec![
        (
            static_bars(&report.local_quality),
            "quality-examples.svg",
            "Static PTX instructions, Gyre / LLVM: examples and generated kernels",
        ),
        (
            dynamic_bars(&report.local_quality),
            "quality-examples-dynamic.svg",
            "Dynamic PTX instructions (ptx-sim), Gyre / LLVM: examples and generated kernels",
        ),
    ];
    if let Ok(ks) = &report.corpus_quality {
        charts.push((
            static_bars(ks),
            "quality-corpus.svg",
            "Static PTX instructions, Gyre / LLVM: corpus",
        ));
        charts.push((
            dynamic_bars(ks),
            "quality-corpus-dynamic.svg",
            "Dynamic PTX instructions (ptx-sim), Gyre / LLVM: corpus",
        ));
    }
    for (bars, name, title) in charts {
        if !bars.is_empty() && ratio_bars(&a.svg_dir.join(name), title, &bars).is_ok() {
            report.plots.push((title.to_string(), rel(name)));
        }
    }
    let md = render(&report);
    std::fs::write(&a.out, &md).map_err(|e| format!("cannot write {}: {e}", a.out.display()))?;
    let _ = std::fs::remove_dir_all(&scratch);
    eprintln!(
        "wrote {} and {} plot(s) in {}",
        a.out.display(),
        report.plots.len(),
        a.svg_dir.display()
    );
    Ok(())
}
