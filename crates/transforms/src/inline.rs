//! `inline`: a module pass that inlines calls to device functions, bottom-up over the call
//! graph, then deletes the internal functions left without a call (LLVM's `inline`
//! followed by its `globaldce`).
//!
//! **Order.** The call graph's strongly connected components are found with an iterative
//! Tarjan (no recursion), which emits them callees first; the calls of each function are
//! considered once, after every function it calls has been processed, so a callee is
//! costed with its own calls already inlined, as LLVM's CGSCC inliner does.
//!
//! **Decision.** A direct call of a defined device function in another component is
//! inlined when
//!
//! - the callee is `alwaysinline` (`InlineHint::Always`), or
//! - the callee is `internal` and this is its only call in the module (LLVM's "last call
//!   to static" bonus: inlining it deletes the callee, so the code does not grow), or
//! - its cost is at most the `inline-threshold` knob (225, LLVM's default), or
//!   `inlinehint-threshold` (325) for an `inlinehint` callee, times
//!   `inline-threshold-multiplier` (5: NVPTX's `getInliningThresholdMultiplier`, which
//!   LLVM applies to every threshold because calls are expensive on the GPU: 1125 and
//!   1625). The cost is LLVM's rough `InlineCost` model: 5 (`InstrCost`) per instruction
//!   of the callee that LLVM's `CallAnalyzer` would charge, less 5 for each argument and
//!   5 for the call itself, which inlining removes (LLVM's call penalty and argument
//!   setup credits). Free, as in LLVM: constants (`iconst`, `fconst`, `global_addr`:
//!   constants, not instructions, in LLVM IR), constant-offset `ptradd`s, unconditional
//!   jumps and the first `return`; loads and stores through an argument that points into
//!   one of the caller's slots, unless the callee lets that pointer escape (LLVM's SROA
//!   argument savings); and every pure instruction whose operands are all constants given
//!   the call's constant arguments, and a branch on one (LLVM's `CallAnalyzer` folds
//!   them; the blocks such a branch makes dead are still costed).
//!
//! **Simplified callees.** With `inline-simplify-callees` (default), once a component's
//! calls are done, each of its functions that a caller will cost (several calls left, or
//! one and visible; not `alwaysinline`) is run through `sroa` and `simplify` before any
//! caller costs and copies it, as LLVM's CGSCC pipeline simplifies an SCC before visiting
//! its callers.
//!
//! It is never inlined when the callee is `noinline`, a kernel, or recursive (its
//! component has several functions or calls itself); calls inside a recursive component
//! to functions outside it are inlined as any other.
//!
//! **Inlining.** The call's block is split after the call; the callee's blocks are copied
//! between the two halves (its slots become new slots of the caller), its parameters are
//! the call's arguments, and each `return v` becomes `jump cont(v)` to the continuation,
//! whose block parameter replaces the call's result. The entry block (which has no
//! predecessors) is not copied as a block: its instructions continue the call's block.
//! The caller becomes `convergent` if the callee was, and loses `mustprogress` if the
//! callee did not promise it (its loops may not be deleted as endless-and-effect-free).
//! It loses `anynan` if the callee does not have it (remark `AnyNanDropped`): the
//! callee's code requires canonical NaNs, and the attribute covers the whole caller.
//! Refusing the call instead would keep a call (and its `.param` traffic) to save two
//! instructions per stored float.
//!
//! **Requires** a verified module. **Establishes** nothing about loops: an inlined loop is
//! in whatever form the callee had (the loop passes after `inline` canonicalize it).
//! **Preserves** no analysis of a function it changed; functions it did not change keep
//! theirs. **Gives up** (remarks) on `noinline` callees (`NoInline`), recursive ones
//! (`Recursive`), kernels (`CalleeIsKernel`) and calls over the threshold (`TooCostly`);
//! **gives up** `anynan` on a caller that inlines a callee without it (`AnyNanDropped`).
//! **Knobs:** `inline-threshold`, `inlinehint-threshold`, `inline-threshold-multiplier`,
//! `disable-inlining` (no inlining and no deletion at all), `inline-simplify-callees`.

