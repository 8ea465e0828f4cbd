//! The fast uniformity analysis against the naive reference (joins by max-flow, plain
//! fixed point), on generated reducible functions: kernels and device functions.

use gyre_analysis::uniformity::reference::reference_uniformity;
use gyre_analysis::{Cfg, DomTree, LoopInfo, PostDomTree, Uniformity};
use gyre_ir::generate::{generate_from_seed, GenOptions, RandomSource, SplitMix64};
use gyre_ir::{Block, EntityRef, Function, Value};

fn compare(f: &Function, what: &str) -> bool {
    let cfg = Cfg::with_function(f).expect("generated functions are valid");
    let dt = DomTree::with_function(f, &cfg);
    let pdt = PostDomTree::with_function(f, &cfg);
    let li = LoopInfo::with_function(f, &cfg, &dt);
    if !li.irreducible_cycles().is_empty() {
        return false;
    }
    let fast = Uniformity::with_function(f, &cfg, &dt, &pdt, &li);
    let r = reference_uniformity(f, &cfg, &li);
    for v in f.dfg.values() {
        assert_eq!(
            fast.is_divergent(v),
            r.divergent_values[v.index()],
            "{what}: {v}\n{}",
            gyre_analysis::print_uniformity(&fast, f, None)
        );
    }
    for b in f.layout.blocks() {
        assert_eq!(
            fast.is_block_branch_divergent(b),
            r.divergent_branches[b.index()],
            "{what}: branch of {b}"
        );
        assert_eq!(
            fast.block_may_be_divergent_control(b),
            r.divergent_control[b.index()],
            "{what}: control of {b}"
        );
    }
    for l in li.loops() {
        assert_eq!(
            fast.is_loop_divergent(l),
            r.divergent_loops[l.index()],
            "{what}: {l} (header {})",
            li.header(l)
        );
    }
    let _ = (Block::new(0), Value::new(0));
    true
}

#[test]
fn fast_matches_reference_on_generated_functions() {
    let opts = GenOptions {
        allow_irreducible: false,
        ..GenOptions::default()
    };
    let mut compared = 0;
    for seed in 0..300 {
        let (m, _) = generate_from_seed(&opts, seed);
        for f in m.functions.values() {
            compared += usize::from(compare(f, &format!("seed {seed} @{}", f.name)));
        }
    }
    assert!(compared > 300, "only {compared} functions compared");
}

/// A `while` nest `depth` deep in Gyre IR text (loop-simplify form, not LCSSA). Level `i`:
/// header `h_i(x_i)` tests its counter against `tid.x` (a divergent exit) or the kernel's
/// argument, enters level `i + 1` (or its own latch) and otherwise exits to the latch of
/// level `i - 1` or, as a multi-level `break`, of a shallower level, or to the exit. Every
/// latch has a parameter that each exiting header passes its counter to (a join, and a use
/// leaving loops), and the latch of level `i` also adds `x_{i+1}` (a use outside the loop
/// of its definition, not through a parameter). The blocks after the entry are laid out
/// in a random order, so divergent loops are found in varying orders.
fn deep_nest_text(rng: &mut SplitMix64, depth: usize) -> String {
    let d = depth.max(1);
    let mut below = |n: usize| rng.below(n as u64) as usize;
    // Value numbers: v0 argument, v1 = 0, v2 = tid.x; level i: x = 3 + 4i, c, e, y.
    let x = |i: usize| 3 + 4 * i;
    let (c, e, y) = (
        |i: usize| 4 + 4 * i,
        |i: usize| 5 + 4 * i,
        |i: usize| 6 + 4 * i,
    );
    let exit_v = 3 + 4 * d;
    let mut blocks: Vec<String> = Vec::new();
    let latch = |t: Option<usize>| match t {
        Some(t) => format!("block{}", 3 * t + 3),
        None => format!("block{}", 3 * d + 1),
    };
    for i in 0..d {
        let (h, pre, l) = (3 * i + 1, 3 * i + 2, 3 * i + 3);
        let bound = if below(3) == 0 { "v0" } else { "v2" };
        // Where the header exits to: the parent's latch mostly, sometimes further out.
        let out = match i {
            0 => None,
            _ if below(4) == 0 => below(i + 1).checked_sub(1),
            _ => Some(i - 1),
        };
        let inner = if i + 1 < d {
            format!("block{pre}")
        } else {
            format!("block{l}(v{})", x(i))
        };
        let (cv, xv) = (c(i), x(i));
        blocks.push(format!(
            "block{h}(v{xv}: i32):\n    v{cv} = icmp slt v{xv}, {bound}\n    brif v{cv}, {inner}, {}(v{xv})\n",
            latch(out)
        ));
        if i + 1 < d {
            blocks.push(format!("block{pre}:\n    jump block{}(v1)\n", h + 3));
        }
        let extra = if i + 1 < d {
            format!("    v{} = iadd v{}, v{}\n", y(i) + 4 * d, e(i), x(i + 1))
        } else {
            String::new()
        };
        let add = if i + 1 < d { y(i) + 4 * d } else { e(i) };
        blocks.push(format!(
            "block{l}(v{}: i32):\n{extra}    v{} = iadd v{xv}, v{add}\n    jump block{h}(v{})\n",
            e(i),
            y(i),
            y(i)
        ));
    }
    for k in (1..blocks.len()).rev() {
        blocks.swap(k, below(k + 1));
    }
    let mut s = String::from(
        "global @out: global [4 x i32] align 4\n\nkernel @k(i32) {\nblock0(v0: i32):\n    v1 = iconst.i32 0\n    v2 = tid.x\n    jump block1(v1)\n",
    );
    for b in blocks {
        s.push_str(&b);
    }
    let g = exit_v + 8 * d;
    s.push_str(&format!(
        "block{}(v{exit_v}: i32):\n    v{g} = global_addr @out\n    store v{exit_v}, v{g}\n    return\n}}\n",
        3 * d + 1
    ));
    s
}

#[test]
fn fast_matches_reference_on_deep_nests() {
    // Temporal divergence and divergent-control regions on nests whose levels exit
    // divergently in every order, with multi-level breaks and uses leaving several loops:
    // the cases the linear bookkeeping (each escaping use and each block's region taken
    // once) must get exactly right.
    let mut rng = SplitMix64::new(0xdeed);
    let mut divergent_loops = 0;
    for case in 0..120 {
        let depth = 1 + rng.below(if case % 10 == 0 { 60 } else { 12 }) as usize;
        let text = deep_nest_text(&mut rng, depth);
        let m = gyre_ir::parse_module(&text).unwrap_or_else(|e| panic!("{e:?}\n{text}"));
        gyre_ir::verifier::verify_module(&m).unwrap_or_else(|e| panic!("{e:?}\n{text}"));
        for f in m.functions.values() {
            assert!(compare(f, &format!("deep nest {case}\n{text}")));
            let cfg = Cfg::with_function(f).expect("valid");
            let dt = DomTree::with_function(f, &cfg);
            let pdt = PostDomTree::with_function(f, &cfg);
            let li = LoopInfo::with_function(f, &cfg, &dt);
            let u = Uniformity::with_function(f, &cfg, &dt, &pdt, &li);
            divergent_loops += li.loops().filter(|&l| u.is_loop_divergent(l)).count();
        }
    }
    assert!(
        divergent_loops > 200,
        "only {divergent_loops} divergent loops"
    );
}
