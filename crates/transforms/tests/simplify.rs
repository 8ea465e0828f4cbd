//! Tests of `simplify` (the e-graph simplifier):
//! - every constant-fold rule against the interpreter's own evaluation, by brute force
//!   over operand values that include the edge cases (0, ±1, MIN, MAX, powers of two,
//!   NaN, ±0.0, ±inf, subnormals): a kernel computing `op(c1, c2)` and storing it must
//!   store the same bytes after the pass, and what the pass folds must be what the
//!   interpreter computes; what traps must not be folded;
//! - strength reduction by brute force over dividends and power-of-two divisors;
//! - property: on generated kernels (integer and float values, memory, barriers,
//!   divergent branches, loops, calls), under `--verify-each`, the interpreter shows the
//!   same behaviour before and after, alone and after the loop passes; and a second run
//!   changes nothing (idempotence).

mod common;

use gyre_interp::{assert_same_behaviour, random_inputs, run_kernel, Arg, Launch, Memory};
use gyre_ir::generate::{generate_kernel_module, RandomSource, SplitMix64};
use gyre_ir::{parse_module, write_module, FloatCC, IntCC, Module, Type};
use gyre_transforms::registry;
use gyre_transforms::{AnalysisCache, Knobs, Options, PassContext, PassManager, PassResult, Stats};

fn print(m: &Module) -> String {
    let mut s = String::new();
    write_module(&mut s, m).expect("writing to a String");
    s
}

fn apply(pipeline: &str, m: &mut Module) -> Result<Stats, String> {
    let options = Options {
        verify_each: true,
        ..Options::default()
    };
    let mut pm = PassManager::from_pipeline(pipeline, Knobs::default(), options)?;
    let report = pm.run_module(m).map_err(|e| e.to_string())?;
    Ok(report.stats)
}

/// Run `simplify` directly on every function: it must report no change.
fn expect_unchanged(m: &Module) -> Result<(), String> {
    let info = registry::lookup("simplify").expect("registered pass");
    let mut pass = (info.create_function.expect("function pass"))(&[])?;
    let knobs = Knobs::default();
    for f in m.functions.values() {
        let mut f = f.clone();
        let (mut cache, mut stats, mut remarks) =
            (AnalysisCache::new(), Stats::default(), Vec::new());
        let mut cx = PassContext {
            knobs: &knobs,
            analyses: &mut cache,
            stats: &mut stats,
            remarks: &mut remarks,
        };
        let res = pass.run(&mut f, &mut cx).map_err(|e| e.to_string())?;
        if res != PassResult::UNCHANGED {
            return Err(format!("a second simplify on @{} reported {res:?}", f.name));
        }
    }
    Ok(())
}

fn type_name(t: Type) -> &'static str {
    match t {
        Type::I1 => "i1",
        Type::I8 => "i8",
        Type::I16 => "i16",
        Type::I32 => "i32",
        Type::I64 => "i64",
        Type::F32 => "f32",
        Type::F64 => "f64",
        _ => unreachable!("only scalar types here"),
    }
}

/// A constant of `ty` as the text format writes it.
fn konst(ty: Type, bits: u64) -> String {
    match ty {
        Type::F32 => format!("fconst.f32 0x{:08x}", bits as u32),
        Type::F64 => format!("fconst.f64 0x{bits:016x}"),
        _ => {
            let w = ty.bits();
            let v = if w == 64 {
                bits as i64
            } else {
                ((bits << (64 - w)) as i64) >> (64 - w)
            };
            format!("iconst.{} {v}", type_name(ty))
        }
    }
}

/// Result of running `k`: Ok(bytes of `out`, `None` for a poison byte) or Err(error kind).
fn run(m: &Module) -> Result<Vec<Option<u8>>, String> {
    let mut mem = Memory::new();
    mem.alloc_zeroed("out", 8);
    let launch = Launch::linear(1, 1, vec![Arg::buffer("out")]);
    match run_kernel(m, "k", &launch, &mut mem) {
        Ok(_) => {
            let bytes = mem.bytes("out").expect("out buffer");
            let poison = mem.poison("out").expect("out buffer");
            Ok(bytes
                .iter()
                .zip(poison)
                .map(|(&b, &p)| (!p).then_some(b))
                .collect())
        }
        Err(e) => Err(format!("{:?}", e.kind())),
    }
}

