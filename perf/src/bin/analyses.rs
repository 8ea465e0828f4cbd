//! Gyre's `Cfg` + `DomTree` + `LoopInfo` against Cranelift's `ControlFlowGraph` +
//! `DominatorTree` + `LoopAnalysis` and LLVM 14's `DominatorTreeAnalysis` + `LoopAnalysis`,
//! on the same CFGs. Prints markdown tables of ns/block and ratios.
//!
//! `cargo run --release --manifest-path perf/Cargo.toml --bin analyses -- [options] [sizes...]`
//! (or `cargo xtask perf [options] [sizes...]`); see `--help`.

use gyre_analysis::cfggen::CfgShape;
use gyre_perf::llvm;
use gyre_perf::measure::{default_reps, markdown, Llvm, LlvmTimes, Row};
use gyre_perf::set::{self, FunctionSet, FAMILIES};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

const USAGE: &str = "\
usage: analyses [options] [sizes...]   (default sizes: 1000 10000 100000 1000000)
  --family NAME      only this family (repeatable): nest3-seq, random-reducible, deep-nest, exit-ladder,
                     exit-ladder-backwards
  --runs N           repeat the whole sweep N times, report per-cell minima (default 1)
  --reps N           repetitions per analysis (default 20M / blocks timed, clamped to 5..2000)
  --no-llvm          skip LLVM
  --llvm-blocks N    replicate small functions in one module up to N blocks, for timer resolution (default 1000000)
  --llvm-reps R      opt computes both analyses R times per function, reported as the average (default 3)
  --llvm-timeout S   give up on an opt run after S seconds (default 60); on a time-out, retry
                     with one copy, and skip the family's larger sizes if that times out too
  GYRE_OPT=path      the LLVM 14 opt to use (default opt-14, opt)";

/// Parsed command line.
struct Options {
    sizes: Vec<u32>,
    families: Vec<&'static str>,
    runs: usize,
    reps: Option<usize>,
    llvm: bool,
    llvm_blocks: u64,
    llvm_reps: usize,
    llvm_timeout: Duration,
}

fn parse_args(args: &[String]) -> Result<Options, String> {
    let mut o = Options {
        sizes: Vec::new(),
        families: Vec::new(),
        runs: 1,
        reps: None,
        llvm: true,
        llvm_blocks: 1_000_000,
        llvm_reps: 3,
        llvm_timeout: Duration::from_secs(60),
    };
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let mut value = |name: &str| {
            it.next()
                .ok_or_else(|| format!("{name} needs a value"))
                .cloned()
        };
        let num = |name: &str, v: String| {
            v.parse::<u64>()
                .map_err(|_| format!("{name}: not a number: {v}"))
        };
        match a.as_str() {
            "-h" | "--help" => return Err(String::new()),
            "--family" => {
                let v = value(a)?;
                let f = FAMILIES
                    .iter()
                    .find(|f| **f == v)
                    .ok_or_else(|| format!("unknown family {v}"))?;
                o.families.push(f);
            }
            "--runs" => o.runs = num(a, value(a)?)?.max(1) as usize,
            "--reps" => o.reps = Some(num(a, value(a)?)?.max(1) as usize),
            "--no-llvm" => o.llvm = false,
            "--llvm-blocks" => o.llvm_blocks = num(a, value(a)?)?,
            "--llvm-reps" => o.llvm_reps = num(a, value(a)?)?.max(1) as usize,
            "--llvm-timeout" => o.llvm_timeout = Duration::from_secs(num(a, value(a)?)?),
            s => {
                let n = s
                    .parse::<u32>()
                    .map_err(|_| format!("unknown argument {s}"))?;
                if n < 4 {
                    return Err(format!("size {n} is too small (at least 4 blocks)"));
                }
                o.sizes.push(n);
            }
        }
    }
    if o.sizes.is_empty() {
        o.sizes = vec![1_000, 10_000, 100_000, 1_000_000];
    }
    // Ascending, so that a family whose LLVM run timed out can skip its larger sizes.
    o.sizes.sort_unstable();
    o.sizes.dedup();
    if o.families.is_empty() {
        o.families = FAMILIES.to_vec();
    }
    Ok(o)
}

/// Where LLVM runs: `opt`, a scratch directory, and whether to check its loops.
struct LlvmSetup {
    opt: PathBuf,
    dir: PathBuf,
}

/// Time LLVM on a module of copies cycling through `shapes` (and on the first run of a
/// small shape, check that LLVM's loops of the first shape are Gyre's).
fn measure_llvm(
    setup: &LlvmSetup,
    o: &Options,
    shapes: &[CfgShape],
    gyre_loops: &[(usize, Option<usize>)],
    check: bool,
) -> Result<Llvm, String> {
    let file = setup.dir.join("shape.ll");
    let write = |copies: usize| -> Result<(), String> {
        let f = std::fs::File::create(&file)
            .map_err(|e| format!("cannot create {}: {e}", file.display()))?;
        let mut w = std::io::BufWriter::new(f);
        llvm::write_ll(shapes, copies, &mut w)
            .and_then(|()| w.flush())
            .map_err(|e| format!("cannot write {}: {e}", file.display()))
    };
    if check && shapes[0].num_blocks <= 2_000 {
        write(1)?;
        let mut got = llvm::loop_headers(&setup.opt, &file, o.llvm_timeout)?;
        got.sort_unstable();
        let mut want = gyre_loops.to_vec();
        want.sort_unstable();
        if got != want {
            return Err(format!(
                "LLVM's loops (header, parent header) differ from Gyre's:\n  LLVM {got:?}\n  Gyre {want:?}"
            ));
        }
    }
    let mut copies = (o.llvm_blocks / u64::from(shapes[0].num_blocks)).max(1) as usize;
    let time = |copies: usize| -> Result<Option<LlvmTimes>, String> {
        write(copies)?;
        let run = llvm::time_analyses(&setup.opt, &file, o.llvm_reps, o.llvm_timeout);
        let _ = std::fs::remove_file(&file);
        let blocks = llvm::module_blocks(shapes, copies) as f64;
        let per_block = 1e9 / (o.llvm_reps as f64 * blocks);
        Ok(match run? {
            llvm::OptRun::TimedOut => None,
            llvm::OptRun::Times(t) => Some(LlvmTimes {
                domtree: t.domtree * per_block,
                loops: t.loops * per_block,
            }),
        })
    };
    let mut times = time(copies)?;
    if times.is_none() && copies > 1 {
        eprint!("(opt timed out on {copies} copies, retrying with one) ");
        copies = 1;
        times = time(copies)?;
    }
    Ok(match times {
        Some(times) => Llvm::Measured { copies, times },
        None => Llvm::TimedOut,
    })
}

