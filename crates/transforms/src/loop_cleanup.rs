//! Pieces shared by `loop-deletion` and `loop-simplifycfg`: integer constant folding of
//! one instruction, folding a terminator whose target is decided, and removing the
//! blocks no longer reachable from the entry.

use crate::analyses::Analyses;
use gyre_analysis::{AnalysisCache, Cfg, Loop, LoopInfo};
use gyre_ir::{Block, BlockCall, Function, Inst, InstructionData, IntCC, Opcode, Type, Value};
use gyre_ir::{EntityRef, ValueDef};

/// `x` masked to the width of `ty`.
pub(crate) fn mask(x: u64, ty: Type) -> u64 {
    match ty.bits() {
        b if b >= 64 => x,
        b => x & ((1u64 << b) - 1),
    }
}

/// `x` (masked to the width of `ty`) sign-extended to 64 bits.
pub(crate) fn sext(x: u64, ty: Type) -> i64 {
    let b = ty.bits();
    if b >= 64 {
        x as i64
    } else {
        ((x << (64 - b)) as i64) >> (64 - b)
    }
}

/// The integer constant `v` is defined as (an `iconst`), as bits of its width.
pub(crate) fn const_int(func: &Function, v: Value) -> Option<u64> {
    match func.dfg.value_def(v) {
        ValueDef::Result(i) => match func.dfg.inst(i) {
            InstructionData::IntConst { imm } => Some(mask(*imm as u64, func.dfg.value_type(v))),
            _ => None,
        },
        _ => None,
    }
}

/// The value of the integer instruction `i` when its operands' values are given by
/// `known` (bits of their width), or `None` when they are not all known or `i` is not an
/// operation evaluated here. Only operations that cannot trap are evaluated, so the
/// result holds wherever `i` executes with those operands.
pub(crate) fn eval_int(
    func: &Function,
    i: Inst,
    known: impl Fn(Value) -> Option<u64>,
) -> Option<u64> {
    let r = func.dfg.inst_result(i)?;
    let ty = func.dfg.value_type(r);
    if !ty.is_int() {
        return None;
    }
    // An operand is known, or is a `select` of two known values: evaluate every
    // combination and keep the result if they all agree (`icmp ugt (select c, -128, 1), 0`
    // is true whatever `c` is, as LLVM's instruction simplifier finds).
    let alts = |v: Value| -> Option<[u64; 2]> {
        if let Some(c) = known(v) {
            return Some([c, c]);
        }
        let ValueDef::Result(d) = func.dfg.value_def(v) else {
            return None;
        };
        match *func.dfg.inst(d) {
            InstructionData::Ternary {
                opcode: Opcode::Select,
                args,
            } => Some([known(args[1])?, known(args[2])?]),
            _ => None,
        }
    };
    let agree = |a: [u64; 2], b: [u64; 2], f: &dyn Fn(u64, u64) -> Option<u64>| {
        let r = f(a[0], b[0])?;
        for (x, y) in [(a[0], b[1]), (a[1], b[0]), (a[1], b[1])] {
            if f(x, y)? != r {
                return None;
            }
        }
        Some(r)
    };
    let v = match *func.dfg.inst(i) {
        InstructionData::IntConst { imm } => imm as u64,
        InstructionData::IntCompare { cond, args } => {
            let at = func.dfg.value_type(args[0]);
            if args[0] == args[1] {
                // `x < x` is false whatever `x` is (a zero-trip `i < n` with `i = n`).
                u64::from(matches!(
                    cond,
                    IntCC::Eq | IntCC::Sle | IntCC::Sge | IntCC::Ule | IntCC::Uge
                ))
            } else {
                let cmp = |a: u64, b: u64| {
                    let (sa, sb) = (sext(a, at), sext(b, at));
                    Some(u64::from(match cond {
                        IntCC::Eq => a == b,
                        IntCC::Ne => a != b,
                        IntCC::Slt => sa < sb,
                        IntCC::Sle => sa <= sb,
                        IntCC::Sgt => sa > sb,
                        IntCC::Sge => sa >= sb,
                        IntCC::Ult => a < b,
                        IntCC::Ule => a <= b,
                        IntCC::Ugt => a > b,
                        IntCC::Uge => a >= b,
                    }))
                };
                agree(alts(args[0])?, alts(args[1])?, &cmp)?
            }
        }
        InstructionData::Binary { opcode, args, .. } => {
            let bits = u64::from(ty.bits());
            let op = |a: u64, b: u64| {
                match opcode {
                    Opcode::Iadd => Some(a.wrapping_add(b)),
                    Opcode::Isub => Some(a.wrapping_sub(b)),
                    Opcode::Imul => Some(a.wrapping_mul(b)),
                    Opcode::And => Some(a & b),
                    Opcode::Or => Some(a | b),
                    Opcode::Xor => Some(a ^ b),
                    Opcode::Shl if b < bits => Some(a << b),
                    Opcode::Lshr if b < bits => Some(a >> b),
                    Opcode::Ashr if b < bits => Some((sext(a, ty) >> b) as u64),
                    _ => None,
                }
                .map(|x| mask(x, ty))
            };
            agree(alts(args[0])?, alts(args[1])?, &op)?
        }
        InstructionData::Unary { opcode, arg } => {
            let at = func.dfg.value_type(arg);
            let a = known(arg)?;
            match opcode {
                Opcode::Zext | Opcode::Trunc => a,
                Opcode::Sext => sext(a, at) as u64,
                _ => return None,
            }
        }
        InstructionData::Ternary {
            opcode: Opcode::Select,
            args,
        } => {
            let (t, f) = (known(args[1]), known(args[2]));
            match known(args[0]) {
                Some(c) if c & 1 == 1 => t?,
                Some(_) => f?,
                // Both arms equal: the condition does not matter.
                None if t.is_some() && t == f => t?,
                None => return None,
            }
        }
        _ => return None,
    };
    Some(mask(v, ty))
}

