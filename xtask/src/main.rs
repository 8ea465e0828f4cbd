//! Project automation: `cargo xtask <task>`.
//!
//! - `test`: everything CI checks: installs NVIDIA's `ptxas` into `.tools/` when it is
//!   missing, then formatting, clippy with warnings denied, the whole workspace's tests
//!   (with `GYRE_PTXAS` pointing at ptxas and `GYRE_REQUIRE_TOOLS=1`, so a test that
//!   cannot find ptxas or LLVM 14 fails instead of skipping), and the fuzz crate's seed
//!   corpus; then `downstream`.
//! - `downstream`: a fresh crate depending on the library crates by path resolves its
//!   dependencies without the workspace's lockfile and must build within the declared
//!   `rust-version` (see `xtask::downstream`).
//! - `bless`: run the filetests with `GYRE_BLESS=1`, rewriting the expected output of
//!   precise-output tests in place (see docs/filetests.md).
//! - `ptxas`: only install ptxas and print its path.
//! - `conformance [--quick] [--scev] [--write-doc]`: run Gyre's loop passes on LLVM's own
//!   regression tests and compare with LLVM 14 `opt` (see `xtask::conformance`);
//!   `--write-doc` writes docs/conformance.md (and docs/scev-conformance.md). Fails when
//!   a target is missed. `--scev` runs only the scalar-evolution stage (backedge-taken
//!   counts against LLVM's `print<scalar-evolution>` on both corpora).
//! - `corpus [--write-doc] [--quality-json FILE] [--runs N] [FILE...]`: real CUDA
//!   kernels end to end (import, verify, `-O` with verify-each, PTX through ptxas,
//!   interpreter before/after, llc and ptx-sim; see `xtask::corpus`); `--write-doc`
//!   writes docs/corpus.md, `--quality-json` the PTX-quality rows (Gyre vs LLVM) as
//!   JSON; docs/quality-reasons.tsv gives the reason column of the quality table, and a
//!   kernel above 1.25 without a reason is a warning. Fails when a target is missed.
//! - `perf passes [args...]`: time Gyre's loop passes against LLVM 14's (`perf/`, the
//!   `passes` binary);
//! - `perf analyses [args...]`: time Gyre's CFG, dominator tree and loops against
//!   Cranelift's and LLVM 14's on the same CFGs (the separate `perf/` workspace; `perf
//!   analyses --help` for the arguments, which are passed through);
//! - `perf [--quick] [args...]`: the whole report (the `report` binary): builds `gyre`,
//!   takes the corpus quality JSON (`cargo xtask corpus --quality-json`, not with
//!   `--quick`), runs every measurement and rewrites docs/perf.md and docs/perf/*.svg.
//! - `gpu-table [--write-doc] [--llc-ptx DIR] [--fp-contract off|on|fast]`: every example and corpus kernel Gyre
//!   compiles, Gyre's PTX and `opt -O2 | llc -O2` PTX run on the GPU, compared with the
//!   interpreter and timed (see `xtask::gpu_table`); `--write-doc` writes docs/gpu.md.
//!   Without a GPU the GPU columns say "not yet measured". `--llc-ptx DIR` reads llc's
//!   PTX from what `gpu-table --save-llc-ptx DIR --sm N` wrote on a machine with LLVM 14
//!   (GPU machines may have no LLVM).
//! - `fuzz <target|all|list> [--minutes N] [--cpu-minutes C] [--jobs J] [--seed S] [--shrink-seconds K] [--hang-seconds H] [--in-process]`:
//!   a fuzzing campaign on the stable toolchain (the `campaign` binary of the separate
//!   `fuzz/` workspace, built with optimizations, debug assertions and overflow checks);
//!   shrunk failures go to fuzz/regressions/<target>/ (see docs/fuzzing.md).

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

