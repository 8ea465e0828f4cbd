//! Property tests of `early-cse` over generated UB-free kernels (loads, stores, atomics,
//! local slots, shared-memory exchanges across barriers, calls, loops, switches).
//!
//! The generator seldom repeats a load, so each module is first mutated in ways that keep
//! its meaning and give the pass work:
//! - **reload**: after a non-volatile load `v = load p`, a copy `v' = load p` is inserted
//!   and the uses of `v` after it in the block read `v'` (a load-load pair);
//! - **read back**: after a non-volatile store `store v, p`, a load `v' = load p` is
//!   inserted and the uses of `v` after it in the block read `v'` (race-free: a thread
//!   writing `p` before the next barrier would already race with the store).
//! - **write-back**: at a random later point of the block of a non-volatile access to
//!   `p`, `v' = load p; store v', p` (a no-op: it writes back what is there). If the pass
//!   gave `v'` a stale value (a missed kill), the store writes it and the run differs.
//!   A write-back may race with another thread's access; a module whose mutated input
//!   fails is mutated again with write-backs to thread-private local memory only, then
//!   with none.
//!
//! Then `early-cse` (also after `sroa,simplify`, its place in `-O`) runs under
//! `--verify-each`, and the grid interpreter (races, divergent barriers and out-of-bounds
//! accesses are errors) shows the same behaviour as the input on random inputs. The sweep
//! checks that the pass replaced loads of both kinds and pure instructions, and that a second run changes
//! nothing.

mod common;

use gyre_interp::random_inputs;
use gyre_ir::generate::{generate_kernel_module, GenOptions, KernelContract, SplitMix64};
use gyre_ir::{AddrSpace, Function, Inst, InstructionData, Module, Value};
use gyre_transforms::{Knobs, Options, PassManager, Stats};

const PASS: &str = "early-cse";

fn apply(pipeline: &str, m: &mut Module) -> Result<Stats, String> {
    let options = Options {
        verify_each: true,
        ..Options::default()
    };
    let mut pm = PassManager::from_pipeline(pipeline, Knobs::default(), options)?;
    let report = pm.run_module(m).map_err(|e| e.to_string())?;
    Ok(report.stats)
}

/// Uses of `v` after `at` in `at`'s block now read `to`.
fn redirect_later_uses(f: &mut Function, at: Inst, v: Value, to: Value) {
    let mut cur = f.layout.next_inst(at);
    while let Some(i) = cur {
        cur = f.layout.next_inst(i);
        f.dfg.map_inst_values(i, |x| if x == v { to } else { x });
    }
}

/// The mutations of the module documentation, on about every `every`-th access; with
/// accesses to a space `write_back` accepts, half of them are write-backs.
fn mutate(m: &mut Module, seed: u64, every: u64, write_back: fn(AddrSpace) -> bool) -> u32 {
    let mut n = 0;
    let mut k = seed;
    for f in m.functions.values_mut() {
        let blocks: Vec<_> = f.layout.blocks().collect();
        for b in blocks {
            let insts: Vec<_> = f.layout.block_insts(b).collect();
            for (pos, &i) in insts.iter().enumerate() {
                k = k
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                if !(k >> 33).is_multiple_of(every) {
                    continue;
                }
                let (ptr, v, ty) = match *f.dfg.inst(i) {
                    InstructionData::Load { ptr, flags } if !flags.volatile => {
                        let r = f.dfg.inst_result(i).expect("a load has a result");
                        (ptr, r, f.dfg.value_type(r))
                    }
                    InstructionData::Store { args, flags } if !flags.volatile => {
                        (args[1], args[0], f.dfg.value_type(args[0]))
                    }
                    _ => continue,
                };
                let data = InstructionData::Load {
                    ptr,
                    flags: Default::default(),
                };
                // Every instruction after `i` but the terminator is a place to insert at.
                let later = insts.len() - pos - 2;
                let space = f.dfg.value_type(ptr).addr_space().expect("a pointer");
                if write_back(space) && (k >> 20).is_multiple_of(2) && later > 0 {
                    let at = insts[pos + 1 + ((k >> 40) as usize % later)];
                    let (_, r) = f.insert_inst_before(at, data, Some(ty));
                    let store = InstructionData::Store {
                        args: [r.expect("the load's result"), ptr],
                        flags: Default::default(),
                    };
                    f.insert_inst_before(at, store, None);
                } else {
                    let next = insts[pos + 1];
                    let (new, r) = f.insert_inst_before(next, data, Some(ty));
                    redirect_later_uses(f, new, v, r.expect("the load's result"));
                }
                n += 1;
            }
        }
    }
    n
}

