//! Warp collectives, ordered atomics, fences and `clock` lowered to PTX: ptxas accepts
//! them for every target and ptx-sim (with its own warp rendezvous) computes what the
//! interpreter does.

mod common;

use common::{compare, compile, parse, ptxas_or_skip, run_ptxas};
use gyre_codegen_lite::Sm;
use gyre_interp::{Arg, Inputs, Launch, Memory};

/// `out[tid] = v9`, where `body` computes `v9` from `v2 = tid.x`, `v3 = laneid`,
/// `v4 = -1`, `v5 = 31`, `v6 = 0`, and may use `v1` (a second buffer).
fn kernel(body: &str) -> String {
    format!(
        "
kernel @k(ptr.global, ptr.global) convergent {{
block0(v0: ptr.global, v1: ptr.global):
    v2 = tid.x
    v3 = laneid
    v4 = iconst.i32 -1
    v5 = iconst.i32 31
    v6 = iconst.i32 0
{body}
    v90 = sext.i64 v2
    v91 = ptradd v0, v90, 4
    store v9, v91
    return
}}"
    )
}

const REDUCE: &str = "    v20 = iconst.i32 16
    v21 = shfl_down v2, v20, v5, v4
    v22 = iadd v2, v21
    v23 = iconst.i32 8
    v24 = shfl_down v22, v23, v5, v4
    v25 = iadd v22, v24
    v26 = iconst.i32 1
    v27 = shfl_up v25, v26, v6, v4
    v28 = iconst.i32 6175
    v29 = iconst.i32 3
    v30 = shfl_idx v27, v29, v28, v4
    v31 = shfl_bfly v30, v26, v5, v4
    v9 = iadd v31, v27
";

const FLOAT_SHFL: &str = "    v20 = sitofp.f32 v2
    v21 = iconst.i32 2
    v22 = shfl_down v20, v21, v5, v4
    v23 = fadd v20, v22
    v9 = bitcast.i32 v23
";

const VOTES: &str = "    v10 = iconst.i32 3
    v11 = urem v2, v10
    v12 = icmp eq v11, v6
    v13 = vote_any v12, v4
    v14 = vote_all v12, v4
    v15 = vote_uni v12, v4
    v16 = vote_ballot v12, v4
    warp_sync v4
    v17 = zext.i32 v13
    v18 = zext.i32 v14
    v19 = zext.i32 v15
    v20 = iconst.i32 2
    v21 = imul v18, v20
    v22 = iconst.i32 4
    v23 = imul v19, v22
    v24 = xor v16, v23
    v25 = iadd v17, v21
    v9 = iadd v25, v24
";

/// Partial mask: lanes below 16 shuffle among themselves.
const PARTIAL: &str = "    v10 = iconst.i32 16
    v11 = icmp ult v3, v10
    brif v11, block1, block2(v2)
block1:
    v12 = iconst.i32 65535
    v13 = iconst.i32 15
    v14 = iconst.i32 1
    v15 = shfl_down v2, v14, v13, v12
    jump block2(v15)
block2(v9: i32):
";

/// Ordered atomics, inc/dec, fences; every thread records the old values.
const ATOMICS: &str = "    v10 = iconst.i32 5
    v11 = atomic_inc seq_cst sys v1, v10
    v12 = iconst.i64 4
    v13 = ptradd v1, v12, 1
    v14 = atomic_dec acquire cta v13, v10
    fence seq_cst gpu
    v15 = iconst.i64 8
    v16 = ptradd v1, v15, 1
    v17 = atomic_add release v16, v2
    fence acq_rel sys
    v18 = iconst.i64 12
    v19 = ptradd v1, v18, 1
    v20 = atomic_cas acq_rel sys v19, v6, v2
    v21 = atomic_umax relaxed cta v19, v2
    v22 = iconst.i32 1000
    v23 = imul v11, v22
    v24 = imul v14, v10
    v25 = iadd v23, v24
    v26 = iadd v25, v17
    v9 = iadd v26, v20
";

fn inputs(threads: u32) -> Inputs {
    let mut memory = Memory::new();
    memory.alloc_zeroed("o", 4 * threads as usize);
    memory.alloc_zeroed("a", 16);
    Inputs {
        launch: Launch::linear(1, threads, vec![Arg::buffer("o"), Arg::buffer("a")]),
        memory,
    }
}

