//! Inline PTX idioms of CUDA's headers that read a special register import as the same
//! IR; any other inline asm is reported with its text.

use gyre_interp::{run_kernel, Arg, Launch, Memory};
use gyre_llvm::import_module;

const LANE_MASKS: &str = r#"
define void @k(i32* %out) {
entry:
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %l = call i32 asm "mov.u32 $0, %laneid;", "=r"() #0, !srcloc !1
  %lt = call i32 asm "{ mov.u32 $0, %lanemask_lt; }", "=r"()
  %le = call i32 asm sideeffect "mov.u32 $0, %lanemask_le;", "=r"()
  %eq = call i32 asm "mov.u32 $0, %lanemask_eq;", "=r"()
  %ge = call i32 asm "mov.u32 $0, %lanemask_ge;", "=r"()
  %gt = call i32 asm "mov.u32 $0, %lanemask_gt;", "=r"()
  %base = mul i32 %tid, 6
  %i0 = zext i32 %base to i64
  %p0 = getelementptr i32, i32* %out, i64 %i0
  store i32 %l, i32* %p0
  %p1 = getelementptr i32, i32* %p0, i64 1
  store i32 %lt, i32* %p1
  %p2 = getelementptr i32, i32* %p0, i64 2
  store i32 %le, i32* %p2
  %p3 = getelementptr i32, i32* %p0, i64 3
  store i32 %eq, i32* %p3
  %p4 = getelementptr i32, i32* %p0, i64 4
  store i32 %ge, i32* %p4
  %p5 = getelementptr i32, i32* %p0, i64 5
  store i32 %gt, i32* %p5
  ret void
}
declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
attributes #0 = { nounwind }
!nvvm.annotations = !{!0}
!0 = !{void (i32*)* @k, !"kernel", i32 1}
!1 = !{i64 42}
"#;

#[test]
fn lane_idioms_read_the_lane() {
    let m = import_module(LANE_MASKS).expect("imports");
    let n = 40u32;
    let mut mem = Memory::new();
    mem.alloc_from::<i32>("out", &vec![0; 6 * n as usize]);
    run_kernel(
        &m,
        "k",
        &Launch::linear(1, n, vec![Arg::buffer("out")]),
        &mut mem,
    )
    .unwrap();
    let out = mem.read::<i32>("out").unwrap();
    for t in 0..n {
        let lane = t % 32;
        let eq = 1u32 << lane;
        let lt = eq - 1;
        let le = lt | eq;
        let want = [lane, lt, le, eq, !lt, !le];
        let got: Vec<u32> = out[6 * t as usize..6 * t as usize + 6]
            .iter()
            .map(|&x| x as u32)
            .collect();
        assert_eq!(got, want, "thread {t}");
    }
}

#[test]
fn other_inline_asm_is_reported_with_its_text() {
    let src = "define i32 @f(i32* %p) {\n  %v = call i32 asm sideeffect \"ld.acquire.gpu.u32 $0,[$1];\", \"=r,l,~{memory}\"(i32* %p)\n  ret i32 %v\n}\n";
    let e = import_module(src).expect_err("unsupported");
    assert_eq!(
        e.first().render("t.ll"),
        "t.ll:2:17: unsupported: inline asm \"ld.acquire.gpu.u32 $0,[$1];\""
    );
    // The idiom's text with operands is not the idiom.
    let src = "define i32 @f(i32 %x) {\n  %v = call i32 asm \"mov.u32 $0, %laneid;\", \"=r,r\"(i32 %x)\n  ret i32 %v\n}\n";
    assert!(import_module(src).is_err());
}
