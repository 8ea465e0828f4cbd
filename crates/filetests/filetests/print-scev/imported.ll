; test: print-scev
; precise-output
;; LLVM IR input: the importer's block parameters are the phis; the stride-3 count and
;; the down-counting ne loop as LLVM 14 gives them (LLVM writes the stride-3 count as
;; ((max - min(1, max)) /u 3) + min(1, max); Gyre as (2 + max) /u 3, equal since the
;; sum cannot wrap under nsw).
define void @f(i32 %n, i32* %p) {
entry:
  br label %loop
loop:
  %i = phi i32 [ 0, %entry ], [ %i.next, %latch ]
  %c = icmp slt i32 %i, %n
  br i1 %c, label %latch, label %exit
latch:
  %z = zext i32 %i to i64
  %q = getelementptr i32, i32* %p, i64 %z
  store i32 %i, i32* %q
  %i.next = add nsw i32 %i, 3
  br label %loop
exit:
  %e = phi i32 [ %i, %loop ]
  %m = mul i32 %e, 2
  ret void
}
define void @g(i8 %s) {
entry:
  br label %loop
loop:
  %i = phi i8 [ %s, %entry ], [ %i.next, %loop ]
  %i.next = add i8 %i, -1
  %c = icmp ne i8 %i.next, 7
  br i1 %c, label %loop, label %exit
exit:
  ret void
}
; output:
; Printing analysis 'Scalar Evolution Analysis' for function 'f':
; Classifying expressions for: @f
;   v0 = block0 param 0: i32
;   -->  %v0
;   v6 = iconst.i32 3
;   -->  3
;   v9 = iconst.i32 2
;   -->  2
;   v11 = iconst.i32 0
;   -->  0
;   v2 = block1 param 0: i32
;   -->  {0,+,3}<nsw><%block1>		Exits: (3 * ((2 + (0 smax %v0)) /u 3))		LoopDispositions: { %block1: Computable }
;   v4 = zext.i64 v2
;   -->  (zext i32 {0,+,3}<nsw><%block1> to i64)		Exits: (zext i32 (3 * ((2 + (0 smax %v0)) /u 3)) to i64)		LoopDispositions: { %block1: Computable }
;   v7 = iadd nsw v2, v6
;   -->  {3,+,3}<nsw><%block1>		Exits: (3 + (3 * ((2 + (0 smax %v0)) /u 3)))		LoopDispositions: { %block1: Computable }
;   v8 = block3 param 0: i32
;   -->  %v8
;   v10 = imul v8, v9
;   -->  (2 * %v8)
; Determining loop execution counts for: @f
; Loop %block1: backedge-taken count is ((2 + (0 smax %v0)) /u 3)
; Loop %block1: max backedge-taken count is 715827882
; Loop %block1: Predicated backedge-taken count is ((2 + (0 smax %v0)) /u 3)
;  Predicates:
;
; Loop %block1: Trip multiple is 1
; Printing analysis 'Scalar Evolution Analysis' for function 'g':
; Classifying expressions for: @g
;   v0 = block0 param 0: i8
;   -->  %v0
;   v2 = iconst.i8 -1
;   -->  -1
;   v4 = iconst.i8 7
;   -->  7
;   v1 = block1 param 0: i8
;   -->  {%v0,+,-1}<%block1>		Exits: 8		LoopDispositions: { %block1: Computable }
;   v3 = iadd v1, v2
;   -->  {(-1 + %v0),+,-1}<%block1>		Exits: 7		LoopDispositions: { %block1: Computable }
; Determining loop execution counts for: @g
; Loop %block1: backedge-taken count is (-8 + %v0)
; Loop %block1: max backedge-taken count is -1
; Loop %block1: Predicated backedge-taken count is (-8 + %v0)
;  Predicates:
;
; Loop %block1: Trip multiple is 1
