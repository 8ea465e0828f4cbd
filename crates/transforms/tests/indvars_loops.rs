//! `indvars` against the interpreter on random counted loops built to exercise every
//! rewrite the generated kernels rarely reach: a recurrence compared by every predicate
//! (signed and unsigned, up and down, steps of 1 to 3, bounds constant or a kernel
//! argument), a duplicate counter (congruent IVs), sign- or zero-extended indices
//! (widening), comparisons against constants inside the body (range folding), a second
//! exit (exit predication, when the body only loads), values used after the loop (exit
//! values), with and without `nsw`, rotated by `-O`'s `loop-rotate` or left top-tested.
//!
//! Each loop writes its body's values to memory (through a masked index) and its exit
//! values after the loop; the original and the result of
//! `loop-simplify,lcssa,loop([loop-rotate,]indvars)` (every knob random, `verify-indvars`
//! and `--verify-each` on) must leave the same memory for several arguments. Runs the
//! original cannot finish (the step limit, an overflow under `nsw`) are skipped.

use gyre_interp::{run_kernel, Arg, Launch, Memory};
use gyre_ir::generate::{RandomSource, SplitMix64};
use gyre_transforms::knobs::apply_setting;
use gyre_transforms::{Knobs, Options, PassManager};

const PREDS: &[&str] = &[
    "eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge",
];

/// One random loop kernel `@k(ptr.global out, i32 n, i32 m)`.
fn source(r: &mut SplitMix64) -> String {
    let pred = PREDS[r.below(PREDS.len() as u64) as usize];
    let start = r.below(21) as i64 - 10;
    let step = [1i64, -1, 2, -2, 3][r.below(5) as usize];
    let bound = if r.below(2) == 0 {
        "v1".to_string()
    } else {
        "v20".to_string()
    };
    let kbound = r.below(41) as i64 - 20;
    let nsw = if r.below(2) == 0 { " nsw" } else { "" };
    let ext = if r.below(2) == 0 { "sext" } else { "zext" };
    let kcmp = r.below(41) as i64 - 20;
    let cmp2 = PREDS[r.below(PREDS.len() as u64) as usize];
    let exit2 = r.below(41) as i64 - 20;
    let dup_step = if r.below(2) == 0 { step } else { 1 };
    let exit_on_true = r.below(2) == 0;
    // A read-only loop (a load instead of the store) can have its exits predicated.
    let body = if r.below(3) == 0 {
        "v39 = load.i32 v32"
    } else {
        "store v36, v32"
    };
    let (t, e) = if exit_on_true {
        ("block9(v3, v4, v5)", "block2")
    } else {
        ("block2", "block9(v3, v4, v5)")
    };
    format!(
        "kernel @k(ptr.global, i32, i32) {{
block0(v0: ptr.global, v1: i32, v2: i32):
    v10 = iconst.i32 {start}
    v20 = iconst.i32 {kbound}
    v21 = iconst.i64 63
    v22 = iconst.i32 0
    jump block1(v10, v10, v22)
block1(v3: i32, v4: i32, v5: i32):
    v6 = icmp {pred} v3, {bound}
    brif v6, {t}, {e}
block2:
    v30 = {ext}.i64 v3
    v31 = and v30, v21
    v32 = ptradd v0, v31, 4
    v33 = iconst.i32 {kcmp}
    v34 = icmp {cmp2} v3, v33
    v35 = zext.i32 v34
    v36 = iadd v35, v4
    {body}
    v37 = iconst.i32 {exit2}
    v38 = icmp eq v3, v37
    brif v38, block9(v4, v3, v2), block3
block3:
    v40 = iconst.i32 {step}
    v41 = iadd{nsw} v3, v40
    v42 = iconst.i32 {dup_step}
    v43 = iadd v4, v42
    v44 = iconst.i32 1
    v45 = iadd v5, v44
    jump block1(v41, v43, v45)
block9(v50: i32, v51: i32, v52: i32):
    v53 = iconst.i64 64
    v54 = ptradd v0, v53, 4
    store v50, v54
    v55 = iconst.i64 65
    v56 = ptradd v0, v55, 4
    store v51, v56
    v57 = iconst.i64 66
    v58 = ptradd v0, v57, 4
    store v52, v58
    return
}}
"
    )
}

