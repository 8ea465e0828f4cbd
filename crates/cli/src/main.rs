//! `gyre`: the command-line driver, used the way LLVM's `opt` and `llc` are.
//!
//! Every subcommand reads a `.gir` file (or `-` for standard input), reports bad input as
//! `file:line:col: message` on standard error and exits non-zero; no input, flag or path
//! makes it panic. opt's and llc's spellings work too: `-O2`, `-passes=`, `-S`,
//! `-mcpu=sm_90` (see [`llvm_spellings`]); docs/cli.md lists every command and flag.

mod compile;
mod gen;
mod gpu;
mod input;
mod opt;
mod print;
mod run;

use clap::{Parser, Subcommand};
use std::ffi::OsString;
use std::process::ExitCode;

/// Gyre: a compiler middle-end for GPU kernels.
#[derive(Parser)]
#[command(
    name = "gyre",
    version,
    about,
    propagate_version = true,
    after_help = "opt and llc spellings are accepted: -O, -O0..-O3, -passes=..., -S, \
                  -verify-each, -print-after-all, -mcpu=sm_90.\n\
                  Examples:\n  \
                  gyre opt -O2 -S k.gir -o -\n  \
                  gyre opt -passes='default<O2>,print<loops>' k.ll\n  \
                  gyre compile --sm sm_86 -O k.gir -o k.ptx\n  \
                  gyre run examples/saxpy.gir --kernel @saxpy --block 4 \\\n    \
                  --buffer x=f32:4:iota --buffer y=f32:4:iota --arg 0=@x --arg 1=@y --arg 2=2.0 --arg 3=4\n  \
                  gyre gen --seed 7 --blocks 50 | gyre opt -passes=loop-simplify,lcssa -verify-each -\n\
                  docs/cli.md describes every command and flag."
)]
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
    /// Print an analysis of every function: cfg, domtree, postdomtree, loops or
    /// uniformity.
    Print(print::PrintArgs),
    /// Run a kernel (or a device function) in the reference interpreter and print the
    /// buffers it wrote (and the value it returned).
    Run(run::RunArgs),
    /// Print a random well-formed kernel module (like llvm-stress), for fuzzing passes.
    Gen(gen::GenArgs),
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

/// Rewrite opt's and llc's single-dash spellings into Gyre's flags before clap sees them:
/// `-O` is `-O2`, `-ON` is `--opt-level=N`, `-passes=` and the other long
/// single-dash flags of opt gain a dash, and llc's `-mcpu=sm_90` is `--sm=sm_90`.
/// Everything after `--`, and any argument that is not UTF-8, is left alone.
pub fn llvm_spellings(args: impl IntoIterator<Item = OsString>) -> Vec<OsString> {
    const LONG: &[&str] = &[
        "passes",
        "verify-each",
        "time-passes",
        "stats",
        "print-after-all",
        "print-after",
        "disable-output",
    ];
    let mut out = Vec::new();
    let mut rest = false;
    for a in args {
        let Some(text) = a.to_str().filter(|_| !rest) else {
            out.push(a);
            continue;
        };
        if text == "--" {
            rest = true;
            out.push(a);
            continue;
        }
        let rewritten = match text {
            "-O" => Some("--opt-level=2".to_string()),
            // Any other level (`-O4`, `-Os`) reaches clap, which names the valid ones.
            _ if text.starts_with("-O") => Some(format!("--opt-level={}", &text[2..])),
            _ => text.strip_prefix('-').and_then(|flag| {
                let name = flag.split('=').next().unwrap_or(flag);
                if name == "mcpu" {
                    Some(format!("--sm{}", &flag[4..]))
                } else if !flag.starts_with('-') && LONG.contains(&name) {
                    Some(format!("-{text}"))
                } else {
                    None
                }
            }),
        };
        out.push(rewritten.map_or(a, OsString::from));
    }
    out
}

fn main() -> ExitCode {
    let cli = Cli::parse_from(llvm_spellings(std::env::args_os()));
    let result = match cli.command {
        Command::Opt(args) => opt::run(&args),
        Command::Compile(args) => compile::run(&args),
        Command::Print(args) => print::run(&args),
        Command::Run(args) => run::run(&args),
        Command::Gen(args) => gen::run(&args),
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
