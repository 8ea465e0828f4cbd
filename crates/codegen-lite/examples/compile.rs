//! `cargo run -p gyre-codegen-lite --example compile -- in.gir [70|80|90]`: print PTX.

use gyre_codegen_lite::{compile_module, CodegenOptions, Sm};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let Some(path) = args.get(1) else {
        eprintln!("usage: compile in.gir [70|80|90]");
        std::process::exit(2);
    };
    let sm = args
        .get(2)
        .and_then(|s| s.parse().ok())
        .and_then(Sm::from_number)
        .unwrap_or(Sm::Sm90);
    let src = std::fs::read_to_string(path).unwrap_or_else(|e| {
        eprintln!("{path}: {e}");
        std::process::exit(1)
    });
    let module = gyre_ir::parse_module(&src).unwrap_or_else(|e| {
        eprint!("{}", e.render(path, &src));
        std::process::exit(1)
    });
    match compile_module(&module, &CodegenOptions { sm }) {
        Ok(ptx) => print!("{ptx}"),
        Err(e) => {
            eprintln!("{path}: {e}");
            std::process::exit(1)
        }
    }
}
