//! Export to LLVM IR and import back: LLVM 14 accepts the export (`opt -passes=verify`,
//! `llc -march=nvptx64`), the re-import verifies, and the interpreter runs the original
//! and the round-tripped module to the same memory.

use gyre_interp::{assert_same_behaviour, random_inputs};
use gyre_ir::generate::{generate_from_seed, GenOptions};
use gyre_ir::verifier::verify_module;
use gyre_ir::Module;
use gyre_llvm::{export_module, import_module, ExportOptions};
use gyre_test_tools::Tool;
use std::path::{Path, PathBuf};
use std::process::Command;

/// LLVM 14 `opt` for `test`, or `None` after the skip notice (see `gyre_test_tools`).
fn opt(test: &str) -> Option<PathBuf> {
    gyre_test_tools::require(Tool::Opt, test)
}

fn temp_file(tag: &str, text: &str) -> PathBuf {
    let p = std::env::temp_dir().join(format!("gyre-llvm-{}-{tag}.ll", std::process::id()));
    std::fs::write(&p, text).expect("temp dir is writable");
    p
}

/// Run an LLVM tool on `text`; `Err` carries its stderr.
fn run_tool(tool: &Path, args: &[&str], tag: &str, text: &str) -> Result<(), String> {
    let p = temp_file(tag, text);
    let out = Command::new(tool)
        .args(args)
        .arg(&p)
        .args(["-o", "/dev/null"])
        .output()
        .expect("LLVM tool runs");
    let _ = std::fs::remove_file(&p);
    if out.status.success() {
        Ok(())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).into_owned())
    }
}

fn llvm_verify(opt: &Path, text: &str, opaque: bool, tag: &str) {
    let mut args = vec!["-passes=verify", "-S"];
    if opaque {
        args.push("-opaque-pointers");
    }
    if let Err(e) = run_tool(opt, &args, tag, text) {
        panic!("opt rejects the export of {tag}:\n{e}\n--- module ---\n{text}");
    }
}

fn typed() -> ExportOptions {
    ExportOptions {
        opaque_pointers: false,
    }
}
fn opaque() -> ExportOptions {
    ExportOptions {
        opaque_pointers: true,
    }
}

fn reimport(m: &Module, opts: &ExportOptions, tag: &str) -> Module {
    let text = export_module(m, opts);
    let back = import_module(&text)
        .unwrap_or_else(|e| panic!("{tag}: re-import failed: {}\n{text}", e.render(tag)));
    if let Err(e) = verify_module(&back) {
        panic!("{tag}: re-import does not verify: {e:?}\n{text}");
    }
    back
}

#[test]
fn examples_export_verify_and_reimport() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("examples directory")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "gir"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no examples found in {}", dir.display());
    let test = "examples_export_verify_and_reimport";
    let opt = opt(test);
    let llc = gyre_test_tools::require(Tool::Llc, test);
    for f in &files {
        let tag = f.file_name().unwrap().to_string_lossy().into_owned();
        let src = std::fs::read_to_string(f).unwrap();
        let m = gyre_ir::parser::parse_module(&src).expect("example parses");
        for (opts, is_opaque) in [(typed(), false), (opaque(), true)] {
            let text = export_module(&m, &opts);
            if let Some(opt) = &opt {
                llvm_verify(opt, &text, is_opaque, &tag);
            }
            if let (Some(llc), false) = (&llc, is_opaque) {
                if let Err(e) = run_tool(llc, &["-march=nvptx64", "-mcpu=sm_70"], &tag, &text) {
                    panic!("llc rejects the export of {tag}:\n{e}");
                }
            }
            let back = reimport(&m, &opts, &tag);
            assert_eq!(back.functions.len(), m.functions.len());
            for (_, f) in m.functions.iter() {
                let id = back.func_by_name(&f.name).expect("function kept");
                assert_eq!(
                    back.functions[id].kind, f.kind,
                    "{tag}: kind of @{}",
                    f.name
                );
                assert_eq!(back.functions[id].sig, f.sig);
            }
            for (_, g) in m.globals.iter() {
                let id = back.global_by_name(&g.name).expect("global kept");
                assert_eq!(&back.globals[id], g, "{tag}: global @{}", g.name);
            }
        }
    }
}

