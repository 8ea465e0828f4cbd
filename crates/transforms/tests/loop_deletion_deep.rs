//! `loop-deletion` on deep nests, and the per-loop scalar evolution it uses there.
//!
//! - Deep nests (200 levels): a zero-trip innermost loop loses its backedge, a zero-trip
//!   level in the middle loses its backedge and its never-entered subnest, a nest with no
//!   effect is deleted level by level, and a nest with a store at every level is kept
//!   with one remark per level; each with the interpreter's behaviour unchanged.
//! - [`ScalarEvolution::compute_loop_own`] (what the pass computes per visit, so that a
//!   nest costs linear time) agrees with [`ScalarEvolution::compute_nest`] on every loop
//!   of generated kernels in loop-simplify and LCSSA form: the same own exiting blocks,
//!   in the same order, with the same counts, the same classification of the own
//!   blocks' values, and dominance among the own blocks equal to the function's.

mod common;

use gyre_analysis::{Cfg, DomTree, LoopInfo, ScalarEvolution, ScevKind};
use gyre_interp::{assert_same_behaviour, random_inputs, Arg, Inputs, Launch, Memory};
use gyre_ir::generate::{generate_kernel_module, GenOptions, SplitMix64};
use gyre_ir::{write_module, Module};
use gyre_transforms::{Knobs, Options, PassManager, Report};
use std::fmt::Write as _;

const NAME: &str = "loop-deletion";
const DEPTH: usize = 200;

fn apply(pipeline: &str, m: &mut Module) -> Report {
    let options = Options {
        verify_each: true,
        ..Options::default()
    };
    let mut pm = PassManager::from_pipeline(pipeline, Knobs::default(), options).unwrap();
    pm.run_module(m).unwrap()
}

fn print(m: &Module) -> String {
    let mut s = String::new();
    write_module(&mut s, m).unwrap();
    s
}

/// A `DEPTH`-deep `while` nest over `@k(ptr.global, i32 n)`: level `i` counts from 0
/// to `n`, except the levels in `zero`, which count to 0 (never iterate); with `stores`,
/// each level's latch stores to `buf[i]`.
fn deep(zero: &[usize], stores: bool) -> String {
    let d = DEPTH;
    let mut s = String::from(
        "kernel @k(ptr.global, i32) {\nblock0(v0: ptr.global, v1: i32):\n    v2 = iconst.i32 0\n    v3 = iconst.i32 1\n    jump block1(v2)\n",
    );
    let exit = 3 * d + 1;
    for i in 0..d {
        let (h, pre, latch) = (3 * i + 1, 3 * i + 2, 3 * i + 3);
        let [x, c, a, p, y] = std::array::from_fn(|k| 4 + 5 * i + k);
        let out = if i == 0 { exit } else { 3 * (i - 1) + 3 };
        let inner = if i + 1 < d { pre } else { latch };
        let bound = if zero.contains(&i) { "v2" } else { "v1" };
        let _ = write!(
            s,
            "block{h}(v{x}: i32):\n    v{c} = icmp slt v{x}, {bound}\n    brif v{c}, block{inner}, block{out}\n"
        );
        if i + 1 < d {
            let _ = write!(s, "block{pre}:\n    jump block{}(v2)\n", h + 3);
        }
        let _ = writeln!(s, "block{latch}:");
        if stores {
            let _ = write!(
                s,
                "    v{a} = sext.i64 v{x}\n    v{p} = ptradd v0, v{a}, 4\n    store v{x}, v{p}\n"
            );
        }
        let _ = write!(s, "    v{y} = iadd v{x}, v3\n    jump block{h}(v{y})\n");
    }
    let _ = write!(s, "block{exit}:\n    store v1, v0\n    return\n}}\n");
    s
}

/// One thread, a zeroed buffer of `DEPTH` words, and `n`.
fn inputs(n: u64) -> Inputs {
    let mut memory = Memory::new();
    memory.alloc_buffer("buf", vec![0u8; 4 * DEPTH]);
    Inputs {
        launch: Launch::linear(1, 1, vec![Arg::Buffer("buf".into(), 0), Arg::Int(n)]),
        memory,
    }
}

