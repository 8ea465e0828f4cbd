#!/usr/bin/env python3
"""deep family: one while-nest n/3 deep; every level's condition compares its counter
with tid.x (a divergent exit at every level). Usage: gen_deep.py BLOCKS > out.ll"""
import sys
n = int(sys.argv[1]); d = max(n // 3, 1)
o = []
w = o.append
w('target triple = "nvptx64-nvidia-cuda"')
w('define void @k(i32 %n, i32* %out) {')
w('entry:')
w('  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()')
w('  br label %h0')
for i in range(d):
    out = 'exit' if i == 0 else f'l{i-1}'
    inner = f'p{i}' if i + 1 < d else f'l{i}'
    pred = 'entry' if i == 0 else f'p{i-1}'
    w(f'h{i}:')
    w(f'  %x{i} = phi i32 [ 0, %{pred} ], [ %y{i}, %l{i} ]')
    w(f'  %c{i} = icmp slt i32 %x{i}, %tid')
    w(f'  br i1 %c{i}, label %{inner}, label %{out}')
    if i + 1 < d:
        w(f'p{i}:')
        w(f'  br label %h{i+1}')
    w(f'l{i}:')
    w(f'  %y{i} = add i32 %x{i}, 1')
    w(f'  br label %h{i}')
w('exit:')
w('  store i32 %n, i32* %out')
w('  ret void')
w('}')
w('declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()')
w('!nvvm.annotations = !{!0}')
w('!0 = !{void (i32, i32*)* @k, !"kernel", i32 1}')
print("\n".join(o))
