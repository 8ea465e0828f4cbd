//! `loop-simplify`: put every loop in LLVM's loop-simplify form.
//!
//! Follows LLVM's `LoopSimplify.cpp` (`simplifyOneLoop`), with block parameters in place
//! of phis: splitting the predecessors of a block that has parameters gives the new block
//! one parameter per parameter of the old one (collecting the incoming arguments) and a
//! `jump` that forwards them. When every redirected edge passes the same value for a
//! parameter, and that value may be used in the new block without breaking LCSSA, it is
//! forwarded directly instead (LLVM's "unique incoming value" shortcut).
//!
//! The work is done in batched phases, each over all loops at once, with the CFG,
//! dominator tree and loop forest recomputed only between phases that changed something
//! (at most four computations per run, so a function with 30,000 loops costs the same as
//! one with 3):
//!
//! 0. **Entry**: if the entry block has predecessors (the header of a loop is the function
//!    entry, which the verifier rejects), a new entry block takes the function's
//!    parameters and jumps to the old one.
//! 1. **Preheaders**: a loop whose header has several outside predecessors, or one with
//!    more than one successor edge, gets a new preheader placed before the header, taking
//!    over every edge from outside (unreachable predecessors included, as in LLVM).
//! 2. **Dedicated exits**: for each exit block with a predecessor outside the loop, the
//!    edges from inside the loop are moved to a new exit block placed before it. Loops are
//!    visited inner to outer against the current terminators, so an exit shared by a
//!    nest or by siblings gets one new block per loop, each dedicated.
//! 3. **Single latch**: a loop with more than one back edge gets one backedge block,
//!    placed after its last latch (in RPO), that collects every back edge and merges the
//!    header arguments. Back edges are counted per edge, as LLVM does: a single latch
//!    whose `brif` or `br_table` reaches the header twice gets a backedge block too
//!    ([`LoopInfo::latch`]).
//!
//! Phases 1 and 3 count edges, not blocks, because LLVM's definitions do
//! (`getLoopPreheader` wants one successor edge, `getLoopLatch` one predecessor entry per
//! edge): a form that holds for Gyre then holds for LLVM on the exported function, and
//! passes ported from LLVM may assume "the" preheader edge and "the" back edge.
//!
//! LLVM's further clean-ups (`separateNestedLoop`, folding exiting branches into a common
//! exit after hoisting the invariant instructions of the exiting blocks, folding header
//! phis that `SimplifyInstruction` simplifies, deleting edges from unreachable
//! predecessors) are not done: they are optimisations, not part of the form. The
//! conformance run (`cargo xtask conformance`, docs/conformance.md) lists every function
//! on which LLVM's `loop-simplify,lcssa` still changes Gyre's output, with its reason.

use crate::analyses::{Analyses, AnalysisCache};
use crate::manager::{Forms, FunctionPass, PassContext, PassError, PassResult, Remark};
use crate::utils::split::{split_predecessors, Place};
use gyre_analysis::{Loop, LoopInfo};
use gyre_ir::{Block, BlockCall, EntityRef, Function, InstructionData, Type, Value, ValueDef};

const NAME: &str = "loop-simplify";

/// The `loop-simplify` pass (LLVM's `LoopSimplifyPass`).
///
/// **Requires**: valid IR (the function verifies, except that a branch to the entry
/// block is accepted and repaired).
///
/// **Establishes**: for every loop that contains no irreducible cycle, loop-simplify
/// form ([`LoopInfo::is_loop_simplify_form`]): a preheader (the header's only outside
/// predecessor, whose only successor edge is to the header), a single back edge, and
/// dedicated exits (every predecessor of every exit block is in the loop). The entry
/// block has no predecessors.
///
/// **Preserves**: behaviour; the block of every existing instruction and the loop of every
/// existing block (new blocks only); LCSSA form (a value is forwarded into a new block only
/// if that block lies in the value's loop). After a change, the CFG, dominator tree and
/// loop forest in the analysis cache are recomputed and reported preserved.
///
/// **Invalidates**: the post-dominator tree, when anything changed.
///
/// **Gives up when**: a loop contains an irreducible cycle (remark `Irreducible`; the loops
/// around it are left alone, loops inside it are simplified). Irreducible cycles outside
/// any loop get the same remark.
///
/// **Knobs**: none.
///
/// **Stats**: `NumPreheadersInserted`, `NumExitsSplit` (dedicated exit blocks),
/// `NumLatchesInserted` (backedge blocks), `NumEntryBlocksInserted`.
///
/// Running it twice changes nothing the second time.
#[derive(Default)]
pub struct LoopSimplify {
    scratch: Scratch,
}

