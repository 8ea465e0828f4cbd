; test: import
;; clang's device printf is `vprintf(format, packed arguments)`; its assert is
;; `__assertfail(message, file, line, function, 1)` (the character size, always 1,
;; is dropped). Both become the opcodes of the same name.
; check: kernel @k(i32) anynan {
; check: v3 = global_addr @.str
; nextln: v4 = addrspace_cast.ptr v3
; check: v15 = iconst.i64 1
; check: v2 = addrspace_cast.ptr v1
; nextln: store v0, v2
; nextln: v5 = vprintf v4, v2
; check: block2:
; nextln: assert_fail v9, v11, v12, v14
; nextln: jump block1
@.str = internal unnamed_addr constant [8 x i8] c"x = %d\0A\00", align 1
@.msg = internal unnamed_addr constant [6 x i8] c"x < 9\00", align 1
@.file = internal unnamed_addr constant [5 x i8] c"a.cu\00", align 1
@.fn = internal unnamed_addr constant [9 x i8] c"void k()\00", align 1

define void @k(i32 %x) {
  %a = alloca { i32 }, align 8
  %p = getelementptr inbounds { i32 }, { i32 }* %a, i32 0, i32 0
  store i32 %x, i32* %p, align 4
  %b = bitcast { i32 }* %a to i8*
  %r = call i32 @vprintf(i8* getelementptr inbounds ([8 x i8], [8 x i8]* @.str, i64 0, i64 0), i8* %b)
  %c = icmp slt i32 %x, 9
  br i1 %c, label %ok, label %fail
fail:
  call void @__assertfail(i8* getelementptr inbounds ([6 x i8], [6 x i8]* @.msg, i64 0, i64 0), i8* getelementptr inbounds ([5 x i8], [5 x i8]* @.file, i64 0, i64 0), i32 7, i8* getelementptr inbounds ([9 x i8], [9 x i8]* @.fn, i64 0, i64 0), i64 1)
  br label %ok
ok:
  ret void
}
declare i32 @vprintf(i8*, i8*)
declare void @__assertfail(i8*, i8*, i32, i8*, i64)
!nvvm.annotations = !{!0}
!0 = !{void (i32)* @k, !"kernel", i32 1}
