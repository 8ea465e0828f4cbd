//! Property tests of `licm` over generated UB-free kernels (nests, `continue` latches,
//! `break`s to any enclosing loop, early returns, switches, two-entry cycles, memory,
//! barriers, calls, divisions; zero-trip loops come from the random `n`).
//!
//! For every generated module, after `licm` alone, after `licm,loop-rotate,licm` and after
//! `-O` with licm (`LICM_PIPELINE`), under `--verify-each` (the verifier,
//! loop-simplify and LCSSA form on every loop, every preserved analysis equal to a fresh
//! one):
//! - the interpreter shows the same behaviour as the input, on random inputs that follow
//!   the kernel's contract;
//! - idempotence: after the pipelines that end with licm, running `loop(licm)` again
//!   hoists nothing and prints the same module.
//!
//! And on a 3,000-deep nest (over 9,000 blocks), an invariant load and its arithmetic
//! leave every level, one level per visit, with the loop forest computed once.

mod common;

use gyre_interp::{assert_same_behaviour, Arg};
use gyre_ir::generate::{generate_kernel_module, GenOptions, SplitMix64};
use gyre_ir::{write_module, Module};
use gyre_transforms::pipeline::LICM_PIPELINE;
use gyre_transforms::{Knobs, Options, PassManager, Report};

fn print(m: &Module) -> String {
    let mut s = String::new();
    write_module(&mut s, m).expect("writing to a String");
    s
}

fn apply(pipeline: &str, m: &mut Module) -> Result<Report, String> {
    let options = Options {
        verify_each: true,
        ..Options::default()
    };
    let mut pm = PassManager::from_pipeline(pipeline, Knobs::default(), options)?;
    pm.run_module(m).map_err(|e| e.to_string())
}

#[derive(Default, Debug)]
struct Totals {
    cases: u64,
    hoisted: u64,
    loads: u64,
    trapping: u64,
    not_guaranteed: u64,
    clobbered: u64,
}

fn check_case(opts: &GenOptions, seed: u64, totals: &mut Totals) -> Result<(), String> {
    let (m, contract) = generate_kernel_module(opts, &mut SplitMix64::new(seed));
    let pipeline = match seed % 3 {
        0 => "loop-simplify,lcssa,loop(licm)",
        1 => "loop-simplify,lcssa,loop(licm,loop-rotate,licm)",
        _ => LICM_PIPELINE,
    };
    let mut a = m.clone();
    let r = apply(pipeline, &mut a)?;
    totals.hoisted += r.stats.get("licm", "NumHoisted");
    totals.loads += r.stats.get("licm", "NumMovedLoads");
    totals.trapping += r.stats.get("licm", "NumMovedTrapping");
    totals.not_guaranteed += r.stats.get("licm", "NumNotGuaranteedToExecute");
    totals.clobbered += r.stats.get("licm", "NumLoadClobbered");
    common::same_behaviour_on_random_inputs(&m, &a, &contract, seed, pipeline)?;
    // After `LICM_PIPELINE`, later passes (indvars, simplify) leave new invariant code behind: only
    // the pipelines that end with licm must be idempotent.
    if pipeline != LICM_PIPELINE {
        let mut b = a.clone();
        let r2 = apply("loop(licm)", &mut b)?;
        if r2.stats.get("licm", "NumHoisted") != 0 || print(&a) != print(&b) {
            return Err(format!("{pipeline}: a second licm changed the module"));
        }
    }
    totals.cases += 1;
    Ok(())
}

#[test]
fn licm_on_generated_kernels() {
    let per_profile = common::cases(150);
    let mut totals = Totals::default();
    common::sweep(
        &["default", "loopy", "reducible", "switchy"],
        per_profile,
        &mut totals,
        check_case,
    );
    assert!(
        totals.hoisted > 100 && totals.loads > 0 && totals.not_guaranteed > 0,
        "the generator must exercise licm: {totals:?}"
    );
}

