//! Scalar evolution: closed forms of integer values in loops, and loop trip counts.
//!
//! Every integer value of a function gets an expression ([`Scev`]) built from constants,
//! loop-invariant unknowns, `+`, `*`, `/u`, extensions, truncation, signed/unsigned
//! min/max and add-recurrences `{start,+,step}<loop>` (the value `start + k * step` at
//! iteration `k` of `loop`; `start` may itself be a recurrence of an outer loop). Each
//! loop in simplify form gets the exit count of each exiting block, a backedge-taken count
//! and a constant maximum, when they can be proven; otherwise they are unknown.
//!
//! **Arena.** Expressions are dense ids into a `Vec` owned by the analysis, with operand
//! lists in one shared pool, hash-consed through a hash → id chain (no allocation per
//! lookup): two structurally equal expressions are the same id, so equality is `==`.
//! Dense ids (rather than `bumpalo` references) keep the analysis a plain struct that the
//! [`AnalysisCache`](crate::AnalysisCache) can own, clear and refill without lifetimes,
//! and let passes hold expressions across calls. No-wrap flags are not part of an
//! expression's identity (as in LLVM): proving a flag later adds it to the shared node.
//!
//! **When.** [`ScalarEvolution::compute`] classifies every value of the function and every
//! loop at once, in one RPO sweep plus one pass over the exiting edges: linear in the
//! function, and afterwards every query is `&self`. Passes that build new expressions
//! (exit values, rewritten counts) use the `&mut self` constructors.
//!
//! **No recursion over program structure.** Values are classified in RPO (operands first;
//! a recurrence needs only its preheader argument and an invariant step); printing,
//! invariance and evaluation at an iteration walk expression DAGs with explicit stacks.
//! The simplifying constructors call each other to a bounded depth ([`MAX_FOLD_DEPTH`],
//! LLVM's `MaxArithDepth` idea): beyond it an expression is built flat, unsimplified but
//! still correct. A 10,000-deep nest or 30,000 sequential loops cost linear time.
//!
//! docs/scev.md describes the simplification rules and what is left unknown, and why.

use crate::cfg::Cfg;
use crate::domtree::DomTree;
use crate::loops::{Loop, LoopInfo};
use cranelift_entity::{entity_impl, EntityRef};
use gyre_ir::{Block, Function, InstructionData, IntCC, IntFlags, Opcode, Value, ValueDef};
use rustc_hash::FxHashMap;
use std::fmt::Write;
use std::hash::{Hash, Hasher};

/// How deep the simplifying constructors may call each other before building flat.
pub const MAX_FOLD_DEPTH: u32 = 8;

/// A scalar-evolution expression, an id into the analysis's arena.
#[derive(Copy, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Scev(u32);
entity_impl!(Scev, "scev");

/// The kind of an expression, in LLVM's complexity order (operands are sorted by it).
#[derive(Copy, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Debug)]
pub enum ScevKind {
    /// An integer constant.
    Const,
    /// Truncation to a narrower type.
    Trunc,
    /// Zero extension.
    ZExt,
    /// Sign extension.
    SExt,
    /// A sum of two or more operands.
    Add,
    /// A product of two or more operands.
    Mul,
    /// Unsigned division.
    UDiv,
    /// An affine add-recurrence `{start,+,step}<loop>`.
    AddRec,
    /// Unsigned maximum.
    UMax,
    /// Signed maximum.
    SMax,
    /// Unsigned minimum.
    UMin,
    /// Signed minimum.
    SMin,
    /// A value the analysis does not look into.
    Unknown,
}

/// No-wrap flags of an add-recurrence (and, where proven, of sums and products).
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug, Default)]
pub struct ScevFlags(u8);

impl ScevFlags {
    /// Nothing proven.
    pub const NONE: ScevFlags = ScevFlags(0);
    /// No unsigned wrap.
    pub const NUW: ScevFlags = ScevFlags(1);
    /// No signed wrap.
    pub const NSW: ScevFlags = ScevFlags(2);
    /// Does `self` contain every flag of `o`?
    pub fn contains(self, o: ScevFlags) -> bool {
        self.0 & o.0 == o.0
    }
    /// Both sets.
    pub fn union(self, o: ScevFlags) -> ScevFlags {
        ScevFlags(self.0 | o.0)
    }
}

/// Marks a node that varies in no loop.
const NO_LOOP: u32 = u32::MAX;
/// Marks a node that varies in loops that are not nested in each other.
const MIXED: u32 = u32::MAX - 1;
/// Marks a node with no successor in its hash chain.
const END: u32 = u32::MAX;

#[derive(Clone, Debug)]
struct Node {
    kind: ScevKind,
    bits: u8,
    flags: ScevFlags,
    /// Range into `pool`.
    ops: [u32; 2],
    /// Constant bits (masked), value index (unknown), loop index (add-recurrence).
    imm: u64,
    /// The innermost loop the expression varies in (`NO_LOOP`, `MIXED`).
    var_loop: u32,
    /// Next node with the same hash.
    next: u32,
}

/// The count of one exiting block, or of a loop.
#[derive(Copy, Clone, PartialEq, Eq, Debug, Default)]
pub struct ExitCount {
    /// The exact number of back edges taken before the exit, if known.
    pub exact: Option<Scev>,
    /// A constant upper bound of it (unsigned, in the count's width), if known.
    pub max: Option<u64>,
}

/// What the analysis knows about one loop.
#[derive(Clone, Debug, Default)]
pub struct LoopCounts {
    /// Every exiting block of the loop with its count.
    pub exits: Vec<(Block, ExitCount)>,
    /// The backedge-taken count: the minimum over the exits, exact when every exit's is.
    pub backedge_taken: ExitCount,
}

/// Per-loop data kept from the loop forest, so that expressions can be built without it.
#[derive(Copy, Clone, Debug)]
struct LoopMeta {
    pre: u32,
    last: u32,
    depth: u32,
    header: Block,
    /// The computation this entry belongs to (see `ScalarEvolution::gen`).
    gen: u32,
    /// Position in the current computation's list of loops.
    slot: u32,
}

/// Scalar evolution of one function (or of one loop nest: [`ScalarEvolution::compute_nest`]).
///
/// Per-value, per-block and per-loop tables only grow; each entry carries the number of
/// the computation that wrote it, so forgetting everything is O(1) and a computation over
/// one loop nest costs the nest's size, not the function's.
#[derive(Default)]
pub struct ScalarEvolution {
    nodes: Vec<Node>,
    pool: Vec<Scev>,
    /// Hash → first node with that hash.
    table: FxHashMap<u64, u32>,
    /// Per value index: (computation, expression).
    values: Vec<(u32, u32)>,
    /// Per loop index.
    loops: Vec<LoopMeta>,
    counts: Vec<LoopCounts>,
    /// Per block index: (computation, innermost loop index or `NO_LOOP`).
    block_loop: Vec<(u32, u32)>,
    /// The current computation's number (entries with another number are stale).
    gen: u32,
    /// The loop nest computed by [`ScalarEvolution::compute_nest`] (`None`: the function).
    scope: Option<Loop>,
    /// [`LocalDom`]'s numbering buffer, kept between nest computations.
    local_num: Vec<(u32, u32, u32)>,
    /// Buffers of [`ScalarEvolution::compute_nest`], kept between nests.
    nest: NestScratch,
    /// Like-term lists of [`ScalarEvolution::add_n`], reused as `bufs`.
    terms: Vec<Vec<(Scev, u64)>>,
    /// Operand lists for the simplifying constructors ([`ScalarEvolution::add_n`] and the
    /// like), reused: each call takes one and gives it back, so that building an
    /// expression allocates nothing once the pool holds as many as the recursion nests.
    bufs: Vec<Vec<Scev>>,
    valid: bool,
}

/// Buffers of one nest computation.
#[derive(Default)]
struct NestScratch {
    order: Vec<Loop>,
    rpo: Vec<Block>,
    post: Vec<Block>,
    stack: Vec<(Block, usize)>,
    idom: Vec<u32>,
    first: Vec<u32>,
    fill: Vec<u32>,
    kids: Vec<u32>,
    dfs: Vec<(u32, bool)>,
    exiting: Vec<Vec<Block>>,
    /// [`ScalarEvolution::compute_loop_own`]: the loop's own blocks, the graph's node of
    /// each (per block index: computation, node), its children's nodes, its edges
    /// (source, target) grouped by target with each target's first edge, and each node's
    /// RPO index.
    own: Vec<Block>,
    node: Vec<(u32, u32)>,
    child_node: FxHashMap<u32, u32>,
    edges: Vec<(u32, u32)>,
    pred_start: Vec<u32>,
    succ: Vec<u32>,
    succ_start: Vec<u32>,
    rpo_ix: Vec<u32>,
}

/// An empty [`LoopCounts`], the answer for loops outside the computed nest.
static NO_COUNTS: LoopCounts = LoopCounts {
    exits: Vec::new(),
    backedge_taken: ExitCount {
        exact: None,
        max: None,
    },
};

/// Dominance as classification needs it: the function's tree, or one loop nest's.
enum Dom<'a> {
    Global(&'a DomTree),
    Local(&'a LocalDom),
}

impl Dom<'_> {
    fn dominates(&self, a: Block, b: Block) -> bool {
        match self {
            Dom::Global(dt) => dt.dominates(a, b),
            Dom::Local(ld) => ld.dominates(a, b),
        }
    }
    fn strictly_dominates(&self, a: Block, b: Block) -> bool {
        a != b && self.dominates(a, b)
    }
}

/// The dominator tree of one loop nest, rooted at its header, as preorder intervals.
///
/// Inside a natural loop every path from the function's entry to a block of the loop
/// enters through the header, so dominance between two blocks of the nest is dominance
/// in this tree. A block outside the nest is taken to dominate every block of it: the
/// classification only asks about definitions whose values the nest uses, which
/// (SSA) dominate the uses, and a use inside the loop means a definition above the header.
#[derive(Default)]
struct LocalDom {
    /// Per block index: (computation, preorder number, last preorder number below).
    num: Vec<(u32, u32, u32)>,
    gen: u32,
}

impl LocalDom {
    fn get(&self, b: Block) -> Option<(u32, u32)> {
        match self.num.get(b.index()) {
            Some(&(g, p, l)) if g == self.gen => Some((p, l)),
            _ => None,
        }
    }
    fn dominates(&self, a: Block, b: Block) -> bool {
        match (self.get(a), self.get(b)) {
            (None, _) => true,
            (Some(_), None) => false,
            (Some((pa, la)), Some((pb, _))) => pa <= pb && pb <= la,
        }
    }
}

fn mask(bits: u32) -> u64 {
    if bits >= 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    }
}

fn sext(x: u64, bits: u32) -> i64 {
    let sh = 64 - bits;
    ((x << sh) as i64) >> sh
}

impl ScalarEvolution {
    /// An empty, invalid analysis.
    pub fn new() -> ScalarEvolution {
        ScalarEvolution::default()
    }

    /// Forget everything (keeping buffers).
    pub fn clear(&mut self) {
        self.nodes.clear();
        self.pool.clear();
        // Clearing a hash table writes all its control bytes: a table grown by one big
        // computation (a whole deep nest) is replaced by one sized for its last use, so
        // that the many small computations after it (one per loop, by the loop passes
        // sharing these buffers) each cost their own size.
        let used = self.table.len();
        if self.table.capacity() > 4 * used.max(1024) {
            self.table = FxHashMap::with_capacity_and_hasher(used, Default::default());
        } else {
            self.table.clear();
        }
        self.scope = None;
        self.valid = false;
        if self.gen == u32::MAX {
            self.values.clear();
            self.loops.clear();
            self.counts.clear();
            self.block_loop.clear();
            self.gen = 0;
        }
        self.gen += 1;
    }

    /// An empty operand list from the pool.
    fn take_buf(&mut self) -> Vec<Scev> {
        self.bufs.pop().unwrap_or_default()
    }

    /// Give an operand list back to the pool.
    fn give_buf(&mut self, mut b: Vec<Scev>) {
        b.clear();
        self.bufs.push(b);
    }

    /// The loop nest the last computation covered, `None` for a whole function.
    pub fn scope(&self) -> Option<Loop> {
        self.scope
    }

    /// The position of a loop of the current computation in its list.
    fn slot(&self, l: Loop) -> usize {
        self.loops[l.index()].slot as usize
    }

    /// The innermost loop of block `b` in the current computation (`NO_LOOP` outside).
    fn loop_of_block(&self, b: Block) -> u32 {
        match self.block_loop.get(b.index()) {
            Some(&(g, l)) if g == self.gen => l,
            _ => NO_LOOP,
        }
    }

    /// Is the result up to date?
    pub fn is_valid(&self) -> bool {
        self.valid
    }

    // ---- Expressions -------------------------------------------------------------------

    /// The kind of `s`.
    pub fn kind(&self, s: Scev) -> ScevKind {
        self.nodes[s.index()].kind
    }

    /// The width of `s` in bits.
    pub fn bits(&self, s: Scev) -> u32 {
        u32::from(self.nodes[s.index()].bits)
    }

    /// The operands of `s` (`[start, step]` for a recurrence).
    pub fn operands(&self, s: Scev) -> &[Scev] {
        let [a, b] = self.nodes[s.index()].ops;
        &self.pool[a as usize..b as usize]
    }

    /// The no-wrap flags proven for `s`.
    pub fn flags(&self, s: Scev) -> ScevFlags {
        self.nodes[s.index()].flags
    }

    /// The constant value of `s` (masked to its width), if it is a constant.
    pub fn as_const(&self, s: Scev) -> Option<u64> {
        let n = &self.nodes[s.index()];
        (n.kind == ScevKind::Const).then_some(n.imm)
    }

    /// The value of an unknown.
    pub fn as_unknown(&self, s: Scev) -> Option<Value> {
        let n = &self.nodes[s.index()];
        (n.kind == ScevKind::Unknown).then(|| Value::new(n.imm as usize))
    }

    /// The loop of an add-recurrence.
    pub fn addrec_loop(&self, s: Scev) -> Option<Loop> {
        let n = &self.nodes[s.index()];
        (n.kind == ScevKind::AddRec).then(|| Loop::new(n.imm as usize))
    }

