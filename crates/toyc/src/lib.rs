//! Toy: a small CUDA-like kernel language, and its compiler built on Gyre's crates.
//!
//! The front end is Gyre's first user: it parses and type-checks a `.toy` file, lowers
//! it with the public builder API (`gyre_ir::builder::FunctionBuilder` and SSA
//! variables), checks the result with the IR verifier (its errors located in the `.toy`
//! file through the builder's source positions), optimizes it with
//! [`gyre_transforms::optimize`] (`-O`: [`gyre_transforms::DEFAULT_PIPELINE`]) and emits
//! PTX with `gyre-codegen-lite`. The language is described in docs/toy.md.
//!
//! The whole path, from source text to PTX and to the reference interpreter:
//!
//! ```
//! let src = "kernel scale(x: *f32, a: f32, n: i32) {
//!     let i = ctaid.x * ntid.x + tid.x;
//!     if i < n { x[i] = a * x[i]; }
//! }";
//! let mut module = gyre_toyc::compile("scale.toy", src).map_err(|d| d.render("scale.toy", src)).unwrap();
//! gyre_transforms::optimize(&mut module, gyre_transforms::OptLevel::O2).unwrap();
//! let ptx = gyre_toyc::emit_ptx(&module, gyre_codegen_lite::Sm::Sm90).unwrap();
//! assert!(ptx.contains(".entry scale"));
//! ```
//!
//! Errors are located and rendered with the source line and a caret; a run reports
//! every error it finds (up to [`diag::MAX_ERRORS`]) and never panics:
//!
//! ```
//! let src = "kernel k(n: i32) { let x: f32 = n; y = 1; }";
//! let errs = gyre_toyc::compile("k.toy", src).err().unwrap();
//! let text = errs.render("k.toy", src);
//! assert!(text.contains("k.toy:1:33: error: mismatched types"));
//! assert!(text.contains("k.toy:1:36: error: unknown variable `y`"));
//! ```
#![warn(missing_docs)]

pub mod ast;
pub mod check;
pub mod diag;
pub mod lexer;
pub mod lower;
pub mod parser;

pub use diag::{Diagnostic, Diagnostics, Pos};

use gyre_codegen_lite::{CodegenError, CodegenOptions, Sm};
use gyre_ir::Module;

/// The file extension of Toy programs (`gyre compile` and `gyre run` recognise it).
pub const EXTENSION: &str = "toy";

/// Compile Toy source text to a verified Gyre module (one function per kernel and
/// device function, one shared global per `shared` array). `file` names the source in
/// messages. On failure, every error found (lexical, syntax, type); render them with
/// [`Diagnostics::render`].
pub fn compile(file: &str, src: &str) -> Result<Module, Diagnostics> {
    let _ = file;
    let mut diags = Diagnostics::default();
    let toks = lexer::lex(src, &mut diags);
    let prog = parser::parse(toks, &mut diags);
    // Type-check even after syntax errors: the parts that parsed get their errors too.
    let checked = check::check(&prog, &mut diags);
    if !diags.is_empty() {
        // Syntax errors are found before type errors; report both in source order.
        diags.errors.sort_by_key(|d| (d.pos.line, d.pos.col));
        return Err(diags);
    }
    let (module, map) = match lower::lower(&prog, &checked) {
        Ok(m) => m,
        Err(e) => {
            diags.internal(format!("the IR builder rejected the program: {e}"));
            return Err(diags);
        }
    };
    // The checker accepted the program, so IR the verifier rejects is a toyc bug; the
    // source map still says which part of the program it came from.
    if let Err(errs) = gyre_ir::verifier::verify_module(&module) {
        return Err(Diagnostics::from_verifier(&errs, &map, src));
    }
    Ok(module)
}

/// Lower a module to PTX text for `sm`.
pub fn emit_ptx(module: &Module, sm: Sm) -> Result<String, CodegenError> {
    gyre_codegen_lite::compile_module(module, &CodegenOptions { sm })
}

#[cfg(test)]
mod tests {
    use super::*;
    use gyre_ir::{InstructionData, Opcode};

    /// A deliberately broken lowering: the verifier's error is reported at the `.toy`
    /// expression the bad instruction was built for, not as a bare IR dump.
    #[test]
    fn verifier_errors_point_into_the_source() {
        let src = "kernel scale(x: *f32, a: f32, n: i32) {\n    let i = tid.x;\n    if i < n { x[i] = a * x[i]; }\n}\n";
        let mut diags = Diagnostics::default();
        let toks = lexer::lex(src, &mut diags);
        let prog = parser::parse(toks, &mut diags);
        let checked = check::check(&prog, &mut diags);
        assert!(diags.is_empty());
        let (mut module, map) = lower::lower(&prog, &checked).unwrap();
        gyre_ir::verifier::verify_module(&module).unwrap();
        let func = module.functions.values_mut().next().unwrap();
        let insts: Vec<_> = func
            .layout
            .blocks()
            .flat_map(|b| func.layout.block_insts(b))
            .collect();
        let fmul = insts
            .into_iter()
            .find(|&i| func.dfg.inst(i).opcode() == Opcode::Fmul)
            .unwrap();
        match func.dfg.inst_mut(fmul) {
            InstructionData::Binary { opcode, .. } => *opcode = Opcode::Imul,
            other => panic!("{other:?}"),
        }
        let errs = gyre_ir::verifier::verify_module(&module).unwrap_err();
        let d = Diagnostics::from_verifier(&errs, &map, src);
        assert!(!d.errors.is_empty() && d.errors.iter().all(|e| e.internal));
        let text = d.render("scale.toy", src);
        // The `*` of `a * x[i]` is line 3, column 25.
        assert!(
            text.starts_with(
                "scale.toy:3:25: error: internal error: the generated IR does not verify: kernel @scale: "
            ),
            "{text}"
        );
        assert!(
            text.contains("    if i < n { x[i] = a * x[i]; }\n                            ^\n"),
            "{text}"
        );
        // A source map without the function still gives an error, at the file's start.
        let d = Diagnostics::from_verifier(&errs, &Default::default(), src);
        assert!(d
            .render("scale.toy", src)
            .starts_with("scale.toy:1:1: error: internal error: "));
    }
}
