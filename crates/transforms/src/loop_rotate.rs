//! `loop-rotate`: turn a top-tested loop into a guarded bottom-tested one (LLVM's
//! `LoopRotatePass`, `LoopRotationUtils.cpp`).
//!
//! ```text
//!   P:  jump H(a)                      P:  <H's instructions, params := a>   (the guard)
//!   H(p): c = ..; brif c, N(x), E(y)       brif c', NP, E(y')
//!   N: ..                         =>   NP: jump N(x', v')                    (new preheader)
//!   L: jump H(b)                       N(.., v): ..                          (new header)
//!                                      L: jump H(b)
//!                                      H(p'): c = ..; brif c, N(x, v), ES(y) (new latch)
//!                                      ES(..): jump E(..)                    (dedicated exit)
//! ```
//!
//! The header's instructions are cloned into the preheader, where they test whether the
//! loop runs at all; the old header stays in the loop as its new latch, which tests
//! whether to go round again; the header's successor inside the loop becomes the header.
//!
//! **Values.** A value of the old header used elsewhere in the loop now comes from the guard
//! on the first iteration and from the old header on later ones, so it becomes a parameter
//! of the new header. Instead of rewriting every use, the pass moves the value itself: the
//! old header's instruction (or parameter) gets a fresh value, used only inside the old
//! header, and the original value becomes the new header's parameter, so every use in the
//! loop body is right without being visited. Uses outside the loop go through exit-block
//! parameters (LCSSA, which the pass requires), that is through branch arguments inside the
//! loop, which the same move keeps right.
//!
//! **Cost.** Per loop: the old header's instructions (cloned) and the predecessors of the
//! exit block (edges split). Which header values are used outside the header comes from
//! the `nonlocal-uses` analysis (computed once per function, kept sound here), not from a
//! scan of the loop, which would make a deep nest quadratic. The CFG edges and the loop
//! forest are updated in place ([`LoopInfo::add_block`],
//! [`LoopInfo::set_header_and_latch`]); the dominator tree is left to be recomputed once,
//! by whoever needs it next: the loop adaptor never recomputes an analysis per loop
//! because of this pass.
//!
//! [`LoopInfo::add_block`]: gyre_analysis::LoopInfo::add_block
//! [`LoopInfo::set_header_and_latch`]: gyre_analysis::LoopInfo::set_header_and_latch

use crate::analyses::Analyses;
use crate::manager::{Forms, LoopPass, LoopUpdater, PassContext, PassError, PassResult};
use crate::utils::clone::ValueMap;
use crate::utils::split::split_edge;
use gyre_analysis::Loop;
use gyre_ir::{
    Block, BlockCall, Function, Inst, InstructionData, IntCC, Opcode, Type, Value, ValueDef,
};
use rustc_hash::FxHashMap;

const NAME: &str = "loop-rotate";

