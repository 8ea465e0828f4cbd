//! Differential execution of a module before and after Gyre's passes.
//!
//! The corpus functions are mostly device functions with scalar and pointer
//! parameters, and the interpreter launches kernels, so each function is called from a
//! small wrapper kernel `@__conformance.<name>` that passes the kernel's arguments on
//! and stores the result (if any) into an extra output buffer. Scalars get random small
//! values (with edge cases now and then); each pointer parameter gets its own 4 KiB
//! buffer, zeroed or filled with small words, and points into its middle so negative
//! offsets stay in bounds. A run where the *input* fails (out of bounds, poison branch,
//! `unreachable`, ...) is undefined behaviour and counts as "not comparable"; otherwise
//! the output must succeed and leave the same bytes in every buffer (a poison byte of
//! the input matches anything). An input that hits the step limit (many corpus loops
//! never end) needs an output that also does ("endless" runs); if the output finishes,
//! the input is given a much larger limit and must then finish the same way. In a
//! `mustprogress` function (LLVM's attribute) an endless input may be a loop without
//! effects that never ends, which is undefined behaviour there, so unless the output is
//! endless too the run is "not comparable".

use gyre_interp::{run_kernel, Arg, Config, ErrorKind, Launch, Memory};
use gyre_ir::builder::{FuncCursor, InstBuilder};
use gyre_ir::generate::{RandomSource, SplitMix64};
use gyre_ir::{
    AddrSpace, EntityRef, FuncId, FuncKind, Function, InstructionData, Module, Opcode, Signature,
    Type,
};

/// Bytes of each pointer argument's buffer.
const BUFFER_BYTES: usize = 4096;
/// IR instructions one run may execute; corpus loops are short or infinite.
const STEP_LIMIT: u64 = 200_000;
/// Name of the buffer receiving a function's result.
const RESULT_BUFFER: &str = "__conformance.result";

/// What the differential runs of one file found.
#[derive(Clone, Default, Debug)]
pub struct Behaviour {
    /// Functions run before and after.
    pub functions: u32,
    /// Functions run that (transitively) call an external declaration's stub.
    pub external: u32,
    /// Functions not run because a parameter has a type no argument can be made for.
    pub unrunnable: u32,
    /// Runs compared.
    pub runs: u32,
    /// Runs where both the input and the output hit the step limit (an endless loop).
    pub endless: u32,
    /// Runs where the input itself failed (not comparable).
    pub not_comparable: u32,
    /// How the input failed in those runs: error kind and count, in first-seen order.
    pub input_errors: Vec<(String, u32)>,
    /// Each difference found (at most one per function).
    pub failures: Vec<String>,
}

/// Does `fid` reach a call to a function named in `stubs`?
fn calls_external(m: &Module, fid: FuncId, stubs: &[String]) -> bool {
    let mut seen = vec![false; m.functions.len()];
    let mut work = vec![fid];
    while let Some(f) = work.pop() {
        if std::mem::replace(&mut seen[f.index()], true) {
            continue;
        }
        let func = &m.functions[f];
        for b in func.layout.blocks() {
            for i in func.layout.block_insts(b) {
                if let InstructionData::Call { func: callee, .. } = func.dfg.inst(i) {
                    if stubs.contains(&m.functions[*callee].name) {
                        return true;
                    }
                    work.push(*callee);
                }
            }
        }
    }
    false
}

/// Can the interpreter be given an argument of this type?
fn runnable_param(t: Type) -> bool {
    match t {
        Type::Ptr(s) => matches!(s, AddrSpace::Global | AddrSpace::Generic),
        _ => true,
    }
}

/// Add a kernel calling `fid` with its own parameters and storing the result (widened
/// to a byte for `i1`) through an extra global pointer. Returns the kernel's name.
fn add_wrapper(m: &mut Module, fid: FuncId) -> String {
    let f = &m.functions[fid];
    if f.kind == FuncKind::Kernel {
        return f.name.clone();
    }
    let name = format!("__conformance.{}", f.name);
    let params = f.sig.params.clone();
    let ret = f.sig.ret;
    let mut kparams = params.clone();
    if ret.is_some() {
        kparams.push(Type::Ptr(AddrSpace::Global));
    }
    let mut w = Function::new(
        name.clone(),
        FuncKind::Kernel,
        Signature {
            params: kparams.clone(),
            ret: None,
        },
    );
    let b = w.append_new_block();
    let vals: Vec<_> = kparams
        .iter()
        .map(|&t| w.dfg.append_block_param(b, t))
        .collect();
    let mut cur = FuncCursor::new(&mut w).at_end(b);
    let (_, r) = cur.call(fid, ret, &vals[..params.len()]);
    if let Some(mut r) = r {
        if ret == Some(Type::I1) {
            r = cur.cast(Opcode::Zext, Type::I8, r);
        }
        cur.store(r, vals[params.len()]);
    }
    cur.ret(None);
    m.functions.push(w);
    name
}

