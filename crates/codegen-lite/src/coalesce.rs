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
//! at the start of its block. The reads are recorded in the emitter's one walk over
//! every use (`FnEmitter::scan_uses`). A candidate's live-in blocks are found by walking
//! predecessors back from its reads to its definition (an explicit worklist) and kept as
//! a bit set over their RPO range; live-out is asked of the successors. The walks share a
//! budget linear in the function's size ([`BUDGET_PER_BLOCK`] per block and
//! [`BUDGET_EXTRA`]; the corpus kernels stay well within it): a candidate whose liveness
//! would exceed it stays alone in its class.
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
//! O(instructions + blocks + values) apart from the budgeted liveness and the capped
//! merges.

use crate::fold::{Fold, Zeroed};
use cranelift_entity::{EntityRef, SecondaryMap};
use gyre_analysis::{Cfg, DomTree, LoopInfo};
use gyre_ir::{Block, Function, Inst, InstructionData, Layout, Opcode, Type, Value, ValueDef};

/// No candidate / not computed.
const NONE: u32 = u32::MAX;

/// The point of a block argument's read: the edge's copy, after every instruction.
const END: u32 = u32::MAX;

/// The point of a block parameter's definition: the block's start.
const START: u32 = 0;

/// The point of instruction `inst` (ordered within a block by the layout, see
/// [`after`]); `late` for a read after the instruction has written its result.
fn point(inst: Inst, late: bool) -> u32 {
    2 * (inst.as_u32() + 1) + u32::from(late)
}

/// Is point `u` after point `d`, both in one block?
fn after(layout: &Layout, u: u32, d: u32) -> bool {
    match (u, d) {
        (END, _) => d != END,
        (_, END) => false,
        (START, _) => false,
        (_, START) => true,
        _ => match layout.pp_cmp(
            Inst::new((u / 2 - 1) as usize),
            Inst::new((d / 2 - 1) as usize),
        ) {
            core::cmp::Ordering::Greater => true,
            core::cmp::Ordering::Equal => u > d,
            core::cmp::Ordering::Less => false,
        },
    }
}

/// Blocks and edges the liveness walks of one function may visit (and words of live-in
/// sets they may fill), per block of the function...
const BUDGET_PER_BLOCK: u64 = 8;
/// ... and in addition: the corpus kernels need at most 26 per block, 10.5k on their
/// largest function (416 blocks), so every corpus kernel is coalesced in full.
const BUDGET_EXTRA: u64 = 8192;

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
    /// Per candidate: its live-in blocks.
    live_in: LiveSets,
}

/// Per candidate, the blocks (by RPO number) it is live into: a bit set over the RPO
/// range from its first such block (live ranges are mostly contiguous in RPO, where loop
/// bodies are), all in one flat array.
#[derive(Default)]
struct LiveSets {
    /// Per candidate: (first RPO number, first word in `bits`, words); `NONE` words
    /// until computed.
    at: Vec<(u32, u32, u32)>,
    bits: Vec<u64>,
}

impl LiveSets {
    fn with_candidates(nc: usize) -> LiveSets {
        LiveSets {
            at: vec![(0, 0, NONE); nc],
            bits: Vec::new(),
        }
    }

    /// Is the set of `c` computed?
    fn computed(&self, c: u32) -> bool {
        self.at[c as usize].2 != NONE
    }

    /// Is `c` live into the block of RPO number `bi`? (`false` when not computed.)
    #[inline]
    fn contains(&self, c: u32, bi: u32) -> bool {
        let (lo, start, words) = self.at[c as usize];
        if bi < lo || words == NONE {
            return false;
        }
        let k = (bi - lo) as usize;
        k / 64 < words as usize && self.bits[start as usize + k / 64] & (1 << (k % 64)) != 0
    }

