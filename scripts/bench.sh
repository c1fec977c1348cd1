#!/bin/bash
# SPDX-License-Identifier: MIT
# Run the benchmark cases of our KUnit suites (every case whose name
# contains "bench") in the test kernel and print what they measured. The
# numbers are ratios and counts measured in the same run; no case asserts
# on time.
. "$(dirname "$0")/common.sh"
"$TOP/scripts/kunit.sh" '*.*bench*' > /dev/null 2>&1 || true
echo "Benchmarks (from $BUILD/kunit.raw):"
grep -E '^\s*# [a-z_]*bench[a-z_0-9]*: ' "$BUILD/kunit.raw" | sed 's/^\s*# /  /'
grep -E '^\s*(not )?ok [0-9]+ [a-z_]*bench' "$BUILD/kunit.raw" | sed 's/^\s*/  /'
