//! `gyre run`: execute a kernel in the reference interpreter and show what it wrote.

use crate::input;
use crate::CliError;
use gyre_interp::{run_kernel, Arg, Launch, Memory};
use std::fmt::Write as _;

/// Arguments of `gyre run`.
#[derive(clap::Args)]
pub struct RunArgs {
    /// Input file, or `-`.
    pub input: String,
    /// The kernel to launch (`saxpy` or `@saxpy`). A device function runs on one thread
    /// and its return value is printed, as `lli` runs `main`.
    #[arg(long)]
    pub kernel: String,
    /// CTAs per grid dimension: `X[,Y[,Z]]` (at most 2147483647, 65535, 65535).
    #[arg(long, default_value = "1")]
    pub grid: String,
    /// Threads per CTA dimension: `X[,Y[,Z]]` (at most 1024, 1024, 64, and 1024 in all).
    #[arg(long, default_value = "1")]
    pub block: String,
    /// A kernel argument `INDEX=VALUE` (also `vN=VALUE` naming the entry parameter):
    /// an integer, a float (`1.5`, `1e3`), `@NAME` for the address of a buffer, or
    /// `bytes:HEX` for the bytes of a `byval` parameter (`bytes:01020304`).
    #[arg(long = "arg", value_name = "NAME=VALUE")]
    pub args: Vec<String>,
    /// A global buffer `NAME=TYPE:COUNT:INIT`, TYPE one of i8 i16 i32 i64 f32 f64,
    /// INIT one of `zeros`, `iota`, `random` or a file of raw little-endian bytes (whose
    /// size must be COUNT elements); `NAME=FILE:TYPE` (or `NAME=TYPE:FILE`) takes the
    /// count from the file's size.
    #[arg(long = "buffer", value_name = "NAME=TYPE:COUNT:INIT")]
    pub buffers: Vec<String>,
    /// The contents of a host-initialised (`externally_initialized`) global `NAME=INIT`,
    /// INIT one of `init` (the initializer the module was compiled with), `zeros`,
    /// `iota`, `random` or a file of raw little-endian bytes; type and size are the
    /// global's. Such a global is an input of the launch: without this option the run
    /// fails rather than read zeros.
    #[arg(long = "global", value_name = "NAME=INIT")]
    pub globals: Vec<String>,
    /// Bytes of dynamic shared memory per CTA (CUDA's third launch parameter), the
    /// storage of `extern` shared arrays.
    #[arg(long, default_value_t = 0)]
    pub dynamic_shared: u32,
    /// Seed for `random` buffers.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Write the buffers as JSON to this file (`-`: standard output) instead of printing
    /// them.
    #[arg(long)]
    pub json: Option<String>,
    /// Which buffers to show: those the launch wrote to (even with the values they
    /// held), those whose contents changed, or all.
    #[arg(long, value_enum, default_value = "written")]
    pub print: PrintBuffers,
    /// Most IR instructions the launch may execute.
    #[arg(long)]
    pub step_limit: Option<u64>,
    /// Most memory the interpreter may hold, in bytes or with a K, M or G suffix
    /// (binary units): buffers, globals, shared and local memory with the interpreter's
    /// bookkeeping (about 34 bytes per byte of global and shared memory). Over it, the
    /// run stops with an error before allocating.
    #[arg(long, value_name = "BYTES", default_value = "4G", value_parser = parse_size)]
    pub memory_limit: u64,
    /// Run on the GPU (through the CUDA driver, loaded at run time) instead of the
    /// interpreter: compile for the device's own sm_XX, launch with the same grid,
    /// block, buffers and arguments, and print the buffers the same way. `written` is
    /// `changed` on the device, which cannot tell a store of the old value.
    #[arg(long)]
    pub gpu: bool,
    /// Run the interpreter and the GPU and report, per buffer, the first element where
    /// they differ (floats exact, or within --ulps when the kernel uses approximate
    /// opcodes); exits non-zero if any differs. Implies --gpu.
    #[arg(long)]
    pub compare: bool,
    /// Time N launches after the first (a warm-up), each from the initial buffers, and
    /// report the median kernel time from CUDA events. Implies --gpu.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub time: Option<u32>,
    /// Run this PTX file (for example llc's) on the GPU instead of Gyre's PTX, with the
    /// same inputs; its entry is the kernel's name (as Gyre or llc spell it). Implies
    /// --gpu.
    #[arg(long, value_name = "FILE")]
    pub ptx: Option<String>,
    /// The float bound of --compare, in units in the last place. Default: exact, or 4
    /// ulp (plus 2^-20 absolute for sin, cos and lg2) when the kernel uses approximate
    /// opcodes.
    #[arg(long, value_name = "N")]
    pub ulps: Option<u64>,
}

