//! Property tests of the SSA updater over generated UB-free kernels.
//!
//! For each function of a generated module, a few times: pick a value `v` defined in
//! block `D` and used in other blocks; insert copies of `v` (`or v, v` for integers,
//! `freeze v` otherwise: the interpreter computes the same value) at the end of some
//! blocks strictly dominated by `D`; make `v` at `D` and every copy at its block
//! available; rewrite every use of `v` outside `D` (the copies' own operands included)
//! with [`SsaUpdater::rewrite_uses`] (a third of the time one use at a time with
//! [`SsaUpdater::rewrite_use`], in a random order). Then:
//! - the module verifies and behaves as before on random inputs under the kernel's
//!   contract (the interpreter is the oracle);
//! - every rewritten use reads the definition that reaches it: random walks through the
//!   CFG (branch conditions ignored) track the variable's last definition, and the new
//!   parameters' values edge by edge (each `br_table` edge with its own arguments), and
//!   compare at every rewritten use. The copies compute `v` again, so the interpreter
//!   alone could not tell one definition from another; the walks can;
//! - the blocks that got a parameter are exactly `DF+(definition blocks) ∩ live-in`,
//!   with `DF+` from [`IdfCalculator`] and liveness from a fixed-point data-flow
//!   computed separately (a differential check of the pruned placement: no parameter
//!   more, none less);
//! - without copies, nothing changes at all (one definition dominating every use needs no
//!   parameter).
//!
//! The cases are a deterministic sweep of seeds over a few generator profiles, plus a
//! quickcheck property with random seeds.

mod common;

use gyre_analysis::{Cfg, DomTree, DominanceFrontiers, IdfCalculator};
use gyre_interp::{assert_same_behaviour, random_inputs};
use gyre_ir::generate::{generate_kernel_module, GenOptions, RandomSource, SplitMix64};
use gyre_ir::{
    verifier::verify_function, write_function, Block, EntityRef, Function, Inst, InstructionData,
    IntFlags, Opcode, Value, ValueDef,
};
use gyre_transforms::utils::ssa_updater::{SsaContext, SsaUpdater};

/// Totals over a run, to show the cases exercise the updater.
#[derive(Default, Debug)]
struct Totals {
    variables: u64,
    copies: u64,
    params: u64,
    rewritten: u64,
    unchanged_checked: u64,
    one_at_a_time: u64,
}

fn def_block(func: &Function, v: Value) -> Option<Block> {
    match func.dfg.value_def(v) {
        ValueDef::Result(i) => func.layout.inst_block(i),
        ValueDef::Param(b, _) => Some(b),
        ValueDef::Detached => None,
    }
}

fn text(f: &Function) -> String {
    let mut s = String::new();
    write_function(&mut s, f, None).expect("writing to a String");
    s
}

/// Values defined in a reachable block and used in another block, in a deterministic
/// order.
fn candidates(func: &Function, cfg: &Cfg) -> Vec<(Value, Block)> {
    let mut used_elsewhere = vec![false; func.dfg.num_values()];
    for b in func.layout.blocks() {
        for i in func.layout.block_insts(b) {
            func.dfg.for_each_inst_value(i, |v| {
                if def_block(func, v) != Some(b) {
                    used_elsewhere[v.index()] = true;
                }
            });
        }
    }
    let mut out = Vec::new();
    for b in func.layout.blocks() {
        if !cfg.is_reachable(b) {
            continue;
        }
        let results = func
            .layout
            .block_insts(b)
            .filter_map(|i| func.dfg.inst_result(i));
        for v in func.dfg.block_params(b).iter().copied().chain(results) {
            if used_elsewhere[v.index()] {
                out.push((v, b));
            }
        }
    }
    out
}

/// The reference placement: `DF+(defs) ∩ live-in`, liveness by iterating to a fixed
/// point over the reachable blocks (`reads_entry` blocks read the variable on entry).
fn reference_placement(
    func: &Function,
    cfg: &Cfg,
    df: &DominanceFrontiers,
    defs: &[Block],
    reads_entry: &[bool],
) -> Vec<Block> {
    let n = func.dfg.num_blocks();
    let mut is_def = vec![false; n];
    for d in defs {
        is_def[d.index()] = true;
    }
    let mut live_in = reads_entry.to_vec();
    let mut changed = true;
    while changed {
        changed = false;
        for &b in cfg.rpo().iter().rev() {
            if live_in[b.index()] || is_def[b.index()] {
                continue;
            }
            if cfg.succs(b).iter().any(|s| live_in[s.index()]) {
                live_in[b.index()] = true;
                changed = true;
            }
        }
    }
    let mut idf = Vec::new();
    IdfCalculator::new().compute(df, defs, &mut idf);
    idf.retain(|b| live_in[b.index()] && cfg.is_reachable(*b));
    idf
}

