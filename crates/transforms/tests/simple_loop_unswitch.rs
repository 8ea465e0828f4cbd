//! Property tests of `simple-loop-unswitch` over generated UB-free kernels (nests,
//! `break`s to any enclosing loop, early returns, switches, two-entry cycles, barriers,
//! calls; zero-trip loops come from the random `n`), with random knob settings.
//!
//! For every generated module, after `loop-simplify,lcssa,loop(..simple-loop-unswitch..)`
//! under `--verify-each` (the verifier, loop-simplify and LCSSA form on every loop after
//! every pass, every preserved analysis equal to a fresh one, every reported new loop a
//! loop):
//! - the interpreter (the grid interpreter: races and divergent barriers are errors) shows
//!   the same behaviour as the input, on random inputs that follow the kernel's contract;
//! - running the pass again and again converges (at most a few more rounds change
//!   anything): folded branches are no longer candidates.

mod common;

use gyre_analysis::{Cfg, DomTree, LoopInfo};
use gyre_interp::{assert_same_behaviour, random_inputs};
use gyre_interp::{Arg, Inputs, Launch, Memory};
use gyre_ir::generate::{generate_kernel_module, GenOptions, RandomSource, SplitMix64};
use gyre_ir::{
    parse_module, write_module, FuncId, InstructionData, IntCC, IntFlags, Module, Opcode,
    SpecialReg, Type,
};
use gyre_transforms::knobs::apply_setting;
use gyre_transforms::{Knobs, Options, PassManager, Report};

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

const PASS: &str = "simple-loop-unswitch";

fn changes(r: &Report) -> u64 {
    [
        "NumTrivial",
        "NumSwitchesTrivial",
        "NumBranches",
        "NumSwitches",
    ]
    .iter()
    .map(|c| r.stats.get(PASS, c))
    .sum()
}

#[derive(Default, Debug)]
struct Totals {
    cases: u64,
    trivial: u64,
    nontrivial: u64,
    clones: u64,
    divergent: u64,
    convergent: u64,
    too_costly: u64,
    skipped: u64,
}

/// Random knob settings from the seed (each knob of the pass varies).
fn knobs_for(seed: u64) -> Result<Knobs, String> {
    let mut rng = SplitMix64::new(seed ^ 0x5eed_0ff5);
    let mut knobs = Knobs::default();
    let mut set = |s: String| apply_setting(&mut knobs, &s).map_err(|e| e.to_string());
    let r = |rng: &mut SplitMix64, n: u64| rng.next_u64() % n;
    set(format!("unswitch-uniform-only={}", r(&mut rng, 3) != 0))?;
    set(format!(
        "unswitch-threshold={}",
        [0, 10, 50, 50, 200][r(&mut rng, 5) as usize]
    ))?;
    set(format!(
        "enable-unswitch-cost-multiplier={}",
        r(&mut rng, 4) != 0
    ))?;
    set(format!(
        "unswitch-num-initial-unscaled-candidates={}",
        r(&mut rng, 10)
    ))?;
    set(format!("unswitch-siblings-toplevel-div={}", r(&mut rng, 4)))?;
    set(format!("freeze-loop-unswitch-cond={}", r(&mut rng, 4) != 0))?;
    set(format!(
        "enable-nontrivial-unswitch={}",
        r(&mut rng, 2) != 0
    ))?;
    set(format!("disable-loop-unswitching={}", r(&mut rng, 20) == 0))?;
    set(format!(
        "enable-simple-loop-unswitch={}",
        r(&mut rng, 20) != 0
    ))?;
    Ok(knobs)
}

