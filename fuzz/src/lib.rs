//! Fuzz oracles shared by the cargo-fuzz targets and by `cargo test` over the seeds.
#![warn(missing_docs)]

use gyre_ir::{parse_function, parse_module};

/// Parse arbitrary bytes (as lossy UTF-8) as a module and as a single function. The
/// parser must not panic; whenever it accepts the input, printing the result must give
/// text that parses again and prints identically (print -> parse -> print is stable).
pub fn check_parse(data: &[u8]) {
    let src = String::from_utf8_lossy(data);
    if let Ok(m) = parse_module(&src) {
        let p1 = m.to_string();
        let m2 = parse_module(&p1).unwrap_or_else(|e| {
            panic!(
                "printed module does not parse:\n{}",
                e.render("printed", &p1)
            )
        });
        let p2 = m2.to_string();
        assert_eq!(p1, p2, "module print -> parse -> print differs");
    }
    if let Ok(f) = parse_function(&src) {
        let p1 = f.display(None).to_string();
        let f2 = parse_function(&p1).unwrap_or_else(|e| {
            panic!(
                "printed function does not parse:\n{}",
                e.render("printed", &p1)
            )
        });
        assert_eq!(
            p1,
            f2.display(None).to_string(),
            "function print -> parse -> print differs"
        );
    }
}
