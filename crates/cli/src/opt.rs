//! `gyre opt`: run a pass pipeline.

use crate::input;
use crate::CliError;
use gyre_transforms::knobs::{apply_setting, Knobs};
use gyre_transforms::{ModuleAnalyses, Options, PassManager, Report};
use std::fmt::Write as _;

/// Pass-manager flags shared by `opt` and `compile`.
#[derive(clap::Args, Clone, Debug, Default)]
pub struct PassFlags {
    /// Pass pipeline, e.g. `loop-simplify,lcssa`, `default<O2>`, `print<domtree>`
    /// (also `-passes=`, as in opt).
    #[arg(long)]
    pub passes: Option<String>,
    /// Run the default pipeline: `-O` (= `-O2`), `-O0` (nothing), `-O1`, `-O2`, `-O3`
    /// (all three the default pipeline, `gyre passes` lists its passes).
    #[arg(long = "opt-level", value_name = "N", value_parser = clap::value_parser!(u8).range(0..=3))]
    pub opt_level: Option<u8>,
    /// Set a knob: `-C name=value` (repeatable; `gyre knobs` lists them). `compile` also
    /// takes the back end's `fp-contract=off|on|fast` (default `on`),
    /// `canonical-nans=true|false` (default `true`; `anynan` functions, every imported
    /// one, are never canonicalized) and `ptx-coalesce=true|false` (default `true`).
    #[arg(short = 'C', value_name = "NAME=VALUE")]
    pub knobs: Vec<String>,
    /// Run the verifier and the promised loop-form checks after every pass.
    #[arg(long)]
    pub verify_each: bool,
    /// Print time per pass and per analysis.
    #[arg(long)]
    pub time_passes: bool,
    /// Print counters per pass.
    #[arg(long)]
    pub stats: bool,
    /// Print why passes left loops alone (and, in `compile`, each barrier reachable
    /// under divergent control).
    #[arg(long)]
    pub remarks: bool,
    /// Print the IR after every pass.
    #[arg(long)]
    pub print_after_all: bool,
    /// Print the IR after the named pass (repeatable).
    #[arg(long, value_name = "PASS")]
    pub print_after: Vec<String>,
}

/// Arguments of `gyre opt`.
#[derive(clap::Args)]
pub struct OptArgs {
    /// Input file (`.gir` or `.ll`), or `-` for standard input.
    pub input: String,
    /// Output file (default, or `-`: standard output).
    #[arg(short, long)]
    pub output: Option<String>,
    /// Accepted for opt's sake: the output is always text.
    #[arg(short = 'S')]
    pub text: bool,
    /// Output format: Gyre's `.gir` text or LLVM IR text.
    #[arg(long, value_enum, default_value = "gir")]
    pub emit: Emit,
    /// With `--emit llvm`: opaque `ptr` instead of LLVM 14's typed pointers.
    #[arg(long)]
    pub opaque_pointers: bool,
    /// Do not print the module (opt's `-disable-output`): parse, verify and run the
    /// pipeline only, e.g. for `print<...>` analyses or timing.
    #[arg(long)]
    pub disable_output: bool,
    #[command(flatten)]
    pub flags: PassFlags,
}

/// What `gyre opt` writes.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Emit {
    /// Gyre IR text.
    Gir,
    /// LLVM IR text that LLVM 14 accepts.
    Llvm,
}

/// Run the pipeline the flags describe on `module`, with the analysis caches in
/// `analyses` (left holding what the passes kept valid); prints reports to standard error.
pub fn run_passes(
    flags: &PassFlags,
    pipeline: &str,
    module: &mut gyre_ir::Module,
    analyses: &mut ModuleAnalyses,
) -> Result<(), CliError> {
    let knobs = parse_knobs(flags)?;
    let options = Options {
        verify_each: flags.verify_each,
        print_after_all: flags.print_after_all,
        print_after: flags.print_after.clone(),
        time_loop_passes: flags.time_passes,
        drop_remarks: !flags.remarks,
    };
    let mut pm = PassManager::from_pipeline(pipeline, knobs, options).map_err(CliError)?;
    let report = pm.run_module_with(module, analyses)?;
    eprint!("{}", render_report(flags, &report));
    Ok(())
}

