//! `loop-reduce`: loop strength reduction of addresses (LLVM's `LoopStrengthReduce`, at
//! the scope PTX needs).
//!
//! A kernel's loop typically addresses `a[i*n + j]` as `ptradd a, sext(i*n + j), 4`: a
//! multiply-add (`mad.wide.s32`) and the index arithmetic every iteration. When the
//! address is an affine function of the iteration number, `{start,+,step}` in scalar
//! evolution, the loop can instead carry the pointer itself and add `step` bytes once per
//! iteration, as llc's LSR does (`add.s64 %rd, %rd, 4`).
//!
//! Per innermost loop:
//! 1. **Addresses.** Each load, store and atomic in the loop whose address is a chain of
//!    `ptradd`s defined in the loop over a loop-invariant base pointer is written as
//!    `base + offset`, the offset an `i64` expression: a `ptradd p, x, s` adds `s *
//!    sext(x)`. The sign extension is pushed through `iadd nsw`, `isub nsw`, `imul nsw` and
//!    `shl nsw` by constants (an overflow there is poison, and a poison address makes the
//!    access undefined behaviour: on every iteration where the access runs, the narrow
//!    arithmetic did not wrap, so it equals the wide one); at the leaves it is scalar
//!    evolution's `sext`, which distributes over a recurrence only when no signed wrap is
//!    proven: by the recurrence's `nsw` flag, or here from a constant start and step and a
//!    bound on the loop's backedge-taken count (its signed range, as LLVM's
//!    `getSignExtendExpr` uses the maximum trip count).
//! 2. **Candidates.** An offset that is an add-recurrence `{start,+,step}` of this loop with
//!    `start` and `step` loop-invariant and expandable in the preheader. Accesses with the
//!    same base and step whose starts differ by a constant form one group and share one
//!    pointer IV; each member addresses `ptradd iv, c, 1` (the emitter folds that into
//!    `[%rd+c]`, crates/codegen-lite/src/fold.rs).
//! 3. **Cost.** A group costs one instruction per iteration (the increment at the latch);
//!    it saves the instructions that die when its accesses stop using their old
//!    addresses (counted as the emitter counts them: extensions folded into `mad.wide`,
//!    constants and constant `ptradd`s used only as addresses cost nothing). Groups are
//!    taken greedily by their additional saving, only while it is positive, at most
//!    `lsr-max-ivs` per loop: each pointer IV is a 64-bit register for the whole loop.
//!    With a constant trip count, the saving times the trips must also exceed the
//!    group's start (its preheader instructions, as step 4 expands it).
//! 4. **Rewrite.** The header gets a pointer parameter: the preheader passes the start,
//!    the latch `ptradd iv, step, 1`. The start `base + Σ k·t + c` is expanded as
//!    `ptradd`s of the terms, `ptradd acc, x, k` for a `t = sext(x)` (one `mad.wide.s32`
//!    each, as the unreduced address was, rather than `cvt.s64.s32`, `mul.lo.s64` and
//!    `add.s64` per term), chain prefixes shared between the loop's groups, and the
//!    constant as an immediate add; a start with a negative or wider coefficient is
//!    computed in `i64` and added once. The old index arithmetic left dead, and IV cycles
//!    nothing uses any more, are removed.
//!
//! Every rewritten address equals the old one on every iteration where the access runs,
//! so the loop's behaviour is unchanged (an access that does not run may see any pointer:
//! `ptradd` wraps and never traps). A pointer IV from a uniform base and uniform start
//! and step is as uniform as the index it replaces.

use crate::analyses::Analyses;
use crate::manager::{Forms, LoopPass, LoopUpdater, PassContext, PassError, PassResult};
use crate::utils::loop_dce::{pure, LoopDce};
use crate::utils::uses::{address_of, set_address};
use gyre_analysis::scev::ScevFlags;
use gyre_analysis::{Loop, LoopInfo, ScalarEvolution, Scev, ScevKind};
use gyre_ir::builder::{FuncCursor, InstBuilder};
use gyre_ir::{Block, Function, Inst, InstructionData, IntFlags, Opcode, Type, Value, ValueDef};
use rustc_hash::FxHashMap;

const NAME: &str = "loop-reduce";

/// The most `ptradd`s followed from an access towards its base pointer.
const MAX_CHAIN: usize = 8;

/// The most narrow-index operations the sign extension is pushed through per address.
const MAX_INDEX_OPS: usize = 32;

/// The most candidate groups costed per loop (the greedy choice is quadratic in them).
const MAX_GROUPS: usize = 16;

/// Depth limit of the signed-range evaluation of a backedge-taken count.
const MAX_RANGE_DEPTH: u32 = 8;