/// The `loop-rotate` loop pass.
///
/// **Requires**: the loop in loop-simplify form (a preheader and one latch; loops without
/// them are left alone with a remark) and in LCSSA form (values of the loop reach outside
/// uses only through exit-block parameters: run `lcssa` first, as `-O` does and as LLVM's
/// loop pass manager does; a use outside the loop of a header value that is not a branch
/// argument leaves the function failing the verifier). A `LoopRotate` built by the
/// registry asks the adaptor for nothing else: it uses the CFG's edges and the loop forest.
///
/// **Establishes**: a rotated loop ([`gyre_analysis::LoopInfo::is_rotated_form`]: the
/// latch exits) with a preheader, one latch and dedicated exits (the exit edges of the old
/// header's exit block are split when the guard branches to it too), still in LCSSA form;
/// the guard is folded to a jump when the header's test is decided by constants on entry
/// (`for (i = 0; i < 16; i++)`). Each rotated loop is reported to the adaptor with its new
/// header ([`LoopUpdater::set_header`]) and its rotated form is promised
/// ([`LoopUpdater::promise_rotated`]), which `--verify-each` checks.
///
/// **Preserves**: the CFG's edges (its order goes stale), the loop forest (updated in
/// place: the new header and latch, the new blocks in the loops around) and
/// `nonlocal-uses` (kept sound). Not the dominator
/// tree, post-dominator tree or uniformity: they are recomputed once, when next asked for.
/// Behaviour: every dynamic execution of the old header is an execution of exactly one of
/// its two copies.
///
/// **Gives up** (a remark and a counter each): a loop already rotated (its latch exits;
/// `AlreadyRotated`); a header that does not exit or whose only exit edge is not a
/// two-way `brif` (`HeaderNotExiting`, LLVM's rule: a loop exiting only elsewhere is left
/// as it is); a header with an operation that must not be duplicated — a convergent one:
/// `barrier`, `shfl`, `vote`, `warp_sync`, and `call` (the callee may hold a barrier)
/// (`HeaderNotDuplicable`); a header larger than the size limit (`HeaderTooLarge`); a loop
/// in or around an irreducible cycle (`Irreducible`); no preheader or no single latch
/// (`NotLoopSimplifyForm`); a header successor inside the loop with other predecessors
/// (`NewHeaderHasOtherPredecessors`); and a loop whose guard is constant false, which never
/// runs (`LoopNeverEntered`: loop deletion's business).
///
/// **Parameters**: `loop-rotate<header-duplication>` / `loop-rotate<no-header-duplication>`
/// (LLVM's spelling). Without header duplication only a header with nothing to duplicate
/// but constants and the branch is rotated (LLVM's threshold 0, its "prepare for LICM"
/// case); with it, a header of at most `rotation-max-header-size` instructions.
///
/// **Knobs**: `rotation-max-header-size` (default 16, LLVM's and cicc's): the most
/// instructions the header may have, counted as LLVM counts them — instructions that would
/// be duplicated, so neither the terminator nor block parameters nor constants (which are
/// not instructions in LLVM IR). `enable-loop-header-duplication` (default true): the
/// parameter used when the pipeline gives none.
///
/// **Stats**: `NumRotated`, `NumGuardsFolded`, `NumInstrsDuplicated`, and one counter per
/// reason for leaving a loop alone (`NumAlreadyRotated`, `NumHeaderNotExiting`,
/// `NumHeaderNotDuplicable`, `NumHeaderTooLarge`, `NumIrreducible`,
/// `NumNotLoopSimplifyForm`, `NumNewHeaderHasOtherPredecessors`, `NumLoopNeverEntered`).
///
/// Running it twice changes nothing the second time: every loop it rotated is rotated.
#[derive(Default)]
pub struct LoopRotate {
    /// `Some` when the pipeline said `<header-duplication>` or `<no-header-duplication>`.
    header_duplication: Option<bool>,
    s: Scratch,
}

impl LoopRotate {
    /// A pass with an explicit header-duplication setting (`None`: the
    /// `enable-loop-header-duplication` knob decides).
    pub fn new(header_duplication: Option<bool>) -> LoopRotate {
        LoopRotate {
            header_duplication,
            s: Scratch::default(),
        }
    }

    /// Build from pipeline parameters (`header-duplication`, `no-header-duplication`).
    pub fn from_params(params: &[String]) -> Result<LoopRotate, String> {
        let mut dup = None;
        for p in params {
            match p.as_str() {
                "header-duplication" => dup = Some(true),
                "no-header-duplication" => dup = Some(false),
                other => {
                    return Err(format!(
                        "pass '{NAME}': unknown parameter '{other}' \
                         (expected header-duplication or no-header-duplication)"
                    ))
                }
            }
        }
        Ok(LoopRotate::new(dup))
    }
}

