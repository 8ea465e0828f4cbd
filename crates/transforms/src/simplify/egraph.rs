//! The acyclic e-graph of `simplify`: pure operations hash-consed into e-nodes, e-classes
//! joined by union-find, rewrite rules applied when a node is inserted.
//!
//! The model is Cranelift's aegraph (`cranelift/codegen/src/egraph.rs`): an e-node is only
//! ever added after the classes of its operands exist, so the graph is acyclic and the
//! cheapest node of a class can be chosen when the node arrives (no saturation, no
//! extraction pass). A class keeps its cheapest node (`best`), its cheapest node that is
//! not a leaf (`best_pure`, the fallback when the leaf is not available at a use), its
//! constant if it has one, and the block the first of its nodes came from (`home`), which
//! elaboration uses so that values are not pushed below where the input computed them.
//!
//! The operands of an e-node's `InstructionData` are class ids written as [`Value`]s (as
//! Cranelift's e-graph uses values as class ids); elaboration maps them back to real
//! values.

use super::rules::{Family, RULES};
use cranelift_entity::packed_option::PackedOption;
use cranelift_entity::{entity_impl, EntityRef, PrimaryMap, SecondaryMap};
use gyre_ir::{Block, Inst, InstructionData, Opcode, Type, Value};
use rustc_hash::FxHashMap;

/// An e-node; the root of a union-find tree is the id of its e-class.
#[derive(Copy, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Node(u32);
entity_impl!(Node, "node");

/// What an e-node is.
#[derive(Clone, Debug)]
pub enum NodeKind {
    /// A value the e-graph does not look into: a block parameter or the result of an
    /// instruction that stays in the skeleton (load, atomic, call, guarded division...).
    Leaf(Value, Type),
    /// A pure operation; its operands are class ids (see the module doc).
    Pure {
        /// The operation, operands as class ids.
        data: InstructionData,
        /// Its result type.
        ty: Type,
        /// The input instruction this node came from, reused by the first placement so
        /// that values keep their numbers.
        inst: PackedOption<Inst>,
    },
}

/// Per-class data, valid at the root.
#[derive(Clone, Copy, Debug)]
struct ClassData {
    best: Node,
    cost: u32,
    best_pure: PackedOption<Node>,
    pure_cost: u32,
    konst: PackedOption<Node>,
    leaf: PackedOption<Node>,
    home: PackedOption<Block>,
    size: u32,
    /// Bits known to be zero in the class's value (an integer; 0 otherwise): the known
    /// bits of each node ([`super::rules::known_zeros`]), joined when classes merge.
    zeros: u64,
}

/// Limits on rewriting, with counters of the times each stopped a rewrite.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// Nested rewrites (a rule's new node rewritten in turn) deeper than this are not
    /// tried.
    pub rewrite_depth: u32,
    /// A class with this many nodes gets no more rewrites.
    pub eclass_size: u32,
}

/// Counters of what the e-graph did.
#[derive(Clone, Copy, Debug, Default)]
pub struct GraphStats {
    /// Rewrites per rule family (`Family as usize`).
    pub fired: [u64; Family::COUNT],
    /// Hash-consing hits: an operation equal to one already in the graph.
    pub gvn_hits: u64,
    /// Rewrites not tried because of the depth limit.
    pub stop_depth: u64,
    /// Rewrites not tried because of the class-size limit.
    pub stop_size: u64,
}

/// The e-graph.
pub struct EGraph {
    nodes: PrimaryMap<Node, NodeKind>,
    /// Pushed with each node (as `class`), so that [`EGraph::reserve`] sizes all three
    /// without touching memory, instead of growing a map entry by entry.
    parent: PrimaryMap<Node, PackedOption<Node>>,
    class: PrimaryMap<Node, Option<ClassData>>,
    /// Hash-consing: the hash of each node's key (its operation with canonical operands,
    /// and its type) -> the node, which holds the key ([`EGraph::key_of`]); 16 bytes an
    /// entry instead of a copy of the key. A node whose hash collides with a different
    /// key's goes to `overflow`, scanned linearly (64-bit hashes: in practice never).
    map: FxHashMap<u64, Node>,
    overflow: Vec<(u64, Node)>,
    leaves: SecondaryMap<Value, PackedOption<Node>>,
    limits: Limits,
    depth: u32,
    home: PackedOption<Block>,
    /// Blocks that also hold a node of the class (hash-consing hits, unions): the class's
    /// home becomes their nearest common dominator once the graph is built.
    pending_homes: Vec<(Node, Block)>,
    /// Block parameters known non-negative (as signed integers) from their incoming edges.
    nonneg: SecondaryMap<Value, bool>,
    /// The rules of each opcode in table order, as CSR: the indices into [`RULES`] of
    /// opcode `op` are `rule_idx[rule_start[op]..rule_start[op + 1]]`. Built once, so
    /// that a node tries only its opcode's rules instead of scanning every rule's list.
    rule_start: Vec<u16>,
    rule_idx: Vec<u8>,
    /// Counters.
    pub stats: GraphStats,
}