/// A random scalar argument: mostly small, sometimes an edge case.
fn scalar(t: Type, rng: &mut SplitMix64) -> Arg {
    let pick = rng.below(8);
    match t {
        Type::F32 | Type::F64 => {
            let x = match pick {
                0 => 0.0,
                1 => -1.5,
                _ => (rng.below(2001) as f64 - 1000.0) / 8.0,
            };
            if t == Type::F32 {
                Arg::F32(x as f32)
            } else {
                Arg::F64(x)
            }
        }
        _ => Arg::Int(match pick {
            0 => 0,
            1 => u64::MAX, // -1
            2 => [1u64, 2, 0x7fff_ffff, 0x8000_0000, 255, 256][rng.below(6) as usize],
            7 => rng.next_u64(),
            _ => rng.below(40),
        }),
    }
}

/// Arguments and buffers for one run of the wrapper of a function with `params`.
fn inputs(params: &[Type], has_ret: bool, seed: u64) -> (Vec<Arg>, Memory) {
    let mut rng = SplitMix64::new(seed.wrapping_mul(0x2545_f491_4f6c_dd1d) ^ 0x5eed);
    let mut mem = Memory::new();
    let mut args = Vec::with_capacity(params.len() + 1);
    for (i, &t) in params.iter().enumerate() {
        if t.is_ptr() {
            let name = format!("__conformance.arg{i}");
            let mut bytes = vec![0u8; BUFFER_BYTES];
            if seed % 2 == 1 {
                for w in bytes.chunks_mut(4) {
                    w[0] = rng.below(16) as u8;
                }
            }
            mem.alloc_buffer(&name, bytes);
            args.push(Arg::Buffer(name, (BUFFER_BYTES / 2) as u64));
        } else {
            args.push(scalar(t, &mut rng));
        }
    }
    if has_ret {
        mem.alloc_zeroed(RESULT_BUFFER, 8);
        args.push(Arg::buffer(RESULT_BUFFER));
    }
    (args, mem)
}

/// The first byte of a buffer of `m0` that `m1` does not reproduce.
fn memory_difference(m0: &Memory, m1: &Memory) -> Option<String> {
    for name in m0.names() {
        let (Some(b0), Some(p0)) = (m0.bytes(name), m0.poison(name)) else {
            continue;
        };
        let (Some(b1), Some(p1)) = (m1.bytes(name), m1.poison(name)) else {
            return Some(format!("buffer {name} missing after"));
        };
        if b0.len() != b1.len() {
            return Some(format!("buffer {name} changed size"));
        }
        if let Some(i) = (0..b0.len()).find(|&i| !p0[i] && (p1[i] || b0[i] != b1[i])) {
            let after = if p1[i] {
                "poison".to_string()
            } else {
                format!("{:#04x}", b1[i])
            };
            return Some(format!("{name}[{i}]: {:#04x} before, {after} after", b0[i]));
        }
    }
    None
}

