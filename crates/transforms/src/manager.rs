//! The pass manager: function passes, loop passes run innermost-first, pipelines built
//! from strings, verification after each pass, timing, statistics and remarks.
//!
//! A pass reports what it changed and which analyses it preserved ([`PassResult`]); the
//! manager invalidates the rest of the [`AnalysisCache`]. Loop passes run through a loop
//! adaptor like LLVM's: the loops of the function in post-order of the loop forest
//! (inner loops before their parents, siblings in layout order), and loops a pass
//! creates (e.g. unswitching's clones) are queued through [`LoopUpdater`] and visited too.

use crate::analyses::{Analyses, AnalysisCache};
use crate::knobs::Knobs;
use crate::pipeline::{parse_pipeline, PipelineElement};
use crate::registry::{self, PassKind};
use gyre_ir::{Block, Function, Module};
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

/// Lets a loop pass tell the loop adaptor about loops it created.
#[derive(Default, Debug)]
pub struct LoopUpdater {
    new_headers: Vec<Block>,
}

impl LoopUpdater {
    /// Queue a new loop (by its header) to be visited by the loop pipeline.
    pub fn add_new_loop(&mut self, header: Block) {
        self.new_headers.push(header);
    }
}

/// A pass over one loop at a time, identified by its header.
pub trait LoopPass {
    /// The pipeline name.
    fn name(&self) -> &'static str;
    /// Loop forms guaranteed afterwards.
    fn establishes(&self) -> Forms {
        Forms::default()
    }
    /// Run on the loop headed by `header`; the loop forest in `cx.analyses` is valid.
    fn run_on_loop(
        &mut self,
        func: &mut Function,
        header: Block,
        cx: &mut PassContext<'_>,
        updater: &mut LoopUpdater,
    ) -> Result<PassResult, PassError>;
}

/// A node of a built pipeline.
pub enum PipelineNode {
    /// A function pass.
    Function(Box<dyn FunctionPass>),
    /// A loop adaptor with its loop passes.
    Loop(Vec<Box<dyn LoopPass>>),
}

/// How the manager reports and checks.
#[derive(Clone, Default, Debug)]
pub struct Options {
    /// Run the verifier and the promised loop-form checks after every pass.
    pub verify_each: bool,
    /// Print the function after every pass.
    pub print_after_all: bool,
    /// Print the function after these passes.
    pub print_after: Vec<String>,
}

