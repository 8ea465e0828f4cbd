//! The papers' own example graphs, built from edge lists, plus hand-checked cases.

mod common;
use common::{analyze, analyze_shape, b};
use gyre_analysis::cfggen;
use gyre_analysis::{print_cfg, print_domtree, print_loops, print_postdomtree};
use gyre_analysis::{DominanceFrontiers, IdfCalculator};
use gyre_ir::Block;

/// Lengauer & Tarjan 1979, Fig. 1: R=0 A=1 B=2 C=3 D=4 E=5 F=6 G=7 H=8 I=9 J=10 K=11 L=12.
const LT: &[(u32, u32)] = &[
    (0, 1),
    (0, 2),
    (0, 3),
    (1, 4),
    (2, 1),
    (2, 4),
    (2, 5),
    (3, 6),
    (3, 7),
    (4, 12),
    (5, 8),
    (6, 9),
    (7, 9),
    (7, 10),
    (8, 5),
    (8, 11),
    (9, 11),
    (10, 9),
    (11, 9),
    (11, 0),
    (12, 8),
];

#[test]
fn lengauer_tarjan_figure() {
    let a = analyze(13, LT);
    // idom per the paper's Fig. 2.
    let expect = [
        None,
        Some(0),
        Some(0),
        Some(0),
        Some(0),
        Some(0),
        Some(3),
        Some(3),
        Some(0),
        Some(0),
        Some(7),
        Some(0),
        Some(4),
    ];
    for (i, e) in expect.iter().enumerate() {
        assert_eq!(a.dt.idom(b(i as u32)), e.map(b), "idom of node {i}");
    }
    assert!(a.dt.dominates(b(3), b(10)));
    assert!(!a.dt.dominates(b(3), b(9)));
    assert_eq!(a.dt.nearest_common_dominator(b(10), b(6)), Some(b(3)));
    assert_eq!(a.dt.nearest_common_dominator(b(12), b(6)), Some(b(0)));
    let kids: Vec<Block> = a.dt.children(b(3)).collect();
    assert_eq!(kids, vec![b(6), b(7)]);
}

#[test]
fn cooper_harvey_kennedy_figures() {
    // Fig. 2 (irreducible; nodes numbered in postorder, 5 is the entry).
    // Relabelled so that the entry is block0: 5->0, 4->1, 3->2, 2->3, 1->4.
    let fig2 = [(0, 1), (0, 2), (1, 4), (2, 3), (4, 3), (3, 4)];
    let a = analyze(5, &fig2);
    for i in 1..5 {
        assert_eq!(a.dt.idom(b(i)), Some(b(0)));
    }
    assert!(a.li.num_loops() == 0, "an irreducible cycle is not a loop");
    let cyc = a.li.irreducible_cycles();
    assert_eq!(cyc.len(), 1);
    let mut blocks = cyc[0].blocks.clone();
    blocks.sort();
    assert_eq!(blocks, vec![b(3), b(4)]);
    assert_eq!(cyc[0].entries.len(), 2);
    // Fig. 4: entry 6 -> 5, 4; 5 -> 1; 4 -> 2, 3; 1 -> 2; 2 -> 1, 3; 3 -> 2.
    let fig4 = [
        (0, 1),
        (0, 2),
        (1, 5),
        (2, 4),
        (2, 3),
        (5, 4),
        (4, 5),
        (4, 3),
        (3, 4),
    ];
    let a = analyze(6, &fig4);
    for i in 1..6 {
        assert_eq!(a.dt.idom(b(i)), Some(b(0)), "fig 4 node {i}");
    }
    assert_eq!(a.li.irreducible_cycles().len(), 1);
    assert_eq!(a.li.irreducible_cycles()[0].blocks.len(), 3);
}

