; test: import
;; sin/cos (f64): below 2^20, msun's e_rem_pio2.c medium path (n = nearest(x·2/π) on
;; an input clamped to ±2^60, three rounds with 33-bit parts of π/2, the second and third
;; selected where the exponent dropped by more than 16 and 49); from 2^20 up (biased
;; exponent >= 1043), Payne-Hanek: the window of 2/π starts at bit e - 1013 of the padded
;; table (its first word 0xa2f9836e4e441529 = -6703182060581546711), the fraction is
;; normalised with clz and turned into a double-double times π/2 with fma; the two
;; reductions are selected on the exponent, then k_sin.c/k_cos.c on y0 + y1 and the
;; quadrant n & 3; sin(±0) keeps x; inf and NaN give NaN.
; check: func @s(f64) -> f64
; check: fconst.f64 0.6366197723675814
; check: iconst.i64 1013
; check: iconst.i64 -6703182060581546711
; check: fconst.f64 1.5707963267948966
; check: fconst.f64 6.123233995736766e-17
; check: iconst.i64 1043
; check: fmin v0
; nextln: fmax
; check: nearest
; check: icmp sgt
; check: icmp sgt
; check: fptosi.i64
; check: clz
; nextln: umin
; check: uitofp.f64
; check: uitofp.f64
; check: fma
; check: fma
; check: icmp uge
; nextln: select
; nextln: select
; nextln: select
; check: fcmp oeq v0
; check: fcmp ueq
; check: return
; check: func @c(f64) -> f64
; check: iconst.i64 1043
; check: nearest
; check: fptosi.i64
; check: clz
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