    /// Number of expressions in the arena.
    pub fn num_exprs(&self) -> usize {
        self.nodes.len()
    }

    fn hash_of(kind: ScevKind, bits: u32, imm: u64, ops: &[Scev]) -> u64 {
        let mut h = rustc_hash::FxHasher::default();
        (kind, bits, imm, ops).hash(&mut h);
        h.finish()
    }

    /// Find or create a node (no simplification). `var_loop` of an unknown is given.
    fn intern(
        &mut self,
        kind: ScevKind,
        bits: u32,
        imm: u64,
        ops: &[Scev],
        flags: ScevFlags,
        unknown_loop: u32,
    ) -> Scev {
        let h = Self::hash_of(kind, bits, imm, ops);
        let first = self.table.get(&h).copied().unwrap_or(END);
        let mut cur = first;
        while cur != END {
            let n = &self.nodes[cur as usize];
            if n.kind == kind
                && u32::from(n.bits) == bits
                && n.imm == imm
                && &self.pool[n.ops[0] as usize..n.ops[1] as usize] == ops
            {
                let n = &mut self.nodes[cur as usize];
                n.flags = n.flags.union(flags);
                return Scev(cur);
            }
            cur = n.next;
        }
        let mut var = match kind {
            ScevKind::Unknown => unknown_loop,
            ScevKind::AddRec => imm as u32,
            _ => NO_LOOP,
        };
        for &o in ops {
            var = self.join_loops(var, self.nodes[o.index()].var_loop);
        }
        let start = self.pool.len() as u32;
        self.pool.extend_from_slice(ops);
        let id = self.nodes.len() as u32;
        self.nodes.push(Node {
            kind,
            bits: bits as u8,
            flags,
            ops: [start, self.pool.len() as u32],
            imm,
            var_loop: var,
            next: first,
        });
        self.table.insert(h, id);
        Scev(id)
    }

    /// Does loop `a` contain loop `b` (or equal it)?
    fn loop_contains(&self, a: u32, b: u32) -> bool {
        let (a, b) = (&self.loops[a as usize], &self.loops[b as usize]);
        a.pre <= b.pre && b.pre <= a.last
    }

    fn join_loops(&self, a: u32, b: u32) -> u32 {
        if a == NO_LOOP || a == b {
            b
        } else if b == NO_LOOP {
            a
        } else if a == MIXED || b == MIXED {
            MIXED
        } else if self.loop_contains(a, b) {
            b
        } else if self.loop_contains(b, a) {
            a
        } else {
            MIXED
        }
    }

    /// Is `s` invariant in loop `l` (no recurrence of `l` or of a loop inside it, no value
    /// defined inside it)? O(1). Expressions varying in unrelated loops count as variant.
    pub fn is_invariant(&self, s: Scev, l: Loop) -> bool {
        let v = self.nodes[s.index()].var_loop;
        v == NO_LOOP || (v != MIXED && !self.loop_contains(l.as_u32(), v))
    }

    /// The constant `x` (truncated to `bits`).
    pub fn constant(&mut self, bits: u32, x: u64) -> Scev {
        self.intern(
            ScevKind::Const,
            bits,
            x & mask(bits),
            &[],
            ScevFlags::NONE,
            NO_LOOP,
        )
    }

    /// The unknown `v` of width `bits`, defined in `block` (`None`: a function parameter
    /// or a value outside every loop).
    fn unknown(&mut self, v: Value, bits: u32, block: Option<Block>) -> Scev {
        let l = block.map_or(NO_LOOP, |b| self.loop_of_block(b));
        self.intern(
            ScevKind::Unknown,
            bits,
            v.index() as u64,
            &[],
            ScevFlags::NONE,
            l,
        )
    }

    fn sort_key(&self, s: Scev) -> (ScevKind, u64) {
        let n = &self.nodes[s.index()];
        match n.kind {
            ScevKind::Unknown | ScevKind::Const => (n.kind, n.imm),
            // Outer loops' recurrences first.
            ScevKind::AddRec => (
                n.kind,
                (u64::from(self.loops[n.imm as usize].depth) << 32) | u64::from(s.0),
            ),
            k => (k, u64::from(s.0)),
        }
    }

    fn sort_ops(&self, ops: &mut [Scev]) {
        ops.sort_unstable_by_key(|&s| self.sort_key(s));
    }

    /// `a + b`.
    pub fn add(&mut self, a: Scev, b: Scev) -> Scev {
        self.add_n(&[a, b], 0)
    }

    /// `a - b`.
    pub fn sub(&mut self, a: Scev, b: Scev) -> Scev {
        let nb = self.neg(b);
        self.add(a, nb)
    }

    /// `-a`.
    pub fn neg(&mut self, a: Scev) -> Scev {
        let m1 = self.constant(self.bits(a), u64::MAX);
        self.mul(m1, a)
    }

    /// `a * b`.
    pub fn mul(&mut self, a: Scev, b: Scev) -> Scev {
        self.mul_n(&[a, b], 0)
    }

    /// The sum of `ops` (all of one width), simplified.
    pub fn add_n(&mut self, ops: &[Scev], depth: u32) -> Scev {
        let mut list = self.take_buf();
        let r = self.add_n_in(ops, depth, &mut list);
        self.give_buf(list);
        r
    }

    /// [`ScalarEvolution::add_n`] with `list`, empty, as its operand list.
    fn add_n_in(&mut self, ops: &[Scev], depth: u32, list: &mut Vec<Scev>) -> Scev {
        let bits = self.bits(ops[0]);
        let m = mask(bits);
        // Flatten nested sums (canonical sums contain no sums: one level suffices).
        let mut c = 0u64;
        for &o in ops {
            match self.kind(o) {
                ScevKind::Add => {
                    for &p in self.operands(o) {
                        match self.as_const(p) {
                            Some(k) => c = c.wrapping_add(k),
                            None => list.push(p),
                        }
                    }
                }
                ScevKind::Const => c = c.wrapping_add(self.as_const(o).unwrap_or(0)),
                _ => list.push(o),
            }
        }
        c &= m;
        if depth < MAX_FOLD_DEPTH && list.len() > 1 {
            // Combine like terms: coefficient * term.
            let mut terms = self.terms.pop().unwrap_or_default();
            let mut changed = false;
            for &o in list.iter() {
                let (coef, term) = self.split_coef(o, depth);
                if let Some(t) = terms.iter_mut().find(|t| t.0 == term) {
                    t.1 = t.1.wrapping_add(coef) & m;
                    changed = true;
                } else {
                    terms.push((term, coef));
                }
            }
            if changed {
                list.clear();
                for &(term, coef) in &terms {
                    if coef == 0 {
                        continue;
                    }
                    if coef == 1 {
                        list.push(term);
                    } else {
                        let k = self.constant(bits, coef);
                        list.push(self.mul_n(&[k, term], depth + 1));
                    }
                }
            }
            terms.clear();
            self.terms.push(terms);
        }
        if depth < MAX_FOLD_DEPTH && list.iter().any(|&o| self.kind(o) == ScevKind::AddRec) {
            if let Some(r) = self.fold_addrecs(list, c, depth) {
                return r;
            }
        }
        if c != 0 {
            list.push(self.constant(bits, c));
        }
        match list.len() {
            0 => self.constant(bits, 0),
            1 => list[0],
            _ => {
                self.sort_ops(list);
                self.intern(ScevKind::Add, bits, 0, list, ScevFlags::NONE, NO_LOOP)
            }
        }
    }

    /// `(coefficient, term)` with `o == coefficient * term`.
    fn split_coef(&mut self, o: Scev, depth: u32) -> (u64, Scev) {
        if self.kind(o) == ScevKind::Mul {
            let ops = self.operands(o);
            if let Some(k) = self.as_const(ops[0]) {
                let term = if ops.len() == 2 {
                    ops[1]
                } else {
                    let mut rest = self.take_buf();
                    let [a, b] = self.nodes[o.index()].ops;
                    rest.extend_from_slice(&self.pool[a as usize + 1..b as usize]);
                    let t = self.mul_n(&rest, depth + 1);
                    self.give_buf(rest);
                    t
                };
                return (k, term);
            }
        }
        (1, o)
    }

    /// Fold the invariant operands of a sum into the start of its innermost recurrence,
    /// and sum recurrences of one loop operand-wise.
    fn fold_addrecs(&mut self, list: &[Scev], c: u64, depth: u32) -> Option<Scev> {
        let bits = self.bits(list[0]);
        // The recurrence of the deepest loop.
        let (ri, r) = list
            .iter()
            .copied()
            .enumerate()
            .filter(|&(_, o)| self.kind(o) == ScevKind::AddRec)
            .max_by_key(|&(_, o)| self.loops[self.nodes[o.index()].imm as usize].depth)?;
        let l = self.nodes[r.index()].imm as u32;
        let mut start = self.take_buf();
        start.push(self.operands(r)[0]);
        let mut step = self.take_buf();
        step.push(self.operands(r)[1]);
        let mut rest = self.take_buf();
        let mut folded = false;
        for (i, &o) in list.iter().enumerate() {
            if i == ri {
                continue;
            }
            if self.is_invariant(o, Loop::from_u32(l)) {
                start.push(o);
                folded = true;
            } else if self.kind(o) == ScevKind::AddRec && self.nodes[o.index()].imm as u32 == l {
                start.push(self.operands(o)[0]);
                step.push(self.operands(o)[1]);
                folded = true;
            } else {
                rest.push(o);
            }
        }
        if c != 0 {
            start.push(self.constant(bits, c));
            folded = true;
        }
        let out = folded.then(|| {
            let s0 = self.add_n(&start, depth + 1);
            let s1 = self.add_n(&step, depth + 1);
            let rec = self.addrec(s0, s1, Loop::from_u32(l), ScevFlags::NONE);
            if rest.is_empty() {
                rec
            } else {
                rest.push(rec);
                self.add_n(&rest, depth + 1)
            }
        });
        self.give_buf(start);
        self.give_buf(step);
        self.give_buf(rest);
        out
    }

    /// The product of `ops` (all of one width), simplified.
    pub fn mul_n(&mut self, ops: &[Scev], depth: u32) -> Scev {
        let mut list = self.take_buf();
        let r = self.mul_n_in(ops, depth, &mut list);
        self.give_buf(list);
        r
    }

    /// [`ScalarEvolution::mul_n`] with `list`, empty, as its operand list.
    fn mul_n_in(&mut self, ops: &[Scev], depth: u32, list: &mut Vec<Scev>) -> Scev {
        let bits = self.bits(ops[0]);
        let m = mask(bits);
        let mut c = 1u64;
        for &o in ops {
            match self.kind(o) {
                ScevKind::Mul => {
                    for &p in self.operands(o) {
                        match self.as_const(p) {
                            Some(k) => c = c.wrapping_mul(k),
                            None => list.push(p),
                        }
                    }
                }
                ScevKind::Const => c = c.wrapping_mul(self.as_const(o).unwrap_or(1)),
                _ => list.push(o),
            }
        }
        c &= m;
        if c == 0 || list.is_empty() {
            return self.constant(bits, c);
        }
        if depth < MAX_FOLD_DEPTH && list.len() == 1 && c != 1 {
            let x = list[0];
            match self.kind(x) {
                // c * (k + y) -> c*k + c*y, as LLVM when the sum has a constant.
                ScevKind::Add if self.as_const(self.operands(x)[0]).is_some() => {
                    let k = self.constant(bits, c);
                    let parts: Vec<Scev> = self.operands(x).to_vec();
                    let prods: Vec<Scev> = parts
                        .into_iter()
                        .map(|p| self.mul_n(&[k, p], depth + 1))
                        .collect();
                    return self.add_n(&prods, depth + 1);
                }
                ScevKind::AddRec => {
                    let k = self.constant(bits, c);
                    return self.scale_addrec(x, k, depth);
                }
                _ => {}
            }
        }
        if depth < MAX_FOLD_DEPTH && list.len() == 2 && c == 1 {
            // invariant * {a,+,b}<L> -> {inv*a,+,inv*b}<L>
            for (ri, oi) in [(0, 1), (1, 0)] {
                let (r, o) = (list[ri], list[oi]);
                if self.kind(r) == ScevKind::AddRec {
                    let l = Loop::new(self.nodes[r.index()].imm as usize);
                    if self.is_invariant(o, l) {
                        return self.scale_addrec(r, o, depth);
                    }
                }
            }
        }
        if c != 1 {
            list.push(self.constant(bits, c));
        }
        if list.len() == 1 {
            return list[0];
        }
        self.sort_ops(list);
        self.intern(ScevKind::Mul, bits, 0, list, ScevFlags::NONE, NO_LOOP)
    }

    fn scale_addrec(&mut self, r: Scev, k: Scev, depth: u32) -> Scev {
        let (a, b) = (self.operands(r)[0], self.operands(r)[1]);
        let l = Loop::new(self.nodes[r.index()].imm as usize);
        let a2 = self.mul_n(&[k, a], depth + 1);
        let b2 = self.mul_n(&[k, b], depth + 1);
        self.addrec(a2, b2, l, ScevFlags::NONE)
    }

    /// `a /u b`.
    pub fn udiv(&mut self, a: Scev, b: Scev) -> Scev {
        let bits = self.bits(a);
        match (self.as_const(a), self.as_const(b)) {
            (_, Some(1)) => return a,
            (Some(0), _) => return a,
            (Some(x), Some(y)) if y != 0 => return self.constant(bits, x / y),
            _ => {}
        }
        self.intern(ScevKind::UDiv, bits, 0, &[a, b], ScevFlags::NONE, NO_LOOP)
    }

    /// `zext a` to `bits`.
    pub fn zext(&mut self, a: Scev, bits: u32) -> Scev {
        let from = self.bits(a);
        if from == bits {
            return a;
        }
        if from > bits {
            return self.trunc(a, bits);
        }
        if let Some(x) = self.as_const(a) {
            return self.constant(bits, x);
        }
        match self.kind(a) {
            ScevKind::ZExt => {
                let inner = self.operands(a)[0];
                return self.zext(inner, bits);
            }
            ScevKind::AddRec if self.flags(a).contains(ScevFlags::NUW) => {
                // No unsigned wrap: every value is start + k*step computed exactly.
                let (s, t) = (self.operands(a)[0], self.operands(a)[1]);
                let l = Loop::new(self.nodes[a.index()].imm as usize);
                let (s2, t2) = (self.zext_flat(s, bits), self.zext_flat(t, bits));
                return self.addrec(s2, t2, l, ScevFlags::NUW);
            }
            _ => {}
        }
        self.intern(ScevKind::ZExt, bits, 0, &[a], ScevFlags::NONE, NO_LOOP)
    }

