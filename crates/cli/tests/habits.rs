//! `gyre` with the habits of `opt`, `llc` and `lli` (issue 25): one test per habit, each
//! checking the exit code and the text of the output or the message.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

fn gyre(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_gyre"))
        .args(args)
        .current_dir(root())
        .stdin(Stdio::null())
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

/// Success, and the output it printed.
fn ok(o: &Output) -> String {
    assert!(
        o.status.success(),
        "expected success; stderr: {}",
        stderr(o)
    );
    assert!(!stderr(o).contains("panicked"), "{}", stderr(o));
    stdout(o)
}

/// A failure with exit code 1 or 2 (clap's usage errors), no panic, and `needle` in the
/// message.
fn fails_with(o: &Output, needle: &str) {
    let err = stderr(o);
    assert!(
        matches!(o.status.code(), Some(1 | 2)),
        "expected exit 1 or 2, got {:?}; stderr: {err}",
        o.status.code()
    );
    assert!(!err.contains("panicked"), "panic: {err}");
    assert!(err.contains(needle), "expected {needle:?} in: {err}");
}

/// A file in a fresh temporary directory of this test.
fn temp(test: &str, name: &str, contents: &[u8]) -> String {
    let dir = std::env::temp_dir().join(format!("gyre-habits-{}-{test}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(name);
    std::fs::write(&p, contents).unwrap();
    p.to_string_lossy().into_owned()
}

/// search.gir's loop needs loop-simplify and lcssa, so the default pipeline changes it.
const LOOPY: &str = "examples/search.gir";

#[test]
fn opt_o_levels_run_the_default_pipeline() {
    let plain = ok(&gyre(&["opt", LOOPY]));
    let default = ok(&gyre(&[
        "opt",
        LOOPY,
        &format!("--passes={}", gyre_transforms::DEFAULT_PIPELINE),
    ]));
    assert_ne!(plain, default);
    for o in ["-O", "-O1", "-O2", "-O3"] {
        assert_eq!(ok(&gyre(&["opt", o, LOOPY])), default, "{o}");
    }
    assert_eq!(ok(&gyre(&["opt", "-O0", LOOPY])), plain);
    fails_with(&gyre(&["opt", "-O4", LOOPY]), "4 is not in 0..=3");
    fails_with(
        &gyre(&["opt", "-Os", LOOPY]),
        "invalid value 's' for '--opt-level <N>'",
    );
    fails_with(
        &gyre(&["opt", "-O2", "-passes=lcssa", LOOPY]),
        "-O2 and -passes= cannot be combined; write -passes='default<O2>,...'",
    );
    // compile takes -O the same way.
    let c = ok(&gyre(&["compile", "-O3", LOOPY]));
    assert_eq!(c, ok(&gyre(&["compile", "--passes=default<O2>", LOOPY])));
}

#[test]
fn opt_passes_with_one_dash() {
    let two = ok(&gyre(&["opt", LOOPY, "--passes=lcssa"]));
    assert_eq!(ok(&gyre(&["opt", LOOPY, "-passes=lcssa"])), two);
    assert_eq!(ok(&gyre(&["opt", LOOPY, "-passes", "lcssa"])), two);
    let o = gyre(&[
        "opt",
        LOOPY,
        "-passes=lcssa",
        "-verify-each",
        "-time-passes",
    ]);
    ok(&o);
    assert!(stderr(&o).contains("Pass execution timing report"));
}

#[test]
fn opt_s_is_accepted_as_a_no_op() {
    assert_eq!(ok(&gyre(&["opt", "-S", LOOPY])), ok(&gyre(&["opt", LOOPY])));
}

#[test]
fn opt_o_dash_is_standard_output() {
    let out = ok(&gyre(&["opt", "-S", LOOPY, "-o", "-"]));
    assert!(out.starts_with("kernel @search("), "{out}");
    let file = temp("odash", "out.gir", b"");
    assert_eq!(ok(&gyre(&["opt", LOOPY, "-o", &file])), "");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), out);
}

#[test]
fn compile_sm_names_and_targets() {
    let ptxas = gyre_test_tools::require(gyre_test_tools::Tool::Ptxas, "compile_sm_names");
    let by_number = ok(&gyre(&["compile", "examples/saxpy.gir", "--sm", "90"]));
    assert_eq!(
        ok(&gyre(&["compile", "examples/saxpy.gir", "--sm", "sm_90"])),
        by_number
    );
    assert_eq!(
        ok(&gyre(&["compile", "examples/saxpy.gir", "-mcpu=sm_90"])),
        by_number
    );
    for (sm, version) in [
        ("70", "6.0"),
        ("72", "6.1"),
        ("75", "6.3"),
        ("80", "7.0"),
        ("86", "7.1"),
        ("87", "7.4"),
        ("89", "7.8"),
        ("90", "7.8"),
        ("100", "8.6"),
        ("120", "8.7"),
    ] {
        for ex in ["examples/block_reduce.gir", "examples/matmul_tiled.gir"] {
            let ptx = ok(&gyre(&["compile", "-O", ex, "--sm", &format!("sm_{sm}")]));
            assert!(
                ptx.contains(&format!(".version {version}\n.target sm_{sm}\n")),
                "{ptx}"
            );
            if let Some(p) = &ptxas {
                gyre_test_tools::run_ptxas(p, &ptx, &format!("sm_{sm}"))
                    .unwrap_or_else(|e| panic!("{ex} sm_{sm}: {e}"));
            }
        }
    }
    fails_with(
        &gyre(&["compile", "examples/saxpy.gir", "--sm", "sm_91"]),
        "'sm_91' is not a supported target; supported: 70, 72, 75, 80, 86, 87, 89, 90, 100, 120",
    );
}

const SAXPY: &[&str] = &[
    "run",
    "examples/saxpy.gir",
    "--buffer",
    "x=f32:4:iota",
    "--buffer",
    "y=f32:4:iota",
    "--arg",
    "0=@x",
    "--arg",
    "1=@y",
    "--arg",
    "2=2.0",
    "--arg",
    "3=4",
];

/// saxpy on 4 elements, by 4 threads unless `extra` says otherwise.
fn saxpy(extra: &[&str]) -> Output {
    let mut args = SAXPY.to_vec();
    if !extra.contains(&"--block") {
        args.extend(["--block", "4"]);
    }
    args.extend_from_slice(extra);
    gyre(&args)
}

#[test]
fn run_kernel_by_at_name() {
    let plain = ok(&saxpy(&["--kernel", "saxpy"]));
    assert_eq!(plain, "y = [0.0, 3.0, 6.0, 9.0]\n");
    assert_eq!(ok(&saxpy(&["--kernel", "@saxpy"])), plain);
    fails_with(
        &saxpy(&["--kernel", "@nope"]),
        "examples/saxpy.gir: no function named @nope",
    );
}

#[test]
fn pipeline_default_o2() {
    let o2 = ok(&gyre(&["opt", "-O2", LOOPY]));
    for p in ["default<O1>", "default<O2>", "default<O3>"] {
        assert_eq!(ok(&gyre(&["opt", &format!("-passes={p}"), LOOPY])), o2);
    }
    assert_eq!(
        ok(&gyre(&["opt", "-passes=default<O0>", LOOPY])),
        ok(&gyre(&["opt", LOOPY]))
    );
    fails_with(
        &gyre(&["opt", "-passes=default<Oz>", LOOPY]),
        "pipeline:1: default<...> takes one of O0, O1, O2, O3 (got 'Oz')",
    );
}

#[test]
fn pipeline_analysis_printers() {
    for what in ["domtree", "loops", "uniformity", "cfg", "postdomtree"] {
        let o = gyre(&["opt", &format!("-passes=print<{what}>"), LOOPY]);
        // The module still goes to standard output, the analysis to standard error.
        assert_eq!(ok(&o), ok(&gyre(&["opt", LOOPY])), "{what}");
        let printed = ok(&gyre(&["print", what, LOOPY]));
        assert_eq!(stderr(&o), printed, "{what}");
    }
    let o = gyre(&["opt", "-passes=default<O2>,print<loops>", LOOPY]);
    ok(&o);
    assert!(stderr(&o).contains("Loop at depth 1"), "{}", stderr(&o));
    fails_with(
        &gyre(&["opt", "-passes=print<scev>", LOOPY]),
        "pipeline:1: print<...> takes one analysis: cfg, domtree, postdomtree, loops, uniformity",
    );
}

#[test]
fn pipeline_module_and_function_adaptors() {
    let flat = ok(&gyre(&["opt", "-passes=loop-simplify,lcssa", LOOPY]));
    assert_eq!(
        ok(&gyre(&[
            "opt",
            "-passes=module(function(loop-simplify,lcssa))",
            LOOPY
        ])),
        flat
    );
    assert_eq!(
        ok(&gyre(&[
            "opt",
            "-passes=module(loop-simplify),function(lcssa)",
            LOOPY
        ])),
        flat
    );
    fails_with(
        &gyre(&["opt", "-passes=function(module(lcssa))", LOOPY]),
        "pipeline:10: module(...) can only be the outermost adaptor",
    );
}

#[test]
fn pipeline_loop_mssa_is_loop() {
    // Both spellings build the same loop adaptor: the same check, the same message.
    let a = gyre(&["opt", "-passes=loop(lcssa)", LOOPY]);
    let b = gyre(&["opt", "-passes=loop-mssa(lcssa)", LOOPY]);
    fails_with(
        &a,
        "pipeline:6: 'lcssa' is a function pass and cannot run inside loop(...)",
    );
    fails_with(
        &b,
        "pipeline:11: 'lcssa' is a function pass and cannot run inside loop(...)",
    );
}

#[test]
fn print_after_of_an_unknown_pass_is_an_error() {
    fails_with(
        &gyre(&["opt", "-passes=lcssa", "--print-after=bogus", LOOPY]),
        "--print-after=bogus: no pass is named 'bogus'; passes: loop-simplify, lcssa",
    );
    let o = gyre(&["opt", "-passes=lcssa", "-print-after=lcssa", LOOPY]);
    ok(&o);
    assert!(stderr(&o).contains("; *** IR Dump After lcssa on @search ***"));
    assert!(!stderr(&o).contains("warning"), "{}", stderr(&o));
    // A pass the pipeline does not run: nothing to print, so a warning.
    let o = gyre(&["opt", "-passes=lcssa", "-print-after=loop-simplify", LOOPY]);
    ok(&o);
    assert_eq!(
        stderr(&o),
        "warning: --print-after=loop-simplify: the pipeline does not run loop-simplify\n"
    );
    // default<O2> and -O run it.
    for flags in [
        ["-passes=module(default<O2>)", "-print-after=loop-simplify"],
        ["-O", "-print-after=loop-simplify"],
    ] {
        let o = gyre(&["opt", flags[0], flags[1], LOOPY]);
        ok(&o);
        assert!(!stderr(&o).contains("warning"), "{flags:?}: {}", stderr(&o));
        assert!(stderr(&o).contains("IR Dump After loop-simplify"));
    }
}

#[test]
fn opaque_pointers_without_emit_llvm_is_an_error() {
    fails_with(
        &gyre(&["opt", "--opaque-pointers", LOOPY]),
        "--opaque-pointers applies to LLVM IR output only: add --emit llvm",
    );
    let ll = ok(&gyre(&[
        "opt",
        "--opaque-pointers",
        "--emit",
        "llvm",
        LOOPY,
    ]));
    assert!(ll.contains("ptr addrspace(1)"), "{ll}");
}

#[test]
fn unknown_knob_is_an_error() {
    for cmd in ["opt", "compile"] {
        fails_with(
            &gyre(&[cmd, "-C", "no-such-knob=1", LOOPY]),
            "-C no-such-knob=1: unknown knob 'no-such-knob'",
        );
    }
}

#[test]
fn reporting_flags_without_a_pipeline_warn() {
    for flag in [
        "--stats",
        "--time-passes",
        "--verify-each",
        "--print-after-all",
    ] {
        let o = gyre(&["opt", flag, LOOPY]);
        ok(&o);
        assert!(
            stderr(&o).contains(&format!(
                "warning: {flag} has no effect without a pipeline (-passes= or -O)"
            )),
            "{flag}: {}",
            stderr(&o)
        );
    }
    let o = gyre(&["opt", "--remarks", LOOPY]);
    assert!(stderr(&o).contains("warning: --remarks has no effect"));
    // With a pipeline, no warning.
    let o = gyre(&["opt", "-O", "--stats", LOOPY]);
    ok(&o);
    assert!(!stderr(&o).contains("warning"), "{}", stderr(&o));
}

#[test]
fn dynamic_shared_memory_without_an_extern_array_warns() {
    let o = saxpy(&["--kernel", "saxpy", "--dynamic-shared", "64"]);
    assert_eq!(ok(&o), "y = [0.0, 3.0, 6.0, 9.0]\n");
    assert_eq!(
        stderr(&o),
        "warning: --dynamic-shared 64: the module has no extern shared array to use it\n"
    );
    assert_eq!(stderr(&saxpy(&["--kernel", "saxpy"])), "");
}

const DEVICE: &str = "\
func @square(f32) -> f32 {
block0(v0: f32):
    v1 = fmul v0, v0
    return v1
}
func @widen(i8, i64) -> i64 {
block0(v0: i8, v1: i64):
    v2 = sext.i64 v0
    v3 = iadd v2, v1
    return v3
}
func @nothing(i32) {
block0(v0: i32):
    return
}
";

