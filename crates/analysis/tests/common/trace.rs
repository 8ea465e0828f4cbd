//! Execution traces for checking the uniformity analysis against the interpreter.
//!
//! [`instrument`] makes a copy of a module whose kernel logs, per thread, every block
//! entry and every value definition into a global trace buffer ([`TRACE_GLOBAL`]), a
//! module global of its own so it cannot alias the kernel's buffers. [`check_trace`]
//! decodes the buffer after a launch, checks every claim of uniformity against it and
//! records which values were seen by several threads of a warp and whether they differed.
//!
//! A dynamic instance of a value is keyed as in the analysis's model: the value, the
//! iteration count of every loop around its block (reset when the loop is entered from
//! outside) and, for blocks executed several times under one such vector (irreducible
//! cycles), the occurrence number. Threads are numbered as in CUDA: linear CTA index
//! times CTA size plus the linear thread index (x fastest); a warp is 32 consecutive
//! linear thread indices of one CTA (the last warp of a CTA may be partial).
//!
//! The interpreter runs threads one at a time, not in lockstep; for race-free kernels
//! with barriers only in uniform control flow that is equivalent.

use gyre_analysis::{Loop, LoopInfo, Uniformity};
use gyre_ir::{
    AddrSpace, Block, EntityRef, FuncId, Function, GlobalData, Inst, InstructionData, IntFlags,
    MemFlags, Module, Opcode, SpecialReg, Type, Value, ValueDef,
};
use rustc_hash::FxHashMap;

/// Name of the trace buffer global (and of its [`gyre_interp::Memory`] buffer).
pub const TRACE_GLOBAL: &str = "__uni_trace";

const TAG_BLOCK: u64 = 1 << 32;
const TAG_VALUE: u64 = 2 << 32;

/// Words per thread for `cap` events: the event count, then two words per event.
pub fn words_per_thread(cap: u64) -> u64 {
    1 + 2 * cap
}

/// The warp of global thread `gid` when CTAs have `cta_threads` threads.
pub fn warp_of(gid: u64, cta_threads: u64) -> u64 {
    let per_cta = cta_threads.div_ceil(32);
    (gid / cta_threads) * per_cta + (gid % cta_threads) / 32
}

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

fn sreg64(f: &mut Function, before: Inst, reg: SpecialReg) -> Value {
    let r = ins(f, before, InstructionData::Sreg { reg }, Type::I32);
    let data = InstructionData::Unary {
        opcode: Opcode::Zext,
        arg: r,
    };
    ins(f, before, data, Type::I64)
}

/// Append `(tag, bits of val)` to this thread's trace (word 0 counts events).
fn emit(f: &mut Function, before: Inst, tbase: Value, cap: u64, tag: u64, val: Option<Value>) {
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
    // Past the cap, keep counting but overwrite the last slot: the decoder sees the
    // count and reports saturation.
    let capm = iconst(f, before, cap as i64 - 1);
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

/// A copy of `m` whose kernel `kernel` logs its block entries and value definitions,
/// up to `cap` events per thread, for a launch of `threads` threads in all.
pub fn instrument(m: &Module, kernel: FuncId, threads: u64, cap: u64) -> Module {
    assert!(cap >= 1, "room for at least one event");
    let mut m = m.clone();
    let count = u32::try_from(threads * words_per_thread(cap)).expect("trace fits a global");
    let trace = m.globals.push(GlobalData {
        name: TRACE_GLOBAL.into(),
        space: AddrSpace::Global,
        elem: Type::I64,
        count,
        align: 8,
        init: None,
        linkage: gyre_ir::Linkage::Internal,
        externally_initialized: false,
    });
    let f = &mut m.functions[kernel];
    let blocks: Vec<(Block, Vec<Inst>)> = f
        .layout
        .blocks()
        .map(|b| (b, f.layout.block_insts(b).collect()))
        .collect();
    let entry = blocks[0].0;
    let first = f.layout.first_inst(entry).expect("entry has a terminator");
    use SpecialReg as R;
    // gid = linear CTA index * CTA size + linear thread index, x fastest (CUDA's order).
    let [tx, ty, tz] = [R::TidX, R::TidY, R::TidZ].map(|r| sreg64(f, first, r));
    let [nx, ny, nz] = [R::NtidX, R::NtidY, R::NtidZ].map(|r| sreg64(f, first, r));
    let [cx, cy, cz] = [R::CtaidX, R::CtaidY, R::CtaidZ].map(|r| sreg64(f, first, r));
    let [gx, gy] = [R::NctaidX, R::NctaidY].map(|r| sreg64(f, first, r));
    let local = bin(f, first, Opcode::Imul, tz, ny);
    let local = bin(f, first, Opcode::Iadd, local, ty);
    let local = bin(f, first, Opcode::Imul, local, nx);
    let local = bin(f, first, Opcode::Iadd, local, tx);
    let cta = bin(f, first, Opcode::Imul, cz, gy);
    let cta = bin(f, first, Opcode::Iadd, cta, cy);
    let cta = bin(f, first, Opcode::Imul, cta, gx);
    let cta = bin(f, first, Opcode::Iadd, cta, cx);
    let size = bin(f, first, Opcode::Imul, nx, ny);
    let size = bin(f, first, Opcode::Imul, size, nz);
    let g = bin(f, first, Opcode::Imul, cta, size);
    let g = bin(f, first, Opcode::Iadd, g, local);
    let base = ins(
        f,
        first,
        InstructionData::GlobalAddr { global: trace },
        Type::Ptr(AddrSpace::Global),
    );
    let w = iconst(f, first, words_per_thread(cap) as i64);
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
        emit(f, head, tbase, cap, TAG_BLOCK | b.as_u32() as u64, None);
        for p in f.dfg.block_params(b).to_vec() {
            emit(f, head, tbase, cap, TAG_VALUE | p.as_u32() as u64, Some(p));
        }
        for w in insts.windows(2) {
            if let Some(r) = f.dfg.inst_result(w[0]) {
                emit(f, w[1], tbase, cap, TAG_VALUE | r.as_u32() as u64, Some(r));
            }
        }
    }
    m
}