/// A nest `depth` deep of bottom-tested loops; the innermost body loads constant memory at
/// an invariant address and computes with it.
fn deep_nest(depth: usize) -> String {
    let mut s = String::from(
        "global @tab: const [4 x i32] align 4 = [1, 2, 3, 4]\n\
         global @out: global [4 x i32] align 4\n\n\
         kernel @k(i32, i32) {\nblock0(v0: i32, v1: i32):\n    v2 = iconst.i32 0\n    v3 = iconst.i32 1\n    jump block1(v2)\n",
    );
    // Level i (1-based): header block i (x_i = v(10 + i)) enters level i + 1; the latch of
    // level i is block (depth + i): x_i + 1 < n loops, else it goes to level i - 1's latch.
    let x = |i: usize| 10 + i;
    for i in 1..depth {
        s += &format!("block{i}(v{}: i32):\n    jump block{}(v2)\n", x(i), i + 1);
    }
    let d = depth;
    let w = 10 + 2 * depth + 10;
    s += &format!(
        "block{d}(v{xd}: i32):\n    v{a} = global_addr @tab\n    v{b} = load.i32 v{a}\n    v{c} = imul v0, v{b}\n    v{e} = iadd v{c}, v{xd}\n    v{f} = global_addr @out\n    store v{e}, v{f}\n    v{g} = iadd v{xd}, v3\n    v{h} = icmp slt v{g}, v1\n    brif v{h}, block{d}(v{g}), block{l}\n",
        xd = x(d),
        a = w,
        b = w + 1,
        c = w + 2,
        e = w + 3,
        f = w + 4,
        g = w + 5,
        h = w + 6,
        l = 2 * d - 1,
    );
    let mut v = w + 10;
    for i in (1..depth).rev() {
        let latch = depth + i;
        let next = if i == 1 {
            format!("block{}", 2 * depth)
        } else {
            format!("block{}", latch - 1)
        };
        s += &format!(
            "block{latch}:\n    v{v} = iadd v{xi}, v3\n    v{c} = icmp slt v{v}, v1\n    brif v{c}, block{i}(v{v}), {next}\n",
            xi = x(i),
            c = v + 1,
        );
        v += 2;
    }
    s += &format!("block{}:\n    return\n}}\n", 2 * depth);
    s
}

#[test]
fn a_deep_nest_is_hoisted_out_level_by_level() {
    let depth = 3000;
    let text = deep_nest(depth);
    let mut m = gyre_ir::parse_module(&text).expect("parses");
    gyre_ir::verifier::verify_module(&m).expect("verifies");
    // Small nests run in the interpreter before and after.
    let mut small = gyre_ir::parse_module(&deep_nest(4)).expect("parses");
    let orig = small.clone();
    apply("loop-simplify,lcssa,loop(licm)", &mut small).expect("runs");
    for n in [0, 1, 2] {
        let inputs = gyre_interp::Inputs {
            launch: gyre_interp::Launch::linear(1, 2, vec![Arg::Int(7), Arg::Int(n)]),
            memory: gyre_interp::Memory::new(),
        };
        assert_same_behaviour(&orig, &small, "k", &inputs).expect("same behaviour");
    }
    PassManager::from_pipeline("loop-simplify,lcssa", Knobs::default(), Options::default())
        .expect("ok")
        .run_module(&mut m)
        .expect("runs");
    let start = std::time::Instant::now();
    let mut pm =
        PassManager::from_pipeline("loop(licm)", Knobs::default(), Options::default()).expect("ok");
    let r = pm.run_module(&mut m).expect("runs");
    println!("licm on a {depth}-deep nest: {:?}", start.elapsed());
    // The load, its address and `v0 * load` move out of every level, once per level.
    assert_eq!(r.stats.get("licm", "NumMovedLoads"), depth as u64);
    assert!(r.stats.get("licm", "NumHoisted") >= 4 * depth as u64);
    for (name, _, count) in &r.analysis_times {
        assert!(*count <= 1, "{name} computed {count} times");
    }
    let f = m.functions.values().next().expect("one kernel");
    gyre_ir::verifier::verify_function(f, Some(&m)).expect("verifies");
    let entry_or_preheader = f.layout.entry_block().expect("entry");
    // The outermost preheader is the entry block (it jumps straight to the nest).
    let text = print(&m);
    let head: String = text
        .lines()
        .skip_while(|l| !l.starts_with("block0"))
        .take_while(|l| !l.starts_with("block1"))
        .collect::<Vec<_>>()
        .join("\n");
    assert!(
        head.contains("load.i32") && head.contains("imul v0"),
        "not hoisted to {entry_or_preheader}:\n{head}"
    );
}
