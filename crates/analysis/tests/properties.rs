//! Property tests over random CFGs (reducible and irreducible, self-loops, unreachable
//! blocks, switches with repeated targets): every fast analysis against the textbook one
//! in `gyre_analysis::reference`, or against the definition.

mod common;
use bitvec::vec::BitVec;
use common::{analyze_func, Analyzed};
use gyre_analysis::cfggen::{self, CfgShape, Rng};
use gyre_analysis::reference::{self, RefDom, RefPostDom};
use gyre_analysis::testutil::function_from_edges;
use gyre_analysis::{Cfg, DominanceFrontiers, IdfCalculator, Loop};
use gyre_ir::{Block, EntityRef, InstructionData, IntFlags, Opcode, Type, Value};
use quickcheck::{Arbitrary, Gen, QuickCheck};

const CASES: u64 = 5000;

#[derive(Clone, Debug)]
struct Graph(CfgShape);

impl Arbitrary for Graph {
    fn arbitrary(g: &mut Gen) -> Graph {
        let n = 1 + u32::arbitrary(g) % 20;
        let seed = u64::arbitrary(g);
        Graph(match u8::arbitrary(g) % 4 {
            0 => cfggen::random_reducible(n, seed),
            1 | 2 => cfggen::random_cfg(n, seed),
            _ => {
                // Fully arbitrary edges, any block to any block.
                let m = u32::arbitrary(g) % (3 * n + 1);
                let edges = (0..m)
                    .map(|_| (u32::arbitrary(g) % n, u32::arbitrary(g) % n))
                    .collect();
                CfgShape {
                    num_blocks: n,
                    edges,
                }
            }
        })
    }

    fn shrink(&self) -> Box<dyn Iterator<Item = Graph>> {
        let s = self.0.clone();
        Box::new((0..s.edges.len()).rev().map(move |i| {
            let mut t = s.clone();
            t.edges.remove(i);
            Graph(t)
        }))
    }
}

fn qc(f: fn(Graph)) {
    QuickCheck::new().tests(CASES).quickcheck(f);
}

fn blocks(a: &Analyzed) -> Vec<Block> {
    (0..a.cfg.num_block_slots()).map(Block::new).collect()
}

#[test]
fn cfg_matches_function() {
    fn prop(g: Graph) {
        let a = analyze_func(g.0.to_function());
        let r = RefDom::new(&a.cfg);
        for b in blocks(&a) {
            assert_eq!(a.cfg.succs(b), a.func.successors(b).as_slice());
            let mut want: Vec<Block> =
                g.0.edges
                    .iter()
                    .filter(|e| e.1 as usize == b.index())
                    .map(|e| Block::new(e.0 as usize))
                    .collect();
            let mut got = a.cfg.preds(b).to_vec();
            want.sort();
            got.sort();
            assert_eq!(got, want, "preds of {b}");
            assert_eq!(a.cfg.is_reachable(b), r.reachable[b.index()]);
        }
        // RPO: a permutation of the reachable blocks where every edge that is not
        // retreating goes forward, and retreating targets are DFS ancestors (they
        // dominate or the graph is irreducible: checked by LoopInfo tests).
        let rpo = a.cfg.rpo();
        assert_eq!(rpo.len(), r.reachable.count_ones());
        assert_eq!(rpo.first().copied(), a.cfg.entry());
        for (i, &x) in rpo.iter().enumerate() {
            assert_eq!(a.cfg.rpo_number(x), Some(i as u32));
        }
        for &x in rpo {
            for &s in a.cfg.succs(x) {
                if a.dt.dominates(s, x) {
                    assert!(a.cfg.is_retreating(x, s));
                }
            }
        }
    }
    qc(prop);
}

