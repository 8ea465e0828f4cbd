//! The stable campaign driver behind `cargo xtask fuzz`:
//! `campaign <target|all|list> [--minutes N] [--cpu-minutes C] [--jobs J] [--seed S]
//! [--shrink-seconds K] [--hang-seconds H] [--in-process]`.
//!
//! Each target's campaign runs in a child process (this binary again, with `--child`)
//! that this process supervises: when the child aborts (a stack overflow, an `abort`) or
//! a check hangs, the input is kept as a `crash-`/`hang-` regression and a new child goes
//! on after it with what is left of the budget (see `gyre_fuzz::supervise`). Each
//! campaign, killed children included, is appended to `fuzz/campaigns.tsv`, the ledger of
//! how much fuzzing each target has had.

use gyre_fuzz::campaign::{self, cpu_seconds, Config, Summary};
use gyre_fuzz::supervise;
use std::process::Command;
use std::time::{Duration, Instant};

fn usage() -> ! {
    eprintln!(
        "usage: campaign <target|all|list> [--minutes N] [--cpu-minutes C] [--jobs J] [--seed S] [--shrink-seconds K] [--hang-seconds H] [--in-process]\ntargets: {}",
        gyre_fuzz::TARGETS
            .iter()
            .map(|t| t.name)
            .collect::<Vec<_>>()
            .join(", ")
    );
    std::process::exit(2)
}

/// Parsed command line.
struct Args {
    which: String,
    minutes: Option<f64>,
    cpu_minutes: Option<f64>,
    cfg: Config,
    /// Run the campaign here, unsupervised.
    in_process: bool,
    /// Run as a supervised child, writing the state to this file.
    child_state: Option<String>,
}

fn parse_args() -> Args {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(which) = args.first().cloned() else {
        usage()
    };
    let mut a = Args {
        which,
        minutes: None,
        cpu_minutes: None,
        cfg: Config {
            duration: Duration::ZERO,
            cpu_budget: None,
            jobs: 1,
            seed: std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_secs() << 20)
                .unwrap_or(0),
            shrink_budget: Duration::from_secs(120),
            max_execs: None,
            write_files: true,
            hang_secs: Some(600),
        },
        in_process: false,
        child_state: None,
    };
    let mut i = 1;
    while i < args.len() {
        if args[i] == "--in-process" {
            a.in_process = true;
            i += 1;
            continue;
        }
        let val = args.get(i + 1).cloned().unwrap_or_else(|| usage());
        let num = |v: &str| v.parse::<f64>().unwrap_or_else(|_| usage());
        match args[i].as_str() {
            "--minutes" => a.minutes = Some(num(&val)),
            "--cpu-minutes" => a.cpu_minutes = Some(num(&val)),
            "--jobs" => a.cfg.jobs = val.parse().unwrap_or_else(|_| usage()),
            "--seed" => a.cfg.seed = val.parse().unwrap_or_else(|_| usage()),
            "--shrink-seconds" => a.cfg.shrink_budget = Duration::from_secs_f64(num(&val)),
            "--hang-seconds" => a.cfg.hang_secs = Some(num(&val) as u64),
            "--child" => a.child_state = Some(val),
            _ => usage(),
        }
        i += 2;
    }
    a
}

fn main() {
    let mut a = parse_args();
    if a.which == "list" {
        for t in gyre_fuzz::TARGETS {
            println!("{:<16} {}", t.name, t.doc);
        }
        return;
    }
    let targets: Vec<&'static gyre_fuzz::Target> = if a.which == "all" {
        gyre_fuzz::TARGETS.iter().collect()
    } else {
        vec![gyre_fuzz::target(&a.which).unwrap_or_else(|| usage())]
    };
    // `--minutes` is the whole campaign's wall clock, split between the targets;
    // `--cpu-minutes` is each target's CPU budget (with no wall-clock limit of its own).
    a.cfg.cpu_budget = a.cpu_minutes.map(|c| c * 60.0);
    let wall = match (a.minutes, a.cpu_minutes) {
        (Some(m), _) => m,
        (None, Some(_)) => 7.0 * 24.0 * 60.0 * targets.len() as f64,
        (None, None) => 1.0,
    };
    a.cfg.duration = Duration::from_secs_f64(wall * 60.0 / targets.len() as f64);
    let mut failed = false;
    for t in targets {
        failed |= if let Some(state) = &a.child_state {
            child(t, &a.cfg, state)
        } else if a.in_process {
            gyre_fuzz::quiet_panics();
            a.cfg.hang_secs = None; // nobody would restart it
            in_process(t, &a)
        } else {
            supervise_target(t, &a)
        };
    }
    if failed {
        std::process::exit(1);
    }
}

