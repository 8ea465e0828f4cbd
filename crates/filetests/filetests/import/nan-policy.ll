; test: import
;; LLVM leaves the payload of a NaN that arithmetic produces unspecified (LangRef,
;; "Floating-Point Semantics"), so every imported function is `anynan`: kernels, device
;; functions, and the library functions the importer adds for intrinsics (`powi`).
; check: func @half(f32) -> f32 anynan {
; check: kernel @k(ptr, f32) anynan {
; check: func @__nv_powif(f32, i32) -> f32 anynan internal {
target triple = "nvptx64-nvidia-cuda"

define float @half(float %x) {
  %h = fmul float %x, 0.5
  ret float %h
}

define void @k(float* %out, float %x) {
  %h = call float @half(float %x)
  %p = call float @llvm.powi.f32.i32(float %h, i32 3)
  store float %p, float* %out, align 4
  ret void
}

declare float @llvm.powi.f32.i32(float, i32)

!nvvm.annotations = !{!0}
!0 = !{void (float*, float)* @k, !"kernel", i32 1}