/// Run every function of `after` (except the stubs themselves) against the same-named
/// function of `before`, `runs` times each.
///
/// Functions that call external declarations run with the importer's stubs (no effect,
/// result zero) and are counted in [`Behaviour::external`]. That is sound: passes treat
/// such calls as opaque, so a transform correct for every possible callee is correct
/// for the stub too.
pub fn compare(before: &Module, after: &Module, stubs: &[String], runs: u32) -> Behaviour {
    let mut out = Behaviour::default();
    let mut b = before.clone();
    let mut a = after.clone();
    let ids: Vec<FuncId> = after.functions.keys().collect();
    for fid in ids {
        let f = &after.functions[fid];
        if f.layout.entry_block().is_none() || stubs.contains(&f.name) {
            continue;
        }
        let Some(bid) = before.func_by_name(&f.name) else {
            out.failures.push(format!("@{}: not in the input", f.name));
            continue;
        };
        if calls_external(after, fid, stubs) || calls_external(before, bid, stubs) {
            out.external += 1;
        }
        if !f.sig.params.iter().all(|&t| runnable_param(t)) {
            out.unrunnable += 1;
            continue;
        }
        out.functions += 1;
        let kb = add_wrapper(&mut b, bid);
        let ka = add_wrapper(&mut a, fid);
        for seed in 0..u64::from(runs) {
            let (args, mem) = inputs(&f.sig.params, f.sig.ret.is_some(), seed);
            let launch = |limit: u64| {
                let mut l = Launch::linear(1, 1, args.clone());
                l.config = Config {
                    step_limit: limit,
                    ..Config::default()
                };
                l
            };
            let mut m0 = mem.clone();
            let mut r0 = run_kernel(&b, &kb, &launch(STEP_LIMIT), &mut m0);
            let mut m1 = mem.clone();
            // The output may take more steps than the input (new blocks, jumps).
            let r1 = match &r0 {
                Err(e) if e.kind() != ErrorKind::StepLimit => {
                    out.not_comparable += 1;
                    let kind = format!("{:?}", e.kind());
                    match out.input_errors.iter_mut().find(|(k, _)| *k == kind) {
                        Some(slot) => slot.1 += 1,
                        None => out.input_errors.push((kind, 1)),
                    }
                    continue;
                }
                _ => run_kernel(&a, &ka, &launch(4 * STEP_LIMIT), &mut m1),
            };
            let diff = match (&r0, r1) {
                (Err(_), Err(e1)) if e1.kind() == ErrorKind::StepLimit => {
                    out.endless += 1;
                    continue;
                }
                // In a `mustprogress` function an endless input may be an endless loop
                // without effects, which is undefined behaviour: any output will do.
                (Err(_), _) if f.must_progress => {
                    out.not_comparable += 1;
                    continue;
                }
                (Err(_), Ok(_)) => {
                    // The input may just need more steps: give it plenty.
                    m0 = mem.clone();
                    r0 = run_kernel(&b, &kb, &launch(16 * STEP_LIMIT), &mut m0);
                    match &r0 {
                        Ok(_) => memory_difference(&m0, &m1),
                        Err(e) => Some(format!("output finishes, input does not: {e}")),
                    }
                }
                (_, Err(e)) => Some(format!("input succeeds, output fails: {e}")),
                (Ok(_), Ok(_)) => memory_difference(&m0, &m1),
            };
            out.runs += 1;
            if let Some(d) = diff {
                out.failures.push(format!("@{} (seed {seed}): {d}", f.name));
                break;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const SRC: &str = "
define i32 @sum(i32 %n, i32* %p) {
entry:
  br label %h
h:
  %i = phi i32 [ 0, %entry ], [ %i1, %h ]
  %s = phi i32 [ 0, %entry ], [ %s1, %h ]
  %q = getelementptr i32, i32* %p, i32 %i
  %v = load i32, i32* %q
  %s1 = add i32 %s, %v
  %i1 = add i32 %i, 1
  %c = icmp slt i32 %i1, %n
  br i1 %c, label %h, label %exit
exit:
  ret i32 %s1
}
";

    #[test]
    fn identical_modules_behave_the_same() {
        let m = gyre_llvm::import_module(SRC).expect("test input imports");
        let b = compare(&m, &m, &[], 6);
        assert_eq!(b.functions, 1);
        assert!(b.failures.is_empty(), "{:?}", b.failures);
        assert!(b.runs > 0, "{b:?}");
    }

    #[test]
    fn a_changed_result_is_found() {
        let m = gyre_llvm::import_module(SRC).expect("test input imports");
        let changed = SRC.replace("%s1 = add i32 %s, %v", "%s1 = sub i32 %s, %v");
        let m2 = gyre_llvm::import_module(&changed).expect("test input imports");
        let b = compare(&m, &m2, &[], 6);
        assert_eq!(b.failures.len(), 1, "{b:?}");
        assert!(b.failures[0].starts_with("@sum"), "{:?}", b.failures);
    }

    const ENDLESS: &str = "
define void @spin(i32* %p) {
entry:
  br label %h
h:
  store i32 1, i32* %p
  br label %h
}
";

    #[test]
    fn endless_loops_must_stay_endless() {
        let m = gyre_llvm::import_module(ENDLESS).expect("test input imports");
        let b = compare(&m, &m, &[], 2);
        assert_eq!((b.endless, b.runs), (2, 0), "{b:?}");
        assert!(b.failures.is_empty(), "{:?}", b.failures);
        // A 'transform' that drops the loop finishes where the input never does.
        let done = gyre_llvm::import_module(
            "define void @spin(i32* %p) {\nentry:\n  store i32 1, i32* %p\n  ret void\n}\n",
        )
        .expect("test input imports");
        let b = compare(&m, &done, &[], 2);
        assert_eq!(b.failures.len(), 1, "{b:?}");
        assert!(
            b.failures[0].contains("output finishes, input does not"),
            "{:?}",
            b.failures
        );
    }

    #[test]
    fn functions_calling_externals_run_with_stubs() {
        let src =
            "declare void @g()\ndefine void @f() {\nentry:\n  call void @g()\n  ret void\n}\n";
        let opts = gyre_llvm::ImportOptions {
            external_calls: gyre_llvm::ExternalCalls::Stub,
        };
        let m = gyre_llvm::import_module_with(src, &opts).expect("test input imports");
        let b = compare(&m, &m, &["g".to_string()], 2);
        assert_eq!((b.functions, b.external, b.runs), (1, 1, 2));
    }
}
