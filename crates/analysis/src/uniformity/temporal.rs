//! Temporal divergence in time linear in the uses that leave a loop.
//!
//! When loop `L` gets a divergent exit, every use of a value defined in `L` that lies
//! outside `L` (or passes the value along an edge leaving `L`) becomes divergent. Walking
//! `L`'s blocks and every use of their values at each such event costs blocks x depth on
//! a deep nest whose every level exits divergently. Instead, each use that leaves a loop
//! around its definition (an *escape*) is listed once, keyed by the innermost loop of the
//! definition and by the shallowest depth of a loop whose divergence reaches it: marking
//! `L` takes, from the key range of `L`'s subtree, the escapes whose depth bound is at most
//! `L`'s depth, each at most once over the whole analysis (a min segment tree finds them).
//!
//! Why that depth bound: the loops around a definition `d` form a chain; a use `u` (in
//! block `b`, along an edge to `t`) is outside loop `L` of that chain exactly when `L` is
//! deeper than `C`, the innermost loop containing `d`, `b` and `t`. So `u` escapes `L`
//! iff `depth(L) >= depth(C) + 1`.
//!
//! Cost: building is O(uses) plus, per escape, a walk up the loop forest from the
//! shallowest of the three blocks' loops to `C` (one or two steps for LCSSA exits and for
//! uses in no loop; longer only for a use inside a loop nest the definition is not in);
//! each loop marked divergent costs O(log escapes) plus O(log escapes) per escape taken.

use super::{SourceKind, Use};
use crate::loops::{Loop, LoopInfo};
use cranelift_entity::EntityRef;
use gyre_ir::Function;

/// No escape left at a segment-tree node.
const NONE: u32 = u32::MAX;

/// The escapes of a function and the loop-forest facts for finding them.
#[derive(Clone, Default)]
pub(super) struct Escapes {
    /// Per loop: its preorder number in the loop forest and 1 + the last preorder number
    /// of its subtree.
    span: Vec<[u32; 2]>,
    /// Per loop: the outermost loop around it (itself for a top-level loop).
    root: Vec<Loop>,
    /// Escapes sorted by key: the preorder number of the definition's innermost loop.
    keys: Vec<u32>,
    /// The use target of each escape (as in [`Use::target`]), in `keys` order.
    targets: Vec<u32>,
    /// Min segment tree over the depth bounds (leaves from `leaves` on; `NONE` once taken).
    tree: Vec<u32>,
    leaves: usize,
    // ---- scratch ----
    unsorted: Vec<(u32, u32, u32)>,
    stack: Vec<(u32, u32, u32)>,
}

impl Escapes {
    /// List the escapes of `func`. `use_range`/`uses` are the analysis's def-use lists and
    /// `kind` its per-instruction source kinds (results of always-uniform instructions
    /// stay uniform: they have no escapes).
    pub(super) fn compute(
        &mut self,
        func: &Function,
        li: &LoopInfo,
        use_range: &[[u32; 2]],
        uses: &[Use],
        kind: &[SourceKind],
    ) {
        self.compute_forest(li);
        self.unsorted.clear();
        for x in func.layout.blocks() {
            let Some(inner) = li.innermost_loop(x) else {
                continue;
            };
            let key = self.span[inner.index()][0];
            let params = func.dfg.block_params(x);
            let results = func.layout.block_insts(x).filter_map(|i| {
                (kind[i.index()] != SourceKind::AlwaysUniform)
                    .then(|| func.dfg.inst_result(i))
                    .flatten()
            });
            for v in params.iter().copied().chain(results) {
                let [a, b] = use_range[v.index()];
                for u in &uses[a as usize..b as usize] {
                    if li.contains(inner, u.block) && li.contains(inner, u.to) {
                        continue;
                    }
                    let bound = common_depth(li, inner, x, u) + 1;
                    self.unsorted.push((key, bound, u.target));
                }
            }
        }
        self.unsorted.sort_unstable_by_key(|e| e.0);
        let n = self.unsorted.len();
        self.keys.clear();
        self.targets.clear();
        self.keys.extend(self.unsorted.iter().map(|e| e.0));
        self.targets.extend(self.unsorted.iter().map(|e| e.2));
        self.leaves = n.next_power_of_two();
        self.tree.clear();
        self.tree.resize(2 * self.leaves, NONE);
        for (i, e) in self.unsorted.iter().enumerate() {
            self.tree[self.leaves + i] = e.1;
        }
        for k in (1..self.leaves).rev() {
            self.tree[k] = self.tree[2 * k].min(self.tree[2 * k + 1]);
        }
    }

