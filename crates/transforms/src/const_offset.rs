//! `separate-const-offset`: share one address computation among accesses whose indices
//! differ by a constant (LLVM's `SeparateConstOffsetFromGEP` as NVPTX runs it before
//! codegen, at the scope the corpus needs).
//!
//! A stencil addresses `a[(i+1)*W + j]`, `a[i*W + j]`, `a[i*W + j+1]` as `ptradd a,
//! sext(x), 4` each, with its own index arithmetic and its own `mad.wide.s32` per access.
//! llc computes `i*W + j` once and folds the rest into the address immediates
//! (`[%rd+8192]`, `[%rd+4]`). Here:
//!
//! 1. **Index forms.** The index `x` of an access's `ptradd p, x, s` (an `i64`, or
//!    `sext` of a narrower integer) is written as a linear form `c + Σ k·leaf` through
//!    `iadd nsw`, `isub nsw`, and `imul nsw`/`shl nsw` by constants (the `sext` pushed
//!    through them as in `loop-reduce`: an overflow is poison, and a poison address makes
//!    the access undefined, so wherever the access runs, the narrow arithmetic is the
//!    exact one). An `i64` index needs no flag: its arithmetic wraps modulo 2^64 as the
//!    pointer's does, so its form is exact modulo 2^64, which is all an address needs.
//! 2. **Anchors.** Walking the blocks in dominator-tree preorder, each access whose index
//!    form is new (by its non-constant part) becomes the anchor of that part. A later
//!    access that the anchor dominates, with the same non-constant part and constant `c'`
//!    where the anchor has `c`, addresses `ptradd (ptradd p, x_anchor, s), (c'-c)·s, 1`:
//!    the inner `ptradd` is the anchor's own address when it has the same base and scale
//!    (else one is made and reused by later accesses it dominates), and the emitter folds
//!    the constant one into `[%rd+imm]` (crates/codegen-lite/src/fold.rs). An anchor
//!    whose own index is `y + k` (`iadd nsw`/`isub nsw` of constants under the `sext`)
//!    anchors `sext y` instead and addresses `[..+k·s]` itself: `a[i-1]`, `a[i]`,
//!    `a[i+1]` then all use `i`, whichever comes first.
//!
//! **Why it is exact.** When the rewritten access runs, the anchor ran before it (it
//! dominates it), with the same leaf values (each leaf's definition dominates the
//! anchor's index, which dominates the access, so no leaf is redefined in between without
//! the anchor's index being redefined too). The anchor's address was not poison, so its
//! index arithmetic did not wrap: `x_anchor = c + L` exactly. Likewise the access's own
//! index is `c' + L` exactly (or the access is undefined anyway). So `p + s·x = p +
//! s·x_anchor + (c'-c)·s` as 64-bit pointer arithmetic.
//!
//! **Requires**: nothing (any CFG; unreachable blocks are left alone).
//! **Establishes**: nothing new. **Preserves**: the CFG, dominator trees and loop forest
//! (only instructions are added, and access addresses replaced); not uniformity or
//! `nonlocal-uses`. The old addresses nothing uses any more are removed, with the pure
//! index arithmetic only they used.
//! **Gives up** on an access whose index form has more than `MAX_INDEX_OPS` operations or
//! `MAX_TERMS` leaves, a coefficient or constant beyond `i64`, or a byte offset `(c'-c)·s`
//! that does not fit PTX's signed 32-bit address immediate.
//! **Knobs**: `disable-separate-const-offset` (false).
//! **Stats**: `NumAnchors` (index forms seen first), `NumRewritten` (accesses moved onto
//! an anchor), `NumNewBases` (inner `ptradd`s made).

use crate::analyses::Analyses;
use crate::manager::{FunctionPass, PassContext, PassError, PassResult};
use crate::utils::loop_dce::pure;
use crate::utils::uses::{address_of, set_address};
use gyre_ir::builder::{FuncCursor, InstBuilder};
use gyre_ir::{
    Block, Function, InstructionData, IntFlags, Opcode, SecondaryMap, Type, Value, ValueDef,
};
use rustc_hash::FxHashMap;

const NAME: &str = "separate-const-offset";

/// The most operations followed per index.
const MAX_INDEX_OPS: usize = 32;

/// The most distinct leaves of an index form.
const MAX_TERMS: usize = 8;

/// An index form's non-constant part, and how the `ptradd` reads the index: the width of
/// the sign-extended value (64 for an `i64` index).
#[derive(Clone, PartialEq, Eq, Hash)]
struct Key {
    terms: Box<[(Value, i64)]>,
    bits: u32,
}

