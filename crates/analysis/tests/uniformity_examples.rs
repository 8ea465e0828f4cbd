//! Soundness and precision of the uniformity analysis on the kernels shipped in
//! `examples/`.
//!
//! Each example is analysed, instrumented (tests/common/trace.rs: per-thread log of
//! block entries and value definitions into a global of its own) and run in the
//! interpreter with the launch shapes of crates/interp/tests/shipped_examples.rs,
//! widened where needed to several warps per CTA and at least two CTAs. Every CTA has a
//! multiple of 32 threads, so there are no partial warps; threads that leave early
//! (e.g. saxpy's `gid >= n`) simply log fewer instances. A value instance is *observed*
//! when at least two threads of one warp computed it.
//!
//! Checked: (1) every value and branch the analysis calls uniform agrees within a warp
//! in every dynamic instance; (2) the instrumented kernel leaves every buffer exactly as
//! the original does; (3) the values marked divergent that were observed but never
//! differed (false divergence) are all in [`EXPECTED_FALSE`], each with the reason it
//! is conservatively divergent. `cargo test -p gyre-analysis --test uniformity_examples
//! -- --nocapture` prints the table.

mod common;

use common::trace::{self, Claims, Observed, TraceError};
use gyre_analysis::{Cfg, DomTree, LoopInfo, PostDomTree, Uniformity};
use gyre_interp::{run_kernel, Arg, Launch, Memory};
use gyre_ir::{Block, EntityRef, Function, Module, Opcode, Value, ValueDef};
use std::path::Path;

/// Values marked divergent that were observed in a warp and never differed: (example,
/// value, why the analysis cannot call it uniform). A value missing from this list that
/// shows up as false divergence is a precision regression.
const EXPECTED_FALSE: &[(&str, &str, &str)] = &[
    (
        "search",
        "v21",
        "`icmp slt v20, v10` compares the thread's cursor gid*seg + k with its own segment \
         end gid*seg + seg: both operands are divergent (they depend on tid) but their \
         difference k - seg is the same in every thread of an instance; the analysis \
         does not track affine offsets, so the header's exit test is divergent",
    ),
    (
        "tid_branch",
        "v27",
        "`fadd v21, v26` on the even-tid arm: only even threads run it and they all hold \
         the same accumulator v21, but v21 joins both arms (even and odd threads differ), \
         so it and everything computed from it is divergent",
    ),
    (
        "tid_branch",
        "v28",
        "`fadd v21, v25` on the odd-tid arm: as v27, the odd threads that run it share one \
         accumulator; the analysis does not split a value by the arm its threads took",
    ),
];

/// One launch of an example.
struct Run {
    grid: [u32; 3],
    block: [u32; 3],
    args: Vec<Arg>,
    bufs: Vec<(&'static str, Vec<u8>)>,
}

/// A shipped kernel and the launches it is run with.
struct Example {
    name: &'static str,
    /// Trace events per thread (a saturated trace fails the test: raise it).
    cap: u64,
    runs: Vec<Run>,
}

/// Deterministic test data in [-10, 10) (as in shipped_examples.rs).
fn data(n: usize, seed: u32) -> Vec<f32> {
    let mut x = seed.wrapping_mul(2_654_435_761) | 1;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            (x % 2000) as f32 / 100.0 - 10.0
        })
        .collect()
}