impl RunArgs {
    /// Does this run use the GPU?
    pub fn on_gpu(&self) -> bool {
        self.gpu || self.compare || self.time.is_some() || self.ptx.is_some()
    }
}

/// `123`, `64K`, `512M`, `4G` (binary units).
fn parse_size(s: &str) -> Result<u64, String> {
    let (digits, shift) = match s.as_bytes().last() {
        Some(b'K' | b'k') => (&s[..s.len() - 1], 10),
        Some(b'M' | b'm') => (&s[..s.len() - 1], 20),
        Some(b'G' | b'g') => (&s[..s.len() - 1], 30),
        _ => (s, 0),
    };
    digits
        .parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(1 << shift))
        .ok_or_else(|| format!("'{s}' is not a size (bytes, or a number with K, M or G)"))
}

/// Which buffers `gyre run` shows.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum PrintBuffers {
    /// Every buffer the launch stored to.
    Written,
    /// Every buffer whose contents differ from the initial ones.
    Changed,
    /// Every buffer.
    All,
}

/// The element type of a buffer.
#[derive(Copy, Clone, PartialEq, Eq)]
pub(crate) enum Elem {
    I8,
    I16,
    I32,
    I64,
    F32,
    F64,
}

impl Elem {
    fn parse(s: &str) -> Option<Elem> {
        Some(match s {
            "i8" => Elem::I8,
            "i16" => Elem::I16,
            "i32" => Elem::I32,
            "i64" => Elem::I64,
            "f32" => Elem::F32,
            "f64" => Elem::F64,
            _ => return None,
        })
    }
    pub(crate) fn size(self) -> usize {
        match self {
            Elem::I8 => 1,
            Elem::I16 => 2,
            Elem::I32 | Elem::F32 => 4,
            Elem::I64 | Elem::F64 => 8,
        }
    }
    /// One little-endian element as a JSON value; a float that is not finite is the
    /// string `"inf"`, `"-inf"` or `"NaN"`, which JSON numbers cannot say.
    pub(crate) fn value(self, b: &[u8]) -> serde_json::Value {
        let mut raw = [0u8; 8];
        raw[..b.len()].copy_from_slice(b);
        let bits = u64::from_le_bytes(raw);
        match self {
            Elem::I8 => (bits as u8 as i8).into(),
            Elem::I16 => (bits as u16 as i16).into(),
            Elem::I32 => (bits as u32 as i32).into(),
            Elem::I64 => (bits as i64).into(),
            Elem::F32 => json_float(f64::from(f32::from_bits(bits as u32))),
            Elem::F64 => json_float(f64::from_bits(bits)),
        }
    }
    /// The little-endian bytes of element `i` for an initializer.
    fn init(self, kind: &str, i: usize, rng: &mut u64) -> Vec<u8> {
        let v: f64 = match kind {
            "zeros" => 0.0,
            "iota" => i as f64,
            _ => {
                // SplitMix64: small, deterministic, good enough for test inputs.
                *rng = rng.wrapping_add(0x9e37_79b9_7f4a_7c15);
                let mut z = *rng;
                z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
                z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
                z ^= z >> 31;
                match self {
                    Elem::F32 | Elem::F64 => (z >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0,
                    _ => ((z % 201) as i64 - 100) as f64,
                }
            }
        };
        match self {
            Elem::I8 => vec![v as i8 as u8],
            Elem::I16 => (v as i16).to_le_bytes().to_vec(),
            Elem::I32 => (v as i32).to_le_bytes().to_vec(),
            Elem::I64 => (v as i64).to_le_bytes().to_vec(),
            Elem::F32 => (v as f32).to_le_bytes().to_vec(),
            Elem::F64 => v.to_le_bytes().to_vec(),
        }
    }
}

/// An interpreter error at its place in the input (`file:line:col`, the line and a
/// caret) when the input was `.gir` text, else `file: error: ...`.
fn render_exec_error(input: &input::Input, e: &gyre_interp::ExecError) -> String {
    let at = e.location().and_then(|loc| {
        let (src, map) = input.source()?;
        Some((src, map.inst(loc.func, loc.inst)?))
    });
    match at {
        Some((src, pos)) => {
            let (line, col) = gyre_ir::parser::line_col(src, pos);
            let mut out = String::new();
            gyre_ir::parser::render_at(
                &mut out,
                &input.name,
                src,
                line,
                col,
                &format!("error: {e}"),
            );
            out
        }
        None => format!("{input}: error: {e}"),
    }
}

fn json_float(v: f64) -> serde_json::Value {
    serde_json::Number::from_f64(v).map_or_else(|| v.to_string().into(), Into::into)
}

/// A value as `gyre run` prints it: numbers as Rust prints them (`1.0`, `-3`), the
/// strings standing for non-finite floats bare (`inf`, `NaN`).
pub(crate) fn show(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::String(s) => s.clone(),
        serde_json::Value::Number(n) => match n.as_f64() {
            Some(f) if n.is_f64() => format!("{f:?}"),
            _ => n.to_string(),
        },
        other => other.to_string(),
    }
}

