//! Run the fuzz oracles over the committed seed inputs as an ordinary test.

use std::path::Path;

/// Every seed goes through the fuzz oracle; seeds not named `error*` must also parse,
/// so the round-trip half of the oracle is exercised.
#[test]
fn parse_seeds() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("seeds/parse_gir");
    let mut entries: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("directory entry").path())
        .collect();
    entries.sort();
    let mut valid = 0;
    for path in &entries {
        let data = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        gyre_fuzz::check_parse(&data);
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        let src = String::from_utf8_lossy(&data);
        let parsed = gyre_ir::parse_module(&src);
        if name.starts_with("error") {
            assert!(parsed.is_err(), "{name} should not parse");
        } else {
            if let Err(e) = parsed {
                panic!("{}", e.render(name, &src));
            }
            valid += 1;
        }
    }
    assert!(valid >= 3, "expected valid seed files in {}", dir.display());
}
