; test: import
; precise-output
;; byval on a device function: each call copies the struct into a fresh slot of the
;; caller (by its fields, no padding here) and passes that slot's address.
%struct.S = type { i32, float }

define internal i32 @use(%struct.S* byval(%struct.S) align 4 %s) {
  %a = getelementptr %struct.S, %struct.S* %s, i64 0, i32 0
  %v = load i32, i32* %a, align 4
  store i32 0, i32* %a, align 4
  ret i32 %v
}

define void @k(i32 addrspace(1)* %o, %struct.S* %p) {
  %r = call i32 @use(%struct.S* byval(%struct.S) align 4 %p)
  store i32 %r, i32 addrspace(1)* %o
  ret void
}
!nvvm.annotations = !{!0}
!0 = !{void (i32 addrspace(1)*, %struct.S*)* @k, !"kernel", i32 1}
; output:
; func @use(ptr) -> i32 anynan internal {
; block0(v0: ptr):
;     v2 = iconst.i32 0
;     v1 = load.i32 v0
;     store v2, v0
;     return v1
; }
;
; kernel @k(ptr.global, ptr) anynan {
;     slot0 = local 8 align 4
; block0(v0: ptr.global, v1: ptr):
;     v2 = slot_addr slot0
;     v4 = iconst.i64 4
;     v8 = addrspace_cast.ptr v2
;     v3 = load.i32 v1
;     v5 = ptradd v1, v4, 1
;     v6 = load.i32 v5
;     store v3, v2
;     v7 = ptradd v2, v4, 1
;     store v6, v7
;     v9 = call @use(v8)
;     store v9, v0
;     return
; }
