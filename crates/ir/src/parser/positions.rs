//! Where the parsed text defined each function, block, instruction, slot and global, and
//! the rendering of a message at such a place (`file:line:col`, the line, a caret).
//!
//! Positions are a side table filled by [`parse_module_with_positions`] (or, with
//! offsets into a front end's own source, by a
//! [`FunctionBuilder`](crate::builder::FunctionBuilder) given `set_srcloc`), not a field
//! of the instructions: IR without positions and the passes would otherwise pay four
//! bytes per instruction for nothing, and every edit would have to keep the field
//! meaningful. Entities created after parsing (by a pass) have no
//! position; messages then name the block and print the instruction instead.
//!
//! [`parse_module_with_positions`]: super::parse_module_with_positions

use crate::entities::{Block, FuncId, GlobalId, Inst, Slot};
use cranelift_entity::{EntityRef, SecondaryMap};

/// "No position" in the maps.
const NONE: u32 = u32::MAX;

/// The byte offsets at which one function's entities are defined.
///
/// The parser fills one per function; a front end gets one from
/// [`FunctionBuilder::finalize_with_srclocs`](crate::builder::FunctionBuilder::finalize_with_srclocs)
/// (offsets into its own source language's text) and adds it to a [`SourceMap`] with
/// [`SourceMap::set_function`].
#[derive(Clone)]
pub struct FuncPositions {
    /// The `@name` of the header.
    pub(crate) header: u32,
    /// The start of each instruction's line (its `vN =` or its opcode).
    pub(crate) insts: SecondaryMap<Inst, u32>,
    /// Each block's label.
    pub(crate) blocks: SecondaryMap<Block, u32>,
    /// Each slot's declaration.
    pub(crate) slots: SecondaryMap<Slot, u32>,
}

impl Default for FuncPositions {
    /// No position for anything.
    fn default() -> FuncPositions {
        FuncPositions::new(NONE)
    }
}

impl FuncPositions {
    /// Where the function is defined (`None`: unknown).
    pub fn header(&self) -> Option<u32> {
        known(self.header)
    }

    /// Where instruction `i` starts.
    pub fn inst(&self, i: Inst) -> Option<u32> {
        known(self.insts[i])
    }

    /// Where block `b` starts.
    pub fn block(&self, b: Block) -> Option<u32> {
        known(self.blocks[b])
    }

    pub(crate) fn new(header: u32) -> FuncPositions {
        FuncPositions {
            header,
            insts: SecondaryMap::with_default(NONE),
            blocks: SecondaryMap::with_default(NONE),
            slots: SecondaryMap::with_default(NONE),
        }
    }
}

fn known(p: u32) -> Option<u32> {
    (p != NONE).then_some(p)
}

/// Byte offsets of a parsed module's entities in its source text.
#[derive(Clone, Default)]
pub struct SourceMap {
    /// Indexed by `FuncId` (the parser numbers functions in text order).
    pub(crate) funcs: Vec<FuncPositions>,
    pub(crate) globals: Vec<u32>,
}

impl SourceMap {
    /// Record the positions of function `f` (replacing any), for a module built by a
    /// front end rather than parsed.
    pub fn set_function(&mut self, f: FuncId, positions: FuncPositions) {
        if self.funcs.len() <= f.index() {
            self.funcs
                .resize_with(f.index() + 1, FuncPositions::default);
        }
        self.funcs[f.index()] = positions;
    }

    /// Record where global `g` is declared.
    pub fn set_global(&mut self, g: GlobalId, offset: u32) {
        if self.globals.len() <= g.index() {
            self.globals.resize(g.index() + 1, NONE);
        }
        self.globals[g.index()] = offset;
    }

    /// Where function `f`'s header names it.
    pub fn function(&self, f: FuncId) -> Option<u32> {
        self.funcs.get(f.index()).and_then(|p| known(p.header))
    }

    /// Where instruction `i` of function `f` starts.
    pub fn inst(&self, f: FuncId, i: Inst) -> Option<u32> {
        self.funcs.get(f.index()).and_then(|p| known(p.insts[i]))
    }

    /// Where block `b` of function `f` is labelled.
    pub fn block(&self, f: FuncId, b: Block) -> Option<u32> {
        self.funcs.get(f.index()).and_then(|p| known(p.blocks[b]))
    }

    /// Where slot `s` of function `f` is declared.
    pub fn slot(&self, f: FuncId, s: Slot) -> Option<u32> {
        self.funcs.get(f.index()).and_then(|p| known(p.slots[s]))
    }

    /// Where global `g` is declared.
    pub fn global(&self, g: GlobalId) -> Option<u32> {
        self.globals.get(g.index()).copied().and_then(known)
    }
}

/// The 1-based line and column (in characters; a byte-order mark at the start does not
/// count) of byte offset `pos` in `src`.
pub fn line_col(src: &str, pos: u32) -> (usize, usize) {
    let mut pos = (pos as usize).min(src.len());
    while !src.is_char_boundary(pos) {
        pos -= 1;
    }
    let before = &src[..pos];
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let line = before.bytes().filter(|&b| b == b'\n').count() + 1;
    let text = before[line_start..].trim_start_matches('\u{feff}');
    (line, text.chars().count() + 1)
}

/// How a source character is shown in a message: control characters and other
/// non-printables escaped (binary input is never echoed raw), everything else as is.
fn show_char(c: char, out: &mut String) {
    if c == '\t' || !(c.is_control() || c == '\u{feff}' || c == '\u{fffd}') {
        out.push(c);
    } else {
        out.extend(c.escape_default());
    }
}

/// Text for a message that quotes input: non-printable characters escaped.
pub fn escape_input(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        show_char(c, &mut out);
    }
    out
}

/// Append `file:line:col: message`, the source line (non-printables escaped, at most
/// 200 characters of it) and a caret under the column.
pub fn render_at(out: &mut String, filename: &str, src: &str, line: usize, col: usize, msg: &str) {
    out.push_str(&format!("{filename}:{line}:{col}: {msg}\n"));
    let Some(text) = line.checked_sub(1).and_then(|l| src.split('\n').nth(l)) else {
        return;
    };
    let text = text.strip_suffix('\r').unwrap_or(text);
    let text = if line == 1 {
        text.trim_start_matches('\u{feff}')
    } else {
        text
    };
    const MAX_SHOWN: usize = 200;
    let mut shown = String::new();
    let mut caret = String::new();
    for (k, c) in text.chars().enumerate() {
        if k >= MAX_SHOWN {
            shown.push_str("...");
            break;
        }
        let before = shown.chars().count();
        show_char(c, &mut shown);
        if k + 1 < col {
            // Keep tabs so the caret lines up however the terminal expands them.
            if c == '\t' {
                caret.push('\t');
            } else {
                let width = shown.chars().count() - before;
                caret.extend(std::iter::repeat_n(' ', width));
            }
        }
    }
    out.push_str(&shown);
    out.push('\n');
    out.push_str(&caret);
    out.push_str("^\n");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_and_escapes() {
        assert_eq!(line_col("ab\ncd", 4), (2, 2));
        assert_eq!(line_col("\u{feff}ab", 4), (1, 2));
        assert_eq!(line_col("ab", 99), (1, 3));
        let mut out = String::new();
        render_at(&mut out, "f", "x\u{1}y z", 1, 4, "bad");
        assert_eq!(out, "f:1:4: bad\nx\\u{1}y z\n       ^\n");
        assert_eq!(escape_input("a\u{0}\u{7f}"), "a\\u{0}\\u{7f}");
    }
}
