//! The uniformity printout of every example keeps the text format. (The uniformity
//! filetests are run by `crates/filetests`, with every other kind.)

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
