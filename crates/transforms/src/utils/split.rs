//! Splitting edges, predecessor sets and blocks (LLVM's `SplitEdge` /
//! `SplitCriticalEdge`, `SplitBlockPredecessors` and `SplitBlock`), with block parameters
//! in place of phis.
//!
//! Every helper adds exactly one block and keeps the function valid: verified input gives
//! verified output, with the same behaviour. Values keep their ids; no instruction
//! changes block except those [`split_block`] moves.
//!
//! **Analyses.** Each helper changes the CFG (the edges of the blocks it names and of the
//! new block). [`split_edge`], [`split_edge_at`] and [`split_block`] take an optional
//! [`Cfg`] that they keep current with [`Cfg::update_block`] (O(edges touched)); its
//! order (RPO) then goes stale until [`Cfg::compute_order`]. Dominator trees, the loop
//! forest, post-dominators and uniformity are invalidated: a split adds a block, so they
//! must be recomputed (or updated by the caller, which knows where the new block lies:
//! for an edge split, idom(new) = the source and the new block lies in every loop that
//! contains both ends; for a block split, the new block takes over the old one's
//! dominator-tree children and loop membership, and becomes the latch if the old block
//! was).

use gyre_analysis::{Cfg, CfgError};
use gyre_ir::{Block, BlockCall, Function, Inst, InstructionData, Layout, Type, Value};
use std::fmt;

/// Where to put a new block in the layout.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Place {
    /// Right before this block.
    Before(Block),
    /// Right after this block.
    After(Block),
    /// At the end of the function.
    End,
}

impl Place {
    /// The block this place is relative to, if any.
    pub fn anchor(self) -> Option<Block> {
        match self {
            Place::Before(b) | Place::After(b) => Some(b),
            Place::End => None,
        }
    }

    /// Put `block` (not laid out) here. Panics if the anchor is not laid out (the callers
    /// check it first and report [`SplitError::NotLaidOut`]).
    pub fn insert(self, layout: &mut Layout, block: Block) {
        match self {
            Place::Before(b) => layout.insert_block_before(block, b),
            Place::After(b) => layout.insert_block_after(block, b),
            Place::End => layout.append_block(block),
        }
    }
}

/// Why a split could not be done. The function is unchanged when one is returned, except
/// for [`SplitError::Cfg`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SplitError {
    /// A block named by the caller is not in the layout.
    NotLaidOut(Block),
    /// An instruction named by the caller is not in the layout.
    InstNotLaidOut(Inst),
    /// The block does not end with a terminator.
    NoTerminator(Block),
    /// The source block has no edge to the target.
    NoEdge {
        /// The source.
        from: Block,
        /// The block it does not branch to.
        to: Block,
    },
    /// The source block has fewer successor edges than the index asked for.
    NoEdgeIndex {
        /// The source.
        from: Block,
        /// The index (in branch order) that is out of range.
        index: usize,
    },
    /// Keeping the [`Cfg`] current failed (it did not describe the function). The split
    /// itself was made; recompute the CFG.
    Cfg(CfgError),
}

impl fmt::Display for SplitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SplitError::NotLaidOut(b) => write!(f, "{b} is not in the layout"),
            SplitError::InstNotLaidOut(i) => write!(f, "{i} is not in the layout"),
            SplitError::NoTerminator(b) => write!(f, "{b} does not end with a terminator"),
            SplitError::NoEdge { from, to } => write!(f, "{from} has no edge to {to}"),
            SplitError::NoEdgeIndex { from, index } => {
                write!(f, "{from} has no successor edge number {index}")
            }
            SplitError::Cfg(e) => write!(f, "updating the CFG: {e}"),
        }
    }
}

impl std::error::Error for SplitError {}

impl From<CfgError> for SplitError {
    fn from(e: CfgError) -> Self {
        SplitError::Cfg(e)
    }
}

