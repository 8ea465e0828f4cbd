//! The verifier's own control-flow graph and dominator computation.
//!
//! The analysis crate owns the full dominator tree; the IR crate must not depend on it,
//! so the verifier recomputes what it needs here (which also makes it an independent
//! check of that analysis).
//!
//! Dominators use Semi-NCA (Georgiadis' semidominator algorithm with a nearest-common-
//! ancestor pass, as LLVM's `SemiNCAInfo`) over a depth-first preorder: O((N + E) log N)
//! at worst and near-linear in practice on every graph. (Cooper-Harvey-Kennedy's
//! iteration, used before, walks the whole chain for each predecessor of a block that
//! ends many paths, such as the exit of an exit ladder: quadratic.) The dominator tree is
//! then numbered with pre/post DFS times so `dominates` is O(1). Every graph walk uses an
//! explicit stack: a million-block chain must not overflow the thread stack.

use crate::entities::Block;
use crate::function::Function;
use crate::instructions::InstructionData;
use cranelift_entity::EntityRef;

/// Marks "no RPO number": the block is unreachable or not part of the CFG.
const NONE: u32 = u32::MAX;

/// Reusable CFG, reverse postorder and dominator-tree numbering of one function.
#[derive(Default)]
pub(super) struct Dominance {
    /// RPO index per block index, or `NONE` when unreachable from the entry.
    rpo_num: Vec<u32>,
    /// Reachable blocks in reverse postorder; `rpo[0]` is the entry.
    rpo: Vec<Block>,
    /// CFG edges `(from, to)` by block index; scratch for building the CSR arrays.
    edges: Vec<(u32, u32)>,
    /// CSR successor lists by block index.
    succ_start: Vec<u32>,
    succs: Vec<u32>,
    /// CSR predecessor lists by block index.
    pred_start: Vec<u32>,
    preds: Vec<u32>,
    /// Immediate dominator by RPO index (`idom[0] == 0`).
    idom: Vec<u32>,
    /// Dominator-tree children, CSR by RPO index.
    child_start: Vec<u32>,
    children: Vec<u32>,
    /// Pre- and post-order times in the dominator tree, by RPO index.
    pre: Vec<u32>,
    post: Vec<u32>,
    /// DFS stack of (node, next edge offset).
    stack: Vec<(u32, u32)>,
    /// Scratch: DFS state per block index (0 new, 1 on stack, 2 done).
    state: Vec<u8>,
    /// Scratch: postorder.
    postorder: Vec<u32>,
    /// Depth-first preorder (block indices) and each block's number in it (`NONE`:
    /// unreachable).
    dfs_order: Vec<u32>,
    dfs_num: Vec<u32>,
    /// Semi-NCA state by preorder number: the DFS parent (then the immediate dominator),
    /// the semidominator, the path-compression ancestor and its best label.
    dfs_dom: Vec<u32>,
    semi: Vec<u32>,
    ancestor: Vec<u32>,
    label: Vec<u32>,
    /// Scratch: the path compressed by one `eval`.
    path: Vec<u32>,
}

/// Build a CSR adjacency (`start`, `list`) over `n` nodes from an edge list, keyed by
/// `key(edge)` and listing `val(edge)`; edge order is preserved within each list.
fn build_csr(
    n: usize,
    edges: &[(u32, u32)],
    key: impl Fn(&(u32, u32)) -> u32,
    val: impl Fn(&(u32, u32)) -> u32,
    start: &mut Vec<u32>,
    list: &mut Vec<u32>,
) {
    start.clear();
    start.resize(n + 1, 0);
    for e in edges {
        start[key(e) as usize + 1] += 1;
    }
    for i in 0..n {
        start[i + 1] += start[i];
    }
    list.clear();
    list.resize(edges.len(), 0);
    // `fill[k]` is the next free slot of list `k`.
    let mut fill: Vec<u32> = start[..n].to_vec();
    for e in edges {
        let k = key(e) as usize;
        list[fill[k] as usize] = val(e);
        fill[k] += 1;
    }
}

