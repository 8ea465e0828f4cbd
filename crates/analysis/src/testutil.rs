//! Building real [`Function`]s from edge lists, for tests and benchmarks.
//!
//! Terminators follow the out-degree of each block: none -> `return`, one -> `jump`,
//! two -> `brif` on an `iconst.i1`, more -> `br_table` on an `iconst.i32` (the first target
//! is the default, the others are cases 0, 1, ...). Targets keep the order of the edge list,
//! so [`Cfg::succs`](crate::Cfg::succs) returns them in that order, repeats included.

use gyre_ir::{
    Block, BlockCall, FuncKind, Function, InstructionData, JumpTableData, Signature, Type,
    ValueList,
};

/// A function with blocks `block0..block{n-1}` in layout order (`block0` is the entry) and
/// the given edges `(from, to)`. Edges out of one block keep their relative order.
///
/// Panics if an edge names a block `>= num_blocks` (test input is trusted).
pub fn function_from_edges(num_blocks: usize, edges: &[(u32, u32)]) -> Function {
    // Group targets by source with a counting sort (stable), no per-block allocation.
    let mut start = vec![0u32; num_blocks + 1];
    for &(f, t) in edges {
        assert!(
            (f as usize) < num_blocks && (t as usize) < num_blocks,
            "edge {f}->{t} out of range"
        );
        start[f as usize + 1] += 1;
    }
    for i in 0..num_blocks {
        start[i + 1] += start[i];
    }
    let mut fill = start.clone();
    let mut targets = vec![0u32; edges.len()];
    for &(f, t) in edges {
        targets[fill[f as usize] as usize] = t;
        fill[f as usize] += 1;
    }
    let mut func = Function::new("test", FuncKind::Device, Signature::default());
    let blocks: Vec<Block> = (0..num_blocks).map(|_| func.append_new_block()).collect();
    for (i, &b) in blocks.iter().enumerate() {
        let succs = &targets[start[i] as usize..start[i + 1] as usize];
        let call = |func: &mut Function, t: u32| {
            BlockCall::new(blocks[t as usize], &[], &mut func.dfg.value_lists)
        };
        match succs.len() {
            0 => {
                func.append_inst(
                    b,
                    InstructionData::Return {
                        args: ValueList::new(),
                    },
                    None,
                );
            }
            1 => {
                let dest = call(&mut func, succs[0]);
                func.append_inst(b, InstructionData::Jump { dest }, None);
            }
            2 => {
                let (_, c) =
                    func.append_inst(b, InstructionData::IntConst { imm: 0 }, Some(Type::I1));
                let blocks = [call(&mut func, succs[0]), call(&mut func, succs[1])];
                let arg = c.expect("iconst has a result");
                func.append_inst(b, InstructionData::Brif { arg, blocks }, None);
            }
            _ => {
                let (_, v) =
                    func.append_inst(b, InstructionData::IntConst { imm: 0 }, Some(Type::I32));
                let default = call(&mut func, succs[0]);
                let cases = succs[1..]
                    .iter()
                    .enumerate()
                    .map(|(k, &t)| (k as i64, call(&mut func, t)))
                    .collect();
                let table = func.dfg.make_jump_table(JumpTableData::new(default, cases));
                let arg = v.expect("iconst has a result");
                func.append_inst(b, InstructionData::BrTable { arg, table }, None);
            }
        }
    }
    func
}
