//! Two edges of one terminator to one block with parameters: a trampoline block only when
//! their arguments differ. Edges passing the same arguments stay direct, so a loop exit
//! taken by two edges of a `br_table` leaves the loop from the loop's own block (LCSSA
//! holds for LLVM as it does for Gyre).

use gyre_llvm::{export_module, import_module, ExportOptions};

fn export(src: &str) -> String {
    let m = gyre_ir::parse_module(src).expect("test input parses");
    export_module(&m, &ExportOptions::default())
}

fn reimports(text: &str) {
    let back = import_module(text).unwrap_or_else(|e| panic!("{}\n{text}", e.render("t")));
    gyre_ir::verifier::verify_module(&back).unwrap_or_else(|e| panic!("{e:?}\n{text}"));
}

const SAME: &str = "kernel @k(i32) {
block0(v0: i32):
    v1 = iconst.i32 0
    br_table v0, block1(v0), [0: block1(v0), 1: block2]
block1(v2: i32):
    return
block2:
    return
}
";

#[test]
fn same_arguments_stay_direct() {
    let text = export(SAME);
    assert!(!text.contains("block0.e"), "{text}");
    assert!(
        text.contains("phi i32 [ %v0, %block0 ], [ %v0, %block0 ]"),
        "{text}"
    );
    reimports(&text);
}

#[test]
fn different_arguments_get_trampolines() {
    let text = export(&SAME.replace("[0: block1(v0)", "[0: block1(v1)"));
    assert!(text.contains("block0.e0:"), "{text}");
    assert!(text.contains("block0.e1:"), "{text}");
    reimports(&text);
}
