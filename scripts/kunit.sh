#!/bin/bash
# SPDX-License-Identifier: MIT
# Build the KUnit test kernel from the applied series and run our suites in
# QEMU (x86_64; amdgpu depends on !UML). Extra arguments go to kunit.py run,
# e.g. a suite filter glob: scripts/kunit.sh 'amdgpu_spm*'.
# KUNIT_CONFIG=<name> chooses the configuration (common.sh: default, or
# nopc, the peer suites without PREEMPT_COUNT), each with its own
# kunitconfig, build directory and logs.
# Writes $BUILD/kunit.raw, kunit.log and kunit.result ("passed failed
# skipped"; kunit-nopc.* for nopc; KUNIT_LOGS=<prefix> writes <prefix>.raw,
# ... instead), and prints a "FAIL <label>: ..." line (label "kunit" or
# "kunit (no PREEMPT_COUNT)") for each expected result that is not there
# (a suite that reported nothing or ran unasked, a short plan, a cut log,
# QEMU's timeout, the per-case deadline), each splat, each skip
# scripts/kunit-allowed-skips does not allow (scripts/kunit-result.py),
# and a kernel that is not the configuration it names (its .config, and
# what it printed at boot).
. "$(dirname "$0")/common.sh"

# KUNIT_EXEC=1 boots the kernel built before (kunit.py exec) instead of
# building it first (kunit.py run).
kunit_config "${KUNIT_CONFIG:-default}"
logs=${KUNIT_LOGS:-$KCONF_LOGS}
mode=run opts=("${KUNIT_OPTS[@]}")
if [ "${KUNIT_EXEC:-0}" = 1 ]; then
	mode=exec
	# exec takes no build options
	opts=(); for o in "${KUNIT_OPTS[@]}"; do
		case $o in --jobs=*|--make_options|CC=*) ;; *) opts+=("$o") ;; esac
	done
fi
rm -f "$logs.result"
require "$KCONF_LABEL" "${PKGS_KERNEL[@]}" "${PKGS_KUNIT[@]}" || exit 1
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
# The suite filter: the first argument that is not an option, else the
# configuration's own glob (none: every suite).
filter=
for a; do case $a in -*) ;; *) filter=$a; break ;; esac; done
globarg=()
if [ -z "$filter" ] && [ -n "$KCONF_GLOB" ]; then
	filter=$KCONF_GLOB
	globarg=("$KCONF_GLOB")
fi
log "$KCONF_LABEL: $KCONF_FILE in $KCONF_DIR${filter:+, suites $filter}"
# A case that stops making progress ends the run after KUNIT_DEADLINE
# seconds without a result (scripts/kunit-watch.py), long before kunit.py's
# timeout, and so does a kernel that prints no KTAP line within
# KUNIT_BOOT_DEADLINE seconds of its start; a working case never comes
# near either (the log's last line says how long the longest wait was).
set +e
locked python3 "$TOP/scripts/kunit-watch.py" --deadline "${KUNIT_DEADLINE:-240}" \
	--boot-deadline "${KUNIT_BOOT_DEADLINE:-300}" \
	--log "$logs.raw" -- \
	python3 tools/testing/kunit/kunit.py $mode "${opts[@]}" \
	--qemu_args="$qemu_args" --timeout="${KUNIT_TIMEOUT:-1800}" \
	--kernel_args=hugepages=4 --kernel_args=hung_task_warnings=-1 "${slow[@]}" \
	--raw_output=all "$@" "${globarg[@]}" > /dev/null 2>&1
rc=$?
set -e
# Show the parsed results (and keep the raw log for lockdep/KASAN splats).
python3 tools/testing/kunit/kunit.py parse < "$logs.raw" | tee "$logs.log" || true
python3 "$TOP/scripts/kunit-result.py" "$logs.raw" --label "$KCONF_LABEL" \
	--tests "$KTREE/drivers/gpu/drm/amd/amdgpu/tests" --filter "$filter" \
	--suites "${KCONF_SUITES[@]}" \
	--allowed-skips "$TOP/scripts/kunit-allowed-skips" $slow_filtered \
	> "$logs.result" 2> "$logs.problems"
# The kernel that ran must be the configuration the label names: an
# option that kunit.py's own check lets through (one selected by another,
# a kunitconfig edited) fails the run.
read -r p f s < "$logs.result"
conf=$KTREE/$KCONF_DIR/.config
if [ ! -f "$conf" ]; then
	echo "FAIL $KCONF_LABEL: no $KCONF_DIR/.config: the test kernel was not configured" >> "$logs.problems"
	f=$((f + 1))
else
	for o in "${KCONF_OFF[@]}"; do
		if grep -q "^CONFIG_$o=y" "$conf"; then
			echo "FAIL $KCONF_LABEL: CONFIG_$o=y in $KCONF_DIR/.config: not the kernel this configuration names" >> "$logs.problems"
			f=$((f + 1))
		fi
	done
fi
# ... and by what the kernel printed at boot (when it booted at all)
if grep -q 'KTAP version' "$logs.raw"; then
	for l in "${KCONF_BOOT_HAS[@]}"; do
		grep -qF -- "$l" "$logs.raw" && continue
		echo "FAIL $KCONF_LABEL: the test kernel did not print \"$l\" at boot: not the kernel this configuration names" >> "$logs.problems"
		f=$((f + 1))
	done
	for l in "${KCONF_BOOT_NOT[@]}"; do
		grep -qF -- "$l" "$logs.raw" || continue
		echo "FAIL $KCONF_LABEL: the test kernel printed \"$l\" at boot: not the kernel this configuration names" >> "$logs.problems"
		f=$((f + 1))
	done
fi
echo "$p $f $s" > "$logs.result"
cat "$logs.problems"
log "$KCONF_LABEL: $p passed, $f failed, $s skipped (kunit.py exit $rc)"
[ "$rc" = 0 ] && [ "$f" = 0 ] && [ "$p" -gt 0 ]