/// Split the edges from `preds` (distinct blocks) into `target` off to a new block placed
/// at `place` (LLVM's `SplitBlockPredecessors`), which then jumps to `target`.
///
/// The new block gets one parameter per parameter of `target` that receives different
/// values on the redirected edges; a parameter that receives one value `v` everywhere
/// gets `v` forwarded directly if `forward(v)` allows it, else a parameter too. Edges
/// keep only the arguments of the new block's parameters. Every edge of a listed
/// predecessor into `target` moves (a `brif` with both arms to `target` moves both).
///
/// **Requires**: the anchor of `place` laid out (panics otherwise), `target` laid out;
/// `forward(v)` only for values whose definition dominates the new block (the caller's
/// business: e.g. values defined outside the loop the new block lies in).
///
/// **Invalidates**: the CFG (edges of `preds` and of the new block: call
/// [`Cfg::update_block`] on each), dominators, loops.
pub fn split_predecessors(
    func: &mut Function,
    target: Block,
    preds: &[Block],
    place: Place,
    forward: impl Fn(&Function, Value) -> bool,
) -> Block {
    let nparams = func.dfg.block_params(target).len();
    // Per parameter: the value every edge passes, or `None` once two edges differ.
    let mut common: Vec<Option<Value>> = Vec::new();
    let mut first = true;
    for &p in preds {
        let Some(t) = func.terminator(p) else {
            continue;
        };
        func.dfg.for_each_dest(t, |bc| {
            if bc.block != target {
                return;
            }
            let args = func.dfg.block_call_args(bc);
            if first {
                common.extend(args.iter().map(|&a| Some(a)));
                first = false;
            } else {
                for (c, &a) in common.iter_mut().zip(args) {
                    if *c != Some(a) {
                        *c = None;
                    }
                }
            }
        });
    }
    common.resize(nparams, None);
    let new = func.dfg.make_block();
    place.insert(&mut func.layout, new);
    // `common` becomes the new block's jump arguments: a forwarded value, or `None` for
    // a kept parameter (the new block's next parameter). One buffer instead of three:
    // loop passes split exits on every change.
    let mut all_kept = true;
    for (i, c) in common.iter_mut().enumerate() {
        match *c {
            Some(v) if forward(func, v) => all_kept = false,
            _ => {
                let ty = func.dfg.value_type(func.dfg.block_params(target)[i]);
                func.dfg.append_block_param(new, ty);
                *c = None;
            }
        }
    }
    for &p in preds {
        let Some(t) = func.terminator(p) else {
            continue;
        };
        func.dfg.for_each_dest_mut(t, |bc, pool| {
            if bc.block != target {
                return;
            }
            bc.block = new;
            if all_kept {
                return;
            }
            // Keep the arguments of the kept parameters, in order, in place.
            let args = bc.args.as_mut_slice(pool);
            let mut w = 0;
            for r in 0..args.len().min(common.len()) {
                if common[r].is_none() {
                    args[w] = args[r];
                    w += 1;
                }
            }
            bc.args.truncate(w, pool);
        });
    }
    let mut kept = 0;
    let mut dest = BlockCall::new(target, &[], &mut func.dfg.value_lists);
    for c in &common {
        let v = match *c {
            Some(v) => v,
            None => {
                kept += 1;
                func.dfg.block_params(new)[kept - 1]
            }
        };
        dest.args.push(v, &mut func.dfg.value_lists);
    }
    func.append_inst(new, InstructionData::Jump { dest }, None);
    new
}

/// Split every edge from `from` to `to` (LLVM's `SplitEdge`): the edges go to a new
/// block, placed right after `from`, that jumps to `to`. Returns the new block.
///
/// The new block has one parameter per parameter of `to` (same types); each redirected
/// edge keeps its arguments, now passed to those parameters, and the new block's `jump`
/// forwards them. Values reaching `to` are therefore the same on every path, and a value
/// defined in a loop that the new block is outside of still flows through block
/// parameters (LCSSA is kept).
///
/// **Several edges to `to`** (a `brif` with both arms to it, a `br_table` whose default
/// and cases repeat it): *all* of them move to the one new block, which then has as many
/// incoming edges from `from`. To give each edge its own block (e.g. to remove every
/// critical edge), use [`split_edge_at`] once per successor index.
///
/// **Requires**: `from` laid out and ending in a terminator with at least one edge to
/// `to` (typed error otherwise, function unchanged).
///
/// **CFG**: if `cfg` is given (valid for the function before the call), it is updated
/// (edges of `from` and of the new block); its RPO is stale until
/// [`Cfg::compute_order`]. **Invalidates** dominators, loops (see the module doc).
pub fn split_edge(
    func: &mut Function,
    from: Block,
    to: Block,
    cfg: Option<&mut Cfg>,
) -> Result<Block, SplitError> {
    let term = terminator_of(func, from)?;
    if !func.dfg.successors(term).contains(&to) {
        return Err(SplitError::NoEdge { from, to });
    }
    split_selected(func, from, term, to, |_, b| b == to, cfg)
}

