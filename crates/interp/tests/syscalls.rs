//! `vprintf` and `assert_fail` (device `printf` and `assert`): what is printed, in which
//! order, what a failed assertion reports, and the errors of bad formats and poison.

mod common;

use common::{parse, run};
use gyre_interp::{
    assert_same_behaviour, Arg, Difference, ExecError, Inputs, Launch, Memory, PoisonUse, Schedule,
};

/// A `const` global holding the NUL-terminated bytes of `s`.
fn cstr(name: &str, s: &str) -> String {
    let bytes: Vec<String> = s.bytes().chain([0]).map(|b| b.to_string()).collect();
    format!(
        "global @{name}: const [{} x i8] align 1 = [{}]\n",
        bytes.len(),
        bytes.join(", ")
    )
}

/// Each thread prints `[ctaid, tid] l=%ld f=%.2f s=%s|%5s|` (f = tid + 0.125, a tie
/// that glibc rounds to even: 0.12) with its six arguments packed as clang packs them
/// (i32s at 0 and 4, an i64 at 8, an f64 at 16, string pointers at 24 and 32), and
/// stores vprintf's result.
fn printer() -> String {
    cstr("fmt", "[%d, %d] l=%ld f=%.2f s=%s|%5s|\n")
        + &cstr("word", "gyre")
        + "
kernel @k(ptr.global) {
    slot0 = local 40 align 8
block0(v0: ptr.global):
    v1 = slot_addr slot0
    v2 = addrspace_cast.ptr v1
    v3 = ctaid.x
    v4 = tid.x
    store v3, v2
    v5 = iconst.i64 4
    v6 = ptradd v2, v5, 1
    store v4, v6
    v7 = sext.i64 v4
    v8 = iconst.i64 -1000000000000
    v9 = imul v7, v8
    v10 = iconst.i64 8
    v11 = ptradd v2, v10, 1
    store v9, v11
    v12 = sitofp.f64 v4
    v13 = fconst.f64 0.125
    v14 = fadd v12, v13
    v15 = iconst.i64 16
    v16 = ptradd v2, v15, 1
    store v14, v16
    v17 = global_addr @word
    v18 = addrspace_cast.ptr v17
    v19 = iconst.i64 24
    v20 = ptradd v2, v19, 1
    store v18, v20
    v21 = iconst.i64 32
    v22 = ptradd v2, v21, 1
    store v18, v22
    v23 = global_addr @fmt
    v24 = addrspace_cast.ptr v23
    v25 = vprintf v24, v2
    v26 = ntid.x
    v27 = imul v3, v26
    v28 = iadd v27, v4
    v29 = sext.i64 v28
    v30 = ptradd v0, v29, 4
    store v25, v30
    return
}
"
}

#[test]
fn printf_formats_and_orders_by_cta_then_thread() {
    let src = printer();
    let mut want = String::new();
    for c in 0..2 {
        for t in 0..3i64 {
            want += &format!(
                "[{c}, {t}] l={} f={}.12 s=gyre| gyre|\n",
                t * -1_000_000_000_000,
                t
            );
        }
    }
    for sched in [Schedule::Forward, Schedule::Reverse, Schedule::Shuffle(7)] {
        let mut mem = Memory::new();
        mem.alloc_zeroed("o", 24);
        let mut launch = Launch::linear(2, 3, vec![Arg::buffer("o")]);
        launch.config.schedule = sched;
        run(&src, "k", &launch, &mut mem).expect("runs");
        let got: String = mem
            .printf_output()
            .iter()
            .map(|l| l.text.as_str())
            .collect();
        assert_eq!(got, want, "{sched:?}");
        let l = &mem.printf_output()[4];
        assert_eq!((l.ctaid, l.tid), ([1, 0, 0], [1, 0, 0]));
        // vprintf returns the number of arguments it read.
        assert_eq!(mem.read::<i32>("o").unwrap(), vec![6; 6]);
        // A second launch appends; taking the output empties it.
        run(&src, "k", &launch, &mut mem).expect("runs");
        assert_eq!(mem.take_printf_output().len(), 12);
        assert!(mem.printf_output().is_empty());
    }
}

fn assert_src(extra_print: bool) -> String {
    let mut s = cstr("msg", "gtid < N")
        + &cstr("file", "simpleAssert.cu")
        + &cstr("func", "void testKernel(int)")
        + &cstr("hello", "before %d\n");
    s += "
kernel @k(i32) {
    slot0 = local 4 align 4
block0(v0: i32):
    v1 = ctaid.x
    v2 = ntid.x
    v3 = imul v1, v2
    v4 = tid.x
    v5 = iadd v3, v4
    v20 = slot_addr slot0
    v21 = addrspace_cast.ptr v20
    store v5, v21
    v22 = global_addr @hello
    v23 = addrspace_cast.ptr v22
";
    if extra_print {
        s += "    v24 = vprintf v23, v21\n";
    }
    s += "    v6 = icmp slt v5, v0
    brif v6, block1, block2
block1:
    return
block2:
    v7 = global_addr @msg
    v8 = addrspace_cast.ptr v7
    v9 = global_addr @file
    v10 = addrspace_cast.ptr v9
    v11 = global_addr @func
    v12 = addrspace_cast.ptr v11
    v13 = iconst.i32 64
    assert_fail v8, v10, v13, v12
    return
}
";
    s
}

