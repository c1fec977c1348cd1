#!/bin/bash
# SPDX-License-Identifier: MIT
# Operator mutants of the SPM drain core against its native tests
# (tools/testing/amdgpu_spm, ASan and UBSan): seconds per mutant, so all of
# them, in make check.
#
# For every C file of ours that the native build compiles (the $(AMDGPU)/
# sources of tools/testing/amdgpu_spm/Makefile), scripts/mutants-op.py
# generates the operator mutants; each is written into a copy of the
# native build (in $BUILD/mutate-native), built with warnings allowed, and
# run with a time limit. A mutant is
#   killed     the tests fail, or a sanitizer stops them, or they run past
#              the time limit ("killed (timeout)": a mutant that hangs is
#              caught, the way a hung KUnit run counts as a failure);
#   stillborn  it does not compile: counted apart, not as killed;
#   equivalent it survives and scripts/mutants-equivalent names it, with
#              the line it mutates and why no test can tell it apart;
#   SURVIVED   it survives and is not listed: a gap in the tests.
# Prints a line per mutant, then per file
#   mutants <file>: N generated, N killed (N by timeout or deadline), N stillborn,
#   N equivalent (listed), N survived
# and PASS/FAIL lines for make check: FAIL on any unlisted survivor, on a
# kill score under the goal (90% of the mutants that are not stillborn or
# equivalent), on a listed equivalent that a test kills or that no longer
# matches a mutant (refresh the list), and when the unmutated tree does
# not pass. Ends with the wall time.
#
# Usage: scripts/mutate-native.sh [ID-glob]
# Environment:
#   BUILD           the tree is $BUILD/linux (see common.sh), or NATIVE_TREE
#   UAPI_INCLUDE    installed uAPI headers; else they are installed from it
#   MUTANT_ARGS     the test program's options per mutant; default "-x -a":
#                   stop at the first failure, both writers, every reading
#   MUTANT_TIMEOUT  seconds per mutant; default 3 x the unmutated run, >= 60
#   MUTANT_CFLAGS   default "-O1 -g" (half the compile time of -O2)
#   MUTANTS_GOAL    percent; default 90
#   MUTANTS_ALL=1   run the mutants scripts/mutants-equivalent lists too (by
#                   default they are not run: that they survive says
#                   nothing new; that each still names the line it mutates
#                   is checked)
#   MUTANTS_QUIET=1 no line per mutant in the output (they are in
#                   $BUILD/mutate-native/mutants.log)
. "$(dirname "$0")/common.sh"

started=$(date +%s)
tree=${NATIVE_TREE:-$KTREE}
native=tools/testing/amdgpu_spm
amdgpu=drivers/gpu/drm/amd/amdgpu
work=$BUILD/mutate-native
glob=${1:-*}
args=${MUTANT_ARGS:--x -a}
goal=${MUTANTS_GOAL:-90}
equiv=$TOP/scripts/mutants-equivalent
gen=$TOP/scripts/mutants-op.py

[ -f "$tree/$native/Makefile" ] || {
	echo "FAIL native mutants: no $tree/$native/Makefile (make series first)"
	exit 1
}
rm -rf "$work"
mkdir -p "$work/t/$amdgpu/tests" "$work/t/$native" "$work/log"
# The files of the driver the native build names: the .c ones are
# compiled into it and mutated, all are copied
mapfile -t named < <(grep -o '\$(AMDGPU)/[A-Za-z0-9_/]*\.[ch]' "$tree/$native/Makefile" |
	sed 's|^\$(AMDGPU)/||' | sort -u)
