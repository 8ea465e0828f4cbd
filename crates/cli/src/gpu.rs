//! `gyre run --gpu`, `--compare`, `--time` and `--ptx`: the run of `gyre run` on a real
//! GPU through the CUDA driver (crates/gpu), with the interpreter's inputs.

use crate::input;
use crate::run::{return_value, show, Buffer, Elem, PrintBuffers, RunArgs};
use crate::CliError;
use gyre_codegen_lite::{compile_module, mangle, CodegenOptions, Sm};
use gyre_gpu::compare::{first_difference, Bound, ElemKind};
use gyre_gpu::{best_target, entry_names, GlobalInit, Gpu, Job, KernelArg, LaunchShape};
use gyre_interp::{Arg, Memory};
use std::fmt::Write as _;

/// Everything `gyre run` prepared for a launch.
pub struct GpuRun<'a> {
    /// The command line.
    pub args: &'a RunArgs,
    /// The input, for messages.
    pub input: &'a input::Input,
    /// The module to compile (with the one-thread wrapper of a device function).
    pub module: &'a gyre_ir::Module,
    /// The kernel to launch (the wrapper for a device function).
    pub kernel: &'a str,
    /// The function the user named.
    pub func: &'a str,
    /// One argument per kernel parameter.
    pub kernel_args: &'a [Arg],
    /// Buffers and host-initialised globals with their initial contents.
    pub buffers: &'a [Buffer],
    /// The buffer a device function's result is stored to, and its type.
    pub ret: Option<(&'a str, gyre_ir::Type)>,
    /// Grid shape.
    pub grid: [u32; 3],
    /// Block shape.
    pub block: [u32; 3],
}

/// How llc spells a symbol that is not a PTX identifier (`.` and `@` become `_$_`).
fn llc_name(name: &str) -> String {
    name.replace(['.', '@'], "_$_")
}

/// The names `name` may have in PTX: Gyre's spelling, llc's, and as written.
fn spellings(name: &str) -> Vec<String> {
    let mut v = vec![mangle(name), llc_name(name), name.to_string()];
    v.dedup();
    v
}

fn elem_kind(e: Elem) -> ElemKind {
    match e {
        Elem::F32 => ElemKind::F32,
        Elem::F64 => ElemKind::F64,
        other => ElemKind::Int(other.size()),
    }
}

/// The default float bound of `--compare` for a module: exact, unless it uses
/// approximate opcodes, which the interpreter rounds exactly and the hardware does not
/// (2^-22 relative for ex2, rsqrt, and 2 ulp for the full-range division: 4 ulp leaves
/// room for one more rounding; sin, cos and lg2 bound the absolute error instead).
pub fn default_bound(module: &gyre_ir::Module) -> (Bound, Vec<&'static str>) {
    let mut used: Vec<&'static str> = Vec::new();
    for f in module.functions.values() {
        for b in f.layout.blocks() {
            for i in f.layout.block_insts(b) {
                let name = f.dfg.inst(i).opcode().name();
                if name.ends_with("_approx") && !used.contains(&name) {
                    used.push(name);
                }
            }
        }
    }
    if used.is_empty() {
        return (Bound::EXACT, used);
    }
    let absolute = used
        .iter()
        .any(|n| matches!(*n, "sin_approx" | "cos_approx" | "lg2_approx"));
    let bound = Bound {
        ulps: 4,
        abs: if absolute { (2f64).powi(-20) } else { 0.0 },
    };
    (bound, used)
}

/// The device's error as the user sees it.
fn gpu_error(e: gyre_gpu::GpuError) -> CliError {
    CliError(format!("gyre run --gpu: {e}"))
}

