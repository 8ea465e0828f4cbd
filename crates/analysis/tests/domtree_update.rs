//! The incremental dominator-tree updater against a fresh `DomTree::with_function` after
//! every batch: random edit sequences on random CFGs (reducible, irreducible, regions
//! made unreachable and reachable again, parallel edges, new blocks), one test per
//! loop-pass edit shape, and a 200,000-block chain for the stack.

use gyre_analysis::cfggen::{self, Rng};
use gyre_analysis::testutil::function_from_edges;
use gyre_analysis::{Cfg, DomTree, DomUpdate, DomUpdateError};
use gyre_ir::{Block, EntityRef, Function};

fn b(i: u32) -> Block {
    Block::new(i as usize)
}

/// A function under edit: `n` blocks (block 0 the entry) and an edge list, with its
/// current function, CFG and incrementally updated tree.
struct Subject {
    n: u32,
    edges: Vec<(u32, u32)>,
    func: Function,
    cfg: Cfg,
    dt: DomTree,
}

impl Subject {
    fn new(n: u32, edges: Vec<(u32, u32)>) -> Subject {
        let func = function_from_edges(n as usize, &edges);
        let cfg = Cfg::with_function(&func).expect("valid");
        let dt = DomTree::with_function(&func, &cfg);
        Subject {
            n,
            edges,
            func,
            cfg,
            dt,
        }
    }

    /// Successor lists of blocks `0..n`, in edge-list order.
    fn succ_lists(n: u32, edges: &[(u32, u32)]) -> Vec<Vec<Block>> {
        let mut v = vec![Vec::new(); n as usize];
        for &(x, y) in edges {
            v[x as usize].push(b(y));
        }
        v
    }

    /// Replace the function by `n` blocks and `edges`, bring the CFG up to date (with
    /// `update_block` per changed block, leaving its order stale, or from scratch), and
    /// apply the updates `diff_succs` reports for every changed block.
    fn edit(&mut self, n: u32, edges: Vec<(u32, u32)>, incremental_cfg: bool) -> Vec<DomUpdate> {
        self.edit_with_noise(n, edges, incremental_cfg, &[])
    }

    /// [`Subject::edit`], with `noise` (updates of pairs that did not change, of either
    /// kind) added to the batch: they must change nothing.
    fn edit_with_noise(
        &mut self,
        n: u32,
        edges: Vec<(u32, u32)>,
        incremental_cfg: bool,
        noise: &[DomUpdate],
    ) -> Vec<DomUpdate> {
        assert!(n >= self.n);
        let func = function_from_edges(n as usize, &edges);
        let mut updates = Vec::new();
        let mut changed = Vec::new();
        let (old, new) = (
            Self::succ_lists(n, &self.edges),
            Self::succ_lists(n, &edges),
        );
        for x in 0..n {
            let (old, new) = (&old[x as usize], &new[x as usize]);
            if old != new {
                DomUpdate::diff_succs(b(x), old, new, &mut updates);
                changed.push(x);
            }
        }
        if incremental_cfg {
            for &x in &changed {
                self.cfg.update_block(&func, b(x)).expect("valid");
            }
            for x in self.n..n {
                self.cfg.update_block(&func, b(x)).expect("valid");
            }
        } else {
            self.cfg = Cfg::with_function(&func).expect("valid");
        }
        updates.extend_from_slice(noise);
        self.dt
            .apply_updates(&func, &self.cfg, &updates)
            .expect("valid updates");
        self.func = func;
        self.n = n;
        self.edges = edges;
        updates
    }

