//! Property tests of the IR editing toolkit (`gyre_transforms::utils`) on generated
//! UB-free kernels: after each complete edit the module verifies and the interpreter shows
//! the same behaviour as before, on random inputs that follow the kernel's contract.
//!
//! - **split every edge**: each successor edge of every block gets its own block
//!   (`split_edge_at`, or `split_edge` per distinct target on odd seeds); no critical edge
//!   remains, and the CFG kept by the helpers equals a fresh one;
//! - **split blocks** at random points, repeatedly, CFG kept current;
//! - **clone every block** of every function, enter the copy of the entry from a new entry
//!   block (passing the parameters, or, on odd seeds, pre-seeding the map with them) and
//!   delete the originals: only a complete remapping verifies;
//! - **clone loops** (after `loop-simplify,lcssa`): every top-level loop is copied and
//!   its preheader enters the copy, or (odd seeds) branches on `tid.x & 1` to the
//!   original or the copy, as non-trivial unswitching does; in LCSSA form the copies'
//!   exit edges need no SSA repair;
//! - **replace uses by copies**: each side-effect-free result gets a `clone_inst` copy
//!   right after it (two chained copies on odd seeds), and its uses move to the copy, in
//!   one batch (`replace_uses_batch`, chains resolved) and through `UseLists` (which must
//!   then equal a fresh index); both give the same function.
//!
//! Cases are a deterministic sweep of seeds (`GYRE_PROP_CASES` to run more).

mod common;

use gyre_analysis::{Cfg, DomTree, LoopInfo};
use gyre_interp::{assert_same_behaviour, random_inputs};
use gyre_ir::generate::{
    generate_kernel_module, GenOptions, KernelContract, RandomSource, SplitMix64,
};
use gyre_ir::verifier::verify_function;
use gyre_ir::{
    write_function, Block, BlockCall, Function, Inst, InstructionData, Module, Opcode, SpecialReg,
    Type, Value, ValueDef,
};
use gyre_transforms::utils::clone::{clone_blocks, ValueMap};
use gyre_transforms::utils::split::{split_block, split_edge, split_edge_at, Place};
use gyre_transforms::utils::uses::{replace_uses_batch, UseLists};
use gyre_transforms::{Knobs, Options, PassManager};

/// Run `edit` on every function of a module per case; the result must verify and behave
/// as the original. `edit` returns how many edits it made.
fn sweep(
    what: &str,
    edit: impl FnMut(&mut Function, &mut SplitMix64, u64) -> Result<u64, String>,
) -> u64 {
    sweep_after(what, None, edit)
}

