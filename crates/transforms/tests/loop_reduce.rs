//! Property test of `loop-reduce` on generated kernels whose loops address arrays the
//! way kernels do: `a[c + ci*i + cj*j + cs*s]` through `sext`/`ptradd` chains, with
//! `imul`/`shl`/`iadd`/`isub` index arithmetic (usually `nsw`, or `nuw` under a `zext`,
//! sometimes neither, so that indices that may wrap are generated too), `i32` or `i64`
//! indices, loads, stores and
//! atomics, one or two loops deep, some accesses under a condition.
//!
//! Each kernel runs through one of several pipelines ending in `loop-reduce` (alone,
//! after `loop-rotate`, after `loop-rotate,indvars`, after `-O`) under `--verify-each`
//! (the verifier, loop-simplify and LCSSA form on every loop, preserved analyses equal
//! to fresh ones), and the interpreter must show the same memory afterwards on random
//! inputs. The totals must show the pass at work (pointer IVs made, constant offsets
//! shared) and declining (loops left alone). `separate-const-offset`, which runs before
//! `loop-reduce` after `-O`, is checked the same way on kernels whose accesses often
//! differ only by a constant.

mod common;

use gyre_interp::{assert_same_behaviour, random_inputs_for_shape};
use gyre_ir::generate::{
    generate_kernel_module, GenOptions, KernelContract, ParamContract, RandomSource, SplitMix64,
};
use gyre_ir::{EntityRef, FuncId, Module, Type};
use gyre_transforms::{Knobs, Options, PassManager, Report};

/// Elements of each array (every generated index stays below).
const LEN: u32 = 256;

const PIPELINES: [&str; 4] = [
    "loop(loop-reduce)",
    "loop-simplify,lcssa,loop(loop-rotate,loop-reduce)",
    "loop-simplify,lcssa,loop(loop-rotate,indvars),loop(loop-reduce)",
    "default<O2>,loop(loop-reduce)",
];

/// Builds the kernel text: values are numbered from `next`.
struct Gen<'r> {
    rng: &'r mut SplitMix64,
    text: String,
    next: u32,
    /// The no-wrap flag of the current access's index arithmetic (`nsw` for a `sext`ed
    /// index, `nuw` for a `zext`ed one).
    nw: &'static str,
    /// Give an access the previous one's terms (a new constant) half of the time, so
    /// that indices differ by constants in straight-line code too.
    reuse: bool,
    last_terms: Vec<(String, i64)>,
}

