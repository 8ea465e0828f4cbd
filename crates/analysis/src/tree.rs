//! Dominator-tree construction shared by the dominator and the post-dominator tree, and
//! the tree it produces.
//!
//! **Fast path: one pass of Cooper–Harvey–Kennedy, then a check.** K. D. Cooper,
//! T. J. Harvey, K. Kennedy, "A Simple, Fast Dominance Algorithm", 2001. Nodes are
//! numbered in an order where every non-root node comes after its parent in some DFS tree
//! (a reverse post-order; for the dominator tree, the [`Cfg`](crate::Cfg)'s own RPO, so
//! no DFS at all). One sweep in that order sets `idom(w)` to the nearest common ancestor
//! (the `intersect` climb over the idoms found so far) of the predecessors numbered below
//! `w`; a predecessor `u` numbered above `w` is skipped and the edge recorded. This is
//! chaotic iteration of the dominance equations from "everything" (CHK §2), so its result
//! is the dominator tree exactly when it is a fixed point: when every skipped edge
//! `u -> w` has `idom(w)` an ancestor of `u` (`intersect` with `u` would change nothing),
//! checked in O(1) per edge with the preorder intervals once the tree is numbered. In a
//! reducible CFG every skipped edge is a back edge, whose target dominates its source, so
//! the check passes; it passes on many irreducible graphs too.
//!
//! **Fallback: semi-NCA.** L. Georgiadis, "Linear-Time Algorithms for Dominators and
//! Related Problems", PhD thesis, Princeton 2005 (also LLVM / Cranelift). When the check
//! fails, the idoms are recomputed: a DFS in preorder, semidominators in reverse preorder
//! with Lengauer–Tarjan's `eval` (path compression on an explicit stack, link implicit),
//! then `idom(w)` climbs from `parent(w)` while above `semi(w)`. The post-dominator tree
//! also calls semi-NCA directly (`Builder::run_semi`) when the CHK sweep is unlikely
//! to pass (see the `postdom` module).
//!
//! **Numbering.** Either way the tree is then numbered in its own preorder, children in
//! the order of the numbering (for the dominator tree: RPO of the CFG), without another
//! DFS: subtree sizes in one reverse sweep, then each node takes the next free slot of its
//! idom in a forward sweep. `a` dominates `b` iff `pre(a) <= pre(b) <= last(a)`.
//!
//! **Cost.** The fast path is O(n + m + Σ climb lengths). Climbs are short on code-like
//! CFGs but not always: a chain of early exits into one shared block (`if (..) goto err`
//! n times) climbs the chain once per exit, O(n²), if the exit's predecessors are read in
//! layout order. Read last to first (deepest first in laid-out code) each of those climbs
//! is one step: exit-ladder went from 24 to 8 ns/block at 100k. Other orders can still be
//! quadratic (the same ladder laid out backwards), so the climbs also get a budget of n + m
//! steps (the code-like generated families stay within it, tested at 20k–50k blocks); past
//! it the sweep is abandoned for semi-NCA, keeping the fast path linear.
//! The fallback is O(m log n) plus that NCA step. Why CHK first: semi-NCA
//! needs a DFS and a second sweep over every predecessor in a preorder unrelated to block
//! order, while the one CHK sweep runs in RPO, which is close to block order in laid-out
//! code (measured: the DFS was a third and the semidominator sweep two fifths of the old
//! semi-NCA dominator tree). The sweeps keep `idom` in a dense `u32` array (the climbs
//! touch nothing else) and the numbering data in one 16-byte record per node (one cache
//! line per random access to a parent). No allocation once the buffers have grown.

use cranelift_entity::EntityRef;
use gyre_ir::Block;

/// No node (the virtual root, or not in the tree).
pub(crate) const NONE: u32 = u32::MAX;

/// One direction of the CFG's edges in CSR form.
#[derive(Clone, Copy)]
pub(crate) struct Adj<'a> {
    pub ranges: &'a [[u32; 2]],
    pub targets: &'a [Block],
}

impl<'a> Adj<'a> {
    #[inline]
    pub fn edges(&self, b: usize) -> &'a [Block] {
        let [s, e] = self.ranges[b];
        &self.targets[s as usize..e as usize]
    }
}

/// A DFS forest in preorder (the input of semi-NCA).
#[derive(Clone, Default)]
pub(crate) struct Preorder {
    /// Per block: preorder number, 0 = not visited.
    pre: Vec<u32>,
    /// Per preorder number: the block (`NONE` for the virtual root 0).
    block: Vec<u32>,
    /// Per preorder number: the DFS parent (0 for the roots and the virtual root).
    parent: Vec<u32>,
    /// DFS frames `(preorder number, next edge, end)` of the nodes above the current one.
    stack: Vec<(u32, u32, u32)>,
}

