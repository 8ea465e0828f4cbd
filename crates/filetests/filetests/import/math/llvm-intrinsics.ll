; test: import
;; LLVM's math intrinsics on f32: exp/log/log2/log10 are the accurate expansions,
;; exp2 is ex2_approx (as libdevice's exp2f), copysign works on the bits.
; check: func @f(f32, f32) -> f32
; check: ex2_approx
; check: fdiv
; check: ex2_approx v0
; check: bitcast.i32 v0
; nextln: bitcast.i32 v1
; nextln: and
; nextln: and
; nextln: or
; nextln: bitcast.f32
declare float @llvm.exp.f32(float)
declare float @llvm.log.f32(float)
declare float @llvm.exp2.f32(float)
declare float @llvm.copysign.f32(float, float)

define float @f(float %x, float %y) {
  %a = call float @llvm.exp.f32(float %x)
  %b = call float @llvm.log.f32(float %a)
  %c = call float @llvm.exp2.f32(float %x)
  %d = call float @llvm.copysign.f32(float %x, float %y)
  %s = fadd float %b, %c
  %t = fadd float %s, %d
  ret float %t
}
