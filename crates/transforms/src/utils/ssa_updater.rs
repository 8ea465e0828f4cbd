//! An SSA updater on block parameters (LLVM's `SSAUpdater` and `SSAUpdaterBulk`).
//!
//! A pass that duplicates or moves a definition (loop rotation, unswitching, LCSSA: see
//! [`Lcssa`](crate::lcssa::Lcssa), which uses this for its merge parameters) ends
//! up with several definitions of one variable in different blocks. The updater is told
//! the value the variable has at the end of each defining block
//! ([`SsaUpdater::add_available_value`]) and then rewrites uses so that each reads the
//! reaching definition, adding block parameters only where definitions meet.
//!
//! # Algorithm
//!
//! Pruned SSA construction (Cytron et al. 1991, pruned by liveness as in LLVM's
//! `SSAUpdaterBulk` and `PromoteMemToReg`):
//!
//! 1. **Liveness.** A backward walk from the blocks where the variable is read on entry
//!    (the uses not satisfied by a definition earlier in their own block) marks the
//!    blocks where the variable is live on entry; the walk stops at defining blocks.
//!    Reaching the function's entry means some path from the entry reaches a use without
//!    passing a definition: [`SsaUpdateError::NotDominated`].
//! 2. **Placement.** `DF+` of the defining blocks, restricted during the iteration to the
//!    live blocks, gets one new parameter each (sorted by reverse post-order, so numbering
//!    is deterministic). Pruned `DF+` equals `DF+ ∩ live`: a merge block where the
//!    variable is dead would only get a dead parameter (`tests/ssa_updater.rs` checks
//!    the placement against `IdfCalculator` and a fixed-point liveness).
//! 3. **Arguments and uses.** The value at the end of a block is its own definition, else
//!    its new parameter, else the value at the end of its immediate dominator: found by
//!    climbing the dominator tree with an explicit loop, memoised per block. Every edge
//!    into a new parameter (each edge: a `br_table` with several cases to one block gets
//!    the argument on each) passes the value at the end of its source.
//!
//! Queries can also be made one at a time ([`SsaUpdater::value_at_end`],
//! [`SsaUpdater::value_in_middle`], [`SsaUpdater::rewrite_use`]): each extends the live
//! set and places the parameters the new live blocks need. The result is the same as one
//! bulk update over all the queries (parameters placed earlier stay right: a merge block
//! between a definition and an earlier query point would have been live for that query).
//!
//! # Cost
//!
//! [`SsaUpdater::rewrite_uses`] is linear in the uses, the blocks where the variable is
//! live, and the frontiers of the defining and new blocks. A single query that finds new
//! live blocks rescans the frontiers of every defining and parameter block; prefer the
//! bulk entry point for many uses. Per-block state lives in dense arrays stamped with an
//! epoch, so [`SsaUpdater::reset`] is O(1) and buffers are reused across variables and
//! functions.
//!
//! # Analyses
//!
//! The updater only appends block parameters and branch arguments and rewrites operands:
//! the CFG, dominator tree, dominance frontiers and loop forest all stay valid, and the
//! caller's [`SsaContext`] can be reused for the next variable.
//!
//! # Unreachable code
//!
//! Dominance means nothing in blocks the entry cannot reach. Edges from unreachable
//! predecessors into a new parameter, and uses in unreachable blocks, get the *fallback*
//! value: [`SsaUpdater::set_unreachable_value`], by default the first available value.

use core::cmp::Ordering;
use core::fmt;
use gyre_analysis::{Cfg, DomTree, DominanceFrontiers};
use gyre_ir::{Block, EntityRef, Function, Inst, Type, Value, ValueDef};

/// The analyses the updater reads. They must be current for the function being updated
/// (the updater keeps them so: it never changes the CFG).
#[derive(Clone, Copy)]
pub struct SsaContext<'a> {
    /// The control-flow graph.
    pub cfg: &'a Cfg,
    /// The dominator tree.
    pub domtree: &'a DomTree,
    /// The dominance frontiers ([`DominanceFrontiers::compute`]).
    pub frontiers: &'a DominanceFrontiers,
}

impl<'a> SsaContext<'a> {
    /// Bundle the analyses.
    pub fn new(cfg: &'a Cfg, domtree: &'a DomTree, frontiers: &'a DominanceFrontiers) -> Self {
        SsaContext {
            cfg,
            domtree,
            frontiers,
        }
    }
}

/// Why an update failed. After an error the updater must be [`SsaUpdater::reset`]; the
/// function is unchanged unless the analyses were stale.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SsaUpdateError {
    /// A query was made before any value was made available.
    NoAvailableValue,
    /// The variable is read in `block` (on entry, or at its end) but some path from the
    /// function's entry reaches that point without passing a definition.
    NotDominated {
        /// The block whose value was asked for.
        block: Block,
    },
    /// The using instruction is not in the layout.
    NotInLayout {
        /// The instruction.
        inst: Inst,
    },
    /// A predecessor of a block that needs a new parameter has no terminator.
    NoTerminator {
        /// The predecessor.
        block: Block,
    },
    /// A value was made available after the first query (parameters already placed could
    /// be wrong).
    LateAvailableValue {
        /// The block of the late definition.
        block: Block,
    },
    /// The analyses are not computed, or not for this function (the CFG knows blocks the
    /// function does not have).
    StaleAnalyses,
}