/// The one target of the branch `term` when its condition is `cond_value` (`brif`: bit 0;
/// `br_table`: the index, sign-extended as the cases are), cloned.
pub(crate) fn decided_target(func: &Function, term: Inst, cond_value: u64) -> Option<BlockCall> {
    match func.dfg.inst(term) {
        InstructionData::Brif { blocks, .. } => Some(blocks[usize::from(cond_value & 1 == 0)]),
        InstructionData::BrTable { arg, table } => {
            let k = sext(cond_value, func.dfg.value_type(*arg));
            let jt = func.dfg.jump_table(*table);
            Some(
                jt.cases
                    .iter()
                    .find(|(c, _)| *c == k)
                    .map_or(jt.default, |(_, bc)| *bc),
            )
        }
        _ => None,
    }
}

/// The condition operand of a `brif` or `br_table`.
pub(crate) fn branch_condition(func: &Function, term: Inst) -> Option<Value> {
    match func.dfg.inst(term) {
        InstructionData::Brif { arg, .. } | InstructionData::BrTable { arg, .. } => Some(*arg),
        _ => None,
    }
}

/// Replace the terminator `term` by a jump to `dest` (one of its own targets).
pub(crate) fn fold_to_jump(func: &mut Function, term: Inst, dest: BlockCall) {
    func.dfg.replace_inst(term, InstructionData::Jump { dest });
}

/// What [`remove_unreachable_blocks`] removed.
#[derive(Default)]
pub(crate) struct Removed {
    /// The blocks removed, in layout order.
    pub blocks: Vec<Block>,
    /// Barriers among their instructions.
    pub barriers: u32,
}

/// Remove every block not reachable from the entry (after branches were folded): its
/// instructions first, then the block. A value defined in such a block has no use in a
/// reachable one (its definition dominated every use, and folding only removes edges),
/// so nothing else needs rewriting. `reached` is a reusable buffer.
pub(crate) fn remove_unreachable_blocks(func: &mut Function, reached: &mut Vec<bool>) -> Removed {
    reached.clear();
    reached.resize(func.dfg.num_blocks(), false);
    let mut stack: Vec<Block> = Vec::new();
    if let Some(e) = func.layout.entry_block() {
        reached[e.index()] = true;
        stack.push(e);
    }
    while let Some(b) = stack.pop() {
        func.for_each_successor(b, |s| {
            if !reached[s.index()] {
                reached[s.index()] = true;
                stack.push(s);
            }
        });
    }
    let mut removed = Removed::default();
    let dead: Vec<Block> = func
        .layout
        .blocks()
        .filter(|b| !reached[b.index()])
        .collect();
    for &b in &dead {
        // Front to back, without collecting the block's instructions first.
        while let Some(i) = func.layout.first_inst(b) {
            if func.dfg.inst(i).opcode() == Opcode::Barrier {
                removed.barriers += 1;
            }
            func.layout.remove_inst(i);
        }
        func.layout.remove_block(b);
    }
    removed.blocks = dead;
    removed
}

