//! `gyre opt`: run a pass pipeline.

use crate::input;
use crate::CliError;
use gyre_transforms::knobs::{apply_setting, Knobs};
use gyre_transforms::{ModuleAnalyses, Options, PassManager, Report};
use std::fmt::Write as _;

/// Pass-manager flags shared by `opt` and `compile`.
#[derive(clap::Args, Clone, Debug, Default)]
pub struct PassFlags {
    /// Pass pipeline, e.g. `loop-simplify,lcssa`.
    #[arg(long)]
    pub passes: Option<String>,
    /// Set a knob: `-C name=value` (repeatable; `gyre knobs` lists them).
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
    /// Print why passes left loops alone.
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
    /// Input file (`.gir`), or `-` for standard input.
    pub input: String,
    /// Output file (default: standard output).
    #[arg(short, long)]
    pub output: Option<String>,
    /// Output format: Gyre's `.gir` text or LLVM IR text.
    #[arg(long, value_enum, default_value = "gir")]
    pub emit: Emit,
    /// With `--emit llvm`: opaque `ptr` instead of LLVM 14's typed pointers.
    #[arg(long)]
    pub opaque_pointers: bool,
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
    let mut knobs = Knobs::default();
    for s in &flags.knobs {
        apply_setting(&mut knobs, s)?;
    }
    let options = Options {
        verify_each: flags.verify_each,
        print_after_all: flags.print_after_all,
        print_after: flags.print_after.clone(),
        time_loop_passes: flags.time_passes,
    };
    let mut pm = PassManager::from_pipeline(pipeline, knobs, options).map_err(CliError)?;
    let report = pm.run_module_with(module, analyses)?;
    eprint!("{}", render_report(flags, &report));
    Ok(())
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

/// `gyre opt`.
pub fn run(args: &OptArgs) -> Result<(), CliError> {
    let (name, mut module) = input::load_module(&args.input)?;
    input::verify(&name, &module)?;
    if let Some(p) = &args.flags.passes {
        run_passes(&args.flags, p, &mut module, &mut ModuleAnalyses::new())?;
    } else if !args.flags.knobs.is_empty() {
        // Still validate knob settings so a typo is reported.
        let mut knobs = Knobs::default();
        for s in &args.flags.knobs {
            apply_setting(&mut knobs, s)?;
        }
    }
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
}
