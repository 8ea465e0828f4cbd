//! Every fuzz target under `cargo test`: its checked-in seeds, its regression files
//! (failures found by campaigns, shrunk) and a fixed number of generated inputs.
//!
//! A regression file with a sibling `<file>.ignored` is a known failure not fixed yet
//! (the sibling says why); it is run and reported, and must still fail (when it starts
//! passing, delete the `.ignored` file).

use gyre_fuzz::campaign::stored_inputs;
use gyre_fuzz::{run_check, target, Input};

fn replay(name: &str, generated: u64) {
    let t = target(name).expect("registered target");
    let mut failures = Vec::new();
    let mut files = 0;
    for what in ["seeds", "regressions"] {
        for path in stored_inputs(t, what) {
            let data = std::fs::read(&path).expect("readable");
            let input = Input::from_file(t.kind, &data)
                .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            let result = run_check(t, &input);
            files += 1;
            let mut ignored = path.clone().into_os_string();
            ignored.push(".ignored");
            if let Ok(reason) = std::fs::read_to_string(&ignored) {
                println!(
                    "IGNORED {}: {}",
                    path.display(),
                    reason.lines().next().unwrap_or("")
                );
                if result.is_ok() {
                    failures.push(format!(
                        "{}: passes now; delete its .ignored file",
                        path.display()
                    ));
                }
                continue;
            }
            if let Err(e) = result {
                failures.push(format!("{}: {e}", path.display()));
            }
        }
    }
    // Fixed seeds, so the run is the same every time.
    for seed in 0..generated {
        let input = (t.generate)(seed);
        if let Err(e) = run_check(t, &input) {
            failures.push(format!(
                "generated seed {seed}: {e}\n{}",
                String::from_utf8_lossy(&input.to_file())
            ));
        }
    }
    println!("{name}: {files} stored inputs, {generated} generated");
    assert!(
        failures.is_empty(),
        "{} failures; first:\n{}",
        failures.len(),
        failures[0]
    );
}

#[test]
fn parse_gir() {
    replay("parse_gir", 1000);
}

#[test]
fn parse_ll() {
    replay("parse_ll", 1000);
}

#[test]
fn verify() {
    replay("verify", 1000);
}

#[test]
fn analyses() {
    replay("analyses", 400);
}

#[test]
fn uniformity() {
    replay("uniformity", 200);
}

#[test]
fn pipeline() {
    replay("pipeline", 200);
}

#[test]
fn codegen() {
    replay("codegen", 150);
}

#[test]
fn roundtrip_llvm() {
    replay("roundtrip_llvm", 200);
}

/// The campaign driver finds a planted failure, shrinks it and counts executions.
#[test]
fn campaign_shrinks_a_planted_failure() {
    use gyre_fuzz::{Features, InputKind, Target};
    /// Fails on every kernel with a store after a branch: the shrinker must keep one
    /// store and cut most of the rest.
    fn check(input: &Input) -> Result<Features, String> {
        let m = &input.kernel().module;
        let stores = m
            .functions
            .values()
            .flat_map(|f| {
                f.layout
                    .blocks()
                    .flat_map(|b| f.layout.block_insts(b).collect::<Vec<_>>())
                    .filter(|&i| f.dfg.inst(i).opcode() == gyre_ir::Opcode::Store)
                    .collect::<Vec<_>>()
            })
            .count();
        if stores > 0 {
            Err("planted: a store".into())
        } else {
            Ok(vec![])
        }
    }
    fn generate(seed: u64) -> Input {
        Input::Kernel(gyre_fuzz::Case::generate(seed, |_| {}))
    }
    static PLANTED: Target = Target {
        name: "planted",
        doc: "test",
        kind: InputKind::Kernel,
        generate,
        check,
    };
    let cfg = gyre_fuzz::campaign::Config {
        duration: std::time::Duration::from_secs(60),
        cpu_budget: None,
        jobs: 1,
        seed: 7,
        shrink_budget: std::time::Duration::from_secs(20),
        max_execs: Some(3),
        write_files: false,
        hang_secs: None,
    };
    let s = gyre_fuzz::campaign::run(&PLANTED, &cfg);
    assert!(s.execs >= 1);
    assert_eq!(s.found.len(), 1, "{s:?}");
    // Re-shrink the same seed by hand to look at the result.
    let big = generate(s.found[0].seed);
    let (small, msg) = gyre_fuzz::shrink::shrink(
        &PLANTED,
        big.clone(),
        "planted: a store".into(),
        std::time::Duration::from_secs(20),
    );
    assert!(msg.starts_with("planted"));
    let size = |i: &Input| i.kernel().module.to_string().len();
    assert!(
        size(&small) * 2 < size(&big),
        "shrunk {} -> {} bytes",
        size(&big),
        size(&small)
    );
    gyre_ir::verifier::verify_module(&small.kernel().module).expect("shrunk module verifies");
}