/// CUDA's limits on a launch: threads per CTA dimension and in all, CTAs per grid
/// dimension (compute capability 7.0 and later).
const BLOCK_LIMITS: [u32; 3] = [1024, 1024, 64];
const BLOCK_THREADS: u64 = 1024;
const GRID_LIMITS: [u32; 3] = [i32::MAX as u32, 65535, 65535];

fn parse_dims(what: &str, s: &str) -> Result<[u32; 3], CliError> {
    let parts: Vec<&str> = s.split(',').collect();
    if parts.is_empty() || parts.len() > 3 {
        return Err(CliError(format!("--{what} '{s}': expected X[,Y[,Z]]")));
    }
    let limits = if what == "block" {
        BLOCK_LIMITS
    } else {
        GRID_LIMITS
    };
    let mut dims = [1u32; 3];
    for (k, (d, p)) in dims.iter_mut().zip(&parts).enumerate() {
        *d = p
            .trim()
            .parse()
            .ok()
            .filter(|&n: &u32| n > 0)
            .ok_or_else(|| CliError(format!("--{what} '{s}': '{p}' is not a positive integer")))?;
        if *d > limits[k] {
            return Err(CliError(format!(
                "--{what} '{s}': {} is at most {} (CUDA's limit)",
                ["x", "y", "z"][k],
                limits[k]
            )));
        }
    }
    let threads: u64 = dims.iter().map(|&d| u64::from(d)).product();
    if what == "block" && threads > BLOCK_THREADS {
        return Err(CliError(format!(
            "--block '{s}': {threads} threads per CTA; CUDA allows at most {BLOCK_THREADS}"
        )));
    }
    Ok(dims)
}