    /// Store the set of `c`: `blocks` (in any order, at least one) from `lo` to `hi`.
    fn set(&mut self, c: u32, blocks: &[u32], lo: u32, hi: u32) {
        let words = (hi - lo) as usize / 64 + 1;
        let start = self.bits.len();
        self.bits.resize(start + words, 0);
        for &b in blocks {
            let k = (b - lo) as usize;
            self.bits[start + k / 64] |= 1 << (k % 64);
        }
        self.at[c as usize] = (lo, start as u32, words as u32);
    }

    /// `c` is live into no block.
    fn set_empty(&mut self, c: u32) {
        self.at[c as usize] = (0, 0, 0);
    }
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
            if !self.live_in.computed(c) || self.live_in.contains(c, rpo) {
                return false;
            }
            c = self.next[c as usize];
            if c == c0 {
                return true;
            }
        }
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

/// Coalescing in three steps: [`Collector::new`] finds the candidates (`None` when no
/// edge copies anything), the emitter's walk over every use (`FnEmitter::scan_uses`, one
/// walk for both) records their reads, and [`Collector::finish`] merges.
pub(crate) struct Collector {
    /// (parameter, argument's register value, priority) of every copy an edge would do,
    /// most frequent first.
    pairs: Vec<(Value, Value, u32)>,
    cands: Vec<Value>,
    /// Per value: 1 + its candidate index, 0 for none.
    cand_of: Zeroed<Value>,
    /// RPO number by block index (`NONE`: unreachable).
    rpo_of: Vec<u32>,
    /// Per candidate: (RPO number, point; see [`point`]) of its definition.
    def: Vec<(u32, u32)>,
    /// Which operands need a look: 1 a candidate, 2 a folded or aliased value whose
    /// reads may include a candidate's (see [`Collector::read`]).
    hot: Vec<u8>,
    /// Every read of a candidate's register: (candidate, RPO number, point), in RPO and
    /// layout order.
    uses: Vec<(u32, u32, u32)>,
    stack: Vec<Value>,
}

/// The function and the emitter's decisions the collector reads: its folds, its alias
/// map (single-edge parameters, narrow `zext`s) and the keys of that map.
pub(crate) struct Ir<'a> {
    pub(crate) f: &'a Function,
    pub(crate) folds: &'a SecondaryMap<Value, Fold>,
    pub(crate) alias: &'a SecondaryMap<Value, Option<Value>>,
}