mapfile -t files < <(printf '%s\n' "${named[@]}" | grep '\.c$' || true)
[ ${#files[@]} -gt 0 ] || { echo "FAIL native mutants: no \$(AMDGPU)/*.c in $native/Makefile"; exit 1; }
cp -a "$tree/$native/." "$work/t/$native/"
for f in "${named[@]}"; do
	mkdir -p "$(dirname "$work/t/$amdgpu/$f")"
	cp -a "$tree/$amdgpu/$f" "$work/t/$amdgpu/$f"
done
make -s -C "$work/t/$native" clean > /dev/null 2>&1 || true

if [ -z "${UAPI_INCLUDE:-}" ]; then
	UAPI_INCLUDE=$work/uapi/usr/include
	make -s -C "$tree" O="$work/uapi" ARCH=x86_64 headers_install \
		INSTALL_HDR_PATH="$work/uapi/usr" > "$work/log/uapi" 2>&1 ||
		{ echo "FAIL native mutants: headers_install (see $work/log/uapi)"; exit 1; }
fi
# -O1: half the compile time of -O2, and the tests run as fast
build() {
	make -s -C "$work/t/$native" UAPI_INCLUDE="$UAPI_INCLUDE" WERROR= \
		CFLAGS="${MUTANT_CFLAGS:--O1 -g}" spm_drain_test
}

# The unmutated tests must pass, and say how long they take
log "native mutants: unmutated run (${args})"
t0=$(date +%s.%N)
# shellcheck disable=SC2086 # $args is a list of options
if ! build > "$work/log/baseline" 2>&1 ||
   ! (cd "$work/t/$native" && ./spm_drain_test $args) >> "$work/log/baseline" 2>&1; then
	echo "FAIL native mutants: the unmutated tests do not pass (see $work/log/baseline)"
	exit 1
fi
base=$(echo "$(date +%s.%N) - $t0" | bc)
limit=${MUTANT_TIMEOUT:-$(echo "b = $base * 3; if (b < 60) b = 60; scale=0; b / 1" | bc)}
log "native mutants: unmutated run took ${base%.*} s; limit per mutant ${limit} s"

results=$work/results.tsv
: > "$results"
say() { # say <line>: one line per mutant, to the log and, unless quiet, out
	echo "$*" >> "$work/mutants.log"
	[ -n "${MUTANTS_QUIET:-}" ] || echo "$*"
}
for f in "${files[@]}"; do
	src=$work/t/$amdgpu/$f
	cp "$src" "$work/orig.c"
	python3 "$gen" write-all --tree "$work/t" --out "$work/mutants" "$amdgpu/$f"
	while IFS=$'\t' read -r id orig mutated listed; do
		# shellcheck disable=SC2053 # $glob is a glob
		[[ $id == $glob ]] || continue
		if [ -n "$listed" ] && [ -z "${MUTANTS_ALL:-}" ]; then
			say "mutant $id: listed as equivalent, not run"
			printf '%s\tlisted\t%s\t%s\t\n' "$id" "$orig" "$mutated" >> "$results"
			continue
		fi
		safe=${id//:/_}
		cp "$work/mutants/$safe.c" "$src"
		detail=
		if ! build > "$work/log/$safe" 2>&1; then
			verdict=stillborn
			detail=$(grep -m1 'error:' "$work/log/$safe" | sed 's/.*error: //' || true)
		else
			set +e
			# shellcheck disable=SC2086 # $args is a list of options
			(cd "$work/t/$native" && timeout -k 5 "$limit" ./spm_drain_test $args) \
				>> "$work/log/$safe" 2>&1
			rc=$?
			set -e
			case $rc in
			0) verdict=survived ;;
			124|137) verdict=timeout; detail="after $limit s" ;;
			*) verdict=killed
			   detail=$(grep '^not ok' "$work/log/$safe" | grep -v -m1 '# TODO' |
				sed 's/^not ok [0-9]* //' || true)
			   [ -n "$detail" ] || detail=$(grep -m1 -o 'ERROR: [A-Za-z]*Sanitizer: [a-z-]*\|runtime error: .*' \
				"$work/log/$safe" || echo "exit $rc") ;;
			esac
		fi
		cp "$work/orig.c" "$src"
		case $verdict in
		timeout) say "mutant $id: killed (timeout, $detail)" ;;
		survived) say "mutant $id: survived: $mutated" ;;
		*) say "mutant $id: $verdict${detail:+ ($detail)}" ;;
		esac
		printf '%s\t%s\t%s\t%s\t%s\n' "$id" "$verdict" "$orig" "$mutated" "$detail" >> "$results"
	done < <(python3 "$gen" list --tree "$work/t" --equivalent "$equiv" "$amdgpu/$f")
done
# The native build is left unmutated
cmp -s "$work/orig.c" "$src" || { echo "FAIL native mutants: a mutant was not reverted"; exit 1; }
set +e
python3 "$gen" report --equivalent "$equiv" --goal "$goal" --glob "$glob" "$results"
rc=$?
set -e
echo "native mutation run: $(wc -l < "$results") mutants, $(( $(date +%s) - started )) s (mutants-op.py, $args, limit $limit s each)"
exit $rc