impl Gen<'_> {
    fn below(&mut self, n: u64) -> u64 {
        self.rng.below(n)
    }
    fn val(&mut self) -> String {
        self.next += 1;
        format!("v{}", self.next)
    }
    fn line(&mut self, s: &str) {
        self.text.push_str("    ");
        self.text.push_str(s);
        self.text.push('\n');
    }
    fn iconst(&mut self, ty: &str, c: i64) -> String {
        let v = self.val();
        self.line(&format!("{v} = iconst.{ty} {c}"));
        v
    }
    /// `nsw` most of the time.
    fn flag(&mut self) -> &'static str {
        if self.below(6) == 0 {
            ""
        } else {
            self.nw
        }
    }
    /// `k * x` for a counter `x` (i32), as `imul` or `shl` when `k` is a power of two.
    fn scaled(&mut self, x: &str, k: i64) -> String {
        if k == 1 {
            return x.to_string();
        }
        let f = self.flag();
        let v = self.val();
        if k.count_ones() == 1 && self.below(2) == 0 {
            let c = self.iconst("i32", i64::from(k.trailing_zeros()));
            self.line(&format!("{v} = shl{f} {x}, {c}"));
        } else {
            let c = self.iconst("i32", k);
            self.line(&format!("{v} = imul{f} {x}, {c}"));
        }
        v
    }
    /// One access in the current block: `arr[c + ci*i + cj*j + cs*s]` (every part
    /// non-negative and in bounds for the clamped counters), accumulating into `acc`;
    /// returns the new accumulator.
    fn access(&mut self, arrs: &[String; 2], ctrs: &[String], s: &str, acc: &str) -> String {
        let arr = arrs[self.below(2) as usize].clone();
        // Counters run below 6, `s` below 4.
        let mut terms: Vec<(String, i64)> = Vec::new();
        for x in ctrs {
            let k = [0, 1, 1, 2, 3, 4, 8][self.below(7) as usize];
            if k > 0 {
                terms.push((x.clone(), k));
            }
        }
        let ks = self.below(3) as i64;
        if ks > 0 {
            terms.push((s.to_string(), ks));
        }
        if self.reuse {
            if !self.last_terms.is_empty() && self.below(2) == 0 {
                terms = self.last_terms.clone();
            }
            self.last_terms = terms.clone();
        }
        let c = self.below(24) as i64;
        let wide = self.below(3) == 0;
        let ext = if self.below(3) == 0 { "zext" } else { "sext" };
        self.nw = if ext == "zext" { " nuw" } else { " nsw" };
        let idx = if wide {
            // i64 arithmetic on extended parts.
            let mut acc64 = self.iconst("i64", c);
            for (x, k) in terms {
                let e = self.val();
                self.line(&format!("{e} = sext.i64 {x}"));
                let kc = self.iconst("i64", k);
                let m = self.val();
                self.line(&format!("{m} = imul {e}, {kc}"));
                let a = self.val();
                self.line(&format!("{a} = iadd {acc64}, {m}"));
                acc64 = a;
            }
            acc64
        } else {
            let mut acc32 = self.iconst("i32", c);
            for (x, k) in terms {
                let m = self.scaled(&x, k);
                let f = self.flag();
                let a = self.val();
                self.line(&format!("{a} = iadd{f} {acc32}, {m}"));
                acc32 = a;
            }
            if ext == "zext" || self.below(2) == 0 {
                // Extended explicitly (else `ptradd` sign-extends the i32 index itself).
                let e = self.val();
                self.line(&format!("{e} = {ext}.i64 {acc32}"));
                e
            } else {
                acc32
            }
        };
        let p = self.val();
        self.line(&format!("{p} = ptradd {arr}, {idx}, 4"));
        match self.below(4) {
            0 => {
                self.line(&format!("store {acc}, {p}"));
                acc.to_string()
            }
            1 => {
                let r = self.val();
                self.line(&format!("{r} = atomic_add {p}, {acc}"));
                let a = self.val();
                self.line(&format!("{a} = iadd {acc}, {r}"));
                a
            }
            _ => {
                let r = self.val();
                self.line(&format!("{r} = load.i32 {p}"));
                let a = self.val();
                self.line(&format!("{a} = xor {acc}, {r}"));
                a
            }
        }
    }
}

