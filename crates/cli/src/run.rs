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
    /// The kernel to launch.
    #[arg(long)]
    pub kernel: String,
    /// CTAs per grid dimension: `X[,Y[,Z]]`.
    #[arg(long, default_value = "1")]
    pub grid: String,
    /// Threads per CTA dimension: `X[,Y[,Z]]`.
    #[arg(long, default_value = "1")]
    pub block: String,
    /// A kernel argument `INDEX=VALUE` (also `vN=VALUE` naming the entry parameter):
    /// an integer, a float (`1.5`, `1e3`), `@NAME` for the address of a buffer, or
    /// `bytes:HEX` for the bytes of a `byval` parameter (`bytes:01020304`).
    #[arg(long = "arg", value_name = "NAME=VALUE")]
    pub args: Vec<String>,
    /// A global buffer `NAME=TYPE:COUNT:INIT`, TYPE one of i8 i16 i32 i64 f32 f64,
    /// INIT one of `zeros`, `iota`, `random` or a file of raw little-endian bytes.
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
    /// Write the buffers as JSON to this file instead of printing them.
    #[arg(long)]
    pub json: Option<String>,
    /// Most IR instructions the launch may execute.
    #[arg(long)]
    pub step_limit: Option<u64>,
    /// Most memory the interpreter may hold, in bytes or with a K, M or G suffix
    /// (binary units): buffers, globals, shared and local memory with the interpreter's
    /// bookkeeping (about 34 bytes per byte of global and shared memory). Over it, the
    /// run stops with an error before allocating.
    #[arg(long, value_name = "BYTES", default_value = "4G", value_parser = parse_size)]
    pub memory_limit: u64,
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

