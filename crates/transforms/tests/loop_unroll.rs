//! Property tests of `loop-unroll` over generated UB-free kernels (nests, `continue`
//! latches, `break`s to any enclosing loop, early returns, switches, two-entry cycles,
//! barriers, calls; constant and argument-bounded loops).
//!
//! For every generated module, under `--verify-each` (the verifier after every pass, every
//! loop report checked against a fresh loop forest, every analysis kept checked against a
//! fresh one, every "no change" claim checked), with random unroll knobs
//! (thresholds, counts, partial unrolling on or off, runtime unrolling on or off, with
//! or without convergent loops; the random inputs include zero-trip loops):
//! - after `loop(loop-unroll)` alone, behind `loop-rotate,indvars` (rotated loops with
//!   canonical counters, what `-O` gives it), and in the whole `-O` pipeline, the
//!   interpreter shows the same behaviour as the input on random inputs that follow the
//!   kernel's contract;
//! - every loop visit of `loop-unroll` either unrolled the loop (fully, partially or at
//!   run time) or left a remark saying why.
//!
//! And, on kernels built here, the exhaustive count of counters that double, halve or
//! multiply (`exhaustive_counts_of_nonlinear_counters`), with the same checks.

mod common;

use gyre_ir::generate::{generate_kernel_module, GenOptions, RandomSource, SplitMix64};
use gyre_ir::Module;
use gyre_transforms::knobs::apply_setting;
use gyre_transforms::verify::check_forms;
use gyre_transforms::Forms;
use gyre_transforms::{Knobs, Options, PassManager, Report, DEFAULT_PIPELINE};

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
    unrolled: u64,
    partial: u64,
    runtime: u64,
    kept: u64,
    exits_folded: u64,
    blocks_merged: u64,
    /// Remarks by kind.
    reasons: std::collections::BTreeMap<&'static str, u64>,
}

const UNROLL: &str = "loop-unroll";

fn check_case(opts: &GenOptions, seed: u64, totals: &mut Totals) -> Result<(), String> {
    let (m, contract) = generate_kernel_module(opts, &mut SplitMix64::new(seed));
    let mut knobs = Knobs::default();
    let mut r = SplitMix64::new(seed ^ 0x5eed);
    let mut set = |k: String| apply_setting(&mut knobs, &k).map_err(|e| e.to_string());
    match r.next_u64() % 4 {
        // Full unrolling at various thresholds and count limits.
        0 | 1 => {
            let threshold = [30, 150, 400, 2000, 20000][(r.next_u64() % 5) as usize];
            set(format!("unroll-threshold={threshold}"))?;
            if r.next_u64().is_multiple_of(4) {
                set(format!("unroll-full-max-count={}", 1 + r.next_u64() % 16))?;
            }
        }
        // Partial unrolling: full unrolling made impossible, so that every loop with a
        // constant count divisible by some factor is unrolled partially.
        2 => {
            set("unroll-threshold=2".into())?;
            set("unroll-allow-partial=true".into())?;
            let pt = [20, 37, 100, 400][(r.next_u64() % 4) as usize];
            set(format!("unroll-partial-threshold={pt}"))?;
            if r.next_u64().is_multiple_of(3) {
                set(format!("unroll-max-count={}", 2 + r.next_u64() % 6))?;
            }
        }
        // An explicit count (0: not set, 1: no unrolling).
        _ => {
            set(format!("unroll-count={}", r.next_u64() % 6))?;
            if r.next_u64().is_multiple_of(2) {
                set("unroll-threshold=2000".into())?;
            }
        }
    }
    // Runtime unrolling (default on; its count depends on the loop's size and
    // unroll-partial-threshold, set above in the partial case): sometimes off, sometimes
    // allowed with convergent operations.
    match r.next_u64() % 4 {
        0 => set("unroll-runtime=false".into())?,
        1 => set("unroll-runtime-convergent=true".into())?,
        _ => {}
    }
    let o = DEFAULT_PIPELINE.to_string();
    let pipelines = [
        "loop-simplify,lcssa,loop(loop-unroll)",
        "loop-simplify,lcssa,loop(loop-rotate,indvars,loop-unroll)",
        o.as_str(),
    ];
    for pipeline in pipelines {
        let mut a = m.clone();
        let r = apply(pipeline, &knobs, &mut a).map_err(|e| format!("{pipeline}: {e}"))?;
        let full = r.stats.get(UNROLL, "NumFullyUnrolled");
        let partial = r.stats.get(UNROLL, "NumPartiallyUnrolled");
        let runtime = r.stats.get(UNROLL, "NumRuntimeUnrolled");
        let unrolled = full + partial + runtime;
        totals.unrolled += full;
        totals.partial += partial;
        totals.runtime += runtime;
        totals.exits_folded += r.stats.get(UNROLL, "NumExitsFolded");
        totals.blocks_merged += r.stats.get(UNROLL, "NumBlocksMerged");
        let remarks = r.remarks.iter().filter(|x| x.pass == UNROLL).count() as u64;
        for x in r.remarks.iter().filter(|x| x.pass == UNROLL) {
            *totals.reasons.entry(x.kind).or_default() += 1;
        }
        totals.kept += remarks;
        let visits = r
            .loop_visits
            .iter()
            .find(|(p, _)| *p == UNROLL)
            .map_or(0, |(_, n)| *n);
        if unrolled + remarks != visits {
            return Err(format!(
                "{pipeline}: {visits} loops visited, {unrolled} unrolled, {remarks} remarks: \
                 every loop kept must say why"
            ));
        }
        common::same_behaviour_on_random_inputs(&m, &a, &contract, seed, pipeline)?;
    }
    totals.cases += 1;
    Ok(())
}

