//! The textbook uniformity analysis: a plain fixed point over all rules, with join
//! points found from their definition (two vertex-disjoint paths from different
//! out-edges of the branch, by max-flow) rather than by label propagation. Slow
//! (polynomial, no early stop); for tests only.
//!
//! Paths are taken in LLVM's modified CFG for the branch `b`: a loop header's successors
//! are the loop's exits (the next iteration of a loop around `b` is another dynamic
//! instance; a loop not around `b` is entered by one path only), and paths stop at `b`.
//! Irreducible cycles get the same conservative treatment as the fast analysis, so the
//! two are comparable on reducible functions; on irreducible ones only soundness (the
//! interpreter) is the judge.

use super::{source_kind, SourceKind};
use crate::cfg::Cfg;
use crate::loops::{Loop, LoopInfo};
use crate::reference::RefPostDom;
use cranelift_entity::EntityRef;
use gyre_ir::{Block, FuncKind, Function, Opcode, Value, ValueDef};

/// What the reference analysis found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RefUniformity {
    /// Divergent values, by value index.
    pub divergent_values: Vec<bool>,
    /// Blocks whose `brif`/`br_table` is divergent, by block index.
    pub divergent_branches: Vec<bool>,
    /// Blocks that may run under divergent control, by block index.
    pub divergent_control: Vec<bool>,
    /// Loops with a divergent exit, by loop index.
    pub divergent_loops: Vec<bool>,
}