/// The whole campaign of `t` in this process. Returns whether it found a failure.
fn in_process(t: &'static gyre_fuzz::Target, a: &Args) -> bool {
    announce(t, a);
    let s = campaign::run(t, &a.cfg);
    report(t, &a.cfg, &s);
    !s.found.is_empty()
}

/// A supervised child's campaign: as [`in_process`], with the abort handler armed.
fn child(t: &'static gyre_fuzz::Target, cfg: &Config, state: &str) -> bool {
    gyre_fuzz::quiet_panics();
    if let Err(e) = supervise::arm(std::path::Path::new(state)) {
        eprintln!("{}: cannot write the state file {state}: {e}", t.name);
        std::process::exit(2);
    }
    let s = campaign::run(t, cfg);
    report(t, cfg, &s);
    !s.found.is_empty()
}

fn announce(t: &gyre_fuzz::Target, a: &Args) {
    match a.cpu_minutes {
        Some(c) if a.minutes.is_none() => eprintln!(
            "{}: fuzzing for {c:.1} CPU-minutes with {} job(s) from seed {}",
            t.name, a.cfg.jobs, a.cfg.seed
        ),
        _ => eprintln!(
            "{}: fuzzing for {:.1} min with {} job(s) from seed {}",
            t.name,
            a.cfg.duration.as_secs_f64() / 60.0,
            a.cfg.jobs,
            a.cfg.seed
        ),
    }
}

/// Print a campaign's summary and append it to the ledger.
fn report(t: &gyre_fuzz::Target, cfg: &Config, s: &Summary) {
    let cpu = s
        .cpu_secs
        .map_or("unknown".to_string(), |c| format!("{:.2}", c / 60.0));
    println!(
        "{}: {} executions in {:.2} wall-minutes, {} CPU-minutes; {} failing executions, {} distinct failures; {} features, {} new corpus inputs",
        t.name,
        s.execs,
        s.wall_secs / 60.0,
        cpu,
        s.failing_execs,
        s.found.len(),
        s.features,
        s.corpus_added
    );
    record(t.name, cfg, s);
    for f in &s.found {
        println!(
            "  FAIL [{}] seed {}: {}\n    {}",
            f.signature,
            f.seed,
            f.file
                .as_ref()
                .map_or("(not written)".to_string(), |p| p.display().to_string()),
            f.message.lines().next().unwrap_or("")
        );
    }
}

