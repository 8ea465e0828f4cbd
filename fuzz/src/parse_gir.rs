//! `parse_gir`: the `.gir` parser never panics, and what it accepts prints, parses again
//! and prints identically; the verifier never panics on what it accepts.

use crate::{mutate, Case, Features, Input, InputKind, Target};
use gyre_ir::generate::{RandomSource, SplitMix64};
use gyre_ir::{parse_function, parse_module};
use std::sync::OnceLock;

/// The target.
pub const TARGET: Target = Target {
    name: "parse_gir",
    doc: "the .gir parser: no panic; accepted text round-trips through the printer",
    kind: InputKind::Text("gir"),
    generate,
    check,
};

/// Tokens of the text format, inserted by mutations.
const DICT: &[&str] = &[
    "func ",
    "kernel ",
    "block",
    "v",
    "iconst.i32 ",
    "iadd ",
    "brif ",
    "jump ",
    "return",
    "br_table ",
    ", ",
    "(",
    ")",
    "[",
    "]",
    "{",
    "}",
    ":",
    " = ",
    "i1",
    "i64",
    "f32",
    "ptr.global",
    "ptr.shared",
    "load.i32 ",
    "store ",
    "call ",
    "global @g",
    "@",
    "%",
    ";",
    "\n",
    "-> ",
    "param",
    "barrier",
    "atomic_rmw.add ",
    "slot",
    "0x1p-3",
    "nsw ",
];

/// Parse arbitrary bytes (as lossy UTF-8) as a module and as a single function. The
/// parser must not panic; whenever it accepts the input, printing the result must give
/// text that parses again and prints identically (print -> parse -> print is stable).
pub fn check_parse(data: &[u8]) {
    let src = String::from_utf8_lossy(data);
    if let Ok(m) = parse_module(&src) {
        let p1 = m.to_string();
        let m2 = parse_module(&p1).unwrap_or_else(|e| {
            panic!(
                "printed module does not parse:\n{}",
                e.render("printed", &p1)
            )
        });
        let p2 = m2.to_string();
        assert_eq!(p1, p2, "module print -> parse -> print differs");
    }
    if let Ok(f) = parse_function(&src) {
        let p1 = f.display(None).to_string();
        let f2 = parse_function(&p1).unwrap_or_else(|e| {
            panic!(
                "printed function does not parse:\n{}",
                e.render("printed", &p1)
            )
        });
        assert_eq!(
            p1,
            f2.display(None).to_string(),
            "function print -> parse -> print differs"
        );
    }
}

fn check(input: &Input) -> Result<Features, String> {
    let data = input.bytes();
    check_parse(data);
    let src = String::from_utf8_lossy(data);
    Ok(match parse_module(&src) {
        Ok(m) => {
            let verified = gyre_ir::verifier::verify_module(&m);
            vec![format!("parsed, verifies: {}", verified.is_ok())]
        }
        Err(e) => vec![format!("error: {}", crate::error_class(&e.to_string()))],
    })
}

fn generate(seed: u64) -> Input {
    static BASES: OnceLock<Vec<Vec<u8>>> = OnceLock::new();
    let bases = BASES.get_or_init(|| mutate::bases("parse_gir"));
    let mut rng = SplitMix64::new(seed);
    let mut data = if !bases.is_empty() && rng.below(4) == 0 {
        bases[rng.below(bases.len() as u64) as usize].clone()
    } else {
        let raw = rng.below(2) == 0;
        Case::generate(rng.next_u64(), |o| {
            o.ub_free = !raw;
            o.max_blocks = o.max_blocks.min(30);
        })
        .module
        .to_string()
        .into_bytes()
    };
    // A tenth of the inputs go through unchanged: the round trip of valid modules.
    if rng.below(10) != 0 {
        mutate::mutate(&mut data, &mut rng, DICT);
    }
    Input::Bytes(data)
}
