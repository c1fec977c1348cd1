#!/bin/bash
# SPDX-License-Identifier: MIT
# Build Documentation/gpu/amdgpu with the kernel's Sphinx build and fail on
# any warning that points at a file the series adds or a line it adds.
. "$(dirname "$0")/common.sh"
require docs "${PKGS_DOCS[@]}" || exit 1
cd "$KTREE"
command -v sphinx-build >/dev/null || { echo "FAIL docs: sphinx-build missing (apt-get install python3-sphinx)"; exit 1; }
mkdir -p "$BUILD/docs"
set +e
locked make -s O="$BUILD/docs" SPHINXDIRS=gpu/amdgpu SPHINXOPTS=-q htmldocs > "$BUILD/docs/build.log" 2>&1
rc=$?
set -e
git diff -U0 base series > "$BUILD/docs/added.diff"
mapfile -t ours < <(git diff --name-only --diff-filter=A base series -- Documentation include drivers)
bad=$(
	{
		for f in "${ours[@]}"; do grep -F "$f" "$BUILD/docs/build.log" | grep -i 'warning\|error' || true; done
		grep -E 'amdgpu_drm\.h:[0-9]+' "$BUILD/docs/build.log" |
			sed 's|^.*/include/|include/|' |
			python3 "$TOP/scripts/newlines.py" "$BUILD/docs/added.diff" || true
	} | sort -u)
if [ "$rc" != 0 ]; then tail -20 "$BUILD/docs/build.log"; echo "FAIL docs build (exit $rc)"; exit 1; fi
[ -f "$BUILD/docs/Documentation/output/gpu/amdgpu/profiler.html" ] ||
	[ -n "$(find "$BUILD/docs" -name profiler.html -print -quit)" ] ||
	{ echo "FAIL docs: profiler.html was not built"; exit 1; }
if [ -n "$bad" ]; then echo "$bad"; echo "FAIL docs warnings in the series' files"; exit 1; fi
echo "PASS docs build gpu/amdgpu (no warning in the series' files)"
