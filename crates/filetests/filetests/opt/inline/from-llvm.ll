; test: opt
; passes: inline
;; From LLVM IR: the internal callees are inlined and deleted, except the noinline one;
;; the visible (default linkage) one is inlined and kept.
; check: func @keep_noinline(i32) -> i32 anynan internal noinline {
; check: func @visible(i32) -> i32 anynan {
; check: kernel @k(ptr.global) anynan {
; check: call @keep_noinline(
; not: call @
; not: func @
; check: stat: inline NumDeleted 1
; check: stat: inline NumInlined 2
define internal i32 @keep_noinline(i32 %x) #0 {
  %y = add i32 %x, 1
  ret i32 %y
}

define internal i32 @gone(i32 %x) {
  %y = mul i32 %x, 3
  ret i32 %y
}

define i32 @visible(i32 %x) {
  %y = xor i32 %x, 5
  ret i32 %y
}

define void @k(i32 addrspace(1)* %o) {
  %t = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %1 = call i32 @keep_noinline(i32 %t)
  %2 = call i32 @gone(i32 %1)
  %3 = call i32 @visible(i32 %2)
  %p = getelementptr i32, i32 addrspace(1)* %o, i32 %t
  store i32 %3, i32 addrspace(1)* %p
  ret void
}

declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()

attributes #0 = { noinline }

!nvvm.annotations = !{!0}
!0 = !{void (i32 addrspace(1)*)* @k, !"kernel", i32 1}