/// A class id as it is stored in an e-node's operands.
pub fn as_value(n: Node) -> Value {
    Value::new(n.index())
}

/// The class id stored in an e-node's operand.
pub fn as_node(v: Value) -> Node {
    Node::new(v.index())
}

/// The operands of a pure operation (the formats the e-graph holds use no value list).
pub fn pure_args(data: &InstructionData) -> &[Value] {
    use InstructionData as D;
    match data {
        D::Unary { arg, .. } => core::slice::from_ref(arg),
        D::Binary { args, .. }
        | D::IntCompare { args, .. }
        | D::FloatCompare { args, .. }
        | D::PtrAdd { args, .. } => args,
        D::Ternary { args, .. } => args,
        _ => &[],
    }
}

/// Mutable operands of a pure operation.
pub fn pure_args_mut(data: &mut InstructionData) -> &mut [Value] {
    use InstructionData as D;
    match data {
        D::Unary { arg, .. } => core::slice::from_mut(arg),
        D::Binary { args, .. }
        | D::IntCompare { args, .. }
        | D::FloatCompare { args, .. }
        | D::PtrAdd { args, .. } => args,
        D::Ternary { args, .. } => args,
        _ => &mut [],
    }
}

/// Is this opcode commutative in its two operands (for hash-consing)?
fn commutative(op: Opcode) -> bool {
    matches!(
        op,
        Opcode::Iadd
            | Opcode::Imul
            | Opcode::And
            | Opcode::Or
            | Opcode::Xor
            | Opcode::Smin
            | Opcode::Smax
            | Opcode::Umin
            | Opcode::Umax
            | Opcode::Mul24
            | Opcode::Umul24
    )
}

/// Order the operands of a commutative binary operation (smaller class id first), so
/// that `a + b` and `b + a` have one key.
fn commute(key: &mut InstructionData) {
    if let InstructionData::Binary {
        opcode, args: ka, ..
    } = key
    {
        if commutative(*opcode) && ka[0] > ka[1] {
            ka.swap(0, 1);
        }
    }
}

/// The hash of a hash-consing key.
fn key_hash(key: &(InstructionData, Type)) -> u64 {
    use core::hash::{BuildHasher, BuildHasherDefault};
    BuildHasherDefault::<rustc_hash::FxHasher>::default().hash_one(key)
}

/// The cost of one operation, roughly in issue slots of the PTX it becomes.
pub fn op_cost(data: &InstructionData) -> u32 {
    use Opcode::*;
    match data.opcode() {
        Iconst | Fconst => 1,
        Sreg | GlobalAddr | SlotAddr => 1,
        Imul | Mul24 | Umul24 => 3,
        PtrAdd => 2,
        Fadd | Fsub | Fmul | Fma | Fmin | Fmax | Fneg | Fabs => 2,
        Fdiv | Sqrt | FdivApprox | RsqrtApprox => 8,
        Frem => 20,
        Ex2Approx | Lg2Approx | SinApprox | CosApprox => 4,
        Sdiv | Udiv | Srem | Urem => 20,
        Fptosi | Fptoui | Sitofp | Uitofp | Fpext | Fptrunc => 2,
        Floor | Ceil | Ftrunc | Nearest => 2,
        _ => 1,
    }
}

