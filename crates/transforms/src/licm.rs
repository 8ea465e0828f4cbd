//! `licm`: loop-invariant code motion (LLVM's `LICMPass`, `LICM.cpp`): instructions
//! whose operands do not change in a loop are moved to the loop's preheader, so they run
//! once per entry of the loop instead of once per iteration.
//!
//! ```text
//!   P:  jump H                      P:  a = imul n, 4; x = load p; jump H
//!   H:  a = imul n, 4          =>   H:  ..
//!       x = load p                      use a, x
//!       store .., q(shared)             store .., q(shared)
//!       use a, x                        brif c, H, E
//!       brif c, H, E
//! ```
//!
//! **What moves.** An instruction of the loop (in no subloop: subloops were visited
//! first, so what they hoisted already sits in their preheaders, which are blocks of this
//! loop) whose operands are all defined outside the loop, and that is
//!
//! - *speculatable*: no side effect, no memory read, cannot trap (arithmetic,
//!   comparisons, casts, `select`, `ptradd`, constants, special registers,
//!   `global_addr`, `slot_addr`, `freeze`, the math primitives; a division or remainder
//!   by a constant other than 0 and, signed, -1): hoisted from any block of the loop; or
//! - *guaranteed to execute* and safe at the preheader: a division or remainder by
//!   another value, and a non-volatile load whose address space nothing in the loop may
//!   write (below). Such an instruction is hoisted only from a block every path from the
//!   header to an exit or to the latch goes through, before anything that may not return
//!   (`call`, `assert_fail`): moved to the preheader, it runs exactly when the loop is
//!   entered, and the loop, once entered, would have run it (LLVM's
//!   `isGuaranteedToExecute`). The blocks are the *spine*: the header and, while the
//!   current block does not exit and has a single successor that is a block of this loop
//!   (not a subloop, not the header), that successor. A rotated loop (a do-while) has its
//!   whole straight-line body on the spine; a conditional block (an `if` in the body) is
//!   not, so a division guarded by `if (d != 0)` stays. Like LLVM, a loop that never
//!   terminates after being entered is not a concern (forward progress).
//!
//! Convergent operations (`barrier`, `shfl`, `vote`, `warp_sync`, `call`) and everything
//! with a side effect (stores, atomics, fences, `clock`, `vprintf`) never move.
//!
//! **Memory.** A load of address space `S` is hoisted only if no instruction in the loop
//! (subloops included) may write `S`: a store or atomic through a pointer of `S` or of the
//! generic space (which may point anywhere), a call (anything); for global and shared
//! memory also no `barrier`, `fence`, `warp_sync` or atomic in the loop, since through those
//! the writes of other threads become visible (never across a barrier for shared memory).
//! Local memory is per-thread: only the thread's own stores count. Constant memory is never
//! written. Gyre's IR has no `noalias`/`readonly` on kernel parameters, so two global
//! pointers are assumed to alias.
//!
//! **Uniformity.** A hoisted value is computed from values that are the same on every
//! iteration, so it has the same value in the preheader as on each iteration: moving it out
//! of a loop with a divergent exit changes no value any thread sees (and removes the
//! temporal divergence the uniformity analysis gives values defined in such a loop and used
//! after it, when the operands are uniform).
//!
//! **Cost.** Per loop, one walk of the blocks that are its own (not in a subloop:
//! [`gyre_analysis::LoopInfo::own_blocks`]), so hoisting a value from the innermost to the
//! outermost level of a nest moves it once per level and walks no nest twice. The writes of
//! a loop (for loads) are a bit set per loop: the loop's own blocks plus its children's sets,
//! remembered per header for the rest of the adaptor's run on the function and recomputed
//! only for a child whose header changed since (rotation), so each loop is scanned at most
//! twice per `licm` in the pipeline. The passes after `licm` in a loop pipeline only copy,
//! move or remove a visited subloop's instructions, which keeps a remembered set an
//! over-approximation.

use crate::analyses::Analyses;
use crate::manager::{Forms, LoopPass, LoopUpdater, PassContext, PassError, PassResult};
use cranelift_entity::SecondaryMap;
use gyre_analysis::Loop;
use gyre_ir::{AddrSpace, Block, Function, Inst, InstructionData, Opcode, Type, Value, ValueDef};

