; test: import
;; sinf/cosf/tanf: both reductions computed (Cody-Waite below 2^19 on a clamped input,
;; Payne-Hanek from the bits of 2/π above) and one selected; Taylor polynomials in f64;
;; one fptrunc per result. sincosf stores both results.
; check: func @s(f32) -> f32
; check: iconst.i64 -6703182060581546711
; check: fmin
; check: nearest
; check: imul
; check: fcmp oge
; check: fptrunc.f32
; check: return
; check: func @sc(f32, ptr, ptr)
; check: fptrunc.f32
; check: store
; nextln: store
declare float @__nv_sinf(float)
declare void @__nv_sincosf(float, float*, float*)

define float @s(float %x) {
  %r = call float @__nv_sinf(float %x)
  ret float %r
}
define void @sc(float %x, float* %s, float* %c) {
  call void @__nv_sincosf(float %x, float* %s, float* %c)
  ret void
}
