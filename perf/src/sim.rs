//! Dynamic instruction counts of the small generated kernels: the interpreter's run of
//! the kernel is the reference, and Gyre's PTX and llc's PTX run in ptx-sim on the same
//! launch and inputs (the generator's contract, `gyre_interp::random_inputs`); both
//! must compute the interpreter's bytes (those it did not leave poison) before their
//! instruction counts are compared.

use gyre_interp::{Arg, Inputs};
use gyre_ir::generate::KernelContract;
use gyre_ir::Module;

/// Instructions one launch may execute, in the interpreter and in ptx-sim.
pub const STEP_LIMIT: u64 = 50_000_000;

/// What one PTX text did: its buffers after the launch and the instructions executed.
struct SimRun {
    bufs: Vec<(String, Vec<u8>)>,
    instructions: u64,
}

/// Run `entry` of the PTX text `ptx` in ptx-sim on `inputs`' launch and buffers.
fn sim(ptx: &str, entry: &str, inputs: &Inputs) -> Result<SimRun, String> {
    use gyre_ptx_sim as ps;
    let m = ps::parse(ptx).map_err(|e| format!("ptx-sim cannot read it: {e}"))?;
    let sizes = m
        .kernel_param_sizes(entry)
        .ok_or_else(|| format!("no entry {entry}"))?;
    if sizes.len() != inputs.launch.args.len() {
        return Err(format!(
            "{} parameters, the launch has {} arguments",
            sizes.len(),
            inputs.launch.args.len()
        ));
    }
    let mut mem = ps::Memory::new();
    let mut bases: Vec<(String, u64)> = Vec::new();
    let mut params = Vec::new();
    for (arg, &size) in inputs.launch.args.iter().zip(&sizes) {
        let mut bytes = match arg {
            Arg::Buffer(name, off) => {
                let base = match bases.iter().find(|(n, _)| n == name) {
                    Some(&(_, b)) => b,
                    None => {
                        let init = inputs
                            .memory
                            .bytes(name)
                            .ok_or_else(|| format!("no buffer {name}"))?;
                        let b = mem.alloc(init.len().max(1), 256);
                        mem.write_bytes(b, init).map_err(|e| e.to_string())?;
                        bases.push((name.clone(), b));
                        b
                    }
                };
                (base + off).to_le_bytes().to_vec()
            }
            Arg::Int(v) | Arg::Ptr(v) => v.to_le_bytes().to_vec(),
            Arg::F32(x) => x.to_le_bytes().to_vec(),
            Arg::F64(x) => x.to_le_bytes().to_vec(),
            Arg::Bytes(b) => b.clone(),
        };
        bytes.resize(size, 0);
        params.push(ps::ParamValue::Bytes(bytes));
    }
    let launch = ps::Launch {
        grid: inputs.launch.grid,
        block: inputs.launch.block,
    };
    let opts = ps::RunOptions {
        step_limit: STEP_LIMIT,
        ..ps::RunOptions::default()
    };
    let stats = ps::run_kernel_with_options(&m, entry, &launch, &params, &mut mem, &opts)
        .map_err(|e| format!("fails in ptx-sim: {e}"))?;
    let mut bufs = Vec::new();
    for (name, base) in &bases {
        let len = inputs.memory.bytes(name).map_or(0, <[u8]>::len);
        bufs.push((
            name.clone(),
            mem.read_bytes(*base, len).map_err(|e| e.to_string())?,
        ));
    }
    Ok(SimRun {
        bufs,
        instructions: stats.instructions,
    })
}

/// Instructions executed by Gyre's PTX and by llc's PTX of the generated kernel `m`
/// (its contract `contract`) on random inputs `seed`, after checking that both leave
/// every buffer byte the interpreter defines as the interpreter does. `Err` says which
/// run failed or differed first.
pub fn generated_dynamic(
    m: &Module,
    contract: &KernelContract,
    seed: u64,
    gyre_ptx: &str,
    llc_ptx: &str,
) -> Result<(u64, u64), String> {
    let kernel = m.functions[contract.kernel].name.clone();
    let mut inputs = gyre_interp::random_inputs(contract, seed);
    inputs.launch.config.step_limit = STEP_LIMIT;
    let mut imem = inputs.memory.clone();
    gyre_interp::run_kernel(m, &kernel, &inputs.launch, &mut imem)
        .map_err(|e| format!("the interpreter: {e}"))?;
    let mut counts = [0u64; 2];
    let texts = [
        ("Gyre's PTX", gyre_ptx, gyre_codegen_lite::mangle(&kernel)),
        ("llc's PTX", llc_ptx, kernel.clone()),
    ];
    for (k, (who, text, entry)) in texts.iter().enumerate() {
        let run = sim(text, entry, &inputs).map_err(|e| format!("{who}: {e}"))?;
        for (name, got) in &run.bufs {
            let want = imem.bytes(name).ok_or("missing buffer")?;
            let poison = imem.poison(name).ok_or("missing buffer")?;
            if let Some(i) = (0..want.len()).find(|&i| !poison[i] && want[i] != got[i]) {
                return Err(format!(
                    "{who} differs from the interpreter: buffer {name}, byte {i} ({:#04x}, not {:#04x})",
                    got[i], want[i]
                ));
            }
        }
        counts[k] = run.instructions;
    }
    Ok((counts[0], counts[1]))
}

#[cfg(test)]
mod tests {
    use super::*;
    use gyre_ir::generate::{generate_kernel_module, GenOptions, SplitMix64};

    fn small(seed: u64) -> (Module, KernelContract) {
        let opts = GenOptions {
            target_blocks: Some(30),
            allow_calls: false,
            allow_irreducible: false,
            ..GenOptions::default()
        };
        generate_kernel_module(&opts, &mut SplitMix64::new(seed))
    }

    #[test]
    fn gyre_ptx_against_itself_counts_and_a_wrong_text_is_caught() {
        let (m, c) = small(1);
        let sm = gyre_codegen_lite::Sm::from_number(70).expect("sm_70");
        let ptx = gyre_codegen_lite::compile_module(&m, &gyre_codegen_lite::CodegenOptions { sm })
            .expect("compiles");
        // Gyre's PTX stands in for llc's under llc's entry name.
        let name = m.functions[c.kernel].name.clone();
        let as_llc = ptx.replace(&gyre_codegen_lite::mangle(&name), &name);
        let (g, l) = generated_dynamic(&m, &c, 0, &ptx, &as_llc).expect("both agree");
        assert!(g > 0 && g == l, "{g} vs {l}");
        // A text that returns at once leaves the output unwritten: a difference, not a
        // count.
        let entry = as_llc.find(".entry").expect("an entry");
        let open = entry + as_llc[entry..].find("\n{").expect("a body");
        let broken = format!("{}\n{{\nret;\n}}\n", &as_llc[..open]);
        let e = generated_dynamic(&m, &c, 0, &ptx, &broken).expect_err("differs");
        assert!(e.contains("llc's PTX differs from the interpreter"), "{e}");
    }
}
