//! The pass manager: function passes, loop passes run innermost-first, pipelines built
//! from strings or from pass objects, verification after each pass, timing, statistics
//! and remarks.
//!
//! A pass reports what it changed and which analyses it preserved ([`PassResult`]); the
//! manager invalidates the rest of the function's [`AnalysisCache`] and recomputes an
//! analysis only when a later pass asks for it. Loop passes run through a loop adaptor
//! like LLVM's (docs/architecture.md, "The loop-pass protocol"):
//!
//! - like LLVM's, the adaptor first puts every loop in loop-simplify and LCSSA form
//!   (`loop-simplify` and `lcssa` run on the function; they change nothing, at the cost of
//!   one check each, when the forms already hold);
//! - the loops of the function are visited in post-order of the loop forest (inner loops
//!   before their parents, siblings in layout order), each through the whole loop
//!   pipeline before the next;
//! - a loop is tracked by a stable [`LoopHandle`], not by its header: a pass reports a new
//!   header, new loops and deleted loops through the [`LoopUpdater`]; new loops are
//!   visited after the current one, deleted loops never;
//! - a pass that changed nothing keeps every analysis, so a pipeline of passes that find
//!   nothing to do costs one computation of the loop forest per function, whatever the
//!   number of loops.

use crate::analyses::{Analyses, AnalysisCache, ModuleAnalyses};
use crate::knobs::Knobs;
use crate::pipeline::{parse_pipeline, PipelineElement, PrintWhat, DEFAULT_PIPELINE};
use crate::registry::{self, PassKind};
use gyre_ir::{Block, EntityRef, FuncId, Function, Module};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::time::{Duration, Instant};

/// Loop-form promises a pass makes for every loop it leaves behind; `--verify-each`
/// checks them.
#[derive(Copy, Clone, PartialEq, Eq, Debug, Default)]
pub struct Forms {
    /// Every loop has a preheader, one latch and dedicated exits.
    pub loop_simplify: bool,
    /// Every value defined in a loop reaches outside uses through exit-block parameters.
    pub lcssa: bool,
    /// Every loop is rotated (its latch is an exiting block).
    pub rotated: bool,
}

/// What a pass did.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub struct PassResult {
    /// Did the function change at all?
    pub changed: bool,
    /// Analyses still valid afterwards.
    pub preserved: Analyses,
}

impl PassResult {
    /// Nothing changed: every analysis is preserved.
    pub const UNCHANGED: PassResult = PassResult {
        changed: false,
        preserved: Analyses::ALL,
    };

    /// Something changed; `preserved` analyses are still valid.
    pub fn changed(preserved: Analyses) -> PassResult {
        PassResult {
            changed: true,
            preserved,
        }
    }
}

/// Why a pass left something alone (`--remarks`).
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Remark {
    /// The pass.
    pub pass: &'static str,
    /// The function.
    pub function: String,
    /// The block concerned (a loop's header), if any.
    pub block: Option<Block>,
    /// A short machine-readable kind (`Irreducible`, `NotLoopSimplifyForm`, ...).
    pub kind: &'static str,
    /// A human explanation.
    pub message: String,
}

/// Per-pass counters (`--stats`), keyed by pass and counter name.
#[derive(Clone, Default, Debug)]
pub struct Stats {
    counters: BTreeMap<(&'static str, &'static str), u64>,
}

impl Stats {
    /// Add `n` to a counter.
    pub fn add(&mut self, pass: &'static str, counter: &'static str, n: u64) {
        *self.counters.entry((pass, counter)).or_default() += n;
    }
    /// The value of a counter (0 if never incremented).
    pub fn get(&self, pass: &str, counter: &str) -> u64 {
        self.counters
            .iter()
            .find(|((p, c), _)| *p == pass && *c == counter)
            .map_or(0, |(_, v)| *v)
    }
    /// All counters, ordered by pass then name.
    pub fn iter(&self) -> impl Iterator<Item = (&'static str, &'static str, u64)> + '_ {
        self.counters.iter().map(|((p, c), v)| (*p, *c, *v))
    }
}

/// What a pass sees besides the function.
pub struct PassContext<'a> {
    /// Knob values.
    pub knobs: &'a Knobs,
    /// Cached analyses of the function.
    pub analyses: &'a mut AnalysisCache,
    /// Counters.
    pub stats: &'a mut Stats,
    /// Remarks, collected whether or not they are printed.
    pub remarks: &'a mut Vec<Remark>,
}

impl PassContext<'_> {
    /// Record a remark.
    pub fn remark(
        &mut self,
        pass: &'static str,
        func: &Function,
        block: Option<Block>,
        kind: &'static str,
        message: impl Into<String>,
    ) {
        self.remarks.push(Remark {
            pass,
            function: func.name.clone(),
            block,
            kind,
            message: message.into(),
        });
    }
}

/// An error that stops the pipeline.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct PassError(pub String);

impl std::fmt::Display for PassError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for PassError {}

