//! Copy coalescing of block parameters with their arguments: a parameter and an argument
//! passed to it share one PTX register (a *class*) when their live ranges do not
//! interfere, so the edge's copy between them disappears (`i_next = add i, 1; jump
//! header(i_next)` is one `add.s32 %r1, %r1, 1`). The out-of-SSA translation of
//! Boissinot et al. ("Revisiting Out-of-SSA Translation for Correctness, Code Quality,
//! and Efficiency", CGO 2009) and Budimlic et al. ("Fast copy coalescing and live-range
//! identification", PLDI 2002), on the emitted code's liveness.
//!
//! **Candidates.** The parameters of reachable blocks with several incoming edges (the
//! others share their argument's register already, `fold::single_edge_aliases`) and
//! the arguments passed to them, each taken through the alias map to the value that
//! owns the register. Entry parameters (loaded at their home, `FnEmitter::scan_uses`)
//! and constants written as immediates are left out.
//!
//! **Liveness** is that of the emitted code, not of the IR: a value's register is read
//! where the emitter reads it. A folded value (`Fold::Addr`, `Ext`, `IndexAdd`, `Fused`,
//! `MulAdd`) is computed at its uses, so its operands are read there; a use of an alias
//! (a single-edge parameter, a narrow `zext`) reads its target; a block argument is
//! read at the end of the predecessor (the edge's parallel copy), a parameter written
//! at the start of its block. Live-in and live-out blocks are found per candidate by
//! walking predecessors back from its uses to its definition (explicit worklist), with a
//! budget linear in the function's size: a candidate whose liveness would exceed it
//! stays alone in its class.
//!
//! **Interference** (strict SSA: a value is live only where its definition dominates):
//! two values interfere when the one whose definition dominates the other's is live
//! just after that definition; two parameters of one block always interfere (their
//! copies write together). An instruction whose lowering writes its result before it has
//! read every operand (`clobbers_operands`: an `i1` `select`, two predicated moves)
//! keeps its operands live past its result.
//!
//! **Greedy merging**, most frequent edges first: by the loop depth of the edge (the
//! smaller of its two blocks'), back edges before others at one depth; a merge checks
//! every member of one class against every member of the other (classes whose product
//! of sizes exceeds [`MAX_PAIRS`] are not merged, keeping it linear).
//!
//! **Why it is sound.** The emitter writes a class's register only at the definition
//! of a member (a parameter: on its incoming edges, by the parallel copy, whose
//! remaining copies go between distinct classes and stay a parallel copy); no member is
//! live there but the one being defined, so each member's register holds its value over
//! its whole live range, folded uses included. That is the property the folds rely on
//! (`crate::fold`: "written once per execution of its definition" now reads "not
//! overwritten while live"). Two places write a register elsewhere and check for it:
//! a latch's early copies (`FnEmitter::copies_may_precede`: no member of a written
//! class may be live into the exit, [`Coalesced::may_write_on_exit`]) and the `mad.wide`
//! reuse within a block (`FnEmitter::widened`, which members of classes do not take
//! part in).
//!
//! O(instructions + blocks) apart from the budgeted liveness and the capped merges.

use crate::fold::{Fold, Zeroed};
use cranelift_entity::{EntityRef, SecondaryMap};
use gyre_analysis::{Cfg, DomTree, LoopInfo};
use gyre_ir::{Block, Function, InstructionData, Opcode, Type, Value, ValueDef};

/// No candidate / not computed.
const NONE: u32 = u32::MAX;

/// The position of a block argument's use: the edge's copy, after every instruction.
const END: u32 = u32::MAX;

/// The most member pairs one merge checks.
pub(crate) const MAX_PAIRS: u32 = 256;

/// The classes of one function: which values share a register with others.
#[derive(Default)]
pub(crate) struct Coalesced {
    /// Per value: 1 + the index of its class's representative, for a member of a class
    /// of two or more; 0 otherwise. Empty when nothing was coalesced.
    rep: Vec<u32>,
    /// Per value: 1 + its candidate index; 0 for a value that is no candidate.
    cand_of: Vec<u32>,
    /// The circular list of each class's members (by candidate index).
    next: Vec<u32>,
    /// The candidates' values.
    cands: Vec<Value>,
    /// Per candidate: its live-in blocks (RPO numbers, sorted) as a range of `live_in`.
    live_in_at: Vec<(u32, u32)>,
    live_in: Vec<u32>,
}

