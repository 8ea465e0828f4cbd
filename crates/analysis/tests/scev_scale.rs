//! Scalar evolution on the shapes that break recursive implementations (LLVM 14's
//! `indvars` overflows its stack on a 2,497-deep nest; `llc` recurses in SCEV's
//! `isImpliedCond` on a 100k-block kernel of sequential loops): a 10,000-deep nest of
//! counted loops and 30,000 sequential counted loops in 180,000 blocks, built with the
//! builder and analysed through the analysis cache, on the test's default thread stack.
//! Every count is checked; no timing is asserted (the work is linear by construction:
//! one RPO sweep over the values and one pass over the exiting edges).

use gyre_analysis::{Analyses, AnalysisCache};
use gyre_ir::builder::{FuncCursor, InstBuilder};
use gyre_ir::{Block, FuncKind, Function, IntCC, IntFlags, Signature, Type, Value};

fn kernel(params: &[Type]) -> (Function, Block, Vec<Value>) {
    let mut f = Function::new(
        "k",
        FuncKind::Kernel,
        Signature {
            params: params.to_vec(),
            ret: None,
        },
    );
    let entry = f.append_new_block();
    let ps = params
        .iter()
        .map(|&t| f.dfg.append_block_param(entry, t))
        .collect();
    (f, entry, ps)
}

/// `depth` nested loops `for (i_d = 0; i_d < n; i_d++)`, each header exiting to the latch
/// of the loop around it.
fn deep_nest(depth: usize) -> Function {
    let (mut f, entry, ps) = kernel(&[Type::I32]);
    let n = ps[0];
    let headers: Vec<Block> = (0..depth).map(|_| f.append_new_block()).collect();
    let latches: Vec<Block> = (0..depth).map(|_| f.append_new_block()).collect();
    let done = f.append_new_block();
    let ivs: Vec<Value> = headers
        .iter()
        .map(|&h| f.dfg.append_block_param(h, Type::I32))
        .collect();
    let mut c = FuncCursor::new(&mut f).at_end(entry);
    let zero = c.iconst(Type::I32, 0);
    c.jump(headers[0], &[zero]);
    for d in 0..depth {
        c.goto_end(headers[d]);
        let cmp = c.icmp(IntCC::Slt, ivs[d], n);
        let out = if d == 0 { done } else { latches[d - 1] };
        if d + 1 < depth {
            // The header is also the inner loop's preheader's only predecessor: give the
            // inner loop a block of its own to enter from.
            let pre = c.func_mut().append_new_block();
            c.brif(cmp, pre, &[], out, &[]);
            c.goto_end(pre);
            let z = c.iconst(Type::I32, 0);
            c.jump(headers[d + 1], &[z]);
        } else {
            c.brif(cmp, latches[d], &[], out, &[]);
        }
        c.goto_end(latches[d]);
        let one = c.iconst(Type::I32, 1);
        let next = c.iadd_flags(ivs[d], one, IntFlags::NSW);
        c.jump(headers[d], &[next]);
    }
    c.goto_end(done);
    c.ret(None);
    f
}

/// `count` loops one after the other; loop `k` counts from 0 by 1 while below `k % 50`
/// (header exit, `ult`) or, for odd `k`, from 100 down by 2 while above `k % 50`
/// (rotated, `sgt`), with a diamond in its body.
fn sequential(count: usize) -> (Function, Vec<u64>) {
    let (mut f, entry, _) = kernel(&[]);
    let mut want = Vec::with_capacity(count);
    let mut c = FuncCursor::new(&mut f).at_end(entry);
    let mut pre = c.func_mut().append_new_block();
    c.jump(pre, &[]);
    for k in 0..count {
        let bound = (k % 50) as i64;
        let h = c.func_mut().append_new_block();
        let iv = c.func_mut().dfg.append_block_param(h, Type::I32);
        let (a, b1, b2, latch) = (
            c.func_mut().append_new_block(),
            c.func_mut().append_new_block(),
            c.func_mut().append_new_block(),
            c.func_mut().append_new_block(),
        );
        let next_pre = c.func_mut().append_new_block();
        c.goto_end(pre);
        if k % 2 == 0 {
            let z = c.iconst(Type::I32, 0);
            c.jump(h, &[z]);
            c.goto_end(h);
            let n = c.iconst(Type::I32, bound);
            let cmp = c.icmp(IntCC::Ult, iv, n);
            c.brif(cmp, a, &[], next_pre, &[]);
            want.push(bound as u64);
        } else {
            let s = c.iconst(Type::I32, 100);
            c.jump(h, &[s]);
            c.goto_end(h);
            c.jump(a, &[]);
            // {98,+,-2} > bound: while 100 - 2(k+1) > bound.
            want.push(((100 - bound - 1) / 2) as u64);
        }
        c.goto_end(a);
        let two = c.iconst(Type::I32, 2);
        let odd = c.icmp(IntCC::Slt, iv, two);
        c.brif(odd, b1, &[], b2, &[]);
        c.goto_end(b1);
        c.jump(latch, &[]);
        c.goto_end(b2);
        c.jump(latch, &[]);
        c.goto_end(latch);
        if k % 2 == 0 {
            let one = c.iconst(Type::I32, 1);
            let next = c.iadd(iv, one);
            c.jump(h, &[next]);
        } else {
            let m2 = c.iconst(Type::I32, 2);
            let next = c.isub(iv, m2);
            let n = c.iconst(Type::I32, bound);
            let cmp = c.icmp(IntCC::Sgt, next, n);
            c.brif(cmp, h, &[next], next_pre, &[]);
        }
        pre = next_pre;
    }
    c.goto_end(pre);
    c.ret(None);
    (f, want)
}

