//! A transformed kernel that runs more instructions than the original but finishes
//! within `STEP_SLACK` times the step limit behaves the same (the roundtrip_llvm finding
//! 54009023 was a round trip that only ran a fifth more steps); one that never finishes
//! is still a difference.

use gyre_fuzz::case::{same_behaviour, STEP_LIMIT, STEP_SLACK};
use gyre_fuzz::Case;

/// Thread 0 of CTA 0 counts to 3,000,000, with `extra` more instructions per iteration;
/// `bound` is the trip count's value: `v11` (3,000,000) or `v15` (-1, endless).
fn case(extra: usize, bound: &str) -> Case {
    let mut body = String::new();
    for k in 0..extra {
        body.push_str(&format!("    v{} = iadd v10, v13\n", 100 + k));
    }
    let text = format!(
        ";; gyre-fuzz case
;; seed: 7
;; contract: out_per_thread=2 buffer_len=48 max_cta_threads=256 ub_free=true
kernel @kernel(ptr.global, ptr.global, ptr.global, i32, f32) {{
block0(v0: ptr.global, v1: ptr.global, v2: ptr.global, v3: i32, v4: f32):
    v5 = tid.x
    v6 = ctaid.x
    v7 = or v5, v6
    v8 = iconst.i32 0
    v9 = icmp eq v7, v8
    v11 = iconst.i32 3000000
    v13 = iconst.i32 1
    v15 = iconst.i32 -1
    brif v9, block4, block3
block4:
    jump block1(v8)
block1(v10: i32):
    v12 = icmp ult v10, {bound}
    brif v12, block2, block3
block2:
{body}    v14 = iadd v10, v13
    jump block1(v14)
block3:
    return
}}
"
    );
    Case::from_text(&text).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn slower_but_finishing_kernel_behaves_the_same() {
    let before = case(0, "v11");
    let after = case(6, "v11");
    // Sanity: the slower one does go over the plain limit.
    let mut inputs = gyre_fuzz::case::inputs(&after, 0);
    let mut mem = inputs.memory.clone();
    let err = gyre_interp::run_kernel(&after.module, "kernel", &inputs.launch, &mut mem)
        .expect_err("over the step limit");
    assert_eq!(err.kind(), gyre_interp::ErrorKind::StepLimit);
    inputs.launch.config.step_limit = STEP_LIMIT * STEP_SLACK;
    let mut mem = inputs.memory.clone();
    gyre_interp::run_kernel(&after.module, "kernel", &inputs.launch, &mut mem)
        .expect("within the slack");
    assert_eq!(
        same_behaviour(&before, &before.module, &after.module, 0),
        Ok(true)
    );
}

#[test]
fn endless_kernel_is_still_a_difference() {
    let before = case(0, "v11");
    // Counting to -1 unsigned: 4 billion iterations, past any limit.
    let after = case(0, "v15");
    let r = same_behaviour(&before, &before.module, &after.module, 0);
    let e = r.expect_err("a kernel that does not finish differs");
    assert!(e.contains("step limit"), "{e}");
}