/// Counts of what a brute-force check saw.
#[derive(Default, Debug)]
struct Seen {
    cases: u64,
    folded: u64,
    kept: u64,
}

/// `v = <op text using c0, c1, c2>` stored to `out`, before and after `simplify`.
fn check_one(ty: Type, op_text: &str, consts: &[(Type, u64)], seen: &mut Seen) {
    let mut src = String::from("kernel @k(ptr.global) {\nblock0(v0: ptr.global):\n");
    for (i, &(t, b)) in consts.iter().enumerate() {
        src.push_str(&format!("    v{} = {}\n", i + 1, konst(t, b)));
    }
    src.push_str(&format!("    v9 = {op_text}\n"));
    let stored = if ty == Type::I1 {
        src.push_str("    v10 = zext.i8 v9\n");
        "v10"
    } else {
        "v9"
    };
    src.push_str(&format!("    store {stored}, v0\n    return\n}}\n"));
    let before = parse_module(&src).unwrap_or_else(|e| panic!("{e}\n{src}"));
    let mut after = before.clone();
    apply("simplify", &mut after).unwrap_or_else(|e| panic!("{e}\n{src}"));
    let r0 = run(&before);
    let r1 = run(&after);
    let text = print(&after);
    let folded = !text.contains(op_text.split_whitespace().next().unwrap_or(""))
        || op_text.starts_with("select");
    match (&r0, &r1) {
        (Ok(a), Ok(b)) => {
            // Poison in the original may become any value; everything else is equal
            // (folds involving a NaN are refused, so NaN bytes are equal too).
            for (x, y) in a.iter().zip(b) {
                assert!(
                    x.is_none() || x == y,
                    "{a:?} vs {b:?}\n{src}\nafter:\n{text}"
                );
            }
        }
        (Err(a), Err(b)) => assert_eq!(a, b, "{src}\nafter:\n{text}"),
        _ => panic!("behaviour differs: {r0:?} vs {r1:?}\n{src}\nafter:\n{text}"),
    }
    if r0.is_err() {
        assert!(
            !folded,
            "an operation that traps was folded:\n{src}\n{text}"
        );
    }
    seen.cases += 1;
    if folded {
        seen.folded += 1;
    } else {
        seen.kept += 1;
    }
}

fn int_values(w: u32) -> Vec<u64> {
    let m = if w == 64 { u64::MAX } else { (1u64 << w) - 1 };
    let min = 1u64 << (w - 1);
    let mut v = vec![0, 1, 2, 3, 7, 8, m, m - 1, min, min - 1, min + 1, 5, m - 6];
    if w > 8 {
        v.extend([16, 255, 256, 0x1234_5678_9abc_def0 & m]);
    }
    v.iter_mut().for_each(|x| *x &= m);
    v.sort_unstable();
    v.dedup();
    v
}

fn f32_values() -> Vec<u64> {
    [
        0.0f32,
        -0.0,
        1.0,
        -1.0,
        0.1,
        2.5,
        -2.5,
        3.0,
        1e30,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::NAN,
        f32::MIN_POSITIVE / 4.0,
        16777217.0,
        -7.5,
    ]
    .iter()
    .map(|x| u64::from(x.to_bits()))
    .chain([0x7fc0_0001u64, 0xffc0_0000])
    .collect()
}

fn f64_values() -> Vec<u64> {
    [
        0.0f64,
        -0.0,
        1.0,
        -1.0,
        0.1,
        2.5,
        -2.5,
        1e300,
        f64::INFINITY,
        f64::NAN,
        f64::MIN_POSITIVE / 8.0,
        9007199254740993.0,
        -3.5,
    ]
    .iter()
    .map(|x| x.to_bits())
    .collect()
}

