#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Filter compiler/sparse/kernel-doc diagnostics down to the lines that the
series added. Reads `git diff -U0 base series` on argv[1] and diagnostics on
stdin; prints the diagnostics that point at an added line (paths may carry
a leading ../ from an O= build) and exits 1 if there is any."""
import re
import sys

added = {}
cur = None
for line in open(sys.argv[1], errors="replace"):
    if line.startswith("+++ "):
        cur = line[6:].strip() if line.startswith("+++ b/") else None
        if cur is not None:
            added.setdefault(cur, set())
    elif line.startswith("@@") and cur is not None:
        m = re.match(r"@@ -\S+ \+(\d+)(?:,(\d+))? @@", line)
        start, count = int(m.group(1)), int(m.group(2) or "1")
        added[cur].update(range(start, start + count))

DIAG = re.compile(r"^(?:\.\./)*([^:\s]+):(\d+):(?:\d+:)?\s*(warning|error|note)?")
bad = 0
for line in sys.stdin:
    m = DIAG.match(line)
    if not m:
        continue
    path, lineno = m.group(1), int(m.group(2))
    if lineno in added.get(path, ()):
        if "note" == m.group(3):
            continue
        bad += 1
        sys.stdout.write(line)
sys.exit(1 if bad else 0)