#[test]
fn loop_unroll_on_generated_kernels() {
    let per_profile = common::cases(60);
    let mut totals = Totals::default();
    common::sweep(
        &["default", "loopy", "reducible", "switchy"],
        per_profile,
        &mut totals,
        check_case,
    );
    assert!(
        totals.unrolled > 20 && totals.partial > 20 && totals.runtime > 20 && totals.kept > 100,
        "the generator must exercise full unrolling: {totals:?}"
    );
}

/// The same properties on kernels with iv-dependent branches (`if (i < 3) break`, in any
/// loop of a nest): once unrolled, such an exit out of several loops is folded to "leave"
/// in one copy, which is then outside the loop around the unrolled one (the forest and
/// LCSSA must follow). Kept apart from the sweep above so that its seeds keep their cases.
#[test]
fn loop_unroll_on_generated_kernels_with_iv_branches() {
    let per_profile = common::cases(60);
    let mut totals = Totals::default();
    let mut failures = Vec::new();
    for (name, opts) in common::profiles(&["default", "loopy", "reducible"]) {
        let opts = GenOptions {
            allow_iv_branches: true,
            ..opts
        };
        for seed in 0..per_profile {
            if let Err(e) = check_case(&opts, seed, &mut totals) {
                failures.push(format!("profile {name}+iv-branches, seed {seed}: {e}"));
                if failures.len() >= 5 {
                    break;
                }
            }
        }
    }
    println!("{totals:?}");
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert!(
        totals.unrolled > 20 && totals.exits_folded > 20,
        "the generator must exercise full unrolling with folded exits: {totals:?}"
    );
}

