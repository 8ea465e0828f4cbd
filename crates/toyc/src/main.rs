//! `toyc`: compile a Toy program to PTX (or print its Gyre IR).
//!
//! ```text
//! toyc [-O] [--sm N] [--emit ptx|gir] [-o OUT] FILE.toy
//! ```

use gyre_codegen_lite::Sm;
use std::process::ExitCode;

const USAGE: &str = "usage: toyc [-O] [--sm N] [--emit ptx|gir] [-o OUT] FILE.toy\n\
  -O          optimize with Gyre's default pipeline\n\
  --sm N      target architecture (70, 80, 90, ...; default 90)\n\
  --emit K    ptx (default) or gir (Gyre IR text)\n\
  -o OUT      output file (default: standard output)";

fn main() -> ExitCode {
    match run(std::env::args().skip(1).collect()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(msg) => {
            eprint!("{msg}");
            if !msg.ends_with('\n') {
                eprintln!();
            }
            ExitCode::FAILURE
        }
    }
}

fn run(args: Vec<String>) -> Result<(), String> {
    let mut opt = false;
    let mut sm = Sm::Sm90;
    let mut emit_gir = false;
    let mut out: Option<String> = None;
    let mut input: Option<String> = None;
    let mut it = args.into_iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "-O" | "-O2" => opt = true,
            "-h" | "--help" => {
                println!("{USAGE}");
                return Ok(());
            }
            "--sm" => {
                let v = it.next().ok_or("--sm needs a value")?;
                sm = Sm::from_name(&v).ok_or_else(|| format!("unknown target `{v}`"))?;
            }
            "--emit" => match it.next().as_deref() {
                Some("ptx") => emit_gir = false,
                Some("gir") => emit_gir = true,
                _ => return Err("--emit takes `ptx` or `gir`".into()),
            },
            "-o" => out = Some(it.next().ok_or("-o needs a file name")?),
            _ if a.starts_with('-') && a != "-" => {
                return Err(format!("unknown option `{a}`\n{USAGE}"))
            }
            _ if input.is_none() => input = Some(a),
            _ => return Err(format!("more than one input file\n{USAGE}")),
        }
    }
    let path = input.ok_or_else(|| USAGE.to_string())?;
    let bytes = if path == "-" {
        let mut v = Vec::new();
        std::io::Read::read_to_end(&mut std::io::stdin(), &mut v).map_err(|e| e.to_string())?;
        v
    } else {
        std::fs::read(&path).map_err(|e| format!("{path}: cannot read: {e}"))?
    };
    let src = String::from_utf8_lossy(&bytes);
    let mut module = gyre_toyc::compile(&path, &src).map_err(|d| d.render(&path, &src))?;
    if opt {
        gyre_transforms::optimize(&mut module, gyre_transforms::OptLevel::O2)
            .map_err(|e| format!("{path}: error: {e}"))?;
    }
    let text = if emit_gir {
        let mut s = String::new();
        gyre_ir::write_module(&mut s, &module).map_err(|e| e.to_string())?;
        s
    } else {
        gyre_toyc::emit_ptx(&module, sm).map_err(|e| format!("{path}: error: {e}"))?
    };
    match out.as_deref() {
        None | Some("-") => {
            print!("{text}");
            Ok(())
        }
        Some(o) => std::fs::write(o, text).map_err(|e| format!("{o}: cannot write: {e}")),
    }
}
