//! Soundness of the uniformity analysis against the interpreter, and its precision.
//!
//! Generated UB-free kernels are instrumented (tests/common/trace.rs) to log, per
//! thread, every block entry and every value definition of the kernel into a global
//! trace buffer, then run with CTAs of whole warps (32 or 64 threads) on random inputs.
//! A dynamic instance of a value is
//! keyed as in the analysis's model: the value, the iteration count of every loop
//! around its block (reset when the loop is entered from outside) and, for blocks
//! executed several times under one such vector (irreducible cycles), the occurrence
//! number. Threads of one warp that compute one instance of a value the analysis calls
//! uniform must agree on it; a uniform `brif`/`br_table` must send them to one block.
//!
//! The interpreter runs threads one at a time, not in lockstep; the generator's
//! UB-free contract (no races, barriers only at top level) makes that equivalent.
//! Device functions are analysed but not traced (their instances would need call-site
//! keys); their results reach the kernel as call results, which are divergent sources.
//!
//! Precision: `cargo test -p gyre-analysis --test uniformity_soundness -- --nocapture`
//! prints how many values marked divergent were seen by at least two threads of a warp
//! in one instance and never differed (false divergence).

mod common;

use common::trace::{self, Claims, Observed, TraceError};
use gyre_analysis::{Cfg, DomTree, LoopInfo, PostDomTree, Uniformity};
use gyre_interp::{run_kernel, Arg, Launch, Memory};
use gyre_ir::generate::{generate_from_seed, GenOptions, ParamContract, RandomSource, SplitMix64};
use gyre_ir::{EntityRef, Function, Type, Value, ValueDef};
use rustc_hash::FxHashMap;

/// Events logged per thread before the trace saturates (the kernel is then skipped).
const CAP: u64 = 3000;

#[derive(Default)]
struct Stats {
    kernels: u64,
    skipped: u64,
    instances_checked: u64,
    branches_checked: u64,
    divergent_observed: u64,
    false_divergent: u64,
    uniform_values: u64,
    divergent_values: u64,
    /// Divergent only through sync or temporal divergence (no source, no divergent
    /// operand or argument): the part of the figure the analysis itself decides.
    control_observed: u64,
    control_false: u64,
    /// Observed divergent values by defining opcode (or "param"): [observed, false].
    by_kind: FxHashMap<&'static str, [u64; 2]>,
}

/// Is `v` divergent without being a source or having a divergent operand/argument?
fn control_only(f: &Function, u: &Uniformity, v: Value) -> bool {
    match f.dfg.value_def(v) {
        ValueDef::Result(i) => {
            gyre_analysis::source_kind(f, i) != gyre_analysis::SourceKind::Divergent
                && f.dfg.inst_args(i).iter().all(|&a| u.is_uniform(a))
        }
        ValueDef::Param(b, k) => {
            if f.entry_block() == Some(b) {
                return false;
            }
            let mut all_uniform = true;
            for p in f.layout.blocks() {
                if let Some(t) = f.terminator(p) {
                    f.dfg.for_each_dest(t, |bc| {
                        if bc.block == b {
                            if let Some(&a) = f.dfg.block_call_args(bc).get(k as usize) {
                                all_uniform &= u.is_uniform(a);
                            }
                        }
                    });
                }
            }
            all_uniform
        }
        ValueDef::Detached => false,
    }
}