/// A pass over a whole function.
pub trait FunctionPass {
    /// The pipeline name.
    fn name(&self) -> &'static str;
    /// Loop forms guaranteed afterwards.
    fn establishes(&self) -> Forms {
        Forms::default()
    }
    /// Run on one function.
    fn run(
        &mut self,
        func: &mut Function,
        cx: &mut PassContext<'_>,
    ) -> Result<PassResult, PassError>;
}

/// A loop as the loop adaptor knows it: a stable id that survives the passes that change
/// the loop (rotation moves its header, unswitching clones it), unlike a
/// [`gyre_analysis::Loop`], which names a loop of one computation of the loop forest only.
#[derive(Copy, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct LoopHandle(u32);
cranelift_entity::entity_impl!(LoopHandle, "loophandle");

/// What a loop pass tells the loop adaptor about the loops it changed (LLVM's
/// `LPMUpdater`): the current loop's header moved, new loops appeared, the current loop is
/// gone.
///
/// A pass that changes loops without saying so here leaves the adaptor visiting the wrong
/// blocks; under `--verify-each` the adaptor checks every report against a fresh loop
/// forest and fails the pipeline on a loop that vanished or moved unannounced.
#[derive(Debug)]
pub struct LoopUpdater {
    handle: LoopHandle,
    header: Block,
    new_header: Option<Block>,
    deleted: bool,
    new_loops: Vec<Block>,
    rotated: bool,
}

impl LoopUpdater {
    /// An updater for the loop `handle` headed by `header` (the adaptor makes these; tests
    /// of a single pass may too).
    pub fn new(handle: LoopHandle, header: Block) -> LoopUpdater {
        LoopUpdater {
            handle,
            header,
            new_header: None,
            deleted: false,
            new_loops: Vec::new(),
            rotated: false,
        }
    }

    /// The stable id of the loop being visited.
    pub fn handle(&self) -> LoopHandle {
        self.handle
    }

    /// The header of the loop being visited, as updated by [`LoopUpdater::set_header`].
    pub fn header(&self) -> Block {
        self.new_header.unwrap_or(self.header)
    }

    /// The current loop's header is now `header` (LLVM's `moveToHeader`; rotation).
    pub fn set_header(&mut self, header: Block) {
        self.new_header = Some(header);
    }

    /// A new loop headed by `header` exists (a clone, a split-off loop). New loops are
    /// visited by the whole loop pipeline after the current loop, in the order reported;
    /// report a new nest innermost first.
    pub fn add_new_loop(&mut self, header: Block) {
        self.new_loops.push(header);
    }

    /// The current loop no longer exists (deleted, fully unswitched): no further pass of
    /// the pipeline visits it.
    pub fn mark_loop_deleted(&mut self) {
        self.deleted = true;
    }

    /// Has [`LoopUpdater::mark_loop_deleted`] been called?
    pub fn is_loop_deleted(&self) -> bool {
        self.deleted
    }

    /// The new loops reported so far.
    pub fn new_loops(&self) -> &[Block] {
        &self.new_loops
    }

    /// The current loop (at its header as reported) is in rotated form now
    /// ([`gyre_analysis::LoopInfo::is_rotated_form`]); `--verify-each` checks it.
    pub fn promise_rotated(&mut self) {
        self.rotated = true;
    }

    /// Has [`LoopUpdater::promise_rotated`] been called?
    pub fn is_rotated_promised(&self) -> bool {
        self.rotated
    }
}

/// A pass over one loop at a time.
///
/// The loop adaptor calls [`LoopPass::run_on_loop`] with the loop's current header; the
/// loop forest and the CFG's edges in `cx.analyses` are valid then (the adaptor
/// recomputes, once, what an earlier pass did not preserve). The CFG's order and the
/// dominator tree are valid too unless an earlier loop pass kept the forest current
/// without them (`loop-rotate` does, so that no analysis is recomputed per loop): a pass
/// that needs them asks with `cx.analyses.ensure`. The loop's
/// [`gyre_analysis::Loop`] is `cx.analyses.loops.innermost_loop(header)`. The pass says in
/// its [`PassResult`] which analyses it kept valid (updating them itself, e.g. with
/// [`gyre_analysis::Cfg::update_block`]), and through the [`LoopUpdater`] what became of
/// the loop.
pub trait LoopPass {
    /// The pipeline name.
    fn name(&self) -> &'static str;
    /// Loop forms guaranteed afterwards.
    fn establishes(&self) -> Forms {
        Forms::default()
    }
    /// Called by the loop adaptor before it visits the loops of a function (once per
    /// function per adaptor run): a pass that keeps per-function state resets it here.
    fn begin_function(&mut self, _func: &Function) {}
    /// Does the pass visit natural loops with an irreducible cycle inside? The adaptor
    /// establishes no loop-simplify form on them (loop-simplify leaves them alone), so by
    /// default it does not visit them; `loop-deletion` does (it only folds constant
    /// branches there, as LLVM's LoopDeletion does on such loops).
    fn visits_irreducible_insides(&self) -> bool {
        false
    }
    /// Run on the loop headed by `header`.
    fn run_on_loop(
        &mut self,
        func: &mut Function,
        header: Block,
        cx: &mut PassContext<'_>,
        updater: &mut LoopUpdater,
    ) -> Result<PassResult, PassError>;
}