impl Preorder {
    pub fn reset(&mut self, num_blocks: usize) {
        self.pre.clear();
        self.pre.resize(num_blocks, 0);
        self.block.clear();
        self.block.push(NONE);
        self.parent.clear();
        self.parent.push(0);
    }

    /// Number of visited blocks.
    pub fn num_visited(&self) -> usize {
        self.block.len() - 1
    }

    #[inline]
    pub fn is_visited(&self, b: Block) -> bool {
        self.pre[b.index()] != 0
    }

    /// DFS from `root` (a child of the virtual root) along `adj`, edges last to first.
    /// The current frame lives in locals; the stack holds the frames above it.
    pub fn dfs(&mut self, root: Block, adj: Adj<'_>) {
        if self.pre[root.index()] != 0 {
            return;
        }
        let Adj { ranges, targets } = adj;
        let pre = &mut self.pre[..];
        let block = &mut self.block;
        let parent = &mut self.parent;
        let stack = &mut self.stack;
        stack.clear();
        let mut v = block.len() as u32;
        pre[root.index()] = v;
        block.push(root.as_u32());
        parent.push(0);
        let [mut end, mut i] = ranges[root.index()];
        loop {
            if i > end {
                i -= 1;
                let t = targets[i as usize].index();
                if pre[t] == 0 {
                    let n = block.len() as u32;
                    pre[t] = n;
                    block.push(t as u32);
                    parent.push(v);
                    stack.push((v, i, end));
                    v = n;
                    [end, i] = ranges[t];
                }
            } else {
                match stack.pop() {
                    Some((pv, pi, pe)) => (v, i, end) = (pv, pi, pe),
                    None => break,
                }
            }
        }
    }
}

/// A numbering of the nodes for the fast path: index 0 is the virtual root, index `i >= 1`
/// is block `blocks[i - 1]`. The blocks form segments, one per root (a child of the
/// virtual root), each starting with its root; within a segment every block comes after
/// its parent in a DFS tree along `forward`.
pub(crate) struct Numbering<'a, F: Fn(usize) -> u32> {
    /// The blocks in order.
    pub blocks: &'a [Block],
    /// Index of a block (`0` = not numbered).
    pub num: F,
    /// The index of each root, increasing.
    pub roots: &'a [u32],
    /// The edges the DFS followed (successors for the dominator tree).
    pub forward: Adj<'a>,
    /// The reverse edges (predecessors for the dominator tree).
    pub backward: Adj<'a>,
}

/// An order of the blocks built by DFS, for when the caller has none (the post-dominator
/// tree; the dominator tree of a [`Cfg`](crate::Cfg) whose order is stale).
#[derive(Clone, Default)]
pub(crate) struct DfsOrder {
    /// Blocks in order: one reverse post-order segment per root, roots in call order.
    blocks: Vec<Block>,
    /// Per block: index (`blocks[num - 1]`), 0 = not visited; `VISITED` until `finish`.
    num: Vec<u32>,
    /// The index of each root.
    roots: Vec<u32>,
    stack: Vec<(u32, u32, u32)>,
}

impl DfsOrder {
    const VISITED: u32 = u32::MAX;

    pub fn reset(&mut self, num_blocks: usize) {
        self.blocks.clear();
        self.num.clear();
        self.num.resize(num_blocks, 0);
        self.roots.clear();
    }

    #[inline]
    pub fn is_visited(&self, b: Block) -> bool {
        self.num[b.index()] != 0
    }

    /// Number of visited blocks.
    pub fn num_visited(&self) -> usize {
        self.blocks.len()
    }

    /// DFS from `root` along `adj`, edges last to first (as the [`Cfg`](crate::Cfg)'s
    /// RPO), appending the reverse post-order of the blocks it newly reaches as a new
    /// segment. The current frame lives in locals; the stack holds the frames above it.
    pub fn add_root(&mut self, root: Block, adj: Adj<'_>) {
        if self.num[root.index()] != 0 {
            return;
        }
        let Adj { ranges, targets } = adj;
        let mark = &mut self.num[..];
        let out = &mut self.blocks;
        let stack = &mut self.stack;
        stack.clear();
        let start = out.len();
        self.roots.push(start as u32 + 1);
        let mut v = root.as_u32();
        mark[v as usize] = Self::VISITED;
        let [mut end, mut i] = ranges[v as usize];
        loop {
            if i > end {
                i -= 1;
                let t = targets[i as usize].as_u32();
                let m = &mut mark[t as usize];
                if *m == 0 {
                    *m = Self::VISITED;
                    stack.push((v, i, end));
                    v = t;
                    [end, i] = ranges[t as usize];
                }
            } else {
                out.push(Block::from_u32(v));
                match stack.pop() {
                    Some((pv, pi, pe)) => (v, i, end) = (pv, pi, pe),
                    None => break,
                }
            }
        }
        out[start..].reverse();
    }

