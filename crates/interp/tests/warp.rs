//! Warp collectives (`shfl`, `vote`, `warp_sync`), orderings, fences, `clock` and the
//! wrapping `atomic_inc`/`atomic_dec` under the interpreter.

mod common;

use common::{parse, run};
use gyre_interp::{run_kernel, Arg, ExecError, Launch, Memory, PoisonUse};

/// Each thread stores `f(tid)` computed by `body` (which defines `v9` from `v2 = tid.x`
/// and `v3 = laneid`) into `o[tid]`.
fn kernel(body: &str) -> String {
    format!(
        "
kernel @k(ptr.global) convergent {{
block0(v0: ptr.global):
    v2 = tid.x
    v3 = laneid
    v4 = iconst.i32 -1
    v5 = iconst.i32 31
    v6 = iconst.i32 0
{body}
    v90 = sext.i64 v2
    v91 = ptradd v0, v90, 4
    store v9, v91
    return
}}"
    )
}

fn run_i32(src: &str, threads: u32) -> Result<Vec<i32>, ExecError> {
    let mut mem = Memory::new();
    mem.alloc_zeroed("o", 4 * threads as usize);
    run(
        src,
        "k",
        &Launch::linear(1, threads, vec![Arg::buffer("o")]),
        &mut mem,
    )?;
    Ok(mem.read::<i32>("o").unwrap())
}

#[test]
fn shfl_down_warp_reduction_gives_the_sum() {
    // v += shfl_down(v, d) for d = 16, 8, 4, 2, 1: lane 0 of each warp holds the sum.
    let mut body = String::from("    v10 = iadd v2, v6\n");
    let mut cur = 10;
    for (i, d) in [16, 8, 4, 2, 1].iter().enumerate() {
        let (c, s, n) = (20 + 3 * i, 21 + 3 * i, 22 + 3 * i);
        body += &format!(
            "    v{c} = iconst.i32 {d}\n    v{s} = shfl_down v{cur}, v{c}, v5, v4\n    v{n} = iadd v{cur}, v{s}\n"
        );
        cur = n;
    }
    body += &format!("    v9 = iadd v{cur}, v6\n");
    let out = run_i32(&kernel(&body), 64).unwrap();
    assert_eq!(out[0], (0..32).sum::<i32>());
    assert_eq!(out[32], (32..64).sum::<i32>());
    // Lane 31 only ever adds its own value (sources past the clamp read themselves).
    assert_eq!(out[31], 31 * 32);
}

#[test]
fn shfl_up_inclusive_scan() {
    // v += lane >= d ? shfl_up(v, d) : 0, with clamp 0 (the segment start).
    let mut body = String::from("    v10 = iadd v2, v6\n");
    let mut cur = 10;
    for (i, d) in [1, 2, 4, 8, 16].iter().enumerate() {
        let b = 20 + 5 * i;
        body += &format!(
            "    v{b} = iconst.i32 {d}
    v{} = shfl_up v{cur}, v{b}, v6, v4
    v{} = icmp uge v3, v{b}
    v{} = select v{}, v{}, v6
    v{} = iadd v{cur}, v{}
",
            b + 1,
            b + 2,
            b + 3,
            b + 2,
            b + 1,
            b + 4,
            b + 3
        );
        cur = b + 4;
    }
    body += &format!("    v9 = iadd v{cur}, v6\n");
    let out = run_i32(&kernel(&body), 64).unwrap();
    for t in 0..64i32 {
        let start = t / 32 * 32;
        assert_eq!(out[t as usize], (start..=t).sum::<i32>(), "thread {t}");
    }
}

#[test]
fn shfl_idx_and_bfly_with_segments() {
    // Width 8: c = ((32 - 8) << 8) | 31. idx 2 reads lane 2 of the thread's segment;
    // bfly 1 swaps neighbours.
    let body = "    v10 = iconst.i32 6175
    v11 = iconst.i32 2
    v12 = imul v2, v2
    v13 = shfl_idx v12, v11, v10, v4
    v14 = iconst.i32 1
    v15 = shfl_bfly v2, v14, v5, v4
    v16 = iconst.i32 1000
    v17 = imul v13, v16
    v9 = iadd v17, v15
";
    let out = run_i32(&kernel(body), 32).unwrap();
    for t in 0..32i32 {
        let src = t / 8 * 8 + 2;
        assert_eq!(out[t as usize], src * src * 1000 + (t ^ 1), "thread {t}");
    }
}

