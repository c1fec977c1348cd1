#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Count KUnit results in a raw kernel log, and check them against what
should have run.

    kunit-result.py RAW_LOG [--label LABEL] [--tests DIR] [--filter GLOB]
                    [--suites GLOB...] [--allowed-skips FILE]
                    [--very-slow-filtered]

Prints "passed failed skipped": the leaf test cases (each parameter of a
parameterised case is one) that passed, failed and were skipped. Each
problem below adds one failure and prints a line "FAIL LABEL: ..." on
stderr (LABEL names the configuration; default "kunit"):

- a kernel splat (lockdep, an unregistered lock key, KASAN, BUG, an
  oops, WARNING, sleeping in atomic context, a hung task (scripts/kunit.sh
  boots with hung_task_warnings=-1, so none is suppressed; the line that
  says later ones are is a failure too), a soft lockup, an RCU stall,
  UBSAN, an object
  that the amdgpu_kunit_kmemleak suite found leaked) anywhere in the log;
- the per-case deadline of scripts/kunit-watch.py (no result for too
  long): the suite and the last case that finished are named; and its
  boot deadline (no KTAP output that long after the kernel started), and
  a run it was told to stop (a signal);
- the amdgpu_kunit_kmemleak suite not being the last suite that ran, when
  it ran (the leaks of the suites after it would go unchecked);
- no top-level KTAP plan (the test kernel printed no results), or fewer
  suites finished than the plan announced (the log ends early: a hang,
  a reboot, a panic);