/// The PyPI package that ships `ptxas` (it assembles PTX without a GPU).
const PTXAS_PACKAGE: &str = "nvidia-cuda-nvcc-cu12";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("test") => test(),
        Some("bless") => bless(),
        Some("ptxas") => find_or_install_ptxas().map(|p| match p {
            Some(p) => println!("{}", p.display()),
            None => println!("ptxas not available"),
        }),
        Some("conformance") => conformance(&args[1..]),
        Some("corpus") => corpus(&args[1..]),
        Some("perf") => perf(&args[1..]),
        Some("downstream") => downstream(),
        Some("gpu-table") => gpu_table(&args[1..]),
        Some("fuzz") => fuzz(&args[1..]),
        _ => {
            eprintln!(
                "usage: cargo xtask <test|bless|ptxas|downstream|conformance [--quick] [--scev] [--write-doc]|corpus [--write-doc] [--quality-json FILE] [--runs N] [FILE...]|perf [--quick] [args...]|perf analyses|passes [args...]|gpu-table [--write-doc] [--llc-ptx DIR] [--fp-contract off|on|fast] | --save-llc-ptx DIR --sm N|fuzz <target|all|list> [--minutes N] [--jobs J] [--seed S]>"
            );
            return ExitCode::from(2);
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("xtask: {e}");
            ExitCode::FAILURE
        }
    }
}

/// The workspace root (the parent of this crate's directory).
/// The workspace root: the one xtask was built in, or, when that is not here (an xtask
/// binary copied to a GPU machine for `gpu-table`), the current directory.
fn root() -> PathBuf {
    let built = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask lives one level below the workspace root")
        .to_path_buf();
    if built.join("Cargo.toml").is_file() {
        built
    } else {
        std::env::current_dir().unwrap_or(built)
    }
}

fn run(dir: &Path, program: &str, args: &[&str], envs: &[(&str, &OsStr)]) -> Result<(), String> {
    eprintln!("xtask: running `{program} {}`", args.join(" "));
    let mut cmd = Command::new(program);
    cmd.args(args).current_dir(dir);
    for (k, v) in envs {
        cmd.env(k, v);
    }
    let status = cmd
        .status()
        .map_err(|e| format!("cannot start {program}: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("`{program} {}` failed ({status})", args.join(" ")))
    }
}

/// Look for ptxas under `.tools/venv`.
fn find_ptxas(venv: &Path) -> Option<PathBuf> {
    let lib = venv.join("lib");
    for entry in std::fs::read_dir(&lib).ok()?.flatten() {
        let p = entry
            .path()
            .join("site-packages/nvidia/cuda_nvcc/bin/ptxas");
        if p.is_file() {
            return Some(p);
        }
    }
    None
}

/// `GYRE_PTXAS` if set; else ptxas in `.tools/venv`, installing it there with pip when
/// missing. `None` (with a printed reason) if it cannot be had.
fn find_or_install_ptxas() -> Result<Option<PathBuf>, String> {
    if let Some(p) = std::env::var_os("GYRE_PTXAS") {
        return Ok(Some(PathBuf::from(p)));
    }
    let venv = root().join(".tools/venv");
    if let Some(p) = find_ptxas(&venv) {
        return Ok(Some(p));
    }
    eprintln!("xtask: installing {PTXAS_PACKAGE} into {}", venv.display());
    let installed = run(
        &root(),
        "python3",
        &["-m", "venv", &venv.to_string_lossy()],
        &[],
    )
    .and_then(|()| {
        run(
            &root(),
            &venv.join("bin/pip").to_string_lossy(),
            &["install", "--quiet", PTXAS_PACKAGE],
            &[],
        )
    });
    match installed {
        Ok(()) => Ok(find_ptxas(&venv)),
        Err(e) => {
            eprintln!("xtask: ptxas unavailable ({e}); PTX assembly checks will be skipped");
            Ok(None)
        }
    }
}

fn test() -> Result<(), String> {
    let root = root();
    let ptxas = find_or_install_ptxas()?;
    if std::env::var_os("CI").is_some() && ptxas.is_none() {
        return Err("CI must have ptxas".into());
    }
    let mut envs: Vec<(&str, &OsStr)> = ptxas
        .as_deref()
        .map(|p| vec![("GYRE_PTXAS", p.as_os_str())])
        .unwrap_or_default();
    // A check that cannot run fails here rather than passing silently; an explicit
    // GYRE_REQUIRE_TOOLS=0 in the environment is kept (a machine without LLVM 14).
    if std::env::var_os("GYRE_REQUIRE_TOOLS").is_none() {
        envs.push(("GYRE_REQUIRE_TOOLS", OsStr::new("1")));
    }
    run(&root, "cargo", &["fmt", "--all", "--check"], &[])?;
    run(
        &root,
        "cargo",
        &[
            "clippy",
            "--workspace",
            "--all-targets",
            "--",
            "-D",
            "warnings",
        ],
        &[],
    )?;
    run(&root, "cargo", &["test", "--workspace"], &envs)?;
    // The fuzz crate is its own workspace; its tests replay the seed corpus.
    run(&root.join("fuzz"), "cargo", &["test"], &[])?;
    downstream()
}

/// See `xtask::downstream`; the crate lives under the target directory.
fn downstream() -> Result<(), String> {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root().join("target"));
    xtask::downstream::check(&root(), &target.join("downstream"))
}