impl Dominance {
    /// Compute the CFG, RPO and dominators of `func`.
    ///
    /// Edges come from the last instruction of each laid-out block when it is a
    /// terminator; targets that are invalid or not laid out are ignored (the verifier
    /// reports them separately). Bad input never panics here.
    pub(super) fn compute(&mut self, func: &Function) {
        let n = func.dfg.num_blocks();
        self.rpo.clear();
        self.rpo_num.clear();
        self.rpo_num.resize(n, NONE);
        self.edges.clear();

        for b in func.layout.blocks() {
            if !func.dfg.block_is_valid(b) {
                continue;
            }
            let Some(t) = func.layout.last_inst(b) else {
                continue;
            };
            if !func.dfg.inst_is_valid(t) {
                continue;
            }
            let edges = &mut self.edges;
            let mut push = |to: Block| {
                if func.dfg.block_is_valid(to) && func.layout.is_block_inserted(to) {
                    edges.push((b.index() as u32, to.index() as u32));
                }
            };
            match func.dfg.inst(t) {
                InstructionData::Jump { dest } => push(dest.block),
                InstructionData::Brif { blocks, .. } => blocks.iter().for_each(|c| push(c.block)),
                InstructionData::BrTable { table, .. } if func.dfg.jump_table_is_valid(*table) => {
                    let jt = func.dfg.jump_table(*table);
                    push(jt.default.block);
                    jt.cases.iter().for_each(|(_, c)| push(c.block));
                }
                _ => {}
            }
        }
        build_csr(
            n,
            &self.edges,
            |e| e.0,
            |e| e.1,
            &mut self.succ_start,
            &mut self.succs,
        );
        build_csr(
            n,
            &self.edges,
            |e| e.1,
            |e| e.0,
            &mut self.pred_start,
            &mut self.preds,
        );

        let entry = match func.layout.entry_block() {
            Some(e) if func.dfg.block_is_valid(e) => e,
            _ => {
                self.idom.clear();
                self.pre.clear();
                self.post.clear();
                return;
            }
        };
        self.compute_rpo(entry.index() as u32);
        self.compute_idom();
        self.number_dom_tree();
    }

    /// Depth-first search from the entry with an explicit stack; fills `rpo`/`rpo_num`.
    fn compute_rpo(&mut self, entry: u32) {
        let n = self.rpo_num.len();
        self.state.clear();
        self.state.resize(n, 0);
        self.postorder.clear();
        self.dfs_order.clear();
        self.dfs_num.clear();
        self.dfs_num.resize(n, NONE);
        self.dfs_dom.clear();
        self.stack.clear();
        self.stack.push((entry, self.succ_start[entry as usize]));
        self.state[entry as usize] = 1;
        self.dfs_num[entry as usize] = 0;
        self.dfs_order.push(entry);
        self.dfs_dom.push(0);
        while let Some(top) = self.stack.last_mut() {
            let (node, next) = *top;
            if next < self.succ_start[node as usize + 1] {
                top.1 += 1;
                let s = self.succs[next as usize];
                if self.state[s as usize] == 0 {
                    self.state[s as usize] = 1;
                    self.dfs_num[s as usize] = self.dfs_order.len() as u32;
                    self.dfs_order.push(s);
                    self.dfs_dom.push(self.dfs_num[node as usize]);
                    self.stack.push((s, self.succ_start[s as usize]));
                }
            } else {
                self.state[node as usize] = 2;
                self.postorder.push(node);
                self.stack.pop();
            }
        }
        for (i, &b) in self.postorder.iter().rev().enumerate() {
            self.rpo_num[b as usize] = i as u32;
            self.rpo.push(Block::new(b as usize));
        }
    }