/// One kernel with many sequential constant loops (`for (i = 0; i < 4; i++) acc += i`):
/// unrolling them all computes each analysis at most once, not once per loop, and leaves
/// no loop.
#[test]
fn no_analysis_is_recomputed_per_loop() {
    let n = 2000;
    let mut s = String::from(
        "global @out: global [4 x i32] align 4\n\nkernel @k(i32) {\nblock0(v0: i32):\n    v1 = iconst.i32 0\n    jump block1(v1, v0)\n",
    );
    // Loop i: header block(2i+1)(x, acc), body block(2i+2), exit into the next header.
    let mut v = 2;
    for i in 0..n {
        let (h, body, next) = (2 * i + 1, 2 * i + 2, 2 * i + 3);
        let (x, acc, four, c, one, y, a2) = (v, v + 1, v + 2, v + 3, v + 4, v + 5, v + 6);
        v += 7;
        // The next loop's counter starts at v1 (0, defined in block0).
        s += &format!(
            "block{h}(v{x}: i32, v{acc}: i32):\n    v{four} = iconst.i32 4\n    v{c} = icmp slt v{x}, v{four}\n    brif v{c}, block{body}, block{next}(v1, v{acc})\nblock{body}:\n    v{one} = iconst.i32 1\n    v{y} = iadd v{x}, v{one}\n    v{a2} = iadd v{acc}, v{x}\n    jump block{h}(v{y}, v{a2})\n"
        );
    }
    s += &format!(
        "block{}(v{v}: i32, v{}: i32):\n    v{} = global_addr @out\n    store v{}, v{}\n    return\n}}\n",
        2 * n + 1,
        v + 1,
        v + 2,
        v + 1,
        v + 2
    );
    let mut m = gyre_ir::parse_module(&s).expect("parses");
    // Each header's exit is the next header: loop-simplify gives each loop a preheader
    // and a dedicated exit first.
    PassManager::from_pipeline("loop-simplify,lcssa", Knobs::default(), Options::default())
        .expect("ok")
        .run_module(&mut m)
        .expect("runs");
    let mut pm =
        PassManager::from_pipeline("loop(loop-unroll)", Knobs::default(), Options::default())
            .expect("ok");
    let r = pm.run_module(&mut m).expect("runs");
    assert_eq!(r.stats.get(UNROLL, "NumFullyUnrolled"), n as u64);
    for (name, _, count) in &r.analysis_times {
        assert!(*count <= 1, "{name} computed {count} times");
    }
    for f in m.functions.values() {
        gyre_ir::verifier::verify_function(f, Some(&m)).expect("verifies");
        check_forms(f, Forms::default()).expect("forms");
    }
    // No loop is left: a second run visits none.
    let r = pm.run_module(&mut m).expect("runs");
    let visits = r
        .loop_visits
        .iter()
        .find(|(p, _)| *p == UNROLL)
        .map_or(0, |(_, n)| *n);
    assert_eq!(visits, 0, "every loop is unrolled");
}

/// One kernel with many sequential loops bounded by an argument (`for (i = 0; i < n;
/// i++) out[i] = i`, rotated): runtime-unrolling them all keeps the CFG, the loop forest
/// and `nonlocal-uses` current, so each analysis is computed at most once, not once per
/// loop; each loop leaves an unrolled loop and a remainder loop, and the kernel still
/// behaves the same (n = 0, 5 and 13).
#[test]
fn runtime_unrolling_recomputes_no_analysis_per_loop() {
    let n = 500;
    let mut s = String::from(
        "global @out: global [64 x i32] align 4\n\nkernel @k(i32) {\nblock0(v0: i32):\n    v1 = iconst.i32 0\n    jump block1\n",
    );
    // Loop i: guard block(4i+1), preheader block(4i+2), header block(4i+3), exit
    // block(4i+4), then the next guard.
    let mut v = 2;
    for i in 0..n {
        let (g, ph, h, ex, next) = (4 * i + 1, 4 * i + 2, 4 * i + 3, 4 * i + 4, 4 * i + 5);
        let (c0, x, o, p, one, y, c) = (v, v + 1, v + 2, v + 3, v + 4, v + 5, v + 6);
        v += 7;
        s += &format!(
            "block{g}:\n    v{c0} = icmp slt v1, v0\n    brif v{c0}, block{ph}, block{next}\nblock{ph}:\n    jump block{h}(v1)\nblock{h}(v{x}: i32):\n    v{o} = global_addr @out\n    v{p} = ptradd v{o}, v{x}, 4\n    store v{x}, v{p}\n    v{one} = iconst.i32 1\n    v{y} = iadd v{x}, v{one}\n    v{c} = icmp slt v{y}, v0\n    brif v{c}, block{h}(v{y}), block{ex}\nblock{ex}:\n    jump block{next}\n"
        );
    }
    s += &format!("block{}:\n    return\n}}\n", 4 * n + 1);
    let m0 = gyre_ir::parse_module(&s).expect("parses");
    let mut m = m0.clone();
    let mut pm =
        PassManager::from_pipeline("loop(loop-unroll)", Knobs::default(), Options::default())
            .expect("ok");
    let r = pm.run_module(&mut m).expect("runs");
    assert_eq!(r.stats.get(UNROLL, "NumRuntimeUnrolled"), n as u64);
    for (name, _, count) in &r.analysis_times {
        assert!(*count <= 1, "{name} computed {count} times");
    }
    for f in m.functions.values() {
        gyre_ir::verifier::verify_function(f, Some(&m)).expect("verifies");
        check_forms(f, Forms::default()).expect("forms");
    }
    for arg in [0, 5, 13] {
        let inputs = gyre_interp::Inputs {
            launch: gyre_interp::Launch::linear(1, 1, vec![gyre_interp::Arg::Int(arg)]),
            memory: gyre_interp::Memory::new(),
        };
        gyre_interp::assert_same_behaviour(&m0, &m, "k", &inputs)
            .unwrap_or_else(|d| panic!("n = {arg}: {d}"));
    }
}