#[test]
fn diamond_frontiers_and_idf() {
    // 0 -> 1, 2; 1 -> 3; 2 -> 3; 3 -> 4 (loop 4 <-> 5); 5 -> 6.
    let a = analyze(
        7,
        &[
            (0, 1),
            (0, 2),
            (1, 3),
            (2, 3),
            (3, 4),
            (4, 5),
            (5, 4),
            (5, 6),
        ],
    );
    let mut df = DominanceFrontiers::new();
    df.compute(&a.func, &a.cfg, &a.dt);
    assert_eq!(df.frontier(b(1)), &[b(3)]);
    assert_eq!(df.frontier(b(2)), &[b(3)]);
    assert!(df.frontier(b(0)).is_empty());
    assert_eq!(df.frontier(b(5)), &[b(4)]);
    assert_eq!(df.frontier(b(4)), &[b(4)]);
    let mut idf = IdfCalculator::new();
    let mut out = Vec::new();
    idf.compute(&df, &[b(1), b(5)], &mut out);
    assert_eq!(out, vec![b(3), b(4)]);
    // Control dependence: 1 and 2 depend on 0's branch; 4 and 5 on 5's.
    df.compute_post(&a.func, &a.cfg, &a.pdt);
    assert_eq!(df.frontier(b(1)), &[b(0)]);
    assert_eq!(df.frontier(b(2)), &[b(0)]);
    assert_eq!(df.frontier(b(4)), &[b(5)]);
    assert!(df.frontier(b(3)).is_empty());
}

#[test]
fn postdom_several_returns_and_infinite_loop() {
    // 0 -> 1, 2; 1 -> ret 3; 2 -> 4 <-> 5 (infinite loop, 5 also -> 4 only); 6 unreachable -> 3.
    let a = analyze(7, &[(0, 1), (0, 2), (1, 3), (2, 4), (4, 5), (5, 4), (6, 3)]);
    assert_eq!(
        a.pdt.roots(),
        &[b(3), b(5)],
        "return, then the loop's last block"
    );
    assert_eq!(a.pdt.ipdom(b(1)), Some(b(3)));
    assert_eq!(a.pdt.ipdom(b(6)), Some(b(3)));
    assert_eq!(a.pdt.ipdom(b(4)), Some(b(5)));
    assert_eq!(a.pdt.ipdom(b(2)), Some(b(4)));
    assert_eq!(
        a.pdt.ipdom(b(0)),
        None,
        "paths to both roots: the virtual exit"
    );
    assert!(a.pdt.post_dominates(b(5), b(2)));
    let text = print_postdomtree(&a.pdt, &a.func);
    assert!(text.contains("<<exit node>>"), "{text}");
    assert!(text.contains("Roots: %block3 %block5"), "{text}");
}

#[test]
fn loops_llvm_style() {
    // 0 -> 1 (outer header); 1 -> 2 (inner header); 2 -> 3; 3 -> 2, 4; 4 -> 1, 5; 5 ret.
    let a = analyze(6, &[(0, 1), (1, 2), (2, 3), (3, 2), (3, 4), (4, 1), (4, 5)]);
    assert_eq!(a.li.num_loops(), 2);
    let outer = a.li.top_level().first().expect("a loop");
    let inner = a.li.children(outer)[0];
    assert!(inner < outer, "inner loops first");
    assert_eq!(a.li.header(outer), b(1));
    assert_eq!(a.li.header(inner), b(2));
    assert_eq!(a.li.depth(inner), 2);
    assert_eq!(
        a.li.blocks(outer).collect::<Vec<_>>(),
        &[b(1), b(4), b(2), b(3)]
    );
    assert_eq!(a.li.latches(outer), &[b(4)]);
    assert_eq!(a.li.preheader(outer, &a.cfg), Some(b(0)));
    assert_eq!(a.li.preheader(inner, &a.cfg), Some(b(1)));
    assert_eq!(a.li.exiting_blocks(inner, &a.cfg), vec![b(3)]);
    assert_eq!(a.li.unique_exit_blocks(outer, &a.cfg), vec![b(5)]);
    assert!(a.li.is_loop_simplify_form(outer, &a.cfg));
    assert!(a.li.is_rotated_form(inner, &a.cfg));
    assert_eq!(a.li.innermost_loop(b(3)), Some(inner));
    assert_eq!(a.li.loop_depth(b(4)), 1);
    assert!(a.li.contains(outer, b(3)) && !a.li.contains(inner, b(4)));
    let text = print_loops(&a.li, &a.func);
    let want = "Loop info for function '@test':\n\
        Loop at depth 1 containing: %block1<header>,%block2,%block3,%block4<latch><exiting>\n    \
        Loop at depth 2 containing: %block2<header>,%block3<latch><exiting>\n";
    assert_eq!(text, want);
    let dt = print_domtree(&a.dt, &a.func);
    assert!(
        dt.contains("  [1] %block0 {1,6} [0]\n    [2] %block1 {2,6} [1]\n"),
        "{dt}"
    );
    let cfg = print_cfg(&a.cfg, &a.func);
    assert!(
        cfg.contains("%block3: succs [%block2, %block4] preds [%block2]"),
        "{cfg}"
    );
}

