//! Pipeline text as `opt` users write it: `default<O2>`, `module(function(...))`,
//! `loop-mssa(...)` and `print<...>` analysis printers.

use gyre_transforms::{Knobs, Options, PassManager};

const LOOP: &str = "\
kernel @k(i32) {
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

fn run(pipeline: &str) -> Result<(String, String), String> {
    let mut m = gyre_ir::parse_module(LOOP).expect("parses");
    let mut pm = PassManager::from_pipeline(pipeline, Knobs::default(), Options::default())?;
    let report = pm.run_module(&mut m).map_err(|e| e.to_string())?;
    Ok((m.to_string(), report.dumps))
}

#[test]
fn default_o2_is_the_default_pipeline() {
    let expected = run(gyre_transforms::DEFAULT_PIPELINE).unwrap().0;
    for p in [
        "default<O1>",
        "default<O2>",
        "default<O3>",
        "module(default<O2>)",
    ] {
        assert_eq!(run(p).unwrap().0, expected, "{p}");
    }
    // O0 runs nothing.
    let original = gyre_ir::parse_module(LOOP).unwrap().to_string();
    assert_eq!(run("default<O0>").unwrap().0, original);
    assert_ne!(expected, original, "the default pipeline changes this loop");
    let e = run("default<Os>").unwrap_err();
    assert!(
        e.contains("pipeline:1: default<...> takes one of O0, O1, O2, O3"),
        "{e}"
    );
}

#[test]
fn module_and_function_adaptors_nest() {
    let flat = run("loop-simplify,lcssa").unwrap().0;
    assert_eq!(
        run("module(function(loop-simplify,lcssa))").unwrap().0,
        flat
    );
    let e = run("function(module(lcssa))").unwrap_err();
    assert!(
        e.contains("pipeline:10: module(...) can only be the outermost adaptor"),
        "{e}"
    );
    let e = run("lcssa(verify)").unwrap_err();
    assert!(e.contains("'lcssa' is not an adaptor"), "{e}");
}

#[test]
fn loop_mssa_is_loop() {
    // No loop passes are registered yet: an empty loop(...) is a syntax error, and a
    // function pass inside either spelling is rejected the same way.
    let a = run("loop(lcssa)").unwrap_err();
    let b = run("loop-mssa(lcssa)").unwrap_err();
    assert!(a.contains("cannot run inside loop(...)"), "{a}");
    assert_eq!(a.replace("pipeline:6", ""), b.replace("pipeline:11", ""));
}

#[test]
fn print_prints_analyses() {
    let (_, dumps) = run("print<domtree>").unwrap();
    assert!(dumps.contains("block1"), "{dumps}");
    let (_, loops) = run("print<loops>").unwrap();
    assert!(loops.to_lowercase().contains("loop"), "{loops}");
    assert_ne!(dumps, loops);
    let (_, u) = run("print<uniformity>").unwrap();
    assert!(u.contains("uniform") || u.contains("divergent"), "{u}");
    // The printer sees the function as the passes before it left it.
    let (_, after) = run("loop-simplify,print<cfg>").unwrap();
    let (_, before) = run("print<cfg>,loop-simplify").unwrap();
    assert_ne!(before, after, "loop-simplify adds a preheader");
    let e = run("print<bogus>").unwrap_err();
    assert!(
        e.contains("print<...> takes one analysis: cfg, domtree, postdomtree, loops, uniformity"),
        "{e}"
    );
}