impl Coalesced {
    /// The value whose register `v` shares (`v` itself unaliased: see
    /// `FnEmitter::v_first`), if `v` is in a class with others.
    #[inline]
    pub(crate) fn rep(&self, v: Value) -> Option<Value> {
        match self.rep.get(v.index()) {
            Some(&r) if r != 0 => Some(Value::new(r as usize - 1)),
            _ => None,
        }
    }

    /// Is `v` in a class with other values?
    #[inline]
    pub(crate) fn is_member(&self, v: Value) -> bool {
        self.rep(v).is_some()
    }

    /// May the registers of `q`'s class be written on a path into `exit` (a latch's
    /// copies done before its branch)? Only if no member is live into `exit` (`rpo` its
    /// RPO number) nor a parameter of it. For a member of a class (all members have their
    /// liveness).
    pub(crate) fn may_write_on_exit(&self, f: &Function, q: Value, exit: Block, rpo: u32) -> bool {
        let Some(&c0) = self.cand_of.get(q.index()) else {
            return false;
        };
        if c0 == 0 {
            return false;
        }
        let c0 = c0 - 1;
        let mut c = c0;
        loop {
            let v = self.cands[c as usize];
            if matches!(f.dfg.value_def(v), ValueDef::Param(b, _) if b == exit) {
                return false;
            }
            let (s, e) = self.live_in_at[c as usize];
            if s == NONE
                || self.live_in[s as usize..e as usize]
                    .binary_search(&rpo)
                    .is_ok()
            {
                return false;
            }
            c = self.next[c as usize];
            if c == c0 {
                return true;
            }
        }
    }

    /// How many values share a register with others (for tests and statistics).
    #[cfg(test)]
    pub(crate) fn members(&self) -> usize {
        self.rep.iter().filter(|&&r| r != 0).count()
    }
}

/// Does the lowering of `data` write its result before reading every operand? (Then the
/// result may not share a register with an operand.) `select` of `i1` is two predicated
/// `mov.pred`s, the second reading the condition after the first wrote the result;
/// every other lowering reads its operands (into temporaries where it needs them
/// converted) before its first write of the result, then reads only the result.
fn clobbers_operands(data: &InstructionData, f: &Function) -> bool {
    matches!(*data, InstructionData::Ternary { opcode: Opcode::Select, args }
        if f.dfg.value_type(args[1]) == Type::I1)
}

