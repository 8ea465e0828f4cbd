//! Property tests of `sink` over generated UB-free kernels (loops, memory, barriers,
//! shuffles, calls, divisions, irreducible cycles), under `--verify-each`:
//! - alone and after `sroa,simplify` (whose GVN and LICM place values early, so there is
//!   more to sink), and at the end of `-O`: the interpreter shows the same behaviour as
//!   the input on random inputs that follow the kernel's contract;
//! - where it may move: every instruction that moved went to a block its old block
//!   dominates, at no greater loop depth, into an irreducible cycle only through the
//!   block's only predecessor; loads only along edges into blocks with one predecessor,
//!   past nothing that may write memory; convergent and side-effecting instructions
//!   never move;
//! - idempotence: a second run moves nothing.

mod common;

use gyre_analysis::loops::LoopInfo;
use gyre_analysis::{Cfg, DomTree};
use gyre_ir::generate::{generate_kernel_module, GenOptions, SplitMix64};
use gyre_ir::{Block, Function, Inst, Module, Opcode};
use gyre_transforms::{Knobs, Options, PassManager, Report, DEFAULT_PIPELINE};

fn apply(pipeline: &str, m: &mut Module) -> Result<Report, String> {
    let options = Options {
        verify_each: true,
        ..Options::default()
    };
    let mut pm = PassManager::from_pipeline(pipeline, Knobs::default(), options)?;
    pm.run_module(m).map_err(|e| e.to_string())
}

#[derive(Default, Debug)]
struct Totals {
    cases: u64,
    sunk: u64,
    sunk_loads: u64,
    out_of_loops: u64,
}

/// The block of every laid-out instruction of `f`.
fn blocks_of(f: &Function) -> Vec<(Inst, Block)> {
    let mut out = Vec::new();
    for b in f.layout.blocks() {
        for i in f.layout.block_insts(b) {
            out.push((i, b));
        }
    }
    out
}

/// Check the moves from `before` to `after` (the same function after `sink`).
fn check_moves(before: &Function, after: &Function, totals: &mut Totals) -> Result<(), String> {
    let cfg = Cfg::with_function(before).map_err(|e| format!("{e:?}"))?;
    let dt = DomTree::with_function(before, &cfg);
    let li = LoopInfo::with_function(before, &cfg, &dt);
    for (i, b0) in blocks_of(before) {
        let b1 = after
            .layout
            .inst_block(i)
            .ok_or_else(|| format!("{i} was removed"))?;
        if b1 == b0 {
            continue;
        }
        let op = before.dfg.inst(i).opcode();
        if op.has_side_effects() || op.is_convergent() || op.is_terminator() {
            return Err(format!("{i} ({}) moved from {b0} to {b1}", op.name()));
        }
        if !dt.dominates(b0, b1) {
            return Err(format!(
                "{i} moved from {b0} to {b1}, which it does not dominate"
            ));
        }
        if li.loop_depth(b1) > li.loop_depth(b0) {
            return Err(format!("{i} moved from {b0} into a deeper loop at {b1}"));
        }
        totals.out_of_loops += u64::from(li.loop_depth(b1) < li.loop_depth(b0));
        // The moves went down the dominator tree from `b0` to `b1`, one block at a time.
        let single_pred = |c: Block| cfg.preds(c).iter().all(|&p| Some(p) == dt.idom(c));
        if li.in_irreducible_cycle(b1) && !single_pred(b1) {
            return Err(format!(
                "{i} moved from {b0} into an irreducible cycle at {b1}"
            ));
        }
        if op.reads_memory() {
            if op != Opcode::Load {
                return Err(format!("{i} ({}) moved from {b0} to {b1}", op.name()));
            }
            // Each step into a block whose only predecessor is its dominator, past no
            // instruction that may write memory: after the load in `b0`, in the blocks
            // between.
            let writes = |c: Block, after: Option<Inst>| {
                let mut seen = after.is_none();
                before.layout.block_insts(c).any(|j| {
                    let w = seen && before.dfg.inst(j).opcode().has_side_effects();
                    seen |= Some(j) == after;
                    w
                })
            };
            let mut c = b1;
            while c != b0 {
                if !single_pred(c) {
                    return Err(format!("{i} (load) moved from {b0} across a join to {b1}"));
                }
                c = dt.idom(c).expect("below b0");
                if (c == b0 && writes(c, Some(i))) || (c != b0 && writes(c, None)) {
                    return Err(format!("{i} (load) moved from {b0} to {b1} past a write"));
                }
            }
        }
    }
    Ok(())
}

fn check_case(opts: &GenOptions, seed: u64, totals: &mut Totals) -> Result<(), String> {
    let (m, contract) = generate_kernel_module(opts, &mut SplitMix64::new(seed));
    let pipeline = match seed % 3 {
        0 => "sink",
        1 => "sroa,simplify,sink",
        _ => DEFAULT_PIPELINE,
    };
    // What `sink` starts from.
    let mut pre = m.clone();
    if let Some(prefix) = pipeline.strip_suffix(",sink") {
        apply(prefix, &mut pre)?;
    }
    let mut a = pre.clone();
    let r = apply("sink", &mut a)?;
    totals.sunk += r.stats.get("sink", "NumSunk");
    totals.sunk_loads += r.stats.get("sink", "NumSunkLoads");
    for (id, f) in pre.functions.iter() {
        check_moves(f, &a.functions[id], totals).map_err(|e| format!("@{}: {e}", f.name))?;
    }
    common::same_behaviour_on_random_inputs(&m, &a, &contract, seed, pipeline)?;
    let mut b = a.clone();
    let again = apply("sink", &mut b)?.stats.get("sink", "NumSunk");
    if again != 0 {
        return Err(format!("{pipeline}: a second run moved {again} more"));
    }
    totals.cases += 1;
    Ok(())
}

#[test]
fn sink_on_generated_kernels() {
    let per_profile = common::cases(100);
    let mut totals = Totals::default();
    common::sweep(
        &["default", "loopy", "reducible", "switchy"],
        per_profile,
        &mut totals,
        check_case,
    );
    assert!(
        totals.sunk > 0 && totals.sunk_loads > 0 && totals.out_of_loops > 0,
        "the generator must exercise sink: {totals:?}"
    );
}
