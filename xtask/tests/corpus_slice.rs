//! The corpus harness on a fixed slice of fast CUDA kernels: part of `cargo test
//! --workspace` (and so of `cargo xtask test`). Skipped, with a message, when the corpus
//! is absent; a missing ptxas or llc skips those stages unless `GYRE_REQUIRE_TOOLS=1`.

use std::path::Path;
use xtask::corpus::{self, report, Outcome, Setup, Tools};

/// The slice: 2-D indexing (2mm), shared memory and barriers (transposeCoalesced),
/// host-filled `__constant__` data (cfd initialize_variables reads `ff_variable`),
/// a libdevice call that llc's side must link (`__nv_ceil`, particlefilter sum), and
/// integer sorting with a special launch (oddEvenMergeGlobal).
const SLICE: &[&str] = &[
    "polybench__2mm_kernel2.ll",
    "cudasamples__transpose_transposeCoalesced.ll",
    "rodinia__cfd_initialize_variables.ll",
    "rodinia__particlefilter_sum.ll",
    "cudasamples__sortingNetworks_oddEvenMergeGlobal.ll",
];

#[test]
fn corpus_slice_passes_every_stage() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask lives one level below the workspace root");
    let Some(dir) = corpus::find_corpus(root) else {
        println!("skipped: corpus not found");
        return;
    };
    let tools = Tools::find();
    if gyre_test_tools::tools_required() {
        assert!(tools.ptxas.is_some(), "ptxas not found");
        assert!(tools.llc.is_some(), "LLVM 14 llc not found");
        assert!(
            tools.llvm_link.is_some() && tools.libdevice.is_some(),
            "llvm-link or libdevice.10.bc not found: {tools:?}"
        );
    }
    let setup = Setup {
        corpus: dir,
        tools,
        only: Some(SLICE.iter().map(|s| s.to_string()).collect()),
        runs: 2,
    };
    let reports = corpus::run(&setup).expect("the manifest names every slice file");
    let summary = report::summarize(&reports);
    let text = report::console(&setup, &reports, &summary);
    println!("{text}");
    assert_eq!(reports.len(), SLICE.len());
    assert!(summary.unmet.is_empty(), "targets missed:\n{text}");
    for r in &reports {
        for (stage, o) in r.stages() {
            match o {
                Outcome::Pass(_) => {}
                // Only a missing tool may skip a stage of these kernels.
                Outcome::Skipped(why) if why.contains("not found") => {
                    assert!(!gyre_test_tools::tools_required(), "{text}")
                }
                o => panic!("{}: {stage}: {o:?}\n{text}", r.entry.file),
            }
        }
    }
}