- a suite registered in DIR (the kunit_test_suite()s of its *.c files),
  matched by GLOB (kunit.py's filter, suite part) and by one of the
  --suites globs (the suites the configuration runs; default all), that
  reported nothing; with --very-slow-filtered (the run filtered on
  speed>very_slow) a suite marked KUNIT_SPEED_VERY_SLOW is not expected;
- a suite that ran although no --suites glob names it (the filter glob
  of the configuration matched more than it should);
- a suite whose cases do not add up to its plan, or that did not finish;
- kunit.py's QEMU timeout;
- a skipped case that FILE does not allow (one fnmatch pattern of
  "suite.case" or "suite.case/parameter" per line, then its reason after
  whitespace; "#" starts a comment).
"""
import argparse
import fnmatch
import glob
import os
import re
import sys

SPLAT = re.compile(r"(BUG: |WARNING: |KASAN|possible circular locking|"
                   r"possible recursive locking|inconsistent lock state|"
                   r"sleeping function called from invalid context|"
                   r"Kernel panic|general protection fault|"
                   r"ODEBUG: |list_(add|del) corruption|"
                   r"INFO: task .* blocked for more than|"
                   r"soft lockup - CPU#|rcu: INFO: rcu_.* self-detected stall|"
                   r"rcu_.* detected stalls|UBSAN: |kernel BUG at |Oops: |"
                   r"trying to register non-static key|"
                   r"Future hung task reports are suppressed|"
                   r"unreferenced object 0x|kmemleak: .* leaked during the tests)")
# The one hung-task report that is not a failure: built in, KUnit runs
# from PID 1 (still "swapper/0" before init), which waits uninterruptibly
# for each case (kunit_try_catch_run()), so any case longer than the
# detector's 20 s is reported there. A case's own thread is
# "kunit_try_catch"; kworkers and the rest stay failures.
EXECUTOR_WAIT = re.compile(r"INFO: task swapper/0:1 blocked for more than")
RESULT = re.compile(r"^(not ok|ok) \d+ (.*?)(\s+#\s*(SKIP|skip).*)?$")
# printk's time and caller prefixes, when the test kernel prints them
PREFIX = re.compile(r"^(?:\[\s*(?:[0-9]+\.[0-9]+|[TC][0-9]+)\])+ ?")
INIT_FAILED = re.compile(r"# failed to initialize")
PLAN = re.compile(r"^1\.\.(\d+)$")
SUBTEST = re.compile(r"^# Subtest: (.*)$")
TIMEOUT = re.compile(r"timed out after [0-9.]+ seconds")
DEADLINE = re.compile(r"^kunit-watch: no KUnit result for ([0-9]+) s")
BOOT_DEADLINE = re.compile(r"^kunit-watch: no KTAP output ([0-9]+) s after")
STOPPED = re.compile(r"^kunit-watch: stopped by signal ([0-9]+)")
LEAK_SUITE = "amdgpu_kunit_kmemleak"
# KUnit's report of a failed check, printed before the case's result
CHECK_FAILED = re.compile(r"# .*?((?:EXPECTATION|ASSERTION) FAILED at \S+)")
SUITE_DEF = re.compile(r"static struct kunit_suite (\w+) = \{(.*?)\n\};", re.S)
SUITE_REG = re.compile(r"kunit_test_suites?\(([^)]*)\)")


def registered_suites(test_dir, problems, very_slow_filtered=False):
    """The names of the suites the *.c files of test_dir register (less
    those marked KUNIT_SPEED_VERY_SLOW when the run filtered them out); a
    registered suite whose name cannot be read off its definition is a
    problem (it could drop out of the build unnoticed)."""
    names = set()
    for path in sorted(glob.glob(os.path.join(test_dir, "*.c"))):
        text = open(path, errors="replace").read()
        regs = set()
        for m in SUITE_REG.finditer(text):
            regs.update(re.findall(r"\w+", m.group(1)))
        found = {}
        for m in SUITE_DEF.finditer(text):
            name = re.search(r'\.name\s*=\s*"([^"]+)"\s*,', m.group(2))
            if name and very_slow_filtered and "KUNIT_SPEED_VERY_SLOW" in m.group(2):
                found[m.group(1)] = None
            elif name:
                found[m.group(1)] = name.group(1)
        for var in sorted(regs):
            if var in found:
                if found[var]:
                    names.add(found[var])
            else:
                problems.append("cannot tell the name of the suite %s registers in %s"
                                % (var, os.path.basename(path)))
    return names


def allowed_skips(path):
    pats = []
    if path:
        for line in open(path):
            line = line.split("#", 1)[0].strip()
            if line:
                pats.append(line.split()[0])
    return pats


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("log")
    ap.add_argument("--tests")
    ap.add_argument("--filter", default="")
    ap.add_argument("--suites", nargs="+", default=["*"])
    ap.add_argument("--label", default="kunit")
    ap.add_argument("--allowed-skips")
    ap.add_argument("--very-slow-filtered", action="store_true")
    args = ap.parse_args()

    passed = failed = skipped = 0
    problems = []
    leaf_failed = 0
    allowed = allowed_skips(args.allowed_skips)
    top_plan = None
    finished = 0
    suites = {}          # name -> [plan, cases reported, finished]
    order = []           # suites in the order they started
    last_case = None     # the last case of the current suite that finished
    suite = case = None  # the suite and the parameterised case being read
    prev_indent = -1
    failed_names = []    # each failed leaf, with its first failed check
    first_check = None   # the first failed check since the last result
    for raw in open(args.log, errors="replace").read().splitlines():
        line = PREFIX.sub("", raw, count=1)
        if SPLAT.search(line) and not EXECUTOR_WAIT.search(line):
            problems.append("splat: " + line.strip())
        if TIMEOUT.search(line):
            problems.append("QEMU hit kunit.py's timeout: " + line.strip())
        m = DEADLINE.match(line)
        if m:
            problems.append("no result for %s s (the per-case deadline): a case of suite %s "
                            "stopped making progress after %s"
                            % (m.group(1), suite or "(none started)",
                               "case " + last_case if last_case else "the suite began"))
        m = BOOT_DEADLINE.match(line)
        if m:
            problems.append("no KTAP output %s s after the test kernel started (the boot "
                            "deadline): it hung or looped before its first suite" % m.group(1))
        m = STOPPED.match(line)
        if m:
            problems.append("the run was stopped from outside (signal %s)" % m.group(1))
        if INIT_FAILED.search(line):
            problems.append("a suite's init failed: " + line.strip())
        text = line.strip()
        indent = len(line) - len(line.lstrip())
        m = SUBTEST.match(text)
        if m and indent == 4:
            suite, case, last_case = m.group(1), None, None
            suites[suite] = [None, 0, False]
            order.append(suite)
        elif m and indent == 8:
            case = m.group(1)
        m = PLAN.match(text)
        if m and indent == 0 and top_plan is None:
            top_plan = int(m.group(1))
        elif m and indent == 4 and suite:
            suites[suite][0] = int(m.group(1))
        m = CHECK_FAILED.search(text)
        if m and first_check is None:
            first_check = m.group(1)
        m = RESULT.match(text)
        if not m:
            continue
        check, first_check = first_check, None
        if indent == 0:
            finished += 1
            if m.group(2) in suites:
                suites[m.group(2)][2] = True
            # A failed suite must show a failed case; else it failed as a
            # whole (its init, say) and no case says so
            if m.group(1) == "not ok" and not leaf_failed:
                problems.append("suite %s failed with no failed case" % m.group(2))
            leaf_failed = 0
        elif indent == 4 and suite:
            suites[suite][1] += 1
            last_case = m.group(2)
        # Children's results come right before their parent's, indented
        # deeper: a result is a leaf unless the result before it is deeper.
        leaf = prev_indent <= indent
        prev_indent = indent
        if not leaf or indent == 0:
            continue
        if m.group(4):
            name = "%s.%s" % (suite, m.group(2)) if indent == 4 else \
                "%s.%s/%s" % (suite, case, m.group(2))
            # An allowed skip counts as skipped, any other as a failure
            if any(fnmatch.fnmatchcase(name, p) for p in allowed):
                skipped += 1
            else:
                problems.append("unexpected skip: " + name + m.group(3))
        elif m.group(1) == "ok":
            passed += 1
        else:
            failed += 1
            leaf_failed += 1
            name = "%s.%s" % (suite, m.group(2)) if indent == 4 else \
                "%s.%s/%s" % (suite, case, m.group(2))
            failed_names.append(name + (" (%s)" % check if check else ""))

    if top_plan is None:
        problems.append("no KTAP plan in the log: the test kernel reported no results")
    elif finished < top_plan:
        problems.append("the log ends after %d of %d suites: the test kernel stopped "
                        "(hang, reboot or panic)" % (finished, top_plan))
    if args.tests:
        glob_suite = args.filter.split(".", 1)[0] or "*"
        for name in sorted(registered_suites(args.tests, problems,
                                             args.very_slow_filtered)):
            if fnmatch.fnmatchcase(name, glob_suite) and name not in suites and \
                    any(fnmatch.fnmatchcase(name, g) for g in args.suites):
                problems.append("suite %s reported nothing" % name)
    for name in order:
        if not any(fnmatch.fnmatchcase(name, g) for g in args.suites):
            problems.append("suite %s ran, but this configuration runs only %s"
                            % (name, " ".join(args.suites)))
    if LEAK_SUITE in suites and order[-1] != LEAK_SUITE:
        problems.append("suite %s ran before %s: the leaks of the suites after it "
                        "were not checked" % (LEAK_SUITE, order[-1]))
    for name, (plan, cases, done) in sorted(suites.items()):
        if plan == 0:
            problems.append("suite %s has no cases" % name)
        if plan is not None and plan != cases:
            problems.append("suite %s planned %d cases and reported %d" % (name, plan, cases))
        if not done:
            problems.append("suite %s did not finish" % name)

    # Named, so that a run's summary says which case failed, not only how
    # many (not a FAIL line: the count above has them already)
    for n in failed_names:
        print("failed case: %s: %s" % (args.label, n), file=sys.stderr)
    for p in problems:
        print("FAIL %s: %s" % (args.label, p), file=sys.stderr)
    print(passed, failed + len(problems), skipped)


if __name__ == "__main__":
    main()
