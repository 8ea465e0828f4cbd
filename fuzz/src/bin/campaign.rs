//! The stable campaign driver behind `cargo xtask fuzz`:
//! `campaign <target|all|list> [--minutes N] [--jobs J] [--seed S] [--shrink-seconds K]`.

use gyre_fuzz::campaign::{self, Config};
use std::time::Duration;

fn usage() -> ! {
    eprintln!(
        "usage: campaign <target|all|list> [--minutes N] [--jobs J] [--seed S] [--shrink-seconds K]\ntargets: {}",
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
    let mut minutes = 1.0f64;
    let mut cfg = Config {
        duration: Duration::ZERO,
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
            "--minutes" => minutes = val.parse().unwrap_or_else(|_| usage()),
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
    // `all` splits the time between the targets.
    cfg.duration = Duration::from_secs_f64(minutes * 60.0 / targets.len() as f64);
    gyre_fuzz::quiet_panics();
    let mut failed = false;
    for t in targets {
        eprintln!(
            "{}: fuzzing for {:.1} min with {} job(s) from seed {}",
            t.name,
            cfg.duration.as_secs_f64() / 60.0,
            cfg.jobs,
            cfg.seed
        );
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