/// What the analysis claims, in a form a test can tamper with (to show the check fails).
pub struct Claims {
    /// Per value index: claimed uniform.
    pub uniform_value: Vec<bool>,
    /// Per instruction index: a `brif`/`br_table` claimed uniform.
    pub uniform_branch: Vec<bool>,
}

impl Claims {
    /// The claims of `u` about `f`.
    pub fn of(f: &Function, u: &Uniformity) -> Claims {
        Claims {
            uniform_value: f.dfg.values().map(|v| u.is_uniform(v)).collect(),
            uniform_branch: (0..f.dfg.num_insts())
                .map(|i| u.is_branch_uniform(Inst::new(i)))
                .collect(),
        }
    }
}

/// What runs showed, accumulated over launches of one kernel.
pub struct Observed {
    /// Per value: some instance was computed (unpoisoned) by two threads of a warp.
    pub shared: Vec<bool>,
    /// Per value: some instance had two different results in one warp.
    pub differed: Vec<bool>,
    /// Per block: its `brif`/`br_table` ran in some instance in two threads of a warp.
    pub branch_shared: Vec<bool>,
    /// Per block: its `brif`/`br_table` sent two threads of a warp to different blocks.
    pub branch_split: Vec<bool>,
    /// Value instances compared with an earlier thread of the warp.
    pub instances: u64,
    /// Branch instances compared with an earlier thread of the warp.
    pub branches: u64,
    /// Poisoned value events (not compared).
    pub poisoned: u64,
}

impl Observed {
    /// Nothing observed yet, for `f`.
    pub fn new(f: &Function) -> Observed {
        let (nv, nb) = (f.dfg.num_values(), f.dfg.num_blocks());
        Observed {
            shared: vec![false; nv],
            differed: vec![false; nv],
            branch_shared: vec![false; nb],
            branch_split: vec![false; nb],
            instances: 0,
            branches: 0,
            poisoned: 0,
        }
    }
}

/// Why a trace could not be accepted.
#[derive(Debug)]
pub enum TraceError {
    /// Thread `gid` logged `events` events, more than the cap.
    Saturated { gid: u64, events: u64 },
    /// A claim of uniformity is contradicted by the run.
    Unsound(String),
}

/// Dynamic-instance key: (entity, iteration vector, occurrence). Terminators are keyed
/// by their block, in the id space counted down from `u32::MAX`.
type Key = (u32, Vec<u32>, u32);