    /// Preorder spans and roots of the loop forest (explicit stack).
    fn compute_forest(&mut self, li: &LoopInfo) {
        let n = li.num_loops();
        self.span.clear();
        self.span.resize(n, [0, 0]);
        self.root.clear();
        self.root.resize(n, Loop::new(0));
        let mut next = 0u32;
        // (loop, entered?): a loop's span closes when it is popped the second time.
        let mut stack: Vec<(Loop, bool)> =
            li.top_level().iter().rev().map(|&l| (l, false)).collect();
        while let Some((l, done)) = stack.pop() {
            if done {
                self.span[l.index()][1] = next;
                continue;
            }
            self.span[l.index()][0] = next;
            next += 1;
            self.root[l.index()] = match li.parent(l) {
                Some(p) => self.root[p.index()],
                None => l,
            };
            stack.push((l, true));
            stack.extend(li.children(l).iter().rev().map(|&c| (c, false)));
        }
    }

    /// The outermost loop around `l`.
    pub(super) fn root(&self, l: Loop) -> Loop {
        self.root[l.index()]
    }

    /// Loop `l` has a divergent exit: append to `out` the targets of the escapes it
    /// reaches that no earlier call took.
    pub(super) fn take(&mut self, li: &LoopInfo, l: Loop, out: &mut Vec<u32>) {
        let [a, b] = self.span[l.index()];
        let lo = self.keys.partition_point(|&k| k < a) as u32;
        let hi = self.keys.partition_point(|&k| k < b) as u32;
        let depth = li.depth(l);
        if lo >= hi {
            return;
        }
        self.stack.clear();
        self.stack.push((1, 0, self.leaves as u32));
        while let Some((node, s, e)) = self.stack.pop() {
            if e <= lo || hi <= s || self.tree[node as usize] > depth {
                continue;
            }
            if e - s == 1 {
                out.push(self.targets[s as usize]);
                // Taken: no later loop needs it (its use is already divergent).
                let mut k = node as usize;
                self.tree[k] = NONE;
                while k > 1 {
                    k /= 2;
                    self.tree[k] = self.tree[2 * k].min(self.tree[2 * k + 1]);
                }
                continue;
            }
            let m = (s + e) / 2;
            self.stack.push((2 * node + 1, m, e));
            self.stack.push((2 * node, s, m));
        }
    }
}

/// Depth of the innermost loop containing the definition's block `x` (whose innermost
/// loop is `inner`) and both blocks of use `u`; 0 if there is none.
fn common_depth(li: &LoopInfo, inner: Loop, x: gyre_ir::Block, u: &Use) -> u32 {
    // The common loop is no deeper than the shallowest of the three innermost loops:
    // start there and walk out.
    let mut m = inner;
    for b in [u.block, u.to] {
        match li.innermost_loop(b) {
            Some(l) if li.depth(l) < li.depth(m) => m = l,
            Some(_) => {}
            None => return 0,
        }
    }
    let mut cur = Some(m);
    while let Some(l) = cur {
        if li.contains(l, x) && li.contains(l, u.block) && li.contains(l, u.to) {
            return li.depth(l);
        }
        cur = li.parent(l);
    }
    0
}