/// Buffers reused across loops.
#[derive(Default)]
struct Scratch {
    /// The old header's values (parameters, then results) used outside it, in order.
    moved: Vec<Value>,
    /// Old header value -> its copy in the guard.
    map: ValueMap,
    /// Constants known for guard values (integers, as bits of their width).
    konst: FxHashMap<Value, u64>,
    /// The guard's instructions, in order.
    guard: Vec<Inst>,
    /// Moved value -> the fresh value the old header keeps.
    fresh: ValueMap,
    /// Use counts of the guard block's values (dead-copy removal).
    uses: FxHashMap<Value, u32>,
    /// The old header's parameters and instructions, the preheader's arguments for it,
    /// and the exit's predecessors to split: buffers reused across loops.
    params: Vec<Value>,
    insts: Vec<Inst>,
    entry_args: Vec<Value>,
    preds: Vec<Block>,
}

/// Why a loop is left alone: the remark kind, and its counter.
#[derive(Copy, Clone)]
enum Skip {
    AlreadyRotated,
    HeaderNotExiting,
    HeaderNotDuplicable,
    HeaderTooLarge,
    Irreducible,
    NotLoopSimplifyForm,
    NewHeaderHasOtherPredecessors,
    LoopNeverEntered,
}

impl Skip {
    fn kind(self) -> &'static str {
        match self {
            Skip::AlreadyRotated => "AlreadyRotated",
            Skip::HeaderNotExiting => "HeaderNotExiting",
            Skip::HeaderNotDuplicable => "HeaderNotDuplicable",
            Skip::HeaderTooLarge => "HeaderTooLarge",
            Skip::Irreducible => "Irreducible",
            Skip::NotLoopSimplifyForm => "NotLoopSimplifyForm",
            Skip::NewHeaderHasOtherPredecessors => "NewHeaderHasOtherPredecessors",
            Skip::LoopNeverEntered => "LoopNeverEntered",
        }
    }
    fn counter(self) -> &'static str {
        match self {
            Skip::AlreadyRotated => "NumAlreadyRotated",
            Skip::HeaderNotExiting => "NumHeaderNotExiting",
            Skip::HeaderNotDuplicable => "NumHeaderNotDuplicable",
            Skip::HeaderTooLarge => "NumHeaderTooLarge",
            Skip::Irreducible => "NumIrreducible",
            Skip::NotLoopSimplifyForm => "NumNotLoopSimplifyForm",
            Skip::NewHeaderHasOtherPredecessors => "NumNewHeaderHasOtherPredecessors",
            Skip::LoopNeverEntered => "NumLoopNeverEntered",
        }
    }
}

/// What the checks found about a loop that can be rotated.
struct Plan {
    l: Loop,
    header: Block,
    preheader: Block,
    /// The header's successor in the loop (the new header) and its exit.
    new_header: Block,
    exit: Block,
    /// Is the in-loop successor the `brif`'s first (then) target?
    loop_is_then: bool,
}

impl LoopPass for LoopRotate {
    fn name(&self) -> &'static str {
        NAME
    }

    fn establishes(&self) -> Forms {
        // Rotation keeps both forms of every loop it is given in them; it promises the
        // rotated form per loop (`LoopUpdater::promise_rotated`), not for every loop.
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
        let err = |func: &Function, m: String| PassError(format!("{NAME}: @{}: {m}", func.name));
        cx.analyses
            .ensure(func, Analyses::LOOPS.union(Analyses::NONLOCAL_USES))
            .map_err(|e| err(func, e.to_string()))?;
        let dup = self
            .header_duplication
            .unwrap_or_else(|| cx.knobs.enable_loop_header_duplication());
        let limit = if dup {
            cx.knobs.rotation_max_header_size()
        } else {
            0
        };
        let plan = match self.check(func, header, cx, limit, dup) {
            Ok(p) => p,
            Err((skip, msg)) => {
                cx.stats.add(NAME, skip.counter(), 1);
                cx.remark(NAME, func, Some(header), skip.kind(), msg);
                return Ok(PassResult::UNCHANGED);
            }
        };
        match self.rotate(func, &plan, cx) {
            Ok(new_header) => {
                updater.set_header(new_header);
                updater.promise_rotated();
                cx.stats.add(NAME, "NumRotated", 1);
                Ok(PassResult::changed(
                    Analyses::CFG
                        .union(Analyses::LOOPS)
                        .union(Analyses::NONLOCAL_USES),
                ))
            }
            Err(Skip::LoopNeverEntered) => {
                let skip = Skip::LoopNeverEntered;
                cx.stats.add(NAME, skip.counter(), 1);
                cx.remark(
                    NAME,
                    func,
                    Some(header),
                    skip.kind(),
                    "the header's test is false on entry: the loop never runs (left to \
                     loop deletion)",
                );
                Ok(PassResult::UNCHANGED)
            }
            Err(other) => Err(err(
                func,
                format!(
                    "internal error: rotation stopped half-way ({})",
                    other.kind()
                ),
            )),
        }
    }
}

