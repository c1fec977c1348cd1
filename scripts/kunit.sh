#!/bin/bash
# SPDX-License-Identifier: MIT
# Build the KUnit test kernel from the applied series and run our suites in
# QEMU (x86_64; amdgpu depends on !UML). Extra arguments go to kunit.py run,
# e.g. a suite filter glob: scripts/kunit.sh 'amdgpu_spm*'.
# Writes $BUILD/kunit.log and $BUILD/kunit.result ("passed failed skipped"),
# and prints a "FAIL kunit: ..." line for each expected result that is not
# there (a suite that reported nothing, a short plan, a cut log, QEMU's
# timeout), each splat and each skip scripts/kunit-allowed-skips does not
# allow (scripts/kunit-result.py).
. "$(dirname "$0")/common.sh"

rm -f "$BUILD/kunit.result"
require kunit "${PKGS_KERNEL[@]}" "${PKGS_KUNIT[@]}" || exit 1
cd "$KTREE"
# hugepages=4: the SPM suite pins a hugetlb destination buffer.
qemu_args="-smp 2 -m 2048"
# KVM on request (KUNIT_KVM=1; a nested KVM here hung at boot) when it works (a QEMU that is still running
# after two seconds started fine); TCG otherwise: slower, same results.
if [ -w /dev/kvm ] && [ "${KUNIT_KVM:-0}" = 1 ]; then
	set +e
	timeout 2 qemu-system-x86_64 -enable-kvm -M q35 -display none -S \
		-monitor none -serial none > /dev/null 2>&1
	[ $? = 124 ] && qemu_args="$qemu_args -enable-kvm"
	set -e
fi
set +e
locked python3 tools/testing/kunit/kunit.py run "${KUNIT_OPTS[@]}" \
	--qemu_args="$qemu_args" --timeout="${KUNIT_TIMEOUT:-1800}" \
	--kernel_args=hugepages=4 \
	--raw_output=all "$@" > "$BUILD/kunit.raw" 2>&1
rc=$?
set -e
# Show the parsed results (and keep the raw log for lockdep/KASAN splats).
python3 tools/testing/kunit/kunit.py parse < "$BUILD/kunit.raw" | tee "$BUILD/kunit.log" || true
filter=
for a; do case $a in -*) ;; *) filter=$a; break ;; esac; done
python3 "$TOP/scripts/kunit-result.py" "$BUILD/kunit.raw" \
	--tests "$KTREE/drivers/gpu/drm/amd/amdgpu/tests" --filter "$filter" \
	--allowed-skips "$TOP/scripts/kunit-allowed-skips" \
	> "$BUILD/kunit.result" 2> "$BUILD/kunit.problems"
cat "$BUILD/kunit.problems"
read -r p f s < "$BUILD/kunit.result"
log "kunit: $p passed, $f failed, $s skipped (kunit.py exit $rc)"
[ "$rc" = 0 ] && [ "$f" = 0 ] && [ "$p" -gt 0 ]
