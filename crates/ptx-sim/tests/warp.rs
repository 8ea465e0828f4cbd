//! Warp collectives in ptx-sim: `shfl.sync`, `vote.sync`, `bar.warp.sync` with the
//! rendezvous model (a thread stops at the collective; the group named by its mask is
//! performed once every non-exited member waits there), and `atom` with `.sem`/`.scope`.

use gyre_ptx_sim::{parse, run_kernel, Launch, Memory, ParamValue, SimErrorKind};

/// out[tid] = (shfl.down(tid, 1, clamp 31) << 16) | ballot(!(tid odd)) & 0xffff,
/// plus vote.any / vote.all / vote.uni of (tid < 40) in bits 12..15 of out[64 + tid].
const WARP: &str = r#"
.version 7.8
.target sm_80
.address_size 64
.visible .entry warp(.param .u64 out, .param .u32 mask)
{
	.reg .pred 	%p<6>;
	.reg .b32 	%r<16>;
	.reg .b64 	%rd<6>;
	ld.param.u64 	%rd1, [out];
	ld.param.u32 	%r9, [mask];
	mov.u32 	%r1, %tid.x;
	shfl.sync.down.b32 	%r2, %r1, 1, 31, %r9;
	and.b32 	%r3, %r1, 1;
	setp.ne.u32 	%p1, %r3, 0;
	vote.sync.ballot.b32 	%r4, !%p1, %r9;
	and.b32 	%r4, %r4, 65535;
	shl.b32 	%r2, %r2, 16;
	or.b32 	%r5, %r2, %r4;
	mul.wide.u32 	%rd2, %r1, 4;
	add.s64 	%rd3, %rd1, %rd2;
	st.global.u32 	[%rd3], %r5;
	setp.lt.u32 	%p2, %r1, 40;
	vote.sync.any.pred 	%p3, %p2, %r9;
	vote.sync.all.pred 	%p4, %p2, %r9;
	vote.sync.uni.pred 	%p5, %p2, %r9;
	bar.warp.sync 	%r9;
	selp.u32 	%r6, 1, 0, %p3;
	selp.u32 	%r7, 2, 0, %p4;
	selp.u32 	%r8, 4, 0, %p5;
	or.b32 	%r6, %r6, %r7;
	or.b32 	%r6, %r6, %r8;
	atom.acq_rel.gpu.global.add.u32 	%r10, [%rd3+256], %r6;
	ret;
}
"#;

#[test]
fn shfl_and_votes_over_two_warps() {
    let m = parse(WARP).unwrap();
    let mut mem = Memory::new();
    let out = mem.alloc_u32s(&[0; 128]);
    run_kernel(
        &m,
        "warp",
        &Launch::linear(1, 64),
        &[ParamValue::U64(out), ParamValue::U32(u32::MAX)],
        &mut mem,
    )
    .unwrap();
    let got = mem.read_u32s(out, 128).unwrap();
    for t in 0..64u32 {
        let lane = t % 32;
        let down = if lane == 31 { t } else { t + 1 };
        assert_eq!(got[t as usize], (down << 16) | 0x5555, "thread {t}");
        // Warp 0: all below 40; warp 1: some.
        let votes = if t < 32 { 1 | 2 | 4 } else { 1 };
        assert_eq!(got[64 + t as usize], votes, "thread {t}");
    }
}

#[test]
fn a_mask_leaving_out_a_thread_or_a_member_elsewhere_is_an_error() {
    let m = parse(WARP).unwrap();
    let mut mem = Memory::new();
    let out = mem.alloc_u32s(&[0; 128]);
    // Lane 0 is not in 0xfffffffe.
    let e = run_kernel(
        &m,
        "warp",
        &Launch::linear(1, 32),
        &[ParamValue::U64(out), ParamValue::U32(0xffff_fffe)],
        &mut mem,
    )
    .unwrap_err();
    assert!(
        matches!(&e.kind, SimErrorKind::DivergentWarp { reason } if reason.contains("leaves it out")),
        "{e}"
    );
}

const SPLIT: &str = r#"
.version 7.8
.target sm_80
.address_size 64
.visible .entry split()
{
	.reg .pred 	%p<2>;
	.reg .b32 	%r<4>;
	mov.u32 	%r1, %tid.x;
	setp.ge.u32 	%p1, %r1, 16;
	@%p1 bra 	$L__else;
	shfl.sync.up.b32 	%r2, %r1, 1, 0, -1;
	ret;
$L__else:
	shfl.sync.down.b32 	%r3, %r1, 1, 31, -1;
	ret;
}
"#;

#[test]
fn divergent_arrival_is_an_error() {
    let m = parse(SPLIT).unwrap();
    let mut mem = Memory::new();
    let e = run_kernel(&m, "split", &Launch::linear(1, 32), &[], &mut mem).unwrap_err();
    assert!(
        matches!(&e.kind, SimErrorKind::DivergentWarp { reason } if reason.contains("another warp collective")),
        "{e}"
    );
    // With 16 threads only the first branch runs: fine.
    run_kernel(&m, "split", &Launch::linear(1, 16), &[], &mut mem).unwrap();
}

#[test]
fn shfl_without_sync_is_rejected() {
    let src = SPLIT.replace("shfl.sync.up.b32", "shfl.up.b32");
    assert!(parse(&src).is_err());
}
