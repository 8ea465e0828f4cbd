; test: import
; precise-output
;; frexpf: subnormals scaled by 2^24, the exponent field rebased to 126 and stored,
;; the mantissa's exponent set to 2^-1; ±0, inf and NaN give x + x and exponent 0.
declare float @__nv_frexpf(float, i32*)

define float @f(float %x, i32* %e) {
  %m = call float @__nv_frexpf(float %x, i32* %e)
  ret float %m
}
; output:
; func @f(f32, ptr) -> f32 anynan {
; block0(v0: f32, v1: ptr):
;     v3 = fconst.f32 1.1754944e-38
;     v5 = fconst.f32 16777216.0
;     v8 = iconst.i32 24
;     v9 = iconst.i32 0
;     v12 = iconst.i32 23
;     v14 = iconst.i32 255
;     v16 = iconst.i32 126
;     v19 = iconst.i32 -2139095041
;     v20 = iconst.i32 1056964608
;     v24 = fconst.f32 0.0
;     v2 = fabs v0
;     v4 = fcmp olt v2, v3
;     v6 = fmul v0, v5
;     v7 = select v4, v6, v0
;     v10 = select v4, v8, v9
;     v11 = bitcast.i32 v7
;     v13 = lshr v11, v12
;     v15 = and v13, v14
;     v17 = isub v15, v16
;     v18 = isub v17, v10
;     v21 = and v11, v19
;     v22 = or v21, v20
;     v23 = bitcast.f32 v22
;     v25 = fcmp oeq v0, v24
;     v26 = icmp eq v15, v14
;     v27 = or v25, v26
;     v28 = fadd v0, v0
;     v29 = select v27, v28, v23
;     v30 = select v27, v9, v18
;     store v30, v1
;     return v29
; }