/// Output collected while running (printed by the CLI as requested).
#[derive(Default)]
pub struct Report {
    /// Time per pass name, in first-run order.
    pub pass_times: Vec<(&'static str, Duration)>,
    /// Time per analysis name, summed over functions.
    pub analysis_times: Vec<(&'static str, Duration, u32)>,
    /// Counters.
    pub stats: Stats,
    /// Remarks.
    pub remarks: Vec<Remark>,
    /// `--print-after` dumps.
    pub dumps: String,
}

/// A pipeline ready to run.
pub struct PassManager {
    nodes: Vec<PipelineNode>,
    /// Knob values.
    pub knobs: Knobs,
    /// Reporting and checking options.
    pub options: Options,
}

impl PassManager {
    /// Build a pipeline from its string form (`loop-simplify,lcssa,loop(loop-rotate)`).
    /// Loop passes at the top level are wrapped in a loop adaptor, as LLVM does.
    pub fn from_pipeline(
        text: &str,
        knobs: Knobs,
        options: Options,
    ) -> Result<PassManager, String> {
        let elems = parse_pipeline(text).map_err(|e| e.to_string())?;
        let mut nodes = Vec::new();
        // An explicit stack over `function(...)` nesting.
        let mut stack: Vec<std::slice::Iter<'_, PipelineElement>> = vec![elems.iter()];
        while let Some(top) = stack.last_mut() {
            let Some(e) = top.next() else {
                stack.pop();
                continue;
            };
            match e.name.as_str() {
                "function" => stack.push(e.nested.iter()),
                "loop" | "loop-mssa" => {
                    let mut passes = Vec::new();
                    for inner in &e.nested {
                        passes.push(build_loop_pass(inner)?);
                    }
                    nodes.push(PipelineNode::Loop(passes));
                }
                _ if !e.nested.is_empty() => {
                    return Err(format!(
                    "pipeline:{}: '{}' is not an adaptor; only function(...) and loop(...) nest",
                    e.col, e.name
                ))
                }
                _ => match registry::lookup(&e.name) {
                    Some(info) if info.kind == PassKind::Loop => {
                        nodes.push(PipelineNode::Loop(vec![build_loop_pass(e)?]));
                    }
                    Some(info) => nodes.push(PipelineNode::Function(
                        (info
                            .create_function
                            .expect("function passes have a constructor"))(
                            &e.params
                        )
                        .map_err(|m| format!("pipeline:{}: {m}", e.col))?,
                    )),
                    None => return Err(unknown_pass(e)),
                },
            }
        }
        Ok(PassManager {
            nodes,
            knobs,
            options,
        })
    }

    /// Run the pipeline on every function of a module.
    pub fn run_module(&mut self, module: &mut Module) -> Result<Report, PassError> {
        let mut report = Report::default();
        let mut pass_times: BTreeMap<&'static str, (usize, Duration)> = BTreeMap::new();
        let mut analysis_times = [(Duration::ZERO, 0u32); 4];
        let ids: Vec<_> = module.functions.keys().collect();
        for id in ids {
            // Take the function out so passes get `&mut Function` while the rest of the
            // module stays readable for printing; a placeholder keeps the name.
            let name = module.functions[id].name.clone();
            let placeholder = Function::new(name, module.functions[id].kind, Default::default());
            let mut func = std::mem::replace(&mut module.functions[id], placeholder);
            let mut cache = AnalysisCache::new();
            let result =
                self.run_function(&mut func, &mut cache, &mut report, &mut pass_times, module);
            for (k, slot) in analysis_times.iter_mut().enumerate() {
                slot.0 += cache.times[k];
                slot.1 += cache.counts[k];
            }
            module.functions[id] = func;
            result?;
        }
        let mut times: Vec<_> = pass_times.into_iter().collect();
        times.sort_by_key(|(_, (order, _))| *order);
        report.pass_times = times.into_iter().map(|(n, (_, d))| (n, d)).collect();
        report.analysis_times = AnalysisCache::TIMED
            .iter()
            .zip(analysis_times)
            .map(|(n, (d, c))| (*n, d, c))
            .collect();
        Ok(report)
    }

    fn run_function(
        &mut self,
        func: &mut Function,
        cache: &mut AnalysisCache,
        report: &mut Report,
        pass_times: &mut BTreeMap<&'static str, (usize, Duration)>,
        module: &Module,
    ) -> Result<(), PassError> {
        for node in &mut self.nodes {
            match node {
                PipelineNode::Function(pass) => {
                    let start = Instant::now();
                    let mut cx = PassContext {
                        knobs: &self.knobs,
                        analyses: cache,
                        stats: &mut report.stats,
                        remarks: &mut report.remarks,
                    };
                    let res = pass.run(func, &mut cx)?;
                    cache.invalidate(res.preserved);
                    let n = pass_times.len();
                    pass_times
                        .entry(pass.name())
                        .or_insert((n, Duration::ZERO))
                        .1 += start.elapsed();
                    after_pass(
                        &self.options,
                        pass.name(),
                        pass.establishes(),
                        res,
                        func,
                        cache,
                        report,
                        module,
                    )?;
                }
                PipelineNode::Loop(passes) => {
                    run_loop_pipeline(
                        passes,
                        &self.knobs,
                        &self.options,
                        func,
                        cache,
                        report,
                        pass_times,
                        module,
                    )?;
                }
            }
        }
        Ok(())
    }
}

#[allow(clippy::too_many_arguments)]
fn run_loop_pipeline(
    passes: &mut [Box<dyn LoopPass>],
    knobs: &Knobs,
    options: &Options,
    func: &mut Function,
    cache: &mut AnalysisCache,
    report: &mut Report,
    pass_times: &mut BTreeMap<&'static str, (usize, Duration)>,
    module: &Module,
) -> Result<(), PassError> {
    cache.ensure(func, Analyses::LOOPS).map_err(PassError)?;
    // Worklist of headers, popped from the back. `loops()` lists inner loops before the
    // loops containing them; reversed, the innermost loops come out first.
    let mut worklist: Vec<Block> = cache.loops.loops().map(|l| cache.loops.header(l)).collect();
    worklist.reverse();
    while let Some(header) = worklist.pop() {
        for pass in passes.iter_mut() {
            cache.ensure(func, Analyses::LOOPS).map_err(PassError)?;
            // A previous pass may have dissolved the loop (deletion, full unswitching).
            if !cache.loops.is_header(header) {
                break;
            }
            let start = Instant::now();
            let mut updater = LoopUpdater::default();
            let mut cx = PassContext {
                knobs,
                analyses: cache,
                stats: &mut report.stats,
                remarks: &mut report.remarks,
            };
            let res = pass.run_on_loop(func, header, &mut cx, &mut updater)?;
            cache.invalidate(res.preserved);
            let n = pass_times.len();
            pass_times
                .entry(pass.name())
                .or_insert((n, Duration::ZERO))
                .1 += start.elapsed();
            after_pass(
                options,
                pass.name(),
                pass.establishes(),
                res,
                func,
                cache,
                report,
                module,
            )?;
            // New loops are visited after the current one finishes the pipeline.
            worklist.extend(updater.new_headers.into_iter().rev());
        }
    }
    Ok(())
}

#[allow(clippy::too_many_arguments)]
fn after_pass(
    options: &Options,
    name: &'static str,
    forms: Forms,
    res: PassResult,
    func: &Function,
    cache: &mut AnalysisCache,
    report: &mut Report,
    module: &Module,
) -> Result<(), PassError> {
    if options.print_after_all || options.print_after.iter().any(|p| p == name) {
        let _ = writeln!(
            report.dumps,
            "; *** IR Dump After {name} on @{} ***",
            func.name
        );
        let _ = gyre_ir::write::write_function(&mut report.dumps, func, Some(module));
        report.dumps.push('\n');
    }
    if !options.verify_each {
        return Ok(());
    }
    crate::verify::verify_after_pass(name, forms, res, func, cache, module).map_err(PassError)
}

fn build_loop_pass(e: &PipelineElement) -> Result<Box<dyn LoopPass>, String> {
    match registry::lookup(&e.name) {
        Some(info) if info.kind == PassKind::Loop => {
            (info.create_loop.expect("loop passes have a constructor"))(&e.params)
                .map_err(|m| format!("pipeline:{}: {m}", e.col))
        }
        Some(_) => Err(format!(
            "pipeline:{}: '{}' is a function pass and cannot run inside loop(...)",
            e.col, e.name
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