/// Decode the trace `words`/`poison` of a launch of `threads` threads in CTAs of
/// `cta_threads` of the kernel `f` (uninstrumented, with loop forest `li`), check
/// `claims` against it and add what was seen to `obs`.
#[allow(clippy::too_many_arguments)]
pub fn check_trace(
    f: &Function,
    li: &LoopInfo,
    claims: &Claims,
    words: &[u64],
    poison: &[bool],
    threads: u64,
    cta_threads: u64,
    cap: u64,
    obs: &mut Observed,
) -> Result<(), TraceError> {
    let wpt = words_per_thread(cap);
    // Loops around each block, outermost first.
    let nests: Vec<Vec<Loop>> = (0..f.dfg.num_blocks())
        .map(|i| {
            let mut v = Vec::new();
            let mut l = li.innermost_loop(Block::new(i));
            while let Some(x) = l {
                v.push(x);
                l = li.parent(x);
            }
            v.reverse();
            v
        })
        .collect();
    let iv_of = |b: Block, iters: &[u32]| -> Vec<u32> {
        nests[b.index()].iter().map(|l| iters[l.index()]).collect()
    };
    let mut seen: FxHashMap<(u64, Key), u64> = FxHashMap::default();
    for gid in 0..threads {
        let w0 = (gid * wpt) as usize;
        let count = words[w0];
        if count > cap {
            return Err(TraceError::Saturated { gid, events: count });
        }
        let warp = warp_of(gid, cta_threads);
        let mut iters = vec![0u32; li.num_loops()];
        let mut occ: FxHashMap<(u32, Vec<u32>), u32> = FxHashMap::default();
        // The block being executed and its terminator's instance key.
        let mut cur: Option<(Block, Key)> = None;
        for e in 0..count as usize {
            let tag = words[w0 + 1 + 2 * e];
            let bits = words[w0 + 2 + 2 * e];
            let id = (tag & 0xffff_ffff) as u32;
            if tag & !0xffff_ffff == TAG_BLOCK {
                let b = Block::from_u32(id);
                let prev = cur.take();
                // The branch that led here.
                if let Some((pb, key)) = &prev {
                    let t = f.terminator(*pb).expect("a block with a successor");
                    if matches!(f.dfg.inst(t).opcode(), Opcode::Brif | Opcode::BrTable) {
                        match seen.get(&(warp, key.clone())) {
                            None => {
                                seen.insert((warp, key.clone()), u64::from(id));
                            }
                            Some(&other) => {
                                obs.branches += 1;
                                obs.branch_shared[pb.index()] = true;
                                if other != u64::from(id) {
                                    obs.branch_split[pb.index()] = true;
                                    if claims.uniform_branch[t.index()] {
                                        return Err(TraceError::Unsound(format!(
                                            "uniform branch {t} in {pb} went to block{other} and {b} in warp {warp}, instance {key:?}"
                                        )));
                                    }
                                }
                            }
                        }
                    }
                }
                for &l in &nests[b.index()] {
                    if li.header(l) == b {
                        // Entered from inside (a latch) or from outside?
                        iters[l.index()] = match &prev {
                            Some((p, _)) if li.contains(l, *p) => iters[l.index()] + 1,
                            _ => 0,
                        };
                    }
                }
                let iv = iv_of(b, &iters);
                let n = occ.entry((u32::MAX - id, iv.clone())).or_insert(0);
                *n += 1;
                cur = Some((b, (u32::MAX - id, iv, *n)));
            } else {
                let v = Value::from_u32(id);
                let b = match f.dfg.value_def(v) {
                    ValueDef::Result(i) => f.layout.inst_block(i),
                    ValueDef::Param(b, _) => Some(b),
                    ValueDef::Detached => None,
                }
                .expect("a traced value is defined in the layout");
                let iv = iv_of(b, &iters);
                let n = occ.entry((id, iv.clone())).or_insert(0);
                *n += 1;
                let bits_word = w0 + 2 + 2 * e;
                if poison[bits_word * 8..(bits_word + 1) * 8]
                    .iter()
                    .any(|&p| p)
                {
                    obs.poisoned += 1;
                    continue;
                }
                let key = (warp, (id, iv, *n));
                match seen.get(&key) {
                    None => {
                        seen.insert(key, bits);
                    }
                    Some(&other) => {
                        obs.instances += 1;
                        obs.shared[v.index()] = true;
                        if other != bits {
                            obs.differed[v.index()] = true;
                            if claims.uniform_value[v.index()] {
                                return Err(TraceError::Unsound(format!(
                                    "uniform {v} was {other:#x} and {bits:#x} in warp {warp}, instance {:?}",
                                    key.1
                                )));
                            }
                        }
                    }
                }
            }
        }
    }
    Ok(())
}