#[test]
fn integer_folds_match_the_interpreter() {
    let mut seen = Seen::default();
    let bin = [
        "iadd", "isub", "imul", "sdiv", "udiv", "srem", "urem", "and", "or", "xor", "shl", "lshr",
        "ashr", "smin", "smax", "umin", "umax",
    ];
    for ty in [Type::I8, Type::I32, Type::I64] {
        let vals = int_values(ty.bits());
        for op in bin {
            for &a in &vals {
                for &b in &vals {
                    check_one(ty, &format!("{op} v1, v2"), &[(ty, a), (ty, b)], &mut seen);
                }
            }
        }
        for op in ["popcnt", "clz", "ctz"] {
            for &a in &vals {
                check_one(ty, &format!("{op} v1"), &[(ty, a)], &mut seen);
            }
        }
        for &cc in IntCC::ALL {
            for &a in &vals {
                for &b in &vals {
                    check_one(
                        Type::I1,
                        &format!("icmp {cc} v1, v2"),
                        &[(ty, a), (ty, b)],
                        &mut seen,
                    );
                }
            }
        }
    }
    for op in ["mul24", "umul24"] {
        for &a in &int_values(32) {
            for &b in &int_values(32) {
                check_one(
                    Type::I32,
                    &format!("{op} v1, v2"),
                    &[(Type::I32, a), (Type::I32, b)],
                    &mut seen,
                );
            }
        }
    }
    println!("{seen:?}");
    assert!(seen.folded > 0 && seen.kept > 0, "{seen:?}");
}

#[test]
fn float_folds_match_the_interpreter() {
    let mut seen = Seen::default();
    for (ty, vals) in [(Type::F32, f32_values()), (Type::F64, f64_values())] {
        for op in ["fadd", "fsub", "fmul", "fdiv", "frem", "fmin", "fmax"] {
            for &a in &vals {
                for &b in &vals {
                    check_one(ty, &format!("{op} v1, v2"), &[(ty, a), (ty, b)], &mut seen);
                }
            }
        }
        for op in ["fneg", "fabs", "sqrt", "floor", "ceil", "ftrunc", "nearest"] {
            for &a in &vals {
                check_one(ty, &format!("{op} v1"), &[(ty, a)], &mut seen);
            }
        }
        for &a in &vals {
            for &b in &vals {
                check_one(ty, "fma v1, v2, v1", &[(ty, a), (ty, b)], &mut seen);
                for &cc in FloatCC::ALL {
                    check_one(
                        Type::I1,
                        &format!("fcmp {cc} v1, v2"),
                        &[(ty, a), (ty, b)],
                        &mut seen,
                    );
                }
            }
        }
    }
    println!("{seen:?}");
    assert!(seen.folded > 0 && seen.kept > 0, "{seen:?}");
}

#[test]
fn cast_folds_match_the_interpreter() {
    let mut seen = Seen::default();
    let ints = [Type::I8, Type::I32, Type::I64];
    for &from in &ints {
        for &a in &int_values(from.bits()) {
            for &to in &ints {
                let op = if to.bits() > from.bits() {
                    vec!["sext", "zext"]
                } else if to.bits() < from.bits() {
                    vec!["trunc"]
                } else {
                    vec![]
                };
                for o in op {
                    check_one(
                        to,
                        &format!("{o}.{} v1", type_name(to)),
                        &[(from, a)],
                        &mut seen,
                    );
                }
            }
            for to in [Type::F32, Type::F64] {
                for o in ["sitofp", "uitofp"] {
                    check_one(
                        to,
                        &format!("{o}.{} v1", type_name(to)),
                        &[(from, a)],
                        &mut seen,
                    );
                }
            }
        }
    }
    for (from, vals) in [(Type::F32, f32_values()), (Type::F64, f64_values())] {
        for &a in &vals {
            for &to in &ints {
                for o in ["fptosi", "fptoui"] {
                    // Out of range is poison, stored as poison bytes: compared loosely.
                    check_one(
                        to,
                        &format!("{o}.{} v1", type_name(to)),
                        &[(from, a)],
                        &mut seen,
                    );
                }
            }
            let (o, to) = if from == Type::F32 {
                ("fpext", Type::F64)
            } else {
                ("fptrunc", Type::F32)
            };
            check_one(
                to,
                &format!("{o}.{} v1", type_name(to)),
                &[(from, a)],
                &mut seen,
            );
        }
    }
    println!("{seen:?}");
    assert!(seen.folded > 0, "{seen:?}");
}