impl fmt::Display for SsaUpdateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SsaUpdateError::NoAvailableValue => write!(f, "no available value for the variable"),
            SsaUpdateError::NotDominated { block } => write!(
                f,
                "no definition of the variable dominates its use in {block}: not valid SSA"
            ),
            SsaUpdateError::NotInLayout { inst } => write!(f, "{inst} is not in the layout"),
            SsaUpdateError::NoTerminator { block } => {
                write!(f, "{block} is a predecessor but has no terminator")
            }
            SsaUpdateError::LateAvailableValue { block } => {
                write!(f, "value made available in {block} after the first query")
            }
            SsaUpdateError::StaleAnalyses => {
                write!(f, "the analyses do not describe the function")
            }
        }
    }
}

impl std::error::Error for SsaUpdateError {}

/// Per-block flags of the current variable.
const DEF: u8 = 1;
const LIVE: u8 = 2;
const PHI: u8 = 4;

/// Rewrites uses of one variable with several definitions into SSA form on block
/// parameters. See the [module documentation](self).
///
/// Usage: [`reset`](Self::reset) with the variable's type, one
/// [`add_available_value`](Self::add_available_value) per defining block, then queries or
/// [`rewrite_uses`](Self::rewrite_uses). Every available value must have type `ty`.
pub struct SsaUpdater {
    ty: Type,
    /// Generation of `flags`/`def`/`phi`: a block's entries hold for this variable only if
    /// `stamp[b] == epoch`.
    epoch: u32,
    stamp: Vec<u32>,
    flags: Vec<u8>,
    /// The available value at the end of a `DEF` block.
    def: Vec<Value>,
    /// The new parameter of a `PHI` block.
    phi: Vec<Value>,
    /// The value at the end of a block without its own definition, once climbed to.
    memo_stamp: Vec<u32>,
    memo: Vec<Value>,
    /// Distinct predecessors of one block (a generation per block).
    pred_mark: Vec<u32>,
    pred_stamp: u32,
    defs: Vec<Block>,
    params: Vec<(Block, Value)>,
    fallback: Option<Value>,
    sealed: bool,
    late: Option<Block>,
    /// Blocks to mark live on entry at the next flush.
    seeds: Vec<Block>,
    stack: Vec<Block>,
    new_phis: Vec<Block>,
    chain: Vec<Block>,
}

impl Default for SsaUpdater {
    fn default() -> Self {
        SsaUpdater {
            ty: Type::I32,
            epoch: 0,
            stamp: Vec::new(),
            flags: Vec::new(),
            def: Vec::new(),
            phi: Vec::new(),
            memo_stamp: Vec::new(),
            memo: Vec::new(),
            pred_mark: Vec::new(),
            pred_stamp: 0,
            defs: Vec::new(),
            params: Vec::new(),
            fallback: None,
            sealed: false,
            late: None,
            seeds: Vec::new(),
            stack: Vec::new(),
            new_phis: Vec::new(),
            chain: Vec::new(),
        }
    }
}

impl SsaUpdater {
    /// An updater with empty buffers, ready for [`reset`](Self::reset).
    pub fn new() -> Self {
        Self::default()
    }

    /// Start a new variable of type `ty` (forgets the previous one; keeps the buffers).
    pub fn reset(&mut self, ty: Type) {
        self.ty = ty;
        if self.epoch == u32::MAX {
            self.stamp.iter_mut().for_each(|s| *s = 0);
            self.memo_stamp.iter_mut().for_each(|s| *s = 0);
            self.epoch = 0;
        }
        self.epoch += 1;
        self.defs.clear();
        self.params.clear();
        self.fallback = None;
        self.sealed = false;
        self.late = None;
        self.seeds.clear();
    }

    /// The type of the current variable.
    pub fn ty(&self) -> Type {
        self.ty
    }

    /// The variable has value `value` at the end of `block` (replacing an earlier value
    /// for the same block). All values must be added before the first query.
    pub fn add_available_value(&mut self, block: Block, value: Value) {
        if self.sealed {
            self.late.get_or_insert(block);
            return;
        }
        self.grow(block.index() + 1);
        if self.flags(block) & DEF == 0 {
            self.set_flag(block, DEF);
            self.defs.push(block);
        }
        self.def[block.index()] = value;
    }

    /// Has a value been made available at the end of `block`?
    pub fn has_value_for_block(&self, block: Block) -> bool {
        self.flags(block) & DEF != 0
    }

