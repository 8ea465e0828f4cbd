use super::*;
use std::os::unix::fs::PermissionsExt;

/// A fresh empty directory for one test.
fn scratch(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("gyre-test-tools-{}-{tag}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// An executable shell script at `path`.
fn script(path: &Path, body: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

#[test]
fn ptxas_search_order() {
    let d = scratch("ptxas");
    let root = d.join("ws");
    let bin = d.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    // Nothing anywhere.
    assert_eq!(locate_ptxas(None, &root, std::slice::from_ref(&bin)), None);
    // PATH.
    script(&bin.join("ptxas"), "exit 0");
    assert_eq!(
        locate_ptxas(None, &root, std::slice::from_ref(&bin)),
        Some(bin.join("ptxas"))
    );
    // The venv wins over PATH; the newest Python's when there are several.
    let venv = |py: &str| {
        root.join(format!(
            ".tools/venv/lib/{py}/site-packages/nvidia/cuda_nvcc/bin/ptxas"
        ))
    };
    script(&venv("python3.10"), "exit 0");
    script(&venv("python3.11"), "exit 0");
    assert_eq!(
        locate_ptxas(None, &root, std::slice::from_ref(&bin)),
        Some(venv("python3.11"))
    );
    // GYRE_PTXAS wins over both, and a named file that does not exist is not replaced by
    // a search (the setting is wrong, and saying "not found" shows it).
    let named = bin.join("ptxas");
    assert_eq!(
        locate_ptxas(Some(named.clone().into()), &root, &[]),
        Some(named)
    );
    assert_eq!(
        locate_ptxas(
            Some(d.join("nope").into()),
            &root,
            std::slice::from_ref(&bin)
        ),
        None
    );
    let _ = std::fs::remove_dir_all(&d);
}

/// Everything that runs a script is in this one test: a script written while another
/// thread forks can fail to start ("text file busy").
#[test]
fn tools_that_run() {
    let d = scratch("run");
    // LLVM: `opt-14` that is really 13 is passed over for an `opt` that is 14.
    let a = d.join("a");
    let b = d.join("b");
    script(&a.join("opt-14"), "echo 'LLVM version 13.0.1'");
    script(&b.join("opt"), "echo 'Debian LLVM version 14.0.6'");
    let dirs = [a.clone(), b.clone()];
    assert_eq!(locate_llvm14("opt", None, &dirs), Some(b.join("opt")));
    assert_eq!(locate_llvm14("llc", None, &dirs), None);
    // An override must be 14 too.
    assert_eq!(
        locate_llvm14("opt", Some(a.join("opt-14").into()), &dirs),
        None
    );
    assert_eq!(
        locate_llvm14("opt", Some(b.join("opt").into()), &[]),
        Some(b.join("opt"))
    );
    assert!(!is_llvm14(&d.join("missing")));

    // ptxas: silent success passes; any message, or a failure, is an error that carries
    // the output; the target reaches the command line.
    let ok = d.join("ok");
    script(
        &ok,
        r#"[ "$1" = "-arch=sm_80" ] || { echo "bad arch $1"; exit 1; }"#,
    );
    assert_eq!(run_ptxas(&ok, ".version 7.0", "sm_80"), Ok(()));
    let e = run_ptxas(&ok, ".version 7.0", "sm_70").unwrap_err();
    assert!(e.contains("bad arch -arch=sm_70"), "{e}");
    let warn = d.join("warn");
    script(&warn, "echo 'ptxas warning : something' >&2");
    let e = run_ptxas(&warn, "", "sm_90").unwrap_err();
    assert!(e.contains("ptxas warning : something"), "{e}");
    // The file ptxas is given holds the PTX.
    let cat = d.join("cat");
    script(
        &cat,
        r#"grep -q 'needle' "$4" || { echo missing; exit 1; }"#,
    );
    assert_eq!(run_ptxas(&cat, "a needle here", "sm_90"), Ok(()));
    assert!(run_ptxas(&cat, "hay", "sm_90").is_err());
    assert!(run_ptxas(&d.join("missing"), "", "sm_90")
        .unwrap_err()
        .contains("cannot run"));
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn policy() {
    let p = PathBuf::from("/x/ptxas");
    assert_eq!(
        decide(Some(p.clone()), Tool::Ptxas, "t", true),
        Ok(Some(p.clone()))
    );
    assert_eq!(
        decide(Some(p.clone()), Tool::Ptxas, "t", false),
        Ok(Some(p))
    );
    assert_eq!(decide(None, Tool::Opt, "t", false), Ok(None));
    let e = decide(None, Tool::Opt, "my_test", true).unwrap_err();
    assert!(e.contains("my_test") && e.contains("opt not found"), "{e}");
    assert!(e.contains("GYRE_REQUIRE_TOOLS=1"), "{e}");
    assert_eq!(
        skip_notice(Tool::Ptxas, "my_test"),
        format!("SKIP my_test: ptxas not found ({})", Tool::Ptxas.hint())
    );
}

#[test]
fn names_and_variables_are_distinct() {
    for (i, a) in Tool::ALL.iter().enumerate() {
        assert_eq!(a.slot(), i);
        for b in &Tool::ALL[i + 1..] {
            assert_ne!(a.name(), b.name());
            assert_ne!(a.env_var(), b.env_var());
        }
    }
}
