//! Property tests of `loop-simplify` and `lcssa` over generated UB-free kernels (nests,
//! `continue` latches, `break`s to any enclosing loop, early returns, switches, two-entry
//! cycles, calls).
//!
//! For every generated module:
//! - `loop-simplify`, then `lcssa`, each under `--verify-each` (verifier, the promised
//!   form on every loop without irreducible cycles, and every analysis the pass claims to
//!   preserve equal to a fresh one);
//! - after `lcssa`, loop-simplify form still holds (LCSSA preserves it);
//! - `lcssa` first and `loop-simplify` second also gives both forms (loop-simplify
//!   preserves LCSSA);
//! - idempotence: on the result each pass reports `PassResult::UNCHANGED`, and running
//!   `loop-simplify,lcssa` again prints the same module;
//! - the interpreter shows the same behaviour before and after, on random inputs that
//!   follow the kernel's contract.
//!
//! The generator always gives loops a preheader, so half of the modules are first
//! mutated (semantics-preserving): jumps to join blocks become two-way branches to the
//! same block or fork through a new block, and empty `jump` blocks are threaded
//! (`q -> P -> T` becomes `q -> T`, and `P` stays behind unreachable). Headers then have
//! several outside predecessors, predecessors with several successors, and unreachable
//! predecessors.
//!
//! The cases are a deterministic sweep of seeds over a few generator profiles (set
//! `GYRE_PROP_CASES` to run more), plus a quickcheck property with random seeds.

mod common;

use gyre_interp::{assert_same_behaviour, random_inputs};
use gyre_ir::generate::{
    generate_kernel_module, GenOptions, KernelContract, RandomSource, SplitMix64,
};
use gyre_ir::{
    verifier::verify_function, write_module, Block, BlockCall, EntityRef, Function,
    InstructionData, Module, Opcode, SpecialReg, Type, Value, ValueDef,
};
use gyre_transforms::registry;
use gyre_transforms::verify::check_forms;
use gyre_transforms::{
    AnalysisCache, Forms, Knobs, Options, PassContext, PassManager, PassResult, Stats,
};

fn print(m: &Module) -> String {
    let mut s = String::new();
    write_module(&mut s, m).expect("writing to a String");
    s
}

/// Run a pipeline with `--verify-each`; returns the counters.
fn apply(pipeline: &str, m: &mut Module) -> Result<Stats, String> {
    let options = Options {
        verify_each: true,
        ..Options::default()
    };
    let mut pm = PassManager::from_pipeline(pipeline, Knobs::default(), options)?;
    let report = pm.run_module(m).map_err(|e| e.to_string())?;
    Ok(report.stats)
}

/// Run pass `name` directly on (a copy of) every function: it must report no change.
fn expect_unchanged(name: &str, m: &Module) -> Result<(), String> {
    let info = registry::lookup(name).expect("registered pass");
    let mut pass = (info.create_function.expect("function pass"))(&[])?;
    let knobs = Knobs::default();
    for f in m.functions.values() {
        let mut f = f.clone();
        let (mut cache, mut stats, mut remarks) =
            (AnalysisCache::new(), Stats::default(), Vec::new());
        let mut cx = PassContext {
            knobs: &knobs,
            analyses: &mut cache,
            stats: &mut stats,
            remarks: &mut remarks,
        };
        let res = pass.run(&mut f, &mut cx).map_err(|e| e.to_string())?;
        if res != PassResult::UNCHANGED {
            return Err(format!("second {name} on @{} reported {res:?}", f.name));
        }
    }
    Ok(())
}

fn expect_forms(m: &Module, forms: Forms, when: &str) -> Result<(), String> {
    for f in m.functions.values() {
        check_forms(f, forms).map_err(|e| format!("{when}: @{}: {e}", f.name))?;
    }
    Ok(())
}

fn same_behaviour(
    before: &Module,
    after: &Module,
    contract: &KernelContract,
    seed: u64,
    when: &str,
) -> Result<(), String> {
    let kernel = &before.functions[contract.kernel].name;
    for k in 0..2 {
        let inputs = random_inputs(contract, seed.wrapping_mul(31).wrapping_add(k));
        assert_same_behaviour(before, after, kernel, &inputs)
            .map_err(|d| format!("{when}: behaviour differs (inputs {k}): {d}"))?;
    }
    Ok(())
}

