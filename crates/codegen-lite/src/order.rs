//! Block order: reverse post-order refined by the loop forest ("loop-aware RPO").
//!
//! Every level of the loop forest (the function itself, then each loop) owns a list of
//! items in RPO: its own blocks and its child loops, a child loop standing at its
//! header's position. Emitting the function's list and expanding each loop item in place
//! lays every loop body out contiguously, header first. In a reducible CFG every
//! forward edge still goes forward (an exit edge's target comes after the loop's header
//! in RPO, so after the whole loop), and the latch of a single-latch loop — which every
//! block of the loop reaches — is the loop's last block, with the exits after it.
//!
//! Unreachable blocks are left out (they never run). O(blocks), explicit stack.

use cranelift_entity::EntityRef;
use gyre_analysis::{Cfg, Loop, LoopInfo};
use gyre_ir::Block;

#[derive(Copy, Clone)]
enum Item {
    Block(Block),
    Loop(Loop),
}

/// The emission order of the reachable blocks.
pub(crate) fn block_order(cfg: &Cfg, li: &LoopInfo) -> Vec<Block> {
    let nl = li.num_loops();
    // Items per level: index 0 is the function, 1 + loop index a loop.
    let mut items: Vec<Vec<Item>> = vec![Vec::new(); nl + 1];
    let level = |l: Option<Loop>| l.map_or(0, |l| l.index() + 1);
    for &b in cfg.rpo() {
        let l = li.innermost_loop(b);
        if let Some(l) = l {
            if li.header(l) == b {
                items[level(li.parent(l))].push(Item::Loop(l));
            }
        }
        items[level(l)].push(Item::Block(b));
    }
    let mut out = Vec::with_capacity(cfg.rpo().len());
    let mut stack: Vec<(usize, usize)> = vec![(0, 0)];
    while let Some(top) = stack.last_mut() {
        let (lvl, i) = *top;
        match items[lvl].get(i) {
            None => {
                stack.pop();
            }
            Some(&item) => {
                top.1 += 1;
                match item {
                    Item::Block(b) => out.push(b),
                    Item::Loop(l) => stack.push((l.index() + 1, 0)),
                }
            }
        }
    }
    out
}
