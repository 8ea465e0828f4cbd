//! `analyses`: dominators, post-dominators, loops and irreducible cycles of every
//! function of a generated module (reducible or not) against the textbook algorithms of
//! `gyre_analysis::reference`.

use crate::{Case, Features, Input, InputKind, Target};
use bitvec::vec::BitVec;
use gyre_analysis::reference::{self, RefDom, RefPostDom};
use gyre_analysis::{Cfg, DomTree, LoopInfo, PostDomTree};
use gyre_ir::{Block, EntityRef, Function};

/// The target.
pub const TARGET: Target = Target {
    name: "analyses",
    doc: "dominators, post-dominators and loops against the textbook versions",
    kind: InputKind::Kernel,
    generate,
    check,
};

fn generate(seed: u64) -> Input {
    Input::Kernel(Case::generate(seed, |o| {
        // Irreducible regions are the hard case; the quadratic references need small CFGs.
        o.allow_irreducible |= seed.is_multiple_of(2);
        o.max_blocks = o.max_blocks.min(80);
    }))
}

fn check(input: &Input) -> Result<Features, String> {
    let mut features = Vec::new();
    for f in input.kernel().module.functions.values() {
        check_function(f, &mut features).map_err(|e| format!("@{}: {e}", f.name))?;
    }
    features.sort();
    features.dedup();
    Ok(features)
}

macro_rules! ensure_eq {
    ($a:expr, $b:expr, $($what:tt)*) => {{
        let (a, b) = (&$a, &$b);
        if a != b {
            return Err(format!("{}: fast {:?}, textbook {:?}", format!($($what)*), a, b));
        }
    }};
}

/// Compare every analysis of `f` with its reference.
pub fn check_function(f: &Function, features: &mut Vec<String>) -> Result<(), String> {
    let cfg = Cfg::with_function(f).map_err(|e| format!("Cfg: {e}"))?;
    let dt = DomTree::with_function(f, &cfg);
    let pdt = PostDomTree::with_function(f, &cfg);
    let li = LoopInfo::with_function(f, &cfg, &dt);
    let n = cfg.num_block_slots();
    let blocks: Vec<Block> = (0..n).map(Block::new).collect();

    let r = RefDom::new(&cfg);
    for &x in &blocks {
        ensure_eq!(
            dt.is_reachable(x),
            r.reachable[x.index()],
            "reachability of {x}"
        );
        ensure_eq!(dt.idom(x), r.idom(x), "idom of {x}");
        for &y in &blocks {
            ensure_eq!(dt.dominates(x, y), r.dominates(x, y), "{x} dominates {y}");
        }
    }

    let rp = RefPostDom::new(&cfg);
    ensure_eq!(pdt.roots(), rp.roots.as_slice(), "post-dominator roots");
    for &x in &blocks {
        ensure_eq!(pdt.ipdom(x), rp.ipdom(x), "ipdom of {x}");
        for &y in &blocks {
            ensure_eq!(
                pdt.post_dominates(x, y),
                rp.post_dominates(x, y),
                "{x} post-dominates {y}"
            );
        }
    }

    let naive = reference::natural_loops(&cfg, &r);
    let mut fast: Vec<(Block, BitVec)> = Vec::new();
    for l in li.loops() {
        let mut s: BitVec = BitVec::repeat(false, n);
        for b in li.blocks(l) {
            if s[b.index()] {
                return Err(format!("{b} twice in loop {l:?}"));
            }
            s.set(b.index(), true);
        }
        fast.push((li.header(l), s));
    }
    fast.sort_by_key(|x| x.0);
    if fast != naive {
        let show = |v: &[(Block, BitVec)]| -> Vec<(Block, Vec<usize>)> {
            v.iter()
                .map(|(h, s)| (*h, s.iter_ones().collect()))
                .collect()
        };
        return Err(format!(
            "loops: fast {:?}, textbook {:?}",
            show(&fast),
            show(&naive)
        ));
    }
    for (i, (h, _)) in naive.iter().enumerate() {
        let l = li
            .innermost_loop(*h)
            .ok_or_else(|| format!("header {h} in no loop"))?;
        ensure_eq!(li.header(l), *h, "header of the innermost loop of {h}");
        let parent = reference::loop_parent(&naive, i).and_then(|j| li.innermost_loop(naive[j].0));
        ensure_eq!(li.parent(l), parent, "parent of the loop of {h}");
    }
    for &x in &blocks {
        let want = naive
            .iter()
            .filter(|(_, s)| s[x.index()])
            .min_by_key(|(_, s)| s.count_ones())
            .and_then(|(h, _)| li.innermost_loop(*h));
        ensure_eq!(li.innermost_loop(x), want, "innermost loop of {x}");
    }
    let irr = reference::irreducible_blocks(&cfg, &r);
    let mut got: BitVec = BitVec::repeat(false, n);
    for c in li.irreducible_cycles() {
        if c.entries.len() < 2 {
            return Err(format!("irreducible cycle with entries {:?}", c.entries));
        }
        for &x in &c.blocks {
            if got[x.index()] {
                return Err(format!("{x} in two irreducible cycles"));
            }
            got.set(x.index(), true);
        }
    }
    if got != irr {
        return Err(format!(
            "irreducible blocks: fast {:?}, textbook {:?}",
            got.iter_ones().collect::<Vec<_>>(),
            irr.iter_ones().collect::<Vec<_>>()
        ));
    }
    features.push(format!(
        "loops {}, irreducible {}",
        naive.len().min(4),
        !li.irreducible_cycles().is_empty()
    ));
    Ok(())
}
