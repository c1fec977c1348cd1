#!/bin/bash
# SPDX-License-Identifier: MIT
# The mutation check: does any test notice when a piece of the series'
# wiring into amdgpu is removed? Each scripts/mutants/*.patch removes (or
# disables) one call site the series adds to an upstream file. For each, in
# turn: apply it to the applied series in $BUILD/linux, rebuild the test
# kernel incrementally, run the KUnit suites its "Suites:" line names, and
# revert it. A mutant is killed when a case fails, the kernel splats or
# crashes, or the run times out; it SURVIVED when everything passes.
#
# Prints "mutant <name>: killed" or "mutant <name>: SURVIVED" per mutant,
# then "N mutants, N killed, N survived"; exits non-zero if any survived,
# or if a mutant no longer applies or builds (it must then be refreshed).
#
# Mutant format: free text first (a "Suites:" line with one or more
# space-separated kunit.py filter globs, and a "Why:" line saying what the
# removed line is for), then a diff against the applied series
# (git apply ignores the text before the first "diff --git").
# Usage: scripts/mutate.sh [name-glob]
. "$(dirname "$0")/common.sh"

"$TOP/scripts/series.sh"
cd "$KTREE"
git diff --quiet HEAD || die "$KTREE has local changes"

mkdir -p "$BUILD/mutate"
pat=${1:-*}
n=0 killed=0 survived=0 broken=0
started=$(date +%s)
for m in "$TOP"/scripts/mutants/$pat.patch; do
	[ -e "$m" ] || die "no mutant matches $pat"
	name=$(basename "$m" .patch)
	read -r -a globs < <(sed -n 's/^Suites:[[:space:]]*//p' "$m" | head -n 1)
	n=$((n + 1))
	if [ ${#globs[@]} = 0 ]; then
		echo "mutant $name: no Suites: line"
		broken=$((broken + 1))
		continue
	fi
	if ! git apply --check "$m" 2> "$BUILD/mutate/$name.apply"; then
		echo "mutant $name: does not apply (refresh it against the series)"
		broken=$((broken + 1))
		continue
	fi
	git apply "$m"
	log "mutant $name: ${globs[*]}"
	verdict=SURVIVED
	: > "$BUILD/mutate/$name.log"
	for g in "${globs[@]}"; do
		set +e
		locked timeout "${MUTANT_TIMEOUT:-900}" python3 tools/testing/kunit/kunit.py run \
			"${KUNIT_OPTS[@]}" --qemu_args="-smp 2 -m 2048" \
			--kernel_args=hugepages=4 --timeout="${MUTANT_TIMEOUT:-900}" \
			--raw_output=all "$g" > "$BUILD/mutate/$name.raw" 2>&1
		rc=$?
		set -e
		cat "$BUILD/mutate/$name.raw" >> "$BUILD/mutate/$name.log"
		if grep -q 'ERROR:root:\|make: \*\*\*\|error: ' "$BUILD/mutate/$name.raw" &&
		   ! grep -q 'KTAP version\|TAP version' "$BUILD/mutate/$name.raw"; then
			verdict=BROKEN
			break
		fi
		# The same accounting as make check's, its reasons in the log
		read -r p f s < <(python3 "$TOP/scripts/kunit-result.py" "$BUILD/mutate/$name.raw" \
			--tests "$KTREE/drivers/gpu/drm/amd/amdgpu/tests" --filter "$g" \
			--allowed-skips "$TOP/scripts/kunit-allowed-skips" 2>> "$BUILD/mutate/$name.log")
		if [ "$rc" = 124 ] || [ "${f:-0}" != 0 ]; then
			verdict=killed
			break
		fi
		if [ "${p:-0}" = 0 ]; then
			# A glob that matches no case would pass any mutant.
			verdict=BROKEN
			break
		fi
	done
	git apply -R "$m"
	case $verdict in
	killed) killed=$((killed + 1)); echo "mutant $name: killed" ;;
	SURVIVED) survived=$((survived + 1)); echo "mutant $name: SURVIVED" ;;
	BROKEN) broken=$((broken + 1))
		echo "mutant $name: does not build or runs no case (see $BUILD/mutate/$name.log)" ;;
	esac
done
git diff --quiet HEAD || die "a mutant was not reverted in $KTREE"
echo "$n mutants, $killed killed, $survived survived ($(( $(date +%s) - started )) s)"
[ "$survived" = 0 ] && [ "$broken" = 0 ]