/// Stored kernels (seeds and shrunk regressions) with a UB-free contract keep it: the
/// original runs without undefined behaviour on every input the kernel targets use, so a
/// replay compares behaviours, not two errors of the same kind. (The `roundtrip_llvm`
/// regression 54009023 was shrunk before the shrinker checked this: it read a local slot
/// whose initializing store had been removed, a poison branch condition on inputs 0.)
#[test]
fn stored_kernels_have_no_undefined_behaviour() {
    use gyre_fuzz::case::{undefined_behaviour, UB_CHECKED_INPUTS};
    use gyre_fuzz::InputKind;
    let mut failures = Vec::new();
    let mut checked = 0;
    for t in gyre_fuzz::TARGETS
        .iter()
        .filter(|t| t.kind == InputKind::Kernel)
    {
        for what in ["seeds", "regressions"] {
            for path in stored_inputs(t, what) {
                let data = std::fs::read(&path).expect("readable");
                let input = Input::from_file(t.kind, &data).expect("a kernel case");
                let case = input.kernel();
                checked += usize::from(case.contract.ub_free);
                for k in 0..UB_CHECKED_INPUTS {
                    if let Some(e) = undefined_behaviour(case, &case.module, k) {
                        failures.push(format!("{}: {e}", path.display()));
                    }
                }
            }
        }
    }
    println!("{checked} UB-free stored kernels");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Shrinking keeps a UB-free kernel free of undefined behaviour. The planted failure (a
/// `udiv` or `sdiv`) survives zeroing the division's guarded divisor (`b | 1`), which
/// divides by zero.
#[test]
fn shrinking_keeps_kernels_free_of_undefined_behaviour() {
    use gyre_fuzz::case::{undefined_behaviour, UB_CHECKED_INPUTS};
    use gyre_fuzz::{Features, InputKind, Target};
    use gyre_ir::Opcode;
    fn check(input: &Input) -> Result<Features, String> {
        let m = &input.kernel().module;
        let div = m.functions.values().any(|f| {
            f.layout.blocks().any(|b| {
                f.layout
                    .block_insts(b)
                    .any(|i| matches!(f.dfg.inst(i).opcode(), Opcode::Udiv | Opcode::Sdiv))
            })
        });
        if div {
            Err("planted: a division".into())
        } else {
            Ok(vec![])
        }
    }
    fn generate(seed: u64) -> Input {
        Input::Kernel(gyre_fuzz::Case::generate(seed, |o| {
            o.max_blocks = o.max_blocks.min(20);
        }))
    }
    static PLANTED: Target = Target {
        name: "planted_division",
        doc: "test",
        kind: InputKind::Kernel,
        generate,
        check,
    };
    let mut shrunk = 0;
    for seed in 0..20u64 {
        let big = generate(seed);
        if check(&big).is_ok() {
            continue;
        }
        let (small, _) = gyre_fuzz::shrink::shrink(
            &PLANTED,
            big.clone(),
            "planted: a division".into(),
            std::time::Duration::from_secs(10),
        );
        for k in 0..UB_CHECKED_INPUTS {
            if undefined_behaviour(big.kernel(), &big.kernel().module, k).is_none() {
                let e = undefined_behaviour(small.kernel(), &small.kernel().module, k);
                assert!(
                    e.is_none(),
                    "seed {seed}: {}\n{}",
                    e.unwrap_or_default(),
                    small.kernel().to_text()
                );
            }
        }
        shrunk += 1;
        if shrunk == 3 {
            break;
        }
    }
    assert_eq!(shrunk, 3, "too few kernels with a division");
}

/// A kernel case survives its file format: module, contract, seed and choices.
#[test]
fn case_files_round_trip() {
    for seed in 0..50u64 {
        let t = target(["pipeline", "codegen", "verify"][seed as usize % 3]).expect("target");
        let Input::Kernel(case) = (t.generate)(seed) else {
            panic!("kernel target")
        };
        let text = case.to_text();
        let back = gyre_fuzz::Case::from_text(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
        assert_eq!(back.to_text(), text, "seed {seed}");
        assert_eq!(back.contract, case.contract, "seed {seed}");
        assert_eq!(back.meta, case.meta, "seed {seed}");
    }
}

/// Failure kinds ignore numbers, so a shrunk input that fails at another value or offset
/// still counts as the same failure.
#[test]
fn signatures_ignore_numbers() {
    use gyre_fuzz::signature;
    assert_eq!(
        signature("behaviour differs after the pipeline: inputs 1: p0[12]: 0x01 before"),
        signature("behaviour differs after the pipeline: inputs 0: p0[4]: 0x07 before")
    );
    assert_ne!(
        signature("codegen failed: x"),
        signature("ptx-sim differs from the interpreter: y")
    );
    // A shrinking step that turns a wrong value into a data race is another failure.
    assert_eq!(
        signature("ptx-sim differs from the interpreter: buffer p0, byte 20: interpreter 0x00, ptx-sim 0xff"),
        signature("ptx-sim differs from the interpreter: buffer p0, byte 4: interpreter 0x7f, ptx-sim 0xc0")
    );
    assert_ne!(
        signature("ptx-sim differs from the interpreter: buffer p0, byte 20: interpreter 0x00, ptx-sim 0xff"),
        signature("ptx-sim differs from the interpreter: interpreter: cta (0,0,0) thread (1,0,0) in @kernel block2 at `store v143, v146`: data race")
    );
}
