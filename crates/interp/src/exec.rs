//! The executor: CTAs one after another, the threads of a CTA cooperatively.
//!
//! Each thread runs until it reaches a barrier or returns from the kernel; then the next
//! thread in the schedule runs. When every thread has stopped, either all wait at the
//! same barrier (same instruction under the same call stack) and all resume, or all have
//! returned and the CTA is done; anything else is a [`DivergentBarrier`]. Each barrier
//! release starts a new race-detection epoch.
//!
//! Warp collectives (`shfl`, `vote`, `warp_sync`) also stop a thread, before the
//! collective. When no thread can run and some wait at warp collectives, each group (the
//! threads named by a waiting thread's mask, lanes = linear thread id % 32, warps =
//! linear id / 32) is performed and resumes, provided every non-exited thread the mask
//! names waits at the same dynamic instruction with the same mask (else a
//! [`DivergentWarp`]); lanes past the end of the CTA count as exited, as in PTX. Only
//! when no thread waits at a warp collective are barriers checked.
//!
//! Race detection: accesses of one barrier epoch are ordered only by warp collectives.
//! Each thread keeps a vector clock over the lanes of its warp; a collective joins its
//! group's clocks and then advances each member's own entry, so an earlier access by
//! lane `l` is ordered before this thread's access exactly when a chain of collectives
//! carried lane `l`'s clock of that access here (happens-before, as in FastTrack).
//! Threads of different warps are ordered by barriers only.
//!
//! [`DivergentBarrier`]: ExecError::DivergentBarrier
//! [`DivergentWarp`]: ExecError::DivergentWarp

use crate::decode::{AtomKind, CastOp, DFunc, GlobalAddrs, Op, Program, WarpKind, R};
use crate::error::{AssertFailure, ExecError, Location, PoisonUse};
use crate::memory::{
    self, fresh_clock, split_generic, window_base, Access, Fault, Heap, Memory, PrintfLine,
};
use crate::printf;
use crate::semantics::{self as sem, DivTrap};
use crate::{Arg, Launch, Outcome, Schedule, MAX_CALL_DEPTH, SHADOW_BYTES};
use cranelift_entity::SecondaryMap;
use gyre_ir::{
    AddrSpace, AtomicOp, GlobalData, Linkage, Module, ShflMode, SpecialReg, Type, VoteMode,
};

/// A suspended call frame.
#[derive(Copy, Clone)]
struct Frame {
    func: u32,
    /// First register of the frame in the thread's register file.
    base: u32,
    /// Where to resume (valid only while the frame is not on top).
    pc: u32,
    /// Caller register receiving the return value.
    ret_dst: R,
    /// Local-heap state to restore on return.
    local_allocs: u32,
    local_top: u64,
    /// Start of this frame's slot area in the local window.
    local_base: u64,
}

#[derive(Copy, Clone, PartialEq, Eq)]
enum State {
    Running,
    AtBarrier,
    /// Stopped before a warp collective (`pc` points at it).
    AtWarp,
    Done,
}

struct Thread {
    tid: [u32; 3],
    lin: u32,
    regs: Vec<u64>,
    pois: Vec<bool>,
    frames: Vec<Frame>,
    /// pc of the top frame.
    pc: u32,
    local: Heap,
    state: State,
    /// Instructions executed before the current `run_thread` (for `clock`).
    steps: u64,
    /// Warp vector clock for race detection (see the module doc).
    vc: [u32; 32],
}

enum Stop {
    Barrier,
    Warp,
    Returned,
}

/// Do `a` and `b` wait at the same dynamic instruction (same pc under the same call
/// stack)?
fn same_point(a: &Thread, b: &Thread) -> bool {
    let n = a.frames.len();
    a.pc == b.pc
        && n == b.frames.len()
        && a.frames
            .iter()
            .zip(&b.frames)
            .enumerate()
            .all(|(i, (x, y))| x.func == y.func && (i + 1 == n || x.pc == y.pc))
}

/// A register of `t`'s current frame: `(bits, poison)`.
fn reg_of(t: &Thread, r: R) -> (u64, bool) {
    let b = t.frames.last().expect("thread has a frame").base as usize + r as usize;
    (t.regs[b], t.pois[b])
}

/// The source lane of a `shfl` (PTX ISA `shfl.sync`): `b` is the lane or offset, `c`
/// packs the clamp value (bits 0-4) and the segment mask (bits 8-12). An out-of-range
/// source reads the thread's own value.
pub(crate) fn shfl_source(mode: ShflMode, lane: u32, b: u32, c: u32) -> u32 {
    let (bval, cval, seg) = (b & 31, c & 31, (c >> 8) & 31);
    let max_lane = (lane & seg) | (cval & !seg);
    let min_lane = lane & seg;
    let (j, ok) = match mode {
        ShflMode::Up => {
            let j = lane as i32 - bval as i32;
            (j, j >= max_lane as i32)
        }
        ShflMode::Down => {
            let j = (lane + bval) as i32;
            (j, j <= max_lane as i32)
        }
        ShflMode::Bfly => {
            let j = (lane ^ bval) as i32;
            (j, j <= max_lane as i32)
        }
        ShflMode::Idx => {
            let j = (min_lane | (bval & !seg)) as i32;
            (j, j <= max_lane as i32)
        }
    };
    if ok {
        j as u32
    } else {
        lane
    }
}

/// Per-CTA execution context.
struct Cta<'a> {
    prog: &'a Program,
    global: &'a mut Heap,
    konst: &'a mut Heap,
    shared: &'a mut Heap,
    ctaid: [u32; 3],
    ntid: [u32; 3],
    nctaid: [u32; 3],
    epoch: u32,
    detect: bool,
    /// Steps left before the limit.
    budget: u64,
    limit: u64,
    /// Bytes one thread may hold in local frames and registers (see `frame_cost`).
    local_limit: u64,
    memory_limit: u64,
    /// `vprintf` output of this launch so far, with the CTA's and thread's linear ids.
    printed: &'a mut Vec<(u64, u32, PrintfLine)>,
}

/// Why reading `vprintf`/`assert_fail` inputs from memory failed.
enum ReadErr {
    Fault(Fault, (u64, u64), u8, AddrSpace),
    Poison,
    Bad(String),
}

/// The memory a thread sees, for reading C strings and the `vprintf` argument buffer
/// through generic pointers.
struct Reader<'h, 'v> {
    global: &'h mut Heap,
    konst: &'h mut Heap,
    shared: &'h mut Heap,
    local: &'h mut Heap,
    acc: Access<'v>,
    /// The argument buffer's address and the offset of the next argument in it.
    args: u64,
    off: u64,
}

/// Longest string `vprintf` or `assert_fail` reads before calling it unterminated.
const MAX_STRING: usize = 1 << 16;

