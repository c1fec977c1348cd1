#!/bin/bash
# SPDX-License-Identifier: MIT
# The pipeline's own test: scripts/kunit-result.py, which turns the test
# kernel's log into make check's KUnit count, must count exactly what the
# log says, and fail a run whose log says that something did not run to
# the end, whatever passed before it. Made-up logs in
# scripts/selftest/kunit/ (two suites, alpha with a case and a case of two
# parameters, beta with one case; tests/two_suites.c registers both),
# each with the counts ("passed failed skipped") and the line it must give.
# Then make check's own accounting (scripts/check-lib.sh) with made-up
# stages, and the real test kernel with cases that go wrong on purpose.
. "$(dirname "$0")/common.sh"
dir=$TOP/scripts/selftest/kunit
fail=0

# SUITES='<globs>' passes --suites (the configuration's suites), LABEL
# --label (the FAIL lines' prefix).
verdict() { # verdict <log> <filter> <allowed skips> <want "p f s"> <text> <what>
	local log=$1 filter=$2 skips=$3 want=$4 text=$5 what=$6 out got suites=()
	[ -z "${SUITES:-}" ] || read -r -a suites <<< "--suites $SUITES"
	out=$(python3 "$TOP/scripts/kunit-result.py" "$dir/$log" --tests "$dir/${TESTS:-tests}" \
		--filter "$filter" --allowed-skips "$skips" ${SLOW_FILTERED:+--very-slow-filtered} \
		${LABEL:+--label "$LABEL"} "${suites[@]}" 2>&1)
	got=$(echo "$out" | tail -n 1)
	if [ -z "$text" ]; then
		[ "$got" = "$want" ] && ! echo "$out" | grep -q '^FAIL'
	else
		[ "$got" = "$want" ] && echo "$out" | grep -qF -- "FAIL ${LABEL:-kunit}: $text"
	fi
	result $? "kunit-result.py: $what (counted $got, want $want)"
}

verdict complete.log '' /dev/null '4 0 0' '' "a complete log: each case and each parameter counts once"
verdict caller.log '' /dev/null '4 0 0' '' "printk time and caller prefixes are read through"
verdict fail.log '' /dev/null '2 2 0' '' "a failed case and a failed parameter count as failures"
python3 "$TOP/scripts/kunit-result.py" "$dir/fail.log" --tests "$dir/tests" 2>&1 >/dev/null |
	grep -qxF 'failed case: kunit: alpha.alpha_first (EXPECTATION FAILED at drivers/x/alpha.c:12)'
result $? "kunit-result.py: a failed case is named with its first failed check"
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
verdict oops.log '' /dev/null '4 1 0' 'splat: Oops: general protection fault' \
	"an oops after the last result fails the run"
verdict hung-suppressed.log '' /dev/null '4 1 0' 'splat: Future hung task reports are suppressed' \
	"a hung-task report suppressed by the detector's budget fails the run"
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
verdict boot-deadline.log '' /dev/null '0 4 0' 'no KTAP output 300 s after the test kernel started (the boot deadline)' \
	"a kernel that hangs at boot fails the run at the boot deadline, named"
SUITES='alpha beta' verdict missing-suite.log '' /dev/null '3 1 0' 'suite beta reported nothing' \
	"a configuration's suite that reported nothing fails the run"
SUITES='alpha' verdict missing-suite.log '' /dev/null '3 0 0' '' \
	"... and one the configuration does not run is not expected"
SUITES='alpha' LABEL='kunit (no PREEMPT_COUNT)' verdict complete.log '' /dev/null '4 1 0' \
	'suite beta ran, but this configuration runs only alpha' \
	"a suite that ran although the configuration does not name it fails the run, under the configuration's label"

