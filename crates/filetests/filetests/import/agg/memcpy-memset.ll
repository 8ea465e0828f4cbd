; test: import
; precise-output
;; Constant-length memcpy/memmove/memset become loads then stores, as wide as the
;; align attributes allow (a 16-byte copy at align 16: two i64; at align 2: eight i16;
;; a 3-byte memset at align 4: i16 + i8 of the splatted byte).
declare void @llvm.memcpy.p0i8.p0i8.i64(i8*, i8*, i64, i1)
declare void @llvm.memmove.p0i8.p0i8.i64(i8*, i8*, i64, i1)
declare void @llvm.memset.p0i8.i64(i8*, i8, i64, i1)

define void @f(i8* %d, i8* %s, i8 %b) {
  call void @llvm.memcpy.p0i8.p0i8.i64(i8* align 16 %d, i8* align 16 %s, i64 16, i1 false)
  call void @llvm.memmove.p0i8.p0i8.i64(i8* align 2 %d, i8* align 2 %s, i64 6, i1 true)
  call void @llvm.memset.p0i8.i64(i8* align 4 %d, i8 %b, i64 3, i1 false)
  ret void
}
; output:
; func @f(ptr, ptr, i8) anynan {
; block0(v0: ptr, v1: ptr, v2: i8):
;     v3 = iconst.i64 16
;     v4 = iconst.i1 0
;     v6 = iconst.i64 8
;     v10 = iconst.i64 6
;     v11 = iconst.i1 -1
;     v13 = iconst.i64 2
;     v16 = iconst.i64 4
;     v21 = iconst.i64 3
;     v23 = iconst.i16 257
;     v5 = load.i64 v1
;     v7 = ptradd v1, v6, 1
;     v8 = load.i64 v7
;     store v5, v0
;     v9 = ptradd v0, v6, 1
;     store v8, v9
;     v12 = load.i16 volatile v1
;     v14 = ptradd v1, v13, 1
;     v15 = load.i16 volatile v14
;     v17 = ptradd v1, v16, 1
;     v18 = load.i16 volatile v17
;     store volatile v12, v0
;     v19 = ptradd v0, v13, 1
;     store volatile v15, v19
;     v20 = ptradd v0, v16, 1
;     store volatile v18, v20
;     v22 = zext.i16 v2
;     v24 = imul v22, v23
;     store v24, v0
;     v25 = ptradd v0, v13, 1
;     store v2, v25
;     return
; }