#[test]
fn votes() {
    // p = tid % 3 == 0; result = any + 2*all + 4*uni + 8*(ballot & 0xfff), where the
    // second warp's 8 threads (a 40-thread CTA) vote among themselves.
    let body = "    v10 = iconst.i32 3
    v11 = urem v2, v10
    v12 = icmp eq v11, v6
    v13 = vote_any v12, v4
    v14 = vote_all v12, v4
    v15 = vote_uni v12, v4
    v16 = vote_ballot v12, v4
    v17 = zext.i32 v13
    v18 = zext.i32 v14
    v19 = zext.i32 v15
    v20 = iconst.i32 2
    v21 = imul v18, v20
    v22 = iconst.i32 4
    v23 = imul v19, v22
    v24 = iconst.i32 4095
    v25 = and v16, v24
    v26 = iconst.i32 8
    v27 = imul v25, v26
    v28 = iadd v17, v21
    v29 = iadd v28, v23
    v9 = iadd v29, v27
";
    let out = run_i32(&kernel(body), 40).unwrap();
    let ballot0: i32 = (0..12).filter(|l| l % 3 == 0).map(|l| 1 << l).sum();
    assert_eq!(out[0], 1 + 8 * ballot0);
    // Warp 1 holds tids 32..40: 33, 36, 39 are multiples of 3 (lanes 1, 4, 7).
    assert_eq!(out[35], 1 + 8 * ((1 << 1) | (1 << 4) | (1 << 7)));
}

#[test]
fn vote_all_and_uni_when_unanimous() {
    let body = "    v10 = icmp ult v2, v5
    v11 = iconst.i32 65535
    v12 = vote_all v10, v4
    v13 = vote_uni v10, v4
    v14 = zext.i32 v12
    v15 = zext.i32 v13
    v16 = iconst.i32 2
    v17 = imul v15, v16
    v9 = iadd v14, v17
";
    // tid < 31: all but lane 31 of warp 0.
    let out = run_i32(&kernel(body), 32).unwrap();
    assert_eq!(out[0], 0);
    let out = run_i32(
        &kernel(&body.replace("icmp ult v2, v5", "icmp ule v2, v5")),
        32,
    );
    assert_eq!(out.unwrap()[5], 3);
}

/// Lanes below `split` run `then_body` (defining v40), the others `else_body` (v41).
fn branchy(split: u32, then_body: &str, else_body: &str) -> String {
    format!(
        "
kernel @k(ptr.global) convergent {{
block0(v0: ptr.global):
    v2 = tid.x
    v4 = iconst.i32 -1
    v5 = iconst.i32 31
    v6 = iconst.i32 1
    v7 = iconst.i32 {split}
    v8 = icmp ult v2, v7
    brif v8, block1, block2
block1:
{then_body}
    jump block3(v40)
block2:
{else_body}
    jump block3(v41)
block3(v9: i32):
    v90 = sext.i64 v2
    v91 = ptradd v0, v90, 4
    store v9, v91
    return
}}"
    )
}

#[test]
fn partial_mask_inside_a_branch() {
    // Lanes 0..16 shuffle among themselves with mask 0xffff; the others do not.
    let src = branchy(
        16,
        "    v30 = iconst.i32 65535\n    v31 = iconst.i32 15\n    v40 = shfl_down v2, v6, v31, v30",
        "    v41 = iadd v2, v2",
    );
    let out = run_i32(&src, 32).unwrap();
    for t in 0..32 {
        let want = match t {
            0..15 => t + 1,
            15 => 15,
            _ => 2 * t,
        };
        assert_eq!(out[t as usize], want, "thread {t}");
    }
}

#[test]
fn divergent_arrival_is_an_error() {
    // Both halves shuffle with the full mask, but at different instructions.
    let src = branchy(
        16,
        "    v40 = shfl_down v2, v6, v5, v4",
        "    v41 = shfl_up v2, v6, v5, v4",
    );
    let e = run_i32(&src, 32).unwrap_err();
    let ExecError::DivergentWarp { loc, reason, .. } = &e else {
        panic!("{e}")
    };
    assert!(reason.contains("another warp collective"), "{e}");
    assert_eq!(loc.tid, [0, 0, 0]);
}

#[test]
fn a_lane_waiting_at_a_barrier_is_an_error() {
    let src = branchy(
        16,
        "    v40 = shfl_down v2, v6, v5, v4",
        "    barrier\n    v41 = iadd v2, v2",
    );
    let e = run_i32(&src, 32).unwrap_err();
    let ExecError::DivergentWarp {
        other_tid, reason, ..
    } = &e
    else {
        panic!("{e}")
    };
    assert_eq!((other_tid[0], reason.as_str()), (16, "waits at a barrier"));
}