/// 2,000 sibling loops bounded by an argument inside one outer loop: runtime-unrolling
/// one rebuilds the loop forest of the whole nest (to add its remainder loop), so the
/// pass stops after a per-function budget of rebuilt blocks (`GrowthBudgetSpent`)
/// instead of spending the nest's size on every sibling; what it did still behaves the
/// same.
#[test]
fn rebuilding_nests_is_bounded_per_function() {
    let n = 2000;
    let mut s = String::from(
        "global @out: global [64 x i32] align 4\n\nkernel @k(i32, i32) {\nblock0(v0: i32, v99999: i32):\n    v1 = iconst.i32 0\n    jump block100000(v1)\nblock100000(v100000: i32):\n    jump block1\n",
    );
    let mut v = 2;
    for i in 0..n {
        let (g, ph, h, ex, next) = (4 * i + 1, 4 * i + 2, 4 * i + 3, 4 * i + 4, 4 * i + 5);
        let (c0, x, o, p, one, y, c) = (v, v + 1, v + 2, v + 3, v + 4, v + 5, v + 6);
        v += 7;
        s += &format!(
            "block{g}:\n    v{c0} = icmp slt v1, v0\n    brif v{c0}, block{ph}, block{next}\nblock{ph}:\n    jump block{h}(v1)\nblock{h}(v{x}: i32):\n    v{o} = global_addr @out\n    v{p} = ptradd v{o}, v{x}, 4\n    store v100000, v{p}\n    v{one} = iconst.i32 1\n    v{y} = iadd v{x}, v{one}\n    v{c} = icmp slt v{y}, v0\n    brif v{c}, block{h}(v{y}), block{ex}\nblock{ex}:\n    jump block{next}\n"
        );
    }
    s += &format!(
        "block{}:\n    v100001 = iconst.i32 1\n    v100002 = iadd v100000, v100001\n    v100003 = icmp slt v100002, v99999\n    brif v100003, block100000(v100002), block100001\nblock100001:\n    return\n}}\n",
        4 * n + 1
    );
    let m0 = gyre_ir::parse_module(&s).expect("parses");
    let mut m = m0.clone();
    let r = PassManager::from_pipeline(
        "loop-simplify,lcssa,loop(loop-unroll)",
        Knobs::default(),
        Options::default(),
    )
    .expect("ok")
    .run_module(&mut m)
    .expect("runs");
    let done = r.stats.get(UNROLL, "NumRuntimeUnrolled");
    let spent = r.stats.get(UNROLL, "NumGrowthBudgetSpent");
    assert!(
        done >= 10 && spent >= 1 && done + spent == n as u64,
        "{done} {spent}"
    );
    for f in m.functions.values() {
        gyre_ir::verifier::verify_function(f, Some(&m)).expect("verifies");
        check_forms(f, Forms::default()).expect("forms");
    }
    for args in [[0, 2], [5, 2], [9, 1]] {
        let inputs = gyre_interp::Inputs {
            launch: gyre_interp::Launch::linear(
                1,
                1,
                args.iter().map(|&a| gyre_interp::Arg::Int(a)).collect(),
            ),
            memory: gyre_interp::Memory::new(),
        };
        gyre_interp::assert_same_behaviour(&m0, &m, "k", &inputs)
            .unwrap_or_else(|d| panic!("{args:?}: {d}"));
    }
}