/// Generated modules: export passes LLVM's verifier, and import(export(m)) runs like m.
#[test]
fn generated_modules_round_trip_and_behave_alike() {
    let opt = opt("generated_modules_round_trip_and_behave_alike");
    // GYRE_LLVM_SEEDS=N runs more seeds by hand; CI keeps the default.
    let seeds: u64 = std::env::var("GYRE_LLVM_SEEDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(60);
    let mut compared = 0;
    let mut ran_ok = 0;
    for seed in 0..seeds {
        let (m, contract) = generate_from_seed(&GenOptions::default(), seed);
        verify_module(&m).expect("generator output verifies");
        let kernel = m.functions[contract.kernel].name.clone();
        for (opts, is_opaque) in [(typed(), false), (opaque(), true)] {
            let tag = format!("seed{seed}{}", if is_opaque { "-opaque" } else { "" });
            if let Some(opt) = &opt {
                // LLVM runs are the slow part: check a third of the seeds with opt.
                if seed % 3 == 0 {
                    llvm_verify(opt, &export_module(&m, &opts), is_opaque, &tag);
                }
            }
            let back = reimport(&m, &opts, &tag);
            let inputs = random_inputs(&contract, seed);
            let mut mem = inputs.memory.clone();
            if gyre_interp::run_kernel(&m, &kernel, &inputs.launch, &mut mem).is_ok() {
                ran_ok += 1;
            }
            if let Err(d) = assert_same_behaviour(&m, &back, &kernel, &inputs) {
                panic!("{tag}: import(export(m)) behaves differently: {d}");
            }
            compared += 1;
        }
    }
    assert_eq!(compared, seeds * 2);
    // The comparison means something only if the kernels mostly run to completion.
    assert!(
        ran_ok * 10 >= compared * 9,
        "only {ran_ok}/{compared} runs succeeded"
    );
}

/// Minimal options (straight-line code and branches) with many seeds: cheap, and every
/// seed is also checked by `opt`.
#[test]
fn small_generated_functions_pass_opt() {
    let Some(opt) = opt("small_generated_functions_pass_opt") else {
        return;
    };
    for seed in 100..115u64 {
        let (m, contract) = generate_from_seed(&GenOptions::minimal(), seed);
        let text = export_module(&m, &typed());
        llvm_verify(&opt, &text, false, &format!("minimal{seed}"));
        let back = reimport(&m, &typed(), &format!("minimal{seed}"));
        let kernel = m.functions[contract.kernel].name.clone();
        assert_same_behaviour(&m, &back, &kernel, &random_inputs(&contract, seed))
            .unwrap_or_else(|d| panic!("minimal{seed}: {d}"));
    }
}

/// Warp collectives, ordered atomics, fences and clock: the export passes `opt` (typed
/// and opaque pointers) and `llc`, and imports back to the same module.
#[test]
fn warp_ops_orders_and_fences_round_trip() {
    let src = "
kernel @k(ptr.global, ptr.shared) convergent anynan {
block0(v0: ptr.global, v1: ptr.shared):
    v3 = iconst.i32 -1
    v4 = iconst.i32 31
    v2 = tid.x
    v5 = shfl_up v2, v4, v4, v3
    v6 = sitofp.f32 v2
    v7 = shfl_bfly v6, v4, v4, v3
    v8 = shfl_down v5, v4, v4, v3
    v9 = shfl_idx v8, v4, v4, v3
    v10 = icmp eq v9, v2
    v11 = vote_any v10, v3
    v12 = vote_all v11, v3
    v13 = vote_uni v12, v3
    v14 = vote_ballot v13, v3
    warp_sync v3
    fence seq_cst gpu
    fence seq_cst cta
    fence seq_cst sys
    v15 = atomic_add seq_cst sys v0, v14
    v16 = atomic_or acquire cta v1, v15
    v17 = atomic_exch release v0, v16
    v18 = atomic_umax acq_rel sys v1, v17
    v19 = atomic_smin v0, v18
    v20 = atomic_cas seq_cst v0, v19, v2
    v21 = atomic_cas acquire cta v1, v20, v2
    v22 = atomic_cas release sys v0, v21, v2
    v23 = atomic_inc v0, v22
    v24 = atomic_dec sys v1, v23
    v25 = atomic_inc cta v0, v24
    v26 = clock.i32
    v27 = clock.i64
    v28 = fptosi.i32 v7
    v29 = iadd v25, v26
    v30 = iadd v29, v28
    store v30, v0
    store v27, v0
    return
}
";
    // `anynan`: the importer marks every function so (LLVM's NaN semantics), and the
    // module must print back exactly.
    let m = gyre_ir::parser::parse_module(src).expect("parses");
    verify_module(&m).expect("verifies");
    let test = "warp_ops_orders_and_fences_round_trip";
    let opt = opt(test);
    let llc = gyre_test_tools::require(Tool::Llc, test);
    let print = |m: &Module| {
        let mut s = String::new();
        gyre_ir::write_module(&mut s, m).unwrap();
        s
    };
    for (opts, is_opaque) in [(typed(), false), (opaque(), true)] {
        let text = export_module(&m, &opts);
        if let Some(opt) = &opt {
            llvm_verify(opt, &text, is_opaque, test);
        }
        if let (Some(llc), false) = (&llc, is_opaque) {
            if let Err(e) = run_tool(llc, &["-march=nvptx64", "-mcpu=sm_70"], test, &text) {
                panic!("llc rejects the export:\n{e}\n{text}");
            }
        }
        let back = reimport(&m, &opts, test);
        assert_eq!(print(&back), print(&m), "export:\n{text}");
    }
    // An ordered inc/dec goes through membar fences around the relaxed intrinsic.
    let ordered = src.replace("atomic_inc v0, v22", "atomic_inc seq_cst v0, v22");
    let m = gyre_ir::parser::parse_module(&ordered).expect("parses");
    let text = export_module(&m, &typed());
    assert!(
        text.contains("call void @llvm.nvvm.membar.gl()\n  %"),
        "{text}"
    );
    if let Some(opt) = &opt {
        llvm_verify(opt, &text, false, test);
    }
    reimport(&m, &typed(), test);
}

/// Linkage and inline hints survive the round trip, and LLVM 14 accepts their export;
/// every function comes back `anynan`.
#[test]
fn linkage_and_inline_hints_round_trip() {
    let src = "global @out: global [4 x i32] align 4\n\n\
        func @a(i32) -> i32 internal noinline {\nblock0(v0: i32):\n    return v0\n}\n\n\
        func @b(i32) -> i32 convergent internal alwaysinline {\nblock0(v0: i32):\n    return v0\n}\n\n\
        func @c(i32) -> i32 noinline {\nblock0(v0: i32):\n    return v0\n}\n\n\
        func @d(i32) -> i32 inlinehint {\nblock0(v0: i32):\n    return v0\n}\n\n\
        kernel @k(i32) {\nblock0(v0: i32):\n    v1 = call @a(v0)\n    v2 = call @b(v1)\n    \
        v3 = call @c(v2)\n    v5 = call @d(v3)\n    v4 = global_addr @out\n    store v5, v4\n    return\n}\n";
    let m = gyre_ir::parse_module(src).expect("parses");
    for (opts, is_opaque) in [(typed(), false), (opaque(), true)] {
        let back = reimport(&m, &opts, "linkage");
        for (f, g) in m.functions.values().zip(back.functions.values()) {
            assert_eq!(
                (f.internal, f.inline, f.convergent),
                (g.internal, g.inline, g.convergent),
                "@{}",
                f.name
            );
            // None of them is `anynan` in Gyre; LLVM IR's NaN rule makes each one so.
            assert!(
                !f.any_nan && g.any_nan,
                "@{} is anynan once imported",
                f.name
            );
        }
        if let Some(opt) = opt("linkage_and_inline_hints_round_trip") {
            llvm_verify(&opt, &export_module(&m, &opts), is_opaque, "linkage");
        }
    }
}