impl Collector {
    /// The candidates of `ir.f`: `edge_args` lists the (parameter, argument,
    /// predecessor) of every edge into a block with several incoming edges (from
    /// `fold::single_edge_aliases`, in RPO), `folded` the values folded into their uses
    /// that read registers there (`fold::address_folds`), `aliased` the keys of
    /// `ir.alias`.
    pub(crate) fn new(
        ir: &Ir,
        li: &LoopInfo,
        cfg: &Cfg,
        edge_args: &[(Value, Value, Block)],
        folded: &[Value],
        aliased: &[Value],
    ) -> Option<Collector> {
        let Ir { f, folds, alias } = *ir;
        let dfg = &f.dfg;
        let entry = f.entry_block();
        let rpo = cfg.rpo();
        let mut pairs: Vec<(Value, Value, u32)> = Vec::new();
        // The priority of the edge the last pair came from.
        let mut last: Option<(Block, Block, u32)> = None;
        for &(p, a, b) in edge_args {
            let mut r = a;
            while let Some(x) = alias[r] {
                r = x;
            }
            let register = folds[r] == Fold::None
                && !matches!(dfg.value_def(r), ValueDef::Param(pb, _) if Some(pb) == entry);
            if !register || r == p {
                continue;
            }
            let ValueDef::Param(s, _) = dfg.value_def(p) else {
                continue;
            };
            let k = match last {
                Some((lb, ls, k)) if lb == b && ls == s => k,
                _ => {
                    let depth = li.loop_depth(b).min(li.loop_depth(s));
                    let back =
                        li.is_header(s) && li.innermost_loop(s).is_some_and(|l| li.contains(l, b));
                    let k = 2 * depth + u32::from(back);
                    last = Some((b, s, k));
                    k
                }
            };
            pairs.push((p, r, k));
        }
        if pairs.is_empty() {
            return None;
        }
        // Most frequent first; ties in the order found (RPO), so the result is
        // deterministic: a counting sort by priority (a small number), descending.
        let top = pairs.iter().map(|&(_, _, k)| k as usize).max().unwrap_or(0);
        let mut start = vec![0u32; top + 2];
        for &(_, _, k) in &pairs {
            start[top - k as usize + 1] += 1;
        }
        for i in 0..=top {
            start[i + 1] += start[i];
        }
        let mut sorted = vec![(pairs[0].0, pairs[0].1, 0); pairs.len()];
        for &pair in &pairs {
            let slot = &mut start[top - pair.2 as usize];
            sorted[*slot as usize] = pair;
            *slot += 1;
        }
        let pairs = sorted;

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
        let mut rpo_of: Vec<u32> = vec![NONE; dfg.num_blocks().max(cfg.num_block_slots())];
        for (i, &b) in rpo.iter().enumerate() {
            rpo_of[b.index()] = i as u32;
        }
        let def = cands
            .iter()
            .map(|&v| match dfg.value_def(v) {
                ValueDef::Param(b, _) => (rpo_of[b.index()], START),
                ValueDef::Result(i) => match f.layout.inst_block(i) {
                    Some(b) if rpo_of[b.index()] != NONE => (rpo_of[b.index()], point(i, false)),
                    _ => (NONE, NONE),
                },
                _ => (NONE, NONE),
            })
            .collect();
        let mut hot = vec![0u8; n];
        for &v in folded {
            hot[v.index()] = 2;
        }
        for &v in aliased {
            if alias[v].is_some() {
                hot[v.index()] = 2;
            }
        }
        for &v in &cands {
            hot[v.index()] = 1;
        }
        Some(Collector {
            pairs,
            cands,
            cand_of,
            rpo_of,
            def,
            hot,
            uses: Vec::new(),
            stack: Vec::new(),
        })
    }

    /// Might a use of `v` read a candidate's register? (One byte test: most operands
    /// are passed over on it.)
    #[inline]
    pub(crate) fn wants(&self, v: Value) -> bool {
        self.hot[v.index()] != 0
    }

    /// Operand `v` of `inst`, in the block of RPO number `bi` (a [`Collector::wants`]
    /// one). A folded or aliased instruction is not emitted where it stands, but reading
    /// its operands there too adds no liveness (they are live there: its uses, which read
    /// them, are reachable from it), so every instruction is walked alike.
    pub(crate) fn read_operand(&mut self, ir: &Ir, inst: Inst, v: Value, bi: u32) {
        let at = point(inst, clobbers_operands(ir.f.dfg.inst(inst), ir.f));
        self.read(ir, v, bi, at);
    }

    /// Argument `a` passed to parameter `p` on an edge from the block of RPO number `bi`:
    /// read by the edge's copy, unless `p` is an alias of it (one incoming edge), whose
    /// uses are its argument's already.
    pub(crate) fn read_edge(&mut self, ir: &Ir, p: Value, a: Value, bi: u32) {
        if ir.alias[p].is_none() && self.wants(a) {
            self.read(ir, a, bi, END);
        }
    }