use crate::manager::{
    FunctionPass, ModulePass, ModulePassContext, ModulePassResult, PassContext, PassError,
};
use crate::simplify::Simplify;
use crate::sroa::Sroa;
use crate::AnalysisCache;
use gyre_ir::instructions::{BlockCall, InstructionData, JumpTableData, ValueList};
use gyre_ir::{
    Block, EntityRef, FuncId, FuncKind, Function, InlineHint, Inst, Module, Opcode, PrimaryMap,
    Slot, Value,
};
use rustc_hash::FxHashMap;

const NAME: &str = "inline";

/// LLVM's `InstrCost`: the cost of one instruction.
pub const INSTR_COST: i64 = 5;

/// The inliner (see the module documentation).
#[derive(Default)]
pub struct Inliner {
    /// Callee value -> caller value, for the call site being inlined (dense by value).
    values: Vec<Option<Value>>,
    /// Callee block -> caller block.
    blocks: Vec<Option<Block>>,
    /// Callee slot -> caller slot.
    slots: Vec<Option<Slot>>,
    /// Run on each callee before it is costed (`inline-simplify-callees`).
    sroa: Sroa,
    /// Likewise.
    simplify: Simplify,
}

/// The cost of inlining a call to `callee` whose arguments are `sroa_args` (see the
/// module documentation): `sroa_args[i]` says argument `i` points into one of the
/// caller's slots, so the callee's plain loads and stores through it are free unless the
/// pointer escapes (LLVM's SROA argument savings). May be negative for a tiny callee.
///
/// `const_args[i]` says argument `i` is a constant at this call: then every pure
/// instruction whose operands are all constants (through such arguments) folds once
/// inlined, and is free, as is a conditional branch on such a value (LLVM's
/// `CallAnalyzer` simplifies each instruction given the call's constant arguments).
pub fn inline_cost(callee: &Function, sroa_args: &[bool], const_args: &[bool]) -> i64 {
    use InstructionData as D;
    let Some(entry) = callee.entry_block() else {
        return 0;
    };
    let konst = constant_values(callee, entry, const_args);
    // Which parameter (by index) each pointer value derives from, through constant
    // `ptradd`s and address-space casts: layout order almost always defines before use;
    // a second sweep catches the rest (a missed derivation only costs more).
    let mut from: FxHashMap<Value, usize> = FxHashMap::default();
    for (k, &p) in callee.dfg.block_params(entry).iter().enumerate() {
        if sroa_args.get(k).copied().unwrap_or(false) {
            from.insert(p, k);
        }
    }
    let const_index = |v: Value| {
        matches!(callee.dfg.value_def(v), gyre_ir::ValueDef::Result(i)
            if callee.dfg.inst(i).opcode() == Opcode::Iconst)
    };
    for _ in 0..2 {
        for b in callee.layout.blocks() {
            for i in callee.layout.block_insts(b) {
                let base = match *callee.dfg.inst(i) {
                    D::PtrAdd { args, .. } if const_index(args[1]) => args[0],
                    D::Unary {
                        opcode: Opcode::AddrspaceCast,
                        arg,
                    } => arg,
                    _ => continue,
                };
                if let (Some(&k), Some(r)) = (from.get(&base), callee.dfg.inst_result(i)) {
                    from.insert(r, k);
                }
            }
        }
    }
    let mut insts = 0i64;
    let mut returned = false;
    // Per SROA argument: the cost its free accesses saved, and whether it escaped.
    let mut saved = vec![0i64; sroa_args.len()];
    let mut escaped = vec![false; sroa_args.len()];
    for b in callee.layout.blocks() {
        for i in callee.layout.block_insts(b) {
            let data = callee.dfg.inst(i);
            let folds = match callee.dfg.inst_result(i) {
                Some(r) => konst.contains(&r),
                None => false,
            };
            let free = match *data {
                // Folded to a constant given the call's constant arguments.
                _ if folds => true,
                D::Brif { arg, .. } if konst.contains(&arg) => true,
                // Constants: not instructions in LLVM IR, so LLVM never costs them.
                D::IntConst { .. } | D::FloatConst { .. } | D::GlobalAddr { .. } => true,
                // LLVM's `CallAnalyzer` models unconditional branches as free (they vanish
                // when blocks merge) and the first return as free.
                D::Jump { .. } => true,
                D::Return { .. } if !returned => {
                    returned = true;
                    true
                }
                // Constant-offset GEPs are free; derived pointers were followed above.
                D::PtrAdd { args, .. } if const_index(args[1]) => true,
                D::Unary {
                    opcode: Opcode::AddrspaceCast,
                    arg,
                } if from.contains_key(&arg) => true,
                D::Load { ptr, flags } if !flags.volatile && from.contains_key(&ptr) => {
                    saved[from[&ptr]] += INSTR_COST;
                    true
                }
                D::Store { args, flags } if !flags.volatile && from.contains_key(&args[1]) => {
                    saved[from[&args[1]]] += INSTR_COST;
                    if let Some(&k) = from.get(&args[0]) {
                        escaped[k] = true;
                    }
                    true
                }
                _ => {
                    // Any other use of a derived pointer (a call argument, a compare, a
                    // variable offset, a branch argument, an atomic) lets it escape.
                    callee.dfg.for_each_inst_value(i, |v| {
                        if let Some(&k) = from.get(&v) {
                            escaped[k] = true;
                        }
                    });
                    false
                }
            };
            if !free {
                insts += 1;
            }
        }
    }
    let lost: i64 = (0..saved.len())
        .filter(|&k| escaped[k])
        .map(|k| saved[k])
        .sum();
    INSTR_COST * insts + lost - INSTR_COST * (sroa_args.len() as i64 + 1)
}