/// Run the reference analysis.
pub fn reference_uniformity(func: &Function, cfg: &Cfg, li: &LoopInfo) -> RefUniformity {
    let nv = func.dfg.num_values();
    let nb = cfg.num_block_slots().max(func.dfg.num_blocks());
    let mut r = RefUniformity {
        divergent_values: vec![false; nv],
        divergent_branches: vec![false; nb],
        divergent_control: vec![false; nb],
        divergent_loops: vec![false; li.num_loops()],
    };
    let mut div_cycles = vec![false; li.irreducible_cycles().len()];
    let always_uniform = |v: Value| match func.dfg.value_def(v) {
        ValueDef::Result(i) => source_kind(func, i) == SourceKind::AlwaysUniform,
        _ => false,
    };
    let exits_of = |l: Loop| -> Vec<Block> {
        let mut e: Vec<Block> = Vec::new();
        for x in li.blocks(l) {
            for &s in cfg.succs(x) {
                if !li.contains(l, s) && !e.contains(&s) {
                    e.push(s);
                }
            }
        }
        e
    };
    let mark = |r: &mut RefUniformity, v: Value| -> bool {
        if r.divergent_values[v.index()] || always_uniform(v) {
            false
        } else {
            r.divergent_values[v.index()] = true;
            true
        }
    };
    if func.kind == FuncKind::Device {
        if let Some(e) = func.entry_block() {
            for &p in func.dfg.block_params(e) {
                mark(&mut r, p);
            }
        }
    }
    for b in func.layout.blocks() {
        for i in func.layout.block_insts(b) {
            if source_kind(func, i) == SourceKind::Divergent {
                if let Some(v) = func.dfg.inst_result(i) {
                    mark(&mut r, v);
                }
            }
        }
    }
    let def_block = |v: Value| match func.dfg.value_def(v) {
        ValueDef::Result(i) => func.layout.inst_block(i),
        ValueDef::Param(b, _) => Some(b),
        ValueDef::Detached => None,
    };
    loop {
        let mut changed = false;
        // Data dependence and temporal divergence, instruction by instruction.
        for b in func.layout.blocks() {
            for i in func.layout.block_insts(b) {
                let temporal = |v: Value| {
                    !always_uniform(v)
                        && def_block(v).is_some_and(|d| {
                            li.loops().any(|l| {
                                r.divergent_loops[l.index()]
                                    && li.contains(l, d)
                                    && !li.contains(l, b)
                            })
                        })
                };
                let bad = func
                    .dfg
                    .inst_args(i)
                    .iter()
                    .any(|&v| r.divergent_values[v.index()] || temporal(v));
                let op = func.dfg.inst(i).opcode();
                if bad {
                    if matches!(op, Opcode::Brif | Opcode::BrTable) {
                        if !r.divergent_branches[b.index()] {
                            r.divergent_branches[b.index()] = true;
                            changed = true;
                        }
                    } else if let Some(v) = func.dfg.inst_result(i) {
                        changed |= mark(&mut r, v);
                    }
                }
                // Branch arguments into parameters.
                let mut to_mark = Vec::new();
                func.dfg.for_each_dest(i, |bc| {
                    let params = func.dfg.block_params(bc.block);
                    for (k, &a) in func.dfg.block_call_args(bc).iter().enumerate() {
                        let Some(&p) = params.get(k) else { continue };
                        let t = !always_uniform(a)
                            && def_block(a).is_some_and(|d| {
                                li.loops().any(|l| {
                                    r.divergent_loops[l.index()]
                                        && li.contains(l, d)
                                        && (!li.contains(l, b) || !li.contains(l, bc.block))
                                })
                            });
                        if r.divergent_values[a.index()] || t {
                            to_mark.push(p);
                        }
                    }
                });
                for p in to_mark {
                    changed |= mark(&mut r, p);
                }
            }
        }
        // Sync dependence of every divergent branch.
        for b in func.layout.blocks() {
            if !r.divergent_branches[b.index()] || !cfg.is_reachable(b) {
                continue;
            }
            let sync = sync_dependence(func, cfg, li, b, &exits_of);
            for &j in &sync.joins {
                for (k, &p) in func.dfg.block_params(j).iter().enumerate() {
                    let mut args = Vec::new();
                    for x in func.layout.blocks() {
                        if let Some(t) = func.terminator(x) {
                            func.dfg.for_each_dest(t, |bc| {
                                if bc.block == j {
                                    if let Some(&a) = func.dfg.block_call_args(bc).get(k) {
                                        args.push(a);
                                    }
                                }
                            });
                        }
                    }
                    if args
                        .windows(2)
                        .any(|w| !super::same_value(func, w[0], w[1]))
                    {
                        changed |= mark(&mut r, p);
                    }
                }
            }
            for &e in &sync.cycle_exits {
                let mut l = li.innermost_loop(b);
                let mut outer = None;
                while let Some(x) = l {
                    if li.contains(x, e) {
                        break;
                    }
                    outer = Some(x);
                    l = li.parent(x);
                }
                if let Some(o) = outer {
                    if !r.divergent_loops[o.index()] {
                        r.divergent_loops[o.index()] = true;
                        changed = true;
                    }
                }
            }
            for &c in &sync.touched {
                div_cycles[c] = true;
                for &y in &li.irreducible_cycles()[c].blocks {
                    for &p in func.dfg.block_params(y) {
                        changed |= mark(&mut r, p);
                    }
                    for i in func.layout.block_insts(y) {
                        if let Some(v) = func.dfg.inst_result(i) {
                            changed |= mark(&mut r, v);
                        }
                    }
                }
            }
        }
        if !changed {
            break;
        }
    }
    // Divergent control: reachable from a divergent branch before its reconvergence.
    let pdom = RefPostDom::new(cfg);
    if func.kind == FuncKind::Device {
        for b in func.layout.blocks() {
            r.divergent_control[b.index()] = true;
        }
    }
    for b in func.layout.blocks() {
        if !r.divergent_branches[b.index()] || !cfg.is_reachable(b) {
            continue;
        }
        let stop = pdom.ipdom(b);
        let mut seen = vec![false; nb];
        let mut stack: Vec<Block> = cfg.succs(b).to_vec();
        while let Some(y) = stack.pop() {
            if Some(y) == stop || seen[y.index()] {
                continue;
            }
            seen[y.index()] = true;
            r.divergent_control[y.index()] = true;
            stack.extend_from_slice(cfg.succs(y));
        }
    }
    for (c, &d) in div_cycles.iter().enumerate() {
        if d {
            for &y in &li.irreducible_cycles()[c].blocks {
                r.divergent_control[y.index()] = true;
            }
        }
    }
    r
}

struct Sync {
    joins: Vec<Block>,
    cycle_exits: Vec<Block>,
    touched: Vec<usize>,
}

