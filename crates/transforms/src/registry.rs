//! Every pass Gyre has, with its pipeline name, kind, parameters and documentation.

use crate::manager::{FunctionPass, LoopPass, ModulePass};

/// Whether a pass runs on functions or on loops.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum PassKind {
    /// Runs once per function.
    Function,
    /// Runs once per loop, inside `loop(...)`.
    Loop,
    /// Runs once on the whole module, at the top level of a pipeline; its constructor is
    /// in [`MODULE_PASS_CTORS`].
    Module,
}

/// Builds a function pass from its pipeline parameters.
pub type FunctionPassCtor = fn(&[String]) -> Result<Box<dyn FunctionPass>, String>;
/// Builds a loop pass from its pipeline parameters.
pub type LoopPassCtor = fn(&[String]) -> Result<Box<dyn LoopPass>, String>;
/// Builds a module pass from its pipeline parameters.
pub type ModulePassCtor = fn(&[String]) -> Result<Box<dyn ModulePass>, String>;

/// A registered pass.
#[derive(Copy, Clone)]
pub struct PassInfo {
    /// Pipeline name.
    pub name: &'static str,
    /// Function or loop pass.
    pub kind: PassKind,
    /// Accepted `<...>` parameters.
    pub params: &'static [&'static str],
    /// One line of documentation.
    pub doc: &'static str,
    /// Constructor of a function pass.
    pub create_function: Option<FunctionPassCtor>,
    /// Constructor of a loop pass.
    pub create_loop: Option<LoopPassCtor>,
}

fn no_params(name: &str, params: &[String]) -> Result<(), String> {
    match params.first() {
        None => Ok(()),
        Some(p) => Err(format!("pass '{name}' takes no parameters (got '{p}')")),
    }
}

