//! End-to-end tests of the `gyre` binary: every subcommand on the shipped examples, and
//! bad input of every kind giving a located message, a non-zero exit and no panic.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn gyre(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_gyre"))
        .args(args)
        .current_dir(root())
        .output()
        .expect("gyre runs")
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A failure: non-zero exit, no panic, and `needle` in the message.
fn assert_fails_with(o: &Output, needle: &str) {
    let err = stderr(o);
    assert!(
        !o.status.success(),
        "expected failure, got success; stderr: {err}"
    );
    assert!(!err.contains("panicked"), "panic: {err}");
    assert!(err.contains(needle), "expected {needle:?} in: {err}");
}

fn examples() -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(root().join("examples"))
        .expect("examples/")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "gir"))
        .map(|p| format!("examples/{}", p.file_name().unwrap().to_string_lossy()))
        .collect();
    v.sort();
    v
}

#[test]
fn opt_prints_what_it_parsed() {
    for ex in examples() {
        let o = gyre(&["opt", &ex]);
        assert!(o.status.success(), "{ex}: {}", stderr(&o));
        let src = std::fs::read_to_string(root().join(&ex)).unwrap();
        let reparsed = gyre_ir::parse_module(&src).unwrap().to_string();
        assert_eq!(stdout(&o), reparsed, "{ex}");
    }
}

