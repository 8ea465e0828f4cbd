; test: import
; precise-output
;; logf after msun's e_logf.c: subnormals scaled by 2^25, reduction into [√2/2, √2],
;; s = f/(2+f), the degree-8 polynomial, the special cases by select.
declare float @__nv_logf(float)

define float @f(float %x) {
  %r = call float @__nv_logf(float %x)
  ret float %r
}
; output:
; func @f(f32) -> f32 anynan {
; block0(v0: f32):
;     v2 = iconst.i32 8388608
;     v4 = fconst.f32 33554432.0
;     v8 = iconst.i32 -25
;     v9 = iconst.i32 0
;     v11 = iconst.i32 4913933
;     v13 = iconst.i32 23
;     v15 = iconst.i32 127
;     v18 = iconst.i32 8388607
;     v20 = iconst.i32 1060439283
;     v23 = fconst.f32 1.0
;     v24 = fconst.f32 2.0
;     v30 = fconst.f32 0.24279079
;     v32 = fconst.f32 0.40000972
;     v35 = fconst.f32 0.28498787
;     v37 = fconst.f32 0.6666666
;     v41 = fconst.f32 0.5
;     v47 = fconst.f32 9.058001e-6
;     v49 = fconst.f32 0.6931381
;     v56 = fconst.f32 0.0
;     v58 = fconst.f32 inf
;     v62 = fconst.f32 0x7fc00000
;     v65 = fconst.f32 -inf
;     v1 = bitcast.i32 v0
;     v3 = icmp ult v1, v2
;     v5 = fmul v0, v4
;     v6 = bitcast.i32 v5
;     v7 = select v3, v6, v1
;     v10 = select v3, v8, v9
;     v12 = iadd v7, v11
;     v14 = lshr v12, v13
;     v16 = isub v14, v15
;     v17 = iadd v10, v16
;     v19 = and v12, v18
;     v21 = iadd v19, v20
;     v22 = bitcast.f32 v21
;     v25 = fsub v22, v23
;     v26 = fadd v24, v25
;     v27 = fdiv v25, v26
;     v28 = fmul v27, v27
;     v29 = fmul v28, v28
;     v31 = fmul v29, v30
;     v33 = fadd v32, v31
;     v34 = fmul v29, v33
;     v36 = fmul v29, v35
;     v38 = fadd v37, v36
;     v39 = fmul v28, v38
;     v40 = fadd v39, v34
;     v42 = fmul v25, v41
;     v43 = fmul v42, v25
;     v44 = sitofp.f32 v17
;     v45 = fadd v43, v40
;     v46 = fmul v27, v45
;     v48 = fmul v44, v47
;     v50 = fmul v44, v49
;     v51 = fadd v46, v48
;     v52 = fsub v51, v43
;     v53 = fadd v52, v25
;     v54 = fadd v53, v50
;     v55 = fcmp oeq v0, v23
;     v57 = select v55, v56, v54
;     v59 = fcmp ueq v0, v58
;     v60 = select v59, v0, v57
;     v61 = fcmp olt v0, v56
;     v63 = select v61, v62, v60
;     v64 = fcmp oeq v0, v56
;     v66 = select v64, v65, v63
;     return v66
; }