/// What a module pass sees besides the module.
pub struct ModulePassContext<'a> {
    /// Knob values.
    pub knobs: &'a Knobs,
    /// Counters.
    pub stats: &'a mut Stats,
    /// Remarks, collected whether or not they are printed.
    pub remarks: &'a mut Vec<Remark>,
}

impl ModulePassContext<'_> {
    /// Record a remark about `func`.
    pub fn remark(
        &mut self,
        pass: &'static str,
        func: &Function,
        block: Option<Block>,
        kind: &'static str,
        message: impl Into<String>,
    ) {
        self.remarks.push(Remark {
            pass,
            function: func.name.clone(),
            block,
            kind,
            message: message.into(),
        });
    }
}

/// What a module pass did: which functions it changed and which it removed.
///
/// Both lists name functions by their ids **before** the pass removed any. The manager
/// invalidates every analysis of a changed function, drops the caches of removed ones
/// ([`ModuleAnalyses::remove_functions`]), and under `--verify-each` checks that every
/// function not listed is textually as it was and that the module verifies.
#[derive(Clone, PartialEq, Eq, Debug, Default)]
pub struct ModulePassResult {
    /// Functions whose body (or attributes) changed.
    pub changed: Vec<FuncId>,
    /// Functions removed from the module, ids increasing; the others kept their order.
    pub removed: Vec<FuncId>,
}

/// A pass over the whole module (the inliner): it may change several functions and
/// remove some. Module passes run only at the top level of a pipeline (not inside
/// `function(...)` or `loop(...)`); the function passes after one see its result.
pub trait ModulePass {
    /// The pipeline name.
    fn name(&self) -> &'static str;
    /// Run on the module.
    fn run(
        &mut self,
        module: &mut Module,
        cx: &mut ModulePassContext<'_>,
    ) -> Result<ModulePassResult, PassError>;
}

/// A node of a built pipeline.
pub enum PipelineNode {
    /// A module pass, run once on the whole module.
    Module(Box<dyn ModulePass>),
    /// A function pass.
    Function(Box<dyn FunctionPass>),
    /// A loop adaptor with its loop passes.
    Loop(Vec<Box<dyn LoopPass>>),
    /// An analysis printer (`print<domtree>`): appends the analysis of each function to
    /// [`Report::dumps`], as `opt`'s printers write to standard error.
    Print(PrintWhat),
}

/// How the manager reports and checks.
#[derive(Clone, Default, Debug)]
pub struct Options {
    /// Run the verifier and the promised loop-form checks after every pass, check that
    /// every analysis a pass claims to preserve equals a fresh one (also when it reports no
    /// change), that a pass reporting no change left the function as it was, and that loop
    /// passes reported every loop they moved or deleted.
    pub verify_each: bool,
    /// Print the function after every pass.
    pub print_after_all: bool,
    /// Print the function after these passes.
    pub print_after: Vec<String>,
    /// Time each loop-pass invocation (two clock reads per pass per loop; function passes
    /// are always timed). Without it, `Report::pass_times` has no loop passes.
    pub time_loop_passes: bool,
    /// Keep no remarks (`Report::remarks` stays empty): for a caller that will not print
    /// them. Loop passes leave one per loop they leave alone, so keeping them to the end
    /// of the run costs memory in proportion to the function's loops.
    pub drop_remarks: bool,
}

/// Output collected while running (printed by the CLI as requested).
#[derive(Default, Debug)]
pub struct Report {
    /// Time per pass name, in first-run order.
    pub pass_times: Vec<(&'static str, Duration)>,
    /// Time and number of computations per analysis, summed over functions.
    pub analysis_times: Vec<(&'static str, Duration, u32)>,
    /// Counters.
    pub stats: Stats,
    /// Remarks.
    pub remarks: Vec<Remark>,
    /// `--print-after` dumps.
    pub dumps: String,
    /// Number of loop-pass invocations, per pass name (what the loop adaptor visited).
    pub loop_visits: Vec<(&'static str, u64)>,
}

/// A pipeline ready to run.
pub struct PassManager {
    nodes: Vec<PipelineNode>,
    /// Knob values.
    pub knobs: Knobs,
    /// Reporting and checking options.
    pub options: Options,
}

/// Per-run bookkeeping shared by the function and loop drivers.
struct Run<'a> {
    knobs: &'a Knobs,
    options: &'a Options,
    module: &'a Module,
    report: &'a mut Report,
    pass_times: BTreeMap<&'static str, (usize, Duration)>,
    loop_visits: BTreeMap<&'static str, u64>,
}

impl Run<'_> {
    fn time(&mut self, name: &'static str, d: Duration) {
        let n = self.pass_times.len();
        self.pass_times.entry(name).or_insert((n, Duration::ZERO)).1 += d;
    }
}

impl PassManager {
    /// An empty pipeline; add passes with [`PassManager::add_function_pass`] and
    /// [`PassManager::add_loop_passes`].
    pub fn new(knobs: Knobs, options: Options) -> PassManager {
        PassManager {
            nodes: Vec::new(),
            knobs,
            options,
        }
    }