/// Generated kernels rarely branch on loop-invariant values. Make some of their loop
/// branches do so: each `brif` (and `br_table` on an `i32`) of a loop block, with
/// probability 1/2, branches instead on a value computed in the entry block — uniform
/// (`param < k` of an `i32` kernel parameter, `ctaid.x & 1`) or divergent (`tid.x & 1`).
/// The kernel may then misbehave (loop forever, go out of bounds): such cases are
/// skipped, since only a well-behaved original says anything about the pass.
fn make_invariant(m: &mut Module, kernel: FuncId, seed: u64) -> u32 {
    let mut rng = SplitMix64::new(seed ^ 0x1b_0a2d);
    let f = &mut m.functions[kernel];
    let Ok(cfg) = Cfg::with_function(f) else {
        return 0;
    };
    let dt = DomTree::with_function(f, &cfg);
    let li = LoopInfo::with_function(f, &cfg, &dt);
    let Some(entry) = f.layout.entry_block() else {
        return 0;
    };
    let Some(first) = f.layout.first_inst(entry) else {
        return 0;
    };
    let params: Vec<_> = f
        .dfg
        .block_params(entry)
        .iter()
        .copied()
        .filter(|&p| f.dfg.value_type(p) == Type::I32)
        .collect();
    let blocks: Vec<_> = f.layout.blocks().collect();
    let mut n = 0;
    for b in blocks {
        if li.innermost_loop(b).is_none() || rng.next_u64().is_multiple_of(2) {
            continue;
        }
        let Some(t) = f.terminator(b) else {
            continue;
        };
        let is_brif = matches!(f.dfg.inst(t), InstructionData::Brif { .. });
        let is_table = match f.dfg.inst(t) {
            InstructionData::BrTable { arg, .. } => f.dfg.value_type(*arg) == Type::I32,
            _ => false,
        };
        if !is_brif && !is_table {
            continue;
        }
        let put = |f: &mut gyre_ir::Function, data: InstructionData, ty: Type| {
            let (i, v) = f.dfg.make_inst_with_result(data, ty);
            f.layout.insert_inst_before(i, first);
            v
        };
        // An i32 source: a parameter (uniform), ctaid.x or tid.x.
        let pick = rng.next_u64() % 3;
        let src = match (pick, params.is_empty()) {
            (0, false) => params[(rng.next_u64() % params.len() as u64) as usize],
            (1, _) => put(
                f,
                InstructionData::Sreg {
                    reg: SpecialReg::CtaidX,
                },
                Type::I32,
            ),
            _ => put(
                f,
                InstructionData::Sreg {
                    reg: SpecialReg::TidX,
                },
                Type::I32,
            ),
        };
        let k = put(
            f,
            InstructionData::IntConst {
                imm: (rng.next_u64() % 4) as i64,
            },
            Type::I32,
        );
        let new = if is_brif {
            if pick == 0 {
                put(
                    f,
                    InstructionData::IntCompare {
                        cond: IntCC::Slt,
                        args: [src, k],
                    },
                    Type::I1,
                )
            } else {
                let one = put(f, InstructionData::IntConst { imm: 1 }, Type::I32);
                let a = put(
                    f,
                    InstructionData::Binary {
                        opcode: Opcode::And,
                        args: [src, one],
                        flags: IntFlags::default(),
                    },
                    Type::I32,
                );
                put(
                    f,
                    InstructionData::IntCompare {
                        cond: IntCC::Eq,
                        args: [a, k],
                    },
                    Type::I1,
                )
            }
        } else {
            let three = put(f, InstructionData::IntConst { imm: 3 }, Type::I32);
            put(
                f,
                InstructionData::Binary {
                    opcode: Opcode::And,
                    args: [src, three],
                    flags: IntFlags::default(),
                },
                Type::I32,
            )
        };
        match f.dfg.inst_mut(t) {
            InstructionData::Brif { arg, .. } | InstructionData::BrTable { arg, .. } => *arg = new,
            _ => unreachable!(),
        }
        n += 1;
    }
    n
}

/// Random inputs with a step limit low enough that a mutated kernel looping forever is
/// found quickly (the same limit for the input and the output).
fn inputs_for(contract: &gyre_ir::generate::KernelContract, seed: u64) -> Inputs {
    let mut inputs = random_inputs(contract, seed);
    inputs.launch.config.step_limit = 5_000_000;
    inputs
}

