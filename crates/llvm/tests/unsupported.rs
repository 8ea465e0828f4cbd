//! Every kind of rejected input: one test per construct, asserting the message and its
//! `file:line:col`, plus parse errors and a no-panic mutation test.

use gyre_llvm::{import_module, import_module_with, ErrorKind, ExternalCalls, ImportOptions};

/// Import `src` and return the first error rendered with file name `t.ll`.
fn first_error(src: &str) -> String {
    match import_module(src) {
        Ok(_) => panic!("imported, but should fail:\n{src}"),
        Err(e) => e.first().render("t.ll"),
    }
}

fn assert_unsupported(src: &str, expected: &str) {
    let e = import_module(src).expect_err("must be rejected");
    assert_eq!(e.first().kind, ErrorKind::Unsupported, "{}", e.first());
    assert_eq!(e.first().render("t.ll"), expected);
}

#[test]
fn invoke() {
    assert_unsupported(
        "declare void @g()\ndefine void @f() {\nentry:\n  invoke void @g() to label %a unwind label %b\na:\n  ret void\nb:\n  ret void\n}\n",
        "t.ll:4:3: unsupported: invoke",
    );
}

#[test]
fn vector_type() {
    assert_unsupported(
        "define void @f(<4 x i32> %v) {\n  ret void\n}\n",
        "t.ll:1:16: unsupported: vector type",
    );
    assert_unsupported(
        "define void @f(ptr %p) {\n  %v = load <2 x float>, ptr %p\n  ret void\n}\n",
        "t.ll:2:8: unsupported: vector type",
    );
}

#[test]
fn vector_constant() {
    assert_unsupported(
        "define void @f(ptr %p) {\n  store <2 x i32> <i32 1, i32 2>, ptr %p\n  ret void\n}\n",
        "t.ll:2:19: unsupported: vector constant",
    );
}

#[test]
fn inline_asm() {
    assert_unsupported(
        "define void @f() {\n  call void asm sideeffect \"nop\", \"\"()\n  ret void\n}\n",
        "t.ll:2:13: unsupported: inline asm \"nop\"",
    );
}

#[test]
fn indirect_call() {
    assert_unsupported(
        "define void @f(ptr %fp) {\n  call void %fp()\n  ret void\n}\n",
        "t.ll:2:13: unsupported: indirect call",
    );
}

#[test]
fn call_through_constant_expression() {
    assert_unsupported(
        "declare void @g()\ndefine void @f() {\n  call void bitcast (ptr @g to ptr)()\n  ret void\n}\n",
        "t.ll:3:13: unsupported: call through a constant expression",
    );
}

#[test]
fn odd_integer_width() {
    assert_unsupported(
        "define i3 @f(i3 %x) {\n  ret i3 %x\n}\n",
        "t.ll:1:14: unsupported: integer type i3",
    );
    // Odd widths are emulated for arithmetic and casts, not in memory.
    assert_unsupported(
        "define void @f(i32 %x, ptr %p) {\n  %y = trunc i32 %x to i5\n  store i5 %y, ptr %p\n  ret void\n}\n",
        "t.ll:3:9: unsupported: integer type i5 in this position",
    );
    assert_unsupported(
        "define void @f(i32 %x) {\n  %y = trunc i32 %x to i5\n  %z = uitofp i5 %y to float\n  ret void\n}\n",
        "t.ll:3:8: unsupported: `uitofp` of an odd-width integer",
    );
    assert_unsupported(
        "define void @f(i128 %x) {\n  ret void\n}\n",
        "t.ll:1:16: unsupported: integer type i128",
    );
}

#[test]
fn other_float_types() {
    assert_unsupported(
        "define void @f(half %x) {\n  ret void\n}\n",
        "t.ll:1:16: unsupported: floating-point type half",
    );
}

#[test]
fn unknown_address_space() {
    assert_unsupported(
        "define void @f(ptr addrspace(7) %p) {\n  ret void\n}\n",
        "t.ll:1:16: unsupported: address space 7",
    );
}

