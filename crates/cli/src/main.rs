//! `gyre`: the command-line driver, used the way LLVM's `opt` and `llc` are.
//!
//! Every subcommand reads a `.gir` file (or `-` for standard input), reports bad input as
//! `file:line:col: message` on standard error and exits non-zero; no input, flag or path
//! makes it panic.

mod compile;
mod input;
mod opt;
mod print;
mod run;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

/// Gyre: a compiler middle-end for GPU kernels.
#[derive(Parser)]
#[command(name = "gyre", version, about, propagate_version = true)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Parse, verify, optionally run a pass pipeline, and print a module.
    Opt(opt::OptArgs),
    /// Lower a module to PTX, optionally after the default loop pipeline (`-O`).
    Compile(compile::CompileArgs),
    /// Print an analysis of every function: cfg, domtree, postdomtree or loops.
    Print(print::PrintArgs),
    /// Run a kernel in the reference interpreter and print the buffers it wrote.
    Run(run::RunArgs),
    /// List every knob with its type, default and description.
    Knobs,
    /// List every pass with its kind and parameters.
    Passes,
}

/// An error already formatted for the user.
pub struct CliError(pub String);

impl<E: std::fmt::Display> From<E> for CliError {
    fn from(e: E) -> Self {
        CliError(e.to_string())
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Opt(args) => opt::run(&args),
        Command::Compile(args) => compile::run(&args),
        Command::Print(args) => print::run(&args),
        Command::Run(args) => run::run(&args),
        Command::Knobs => input::write_output(None, &gyre_transforms::knobs::list_knobs()),
        Command::Passes => input::write_output(None, &gyre_transforms::registry::list_passes()),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(CliError(msg)) => {
            eprintln!("{}", msg.trim_end());
            ExitCode::FAILURE
        }
    }
}