fn check_case(opts: &GenOptions, seed: u64, totals: &mut Totals) -> Result<(), String> {
    let (mut m, contract) = generate_kernel_module(opts, &mut SplitMix64::new(seed));
    if !seed.is_multiple_of(4) {
        make_invariant(&mut m, contract.kernel, seed);
        gyre_ir::verifier::verify_module(&m).map_err(|e| format!("mutated input: {e:?}"))?;
        let kernel = &m.functions[contract.kernel].name;
        for k in 0..3 {
            let mut inputs = inputs_for(&contract, seed.wrapping_mul(31).wrapping_add(k));
            if gyre_interp::run_kernel(&m, kernel, &inputs.launch, &mut inputs.memory).is_err() {
                totals.skipped += 1;
                return Ok(());
            }
        }
    }
    let knobs = knobs_for(seed)?;
    let pipeline = match seed % 3 {
        0 => "loop-simplify,lcssa,loop(simple-loop-unswitch)",
        1 => "loop-simplify,lcssa,loop(simple-loop-unswitch<nontrivial>)",
        _ => "loop-simplify,lcssa,loop(loop-rotate,simple-loop-unswitch<nontrivial>)",
    };
    let mut a = m.clone();
    let r = apply(pipeline, &knobs, &mut a).map_err(|e| format!("{pipeline}: {e}"))?;
    totals.trivial += r.stats.get(PASS, "NumTrivial") + r.stats.get(PASS, "NumSwitchesTrivial");
    totals.nontrivial += r.stats.get(PASS, "NumBranches") + r.stats.get(PASS, "NumSwitches");
    totals.clones += r.stats.get(PASS, "NumLoopsCloned");
    totals.divergent += r.stats.get(PASS, "NumDivergentCondition");
    totals.convergent += r.stats.get(PASS, "NumConvergent");
    totals.too_costly += r.stats.get(PASS, "NumTooCostly");
    let kernel = &m.functions[contract.kernel].name;
    for k in 0..3 {
        let inputs = inputs_for(&contract, seed.wrapping_mul(31).wrapping_add(k));
        assert_same_behaviour(&m, &a, kernel, &inputs)
            .map_err(|d| format!("behaviour differs ({pipeline}, inputs {k}): {d}"))?;
    }
    // Repeated runs converge.
    let mut b = a.clone();
    let mut rounds = 0;
    loop {
        let r = apply("loop(simple-loop-unswitch<nontrivial>)", &knobs, &mut b)?;
        if changes(&r) == 0 {
            break;
        }
        rounds += 1;
        if rounds > 6 {
            return Err("simple-loop-unswitch does not converge in 6 more runs".into());
        }
    }
    if rounds > 0 {
        for k in 0..2 {
            let inputs = inputs_for(&contract, seed.wrapping_mul(17).wrapping_add(k));
            assert_same_behaviour(&m, &b, kernel, &inputs)
                .map_err(|d| format!("behaviour differs after reruns (inputs {k}): {d}"))?;
        }
    }
    totals.cases += 1;
    Ok(())
}

#[test]
fn simple_loop_unswitch_on_generated_kernels() {
    let per_profile = common::cases(200);
    let mut totals = Totals::default();
    common::sweep(
        &["default", "loopy", "reducible", "switchy"],
        per_profile,
        &mut totals,
        check_case,
    );
    assert!(
        totals.trivial > 20 && totals.nontrivial > 20 && totals.divergent > 5,
        "the generator must exercise unswitching: {totals:?}"
    );
}

/// A kernel with a barrier in a loop whose uniform invariant branch could be unswitched:
/// on a grid of 2 CTAs of 64 threads (two warps each) the loop is left alone, whatever
/// the knobs, and the grid interpreter (which reports divergent barriers and races) sees
/// the same behaviour.
#[test]
fn barrier_in_loop_is_never_unswitched() {
    let src = "global @buf: shared [64 x i32] align 4
global @out: global [512 x i32] align 4

kernel @k(i32, i32) {
block0(v0: i32, v1: i32):
    v2 = iconst.i32 0
    v3 = iconst.i32 1
    v4 = tid.x
    v5 = ctaid.x
    v6 = iconst.i32 64
    v7 = imul v5, v6
    v8 = iadd v7, v4
    v9 = sext.i64 v8
    v10 = global_addr @out
    v11 = ptradd v10, v9, 4
    v12 = global_addr @buf
    v13 = sext.i64 v4
    v14 = ptradd v12, v13, 4
    v15 = iconst.i32 63
    v16 = isub v15, v4
    v17 = sext.i64 v16
    v18 = ptradd v12, v17, 4
    v19 = icmp ne v1, v2
    store v4, v14
    jump block1(v2, v2)
block1(v20: i32, v21: i32):
    barrier
    v22 = load.i32 v18
    brif v19, block2, block3
block2:
    v23 = iadd v21, v22
    jump block4(v23)
block3:
    v24 = isub v21, v22
    jump block4(v24)
block4(v25: i32):
    barrier
    store v25, v14
    v26 = iadd v20, v3
    v27 = icmp slt v26, v0
    brif v27, block1(v26, v25), block5
block5:
    store v25, v11
    return
}
";
    let m = parse_module(src).expect("parses");
    for knobs in [
        vec![],
        vec!["unswitch-uniform-only=false"],
        vec!["enable-nontrivial-unswitch=true", "unswitch-threshold=1000"],
    ] {
        let mut k = Knobs::default();
        for s in &knobs {
            apply_setting(&mut k, s).expect("a knob");
        }
        let mut a = m.clone();
        let r = apply(
            "loop-simplify,lcssa,loop(loop-rotate,simple-loop-unswitch<nontrivial>)",
            &k,
            &mut a,
        )
        .expect("runs");
        assert_eq!(changes(&r), 0, "{knobs:?}");
        assert_eq!(r.stats.get(PASS, "NumConvergent"), 1, "{knobs:?}");
        assert!(r
            .remarks
            .iter()
            .any(|x| x.pass == PASS && x.kind == "Convergent"));
        for (n, flag) in [(0, 1), (3, 0), (3, 1)] {
            let inputs = Inputs {
                launch: Launch::linear(2, 64, vec![Arg::Int(n), Arg::Int(flag)]),
                memory: Memory::new(),
            };
            assert_same_behaviour(&m, &a, "k", &inputs).expect("same behaviour");
        }
    }
    // Without the barriers the same loop is unswitched (the check is not vacuous).
    let nb = src.replace("    barrier\n", "");
    let m = parse_module(&nb).expect("parses");
    let mut a = m.clone();
    let r = apply(
        "loop-simplify,lcssa,loop(simple-loop-unswitch<nontrivial>)",
        &Knobs::default(),
        &mut a,
    )
    .expect("runs");
    assert_eq!(r.stats.get(PASS, "NumBranches"), 1);
    assert_ne!(print(&a), print(&m));
}

