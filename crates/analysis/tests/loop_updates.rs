//! The loop forest's in-place updates (`LoopInfo::add_block`,
//! `LoopInfo::set_header_and_latch`, `LoopInfo::replace_nest`, `remove_block`, `merge_block`,
//! `set_latches`, `remove_loop`): membership, listing, header and latch as the queries
//! report them afterwards. (That they match a fresh computation after a real rotation is
//! checked by `--verify-each` in the transforms crate's loop-rotate tests.)

use gyre_analysis::{Cfg, DomTree, LoopInfo};
use gyre_ir::{Block, EntityRef};

/// Outer loop 1..5 (latch 5), inner loop 2..4 (header 2, body 3, latch 4 -> 2).
const NEST: &str = "kernel @k(i32) {
block0(v0: i32):
    jump block1
block1:
    v1 = iconst.i32 0
    v2 = icmp slt v1, v0
    brif v2, block6, block7
block6:
    jump block2
block2:
    v3 = icmp slt v0, v1
    brif v3, block3, block5
block3:
    jump block4
block4:
    jump block2
block5:
    jump block1
block7:
    return
}
";

fn forest(f: &gyre_ir::Function) -> LoopInfo {
    let cfg = Cfg::with_function(f).expect("valid");
    let dt = DomTree::with_function(f, &cfg);
    LoopInfo::with_function(f, &cfg, &dt)
}

#[test]
fn added_blocks_are_members_and_listed_by_every_loop_around_them() {
    let mut f = gyre_ir::parse_function(NEST).expect("parses");
    let mut li = forest(&f);
    let b = Block::new;
    let inner = li.innermost_loop(b(3)).expect("in a loop");
    let outer = li.parent(inner).expect("nested");
    assert_eq!(li.header(inner), b(2));
    // A new block in the outer loop (as a rotation's new preheader would be).
    let new = f.dfg.make_block();
    li.add_block(new, Some(outer));
    assert_eq!(li.innermost_loop(new), Some(outer));
    assert!(li.contains(outer, new) && !li.contains(inner, new));
    assert_eq!(li.loop_depth(new), 1);
    let listed: Vec<Block> = li.blocks(outer).collect();
    assert!(listed.contains(&new) && listed[0] == b(1), "{listed:?}");
    assert_eq!(li.num_blocks(outer), listed.len());
    assert!(!li.blocks(inner).any(|x| x == new));
    // A block in no loop.
    let out = f.dfg.make_block();
    li.add_block(out, None);
    assert_eq!(li.innermost_loop(out), None);
    assert!(!li.contains(outer, out));
}

#[test]
fn a_new_header_and_latch_match_the_rotated_nest() {
    let f = gyre_ir::parse_function(NEST).expect("parses");
    let mut li = forest(&f);
    let b = Block::new;
    let inner = li.innermost_loop(b(3)).expect("in a loop");
    // Rotation of the inner loop: block3 becomes the header, block2 the latch.
    assert!(li.set_header_and_latch(inner, b(3), b(2)));
    assert_eq!(li.header(inner), b(3));
    assert_eq!(li.latch(inner), Some(b(2)));
    assert_eq!(li.blocks(inner).next(), Some(b(3)));
    assert!(li.is_header(b(3)) && !li.is_header(b(2)));
    let mut members: Vec<Block> = li.blocks(inner).collect();
    members.sort();
    assert_eq!(members, [b(2), b(3), b(4)]);
    // Not a block of the loop: refused, nothing changed.
    assert!(!li.set_header_and_latch(inner, b(7), b(2)));
    assert_eq!(li.header(inner), b(3));
}

/// Two sequential nests: 1..5 around 2..4 (as in [`NEST`]), then 8..12 around 9..11.
const TWO_NESTS: &str = "kernel @k(i32) {
block0(v0: i32):
    jump block1
block1:
    v1 = iconst.i32 0
    v2 = icmp slt v1, v0
    brif v2, block6, block13
block6:
    jump block2
block2:
    v3 = icmp slt v0, v1
    brif v3, block3, block5
block3:
    jump block4
block4:
    jump block2
block5:
    jump block1
block13:
    jump block8
block8:
    v4 = icmp slt v1, v0
    brif v4, block14, block7
block14:
    jump block9
block9:
    v5 = icmp slt v0, v1
    brif v5, block10, block12
block10:
    jump block11
block11:
    jump block9
block12:
    jump block8
block7:
    return
}
";