/// Run `-O`'s loop passes up to deletion on `src`; check the behaviour for trip counts
/// 0 to 2 (levels run at most `n` times each; with `n` = 1 every level runs once).
fn run_deep(src: &str) -> (Module, Report) {
    let m = gyre_ir::parse_module(src).unwrap();
    let mut a = m.clone();
    let r = apply("loop-simplify,lcssa,loop(loop-deletion)", &mut a);
    for n in [0, 1] {
        assert_same_behaviour(&m, &a, "k", &inputs(n))
            .unwrap_or_else(|d| panic!("n = {n}: behaviour differs: {d}"));
    }
    (a, r)
}

fn loops_left(m: &Module) -> usize {
    let f = m.functions.values().next().unwrap();
    let cfg = Cfg::with_function(f).unwrap();
    let dt = DomTree::with_function(f, &cfg);
    LoopInfo::with_function(f, &cfg, &dt).num_loops()
}

#[test]
fn zero_trip_innermost_loop_of_a_deep_nest_loses_its_backedge() {
    let (m, r) = run_deep(&deep(&[DEPTH - 1], true));
    assert_eq!(r.stats.get(NAME, "NumBackedgesBroken"), 1);
    assert_eq!(r.stats.get(NAME, "NumHasSideEffects"), DEPTH as u64 - 1);
    assert_eq!(loops_left(&m), DEPTH - 1, "{}", print(&m));
}

#[test]
fn zero_trip_level_in_the_middle_of_a_deep_nest_loses_its_backedge_and_subnest() {
    let mid = DEPTH / 2;
    let (m, r) = run_deep(&deep(&[mid], true));
    // The levels below `mid` are visited first (and kept: each stores); then `mid`'s
    // header exits on its first visit, and the subnest it guarded goes with the backedge.
    assert_eq!(r.stats.get(NAME, "NumBackedgesBroken"), 1);
    assert_eq!(loops_left(&m), mid, "{}", print(&m));
}

#[test]
fn dead_deep_nest_is_deleted_level_by_level() {
    let (m, r) = run_deep(&deep(&[], false));
    assert_eq!(r.stats.get(NAME, "NumDeleted"), DEPTH as u64);
    assert_eq!(loops_left(&m), 0, "{}", print(&m));
    assert!(!print(&m).contains("icmp"), "{}", print(&m));
}

#[test]
fn deep_nest_with_a_store_at_every_level_is_kept() {
    let src = deep(&[], true);
    let (m, r) = run_deep(&src);
    assert_eq!(r.stats.get(NAME, "NumHasSideEffects"), DEPTH as u64);
    assert_eq!(loops_left(&m), DEPTH);
    // Each level's remark names its own latch's store (scanned before the subloops).
    let named = r
        .remarks
        .iter()
        .filter(|x| x.pass == NAME && x.message.contains("holds 'store'"))
        .count();
    assert_eq!(named, DEPTH);
}

