//! `kernel FAMILY BLOCKS [OUT.ll]`: writes the report's compile-speed kernel (see
//! `gyre_perf::kernels::build`) as LLVM IR, the same text `cargo xtask perf` feeds to both
//! compilers, so that one size can be profiled on its own (`gyre compile -O --time-passes`,
//! `valgrind --tool=callgrind`, `opt -time-passes`) without running the whole report.

use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (Some(family), Some(blocks)) = (args.first(), args.get(1).and_then(|s| s.parse().ok()))
    else {
        eprintln!(
            "usage: kernel FAMILY BLOCKS [OUT.ll]  (FAMILY: {})",
            gyre_perf::kernels::FAMILIES.join(", ")
        );
        return ExitCode::from(2);
    };
    let m = match gyre_perf::kernels::build(family, blocks) {
        Ok(m) => m,
        Err(e) => {
            eprintln!("kernel: {e}");
            return ExitCode::FAILURE;
        }
    };
    let text = gyre_llvm::export_module(&m, &gyre_llvm::ExportOptions::default());
    let written = match args.get(2) {
        Some(path) => std::fs::write(path, text).map_err(|e| format!("{path}: {e}")),
        None => {
            use std::io::Write;
            std::io::stdout().write_all(text.as_bytes()).map_err(|e| e.to_string())
        }
    };
    match written {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("kernel: {e}");
            ExitCode::FAILURE
        }
    }
}