/// The classes of `f`: parameters merged with their arguments where that is sound.
/// `alias` and `aliased` are the emitter's alias map and its keys, `folds` its folds.
pub(crate) fn coalesce(
    f: &Function,
    cfg: &Cfg,
    dt: &DomTree,
    li: &LoopInfo,
    folds: &SecondaryMap<Value, Fold>,
    alias: &SecondaryMap<Value, Option<Value>>,
    aliased: &[Value],
) -> Coalesced {
    let dfg = &f.dfg;
    let entry = f.entry_block();
    let root = |mut v: Value| {
        while let Some(a) = alias[v] {
            v = a;
        }
        v
    };
    let rpo = cfg.rpo();
    // (parameter, argument's register value, priority) of every copy an edge would do.
    let mut pairs: Vec<(Value, Value, u32)> = Vec::new();
    for &b in rpo {
        let Some(term) = f.layout.last_inst(b) else {
            continue;
        };
        dfg.for_each_dest(term, |bc| {
            let s = bc.block;
            if Some(s) == entry {
                return;
            }
            let params = dfg.block_params(s);
            if params.is_empty() || params.iter().any(|&p| alias[p].is_some()) {
                // A block with one incoming edge: its parameters are aliases already.
                return;
            }
            let depth = li.loop_depth(b).min(li.loop_depth(s));
            let back = li.is_header(s) && li.innermost_loop(s).is_some_and(|l| li.contains(l, b));
            let key = 2 * depth + u32::from(back);
            for (&p, &a) in params.iter().zip(dfg.block_call_args(bc)) {
                let r = root(a);
                let register = folds[r] == Fold::None
                    && !matches!(dfg.value_def(r), ValueDef::Param(pb, _) if Some(pb) == entry);
                if register && r != p {
                    pairs.push((p, r, key));
                }
            }
        });
    }
    if pairs.is_empty() {
        return Coalesced::default();
    }
    // Most frequent first; ties in the order found (RPO), so the result is deterministic.
    pairs.sort_by_key(|&(_, _, k)| core::cmp::Reverse(k));

    let n = dfg.num_values();
    let mut cand_of: Zeroed<Value> = Zeroed::new(n);
    let mut cands: Vec<Value> = Vec::new();
    for &(p, r, _) in &pairs {
        for v in [p, r] {
            if cand_of[v] == 0 {
                cands.push(v);
                cand_of[v] = cands.len() as u32;
            }
        }
    }
    let nc = cands.len();
    let nb = rpo.len();
    // RPO numbers by block index (`u32::MAX`: unreachable).
    let mut rpo_of: Vec<u32> = vec![NONE; f.dfg.num_blocks()];
    for (i, &b) in rpo.iter().enumerate() {
        rpo_of[b.index()] = i as u32;
    }
    // Definitions: (RPO number, position); a parameter at 0, the `k`th instruction at
    // `2k` (a read after it, by a clobbering lowering, at `2k + 1`).
    let mut def: Vec<(u32, u32)> = vec![(NONE, NONE); nc];
    for (c, &v) in cands.iter().enumerate() {
        if let ValueDef::Param(b, _) = dfg.value_def(v) {
            def[c] = (rpo_of[b.index()], 0);
        }
    }
    // Which operands need a look: 1 a candidate, 2 a folded or aliased value (its reads
    // are found through `reads`). One byte test per operand otherwise.
    let mut hot = vec![0u8; n];
    for (v, fold) in folds.iter() {
        if !matches!(fold, Fold::None | Fold::Shifted { .. }) && v.index() < n {
            hot[v.index()] = 2;
        }
    }
    for &v in aliased {
        if alias[v].is_some() {
            hot[v.index()] = 2;
        }
    }
    for &v in &cands {
        hot[v.index()] = 1;
    }
    // Every read of a candidate's register: (candidate, RPO number, position), in RPO
    // and position order.
    let mut uses: Vec<(u32, u32, u32)> = Vec::new();
    let mut stack: Vec<Value> = Vec::new();
    let mut read =
        |v: Value, bi: u32, pos: u32, uses: &mut Vec<(u32, u32, u32)>| match hot[v.index()] {
            0 => {}
            1 => uses.push((cand_of[v] - 1, bi, pos)),
            _ => {
                // A folded value's operands are read where it is used; an alias's target.
                stack.push(v);
                while let Some(v) = stack.pop() {
                    let v = root(v);
                    match folds[v] {
                        Fold::None | Fold::Shifted { .. } => {
                            if hot[v.index()] == 1 {
                                uses.push((cand_of[v] - 1, bi, pos));
                            }
                        }
                        Fold::Addr { base, .. } => stack.push(base),
                        Fold::IndexAdd { x } => stack.push(x),
                        Fold::Ext | Fold::Fused | Fold::MulAdd => {
                            if let ValueDef::Result(i) = dfg.value_def(v) {
                                stack.extend_from_slice(dfg.inst_args(i));
                            }
                        }
                        Fold::Imm | Fold::Unused => {}
                    }
                }
            }
        };
    for (bi, &b) in rpo.iter().enumerate() {
        let bi = bi as u32;
        let mut pos = 0u32;
        for inst in f.layout.block_insts(b) {
            pos += 2;
            if let Some(r) = dfg.inst_result(inst) {
                match hot[r.index()] {
                    // Not emitted here: computed at its uses, or another's register.
                    2 => continue,
                    1 => def[(cand_of[r] - 1) as usize] = (bi, pos),
                    _ => {}
                }
            }
            let data = dfg.inst(inst);
            let at = pos + u32::from(clobbers_operands(data, f));
            for &v in dfg.inst_args(inst) {
                read(v, bi, at, &mut uses);
            }
        }
        if let Some(term) = f.layout.last_inst(b) {
            dfg.for_each_dest(term, |bc| {
                for (&p, &a) in dfg
                    .block_params(bc.block)
                    .iter()
                    .zip(dfg.block_call_args(bc))
                {
                    // A single-edge parameter's uses are its argument's already.
                    if alias[p].is_none() {
                        read(a, bi, END, &mut uses);
                    }
                }
            });
        }
    }
    // The uses grouped by candidate (a stable counting sort: still in RPO and position
    // order within each).
    let mut start = vec![0u32; nc + 1];
    for &(c, _, _) in &uses {
        start[c as usize + 1] += 1;
    }
    for i in 0..nc {
        start[i + 1] += start[i];
    }
    let mut fill = start.clone();
    let mut by_cand = vec![(0u32, 0u32); uses.len()];
    for &(c, bi, pos) in &uses {
        by_cand[fill[c as usize] as usize] = (bi, pos);
        fill[c as usize] += 1;
    }
    drop(uses);

    let mut b = Builder {
        cfg,
        rpo,
        rpo_of,
        def,
        use_start: start,
        uses: by_cand,
        live_in_at: vec![(NONE, NONE); nc],
        live_out_at: vec![(NONE, NONE); nc],
        live_in: Vec::new(),
        live_out: Vec::new(),
        failed: vec![false; nc],
        in_stamp: vec![0; nb],
        out_stamp: vec![0; nb],
        work: Vec::new(),
        budget: 32 * nb as u64 + 4 * n as u64 + 4096,
    };

    // Union-find over candidates, with each class's members in a circular list.
    let mut parent: Vec<u32> = (0..nc as u32).collect();
    let mut size: Vec<u32> = vec![1; nc];
    let mut next: Vec<u32> = (0..nc as u32).collect();
    let find = |parent: &mut Vec<u32>, mut x: u32| {
        while parent[x as usize] != x {
            let g = parent[parent[x as usize] as usize];
            parent[x as usize] = g;
            x = g;
        }
        x
    };
    let members = |next: &Vec<u32>, c: u32, out: &mut Vec<u32>| {
        out.clear();
        let mut m = c;
        loop {
            out.push(m);
            m = next[m as usize];
            if m == c {
                break;
            }
        }
    };
    let (mut ma, mut mb) = (Vec::new(), Vec::new());
    let mut merged = false;
    for &(p, r, _) in &pairs {
        let (cp, cr) = (cand_of[p] - 1, cand_of[r] - 1);
        let (rp, rr) = (find(&mut parent, cp), find(&mut parent, cr));
        if rp == rr || size[rp as usize] * size[rr as usize] > MAX_PAIRS {
            continue;
        }
        members(&next, cp, &mut ma);
        members(&next, cr, &mut mb);
        if !ma.iter().chain(&mb).all(|&c| b.liveness(c)) {
            continue;
        }
        let interferes = ma
            .iter()
            .any(|&x| mb.iter().any(|&y| b.interfere(dt, x, y)));
        if interferes {
            continue;
        }
        // Union by size; splice the two circular lists.
        let (big, small) = if size[rp as usize] >= size[rr as usize] {
            (rp, rr)
        } else {
            (rr, rp)
        };
        parent[small as usize] = big;
        size[big as usize] += size[small as usize];
        next.swap(cp as usize, cr as usize);
        merged = true;
    }
    if !merged {
        return Coalesced::default();
    }
    let mut rep: Vec<u32> = vec![0; n];
    for c in 0..nc as u32 {
        let root = find(&mut parent, c);
        if size[root as usize] > 1 {
            rep[cands[c as usize].index()] = cands[root as usize].as_u32() + 1;
        }
    }
    Coalesced {
        rep,
        cand_of: cand_of.into_vec(),
        next,
        cands,
        live_in_at: b.live_in_at,
        live_in: b.live_in,
    }
}