    /// `zext` folding only constants (no recursion into recurrences).
    fn zext_flat(&mut self, a: Scev, bits: u32) -> Scev {
        match self.as_const(a) {
            Some(x) => self.constant(bits, x),
            None => self.intern(ScevKind::ZExt, bits, 0, &[a], ScevFlags::NONE, NO_LOOP),
        }
    }

    fn sext_flat(&mut self, a: Scev, bits: u32) -> Scev {
        let from = self.bits(a);
        match self.as_const(a) {
            Some(x) => self.constant(bits, sext(x, from) as u64),
            None => self.intern(ScevKind::SExt, bits, 0, &[a], ScevFlags::NONE, NO_LOOP),
        }
    }

    /// `sext a` to `bits`.
    pub fn sext(&mut self, a: Scev, bits: u32) -> Scev {
        let from = self.bits(a);
        if from == bits {
            return a;
        }
        if from > bits {
            return self.trunc(a, bits);
        }
        if let Some(x) = self.as_const(a) {
            return self.constant(bits, sext(x, from) as u64);
        }
        match self.kind(a) {
            ScevKind::SExt => {
                let inner = self.operands(a)[0];
                return self.sext(inner, bits);
            }
            ScevKind::ZExt => {
                // The zero-extended value is non-negative in the wider type.
                let inner = self.operands(a)[0];
                return self.zext(inner, bits);
            }
            ScevKind::AddRec if self.flags(a).contains(ScevFlags::NSW) => {
                let (s, t) = (self.operands(a)[0], self.operands(a)[1]);
                let l = Loop::new(self.nodes[a.index()].imm as usize);
                let (s2, t2) = (self.sext_flat(s, bits), self.sext_flat(t, bits));
                return self.addrec(s2, t2, l, ScevFlags::NSW);
            }
            _ => {}
        }
        self.intern(ScevKind::SExt, bits, 0, &[a], ScevFlags::NONE, NO_LOOP)
    }

    /// `trunc a` to `bits`.
    pub fn trunc(&mut self, a: Scev, bits: u32) -> Scev {
        let from = self.bits(a);
        if from == bits {
            return a;
        }
        if from < bits {
            return self.zext(a, bits);
        }
        if let Some(x) = self.as_const(a) {
            return self.constant(bits, x);
        }
        match self.kind(a) {
            ScevKind::Trunc | ScevKind::ZExt | ScevKind::SExt => {
                let inner = self.operands(a)[0];
                let ib = self.bits(inner);
                if ib == bits {
                    return inner;
                }
                if ib > bits || self.kind(a) == ScevKind::Trunc {
                    return self.intern(
                        ScevKind::Trunc,
                        bits,
                        0,
                        &[inner],
                        ScevFlags::NONE,
                        NO_LOOP,
                    );
                }
                return if self.kind(a) == ScevKind::ZExt {
                    self.zext_flat(inner, bits)
                } else {
                    self.sext_flat(inner, bits)
                };
            }
            ScevKind::AddRec => {
                // Truncation commutes with wrapping arithmetic.
                let (s, t) = (self.operands(a)[0], self.operands(a)[1]);
                let l = Loop::new(self.nodes[a.index()].imm as usize);
                let s2 = self.trunc_flat(s, bits);
                let t2 = self.trunc_flat(t, bits);
                return self.addrec(s2, t2, l, ScevFlags::NONE);
            }
            _ => {}
        }
        self.trunc_flat(a, bits)
    }

    fn trunc_flat(&mut self, a: Scev, bits: u32) -> Scev {
        match self.as_const(a) {
            Some(x) => self.constant(bits, x),
            None => self.intern(ScevKind::Trunc, bits, 0, &[a], ScevFlags::NONE, NO_LOOP),
        }
    }

    /// A min/max of `ops` (`kind` one of `SMax`, `UMax`, `SMin`, `UMin`).
    pub fn minmax(&mut self, kind: ScevKind, ops: &[Scev]) -> Scev {
        let mut list = self.take_buf();
        let r = self.minmax_in(kind, ops, &mut list);
        self.give_buf(list);
        r
    }

    /// [`ScalarEvolution::minmax`] with `list`, empty, as its operand list.
    fn minmax_in(&mut self, kind: ScevKind, ops: &[Scev], list: &mut Vec<Scev>) -> Scev {
        let bits = self.bits(ops[0]);
        let mut c: Option<u64> = None;
        let better = |x: u64, y: u64| -> bool {
            // Is x preferred over y?
            match kind {
                ScevKind::UMax => x > y,
                ScevKind::UMin => x < y,
                ScevKind::SMax => sext(x, bits) > sext(y, bits),
                _ => sext(x, bits) < sext(y, bits),
            }
        };
        let mut push = |s: Scev, me: &Self, list: &mut Vec<Scev>| match me.as_const(s) {
            Some(k) => c = Some(c.map_or(k, |c0| if better(k, c0) { k } else { c0 })),
            None => {
                if !list.contains(&s) {
                    list.push(s)
                }
            }
        };
        for &o in ops {
            if self.kind(o) == kind {
                for &p in self.operands(o) {
                    push(p, self, list);
                }
            } else {
                push(o, self, list);
            }
        }
        if let Some(k) = c {
            // The absorbing constant decides alone.
            let (max_u, min_s) = (mask(bits), 1u64 << (bits - 1));
            let absorbing = match kind {
                ScevKind::UMax => k == max_u,
                ScevKind::UMin => k == 0,
                ScevKind::SMax => k == min_s - 1,
                _ => k == min_s,
            };
            let identity = match kind {
                ScevKind::UMax => k == 0,
                ScevKind::UMin => k == max_u,
                ScevKind::SMax => k == min_s,
                _ => k == min_s - 1,
            };
            if absorbing {
                return self.constant(bits, k);
            }
            if !identity || list.is_empty() {
                list.push(self.constant(bits, k));
            }
        }
        if list.len() == 1 {
            return list[0];
        }
        self.sort_ops(list);
        self.intern(kind, bits, 0, list, ScevFlags::NONE, NO_LOOP)
    }

    /// `{start,+,step}<l>` (`start` if `step` is zero).
    pub fn addrec(&mut self, start: Scev, step: Scev, l: Loop, flags: ScevFlags) -> Scev {
        if self.as_const(step) == Some(0) {
            return start;
        }
        let bits = self.bits(start);
        self.intern(
            ScevKind::AddRec,
            bits,
            l.as_u32() as u64,
            &[start, step],
            flags,
            NO_LOOP,
        )
    }

    // ---- Computation -------------------------------------------------------------------

    /// Classify every integer value of `func` and compute the counts of every loop.
    pub fn compute(&mut self, func: &Function, cfg: &Cfg, dt: &DomTree, li: &LoopInfo) {
        self.clear();
        let mut order: Vec<Loop> = Vec::with_capacity(li.num_loops());
        self.number_loops(li, &li.top_level().to_vec(), &mut order);
        for b in func.layout.blocks() {
            if let Some(l) = li.innermost_loop(b) {
                self.set_block_loop(b, l.as_u32());
            }
        }
        let mut exiting = Vec::new();
        self.classify(
            func,
            cfg,
            &Dom::Global(dt),
            li,
            cfg.rpo(),
            &order,
            &mut exiting,
        );
        self.valid = true;
    }

    /// Classify the integer values of one loop nest (the loop `root` and the loops inside
    /// it) and compute the counts of its loops, in time linear in the nest, not in the
    /// function: the per-loop way for a loop pass, whose earlier work left the function's
    /// dominator tree stale.
    ///
    /// Needs `cfg`'s edges and `li`, not the dominator tree (the nest's own is computed).
    /// Values defined outside the nest are unknowns (integer constants excepted), and
    /// loops outside it have no counts; [`ScalarEvolution::scope`] says which nest was
    /// computed. `root` must not be in or contain an irreducible cycle (nothing is
    /// classified otherwise).
    pub fn compute_nest(&mut self, func: &Function, cfg: &Cfg, li: &LoopInfo, root: Loop) {
        self.clear();
        self.scope = Some(root);
        if li.contains_irreducible(root) || li.in_irreducible_cycle(li.header(root)) {
            self.valid = true;
            return;
        }
        // Buffers reused across nests: a loop pass computes thousands of small nests, and
        // fresh allocations each time fragment the heap (malloc's consolidation then
        // dominates at 100k blocks).
        let mut sc = std::mem::take(&mut self.nest);
        sc.order.clear();
        self.number_loops(li, &[root], &mut sc.order);
        // The nest's blocks in reverse postorder from the header (back edges to a header
        // and edges leaving the nest ignored), and their innermost loops.
        let h = li.header(root);
        sc.rpo.clear();
        sc.post.clear();
        let mut local = LocalDom {
            num: std::mem::take(&mut self.local_num),
            gen: self.gen,
        };
        let nb = func.dfg.num_blocks();
        if local.num.len() < nb {
            local.num.resize(nb, (0, 0, 0));
        }
        // Visited marks: (gen, u32::MAX, _) until numbered; the third field holds the RPO
        // index until the tree's preorder numbering replaces it.
        sc.stack.clear();
        sc.stack.push((h, 0));
        local.num[h.index()] = (self.gen, u32::MAX, 0);
        while let Some(&mut (b, ref mut i)) = sc.stack.last_mut() {
            let succs = cfg.succs(b);
            if let Some(&s) = succs.get(*i) {
                *i += 1;
                if li.contains(root, s) && local.num[s.index()].0 != self.gen {
                    local.num[s.index()] = (self.gen, u32::MAX, 0);
                    sc.stack.push((s, 0));
                }
            } else {
                sc.post.push(b);
                sc.stack.pop();
            }
        }
        sc.rpo.extend(sc.post.iter().rev());
        for (i, &b) in sc.rpo.iter().enumerate() {
            local.num[b.index()].2 = i as u32;
        }
        // Immediate dominators (Cooper, Harvey and Kennedy) over the nest, by RPO index.
        let rpo = &sc.rpo;
        let idom = &mut sc.idom;
        idom.clear();
        idom.resize(rpo.len(), u32::MAX);
        idom[0] = 0;
        let mut changed = true;
        while changed {
            changed = false;
            for i in 1..rpo.len() {
                let mut new = u32::MAX;
                for p in cfg.preds(rpo[i]) {
                    let (g, _, pi) = local.num[p.index()];
                    if g != self.gen || idom[pi as usize] == u32::MAX {
                        continue;
                    }
                    new = if new == u32::MAX {
                        pi
                    } else {
                        intersect(idom, pi, new)
                    };
                }
                if new != idom[i] {
                    idom[i] = new;
                    changed = true;
                }
            }
        }
        // Preorder intervals of the tree (children lists by counting sort, explicit stack).
        children_by_counting_sort(idom, &mut sc.first, &mut sc.fill, &mut sc.kids);
        let mut counter = 0u32;
        sc.dfs.clear();
        sc.dfs.push((0, false));
        while let Some((i, done)) = sc.dfs.pop() {
            let b = rpo[i as usize];
            if done {
                local.num[b.index()].2 = counter - 1;
                continue;
            }
            local.num[b.index()] = (self.gen, counter, counter);
            counter += 1;
            sc.dfs.push((i, true));
            let (a, z) = (
                sc.first[i as usize] as usize,
                sc.first[i as usize + 1] as usize,
            );
            for k in a..z {
                sc.dfs.push((sc.kids[k], false));
            }
        }
        for &b in rpo {
            if let Some(l) = li.innermost_loop(b) {
                self.set_block_loop(b, l.as_u32());
            }
        }
        self.classify(
            func,
            cfg,
            &Dom::Local(&local),
            li,
            &sc.rpo,
            &sc.order,
            &mut sc.exiting,
        );
        self.local_num = local.num;
        self.nest = sc;
        self.valid = true;
    }