impl EGraph {
    /// An empty e-graph with these limits.
    pub fn new(limits: Limits) -> EGraph {
        let mut rule_start = Vec::with_capacity(Opcode::ALL.len() + 1);
        let mut rule_idx = Vec::new();
        for &op in Opcode::ALL {
            debug_assert_eq!(Opcode::ALL[op as usize], op, "opcodes index ALL");
            rule_start.push(u16::try_from(rule_idx.len()).expect("few rules"));
            for (k, rule) in RULES.iter().enumerate() {
                if rule.ops.contains(&op) {
                    rule_idx.push(u8::try_from(k).expect("at most 256 rules"));
                }
            }
        }
        rule_start.push(u16::try_from(rule_idx.len()).expect("few rules"));
        EGraph {
            nodes: PrimaryMap::new(),
            parent: PrimaryMap::new(),
            class: PrimaryMap::new(),
            map: FxHashMap::default(),
            overflow: Vec::new(),
            leaves: SecondaryMap::new(),
            limits,
            depth: 0,
            home: None.into(),
            pending_homes: Vec::new(),
            nonneg: SecondaryMap::new(),
            rule_start,
            rule_idx,
            stats: GraphStats::default(),
        }
    }

    /// The indices into [`RULES`] of the rules that look at `op`, in table order.
    fn rules_of(&self, op: Opcode) -> core::ops::Range<usize> {
        let k = op as usize;
        self.rule_start[k] as usize..self.rule_start[k + 1] as usize
    }

    /// Forget everything (buffers are kept).
    pub fn clear(&mut self, limits: Limits) {
        self.nodes.clear();
        self.parent.clear();
        self.class.clear();
        self.map.clear();
        self.overflow.clear();
        self.leaves.clear();
        self.limits = limits;
        self.depth = 0;
        self.home = None.into();
        self.pending_homes.clear();
        self.nonneg.clear();
        self.stats = GraphStats::default();
    }

    /// Make room for the nodes of `pure` operations (and as many leaves and rule-made
    /// nodes) over a function of `values` values, so that the graph does not grow (and
    /// copy itself) while it is built. Reserved capacity of the node maps is not touched
    /// until used; the hash table is sized for the operations only (it holds no leaf).
    pub fn reserve(&mut self, pure: usize, values: usize) {
        let nodes = 2 * pure;
        self.nodes.reserve(nodes);
        self.parent.reserve(nodes);
        self.class.reserve(nodes);
        self.map.reserve(pure);
        self.leaves.resize(values);
        self.nonneg.resize(values);
    }

    /// The number of nodes (every node id is below it).
    pub fn num_nodes(&self) -> usize {
        self.nodes.len()
    }

    /// Add a node with its own class.
    fn push(&mut self, kind: NodeKind, data: ClassData) -> Node {
        let n = self.nodes.push(kind);
        self.parent.push(None.into());
        self.class.push(Some(data));
        n
    }

    /// Record that the block parameter `v` is non-negative as a signed integer.
    pub fn set_nonneg(&mut self, v: Value) {
        self.nonneg[v] = true;
    }

    /// Is class `c` a block parameter known non-negative ([`EGraph::set_nonneg`])?
    pub fn is_nonneg(&self, c: Node) -> bool {
        match self.nodes[self.find_ro(c)] {
            NodeKind::Leaf(v, _) => self.nonneg[v],
            NodeKind::Pure { .. } => false,
        }
    }

    /// Make each class's home the nearest common dominator of the blocks its nodes came
    /// from (`ncd`), so that where a class is placed does not depend on which of its
    /// occurrences was seen first: a second run of the pass finds the same placement.
    pub fn resolve_homes(&mut self, mut ncd: impl FnMut(Block, Block) -> Option<Block>) {
        let pending = core::mem::take(&mut self.pending_homes);
        for &(n, b) in &pending {
            let r = self.find(n);
            let Some(d) = self.class[r].as_mut() else {
                continue;
            };
            d.home = match d.home.expand() {
                None => Some(b),
                Some(h) => ncd(h, b),
            }
            .into();
        }
        self.pending_homes = pending;
        self.pending_homes.clear();
    }

    /// The class of `n` (union-find root), with path halving.
    pub fn find(&mut self, mut n: Node) -> Node {
        while let Some(p) = self.parent[n].expand() {
            if let Some(gp) = self.parent[p].expand() {
                self.parent[n] = gp.into();
            }
            n = p;
        }
        n
    }

    /// The class of `n` without compressing paths.
    pub fn find_ro(&self, mut n: Node) -> Node {
        while let Some(p) = self.parent[n].expand() {
            n = p;
        }
        n
    }

    /// What node `n` is.
    pub fn kind(&self, n: Node) -> &NodeKind {
        &self.nodes[n]
    }

    /// The type of the values of `n`'s class.
    pub fn ty_of(&self, n: Node) -> Type {
        match &self.nodes[n] {
            NodeKind::Leaf(_, ty) => *ty,
            NodeKind::Pure { ty, .. } => *ty,
        }
    }