/// The `loop-reduce` loop pass.
///
/// **Requires**: the loop in loop-simplify form (a preheader and one latch: the IV's two
/// incoming edges) and LCSSA form (values of the loop leave it only through exit-block
/// parameters, so the dead-code sweep sees every use), as the loop adaptor establishes.
/// Its scalar evolution is computed here, per loop nest.
///
/// **Establishes**: no new loop form; the CFG is not changed, so loop-simplify and LCSSA
/// form are kept (the new parameter is used only inside the loop).
///
/// **Preserves**: the CFG, dominator and post-dominator trees and the loop forest. Not
/// uniformity, scalar evolution or `nonlocal-uses` (new values, new uses).
///
/// **Gives up** (a remark and a counter each): with `disable-lsr` (`Disabled`); loops with
/// subloops (`NotInnermost`: each block is then visited once per function, whatever the
/// nesting depth); loops in or around an irreducible cycle (`Irreducible`); loops without a preheader or one latch
/// (`NotLoopSimplifyForm`). Within a loop an access is left alone when its address is
/// not such a recurrence (non-affine, a base defined in the loop, a narrow index that may
/// wrap, a start or step that cannot be computed in the preheader), and a group when it
/// does not save an instruction per iteration or the loop has `lsr-max-ivs` already.
///
/// **Knobs**: `disable-lsr` (false), `lsr-max-ivs` (4).
///
/// **Stats**: `NumIVs` (pointer IVs created), `NumRewritten` (accesses using one),
/// `NumDeadInsts`, `NumDeadIVs`, `NumNotProfitable` (candidate groups left alone), and one
/// counter per reason for leaving a loop alone.
#[derive(Default)]
pub struct LoopReduce {
    se: ScalarEvolution,
    blocks: Vec<Block>,
    /// Uses of each value by the loop's instructions (for the cost model).
    uses: FxHashMap<Value, u32>,
    dce: LoopDce,
    work: Vec<Value>,
    /// `ptradd acc, t, k` already computed in the current loop's preheader (prefixes of
    /// start chains).
    starts: FxHashMap<(Value, Scev, u32), Value>,
    /// The terms of the start being expanded.
    terms: Vec<(Scev, u32)>,
}

/// One access whose address is an add-recurrence of the loop.
#[derive(Clone, Copy)]
struct Member {
    inst: Inst,
    /// The old address.
    addr: Value,
    /// The constant part of the start, in bytes.
    offset: i64,
}

/// Accesses sharing one pointer IV: same base, same step, starts a constant apart.
struct Group {
    base: Value,
    /// The start without its constant part (`i64`).
    rest: Scev,
    step: Scev,
    members: Vec<Member>,
}

/// Why a loop is left alone.
#[derive(Copy, Clone)]
enum Skip {
    Disabled,
    NotInnermost,
    Irreducible,
    NotLoopSimplifyForm,
}

impl Skip {
    fn kind(self) -> &'static str {
        match self {
            Skip::Disabled => "Disabled",
            Skip::NotInnermost => "NotInnermost",
            Skip::Irreducible => "Irreducible",
            Skip::NotLoopSimplifyForm => "NotLoopSimplifyForm",
        }
    }
    fn counter(self) -> &'static str {
        match self {
            Skip::Disabled => "NumDisabled",
            Skip::NotInnermost => "NumNotInnermost",
            Skip::Irreducible => "NumIrreducible",
            Skip::NotLoopSimplifyForm => "NumNotLoopSimplifyForm",
        }
    }
}

/// The loop being reduced.
struct Ctx {
    l: Loop,
    header: Block,
    preheader: Block,
    latch: Block,
    /// A bound on the backedge-taken count (for no-wrap proofs), if any.
    max_btc: Option<u64>,
}

impl LoopPass for LoopReduce {
    fn name(&self) -> &'static str {
        NAME
    }

    fn establishes(&self) -> Forms {
        Forms {
            loop_simplify: true,
            lcssa: true,
            rotated: false,
        }
    }

    fn run_on_loop(
        &mut self,
        func: &mut Function,
        header: Block,
        cx: &mut PassContext<'_>,
        updater: &mut LoopUpdater,
    ) -> Result<PassResult, PassError> {
        // The visit computes scalar evolution in the loop pipeline's shared buffers
        // (`AnalysisCache::loop_scev`), not in function-sized tables of its own.
        core::mem::swap(&mut self.se, &mut cx.analyses.loop_scev);
        let result = self.visit(func, header, cx, updater);
        core::mem::swap(&mut self.se, &mut cx.analyses.loop_scev);
        result
    }
}

