#!/bin/bash
# SPDX-License-Identifier: MIT
# Check that every commit of the series compiles on its own: at each commit,
# build the objects of the C files that commit touches, and of every C file
# of the series that includes a header the commit touches; a kernel header
# that no C file includes yet is compiled alone, in a file that includes
# only it (in amdgpu's directory, with amdgpu's flags). Runs in a separate
# work tree so the main tree's build stays warm.
. "$(dirname "$0")/common.sh"
require "per-commit build" "${PKGS_KERNEL[@]}" || exit 1
[ -f "$KOUT/.config" ] || die "no test kernel config: run scripts/kunit.sh first"
wt=$BUILD/percommit
if [ ! -d "$wt" ]; then
	git -C "$KTREE" worktree add -q --detach "$wt" series
fi
cd "$wt"
git checkout -q --detach -f series
mkdir -p .pc
cp "$KOUT/.config" .pc/.config
locked make -s O=.pc ARCH=x86_64 CC="$KCC" olddefconfig prepare > "$BUILD/percommit.log" 2>&1 ||
	{ tail -20 "$BUILD/percommit.log"; die "prepare failed"; }
mapfile -t allc < <(git diff --name-only --diff-filter=AM base series -- 'drivers/*.c')
fail=0
for d in $(series_dirs); do
	git checkout -q --detach -f "s/$d"
	mapfile -t changed < <(git diff --name-only "s/$d^" "s/$d")
	objs=() alone=()
	for f in "${changed[@]}"; do
		case $f in drivers/*.c) objs+=("$(objpath "$f")") ;; esac
	done
	for f in "${changed[@]}"; do
		case $f in *.h) ;; *) continue ;; esac
		h=$(basename "$f") n=${#objs[@]}
		for c in "${allc[@]}"; do
			[ -f "$c" ] && grep -q "#include [<\"].*\b$h[>\"]" "$c" && objs+=("$(objpath "$c")")
		done
		[ "${#objs[@]}" != "$n" ] && continue
		# Nothing includes it yet: compile it alone (uAPI headers have
		# the kernel's own header test).
		case $f in
		include/uapi/*) continue ;;
		include/*) inc="<${f#include/}>" ;;
		drivers/gpu/drm/amd/amdgpu/*) inc="\"${f#drivers/gpu/drm/amd/amdgpu/}\"" ;;
		*) continue ;;
		esac
		t=drivers/gpu/drm/amd/amdgpu/percommit_alone_${h%.h}.c
		printf '// SPDX-License-Identifier: MIT\n#include %s\n' "$inc" > "$t"
		objs+=("${t%.c}.o")
		alone+=("$f")
	done
	mapfile -t objs < <(printf '%s\n' "${objs[@]}" | sort -u | grep .)
	if [ ${#objs[@]} = 0 ]; then
		echo "SKIP build s/$d: no C object of amdgpu includes what it changes"
		continue
	fi
	if locked make -s O=.pc ARCH=x86_64 CC="$KCC" -j"$JOBS" "${objs[@]}" >> "$BUILD/percommit.log" 2>&1; then
		echo "PASS build s/$d (${#objs[@]} objects${alone[*]:+; alone: ${alone[*]}})"
	else
		echo "FAIL build s/$d: ${objs[*]}"
		fail=1
	fi
	rm -f drivers/gpu/drm/amd/amdgpu/percommit_alone_*.c
done
git checkout -q --detach -f series
exit $fail