    /// Classify the integer values of the blocks of `l` that are in no subloop (its own
    /// blocks) and compute the exit counts of its own exiting blocks, in time linear in
    /// those blocks and `l`'s children, whatever the size of the subloops: the per-visit
    /// way for a loop pass that asks only about `l`'s own exits (a pass visiting every
    /// loop of a deep nest would otherwise pay for the whole nest at every level).
    ///
    /// For those blocks and exits the answers are [`ScalarEvolution::compute_nest`]'s on
    /// `l`: in LCSSA form a value of a subloop reaches `l`'s own blocks only through a
    /// parameter of the subloop's exit block, which is unknown in both (a recurrence read
    /// after its loop has no iteration to be evaluated at); dominance among the own
    /// blocks is computed on `l` with each child loop collapsed to one node, whose edges
    /// are read from the predecessors of the own blocks and of the children's headers (no
    /// subloop is walked). Where an own block uses a value of a subloop directly (not
    /// LCSSA form), it computes the whole nest instead. Values of subloops are not
    /// classified and subloops have no counts; `l`'s [`LoopCounts::exits`] lists only its
    /// own exiting blocks, and when `l` has a subloop its backedge-taken count is left
    /// unknown (an exit from a subloop may bound it). [`ScalarEvolution::scope_dominates`]
    /// answers for the own blocks. `l` must not be in or contain an irreducible cycle
    /// (nothing is classified otherwise).
    pub fn compute_loop_own(&mut self, func: &Function, cfg: &Cfg, li: &LoopInfo, l: Loop) {
        if li.children(l).is_empty() {
            // The nest is the loop itself.
            return self.compute_nest(func, cfg, li, l);
        }
        self.clear();
        self.scope = Some(l);
        let h = li.header(l);
        if li.contains_irreducible(l) || li.in_irreducible_cycle(h) {
            self.valid = true;
            return;
        }
        let mut sc = std::mem::take(&mut self.nest);
        sc.own.clear();
        li.own_blocks(l, &mut sc.own);
        if !own_blocks_lcssa(func, li, l, &sc.own) {
            self.nest = sc;
            return self.compute_nest(func, cfg, li, l);
        }
        let gen = self.gen;
        let nb = func.dfg.num_blocks();
        if sc.node.len() < nb {
            sc.node.resize(nb, (0, 0));
        }
        let n_own = sc.own.len();
        for (i, &b) in sc.own.iter().enumerate() {
            sc.node[b.index()] = (gen, i as u32);
        }
        if sc.node[h.index()].0 != gen {
            // Not expected: the header is an own block of its loop.
            self.nest = sc;
            return self.compute_nest(func, cfg, li, l);
        }
        sc.child_node.clear();
        let children = li.children(l);
        for (k, &c) in children.iter().enumerate() {
            sc.child_node.insert(c.as_u32(), (n_own + k) as u32);
        }
        let n = n_own + children.len();
        // The node of a block of `l`: its own, or the child loop holding it.
        let node_of = |sc: &NestScratch, b: Block| -> Option<u32> {
            match sc.node.get(b.index()) {
                Some(&(g, i)) if g == gen => Some(i),
                _ => {
                    let mut m = li.innermost_loop(b)?;
                    if !li.contains_loop(l, m) || m == l {
                        return None;
                    }
                    while let Some(p) = li.parent(m).filter(|&p| p != l) {
                        m = p;
                    }
                    sc.child_node.get(&m.as_u32()).copied()
                }
            }
        };
        // Edges of the collapsed graph, grouped by target: the predecessors of each own
        // block, and of each child's header from outside that child.
        sc.edges.clear();
        sc.pred_start.clear();
        for t in 0..n {
            sc.pred_start.push(sc.edges.len() as u32);
            let (blk, inside) = if t < n_own {
                (sc.own[t], None)
            } else {
                let c = children[t - n_own];
                (li.header(c), Some(c))
            };
            for &p in cfg.preds(blk) {
                if inside.is_some_and(|c| li.contains(c, p)) {
                    continue;
                }
                if let Some(s) = node_of(&sc, p) {
                    sc.edges.push((s, t as u32));
                }
            }
        }
        sc.pred_start.push(sc.edges.len() as u32);
        // Successor lists by counting sort on the source.
        sc.succ_start.clear();
        sc.succ_start.resize(n + 1, 0);
        for &(s, _) in &sc.edges {
            sc.succ_start[s as usize + 1] += 1;
        }
        for i in 0..n {
            sc.succ_start[i + 1] += sc.succ_start[i];
        }
        sc.fill.clear();
        sc.fill.extend_from_slice(&sc.succ_start);
        sc.succ.clear();
        sc.succ.resize(sc.edges.len(), 0);
        for &(s, t) in &sc.edges {
            sc.succ[sc.fill[s as usize] as usize] = t;
            sc.fill[s as usize] += 1;
        }
        // Reverse postorder from the header (whatever its place in `own_blocks`).
        let root = sc.node[h.index()].1;
        const UNSEEN: u32 = u32::MAX;
        sc.rpo_ix.clear();
        sc.rpo_ix.resize(n, UNSEEN);
        let mut post: Vec<u32> = Vec::with_capacity(n);
        let mut stack: Vec<(u32, u32)> = vec![(root, sc.succ_start[root as usize])];
        sc.rpo_ix[root as usize] = 0;
        while let Some(&mut (x, ref mut next)) = stack.last_mut() {
            if *next < sc.succ_start[x as usize + 1] {
                let t = sc.succ[*next as usize];
                *next += 1;
                if sc.rpo_ix[t as usize] == UNSEEN {
                    sc.rpo_ix[t as usize] = 0;
                    stack.push((t, sc.succ_start[t as usize]));
                }
            } else {
                post.push(x);
                stack.pop();
            }
        }
        let order_nodes: Vec<u32> = post.iter().rev().copied().collect();
        for (i, &x) in order_nodes.iter().enumerate() {
            sc.rpo_ix[x as usize] = i as u32;
        }
        // Immediate dominators (Cooper, Harvey and Kennedy), by RPO index.
        let m = order_nodes.len();
        let idom = &mut sc.idom;
        idom.clear();
        idom.resize(m, u32::MAX);
        idom[0] = 0;
        let mut changed = true;
        while changed {
            changed = false;
            for i in 1..m {
                let x = order_nodes[i] as usize;
                let mut new = u32::MAX;
                for &(s, _) in &sc.edges[sc.pred_start[x] as usize..sc.pred_start[x + 1] as usize] {
                    let pi = sc.rpo_ix[s as usize];
                    if pi == UNSEEN || idom[pi as usize] == u32::MAX {
                        continue;
                    }
                    new = if new == u32::MAX {
                        pi
                    } else {
                        intersect(idom, pi, new)
                    };
                }
                if new != idom[i] {
                    idom[i] = new;
                    changed = true;
                }
            }
        }
        // Preorder intervals of the tree, written for the own blocks.
        children_by_counting_sort(idom, &mut sc.first, &mut sc.fill, &mut sc.kids);
        let mut local = LocalDom {
            num: std::mem::take(&mut self.local_num),
            gen,
        };
        if local.num.len() < nb {
            local.num.resize(nb, (0, 0, 0));
        }
        // (preorder, last preorder below) per RPO index.
        let mut interval: Vec<(u32, u32)> = vec![(0, 0); m];
        let mut counter = 0u32;
        sc.dfs.clear();
        sc.dfs.push((0, false));
        while let Some((i, done)) = sc.dfs.pop() {
            if done {
                interval[i as usize].1 = counter - 1;
                continue;
            }
            interval[i as usize] = (counter, counter);
            counter += 1;
            sc.dfs.push((i, true));
            let (a, z) = (
                sc.first[i as usize] as usize,
                sc.first[i as usize + 1] as usize,
            );
            for k in a..z {
                sc.dfs.push((sc.kids[k], false));
            }
        }
        // The own blocks in RPO (the order classification needs), numbered.
        sc.rpo.clear();
        for (i, &x) in order_nodes.iter().enumerate() {
            if (x as usize) < n_own {
                let b = sc.own[x as usize];
                let (p, q) = interval[i];
                local.num[b.index()] = (gen, p, q);
                sc.rpo.push(b);
            }
        }
        // Only `l` is numbered: no expression of this computation names another loop.
        if self.loops.len() < li.num_loops() {
            self.loops.resize(
                li.num_loops(),
                LoopMeta {
                    pre: 0,
                    last: 0,
                    depth: 0,
                    header: Block::new(0),
                    gen: 0,
                    slot: 0,
                },
            );
            self.counts.resize(li.num_loops(), LoopCounts::default());
        }
        self.loops[l.index()] = LoopMeta {
            pre: 0,
            last: 0,
            depth: li.depth(l),
            header: h,
            gen,
            slot: 0,
        };
        sc.order.clear();
        sc.order.push(l);
        for &b in &sc.rpo {
            self.set_block_loop(b, l.as_u32());
        }
        self.classify(
            func,
            cfg,
            &Dom::Local(&local),
            li,
            &sc.rpo,
            &sc.order,
            &mut sc.exiting,
        );
        // An exit from a subloop (not listed) may bound the count below every own exit's.
        self.counts[l.index()].backedge_taken = ExitCount::default();
        self.local_num = local.num;
        self.nest = sc;
        self.valid = true;
    }

    /// Does block `a` dominate block `b`, both blocks of the last computation's scope
    /// (for [`ScalarEvolution::compute_loop_own`], its own blocks)? `None` when either is
    /// not numbered there (outside the scope, unreachable from its header, or not
    /// computed by a nest or loop computation).
    pub fn scope_dominates(&self, a: Block, b: Block) -> Option<bool> {
        let get = |x: Block| match self.local_num.get(x.index()) {
            Some(&(g, p, q)) if g == self.gen && self.scope.is_some() && p != u32::MAX => {
                Some((p, q))
            }
            _ => None,
        };
        let ((pa, la), (pb, _)) = (get(a)?, get(b)?);
        Some(pa <= pb && pb <= la)
    }

    fn set_block_loop(&mut self, b: Block, l: u32) {
        if self.block_loop.len() <= b.index() {
            self.block_loop.resize(b.index() + 1, (0, NO_LOOP));
        }
        self.block_loop[b.index()] = (self.gen, l);
    }

    /// Preorder intervals, depths and slots of the loops under `roots` (iterative).
    fn number_loops(&mut self, li: &LoopInfo, roots: &[Loop], order: &mut Vec<Loop>) {
        if self.loops.len() < li.num_loops() {
            self.loops.resize(
                li.num_loops(),
                LoopMeta {
                    pre: 0,
                    last: 0,
                    depth: 0,
                    header: Block::new(0),
                    gen: 0,
                    slot: 0,
                },
            );
            self.counts.resize(li.num_loops(), LoopCounts::default());
        }
        let mut counter = 0u32;
        let mut stack: Vec<(Loop, bool)> = roots.iter().rev().map(|&l| (l, false)).collect();
        while let Some((l, done)) = stack.pop() {
            if done {
                self.loops[l.index()].last = counter - 1;
                continue;
            }
            self.loops[l.index()] = LoopMeta {
                pre: counter,
                last: counter,
                depth: li.depth(l),
                header: li.header(l),
                gen: self.gen,
                slot: order.len() as u32,
            };
            order.push(l);
            counter += 1;
            stack.push((l, true));
            for &c in li.children(l).iter().rev() {
                stack.push((c, false));
            }
        }
    }

    /// Classify the values of the blocks `rpo` (in that order) and count the loops of
    /// `order` (numbered by [`ScalarEvolution::number_loops`]).
    #[allow(clippy::too_many_arguments)]
    fn classify(
        &mut self,
        func: &Function,
        cfg: &Cfg,
        dt: &Dom<'_>,
        li: &LoopInfo,
        rpo: &[Block],
        order: &[Loop],
        exiting: &mut Vec<Vec<Block>>,
    ) {
        // Exiting blocks per loop (an edge may leave several loops).
        if exiting.len() < order.len() {
            exiting.resize(order.len(), Vec::new());
        }
        for e in exiting.iter_mut().take(order.len()) {
            e.clear();
        }
        let in_scope = |me: &Self, l: Loop| me.loops[l.index()].gen == me.gen;
        for &b in rpo {
            let Some(mut l) = li.innermost_loop(b) else {
                continue;
            };
            // Loops this block exits: those around it not containing some successor.
            loop {
                if !in_scope(self, l) {
                    break;
                }
                if cfg.succs(b).iter().any(|&s| !li.contains(l, s)) {
                    let v = &mut exiting[self.slot(l)];
                    if v.last() != Some(&b) {
                        v.push(b);
                    }
                    match li.parent(l) {
                        Some(p) => l = p,
                        None => break,
                    }
                } else {
                    break;
                }
            }
        }
        // Values, in RPO: operands come first (recurrences read only values outside
        // their loop, and constants).
        if self.values.len() < func.dfg.num_values() {
            self.values.resize(func.dfg.num_values(), (0, u32::MAX));
        }
        for &b in rpo {
            for (i, &p) in func.dfg.block_params(b).iter().enumerate() {
                if func.dfg.value_type(p).is_int() {
                    let s = self.classify_param(func, cfg, dt, li, exiting, b, i, p);
                    self.values[p.index()] = (self.gen, s.0);
                }
            }
            for inst in func.layout.block_insts(b) {
                if let Some(r) = func.dfg.inst_result(inst) {
                    if func.dfg.value_type(r).is_int() {
                        let s = self.classify_inst(func, inst, r, b);
                        self.values[r.index()] = (self.gen, s.0);
                    }
                }
            }
        }
        // Counts.
        for &l in order {
            let c = self.compute_loop(func, cfg, dt, li, l, &exiting[self.slot(l)]);
            self.counts[l.index()] = c;
        }
    }

    /// The expression of `v` (`None` for non-integer values and values not classified:
    /// unreachable code, detached values, values outside the computed nest).
    pub fn value(&self, v: Value) -> Option<Scev> {
        match self.values.get(v.index()) {
            Some(&(g, s)) if g == self.gen && s != u32::MAX => Some(Scev(s)),
            _ => None,
        }
    }

    /// What is known of loop `l` (nothing for a loop outside the computed nest).
    pub fn loop_counts(&self, l: Loop) -> &LoopCounts {
        match self.loops.get(l.index()) {
            Some(m) if m.gen == self.gen => &self.counts[l.index()],
            _ => &NO_COUNTS,
        }
    }

    /// The backedge-taken count of `l`, if known exactly.
    pub fn backedge_taken_count(&self, l: Loop) -> Option<Scev> {
        self.loop_counts(l).backedge_taken.exact
    }

    /// A constant bound of the backedge-taken count of `l`, if known.
    pub fn max_backedge_taken_count(&self, l: Loop) -> Option<u64> {
        self.loop_counts(l).backedge_taken.max
    }

    /// The expression of the integer `v`, as the nest's instructions see their operands:
    /// [`ScalarEvolution::value`], or, for a value the last computation did not classify
    /// (defined outside the computed nest), the unknown `v` (a constant stays a constant).
    pub fn value_or_unknown(&mut self, func: &Function, v: Value) -> Scev {
        self.get(func, v)
    }

    fn get(&mut self, func: &Function, v: Value) -> Scev {
        match self.value(v) {
            Some(s) => s,
            None => {
                let bits = func.dfg.value_type(v).bits();
                // A constant defined outside the computed nest is still a constant.
                if let ValueDef::Result(i) = func.dfg.value_def(v) {
                    if let InstructionData::IntConst { imm } = *func.dfg.inst(i) {
                        return self.constant(bits, imm as u64);
                    }
                }
                let b = def_block(func, v);
                self.unknown(v, bits, b)
            }
        }
    }