const NAME: &str = "licm";

/// Write-set bits: what a loop may write or synchronise on.
const W_GLOBAL: u8 = 1;
const W_SHARED: u8 = 2;
const W_LOCAL: u8 = 4;
/// A barrier, fence, `warp_sync` or atomic: other threads' writes may become visible.
const SYNC: u8 = 8;
/// A call: anything.
const UNKNOWN: u8 = 16;
/// The set has been computed (the other bits are meaningful).
const COMPUTED: u8 = 128;

/// The `licm` loop pass.
///
/// **Requires**: the loop in loop-simplify form (a preheader; a loop without one is left
/// alone with a remark) and no irreducible cycle in or around it. LCSSA is not required, and
/// kept where it holds.
///
/// **Establishes**: nothing new; it changes no edge, so loop-simplify, LCSSA (a hoisted
/// value is defined outside the loop it left, and every use outside the loops around it
/// still goes through their exit blocks) and rotated forms stay as they were.
///
/// **Preserves**: the CFG, the dominator and post-dominator trees and the loop forest (no
/// block or edge changes). Not `nonlocal-uses`, uniformity or scalar evolution (values move
/// between blocks and loops).
///
/// **Gives up** (a remark and a counter each): no preheader (`NotLoopSimplifyForm`), an
/// irreducible cycle in or around the loop (`Irreducible`). Per instruction, remarks say
/// why a load or a division with loop-invariant operands stayed: `LoadClobbered` (the loop
/// may write its memory), `NotGuaranteedToExecute` (a conditional block, or after a call or
/// `assert_fail`), `VolatileLoad`.
///
/// **Knobs**: `disable-LICMPass` (cicc's switch; default false) turns the pass off.
///
/// **Stats**: `NumHoisted` (instructions moved to a preheader; a value moved out of `k`
/// loops of a nest counts `k` times), `NumMovedLoads` (of which loads, LLVM's counter),
/// `NumMovedTrapping` (divisions and remainders hoisted because they are guaranteed to
/// execute), `NumLoadClobbered`, `NumNotGuaranteedToExecute`, `NumVolatileLoad`,
/// `NumNotLoopSimplifyForm`, `NumIrreducible`.
///
/// Running it twice changes nothing the second time: what could move, moved.
#[derive(Default)]
pub struct Licm {
    /// Per loop header: the loop's write set (`COMPUTED` set when known), for this
    /// adaptor run on the function.
    writes: SecondaryMap<Block, u8>,
    /// Blocks of the current loop's spine: `SPINE`, or `SPINE_STOP` for the one holding
    /// the first instruction that may not return (what follows it is not guaranteed).
    spine: SecondaryMap<Block, u8>,
    spine_list: Vec<Block>,
    own: Vec<Block>,
    own2: Vec<Block>,
    stack: Vec<(Loop, bool)>,
}

impl Licm {
    /// Reset the per-function state.
    fn reset(&mut self) {
        self.writes.clear();
        self.spine.clear();
        self.spine_list.clear();
    }
}

/// The write-set bits of an access through a pointer of this type.
fn space_bits(ty: Type) -> u8 {
    match ty {
        Type::Ptr(AddrSpace::Global) => W_GLOBAL,
        Type::Ptr(AddrSpace::Shared) => W_SHARED,
        Type::Ptr(AddrSpace::Local) => W_LOCAL,
        // A store to constant memory is undefined behaviour; count it as anything.
        _ => W_GLOBAL | W_SHARED | W_LOCAL,
    }
}

/// The bits that forbid hoisting a load through a pointer of this type.
fn load_conflicts(ty: Type) -> u8 {
    match ty {
        Type::Ptr(AddrSpace::Global) => W_GLOBAL | SYNC | UNKNOWN,
        Type::Ptr(AddrSpace::Shared) => W_SHARED | SYNC | UNKNOWN,
        Type::Ptr(AddrSpace::Local) => W_LOCAL | UNKNOWN,
        Type::Ptr(AddrSpace::Const) => UNKNOWN,
        _ => W_GLOBAL | W_SHARED | W_LOCAL | SYNC | UNKNOWN,
    }
}

