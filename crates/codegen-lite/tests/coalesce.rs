//! Coalescing of block parameters with their arguments (`src/coalesce.rs`): each kernel
//! is compiled with and without it (`CodegenFlags::coalesce`), both texts go through
//! ptxas and run in ptx-sim against the interpreter on several inputs, and the moves the
//! coalescing must remove (or must keep) are counted in the loop's text.

mod common;

use common::{compare, parse, ptxas_or_skip, run_ptxas};
use gyre_analysis::ModuleAnalyses;
use gyre_codegen_lite::{compile_module_with_flags, CodegenFlags, CodegenOptions, Sm};
use gyre_interp::{Arg, Inputs, Launch, Memory};
use gyre_ir::Module;

fn compile_with(m: &Module, coalesce: bool) -> String {
    let flags = CodegenFlags {
        coalesce,
        ..CodegenFlags::default()
    };
    compile_module_with_flags(
        m,
        &CodegenOptions { sm: Sm::Sm70 },
        &flags,
        &mut ModuleAnalyses::new(),
    )
    .unwrap_or_else(|e| panic!("codegen failed: {e}"))
}

/// The lines of `ptx` from label `from` (exclusive) up to the next label.
fn block_text<'a>(ptx: &'a str, from: &str) -> Vec<&'a str> {
    let mut lines = ptx.lines().skip_while(|l| *l != format!("{from}:"));
    lines.next();
    lines.take_while(|l| !l.starts_with('$')).collect()
}

/// Is `s` (an operand, maybe with the line's `;`) a virtual register (`%r3`, `%rd1`,
/// `%p2`, `%f4`, `%fd5`), not an immediate or a special register (`%tid.x`)?
fn is_vreg(s: &str) -> bool {
    let s = s.trim_end_matches(';');
    let Some(rest) = s.strip_prefix('%') else {
        return false;
    };
    let digits = rest.trim_start_matches(|c: char| c.is_ascii_lowercase());
    let prefix = &rest[..rest.len() - digits.len()];
    matches!(prefix, "r" | "rd" | "p" | "f" | "fd")
        && !digits.is_empty()
        && digits.bytes().all(|b| b.is_ascii_digit())
}

/// `mov` instructions between virtual registers in `lines`.
fn reg_movs(lines: &[&str]) -> usize {
    lines
        .iter()
        .filter(|l| {
            let t = l.trim_start();
            t.starts_with("mov.") && t.split(", ").nth(1).is_some_and(is_vreg)
        })
        .count()
}

/// Compile with and without coalescing, assemble both, and run both against the
/// interpreter for each of `ns` as the kernel's last (`i32`) argument, on `threads`
/// threads, with an `i32` output buffer of `words` words as the first. Returns the two
/// texts (with, without).
fn check(src: &str, kernel: &str, threads: u32, words: usize, ns: &[u64]) -> (String, String) {
    let m = parse(src);
    let on = compile_with(&m, true);
    let off = compile_with(&m, false);
    if let Some(p) = ptxas_or_skip(kernel) {
        for ptx in [&on, &off] {
            run_ptxas(&p, ptx, Sm::Sm70).unwrap_or_else(|e| panic!("{e}\n{ptx}"));
        }
    }
    for &n in ns {
        let mut mem = Memory::new();
        mem.alloc_from("out", &vec![0i32; words]);
        let inputs = Inputs {
            launch: Launch::linear(1, threads, vec![Arg::buffer("out"), Arg::Int(n)]),
            memory: mem,
        };
        for (what, ptx) in [("coalesced", &on), ("not coalesced", &off)] {
            compare(&m, kernel, &inputs, ptx)
                .unwrap_or_else(|e| panic!("{what}, n = {n}: {e}\n{ptx}"));
        }
    }
    (on, off)
}

/// The interpreter's output buffer for `n`.
fn interpret(src: &str, kernel: &str, threads: u32, words: usize, n: u64) -> Vec<i32> {
    let m = parse(src);
    let mut mem = Memory::new();
    mem.alloc_from("out", &vec![0i32; words]);
    let launch = Launch::linear(1, threads, vec![Arg::buffer("out"), Arg::Int(n)]);
    gyre_interp::run_kernel(&m, kernel, &launch, &mut mem).expect("interpreter");
    mem.read::<i32>("out").expect("out")
}

