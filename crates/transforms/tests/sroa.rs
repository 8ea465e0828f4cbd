//! Property tests of `sroa` over generated UB-free kernels (nests, `continue` latches,
//! `break`s, early returns, switches, two-entry cycles, barriers, calls), with the local
//! slot of every function indexed by constants (`const_slot_index`, promotable) or by
//! variables (the generator's default, kept).
//!
//! For every generated module, after `sroa` alone, after `inline,sroa` and after `-O`,
//! under `--verify-each` (the verifier; every analysis `sroa` claims to preserve equal to a
//! fresh one):
//! - the interpreter shows the same behaviour as the input, on random inputs that follow
//!   the kernel's contract;
//! - with constant indices every slot is promoted but those with a volatile load (with
//!   variable ones, only slots whose accesses all happen to use constants are);
//! - idempotence: after the pipelines that end with it, a second `sroa` changes nothing.

mod common;

use gyre_ir::generate::{generate_kernel_module, GenOptions, SplitMix64};
use gyre_ir::{write_module, Module, Opcode};
use gyre_transforms::{Knobs, Options, PassManager, Report, DEFAULT_PIPELINE};

fn print(m: &Module) -> String {
    let mut s = String::new();
    write_module(&mut s, m).expect("writing to a String");
    s
}

fn apply(pipeline: &str, m: &mut Module) -> Result<Report, String> {
    let options = Options {
        verify_each: true,
        ..Options::default()
    };
    let mut pm = PassManager::from_pipeline(pipeline, Knobs::default(), options)?;
    pm.run_module(m).map_err(|e| e.to_string())
}

fn slot_addrs(m: &Module) -> usize {
    m.functions
        .values()
        .map(|f| {
            f.layout
                .blocks()
                .flat_map(|b| f.layout.block_insts(b))
                .filter(|&i| f.dfg.inst(i).opcode() == Opcode::SlotAddr)
                .count()
        })
        .sum()
}

#[derive(Default, Debug)]
struct Totals {
    cases: u64,
    promoted: u64,
    kept: u64,
    loads: u64,
    params: u64,
    volatile: u64,
}

fn check_case(opts: &GenOptions, seed: u64, totals: &mut Totals) -> Result<(), String> {
    let constant = !seed.is_multiple_of(4);
    let opts = GenOptions {
        const_slot_index: constant,
        ..opts.clone()
    };
    let (m, contract) = generate_kernel_module(&opts, &mut SplitMix64::new(seed));
    let pipeline = match seed % 3 {
        0 => "sroa",
        1 => "inline,sroa",
        _ => DEFAULT_PIPELINE,
    };
    let mut a = m.clone();
    let r = apply(pipeline, &mut a)?;
    totals.promoted += r.stats.get("sroa", "NumSlotsPromoted");
    totals.kept += r.stats.get("sroa", "NumSlotsKept");
    totals.loads += r.stats.get("sroa", "NumLoadsRemoved");
    totals.params += r.stats.get("sroa", "NumBlockParams");
    // With constant indices the only reason to keep a slot is a volatile load (the
    // generator makes one load in eight volatile).
    let why: Vec<String> = r
        .remarks
        .iter()
        .filter(|m| m.pass == "sroa")
        .map(|m| format!("{}: {}", m.kind, m.message))
        .collect();
    let left = slot_addrs(&a);
    if constant && (why.iter().any(|w| !w.starts_with("Volatile")) || (left > 0 && why.is_empty()))
    {
        return Err(format!(
            "{pipeline}: {left} slot_addr left with constant indices: {why:?}"
        ));
    }
    totals.volatile += why.len() as u64;
    common::same_behaviour_on_random_inputs(&m, &a, &contract, seed, pipeline)?;
    // After `-O`, `simplify` may fold a variable index into a constant: only the
    // pipelines that end with sroa must be idempotent.
    if pipeline != DEFAULT_PIPELINE {
        let mut b = a.clone();
        let r2 = apply("sroa", &mut b)?;
        if r2.stats.get("sroa", "NumSlotsPromoted") != 0 || print(&a) != print(&b) {
            return Err(format!("{pipeline}: a second sroa changed the module"));
        }
    }
    totals.cases += 1;
    Ok(())
}

#[test]
fn sroa_on_generated_kernels() {
    let per_profile = common::cases(120);
    let mut totals = Totals::default();
    common::sweep(
        &["default", "reducible", "switchy"],
        per_profile,
        &mut totals,
        check_case,
    );
    assert!(
        totals.promoted > 100 && totals.kept > 10 && totals.loads > 100 && totals.params > 10,
        "the generator must exercise sroa: {totals:?}"
    );
}