    /// The value given to uses in unreachable blocks and passed from unreachable
    /// predecessors (default: the first available value).
    pub fn set_unreachable_value(&mut self, value: Value) {
        self.fallback = Some(value);
    }

    /// The parameters added since [`reset`](Self::reset), in creation order: `(block,
    /// parameter)`.
    pub fn new_params(&self) -> &[(Block, Value)] {
        &self.params
    }

    /// The value of the variable at the end of `block` (LLVM's `GetValueAtEndOfBlock`),
    /// adding the parameters needed for it.
    pub fn value_at_end(
        &mut self,
        func: &mut Function,
        cx: &SsaContext<'_>,
        block: Block,
    ) -> Result<Value, SsaUpdateError> {
        self.begin(func, cx)?;
        if self.flags(block) & DEF != 0 {
            return Ok(self.def[block.index()]);
        }
        if !cx.cfg.is_reachable(block) {
            return Ok(self.fallback_value());
        }
        self.seeds.push(block);
        self.flush(func, cx)?;
        self.end_value(block, cx)
    }

    /// The value of the variable on entry to `block` (LLVM's `GetValueInMiddleOfBlock`):
    /// what a use in `block` reads when the block has no definition of its own, or when
    /// its definition comes after the use.
    pub fn value_in_middle(
        &mut self,
        func: &mut Function,
        cx: &SsaContext<'_>,
        block: Block,
    ) -> Result<Value, SsaUpdateError> {
        self.begin(func, cx)?;
        if !cx.cfg.is_reachable(block) {
            return Ok(self.fallback_value());
        }
        self.seeds.push(block);
        self.flush(func, cx)?;
        self.entry_value(block, cx)
    }

    /// [`value_in_middle`](Self::value_in_middle) of every block of `blocks` (repeats
    /// allowed), appended to `out` in the same order, with one liveness walk and one
    /// placement for all of them (what promoting a memory location's loads needs: a
    /// per-block query would rescan the frontiers of every definition each time).
    pub fn values_in_middle(
        &mut self,
        func: &mut Function,
        cx: &SsaContext<'_>,
        blocks: &[Block],
        out: &mut Vec<Value>,
    ) -> Result<(), SsaUpdateError> {
        self.begin(func, cx)?;
        self.seeds
            .extend(blocks.iter().copied().filter(|&b| cx.cfg.is_reachable(b)));
        self.flush(func, cx)?;
        for &b in blocks {
            let v = if cx.cfg.is_reachable(b) {
                self.entry_value(b, cx)?
            } else {
                self.fallback_value()
            };
            out.push(v);
        }
        Ok(())
    }

    /// The value a use by `inst` reads:
    /// - for a terminator (its operands and branch arguments alike), the value at the end
    ///   of its block;
    /// - otherwise, the block's available value if that is defined in the block before
    ///   `inst` (a parameter of the block, or an earlier instruction), else the value on
    ///   entry to the block (an available value defined elsewhere counts as defined at the
    ///   end of the block).
    pub fn use_value(
        &mut self,
        func: &mut Function,
        cx: &SsaContext<'_>,
        inst: Inst,
    ) -> Result<Value, SsaUpdateError> {
        self.begin(func, cx)?;
        let b = func
            .layout
            .inst_block(inst)
            .ok_or(SsaUpdateError::NotInLayout { inst })?;
        if is_terminator(func, inst) {
            self.value_at_end(func, cx, b)
        } else if self.defined_before(func, b, inst) {
            Ok(self.def[b.index()])
        } else {
            self.value_in_middle(func, cx, b)
        }
    }

    /// Rewrite the operands of `inst` equal to `old` (branch arguments included) to the
    /// value the use reads ([`use_value`](Self::use_value)). Returns whether anything
    /// changed.
    pub fn rewrite_use(
        &mut self,
        func: &mut Function,
        cx: &SsaContext<'_>,
        inst: Inst,
        old: Value,
    ) -> Result<bool, SsaUpdateError> {
        let mut uses = false;
        func.dfg.for_each_inst_value(inst, |v| uses |= v == old);
        if !uses {
            return Ok(false);
        }
        let w = self.use_value(func, cx, inst)?;
        if w == old {
            return Ok(false);
        }
        func.dfg
            .map_inst_values(inst, |x| if x == old { w } else { x });
        Ok(true)
    }

