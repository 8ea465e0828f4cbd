//! Generators of control-flow graphs for benchmarks and property tests, shared with other
//! crates' benchmarks. Each returns a [`CfgShape`] (an edge list); turn it into a real
//! function with [`CfgShape::to_function`]. Generators are deterministic for a given seed
//! and use no recursion, so they scale to millions of blocks.

use crate::testutil::function_from_edges;
use gyre_ir::Function;

/// A CFG as `num_blocks` blocks (block 0 is the entry) and an edge list.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CfgShape {
    /// Number of blocks.
    pub num_blocks: u32,
    /// Edges `(from, to)`; the edges of one block are in branch order.
    pub edges: Vec<(u32, u32)>,
}

impl CfgShape {
    /// Build the function (see [`function_from_edges`]).
    pub fn to_function(&self) -> Function {
        function_from_edges(self.num_blocks as usize, &self.edges)
    }
}

/// SplitMix64: a tiny deterministic generator, enough for shapes.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    /// A generator from a seed.
    pub fn new(seed: u64) -> Rng {
        Rng(seed ^ 0x9E37_79B9_7F4A_7C15)
    }
    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in `0..n` (`n > 0`).
    pub fn below(&mut self, n: u32) -> u32 {
        (((self.next_u64() >> 32) * u64::from(n)) >> 32) as u32
    }
}

/// A sequence of 3-deep rotated loop nests (6 blocks each), between an entry block and a
/// return block, padded with straight-line blocks to exactly `num_blocks` (at least 2).
pub fn loop_nest_sequence(num_blocks: u32) -> CfgShape {
    let n = num_blocks.max(2);
    let mut edges = Vec::with_capacity(n as usize * 2);
    let nests = (n - 2) / 6;
    let mut b = 1;
    edges.push((0, 1));
    for _ in 0..nests {
        let (h1, h2, h3, l3, l2, l1) = (b, b + 1, b + 2, b + 3, b + 4, b + 5);
        edges.extend_from_slice(&[
            (h1, h2),
            (h2, h3),
            (h3, l3),
            (l3, h3),
            (l3, l2),
            (l2, h2),
            (l2, l1),
            (l1, h1),
            (l1, b + 6),
        ]);
        b += 6;
    }
    while b < n - 1 {
        edges.push((b, b + 1));
        b += 1;
    }
    CfgShape {
        num_blocks: n,
        edges,
    }
}

/// One loop nest `depth` deep: entry, `depth` headers, `depth` latches (innermost first),
/// exit: `2 * depth + 2` blocks.
pub fn deep_nest(depth: u32) -> CfgShape {
    let d = depth.max(1);
    let header = |i: u32| 1 + i;
    let latch = |i: u32| 1 + d + (d - 1 - i);
    let exit = 2 * d + 1;
    let mut edges = vec![(0, header(0))];
    for i in 0..d - 1 {
        edges.push((header(i), header(i + 1)));
    }
    edges.push((header(d - 1), latch(d - 1)));
    for i in (0..d).rev() {
        edges.push((latch(i), header(i)));
        edges.push((latch(i), if i > 0 { latch(i - 1) } else { exit }));
    }
    CfgShape {
        num_blocks: 2 * d + 2,
        edges,
    }
}

/// A chain of `num_blocks - 1` blocks (at least 2 blocks in all) where every block also
/// branches to one shared exit block, the last: the shape of repeated `if (..) goto fail`
/// checks. Every chain block's successors are `[next, exit]`.
pub fn exit_ladder(num_blocks: u32) -> CfgShape {
    let n = num_blocks.max(2);
    let exit = n - 1;
    let mut edges: Vec<(u32, u32)> = (0..n - 2).flat_map(|b| [(b, b + 1), (b, exit)]).collect();
    edges.push((n - 2, exit));
    CfgShape {
        num_blocks: n,
        edges,
    }
}

