//! Text dumps in the style of LLVM's `opt -passes='print<domtree>'`, `print<postdomtree>`
//! and `print<loops>`, for `gyre print` and for tests.
//!
//! Blocks are written `%blockN`. Tree lines are `[depth] %block {pre,last} [parent depth]`
//! with `{pre,last}` the preorder interval used for O(1) dominance queries.

use crate::cfg::Cfg;
use crate::domtree::DomTree;
use crate::loops::LoopInfo;
use crate::postdom::PostDomTree;
use core::fmt::Write;
use gyre_ir::{Block, Function};

fn name(out: &mut String, b: Block) {
    let _ = write!(out, "%{b}");
}

/// `print<domtree>`: the dominator tree in preorder, indented by depth.
pub fn print_domtree(dt: &DomTree, func: &Function) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "DominatorTree for function: @{}", func.name);
    let _ = writeln!(out, "Inorder Dominator Tree:");
    for &b in dt.preorder() {
        let d = dt.depth(b);
        let (pre, last) = dt.pre_last(b).expect("tree blocks are numbered");
        let _ = write!(out, "{:indent$}[{d}] ", "", indent = 2 * d as usize);
        name(&mut out, b);
        let _ = writeln!(out, " {{{pre},{last}}} [{}]", d - 1);
    }
    out.push_str("Roots:");
    if let Some(r) = dt.root() {
        out.push(' ');
        name(&mut out, r);
    }
    out.push('\n');
    out
}

/// `print<postdomtree>`: the post-dominator tree under the virtual exit.
pub fn print_postdomtree(pdt: &PostDomTree, func: &Function) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "PostDominatorTree for function: @{}", func.name);
    let _ = writeln!(out, "Inorder PostDominator Tree:");
    let _ = writeln!(
        out,
        "  [1]  <<exit node>> {{0,{}}} [0]",
        pdt.preorder().len()
    );
    for &b in pdt.preorder() {
        let d = pdt.depth(b) + 1;
        let (pre, last) = pdt.pre_last(b).expect("tree blocks are numbered");
        let _ = write!(out, "{:indent$}[{d}] ", "", indent = 2 * d as usize);
        name(&mut out, b);
        let _ = writeln!(out, " {{{pre},{last}}} [{}]", d - 1);
    }
    out.push_str("Roots:");
    for &r in pdt.roots() {
        out.push(' ');
        name(&mut out, r);
    }
    out.push('\n');
    out
}

/// `print<loops>`: one line per loop, nested loops indented, blocks header first then in
/// RPO, marked `<header>`, `<latch>`, `<exiting>`; then the irreducible cycles.
pub fn print_loops(li: &LoopInfo, func: &Function) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "Loop info for function '@{}':", func.name);
    let cfg = match Cfg::with_function(func) {
        Ok(c) => c,
        Err(e) => {
            let _ = writeln!(out, "error: {e}");
            return out;
        }
    };
    let mut stack: Vec<_> = li.top_level().iter().rev().copied().collect();
    let mut blocks = Vec::new();
    while let Some(l) = stack.pop() {
        let d = li.depth(l);
        let _ = write!(
            out,
            "{:indent$}Loop at depth {d} containing: ",
            "",
            indent = 4 * (d as usize - 1)
        );
        blocks.clear();
        blocks.extend(li.blocks(l).skip(1));
        blocks.sort_unstable_by_key(|&b| cfg.rpo_number(b));
        for (i, &b) in core::iter::once(&li.header(l))
            .chain(blocks.iter())
            .enumerate()
        {
            if i > 0 {
                out.push(',');
            }
            name(&mut out, b);
            if i == 0 {
                out.push_str("<header>");
            }
            if li.latches(l).contains(&b) {
                out.push_str("<latch>");
            }
            if li.is_exiting(l, b, &cfg) {
                out.push_str("<exiting>");
            }
        }
        if li.contains_irreducible(l) {
            out.push_str(" (irreducible)");
        }
        out.push('\n');
        stack.extend(li.children(l).iter().rev());
    }
    for c in li.irreducible_cycles() {
        out.push_str("Irreducible cycle with entries ");
        list(&mut out, &c.entries, ",");
        out.push_str(" containing: ");
        list(&mut out, &c.blocks, ",");
        out.push('\n');
    }
    out
}

fn list(out: &mut String, blocks: &[Block], sep: &str) {
    for (i, &b) in blocks.iter().enumerate() {
        if i > 0 {
            out.push_str(sep);
        }
        name(out, b);
    }
}

/// The CFG: per block in layout order its successors and predecessors, then the RPO.
pub fn print_cfg(cfg: &Cfg, func: &Function) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "CFG for function: @{}", func.name);
    for &b in cfg.layout_blocks() {
        name(&mut out, b);
        out.push_str(": succs [");
        list(&mut out, cfg.succs(b), ", ");
        out.push_str("] preds [");
        list(&mut out, cfg.preds(b), ", ");
        out.push(']');
        if !cfg.is_reachable(b) {
            out.push_str(" unreachable");
        }
        out.push('\n');
    }
    out.push_str("RPO: ");
    list(&mut out, cfg.rpo(), " ");
    out.push('\n');
    out
}