#[test]
fn unreachable_blocks() {
    // 2 and 3 are unreachable; 3 -> 3 is a self-loop that is not a loop.
    let a = analyze(4, &[(0, 1), (2, 1), (3, 3), (3, 1)]);
    assert!(!a.dt.is_reachable(b(2)));
    assert_eq!(a.dt.idom(b(2)), None);
    assert!(
        a.dt.dominates(b(1), b(2)),
        "unreachable blocks are dominated by all"
    );
    assert!(!a.dt.dominates(b(2), b(1)));
    assert_eq!(a.li.num_loops(), 0);
    assert_eq!(a.li.innermost_loop(b(3)), None);
    assert_eq!(a.dt.nearest_common_dominator(b(1), b(3)), None);
}

#[test]
fn deep_nest_and_long_chain_do_not_overflow() {
    let a = analyze_shape(&cfggen::deep_nest(10_000));
    assert_eq!(a.li.num_loops(), 10_000);
    let innermost =
        a.li.innermost_loop(b(10_000))
            .expect("in the innermost loop");
    assert_eq!(a.li.depth(innermost), 10_000);
    // The exit's dominators: the entry, every header, every latch.
    assert_eq!(a.dt.depth(b(20_001)), 20_002);
    // A 1,000,000-block chain: DFS depth one million.
    let n = 1_000_000u32;
    let edges: Vec<(u32, u32)> = (0..n - 1).map(|i| (i, i + 1)).chain([(n - 1, 0)]).collect();
    let a = analyze(n as usize, &edges);
    assert_eq!(a.dt.depth(b(n - 1)), n);
    assert_eq!(
        a.li.num_blocks(a.li.top_level().first().expect("a loop")),
        n as usize
    );
    assert_eq!(a.pdt.roots().len(), 1);
}

#[test]
fn million_block_irreducible_cycle_and_dominator_fallback_do_not_overflow() {
    // 0 -> 1 -> 2 -> ... -> n-1 -> 1, entered at 1 and at m from the entry; n-1 also
    // leaves to the return block n. Neither entry dominates the other, so there is no
    // loop, only one irreducible cycle of n - 1 blocks: the RPO and post-dominator DFSs go
    // about a million deep and the SCC search walks the whole cycle.
    let n = 1_000_000u32;
    let m = n / 2;
    let edges: Vec<(u32, u32)> = [(0, 1), (0, m)]
        .into_iter()
        .chain((1..n - 1).map(|i| (i, i + 1)))
        .chain([(n - 1, 1), (n - 1, n)])
        .collect();
    let a = analyze(n as usize + 1, &edges);
    assert_eq!(a.dt.idom(b(1)), Some(b(0)));
    assert_eq!(a.dt.idom(b(m)), Some(b(0)));
    assert_eq!(a.dt.idom(b(m + 1)), Some(b(m)));
    assert_eq!(a.dt.idom(b(n)), Some(b(n - 1)));
    assert_eq!(a.dt.depth(b(n)), n - m + 2);
    assert_eq!(a.li.num_loops(), 0);
    let cycles = a.li.irreducible_cycles();
    assert_eq!(cycles.len(), 1);
    // In RPO: the DFS takes the entry's last successor, m, first.
    assert_eq!(cycles[0].entries, vec![b(m), b(1)]);
    assert_eq!(cycles[0].blocks.len(), n as usize - 1);
    // Every cycle block reaches the return only through n-1.
    assert_eq!(a.pdt.ipdom(b(1)), Some(b(2)));
    assert_eq!(a.pdt.ipdom(b(n - 1)), Some(b(n)));
    assert_eq!(a.pdt.ipdom(b(0)), Some(b(m)));
    // A million-block ladder laid out against its chain sends the dominator tree to its
    // semi-NCA fallback, whose own DFS is then a million deep.
    let a = analyze_shape(&cfggen::exit_ladder_backwards(n));
    assert_eq!(a.dt.idom(b(n - 1)), Some(b(0)));
    assert_eq!(a.dt.depth(b(1)), n - 1);
    assert_eq!(a.pdt.ipdom(b(n - 2)), Some(b(n - 1)));
}

