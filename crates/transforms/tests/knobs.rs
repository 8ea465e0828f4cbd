//! Honest knobs: every registered knob is read by some pass, the knobs of passes Gyre does
//! not have are errors, and `verify-loop-lcssa` does what it says.

use gyre_ir::parse_module;
use gyre_transforms::knobs::{apply_setting, KnobError, KNOBS};
use gyre_transforms::lcssa::verify_lcssa;
use gyre_transforms::registry::{PassKind, PASSES};
use gyre_transforms::{Analyses, AnalysisCache, Knobs, Options, PassManager};
use std::path::Path;

fn example(name: &str) -> String {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples")
        .join(name);
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// Run every registered pass, alone, on the shipped examples, and require that each
/// registered knob was read by some pass.
#[test]
fn every_registered_knob_is_read_by_a_pass() {
    let mut read: Vec<&'static str> = Vec::new();
    for file in ["stencil2d.gir", "search.gir", "matmul_tiled.gir"] {
        let module = parse_module(&example(file)).expect("example parses");
        for p in PASSES {
            let pipeline = match p.kind {
                PassKind::Function | PassKind::Module => p.name.to_string(),
                PassKind::Loop => format!("loop({})", p.name),
            };
            let mut pm =
                PassManager::from_pipeline(&pipeline, Knobs::default(), Options::default())
                    .expect("registered passes build");
            let mut m = module.clone();
            pm.run_module(&mut m).expect("runs");
            read.extend(pm.knobs.read_knobs());
        }
    }
    for k in KNOBS {
        assert!(
            read.contains(&k.name),
            "knob '{}' of '{}' is registered but no pass read it",
            k.name,
            k.pass
        );
    }
}

#[test]
fn knobs_of_missing_passes_are_errors() {
    // Every knob still planned names its missing pass (the list shrinks as passes land).
    for &(name, pass) in gyre_transforms::knobs::PLANNED_KNOBS {
        let mut k = Knobs::default();
        let e = apply_setting(&mut k, &format!("{name}=1")).unwrap_err();
        assert!(
            matches!(e, KnobError::PassMissing { pass: p, .. } if p == pass),
            "{e}"
        );
        assert!(e.to_string().contains(&format!("'{pass}'")), "{e}");
    }
    // A registered knob of a pass that exists is not "missing".
    let mut k = Knobs::default();
    apply_setting(&mut k, "iv-loop-level=2").expect("indvars exists");
    assert_eq!(k.get("iv-loop-level").as_deref(), Some("2"));
    apply_setting(&mut k, "unswitch-uniform-only=false").expect("a registered knob");
    assert!(!k.unswitch_uniform_only());
}

/// `verify-loop-lcssa` after `lcssa` passes; the check itself fails on a function that is
/// not in LCSSA form.
#[test]
fn verify_loop_lcssa_checks() {
    let src = "kernel @k(i32) {
block0(v0: i32):
    v1 = iconst.i32 0
    v2 = iconst.i32 1
    jump block1(v1)
block1(v3: i32):
    v4 = iadd v3, v2
    v5 = icmp slt v4, v0
    brif v5, block1(v4), block2
block2:
    v6 = iadd v4, v2
    return
}
";
    let module = parse_module(src).expect("parses");
    let f = module.functions.values().next().expect("one function");
    let mut cache = AnalysisCache::new();
    cache.ensure(f, Analyses::LOOPS).expect("valid");
    let e = verify_lcssa(f, &cache).unwrap_err();
    assert!(e.contains("loop at block1"), "{e}");

    let mut knobs = Knobs::default();
    apply_setting(&mut knobs, "verify-loop-lcssa=true").expect("live knob");
    let mut pm = PassManager::from_pipeline("lcssa", knobs, Options::default()).expect("builds");
    let mut m = module.clone();
    let report = pm
        .run_module(&mut m)
        .expect("lcssa forms LCSSA, the check passes");
    assert_eq!(report.stats.get("lcssa", "NumLoopsVerified"), 1);
    assert_eq!(pm.knobs.read_knobs(), vec!["verify-loop-lcssa"]);
}