/// The liveness of the candidates, computed on demand.
struct Builder<'a> {
    cfg: &'a Cfg,
    rpo: &'a [Block],
    /// RPO number by block index.
    rpo_of: Vec<u32>,
    /// Per candidate: (RPO number, position) of its definition.
    def: Vec<(u32, u32)>,
    /// Per candidate: its reads, a range of `uses`, each (RPO number, position) in order.
    use_start: Vec<u32>,
    uses: Vec<(u32, u32)>,
    /// Per candidate: its live-in and live-out blocks (RPO numbers, sorted) as ranges of
    /// the flat lists; `(NONE, NONE)` until computed.
    live_in_at: Vec<(u32, u32)>,
    live_out_at: Vec<(u32, u32)>,
    live_in: Vec<u32>,
    live_out: Vec<u32>,
    /// Candidates whose liveness was not computed (over the budget, or no definition).
    failed: Vec<bool>,
    /// Per block: 1 + the candidate last marked live-in / live-out there.
    in_stamp: Vec<u32>,
    out_stamp: Vec<u32>,
    work: Vec<u32>,
    /// Blocks and edges the walks may still visit.
    budget: u64,
}

impl Builder<'_> {
    /// Compute `c`'s liveness if not done; `false` if it cannot be had.
    fn liveness(&mut self, c: u32) -> bool {
        let ci = c as usize;
        if self.failed[ci] {
            return false;
        }
        if self.live_in_at[ci].0 != NONE {
            return true;
        }
        let (d, _) = self.def[ci];
        if d == NONE {
            self.failed[ci] = true;
            return false;
        }
        let stamp = c + 1;
        let (in0, out0) = (self.live_in.len(), self.live_out.len());
        let (s, e) = (self.use_start[ci] as usize, self.use_start[ci + 1] as usize);
        self.work.clear();
        for k in s..e {
            let (bi, pos) = self.uses[k];
            if pos == END && self.out_stamp[bi as usize] != stamp {
                self.out_stamp[bi as usize] = stamp;
                self.live_out.push(bi);
            }
            if bi != d && self.in_stamp[bi as usize] != stamp {
                self.in_stamp[bi as usize] = stamp;
                self.live_in.push(bi);
                self.work.push(bi);
            }
        }
        // Up from each live-in block to the definition.
        while let Some(bi) = self.work.pop() {
            let preds = self.cfg.preds(self.rpo[bi as usize]);
            if self.budget < preds.len() as u64 + 1 {
                self.live_in.truncate(in0);
                self.live_out.truncate(out0);
                self.failed[ci] = true;
                self.budget = 0;
                return false;
            }
            self.budget -= preds.len() as u64 + 1;
            for &p in preds {
                let pi = self.rpo_of[p.index()];
                if pi == NONE {
                    continue;
                }
                if self.out_stamp[pi as usize] != stamp {
                    self.out_stamp[pi as usize] = stamp;
                    self.live_out.push(pi);
                }
                if pi != d && self.in_stamp[pi as usize] != stamp {
                    self.in_stamp[pi as usize] = stamp;
                    self.live_in.push(pi);
                    self.work.push(pi);
                }
            }
        }
        self.live_in[in0..].sort_unstable();
        self.live_out[out0..].sort_unstable();
        self.live_in_at[ci] = (in0 as u32, self.live_in.len() as u32);
        self.live_out_at[ci] = (out0 as u32, self.live_out.len() as u32);
        true
    }

    fn live_in(&self, c: u32, bi: u32) -> bool {
        let (s, e) = self.live_in_at[c as usize];
        self.live_in[s as usize..e as usize]
            .binary_search(&bi)
            .is_ok()
    }

    fn live_out(&self, c: u32, bi: u32) -> bool {
        let (s, e) = self.live_out_at[c as usize];
        self.live_out[s as usize..e as usize]
            .binary_search(&bi)
            .is_ok()
    }

    /// Is `c` live just after position `pos` of block `bi` (a position at or after its
    /// definition)? Position 0 is the block's start (where its parameters are written).
    fn live_at(&self, c: u32, bi: u32, pos: u32) -> bool {
        if pos == 0 {
            return self.live_in(c, bi);
        }
        if self.live_out(c, bi) {
            return true;
        }
        // The last read of `c` in the block.
        let (s, e) = (
            self.use_start[c as usize] as usize,
            self.use_start[c as usize + 1] as usize,
        );
        let us = &self.uses[s..e];
        let k = us.partition_point(|&(b, _)| b <= bi);
        k > 0 && us[k - 1].0 == bi && us[k - 1].1 > pos
    }

    /// Do the live ranges of candidates `x` and `y` (both with liveness) intersect?
    fn interfere(&self, dt: &DomTree, x: u32, y: u32) -> bool {
        let (dx, px) = self.def[x as usize];
        let (dy, py) = self.def[y as usize];
        if dx == dy && px == 0 && py == 0 {
            // Two parameters of one block: the same edges write both.
            return true;
        }
        let dom = |(a, pa): (u32, u32), (b, pb): (u32, u32)| {
            if a == b {
                pa <= pb
            } else {
                dt.dominates(self.rpo[a as usize], self.rpo[b as usize])
            }
        };
        if dom((dx, px), (dy, py)) {
            self.live_at(x, dy, py)
        } else if dom((dy, py), (dx, px)) {
            self.live_at(y, dx, px)
        } else {
            false
        }
    }
}
