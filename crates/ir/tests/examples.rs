//! Every shipped example parses, verifies, and round-trips through the printer.

use std::path::Path;

#[test]
fn examples_parse_verify_and_round_trip() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
    let mut seen = 0;
    let mut entries: Vec<_> = std::fs::read_dir(&dir)
        .expect("examples/ exists")
        .map(|e| e.expect("readable entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "gir"))
        .collect();
    entries.sort();
    for path in entries {
        let src = std::fs::read_to_string(&path).expect("readable example");
        let name = path.display().to_string();
        let module =
            gyre_ir::parse_module(&src).unwrap_or_else(|e| panic!("{}", e.render(&name, &src)));
        if let Err(e) = gyre_ir::verifier::verify_module(&module) {
            panic!("{name}: verifier errors:\n{e}");
        }
        let printed = module.to_string();
        let again = gyre_ir::parse_module(&printed)
            .unwrap_or_else(|e| panic!("{}", e.render(&name, &printed)));
        assert_eq!(
            printed,
            again.to_string(),
            "{name}: print/parse/print differs"
        );
        seen += 1;
    }
    assert!(seen >= 7, "expected at least 7 examples, found {seen}");
}