#[test]
fn external_call_rejected_by_default_and_stubbed_on_request() {
    let src = "declare i32 @ext(i32)\ndefine i32 @f(i32 %x) {\n  %r = call i32 @ext(i32 %x)\n  ret i32 %r\n}\n";
    assert_unsupported(
        src,
        "t.ll:3:17: unsupported: call to external function @ext",
    );
    let m = import_module_with(
        src,
        &ImportOptions {
            external_calls: ExternalCalls::Stub,
        },
    )
    .expect("stubbed");
    assert!(m.func_by_name("ext").is_some());
    gyre_ir::verifier::verify_module(&m).expect("stub verifies");
}

#[test]
fn unknown_intrinsic_and_libdevice() {
    // Math functions not imported yet (docs/llvm.md lists them).
    assert_unsupported(
        "declare double @llvm.pow.f64(double, double)\ndefine double @f(double %x) {\n  %r = call double @llvm.pow.f64(double %x, double %x)\n  ret double %r\n}\n",
        "t.ll:3:20: unsupported: intrinsic @llvm.pow.f64",
    );
    assert_unsupported(
        "declare double @llvm.log2.f64(double)\ndefine double @f(double %x) {\n  %r = call double @llvm.log2.f64(double %x)\n  ret double %r\n}\n",
        "t.ll:3:20: unsupported: intrinsic @llvm.log2.f64 (f64)",
    );
    assert_unsupported(
        "declare float @__nv_erff(float)\ndefine float @f(float %x) {\n  %r = call float @__nv_erff(float %x)\n  ret float %r\n}\n",
        "t.ll:3:19: unsupported: libdevice function @__nv_erff",
    );
    assert_unsupported(
        "declare double @__nv_tan(double)\ndefine double @f(double %x) {\n  %r = call double @__nv_tan(double %x)\n  ret double %r\n}\n",
        "t.ll:3:20: unsupported: libdevice function @__nv_tan",
    );
    // A math function with the wrong signature is invalid input, not a crash.
    let e = first_error(
        "declare double @__nv_expf(double)\ndefine double @f(double %x) {\n  %r = call double @__nv_expf(double %x)\n  ret double %r\n}\n",
    );
    assert_eq!(e, "t.ll:3:20: unexpected signature for @__nv_expf");
}

#[test]
fn atomics() {
    assert_unsupported(
        "define void @f(ptr %p) {\n  %o = atomicrmw nand ptr %p, i32 1 monotonic\n  ret void\n}\n",
        "t.ll:2:18: unsupported: atomicrmw nand on i32",
    );
    assert_unsupported(
        "define void @f(ptr %p) {\n  %o = atomicrmw add ptr %p, i32 1 syncscope(\"agent\") seq_cst\n  ret void\n}\n",
        "t.ll:2:46: unsupported: sync scope \"agent\"",
    );
    assert_unsupported(
        "define void @f() {\n  fence syncscope(\"wavefront\") acquire\n  ret void\n}\n",
        "t.ll:2:19: unsupported: sync scope \"wavefront\"",
    );
    assert_unsupported(
        "define i32 @f(ptr %p) {\n  %v = load atomic i32, ptr %p monotonic, align 4\n  ret i32 %v\n}\n",
        "t.ll:2:8: unsupported: atomic load",
    );
}