fn f32_bytes(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn i32_bytes(v: &[i32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn linear(ctas: u32, threads: u32, args: Vec<Arg>, bufs: Vec<(&'static str, Vec<u8>)>) -> Run {
    Run {
        grid: [ctas, 1, 1],
        block: [threads, 1, 1],
        args,
        bufs,
    }
}

fn examples() -> Vec<Example> {
    let mut v = Vec::new();
    // 4 CTAs of 2 warps; n = 200 cuts the fourth CTA's first warp in the middle.
    let n = 200;
    v.push(Example {
        name: "saxpy",
        cap: 64,
        runs: vec![linear(
            4,
            64,
            vec![
                Arg::buffer("x"),
                Arg::buffer("y"),
                Arg::F32(1.5),
                Arg::Int(n),
            ],
            vec![
                ("x", f32_bytes(&data(256, 1))),
                ("y", f32_bytes(&data(256, 2))),
            ],
        )],
    });
    // 128 threads over 148 interior rows: threads 0..20 take a second row, so the row
    // loop's exit splits warp 0.
    let (planes, h, w) = (2usize, 150usize, 10usize);
    v.push(Example {
        name: "stencil2d",
        cap: 1500,
        runs: vec![linear(
            2,
            64,
            vec![
                Arg::buffer("out"),
                Arg::buffer("in"),
                Arg::Int(planes as u64),
                Arg::Int(h as u64),
                Arg::Int(w as u64),
            ],
            vec![
                ("out", vec![0; planes * h * w * 4]),
                ("in", f32_bytes(&data(planes * h * w, 3))),
            ],
        )],
    });
    // 2 x 2 CTAs of 16 x 16 threads: 8 warps per CTA, each two rows of 16.
    let n = 32usize;
    v.push(Example {
        name: "matmul_tiled",
        cap: 800,
        runs: vec![Run {
            grid: [2, 2, 1],
            block: [16, 16, 1],
            args: vec![
                Arg::buffer("c"),
                Arg::buffer("a"),
                Arg::buffer("b"),
                Arg::Int(n as u64),
            ],
            bufs: vec![
                ("c", vec![0; n * n * 4]),
                ("a", f32_bytes(&data(n * n, 4))),
                ("b", f32_bytes(&data(n * n, 5))),
            ],
        }],
    });
    // 3 CTAs of 4 warps: the `tid < s` branch splits a warp once s < 32.
    v.push(Example {
        name: "block_reduce",
        cap: 256,
        runs: vec![linear(
            3,
            128,
            vec![Arg::buffer("out"), Arg::buffer("in")],
            vec![
                ("out", vec![0; 3 * 4]),
                ("in", f32_bytes(&data(3 * 128, 6))),
            ],
        )],
    });
    // 2 CTAs of 2 warps; some segments hold the key, some do not (both exits taken).
    let (threads, seg, key) = (128usize, 16usize, 7i32);
    let input: Vec<i32> = (0..threads * seg)
        .map(|i| ((i * 7919) % 97) as i32)
        .collect();
    v.push(Example {
        name: "search",
        cap: 256,
        runs: vec![linear(
            2,
            64,
            vec![
                Arg::buffer("out"),
                Arg::buffer("in"),
                Arg::Int(key as u64),
                Arg::Int(seg as u64),
            ],
            vec![("out", vec![0; threads * 4]), ("in", i32_bytes(&input))],
        )],
    });
    // Both values of `mode`; n = 300 over 128 threads: the third grid-stride iteration
    // splits warp 1.
    let n = 300usize;
    v.push(Example {
        name: "invariant_branch",
        cap: 64,
        runs: [0u64, 1]
            .map(|mode| {
                linear(
                    2,
                    64,
                    vec![
                        Arg::buffer("out"),
                        Arg::buffer("in"),
                        Arg::Int(n as u64),
                        Arg::F32(2.5),
                        Arg::Int(mode),
                    ],
                    vec![("out", vec![0; n * 4]), ("in", f32_bytes(&data(n, 7)))],
                )
            })
            .into(),
    });
    let n = 37usize;
    v.push(Example {
        name: "tid_branch",
        cap: 640,
        runs: vec![linear(
            2,
            64,
            vec![Arg::buffer("out"), Arg::buffer("in"), Arg::Int(n as u64)],
            vec![("out", vec![0; 128 * 4]), ("in", f32_bytes(&data(n, 8)))],
        )],
    });
    v
}

fn load(name: &str) -> Module {
    let file = format!("{name}.gir");
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples")
        .join(&file);
    let src = std::fs::read_to_string(&path).expect("example exists");
    gyre_ir::parse_module(&src).unwrap_or_else(|e| panic!("{}", e.render(&file, &src)))
}

/// Per-example figures.
#[derive(Default)]
struct Row {
    values: usize,
    divergent: usize,
    div_observed: usize,
    /// Names of the values marked divergent, observed and never different.
    false_div: Vec<String>,
    uniform_observed: usize,
    div_branches: usize,
    div_branches_observed: usize,
    div_branches_never_split: usize,
    instances: u64,
}

/// Analyse, instrument and run `ex`; `tamper` may alter the analysis's claims first
/// (to show that a wrong claim is caught). `Err` is a soundness violation.
fn check_example(ex: &Example, tamper: impl Fn(&Function, &mut Claims)) -> Result<Row, String> {
    let m = load(ex.name);
    let kid = m
        .func_by_name(ex.name)
        .expect("kernel named after its file");
    let f = &m.functions[kid];
    let cfg = Cfg::with_function(f).map_err(|e| e.to_string())?;
    let dt = DomTree::with_function(f, &cfg);
    let pdt = PostDomTree::with_function(f, &cfg);
    let li = LoopInfo::with_function(f, &cfg, &dt);
    let u = Uniformity::with_function(f, &cfg, &dt, &pdt, &li);
    let mut claims = Claims::of(f, &u);
    tamper(f, &mut claims);
    let mut obs = Observed::new(f);
    for (k, run) in ex.runs.iter().enumerate() {
        let cta_threads = u64::from(run.block.iter().product::<u32>());
        let threads = cta_threads * u64::from(run.grid.iter().product::<u32>());
        let launch = Launch::new(run.grid, run.block, run.args.clone());
        let fresh = || {
            let mut mem = Memory::new();
            for (name, bytes) in &run.bufs {
                mem.alloc_buffer(name, bytes.clone());
            }
            mem
        };
        let mut plain = fresh();
        run_kernel(&m, ex.name, &launch, &mut plain)
            .unwrap_or_else(|e| panic!("{} run {k}: {e}", ex.name));
        let im = trace::instrument(&m, kid, threads, ex.cap);
        let mut traced = fresh();
        run_kernel(&im, ex.name, &launch, &mut traced)
            .unwrap_or_else(|e| panic!("{} run {k}, instrumented: {e}", ex.name));
        for (name, _) in &run.bufs {
            assert!(
                plain.bytes(name) == traced.bytes(name),
                "{} run {k}: instrumentation changed buffer {name}",
                ex.name
            );
        }
        let words: Vec<u64> = traced
            .read::<u64>(trace::TRACE_GLOBAL)
            .expect("the trace buffer exists");
        let poison = traced
            .poison(trace::TRACE_GLOBAL)
            .expect("the trace buffer exists");
        trace::check_trace(
            f,
            &li,
            &claims,
            &words,
            poison,
            threads,
            cta_threads,
            ex.cap,
            &mut obs,
        )
        .map_err(|e| match e {
            TraceError::Saturated { gid, events } => panic!(
                "{} run {k}: thread {gid} logged {events} events; raise cap {}",
                ex.name, ex.cap
            ),
            TraceError::Unsound(msg) => format!("{} run {k}: {msg}", ex.name),
        })?;
        assert_eq!(obs.poisoned, 0, "{}: examples compute no poison", ex.name);
    }
    let mut row = Row {
        instances: obs.instances,
        ..Row::default()
    };
    for v in f.dfg.values() {
        if matches!(f.dfg.value_def(v), ValueDef::Detached) {
            continue;
        }
        row.values += 1;
        let seen = obs.shared[v.index()];
        if u.is_divergent(v) {
            row.divergent += 1;
            if seen {
                row.div_observed += 1;
                if !obs.differed[v.index()] {
                    row.false_div.push(v.to_string());
                }
            }
        } else if seen {
            row.uniform_observed += 1;
        }
    }
    for b in f.layout.blocks() {
        let t = f.terminator(b).expect("every block has a terminator");
        let conditional = matches!(f.dfg.inst(t).opcode(), Opcode::Brif | Opcode::BrTable);
        if conditional && !u.is_branch_uniform(t) {
            row.div_branches += 1;
            if obs.branch_shared[b.index()] {
                row.div_branches_observed += 1;
                row.div_branches_never_split += usize::from(!obs.branch_split[b.index()]);
            }
        }
    }
    Ok(row)
}

#[test]
fn examples_are_sound_and_false_divergence_is_documented() {
    let mut total = Row::default();
    let mut unexpected = Vec::new();
    let mut explained = Vec::new();
    let mut table = String::from(
        "| example | values | divergent | div. observed | false div. | uniform observed \
         | div. branches | observed | never split | instances compared |\n\
         |---|---|---|---|---|---|---|---|---|---|\n",
    );
    let line = |name: &str, r: &Row| {
        format!(
            "| {name} | {} | {} | {} | {} | {} | {} | {} | {} | {} |\n",
            r.values,
            r.divergent,
            r.div_observed,
            r.false_div.len(),
            r.uniform_observed,
            r.div_branches,
            r.div_branches_observed,
            r.div_branches_never_split,
            r.instances
        )
    };
    for ex in examples() {
        let row = check_example(&ex, |_, _| {}).unwrap_or_else(|e| panic!("unsound: {e}"));
        table += &line(ex.name, &row);
        for v in &row.false_div {
            match EXPECTED_FALSE
                .iter()
                .find(|&&(e, val, _)| e == ex.name && val == v)
            {
                Some((_, _, why)) => explained.push(format!("{} {v}: {why}", ex.name)),
                None => unexpected.push(format!("{} {v}", ex.name)),
            }
        }
        for &(e, val, why) in EXPECTED_FALSE {
            if e == ex.name && !row.false_div.iter().any(|v| v == val) {
                // Not a failure: the analysis got more precise or the inputs changed.
                println!("note: {e} {val} ({why}) is no longer false divergence");
            }
        }
        total.values += row.values;
        total.divergent += row.divergent;
        total.div_observed += row.div_observed;
        total.false_div.extend(row.false_div);
        total.uniform_observed += row.uniform_observed;
        total.div_branches += row.div_branches;
        total.div_branches_observed += row.div_branches_observed;
        total.div_branches_never_split += row.div_branches_never_split;
        total.instances += row.instances;
    }
    table += &line("total", &total);
    print!("{table}");
    println!(
        "false divergence: {} of {} observed divergent values ({:.1}%)",
        total.false_div.len(),
        total.div_observed,
        100.0 * total.false_div.len() as f64 / total.div_observed.max(1) as f64
    );
    for e in &explained {
        println!("  {e}");
    }
    assert!(
        unexpected.is_empty(),
        "precision regression: divergent values that never differed, not in EXPECTED_FALSE: {unexpected:?}"
    );
}

/// The check can fail: claims the run contradicts are reported, on every example.
#[test]
fn wrong_uniform_claims_are_caught() {
    for ex in examples() {
        let all_uniform = |_: &Function, c: &mut Claims| {
            c.uniform_value.fill(true);
            c.uniform_branch.fill(true);
        };
        let err = check_example(&ex, all_uniform).err();
        assert!(
            err.is_some(),
            "{}: an all-uniform claim went unnoticed",
            ex.name
        );
    }
    let ex = examples()
        .into_iter()
        .find(|e| e.name == "tid_branch")
        .expect("tid_branch is an example");
    // v11 = (tid & 1) == 0, the branch condition.
    let err = check_example(&ex, |_, c| c.uniform_value[Value::new(11).index()] = true)
        .err()
        .expect("a uniform v11 is contradicted");
    assert!(err.contains("uniform v11 was"), "{err}");
    // The `brif v11` ending block2, with its condition still divergent.
    let err = check_example(&ex, |f, c| {
        let t = f.terminator(Block::new(2)).expect("block2 ends in a brif");
        c.uniform_branch[t.index()] = true;
    })
    .err()
    .expect("a uniform brif in block2 is contradicted");
    assert!(err.contains("uniform branch"), "{err}");
}
