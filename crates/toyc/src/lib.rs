//! Toy: a small CUDA-like kernel language, and its compiler built on Gyre's crates.
//!
//! The front end is Gyre's first user: it parses and type-checks a `.toy` file, lowers
//! it with the public builder API (`gyre_ir::builder::FunctionBuilder` and SSA
//! variables), checks the result with the IR verifier, optimizes it with the pass
//! manager (`-O`: [`gyre_transforms::DEFAULT_PIPELINE`]) and emits PTX with
//! `gyre-codegen-lite`. The language is described in docs/toy.md.
//!
//! The whole path, from source text to PTX and to the reference interpreter:
//!
//! ```
//! let src = "kernel scale(x: *f32, a: f32, n: i32) {
//!     let i = ctaid.x * ntid.x + tid.x;
//!     if i < n { x[i] = a * x[i]; }
//! }";
//! let mut module = gyre_toyc::compile("scale.toy", src).map_err(|d| d.render("scale.toy", src)).unwrap();
//! gyre_toyc::optimize(&mut module).unwrap();
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
    let module = match lower::lower(&prog, &checked) {
        Ok(m) => m,
        Err(e) => {
            diags.internal(format!("the IR builder rejected the program: {e}"));
            return Err(diags);
        }
    };
    // The checker accepted the program, so IR the verifier rejects is a toyc bug.
    if let Err(errs) = gyre_ir::verifier::verify_module(&module) {
        diags.internal(format!(
            "the generated IR does not verify:\n{}",
            errs.render(file, None)
        ));
        return Err(diags);
    }
    Ok(module)
}

/// Optimize with Gyre's default pipeline ([`gyre_transforms::DEFAULT_PIPELINE`], what
/// `gyre compile -O` runs).
pub fn optimize(module: &mut Module) -> Result<(), String> {
    let mut pm = gyre_transforms::PassManager::from_pipeline(
        gyre_transforms::DEFAULT_PIPELINE,
        gyre_transforms::Knobs::default(),
        gyre_transforms::Options::default(),
    )?;
    pm.run_module(module).map_err(|e| e.to_string())?;
    Ok(())
}

/// Lower a module to PTX text for `sm`.
pub fn emit_ptx(module: &Module, sm: Sm) -> Result<String, CodegenError> {
    gyre_codegen_lite::compile_module(module, &CodegenOptions { sm })
}