#[test]
fn warp_intrinsics() {
    assert_unsupported(
        "declare void @llvm.nvvm.barrier.sync(i32)\ndefine void @f() {\n  call void @llvm.nvvm.barrier.sync(i32 1)\n  ret void\n}\n",
        "t.ll:3:13: unsupported: named barrier (barrier.sync with an id other than 0)",
    );
    assert_unsupported(
        "declare i32 @llvm.nvvm.shfl.sync.up.p.i32(i32, i32, i32, i32)\ndefine void @f(i32 %x) {\n  %r = call i32 @llvm.nvvm.shfl.sync.up.p.i32(i32 -1, i32 %x, i32 1, i32 0)\n  ret void\n}\n",
        "t.ll:3:17: unsupported: intrinsic @llvm.nvvm.shfl.sync.up.p.i32",
    );
    assert_unsupported(
        "declare i32 @llvm.nvvm.activemask()\ndefine void @f() {\n  %r = call i32 @llvm.nvvm.activemask()\n  ret void\n}\n",
        "t.ll:3:17: unsupported: intrinsic @llvm.nvvm.activemask",
    );
    // A wrong signature is an error, not a panic.
    let e = import_module(
        "declare i32 @llvm.nvvm.vote.ballot.sync(i32, i32)\ndefine void @f(i32 %x) {\n  %r = call i32 @llvm.nvvm.vote.ballot.sync(i32 -1, i32 %x)\n  ret void\n}\n",
    )
    .expect_err("bad signature");
    assert_eq!(e.first().kind, ErrorKind::Parse, "{}", e.first());
}

#[test]
fn aggregates() {
    // Aggregates are scalarized; intrinsics with aggregate results are not modelled.
    assert_unsupported(
        "declare { i32, i1 } @llvm.sadd.with.overflow.i32(i32, i32)\ndefine i32 @f(i32 %a) {\n  %s = call { i32, i1 } @llvm.sadd.with.overflow.i32(i32 %a, i32 1)\n  %r = extractvalue { i32, i1 } %s, 0\n  ret i32 %r\n}\n",
        "t.ll:3:25: unsupported: aggregate result of @llvm.sadd.with.overflow.i32",
    );
    assert_unsupported(
        "define void @f(ptr %p) {\n  %v = load [2000 x i32], ptr %p\n  ret void\n}\n",
        "t.ll:2:8: unsupported: aggregate value with too many elements",
    );
    assert_unsupported(
        "define i32 @f() {\nentry:\n  br label %b\nc:\n  %e = extractvalue { i32, i32 } %v, 0\n  ret i32 %e\nb:\n  %v = insertvalue { i32, i32 } undef, i32 1, 0\n  br label %c\n}\n",
        "t.ll:5:34: unsupported: aggregate value %v used before its definition",
    );
}

#[test]
fn indirectbr_and_blockaddress() {
    assert_unsupported(
        "define void @f(ptr %a) {\nentry:\n  indirectbr ptr %a, [label %x]\nx:\n  ret void\n}\n",
        "t.ll:3:3: unsupported: indirectbr",
    );
}

#[test]
fn variadic_and_byval() {
    assert_unsupported(
        "define void @f(i32 %x, ...) {\n  ret void\n}\n",
        "t.ll:1:13: unsupported: variadic function",
    );
    assert_unsupported(
        "%S = type { i32 }\ndefine void @f(ptr addrspace(1) byval(%S) %s) {\n  ret void\n}\n!nvvm.annotations = !{!0}\n!0 = !{ptr @f, !\"kernel\", i32 1}\n",
        "t.ll:2:33: unsupported: byval parameter in this address space",
    );
    assert_unsupported(
        "define void @f(ptr inalloca(i32) %s) {\n  ret void\n}\n",
        "t.ll:1:20: unsupported: inalloca parameter",
    );
}

#[test]
fn function_address() {
    assert_unsupported(
        "define void @g() {\n  ret void\n}\ndefine void @f(ptr %p) {\n  store ptr @g, ptr %p\n  ret void\n}\n",
        "t.ll:5:13: unsupported: address of function @g",
    );
}

#[test]
fn allocas() {
    assert_unsupported(
        "define void @f(i1 %c) {\nentry:\n  br label %l\nl:\n  %a = alloca i32\n  br label %l\n}\n",
        "t.ll:5:8: unsupported: alloca outside the entry block",
    );
    assert_unsupported(
        "define void @f(i32 %n) {\n  %a = alloca i32, i32 %n\n  ret void\n}\n",
        "t.ll:2:20: unsupported: dynamically sized alloca",
    );
}