/// A kernel `@k(ptr a, ptr b, i32 n, i32 m, i32 s)`: a loop nest over `i < min(n, 6)`
/// (and `j < min(m, 6)`) whose body makes 1-5 accesses.
fn generate(rng: &mut SplitMix64, reuse: bool) -> String {
    let mut g = Gen {
        rng,
        text: String::new(),
        next: 100,
        nw: " nsw",
        reuse,
        last_terms: Vec::new(),
    };
    let depth = 1 + g.below(2) as usize;
    g.text.push_str("kernel @k(ptr, ptr, i32, i32, i32) {\n");
    g.text
        .push_str("block0(v1: ptr, v2: ptr, v3: i32, v4: i32, v5: i32):\n");
    let zero = g.iconst("i32", 0);
    let one = g.iconst("i32", 1);
    let (six, three) = (g.iconst("i32", 6), g.iconst("i32", 3));
    let mut bounds = Vec::new();
    for p in ["v3", "v4"] {
        let a = g.val();
        g.line(&format!("{a} = smin {p}, {six}"));
        bounds.push(a);
    }
    let s1 = g.val();
    g.line(&format!("{s1} = smin v5, {three}"));
    let s = g.val();
    g.line(&format!("{s} = smax {s1}, {zero}"));
    let arrs = ["v1".to_string(), "v2".to_string()];
    // Blocks: per level a header H(ctr, acc), a body, a latch; the exit returns.
    // Level 0: block1 header, block2 body, ...; the nest is written outside in.
    let mut ctrs: Vec<String> = Vec::new();
    let mut accs: Vec<String> = Vec::new();
    let mut acc: String;
    let hdr = |d: usize| 10 * (d + 1);
    g.line(&format!("jump block{}({zero}, {zero})", hdr(0)));
    for d in 0..depth {
        let (h, body) = (hdr(d), hdr(d) + 1);
        let (k, a) = (g.val(), g.val());
        g.text.push_str(&format!("block{h}({k}: i32, {a}: i32):\n"));
        let c = g.val();
        g.line(&format!("{c} = icmp slt {k}, {}", bounds[d]));
        let exit = if d == 0 {
            "block1".to_string()
        } else {
            format!("block{}({a})", hdr(d - 1) + 2)
        };
        g.line(&format!("brif {c}, block{body}, {exit}"));
        g.text.push_str(&format!("block{body}:\n"));
        ctrs.push(k);
        accs.push(a.clone());
        acc = a;
        // Accesses of this level before the inner loop.
        let n = g.below(if d + 1 == depth { 5 } else { 2 }) + 1;
        for _ in 0..n {
            acc = g.access(&arrs, &ctrs, &s, &acc);
        }
        if g.below(3) == 0 {
            // One access under a condition (odd iterations).
            let (t0, t) = (g.val(), g.val());
            g.line(&format!("{t0} = and {}, {one}", ctrs[d]));
            g.line(&format!("{t} = icmp ne {t0}, {zero}"));
            let (then, join) = (hdr(d) + 5, hdr(d) + 6);
            g.line(&format!("brif {t}, block{then}, block{join}({acc})"));
            g.text.push_str(&format!("block{then}:\n"));
            let a2 = g.access(&arrs, &ctrs, &s, &acc);
            g.line(&format!("jump block{join}({a2})"));
            let j = g.val();
            g.text.push_str(&format!("block{join}({j}: i32):\n"));
            acc = j;
        }
        if d + 1 < depth {
            g.line(&format!("jump block{}({zero}, {acc})", hdr(d + 1)));
        } else {
            g.line(&format!("jump block{}({acc})", hdr(d) + 2));
        }
    }
    // Latches, inside out: each increments its counter and returns to its header.
    for d in (0..depth).rev() {
        let a = g.val();
        g.text
            .push_str(&format!("block{}({a}: i32):\n", hdr(d) + 2));
        g.nw = " nsw";
        let f = g.flag();
        let k2 = g.val();
        g.line(&format!("{k2} = iadd{f} {}, {one}", ctrs[d]));
        g.line(&format!("jump block{}({k2}, {a})", hdr(d)));
    }
    // The exit of level 0 is dominated by its header: the final store writes the
    // accumulator the header holds.
    g.text.push_str(&format!(
        "block1:\n    store {}, v2\n    return\n}}\n",
        accs[0]
    ));
    g.text
}

#[derive(Default, Debug)]
struct Totals {
    cases: u64,
    ivs: u64,
    rewritten: u64,
    not_profitable: u64,
    shared: u64,
    /// Accesses `separate-const-offset` moved onto an anchor.
    separated: u64,
}

fn run(pipeline: &str, m: &mut Module) -> Result<Report, String> {
    let options = Options {
        verify_each: true,
        ..Options::default()
    };
    let mut pm = PassManager::from_pipeline(pipeline, Knobs::default(), options)?;
    pm.run_module(m).map_err(|e| e.to_string())
}

/// Pipelines with `separate-const-offset`: alone, before `loop-reduce` (as
/// `CODEGEN_LOOP_PIPELINE` runs it), after the loop passes.
const SEPARATE_PIPELINES: [&str; 4] = [
    "separate-const-offset",
    "separate-const-offset,loop(loop-reduce)",
    "loop-simplify,lcssa,loop(loop-rotate,indvars),separate-const-offset,loop(loop-reduce)",
    "default<O2>,separate-const-offset,loop(loop-reduce)",
];

