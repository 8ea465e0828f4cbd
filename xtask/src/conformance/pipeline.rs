//! From a MANIFEST `run_passes` pipeline (LLVM's `-passes=` syntax) to the pipeline
//! Gyre runs and LLVM 14 `opt` is given.
//!
//! Elements that only compute, print or check analyses (`verify<...>`, `print<...>`,
//! `require<...>`, `invalidate<...>`, `debugify`) do not transform the IR and are dropped;
//! `function(...)`, `loop(...)` and `loop-mssa(...)` keep their structure. Every other
//! name must be a pass of [`gyre_transforms::registry::PASSES`]; otherwise the file is
//! "pass not implemented".

use gyre_transforms::pipeline::{parse_pipeline, PipelineElement};
use gyre_transforms::registry::{self, PassKind};
use gyre_transforms::Forms;

/// The outcome of mapping one pipeline.
#[derive(Clone, PartialEq, Eq, Debug)]
pub enum Mapped {
    /// Every pass exists in Gyre.
    Gyre {
        /// The pipeline for Gyre and for `opt` (analysis-only elements removed).
        text: String,
        /// The pass names in the pipeline, in order, without repeats.
        passes: Vec<String>,
        /// The loop forms the pipeline's passes promise.
        forms: Forms,
    },
    /// Names of the passes (or adaptors) Gyre does not have, without repeats.
    Missing(Vec<String>),
}

/// Adaptors both Gyre and LLVM accept.
const ADAPTORS: &[&str] = &["function", "loop", "loop-mssa"];

/// Elements that do not change the IR.
fn is_analysis_only(e: &PipelineElement) -> bool {
    match e.name.as_str() {
        "verify" => !e.params.is_empty(),
        "print" | "require" | "invalidate" | "debugify" | "check-debugify" => true,
        n => n.starts_with("print-"),
    }
}

/// The first RUN pipeline of a MANIFEST `run_passes` cell (RUN lines are separated by
/// ` ; `).
pub fn first_run(run_passes: &str) -> &str {
    run_passes.split(" ; ").next().unwrap_or("").trim()
}

/// Map one LLVM pipeline string.
pub fn map_pipeline(llvm: &str) -> Result<Mapped, String> {
    let elems = parse_pipeline(llvm).map_err(|e| e.to_string())?;
    let mut missing: Vec<String> = Vec::new();
    let mut passes: Vec<String> = Vec::new();
    let mut forms = Forms::default();
    // Frames of an explicit stack: the source elements left, the kept elements, and the
    // adaptor (without its children) that owns them.
    type Frame<'a> = (
        std::slice::Iter<'a, PipelineElement>,
        Vec<PipelineElement>,
        Option<PipelineElement>,
    );
    let mut stack: Vec<Frame<'_>> = vec![(elems.iter(), Vec::new(), None)];
    let mut top_level = Vec::new();
    let mut dropped: Vec<String> = Vec::new();
    while let Some((iter, _, _)) = stack.last_mut() {
        let Some(e) = iter.next() else {
            let (_, kept, adaptor) = stack
                .pop()
                .expect("the loop checked the stack is non-empty");
            match (adaptor, stack.last_mut()) {
                (Some(mut a), Some(parent)) => {
                    if !kept.is_empty() {
                        a.nested = kept;
                        parent.1.push(a);
                    }
                }
                _ => top_level = kept,
            }
            continue;
        };
        if is_analysis_only(e) {
            dropped.push(e.to_string());
            continue;
        }
        if !e.nested.is_empty() || ADAPTORS.contains(&e.name.as_str()) {
            let label = format!("{}(...)", e.name);
            if !ADAPTORS.contains(&e.name.as_str()) && !missing.contains(&label) {
                missing.push(label);
            }
            let mut a = e.clone();
            a.nested = Vec::new();
            stack.push((e.nested.iter(), Vec::new(), Some(a)));
            continue;
        }
        match registry::lookup(&e.name) {
            None => {
                if !missing.contains(&e.name) {
                    missing.push(e.name.clone());
                }
            }
            Some(info) => {
                let f = match info.kind {
                    PassKind::Function => info
                        .create_function
                        .expect("function passes have a constructor")(
                        &e.params
                    )?
                    .establishes(),
                    PassKind::Loop => {
                        info.create_loop.expect("loop passes have a constructor")(&e.params)?
                            .establishes()
                    }
                    // Module passes (inline) establish no loop form.
                    PassKind::Module => gyre_transforms::Forms::default(),
                };
                forms.loop_simplify |= f.loop_simplify;
                forms.lcssa |= f.lcssa;
                forms.rotated |= f.rotated;
                if !passes.contains(&e.name) {
                    passes.push(e.name.clone());
                }
                stack.last_mut().expect("inside a frame").1.push(e.clone());
            }
        }
    }
    if !missing.is_empty() {
        return Ok(Mapped::Missing(missing));
    }
    if passes.is_empty() {
        // Only analyses (e.g. `print<scalar-evolution>`): the test is about an
        // analysis Gyre does not have.
        dropped.dedup();
        return Ok(Mapped::Missing(dropped));
    }
    let text = top_level
        .iter()
        .map(|e| e.to_string())
        .collect::<Vec<_>>()
        .join(",");
    Ok(Mapped::Gyre {
        text,
        passes,
        forms,
    })
}