#[test]
fn operand_bundle() {
    assert_unsupported(
        "declare void @g()\ndefine void @f(ptr %p) {\n  call void @g() [ \"deopt\"(ptr %p) ]\n  ret void\n}\n",
        "t.ll:3:18: unsupported: operand bundle",
    );
    // On a dropped hint the bundle is dropped with it.
    import_module(
        "declare void @llvm.assume(i1)\ndefine void @f(ptr %p) {\n  call void @llvm.assume(i1 true) [ \"align\"(ptr %p, i64 8) ]\n  ret void\n}\n",
    )
    .expect("assume with a bundle is dropped");
}

#[test]
fn globals() {
    assert_unsupported(
        "@t = thread_local global i32 0\n",
        "t.ll:1:6: unsupported: thread_local global",
    );
    assert_unsupported(
        "@a = global i32 0\n@b = alias i32, ptr @a\n",
        "t.ll:2:6: unsupported: global alias",
    );
    assert_unsupported(
        "@p = global ptr @q\n@q = global i32 0\n",
        "t.ll:1:13: unsupported: address-valued global initializer",
    );
    assert_unsupported(
        "@s = addrspace(3) global [4 x i32] zeroinitializer\n",
        "t.ll:1:26: unsupported: initialized shared global",
    );
    assert_unsupported(
        "@l = addrspace(5) global i32 0\n",
        "t.ll:1:1: unsupported: global in the local address space",
    );
}

#[test]
fn module_asm() {
    assert_unsupported(
        "module asm \"nop\"\n",
        "t.ll:1:1: unsupported: module-level inline asm",
    );
}

#[test]
fn kernel_returning_value() {
    assert_unsupported(
        "define ptx_kernel i32 @k() {\n  ret i32 0\n}\n",
        "t.ll:1:23: unsupported: kernel returning a value",
    );
}

#[test]
fn deep_nesting_is_an_error_not_a_stack_overflow() {
    let mut ty = String::from("i32");
    for _ in 0..10_000 {
        ty = format!("[1 x {ty}]");
    }
    let e = first_error(&format!("@g = global {ty} zeroinitializer\n"));
    assert!(e.contains("unsupported: type nesting too deep"), "{e}");
    let mut c = String::from("i64 0");
    for _ in 0..10_000 {
        c = format!("i64 add (i64 1, {c})");
    }
    let e = first_error(&format!("define i64 @f() {{\n  ret {c}\n}}\n"));
    assert!(e.contains("nesting too deep"), "{e}");
}

#[test]
fn parse_errors_have_locations() {
    assert_eq!(
        first_error("define void @f() {\n  %x = add i32 1\n  ret void\n}\n"),
        "t.ll:3:3: expected `,`, found `ret`"
    );
    assert_eq!(
        first_error("define void @f() {\n  br label %nowhere\n}\n"),
        "t.ll:2:12: undefined label %nowhere"
    );
    assert_eq!(
        first_error("define i32 @f() {\n  ret i32 %y\n}\n"),
        "t.ll:2:11: use of undefined value %y"
    );
    assert_eq!(
        first_error("define void @f() {\n  frobnicate\n}\n"),
        "t.ll:2:3: unknown instruction `frobnicate`"
    );
    assert_eq!(
        first_error("define i32 @f(i64 %x) {\n  ret i32 %x\n}\n"),
        "t.ll:2:11: %x has type i64, used as i32"
    );
    assert_eq!(
        first_error("define void @f() {\n  %a = add i32 1, 2 3\n  ret void\n}\n"),
        "t.ll:2:21: unexpected `3` after instruction"
    );
}

#[test]
fn errors_in_several_functions_are_all_reported() {
    let src = "define void @a() {\n  fence unordered\n  ret void\n}\ndefine void @b() {\n  ret void\n}\ndefine void @c(<2 x i8> %v) {\n  ret void\n}\n";
    let e = import_module(src).expect_err("two bad functions");
    let r: Vec<String> = e.errors.iter().map(|e| e.render("t.ll")).collect();
    assert_eq!(
        r,
        vec![
            "t.ll:2:9: unsupported: atomic ordering unordered".to_string(),
            "t.ll:8:16: unsupported: vector type".to_string()
        ]
    );
}