    /// Record the reads of candidates a use of `v` at `at` makes.
    fn read(&mut self, ir: &Ir, v: Value, bi: u32, at: u32) {
        match self.hot[v.index()] {
            0 => {}
            1 => self.uses.push((self.cand_of[v] - 1, bi, at)),
            _ => {
                // A folded value's operands are read where it is used; an alias's target.
                let dfg = &ir.f.dfg;
                let before = self.uses.len();
                self.stack.push(v);
                while let Some(mut x) = self.stack.pop() {
                    while let Some(a) = ir.alias[x] {
                        x = a;
                    }
                    match ir.folds[x] {
                        Fold::None | Fold::Shifted { .. } => {
                            if self.hot[x.index()] == 1 {
                                self.uses.push((self.cand_of[x] - 1, bi, at));
                            }
                        }
                        Fold::Addr { base, .. } => self.stack.push(base),
                        Fold::IndexAdd { x } => self.stack.push(x),
                        Fold::Ext | Fold::Fused | Fold::MulAdd => {
                            if let ValueDef::Result(i) = dfg.value_def(x) {
                                self.stack.extend_from_slice(dfg.inst_args(i));
                            }
                        }
                        Fold::Imm | Fold::Unused => {}
                    }
                }
                if self.uses.len() == before {
                    // It reads no candidate, wherever it is used: not looked at again.
                    self.hot[v.index()] = 0;
                }
            }
        }
    }

    /// Merge, once every read has been recorded.
    pub(crate) fn finish(self, f: &Function, cfg: &Cfg, dt: &DomTree) -> Coalesced {
        let Collector {
            pairs,
            cands,
            cand_of,
            rpo_of,
            def,
            uses,
            ..
        } = self;
        let rpo = cfg.rpo();
        let (nc, nb) = (cands.len(), rpo.len());
        // The uses grouped by candidate (a stable counting sort: still in RPO and layout
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
        // Each block's reachable predecessors by RPO number, in one array (the walks below
        // visit them many times).
        let mut pred_start: Vec<u32> = Vec::with_capacity(nb + 1);
        let mut preds: Vec<u32> = Vec::with_capacity(nb + nb / 2);
        for &b in rpo {
            pred_start.push(preds.len() as u32);
            preds.extend(
                cfg.preds(b)
                    .iter()
                    .map(|p| rpo_of[p.index()])
                    .filter(|&p| p != NONE),
            );
        }
        pred_start.push(preds.len() as u32);

        let mut b = Builder {
            cfg,
            layout: &f.layout,
            rpo,
            rpo_of,
            pred_start,
            preds,
            def,
            use_start: start,
            uses: by_cand,
            live_in: LiveSets::with_candidates(nc),
            found: Vec::new(),
            failed: vec![false; nc],
            in_stamp: vec![0; nb],
            budget: BUDGET_PER_BLOCK * nb as u64 + BUDGET_EXTRA,
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
            // Every member of a class of two or more has its liveness (it was merged), so
            // the two candidates' own say whether all members have.
            if !b.liveness(cp) || !b.liveness(cr) {
                continue;
            }
            members(&next, cp, &mut ma);
            members(&next, cr, &mut mb);
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
        let mut rep: Vec<u32> = vec![0; f.dfg.num_values()];
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
            live_in: b.live_in,
        }
    }
}

/// The liveness of the candidates, computed on demand.
struct Builder<'a> {
    cfg: &'a Cfg,
    layout: &'a Layout,
    rpo: &'a [Block],
    /// Per RPO number: its reachable predecessors, a range of `preds`.
    pred_start: Vec<u32>,
    preds: Vec<u32>,
    /// RPO number by block index.
    rpo_of: Vec<u32>,
    /// Per candidate: (RPO number, point) of its definition.
    def: Vec<(u32, u32)>,
    /// Per candidate: its reads, a range of `uses`, each (RPO number, point) in order.
    use_start: Vec<u32>,
    uses: Vec<(u32, u32)>,
    /// Per candidate: the blocks it is live into.
    live_in: LiveSets,
    /// The blocks found by the walk in progress.
    found: Vec<u32>,
    /// Candidates whose liveness was not computed (over the budget, or no definition).
    failed: Vec<bool>,
    /// Per block: 1 + the candidate last marked live into it.
    in_stamp: Vec<u32>,
    /// Blocks and edges the walks may still visit.
    budget: u64,
}