/// A block of the spine.
const SPINE: u8 = 1;
/// The spine block with the first instruction that may not return.
const SPINE_STOP: u8 = 2;

/// What one instruction may write.
fn inst_writes(func: &Function, inst: Inst) -> u8 {
    let ptr_bits = |v: Value| space_bits(func.dfg.value_type(v));
    match *func.dfg.inst(inst) {
        InstructionData::Store { args, .. } => ptr_bits(args[1]),
        InstructionData::AtomicRmw { args, .. } => ptr_bits(args[0]) | SYNC,
        InstructionData::AtomicCas { args, .. } => ptr_bits(args[0]) | SYNC,
        InstructionData::Call { .. } => W_GLOBAL | W_SHARED | W_LOCAL | SYNC | UNKNOWN,
        InstructionData::Fence { .. } | InstructionData::WarpSync { .. } => SYNC,
        InstructionData::Nullary {
            opcode: Opcode::Barrier,
        } => SYNC,
        _ => 0,
    }
}

/// May this instruction not hand control to the next one (so that what follows it is not
/// guaranteed to execute)?
fn may_not_return(op: Opcode) -> bool {
    matches!(op, Opcode::Call | Opcode::AssertFail)
}

/// Is `v` an integer constant other than 0 (and, for a signed division, -1)?
fn safe_divisor(func: &Function, v: Value, signed: bool) -> bool {
    let ValueDef::Result(d) = func.dfg.value_def(v) else {
        return false;
    };
    match *func.dfg.inst(d) {
        InstructionData::IntConst { imm } => {
            let bits = func.dfg.value_type(v).bits();
            let m = if bits >= 64 {
                u64::MAX
            } else {
                (1u64 << bits) - 1
            };
            let u = imm as u64 & m;
            u != 0 && !(signed && u == m)
        }
        _ => false,
    }
}

/// How an instruction may be hoisted, if its operands are invariant.
#[derive(Copy, Clone, PartialEq, Eq)]
enum Kind {
    /// Never (side effects, convergent, terminators).
    Never,
    /// From anywhere in the loop.
    Speculatable,
    /// Only where guaranteed to execute (divisions by a non-constant).
    Trapping,
    /// A load: guaranteed to execute and not clobbered.
    Load,
}

fn classify(func: &Function, inst: Inst) -> Kind {
    let data = func.dfg.inst(inst);
    let op = data.opcode();
    if op.is_terminator() || op.has_side_effects() || op.is_convergent() {
        return Kind::Never;
    }
    match *data {
        InstructionData::Load { .. } => Kind::Load,
        InstructionData::Binary { opcode, args, .. }
            if matches!(
                opcode,
                Opcode::Sdiv | Opcode::Udiv | Opcode::Srem | Opcode::Urem
            ) =>
        {
            let signed = matches!(opcode, Opcode::Sdiv | Opcode::Srem);
            if safe_divisor(func, args[1], signed) {
                Kind::Speculatable
            } else {
                Kind::Trapping
            }
        }
        _ if op.can_trap() || op.reads_memory() => Kind::Never,
        _ => Kind::Speculatable,
    }
}

/// Why a loop is left alone.
#[derive(Copy, Clone)]
enum Skip {
    NotLoopSimplifyForm,
    Irreducible,
}

