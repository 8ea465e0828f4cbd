//! Inputs of the targets and their file format.
//!
//! A kernel case is stored as a `.gir` module preceded by `;;` comment lines that the
//! parser skips: `;; seed: N` (random inputs and choices), `;; contract: out_per_thread=..
//! buffer_len=.. max_cta_threads=..` (how to launch the kernel, the module's last
//! function), and one `;; key: value` line per target-specific choice (the pipeline, the
//! knobs, the PTX target), so a shrunk or hand-edited module keeps them.

use gyre_ir::generate::{
    generate_from_seed, generate_kernel_module, GenOptions, KernelContract, SplitMix64,
};
use gyre_ir::{write_module, Module};

/// A target's input.
#[derive(Clone)]
pub enum Input {
    /// Raw bytes (text targets).
    Bytes(Vec<u8>),
    /// A generated kernel.
    Kernel(Case),
}

/// A kernel module with the contract under which it runs without undefined behaviour.
#[derive(Clone)]
pub struct Case {
    /// The module; its last function is the kernel.
    pub module: Module,
    /// How to launch it.
    pub contract: KernelContract,
    /// Seed of random inputs and of target choices not stored in `meta`.
    pub seed: u64,
    /// Target-specific choices, as `(key, value)`.
    pub meta: Vec<(String, String)>,
}

impl Case {
    /// A kernel from the generator, with options drawn from the seed by
    /// `GenOptions::random` and then adjusted by `tweak`.
    pub fn generate(seed: u64, tweak: impl FnOnce(&mut GenOptions)) -> Case {
        let mut rng = SplitMix64::new(seed);
        let mut opts = GenOptions::random(&mut rng);
        tweak(&mut opts);
        let (module, contract) = generate_kernel_module(&opts, &mut rng);
        Case {
            module,
            contract,
            seed,
            meta: Vec::new(),
        }
    }