    /// Rewrite the uses of `old` by every instruction of `insts` at once (LLVM's
    /// `SSAUpdaterBulk::RewriteAllUses`): one liveness walk and one placement for all of
    /// them. Repeats in `insts` are harmless. Returns the number of instructions changed.
    pub fn rewrite_uses(
        &mut self,
        func: &mut Function,
        cx: &SsaContext<'_>,
        insts: &[Inst],
        old: Value,
    ) -> Result<usize, SsaUpdateError> {
        self.begin(func, cx)?;
        for &inst in insts {
            let b = func
                .layout
                .inst_block(inst)
                .ok_or(SsaUpdateError::NotInLayout { inst })?;
            if !cx.cfg.is_reachable(b) {
                continue;
            }
            let reads_entry = if is_terminator(func, inst) {
                self.flags(b) & DEF == 0
            } else {
                !self.defined_before(func, b, inst)
            };
            if reads_entry {
                self.seeds.push(b);
            }
        }
        self.flush(func, cx)?;
        let mut changed = 0;
        for &inst in insts {
            changed += usize::from(self.rewrite_use(func, cx, inst, old)?);
        }
        Ok(changed)
    }

    // ---- internals ----

    fn flags(&self, b: Block) -> u8 {
        match self.stamp.get(b.index()) {
            Some(&s) if s == self.epoch => self.flags[b.index()],
            _ => 0,
        }
    }

    fn set_flag(&mut self, b: Block, f: u8) {
        let i = b.index();
        if self.stamp[i] != self.epoch {
            self.stamp[i] = self.epoch;
            self.flags[i] = 0;
        }
        self.flags[i] |= f;
    }

    fn grow(&mut self, n: usize) {
        if self.stamp.len() < n {
            let zero = Value::new(0);
            self.stamp.resize(n, 0);
            self.flags.resize(n, 0);
            self.def.resize(n, zero);
            self.phi.resize(n, zero);
            self.memo_stamp.resize(n, 0);
            self.memo.resize(n, zero);
            self.pred_mark.resize(n, 0);
        }
    }

    /// Checks common to every query; the first query seals the definitions.
    fn begin(&mut self, func: &Function, cx: &SsaContext<'_>) -> Result<(), SsaUpdateError> {
        let slots = cx.cfg.num_block_slots();
        if !(cx.cfg.is_valid() && cx.domtree.is_valid() && cx.frontiers.is_valid())
            || slots > func.dfg.num_blocks()
        {
            return Err(SsaUpdateError::StaleAnalyses);
        }
        if let Some(block) = self.late {
            return Err(SsaUpdateError::LateAvailableValue { block });
        }
        if self.defs.is_empty() {
            return Err(SsaUpdateError::NoAvailableValue);
        }
        self.grow(func.dfg.num_blocks());
        self.sealed = true;
        Ok(())
    }

    fn fallback_value(&self) -> Value {
        self.fallback.unwrap_or(self.def[self.defs[0].index()])
    }

    /// Is `b`'s available value defined in `b` before `inst`?
    fn defined_before(&self, func: &Function, b: Block, inst: Inst) -> bool {
        if self.flags(b) & DEF == 0 {
            return false;
        }
        match func.dfg.value_def(self.def[b.index()]) {
            ValueDef::Param(pb, _) => pb == b,
            ValueDef::Result(d) => {
                func.layout.inst_block(d) == Some(b)
                    && func.layout.pp_cmp(d, inst) == Ordering::Less
            }
            ValueDef::Detached => false,
        }
    }

    /// Mark the seeds and the blocks before them live on entry, then place and wire the
    /// parameters the newly live blocks need.
    fn flush(&mut self, func: &mut Function, cx: &SsaContext<'_>) -> Result<(), SsaUpdateError> {
        let cfg = cx.cfg;
        let mut fresh = false;
        while let Some(seed) = self.seeds.pop() {
            // The seed reads the variable on entry even if it defines it later.
            if self.flags(seed) & LIVE != 0 || !cfg.is_reachable(seed) {
                continue;
            }
            self.stack.clear();
            self.stack.push(seed);
            let mut first = true;
            while let Some(x) = self.stack.pop() {
                let f = self.flags(x);
                if f & LIVE != 0 || (!first && f & DEF != 0) {
                    continue;
                }
                first = false;
                if cfg.entry() == Some(x) {
                    self.seeds.clear();
                    return Err(SsaUpdateError::NotDominated { block: seed });
                }
                self.set_flag(x, LIVE);
                fresh = true;
                self.stack.extend(
                    cfg.preds(x)
                        .iter()
                        .copied()
                        .filter(|&p| cfg.is_reachable(p)),
                );
            }
        }
        if !fresh {
            return Ok(());
        }

        // Pruned DF+ of the definitions (and of the parameters placed so far, which
        // belong to it), restricted to live blocks.
        self.stack.clear();
        self.stack.extend_from_slice(&self.defs);
        self.stack.extend(self.params.iter().map(|&(b, _)| b));
        self.new_phis.clear();
        while let Some(x) = self.stack.pop() {
            for &y in cx.frontiers.frontier(x) {
                let f = self.flags(y);
                if f & LIVE != 0 && f & PHI == 0 {
                    self.set_flag(y, PHI);
                    self.new_phis.push(y);
                    if f & DEF == 0 {
                        self.stack.push(y);
                    }
                }
            }
        }
        if self.new_phis.is_empty() {
            return Ok(());
        }
        self.new_phis.sort_unstable_by_key(|&b| cfg.rpo_number(b));
        for k in 0..self.new_phis.len() {
            let y = self.new_phis[k];
            let p = func.dfg.append_block_param(y, self.ty);
            self.phi[y.index()] = p;
            self.params.push((y, p));
        }
        // One argument per edge into each new parameter.
        for k in 0..self.new_phis.len() {
            let y = self.new_phis[k];
            self.next_pred_stamp();
            for &p in cfg.preds(y) {
                if self.pred_mark[p.index()] == self.pred_stamp {
                    continue;
                }
                self.pred_mark[p.index()] = self.pred_stamp;
                let arg = if cfg.is_reachable(p) {
                    self.end_value(p, cx)?
                } else {
                    self.fallback_value()
                };
                let t = func
                    .terminator(p)
                    .ok_or(SsaUpdateError::NoTerminator { block: p })?;
                func.dfg.for_each_dest_mut(t, |bc, pool| {
                    if bc.block == y {
                        bc.args.push(arg, pool);
                    }
                });
            }
        }
        Ok(())
    }