/// Everything the queries report about the loops, by header: (header, parent header,
/// depth, sorted blocks, latches, single back edge, children headers), sorted; and the
/// innermost loop header of every block.
type Shape = (
    Vec<(
        Block,
        Option<Block>,
        u32,
        Vec<Block>,
        Vec<Block>,
        Option<Block>,
        Vec<Block>,
    )>,
    Vec<(Block, Option<Block>)>,
    Vec<Block>,
);

fn shape(f: &gyre_ir::Function, li: &LoopInfo) -> Shape {
    let mut loops = Vec::new();
    let mut seen = Vec::new();
    for b in f.layout.blocks() {
        if let Some(l) = li.innermost_loop(b) {
            let mut up = Some(l);
            while let Some(x) = up {
                if !seen.contains(&x) {
                    seen.push(x);
                }
                up = li.parent(x);
            }
        }
    }
    for l in seen {
        let mut blocks: Vec<Block> = li.blocks(l).collect();
        assert_eq!(blocks[0], li.header(l), "the header is listed first");
        blocks.sort();
        // Orders of latches and children follow each computation's search: compared as sets.
        let mut kids: Vec<Block> = li.children(l).iter().map(|&c| li.header(c)).collect();
        kids.sort();
        let mut latches = li.latches(l).to_vec();
        latches.sort();
        for &c in li.children(l) {
            assert_eq!(li.parent(c), Some(l));
            assert!(li.contains_loop(l, c));
        }
        loops.push((
            li.header(l),
            li.parent(l).map(|p| li.header(p)),
            li.depth(l),
            blocks,
            latches,
            li.latch(l),
            kids,
        ));
    }
    loops.sort();
    let inner = f
        .layout
        .blocks()
        .map(|b| (b, li.innermost_loop(b).map(|l| li.header(l))))
        .collect();
    let top = li.top_level().iter().map(|&l| li.header(l)).collect();
    (loops, inner, top)
}

/// Replace the forest's nest at `header` after `f` became `g` (same blocks), with the
/// region `blocks`, and compare with a fresh computation on `g`.
fn replaced(f_text: &str, g_text: &str, header: usize, region: &[usize]) -> bool {
    let f = gyre_ir::parse_function(f_text).expect("parses");
    let g = gyre_ir::parse_function(g_text).expect("parses");
    let mut li = forest(&f);
    let old = li.innermost_loop(Block::new(header)).expect("a loop");
    let old = {
        let mut o = old;
        while let Some(p) = li.parent(o) {
            o = p;
        }
        o
    };
    let cfg = Cfg::with_function(&g).expect("valid");
    let region: Vec<Block> = region.iter().map(|&i| Block::new(i)).collect();
    if !li.replace_nest(&cfg, old, &region) {
        // Refused: nothing changed.
        assert_eq!(shape(&f, &li), shape(&f, &forest(&f)));
        return false;
    }
    assert_eq!(shape(&g, &li), shape(&g, &forest(&g)));
    true
}

#[test]
fn a_replaced_nest_matches_a_fresh_forest() {
    let nest2 = [13, 8, 14, 9, 10, 11, 12];
    let nest2 = &nest2[1..];
    // Unchanged.
    assert!(replaced(TWO_NESTS, TWO_NESTS, 9, nest2));
    // A new innermost loop (block10 loops on itself).
    let g = TWO_NESTS.replace(
        "block10:\n    jump block11",
        "block10:\n    brif v5, block10, block11",
    );
    assert!(replaced(TWO_NESTS, &g, 9, nest2));
    // Two back edges into the inner header (block10 branches back too).
    let g = TWO_NESTS.replace(
        "block10:\n    jump block11",
        "block10:\n    brif v5, block9, block11",
    );
    assert!(replaced(TWO_NESTS, &g, 9, nest2));
    // The first nest, with a new loop: the second nest keeps its loops.
    let g = TWO_NESTS.replace(
        "block3:\n    jump block4",
        "block3:\n    brif v3, block3, block4",
    );
    assert!(replaced(TWO_NESTS, &g, 2, &[1, 6, 2, 3, 4, 5]));
    // The inner loop is gone (no back edge): fewer loops than ids, refused.
    let g = TWO_NESTS.replace("block11:\n    jump block9", "block11:\n    jump block12");
    assert!(!replaced(TWO_NESTS, &g, 9, nest2));
}

#[test]
fn a_replaced_nest_may_split_into_sibling_nests() {
    // The outer loop of the second nest is cut (block12 leaves): the inner loop becomes
    // outermost, one loop fewer, refused; the same cut with a second inner loop in the
    // body gives two outermost loops in the outer one's place.
    let g = TWO_NESTS
        .replace("block12:\n    jump block8", "block12:\n    jump block7")
        .replace(
            "block10:\n    jump block11",
            "block10:\n    brif v5, block10, block11",
        );
    // Old nest: 8 and 9 (two loops); new: 9 and 10 (two loops, 10 inside 9).
    assert!(replaced(TWO_NESTS, &g, 9, &[8, 14, 9, 10, 11, 12]));
}