/// `compute_loop_own` against `compute_nest` on one module's loops; the number of own
/// exits compared.
fn compare_scopes(m: &Module) -> Result<u64, String> {
    let mut compared = 0;
    for f in m.functions.values() {
        let Ok(cfg) = Cfg::with_function(f) else {
            continue;
        };
        let dt = DomTree::with_function(f, &cfg);
        let li = LoopInfo::with_function(f, &cfg, &dt);
        let (mut nest, mut own) = (ScalarEvolution::new(), ScalarEvolution::new());
        let mut blocks = Vec::new();
        for l in li.loops() {
            if li.contains_irreducible(l) || li.in_irreducible_cycle(li.header(l)) {
                continue;
            }
            nest.compute_nest(f, &cfg, &li, l);
            own.compute_loop_own(f, &cfg, &li, l);
            let at = |what: String| format!("@{} loop at {}: {what}", f.name, li.header(l));
            let nest_exits: Vec<_> = nest
                .loop_counts(l)
                .exits
                .iter()
                .filter(|(x, _)| li.innermost_loop(*x) == Some(l))
                .collect();
            let own_exits = &own.loop_counts(l).exits;
            if nest_exits.len() != own_exits.len() {
                return Err(at(format!("exits {nest_exits:?} vs {own_exits:?}")));
            }
            for ((xn, cn), (xo, co)) in nest_exits.iter().zip(own_exits) {
                let shape = |se: &ScalarEvolution, c: &gyre_analysis::scev::ExitCount| {
                    (c.exact.map(|s| (se.kind(s), se.as_const(s))), c.max)
                };
                if xn != xo || shape(&nest, cn) != shape(&own, co) {
                    return Err(at(format!("exit {xn}: {cn:?} vs {xo}: {co:?}")));
                }
                compared += 1;
            }
            blocks.clear();
            li.own_blocks(l, &mut blocks);
            for &b in &blocks {
                let vals = f
                    .dfg
                    .block_params(b)
                    .iter()
                    .copied()
                    .chain(f.layout.block_insts(b).filter_map(|i| f.dfg.inst_result(i)));
                for v in vals {
                    let k =
                        |se: &ScalarEvolution| se.value(v).map(|s| (se.kind(s), se.as_const(s)));
                    if k(&nest) != k(&own) {
                        return Err(at(format!("{v}: {:?} vs {:?}", k(&nest), k(&own))));
                    }
                    if let (Some(a), Some(b)) = (nest.value(v), own.value(v)) {
                        if nest.kind(a) == ScevKind::AddRec
                            && nest.operands(a).len() != own.operands(b).len()
                        {
                            return Err(at(format!("{v}: recurrences differ")));
                        }
                    }
                }
            }
            let reach = |b| cfg.rpo().contains(&b);
            for &a in blocks.iter().take(24) {
                for &b in blocks.iter().take(24) {
                    if !reach(a) || !reach(b) {
                        continue;
                    }
                    let want = Some(dt.dominates(a, b));
                    if own.scope_dominates(a, b) != want {
                        return Err(at(format!(
                            "does {a} dominate {b}: {:?}, the function's tree says {want:?}",
                            own.scope_dominates(a, b)
                        )));
                    }
                }
            }
        }
    }
    Ok(compared)
}

#[test]
fn own_loop_scalar_evolution_agrees_with_the_nests_on_generated_kernels() {
    let per_profile = common::cases(40);
    let mut compared = 0u64;
    common::sweep(
        &["default", "loopy", "reducible"],
        per_profile,
        &mut compared,
        |opts: &GenOptions, seed: u64, compared: &mut u64| {
            let (mut m, _) = generate_kernel_module(opts, &mut SplitMix64::new(seed));
            apply("loop-simplify,lcssa", &mut m);
            // And once more after rotation, whose loops exit at the bottom.
            let mut r = m.clone();
            apply("loop-simplify,lcssa,loop(loop-rotate)", &mut r);
            *compared += compare_scopes(&m)? + compare_scopes(&r)?;
            Ok(())
        },
    );
    assert!(compared > 50, "too few exits compared: {compared}");
}

#[test]
fn own_loop_scalar_evolution_agrees_with_the_nests_on_deep_nests() {
    for src in [deep(&[], true), deep(&[DEPTH / 2], false)] {
        let mut m = gyre_ir::parse_module(&src).unwrap();
        apply("loop-simplify,lcssa", &mut m);
        assert_eq!(compare_scopes(&m).unwrap(), DEPTH as u64);
    }
}

#[test]
fn deletion_on_random_kernels_behaves_the_same() {
    // The sweep's kernels through `-O`'s loop pipeline, deletion included: the
    // interpreter sees the same behaviour (loop_cleanup.rs covers deletion alone).
    let per_profile = common::cases(15);
    common::sweep(
        &["default", "loopy"],
        per_profile,
        &mut (),
        |opts: &GenOptions, seed: u64, _: &mut ()| {
            let (m, contract) = generate_kernel_module(opts, &mut SplitMix64::new(seed));
            let mut a = m.clone();
            apply(
                "loop-simplify,lcssa,loop(loop-simplifycfg,loop-rotate,indvars,loop-deletion)",
                &mut a,
            );
            let kernel = &m.functions[contract.kernel].name;
            for k in 0..2 {
                let inputs = random_inputs(&contract, seed.wrapping_mul(41).wrapping_add(k));
                assert_same_behaviour(&m, &a, kernel, &inputs)
                    .map_err(|d| format!("behaviour differs (inputs {k}): {d}"))?;
            }
            Ok(())
        },
    );
}
