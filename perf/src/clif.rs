//! The Cranelift side: one Cranelift block per shape block, and the checks that Gyre and
//! Cranelift compute the same thing before anything is timed.

use cranelift_codegen::cursor::{Cursor, FuncCursor};
use cranelift_codegen::dominator_tree::DominatorTree;
use cranelift_codegen::flowgraph::ControlFlowGraph;
use cranelift_codegen::ir::{
    types, AbiParam, Block, BlockArg, Function, InstBuilder, JumpTableData, Signature, UserFuncName,
};
use cranelift_codegen::isa::CallConv;
use cranelift_codegen::loop_analysis::LoopAnalysis;
use gyre_analysis::cfggen::CfgShape;
use gyre_analysis::{Cfg, DomTree, LoopInfo};
use gyre_ir::EntityRef;

/// The targets of each block in branch order, as CSR: block `b`'s targets are
/// `targets[start[b]..start[b + 1]]` (a stable counting sort of the edge list).
pub fn successors(shape: &CfgShape) -> (Vec<u32>, Vec<u32>) {
    let n = shape.num_blocks as usize;
    let mut start = vec![0u32; n + 1];
    for &(f, _) in &shape.edges {
        start[f as usize + 1] += 1;
    }
    for i in 0..n {
        start[i + 1] += start[i];
    }
    let mut fill = start.clone();
    let mut targets = vec![0u32; shape.edges.len()];
    for &(f, t) in &shape.edges {
        targets[fill[f as usize] as usize] = t;
        fill[f as usize] += 1;
    }
    (start, targets)
}

/// `shape` itself if no edge enters its entry block, else `shape` behind a new entry
/// block 0 that jumps to the old entry (now block 1): Cranelift's verifier forbids branches
/// to the entry block (and LLVM's forbids predecessors of it), so all three compilers get
/// this shape.
pub fn detach_entry(shape: CfgShape) -> CfgShape {
    if shape.edges.iter().all(|&(_, t)| t != 0) {
        return shape;
    }
    let mut edges = Vec::with_capacity(shape.edges.len() + 1);
    edges.push((0, 1));
    edges.extend(shape.edges.iter().map(|&(f, t)| (f + 1, t + 1)));
    CfgShape {
        num_blocks: shape.num_blocks + 1,
        edges,
    }
}

/// A Cranelift function for `shape`: block `i` is `block{i}`, the entry takes an `i32`
/// that every `brif` tests and every `br_table` switches on (and that edges back into the
/// entry pass along). 0 successors: `return`; 1: `jump`; 2: `brif`; 3 or more:
/// `br_table` whose default is the first target and whose entries are the others.
pub fn build(shape: &CfgShape) -> Function {
    let mut sig = Signature::new(CallConv::SystemV);
    sig.params.push(AbiParam::new(types::I32));
    let mut func = Function::with_name_signature(UserFuncName::default(), sig);
    let blocks: Vec<Block> = (0..shape.num_blocks)
        .map(|_| func.dfg.make_block())
        .collect();
    let x = func.dfg.append_block_param(blocks[0], types::I32);
    for &b in &blocks {
        func.layout.append_block(b);
    }
    let no_args: [BlockArg; 0] = [];
    let entry_args = [BlockArg::Value(x)];
    let args = |t: u32| -> &[BlockArg] {
        if t == 0 {
            &entry_args
        } else {
            &no_args
        }
    };
    let (start, targets) = successors(shape);
    for (i, &b) in blocks.iter().enumerate() {
        let succs = &targets[start[i] as usize..start[i + 1] as usize];
        let mut pos = FuncCursor::new(&mut func).at_bottom(b);
        match *succs {
            [] => {
                pos.ins().return_(&[]);
            }
            [t] => {
                pos.ins().jump(blocks[t as usize], args(t));
            }
            [t, e] => {
                pos.ins()
                    .brif(x, blocks[t as usize], args(t), blocks[e as usize], args(e));
            }
            [d, ref rest @ ..] => {
                let default = pos.func.dfg.block_call(blocks[d as usize], args(d));
                let table: Vec<_> = rest
                    .iter()
                    .map(|&t| pos.func.dfg.block_call(blocks[t as usize], args(t)))
                    .collect();
                let jt = pos
                    .func
                    .create_jump_table(JumpTableData::new(default, &table));
                pos.ins().br_table(x, jt);
            }
        }
    }
    func
}

/// Check that the Cranelift function's branches name exactly the shape's targets (as a
/// multiset, repeats included) and that its `ControlFlowGraph` holds the same edges.
/// Cranelift's CFG keeps successors as a set and predecessors per branch instruction, so
/// there the comparison is with the distinct targets.
pub fn check_cfg(shape: &CfgShape, func: &Function, cfg: &ControlFlowGraph) -> Result<(), String> {
    let (start, targets) = successors(shape);
    let mut distinct_edges = 0usize;
    let mut preds = 0usize;
    for i in 0..shape.num_blocks as usize {
        let b = Block::new(i);
        let mut want: Vec<u32> = targets[start[i] as usize..start[i + 1] as usize].to_vec();
        want.sort_unstable();
        let term = func
            .layout
            .last_inst(b)
            .ok_or_else(|| format!("clif block{i} is empty"))?;
        let mut got: Vec<u32> = func.dfg.insts[term]
            .branch_destination(&func.dfg.jump_tables, &func.dfg.exception_tables)
            .iter()
            .map(|c| c.block(&func.dfg.value_lists).as_u32())
            .collect();
        got.sort_unstable();
        if got != want {
            return Err(format!(
                "block{i}: branch targets {got:?}, shape says {want:?}"
            ));
        }
        want.dedup();
        let mut cfg_succs: Vec<u32> = cfg.succ_iter(b).map(|s| s.as_u32()).collect();
        cfg_succs.sort_unstable();
        if cfg_succs != want {
            return Err(format!(
                "block{i}: Cranelift CFG successors {cfg_succs:?}, distinct shape targets {want:?}"
            ));
        }
        distinct_edges += want.len();
        preds += cfg.pred_iter(b).count();
    }
    if preds != distinct_edges {
        return Err(format!(
            "Cranelift CFG has {preds} predecessor entries for {distinct_edges} distinct edges"
        ));
    }
    Ok(())
}