#[test]
fn run_device_function_prints_its_return_value() {
    let f = temp("device", "dev.gir", DEVICE.as_bytes());
    assert_eq!(
        ok(&gyre(&["run", &f, "--kernel", "@square", "--arg", "0=3"])),
        "@square returned f32 9.0\n"
    );
    assert_eq!(
        ok(&gyre(&[
            "run", &f, "--kernel", "widen", "--arg", "0=-5", "--arg", "1=100"
        ])),
        "@widen returned i64 95\n"
    );
    assert_eq!(
        ok(&gyre(&["run", &f, "--kernel", "nothing", "--arg", "0=1"])),
        ""
    );
    fails_with(
        &gyre(&[
            "run", &f, "--kernel", "square", "--arg", "0=3", "--block", "2",
        ]),
        "@square is a device function: it runs on one thread (leave out --grid and --block)",
    );
}

#[test]
fn run_prints_every_written_buffer() {
    // a = 0 writes y back unchanged: it was written, so it is shown; x was only read.
    let args = |print: Option<&str>| {
        let mut v = vec![
            "run",
            "examples/saxpy.gir",
            "--kernel",
            "saxpy",
            "--block",
            "2",
            "--buffer",
            "x=f32:2:iota",
            "--buffer",
            "y=f32:2:zeros",
            "--arg",
            "0=@x",
            "--arg",
            "1=@y",
            "--arg",
            "2=0",
            "--arg",
            "3=2",
        ];
        if let Some(p) = print {
            v.extend(["--print", p]);
        }
        gyre(&v)
    };
    assert_eq!(ok(&args(None)), "y = [0.0, 0.0]\n");
    assert_eq!(ok(&args(Some("written"))), "y = [0.0, 0.0]\n");
    assert_eq!(ok(&args(Some("changed"))), "");
    assert_eq!(ok(&args(Some("all"))), "x = [0.0, 1.0]\ny = [0.0, 0.0]\n");
    fails_with(
        &args(Some("some")),
        "invalid value 'some' for '--print <PRINT>'",
    );
}