/// One variable: copies, update, checks of placement. Returns false if `func` had no
/// candidate left.
fn one_variable(
    func: &mut Function,
    cfg: &Cfg,
    dt: &DomTree,
    df: &DominanceFrontiers,
    up: &mut SsaUpdater,
    rng: &mut SplitMix64,
    totals: &mut Totals,
) -> Result<bool, String> {
    let cands = candidates(func, cfg);
    if cands.is_empty() {
        return Ok(false);
    }
    let (v, d) = cands[rng.below(cands.len() as u64) as usize];
    let ty = func.dfg.value_type(v);
    // Copies at the end of some blocks strictly dominated by D (none, a quarter of the
    // time).
    let with_copies = rng.below(4) != 0;
    let mut defs: Vec<(Block, Value)> = vec![(d, v)];
    let blocks: Vec<Block> = func.layout.blocks().collect();
    for b in blocks {
        if !with_copies || b == d || !dt.dominates(d, b) || rng.below(3) != 0 {
            continue;
        }
        let Some(t) = func.terminator(b) else {
            continue;
        };
        let data = if ty.is_int() {
            InstructionData::Binary {
                opcode: Opcode::Or,
                args: [v, v],
                flags: IntFlags::NONE,
            }
        } else {
            InstructionData::Unary {
                opcode: Opcode::Freeze,
                arg: v,
            }
        };
        let c = func
            .insert_inst_before(t, data, Some(ty))
            .1
            .expect("result");
        defs.push((b, c));
        totals.copies += 1;
    }

    // Uses outside D, and which blocks read the variable on entry (for the reference).
    let mut uses: Vec<Inst> = Vec::new();
    let mut reads_entry = vec![false; func.dfg.num_blocks()];
    let mut has_def = vec![None; func.dfg.num_blocks()];
    for &(b, c) in &defs {
        has_def[b.index()] = Some(c);
    }
    for b in func.layout.blocks() {
        if b == d {
            continue;
        }
        for i in func.layout.block_insts(b) {
            let mut used = false;
            func.dfg.for_each_inst_value(i, |x| used |= x == v);
            if !used {
                continue;
            }
            uses.push(i);
            let term = func.dfg.inst(i).opcode().is_terminator();
            // A copy is the last instruction before the terminator: only the terminator
            // comes after it.
            let local = match has_def[b.index()] {
                Some(_) => term,
                None => false,
            };
            if cfg.is_reachable(b) && !local {
                reads_entry[b.index()] = true;
            }
        }
    }
    let def_blocks: Vec<Block> = defs.iter().map(|&(b, _)| b).collect();
    let expected = reference_placement(func, cfg, df, &def_blocks, &reads_entry);

    let before = if with_copies { None } else { Some(text(func)) };
    up.reset(ty);
    for &(b, c) in &defs {
        up.add_available_value(b, c);
    }
    let cx = SsaContext::new(cfg, dt, df);
    let err = |e| format!("{v} (defined in {d}): {e}");
    let changed = if rng.below(3) != 0 {
        up.rewrite_uses(func, &cx, &uses, v).map_err(err)?
    } else {
        // One use at a time, in a random order: each query extends the live set and
        // places what it needs; the result must be the bulk update's.
        totals.one_at_a_time += 1;
        let mut order = uses.clone();
        for k in (1..order.len()).rev() {
            order.swap(k, rng.below(k as u64 + 1) as usize);
        }
        let mut n = 0;
        for &i in &order {
            n += usize::from(up.rewrite_use(func, &cx, i, v).map_err(err)?);
        }
        n
    };
    totals.variables += 1;
    totals.rewritten += changed as u64;
    totals.params += up.new_params().len() as u64;

    // What each rewritten use reads now (memoised: no more changes).
    let mut reads = vec![None; func.dfg.num_insts()];
    for &i in &uses {
        let w = up.use_value(func, &cx, i).map_err(|e| e.to_string())?;
        let mut still = false;
        func.dfg.for_each_inst_value(i, |x| still |= x == v);
        if still && w != v {
            return Err(format!("{i} still uses {v} instead of {w}"));
        }
        reads[i.index()] = Some(w);
    }
    walk_paths(func, cfg, up.new_params(), &defs, d, &reads, rng)
        .map_err(|e| format!("{v} (defined in {d}, copies {defs:?}): {e}"))?;

    let mut got: Vec<Block> = up.new_params().iter().map(|&(b, _)| b).collect();
    got.sort_unstable();
    if got != expected {
        return Err(format!(
            "{v} (defined in {d}, copies {defs:?}): parameters at {got:?}, expected {expected:?}"
        ));
    }
    for &(b, p) in up.new_params() {
        if func.dfg.value_type(p) != ty || def_block(func, p) != Some(b) {
            return Err(format!("{p} is not a parameter of {b} of type {ty}"));
        }
    }
    if let Some(before) = before {
        totals.unchanged_checked += 1;
        if text(func) != before || changed != 0 {
            return Err(format!(
                "{v} (defined in {d}) has one definition, yet the function changed"
            ));
        }
    }
    Ok(true)
}