impl Reader<'_, '_> {
    fn load(&mut self, addr: u64, size: u8) -> Result<u64, ReadErr> {
        let (sp, a) = split_generic(addr);
        let (h, tracked): (&mut Heap, bool) = match sp {
            AddrSpace::Shared => (&mut *self.shared, true),
            AddrSpace::Local => (&mut *self.local, false),
            AddrSpace::Const => (&mut *self.konst, false),
            _ => (&mut *self.global, true),
        };
        let acc = Access {
            check: self.acc.check && tracked,
            ..self.acc
        };
        match h.load(a, u64::from(size), acc) {
            Ok((_, true)) => Err(ReadErr::Poison),
            Ok((v, false)) => Ok(v),
            Err(f) => Err(ReadErr::Fault(f, (addr, a), size, sp)),
        }
    }

    /// The NUL-terminated string at generic `addr`.
    fn c_string(&mut self, addr: u64) -> Result<Vec<u8>, ReadErr> {
        let mut out = Vec::new();
        loop {
            let b = self.load(addr.wrapping_add(out.len() as u64), 1)? as u8;
            if b == 0 {
                return Ok(out);
            }
            if out.len() == MAX_STRING {
                return Err(ReadErr::Bad(format!(
                    "string at {addr:#x} has no NUL in {MAX_STRING} bytes"
                )));
            }
            out.push(b);
        }
    }
}

impl printf::Source<ReadErr> for Reader<'_, '_> {
    fn arg(&mut self, size: u8) -> Result<u64, ReadErr> {
        let sz = u64::from(size);
        self.off = self.off.div_ceil(sz) * sz;
        let v = self.load(self.args.wrapping_add(self.off), size)?;
        self.off += sz;
        Ok(v)
    }
    fn string(&mut self, addr: u64) -> Result<Vec<u8>, ReadErr> {
        self.c_string(addr)
    }
    fn bad(&self, reason: String) -> ReadErr {
        ReadErr::Bad(reason)
    }
}

/// Run a launch; see [`crate::run_kernel`].
pub(crate) fn run(
    m: &Module,
    kernel: &str,
    launch: &Launch,
    mem: &mut Memory,
) -> Result<Outcome, ExecError> {
    let bad = |reason: String| ExecError::BadLaunch { reason };
    let kid = m
        .func_by_name(kernel)
        .ok_or_else(|| bad(format!("no function @{kernel}")))?;
    let kf = &m.functions[kid];
    if launch.grid.contains(&0) || launch.block.contains(&0) {
        return Err(bad("zero grid or CTA dimension".into()));
    }
    let nthreads = launch.block.iter().map(|&d| u64::from(d)).product::<u64>();
    if nthreads > 1 << 20 {
        return Err(bad(format!("{nthreads} threads per CTA")));
    }
    let local_limit = memory_budget(m, launch, mem, nthreads)?;
    if kf.sig.params.len() != launch.args.len() {
        return Err(bad(format!(
            "@{kernel} takes {} arguments, {} given",
            kf.sig.params.len(),
            launch.args.len()
        )));
    }

    // Lay out module globals.
    let mut gaddr: GlobalAddrs = SecondaryMap::new();
    let mut konst = Heap::new(0);
    let mut shared_proto = Heap::new(0);
    // Every `extern` shared array of a kernel starts at the launch's dynamic shared
    // memory, as in CUDA; it is laid out once, on first use.
    let mut dynamic_shared: Option<u64> = None;
    for (id, g) in m.globals.iter() {
        if g.linkage == Linkage::Extern {
            if g.space != AddrSpace::Shared {
                return Err(bad(format!("extern global @{} is not shared", g.name)));
            }
            let base = match dynamic_shared {
                Some(b) => b,
                None => {
                    let n = launch.dynamic_shared_bytes as usize;
                    // 16 bytes: the most any PTX type needs, as CUDA guarantees.
                    let align = m
                        .globals
                        .values()
                        .filter(|g| g.linkage == Linkage::Extern)
                        .map(|g| u64::from(g.align.max(1)))
                        .max()
                        .unwrap_or(1)
                        .max(16);
                    let b = shared_proto.push(
                        "dynamic shared memory".to_string(),
                        vec![0; n],
                        vec![true; n],
                        align,
                    );
                    dynamic_shared = Some(b);
                    b
                }
            };
            gaddr[id] = base;
            continue;
        }
        let size = g.size() as usize;
        let mut bytes = vec![0u8; size];
        let elem = g.elem.bytes() as usize;
        if let Some(init) = &g.init {
            for (i, &v) in init.iter().enumerate().take(g.count as usize) {
                bytes[i * elem..(i + 1) * elem].copy_from_slice(&v.to_le_bytes()[..elem]);
            }
        }
        let align = u64::from(g.align.max(1));
        gaddr[id] = match g.space {
            AddrSpace::Global | AddrSpace::Generic => {
                if g.externally_initialized && !mem.contains(&g.name) {
                    return Err(host_input_missing(g));
                }
                if let Some(b) = mem.bytes(&g.name) {
                    if b.len() < size {
                        return Err(bad(format!(
                            "buffer {} has {} bytes, global needs {size}",
                            g.name,
                            b.len()
                        )));
                    }
                    mem.base(&g.name).expect("buffer exists")
                } else {
                    mem.alloc_aligned(&g.name, bytes, align)
                }
            }
            AddrSpace::Const => {
                let bytes = if g.externally_initialized {
                    // The host's contents, copied: const memory is read-only.
                    let b = mem.bytes(&g.name).ok_or_else(|| host_input_missing(g))?;
                    if b.len() < size {
                        return Err(bad(format!(
                            "buffer {} has {} bytes, global needs {size}",
                            g.name,
                            b.len()
                        )));
                    }
                    b[..size].to_vec()
                } else {
                    bytes
                };
                let b = konst.push(g.name.clone(), bytes, vec![false; size], align);
                konst.allocs.last_mut().expect("just pushed").read_only = true;
                b
            }
            AddrSpace::Shared => {
                // Shared memory starts uninitialized (poison) unless the IR gives a value.
                let p = vec![g.init.is_none(); size];
                shared_proto.push(g.name.clone(), bytes, p, align)
            }
            AddrSpace::Local => {
                return Err(bad(format!("global @{} in local space", g.name)));
            }
        };
    }

    let prog = Program::decode(m, kid, &gaddr)?;
    let kernel_frame = frame_cost(0, &prog.funcs[0])
        + launch
            .args
            .iter()
            .map(|a| match a {
                Arg::Bytes(b) => 2 * b.len() as u64,
                _ => 0,
            })
            .sum::<u64>();
    if kernel_frame > local_limit {
        return Err(local_exhausted(
            nthreads,
            kernel_frame,
            launch.config.memory_limit,
        ));
    }

    // Kernel arguments.
    let mut argv = Vec::with_capacity(launch.args.len());
    let mut byval = Vec::new();
    for (i, (a, &t)) in launch.args.iter().zip(&kf.sig.params).enumerate() {
        let bv = kf.byval_param(i);
        if let Some(b) = bv {
            let Arg::Bytes(bytes) = a else {
                return Err(bad(format!(
                    "argument {i}: byval parameter needs {} bytes, got {a}",
                    b.size
                )));
            };
            if bytes.len() != b.size as usize {
                return Err(bad(format!(
                    "argument {i}: byval parameter needs {} bytes, got {}",
                    b.size,
                    bytes.len()
                )));
            }
            // The address is set per thread, in its own local memory.
            byval.push((i, bytes.clone(), u64::from(b.align)));
            argv.push(0);
            continue;
        }
        let v = match (a, t) {
            (Arg::Int(x), t) if t.is_int() => x & sem::mask(t.bits() as u8),
            (Arg::F32(x), Type::F32) => u64::from(x.to_bits()),
            (Arg::F64(x), Type::F64) => x.to_bits(),
            (Arg::Ptr(p), Type::Ptr(_)) => *p,
            (Arg::Buffer(name, off), Type::Ptr(AddrSpace::Global | AddrSpace::Generic)) => mem
                .base(name)
                .ok_or_else(|| bad(format!("argument {i}: no buffer {name}")))?
                .wrapping_add(*off),
            _ => return Err(bad(format!("argument {i}: {a} does not fit {t}"))),
        };
        argv.push(v);
    }

    let detect = launch.config.detect_races;
    mem.set_shadows(detect);
    if detect {
        for a in &mut shared_proto.allocs {
            a.shadow = vec![Default::default(); a.data.len()];
        }
    }
    let start = mem.printed.len();
    let res = run_grid(
        &prog,
        launch,
        mem,
        &mut konst,
        &shared_proto,
        (&argv, &byval),
        local_limit,
    );
    mem.set_shadows(false);
    // By CTA, then thread; the sort is stable, so each thread's lines keep their order.
    mem.printed[start..].sort_by_key(|p| (p.0, p.1));
    res
}