/// Thread (with probability 1/2 each) the blocks that hold only `jump T(args)` and whose
/// parameters are used nowhere else: every edge into such a block goes straight to `T`,
/// with the block's parameters replaced by the edge's arguments. Semantics-preserving.
fn thread_jumps(func: &mut Function, rng: &mut SplitMix64) -> usize {
    let entry = func.entry_block();
    // Values used outside the block that defines them.
    let mut used_outside = vec![false; func.dfg.num_values()];
    for b in func.layout.blocks() {
        for i in func.layout.block_insts(b) {
            func.dfg.for_each_inst_value(i, |v| {
                let d = match func.dfg.value_def(v) {
                    ValueDef::Result(i) => func.layout.inst_block(i),
                    ValueDef::Param(pb, _) => Some(pb),
                    ValueDef::Detached => None,
                };
                if d != Some(b) {
                    used_outside[v.index()] = true;
                }
            });
        }
    }
    let blocks: Vec<Block> = func.layout.blocks().collect();
    let mut n = 0;
    for p in blocks {
        let (Some(first), Some(last)) = (func.layout.first_inst(p), func.layout.last_inst(p))
        else {
            continue;
        };
        let InstructionData::Jump { dest } = func.dfg.inst(last).clone() else {
            continue;
        };
        let params: Vec<Value> = func.dfg.block_params(p).to_vec();
        if first != last
            || Some(p) == entry
            || dest.block == p
            || params.iter().any(|v| used_outside[v.index()])
            || rng.below(2) == 0
        {
            continue;
        }
        let target = dest.block;
        let dargs: Vec<Value> = func.dfg.block_call_args(&dest).to_vec();
        let preds: Vec<Block> = func.layout.blocks().collect();
        for q in preds {
            let Some(t) = func.terminator(q) else {
                continue;
            };
            func.dfg.for_each_dest_mut(t, |bc, pool| {
                if bc.block != p {
                    return;
                }
                let qargs: Vec<Value> = bc.args.as_slice(pool).to_vec();
                let new: Vec<Value> = dargs
                    .iter()
                    .map(|a| params.iter().position(|x| x == a).map_or(*a, |k| qargs[k]))
                    .collect();
                bc.block = target;
                bc.args = gyre_ir::ValueList::from_slice(&new, pool);
            });
        }
        n += 1;
    }
    n
}

/// Give loop entries more shape (each with probability 1/2): a block ending in
/// `jump T(args)` to a block with several predecessors either branches twice to `T`
/// (`brif c, T(args), T(args)`: no longer a preheader) or forks through a new block
/// (`brif c, X, T(args)` with `X: jump T(args)`: two outside predecessors). `c` is a
/// constant or `tid.x & 1`. Semantics-preserving.
fn fork_entries(func: &mut Function, rng: &mut SplitMix64) -> usize {
    let mut npreds = vec![0u32; func.dfg.num_blocks()];
    for b in func.layout.blocks() {
        func.for_each_successor(b, |s| npreds[s.index()] += 1);
    }
    let blocks: Vec<Block> = func.layout.blocks().collect();
    let mut n = 0;
    for p in blocks {
        let Some(last) = func.terminator(p) else {
            continue;
        };
        let InstructionData::Jump { dest } = func.dfg.inst(last).clone() else {
            continue;
        };
        if npreds[dest.block.index()] < 2 || rng.below(2) == 0 {
            continue;
        }
        let c = if rng.below(2) == 0 {
            let imm = rng.below(2) as i64;
            func.insert_inst_before(last, InstructionData::IntConst { imm }, Some(Type::I1))
                .1
        } else {
            let tid = func
                .insert_inst_before(
                    last,
                    InstructionData::Sreg {
                        reg: SpecialReg::TidX,
                    },
                    Some(Type::I32),
                )
                .1
                .expect("result");
            func.insert_inst_before(
                last,
                InstructionData::Unary {
                    opcode: Opcode::Trunc,
                    arg: tid,
                },
                Some(Type::I1),
            )
            .1
        }
        .expect("result");
        let args: Vec<Value> = func.dfg.block_call_args(&dest).to_vec();
        let pool = &mut func.dfg.value_lists;
        let second = BlockCall::new(dest.block, &args, pool);
        let first = if rng.below(2) == 0 {
            BlockCall::new(dest.block, &args, pool)
        } else {
            let x = func.dfg.make_block();
            func.layout.insert_block_after(x, p);
            let d = BlockCall::new(dest.block, &args, &mut func.dfg.value_lists);
            func.append_inst(x, InstructionData::Jump { dest: d }, None);
            BlockCall::new(x, &[], &mut func.dfg.value_lists)
        };
        func.dfg.replace_inst(
            last,
            InstructionData::Brif {
                arg: c,
                blocks: [first, second],
            },
        );
        n += 1;
    }
    n
}