    fn data(&self, c: Node) -> &ClassData {
        self.class[c].as_ref().expect("class data at a root")
    }

    /// The cheapest node of class `c` (a root) and the cheapest pure one.
    pub fn best(&self, c: Node) -> (Node, Option<Node>) {
        let d = self.data(c);
        (d.best, d.best_pure.expand())
    }

    /// The block the class's first node came from.
    pub fn home(&self, c: Node) -> Option<Block> {
        self.data(c).home.expand()
    }

    /// The leaf class of `v` (a block parameter or a skeleton result), made on first use.
    pub fn leaf(&mut self, v: Value, ty: Type) -> Node {
        if let Some(n) = self.leaves[v].expand() {
            return self.find(n);
        }
        let n = self.nodes.next_key();
        self.push(
            NodeKind::Leaf(v, ty),
            ClassData {
                best: n,
                cost: 0,
                best_pure: None.into(),
                pure_cost: u32::MAX,
                konst: None.into(),
                leaf: n.into(),
                home: None.into(),
                size: 1,
                zeros: 0,
            },
        );
        self.leaves[v] = n.into();
        n
    }

    /// The integer constant of class `c` (a root), zero-extended from its width.
    pub fn iconst(&self, c: Node) -> Option<u64> {
        let k = self.data(self.find_ro(c)).konst.expand()?;
        match &self.nodes[k] {
            NodeKind::Pure {
                data: InstructionData::IntConst { imm },
                ty,
                ..
            } => Some((*imm as u64) & super::rules::mask(ty.bits())),
            _ => None,
        }
    }

    /// The bits known to be zero in class `c`'s value (an integer class; 0 when nothing is
    /// known or the class is not an integer).
    pub fn zeros(&self, c: Node) -> u64 {
        self.data(self.find_ro(c)).zeros
    }

    /// The float constant of class `c` (IEEE bits; an `f32` in the low half).
    pub fn fconst(&self, c: Node) -> Option<u64> {
        let k = self.data(self.find_ro(c)).konst.expand()?;
        match &self.nodes[k] {
            NodeKind::Pure {
                data: InstructionData::FloatConst { bits },
                ..
            } => Some(*bits),
            _ => None,
        }
    }

    /// The operation of the cheapest pure node of class `c`, for rules that look one
    /// level into their operands.
    pub fn def(&self, c: Node) -> Option<(InstructionData, Type)> {
        let d = self.data(self.find_ro(c));
        match &self.nodes[d.best_pure.expand()?] {
            NodeKind::Pure { data, ty, .. } => Some((data.clone(), *ty)),
            NodeKind::Leaf(..) => None,
        }
    }

    /// Add an integer constant of type `ty` (bits taken modulo its width).
    pub fn int(&mut self, ty: Type, bits: u64) -> Node {
        let w = ty.bits();
        let imm = if w >= 64 {
            bits as i64
        } else {
            ((bits << (64 - w)) as i64) >> (64 - w)
        };
        self.add(InstructionData::IntConst { imm }, ty)
    }

    /// The class of an existing node equal to `data` (operands are class ids, flags
    /// included), without inserting one.
    pub fn lookup(&mut self, mut data: InstructionData, ty: Type) -> Option<Node> {
        let key = self.key(&mut data, ty);
        let n = self.find_key(&key)?;
        Some(self.find(n))
    }

    /// Add a node made by a rule (its operands are class ids).
    pub fn add(&mut self, data: InstructionData, ty: Type) -> Node {
        self.insert(data, ty, None)
    }

    /// Insert an e-node for a pure operation (operands are class ids) and apply the
    /// rules to it. Returns its class. `inst` is the input instruction it came from.
    pub fn insert_inst(
        &mut self,
        data: InstructionData,
        ty: Type,
        inst: Inst,
        home: Block,
    ) -> Node {
        self.home = home.into();
        self.depth = 0;
        self.insert(data, ty, Some(inst))
    }

    fn key(&mut self, data: &mut InstructionData, ty: Type) -> (InstructionData, Type) {
        // Canonical operands: class roots.
        for a in pure_args_mut(data) {
            *a = as_value(self.find(as_node(*a)));
        }
        let mut key = data.clone();
        commute(&mut key);
        (key, ty)
    }