    /// Append a function pass.
    pub fn add_function_pass(&mut self, pass: Box<dyn FunctionPass>) {
        self.nodes.push(PipelineNode::Function(pass));
    }

    /// Append a loop adaptor running `passes` on every loop (`loop(a,b,c)`).
    pub fn add_loop_passes(&mut self, passes: Vec<Box<dyn LoopPass>>) {
        self.nodes.push(PipelineNode::Loop(passes));
    }

    /// Append a module pass. The function passes before it run on every function first,
    /// those after it see its result.
    pub fn add_module_pass(&mut self, pass: Box<dyn ModulePass>) {
        self.nodes.push(PipelineNode::Module(pass));
    }

    /// Build a pipeline from its string form (`loop-simplify,lcssa,loop(loop-rotate)`).
    /// Loop passes at the top level are wrapped in a loop adaptor, as LLVM does.
    /// `module(...)` (top level only) and `function(...)` nest a pipeline;
    /// `default<O0>`..`default<O3>` stand for [`DEFAULT_PIPELINE`] (nothing at `O0`), and
    /// `print<NAME>` is an analysis printer ([`PrintWhat`]).
    pub fn from_pipeline(
        text: &str,
        knobs: Knobs,
        options: Options,
    ) -> Result<PassManager, String> {
        let elems = parse_pipeline(text).map_err(|e| e.to_string())?;
        let mut pm = PassManager::new(knobs, options);
        // An explicit stack over `module(...)` and `function(...)` nesting.
        let mut stack: Vec<std::slice::Iter<'_, PipelineElement>> = vec![elems.iter()];
        // How many of the open adaptors are `function(...)`: no module pass inside one.
        let mut in_function: Vec<bool> = vec![false];
        while let Some(top) = stack.last_mut() {
            let Some(e) = top.next() else {
                stack.pop();
                in_function.pop();
                continue;
            };
            let no_nesting = |e: &PipelineElement| {
                if e.nested.is_empty() {
                    Ok(())
                } else {
                    Err(format!(
                        "pipeline:{}: '{}' is not an adaptor; only module(...), function(...) \
                         and loop(...) nest",
                        e.col, e.name
                    ))
                }
            };
            match e.name.as_str() {
                "module" if stack.len() == 1 => {
                    stack.push(e.nested.iter());
                    in_function.push(false);
                }
                "module" => {
                    return Err(format!(
                        "pipeline:{}: module(...) can only be the outermost adaptor",
                        e.col
                    ))
                }
                "function" => {
                    stack.push(e.nested.iter());
                    in_function.push(true);
                }
                "loop" | "loop-mssa" => {
                    let mut passes = Vec::new();
                    for inner in &e.nested {
                        passes.push(build_loop_pass(inner)?);
                    }
                    pm.add_loop_passes(passes);
                }
                "default" => {
                    no_nesting(e)?;
                    match e.params.as_slice() {
                        [l] if l == "O0" => {}
                        [l] if matches!(l.as_str(), "O1" | "O2" | "O3") => {
                            let sub = PassManager::from_pipeline(
                                DEFAULT_PIPELINE,
                                pm.knobs.clone(),
                                Options::default(),
                            )?;
                            pm.nodes.extend(sub.nodes);
                        }
                        _ => {
                            return Err(format!(
                                "pipeline:{}: default<...> takes one of O0, O1, O2, O3 \
                                 (got '{}')",
                                e.col,
                                e.params.join(";")
                            ))
                        }
                    }
                }
                "print" => {
                    no_nesting(e)?;
                    let what = match e.params.as_slice() {
                        [p] => PrintWhat::from_name(p),
                        _ => None,
                    };
                    let names: Vec<&str> = PrintWhat::ALL.iter().map(|(n, _)| *n).collect();
                    let what = what.ok_or_else(|| {
                        format!(
                            "pipeline:{}: print<...> takes one analysis: {}",
                            e.col,
                            names.join(", ")
                        )
                    })?;
                    pm.nodes.push(PipelineNode::Print(what));
                }
                _ if !e.nested.is_empty() => return Err(no_nesting(e).unwrap_err()),
                _ => match registry::lookup(&e.name) {
                    Some(info) if info.kind == PassKind::Loop => {
                        pm.add_loop_passes(vec![build_loop_pass(e)?]);
                    }
                    Some(info) if info.kind == PassKind::Module => {
                        if in_function.iter().any(|&f| f) {
                            return Err(format!(
                                "pipeline:{}: '{}' is a module pass and cannot run inside \
                                 function(...)",
                                e.col, e.name
                            ));
                        }
                        let create = registry::module_pass_ctor(&e.name)
                            .expect("module passes have a constructor");
                        pm.add_module_pass(
                            create(&e.params).map_err(|m| format!("pipeline:{}: {m}", e.col))?,
                        );
                    }
                    Some(info) => pm.add_function_pass(
                        (info
                            .create_function
                            .expect("function passes have a constructor"))(
                            &e.params
                        )
                        .map_err(|m| format!("pipeline:{}: {m}", e.col))?,
                    ),
                    None => return Err(unknown_pass(e)),
                },
            }
        }
        Ok(pm)
    }