/// The error for an `externally_initialized` global the caller gave no contents for:
/// the host writes it before the launch, so zeros (or the compiled-in initializer) would
/// silently stand for data the kernel never sees.
fn host_input_missing(g: &GlobalData) -> ExecError {
    ExecError::BadLaunch {
        reason: format!(
            "global @{0} is externally_initialized (the host writes it before the launch): \
             give its contents as a buffer named {0} (`gyre run --global {0}=...`)",
            g.name
        ),
    }
}

/// Check the launch's memory against [`Config::memory_limit`](crate::Config) and
/// [`Config::shared_limit`](crate::Config) before anything is allocated; returns the
/// bytes each thread may use for its local frames and registers.
/// A `byval` argument: parameter index, bytes, alignment.
type ByVal = (usize, Vec<u8>, u64);

fn memory_budget(
    m: &Module,
    launch: &Launch,
    mem: &Memory,
    nthreads: u64,
) -> Result<u64, ExecError> {
    let cfg = &launch.config;
    let limit = |reason: String| ExecError::ResourceLimit { loc: None, reason };
    // Per byte: the byte, its poison flag and, when races are checked, its shadow.
    let shadow = if cfg.detect_races { SHADOW_BYTES } else { 0 };
    let tracked = 2 + shadow;
    let mut need: u64 = mem
        .heap
        .allocs
        .iter()
        .map(|a| a.data.len() as u64 * tracked)
        .sum();
    let mut shared = u64::from(launch.dynamic_shared_bytes);
    for g in m.globals.values() {
        if g.linkage == Linkage::Extern {
            continue;
        }
        let size = g.size();
        match g.space {
            AddrSpace::Shared => shared += size.next_multiple_of(16),
            // The initial bytes are built once, then kept with their poison flags.
            AddrSpace::Const => need += 3 * size,
            _ if !mem.contains(&g.name) => need += size * (tracked + 1),
            _ => {}
        }
    }
    if shared > cfg.shared_limit {
        return Err(limit(format!(
            "the kernel needs {shared} bytes of shared memory per CTA ({} of them dynamic); \
             the limit is {} bytes",
            launch.dynamic_shared_bytes, cfg.shared_limit
        )));
    }
    // The module's layout and each CTA's fresh copy of it.
    need += 2 * shared * tracked;
    if need > cfg.memory_limit {
        return Err(limit(format!(
            "buffers, globals and shared memory need {} of interpreter memory; the limit \
             is {} (`gyre run --memory-limit`)",
            show_bytes(need),
            show_bytes(cfg.memory_limit)
        )));
    }
    Ok((cfg.memory_limit - need) / nthreads.max(1))
}

/// `1234 bytes`, or in KiB/MiB/GiB when large.
fn show_bytes(n: u64) -> String {
    match n {
        0..0x10_0000 => format!("{n} bytes"),
        0x10_0000..0x4000_0000 => format!("{:.1} MiB", n as f64 / f64::from(1 << 20)),
        _ => format!("{:.1} GiB", n as f64 / f64::from(1 << 30)),
    }
}

/// What a thread holds for a frame of `f` on top of `local_top` bytes of local memory:
/// the slots with their poison flags, and the frame's registers (value and poison).
fn frame_cost(local_top: u64, f: &DFunc) -> u64 {
    2 * (local_top + f.frame_size + f.frame_align) + 9 * u64::from(f.nregs)
}

fn local_exhausted(nthreads: u64, need: u64, memory_limit: u64) -> ExecError {
    ExecError::ResourceLimit {
        loc: None,
        reason: format!(
            "a thread's local frames need {} (slots, registers and the interpreter's \
             bookkeeping), more than its share of the memory limit ({} over {nthreads} \
             threads, less buffers and globals; `gyre run --memory-limit`)",
            show_bytes(need),
            show_bytes(memory_limit)
        ),
    }
}

