//! `gyre compile`: optimize (optionally) and lower a module to PTX.

use crate::input;
use crate::opt::{run_passes, PassFlags};
use crate::CliError;
use gyre_codegen_lite::{compile_module_with, CodegenOptions, Sm};
use gyre_transforms::ModuleAnalyses;

/// Gyre's default GPU loop pipeline (`-O`), in the order cicc runs its loop passes;
/// passes Gyre does not have yet (loop-rotate, indvars, simple-loop-unswitch) join it as
/// they land. docs/passes.md explains each step.
pub const DEFAULT_PIPELINE: &str = "loop-simplify,lcssa,loop(loop-rotate)";

/// Arguments of `gyre compile`.
#[derive(clap::Args)]
pub struct CompileArgs {
    /// Input file (`.gir` or `.ll`), or `-`.
    pub input: String,
    /// Target architecture: 70, 80 or 90.
    #[arg(long, default_value_t = 90)]
    pub sm: u32,
    /// Run the default GPU loop pipeline first.
    #[arg(short = 'O', conflicts_with = "passes")]
    pub optimize: bool,
    /// Output file (default: standard output).
    #[arg(short, long)]
    pub output: Option<String>,
    #[command(flatten)]
    pub flags: PassFlags,
}

/// `gyre compile`.
pub fn run(args: &CompileArgs) -> Result<(), CliError> {
    let sm = Sm::from_number(args.sm).ok_or_else(|| {
        CliError(format!(
            "--sm {}: supported targets are 70, 80 and 90",
            args.sm
        ))
    })?;
    let (name, mut module) = input::load_module(&args.input)?;
    input::verify(&name, &module)?;
    let pipeline = match (&args.flags.passes, args.optimize) {
        (Some(p), _) => Some(p.as_str()),
        (None, true) => Some(DEFAULT_PIPELINE),
        (None, false) => None,
    };
    // One set of analysis caches for the passes and the emitter: what the pipeline leaves
    // valid (the CFG, dominator tree and loops after loop-simplify and lcssa) is not
    // computed again for PTX.
    let mut analyses = ModuleAnalyses::new();
    if let Some(p) = pipeline {
        run_passes(&args.flags, p, &mut module, &mut analyses)?;
    }
    let ptx = compile_module_with(&module, &CodegenOptions { sm }, &mut analyses)
        .map_err(|e| CliError(format!("{name}: error: {e}")))?;
    input::write_output(args.output.as_deref(), &ptx)
}
