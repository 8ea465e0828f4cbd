//! Project automation as a library, so that tests can call the same code as
//! `cargo xtask` (see `main.rs` for the command-line tasks).
#![warn(missing_docs)]

pub mod conformance;
pub mod corpus;
pub mod downstream;
pub mod gpu_table;

use std::path::Path;

/// One manifest row: its line number and the requested cells.
pub type TsvRow = (usize, Vec<Option<String>>);

/// The rows of a tab-separated manifest with a header line, reduced to the columns named
/// in `names` (found by header name, in that order): `(line number, cells)` for each
/// non-empty line, a cell `None` where the line is short.
pub fn read_tsv(path: &Path, names: &[&str]) -> Result<Vec<TsvRow>, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let mut lines = text.lines();
    let header: Vec<&str> = lines
        .next()
        .ok_or_else(|| format!("{}: empty", path.display()))?
        .split('\t')
        .collect();
    let cols = names
        .iter()
        .map(|name| {
            header
                .iter()
                .position(|h| h == name)
                .ok_or_else(|| format!("{}: no column {name}", path.display()))
        })
        .collect::<Result<Vec<usize>, String>>()?;
    Ok(lines
        .enumerate()
        .filter(|(_, line)| !line.trim().is_empty())
        .map(|(k, line)| {
            let cells: Vec<&str> = line.split('\t').collect();
            let row = cols.iter().map(|&i| cells.get(i).map(|c| c.to_string()));
            (k + 2, row.collect())
        })
        .collect())
}

/// Cell `i` of a [`read_tsv`] row, or an error naming the line.
pub fn tsv_cell(
    path: &Path,
    line: usize,
    row: &[Option<String>],
    i: usize,
) -> Result<String, String> {
    row[i]
        .clone()
        .ok_or_else(|| format!("{}:{line}: missing column {i}", path.display()))
}