    /// Number the blocks (call once, after the last `add_root`).
    pub fn finish(&mut self) {
        for (k, b) in self.blocks.iter().enumerate() {
            self.num[b.index()] = k as u32 + 1;
        }
    }

    /// The numbering, with the edges the DFS followed (`forward`) and their reverse.
    pub fn numbering<'a>(
        &'a self,
        forward: Adj<'a>,
        backward: Adj<'a>,
    ) -> Numbering<'a, impl Fn(usize) -> u32 + 'a> {
        let num = &self.num[..];
        Numbering {
            blocks: &self.blocks,
            num: move |b: usize| num[b],
            roots: &self.roots,
            forward,
            backward,
        }
    }
}

/// What the numbering sweeps read together about one node, at its index.
#[derive(Clone, Copy, Default)]
#[repr(C, align(16))]
struct Info {
    block: u32,
    /// Subtree size.
    size: u32,
    /// While numbering: the next free preorder slot (0-based) among the children; after
    /// it, the largest preorder number in the subtree.
    next: u32,
    depth: u32,
}

/// Scratch state of the tree construction, reused across computations.
#[derive(Clone, Default)]
pub(crate) struct Builder {
    /// Per index: the immediate dominator's index (0 for roots).
    idom: Vec<u32>,
    info: Vec<Info>,
    /// Skipped edges `[w, u]` (indices) of the sweep, checked after numbering.
    skipped: Vec<[u32; 2]>,
    /// The numbers of one node's earlier predecessors, deepest first (the sweep).
    preds: Vec<u32>,
    semi: SemiNca,
    /// How many computations fell back to semi-NCA (for tests).
    pub fallbacks: u32,
}

impl Builder {
    /// Build the tree of the nodes of `order` into `tree` (`num_blocks` block slots).
    pub fn run<F: Fn(usize) -> u32>(
        &mut self,
        order: &Numbering<'_, F>,
        tree: &mut Tree,
        num_blocks: usize,
    ) {
        if self.one_pass(order) {
            self.number(tree, num_blocks);
            if self.check() {
                return;
            }
        }
        self.fallbacks += 1;
        self.semi_nca(order);
        self.number(tree, num_blocks);
    }

    /// The CHK sweep. Returns `false` if a node has no predecessor before it (only with
    /// a stale order) or the climbs exceed their budget.
    fn one_pass<F: Fn(usize) -> u32>(&mut self, order: &Numbering<'_, F>) -> bool {
        let len = order.blocks.len() + 1;
        self.idom.clear();
        self.idom.resize(len, 0);
        self.info.clear();
        self.info.resize(len, Info::default());
        self.skipped.clear();
        let idom = &mut self.idom[..];
        let info = &mut self.info[..];
        let skipped = &mut self.skipped;
        let preds = &mut self.preds;
        let blocks = order.blocks;
        let num = &order.num;
        // Climb budget: CHK's climbs are short on code-like CFGs, but a ladder of early
        // exits into one block climbs the whole chain once per predecessor (quadratic).
        // Past a linear number of steps semi-NCA is cheaper, so give up and fall back.
        let mut budget = CLIMB_BUDGET_PER_ITEM * (len + order.backward.targets.len()) as u64;
        for (k, &root) in order.roots.iter().enumerate() {
            let end = order.roots.get(k + 1).map_or(len, |&r| r as usize);
            let root = root as usize;
            // idom[root] is already 0.
            info[root] = Info {
                block: blocks[root - 1].as_u32(),
                size: 1,
                next: 0,
                depth: 0,
            };
            for w in root + 1..end {
                let b = blocks[w - 1];
                let mut d = NONE;
                // The earlier predecessors from the latest in the order to the first: a
                // later node tends to be deeper, so the running NCA `d` only moves up and
                // each climb is short. In any other order a ladder of early exits into one
                // block (`if (..) goto err`) climbs the whole chain once per exit, and
                // the predecessor lists follow the layout, which need not follow the order
                // (a ladder laid out backwards): nodes with more than two are sorted.
                let edges = order.backward.edges(b.index());
                // A predecessor's number if it comes earlier; a later one is skipped for
                // the check (an edge from the node itself needs none).
                let mut earlier_of = |p: Block| -> Option<u32> {
                    let v = num(p.index());
                    if v == 0 || v as usize == w {
                        return None;
                    }
                    if v as usize > w {
                        skipped.push([w as u32, v]);
                        return None;
                    }
                    Some(v)
                };
                let mut two = [NONE; 2];
                let earlier: &[u32] = if edges.len() <= 2 {
                    // Most nodes: no buffer, the two in order by hand.
                    let mut n = 0;
                    for v in edges.iter().filter_map(|&p| earlier_of(p)) {
                        two[n] = v;
                        n += 1;
                    }
                    if n == 2 && two[0] < two[1] {
                        two.swap(0, 1);
                    }
                    &two[..n]
                } else {
                    preds.clear();
                    preds.extend(edges.iter().filter_map(|&p| earlier_of(p)));
                    preds.sort_unstable_by(|a, b| b.cmp(a));
                    preds
                };
                for &v in earlier {
                    d = if d == NONE {
                        v
                    } else {
                        match intersect(idom, d, v, &mut budget) {
                            Some(d) => d,
                            None => return false,
                        }
                    };
                }
                if d == NONE {
                    return false;
                }
                idom[w] = d;
                info[w] = Info {
                    block: b.as_u32(),
                    size: 1,
                    next: 0,
                    depth: 0,
                };
            }
        }
        true
    }