/// A counting loop: the counter and the sum share registers with their next values,
/// so the latch has no `mov` (llc's `add.s32 %r1, %r1, 1`).
const COUNTER: &str = "
kernel @counter(ptr.global, i32) {
block0(v0: ptr.global, v1: i32):
    v2 = iconst.i32 0
    v3 = iconst.i32 1
    jump block1(v2, v2)
block1(v4: i32, v5: i32):
    v6 = iadd v5, v4
    v7 = iadd v4, v3
    v8 = icmp slt v7, v1
    brif v8, block1(v7, v6), block2
block2:
    store v6, v0
    return
}
";

#[test]
fn loop_counter_needs_no_mov() {
    let (on, off) = check(COUNTER, "counter", 1, 1, &[0, 1, 2, 5, 17]);
    let body = block_text(&on, "$L__BB1");
    assert_eq!(reg_movs(&body), 0, "{on}");
    // `add.s32 %rN, %rN, 1`: the counter updated in place.
    let in_place = body.iter().any(|l| {
        let ops: Vec<&str> = l
            .trim_start()
            .trim_end_matches(';')
            .split([' ', ','])
            .collect();
        matches!(ops[..], ["add.s32", d, "", a, "", "1"] if d == a)
    });
    assert!(in_place, "{on}");
    assert_eq!(reg_movs(&block_text(&off, "$L__BB1")), 2, "{off}");
    assert_eq!(interpret(COUNTER, "counter", 1, 1, 5), vec![10]);
}

/// Two parameters swapped on the back edge: both live at the header, so they stay
/// apart, and the swap is still a cycle through a temporary.
const SWAP: &str = "
kernel @swap(ptr.global, i32) {
block0(v0: ptr.global, v1: i32):
    v2 = iconst.i32 3
    v3 = iconst.i32 8
    v10 = iconst.i32 0
    v11 = iconst.i32 1
    jump block1(v2, v3, v10)
block1(v4: i32, v5: i32, v6: i32):
    v7 = iadd v6, v11
    v8 = icmp slt v7, v1
    brif v8, block1(v5, v4, v7), block2
block2:
    store v4, v0
    v9 = ptradd v0, v11, 4
    store v5, v9
    return
}
";

#[test]
fn swapped_parameters_stay_apart() {
    let (on, _) = check(SWAP, "swap", 1, 2, &[0, 1, 2, 3, 6]);
    // The three moves of the swap remain; the counter's copy is gone.
    assert_eq!(reg_movs(&block_text(&on, "$L__BB1")), 3, "{on}");
    assert_eq!(interpret(SWAP, "swap", 1, 2, 2), vec![8, 3]);
}

/// The counter's old value is read after its increment, in the loop (the sum) and after
/// the exit: the counter may not share a register with its next value. The sum may.
const OLD_VALUE: &str = "
kernel @old(ptr.global, i32) {
block0(v0: ptr.global, v1: i32):
    v2 = iconst.i32 0
    v3 = iconst.i32 1
    jump block1(v2, v2)
block1(v4: i32, v5: i32):
    v6 = iadd v4, v3
    v7 = iadd v5, v4
    v8 = icmp slt v6, v1
    brif v8, block1(v6, v7), block2
block2:
    store v4, v0
    v9 = ptradd v0, v3, 4
    store v7, v9
    return
}
";

#[test]
fn value_read_after_its_redefinition_is_not_coalesced() {
    let (on, _) = check(OLD_VALUE, "old", 1, 2, &[0, 1, 2, 7]);
    let body = block_text(&on, "$L__BB1");
    // One copy left: the counter's.
    assert_eq!(reg_movs(&body), 1, "{on}");
    assert_eq!(interpret(OLD_VALUE, "old", 1, 2, 4), vec![3, 6]);
}

