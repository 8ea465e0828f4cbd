//! The report's compile-speed kernels: the families `nest`, `deep`, `random` and
//! `exit-ladder` at about `n` blocks, with loads, stores and branches in their bodies, as
//! Gyre modules (exported to LLVM IR so that both compilers read the same file).
//!
//! Every kernel is `@k(ptr.global, i32)`: a buffer and a trip count (`random` is the
//! kernel generator's own signature).

use gyre_ir::generate::{generate_kernel_module, GenOptions, SplitMix64};
use gyre_ir::Module;
use std::fmt::Write as _;

/// The families, in report order.
pub const FAMILIES: &[&str] = &["nest", "deep", "random", "exit-ladder"];

const HEAD: &str = "kernel @k(ptr.global, i32) {\nblock0(v0: ptr.global, v1: i32):\n    v2 = iconst.i32 0\n    v3 = iconst.i32 1\n";

/// Sequential 3-deep `while` nests counting to `v1`, 11 blocks each; the innermost body
/// loads `buf[i]`, branches on its sign and stores `buf[i] + i` when it is negative.
pub fn nest(n: usize) -> String {
    let nests = (n / 11).max(1);
    let mut s = format!("{HEAD}    jump block1\n");
    let (mut b, mut v) = (1usize, 4usize);
    for _ in 0..nests {
        // pre, hO, preM, hM, preI, hI, bodyI, store, latchI, latchM, latchO.
        let [pre, ho, pm, hm, pi, hi, bi, st, li, lm, lo] = std::array::from_fn(|k| b + k);
        let next = b + 11;
        let [xo, co, xm, cm, xi, ci, a, p, l, neg, sum, yi, ym, yo] =
            std::array::from_fn(|k| v + k);
        v += 14;
        let _ = write!(
            s,
            "block{pre}:\n    jump block{ho}(v2)\n\
             block{ho}(v{xo}: i32):\n    v{co} = icmp slt v{xo}, v1\n    brif v{co}, block{pm}, block{next}\n\
             block{pm}:\n    jump block{hm}(v2)\n\
             block{hm}(v{xm}: i32):\n    v{cm} = icmp slt v{xm}, v1\n    brif v{cm}, block{pi}, block{lo}\n\
             block{pi}:\n    jump block{hi}(v2)\n\
             block{hi}(v{xi}: i32):\n    v{ci} = icmp slt v{xi}, v1\n    brif v{ci}, block{bi}, block{lm}\n\
             block{bi}:\n    v{a} = sext.i64 v{xi}\n    v{p} = ptradd v0, v{a}, 4\n    v{l} = load.i32 v{p}\n    v{neg} = icmp slt v{l}, v2\n    brif v{neg}, block{st}, block{li}\n\
             block{st}:\n    v{sum} = iadd v{l}, v{xi}\n    store v{sum}, v{p}\n    jump block{li}\n\
             block{li}:\n    v{yi} = iadd v{xi}, v3\n    jump block{hi}(v{yi})\n\
             block{lm}:\n    v{ym} = iadd v{xm}, v3\n    jump block{hm}(v{ym})\n\
             block{lo}:\n    v{yo} = iadd v{xo}, v3\n    jump block{ho}(v{yo})\n"
        );
        b = next;
    }
    let _ = write!(s, "block{b}:\n    store v1, v0\n    return\n}}\n");
    s
}

/// One `while` nest `n / 3` deep, each level counting to `v1`; each level's latch loads
/// `buf[i]`, adds `i` and stores it back.
pub fn deep(n: usize) -> String {
    let d = (n / 3).max(1);
    let mut s = format!("{HEAD}    jump block1(v2)\n");
    // Level i: header 3i+1, preheader of level i+1: 3i+2, latch 3i+3; exit 3d+1.
    let exit = 3 * d + 1;
    for i in 0..d {
        let (h, pre, latch) = (3 * i + 1, 3 * i + 2, 3 * i + 3);
        let [x, c, a, p, l, sum, y] = std::array::from_fn(|k| 4 + 7 * i + k);
        let out = if i == 0 { exit } else { 3 * (i - 1) + 3 };
        let inner = if i + 1 < d { pre } else { latch };
        let _ = write!(
            s,
            "block{h}(v{x}: i32):\n    v{c} = icmp slt v{x}, v1\n    brif v{c}, block{inner}, block{out}\n"
        );
        if i + 1 < d {
            let _ = write!(s, "block{pre}:\n    jump block{}(v2)\n", h + 3);
        }
        let _ = write!(
            s,
            "block{latch}:\n    v{a} = sext.i64 v{x}\n    v{p} = ptradd v0, v{a}, 4\n    v{l} = load.i32 v{p}\n    v{sum} = iadd v{l}, v{x}\n    store v{sum}, v{p}\n    v{y} = iadd v{x}, v3\n    jump block{h}(v{y})\n"
        );
    }
    let _ = write!(s, "block{exit}:\n    store v1, v0\n    return\n}}\n");
    s
}