impl LoopRotate {
    /// Decide whether the loop at `header` can and should be rotated.
    fn check(
        &mut self,
        func: &Function,
        header: Block,
        cx: &PassContext<'_>,
        limit: u32,
        dup: bool,
    ) -> Result<Plan, (Skip, String)> {
        let li = &cx.analyses.loops;
        let cfg = &cx.analyses.cfg;
        let l = li
            .innermost_loop(header)
            .filter(|&l| li.header(l) == header)
            .ok_or((Skip::NotLoopSimplifyForm, "no loop here".to_string()))?;
        if li.contains_irreducible(l) || li.in_irreducible_cycle(header) {
            return Err((
                Skip::Irreducible,
                "the loop is in or around an irreducible cycle".into(),
            ));
        }
        let Some(latch) = li.latch(l) else {
            return Err((
                Skip::NotLoopSimplifyForm,
                "the loop has no single latch (run loop-simplify first)".into(),
            ));
        };
        let Some(preheader) = li.preheader(l, cfg) else {
            return Err((
                Skip::NotLoopSimplifyForm,
                "the loop has no preheader (run loop-simplify first)".into(),
            ));
        };
        if li.is_exiting(l, latch, cfg) {
            return Err((
                Skip::AlreadyRotated,
                format!("already rotated: the latch {latch} exits"),
            ));
        }
        let term = func
            .terminator(header)
            .expect("a CFG block has a terminator");
        let not_exiting = |why: &str| {
            Err((
                Skip::HeaderNotExiting,
                format!("the header does not exit the loop {why}; only a loop tested at its header is rotated"),
            ))
        };
        let InstructionData::Brif { blocks, .. } = func.dfg.inst(term) else {
            if cfg.succs(header).iter().any(|&s| !li.contains(l, s)) {
                return not_exiting("through a two-way brif");
            }
            return not_exiting("(its exits are elsewhere)");
        };
        let (t, e) = (blocks[0].block, blocks[1].block);
        let (new_header, exit, loop_is_then) = match (li.contains(l, t), li.contains(l, e)) {
            (true, false) => (t, e, true),
            (false, true) => (e, t, false),
            (true, true) => return not_exiting("(its exits are elsewhere)"),
            (false, false) => return not_exiting("into the loop"),
        };
        if cfg.preds(new_header) != [header].as_slice() || li.innermost_loop(new_header) != Some(l)
        {
            return Err((
                Skip::NewHeaderHasOtherPredecessors,
                format!("the header's successor {new_header} in the loop has other predecessors"),
            ));
        }
        if !matches!(
            func.dfg
                .inst(func.terminator(preheader).expect("terminator")),
            InstructionData::Jump { .. }
        ) {
            return Err((
                Skip::NotLoopSimplifyForm,
                "the preheader does not end in a jump".into(),
            ));
        }
        let mut size = 0u32;
        for i in func.layout.block_insts(header) {
            let op = func.dfg.inst(i).opcode();
            if op.is_terminator() || matches!(op, Opcode::Iconst | Opcode::Fconst) {
                continue;
            }
            if op.is_convergent() {
                return Err((
                    Skip::HeaderNotDuplicable,
                    format!(
                        "the header holds a convergent operation ({op}), which must not be \
                         duplicated"
                    ),
                ));
            }
            size += 1;
        }
        if size > limit {
            let msg = if dup {
                format!(
                    "the header has {size} instructions to duplicate, over \
                     rotation-max-header-size={limit}"
                )
            } else {
                format!(
                    "without header duplication only a header with nothing to duplicate is \
                     rotated; this one has {size} instructions"
                )
            };
            return Err((Skip::HeaderTooLarge, msg));
        }
        Ok(Plan {
            l,
            header,
            preheader,
            new_header,
            exit,
            loop_is_then,
        })
    }