/// The filetests with `GYRE_BLESS=1`: precise-output tests whose output differs get their
/// output section rewritten; every other check still fails as usual.
fn bless() -> Result<(), String> {
    run(
        &root(),
        "cargo",
        &["test", "-p", "gyre-filetests", "--test", "filetests"],
        &[("GYRE_BLESS", OsStr::new("1"))],
    )
}

/// `cargo run --release` of a binary of the `perf/` workspace with `args`: `analyses`
/// (the CFG, dominator tree and loops against Cranelift and LLVM 14) or `passes` (the
/// loop passes against LLVM 14's) when the first argument names it, else `report` (the
/// whole report, docs/perf.md). It is a workspace of its own so that the root workspace's
/// builds and tests never compile Cranelift or the plotting crates. Unless
/// `CARGO_TARGET_DIR` says otherwise it builds into `target/perf` (ignored by git) rather
/// than `perf/target`.
fn perf(args: &[String]) -> Result<(), String> {
    let root = root();
    let mut cmd_args: Vec<String> = ["run", "--release", "--manifest-path", "perf/Cargo.toml"]
        .map(String::from)
        .to_vec();
    if std::env::var_os("CARGO_TARGET_DIR").is_none() {
        cmd_args.extend(["--target-dir".into(), "target/perf".into()]);
    }
    let (bin, rest) = match args.first().map(String::as_str) {
        Some("passes") => ("passes", &args[1..]),
        Some("analyses") => ("analyses", &args[1..]),
        _ => ("report", args),
    };
    cmd_args.extend(["--bin".into(), bin.into(), "--".into()]);
    if bin == "report" {
        // The report runs the `analyses` binary beside it (Cranelift rows); `cargo run
        // --bin report` alone does not build it.
        let mut build: Vec<&str> = cmd_args[..cmd_args.len() - 3]
            .iter()
            .map(String::as_str)
            .collect();
        build[0] = "build";
        build.extend(["--bin", "analyses"]);
        run(&root, "cargo", &build, &[])?;
        // The whole-process rows time the real `gyre compile -O`.
        run(
            &root,
            "cargo",
            &["build", "--release", "--bin", "gyre"],
            &[],
        )?;
        let target = std::env::var_os("CARGO_TARGET_DIR")
            .map(PathBuf::from)
            .unwrap_or_else(|| root.join("target"));
        let target = if target.is_absolute() {
            target
        } else {
            root.join(target)
        };
        cmd_args.extend([
            "--gyre".into(),
            target.join("release/gyre").to_string_lossy().into_owned(),
        ]);
        let quick = rest.iter().any(|a| a == "--quick");
        if !rest.iter().any(|a| a == "--examples-json") {
            // The examples' dynamic counts need their launches, which live here (the
            // GPU table's), and the corpus harness's ptx-sim stage: measured in-process,
            // handed over as JSON.
            let json = target.join("perf-examples.json");
            let results = xtask::gpu_table::examples_quality(&root, &xtask::corpus::Tools::find());
            for r in &results {
                match r {
                    Err((name, why)) => eprintln!("xtask: {name}: {why}"),
                    Ok(r) => {
                        if let Some((stage, why)) = r.first_failure() {
                            eprintln!("xtask: {}: {stage}: {why}", r.entry.file);
                        }
                    }
                }
            }
            std::fs::write(&json, xtask::gpu_table::examples_quality_json(&results))
                .map_err(|e| format!("cannot write {}: {e}", json.display()))?;
            cmd_args.extend([
                "--examples-json".into(),
                json.to_string_lossy().into_owned(),
            ]);
        }
        let given = rest.iter().any(|a| a == "--quality-json");
        if !quick && !given {
            // The corpus harness writes per-kernel quality figures when it has the
            // option; without it the report says so and goes on.
            let json = target.join("perf-quality.json");
            let _ = std::fs::remove_file(&json);
            let me = std::env::current_exe().map_err(|e| e.to_string())?;
            let json_s = json.to_string_lossy().into_owned();
            match run(
                &root,
                &me.to_string_lossy(),
                &["corpus", "--quality-json", &json_s],
                &[],
            ) {
                Ok(()) => {}
                Err(e) => eprintln!("xtask: no corpus quality figures: {e}"),
            }
            if json.is_file() {
                cmd_args.extend(["--quality-json".into(), json_s]);
            }
        }
    }
    cmd_args.extend(rest.iter().cloned());
    let refs: Vec<&str> = cmd_args.iter().map(String::as_str).collect();
    run(&root, "cargo", &refs, &[])
}