    /// The key node `n` was hash-consed under: its operation as stored (operands were
    /// class roots when it was inserted), commutative operands ordered, and its type.
    fn key_of(&self, n: Node) -> Option<(InstructionData, Type)> {
        let NodeKind::Pure { data, ty, .. } = &self.nodes[n] else {
            return None;
        };
        let mut key = data.clone();
        commute(&mut key);
        Some((key, *ty))
    }

    fn find_key(&self, key: &(InstructionData, Type)) -> Option<Node> {
        self.find_key_hashed(key_hash(key), key)
    }

    fn find_key_hashed(&self, hash: u64, key: &(InstructionData, Type)) -> Option<Node> {
        let same = |n: Node| self.key_of(n).as_ref() == Some(key);
        match self.map.get(&hash) {
            Some(&n) if same(n) => Some(n),
            Some(_) => self
                .overflow
                .iter()
                .find(|&&(h, n)| h == hash && same(n))
                .map(|&(_, n)| n),
            None => None,
        }
    }

    /// The node hash-consed under `key` (of hash `hash`), or `None` after recording
    /// `fresh`, the node the caller makes next, under it.
    fn lookup_or_reserve(
        &mut self,
        hash: u64,
        key: &(InstructionData, Type),
        fresh: Node,
    ) -> Option<Node> {
        use std::collections::hash_map::Entry;
        let first = match self.map.entry(hash) {
            Entry::Occupied(e) => *e.get(),
            Entry::Vacant(e) => {
                e.insert(fresh);
                return None;
            }
        };
        let same = |n: Node| self.key_of(n).as_ref() == Some(key);
        if same(first) {
            return Some(first);
        }
        if let Some(&(_, n)) = self.overflow.iter().find(|&&(h, n)| h == hash && same(n)) {
            return Some(n);
        }
        self.overflow.push((hash, fresh));
        None
    }

    fn insert(&mut self, mut data: InstructionData, ty: Type, inst: Option<Inst>) -> Node {
        let key = self.key(&mut data, ty);
        let hash = key_hash(&key);
        // One probe: a miss records the node about to be made (the next id; nothing
        // below makes another before it).
        if let Some(n) = self.lookup_or_reserve(hash, &key, self.nodes.next_key()) {
            self.stats.gvn_hits += 1;
            let r = self.find(n);
            if let Some(h) = self.home.expand() {
                self.pending_homes.push((r, h));
            }
            return r;
        }
        let mut cost = op_cost(&data);
        for &a in pure_args(&data) {
            let c = self.find_ro(as_node(a));
            cost = cost.saturating_add(self.data(c).cost);
        }
        let is_const = matches!(
            data,
            InstructionData::IntConst { .. } | InstructionData::FloatConst { .. }
        );
        let zeros = super::rules::known_zeros(self, &data, ty);
        let n = self.nodes.next_key();
        let kind = NodeKind::Pure {
            data: data.clone(),
            ty,
            inst: inst.into(),
        };
        self.push(
            kind,
            ClassData {
                best: n,
                cost,
                best_pure: n.into(),
                pure_cost: cost,
                konst: if is_const { n.into() } else { None.into() },
                leaf: None.into(),
                home: self.home,
                size: 1,
                zeros,
            },
        );
        debug_assert_eq!(self.find_key_hashed(hash, &key), Some(n), "recorded above");
        if is_const {
            return n;
        }
        if self.depth >= self.limits.rewrite_depth {
            self.stats.stop_depth += 1;
            return n;
        }
        self.depth += 1;
        let op = data.opcode();
        for k in self.rules_of(op) {
            let rule = &RULES[self.rule_idx[k] as usize];
            let root = self.find(n);
            if self.data(root).size >= self.limits.eclass_size {
                self.stats.stop_size += 1;
                break;
            }
            if let Some(r) = (rule.apply)(self, &data, ty) {
                self.stats.fired[rule.family as usize] += 1;
                self.union(root, r);
                let root = self.find(n);
                if self.data(root).konst.is_some() {
                    // A constant is as simple as the class gets.
                    break;
                }
            }
        }
        self.depth -= 1;
        self.find(n)
    }

    /// Apply the rules to an operation that stays in the skeleton unless a rule shows it
    /// equal to something that cannot trap (a division by a known non-zero constant).
    pub fn rewrite_trapping(
        &mut self,
        mut data: InstructionData,
        ty: Type,
        home: Block,
    ) -> Option<Node> {
        self.home = home.into();
        self.depth = 1;
        let _ = self.key(&mut data, ty);
        let op = data.opcode();
        for k in self.rules_of(op) {
            let rule = &RULES[self.rule_idx[k] as usize];
            if let Some(r) = (rule.apply)(self, &data, ty) {
                self.stats.fired[rule.family as usize] += 1;
                return Some(self.find(r));
            }
        }
        None
    }

