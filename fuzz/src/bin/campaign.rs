//! The stable campaign driver behind `cargo xtask fuzz`:
//! `campaign <target|all|list> [--minutes N] [--cpu-minutes C] [--jobs J] [--seed S]
//! [--shrink-seconds K]`. Each finished campaign is appended to `fuzz/campaigns.tsv`, the
//! ledger of how much fuzzing each target has had.

use gyre_fuzz::campaign::{self, Config};
use std::time::Duration;

fn usage() -> ! {
    eprintln!(
        "usage: campaign <target|all|list> [--minutes N] [--cpu-minutes C] [--jobs J] [--seed S] [--shrink-seconds K]\ntargets: {}",
        gyre_fuzz::TARGETS
            .iter()
            .map(|t| t.name)
            .collect::<Vec<_>>()
            .join(", ")
    );
    std::process::exit(2)
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(which) = args.first().cloned() else {
        usage()
    };
    let mut minutes = None::<f64>;
    let mut cpu_minutes = None::<f64>;
    let mut cfg = Config {
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
    };
    let mut i = 1;
    while i < args.len() {
        let val = args.get(i + 1).cloned().unwrap_or_else(|| usage());
        match args[i].as_str() {
            "--minutes" => minutes = Some(val.parse().unwrap_or_else(|_| usage())),
            "--cpu-minutes" => cpu_minutes = Some(val.parse().unwrap_or_else(|_| usage())),
            "--jobs" => cfg.jobs = val.parse().unwrap_or_else(|_| usage()),
            "--seed" => cfg.seed = val.parse().unwrap_or_else(|_| usage()),
            "--shrink-seconds" => {
                cfg.shrink_budget = Duration::from_secs(val.parse().unwrap_or_else(|_| usage()))
            }
            _ => usage(),
        }
        i += 2;
    }
    if which == "list" {
        for t in gyre_fuzz::TARGETS {
            println!("{:<16} {}", t.name, t.doc);
        }
        return;
    }
    let targets: Vec<&'static gyre_fuzz::Target> = if which == "all" {
        gyre_fuzz::TARGETS.iter().collect()
    } else {
        vec![gyre_fuzz::target(&which).unwrap_or_else(|| usage())]
    };
    // `--minutes` is the whole campaign's wall clock, split between the targets;
    // `--cpu-minutes` is each target's CPU budget (with no wall-clock limit of its own).
    cfg.cpu_budget = cpu_minutes.map(|c| c * 60.0);
    let wall = match (minutes, cpu_minutes) {
        (Some(m), _) => m,
        (None, Some(_)) => 7.0 * 24.0 * 60.0 * targets.len() as f64,
        (None, None) => 1.0,
    };
    cfg.duration = Duration::from_secs_f64(wall * 60.0 / targets.len() as f64);
    gyre_fuzz::quiet_panics();
    let mut failed = false;
    for t in targets {
        match cpu_minutes {
            Some(c) if minutes.is_none() => eprintln!(
                "{}: fuzzing for {c:.1} CPU-minutes with {} job(s) from seed {}",
                t.name, cfg.jobs, cfg.seed
            ),
            _ => eprintln!(
                "{}: fuzzing for {:.1} min with {} job(s) from seed {}",
                t.name,
                cfg.duration.as_secs_f64() / 60.0,
                cfg.jobs,
                cfg.seed
            ),
        }
        let s = campaign::run(t, &cfg);
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
        record(t.name, &cfg, &s);
        for f in &s.found {
            failed = true;
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
    if failed {
        std::process::exit(1);
    }
}

/// Append one line per finished campaign to `fuzz/campaigns.tsv` (checked in), so the
/// CPU time each target has had adds up across sessions and machines.
fn record(target: &str, cfg: &Config, s: &campaign::Summary) {
    use std::io::Write;
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("campaigns.tsv");
    let new = !path.exists();
    let Ok(mut f) = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
    else {
        return;
    };
    let commit = std::process::Command::new("git")
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