    fn next_pred_stamp(&mut self) {
        if self.pred_stamp == u32::MAX {
            self.pred_mark.iter_mut().for_each(|s| *s = 0);
            self.pred_stamp = 0;
        }
        self.pred_stamp += 1;
    }

    /// The value on entry to reachable `b`, once the live set covers it.
    fn entry_value(&mut self, b: Block, cx: &SsaContext<'_>) -> Result<Value, SsaUpdateError> {
        if self.flags(b) & PHI != 0 {
            return Ok(self.phi[b.index()]);
        }
        match cx.domtree.idom(b) {
            Some(i) => self.end_value_from(i, b, cx),
            None => Err(SsaUpdateError::NotDominated { block: b }),
        }
    }

    /// The value at the end of reachable `b`, once the live set covers it.
    fn end_value(&mut self, b: Block, cx: &SsaContext<'_>) -> Result<Value, SsaUpdateError> {
        self.end_value_from(b, b, cx)
    }

    /// Climb the dominator tree from `start` to the nearest block with a definition or a
    /// new parameter, memoising the answer on every block passed. `asked` is for errors.
    fn end_value_from(
        &mut self,
        start: Block,
        asked: Block,
        cx: &SsaContext<'_>,
    ) -> Result<Value, SsaUpdateError> {
        self.chain.clear();
        let mut x = start;
        let r = loop {
            let i = x.index();
            let f = self.flags(x);
            if f & DEF != 0 {
                break self.def[i];
            }
            if f & PHI != 0 {
                break self.phi[i];
            }
            if self.memo_stamp[i] == self.epoch {
                break self.memo[i];
            }
            self.chain.push(x);
            match cx.domtree.idom(x) {
                Some(up) => x = up,
                None => return Err(SsaUpdateError::NotDominated { block: asked }),
            }
        };
        for &c in &self.chain {
            self.memo_stamp[c.index()] = self.epoch;
            self.memo[c.index()] = r;
        }
        Ok(r)
    }
}

fn is_terminator(func: &Function, inst: Inst) -> bool {
    func.dfg.inst(inst).opcode().is_terminator()
}

#[cfg(test)]
mod tests {
    use super::*;
    use gyre_ir::{parse_function, verifier::verify_function, write_function};
    use std::fmt::Write as _;

    struct Analyses {
        cfg: Cfg,
        dt: DomTree,
        df: DominanceFrontiers,
    }

    impl Analyses {
        fn of(f: &Function) -> Analyses {
            let cfg = Cfg::with_function(f).expect("valid cfg");
            let dt = DomTree::with_function(f, &cfg);
            let mut df = DominanceFrontiers::new();
            df.compute(f, &cfg, &dt);
            Analyses { cfg, dt, df }
        }

        fn cx(&self) -> SsaContext<'_> {
            SsaContext::new(&self.cfg, &self.dt, &self.df)
        }
    }

    fn v(n: u32) -> Value {
        Value::from_u32(n)
    }

    fn b(n: u32) -> Block {
        Block::from_u32(n)
    }

    fn text(f: &Function) -> String {
        let mut s = String::new();
        write_function(&mut s, f, None).expect("writes");
        s
    }

    /// The instructions of `f` that use `old`, in layout order.
    fn users(f: &Function, old: Value) -> Vec<Inst> {
        let mut out = Vec::new();
        for bl in f.layout.blocks() {
            for i in f.layout.block_insts(bl) {
                let mut uses = false;
                f.dfg.for_each_inst_value(i, |x| uses |= x == old);
                if uses {
                    out.push(i);
                }
            }
        }
        out
    }

    /// Parse `src`, make `defs` available, rewrite every use of `old` in bulk; returns the
    /// function, the updater and the number of instructions changed.
    fn bulk(src: &str, old: Value, defs: &[(u32, u32)]) -> (Function, SsaUpdater, usize) {
        let mut f = parse_function(src).expect("parses");
        let an = Analyses::of(&f);
        let mut up = SsaUpdater::new();
        up.reset(f.dfg.value_type(old));
        for &(bl, val) in defs {
            up.add_available_value(b(bl), v(val));
        }
        let uses = users(&f, old);
        let n = up
            .rewrite_uses(&mut f, &an.cx(), &uses, old)
            .expect("updates");
        (f, up, n)
    }

    fn expect_text(f: &Function, expected: &str) {
        verify_function(f, None).expect("verifies");
        assert_eq!(text(f), expected);
    }

    const DIAMOND: &str = "func @f(i32) -> i32 {