fn conformance(args: &[String]) -> Result<(), String> {
    use xtask::conformance::{self as conf, report, Mode, Setup};
    let mut mode = Mode::Full;
    let mut write_doc = false;
    let mut scev_only = false;
    for a in args {
        match a.as_str() {
            "--quick" => mode = Mode::Quick,
            "--write-doc" => write_doc = true,
            "--scev" => scev_only = true,
            other => return Err(format!("conformance: unknown option {other}")),
        }
    }
    let root = root();
    if scev_only {
        return scev_conformance(&root, write_doc);
    }
    let Some(corpus) = conf::find_corpus(&root) else {
        println!("skipped: corpus not found");
        return Ok(());
    };
    let setup = Setup {
        corpus,
        opt: conf::find_opt(),
        mode,
    };
    let reports = conf::run(&setup)?;
    let summary = report::summarize(&reports);
    print!("{}", report::console(&setup, &reports, &summary));
    if write_doc {
        if mode == Mode::Quick {
            return Err("--write-doc needs the full run (drop --quick)".into());
        }
        let path = root.join("docs/conformance.md");
        std::fs::write(&path, report::document(&setup, &reports, &summary))
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        println!("wrote {}", path.display());
    }
    let scev = if mode == Mode::Full {
        scev_conformance(&root, write_doc)
    } else {
        Ok(())
    };
    if summary.unmet.is_empty() {
        scev
    } else {
        Err(format!(
            "{} conformance target(s) missed",
            summary.unmet.len()
        ))
    }
}

/// The scalar-evolution stage: Gyre's backedge-taken counts against LLVM 14's on both
/// corpora (`xtask::conformance::scev`); fails on a contradiction.
fn scev_conformance(root: &std::path::Path, write_doc: bool) -> Result<(), String> {
    use xtask::conformance::{self as conf, scev};
    let Some(opt) = conf::find_opt() else {
        println!("scev: skipped: no LLVM 14 opt");
        return Ok(());
    };
    let results = scev::run(root, &opt);
    let s = scev::summarize(&results);
    println!(
        "scev: {} files ({} not compared), {} loops: {} equal, {} contradictions, {} \
         explained, {} not comparable; LLVM only {}, Gyre only {}, neither {}",
        s.files,
        s.skipped,
        s.loops,
        s.equal,
        s.contradictions,
        s.explained,
        s.not_comparable,
        s.llvm_only,
        s.gyre_only,
        s.both_unknown
    );
    if write_doc {
        let path = root.join("docs/scev-conformance.md");
        std::fs::write(&path, scev::document(&opt, &results, &s))
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        println!("wrote {}", path.display());
    }
    if s.contradictions > 0 {
        Err(format!(
            "scev: {} backedge-taken count(s) contradicted by LLVM 14",
            s.contradictions
        ))
    } else {
        Ok(())
    }
}

