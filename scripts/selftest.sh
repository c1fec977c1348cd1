#!/bin/bash
# SPDX-License-Identifier: MIT
# The pipeline's own test: scripts/kunit-result.py, which turns the test
# kernel's log into make check's KUnit count, must fail a run whose log
# says that something did not run to the end, whatever passed before it.
# Made-up logs in scripts/selftest/kunit/ (two suites, alpha and beta,
# registered by tests/two_suites.c), each with the line that must say why.
. "$(dirname "$0")/common.sh"
dir=$TOP/scripts/selftest/kunit
fail=0

verdict() { # verdict <log> <filter> <allowed skips> <want: pass|fail> <text> <what>
	local log=$1 filter=$2 skips=$3 want=$4 text=$5 what=$6 out p f s
	out=$(python3 "$TOP/scripts/kunit-result.py" "$dir/$log" --tests "$dir/tests" \
		--filter "$filter" --allowed-skips "$skips" 2>&1)
	read -r p f s < <(echo "$out" | tail -n 1)
	if [ "$want" = pass ]; then
		[ "$f" = 0 ] && [ "$p" -gt 0 ] && ! echo "$out" | grep -q '^FAIL'
	else
		[ "$f" -gt 0 ] && echo "$out" | grep -qF -- "$text"
	fi
	result $? "kunit-result.py: $what ($p passed, $f failed, $s skipped)"
}

verdict complete.log '' /dev/null pass '' "a complete log passes"
verdict cut.log '' /dev/null fail 'the log ends after 1 of 2 suites' \
	"a guest that stopped inside a suite fails the run"
verdict cut.log '' /dev/null fail 'suite beta did not finish' \
	"the suite it stopped in is named"
verdict missing-suite.log '' /dev/null fail 'suite beta reported nothing' \
	"a registered suite that reported nothing fails the run, though the plan was met"
verdict missing-suite.log 'alpha' /dev/null pass '' \
	"a suite the filter leaves out is not expected"
verdict short-plan.log '' /dev/null fail 'suite beta planned 2 cases and reported 1' \
	"a suite whose cases fall short of its plan fails the run"
verdict timeout.log '' /dev/null fail "QEMU hit kunit.py's timeout" \
	"QEMU's timeout fails the run and is named"
verdict hung.log '' /dev/null fail 'blocked for more than' \
	"a hung-task report fails the run"
verdict leak.log '' /dev/null fail 'new suspected memory leaks' \
	"a kmemleak report fails the run"
verdict skip.log '' /dev/null fail 'unexpected skip: alpha.alpha_param/one' \
	"a skip that no file allows fails the run"
verdict skip.log '' "$dir/allowed-skips" pass '' "a skip the file allows passes"
exit $fail