    /// The value of a target-specific choice.
    pub fn meta(&self, key: &str) -> Option<&str> {
        self.meta
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    /// Name of the kernel.
    pub fn kernel_name(&self) -> &str {
        &self.module.functions[self.contract.kernel].name
    }

    /// The case in its file format.
    pub fn to_text(&self) -> String {
        let c = &self.contract;
        let buffer_len = buffer_len(c);
        let mut s = format!(
            ";; gyre-fuzz case\n;; seed: {}\n;; contract: out_per_thread={} buffer_len={buffer_len} max_cta_threads={} ub_free={}\n",
            self.seed, c.out_per_thread, c.max_cta_threads, c.ub_free
        );
        for (k, v) in &self.meta {
            s.push_str(&format!(";; {k}: {v}\n"));
        }
        write_module(&mut s, &self.module).expect("writing to a String");
        s
    }

    /// Read a case written by [`Case::to_text`].
    pub fn from_text(text: &str) -> Result<Case, String> {
        let mut seed = None;
        let mut contract = None;
        let mut meta = Vec::new();
        for line in text.lines() {
            let Some(rest) = line.strip_prefix(";; ") else {
                if line.trim().is_empty() {
                    continue;
                }
                break;
            };
            let Some((k, v)) = rest.split_once(": ") else {
                continue;
            };
            match k {
                "seed" => seed = Some(v.trim().parse::<u64>().map_err(|e| format!("seed: {e}"))?),
                "contract" => contract = Some(v.trim().to_string()),
                _ => meta.push((k.to_string(), v.trim().to_string())),
            }
        }
        let module = gyre_ir::parse_module(text).map_err(|e| e.render("case", text))?;
        let mut opts = GenOptions::minimal();
        for kv in contract.ok_or("no `;; contract:` line")?.split_whitespace() {
            let (k, v) = kv.split_once('=').ok_or("contract: expected key=value")?;
            let num = || v.parse::<u32>().map_err(|e| format!("contract {k}: {e}"));
            match k {
                "out_per_thread" => opts.out_per_thread = num()?,
                "buffer_len" => opts.buffer_len = num()?,
                "max_cta_threads" => opts.max_cta_threads = num()?,
                "ub_free" => opts.ub_free = v == "true",
                _ => return Err(format!("contract: unknown key {k}")),
            }
        }
        // The contract depends only on these options; the kernel is the last function.
        let (_, mut contract) = generate_from_seed(&opts, 0);
        contract.kernel = module
            .functions
            .keys()
            .next_back()
            .ok_or("the case has no function")?;
        Ok(Case {
            module,
            contract,
            seed: seed.ok_or("no `;; seed:` line")?,
            meta,
        })
    }
}

/// Step limit of the interpreter runs of the fuzz targets: a tenth of the default, so
/// each execution stays fast. Generated kernels may legitimately run longer (deep nests
/// of loops running `max_trip_count` times, calling functions with loops of their own).
pub const STEP_LIMIT: u64 = 20_000_000;

/// Random inputs for the case's kernel (variant `k`), with [`STEP_LIMIT`].
pub fn inputs(case: &Case, k: u64) -> gyre_interp::Inputs {
    let mut inputs =
        gyre_interp::random_inputs(&case.contract, case.seed.wrapping_mul(31).wrapping_add(k));
    inputs.launch.config.step_limit = STEP_LIMIT;
    inputs
}

/// How many of the [`inputs`] variants (`0..UB_CHECKED_INPUTS`) the kernel targets run;
/// the shrinker keeps a candidate kernel UB-free on each of them.
pub const UB_CHECKED_INPUTS: u64 = 2;

/// The undefined behaviour of `module` (the case's kernel, or an edit of it) on
/// [`inputs`] `k`, if it has any: an interpreter error other than the step limit.
/// `None` for a case whose contract is not UB-free (nothing is promised).
pub fn undefined_behaviour(case: &Case, module: &Module, k: u64) -> Option<String> {
    if !case.contract.ub_free {
        return None;
    }
    let mut inputs = inputs(case, k);
    match gyre_interp::run_kernel(
        module,
        case.kernel_name(),
        &inputs.launch,
        &mut inputs.memory,
    ) {
        Err(e) if e.kind() != gyre_interp::ErrorKind::StepLimit => Some(format!("inputs {k}: {e}")),
        _ => None,
    }
}

/// How many times [`STEP_LIMIT`] the transformed kernel may run when the original
/// finished: a transform may legitimately execute more instructions than the original
/// (the round trip through LLVM IR once turned each scaled `ptradd` into three
/// instructions), so one that finished just under the limit would otherwise count as a
/// hang after. An endless loop still reaches the larger limit.
pub const STEP_SLACK: u64 = 4;

/// Run the case's kernel in `before` and `after` on [`inputs`] `k`: `Ok(true)` if they
/// behave the same, `Ok(false)` if the original ran out of steps (nothing to compare),
/// `Err` with the difference otherwise. If only `after` runs out of steps, both run again
/// with [`STEP_SLACK`] times the limit.
pub fn same_behaviour(
    case: &Case,
    before: &Module,
    after: &Module,
    k: u64,
) -> Result<bool, String> {
    use gyre_interp::{Difference, ErrorKind};
    let name = case.kernel_name();
    let mut inputs = inputs(case, k);
    let mut result = gyre_interp::assert_same_behaviour(before, after, name, &inputs);
    if let Err(Difference::Outcome {
        before: None,
        after: Some(e),
    }) = &result
    {
        if e.kind() == ErrorKind::StepLimit {
            inputs.launch.config.step_limit = STEP_LIMIT * STEP_SLACK;
            result = gyre_interp::assert_same_behaviour(before, after, name, &inputs);
        }
    }
    match result {
        Ok(()) => Ok(true),
        Err(Difference::Outcome {
            before: Some(e), ..
        }) if e.kind() == ErrorKind::StepLimit => Ok(false),
        Err(d) => Err(format!("inputs {k}: {d}")),
    }
}

/// The input buffers' length in a generator contract.
fn buffer_len(c: &KernelContract) -> u32 {
    c.params
        .iter()
        .find_map(|p| match p {
            gyre_ir::generate::ParamContract::Input { len, .. } => Some(*len),
            _ => None,
        })
        .unwrap_or(1)
}

impl Input {
    /// The bytes of the input's file.
    pub fn to_file(&self) -> Vec<u8> {
        match self {
            Input::Bytes(b) => b.clone(),
            Input::Kernel(c) => c.to_text().into_bytes(),
        }
    }

    /// Read an input of `kind` from its file's bytes.
    pub fn from_file(kind: crate::InputKind, data: &[u8]) -> Result<Input, String> {
        match kind {
            crate::InputKind::Text(_) => Ok(Input::Bytes(data.to_vec())),
            crate::InputKind::Kernel => {
                Case::from_text(&String::from_utf8_lossy(data)).map(Input::Kernel)
            }
        }
    }

    /// The kernel case (panics on bytes: a target's own input kind is known).
    pub fn kernel(&self) -> &Case {
        match self {
            Input::Kernel(c) => c,
            Input::Bytes(_) => panic!("a kernel target got bytes"),
        }
    }

    /// The bytes (panics on a kernel).
    pub fn bytes(&self) -> &[u8] {
        match self {
            Input::Bytes(b) => b,
            Input::Kernel(_) => panic!("a text target got a kernel"),
        }
    }
}
