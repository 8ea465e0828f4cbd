; test: compile
; target: sm_90
;; Orders and scopes become .sem/.scope qualifiers; a seq_cst RMW is preceded by
;; fence.sc (the PTX Atomics ABI mapping). No syncscope is LLVM's system scope.
;; membar.gl is fence.sc.gpu; LLVM fences keep their scope; NVVM's system-scope and
;; inc/dec intrinsics keep theirs; clock reads stay. Their generic pointer is a cast of
;; a global one, so address-space inference makes them `.global` again.
; check: fence.sc.sys;
; nextln: atom.acq_rel.sys.global.add.u32
; check: atom.acquire.cta.global.or.b32
; check: atom.release.gpu.global.exch.b32
; check: fence.sc.sys;
; nextln: atom.acq_rel.sys.global.cas.b32
; check: atom.acq_rel.cta.global.cas.b32
; check: fence.sc.gpu;
; check: fence.sc.cta;
; check: fence.acq_rel.sys;
; check: fence.sc.cta;
; check: atom.global.inc.u32
; check: atom.global.dec.u32
; check: atom.relaxed.sys.global.add.u32
; check: atom.relaxed.sys.global.max.s32
; check: atom.relaxed.sys.global.cas.b32
; check: %clock;
; check: %clock64;
; check: ret;
target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

define void @k(i32 addrspace(1)* %p, i64 addrspace(1)* %t) {
entry:
  %a = atomicrmw add i32 addrspace(1)* %p, i32 1 seq_cst, align 4
  %b = atomicrmw or i32 addrspace(1)* %p, i32 %a syncscope("singlethread") acquire, align 4
  %c = atomicrmw xchg i32 addrspace(1)* %p, i32 %b syncscope("device") release, align 4
  %d = cmpxchg i32 addrspace(1)* %p, i32 %c, i32 3 seq_cst seq_cst, align 4
  %d0 = extractvalue { i32, i1 } %d, 0
  %e = cmpxchg i32 addrspace(1)* %p, i32 %d0, i32 4 syncscope("block") release acquire, align 4
  %e0 = extractvalue { i32, i1 } %e, 0
  call void @llvm.nvvm.membar.gl()
  call void @llvm.nvvm.membar.cta()
  fence acquire
  fence syncscope("singlethread") seq_cst
  %pg = addrspacecast i32 addrspace(1)* %p to i32*
  %f = call i32 @llvm.nvvm.atomic.load.inc.32.p0i32(i32* %pg, i32 %e0)
  %g = call i32 @llvm.nvvm.atomic.load.dec.32.p0i32(i32* %pg, i32 %f)
  %h = call i32 @llvm.nvvm.atomic.add.gen.i.sys.i32.p0i32(i32* %pg, i32 %g)
  %i = call i32 @llvm.nvvm.atomic.max.gen.i.sys.i32.p0i32(i32* %pg, i32 %h)
  %j = call i32 @llvm.nvvm.atomic.cas.gen.i.sys.i32.p0i32(i32* %pg, i32 %i, i32 7)
  %c1 = call i32 @llvm.nvvm.read.ptx.sreg.clock()
  %c2 = call i64 @llvm.nvvm.read.ptx.sreg.clock64()
  %s = add i32 %j, %c1
  store i32 %s, i32 addrspace(1)* %p
  store i64 %c2, i64 addrspace(1)* %t
  ret void
}

declare void @llvm.nvvm.membar.gl()
declare void @llvm.nvvm.membar.cta()
declare i32 @llvm.nvvm.atomic.load.inc.32.p0i32(i32*, i32)
declare i32 @llvm.nvvm.atomic.load.dec.32.p0i32(i32*, i32)
declare i32 @llvm.nvvm.atomic.add.gen.i.sys.i32.p0i32(i32*, i32)
declare i32 @llvm.nvvm.atomic.max.gen.i.sys.i32.p0i32(i32*, i32)
declare i32 @llvm.nvvm.atomic.cas.gen.i.sys.i32.p0i32(i32*, i32, i32)
declare i32 @llvm.nvvm.read.ptx.sreg.clock()
declare i64 @llvm.nvvm.read.ptx.sreg.clock64()

!nvvm.annotations = !{!0}
!0 = !{void (i32 addrspace(1)*, i64 addrspace(1)*)* @k, !"kernel", i32 1}