/// The first access of an index form.
#[derive(Clone, Copy)]
struct Anchor {
    /// Its block (valid for accesses in blocks it dominates).
    block: Block,
    /// The `ptradd` index value (`sext x` or the `i64`), or with `narrow` the value it
    /// sign-extends.
    index: Value,
    /// `index` is narrow: a `sext` of it is made at its first use (see `sext_of`).
    narrow: bool,
    /// The constant part of its form.
    c: i64,
}

/// The `separate-const-offset` function pass.
///
/// **Requires** / **establishes** / **preserves** / **gives up** / **knobs** / **stats**:
/// see the module documentation.
#[derive(Default)]
pub struct SeparateConstOffset {
    anchors: FxHashMap<Key, Anchor>,
    /// `ptradd base, index, scale` values available from a block on.
    bases: FxHashMap<(Value, Value, u32), (Block, Value)>,
    stack: Vec<(Value, i128)>,
    terms: Vec<(Value, i128)>,
    /// Old addresses of rewritten accesses (dead-code roots).
    dead: Vec<Value>,
    /// `sext.i64 y` made for an anchor's narrow `y`, right after `y`'s definition.
    sexts: FxHashMap<Value, Value>,
    /// Uses of each value (operands and branch arguments).
    uses: SecondaryMap<Value, u32>,
}

impl FunctionPass for SeparateConstOffset {
    fn name(&self) -> &'static str {
        NAME
    }

    fn run(
        &mut self,
        func: &mut Function,
        cx: &mut PassContext<'_>,
    ) -> Result<PassResult, PassError> {
        if cx.knobs.disable_separate_const_offset() {
            return Ok(PassResult::UNCHANGED);
        }
        cx.analyses
            .ensure(func, Analyses::DOMTREE)
            .map_err(|e| PassError(format!("{NAME}: @{}: {e}", func.name)))?;
        let dt = &cx.analyses.domtree;
        self.anchors.clear();
        self.bases.clear();
        self.dead.clear();
        self.sexts.clear();
        count_uses(func, &mut self.uses);
        let (mut anchors, mut rewritten, mut new_bases) = (0u64, 0u64, 0u64);
        for bi in 0..dt.preorder().len() {
            let b = dt.preorder()[bi];
            let mut cur = func.layout.first_inst(b);
            while let Some(i) = cur {
                cur = func.layout.next_inst(i);
                let Some(addr) = address_of(func.dfg.inst(i)) else {
                    continue;
                };
                let ValueDef::Result(ai) = func.dfg.value_def(addr) else {
                    continue;
                };
                let InstructionData::PtrAdd { args, scale } = *func.dfg.inst(ai) else {
                    continue;
                };
                let [p, x] = args;
                if p == x {
                    continue;
                }
                let Some((key, c)) = self.form(func, x) else {
                    continue;
                };
                let found = self
                    .anchors
                    .get(&key)
                    .copied()
                    .filter(|a| dt.dominates(a.block, b));
                let a = match found {
                    Some(a) => a,
                    None => {
                        // The first access of this form here (an anchor from a block that
                        // does not dominate this one is stale: preorder has left its
                        // subtree). Its own constant addend, if any, moves into the
                        // address too, as the emitter's `Fold::Shifted` does for one
                        // access: `a[i-1]` anchors `i`, and `a[i]`, `a[i+1]` use it.
                        let peeled = peel(func, x).filter(|&(_, k)| {
                            i32::try_from(i128::from(k) * i128::from(scale)).is_ok()
                        });
                        let a = match peeled {
                            Some((y, k)) => Anchor {
                                block: b,
                                index: y,
                                narrow: func.dfg.value_type(y) != Type::I64,
                                c: c - k,
                            },
                            None => {
                                self.bases.insert((p, x, scale), (b, addr));
                                Anchor {
                                    block: b,
                                    index: x,
                                    narrow: false,
                                    c,
                                }
                            }
                        };
                        self.anchors.insert(key, a);
                        anchors += 1;
                        a
                    }
                };
                if !a.narrow && a.index == x && a.c == c {
                    continue;
                }
                let Some(off) = (c as i128)
                    .checked_sub(a.c as i128)
                    .map(|d| d * i128::from(scale))
                    .filter(|d| i32::try_from(*d).is_ok())
                else {
                    continue;
                };
                // An address shared with other accesses stays: a new base for this one
                // alone would cost a `mad.wide` more.
                let made = if a.narrow {
                    self.sexts.get(&a.index).copied()
                } else {
                    Some(a.index)
                };
                let has_base = made
                    .and_then(|ix| self.bases.get(&(p, ix, scale)))
                    .is_some_and(|&(bb, _)| dt.dominates(bb, b));
                if self.uses[addr] != 1 && !has_base {
                    continue;
                }
                let index = if a.narrow {
                    self.sext_of(func, a.index)
                } else {
                    a.index
                };
                let q = match self
                    .bases
                    .get(&(p, index, scale))
                    .copied()
                    .filter(|&(bb, _)| dt.dominates(bb, b))
                {
                    Some((_, q)) => q,
                    None => {
                        let q = FuncCursor::new(func).before_inst(i).ptradd(p, index, scale);
                        self.bases.insert((p, index, scale), (b, q));
                        new_bases += 1;
                        q
                    }
                };
                let np = if off == 0 {
                    q
                } else {
                    let mut cur = FuncCursor::new(func).before_inst(i);
                    let k = cur.iconst(Type::I64, off as i64);
                    cur.ptradd(q, k, 1)
                };
                set_address(func, i, np);
                self.uses[addr] -= 1;
                self.dead.push(addr);
                rewritten += 1;
            }
        }
        cx.stats.add(NAME, "NumAnchors", anchors);
        cx.stats.add(NAME, "NumRewritten", rewritten);
        cx.stats.add(NAME, "NumNewBases", new_bases);
        if rewritten == 0 {
            return Ok(PassResult::UNCHANGED);
        }
        let removed = self.remove_dead(func);
        cx.stats.add(NAME, "NumDeadInsts", removed);
        Ok(PassResult::changed(
            Analyses::CFG
                .union(Analyses::DOMTREE)
                .union(Analyses::POSTDOM)
                .union(Analyses::LOOPS),
        ))
    }
}