/// The values of `callee` that are constants when the parameters marked in `const_args`
/// are: constants themselves, those parameters, and the results of pure instructions
/// whose operands all are (one sweep in layout order, where definitions almost always
/// come first; a value missed only costs more).
fn constant_values(
    callee: &Function,
    entry: Block,
    const_args: &[bool],
) -> rustc_hash::FxHashSet<Value> {
    let mut konst = rustc_hash::FxHashSet::default();
    for (k, &p) in callee.dfg.block_params(entry).iter().enumerate() {
        if const_args.get(k).copied().unwrap_or(false) {
            konst.insert(p);
        }
    }
    for b in callee.layout.blocks() {
        for i in callee.layout.block_insts(b) {
            let Some(r) = callee.dfg.inst_result(i) else {
                continue;
            };
            let op = callee.dfg.inst(i).opcode();
            let is_const = matches!(op, Opcode::Iconst | Opcode::Fconst);
            // Pure: no effect, no memory, no thread identity (`tid.x` has no operands
            // and is not a constant).
            let pure = !op.has_side_effects()
                && !op.reads_memory()
                && !op.is_convergent()
                && !op.is_terminator();
            let args = callee.dfg.inst_args(i);
            if is_const || (pure && !args.is_empty() && args.iter().all(|a| konst.contains(a))) {
                konst.insert(r);
            }
        }
    }
    konst
}

/// Is `v` (a call argument in `f`) a constant (`iconst`, `fconst`)?
fn is_constant(f: &Function, v: Value) -> bool {
    matches!(f.dfg.value_def(v), gyre_ir::ValueDef::Result(i)
        if matches!(f.dfg.inst(i).opcode(), Opcode::Iconst | Opcode::Fconst))
}