impl LoopReduce {
    /// One visit of the loop headed by `header` ([`LoopPass::run_on_loop`]).
    fn visit(
        &mut self,
        func: &mut Function,
        header: Block,
        cx: &mut PassContext<'_>,
        _updater: &mut LoopUpdater,
    ) -> Result<PassResult, PassError> {
        cx.analyses
            .ensure(func, Analyses::LOOPS)
            .map_err(|e| PassError(format!("{NAME}: @{}: {e}", func.name)))?;
        // Both knobs are read on every run (so each is seen to be in use).
        let disabled = cx.knobs.disable_lsr();
        let max_ivs = cx.knobs.lsr_max_ivs() as usize;
        let skip = |cx: &mut PassContext<'_>, func: &Function, s: Skip, msg: &str| {
            cx.stats.add(NAME, s.counter(), 1);
            cx.remark(NAME, func, Some(header), s.kind(), msg.to_string());
            Ok(PassResult::UNCHANGED)
        };
        if disabled {
            return skip(cx, func, Skip::Disabled, "disable-lsr is set");
        }
        let li = &cx.analyses.loops;
        let cfg = &cx.analyses.cfg;
        let Some(l) = li
            .innermost_loop(header)
            .filter(|&l| li.header(l) == header)
        else {
            return skip(cx, func, Skip::NotLoopSimplifyForm, "no loop here");
        };
        // Innermost loops only: every block is in one innermost loop, so the pass is
        // linear in the function however deep its nests (an outer loop's scan, costs and
        // dead-code sweep would walk all its subloops again).
        if !li.children(l).is_empty() {
            let msg = "the loop has subloops (loop-reduce works on innermost loops)";
            return skip(cx, func, Skip::NotInnermost, msg);
        }
        if li.contains_irreducible(l) || li.in_irreducible_cycle(header) {
            let msg = "the loop is in or around an irreducible cycle";
            return skip(cx, func, Skip::Irreducible, msg);
        }
        let (Some(preheader), Some(latch)) = (li.preheader(l, cfg), li.latch(l)) else {
            let msg = "the loop has no preheader or no single latch";
            return skip(cx, func, Skip::NotLoopSimplifyForm, msg);
        };
        self.se.compute_nest(func, cfg, li, l);
        let max_btc = self.max_btc(func, l);
        let c = Ctx {
            l,
            header,
            preheader,
            latch,
            max_btc,
        };
        self.blocks.clear();
        self.blocks.extend(li.blocks(l));
        let groups = self.candidates(func, li, &c);
        if groups.is_empty() {
            return Ok(PassResult::UNCHANGED);
        }
        let chosen = self.choose(func, li, &c, &groups, max_ivs);
        let rejected = groups.len() - chosen.len();
        cx.stats.add(NAME, "NumNotProfitable", rejected as u64);
        if chosen.is_empty() {
            cx.remark(
                NAME,
                func,
                Some(header),
                "NotProfitable",
                format!(
                    "{rejected} candidate pointer IVs would not pay for their increments and starts"
                ),
            );
            return Ok(PassResult::UNCHANGED);
        }
        let mut ivs = 0u64;
        let mut rewritten = 0u64;
        self.starts.clear();
        for &g in &chosen {
            if self.rewrite(func, li, &c, &groups[g]) {
                ivs += 1;
                rewritten += groups[g].members.len() as u64;
            }
        }
        if ivs == 0 {
            return Ok(PassResult::UNCHANGED);
        }
        cx.stats.add(NAME, "NumIVs", ivs);
        cx.stats.add(NAME, "NumRewritten", rewritten);
        cx.remark(
            NAME,
            func,
            Some(header),
            "Reduced",
            format!("{rewritten} accesses walk {ivs} pointer IVs"),
        );
        self.dead_code(func, cx, &c);
        Ok(PassResult::changed(
            Analyses::CFG
                .union(Analyses::DOMTREE)
                .union(Analyses::POSTDOM)
                .union(Analyses::LOOPS),
        ))
    }
}

/// Append `v` to the arguments of every edge `from → to`.
fn push_edge_arg(func: &mut Function, from: Block, to: Block, v: Value) {
    let t = func.terminator(from).expect("a terminator");
    func.dfg.for_each_dest_mut(t, |bc, pool| {
        if bc.block == to {
            bc.args.push(v, pool);
        }
    });
}

fn sext_bits(x: u64, bits: u32) -> i128 {
    let sh = 64 - bits;
    i128::from(((x << sh) as i64) >> sh)
}

/// Instructions per execution of `i` in PTX, as the emitter counts them: constants, an
/// `i32` extension that becomes part of a `mad.wide`, a constant `ptradd` folded into an
/// address cost nothing.
fn ptx_cost(func: &Function, i: Inst) -> u32 {
    match *func.dfg.inst(i) {
        InstructionData::IntConst { .. } => 0,
        InstructionData::Unary {
            opcode: Opcode::Sext | Opcode::Zext,
            arg,
        } if func.dfg.value_type(arg).bits() <= 32 => 0,
        InstructionData::PtrAdd { args, .. } if is_iconst(func, args[1]).is_some() => 0,
        _ => 1,
    }
}