/// Remove the blocks `blocks` (which nothing reachable branches to any more) from the
/// layout, instructions first.
pub(crate) fn remove_blocks(func: &mut Function, blocks: &[Block]) {
    for &b in blocks {
        while let Some(i) = func.layout.first_inst(b) {
            func.layout.remove_inst(i);
        }
        func.layout.remove_block(b);
    }
}

/// Put every loop of `func` back in loop-simplify and LCSSA form after branches were
/// folded: a block of an outer loop that could reach its latch only through a removed edge
/// is outside that loop now, and may use the loop's values directly (LLVM's
/// `breakLoopBackedge` re-forms LCSSA for the same reason). Runs the two function passes,
/// which change nothing where the forms hold; their counters and remarks are not the
/// visited loop's business and are dropped. Leaves the analyses they computed in the cache.
pub(crate) fn restore_forms(
    func: &mut Function,
    cx: &mut crate::manager::PassContext<'_>,
) -> Result<(), crate::manager::PassError> {
    use crate::manager::{FunctionPass, PassContext, Stats};
    cx.analyses.invalidate(crate::Analyses::NONE);
    let mut stats = Stats::default();
    let mut remarks = Vec::new();
    let mut sub = PassContext {
        knobs: cx.knobs,
        analyses: &mut *cx.analyses,
        stats: &mut stats,
        remarks: &mut remarks,
    };
    let r = crate::loop_simplify::LoopSimplify::default().run(func, &mut sub)?;
    sub.analyses.invalidate(r.preserved);
    let r = crate::lcssa::Lcssa::default().run(func, &mut sub)?;
    sub.analyses.invalidate(r.preserved);
    Ok(())
}

/// What branches folded in a loop's own blocks did to the loop, when the change stays
/// inside it ([`local_fold_outcome`]).
pub(crate) struct FoldOutcome {
    /// Blocks of the loop (subloops' included) no longer reached from its header.
    pub dead: Vec<Block>,
    /// The latches left (blocks still branching to the header), in the old order; empty
    /// when the loop lost every backedge.
    pub latches: Vec<Block>,
    /// Exactly one edge enters the header from `latches`.
    pub one_back_edge: bool,
    /// Exit blocks no edge reaches any more (only for an outermost loop, whose exits are
    /// in no loop): what dies past them is found by [`dead_region`] after the commit.
    pub dead_exits: Vec<Block>,
}