/// Does `m` run without error on the case's inputs (a write-back may race)?
fn runs(m: &Module, contract: &KernelContract, seed: u64) -> bool {
    let kernel = &m.functions[contract.kernel].name;
    (0..3).all(|k| {
        let mut inputs = random_inputs(contract, seed.wrapping_mul(31).wrapping_add(k));
        gyre_interp::run_kernel(m, kernel, &inputs.launch, &mut inputs.memory).is_ok()
    })
}

#[derive(Debug, Default)]
struct Totals {
    cases: u64,
    mutations: u64,
    /// Cases with write-backs everywhere, to local memory only, nowhere.
    write_back_level: [u64; 3],
    loads_cse: u64,
    forwarded: u64,
    pure_cse: u64,
}

fn check_case(opts: &GenOptions, seed: u64, totals: &mut Totals) -> Result<(), String> {
    let (orig, contract) = generate_kernel_module(opts, &mut SplitMix64::new(seed));
    let every = 2 + seed % 3;
    let mut m = orig.clone();
    // Write-backs everywhere, else (one raced with another thread, or the kernel fails
    // anyway) only to thread-private local memory, else none.
    let levels: [fn(AddrSpace) -> bool; 3] = [|_| true, |s| s == AddrSpace::Local, |_| false];
    let mut n = 0;
    for (level, write_back) in levels.into_iter().enumerate() {
        m = orig.clone();
        n = mutate(&mut m, seed, every, write_back);
        gyre_ir::verifier::verify_module(&m).map_err(|e| format!("mutated input: {e:?}"))?;
        if level == 2 || runs(&m, &contract, seed) {
            totals.write_back_level[level] += 1;
            break;
        }
    }
    totals.mutations += u64::from(n);
    let pipeline = if seed.is_multiple_of(2) {
        PASS
    } else {
        "sroa,simplify,early-cse"
    };
    let mut a = m.clone();
    let stats = apply(pipeline, &mut a).map_err(|e| format!("{pipeline}: {e}"))?;
    totals.loads_cse += stats.get(PASS, "NumLoadsCSE");
    totals.forwarded += stats.get(PASS, "NumForwarded");
    totals.pure_cse += stats.get(PASS, "NumPureCSE");
    common::same_behaviour_on_random_inputs(&m, &a, &contract, seed, pipeline)?;
    // Idempotent: what is left is not redundant by the same rules.
    let mut b = a.clone();
    let again = apply(PASS, &mut b)?;
    let more = again.get(PASS, "NumLoadsCSE")
        + again.get(PASS, "NumForwarded")
        + again.get(PASS, "NumPureCSE");
    if more != 0 {
        return Err(format!("a second early-cse replaced {more} more values"));
    }
    totals.cases += 1;
    Ok(())
}

#[test]
fn early_cse_on_generated_kernels() {
    let per_profile = common::cases(150);
    let mut totals = Totals::default();
    common::sweep(
        &["default", "reducible", "switchy"],
        per_profile,
        &mut totals,
        check_case,
    );
    assert!(
        totals.loads_cse > 100
            && totals.forwarded > 100
            && totals.pure_cse > 100
            && totals.write_back_level[2] * 2 < totals.cases,
        "the mutations must give early-cse work: {totals:?}"
    );
}
