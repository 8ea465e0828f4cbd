; test: compile
;; A kernel imported from LLVM IR is `anynan` (its NaNs may have any payload, as LLVM
;; says), so its stored sum gets no `setp.nan` + `selp`, as in llc's PTX; the same
;; kernel written in Gyre's IR without the attribute is in `nan-policy.gir`.
; check: add.rn.f32 %f3, %f1, %f2;
; nextln: st.global.f32 [%rd1], %f3;
; not: setp.nan
target triple = "nvptx64-nvidia-cuda"

define void @k(float addrspace(1)* %out, float %a, float %b) {
  %s = fadd float %a, %b
  store float %s, float addrspace(1)* %out, align 4
  ret void
}

!nvvm.annotations = !{!0}
!0 = !{void (float addrspace(1)*, float, float)* @k, !"kernel", i32 1}
