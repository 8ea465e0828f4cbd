//! The emitter skips the uniformity analysis for a kernel without sources of divergence
//! (`uniform::needs_analysis`): every branch is then uniform, as the analysis itself
//! finds, and the PTX is the same as with the analysis computed.
//!
//! Generated kernels become source-free by reading `ctaid.x` where they read `tid.*` or
//! `laneid` (no memory, so no atomics or generic loads; no calls), with and without the
//! `-O` pipeline; the same kernels with their `tid` reads keep the analysis.

use gyre_analysis::{Analyses, ModuleAnalyses};
use gyre_codegen_lite::uniform::needs_analysis;
use gyre_codegen_lite::{compile_verified_module, CodegenFlags, CodegenOptions, Sm};
use gyre_ir::generate::{generate_from_seed, GenOptions};
use gyre_ir::{InstructionData, Module, Opcode, SpecialReg};
use gyre_transforms::{Knobs, Options, PassManager};

/// Every `tid.*`/`laneid` read becomes `ctaid.x` (all are `i32`); returns how many.
fn without_thread_ids(m: &mut Module) -> usize {
    let mut n = 0;
    for f in m.functions.values_mut() {
        let insts: Vec<_> = f
            .layout
            .blocks()
            .flat_map(|b| f.layout.block_insts(b))
            .collect();
        for i in insts {
            if let InstructionData::Sreg { reg } = f.dfg.inst_mut(i) {
                if matches!(
                    reg,
                    SpecialReg::TidX | SpecialReg::TidY | SpecialReg::TidZ | SpecialReg::LaneId
                ) {
                    *reg = SpecialReg::CtaidX;
                    n += 1;
                }
            }
        }
    }
    n
}

fn optimized(m: &Module) -> Module {
    let mut m = m.clone();
    let mut pm = PassManager::from_pipeline(
        gyre_transforms::DEFAULT_PIPELINE,
        Knobs::default(),
        Options::default(),
    )
    .expect("pipeline");
    pm.run_module(&mut m).expect("-O");
    m
}

/// The PTX from empty caches and from caches holding the uniformity: equal. Returns
/// how many uniformity analyses the first lowering computed.
fn check(m: &Module, what: &str) -> u32 {
    gyre_ir::verifier::verify_module(m).expect("verifies");
    let opts = CodegenOptions { sm: Sm::Sm80 };
    let flags = CodegenFlags::default();
    let mut cold = ModuleAnalyses::new();
    let ptx = compile_verified_module(m, &opts, &flags, &mut cold).expect("compiles");
    let computed = cold.computations(Analyses::UNIFORMITY);
    let mut warm = ModuleAnalyses::new();
    for (id, f) in m.functions.iter() {
        let cache = warm.get_mut(id);
        cache.ensure(f, Analyses::UNIFORMITY).expect("analyses");
        if !needs_analysis(f) {
            // What the shortcut assumes: the analysis finds every branch uniform.
            for b in f.layout.blocks() {
                let t = f.layout.last_inst(b).expect("terminator");
                if matches!(f.dfg.inst(t).opcode(), Opcode::Brif | Opcode::BrTable) {
                    assert!(
                        cache.uniformity.is_branch_uniform(t),
                        "{what}: @{}: {b} branches divergently without a source",
                        f.name
                    );
                }
            }
        }
    }
    let with_analysis = compile_verified_module(m, &opts, &flags, &mut warm).expect("compiles");
    assert_eq!(ptx, with_analysis, "{what}: the shortcut changed the PTX");
    computed
}

#[test]
fn source_free_kernels_skip_the_analysis_and_emit_the_same_ptx() {
    let opts = GenOptions {
        allow_memory: false,
        allow_calls: false,
        allow_warp_ops: false,
        ..GenOptions::default()
    };
    let (mut skipped, mut branches) = (0, 0);
    for seed in 0..60 {
        let (mut m, _) = generate_from_seed(&opts, seed);
        let kernels = m.functions.len() as u32;
        let with_tid = check(&m, &format!("seed {seed}"));
        check(&optimized(&m), &format!("seed {seed} -O"));
        if without_thread_ids(&mut m) == 0 {
            continue;
        }
        assert_eq!(
            with_tid, kernels,
            "seed {seed}: a kernel reading tid is analysed"
        );
        for (what, m) in [("", m.clone()), (" -O", optimized(&m))] {
            let what = format!("seed {seed}{what}, no tid");
            let f = m.functions.values().next().expect("a kernel");
            assert!(!needs_analysis(f), "{what}: no source left");
            assert_eq!(check(&m, &what), 0, "{what}: the analysis was computed");
            skipped += 1;
            branches += f
                .layout
                .blocks()
                .filter_map(|b| f.layout.last_inst(b))
                .filter(|&t| f.dfg.inst(t).opcode() == Opcode::Brif)
                .count();
        }
    }
    // The test means something: kernels with conditional branches took the shortcut.
    assert!(
        skipped >= 40 && branches >= 200,
        "{skipped} kernels, {branches} branches"
    );
}