/// Check that Gyre's `Cfg` lists the shape's targets in branch order, repeats included.
pub fn check_gyre_cfg(shape: &CfgShape, cfg: &Cfg) -> Result<(), String> {
    let (start, targets) = successors(shape);
    for i in 0..shape.num_blocks as usize {
        let want = &targets[start[i] as usize..start[i + 1] as usize];
        let got: Vec<u32> = cfg
            .succs(gyre_ir::Block::new(i))
            .iter()
            .map(|s| s.index() as u32)
            .collect();
        if got != want {
            return Err(format!(
                "block{i}: Gyre CFG successors {got:?}, shape {want:?}"
            ));
        }
    }
    Ok(())
}

/// Check that both compilers agree: the same immediate dominator for every block (by
/// index), the same number of loops, the same headers, and the same parent loop (by its
/// header) for every loop.
pub fn check_agreement(
    num_blocks: u32,
    gdt: &DomTree,
    gli: &LoopInfo,
    cdt: &DominatorTree,
    cla: &LoopAnalysis,
) -> Result<(), String> {
    for i in 0..num_blocks as usize {
        let g = gdt.idom(gyre_ir::Block::new(i)).map(|b| b.index());
        let c = cdt.idom(Block::new(i)).map(|b| b.index());
        if g != c {
            return Err(format!("block{i}: Gyre idom {g:?}, Cranelift idom {c:?}"));
        }
    }
    let (g_loops, c_loops) = (gli.num_loops(), cla.loops().len());
    if g_loops != c_loops {
        return Err(format!("Gyre finds {g_loops} loops, Cranelift {c_loops}"));
    }
    let mut g: Vec<(usize, Option<usize>)> = gli
        .loops()
        .map(|l| {
            let parent = gli.parent(l).map(|p| gli.header(p).index());
            (gli.header(l).index(), parent)
        })
        .collect();
    let mut c: Vec<(usize, Option<usize>)> = cla
        .loops()
        .map(|l| {
            let parent = cla.loop_parent(l).map(|p| cla.loop_header(p).index());
            (cla.loop_header(l).index(), parent)
        })
        .collect();
    g.sort_unstable();
    c.sort_unstable();
    if let Some((a, b)) = g.iter().zip(&c).find(|(a, b)| a != b) {
        return Err(format!(
            "loop headers/parents differ: Gyre (header, parent header) {a:?}, Cranelift {b:?}"
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use gyre_analysis::cfggen;

    fn analyses(shape: &CfgShape) -> Result<(), String> {
        let func = build(shape);
        let cfg = ControlFlowGraph::with_function(&func);
        check_cfg(shape, &func, &cfg)?;
        let dt = DominatorTree::with_function(&func, &cfg);
        let mut la = LoopAnalysis::new();
        la.compute(&func, &cfg, &dt);
        let gf = shape.to_function();
        let gcfg = Cfg::with_function(&gf).expect("valid function");
        check_gyre_cfg(shape, &gcfg)?;
        let gdt = DomTree::with_function(&gf, &gcfg);
        let gli = LoopInfo::with_function(&gf, &gcfg, &gdt);
        check_agreement(shape.num_blocks, &gdt, &gli, &dt, &la)
    }

    #[test]
    fn detach_entry_only_when_needed() {
        let s = cfggen::exit_ladder(10);
        assert_eq!(detach_entry(s.clone()), s);
        let r = cfggen::random_reducible(300, 0x5eed);
        assert!(
            r.edges.iter().any(|&(_, t)| t == 0),
            "the test needs an entry back edge"
        );
        let d = detach_entry(r.clone());
        assert_eq!(d.num_blocks, r.num_blocks + 1);
        assert!(d.edges.iter().all(|&(_, t)| t != 0));
        assert_eq!(d.edges.len(), r.edges.len() + 1);
    }

    #[test]
    fn families_agree_and_verify() {
        for shape in [
            cfggen::loop_nest_sequence(200),
            cfggen::deep_nest(50),
            detach_entry(cfggen::random_reducible(300, 0x5eed)),
            cfggen::exit_ladder(100),
        ] {
            analyses(&shape).expect("Gyre and Cranelift agree");
            let func = build(&shape);
            let flags =
                cranelift_codegen::settings::Flags::new(cranelift_codegen::settings::builder());
            cranelift_codegen::verify_function(&func, &flags).expect("valid clif");
        }
    }

    #[test]
    fn switch_with_repeats_and_entry_back_edge() {
        // block0 -> {1, 1, 2, 0}: a br_table with a repeated target and an entry loop.
        let shape = CfgShape {
            num_blocks: 3,
            edges: vec![(0, 1), (0, 1), (0, 2), (0, 0), (1, 2)],
        };
        analyses(&shape).expect("agree");
    }

    #[test]
    fn a_wrong_shape_is_caught() {
        let shape = cfggen::loop_nest_sequence(20);
        let func = build(&shape);
        let cfg = ControlFlowGraph::with_function(&func);
        let mut other = shape.clone();
        other.edges.pop();
        other.edges.push((1, 3));
        assert!(check_cfg(&other, &func, &cfg).is_err());
    }
}