#[test]
fn run_duplicate_arg_or_buffer_is_an_error() {
    fails_with(
        &saxpy(&["--kernel", "saxpy", "--arg", "3=5"]),
        "--arg '3=5': parameter 3 is already given",
    );
    fails_with(
        &saxpy(&["--kernel", "saxpy", "--arg", "v1=@x"]),
        "--arg 'v1=@x': parameter 1 is already given",
    );
    fails_with(
        &saxpy(&["--kernel", "saxpy", "--buffer", "x=i32:4:zeros"]),
        "--buffer 'x=i32:4:zeros': a buffer named x is already given",
    );
}

#[test]
fn run_argument_must_fit_its_parameter() {
    let one = |arg: &str, param: usize| {
        let mut v: Vec<String> = [
            "run",
            "examples/saxpy.gir",
            "--kernel",
            "saxpy",
            "--buffer",
            "x=f32:4:iota",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let defaults = ["0=@x", "1=@x", "2=1.0", "3=4"];
        for (i, d) in defaults.iter().enumerate() {
            v.push("--arg".into());
            v.push(if i == param {
                arg.to_string()
            } else {
                d.to_string()
            });
        }
        let refs: Vec<&str> = v.iter().map(|s| s.as_str()).collect();
        gyre(&refs)
    };
    fails_with(
        &one("3=4294967296", 3),
        "--arg '3=4294967296': parameter 3 is i32: 4294967296 does not fit (it takes -2147483648 to 4294967295)",
    );
    fails_with(
        &one("3=1.5", 3),
        "parameter 3 is i32: '1.5' is not an integer",
    );
    fails_with(&one("2=@x", 2), "parameter 2 is f32: '@x' is not a number");
    fails_with(
        &one("2=1e39", 2),
        "parameter 2 is f32: 1e39 does not fit f32",
    );
    fails_with(
        &one("0=1.5", 0),
        "parameter 0 is ptr.global: '1.5' is not @BUFFER or an address",
    );
    fails_with(
        &one("0=bytes:00", 0),
        "parameter 0 is ptr.global: bytes:HEX is for byval parameters only",
    );
    // In range, signed or unsigned, decimal or hex: accepted.
    ok(&one("3=0x4", 3));
    ok(&one("3=-1", 3));
    ok(&one("2=3", 2));
}

#[test]
fn run_file_backed_buffer_takes_its_count_from_the_file() {
    let bytes: Vec<u8> = [1.0f32, 2.0, 3.0]
        .iter()
        .flat_map(|f| f.to_le_bytes())
        .collect();
    let file = temp("filebuf", "x.bin", &bytes);
    let run = |spec: &str| {
        gyre(&[
            "run",
            "examples/saxpy.gir",
            "--kernel",
            "saxpy",
            "--block",
            "3",
            "--buffer",
            spec,
            "--buffer",
            "y=f32:3:zeros",
            "--arg",
            "0=@x",
            "--arg",
            "1=@y",
            "--arg",
            "2=2",
            "--arg",
            "3=3",
        ])
    };
    let want = "y = [2.0, 4.0, 6.0]\n";
    assert_eq!(ok(&run(&format!("x={file}:f32"))), want);
    assert_eq!(ok(&run(&format!("x=f32:{file}"))), want);
    assert_eq!(ok(&run(&format!("x=f32:3:{file}"))), want);
    fails_with(
        &run(&format!("x=f32:4:{file}")),
        &format!("{file} has 12 bytes; the buffer takes 16"),
    );
    fails_with(
        &run(&format!("x=f32:2:{file}")),
        &format!("{file} has 12 bytes; the buffer takes 8"),
    );
    fails_with(
        &run(&format!("x={file}:f64")),
        &format!("{file} has 12 bytes, not a whole number of 8-byte elements"),
    );
    fails_with(
        &run("x=f32:iota"),
        "'iota' needs a count: NAME=TYPE:COUNT:iota",
    );
}

#[test]
fn run_block_dimensions_over_1024_threads_are_rejected() {
    ok(&saxpy(&["--kernel", "saxpy", "--block", "1024"]));
    fails_with(
        &saxpy(&["--kernel", "saxpy", "--block", "1025"]),
        "--block '1025': x is at most 1024 (CUDA's limit)",
    );
    fails_with(
        &saxpy(&["--kernel", "saxpy", "--block", "32,32,2"]),
        "--block '32,32,2': 2048 threads per CTA; CUDA allows at most 1024",
    );
    fails_with(
        &saxpy(&["--kernel", "saxpy", "--block", "1,1,65"]),
        "--block '1,1,65': z is at most 64 (CUDA's limit)",
    );
    fails_with(
        &saxpy(&["--kernel", "saxpy", "--grid", "1,65536"]),
        "--grid '1,65536': y is at most 65535 (CUDA's limit)",
    );
}

#[test]
fn run_json_is_json() {
    let o = saxpy(&["--kernel", "saxpy", "--json", "-"]);
    let v: serde_json::Value = serde_json::from_str(&ok(&o)).expect("valid JSON");
    assert_eq!(v["buffers"]["y"], serde_json::json!([0.0, 3.0, 6.0, 9.0]));
    assert!(v["steps"].as_u64().unwrap() > 0);
    assert!(v["buffers"].get("x").is_none(), "x was not written");
    // Non-finite floats are strings, which JSON numbers cannot hold.
    let f = temp("json", "dev.gir", DEVICE.as_bytes());
    let o = gyre(&[
        "run", &f, "--kernel", "square", "--arg", "0=1e30", "--json", "-",
    ]);
    let v: serde_json::Value = serde_json::from_str(&ok(&o)).expect("valid JSON");
    assert_eq!(v["return"], serde_json::json!("inf"));
}

#[test]
fn gen_prints_a_random_kernel_that_runs() {
    let a = ok(&gyre(&["gen", "--seed", "5", "--blocks", "60"]));
    assert_eq!(
        a,
        ok(&gyre(&["gen", "--seed", "5", "--blocks", "60"])),
        "deterministic"
    );
    assert_ne!(a, ok(&gyre(&["gen", "--seed", "6", "--blocks", "60"])));
    let m = gyre_ir::parse_module(&a).expect("parses");
    gyre_ir::verifier::verify_module(&m).expect("verifies");
    let kernel = m.functions.values().last().unwrap();
    assert!(
        kernel.layout.blocks().count() >= 60,
        "--blocks 60 gives at least 60 blocks"
    );
    // The second line says how to run it within its contract; that command succeeds.
    let file = temp("gen", "g.gir", a.as_bytes());
    let line = a.lines().nth(1).unwrap();
    let cmd = line
        .strip_prefix(";; run: gyre run FILE ")
        .expect("a run line");
    let mut args = vec!["run", file.as_str()];
    args.extend(cmd.split(' '));
    assert!(ok(&gyre(&args)).starts_with("p0 = ["));
    // Features narrow what is generated.
    let none = ok(&gyre(&["gen", "--seed", "5", "--features", "none"]));
    let m = gyre_ir::parse_module(&none).unwrap();
    assert_eq!(m.functions.len(), 1, "no device functions without calls");
    assert!(
        !none.contains("barrier") && !none.contains("load"),
        "{none}"
    );
    fails_with(
        &gyre(&["gen", "--features", "loops,wormholes"]),
        "--features: unknown feature 'wormholes'; features: loops, nested-loops",
    );
    fails_with(
        &gyre(&["gen", "--blocks", "0"]),
        "--blocks 0: expected a block count",
    );
}

#[test]
fn compile_warns_of_a_barrier_under_divergent_control() {
    let src = "\
kernel @k(i32) {
block0(v0: i32):
    v1 = tid.x
    v2 = icmp slt v1, v0
    brif v2, block1, block2
block1:
    barrier
    jump block2
block2:
    v3 = icmp slt v0, v0
    brif v3, block3, block4
block3:
    barrier
    jump block4
block4:
    return
}
";
    let f = temp("barrier", "bar.gir", src.as_bytes());
    let o = gyre(&["compile", &f]);
    ok(&o);
    let err = stderr(&o);
    // block1 depends on tid.x; block3 on a uniform condition, so it is not reported.
    assert_eq!(
        err,
        format!(
            "{f}: warning: @k: block1: `barrier` is reachable under divergent control: \
             threads that skip it leave the others waiting\n"
        )
    );
    let o = gyre(&["compile", &f, "--remarks"]);
    assert!(
        stderr(&o).contains(
            "remark: uniformity: @k at block1: divergent-barrier: `barrier` runs under divergent control"
        ),
        "{}",
        stderr(&o)
    );
    // The shipped block reduction keeps its barriers uniform: no warning.
    let o = gyre(&["compile", "examples/block_reduce.gir"]);
    ok(&o);
    assert_eq!(stderr(&o), "");
}

/// Every subcommand and every long flag `gyre <command> --help` shows is in docs/cli.md.
#[test]
fn help_and_docs_list_every_command_and_flag() {
    let help = ok(&gyre(&["--help"]));
    for s in ["gen", "-passes=", "docs/cli.md"] {
        assert!(help.contains(s), "gyre --help lacks {s}: {help}");
    }
    let doc = std::fs::read_to_string(root().join("docs/cli.md")).expect("docs/cli.md");
    for cmd in ["opt", "compile", "print", "run", "gen", "knobs", "passes"] {
        assert!(
            doc.contains(&format!("## `gyre {cmd}`")),
            "docs/cli.md lacks gyre {cmd}"
        );
        let h = ok(&gyre(&[cmd, "--help"]));
        for word in h.split(|c: char| !(c.is_ascii_alphanumeric() || c == '-')) {
            if word.starts_with("--") && word.len() > 2 && word != "--help" && word != "--version" {
                assert!(doc.contains(word), "docs/cli.md lacks {word} of gyre {cmd}");
            }
        }
    }
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    assert!(readme.contains("gyre gen") && readme.contains("docs/cli.md"));
}
