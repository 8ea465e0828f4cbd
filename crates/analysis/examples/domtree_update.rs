//! ns per edit of [`DomTree::apply_updates`] on the edits loop passes make, against the
//! function size: `cargo run --release -p gyre-analysis --example domtree_update [sizes...]`
//! (default 1000 10000 100000 blocks).
//!
//! Two families of `k` rotated loops (preheader `p`, header `h`, latch `l`; `p -> h -> l ->
//! h`): `wide` (the entry switches to every preheader, every loop exits to a block of its
//! own that returns: small dominator subtrees) and `chain` (each loop exits to the next
//! preheader: every later loop hangs below the earlier ones in the dominator tree). Edits, each on 64
//! loops spread over the function: split the preheader edge, insert a guard before the
//! preheader, redirect the header's branch to the exit, clone the loop (the preheader
//! branches to the copy), delete the loop (the preheader jumps to the exit). Each edit is
//! timed alone (the CFG, the edited function and a copy of the tree are prepared
//! beforehand), minimum of 3 runs, and averaged over the loops; `compute` is a full
//! recomputation for comparison. Then a whole pass: every preheader edge split in turn
//! on one tree, the `Cfg` kept up to date with `update_block` (checked against a fresh
//! tree at the end).

use gyre_analysis::testutil::function_from_edges;
use gyre_analysis::{Cfg, DomTree, DomUpdate};
use gyre_ir::{Block, EntityRef};
use std::time::Instant;

fn b(i: u32) -> Block {
    Block::new(i as usize)
}

struct Family {
    n: u32,
    edges: Vec<(u32, u32)>,
    /// Per loop: preheader, its predecessor, and its exit target.
    loops: Vec<(u32, u32, u32)>,
}

fn family(chain: bool, size: u32) -> Family {
    // chain: 0, then per loop p h l, then the return block. wide: 0, then per loop p h l
    // and its exit block (which returns).
    let per = if chain { 3 } else { 4 };
    let k = (size - 2) / per;
    let mut edges = Vec::new();
    let mut loops = Vec::new();
    for i in 0..k {
        let (p, h, l) = (1 + per * i, 2 + per * i, 3 + per * i);
        let exit = p + 3;
        let pred = if chain && i > 0 { p - 1 } else { 0 };
        if pred == 0 {
            edges.push((0, p));
        }
        edges.extend_from_slice(&[(p, h), (h, l), (l, h), (l, exit)]);
        loops.push((p, pred, exit));
    }
    Family {
        n: per * k + 2,
        edges,
        loops,
    }
}

fn replace(edges: &mut [(u32, u32)], old: (u32, u32), new: (u32, u32)) {
    let k = edges.iter().position(|&e| e == old).expect("edge");
    edges[k] = new;
}

/// The edited edge list and block count for `edit` on the loop `(p, pred, exit)`.
fn edited(f: &Family, edit: &str, (p, pred, exit): (u32, u32, u32)) -> (u32, Vec<(u32, u32)>) {
    let (h, l, new) = (p + 1, p + 2, f.n);
    let mut e = f.edges.clone();
    match edit {
        "split" => {
            replace(&mut e, (p, h), (p, new));
            e.push((new, h));
            (f.n + 1, e)
        }
        "guard" => {
            replace(&mut e, (pred, p), (pred, new));
            e.extend_from_slice(&[(new, p), (new, exit)]);
            (f.n + 1, e)
        }
        "redirect" => {
            replace(&mut e, (h, l), (h, exit));
            (f.n, e)
        }
        "clone" => {
            let (h2, l2) = (new, new + 1);
            e.extend_from_slice(&[(p, h2), (h2, l2), (l2, h2), (l2, exit)]);
            (f.n + 2, e)
        }
        "delete" => {
            replace(&mut e, (p, h), (p, exit));
            e.retain(|&(x, y)| x != h && x != l && y != h && y != l);
            (f.n, e)
        }
        _ => unreachable!(),
    }
}

fn updates(n: u32, old: &[(u32, u32)], new: &[(u32, u32)]) -> Vec<DomUpdate> {
    let lists = |edges: &[(u32, u32)]| {
        let mut v = vec![Vec::new(); n as usize];
        for &(x, y) in edges {
            v[x as usize].push(b(y));
        }
        v
    };
    let (o, w) = (lists(old), lists(new));
    let mut out = Vec::new();
    for x in 0..n as usize {
        if o[x] != w[x] {
            DomUpdate::diff_succs(b(x as u32), &o[x], &w[x], &mut out);
        }
    }
    out
}

