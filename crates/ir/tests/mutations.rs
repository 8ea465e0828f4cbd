//! Targeted mutations of generated functions are each caught by the verifier with the
//! right error kind: a use moved before its definition, a dropped branch argument, and a
//! block parameter whose type no longer matches its incoming arguments.

use gyre_ir::generate::{generate_from_seed, GenOptions};
use gyre_ir::verifier::{verify_module, VerifierErrorKind};
use gyre_ir::{FuncId, Module, Type, ValueDef};

const SEEDS: u64 = 300;

/// Apply `mutate` to the first function where it applies; returns whether it did.
fn mutate_some(m: &mut Module, mutate: impl Fn(&mut gyre_ir::Function) -> bool) -> bool {
    let ids: Vec<FuncId> = m.functions.keys().collect();
    ids.into_iter().any(|id| mutate(&mut m.functions[id]))
}

fn check(kind: VerifierErrorKind, mutate: impl Fn(&mut gyre_ir::Function) -> bool) {
    let mut applied = 0;
    for seed in 0..SEEDS {
        let (mut m, _) = generate_from_seed(&GenOptions::default(), seed);
        verify_module(&m).unwrap_or_else(|e| panic!("seed {seed}: generated module invalid:\n{e}"));
        if !mutate_some(&mut m, &mutate) {
            continue;
        }
        applied += 1;
        match verify_module(&m) {
            Ok(()) => panic!("seed {seed}: mutation not caught ({kind:?})\n{m}"),
            Err(e) => assert!(e.has(kind), "seed {seed}: expected {kind:?}, got:\n{e}"),
        }
    }
    assert!(
        applied > SEEDS / 2,
        "mutation applied to only {applied} of {SEEDS} modules"
    );
}

#[test]
fn use_moved_before_its_definition() {
    check(VerifierErrorKind::UseNotDominated, |f| {
        for b in f.layout.blocks().collect::<Vec<_>>() {
            let insts: Vec<_> = f.layout.block_insts(b).collect();
            for (j, &user) in insts.iter().enumerate() {
                if f.dfg.inst(user).opcode().is_terminator() {
                    continue;
                }
                for &arg in f.dfg.inst_args(user) {
                    if let ValueDef::Result(def) = f.dfg.value_def(arg) {
                        if insts[..j].contains(&def) {
                            f.layout.remove_inst(user);
                            f.layout.insert_inst_before(user, def);
                            return true;
                        }
                    }
                }
            }
        }
        false
    })
}

#[test]
fn dropped_branch_argument() {
    check(VerifierErrorKind::BranchArgCount, |f| {
        for b in f.layout.blocks().collect::<Vec<_>>() {
            let Some(t) = f.terminator(b) else { continue };
            let mut done = false;
            f.dfg.for_each_dest_mut(t, |bc, pool| {
                if !done && !bc.args.is_empty() {
                    let n = bc.args.len(pool);
                    bc.args.remove(n - 1, pool);
                    done = true;
                }
            });
            if done {
                return true;
            }
        }
        false
    })
}

#[test]
fn block_parameter_type_changed() {
    check(VerifierErrorKind::BranchArgType, |f| {
        let entry = f.entry_block();
        for b in f.layout.blocks().collect::<Vec<_>>() {
            if Some(b) == entry {
                continue;
            }
            if let Some(&p) = f.dfg.block_params(b).first() {
                let new = if f.dfg.value_type(p) == Type::F64 {
                    Type::I8
                } else {
                    Type::F64
                };
                f.dfg.set_value_type(p, new);
                return true;
            }
        }
        false
    })
}
