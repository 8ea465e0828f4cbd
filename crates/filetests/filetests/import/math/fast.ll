; test: import
;; libdevice's fast functions are the PTX primitives, scaled by the constant libdevice
;; uses (ln 2, log10 2, log2 e, log2 10 rounded to f32).
; check: func @fast(f32, f32) -> f32
; check: fconst.f32 0.6931472
; check: lg2_approx v0
; nextln: fmul
; check: fmul v0
; nextln: ex2_approx
; check: lg2_approx v0
; nextln: fmul
; check: sin_approx v0
; nextln: cos_approx v0
; nextln: fdiv_approx
; check: lg2_approx v0
; nextln: fmul v1
; nextln: ex2_approx
; check: fdiv_approx v0, v1
; check: rsqrt_approx v0
; check: ex2_approx v0
; check: fmax v0
; nextln: fmin
; check: sin_approx v0
; check: cos_approx v0
; check: lg2_approx v0
; check: fmul v0
; nextln: ex2_approx
; check: return
declare float @__nv_fast_logf(float)
declare float @__nv_fast_expf(float)
declare float @__nv_fast_log10f(float)
declare float @__nv_fast_tanf(float)
declare float @__nv_fast_powf(float, float)
declare float @__nv_fast_fdividef(float, float)
declare float @__nv_rsqrtf(float)
declare float @__nv_exp2f(float)
declare float @__nv_saturatef(float)
declare float @__nv_fast_sinf(float)
declare float @__nv_fast_cosf(float)
declare float @__nv_fast_log2f(float)
declare float @__nv_fast_exp10f(float)

define float @fast(float %x, float %y) {
  %a = call float @__nv_fast_logf(float %x)
  %b = call float @__nv_fast_expf(float %x)
  %c = call float @__nv_fast_log10f(float %x)
  %d = call float @__nv_fast_tanf(float %x)
  %e = call float @__nv_fast_powf(float %x, float %y)
  %f = call float @__nv_fast_fdividef(float %x, float %y)
  %g = call float @__nv_rsqrtf(float %x)
  %h = call float @__nv_exp2f(float %x)
  %i = call float @__nv_saturatef(float %x)
  %j = call float @__nv_fast_sinf(float %x)
  %k = call float @__nv_fast_cosf(float %x)
  %l = call float @__nv_fast_log2f(float %x)
  %m = call float @__nv_fast_exp10f(float %x)
  %s1 = fadd float %a, %b
  %s2 = fadd float %s1, %c
  %s3 = fadd float %s2, %d
  %s4 = fadd float %s3, %e
  %s5 = fadd float %s4, %f
  %s6 = fadd float %s5, %g
  %s7 = fadd float %s6, %h
  %s8 = fadd float %s7, %i
  %s9 = fadd float %s8, %j
  %s10 = fadd float %s9, %k
  %s11 = fadd float %s10, %l
  %s12 = fadd float %s11, %m
  ret float %s12
}