    /// Compare with a fresh tree: idom, depth, reachability of every block, children as
    /// sets, `dominates` (all pairs when small, else a sample) both with the stale
    /// numbering (climbing) and after `renumber`.
    fn check(&mut self, rng: &mut Rng, what: &str) {
        let fresh_cfg = Cfg::with_function(&self.func).expect("valid");
        let fresh = DomTree::with_function(&self.func, &fresh_cfg);
        let n = self.n;
        for i in 0..n {
            let x = b(i);
            assert_eq!(self.dt.idom(x), fresh.idom(x), "{what}: idom of {x}");
            assert_eq!(self.dt.depth(x), fresh.depth(x), "{what}: depth of {x}");
            assert_eq!(
                self.dt.is_reachable(x),
                fresh.is_reachable(x),
                "{what}: {x}"
            );
            let mut k1: Vec<Block> = self.dt.children(x).collect();
            let mut k2: Vec<Block> = fresh.children(x).collect();
            k1.sort();
            k2.sort();
            assert_eq!(k1, k2, "{what}: children of {x}");
        }
        let pairs: Vec<(u32, u32)> = if n <= 40 {
            (0..n).flat_map(|i| (0..n).map(move |j| (i, j))).collect()
        } else {
            (0..2000).map(|_| (rng.below(n), rng.below(n))).collect()
        };
        let mut renumbered = self.dt.clone();
        renumbered.renumber();
        assert!(renumbered.is_numbered());
        for &(i, j) in &pairs {
            let want = fresh.dominates(b(i), b(j));
            assert_eq!(self.dt.dominates(b(i), b(j)), want, "{what}: {i} dom {j}");
            assert_eq!(renumbered.dominates(b(i), b(j)), want, "{what}: renumbered");
            assert_eq!(
                self.dt.nearest_common_dominator(b(i), b(j)),
                fresh.nearest_common_dominator(b(i), b(j)),
                "{what}: nca({i}, {j})"
            );
        }
        // The renumbered preorder is a preorder of the same tree.
        assert_eq!(renumbered.preorder().len(), fresh.preorder().len());
        for (k, &x) in renumbered.preorder().iter().enumerate() {
            let (pre, last) = renumbered.pre_last(x).expect("in the tree");
            assert_eq!(pre, k as u32 + 1);
            if let Some(p) = renumbered.idom(x) {
                let (pp, pl) = renumbered.pre_last(p).expect("in the tree");
                assert!(pp < pre && last <= pl);
            }
        }
    }
}

/// One random edit of the edge list (may add blocks). Returns the new block count.
fn random_edit(rng: &mut Rng, n: u32, edges: &mut Vec<(u32, u32)>) -> u32 {
    let pick = |rng: &mut Rng, edges: &Vec<(u32, u32)>| rng.below(edges.len() as u32) as usize;
    match rng.below(9) {
        // Insert an edge (sometimes parallel to an existing one).
        0 | 1 => {
            let e = if !edges.is_empty() && rng.below(4) == 0 {
                edges[pick(rng, edges)]
            } else {
                (rng.below(n), rng.below(n))
            };
            edges.push(e);
            n
        }
        // Delete one edge (one of several parallel ones, possibly).
        2 | 3 if !edges.is_empty() => {
            let k = pick(rng, edges);
            edges.swap_remove(k);
            n
        }
        // Redirect an edge.
        4 if !edges.is_empty() => {
            let k = pick(rng, edges);
            edges[k].1 = rng.below(n);
            n
        }
        // Split an edge with a new block.
        5 if !edges.is_empty() => {
            let k = pick(rng, edges);
            let (a, t) = edges[k];
            edges[k] = (a, n);
            edges.push((n, t));
            n + 1
        }
        // A new block before a block: some of its predecessors go through it.
        6 => {
            let h = rng.below(n);
            let mut any = false;
            for e in edges.iter_mut() {
                if e.1 == h && rng.below(2) == 0 {
                    e.1 = n;
                    any = true;
                }
            }
            if !any {
                edges.push((rng.below(n), n));
            }
            edges.push((n, h));
            n + 1
        }
        // Disconnect a block (as if taken out of the layout).
        7 => {
            let x = 1 + rng.below(n.max(2) - 1);
            edges.retain(|e| e.0 != x && e.1 != x);
            n
        }
        // A new block with random edges in and out.
        _ => {
            edges.push((rng.below(n), n));
            for _ in 0..rng.below(3) {
                edges.push((n, rng.below(n + 1)));
            }
            n + 1
        }
    }
}

/// A random starting CFG: reducible, irreducible or arbitrary edges.
fn random_start(rng: &mut Rng, seed: u64) -> (u32, Vec<(u32, u32)>) {
    let n = 2 + rng.below(40);
    let shape = match seed % 3 {
        0 => cfggen::random_reducible(n, seed),
        1 => cfggen::random_cfg(n, seed),
        _ => {
            let m = rng.below(3 * n);
            let edges = (0..m).map(|_| (rng.below(n), rng.below(n))).collect();
            cfggen::CfgShape {
                num_blocks: n,
                edges,
            }
        }
    };
    (shape.num_blocks, shape.edges)
}