#[test]
fn opt_runs_pipelines_with_reports() {
    for ex in examples() {
        let o = gyre(&[
            "opt",
            &ex,
            "--passes=loop-simplify,lcssa",
            "--verify-each",
            "--stats",
            "--time-passes",
            "--remarks",
        ]);
        assert!(o.status.success(), "{ex}: {}", stderr(&o));
        let err = stderr(&o);
        assert!(err.contains("Pass execution timing report"), "{err}");
        assert!(
            err.contains("loop-simplify") && err.contains("lcssa"),
            "{err}"
        );
    }
    // search.gir's loop exits to a block also reached from outside: a dedicated exit is split.
    let o = gyre(&[
        "opt",
        "examples/search.gir",
        "--passes=loop-simplify",
        "--stats",
    ]);
    assert!(stderr(&o).contains("NumExitsSplit"), "{}", stderr(&o));
    let o = gyre(&[
        "opt",
        "examples/saxpy.gir",
        "--passes=lcssa",
        "--print-after=lcssa",
    ]);
    assert!(
        stderr(&o).contains("IR Dump After lcssa on @saxpy"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn knobs_and_passes_are_listed_and_checked() {
    let o = gyre(&["knobs"]);
    assert!(o.status.success());
    // Only knobs some pass reads are listed.
    assert!(stdout(&o).contains("verify-loop-lcssa"), "{}", stdout(&o));
    assert!(
        stdout(&o).contains("rotation-max-header-size"),
        "{}",
        stdout(&o)
    );
    assert!(stdout(&o).contains("iv-loop-level"), "{}", stdout(&o));
    assert!(
        stdout(&o).contains("unswitch-uniform-only"),
        "{}",
        stdout(&o)
    );
    for &(k, _) in gyre_transforms::knobs::PLANNED_KNOBS {
        assert!(
            !stdout(&o).contains(k),
            "{k} listed, but its pass does not exist"
        );
    }
    let o = gyre(&["passes"]);
    assert!(stdout(&o).contains("loop-simplify") && stdout(&o).contains("lcssa"));
    assert_fails_with(
        &gyre(&["opt", "examples/saxpy.gir", "-C", "verify-loop-lcssa=deep"]),
        "bad value 'deep' for knob 'verify-loop-lcssa'",
    );
    if let Some(&(k, pass)) = gyre_transforms::knobs::PLANNED_KNOBS.first() {
        assert_fails_with(
            &gyre(&["opt", "examples/saxpy.gir", "-C", &format!("{k}=1")]),
            &format!("knob '{k}' belongs to pass '{pass}', which Gyre does not have yet"),
        );
    }
    assert_fails_with(
        &gyre(&["opt", "examples/saxpy.gir", "-C", "no-such-knob=1"]),
        "unknown knob 'no-such-knob'",
    );
    assert_fails_with(
        &gyre(&[
            "opt",
            "examples/saxpy.gir",
            "--passes=loop-simplify,frobnicate",
        ]),
        "pipeline:15: unknown pass 'frobnicate'; available passes: loop-simplify",
    );
    assert_fails_with(
        &gyre(&["opt", "examples/saxpy.gir", "--passes=loop(lcssa"]),
        "unclosed '('",
    );
}

#[test]
fn print_analyses() {
    let o = gyre(&["print", "loops", "examples/stencil2d.gir"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("Loop at depth 3"), "{out}");
    let o = gyre(&["print", "uniformity", "examples/tid_branch.gir"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(
        out.contains("brif v11, block3, block4 ; divergent"),
        "{out}"
    );
    let o = gyre(&["print", "uniformity", "examples/invariant_branch.gir"]);
    assert!(
        stdout(&o).contains("brif v13, block3, block4 ; uniform"),
        "{}",
        stdout(&o)
    );
    let o = gyre(&["print", "scev", "examples/stencil2d.gir"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(
        out.contains("Loop %block1: backedge-taken count is (0 smax %v2)"),
        "{out}"
    );
    assert!(
        out.contains("Loop %block3: Unpredictable backedge-taken count."),
        "{out}"
    );
    for what in ["cfg", "domtree", "postdomtree"] {
        let o = gyre(&["print", what, "examples/matmul_tiled.gir"]);
        assert!(o.status.success(), "{what}: {}", stderr(&o));
        assert!(!stdout(&o).is_empty());
    }
}

#[test]
fn run_saxpy_in_the_interpreter() {
    let o = gyre(&[
        "run",
        "examples/saxpy.gir",
        "--kernel",
        "saxpy",
        "--grid",
        "2",
        "--block",
        "4",
        "--arg",
        "0=@x",
        "--arg",
        "1=@y",
        "--arg",
        "2=2.0",
        "--arg",
        "3=6",
        "--buffer",
        "x=f32:8:iota",
        "--buffer",
        "y=f32:8:iota",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    // y[i] = 2 * i + i for i < 6; the last two are untouched.
    assert_eq!(
        stdout(&o).trim(),
        "y = [0.0, 3.0, 6.0, 9.0, 12.0, 15.0, 6.0, 7.0]"
    );
    // Out of bounds: the buffer is shorter than n.
    let o = gyre(&[
        "run",
        "examples/saxpy.gir",
        "--kernel",
        "saxpy",
        "--block",
        "8",
        "--arg",
        "0=@x",
        "--arg",
        "1=@y",
        "--arg",
        "2=1",
        "--arg",
        "3=8",
        "--buffer",
        "x=f32:4:zeros",
        "--buffer",
        "y=f32:8:zeros",
    ]);
    assert_fails_with(&o, "out of bounds");
    assert_fails_with(
        &gyre(&[
            "run",
            "examples/saxpy.gir",
            "--kernel",
            "saxpy",
            "--arg",
            "0=@x",
        ]),
        "missing --arg",
    );
    assert_fails_with(
        &gyre(&["run", "examples/saxpy.gir", "--kernel", "nope"]),
        "no function named @nope",
    );
}

#[test]
fn llvm_round_trip_through_the_cli() {
    let o = gyre(&["opt", "examples/stencil2d.gir", "--emit", "llvm"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let dir = std::env::temp_dir().join(format!("gyre-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let ll = dir.join("stencil.ll");
    std::fs::write(&ll, stdout(&o)).unwrap();
    let o = gyre(&[
        "opt",
        ll.to_str().unwrap(),
        "--passes=loop-simplify,lcssa",
        "--verify-each",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("kernel @stencil2d"));
    let bad = dir.join("bad.ll");
    std::fs::write(
        &bad,
        "define void @f() {\n  %x = invoke void @g() to label %a unwind label %b\n}\n",
    )
    .unwrap();
    assert_fails_with(&gyre(&["opt", bad.to_str().unwrap()]), "bad.ll:2:");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn bad_input_is_located_never_a_panic() {
    let dir = std::env::temp_dir().join(format!("gyre-cli-bad-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let cases: &[(&str, &str)] = &[
        ("kernel @k() {\nblock0:\n    v1 = iadd v2\n}\n", "3:10"),
        ("kernel @k() {\nblock0:\n    jump block9\n}\n", "block9"),
        ("\u{0}\u{1}garbage", "1:1"),
        (
            "kernel @k(i32) {\nblock0(v0: i32):\n    v1 = fadd v0, v0\n    return\n}\n",
            "case3.gir:3:5: error: kernel @k: fadd needs equal float types",
        ),
    ];
    for (i, (src, needle)) in cases.iter().enumerate() {
        let p = dir.join(format!("case{i}.gir"));
        std::fs::write(&p, src).unwrap();
        assert_fails_with(&gyre(&["opt", p.to_str().unwrap()]), needle);
    }
    assert_fails_with(&gyre(&["opt", "/no/such/file.gir"]), "cannot read");
    let o = gyre(&["frobnicate"]);
    assert!(!o.status.success() && !stderr(&o).contains("panicked"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn compile_examples_for_every_target_with_and_without_o() {
    let ptxas = gyre_test_tools::require(
        gyre_test_tools::Tool::Ptxas,
        "compile_examples_for_every_target_with_and_without_o (ptxas part)",
    );
    for ex in examples() {
        for sm in ["70", "80", "90"] {
            for opt in [false, true] {
                let mut args = vec!["compile", ex.as_str(), "--sm", sm, "--verify-each"];
                if opt {
                    args.push("-O");
                }
                let o = gyre(&args);
                assert!(o.status.success(), "{ex} sm_{sm} -O={opt}: {}", stderr(&o));
                let ptx = stdout(&o);
                assert!(ptx.contains(&format!(".target sm_{sm}")), "{ptx}");
                let Some(ptxas) = &ptxas else { continue };
                if let Err(msg) = gyre_test_tools::run_ptxas(ptxas, &ptx, &format!("sm_{sm}")) {
                    panic!("{ex} sm_{sm} -O={opt}: {msg}\n{ptx}");
                }
            }
        }
    }
    assert_fails_with(
        &gyre(&["compile", "examples/saxpy.gir", "--sm", "91"]),
        "'91' is not a supported target; supported: 70, 72, 75, 80, 86, 87, 89, 90, 100, 120",
    );
}

/// `gyre run` shows device printf output before the buffers, and on a failed assert
/// the output so far and CUDA's message.
#[test]
fn run_shows_printf_output_and_failed_asserts() {
    let file = "crates/filetests/filetests/import/syscalls/printf-assert.ll";
    let o = gyre(&["run", file, "--kernel", "k", "--block", "2", "--arg", "0=5"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stdout(&o), "x = 5\nx = 5\n");
    let json = std::env::temp_dir().join(format!("gyre-cli-printf-{}.json", std::process::id()));
    let o = gyre(&[
        "run",
        file,
        "--kernel",
        "k",
        "--arg",
        "0=5",
        "--json",
        json.to_str().expect("utf-8 temp path"),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = std::fs::read_to_string(&json).expect("json written");
    let _ = std::fs::remove_file(&json);
    assert!(text.contains("\"printf\": \"x = 5\\n\""), "{text}");
    // x = 9: thread 0 prints, then fails the assertion; thread 1 never runs.
    let o = gyre(&["run", file, "--kernel", "k", "--block", "2", "--arg", "0=9"]);
    assert_fails_with(
        &o,
        "a.cu:7: void k(): block: [0,0,0], thread: [0,0,0] Assertion `x < 9` failed.",
    );
    assert_eq!(stdout(&o), "x = 9\n");
}

/// `.toy` files (docs/toy.md) are compiled by the toy front end: `gyre compile` emits
/// PTX, `gyre run` runs a kernel, and errors are located in the program.
#[test]
fn toy_programs_compile_and_run() {
    let o = gyre(&["compile", "-O", "--sm", "80", "examples/matmul_tiled.toy"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains(".entry matmul_tiled"), "{}", stdout(&o));
    let o = gyre(&[
        "run",
        "examples/saxpy.toy",
        "--kernel",
        "saxpy",
        "--grid",
        "1",
        "--block",
        "4",
        "--arg",
        "0=@x",
        "--arg",
        "1=@y",
        "--arg",
        "2=2.0",
        "--arg",
        "3=6",
        "--buffer",
        "x=f32:8:iota",
        "--buffer",
        "y=f32:8:iota",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    // Four threads cover six elements with the grid-stride loop.
    assert_eq!(
        stdout(&o).trim(),
        "y = [0.0, 3.0, 6.0, 9.0, 12.0, 15.0, 6.0, 7.0]"
    );
    let dir = std::env::temp_dir().join(format!("gyre-cli-toy-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let bad = dir.join("bad.toy");
    std::fs::write(&bad, "kernel k(n: i32) {\n    let x: f32 = n;\n}\n").expect("write");
    let o = gyre(&["compile", bad.to_str().expect("utf-8 temp path")]);
    let _ = std::fs::remove_dir_all(&dir);
    assert_fails_with(&o, "bad.toy:2:18: error: mismatched types: `x` is f32 but the value is i32\n        let x: f32 = n;\n                     ^");
}

/// `gyre compile -O` runs loop-reduce after the `-O` pipeline (as llc runs LSR before
/// emission): in the loop `-O` unrolled by two, accesses step pointers by 8 bytes
/// (`add.s64 %rd4, %rd4, 8`); `-C disable-lsr=true` leaves it out (no remark, no such
/// step); `gyre opt -O` does not run it; `-passes=` runs what it names.
#[test]
fn compile_o_runs_loop_reduce_unless_disabled() {
    let file = "crates/filetests/filetests/opt/loop-reduce/const-offsets.gir";
    let on = gyre(&["compile", "-O", "--remarks", file]);
    assert!(on.status.success(), "{}", stderr(&on));
    assert!(stderr(&on).contains("Reduced"), "{}", stderr(&on));
    let ptx = stdout(&on);
    assert!(ptx.contains(", 8;"), "{ptx}");
    let off = gyre(&["compile", "-O", "--remarks", "-C", "disable-lsr=true", file]);
    assert!(off.status.success(), "{}", stderr(&off));
    assert!(!stderr(&off).contains("loop-reduce"), "{}", stderr(&off));
    let ptx_off = stdout(&off);
    assert!(!ptx_off.contains(", 8;"), "{ptx_off}");
    let opt = gyre(&["opt", "-O", "--remarks", file]);
    assert!(opt.status.success() && !stderr(&opt).contains("loop-reduce"));
    let passes = gyre(&["compile", "--passes=loop(loop-reduce)", "--remarks", file]);
    assert!(
        stderr(&passes).contains("remark: loop-reduce"),
        "{}",
        stderr(&passes)
    );
}