/// Every unsupported construct of one function is reported, and nothing that is only
/// a consequence of one: uses of a rejected instruction's result (scalar or aggregate),
/// a rejected multi-line `switch` (a terminator) followed by more blocks.
#[test]
fn every_unsupported_construct_in_a_function_is_reported() {
    let src = "declare i32 @llvm.nvvm.activemask()
declare { i32, i1 } @llvm.uadd.with.overflow.i32(i32, i32)
define i32 @f(i32 %x, ptr %p) {
entry:
  %a = call i32 @llvm.nvvm.activemask()
  %b = add i32 %a, %x
  %s = call { i32, i1 } @llvm.uadd.with.overflow.i32(i32 %b, i32 1)
  %s0 = extractvalue { i32, i1 } %s, 0
  %n = atomicrmw nand ptr %p, i32 1 monotonic
  switch <2 x i8> zeroinitializer, label %d [
    i32 0, label %d
  ]
d:
  %v = load atomic i32, ptr %p seq_cst, align 4
  %w = add i32 %v, %s0
  ret i32 %w
}
";
    let e = import_module(src).expect_err("unsupported");
    let r: Vec<String> = e.errors.iter().map(|e| e.render("t.ll")).collect();
    assert_eq!(
        r,
        vec![
            "t.ll:5:17: unsupported: intrinsic @llvm.nvvm.activemask",
            "t.ll:7:25: unsupported: aggregate result of @llvm.uadd.with.overflow.i32",
            "t.ll:9:18: unsupported: atomicrmw nand on i32",
            "t.ll:10:19: unsupported: vector type",
            "t.ll:14:8: unsupported: atomic load",
        ]
    );
    assert!(e.errors.iter().all(|e| e.kind == ErrorKind::Unsupported));
}

/// SplitMix64, for a reproducible mutation stream without a dependency.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// Random bytes and mutated real inputs never panic (the import returns `Ok` or `Err`).
#[test]
fn mutations_never_panic() {
    // Real inputs when the corpus is there (required under `cargo xtask test`).
    let lit = gyre_test_tools::corpus("llvm-lit", "mutations_never_panic (real seeds)");
    let seeds: Vec<String> = [
        "LoopSimplify/basictest.ll",
        "IndVarSimplify/avoid-i0.ll",
        "SimpleLoopUnswitch/2015-09-18-Addrspace.ll",
        "LoopRotate/crash.ll",
    ]
    .iter()
    .filter_map(|f| {
        let dir = lit.as_ref()?;
        Some(std::fs::read_to_string(dir.join(f)).unwrap_or_else(|e| panic!("{f}: {e}")))
    })
    .chain(std::iter::once(
        "@s = internal addrspace(3) global [4 x float] undef\ndefine void @k(float addrspace(1)* %o, i32 %n) {\nentry:\n  %t = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()\n  switch i32 %t, label %d [ i32 0, label %a\n i32 1, label %a ]\na:\n  %p = phi i32 [ 1, %entry ], [ 1, %entry ]\n  br label %d\nd:\n  %q = phi i32 [ 0, %entry ], [ %p, %a ]\n  %g = getelementptr [4 x float], [4 x float] addrspace(3)* @s, i32 0, i32 %q\n  %v = load float, float addrspace(3)* %g\n  store float %v, float addrspace(1)* %o\n  ret void\n}\ndeclare i32 @llvm.nvvm.read.ptx.sreg.tid.x()\n".to_string(),
    ))
    .collect();
    let mut rng = Rng(42);
    let alphabet = b"%@!#=,()[]{}<>*.:\"\\ \n0123456789-xabcdefghijklmnopqrstuvwyzi";
    let mut runs = 0;
    for s in &seeds {
        let base = s.as_bytes();
        for _ in 0..1000 {
            let mut b = base.to_vec();
            for _ in 0..1 + rng.below(4) {
                let at = rng.below(b.len());
                match rng.below(4) {
                    0 => {
                        b.remove(at.min(b.len().saturating_sub(1)));
                    }
                    1 => b.insert(at, alphabet[rng.below(alphabet.len())]),
                    2 => {
                        let i = at.min(b.len() - 1);
                        b[i] = alphabet[rng.below(alphabet.len())];
                    }
                    _ => {
                        // Duplicate or delete a span (lines, brackets).
                        let len = rng.below(40).min(b.len() - at);
                        if rng.below(2) == 0 {
                            let span: Vec<u8> = b[at..at + len].to_vec();
                            b.splice(at..at, span);
                        } else {
                            b.drain(at..at + len);
                        }
                    }
                }
            }
            let text = String::from_utf8_lossy(&b);
            let _ = import_module(&text);
            runs += 1;
        }
    }
    for _ in 0..300 {
        let n = rng.below(200);
        let b: Vec<u8> = (0..n).map(|_| rng.next() as u8).collect();
        let _ = import_module(&String::from_utf8_lossy(&b));
        runs += 1;
    }
    assert!(runs >= 600);
}