/// Does `v` (a call argument in `f`) point into one of `f`'s slots (through constant
/// `ptradd`s and address-space casts)?
fn points_into_slot(f: &Function, mut v: Value) -> bool {
    use InstructionData as D;
    for _ in 0..16 {
        let gyre_ir::ValueDef::Result(i) = f.dfg.value_def(v) else {
            return false;
        };
        v = match *f.dfg.inst(i) {
            D::SlotAddr { .. } => return true,
            D::Unary {
                opcode: Opcode::AddrspaceCast,
                arg,
            } => arg,
            D::PtrAdd { args, .. } => args[0],
            _ => return false,
        };
    }
    false
}

/// Strongly connected components of the call graph `succs` (edges caller -> callee), callees
/// first (Tarjan's order), computed without recursion.
pub fn call_graph_sccs(succs: &[Vec<usize>]) -> Vec<Vec<usize>> {
    let n = succs.len();
    const NONE: usize = usize::MAX;
    let mut index = vec![NONE; n];
    let mut low = vec![0usize; n];
    let mut on_stack = vec![false; n];
    let mut stack: Vec<usize> = Vec::new();
    let mut sccs = Vec::new();
    let mut next = 0usize;
    // The DFS stack: (node, next successor to visit).
    let mut dfs: Vec<(usize, usize)> = Vec::new();
    for root in 0..n {
        if index[root] != NONE {
            continue;
        }
        dfs.push((root, 0));
        index[root] = next;
        low[root] = next;
        next += 1;
        stack.push(root);
        on_stack[root] = true;
        while let Some(&mut (v, ref mut k)) = dfs.last_mut() {
            if let Some(&w) = succs[v].get(*k) {
                *k += 1;
                if index[w] == NONE {
                    index[w] = next;
                    low[w] = next;
                    next += 1;
                    stack.push(w);
                    on_stack[w] = true;
                    dfs.push((w, 0));
                } else if on_stack[w] {
                    low[v] = low[v].min(index[w]);
                }
                continue;
            }
            dfs.pop();
            if let Some(&(parent, _)) = dfs.last() {
                low[parent] = low[parent].min(low[v]);
            }
            if low[v] == index[v] {
                let mut scc = Vec::new();
                loop {
                    let w = stack.pop().expect("v is on the stack");
                    on_stack[w] = false;
                    scc.push(w);
                    if w == v {
                        break;
                    }
                }
                scc.reverse();
                sccs.push(scc);
            }
        }
    }
    sccs
}

/// The callees of the `call` instructions of `f`, in layout order, with the calls.
fn calls_of(f: &Function) -> Vec<(Inst, FuncId)> {
    let mut out = Vec::new();
    for b in f.layout.blocks() {
        for i in f.layout.block_insts(b) {
            if let InstructionData::Call { func, .. } = f.dfg.inst(i) {
                out.push((i, *func));
            }
        }
    }
    out
}