/// A `depth`-deep counted nest whose innermost loop has an invariant uniform branch and
/// an exit to the block after loop `target` (so leaving loops `depth` down to `target`),
/// passing the counter of level `passed` out. `trivial`: the invariant branch is in the
/// header and exits (hoisted without cloning); otherwise it chooses between two stores
/// and a data-dependent test takes the exit (the loop is cloned). Arguments: `n`, `flag`,
/// `limit`.
fn exit_nest(depth: u32, target: u32, passed: u32, trivial: bool) -> String {
    let mut s = String::from(
        "global @out: global [64 x i32] align 4\n\nkernel @k(i32, i32, i32) {\n\
         block0(v0: i32, v1: i32, v2: i32):\n    v3 = iconst.i32 0\n    v4 = iconst.i32 1\n    \
         v5 = global_addr @out\n    v6 = icmp ne v1, v3\n    v7 = iconst.i32 63\n    \
         jump block10(v3)\n",
    );
    for l in 1..depth {
        s += &format!(
            "block{h}(v{h}: i32):\n    jump block{n}(v3)\n",
            h = 10 * l,
            n = 10 * (l + 1)
        );
    }
    let (d, x, p) = (10 * depth, 10 * target + 2, 10 * passed);
    let index =
        "    v100 = iadd v10, v{d}\n    v101 = and v100, v7\n    v102 = sext.i64 v101\n    \
                 v103 = ptradd v5, v102, 4\n    v104 = icmp sgt v100, v2\n"
            .replace("{d}", &d.to_string());
    if trivial {
        s += &format!(
            "block{d}(v{d}: i32):\n    brif v6, block{x}(v{p}), block100\n\
             block100:\n{index}    brif v104, block{x}(v{d}), block101\n\
             block101:\n    store v100, v103\n    jump block{l}\n",
            l = d + 1
        );
    } else {
        s += &format!(
            "block{d}(v{d}: i32):\n{index}    brif v104, block{x}(v{p}), block100\n\
             block100:\n    brif v6, block101, block102\n\
             block101:\n    store v100, v103\n    jump block{l}\n\
             block102:\n    store v{p}, v103\n    jump block{l}\n",
            l = d + 1
        );
    }
    for l in (1..=depth).rev() {
        let (h, a) = (10 * l, 10 * l + 3);
        s += &format!(
            "block{lt}:\n    v{n} = iadd v{h}, v4\n    v{c} = icmp slt v{n}, v0\n    \
             brif v{c}, block{h}(v{n}), block{x}(v{n})\n\
             block{x}(v{a}: i32):\n    v{m} = and v{a}, v7\n    v{e} = sext.i64 v{m}\n    \
             v{q} = ptradd v5, v{e}, 4\n    store v{a}, v{q}\n",
            lt = h + 1,
            n = h + 1,
            c = h + 2,
            x = h + 2,
            m = h + 4,
            e = h + 5,
            q = h + 6,
        );
        s += &if l == 1 {
            "    return\n".to_string()
        } else {
            format!("    jump block{}\n", 10 * (l - 1) + 1)
        };
    }
    s + "}\n"
}

