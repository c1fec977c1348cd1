#!/bin/bash
# SPDX-License-Identifier: MIT
# The mutation check: does any test notice when a piece of the series'
# wiring into amdgpu is removed? Each scripts/mutants/*.patch removes (or
# disables) one call site the series adds to an upstream file. For each, in
# turn: apply it to the applied series in $BUILD/linux, rebuild the test
# kernel incrementally, run the KUnit suites its "Suites:" line names, and
# revert it. A mutant is killed when a case fails, the kernel splats or
# crashes, or the run stops making progress; it SURVIVED when everything
# passes.
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
# amdgpu_spm_vmid.c, amdgpu_spm_buf.c, amdgpu_profiler.c,
# amdgpu_peer_reg.c and amdgpu_rdma.c (MUTANTS_SAMPLE=all: every one).
# Each runs in one boot the KUnit suites of its file (mutants-op.py suites)
# and the leak check amdgpu_kunit_kmemleak after them, so that a deleted
# free or put is killed by the leak it leaves (mutants-op.py boot-glob;
# or MUTANTS_SUITES='<glob>', one kunit.py filter glob).
# A mutant that does not build is stillborn, counted apart; one that
# survives is listed in the output, and is either killed by a new case or
# listed, with why no test can tell it apart, in scripts/mutants-equivalent.
# Prints a line per mutant, per file "mutants <file>: N generated, N killed
# (N by timeout or deadline), N stillborn, N equivalent (listed), N survived"
# and its score, then the score of the whole sample with its survivors and one
# PASS/FAIL line: the run passes when MUTANTS_GOAL percent (default 80) of
# the sample's mutants that are neither stillborn nor equivalent are
# killed (a file with two mutants in the sample does not fail it on one
# survivor), and when the entries of scripts/mutants-equivalent for these
# files still name their line and none in the sample is killed.
# MUTANTS_DRY_RUN=1 generates and checks that each mutant applies (git
# apply --check) and names the boot's glob, builds nothing. A mutant
# scripts/mutants-equivalent lists is not run, unless MUTANTS_ALL=1: then
# it runs, and an entry that a test now kills fails the run. name-glob
# selects mutant IDs before sampling (e.g. 'amdgpu_rdma.c:*', one ID to
# run that mutant alone, or IDs joined by commas to run those).
#
# Before the sampled mutants, each of their boots runs on the unmutated
# tree, which must pass (else every mutant would count as killed);
# MUTANTS_BASELINE=0 skips that.
# A sample is run as mutation schemata (MUTANTS_SCHEMATA=0: one build per
# mutant instead): mutants-op.py schema writes every mutant into the files
# at once, each behind "(amdgpu_mutant == K)", a module parameter
# (amdgpu.mutant=K) added to amdgpu_drv.c in the build tree only; the
# kernel is built once, the unmutated boots above run it with
# amdgpu.mutant=0, and each mutant is then one boot, MUTANTS_JOBS (2) at a
# time, stopped at its first failing case (kunit-watch.py
# --stop-at-failure). A mutant that does not compile there (a constant
# expression), named by the line of the compiler's error, and one whose
# span crosses another's, is built and run alone after the others.
# make check's "mutation schemata" line checks that each mutant in a
# schema reads, chosen, as the mutant itself (mutants-op.py schema-check).
# Both modes stop a run that stops making progress: when no KUnit result
# has come for MUTANT_DEADLINE seconds (default 120, scripts/kunit-watch.py;
# the longest wait in the unmutated boots, two at a time, was 23 s)
# the mutant is killed "by deadline", minutes after it hung; the build and
# boot together have MUTANT_TIMEOUT seconds (default 1800).
. "$(dirname "$0")/common.sh"

"$TOP/scripts/series.sh"
cd "$KTREE"
git diff --quiet HEAD || die "$KTREE has local changes"

mkdir -p "$BUILD/mutate"
pat=${1:-*}
n=0 killed=0 survived=0 broken=0
started=$(date +%s)
deadline=${MUTANT_DEADLINE:-120}
limit=${MUTANT_TIMEOUT:-1800}
tests=$KTREE/drivers/gpu/drm/amd/amdgpu/tests