#[test]
fn stale_edge_to_a_removed_block_does_not_break_the_order() {
    use gyre_analysis::Cfg;
    // 0 -> 1 -> 2. Block 2 leaves the layout while 1 still jumps to it (the caller has not
    // yet retargeted 1): the DFS then reaches more blocks than are laid out, which must
    // not index past the order's buffers.
    let mut f = gyre_analysis::testutil::function_from_edges(3, &[(0, 1), (1, 2)]);
    let mut cfg = Cfg::with_function(&f).expect("valid");
    while let Some(i) = f.layout.last_inst(b(2)) {
        f.layout.remove_inst(i);
    }
    f.layout.remove_block(b(2));
    cfg.update_block(&f, b(2))
        .expect("a block out of the layout has no edges");
    cfg.compute_order(&f);
    assert_eq!(&cfg.rpo()[..2], &[b(0), b(1)]);
}

#[test]
fn branch_to_missing_block_is_an_error() {
    use gyre_analysis::{Cfg, CfgError};
    use gyre_ir::{BlockCall, InstructionData};
    let mut f = gyre_analysis::testutil::function_from_edges(1, &[]);
    let ghost = f.dfg.make_block(); // never laid out
    let entry = b(0);
    let ret = f.layout.last_inst(entry).expect("return");
    f.layout.remove_inst(ret);
    let dest = BlockCall::new(ghost, &[], &mut f.dfg.value_lists);
    let (jump, _) = f.append_inst(entry, InstructionData::Jump { dest }, None);
    let err = Cfg::with_function(&f).err();
    assert_eq!(
        err,
        Some(CfgError::InvalidTarget {
            block: entry,
            inst: jump,
            target: ghost
        })
    );
}

#[test]
fn first_bad_branch_in_layout_order_is_reported_and_the_cfg_recovers() {
    use gyre_analysis::{Cfg, CfgError};
    use gyre_ir::{Block, BlockCall, EntityRef, InstructionData};
    // 0 -> 1 -> 2; block 2 jumps to a block that was never made (index past the end), then
    // block 1 is changed to jump to a block that exists but is not laid out. Both are bad;
    // block 1 comes first in the layout, so it is the one reported.
    let mut f = gyre_analysis::testutil::function_from_edges(3, &[(0, 1), (1, 2)]);
    let retarget = |f: &mut gyre_ir::Function, block: Block, to: Block| {
        let old = f.layout.last_inst(block).expect("terminator");
        f.layout.remove_inst(old);
        let dest = BlockCall::new(to, &[], &mut f.dfg.value_lists);
        f.append_inst(block, InstructionData::Jump { dest }, None).0
    };
    let missing = Block::new(1000);
    let j2 = retarget(&mut f, b(2), missing);
    let mut cfg = Cfg::new();
    assert_eq!(
        cfg.compute(&f).err(),
        Some(CfgError::InvalidTarget {
            block: b(2),
            inst: j2,
            target: missing
        })
    );
    assert!(!cfg.is_valid());
    let ghost = f.dfg.make_block();
    let j1 = retarget(&mut f, b(1), ghost);
    assert_eq!(
        cfg.compute(&f).err(),
        Some(CfgError::InvalidTarget {
            block: b(1),
            inst: j1,
            target: ghost
        })
    );
    // Fixed, the same Cfg computes the right edges.
    retarget(&mut f, b(1), b(2));
    f.layout
        .remove_inst(f.layout.last_inst(b(2)).expect("jump"));
    f.append_inst(
        b(2),
        InstructionData::Return {
            args: gyre_ir::ValueList::new(),
        },
        None,
    );
    cfg.compute(&f).expect("valid now");
    assert_eq!(cfg.rpo(), &[b(0), b(1), b(2)]);
    assert_eq!(cfg.preds(b(2)), &[b(1)]);
    assert!(cfg.preds(ghost).is_empty());
}
