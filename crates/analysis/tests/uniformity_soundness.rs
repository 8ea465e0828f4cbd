//! Soundness of the uniformity analysis against the interpreter, and its precision.
//!
//! Generated UB-free kernels are instrumented to log, per thread, every block entry and
//! every value definition of the kernel into a global trace buffer, then run with CTAs
//! of whole warps (32 or 64 threads) on random inputs. A dynamic instance of a value is
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

use gyre_analysis::{Cfg, DomTree, LoopInfo, PostDomTree, Uniformity};
use gyre_interp::{run_kernel, Arg, Launch, Memory};
use gyre_ir::gen::{generate_from_seed, GenOptions, ParamContract, RandomSource, SplitMix64};
use gyre_ir::{
    AddrSpace, Block, EntityRef, FuncId, Function, GlobalData, Inst, InstructionData, IntFlags,
    MemFlags, Module, Opcode, SpecialReg, Type, Value, ValueDef,
};
use rustc_hash::FxHashMap;

/// Events logged per thread before the trace saturates.
const CAP: u64 = 3000;
/// Words per thread: the event count, then two words per event.
const WORDS: u64 = 1 + 2 * CAP;
const TAG_BLOCK: u64 = 1 << 32;
const TAG_VALUE: u64 = 2 << 32;

fn ins(f: &mut Function, before: Inst, data: InstructionData, ty: Type) -> Value {
    f.insert_inst_before(before, data, Some(ty))
        .1
        .expect("instruction with a result")
}

fn iconst(f: &mut Function, before: Inst, v: i64) -> Value {
    ins(f, before, InstructionData::IntConst { imm: v }, Type::I64)
}

fn bin(f: &mut Function, before: Inst, opcode: Opcode, a: Value, b: Value) -> Value {
    let data = InstructionData::Binary {
        opcode,
        args: [a, b],
        flags: IntFlags::NONE,
    };
    let ty = f.dfg.value_type(a);
    ins(f, before, data, ty)
}

/// Append `(tag, bits of val)` to this thread's trace (word 0 counts events).
fn emit(f: &mut Function, before: Inst, tbase: Value, tag: u64, val: Option<Value>) {
    let store = |f: &mut Function, v: Value, p: Value| {
        let data = InstructionData::Store {
            args: [v, p],
            flags: MemFlags::default(),
        };
        f.insert_inst_before(before, data, None);
    };
    let c = ins(
        f,
        before,
        InstructionData::Load {
            ptr: tbase,
            flags: MemFlags::default(),
        },
        Type::I64,
    );
    let one = iconst(f, before, 1);
    let c1 = bin(f, before, Opcode::Iadd, c, one);
    store(f, c1, tbase);
    let capm = iconst(f, before, CAP as i64 - 1);
    let ci = bin(f, before, Opcode::Umin, c, capm);
    let two = iconst(f, before, 2);
    let off = bin(f, before, Opcode::Imul, ci, two);
    let idx = bin(f, before, Opcode::Iadd, off, one);
    let ptr_ty = Type::Ptr(AddrSpace::Global);
    let p = ins(
        f,
        before,
        InstructionData::PtrAdd {
            args: [tbase, idx],
            scale: 8,
        },
        ptr_ty,
    );
    let t = iconst(f, before, tag as i64);
    store(f, t, p);
    let bits = match val {
        None => iconst(f, before, 0),
        Some(v) => {
            let ty = f.dfg.value_type(v);
            let un = |f: &mut Function, opcode, arg, ty| {
                ins(f, before, InstructionData::Unary { opcode, arg }, ty)
            };
            match ty {
                Type::I64 => v,
                Type::I1 | Type::I8 | Type::I16 | Type::I32 => un(f, Opcode::Zext, v, Type::I64),
                Type::F32 => {
                    let b = un(f, Opcode::Bitcast, v, Type::I32);
                    un(f, Opcode::Zext, b, Type::I64)
                }
                Type::F64 => un(f, Opcode::Bitcast, v, Type::I64),
                Type::Ptr(_) => un(f, Opcode::Ptrtoint, v, Type::I64),
            }
        }
    };
    let p2 = ins(
        f,
        before,
        InstructionData::PtrAdd {
            args: [p, one],
            scale: 8,
        },
        ptr_ty,
    );
    store(f, bits, p2);
}

/// A copy of `m` whose kernel logs its block entries and value definitions.
fn instrument(m: &Module, kernel: FuncId, threads: u64) -> Module {
    let mut m = m.clone();
    let trace = m.globals.push(GlobalData {
        name: "__uni_trace".into(),
        space: AddrSpace::Global,
        elem: Type::I64,
        count: (threads * WORDS) as u32,
        align: 8,
        init: None,
    });
    let f = &mut m.functions[kernel];
    let blocks: Vec<(Block, Vec<Inst>)> = f
        .layout
        .blocks()
        .map(|b| (b, f.layout.block_insts(b).collect()))
        .collect();
    let entry = blocks[0].0;
    let first = f.layout.first_inst(entry).expect("entry has a terminator");
    // Per-thread trace base: trace + gid * WORDS words.
    let base = ins(
        f,
        first,
        InstructionData::GlobalAddr { global: trace },
        Type::Ptr(AddrSpace::Global),
    );
    let sreg = |f: &mut Function, reg| ins(f, first, InstructionData::Sreg { reg }, Type::I32);
    let (ctaid, ntid, tid) = (
        sreg(f, SpecialReg::CtaidX),
        sreg(f, SpecialReg::NtidX),
        sreg(f, SpecialReg::TidX),
    );
    let g = bin(f, first, Opcode::Imul, ctaid, ntid);
    let g = bin(f, first, Opcode::Iadd, g, tid);
    let g = ins(
        f,
        first,
        InstructionData::Unary {
            opcode: Opcode::Zext,
            arg: g,
        },
        Type::I64,
    );
    let w = iconst(f, first, WORDS as i64);
    let off = bin(f, first, Opcode::Imul, g, w);
    let tbase = ins(
        f,
        first,
        InstructionData::PtrAdd {
            args: [base, off],
            scale: 8,
        },
        Type::Ptr(AddrSpace::Global),
    );
    for (b, insts) in &blocks {
        let b = *b;
        let head = insts[0];
        emit(f, head, tbase, TAG_BLOCK | b.as_u32() as u64, None);
        for p in f.dfg.block_params(b).to_vec() {
            emit(f, head, tbase, TAG_VALUE | p.as_u32() as u64, Some(p));
        }
        for w in insts.windows(2) {
            if let Some(r) = f.dfg.inst_result(w[0]) {
                emit(f, w[1], tbase, TAG_VALUE | r.as_u32() as u64, Some(r));
            }
        }
    }
    m
}

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

