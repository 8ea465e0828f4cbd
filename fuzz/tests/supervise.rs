//! The campaign driver's supervisor: an abort or a hang in a campaign process becomes a
//! regression file and a ledger line, and the campaign goes on after it.

use std::path::Path;
use std::process::Command;

fn campaign(root: &Path, extra_env: (&str, &str), args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_campaign"))
        .args(args)
        .env("GYRE_FUZZ_ROOT", root)
        .env(extra_env.0, extra_env.1)
        .output()
        .expect("the campaign binary runs")
}

fn files(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

fn temp_root(name: &str) -> std::path::PathBuf {
    let root = std::env::temp_dir().join(format!("gyre-fuzz-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(&root).unwrap();
    root
}

#[test]
fn an_abort_becomes_a_crash_regression_and_the_campaign_goes_on() {
    let root = temp_root("abort");
    let out = campaign(
        &root,
        ("GYRE_FUZZ_ABORT_AT_SEED", "1003"),
        &[
            "verify",
            "--minutes",
            "0.1",
            "--jobs",
            "1",
            "--seed",
            "1000",
        ],
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stdout}\n{stderr}");
    let regs = files(&root.join("regressions/verify"));
    assert!(
        regs.len() == 1 && regs[0].starts_with("crash-abort-"),
        "{regs:?}\n{stdout}\n{stderr}"
    );
    let text = std::fs::read_to_string(root.join("regressions/verify").join(&regs[0])).unwrap();
    assert!(text.contains("seed 1003"), "{text}");
    // The restarted child went on from the next seed and finished normally.
    let ledger = std::fs::read_to_string(root.join("campaigns.tsv")).unwrap();
    let rows: Vec<&str> = ledger.lines().skip(1).collect();
    assert!(rows.len() >= 2, "{ledger}");
    assert!(rows[0].contains("\t1000\t"), "{ledger}");
    assert!(rows[1].contains("\t1004\t"), "{ledger}");
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn a_hang_becomes_a_hang_regression() {
    let root = temp_root("hang");
    let out = campaign(
        &root,
        ("GYRE_FUZZ_HANG_AT_SEED", "2001"),
        &[
            "verify",
            "--minutes",
            "0.1",
            "--jobs",
            "2",
            "--seed",
            "2000",
            "--hang-seconds",
            "1",
        ],
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stdout}\n{stderr}");
    let regs = files(&root.join("regressions/verify"));
    assert!(
        regs.len() == 1 && regs[0].starts_with("hang-"),
        "{regs:?}\n{stdout}\n{stderr}"
    );
    let _ = std::fs::remove_dir_all(&root);
}