# make check's own accounting (scripts/check-lib.sh, which check.sh
# sources), driven by made-up stages in a scratch directory instead of the
# real ones: each way a stage can go wrong must fail the run with the
# line that says why, and a run where nothing went wrong must pass.
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
s=$scratch
mkdir -p "$s/build"
printf '#!/bin/sh\necho "PASS one"\necho "SKIP kselftest run: a reason nobody allowed"\n' > "$s/skip-unexpected"
printf '#!/bin/sh\necho "SKIP kselftest run: no amdgpu device here (made up)"\n' > "$s/skip-allowed"
printf '#!/bin/sh\necho "PASS one"\n' > "$s/not-executable"
printf '#!/bin/sh\necho "something went wrong"\nexit 3\n' > "$s/silent-failure"
echo 'kselftest run: no amdgpu device here*' > "$s/allowed-skips"
# A made-up scripts/kunit.sh: FAKE_<configuration> says what it does
cat > "$s/kunit.sh" <<'FAKE'
#!/bin/bash
case $KUNIT_CONFIG in default) logs=$BUILD/kunit ;; *) logs=$BUILD/kunit-$KUNIT_CONFIG ;; esac
v=FAKE_$KUNIT_CONFIG
case ${!v:-pass} in
pass) echo "5 0 0" > "$logs.result" ;;
noresult) echo "the kernel did not build"; exit 2 ;;
silent) ;;
exit) echo "5 0 0" > "$logs.result"; exit 1 ;;
garbage) echo "Traceback (most recent call last):" > "$logs.result"; exit 1 ;;
esac
FAKE
chmod +x "$s/skip-unexpected" "$s/skip-allowed" "$s/silent-failure" "$s/kunit.sh"
# acct <what> <want status> <want closing line> <commands> [<line>...]:
# run <commands> with check-lib.sh in a subshell, then its finish; the run
# must exit with <want status> (0 or 1), end with the closing line, and
# print each <line>.
acct() {
	local what=$1 wrc=$2 want=$3 body=$4 out rc t ok=0 missing=
	shift 4
	set +e
	# (its "==" progress lines on stderr are left out)
	out=$( { export BUILD=$s/build
		 ALLOWED_SKIPS=$s/allowed-skips KUNIT_SH=${KSH:-$s/kunit.sh}
		 . "$TOP/scripts/check-lib.sh"
		 eval "$body"
		 finish; } 2>/dev/null)
	rc=$?
	set -e
	[ "$rc" = "$wrc" ] && [ "$(echo "$out" | tail -n 1)" = "$want" ] || ok=1
	for t; do
		echo "$out" | grep -qxF -- "$t" || { ok=1; missing="$missing; no line \"$t\""; }
	done
	result $ok "check-lib.sh: $what (exit $rc, want $wrc: $(echo "$out" | tail -n 1)$missing)"
}
# scripts/kunit-watch.py itself, around made-up commands that stop making
# progress (one second of deadline each): it must stop them, exit 124 and
# write the line kunit-result.py reads.
watch() { # watch <what> <want line> <boot deadline> <shell command>
	local what=$1 want=$2 boot=$3 cmd=$4 rc t0 took
	t0=$(date +%s)
	set +e
	timeout 60 python3 "$TOP/scripts/kunit-watch.py" --deadline 1 --boot-deadline "$boot" \
		--log "$s/watch.log" -- bash -c "$cmd" > /dev/null 2>&1
	rc=$?
	set -e
	took=$(( $(date +%s) - t0 ))
	[ "$rc" = 124 ] && [ "$took" -lt 30 ] && grep -qxF -- "$want" "$s/watch.log"
	result $? "kunit-watch.py: $what (exit $rc after $took s)"
}
watch "a case that stops giving results is stopped at the deadline" \
	"kunit-watch: no KUnit result for 1 s (the per-case deadline): stopped" 300 \
	'echo "[00:00:00] Starting KUnit Kernel (1/1)..."; echo "KTAP version 1"; echo "    ok 1 first"; exec sleep 100'
watch "a kernel that never prints KTAP is stopped at the boot deadline" \
	"kunit-watch: no KTAP output 2 s after the test kernel started (the boot deadline): stopped" 2 \
	'echo "[00:00:00] Starting KUnit Kernel (1/1)..."; echo "Linux version"; exec sleep 100'

# make mutate's boots stop at their first failing case (--stop-at-failure):
# exit 1 at once, with the line that names it; a passing case or a skip
# does not stop them.
set +e
t0=$(date +%s)
timeout 60 python3 "$TOP/scripts/kunit-watch.py" --deadline 100 --stop-at-failure \
	--log "$s/watch.log" -- bash -c 'echo "KTAP version 1"; echo "    ok 1 first # SKIP no device";
	echo "    ok 2 second"; echo "    not ok 3 third"; echo "    ok 4 fourth"; exec sleep 100' \
	> /dev/null 2>&1
rc=$?
set -e
took=$(( $(date +%s) - t0 ))
[ "$rc" = 1 ] && [ "$took" -lt 30 ] &&
	grep -qxF 'kunit-watch: stopped at the first failure: not ok 3 third' "$s/watch.log" &&
	grep -qx '    ok 2 second' "$s/watch.log" && ! grep -q 'ok 4 fourth' "$s/watch.log"
result $? "kunit-watch.py: --stop-at-failure ends the run at the first failing case (exit $rc after $took s)"
# ... and at the first kernel report kunit-result.py fails a run on, a few
# seconds after it (a case whose thread hangs: the hung-task detector's
# report), but not at the report of KUnit's own executor waiting
set +e
t0=$(date +%s)
timeout 60 python3 "$TOP/scripts/kunit-watch.py" --deadline 100 --stop-at-failure \
	--log "$s/watch.log" -- bash -c 'echo "KTAP version 1"; echo "    ok 1 first";
	echo "[   41.0] INFO: task swapper/0:1 blocked for more than 20 seconds.";
	echo "[   42.0] INFO: task kunit_try_catch:97 blocked for more than 20 seconds.";
	echo "Call Trace:"; exec sleep 100' > /dev/null 2>&1