/// The rewritten divisions by powers of two against the interpreter, for every dividend
/// of `i8` and edge cases of `i32`.
#[test]
fn strength_reduction_matches_the_interpreter() {
    let mut seen = Seen::default();
    for ty in [Type::I8, Type::I32] {
        let w = ty.bits();
        let dividends: Vec<u64> = if w == 8 {
            (0..256).collect()
        } else {
            int_values(32)
        };
        for k in 1..w - 1 {
            for &a in &dividends {
                for op in ["sdiv", "srem", "udiv", "urem", "imul"] {
                    let src = format!(
                        "kernel @k(ptr.global, {t}) {{\nblock0(v0: ptr.global, v1: {t}):\n    v2 = iconst.{t} {c}\n    v3 = {op} v1, v2\n    store v3, v0\n    return\n}}\n",
                        t = type_name(ty),
                        c = 1u64 << k
                    );
                    let before = parse_module(&src).expect("parses");
                    let mut after = before.clone();
                    apply("simplify", &mut after).expect("simplify runs");
                    let text = print(&after);
                    assert!(!text.contains("div") && !text.contains("rem"), "{text}");
                    let arg = if w == 8 {
                        Arg::Int(a & 0xff)
                    } else {
                        Arg::Int(a & 0xffff_ffff)
                    };
                    let mut outs = Vec::new();
                    for m in [&before, &after] {
                        let mut mem = Memory::new();
                        mem.alloc_zeroed("out", 8);
                        let launch = Launch::linear(1, 1, vec![Arg::buffer("out"), arg.clone()]);
                        run_kernel(m, "k", &launch, &mut mem).expect("runs");
                        outs.push(mem.bytes("out").expect("out").to_vec());
                    }
                    assert_eq!(outs[0], outs[1], "{op} {a} by 2^{k}:\n{text}");
                    seen.cases += 1;
                }
            }
        }
    }
    println!("{seen:?}");
}

#[derive(Default, Debug)]
struct Totals {
    cases: u64,
    folded: u64,
    gvn: u64,
    hoisted: u64,
    dead: u64,
}

fn check_case(
    opts: &gyre_ir::generate::GenOptions,
    seed: u64,
    totals: &mut Totals,
) -> Result<(), String> {
    let (m, contract) = generate_kernel_module(opts, &mut SplitMix64::new(seed));
    let kernel = m.functions[contract.kernel].name.clone();
    for pipeline in ["simplify", "loop-simplify,lcssa,loop(loop-rotate),simplify"] {
        let mut a = m.clone();
        let s = apply(pipeline, &mut a)?;
        totals.folded += s.get("simplify", "NumFolded");
        totals.gvn += s.get("simplify", "NumGVN");
        totals.hoisted += s.get("simplify", "NumHoisted");
        totals.dead += s.get("simplify", "NumDeadRemoved");
        for k in 0..2 {
            let inputs = random_inputs(&contract, seed.wrapping_mul(31).wrapping_add(k));
            assert_same_behaviour(&m, &a, &kernel, &inputs)
                .map_err(|d| format!("{pipeline}: behaviour differs (inputs {k}): {d}"))?;
        }
        // Idempotence: a second run changes nothing and says so.
        expect_unchanged(&a)?;
        let mut b = a.clone();
        apply("simplify", &mut b)?;
        if print(&a) != print(&b) {
            return Err(format!("{pipeline}: a second simplify changed the module"));
        }
    }
    totals.cases += 1;
    Ok(())
}

#[test]
fn simplify_on_generated_kernels() {
    let per_profile = common::cases(150);
    let mut totals = Totals::default();
    common::sweep(
        &["default", "loopy", "reducible", "switchy"],
        per_profile,
        &mut totals,
        check_case,
    );
    assert!(
        totals.folded > 0 && totals.gvn > 0 && totals.hoisted > 0 && totals.dead > 0,
        "{totals:?}"
    );
}