impl LoopPass for Licm {
    fn name(&self) -> &'static str {
        NAME
    }

    fn establishes(&self) -> Forms {
        // No edge changes: the forms the adaptor established stay.
        Forms {
            loop_simplify: true,
            lcssa: true,
            rotated: false,
        }
    }

    fn begin_function(&mut self, _func: &Function) {
        self.reset();
    }

    fn run_on_loop(
        &mut self,
        func: &mut Function,
        header: Block,
        cx: &mut PassContext<'_>,
        _updater: &mut LoopUpdater,
    ) -> Result<PassResult, PassError> {
        if cx.knobs.disable_licm_pass() {
            return Ok(PassResult::UNCHANGED);
        }
        cx.analyses
            .ensure(func, Analyses::LOOPS)
            .map_err(|e| PassError(format!("{NAME}: @{}: {e}", func.name)))?;
        let li = &cx.analyses.loops;
        let cfg = &cx.analyses.cfg;
        let Some(l) = li
            .innermost_loop(header)
            .filter(|&l| li.header(l) == header)
        else {
            return Ok(PassResult::UNCHANGED);
        };
        let skip = if li.contains_irreducible(l) || li.in_irreducible_cycle(header) {
            Some((
                Skip::Irreducible,
                "the loop is in or around an irreducible cycle",
            ))
        } else {
            None
        };
        let preheader = li.preheader(l, cfg);
        let skip = skip.or(preheader.is_none().then_some((
            Skip::NotLoopSimplifyForm,
            "the loop has no preheader (run loop-simplify first)",
        )));
        if let Some((s, msg)) = skip {
            let (kind, counter) = match s {
                Skip::NotLoopSimplifyForm => ("NotLoopSimplifyForm", "NumNotLoopSimplifyForm"),
                Skip::Irreducible => ("Irreducible", "NumIrreducible"),
            };
            cx.stats.add(NAME, counter, 1);
            cx.remark(NAME, func, Some(header), kind, msg);
            return Ok(PassResult::UNCHANGED);
        }
        let preheader = preheader.expect("checked above");
        let at = func
            .terminator(preheader)
            .expect("a CFG block has a terminator");

        // The loop's own blocks (RPO, header first) and its spine.
        let mut own = std::mem::take(&mut self.own);
        own.clear();
        li.own_blocks(l, &mut own);
        self.mark_spine(func, cx, l, header);

        let mut writes: Option<u8> = None;
        let (mut hoisted, mut loads, mut trapping) = (0u64, 0u64, 0u64);
        for &b in &own {
            let spine = self.spine[b];
            let mut blocked = spine == 0;
            let mut next = func.layout.first_inst(b);
            while let Some(inst) = next {
                next = func.layout.next_inst(inst);
                let op = func.dfg.inst(inst).opcode();
                let kind = classify(func, inst);
                let invariant = kind != Kind::Never
                    && func.dfg.inst_args(inst).iter().all(|&v| {
                        let def = match func.dfg.value_def(v) {
                            ValueDef::Param(d, _) => Some(d),
                            ValueDef::Result(i) => func.layout.inst_block(i),
                            ValueDef::Detached => None,
                        };
                        let li = &cx.analyses.loops;
                        def.is_some_and(|d| !li.contains(l, d))
                    });
                let guaranteed = !blocked;
                if spine == SPINE_STOP && may_not_return(op) {
                    blocked = true;
                }
                if !invariant {
                    continue;
                }
                let why = match kind {
                    Kind::Never => continue,
                    Kind::Speculatable => None,
                    Kind::Trapping if guaranteed => None,
                    Kind::Trapping => Some((
                        "NotGuaranteedToExecute",
                        "NumNotGuaranteedToExecute",
                        "a division by a value that may be zero is not guaranteed to execute \
                         once the loop is entered (a conditional block, or after a call): it \
                         stays"
                            .to_string(),
                    )),
                    Kind::Load => {
                        let InstructionData::Load { ptr, flags } = *func.dfg.inst(inst) else {
                            unreachable!("classified as a load")
                        };
                        let ty = func.dfg.value_type(ptr);
                        if flags.volatile {
                            Some((
                                "VolatileLoad",
                                "NumVolatileLoad",
                                "a volatile load never moves".to_string(),
                            ))
                        } else if !guaranteed {
                            Some((
                                "NotGuaranteedToExecute",
                                "NumNotGuaranteedToExecute",
                                "a load with a loop-invariant address is not guaranteed to \
                                 execute once the loop is entered (a conditional block, or \
                                 after a call): it stays"
                                    .to_string(),
                            ))
                        } else {
                            let w = match writes {
                                Some(w) => w,
                                None => {
                                    let w = self.loop_writes(func, cx, l);
                                    writes = Some(w);
                                    w
                                }
                            };
                            let conflict = w & load_conflicts(ty);
                            (conflict != 0).then(|| {
                                let what = if conflict & UNKNOWN != 0 {
                                    "a call"
                                } else if conflict & SYNC != 0 {
                                    "a barrier, fence, warp_sync or atomic"
                                } else {
                                    "a store to memory it may alias"
                                };
                                (
                                    "LoadClobbered",
                                    "NumLoadClobbered",
                                    format!("a load through {ty} stays: the loop has {what}"),
                                )
                            })
                        }
                    }
                };
                if let Some((kind, counter, msg)) = why {
                    cx.stats.add(NAME, counter, 1);
                    cx.remark(NAME, func, Some(b), kind, msg);
                    continue;
                }
                func.layout.remove_inst(inst);
                func.layout.insert_inst_before(inst, at);
                hoisted += 1;
                match kind {
                    Kind::Load => loads += 1,
                    Kind::Trapping => trapping += 1,
                    _ => {}
                }
            }
        }
        self.own = own;
        for b in self.spine_list.drain(..) {
            self.spine[b] = 0;
        }
        if hoisted == 0 {
            return Ok(PassResult::UNCHANGED);
        }
        cx.stats.add(NAME, "NumHoisted", hoisted);
        cx.stats.add(NAME, "NumMovedLoads", loads);
        cx.stats.add(NAME, "NumMovedTrapping", trapping);
        Ok(PassResult::changed(
            Analyses::CFG
                .union(Analyses::DOMTREE)
                .union(Analyses::POSTDOM)
                .union(Analyses::LOOPS),
        ))
    }
}