fn main() {
    let sizes: Vec<u32> = std::env::args()
        .skip(1)
        .filter_map(|s| s.parse().ok())
        .collect();
    let sizes = if sizes.is_empty() {
        vec![1_000, 10_000, 100_000]
    } else {
        sizes
    };
    println!("family  blocks  edit      updates  ns/edit  (compute ns)");
    let mut pass_rows = Vec::new();
    for chain in [false, true] {
        for &size in &sizes {
            let f = family(chain, size);
            let func = function_from_edges(f.n as usize, &f.edges);
            let cfg = Cfg::with_function(&func).expect("valid");
            let mut base = DomTree::with_function(&func, &cfg);
            let t = Instant::now();
            base.compute(&func, &cfg);
            let compute_ns = t.elapsed().as_nanos();
            // Build the sibling links once (a no-op update), as a pass's first edit would.
            let (p0, _, _) = f.loops[0];
            base.apply_updates(&func, &cfg, &[DomUpdate::Insert(b(p0), b(p0 + 1))])
                .expect("valid");
            pass_rows.push(pass(&f, chain));
            for edit in ["split", "guard", "redirect", "clone", "delete"] {
                let step = (f.loops.len() / 64).max(1);
                let (mut total, mut count, mut nups) = (0u128, 0u128, 0usize);
                for &lp in f.loops.iter().step_by(step) {
                    let (n2, e2) = edited(&f, edit, lp);
                    let ups = updates(n2, &f.edges, &e2);
                    let func2 = function_from_edges(n2 as usize, &e2);
                    let cfg2 = Cfg::with_function(&func2).expect("valid");
                    let mut best = u128::MAX;
                    for _ in 0..3 {
                        let mut dt = base.clone();
                        // A clone has no spare capacity; a pass's tree grows geometrically.
                        dt.reserve_blocks(n2 as usize + 16);
                        let t = Instant::now();
                        dt.apply_updates(&func2, &cfg2, &ups).expect("valid");
                        best = best.min(t.elapsed().as_nanos());
                        std::hint::black_box(&dt);
                    }
                    total += best;
                    count += 1;
                    nups += ups.len();
                }
                println!(
                    "{:6}  {:6}  {:8}  {:7.1}  {:7}  ({compute_ns})",
                    if chain { "chain" } else { "wide" },
                    f.n,
                    edit,
                    nups as f64 / count as f64,
                    total / count,
                );
            }
        }
    }
    println!();
    println!("a pass splitting every preheader edge, one loop after the other, with");
    println!("Cfg::update_block per changed block (no recomputation between loops):");
    println!("family  blocks  loops  ns/loop (update_block + apply_updates)");
    for row in pass_rows {
        println!("{row}");
    }
}

/// Split the preheader edge of every loop in turn on one tree, as a pass would: the
/// final function holds every new block; the `Cfg` is brought to each intermediate state
/// with `update_block` on the two blocks one split changes.
fn pass(f: &Family, chain: bool) -> String {
    let k = f.loops.len() as u32;
    let mut e = f.edges.clone();
    for (i, &(p, _, _)) in f.loops.iter().enumerate() {
        let new = f.n + i as u32;
        replace(&mut e, (p, p + 1), (p, new));
        e.push((new, p + 1));
    }
    let old = function_from_edges(f.n as usize, &f.edges);
    let fin = function_from_edges((f.n + k) as usize, &e);
    let mut cfg = Cfg::with_function(&old).expect("valid");
    let mut dt = DomTree::with_function(&old, &cfg);
    let t = Instant::now();
    for (i, &(p, _, _)) in f.loops.iter().enumerate() {
        let new = f.n + i as u32;
        cfg.update_block(&fin, b(p)).expect("valid");
        cfg.update_block(&fin, b(new)).expect("valid");
        let ups = [
            DomUpdate::Delete(b(p), b(p + 1)),
            DomUpdate::Insert(b(p), b(new)),
            DomUpdate::Insert(b(new), b(p + 1)),
        ];
        dt.apply_updates(&fin, &cfg, &ups).expect("valid");
    }
    let ns = t.elapsed().as_nanos() / u128::from(k);
    // The result is the tree of the final function.
    let fresh = DomTree::with_function(&fin, &Cfg::with_function(&fin).expect("valid"));
    for i in 0..f.n + k {
        assert_eq!(dt.idom(b(i)), fresh.idom(b(i)));
    }
    format!(
        "{:6}  {:6}  {:5}  {ns}",
        if chain { "chain" } else { "wide" },
        f.n,
        k
    )
}