/// Exits that leave several loop levels (a `break` out of two or three loops) are
/// repaired locally, trivially and non-trivially: on nests put in loop-simplify and LCSSA
/// form first, the pass under `--verify-each` (forms and preserved analyses checked after
/// it) changes the nest without running `loop-simplify` or `lcssa` again (their counters
/// stay zero: the function-wide fallback did), and behaves as the input.
#[test]
fn exits_leaving_several_loops_are_repaired_locally() {
    let mut cases = 0;
    for depth in 2..=3 {
        for target in 1..depth {
            for passed in 1..=depth {
                for trivial in [true, false] {
                    if trivial && passed == depth {
                        continue; // a trivial exit passes invariant values only
                    }
                    let src = exit_nest(depth, target, passed, trivial);
                    let what =
                        format!("depth {depth} target {target} passed {passed} trivial {trivial}");
                    let mut m =
                        parse_module(&src).unwrap_or_else(|e| panic!("{what}: {e:?}\n{src}"));
                    apply("loop-simplify,lcssa", &Knobs::default(), &mut m).expect("canonical");
                    let mut a = m.clone();
                    // Trivial cases without non-trivial unswitching: cloning the loops around
                    // could leave a copy that only exits, a legitimate fallback.
                    let pipeline = if trivial {
                        "loop(simple-loop-unswitch)"
                    } else {
                        "loop(simple-loop-unswitch<nontrivial>)"
                    };
                    let r = apply(pipeline, &Knobs::default(), &mut a)
                        .unwrap_or_else(|e| panic!("{what}: {e}"));
                    let unswitched = if trivial { "NumTrivial" } else { "NumBranches" };
                    assert!(r.stats.get(PASS, unswitched) >= 1, "{what}: not unswitched");
                    for (pass, counter, n) in r.stats.iter() {
                        assert!(
                            !(pass == "loop-simplify" || pass == "lcssa") || n == 0,
                            "{what}: fell back to {pass} ({counter} {n})\n{}",
                            print(&a)
                        );
                    }
                    for n in [0, 1, 3] {
                        for flag in [0, 1] {
                            for limit in [1, 4, 100] {
                                let inputs = Inputs {
                                    launch: Launch::linear(
                                        1,
                                        1,
                                        vec![Arg::Int(n), Arg::Int(flag), Arg::Int(limit)],
                                    ),
                                    memory: Memory::new(),
                                };
                                assert_same_behaviour(&m, &a, "k", &inputs)
                                    .unwrap_or_else(|d| panic!("{what}: {d}"));
                            }
                        }
                    }
                    cases += 1;
                }
            }
        }
    }
    // Depth 2: 2 x 2 shapes less a trivial one passing the inner counter; depth 3: 2 targets
    // x 3 counters x 2 kinds, less 2 of those.
    assert_eq!(cases, 3 + 10, "every shape ran");
}

/// A clone is made only of the blocks its copy reaches once the branch is folded: of the
/// blocks the unswitch creates, only the original's folded-away side is deleted (cloning
/// the whole loop, as LLVM does, also made and deleted the clone's dead side). The
/// copies behave as the loop did.
#[test]
fn clones_hold_only_the_blocks_their_copy_reaches() {
    let src = "global @out: global [4 x i32] align 4

kernel @k(i32, i32) {
block0(v0: i32, v1: i32):
    v2 = iconst.i32 0
    v3 = iconst.i32 1
    v4 = icmp ne v1, v2
    jump block1(v2)
block1(v5: i32):
    v6 = icmp slt v5, v0
    brif v6, block2, block6(v5)
block2:
    brif v4, block3, block4
block3:
    v7 = iadd v5, v3
    jump block1(v7)
block4:
    v8 = iadd v5, v3
    jump block5
block5:
    v9 = iadd v8, v3
    jump block1(v9)
block6(v10: i32):
    v11 = global_addr @out
    store v10, v11
    return
}
";
    let mut m = parse_module(src).expect("parses");
    apply("loop-simplify,lcssa", &Knobs::default(), &mut m).expect("canonicalizes");
    let orig = m.clone();
    let deleted = |m: &Module| {
        let f = m.functions.values().next().expect("one function");
        f.dfg.num_blocks() - f.layout.num_blocks()
    };
    let before = deleted(&m);
    let r = apply(
        "loop(simple-loop-unswitch<nontrivial>)",
        &Knobs::default(),
        &mut m,
    )
    .expect("runs");
    assert_eq!(r.stats.get(PASS, "NumLoopsCloned"), 1, "{}", print(&m));
    // The original loses block3's side (block4 and block5); the clone never had block3.
    assert_eq!(deleted(&m) - before, 2, "{}", print(&m));
    for n in [0, 1, 4] {
        for flag in [0, 1] {
            let inputs = Inputs {
                launch: Launch::linear(1, 1, vec![Arg::Int(n), Arg::Int(flag)]),
                memory: Memory::new(),
            };
            assert_same_behaviour(&orig, &m, "k", &inputs).unwrap_or_else(|d| panic!("{d}"));
        }
    }
}