    /// Join two classes; the merged class keeps the cheapest node of both.
    pub fn union(&mut self, a: Node, b: Node) -> Node {
        let (a, b) = (self.find(a), self.find(b));
        if a == b {
            return a;
        }
        debug_assert_eq!(
            self.ty_of(a),
            self.ty_of(b),
            "union of classes of two types"
        );
        let (da, db) = (*self.data(a), *self.data(b));
        if da.leaf.is_some() && db.leaf.is_some() {
            // Two values the graph does not look into: each is available only where its
            // definition dominates, so neither may stand for the other.
            return a;
        }
        // The older class is the root: its id is what earlier keys hold.
        let (root, other) = if a < b { (a, b) } else { (b, a) };
        let (dr, dother) = if a < b { (da, db) } else { (db, da) };
        let mut m = dr;
        if dother.cost < m.cost {
            m.best = dother.best;
            m.cost = dother.cost;
        }
        if dother.pure_cost < m.pure_cost {
            m.best_pure = dother.best_pure;
            m.pure_cost = dother.pure_cost;
        }
        if m.konst.is_none() {
            m.konst = dother.konst;
        }
        if let Some(k) = m.konst.expand() {
            // A constant is placeable anywhere and needs no operand: whatever else the
            // class holds (`x - x` with `x` defined in one branch only) may not be.
            m.best = k;
            m.best_pure = k.into();
        }
        if m.leaf.is_none() {
            m.leaf = dother.leaf;
        }
        match (m.home.expand(), dother.home.expand()) {
            (None, _) => m.home = dother.home,
            (Some(h), Some(o)) if h != o => self.pending_homes.push((root, o)),
            _ => {}
        }
        m.size = dr.size + dother.size;
        // Both nodes compute the value, so what either shows to be zero is.
        m.zeros = dr.zeros | dother.zeros;
        self.class[root] = Some(m);
        self.class[other] = None;
        self.parent[other] = root.into();
        root
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn graph() -> EGraph {
        EGraph::new(Limits {
            rewrite_depth: 4,
            eclass_size: 8,
        })
    }

    /// Two different keys under one hash (forced: 64-bit hashes do not collide in
    /// practice): the second goes to the overflow list and each is still found.
    #[test]
    fn colliding_hashes_keep_both_keys() {
        let mut g = graph();
        let a = g.add(InstructionData::IntConst { imm: 1 }, Type::I32);
        let b = g.add(InstructionData::IntConst { imm: 2 }, Type::I32);
        assert_ne!(a, b);
        let (ka, kb) = (g.key_of(a).unwrap(), g.key_of(b).unwrap());
        let h = 0x5eed;
        assert!(!g.map.contains_key(&h), "a hash no real key has here");
        assert_eq!(g.lookup_or_reserve(h, &ka, a), None);
        assert_eq!(g.lookup_or_reserve(h, &kb, b), None);
        assert_eq!(g.overflow, vec![(h, b)]);
        assert_eq!(g.lookup_or_reserve(h, &ka, b), Some(a));
        assert_eq!(g.lookup_or_reserve(h, &kb, a), Some(b));
        assert_eq!(g.find_key_hashed(h, &kb), Some(b));
        assert_eq!(g.overflow.len(), 1, "hits add nothing");
    }

    /// Inserting an operation twice gives the first node (one probe per insertion), also
    /// for a commutative one written the other way round.
    #[test]
    fn hash_consing_finds_equal_operations() {
        let mut g = graph();
        let x = g.leaf(Value::new(0), Type::I32);
        let y = g.leaf(Value::new(1), Type::I32);
        let add = |g: &mut EGraph, p: Node, q: Node| {
            g.add(
                InstructionData::Binary {
                    opcode: Opcode::Iadd,
                    args: [as_value(p), as_value(q)],
                    flags: Default::default(),
                },
                Type::I32,
            )
        };
        let s = add(&mut g, x, y);
        let n = g.num_nodes();
        assert_eq!(add(&mut g, y, x), s);
        assert_eq!(g.num_nodes(), n, "no node made for a hit");
        assert_eq!(g.stats.gvn_hits, 1);
        assert!(g.overflow.is_empty());
    }
}
