//! `gyre compile`: optimize (optionally) and lower a module to PTX.

use crate::input;
use crate::opt::{pipeline, run_passes, PassFlags, Phases};
use crate::CliError;
use gyre_codegen_lite::{
    compile_module_with_flags, compile_verified_module, CodegenFlags, CodegenOptions, FpContract,
    Sm,
};
use gyre_ir::{FuncKind, Module, Opcode};
use gyre_transforms::{Analyses, ModuleAnalyses};

/// Arguments of `gyre compile`.
#[derive(clap::Args)]
pub struct CompileArgs {
    /// Input file (`.gir`, `.ll` or `.toy`), or `-`.
    pub input: String,
    /// Target architecture: `90` or `sm_90`; one of 70, 72, 75, 80, 86, 87, 89, 90, 100,
    /// 120 (also `-mcpu=sm_90`, as in llc).
    #[arg(long, default_value = "90", value_parser = parse_sm)]
    pub sm: Sm,
    /// Output file (default, or `-`: standard output).
    #[arg(short, long)]
    pub output: Option<String>,
    #[command(flatten)]
    pub flags: PassFlags,
}

/// `--sm`: a number or a target name.
fn parse_sm(s: &str) -> Result<Sm, String> {
    Sm::from_name(s).ok_or_else(|| {
        let names: Vec<String> = Sm::ALL.iter().map(|sm| sm.number().to_string()).collect();
        format!(
            "'{s}' is not a supported target; supported: {} (as `90` or `sm_90`)",
            names.join(", ")
        )
    })
}

/// Every `barrier` of a kernel that the uniformity analysis finds reachable under
/// divergent control: some threads of a CTA may skip it while others wait, which hangs
/// on the hardware (and is a divergent-barrier fault in `gyre run`). Device functions are
/// left out: their every block counts as divergent control (a caller may be divergent).
/// The uniformity comes from (and is left in) `analyses`, which must describe `module`
/// as it is: the emitter that follows reads the same results instead of computing them
/// again. Returns `(function, block, instruction text)` per barrier.
pub fn divergent_barriers(
    module: &Module,
    analyses: &mut ModuleAnalyses,
) -> Vec<(String, String, String)> {
    let mut found = Vec::new();
    for (id, func) in module.functions.iter() {
        if func.kind != FuncKind::Kernel {
            continue;
        }
        let barrier_blocks: Vec<_> = func
            .layout
            .blocks()
            .filter(|&b| {
                func.layout
                    .block_insts(b)
                    .any(|i| func.dfg.inst(i).opcode() == Opcode::Barrier)
            })
            .collect();
        if barrier_blocks.is_empty() {
            continue;
        }
        let cache = analyses.get_mut(id);
        // A CFG the analyses reject is the emitter's error to report.
        if cache.ensure(func, Analyses::UNIFORMITY).is_err() {
            continue;
        }
        let u = &cache.uniformity;
        for b in barrier_blocks {
            if !u.block_may_be_divergent_control(b) {
                continue;
            }
            for i in func.layout.block_insts(b) {
                if func.dfg.inst(i).opcode() == Opcode::Barrier {
                    let mut text = String::new();
                    let _ = gyre_ir::write::write_inst(&mut text, func, Some(module), i);
                    found.push((func.name.clone(), b.to_string(), text));
                }
            }
        }
    }
    found
}

/// The back end's `-C` settings (`fp-contract`, `canonical-nans`, `ptx-coalesce`, see
/// [`CodegenFlags::apply`]) and the flags with the remaining (pass) knobs. `gyre
/// compile` contracts where the IR allows it (`fp-contract=on`), as llc does by default.
pub fn codegen_flags(flags: &PassFlags) -> Result<(CodegenFlags, PassFlags), CliError> {
    let mut cg = CodegenFlags {
        fp_contract: FpContract::On,
        ..CodegenFlags::default()
    };
    let mut rest = flags.clone();
    rest.knobs.clear();
    for s in &flags.knobs {
        match cg.apply(s) {
            Ok(true) => {}
            Ok(false) => rest.knobs.push(s.clone()),
            Err(e) => return Err(CliError(format!("-C {s}: {e}"))),
        }
    }
    Ok((cg, rest))
}

/// `-O`'s pipeline followed by what llc runs before emission
/// ([`gyre_transforms::CODEGEN_LOOP_PIPELINE`]: constant-offset splitting and loop
/// strength reduction; only the former under `-C disable-lsr=true`); a `-passes=`
/// pipeline is run as given.
pub fn with_codegen_passes(
    flags: &PassFlags,
    pipeline: Option<String>,
) -> Result<Option<String>, CliError> {
    let optimizing = flags.passes.is_none() && flags.opt_level.is_some_and(|n| n > 0);
    if !optimizing {
        return Ok(pipeline);
    }
    let codegen = if crate::opt::parse_knobs(flags)?.disable_lsr() {
        "separate-const-offset"
    } else {
        gyre_transforms::CODEGEN_LOOP_PIPELINE
    };
    Ok(pipeline.map(|p| format!("{p},{codegen}")))
}

/// `gyre compile`.
pub fn run(args: &CompileArgs) -> Result<(), CliError> {
    let (cg, pass_flags) = codegen_flags(&args.flags)?;
    let pipeline = with_codegen_passes(&pass_flags, pipeline(&pass_flags)?)?;
    let mut phases = Phases::default();
    let (mut name, mut module) = phases.time("parse", || input::load_module(&args.input))?;
    phases.time("verify", || input::verify(&name, &module))?;
    // Messages from here on name the input but point at no place in its text.
    name.release_text();
    // One set of analysis caches for the passes and the emitter: what the pipeline leaves
    // valid (the CFG, dominator tree and loops after loop-simplify and lcssa) is not
    // computed again for PTX.
    let mut analyses = ModuleAnalyses::new();
    if let Some(p) = &pipeline {
        phases.time("passes", || {
            run_passes(&pass_flags, p, &mut module, &mut analyses)
        })?;
    }
    let barriers = phases.time("divergent-barrier check", || {
        divergent_barriers(&module, &mut analyses)
    });
    for (func, block, inst) in barriers {
        eprintln!(
            "{name}: warning: @{func}: {block}: `{inst}` is reachable under divergent \
             control: threads that skip it leave the others waiting"
        );
        if args.flags.remarks {
            eprintln!(
                "remark: uniformity: @{func} at {block}: divergent-barrier: `{inst}` runs \
                 under divergent control"
            );
        }
    }
    // The module was verified when it was loaded; a pipeline keeps that only when
    // `--verify-each` checked it after every pass. Otherwise the emitter verifies.
    let verified = pipeline.is_none() || pass_flags.verify_each;
    let opts = CodegenOptions { sm: args.sm };
    let ptx = phases
        .time("emission", || {
            if verified {
                compile_verified_module(&module, &opts, &cg, &mut analyses)
            } else {
                compile_module_with_flags(&module, &opts, &cg, &mut analyses)
            }
        })
        .map_err(|e| CliError(format!("{name}: error: {e}")))?;
    phases.time("write", || {
        input::write_output(args.output.as_deref(), &ptx)
    })?;
    if args.flags.time_passes && pipeline.is_some() {
        eprint!("{}", phases.render());
    }
    Ok(())
}