fn run_grid(
    prog: &Program,
    launch: &Launch,
    mem: &mut Memory,
    konst: &mut Heap,
    shared_proto: &Heap,
    (argv, byval): (&[u64], &[ByVal]),
    local_limit: u64,
) -> Result<Outcome, ExecError> {
    let [bx, by, bz] = launch.block;
    let [gx, gy, gz] = launch.grid;
    let kernel = &prog.funcs[0];
    let limit = launch.config.step_limit;
    let mut out = Outcome::default();
    let mut epoch = 0u32;
    let mut threads: Vec<Thread> = Vec::new();
    let mut order: Vec<usize> = Vec::new();
    for cz in 0..gz {
        for cy in 0..gy {
            for cx in 0..gx {
                let mut shared = shared_proto.clone();
                epoch += 1;
                let mut cta = Cta {
                    prog,
                    global: &mut mem.heap,
                    konst,
                    shared: &mut shared,
                    ctaid: [cx, cy, cz],
                    ntid: launch.block,
                    nctaid: launch.grid,
                    epoch,
                    detect: launch.config.detect_races,
                    budget: limit - out.steps.min(limit),
                    limit,
                    printed: &mut mem.printed,
                    local_limit,
                    memory_limit: launch.config.memory_limit,
                };
                // Fresh threads.
                threads.clear();
                let mut lin = 0;
                for tz in 0..bz {
                    for ty in 0..by {
                        for tx in 0..bx {
                            threads.push(new_thread([tx, ty, tz], lin, kernel, argv, byval));
                            lin += 1;
                        }
                    }
                }
                let mut round = 0u64;
                loop {
                    schedule(&mut order, threads.len(), launch.config.schedule, round);
                    round += 1;
                    for &i in &order {
                        let t = &mut threads[i];
                        if t.state != State::Running {
                            continue;
                        }
                        let before = cta.budget;
                        let stop = cta.run_thread(t);
                        t.steps += before - cta.budget;
                        t.state = match stop? {
                            Stop::Barrier => State::AtBarrier,
                            Stop::Warp => State::AtWarp,
                            Stop::Returned => State::Done,
                        };
                    }
                    if threads.iter().any(|t| t.state == State::AtWarp) {
                        cta.warp_round(&mut threads)?;
                        continue;
                    }
                    let Some(first) = threads.iter().position(|t| t.state == State::AtBarrier)
                    else {
                        break;
                    };
                    // Every thread must wait at the same dynamic barrier.
                    let f = &threads[first];
                    if let Some(o) = threads
                        .iter()
                        .find(|t| t.state == State::Done || !same_point(t, f))
                    {
                        return Err(ExecError::DivergentBarrier {
                            loc: cta.loc(f, f.pc - 1),
                            other_tid: o.tid,
                            other_exited: o.state == State::Done,
                        });
                    }
                    for t in threads.iter_mut() {
                        t.state = State::Running;
                    }
                    cta.epoch += 1;
                    out.barriers += 1;
                }
                epoch = cta.epoch;
                out.steps += (limit - out.steps.min(limit)) - cta.budget;
                out.ctas += 1;
            }
        }
    }
    Ok(out)
}

/// The order in which threads run in one round.
fn schedule(order: &mut Vec<usize>, n: usize, s: Schedule, round: u64) {
    order.clear();
    order.extend(0..n);
    match s {
        Schedule::Forward => {}
        Schedule::Reverse => order.reverse(),
        Schedule::Shuffle(seed) => {
            let mut x = seed ^ round.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
            for i in (1..n).rev() {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                order.swap(i, (x % (i as u64 + 1)) as usize);
            }
        }
    }
}

/// A fresh thread at the kernel's entry; `byval` lists (parameter index, bytes,
/// alignment) of the kernel's `byval` parameters, copied into the thread's local memory.
fn new_thread(
    tid: [u32; 3],
    lin: u32,
    kernel: &DFunc,
    argv: &[u64],
    byval: &[(usize, Vec<u8>, u64)],
) -> Thread {
    let n = kernel.nregs as usize;
    let mut t = Thread {
        tid,
        lin,
        regs: vec![0; n],
        pois: vec![true; n],
        frames: Vec::new(),
        pc: 0,
        local: Heap::new(0),
        state: State::Running,
        steps: 0,
        vc: fresh_clock(lin % 32),
    };
    for (&p, &v) in kernel.params.iter().zip(argv) {
        t.regs[p as usize] = v;
        t.pois[p as usize] = false;
    }
    for (i, bytes, align) in byval {
        let n = bytes.len();
        let base = t
            .local
            .push(String::new(), bytes.clone(), vec![false; n], *align);
        if let Some(&p) = kernel.params.get(*i) {
            t.regs[p as usize] = base;
        }
    }
    let local_base = push_slots(&mut t.local, kernel);
    t.frames.push(Frame {
        func: 0,
        base: 0,
        pc: 0,
        ret_dst: 0,
        local_allocs: 0,
        local_top: 0,
        local_base,
    });
    t
}

/// Allocate a frame's slots (uninitialized: poison); returns the frame's local base.
fn push_slots(local: &mut Heap, f: &DFunc) -> u64 {
    let base = local.top.next_multiple_of(f.frame_align);
    for &(off, size) in &f.slots {
        local.allocs.push(memory::Alloc {
            name: String::new(),
            base: base + off,
            data: vec![0; size as usize],
            poison: vec![true; size as usize],
            shadow: Vec::new(),
            read_only: false,
            written: false,
        });
    }
    local.top = base + f.frame_size;
    base
}