/// Join points, divergent loop exits and touched irreducible cycles of the divergent
/// branch ending `b`, from the definitions.
fn sync_dependence(
    func: &Function,
    cfg: &Cfg,
    li: &LoopInfo,
    b: Block,
    exits_of: &dyn Fn(Loop) -> Vec<Block>,
) -> Sync {
    let _ = func;
    let nb = cfg.num_block_slots();
    let header_loop = |x: Block| li.innermost_loop(x).filter(|&l| li.header(l) == x);
    // The modified CFG.
    let succ = |x: Block| -> Vec<Block> {
        if let Some(l) = header_loop(x) {
            exits_of(l)
        } else if x == b {
            Vec::new()
        } else {
            cfg.succs(x).to_vec()
        }
    };
    let bsuccs = cfg.succs(b).to_vec();
    let mut joins: Vec<Block> = Vec::new();
    for (i, &s) in bsuccs.iter().enumerate() {
        if bsuccs[..i].contains(&s) && !joins.contains(&s) {
            joins.push(s);
        }
    }
    // Blocks reachable from the out-edges.
    let reach = crate::reference::reach(nb, &bsuccs, succ);
    let cycle_of = |x: Block| {
        li.irreducible_cycles()
            .iter()
            .position(|c| c.blocks.contains(&x))
    };
    let mut touched: Vec<usize> = Vec::new();
    for x in (0..nb).map(Block::new) {
        if reach[x.index()] || x == b {
            if let Some(c) = cycle_of(x) {
                if !touched.contains(&c) {
                    touched.push(c);
                }
            }
        }
    }
    // Touched cycles: their blocks and exits are joins.
    for &c in &touched {
        for &y in &li.irreducible_cycles()[c].blocks {
            if cfg.is_reachable(y) && !joins.contains(&y) {
                joins.push(y);
            }
            for &e in cfg.succs(y) {
                if cycle_of(e) != Some(c) && !joins.contains(&e) {
                    joins.push(e);
                }
            }
        }
    }
    // Iterated join set: add every block reached by two vertex-disjoint paths from
    // different definitions (out-edges of `b`, joins found so far) until none is new.
    loop {
        let mut added = false;
        for z in (0..nb).map(Block::new) {
            if !reach[z.index()] || joins.contains(&z) {
                continue;
            }
            if two_disjoint_paths(nb, &bsuccs, &joins, z, &succ) {
                joins.push(z);
                added = true;
            }
        }
        if !added {
            break;
        }
    }
    let mut cycle_exits = Vec::new();
    if let Some(inner) = li.innermost_loop(b) {
        for &s in &bsuccs {
            if !li.contains(inner, s) {
                cycle_exits.push(s);
            }
        }
    }
    let mut l = li.innermost_loop(b);
    while let Some(x) = l {
        if reach[li.header(x).index()] {
            for e in exits_of(x) {
                if joins.contains(&e) {
                    cycle_exits.push(e);
                }
            }
        }
        l = li.parent(x);
    }
    Sync {
        joins,
        cycle_exits,
        touched,
    }
}

/// Are there two vertex-disjoint paths into `z` from different definitions? Out-edge
/// definitions start at their target; join definitions at their successors. Max-flow
/// with unit vertex capacities (two augmenting paths, BFS on the residual graph).
fn two_disjoint_paths(
    nb: usize,
    edge_targets: &[Block],
    joins: &[Block],
    z: Block,
    succ: &dyn Fn(Block) -> Vec<Block>,
) -> bool {
    // Nodes: 2v = v_in, 2v+1 = v_out, source = 2nb, sink = z_in.
    let src = 2 * nb;
    let n = 2 * nb + 1;
    let mut cap: Vec<rustc_hash::FxHashMap<usize, i32>> = vec![Default::default(); n];
    let add = |cap: &mut Vec<rustc_hash::FxHashMap<usize, i32>>, a: usize, b: usize| {
        *cap[a].entry(b).or_insert(0) += 1;
        cap[b].entry(a).or_insert(0);
    };
    for v in 0..nb {
        if v != z.index() {
            add(&mut cap, 2 * v, 2 * v + 1);
        }
        for s in succ(Block::new(v)) {
            add(&mut cap, 2 * v + 1, 2 * s.index());
        }
    }
    for &t in edge_targets {
        // A join definition at the same block takes over (its paths start after it).
        if !joins.contains(&t) {
            add(&mut cap, src, 2 * t.index());
        }
    }
    for &j in joins {
        // A join's paths leave it; they share its unit capacity with paths through it
        // (except for `z` itself, the sink, whose paths are cycles back into it).
        if j == z {
            add(&mut cap, src, 2 * j.index() + 1);
        } else {
            add(&mut cap, src, 2 * j.index());
        }
    }
    let sink = 2 * z.index();
    let mut flow = 0;
    while flow < 2 {
        let mut prev = vec![usize::MAX; n];
        prev[src] = src;
        let mut queue = std::collections::VecDeque::from([src]);
        while let Some(x) = queue.pop_front() {
            if x == sink {
                break;
            }
            let mut next: Vec<usize> = cap[x]
                .iter()
                .filter(|&(_, &c)| c > 0)
                .map(|(&y, _)| y)
                .collect();
            next.sort_unstable();
            for y in next {
                if prev[y] == usize::MAX {
                    prev[y] = x;
                    queue.push_back(y);
                }
            }
        }
        if prev[sink] == usize::MAX {
            break;
        }
        let mut y = sink;
        while y != src {
            let x = prev[y];
            *cap[x].get_mut(&y).expect("residual edge") -= 1;
            *cap[y].get_mut(&x).expect("reverse edge") += 1;
            y = x;
        }
        flow += 1;
    }
    flow >= 2
}