/// Buffers reused across runs.
#[derive(Default)]
struct Scratch {
    /// Per block: a stamp, to deduplicate successors and group exit edges.
    mark: Vec<u32>,
    /// Per block: rank of an exit block among the current loop's exits.
    rank: Vec<u32>,
    /// Per block: number of edges into it, kept current during the exit phase.
    npreds: Vec<u32>,
    /// Exit edges `(loop, from, to)`, then bucketed by loop.
    triples: Vec<(u32, Block, Block)>,
    /// Exit edges `(from, to)` grouped by loop.
    edges: Vec<(Block, Block)>,
    /// Per loop: range of its edges in `edges`.
    edge_range: Vec<[u32; 2]>,
    /// Exiting blocks of one exit block that still branch to it.
    srcs: Vec<Block>,
}

impl FunctionPass for LoopSimplify {
    fn name(&self) -> &'static str {
        NAME
    }

    fn establishes(&self) -> Forms {
        Forms {
            loop_simplify: true,
            ..Forms::default()
        }
    }

    fn run(
        &mut self,
        func: &mut Function,
        cx: &mut PassContext<'_>,
    ) -> Result<PassResult, PassError> {
        let fname = func.name.clone();
        let err = |m: String| PassError(format!("{NAME}: @{fname}: {m}"));
        let mut changed = false;

        // Phase 0: a branch to the entry block (the entry heads a loop).
        cx.analyses
            .ensure(func, Analyses::CFG)
            .map_err(|e| err(e.into()))?;
        if let Some(entry) = func.entry_block() {
            if !cx.analyses.cfg.preds(entry).is_empty() {
                insert_entry_block(func, entry);
                cx.stats.add(NAME, "NumEntryBlocksInserted", 1);
                cx.analyses.invalidate(Analyses::NONE);
                changed = true;
            }
        }
        cx.analyses
            .ensure(
                func,
                Analyses::CFG
                    .union(Analyses::DOMTREE)
                    .union(Analyses::LOOPS),
            )
            .map_err(|e| err(e.into()))?;
        irreducible_remarks(func, cx.analyses, cx.remarks);

        type Phase = fn(&mut Scratch, &mut Function, &AnalysisCache) -> u64;
        let phases: [(Phase, &'static str); 3] = [
            (insert_preheaders, "NumPreheadersInserted"),
            (form_dedicated_exits, "NumExitsSplit"),
            (insert_backedge_blocks, "NumLatchesInserted"),
        ];
        for (phase, counter) in phases {
            if cx.analyses.loops.num_loops() == 0 {
                break;
            }
            let n = phase(&mut self.scratch, func, cx.analyses);
            if n > 0 {
                cx.stats.add(NAME, counter, n);
                changed = true;
                // Recompute once per phase, not once per loop.
                cx.analyses.invalidate(Analyses::NONE);
                cx.analyses
                    .ensure(
                        func,
                        Analyses::CFG
                            .union(Analyses::DOMTREE)
                            .union(Analyses::LOOPS),
                    )
                    .map_err(|e| err(e.into()))?;
            }
        }
        if !changed {
            return Ok(PassResult::UNCHANGED);
        }
        // The cache holds analyses of the final function (recomputed after the last
        // change): the CFG, dominator tree and loop forest are valid.
        cx.analyses
            .ensure(
                func,
                Analyses::CFG
                    .union(Analyses::DOMTREE)
                    .union(Analyses::LOOPS),
            )
            .map_err(|e| err(e.into()))?;
        Ok(PassResult::changed(
            Analyses::CFG
                .union(Analyses::DOMTREE)
                .union(Analyses::LOOPS),
        ))
    }
}

/// Remark every loop and every irreducible cycle left alone because of irreducibility.
fn irreducible_remarks(func: &Function, cache: &AnalysisCache, remarks: &mut Vec<Remark>) {
    let loops = &cache.loops;
    for c in loops.irreducible_cycles() {
        let entries: Vec<String> = c.entries.iter().map(|b| b.to_string()).collect();
        remarks.push(Remark {
            pass: NAME,
            function: func.name.clone(),
            block: c.entries.first().copied(),
            kind: "Irreducible",
            message: format!(
                "irreducible cycle of {} blocks entered at {} is not a natural loop; left alone",
                c.blocks.len(),
                entries.join(", ")
            ),
        });
    }
    for l in loops.loops() {
        if loops.contains_irreducible(l) {
            let h = loops.header(l);
            remarks.push(Remark {
                pass: NAME,
                function: func.name.clone(),
                block: Some(h),
                kind: "Irreducible",
                message: format!("loop at {h} contains an irreducible cycle; left alone"),
            });
        }
    }
}

