; test: import
;; The f32 functions evaluated in f64: fpext, the f64 formula, one fptrunc.
; check: func @k(f32, f32) -> f32
; check: fpext.f64 v0
; check: fptrunc.f32
; check: sqrt
; check: fptrunc.f32
; check: fpext.f64 v0
; nextln: fpext.f64 v1
; check: fptrunc.f32
; check: return
declare float @__nv_tanhf(float)
declare float @__nv_asinf(float)
declare float @__nv_atan2f(float, float)

define float @k(float %x, float %y) {
  %a = call float @__nv_tanhf(float %x)
  %b = call float @__nv_asinf(float %x)
  %c = call float @__nv_atan2f(float %x, float %y)
  %s = fadd float %a, %b
  %t = fadd float %s, %c
  ret float %t
}
