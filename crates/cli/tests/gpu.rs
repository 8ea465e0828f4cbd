//! `gyre run --gpu`, `--compare`, `--time` and `--ptx`: errors without a driver or a
//! device (every machine), and runs on a real GPU, skipped with the reason printed only
//! when no driver or no device is found.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn gyre_env(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_gyre"));
    c.args(args).current_dir(root());
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().expect("gyre runs")
}

fn gyre(args: &[&str]) -> Output {
    gyre_env(args, &[])
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

/// Exit code 1 (an error reported, not a panic) with `needle` in the message.
fn assert_fails_with(o: &Output, needle: &str) {
    let err = stderr(o);
    assert_eq!(o.status.code(), Some(1), "stderr: {err}");
    assert!(err.contains(needle), "expected {needle:?} in: {err}");
}

/// saxpy on 8 elements, 6 of them updated, plus `extra` flags.
fn saxpy(extra: &[&str]) -> Vec<String> {
    let mut v: Vec<String> = [
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
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    v.extend(extra.iter().map(|s| s.to_string()));
    v
}

fn refs(v: &[String]) -> Vec<&str> {
    v.iter().map(String::as_str).collect()
}

#[test]
fn no_driver_is_a_clear_error_for_every_gpu_flag() {
    let env = [("GYRE_LIBCUDA", "/nonexistent/libcuda.so.1")];
    for flags in [
        &["--gpu"][..],
        &["--compare"],
        &["--time", "3"],
        &["--ptx", "examples/saxpy.gir"],
    ] {
        let o = gyre_env(&refs(&saxpy(flags)), &env);
        assert_fails_with(&o, "no CUDA driver: cannot load /nonexistent/libcuda.so.1");
    }
    let o = gyre_env(&refs(&saxpy(&["--gpu"])), &[("GYRE_LIBCUDA", "libc.so.6")]);
    assert_fails_with(&o, "is not a usable CUDA driver: it lacks cuInit");
}

#[test]
fn bad_gpu_flags_and_inputs_fail_before_the_device() {
    let env = [("GYRE_LIBCUDA", "/nonexistent/libcuda.so.1")];
    // The inputs are checked first: the same message with or without a GPU.
    let mut args = saxpy(&["--gpu"]);
    args[13] = "2=x".into();
    let o = gyre_env(&refs(&args), &env);
    assert_fails_with(&o, "--arg '2=x': parameter 2 is f32: 'x' is not a number");
    let o = gyre_env(&refs(&saxpy(&["--ptx", "/nonexistent.ptx"])), &env);
    assert_fails_with(&o, "/nonexistent.ptx: cannot read");
    // --time needs at least one launch (clap's usage error).
    let o = gyre(&refs(&saxpy(&["--time", "0"])));
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let o = gyre(&refs(&saxpy(&["--time", "x"])));
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
}

#[test]
fn help_lists_the_gpu_flags() {
    let o = gyre(&["run", "--help"]);
    let help = stdout(&o);
    for flag in [
        "--gpu",
        "--compare",
        "--time <N>",
        "--ptx <FILE>",
        "--ulps <N>",
    ] {
        assert!(help.contains(flag), "{flag} missing from:\n{help}");
    }
}

/// Is a device there? Prints the skip reason when not (only for no driver or no device).
fn have_gpu(test: &str) -> bool {
    match gyre_gpu::Gpu::open() {
        Ok(_) => true,
        Err(e @ (gyre_gpu::GpuError::NoDriver { .. } | gyre_gpu::GpuError::NoDevice { .. })) => {
            eprintln!("skipping {test}: no GPU: {e}");
            false
        }
        Err(e) => panic!("{e}"),
    }
}

#[test]
fn saxpy_on_the_gpu_matches_the_interpreter() {
    if !have_gpu("saxpy_on_the_gpu_matches_the_interpreter") {
        return;
    }
    let o = gyre(&refs(&saxpy(&["--gpu"])));
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        stdout(&o).trim(),
        "y = [0.0, 3.0, 6.0, 9.0, 12.0, 15.0, 6.0, 7.0]"
    );
    let o = gyre(&refs(&saxpy(&["--compare", "--time", "5"])));
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("y: equal (8 elements)"), "{out}");
    assert!(out.contains("median kernel time"), "{out}");
    // A wrong kernel is caught: the PTX of saxpy with the multiply turned into an add.
    let ptx = gyre(&["compile", "examples/saxpy.gir"]);
    assert!(ptx.status.success());
    let text = stdout(&ptx);
    let broken = text.replacen("mul.rn.f32", "add.rn.f32", 1);
    assert_ne!(text, broken, "saxpy's PTX has a mul.rn.f32");
    let path = std::env::temp_dir().join(format!("gyre-gpu-saxpy-{}.ptx", std::process::id()));
    std::fs::write(&path, broken).unwrap();
    let o = gyre(&refs(&saxpy(&[
        "--compare",
        "--ptx",
        path.to_str().unwrap(),
    ])));
    let _ = std::fs::remove_file(&path);
    assert_fails_with(&o, "the GPU differs from the interpreter in y");
    assert!(
        stdout(&o).contains("y: differs first at [0]: interpreter 0.0, gpu 2.0"),
        "{}",
        stdout(&o)
    );
}