    /// Is every skipped edge `u -> w` harmless (`idom(w)` an ancestor of `u`)? Needs
    /// `number` to have run.
    fn check(&self) -> bool {
        let info = &self.info[..];
        self.skipped.iter().all(|&[w, u]| {
            let a = self.idom[w as usize] as usize;
            if a == 0 {
                return true;
            }
            let (na, nu) = (info[a], info[u as usize]);
            let (pre_a, pre_u) = (na.next + 1 - na.size, nu.next + 1 - nu.size);
            pre_a <= pre_u && pre_u <= na.next
        })
    }

    /// Build the tree with semi-NCA only, on the caller's DFS (`backward` is the reverse of
    /// the edges it followed); children come in DFS preorder.
    pub fn run_semi(
        &mut self,
        dfs: &Preorder,
        backward: Adj<'_>,
        tree: &mut Tree,
        num_blocks: usize,
    ) {
        let scratch = &mut self.semi.scratch;
        scratch.solve(dfs, backward);
        self.idom.clear();
        self.idom.extend_from_slice(&scratch.idom);
        self.info.clear();
        self.info.extend(dfs.block.iter().map(|&block| Info {
            block,
            size: 1,
            next: 0,
            depth: 0,
        }));
        self.number(tree, num_blocks);
    }

    /// Recompute `idom` with semi-NCA (a DFS of its own).
    fn semi_nca<F: Fn(usize) -> u32>(&mut self, order: &Numbering<'_, F>) {
        let len = order.blocks.len() + 1;
        let num = &order.num;
        let semi = &mut self.semi;
        let dfs = &mut semi.own;
        dfs.reset(order.forward.ranges.len());
        for &r in order.roots {
            dfs.dfs(order.blocks[r as usize - 1], order.forward);
        }
        debug_assert_eq!(dfs.num_visited(), len - 1, "same nodes as the numbering");
        semi.scratch.solve(dfs, order.backward);
        self.idom.clear();
        self.idom.resize(len, 0);
        self.info.clear();
        self.info.resize(len, Info::default());
        let sidom = &semi.scratch.idom;
        for (&b, &d) in dfs.block.iter().zip(sidom).skip(1) {
            let i = num(b as usize) as usize;
            let d = d as usize;
            self.idom[i] = if d == 0 {
                0
            } else {
                num(dfs.block[d] as usize)
            };
            self.info[i] = Info {
                block: b,
                size: 1,
                next: 0,
                depth: 0,
            };
        }
    }

