; test: import
;; log2f and log10f share logf's reduction and polynomial and split f - f²/2 at 12 bits
;; (0xfffff000) for exact products; exp10f reduces by log10 2 (0x3e9a2080 + 0x355427db).
; check: func @f2(f32) -> f32
; check: iconst.i32 -4096
; check: fconst.f32 1.4428711
; check: return
; check: func @f10(f32) -> f32
; check: iconst.i32 -4096
; check: fconst.f32 0.43432617
; check: return
; check: func @e10(f32) -> f32
; check: fconst.f32 -0.3010292
; check: ex2_approx
; check: return
declare float @__nv_log2f(float)
declare float @__nv_log10f(float)
declare float @__nv_exp10f(float)

define float @f2(float %x) {
  %r = call float @__nv_log2f(float %x)
  ret float %r
}
define float @f10(float %x) {
  %r = call float @__nv_log10f(float %x)
  ret float %r
}
define float @e10(float %x) {
  %r = call float @__nv_exp10f(float %x)
  ret float %r
}