#[test]
fn a_mask_leaving_out_the_thread_is_an_error() {
    let src = branchy(
        32,
        "    v30 = iconst.i32 -2\n    v40 = shfl_down v2, v6, v5, v30",
        "    v41 = iadd v2, v2",
    );
    let e = run_i32(&src, 32).unwrap_err();
    let ExecError::DivergentWarp { other_tid, .. } = &e else {
        panic!("{e}")
    };
    assert_eq!(*other_tid, [0, 0, 0]);
}

#[test]
fn different_masks_are_an_error() {
    // Lane 0 says 0x3, lane 1 says 0xffffffff at the same shfl.
    let src = branchy(
        32,
        "    v30 = iconst.i32 3\n    v31 = icmp eq v2, v6\n    v32 = select v31, v4, v30\n    v40 = shfl_down v2, v6, v5, v32",
        "    v41 = iadd v2, v2",
    );
    let e = run_i32(&src, 32).unwrap_err();
    assert!(
        matches!(&e, ExecError::DivergentWarp { reason, .. } if reason.contains("another mask")),
        "{e}"
    );
}

#[test]
fn exited_lanes_named_by_the_mask() {
    // Lanes >= 8 return early; the rest shuffle with the full mask, which PTX allows.
    // Reading an exited lane gives an undefined value: poison, caught at a branch.
    let src = |delta: u32| {
        format!(
            "
kernel @k(ptr.global) convergent {{
block0(v0: ptr.global):
    v2 = tid.x
    v4 = iconst.i32 -1
    v5 = iconst.i32 31
    v6 = iconst.i32 {delta}
    v7 = iconst.i32 8
    v8 = icmp ult v2, v7
    brif v8, block1, block3
block1:
    v9 = shfl_down v2, v6, v5, v4
    v10 = icmp eq v9, v4
    brif v10, block2, block2
block2:
    v90 = sext.i64 v2
    v91 = ptradd v0, v90, 4
    store v9, v91
    return
block3:
    return
}}"
        )
    };
    let out = run_i32(&src(0), 32).unwrap();
    assert_eq!(&out[..8], &[0, 1, 2, 3, 4, 5, 6, 7]);
    let e = run_i32(&src(4), 32).unwrap_err();
    assert!(
        matches!(
            e,
            ExecError::Poison {
                what: PoisonUse::Branch,
                ref loc
            } if loc.tid == [4, 0, 0]
        ),
        "{e}"
    );
}

#[test]
fn warp_sync_and_a_poison_mask() {
    let ok = kernel("    warp_sync v4\n    v9 = iadd v2, v6\n");
    assert_eq!(run_i32(&ok, 40).unwrap()[39], 39);
    // A mask loaded from a never-written local slot is poison.
    let src = "
kernel @k(ptr.global) {
    slot0 = local 4 align 4
block0(v0: ptr.global):
    v1 = slot_addr slot0
    v2 = load.i32 v1
    warp_sync v2
    return
}";
    let mut mem = Memory::new();
    mem.alloc_zeroed("o", 4);
    let e = run(
        src,
        "k",
        &Launch::linear(1, 4, vec![Arg::buffer("o")]),
        &mut mem,
    )
    .unwrap_err();
    assert!(
        matches!(
            e,
            ExecError::Poison {
                what: PoisonUse::WarpOperand,
                ..
            }
        ),
        "{e}"
    );
}

#[test]
fn clock_counts_the_threads_instructions() {
    let body = "    v10 = clock.i64
    v11 = iadd v2, v6
    v12 = iadd v11, v6
    v13 = clock.i64
    v14 = isub v13, v10
    v9 = trunc.i32 v14
";
    let out = run_i32(&kernel(body), 4).unwrap();
    // Three instructions later, in every thread.
    assert_eq!(out, vec![3; 4]);
}

#[test]
fn atomic_inc_and_dec_wrap() {
    let src = "
kernel @k(ptr.global) {
block0(v0: ptr.global):
    v1 = iconst.i32 3
    v2 = atomic_inc seq_cst sys v0, v1
    v3 = iconst.i64 4
    v4 = ptradd v0, v3, 1
    v5 = iconst.i32 5
    v6 = atomic_dec acquire cta v4, v5
    fence seq_cst gpu
    fence acq_rel cta
    return
}";
    let m = parse(src);
    let mut mem = Memory::new();
    mem.alloc_zeroed("o", 8);
    run_kernel(
        &m,
        "k",
        &Launch::linear(1, 9, vec![Arg::buffer("o")]),
        &mut mem,
    )
    .unwrap();
    // inc: 0 1 2 3 0 1 2 3 0 -> 1 after nine; dec: 0 5 4 3 2 1 0 5 4 -> 3 after nine.
    assert_eq!(mem.read::<u32>("o").unwrap(), vec![1, 3]);
    // The orderings print back as written.
    let mut text = String::new();
    gyre_ir::write_module(&mut text, &m).unwrap();
    assert!(text.contains("atomic_inc seq_cst sys v0, v1"), "{text}");
    assert!(text.contains("atomic_dec acquire cta v4, v5"), "{text}");
    assert!(text.contains("fence seq_cst gpu"), "{text}");
}