fn measure_row(
    o: &Options,
    family: &'static str,
    n: u32,
    llvm_setup: Option<&LlvmSetup>,
    first_run: bool,
    llvm_gave_up: bool,
) -> Result<Row, String> {
    let shapes = set::shapes(family, n).expect("family was validated by parse_args");
    // Builds both functions for every shape and checks that they agree before timing.
    let mut fs = FunctionSet::new(shapes)?;
    let k = fs.shapes().len();
    let total = fs.total_blocks();
    let reps = o.reps.unwrap_or_else(|| default_reps(total));
    let clif = fs.time_cranelift(reps);
    let gyre = fs.time_gyre(reps);
    // Recheck after the timed recomputations.
    fs.check()?;
    let gyre_loops = fs.gyre_loops(0);
    let mean = |x: u64| (x as f64 / k as f64).round() as u64;
    let edges: u64 = fs.shapes().iter().map(|s| s.edges.len() as u64).sum();
    let (blocks, edges, loops) = (
        mean(total) as u32,
        mean(edges) as usize,
        mean(fs.total_loops() as u64) as usize,
    );
    let shapes = fs.shapes().to_vec();
    drop(fs);
    let llvm = match llvm_setup {
        Some(_) if llvm_gave_up => Llvm::TimedOut,
        Some(s) => measure_llvm(s, o, &shapes, &gyre_loops, first_run)?,
        None => Llvm::Skipped,
    };
    Ok(Row {
        family,
        functions: k,
        blocks,
        edges,
        loops,
        clif,
        gyre,
        llvm,
    })
}

fn run(o: &Options, llvm_setup: Option<&LlvmSetup>) -> Result<Vec<Row>, String> {
    let mut rows: Vec<Row> = Vec::new();
    for run in 0..o.runs {
        // Families whose LLVM run timed out on one copy: larger sizes would too.
        let mut gave_up: Vec<&str> = Vec::new();
        let mut i = 0;
        for &n in &o.sizes {
            for &family in &o.families {
                eprint!("run {}/{}: {family} {n} ... ", run + 1, o.runs);
                let row = measure_row(
                    o,
                    family,
                    n,
                    llvm_setup,
                    run == 0,
                    gave_up.contains(&family),
                )
                .map_err(|e| format!("{family} {n}: {e}"))?;
                if row.llvm == Llvm::TimedOut {
                    gave_up.push(family);
                }
                eprintln!(
                    "clif {:.1} gyre {:.1} llvm {:?} ns/block (cfg+domtree+loops)",
                    row.clif.all(),
                    row.gyre.all(),
                    row.llvm
                );
                if run == 0 {
                    rows.push(row);
                } else {
                    rows[i] = rows[i].min(&row);
                }
                i += 1;
            }
        }
    }
    Ok(rows)
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let o = match parse_args(&args) {
        Ok(o) => o,
        Err(e) if e.is_empty() => {
            println!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            eprintln!("analyses: {e}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    let llvm_setup = if o.llvm {
        match llvm::find_opt() {
            Some((opt, version)) => {
                let dir = std::env::temp_dir().join(format!("gyre-perf-{}", std::process::id()));
                if let Err(e) = std::fs::create_dir_all(&dir) {
                    eprintln!("analyses: cannot create {}: {e}", dir.display());
                    return ExitCode::FAILURE;
                }
                eprintln!("LLVM: {} ({version})", opt.display());
                Some(LlvmSetup { opt, dir })
            }
            None => {
                eprintln!("LLVM 14 opt not found (set GYRE_OPT): LLVM columns skipped");
                None
            }
        }
    } else {
        None
    };
    let result = run(&o, llvm_setup.as_ref());
    if let Some(s) = &llvm_setup {
        let _ = std::fs::remove_dir_all(&s.dir);
    }
    match result {
        Ok(rows) => {
            println!("{}", markdown(&rows));
            if let Some(s) = &llvm_setup {
                print_llvm_note(&s.opt, &o);
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("analyses: FAILED: {e}");
            ExitCode::FAILURE
        }
    }
}

fn print_llvm_note(opt: &Path, o: &Options) {
    println!(
        "LLVM: `{} -disable-output -passes=<P> -time-passes` with P = `require<domtree>,require<loops>` \
         repeated {} times (`invalidate<loops>,invalidate<domtree>` between), on a module holding \
         `copies` = max(1, {} / blocks) functions (cycling through the row's `fns` distinct \
         functions); wall time of the DominatorTreeAnalysis and LoopAnalysis rows / \
         (repetitions x the module's blocks).",
        opt.display(),
        o.llvm_reps,
        o.llvm_blocks,
    );
}