fn corpus(args: &[String]) -> Result<(), String> {
    use xtask::corpus::{self, report, Setup, Tools};
    let mut write_doc = false;
    let mut quality_json = None;
    let mut runs = 3;
    let mut only = Vec::new();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--write-doc" => write_doc = true,
            "--quality-json" => {
                quality_json = Some(
                    it.next()
                        .ok_or("corpus: --quality-json needs a file name")?
                        .clone(),
                )
            }
            "--runs" => {
                runs = it
                    .next()
                    .and_then(|n| n.parse().ok())
                    .ok_or("corpus: --runs needs a number")?
            }
            f if !f.starts_with('-') => only.push(f.to_string()),
            other => return Err(format!("corpus: unknown option {other}")),
        }
    }
    let root = root();
    let Some(dir) = corpus::find_corpus(&root) else {
        println!("skipped: corpus not found");
        return Ok(());
    };
    if write_doc && !only.is_empty() {
        return Err("--write-doc needs the full run (no file names)".into());
    }
    let setup = Setup {
        corpus: dir,
        tools: Tools::find(),
        only: (!only.is_empty()).then_some(only),
        runs,
    };
    let reasons_path = root.join("docs/quality-reasons.tsv");
    let reasons = report::parse_reasons(
        &std::fs::read_to_string(&reasons_path)
            .map_err(|e| format!("cannot read {}: {e}", reasons_path.display()))?,
    )?;
    let reports = corpus::run(&setup)?;
    let summary = report::summarize(&reports);
    print!("{}", report::console(&setup, &reports, &summary));
    for w in report::reason_warnings(&reports, &reasons, setup.only.is_none()) {
        eprintln!("warning: {w}");
    }
    if write_doc {
        let path = root.join("docs/corpus.md");
        std::fs::write(
            &path,
            report::document(&setup, &reports, &summary, &reasons),
        )
        .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        println!("wrote {}", path.display());
    }
    if let Some(path) = quality_json {
        std::fs::write(&path, report::quality_json(&reports, &reasons))
            .map_err(|e| format!("cannot write {path}: {e}"))?;
        println!("wrote {path}");
    }
    if summary.unmet.is_empty() {
        Ok(())
    } else {
        Err(format!("{} corpus target(s) missed", summary.unmet.len()))
    }
}

fn gpu_table(args: &[String]) -> Result<(), String> {
    use gyre_codegen_lite::FpContract;
    use xtask::gpu_table::{LlcSource, TableOptions};
    const USAGE: &str = "usage: cargo xtask gpu-table [--write-doc] [--llc-ptx DIR] \
                         [--fp-contract off|on|fast] | --save-llc-ptx DIR --sm N";
    let (mut write_doc, mut llc, mut save, mut sm) = (false, None, None, None);
    let mut fp_contract = FpContract::On;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--write-doc" => write_doc = true,
            "--llc-ptx" => llc = Some(PathBuf::from(it.next().ok_or(USAGE)?)),
            "--save-llc-ptx" => save = Some(PathBuf::from(it.next().ok_or(USAGE)?)),
            "--sm" => {
                let n = it.next().ok_or(USAGE)?;
                sm = Some(
                    n.parse::<u32>()
                        .map_err(|_| format!("--sm: not a number: {n}"))?,
                );
            }
            "--fp-contract" => {
                fp_contract = match it.next().map(String::as_str) {
                    Some("off") => FpContract::Off,
                    Some("on") => FpContract::On,
                    Some("fast") => FpContract::Fast,
                    _ => return Err(USAGE.into()),
                }
            }
            _ => return Err(USAGE.into()),
        }
    }
    match (save, sm) {
        (Some(dir), Some(sm)) if !write_doc && llc.is_none() => {
            xtask::gpu_table::save_llc(&root(), &dir, sm)
        }
        (None, None) => {
            let opts = TableOptions {
                llc: llc.map_or(LlcSource::Run, LlcSource::Saved),
                fp_contract,
            };
            xtask::gpu_table::run(&root(), write_doc, &opts)
        }
        _ => Err(USAGE.into()),
    }
}

/// `cargo xtask fuzz ...`: build and run the fuzz crate's campaign driver (its own
/// workspace, release profile with debug assertions and overflow checks), passing the
/// arguments through.
fn fuzz(args: &[String]) -> Result<(), String> {
    if args.is_empty() {
        return Err(
            "usage: cargo xtask fuzz <target|all|list> [--minutes N] [--cpu-minutes C] [--jobs J] [--seed S] [--shrink-seconds K] [--hang-seconds H] [--in-process]"
                .into(),
        );
    }
    let mut cargo_args = vec!["run", "--release", "--quiet", "--bin", "campaign", "--"];
    cargo_args.extend(args.iter().map(String::as_str));
    run(&root().join("fuzz"), "cargo", &cargo_args, &[])
}
