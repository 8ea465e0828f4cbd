//! A fuzzing campaign on the stable toolchain: `jobs` threads draw seeds, generate inputs
//! ([`Target::generate`]) and check them; inputs that show a new feature go to the corpus
//! (`corpus/<target>/`, replayed at the start of the next campaign), and each new kind of
//! failure is shrunk and written to `regressions/<target>/`, which `cargo test` replays.

use crate::{protect, run_check, shrink, signature, target_dir, Input, Target};
use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// What to run.
#[derive(Clone, Debug)]
pub struct Config {
    /// Wall-clock length.
    pub duration: Duration,
    /// If set, stop once the campaign has used this many CPU seconds (workers and the
    /// tools they wait for), whatever the wall clock says: on a shared machine a niced
    /// campaign then still does a known amount of work.
    pub cpu_budget: Option<f64>,
    /// Worker threads.
    pub jobs: usize,
    /// First seed (workers take the following ones in turn).
    pub seed: u64,
    /// Time allowed to shrink one failure.
    pub shrink_budget: Duration,
    /// Stop after this many executions (for tests), if set.
    pub max_execs: Option<u64>,
    /// Write regression and corpus files (off in tests).
    pub write_files: bool,
    /// If set, a check running longer than this many seconds is written as a `hang-`
    /// regression and the process exits with status 3 (for a supervisor to restart it:
    /// see [`crate::supervise`]).
    pub hang_secs: Option<u64>,
}

/// One failure found.
#[derive(Clone, Debug)]
pub struct Found {
    /// Its signature.
    pub signature: String,
    /// The seed whose input failed.
    pub seed: u64,
    /// The shrunk failure message.
    pub message: String,
    /// Where the regression file was written.
    pub file: Option<PathBuf>,
}

/// What a campaign did.
#[derive(Clone, Debug, Default)]
pub struct Summary {
    /// Inputs checked (replayed corpus and regression files included).
    pub execs: u64,
    /// Checks that failed (before deduplication by signature).
    pub failing_execs: u64,
    /// Distinct failures.
    pub found: Vec<Found>,
    /// Inputs added to the corpus.
    pub corpus_added: u64,
    /// Distinct features seen.
    pub features: usize,
    /// Wall-clock seconds.
    pub wall_secs: f64,
    /// CPU seconds of this process and its waited-for children (ptxas, opt), where the
    /// platform reports them (Linux `/proc/self/stat`).
    pub cpu_secs: Option<f64>,
}

/// CPU seconds used so far by this process and its children (Linux only).
pub fn cpu_seconds() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // Fields after the parenthesised command name: utime is the 14th field overall.
    let rest = &stat[stat.rfind(')')? + 2..];
    let f: Vec<u64> = rest
        .split_whitespace()
        .skip(11)
        .take(4)
        .filter_map(|x| x.parse().ok())
        .collect();
    // USER_HZ is 100 on every Linux this runs on.
    (f.len() == 4).then(|| f.iter().sum::<u64>() as f64 / 100.0)
}

/// FNV-1a, for file names.
pub fn hash(data: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in data {
        h = (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3);
    }
    h
}

/// A file-name fragment from a failure signature.
fn slug(sig: &str) -> String {
    let mut s: String = sig
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect();
    while s.contains("--") {
        s = s.replace("--", "-");
    }
    s.trim_matches('-').chars().take(48).collect()
}

/// The stored inputs of `target` under `what` (`seeds`, `corpus`, `regressions`), sorted.
pub fn stored_inputs(target: &Target, what: &str) -> Vec<PathBuf> {
    let dir = target_dir(what, target.name);
    let Ok(rd) = std::fs::read_dir(&dir) else {
        return Vec::new();
    };
    let ext = target.kind.ext();
    let mut v: Vec<PathBuf> = rd
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == ext))
        .collect();
    v.sort();
    v
}

