//! Strongly connected components (Tarjan 1972), iterative, over a filtered subgraph.
//!
//! Used only off the fast path: for irreducible regions in `LoopInfo` and for the
//! reverse-unreachable regions (infinite loops) in `PostDomTree`.

use crate::tree::Adj;
use bitvec::vec::BitVec;
use cranelift_entity::EntityRef;
use gyre_ir::Block;

#[derive(Clone, Default)]
pub(crate) struct Scc {
    /// DFS number, 0 = unvisited.
    index: Vec<u32>,
    low: Vec<u32>,
    on_stack: BitVec,
    stack: Vec<Block>,
    frames: Vec<(Block, u32, u32)>,
    /// Component number + 1 of finished blocks (0 = none yet).
    comp: Vec<u32>,
}

impl Scc {
    /// Visit every block reachable from `starts` along edges `from -> to` with
    /// `keep(from, to)`, and call `emit(members, has_edge_out)` for each component in
    /// reverse topological order (sinks first). `has_edge_out` tells whether a kept edge
    /// leaves the component.
    pub fn run(
        &mut self,
        num_blocks: usize,
        starts: impl IntoIterator<Item = Block>,
        adj: Adj<'_>,
        keep: impl Fn(Block, Block) -> bool,
        mut emit: impl FnMut(&[Block], bool),
    ) {
        self.index.clear();
        self.index.resize(num_blocks, 0);
        self.low.clear();
        self.low.resize(num_blocks, 0);
        self.comp.clear();
        self.comp.resize(num_blocks, 0);
        self.on_stack.clear();
        self.on_stack.resize(num_blocks, false);
        self.stack.clear();
        let mut counter = 0u32;
        let mut ncomp = 0u32;
        for s in starts {
            if self.index[s.index()] != 0 {
                continue;
            }
            counter += 1;
            self.enter(s, counter, adj);
            while let Some(top) = self.frames.last_mut() {
                let v = top.0;
                if top.1 < top.2 {
                    let w = adj.targets[top.1 as usize];
                    top.1 += 1;
                    if !keep(v, w) {
                        continue;
                    }
                    if self.index[w.index()] == 0 {
                        counter += 1;
                        self.enter(w, counter, adj);
                    } else if self.on_stack[w.index()] {
                        let iw = self.index[w.index()];
                        let lv = &mut self.low[v.index()];
                        *lv = (*lv).min(iw);
                    }
                    continue;
                }
                self.frames.pop();
                let lv = self.low[v.index()];
                if lv == self.index[v.index()] {
                    ncomp += 1;
                    let pos = self
                        .stack
                        .iter()
                        .rposition(|&b| b == v)
                        .expect("SCC root is on the stack");
                    for &m in &self.stack[pos..] {
                        self.on_stack.set(m.index(), false);
                        self.comp[m.index()] = ncomp;
                    }
                    let members = &self.stack[pos..];
                    let out = members.iter().any(|&m| {
                        adj.edges(m.index())
                            .iter()
                            .any(|&w| keep(m, w) && self.comp[w.index()] != ncomp)
                    });
                    emit(members, out);
                    self.stack.truncate(pos);
                }
                if let Some(parent) = self.frames.last() {
                    let lp = &mut self.low[parent.0.index()];
                    *lp = (*lp).min(lv);
                }
            }
        }
    }

    fn enter(&mut self, b: Block, n: u32, adj: Adj<'_>) {
        self.index[b.index()] = n;
        self.low[b.index()] = n;
        self.on_stack.set(b.index(), true);
        self.stack.push(b);
        let [s, e] = adj.ranges[b.index()];
        self.frames.push((b, s, e));
    }
}