impl SeparateConstOffset {
    /// `sext.i64 y`, made once, right after `y`'s definition (so it is available wherever
    /// `y` is).
    fn sext_of(&mut self, func: &mut Function, y: Value) -> Value {
        if let Some(&v) = self.sexts.get(&y) {
            return v;
        }
        let at = match func.dfg.value_def(y) {
            ValueDef::Result(d) => func.layout.next_inst(d),
            ValueDef::Param(b, _) => func.layout.first_inst(b),
            ValueDef::Detached => None,
        }
        .expect("a defined value in a laid-out block has an instruction after it");
        let v = FuncCursor::new(func).before_inst(at).sext(Type::I64, y);
        self.sexts.insert(y, v);
        v
    }

    /// Remove the old addresses nothing uses any more, and the pure index arithmetic only
    /// they used. One count of uses over the function, then a worklist: O(instructions).
    fn remove_dead(&mut self, func: &mut Function) -> u64 {
        count_uses(func, &mut self.uses);
        let uses = &mut self.uses;
        let mut removed = 0;
        while let Some(v) = self.dead.pop() {
            if uses[v] > 0 {
                continue;
            }
            let ValueDef::Result(i) = func.dfg.value_def(v) else {
                continue;
            };
            if !pure(func, i) || func.layout.inst_block(i).is_none() {
                continue;
            }
            for &a in func.dfg.inst_args(i) {
                uses[a] -= 1;
                if uses[a] == 0 {
                    self.dead.push(a);
                }
            }
            func.layout.remove_inst(i);
            removed += 1;
        }
        removed
    }