/// A nest of 18 loops of 2 iterations each, with an unlimited threshold: each level
/// unrolled doubles the code, so without a bound the nest would become 2^18 copies. The
/// per-function growth budget stops it (remark `GrowthBudgetSpent`); the function stays
/// verified and its size bounded.
#[test]
fn growth_is_bounded_per_function() {
    use gyre_ir::builder::{FunctionBuilder, InstBuilder};
    use gyre_ir::{AddrSpace, FuncKind, Function, IntCC, Signature, Type};
    let depth = 18;
    let mut m = Module::new();
    let sig = Signature {
        params: vec![Type::Ptr(AddrSpace::Global), Type::I32],
        ret: None,
    };
    let k = m.push_function(Function::new("k", FuncKind::Kernel, sig));
    let mut b = FunctionBuilder::new(&mut m.functions[k.id]);
    let entry = b.create_block();
    b.append_block_params_for_function_params(entry);
    b.switch_to_block(entry);
    b.seal_block(entry);
    let (out, n) = (b.block_params(entry)[0], b.block_params(entry)[1]);
    let acc = b.declare_var(Type::I32);
    let zero = b.iconst(Type::I32, 0);
    b.def_var(acc, zero);
    let mut open = Vec::new();
    for _ in 0..depth {
        let iv = b.declare_var(Type::I32);
        let z = b.iconst(Type::I32, 0);
        b.def_var(iv, z);
        let (h, body, exit) = (b.create_block(), b.create_block(), b.create_block());
        b.jump(h, &[]);
        b.switch_to_block(h);
        let x = b.use_var(iv);
        let two = b.iconst(Type::I32, 2);
        let c = b.icmp(IntCC::Slt, x, two);
        b.brif(c, body, &[], exit, &[]);
        b.switch_to_block(body);
        b.seal_block(body);
        open.push((iv, h, exit));
    }
    let a = b.use_var(acc);
    let s = b.iadd(a, n);
    b.def_var(acc, s);
    while let Some((iv, h, exit)) = open.pop() {
        let x = b.use_var(iv);
        let one = b.iconst(Type::I32, 1);
        let y = b.iadd(x, one);
        b.def_var(iv, y);
        b.jump(h, &[]);
        b.seal_block(h);
        b.switch_to_block(exit);
        b.seal_block(exit);
    }
    let a = b.use_var(acc);
    b.store(a, out);
    b.ret(None);
    b.finalize().expect("builds");
    let size = |m: &Module| -> usize {
        m.functions
            .values()
            .map(|f| {
                f.layout
                    .blocks()
                    .map(|bl| f.layout.block_insts(bl).count())
                    .sum::<usize>()
            })
            .sum()
    };
    let before = size(&m);
    let mut knobs = Knobs::default();
    apply_setting(&mut knobs, "unroll-threshold=4000000000").expect("knob");
    let options = Options {
        verify_each: false,
        ..Options::default()
    };
    let mut pm = PassManager::from_pipeline(
        "loop-simplify,lcssa,loop(loop-rotate,indvars,loop-unroll)",
        knobs,
        options,
    )
    .expect("ok");
    let r = pm.run_module(&mut m).expect("runs");
    let after = size(&m);
    assert!(
        r.stats.get(UNROLL, "NumFullyUnrolled") >= 10,
        "{:?}",
        r.stats.get(UNROLL, "NumFullyUnrolled")
    );
    assert!(r.stats.get(UNROLL, "NumGrowthBudgetSpent") >= 1);
    // The budget (65,536 added instructions at least, for a small function) plus what
    // rotation and indvars add and the last loop unrolled within the budget.
    assert!(
        after <= before + 3 * 65_536,
        "{before} -> {after} instructions"
    );
    for f in m.functions.values() {
        gyre_ir::verifier::verify_function(f, Some(&m)).expect("verifies");
    }
}