impl ModulePass for Inliner {
    fn name(&self) -> &'static str {
        NAME
    }

    fn run(
        &mut self,
        module: &mut Module,
        cx: &mut ModulePassContext<'_>,
    ) -> Result<ModulePassResult, PassError> {
        let mut res = ModulePassResult::default();
        // LLVM multiplies both thresholds by the target's factor (`updateThreshold`).
        let mult = i64::from(cx.knobs.inline_threshold_multiplier());
        let threshold = i64::from(cx.knobs.inline_threshold()) * mult;
        let hint_threshold = i64::from(cx.knobs.inlinehint_threshold()) * mult;
        if cx.knobs.disable_inlining() {
            return Ok(res);
        }
        let n = module.functions.len();
        // The call graph (distinct callees per caller) and every function's call count.
        let mut succs: Vec<Vec<usize>> = vec![Vec::new(); n];
        let mut num_calls = vec![0u64; n];
        let mut self_call = vec![false; n];
        for (id, f) in module.functions.iter() {
            for (_, callee) in calls_of(f) {
                if callee.index() >= n {
                    return Err(PassError(format!(
                        "inline: @{} calls a function that does not exist ({callee})",
                        f.name
                    )));
                }
                num_calls[callee.index()] += 1;
                self_call[id.index()] |= callee == id;
                if !succs[id.index()].contains(&callee.index()) {
                    succs[id.index()].push(callee.index());
                }
            }
        }
        let sccs = call_graph_sccs(&succs);
        let mut scc_of = vec![0usize; n];
        let mut recursive = vec![false; n];
        for (k, scc) in sccs.iter().enumerate() {
            for &f in scc {
                scc_of[f] = k;
                recursive[f] = scc.len() > 1 || self_call[f];
            }
        }
        let mut changed = vec![false; n];
        let simplify_callees = cx.knobs.inline_simplify_callees();
        for scc in &sccs {
            for &fi in scc {
                let fid = FuncId::new(fi);
                for (call, callee) in calls_of(&module.functions[fid]) {
                    let ci = callee.index();
                    let c = &module.functions[callee];
                    let mut why = String::new();
                    let skip = if scc_of[ci] == scc_of[fi] || recursive[ci] {
                        Some(("Recursive", format!("@{} is recursive", c.name)))
                    } else if c.inline == InlineHint::Never {
                        Some(("NoInline", format!("@{} is noinline", c.name)))
                    } else if c.kind == FuncKind::Kernel {
                        Some(("CalleeIsKernel", format!("@{} is a kernel", c.name)))
                    } else if c.entry_block().is_none() {
                        Some(("NoBody", format!("@{} has no body", c.name)))
                    } else {
                        let caller = &module.functions[fid];
                        let sroa: Vec<bool> = caller
                            .dfg
                            .inst_args(call)
                            .iter()
                            .map(|&a| points_into_slot(caller, a))
                            .collect();
                        let consts: Vec<bool> = caller
                            .dfg
                            .inst_args(call)
                            .iter()
                            .map(|&a| is_constant(caller, a))
                            .collect();
                        let cost = inline_cost(c, &sroa, &consts);
                        let last_call = c.internal && num_calls[ci] == 1;
                        let (limit, knob) = if c.inline == InlineHint::Hint {
                            (
                                hint_threshold,
                                "inlinehint-threshold x inline-threshold-multiplier",
                            )
                        } else {
                            (threshold, "inline-threshold x inline-threshold-multiplier")
                        };
                        if c.inline == InlineHint::Always || last_call || cost <= limit {
                            why = if c.inline == InlineHint::Always {
                                format!("@{}: alwaysinline", c.name)
                            } else if last_call {
                                format!("@{}: last call of an internal function", c.name)
                            } else {
                                format!("@{}: cost {cost} <= {knob} {limit}", c.name)
                            };
                            None
                        } else {
                            Some((
                                "TooCostly",
                                format!("@{}: cost {cost} > {knob} {limit}", c.name),
                            ))
                        }
                    };
                    if let Some((kind, msg)) = skip {
                        let f = &module.functions[fid];
                        let block = f.layout.inst_block(call);
                        cx.remark(NAME, f, block, kind, msg);
                        cx.stats.add(NAME, "NumNotInlined", 1);
                        continue;
                    }
                    // LLVM's passed remark (`-pass-remarks=inline`), for comparing decisions.
                    let f = &module.functions[fid];
                    cx.remark(NAME, f, f.layout.inst_block(call), "Inlined", why);
                    let c = &module.functions[callee];
                    if f.any_nan && !c.any_nan {
                        let msg = format!(
                            "@{} loses anynan: @{} requires canonical NaNs",
                            f.name, c.name
                        );
                        cx.remark(NAME, f, f.layout.inst_block(call), "AnyNanDropped", msg);
                    }
                    // The callee's calls are copied: count them.
                    for (_, cc) in calls_of(&module.functions[callee]) {
                        num_calls[cc.index()] += 1;
                    }
                    num_calls[ci] -= 1;
                    let placeholder = Function::new("", FuncKind::Device, Default::default());
                    let mut caller = std::mem::replace(&mut module.functions[fid], placeholder);
                    self.inline_call(&mut caller, call, &module.functions[callee]);
                    module.functions[fid] = caller;
                    changed[fi] = true;
                    cx.stats.add(NAME, "NumInlined", 1);
                }
            }
            // Its calls done, simplify each function of the component that a caller will
            // cost, before any caller does (LLVM's CGSCC pipeline runs the function
            // simplification passes on an SCC before visiting its callers). A callee
            // inlined whatever it costs (`alwaysinline`, or internal with one call left)
            // is left to be simplified with its caller: this saves the time, and its
            // copy is what the caller's own simplification or the pipeline sees anyway.
            if simplify_callees {
                for &fi in scc {
                    let f = &module.functions[FuncId::new(fi)];
                    let costed = num_calls[fi] > 1 || (num_calls[fi] == 1 && !f.internal);
                    if !costed
                        || recursive[fi]
                        || f.kind != FuncKind::Device
                        || matches!(f.inline, InlineHint::Never | InlineHint::Always)
                        || f.entry_block().is_none()
                    {
                        continue;
                    }
                    changed[fi] |= self.simplify(&mut module.functions[FuncId::new(fi)], cx)?;
                }
            }
        }
        // Delete internal device functions no call reaches any more (LLVM's globaldce),
        // with a worklist: a deleted function's calls no longer count.
        let mut dead = vec![false; n];
        let mut work: Vec<usize> = (0..n).filter(|&k| num_calls[k] == 0).collect();
        while let Some(k) = work.pop() {
            let f = &module.functions[FuncId::new(k)];
            if dead[k] || !f.internal || f.kind != FuncKind::Device {
                continue;
            }
            dead[k] = true;
            for (_, c) in calls_of(f) {
                num_calls[c.index()] -= 1;
                if num_calls[c.index()] == 0 {
                    work.push(c.index());
                }
            }
        }
        res.changed = (0..n)
            .filter(|&k| changed[k] && !dead[k])
            .map(FuncId::new)
            .collect();
        if dead.iter().any(|&d| d) {
            res.removed = (0..n).filter(|&k| dead[k]).map(FuncId::new).collect();
            cx.stats.add(NAME, "NumDeleted", res.removed.len() as u64);
            remove_functions(module, &dead);
        }
        Ok(res)
    }
}