impl Cta<'_> {
    /// Perform every warp collective threads wait at (see the module doc); each
    /// waiting thread then resumes after its collective.
    fn warp_round(&mut self, threads: &mut [Thread]) -> Result<(), ExecError> {
        let n = threads.len();
        let prog = self.prog;
        for lo in (0..n).step_by(32) {
            let hi = (lo + 32).min(n);
            let mut handled = 0u32;
            for l in lo..hi {
                let bit = 1u32 << (l - lo);
                if threads[l].state != State::AtWarp || handled & bit != 0 {
                    continue;
                }
                let lead = &threads[l];
                let fr = lead.frames.last().expect("thread has a frame");
                let f = &prog.funcs[fr.func as usize];
                let Op::Warp { idx } = f.code[lead.pc as usize] else {
                    unreachable!("a thread stops at a warp collective only")
                };
                let w = f.warp[idx as usize];
                let loc = || self.loc(lead, lead.pc);
                let (mask, mp) = reg_of(lead, w.mask());
                if mp {
                    return Err(ExecError::Poison {
                        loc: loc(),
                        what: PoisonUse::WarpOperand,
                    });
                }
                let mask = mask as u32;
                if mask & bit == 0 {
                    return Err(ExecError::DivergentWarp {
                        loc: loc(),
                        other_tid: lead.tid,
                        reason: format!("executes it with mask {mask:#x}, which leaves it out"),
                    });
                }
                let mut members = 0u32;
                for lane in 0..32 {
                    let lb = 1u32 << lane;
                    let j = lo + lane as usize;
                    if mask & lb == 0 || j >= hi {
                        continue;
                    }
                    let t = &threads[j];
                    let reason = match t.state {
                        State::Done => continue,
                        State::AtWarp if same_point(t, lead) && handled & lb == 0 => {
                            let (m, p) = reg_of(t, w.mask());
                            if !p && m as u32 == mask {
                                members |= lb;
                                continue;
                            }
                            format!("reaches it with another mask than {mask:#x}")
                        }
                        State::AtWarp => "waits at another warp collective".to_string(),
                        State::AtBarrier => "waits at a barrier".to_string(),
                        State::Running => unreachable!("no thread runs during a warp round"),
                    };
                    return Err(ExecError::DivergentWarp {
                        loc: loc(),
                        other_tid: t.tid,
                        reason,
                    });
                }
                // Results first, then writes: every lane reads its sources' old values.
                let mut res = [(0u64, true); 32];
                match w.kind {
                    WarpKind::Sync => {}
                    WarpKind::Shfl(mode) => {
                        for (lane, out) in res.iter_mut().enumerate() {
                            if members & (1 << lane) == 0 {
                                continue;
                            }
                            let t = &threads[lo + lane];
                            let (b, pb) = reg_of(t, w.args[1]);
                            let (c, pc) = reg_of(t, w.args[2]);
                            if pb || pc {
                                return Err(ExecError::Poison {
                                    loc: self.loc(t, t.pc),
                                    what: PoisonUse::WarpOperand,
                                });
                            }
                            let src = shfl_source(mode, lane as u32, b as u32, c as u32);
                            // A source lane outside the group gives an undefined value.
                            *out = if members & (1 << src) != 0 {
                                reg_of(&threads[lo + src as usize], w.args[0])
                            } else {
                                (0, true)
                            };
                        }
                    }
                    WarpKind::Vote(mode) => {
                        let (mut ballot, mut poison) = (0u32, false);
                        for lane in 0..32 {
                            if members & (1 << lane) != 0 {
                                let (p, pp) = reg_of(&threads[lo + lane], w.args[0]);
                                poison |= pp;
                                ballot |= ((p & 1) as u32) << lane;
                            }
                        }
                        let v = match mode {
                            VoteMode::Any => u64::from(ballot != 0),
                            VoteMode::All => u64::from(ballot == members),
                            VoteMode::Uni => u64::from(ballot == 0 || ballot == members),
                            VoteMode::Ballot => u64::from(ballot),
                        };
                        res = [(v, poison); 32];
                    }
                }
                if w.kind != WarpKind::Sync {
                    for (lane, &(v, p)) in res.iter().enumerate() {
                        if members & (1 << lane) != 0 {
                            let t = &mut threads[lo + lane];
                            let b = t.frames.last().expect("frame").base as usize + w.dst as usize;
                            t.regs[b] = v;
                            t.pois[b] = p;
                        }
                    }
                }
                // The collective orders the members' accesses: join, then advance.
                let mut join = [0u32; 32];
                for lane in 0..32 {
                    if members & (1 << lane) != 0 {
                        for (j, &c) in join.iter_mut().zip(&threads[lo + lane].vc) {
                            *j = (*j).max(c);
                        }
                    }
                }
                for lane in 0..32 {
                    if members & (1 << lane) != 0 {
                        let t = &mut threads[lo + lane];
                        t.vc = join;
                        t.vc[lane] += 1;
                    }
                }
                handled |= members;
            }
        }
        for t in threads.iter_mut() {
            if t.state == State::AtWarp {
                t.state = State::Running;
                t.pc += 1;
            }
        }
        Ok(())
    }

    fn loc(&self, t: &Thread, pc: u32) -> Location {
        let f = &self.prog.funcs[t.frames.last().expect("thread has a frame").func as usize];
        self.loc_in(f, t.tid, pc)
    }

    fn loc_in(&self, f: &DFunc, tid: [u32; 3], pc: u32) -> Location {
        let (block, inst) = f.locs[pc as usize];
        Location {
            ctaid: self.ctaid,
            tid,
            function: f.name.as_str().into(),
            func: f.id,
            block,
            inst,
            // Printed by `run_kernel`, which has the module, only for the error returned.
            text: Box::default(),
        }
    }

    /// The error for a failed access at `addr` (as the program saw it; `a` in the
    /// space's own coordinates).
    fn fault(
        &self,
        t: &Thread,
        pc: u32,
        f: Fault,
        (addr, a): (u64, u64),
        size: u8,
        space: AddrSpace,
    ) -> ExecError {
        let loc = self.loc(t, pc);
        let buffer = match space {
            AddrSpace::Shared => self.shared.describe(a),
            AddrSpace::Local => t.local.describe(a),
            AddrSpace::Const => self.konst.describe(a),
            _ => self.global.describe(a),
        }
        .map(Box::new);
        match f {
            Fault::OutOfBounds => ExecError::OutOfBounds {
                loc,
                addr,
                space,
                size: u32::from(size),
                buffer,
            },
            Fault::Misaligned => ExecError::Misaligned {
                loc,
                addr,
                size: u32::from(size),
                buffer,
            },
            Fault::ReadOnly => ExecError::ConstWrite { loc, addr, buffer },
            Fault::Race { other, site } => {
                let [bx, by, _] = self.ntid;
                let other_tid = other.map(|o| [o % bx, (o / bx) % by, o / (bx * by)]);
                let other = other_tid.zip(self.prog.site(site)).map(|(tid, (fi, pc))| {
                    Box::new(self.loc_in(&self.prog.funcs[fi as usize], tid, pc))
                });
                ExecError::DataRace {
                    loc,
                    space,
                    addr,
                    other_tid,
                    other,
                    buffer,
                }
            }
        }
    }

    /// The error for a failed read of `vprintf`/`assert_fail` inputs.
    fn read_err(&self, t: &Thread, pc: u32, e: ReadErr) -> ExecError {
        match e {
            ReadErr::Fault(f, addr, size, sp) => self.fault(t, pc, f, addr, size, sp),
            ReadErr::Poison => ExecError::Poison {
                loc: self.loc(t, pc),
                what: PoisonUse::Printed,
            },
            ReadErr::Bad(reason) => ExecError::BadPrintf {
                loc: self.loc(t, pc),
                reason,
            },
        }
    }

    /// Run a thread until it reaches a barrier or returns from the kernel.
    fn run_thread(&mut self, t: &mut Thread) -> Result<Stop, ExecError> {
        let prog = self.prog;
        let mut frame = *t.frames.last().expect("thread has a frame");
        let mut f: &DFunc = &prog.funcs[frame.func as usize];
        let mut code: &[Op] = &f.code;
        let mut pc = t.pc;
        let mut base = frame.base as usize;
        let mut budget = self.budget;
        let acc = Access {
            site: 0,
            tid: t.lin,
            epoch: self.epoch,
            check: self.detect,
            vc: &t.vc,
        };

        // The current frame's registers, as slices so the optimizer keeps their
        // address and length in machine registers; re-sliced at calls and returns.
        let mut regs: &mut [u64] = &mut t.regs[base..];
        let mut pois: &mut [bool] = &mut t.pois[base..];
        macro_rules! v {
            ($r:expr) => {
                regs[$r as usize]
            };
        }
        macro_rules! p {
            ($r:expr) => {
                pois[$r as usize]
            };
        }
        macro_rules! set {
            ($r:expr, $val:expr, $poison:expr) => {{
                let (val, poison) = ($val, $poison);
                regs[$r as usize] = val;
                pois[$r as usize] = poison;
            }};
        }
        macro_rules! bail {
            ($e:expr) => {{
                let e = $e;
                t.pc = pc;
                self.budget = budget;
                return Err(e);
            }};
        }
        // Pick the heap for an access; `$space` is the pointer's static space.
        macro_rules! heap {
            ($space:expr, $addr:expr) => {{
                let (sp, a) = match $space {
                    AddrSpace::Generic => split_generic($addr),
                    s => (s, $addr),
                };
                let (h, tracked): (&mut Heap, bool) = match sp {
                    AddrSpace::Shared => (&mut *self.shared, true),
                    AddrSpace::Local => (&mut t.local, false),
                    AddrSpace::Const => (&mut *self.konst, false),
                    _ => (&mut *self.global, true),
                };
                (
                    h,
                    a,
                    sp,
                    Access {
                        check: acc.check && tracked,
                        // `pc` is already past the accessing instruction.
                        site: f.site_base.wrapping_add(pc - 1),
                        ..acc
                    },
                )
            }};
        }
        macro_rules! edge {
            ($e:expr) => {{
                let e = f.edges[$e as usize];
                let cs = &f.copies[e.copies as usize..(e.copies + e.ncopies) as usize];
                if e.overlap {
                    // Parallel copy: read every source before writing any destination.
                    let tmp: Vec<(u64, bool)> = cs.iter().map(|&(_, s)| (v!(s), p!(s))).collect();
                    for (&(d, _), (val, poison)) in cs.iter().zip(tmp) {
                        set!(d, val, poison);
                    }
                } else {
                    for &(d, s) in cs {
                        set!(d, v!(s), p!(s));
                    }
                }
                pc = e.pc;
            }};
        }

        loop {
            if budget == 0 {
                let limit = self.limit;
                bail!(ExecError::StepLimit {
                    loc: self.loc(t, pc),
                    limit
                });
            }
            budget -= 1;
            let op = code[pc as usize];
            let cur = pc;
            pc += 1;
            match op {
                Op::Const { dst, bits } => set!(dst, bits, false),
                Op::Bin {
                    op,
                    w,
                    flags,
                    dst,
                    a,
                    b,
                } => {
                    let (r, pr) = sem::bin(op, w, flags, v!(a), v!(b));
                    set!(dst, r, pr | p!(a) | p!(b));
                }
                Op::Add { m, dst, a, b } => set!(dst, v!(a).wrapping_add(v!(b)) & m, p!(a) | p!(b)),
                Op::Sub { m, dst, a, b } => set!(dst, v!(a).wrapping_sub(v!(b)) & m, p!(a) | p!(b)),
                Op::Mul { m, dst, a, b } => set!(dst, v!(a).wrapping_mul(v!(b)) & m, p!(a) | p!(b)),
                Op::And { dst, a, b } => set!(dst, v!(a) & v!(b), p!(a) | p!(b)),
                Op::Or { dst, a, b } => set!(dst, v!(a) | v!(b), p!(a) | p!(b)),
                Op::Xor { dst, a, b } => set!(dst, v!(a) ^ v!(b), p!(a) | p!(b)),
                Op::Div {
                    op,
                    w,
                    exact,
                    dst,
                    a,
                    b,
                } => {
                    let signed = matches!(op, sem::DivOp::Sdiv | sem::DivOp::Srem);
                    if p!(b) || (signed && p!(a) && sem::sext(v!(b), w) == -1) {
                        bail!(ExecError::Poison {
                            loc: self.loc(t, cur),
                            what: PoisonUse::Divisor
                        });
                    }
                    match sem::div(op, w, exact, v!(a), v!(b)) {
                        Ok((r, pr)) => set!(dst, r, pr | p!(a)),
                        Err(DivTrap::Zero) => {
                            bail!(ExecError::DivisionByZero {
                                loc: self.loc(t, cur)
                            })
                        }
                        Err(DivTrap::Overflow) => {
                            bail!(ExecError::DivisionOverflow {
                                loc: self.loc(t, cur)
                            })
                        }
                    }
                }
                Op::IUn { op, w, dst, a } => set!(dst, sem::iun(op, w, v!(a)), p!(a)),
                Op::FBin { op, f64, dst, a, b } => {
                    set!(dst, sem::fbin(op, f64, v!(a), v!(b)), p!(a) | p!(b))
                }
                Op::FUn { op, f64, dst, a } => set!(dst, sem::fun(op, f64, v!(a)), p!(a)),
                Op::Fma { f64, dst, a, b, c } => {
                    set!(
                        dst,
                        sem::fma(f64, v!(a), v!(b), v!(c)),
                        p!(a) | p!(b) | p!(c)
                    )
                }
                Op::Icmp { cc, w, dst, a, b } => {
                    set!(
                        dst,
                        u64::from(cc.eval(u32::from(w), v!(a), v!(b))),
                        p!(a) | p!(b)
                    )
                }
                Op::Fcmp { cc, f64, dst, a, b } => {
                    let r = cc.eval(sem::as_f64(f64, v!(a)), sem::as_f64(f64, v!(b)));
                    set!(dst, u64::from(r), p!(a) | p!(b))
                }
                Op::Select { dst, c, a, b } => {
                    let pick = if v!(c) & 1 != 0 { a } else { b };
                    set!(dst, v!(pick), p!(c) | p!(pick));
                }
                Op::Cast { op, dst, a } => {
                    let x = v!(a);
                    let (r, pr) = match op {
                        CastOp::Sext { from, to } => {
                            (sem::sext(x, from) as u64 & sem::mask(to), false)
                        }
                        CastOp::Mask { to } => (x & sem::mask(to), false),
                        CastOp::FpToInt { src64, w, signed } => sem::fp_to_int(src64, w, signed, x),
                        CastOp::IntToFp { w, signed, dst64 } => {
                            (sem::int_to_fp(w, signed, dst64, x), false)
                        }
                        CastOp::Fpext => (sem::fpext(x), false),
                        CastOp::Fptrunc => (sem::fptrunc(x), false),
                        CastOp::Addrspace { from, to } => addrspace_cast(from, to, x),
                    };
                    set!(dst, r, pr | p!(a));
                }
                Op::PtrAdd {
                    dst,
                    base: b,
                    idx,
                    w,
                    scale,
                } => {
                    let off = (sem::sext(v!(idx), w) as u64).wrapping_mul(u64::from(scale));
                    set!(dst, v!(b).wrapping_add(off), p!(b) | p!(idx));
                }
                Op::Load {
                    space,
                    size,
                    i1,
                    dst,
                    ptr,
                } => {
                    if p!(ptr) {
                        bail!(ExecError::Poison {
                            loc: self.loc(t, cur),
                            what: PoisonUse::Address
                        });
                    }
                    let addr = v!(ptr);
                    let (h, a, sp, acc) = heap!(space, addr);
                    match h.load(a, u64::from(size), acc) {
                        Ok((val, poison)) => set!(dst, if i1 { val & 1 } else { val }, poison),
                        Err(e) => bail!(self.fault(t, cur, e, (addr, a), size, sp)),
                    }
                }
                Op::Store {
                    space,
                    size,
                    val,
                    ptr,
                } => {
                    if p!(ptr) {
                        bail!(ExecError::Poison {
                            loc: self.loc(t, cur),
                            what: PoisonUse::Address
                        });
                    }
                    let addr = v!(ptr);
                    let (x, px) = (v!(val), p!(val));
                    let (h, a, sp, acc) = heap!(space, addr);
                    if let Err(e) = h.store(a, u64::from(size), x, px, acc) {
                        bail!(self.fault(t, cur, e, (addr, a), size, sp));
                    }
                }
                Op::Rmw {
                    op,
                    kind,
                    space,
                    dst,
                    ptr,
                    val,
                } => {
                    if p!(ptr) {
                        bail!(ExecError::Poison {
                            loc: self.loc(t, cur),
                            what: PoisonUse::Address
                        });
                    }
                    let addr = v!(ptr);
                    let (x, px) = (v!(val), p!(val));
                    let size = match kind {
                        AtomKind::Int(w) => w.div_ceil(8),
                        AtomKind::F32 => 4,
                        AtomKind::F64 => 8,
                    };
                    let (h, a, sp, acc) = heap!(space, addr);
                    let r = h.rmw(a, u64::from(size), acc, |old, po| {
                        Some((atomic(op, kind, old, x), po | px))
                    });
                    match r {
                        Ok((old, po)) => set!(dst, old, po),
                        Err(e) => bail!(self.fault(t, cur, e, (addr, a), size, sp)),
                    }
                }
                Op::Cas {
                    space,
                    size,
                    dst,
                    ptr,
                    exp,
                    new,
                } => {
                    if p!(ptr) {
                        bail!(ExecError::Poison {
                            loc: self.loc(t, cur),
                            what: PoisonUse::Address
                        });
                    }
                    if p!(exp) {
                        bail!(ExecError::Poison {
                            loc: self.loc(t, cur),
                            what: PoisonUse::CasCompare
                        });
                    }
                    let addr = v!(ptr);
                    let (e, n, pn) = (v!(exp), v!(new), p!(new));
                    let (h, a, sp, acc) = heap!(space, addr);
                    let mut poisoned_mem = false;
                    let r = h.rmw(a, u64::from(size), acc, |old, po| {
                        poisoned_mem = po;
                        (!po && old == e).then_some((n, pn))
                    });
                    match r {
                        Ok(_) if poisoned_mem => {
                            bail!(ExecError::Poison {
                                loc: self.loc(t, cur),
                                what: PoisonUse::CasCompare
                            })
                        }
                        Ok((old, _)) => set!(dst, old, false),
                        Err(er) => bail!(self.fault(t, cur, er, (addr, a), size, sp)),
                    }
                }
                Op::SlotAddr { dst, off, generic } => {
                    let a = frame.local_base + off;
                    set!(
                        dst,
                        if generic {
                            a + window_base(AddrSpace::Local)
                        } else {
                            a
                        },
                        false
                    );
                }
                Op::Sreg { dst, reg } => {
                    let r = match reg {
                        SpecialReg::TidX => t.tid[0],
                        SpecialReg::TidY => t.tid[1],
                        SpecialReg::TidZ => t.tid[2],
                        SpecialReg::NtidX => self.ntid[0],
                        SpecialReg::NtidY => self.ntid[1],
                        SpecialReg::NtidZ => self.ntid[2],
                        SpecialReg::CtaidX => self.ctaid[0],
                        SpecialReg::CtaidY => self.ctaid[1],
                        SpecialReg::CtaidZ => self.ctaid[2],
                        SpecialReg::NctaidX => self.nctaid[0],
                        SpecialReg::NctaidY => self.nctaid[1],
                        SpecialReg::NctaidZ => self.nctaid[2],
                        SpecialReg::LaneId => t.lin % 32,
                        SpecialReg::WarpSize => 32,
                    };
                    set!(dst, u64::from(r), false);
                }
                Op::Barrier => {
                    t.pc = pc;
                    self.budget = budget;
                    return Ok(Stop::Barrier);
                }
                Op::Warp { .. } => {
                    // Stop before the collective; `warp_round` performs it.
                    t.pc = cur;
                    self.budget = budget;
                    return Ok(Stop::Warp);
                }
                Op::Nop => {}
                Op::Clock { dst, w } => {
                    // This thread's instruction count, this one included.
                    let n = t.steps + (self.budget - budget);
                    set!(dst, n & sem::mask(w), false);
                }
                Op::Vprintf { dst, fmt, args } => {
                    if p!(fmt) || p!(args) {
                        bail!(ExecError::Poison {
                            loc: self.loc(t, cur),
                            what: PoisonUse::Printed
                        });
                    }
                    let (fa, aa) = (v!(fmt), v!(args));
                    let mut rd = Reader {
                        global: &mut *self.global,
                        konst: &mut *self.konst,
                        shared: &mut *self.shared,
                        local: &mut t.local,
                        acc,
                        args: aa,
                        off: 0,
                    };
                    let r = if fa == 0 {
                        Ok((None, -1))
                    } else {
                        rd.c_string(fa)
                            .and_then(|f| printf::format(&f, &mut rd))
                            .map(|(s, n)| (Some(s), n))
                    };
                    match r {
                        Ok((text, n)) => {
                            if let Some(text) = text {
                                let [cx, cy, _] = self.ctaid;
                                let [gx, gy, _] = self.nctaid;
                                let cta = u64::from(cx)
                                    + u64::from(gx)
                                        * (u64::from(cy)
                                            + u64::from(gy) * u64::from(self.ctaid[2]));
                                self.printed.push((
                                    cta,
                                    t.lin,
                                    PrintfLine {
                                        ctaid: self.ctaid,
                                        tid: t.tid,
                                        text,
                                    },
                                ));
                            }
                            set!(dst, u64::from(n as u32), false);
                        }
                        Err(e) => bail!(self.read_err(t, cur, e)),
                    }
                }
                Op::AssertFail { args } => {
                    if args.iter().any(|&a| p!(a)) {
                        bail!(ExecError::Poison {
                            loc: self.loc(t, cur),
                            what: PoisonUse::Printed
                        });
                    }
                    let [ma, fa, line, fna] = [v!(args[0]), v!(args[1]), v!(args[2]), v!(args[3])];
                    let mut rd = Reader {
                        global: &mut *self.global,
                        konst: &mut *self.konst,
                        shared: &mut *self.shared,
                        local: &mut t.local,
                        acc,
                        args: 0,
                        off: 0,
                    };
                    let mut text = |a: u64| -> Result<String, ReadErr> {
                        Ok(String::from_utf8_lossy(&rd.c_string(a)?).into_owned())
                    };
                    let r = (|| Ok((text(ma)?, text(fa)?, text(fna)?)))();
                    match r {
                        Ok((message, file, function)) => bail!(ExecError::AssertFailed {
                            loc: self.loc(t, cur),
                            failure: Box::new(AssertFailure {
                                message,
                                file,
                                line: line as u32,
                                function,
                            }),
                        }),
                        Err(e) => bail!(self.read_err(t, cur, e)),
                    }
                }
                Op::Freeze { dst, a } => {
                    let (x, px) = (v!(a), p!(a));
                    set!(dst, if px { 0 } else { x }, false);
                }
                Op::Call {
                    func,
                    args,
                    nargs,
                    dst,
                } => {
                    if t.frames.len() >= MAX_CALL_DEPTH {
                        bail!(ExecError::CallDepth {
                            loc: self.loc(t, cur)
                        });
                    }
                    let callee = &prog.funcs[func as usize];
                    // Registers of the frames below count as well (9 bytes each).
                    let need = frame_cost(t.local.top, callee) + 9 * t.regs.len() as u64;
                    if need > self.local_limit {
                        let n = self.ntid.iter().map(|&d| u64::from(d)).product();
                        let mut e = local_exhausted(n, need, self.memory_limit);
                        if let ExecError::ResourceLimit { loc, .. } = &mut e {
                            *loc = Some(Box::new(self.loc(t, cur)));
                        }
                        bail!(e);
                    }
                    let new_base = t.regs.len();
                    t.regs.resize(new_base + callee.nregs as usize, 0);
                    t.pois.resize(new_base + callee.nregs as usize, true);
                    for (i, &p) in callee.params.iter().enumerate() {
                        let a = f.call_args[(args + i as u32) as usize];
                        debug_assert!(i < nargs as usize);
                        t.regs[new_base + p as usize] = t.regs[base + a as usize];
                        t.pois[new_base + p as usize] = t.pois[base + a as usize];
                    }
                    let top = t.frames.last_mut().expect("frame");
                    top.pc = pc;
                    let (local_allocs, local_top) = (t.local.allocs.len() as u32, t.local.top);
                    let local_base = push_slots(&mut t.local, callee);
                    frame = Frame {
                        func,
                        base: new_base as u32,
                        pc: 0,
                        ret_dst: dst,
                        local_allocs,
                        local_top,
                        local_base,
                    };
                    t.frames.push(frame);
                    f = callee;
                    code = &f.code;
                    base = new_base;
                    regs = &mut t.regs[base..];
                    pois = &mut t.pois[base..];
                    pc = 0;
                }
                Op::Jump { edge } => edge!(edge),
                Op::Brif { c, t: te, f: fe } => {
                    if p!(c) {
                        bail!(ExecError::Poison {
                            loc: self.loc(t, cur),
                            what: PoisonUse::Branch
                        });
                    }
                    if v!(c) & 1 != 0 {
                        edge!(te)
                    } else {
                        edge!(fe)
                    }
                }
                Op::BrTable { idx, table } => {
                    if p!(idx) {
                        bail!(ExecError::Poison {
                            loc: self.loc(t, cur),
                            what: PoisonUse::Branch
                        });
                    }
                    let x = v!(idx);
                    let tb = &f.tables[table as usize];
                    let e = tb
                        .cases
                        .iter()
                        .find(|c| c.0 == x)
                        .map_or(tb.default, |c| c.1);
                    edge!(e)
                }
                Op::Return { val, has_val } => {
                    let (x, px) = if has_val {
                        (v!(val), p!(val))
                    } else {
                        (0, true)
                    };
                    let done = t.frames.pop().expect("frame");
                    let Some(caller) = t.frames.last().copied() else {
                        t.frames.push(done);
                        t.pc = cur;
                        self.budget = budget;
                        return Ok(Stop::Returned);
                    };
                    t.local.truncate(done.local_allocs as usize, done.local_top);
                    t.regs.truncate(done.base as usize);
                    t.pois.truncate(done.base as usize);
                    frame = caller;
                    f = &prog.funcs[frame.func as usize];
                    code = &f.code;
                    base = frame.base as usize;
                    regs = &mut t.regs[base..];
                    pois = &mut t.pois[base..];
                    pc = frame.pc;
                    set!(done.ret_dst, x, px);
                }
                Op::Unreachable => bail!(ExecError::Unreachable {
                    loc: self.loc(t, cur)
                }),
            }
        }
    }
}