    /// Number the tree in its own preorder and write it into `tree`.
    fn number(&mut self, tree: &mut Tree, num_blocks: usize) {
        let len = self.idom.len();
        let idom = &self.idom[..];
        let info = &mut self.info[..];
        // Subtree sizes bottom-up (a node's idom has a smaller index).
        for v in (1..len).rev() {
            let s = info[v].size;
            info[idom[v] as usize].size += s;
        }
        info[0].next = 0;
        info[0].depth = 0;
        tree.roots.clear();
        // Every slot is overwritten when every block is in the tree.
        if len - 1 < num_blocks || tree.nodes.len() != num_blocks {
            tree.nodes.clear();
            tree.nodes.resize(num_blocks, TreeNode::UNREACHABLE);
        }
        tree.order.clear();
        tree.order.resize(len - 1, Block::new(0));
        let order = &mut tree.order[..];
        let nodes = &mut tree.nodes[..];
        for v in 1..len {
            let d = idom[v] as usize;
            let Info { block, size, .. } = info[v];
            let parent = &mut info[d];
            let p = parent.next;
            parent.next = p + size;
            let depth = parent.depth + 1;
            let idom_block = if d == 0 {
                tree.roots.push(Block::from_u32(block));
                NONE
            } else {
                parent.block
            };
            let me = &mut info[v];
            me.next = p + 1;
            me.depth = depth;
            order[p as usize] = Block::from_u32(block);
            nodes[block as usize] = TreeNode {
                idom: idom_block,
                pre: p + 1,
                last: p + size,
                depth,
            };
        }
    }
}

/// Climb steps allowed per node plus edge before the CHK sweep gives up (code-like CFGs
/// stay below one; see [`Builder::one_pass`] and the `reducible_graphs_take_the_fast_path`
/// test).
const CLIMB_BUDGET_PER_ITEM: u64 = 1;

/// CHK's `intersect`: the nearest common ancestor of `a` and `b` in the partial tree,
/// where every node's idom has a smaller index; `None` once `budget` climb steps are
/// spent.
#[inline]
fn intersect(idom: &[u32], mut a: u32, mut b: u32, budget: &mut u64) -> Option<u32> {
    while a != b {
        while a > b {
            a = idom[a as usize];
            *budget = budget.checked_sub(1)?;
        }
        while b > a {
            b = idom[b as usize];
            *budget = budget.checked_sub(1)?;
        }
    }
    Some(a)
}

/// Semi-NCA (the fallback): its own DFS when the caller has none, and the sweeps.
#[derive(Clone, Default)]
struct SemiNca {
    own: Preorder,
    scratch: SemiScratch,
}

/// Scratch arrays of semi-NCA, indexed by preorder number (0 is the virtual root), plain
/// `u32` arrays (structure of arrays: each sweep touches only the fields it needs).
#[derive(Clone, Default)]
struct SemiScratch {
    /// DFS parent, then the immediate dominator.
    idom: Vec<u32>,
    /// Semidominator.
    semi: Vec<u32>,
    /// `[ancestor, label]` of the link-eval forest (the two fields `eval` reads together).
    forest: Vec<[u32; 2]>,
    eval_stack: Vec<u32>,
}

impl SemiScratch {
    /// Lengauer–Tarjan `eval` with path compression: the smallest semi on the forest path
    /// from `v` up to (excluding) the first node not yet processed (`<= last_unlinked`).
    /// `v` itself is processed (`v > last_unlinked`).
    #[inline]
    fn eval(forest: &mut [[u32; 2]], stack: &mut Vec<u32>, v: u32, last_unlinked: u32) -> u32 {
        let [anc, label] = forest[v as usize];
        if anc <= last_unlinked || forest[anc as usize][0] <= last_unlinked {
            // `v` hangs directly below the root of its tree, or one below that: nothing
            // to compress.
            return if anc <= last_unlinked {
                label
            } else {
                label.min(forest[anc as usize][1])
            };
        }
        let mut top = v;
        loop {
            stack.push(top);
            top = forest[top as usize][0];
            if forest[top as usize][0] <= last_unlinked {
                break;
            }
        }
        let root = forest[top as usize][0];
        let mut prev_label = forest[top as usize][1];
        while let Some(cur) = stack.pop() {
            let c = &mut forest[cur as usize];
            if prev_label < c[1] {
                c[1] = prev_label;
            }
            prev_label = c[1];
            c[0] = root;
        }
        prev_label
    }