/// Remove the functions marked `dead` from `module`, renumbering the others (in order) and
/// the calls to them. No call to a dead function may remain.
fn remove_functions(module: &mut Module, dead: &[bool]) {
    let mut new_id = vec![None; dead.len()];
    let mut next = 0;
    for (k, &d) in dead.iter().enumerate() {
        if !d {
            new_id[k] = Some(FuncId::new(next));
            next += 1;
        }
    }
    let old = std::mem::take(&mut module.functions);
    let mut functions = PrimaryMap::with_capacity(next);
    for (id, mut f) in old.into_iter() {
        if dead[id.index()] {
            continue;
        }
        let calls: Vec<Inst> = calls_of(&f).into_iter().map(|(i, _)| i).collect();
        for i in calls {
            if let InstructionData::Call { func, .. } = f.dfg.inst_mut(i) {
                *func = new_id[func.index()].expect("no call to a deleted function");
            }
        }
        functions.push(f);
    }
    module.functions = functions;
}

impl Inliner {
    /// Run `sroa` then `simplify` on `f` (a callee about to be costed); their counters and
    /// remarks go to the run's as if the passes had run in the pipeline. Did `f` change?
    fn simplify(
        &mut self,
        f: &mut Function,
        cx: &mut ModulePassContext<'_>,
    ) -> Result<bool, PassError> {
        let mut analyses = AnalysisCache::new();
        let mut sub = PassContext {
            knobs: cx.knobs,
            analyses: &mut analyses,
            stats: &mut *cx.stats,
            remarks: &mut *cx.remarks,
        };
        let r1 = self.sroa.run(f, &mut sub)?;
        sub.analyses.invalidate(r1.preserved);
        let r2 = self.simplify.run(f, &mut sub)?;
        Ok(r1.changed || r2.changed)
    }

