//! Trip counts of scalar evolution on generated kernels, against traced executions.
//!
//! Generated UB-free kernels (nested loops, several latches and exits, switches,
//! irreducible regions, calls) are instrumented (tests/common/trace.rs: per thread, every
//! block entry and value definition of the kernel) and run on random inputs. For every
//! loop whose backedge-taken count SCEV knows, each visit of the loop by each thread —
//! entered from outside, left through an exit edge — is checked: the count, evaluated
//! with the values its unknowns held when the loop was entered, must equal the header
//! entries minus one, and the constant maximum must bound it. Visits that end in a
//! `return` inside the loop have no count to check. `cargo test -p gyre-analysis --test
//! scev_generated -- --nocapture` prints how many loops have a count.

mod common;

use common::trace;
use gyre_analysis::{Cfg, DomTree, Loop, LoopInfo, ScalarEvolution};
use gyre_interp::{run_kernel, Arg, Launch, Memory};
use gyre_ir::generate::{generate_from_seed, GenOptions, ParamContract, RandomSource, SplitMix64};
use gyre_ir::{Block, Type};
use rustc_hash::FxHashMap;

const CAP: u64 = 3000;
const TAG_BLOCK: u64 = 1 << 32;
const TAG_VALUE: u64 = 2 << 32;

#[derive(Default)]
struct Stats {
    kernels: u64,
    skipped: u64,
    loops: u64,
    counted: u64,
    visits: u64,
}

fn check_seed(opts: &GenOptions, seed: u64, stats: &mut Stats) -> Result<(), String> {
    let (m, contract) = generate_from_seed(opts, seed);
    let kid = contract.kernel;
    let f = &m.functions[kid];
    let cfg = Cfg::with_function(f).map_err(|e| e.to_string())?;
    let dt = DomTree::with_function(f, &cfg);
    let li = LoopInfo::with_function(f, &cfg, &dt);
    let mut se = ScalarEvolution::new();
    se.compute(f, &cfg, &dt, &li);
    // Every analysis output must print (no panic on any shape).
    let _ = gyre_analysis::print_scev(&mut se, &li, f);
    let counted: Vec<(Loop, gyre_analysis::Scev, Option<u64>)> = li
        .loops()
        .filter_map(|l| {
            se.backedge_taken_count(l)
                .map(|s| (l, s, se.max_backedge_taken_count(l)))
        })
        .collect();
    stats.loops += li.num_loops() as u64;
    stats.counted += counted.len() as u64;
    if counted.is_empty() {
        return Ok(());
    }

    let mut rng = SplitMix64::new(seed ^ 0x5ce7_5ce7);
    let ntid: u32 = 32;
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
    if run_kernel(&im, &f.name, &launch, &mut mem).is_err() {
        stats.skipped += 1;
        return Ok(());
    }
    stats.kernels += 1;
    let words: Vec<u64> = mem.read(trace::TRACE_GLOBAL).ok_or("no trace")?;
    let wpt = trace::words_per_thread(CAP);
    for gid in 0..threads {
        let w0 = (gid * wpt) as usize;
        let count = words[w0];
        if count > CAP {
            // Saturated: the trace is incomplete.
            continue;
        }
        let mut vals: FxHashMap<u32, u64> = FxHashMap::default();
        // Per counted loop: header entries in the current visit and the expected count.
        let mut visit: Vec<Option<(u64, Option<u64>)>> = vec![None; counted.len()];
        for e in 0..count as usize {
            let tag = words[w0 + 1 + 2 * e];
            let bits = words[w0 + 2 + 2 * e];
            let id = (tag & 0xffff_ffff) as u32;
            if tag & !0xffff_ffff == TAG_VALUE {
                vals.insert(id, bits);
                continue;
            }
            debug_assert_eq!(tag & !0xffff_ffff, TAG_BLOCK);
            let b = Block::from_u32(id);
            for (k, &(l, s, max)) in counted.iter().enumerate() {
                if let Some((entries, expected)) = visit[k] {
                    if !li.contains(l, b) {
                        // Left through an exit edge.
                        let taken = entries - 1;
                        stats.visits += 1;
                        if let Some(want) = expected {
                            if want != taken {
                                return Err(format!(
                                    "seed {seed}: loop at {} of @{}: SCEV says {} = {want}, \
                                     thread {gid} took {taken} back edges",
                                    li.header(l),
                                    f.name,
                                    se.display(s, f)
                                ));
                            }
                        }
                        if let Some(m) = max {
                            if taken > m {
                                return Err(format!(
                                    "seed {seed}: loop at {}: max {m} below {taken}",
                                    li.header(l)
                                ));
                            }
                        }
                        visit[k] = None;
                    } else if b == li.header(l) {
                        visit[k] = Some((entries + 1, expected));
                    }
                } else if b == li.header(l) {
                    // Entered from outside: the unknowns hold their values now (they are
                    // invariant in the loop, so defined outside it).
                    let expected = se.evaluate(s, |v| vals.get(&v.as_u32()).copied());
                    visit[k] = Some((1, expected));
                }
            }
        }
    }
    Ok(())
}

#[test]
fn counts_hold_on_generated_kernels() {
    let opts = GenOptions {
        max_trip_count: 6,
        ..GenOptions::default()
    };
    let mut stats = Stats::default();
    for seed in 0..400 {
        if let Err(e) = check_seed(&opts, seed, &mut stats) {
            panic!("{e}");
        }
    }
    println!(
        "{} kernels run ({} skipped); {} of {} loops have a count; {} loop visits checked",
        stats.kernels, stats.skipped, stats.counted, stats.loops, stats.visits
    );
    assert!(stats.visits > 1000, "too few visits checked");
}
