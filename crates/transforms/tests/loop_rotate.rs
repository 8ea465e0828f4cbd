//! Property tests of `loop-rotate` over generated UB-free kernels (nests, `continue`
//! latches, `break`s to any enclosing loop, early returns, switches, two-entry cycles,
//! barriers, calls; zero-trip loops come from the random `n`).
//!
//! For every generated module, after `loop-simplify,lcssa,loop(loop-rotate)` with random
//! `rotation-max-header-size` and header duplication on or off, under `--verify-each`
//! (the verifier, loop-simplify and LCSSA form on every loop, the rotated form of every
//! loop the pass reported rotated, every preserved analysis equal to a fresh one):
//! - the interpreter shows the same behaviour as the input, on random inputs that follow
//!   the kernel's contract;
//! - every loop not in or around an irreducible cycle is rotated, or was left alone with
//!   a remark, one per loop visit;
//! - idempotence: running `loop(loop-rotate)` again rotates nothing and prints the same
//!   module.
//!
//! And on one function with thousands of loops, the loop forest and dominator tree are
//! computed once, not once per rotated loop.

mod common;

use gyre_ir::generate::{generate_kernel_module, GenOptions, SplitMix64};
use gyre_ir::{write_module, Module};
use gyre_transforms::knobs::apply_setting;
use gyre_transforms::verify::check_forms;
use gyre_transforms::{Forms, Knobs, Options, PassManager, Report};

fn print(m: &Module) -> String {
    let mut s = String::new();
    write_module(&mut s, m).expect("writing to a String");
    s
}

fn apply(pipeline: &str, knobs: &Knobs, m: &mut Module) -> Result<Report, String> {
    let options = Options {
        verify_each: true,
        ..Options::default()
    };
    let mut pm = PassManager::from_pipeline(pipeline, knobs.clone(), options)?;
    pm.run_module(m).map_err(|e| e.to_string())
}

#[derive(Default, Debug)]
struct Totals {
    cases: u64,
    rotated: u64,
    folded: u64,
    left_alone: u64,
}

fn check_case(opts: &GenOptions, seed: u64, totals: &mut Totals) -> Result<(), String> {
    let (m, contract) = generate_kernel_module(opts, &mut SplitMix64::new(seed));
    let mut knobs = Knobs::default();
    let size = seed % 24;
    apply_setting(&mut knobs, &format!("rotation-max-header-size={size}"))
        .map_err(|e| e.to_string())?;
    if seed % 7 == 3 {
        apply_setting(&mut knobs, "enable-loop-header-duplication=false")
            .map_err(|e| e.to_string())?;
    }
    let mut a = m.clone();
    let r = apply("loop-simplify,lcssa,loop(loop-rotate)", &knobs, &mut a)?;
    let rotated = r.stats.get("loop-rotate", "NumRotated");
    totals.rotated += rotated;
    totals.folded += r.stats.get("loop-rotate", "NumGuardsFolded");
    let remarks = r.remarks.iter().filter(|x| x.pass == "loop-rotate").count() as u64;
    totals.left_alone += remarks;
    let visits = r
        .loop_visits
        .iter()
        .find(|(p, _)| *p == "loop-rotate")
        .map_or(0, |(_, n)| *n);
    if rotated + remarks != visits {
        return Err(format!(
            "{visits} loops visited, {rotated} rotated, {remarks} remarks: every loop left \
             alone must say why"
        ));
    }
    common::same_behaviour_on_random_inputs(&m, &a, &contract, seed, "")?;
    let mut b = a.clone();
    let r2 = apply("loop(loop-rotate)", &knobs, &mut b)?;
    if r2.stats.get("loop-rotate", "NumRotated") != 0 || print(&a) != print(&b) {
        return Err("a second loop-rotate changed the module".into());
    }
    totals.cases += 1;
    Ok(())
}

#[test]
fn loop_rotate_on_generated_kernels() {
    let per_profile = common::cases(250);
    let mut totals = Totals::default();
    common::sweep(
        &["default", "loopy", "reducible", "switchy"],
        per_profile,
        &mut totals,
        check_case,
    );
    assert!(
        totals.rotated > 100 && totals.folded > 10 && totals.left_alone > 100,
        "the generator must exercise rotation: {totals:?}"
    );
}

/// One kernel with many sequential `while` loops: rotating them all computes the loop
/// forest and the dominator tree once (before the first loop), not once per loop.
#[test]
fn no_analysis_is_recomputed_per_loop() {
    let n = 2000;
    let mut s = String::from(
        "global @out: global [4 x i32] align 4\n\nkernel @k(i32) {\nblock0(v0: i32):\n    v1 = iconst.i32 0\n    jump block1(v1)\n",
    );
    // Loop i: header block(2i+1)(x), body block(2i+2), exit into the next header.
    let mut v = 2;
    for i in 0..n {
        let (h, body, next) = (2 * i + 1, 2 * i + 2, 2 * i + 3);
        let (x, c, one, y) = (v, v + 1, v + 2, v + 3);
        v += 4;
        s += &format!(
            "block{h}(v{x}: i32):\n    v{c} = icmp slt v{x}, v0\n    brif v{c}, block{body}, block{next}(v{x})\nblock{body}:\n    v{one} = iconst.i32 1\n    v{y} = iadd v{x}, v{one}\n    jump block{h}(v{y})\n"
        );
    }
    s += &format!(
        "block{}(v{v}: i32):\n    v{} = global_addr @out\n    store v{v}, v{}\n    return\n}}\n",
        2 * n + 1,
        v + 1,
        v + 1
    );
    let mut m = gyre_ir::parse_module(&s).expect("parses");
    // Each header's exit is the next header: loop-simplify gives each loop a preheader
    // and a dedicated exit first.
    PassManager::from_pipeline("loop-simplify,lcssa", Knobs::default(), Options::default())
        .expect("ok")
        .run_module(&mut m)
        .expect("runs");
    let options = Options::default();
    let mut pm =
        PassManager::from_pipeline("loop(loop-rotate)", Knobs::default(), options).expect("ok");
    let r = pm.run_module(&mut m).expect("runs");
    assert_eq!(r.stats.get("loop-rotate", "NumRotated"), n as u64);
    for (name, _, count) in &r.analysis_times {
        assert!(*count <= 1, "{name} computed {count} times");
    }
    // And the result is right: the function verifies, every loop is rotated and still in
    // loop-simplify and LCSSA form.
    for f in m.functions.values() {
        gyre_ir::verifier::verify_function(f, Some(&m)).expect("verifies");
        check_forms(
            f,
            Forms {
                loop_simplify: true,
                lcssa: true,
                rotated: true,
            },
        )
        .expect("rotated, loop-simplify and LCSSA form");
    }
}
