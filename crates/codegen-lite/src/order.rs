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
    let rpo = cfg.rpo();
    // Items per level (index 0 is the function, 1 + loop index a loop), in RPO, as
    // slices of one array (a counting sort by level: one vector per loop grew one push
    // at a time, most of this function's cost on loop-heavy kernels).
    let level = |l: Option<Loop>| l.map_or(0, |l| l.index() + 1);
    // The level of each block's item, and of its loop's item when it is a header.
    let levels = |b: Block| {
        let l = li.innermost_loop(b);
        let header = l
            .filter(|&l| li.header(l) == b)
            .map(|l| (level(li.parent(l)), l));
        (header, level(l))
    };
    let mut start = vec![0u32; nl + 2];
    for &b in rpo {
        let (header, own) = levels(b);
        if let Some((h, _)) = header {
            start[h + 1] += 1;
        }
        start[own + 1] += 1;
    }
    for i in 1..start.len() {
        start[i] += start[i - 1];
    }
    let mut next: Vec<u32> = start[..nl + 1].to_vec();
    let mut items = vec![Item::Block(Block::new(0)); start[nl + 1] as usize];
    let mut place = |lvl: usize, item: Item| {
        items[next[lvl] as usize] = item;
        next[lvl] += 1;
    };
    for &b in rpo {
        let (header, own) = levels(b);
        if let Some((h, l)) = header {
            place(h, Item::Loop(l));
        }
        place(own, Item::Block(b));
    }
    let mut out = Vec::with_capacity(rpo.len());
    // (level, next item index in `items`).
    let mut stack: Vec<(usize, u32)> = vec![(0, start[0])];
    while let Some(top) = stack.last_mut() {
        let (lvl, i) = *top;
        if i == start[lvl + 1] {
            stack.pop();
            continue;
        }
        top.1 += 1;
        match items[i as usize] {
            Item::Block(b) => out.push(b),
            Item::Loop(l) => stack.push((l.index() + 1, start[l.index() + 1])),
        }
    }
    out
}
