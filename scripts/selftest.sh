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
	out=$(python3 "$TOP/scripts/kunit-result.py" "$dir/$log" --tests "$dir/tests" \
		--filter "$filter" --allowed-skips "$skips" 2>&1)
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
verdict leak.log '' /dev/null '4 1 0' 'splat: kmemleak: 3 new suspected memory leaks' \
	"a kmemleak report fails the run"
verdict skip.log '' /dev/null '3 1 0' 'unexpected skip: alpha.alpha_param/one' \
	"a skip that no file allows fails the run, and is not counted as skipped"
verdict skip.log '' "$dir/allowed-skips" '3 0 1' '' "a skip the file allows is counted as skipped"
exit $fail