/// Three levels: 1 (latch 9) > 2 (latch 8) > {3 (latch 4), 5 (latch 6)}.
const DEEP: &str = "kernel @k(i32) {
block0(v0: i32):
    v1 = iconst.i32 0
    jump block1
block1:
    v2 = icmp slt v1, v0
    brif v2, block2, block10
block2:
    v3 = icmp slt v0, v1
    brif v3, block3, block9
block3:
    brif v3, block4, block5
block4:
    jump block3
block5:
    brif v3, block6, block7
block6:
    jump block5
block7:
    jump block8
block8:
    jump block2
block9:
    jump block1
block10:
    return
}
";

#[test]
fn removing_a_loop_gives_its_blocks_and_children_to_its_parent() {
    let f = gyre_ir::parse_function(DEEP).expect("parses");
    let mut li = forest(&f);
    let b = Block::new;
    let outer = li.innermost_loop(b(1)).expect("a loop");
    let mid = li.innermost_loop(b(2)).expect("a loop");
    let (i1, i2) = (
        li.innermost_loop(b(3)).expect("a loop"),
        li.innermost_loop(b(5)).expect("a loop"),
    );
    assert_eq!(li.children(mid), [i1, i2]);
    assert_eq!(li.depth(i1), 3);
    let before = li.loops().count();
    li.remove_loop(mid);
    assert!(li.is_removed(mid));
    assert_eq!(li.loops().count(), before - 1);
    assert!(!li.loops().any(|l| l == mid));
    assert_eq!(li.children(outer), [i1, i2]);
    assert_eq!(li.parent(i1), Some(outer));
    assert_eq!((li.depth(i1), li.depth(i2)), (2, 2));
    for x in [2, 7, 8] {
        assert_eq!(li.innermost_loop(b(x)), Some(outer), "block{x}");
    }
    assert!(!li.is_header(b(2)));
    assert!(li.contains(outer, b(4)) && li.contains_loop(outer, i2));
    assert_eq!(li.num_blocks(outer), 9);
    // Removing it again changes nothing.
    li.remove_loop(mid);
    assert_eq!(li.children(outer), [i1, i2]);
    // A removed block is in no loop and listed by none.
    li.remove_block(b(6));
    li.remove_block(b(5));
    li.remove_loop(i2);
    assert_eq!(li.children(outer), [i1]);
    assert_eq!(li.innermost_loop(b(5)), None);
    assert!(!li.blocks(outer).any(|x| x == b(5) || x == b(6)));
    assert_eq!(li.num_blocks(outer), 7);
    // A top-level loop removed: its child becomes top-level.
    li.remove_loop(outer);
    assert_eq!(li.top_level().to_vec(), [i1]);
    assert_eq!(li.parent(i1), None);
    assert_eq!(li.depth(i1), 1);
    assert_eq!(li.innermost_loop(b(1)), None);
}

/// Found by the `pipeline` fuzz target (fuzz/regressions/pipeline/): rotation added a
/// preheader to a middle loop, loop-deletion broke the middle loop's backedge and then the
/// outer one's; the added block stayed in the outer loop.
#[test]
fn an_added_block_follows_its_loops_removal_up_the_nest() {
    let mut f = gyre_ir::parse_function(DEEP).expect("parses");
    let mut li = forest(&f);
    let b = Block::new;
    let outer = li.innermost_loop(b(1)).expect("a loop");
    let mid = li.innermost_loop(b(2)).expect("a loop");
    let new = f.dfg.make_block();
    li.add_block(new, Some(mid));
    li.remove_loop(mid);
    assert_eq!(li.innermost_loop(new), Some(outer));
    let mut own = Vec::new();
    li.own_blocks(outer, &mut own);
    assert!(own.contains(&new), "{own:?}");
    assert!(li.blocks(outer).any(|x| x == new));
    li.remove_loop(outer);
    assert_eq!(li.innermost_loop(new), None);
}

#[test]
fn merged_latches_and_fewer_latches() {
    let f = gyre_ir::parse_function(NEST).expect("parses");
    let mut li = forest(&f);
    let b = Block::new;
    let inner = li.innermost_loop(b(3)).expect("in a loop");
    // block4 (the latch) merged into block3, its only predecessor.
    li.merge_block(b(3), b(4));
    assert_eq!(li.latch(inner), Some(b(3)));
    assert_eq!(li.innermost_loop(b(4)), None);
    let mut members: Vec<Block> = li.blocks(inner).collect();
    members.sort();
    assert_eq!(members, [b(2), b(3)]);
    assert!(li.set_latches(inner, &[b(3)], true));
    assert!(!li.set_latches(inner, &[], true));
    assert!(!li.set_latches(inner, &[b(3), b(2)], false));
}

