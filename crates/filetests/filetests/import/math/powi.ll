; test: import
;; powif/powi and llvm.powi call one library device function per type, added to the
;; module at the first call: square and multiply over the bits of |n| (a loop), then
;; the reciprocal for negative n.
; check: func @k(f32, i32, f64) -> f32
; check: call @__nv_powif(v0, v1)
; check: call @__nv_powif(v0, v1)
; check: call @__nv_powi(v2, v1)
; check: func @__nv_powif(f32, i32) -> f32
; check: block1(v6: f32, v7: i32, v8: f32):
; check: brif v15, block2, block1(v16, v14, v13)
; check: fdiv v5, v13
; check: func @__nv_powi(f64, i32) -> f64
declare float @__nv_powif(float, i32)
declare double @__nv_powi(double, i32)
declare float @llvm.powi.f32.i32(float, i32)

define float @k(float %x, i32 %n, double %d) {
  %a = call float @__nv_powif(float %x, i32 %n)
  %b = call float @llvm.powi.f32.i32(float %x, i32 %n)
  %c = call double @__nv_powi(double %d, i32 %n)
  %cf = fptrunc double %c to float
  %s = fadd float %a, %b
  %t = fadd float %s, %cf
  ret float %t
}
