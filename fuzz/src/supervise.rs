//! Crash and hang bookkeeping for campaigns run as child processes.
//!
//! A panic is caught ([`crate::protect`]), but a stack overflow, an `abort` or an
//! out-of-memory abort kills the whole process, and an endless loop stalls a worker for
//! good. So `cargo xtask fuzz` runs each campaign in a child process and supervises it
//! (src/bin/campaign.rs). In the child, each worker publishes the seed it is checking
//! ([`begin`], [`end`]); a `SIGABRT` handler ([`arm`]) writes the seed of the thread that
//! aborted to a state file, and the campaign's monitor thread writes the seed of a check
//! that has run too long ([`overdue`], [`report_hang`]) and exits. The supervisor then
//! reads the state ([`read_state`]), keeps the input as a regression and starts a new
//! child after it.

use std::cell::Cell;
use std::path::Path;
use std::sync::atomic::{AtomicI32, AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

/// Workers that can publish a seed (more are run but not tracked).
pub const SLOTS: usize = 64;

/// Seed + 1 of the check each worker runs (0: none).
static SEEDS: [AtomicU64; SLOTS] = [const { AtomicU64::new(0) }; SLOTS];
/// When that check started, in milliseconds since the Unix epoch.
static STARTED: [AtomicU64; SLOTS] = [const { AtomicU64::new(0) }; SLOTS];
/// Checks started, for the supervisor's count of a killed child's executions.
static EXECS: AtomicU64 = AtomicU64::new(0);
/// The state file's descriptor (-1: not armed).
static STATE_FD: AtomicI32 = AtomicI32::new(-1);

thread_local! {
    // Const-initialized and without a destructor, so the signal handler may read it.
    static SLOT: Cell<usize> = const { Cell::new(usize::MAX) };
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// This thread is worker `slot` (0-based).
pub fn set_slot(slot: usize) {
    SLOT.with(|s| s.set(slot));
}

/// Publishes `seed` as the current worker's from [`Busy::new`] until dropped.
pub struct Busy(());

impl Busy {
    /// The current worker starts on `seed`.
    pub fn new(seed: u64) -> Busy {
        begin(seed);
        Busy(())
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        end();
    }
}

/// The current worker starts checking `seed`.
pub fn begin(seed: u64) {
    EXECS.fetch_add(1, Ordering::Relaxed);
    let slot = SLOT.with(Cell::get);
    if slot < SLOTS {
        STARTED[slot].store(now_ms(), Ordering::Relaxed);
        SEEDS[slot].store(seed.wrapping_add(1), Ordering::Release);
    }
}

/// The current worker finished with its seed.
pub fn end() {
    let slot = SLOT.with(Cell::get);
    if slot < SLOTS {
        SEEDS[slot].store(0, Ordering::Release);
    }
}

/// A check that has run longer than `limit_ms`: its seed.
pub fn overdue(limit_ms: u64) -> Option<u64> {
    let now = now_ms();
    (0..SLOTS).find_map(|i| {
        let s = SEEDS[i].load(Ordering::Acquire);
        let t = STARTED[i].load(Ordering::Relaxed);
        (s != 0 && now.saturating_sub(t) > limit_ms).then(|| s - 1)
    })
}

/// The largest seed being checked (0 if none).
fn max_seed() -> u64 {
    SEEDS
        .iter()
        .map(|s| s.load(Ordering::Acquire).saturating_sub(1))
        .max()
        .unwrap_or(0)
}

/// A fixed buffer to format a state line in without allocating (signal handlers).
struct Line {
    buf: [u8; 128],
    n: usize,
}

impl Line {
    fn put(&mut self, bytes: &[u8]) {
        for &b in bytes {
            if self.n < self.buf.len() {
                self.buf[self.n] = b;
                self.n += 1;
            }
        }
    }

    fn num(&mut self, v: Option<u64>) {
        let Some(mut v) = v else {
            self.put(b"-");
            return;
        };
        let mut d = [0u8; 20];
        let mut k = d.len();
        loop {
            k -= 1;
            d[k] = b'0' + (v % 10) as u8;
            v /= 10;
            if v == 0 {
                break;
            }
        }
        self.put(&d[k..]);
    }
}

/// Write `<kind> <seed|-> <max seed> <execs>` to the state file, with async-signal-safe
/// calls only.
fn write_state(kind: &[u8], seed: Option<u64>) {
    let fd = STATE_FD.load(Ordering::Relaxed);
    if fd < 0 {
        return;
    }
    let mut l = Line {
        buf: [0; 128],
        n: 0,
    };
    l.put(kind);
    l.put(b" ");
    l.num(seed);
    l.put(b" ");
    l.num(Some(max_seed()));
    l.put(b" ");
    l.num(Some(EXECS.load(Ordering::Relaxed)));
    l.put(b"\n");
    // SAFETY: `write` and `fsync` are async-signal-safe; `l.buf[..l.n]` is initialized.
    unsafe {
        libc::write(fd, l.buf.as_ptr().cast(), l.n);
        libc::fsync(fd);
    }
}

extern "C" fn on_abort(_sig: libc::c_int) {
    let slot = SLOT.try_with(Cell::get).unwrap_or(usize::MAX);
    let seed = (slot < SLOTS)
        .then(|| SEEDS[slot].load(Ordering::Acquire))
        .filter(|&s| s != 0)
        .map(|s| s - 1);
    write_state(b"abort", seed);
    // Returning lets `abort` reset the default action and raise the signal again.
}

/// Open (truncate) the state file and install the `SIGABRT` handler. A stack overflow is
/// reported by Rust's own `SIGSEGV` handler, which then aborts, so it arrives here too.
pub fn arm(path: &Path) -> std::io::Result<()> {
    use std::os::fd::IntoRawFd;
    let f = std::fs::File::create(path)?;
    STATE_FD.store(f.into_raw_fd(), Ordering::Relaxed);
    // SAFETY: installing a handler that only does async-signal-safe work.
    unsafe {
        let mut sa: libc::sigaction = std::mem::zeroed();
        sa.sa_sigaction = on_abort as *const () as usize;
        sa.sa_flags = libc::SA_ONSTACK;
        libc::sigemptyset(&mut sa.sa_mask);
        if libc::sigaction(libc::SIGABRT, &sa, std::ptr::null_mut()) != 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

/// Record that the check of `seed` hangs (called by the monitor before it exits).
pub fn report_hang(seed: u64) {
    write_state(b"hang", Some(seed));
}

/// The supervisor's test hook: `GYRE_FUZZ_ABORT_AT_SEED=N` aborts the process and
/// `GYRE_FUZZ_HANG_AT_SEED=N` sleeps for an hour when a worker starts on seed `N`.
pub fn planted_fault(seed: u64) {
    use std::sync::OnceLock;
    static FAULTS: OnceLock<(Option<u64>, Option<u64>)> = OnceLock::new();
    let (abort, hang) = *FAULTS.get_or_init(|| {
        let var = |k: &str| std::env::var(k).ok().and_then(|v| v.parse().ok());
        (
            var("GYRE_FUZZ_ABORT_AT_SEED"),
            var("GYRE_FUZZ_HANG_AT_SEED"),
        )
    });
    if abort == Some(seed) {
        std::process::abort();
    }
    if hang == Some(seed) {
        std::thread::sleep(std::time::Duration::from_secs(3600));
    }
}

/// What a killed child left in its state file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct State {
    /// `abort` or `hang`.
    pub kind: String,
    /// The seed whose check aborted or hung (None: the abort came from outside a check).
    pub seed: Option<u64>,
    /// The largest seed any worker was checking.
    pub max_seed: u64,
    /// Checks the child started.
    pub execs: u64,
}

/// Parse a state file (the last line counts).
pub fn read_state(path: &Path) -> Option<State> {
    let text = std::fs::read_to_string(path).ok()?;
    let line = text.lines().rfind(|l| !l.trim().is_empty())?;
    let mut it = line.split_whitespace();
    let kind = it.next()?.to_string();
    let seed = match it.next()? {
        "-" => None,
        s => Some(s.parse().ok()?),
    };
    let max_seed = it.next()?.parse().ok()?;
    let execs = it.next()?.parse().ok()?;
    Some(State {
        kind,
        seed,
        max_seed,
        execs,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn state_lines_parse() {
        let dir = std::env::temp_dir().join(format!("gyre-fuzz-state-{}", std::process::id()));
        std::fs::write(&dir, "abort 17 20 300\n").unwrap();
        assert_eq!(
            read_state(&dir),
            Some(State {
                kind: "abort".into(),
                seed: Some(17),
                max_seed: 20,
                execs: 300
            })
        );
        std::fs::write(&dir, "abort - 0 5\n").unwrap();
        assert_eq!(read_state(&dir).unwrap().seed, None);
        std::fs::write(&dir, "garbage").unwrap();
        assert_eq!(read_state(&dir), None);
        let _ = std::fs::remove_file(&dir);
    }
}
