//! Checks run after each pass under `--verify-each` (and always in tests): the IR
//! verifier, the loop forms the pass promises on every loop, and that every analysis the
//! pass claims to preserve equals a fresh computation — also when the pass reported no
//! change, which claims that every analysis is preserved.

use crate::analyses::{Analyses, AnalysisCache};
use crate::manager::{Forms, FunctionPass, PassContext, PassError, PassResult};
use gyre_analysis::{Cfg, DomTree, LoopInfo, NonLocalUses, PostDomTree, Uniformity};
use gyre_ir::{Function, Module};

/// Verify `func` after pass `name`: the verifier, the promised forms, and every analysis
/// still cached (what the pass claims to preserve) against a fresh computation. Returns a
/// description of the first problem found.
pub fn verify_after_pass(
    name: &str,
    forms: Forms,
    func: &Function,
    cache: &AnalysisCache,
    module: &Module,
) -> Result<(), String> {
    if let Err(errs) = gyre_ir::verifier::verify_function(func, Some(module)) {
        return Err(format!(
            "after pass '{name}': verifier errors in @{}:\n{errs}",
            func.name
        ));
    }
    let fresh = check_forms(func, forms)
        .map_err(|m| format!("after pass '{name}': @{}: {m}", func.name))?;
    check_preserved(func, cache, &fresh)
        .map_err(|m| format!("after pass '{name}': @{}: {m}", func.name))?;
    Ok(())
}

/// Freshly computed analyses of a function, for comparison with cached ones.
pub struct Fresh {
    cfg: Cfg,
    domtree: DomTree,
    postdom: PostDomTree,
    loops: LoopInfo,
}

/// Check that every loop of `func` has the promised forms; returns fresh analyses.
pub fn check_forms(func: &Function, forms: Forms) -> Result<Fresh, String> {
    let cfg = Cfg::with_function(func).map_err(|e| e.to_string())?;
    let domtree = DomTree::with_function(func, &cfg);
    let postdom = PostDomTree::with_function(func, &cfg);
    let loops = LoopInfo::with_function(func, &cfg, &domtree);
    for l in loops.loops() {
        let h = loops.header(l);
        if loops.contains_irreducible(l) {
            // Passes leave loops with irreducible cycles inside alone (with a remark).
            continue;
        }
        if forms.loop_simplify && !loops.is_loop_simplify_form(l, &cfg) {
            return Err(format!("loop at {h} is not in loop-simplify form"));
        }
        if forms.rotated && !loops.is_rotated_form(l, &cfg) {
            return Err(format!("loop at {h} is not rotated"));
        }
    }
    if forms.lcssa && !loops.is_all_lcssa_form(func, &domtree) {
        return Err("not in LCSSA form".to_string());
    }
    Ok(Fresh {
        cfg,
        domtree,
        postdom,
        loops,
    })
}

/// Check that each valid cached analysis equals the fresh one.
fn check_preserved(func: &Function, cache: &AnalysisCache, fresh: &Fresh) -> Result<(), String> {
    let valid = cache.valid();
    let layout_blocks = fresh.cfg.layout_blocks();
    // Edges are checked whenever they are claimed valid, order stale or not.
    if cache.cfg_edges_valid() {
        for &b in layout_blocks {
            if cache.cfg.succs(b) != fresh.cfg.succs(b) {
                return Err(format!(
                    "claimed to preserve the CFG, but successors of {b} changed"
                ));
            }
            let (mut p, mut q) = (cache.cfg.preds(b).to_vec(), fresh.cfg.preds(b).to_vec());
            p.sort_unstable();
            q.sort_unstable();
            if p != q {
                return Err(format!(
                    "claimed to preserve the CFG, but predecessors of {b} changed"
                ));
            }
        }
    }
    if valid.contains(Analyses::CFG) && cache.cfg.rpo() != fresh.cfg.rpo() {
        return Err("claimed to preserve the CFG, but its reverse post-order changed".into());
    }
    // Immediate dominators are checked whenever claimed, numbering stale or not.
    if cache.domtree_idoms_valid() {
        for &b in layout_blocks {
            if cache.domtree.idom(b) != fresh.domtree.idom(b) {
                return Err(format!(
                    "claimed to preserve the dominator tree, but idom({b}) changed"
                ));
            }
        }
    }
    if valid.contains(Analyses::POSTDOM) {
        for &b in layout_blocks {
            if cache.postdom.ipdom(b) != fresh.postdom.ipdom(b) {
                return Err(format!(
                    "claimed to preserve the post-dominator tree, but ipdom({b}) changed"
                ));
            }
        }
    }
    if valid.contains(Analyses::LOOPS) {
        for &b in layout_blocks {
            let a = cache.loops.innermost_loop(b).map(|l| cache.loops.header(l));
            let f = fresh.loops.innermost_loop(b).map(|l| fresh.loops.header(l));
            if a != f {
                return Err(format!(
                    "claimed to preserve loops, but the loop of {b} changed (kept: {}, fresh: {})",
                    a.map_or("none".to_string(), |h| format!("the loop headed by {h}")),
                    f.map_or("none".to_string(), |h| format!("the loop headed by {h}"))
                ));
            }
        }
    }
    if valid.contains(Analyses::NONLOCAL_USES) {
        // An over-approximation: sound if every value used outside its block is marked.
        let fresh = NonLocalUses::with_function(func);
        for v in func.dfg.values() {
            if fresh.may_be_used_elsewhere(v) && !cache.nonlocal.may_be_used_elsewhere(v) {
                return Err(format!(
                    "claimed to preserve nonlocal-uses, but {v} is used outside its block \
                     and not marked"
                ));
            }
        }
    }
    if valid.contains(Analyses::UNIFORMITY) {
        let u = Uniformity::with_function(
            func,
            &fresh.cfg,
            &fresh.domtree,
            &fresh.postdom,
            &fresh.loops,
        );
        for &b in layout_blocks {
            for i in func.layout.block_insts(b) {
                if let Some(v) = func.dfg.inst_result(i) {
                    if cache.uniformity.is_divergent(v) != u.is_divergent(v) {
                        return Err(format!(
                            "claimed to preserve uniformity, but the uniformity of {v} changed"
                        ));
                    }
                }
                if cache.uniformity.is_branch_uniform(i) != u.is_branch_uniform(i) {
                    return Err(format!(
                        "claimed to preserve uniformity, but the uniformity of branch {i} changed"
                    ));
                }
            }
        }
    }
    Ok(())
}

/// The `verify` pass: fails the pipeline if the function does not verify.
pub struct VerifyPass;

impl FunctionPass for VerifyPass {
    fn name(&self) -> &'static str {
        "verify"
    }

    fn run(
        &mut self,
        func: &mut Function,
        _cx: &mut PassContext<'_>,
    ) -> Result<PassResult, PassError> {
        gyre_ir::verifier::verify_function(func, None)
            .map_err(|e| PassError(format!("verify: @{}:\n{e}", func.name)))?;
        Ok(PassResult::UNCHANGED)
    }
}
