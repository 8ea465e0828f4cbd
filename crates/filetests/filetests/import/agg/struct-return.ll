; test: import
; precise-output
;; A device function returning a struct gets a hidden ptr.local out-parameter (the
;; caller's slot); struct parameters become one parameter per leaf; insertvalue,
;; extractvalue, an aggregate phi and select are one value per leaf.
%struct.uint4 = type { i32, i32, i32, i32 }

define internal %struct.uint4 @mk(i32 %a, { i32, i8 } %p) {
  %x = extractvalue { i32, i8 } %p, 1
  %xz = zext i8 %x to i32
  %r0 = insertvalue %struct.uint4 undef, i32 %a, 0
  %r1 = insertvalue %struct.uint4 %r0, i32 %xz, 3
  ret %struct.uint4 %r1
}

define void @k(i32 addrspace(1)* %o, i32 %n) {
entry:
  br label %loop

loop:
  %acc = phi %struct.uint4 [ { i32 1, i32 2, i32 3, i32 4 }, %entry ], [ %sel, %loop ]
  %i = phi i32 [ 0, %entry ], [ %i1, %loop ]
  %v = call %struct.uint4 @mk(i32 %i, { i32, i8 } { i32 0, i8 7 })
  %c = icmp eq i32 %i, 2
  %sel = select i1 %c, %struct.uint4 %v, %struct.uint4 %acc
  %i1 = add i32 %i, 1
  %done = icmp eq i32 %i1, %n
  br i1 %done, label %exit, label %loop

exit:
  %f3 = extractvalue %struct.uint4 %sel, 3
  store i32 %f3, i32 addrspace(1)* %o
  ret void
}
!nvvm.annotations = !{!0}
!0 = !{void (i32 addrspace(1)*, i32)* @k, !"kernel", i32 1}
; output:
; func @mk(i32, i32, i8, ptr.local) anynan internal {
; block0(v0: i32, v1: i32, v2: i8, v3: ptr.local):
;     v5 = iconst.i32 0
;     v6 = iconst.i64 4
;     v8 = iconst.i64 8
;     v10 = iconst.i64 12
;     v4 = zext.i32 v2
;     store v0, v3
;     v7 = ptradd v3, v6, 1
;     store v5, v7
;     v9 = ptradd v3, v8, 1
;     store v5, v9
;     v11 = ptradd v3, v10, 1
;     store v4, v11
;     return
; }
;
; kernel @k(ptr.global, i32) anynan {
;     slot0 = local 16 align 4
; block0(v0: ptr.global, v1: i32):
;     v7 = iconst.i32 0
;     v8 = iconst.i8 7
;     v9 = slot_addr slot0
;     v11 = iconst.i64 4
;     v14 = iconst.i64 8
;     v17 = iconst.i64 12
;     v20 = iconst.i32 2
;     v26 = iconst.i32 1
;     v29 = iconst.i32 3
;     v30 = iconst.i32 4
;     jump block1(v26, v20, v29, v30, v7)
; block1(v2: i32, v3: i32, v4: i32, v5: i32, v6: i32):
;     call @mk(v6, v7, v8, v9)
;     v10 = load.i32 v9
;     v12 = ptradd v9, v11, 1
;     v13 = load.i32 v12
;     v15 = ptradd v9, v14, 1
;     v16 = load.i32 v15
;     v18 = ptradd v9, v17, 1
;     v19 = load.i32 v18
;     v21 = icmp eq v6, v20
;     v22 = select v21, v10, v2
;     v23 = select v21, v13, v3
;     v24 = select v21, v16, v4
;     v25 = select v21, v19, v5
;     v27 = iadd v6, v26
;     v28 = icmp eq v27, v1
;     brif v28, block2, block1(v22, v23, v24, v25, v27)
; block2:
;     store v25, v0
;     return
; }
