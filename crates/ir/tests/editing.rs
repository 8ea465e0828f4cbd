//! Properties of the data-flow editing primitives on generated modules:
//!
//! - `clone_inst` gives data equal to the original by contents (`eq_in`, `hash_in`,
//!   `InstKey`), with a fresh result of the same type, and is deep: editing the copy's
//!   argument lists or jump table leaves the original untouched;
//! - changing one operand or one branch target of a copy makes it unequal;
//! - copies placed right after their originals, with the uses of each original's result
//!   moved to the copy, verify;
//! - `InstKey` in an `FxHashMap` and `InstTable` find the same classes as a pairwise
//!   `eq_in` reference, and equal keys hash equally.
//!
//! (That such copies also behave the same under the interpreter is checked in
//! gyre-transforms' `toolkit` tests, which may depend on the interpreter.)

use gyre_ir::dfg::{InstKey, InstTable};
use gyre_ir::generate::{generate_from_seed, GenOptions};
use gyre_ir::verifier::verify_function;
use gyre_ir::{parse_function, DataFlowGraph, Function, Inst, InstructionData, Module, Value};
use rustc_hash::{FxHashMap, FxHasher};
use std::hash::Hasher;

const SEEDS: u64 = 120;

fn laid_out(f: &Function) -> Vec<Inst> {
    f.layout
        .blocks()
        .flat_map(|b| f.layout.block_insts(b))
        .collect()
}

fn hash_of(dfg: &DataFlowGraph, data: &InstructionData) -> u64 {
    let mut h = FxHasher::default();
    data.hash_in(&mut h, dfg);
    h.finish()
}

fn uses(dfg: &DataFlowGraph, i: Inst) -> Vec<Value> {
    let mut v = Vec::new();
    dfg.for_each_inst_value(i, |x| v.push(x));
    v
}

fn modules() -> impl Iterator<Item = (u64, Module)> {
    (0..SEEDS).map(|seed| (seed, generate_from_seed(&GenOptions::default(), seed).0))
}

#[test]
fn clone_inst_is_equal_fresh_and_deep() {
    let (mut lists, mut tables, mut differ, mut same_hash) = (0, 0, 0, 0);
    for (seed, mut m) in modules() {
        for f in m.functions.values_mut() {
            for i in laid_out(f) {
                let c = f.dfg.clone_inst(i);
                let ctx = format!("seed {seed} @{} {i}", f.name);
                let dfg = &f.dfg;
                assert!(dfg.inst(i).eq_in(dfg.inst(c), dfg), "{ctx}");
                assert_eq!(
                    hash_of(dfg, dfg.inst(i)),
                    hash_of(dfg, dfg.inst(c)),
                    "{ctx}"
                );
                assert!(InstKey::new(dfg, i) == InstKey::new(dfg, c), "{ctx}");
                assert!(f.layout.inst_block(c).is_none(), "{ctx}: copy laid out");
                match (dfg.inst_result(i), dfg.inst_result(c)) {
                    (None, None) => {}
                    (Some(r), Some(s)) => {
                        assert_ne!(r, s, "{ctx}");
                        assert_eq!(dfg.value_type(r), dfg.value_type(s), "{ctx}");
                        assert_eq!(dfg.value_def(s), gyre_ir::ValueDef::Result(c), "{ctx}");
                    }
                    _ => panic!("{ctx}: result mismatch"),
                }
                let before = uses(dfg, i);
                let original = dfg.inst(i).clone();

                // Deep: overwrite every value the copy uses, and a jump table's default
                // target; the original must not change.
                if let InstructionData::BrTable { table, .. } = *dfg.inst(c) {
                    let InstructionData::BrTable { table: t0, .. } = original else {
                        unreachable!()
                    };
                    assert_ne!(table, t0, "{ctx}: jump table shared");
                    let old = dfg.jump_table(t0).clone();
                    let other = f.layout.entry_block().expect("entry");
                    let jt = f.dfg.jump_table_mut(table);
                    jt.default.block = other;
                    if let Some(case) = jt.cases.first_mut() {
                        case.0 = case.0.wrapping_add(1);
                    }
                    assert_eq!(f.dfg.jump_table(t0), &old, "{ctx}: original table edited");
                    // No branch targets the entry block, so the default did change.
                    assert!(
                        !f.dfg.inst(i).eq_in(f.dfg.inst(c), &f.dfg),
                        "{ctx}: table edit not seen by eq_in"
                    );
                    tables += 1;
                }
                if original.has_pool_data() && !before.is_empty() {
                    lists += 1;
                }
                let fresh = f.dfg.make_detached_value(gyre_ir::Type::I32);
                f.dfg.map_inst_values(c, |_| fresh);
                assert_eq!(uses(&f.dfg, i), before, "{ctx}: original's operands edited");
                assert_eq!(f.dfg.inst(i), &original, "{ctx}: original's data edited");
                if !before.is_empty() {
                    let dfg = &f.dfg;
                    assert!(
                        !dfg.inst(i).eq_in(dfg.inst(c), dfg),
                        "{ctx}: operand change"
                    );
                    differ += 1;
                    same_hash += u32::from(hash_of(dfg, dfg.inst(i)) == hash_of(dfg, dfg.inst(c)));
                }
            }
        }
    }
    assert!(lists > 100 && tables > 10, "lists {lists}, tables {tables}");
    // Equal hashes for different data are allowed, but must be rare.
    assert!(same_hash * 100 <= differ, "{same_hash} of {differ} collide");
}