#[test]
fn random_edit_sequences_match_a_fresh_tree() {
    let mut rng = Rng::new(12345);
    let mut batches = 0u64;
    let mut changed_reachability = 0;
    // `GYRE_DOMUPD_SEEDS=N` for a longer sweep.
    let seeds: u64 = std::env::var("GYRE_DOMUPD_SEEDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(400);
    for seed in 0..seeds {
        let (n, edges) = random_start(&mut rng, seed);
        let mut s = Subject::new(n, edges);
        s.check(&mut rng, "start");
        for step in 0..12 {
            let (mut n2, mut e2) = (s.n, s.edges.clone());
            // Batches of 1 to 4 edits, below the from-scratch threshold.
            for _ in 0..1 + rng.below(4) {
                n2 = random_edit(&mut rng, n2, &mut e2);
            }
            let before: Vec<bool> = (0..s.n).map(|i| s.dt.is_reachable(b(i))).collect();
            // Sometimes noise: updates of random pairs, changed or not, either kind.
            let noise: Vec<DomUpdate> = (0..2 * rng.below(2))
                .map(|_| {
                    let (x, y) = (b(rng.below(n2)), b(rng.below(n2)));
                    if rng.below(2) == 0 {
                        DomUpdate::Insert(x, y)
                    } else {
                        DomUpdate::Delete(x, y)
                    }
                })
                .collect();
            s.edit_with_noise(n2, e2, rng.below(2) == 0, &noise);
            changed_reachability += before
                .iter()
                .enumerate()
                .filter(|&(i, &r)| r != s.dt.is_reachable(b(i as u32)))
                .count();
            s.check(&mut rng, &format!("seed {seed} step {step}"));
            batches += 1;
        }
    }
    assert_eq!(batches, seeds * 12);
    assert!(changed_reachability > 100, "{changed_reachability}");
}

#[test]
fn single_updates_on_irreducible_graphs_match() {
    // One edit per batch on graphs that are irreducible from the start (two-entry
    // cycles), exercising every deletion case on its own.
    let mut rng = Rng::new(7);
    for seed in 0..300u64 {
        let n = 6 + rng.below(20);
        let mut edges = cfggen::random_cfg(n, seed).edges;
        // A cycle with two entries.
        let (x, y) = (1 + rng.below(n - 1), 1 + rng.below(n - 1));
        edges.extend_from_slice(&[(0, x), (0, y), (x, y), (y, x)]);
        let mut s = Subject::new(n, edges);
        for step in 0..15 {
            let (mut n2, mut e2) = (s.n, s.edges.clone());
            n2 = random_edit(&mut rng, n2, &mut e2);
            s.edit(n2, e2, true);
            s.check(&mut rng, &format!("seed {seed} step {step}"));
        }
    }
}

/// A sequence of `k` rotated loops: entry 0, then per loop preheader p, header h, body
/// l (l -> h back edge, l -> next preheader), and a return block.
fn loop_sequence(k: u32) -> (u32, Vec<(u32, u32)>) {
    let mut edges = vec![];
    for i in 0..k {
        let (p, h, l) = (1 + 3 * i, 2 + 3 * i, 3 + 3 * i);
        if i == 0 {
            edges.push((0, p));
        }
        edges.extend_from_slice(&[(p, h), (h, l), (l, h), (l, p + 3)]);
    }
    (3 * k + 2, edges)
}

fn replace(edges: &mut [(u32, u32)], old: (u32, u32), new: (u32, u32)) {
    let k = edges.iter().position(|&e| e == old).expect("edge present");
    edges[k] = new;
}

#[test]
fn split_edge() {
    let mut rng = Rng::new(1);
    let (n, edges) = loop_sequence(4);
    let mut s = Subject::new(n, edges);
    // Split the preheader edge of loop 1 (4 -> 5) with a new block, then a back edge.
    let mut e = s.edges.clone();
    replace(&mut e, (4, 5), (4, n));
    e.push((n, 5));
    let ups = s.edit(n + 1, e, true);
    assert_eq!(ups.len(), 3, "{ups:?}");
    assert_eq!(s.dt.idom(b(5)), Some(b(n)));
    assert_eq!(s.dt.idom(b(n)), Some(b(4)));
    s.check(&mut rng, "split preheader edge");
    let mut e = s.edges.clone();
    replace(&mut e, (6, 5), (6, n + 1));
    e.push((n + 1, 5));
    s.edit(n + 2, e, true);
    assert_eq!(s.dt.idom(b(n + 1)), Some(b(6)));
    s.check(&mut rng, "split back edge");
}

#[test]
fn preheader_and_guard_insertion() {
    let mut rng = Rng::new(2);
    // 0 -> 1, 0 -> 2, 1 -> 3, 2 -> 3: header 3 with two outside predecessors and a latch
    // 4 -> 3; exit 5.
    let mut s = Subject::new(
        6,
        vec![(0, 1), (0, 2), (1, 3), (2, 3), (3, 4), (4, 3), (4, 5)],
    );
    assert_eq!(s.dt.idom(b(3)), Some(b(0)));
    // Preheader 6 takes both outside predecessors.
    let mut e = s.edges.clone();
    replace(&mut e, (1, 3), (1, 6));
    replace(&mut e, (2, 3), (2, 6));
    e.push((6, 3));
    s.edit(7, e, true);
    assert_eq!(s.dt.idom(b(6)), Some(b(0)));
    assert_eq!(s.dt.idom(b(3)), Some(b(6)));
    s.check(&mut rng, "preheader");
    // Guard 7 before the preheader: 7 -> 6 or straight to the exit 5.
    let mut e = s.edges.clone();
    replace(&mut e, (1, 6), (1, 7));
    replace(&mut e, (2, 6), (2, 7));
    e.extend_from_slice(&[(7, 6), (7, 5)]);
    s.edit(8, e, false);
    assert_eq!(s.dt.idom(b(6)), Some(b(7)));
    assert_eq!(s.dt.idom(b(5)), Some(b(7)));
    s.check(&mut rng, "guard");
}

#[test]
fn redirect_branch() {
    let mut rng = Rng::new(3);
    // Diamond 0 -> {1, 2} -> 3 -> 4.
    let mut s = Subject::new(5, vec![(0, 1), (0, 2), (1, 3), (2, 3), (3, 4)]);
    // 2 -> 3 becomes 2 -> 4: 3 is now dominated by 1, 4 by 0.
    let mut e = s.edges.clone();
    replace(&mut e, (2, 3), (2, 4));
    let ups = s.edit(5, e, true);
    assert_eq!(
        ups,
        vec![DomUpdate::Delete(b(2), b(3)), DomUpdate::Insert(b(2), b(4))]
    );
    assert_eq!(s.dt.idom(b(3)), Some(b(1)));
    assert_eq!(s.dt.idom(b(4)), Some(b(0)));
    s.check(&mut rng, "redirect");
}

#[test]
fn clone_loop_blocks() {
    let mut rng = Rng::new(4);
    // 0 -> 1 (preheader) -> 2 (header) <-> 3 (latch) -> 4 (exit) -> 5.
    let mut s = Subject::new(6, vec![(0, 1), (1, 2), (2, 3), (3, 2), (3, 4), (4, 5)]);
    // Unswitch-like: the preheader branches to the loop or to a clone 6 <-> 7 that exits to
    // 4 as well.
    let mut e = s.edges.clone();
    e.extend_from_slice(&[(1, 6), (6, 7), (7, 6), (7, 4)]);
    s.edit(8, e, true);
    assert_eq!(s.dt.idom(b(4)), Some(b(1)));
    assert_eq!(s.dt.idom(b(7)), Some(b(6)));
    s.check(&mut rng, "clone");
}

#[test]
fn delete_loop() {
    let mut rng = Rng::new(5);
    let (n, edges) = loop_sequence(3);
    let mut s = Subject::new(n, edges);
    // Loop 1 (preheader 4, header 5, body 6, exit to 7): 4 jumps to 7, and the loop's
    // blocks lose their edges (taken out of the layout).
    let mut e = s.edges.clone();
    replace(&mut e, (4, 5), (4, 7));
    e.retain(|&(x, y)| x != 5 && x != 6 && y != 5 && y != 6);
    s.edit(n, e, true);
    assert!(!s.dt.is_reachable(b(5)) && !s.dt.is_reachable(b(6)));
    assert_eq!(s.dt.idom(b(7)), Some(b(4)));
    s.check(&mut rng, "delete loop");
    // Same with the removal reported as `removed_block` updates and the edges first
    // disconnected in one batch, then the preheader redirected in a second.
    let (n, edges) = loop_sequence(3);
    let mut s = Subject::new(n, edges);
    let mut ups = Vec::new();
    DomUpdate::removed_block(b(6), &[b(5)], &[b(5), b(7)], &mut ups);
    let mut e = s.edges.clone();
    e.retain(|&(x, y)| x != 6 && y != 6);
    let func = function_from_edges(n as usize, &e);
    s.cfg = Cfg::with_function(&func).expect("valid");
    s.dt.apply_updates(&func, &s.cfg, &ups).expect("valid");
    s.func = func;
    s.edges = e;
    s.check(&mut rng, "loop body removed");
}

#[test]
fn parallel_edges() {
    let mut rng = Rng::new(6);
    // 0 -> 1 twice (brif with both arms to 1), 0 -> 2, 1 -> 2.
    let mut s = Subject::new(3, vec![(0, 1), (0, 1), (0, 2), (1, 2)]);
    assert_eq!(s.dt.idom(b(2)), Some(b(0)));
    // Dropping one of the parallel edges changes nothing.
    let mut e = s.edges.clone();
    e.remove(0);
    s.dt.delete_edge(&s.func, &s.cfg, b(0), b(1))
        .expect("valid");
    s.edit(3, e, true);
    s.check(&mut rng, "one parallel edge deleted");
    // Dropping the other one makes 1 unreachable.
    let mut e = s.edges.clone();
    e.retain(|&x| x != (0, 1));
    s.edit(3, e, false);
    assert!(!s.dt.is_reachable(b(1)));
    s.check(&mut rng, "both deleted");
    // A br_table 0 -> [1, 1, 2, 1] brings it back.
    let mut e = s.edges.clone();
    e.retain(|&(x, _)| x != 0);
    e.extend_from_slice(&[(0, 1), (0, 1), (0, 2), (0, 1)]);
    s.edit(3, e, true);
    assert_eq!(s.dt.idom(b(1)), Some(b(0)));
    s.check(&mut rng, "br_table");
}

#[test]
fn reachability_changes_and_new_blocks() {
    let mut rng = Rng::new(8);
    // 0 -> 1; an unreachable region 2 -> 3 -> 4 -> 2, 4 -> 1.
    let mut s = Subject::new(5, vec![(0, 1), (2, 3), (3, 4), (4, 2), (4, 1)]);
    assert!(!s.dt.is_reachable(b(3)));
    // A new block 5 from the entry into the region: all of it becomes reachable, and 1
    // is now reached two ways.
    let mut e = s.edges.clone();
    e.extend_from_slice(&[(0, 5), (5, 3)]);
    s.edit(6, e, true);
    assert_eq!(s.dt.idom(b(3)), Some(b(5)));
    assert_eq!(s.dt.idom(b(2)), Some(b(4)));
    s.check(&mut rng, "region reachable");
    // Block ids far past the tree's size, through the single-edge entry points.
    let mut e = s.edges.clone();
    e.extend_from_slice(&[(1, 20), (20, 2)]);
    let func = function_from_edges(21, &e);
    s.cfg = Cfg::with_function(&func).expect("valid");
    s.dt.insert_edge(&func, &s.cfg, b(1), b(20)).expect("valid");
    s.dt.insert_edge(&func, &s.cfg, b(20), b(2)).expect("valid");
    s.func = func;
    s.n = 21;
    s.edges = e;
    assert_eq!(s.dt.idom(b(2)), Some(b(0)));
    s.check(&mut rng, "far block");
    // Cut the entry's edge to 5: the region stays reachable through 20.
    let mut e = s.edges.clone();
    e.retain(|&x| x != (0, 5));
    s.edit(21, e, true);
    assert!(!s.dt.is_reachable(b(5)));
    s.check(&mut rng, "cut");
}

#[test]
fn bad_input_is_an_error() {
    let f = function_from_edges(3, &[(0, 1), (1, 2)]);
    let cfg = Cfg::with_function(&f).expect("valid");
    let mut dt = DomTree::new();
    assert_eq!(
        dt.apply_updates(&f, &cfg, &[DomUpdate::Insert(b(0), b(2))]),
        Err(DomUpdateError::InvalidTree)
    );
    dt.compute(&f, &cfg);
    assert_eq!(
        dt.apply_updates(&f, &cfg, &[DomUpdate::Insert(b(0), b(9))]),
        Err(DomUpdateError::BlockOutOfRange(b(9)))
    );
    assert_eq!(
        dt.apply_updates(&f, &Cfg::new(), &[DomUpdate::Insert(b(0), b(1))]),
        Err(DomUpdateError::InvalidCfg)
    );
    // Nothing changed: still numbered, still right.
    assert!(dt.is_numbered());
    assert_eq!(dt.idom(b(2)), Some(b(1)));
}

#[test]
fn deep_chain_does_not_overflow_the_stack() {
    // 0 -> 1 -> ... -> n-1: a 200,000-deep tree. Split an edge in the middle (rebuilds the
    // lower half), cut the chain (half becomes unreachable) and reconnect it from the entry
    // (semi-NCA over the region), then query and renumber.
    let n = 200_000u32;
    let mut rng = Rng::new(9);
    let edges: Vec<(u32, u32)> = (0..n - 1).map(|i| (i, i + 1)).collect();
    let mut s = Subject::new(n, edges);
    let mid = n / 2;
    let mut e = s.edges.clone();
    replace(&mut e, (mid, mid + 1), (mid, n));
    e.push((n, mid + 1));
    s.edit(n + 1, e, true);
    assert_eq!(s.dt.idom(b(mid + 1)), Some(b(n)));
    assert_eq!(s.dt.depth(b(n - 1)), n + 1);
    assert!(s.dt.dominates(b(1), b(n - 1)));
    assert!(!s.dt.dominates(b(n - 1), b(1)));
    let mut e = s.edges.clone();
    e.retain(|&x| x != (mid, n));
    s.edit(n + 1, e, true);
    assert!(!s.dt.is_reachable(b(n - 1)));
    let mut e = s.edges.clone();
    e.push((0, n));
    s.edit(n + 1, e, true);
    assert_eq!(s.dt.idom(b(n)), Some(b(0)));
    assert_eq!(s.dt.depth(b(n - 1)), n - mid + 1);
    s.check(&mut rng, "deep chain");
}

#[test]
fn large_regions_fall_back_to_recomputation() {
    // A 3,002-block chain of loops: edits near the top move or rebuild most of the tree,
    // past the batch's work budget (an eighth of the blocks, at least 128), so the
    // updater stops part-way and recomputes; edits near the bottom stay incremental.
    let mut rng = Rng::new(10);
    let (n, edges) = loop_sequence(1000);
    let mut s = Subject::new(n, edges);
    for step in 0..40 {
        let (mut n2, mut e2) = (s.n, s.edges.clone());
        for _ in 0..1 + rng.below(3) {
            n2 = random_edit(&mut rng, n2, &mut e2);
        }
        s.edit(n2, e2, step % 2 == 0);
        s.check(&mut rng, &format!("step {step}"));
    }
}

#[test]
fn new_block_helper_lists_its_edges() {
    // 0 -> 1 -> 2; a new block 3 on a second path 0 -> 3 -> 2, reported with the helper
    // (plus the changed terminator of 0 with diff_succs: the pair 0 -> 3 twice, harmless).
    let mut rng = Rng::new(11);
    let mut s = Subject::new(3, vec![(0, 1), (1, 2)]);
    let e = vec![(0, 1), (0, 3), (1, 2), (3, 2)];
    let func = function_from_edges(4, &e);
    s.cfg.update_block(&func, b(0)).expect("valid");
    s.cfg.update_block(&func, b(3)).expect("valid");
    let mut ups = Vec::new();
    DomUpdate::new_block(&s.cfg, b(3), &mut ups);
    assert_eq!(
        ups,
        vec![DomUpdate::Insert(b(0), b(3)), DomUpdate::Insert(b(3), b(2))]
    );
    DomUpdate::diff_succs(b(0), &[b(1)], &[b(1), b(3)], &mut ups);
    s.dt.apply_updates(&func, &s.cfg, &ups).expect("valid");
    s.func = func;
    s.n = 4;
    s.edges = e;
    assert_eq!(s.dt.idom(b(2)), Some(b(0)));
    assert_eq!(s.dt.idom(b(3)), Some(b(0)));
    s.check(&mut rng, "new block");
}
