//! Errors a person can act on (issue 25): every message is located in the input with the
//! source line and a caret, names what the text names (no internal ids, no Rust `Debug`
//! text), and no input — huge, endless, mutated or binary — makes `gyre` panic or abort.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

fn gyre_in(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_gyre"))
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .output()
        .expect("gyre runs")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A scratch directory for this test (removed at the end of the test that made it).
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("gyre-errors-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Exit code 1 (an error reported, not a panic's 101 or an abort's 134) and exactly
/// `want` on standard error.
fn assert_error(o: &Output, want: &str) {
    let err = stderr(o);
    assert_eq!(o.status.code(), Some(1), "stderr: {err}");
    assert_eq!(err, want);
}

#[test]
fn verifier_errors_are_located_with_the_line_and_a_caret() {
    let dir = scratch("verify");
    std::fs::write(
        dir.join("m2.gir"),
        "kernel @k(ptr.global, f32) {\nblock0(v0: ptr.global, v1: f32):\n    v2 = iconst.i32 1\n    store v1, v2\n    return\n}\n",
    )
    .unwrap();
    assert_error(
        &gyre_in(&dir, &["opt", "m2.gir"]),
        "m2.gir:4:5: error: kernel @k: store through i32, not a pointer\n    store v1, v2\n    ^\n",
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn parse_errors_suggest_escape_and_skip_a_bom() {
    let dir = scratch("parse");
    std::fs::write(
        dir.join("a.gir"),
        "\u{feff}kernel @k(i32) {\nblock0(v0: i32):\n    v1 = add v0, v0\n    return\n}\n",
    )
    .unwrap();
    assert_error(
        &gyre_in(&dir, &["opt", "a.gir"]),
        "a.gir:3:10: unknown opcode `add` (did you mean `iadd`?)\n    v1 = add v0, v0\n         ^\n",
    );
    // A BOM alone is no error.
    std::fs::write(
        dir.join("b.gir"),
        "\u{feff}kernel @k() {\nblock0:\n    return\n}\n",
    )
    .unwrap();
    let o = gyre_in(&dir, &["opt", "b.gir"]);
    assert!(o.status.success(), "{}", stderr(&o));
    // Binary garbage is escaped, not echoed raw to the terminal.
    std::fs::write(dir.join("c.gir"), b"\x1b[2J\x00\x07\xff\n").unwrap();
    assert_error(
        &gyre_in(&dir, &["opt", "c.gir"]),
        "c.gir:1:1: expected `global`, `func` or `kernel`, found `\\u{1b}`\n\\u{1b}[2J\\u{0}\\u{7}\\u{fffd}\n^\n",
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn llvm_errors_show_the_line_and_a_caret() {
    let dir = scratch("ll");
    std::fs::write(
        dir.join("d.ll"),
        "define void @f() {\n  %x = frobnicate i32 1\n  ret void\n}\n",
    )
    .unwrap();
    assert_error(
        &gyre_in(&dir, &["opt", "d.ll"]),
        "d.ll:2:8: unknown instruction `frobnicate`\n  %x = frobnicate i32 1\n       ^\n",
    );
    std::fs::write(
        dir.join("e.ll"),
        "\u{feff}define void @f() {\n  ret void\n}\n",
    )
    .unwrap();
    let o = gyre_in(&dir, &["opt", "e.ll"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn interpreter_faults_are_located_and_name_the_buffer() {
    let dir = scratch("fault");
    std::fs::write(
        dir.join("oob.gir"),
        "kernel @k(ptr.global) {\nblock0(v0: ptr.global):\n    v1 = iconst.i64 100\n    v2 = ptradd v0, v1, 4\n    v3 = load.i32 v2\n    return\n}\n",
    )
    .unwrap();
    let o = gyre_in(
        &dir,
        &[
            "run",
            "oob.gir",
            "--kernel",
            "k",
            "--buffer",
            "a=f32:4:zeros",
            "--arg",
            "0=@a",
        ],
    );
    assert_error(
        &o,
        "oob.gir:5:5: error: cta (0,0,0) thread (0,0,0) in @k block0 at `v3 = load.i32 v2`: \
         4-byte access at global address 0x100000190 is out of bounds: offset 400 of buffer \
         `a` (16 bytes)\n    v3 = load.i32 v2\n    ^\n",
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// Every way to ask for too much memory is an error message with exit code 1, checked
/// before allocating: no abort (134), no panic (101).
#[test]
fn huge_memory_is_an_error_never_an_abort() {
    let dir = scratch("huge");
    let kernel = "kernel @k() {\nblock0:\n    return\n}\n";
    let cases: &[(&str, String, &[&str], &str)] = &[
        (
            "global.gir",
            format!("global @g: global [4294967295 x i64] align 8\n{kernel}"),
            &[],
            "global.gir: error: resource limit: buffers, globals and shared memory need",
        ),
        (
            "shared.gir",
            format!("global @g: shared [4294967295 x i64] align 8\n{kernel}"),
            &[],
            "shared.gir: error: resource limit: the kernel needs 34359738368 bytes of shared \
             memory per CTA (0 of them dynamic); the limit is 232448 bytes",
        ),
        (
            "slot.gir",
            "kernel @k() {\n    slot0 = local 4294967295 align 4\nblock0:\n    v0 = slot_addr slot0\n    return\n}\n".to_string(),
            &["--block", "1024"],
            "slot.gir: error: resource limit: a thread's local frames need 8.0 GiB",
        ),
        (
            "buf.gir",
            "kernel @k(ptr.global) {\nblock0(v0: ptr.global):\n    return\n}\n".to_string(),
            &["--buffer", "a=i64:500000000:iota", "--arg", "0=@a"],
            "--buffer 'a=i64:500000000:iota': buffer larger than the",
        ),
        (
            "dyn.gir",
            kernel.to_string(),
            &["--dynamic-shared", "4000000000"],
            "the limit is 232448 bytes",
        ),
        (
            "small.gir",
            format!("global @g: global [1048576 x i32] align 4\n{kernel}"),
            &["--memory-limit", "1M"],
            "the limit is 1.0 MiB (`gyre run --memory-limit`)",
        ),
    ];
    for (file, src, extra, want) in cases {
        std::fs::write(dir.join(file), src).unwrap();
        let mut args = vec!["run", file, "--kernel", "k"];
        args.extend_from_slice(extra);
        let o = gyre_in(&dir, &args);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(1), "{file}: {err}");
        assert!(err.contains(want), "{file}: {err}");
    }
    // The same huge global runs when it fits the limit given.
    let o = gyre_in(
        &dir,
        &[
            "run",
            "small.gir",
            "--kernel",
            "k",
            "--memory-limit",
            "256M",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let o = gyre_in(
        &dir,
        &[
            "run",
            "small.gir",
            "--kernel",
            "k",
            "--memory-limit",
            "lots",
        ],
    );
    assert_eq!(o.status.code(), Some(2), "a bad size is a usage error");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn endless_input_is_cut_off() {
    let dir = scratch("endless");
    for cmd in ["opt", "compile", "print"] {
        let args = if cmd == "print" {
            vec![cmd, "cfg", "/dev/zero"]
        } else {
            vec![cmd, "/dev/zero"]
        };
        let o = gyre_in(&dir, &args);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(1), "{cmd}: {err}");
        assert!(
            err.contains("/dev/zero: input larger than 268435456 bytes"),
            "{cmd}: {err}"
        );
    }
    // A buffer file larger than the buffer (here endless) is refused, not read.
    std::fs::write(
        dir.join("k.gir"),
        "kernel @k(ptr.global) {\nblock0(v0: ptr.global):\n    return\n}\n",
    )
    .unwrap();
    let o = gyre_in(
        &dir,
        &[
            "run",
            "k.gir",
            "--kernel",
            "k",
            "--buffer",
            "a=i32:4:/dev/zero",
            "--arg",
            "0=@a",
        ],
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    // Refused before reading: not a regular file.
    assert!(
        stderr(&o).contains("/dev/zero is not a regular file"),
        "{}",
        stderr(&o)
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// A small deterministic generator (xorshift64*), so every run mutates the same way.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// One mutation of `src`: flip a byte, delete, duplicate or swap bytes, or delete,
/// duplicate or swap lines.
fn mutate(src: &[u8], rng: &mut Rng) -> Vec<u8> {
    let mut out = src.to_vec();
    for _ in 0..1 + rng.below(3) {
        if out.is_empty() {
            break;
        }
        let i = rng.below(out.len());
        match rng.below(7) {
            0 => out[i] ^= 1 << rng.below(8),
            1 => {
                let n = 1 + rng.below(8).min(out.len() - i - 1);
                out.drain(i..i + n);
            }
            2 => {
                let n = 1 + rng.below(8).min(out.len() - i - 1);
                let piece = out[i..i + n].to_vec();
                out.splice(i..i, piece);
            }
            3 => out[i] = rng.next() as u8,
            op => {
                let mut lines: Vec<Vec<u8>> =
                    out.split(|&b| b == b'\n').map(<[u8]>::to_vec).collect();
                let a = rng.below(lines.len());
                let b = rng.below(lines.len());
                match op {
                    4 => {
                        lines.remove(a);
                    }
                    5 => {
                        let l = lines[a].clone();
                        lines.insert(b, l);
                    }
                    _ => lines.swap(a, b),
                }
                out = lines.join(&b'\n');
            }
        }
    }
    out
}

/// Mutated examples and filetest inputs through `opt`, `compile`, `print` and `run`
/// (a few hundred cases, fixed seed): every run exits 0 or 1 with a message, never a
/// panic (101), an abort (134) or a signal.
#[test]
fn mutated_inputs_never_panic_or_abort() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut inputs: Vec<PathBuf> = Vec::new();
    for dir in ["examples", "crates/filetests/filetests"] {
        let mut work = vec![root.join(dir)];
        while let Some(d) = work.pop() {
            for e in std::fs::read_dir(&d).unwrap() {
                let p = e.unwrap().path();
                if p.is_dir() {
                    work.push(p);
                } else if p.extension().is_some_and(|x| x == "gir" || x == "ll") {
                    inputs.push(p);
                }
            }
        }
    }
    inputs.sort();
    assert!(inputs.len() >= 20, "inputs found: {}", inputs.len());
    let dir = scratch("mutate");
    let mut rng = Rng(0x5eed_1234_abcd_0001);
    let mut failures = Vec::new();
    let mut exits = [0usize; 2];
    let cases = 400;
    for case in 0..cases {
        let src_path = &inputs[rng.below(inputs.len())];
        let src = std::fs::read(src_path).unwrap();
        let mutated = mutate(&src, &mut rng);
        let ext = src_path.extension().unwrap().to_str().unwrap();
        let file = format!("m{case}.{ext}");
        std::fs::write(dir.join(&file), &mutated).unwrap();
        let args: Vec<&str> = match case % 4 {
            0 => vec!["opt", &file],
            1 => vec!["compile", &file],
            2 => vec!["print", "loops", &file],
            // A kernel name the mutation may have kept; an unknown one is an error too.
            _ => vec!["run", &file, "--kernel", "k", "--step-limit", "100000"],
        };
        let o = gyre_in(&dir, &args);
        let err = stderr(&o);
        let ok = matches!(o.status.code(), Some(0 | 1)) && !err.contains("panicked");
        if let Some(c @ (0 | 1)) = o.status.code() {
            exits[c as usize] += 1;
        }
        if !ok {
            failures.push(format!(
                "{} (from {}): {:?} exited {:?}: {err}",
                file,
                src_path.display(),
                args,
                o.status.code()
            ));
        } else {
            let _ = std::fs::remove_file(dir.join(&file));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {cases} mutated inputs crashed gyre (kept in {}):\n{}",
        failures.len(),
        dir.display(),
        failures.join("\n")
    );
    // Both outcomes happen: mutations that still parse, and ones that are rejected.
    assert!(
        exits[0] >= 20 && exits[1] >= 100,
        "exit 0/1 counts: {exits:?}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