/// The knob settings of `-C`, checked: an unknown knob or a bad value is an error.
pub fn parse_knobs(flags: &PassFlags) -> Result<Knobs, CliError> {
    let mut knobs = Knobs::default();
    for s in &flags.knobs {
        apply_setting(&mut knobs, s).map_err(|e| CliError(format!("-C {s}: {e}")))?;
    }
    Ok(knobs)
}

/// The pipeline the flags ask for (`-passes=`, or `-O1`..`-O3` for the default one), with
/// every flag checked: a flag that cannot apply is an error (`--print-after` of a pass
/// that does not exist, `-O` together with `-passes=`) or a warning on standard error
/// (a reporting flag without a pipeline).
pub fn pipeline(flags: &PassFlags) -> Result<Option<String>, CliError> {
    parse_knobs(flags)?;
    for p in &flags.print_after {
        if gyre_transforms::registry::lookup(p).is_none() {
            let names: Vec<&str> = gyre_transforms::registry::PASSES
                .iter()
                .map(|p| p.name)
                .collect();
            return Err(CliError(format!(
                "--print-after={p}: no pass is named '{p}'; passes: {}",
                names.join(", ")
            )));
        }
    }
    let pipeline = match (&flags.passes, flags.opt_level) {
        (Some(_), Some(n)) => {
            return Err(CliError(format!(
                "-O{n} and -passes= cannot be combined; write -passes='default<O{n}>,...'"
            )))
        }
        (Some(p), None) => Some(p.clone()),
        (None, Some(0) | None) => None,
        (None, Some(_)) => Some(gyre_transforms::DEFAULT_PIPELINE.to_string()),
    };
    if pipeline.is_none() {
        for (set, flag) in [
            (flags.verify_each, "--verify-each"),
            (flags.time_passes, "--time-passes"),
            (flags.stats, "--stats"),
            (flags.print_after_all, "--print-after-all"),
            (!flags.print_after.is_empty(), "--print-after"),
        ] {
            if set {
                eprintln!("warning: {flag} has no effect without a pipeline (-passes= or -O)");
            }
        }
    } else if let Some(p) = &pipeline {
        let names = pass_names(p);
        for pass in &flags.print_after {
            if !names.iter().any(|n| n == pass) {
                eprintln!("warning: --print-after={pass}: the pipeline does not run {pass}");
            }
        }
    }
    Ok(pipeline)
}

/// The names of every element of a pipeline, nested ones and those `default<...>` stands
/// for included (empty if it does not parse: building it reports that).
fn pass_names(pipeline: &str) -> Vec<String> {
    use gyre_transforms::pipeline::parse_pipeline;
    let mut names = Vec::new();
    let Ok(top) = parse_pipeline(pipeline) else {
        return names;
    };
    let default = parse_pipeline(gyre_transforms::DEFAULT_PIPELINE).unwrap_or_default();
    let mut stack: Vec<&gyre_transforms::pipeline::PipelineElement> = top.iter().collect();
    while let Some(e) = stack.pop() {
        if e.name == "default" {
            stack.extend(default.iter());
        }
        names.push(e.name.clone());
        stack.extend(e.nested.iter());
    }
    names
}

