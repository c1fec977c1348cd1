#!/bin/bash
# SPDX-License-Identifier: MIT
# Run the benchmark cases of our KUnit suites (every case whose name
# contains "bench") in the test kernel and print what they measured. The
# numbers are ratios and counts measured in the same run; no case asserts
# on time.
. "$(dirname "$0")/common.sh"
# The benchmark suite is marked very slow, so make check's run leaves it out
# (KUNIT_VERY_SLOW=1 takes it in); amdgpu.spm_kunit_bench=1 lets its timed
# case run.
KUNIT_VERY_SLOW=1 "$TOP/scripts/kunit.sh" --kernel_args=amdgpu.spm_kunit_bench=1 '*.*bench*' \
	> /dev/null 2>&1 || true
echo "Benchmarks (from $BUILD/kunit.raw):"
grep -E '^\s*# [a-z_]*bench[a-z_0-9]*: ' "$BUILD/kunit.raw" | sed 's/^\s*# /  /'
grep -E '^\s*(not )?ok [0-9]+ [a-z_]*bench' "$BUILD/kunit.raw" | sed 's/^\s*/  /'
# The drain core natively (-O2, no sanitizer): no emulator between it and
# the numbers.
# Installed again every time: the series may have changed the uAPI.
hdr=$BUILD/uapi
make -s -C "$KTREE" O="$hdr" ARCH=x86_64 headers_install INSTALL_HDR_PATH="$hdr/usr" > /dev/null
make -s -C "$KTREE/tools/testing/amdgpu_spm" UAPI_INCLUDE="$hdr/usr/include" bench |
	sed 's/^/  /'
