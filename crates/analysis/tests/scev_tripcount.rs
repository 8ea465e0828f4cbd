//! Trip counts of scalar evolution against the interpreter, by brute force.
//!
//! Thousands of random single loops: bit width i8/i16/i32/i64, every `icmp` predicate,
//! the recurrence on either side, staying on true or on false, steps up and down of
//! several sizes, starts and bounds near 0 and the signed and unsigned extremes (so that
//! many would wrap), constant or passed as kernel parameters (symbolic), increments with
//! and without `nsw`/`nuw`, and the loop rotated (the latch exits, comparing `iv + step`)
//! or not (the header exits, comparing `iv`). Each kernel counts its back edges and stores
//! the count and the compared value at the exit; the interpreter runs it.
//!
//! Checked, never a wrong number: the backedge-taken count SCEV gives (evaluated with the
//! launch's parameters) equals the observed count; its constant maximum is at least the
//! observed count; the exit value of the compared recurrence equals the observed value; a
//! loop that runs into the step limit has no count below the iterations it ran. Runs
//! whose increment overflows under `nsw`/`nuw` are undefined (poison decides a branch)
//! and are skipped. `cargo test -p gyre-analysis --test scev_tripcount -- --nocapture`
//! prints the share answered.

use gyre_analysis::{Cfg, DomTree, LoopInfo, ScalarEvolution};
use gyre_interp::{run_kernel, Arg, ErrorKind, Launch, Memory};
use gyre_ir::{IntCC, Value};

/// xorshift64*.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    fn pick<T: Copy>(&mut self, xs: &[T]) -> T {
        xs[self.below(xs.len() as u64) as usize]
    }
}

const PREDS: [IntCC; 10] = [
    IntCC::Eq,
    IntCC::Ne,
    IntCC::Slt,
    IntCC::Sle,
    IntCC::Sgt,
    IntCC::Sge,
    IntCC::Ult,
    IntCC::Ule,
    IntCC::Ugt,
    IntCC::Uge,
];

/// Iterations a loop may run before the step limit (each iteration is under 8 steps).
const MAX_ITERS: u64 = 1500;
const STEP_LIMIT: u64 = MAX_ITERS * 8 + 64;

fn mask(bits: u32) -> u64 {
    if bits == 64 {
        u64::MAX
    } else {
        (1 << bits) - 1
    }
}

