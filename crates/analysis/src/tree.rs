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

/// Spanning-tree node in DFS preorder; the field names follow the paper.
#[derive(Clone, Copy, Default)]
struct SNode {
    block: u32,
    /// DFS parent, then (after path compression) some ancestor in the link-eval forest.
    ancestor: u32,
    /// Smallest semi on the compressed path (a preorder number).
    label: u32,
    semi: u32,
    /// DFS parent, then the immediate dominator (preorder numbers).
    idom: u32,
}

/// Scratch state of semi-NCA, reused across computations.
#[derive(Clone, Default)]
pub(crate) struct SemiNca {
    /// Per block: DFS preorder number, 0 = not visited.
    pre: Vec<u32>,
    nodes: Vec<SNode>,
    /// DFS frames `(preorder number, next edge, end)`.
    dfs: Vec<(u32, u32, u32)>,
    eval_stack: Vec<u32>,
}

impl SemiNca {
    pub fn reset(&mut self, num_blocks: usize) {
        self.pre.clear();
        self.pre.resize(num_blocks, 0);
        self.nodes.clear();
        self.nodes.push(SNode::default());
    }

    pub fn is_visited(&self, b: Block) -> bool {
        self.pre[b.index()] != 0
    }

    /// Number of visited blocks.
    pub fn num_visited(&self) -> usize {
        self.nodes.len() - 1
    }

    /// DFS from `root` (a child of the virtual root) along `adj`.
    pub fn dfs(&mut self, root: Block, adj: Adj<'_>) {
        if self.pre[root.index()] != 0 {
            return;
        }
        let n = self.push(root.as_u32(), 0);
        let [s, e] = adj.ranges[root.index()];
        self.dfs.clear();
        self.dfs.push((n, s, e));
        while let Some(top) = self.dfs.last_mut() {
            if top.1 == top.2 {
                self.dfs.pop();
                continue;
            }
            let t = adj.targets[top.1 as usize];
            top.1 += 1;
            if self.pre[t.index()] == 0 {
                let parent = top.0;
                let n = self.push(t.as_u32(), parent);
                let [s, e] = adj.ranges[t.index()];
                self.dfs.push((n, s, e));
            }
        }
    }

    #[inline]
    fn push(&mut self, block: u32, parent: u32) -> u32 {
        let n = self.nodes.len() as u32;
        self.pre[block as usize] = n;
        self.nodes.push(SNode {
            block,
            ancestor: parent,
            label: n,
            semi: n,
            idom: parent,
        });
        n
    }

    /// Lengauer–Tarjan `eval` with path compression: the smallest semi on the forest path
    /// from `v` up to (excluding) the first node not yet processed (`<= last_unlinked`).
    #[inline]
    fn eval(&mut self, v: u32, last_unlinked: u32) -> u32 {
        let nodes = &mut self.nodes;
        if nodes[v as usize].ancestor <= last_unlinked {
            return nodes[v as usize].label;
        }
        let stack = &mut self.eval_stack;
        let mut top = v;
        loop {
            stack.push(top);
            top = nodes[top as usize].ancestor;
            if nodes[top as usize].ancestor <= last_unlinked {
                break;
            }
        }
        let root = nodes[top as usize].ancestor;
        let mut prev = top;
        while let Some(cur) = stack.pop() {
            let pl = nodes[prev as usize].label;
            let c = &mut nodes[cur as usize];
            if pl < c.label {
                c.label = pl;
            }
            c.ancestor = root;
            prev = cur;
        }
        nodes[v as usize].label
    }

    /// Steps 2 and 3: immediate dominators of every visited node. `preds` is the reverse
    /// of the adjacency the DFS used.
    pub fn solve(&mut self, preds: Adj<'_>) {
        let len = self.nodes.len() as u32;
        for w in (1..len).rev() {
            let wn = self.nodes[w as usize];
            let mut semi = wn.ancestor;
            // Nodes numbered above `w` are processed (linked to their parents).
            for &p in preds.edges(wn.block as usize) {
                let v = self.pre[p.index()];
                if v == 0 {
                    continue;
                }
                let cand = self.eval(v, w);
                semi = semi.min(cand);
            }
            let n = &mut self.nodes[w as usize];
            n.semi = semi;
            n.label = semi;
        }
        for v in 1..len {
            let semi = self.nodes[v as usize].semi;
            let mut idom = self.nodes[v as usize].idom;
            while idom > semi {
                idom = self.nodes[idom as usize].idom;
            }
            self.nodes[v as usize].idom = idom;
        }
    }

    /// Number the tree in its own preorder and write it into `tree`.
    pub fn build(&mut self, tree: &mut Tree, num_blocks: usize) {
        tree.nodes.clear();
        tree.nodes.resize(num_blocks, TreeNode::UNREACHABLE);
        tree.order.clear();
        tree.roots.clear();
        let len = self.nodes.len();
        if len == 1 {
            return;
        }
        // Reuse the dead fields: `label` = subtree size, `semi` = next free preorder slot
        // among the children, `ancestor` = depth.
        for n in &mut self.nodes {
            n.label = 1;
        }
        for v in (1..len).rev() {
            let (size, idom) = (self.nodes[v].label, self.nodes[v].idom);
            self.nodes[idom as usize].label += size;
        }
        self.nodes[0].semi = 0;
        self.nodes[0].ancestor = 0;
        tree.order.resize(len - 1, Block::new(0));
        for v in 1..len {
            let SNode {
                block, label, idom, ..
            } = self.nodes[v];
            let parent = self.nodes[idom as usize];
            let pre = parent.semi;
            let depth = parent.ancestor + 1;
            self.nodes[idom as usize].semi += label;
            let n = &mut self.nodes[v];
            n.semi = pre + 1;
            n.ancestor = depth;
            tree.order[pre as usize] = Block::from_u32(block);
            let idom_block = if idom == 0 {
                tree.roots.push(Block::from_u32(block));
                NONE
            } else {
                parent.block
            };
            tree.nodes[block as usize] = TreeNode {
                idom: idom_block,
                pre: pre + 1,
                last: pre + label,
                depth,
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