/// Read a file-backed initializer and check its size against `size` bytes, or (with
/// `None`) against whole elements of `elem_size` bytes.
fn read_init_file(path: &str, size: Option<usize>, elem_size: usize) -> Result<Vec<u8>, String> {
    let meta = std::fs::metadata(path).map_err(|e| format!("cannot read {path}: {e}"))?;
    // Checked before reading: a huge file (or /dev/zero) is refused, not read.
    let limit = size.unwrap_or(1 << 32) as u64;
    if !meta.is_file() || meta.len() > limit {
        if !meta.is_file() {
            return Err(format!("{path} is not a regular file"));
        }
        return Err(format!(
            "{path} has {} bytes; the buffer takes {limit}",
            meta.len()
        ));
    }
    let data = std::fs::read(path).map_err(|e| format!("cannot read {path}: {e}"))?;
    match size {
        Some(n) if data.len() != n => Err(format!(
            "{path} has {} bytes; the buffer takes {n}",
            data.len()
        )),
        None if data.len() % elem_size != 0 => Err(format!(
            "{path} has {} bytes, not a whole number of {elem_size}-byte elements",
            data.len()
        )),
        _ => Ok(data),
    }
}

/// A buffer or host-initialised global of a run and its initial contents.
pub(crate) struct Buffer {
    pub(crate) name: String,
    pub(crate) elem: Elem,
    pub(crate) initial: Vec<u8>,
    /// A `--global` (a global of the module), not a `--buffer`.
    pub(crate) global: bool,
}

fn parse_buffer(spec: &str, seed: &mut u64, max_bytes: u64) -> Result<Buffer, CliError> {
    let bad = |m: &str| CliError(format!("--buffer '{spec}': {m}"));
    let (name, rest) = spec
        .split_once('=')
        .ok_or_else(|| bad("expected NAME=TYPE:COUNT:INIT"))?;
    if name.is_empty() {
        return Err(bad("the buffer needs a name"));
    }
    let parts: Vec<&str> = rest.splitn(3, ':').collect();
    let types = "TYPE must be one of i8 i16 i32 i64 f32 f64";
    let (elem, initial) = match parts.as_slice() {
        [ty, count, init] => {
            let elem = Elem::parse(ty).ok_or_else(|| bad(types))?;
            let count: usize = count.parse().map_err(|_| bad("COUNT is not a number"))?;
            let size = count
                .checked_mul(elem.size())
                .filter(|&n| n as u64 <= max_bytes)
                .ok_or_else(|| {
                    bad(&format!(
                        "buffer larger than the {max_bytes} bytes the memory limit leaves \
                         (--memory-limit)"
                    ))
                })?;
            let initial = match *init {
                "zeros" | "iota" | "random" => {
                    (0..count).flat_map(|i| elem.init(init, i, seed)).collect()
                }
                path => read_init_file(path, Some(size), elem.size()).map_err(|m| bad(&m))?,
            };
            (elem, initial)
        }
        // A file-backed buffer without a count: `in.bin:f32` or `f32:in.bin`.
        [a, b] => {
            let (elem, path) = match (Elem::parse(a), Elem::parse(b)) {
                (Some(e), None) => (e, *b),
                (None, Some(e)) => (e, *a),
                _ => return Err(bad("expected NAME=TYPE:COUNT:INIT or NAME=FILE:TYPE")),
            };
            if matches!(path, "zeros" | "iota" | "random") {
                return Err(bad(&format!(
                    "'{path}' needs a count: NAME=TYPE:COUNT:{path}"
                )));
            }
            let data = read_init_file(path, None, elem.size()).map_err(|m| bad(&m))?;
            if data.len() as u64 > max_bytes {
                return Err(bad(&format!(
                    "{path} has {} bytes, more than the {max_bytes} the memory limit leaves \
                     (--memory-limit)",
                    data.len()
                )));
            }
            (elem, data)
        }
        _ => return Err(bad("expected NAME=TYPE:COUNT:INIT or NAME=FILE:TYPE")),
    };
    Ok(Buffer {
        name: name.to_string(),
        elem,
        initial,
        global: false,
    })
}

