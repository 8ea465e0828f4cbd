; test: import
;; `internal`/`private` linkage becomes `internal`; `noinline` and `alwaysinline`, inline or
;; in an attribute group, become the inline hints the `inline` pass reads, and so does
;; `inlinehint`; other linkages leave nothing (visible).
; check: func @a(i32) -> i32 anynan internal noinline {
; check: func @b(i32) -> i32 anynan internal alwaysinline {
; check: func @c(i32) -> i32 anynan internal inlinehint {
; check: func @d(i32) -> i32 anynan {
; check: func @e(i32) -> i32 anynan noinline {
; check: kernel @k(ptr.global) anynan {
define internal i32 @a(i32 %x) #0 {
  ret i32 %x
}

define private i32 @b(i32 %x) alwaysinline {
  ret i32 %x
}

define internal i32 @c(i32 %x) #1 {
  ret i32 %x
}

define linkonce_odr i32 @d(i32 %x) {
  ret i32 %x
}

define i32 @e(i32 %x) noinline {
  ret i32 %x
}

define void @k(i32 addrspace(1)* %o) {
  %1 = call i32 @a(i32 1)
  %2 = call i32 @b(i32 %1)
  %3 = call i32 @c(i32 %2)
  %4 = call i32 @d(i32 %3)
  %5 = call i32 @e(i32 %4)
  store i32 %5, i32 addrspace(1)* %o
  ret void
}

attributes #0 = { noinline nounwind }
attributes #1 = { inlinehint nounwind }

!nvvm.annotations = !{!0}
!0 = !{void (i32 addrspace(1)*)* @k, !"kernel", i32 1}