    /// Rotate; returns the new header. `Err(LoopNeverEntered)` leaves the function as it
    /// was (decided before any change).
    fn rotate(
        &mut self,
        func: &mut Function,
        p: &Plan,
        cx: &mut PassContext<'_>,
    ) -> Result<Block, Skip> {
        let s = &mut self.s;
        let h = p.header;
        // The old header's values, and which of them are used outside it (LCSSA: in the
        // loop, or as branch arguments of the loop's exits), from `nonlocal-uses`.
        let mut params = core::mem::take(&mut s.params);
        params.clear();
        params.extend_from_slice(func.dfg.block_params(h));
        let mut insts = core::mem::take(&mut s.insts);
        insts.clear();
        insts.extend(func.layout.block_insts(h));
        let term = *insts.last().expect("a terminator");
        let nonlocal = &cx.analyses.nonlocal;
        let outside = |v: Value| nonlocal.may_be_used_elsewhere(v);
        // The guard: the header's instructions with its parameters given the preheader's
        // arguments, folded where constants decide them.
        let pre_term = func.terminator(p.preheader).expect("terminator");
        let InstructionData::Jump { dest } = func.dfg.inst(pre_term) else {
            unreachable!("checked: the preheader ends in a jump");
        };
        let mut entry_args = core::mem::take(&mut s.entry_args);
        entry_args.clear();
        entry_args.extend_from_slice(func.dfg.block_call_args(dest));
        s.map.clear();
        s.konst.clear();
        for (&pv, &a) in params.iter().zip(&entry_args) {
            s.map.insert(pv, a);
            if let Some(c) = const_of(func, a) {
                s.konst.insert(a, c);
            }
        }
        // Decide the guard before changing anything: a constant false guard leaves the loop
        // alone.
        let InstructionData::Brif { arg: cond, .. } = *func.dfg.inst(term) else {
            unreachable!("checked: the header ends in a brif");
        };
        let folded = fold_guard(func, &insts, cond, &s.map, &mut s.konst);
        let enters = folded.map(|taken_then| taken_then == p.loop_is_then);
        if enters == Some(false) {
            s.map.clear();
            s.params = params;
            s.insts = insts;
            s.entry_args = entry_args;
            return Err(Skip::LoopNeverEntered);
        }
        s.map.clear();
        for (&pv, &a) in params.iter().zip(&entry_args) {
            s.map.insert(pv, a);
        }
        s.guard.clear();
        let mut duplicated = 0u64;
        for &i in &insts[..insts.len() - 1] {
            let copy = func.dfg.clone_inst_with(i, |v| s.map.map(v));
            func.layout.insert_inst_before(copy, pre_term);
            if let (Some(r), Some(c)) = (func.dfg.inst_result(i), func.dfg.inst_result(copy)) {
                s.map.insert(r, c);
            }
            s.guard.push(copy);
            if !matches!(func.dfg.inst(i).opcode(), Opcode::Iconst | Opcode::Fconst) {
                duplicated += 1;
            }
        }
        // The guard's branch, computed from the header's terminator before its values
        // move: the guard passes the copies of what the header passes.
        let (cond_c, to_loop_args, to_exit_args) = {
            let InstructionData::Brif { arg, blocks } = func.dfg.inst(term) else {
                unreachable!("checked: the header ends in a brif");
            };
            let k = usize::from(!p.loop_is_then);
            let mapped = |bc: &BlockCall| -> Vec<Value> {
                func.dfg
                    .block_call_args(bc)
                    .iter()
                    .map(|&v| s.map.map(v))
                    .collect()
            };
            let mut to_loop = mapped(&blocks[k]);
            let to_exit = mapped(&blocks[1 - k]);
            // The values that move (below), in the order they become parameters.
            s.moved.clear();
            s.moved
                .extend(params.iter().copied().filter(|&v| outside(v)));
            s.moved.extend(
                insts
                    .iter()
                    .filter_map(|&i| func.dfg.inst_result(i))
                    .filter(|&v| outside(v)),
            );
            to_loop.extend(s.moved.iter().map(|&v| s.map.map(v)));
            (s.map.map(*arg), to_loop, to_exit)
        };
        // Move the header's values used elsewhere in the loop to new parameters of the new
        // header (see the module doc): the old header keeps fresh values.
        let mut fresh = core::mem::take(&mut s.fresh);
        fresh.clear();
        for k in (0..params.len()).rev() {
            func.dfg.remove_block_param(h, k);
        }
        for &pv in &params {
            let ty = func.dfg.value_type(pv);
            if outside(pv) {
                let nv = func.dfg.append_block_param(h, ty);
                fresh.insert(pv, nv);
            } else {
                func.dfg.attach_block_param(h, pv, ty);
            }
        }
        for &i in &insts {
            if let Some(r) = func.dfg.inst_result(i) {
                if outside(r) {
                    let ty = func.dfg.value_type(r);
                    func.dfg.detach_result(i);
                    let nv = func.dfg.attach_result(i, ty);
                    fresh.insert(r, nv);
                }
            }
        }
        if fresh.num_values() > 0 {
            for &i in &insts {
                func.dfg.map_inst_values(i, |v| fresh.map(v));
            }
        }
        for &v in &s.moved {
            let ty = func.dfg.value_type(v);
            func.dfg.attach_block_param(p.new_header, v, ty);
        }
        // The old header passes its fresh values to the new header's new parameters.
        if !s.moved.is_empty() {
            let k = usize::from(!p.loop_is_then);
            let InstructionData::Brif { blocks, .. } = func.dfg.inst_mut(term) else {
                unreachable!("checked: the header ends in a brif");
            };
            let mut args = core::mem::take(&mut blocks[k].args);
            for v in &s.moved {
                args.push(fresh.map(*v), &mut func.dfg.value_lists);
            }
            if let InstructionData::Brif { blocks, .. } = func.dfg.inst_mut(term) {
                blocks[k].args = args;
            }
        }
        // The old header, now the latch, goes right after the old latch in the layout, so
        // the old latch falls through into the exit test and one branch per iteration
        // remains (at the bottom), as in LLVM's rotated loops.
        if let Some(old_latch) = cx.analyses.loops.latch(p.l) {
            if old_latch != h && func.layout.entry_block() != Some(h) {
                func.layout.move_block_after(h, old_latch);
            }
        }
        let cfg = &mut cx.analyses.cfg;
        let li = &mut cx.analyses.loops;
        let parent = li.parent(p.l);
        let exit_loop = li.innermost_loop(p.exit);
        let new_pre = if enters == Some(true) {
            // The first test always passes: the old preheader jumps straight to the new
            // header and stays the preheader; no branch is emitted.
            let dest = BlockCall::new(p.new_header, &to_loop_args, &mut func.dfg.value_lists);
            func.dfg
                .replace_inst(pre_term, InstructionData::Jump { dest });
            cx.stats.add(NAME, "NumGuardsFolded", 1);
            p.preheader
        } else {
            let np = func.dfg.make_block();
            func.layout.insert_block_after(np, p.preheader);
            let dest = BlockCall::new(p.new_header, &to_loop_args, &mut func.dfg.value_lists);
            func.append_inst(np, InstructionData::Jump { dest }, None);
            let pool = &mut func.dfg.value_lists;
            let to_np = BlockCall::new(np, &[], pool);
            let to_exit = BlockCall::new(p.exit, &to_exit_args, pool);
            let blocks = if p.loop_is_then {
                [to_np, to_exit]
            } else {
                [to_exit, to_np]
            };
            func.dfg.replace_inst(
                pre_term,
                InstructionData::Brif {
                    arg: cond_c,
                    blocks,
                },
            );
            np
        };
        remove_dead_guard_code(func, &s.guard, &mut s.uses);
        cfg.update_block(func, p.preheader)
            .map_err(|_| Skip::NotLoopSimplifyForm)?;
        if new_pre != p.preheader {
            cfg.update_block(func, new_pre)
                .map_err(|_| Skip::NotLoopSimplifyForm)?;
            li.add_block(new_pre, parent);
            // The guard branches to the exit too, so the exit has a predecessor outside
            // the loop: split every edge into it from a loop that does not contain it
            // (the rotated loop's, and the guard's when the guard lies in a loop the exit
            // is outside of — the exit may leave several loops of a nest), so that every
            // loop's exits stay dedicated, as LLVM does.
            let mut preds = core::mem::take(&mut s.preds);
            preds.clear();
            for &b in cfg.preds(p.exit) {
                let outside = li
                    .innermost_loop(b)
                    .is_some_and(|lb| !li.contains(lb, p.exit));
                // One split per predecessor takes all its edges to the exit.
                if outside && !preds.contains(&b) {
                    preds.push(b);
                }
            }
            for &b in &preds {
                let es = split_edge(func, b, p.exit, Some(cfg))
                    .map_err(|_| Skip::NotLoopSimplifyForm)?;
                li.add_block(es, exit_loop);
            }
            s.preds = preds;
        }
        if !li.set_header_and_latch(p.l, p.new_header, h) {
            return Err(Skip::NotLoopSimplifyForm);
        }
        // Keep `nonlocal-uses` sound: the fresh values and the guard's copies are used in
        // their own block only, except what the new preheader passes on.
        let nonlocal = &mut cx.analyses.nonlocal;
        for (_, v) in fresh.values() {
            nonlocal.set(v, false);
        }
        for &c in &s.guard {
            if let Some(v) = func.dfg.inst_result(c) {
                nonlocal.set(v, false);
            }
        }
        if new_pre != p.preheader {
            for &v in &to_loop_args {
                nonlocal.set(v, true);
            }
        }
        cx.stats.add(NAME, "NumInstrsDuplicated", duplicated);
        s.map.clear();
        s.fresh = fresh;
        s.params = params;
        s.insts = insts;
        s.entry_args = entry_args;
        Ok(p.new_header)
    }
}