    /// Run the pipeline on every function of a module, with fresh analyses.
    pub fn run_module(&mut self, module: &mut Module) -> Result<Report, PassError> {
        self.run_module_with(module, &mut ModuleAnalyses::new())
    }

    /// Run the pipeline on every function of a module, starting from (and leaving behind)
    /// the analyses in `analyses`: whatever the last passes kept valid is there for the
    /// next user (the PTX emitter in `gyre compile -O`).
    pub fn run_module_with(
        &mut self,
        module: &mut Module,
        analyses: &mut ModuleAnalyses,
    ) -> Result<Report, PassError> {
        let mut report = Report::default();
        let before = analyses.totals();
        let mut pass_times = BTreeMap::new();
        let mut loop_visits = BTreeMap::new();
        // Module passes split the pipeline: the function nodes between two of them run
        // function by function (each function through all of them), as before.
        let mut start = 0;
        while start < self.nodes.len() {
            if let PipelineNode::Module(pass) = &mut self.nodes[start] {
                run_module_pass(
                    pass.as_mut(),
                    module,
                    analyses,
                    &self.knobs,
                    &self.options,
                    &mut report,
                    &mut pass_times,
                )?;
                start += 1;
                continue;
            }
            let end = (start..self.nodes.len())
                .find(|&k| matches!(self.nodes[k], PipelineNode::Module(_)))
                .unwrap_or(self.nodes.len());
            run_function_nodes(
                &mut self.nodes[start..end],
                module,
                analyses,
                &self.knobs,
                &self.options,
                &mut report,
                &mut pass_times,
                &mut loop_visits,
            )?;
            start = end;
        }
        let mut times: Vec<_> = pass_times.into_iter().collect();
        times.sort_by_key(|(_, (order, _))| *order);
        report.pass_times = times.into_iter().map(|(n, (_, d))| (n, d)).collect();
        report.loop_visits = loop_visits.into_iter().collect();
        let after = analyses.totals();
        report.analysis_times = AnalysisCache::TIMED
            .iter()
            .zip(after.iter().zip(before))
            .map(|(n, (a, b))| (*n, a.0 - b.0, a.1 - b.1))
            .collect();
        Ok(report)
    }
}

type PassTimes = BTreeMap<&'static str, (usize, Duration)>;

/// Run function-level nodes (function passes, loop adaptors, printers) on every function
/// of the module, each function through all of them before the next.
#[allow(clippy::too_many_arguments)]
fn run_function_nodes(
    nodes: &mut [PipelineNode],
    module: &mut Module,
    analyses: &mut ModuleAnalyses,
    knobs: &Knobs,
    options: &Options,
    report: &mut Report,
    pass_times: &mut PassTimes,
    loop_visits: &mut BTreeMap<&'static str, u64>,
) -> Result<(), PassError> {
    {
        let ids: Vec<_> = module.functions.keys().collect();
        let mut result = Ok(());
        for id in ids {
            // Take the function out so passes get `&mut Function` while the rest of the
            // module stays readable for printing and verification; a placeholder keeps the
            // name and signature (a call to the function itself is checked against it).
            let old = &module.functions[id];
            let mut placeholder = Function::new(old.name.clone(), old.kind, old.sig.clone());
            placeholder.convergent = old.convergent;
            placeholder.must_progress = old.must_progress;
            placeholder.any_nan = old.any_nan;
            placeholder.internal = old.internal;
            placeholder.inline = old.inline;
            let mut func = std::mem::replace(&mut module.functions[id], placeholder);
            let mut run = Run {
                knobs,
                options,
                module,
                report,
                pass_times: core::mem::take(pass_times),
                loop_visits: core::mem::take(loop_visits),
            };
            result = run_function(nodes, &mut func, analyses.get_mut(id), &mut run);
            *pass_times = run.pass_times;
            *loop_visits = run.loop_visits;
            module.functions[id] = func;
            if result.is_err() {
                break;
            }
        }
        result
    }
}

/// Run a module pass: invalidate the analyses of what it changed, drop those of what it
/// removed, and under `--verify-each` check its report and the module.
fn run_module_pass(
    pass: &mut dyn ModulePass,
    module: &mut Module,
    analyses: &mut ModuleAnalyses,
    knobs: &Knobs,
    options: &Options,
    report: &mut Report,
    pass_times: &mut PassTimes,
) -> Result<(), PassError> {
    let name = pass.name();
    // Under --verify-each, each function's text (callees by name, so that removing
    // functions renumbers nothing here) to check what the pass says it left alone.
    let before: Option<Vec<String>> = options.verify_each.then(|| {
        module
            .functions
            .values()
            .map(|f| f.display(Some(module)).to_string())
            .collect()
    });
    let n_before = module.functions.len();
    let start = Instant::now();
    let mut cx = ModulePassContext {
        knobs,
        stats: &mut report.stats,
        remarks: &mut report.remarks,
    };
    let res = pass.run(module, &mut cx)?;
    let n = pass_times.len();
    pass_times.entry(name).or_insert((n, Duration::ZERO)).1 += start.elapsed();
    if !res.removed.windows(2).all(|w| w[0] < w[1])
        || res.removed.iter().any(|f| f.index() >= n_before)
        || n_before - res.removed.len() != module.functions.len()
    {
        return Err(PassError(format!(
            "after pass '{name}': the removed functions it reported ({}) do not account for \
             the module's {} functions (were {n_before})",
            res.removed.len(),
            module.functions.len()
        )));
    }
    for &f in &res.changed {
        if f.index() < n_before {
            analyses.get_mut(f).invalidate(Analyses::NONE);
        }
    }
    analyses.remove_functions(&res.removed);
    // Old id -> new id of the functions kept.
    let mut kept = Vec::with_capacity(module.functions.len());
    let mut removed = res.removed.iter().peekable();
    for k in 0..n_before {
        if removed.peek().is_some_and(|f| f.index() == k) {
            removed.next();
        } else {
            kept.push(k);
        }
    }
    if options.print_after_all || options.print_after.iter().any(|p| p == name) {
        for &k in &res.changed {
            let Some(new) = kept.iter().position(|&o| o == k.index()) else {
                continue;
            };
            let f = &module.functions[FuncId::new(new)];
            let _ = writeln!(
                report.dumps,
                "; *** IR Dump After {name} on @{} ***",
                f.name
            );
            let _ = gyre_ir::write::write_function(&mut report.dumps, f, Some(module));
            report.dumps.push('\n');
        }
    }
    if let Some(before) = before {
        for (new, &old) in kept.iter().enumerate() {
            if res.changed.iter().any(|c| c.index() == old) {
                continue;
            }
            let f = &module.functions[FuncId::new(new)];
            if before[old] != f.display(Some(module)).to_string() {
                return Err(PassError(format!(
                    "after pass '{name}': @{}: changed, but not reported as changed",
                    f.name
                )));
            }
        }
        if let Err(errs) = gyre_ir::verifier::verify_module(module) {
            return Err(PassError(format!(
                "after pass '{name}': verifier errors:\n{errs}"
            )));
        }
    }
    Ok(())
}

fn run_function(
    nodes: &mut [PipelineNode],
    func: &mut Function,
    cache: &mut AnalysisCache,
    run: &mut Run<'_>,
) -> Result<(), PassError> {
    for node in nodes {
        match node {
            PipelineNode::Function(pass) => {
                let before = snapshot(run.options, func);
                let start = Instant::now();
                let mut cx = PassContext {
                    knobs: run.knobs,
                    analyses: cache,
                    stats: &mut run.report.stats,
                    remarks: &mut run.report.remarks,
                };
                let res = pass.run(func, &mut cx)?;
                cache.invalidate(res.preserved);
                run.time(pass.name(), start.elapsed());
                if run.options.drop_remarks {
                    run.report.remarks.clear();
                }
                after_pass(
                    run,
                    pass.name(),
                    pass.establishes(),
                    res,
                    func,
                    cache,
                    before,
                )?;
            }
            PipelineNode::Loop(passes) => run_loop_pipeline(passes, func, cache, run)?,
            PipelineNode::Print(what) => print_analysis(*what, func, run)?,
            // `run_module_with` splits the pipeline at module passes.
            PipelineNode::Module(pass) => {
                return Err(PassError(format!(
                    "module pass '{}' reached the function driver",
                    pass.name()
                )))
            }
        }
    }
    Ok(())
}

/// `print<...>`: the analysis of `func`, appended to the report's dumps. Computed fresh,
/// so that printing never changes what the cache holds for the passes after it.
fn print_analysis(what: PrintWhat, func: &Function, run: &mut Run<'_>) -> Result<(), PassError> {
    use gyre_analysis::{Cfg, DomTree, LoopInfo, PostDomTree, Uniformity};
    let cfg = Cfg::with_function(func)
        .map_err(|e| PassError(format!("print<...>: @{}: {e}", func.name)))?;
    let text = match what {
        PrintWhat::Cfg => gyre_analysis::print_cfg(&cfg, func),
        PrintWhat::Domtree => {
            gyre_analysis::print_domtree(&DomTree::with_function(func, &cfg), func)
        }
        PrintWhat::Postdomtree => {
            gyre_analysis::print_postdomtree(&PostDomTree::with_function(func, &cfg), func)
        }
        PrintWhat::Loops => {
            let dt = DomTree::with_function(func, &cfg);
            gyre_analysis::print_loops(&LoopInfo::with_function(func, &cfg, &dt), func)
        }
        PrintWhat::Uniformity => {
            let dt = DomTree::with_function(func, &cfg);
            let pdt = PostDomTree::with_function(func, &cfg);
            let loops = LoopInfo::with_function(func, &cfg, &dt);
            let mut u = Uniformity::new();
            u.compute(func, &cfg, &dt, &pdt, &loops);
            gyre_analysis::print_uniformity(&u, func, Some(run.module))
        }
    };
    run.report.dumps.push_str(&text);
    Ok(())
}

/// The function's text before a pass, when `--verify-each` will check a "no change" claim.
fn snapshot(options: &Options, func: &Function) -> Option<String> {
    options.verify_each.then(|| func.display(None).to_string())
}

/// The loop adaptor: every loop through every pass of `passes`, innermost first.
fn run_loop_pipeline(
    passes: &mut [Box<dyn LoopPass>],
    func: &mut Function,
    cache: &mut AnalysisCache,
    run: &mut Run<'_>,
) -> Result<(), PassError> {
    // Like LLVM's loop adaptor (its `LoopCanonicalizationFPM`), put every loop in
    // loop-simplify and LCSSA form first: loop passes rely on both. On a function already
    // in both forms, each costs one check and keeps every analysis.
    let mut canonicalize = [
        PipelineNode::Function(Box::new(crate::loop_simplify::LoopSimplify::default())),
        PipelineNode::Function(Box::new(crate::lcssa::Lcssa::default())),
    ];
    run_function(&mut canonicalize, func, cache, run)?;
    let fname = func.name.clone();
    let ensure = |cache: &mut AnalysisCache, func: &Function| {
        cache
            .ensure(func, Analyses::LOOPS)
            .map_err(|e| PassError(format!("loop adaptor: @{fname}: {e}")))
    };
    ensure(cache, func)?;
    // Stable handles: the header of each tracked loop, and whether it is gone.
    let mut headers: Vec<Block> = Vec::with_capacity(cache.loops.num_loops());
    let mut deleted: Vec<bool> = Vec::with_capacity(cache.loops.num_loops());
    // The loops in post-order of the forest (children in order, then their parent), with
    // an explicit stack; the worklist is that order reversed, popped from the back.
    let loops = &cache.loops;
    let mut order = Vec::with_capacity(loops.num_loops());
    let mut stack: Vec<(gyre_analysis::Loop, usize)> = Vec::new();
    for &top in loops.top_level() {
        stack.push((top, 0));
        while let Some((l, next)) = stack.last_mut() {
            let l = *l;
            match loops.children(l).get(*next) {
                Some(&c) => {
                    *next += 1;
                    stack.push((c, 0));
                }
                None => {
                    stack.pop();
                    // Loops with irreducible cycles inside (which loop-simplify
                    // remarks) are visited only by the passes that ask for them.
                    order.push(loops.header(l));
                }
            }
        }
    }
    let mut worklist: Vec<LoopHandle> = Vec::with_capacity(order.len());
    for &h in order.iter().rev() {
        worklist.push(LoopHandle::from_u32(headers.len() as u32));
        headers.push(h);
        deleted.push(false);
    }
    for pass in passes.iter_mut() {
        pass.begin_function(func);
    }
    let mut fresh_loops: Vec<Block> = Vec::new();
    // Per pass of the pipeline: time and visits, merged into the report at the end (a map
    // update per visit would cost more than the visit of a pass that has nothing to do).
    let mut times = vec![Duration::ZERO; passes.len()];
    let mut visits = vec![0u64; passes.len()];
    while let Some(h) = worklist.pop() {
        fresh_loops.clear();
        for (k, pass) in passes.iter_mut().enumerate() {
            if deleted[h.index()] {
                break;
            }
            ensure(cache, func)?;
            let header = headers[h.index()];
            if !cache.loops.is_header(header) {
                // Only a pass that did not report what it did gets here: `--verify-each`
                // names it (below); without it, the loop is no longer there to visit.
                break;
            }
            // Most loop passes need a natural loop all the way down.
            if !pass.visits_irreducible_insides()
                && cache
                    .loops
                    .innermost_loop(header)
                    .is_some_and(|l| cache.loops.contains_irreducible(l))
            {
                continue;
            }
            let before = snapshot(run.options, func);
            let start = run.options.time_loop_passes.then(Instant::now);
            let mut updater = LoopUpdater::new(h, header);
            let mut cx = PassContext {
                knobs: run.knobs,
                analyses: cache,
                stats: &mut run.report.stats,
                remarks: &mut run.report.remarks,
            };
            let res = pass.run_on_loop(func, header, &mut cx, &mut updater)?;
            if !res.preserved.contains(Analyses::ALL) {
                cache.invalidate(res.preserved);
            }
            if let Some(start) = start {
                times[k] += start.elapsed();
            }
            visits[k] += 1;
            if run.options.drop_remarks {
                run.report.remarks.clear();
            }
            if updater.deleted {
                deleted[h.index()] = true;
            }
            if let Some(nh) = updater.new_header {
                headers[h.index()] = nh;
                // The loop's attributes (unroll hints) follow its header.
                func.move_loop_attrs(header, nh);
            }
            fresh_loops.extend_from_slice(&updater.new_loops);
            if run.options.verify_each
                || !run.options.print_after.is_empty()
                || run.options.print_after_all
            {
                after_pass(
                    run,
                    pass.name(),
                    pass.establishes(),
                    res,
                    func,
                    cache,
                    before,
                )?;
            }
            if run.options.verify_each {
                check_loop_reports(pass.name(), func, &updater, headers[h.index()]).map_err(
                    |m| PassError(format!("after pass '{}': @{fname}: {m}", pass.name())),
                )?;
            }
        }
        // New loops are visited next, in the order they were reported.
        for &nh in fresh_loops.iter().rev() {
            worklist.push(LoopHandle::from_u32(headers.len() as u32));
            headers.push(nh);
            deleted.push(false);
        }
    }
    // The loop passes' shared scalar-evolution buffers are sized by the function: free
    // them for the passes after the loop pipeline.
    cache.loop_scev = gyre_analysis::ScalarEvolution::new();
    for (k, pass) in passes.iter().enumerate() {
        if visits[k] > 0 {
            if run.options.time_loop_passes {
                run.time(pass.name(), times[k]);
            }
            *run.loop_visits.entry(pass.name()).or_default() += visits[k];
        }
    }
    Ok(())
}

/// `--verify-each`: does a fresh loop forest agree with what the pass reported?
fn check_loop_reports(
    name: &str,
    func: &Function,
    updater: &LoopUpdater,
    header: Block,
) -> Result<(), String> {
    let cfg = gyre_analysis::Cfg::with_function(func).map_err(|e| e.to_string())?;
    let dt = gyre_analysis::DomTree::with_function(func, &cfg);
    let loops = gyre_analysis::LoopInfo::with_function(func, &cfg, &dt);
    if !updater.deleted && !loops.is_header(header) {
        return Err(format!(
            "the loop at {header} is gone, but the pass reported neither a new header \
             (LoopUpdater::set_header) nor its deletion (LoopUpdater::mark_loop_deleted) \
             [{name}]"
        ));
    }
    for &nh in &updater.new_loops {
        if !loops.is_header(nh) {
            return Err(format!("reported a new loop at {nh}, which heads no loop"));
        }
    }
    if updater.rotated && !updater.deleted {
        let l = loops
            .innermost_loop(header)
            .expect("checked above: a header");
        if !loops.is_rotated_form(l, &cfg) {
            return Err(format!(
                "promised the loop at {header} rotated, but its latch does not exit"
            ));
        }
    }
    Ok(())
}

fn after_pass(
    run: &mut Run<'_>,
    name: &'static str,
    forms: Forms,
    res: PassResult,
    func: &Function,
    cache: &mut AnalysisCache,
    before: Option<String>,
) -> Result<(), PassError> {
    let options = run.options;
    if options.print_after_all || options.print_after.iter().any(|p| p == name) {
        let report = &mut *run.report;
        let _ = writeln!(
            report.dumps,
            "; *** IR Dump After {name} on @{} ***",
            func.name
        );
        let _ = gyre_ir::write::write_function(&mut report.dumps, func, Some(run.module));
        report.dumps.push('\n');
    }
    if !options.verify_each {
        return Ok(());
    }
    if !res.changed {
        if let Some(before) = before {
            if before != func.display(None).to_string() {
                return Err(PassError(format!(
                    "after pass '{name}': @{}: reported no change, but changed the function",
                    func.name
                )));
            }
        }
    }
    crate::verify::verify_after_pass(name, forms, func, cache, run.module).map_err(PassError)
}

fn build_loop_pass(e: &PipelineElement) -> Result<Box<dyn LoopPass>, String> {
    match registry::lookup(&e.name) {
        Some(info) if info.kind == PassKind::Loop => {
            (info.create_loop.expect("loop passes have a constructor"))(&e.params)
                .map_err(|m| format!("pipeline:{}: {m}", e.col))
        }
        Some(info) => Err(format!(
            "pipeline:{}: '{}' is a {} pass and cannot run inside loop(...)",
            e.col,
            e.name,
            if info.kind == PassKind::Module {
                "module"
            } else {
                "function"
            }
        )),
        None => Err(unknown_pass(e)),
    }
}

fn unknown_pass(e: &PipelineElement) -> String {
    let names: Vec<&str> = registry::PASSES.iter().map(|p| p.name).collect();
    format!(
        "pipeline:{}: unknown pass '{}'; available passes: {}",
        e.col,
        e.name,
        names.join(", ")
    )
}