#[test]
fn cfg_update_block_matches_recompute() {
    fn prop(g: Graph, h: Graph) {
        // Replace the out-edges of one block of g with those of block 0 of h.
        let n = g.0.num_blocks;
        let target = (h.0.edges.len() as u32) % n;
        let a = analyze_func(g.0.to_function());
        let mut cfg = a.cfg.clone();
        let mut edges: Vec<(u32, u32)> =
            g.0.edges
                .iter()
                .copied()
                .filter(|e| e.0 != target)
                .collect();
        edges.extend(
            h.0.edges
                .iter()
                .filter(|e| e.0 == 0)
                .map(|e| (target, e.1 % n)),
        );
        let f2 = function_from_edges(n as usize, &edges);
        cfg.update_block(&f2, Block::new(target as usize))
            .expect("valid");
        cfg.compute_order(&f2);
        let fresh = Cfg::with_function(&f2).expect("valid");
        for i in 0..n as usize {
            let b = Block::new(i);
            assert_eq!(cfg.succs(b), fresh.succs(b));
            let mut p1 = cfg.preds(b).to_vec();
            let mut p2 = fresh.preds(b).to_vec();
            p1.sort();
            p2.sort();
            assert_eq!(p1, p2);
        }
        assert_eq!(cfg.rpo(), fresh.rpo());
    }
    QuickCheck::new()
        .tests(CASES)
        .quickcheck(prop as fn(Graph, Graph));
}

#[test]
fn domtree_matches_dataflow() {
    fn prop(g: Graph) {
        let a = analyze_func(g.0.to_function());
        let r = RefDom::new(&a.cfg);
        let bs = blocks(&a);
        for &x in &bs {
            assert_eq!(a.dt.is_reachable(x), r.reachable[x.index()]);
            assert_eq!(a.dt.idom(x), r.idom(x), "idom of {x}");
            let kids: Vec<Block> = a.dt.children(x).collect();
            let mut want: Vec<Block> = bs
                .iter()
                .copied()
                .filter(|&y| a.dt.idom(y) == Some(x))
                .collect();
            let mut got = kids.clone();
            want.sort();
            got.sort();
            assert_eq!(got, want, "children of {x}");
            for &y in &bs {
                assert_eq!(a.dt.dominates(x, y), r.dominates(x, y), "{x} dom {y}");
                // Nearest common dominator: the deepest block dominating both.
                let want = if r.reachable[x.index()] && r.reachable[y.index()] {
                    bs.iter()
                        .copied()
                        .filter(|&d| {
                            r.reachable[d.index()] && r.dominates(d, x) && r.dominates(d, y)
                        })
                        .max_by_key(|d| r.sets[d.index()].count_ones())
                } else {
                    None
                };
                assert_eq!(a.dt.nearest_common_dominator(x, y), want, "nca {x} {y}");
            }
        }
        // Instruction level: the first instruction of a reachable block dominates its
        // terminator, not the reverse (when they differ), and block dominance carries over.
        for &x in &bs {
            let (Some(f), Some(l)) = (a.func.layout.first_inst(x), a.func.layout.last_inst(x))
            else {
                continue;
            };
            assert!(a.dt.dominates_inst(f, l, &a.func.layout));
            assert_eq!(a.dt.dominates_inst(l, f, &a.func.layout), f == l);
            for &y in &bs {
                if let Some(fy) = a.func.layout.first_inst(y) {
                    if x != y {
                        assert_eq!(
                            a.dt.dominates_inst(l, fy, &a.func.layout),
                            r.dominates(x, y)
                        );
                    }
                }
            }
        }
    }
    qc(prop);
}

#[test]
fn dominators_lie_on_every_random_path() {
    fn prop(g: Graph, seed: u64) {
        let a = analyze_func(g.0.to_function());
        let Some(entry) = a.cfg.entry() else { return };
        let mut rng = Rng::new(seed);
        let n = a.cfg.num_block_slots();
        for _ in 0..8 {
            let mut seen: BitVec = BitVec::repeat(false, n);
            let mut x = entry;
            for _ in 0..3 * n {
                seen.set(x.index(), true);
                let mut d = a.dt.idom(x);
                while let Some(y) = d {
                    assert!(seen[y.index()], "{y} dominates {x} but is not on the path");
                    d = a.dt.idom(y);
                }
                let s = a.cfg.succs(x);
                if s.is_empty() {
                    break;
                }
                x = s[rng.below(s.len() as u32) as usize];
            }
        }
    }
    QuickCheck::new()
        .tests(CASES)
        .quickcheck(prop as fn(Graph, u64));
}

