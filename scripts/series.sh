#!/bin/bash
# SPDX-License-Identifier: MIT
# (Re)build branch "series" of $BUILD/linux: one commit per entry of
# series/series, on top of branch "base", authored and signed off by the
# sender's git identity (see common.sh). Files whose content is the same as
# before the run keep their timestamps, so the kernel build stays
# incremental.
. "$(dirname "$0")/common.sh"

"$TOP/scripts/base.sh"
require "series applies" git || exit 1
cd "$KTREE"
# Checking out base and applying the series again rewrites every file the
# series touches. Keep a copy (with its mtime) of each, and give back the
# old mtime to those that come out unchanged; otherwise every object that
# includes amdgpu.h would be rebuilt on every run.
keep=$BUILD/series-mtimes
rm -rf "$keep"
mkdir -p "$keep"
if git rev-parse -q --verify series >/dev/null; then
	git diff --name-only -z base series |
		xargs -0 -r sh -c 'for f; do [ -f "$f" ] && cp -p --parents "$f" "$0"; done; true' "$keep"
fi
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
	env "${SENDER_ENV[@]}" git commit -q --allow-empty -s -F "$dir/message"
	git tag "s/$d"
	n=$((n + 1))
done
(cd "$keep" && find . -type f -print0) | while IFS= read -r -d '' f; do
	f=${f#./}
	if [ -f "$f" ] && cmp -s "$keep/$f" "$f"; then touch -r "$keep/$f" "$f"; fi
done
rm -rf "$keep"
log "series: $n commits on $(git log -1 --format=%h base), from $SENDER_NAME <$SENDER_EMAIL>"
sender_warning >&2
