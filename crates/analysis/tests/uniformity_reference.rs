//! The fast uniformity analysis against the naive reference (joins by max-flow, plain
//! fixed point), on generated reducible functions: kernels and device functions.

use gyre_analysis::uniformity::reference::reference_uniformity;
use gyre_analysis::{Cfg, DomTree, LoopInfo, PostDomTree, Uniformity};
use gyre_ir::generate::{generate_from_seed, GenOptions};
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