/// [`sweep`] on modules first put through `pipeline`.
fn sweep_after(
    what: &str,
    pipeline: Option<&str>,
    mut edit: impl FnMut(&mut Function, &mut SplitMix64, u64) -> Result<u64, String>,
) -> u64 {
    let mut failures = Vec::new();
    let mut edits = 0;
    for (name, opts) in common::profiles(&["default", "switchy"]) {
        for seed in 0..common::cases(150) {
            let (mut m, contract) = generate_kernel_module(&opts, &mut SplitMix64::new(seed));
            if let Some(p) = pipeline {
                let mut pm = PassManager::from_pipeline(p, Knobs::default(), Options::default())
                    .expect("a valid pipeline");
                pm.run_module(&mut m).expect("the pipeline runs");
            }
            let mut after = m.clone();
            let mut rng = SplitMix64::new(seed ^ 0x7001);
            let res = (|| {
                for f in after.functions.values_mut() {
                    edits += edit(f, &mut rng, seed).map_err(|e| format!("@{}: {e}", f.name))?;
                }
                for f in after.functions.values() {
                    verify_function(f, Some(&after))
                        .map_err(|e| format!("does not verify:\n{e}\n{}", show(f)))?;
                }
                same_behaviour(&m, &after, &contract, seed)
            })();
            if let Err(e) = res {
                failures.push(format!("{what}: profile {name}, seed {seed}: {e}"));
                if failures.len() >= 3 {
                    break;
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    edits
}

fn show(f: &Function) -> String {
    let mut s = String::new();
    write_function(&mut s, f, None).expect("writing to a String");
    s
}

fn same_behaviour(
    before: &Module,
    after: &Module,
    contract: &KernelContract,
    seed: u64,
) -> Result<(), String> {
    let kernel = &before.functions[contract.kernel].name;
    for k in 0..2 {
        let inputs = random_inputs(contract, seed.wrapping_mul(31).wrapping_add(k));
        assert_same_behaviour(before, after, kernel, &inputs)
            .map_err(|d| format!("behaviour differs (inputs {k}): {d}"))?;
    }
    Ok(())
}

/// The CFG kept by the helpers must equal a fresh one: the same successors in order,
/// the same predecessors as multisets, and (after `compute_order`) the same RPO.
fn same_cfg(func: &Function, cfg: &mut Cfg) -> Result<(), String> {
    cfg.compute_order(func);
    let fresh = Cfg::with_function(func).map_err(|e| e.to_string())?;
    if cfg.rpo() != fresh.rpo() {
        return Err("kept RPO differs from a fresh one".into());
    }
    for b in func.layout.blocks() {
        let (mut p, mut q) = (cfg.preds(b).to_vec(), fresh.preds(b).to_vec());
        p.sort();
        q.sort();
        if cfg.succs(b) != fresh.succs(b) || p != q {
            return Err(format!("kept CFG differs at {b}"));
        }
    }
    Ok(())
}

fn blocks(f: &Function) -> Vec<Block> {
    f.layout.blocks().collect()
}

#[test]
fn split_every_edge() {
    let n = sweep("split every edge", |f, _, seed| {
        let mut cfg = Cfg::with_function(f).map_err(|e| e.to_string())?;
        let mut n = 0;
        for b in blocks(f) {
            let succs = f.successors(b);
            if seed % 2 == 0 {
                for k in 0..succs.len() {
                    split_edge_at(f, b, k, Some(&mut cfg)).map_err(|e| e.to_string())?;
                    n += 1;
                }
            } else {
                let mut distinct = succs.clone();
                distinct.sort();
                distinct.dedup();
                for s in distinct {
                    split_edge(f, b, s, Some(&mut cfg)).map_err(|e| e.to_string())?;
                    n += 1;
                }
            }
        }
        same_cfg(f, &mut cfg)?;
        // No critical edge remains: a block with several successor edges only branches
        // to blocks entered from it alone (with split_edge: by the one block).
        let fresh = Cfg::with_function(f).map_err(|e| e.to_string())?;
        for b in blocks(f) {
            let succs = fresh.succs(b);
            for &s in succs {
                let single = if seed % 2 == 0 {
                    fresh.preds(s).len() == 1
                } else {
                    fresh.preds(s).iter().all(|&p| p == b)
                };
                if succs.len() > 1 && !single {
                    return Err(format!("critical edge {b} -> {s} left"));
                }
            }
        }
        Ok(n)
    });
    assert!(n > 1000, "{n} edges split");
}

#[test]
fn split_blocks_at_random_points() {
    let n = sweep("split blocks", |f, rng, _| {
        let mut cfg = Cfg::with_function(f).map_err(|e| e.to_string())?;
        let mut n = 0;
        let mut work = blocks(f);
        while let Some(b) = work.pop() {
            if rng.below(3) == 0 {
                continue;
            }
            let insts: Vec<Inst> = f.layout.block_insts(b).collect();
            let at = insts[rng.below(insts.len() as u64) as usize];
            let new = split_block(f, at, Some(&mut cfg)).map_err(|e| e.to_string())?;
            if f.layout.inst_block(at) != Some(new) || f.layout.prev_block(new) != Some(b) {
                return Err(format!("{at} not moved to {new} after {b}"));
            }
            n += 1;
            // Split the new block again, sometimes.
            if f.layout.block_insts(new).count() > 1 {
                work.push(new);
            }
        }
        same_cfg(f, &mut cfg)?;
        Ok(n)
    });
    assert!(n > 1000, "{n} blocks split");
}

#[test]
fn clone_every_block_and_run_the_copy() {
    let n = sweep("clone every block", |f, _, seed| {
        let originals = blocks(f);
        let entry = originals[0];
        let params: Vec<Value> = f.dfg.block_params(entry).to_vec();
        // The new entry block, with the function's parameters.
        let e = f.dfg.make_block();
        f.layout.insert_block_before(e, entry);
        let fresh: Vec<Value> = params
            .iter()
            .map(|&p| {
                let ty: Type = f.dfg.value_type(p);
                f.dfg.append_block_param(e, ty)
            })
            .collect();
        let mut map = ValueMap::new();
        let seeded = seed % 2 == 1;
        if seeded {
            for (&p, &q) in params.iter().zip(&fresh) {
                map.insert(p, q);
            }
        }
        let copies =
            clone_blocks(f, &originals, &mut map, Place::End).map_err(|e| e.to_string())?;
        let args: &[Value] = if seeded { &[] } else { &fresh };
        if f.dfg.block_params(copies[0]).len() != args.len() {
            return Err("copy of the entry has the wrong parameters".into());
        }
        let dest = BlockCall::new(copies[0], args, &mut f.dfg.value_lists);
        f.append_inst(e, InstructionData::Jump { dest }, None);
        // Every value of the originals maps to a value defined in a copy (or, for the
        // seeded entry parameters, in the new entry).
        for &b in &originals {
            if map.get_block(b).is_none() {
                return Err(format!("{b} has no copy"));
            }
            let defs = f
                .dfg
                .block_params(b)
                .iter()
                .copied()
                .chain(f.layout.block_insts(b).filter_map(|i| f.dfg.inst_result(i)));
            for v in defs.collect::<Vec<_>>() {
                let w = map.get(v).ok_or(format!("{v} unmapped"))?;
                let home = match f.dfg.value_def(w) {
                    ValueDef::Result(i) => f.layout.inst_block(i),
                    ValueDef::Param(pb, _) => Some(pb),
                    ValueDef::Detached => None,
                };
                if !home.is_some_and(|h| h == e || copies.contains(&h)) {
                    return Err(format!("{v} maps to {w}, not defined in a copy"));
                }
            }
        }
        // Delete the originals: the copies must not refer to them.
        for &b in &originals {
            while let Some(i) = f.layout.first_inst(b) {
                f.layout.remove_inst(i);
            }
            f.layout.remove_block(b);
        }
        Ok(copies.len() as u64)
    });
    assert!(n > 1000, "{n} blocks cloned");
}

#[test]
fn replace_uses_by_copies() {
    let mut differ = 0;
    let n = sweep("replace uses by copies", |f, _, seed| {
        let chained = seed % 2 == 1;
        let mut map = ValueMap::new();
        let mut pairs = Vec::new();
        for b in blocks(f) {
            for i in f.layout.block_insts(b).collect::<Vec<_>>() {
                let Some(r) = f.dfg.inst_result(i) else {
                    continue;
                };
                if f.dfg.inst(i).opcode().has_side_effects() {
                    continue;
                }
                let mut at = i;
                let mut from = r;
                for _ in 0..(1 + usize::from(chained)) {
                    let c = f.dfg.clone_inst(i);
                    let next = f.layout.next_inst(at).ok_or("result at the end")?;
                    f.layout.insert_inst_before(c, next);
                    let to = f.dfg.inst_result(c).ok_or("copy without result")?;
                    map.insert(from, to);
                    pairs.push((from, to));
                    (at, from) = (c, to);
                }
            }
        }
        let mut g = f.clone();
        let mut uses = UseLists::with_function(&g);
        let rewritten = replace_uses_batch(f, &mut map).map_err(|e| e.to_string())?;
        let mut by_index = 0;
        for &(from, to) in &pairs {
            by_index += uses.replace_all_uses(&mut g, from, to);
        }
        if show(f) != show(&g) {
            return Err("the batch and the index give different functions".into());
        }
        differ += u64::from(rewritten != by_index);
        // The maintained index equals a fresh one (each user once per value).
        let fresh = UseLists::with_function(&g);
        for v in g.dfg.values() {
            let (mut a, mut b): (Vec<Inst>, Vec<Inst>) =
                (uses.users(v).collect(), fresh.users(v).collect());
            a.sort();
            b.sort();
            if a != b {
                return Err(format!("kept users of {v} differ: {a:?} vs {b:?}"));
            }
        }
        Ok(rewritten as u64)
    });
    assert!(n > 1000, "{n} uses rewritten");
    // The batch counts operand slots, the index instructions: they must differ somewhere
    // (an instruction using a value twice), or one of the counts is not what it says.
    assert!(differ > 0);
}

#[test]
fn clone_loops_and_enter_the_copies() {
    let n = sweep_after(
        "clone loops",
        Some("loop-simplify,lcssa"),
        |f, rng, seed| {
            let cfg = Cfg::with_function(f).map_err(|e| e.to_string())?;
            let dt = DomTree::with_function(f, &cfg);
            let li = LoopInfo::with_function(f, &cfg, &dt);
            let mut n = 0;
            for l in li.loops() {
                if li.parent(l).is_some() || li.contains_irreducible(l) || rng.below(4) == 0 {
                    continue;
                }
                let ph = li
                    .preheader(l, &cfg)
                    .ok_or("no preheader after loop-simplify")?;
                let header = li.header(l);
                let body: Vec<_> = li.blocks(l).collect();
                let last = *body.last().expect("a loop has blocks");
                let copies = clone_blocks(f, &body, &mut ValueMap::new(), Place::After(last))
                    .map_err(|e| e.to_string())?;
                let copy = copies[body.iter().position(|&b| b == header).expect("header")];
                let t = f.terminator(ph).ok_or("preheader without terminator")?;
                let InstructionData::Jump { dest } = f.dfg.inst(t).clone() else {
                    return Err("preheader does not end in a jump".into());
                };
                let args = f.dfg.block_call_args(&dest).to_vec();
                let to_copy = BlockCall::new(copy, &args, &mut f.dfg.value_lists);
                if seed % 2 == 0 {
                    f.dfg
                        .replace_inst(t, InstructionData::Jump { dest: to_copy });
                } else {
                    // Odd threads run the original, even ones the copy.
                    let tid = f
                        .insert_inst_before(
                            t,
                            InstructionData::Sreg {
                                reg: SpecialReg::TidX,
                            },
                            Some(Type::I32),
                        )
                        .1
                        .ok_or("sreg without result")?;
                    let bit = f
                        .insert_inst_before(
                            t,
                            InstructionData::Unary {
                                opcode: Opcode::Trunc,
                                arg: tid,
                            },
                            Some(Type::I1),
                        )
                        .1
                        .ok_or("trunc without result")?;
                    f.dfg.replace_inst(
                        t,
                        InstructionData::Brif {
                            arg: bit,
                            blocks: [dest, to_copy],
                        },
                    );
                }
                n += 1;
            }
            Ok(n)
        },
    );
    assert!(n > 100, "{n} loops cloned");
}

/// All the edits in sequence on one module, one CFG kept current across them, on random
/// seeds: split a random edge, split a block at a random point, or clone a random
/// side-effect-free instruction and move its result's uses to the copy.
#[test]
fn quickcheck_mixed_edits() {
    fn prop(seed: u64) -> quickcheck::TestResult {
        let (m, contract) =
            generate_kernel_module(&GenOptions::default(), &mut SplitMix64::new(seed));
        let mut after = m.clone();
        let mut rng = SplitMix64::new(seed);
        let res = (|| {
            for f in after.functions.values_mut() {
                let mut cfg = Cfg::with_function(f).map_err(|e| e.to_string())?;
                let mut uses = UseLists::with_function(f);
                for _ in 0..40 {
                    let bs = blocks(f);
                    let b = bs[rng.below(bs.len() as u64) as usize];
                    let insts: Vec<Inst> = f.layout.block_insts(b).collect();
                    let i = insts[rng.below(insts.len() as u64) as usize];
                    match rng.below(3) {
                        0 => {
                            let k = rng.below(f.successors(b).len() as u64) as usize;
                            if !f.successors(b).is_empty() {
                                split_edge_at(f, b, k, Some(&mut cfg))
                                    .map_err(|e| e.to_string())?;
                            }
                        }
                        1 => {
                            split_block(f, i, Some(&mut cfg)).map_err(|e| e.to_string())?;
                        }
                        _ => {
                            let Some(r) = f.dfg.inst_result(i) else {
                                continue;
                            };
                            if f.dfg.inst(i).opcode().has_side_effects() {
                                continue;
                            }
                            let c = f.dfg.clone_inst(i);
                            let next = f.layout.next_inst(i).ok_or("result at the end")?;
                            f.layout.insert_inst_before(c, next);
                            uses.add_inst(f, c);
                            let s = f.dfg.inst_result(c).ok_or("copy without result")?;
                            uses.replace_all_uses(f, r, s);
                        }
                    }
                }
                same_cfg(f, &mut cfg)?;
            }
            for f in after.functions.values() {
                verify_function(f, Some(&after)).map_err(|e| format!("does not verify:\n{e}"))?;
            }
            same_behaviour(&m, &after, &contract, seed)
        })();
        match res {
            Ok(()) => quickcheck::TestResult::passed(),
            Err(e) => quickcheck::TestResult::error(format!("seed {seed}: {e}")),
        }
    }
    quickcheck::QuickCheck::new()
        .tests(100)
        .quickcheck(prop as fn(u64) -> quickcheck::TestResult);
}
