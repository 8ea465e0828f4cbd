//! Whole-process measurements: a command's wall time and peak resident memory from
//! `/usr/bin/time`, under a time limit (`timeout -s KILL`) and an address-space limit
//! (`ulimit -v`), with time-outs and crashes told apart.

use std::path::Path;
use std::process::{Command, Stdio};

/// How one process run ended.
#[derive(Clone, Debug, PartialEq)]
pub enum Outcome {
    /// Exited with status 0.
    Ok {
        /// Wall seconds.
        wall: f64,
        /// Peak resident set size, KiB.
        rss_kib: u64,
    },
    /// Killed at the time limit (seconds).
    Timeout(f64),
    /// Failed otherwise: a signal, a non-zero status or an allocation failure at the
    /// memory limit; the text says which, with the last line of standard error.
    Crash(String),
    /// Not run (the tool is missing, or a smaller size already timed out).
    Skipped,
}

impl Outcome {
    /// Wall seconds when it finished.
    pub fn wall(&self) -> Option<f64> {
        match self {
            Outcome::Ok { wall, .. } => Some(*wall),
            _ => None,
        }
    }
    /// Peak memory in MiB when it finished.
    pub fn mib(&self) -> Option<f64> {
        match self {
            Outcome::Ok { rss_kib, .. } => Some(*rss_kib as f64 / 1024.0),
            _ => None,
        }
    }
    /// A table cell for the wall time: seconds, `timeout (> N s)`, `crash: ...` or `-`.
    pub fn wall_cell(&self) -> String {
        match self {
            Outcome::Ok { wall, .. } => format!("{wall:.2} s"),
            Outcome::Timeout(limit) => format!("timeout (> {limit:.0} s)"),
            Outcome::Crash(why) => format!("crash: {why}"),
            Outcome::Skipped => "-".into(),
        }
    }
    /// A table cell for the peak memory.
    pub fn mem_cell(&self) -> String {
        match self.mib() {
            Some(m) => format!("{m:.0} MiB"),
            None => "-".into(),
        }
    }
}

/// Parse what `/usr/bin/time -f "%e %M %x"` wrote (possibly after a line such as
/// `Command terminated by signal 9`), given the command's exit status as the shell saw
/// it, the time limit and the command's standard error.
pub fn parse_time_output(time_out: &str, status: Option<i32>, limit: f64, stderr: &str) -> Outcome {
    let signal = time_out.lines().find_map(|l| {
        l.strip_prefix("Command terminated by signal ")
            .and_then(|s| s.trim().parse::<i32>().ok())
    });
    let last = time_out.lines().rev().find(|l| !l.trim().is_empty());
    let nums: Vec<f64> = last
        .map(|l| {
            l.split_whitespace()
                .filter_map(|t| t.parse::<f64>().ok())
                .collect()
        })
        .unwrap_or_default();
    let err_line = stderr
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .trim();
    let err_line: String = err_line.chars().take(80).collect();
    // `timeout -s KILL` kills the command, then itself with the same signal.
    if signal == Some(9) || status == Some(137) || status == Some(124) {
        return Outcome::Timeout(limit);
    }
    if let Some(sig) = signal {
        let name = match sig {
            6 => "SIGABRT",
            11 => "SIGSEGV (stack overflow?)",
            _ => "signal",
        };
        return Outcome::Crash(format!("{name} {sig}; {err_line}"));
    }
    match (status, nums.as_slice()) {
        (Some(0), [wall, rss, ..]) => Outcome::Ok {
            wall: *wall,
            rss_kib: *rss as u64,
        },
        (s, _) => Outcome::Crash(format!(
            "exit {}; {err_line}",
            s.map_or("?".to_string(), |s| s.to_string())
        )),
    }
}

/// Run `program args` with standard output to `stdout_to` (or discarded), under
/// `/usr/bin/time`, `limit` seconds and `mem_gib` GiB of address space; returns the
/// outcome and the command's standard error.
pub fn measure(
    program: &Path,
    args: &[&str],
    stdout_to: Option<&Path>,
    limit: f64,
    mem_gib: u64,
    scratch: &Path,
) -> (Outcome, String) {
    let time_file = scratch.join("time.txt");
    let err_file = scratch.join("stderr.txt");
    let _ = std::fs::remove_file(&time_file);
    let script = format!("ulimit -v {}; exec \"$@\"", mem_gib * 1024 * 1024);
    let mut cmd = Command::new("/usr/bin/time");
    cmd.arg("-o")
        .arg(&time_file)
        .args(["-f", "%e %M %x", "timeout", "-s", "KILL"])
        .arg(format!("{limit}"))
        .args(["sh", "-c", &script, "sh"])
        .arg(program)
        .args(args);
    let Ok(err) = std::fs::File::create(&err_file) else {
        return (
            Outcome::Crash("cannot create a scratch file".into()),
            String::new(),
        );
    };
    cmd.stderr(err);
    match stdout_to.map(std::fs::File::create) {
        Some(Ok(f)) => {
            cmd.stdout(f);
        }
        Some(Err(e)) => {
            return (
                Outcome::Crash(format!("cannot create the output file: {e}")),
                String::new(),
            )
        }
        None => {
            cmd.stdout(Stdio::null());
        }
    }
    let status = match cmd.status() {
        Ok(s) => s,
        Err(e) => {
            return (
                Outcome::Crash(format!("cannot start /usr/bin/time: {e}")),
                String::new(),
            )
        }
    };
    let time_out = std::fs::read_to_string(&time_file).unwrap_or_default();
    let stderr = std::fs::read_to_string(&err_file).unwrap_or_default();
    let o = parse_time_output(&time_out, status.code(), limit, &stderr);
    (o, stderr)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_success_timeout_and_crash() {
        assert_eq!(
            parse_time_output("1.25 20480 0\n", Some(0), 10.0, ""),
            Outcome::Ok {
                wall: 1.25,
                rss_kib: 20480
            }
        );
        assert_eq!(
            parse_time_output(
                "Command terminated by signal 9\n10.01 1624 0\n",
                Some(137),
                10.0,
                ""
            ),
            Outcome::Timeout(10.0)
        );
        let c = parse_time_output(
            "Command terminated by signal 11\n3.00 1632 0\n",
            Some(139),
            10.0,
            "Stack dump:\n",
        );
        assert!(
            matches!(&c, Outcome::Crash(s) if s.contains("SIGSEGV") && s.contains("Stack dump")),
            "{c:?}"
        );
        let e = parse_time_output("0.10 900 1\n", Some(1), 10.0, "LLVM ERROR: out of memory\n");
        assert!(
            matches!(&e, Outcome::Crash(s) if s.contains("exit 1") && s.contains("out of memory")),
            "{e:?}"
        );
        assert_eq!(Outcome::Timeout(60.0).wall_cell(), "timeout (> 60 s)");
        assert_eq!(Outcome::Skipped.mem_cell(), "-");
    }

    #[test]
    fn measures_a_real_process_and_its_time_limit() {
        let dir = std::env::temp_dir().join(format!("gyre-perf-proc-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let ok = measure(Path::new("true"), &[], None, 10.0, 1, &dir).0;
        assert!(matches!(ok, Outcome::Ok { .. }), "{ok:?}");
        let slow = measure(Path::new("sleep"), &["5"], None, 0.5, 1, &dir).0;
        assert_eq!(slow, Outcome::Timeout(0.5));
        let bad = measure(Path::new("false"), &[], None, 10.0, 1, &dir).0;
        assert!(matches!(bad, Outcome::Crash(_)), "{bad:?}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
