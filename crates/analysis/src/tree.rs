//! The semi-NCA dominator algorithm and the tree it produces, shared by the dominator and
//! the post-dominator tree.
//!
//! Semi-NCA: L. Georgiadis, "Linear-Time Algorithms for Dominators and Related Problems",
//! PhD thesis, Princeton 2005 (also Dijkstra et al. / LLVM / Cranelift). Steps:
//! 1. DFS from the roots numbers nodes in preorder (1, 2, ...); node 0 is a virtual root
//!    whose children are the real roots (the entry, or the post-dominator roots).
//! 2. Semidominators in reverse preorder with Lengauer–Tarjan's `eval`/`link` (link is
//!    implicit: a node is linked to its DFS parent once processed), path compression on an
//!    explicit stack: O(m log n).
//! 3. Immediate dominators in preorder: `idom(w)` starts at `parent(w)` and climbs the
//!    already final idoms while it is above `semi(w)` (the nearest common ancestor step).
//!
//! The tree is then numbered in its own preorder without another DFS: subtree sizes come
//! from one reverse sweep, and each node takes the next free slot of its idom in a forward
//! sweep. `a` dominates `b` iff `pre(a) <= pre(b) <= last(a)`: O(1).
//!
//! **Cost.** O(m log n) time (path compression without balanced linking), O(n) space;
//! in practice linear. One DFS; afterwards every array is indexed by preorder number,
//! `u32`s in separate arrays so that each sweep streams through only what it reads (about
//! 40 bytes of scratch per block). The DFS keeps its current frame in registers. In step 2
//! a predecessor numbered below `w` is its own `eval` (no forest access): in a reducible
//! CFG only back edges reach the forest. Per block, the three sweeps after the DFS
//! (semidominators, idoms, numbering) read their arrays in order; the remaining random
//! accesses are the far edges of the graph and the forest paths of `eval`.

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

/// Scratch state of semi-NCA, reused across computations.
///
/// Everything after the DFS is indexed by preorder number (0 is the virtual root) in
/// plain `u32` arrays (structure of arrays: each pass touches only the fields it needs).
#[derive(Clone, Default)]
pub(crate) struct SemiNca {
    /// Per block: DFS preorder number, 0 = not visited.
    pre: Vec<u32>,
    /// Per preorder number: the block.
    block: Vec<u32>,
    /// Per preorder number: DFS parent, then the immediate dominator.
    idom: Vec<u32>,
    /// Per preorder number: semidominator, then subtree size in the tree.
    semi: Vec<u32>,
    /// Per preorder number: `[ancestor, label]` of the link-eval forest (the two fields
    /// `eval` reads together), then `[next free child slot, depth]` while numbering.
    forest: Vec<[u32; 2]>,
    /// DFS frames `(preorder number, next edge, end)` of the nodes above the current one.
    dfs: Vec<(u32, u32, u32)>,
    eval_stack: Vec<u32>,
}

impl SemiNca {
    pub fn reset(&mut self, num_blocks: usize) {
        self.pre.clear();
        self.pre.resize(num_blocks, 0);
        self.block.clear();
        self.block.reserve(num_blocks + 1);
        self.block.push(NONE);
        self.idom.clear();
        self.idom.reserve(num_blocks + 1);
        self.idom.push(0);
    }

    pub fn is_visited(&self, b: Block) -> bool {
        self.pre[b.index()] != 0
    }

    /// Number of visited blocks.
    pub fn num_visited(&self) -> usize {
        self.block.len() - 1
    }

    /// DFS from `root` (a child of the virtual root) along `adj`. The current frame lives
    /// in locals; the stack holds only the frames above it.
    pub fn dfs(&mut self, root: Block, adj: Adj<'_>) {
        if self.pre[root.index()] != 0 {
            return;
        }
        let Adj { ranges, targets } = adj;
        let pre = &mut self.pre[..];
        let block = &mut self.block;
        let idom = &mut self.idom;
        let stack = &mut self.dfs;
        stack.clear();
        let mut v = block.len() as u32;
        pre[root.index()] = v;
        block.push(root.as_u32());
        idom.push(0);
        let [mut i, mut end] = ranges[root.index()];
        loop {
            if i < end {
                let t = targets[i as usize].index();
                i += 1;
                if pre[t] == 0 {
                    let n = block.len() as u32;
                    pre[t] = n;
                    block.push(t as u32);
                    idom.push(v);
                    stack.push((v, i, end));
                    v = n;
                    [i, end] = ranges[t];
                }
            } else {
                match stack.pop() {
                    Some((pv, pi, pe)) => (v, i, end) = (pv, pi, pe),
                    None => break,
                }
            }
        }
    }

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

    /// Steps 2 and 3: immediate dominators of every visited node. `preds` is the reverse
    /// of the adjacency the DFS used.
    pub fn solve(&mut self, preds: Adj<'_>) {
        let len = self.block.len();
        let pre = &self.pre[..];
        let block = &self.block[..];
        self.forest.clear();
        self.forest
            .extend(self.idom.iter().enumerate().map(|(i, &p)| [p, i as u32]));
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

    /// Number the tree in its own preorder and write it into `tree`.
    pub fn build(&mut self, tree: &mut Tree, num_blocks: usize) {
        tree.nodes.clear();
        tree.nodes.resize(num_blocks, TreeNode::UNREACHABLE);
        tree.order.clear();
        tree.roots.clear();
        let len = self.block.len();
        if len == 1 {
            return;
        }
        let idom = &self.idom[..];
        let block = &self.block[..];
        // Subtree sizes bottom-up (a node's idom has a smaller number).
        let size = &mut self.semi[..];
        size.fill(1);
        for v in (1..len).rev() {
            let s = size[v];
            size[idom[v] as usize] += s;
        }
        // `slot[0]` = next free preorder slot among the children, `slot[1]` = depth.
        let slot = &mut self.forest[..];
        slot[0] = [0, 0];
        tree.order.resize(len - 1, Block::new(0));
        let order = &mut tree.order[..];
        let nodes = &mut tree.nodes[..];
        for v in 1..len {
            let (b, d, sz) = (block[v], idom[v] as usize, size[v]);
            let [p, pdepth] = slot[d];
            slot[d][0] = p + sz;
            slot[v] = [p + 1, pdepth + 1];
            order[p as usize] = Block::from_u32(b);
            let idom_block = if d == 0 {
                tree.roots.push(Block::from_u32(b));
                NONE
            } else {
                block[d]
            };
            nodes[b as usize] = TreeNode {
                idom: idom_block,
                pre: p + 1,
                last: p + sz,
                depth: pdepth + 1,
            };
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
    const UNREACHABLE: TreeNode = TreeNode {
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

    #[inline]
    pub fn contains(&self, b: Block) -> bool {
        self.node(b).pre != 0
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
        }
    }
}

/// Iterator over the children of a tree node, in DFS order of the graph.
pub struct Children<'a> {
    tree: &'a Tree,
    /// Preorder number of the next child.
    next: u32,
    end: u32,
}

impl Iterator for Children<'_> {
    type Item = Block;
    fn next(&mut self) -> Option<Block> {
        if self.next > self.end {
            return None;
        }
        let b = self.tree.order[self.next as usize - 1];
        self.next = self.tree.nodes[b.index()].last + 1;
        Some(b)
    }
}