/// The signed range of the `bits`-wide `v` from its definition: constants and signed
/// minima and maxima of them (what a guarded trip count is computed from).
fn value_range(func: &Function, v: Value, bits: u32, depth: u32) -> (i128, i128) {
    let full = (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1);
    if depth > MAX_RANGE_DEPTH || func.dfg.value_type(v).bits() != bits {
        return full;
    }
    let ValueDef::Result(i) = func.dfg.value_def(v) else {
        return full;
    };
    match *func.dfg.inst(i) {
        InstructionData::IntConst { imm } => {
            let x = sext_bits(imm as u64, bits);
            (x, x)
        }
        InstructionData::Binary {
            opcode: op @ (Opcode::Smax | Opcode::Smin),
            args: [a, b],
            ..
        } => {
            let (ra, rb) = (
                value_range(func, a, bits, depth + 1),
                value_range(func, b, bits, depth + 1),
            );
            if op == Opcode::Smax {
                (ra.0.max(rb.0), ra.1.max(rb.1))
            } else {
                (ra.0.min(rb.0), ra.1.min(rb.1))
            }
        }
        _ => full,
    }
}

fn is_iconst(func: &Function, v: Value) -> Option<i64> {
    match func.dfg.value_def(v) {
        ValueDef::Result(i) => match *func.dfg.inst(i) {
            InstructionData::IntConst { imm } => Some(imm),
            _ => None,
        },
        _ => None,
    }
}

