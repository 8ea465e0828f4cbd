; test: opt
; passes: loop-simplify,lcssa
; run: kernel=k grid=1 block=64 args=0
;; The import of the warp intrinsics, orders and fences, and the interpreter running the
;; kernel (two warps, shfl rendezvous) before and after the pipeline.
; check: shfl_down
; check: shfl_idx
; check: vote_ballot
; check: warp_sync
; check: fence seq_cst gpu
; check: atomic_add seq_cst sys
; check: atomic_inc
; check: clock.i32
target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

@out = internal addrspace(1) global [64 x i32] zeroinitializer, align 4
@cnt = internal addrspace(1) global [2 x i32] zeroinitializer, align 4

define void @k(i32 %unused) {
entry:
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %s1 = call i32 @llvm.nvvm.shfl.sync.down.i32(i32 -1, i32 %tid, i32 16, i32 31)
  %a1 = add i32 %tid, %s1
  %s2 = call i32 @llvm.nvvm.shfl.sync.down.i32(i32 -1, i32 %a1, i32 8, i32 31)
  %a2 = add i32 %a1, %s2
  %b = call i32 @llvm.nvvm.shfl.sync.idx.i32(i32 -1, i32 %a2, i32 0, i32 31)
  %p = icmp ugt i32 %b, 100
  %v = call i32 @llvm.nvvm.vote.ballot.sync(i32 -1, i1 %p)
  call void @llvm.nvvm.bar.warp.sync(i32 -1)
  call void @llvm.nvvm.membar.gl()
  %c0 = getelementptr [2 x i32], [2 x i32] addrspace(1)* @cnt, i64 0, i64 0
  %old = atomicrmw add i32 addrspace(1)* %c0, i32 1 seq_cst, align 4
  %c1 = getelementptr [2 x i32], [2 x i32] addrspace(1)* @cnt, i64 0, i64 1
  %c1g = addrspacecast i32 addrspace(1)* %c1 to i32*
  %w = call i32 @llvm.nvvm.atomic.load.inc.32.p0i32(i32* %c1g, i32 9)
  %clk = call i32 @llvm.nvvm.read.ptx.sreg.clock()
  %r = add i32 %b, %v
  %i = zext i32 %tid to i64
  %po = getelementptr [64 x i32], [64 x i32] addrspace(1)* @out, i64 0, i64 %i
  store i32 %r, i32 addrspace(1)* %po, align 4
  ret void
}

declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare i32 @llvm.nvvm.shfl.sync.down.i32(i32, i32, i32, i32)
declare i32 @llvm.nvvm.shfl.sync.idx.i32(i32, i32, i32, i32)
declare i32 @llvm.nvvm.vote.ballot.sync(i32, i1)
declare void @llvm.nvvm.bar.warp.sync(i32)
declare void @llvm.nvvm.membar.gl()
declare i32 @llvm.nvvm.atomic.load.inc.32.p0i32(i32*, i32)
declare i32 @llvm.nvvm.read.ptx.sreg.clock()

!nvvm.annotations = !{!0}
!0 = !{void (i32)* @k, !"kernel", i32 1}