/// After branches of `l`'s own blocks were folded (`cfg` and `li` still describe the
/// function before), can the analyses be updated in place? Yes when every exit block of
/// `l` is still reached (so nothing outside the loop dies: a block outside is reached
/// from the loop only through an exit), and the blocks of `l` left keep a clean place in
/// the forest: if a backedge is left, every live block still reaches a latch without
/// passing the header (the loop keeps exactly its live blocks); if none is, every exit
/// block lies in `l`'s parent and every live block reaches an exit (what is left of `l`
/// joins the parent, whose latches, preheader and exits are unchanged). `None` otherwise:
/// the caller falls back to a function-wide sweep. O(blocks of `l` and their edges).
/// `mark` is a reusable buffer.
pub(crate) fn local_fold_outcome(
    func: &Function,
    cfg: &Cfg,
    li: &LoopInfo,
    l: Loop,
    mark: &mut Vec<u8>,
) -> Option<FoldOutcome> {
    const LIVE: u8 = 1;
    const REACHES: u8 = 2;
    let header = li.header(l);
    mark.clear();
    mark.resize(func.dfg.num_blocks(), 0);
    let has_edge = |p: Block, t: Block| {
        let mut hit = false;
        func.for_each_successor(p, |s| hit |= s == t);
        hit
    };
    // Live blocks: reached from the header inside `l` by the edges left.
    let mut live: Vec<Block> = vec![header];
    mark[header.index()] = LIVE;
    let mut latches: Vec<Block> = Vec::new();
    let mut back_edges = 0usize;
    let mut k = 0;
    while k < live.len() {
        let b = live[k];
        k += 1;
        let mut to_header = 0usize;
        func.for_each_successor(b, |t| {
            if t == header {
                to_header += 1;
            } else if mark[t.index()] == 0 && li.contains(l, t) {
                mark[t.index()] = LIVE;
                live.push(t);
            }
        });
        if to_header > 0 {
            back_edges += to_header;
        }
    }
    for &lt in li.latches(l) {
        if mark[lt.index()] == LIVE && has_edge(lt, header) {
            latches.push(lt);
        }
    }
    // Back edges only come from latches of `l` (subloops' blocks branch to their own
    // headers), so `back_edges` counts edges from `latches`.
    let exits: Vec<(Block, Block)> = li.exit_edges(l, cfg);
    let mut dead_exits: Vec<Block> = Vec::new();
    for &(_, x) in &exits {
        if latches.is_empty() && li.innermost_loop(x) != li.parent(l) {
            return None;
        }
        let reached = cfg
            .preds(x)
            .iter()
            .any(|&p| mark[p.index()] == LIVE && has_edge(p, x));
        if !reached {
            // An exit of an outermost loop is in no loop: what dies past it changes no
            // loop but the ones that die whole ([`dead_region`] checks). An exit in an
            // outer loop could take that loop's latch with it.
            if li.parent(l).is_some() {
                return None;
            }
            // Exits are outside `l`: their mark is free to say "listed".
            if mark[x.index()] == 0 {
                mark[x.index()] = 4;
                dead_exits.push(x);
            }
        }
    }
    // Every live block reaches a target (a latch left, else an exit) by live edges:
    // walk back from the targets over the old predecessors whose branch still leads on.
    let mut stack: Vec<Block> = Vec::new();
    let mut n = 0usize;
    let reach = |b: Block, mark: &mut Vec<u8>, stack: &mut Vec<Block>| {
        if mark[b.index()] == LIVE {
            mark[b.index()] = LIVE | REACHES;
            stack.push(b);
            true
        } else {
            false
        }
    };
    if latches.is_empty() {
        for &(p, x) in &exits {
            if has_edge(p, x) && reach(p, mark, &mut stack) {
                n += 1;
            }
        }
    } else {
        for &lt in &latches {
            if reach(lt, mark, &mut stack) {
                n += 1;
            }
        }
    }
    while let Some(b) = stack.pop() {
        if b == header && !latches.is_empty() {
            continue; // a path to a latch may not pass the header
        }
        for &p in cfg.preds(b) {
            if mark[p.index()] == LIVE && has_edge(p, b) && reach(p, mark, &mut stack) {
                n += 1;
            }
        }
    }
    if n != live.len() {
        return None;
    }
    let dead: Vec<Block> = li.blocks(l).filter(|b| mark[b.index()] == 0).collect();
    Some(FoldOutcome {
        dead,
        latches,
        one_back_edge: back_edges == 1,
        dead_exits,
    })
}