fn render_report(flags: &PassFlags, report: &Report) -> String {
    let mut out = String::new();
    out.push_str(&report.dumps);
    if flags.remarks {
        for r in &report.remarks {
            let at = r.block.map(|b| format!(" at {b}")).unwrap_or_default();
            let _ = writeln!(
                out,
                "remark: {}: @{}{at}: {}: {}",
                r.pass, r.function, r.kind, r.message
            );
        }
    }
    if flags.stats {
        let _ = writeln!(
            out,
            "===-------------------------------------------------------------------------==="
        );
        let _ = writeln!(
            out,
            "                          ... Statistics Collected ..."
        );
        let _ = writeln!(
            out,
            "===-------------------------------------------------------------------------==="
        );
        for (pass, name, v) in report.stats.iter() {
            let _ = writeln!(out, "{v:>10} {pass:<24} - {name}");
        }
    }
    if flags.time_passes {
        let total: f64 = report.pass_times.iter().map(|(_, d)| d.as_secs_f64()).sum();
        let _ = writeln!(
            out,
            "===-------------------------------------------------------------------------==="
        );
        let _ = writeln!(
            out,
            "                      ... Pass execution timing report ..."
        );
        let _ = writeln!(
            out,
            "===-------------------------------------------------------------------------==="
        );
        let _ = writeln!(out, "  Total Execution Time: {total:.6} seconds");
        let _ = writeln!(out, "   ---Wall Time---  --- Name ---");
        for (name, d) in &report.pass_times {
            let s = d.as_secs_f64();
            let pct = if total > 0.0 { 100.0 * s / total } else { 0.0 };
            let _ = writeln!(out, "   {s:.6} ({pct:5.1}%)  {name}");
        }
        let _ = writeln!(out, "  Analyses (computations, time):");
        for (name, d, n) in &report.analysis_times {
            let _ = writeln!(out, "   {:.6} ({n:>4}x)  {name}", d.as_secs_f64());
        }
    }
    out
}

/// Wall time of each phase of a command (parse, verify, the pipeline, printing or
/// emission), for `--time-passes`: where a whole run's time goes, beside the per-pass
/// report.
#[derive(Default)]
pub struct Phases(Vec<(&'static str, std::time::Duration)>);

impl Phases {
    /// Run `f` as phase `name`, timing it.
    pub fn time<T>(&mut self, name: &'static str, f: impl FnOnce() -> T) -> T {
        let start = std::time::Instant::now();
        let r = f();
        self.0.push((name, start.elapsed()));
        r
    }

    /// The report, in the style of the pass report.
    pub fn render(&self) -> String {
        let mut out = String::new();
        let total: f64 = self.0.iter().map(|(_, d)| d.as_secs_f64()).sum();
        let rule =
            "===-------------------------------------------------------------------------===";
        let _ = writeln!(out, "{rule}");
        let _ = writeln!(
            out,
            "                      ... Phase execution timing report ..."
        );
        let _ = writeln!(out, "{rule}");
        let _ = writeln!(out, "  Total Execution Time: {total:.6} seconds");
        let _ = writeln!(out, "   ---Wall Time---  --- Phase ---");
        for (name, d) in &self.0 {
            let s = d.as_secs_f64();
            let pct = if total > 0.0 { 100.0 * s / total } else { 0.0 };
            let _ = writeln!(out, "   {s:.6} ({pct:5.1}%)  {name}");
        }
        out
    }
}

/// `gyre opt`.
pub fn run(args: &OptArgs) -> Result<(), CliError> {
    if args.opaque_pointers && args.emit != Emit::Llvm {
        return Err(CliError(
            "--opaque-pointers applies to LLVM IR output only: add --emit llvm".into(),
        ));
    }
    // Flags are checked before the input is read: a typo is reported whatever the input.
    let pipeline = pipeline(&args.flags)?;
    if args.flags.remarks && pipeline.is_none() {
        eprintln!("warning: --remarks has no effect without a pipeline (-passes= or -O)");
    }
    let mut phases = Phases::default();
    let (mut name, mut module) = phases.time("parse", || input::load_module(&args.input))?;
    phases.time("verify", || input::verify(&name, &module))?;
    // Messages from here on name the input but point at no place in its text.
    name.release_text();
    if let Some(p) = &pipeline {
        let mut analyses = ModuleAnalyses::new();
        phases.time("passes", || {
            run_passes(&args.flags, p, &mut module, &mut analyses)
        })?;
    }
    if !args.disable_output {
        phases.time("print", || {
            let text = match args.emit {
                Emit::Gir => module.to_string(),
                Emit::Llvm => gyre_llvm::export_module(
                    &module,
                    &gyre_llvm::ExportOptions {
                        opaque_pointers: args.opaque_pointers,
                    },
                ),
            };
            input::write_output(args.output.as_deref(), &text)
        })?;
    }
    if args.flags.time_passes && pipeline.is_some() {
        eprint!("{}", phases.render());
    }
    Ok(())
}