#[derive(Copy, Clone, PartialEq, Eq)]
enum Elem {
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
    fn size(self) -> usize {
        match self {
            Elem::I8 => 1,
            Elem::I16 => 2,
            Elem::I32 | Elem::F32 => 4,
            Elem::I64 | Elem::F64 => 8,
        }
    }
    /// Render one little-endian element.
    fn show(self, b: &[u8]) -> String {
        let mut raw = [0u8; 8];
        raw[..b.len()].copy_from_slice(b);
        let bits = u64::from_le_bytes(raw);
        match self {
            Elem::I8 => (bits as u8 as i8).to_string(),
            Elem::I16 => (bits as u16 as i16).to_string(),
            Elem::I32 => (bits as u32 as i32).to_string(),
            Elem::I64 => (bits as i64).to_string(),
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

fn json_float(v: f64) -> String {
    if v.is_finite() {
        format!("{v:?}")
    } else {
        format!("\"{v}\"")
    }
}

fn parse_dims(what: &str, s: &str) -> Result<[u32; 3], CliError> {
    let parts: Vec<&str> = s.split(',').collect();
    if parts.is_empty() || parts.len() > 3 {
        return Err(CliError(format!("--{what} '{s}': expected X[,Y[,Z]]")));
    }
    let mut dims = [1u32; 3];
    for (d, p) in dims.iter_mut().zip(&parts) {
        *d = p
            .trim()
            .parse()
            .ok()
            .filter(|&n: &u32| n > 0)
            .ok_or_else(|| CliError(format!("--{what} '{s}': '{p}' is not a positive integer")))?;
    }
    Ok(dims)
}

struct Buffer {
    name: String,
    elem: Elem,
    initial: Vec<u8>,
}

fn parse_buffer(spec: &str, seed: &mut u64, max_bytes: u64) -> Result<Buffer, CliError> {
    let bad = |m: &str| CliError(format!("--buffer '{spec}': {m}"));
    let (name, rest) = spec
        .split_once('=')
        .ok_or_else(|| bad("expected NAME=TYPE:COUNT:INIT"))?;
    let mut it = rest.splitn(3, ':');
    let (ty, count, init) = match (it.next(), it.next(), it.next()) {
        (Some(t), Some(c), Some(i)) => (t, c, i),
        _ => return Err(bad("expected NAME=TYPE:COUNT:INIT")),
    };
    let elem = Elem::parse(ty).ok_or_else(|| bad("TYPE must be one of i8 i16 i32 i64 f32 f64"))?;
    let count: usize = count.parse().map_err(|_| bad("COUNT is not a number"))?;
    if count
        .checked_mul(elem.size())
        .is_none_or(|n| n as u64 > max_bytes)
    {
        return Err(bad(&format!(
            "buffer larger than the {max_bytes} bytes the memory limit leaves \
             (--memory-limit)"
        )));
    }
    let initial = match init {
        "zeros" | "iota" | "random" => (0..count).flat_map(|i| elem.init(init, i, seed)).collect(),
        path => {
            let limit = (count * elem.size()) as u64;
            let mut data = input::read_bytes_limited(path, limit).map_err(|CliError(e)| bad(&e))?;
            data.resize(count * elem.size(), 0);
            data
        }
    };
    Ok(Buffer {
        name: name.to_string(),
        elem,
        initial,
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
        path => {
            let mut data =
                input::read_bytes_limited(path, size as u64).map_err(|CliError(e)| bad(&e))?;
            data.resize(size, 0);
            data
        }
    };
    Ok(Buffer {
        name: name.to_string(),
        elem,
        initial,
    })
}

fn parse_arg(spec: &str, nparams: usize) -> Result<(usize, Arg), CliError> {
    let bad = |m: String| CliError(format!("--arg '{spec}': {m}"));
    let (name, value) = spec
        .split_once('=')
        .ok_or_else(|| bad("expected NAME=VALUE".into()))?;
    let idx: usize = name
        .trim_start_matches('v')
        .parse()
        .map_err(|_| bad(format!("'{name}' is not a parameter index (0..{nparams})")))?;
    if idx >= nparams {
        return Err(bad(format!("the kernel has {nparams} parameters")));
    }
    let arg = if let Some(buf) = value.strip_prefix('@') {
        Arg::buffer(buf)
    } else if let Some(hex) = value.strip_prefix("bytes:") {
        // A byval parameter's bytes, in memory order: `bytes:0a0b0c0d`.
        if hex.len() % 2 != 0 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(bad(format!("'{hex}' is not an even number of hex digits")));
        }
        Arg::Bytes(
            (0..hex.len())
                .step_by(2)
                .map(|k| u8::from_str_radix(&hex[k..k + 2], 16).expect("checked hex"))
                .collect(),
        )
    } else if let Ok(i) = value.parse::<i64>() {
        Arg::Int(i as u64)
    } else if let Ok(f) = value.parse::<f64>() {
        Arg::F64(f)
    } else {
        return Err(bad(format!(
            "'{value}' is not an integer, float, @buffer or bytes:HEX"
        )));
    };
    Ok((idx, arg))
}

/// `gyre run`.
pub fn run(args: &RunArgs) -> Result<(), CliError> {
    let (name, module) = input::load_module(&args.input)?;
    input::verify(&name, &module)?;
    let func = module
        .func_by_name(&args.kernel)
        .map(|id| &module.functions[id])
        .ok_or_else(|| CliError(format!("{name}: no function named @{}", args.kernel)))?;
    let params = &func.sig.params;
    let mut kernel_args: Vec<Option<Arg>> = vec![None; params.len()];
    for a in &args.args {
        let (i, mut arg) = parse_arg(a, params.len())?;
        // A float literal for an f32 parameter is an f32; an integer for a float is a float.
        arg = match (arg, params[i]) {
            (Arg::F64(f), gyre_ir::Type::F32) => Arg::F32(f as f32),
            (Arg::Int(n), gyre_ir::Type::F32) => Arg::F32(n as i64 as f32),
            (Arg::Int(n), gyre_ir::Type::F64) => Arg::F64(n as i64 as f64),
            (a, _) => a,
        };
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
    let mut seed = args.seed;
    let mut memory = Memory::new();
    let mut buffers = Vec::new();
    // Each buffer byte costs the interpreter its value, poison flag and race shadow.
    let per_byte = 2 + gyre_interp::SHADOW_BYTES;
    let mut left = args.memory_limit / per_byte;
    for spec in &args.buffers {
        let b = parse_buffer(spec, &mut seed, left)?;
        left -= b.initial.len() as u64;
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
    let mut launch = Launch::new(
        parse_dims("grid", &args.grid)?,
        parse_dims("block", &args.block)?,
        kernel_args
            .into_iter()
            .map(|a| a.expect("checked above"))
            .collect(),
    );
    launch.dynamic_shared_bytes = args.dynamic_shared;
    if let Some(limit) = args.step_limit {
        launch.config.step_limit = limit;
    }
    launch.config.memory_limit = args.memory_limit;
    let res = run_kernel(&module, &args.kernel, &launch, &mut memory);
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
    // Show the buffers whose contents changed.
    let mut text = printed.clone();
    let mut json = format!(
        "{{\"steps\": {}, \"printf\": {}, \"buffers\": {{",
        outcome.steps,
        json_string(&printed)
    );
    let mut first = true;
    for b in &buffers {
        let now = memory.bytes(&b.name).expect("buffer allocated above");
        if now == b.initial.as_slice() {
            continue;
        }
        let vals: Vec<String> = now
            .chunks_exact(b.elem.size())
            .map(|c| b.elem.show(c))
            .collect();
        let _ = writeln!(text, "{} = [{}]", b.name, vals.join(", "));
        let _ = write!(
            json,
            "{}\"{}\": [{}]",
            if first { "" } else { ", " },
            b.name,
            vals.join(", ")
        );
        first = false;
    }
    json.push_str("}}\n");
    match &args.json {
        Some(path) => input::write_output(Some(path), &json),
        None => input::write_output(None, &text),
    }
}

/// `s` as a JSON string literal.
fn json_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}