impl Builder<'_> {
    /// Compute `c`'s liveness if not done; `false` if it cannot be had. Its live-in
    /// blocks: up from each block that reads it (a block argument: from the end of its
    /// block) through predecessors, stopping at its definition's block. Live-out sets are
    /// not kept: [`Builder::live_out`] asks the successors.
    fn liveness(&mut self, c: u32) -> bool {
        let ci = c as usize;
        if self.failed[ci] {
            return false;
        }
        if self.live_in.computed(c) {
            return true;
        }
        let (d, _) = self.def[ci];
        if d == NONE {
            self.failed[ci] = true;
            return false;
        }
        let stamp = c + 1;
        let (s, e) = (self.use_start[ci] as usize, self.use_start[ci + 1] as usize);
        // `found` is the worklist too: every block in it is visited once, in order.
        self.found.clear();
        let (mut lo, mut hi) = (NONE, 0);
        for k in s..e {
            let (bi, _) = self.uses[k];
            // A read in the defining block itself comes after the definition.
            if bi != d && self.in_stamp[bi as usize] != stamp {
                self.in_stamp[bi as usize] = stamp;
                self.found.push(bi);
            }
        }
        let mut next = 0;
        while let Some(&bi) = self.found.get(next) {
            next += 1;
            lo = lo.min(bi);
            hi = hi.max(bi);
            let (ps, pe) = (
                self.pred_start[bi as usize] as usize,
                self.pred_start[bi as usize + 1] as usize,
            );
            let cost = (pe - ps) as u64 + 1;
            if self.budget < cost {
                self.failed[ci] = true;
                self.budget = 0;
                return false;
            }
            self.budget -= cost;
            for &pi in &self.preds[ps..pe] {
                if pi != d && self.in_stamp[pi as usize] != stamp {
                    self.in_stamp[pi as usize] = stamp;
                    self.found.push(pi);
                }
            }
        }
        if self.found.is_empty() {
            self.live_in.set_empty(c);
            return true;
        }
        // The set's words count against the budget too.
        let words = u64::from(hi - lo) / 64 + 1;
        if self.budget < words {
            self.failed[ci] = true;
            self.budget = 0;
            return false;
        }
        self.budget -= words;
        self.live_in.set(c, &self.found, lo, hi);
        true
    }

    fn live_in(&self, c: u32, bi: u32) -> bool {
        self.live_in.contains(c, bi)
    }

    /// Is `c` live out of block `bi`: read by its branch (a block argument), or live
    /// into a successor?
    fn live_out(&self, c: u32, bi: u32) -> bool {
        if self.last_use(c, bi) == Some(END) {
            return true;
        }
        self.cfg
            .succs(self.rpo[bi as usize])
            .iter()
            .any(|&s| self.live_in(c, self.rpo_of[s.index()]))
    }

    /// The point of the last read of `c` in block `bi`, if any.
    fn last_use(&self, c: u32, bi: u32) -> Option<u32> {
        let (s, e) = (
            self.use_start[c as usize] as usize,
            self.use_start[c as usize + 1] as usize,
        );
        let us = &self.uses[s..e];
        let k = us.partition_point(|&(b, _)| b <= bi);
        (k > 0 && us[k - 1].0 == bi).then(|| us[k - 1].1)
    }

    /// Is `c` live just after point `pos` of block `bi` (a point at or after its
    /// definition)? [`START`] is the block's start (where its parameters are written).
    fn live_at(&self, c: u32, bi: u32, pos: u32) -> bool {
        if pos == START {
            return self.live_in(c, bi);
        }
        self.last_use(c, bi)
            .is_some_and(|u| after(self.layout, u, pos))
            || self.live_out(c, bi)
    }

    /// Do the live ranges of candidates `x` and `y` (both with liveness) intersect?
    fn interfere(&self, dt: &DomTree, x: u32, y: u32) -> bool {
        let (dx, px) = self.def[x as usize];
        let (dy, py) = self.def[y as usize];
        if dx == dy && px == START && py == START {
            // Two parameters of one block: the same edges write both.
            return true;
        }
        let dom = |(a, pa): (u32, u32), (b, pb): (u32, u32)| {
            if a == b {
                pa == pb || after(self.layout, pb, pa)
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
