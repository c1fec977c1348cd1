#!/bin/bash
# SPDX-License-Identifier: MIT
# The test command: apply the series, build and run the KUnit suites in
# QEMU (each KUnit configuration of common.sh, with a result line each),
# run the static checks, the per-commit build check, build the
# selftests (which must skip without an amdgpu device), the reference tool
# and its unit test, and the documentation. Prints every check's result and
# a closing "N passed, N failed, N skipped" line; exits non-zero on any
# failure. A check that did not run says SKIP and why; a SKIP that
# scripts/allowed-skips does not name fails the run, and so does a KUnit
# skip that scripts/kunit-allowed-skips does not name. The accounting is
# scripts/check-lib.sh's (which scripts/selftest.sh tests).
# As root it first installs what is missing (scripts/deps.sh); otherwise
# each stage names the Debian packages it lacks in its FAIL line.
. "$(dirname "$0")/common.sh"

. "$TOP/scripts/check-lib.sh"

mkdir -p "$BUILD"
# Should apt fail (no network), go on: each stage names what it lacks.
"$TOP/scripts/deps.sh" check || log "the package step failed; the stages below name what is missing"

stage "series applies" "$TOP/scripts/series.sh"
stage "format-patch" "$TOP/scripts/format-patch.sh"

# KUnit, one configuration after the other (common.sh): every suite with
# KASAN and lockdep; the peer-memory suites without PREEMPT_COUNT.
for conf in "${KUNIT_CONFIGS[@]}"; do
	kunit_stage "$conf"
done
kunit_config default

# The checks of the pipeline itself: kunit-result.py against made-up logs.
runnable "pipeline self-test" "$TOP/scripts/selftest.sh" &&
	counted "pipeline self-test" "$BUILD/selftest.log" "$TOP/scripts/selftest.sh"
runnable "static checks" "$TOP/scripts/static.sh" &&
	counted "static checks" "$BUILD/static.log" "$TOP/scripts/static.sh"
# The quick half of the mutation check; make mutate runs the mutants.
counted "mutants" "$BUILD/mutants.log" python3 "$TOP/scripts/mutants-check.py" "$TOP" "$KTREE"
# The schemata make mutate compiles a sample into: each mutant as itself
counted "mutation schemata" "$BUILD/schema-check.log" \
	python3 "$TOP/scripts/mutants-op.py" schema-check --tree "$KTREE"
# The drain core's operator mutants, all of them, against its native tests
runnable "native mutants" "$TOP/scripts/mutate-native.sh" &&
	counted "native mutants" "$BUILD/mutate-native.log" env MUTANTS_QUIET=1 "$TOP/scripts/mutate-native.sh"
runnable "per-commit build" "$TOP/scripts/percommit.sh" &&
	counted "per-commit build" "$BUILD/percommit-result.log" "$TOP/scripts/percommit.sh"
runnable "selftests, reference tool, IGT test" "$TOP/scripts/userspace.sh" &&
	counted "selftests, reference tool, IGT test" "$BUILD/userspace.log" "$TOP/scripts/userspace.sh"
runnable documentation "$TOP/scripts/docs.sh" &&
	counted documentation "$BUILD/docs.log" "$TOP/scripts/docs.sh"

finish