/// A `--global NAME=INIT` buffer, typed and sized after the global of `module`.
fn parse_global(
    spec: &str,
    module: &gyre_ir::Module,
    seed: &mut u64,
    max_bytes: u64,
) -> Result<Buffer, CliError> {
    use gyre_ir::Type;
    let bad = |m: &str| CliError(format!("--global '{spec}': {m}"));
    let (name, init) = spec
        .split_once('=')
        .ok_or_else(|| bad("expected NAME=INIT"))?;
    let g = module
        .global_by_name(name)
        .map(|id| &module.globals[id])
        .ok_or_else(|| bad(&format!("the module has no global @{name}")))?;
    if !g.externally_initialized {
        return Err(bad(&format!(
            "@{name} is not externally_initialized: its contents are the module's"
        )));
    }
    let elem = match g.elem {
        Type::I1 | Type::I8 => Elem::I8,
        Type::I16 => Elem::I16,
        Type::I32 => Elem::I32,
        Type::I64 | Type::Ptr(_) => Elem::I64,
        Type::F32 => Elem::F32,
        Type::F64 => Elem::F64,
    };
    if g.size() > max_bytes {
        return Err(bad(&format!(
            "@{name} has {} bytes, more than the {max_bytes} the memory limit leaves \
             (--memory-limit)",
            g.size()
        )));
    }
    let count = g.count as usize;
    let size = g.size() as usize;
    let initial = match init {
        "init" => {
            let mut bytes = vec![0u8; size];
            let n = g.elem.bytes() as usize;
            for (i, &bits) in g.init.iter().flatten().enumerate().take(count) {
                bytes[i * n..(i + 1) * n].copy_from_slice(&bits.to_le_bytes()[..n]);
            }
            bytes
        }
        "zeros" | "iota" | "random" => (0..count).flat_map(|i| elem.init(init, i, seed)).collect(),
        path => read_init_file(path, Some(size), elem.size()).map_err(|m| bad(&m))?,
    };
    Ok(Buffer {
        name: name.to_string(),
        elem,
        initial,
        global: true,
    })
}