/// `addrspace_cast`: through the generic window; a generic pointer outside the target
/// space's window converts to poison.
fn addrspace_cast(from: AddrSpace, to: AddrSpace, x: u64) -> (u64, bool) {
    let generic = x.wrapping_add(window_base(from));
    if to == AddrSpace::Generic {
        return (generic, false);
    }
    let (sp, off) = split_generic(generic);
    (off, sp != to)
}

/// The new memory value of an atomic read-modify-write.
fn atomic(op: AtomicOp, kind: AtomKind, old: u64, x: u64) -> u64 {
    match kind {
        AtomKind::F32 => match op {
            AtomicOp::Add => sem::fbin(sem::FBinOp::Add, false, old, x),
            _ => x,
        },
        AtomKind::F64 => match op {
            AtomicOp::Add => sem::fbin(sem::FBinOp::Add, true, old, x),
            _ => x,
        },
        AtomKind::Int(w) => {
            let m = sem::mask(w);
            let (sa, sx) = (sem::sext(old, w), sem::sext(x, w));
            match op {
                AtomicOp::Add => old.wrapping_add(x) & m,
                AtomicOp::And => old & x,
                AtomicOp::Or => old | x,
                AtomicOp::Xor => old ^ x,
                AtomicOp::Smin => {
                    if sa <= sx {
                        old
                    } else {
                        x
                    }
                }
                AtomicOp::Smax => {
                    if sa >= sx {
                        old
                    } else {
                        x
                    }
                }
                AtomicOp::Umin => old.min(x),
                AtomicOp::Umax => old.max(x),
                AtomicOp::Exch => x,
                AtomicOp::Inc => {
                    if old >= x {
                        0
                    } else {
                        (old + 1) & m
                    }
                }
                AtomicOp::Dec => {
                    if old == 0 || old > x {
                        x
                    } else {
                        old - 1
                    }
                }
            }
        }
    }
}