/// A chain of `n` blocks, block `i` loading `buf[i]` and leaving for the one exit block
/// when it equals `v1` (a search unrolled `n` times); the exit stores the index found.
pub fn exit_ladder(n: usize) -> String {
    let n = n.max(2);
    let exit = n + 1;
    let mut s = format!("{HEAD}    jump block1\n");
    for i in 0..n {
        let b = i + 1;
        let [k, a, p, l, c] = std::array::from_fn(|j| 4 + 5 * i + j);
        let _ = write!(
            s,
            "block{b}:\n    v{k} = iconst.i32 {i}\n    v{a} = sext.i64 v{k}\n    v{p} = ptradd v0, v{a}, 4\n    v{l} = load.i32 v{p}\n    v{c} = icmp eq v{l}, v1\n    brif v{c}, block{exit}(v{k}), block{}\n",
            if i + 1 < n { b + 1 } else { exit + 1 }
        );
    }
    let last = 4 + 5 * n;
    let _ = write!(
        s,
        "block{}:\n    v{last} = iconst.i32 -1\n    jump block{exit}(v{last})\n\
         block{exit}(v{}: i32):\n    store v{}, v0\n    return\n}}\n",
        exit + 1,
        last + 1,
        last + 1
    );
    s
}

/// The family's kernel at about `n` blocks, verified.
pub fn build(family: &str, n: usize) -> Result<Module, String> {
    let text = match family {
        "nest" => nest(n),
        "deep" => deep(n),
        "exit-ladder" => exit_ladder(n),
        "random" => {
            let opts = GenOptions {
                target_blocks: Some(n),
                allow_calls: false,
                // PTX emission rejects irreducible control flow.
                allow_irreducible: false,
                ..GenOptions::default()
            };
            let m = generate_kernel_module(&opts, &mut SplitMix64::new(0x5eed + n as u64)).0;
            return Ok(m);
        }
        other => return Err(format!("unknown family `{other}`")),
    };
    let m = gyre_ir::parse_module(&text).map_err(|e| format!("{family}: {e:?}"))?;
    gyre_ir::verifier::verify_module(&m).map_err(|e| format!("{family}: {e:?}"))?;
    Ok(m)
}

/// Irreducible cycles in all functions of `m` (PTX emission rejects them, and the loop
/// passes skip the loops around them, so a compile-speed kernel has none).
pub fn irreducible_cycles(m: &Module) -> usize {
    use gyre_analysis::{Cfg, DomTree, LoopInfo};
    let (mut cfg, mut dt, mut li) = (Cfg::new(), DomTree::new(), LoopInfo::new());
    m.functions
        .values()
        .map(|f| {
            if cfg.compute(f).is_err() {
                return 0;
            }
            dt.compute(f, &cfg);
            li.compute(f, &cfg, &dt);
            li.irreducible_cycles().len()
        })
        .sum()
}

/// Blocks in all functions of `m`.
pub fn blocks(m: &Module) -> usize {
    m.functions.values().map(|f| f.layout.num_blocks()).sum()
}

/// Instructions in all functions of `m`.
pub fn insts(m: &Module) -> usize {
    m.functions
        .values()
        .map(|f| {
            f.layout
                .blocks()
                .map(|b| f.layout.block_insts(b).count())
                .sum::<usize>()
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_family_builds_verifies_and_has_about_n_blocks() {
        for &f in FAMILIES {
            for n in [100, 1000] {
                let m = build(f, n).unwrap_or_else(|e| panic!("{e}"));
                let b = blocks(&m);
                // The generator's `target_blocks` is approximate.
                let (lo, hi) = if f == "random" { (5, 20) } else { (8, 12) };
                assert!(b * 10 >= n * lo && b * 10 <= n * hi, "{f} {n}: {b} blocks");
                assert!(insts(&m) > b, "{f}: bodies have instructions");
            }
        }
        assert!(build("nope", 10).is_err());
    }

    #[test]
    fn every_family_is_reducible_before_and_after_the_llvm_round_trip() {
        for &f in FAMILIES {
            let m = build(f, 3000).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(irreducible_cycles(&m), 0, "{f} as built");
            let ll = gyre_llvm::export_module(&m, &gyre_llvm::ExportOptions::default());
            let back = gyre_llvm::import_module(&ll).unwrap_or_else(|e| panic!("{f}: {e:?}"));
            assert_eq!(irreducible_cycles(&back), 0, "{f} after export and import");
        }
    }

    #[test]
    fn bodies_load_store_and_branch() {
        for text in [nest(100), deep(100), exit_ladder(100)] {
            assert!(text.contains("load.i32"), "{text}");
            assert!(text.contains("store "), "{text}");
            assert!(text.contains("brif "), "{text}");
        }
    }
}
