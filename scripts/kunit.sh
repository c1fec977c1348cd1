#!/bin/bash
# SPDX-License-Identifier: MIT
# Build the KUnit test kernel from the applied series and run our suites in
# QEMU (x86_64; amdgpu depends on !UML). Extra arguments go to kunit.py run,
# e.g. a suite filter glob: scripts/kunit.sh 'amdgpu_spm*'.
# Writes $BUILD/kunit.raw, kunit.log and kunit.result ("passed failed
# skipped"; KUNIT_LOGS=<prefix> writes <prefix>.raw, ... instead),
# and prints a "FAIL kunit: ..." line for each expected result that is not
# there (a suite that reported nothing, a short plan, a cut log, QEMU's
# timeout), each splat and each skip scripts/kunit-allowed-skips does not
# allow (scripts/kunit-result.py).
. "$(dirname "$0")/common.sh"

# KUNIT_EXEC=1 boots the kernel built before (kunit.py exec) instead of
# building it first (kunit.py run).
logs=${KUNIT_LOGS:-$BUILD/kunit}
mode=run opts=("${KUNIT_OPTS[@]}")
if [ "${KUNIT_EXEC:-0}" = 1 ]; then
	mode=exec
	# exec takes no build options
	opts=(); for o in "${KUNIT_OPTS[@]}"; do
		case $o in --jobs=*|--make_options|CC=*) ;; *) opts+=("$o") ;; esac
	done
fi
rm -f "$logs.result"
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
# Suites marked KUNIT_SPEED_VERY_SLOW (the benchmark, the pipeline's
# self-test cases) run only when asked for: KUNIT_VERY_SLOW=1.
slow=(--filter 'speed>very_slow')
slow_filtered=--very-slow-filtered
if [ "${KUNIT_VERY_SLOW:-0}" = 1 ]; then slow=(); slow_filtered=; fi
# A case that stops making progress ends the run after KUNIT_DEADLINE
# seconds without a result (scripts/kunit-watch.py), long before kunit.py's
# timeout; a working case never comes near it (the log's last line says
# how long the longest wait was).
set +e
locked python3 "$TOP/scripts/kunit-watch.py" --deadline "${KUNIT_DEADLINE:-240}" \
	--log "$logs.raw" -- \
	python3 tools/testing/kunit/kunit.py $mode "${opts[@]}" \
	--qemu_args="$qemu_args" --timeout="${KUNIT_TIMEOUT:-1800}" \
	--kernel_args=hugepages=4 "${slow[@]}" \
	--raw_output=all "$@" > /dev/null 2>&1
rc=$?
set -e
# Show the parsed results (and keep the raw log for lockdep/KASAN splats).
python3 tools/testing/kunit/kunit.py parse < "$logs.raw" | tee "$logs.log" || true
filter=
for a; do case $a in -*) ;; *) filter=$a; break ;; esac; done
python3 "$TOP/scripts/kunit-result.py" "$logs.raw" \
	--tests "$KTREE/drivers/gpu/drm/amd/amdgpu/tests" --filter "$filter" \
	--allowed-skips "$TOP/scripts/kunit-allowed-skips" $slow_filtered \
	> "$logs.result" 2> "$logs.problems"
cat "$logs.problems"
read -r p f s < "$logs.result"
log "kunit: $p passed, $f failed, $s skipped (kunit.py exit $rc)"
[ "$rc" = 0 ] && [ "$f" = 0 ] && [ "$p" -gt 0 ]
