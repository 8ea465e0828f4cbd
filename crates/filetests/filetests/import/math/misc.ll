; test: import
;; ldexpf: n clamped to [-400, 400], x·2^n in f64, one rounding; fast_sincosf stores
;; sin_approx and cos_approx; fdimf selects x - y, +0 or NaN.
; check: func @k(f32, i32, ptr, ptr) -> f32
; check: smax v1
; nextln: smin
; nextln: sext.i64
; check: shl
; check: fpext.f64 v0
; nextln: fmul
; nextln: fptrunc.f32
; check: sin_approx v0
; nextln: cos_approx v0
; nextln: store
; nextln: store
; check: fsub v0, v0
; nextln: fcmp ogt v0, v0
declare float @__nv_ldexpf(float, i32)
declare void @__nv_fast_sincosf(float, float*, float*)
declare float @__nv_fdimf(float, float)

define float @k(float %x, i32 %n, float* %s, float* %c) {
  %a = call float @__nv_ldexpf(float %x, i32 %n)
  call void @__nv_fast_sincosf(float %x, float* %s, float* %c)
  %d = call float @__nv_fdimf(float %x, float %x)
  %r = fadd float %a, %d
  ret float %r
}