    fn classify_inst(&mut self, func: &Function, inst: gyre_ir::Inst, r: Value, b: Block) -> Scev {
        let bits = func.dfg.value_type(r).bits();
        let unknown = |me: &mut Self| me.unknown(r, bits, Some(b));
        match *func.dfg.inst(inst) {
            InstructionData::IntConst { imm } => self.constant(bits, imm as u64),
            InstructionData::Binary { opcode, args, .. } => {
                let (x, y) = (self.get(func, args[0]), self.get(func, args[1]));
                match opcode {
                    Opcode::Iadd => self.add(x, y),
                    Opcode::Isub => self.sub(x, y),
                    Opcode::Imul => self.mul(x, y),
                    Opcode::Udiv => self.udiv(x, y),
                    Opcode::Shl | Opcode::Lshr => match self.as_const(y) {
                        Some(k) if k < u64::from(bits) => {
                            let p = self.constant(bits, 1u64 << k);
                            if opcode == Opcode::Shl {
                                self.mul(x, p)
                            } else {
                                self.udiv(x, p)
                            }
                        }
                        _ => unknown(self),
                    },
                    Opcode::Smax => self.minmax(ScevKind::SMax, &[x, y]),
                    Opcode::Smin => self.minmax(ScevKind::SMin, &[x, y]),
                    Opcode::Umax => self.minmax(ScevKind::UMax, &[x, y]),
                    Opcode::Umin => self.minmax(ScevKind::UMin, &[x, y]),
                    _ => unknown(self),
                }
            }
            InstructionData::Unary { opcode, arg } if func.dfg.value_type(arg).is_int() => {
                let x = self.get(func, arg);
                match opcode {
                    Opcode::Zext => self.zext(x, bits),
                    Opcode::Sext => self.sext(x, bits),
                    Opcode::Trunc => self.trunc(x, bits),
                    _ => unknown(self),
                }
            }
            _ => unknown(self),
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn classify_param(
        &mut self,
        func: &Function,
        cfg: &Cfg,
        dt: &Dom<'_>,
        li: &LoopInfo,
        exiting: &[Vec<Block>],
        b: Block,
        idx: usize,
        p: Value,
    ) -> Scev {
        let bits = func.dfg.value_type(p).bits();
        if func.layout.entry_block() == Some(b) {
            return self.unknown(p, bits, None);
        }
        // Incoming arguments, one per edge.
        let mut incoming: Vec<(Block, Value)> = Vec::new();
        // Each predecessor once (its terminator's edges to `b` are read together).
        let mut preds: Vec<Block> = cfg.preds(b).to_vec();
        preds.sort_unstable();
        preds.dedup();
        for &pr in &preds {
            if let Some(t) = func.terminator(pr) {
                func.dfg.for_each_dest(t, |bc| {
                    if bc.block == b {
                        if let Some(&a) = func.dfg.block_call_args(bc).get(idx) {
                            incoming.push((pr, a));
                        }
                    }
                });
            }
        }
        if li.is_header(b) {
            if let Some(s) = self.recurrence(func, cfg, dt, li, exiting, b, p, &incoming) {
                return s;
            }
            return self.unknown(p, bits, Some(b));
        }
        // A parameter all of whose edges pass one value defined strictly above it, in a
        // loop that also holds the parameter. (An LCSSA parameter stays unknown, as in
        // LLVM: a recurrence read after its loop has no iteration to be evaluated at.)
        if let Some(&(_, v0)) = incoming.first() {
            if incoming.iter().all(|&(_, v)| v == v0) {
                if let Some(d) = def_block(func, v0) {
                    let dl = li.innermost_loop(d);
                    let same_loop = dl.is_none_or(|dl| li.contains(dl, b));
                    if same_loop && dt.strictly_dominates(d, b) {
                        if let Some(s) = self.value(v0) {
                            return s;
                        }
                    }
                } else if matches!(func.dfg.value_def(v0), ValueDef::Param(..)) {
                    // Entry parameters dominate everything.
                    if let Some(s) = self.value(v0) {
                        return s;
                    }
                }
            }
        }
        self.unknown(p, bits, Some(b))
    }

    /// `{start,+,step}<L>` for a header parameter whose preheader passes `start` and whose
    /// latch passes `p + step` (or `p - c`) with `step` invariant.
    #[allow(clippy::too_many_arguments)]
    fn recurrence(
        &mut self,
        func: &Function,
        cfg: &Cfg,
        dt: &Dom<'_>,
        li: &LoopInfo,
        exiting: &[Vec<Block>],
        h: Block,
        p: Value,
        incoming: &[(Block, Value)],
    ) -> Option<Scev> {
        let l = li.innermost_loop(h)?;
        let pre = li.preheader(l, cfg)?;
        let latch = li.latch(l)?;
        if li.contains_irreducible(l) {
            return None;
        }
        let start_v = incoming.iter().find(|&&(b, _)| b == pre)?.1;
        let passed = incoming.iter().find(|&&(b, _)| b == latch)?.1;
        if incoming.len() != 2 {
            return None;
        }
        // The latch may pass a parameter of its own that every edge into it fills with
        // one value (a rotated loop's old header does): look through it.
        let next = look_through_params(func, cfg, li, l, passed);
        let ValueDef::Result(inc) = func.dfg.value_def(next) else {
            return None;
        };
        let InstructionData::Binary {
            opcode,
            args,
            flags,
        } = *func.dfg.inst(inc)
        else {
            return None;
        };
        // The increment may read a copy of `p`: a parameter of a block inside the loop
        // that every edge fills with `p` (LLVM sees a single-entry phi as its value;
        // LoopDeletion/simplify-then-delete.ll once the inner loop is gone).
        let is_p = |a: Value| a == p || look_through_params(func, cfg, li, l, a) == p;
        let (step_v, negate) = match opcode {
            Opcode::Iadd if is_p(args[0]) => (args[1], false),
            Opcode::Iadd if is_p(args[1]) => (args[0], false),
            Opcode::Isub if is_p(args[0]) => (args[1], true),
            _ => return None,
        };
        // The step must be classified already: a constant, or defined outside the loop.
        let step_ok = matches!(func.dfg.value_def(step_v), ValueDef::Result(i)
                if matches!(func.dfg.inst(i), InstructionData::IntConst { .. }))
            || def_block(func, step_v).is_none_or(|d| !li.contains(l, d));
        if !step_ok {
            return None;
        }
        let bits = func.dfg.value_type(p).bits();
        let step_s = match func.dfg.value_def(step_v) {
            ValueDef::Result(i) => match *func.dfg.inst(i) {
                InstructionData::IntConst { imm } => self.constant(bits, imm as u64),
                _ => self.get(func, step_v),
            },
            _ => self.get(func, step_v),
        };
        let step = if negate { self.neg(step_s) } else { step_s };
        let start = self.get(func, start_v);
        // No-wrap flags from the increment, only where an overflow would be undefined
        // behaviour: the increment (or the parameter, on the next iteration) is compared
        // by the exit test of a block that runs on every iteration.
        let mut rf = ScevFlags::NONE;
        let feeds_exit = exiting[self.slot(l)].iter().any(|&x| {
            li.innermost_loop(x) == Some(l)
                && dt.dominates(x, latch)
                && exit_compare(func, x).is_some_and(|(_, a)| {
                    a.contains(&next) || a.contains(&p) || a.contains(&passed)
                })
        });
        if feeds_exit {
            // `p - c` is `p + (-c)` without signed wrap unless `c` is the minimum
            // (whose negation is itself), so a symbolic subtrahend gives no flag.
            let neg_ok = !negate
                || self
                    .as_const(step_s)
                    .is_some_and(|c| c != 1u64 << (bits - 1));
            if flags.contains(IntFlags::NSW) && neg_ok {
                rf = rf.union(ScevFlags::NSW);
            }
            if flags.contains(IntFlags::NUW) && !negate {
                rf = rf.union(ScevFlags::NUW);
            }
        }
        // The increment's recurrence `{start + step,+,step}` carries the same flags: its
        // values are the parameter's next values, computed by the same instruction.
        if rf != ScevFlags::NONE {
            let s1 = self.add(start, step);
            self.addrec(s1, step, l, rf);
        }
        Some(self.addrec(start, step, l, rf))
    }

    fn compute_loop(
        &mut self,
        func: &Function,
        cfg: &Cfg,
        dt: &Dom<'_>,
        li: &LoopInfo,
        l: Loop,
        exiting: &[Block],
    ) -> LoopCounts {
        let mut out = LoopCounts::default();
        let simple = li.preheader(l, cfg).is_some() && !li.contains_irreducible(l);
        let latch = li.latch(l);
        for &x in exiting {
            let c = match latch {
                Some(lt) if simple && li.innermost_loop(x) == Some(l) && dt.dominates(x, lt) => {
                    self.exit_count(func, cfg, li, l, x)
                }
                _ => ExitCount::default(),
            };
            out.exits.push((x, c));
        }
        if out.exits.is_empty() {
            return out;
        }
        // Exact: the minimum of all exits, when every one is known.
        let all: Option<Vec<Scev>> = out.exits.iter().map(|e| e.1.exact).collect();
        if let Some(all) = all {
            let w = all.iter().map(|&s| self.bits(s)).max().unwrap_or(1);
            let ext: Vec<Scev> = all.iter().map(|&s| self.zext(s, w)).collect();
            out.backedge_taken.exact = Some(self.minmax(ScevKind::UMin, &ext));
        }
        // Max: any exit that runs every iteration bounds the count.
        let mut max: Option<u64> = None;
        for e in &out.exits {
            let m = e.1.exact.and_then(|s| self.as_const(s)).or(e.1.max);
            if let Some(m) = m {
                max = Some(max.map_or(m, |x| x.min(m)));
            }
        }
        if let Some(s) = out.backedge_taken.exact {
            if let Some(k) = self.as_const(s) {
                max = Some(k);
            }
        }
        out.backedge_taken.max = max;
        out
    }

    /// The exit count of exiting block `x` of `l` (which runs once per iteration).
    fn exit_count(
        &mut self,
        func: &Function,
        cfg: &Cfg,
        li: &LoopInfo,
        l: Loop,
        x: Block,
    ) -> ExitCount {
        let none = ExitCount::default();
        let Some(t) = func.terminator(x) else {
            return none;
        };
        let InstructionData::Brif { arg, blocks } = *func.dfg.inst(t) else {
            return none;
        };
        let (tin, ein) = (
            li.contains(l, blocks[0].block),
            li.contains(l, blocks[1].block),
        );
        if tin == ein {
            return none;
        }
        // A constant condition: the exit is taken at once, or never.
        if let Some(c) = self.const_value(func, arg) {
            if (c != 0) != tin {
                let zero = self.constant(1, 0);
                return ExitCount {
                    exact: Some(zero),
                    max: Some(0),
                };
            }
            return none;
        }
        let c = match exit_compare(func, x) {
            Some((cond, args)) => self.affine_exit_count(func, l, cond, args, tin),
            None => self.logical_exit_count(func, l, arg, tin),
        };
        if c.exact.is_some() {
            return c;
        }
        match self.brute_force(func, cfg, li, l, arg, tin) {
            Some(k) => {
                let s = self.constant(32, k);
                ExitCount {
                    exact: Some(s),
                    max: Some(k),
                }
            }
            None => c,
        }
    }

    /// The exit count of a branch on `and`/`or` of two `icmp`s that leaves as soon as
    /// either leaves (an `and` the loop stays on while true, an `or` it stays on while
    /// false): the smaller of the two counts (LLVM's `computeExitCountFromICmp` for a
    /// logical and/or, its "either may exit" case), as a bound only (see below). The other
    /// case (leaving only when both leave) has no count here.
    fn logical_exit_count(
        &mut self,
        func: &Function,
        l: Loop,
        cond: Value,
        tin: bool,
    ) -> ExitCount {
        let none = ExitCount::default();
        let ValueDef::Result(i) = func.dfg.value_def(cond) else {
            return none;
        };
        let InstructionData::Binary { opcode, args, .. } = *func.dfg.inst(i) else {
            return none;
        };
        let either = matches!((opcode, tin), (Opcode::And, true) | (Opcode::Or, false));
        if !either {
            return none;
        }
        let mut counts = [none, none];
        for (k, &a) in args.iter().enumerate() {
            let ValueDef::Result(c) = func.dfg.value_def(a) else {
                return none;
            };
            let InstructionData::IntCompare { cond, args } = *func.dfg.inst(c) else {
                return none;
            };
            counts[k] = self.affine_exit_count(func, l, cond, args, tin);
        }
        let [c0, c1] = counts;
        // A bound: a constant count, a known bound, or for a symbolic count the largest
        // value of its width (the count is known to exist, so the loop terminates).
        let bound = |c: &ExitCount, se: &Self| {
            c.exact
                .and_then(|s| se.as_const(s))
                .or(c.max)
                .or(c.exact.map(|s| {
                    let b = se.bits(s);
                    if b >= 64 {
                        u64::MAX
                    } else {
                        (1u64 << b) - 1
                    }
                }))
        };
        let max = match (bound(&c0, self), bound(&c1, self)) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        // No exact count (LLVM's would be the unsigned minimum of the two): indvars would
        // then rewrite the compound exit test, which its LFTR is not made for.
        let exact = None;
        ExitCount { exact, max }
    }

    /// The exit count of `icmp cond args` (which the loop stays on while it is `tin`) of
    /// an affine recurrence against an invariant.
    fn affine_exit_count(
        &mut self,
        func: &Function,
        l: Loop,
        cond: IntCC,
        args: [Value; 2],
        tin: bool,
    ) -> ExitCount {
        let none = ExitCount::default();
        if !func.dfg.value_type(args[0]).is_int() {
            return none;
        }
        // The predicate under which the loop stays.
        let stay = if tin { cond } else { cond.inverse() };
        let (a, b) = (self.get(func, args[0]), self.get(func, args[1]));
        let (rec, bound, pred) = if self.is_rec_of(a, l) && self.is_invariant(b, l) {
            (a, b, stay)
        } else if self.is_rec_of(b, l) && self.is_invariant(a, l) {
            (b, a, stay.swapped())
        } else {
            return none;
        };
        let (start, step) = (self.operands(rec)[0], self.operands(rec)[1]);
        let flags = self.flags(rec);
        self.count_for(start, step, bound, pred, flags)
    }

    /// LLVM's `computeExitCountExhaustively`: when every header parameter the exit
    /// condition needs starts at a constant, run the loop's arithmetic for at most
    /// [`MAX_BRUTE_FORCE_ITERATIONS`] iterations and return the first whose condition
    /// leaves. Covers doubling and halving counters, which have no affine closed form.
    /// Anything the small evaluator cannot compute exactly (an overflow under a flag,
    /// a division by zero, a parameter of another block, memory) gives up.
    fn brute_force(
        &mut self,
        func: &Function,
        cfg: &Cfg,
        li: &LoopInfo,
        l: Loop,
        cond: Value,
        stay_on_true: bool,
    ) -> Option<u64> {
        let h = li.header(l);
        let pre = li.preheader(l, cfg)?;
        let latch = li.latch(l)?;
        let pre_args = edge_args(func, pre, h)?;
        let latch_args = edge_args(func, latch, h)?;
        let params = func.dfg.block_params(h);
        if pre_args.len() != params.len() || latch_args.len() != params.len() {
            return None;
        }
        let mut state: Vec<Option<u64>> = pre_args
            .iter()
            .map(|&a| self.const_value(func, a))
            .collect();
        let mut ev = LoopEval {
            func,
            li,
            l,
            header: h,
            memo: FxHashMap::default(),
        };
        for k in 0..=MAX_BRUTE_FORCE_ITERATIONS {
            ev.memo.clear();
            let c = ev.eval(self, cond, &state)?;
            if (c != 0) != stay_on_true {
                return Some(k);
            }
            let next: Vec<Option<u64>> = latch_args
                .iter()
                .map(|&a| ev.eval(self, a, &state))
                .collect();
            state = next;
        }
        None
    }

    /// The constant value of `v`: its expression's, or its own when it is an `iconst`
    /// outside the computed nest.
    fn const_value(&self, func: &Function, v: Value) -> Option<u64> {
        if let Some(s) = self.value(v) {
            return self.as_const(s);
        }
        match func.dfg.value_def(v) {
            ValueDef::Result(i) => match *func.dfg.inst(i) {
                InstructionData::IntConst { imm } => {
                    Some(imm as u64 & mask(func.dfg.value_type(v).bits()))
                }
                _ => None,
            },
            _ => None,
        }
    }

    fn is_rec_of(&self, s: Scev, l: Loop) -> bool {
        self.addrec_loop(s) == Some(l)
    }

    /// The first `k >= 0` with `!(start + k*step pred bound)`, or unknown.
    fn count_for(
        &mut self,
        start: Scev,
        step: Scev,
        bound: Scev,
        pred: IntCC,
        flags: ScevFlags,
    ) -> ExitCount {
        let bits = self.bits(start);
        let none = ExitCount::default();
        let Some(t) = self.as_const(step) else {
            return none;
        };
        if let (Some(a), Some(b)) = (self.as_const(start), self.as_const(bound)) {
            return match const_count(bits, a, t, b, pred) {
                Some(k) => {
                    let s = self.constant(bits, k);
                    ExitCount {
                        exact: Some(s),
                        max: Some(k),
                    }
                }
                None => none,
            };
        }
        let m = mask(bits);
        let ts = sext(t, bits);
        use IntCC::*;
        match pred {
            Ne if ts == 1 || ts == -1 => {
                let d = if ts == 1 {
                    self.sub(bound, start)
                } else {
                    self.sub(start, bound)
                };
                let max = self.as_const(d).unwrap_or(m);
                ExitCount {
                    exact: Some(d),
                    max: Some(max),
                }
            }
            Ult | Ule | Slt | Sle if ts > 0 => self.count_up(start, t, bound, pred, flags, false),
            Ugt | Uge | Sgt | Sge if ts < 0 => {
                // Complement: x > b  <=>  ~x < ~b, and ~{a,+,t} = {~a,+,-t}.
                let ns = self.not(start);
                let nb = self.not(bound);
                let t2 = t.wrapping_neg() & m;
                let p2 = pred.swapped();
                self.count_up(ns, t2, nb, p2, flags, true)
            }
            _ => none,
        }
    }

    fn not(&mut self, a: Scev) -> Scev {
        let m1 = self.constant(self.bits(a), u64::MAX);
        self.sub(m1, a)
    }

    /// Counting up by the constant `t > 0` while `iv < bound` (or `<=`), signed or not.
    /// `complemented`: the recurrence was complemented, so only its signed no-wrap flag
    /// still means no wrap in this direction.
    fn count_up(
        &mut self,
        start: Scev,
        t: u64,
        bound: Scev,
        pred: IntCC,
        flags: ScevFlags,
        complemented: bool,
    ) -> ExitCount {
        let bits = self.bits(start);
        let signed = matches!(pred, IntCC::Slt | IntCC::Sle);
        let strict = matches!(pred, IntCC::Slt | IntCC::Ult);
        let nowrap = if signed {
            flags.contains(ScevFlags::NSW)
        } else {
            !complemented && flags.contains(ScevFlags::NUW)
        };
        let (min, max) = if signed {
            (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
        } else {
            (0i128, (1i128 << bits) - 1)
        };
        let val = |x: u64| -> i128 {
            if signed {
                i128::from(sext(x, bits))
            } else {
                i128::from(x)
            }
        };
        let t128 = i128::from(t);
        // The exclusive bound.
        let bound_c = self.as_const(bound).map(val);
        let excl = if strict {
            bound
        } else {
            match bound_c {
                Some(b) if b == max => return ExitCount::default(),
                Some(_) => {
                    let one = self.constant(bits, 1);
                    self.add(bound, one)
                }
                // `iv <= b` with b possibly the maximum never exits without a wrap.
                None if nowrap => {
                    let one = self.constant(bits, 1);
                    self.add(bound, one)
                }
                None => return ExitCount::default(),
            }
        };
        let excl_c = self.as_const(excl).map(val);
        // The recurrence must not step over the maximum before leaving.
        let safe = t == 1 || nowrap || excl_c.is_some_and(|b| b <= max - t128 + 1);
        if !safe {
            return ExitCount::default();
        }
        let mk = if signed {
            ScevKind::SMax
        } else {
            ScevKind::UMax
        };
        let hi = self.minmax(mk, &[start, excl]);
        let dist = self.sub(hi, start);
        let exact = if t == 1 {
            dist
        } else {
            let k = self.constant(bits, t - 1);
            let num = self.add(dist, k);
            let den = self.constant(bits, t);
            self.udiv(num, den)
        };
        let max_count = match self.as_const(exact) {
            Some(k) => Some(k),
            None => {
                // Without a wrap the exclusive bound is at most max - t + 1 (`safe`).
                let hi_b = excl_c.unwrap_or(max - t128 + 1);
                let lo_a = self.as_const(start).map(val).unwrap_or(min);
                let d = (hi_b.min(max + 1) - lo_a).max(0);
                let k = (d + t128 - 1) / t128;
                Some(k.min(i128::from(mask(bits))) as u64)
            }
        };
        ExitCount {
            exact: Some(exact),
            max: max_count,
        }
    }

    /// The value of `s` when loop `l` exits (its recurrences of `l` evaluated at the
    /// backedge-taken count), if it is known and invariant in `l`.
    pub fn exit_value(&mut self, s: Scev, l: Loop) -> Option<Scev> {
        let btc = self.backedge_taken_count(l);
        let mut memo: FxHashMap<Scev, Option<Scev>> = FxHashMap::default();
        let mut stack: Vec<(Scev, bool)> = vec![(s, false)];
        while let Some((x, expanded)) = stack.pop() {
            if memo.contains_key(&x) {
                continue;
            }
            if self.is_invariant(x, l) {
                memo.insert(x, Some(x));
                continue;
            }
            let kind = self.kind(x);
            if kind == ScevKind::Unknown {
                memo.insert(x, None);
                continue;
            }
            if !expanded {
                stack.push((x, true));
                for &o in self.operands(x) {
                    if !memo.contains_key(&o) {
                        stack.push((o, false));
                    }
                }
                continue;
            }
            let ops: Option<Vec<Scev>> = self.operands(x).iter().map(|o| memo[o]).collect();
            let r = match ops {
                None => None,
                Some(ops) => {
                    let bits = self.bits(x);
                    match kind {
                        ScevKind::AddRec => {
                            if self.addrec_loop(x) == Some(l) {
                                btc.map(|n| {
                                    let n = if self.bits(n) > bits {
                                        self.trunc(n, bits)
                                    } else {
                                        self.zext(n, bits)
                                    };
                                    let prod = self.mul(ops[1], n);
                                    self.add(ops[0], prod)
                                })
                            } else {
                                // A recurrence of a loop inside `l`.
                                None
                            }
                        }
                        ScevKind::Add => Some(self.add_n(&ops, 0)),
                        ScevKind::Mul => Some(self.mul_n(&ops, 0)),
                        ScevKind::UDiv => Some(self.udiv(ops[0], ops[1])),
                        ScevKind::ZExt => Some(self.zext(ops[0], bits)),
                        ScevKind::SExt => Some(self.sext(ops[0], bits)),
                        ScevKind::Trunc => Some(self.trunc(ops[0], bits)),
                        k => Some(self.minmax(k, &ops)),
                    }
                }
            };
            memo.insert(x, r);
        }
        memo[&s].filter(|&r| self.is_invariant(r, l))
    }

    /// `s` in LLVM's `print<scalar-evolution>` syntax: `{0,+,1}<nuw><%block3>`,
    /// `(-1 + %v2)`, `(zext i32 %v1 to i64)`, `(%a umax %b)`, `(%a /u 4)`.
    pub fn display(&self, s: Scev, func: &Function) -> String {
        enum Tok {
            Node(Scev),
            Str(&'static str),
            Flags(Scev),
        }
        let mut out = String::new();
        let mut stack = vec![Tok::Node(s)];
        while let Some(t) = stack.pop() {
            match t {
                Tok::Str(x) => out.push_str(x),
                Tok::Flags(x) => {
                    let f = self.flags(x);
                    if f.contains(ScevFlags::NUW) {
                        out.push_str("<nuw>");
                    }
                    if f.contains(ScevFlags::NSW) {
                        out.push_str("<nsw>");
                    }
                    if let Some(l) = self.addrec_loop(x) {
                        let _ = write!(out, "<%{}>", self.loops[l.index()].header);
                    }
                }
                Tok::Node(x) => {
                    let n = &self.nodes[x.index()];
                    let bits = u32::from(n.bits);
                    let ops = self.operands(x);
                    let infix = |op: &'static str, close: &'static str, st: &mut Vec<Tok>| {
                        st.push(Tok::Str(close));
                        for (i, &o) in ops.iter().enumerate().rev() {
                            st.push(Tok::Node(o));
                            if i > 0 {
                                st.push(Tok::Str(op));
                            }
                        }
                        st.push(Tok::Str("("));
                    };
                    match n.kind {
                        ScevKind::Const => {
                            if bits == 1 {
                                let _ =
                                    write!(out, "{}", if n.imm != 0 { "true" } else { "false" });
                            } else {
                                let _ = write!(out, "{}", sext(n.imm, bits));
                            }
                        }
                        ScevKind::Unknown => {
                            let v = Value::new(n.imm as usize);
                            let _ = write!(out, "%{v}");
                            let _ = func;
                        }
                        ScevKind::Add => infix(" + ", ")", &mut stack),
                        ScevKind::Mul => infix(" * ", ")", &mut stack),
                        ScevKind::UDiv => infix(" /u ", ")", &mut stack),
                        ScevKind::UMax => infix(" umax ", ")", &mut stack),
                        ScevKind::SMax => infix(" smax ", ")", &mut stack),
                        ScevKind::UMin => infix(" umin ", ")", &mut stack),
                        ScevKind::SMin => infix(" smin ", ")", &mut stack),
                        ScevKind::ZExt | ScevKind::SExt | ScevKind::Trunc => {
                            let name = match n.kind {
                                ScevKind::ZExt => "zext",
                                ScevKind::SExt => "sext",
                                _ => "trunc",
                            };
                            let from = self.bits(ops[0]);
                            let _ = write!(out, "({name} i{from} ");
                            stack.push(Tok::Str(")"));
                            let to: &'static str = match bits {
                                1 => " to i1",
                                8 => " to i8",
                                16 => " to i16",
                                32 => " to i32",
                                _ => " to i64",
                            };
                            stack.push(Tok::Str(to));
                            stack.push(Tok::Node(ops[0]));
                        }
                        ScevKind::AddRec => {
                            stack.push(Tok::Flags(x));
                            stack.push(Tok::Str("}"));
                            stack.push(Tok::Node(ops[1]));
                            stack.push(Tok::Str(",+,"));
                            stack.push(Tok::Node(ops[0]));
                            stack.push(Tok::Str("{"));
                        }
                    }
                }
            }
        }
        out
    }
}

/// Most iterations [`ScalarEvolution::brute_force`] runs (LLVM's
/// `MaxBruteForceIterations`).
pub const MAX_BRUTE_FORCE_ITERATIONS: u64 = 100;

/// Most instructions one brute-force evaluation may visit.
const MAX_EVAL_NODES: usize = 64;

/// The arguments `from` passes to `to` (`None` unless exactly one edge: several edges to
/// one block may pass different values).
pub fn edge_args(func: &Function, from: Block, to: Block) -> Option<Vec<Value>> {
    let t = func.terminator(from)?;
    let mut found: Option<Vec<Value>> = None;
    let mut edges = 0;
    func.dfg.for_each_dest(t, |bc| {
        if bc.block == to {
            edges += 1;
            found = Some(func.dfg.block_call_args(bc).to_vec());
        }
    });
    if edges == 1 {
        found
    } else {
        None
    }
}

/// Evaluates the integer instructions of one loop iteration, given the header
/// parameters' values (an explicit stack, bounded by [`MAX_EVAL_NODES`]).
struct LoopEval<'a> {
    func: &'a Function,
    li: &'a LoopInfo,
    l: Loop,
    header: Block,
    memo: FxHashMap<Value, u64>,
}

impl LoopEval<'_> {
    fn eval(&mut self, se: &ScalarEvolution, v: Value, state: &[Option<u64>]) -> Option<u64> {
        let func = self.func;
        let mut stack = vec![(v, false)];
        let mut visited = 0usize;
        while let Some((x, expanded)) = stack.pop() {
            if self.memo.contains_key(&x) {
                continue;
            }
            let ty = func.dfg.value_type(x);
            if !ty.is_int() {
                return None;
            }
            let bits = ty.bits();
            let m = mask(bits);
            if let Some(k) = se.value(x).and_then(|s| se.as_const(s)) {
                self.memo.insert(x, k);
                continue;
            }
            let inst = match func.dfg.value_def(x) {
                ValueDef::Param(b, i) if b == self.header => {
                    self.memo.insert(x, (*state.get(i as usize)?)?);
                    continue;
                }
                ValueDef::Result(i) => i,
                _ => return None,
            };
            // A constant outside the computed nest has no expression there.
            if let InstructionData::IntConst { imm } = *func.dfg.inst(inst) {
                self.memo.insert(x, imm as u64 & m);
                continue;
            }
            let b = func.layout.inst_block(inst)?;
            if self.li.innermost_loop(b) != Some(self.l) {
                return None;
            }
            let data = func.dfg.inst(inst);
            let args = data.arguments(&func.dfg.value_lists);
            if !expanded {
                visited += 1;
                if visited > MAX_EVAL_NODES {
                    return None;
                }
                stack.push((x, true));
                for &a in args {
                    stack.push((a, false));
                }
                continue;
            }
            let arg = |i: usize| self.memo.get(&args[i]).copied();
            let r = match *data {
                InstructionData::Binary { opcode, flags, .. } => {
                    let (a, b) = (arg(0)?, arg(1)?);
                    eval_binary(opcode, flags, bits, a, b)?
                }
                InstructionData::Unary { opcode, arg: a } => {
                    let from = func.dfg.value_type(a).bits();
                    let v = arg(0)?;
                    match opcode {
                        Opcode::Zext | Opcode::Trunc => v & m,
                        Opcode::Sext => (sext(v, from) as u64) & m,
                        _ => return None,
                    }
                }
                InstructionData::IntCompare { cond, args: [a, _] } => {
                    let w = func.dfg.value_type(a).bits();
                    u64::from(cond.eval(w, arg(0)?, arg(1)?))
                }
                InstructionData::Ternary {
                    opcode: Opcode::Select,
                    ..
                } => {
                    if arg(0)? != 0 {
                        arg(1)?
                    } else {
                        arg(2)?
                    }
                }
                _ => return None,
            };
            self.memo.insert(x, r & m);
        }
        self.memo.get(&v).copied()
    }
}

/// One integer binary operation, `None` where the result is poison or an error.
fn eval_binary(op: Opcode, flags: IntFlags, bits: u32, a: u64, b: u64) -> Option<u64> {
    let m = mask(bits);
    let (sa, sb) = (i128::from(sext(a, bits)), i128::from(sext(b, bits)));
    let (smin, smax) = (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1);
    let in_s = |x: i128| smin <= x && x <= smax;
    let nsw = flags.contains(IntFlags::NSW);
    let nuw = flags.contains(IntFlags::NUW);
    let exact = flags.contains(IntFlags::EXACT);
    let r = match op {
        Opcode::Iadd => {
            if (nsw && !in_s(sa + sb)) || (nuw && u128::from(a) + u128::from(b) > u128::from(m)) {
                return None;
            }
            a.wrapping_add(b)
        }
        Opcode::Isub => {
            if (nsw && !in_s(sa - sb)) || (nuw && b > a) {
                return None;
            }
            a.wrapping_sub(b)
        }
        Opcode::Imul => {
            if (nsw && !in_s(sa * sb)) || (nuw && u128::from(a) * u128::from(b) > u128::from(m)) {
                return None;
            }
            a.wrapping_mul(b)
        }
        Opcode::Udiv | Opcode::Urem => {
            if b == 0 || (exact && !a.is_multiple_of(b)) {
                return None;
            }
            if op == Opcode::Udiv {
                a / b
            } else {
                a % b
            }
        }
        Opcode::Sdiv | Opcode::Srem => {
            if sb == 0 || (sa == smin && sb == -1) || (exact && sa % sb != 0) {
                return None;
            }
            (if op == Opcode::Sdiv { sa / sb } else { sa % sb }) as u64
        }
        Opcode::And => a & b,
        Opcode::Or => a | b,
        Opcode::Xor => a ^ b,
        Opcode::Shl | Opcode::Lshr | Opcode::Ashr => {
            if b >= u64::from(bits) || !flags.is_empty() {
                return None;
            }
            match op {
                Opcode::Shl => a << b,
                Opcode::Lshr => a >> b,
                _ => (sext(a, bits) >> b) as u64,
            }
        }
        Opcode::Smin => (sa.min(sb)) as u64,
        Opcode::Smax => (sa.max(sb)) as u64,
        Opcode::Umin => a.min(b),
        Opcode::Umax => a.max(b),
        _ => return None,
    };
    Some(r & m)
}

/// Do the own blocks `own` of `l` use no value defined in a subloop of `l`, in their
/// instructions and in the arguments they pass (LCSSA form, as far as they go)? O(their
/// instructions).
fn own_blocks_lcssa(func: &Function, li: &LoopInfo, l: Loop, own: &[Block]) -> bool {
    let in_sub = |v: Value| {
        def_block(func, v).is_some_and(|d| {
            li.innermost_loop(d)
                .is_some_and(|m| m != l && li.contains_loop(l, m))
        })
    };
    for &b in own {
        for i in func.layout.block_insts(b) {
            if func
                .dfg
                .inst(i)
                .arguments(&func.dfg.value_lists)
                .iter()
                .any(|&v| in_sub(v))
            {
                return false;
            }
            let mut bad = false;
            func.dfg.for_each_dest(i, |bc| {
                bad |= func.dfg.block_call_args(bc).iter().any(|&v| in_sub(v));
            });
            if bad {
                return false;
            }
        }
    }
    true
}

/// The value a parameter of a block of loop `l` (not its header) always holds, when every
/// edge into the block passes the same one, followed through up to 8 such parameters;
/// `v` itself otherwise. A rotated loop's latch passes its own parameters back to the
/// header this way.
pub fn look_through_params(func: &Function, cfg: &Cfg, li: &LoopInfo, l: Loop, v: Value) -> Value {
    let mut next = v;
    for _ in 0..8 {
        let ValueDef::Param(b, j) = func.dfg.value_def(next) else {
            break;
        };
        if b == li.header(l) || !li.contains(l, b) {
            break;
        }
        let mut only: Option<Value> = None;
        let mut same = true;
        for &pr in cfg.preds(b) {
            if let Some(t) = func.terminator(pr) {
                func.dfg.for_each_dest(t, |bc| {
                    if bc.block == b {
                        let a = func.dfg.block_call_args(bc).get(j as usize).copied();
                        match (a, only) {
                            (Some(a), None) => only = Some(a),
                            (Some(a), Some(o)) if a == o => {}
                            _ => same = false,
                        }
                    }
                });
            }
        }
        match only {
            Some(o) if same && o != next => next = o,
            _ => break,
        }
    }
    next
}

/// The block defining `v` (`None` for detached values).
pub fn def_block(func: &Function, v: Value) -> Option<Block> {
    match func.dfg.value_def(v) {
        ValueDef::Result(i) => func.layout.inst_block(i),
        ValueDef::Param(b, _) => Some(b),
        ValueDef::Detached => None,
    }
}

/// The `icmp` deciding the `brif` that ends `x`: its predicate and operands.
fn exit_compare(func: &Function, x: Block) -> Option<(IntCC, [Value; 2])> {
    let t = func.terminator(x)?;
    let InstructionData::Brif { arg, .. } = *func.dfg.inst(t) else {
        return None;
    };
    let ValueDef::Result(c) = func.dfg.value_def(arg) else {
        return None;
    };
    match *func.dfg.inst(c) {
        InstructionData::IntCompare { cond, args } => Some((cond, args)),
        _ => None,
    }
}

/// The first `k >= 0` for which `!(a + k*t pred b)` in `bits`-wide arithmetic, or `None`
/// when it never comes or the shortcut below cannot tell.
///
/// The set where the loop stays is a circular interval `[lo, hi]`; moving by `t` towards
/// its end, the first step past it lands in the gap outside it (the exit) unless the step
/// is longer than the gap (then it wraps back in: only `ne` is solved further, exactly,
/// with a modular inverse).
pub fn const_count(bits: u32, a: u64, t: u64, b: u64, pred: IntCC) -> Option<u64> {
    let m = mask(bits);
    let (a, t, b) = (a & m, t & m, b & m);
    if !pred.eval(bits, a, b) {
        return Some(0);
    }
    if t == 0 {
        return None;
    }
    let smin = 1u64 << (bits - 1);
    use IntCC::*;
    // [lo, hi] (mod 2^bits), non-empty since a is in it; `None` if it is everything.
    let (lo, hi) = match pred {
        Eq => (b, b),
        Ne => (b.wrapping_add(1) & m, b.wrapping_sub(1) & m),
        Ult => (0, b.wrapping_sub(1) & m),
        Ule => (0, b),
        Ugt => (b.wrapping_add(1) & m, m),
        Uge => (b, m),
        Slt => (smin, b.wrapping_sub(1) & m),
        Sle => (smin, b),
        Sgt => (b.wrapping_add(1) & m, smin - 1),
        Sge => (b, smin - 1),
    };
    let size = u128::from(hi.wrapping_sub(lo) & m) + 1;
    let full = 1u128 << bits;
    if size == full {
        return None;
    }
    let gap = full - size;
    let up = sext(t, bits) > 0;
    let (d, mag) = if up {
        (u128::from(hi.wrapping_sub(a) & m), u128::from(t))
    } else {
        (
            u128::from(a.wrapping_sub(lo) & m),
            u128::from(t.wrapping_neg() & m),
        )
    };
    let k1 = d / mag + 1;
    let overshoot = mag - d % mag;
    if overshoot <= gap {
        return Some(k1 as u64);
    }
    if pred != Ne {
        return None;
    }
    // a + k*t == b (mod 2^bits).
    let dist = b.wrapping_sub(a) & m;
    let tz = t.trailing_zeros();
    if dist.trailing_zeros() < tz {
        return None;
    }
    let rbits = bits - tz;
    let rm = mask(rbits);
    let odd = (t >> tz) & rm;
    // Newton's iteration for the inverse of an odd number mod 2^64.
    let mut inv = odd;
    for _ in 0..6 {
        inv = inv.wrapping_mul(2u64.wrapping_sub(odd.wrapping_mul(inv)));
    }
    Some(((dist >> tz).wrapping_mul(inv)) & rm)
}

/// The children of each node of a dominator tree given by `idom` (numbered nodes, the root
/// 0): node `d`'s children are `kids[first[d]..first[d + 1]]`, by a counting sort; `fill`
/// is scratch. Both per-loop computations use it to number the tree in preorder.
fn children_by_counting_sort(
    idom: &[u32],
    first: &mut Vec<u32>,
    fill: &mut Vec<u32>,
    kids: &mut Vec<u32>,
) {
    let n = idom.len();
    first.clear();
    first.resize(n + 1, 0);
    for &d in &idom[1..] {
        first[d as usize + 1] += 1;
    }
    for i in 0..n {
        first[i + 1] += first[i];
    }
    fill.clear();
    fill.extend_from_slice(first);
    kids.clear();
    kids.resize(n.saturating_sub(1), 0);
    for (i, &d) in idom.iter().enumerate().skip(1) {
        kids[fill[d as usize] as usize] = i as u32;
        fill[d as usize] += 1;
    }
}

/// The nearest common dominator of the nodes numbered `a` and `b` (reverse-postorder
/// numbers, `idom` indexed by them): Cooper, Harvey and Kennedy's two-finger walk.
fn intersect(idom: &[u32], mut a: u32, mut b: u32) -> u32 {
    while a != b {
        while a > b {
            a = idom[a as usize];
        }
        while b > a {
            b = idom[b as usize];
        }
    }
    a
}

#[cfg(test)]
mod tests {
    use super::*;