/// Run `t`'s campaign in child processes until its budget is spent, restarting after
/// each abort or hang. Returns whether anything failed.
fn supervise_target(t: &'static gyre_fuzz::Target, a: &Args) -> bool {
    announce(t, a);
    let exe = std::env::current_exe().unwrap_or_else(|e| {
        eprintln!("cannot find this program: {e}");
        std::process::exit(2)
    });
    let state =
        std::env::temp_dir().join(format!("gyre-fuzz-{}-{}.state", t.name, std::process::id()));
    let start = Instant::now();
    let mut cpu_used = 0.0f64;
    let mut seed = a.cfg.seed;
    let mut failed = false;
    loop {
        let wall_left = a.cfg.duration.as_secs_f64() - start.elapsed().as_secs_f64();
        let cpu_left = a.cfg.cpu_budget.map(|b| b - cpu_used);
        if wall_left <= 0.0 || cpu_left.is_some_and(|c| c <= 0.0) {
            break;
        }
        let mut cmd = Command::new(&exe);
        cmd.arg(t.name)
            .arg("--child")
            .arg(&state)
            .args(["--jobs", &a.cfg.jobs.to_string()])
            .args(["--seed", &seed.to_string()])
            .args([
                "--shrink-seconds",
                &a.cfg.shrink_budget.as_secs_f64().to_string(),
            ])
            .args([
                "--hang-seconds",
                &a.cfg.hang_secs.unwrap_or(600).to_string(),
            ]);
        // The child's own limits: what is left of ours.
        match cpu_left {
            Some(c) if a.minutes.is_none() => cmd.args(["--cpu-minutes", &(c / 60.0).to_string()]),
            Some(c) => cmd.args([
                "--cpu-minutes",
                &(c / 60.0).to_string(),
                "--minutes",
                &(wall_left / 60.0).to_string(),
            ]),
            None => cmd.args(["--minutes", &(wall_left / 60.0).to_string()]),
        };
        let _ = std::fs::remove_file(&state);
        let cpu0 = cpu_seconds();
        let t0 = Instant::now();
        let status = match cmd.status() {
            Ok(s) => s,
            Err(e) => {
                eprintln!("{}: cannot start a campaign process: {e}", t.name);
                return true;
            }
        };
        let used = cpu_seconds().zip(cpu0).map(|(a, b)| a - b);
        let mut this = a.cfg.clone();
        this.seed = seed;
        cpu_used += used.unwrap_or(0.0);
        match status.code() {
            Some(0) => break,
            Some(1) => {
                failed = true;
                break;
            }
            _ => {}
        }
        // Killed (a signal), or exited 3 for a hang: read what it left.
        failed = true;
        let st = supervise::read_state(&state);
        let why = match (&st, status.code()) {
            (Some(s), _) => s.kind.clone(),
            (None, Some(c)) => format!("exit status {c}"),
            (None, None) => "killed by a signal".into(),
        };
        eprintln!(
            "{}: the campaign process stopped ({why}, {status}); state: {st:?}",
            t.name
        );
        let mut summary = Summary {
            execs: st.as_ref().map_or(0, |s| s.execs),
            failing_execs: 1,
            wall_secs: t0.elapsed().as_secs_f64(),
            cpu_secs: used,
            ..Summary::default()
        };
        match &st {
            Some(s) if s.kind == "abort" => {
                if let Some(bad) = s.seed {
                    // Kept unshrunk: shrinking would have to run each step in a child.
                    let input = (t.generate)(bad);
                    let msg = format!("crash: the process aborted checking seed {bad}");
                    let file = campaign::write_regression(t, &input, "crash abort", &msg);
                    println!(
                        "  FAIL [crash abort] seed {bad}: {}",
                        file.as_ref()
                            .map_or("(not written)".into(), |p| p.display().to_string())
                    );
                    summary.found.push(campaign::Found {
                        signature: "crash abort".into(),
                        seed: bad,
                        message: msg,
                        file,
                    });
                }
                seed = s.max_seed.max(seed) + 1;
            }
            Some(s) => {
                // A hang: the child wrote the regression itself.
                println!("  FAIL [hang] seed {}", s.seed.unwrap_or(0));
                seed = s.max_seed.max(seed) + 1;
            }
            None => {
                // Nothing known (killed from outside, out of memory): do not loop on it.
                record(t.name, &this, &summary);
                break;
            }
        }
        record(t.name, &this, &summary);
    }
    let _ = std::fs::remove_file(&state);
    failed
}

/// Append one line per finished campaign to `fuzz/campaigns.tsv` (checked in), so the
/// CPU time each target has had adds up across sessions and machines.
fn record(target: &str, cfg: &Config, s: &Summary) {
    use std::io::Write;
    let path = gyre_fuzz::fuzz_root().join("campaigns.tsv");
    let new = !path.exists();
    let Ok(mut f) = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
    else {
        return;
    };
    let commit = Command::new("git")
        .args(["rev-parse", "--short", "HEAD"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_else(|| "unknown".into());
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    if new {
        let _ = writeln!(
            f,
            "unix_time\tcommit\ttarget\tjobs\tfirst_seed\texecutions\twall_minutes\tcpu_minutes\tfailing_executions\tdistinct_failures"
        );
    }
    let _ = writeln!(
        f,
        "{secs}\t{commit}\t{target}\t{}\t{}\t{}\t{:.2}\t{}\t{}\t{}",
        cfg.jobs,
        cfg.seed,
        s.execs,
        s.wall_secs / 60.0,
        s.cpu_secs
            .map_or("unknown".into(), |c| format!("{:.2}", c / 60.0)),
        s.failing_execs,
        s.found.len()
    );
}