    /// Replace `call` (a call of `callee` in `caller`) by a copy of `callee`'s body.
    fn inline_call(&mut self, caller: &mut Function, call: Inst, callee: &Function) {
        let call_block = caller.layout.inst_block(call).expect("call in the layout");
        let args: Vec<Value> = caller.dfg.inst_args(call).to_vec();
        // Split after the call (a call is never a terminator, so something follows).
        let after = caller
            .layout
            .next_inst(call)
            .expect("a block ends in a terminator");
        let cont = caller.dfg.make_block();
        caller.layout.split_block(cont, after);
        caller.layout.remove_inst(call);
        // The call's result becomes the continuation's parameter: its uses stay as they are.
        let result = caller.dfg.detach_result(call);
        if let Some(r) = result {
            let ty = caller.dfg.value_type(r);
            caller.dfg.attach_block_param(cont, r, ty);
        }

        self.values.clear();
        self.values.resize(callee.dfg.num_values(), None);
        self.blocks.clear();
        self.blocks.resize(callee.dfg.num_blocks(), None);
        self.slots.clear();
        self.slots.resize(callee.slots.len(), None);
        for (s, d) in callee.slots.iter() {
            self.slots[s.index()] = Some(caller.slots.push(*d));
        }
        // The entry block has no predecessors (the verifier requires it): its
        // instructions continue the call's block, its parameters are the arguments.
        let entry = callee
            .entry_block()
            .expect("checked: the callee has a body");
        // Blocks (with parameters) and instruction results, before any instruction: a
        // use may come before its definition in layout order.
        let mut prev = call_block;
        for b in callee.layout.blocks() {
            let params = callee.dfg.block_params(b);
            if b == entry {
                self.blocks[b.index()] = Some(call_block);
                for (&p, &a) in params.iter().zip(&args) {
                    self.values[p.index()] = Some(a);
                }
            } else {
                let nb = caller.dfg.make_block();
                caller.layout.insert_block_after(nb, prev);
                prev = nb;
                self.blocks[b.index()] = Some(nb);
                // An inlined loop keeps its unroll hints.
                let attrs = callee.loop_attrs(b);
                caller.set_loop_attrs(nb, attrs);
                for &p in params {
                    let ty = callee.dfg.value_type(p);
                    self.values[p.index()] = Some(caller.dfg.append_block_param(nb, ty));
                }
            }
            for i in callee.layout.block_insts(b) {
                if let Some(r) = callee.dfg.inst_result(i) {
                    let ty = callee.dfg.value_type(r);
                    self.values[r.index()] = Some(caller.dfg.make_detached_value(ty));
                }
            }
        }
        let has_result = result.is_some();
        for b in callee.layout.blocks() {
            let nb = self.blocks[b.index()].expect("mapped above");
            for i in callee.layout.block_insts(b) {
                let data = self.copy_inst(caller, callee, i, cont, has_result);
                let inst = caller.dfg.make_inst(data);
                if let Some(r) = callee.dfg.inst_result(i) {
                    let v = self.values[r.index()].expect("mapped above");
                    caller
                        .dfg
                        .attach_result_value(inst, v, callee.dfg.value_type(r));
                }
                caller.layout.append_inst(inst, nb);
            }
        }
        caller.convergent |= callee.convergent;
        caller.must_progress &= callee.must_progress;
        // A callee that promises canonical NaNs keeps its promise inside an `anynan`
        // caller only if the caller gives the attribute up (LLVM merges its
        // `no-nans-fp-math`-style attributes the same way: the AND of both).
        caller.any_nan &= callee.any_nan;
    }

