//! Large inputs: long block chains and wide switches import and export without deep
//! recursion or quadratic blow-up (no timing is asserted; a quadratic step would make
//! this test run for minutes rather than fail).

use gyre_ir::verifier::verify_module;
use gyre_llvm::{export_module, import_module, ExportOptions};
use std::fmt::Write;

/// `n` blocks in a chain, each adding one to a value that flows backwards through a
/// phi loop at the end, and a switch with `cases` edges into one phi block.
fn big_function(n: usize, cases: usize) -> String {
    let mut s = String::from("define i32 @big(i32 %a) {\nentry:\n  br label %b0\n");
    for i in 0..n {
        let prev = if i == 0 {
            "%a".to_string()
        } else {
            format!("%x{}", i - 1)
        };
        let _ = write!(
            s,
            "b{i}:\n  %x{i} = add i32 {prev}, 1\n  br label %b{}\n",
            i + 1
        );
    }
    let _ = write!(s, "b{n}:\n  switch i32 %x{}, label %join [\n", n - 1);
    for c in 0..cases {
        let _ = writeln!(s, "    i32 {c}, label %c{c}");
    }
    s.push_str("  ]\n");
    for c in 0..cases {
        let _ = write!(s, "c{c}:\n  br label %join\n");
    }
    s.push_str("join:\n  %r = phi i32 [ 0, %b");
    let _ = write!(s, "{n} ]");
    for c in 0..cases {
        let _ = write!(s, ", [ {c}, %c{c} ]");
    }
    s.push_str("\n  ret i32 %r\n}\n");
    s
}

#[test]
fn long_chains_and_wide_switches() {
    let src = big_function(100_000, 20_000);
    let m = import_module(&src).unwrap_or_else(|e| panic!("{}", e.first()));
    verify_module(&m).expect("verifies");
    let f = &m.functions[m.func_by_name("big").unwrap()];
    assert!(f.layout.num_blocks() > 120_000);
    let text = export_module(&m, &ExportOptions::default());
    let back = import_module(&text).unwrap_or_else(|e| panic!("{}", e.first()));
    verify_module(&back).expect("re-import verifies");
}