/// Make a new entry block that passes the function's parameters to the old one.
fn insert_entry_block(func: &mut Function, old: Block) -> Block {
    let new = func.dfg.make_block();
    let tys: Vec<Type> = func
        .dfg
        .block_params(old)
        .iter()
        .map(|&p| func.dfg.value_type(p))
        .collect();
    let args: Vec<Value> = tys
        .into_iter()
        .map(|t| func.dfg.append_block_param(new, t))
        .collect();
    func.layout.insert_block_before(new, old);
    let dest = BlockCall::new(old, &args, &mut func.dfg.value_lists);
    func.append_inst(new, InstructionData::Jump { dest }, None);
    new
}

/// The block defining `v`, if it is laid out.
pub(crate) fn def_block(func: &Function, v: Value) -> Option<Block> {
    match func.dfg.value_def(v) {
        ValueDef::Result(i) => func.layout.inst_block(i),
        ValueDef::Param(b, _) => Some(b),
        ValueDef::Detached => None,
    }
}

/// May `v` be used in a new block whose innermost loop is `lx` without an LCSSA
/// violation (the loop of `v`'s definition contains the new block)? New blocks of the
/// current phase are in no loop of `loops`; their values are never forwarded.
fn usable_in(func: &Function, loops: &LoopInfo, v: Value, lx: Option<Loop>) -> bool {
    let Some(d) = def_block(func, v) else {
        return false;
    };
    match loops.innermost_loop(d) {
        None => true,
        Some(ld) => lx.is_some_and(|lx| loops.contains_loop(ld, lx)),
    }
}

/// Number of edges from `pred` to `target`.
fn edges_to(func: &Function, pred: Block, target: Block) -> u32 {
    let mut n = 0;
    if let Some(t) = func.terminator(pred) {
        func.dfg
            .for_each_dest(t, |bc| n += u32::from(bc.block == target));
    }
    n
}

/// Phase 1: a preheader for every loop without one. Returns the number inserted.
fn insert_preheaders(_s: &mut Scratch, func: &mut Function, cache: &AnalysisCache) -> u64 {
    let (cfg, loops) = (&cache.cfg, &cache.loops);
    let mut n = 0;
    for l in loops.loops() {
        if loops.contains_irreducible(l) || loops.preheader(l, cfg).is_some() {
            continue;
        }
        // Edges into different headers are independent, so the analyses of the phase's
        // start stay right for every loop: only edges into this header move.
        let preds = loops.loop_predecessors(l, cfg);
        if preds.is_empty() {
            continue;
        }
        let h = loops.header(l);
        // The preheader lies in every loop around `l`, not in `l`.
        let lx = loops.parent(l);
        split_predecessors(func, h, &preds, Place::Before(h), |f, v| {
            usable_in(f, loops, v, lx)
        });
        n += 1;
    }
    n
}