    /// The data of callee instruction `i` for the caller: values, blocks and slots mapped,
    /// lists in the caller's pool; `return` becomes a jump to `cont`.
    fn copy_inst(
        &self,
        caller: &mut Function,
        callee: &Function,
        i: Inst,
        cont: Block,
        has_result: bool,
    ) -> InstructionData {
        let val = |v: Value| self.values[v.index()].expect("callee value defined");
        let pool_args = |bc: &BlockCall| -> Vec<Value> {
            callee
                .dfg
                .block_call_args(bc)
                .iter()
                .map(|&v| val(v))
                .collect()
        };
        let blk = |b: Block| self.blocks[b.index()].expect("callee block mapped");
        let pool = &mut caller.dfg.value_lists;
        match callee.dfg.inst(i) {
            InstructionData::Call { func, .. } => {
                let args: Vec<Value> = callee.dfg.inst_args(i).iter().map(|&v| val(v)).collect();
                InstructionData::Call {
                    func: *func,
                    args: ValueList::from_slice(&args, pool),
                }
            }
            InstructionData::Return { .. } => {
                let args: Vec<Value> = if has_result {
                    callee.dfg.inst_args(i).iter().map(|&v| val(v)).collect()
                } else {
                    Vec::new()
                };
                InstructionData::Jump {
                    dest: BlockCall::new(cont, &args, pool),
                }
            }
            InstructionData::Jump { dest } => InstructionData::Jump {
                dest: BlockCall::new(blk(dest.block), &pool_args(dest), pool),
            },
            InstructionData::Brif { arg, blocks } => InstructionData::Brif {
                arg: val(*arg),
                blocks: [
                    BlockCall::new(blk(blocks[0].block), &pool_args(&blocks[0]), pool),
                    BlockCall::new(blk(blocks[1].block), &pool_args(&blocks[1]), pool),
                ],
            },
            InstructionData::BrTable { arg, table } => {
                let jt = callee.dfg.jump_table(*table);
                let default = BlockCall::new(blk(jt.default.block), &pool_args(&jt.default), pool);
                let cases = jt
                    .cases
                    .iter()
                    .map(|(k, bc)| (*k, BlockCall::new(blk(bc.block), &pool_args(bc), pool)))
                    .collect();
                let table = caller
                    .dfg
                    .make_jump_table(JumpTableData::new(default, cases));
                InstructionData::BrTable {
                    arg: val(*arg),
                    table,
                }
            }
            InstructionData::SlotAddr { slot } => InstructionData::SlotAddr {
                slot: self.slots[slot.index()].expect("callee slot mapped"),
            },
            other => {
                let mut data = other.clone();
                // No pool data here: the operands are inline.
                for v in data.arguments_mut(&mut caller.dfg.value_lists) {
                    *v = val(*v);
                }
                data
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sccs_come_callees_first() {
        // 0 -> 1 -> 2 -> 1, 0 -> 3, 3 -> 3
        let succs = vec![vec![1, 3], vec![2], vec![1], vec![3]];
        let sccs = call_graph_sccs(&succs);
        let pos = |f: usize| sccs.iter().position(|s| s.contains(&f)).unwrap();
        assert_eq!(sccs.len(), 3);
        assert_eq!(pos(1), pos(2));
        assert!(pos(1) < pos(0) && pos(3) < pos(0));
        assert_eq!(sccs[pos(0)], vec![0]);
    }

    #[test]
    fn deep_call_chains_do_not_overflow() {
        let n = 200_000;
        let succs: Vec<Vec<usize>> = (0..n)
            .map(|k| if k + 1 < n { vec![k + 1] } else { vec![] })
            .collect();
        let sccs = call_graph_sccs(&succs);
        assert_eq!(sccs.len(), n);
        assert_eq!(sccs[0], vec![n - 1]);
    }
}