struct Shared {
    features: Mutex<HashSet<String>>,
    signatures: Mutex<HashSet<String>>,
    summary: Mutex<Summary>,
    execs: AtomicU64,
    failing: AtomicU64,
    next_seed: AtomicU64,
    stop: AtomicBool,
}

/// Run a campaign of `target`; progress goes to stderr.
pub fn run(target: &'static Target, cfg: &Config) -> Summary {
    let start = Instant::now();
    let cpu0 = cpu_seconds();
    let shared = Shared {
        features: Mutex::new(HashSet::new()),
        signatures: Mutex::new(HashSet::new()),
        summary: Mutex::new(Summary::default()),
        execs: AtomicU64::new(0),
        failing: AtomicU64::new(0),
        next_seed: AtomicU64::new(cfg.seed),
        stop: AtomicBool::new(false),
    };
    // Known failures first: they are not news, and the corpus seeds the feature set.
    for what in ["regressions", "corpus"] {
        for path in stored_inputs(target, what) {
            if is_fatal_regression(&path) {
                continue; // it would abort or hang this campaign again
            }
            let Ok(data) = std::fs::read(&path) else {
                continue;
            };
            let Ok(input) = Input::from_file(target.kind, &data) else {
                eprintln!("{}: unreadable, skipped", path.display());
                continue;
            };
            shared.execs.fetch_add(1, Ordering::Relaxed);
            match run_check(target, &input) {
                Ok(fs) => shared.features.lock().unwrap().extend(fs),
                Err(e) => {
                    eprintln!("{}: still fails: {}", path.display(), first_line(&e));
                    shared.signatures.lock().unwrap().insert(signature(&e));
                }
            }
        }
    }
    let deadline = start + cfg.duration;
    std::thread::scope(|s| {
        for slot in 0..cfg.jobs.max(1) {
            let shared = &shared;
            s.spawn(move || {
                crate::supervise::set_slot(slot);
                worker(target, cfg, shared, deadline)
            });
        }
        // Progress every 30 seconds.
        let mut last = Instant::now();
        while !shared.stop.load(Ordering::Relaxed) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(200));
            if last.elapsed() >= Duration::from_secs(30) {
                last = Instant::now();
                eprintln!(
                    "{}: {:.0}s, {} execs, {} failing, {} features",
                    target.name,
                    start.elapsed().as_secs_f64(),
                    shared.execs.load(Ordering::Relaxed),
                    shared.failing.load(Ordering::Relaxed),
                    shared.features.lock().unwrap().len()
                );
            }
            if cfg
                .max_execs
                .is_some_and(|m| shared.execs.load(Ordering::Relaxed) >= m)
            {
                break;
            }
            if let Some(seed) = cfg
                .hang_secs
                .and_then(|h| crate::supervise::overdue(h * 1000))
            {
                let input = (target.generate)(seed);
                let msg = format!("hang: the check ran over {} s", cfg.hang_secs.unwrap_or(0));
                let file = cfg
                    .write_files
                    .then(|| write_regression(target, &input, "hang", &msg))
                    .flatten();
                eprintln!(
                    "{}: seed {seed}: {msg}; wrote {}; exiting for the supervisor",
                    target.name,
                    file.map_or("nothing".into(), |p| p.display().to_string())
                );
                crate::supervise::report_hang(seed);
                std::process::exit(3);
            }
            if let (Some(budget), Some(c0), Some(c)) = (cfg.cpu_budget, cpu0, cpu_seconds()) {
                if c - c0 >= budget {
                    break;
                }
            }
        }
        shared.stop.store(true, Ordering::Relaxed);
    });
    let mut summary = shared.summary.into_inner().unwrap();
    summary.execs = shared.execs.load(Ordering::Relaxed);
    summary.failing_execs = shared.failing.load(Ordering::Relaxed);
    summary.features = shared.features.into_inner().unwrap().len();
    summary.wall_secs = start.elapsed().as_secs_f64();
    summary.cpu_secs = cpu_seconds().zip(cpu0).map(|(a, b)| a - b);
    summary
}

fn first_line(s: &str) -> &str {
    s.lines().next().unwrap_or("")
}