block0(v0: i32):
    v1 = icmp slt v0, v0
    brif v1, block1, block2
block1:
    v2 = iadd v0, v0
    jump block3
block2:
    v3 = imul v0, v0
    jump block3
block3:
    v4 = iadd v2, v0
    return v4
}
";

    #[test]
    fn diamond_with_a_definition_in_each_arm_gets_a_parameter_at_the_join() {
        let (f, up, n) = bulk(DIAMOND, v(2), &[(1, 2), (2, 3)]);
        assert_eq!(n, 1);
        assert_eq!(up.new_params(), &[(b(3), v(5))]);
        expect_text(
            &f,
            "func @f(i32) -> i32 {
block0(v0: i32):
    v1 = icmp slt v0, v0
    brif v1, block1, block2
block1:
    v2 = iadd v0, v0
    jump block3(v2)
block2:
    v3 = imul v0, v0
    jump block3(v3)
block3(v5: i32):
    v4 = iadd v5, v0
    return v4
}
",
        );
    }

    #[test]
    fn one_dominating_definition_needs_no_parameter() {
        // Both arms see v0's definition in block0; the other definition (block1) does
        // not reach the use in block2 at all.
        let src = "func @f(i32) -> i32 {
block0(v0: i32):
    v1 = icmp slt v0, v0
    brif v1, block1, block2
block1:
    v2 = iadd v0, v0
    return v2
block2:
    v3 = iadd v0, v0
    return v3
}
";
        let (f, up, n) = bulk(src, v(0), &[(0, 0), (1, 2)]);
        assert!(up.new_params().is_empty());
        // block1's own use of v0 precedes its definition (v2): it reads v0.
        assert_eq!(n, 0);
        expect_text(&f, src);
    }

    const LOOP: &str = "func @f(i32) -> i32 {
block0(v0: i32):
    v1 = iconst.i32 1
    jump block1
block1:
    v2 = icmp slt v1, v0
    brif v2, block2, block3
block2:
    v3 = iadd v1, v1
    v4 = imul v1, v0
    jump block1
