#!/bin/bash
# SPDX-License-Identifier: MIT
# Static checks of the series, each printed as "PASS <what>" or
# "FAIL <what>": W=1 and sparse (C=2) on every object the series adds or
# touches (diagnostics on lines the series added count), kernel-doc -Wall on
# the files it adds and on the uAPI header, checkpatch --strict on every
# patch of the generated series, that MAINTAINERS covers the files the
# series adds, and the uAPI header self-test.
. "$(dirname "$0")/common.sh"
require "static checks" "${PKGS_KERNEL[@]}" "${PKGS_STATIC[@]}" || exit 1
cd "$KTREE"
[ -f .kunit/.config ] || die "no test kernel config: run scripts/kunit.sh first"
mkdir -p "$BUILD/static"
git diff -U0 base series > "$BUILD/static/added.diff"

# W=1 + sparse on the objects of every C file the series adds or changes.
mapfile -t cfiles < <(git diff --name-only --diff-filter=AM base series -- 'drivers/*.c')
objs=()
for f in "${cfiles[@]}"; do objs+=("$(objpath "$f")"); done
if [ ${#objs[@]} -gt 0 ]; then
	# Force a rebuild so that every object is compiled and checked. The
	# W=1 build must succeed; sparse then runs on its own (C=2) with -k,
	# because 0.6.4 reports an error in an upstream amdgpu header
	# (amdgv_sriovmsg.h's size assertion) for every amdgpu file. Only
	# diagnostics on the series' lines count, from either pass.
	for o in "${objs[@]}"; do rm -f ".kunit/$o"; done
	built() { local o; for o in "${objs[@]}"; do [ -f ".kunit/$o" ] || return 1; done; }
	set +e
	locked make -s -k O=.kunit ARCH=x86_64 CC="$KCC" -j"$JOBS" W=1 "${objs[@]}" \
		> "$BUILD/static/w1-sparse.log" 2>&1
	rc=$?
	built || rc=1
	locked make -s -k O=.kunit ARCH=x86_64 CC="$KCC" -j"$JOBS" C=2 "${objs[@]}" \
		>> "$BUILD/static/w1-sparse.log" 2>&1
	set -e
	for f in "${cfiles[@]}"; do
		grep -E "(^|/)$f:" "$BUILD/static/w1-sparse.log" |
			python3 "$TOP/scripts/newlines.py" "$BUILD/static/added.diff" > "$BUILD/static/w1.$$" || true
		if [ -s "$BUILD/static/w1.$$" ]; then cat "$BUILD/static/w1.$$"; result 1 "W=1+sparse $f"; else result 0 "W=1+sparse $f"; fi
	done
	[ "$rc" = 0 ] || { grep -E "error|Error" "$BUILD/static/w1-sparse.log" | head -20; result 1 "W=1 build"; }
	rm -f "$BUILD/static/w1.$$"
fi

# Diagnostics in headers the series adds or changes, seen while compiling.
mapfile -t hfiles < <(git diff --name-only --diff-filter=AM base series -- '*.h')
for f in "${hfiles[@]}"; do
	out=$(grep -E "(^|/)$f:" "$BUILD/static/w1-sparse.log" 2>/dev/null |
		python3 "$TOP/scripts/newlines.py" "$BUILD/static/added.diff" || true)
	[ -z "$out" ] || echo "$out"
	result "$([ -z "$out" ] && echo 0 || echo 1)" "W=1+sparse $f"
done

# kernel-doc on the files the series adds, and on the uAPI header.
mapfile -t docfiles < <(git diff --name-only --diff-filter=A base series -- '*.c' '*.h' | grep -v '^tools/')
docfiles+=(include/uapi/drm/amdgpu_drm.h)
for f in "${docfiles[@]}"; do
	out=$(scripts/kernel-doc -none -Wall "$f" 2>&1 || true)
	if [ "$f" = include/uapi/drm/amdgpu_drm.h ]; then
		out=$(echo "$out" | python3 "$TOP/scripts/newlines.py" "$BUILD/static/added.diff" || true)
	fi
	[ -z "$out" ] || echo "$out"
	result "$([ -z "$out" ] && echo 0 || echo 1)" "kernel-doc $f"
done

# checkpatch --strict on the mailable series. FILE_PATH_CHANGES ("does
# MAINTAINERS need updating?") is ignored: the series adds its new paths to
# amdgpu's MAINTAINERS entry in a commit of its own, and the MAINTAINERS
# check below tests that every new file is covered. CAMELCASE is ignored:
# the register names (regRLC_SPM_*, mmRLC_SPM_*) come from the generated
# asic_reg headers, which checkpatch does not index. UNKNOWN_COMMIT_ID is
# ignored: the base tree is Debian's source tarball, a git repository of
# one commit, in which checkpatch can look up no Fixes: id (the form of
# the tag, GIT_COMMIT_ID, is still checked). /usr/bin first:
# spdxcheck.py needs the python3-ply and python3-git of the distribution's
# Python.
[ -d "$OUT" ] || die "no $OUT: run scripts/format-patch.sh first"
for p in "$OUT"/0*.patch; do
	case $p in */0000-cover-letter.patch) continue ;; esac
	out=$(PATH=/usr/bin:$PATH scripts/checkpatch.pl --strict --quiet --no-summary --show-types \
		--ignore FILE_PATH_CHANGES,CAMELCASE,UNKNOWN_COMMIT_ID "$p" 2>&1 || true)
	[ -z "$out" ] || echo "$out"
	result "$([ -z "$out" ] && echo 0 || echo 1)" "checkpatch $(basename "$p")"
done

# MAINTAINERS: every file the series adds belongs to an existing amdgpu
# entry (whose list is amd-gfx), so that patches to it reach amdgpu's
# maintainers.
mapfile -t added < <(git diff --name-only --diff-filter=A base series)
uncovered=()
for f in "${added[@]}"; do
	scripts/get_maintainer.pl --no-git --no-git-fallback --no-rolestats -f "$f" 2>/dev/null |
		grep -q 'amd-gfx@lists\.freedesktop\.org' || uncovered+=("$f")
done
[ ${#uncovered[@]} = 0 ] || printf 'not in an amdgpu MAINTAINERS entry: %s\n' "${uncovered[@]}"
result "${#uncovered[@]}" "MAINTAINERS covers the ${#added[@]} files the series adds"

# The kernel's uAPI header self-test compiles amdgpu_drm.h on its own.
rm -f .kunit/usr/include/drm/amdgpu_drm.hdrtest
set +e
locked make -s O=.kunit ARCH=x86_64 CC="$KCC" -j"$JOBS" usr/ > "$BUILD/static/hdrtest.log" 2>&1
rc=$?
set -e
[ "$rc" = 0 ] && [ -f .kunit/usr/include/drm/amdgpu_drm.hdrtest ] || { tail -20 "$BUILD/static/hdrtest.log"; rc=1; }
result "$rc" "uAPI header test amdgpu_drm.h"
exit $fail
