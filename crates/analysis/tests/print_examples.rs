//! Filetests of the uniformity analysis: `filetests/uniformity/*.gir`.
//!
//! Each file is a module (or names one with `; source: <path from the workspace root>`)
//! followed by expectations on the annotated printout of all its functions:
//! `; check: TEXT` — a later line contains TEXT; `; nextln: TEXT` — the line right after
//! the previous match contains TEXT. A `test uniformity` header line is skipped. On a
//! mismatch the whole printout is shown.

use gyre_analysis::{print_uniformity, Cfg, DomTree, LoopInfo, PostDomTree, Uniformity};
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Annotated printout of every function of the module in `src`.
fn annotate(src: &str, what: &str) -> String {
    let module = gyre_ir::parse_module(src).unwrap_or_else(|e| panic!("{what}: {e:?}"));
    let mut out = String::new();
    for f in module.functions.values() {
        let cfg = Cfg::with_function(f).unwrap_or_else(|e| panic!("{what}: {e}"));
        let dt = DomTree::with_function(f, &cfg);
        let pdt = PostDomTree::with_function(f, &cfg);
        let li = LoopInfo::with_function(f, &cfg, &dt);
        let u = Uniformity::with_function(f, &cfg, &dt, &pdt, &li);
        out.push_str(&print_uniformity(&u, f, Some(&module)));
    }
    out
}

fn run_file(path: &Path) -> Result<usize, String> {
    let text = std::fs::read_to_string(path).map_err(|e| e.to_string())?;
    let what = path.display().to_string();
    let mut src: String = text
        .lines()
        .map(|l| if l.starts_with("test ") { "" } else { l })
        .collect::<Vec<_>>()
        .join("\n");
    for l in text.lines() {
        if let Some(p) = l.strip_prefix("; source:") {
            src = std::fs::read_to_string(root().join(p.trim())).map_err(|e| e.to_string())?;
        }
    }
    let out = annotate(&src, &what);
    let lines: Vec<&str> = out.lines().collect();
    let mut next = 0usize;
    let mut checks = 0;
    for l in text.lines() {
        let (kind, pat) = if let Some(p) = l.strip_prefix("; check:") {
            ("check", p.trim())
        } else if let Some(p) = l.strip_prefix("; nextln:") {
            ("nextln", p.trim())
        } else {
            continue;
        };
        checks += 1;
        let found = if kind == "check" {
            (next..lines.len()).find(|&i| lines[i].contains(pat))
        } else {
            (next < lines.len() && lines[next].contains(pat)).then_some(next)
        };
        match found {
            Some(i) => next = i + 1,
            None => {
                return Err(format!(
                    "{what}: `; {kind}: {pat}` not matched after line {next}\n--- output ---\n{out}"
                ))
            }
        }
    }
    if checks == 0 {
        return Err(format!("{what}: no checks"));
    }
    Ok(checks)
}

#[test]
fn uniformity_filetests() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("filetests/uniformity");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("filetests/uniformity exists")
        .map(|e| e.expect("readable entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "gir"))
        .collect();
    files.sort();
    assert!(files.len() >= 8, "expected the uniformity filetests");
    let mut errors = Vec::new();
    for f in &files {
        if let Err(e) = run_file(f) {
            errors.push(e);
        }
    }
    assert!(errors.is_empty(), "{}", errors.join("\n\n"));
}

/// Every example parses and analyses, and the printout keeps the text format.
#[test]
fn examples_print_and_reparse() {
    let dir = root().join("examples");
    for e in std::fs::read_dir(dir).expect("examples/ exists") {
        let p = e.expect("readable entry").path();
        if p.extension().is_none_or(|x| x != "gir") {
            continue;
        }
        let src = std::fs::read_to_string(&p).expect("readable example");
        let mut out: String = src
            .lines()
            .filter(|l| l.starts_with("global "))
            .map(|l| format!("{l}\n"))
            .collect();
        out.push_str(&annotate(&src, &p.display().to_string()));
        // The annotations are comments: the printout parses back to the same module.
        let again = gyre_ir::parse_module(&out).expect("annotated output parses");
        let orig = gyre_ir::parse_module(&src).expect("example parses");
        assert_eq!(format!("{again:?}"), format!("{orig:?}"), "{}", p.display());
    }
}