block3:
    return v1
}
";

    #[test]
    fn value_redefined_in_a_loop_gets_a_header_parameter() {
        // v1 before the loop, v3 in the body: the header merges them. In block2 the use
        // by v3 itself comes before the redefinition (the header's value); v4 comes
        // after it (v3).
        let (f, up, n) = bulk(LOOP, v(1), &[(0, 1), (2, 3)]);
        assert_eq!(up.new_params(), &[(b(1), v(5))]);
        assert_eq!(n, 4);
        expect_text(
            &f,
            "func @f(i32) -> i32 {
block0(v0: i32):
    v1 = iconst.i32 1
    jump block1(v1)
block1(v5: i32):
    v2 = icmp slt v5, v0
    brif v2, block2, block3
block2:
    v3 = iadd v5, v5
    v4 = imul v3, v0
    jump block1(v3)
block3:
    return v5
}
",
        );
    }

    #[test]
    fn single_queries_agree_with_the_bulk_update() {
        let mut f = parse_function(LOOP).expect("parses");
        let an = Analyses::of(&f);
        let cx = an.cx();
        let mut up = SsaUpdater::new();
        up.reset(Type::I32);
        up.add_available_value(b(0), v(1));
        up.add_available_value(b(2), v(3));
        // The exit reads the header's value, which needs the header parameter.
        assert_eq!(up.value_at_end(&mut f, &cx, b(3)), Ok(v(5)));
        assert_eq!(up.value_at_end(&mut f, &cx, b(2)), Ok(v(3)));
        assert_eq!(up.value_in_middle(&mut f, &cx, b(2)), Ok(v(5)));
        assert_eq!(up.value_at_end(&mut f, &cx, b(0)), Ok(v(1)));
        assert_eq!(up.value_in_middle(&mut f, &cx, b(1)), Ok(v(5)));
        assert_eq!(up.new_params().len(), 1);
        for i in users(&f, v(1)) {
            up.rewrite_use(&mut f, &cx, i, v(1)).expect("rewrites");
        }
        let (g, _, _) = bulk(LOOP, v(1), &[(0, 1), (2, 3)]);
        assert_eq!(text(&f), text(&g));
    }

    #[test]
    fn bulk_entry_values_agree_with_single_queries() {
        // In order and with a repeat, in one call, then one at a time on a fresh copy:
        // the same values and the same parameters.
        let blocks = [b(2), b(3), b(1), b(2)];
        let mut f = parse_function(LOOP).expect("parses");
        let an = Analyses::of(&f);
        let mut up = SsaUpdater::new();
        up.reset(Type::I32);
        up.add_available_value(b(0), v(1));
        up.add_available_value(b(2), v(3));
        let mut bulk_vals = Vec::new();
        up.values_in_middle(&mut f, &an.cx(), &blocks, &mut bulk_vals)
            .expect("updates");
        let bulk_params = up.new_params().to_vec();
        let mut g = parse_function(LOOP).expect("parses");
        let mut one = SsaUpdater::new();
        one.reset(Type::I32);
        one.add_available_value(b(0), v(1));
        one.add_available_value(b(2), v(3));
        let single: Vec<Value> = blocks
            .iter()
            .map(|&x| one.value_in_middle(&mut g, &an.cx(), x).expect("updates"))
            .collect();
        assert_eq!(bulk_vals, single);
        assert_eq!(bulk_vals, [v(5), v(5), v(5), v(5)]);
        assert_eq!(bulk_params, one.new_params());
        assert_eq!(text(&f), text(&g));
    }

    #[test]
    fn later_queries_add_the_parameters_they_need() {
        // The first query (the end of a defining block) needs nothing; the second, at
        // the join, needs a parameter there.
        let mut f = parse_function(DIAMOND).expect("parses");
        let an = Analyses::of(&f);
        let cx = an.cx();
        let mut up = SsaUpdater::new();
        up.reset(Type::I32);
        up.add_available_value(b(1), v(2));
        up.add_available_value(b(2), v(3));
        assert_eq!(up.value_at_end(&mut f, &cx, b(1)), Ok(v(2)));
        assert!(up.new_params().is_empty());
        assert_eq!(up.value_in_middle(&mut f, &cx, b(3)), Ok(v(5)));
        assert_eq!(up.value_at_end(&mut f, &cx, b(3)), Ok(v(5)));
        assert_eq!(up.new_params(), &[(b(3), v(5))]);
        let t = f.terminator(b(2)).expect("terminator");
        let mut args = Vec::new();
        f.dfg
            .for_each_dest(t, |bc| args.extend_from_slice(f.dfg.block_call_args(bc)));
        assert_eq!(args, [v(3)]);
    }

    #[test]
    fn br_table_with_two_edges_to_one_block_gets_the_argument_on_each() {
        let src = "func @f(i32) -> i32 {
block0(v0: i32):
    v1 = iconst.i32 1
    br_table v0, block3, [0: block2, 1: block3, 2: block2]
block2:
    v3 = iadd v1, v1
    jump block3
block3:
    return v1
}
";
        let (f, up, n) = bulk(src, v(1), &[(0, 1), (2, 3)]);
        assert_eq!(n, 1);
        assert_eq!(up.new_params(), &[(b(3), v(4))]);
        expect_text(
            &f,
            "func @f(i32) -> i32 {
block0(v0: i32):
    v1 = iconst.i32 1
    br_table v0, block3(v1), [0: block2, 1: block3(v1), 2: block2]
block2:
    v3 = iadd v1, v1
    jump block3(v3)
block3(v4: i32):
    return v4
}
",
        );
    }

    #[test]
    fn merge_of_a_merge_and_a_definition_in_the_block_itself() {
        // block3 joins the arms and its own back edge (a parameter) and redefines the
        // variable after a use there; block4 reads the redefinition.
        let src = "func @f(i32) -> i32 {
block0(v0: i32):
    v1 = icmp slt v0, v0
    brif v1, block1, block2
block1:
    v2 = iadd v0, v0
    jump block3
block2:
    v3 = imul v0, v0
    jump block3
block3:
    v4 = iadd v2, v0
    v5 = isub v4, v0
    brif v1, block3, block4
block4:
    return v2
}
";
        let (f, up, _) = bulk(src, v(2), &[(1, 2), (2, 3), (3, 5)]);
        assert_eq!(up.new_params(), &[(b(3), v(6))]);
        expect_text(
            &f,
            "func @f(i32) -> i32 {
block0(v0: i32):
    v1 = icmp slt v0, v0
    brif v1, block1, block2
block1:
    v2 = iadd v0, v0
    jump block3(v2)
block2:
    v3 = imul v0, v0
    jump block3(v3)
block3(v6: i32):
    v4 = iadd v6, v0
    v5 = isub v4, v0
    brif v1, block3(v5), block4
block4:
    return v5
}
",
        );
    }

    #[test]
    fn unreachable_predecessor_passes_the_fallback() {
        let src = "func @f(i32) -> i32 {
block0(v0: i32):
    v1 = icmp slt v0, v0
    brif v1, block1, block2
block1:
    v2 = iadd v0, v0
    jump block3
block2:
    v3 = imul v0, v0
    jump block3
block4:
    jump block3
block3:
    return v2
}
";
        let mut f = parse_function(src).expect("parses");
        let an = Analyses::of(&f);
        let mut up = SsaUpdater::new();
        up.reset(Type::I32);
        up.add_available_value(b(1), v(2));
        up.add_available_value(b(2), v(3));
        up.set_unreachable_value(v(0));
        let uses = users(&f, v(2));
        up.rewrite_uses(&mut f, &an.cx(), &uses, v(2)).expect("ok");
        verify_function(&f, None).expect("verifies");
        let s = text(&f);
        assert!(s.contains("block4:\n    jump block3(v0)"), "{s}");
        assert!(s.contains("block3(v4: i32):\n    return v4"), "{s}");
    }

    #[test]
    fn use_reached_without_a_definition_is_an_error() {
        // block0 reaches block3 through block2 without passing block1's definition.
        let mut f = parse_function(DIAMOND).expect("parses");
        let before = text(&f);
        let an = Analyses::of(&f);
        let mut up = SsaUpdater::new();
        up.reset(Type::I32);
        up.add_available_value(b(1), v(2));
        let uses = users(&f, v(2));
        let e = up.rewrite_uses(&mut f, &an.cx(), &uses, v(2)).unwrap_err();
        assert_eq!(e, SsaUpdateError::NotDominated { block: b(3) });
        assert!(e.to_string().contains("not valid SSA"), "{e}");
        assert_eq!(text(&f), before, "nothing changed");
        // Asking for the value on entry to the function is the same error.
        up.reset(Type::I32);
        up.add_available_value(b(0), v(1));
        assert_eq!(
            up.value_in_middle(&mut f, &an.cx(), b(0)),
            Err(SsaUpdateError::NotDominated { block: b(0) })
        );
    }

    #[test]
    fn misuse_is_a_typed_error() {
        let mut f = parse_function(DIAMOND).expect("parses");
        let an = Analyses::of(&f);
        let mut up = SsaUpdater::new();
        up.reset(Type::I32);
        assert_eq!(
            up.value_at_end(&mut f, &an.cx(), b(3)),
            Err(SsaUpdateError::NoAvailableValue)
        );
        up.add_available_value(b(1), v(2));
        assert_eq!(up.value_at_end(&mut f, &an.cx(), b(1)), Ok(v(2)));
        up.add_available_value(b(2), v(3));
        assert_eq!(
            up.value_at_end(&mut f, &an.cx(), b(3)),
            Err(SsaUpdateError::LateAvailableValue { block: b(2) })
        );
        let stale = DominanceFrontiers::new();
        assert_eq!(
            up.value_at_end(&mut f, &SsaContext::new(&an.cfg, &an.dt, &stale), b(3)),
            Err(SsaUpdateError::StaleAnalyses)
        );
        let detached = f
            .dfg
            .make_inst(gyre_ir::InstructionData::IntConst { imm: 0 });
        up.reset(Type::I32);
        up.add_available_value(b(1), v(2));
        assert_eq!(
            up.rewrite_uses(&mut f, &an.cx(), &[detached], v(2)),
            Err(SsaUpdateError::NotInLayout { inst: detached })
        );
    }

    #[test]
    fn long_chain_and_deep_dominator_tree_need_no_recursion() {
        // block0 -> block1 -> ... -> blockN, a definition in block0 and one half-way, a
        // back edge from the end to the half-way block: one parameter there.
        let n = 100_000u32;
        let mut s = String::from("func @f(i32) -> i32 {\nblock0(v0: i32):\n    jump block1\n");
        let half = n / 2;
        for k in 1..n {
            if k == half {
                let _ = writeln!(
                    s,
                    "block{k}:\n    v1 = iadd v0, v0\n    jump block{}",
                    k + 1
                );
            } else {
                let _ = writeln!(s, "block{k}:\n    jump block{}", k + 1);
            }
        }
        let _ = writeln!(
            s,
            "block{n}:\n    v2 = icmp slt v0, v0\n    brif v2, block{}, block{}",
            half - 1,
            n + 1
        );
        let _ = writeln!(s, "block{}:\n    return v0\n}}", n + 1);
        let mut f = parse_function(&s).expect("parses");
        let an = Analyses::of(&f);
        let mut up = SsaUpdater::new();
        up.reset(Type::I32);
        up.add_available_value(b(0), v(0));
        up.add_available_value(b(half), v(1));
        let uses = users(&f, v(0));
        up.rewrite_uses(&mut f, &an.cx(), &uses, v(0)).expect("ok");
        assert_eq!(up.new_params(), &[(b(half - 1), v(3))]);
        let ret = f.terminator(b(n + 1)).expect("return");
        assert_eq!(f.dfg.inst_args(ret), [v(1)]);
    }
}
