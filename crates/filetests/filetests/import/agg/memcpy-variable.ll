; test: import
; precise-output
;; A variable-length memmove (i32 length, volatile) becomes a guarded byte loop at the
;; call site: `len == 0` skips to the rest of the block; otherwise the addresses pick
;; the direction (backwards when dst > src), each loop has a dedicated preheader and
;; exit. The store after the call lands in the tail block. A variable memset is a
;; single forward loop storing the byte.
declare void @llvm.memmove.p0i8.p0i8.i32(i8*, i8*, i32, i1)
declare void @llvm.memset.p1i8.i64(i8 addrspace(1)*, i8, i64, i1)

define void @f(i8* %d, i8* %s, i32 %n, i8 addrspace(1)* %g, i8 %b, i64 %m) {
  call void @llvm.memmove.p0i8.p0i8.i32(i8* align 4 %d, i8* align 4 %s, i32 %n, i1 true)
  store i8 1, i8* %d
  call void @llvm.memset.p1i8.i64(i8 addrspace(1)* %g, i8 %b, i64 %m, i1 false)
  ret void
}
; output:
; func @f(ptr, ptr, i32, ptr.global, i8, i64) anynan {
; block0(v0: ptr, v1: ptr, v2: i32, v3: ptr.global, v4: i8, v5: i64):
;     v6 = iconst.i1 -1
;     v8 = iconst.i64 0
;     v10 = iconst.i64 1
;     v26 = iconst.i8 1
;     v27 = iconst.i1 0
;     v7 = zext.i64 v2
;     v9 = icmp eq v7, v8
;     brif v9, block1, block2
; block2:
;     v17 = ptrtoint.i64 v0
;     v18 = ptrtoint.i64 v1
;     v19 = icmp ugt v17, v18
;     brif v19, block6, block3
; block3:
;     jump block4(v8)
; block4(v11: i64):
;     v12 = ptradd v0, v11, 1
;     v13 = ptradd v1, v11, 1
;     v14 = load.i8 volatile v13
;     store volatile v14, v12
;     v15 = iadd nuw v11, v10
;     v16 = icmp eq v15, v7
;     brif v16, block5, block4(v15)
; block5:
;     jump block1
; block6:
;     jump block7(v7)
; block7(v20: i64):
;     v21 = isub nuw v20, v10
;     v22 = ptradd v0, v21, 1
;     v23 = ptradd v1, v21, 1
;     v24 = load.i8 volatile v23
;     store volatile v24, v22
;     v25 = icmp eq v21, v8
;     brif v25, block8, block7(v21)
; block8:
;     jump block1
; block1:
;     store v26, v0
;     v28 = icmp eq v5, v8
;     brif v28, block9, block10
; block10:
;     jump block11(v8)
; block11(v29: i64):
;     v30 = ptradd v3, v29, 1
;     store v4, v30
;     v31 = iadd nuw v29, v10
;     v32 = icmp eq v31, v5
;     brif v32, block12, block11(v31)
; block12:
;     jump block9
; block9:
;     return
; }
