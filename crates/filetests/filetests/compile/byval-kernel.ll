; test: compile
; target: sm_70
;; A kernel byval struct is `.param .align A .b8 p[N]` (llc's ABI), copied into the
;; local frame at entry with accesses as wide as its alignment.
; check: .param .align 8 .b8 $$param1[16]
; check: .local .align 8 .b8 $$depot[16];
; check: , [$$param1+0];
; nextln: st.local.u64 [$$depot+0]
; check: , [$$param1+8];
; nextln: st.local.u64 [$$depot+8]
%struct.P = type { double, i32 }

define void @k(double addrspace(1)* %o, %struct.P* byval(%struct.P) align 8 %p) {
  %g = getelementptr inbounds %struct.P, %struct.P* %p, i32 0, i32 0
  %v = load double, double* %g, align 8
  store double %v, double addrspace(1)* %o
  ret void
}
!nvvm.annotations = !{!0}
!0 = !{void (double addrspace(1)*, %struct.P*)* @k, !"kernel", i32 1}