fn worker(target: &'static Target, cfg: &Config, sh: &Shared, deadline: Instant) {
    while !sh.stop.load(Ordering::Relaxed) && Instant::now() < deadline {
        if cfg
            .max_execs
            .is_some_and(|m| sh.execs.load(Ordering::Relaxed) >= m)
        {
            sh.stop.store(true, Ordering::Relaxed);
            return;
        }
        let seed = sh.next_seed.fetch_add(1, Ordering::Relaxed);
        // Published until the end of this iteration, shrinking included: an abort
        // while shrinking is still this seed's.
        let _busy = crate::supervise::Busy::new(seed);
        crate::supervise::planted_fault(seed);
        let input = match protect(|| Ok((target.generate)(seed))) {
            Ok(i) => i,
            Err(e) => {
                // The generator itself failed: report it like any failure (no input to
                // shrink; the seed reproduces it).
                sh.failing.fetch_add(1, Ordering::Relaxed);
                let sig = format!("generator: {}", signature(&e));
                if sh.signatures.lock().unwrap().insert(sig.clone()) {
                    eprintln!("{}: seed {seed}: generator failed: {e}", target.name);
                    sh.summary.lock().unwrap().found.push(Found {
                        signature: sig,
                        seed,
                        message: e,
                        file: None,
                    });
                }
                continue;
            }
        };
        sh.execs.fetch_add(1, Ordering::Relaxed);
        match run_check(target, &input) {
            Ok(features) => {
                let mut known = sh.features.lock().unwrap();
                let new = features.iter().any(|f| !known.contains(f));
                known.extend(features);
                drop(known);
                if new && cfg.write_files {
                    let data = input.to_file();
                    let dir = target_dir("corpus", target.name);
                    let _ = std::fs::create_dir_all(&dir);
                    let path = dir.join(format!("{:016x}.{}", hash(&data), target.kind.ext()));
                    if std::fs::write(path, data).is_ok() {
                        sh.summary.lock().unwrap().corpus_added += 1;
                    }
                }
            }
            Err(e) => {
                sh.failing.fetch_add(1, Ordering::Relaxed);
                let sig = signature(&e);
                if !sh.signatures.lock().unwrap().insert(sig.clone()) {
                    continue;
                }
                eprintln!(
                    "{}: seed {seed}: new failure: {}; shrinking",
                    target.name,
                    first_line(&e)
                );
                let (small, msg) = shrink::shrink(target, input, e, cfg.shrink_budget);
                let file = cfg
                    .write_files
                    .then(|| write_regression(target, &small, &sig, &msg));
                if let Some(Some(p)) = &file {
                    eprintln!("{}: wrote {}", target.name, p.display());
                }
                sh.summary.lock().unwrap().found.push(Found {
                    signature: sig,
                    seed,
                    message: msg,
                    file: file.flatten(),
                });
            }
        }
    }
}

/// A regression that kills the process (`crash-*`, `hang-*`): `cargo test` replays it,
/// a campaign does not.
pub fn is_fatal_regression(path: &std::path::Path) -> bool {
    path.file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.starts_with("crash-") || n.starts_with("hang-"))
}

/// Write a (shrunk) failure as `regressions/<target>/<slug>-<hash>.<ext>`.
pub fn write_regression(target: &Target, input: &Input, sig: &str, msg: &str) -> Option<PathBuf> {
    let mut input = input.clone();
    if let Input::Kernel(c) = &mut input {
        c.meta.retain(|(k, _)| k != "failure");
        c.meta.push((
            "failure".into(),
            first_line(msg).chars().take(200).collect(),
        ));
    }
    let data = input.to_file();
    let dir = target_dir("regressions", target.name);
    std::fs::create_dir_all(&dir).ok()?;
    let path = dir.join(format!(
        "{}-{:08x}.{}",
        slug(sig),
        hash(&data) as u32,
        target.kind.ext()
    ));
    std::fs::write(&path, data).ok()?;
    Some(path)
}