/// Split only the `index`th successor edge of `from` (in branch order: `brif`'s then and
/// else; a `br_table`'s default, then its cases in order), as [`split_edge`] does for all
/// edges to one target. Other edges to the same target stay. Returns the new block,
/// placed right after `from`.
///
/// **Requires**, **CFG**, **Invalidates**: as [`split_edge`].
pub fn split_edge_at(
    func: &mut Function,
    from: Block,
    index: usize,
    cfg: Option<&mut Cfg>,
) -> Result<Block, SplitError> {
    let term = terminator_of(func, from)?;
    let Some(&to) = func.dfg.successors(term).get(index) else {
        return Err(SplitError::NoEdgeIndex { from, index });
    };
    split_selected(func, from, term, to, |k, _| k == index, cfg)
}

fn terminator_of(func: &Function, block: Block) -> Result<Inst, SplitError> {
    if !func.dfg.block_is_valid(block) || !func.layout.is_block_inserted(block) {
        return Err(SplitError::NotLaidOut(block));
    }
    func.terminator(block)
        .ok_or(SplitError::NoTerminator(block))
}

/// Move the edges of `term` (in `from`) selected by `pick(index, target)`, all of which
/// go to `to`, to a new block that forwards their arguments to `to`.
fn split_selected(
    func: &mut Function,
    from: Block,
    term: Inst,
    to: Block,
    pick: impl Fn(usize, Block) -> bool,
    cfg: Option<&mut Cfg>,
) -> Result<Block, SplitError> {
    let new = func.dfg.make_block();
    let tys: Vec<Type> = func
        .dfg
        .block_params(to)
        .iter()
        .map(|&p| func.dfg.value_type(p))
        .collect();
    let params: Vec<Value> = tys
        .into_iter()
        .map(|t| func.dfg.append_block_param(new, t))
        .collect();
    let mut k = 0;
    func.dfg.map_inst_blocks(term, |b| {
        let b = if pick(k, b) { new } else { b };
        k += 1;
        b
    });
    func.layout.insert_block_after(new, from);
    let dest = BlockCall::new(to, &params, &mut func.dfg.value_lists);
    func.append_inst(new, InstructionData::Jump { dest }, None);
    if let Some(cfg) = cfg {
        cfg.update_block(func, from)?;
        cfg.update_block(func, new)?;
    }
    Ok(new)
}

/// Split `at_inst`'s block before `at_inst` (LLVM's `SplitBlock`): `at_inst` and every
/// instruction after it move, in order, to a new block placed right after the old one,
/// and the old block ends with a `jump` to it. Returns the new block.
///
/// Values keep their ids and every use stays valid: the old block (with its parameters)
/// dominates the new one, which has no parameters and inherits the old block's
/// successor edges (their arguments unchanged). If `at_inst` is the first instruction,
/// the old block is left holding only the `jump`.
///
/// **Requires**: `at_inst` laid out (typed error otherwise, function unchanged).
///
/// **CFG**: if `cfg` is given (valid before the call), it is updated (edges of both
/// blocks); its RPO is stale until [`Cfg::compute_order`]. **Invalidates** dominators
/// and loops (see the module doc).
pub fn split_block(
    func: &mut Function,
    at_inst: Inst,
    cfg: Option<&mut Cfg>,
) -> Result<Block, SplitError> {
    if !func.dfg.inst_is_valid(at_inst) {
        return Err(SplitError::InstNotLaidOut(at_inst));
    }
    let Some(old) = func.layout.inst_block(at_inst) else {
        return Err(SplitError::InstNotLaidOut(at_inst));
    };
    let new = func.dfg.make_block();
    func.layout.split_block(new, at_inst);
    let dest = BlockCall::new(new, &[], &mut func.dfg.value_lists);
    func.append_inst(old, InstructionData::Jump { dest }, None);
    if let Some(cfg) = cfg {
        cfg.update_block(func, old)?;
        cfg.update_block(func, new)?;
    }
    Ok(new)
}

#[cfg(test)]
mod tests {
    use super::*;
    use gyre_ir::verifier::verify_function;
    use gyre_ir::{parse_function, write_function};

    fn text(f: &Function) -> String {
        let mut s = String::new();
        write_function(&mut s, f, None).expect("writes");
        s
    }