/// Removing outermost loops one by one, in any order, leaves the others in program order
/// (a removed one leaves a place that the list skips and later compacts away), and a
/// removed outermost loop with one child hands it its place.
#[test]
fn removed_outermost_loops_leave_the_others_in_order() {
    // 40 sequential loops: block 2k+1 is a header with latch 2k+2.
    let n = 40;
    let mut text = String::from("kernel @k(i32) {\nblock0(v0: i32):\n    jump block1\n");
    for k in 0..n {
        let (h, l, next) = (2 * k + 1, 2 * k + 2, 2 * k + 3);
        text += &format!(
            "block{h}:\n    v{h} = iconst.i32 {k}\n    v{l} = icmp slt v{h}, v0\n    brif v{l}, block{l}, block{next}\nblock{l}:\n    jump block{h}\n"
        );
    }
    text += &format!("block{}:\n    return\n}}\n", 2 * n + 1);
    let f = gyre_ir::parse_function(&text).expect("parses");
    let mut li = forest(&f);
    let all = li.top_level().to_vec();
    assert_eq!(all.len(), n);
    let headers = |li: &LoopInfo| -> Vec<u32> {
        li.top_level()
            .iter()
            .map(|&l| li.header(l).as_u32())
            .collect()
    };
    let mut expect: Vec<u32> = (0..n as u32).map(|k| 2 * k + 1).collect();
    // Every third loop from the back, then every other from the front: both sides of
    // each compaction.
    let mut gone = Vec::new();
    for k in (0..n).rev().step_by(3).chain((0..n).step_by(2)) {
        if gone.contains(&k) {
            continue;
        }
        gone.push(k);
        li.remove_loop(all[k]);
        expect.retain(|&h| h != 2 * k as u32 + 1);
        assert_eq!(headers(&li), expect, "after removing loop {k}");
        assert_eq!(li.top_level().len(), expect.len());
        assert!(!li.top_level().contains(&all[k]));
    }
    // The hints still find every loop left: removing the rest, last first, empties it.
    for &l in all.iter().rev() {
        li.remove_loop(l);
    }
    assert!(li.top_level().is_empty());
    assert_eq!(li.top_level().first(), None);
}

/// A removed outermost loop with several children puts them in its place while a removed
/// loop after it still has its place in the list (not yet compacted): the places after
/// the splice are renumbered, the removed one's skipped (its id is a sentinel: giving it
/// a position hint sized the hint array to 2^32 entries).
#[test]
fn splicing_children_before_a_removed_outermost_loop() {
    let text = "kernel @k(i32) {
block0(v0: i32):
    v1 = iconst.i32 0
    jump block1
block1:
    v2 = icmp slt v1, v0
    brif v2, block2, block7
block2:
    v3 = icmp slt v0, v1
    brif v3, block3, block4
block3:
    jump block2
block4:
    v4 = icmp slt v0, v1
    brif v4, block5, block6
block5:
    jump block4
block6:
    jump block1
block7:
    v5 = icmp slt v1, v0
    brif v5, block8, block9
block8:
    jump block7
block9:
    v6 = icmp slt v1, v0
    brif v6, block10, block11
block10:
    jump block9
block11:
    v7 = icmp slt v1, v0
    brif v7, block12, block13
block12:
    jump block11
block13:
    return
}
";
    let f = gyre_ir::parse_function(text).expect("parses");
    let mut li = forest(&f);
    let headers = |li: &LoopInfo| -> Vec<u32> {
        li.top_level()
            .iter()
            .map(|&l| li.header(l).as_u32())
            .collect()
    };
    let top = li.top_level().to_vec();
    assert_eq!(headers(&li), [1, 7, 9, 11]);
    // One removed place of four: not compacted.
    li.remove_loop(top[2]);
    assert_eq!(headers(&li), [1, 7, 11]);
    // The nest's two loops take its place, before the removed one's.
    li.remove_loop(top[0]);
    assert_eq!(headers(&li), [2, 4, 7, 11]);
    // The hints of the loops after the splice still find them.
    li.remove_loop(top[3]);
    assert_eq!(headers(&li), [2, 4, 7]);
    li.remove_loop(top[1]);
    assert_eq!(headers(&li), [2, 4]);
}