/// Run one generated kernel; `Err` is a soundness violation.
fn check_seed(opts: &GenOptions, seed: u64, stats: &mut Stats) -> Result<(), String> {
    let (m, contract) = generate_from_seed(opts, seed);
    let kid = contract.kernel;
    let f = &m.functions[kid];
    let cfg = Cfg::with_function(f).map_err(|e| e.to_string())?;
    let dt = DomTree::with_function(f, &cfg);
    let pdt = PostDomTree::with_function(f, &cfg);
    let li = LoopInfo::with_function(f, &cfg, &dt);
    let u = Uniformity::with_function(f, &cfg, &dt, &pdt, &li);

    let mut rng = SplitMix64::new(seed ^ 0x0123_4567_89ab_cdef);
    let ntid: u32 = if contract.max_cta_threads >= 64 && rng.below(2) == 0 {
        64
    } else {
        32
    };
    assert!(contract.max_cta_threads >= 32, "a full warp per CTA");
    let nctaid = 1 + rng.below(2) as u32;
    let threads = u64::from(ntid * nctaid);
    let mut mem = Memory::new();
    let mut args = Vec::new();
    for (i, p) in contract.params.iter().enumerate() {
        let name = format!("p{i}");
        let (elem, len) = match *p {
            ParamContract::Output { elem, per_thread } => (elem, threads * u64::from(per_thread)),
            ParamContract::Input { elem, len } => (elem, u64::from(len)),
            ParamContract::Scalar { ty } => {
                args.push(match ty {
                    Type::F32 => Arg::F32((rng.below(2000) as f32 - 1000.0) / 16.0),
                    Type::F64 => Arg::F64((rng.below(2000) as f64 - 1000.0) / 16.0),
                    _ => Arg::Int(rng.below(40)),
                });
                continue;
            }
        };
        let bytes: Vec<u8> = (0..len * u64::from(elem.bytes()))
            .map(|_| {
                // Small integers (and the bytes of small floats' high halves) keep
                // loop bounds and indices interesting.
                if rng.below(4) == 0 {
                    rng.next_u64() as u8
                } else {
                    rng.below(8) as u8
                }
            })
            .collect();
        mem.alloc_buffer(&name, bytes);
        args.push(Arg::Buffer(name, 0));
    }
    let im = trace::instrument(&m, kid, threads, CAP);
    let mut launch = Launch::linear(nctaid, ntid, args);
    launch.config.detect_races = false;
    if let Err(e) = run_kernel(&im, &f.name, &launch, &mut mem) {
        // The instrumented kernel runs what the original would: an error here is the
        // generator's or the interpreter's business, not this analysis's.
        stats.skipped += 1;
        if std::env::var("GYRE_UNI_DEBUG").is_ok() {
            eprintln!("seed {seed}: {e}");
        }
        return Ok(());
    }
    let words: Vec<u64> = mem
        .read::<u64>(trace::TRACE_GLOBAL)
        .expect("the trace buffer exists");
    let poison = mem
        .poison(trace::TRACE_GLOBAL)
        .expect("the trace buffer exists");
    let claims = Claims::of(f, &u);
    let mut obs = Observed::new(f);
    let checked = trace::check_trace(
        f,
        &li,
        &claims,
        &words,
        poison,
        threads,
        u64::from(ntid),
        CAP,
        &mut obs,
    );
    match checked {
        Ok(()) => {}
        Err(TraceError::Saturated { .. }) => {
            stats.skipped += 1;
            return Ok(());
        }
        Err(TraceError::Unsound(msg)) => return Err(format!("seed {seed}: {msg}")),
    }
    stats.instances_checked += obs.instances;
    stats.branches_checked += obs.branches;
    let (shared, differed) = (obs.shared, obs.differed);
    stats.kernels += 1;
    for v in f.dfg.values() {
        if matches!(f.dfg.value_def(v), ValueDef::Detached) {
            continue;
        }
        if u.is_divergent(v) {
            stats.divergent_values += 1;
            if shared[v.index()] {
                stats.divergent_observed += 1;
                stats.false_divergent += u64::from(!differed[v.index()]);
                let kind = match f.dfg.value_def(v) {
                    ValueDef::Result(i) => f.dfg.inst(i).opcode().name(),
                    _ => "param",
                };
                let e = stats.by_kind.entry(kind).or_default();
                e[0] += 1;
                e[1] += u64::from(!differed[v.index()]);
                if control_only(f, &u, v) {
                    stats.control_observed += 1;
                    stats.control_false += u64::from(!differed[v.index()]);
                }
            }
        } else {
            stats.uniform_values += 1;
        }
    }
    Ok(())
}

fn run(opts: &GenOptions, seeds: std::ops::Range<u64>, label: &str) -> Stats {
    let mut stats = Stats::default();
    for seed in seeds {
        if let Err(e) = check_seed(opts, seed, &mut stats) {
            let (m, _) = generate_from_seed(opts, seed);
            panic!("{e}\n{m:?}");
        }
    }
    println!(
        "{label}: {} kernels run ({} skipped), {} value instances and {} branches compared; \
         values: {} uniform, {} divergent, of which {} observed in a warp and {} never differed \
         (false divergence {:.1}% of observed); divergent by control only: {} observed, \
         {} never differed ({:.1}%)",
        stats.kernels,
        stats.skipped,
        stats.instances_checked,
        stats.branches_checked,
        stats.uniform_values,
        stats.divergent_values,
        stats.divergent_observed,
        stats.false_divergent,
        100.0 * stats.false_divergent as f64 / stats.divergent_observed.max(1) as f64,
        stats.control_observed,
        stats.control_false,
        100.0 * stats.control_false as f64 / stats.control_observed.max(1) as f64
    );
    // Sorted, so the output does not depend on hash order.
    let mut kinds: Vec<(&str, [u64; 2])> = stats.by_kind.iter().map(|(k, c)| (*k, *c)).collect();
    kinds.sort_by(|a, b| b.1[1].cmp(&a.1[1]).then(a.0.cmp(b.0)));
    let top: Vec<String> = kinds
        .iter()
        .take(10)
        .map(|(k, [obs, fls])| format!("{k} {fls}/{obs}"))
        .collect();
    println!(
        "{label}: false/observed divergent by definition: {}",
        top.join(", ")
    );
    stats
}

#[test]
fn uniform_values_agree_across_warps() {
    let opts = GenOptions {
        max_cta_threads: 64,
        ..GenOptions::default()
    };
    let stats = run(&opts, 0..1000, "default options");
    assert!(stats.kernels > 800, "too many kernels skipped");
    assert!(stats.instances_checked > 100_000);
}

#[test]
fn uniform_values_agree_without_memory_or_calls() {
    // Fewer divergence sources: more uniform values and branches put to the test.
    let opts = GenOptions {
        max_cta_threads: 64,
        allow_memory: false,
        allow_calls: false,
        max_trip_count: 6,
        ..GenOptions::default()
    };
    let stats = run(&opts, 10_000..10_700, "no memory, no calls");
    assert!(stats.kernels > 500, "too many kernels skipped");
}