/// Parse one `--arg INDEX=VALUE` against the parameter it names: the value must fit the
/// parameter's type (an integer in its range, a float for a float, `@BUFFER` or an
/// address for a pointer, `bytes:HEX` of the right size for a `byval` parameter).
fn parse_arg(spec: &str, func: &gyre_ir::Function) -> Result<(usize, Arg), CliError> {
    use gyre_ir::Type;
    let bad = |m: String| CliError(format!("--arg '{spec}': {m}"));
    let nparams = func.sig.params.len();
    let (name, value) = spec
        .split_once('=')
        .ok_or_else(|| bad("expected NAME=VALUE".into()))?;
    let idx: usize = name
        .trim_start_matches('v')
        .parse()
        .map_err(|_| bad(format!("'{name}' is not a parameter index (0..{nparams})")))?;
    if idx >= nparams {
        return Err(bad(format!("@{} has {nparams} parameters", func.name)));
    }
    let ty = func.sig.params[idx];
    let wrong = |what: &str| bad(format!("parameter {idx} is {ty}: {what}"));
    if let Some(b) = func.byval_param(idx) {
        let Some(hex) = value.strip_prefix("bytes:") else {
            return Err(wrong(&format!(
                "a byval parameter takes its {} bytes as bytes:HEX",
                b.size
            )));
        };
        if hex.len() % 2 != 0 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(bad(format!("'{hex}' is not an even number of hex digits")));
        }
        if hex.len() / 2 != b.size as usize {
            return Err(wrong(&format!(
                "{} bytes given, the byval parameter has {}",
                hex.len() / 2,
                b.size
            )));
        }
        // A byval parameter's bytes, in memory order: `bytes:0a0b0c0d`.
        let bytes = (0..hex.len())
            .step_by(2)
            .map(|k| u8::from_str_radix(&hex[k..k + 2], 16).unwrap_or(0))
            .collect();
        return Ok((idx, Arg::Bytes(bytes)));
    }
    if value.starts_with("bytes:") {
        return Err(wrong("bytes:HEX is for byval parameters only"));
    }
    let int = parse_int(value);
    let arg = match ty {
        Type::Ptr(space) => {
            if let Some(buf) = value.strip_prefix('@') {
                if !matches!(
                    space,
                    gyre_ir::AddrSpace::Global | gyre_ir::AddrSpace::Generic
                ) {
                    return Err(wrong("a buffer is global memory; give an address instead"));
                }
                Arg::buffer(buf)
            } else {
                match int {
                    Some(n) if (0..=i128::from(u64::MAX)).contains(&n) => Arg::Ptr(n as u64),
                    _ => return Err(wrong(&format!("'{value}' is not @BUFFER or an address"))),
                }
            }
        }
        Type::F32 | Type::F64 => {
            let f: f64 = value
                .parse()
                .map_err(|_| wrong(&format!("'{value}' is not a number")))?;
            if ty == Type::F32 {
                if f.is_finite() && f.abs() > f64::from(f32::MAX) {
                    return Err(wrong(&format!("{value} does not fit f32")));
                }
                Arg::F32(f as f32)
            } else {
                Arg::F64(f)
            }
        }
        _ => {
            let bits = ty.bits();
            let n = int.ok_or_else(|| wrong(&format!("'{value}' is not an integer")))?;
            // Signed or unsigned: -2^(bits-1) ..= 2^bits - 1.
            let lo = -(1i128 << (bits - 1));
            let hi = (1i128 << bits) - 1;
            if n < lo || n > hi {
                return Err(wrong(&format!(
                    "{value} does not fit (it takes {lo} to {hi})"
                )));
            }
            Arg::Int(n as u64)
        }
    };
    Ok((idx, arg))
}

/// An integer in decimal or `0x` hexadecimal, with an optional sign.
fn parse_int(s: &str) -> Option<i128> {
    let (neg, digits) = match s.strip_prefix('-') {
        Some(d) => (true, d),
        None => (false, s.strip_prefix('+').unwrap_or(s)),
    };
    let n = match digits
        .strip_prefix("0x")
        .or_else(|| digits.strip_prefix("0X"))
    {
        Some(h) if !h.is_empty() && h.bytes().all(|b| b.is_ascii_hexdigit()) => {
            i128::from_str_radix(h, 16).ok()?
        }
        _ if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) => {
            digits.parse().ok()?
        }
        _ => return None,
    };
    Some(if neg { -n } else { n })
}

/// The kernel `gyre run` launches to run device function `f`: it calls `f` with its own
/// parameters and stores the result through one more, a buffer the caller reads.
fn device_wrapper(
    module: &gyre_ir::Module,
    f: &gyre_ir::Function,
) -> Result<(gyre_ir::Module, String), CliError> {
    let mut name = "__gyre_run".to_string();
    while module.func_by_name(&name).is_some() {
        name.push('_');
    }
    let params = &f.sig.params;
    let n = params.len();
    let mut types: Vec<String> = params.iter().map(|t| t.to_string()).collect();
    let mut args: Vec<String> = (0..n).map(|i| format!("v{i}: {}", params[i])).collect();
    let uses: Vec<String> = (0..n).map(|i| format!("v{i}")).collect();
    let call = format!("call @{}({})", f.name, uses.join(", "));
    let body = match f.sig.ret {
        Some(_) => {
            types.push("ptr.global".into());
            args.push(format!("v{n}: ptr.global"));
            format!("    v{} = {call}\n    store v{}, v{n}\n", n + 1, n + 1)
        }
        None => format!("    {call}\n"),
    };
    let text = format!(
        "{module}\nkernel @{name}({}) {{\nblock0({}):\n{body}    return\n}}\n",
        types.join(", "),
        args.join(", ")
    );
    let m = gyre_ir::parse_module(&text).map_err(|e| {
        CliError(format!(
            "cannot run @{}: {}",
            f.name,
            e.render("<wrapper>", &text)
        ))
    })?;
    Ok((m, name))
}