    /// Semidominators, then immediate dominators (in `self.idom`, by preorder number) of
    /// every node of `dfs`. `preds` is the reverse of the adjacency the DFS used.
    fn solve(&mut self, dfs: &Preorder, preds: Adj<'_>) {
        let len = dfs.block.len();
        let pre = &dfs.pre[..];
        let block = &dfs.block[..];
        self.idom.clear();
        self.idom.extend_from_slice(&dfs.parent);
        self.forest.clear();
        self.forest
            .extend(dfs.parent.iter().enumerate().map(|(i, &p)| [p, i as u32]));
        self.semi.clear();
        self.semi.resize(len, 0);
        let forest = &mut self.forest[..];
        let semi = &mut self.semi[..];
        let idom = &mut self.idom[..];
        let stack = &mut self.eval_stack;
        for w in (1..len as u32).rev() {
            let mut s = idom[w as usize];
            // Nodes numbered above `w` are processed (linked to their parents). A
            // predecessor numbered below `w` is its own eval: the common forward edge
            // costs no forest access.
            for &p in preds.edges(block[w as usize] as usize) {
                let v = pre[p.index()];
                if v == 0 {
                    continue;
                }
                let cand = if v <= w {
                    v
                } else {
                    Self::eval(forest, stack, v, w)
                };
                s = s.min(cand);
            }
            semi[w as usize] = s;
            forest[w as usize][1] = s;
        }
        for v in 1..len {
            let s = semi[v];
            let mut d = idom[v];
            while d > s {
                d = idom[d as usize];
            }
            idom[v] = d;
        }
    }
}

/// Per-block tree data; `pre == 0` means the block is not in the tree.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct TreeNode {
    /// The parent block, or `NONE` for a root (child of the virtual root).
    pub idom: u32,
    /// Preorder number in the tree, from 1.
    pub pre: u32,
    /// Largest preorder number in the subtree.
    pub last: u32,
    /// Roots have depth 1.
    pub depth: u32,
}

impl TreeNode {
    pub(crate) const UNREACHABLE: TreeNode = TreeNode {
        idom: NONE,
        pre: 0,
        last: 0,
        depth: 0,
    };
}

/// A (post-)dominator forest under a virtual root, with O(1) ancestor queries.
#[derive(Clone, Default)]
pub(crate) struct Tree {
    pub nodes: Vec<TreeNode>,
    /// Blocks in tree preorder: `order[pre - 1]`.
    pub order: Vec<Block>,
    /// Children of the virtual root, in DFS order.
    pub roots: Vec<Block>,
}

impl Tree {
    pub fn clear(&mut self) {
        self.nodes.clear();
        self.order.clear();
        self.roots.clear();
    }

    #[inline]
    pub fn node(&self, b: Block) -> TreeNode {
        self.nodes
            .get(b.index())
            .copied()
            .unwrap_or(TreeNode::UNREACHABLE)
    }

    /// Is `b` in the tree? Read from `depth` (0 outside the tree), which the incremental
    /// updater keeps exact while the preorder numbers are stale.
    #[inline]
    pub fn contains(&self, b: Block) -> bool {
        self.node(b).depth != 0
    }

    #[inline]
    pub fn parent(&self, b: Block) -> Option<Block> {
        let i = self.node(b).idom;
        (i != NONE).then(|| Block::from_u32(i))
    }

    /// Is `a` an ancestor-or-self of `b`? Blocks outside the tree are below everything.
    #[inline]
    pub fn is_ancestor(&self, a: Block, b: Block) -> bool {
        if a == b {
            return true;
        }
        let nb = self.node(b);
        if nb.pre == 0 {
            return true;
        }
        let na = self.node(a);
        na.pre != 0 && na.pre <= nb.pre && nb.pre <= na.last
    }

    /// Nearest common ancestor; `None` if either block is outside the tree or the two meet
    /// only at the virtual root.
    pub fn nca(&self, a: Block, b: Block) -> Option<Block> {
        if !self.contains(a) || !self.contains(b) {
            return None;
        }
        let nb = self.node(b);
        let mut x = a;
        loop {
            let nx = self.node(x);
            if nx.pre <= nb.pre && nb.pre <= nx.last {
                return Some(x);
            }
            if nx.idom == NONE {
                return None;
            }
            x = Block::from_u32(nx.idom);
        }
    }

    pub fn children(&self, b: Block) -> Children<'_> {
        let n = self.node(b);
        Children {
            tree: self,
            next: if n.pre == 0 { 1 } else { n.pre + 1 },
            end: if n.pre == 0 { 0 } else { n.last },
            siblings: None,
        }
    }

    /// Children from explicit sibling links (`first` child, `next_sibling` per block,
    /// `NONE`-terminated), for a tree whose preorder numbers are stale.
    pub fn linked_children<'a>(&'a self, first: u32, next_sibling: &'a [u32]) -> Children<'a> {
        Children {
            tree: self,
            next: first,
            end: 0,
            siblings: Some(next_sibling),
        }
    }
}

