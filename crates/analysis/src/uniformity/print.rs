//! The function in the `.gir` text format, annotated with uniformity.
//!
//! Every line that defines a value ends in `; uniform` or `; divergent`, and so does
//! every `brif` and `br_table` (for the branch). A block label line lists its
//! parameters (`; params: v3 uniform, v4 divergent`), then `; divergent control` if the
//! block may run with part of a warp inactive and `; divergent loop` if it heads a loop
//! with a divergent exit. Without the annotations the text is exactly
//! [`write_function`]'s, so it still parses.

use super::Uniformity;
use core::fmt::Write;
use gyre_ir::{write_function, Function, Module, Opcode};

/// Print `func` with the uniformity facts of `u` (computed for `func`).
pub fn print_uniformity(u: &Uniformity, func: &Function, module: Option<&Module>) -> String {
    let mut plain = String::new();
    write_function(&mut plain, func, module).expect("writing to a String cannot fail");
    let mut lines = plain.lines();
    let mut out = String::with_capacity(plain.len() * 2);
    let word = |d: bool| if d { "divergent" } else { "uniform" };
    // The header, then one line per slot.
    for _ in 0..1 + func.slots.len() {
        let l = lines
            .next()
            .expect("write_function prints the header and slots");
        out.push_str(l);
        out.push('\n');
    }
    for block in func.layout.blocks() {
        let l = lines
            .next()
            .expect("write_function prints one line per block");
        out.push_str(l);
        let params = func.dfg.block_params(block);
        if !params.is_empty() {
            out.push_str(" ; params:");
            for (i, &p) in params.iter().enumerate() {
                let sep = if i == 0 { " " } else { ", " };
                let _ = write!(out, "{sep}{p} {}", word(u.is_divergent(p)));
            }
        }
        if u.block_may_be_divergent_control(block) {
            out.push_str(" ; divergent control");
        }
        if u.is_divergent_loop_header(block) {
            out.push_str(" ; divergent loop");
        }
        out.push('\n');
        for inst in func.layout.block_insts(block) {
            let l = lines
                .next()
                .expect("write_function prints one line per instruction");
            out.push_str(l);
            if let Some(r) = func.dfg.inst_result(inst) {
                let _ = write!(out, " ; {}", word(u.is_divergent(r)));
            } else if matches!(func.dfg.inst(inst).opcode(), Opcode::Brif | Opcode::BrTable) {
                let _ = write!(out, " ; {}", word(!u.is_branch_uniform(inst)));
            }
            out.push('\n');
        }
    }
    for l in lines {
        out.push_str(l);
        out.push('\n');
    }
    out
}