/// sumReduction of simpleCooperativeGroups on 16-lane tiles: shared memory written and
/// read by different lanes, ordered only by `warp_sync` on the tile's mask.
fn tile_reduction(sync: &str) -> String {
    format!(
        "
global @x: shared [64 x i32] align 4
kernel @k(ptr.global) convergent {{
block0(v0: ptr.global):
    v1 = tid.x
    v2 = iconst.i32 15
    v3 = and v1, v2
    v4 = iconst.i32 16
    v5 = udiv v1, v4
    v6 = iconst.i32 65535
    v7 = iconst.i32 2
    v8 = urem v5, v7
    v9 = imul v8, v4
    v10 = shl v6, v9
    v11 = global_addr @x
    v12 = sext.i64 v1
    v13 = ptradd v11, v12, 4
    v14 = iconst.i32 8
    jump block1(v14, v1)
block1(v20: i32, v21: i32):
    store v21, v13
    {sync}
    v22 = icmp ult v3, v20
    brif v22, block2, block3(v21)
block2:
    v23 = iadd v1, v20
    v24 = sext.i64 v23
    v25 = ptradd v11, v24, 4
    v26 = load.i32 v25
    v27 = iadd v21, v26
    jump block3(v27)
block3(v28: i32):
    {sync}
    v29 = iconst.i32 1
    v30 = lshr v20, v29
    v31 = iconst.i32 0
    v32 = icmp ne v30, v31
    brif v32, block1(v30, v28), block4
block4:
    v33 = ptradd v0, v12, 4
    store v28, v33
    return
}}"
    )
}

#[test]
fn warp_sync_orders_shared_memory_within_its_tile() {
    let mut mem = Memory::new();
    mem.alloc_zeroed("o", 4 * 64);
    run(
        &tile_reduction("warp_sync v10"),
        "k",
        &Launch::linear(1, 64, vec![Arg::buffer("o")]),
        &mut mem,
    )
    .unwrap();
    let out = mem.read::<i32>("o").unwrap();
    for tile in 0..4 {
        assert_eq!(
            out[16 * tile],
            (16 * tile as i32..16 * tile as i32 + 16).sum::<i32>()
        );
    }
    // Without the warp syncs the same accesses race.
    let e = run(
        &tile_reduction(""),
        "k",
        &Launch::linear(1, 64, vec![Arg::buffer("o")]),
        &mut mem,
    )
    .unwrap_err();
    assert!(matches!(e, ExecError::DataRace { .. }), "{e}");
}

#[test]
fn a_warp_collective_does_not_order_other_warps() {
    // Thread 0 writes, every thread syncs its warp, thread 32 reads: a race (only a
    // barrier orders different warps).
    let src = "
global @x: shared [1 x i32] align 4
kernel @k(ptr.global) convergent {
block0(v0: ptr.global):
    v1 = tid.x
    v2 = global_addr @x
    v3 = iconst.i32 0
    v4 = icmp eq v1, v3
    brif v4, block1, block2
block1:
    store v1, v2
    jump block2
block2:
    v5 = iconst.i32 -1
    warp_sync v5
    v6 = iconst.i32 32
    v7 = icmp eq v1, v6
    brif v7, block3, block4
block3:
    v8 = load.i32 v2
    store v8, v0
    jump block4
block4:
    return
}";
    let mut mem = Memory::new();
    mem.alloc_zeroed("o", 4);
    let launch = |n| Launch::linear(1, n, vec![Arg::buffer("o")]);
    let e = run(src, "k", &launch(64), &mut mem).unwrap_err();
    assert!(
        matches!(
            e,
            ExecError::DataRace {
                other_tid: Some([0, 0, 0]),
                ..
            }
        ),
        "{e}"
    );
    // Reading from lane 1 of the same warp instead is ordered by the sync.
    run(
        &src.replace("iconst.i32 32", "iconst.i32 1"),
        "k",
        &launch(64),
        &mut mem,
    )
    .unwrap();
}
