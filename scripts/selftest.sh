#!/bin/bash
# SPDX-License-Identifier: MIT
# The pipeline's own test: scripts/kunit-result.py, which turns the test
# kernel's log into make check's KUnit count, must count exactly what the
# log says, and fail a run whose log says that something did not run to
# the end, whatever passed before it. Made-up logs in
# scripts/selftest/kunit/ (two suites, alpha with a case and a case of two
# parameters, beta with one case; tests/two_suites.c registers both),
# each with the counts ("passed failed skipped") and the line it must give.
. "$(dirname "$0")/common.sh"
dir=$TOP/scripts/selftest/kunit
fail=0

verdict() { # verdict <log> <filter> <allowed skips> <want "p f s"> <text> <what>
	local log=$1 filter=$2 skips=$3 want=$4 text=$5 what=$6 out got
	out=$(python3 "$TOP/scripts/kunit-result.py" "$dir/$log" --tests "$dir/${TESTS:-tests}" \
		--filter "$filter" --allowed-skips "$skips" ${SLOW_FILTERED:+--very-slow-filtered} 2>&1)
	got=$(echo "$out" | tail -n 1)
	if [ -z "$text" ]; then
		[ "$got" = "$want" ] && ! echo "$out" | grep -q '^FAIL'
	else
		[ "$got" = "$want" ] && echo "$out" | grep -qF -- "FAIL kunit: $text"
	fi
	result $? "kunit-result.py: $what (counted $got, want $want)"
}

verdict complete.log '' /dev/null '4 0 0' '' "a complete log: each case and each parameter counts once"
verdict caller.log '' /dev/null '4 0 0' '' "printk time and caller prefixes are read through"
verdict fail.log '' /dev/null '2 2 0' '' "a failed case and a failed parameter count as failures"
verdict noplan.log '' /dev/null '0 3 0' 'no KTAP plan in the log' \
	"a log without results fails the run"
verdict cut.log '' /dev/null '3 3 0' 'the log ends after 1 of 2 suites' \
	"a guest that stopped inside a suite fails the run"
verdict cut.log '' /dev/null '3 3 0' 'suite beta did not finish' \
	"the suite it stopped in is named"
verdict missing-suite.log '' /dev/null '3 1 0' 'suite beta reported nothing' \
	"a registered suite that reported nothing fails the run, though the plan was met"
verdict missing-suite.log 'alpha' /dev/null '3 0 0' '' \
	"a suite the filter leaves out is not expected"
verdict initfail.log '' /dev/null '3 3 0' 'suite beta failed with no failed case' \
	"a suite that failed as a whole (its init) fails the run"
verdict short-plan.log '' /dev/null '4 1 0' 'suite beta planned 2 cases and reported 1' \
	"a suite whose cases fall short of its plan fails the run"
verdict timeout.log '' /dev/null '1 5 0' "QEMU hit kunit.py's timeout" \
	"QEMU's timeout fails the run and is named"
verdict hung.log '' /dev/null '4 1 0' 'splat: INFO: task kworker/0:1:42 blocked for more than' \
	"a hung-task report fails the run"
verdict executor-wait.log '' /dev/null '4 0 0' '' \
	"the KUnit executor (PID 1) waiting for a case longer than 20 s is not a hung task"
verdict leak.log '' /dev/null '4 2 0' 'splat: # kmemleak_no_leaks_in_the_run: unreferenced object 0x' \
	"an object the kmemleak suite found leaked fails the run"
verdict leak.log '' /dev/null '4 2 0' 'splat: kmemleak: 1 object(s) leaked during the tests' \
	"... and the count is named"
verdict boot-leak.log '' /dev/null '4 0 0' '' \
	"objects lost before the tests began (kmemleak's own summary line) are not the tests' failure"
verdict leak-order.log '' /dev/null '5 1 0' 'suite amdgpu_kunit_kmemleak ran before beta' \
	"a kmemleak scan that did not run last fails the run"
verdict deadline.log '' /dev/null '3 4 0' 'no result for 60 s (the per-case deadline): a case of suite beta stopped making progress after the suite began' \
	"the per-case deadline fails the run and names the suite"
TESTS=tests-slow verdict complete.log '' /dev/null '4 1 0' 'suite gamma reported nothing' \
	"a very slow suite is expected when the run did not filter on speed"
TESTS=tests-slow SLOW_FILTERED=1 verdict complete.log '' /dev/null '4 0 0' '' \
	"... and not when it filtered on speed>very_slow"
verdict skip.log '' /dev/null '3 1 0' 'unexpected skip: alpha.alpha_param/one' \
	"a skip that no file allows fails the run, and is not counted as skipped"
verdict skip.log '' "$dir/allowed-skips" '3 0 1' '' "a skip the file allows is counted as skipped"

# The same pipeline on the real test kernel (KUNIT_EXEC=1: the one make
# check's KUnit stage built and ran): amdgpu_kunit_selftest's cases go
# wrong on purpose, one per boot (amdgpu.kunit_selftest=<case>), and each
# run must fail with the lines that name the cause. The deadline is short
# where a case is known to stop; the deadlock's boot waits long enough for
# the hung-task detector (CONFIG_DEFAULT_HUNG_TASK_TIMEOUT=20: a report 20
# to 40 s after the case blocks).
real() { # real <case> <deadline> <what> <text>...
	local c=$1 dl=$2 what=$3 out rc t ok=0 missing=
	shift 3
	set +e
	out=$(KUNIT_EXEC=1 KUNIT_VERY_SLOW=1 KUNIT_DEADLINE=$dl \
		KUNIT_LOGS="$BUILD/selftest-$c" "$TOP/scripts/kunit.sh" \
		--kernel_args=amdgpu.kunit_selftest="$c" 'amdgpu_kunit_*' 2>&1)
	rc=$?
	set -e
	[ "$rc" != 0 ] || ok=1
	for t; do
		echo "$out" | grep '^FAIL kunit: ' | grep -qF -- "$t" || { ok=1; missing="$missing; no \"$t\""; }
	done
	result $ok "test kernel, amdgpu.kunit_selftest=$c: $what (exit $rc$missing; see $BUILD/selftest-$c.raw)"
}
if [ -f "$KTREE/.kunit/.config" ]; then
	real deadlock 120 "a case that deadlocks fails the run, named by lockdep, the hung-task detector and the deadline" \
		"splat: WARNING: possible recursive locking detected" \
		"splat: INFO: task kunit_try_catch" \
		"no result for 120 s (the per-case deadline): a case of suite amdgpu_kunit_selftest"
	real leak 120 "a case that leaks fails the run, named by the kmemleak suite" \
		"splat: # kmemleak_no_leaks_in_the_run: unreferenced object 0x" \
		"object(s) leaked during the tests"
	real never_returns 30 "a case that never returns fails the run at the deadline, naming the case before it" \
		"no result for 30 s (the per-case deadline): a case of suite amdgpu_kunit_selftest stopped making progress after case selftest_leak"
	real put_under_cb_lock 120 "a put under a lock that a free callback takes fails the run with lockdep's report, though the put did not wait" \
		"splat: WARNING: possible circular locking dependency detected"
else
	result 1 "test kernel self-test: no test kernel in $KTREE/.kunit (the KUnit stage builds it)"
fi
exit $fail