/// Loops whose counter doubles, halves or multiplies (`for (i = s; i CC b; i = i OP k)`),
/// which scalar evolution gives no count: loop-unroll's exhaustive count runs the
/// counter's arithmetic on constants. For random starts, bounds, comparisons and steps
/// (the trip count simulated here, in Rust), after `loop(loop-unroll)` and behind
/// `loop-rotate,indvars`, under `--verify-each`: the kernel behaves the same on random
/// arguments; a loop of 1 to 90 iterations is fully unrolled, one of 110 or more is not (the count is searched for 100 iterations, LLVM's
/// `MaxBruteForceIterations`).
#[test]
fn exhaustive_counts_of_nonlinear_counters() {
    let ccs = ["slt", "ult", "sgt", "ugt", "ne", "sle"];
    let ops = ["shl", "lshr", "ashr", "imul"];
    let mut r = SplitMix64::new(0xe4a);
    let (mut unrolled, mut kept) = (0, 0);
    for case in 0..300 {
        let small = |r: &mut SplitMix64| (r.next_u64() % 41) as i32 - 20;
        let start = match r.next_u64() % 3 {
            0 => small(&mut r),
            1 => 1 << (r.next_u64() % 31),
            _ => r.next_u64() as i32,
        };
        let bound = match r.next_u64() % 3 {
            0 => small(&mut r),
            1 => 1 << (r.next_u64() % 31),
            _ => r.next_u64() as i32,
        };
        let cc = ccs[(r.next_u64() % ccs.len() as u64) as usize];
        let op = ops[(r.next_u64() % ops.len() as u64) as usize];
        let k = match op {
            "imul" => [2, 3, -2, 5][(r.next_u64() % 4) as usize],
            _ => 1 + (r.next_u64() % 3) as i32,
        };
        // The trip count, or None past 1,000 iterations (such cases are skipped: the
        // interpreter would run them too long).
        let stays = |i: i32| match cc {
            "slt" => i < bound,
            "ult" => (i as u32) < bound as u32,
            "sgt" => i > bound,
            "ugt" => i as u32 > bound as u32,
            "ne" => i != bound,
            _ => i <= bound,
        };
        let step = |i: i32| match op {
            "shl" => i.wrapping_shl(k as u32),
            "lshr" => ((i as u32) >> k) as i32,
            "ashr" => i >> k,
            _ => i.wrapping_mul(k),
        };
        let (mut i, mut trips) = (start, Some(0u32));
        while stays(i) {
            i = step(i);
            trips = trips.map(|t| t + 1).filter(|&t| t <= 1000);
            if trips.is_none() {
                break;
            }
        }
        let Some(trips) = trips else { continue };
        let src = format!(
            "global @out: global [64 x i32] align 4\n\nkernel @k(i32) {{\nblock0(v0: i32):\n    v1 = iconst.i32 {start}\n    v2 = iconst.i32 {bound}\n    v3 = global_addr @out\n    jump block1(v1, v0)\nblock1(v4: i32, v5: i32):\n    v6 = icmp {cc} v4, v2\n    brif v6, block2, block3\nblock2:\n    v20 = iconst.i32 63\n    v21 = and v4, v20\n    v8 = ptradd v3, v21, 4\n    store v5, v8\n    v7 = iadd v5, v4\n    v9 = iconst.i32 {k}\n    v10 = {op} v4, v9\n    jump block1(v10, v7)\nblock3:\n    store v5, v3\n    return\n}}\n"
        );
        let m0 = gyre_ir::parse_module(&src).expect("parses");
        let mut knobs = Knobs::default();
        apply_setting(&mut knobs, "unroll-threshold=100000").expect("knob");
        for pipeline in [
            "loop-simplify,lcssa,loop(loop-unroll)",
            "loop-simplify,lcssa,loop(loop-rotate,indvars,loop-unroll)",
        ] {
            let mut m = m0.clone();
            let rep = apply(pipeline, &knobs, &mut m)
                .unwrap_or_else(|e| panic!("case {case}: {pipeline}: {e}\n{src}"));
            let full = rep.stats.get(UNROLL, "NumFullyUnrolled");
            if (1..=90).contains(&trips) {
                assert_eq!(
                    full, 1,
                    "case {case}: {pipeline}: {trips} trips kept\n{src}"
                );
                unrolled += 1;
            } else if trips >= 110 {
                assert_eq!(
                    full, 0,
                    "case {case}: {pipeline}: {trips} trips unrolled\n{src}"
                );
                kept += 1;
            }
            for arg in [0, 7, 0xffff_fffd] {
                let inputs = gyre_interp::Inputs {
                    launch: gyre_interp::Launch::linear(1, 1, vec![gyre_interp::Arg::Int(arg)]),
                    memory: gyre_interp::Memory::new(),
                };
                gyre_interp::assert_same_behaviour(&m0, &m, "k", &inputs)
                    .unwrap_or_else(|d| panic!("case {case}: {pipeline}: arg {arg}: {d}\n{src}"));
            }
        }
    }
    // These counters leave within about 32 iterations or never (skipped above), so the
    // kept side is rare here; exhaustive-count-gives-up.gir covers it.
    assert!(
        unrolled > 100,
        "the cases must exercise the exhaustive count: {unrolled} unrolled, {kept} kept"
    );
}