/// Dynamic-instance key: (entity, iteration vector, occurrence).
type Key = (u32, Vec<u32>, u32);

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
    let im = instrument(&m, kid, threads);
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
        .read::<u64>("__uni_trace")
        .expect("the trace buffer exists");
    let poison = mem.poison("__uni_trace").expect("the trace buffer exists");

    // Loops around each block, outermost first.
    let nest = |b: Block| {
        let mut v = Vec::new();
        let mut l = li.innermost_loop(b);
        while let Some(x) = l {
            v.push(x);
            l = li.parent(x);
        }
        v.reverse();
        v
    };
    let mut seen: FxHashMap<(u64, Key), u64> = FxHashMap::default();
    let mut differed = vec![false; f.dfg.num_values()];
    let mut shared = vec![false; f.dfg.num_values()];
    for gid in 0..threads {
        let w0 = (gid * WORDS) as usize;
        let count = words[w0];
        if count > CAP {
            stats.skipped += 1;
            return Ok(());
        }
        let warp = (gid / u64::from(ntid)) * 64 + (gid % u64::from(ntid)) / 32;
        let mut iters = vec![0u32; li.num_loops()];
        let mut occ: FxHashMap<(u32, Vec<u32>), u32> = FxHashMap::default();
        let mut cur: Option<(Block, Key)> = None;
        for e in 0..count as usize {
            let tag = words[w0 + 1 + 2 * e];
            let bits = words[w0 + 2 + 2 * e];
            let bits_poison = poison[(w0 + 2 + 2 * e) * 8..(w0 + 3 + 2 * e) * 8]
                .iter()
                .any(|&p| p);
            let id = (tag & 0xffff_ffff) as u32;
            if tag & !0xffff_ffff == TAG_BLOCK {
                let b = Block::from_u32(id);
                // The branch that led here.
                if let Some((pb, key)) = cur.take() {
                    let t = f.terminator(pb).expect("a block with a successor");
                    if matches!(f.dfg.inst(t).opcode(), Opcode::Brif | Opcode::BrTable) {
                        stats.branches_checked += 1;
                        let prev = *seen.entry((warp, key.clone())).or_insert(u64::from(id));
                        if prev != u64::from(id) && u.is_branch_uniform(t) {
                            return Err(format!(
                                "seed {seed}: uniform branch {t} in {pb} went to block{prev} and {b} in warp {warp}, instance {key:?}"
                            ));
                        }
                    }
                }
                for l in nest(b) {
                    if li.header(l) == b {
                        // Entered from inside (a latch) or from outside?
                        iters[l.index()] = match prev_block_of(&words, w0, e) {
                            Some(p) if li.contains(l, p) => iters[l.index()] + 1,
                            _ => 0,
                        };
                    }
                }
                let iv: Vec<u32> = nest(b).iter().map(|l| iters[l.index()]).collect();
                let n = occ.entry((u32::MAX - id, iv.clone())).or_insert(0);
                *n += 1;
                // Terminators are keyed by their block (high id space).
                cur = Some((b, (u32::MAX - id, iv, *n)));
            } else {
                let v = Value::from_u32(id);
                let b = match f.dfg.value_def(v) {
                    ValueDef::Result(i) => f.layout.inst_block(i),
                    ValueDef::Param(b, _) => Some(b),
                    ValueDef::Detached => None,
                }
                .expect("a traced value is defined in the layout");
                let iv: Vec<u32> = nest(b).iter().map(|l| iters[l.index()]).collect();
                let n = occ.entry((id, iv.clone())).or_insert(0);
                *n += 1;
                if bits_poison {
                    continue;
                }
                stats.instances_checked += 1;
                let key = (warp, (id, iv, *n));
                match seen.get(&key) {
                    None => {
                        seen.insert(key, bits);
                    }
                    Some(&prev) => {
                        shared[v.index()] = true;
                        if prev != bits {
                            differed[v.index()] = true;
                            if u.is_uniform(v) {
                                return Err(format!(
                                    "seed {seed}: uniform {v} was {prev:#x} and {bits:#x} in warp {warp}, instance {:?}",
                                    key.1
                                ));
                            }
                        }
                    }
                }
            }
        }
    }
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

/// The block entered before event `e` of the thread whose trace starts at `w0`.
fn prev_block_of(words: &[u64], w0: usize, e: usize) -> Option<Block> {
    (0..e).rev().find_map(|k| {
        let tag = words[w0 + 1 + 2 * k];
        (tag & !0xffff_ffff == TAG_BLOCK).then(|| Block::from_u32((tag & 0xffff_ffff) as u32))
    })
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