#[test]
fn host_initialised_constants_reach_the_gpu() {
    if !have_gpu("host_initialised_constants_reach_the_gpu") {
        return;
    }
    let m = "global @tab: const [4 x i32] align 4 visible externally_initialized = [1, 2, 3, 4]\n\
             kernel @k(ptr.global) {\n\
             block0(v0: ptr.global):\n\
             \x20   v1 = tid.x\n\
             \x20   v2 = global_addr @tab\n\
             \x20   v3 = ptradd v2, v1, 4\n\
             \x20   v4 = load.i32 v3\n\
             \x20   v5 = ptradd v0, v1, 4\n\
             \x20   store v4, v5\n\
             \x20   return\n}\n";
    let path = std::env::temp_dir().join(format!("gyre-gpu-const-{}.gir", std::process::id()));
    std::fs::write(&path, m).unwrap();
    let p = path.to_str().unwrap();
    let run = |global: &str| {
        gyre(&[
            "run",
            p,
            "--kernel",
            "k",
            "--block",
            "4",
            "--arg",
            "0=@out",
            "--buffer",
            "out=i32:4:zeros",
            "--global",
            global,
            "--compare",
        ])
    };
    for global in ["tab=init", "tab=iota"] {
        let o = run(global);
        assert!(o.status.success(), "{}{}", stdout(&o), stderr(&o));
        assert!(
            stdout(&o).contains("out: equal (4 elements)"),
            "{}",
            stdout(&o)
        );
    }
    // Without --compare, the values the host wrote (iota, not the module's initializer).
    let o = gyre(&[
        "run",
        p,
        "--kernel",
        "k",
        "--block",
        "4",
        "--arg",
        "0=@out",
        "--buffer",
        "out=i32:4:zeros",
        "--global",
        "tab=iota",
        "--gpu",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("out = [0, 1, 2, 3]"), "{}", stdout(&o));
    let _ = std::fs::remove_file(&path);
}

/// The stand-in driver of crates/gpu/tests/mock (host memory; its `saxpy` kernel is the
/// host version of examples/saxpy.gir, reading the parameter buffer), built here.
fn mock_driver() -> PathBuf {
    let src = root().join("crates/gpu/tests/mock/libcuda_mock.c");
    let dir = std::env::temp_dir().join(format!("gyre-cli-mock-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let lib = dir.join("libcuda_mock.so");
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let out = Command::new(&cc)
        .args(["-shared", "-fPIC", "-O1", "-o"])
        .arg(&lib)
        .arg(&src)
        .output()
        .unwrap_or_else(|e| panic!("cannot run the C compiler {cc}: {e}"));
    assert!(out.status.success(), "{}", stderr(&out));
    lib
}

#[test]
fn gpu_flags_through_a_mock_driver() {
    let lib = mock_driver();
    let env = [("GYRE_LIBCUDA", lib.to_str().unwrap())];
    let o = gyre_env(&refs(&saxpy(&["--gpu"])), &env);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        stdout(&o).trim(),
        "y = [0.0, 3.0, 6.0, 9.0, 12.0, 15.0, 6.0, 7.0]"
    );
    let o = gyre_env(&refs(&saxpy(&["--compare", "--time", "4"])), &env);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(
        out.starts_with(
            "compared the interpreter with Mock GPU 0 (compute capability 8.7), sm_87: floats exact\n"
        ),
        "{out}"
    );
    assert!(
        out.contains("x: equal (8 elements)\ny: equal (8 elements)\n"),
        "{out}"
    );
    assert!(
        out.contains("@saxpy: median kernel time 0.2500 ms over 4 launches"),
        "{out}"
    );
    // JSON: the device, the target and the buffers that changed.
    let o = gyre_env(&refs(&saxpy(&["--gpu", "--json", "-"])), &env);
    assert!(o.status.success(), "{}", stderr(&o));
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(j["target"], "sm_87");
    assert_eq!(j["buffers"]["y"][1], 3.0);
    assert!(j["buffers"].get("x").is_none());
    // A kernel the device runs differently: the module's @saxpy stores `a * x[i]`
    // (no `+ y[i]`), the mock's saxpy adds y: the first difference is y[1] (2 vs 3).
    let dir = lib.parent().unwrap();
    let m = std::fs::read_to_string(root().join("examples/saxpy.gir")).unwrap();
    let changed = m.replace("store v16, v13", "store v15, v13");
    assert_ne!(m, changed);
    let gir = dir.join("scale.gir");
    std::fs::write(&gir, changed).unwrap();
    let mut args = saxpy(&["--compare"]);
    args[1] = gir.to_str().unwrap().into();
    let o = gyre_env(&refs(&args), &env);
    assert_fails_with(&o, "--compare: the GPU differs from the interpreter in y");
    let out = stdout(&o);
    assert!(out.contains("x: equal (8 elements)"), "{out}");
    assert!(
        out.contains("y: differs first at [1]: interpreter 2.0, gpu 3.0"),
        "{out}"
    );
    // --ptx: an external PTX declaring `a` as untyped .b32 (still 4 bytes at offset 16).
    let o = gyre(&["compile", "--sm", "70", "examples/saxpy.gir"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    let ptx_text = text.replace(".param .f32", ".param .b32");
    assert_ne!(text, ptx_text);
    let ptx = dir.join("saxpy.ptx");
    std::fs::write(&ptx, ptx_text).unwrap();
    let o = gyre_env(
        &refs(&saxpy(&["--compare", "--ptx", ptx.to_str().unwrap()])),
        &env,
    );
    assert!(o.status.success(), "{}{}", stdout(&o), stderr(&o));
    assert!(
        stdout(&o).contains(", --ptx: floats exact"),
        "{}",
        stdout(&o)
    );
    // An external PTX without the kernel.
    std::fs::write(&ptx, text.replace(".entry saxpy", ".entry other")).unwrap();
    let o = gyre_env(
        &refs(&saxpy(&["--gpu", "--ptx", ptx.to_str().unwrap()])),
        &env,
    );
    assert_fails_with(&o, "no .entry for @saxpy (it has: other)");
    let _ = std::fs::remove_dir_all(dir);
}