    fn brute(bits: u32, a: u64, t: u64, b: u64, pred: IntCC) -> Option<u64> {
        let m = mask(bits);
        let mut x = a & m;
        for k in 0..=(1u64 << bits) {
            if !pred.eval(bits, x, b & m) {
                return Some(k);
            }
            x = x.wrapping_add(t) & m;
        }
        None
    }

    #[test]
    fn const_count_matches_brute_force_on_i4_and_i6() {
        let preds = [
            IntCC::Eq,
            IntCC::Ne,
            IntCC::Slt,
            IntCC::Sle,
            IntCC::Sgt,
            IntCC::Sge,
            IntCC::Ult,
            IntCC::Ule,
            IntCC::Ugt,
            IntCC::Uge,
        ];
        let mut answered = 0;
        let mut total = 0;
        for bits in [4u32, 6] {
            let n = 1u64 << bits;
            for a in 0..n {
                for t in 0..n {
                    for b in 0..n {
                        for &p in &preds {
                            let want = brute(bits, a, t, b, p);
                            total += 1;
                            if let Some(k) = const_count(bits, a, t, b, p) {
                                answered += 1;
                                assert_eq!(Some(k), want, "i{bits} a={a} t={t} b={b} {p}");
                            }
                        }
                    }
                }
            }
        }
        // Every loop that exits without stepping over the gap is answered.
        assert!(answered * 10 > total * 8, "{answered}/{total}");
    }
}

/// How an expression behaves in a loop (LLVM's loop disposition).
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum LoopDisposition {
    /// The same value on every iteration.
    Invariant,
    /// Changes predictably: recurrences of the loop over invariant operands.
    Computable,
    /// Anything else.
    Variant,
}

impl ScalarEvolution {
    /// The disposition of `s` in `l` (an explicit walk of the expression DAG).
    pub fn loop_disposition(&self, s: Scev, l: Loop) -> LoopDisposition {
        if self.is_invariant(s, l) {
            return LoopDisposition::Invariant;
        }
        let mut seen = rustc_hash::FxHashSet::default();
        let mut stack = vec![s];
        while let Some(x) = stack.pop() {
            if !seen.insert(x) || self.is_invariant(x, l) {
                continue;
            }
            match self.kind(x) {
                ScevKind::Unknown => return LoopDisposition::Variant,
                ScevKind::AddRec if self.addrec_loop(x) != Some(l) => {
                    return LoopDisposition::Variant
                }
                _ => stack.extend_from_slice(self.operands(x)),
            }
        }
        LoopDisposition::Computable
    }
}

/// `print<scalar-evolution>`: every integer value (compares excepted, as in LLVM) with its
/// expression, its value at the exit of its loop and its dispositions, then every loop's
/// counts, inner loops first. Laid out line by line as LLVM 14 prints it, without the
/// `U:`/`S:` ranges.
pub fn print_scev(se: &mut ScalarEvolution, li: &LoopInfo, func: &Function) -> String {
    let mut out = String::new();
    let name = &func.name;
    let _ = writeln!(
        out,
        "Printing analysis 'Scalar Evolution Analysis' for function '{name}':"
    );
    let _ = writeln!(out, "Classifying expressions for: @{name}");
    let line = |out: &mut String, se: &mut ScalarEvolution, v: Value, b: Block, text: &str| {
        let Some(s) = se.value(v) else {
            return;
        };
        let _ = writeln!(out, "  {text}");
        let _ = write!(out, "  -->  {}", se.display(s, func));
        if let Some(l) = li.innermost_loop(b) {
            let exit = match se.exit_value(s, l) {
                Some(e) => se.display(e, func),
                None => "<<Unknown>>".to_string(),
            };
            let _ = write!(out, "\t\tExits: {exit}\t\tLoopDispositions: {{ ");
            let mut cur = Some(l);
            let mut first = true;
            while let Some(c) = cur {
                let d = match se.loop_disposition(s, c) {
                    LoopDisposition::Invariant => "Invariant",
                    LoopDisposition::Computable => "Computable",
                    LoopDisposition::Variant => "Variant",
                };
                let sep = if first { "" } else { ", " };
                let _ = write!(out, "{sep}%{}: {d}", li.header(c));
                first = false;
                cur = li.parent(c);
            }
            out.push_str(" }");
        }
        out.push('\n');
    };
    for b in func.layout.blocks() {
        for (i, &p) in func.dfg.block_params(b).iter().enumerate() {
            let text = format!("{p} = {b} param {i}: {}", func.dfg.value_type(p));
            line(&mut out, se, p, b, &text);
        }
        for inst in func.layout.block_insts(b) {
            let Some(r) = func.dfg.inst_result(inst) else {
                continue;
            };
            if func.dfg.inst(inst).opcode() == Opcode::Icmp {
                continue;
            }
            let mut text = String::new();
            let _ = gyre_ir::write::write_inst(&mut text, func, None, inst);
            line(&mut out, se, r, b, text.trim_end());
        }
    }
    let _ = writeln!(out, "Determining loop execution counts for: @{name}");
    // Inner loops first, siblings in program order (an explicit post-order).
    let mut order = Vec::with_capacity(li.num_loops());
    let mut stack: Vec<(Loop, bool)> = li.top_level().iter().rev().map(|&l| (l, false)).collect();
    while let Some((l, done)) = stack.pop() {
        if done {
            order.push(l);
            continue;
        }
        stack.push((l, true));
        for &c in li.children(l).iter().rev() {
            stack.push((c, false));
        }
    }
    for l in order {
        let h = li.header(l);
        let counts = se.loop_counts(l).clone();
        let multi = if counts.exits.len() != 1 {
            "<multiple exits> "
        } else {
            ""
        };
        match counts.backedge_taken.exact {
            Some(s) => {
                let _ = writeln!(
                    out,
                    "Loop %{h}: {multi}backedge-taken count is {}",
                    se.display(s, func)
                );
            }
            None => {
                let _ = writeln!(out, "Loop %{h}: {multi}Unpredictable backedge-taken count.");
            }
        }
        if counts.exits.len() > 1 {
            for &(x, c) in &counts.exits {
                let e = match c.exact {
                    Some(s) => se.display(s, func),
                    None => "***COULDNOTCOMPUTE***".to_string(),
                };
                let _ = writeln!(out, "  exit count for {x}: {e}");
            }
        }
        let bits = counts
            .backedge_taken
            .exact
            .map(|s| se.bits(s))
            .or_else(|| {
                counts
                    .exits
                    .iter()
                    .find_map(|e| e.1.exact.map(|s| se.bits(s)))
            })
            .unwrap_or(64);
        match counts.backedge_taken.max {
            Some(m) => {
                let _ = writeln!(
                    out,
                    "Loop %{h}: max backedge-taken count is {}",
                    sext(m, bits)
                );
            }
            None => {
                let _ = writeln!(out, "Loop %{h}: Unpredictable max backedge-taken count. ");
            }
        }
        match counts.backedge_taken.exact {
            Some(s) => {
                let _ = writeln!(
                    out,
                    "Loop %{h}: Predicated backedge-taken count is {}",
                    se.display(s, func)
                );
                let _ = writeln!(out, " Predicates:");
                out.push('\n');
                let mult = match se.as_const(s) {
                    Some(k) if k < u64::from(u32::MAX) => k + 1,
                    _ => 1,
                };
                let _ = writeln!(out, "Loop %{h}: Trip multiple is {mult}");
            }
            None => {
                let _ = writeln!(
                    out,
                    "Loop %{h}: Unpredictable predicated backedge-taken count. "
                );
            }
        }
    }
    out
}

impl ScalarEvolution {
    /// The value of `s` (masked to its width) given the values of its unknowns; `None` if
    /// it holds a recurrence, an unknown `unknown` does not give, or a division by zero.
    /// For tests and for checking closed forms against an execution.
    pub fn evaluate(&self, s: Scev, unknown: impl Fn(Value) -> Option<u64>) -> Option<u64> {
        let mut memo: FxHashMap<Scev, u64> = FxHashMap::default();
        let mut stack: Vec<(Scev, bool)> = vec![(s, false)];
        while let Some((x, expanded)) = stack.pop() {
            if memo.contains_key(&x) {
                continue;
            }
            let n = &self.nodes[x.index()];
            let bits = u32::from(n.bits);
            let m = mask(bits);
            match n.kind {
                ScevKind::Const => {
                    memo.insert(x, n.imm);
                    continue;
                }
                ScevKind::Unknown => {
                    memo.insert(x, unknown(Value::new(n.imm as usize))? & m);
                    continue;
                }
                ScevKind::AddRec => return None,
                _ => {}
            }
            if !expanded {
                stack.push((x, true));
                for &o in self.operands(x) {
                    stack.push((o, false));
                }
                continue;
            }
            let ops: Vec<u64> = self.operands(x).iter().map(|o| memo[o]).collect();
            let from = self.operands(x).first().map_or(bits, |&o| self.bits(o));
            let sx = |v: u64| sext(v, bits);
            let r = match n.kind {
                ScevKind::Add => ops.iter().fold(0u64, |a, &b| a.wrapping_add(b)),
                ScevKind::Mul => ops.iter().fold(1u64, |a, &b| a.wrapping_mul(b)),
                ScevKind::UDiv => ops[0].checked_div(ops[1])?,
                ScevKind::ZExt | ScevKind::Trunc => ops[0],
                ScevKind::SExt => sext(ops[0], from) as u64,
                ScevKind::UMax => *ops.iter().max()?,
                ScevKind::UMin => *ops.iter().min()?,
                ScevKind::SMax => *ops.iter().max_by_key(|&&v| sx(v))?,
                ScevKind::SMin => *ops.iter().min_by_key(|&&v| sx(v))?,
                _ => return None,
            };
            memo.insert(x, r & m);
        }
        memo.get(&s).copied()
    }
}

/// Cost of a division in [`ScalarEvolution::expansion_cost`]: PTX has no integer divide
/// instruction; `div.u32` is a software sequence of tens of instructions.
pub const UDIV_COST: u32 = 10;

impl ScalarEvolution {
    /// What materialising `s` would cost, in instructions (a division counts
    /// [`UDIV_COST`], a multiplication 2); shared subexpressions count once; `None` if it
    /// holds a recurrence (which has no value outside its loop's iterations). Used to
    /// decide whether an exit value is cheap enough to compute (`replexitval=cheap`).
    pub fn expansion_cost(&self, s: Scev) -> Option<u32> {
        let mut seen = rustc_hash::FxHashSet::default();
        let mut stack = vec![s];
        let mut cost = 0u32;
        while let Some(x) = stack.pop() {
            if !seen.insert(x) {
                continue;
            }
            let n = self.operands(x).len() as u32;
            cost = cost.saturating_add(match self.kind(x) {
                ScevKind::Const | ScevKind::Unknown => 0,
                ScevKind::AddRec => return None,
                ScevKind::Mul => 2 * (n - 1),
                ScevKind::UDiv => UDIV_COST,
                ScevKind::ZExt | ScevKind::SExt | ScevKind::Trunc => 1,
                _ => n - 1,
            });
            stack.extend_from_slice(self.operands(x));
        }
        Some(cost)
    }