/// Random walks from the entry: at every rewritten use (`reads[inst]`), the value read,
/// through the new parameters' values on the path taken, must be the variable's last
/// definition on that path (`defs[0]` is `v` at `d`, the rest are copies).
fn walk_paths(
    func: &Function,
    cfg: &Cfg,
    params: &[(Block, Value)],
    defs: &[(Block, Value)],
    d: Block,
    reads: &[Option<Value>],
    rng: &mut SplitMix64,
) -> Result<(), String> {
    let nv = func.dfg.num_values();
    // Per block: (index, value) of its new parameters.
    let mut new_params: Vec<Vec<(usize, Value)>> = vec![Vec::new(); func.dfg.num_blocks()];
    let mut is_new = vec![false; nv];
    for &(b, p) in params {
        is_new[p.index()] = true;
        let idx = func.dfg.block_params(b).iter().position(|&x| x == p);
        new_params[b.index()].push((idx.ok_or("lost parameter")?, p));
    }
    // Instructions that define the variable, with the value they define.
    let mut defines = vec![None; func.dfg.num_insts()];
    let v = defs[0].1;
    let v_is_param = matches!(func.dfg.value_def(v), ValueDef::Param(..));
    for &(_, c) in defs {
        if let ValueDef::Result(i) = func.dfg.value_def(c) {
            defines[i.index()] = Some(c);
        }
    }
    let Some(entry) = cfg.entry() else {
        return Ok(());
    };
    let mut env: Vec<Option<Value>> = vec![None; nv];
    let mut incoming: Vec<(Value, Option<Value>)> = Vec::new();
    for _ in 0..4 {
        env.iter_mut().for_each(|e| *e = None);
        let mut cur: Option<Value> = None;
        let mut b = entry;
        for _ in 0..400 {
            if b == d && v_is_param {
                cur = Some(v);
            }
            for i in func.layout.block_insts(b) {
                if let Some(w) = reads[i.index()] {
                    let got = if is_new[w.index()] {
                        env[w.index()]
                    } else {
                        Some(w)
                    };
                    if got != cur {
                        return Err(format!(
                            "{i} in {b} reads {w} = {got:?} where the variable is {cur:?}"
                        ));
                    }
                }
                if let Some(c) = defines[i.index()] {
                    cur = Some(c);
                }
            }
            let Some(t) = func.terminator(b) else { break };
            let mut dests = Vec::new();
            func.dfg.for_each_dest(t, |bc| dests.push(*bc));
            if dests.is_empty() {
                break;
            }
            let bc = &dests[rng.below(dests.len() as u64) as usize];
            let args = func.dfg.block_call_args(bc);
            // Parallel assignment: read every argument before writing any parameter.
            incoming.clear();
            for &(idx, p) in &new_params[bc.block.index()] {
                let a = args[idx];
                let val = if is_new[a.index()] {
                    env[a.index()]
                } else {
                    Some(a)
                };
                incoming.push((p, val));
            }
            for &(p, val) in &incoming {
                env[p.index()] = val;
            }
            b = bc.block;
        }
    }
    Ok(())
}

fn check_case(opts: &GenOptions, seed: u64, totals: &mut Totals) -> Result<(), String> {
    let (original, contract) = generate_kernel_module(opts, &mut SplitMix64::new(seed));
    let mut m = original.clone();
    let mut rng = SplitMix64::new(seed ^ 0x55a);
    let mut up = SsaUpdater::new();
    for f in m.functions.values_mut() {
        // The updater keeps the CFG: the analyses hold for every variable.
        let cfg = Cfg::with_function(f).map_err(|e| e.to_string())?;
        let dt = DomTree::with_function(f, &cfg);
        let mut df = DominanceFrontiers::new();
        df.compute(f, &cfg, &dt);
        for _ in 0..3 {
            if !one_variable(f, &cfg, &dt, &df, &mut up, &mut rng, totals)
                .map_err(|e| format!("@{}: {e}", f.name))?
            {
                break;
            }
        }
    }
    for f in m.functions.values() {
        verify_function(f, Some(&m)).map_err(|e| format!("after the update: {e}"))?;
    }
    let kernel = &original.functions[contract.kernel].name;
    for k in 0..2 {
        let inputs = random_inputs(&contract, seed.wrapping_mul(31).wrapping_add(k));
        assert_same_behaviour(&original, &m, kernel, &inputs)
            .map_err(|d| format!("behaviour differs (inputs {k}): {d}"))?;
    }
    Ok(())
}

#[test]
fn updater_on_generated_kernels() {
    let per_profile = common::cases(150);
    let mut totals = Totals::default();
    let mut failures = Vec::new();
    for (name, opts) in common::profiles(&["default", "loopy", "switchy"]) {
        for seed in 0..per_profile {
            if let Err(e) = check_case(&opts, seed, &mut totals) {
                failures.push(format!("profile {name}, seed {seed}: {e}"));
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
    // The cases must place parameters and rewrite uses, or this test proves little.
    assert!(
        totals.params > 0
            && totals.rewritten > 0
            && totals.unchanged_checked > 0
            && totals.one_at_a_time > 0,
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
        .tests(100)
        .quickcheck(prop as fn(u64) -> quickcheck::TestResult);
}