#[test]
fn simplify_on_generated_kernels_with_warp_ops() {
    let opts = gyre_ir::generate::GenOptions {
        allow_warp_ops: true,
        ..Default::default()
    };
    let mut totals = Totals::default();
    let mut failures = Vec::new();
    for seed in 0..common::cases(60) {
        if let Err(e) = check_case(&opts, seed, &mut totals) {
            failures.push(format!("seed {seed}: {e}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Run `m` on 256 threads, thread `t` reading `inputs[t]` and writing one word: the words
/// written (`None` for poison).
fn run_threads(m: &Module, inputs: &[u32]) -> Vec<Option<u32>> {
    let mut mem = Memory::new();
    mem.alloc_from("in", inputs);
    mem.alloc_zeroed("out", 4 * inputs.len());
    let launch = Launch::linear(
        1,
        inputs.len() as u32,
        vec![Arg::buffer("out"), Arg::buffer("in")],
    );
    run_kernel(m, "k", &launch, &mut mem).expect("runs");
    let bytes = mem.bytes("out").expect("out");
    let poison = mem.poison("out").expect("out");
    (0..inputs.len())
        .map(|i| {
            let w = &bytes[4 * i..4 * i + 4];
            (!poison[4 * i..4 * i + 4].iter().any(|&p| p))
                .then(|| u32::from_le_bytes([w[0], w[1], w[2], w[3]]))
        })
        .collect()
}

/// The known- and demanded-bits rules (zext-trunc, shift-pair, or-of-masks,
/// and-known-zero, demanded-bits, trunc-narrow, icmp-mask-shift) against the interpreter:
/// each template, over shift amounts and masks including the edge cases, on 256 inputs
/// whose low byte takes every value (the `i8` forms see every input), must store the same
/// words after `simplify`; and the rules must fire (the `Identity` counter).
#[test]
fn known_bits_rules_match_the_interpreter() {
    let mut rng = SplitMix64::new(23);
    let inputs: Vec<u32> = (0..256u32)
        .map(|t| match t % 4 {
            0 => t,
            1 => t | 0xffff_ff00,
            _ => t | ((rng.next_u64() as u32) << 8),
        })
        .collect();
    // (width, shift amounts, masks)
    let widths: [(&str, u32); 2] = [("i8", 8), ("i32", 32)];
    let mut fired = 0u64;
    let mut cases = 0u64;
    for (t, w) in widths {
        let m = if w == 32 { u64::from(u32::MAX) } else { 0xff };
        let shifts: Vec<u32> = [0, 1, 3, 4, w / 2, w - 8, w - 1]
            .into_iter()
            .filter(|&k| k < w)
            .collect();
        let masks: Vec<u64> = [0, 1, 6, 0x30, 0xf0, 0x0f, 0xff, m - 1, m - 0xff, m >> 1, m]
            .into_iter()
            .map(|c| c & m)
            .collect();
        let x = if w == 32 { "v2" } else { "v3" };
        let mut bodies = Vec::new();
        for &k in &shifts {
            for &c in &masks {
                for &c2 in &[0x0f, 0xf0, m - 1, 0x30] {
                    let c2 = c2 & m;
                    bodies.push(format!(
                        "    v10 = iconst.{t} {k}\n    v11 = iconst.{t} {c}\n    v12 = iconst.{t} {c2}\n    v13 = iconst.{t} 0\n"
                    ));
                }
            }
        }
        let exprs = [
            // shift-pair
            "    v20 = lshr X, v10\n    v21 = shl v20, v10\n",
            "    v20 = shl X, v10\n    v21 = lshr v20, v10\n",
            // or-of-masks
            "    v20 = and X, v11\n    v22 = and X, v12\n    v21 = or v20, v22\n",
            // and-known-zero, demanded-bits on and
            "    v20 = lshr X, v10\n    v21 = and v20, v11\n",
            "    v20 = and X, v11\n    v22 = shl X, v10\n    v23 = or v22, v20\n    v21 = and v23, v11\n",
            // demanded-bits on lshr, shl, through or/xor/and
            "    v20 = and X, v11\n    v22 = or v20, v12\n    v23 = xor v22, v13\n    v21 = lshr v23, v10\n",
            "    v20 = lshr X, v10\n    v22 = and v20, v12\n    v23 = or X, v11\n    v24 = and v23, v12\n    v25 = or v24, v22\n    v21 = shl v25, v10\n",
            "    v20 = shl X, v10\n    v22 = and X, v11\n    v23 = xor v20, v22\n    v24 = and v23, v12\n    v21 = lshr v24, v10\n",
            // demanded-bits through zext(trunc y)
            "    v20 = trunc.i8 X\n    v22 = zext.T v20\n    v21 = shl v22, v10\n",
            // icmp-mask-shift
            "    v20 = lshr X, v10\n    v22 = and v20, v11\n    v23 = icmp eq v22, v13\n    v21 = select v23, v11, v12\n",
            "    v20 = shl X, v10\n    v22 = and v20, v11\n    v23 = icmp ne v22, v13\n    v21 = select v23, v11, v12\n",
            // ashr is not lshr: the bits shifted in copy the sign
            "    v20 = ashr X, v10\n    v21 = and v20, v11\n",
            // sext-trunc-shift (fires when X is i32 and k is 16 or 24)
            "    v20 = lshr X, v10\n    v22 = trunc.i16 v20\n    v23 = sext.i32 v22\n    v24 = trunc.i8 v20\n    v25 = sext.i32 v24\n    v26 = xor v23, v25\n    v21 = trunc.T v26\n",
            "    v20 = ashr X, v10\n    v22 = trunc.i16 v20\n    v23 = sext.i32 v22\n    v24 = trunc.i8 v20\n    v25 = sext.i32 v24\n    v26 = xor v23, v25\n    v21 = trunc.T v26\n",
        ];
        for body in &bodies {
            for e in exprs {
                if (e.contains("trunc.T") || e.contains("zext.T")) && w != 32 {
                    continue;
                }
                let e = e
                    .replace('X', x)
                    .replace("trunc.T v26", "iadd v26, v13")
                    .replace("zext.T", "zext.i32");
                let src = format!(
                    "kernel @k(ptr.global, ptr.global) {{\nblock0(v0: ptr.global, v1: ptr.global):\n    v4 = tid.x\n    v5 = ptradd v1, v4, 4\n    v2 = load.i32 v5\n    v3 = trunc.i8 v2\n{body}{e}    v30 = {ext}\n    v31 = ptradd v0, v4, 4\n    store v30, v31\n    return\n}}\n",
                    ext = if w == 32 { "iadd v21, v13".to_string() } else { "zext.i32 v21".to_string() },
                );
                let before = parse_module(&src).unwrap_or_else(|e| panic!("{e}\n{src}"));
                let mut after = before.clone();
                let stats = apply("simplify", &mut after).unwrap_or_else(|e| panic!("{e}\n{src}"));
                fired += stats.get("simplify", "NumIdentities");
                let (r0, r1) = (run_threads(&before, &inputs), run_threads(&after, &inputs));
                for (i, (a, b)) in r0.iter().zip(&r1).enumerate() {
                    assert!(
                        a.is_none() || a == b,
                        "input {:#x}: {a:?} vs {b:?}\n{src}\nafter:\n{}",
                        inputs[i],
                        print(&after)
                    );
                }
                cases += 1;
            }
        }
    }
    assert!(fired > cases, "{fired} rewrites in {cases} cases");
}

/// The `trunc-narrow` and `zext-trunc` rules across two widths, by brute force over every
/// `i8` value and some masks: `trunc.i8 ((ext.i32 y) op c)`, `trunc.i8 (c op (ext.i32 y))`
/// and `zext.i32 (trunc.i8 x)`.
#[test]
fn narrowing_rules_match_the_interpreter() {
    let inputs: Vec<u32> = (0..256u32)
        .map(|t| t | (t.wrapping_mul(0x9e37_79b9) << 8))
        .collect();
    let mut fired = 0u64;
    for op in ["and", "or", "xor", "iadd", "isub", "imul"] {
        for c in [
            0u32,
            1,
            3,
            32,
            0x7f,
            0x80,
            0xff,
            0x1ff,
            0xffff_ff00,
            u32::MAX,
        ] {
            for (ext, order) in [("zext", "v6, v7"), ("sext", "v6, v7"), ("sext", "v7, v6")] {
                let src = format!(
                    "kernel @k(ptr.global, ptr.global) {{\nblock0(v0: ptr.global, v1: ptr.global):\n    v4 = tid.x\n    v5 = ptradd v1, v4, 4\n    v2 = load.i32 v5\n    v3 = trunc.i8 v2\n    v6 = {ext}.i32 v3\n    v7 = iconst.i32 {c}\n    v8 = {op} {order}\n    v9 = trunc.i8 v8\n    v10 = zext.i32 v9\n    v11 = trunc.i8 v2\n    v12 = zext.i32 v11\n    v13 = iadd v10, v12\n    v31 = ptradd v0, v4, 4\n    store v13, v31\n    return\n}}\n",
                    c = c as i32
                );
                let before = parse_module(&src).unwrap_or_else(|e| panic!("{e}\n{src}"));
                let mut after = before.clone();
                let stats = apply("simplify", &mut after).unwrap_or_else(|e| panic!("{e}\n{src}"));
                fired += stats.get("simplify", "NumIdentities");
                assert_eq!(
                    run_threads(&before, &inputs),
                    run_threads(&after, &inputs),
                    "{src}\nafter:\n{}",
                    print(&after)
                );
            }
        }
    }
    assert!(fired > 0);
}