/// Iterator over the children of a tree node, in DFS order of the graph.
pub struct Children<'a> {
    tree: &'a Tree,
    /// Preorder number of the next child; with `siblings`, the next child itself (`NONE`
    /// at the end).
    next: u32,
    end: u32,
    /// Next-sibling links, when the preorder numbers are stale (after incremental updates).
    siblings: Option<&'a [u32]>,
}

impl Iterator for Children<'_> {
    type Item = Block;
    fn next(&mut self) -> Option<Block> {
        if let Some(sib) = self.siblings {
            if self.next == NONE {
                return None;
            }
            let b = self.next;
            self.next = sib[b as usize];
            return Some(Block::from_u32(b));
        }
        if self.next > self.end {
            return None;
        }
        let b = self.tree.order[self.next as usize - 1];
        self.next = self.tree.nodes[b.index()].last + 1;
        Some(b)
    }
}

#[cfg(test)]
mod tests {
    use crate::cfg::Cfg;
    use crate::reference::{RefDom, RefPostDom};
    use crate::testutil::function_from_edges;
    use crate::{cfggen, DomTree, PostDomTree};
    use cranelift_entity::EntityRef;
    use gyre_ir::Block;

    /// Both trees against the textbook data-flow ones, plus the tree invariants.
    fn check_against_reference(cfg: &Cfg, dt: &DomTree, pdt: &PostDomTree) {
        let (rd, rp) = (RefDom::new(cfg), RefPostDom::new(cfg));
        for &b in cfg.layout_blocks() {
            assert_eq!(dt.idom(b), rd.idom(b), "idom of {b}");
            assert_eq!(pdt.ipdom(b), rp.ipdom(b), "ipdom of {b}");
            for &c in cfg.layout_blocks() {
                assert_eq!(dt.dominates(b, c), rd.dominates(b, c), "{b} dom {c}");
                assert_eq!(pdt.post_dominates(b, c), rp.post_dominates(b, c));
            }
        }
        // Preorder lists every tree block once, parents first.
        for (pre, &b) in dt.preorder().iter().enumerate() {
            assert_eq!(dt.pre_last(b).map(|p| p.0), Some(pre as u32 + 1));
            if let Some(p) = dt.idom(b) {
                assert!(dt.pre_last(p).expect("in tree").0 < pre as u32 + 1);
            }
        }
    }

    fn trees(n: usize, edges: &[(u32, u32)]) -> (Cfg, DomTree, PostDomTree) {
        let f = function_from_edges(n, edges);
        let cfg = Cfg::with_function(&f).expect("valid");
        let dt = DomTree::with_function(&f, &cfg);
        let pdt = PostDomTree::with_function(&f, &cfg);
        (cfg, dt, pdt)
    }

    #[test]
    fn irreducible_graph_takes_the_fallback() {
        // RPO 0 1 4 3 2: the sweep sets idom(3) = 4 before seeing 2 -> 3, whose source
        // is not below 4: the check fails and semi-NCA gives idom(3) = 0.
        let (cfg, dt, pdt) = trees(5, &[(0, 1), (0, 4), (1, 2), (2, 3), (3, 2), (4, 3)]);
        assert_eq!(dt.fallbacks(), 1);
        assert_eq!(dt.idom(Block::new(3)), Some(Block::new(0)));
        check_against_reference(&cfg, &dt, &pdt);
    }

    #[test]
    fn reducible_graphs_take_the_fast_path() {
        for shape in [
            cfggen::loop_nest_sequence(200),
            cfggen::deep_nest(50),
            cfggen::random_reducible(300, 7),
        ] {
            let f = shape.to_function();
            let cfg = Cfg::with_function(&f).expect("valid");
            let dt = DomTree::with_function(&f, &cfg);
            let pdt = PostDomTree::with_function(&f, &cfg);
            assert_eq!(dt.fallbacks(), 0);
            check_against_reference(&cfg, &dt, &pdt);
        }
        // The climb budget holds on large code-like graphs (no reference: it is quadratic).
        for shape in [
            cfggen::random_reducible(50_000, 11),
            cfggen::loop_nest_sequence(50_000),
            cfggen::deep_nest(20_000),
        ] {
            let f = shape.to_function();
            let cfg = Cfg::with_function(&f).expect("valid");
            assert_eq!(DomTree::with_function(&f, &cfg).fallbacks(), 0);
        }
        // One exit, single-exit loops: the post-dominator sweep passes its check too.
        let (cfg, dt, pdt) = trees(6, &[(0, 1), (1, 2), (2, 3), (3, 2), (3, 4), (4, 1), (4, 5)]);
        assert_eq!(pdt.fallbacks(), 0);
        check_against_reference(&cfg, &dt, &pdt);
    }

