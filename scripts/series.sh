#!/bin/bash
# SPDX-License-Identifier: MIT
# (Re)build branch "series" of $BUILD/linux: one commit per entry of
# series/series, on top of branch "base". Files untouched since the previous
# run keep their timestamps, so the kernel build stays incremental.
. "$(dirname "$0")/common.sh"

"$TOP/scripts/base.sh"
require "series applies" git || exit 1
cd "$KTREE"
git checkout -q -f -B series base
# Tag each commit so refresh-patch.sh and the per-commit checks can find it.
git tag -l 's/*' | xargs -r git tag -d >/dev/null
n=0
for d in $(series_dirs); do
	dir=$TOP/series/$d
	[ -f "$dir/message" ] || die "series/$d/message is missing"
	if [ -f "$dir/files" ]; then
		while read -r f; do
			case $f in ''|\#*) continue ;; esac
			[ -f "$TOP/$f" ] || die "series/$d/files: $f does not exist"
			mkdir -p "$(dirname "$f")"
			cmp -s "$TOP/$f" "$f" || cp "$TOP/$f" "$f"
			git add -f "$f"
		done < "$dir/files"
	fi
	for p in "$dir"/*.patch; do
		[ -e "$p" ] || continue
		git apply --index --whitespace=error-all "$p" ||
			die "series/$d/$(basename "$p") does not apply"
	done
	git "${GIT_ID[@]}" commit -q --allow-empty -s -F "$dir/message"
	git tag "s/$d"
	n=$((n + 1))
done
log "series: $n commits on $(git log -1 --format=%h base)"