#[test]
fn postdomtree_matches_dataflow() {
    fn prop(g: Graph) {
        let a = analyze_func(g.0.to_function());
        let r = RefPostDom::new(&a.cfg);
        assert_eq!(a.pdt.roots(), r.roots.as_slice());
        let bs = blocks(&a);
        for &x in &bs {
            assert!(a.pdt.contains(x));
            assert_eq!(a.pdt.ipdom(x), r.ipdom(x), "ipdom of {x}");
            for &y in &bs {
                assert_eq!(
                    a.pdt.post_dominates(x, y),
                    r.post_dominates(x, y),
                    "{x} pdom {y}"
                );
            }
        }
    }
    qc(prop);
}

#[test]
fn frontiers_match_definition() {
    fn prop(g: Graph, picks: Vec<u8>) {
        let a = analyze_func(g.0.to_function());
        let r = RefDom::new(&a.cfg);
        let rdf = reference::dominance_frontiers(&a.cfg, &r);
        let mut df = DominanceFrontiers::new();
        df.compute(&a.func, &a.cfg, &a.dt);
        for x in blocks(&a) {
            let mut got = df.frontier(x).to_vec();
            got.sort();
            let want: Vec<Block> = rdf[x.index()].iter_ones().map(Block::new).collect();
            assert_eq!(got, want, "DF({x})");
        }
        let n = a.cfg.num_block_slots();
        let defs: Vec<Block> = picks.iter().map(|&p| Block::new(p as usize % n)).collect();
        let mut idf = IdfCalculator::new();
        let mut out = Vec::new();
        idf.compute(&df, &defs, &mut out);
        assert_eq!(out, reference::iterated_frontier(&rdf, &defs));
        // Post-dominance frontiers by definition.
        let rp = RefPostDom::new(&a.cfg);
        df.compute_post(&a.func, &a.cfg, &a.pdt);
        for x in blocks(&a) {
            let mut got = df.frontier(x).to_vec();
            got.sort();
            let want: Vec<Block> = blocks(&a)
                .into_iter()
                .filter(|&y| {
                    let strict = x != y && rp.post_dominates(x, y);
                    !strict && a.cfg.succs(y).iter().any(|&s| rp.post_dominates(x, s))
                })
                .collect();
            assert_eq!(got, want, "PDF({x})");
        }
    }
    QuickCheck::new()
        .tests(CASES)
        .quickcheck(prop as fn(Graph, Vec<u8>));
}

/// Loop sets, as `(header, blocks)`, from the fast LoopInfo.
fn loop_sets(a: &Analyzed) -> Vec<(Block, BitVec)> {
    let n = a.cfg.num_block_slots();
    let mut v: Vec<(Block, BitVec)> =
        a.li.loops()
            .map(|l| {
                let mut s: BitVec = BitVec::repeat(false, n);
                for b in a.li.blocks(l) {
                    assert!(!s[b.index()], "{b} twice in {l}");
                    s.set(b.index(), true);
                }
                (a.li.header(l), s)
            })
            .collect();
    v.sort_by_key(|x| x.0);
    v
}

