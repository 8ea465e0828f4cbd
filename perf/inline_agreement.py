#!/usr/bin/env python3
"""Compare Gyre's inliner decisions with LLVM 14's on the CUDA corpus (issue 23).

For every corpus kernel, runs `opt -O2 -pass-remarks=inline -pass-remarks-missed=inline`
and `gyre opt -O --remarks`, and compares, per (caller, callee) pair, whether each
inliner left at least one call of that pair not inlined. A file agrees when the two sets
of pairs left as calls are equal. (Call counts are not compared: LLVM's simplification
between inlining steps can delete or duplicate calls Gyre still has.)

Usage: perf/inline_agreement.py GYRE_BINARY [CORPUS_DIR] [-v]
"""
import os
import re
import subprocess
import sys

LLVM_IN = re.compile(r"'([^']+)' inlined into '([^']+)'")
LLVM_NOT = re.compile(r"'([^']+)' is not inlined into '([^']+)'|'([^']+)' not inlined into '([^']+)'")
GYRE = re.compile(r"remark: inline: @(\S+) at \S+: (\w+): @([^:\s]+)")


def llvm(path):
    out = subprocess.run(
        ["opt", "-O2", "-pass-remarks=inline", "-pass-remarks-missed=inline",
         "-disable-output", path], capture_output=True, text=True).stderr
    inl, miss = set(), set()
    for line in out.splitlines():
        m = LLVM_NOT.search(line)
        if m:
            callee, caller = (m.group(1), m.group(2)) if m.group(1) else (m.group(3), m.group(4))
            miss.add((caller, callee))
            continue
        m = LLVM_IN.search(line)
        if m:
            inl.add((m.group(2), m.group(1)))
    return inl, miss


def gyre(binary, path):
    out = subprocess.run([binary, "opt", path, "-O", "--remarks", "-o", "/dev/null"],
                         capture_output=True, text=True).stderr
    inl, miss = set(), set()
    for line in out.splitlines():
        m = GYRE.search(line)
        if not m:
            continue
        caller, kind, callee = m.group(1), m.group(2), m.group(3)
        (inl if kind == "Inlined" else miss).add((caller, callee))
    return inl, miss


def main():
    args = [a for a in sys.argv[1:] if a != "-v"]
    verbose = "-v" in sys.argv
    binary = args[0]
    corpus = args[1] if len(args) > 1 else "../shared/corpus/cuda"
    files = sorted(f for f in os.listdir(corpus) if f.endswith(".ll"))
    agree = with_calls = 0
    for f in files:
        p = os.path.join(corpus, f)
        li, lm = llvm(p)
        gi, gm = gyre(binary, p)
        # Calls to declarations (library functions, intrinsics) are not Gyre's business.
        lm = {pair for pair in lm if pair in gm or pair in gi}
        if li or lm or gi or gm:
            with_calls += 1
        if lm == gm:
            agree += 1
        else:
            print(f"{f}: differs")
            for c, e in sorted(lm - gm):
                print(f"  LLVM keeps a call, Gyre inlines all: {c} -> {e}")
            for c, e in sorted(gm - lm):
                print(f"  Gyre keeps a call, LLVM inlines all: {c} -> {e}")
        if verbose:
            print(f"{f}: LLVM {len(li)} inlined / {len(lm)} kept pairs, "
                  f"Gyre {len(gi)} / {len(gm)}")
    print(f"agreement: {agree}/{len(files)} files ({with_calls} with calls)")


if __name__ == "__main__":
    main()
