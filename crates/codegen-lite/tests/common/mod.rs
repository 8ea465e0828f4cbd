//! Shared test helpers: running ptxas (found by `gyre-test-tools`), and running a kernel
//! in both the IR interpreter and the PTX simulator.
#![allow(dead_code)]

use gyre_codegen_lite::{compile_module, CodegenOptions, Sm};
use gyre_interp::{Arg, Inputs};
use gyre_ir::{Module, Type};
use std::path::{Path, PathBuf};

/// ptxas for `test`, or `None` after the skip notice (a panic under
/// `GYRE_REQUIRE_TOOLS=1`): see `gyre_test_tools::require`.
pub fn ptxas_or_skip(test: &str) -> Option<PathBuf> {
    gyre_test_tools::require(gyre_test_tools::Tool::Ptxas, test)
}

/// Assemble with ptxas for `sm`; `Err` holds its output when it fails or prints anything.
pub fn run_ptxas(ptxas: &Path, ptx: &str, sm: Sm) -> Result<(), String> {
    gyre_test_tools::run_ptxas(ptxas, ptx, sm.target())
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
    compare_with(m, kernel, inputs, ptx, false)
}

/// Is the aligned 4- or 8-byte word holding byte `i` a NaN in both `a` and `b`, as `f32`
/// or as `f64`? (Buffers are untyped bytes; a NaN payload may differ in either width.)
fn nan_in_both(a: &[u8], b: &[u8], i: usize) -> bool {
    let word = |s: &[u8], n: usize| -> Option<u64> {
        let at = i & !(n - 1);
        let w = s.get(at..at + n)?;
        Some(
            w.iter()
                .rev()
                .fold(0u64, |acc, &x| (acc << 8) | u64::from(x)),
        )
    };
    let f32_nan = |w: Option<u64>| w.is_some_and(|w| f32::from_bits(w as u32).is_nan());
    let f64_nan = |w: Option<u64>| w.is_some_and(|w| f64::from_bits(w).is_nan());
    (f32_nan(word(a, 4)) && f32_nan(word(b, 4))) || (f64_nan(word(a, 8)) && f64_nan(word(b, 8)))
}

/// [`compare`]; with `nan_payloads_free` (a module whose functions are `anynan`) a byte
/// that differs inside a word that is a NaN on both sides counts as equal: only NaN-ness
/// is compared there, not the payload.
pub fn compare_with(
    m: &Module,
    kernel: &str,
    inputs: &Inputs,
    ptx: &str,
    nan_payloads_free: bool,
) -> Result<(), String> {
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
            Arg::Bytes(b) => gyre_ptx_sim::ParamValue::Bytes(b.clone()),
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
            if !poison[i] && want[i] != got[i] && !(nan_payloads_free && nan_in_both(want, &got, i))
            {
                return Err(format!(
                    "buffer {name}, byte {i}: interpreter {:#04x}, ptx-sim {:#04x}",
                    want[i], got[i]
                ));
            }
        }
    }
    Ok(())
}