/// Remove guard instructions nothing uses (the comparisons a folded guard no longer needs),
/// last to first, so chains go too. Only side-effect-free ones.
fn remove_dead_guard_code(func: &mut Function, guard: &[Inst], uses: &mut FxHashMap<Value, u32>) {
    uses.clear();
    let block = match guard.first().and_then(|&i| func.layout.inst_block(i)) {
        Some(b) => b,
        None => return,
    };
    // Uses by the guard block's instructions (the copies and the terminator) and by the
    // new preheader's jump: a copy is used nowhere else yet.
    let count = |func: &Function, i: Inst, uses: &mut FxHashMap<Value, u32>| {
        func.dfg
            .for_each_inst_value(i, |v| *uses.entry(v).or_default() += 1);
    };
    for i in func.layout.block_insts(block) {
        count(func, i, uses);
    }
    let term = func.terminator(block).expect("terminator");
    // The new preheader (no parameters, nothing but its jump) passes copies on.
    let mut np_jump = None;
    func.dfg.for_each_dest(term, |bc| {
        let s = bc.block;
        if let Some(t) = func.terminator(s) {
            if func.dfg.block_params(s).is_empty() && func.layout.first_inst(s) == Some(t) {
                np_jump = Some(t);
            }
        }
    });
    if let Some(t) = np_jump {
        count(func, t, uses);
    }
    for &i in guard.iter().rev() {
        let op = func.dfg.inst(i).opcode();
        if op.has_side_effects() {
            continue;
        }
        let Some(r) = func.dfg.inst_result(i) else {
            continue;
        };
        if uses.get(&r).copied().unwrap_or(0) == 0 {
            let args: Vec<Value> = func.dfg.inst_args(i).to_vec();
            for a in args {
                if let Some(n) = uses.get_mut(&a) {
                    *n = n.saturating_sub(1);
                }
            }
            func.layout.remove_inst(i);
        }
    }
}