    const SWITCH: &str = "kernel @k(i32) {
block0(v0: i32):
    v1 = iconst.i32 7
    br_table v0, block1(v1), [0: block1(v0), 1: block2, 2: block1(v1)]
block1(v2: i32):
    return
block2:
    v3 = icmp eq v0, v1
    brif v3, block1(v0), block1(v1)
}
";

    /// Check `cfg` against a fresh one: same edges (as multisets) and, after
    /// `compute_order`, the same RPO.
    fn same_cfg(func: &Function, cfg: &mut Cfg) {
        cfg.compute_order(func);
        let fresh = Cfg::with_function(func).expect("valid");
        assert_eq!(cfg.rpo(), fresh.rpo());
        for b in func.layout.blocks() {
            assert_eq!(cfg.succs(b), fresh.succs(b), "succs of {b}");
            let (mut p, mut q) = (cfg.preds(b).to_vec(), fresh.preds(b).to_vec());
            p.sort();
            q.sort();
            assert_eq!(p, q, "preds of {b}");
        }
    }

    #[test]
    fn split_edge_moves_every_edge_to_the_target() {
        let mut f = parse_function(SWITCH).expect("parses");
        let mut cfg = Cfg::with_function(&f).expect("valid");
        let b0 = f.entry_block().expect("entry");
        let b1 = Block::from_u32(1);
        let new = split_edge(&mut f, b0, b1, Some(&mut cfg)).expect("splits");
        verify_function(&f, None).expect("verifies");
        let out = text(&f);
        assert!(
            out.contains("br_table v0, block3(v1), [0: block3(v0), 1: block2, 2: block3(v1)]"),
            "{out}"
        );
        assert!(
            out.contains("block3(v4: i32):\n    jump block1(v4)"),
            "{out}"
        );
        assert_eq!(f.layout.next_block(b0), Some(new));
        same_cfg(&f, &mut cfg);
    }

    #[test]
    fn split_edge_at_moves_one_edge() {
        let mut f = parse_function(SWITCH).expect("parses");
        let mut cfg = Cfg::with_function(&f).expect("valid");
        let b0 = f.entry_block().expect("entry");
        let b2 = Block::from_u32(2);
        split_edge_at(&mut f, b0, 3, Some(&mut cfg)).expect("splits");
        split_edge_at(&mut f, b2, 0, Some(&mut cfg)).expect("splits");
        verify_function(&f, None).expect("verifies");
        let out = text(&f);
        assert!(
            out.contains("br_table v0, block1(v1), [0: block1(v0), 1: block2, 2: block3(v1)]"),
            "{out}"
        );
        assert!(out.contains("brif v3, block4(v0), block1(v1)"), "{out}");
        same_cfg(&f, &mut cfg);
        assert_eq!(
            split_edge_at(&mut f, b0, 4, None),
            Err(SplitError::NoEdgeIndex { from: b0, index: 4 })
        );
        assert_eq!(
            split_edge(&mut f, b2, b0, None),
            Err(SplitError::NoEdge { from: b2, to: b0 })
        );
    }

    #[test]
    fn split_block_keeps_values() {
        let src = "kernel @k(i32) {
block0(v0: i32):
    v1 = iadd v0, v0
    v2 = imul v1, v0
    v4 = icmp slt v2, v1
    brif v4, block1(v2), block1(v1)
block1(v3: i32):
    return
}
";
        let mut f = parse_function(src).expect("parses");
        let mut cfg = Cfg::with_function(&f).expect("valid");
        let b0 = f.entry_block().expect("entry");
        let second = f.layout.block_insts(b0).nth(1).expect("imul");
        let new = split_block(&mut f, second, Some(&mut cfg)).expect("splits");
        verify_function(&f, None).expect("verifies");
        let out = text(&f);
        assert!(
            out.contains("v1 = iadd v0, v0\n    jump block2\nblock2:\n    v2 = imul v1, v0"),
            "{out}"
        );
        assert_eq!(f.layout.inst_block(second), Some(new));
        same_cfg(&f, &mut cfg);
        // At the first instruction: the old block keeps only the jump.
        let first = f.layout.first_inst(b0).expect("iadd");
        split_block(&mut f, first, Some(&mut cfg)).expect("splits");
        verify_function(&f, None).expect("verifies");
        assert_eq!(f.layout.block_insts(b0).count(), 1);
        same_cfg(&f, &mut cfg);
        let detached = f.dfg.make_inst(InstructionData::Nullary {
            opcode: gyre_ir::Opcode::Barrier,
        });
        assert_eq!(
            split_block(&mut f, detached, None),
            Err(SplitError::InstNotLaidOut(detached))
        );
    }
}