/// Run on the GPU; with `interp` (the interpreter's memory after its run, and its step
/// count) compare instead of printing.
pub fn run(r: &GpuRun, interp: Option<(&Memory, u64)>) -> Result<(), CliError> {
    let args = r.args;
    if args.ptx.is_some() && r.ret.is_some() {
        return Err(CliError(format!(
            "--ptx: @{} is a device function; an external PTX has no kernel to run it",
            r.func
        )));
    }
    // Inputs are checked before the device is opened: a bad --arg is the same error
    // with or without a GPU.
    let device_buffers: Vec<&Buffer> = r.buffers.iter().filter(|b| !b.global).collect();
    let mut contents: Vec<Vec<u8>> = device_buffers.iter().map(|b| b.initial.clone()).collect();
    let mut names: Vec<&str> = device_buffers.iter().map(|b| b.name.as_str()).collect();
    if let Some((buf, t)) = r.ret {
        contents.push(vec![0; t.bytes() as usize]);
        names.push(buf);
    }
    let mut kargs = Vec::with_capacity(r.kernel_args.len());
    for a in r.kernel_args {
        kargs.push(match a {
            Arg::Int(v) => KernelArg::Int(*v),
            Arg::F32(v) => KernelArg::F32(*v),
            Arg::F64(v) => KernelArg::F64(*v),
            Arg::Ptr(v) => KernelArg::Ptr(*v),
            Arg::Bytes(b) => KernelArg::Bytes(b.clone()),
            Arg::Buffer(name, off) => match names.iter().position(|n| n == name) {
                Some(i) => KernelArg::Buffer(i, *off),
                None => {
                    return Err(CliError(format!(
                        "--gpu: @{name} is a global of the module, not a --buffer: the \
                         GPU run passes only --buffer addresses"
                    )))
                }
            },
        });
    }
    let globals: Vec<GlobalInit> = r
        .buffers
        .iter()
        .filter(|b| b.global)
        .map(|b| GlobalInit {
            symbols: spellings(&b.name),
            bytes: b.initial.clone(),
        })
        .collect();
    let external = match &args.ptx {
        Some(path) => Some(input::read_source(path)?.1),
        None => None,
    };

    let gpu = Gpu::open().map_err(gpu_error)?;
    let cc = gpu.compute_capability();
    let numbers: Vec<u32> = Sm::ALL.iter().map(|s| s.number()).collect();
    let (ptx, target, entry) = match external {
        Some(text) => {
            let found = entry_names(&text);
            let entry = spellings(r.kernel)
                .into_iter()
                .find(|n| found.contains(n))
                .ok_or_else(|| {
                    CliError(format!(
                        "--ptx {}: no .entry for @{} (it has: {})",
                        args.ptx.as_deref().unwrap_or(""),
                        r.kernel,
                        found.join(", ")
                    ))
                })?;
            (text, "--ptx".to_string(), entry)
        }
        None => {
            let sm = best_target(cc, &numbers)
                .and_then(Sm::from_number)
                .ok_or_else(|| {
                    CliError(format!(
                        "gyre run --gpu: {} has compute capability {}.{}; Gyre targets \
                         sm_{} and later",
                        gpu.name(),
                        cc.0,
                        cc.1,
                        numbers[0]
                    ))
                })?;
            let ptx = compile_module(r.module, &CodegenOptions { sm })
                .map_err(|e| CliError(format!("{}: error: {e}", r.input)))?;
            (ptx, format!("sm_{}", sm.number()), mangle(r.kernel))
        }
    };
    let out = gpu
        .run(&Job {
            ptx: &ptx,
            entry: &entry,
            shape: LaunchShape {
                grid: r.grid,
                block: r.block,
                dynamic_shared: args.dynamic_shared,
            },
            args: &kargs,
            buffers: &contents,
            globals: &globals,
            timed_launches: args.time.unwrap_or(0),
        })
        .map_err(gpu_error)?;

    // The final contents of each buffer and global, in `r.buffers` order.
    let mut dev_bufs = out.buffers.iter();
    let mut dev_globals = out.globals.iter();
    let finals: Vec<&Vec<u8>> = r
        .buffers
        .iter()
        .map(|b| {
            if b.global {
                dev_globals.next()
            } else {
                dev_bufs.next()
            }
        })
        .collect::<Option<Vec<_>>>()
        .ok_or_else(|| CliError("gyre run --gpu: the device returned too few buffers".into()))?;
    let ret_bytes = r.ret.and(out.buffers.last());
    let device = format!("{} (compute capability {}.{})", gpu.name(), cc.0, cc.1);
    let mut json = serde_json::Map::new();
    json.insert("device".into(), device.clone().into());
    json.insert("target".into(), target.clone().into());
    let timing = out.median_ms().map(|m| {
        json.insert("time_ms".into(), f64::from(m).into());
        json.insert("timed_launches".into(), out.times_ms.len().into());
        format!(
            "@{}: median kernel time {m:.4} ms over {} launches on {device}, {target}\n",
            r.func,
            out.times_ms.len()
        )
    });
    let mut text = String::new();
    let mut failed = Vec::new();
    match interp {
        Some((memory, steps)) => {
            let (auto, used) = default_bound(r.module);
            let bound = args.ulps.map_or(auto, |u| Bound {
                ulps: u,
                abs: auto.abs,
            });
            let _ = writeln!(
                text,
                "compared the interpreter with {device}, {target}: floats {bound}{}",
                if used.is_empty() {
                    String::new()
                } else {
                    format!(" (approximate opcodes: {})", used.join(", "))
                }
            );
            json.insert("steps".into(), steps.into());
            json.insert("bound".into(), bound.to_string().into());
            let mut per = serde_json::Map::new();
            let mut pairs: Vec<(&str, Elem, &[u8])> = r
                .buffers
                .iter()
                .zip(&finals)
                .map(|(b, f)| (b.name.as_str(), b.elem, f.as_slice()))
                .collect();
            if let (Some((buf, t)), Some(bytes)) = (r.ret, ret_bytes) {
                pairs.push((buf, ret_elem(t), bytes.as_slice()));
            }
            for (name, elem, got) in pairs {
                let want = memory.bytes(name).unwrap_or(&[]);
                let kind = elem_kind(elem);
                let mut entry = serde_json::Map::new();
                match first_difference(kind, want, got, memory.poison(name), bound) {
                    None => {
                        let _ = writeln!(
                            text,
                            "{name}: equal ({} elements)",
                            want.len() / elem.size()
                        );
                        entry.insert("equal".into(), true.into());
                    }
                    Some(i) => {
                        let at = |s: &[u8]| {
                            s.get(i * elem.size()..(i + 1) * elem.size())
                                .map_or(serde_json::Value::Null, |c| elem.value(c))
                        };
                        let (a, b) = (at(want), at(got));
                        let _ = writeln!(
                            text,
                            "{name}: differs first at [{i}]: interpreter {}, gpu {}",
                            show(&a),
                            show(&b)
                        );
                        entry.insert("equal".into(), false.into());
                        entry.insert("index".into(), i.into());
                        entry.insert("interpreter".into(), a);
                        entry.insert("gpu".into(), b);
                        failed.push(name.to_string());
                    }
                }
                per.insert(name.to_string(), entry.into());
            }
            json.insert("equal".into(), failed.is_empty().into());
            json.insert("buffers".into(), per.into());
        }
        None => {
            let mut shown = serde_json::Map::new();
            for (b, now) in r.buffers.iter().zip(&finals) {
                // The device cannot tell which buffers were stored to: `written` shows
                // those that changed.
                let show_it = args.print == PrintBuffers::All || now.as_slice() != b.initial;
                if !show_it {
                    continue;
                }
                let vals: Vec<serde_json::Value> = now
                    .chunks_exact(b.elem.size())
                    .map(|c| b.elem.value(c))
                    .collect();
                let strs: Vec<String> = vals.iter().map(show).collect();
                let _ = writeln!(text, "{} = [{}]", b.name, strs.join(", "));
                shown.insert(b.name.clone(), vals.into());
            }
            json.insert("buffers".into(), shown.into());
            if let (Some((_, t)), Some(bytes)) = (r.ret, ret_bytes) {
                let v = return_value(t, bytes);
                let _ = writeln!(text, "@{} returned {t} {}", r.func, show(&v));
                json.insert("return".into(), v);
            }
        }
    }
    if let Some(t) = timing {
        text.push_str(&t);
    }
    match &args.json {
        Some(path) => {
            let mut s = serde_json::to_string_pretty(&serde_json::Value::Object(json))
                .map_err(|e| CliError(format!("--json: {e}")))?;
            s.push('\n');
            input::write_output(Some(path), &s)?;
        }
        None => input::write_output(None, &text)?,
    }
    if failed.is_empty() {
        Ok(())
    } else {
        Err(CliError(format!(
            "--compare: the GPU differs from the interpreter in {}",
            failed.join(", ")
        )))
    }
}

/// The element type of a device function's result buffer.
fn ret_elem(t: gyre_ir::Type) -> Elem {
    use gyre_ir::Type;
    match t {
        Type::F32 => Elem::F32,
        Type::F64 => Elem::F64,
        Type::I1 | Type::I8 => Elem::I8,
        Type::I16 => Elem::I16,
        Type::I32 => Elem::I32,
        Type::I64 | Type::Ptr(_) => Elem::I64,
    }
}
