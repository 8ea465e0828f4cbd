//! `verify`: the verifier accepts every generated module, never panics on a broken one
//! (random IR mutations: operands swapped for values defined elsewhere, dropped or extra
//! branch arguments, removed instructions and parameters, retargeted branches), and a
//! mutated module it accepts prints, parses back to the same text and can be analysed.

use crate::{Case, Features, Input, InputKind, Target};
use gyre_analysis::{Cfg, DomTree, LoopInfo, PostDomTree, Uniformity};
use gyre_ir::generate::{RandomSource, SplitMix64};
use gyre_ir::verifier::verify_module;
use gyre_ir::{Block, BlockCall, FuncId, Function, Inst, Module, Value, ValueDef};

/// The target.
pub const TARGET: Target = Target {
    name: "verify",
    doc: "the verifier: generated modules verify; mutated ones never panic it",
    kind: InputKind::Kernel,
    generate,
    check,
};

fn generate(seed: u64) -> Input {
    let mut rng = SplitMix64::new(seed ^ 0x7665_7269);
    let raw = rng.below(3) == 0;
    let mut case = Case::generate(seed, |o| o.ub_free = !raw);
    // Mutations are applied by the check (from this seed), so the stored module stays
    // parseable and shrinkable; 0 means none.
    let mutations = rng.below(4);
    case.meta
        .push(("mutations".to_string(), format!("{mutations}")));
    Input::Kernel(case)
}

fn check(input: &Input) -> Result<Features, String> {
    let case = input.kernel();
    let n: u64 = case
        .meta("mutations")
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    let mut m = case.module.clone();
    if n == 0 {
        verify_module(&m).map_err(|e| format!("a generated module does not verify: {e}"))?;
        return Ok(vec!["clean".to_string()]);
    }
    let mut rng = SplitMix64::new(case.seed ^ 0x6d75_7461);
    let mut applied = Vec::new();
    for _ in 0..n {
        if let Some(what) = mutate_module(&mut m, &mut rng) {
            applied.push(what);
        }
    }
    match verify_module(&m) {
        Err(e) => {
            let mut kinds: Vec<String> = e.0.iter().map(|e| format!("{:?}", e.kind)).collect();
            kinds.sort();
            kinds.dedup();
            Ok(kinds)
        }
        Ok(()) => {
            // Accepted: everything downstream must cope with it.
            let p1 = m.to_string();
            let m2 = gyre_ir::parse_module(&p1).map_err(|e| {
                format!(
                    "a verified mutated module ({}) does not parse back: {}",
                    applied.join(", "),
                    e.render("printed", &p1)
                )
            })?;
            if m2.to_string() != p1 {
                return Err("a verified mutated module prints differently after parsing".into());
            }
            for f in m.functions.values() {
                analyse(f).map_err(|e| format!("@{}: {e}", f.name))?;
            }
            Ok(vec!["mutated, verifies".to_string()])
        }
    }
}

/// The function-level analyses on a verified function.
fn analyse(f: &Function) -> Result<(), String> {
    let cfg = Cfg::with_function(f).map_err(|e| format!("Cfg of a verified function: {e}"))?;
    let dt = DomTree::with_function(f, &cfg);
    let pdt = PostDomTree::with_function(f, &cfg);
    let li = LoopInfo::with_function(f, &cfg, &dt);
    let _ = Uniformity::with_function(f, &cfg, &dt, &pdt, &li);
    Ok(())
}

/// All values of `f` defined in the layout, with their blocks.
fn live_values(f: &Function) -> Vec<Value> {
    let mut out = Vec::new();
    for b in f.layout.blocks() {
        out.extend_from_slice(f.dfg.block_params(b));
        for i in f.layout.block_insts(b) {
            out.extend(f.dfg.inst_result(i));
        }
    }
    out
}

/// One random mutation of one function; a description of what was done, if anything.
pub fn mutate_module(m: &mut Module, rng: &mut SplitMix64) -> Option<String> {
    let ids: Vec<FuncId> = m.functions.keys().collect();
    let id = ids[rng.below(ids.len() as u64) as usize];
    let f = &mut m.functions[id];
    let blocks: Vec<Block> = f.layout.blocks().collect();
    let insts: Vec<Inst> = blocks
        .iter()
        .flat_map(|&b| f.layout.block_insts(b).collect::<Vec<_>>())
        .collect();
    if insts.is_empty() {
        return None;
    }
    let inst = insts[rng.below(insts.len() as u64) as usize];
    let values = live_values(f);
    if values.is_empty() {
        return None;
    }
    match rng.below(6) {
        0 => {
            // An operand replaced by a value of the same type defined anywhere.
            let args = f.dfg.inst_args(inst).to_vec();
            if args.is_empty() {
                return None;
            }
            let k = rng.below(args.len() as u64) as usize;
            let ty = f.dfg.value_type(args[k]);
            let same: Vec<Value> = values
                .iter()
                .copied()
                .filter(|&v| f.dfg.value_type(v) == ty)
                .collect();
            // Empty when the operand is itself a value an earlier mutation detached.
            let w = *same.get(rng.below(same.len() as u64) as usize)?;
            let mut j = 0;
            f.dfg.map_inst_values(inst, |v| {
                j += 1;
                if j - 1 == k {
                    w
                } else {
                    v
                }
            });
            Some("operand replaced".into())
        }
        1 => {
            // An operand replaced by a value of any type.
            let w = values[rng.below(values.len() as u64) as usize];
            let mut first = true;
            f.dfg
                .map_inst_values(inst, |v| if std::mem::take(&mut first) { w } else { v });
            Some("operand retyped".into())
        }
        2 => {
            // Drop or add a branch argument.
            let add = rng.below(2) == 0;
            let extra = values[rng.below(values.len() as u64) as usize];
            let mut done = false;
            f.dfg.for_each_dest_mut(inst, |bc, pool| {
                if done {
                    return;
                }
                let mut args: Vec<Value> = bc.args.as_slice(pool).to_vec();
                if add {
                    args.push(extra);
                } else if args.pop().is_none() {
                    return;
                }
                *bc = BlockCall::new(bc.block, &args, pool);
                done = true;
            });
            done.then(|| "branch arguments changed".into())
        }
        3 => {
            // Retarget a branch.
            let to = blocks[rng.below(blocks.len() as u64) as usize];
            let mut done = false;
            f.dfg.for_each_dest_mut(inst, |bc, _| {
                if !done {
                    bc.block = to;
                    done = true;
                }
            });
            done.then(|| "branch retargeted".into())
        }
        4 => {
            // Remove an instruction (its result, if any, keeps its uses).
            f.layout.remove_inst(inst);
            Some("instruction removed".into())
        }
        _ => {
            // Remove a block parameter.
            let b = blocks[rng.below(blocks.len() as u64) as usize];
            let n = f.dfg.block_params(b).len();
            if n == 0 {
                return None;
            }
            let k = rng.below(n as u64) as usize;
            let v = f.dfg.remove_block_param(b, k);
            debug_assert!(matches!(f.dfg.value_def(v), ValueDef::Detached));
            Some("block parameter removed".into())
        }
    }
}
