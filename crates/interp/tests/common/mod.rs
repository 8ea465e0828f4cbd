//! Helpers shared by the interpreter's integration tests.
#![allow(dead_code)]

use gyre_interp::{run_kernel, ExecError, Launch, Memory, Outcome};
use gyre_ir::Module;

/// Parse a module, panicking with the parser's message on a typo in a test.
pub fn parse(src: &str) -> Module {
    match gyre_ir::parse_module(src) {
        Ok(m) => m,
        Err(e) => panic!("test module does not parse: {e}\n{src}"),
    }
}

/// Parse and run.
pub fn run(
    src: &str,
    kernel: &str,
    launch: &Launch,
    mem: &mut Memory,
) -> Result<Outcome, ExecError> {
    run_kernel(&parse(src), kernel, launch, mem)
}