/// The integer constant `v` is defined as, as bits of its width.
fn const_of(func: &Function, v: Value) -> Option<u64> {
    match func.dfg.value_def(v) {
        ValueDef::Result(i) => match func.dfg.inst(i) {
            InstructionData::IntConst { imm } => Some(mask(*imm as u64, func.dfg.value_type(v))),
            _ => None,
        },
        _ => None,
    }
}

fn mask(x: u64, ty: Type) -> u64 {
    match ty.bits() {
        64 => x,
        b => x & ((1u64 << b) - 1),
    }
}

fn sext(x: u64, ty: Type) -> i64 {
    let b = ty.bits();
    if b == 64 {
        x as i64
    } else {
        ((x << (64 - b)) as i64) >> (64 - b)
    }
}

/// Evaluate the header's instructions on the entry values known to be constant, up to the
/// branch condition: `Some(true)` if the guard would take the `brif`'s then target on
/// entry, `Some(false)` for else, `None` if constants do not decide it. Only integer
/// operations that cannot trap are evaluated.
fn fold_guard(
    func: &Function,
    insts: &[Inst],
    cond: Value,
    map: &ValueMap,
    konst: &mut FxHashMap<Value, u64>,
) -> Option<bool> {
    let known = |konst: &FxHashMap<Value, u64>, map: &ValueMap, v: Value| -> Option<u64> {
        let m = map.map(v);
        konst.get(&m).copied().or_else(|| const_of(func, m))
    };
    for &i in insts {
        let Some(r) = func.dfg.inst_result(i) else {
            continue;
        };
        let ty = func.dfg.value_type(r);
        let val = match func.dfg.inst(i) {
            InstructionData::IntConst { imm } => Some(mask(*imm as u64, ty)),
            InstructionData::IntCompare { cond, args } => {
                let at = func.dfg.value_type(args[0]);
                match (known(konst, map, args[0]), known(konst, map, args[1])) {
                    (Some(a), Some(b)) => {
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
                    }
                    _ => None,
                }
            }
            InstructionData::Binary { opcode, args, .. } if ty.is_int() => {
                match (known(konst, map, args[0]), known(konst, map, args[1])) {
                    (Some(a), Some(b)) => match opcode {
                        Opcode::Iadd => Some(a.wrapping_add(b)),
                        Opcode::Isub => Some(a.wrapping_sub(b)),
                        Opcode::Imul => Some(a.wrapping_mul(b)),
                        Opcode::And => Some(a & b),
                        Opcode::Or => Some(a | b),
                        Opcode::Xor => Some(a ^ b),
                        Opcode::Shl if b < u64::from(ty.bits()) => Some(a << b),
                        _ => None,
                    }
                    .map(|x| mask(x, ty)),
                    _ => None,
                }
            }
            _ => None,
        };
        if let Some(c) = val {
            // Record under a stand-in: the result itself (the map sends it to itself
            // until the copy exists).
            konst.insert(r, c);
        }
    }
    let m = map.map(cond);
    konst
        .get(&m)
        .copied()
        .or_else(|| const_of(func, m))
        .map(|c| c & 1 == 1)
}
