//! The loop forest's in-place updates (`LoopInfo::add_block`,
//! `LoopInfo::set_header_and_latch`): membership, listing, header and latch as the queries
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