/// Phase 2: dedicated exit blocks. Returns the number of new exit blocks.
fn form_dedicated_exits(s: &mut Scratch, func: &mut Function, cache: &AnalysisCache) -> u64 {
    let (cfg, loops) = (&cache.cfg, &cache.loops);
    let nb = func.dfg.num_blocks();
    s.mark.clear();
    s.mark.resize(nb, 0);
    s.rank.clear();
    s.rank.resize(nb, 0);
    s.npreds.clear();
    s.npreds
        .extend((0..nb).map(|i| cfg.preds(Block::new(i)).len() as u32));

    // Every exit edge of every loop, found from its source: the loops it leaves are those
    // from the source's innermost loop up to (excluding) the first one containing the
    // target. Linear in the number of (loop, exit edge) pairs.
    s.triples.clear();
    for &b in cfg.rpo() {
        let Some(inner) = loops.innermost_loop(b) else {
            continue;
        };
        let stamp = b.as_u32() + 1;
        for &t in cfg.succs(b) {
            if s.mark[t.index()] == stamp {
                continue;
            }
            s.mark[t.index()] = stamp;
            let mut l = Some(inner);
            while let Some(m) = l {
                if loops.contains(m, t) {
                    break;
                }
                s.triples.push((m.as_u32(), b, t));
                l = loops.parent(m);
            }
        }
    }
    // Bucket by loop (counting sort keeps RPO order of sources within a loop).
    let nl = loops.num_loops();
    s.edge_range.clear();
    s.edge_range.resize(nl, [0, 0]);
    for &(l, _, _) in &s.triples {
        s.edge_range[l as usize][1] += 1;
    }
    let mut off = 0;
    for r in &mut s.edge_range {
        let c = r[1];
        *r = [off, off];
        off += c;
    }
    s.edges.clear();
    s.edges.resize(off as usize, (Block::new(0), Block::new(0)));
    for &(l, b, t) in &s.triples {
        let r = &mut s.edge_range[l as usize];
        s.edges[r[1] as usize] = (b, t);
        r[1] += 1;
    }

    // `mark` now serves per-loop stamps: forget the per-source ones.
    s.mark.fill(0);
    let mut n = 0;
    let mut stamp = 0u32;
    // Inner loops first, against the current terminators: an inner loop's split may have
    // moved some of an outer loop's exit edges to a new block (which lies outside the
    // outer loop too, so those edges are simply no longer the outer loop's).
    for l in loops.loops() {
        if loops.contains_irreducible(l) {
            continue;
        }
        let [a, b] = s.edge_range[l.index()];
        let edges = &mut s.edges[a as usize..b as usize];
        if edges.is_empty() {
            continue;
        }
        // Group by exit block, exits in order of first appearance.
        stamp += 1;
        let mut next_rank = 0;
        for &(_, t) in edges.iter() {
            if s.mark[t.index()] != stamp {
                s.mark[t.index()] = stamp;
                s.rank[t.index()] = next_rank;
                next_rank += 1;
            }
        }
        edges.sort_by_key(|&(_, t)| s.rank[t.index()]);
        let mut i = 0;
        while i < edges.len() {
            let exit = edges[i].1;
            s.srcs.clear();
            let mut in_edges = 0;
            while i < edges.len() && edges[i].1 == exit {
                let k = edges_to(func, edges[i].0, exit);
                if k > 0 {
                    s.srcs.push(edges[i].0);
                    in_edges += k;
                }
                i += 1;
            }
            if in_edges == 0 || in_edges == s.npreds[exit.index()] {
                continue; // Dedicated already (or all its edges moved by inner loops).
            }
            let lx = new_exit_loop(loops, l, exit);
            let x = split_predecessors(func, exit, &s.srcs, Place::Before(exit), |f, v| {
                usable_in(f, loops, v, lx)
            });
            s.npreds[exit.index()] -= in_edges - 1;
            if s.npreds.len() <= x.index() {
                s.npreds.resize(x.index() + 1, 0);
            }
            s.npreds[x.index()] = in_edges;
            n += 1;
        }
    }
    n
}

/// The innermost loop of a new block that takes the edges from loop `l` into its exit
/// `exit` and jumps there: the loops containing `exit`, except a loop headed by `exit`
/// that does not contain `l` (the new block is then one of its outside predecessors).
fn new_exit_loop(loops: &LoopInfo, l: Loop, exit: Block) -> Option<Loop> {
    let m = loops.innermost_loop(exit)?;
    if loops.header(m) == exit && !loops.contains_loop(m, l) {
        loops.parent(m)
    } else {
        Some(m)
    }
}