impl LoopReduce {
    /// A bound on the backedge-taken count of `l`: scalar evolution's constant maximum,
    /// or the largest value of the exact count's signed range when that is smaller (a
    /// count `(1 smax n) - 1` is at most `2^31 - 2` on `i32`).
    fn max_btc(&self, func: &Function, l: Loop) -> Option<u64> {
        let from_se = self.se.max_backedge_taken_count(l);
        let from_range = self.se.backedge_taken_count(l).and_then(|s| {
            let (lo, hi) = self.signed_range(func, s, 0);
            (lo >= 0).then_some(hi as u64)
        });
        match (from_se, from_range) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// The signed range of `s` (conservative; the whole type when unknown).
    fn signed_range(&self, func: &Function, s: Scev, depth: u32) -> (i128, i128) {
        let bits = self.se.bits(s);
        let full = (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1);
        if depth > MAX_RANGE_DEPTH {
            return full;
        }
        let in_type = |r: (i128, i128)| {
            if r.0 >= full.0 && r.1 <= full.1 {
                r
            } else {
                full
            }
        };
        match self.se.kind(s) {
            ScevKind::Const => {
                let x = sext_bits(self.se.as_const(s).unwrap_or(0), bits);
                (x, x)
            }
            ScevKind::Add => {
                let mut acc = (0i128, 0i128);
                for &o in self.se.operands(s) {
                    let r = self.signed_range(func, o, depth + 1);
                    acc = in_type((acc.0 + r.0, acc.1 + r.1));
                }
                acc
            }
            ScevKind::SMax => {
                let mut acc = (full.0, full.0);
                for &o in self.se.operands(s) {
                    let r = self.signed_range(func, o, depth + 1);
                    acc = (acc.0.max(r.0), acc.1.max(r.1));
                }
                acc
            }
            ScevKind::SMin => {
                let mut acc = (full.1, full.1);
                for &o in self.se.operands(s) {
                    let r = self.signed_range(func, o, depth + 1);
                    acc = (acc.0.min(r.0), acc.1.min(r.1));
                }
                acc
            }
            ScevKind::ZExt => {
                let o = self.se.operands(s)[0];
                let ob = self.se.bits(o);
                in_type((0, (1i128 << ob) - 1))
            }
            ScevKind::SExt => {
                let o = self.se.operands(s)[0];
                self.signed_range(func, o, depth + 1)
            }
            // A value defined outside the computed nest: its own min/max, if it is one.
            ScevKind::Unknown => match self.se.as_unknown(s) {
                Some(v) => value_range(func, v, bits, depth + 1),
                None => full,
            },
            _ => full,
        }
    }

    /// `sext(v)` (`zext(v)` unless `signed`) to `i64` as an expression of the loop, pushed
    /// through narrow arithmetic that cannot wrap (`nsw`; `nuw` for `zext`; see the module
    /// doc); `None` if some part is not classified.
    fn ext_index(&mut self, func: &Function, c: &Ctx, v: Value, signed: bool) -> Option<Scev> {
        // The flag that makes narrow arithmetic exact for this extension.
        let exact = if signed { IntFlags::NSW } else { IntFlags::NUW };
        let ext_op = if signed { Opcode::Sext } else { Opcode::Zext };
        let mut stack: Vec<(Value, u64)> = vec![(v, 1)];
        let mut terms: Vec<Scev> = Vec::new();
        let mut ops = 0;
        while let Some((x, coef)) = stack.pop() {
            ops += 1;
            if ops > MAX_INDEX_OPS {
                return None;
            }
            let bits = func.dfg.value_type(x).bits();
            if let ValueDef::Result(i) = func.dfg.value_def(x) {
                match *func.dfg.inst(i) {
                    InstructionData::Binary {
                        opcode,
                        args: [a, b],
                        flags,
                    } if flags.contains(exact) => {
                        let k = is_iconst(func, b);
                        match (opcode, k) {
                            (Opcode::Iadd, _) => {
                                stack.push((a, coef));
                                stack.push((b, coef));
                                continue;
                            }
                            (Opcode::Isub, _) => {
                                stack.push((a, coef));
                                stack.push((b, coef.wrapping_neg()));
                                continue;
                            }
                            (Opcode::Imul, Some(k)) => {
                                // The constant as the extension reads it.
                                let k = if signed {
                                    sext_bits(k as u64, bits) as u64
                                } else {
                                    (k as u64) & (u64::MAX >> (64 - bits))
                                };
                                stack.push((a, coef.wrapping_mul(k)));
                                continue;
                            }
                            // `shl nsw` by less than the width - 1 is a non-wrapping
                            // multiplication by a positive power of two (`shl nuw` by
                            // less than the width, one by any power of two).
                            (Opcode::Shl, Some(k))
                                if k >= 0 && (k as u32) + u32::from(signed) < bits =>
                            {
                                stack.push((a, coef.wrapping_shl(k as u32)));
                                continue;
                            }
                            _ => {}
                        }
                    }
                    InstructionData::Unary { opcode, arg } if opcode == ext_op => {
                        stack.push((arg, coef));
                        continue;
                    }
                    _ => {}
                }
            }
            let leaf = self.ext_leaf(func, x, c, signed)?;
            let k = self.se.constant(64, coef);
            let t = self.se.mul(k, leaf);
            terms.push(t);
        }
        let mut acc = self.se.constant(64, 0);
        for t in terms {
            acc = self.se.add(acc, t);
        }
        Some(acc)
    }

    /// `sext(x)` (`zext(x)`) to `i64` of one leaf of an index: scalar evolution's
    /// extension, or, for a recurrence of this loop with a constant start and step that
    /// cannot leave the signed (unsigned) range within the loop's iterations, the
    /// extended recurrence.
    fn ext_leaf(&mut self, func: &Function, x: Value, c: &Ctx, signed: bool) -> Option<Scev> {
        if !func.dfg.value_type(x).is_int() {
            return None;
        }
        let s = self.se.value_or_unknown(func, x);
        let bits = self.se.bits(s);
        if bits >= 64 {
            return Some(s);
        }
        let (e, kind) = if signed {
            (self.se.sext(s, 64), ScevKind::SExt)
        } else {
            (self.se.zext(s, 64), ScevKind::ZExt)
        };
        if self.se.kind(e) != kind || self.se.addrec_loop(s) != Some(c.l) {
            return Some(e);
        }
        let (start, step) = (self.se.operands(s)[0], self.se.operands(s)[1]);
        let (Some(a), Some(t), Some(m)) =
            (self.se.as_const(start), self.se.as_const(step), c.max_btc)
        else {
            return Some(e);
        };
        let (a, t) = if signed {
            (sext_bits(a, bits), sext_bits(t, bits))
        } else {
            (
                i128::from(a & (u64::MAX >> (64 - bits))),
                sext_bits(t, bits),
            )
        };
        // The values of iterations 0..=m lie between the two ends.
        let end = a + t * i128::from(m);
        let (lo, hi) = if signed {
            (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
        } else {
            (0, (1i128 << bits) - 1)
        };
        if end < lo || end > hi {
            return Some(e);
        }
        let a64 = self.se.constant(64, a as u64);
        let t64 = self.se.constant(64, t as u64);
        let flags = if signed {
            ScevFlags::NSW
        } else {
            ScevFlags::NONE
        };
        Some(self.se.addrec(a64, t64, c.l, flags))
    }

    /// The offset of `idx` scaled in a `ptradd` (`i64`).
    fn index_offset(&mut self, func: &Function, c: &Ctx, idx: Value) -> Option<Scev> {
        if func.dfg.value_type(idx).bits() < 64 {
            return self.ext_index(func, c, idx, true);
        }
        if let ValueDef::Result(i) = func.dfg.value_def(idx) {
            if let InstructionData::Unary {
                opcode: op @ (Opcode::Sext | Opcode::Zext),
                arg,
            } = *func.dfg.inst(i)
            {
                return self.ext_index(func, c, arg, op == Opcode::Sext);
            }
        }
        // `i64` arithmetic wraps as pointers do: its expression is exact.
        Some(self.se.value_or_unknown(func, idx))
    }

    /// `addr` as `base + offset`: the `ptradd` chain inside the loop followed to a base
    /// defined outside it.
    fn decompose(
        &mut self,
        func: &Function,
        li: &LoopInfo,
        c: &Ctx,
        addr: Value,
    ) -> Option<(Value, Scev)> {
        let mut v = addr;
        let mut off = self.se.constant(64, 0);
        for _ in 0..MAX_CHAIN {
            match func.dfg.value_def(v) {
                ValueDef::Result(i) => {
                    let b = func.layout.inst_block(i)?;
                    if !li.contains(c.l, b) {
                        return Some((v, off));
                    }
                    let InstructionData::PtrAdd { args, scale } = *func.dfg.inst(i) else {
                        return None;
                    };
                    let x = self.index_offset(func, c, args[1])?;
                    let k = self.se.constant(64, u64::from(scale));
                    let t = self.se.mul(k, x);
                    off = self.se.add(off, t);
                    v = args[0];
                }
                ValueDef::Param(b, _) => {
                    return (!li.contains(c.l, b)).then_some((v, off));
                }
                ValueDef::Detached => return None,
            }
        }
        None
    }

    /// The groups of accesses whose addresses are recurrences of the loop.
    fn candidates(&mut self, func: &Function, li: &LoopInfo, c: &Ctx) -> Vec<Group> {
        let mut groups: Vec<Group> = Vec::new();
        let Some(at) = func.terminator(c.preheader) else {
            return groups;
        };
        let outside = |d: Block, _: Block| !li.contains(c.l, d);
        for bi in 0..self.blocks.len() {
            let b = self.blocks[bi];
            for i in func.layout.block_insts(b) {
                let Some(addr) = address_of(func.dfg.inst(i)) else {
                    continue;
                };
                // Only addresses computed in the loop: one already invariant costs nothing.
                let ValueDef::Result(ai) = func.dfg.value_def(addr) else {
                    continue;
                };
                if !func
                    .layout
                    .inst_block(ai)
                    .is_some_and(|ab| li.contains(c.l, ab))
                {
                    continue;
                }
                let Some((base, off)) = self.decompose(func, li, c, addr) else {
                    continue;
                };
                if self.se.addrec_loop(off) != Some(c.l) {
                    continue;
                }
                let (start, step) = (self.se.operands(off)[0], self.se.operands(off)[1]);
                if !self.se.is_invariant(start, c.l)
                    || !self.se.is_invariant(step, c.l)
                    || self.se.as_const(step) == Some(0)
                {
                    continue;
                }
                // Split the start into its constant part and the rest.
                let (offset, rest) = match self.se.kind(start) {
                    ScevKind::Const => (self.se.as_const(start).unwrap_or(0) as i64, None),
                    ScevKind::Add => match self.se.as_const(self.se.operands(start)[0]) {
                        Some(k) => (k as i64, None),
                        None => (0, Some(start)),
                    },
                    _ => (0, Some(start)),
                };
                let rest = match rest {
                    Some(r) => r,
                    None => {
                        let k = self.se.constant(64, offset as u64);
                        self.se.sub(start, k)
                    }
                };
                if !self.se.can_expand_with(func, outside, rest, at)
                    || !self.se.can_expand_with(func, outside, step, at)
                {
                    continue;
                }
                let m = Member {
                    inst: i,
                    addr,
                    offset,
                };
                match groups
                    .iter_mut()
                    .find(|g| g.base == base && g.rest == rest && g.step == step)
                {
                    Some(g) => g.members.push(m),
                    None => {
                        if groups.len() < MAX_GROUPS {
                            groups.push(Group {
                                base,
                                rest,
                                step,
                                members: vec![m],
                            });
                        }
                    }
                }
            }
        }
        groups
    }

    /// The per-iteration PTX instructions that die when the accesses of `chosen` stop
    /// using their addresses.
    fn saving(
        &mut self,
        func: &Function,
        li: &LoopInfo,
        c: &Ctx,
        groups: &[Group],
        chosen: &[usize],
    ) -> u32 {
        let mut uses = std::mem::take(&mut self.uses);
        let mut work = std::mem::take(&mut self.work);
        uses.clear();
        work.clear();
        for &b in &self.blocks {
            for i in func.layout.block_insts(b) {
                for &a in func.dfg.inst_args(i) {
                    *uses.entry(a).or_default() += 1;
                }
                func.dfg.for_each_dest(i, |bc| {
                    for &a in func.dfg.block_call_args(bc) {
                        *uses.entry(a).or_default() += 1;
                    }
                });
            }
        }
        for &g in chosen {
            for m in &groups[g].members {
                work.push(m.addr);
            }
        }
        let mut saved = 0;
        while let Some(v) = work.pop() {
            let n = uses.entry(v).or_default();
            *n = n.saturating_sub(1);
            if *n > 0 {
                continue;
            }
            let ValueDef::Result(i) = func.dfg.value_def(v) else {
                continue;
            };
            let in_loop = func
                .layout
                .inst_block(i)
                .is_some_and(|b| li.contains(c.l, b));
            if !in_loop || !pure(func, i) {
                continue;
            }
            saved += ptx_cost(func, i);
            work.extend_from_slice(func.dfg.inst_args(i));
        }
        self.uses = uses;
        self.work = work;
        saved
    }

    /// The groups worth an IV: greedily by additional saving, while it exceeds the one
    /// increment a group costs, at most `max_ivs`.
    fn choose(
        &mut self,
        func: &Function,
        li: &LoopInfo,
        c: &Ctx,
        groups: &[Group],
        max_ivs: usize,
    ) -> Vec<usize> {
        let mut chosen: Vec<usize> = Vec::new();
        let mut base = 0i64;
        // With a known trip count, a group must also pay for its start (computed once
        // per entry to the loop): its gain per iteration times the trips must exceed it.
        let trips = self
            .se
            .backedge_taken_count(c.l)
            .and_then(|b| self.se.as_const(b))
            .and_then(|b| i64::try_from(b).ok())
            .map(|b| b.saturating_add(1));
        let start_costs: Vec<i64> = match trips {
            Some(_) => groups.iter().map(|g| self.start_cost(g)).collect(),
            None => vec![0; groups.len()],
        };
        while chosen.len() < max_ivs {
            let mut best: Option<(i64, usize)> = None;
            for (g, &start) in start_costs.iter().enumerate() {
                if chosen.contains(&g) {
                    continue;
                }
                chosen.push(g);
                let gain = i64::from(self.saving(func, li, c, groups, &chosen)) - base - 1;
                chosen.pop();
                let pays = trips.is_none_or(|t| gain.saturating_mul(t) > start);
                if gain > 0 && pays && best.is_none_or(|(b, _)| gain > b) {
                    best = Some((gain, g));
                }
            }
            let Some((gain, g)) = best else { break };
            chosen.push(g);
            base += gain + 1;
        }
        if chosen.is_empty() && groups.len() <= max_ivs {
            // Groups sharing index arithmetic may only pay off together.
            let all: Vec<usize> = (0..groups.len()).collect();
            let gain = i64::from(self.saving(func, li, c, groups, &all)) - groups.len() as i64;
            let start: i64 = start_costs.iter().sum();
            if gain > 0 && trips.is_none_or(|t| gain.saturating_mul(t) > start) {
                chosen = all;
            }
        }
        chosen.sort_unstable();
        chosen
    }

    /// The preheader instructions `g`'s start costs, as `rewrite` expands it: one
    /// `ptradd` (a `mad.wide`) per term, an add for a constant part, and for a start
    /// expanded whole in 64-bit arithmetic, about three per part (`cvt`, `mul.lo`, `add`).
    fn start_cost(&mut self, g: &Group) -> i64 {
        let lead = g.members.iter().map(|m| m.offset).min().unwrap_or(0);
        if self.se.as_const(g.rest) == Some(0) {
            return i64::from(lead != 0);
        }
        match self.start_terms(g.rest) {
            Some(k) => self.terms.len() as i64 + i64::from(lead.wrapping_add(k) != 0),
            None => 3 * self.se.operands(g.rest).len().max(1) as i64 + 1,
        }
    }

    /// `s` (an `i64` start) as a sum of `k * t` terms with `0 < k <= i32::MAX` (each one
    /// `ptradd acc, t, k`: a `mad.wide` when `t` is an extension of an `i32`) and a
    /// constant, into `self.terms`; `None` (and the caller expands `s` whole) for a
    /// negative or too large coefficient, or more than `MAX_INDEX_OPS` parts.
    fn start_terms(&mut self, s: Scev) -> Option<i64> {
        let se = &self.se;
        let terms = &mut self.terms;
        terms.clear();
        let mut stack: Vec<(Scev, i128)> = vec![(s, 1)];
        let mut konst: i128 = 0;
        let mut n = 0;
        while let Some((x, k)) = stack.pop() {
            n += 1;
            if n > MAX_INDEX_OPS || i64::try_from(k).is_err() {
                return None;
            }
            match se.kind(x) {
                ScevKind::Const => {
                    konst += k * i128::from(se.as_const(x).unwrap_or(0) as i64);
                    continue;
                }
                ScevKind::Add => {
                    for &o in se.operands(x) {
                        stack.push((o, k));
                    }
                    continue;
                }
                ScevKind::Mul if se.operands(x).len() == 2 => {
                    if let Some(m) = se.as_const(se.operands(x)[0]) {
                        stack.push((se.operands(x)[1], k * i128::from(m as i64)));
                        continue;
                    }
                }
                _ => {}
            }
            let k = u32::try_from(k)
                .ok()
                .filter(|&k| k > 0 && k <= i32::MAX as u32)?;
            terms.push((x, k));
        }
        i64::try_from(konst).ok()
    }

    /// Give the loop one pointer IV for `g` and make its accesses use it.
    fn rewrite(&mut self, func: &mut Function, li: &LoopInfo, c: &Ctx, g: &Group) -> bool {
        let Some(at) = func.terminator(c.preheader) else {
            return false;
        };
        let outside = |d: Block, _: Block| !li.contains(c.l, d);
        let lead = g.members.iter().map(|m| m.offset).min().unwrap_or(0);
        let step_const = self.se.as_const(g.step);
        // Check both before changing anything.
        if !self.se.can_expand_with(func, outside, g.rest, at)
            || !self.se.can_expand_with(func, outside, g.step, at)
        {
            return false;
        }
        // The start is `base + rest + lead`: each `k * sext(x)` of `rest` as `ptradd acc,
        // x, k` (one `mad.wide.s32`, as the unreduced address was; a `zext` one
        // `mad.wide.u32`), each chain prefix computed once per loop, then the constant
        // (an immediate `add.s64`); a zero part is no instruction.
        let split = self.start_terms(g.rest).filter(|_| {
            self.terms
                .iter()
                .all(|&(t, _)| self.se.can_expand_with(func, outside, t, at))
        });
        let (p_rest, konst) = match split {
            _ if self.se.as_const(g.rest) == Some(0) => (g.base, 0),
            Some(konst) => {
                let mut acc = g.base;
                for ti in 0..self.terms.len() {
                    let (t, k) = self.terms[ti];
                    if let Some(&p) = self.starts.get(&(acc, t, k)) {
                        acc = p;
                        continue;
                    }
                    // A sign extension's operand: `ptradd` sign-extends a narrow index.
                    let e = if self.se.kind(t) == ScevKind::SExt {
                        self.se.operands(t)[0]
                    } else {
                        t
                    };
                    let Some(v) = self.se.expand_with(func, outside, e, at) else {
                        return false;
                    };
                    let p = FuncCursor::new(func).before_inst(at).ptradd(acc, v, k);
                    self.starts.insert((acc, t, k), p);
                    acc = p;
                }
                (acc, konst)
            }
            None => {
                let Some(v) = self.se.expand_with(func, outside, g.rest, at) else {
                    return false;
                };
                let p = FuncCursor::new(func).before_inst(at).ptradd(g.base, v, 1);
                (p, 0)
            }
        };
        // The members address `iv + (offset - lead)`.
        let start_off = lead.wrapping_add(konst);
        let p0 = if start_off == 0 {
            p_rest
        } else {
            let mut cur = FuncCursor::new(func).before_inst(at);
            let k = cur.iconst(Type::I64, start_off);
            cur.ptradd(p_rest, k, 1)
        };
        let step_v = match step_const {
            Some(_) => None,
            None => self.se.expand_with(func, outside, g.step, at),
        };
        let ty = func.dfg.value_type(g.base);
        let iv = func.dfg.append_block_param(c.header, ty);
        push_edge_arg(func, c.preheader, c.header, p0);
        let latch_term = func.terminator(c.latch).expect("a terminator");
        let mut cur = FuncCursor::new(func).before_inst(latch_term);
        let step = match (step_const, step_v) {
            (Some(t), _) => cur.iconst(Type::I64, t as i64),
            (None, Some(v)) => v,
            (None, None) => unreachable!("checked expandable"),
        };
        let next = cur.ptradd(iv, step, 1);
        push_edge_arg(func, c.latch, c.header, next);
        for m in &g.members {
            let p = if m.offset == lead {
                iv
            } else {
                let mut cur = FuncCursor::new(func).before_inst(m.inst);
                let d = cur.iconst(Type::I64, m.offset.wrapping_sub(lead));
                cur.ptradd(iv, d, 1)
            };
            set_address(func, m.inst, p);
        }
        true
    }

    /// Remove the loop's instructions and block parameters nothing live uses.
    fn dead_code(&mut self, func: &mut Function, cx: &mut PassContext<'_>, c: &Ctx) {
        let r = self.dce.run(
            func,
            &cx.analyses.cfg,
            &cx.analyses.loops,
            c.l,
            c.header,
            &self.blocks,
        );
        cx.stats.add(NAME, "NumDeadInsts", r.insts);
        cx.stats.add(NAME, "NumDeadIVs", r.header_params);
    }
}
