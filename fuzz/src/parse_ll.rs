//! `parse_ll`: the LLVM IR importer never panics; every error it reports is located
//! (line and column inside the input); a module it accepts verifies.

use crate::{mutate, Case, Features, Input, InputKind, Target};
use gyre_ir::generate::{RandomSource, SplitMix64};
use gyre_llvm::{export_module, import_module, ExportOptions};
use std::sync::OnceLock;

/// The target.
pub const TARGET: Target = Target {
    name: "parse_ll",
    doc: "the .ll importer: no panic, located errors, accepted modules verify",
    kind: InputKind::Text("ll"),
    generate,
    check,
};

/// Tokens of LLVM IR, inserted by mutations.
const DICT: &[&str] = &[
    "define ",
    "declare ",
    "i32 ",
    "i64 ",
    "i1 ",
    "float ",
    "double ",
    "ptr ",
    "i8* ",
    "addrspace(1)",
    "addrspace(3)",
    "%",
    "@",
    "label %",
    "br ",
    "switch ",
    "phi ",
    "[ ",
    " ]",
    ", ",
    "add nsw ",
    "getelementptr inbounds ",
    "load ",
    "store ",
    "call ",
    "ret void",
    "icmp slt ",
    "fcmp olt ",
    "select ",
    "unreachable",
    "!0",
    "!nvvm.annotations",
    "#0",
    "align 4",
    "zeroinitializer",
    "undef",
    "poison",
    "<2 x i32>",
    "{ i32, i32 }",
    "[4 x i32]",
    "bitcast ",
    "atomicrmw add ",
    "\n",
    "; ",
    "\"",
    "llvm.nvvm.read.ptx.sreg.tid.x",
    "llvm.nvvm.barrier0",
    "...",
];

fn check(input: &Input) -> Result<Features, String> {
    let text = String::from_utf8_lossy(input.bytes());
    let lines = text.split('\n').count() as u32;
    match import_module(&text) {
        Ok(m) => {
            gyre_ir::verifier::verify_module(&m)
                .map_err(|e| format!("the importer accepted a module that does not verify: {e}"))?;
            Ok(vec!["imported".to_string()])
        }
        Err(errs) => {
            if errs.errors.is_empty() {
                return Err("an import error without any error".to_string());
            }
            for e in &errs.errors {
                if e.line == 0 || e.col == 0 || e.line > lines {
                    return Err(format!(
                        "an import error not located in the input ({lines} lines): {}",
                        e.render("input")
                    ));
                }
            }
            Ok(vec![format!(
                "error: {:?} {}",
                errs.first().kind,
                crate::error_class(&errs.first().message)
            )])
        }
    }
}

fn generate(seed: u64) -> Input {
    static BASES: OnceLock<Vec<Vec<u8>>> = OnceLock::new();
    let bases = BASES.get_or_init(|| {
        let mut b = mutate::bases("parse_ll");
        b.extend(shared_corpus());
        b
    });
    let mut rng = SplitMix64::new(seed);
    let mut data = if !bases.is_empty() && rng.below(3) == 0 {
        bases[rng.below(bases.len() as u64) as usize].clone()
    } else {
        let opaque = rng.below(2) == 0;
        let raw = rng.below(3) == 0;
        let case = Case::generate(rng.next_u64(), |o| {
            o.ub_free = !raw;
            o.max_blocks = o.max_blocks.min(30);
        });
        export_module(
            &case.module,
            &ExportOptions {
                opaque_pointers: opaque,
            },
        )
        .into_bytes()
    };
    if rng.below(10) != 0 {
        mutate::mutate(&mut data, &mut rng, DICT);
    }
    Input::Bytes(data)
}

/// The small kernels (under 16 KiB) of the shared CUDA corpus (`$GYRE_CORPUS_DIR/cuda` or
/// `../shared/corpus/cuda` next to the workspace), when it is there: real clang output as
/// mutation bases, read in place rather than copied into this repository.
fn shared_corpus() -> Vec<Vec<u8>> {
    let base = std::env::var_os("GYRE_CORPUS_DIR")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| gyre_test_tools::workspace_root().join("../shared/corpus"));
    let Ok(rd) = std::fs::read_dir(base.join("cuda")) else {
        return Vec::new();
    };
    let mut paths: Vec<_> = rd
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "ll"))
        .filter(|p| p.metadata().is_ok_and(|m| m.len() < 16 * 1024))
        .collect();
    paths.sort();
    paths.iter().filter_map(|p| std::fs::read(p).ok()).collect()
}
