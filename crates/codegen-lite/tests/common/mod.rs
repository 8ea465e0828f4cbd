//! Shared test helpers: finding and running ptxas, and running a kernel in both the IR
//! interpreter and the PTX simulator.
#![allow(dead_code)]

use gyre_codegen_lite::{compile_module, CodegenOptions, Sm};
use gyre_interp::{Arg, Inputs};
use gyre_ir::{Module, Type};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicU64, Ordering};

/// ptxas: `GYRE_PTXAS`, else the project's `.tools/venv`, else `ptxas` on `PATH`.
pub fn ptxas() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("GYRE_PTXAS") {
        let p = PathBuf::from(p);
        return p.is_file().then_some(p);
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let lib = root.join(".tools/venv/lib");
    if let Ok(entries) = std::fs::read_dir(&lib) {
        let mut found: Vec<PathBuf> = entries
            .filter_map(|e| e.ok())
            .map(|e| e.path().join("site-packages/nvidia/cuda_nvcc/bin/ptxas"))
            .filter(|p| p.is_file())
            .collect();
        found.sort();
        if let Some(p) = found.pop() {
            return Some(p);
        }
    }
    let ok = Command::new("ptxas")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    ok.then(|| PathBuf::from("ptxas"))
}

/// The ptxas to use, or `None` after printing the skip notice.
pub fn ptxas_or_skip(test: &str) -> Option<PathBuf> {
    let p = ptxas();
    if p.is_none() {
        eprintln!("{test}: skipped: ptxas not found");
    }
    p
}

static COUNTER: AtomicU64 = AtomicU64::new(0);

/// Assemble with ptxas for `sm`; `Err` holds its output when it fails or prints anything
/// (a warning counts as a failure).
pub fn run_ptxas(ptxas: &Path, ptx: &str, sm: Sm) -> Result<(), String> {
    let dir = std::env::temp_dir().join("gyre-codegen-lite-tests");
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let file = dir.join(format!("k{}_{n}.ptx", std::process::id()));
    std::fs::write(&file, ptx).map_err(|e| e.to_string())?;
    let out = Command::new(ptxas)
        .arg(format!("-arch={}", sm.target()))
        .arg("-o")
        .arg("/dev/null")
        .arg(&file)
        .output()
        .map_err(|e| e.to_string())?;
    let _ = std::fs::remove_file(&file);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let stdout = String::from_utf8_lossy(&out.stdout);
    if out.status.success() && stderr.trim().is_empty() && stdout.trim().is_empty() {
        Ok(())
    } else {
        Err(format!(
            "ptxas -arch={} failed:\n{stderr}{stdout}",
            sm.target()
        ))
    }
}

/// Compile for `sm`, panicking with the error.
pub fn compile(m: &Module, sm: Sm) -> String {
    compile_module(m, &CodegenOptions { sm }).unwrap_or_else(|e| panic!("codegen failed: {e}"))
}

/// Parse a `.gir` text, panicking with rendered errors.
pub fn parse(src: &str) -> Module {
    gyre_ir::parse_module(src).unwrap_or_else(|e| panic!("{}", e.render("input", src)))
}

/// The module as text.
pub fn text(m: &Module) -> String {
    let mut s = String::new();
    gyre_ir::write_module(&mut s, m).expect("writing to a String cannot fail");
    s
}

/// Run `kernel` on `inputs` in the interpreter and, compiled for `sm`, in ptx-sim;
/// compare every buffer byte the interpreter did not leave poison. `Err` describes the
/// first difference or failure.
pub fn compare(m: &Module, kernel: &str, inputs: &Inputs, ptx: &str) -> Result<(), String> {
    let mut imem = inputs.memory.clone();
    gyre_interp::run_kernel(m, kernel, &inputs.launch, &mut imem)
        .map_err(|e| format!("interpreter: {e}"))?;

    let sim = gyre_ptx_sim::parse(ptx).map_err(|e| format!("ptx-sim parse: {e}\n{ptx}"))?;
    let func = m
        .func_by_name(kernel)
        .ok_or_else(|| format!("no kernel {kernel}"))?;
    let param_types = &m.functions[func].sig.params;
    let mut smem = gyre_ptx_sim::Memory::new();
    let mut bases: Vec<(String, u64)> = Vec::new();
    let mut params = Vec::new();
    for (arg, &ty) in inputs.launch.args.iter().zip(param_types) {
        params.push(match arg {
            Arg::Buffer(name, off) => {
                let base = match bases.iter().find(|(n, _)| n == name) {
                    Some(&(_, b)) => b,
                    None => {
                        let bytes = inputs.memory.bytes(name).ok_or("missing buffer")?;
                        let b = smem.alloc(bytes.len().max(1), 256);
                        smem.write_bytes(b, bytes).map_err(|e| e.to_string())?;
                        bases.push((name.clone(), b));
                        b
                    }
                };
                gyre_ptx_sim::ParamValue::U64(base + off)
            }
            Arg::Int(v) => match ty {
                Type::I1 | Type::I8 => gyre_ptx_sim::ParamValue::U8(*v as u8),
                Type::I16 => gyre_ptx_sim::ParamValue::U16(*v as u16),
                Type::I32 => gyre_ptx_sim::ParamValue::U32(*v as u32),
                _ => gyre_ptx_sim::ParamValue::U64(*v),
            },
            Arg::F32(x) => gyre_ptx_sim::ParamValue::F32(*x),
            Arg::F64(x) => gyre_ptx_sim::ParamValue::F64(*x),
            Arg::Ptr(p) => gyre_ptx_sim::ParamValue::U64(*p),
        });
    }
    let launch = gyre_ptx_sim::Launch {
        grid: inputs.launch.grid,
        block: inputs.launch.block,
    };
    gyre_ptx_sim::run_kernel(
        &sim,
        &gyre_codegen_lite::mangle(kernel),
        &launch,
        &params,
        &mut smem,
    )
    .map_err(|e| format!("ptx-sim: {e}"))?;
    for (name, base) in &bases {
        let want = imem.bytes(name).ok_or("missing buffer")?;
        let poison = imem.poison(name).ok_or("missing buffer")?;
        let got = smem
            .read_bytes(*base, want.len())
            .map_err(|e| e.to_string())?;
        for i in 0..want.len() {
            if !poison[i] && want[i] != got[i] {
                return Err(format!(
                    "buffer {name}, byte {i}: interpreter {:#04x}, ptx-sim {:#04x}",
                    want[i], got[i]
                ));
            }
        }
    }
    Ok(())
}
