//! The loop forest's in-place updates (`LoopInfo::add_block`,
//! `LoopInfo::set_header_and_latch`, `remove_block`, `merge_block`, `set_latches`,
//! `remove_loop`): membership, listing, header and latch as the queries
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
    assert_eq!(li.top_level(), [i1]);
    assert_eq!(li.parent(i1), None);
    assert_eq!(li.depth(i1), 1);
    assert_eq!(li.innermost_loop(b(1)), None);
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