/// Totals over a run, to show the generated programs exercise the passes.
#[derive(Default, Debug)]
struct Totals {
    cases: u64,
    threaded: u64,
    preheaders: u64,
    latches: u64,
    exits: u64,
    lcssa_params: u64,
}

fn check_case(opts: &GenOptions, seed: u64, totals: &mut Totals) -> Result<(), String> {
    let (mut m, contract) = generate_kernel_module(opts, &mut SplitMix64::new(seed));
    if seed % 2 == 1 {
        let original = m.clone();
        let mut rng = SplitMix64::new(seed ^ 0x5eed);
        let threaded: usize = m
            .functions
            .values_mut()
            .map(|f| fork_entries(f, &mut rng) + thread_jumps(f, &mut rng))
            .sum();
        totals.threaded += threaded as u64;
        if threaded > 0 {
            same_behaviour(
                &original,
                &m,
                &contract,
                seed,
                "after threading (test mutation)",
            )?;
        }
    }
    for f in m.functions.values() {
        verify_function(f, Some(&m))
            .map_err(|e| format!("generated input does not verify: {e}"))?;
    }
    let both = Forms {
        loop_simplify: true,
        lcssa: true,
        ..Forms::default()
    };

    let mut a = m.clone();
    let s = apply("loop-simplify", &mut a)?;
    totals.preheaders += s.get("loop-simplify", "NumPreheadersInserted");
    totals.latches += s.get("loop-simplify", "NumLatchesInserted");
    totals.exits += s.get("loop-simplify", "NumExitsSplit");
    same_behaviour(&m, &a, &contract, seed, "after loop-simplify")?;

    let mut b = a.clone();
    let s = apply("lcssa", &mut b)?;
    totals.lcssa_params += s.get("lcssa", "NumLCSSAParams");
    expect_forms(&b, both, "after loop-simplify,lcssa")?;
    same_behaviour(&m, &b, &contract, seed, "after loop-simplify,lcssa")?;

    expect_unchanged("loop-simplify", &b)?;
    expect_unchanged("lcssa", &b)?;
    let mut c = b.clone();
    apply("loop-simplify,lcssa", &mut c)?;
    if print(&b) != print(&c) {
        return Err("running loop-simplify,lcssa again changed the module".into());
    }

    // The other order: loop-simplify must keep what lcssa established.
    let mut d = m.clone();
    apply("lcssa", &mut d)?;
    apply("loop-simplify", &mut d)?;
    expect_forms(&d, both, "after lcssa,loop-simplify")?;
    same_behaviour(&m, &d, &contract, seed, "after lcssa,loop-simplify")?;
    totals.cases += 1;
    Ok(())
}

#[test]
fn loop_passes_on_generated_kernels() {
    let per_profile = common::cases(450);
    let mut totals = Totals::default();
    common::sweep(
        &["default", "loopy", "reducible", "switchy"],
        per_profile,
        &mut totals,
        check_case,
    );
    // The generator must exercise every transformation, or this test proves little.
    assert!(
        totals.preheaders > 0 && totals.latches > 0 && totals.exits > 0 && totals.lcssa_params > 0,
        "{totals:?}"
    );
}

#[test]
fn quickcheck_random_seeds() {
    fn prop(seed: u64) -> quickcheck::TestResult {
        let mut totals = Totals::default();
        match check_case(&GenOptions::default(), seed, &mut totals) {
            Ok(()) => quickcheck::TestResult::passed(),
            Err(e) => quickcheck::TestResult::error(format!("seed {seed}: {e}")),
        }
    }
    quickcheck::QuickCheck::new()
        .tests(200)
        .quickcheck(prop as fn(u64) -> quickcheck::TestResult);
}
