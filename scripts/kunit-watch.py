#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Run a KUnit command with a deadline on each result.

    kunit-watch.py --deadline SECONDS [--boot-deadline SECONDS] --log FILE
                   -- COMMAND...

Copies COMMAND's output (stdout and stderr) to FILE line by line. When no
KTAP result line ("ok N ..." or "not ok N ...", at any depth) has come for
SECONDS since the previous one (or since the first line of the test
kernel's KTAP output), the case that is running is taken to have stopped
making progress: the whole process group (kunit.py and its QEMU) is
killed, and FILE gets the line

    kunit-watch: no KUnit result for N s (the per-case deadline): stopped

which scripts/kunit-result.py turns into a failure naming the suite and
the last case that finished. While kunit.py configures and builds no
deadline applies; from its "Starting KUnit Kernel" line the test kernel
has --boot-deadline seconds (default 300) to print its first KTAP line,
or it is stopped the same way, with the line

    kunit-watch: no KTAP output N s after the test kernel started (the boot deadline): stopped

(a kernel that hangs or loops at boot costs minutes, not kunit.py's
--timeout).

The deadline is not a measurement: it only has to be far above the
longest wait for one result that a working case causes (the last line of
FILE says what it was in this run, and the result line that ended it),
and far below kunit.py's timeout.
With --stop-at-failure (the mutation check: one failing case kills a
mutant, the cases after it add nothing), the first "not ok" result line
ends the run the same way, with the line

    kunit-watch: stopped at the first failure: <the result line>

and so does, SPLAT_GRACE seconds after it (for the rest of the report),
the first kernel report that scripts/kunit-result.py fails a run on (its
SPLAT patterns: a hung task after the test kernel's 20 s, a soft lockup,
KASAN, lockdep...), with the line

    kunit-watch: stopped at the first kernel report: <its first line>

so that a mutant that deadlocks is stopped when the hung-task detector
sees it, not at the deadline.

Exit status: COMMAND's, 124 when the deadline stopped it, 1 when
--stop-at-failure did. Killed by
SIGTERM, SIGINT or SIGHUP (an outer timeout, ^C), it kills COMMAND's
process group first (QEMU is not left running) and exits 128 + the
signal.
"""
import argparse
import os
import re
import select
import signal
import subprocess
import sys
import time

RESULT = re.compile(r"^(?:\[[^\]]*\]\s*)*\s*(ok|not ok) \d+ ")
KTAP = re.compile(r"^(?:\[[^\]]*\]\s*)*\s*(KTAP version|TAP version)")
BOOT = re.compile(r"^\[[0-9:]+\] Starting KUnit Kernel")
SPLAT_GRACE = 3.0


def report_patterns():
    """kunit-result.py's SPLAT and EXECUTOR_WAIT: one list of what fails a run."""
    import importlib.util
    sys.dont_write_bytecode = True
    spec = importlib.util.spec_from_file_location(
        "kunit_result", os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                     "kunit-result.py"))
    kr = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(kr)
    return kr.SPLAT, kr.EXECUTOR_WAIT, kr.PREFIX


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--deadline", type=float, required=True)
    ap.add_argument("--boot-deadline", type=float, default=300)
    ap.add_argument("--log", required=True)
    ap.add_argument("--stop-at-failure", action="store_true")
    ap.add_argument("cmd", nargs=argparse.REMAINDER)
    args = ap.parse_args()
    cmd = args.cmd[1:] if args.cmd[:1] == ["--"] else args.cmd
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    child = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                             env=env, start_new_session=True)
    out = open(args.log, "w")

    def stop(signum, frame):
        try:
            os.killpg(child.pid, signal.SIGKILL)
            child.wait(timeout=10)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            pass
        out.write("kunit-watch: stopped by signal %d\n" % signum)
        out.close()
        os._exit(128 + signum)

    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, stop)
    since = None       # when the last result (or the KTAP header) came
    booted = None      # when kunit.py started the kernel, until KTAP
    longest = 0.0
    longest_at = ""    # the result line that ended the longest wait
    stopped = False
    failed = False
    splat_at = None    # when the first kernel report came (--stop-at-failure)
    if args.stop_at_failure:
        splat, executor_wait, prefix = report_patterns()
    pending = b""
    fd = child.stdout.fileno()
    while True:
        if since is not None:
            wait = max(0.0, since + args.deadline - time.monotonic())
        elif booted is not None:
            wait = max(0.0, booted + args.boot_deadline - time.monotonic())
        else:
            wait = None
        if splat_at is not None:
            left = max(0.0, splat_at + SPLAT_GRACE - time.monotonic())
            wait = left if wait is None else min(wait, left)
        ready, _, _ = select.select([fd], [], [], wait)
        now = time.monotonic()
        if splat_at is not None and now >= splat_at + SPLAT_GRACE:
            out.write("kunit-watch: stopped at the first kernel report: %s\n" % splat_line)
            failed = True
            os.killpg(child.pid, signal.SIGKILL)
            pending = b""
            break
        if not ready:
            if since is not None:
                out.write("kunit-watch: no KUnit result for %d s (the per-case deadline): "
                          "stopped\n" % args.deadline)
            else:
                out.write("kunit-watch: no KTAP output %d s after the test kernel started "
                          "(the boot deadline): stopped\n" % args.boot_deadline)
            out.flush()
            os.killpg(child.pid, signal.SIGKILL)
            stopped = True
            break
        data = os.read(fd, 65536)
        if not data:
            break
        pending += data
        *lines, pending = pending.split(b"\n")
        for raw in lines:
            line = raw.decode("utf-8", "replace")
            out.write(line + "\n")
            if booted is None and BOOT.match(line):
                booted = now
            if RESULT.match(line) or (since is None and KTAP.match(line)):
                if since is not None and now - since > longest:
                    longest = now - since
                    longest_at = line.strip()
                since = now
            if args.stop_at_failure and splat_at is None:
                bare = prefix.sub("", line, count=1)
                if splat.search(bare) and not executor_wait.search(bare):
                    splat_at = now
                    splat_line = bare.strip()
            m = RESULT.match(line)
            if args.stop_at_failure and m and m.group(1) == "not ok":
                out.write("kunit-watch: stopped at the first failure: %s\n" % line.strip())
                failed = True
                break
        out.flush()
        if failed:
            os.killpg(child.pid, signal.SIGKILL)
            pending = b""
            break
    if pending:
        out.write(pending.decode("utf-8", "replace") + "\n")
    rc = child.wait()
    out.write("kunit-watch: longest wait for one KUnit result: %.1f s (deadline %d s)%s\n"
              % (longest, args.deadline,
                 ", before \"%s\"" % longest_at if longest_at else ""))
    out.close()
    sys.exit(124 if stopped else 1 if failed else rc)


if __name__ == "__main__":
    main()
