//! Dominators of a function's blocks, for placing `!llvm.loop` nodes: a loop's latch is
//! a predecessor of its header that the header dominates.

use gyre_ir::{Block, Function, SecondaryMap};

/// Immediate dominators by reverse post-order number.
pub(crate) struct Dominators {
    /// Each block's reverse post-order number (`u32::MAX`: unreachable).
    num: SecondaryMap<Block, u32>,
    /// Each number's immediate dominator's number (the entry's is itself).
    idom: Vec<u32>,
}

impl Dominators {
    /// Immediate dominators of the blocks reachable from `entry` (Cooper, Harvey and
    /// Kennedy's iteration over a reverse post-order; explicit stacks, no recursion).
    pub(crate) fn new(f: &Function, entry: Block) -> Dominators {
        const NONE: u32 = u32::MAX;
        let mut seen: SecondaryMap<Block, bool> = SecondaryMap::new();
        let mut post: Vec<Block> = Vec::new();
        let mut stack: Vec<(Block, Vec<Block>)> = Vec::new();
        let succs = |b: Block| {
            let mut v = Vec::new();
            f.for_each_successor(b, |s| v.push(s));
            v.reverse();
            v
        };
        seen[entry] = true;
        stack.push((entry, succs(entry)));
        while let Some((b, rest)) = stack.last_mut() {
            match rest.pop() {
                Some(s) if !seen[s] => {
                    seen[s] = true;
                    let ss = succs(s);
                    stack.push((s, ss));
                }
                Some(_) => {}
                None => {
                    post.push(*b);
                    stack.pop();
                }
            }
        }
        let n = post.len();
        let mut num: SecondaryMap<Block, u32> = SecondaryMap::with_default(NONE);
        for (i, &b) in post.iter().rev().enumerate() {
            num[b] = i as u32;
        }
        let mut preds: Vec<Vec<u32>> = vec![Vec::new(); n];
        for &b in &post {
            f.for_each_successor(b, |s| preds[num[s] as usize].push(num[b]));
        }
        let mut idom = vec![NONE; n];
        idom[0] = 0;
        let mut changed = true;
        while changed {
            changed = false;
            for i in 1..n {
                let mut new = NONE;
                for &p in &preds[i] {
                    if idom[p as usize] == NONE {
                        continue;
                    }
                    new = if new == NONE {
                        p
                    } else {
                        let (mut a, mut b) = (p, new);
                        while a != b {
                            while a > b {
                                a = idom[a as usize];
                            }
                            while b > a {
                                b = idom[b as usize];
                            }
                        }
                        a
                    };
                }
                if new != idom[i] {
                    idom[i] = new;
                    changed = true;
                }
            }
        }
        Dominators { num, idom }
    }

    /// Does `a` dominate `b`? (`false` when either is unreachable.)
    pub(crate) fn dominates(&self, a: Block, b: Block) -> bool {
        let (a, mut b) = (self.num[a], self.num[b]);
        if a == u32::MAX || b == u32::MAX {
            return false;
        }
        while b > a {
            b = self.idom[b as usize];
        }
        b == a
    }
}