/// Phase 3: one backedge block for every loop with several back edges (several latches,
/// or one latch with several edges to the header). Returns the number inserted.
fn insert_backedge_blocks(_s: &mut Scratch, func: &mut Function, cache: &AnalysisCache) -> u64 {
    let loops = &cache.loops;
    let mut n = 0;
    for l in loops.loops() {
        if loops.contains_irreducible(l) || loops.latch(l).is_some() {
            continue;
        }
        // Every edge from these blocks to the header moves, so one latch with two edges
        // ends with two edges to the backedge block and one edge from it.
        let latches = loops.latches(l);
        let h = loops.header(l);
        let last = *latches.last().expect("a loop has a latch");
        // The backedge block lies in `l` itself.
        split_predecessors(func, h, latches, Place::After(last), |f, v| {
            usable_in(f, loops, v, Some(l))
        });
        n += 1;
    }
    n
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::run_pass;
    use gyre_analysis::{Cfg, DomTree};
    use std::fmt::Write as _;

    /// A nest of `depth` loops; loop k's header is entered from loop k-1's header by a
    /// conditional branch (so every inner loop needs a preheader), and its exit block is
    /// the latch of loop k-1.
    fn deep_nest(depth: usize) -> String {
        let mut s = String::from(
            "kernel @k(i32) {\nblock0(v0: i32):\n    v1 = icmp slt v0, v0\n    jump block1\n",
        );
        for k in 1..=depth {
            let next = if k < depth { k + 1 } else { depth };
            let _ = writeln!(s, "block{k}:\n    brif v1, block{next}, block{}", depth + k);
        }
        for k in 1..=depth {
            if k == 1 {
                let _ = writeln!(s, "block{}:\n    return", depth + 1);
            } else {
                let _ = writeln!(
                    s,
                    "block{}:\n    brif v1, block{}, block{}",
                    depth + k,
                    k - 1,
                    depth + k - 1
                );
            }
        }
        s.push_str("}\n");
        s
    }

    #[test]
    fn deep_nest_without_recursion() {
        let depth = 2000;
        let mut f = gyre_ir::parse_function(&deep_nest(depth)).expect("parses");
        let (res, stats) = run_pass(&mut LoopSimplify::default(), &mut f);
        assert!(res.changed);
        assert_eq!(stats.get(NAME, "NumPreheadersInserted"), depth as u64 - 1);
        assert_eq!(stats.get(NAME, "NumExitsSplit"), 0);
        gyre_ir::verifier::verify_function(&f, None).expect("verifies");
        let cfg = Cfg::with_function(&f).expect("valid");
        let dt = DomTree::with_function(&f, &cfg);
        let li = LoopInfo::with_function(&f, &cfg, &dt);
        assert_eq!(li.num_loops(), depth);
        for l in li.loops() {
            assert!(li.preheader(l, &cfg).is_some() && li.latch(l).is_some());
        }
        let (again, _) = run_pass(&mut LoopSimplify::default(), &mut f);
        assert_eq!(again, PassResult::UNCHANGED);
    }

    #[test]
    fn one_latch_with_two_back_edges_gets_a_backedge_block() {
        // block2 is the only latch, but reaches the header by both edges of its `brif`:
        // two back edges for LLVM, so not loop-simplify form until they share one block.
        let src = "kernel @k(i32) {
block0(v0: i32):
    v1 = iconst.i32 0
    jump block1
block1:
    v2 = icmp slt v0, v1
    brif v2, block2, block3
block2:
    brif v2, block1, block1
block3:
    return
}
";
        let mut f = gyre_ir::parse_function(src).expect("parses");
        let cfg = Cfg::with_function(&f).expect("valid");
        let dt = DomTree::with_function(&f, &cfg);
        let li = LoopInfo::with_function(&f, &cfg, &dt);
        let l = li.loops().next().expect("one loop");
        assert_eq!(li.latches(l).len(), 1);
        assert_eq!(li.num_back_edges(l, &cfg), 2);
        assert!(li.latch(l).is_none() && !li.is_loop_simplify_form(l, &cfg));
        let (res, stats) = run_pass(&mut LoopSimplify::default(), &mut f);
        assert!(res.changed);
        assert_eq!(stats.get(NAME, "NumLatchesInserted"), 1);
        assert_eq!(stats.get(NAME, "NumPreheadersInserted"), 0);
        let cfg = Cfg::with_function(&f).expect("valid");
        let dt = DomTree::with_function(&f, &cfg);
        let li = LoopInfo::with_function(&f, &cfg, &dt);
        let l = li.loops().next().expect("one loop");
        assert_eq!(li.num_back_edges(l, &cfg), 1);
        assert!(li.is_loop_simplify_form(l, &cfg));
        let (again, _) = run_pass(&mut LoopSimplify::default(), &mut f);
        assert_eq!(again, PassResult::UNCHANGED);
    }

    #[test]
    fn forwarding_respects_loops() {
        // The exit edge passes v3, defined in the loop: the new exit block must take it as
        // a parameter. v1, defined before the loop, is forwarded.
        let src = "kernel @k(i32) {
block0(v0: i32):
    v1 = iconst.i32 0
    v2 = icmp slt v0, v1
    brif v2, block2(v1, v1), block1
block1:
    v3 = iadd v0, v0
    brif v2, block1, block2(v1, v3)
block2(v4: i32, v5: i32):
    return
}
";
        let mut f = gyre_ir::parse_function(src).expect("parses");
        run_pass(&mut LoopSimplify::default(), &mut f);
        let mut out = String::new();
        gyre_ir::write_function(&mut out, &f, None).expect("writes");
        assert!(out.contains("brif v2, block1, block4(v3)"), "{out}");
        assert!(
            out.contains("block4(v6: i32):\n    jump block2(v1, v6)"),
            "{out}"
        );
    }
}