    /// Semi-NCA (LLVM's `SemiNCAInfo::runSemiNCA`): semidominators in reverse
    /// preorder with path-compressed `eval`, then each immediate dominator is the nearest
    /// ancestor of the DFS parent whose number is at most the semidominator. Fills `idom`
    /// by RPO index.
    fn compute_idom(&mut self) {
        let n = self.rpo.len();
        self.idom.clear();
        self.idom.resize(n, NONE);
        if n == 0 {
            return;
        }
        let m = self.dfs_order.len();
        self.semi.clear();
        self.semi.extend(0..m as u32);
        self.label.clear();
        self.label.extend(0..m as u32);
        self.ancestor.clear();
        self.ancestor.extend_from_slice(&self.dfs_dom);
        for w in (1..m).rev() {
            let b = self.dfs_order[w] as usize;
            let mut semi = self.dfs_dom[w];
            for k in self.pred_start[b]..self.pred_start[b + 1] {
                let p = self.dfs_num[self.preds[k as usize] as usize];
                if p == NONE {
                    continue;
                }
                let u = self.eval(p, w as u32 + 1);
                semi = semi.min(self.semi[u as usize]);
            }
            self.semi[w] = semi;
        }
        for w in 1..m {
            let mut c = self.dfs_dom[w];
            while c > self.semi[w] {
                c = self.dfs_dom[c as usize];
            }
            self.dfs_dom[w] = c;
        }
        self.idom[0] = 0;
        for w in 1..m {
            let b = self.dfs_order[w] as usize;
            let d = self.dfs_order[self.dfs_dom[w] as usize] as usize;
            self.idom[self.rpo_num[b] as usize] = self.rpo_num[d];
        }
    }

    /// The label with the smallest semidominator on the path from `v` up to the root of
    /// its virtual tree (the nodes numbered `last_linked` or more are linked), compressing
    /// the path on the way (LLVM's `SemiNCAInfo::eval`, iterative).
    fn eval(&mut self, v: u32, last_linked: u32) -> u32 {
        if self.ancestor[v as usize] < last_linked {
            return self.label[v as usize];
        }
        self.path.clear();
        let mut x = v;
        loop {
            self.path.push(x);
            x = self.ancestor[x as usize];
            if self.ancestor[x as usize] < last_linked {
                break;
            }
        }
        let mut p = x;
        let mut p_label = self.label[p as usize];
        while let Some(y) = self.path.pop() {
            self.ancestor[y as usize] = self.ancestor[p as usize];
            let y_label = self.label[y as usize];
            if self.semi[p_label as usize] < self.semi[y_label as usize] {
                self.label[y as usize] = p_label;
            } else {
                p_label = y_label;
            }
            p = y;
        }
        self.label[v as usize]
    }

    /// Pre/post-order times of the dominator tree for O(1) ancestor queries.
    fn number_dom_tree(&mut self) {
        let n = self.rpo.len();
        self.edges.clear();
        for i in 1..n {
            self.edges.push((self.idom[i], i as u32));
        }
        build_csr(
            n,
            &self.edges,
            |e| e.0,
            |e| e.1,
            &mut self.child_start,
            &mut self.children,
        );
        self.pre.clear();
        self.pre.resize(n, 0);
        self.post.clear();
        self.post.resize(n, 0);
        if n == 0 {
            return;
        }
        let mut clock = 0u32;
        self.stack.clear();
        self.stack.push((0, self.child_start[0]));
        self.pre[0] = clock;
        clock += 1;
        while let Some(top) = self.stack.last_mut() {
            let (node, next) = *top;
            if next < self.child_start[node as usize + 1] {
                top.1 += 1;
                let c = self.children[next as usize];
                self.pre[c as usize] = clock;
                clock += 1;
                self.stack.push((c, self.child_start[c as usize]));
            } else {
                self.post[node as usize] = clock;
                clock += 1;
                self.stack.pop();
            }
        }
    }

    /// The RPO index of a block, if it is reachable from the entry.
    fn rpo_index(&self, b: Block) -> Option<u32> {
        match self.rpo_num.get(b.index()) {
            Some(&i) if i != NONE => Some(i),
            _ => None,
        }
    }

    /// Is `b` reachable from the entry block?
    pub(super) fn is_reachable(&self, b: Block) -> bool {
        self.rpo_index(b).is_some()
    }

    /// Does `a` dominate `b` (reflexively)? False when either is unreachable.
    pub(super) fn dominates(&self, a: Block, b: Block) -> bool {
        match (self.rpo_index(a), self.rpo_index(b)) {
            (Some(a), Some(b)) => {
                let (a, b) = (a as usize, b as usize);
                self.pre[a] <= self.pre[b] && self.post[b] <= self.post[a]
            }
            _ => false,
        }
    }

    /// The immediate dominator of a reachable non-entry block (tests only).
    #[cfg(test)]
    pub(super) fn idom(&self, b: Block) -> Option<Block> {
        let i = self.rpo_index(b)?;
        (i != 0).then(|| self.rpo[self.idom[i as usize] as usize])
    }
}
