; test: compile
; target: sm_70
;; A kernel's generic pointer parameters point into global memory (the CUDA launch
;; ABI): the web of pointers derived from them through `getelementptr` is inferred
;; global, converted once with `cvta.to.global`, and accessed with `ld.global` /
;; `st.global`. The `sext` of the 32-bit index folds into `mad.wide.s32`; the constant
;; offset of `in[i + 1]` folds into the address (`[%rdN+4]`).
; check: ld.param.u64 %rd2, [$$param0];
; nextln: cvta.to.global.u64 %rd1, %rd2;
; check: ld.param.u64 %rd4, [$$param1];
; nextln: cvta.to.global.u64 %rd3, %rd4;
; not: cvt.s64.s32
; check: mad.wide.s32 %rd5, %r1, 4, %rd3;
; nextln: ld.global.f32 %f1, [%rd5];
; nextln: ld.global.f32 %f2, [%rd5+4];
; check: mad.wide.s32 %rd6, %r1, 4, %rd1;
; nextln: st.global.f32 [%rd6], %f3;
target triple = "nvptx64-nvidia-cuda"

define void @k(float* %out, float* %in) {
  %t = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %i = sext i32 %t to i64
  %p = getelementptr inbounds float, float* %in, i64 %i
  %a = load float, float* %p, align 4
  %q = getelementptr inbounds float, float* %p, i64 1
  %b = load float, float* %q, align 4
  %s = fmul float %a, %b
  %i2 = sext i32 %t to i64
  %o = getelementptr inbounds float, float* %out, i64 %i2
  store float %s, float* %o, align 4
  ret void
}

declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()

!nvvm.annotations = !{!0}
!0 = !{void (float*, float*)* @k, !"kernel", i32 1}
