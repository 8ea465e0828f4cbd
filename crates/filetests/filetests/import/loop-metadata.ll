; test: import
; check: block1(v2: i32) loop(mustprogress, unroll_disable):
; check: block4(v6: i32) loop(unroll_count=4):
; check: block6(v9: i32) loop(unroll_full):
; check: block10(v12: i32) loop(unroll_enable):
; check: block12(v15: i32) loop(unroll_disable):
; not: loop(
;; `!llvm.loop` on a latch's branch becomes attributes of the loop's header (the
;; successor that dominates the latch): an unconditional latch, a rotated loop whose
;; latch is its header, a loop whose exit is laid out before its latch, `#pragma unroll
;; 1` (a count of 1: disable). Properties Gyre has no use for (vectorize) are dropped, and
;; `!llvm.loop` on a branch that closes no loop means nothing.
define void @k(i32 %n, i32* %p) {
entry:
  br label %h1
h1:
  %i = phi i32 [ 0, %entry ], [ %i1, %l1 ]
  %c1 = icmp slt i32 %i, %n
  br i1 %c1, label %l1, label %h2.pre
l1:
  %i1 = add i32 %i, 1
  br label %h1, !llvm.loop !1
h2.pre:
  br label %h2
h2:
  %j = phi i32 [ 0, %h2.pre ], [ %j1, %h2 ]
  %j1 = add i32 %j, 1
  %c2 = icmp slt i32 %j1, %n
  br i1 %c2, label %h2, label %h3.pre, !llvm.loop !4
h3.pre:
  br label %h3
x3:
  br label %h4.pre
h3:
  %k = phi i32 [ 0, %h3.pre ], [ %k1, %l3 ]
  %k1 = add i32 %k, 1
  br label %l3
l3:
  %c3 = icmp slt i32 %k1, %n
  br i1 %c3, label %h3, label %x3, !llvm.loop !6
h4.pre:
  br label %h4
h4:
  %m = phi i32 [ 0, %h4.pre ], [ %m1, %h4 ]
  %m1 = add i32 %m, 1
  %c4 = icmp slt i32 %m1, %n
  br i1 %c4, label %h4, label %h5.pre, !llvm.loop !8
h5.pre:
  br label %h5
h5:
  %q = phi i32 [ 0, %h5.pre ], [ %q1, %h5 ]
  %q1 = add i32 %q, 1
  %c5 = icmp slt i32 %q1, %n
  br i1 %c5, label %h5, label %out, !llvm.loop !10
out:
  br label %end, !llvm.loop !1
end:
  ret void
}
!1 = distinct !{!1, !2, !3}
!2 = !{!"llvm.loop.mustprogress"}
!3 = !{!"llvm.loop.unroll.disable"}
!4 = distinct !{!4, !5, !12}
!5 = !{!"llvm.loop.unroll.count", i32 4}
!6 = distinct !{!6, !7}
!7 = !{!"llvm.loop.unroll.full"}
!8 = distinct !{!8, !9}
!9 = !{!"llvm.loop.unroll.enable"}
!10 = distinct !{!10, !11}
!11 = !{!"llvm.loop.unroll.count", i32 1}
!12 = !{!"llvm.loop.vectorize.enable", i1 true}