    /// Materialise `s` as instructions inserted before `at` (LLVM's `SCEVExpander`), and
    /// return its value. `None`, with the function untouched, if `s` holds a recurrence,
    /// a division by anything but a non-zero constant (it could trap where the program
    /// never divided), or an unknown whose definition does not dominate `at` (per `dt`).
    /// Shared subexpressions are computed once; nothing is reused from the function.
    pub fn expand(
        &self,
        func: &mut Function,
        dt: &DomTree,
        s: Scev,
        at: gyre_ir::Inst,
    ) -> Option<Value> {
        self.expand_with(func, |a, b| dt.dominates(a, b), s, at)
    }

    /// Would [`ScalarEvolution::expand_with`] succeed, with the same arguments? Nothing is
    /// inserted (a pass that must rewrite several expressions or none checks them all
    /// first).
    pub fn can_expand_with(
        &self,
        func: &Function,
        dominates: impl Fn(Block, Block) -> bool,
        s: Scev,
        at: gyre_ir::Inst,
    ) -> bool {
        self.expansion_order(func, dominates, s, at).is_some()
    }

    /// The subexpressions of `s` in the order they are materialised (operands first), or
    /// `None` if one cannot be materialised before `at` (see [`ScalarEvolution::expand`]).
    fn expansion_order(
        &self,
        func: &Function,
        dominates: impl Fn(Block, Block) -> bool,
        s: Scev,
        at: gyre_ir::Inst,
    ) -> Option<Vec<Scev>> {
        let at_block = func.layout.inst_block(at)?;
        let mut order: Vec<Scev> = Vec::new();
        let mut seen = rustc_hash::FxHashSet::default();
        let mut stack: Vec<(Scev, bool)> = vec![(s, false)];
        while let Some((x, expanded)) = stack.pop() {
            if expanded {
                order.push(x);
                continue;
            }
            if !seen.insert(x) {
                continue;
            }
            match self.kind(x) {
                ScevKind::AddRec => return None,
                // A division the program may never have executed must not be able to
                // trap: only non-zero constant divisors.
                ScevKind::UDiv if self.as_const(self.operands(x)[1]).is_none_or(|d| d == 0) => {
                    return None
                }
                ScevKind::Unknown => {
                    let v = self.as_unknown(x)?;
                    let ok = match func.dfg.value_def(v) {
                        ValueDef::Param(b, _) => dominates(b, at_block),
                        ValueDef::Result(i) => match func.layout.inst_block(i) {
                            Some(b) if b == at_block => {
                                func.layout.pp_cmp(i, at) == std::cmp::Ordering::Less
                            }
                            Some(b) => dominates(b, at_block),
                            None => false,
                        },
                        ValueDef::Detached => false,
                    };
                    if !ok || func.dfg.value_type(v).bits() != self.bits(x) {
                        return None;
                    }
                }
                _ => {}
            }
            gyre_ir::Type::int(self.bits(x))?;
            stack.push((x, true));
            for &o in self.operands(x) {
                stack.push((o, false));
            }
        }
        Some(order)
    }