    #[test]
    fn exit_ladder_stays_on_the_fast_path() {
        // b0 -> b1 -> ... -> b(n-2), each also -> e = n-1. Read in layout order, e's
        // predecessors would make CHK climb the chain once each (quadratic); read last to
        // first, each climb is one step.
        let shape = cfggen::exit_ladder(2_000);
        let e = shape.num_blocks - 1;
        let (cfg, dt, pdt) = trees(shape.num_blocks as usize, &shape.edges);
        assert_eq!(dt.fallbacks(), 0);
        assert_eq!(dt.idom(Block::new(e as usize)), Some(Block::new(0)));
        check_against_reference(&cfg, &dt, &pdt);
    }

    #[test]
    fn ladder_laid_out_backwards_stays_on_the_fast_path() {
        // 0 -> n-2 -> n-3 -> ... -> 1, each also -> e = n-1: the chain runs against the
        // layout, so e's predecessor list comes in ascending RPO, and read in list order
        // CHK would climb the chain once per predecessor (its budget then sent it to
        // semi-NCA); sorted deepest first, each climb is one step again.
        let n = 2_000u32;
        let e = n - 1;
        let shape = crate::cfggen::exit_ladder_backwards(n);
        let (cfg, dt, pdt) = trees(n as usize, &shape.edges);
        assert_eq!(dt.fallbacks(), 0);
        assert_eq!(dt.idom(Block::new(e as usize)), Some(Block::new(0)));
        check_against_reference(&cfg, &dt, &pdt);
    }

    #[test]
    fn loop_with_two_exits_falls_back_for_postdom() {
        // 1 -> 2 -> 3 -> 1 is a loop left from 2 (to 4) and from 3 (to 5); 4, 5 -> 6 ret.
        // Backwards, the cycle has two entries and the sweep's check fails.
        let edges = [
            (0, 1),
            (1, 2),
            (2, 3),
            (2, 4),
            (3, 1),
            (3, 5),
            (4, 6),
            (5, 6),
        ];
        let (cfg, dt, pdt) = trees(7, &edges);
        assert_eq!(pdt.fallbacks(), 1);
        assert_eq!(pdt.ipdom(Block::new(3)), Some(Block::new(6)));
        check_against_reference(&cfg, &dt, &pdt);
    }

    #[test]
    fn random_graphs_match_the_reference_on_every_path() {
        let (mut dom_fb, mut pdom_fb) = (0, 0);
        for seed in 0..300 {
            let shape = cfggen::random_cfg(3 + (seed % 40) as u32, seed);
            let f = shape.to_function();
            let cfg = Cfg::with_function(&f).expect("valid");
            let dt = DomTree::with_function(&f, &cfg);
            let pdt = PostDomTree::with_function(&f, &cfg);
            dom_fb += dt.fallbacks();
            pdom_fb += pdt.fallbacks();
            check_against_reference(&cfg, &dt, &pdt);
        }
        assert!(dom_fb > 0 && dom_fb < 300, "both paths exercised: {dom_fb}");
        assert!(pdom_fb > 0, "postdom fallback exercised");
    }

    #[test]
    fn buffers_are_reused_across_sizes() {
        // One object reused across graphs: stale buffers must not leak through.
        let mut dt = DomTree::new();
        let mut pdt = PostDomTree::new();
        for (n, seed) in [(50u32, 1u64), (10, 2), (80, 3), (3, 4)] {
            let f = cfggen::random_cfg(n, seed).to_function();
            let cfg = Cfg::with_function(&f).expect("valid");
            dt.compute(&f, &cfg);
            pdt.compute(&f, &cfg);
            check_against_reference(&cfg, &dt, &pdt);
        }
    }

    #[test]
    fn stale_cfg_order_gives_the_same_tree() {
        let shape = cfggen::random_cfg(60, 11);
        let f = shape.to_function();
        let mut cfg = Cfg::with_function(&f).expect("valid");
        let fresh = DomTree::with_function(&f, &cfg);
        // Re-derive the edges of one block: the order is stale but the edges are equal.
        cfg.update_block(&f, Block::new(5)).expect("valid");
        assert!(!cfg.is_order_valid());
        let stale = DomTree::with_function(&f, &cfg);
        for i in 0..60 {
            let b = Block::new(i);
            assert_eq!(stale.idom(b), fresh.idom(b));
            assert_eq!(
                stale.children(b).collect::<Vec<_>>(),
                fresh.children(b).collect::<Vec<_>>()
            );
        }
    }
}