#[test]
fn call_to_kernel() {
    assert_unsupported(
        "define ptx_kernel void @k() {\n  ret void\n}\ndefine void @f() {\n  call void @k()\n  ret void\n}\n",
        "t.ll:5:13: unsupported: call to kernel @k",
    );
}

/// Invalid LLVM that only the Gyre verifier catches (a use its definition does not
/// dominate) is an error at the function, not invalid IR.
#[test]
fn verifier_catches_what_the_importer_lets_through() {
    let e = first_error(
        "define i32 @f(i1 %c) {\nentry:\n  br i1 %c, label %a, label %b\na:\n  %x = add i32 1, 2\n  br label %b\nb:\n  ret i32 %x\n}\n",
    );
    assert!(
        e.starts_with("t.ll:1:12: imported IR fails verification:"),
        "{e}"
    );
}

/// A store into const space is legal LLVM that only the verifier rejects (the lowering
/// does not check it): the trusted verification after import must keep that rule, for
/// a `store` and for the stores a `memset` or `memcpy` expands into.
#[test]
fn store_into_const_space_is_caught_after_import() {
    for body in [
        "store i32 0, i32 addrspace(4)* %p",
        "call void @llvm.memset.p4i8.i64(i8 addrspace(4)* %q, i8 0, i64 4, i1 false)",
        "call void @llvm.memset.p4i8.i64(i8 addrspace(4)* %q, i8 0, i64 %n, i1 false)",
    ] {
        let src = format!(
            "define void @f(i32 addrspace(4)* %p, i8 addrspace(4)* %q, i64 %n) {{\n  {body}\n  ret void\n}}\ndeclare void @llvm.memset.p4i8.i64(i8 addrspace(4)*, i8, i64, i1)\n"
        );
        let e = first_error(&src);
        assert!(
            e.starts_with("t.ll:1:13: imported IR fails verification:")
                && e.ends_with("store into const space"),
            "{body}: {e}"
        );
    }
}

/// An explicit `%18446744073709551615` leaves no number for the next unnamed value: a
/// located redefinition error, not an overflow panic (fuzz finding 5c693b60).
#[test]
fn implicit_number_after_the_largest() {
    let e = first_error("define void @f(float %18446744073709551615, i32) {\n  ret void\n}\n");
    assert!(
        e.starts_with("t.ll:1:") && e.contains("%18446744073709551615 redefined"),
        "{e}"
    );
}

#[test]
fn named_void_call() {
    // LLVM's parser refuses a name on a call that returns nothing; so does the importer.
    assert_eq!(
        first_error(
            "define void @g(float %x) {\n  ret void\n}\ndefine void @f(float %x) {\n  %r = call void @g(float %x)\n  ret void\n}\n"
        ),
        "t.ll:5:3: instructions returning void cannot have a name"
    );
}