#[test]
fn warp_kernels_assemble_and_match_the_interpreter() {
    let ptxas = ptxas_or_skip("warp_kernels_assemble_and_match_the_interpreter (ptxas part)");
    for (name, body, threads) in [
        ("reduce", REDUCE, 64),
        ("reduce-short-warp", REDUCE, 48),
        ("float", FLOAT_SHFL, 32),
        ("votes", VOTES, 40),
        ("partial", PARTIAL, 32),
        ("atomics", ATOMICS, 37),
    ] {
        let m = parse(&kernel(body));
        gyre_ir::verifier::verify_module(&m).unwrap_or_else(|e| panic!("{name}: {e:?}"));
        for sm in [Sm::Sm70, Sm::Sm80, Sm::Sm90] {
            let ptx = compile(&m, sm);
            if let Some(p) = &ptxas {
                run_ptxas(p, &ptx, sm).unwrap_or_else(|e| panic!("{name} {sm:?}: {e}\n{ptx}"));
            }
            compare(&m, "k", &inputs(threads), &ptx)
                .unwrap_or_else(|e| panic!("{name} {sm:?}: {e}\n{ptx}"));
        }
    }
}

#[test]
fn orders_scopes_and_clock_lower_as_documented() {
    let m = parse(&kernel(&format!(
        "{ATOMICS}    v80 = clock.i32\n    v81 = clock.i64\n"
    )));
    let ptx = compile(&m, Sm::Sm70);
    let lines: Vec<&str> = ptx.lines().map(str::trim).collect();
    let at = |s: &str| {
        lines
            .iter()
            .position(|l| l.starts_with(s))
            .unwrap_or_else(|| panic!("no `{s}` in\n{ptx}"))
    };
    // seq_cst: fence.sc right before the acq_rel atom, at the atomic's scope.
    assert_eq!(
        at("fence.sc.sys;") + 1,
        at("atom.acq_rel.sys.global.inc.u32")
    );
    at("atom.acquire.cta.global.dec.u32");
    at("fence.sc.gpu;");
    at("atom.release.gpu.global.add.u32");
    at("fence.acq_rel.sys;");
    at("atom.acq_rel.sys.global.cas.b32");
    at("atom.relaxed.cta.global.max.u32");
    assert!(ptx.contains("%clock;") && ptx.contains("%clock64;"));
    let m = parse(&kernel(REDUCE));
    let ptx = compile(&m, Sm::Sm70);
    assert!(ptx.contains("shfl.sync.down.b32"), "{ptx}");
    assert!(ptx.contains("shfl.sync.idx.b32"), "{ptx}");
}

/// Generated UB-free kernels with warp collectives: ptxas accepts them and ptx-sim
/// computes what the interpreter does, with and without the `-O` pipeline.
#[test]
fn generated_warp_kernels_match_the_interpreter() {
    use gyre_ir::generate::{generate_from_seed, GenOptions};
    let opts = GenOptions {
        allow_warp_ops: true,
        allow_irreducible: false,
        ..GenOptions::default()
    };
    let ptxas = ptxas_or_skip("generated_warp_kernels_match_the_interpreter (ptxas part)");
    let mut with_warp = 0;
    for seed in 0..40u64 {
        let (m, contract) = generate_from_seed(&opts, seed);
        let kernel = m.functions[contract.kernel].name.clone();
        let inputs = gyre_interp::random_inputs(&contract, seed ^ 0x77);
        let mut opt = m.clone();
        gyre_transforms::PassManager::from_pipeline(
            "loop-simplify,lcssa",
            gyre_transforms::Knobs::default(),
            gyre_transforms::Options::default(),
        )
        .unwrap()
        .run_module(&mut opt)
        .unwrap_or_else(|e| panic!("seed {seed}: {e:?}"));
        with_warp +=
            usize::from(common::text(&m).contains("shfl_") || common::text(&m).contains("vote_"));
        for (what, module) in [("plain", &m), ("-O", &opt)] {
            for sm in [Sm::Sm70, Sm::Sm90] {
                let ptx = compile(module, sm);
                if let Some(p) = &ptxas {
                    run_ptxas(p, &ptx, sm)
                        .unwrap_or_else(|e| panic!("seed {seed} {what} {sm:?}: {e}"));
                }
                compare(module, &kernel, &inputs, &ptx).unwrap_or_else(|e| {
                    panic!("seed {seed} {what} {sm:?}: {e}\n{}", common::text(module))
                });
            }
        }
    }
    assert!(
        with_warp >= 8,
        "only {with_warp} kernels with shuffles or votes"
    );
}
