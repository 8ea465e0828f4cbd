//! Print a `.gir` file as LLVM IR (`--opaque` for opaque pointers), or with `--import`,
//! read an `.ll` file and print the Gyre module.

use std::io::Write;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let opaque = args.iter().any(|a| a == "--opaque");
    let import = args.iter().any(|a| a == "--import");
    let Some(path) = args.iter().find(|a| !a.starts_with("--")) else {
        eprintln!("usage: gir2ll [--opaque] [--import] FILE");
        std::process::exit(2);
    };
    let src = std::fs::read_to_string(path).expect("readable input");
    let out = if import {
        match gyre_llvm::import_module(&src) {
            Ok(m) => {
                let mut s = String::new();
                gyre_ir::write::write_module(&mut s, &m).expect("write to a String");
                s
            }
            Err(e) => {
                eprint!("{}", e.render(path));
                std::process::exit(1);
            }
        }
    } else {
        let m = gyre_ir::parser::parse_module(&src).expect("valid .gir");
        gyre_llvm::export_module(
            &m,
            &gyre_llvm::ExportOptions {
                opaque_pointers: opaque,
            },
        )
    };
    std::io::stdout().write_all(out.as_bytes()).expect("stdout");
}