#[test]
fn changed_branch_target_is_unequal() {
    let mut n = 0;
    for (_, mut m) in modules() {
        for f in m.functions.values_mut() {
            let blocks: Vec<_> = f.layout.blocks().collect();
            for i in laid_out(f) {
                if !f.dfg.inst(i).opcode().is_branch() {
                    continue;
                }
                // Retarget only the last edge, to a block it does not already go to.
                let succs = f.dfg.successors(i);
                let last = *succs.last().expect("a branch has targets");
                let Some(&other) = blocks.iter().find(|&&b| b != last) else {
                    continue;
                };
                let c = f.dfg.clone_inst(i);
                let k = succs.len() - 1;
                let mut j = 0;
                f.dfg.for_each_dest_mut(c, |bc, _| {
                    if j == k {
                        bc.block = other;
                    }
                    j += 1;
                });
                assert!(!f.dfg.inst(i).eq_in(f.dfg.inst(c), &f.dfg));
                assert_eq!(f.dfg.successors(i), succs, "original retargeted");
                n += 1;
            }
        }
    }
    assert!(n > 100, "{n}");
}

#[test]
fn copies_placed_after_originals_verify() {
    let mut placed = 0;
    for (seed, m) in modules() {
        for (id, f) in m.functions.iter() {
            let mut g = f.clone();
            for i in laid_out(&g) {
                let Some(r) = g.dfg.inst_result(i) else {
                    continue;
                };
                if g.dfg.inst(i).opcode().has_side_effects() {
                    continue;
                }
                let c = g.dfg.clone_inst(i);
                let next = g.layout.next_inst(i).expect("a result is not a terminator");
                g.layout.insert_inst_before(c, next);
                let s = g.dfg.inst_result(c).expect("copy has a result");
                g.replace_all_uses(r, s);
                placed += 1;
            }
            verify_function(&g, Some(&m))
                .unwrap_or_else(|e| panic!("seed {seed} {id}: copies do not verify:\n{e}"));
        }
    }
    assert!(placed > 1000, "{placed}");
}

#[test]
fn inst_key_classes_match_pairwise_reference() {
    let mut multi = 0;
    for (seed, mut m) in modules().take(60) {
        for f in m.functions.values_mut() {
            // Every instruction twice: the copies make classes with list-bearing members
            // whose lists are different pool entries.
            let orig = laid_out(f);
            let mut all = orig.clone();
            all.extend(orig.iter().map(|&i| f.dfg.clone_inst(i)));
            let dfg = &f.dfg;
            let ty = |i: Inst| dfg.inst_result(i).map(|v| dfg.value_type(v));
            // Reference: the first earlier instruction equal by eq_in and type.
            let rep: Vec<usize> = (0..all.len())
                .map(|a| {
                    (0..=a)
                        .find(|&b| {
                            ty(all[a]) == ty(all[b])
                                && dfg.inst(all[a]).eq_in(dfg.inst(all[b]), dfg)
                        })
                        .expect("equal to itself")
                })
                .collect();
            for (a, &r) in rep.iter().enumerate() {
                assert_eq!(
                    hash_of(dfg, dfg.inst(all[a])),
                    hash_of(dfg, dfg.inst(all[r])),
                    "seed {seed}: equal data, different hashes"
                );
                // eq_in is symmetric.
                assert!(dfg.inst(all[r]).eq_in(dfg.inst(all[a]), dfg));
            }
            let mut map: FxHashMap<InstKey<'_>, usize> = FxHashMap::default();
            for (a, &i) in all.iter().enumerate() {
                let got = *map.entry(InstKey::new(dfg, i)).or_insert(a);
                assert_eq!(got, rep[a], "seed {seed} @{}: {i}", f.name);
            }
            let mut table = InstTable::new();
            for (a, &i) in all.iter().enumerate() {
                assert_eq!(table.get_or_insert(dfg, i), all[rep[a]]);
            }
            assert_eq!(table.len(), map.len());
            multi += all.len() - map.len();
            for (a, &i) in all.iter().enumerate() {
                assert_eq!(table.remove(dfg, i), rep[a] == a);
                assert_eq!(table.get(InstKey::new(dfg, i)), None);
            }
            assert!(table.is_empty());
        }
    }
    assert!(multi > 0);
}

#[test]
fn result_type_is_part_of_the_key_and_tables_compare_by_contents() {
    let src = "kernel @k(i32) {
block0(v0: i32):
    v1 = iconst.i32 0
    v2 = iconst.i64 0
    v3 = iconst.i32 0
    br_table v0, block1, [0: block2(v1), 3: block2(v3)]
block1:
    br_table v0, block1, [0: block2(v1), 3: block2(v3)]
block2(v4: i32):
    br_table v0, block1, [3: block2(v3), 0: block2(v1)]
}
";
    let f = parse_function(src).expect("parses");
    let insts = laid_out(&f);
    let key = |k: usize| InstKey::new(&f.dfg, insts[k]);
    assert!(f.dfg.inst(insts[0]).eq_in(f.dfg.inst(insts[1]), &f.dfg));
    assert!(key(0) != key(1), "i32 and i64 constants share a key");
    assert!(key(0) == key(2));
    // Two tables with the same cases: equal, though their ids differ.
    assert_ne!(f.dfg.inst(insts[3]), f.dfg.inst(insts[4]));
    assert!(key(3) == key(4));
    // The same cases in another order: unequal (order-sensitive, conservative).
    assert!(key(4) != key(5));
}