/// [`exit_ladder`] laid out against the chain: `0 -> n-2 -> n-3 -> ... -> 1`, every chain
/// block also branching to the shared exit `n-1` (at least 3 blocks in all). The exit's
/// predecessors, read last to first, come in ascending RPO, so a Cooper–Harvey–Kennedy
/// sweep would climb the whole chain once per predecessor (quadratic): this is the shape
/// that exercises the dominator tree's semi-NCA fallback. Successors are `[next, exit]`.
pub fn exit_ladder_backwards(num_blocks: u32) -> CfgShape {
    let n = num_blocks.max(3);
    let e = n - 1;
    let mut edges = vec![(0, n - 2), (0, e)];
    for b in (1..n - 1).rev() {
        if b > 1 {
            edges.push((b, b - 1));
        }
        edges.push((b, e));
    }
    CfgShape {
        num_blocks: n,
        edges,
    }
}

/// A random reducible CFG of exactly `num_blocks` blocks (at least 1), grown from one block
/// by reducibility-preserving steps (the inverses of the T1/T2 reductions, Hecht–Ullman):
/// splitting a block, inserting an if-diamond or an early return after it, and adding back
/// edges from a block to one of its dominators (self-loops included). Blocks are numbered
/// in reverse post-order, as a compiler would lay them out.
pub fn random_reducible(num_blocks: u32, seed: u64) -> CfgShape {
    let n = num_blocks.max(1) as usize;
    let mut rng = Rng::new(seed);
    let mut succs: Vec<Vec<u32>> = vec![Vec::new()];
    // Some dominator of each block (not necessarily the immediate one): splitting and
    // adding back edges never break a dominance relation.
    let mut dom_parent: Vec<u32> = vec![0];
    while succs.len() < n {
        let x = rng.below(succs.len() as u32) as usize;
        let room = n - succs.len();
        let r = rng.below(100);
        if r < 25 && room >= 2 {
            // Diamond: x -> {y, z}, y -> z, z takes x's old successors.
            let (y, z) = (succs.len() as u32, succs.len() as u32 + 1);
            let old = core::mem::take(&mut succs[x]);
            succs[x] = vec![y, z];
            succs.push(vec![z]);
            succs.push(old);
            dom_parent.extend_from_slice(&[x as u32, x as u32]);
        } else if r < 30 && room >= 2 {
            // Early return: x -> {y, ret}, y takes x's old successors.
            let (y, ret) = (succs.len() as u32, succs.len() as u32 + 1);
            let old = core::mem::take(&mut succs[x]);
            succs[x] = vec![y, ret];
            succs.push(old);
            succs.push(Vec::new());
            dom_parent.extend_from_slice(&[x as u32, x as u32]);
        } else if r < 55 && succs[x].len() < 3 {
            // Back edge to a dominator a few steps up (0 steps: a self-loop).
            let mut d = x as u32;
            for _ in 0..rng.below(6) {
                d = dom_parent[d as usize];
            }
            succs[x].push(d);
        } else {
            // Split: x -> y, y takes x's old successors.
            let y = succs.len() as u32;
            let old = core::mem::take(&mut succs[x]);
            succs[x] = vec![y];
            succs.push(old);
            dom_parent.push(x as u32);
        }
    }
    renumber_rpo(&succs)
}

/// How many distinct functions a benchmark of a random family should rotate over at
/// `num_blocks` blocks: `clamp(100_000 / num_blocks, 1, 16)` (16 at 1k blocks, 10 at 10k,
/// 1 from 100k on).
///
/// Timing one random function repeated thousands of times flatters small sizes twice: its
/// data stays in L1/L2 across repetitions, and the branch predictor learns its (random)
/// branch outcomes. Quiet-machine figures on `random_reducible` at 10k blocks, one function
/// against ten distinct ones, ns/block: `Cfg::compute` 12 against 26, the dominator tree 8
/// against 13, the loops 7 against 15 (at 1k the sixteen functions still fit in L2 and
/// differ little from one). A compiler analyses each function once, so the figure
/// that compares sizes honestly rotates over distinct functions of the same family and
/// size, and divides the total time by their total blocks. From 100k blocks on one function
/// no longer fits the caches nor the predictor, so rotating changes nothing and one
/// function (fewer copies in memory) suffices. The deterministic families
/// (`loop_nest_sequence`, `deep_nest`, `exit_ladder`) are periodic: nothing to rotate over.
pub fn distinct_functions(num_blocks: u32) -> usize {
    (100_000 / num_blocks.max(1) as usize).clamp(1, 16)
}