impl Licm {
    /// Mark the spine of `l`: the header, then while the current block does not exit and
    /// has a single successor (however many edges) that is an own block of `l` other than
    /// the header, that successor. Every path from the header to an exit or to the latch
    /// goes through each of these blocks. The walk also stops at the first block with an
    /// instruction that may not return (marked `SPINE_STOP`), in chain order: the loop's
    /// own blocks are visited in RPO, except blocks added since the forest was computed,
    /// so the chain, not the visiting order, decides what comes after it.
    fn mark_spine(&mut self, func: &Function, cx: &PassContext<'_>, l: Loop, header: Block) {
        let li = &cx.analyses.loops;
        let cfg = &cx.analyses.cfg;
        let mut b = header;
        loop {
            self.spine_list.push(b);
            if func
                .layout
                .block_insts(b)
                .any(|i| may_not_return(func.dfg.inst(i).opcode()))
            {
                self.spine[b] = SPINE_STOP;
                break;
            }
            self.spine[b] = SPINE;
            let succs = cfg.succs(b);
            let Some(&first) = succs.first() else { break };
            if succs.iter().any(|&s| s != first) || li.innermost_loop(first) != Some(l) {
                break;
            }
            if first == header || self.spine[first] != 0 {
                break;
            }
            // A block ending in `unreachable` or `return` has no successor: the walk stopped.
            debug_assert!(func.layout.is_block_inserted(first));
            b = first;
        }
    }

    /// The write set of `l` (subloops included), from the remembered sets of its subloops
    /// where they are known. Explicit stack: a subloop's set is computed before its parent's.
    fn loop_writes(&mut self, func: &Function, cx: &PassContext<'_>, l: Loop) -> u8 {
        let li = &cx.analyses.loops;
        let mut stack = std::mem::take(&mut self.stack);
        stack.clear();
        stack.push((l, false));
        while let Some((x, children_done)) = stack.pop() {
            let h = li.header(x);
            if self.writes[h] & COMPUTED != 0 && x != l {
                continue;
            }
            if !children_done {
                stack.push((x, true));
                for &c in li.children(x) {
                    if self.writes[li.header(c)] & COMPUTED == 0 {
                        stack.push((c, false));
                    }
                }
                continue;
            }
            let mut w = COMPUTED;
            for &c in li.children(x) {
                w |= self.writes[li.header(c)];
            }
            self.own2.clear();
            li.own_blocks(x, &mut self.own2);
            for &b in &self.own2 {
                for inst in func.layout.block_insts(b) {
                    w |= inst_writes(func, inst);
                }
            }
            // The current loop's set is not remembered: it is computed again when its
            // parent is visited, after the passes that follow `licm` changed the loop, and
            // remembered then (each loop is scanned at most twice).
            if x != l {
                self.writes[h] = w;
            } else {
                self.stack = stack;
                return w & !COMPUTED;
            }
        }
        unreachable!("the stack ends with the loop itself")
    }
}