/// Apply a [`FoldOutcome`] of `l`: remove its dead blocks from the function, and bring the
/// CFG's edges and the loop forest up to date. `folded` lists the blocks whose terminator
/// was folded. Returns the analyses kept (the CFG's order goes stale, to be recomputed by
/// the first pass that asks). The dominator tree is dropped: no loop pass of `-O` needs
/// it, and `DomTree::apply_updates` on removed regions recomputed the whole tree (97% of
/// loop-deletion's time on the 10k-block nest kernel).
pub(crate) fn commit_local_fold(
    func: &mut Function,
    a: &mut AnalysisCache,
    l: Loop,
    folded: &[Block],
    out: &FoldOutcome,
) -> Result<Analyses, String> {
    remove_blocks(func, &out.dead);
    let cfg_err = |e: gyre_analysis::CfgError| e.to_string();
    for &b in folded {
        if !func.layout.is_block_inserted(b) {
            continue;
        }
        a.cfg.update_block(func, b).map_err(cfg_err)?;
    }
    for &b in &out.dead {
        a.cfg.update_block(func, b).map_err(cfg_err)?;
        a.loops.remove_block(b);
    }
    // Subloops whose blocks all died go, innermost first (a subloop is entirely live or
    // entirely dead: the folds changed no edge inside it).
    let mut nest = vec![l];
    let mut k = 0;
    while k < nest.len() {
        nest.extend_from_slice(a.loops.children(nest[k]));
        k += 1;
    }
    for &x in nest[1..].iter().rev() {
        if !func.layout.is_block_inserted(a.loops.header(x)) {
            a.loops.remove_loop(x);
        }
    }
    if out.latches.is_empty() {
        a.loops.remove_loop(l);
    } else if !a.loops.set_latches(l, &out.latches, out.one_back_edge) {
        return Err("internal error: a folded loop gained latches".into());
    }
    let mut kept = Analyses::CFG.union(Analyses::LOOPS);
    // Folding and removing blocks add no use (the analysis over-approximates).
    if a.nonlocal.is_valid() {
        kept = kept.union(Analyses::NONLOCAL_USES);
    }
    Ok(kept)
}

/// Scratch buffers of [`dead_region`], kept by a pass between visits.
#[derive(Default)]
pub(crate) struct RegionScratch {
    /// Live incoming edges left, per block touched.
    count: rustc_hash::FxHashMap<Block, u32>,
    /// Dead blocks whose out-edges were counted off.
    processed: rustc_hash::FxHashSet<Block>,
    /// Dead blocks, found in this order.
    dead: Vec<Block>,
    /// Membership of `dead`.
    is_dead: rustc_hash::FxHashSet<Block>,
    /// Dead blocks not yet processed.
    work: Vec<Block>,
}

/// After terminators were folded and the CFG's edges of the folded blocks updated
/// (`cfg.update_block`): the blocks no longer reachable from the entry, found from
/// `seeds` (the blocks that lost incoming edges, a superset is fine) by counting each
/// touched block's live incoming edges and following the blocks whose count drops to
/// zero. A loop header's edges from inside its loop are not counted: in a reducible CFG
/// they come from blocks the header dominates, which die with it. This is the part of a
/// function-wide reachability sweep that can change, in time proportional to the dead
/// blocks, their out-edges and the in-edges of the blocks they reach.
///
/// `None` when the change is not local to whole loops: a touched block is in an
/// irreducible cycle (the counting needs dominating headers), or a dead block belongs to
/// a loop whose header lives (that loop may lose a latch, or blocks that reached its
/// latch only through the dead ones). The caller then falls back to the function-wide
/// sweep. Otherwise every dead block is in no loop or in a loop that dies whole, so the
/// loop forest only loses those loops, and no surviving loop changes its blocks,
/// preheader, latches or exits (an exit block that lost an edge keeps its loop as its
/// only source of predecessors).
///
/// `known_dead` are blocks already found dead by the caller (a loop's own dead blocks,
/// [`local_fold_outcome`]): their edges count as gone, and they are not returned.
pub(crate) fn dead_region(
    cfg: &Cfg,
    li: &LoopInfo,
    seeds: &[Block],
    known_dead: &[Block],
    s: &mut RegionScratch,
) -> Option<Vec<Block>> {
    s.count.clear();
    s.processed.clear();
    s.dead.clear();
    s.is_dead.clear();
    s.work.clear();
    for &b in known_dead {
        s.processed.insert(b);
        s.is_dead.insert(b);
    }
    // Live incoming edges of `b` now: from blocks not yet counted off (a dead block's
    // edges are subtracted when it is processed), and, into a header, from outside its
    // loop.
    let init = |b: Block, processed: &rustc_hash::FxHashSet<Block>| -> Option<u32> {
        if li.in_irreducible_cycle(b) {
            return None;
        }
        let own = li.innermost_loop(b).filter(|&l| li.header(l) == b);
        let n = cfg
            .preds(b)
            .iter()
            .filter(|&&p| !processed.contains(&p) && own.is_none_or(|l| !li.contains(l, p)))
            .count();
        Some(n as u32)
    };
    for &b in seeds {
        if s.count.contains_key(&b) {
            continue;
        }
        let n = init(b, &s.processed)?;
        s.count.insert(b, n);
        if n == 0 && s.is_dead.insert(b) {
            s.dead.push(b);
            s.work.push(b);
        }
    }
    while let Some(d) = s.work.pop() {
        s.processed.insert(d);
        for &t in cfg.succs(d) {
            if s.is_dead.contains(&t) {
                continue;
            }
            let n = match s.count.get_mut(&t) {
                Some(n) => {
                    // `d`'s edge was counted when `t` was first touched, unless it runs
                    // from inside `t`'s loop to its header.
                    let from_inside = li
                        .innermost_loop(t)
                        .filter(|&l| li.header(l) == t)
                        .is_some_and(|l| li.contains(l, d));
                    if !from_inside {
                        *n = n.saturating_sub(1);
                    }
                    *n
                }
                None => {
                    let n = init(t, &s.processed)?;
                    s.count.insert(t, n);
                    n
                }
            };
            if n == 0 && s.is_dead.insert(t) {
                s.dead.push(t);
                s.work.push(t);
            }
        }
    }
    // Whole loops only: each dead block's innermost loop dies (its header is dead), and
    // so does the parent of each dead loop, unless it has none.
    for &d in &s.dead {
        let Some(l) = li.innermost_loop(d) else {
            continue;
        };
        if !s.is_dead.contains(&li.header(l)) {
            return None;
        }
        if li.header(l) == d
            && li
                .parent(l)
                .is_some_and(|p| !s.is_dead.contains(&li.header(p)))
        {
            return None;
        }
    }
    Some(s.dead.clone())
}