# run_kunit <name> <glob>...: the mutant applied, build and run each glob
# in turn, each in one boot under the per-case deadline; sets verdict
# (killed, SURVIVED, BROKEN: does not build or runs no case) and
# killed_by (deadline, timeout or the glob that failed)
run_kunit() {
	local name=$1 g rc p f raw=$BUILD/mutate/$1.raw
	local -a cmd=(run "${KUNIT_OPTS[@]}") wrap=(locked) extra=()
	shift
	verdict=SURVIVED
	killed_by=
	# In a schema run (see below): boot the kernel built once, with the
	# mutant's number, beside the other jobs (the build lock is held by
	# the run itself)
	if [ -n "${SCHEMA_K:-}" ]; then
		cmd=(exec --arch=x86_64 --kunitconfig="$KCONF_FILE" --build_dir="$KCONF_DIR"
			--kernel_args="amdgpu.mutant=$SCHEMA_K")
		wrap=()
	fi
	[ -z "${MUTANTS_SAMPLE:-}" ] || extra=(--stop-at-failure)
	: > "$BUILD/mutate/$name.log"
	for g in "$@"; do
		set +e
		# (9>&-: a boot does not hold a schema run's build lock)
		"${wrap[@]}" timeout --foreground "$limit" python3 "$TOP/scripts/kunit-watch.py" 9>&- \
			--deadline "$deadline" "${extra[@]}" --log "$raw" -- \
			python3 tools/testing/kunit/kunit.py "${cmd[@]}" \
			--qemu_args="-smp 2 -m 2048" \
			--kernel_args=hugepages=4 --timeout="$limit" \
			--filter 'speed>very_slow' --raw_output=all "$g" > /dev/null 2>&1
		rc=$?
		set -e
		cat "$raw" >> "$BUILD/mutate/$name.log"
		if grep -q 'ERROR:root:\|make: \*\*\*\|error: ' "$raw" &&
		   ! grep -q 'KTAP version\|TAP version' "$raw"; then
			verdict=BROKEN
			break
		fi
		# The same accounting as make check's, its reasons in the log
		read -r p f _ < <(python3 "$TOP/scripts/kunit-result.py" "$raw" \
			--tests "$tests" --filter "$g" --very-slow-filtered \
			--allowed-skips "$TOP/scripts/kunit-allowed-skips" 2>> "$BUILD/mutate/$name.log")
		if grep -q '^kunit-watch: no KUnit result' "$raw"; then
			verdict=killed killed_by=deadline
			break
		fi
		if grep -q '^kunit-watch: no KTAP output' "$raw"; then
			verdict=killed killed_by=boot-deadline
			break
		fi
		if [ "$rc" = 124 ] || [ "${f:-0}" != 0 ]; then
			verdict=killed
			# what stopped it (kunit-watch.py --stop-at-failure), or the glob
			killed_by=$(sed -n 's/^kunit-watch: stopped at the first failure: *not ok [0-9]* /case /p
				s/^kunit-watch: stopped at the first kernel report: /report: /p' "$raw" | head -n 1)
			if [ "$rc" = 124 ]; then killed_by=timeout; else killed_by=${killed_by:-$g}; fi
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
	seed=() sample=()
	[ -z "${MUTANTS_SEED:-}" ] || seed=(--seed "$MUTANTS_SEED")
	[ "$MUTANTS_SAMPLE" = all ] || sample=(--sample "$MUTANTS_SAMPLE")
	# Every mutant of the files (to check the equivalents' entries), then
	# those the glob selects, sampled
	python3 "$gen" list --tree "$KTREE" > "$op/universe"
	python3 "$gen" list --tree "$KTREE" --select "$pat" "${sample[@]}" "${seed[@]}" \
		--equivalent "$TOP/scripts/mutants-equivalent" > "$op/list"
	log "$(wc -l < "$op/list") operator mutants (mutants-op.py, ${pat:+IDs $pat, }sample ${MUTANTS_SAMPLE}, seed ${MUTANTS_SEED:-default})"
	notapply=0
	# Each mutant's boot glob (one per file), and the globs of the sample
	declare -A globof=()
	globs=()
	while IFS=$'\t' read -r id _; do
		if [ -n "${MUTANTS_SUITES:-}" ]; then
			g=$MUTANTS_SUITES
		elif ! g=$(python3 "$gen" boot-glob --tests "$tests" --very-slow-filtered \
				"$id" 2> "$op/${id//:/_}.glob"); then
			continue
		fi
		globof[$id]=$g
		[[ " ${globs[*]} " == *" $g "* ]] || globs+=("$g")
	done < "$op/list"
	# A tree that fails unmutated would "kill" every mutant: run each glob
	# on it first (MUTANTS_BASELINE=0 skips this)
	# (a schema kernel's boots run beside each other, as its mutants do)
	baseline() {
		local g i=0 v
		[ "${MUTANTS_BASELINE:-1}" != 0 ] || return 0
		for g in "${globs[@]}"; do
			i=$((i + 1))
			log "unmutated ${1:-tree}: $g"
			if [ -n "${SCHEMA_K:-}" ]; then
				while [ "$(jobs -rp | wc -l)" -ge "${MUTANTS_JOBS:-2}" ]; do wait -n || true; done
				( run_kunit "baseline-$i" "$g"; echo "$verdict|$killed_by" > "$op/baseline-$i.verdict" ) &
			else
				run_kunit "baseline-$i" "$g"
				echo "$verdict|$killed_by" > "$op/baseline-$i.verdict"
			fi
		done
		wait
		i=0
		for g in "${globs[@]}"; do
			i=$((i + 1))
			IFS='|' read -r verdict killed_by < "$op/baseline-$i.verdict" || verdict=BROKEN
			if [ "$verdict" != SURVIVED ]; then
				echo "FAIL mutants: the unmutated ${1:-tree} does not pass $g (${killed_by:-$verdict}; see $BUILD/mutate/baseline-$i.log): no mutant can be judged"
				exit 1
			fi
			echo "unmutated ${1:-tree}: $g passes"
		done
	}
	# record <id> <orig> <mutated> <glob> <took>: print a run mutant's
	# verdict ($verdict, $killed_by) and add it to the results
	record() {
		local v raw=$BUILD/mutate/op-${1//:/_}.raw
		case $verdict in
		killed)
			case $killed_by in deadline|boot-deadline|timeout) v=timeout ;; *) v=killed ;; esac
			echo "mutant $1: killed ($killed_by, $5)" ;;
		SURVIVED) v=survived; echo "mutant $1: survived ($5): $3" ;;
		BROKEN)
			if grep -q 'KTAP version\|TAP version' "$raw"; then
				echo "mutant $1: the glob runs no case ($4; see ${raw%.raw}.log)"
				notapply=$((notapply + 1))
				return
			fi
			v=stillborn
			echo "mutant $1: stillborn (does not build; see ${raw%.raw}.log)" ;;
		esac
		printf '%s\t%s\t%s\t%s\t%s\n' "$1" "$v" "$2" "$3" "$killed_by" >> "$results"
	}
	# Which mutants to run: those that apply, have a boot glob and are not
	# listed as equivalent
	: > "$op/torun"
	while IFS=$'\t' read -r id orig mutated listed; do
		n=$((n + 1))
		safe=${id//:/_}
		python3 "$gen" patch --tree "$KTREE" "$id" > "$op/$safe.patch"
		if [ -z "${globof[$id]:-}" ]; then
			echo "mutant $id: no boot glob ($(cat "$op/$safe.glob"))"
			notapply=$((notapply + 1))
			continue
		fi
		glob=${globof[$id]}
		if ! git apply --check "$op/$safe.patch" 2> "$op/$safe.apply"; then
			echo "mutant $id: does not apply (see $op/$safe.apply)"
			notapply=$((notapply + 1))
			continue
		fi
		if [ -n "$listed" ] && [ -z "${MUTANTS_ALL:-}" ]; then
			echo "mutant $id: applies; listed as equivalent, not run (MUTANTS_ALL=1 runs it)"
			printf '%s\tlisted\t%s\t%s\t\n' "$id" "$orig" "$mutated" >> "$results"
			continue
		fi
		if [ -n "${MUTANTS_DRY_RUN:-}" ]; then
			echo "mutant $id: applies; would run $glob: $orig  =>  $mutated"
			continue
		fi
		printf '%s\t%s\t%s\n' "$id" "$orig" "$mutated" >> "$op/torun"
	done < "$op/list"
	# Mutation schemata (MUTANTS_SCHEMATA=0: one build per mutant): every
	# mutant to run is compiled into one kernel by mutants-op.py schema,
	# behind "amdgpu_mutant == K", K its line in $op/torun; the kernel is
	# built once, with amdgpu.mutant=0 it must pass every glob (the
	# baseline, and the check that the schema changes nothing unselected),
	# then each mutant is one boot with amdgpu.mutant=K, MUTANTS_JOBS
	# (default 2) boots at a time. A mutant that does not compile in the
	# schema (a constant expression) is named by the compiler's error
	# line, left out, and built on its own after the others, as is one
	# whose span crosses another's.
	: > "$op/alone"
	if [ -z "${MUTANTS_DRY_RUN:-}" ] && [ -s "$op/torun" ] && [ "${MUTANTS_SCHEMATA:-1}" != 0 ]; then
		exec 9> "$LOCK"
		flock 9
		restore() { git -C "$KTREE" checkout -q -- drivers/gpu/drm/amd/amdgpu; }
		trap restore EXIT
		# Stopped from outside: the tree back, the boots in flight stopped
		# (kunit-watch.py stops its QEMU on SIGTERM)
		stop_boots() {
			local j
			for j in $(jobs -p); do
				pkill -TERM -P "$j" || true	# its timeout, which signals kunit-watch.py
				kill "$j" || true
			done 2> /dev/null
		}
		trap 'stop_boots; restore; exit 143' TERM HUP INT
		: > "$op/schema.excluded"
		for try in 1 2 3 4 5 6 7 8; do
			# from the applied series, not the schema of the try before
			restore
			rm -rf "$op/schema"
			python3 "$gen" schema --tree "$KTREE" --out "$op/schema" \
				--exclude "$op/schema.excluded" "$op/torun" > "$op/schema.map"
			cp -r "$op/schema/." "$KTREE/"
			log "mutation schemata: $(grep -c $'\tin\t' "$op/schema.map") mutants in one kernel (build $try)"
			set +e
			python3 tools/testing/kunit/kunit.py build "${KUNIT_OPTS[@]}" \
				--make_options=-k > "$op/schema.build" 2>&1
			rc=$?
			set -e
			[ "$rc" != 0 ] || break
			# The mutants whose span holds a line an error names
			new=$(python3 - "$op/schema.build" "$op/schema.map" <<-'PY'
			import re, sys
			bad = set()
			for l in open(sys.argv[1]):
			    # the error's line, or where the macro whose expansion
			    # failed (FIELD_PREP() in a header) was used
			    m = re.search(r'(drivers/gpu/drm/amd/amdgpu/[\w.]+\.c):(\d+):\d+: '
			                  r'(error:|note: in expansion of macro|required from here)', l)
			    if m:
			        bad.add((m.group(1), int(m.group(2))))
			for l in open(sys.argv[2]):
			    f = l.rstrip('\n').split('\t')
			    if f[2] == 'in' and any(p == f[3] and int(f[4]) <= n <= int(f[5])
			                            for p, n in bad):
			        print(f[1])
			PY
			)
			if [ -z "$new" ]; then
				restore
				die "the mutation schemata do not build, and no error names a mutant's line (see $op/schema.build)"
			fi
			echo "$new" >> "$op/schema.excluded"
			log "left out of the schema (does not compile there): $(echo $new)"
		done
		[ "$rc" = 0 ] || { restore; die "the mutation schemata still do not build (see $op/schema.build)"; }
		SCHEMA_K=0 baseline "kernel (schemata, amdgpu.mutant=0)"
		jobs_max=${MUTANTS_JOBS:-2}
		while IFS=$'\t' read -r k id state _; do
			if [ "$state" != in ]; then
				awk -F'\t' -v id="$id" '$1 == id' "$op/torun" >> "$op/alone"
				continue
			fi
			while [ "$(jobs -rp | wc -l)" -ge "$jobs_max" ]; do wait -n || true; done
			(
				safe=${id//:/_}
				t0=$(date +%s)
				# a boot that ends the subshell early is BROKEN, not lost
				trap 'echo "BROKEN|no verdict|0 s" > "$op/$safe.verdict"' EXIT
				SCHEMA_K=$k run_kunit "op-$safe" "${globof[$id]}"
				trap - EXIT
				printf '%s|%s|%s s\n' "$verdict" "$killed_by" "$(( $(date +%s) - t0 ))" > "$op/$safe.verdict"
				echo "mutant $id: $verdict${killed_by:+ ($killed_by)} (amdgpu.mutant=$k)" >&2
			) &
		done < "$op/schema.map"
		wait
		while IFS=$'\t' read -r id orig mutated; do
			safe=${id//:/_}
			if [ ! -e "$op/$safe.verdict" ]; then
				# left out of the schema: judged below, on its own
				if awk -F'\t' -v id="$id" '$2 == id && $3 == "in"' "$op/schema.map" | grep -q .; then
					echo "mutant $id: its boot left no verdict (see $BUILD/mutate/op-$safe.log)"
					notapply=$((notapply + 1))
				fi
				continue
			fi
			IFS='|' read -r verdict killed_by took < "$op/$safe.verdict"
			record "$id" "$orig" "$mutated" "${globof[$id]}" "$took, in the schema"
		done < "$op/torun"
		restore
		trap - EXIT TERM HUP INT
		flock -u 9
	elif [ -z "${MUTANTS_DRY_RUN:-}" ]; then
		baseline
		cp "$op/torun" "$op/alone"
	fi
	while IFS=$'\t' read -r id orig mutated; do
		safe=${id//:/_}
		git apply "$op/$safe.patch"
		log "mutant $id: ${globof[$id]}"
		t0=$(date +%s)
		run_kunit "op-$safe" "${globof[$id]}"
		git apply -R "$op/$safe.patch"
		record "$id" "$orig" "$mutated" "${globof[$id]}" "$(( $(date +%s) - t0 )) s"
	done < "$op/alone"
	git diff --quiet HEAD || die "a mutant was not reverted in $KTREE"
	[ "$n" -gt 0 ] || die "no operator mutant matches $pat"
	if [ -n "${MUTANTS_DRY_RUN:-}" ]; then
		echo "$n operator mutants generated, $((n - notapply)) apply (dry run: nothing built) ($(( $(date +%s) - started )) s)"
		[ "$notapply" = 0 ]
		exit
	fi
	set +e
	python3 "$gen" report --equivalent "$TOP/scripts/mutants-equivalent" \
		--goal "${MUTANTS_GOAL:-80}" --universe "$op/universe" "$results"
	rc=$?
	set -e
	echo "$n operator mutants, $(grep -c $'\tkilled\t\|\ttimeout\t' "$results" || true) killed, $notapply broken ($(( $(date +%s) - started )) s; results in $results)"
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
	killed) killed=$((killed + 1)); echo "mutant $name: killed${killed_by:+ ($killed_by)}" ;;
	SURVIVED) survived=$((survived + 1)); echo "mutant $name: SURVIVED" ;;
	BROKEN) broken=$((broken + 1))
		echo "mutant $name: does not build or runs no case (see $BUILD/mutate/$name.log)" ;;
	esac
done
git diff --quiet HEAD || die "a mutant was not reverted in $KTREE"
echo "$n mutants, $killed killed, $survived survived ($(( $(date +%s) - started )) s)"
[ "$survived" = 0 ] && [ "$broken" = 0 ]
