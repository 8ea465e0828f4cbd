; test: compile
; target: sm_70
;; CUDA's warp intrinsics as clang 14 emits them (mask first), imported and lowered to
;; the PTX llc -mcpu=sm_70 gives for them: shfl.sync with the clamp operand as written,
;; vote.sync with a predicate or b32 result, bar.warp.sync, and barrier.sync(0) as the
;; CTA barrier.
; check: .target sm_70
; check: shfl.sync.up.b32
; check: shfl.sync.down.b32 %f
; check: shfl.sync.bfly.b32
; check: shfl.sync.idx.b32
; check: vote.sync.any.pred
; check: vote.sync.all.pred
; check: vote.sync.uni.pred
; check: vote.sync.ballot.b32
; check: bar.warp.sync
; check: bar.sync 0;
; check: ret;
target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

define void @k(i32* %out, float* %fout) {
entry:
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %up = call i32 @llvm.nvvm.shfl.sync.up.i32(i32 -1, i32 %tid, i32 1, i32 0)
  %f = sitofp i32 %tid to float
  %down = call float @llvm.nvvm.shfl.sync.down.f32(i32 -1, float %f, i32 2, i32 31)
  %bfly = call i32 @llvm.nvvm.shfl.sync.bfly.i32(i32 -1, i32 %up, i32 4, i32 31)
  %idx = call i32 @llvm.nvvm.shfl.sync.idx.i32(i32 -1, i32 %bfly, i32 0, i32 6175)
  %p = icmp ugt i32 %idx, 7
  %any = call i1 @llvm.nvvm.vote.any.sync(i32 -1, i1 %p)
  %all = call i1 @llvm.nvvm.vote.all.sync(i32 -1, i1 %any)
  %uni = call i1 @llvm.nvvm.vote.uni.sync(i32 -1, i1 %all)
  %ballot = call i32 @llvm.nvvm.vote.ballot.sync(i32 -1, i1 %uni)
  call void @llvm.nvvm.bar.warp.sync(i32 -1)
  call void @llvm.nvvm.barrier.sync(i32 0)
  %i = zext i32 %tid to i64
  %pi = getelementptr i32, i32* %out, i64 %i
  store i32 %ballot, i32* %pi
  %pf = getelementptr float, float* %fout, i64 %i
  store float %down, float* %pf
  ret void
}

declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare i32 @llvm.nvvm.shfl.sync.up.i32(i32, i32, i32, i32)
declare float @llvm.nvvm.shfl.sync.down.f32(i32, float, i32, i32)
declare i32 @llvm.nvvm.shfl.sync.bfly.i32(i32, i32, i32, i32)
declare i32 @llvm.nvvm.shfl.sync.idx.i32(i32, i32, i32, i32)
declare i1 @llvm.nvvm.vote.any.sync(i32, i1)
declare i1 @llvm.nvvm.vote.all.sync(i32, i1)
declare i1 @llvm.nvvm.vote.uni.sync(i32, i1)
declare i32 @llvm.nvvm.vote.ballot.sync(i32, i1)
declare void @llvm.nvvm.bar.warp.sync(i32)
declare void @llvm.nvvm.barrier.sync(i32)

!nvvm.annotations = !{!0}
!0 = !{void (i32*, float*)* @k, !"kernel", i32 1}
