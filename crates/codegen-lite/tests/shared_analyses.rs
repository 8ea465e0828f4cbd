//! The optimizer and the emitter share one analysis cache per function: after the `-O`
//! pipeline, lowering to PTX computes only what the passes did not leave valid.

use gyre_codegen_lite::{compile_module, compile_module_with, CodegenOptions, Sm};
use gyre_transforms::{Analyses, Knobs, ModuleAnalyses, Options, PassManager};
use std::path::Path;

#[test]
fn compile_after_the_pipeline_computes_nothing_twice() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
    let opts = CodegenOptions { sm: Sm::Sm80 };
    for name in [
        "matmul_tiled.gir",
        "stencil2d.gir",
        "search.gir",
        "saxpy.gir",
    ] {
        let src = std::fs::read_to_string(root.join(name)).expect("example");
        let mut m = gyre_ir::parse_module(&src).expect("parses");
        let mut analyses = ModuleAnalyses::new();
        let mut pm =
            PassManager::from_pipeline("loop-simplify,lcssa", Knobs::default(), Options::default())
                .expect("pipeline");
        pm.run_module_with(&mut m, &mut analyses).expect("runs");
        let kept = Analyses::CFG
            .union(Analyses::DOMTREE)
            .union(Analyses::LOOPS);
        let before = analyses.computations(kept);
        let ptx = compile_module_with(&m, &opts, &mut analyses).expect("compiles");
        assert_eq!(
            analyses.computations(kept),
            before,
            "{name}: the emitter recomputed an analysis the pipeline left valid"
        );
        // The post-dominator tree and uniformity are the emitter's own: once per function
        // that may have a divergent branch (the others' branches are all uniform).
        let divergent = m
            .functions
            .values()
            .filter(|f| gyre_codegen_lite::uniform::needs_analysis(f))
            .count() as u32;
        assert!(
            divergent > 0,
            "{name}: a kernel with a source of divergence"
        );
        assert_eq!(
            analyses.computations(Analyses::UNIFORMITY),
            divergent,
            "{name}"
        );
        assert_eq!(
            analyses.computations(Analyses::POSTDOM),
            divergent,
            "{name}"
        );
        // Sharing changes nothing in the output.
        assert_eq!(ptx, compile_module(&m, &opts).expect("compiles"), "{name}");
        // A second lowering with the same caches computes nothing at all.
        let all = analyses.computations(Analyses::ALL);
        compile_module_with(&m, &opts, &mut analyses).expect("compiles");
        assert_eq!(analyses.computations(Analyses::ALL), all, "{name}");
    }
}

/// `compile_verified_module` (the emitter without its verifier run, for a module its
/// caller verified) gives the same PTX as the checked entry point, from empty caches
/// and from caches that already hold the uniformity (as `gyre compile`'s
/// divergent-barrier check leaves them), and then computes nothing again.
#[test]
fn verified_entry_point_matches_and_reuses_the_uniformity() {
    use gyre_codegen_lite::{compile_verified_module, CodegenFlags};
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
    let opts = CodegenOptions { sm: Sm::Sm80 };
    let flags = CodegenFlags::default();
    for name in ["block_reduce.gir", "matmul_tiled.gir", "tid_branch.gir"] {
        let src = std::fs::read_to_string(root.join(name)).expect("example");
        let m = gyre_ir::parse_module(&src).expect("parses");
        let want = compile_module(&m, &opts).expect("compiles");
        let mut cold = ModuleAnalyses::new();
        let got = compile_verified_module(&m, &opts, &flags, &mut cold).expect("compiles");
        assert_eq!(got, want, "{name}: empty caches");
        let mut warm = ModuleAnalyses::new();
        for (id, f) in m.functions.iter() {
            warm.get_mut(id)
                .ensure(f, Analyses::UNIFORMITY)
                .expect("analyses");
        }
        let all = warm.computations(Analyses::ALL);
        let got = compile_verified_module(&m, &opts, &flags, &mut warm).expect("compiles");
        assert_eq!(got, want, "{name}: filled caches");
        assert_eq!(
            warm.computations(Analyses::ALL),
            all,
            "{name}: the emitter recomputed an analysis the caches held"
        );
    }
}
