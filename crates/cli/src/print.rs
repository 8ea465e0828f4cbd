//! `gyre print`: analyses in a form comparable to LLVM's `print<...>` passes.

use crate::input;
use crate::CliError;
use gyre_analysis::{Cfg, DomTree, LoopInfo, PostDomTree, ScalarEvolution, Uniformity};

/// Which analysis to print.
#[derive(clap::ValueEnum, Clone, Copy, Debug)]
pub enum What {
    /// Successors and predecessors of every block.
    Cfg,
    /// The dominator tree.
    Domtree,
    /// The post-dominator tree.
    Postdomtree,
    /// The loop forest.
    Loops,
    /// Every value and branch annotated uniform or divergent.
    Uniformity,
    /// Scalar evolution: every integer value's expression and every loop's counts
    /// (as LLVM's `print<scalar-evolution>`).
    Scev,
}

/// Arguments of `gyre print`.
#[derive(clap::Args)]
pub struct PrintArgs {
    /// The analysis.
    #[arg(value_enum)]
    pub what: What,
    /// Input file, or `-`.
    pub input: String,
}

/// `gyre print`.
pub fn run(args: &PrintArgs) -> Result<(), CliError> {
    let (name, module) = input::load_module(&args.input)?;
    input::verify(&name, &module)?;
    let mut out = String::new();
    for (_, func) in module.functions.iter() {
        let cfg = Cfg::with_function(func)?;
        let text = match args.what {
            What::Cfg => gyre_analysis::print_cfg(&cfg, func),
            What::Domtree => {
                gyre_analysis::print_domtree(&DomTree::with_function(func, &cfg), func)
            }
            What::Postdomtree => {
                gyre_analysis::print_postdomtree(&PostDomTree::with_function(func, &cfg), func)
            }
            What::Loops => {
                let dt = DomTree::with_function(func, &cfg);
                gyre_analysis::print_loops(&LoopInfo::with_function(func, &cfg, &dt), func)
            }
            What::Uniformity => {
                let dt = DomTree::with_function(func, &cfg);
                let pdt = PostDomTree::with_function(func, &cfg);
                let loops = LoopInfo::with_function(func, &cfg, &dt);
                let mut u = Uniformity::new();
                u.compute(func, &cfg, &dt, &pdt, &loops);
                gyre_analysis::print_uniformity(&u, func, Some(&module))
            }
            What::Scev => {
                let dt = DomTree::with_function(func, &cfg);
                let loops = LoopInfo::with_function(func, &cfg, &dt);
                let mut se = ScalarEvolution::new();
                se.compute(func, &cfg, &dt, &loops);
                gyre_analysis::print_scev(&mut se, &loops, func)
            }
        };
        out.push_str(&text);
    }
    input::write_output(None, &out)
}