#[test]
fn loopinfo_matches_naive_loops() {
    fn prop(g: Graph) {
        let a = analyze_func(g.0.to_function());
        let r = RefDom::new(&a.cfg);
        let naive = reference::natural_loops(&a.cfg, &r);
        assert_eq!(loop_sets(&a), naive);
        let by_header = |h: Block| a.li.innermost_loop(h).expect("header in its loop");
        for (i, (h, set)) in naive.iter().enumerate() {
            let l = by_header(*h);
            assert_eq!(a.li.header(l), *h);
            assert!(a.li.is_header(*h));
            assert_eq!(a.li.blocks(l).next(), Some(*h), "header first");
            let parent = reference::loop_parent(&naive, i).map(|j| by_header(naive[j].0));
            assert_eq!(a.li.parent(l), parent);
            assert_eq!(a.li.depth(l), parent.map_or(1, |p| a.li.depth(p) + 1));
            if let Some(p) = parent {
                assert!(l < p, "subloops have smaller ids");
                assert!(a.li.children(p).contains(&l));
            } else {
                assert!(a.li.top_level().contains(&l));
            }
            for x in blocks(&a) {
                assert_eq!(a.li.contains(l, x), set[x.index()], "{l} contains {x}");
            }
        }
        // Innermost loop: the smallest loop containing the block.
        for x in blocks(&a) {
            let want = naive
                .iter()
                .filter(|(_, s)| s[x.index()])
                .min_by_key(|(_, s)| s.count_ones())
                .map(|(h, _)| by_header(*h));
            assert_eq!(a.li.innermost_loop(x), want, "innermost of {x}");
        }
        // Irreducible cycles cover exactly the blocks on cycles without back edges.
        let irr = reference::irreducible_blocks(&a.cfg, &r);
        let mut got: BitVec = BitVec::repeat(false, a.cfg.num_block_slots());
        for c in a.li.irreducible_cycles() {
            assert!(
                c.entries.len() >= 2,
                "an irreducible cycle has several entries"
            );
            for &x in &c.blocks {
                assert!(!got[x.index()]);
                got.set(x.index(), true);
                if let Some(p) = c.parent {
                    assert!(a.li.contains(p, x));
                    assert!(a.li.contains_irreducible(p));
                }
            }
        }
        assert_eq!(got, irr);
    }
    qc(prop);
}

#[test]
fn random_reducible_is_reducible() {
    fn prop(n: u16, seed: u64) {
        let s = cfggen::random_reducible(1 + u32::from(n) % 300, seed);
        let a = analyze_func(s.to_function());
        assert!(a.li.irreducible_cycles().is_empty());
        assert_eq!(a.cfg.rpo().len(), s.num_blocks as usize);
        for (i, &x) in a.cfg.rpo().iter().enumerate() {
            assert_eq!(x.index(), i, "generated in RPO");
        }
    }
    QuickCheck::new()
        .tests(300)
        .quickcheck(prop as fn(u16, u64));
}

