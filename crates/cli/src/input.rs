//! Reading inputs and writing outputs, with errors already rendered for the user.

use crate::CliError;
use gyre_ir::parser::SourceMap;
use gyre_ir::Module;
use std::io::{Read, Write};

/// The most `gyre` reads from a stream (standard input, a pipe, a device), 256 MiB: far
/// above any real module, and low enough that an endless input (`/dev/zero`, a pipe that
/// never closes) ends in an error instead of exhausting memory.
pub const MAX_INPUT_BYTES: u64 = 256 << 20;

/// The largest regular file `gyre` reads: 4 GiB − 1, as source positions are 32-bit. A
/// regular file has a known, finite size, so the stream limit does not apply to it (a
/// million-block kernel's `.ll` text is about 1 GiB).
pub const MAX_FILE_BYTES: u64 = u32::MAX as u64;

/// Read a file (or standard input for `-`): at most `limit` bytes of a stream or device,
/// at most [`MAX_FILE_BYTES`] (and at least `limit`) of a regular file; more is an error.
pub fn read_bytes_limited(path: &str, mut limit: u64) -> Result<Vec<u8>, CliError> {
    let name = if path == "-" { "<stdin>" } else { path };
    let cannot = |e: std::io::Error| CliError(format!("{name}: cannot read: {e}"));
    let mut buf = Vec::new();
    // One byte more than allowed tells "exactly the limit" from "too long".
    if path == "-" {
        std::io::stdin()
            .lock()
            .take(limit + 1)
            .read_to_end(&mut buf)
            .map_err(cannot)?;
    } else {
        let file = std::fs::File::open(path).map_err(cannot)?;
        // Sized from the file's length (one byte more, so reaching the end needs no
        // growth): growing by doubling copied a large input several times and touched
        // up to twice its size in fresh pages.
        if let Ok(meta) = file.metadata() {
            if meta.is_file() {
                limit = limit.max(MAX_FILE_BYTES);
            }
            buf.reserve(meta.len().min(limit) as usize + 1);
        }
        file.take(limit + 1).read_to_end(&mut buf).map_err(cannot)?;
    }
    if buf.len() as u64 > limit {
        return Err(CliError(format!(
            "{name}: input larger than {limit} bytes (the most gyre reads)"
        )));
    }
    Ok(buf)
}

/// Read a file (or standard input for `-`) as text: at most [`MAX_INPUT_BYTES`] of a
/// stream, [`MAX_FILE_BYTES`] of a regular file.
pub fn read_source(path: &str) -> Result<(String, String), CliError> {
    let bytes = read_bytes_limited(path, MAX_INPUT_BYTES)?;
    let name = if path == "-" { "<stdin>" } else { path };
    // Valid UTF-8 (the usual case) becomes the text without a copy; only invalid input
    // pays for the lossy conversion (same text either way).
    let text = String::from_utf8(bytes)
        .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned());
    Ok((name.to_string(), text))
}

/// A loaded input: its display name (what `Display` prints), its text and, for `.gir`,
/// where each entity of the parsed module is defined (for located messages).
pub struct Input {
    /// The display name (`<stdin>` for `-`).
    pub name: String,
    /// The text read.
    pub src: String,
    /// Source positions of the parsed module (`.gir` only).
    pub positions: Option<SourceMap>,
    /// The module was verified while it was loaded (the `.ll` importer verifies what it
    /// builds), so [`verify`] need not run the verifier again.
    pub verified: bool,
}

impl std::fmt::Display for Input {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.name)
    }
}

impl Input {
    /// Text and positions for rendering a located message, when the input has them.
    pub fn source(&self) -> Option<(&str, &SourceMap)> {
        self.positions.as_ref().map(|m| (self.src.as_str(), m))
    }

    /// Frees the text and its positions once nothing will be rendered at a place in it
    /// any more (after verification): a 1M-block `.ll` file is 0.1-1 GB that would
    /// otherwise stay resident through the passes and emission. The name stays.
    pub fn release_text(&mut self) {
        self.src = String::new();
        self.positions = None;
    }
}

/// Read and parse a module: LLVM IR text for `.ll` files, a Toy program (docs/toy.md)
/// for `.toy` files, `.gir` otherwise. Returns the input (which displays as its name)
/// and the module.
pub fn load_module(path: &str) -> Result<(Input, Module), CliError> {
    let (name, src) = read_source(path)?;
    let toy_ext = format!(".{}", gyre_toyc::EXTENSION);
    let (module, positions, verified) = if path.ends_with(&toy_ext) {
        let m = gyre_toyc::compile(&name, &src).map_err(|d| CliError(d.render(&name, &src)))?;
        (m, None, false)
    } else if path.ends_with(".ll") {
        let m =
            gyre_llvm::import_module(&src).map_err(|e| CliError(e.render_source(&name, &src)))?;
        (m, None, true)
    } else {
        let (m, p) = gyre_ir::parser::parse_module_with_positions(&src)
            .map_err(|e| CliError(e.render(&name, &src)))?;
        (m, Some(p), false)
    };
    Ok((
        Input {
            name,
            src,
            positions,
            verified,
        },
        module,
    ))
}

/// Run the verifier on a module, rendering every error at its place in the input.
pub fn verify(input: &Input, module: &Module) -> Result<(), CliError> {
    if input.verified {
        return Ok(());
    }
    gyre_ir::verifier::verify_module(module)
        .map_err(|errs| CliError(errs.render(&input.name, input.source())))
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The byte limit cuts off streams and devices, never a regular file (whose size is
    /// known and finite): a million-block `.ll` file is larger than the stream limit.
    #[test]
    fn limit_applies_to_streams_only() {
        let path = std::env::temp_dir().join(format!("gyre-input-{}.txt", std::process::id()));
        std::fs::write(&path, vec![b'x'; 1000]).unwrap();
        let read = read_bytes_limited(path.to_str().unwrap(), 16);
        std::fs::remove_file(&path).unwrap();
        assert_eq!(read.map(|b| b.len()).map_err(|e| e.0), Ok(1000));
        let Err(err) = read_bytes_limited("/dev/zero", 16) else {
            panic!("/dev/zero read whole");
        };
        assert!(err.0.contains("input larger than 16 bytes"), "{}", err.0);
    }
}