#[test]
fn failed_assert_ends_the_launch_with_cudas_message() {
    let src = assert_src(true);
    // Every thread below N: no failure.
    let mut mem = Memory::new();
    run(
        &src,
        "k",
        &Launch::linear(2, 32, vec![Arg::Int(64)]),
        &mut mem,
    )
    .expect("runs");
    assert_eq!(mem.printf_output().len(), 64);
    // N = 60: thread 28 of CTA 1 fails first.
    let mut mem = Memory::new();
    let e = run(
        &src,
        "k",
        &Launch::linear(2, 32, vec![Arg::Int(60)]),
        &mut mem,
    )
    .unwrap_err();
    let ExecError::AssertFailed {
        ref loc,
        ref failure,
    } = e
    else {
        panic!("not an assertion failure: {e}");
    };
    let gyre_interp::AssertFailure {
        message,
        file,
        line,
        function,
    } = &**failure;
    let line = *line;
    assert_eq!((loc.ctaid, loc.tid), ([1, 0, 0], [28, 0, 0]));
    assert_eq!(
        (message.as_str(), file.as_str(), line, function.as_str()),
        ("gtid < N", "simpleAssert.cu", 64, "void testKernel(int)")
    );
    assert!(e.to_string().starts_with(
        "simpleAssert.cu:64: void testKernel(int): block: [1,0,0], thread: [28,0,0] \
         Assertion `gtid < N` failed."
    ));
    // What was printed before the failure is kept: all of CTA 0, and CTA 1's threads
    // up to the failing one (the forward schedule runs them in order).
    let out = mem.printf_output();
    assert_eq!(out.len(), 32 + 29);
    assert_eq!(out[60].text, "before 60\n");
}

#[test]
fn bad_formats_and_poison_are_errors() {
    let cases = [
        ("n=%n\n", "%n is not supported"),
        ("%q\n", "unknown conversion"),
        ("50%", "format ends inside a conversion"),
    ];
    for (fmt, why) in cases {
        let src = cstr("fmt", fmt)
            + "
kernel @k() {
    slot0 = local 8 align 8
block0:
    v0 = slot_addr slot0
    v1 = addrspace_cast.ptr v0
    v2 = iconst.i32 0
    store v2, v1
    v3 = global_addr @fmt
    v4 = addrspace_cast.ptr v3
    v5 = vprintf v4, v1
    return
}
";
        let e = run(&src, "k", &Launch::linear(1, 1, vec![]), &mut Memory::new()).unwrap_err();
        assert!(
            matches!(e, ExecError::BadPrintf { ref reason, .. } if reason.contains(why)),
            "{fmt}: {e}"
        );
    }
    // An argument never written (fresh local memory is poison) cannot be printed.
    let src = cstr("fmt", "%d\n")
        + "
kernel @k() {
    slot0 = local 8 align 8
block0:
    v0 = slot_addr slot0
    v1 = addrspace_cast.ptr v0
    v3 = global_addr @fmt
    v4 = addrspace_cast.ptr v3
    v5 = vprintf v4, v1
    return
}
";
    let e = run(&src, "k", &Launch::linear(1, 1, vec![]), &mut Memory::new()).unwrap_err();
    assert!(
        matches!(
            e,
            ExecError::Poison {
                what: PoisonUse::Printed,
                ..
            }
        ),
        "{e}"
    );
    // A format past its buffer's end is an out-of-bounds read, not a crash; a null
    // format prints nothing and returns -1.
    let src = "
kernel @k(ptr.global) {
block0(v0: ptr.global):
    v1 = addrspace_cast.ptr v0
    v2 = iconst.i64 0
    v3 = inttoptr.ptr v2
    v4 = vprintf v3, v3
    store v4, v0
    v5 = iconst.i64 4
    v6 = ptradd v1, v5, 1
    v7 = vprintf v6, v6
    return
}
";
    let mut mem = Memory::new();
    mem.alloc_from("o", &[0x41414141u32, 0x41414141]);
    let e = run(
        src,
        "k",
        &Launch::linear(1, 1, vec![Arg::buffer("o")]),
        &mut mem,
    )
    .unwrap_err();
    assert!(matches!(e, ExecError::OutOfBounds { .. }), "{e}");
    assert_eq!(mem.read::<i32>("o").unwrap()[0], -1);
    assert!(mem.printf_output().is_empty());
}

#[test]
fn differential_runs_compare_printf_output() {
    // Same memory effects, one more printf: the runs differ.
    let (a, b) = (parse(&assert_src(true)), parse(&assert_src(false)));
    let inputs = Inputs {
        launch: Launch::linear(1, 4, vec![Arg::Int(64)]),
        memory: Memory::new(),
    };
    assert!(assert_same_behaviour(&a, &a, "k", &inputs).is_ok());
    let d = assert_same_behaviour(&a, &b, "k", &inputs).unwrap_err();
    assert!(
        matches!(d, Difference::Printf { line: 0, ref before, ref after } if before == "before 0\n" && after.is_empty()),
        "{d}"
    );
}
