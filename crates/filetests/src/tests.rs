use super::*;

fn runner(bless: bool) -> Runner {
    Runner::new(Config {
        workspace_root: gyre_test_tools::workspace_root(),
        bless,
        require_tools: false,
        filter: None,
    })
}

const LOOP: &str = "kernel @k(i32) {
block0(v0: i32):
    v1 = iconst.i32 0
    v6 = icmp slt v1, v0
    brif v6, block1(v1), block2
block1(v2: i32):
    v3 = iconst.i32 1
    v4 = iadd v2, v3
    v5 = icmp slt v4, v0
    brif v5, block1(v4), block2
block2:
    return
}
";

fn err(r: &Runner, src: &str) -> FileError {
    r.run_text("t.gir", src).unwrap_err()
}

#[test]
fn directives_fail_at_their_line() {
    let r = runner(false);
    let ok =
        format!("; test: print-loops\n{LOOP}; check: Loop at depth 1\n; sameln: %block1<header>\n");
    assert_eq!(
        r.run_text("t.gir", &ok).unwrap(),
        (Outcome::default(), None)
    );
    let bad =
        format!("; test: print-loops\n{LOOP}; check: Loop at depth 1\n; sameln: %block2<header>\n");
    let e = err(&r, &bad);
    assert_eq!(e.line, Some(bad.lines().count()));
    assert!(e.message.contains("--- output ---"), "{}", e.message);
    // The file error is reported as path:line.
    let dir = std::env::temp_dir().join(format!("gyre-filetests-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join("bad.gir");
    std::fs::write(&p, &bad).unwrap();
    let msg = r.run_file(&p).unwrap_err();
    assert!(
        msg.starts_with(&format!(
            "{}:{}: 'sameln: %block2<header>'",
            p.display(),
            bad.lines().count()
        )),
        "{msg}"
    );
    let s = r.run_tree(&dir);
    assert_eq!((s.files, s.failures.len()), (1, 1));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn precise_output_fails_then_blesses_then_passes() {
    let src = format!("; test: print-cfg\n; precise-output\n{LOOP}");
    // No section: an error at the end of the file, with the whole output as additions.
    let e = err(&runner(false), &src);
    assert_eq!(e.line, Some(src.lines().count()));
    assert!(e.message.contains("+CFG for function: @k"), "{}", e.message);
    // Bless appends the section; the blessed text passes without bless.
    let (o, text) = runner(true).run_text("t.gir", &src).unwrap();
    assert!(o.blessed);
    let text = text.expect("blessed text");
    assert!(text.starts_with(&src));
    assert!(
        text.contains("; output:\n; CFG for function: @k\n"),
        "{text}"
    );
    assert_eq!(
        runner(false).run_text("t.gir", &text).unwrap(),
        (Outcome::default(), None)
    );
    // A wrong line in the section fails with a diff naming both versions, and bless
    // puts it right again.
    let wrong = text.replace(
        "; RPO: %block0 %block1 %block2",
        "; RPO: %block0 %block2 %block1",
    );
    assert_ne!(wrong, text);
    let e = err(&runner(false), &wrong);
    assert!(
        e.message
            .contains("-RPO: %block0 %block2 %block1\n+RPO: %block0 %block1 %block2"),
        "{}",
        e.message
    );
    assert_eq!(
        runner(true).run_text("t.gir", &wrong).unwrap().1,
        Some(text.clone())
    );
    // A file whose directives fail is not blessed.
    let failing = format!("{}; check: no such line\n; output:\n", &src);
    assert!(runner(true).run_text("t.gir", &failing).is_err());
}

#[test]
fn opt_expectations() {
    let r = runner(false);
    // No value of the loop is used after it: lcssa has nothing to do.
    let unchanged = format!("; test: opt\n; passes: lcssa\n; expect: unchanged\n{LOOP}");
    assert!(r.run_text("t.gir", &unchanged).is_ok());
    // The loop has no preheader and a shared exit: loop-simplify changes it.
    let changed = format!("; test: opt\n; passes: loop-simplify\n; expect: unchanged\n{LOOP}");
    let e = err(&r, &changed);
    assert_eq!(e.line, Some(3));
    assert!(e.message.contains("the module changed"), "{}", e.message);
    // The pipeline, knobs and run lines are checked where they are.
    let e = err(
        &r,
        &format!("; test: opt\n; passes: no-such-pass\n; check: x\n{LOOP}"),
    );
    assert_eq!(e.line, Some(2));
    let e = err(
        &r,
        &format!("; test: opt\n; passes: lcssa\n; knobs: no-such-knob=1\n; check: x\n{LOOP}"),
    );
    assert_eq!(e.line, Some(3));
    let e = err(
        &r,
        &format!("; test: opt\n; passes: lcssa\n; run: kernel=nope\n; check: kernel\n{LOOP}"),
    );
    assert_eq!(e.line, Some(3));
    let ok = format!("; test: opt\n; passes: loop-simplify\n; run: kernel=k args=4\n; check: NumPreheadersInserted 1\n{LOOP}");
    assert!(r.run_text("t.gir", &ok).is_ok());
    // Unverified input is refused unless the file says so.
    let bad = "; test: print-cfg\n; check: CFG\nkernel @k() {\nblock0:\n    jump block0(v9)\n}\n";
    assert!(r.run_text("t.gir", bad).is_err());
    let e = err(
        &r,
        "; test: print-cfg\n; source: no/such/file.gir\n; check: x\n",
    );
    assert_eq!(e.line, Some(2));
}

/// ptxas's policy in `test compile`, with the tool's search result fixed. One test: it
/// runs scripts (see gyre-test-tools' tests on "text file busy").
#[test]
fn compile_and_ptxas_policy() {
    use std::os::unix::fs::PermissionsExt;
    let src = format!("; test: compile\n; target: sm_90\n{LOOP}; check: .target sm_90\n");
    let with = |ptxas: Option<PathBuf>, require_tools: bool| {
        let r = Runner::new(Config {
            workspace_root: gyre_test_tools::workspace_root(),
            bless: false,
            require_tools,
            filter: None,
        });
        r.ptxas.set(ptxas).unwrap();
        r.run_text("t.gir", &src)
    };
    let (o, _) = with(None, false).unwrap();
    assert_eq!(o.skipped.len(), 1);
    assert!(
        o.skipped[0].starts_with("ptxas not found"),
        "{:?}",
        o.skipped
    );
    let e = with(None, true).unwrap_err();
    assert!(e.message.contains("GYRE_REQUIRE_TOOLS=1"), "{}", e.message);
    let dir = std::env::temp_dir().join(format!("gyre-filetests-ptxas-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let script = |name: &str, body: &str| {
        let p = dir.join(name);
        std::fs::write(&p, format!("#!/bin/sh\n{body}\n")).unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
        p
    };
    let good = script(
        "good",
        r#"[ "$1" = "-arch=sm_90" ] || { echo "bad $1"; exit 1; }"#,
    );
    let bad = script("bad", "echo 'ptxas fatal : something'; exit 1");
    assert_eq!(with(Some(good), true).unwrap().0, Outcome::default());
    let e = with(Some(bad), false).unwrap_err();
    assert_eq!(e.line, Some(2));
    assert!(
        e.message.contains("ptxas fatal : something"),
        "{}",
        e.message
    );
    let _ = std::fs::remove_dir_all(&dir);
    // An unknown target is an error at its line.
    let e = runner(false)
        .run_text("t.gir", &src.replace("sm_90\n", "sm_91\n"))
        .unwrap_err();
    assert_eq!(e.line, Some(2));
    assert!(
        e.message
            .contains("unknown target 'sm_91' (sm_70, sm_72, sm_75"),
        "{}",
        e.message
    );
}