    /// The linear form of the `ptradd` index `x`: its non-constant part and its constant,
    /// exact wherever an access using the address runs.
    fn form(&mut self, func: &Function, x: Value) -> Option<(Key, i64)> {
        // An `i64` index is linear as it is; a `sext` one through its narrow operand.
        let (root, bits) = match func.dfg.value_def(x) {
            ValueDef::Result(i) => match *func.dfg.inst(i) {
                InstructionData::Unary {
                    opcode: Opcode::Sext,
                    arg,
                } => (arg, func.dfg.value_type(arg).bits()),
                _ => (x, func.dfg.value_type(x).bits()),
            },
            _ => (x, func.dfg.value_type(x).bits()),
        };
        if func.dfg.value_type(x) != Type::I64 {
            return None;
        }
        let stack = &mut self.stack;
        let terms = &mut self.terms;
        stack.clear();
        terms.clear();
        stack.push((root, 1));
        let mut c: i128 = 0;
        let mut ops = 0;
        let fits = |v: i128| i64::try_from(v).is_ok();
        while let Some((v, k)) = stack.pop() {
            ops += 1;
            if ops > MAX_INDEX_OPS || !fits(k) {
                return None;
            }
            if let Some(imm) = iconst(func, v) {
                c += k * sext_bits(imm as u64, func.dfg.value_type(v).bits());
                if !fits(c) {
                    return None;
                }
                continue;
            }
            if let ValueDef::Result(i) = func.dfg.value_def(v) {
                if let InstructionData::Binary {
                    opcode,
                    args: [a, b],
                    flags,
                } = *func.dfg.inst(i)
                {
                    // `i64` arithmetic wraps as the pointer does: exact without a flag.
                    let w = func.dfg.value_type(v).bits();
                    if w == 64 || flags.contains(IntFlags::NSW) {
                        let ka = iconst(func, a).map(|m| sext_bits(m as u64, w));
                        let kb = iconst(func, b).map(|m| sext_bits(m as u64, w));
                        match opcode {
                            Opcode::Iadd => {
                                stack.push((a, k));
                                stack.push((b, k));
                                continue;
                            }
                            Opcode::Isub => {
                                stack.push((a, k));
                                stack.push((b, -k));
                                continue;
                            }
                            Opcode::Imul if kb.is_some() || ka.is_some() => {
                                let (y, m) = match kb {
                                    Some(m) => (a, m),
                                    None => (b, ka.expect("one constant")),
                                };
                                stack.push((y, k * m));
                                continue;
                            }
                            // `shl nsw` by less than the width - 1 multiplies by a
                            // positive power of two without signed overflow (an `i64`
                            // one by less than 63 too, modulo 2^64).
                            Opcode::Shl if kb.is_some_and(|s| s >= 0 && s + 1 < i128::from(w)) => {
                                stack.push((a, k << kb.expect("checked")));
                                continue;
                            }
                            _ => {}
                        }
                    }
                }
            }
            match terms.iter_mut().find(|t| t.0 == v) {
                Some(t) => t.1 += k,
                None => terms.push((v, k)),
            }
        }
        terms.retain(|t| t.1 != 0);
        // A constant index is already an immediate; a form over more leaves is left alone.
        if terms.is_empty() || terms.len() > MAX_TERMS || !terms.iter().all(|t| fits(t.1)) {
            return None;
        }
        terms.sort_unstable_by_key(|t| t.0);
        let key = Key {
            terms: terms.iter().map(|&(v, k)| (v, k as i64)).collect(),
            bits,
        };
        Some((key, c as i64))
    }
}

/// Count the uses of every value by the laid-out instructions into `uses`.
fn count_uses(func: &Function, uses: &mut SecondaryMap<Value, u32>) {
    uses.clear();
    uses.resize(func.dfg.num_values());
    for b in func.layout.blocks() {
        for i in func.layout.block_insts(b) {
            for &a in func.dfg.inst_args(i) {
                uses[a] += 1;
            }
            func.dfg.for_each_dest(i, |bc| {
                for &a in func.dfg.block_call_args(bc) {
                    uses[a] += 1;
                }
            });
        }
    }
}

/// The `ptradd` index `x` as `y + k` with a constant `k != 0`: `sext` of `iadd nsw`s
/// and `isub nsw`s of constants (exact: when `x` is not poison, neither is `y`, and the
/// narrow sums did not wrap), or `i64` `iadd`s and `isub`s of constants (modulo 2^64).
/// `y` is the narrow operand under a `sext`.
fn peel(func: &Function, x: Value) -> Option<(Value, i64)> {
    let (mut y, wide) = match func.dfg.value_def(x) {
        ValueDef::Result(i) => match *func.dfg.inst(i) {
            InstructionData::Unary {
                opcode: Opcode::Sext,
                arg,
            } => (arg, false),
            _ => (x, true),
        },
        _ => (x, true),
    };
    let bits = func.dfg.value_type(y).bits();
    let mut k: i128 = 0;
    for _ in 0..MAX_INDEX_OPS {
        let ValueDef::Result(i) = func.dfg.value_def(y) else {
            break;
        };
        let InstructionData::Binary {
            opcode,
            args: [a, b],
            flags,
        } = *func.dfg.inst(i)
        else {
            break;
        };
        if !wide && !flags.contains(IntFlags::NSW) {
            break;
        }
        let kb = iconst(func, b).map(|m| sext_bits(m as u64, bits));
        let ka = iconst(func, a).map(|m| sext_bits(m as u64, bits));
        match (opcode, ka, kb) {
            (Opcode::Iadd, _, Some(m)) => (y, k) = (a, k + m),
            (Opcode::Iadd, Some(m), None) => (y, k) = (b, k + m),
            (Opcode::Isub, _, Some(m)) => (y, k) = (a, k - m),
            _ => break,
        }
    }
    let k = i64::try_from(k).ok()?;
    (k != 0).then_some((y, k))
}

fn iconst(func: &Function, v: Value) -> Option<i64> {
    match func.dfg.value_def(v) {
        ValueDef::Result(i) => match *func.dfg.inst(i) {
            InstructionData::IntConst { imm } => Some(imm),
            _ => None,
        },
        _ => None,
    }
}

fn sext_bits(x: u64, bits: u32) -> i128 {
    let sh = 64 - bits.clamp(1, 64);
    i128::from(((x << sh) as i64) >> sh)
}