/// `gyre run`.
pub fn run(args: &RunArgs) -> Result<(), CliError> {
    let (name, module) = input::load_module(&args.input)?;
    input::verify(&name, &module)?;
    let fname = args.kernel.strip_prefix('@').unwrap_or(&args.kernel);
    let func = module
        .func_by_name(fname)
        .map(|id| &module.functions[id])
        .ok_or_else(|| CliError(format!("{name}: no function named @{fname}")))?;
    let device = func.kind == gyre_ir::FuncKind::Device;
    let grid = parse_dims("grid", &args.grid)?;
    let block = parse_dims("block", &args.block)?;
    if device && (grid != [1; 3] || block != [1; 3]) {
        return Err(CliError(format!(
            "@{fname} is a device function: it runs on one thread (leave out --grid and --block)"
        )));
    }
    if device && !func.byval.is_empty() {
        return Err(CliError(format!(
            "@{fname} is a device function with byval parameters, which gyre run cannot pass"
        )));
    }
    let params = &func.sig.params;
    let mut kernel_args: Vec<Option<Arg>> = vec![None; params.len()];
    for a in &args.args {
        let (i, arg) = parse_arg(a, func)?;
        if kernel_args[i].is_some() {
            return Err(CliError(format!(
                "--arg '{a}': parameter {i} is already given"
            )));
        }
        kernel_args[i] = Some(arg);
    }
    let missing: Vec<String> = kernel_args
        .iter()
        .enumerate()
        .filter(|(_, a)| a.is_none())
        .map(|(i, _)| format!("{i} ({})", params[i]))
        .collect();
    if !missing.is_empty() {
        return Err(CliError(format!(
            "missing --arg for parameter(s) {}",
            missing.join(", ")
        )));
    }
    let mut kernel_args: Vec<Arg> = kernel_args.into_iter().flatten().collect();
    let mut seed = args.seed;
    let mut memory = Memory::new();
    let mut buffers: Vec<Buffer> = Vec::new();
    // Each buffer byte costs the interpreter its value, poison flag and race shadow.
    let per_byte = 2 + gyre_interp::SHADOW_BYTES;
    let mut left = args.memory_limit / per_byte;
    for spec in &args.buffers {
        let b = parse_buffer(spec, &mut seed, left)?;
        left -= b.initial.len() as u64;
        if buffers.iter().any(|o| o.name == b.name) {
            return Err(CliError(format!(
                "--buffer '{spec}': a buffer named {} is already given",
                b.name
            )));
        }
        memory.alloc_buffer(&b.name, b.initial.clone());
        buffers.push(b);
    }
    for spec in &args.globals {
        let b = parse_global(spec, &module, &mut seed, left)?;
        left -= b.initial.len() as u64;
        if memory.contains(&b.name) {
            return Err(CliError(format!(
                "--global '{spec}': a buffer named {} is already given",
                b.name
            )));
        }
        memory.alloc_buffer(&b.name, b.initial.clone());
        buffers.push(b);
    }
    // A device function runs through a one-thread kernel that stores its result.
    let (wrapped, ret) = match (device, func.sig.ret) {
        (true, ret) => {
            let (m, kernel) = device_wrapper(&module, func)?;
            let mut ret_buf = None;
            if let Some(t) = ret {
                let mut buf = "__gyre_return".to_string();
                while memory.contains(&buf) {
                    buf.push('_');
                }
                memory.alloc_buffer(&buf, vec![0; t.bytes() as usize]);
                kernel_args.push(Arg::buffer(&buf));
                ret_buf = Some((buf, t));
            }
            (Some((m, kernel)), ret_buf)
        }
        (false, _) => (None, None),
    };
    let (run_module, run_name) = match &wrapped {
        Some((m, k)) => (m, k.as_str()),
        None => (&module, fname),
    };
    if args.dynamic_shared > 0
        && !module
            .globals
            .values()
            .any(|g| g.linkage == gyre_ir::Linkage::Extern)
    {
        eprintln!(
            "warning: --dynamic-shared {}: the module has no extern shared array to use it",
            args.dynamic_shared
        );
    }
    let mut launch = Launch::new(grid, block, kernel_args);
    launch.dynamic_shared_bytes = args.dynamic_shared;
    if let Some(limit) = args.step_limit {
        launch.config.step_limit = limit;
    }
    launch.config.memory_limit = args.memory_limit;
    let gpu_run = crate::gpu::GpuRun {
        args,
        input: &name,
        module: run_module,
        kernel: run_name,
        func: fname,
        kernel_args: &launch.args,
        buffers: &buffers,
        ret: ret.as_ref().map(|(b, t)| (b.as_str(), *t)),
        grid,
        block,
    };
    if args.on_gpu() && !args.compare {
        return crate::gpu::run(&gpu_run, None);
    }
    let res = run_kernel(run_module, run_name, &launch, &mut memory);
    // What device printf printed (by CTA, then thread), before the buffers; on an error
    // (a failed assert) too, as CUDA flushes it.
    let printed: String = memory
        .printf_output()
        .iter()
        .map(|l| l.text.as_str())
        .collect();
    let outcome = match res {
        Ok(o) => o,
        Err(e) => {
            if args.json.is_none() {
                input::write_output(None, &printed)?;
            }
            return Err(CliError(render_exec_error(&name, &e)));
        }
    };
    if args.compare {
        return crate::gpu::run(&gpu_run, Some((&memory, outcome.steps)));
    }
    let mut text = printed.clone();
    let mut shown = serde_json::Map::new();
    for b in &buffers {
        let now = memory.bytes(&b.name).expect("buffer allocated above");
        let show_it = match args.print {
            PrintBuffers::All => true,
            PrintBuffers::Changed => now != b.initial.as_slice(),
            PrintBuffers::Written => memory.written(&b.name) == Some(true),
        };
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
    let mut json = serde_json::Map::new();
    json.insert("steps".into(), outcome.steps.into());
    json.insert("printf".into(), printed.into());
    json.insert("buffers".into(), shown.into());
    if let Some((buf, t)) = ret {
        let bytes = memory.bytes(&buf).expect("allocated above");
        let v = return_value(t, bytes);
        let _ = writeln!(text, "@{fname} returned {t} {}", show(&v));
        json.insert("return".into(), v);
    }
    match &args.json {
        Some(path) => {
            let mut out = serde_json::to_string_pretty(&serde_json::Value::Object(json))
                .map_err(|e| CliError(format!("--json: {e}")))?;
            out.push('\n');
            input::write_output(Some(path), &out)
        }
        None => input::write_output(None, &text),
    }
}

/// A device function's result from the bytes the wrapper stored.
pub(crate) fn return_value(t: gyre_ir::Type, bytes: &[u8]) -> serde_json::Value {
    use gyre_ir::Type;
    let elem = match t {
        Type::F32 => Elem::F32,
        Type::F64 => Elem::F64,
        Type::I1 | Type::I8 => Elem::I8,
        Type::I16 => Elem::I16,
        Type::I32 => Elem::I32,
        Type::I64 => Elem::I64,
        Type::Ptr(_) => {
            let mut raw = [0u8; 8];
            raw.copy_from_slice(&bytes[..8]);
            return format!("{:#x}", u64::from_le_bytes(raw)).into();
        }
    };
    elem.value(bytes)
}
