; test: import
;; sin/cos (f64): msun's e_rem_pio2.c medium path (n = nearest(x·2/π) on an input
;; clamped to ±2^60, three rounds with 33-bit parts of π/2, the second and third
;; selected where the exponent dropped by more than 16 and 49), then k_sin.c/k_cos.c on
;; y0 + y1 and the quadrant n & 3; sin(±0) keeps x; inf and NaN give NaN.
; check: func @s(f64) -> f64
; check: fconst.f64 0.6366197723675814
; check: fmin v0
; nextln: fmax
; check: nearest
; check: icmp sgt
; check: icmp sgt
; check: fptosi.i64
; check: fcmp oeq v0
; check: fcmp ueq
; check: return
; check: func @c(f64) -> f64
; check: nearest
; check: fptosi.i64
; check: fcmp ueq
; check: return
declare double @__nv_sin(double)
declare double @llvm.cos.f64(double)

define double @s(double %x) {
  %r = call double @__nv_sin(double %x)
  ret double %r
}
define double @c(double %x) {
  %r = call double @llvm.cos.f64(double %x)
  ret double %r
}
