; test: import
;; powf is exp(y·log|x|) in f64 (fpext, msun's log and exp, fptrunc) with C99's special
;; cases by select; __nv_exp/__nv_log and llvm.exp/log.f64 are msun's e_exp.c/e_log.c.
; check: func @p(f32, f32) -> f32
; check: fpext.f64 v2
; nextln: fpext.f64 v1
; check: fptrunc.f32
; check: frem v1
; check: return
; check: func @e(f64) -> f64
; check: nearest
; check: fdiv
; check: shl
; check: fcmp uno v0, v0
; check: return
; check: func @l(f64) -> f64
; check: iconst.i64 4503599627370496
; check: fdiv
; check: fcmp oeq v0
; check: return
declare float @__nv_powf(float, float)
declare double @__nv_exp(double)
declare double @llvm.log.f64(double)

define float @p(float %x, float %y) {
  %r = call float @__nv_powf(float %x, float %y)
  ret float %r
}
define double @e(double %x) {
  %r = call double @__nv_exp(double %x)
  ret double %r
}
define double @l(double %x) {
  %r = call double @llvm.log.f64(double %x)
  ret double %r
}
