//! `gyre gen`: a random kernel from Gyre's generator, the equivalent of `llvm-stress`, for
//! fuzzing one's own passes (`gyre gen --seed $i | gyre opt -passes=... --verify-each -`).

use crate::input;
use crate::CliError;
use gyre_ir::generate::{generate_from_seed, GenOptions, ParamContract};
use std::fmt::Write as _;

/// Arguments of `gyre gen`.
#[derive(clap::Args)]
pub struct GenArgs {
    /// Seed: the same seed and options give the same module.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Keep adding control structures to the kernel until it has at least this many
    /// blocks (default: small kernels of up to 40 blocks).
    #[arg(long, value_name = "K")]
    pub blocks: Option<usize>,
    /// Comma-separated features to generate (default: all but warp-ops and iv-branches): loops,
    /// nested-loops, multi-latch, multi-exit, switch, memory, barriers, warp-ops,
    /// irreducible, calls, iv-branches; `all` for every one, `none` for straight-line code and
    /// if/else only.
    #[arg(long, value_delimiter = ',', value_name = "FEATURE,...")]
    pub features: Option<Vec<String>>,
    /// Allow undefined behaviour (raw divisors, shift amounts, flags, indices): valid IR
    /// whose runs need not be defined.
    #[arg(long)]
    pub allow_ub: bool,
    /// Output file (default, or `-`: standard output).
    #[arg(short, long)]
    pub output: Option<String>,
}

/// Turns one generator feature on.
type Enable = fn(&mut GenOptions);

/// Each `--features` name with the option it turns on.
const FEATURES: &[(&str, Enable)] = &[
    ("loops", |o| o.allow_loops = true),
    ("nested-loops", |o| {
        o.allow_loops = true;
        o.allow_nested_loops = true;
    }),
    ("multi-latch", |o| o.allow_multi_latch = true),
    ("multi-exit", |o| o.allow_multi_exit = true),
    ("switch", |o| o.allow_switch = true),
    ("memory", |o| o.allow_memory = true),
    ("barriers", |o| o.allow_barriers = true),
    ("warp-ops", |o| o.allow_warp_ops = true),
    ("irreducible", |o| o.allow_irreducible = true),
    ("calls", |o| o.allow_calls = true),
    ("iv-branches", |o| o.allow_iv_branches = true),
];

/// The generator options the arguments ask for.
pub fn options(args: &GenArgs) -> Result<GenOptions, CliError> {
    let mut o = match &args.features {
        None => GenOptions::default(),
        Some(list) => {
            let mut o = GenOptions::minimal();
            for f in list.iter().map(|f| f.trim()) {
                match f {
                    "all" => FEATURES.iter().for_each(|(_, set)| set(&mut o)),
                    "none" => {}
                    _ => {
                        let set = FEATURES.iter().find(|(n, _)| *n == f).ok_or_else(|| {
                            let names: Vec<&str> = FEATURES.iter().map(|(n, _)| *n).collect();
                            CliError(format!(
                                "--features: unknown feature '{f}'; features: {}, all, none",
                                names.join(", ")
                            ))
                        })?;
                        (set.1)(&mut o);
                    }
                }
            }
            o
        }
    };
    if let Some(k) = args.blocks {
        // Large enough for a real stress test, small enough not to exhaust memory.
        if k == 0 || k > 1_000_000 {
            return Err(CliError(format!(
                "--blocks {k}: expected a block count from 1 to 1000000"
            )));
        }
        o.target_blocks = Some(k);
        o.max_blocks = k;
    }
    o.ub_free = !args.allow_ub;
    Ok(o)
}

/// `gyre gen`.
pub fn run(args: &GenArgs) -> Result<(), CliError> {
    let opts = options(args)?;
    let (module, contract) = generate_from_seed(&opts, args.seed);
    let kernel = &module.functions[contract.kernel].name;
    // A comment that says how to run the kernel within its contract: 1-D, at most
    // `max_cta_threads` threads per CTA, `per_thread` outputs per thread.
    let threads = contract.max_cta_threads.min(32);
    let mut run = format!("gyre run FILE --kernel {kernel} --block {threads}");
    for (i, p) in contract.params.iter().enumerate() {
        let _ = match p {
            ParamContract::Output { elem, per_thread } => write!(
                run,
                " --buffer p{i}={elem}:{}:zeros --arg {i}=@p{i}",
                threads * per_thread
            ),
            ParamContract::Input { elem, len } => {
                write!(run, " --buffer p{i}={elem}:{len}:random --arg {i}=@p{i}")
            }
            ParamContract::Scalar { ty } if ty.is_float() => write!(run, " --arg {i}=0.5"),
            ParamContract::Scalar { .. } => write!(run, " --arg {i}=7"),
        };
    }
    let mut text = format!(
        ";; gyre gen --seed {}{}{}{}\n",
        args.seed,
        args.blocks
            .map(|k| format!(" --blocks {k}"))
            .unwrap_or_default(),
        args.features
            .as_ref()
            .map(|f| format!(" --features {}", f.join(",")))
            .unwrap_or_default(),
        if args.allow_ub { " --allow-ub" } else { "" },
    );
    if contract.ub_free {
        let _ = writeln!(text, ";; run: {run}");
    }
    text.push_str(&module.to_string());
    input::write_output(args.output.as_deref(), &text)
}
