; test: import
; precise-output
;; The i56 pattern SROA leaves in CUDA's reduction kernels: an odd-width value lives
;; zero-extended in the next Gyre integer type; trunc masks, zext is free, add masks,
;; a signed compare sign-extends first.
define i64 @f(i64 %x, i64 %y) {
  %t = trunc i64 %x to i56
  %u = trunc i64 %y to i56
  %s = add i56 %t, %u
  %n = icmp slt i56 %s, 0
  %z = zext i56 %s to i64
  %k = zext i56 undef to i64
  %r = select i1 %n, i64 %z, i64 %k
  ret i64 %r
}
; output:
; func @f(i64, i64) -> i64 anynan {
; block0(v0: i64, v1: i64):
;     v2 = iconst.i64 72057594037927935
;     v7 = iconst.i64 0
;     v8 = iconst.i64 8
;     v3 = and v0, v2
;     v4 = and v1, v2
;     v5 = iadd v3, v4
;     v6 = and v5, v2
;     v9 = shl v6, v8
;     v10 = ashr v9, v8
;     v11 = shl v7, v8
;     v12 = ashr v11, v8
;     v13 = icmp slt v10, v12
;     v14 = select v13, v6, v7
;     return v14
; }
