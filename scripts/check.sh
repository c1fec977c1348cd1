#!/bin/bash
# SPDX-License-Identifier: MIT
# The test command: apply the series, build and run the KUnit suites in
# QEMU, run the static checks, the per-commit build check, build the
# selftests (which must skip without an amdgpu device), the reference tool
# and its unit test, and the documentation. Prints every check's result and
# a closing "N passed, N failed, N skipped" line; exits non-zero on any
# failure. A check that did not run says SKIP and why; a SKIP that
# scripts/allowed-skips does not name fails the run, and so does a KUnit
# skip that scripts/kunit-allowed-skips does not name.
# As root it first installs what is missing (scripts/deps.sh); otherwise
# each stage names the Debian packages it lacks in its FAIL line.
. "$(dirname "$0")/common.sh"

passed=0
failed=0
skipped=0
failures=()
# The SKIP lines a run may have, one glob per line (after "SKIP ").
allowed_skip() { # allowed_skip <text after "SKIP ">
	local pat
	while read -r pat; do
		case $pat in ''|\#*) continue ;; esac
		# shellcheck disable=SC2053 # $pat is a glob
		[[ $1 == $pat ]] && return 0
	done < "$TOP/scripts/allowed-skips"
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
			failures+=("FAIL unexpected skip (not in scripts/allowed-skips): ${l#SKIP }")
		fi
	done < <(grep '^SKIP ' "$1" || true)
}
# A stage whose script is missing or not executable is a failure, not a
# stage that vanishes from the summary.
runnable() { # runnable <name> <script>
	[ -x "$2" ] && return 0
	echo "FAIL $1: $2 is missing or not executable"
	failed=$((failed + 1))
	failures+=("FAIL $1: $2 is missing or not executable")
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
mkdir -p "$BUILD"
# Should apt fail (no network), go on: each stage names what it lacks.
"$TOP/scripts/deps.sh" check || log "the package step failed; the stages below name what is missing"

stage "series applies" "$TOP/scripts/series.sh"
stage "format-patch" "$TOP/scripts/format-patch.sh"

log "kunit (amdgpu suites in QEMU with KASAN and lockdep)"
set +e
"$TOP/scripts/kunit.sh" | tee "$BUILD/stage.log"
krc=${PIPESTATUS[0]}
set -e
kwhy=$(grep -c '^FAIL ' "$BUILD/stage.log" || true)
# No result line (kunit-result.py crashed, say) is a failure, not an exit
if [ -f "$BUILD/kunit.result" ] && read -r kp kf ks < "$BUILD/kunit.result" &&
   [ -n "$ks" ]; then
	:
else
	kp=0 kf=1 ks=0
fi
# A build or boot failure leaves no results: count it as a failure.
if [ "$krc" != 0 ] && [ "$kf" = 0 ]; then kf=1; fi
passed=$((passed + kp))
failed=$((failed + kf))
while read -r l; do failures+=("$l"); done < <(grep '^FAIL ' "$BUILD/stage.log" || true)
if [ "$kwhy" = 0 ] && [ "$kf" != 0 ]; then
	failures+=("FAIL kunit: $kf failed (see $BUILD/kunit.log, $BUILD/kunit.raw)")
fi
skipped=$((skipped + ks))

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
# The checks of the pipeline itself: kunit-result.py against made-up logs.
runnable "pipeline self-test" "$TOP/scripts/selftest.sh" &&
	counted "pipeline self-test" "$BUILD/selftest.log" "$TOP/scripts/selftest.sh"
runnable "static checks" "$TOP/scripts/static.sh" &&
	counted "static checks" "$BUILD/static.log" "$TOP/scripts/static.sh"
# The quick half of the mutation check; make mutate runs the mutants.
counted "mutants" "$BUILD/mutants.log" python3 "$TOP/scripts/mutants-check.py" "$TOP" "$KTREE"
# The drain core's operator mutants, all of them, against its native tests
runnable "native mutants" "$TOP/scripts/mutate-native.sh" &&
	counted "native mutants" "$BUILD/mutate-native.log" env MUTANTS_QUIET=1 "$TOP/scripts/mutate-native.sh"
runnable "per-commit build" "$TOP/scripts/percommit.sh" &&
	counted "per-commit build" "$BUILD/percommit-result.log" "$TOP/scripts/percommit.sh"
runnable "selftests, reference tool, IGT test" "$TOP/scripts/userspace.sh" &&
	counted "selftests, reference tool, IGT test" "$BUILD/userspace.log" "$TOP/scripts/userspace.sh"
runnable documentation "$TOP/scripts/docs.sh" &&
	counted documentation "$BUILD/docs.log" "$TOP/scripts/docs.sh"

if [ ${#failures[@]} -gt 0 ]; then
	echo "Failures:"
	printf '  %s\n' "${failures[@]}"
fi
sender_warning
echo "kunit test cases: $kp pass, $kf fail, $ks skip"
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" = 0 ]