/// After the folds of `l`'s blocks `folded` gave `out` ([`local_fold_outcome`]): the
/// blocks past `l`'s dead exits that die with them ([`dead_region`], empty when no exit
/// died), or `None` when that is not local (the caller then falls back to the
/// function-wide sweep, before committing anything). Brings the CFG's edges of the
/// folded blocks up to date.
pub(crate) fn outside_dead(
    func: &Function,
    a: &mut AnalysisCache,
    folded: &[Block],
    out: &FoldOutcome,
    s: &mut RegionScratch,
) -> Result<Option<Vec<Block>>, String> {
    if out.dead_exits.is_empty() {
        return Ok(Some(Vec::new()));
    }
    for &b in folded {
        if func.layout.is_block_inserted(b) {
            a.cfg.update_block(func, b).map_err(|e| e.to_string())?;
        }
    }
    Ok(dead_region(&a.cfg, &a.loops, &out.dead_exits, &out.dead, s))
}

/// Apply a [`dead_region`]: remove its blocks from the function and from the CFG's edges
/// and the loop forest (the loops they formed go, innermost first). The folded blocks'
/// edges are already updated. Returns the analyses kept: the CFG's edges (its order goes
/// stale), the loop forest and the non-local uses (removing blocks adds no use); the
/// dominator tree is dropped, as by [`commit_local_fold`].
pub(crate) fn commit_dead_region(
    func: &mut Function,
    a: &mut AnalysisCache,
    dead: &[Block],
) -> Result<Analyses, String> {
    // The dead loops, outermost first: `dead_region` checked that a dead loop's parent
    // is dead too, so they are whole outermost nests.
    let mut nest: Vec<Loop> = Vec::new();
    for &d in dead {
        if let Some(l) = a
            .loops
            .innermost_loop(d)
            .filter(|&l| a.loops.header(l) == d)
        {
            if a.loops.parent(l).is_none() {
                nest.push(l);
            }
        }
    }
    let mut k = 0;
    while k < nest.len() {
        let c = a.loops.children(nest[k]).to_vec();
        nest.extend_from_slice(&c);
        k += 1;
    }
    remove_blocks(func, dead);
    let cfg_err = |e: gyre_analysis::CfgError| e.to_string();
    for &b in dead {
        a.cfg.update_block(func, b).map_err(cfg_err)?;
        a.loops.remove_block(b);
    }
    for &x in nest.iter().rev() {
        a.loops.remove_loop(x);
    }
    let mut kept = Analyses::CFG.union(Analyses::LOOPS);
    if a.nonlocal.is_valid() {
        kept = kept.union(Analyses::NONLOCAL_USES);
    }
    Ok(kept)
}
