//! Parsing the `.gir` text format (grammar: docs/ir.md, "Text grammar").
//!
//! [`parse_module`] reads globals and functions; [`parse_function`] reads one function
//! that neither calls nor takes the address of a global. Both keep the text's entity
//! numbers: `v17` becomes `Value::new(17)`, `block3` `Block::new(3)`, `slot2`
//! `Slot::new(2)`. Numbers the text skips become detached values and blocks that are not
//! in the layout (skipped slots become empty placeholder slots, `local 0 align 1`).
//!
//! Values and blocks may be used before they are defined; result types that follow from
//! operands are inferred once the whole module has been read. Besides syntax, the parser
//! checks what it needs to build well-formed data: known opcodes and types, suffixes only
//! where the opcode takes one, operand counts, flags allowed by the opcode, a result
//! exactly when the instruction produces one, definitions unique and every use defined.
//! Everything else (operand types, branch arguments against block parameters, entry
//! parameters against the signature, ...) is the verifier's job.
//!
//! The parser never panics and never recurses over its input. It runs in linear time and
//! recovers after an error at the next line (or the next function when a header is
//! broken), so one call reports many errors, sorted by position. To bound memory on
//! hostile input, entity numbers must stay below `max(65536, 16 * input length)`.

mod error;
pub(crate) mod lexer;
mod parse;
mod positions;

pub use error::{ParseError, ParseErrors};
pub use positions::{escape_input, line_col, render_at, FuncPositions, SourceMap};

use crate::function::Function;
use crate::module::Module;

/// Parse a module: global declarations and functions, in any order.
pub fn parse_module(src: &str) -> Result<Module, ParseErrors> {
    parse_module_with_positions(src).map(|(m, _)| m)
}

/// Parse a module and return, with it, where each of its entities is defined in `src`
/// (for messages that point at the text: the verifier's, the interpreter's).
pub fn parse_module_with_positions(src: &str) -> Result<(Module, SourceMap), ParseErrors> {
    let p = parse::Parser::new(src, true).parse()?;
    let mut m = Module::new();
    for g in p.globals {
        m.globals.push(g);
    }
    for f in p.functions {
        m.functions.push(f);
    }
    Ok((m, p.positions))
}

/// Parse a single function (no `call`, no `global_addr`, no globals).
pub fn parse_function(src: &str) -> Result<Function, ParseErrors> {
    let p = parse::Parser::new(src, false).parse()?;
    // In single-function mode the parser reports an error unless it read exactly one.
    Ok(p.functions
        .into_iter()
        .next()
        .expect("single-function parse succeeded with one function"))
}