#[test]
fn loop_predicates_match_definitions() {
    fn prop(g: Graph) {
        let a = analyze_func(g.0.to_function());
        let cfg = &a.cfg;
        let edges: Vec<(Block, Block)> =
            g.0.edges
                .iter()
                .map(|&(f, t)| (Block::new(f as usize), Block::new(t as usize)))
                .collect();
        for l in a.li.loops() {
            let inl = |x: Block| a.li.blocks(l).any(|y| y == x);
            let h = a.li.header(l);
            let mut latches: Vec<Block> = edges
                .iter()
                .filter(|e| e.1 == h && inl(e.0))
                .map(|e| e.0)
                .collect();
            latches.sort();
            latches.dedup();
            let mut got = a.li.latches(l).to_vec();
            got.sort();
            assert_eq!(got, latches);
            let exit_edges: Vec<(Block, Block)> = edges
                .iter()
                .copied()
                .filter(|e| inl(e.0) && !inl(e.1))
                .collect();
            let mut exiting: Vec<Block> = exit_edges.iter().map(|e| e.0).collect();
            exiting.sort();
            exiting.dedup();
            let mut got = a.li.exiting_blocks(l, cfg);
            got.sort();
            assert_eq!(got, exiting);
            let mut exits: Vec<Block> = exit_edges.iter().map(|e| e.1).collect();
            let mut got = a.li.exit_blocks(l, cfg);
            exits.sort();
            got.sort();
            assert_eq!(got, exits);
            exits.dedup();
            let mut got = a.li.unique_exit_blocks(l, cfg);
            got.sort();
            assert_eq!(got, exits);
            let mut preds: Vec<Block> = edges
                .iter()
                .filter(|e| e.1 == h && !inl(e.0))
                .map(|e| e.0)
                .collect();
            preds.sort();
            preds.dedup();
            let mut got = a.li.loop_predecessors(l, cfg);
            got.sort();
            assert_eq!(got, preds);
            let out_degree = |x: Block| edges.iter().filter(|e| e.0 == x).count();
            let preheader = match preds[..] {
                [p] if out_degree(p) == 1 => Some(p),
                _ => None,
            };
            assert_eq!(a.li.preheader(l, cfg), preheader);
            let dedicated = exits
                .iter()
                .all(|&e| edges.iter().filter(|x| x.1 == e).all(|x| inl(x.0)));
            assert_eq!(a.li.has_dedicated_exits(l, cfg), dedicated);
            // One back edge, counted per edge as LLVM's `getLoopLatch` does: a latch
            // with two edges to the header is not a single latch.
            let back_edges = edges.iter().filter(|e| e.1 == h && inl(e.0)).count();
            assert_eq!(a.li.num_back_edges(l, cfg), back_edges);
            let single_latch = back_edges == 1;
            assert_eq!(a.li.latch(l), single_latch.then(|| latches[0]));
            assert_eq!(
                a.li.is_loop_simplify_form(l, cfg),
                preheader.is_some() && single_latch && dedicated
            );
            assert_eq!(
                a.li.is_rotated_form(l, cfg),
                single_latch && exiting.contains(&latches[0])
            );
        }
    }
    qc(prop);
}

#[test]
fn lcssa_matches_definition() {
    fn prop(g: Graph, uses: Vec<(u8, u8)>) {
        let n = g.0.num_blocks as usize;
        let mut func = function_from_edges(n, &g.0.edges);
        let bs: Vec<Block> = (0..n).map(Block::new).collect();
        // One value per block, defined first.
        let vals: Vec<Value> = bs
            .iter()
            .map(|&b| {
                let first = func
                    .layout
                    .first_inst(b)
                    .expect("every block has a terminator");
                func.insert_inst_before(
                    first,
                    InstructionData::IntConst { imm: 1 },
                    Some(Type::I32),
                )
                .1
                .expect("result")
            })
            .collect();
        let plain = analyze_func(func.clone());
        // Uses of v_d in block u where d dominates u (valid SSA).
        let mut pairs = Vec::new();
        for &(d, u) in &uses {
            let (d, u) = (bs[d as usize % n], bs[u as usize % n]);
            if plain.dt.is_reachable(d) && plain.dt.dominates(d, u) {
                let term = func.layout.last_inst(u).expect("terminator");
                let v = vals[d.index()];
                func.insert_inst_before(
                    term,
                    InstructionData::Binary {
                        opcode: Opcode::Iadd,
                        args: [v, v],
                        flags: IntFlags::NONE,
                    },
                    Some(Type::I32),
                );
                // Uses in unreachable blocks do not count (as in LLVM).
                if plain.dt.is_reachable(u) {
                    pairs.push((d, u));
                }
            }
        }
        let a = analyze_func(func);
        let mut all = true;
        for l in a.li.loops() {
            let inl = |x: Block| a.li.contains(l, x);
            let want = pairs.iter().all(|&(d, u)| !inl(d) || inl(u));
            all &= want;
            assert_eq!(a.li.is_lcssa_form(l, &a.func, &a.dt), want, "LCSSA of {l}");
            let sub = |m: Loop| a.li.contains_loop(l, m);
            let want_rec = a.li.loops().filter(|&m| sub(m)).all(|m| {
                pairs
                    .iter()
                    .all(|&(d, u)| !a.li.contains(m, d) || a.li.contains(m, u))
            });
            assert_eq!(a.li.is_recursively_lcssa_form(l, &a.func, &a.dt), want_rec);
        }
        assert_eq!(a.li.is_all_lcssa_form(&a.func, &a.dt), all);
    }
    QuickCheck::new()
        .tests(CASES)
        .quickcheck(prop as fn(Graph, Vec<(u8, u8)>));
}