rc=$?
set -e
took=$(( $(date +%s) - t0 ))
[ "$rc" = 1 ] && [ "$took" -lt 30 ] && grep -qx 'Call Trace:' "$s/watch.log" &&
	grep -qxF 'kunit-watch: stopped at the first kernel report: INFO: task kunit_try_catch:97 blocked for more than 20 seconds.' "$s/watch.log"
result $? "kunit-watch.py: --stop-at-failure ends the run at the first kernel report, with its next lines (exit $rc after $took s)"

# An outer timeout (mutate.sh's) or ^C stops kunit-watch.py: what it runs
# (kunit.py and QEMU, in a session of their own) must not outlive it.
set +e
timeout 2 python3 "$TOP/scripts/kunit-watch.py" --deadline 100 --log "$s/watch.log" -- \
	bash -c "echo \$\$ > $s/watched; exec sleep 100" > /dev/null 2>&1
rc=$?
set -e
sleep 1
watched=$(cat "$s/watched" 2>/dev/null || echo none)
# (gone, or a zombie that only waits for init to reap it)
state=$(ps -o stat= -p "$watched" 2> /dev/null || true)
[ "$watched" != none ] && [ "${state:-Z}" != "${state#Z}" ] && [ "$rc" = 124 ] &&
	grep -qx 'kunit-watch: stopped by signal 15' "$s/watch.log"
result $? "kunit-watch.py: stopped from outside, it stops what it runs (exit $rc, pid $watched)"
all='for c in "${KUNIT_CONFIGS[@]}"; do kunit_stage "$c"; done'
acct "an unexpected SKIP line fails the run, named" 1 "1 passed, 1 failed, 0 skipped" \
	"counted userspace \$BUILD/u.log $s/skip-unexpected" \
	"FAIL unexpected skip: kselftest run: a reason nobody allowed"
acct "a SKIP line the file allows is counted as skipped" 0 "0 passed, 0 failed, 1 skipped" \
	"counted userspace \$BUILD/u.log $s/skip-allowed"
acct "a stage script that is missing fails the run, named" 1 "0 passed, 1 failed, 0 skipped" \
	"runnable documentation $s/missing && counted documentation \$BUILD/d.log $s/missing" \
	"FAIL documentation: $s/missing is missing or not executable"
acct "a stage script that is not executable fails the run, named" 1 "0 passed, 1 failed, 0 skipped" \
	"runnable documentation $s/not-executable && counted documentation \$BUILD/d.log $s/not-executable" \
	"FAIL documentation: $s/not-executable is missing or not executable"
acct "a stage that fails without a FAIL line fails the run with its last line" 1 \
	"0 passed, 1 failed, 0 skipped" "counted static \$BUILD/s.log $s/silent-failure" \
	"FAIL static (exit 3: something went wrong)"
acct "each KUnit configuration prints its own result line" 0 "10 passed, 0 failed, 0 skipped" \
	"$all" "kunit: 5 passed, 0 failed, 0 skipped" "kunit (no PREEMPT_COUNT): 5 passed, 0 failed, 0 skipped"
FAKE_nopc=noresult acct "a configuration whose kernel did not build or boot fails the run, named" 1 \
	"5 passed, 1 failed, 0 skipped" "$all" \
	"FAIL kunit (no PREEMPT_COUNT): no result in $s/build/kunit-nopc.result (exit 2)"
FAKE_nopc=silent acct "... and so does one that left no result, though an earlier run's is there" 1 \
	"5 passed, 1 failed, 0 skipped" "echo '9 0 0' > \$BUILD/kunit-nopc.result; $all" \
	"FAIL kunit (no PREEMPT_COUNT): no result in $s/build/kunit-nopc.result (exit 0)"
FAKE_default=exit acct "a configuration that failed with no failed case fails the run, named" 1 \
	"10 passed, 1 failed, 0 skipped" "$all" "FAIL kunit: exit 1 with no failure counted"
FAKE_nopc=garbage acct "a result that is not three counts fails the run" 1 \
	"5 passed, 1 failed, 0 skipped" "$all" \
	"FAIL kunit (no PREEMPT_COUNT): no result in $s/build/kunit-nopc.result (exit 1)"
KSH=$s/missing acct "a missing KUnit script fails each configuration, named" 1 \
	"0 passed, 2 failed, 0 skipped" "$all" \
	"FAIL kunit: $s/missing is missing or not executable" \
	"FAIL kunit (no PREEMPT_COUNT): $s/missing is missing or not executable"

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
		KUNIT_CONFIG=default KUNIT_LOGS="$BUILD/selftest-$c" "$TOP/scripts/kunit.sh" \
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