fn run(m: &gyre_ir::Module, n: i64, mm: i64) -> Option<Vec<u32>> {
    let mut mem = Memory::new();
    mem.alloc_zeroed("out", 4 * 72);
    let (n, mm) = (n as u32 as u64, mm as u32 as u64);
    let mut launch = Launch::linear(1, 1, vec![Arg::buffer("out"), Arg::Int(n), Arg::Int(mm)]);
    launch.config.step_limit = 20_000;
    run_kernel(m, "k", &launch, &mut mem).ok()?;
    mem.read("out")
}

#[test]
fn indvars_on_random_counted_loops() {
    let cases: u64 = std::env::var("GYRE_PROP_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(600);
    let mut r = SplitMix64::new(0x1d5_100b);
    let mut totals = [0u64; 8];
    let names = [
        "NumReplaced",
        "NumLFTR",
        "NumWidened",
        "NumFoldedCompares",
        "NumPredicatedExits",
        "NumCongruentIVs",
        "NumDeadIVs",
        "NumExitValuesTooExpensive",
    ];
    let mut compared = 0u64;
    for case in 0..cases {
        let src = source(&mut r);
        let m = gyre_ir::parse_module(&src).unwrap_or_else(|e| panic!("{e:?}\n{src}"));
        gyre_ir::verifier::verify_module(&m).unwrap_or_else(|e| panic!("{e:?}\n{src}"));
        let mut knobs = Knobs::default();
        let mut set = |s: String| apply_setting(&mut knobs, &s).expect("knob");
        set(format!(
            "replexitval={}",
            ["never", "cheap", "always"][r.below(3) as usize]
        ));
        for k in [
            "disable-lftr",
            "indvars-widen-indvars",
            "indvars-post-increment-ranges",
            "indvars-predicate-loops",
        ] {
            set(format!("{k}={}", r.below(4) == 0));
        }
        set("verify-indvars=true".into());
        let pipeline = if r.below(4) == 0 {
            "loop-simplify,lcssa,loop(indvars)"
        } else {
            "loop-simplify,lcssa,loop(loop-rotate,indvars)"
        };
        let mut a = m.clone();
        let options = Options {
            verify_each: true,
            ..Options::default()
        };
        let mut pm = PassManager::from_pipeline(pipeline, knobs, options).expect("pipeline");
        let rep = pm
            .run_module(&mut a)
            .unwrap_or_else(|e| panic!("case {case}: {e}\n{src}"));
        for (i, n) in names.iter().enumerate() {
            totals[i] += rep.stats.get("indvars", n);
        }
        for n in [-30i64, -3, 0, 1, 2, 5, 17, 40] {
            let mm = r.below(100) as i64 - 50;
            let Some(want) = run(&m, n, mm) else { continue };
            let got = run(&a, n, mm);
            let mut after = String::new();
            gyre_ir::write_module(&mut after, &a).expect("writing to a String");
            assert_eq!(
                got.as_ref(),
                Some(&want),
                "case {case}, n = {n}, m = {mm}\n{src}\nafter {pipeline}:\n{after}"
            );
            compared += 1;
        }
    }
    let summary: Vec<String> = names
        .iter()
        .zip(totals)
        .map(|(n, t)| format!("{n} {t}"))
        .collect();
    println!("{compared} runs compared; {}", summary.join(", "));
    for (i, n) in names.iter().enumerate().take(7) {
        assert!(
            totals[i] > 0,
            "no case exercised {n}: {}",
            summary.join(", ")
        );
    }
}
