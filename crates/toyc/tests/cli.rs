//! The `toyc` binary: options, outputs and failures.

use std::path::Path;
use std::process::{Command, Output};

fn toyc(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_toyc"))
        .args(args)
        .current_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join("../.."))
        .output()
        .expect("toyc runs")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[test]
fn emits_ptx_and_gir() {
    let o = toyc(&["-O", "--sm", "70", "examples/vadd.toy"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let ptx = text(&o.stdout);
    assert!(
        ptx.contains(".target sm_70") && ptx.contains(".entry vadd"),
        "{ptx}"
    );
    let o = toyc(&["--emit", "gir", "examples/matmul_tiled.toy"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let gir = text(&o.stdout);
    let m = gyre_ir::parse_module(&gir).unwrap_or_else(|e| panic!("{}", e.render("out", &gir)));
    gyre_ir::verifier::verify_module(&m).expect("the printed IR verifies");
    assert!(m.global_by_name("matmul_tiled.ta").is_some(), "{gir}");
    assert!(m.func_by_name("tile_index").is_some(), "{gir}");
}

#[test]
fn failures_are_messages_not_panics() {
    let dir = std::env::temp_dir().join(format!("toyc-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let bad = dir.join("bad.toy");
    std::fs::write(
        &bad,
        "kernel k() {\n    let x = ;\n    let y: i32 = 1.5;\n}\n",
    )
    .expect("write");
    let bad = bad.to_str().expect("utf-8 temp path");
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (
            vec![bad],
            "bad.toy:2:13: error: expected an expression, found `;`",
        ),
        (
            vec![bad],
            "bad.toy:3:18: error: mismatched types: `y` is i32 but the value is f32",
        ),
        (
            vec!["--sm", "12", "examples/vadd.toy"],
            "unknown target `12`",
        ),
        (
            vec!["--emit", "llvm", "examples/vadd.toy"],
            "--emit takes `ptx` or `gir`",
        ),
        (vec!["--frobnicate"], "unknown option `--frobnicate`"),
        (vec!["no/such/file.toy"], "no/such/file.toy: cannot read"),
        (vec![], "usage: toyc"),
    ];
    for (args, want) in cases {
        let o = toyc(&args);
        let err = text(&o.stderr);
        assert!(!o.status.success(), "{args:?} succeeded");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
        assert!(err.contains(want), "{args:?}: want {want:?} in {err}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
