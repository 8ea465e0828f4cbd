; test: import
;; NVVM's math intrinsics: one opcode each; the .ftz forms are the same opcode (Gyre
;; keeps subnormals, a refinement of flushing them); saturate is fmax/fmin.
; check: mul24 v3, v4
; check: umul24 v3, v4
; check: ex2_approx v5
; check: ex2_approx v5
; check: lg2_approx v5
; check: sin_approx v5
; check: cos_approx v5
; check: rsqrt_approx v5
; check: rsqrt_approx v6
; check: fdiv_approx v5, v5
; check: fmax v5
; nextln: fmin
declare i32 @llvm.nvvm.mul24.i(i32, i32)
declare i32 @llvm.nvvm.umul24.i(i32, i32)
declare float @llvm.nvvm.ex2.approx.f(float)
declare float @llvm.nvvm.ex2.approx.ftz.f(float)
declare float @llvm.nvvm.lg2.approx.f(float)
declare float @llvm.nvvm.sin.approx.f(float)
declare float @llvm.nvvm.cos.approx.ftz.f(float)
declare float @llvm.nvvm.rsqrt.approx.f(float)
declare double @llvm.nvvm.rsqrt.approx.d(double)
declare float @llvm.nvvm.div.approx.f(float, float)
declare float @llvm.nvvm.saturate.f(float)

define void @k(i32* %p, float* %q, double* %r, i32 %a, i32 %b, float %x, double %y) {
  %m = call i32 @llvm.nvvm.mul24.i(i32 %a, i32 %b)
  %u = call i32 @llvm.nvvm.umul24.i(i32 %a, i32 %b)
  %s = add i32 %m, %u
  store i32 %s, i32* %p
  %f1 = call float @llvm.nvvm.ex2.approx.f(float %x)
  %f2 = call float @llvm.nvvm.ex2.approx.ftz.f(float %x)
  %f3 = call float @llvm.nvvm.lg2.approx.f(float %x)
  %f4 = call float @llvm.nvvm.sin.approx.f(float %x)
  %f5 = call float @llvm.nvvm.cos.approx.ftz.f(float %x)
  %f6 = call float @llvm.nvvm.rsqrt.approx.f(float %x)
  %d = call double @llvm.nvvm.rsqrt.approx.d(double %y)
  %f7 = call float @llvm.nvvm.div.approx.f(float %x, float %x)
  %f8 = call float @llvm.nvvm.saturate.f(float %x)
  %t1 = fadd float %f1, %f2
  %t2 = fadd float %t1, %f3
  %t3 = fadd float %t2, %f4
  %t4 = fadd float %t3, %f5
  %t5 = fadd float %t4, %f6
  %t6 = fadd float %t5, %f7
  %t7 = fadd float %t6, %f8
  store float %t7, float* %q
  store double %d, double* %r
  ret void
}