fn check(seed: u64, totals: &mut Totals, separate: bool) -> Result<(), String> {
    let mut rng = SplitMix64::new(seed);
    let text = generate(&mut rng, separate);
    let m = gyre_ir::parse_module(&text).map_err(|e| format!("{e}\n{text}"))?;
    gyre_ir::verifier::verify_module(&m).map_err(|e| format!("{e}\n{text}"))?;
    let pipelines: &[&str] = if separate {
        &SEPARATE_PIPELINES
    } else {
        &PIPELINES
    };
    let pipeline = pipelines[rng.below(pipelines.len() as u64) as usize];
    let mut after = m.clone();
    let r = run(pipeline, &mut after).map_err(|e| format!("{pipeline}: {e}\n{text}"))?;
    let get = |c: &str| r.stats.get("loop-reduce", c);
    totals.ivs += get("NumIVs");
    totals.rewritten += get("NumRewritten");
    totals.not_profitable += get("NumNotProfitable");
    totals.shared += get("NumRewritten").saturating_sub(get("NumIVs"));
    totals.separated += r.stats.get("separate-const-offset", "NumRewritten");
    let contract = KernelContract {
        kernel: FuncId::new(0),
        params: vec![
            ParamContract::Input {
                elem: Type::I32,
                len: LEN,
            },
            ParamContract::Input {
                elem: Type::I32,
                len: LEN,
            },
            ParamContract::Scalar { ty: Type::I32 },
            ParamContract::Scalar { ty: Type::I32 },
            ParamContract::Scalar { ty: Type::I32 },
        ],
        out_per_thread: 0,
        max_cta_threads: 1,
        ub_free: true,
    };
    for k in 0..4 {
        // One thread: the accesses of several would race.
        let mut irng = SplitMix64::new(seed.wrapping_mul(31).wrapping_add(k));
        let mut inputs = random_inputs_for_shape(&contract, 1, 1, &mut irng);
        // Small trip counts most of the time, the clamps' extremes sometimes.
        for (i, a) in inputs.launch.args.iter_mut().enumerate().skip(2) {
            if irng.below(4) != 0 {
                *a = gyre_interp::Arg::Int(irng.below(8) + i as u64 % 2);
            }
        }
        assert_same_behaviour(&m, &after, "k", &inputs).map_err(|d| {
            format!(
                "{pipeline}: behaviour differs (inputs {k}): {d}\n{text}\nafter:\n{}",
                {
                    let mut t = String::new();
                    let _ = gyre_ir::write::write_module(&mut t, &after);
                    t
                }
            )
        })?;
    }
    totals.cases += 1;
    Ok(())
}

#[test]
fn loop_reduce_on_generated_kernels() {
    let n = common::cases(400);
    let mut totals = Totals::default();
    let mut failures = Vec::new();
    for seed in 0..n {
        if let Err(e) = check(seed, &mut totals, false) {
            failures.push(format!("seed {seed}: {e}"));
            if failures.len() >= 3 {
                break;
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    println!("loop-reduce on generated kernels: {totals:?}");
    assert!(
        totals.ivs > n / 2 && totals.shared > n / 40 && totals.not_profitable > n / 40,
        "the generator must exercise loop-reduce: {totals:?}"
    );
}

/// `separate-const-offset` (before `loop-reduce`, or alone) on the same kernels, whose
/// accesses often share their index terms with the previous one: the same memory
/// afterwards, and accesses moved onto a dominating anchor.
#[test]
fn separate_const_offset_on_generated_kernels() {
    let n = common::cases(400);
    let mut totals = Totals::default();
    let mut failures = Vec::new();
    for seed in 0..n {
        if let Err(e) = check(seed, &mut totals, true) {
            failures.push(format!("seed {seed}: {e}"));
            if failures.len() >= 3 {
                break;
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    println!("separate-const-offset on generated kernels: {totals:?}");
    assert!(
        totals.separated > n / 4 && totals.ivs > n / 4,
        "the generator must exercise separate-const-offset: {totals:?}"
    );
}

/// The project's generated UB-free kernels (nests, several exits, switches, irreducible
/// regions, barriers, calls) through `-O`'s loop passes and `loop-reduce`: behaviour and
/// loop forms are kept on shapes the affine generator above does not make. (Their
/// addresses are masked indices, never affine: no IV is made there, 0 of 400.)
#[test]
fn loop_reduce_on_generic_generated_kernels() {
    let per_profile = common::cases(100);
    // (kernels checked, pointer IVs made)
    let mut totals = (0u64, 0u64);
    common::sweep(
        &["default", "loopy", "reducible", "switchy"],
        per_profile,
        &mut totals,
        |opts: &GenOptions, seed: u64, totals: &mut (u64, u64)| {
            let (m, contract) = generate_kernel_module(opts, &mut SplitMix64::new(seed));
            let mut a = m.clone();
            let r = run(
                "loop-simplify,lcssa,loop(loop-rotate,indvars),separate-const-offset,loop(loop-reduce)",
                &mut a,
            )?;
            common::same_behaviour_on_random_inputs(&m, &a, &contract, seed, "")?;
            totals.0 += 1;
            totals.1 += r.stats.get("loop-reduce", "NumIVs");
            Ok(())
        },
    );
    assert_eq!(totals.0, 4 * per_profile);
}
