; test: import
;; @llvm.compiler.used only keeps symbols alive in LLVM: it is accepted and dropped.
; check: global @c: const [1 x i32] align 4 = [5]
; not: compiler.used
@c = internal addrspace(4) global i32 5, align 4
@llvm.compiler.used = appending global [1 x i8*] [i8* addrspacecast (i8 addrspace(4)* bitcast (i32 addrspace(4)* @c to i8 addrspace(4)*) to i8*)], section "llvm.metadata"

define i32 @f() {
  %v = load i32, i32 addrspace(4)* @c, align 4
  ret i32 %v
}