    /// [`ScalarEvolution::expand`] with dominance between blocks given by `dominates`
    /// (for a loop pass whose dominator tree is stale: inside a loop nest, a definition
    /// outside it that the nest uses dominates every block of it and its exits).
    pub fn expand_with(
        &self,
        func: &mut Function,
        dominates: impl Fn(Block, Block) -> bool,
        s: Scev,
        at: gyre_ir::Inst,
    ) -> Option<Value> {
        use gyre_ir::builder::{FuncCursor, InstBuilder};
        // Check everything before changing anything.
        let order = self.expansion_order(func, dominates, s, at)?;
        let mut vals: FxHashMap<Scev, Value> = FxHashMap::default();
        let mut cur = FuncCursor::new(func).before_inst(at);
        for x in order {
            if vals.contains_key(&x) {
                continue;
            }
            let bits = self.bits(x);
            let ty = gyre_ir::Type::int(bits)?;
            let ops: Vec<Value> = self.operands(x).iter().map(|o| vals[o]).collect();
            let fold = |cur: &mut FuncCursor, op: Opcode| {
                let mut acc = ops[0];
                for &o in &ops[1..] {
                    acc = cur.binary(op, acc, o, IntFlags::NONE);
                }
                acc
            };
            let v = match self.kind(x) {
                ScevKind::Const => cur.iconst(ty, sext(self.as_const(x)?, bits)),
                ScevKind::Unknown => self.as_unknown(x)?,
                ScevKind::Add => fold(&mut cur, Opcode::Iadd),
                ScevKind::Mul => fold(&mut cur, Opcode::Imul),
                ScevKind::UDiv => fold(&mut cur, Opcode::Udiv),
                ScevKind::UMax => fold(&mut cur, Opcode::Umax),
                ScevKind::UMin => fold(&mut cur, Opcode::Umin),
                ScevKind::SMax => fold(&mut cur, Opcode::Smax),
                ScevKind::SMin => fold(&mut cur, Opcode::Smin),
                ScevKind::ZExt => cur.cast(Opcode::Zext, ty, ops[0]),
                ScevKind::SExt => cur.cast(Opcode::Sext, ty, ops[0]),
                ScevKind::Trunc => cur.cast(Opcode::Trunc, ty, ops[0]),
                ScevKind::AddRec => return None,
            };
            vals.insert(x, v);
        }
        vals.get(&s).copied()
    }
}
