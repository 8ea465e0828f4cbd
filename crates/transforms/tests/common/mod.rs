//! Generator profiles and case counts shared by the property tests of this crate.

use gyre_ir::generate::GenOptions;

/// Seeds per profile: `GYRE_PROP_CASES` if set, else `default`.
pub fn cases(default: u64) -> u64 {
    std::env::var("GYRE_PROP_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}

/// The named generator profiles, in the order given: `default`; `loopy` (deep nests, no
/// memory, barriers or calls); `reducible` (no two-entry cycles); `switchy` (small, many
/// switches).
pub fn profiles(names: &[&'static str]) -> Vec<(&'static str, GenOptions)> {
    let base = GenOptions::default();
    names
        .iter()
        .map(|&name| {
            let opts = match name {
                "default" => base.clone(),
                "loopy" => GenOptions {
                    max_blocks: 80,
                    max_nesting: 4,
                    max_stmts: 5,
                    allow_memory: false,
                    allow_barriers: false,
                    allow_calls: false,
                    ..base.clone()
                },
                "reducible" => GenOptions {
                    max_blocks: 60,
                    allow_irreducible: false,
                    ..base.clone()
                },
                "switchy" => GenOptions {
                    max_blocks: 50,
                    max_nesting: 3,
                    allow_calls: false,
                    allow_barriers: false,
                    ..base.clone()
                },
                _ => panic!("no generator profile named {name}"),
            };
            (name, opts)
        })
        .collect()
}

/// Run `check` on seeds `0..per_profile` of each named profile and panic listing the
/// failures (at most five), after printing `totals`.
#[allow(dead_code)] // Not every test binary that includes this module sweeps.
pub fn sweep<T: std::fmt::Debug>(
    names: &[&'static str],
    per_profile: u64,
    totals: &mut T,
    check: impl Fn(&GenOptions, u64, &mut T) -> Result<(), String>,
) {
    let mut failures = Vec::new();
    for (name, opts) in profiles(names) {
        for seed in 0..per_profile {
            if let Err(e) = check(&opts, seed, totals) {
                failures.push(format!("profile {name}, seed {seed}: {e}"));
                if failures.len() >= 5 {
                    break;
                }
            }
        }
    }
    println!("{totals:?}");
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// Interpreter equivalence of `after` with `before` (a generated module and its
/// transformed copy) on three random inputs that follow the kernel's `contract`, seeded
/// from the case's `seed`; `what` (a pipeline, or empty) starts the error message.
#[allow(dead_code)] // Not every test file of this crate compares behaviour.
pub fn same_behaviour_on_random_inputs(
    before: &gyre_ir::Module,
    after: &gyre_ir::Module,
    contract: &gyre_ir::generate::KernelContract,
    seed: u64,
    what: &str,
) -> Result<(), String> {
    let kernel = &before.functions[contract.kernel].name;
    let sep = if what.is_empty() { "" } else { ": " };
    for k in 0..3 {
        let inputs = gyre_interp::random_inputs(contract, seed.wrapping_mul(31).wrapping_add(k));
        gyre_interp::assert_same_behaviour(before, after, kernel, &inputs)
            .map_err(|d| format!("{what}{sep}behaviour differs (inputs {k}): {d}"))?;
    }
    Ok(())
}