#[test]
fn ten_thousand_deep_nest() {
    let f = deep_nest(10_000);
    gyre_ir::verifier::verify_function(&f, None).expect("valid");
    let mut cache = AnalysisCache::new();
    cache.ensure(&f, Analyses::SCEV).expect("analysable");
    let blocks = f.layout.blocks().count();
    let t = std::time::Instant::now();
    cache
        .scev
        .compute(&f, &cache.cfg, &cache.domtree, &cache.loops);
    println!(
        "scalar evolution: {blocks} blocks in a 10,000-deep nest, {:.0} ns/block",
        t.elapsed().as_nanos() as f64 / blocks as f64
    );
    assert_eq!(cache.loops.num_loops(), 10_000);
    for l in cache.loops.loops() {
        let btc = cache.scev.backedge_taken_count(l).expect("a count");
        assert_eq!(cache.scev.display(btc, &f), "(0 smax %v0)");
        assert_eq!(
            cache.scev.max_backedge_taken_count(l),
            Some(i32::MAX as u64)
        );
        let h = cache.loops.header(l);
        let iv = f.dfg.block_params(h)[0];
        let s = cache.scev.value(iv).expect("an expression");
        assert_eq!(cache.scev.addrec_loop(s), Some(l));
    }
    // The same nest computed as a nest (a loop pass's way) agrees loop by loop.
    let mut nest = gyre_analysis::ScalarEvolution::new();
    let root = cache.loops.top_level().first().expect("a loop");
    nest.compute_nest(&f, &cache.cfg, &cache.loops, root);
    assert_eq!(nest.scope(), Some(root));
    for l in cache.loops.loops() {
        let btc = nest.backedge_taken_count(l).expect("a count");
        assert_eq!(nest.display(btc, &f), "(0 smax %v0)");
    }
}

#[test]
fn thirty_thousand_sequential_loops() {
    let (f, want) = sequential(30_000);
    assert!(f.layout.blocks().count() >= 100_000);
    gyre_ir::verifier::verify_function(&f, None).expect("valid");
    let mut cache = AnalysisCache::new();
    cache.ensure(&f, Analyses::SCEV).expect("analysable");
    // For the record, not asserted: scalar evolution's own time per block.
    let blocks = f.layout.blocks().count();
    let t = std::time::Instant::now();
    cache
        .scev
        .compute(&f, &cache.cfg, &cache.domtree, &cache.loops);
    println!(
        "scalar evolution: {blocks} blocks, {} loops, {:.0} ns/block",
        cache.loops.num_loops(),
        t.elapsed().as_nanos() as f64 / blocks as f64
    );
    let loops = &cache.loops;
    assert_eq!(loops.num_loops(), 30_000);
    // Loops by header in layout order.
    let mut by_order: Vec<_> = loops.loops().collect();
    by_order.sort_by_key(|&l| loops.header(l));
    for (k, l) in by_order.into_iter().enumerate() {
        let btc = cache.scev.backedge_taken_count(l).expect("a count");
        assert_eq!(cache.scev.as_const(btc), Some(want[k]), "loop {k}");
    }
    // Each loop computed alone, as a loop pass does, one after the other with one
    // analysis: every nest costs its own size (30,000 whole-function computations would
    // take minutes), and each sees only its own loop.
    let mut nest = gyre_analysis::ScalarEvolution::new();
    let mut by_order: Vec<_> = loops.loops().collect();
    by_order.sort_by_key(|&l| loops.header(l));
    let t = std::time::Instant::now();
    for (k, &l) in by_order.iter().enumerate() {
        nest.compute_nest(&f, &cache.cfg, loops, l);
        let btc = nest.backedge_taken_count(l).expect("a count");
        assert_eq!(nest.as_const(btc), Some(want[k]), "loop {k} alone");
        if k > 0 {
            let before = by_order[k - 1];
            assert_eq!(nest.backedge_taken_count(before), None, "out of scope");
            let iv = f.dfg.block_params(loops.header(before))[0];
            assert_eq!(nest.value(iv), None, "out of scope");
        }
    }
    println!(
        "scalar evolution per nest: {:.0} ns/block",
        t.elapsed().as_nanos() as f64 / blocks as f64
    );
}