/// Every pass, in the order `gyre passes` lists them.
pub const PASSES: &[PassInfo] = &[
    PassInfo {
        name: "loop-simplify",
        kind: PassKind::Function,
        params: &[],
        doc: "Give every loop a preheader, a single latch and dedicated exits.",
        create_function: Some(|p| {
            no_params("loop-simplify", p)?;
            Ok(Box::new(crate::loop_simplify::LoopSimplify::default()))
        }),
        create_loop: None,
    },
    PassInfo {
        name: "lcssa",
        kind: PassKind::Function,
        params: &[],
        doc:
            "Put every loop in loop-closed SSA form: outside uses go through exit-block parameters.",
        create_function: Some(|p| {
            no_params("lcssa", p)?;
            Ok(Box::new(crate::lcssa::Lcssa::default()))
        }),
        create_loop: None,
    },
    PassInfo {
        name: "loop-rotate",
        kind: PassKind::Loop,
        params: &["header-duplication", "no-header-duplication"],
        doc: "Rotate top-tested loops into guarded bottom-tested loops (the latch exits).",
        create_function: None,
        create_loop: Some(|p| Ok(Box::new(crate::loop_rotate::LoopRotate::from_params(p)?))),
    },
    PassInfo {
        name: "indvars",
        kind: PassKind::Loop,
        params: &[],
        doc: "Simplify induction variables: exit values, LFTR, widening, range-folded compares, dead IVs.",
        create_function: None,
        create_loop: Some(|p| {
            no_params("indvars", p)?;
            Ok(Box::new(crate::indvars::IndVarSimplify::default()))
        }),
    },
    PassInfo {
        name: "loop-reduce",
        kind: PassKind::Loop,
        params: &[],
        doc: "Loop strength reduction of addresses: accesses walk pointer IVs instead of recomputing base + index * scale.",
        create_function: None,
        create_loop: Some(|p| {
            no_params("loop-reduce", p)?;
            Ok(Box::new(crate::loop_reduce::LoopReduce::default()))
        }),
    },
    PassInfo {
        name: "separate-const-offset",
        kind: PassKind::Function,
        params: &[],
        doc: "Accesses whose indices differ by a constant share one address computation and fold the difference into the address immediate.",
        create_function: Some(|p| {
            no_params("separate-const-offset", p)?;
            Ok(Box::new(crate::const_offset::SeparateConstOffset::default()))
        }),
        create_loop: None,
    },
    PassInfo {
        name: "verify",
        kind: PassKind::Function,
        params: &[],
        doc: "Run the IR verifier; fail the pipeline on any error.",
        create_function: Some(|p| {
            no_params("verify", p)?;
            Ok(Box::new(crate::verify::VerifyPass))
        }),
        create_loop: None,
    },
    PassInfo {
        name: "simple-loop-unswitch",
        kind: PassKind::Loop,
        params: &["nontrivial", "no-nontrivial", "trivial", "no-trivial"],
        doc: "Hoist loop-invariant branches out of loops (non-trivially: clone the loop, uniform conditions only).",
        create_function: None,
        create_loop: Some(|p| {
            Ok(Box::new(
                crate::simple_loop_unswitch::SimpleLoopUnswitch::from_params(p)?,
            ))
        }),
    },
    PassInfo {
        name: "simplify",
        kind: PassKind::Function,
        params: &[],
        doc: "E-graph simplifier: constant folding, identities, strength reduction, GVN, LICM, dead code.",
        create_function: Some(|p| {
            no_params("simplify", p)?;
            Ok(Box::new(crate::simplify::Simplify::default()))
        }),
        create_loop: None,
    },
    PassInfo {
        name: "early-cse",
        kind: PassKind::Function,
        params: &[],
        doc: "Redundant load elimination and store-to-load forwarding over the dominator tree.",
        create_function: Some(|p| {
            no_params("early-cse", p)?;
            Ok(Box::new(crate::early_cse::EarlyCse::default()))
        }),
        create_loop: None,
    },
    PassInfo {
        name: "loop-deletion",
        kind: PassKind::Loop,
        params: &[],
        doc: "Delete loops that never run or compute nothing used; break backedges never taken.",
        create_function: None,
        create_loop: Some(|p| {
            no_params("loop-deletion", p)?;
            Ok(Box::new(crate::loop_deletion::LoopDeletion::default()))
        }),
    },
    PassInfo {
        name: "loop-simplifycfg",
        kind: PassKind::Loop,
        params: &[],
        doc: "Fold constant branches in loops, remove dead blocks and merge straight-line blocks.",
        create_function: None,
        create_loop: Some(|p| {
            no_params("loop-simplifycfg", p)?;
            Ok(Box::new(crate::loop_simplifycfg::LoopSimplifyCfg::default()))
        }),
    },
    PassInfo {
        name: "loop-unroll",
        kind: PassKind::Loop,
        params: &[],
        doc: "Fully unroll innermost loops with a constant trip count whose unrolled size is under unroll-threshold.",
        create_function: None,
        create_loop: Some(|p| {
            no_params("loop-unroll", p)?;
            Ok(Box::new(crate::loop_unroll::LoopUnroll::default()))
        }),
    },
    PassInfo {
        name: "loop-unroll-full",
        kind: PassKind::Loop,
        params: &[],
        doc: "LLVM's name for the full-unrolling loop pass: the same pass as loop-unroll (which only unrolls fully).",
        create_function: None,
        create_loop: Some(|p| {
            no_params("loop-unroll-full", p)?;
            Ok(Box::new(crate::loop_unroll::LoopUnroll::default()))
        }),
    },
    PassInfo {
        name: "licm",
        kind: PassKind::Loop,
        params: &[],
        doc: "Loop-invariant code motion: hoist invariant arithmetic, guaranteed divisions and unclobbered loads to the preheader.",
        create_function: None,
        create_loop: Some(|p| {
            no_params("licm", p)?;
            Ok(Box::new(crate::licm::Licm::default()))
        }),
    },
    // --- inline (issue 23) ---
    PassInfo {
        name: "inline",
        kind: PassKind::Module,
        params: &[],
        doc: "Inline calls to device functions bottom-up over the call graph (cost model, alwaysinline/noinline); delete internal functions left uncalled.",
        create_function: None,
        create_loop: None,
    },
    // --- sroa (issue 23) ---
    PassInfo {
        name: "sroa",
        kind: PassKind::Function,
        params: &[],
        doc: "Scalar replacement of local slots: split slots accessed at constant offsets into scalars and promote them to SSA values.",
        create_function: Some(|p| {
            no_params("sroa", p)?;
            Ok(Box::new(crate::sroa::Sroa::default()))
        }),
        create_loop: None,
    },
    // --- select-formation (issue 23) ---
    PassInfo {
        name: "select-formation",
        kind: PassKind::Function,
        params: &[],
        doc: "Turn if-thens and if-then-elses whose arms compute only cheap pure values into selects.",
        create_function: Some(|p| {
            no_params("select-formation", p)?;
            Ok(Box::new(crate::select_formation::SelectFormation::default()))
        }),
        create_loop: None,
    },
    // --- simplifycfg (issue 23) ---
    PassInfo {
        name: "simplifycfg",
        kind: PassKind::Function,
        params: &[],
        doc: "Fold constant branches, remove unreachable blocks, forward empty blocks and merge straight-line blocks.",
        create_function: Some(|p| {
            no_params("simplifycfg", p)?;
            Ok(Box::new(crate::simplifycfg::SimplifyCfg::default()))
        }),
        create_loop: None,
    },
    // --- sink (issue 23) ---
    PassInfo {
        name: "sink",
        kind: PassKind::Function,
        params: &[],
        doc: "Move instructions down the dominator tree to where their uses are (not into loops), so paths that do not use them do not compute them.",
        create_function: Some(|p| {
            no_params("sink", p)?;
            Ok(Box::new(crate::sink::Sink::default()))
        }),
        create_loop: None,
    },
];

/// The constructors of the module passes (kept apart from [`PassInfo`], whose other
/// entries then need no new field).
pub const MODULE_PASS_CTORS: &[(&str, ModulePassCtor)] = &[("inline", |p| {
    no_params("inline", p)?;
    Ok(Box::new(crate::inline::Inliner::default()))
})];

/// The constructor of the module pass with this pipeline name.
pub fn module_pass_ctor(name: &str) -> Option<ModulePassCtor> {
    MODULE_PASS_CTORS
        .iter()
        .find(|(n, _)| *n == name)
        .map(|&(_, c)| c)
}

/// The pass with this pipeline name.
pub fn lookup(name: &str) -> Option<&'static PassInfo> {
    PASSES.iter().find(|p| p.name == name)
}

/// The pass table as text, for `gyre passes`.
pub fn list_passes() -> String {
    let mut out = String::new();
    for p in PASSES {
        let kind = match p.kind {
            PassKind::Function => "function",
            PassKind::Loop => "loop",
            PassKind::Module => "module",
        };
        let params = if p.params.is_empty() {
            String::new()
        } else {
            format!("<{}>", p.params.join(";"))
        };
        out.push_str(&format!(
            "{:<28} {:<9} {}\n",
            format!("{}{params}", p.name),
            kind,
            p.doc
        ));
    }
    out
}
