; test: import
; precise-output
;; byval on a kernel keeps LLVM's ABI: a ptr.local parameter described as
;; byval(SIZE, align A), whose bytes the launch supplies; the LLVM body's generic
;; pointer is its addrspace_cast.
%struct.uchar4 = type { i8, i8, i8, i8 }

define void @k(i8 addrspace(1)* %o, %struct.uchar4* byval(%struct.uchar4) align 4 %c) {
  %g = getelementptr inbounds %struct.uchar4, %struct.uchar4* %c, i32 0, i32 2
  %v = load i8, i8* %g, align 1
  store i8 %v, i8 addrspace(1)* %o
  ret void
}
!nvvm.annotations = !{!0}
!0 = !{void (i8 addrspace(1)*, %struct.uchar4*)* @k, !"kernel", i32 1}
; output:
; kernel @k(ptr.global, ptr.local byval(4, align 4)) anynan {
; block0(v0: ptr.global, v1: ptr.local):
;     v2 = addrspace_cast.ptr v1
;     v3 = iconst.i64 2
;     v4 = ptradd v2, v3, 1
;     v5 = load.i8 v4
;     store v5, v0
;     return
; }