/// The [`random_reducible`] shapes a benchmark at `num_blocks` blocks times:
/// [`distinct_functions`]`(num_blocks)` of them, with seeds `seed`, `seed + 1`, ...
pub fn random_reducible_set(num_blocks: u32, seed: u64) -> Vec<CfgShape> {
    (0..distinct_functions(num_blocks) as u64)
        .map(|i| random_reducible(num_blocks, seed.wrapping_add(i)))
        .collect()
}

/// A random CFG of `num_blocks` blocks (at least 1) with arbitrary edges: irreducible
/// cycles, self-loops, unreachable blocks, repeated switch targets and several returns.
/// Targets are mostly near the source (as in real code), sometimes anywhere.
pub fn random_cfg(num_blocks: u32, seed: u64) -> CfgShape {
    let n = num_blocks.max(1);
    let mut rng = Rng::new(seed);
    let mut edges = Vec::new();
    for b in 0..n {
        let k = match rng.below(20) {
            0 => 0,
            1..=8 => 1,
            9..=17 => 2,
            _ => 3 + rng.below(3),
        };
        for _ in 0..k {
            let t = if rng.below(4) == 0 {
                rng.below(n)
            } else {
                let lo = b.saturating_sub(4);
                let hi = (b + 6).min(n - 1);
                lo + rng.below(hi - lo + 1)
            };
            edges.push((b, t));
        }
    }
    CfgShape {
        num_blocks: n,
        edges,
    }
}

/// Renumber the blocks reachable from block 0 in reverse post-order (iterative DFS,
/// first successor first in the order); unreachable blocks are dropped.
fn renumber_rpo(succs: &[Vec<u32>]) -> CfgShape {
    const NEW: u32 = u32::MAX;
    let mut post = Vec::with_capacity(succs.len());
    let mut seen = vec![false; succs.len()];
    let mut stack: Vec<(u32, usize)> = vec![(0, succs[0].len())];
    seen[0] = true;
    while let Some(top) = stack.last_mut() {
        if top.1 == 0 {
            post.push(top.0);
            stack.pop();
            continue;
        }
        top.1 -= 1;
        let s = succs[top.0 as usize][top.1];
        if !seen[s as usize] {
            seen[s as usize] = true;
            stack.push((s, succs[s as usize].len()));
        }
    }
    let mut num = vec![NEW; succs.len()];
    for (i, &b) in post.iter().rev().enumerate() {
        num[b as usize] = i as u32;
    }
    let mut edges = Vec::new();
    for &b in post.iter().rev() {
        for &s in &succs[b as usize] {
            edges.push((num[b as usize], num[s as usize]));
        }
    }
    CfgShape {
        num_blocks: post.len() as u32,
        edges,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distinct_functions_rotates_small_sizes_only() {
        assert_eq!(distinct_functions(1_000), 16);
        assert_eq!(distinct_functions(10_000), 10);
        assert_eq!(distinct_functions(100_000), 1);
        assert_eq!(distinct_functions(1_000_000), 1);
        assert_eq!(distinct_functions(0), 16);
    }

    #[test]
    fn random_reducible_set_is_distinct_and_sized() {
        for n in [1_000, 10_000, 100_000] {
            let set = random_reducible_set(n, 0x5eed);
            assert_eq!(set.len(), distinct_functions(n));
            for (i, s) in set.iter().enumerate() {
                assert_eq!(s.num_blocks, n, "shape {i} at {n}");
                assert_eq!(*s, random_reducible(n, 0x5eed + i as u64));
                assert!(
                    set[..i].iter().all(|t| t.edges != s.edges),
                    "shape {i} at {n} repeats an earlier one"
                );
            }
        }
    }
}