/// Loop passes whose files count even when the rest of their pipeline is missing in
/// Gyre: the file is then compared on these passes alone ([`cleanup_part`]).
pub const COMPARED_ALONE: &[&str] = &["loop-deletion", "loop-simplifycfg"];

/// For a pipeline naming a pass Gyre lacks: its [`COMPARED_ALONE`] passes, in order,
/// without repeats, as one `loop(...)` (e.g. `sccp,simplifycfg,indvars,loop-deletion,dce`
/// gives `loop(loop-deletion)`), or `None` if it has none. Gyre's loop adaptor and
/// LLVM's both put every loop in loop-simplify and LCSSA form first, so Gyre runs
/// `loop-simplify,lcssa,loop(loop-deletion)` as `opt -passes=loop-deletion` does. The
/// passes before them shape the input (LLVM's tests put them there), so the comparison
/// says how the pass treats the file as written, not what the full pipeline gives.
pub fn cleanup_part(llvm: &str) -> Option<String> {
    let mut found: Vec<&str> = Vec::new();
    // The names are whole elements of the pipeline: split at the separators.
    for name in llvm.split(|c: char| ",()<>;".contains(c)) {
        let name = name.trim();
        if let Some(&p) = COMPARED_ALONE.iter().find(|&&p| p == name) {
            if !found.contains(&p) {
                found.push(p);
            }
        }
    }
    (!found.is_empty()).then(|| format!("loop({})", found.join(",")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gyre(s: &str) -> (String, Vec<String>) {
        match map_pipeline(s).expect("valid pipeline") {
            Mapped::Gyre { text, passes, .. } => (text, passes),
            Mapped::Missing(m) => panic!("{s}: missing {m:?}"),
        }
    }

    #[test]
    fn analysis_elements_are_dropped_and_adaptors_kept() {
        assert_eq!(
            gyre("verify<scalar-evolution>,lcssa,verify<scalar-evolution>").0,
            "lcssa"
        );
        assert_eq!(gyre("function(lcssa),verify").0, "function(lcssa),verify");
        assert_eq!(
            gyre("require<domfrontier>,loop-simplify,require<domfrontier>"),
            (
                "loop-simplify".to_string(),
                vec!["loop-simplify".to_string()]
            )
        );
        assert_eq!(
            gyre("print<scalar-evolution>,function(print<x>),lcssa").0,
            "lcssa"
        );
    }

    #[test]
    fn unknown_passes_are_reported_once() {
        let m = map_pipeline(
            "loop-sink,loop-simplify,loop-mssa(loop-sink,loop-fuse),cgscc(argpromotion)",
        )
        .expect("valid pipeline");
        assert_eq!(
            m,
            Mapped::Missing(vec![
                "loop-sink".to_string(),
                "loop-fuse".to_string(),
                "cgscc(...)".to_string(),
                "argpromotion".to_string()
            ])
        );
    }

    #[test]
    fn analysis_only_pipelines_name_the_analysis() {
        assert_eq!(
            map_pipeline("print<scalar-evolution>").expect("valid pipeline"),
            Mapped::Missing(vec!["print<scalar-evolution>".to_string()])
        );
    }

    #[test]
    fn forms_come_from_the_passes() {
        match map_pipeline("loop-simplify,lcssa").expect("valid pipeline") {
            Mapped::Gyre { forms, .. } => assert!(forms.loop_simplify && forms.lcssa),
            m => panic!("{m:?}"),
        }
    }

    #[test]
    fn first_run_takes_the_first_run_line() {
        assert_eq!(first_run("lcssa ; debugify,lcssa"), "lcssa");
        assert_eq!(first_run("indvars"), "indvars");
    }

    #[test]
    fn cleanup_part_keeps_the_deletion_and_simplifycfg_passes() {
        assert_eq!(
            cleanup_part("sccp,simplifycfg,indvars,loop-deletion,dce,simplifycfg").as_deref(),
            Some("loop(loop-deletion)")
        );
        assert_eq!(
            cleanup_part("sroa,loop(loop-simplifycfg),loop-mssa(licm),loop-deletion").as_deref(),
            Some("loop(loop-simplifycfg,loop-deletion)")
        );
        assert_eq!(cleanup_part("licm,instcombine"), None);
        // A missing pass inside the kept part is not the same name.
        assert_eq!(cleanup_part("loop-deletion-x"), None);
    }
}
