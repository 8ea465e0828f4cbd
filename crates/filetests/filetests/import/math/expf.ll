; test: import
; precise-output
;; expf: clamp, Cody-Waite reduction by ln 2 (two parts), ex2_approx, exact scaling by
;; 2^j in two halves, NaN restored at the end.
declare float @__nv_expf(float)

define float @f(float %x) {
  %r = call float @__nv_expf(float %x)
  ret float %r
}
; output:
; func @f(f32) -> f32 anynan {
; block0(v0: f32):
;     v1 = fconst.f32 -104.0
;     v2 = fconst.f32 89.0
;     v5 = fconst.f32 1.442695
;     v8 = fconst.f32 -0.69314575
;     v9 = fconst.f32 -1.4286068e-6
;     v15 = iconst.i32 1
;     v18 = iconst.i32 127
;     v19 = iconst.i32 23
;     v3 = fmax v0, v1
;     v4 = fmin v3, v2
;     v6 = fmul v4, v5
;     v7 = nearest v6
;     v10 = fma v7, v8, v4
;     v11 = fma v7, v9, v10
;     v12 = fmul v11, v5
;     v13 = ex2_approx v12
;     v14 = fptosi.i32 v7
;     v16 = ashr v14, v15
;     v17 = isub v14, v16
;     v20 = iadd v16, v18
;     v21 = shl v20, v19
;     v22 = bitcast.f32 v21
;     v23 = iadd v17, v18
;     v24 = shl v23, v19
;     v25 = bitcast.f32 v24
;     v26 = fmul v13, v22
;     v27 = fmul v26, v25
;     v28 = fcmp uno v0, v0
;     v29 = select v28, v0, v27
;     return v29
; }
