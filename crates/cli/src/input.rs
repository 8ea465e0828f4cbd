//! Reading inputs and writing outputs, with errors already rendered for the user.

use crate::CliError;
use gyre_ir::Module;
use std::io::{Read, Write};

/// Read a file (or standard input for `-`) as text.
pub fn read_source(path: &str) -> Result<(String, String), CliError> {
    if path == "-" {
        let mut buf = Vec::new();
        std::io::stdin()
            .read_to_end(&mut buf)
            .map_err(|e| CliError(format!("<stdin>: cannot read: {e}")))?;
        return Ok(("<stdin>".into(), String::from_utf8_lossy(&buf).into_owned()));
    }
    let bytes = std::fs::read(path).map_err(|e| CliError(format!("{path}: cannot read: {e}")))?;
    Ok((
        path.to_string(),
        String::from_utf8_lossy(&bytes).into_owned(),
    ))
}

/// Read and parse a module: LLVM IR text for `.ll` files, `.gir` otherwise. Returns the
/// display name of the input and the module.
pub fn load_module(path: &str) -> Result<(String, Module), CliError> {
    let (name, src) = read_source(path)?;
    let module = if path.ends_with(".ll") {
        gyre_llvm::import_module(&src).map_err(|e| CliError(e.render(&name)))?
    } else {
        gyre_ir::parser::parse_module(&src).map_err(|e| CliError(e.render(&name, &src)))?
    };
    Ok((name, module))
}

/// Run the verifier on a module, rendering every error with the input's name.
pub fn verify(name: &str, module: &Module) -> Result<(), CliError> {
    gyre_ir::verifier::verify_module(module)
        .map_err(|errs| CliError(format!("{name}: verifier errors:\n{errs}")))
}

/// Write text to a file, or to standard output when no path is given.
pub fn write_output(path: Option<&str>, text: &str) -> Result<(), CliError> {
    match path {
        None | Some("-") => {
            let mut out = std::io::stdout().lock();
            // A closed pipe (`gyre opt x | head`) is not an error worth a message.
            let _ = out.write_all(text.as_bytes());
            Ok(())
        }
        Some(p) => std::fs::write(p, text).map_err(|e| CliError(format!("{p}: cannot write: {e}"))),
    }
}
