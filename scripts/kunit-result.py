#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Count KUnit results in a raw kernel log: leaf test cases (and each
parameter of a parameterised case) that passed, failed and were skipped.
A kernel splat (lockdep, KASAN, BUG, WARNING, sleeping in atomic context)
anywhere in the log counts as one more failure."""
import re
import sys

SPLAT = re.compile(r"(BUG: |WARNING: |KASAN|possible circular locking|"
                   r"possible recursive locking|inconsistent lock state|"
                   r"sleeping function called from invalid context|"
                   r"Kernel panic|general protection fault|"
                   r"ODEBUG: |list_(add|del) corruption)")
RESULT = re.compile(r"^\s*(not ok|ok) \d+ (.*?)(\s+#\s*(SKIP|skip).*)?$")


def main(path):
    passed = failed = skipped = splats = 0
    lines = open(path, errors="replace").read().splitlines()
    # Children's results come right before their parent's, indented
    # deeper: a result is a leaf unless the result before it is deeper.
    prev_indent = -1
    for raw in lines:
        line = re.sub(r"^\[[^\]]*\] ?", "", raw)
        if SPLAT.search(line):
            splats += 1
            print("splat: " + line.strip(), file=sys.stderr)
        m = RESULT.match(line)
        if not m:
            continue
        indent = len(line) - len(line.lstrip())
        leaf = prev_indent <= indent
        prev_indent = indent
        if not leaf:
            continue
        if m.group(4):
            skipped += 1
        elif m.group(1) == "ok":
            passed += 1
        else:
            failed += 1
    print(passed, failed + splats, skipped)


if __name__ == "__main__":
    main(sys.argv[1])
