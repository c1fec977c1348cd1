#!/bin/bash
# SPDX-License-Identifier: MIT
# Regenerate series/<commit>/<name>.patch from the work tree's changes to
# the given upstream paths, relative to the state before that commit.
# Use it when no later commit of the series touches the same paths.
. "$(dirname "$0")/common.sh"
[ $# -ge 2 ] || die "usage: $0 <commit-dir> <path>..."
d=$1; shift
git -C "$KTREE" rev-parse -q --verify "s/$d" >/dev/null || die "no commit s/$d: run 'make series' first"
for f in "$@"; do
	name=$(echo "$f" | tr / _ | sed 's/^_*//').patch
	(cd "$KTREE" && git diff --no-color "s/$d^" -- "$f") > "$TOP/series/$d/$name"
	[ -s "$TOP/series/$d/$name" ] || { rm -f "$TOP/series/$d/$name"; log "$f: no change"; continue; }
	log "wrote series/$d/$name"
done