#[test]
fn loopinfo_is_stable_under_layout_permutation() {
    // Relabelling blocks (so predecessor lists come in another order) must not change
    // loop ids, block orders, latches, children or exits.
    fn prop(g: Graph, seed: u64) {
        let n = g.0.num_blocks;
        let mut rng = Rng::new(seed);
        let mut perm: Vec<u32> = (0..n).collect();
        for i in (2..n as usize).rev() {
            let j = 1 + rng.below(i as u32) as usize;
            perm.swap(i, j);
        }
        let edges2: Vec<(u32, u32)> =
            g.0.edges
                .iter()
                .map(|&(f, t)| (perm[f as usize], perm[t as usize]))
                .collect();
        let a = analyze_func(g.0.to_function());
        let c = analyze_func(function_from_edges(n as usize, &edges2));
        let map = |x: Block| Block::new(perm[x.index()] as usize);
        assert_eq!(a.li.num_loops(), c.li.num_loops());
        assert_eq!(a.li.top_level(), c.li.top_level());
        for l in a.li.loops() {
            assert_eq!(map(a.li.header(l)), c.li.header(l));
            let mapped: Vec<Block> = a.li.blocks(l).map(map).collect();
            assert_eq!(mapped, c.li.blocks(l).collect::<Vec<_>>());
            let mapped: Vec<Block> = a.li.latches(l).iter().map(|&x| map(x)).collect();
            assert_eq!(mapped, c.li.latches(l));
            assert_eq!(a.li.children(l), c.li.children(l));
            let mapped: Vec<Block> =
                a.li.exit_blocks(l, &a.cfg)
                    .iter()
                    .map(|&x| map(x))
                    .collect();
            assert_eq!(mapped, c.li.exit_blocks(l, &c.cfg));
        }
        for x in 0..n as usize {
            let x = Block::new(x);
            assert_eq!(a.dt.idom(x).map(map), c.dt.idom(map(x)));
            let k1: Vec<Block> = a.dt.children(x).map(map).collect();
            let k2: Vec<Block> = c.dt.children(map(x)).collect();
            assert_eq!(k1, k2);
        }
    }
    QuickCheck::new()
        .tests(CASES)
        .quickcheck(prop as fn(Graph, u64));
}

#[test]
fn generator_covers_the_interesting_cases() {
    // The properties above are only as good as the graphs: make sure they contain
    // loops, nests, irreducible cycles, infinite loops, unreachable blocks and switches.
    let mut g = Gen::new(100);
    let (mut loops, mut nested, mut irr, mut inf, mut unreach, mut switch) = (0, 0, 0, 0, 0, 0);
    for _ in 0..1000 {
        let Graph(s) = Graph::arbitrary(&mut g);
        let a = analyze_func(s.to_function());
        loops += usize::from(a.li.num_loops() > 0);
        nested += usize::from(a.li.loops().any(|l| a.li.depth(l) >= 2));
        irr += usize::from(!a.li.irreducible_cycles().is_empty());
        let trivial = a
            .cfg
            .layout_blocks()
            .iter()
            .filter(|&&b| a.cfg.succs(b).is_empty())
            .count();
        inf += usize::from(a.pdt.roots().len() > trivial);
        unreach += usize::from(a.cfg.rpo().len() < s.num_blocks as usize);
        switch +=
            usize::from((0..s.num_blocks).any(|b| s.edges.iter().filter(|e| e.0 == b).count() > 2));
    }
    for (what, count) in [
        ("loops", loops),
        ("nests", nested),
        ("irreducible", irr),
        ("infinite loops", inf),
        ("unreachable", unreach),
        ("switches", switch),
    ] {
        assert!(count >= 50, "only {count} of 1000 graphs have {what}");
    }
}
