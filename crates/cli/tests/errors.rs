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
