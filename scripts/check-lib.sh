# SPDX-License-Identifier: MIT
# shellcheck shell=bash
# make check's accounting, sourced by scripts/check.sh (and by
# scripts/selftest.sh, which drives it with made-up stages): how a stage's
# output becomes PASS / FAIL / SKIP counts, what an unexpected SKIP, a
# missing stage script or a KUnit configuration without a result does to
# the run, and the closing lines. Needs common.sh sourced first.

passed=0
failed=0
skipped=0
failures=()
# The result line of each KUnit configuration that ran, for the summary
KUNIT_LINES=()
# The SKIP lines a run may have, one glob per line (after "SKIP ").
ALLOWED_SKIPS=${ALLOWED_SKIPS:-$TOP/scripts/allowed-skips}
# The KUnit stage's script (the self-test puts a made-up one here)
KUNIT_SH=${KUNIT_SH:-$TOP/scripts/kunit.sh}

fail_line() { # fail_line <text>: one more failure, with the line that says why
	echo "FAIL $1"
	failed=$((failed + 1))
	failures+=("FAIL $1")
}
allowed_skip() { # allowed_skip <text after "SKIP ">
	local pat
	while read -r pat; do
		case $pat in ''|\#*) continue ;; esac
		# shellcheck disable=SC2053 # $pat is a glob
		[[ $1 == $pat ]] && return 0
	done < "$ALLOWED_SKIPS"
	return 1
}
count() { # count <log> : add the PASS/FAIL/SKIP lines of a stage's output
	local p f l
	p=$(grep -c '^PASS ' "$1" || true)
	f=$(grep -c '^FAIL ' "$1" || true)
	passed=$((passed + p))
	failed=$((failed + f))
	while read -r l; do failures+=("$l"); done < <(grep '^FAIL ' "$1" || true)
	while read -r l; do
		if allowed_skip "${l#SKIP }"; then
			skipped=$((skipped + 1))
		else
			echo "FAIL unexpected skip: ${l#SKIP }"
			failed=$((failed + 1))
			failures+=("FAIL unexpected skip (not in ${ALLOWED_SKIPS#"$TOP/"}): ${l#SKIP }")
		fi
	done < <(grep '^SKIP ' "$1" || true)
}
# A stage whose script is missing or not executable is a failure, not a
# stage that vanishes from the summary.
runnable() { # runnable <name> <script>
	[ -f "$2" ] && [ -x "$2" ] && return 0
	fail_line "$1: $2 is missing or not executable"
	return 1
}
stage() { # stage <name> <command...> : a stage that passes or fails as one
	local name=$1 rc why; shift
	log "$name"
	set +e
	"$@" | tee "$BUILD/stage.log"
	rc=${PIPESTATUS[0]}
	set -e
	# A FAIL line of its own (a missing package) says why.
	why=$(sed -n 's/^FAIL //p' "$BUILD/stage.log" | head -n 1)
	if [ "$rc" = 0 ]; then echo "PASS $name"; passed=$((passed + 1));
	else echo "FAIL $name"; failed=$((failed + 1)); failures+=("FAIL $name${why:+ ($why)}"); fi
}
counted() { # counted <name> <log> <command...> : a stage of many checks
	local name=$1 out=$2 rc; shift 2
	log "$name"
	set +e
	"$@" > "$out" 2>&1
	rc=$?
	set -e
	# A stage that stopped without saying which check failed still fails.
	if [ "$rc" != 0 ] && ! grep -q '^FAIL ' "$out"; then
		echo "FAIL $name (exit $rc: $(grep -v '^==' "$out" | tail -n 1))" >> "$out"
	fi
	case $name in documentation) tail -5 "$out" ;; *) cat "$out" ;; esac
	count "$out"
}
# kunit_stage <configuration>: build and run one KUnit configuration
# (common.sh's kunit_config) with $KUNIT_SH, count its cases, and print
# its result line "<label>: N passed, N failed, N skipped". A run that
# left no result (the build or the boot failed, kunit-result.py crashed)
# or exited non-zero with no failure counted is a failure named with its
# configuration: a configuration that did not run is never green.
kunit_stage() {
	local conf=$1 krc kwhy kp kf ks l
	kunit_config "$conf"
	log "$KCONF_LABEL ($KCONF_FILE)"
	runnable "$KCONF_LABEL" "$KUNIT_SH" || return 0
	# A result of an earlier run must not count for this one
	rm -f "$KCONF_LOGS.result"
	set +e
	# (its own logs, whatever KUNIT_LOGS the caller has)
	KUNIT_CONFIG=$conf KUNIT_LOGS='' "$KUNIT_SH" | tee "$BUILD/stage.log"
	krc=${PIPESTATUS[0]}
	set -e
	kwhy=$(grep -c '^FAIL ' "$BUILD/stage.log" || true)
	if [ -f "$KCONF_LOGS.result" ] && read -r kp kf ks < "$KCONF_LOGS.result" &&
	   [[ "$kp $kf $ks" =~ ^[0-9]+\ [0-9]+\ [0-9]+$ ]]; then
		:
	else
		kp=0 kf=1 ks=0
		echo "FAIL $KCONF_LABEL: no result in $KCONF_LOGS.result (exit $krc)" |
			tee -a "$BUILD/stage.log"
		kwhy=1
	fi
	# A build or boot failure leaves no failed case: count it as one.
	if [ "$krc" != 0 ] && [ "$kf" = 0 ]; then
		kf=1
		echo "FAIL $KCONF_LABEL: exit $krc with no failure counted" | tee -a "$BUILD/stage.log"
		kwhy=1
	fi
	passed=$((passed + kp))
	failed=$((failed + kf))
	skipped=$((skipped + ks))
	while read -r l; do failures+=("$l"); done < <(grep '^FAIL ' "$BUILD/stage.log" || true)
	if [ "$kwhy" = 0 ] && [ "$kf" != 0 ]; then
		failures+=("FAIL $KCONF_LABEL: $kf failed (see $KCONF_LOGS.log, $KCONF_LOGS.raw)")
	fi
	# ... and which cases (kunit-result.py names each failed one)
	while read -r l; do failures+=("  ${l#failed case: }"); done < \
		<(grep '^failed case: ' "$BUILD/stage.log" || true)
	KUNIT_LINES+=("$KCONF_LABEL: $kp passed, $kf failed, $ks skipped")
	echo "${KUNIT_LINES[-1]}"
}
# finish: the failures, each configuration's KUnit line, the closing
# "N passed, N failed, N skipped"; the status is the run's.
finish() {
	if [ ${#failures[@]} -gt 0 ]; then
		echo "Failures:"
		printf '  %s\n' "${failures[@]}"
	fi
	sender_warning
	[ ${#KUNIT_LINES[@]} = 0 ] || printf '%s\n' "${KUNIT_LINES[@]}"
	echo "$passed passed, $failed failed, $skipped skipped"
	[ "$failed" = 0 ]
}
