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
#
# With MUTANTS_SAMPLE=N (make mutate MUTANTS_SAMPLE=N), it runs instead N
# operator mutants of the series' own kernel files (scripts/mutants-op.py:
# negated conditions, shifted boundaries, error returns made 0, deleted
# unlocks, puts, frees and register writes, changed constants), sampled
# with a fixed seed (MUTANTS_SEED) across amdgpu_spm.c, amdgpu_spm_drain.c,
# amdgpu_spm_buf.c, amdgpu_profiler.c, amdgpu_peer_reg.c and amdgpu_rdma.c,
# each against the KUnit suites of its file (mutants-op.py suites; or
# MUTANTS_SUITES='<globs>' for all). A mutant that does not build is
# stillborn, counted apart; one that survives must be listed, with why, in
# scripts/mutants-equivalent. Prints a line per mutant and, per file,
# "mutants <file>: N generated, N killed (N by timeout), N stillborn,
# N equivalent (listed), N survived" with a PASS/FAIL line (goal:
# MUTANTS_GOAL percent killed, default 80). MUTANTS_DRY_RUN=1 generates
# and checks that each mutant applies (git apply --check), builds nothing.
# A mutant scripts/mutants-equivalent lists is not run (MUTANTS_ALL=1 runs
# it). name-glob then selects mutant IDs (e.g. 'amdgpu_rdma.c:*').
. "$(dirname "$0")/common.sh"

"$TOP/scripts/series.sh"
cd "$KTREE"
git diff --quiet HEAD || die "$KTREE has local changes"

mkdir -p "$BUILD/mutate"
pat=${1:-*}
n=0 killed=0 survived=0 broken=0
started=$(date +%s)

# run_kunit <name> <glob>...: the mutant applied, build and run each glob
# in turn; sets verdict (killed, SURVIVED, BROKEN: does not build or runs
# no case; killed_by: timeout or the glob that failed)
run_kunit() {
	local name=$1 g rc p f s
	shift
	verdict=SURVIVED
	killed_by=
	: > "$BUILD/mutate/$name.log"
	for g in "$@"; do
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
			if [ "$rc" = 124 ]; then killed_by=timeout; else killed_by=$g; fi
			break
		fi
		if [ "${p:-0}" = 0 ]; then
			# A glob that matches no case would pass any mutant.
			verdict=BROKEN
			break
		fi
	done
}

if [ -n "${MUTANTS_SAMPLE:-}" ]; then
	gen=$TOP/scripts/mutants-op.py
	op=$BUILD/mutate/op
	rm -rf "$op"
	mkdir -p "$op"
	results=$op/results.tsv
	: > "$results"
	seed=()
	[ -z "${MUTANTS_SEED:-}" ] || seed=(--seed "$MUTANTS_SEED")
	python3 "$gen" list --tree "$KTREE" --sample "$MUTANTS_SAMPLE" "${seed[@]}" \
		--equivalent "$TOP/scripts/mutants-equivalent" > "$op/list"
	log "$(wc -l < "$op/list") operator mutants sampled (mutants-op.py, seed ${MUTANTS_SEED:-default})"
	notapply=0
	while IFS=$'\t' read -r id orig mutated listed; do
		# shellcheck disable=SC2053 # $pat is a glob
		[[ $id == $pat ]] || continue
		n=$((n + 1))
		safe=${id//:/_}
		python3 "$gen" patch --tree "$KTREE" "$id" > "$op/$safe.patch"
		if [ -n "${MUTANTS_SUITES:-}" ]; then
			read -r -a globs <<< "$MUTANTS_SUITES"
		else
			read -r -a globs < <(python3 "$gen" suites "$id")
		fi
		if ! git apply --check "$op/$safe.patch" 2> "$op/$safe.apply"; then
			echo "mutant $id: does not apply (see $op/$safe.apply)"
			notapply=$((notapply + 1))
			continue
		fi
		if [ -n "$listed" ] && [ -z "${MUTANTS_ALL:-}" ]; then
			echo "mutant $id: applies; listed as equivalent, not run"
			printf '%s\tlisted\t%s\t%s\t\n' "$id" "$orig" "$mutated" >> "$results"
			continue
		fi
		if [ -n "${MUTANTS_DRY_RUN:-}" ]; then
			echo "mutant $id: applies; would run ${globs[*]}: $orig  =>  $mutated"
			continue
		fi
		git apply "$op/$safe.patch"
		log "mutant $id: ${globs[*]}"
		run_kunit "op-$safe" "${globs[@]}"
		git apply -R "$op/$safe.patch"
		case $verdict in
		killed)
			if [ "$killed_by" = timeout ]; then v=timeout; else v=killed; fi
			echo "mutant $id: killed ($killed_by)" ;;
		SURVIVED) v=survived; echo "mutant $id: survived: $mutated" ;;
		BROKEN)
			if grep -q 'KTAP version\|TAP version' "$BUILD/mutate/op-$safe.raw"; then
				echo "mutant $id: a suite glob runs no case (${globs[*]}; see $BUILD/mutate/op-$safe.log)"
				notapply=$((notapply + 1))
				continue
			fi
			v=stillborn
			echo "mutant $id: stillborn (does not build; see $BUILD/mutate/op-$safe.log)" ;;
		esac
		printf '%s\t%s\t%s\t%s\t%s\n' "$id" "$v" "$orig" "$mutated" "$killed_by" >> "$results"
	done < "$op/list"
	git diff --quiet HEAD || die "a mutant was not reverted in $KTREE"
	[ "$n" -gt 0 ] || die "no operator mutant matches $pat"
	if [ -n "${MUTANTS_DRY_RUN:-}" ]; then
		echo "$n operator mutants generated, $((n - notapply)) apply (dry run: nothing built) ($(( $(date +%s) - started )) s)"
		[ "$notapply" = 0 ]
		exit
	fi
	set +e
	python3 "$gen" report --equivalent "$TOP/scripts/mutants-equivalent" \
		--goal "${MUTANTS_GOAL:-80}" --glob "$pat" "$results"
	rc=$?
	set -e
	echo "$n operator mutants, $(grep -c $'\tkilled\t\|\ttimeout\t' "$results" || true) killed, $notapply broken ($(( $(date +%s) - started )) s)"
	[ "$rc" = 0 ] && [ "$notapply" = 0 ]
	exit
fi

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
	run_kunit "$name" "${globs[@]}"
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