/// A pointer walked by the loop, with a folded access `[p+8]` of the old pointer after
/// the next one is computed: the folded address reads `p` there, so `p` is live past
/// `p_next`'s definition and they stay apart.
const FOLDED: &str = "
kernel @folded(ptr.global, i32) {
block0(v0: ptr.global, v1: i32):
    v2 = iconst.i32 0
    v3 = iconst.i32 1
    v20 = iconst.i32 0
    jump block1(v0, v2, v20)
block1(v4: ptr.global, v5: i32, v21: i32):
    v6 = iconst.i64 1
    v7 = ptradd v4, v6, 4
    v8 = iconst.i64 2
    v9 = ptradd v4, v8, 4
    v10 = load.i32 v9
    v22 = iadd v21, v10
    v11 = iadd v5, v3
    v12 = icmp slt v11, v1
    brif v12, block1(v7, v11, v22), block2
block2:
    store v22, v0
    return
}
";

#[test]
fn folded_address_of_the_old_value_keeps_it_apart() {
    let m = parse(FOLDED);
    let on = compile_with(&m, true);
    // The access reads the old pointer.
    assert!(on.contains("ld.global.u32 %r"), "{on}");
    let body = block_text(&on, "$L__BB1");
    let pointer_copies: Vec<&str> = body
        .iter()
        .copied()
        .filter(|l| l.contains("mov.b64"))
        .collect();
    assert_eq!(
        reg_movs(&pointer_copies),
        1,
        "the pointer keeps its copy:\n{on}"
    );
    // Memory 0..16 words: out[0] += out[k + 2] for k < n.
    let mut mem = Memory::new();
    mem.alloc_from("out", &(0..16).map(|i| i * 10).collect::<Vec<i32>>());
    for n in [1u64, 2, 5] {
        let inputs = Inputs {
            launch: Launch::linear(1, 1, vec![Arg::buffer("out"), Arg::Int(n)]),
            memory: mem.clone(),
        };
        for ptx in [&on, &compile_with(&m, false)] {
            compare(&m, "folded", &inputs, ptx).unwrap_or_else(|e| panic!("n = {n}: {e}\n{ptx}"));
        }
    }
    if let Some(p) = ptxas_or_skip("folded_address_of_the_old_value_keeps_it_apart") {
        run_ptxas(&p, &on, Sm::Sm70).unwrap_or_else(|e| panic!("{e}\n{on}"));
    }
}

/// Nested loops: the inner counter and sum, and the outer counter, each share their
/// next value's register; the inner loop has no `mov`.
const NESTED: &str = "
kernel @nested(ptr.global, i32) {
block0(v0: ptr.global, v1: i32):
    v2 = iconst.i32 0
    v3 = iconst.i32 1
    jump block1(v2, v2)
block1(v4: i32, v5: i32):
    jump block2(v2, v5)
block2(v6: i32, v7: i32):
    v8 = imul v4, v6
    v9 = iadd v7, v8
    v10 = iadd v6, v3
    v11 = icmp slt v10, v1
    brif v11, block2(v10, v9), block3
block3:
    v12 = iadd v4, v3
    v13 = icmp slt v12, v1
    brif v13, block1(v12, v9), block4
block4:
    store v9, v0
    return
}
";

#[test]
fn nested_loops_have_no_inner_mov() {
    let (on, off) = check(NESTED, "nested", 1, 1, &[0, 1, 2, 4, 9]);
    assert_eq!(reg_movs(&block_text(&on, "$L__BB2")), 0, "{on}");
    assert!(reg_movs(&block_text(&off, "$L__BB2")) > 0, "{off}");
    assert!(
        reg_movs(&on.lines().collect::<Vec<_>>()) < reg_movs(&off.lines().collect::<Vec<_>>()),
        "{on}\n{off}"
    );
    // sum over i, j < 4 of i * j = 6 * 6.
    assert_eq!(interpret(NESTED, "nested", 1, 1, 4), vec![36]);
}

/// A switch whose cases all join one block with one parameter: each case's value
/// shares the join parameter's register, so no case needs a copy (or an edge stub).
const SWITCH: &str = "
kernel @switch(ptr.global, i32) {
block0(v0: ptr.global, v1: i32):
    v2 = tid.x
    v3 = iconst.i32 3
    v4 = and v2, v3
    br_table v4, block4, [0: block1, 1: block2, 2: block3]
block1:
    v5 = iadd v2, v1
    jump block5(v5)
block2:
    v6 = imul v2, v1
    jump block5(v6)
block3:
    v7 = isub v2, v1
    jump block5(v7)
block4:
    v8 = xor v2, v1
    jump block5(v8)
block5(v9: i32):
    v10 = sext.i64 v2
    v11 = ptradd v0, v10, 4
    store v9, v11
    return
}
";