struct Case {
    bits: u32,
    start: u64,
    bound: u64,
    step: i64,
    pred: IntCC,
    /// The recurrence is the second operand of the `icmp`.
    swap: bool,
    /// The loop leaves when the `icmp` is true.
    exit_on_true: bool,
    rotated: bool,
    start_param: bool,
    bound_param: bool,
    /// "", " nsw", " nuw".
    flags: &'static str,
    /// `isub iv, -step` instead of `iadd iv, step`.
    sub: bool,
    /// A non-affine update `iv = op iv, k` instead (brute-force evaluation).
    op: Option<(&'static str, i64)>,
}

fn interesting(r: &mut Rng, bits: u32) -> u64 {
    let m = mask(bits);
    let smin = 1u64 << (bits - 1);
    let base = r.pick(&[0, 0, smin, smin - 1, m, 1, 100]);
    let off = r.below(41) as i64 - 20;
    (base as i64).wrapping_add(off) as u64 & m
}

fn gen(r: &mut Rng) -> Case {
    let bits = r.pick(&[8u32, 16, 32, 64]);
    let m = mask(bits);
    let start = interesting(r, bits);
    let bound = if r.below(2) == 0 {
        interesting(r, bits)
    } else {
        (start as i64).wrapping_add(r.below(81) as i64 - 40) as u64 & m
    };
    let mut step = r.pick(&[1i64, 1, -1, -1, 2, -2, 3, -3, 4, -4, 7, -7, 16, -5, 0]);
    if bits == 8 && r.below(8) == 0 {
        step = r.pick(&[100, -100, 127, -128, 64]);
    }
    let sub = r.below(4) == 0 && step != i64::MIN;
    Case {
        bits,
        start,
        bound,
        step,
        pred: r.pick(&PREDS),
        swap: r.below(2) == 0,
        exit_on_true: r.below(2) == 0,
        rotated: r.below(2) == 0,
        start_param: r.below(3) == 0,
        bound_param: r.below(3) == 0,
        flags: r.pick(&["", "", " nsw", " nuw"]),
        sub,
        op: None,
    }
}

/// A loop whose counter doubles, halves, or is otherwise updated by a non-affine
/// operation, from a constant start.
fn gen_nonaffine(r: &mut Rng) -> Case {
    let mut c = gen(r);
    c.start_param = false;
    c.bound_param = r.below(4) == 0;
    let op = r.pick(&[
        ("imul", 2i64),
        ("imul", 3),
        ("imul", -2),
        ("shl", 1),
        ("lshr", 1),
        ("ashr", 1),
        ("udiv", 2),
        ("sdiv", 2),
        ("sdiv", -3),
        ("xor", 5),
        ("and", 0x7ffe),
        ("or", 1),
        ("urem", 7),
    ]);
    c.op = Some(op);
    c.flags = "";
    c
}

fn signed(x: u64, bits: u32) -> i64 {
    let sh = 64 - bits;
    ((x << sh) as i64) >> sh
}

/// The kernel: `out[0]` = back edges taken, `out[1]` = the compared value at the exit.
fn source(c: &Case) -> String {
    let t = format!("i{}", c.bits);
    let start = if c.start_param {
        "v1".to_string()
    } else {
        "v10".to_string()
    };
    let bound = if c.bound_param { "v2" } else { "v11" };
    let cond = if c.exit_on_true {
        c.pred.inverse()
    } else {
        c.pred
    };
    let (p, a, b) = if c.swap {
        (cond.swapped(), bound.to_string(), "CMP".to_string())
    } else {
        (cond, "CMP".to_string(), bound.to_string())
    };
    let step_inst = if let Some((op, k)) = c.op {
        format!(
            "v30 = iconst.{t} {}\n    v31 = {op} v20, v30",
            signed(k as u64 & mask(c.bits), c.bits)
        )
    } else if c.sub {
        format!(
            "v30 = iconst.{t} {}\n    v31 = isub{} v20, v30",
            signed((c.step as u64).wrapping_neg() & mask(c.bits), c.bits),
            c.flags
        )
    } else {
        format!(
            "v30 = iconst.{t} {}\n    v31 = iadd{} v20, v30",
            c.step, c.flags
        )
    };
    let head = format!(
        "kernel @k(ptr.global, {t}, {t}) {{\nblock0(v0: ptr.global, v1: {t}, v2: {t}):\n    \
         v10 = iconst.{t} {}\n    v11 = iconst.{t} {}\n    v12 = iconst.i64 0\n    \
         v13 = iconst.i64 1\n    jump block1({start}, v12)\n",
        signed(c.start, c.bits),
        signed(c.bound, c.bits)
    );
    let widen = if c.bits == 64 {
        "iadd v41, v12"
    } else {
        "zext.i64 v41"
    };
    let exit = format!(
        "block3(v40: i64, v41: {t}):\n    store v40, v0\n    v42 = ptradd v0, v13, 8\n    \
         v43 = {widen}\n    store v43, v42\n    return\n}}\n"
    );
    if c.rotated {
        let cmp = format!(
            "v32 = icmp {p} {}, {}",
            a.replace("CMP", "v31"),
            b.replace("CMP", "v31")
        );
        let (tb, eb) = if c.exit_on_true {
            ("block3(v21, v31)", "block1(v31, v33)")
        } else {
            ("block1(v31, v33)", "block3(v21, v31)")
        };
        format!(
            "{head}block1(v20: {t}, v21: i64):\n    {step_inst}\n    v33 = iadd v21, v13\n    \
             {cmp}\n    brif v32, {tb}, {eb}\n{exit}"
        )
    } else {
        let cmp = format!(
            "v32 = icmp {p} {}, {}",
            a.replace("CMP", "v20"),
            b.replace("CMP", "v20")
        );
        let (tb, eb) = if c.exit_on_true {
            ("block3(v21, v20)", "block2")
        } else {
            ("block2", "block3(v21, v20)")
        };
        format!(
            "{head}block1(v20: {t}, v21: i64):\n    {cmp}\n    brif v32, {tb}, {eb}\n\
             block2:\n    {step_inst}\n    v33 = iadd v21, v13\n    jump block1(v31, v33)\n{exit}"
        )
    }
}

#[derive(Default)]
struct Tally {
    runs: u64,
    undefined: u64,
    answered: u64,
    limit: u64,
    max_known: u64,
    exit_values: u64,
    expanded: u64,
}

fn check(c: &Case, tally: &mut Tally) {
    let src = source(c);
    let module = gyre_ir::parse_module(&src).unwrap_or_else(|e| panic!("{e:?}\n{src}"));
    gyre_ir::verifier::verify_module(&module).unwrap_or_else(|e| panic!("{e:?}\n{src}"));
    let func = module.functions.values().next().expect("one function");
    let cfg = Cfg::with_function(func).expect("cfg");
    let dt = DomTree::with_function(func, &cfg);
    let li = LoopInfo::with_function(func, &cfg, &dt);
    let mut se = ScalarEvolution::new();
    se.compute(func, &cfg, &dt, &li);
    assert_eq!(li.num_loops(), 1, "{src}");
    let l = li.loops().next().expect("a loop");
    // The loop computed as a nest, as a loop pass computes it, says the same.
    let mut nest = ScalarEvolution::new();
    nest.compute_nest(func, &cfg, &li, l);
    let show =
        |se: &ScalarEvolution, s: Option<gyre_analysis::Scev>| s.map(|s| se.display(s, func));
    assert_eq!(
        show(&nest, nest.backedge_taken_count(l)),
        show(&se, se.backedge_taken_count(l)),
        "nest and function disagree\n{src}"
    );
    assert_eq!(
        nest.max_backedge_taken_count(l),
        se.max_backedge_taken_count(l),
        "{src}"
    );

    let mut mem = Memory::new();
    mem.alloc_zeroed("out", 24);
    let mut launch = Launch::linear(
        1,
        1,
        vec![Arg::buffer("out"), Arg::Int(c.start), Arg::Int(c.bound)],
    );
    launch.config.step_limit = STEP_LIMIT;
    tally.runs += 1;
    let params = |v: Value| match v.as_u32() {
        1 => Some(c.start),
        2 => Some(c.bound),
        _ => None,
    };
    let btc = se
        .backedge_taken_count(l)
        .map(|s| se.evaluate(s, params).expect("a count without recurrences"));
    let max = se.max_backedge_taken_count(l);
    match run_kernel(&module, "k", &launch, &mut mem) {
        Ok(_) => {
            let out: Vec<u64> = mem.read("out").expect("out");
            let (taken, value) = (out[0], out[1]);
            if let Some(n) = btc {
                assert_eq!(n, taken, "wrong backedge-taken count\n{src}");
                tally.answered += 1;
                // The expander computes the same number in the exit block.
                let s = se.backedge_taken_count(l).expect("known");
                if se.expansion_cost(s).is_some() {
                    let mut m2 = module.clone();
                    let f2 = m2.functions.values_mut().next().expect("one function");
                    let exit = gyre_ir::Block::from_u32(3);
                    let at = f2.layout.first_inst(exit).expect("a store");
                    if let Some(v) = se.expand(f2, &dt, s, at) {
                        use gyre_ir::builder::{FuncCursor, InstBuilder};
                        let mut cur = FuncCursor::new(f2).before_inst(at);
                        let w = if se.bits(s) < 64 {
                            cur.cast(gyre_ir::Opcode::Zext, gyre_ir::Type::I64, v)
                        } else {
                            v
                        };
                        let base = cur.func().dfg.block_params(gyre_ir::Block::from_u32(0))[0];
                        let two = cur.iconst(gyre_ir::Type::I64, 2);
                        let p = cur.ptradd(base, two, 8);
                        cur.store(w, p);
                        gyre_ir::verifier::verify_module(&m2)
                            .unwrap_or_else(|e| panic!("{e:?}\n{src}"));
                        let mut mem2 = Memory::new();
                        mem2.alloc_zeroed("out", 24);
                        run_kernel(&m2, "k", &launch, &mut mem2).expect("runs as before");
                        let out2: Vec<u64> = mem2.read("out").expect("out");
                        assert_eq!(out2[2], taken, "expanded count\n{src}");
                        tally.expanded += 1;
                    }
                }
            }
            if let Some(m) = max {
                assert!(taken <= m, "max {m} below the count {taken}\n{src}");
                tally.max_known += 1;
            }
            // The compared value when the loop exits.
            let cmp_v = Value::from_u32(if c.rotated { 31 } else { 20 });
            if let Some(s) = se.value(cmp_v) {
                if let Some(e) = se.exit_value(s, l) {
                    let got = se.evaluate(e, params).expect("an exit value");
                    assert_eq!(got, value & mask(c.bits), "wrong exit value\n{src}");
                    tally.exit_values += 1;
                }
            }
        }
        Err(e) if e.kind() == ErrorKind::Poison => {
            assert!(!c.flags.is_empty(), "poison without flags: {e}\n{src}");
            tally.undefined += 1;
        }
        Err(e) if e.kind() == ErrorKind::StepLimit => {
            tally.limit += 1;
            if let Some(n) = btc {
                assert!(n >= MAX_ITERS, "count {n} but ran longer\n{src}");
            }
            if let Some(m) = max {
                assert!(m >= MAX_ITERS, "max {m} but ran longer\n{src}");
            }
        }
        Err(e) => panic!("{e}\n{src}"),
    }
}

#[test]
fn trip_counts_match_the_interpreter() {
    let mut r = Rng(0x5ce7_0001);
    let mut tally = Tally::default();
    let n = 4000;
    for _ in 0..n {
        let c = gen(&mut r);
        check(&c, &mut tally);
    }
    let defined = tally.runs - tally.undefined - tally.limit;
    println!(
        "{} loops: {} finished, {} undefined (nsw/nuw overflow), {} hit the step limit; \
         backedge-taken count answered for {} of the {} finished ({:.1}%), max for {}, \
         exit value for {}, count expanded and run for {}",
        tally.runs,
        defined,
        tally.undefined,
        tally.limit,
        tally.answered,
        defined,
        100.0 * tally.answered as f64 / defined.max(1) as f64,
        tally.max_known,
        tally.exit_values,
        tally.expanded
    );
    // The analysis must answer most of them, or it would pass by saying "unknown".
    assert!(tally.answered * 2 > defined, "too few answered");
}

#[test]
fn brute_forced_counts_match_the_interpreter() {
    let mut r = Rng(0x5ce7_0002);
    let mut tally = Tally::default();
    for _ in 0..2000 {
        let c = gen_nonaffine(&mut r);
        check(&c, &mut tally);
    }
    let defined = tally.runs - tally.undefined - tally.limit;
    println!(
        "{} non-affine loops: {} finished, {} hit the step limit; count answered for {} \
         ({:.1}% of the finished)",
        tally.runs,
        defined,
        tally.limit,
        tally.answered,
        100.0 * tally.answered as f64 / defined.max(1) as f64
    );
    assert!(tally.answered * 2 > defined, "too few answered");
}

/// The common shapes give LLVM's closed forms.
#[test]
fn closed_forms_of_counted_loops() {
    let src = "kernel @k(i32) {
block0(v0: i32):
    v1 = iconst.i32 0
    jump block1(v1)
block1(v2: i32):
    v3 = icmp slt v2, v0
    brif v3, block2, block3
block2:
    v4 = iconst.i32 1
    v5 = iadd nsw v2, v4
    jump block1(v5)
block3:
    return
}
";
    let f = gyre_ir::parse_function(src).expect("parses");
    let cfg = Cfg::with_function(&f).expect("cfg");
    let dt = DomTree::with_function(&f, &cfg);
    let li = LoopInfo::with_function(&f, &cfg, &dt);
    let mut se = ScalarEvolution::new();
    se.compute(&f, &cfg, &dt, &li);
    let l = li.loops().next().expect("loop");
    let btc = se.backedge_taken_count(l).expect("known");
    assert_eq!(se.display(btc, &f), "(0 smax %v0)");
    assert_eq!(se.max_backedge_taken_count(l), Some(i32::MAX as u64));
    let iv = se.value(Value::from_u32(2)).expect("an expression");
    assert_eq!(se.display(iv, &f), "{0,+,1}<nsw><%block1>");
    let e = se.exit_value(iv, l).expect("exit value");
    assert_eq!(se.display(e, &f), "(0 smax %v0)");
    // One `smax` to compute it; a recurrence cannot be computed outside its loop.
    assert_eq!(se.expansion_cost(e), Some(1));
    assert_eq!(se.expansion_cost(iv), None);
    let four = se.constant(32, 4);
    let q = se.udiv(e, four);
    assert_eq!(
        se.expansion_cost(q),
        Some(1 + gyre_analysis::scev::UDIV_COST)
    );
}
