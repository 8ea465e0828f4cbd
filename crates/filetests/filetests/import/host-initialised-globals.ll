; test: import
; precise-output
;; Globals as clang's CUDA output has them. A `__constant__` the host fills with
;; cudaMemcpyToSymbol (`externally_initialized`) stays visible and keeps the flag: its
;; contents are an input of the launch, not the zeros of its initializer. An internal
;; table stays internal; a plain `__device__` variable is visible; `extern __shared__`
;; (a declared-only shared array of no elements) is the dynamic shared memory; a
;; template's `weak_odr` shared array is per CTA, so it has no host symbol.
target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

@coeffs = dso_local addrspace(4) externally_initialized global [4 x float] zeroinitializer, align 4
@table = internal addrspace(4) constant [2 x i32] [i32 7, i32 9], align 4
@counter = dso_local addrspace(1) global i32 5, align 4
@dyn = external dso_local addrspace(3) global [0 x float], align 16
@tile = weak_odr dso_local addrspace(3) global [8 x float] undef, align 4

define dso_local void @k(float* %out) {
entry:
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %i = zext i32 %tid to i64
  %cp = getelementptr inbounds [4 x float], [4 x float] addrspace(4)* @coeffs, i64 0, i64 %i
  %c = load float, float addrspace(4)* %cp, align 4
  %dp = getelementptr inbounds [0 x float], [0 x float] addrspace(3)* @dyn, i64 0, i64 %i
  store float %c, float addrspace(3)* %dp, align 4
  %tp = getelementptr inbounds [8 x float], [8 x float] addrspace(3)* @tile, i64 0, i64 %i
  store float %c, float addrspace(3)* %tp, align 4
  %t = load i32, i32 addrspace(4)* getelementptr inbounds ([2 x i32], [2 x i32] addrspace(4)* @table, i64 0, i64 1), align 4
  %n = load i32, i32 addrspace(1)* @counter, align 4
  %s = add i32 %t, %n
  %f = sitofp i32 %s to float
  %r = fadd float %c, %f
  %op = getelementptr inbounds float, float* %out, i64 %i
  store float %r, float* %op, align 4
  ret void
}

declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()

!nvvm.annotations = !{!0}
!0 = !{void (float*)* @k, !"kernel", i32 1}
; output:
; global @coeffs: const [4 x f32] align 4 visible externally_initialized = [0.0, 0.0, 0.0, 0.0]
; global @table: const [2 x i32] align 4 = [7, 9]
; global @counter: global [1 x i32] align 4 visible = [5]
; global @dyn: shared [0 x f32] align 16 extern
; global @tile: shared [8 x f32] align 4
;
; kernel @k(ptr) anynan {
; block0(v0: ptr):
;     v3 = global_addr @coeffs
;     v6 = global_addr @dyn
;     v8 = global_addr @tile
;     v10 = global_addr @table
;     v11 = iconst.i64 4
;     v12 = ptradd v10, v11, 1
;     v14 = global_addr @counter
;     v1 = tid.x
;     v2 = zext.i64 v1
;     v4 = ptradd v3, v2, 4
;     v5 = load.f32 v4
;     v7 = ptradd v6, v2, 4
;     store v5, v7
;     v9 = ptradd v8, v2, 4
;     store v5, v9
;     v13 = load.i32 v12
;     v15 = load.i32 v14
;     v16 = iadd v13, v15
;     v17 = sitofp.f32 v16
;     v18 = fadd v5, v17
;     v19 = ptradd v0, v2, 4
;     store v18, v19
;     return
; }