#[test]
fn switch_cases_join_without_copies() {
    let (on, off) = check(SWITCH, "switch", 8, 8, &[0, 5, 100]);
    assert_eq!(reg_movs(&on.lines().collect::<Vec<_>>()), 0, "{on}");
    assert_eq!(reg_movs(&off.lines().collect::<Vec<_>>()), 4, "{off}");
}

/// An `i1` `select` whose condition is the parameter its result is passed to: its
/// lowering (two predicated moves) reads the condition after writing the result, so
/// the two may not share a register.
const SELECT_FLAG: &str = "
kernel @flag(ptr.global, i32) {
block0(v0: ptr.global, v1: i32):
    v2 = iconst.i32 0
    v3 = iconst.i32 1
    v4 = iconst.i1 1
    jump block1(v2, v4)
block1(v5: i32, v6: i1):
    v7 = iconst.i32 3
    v8 = and v5, v7
    v9 = icmp eq v8, v2
    v10 = icmp ne v8, v3
    v11 = select v6, v9, v10
    v12 = iadd v5, v3
    v13 = icmp slt v12, v1
    brif v13, block1(v12, v11), block2
block2:
    v14 = zext.i32 v11
    store v14, v0
    return
}
";

#[test]
fn i1_select_does_not_share_its_condition_register() {
    check(SELECT_FLAG, "flag", 1, 1, &[1, 2, 3, 4, 5, 6, 9]);
}

/// One `while` nest `d` deep (perf's `deep` family), each level loading, bumping and
/// storing `out[i]` in its latch: every outer counter is live through all the levels
/// inside it, so the liveness walks run out of their budget and only the inner levels
/// are coalesced. The partly coalesced text must still compute what the interpreter
/// does.
fn deep_nest(d: usize) -> String {
    use std::fmt::Write;
    let mut s = String::from(
        "kernel @deep(ptr.global, i32) {\nblock0(v0: ptr.global, v1: i32):\n    v2 = iconst.i32 0\n    v3 = iconst.i32 1\n    jump block1(v2)\n",
    );
    let exit = 3 * d + 1;
    for i in 0..d {
        let (h, pre, latch) = (3 * i + 1, 3 * i + 2, 3 * i + 3);
        let [x, c, a, p, l, sum, y] = std::array::from_fn(|k| 4 + 7 * i + k);
        let out = if i == 0 { exit } else { 3 * (i - 1) + 3 };
        let inner = if i + 1 < d { pre } else { latch };
        let _ = write!(
            s,
            "block{h}(v{x}: i32):\n    v{c} = icmp slt v{x}, v1\n    brif v{c}, block{inner}, block{out}\n"
        );
        if i + 1 < d {
            let _ = write!(s, "block{pre}:\n    jump block{}(v2)\n", h + 3);
        }
        let _ = write!(
            s,
            "block{latch}:\n    v{a} = sext.i64 v{x}\n    v{p} = ptradd v0, v{a}, 4\n    v{l} = load.i32 v{p}\n    v{sum} = iadd v{l}, v{x}\n    store v{sum}, v{p}\n    v{y} = iadd v{x}, v3\n    jump block{h}(v{y})\n"
        );
    }
    let _ = write!(s, "block{exit}:\n    store v1, v0\n    return\n}}\n");
    s
}

#[test]
fn past_the_liveness_budget_the_rest_keeps_its_copies() {
    // With `v1` = 1 each level runs once (a larger bound multiplies per level).
    let src = deep_nest(600);
    let (on, off) = check(&src, "deep", 1, 4, &[0, 1]);
    let (won, woff) = (
        reg_movs(&on.lines().collect::<Vec<_>>()),
        reg_movs(&off.lines().collect::<Vec<_>>()),
    );
    // Some counters share their next value's register, not all (the budget).
    assert!(won < woff, "{won} of {woff}");
    assert!(won > 0, "{won} of {woff}");
}
