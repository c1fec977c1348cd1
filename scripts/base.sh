#!/bin/bash
# SPDX-License-Identifier: MIT
# Make $BUILD/linux a git work tree whose branch "base" is the base tree:
# the user's KSRC (a kernel git tree, at its HEAD) when given, else Debian's
# linux-source-6.12 package (installed with apt when missing and root).
. "$(dirname "$0")/common.sh"

if [ -d "$KTREE/.git" ] && git -C "$KTREE" rev-parse -q --verify base >/dev/null; then
	exit 0
fi
mkdir -p "$BUILD"
rm -rf "$KTREE"
if [ -n "${KSRC:-}" ]; then
	require "base tree" git >&2 || die "git is missing"
	git -C "$KSRC" rev-parse --verify HEAD >/dev/null 2>&1 ||
		die "KSRC=$KSRC is not a git tree"
	log "cloning base from $KSRC ($(git -C "$KSRC" describe --always HEAD))"
	git clone -q --shared --no-checkout "$KSRC" "$KTREE"
	git -C "$KTREE" checkout -q -b base "$(git -C "$KSRC" rev-parse HEAD)"
else
	# As root require installs it; linux-source-6.12 is in bookworm-security.
	require "base tree" "${PKGS_BASE[@]}" >&2 ||
		die "Debian's linux-source-6.12 is not installed: run make as root, or give KSRC=<kernel git tree>"
	tarball=/usr/src/linux-source-6.12.tar.xz
	[ -f "$tarball" ] || die "$tarball is missing (reinstall linux-source-6.12)"
	log "extracting $tarball"
	tar -C "$BUILD" -xJf "$tarball"
	mv "$BUILD/linux-source-6.12" "$KTREE"
	ver=$(dpkg-query -W -f='${Version}' linux-source-6.12 2>/dev/null || echo unknown)
	# Debian's .gitignore ignores the whole top level: add with -f. The
	# import's identity and date are fixed (the date is the tarball's,
	# which the package sets), so that the same package version gives the
	# same commit, and the series' base-commit, on every machine.
	git -C "$KTREE" init -q -b base
	git -C "$KTREE" config gc.auto 0 # see below
	git -C "$KTREE" add -f .
	date="@$(stat -c %Y "$tarball") +0000"
	GIT_AUTHOR_NAME="Debian linux-source-6.12" GIT_AUTHOR_EMAIL="" \
	GIT_COMMITTER_NAME="Debian linux-source-6.12" GIT_COMMITTER_EMAIL="" \
	GIT_AUTHOR_DATE="$date" GIT_COMMITTER_DATE="$date" \
		git -C "$KTREE" commit -q -m "Debian linux-source-6.12 $ver"
fi
git -C "$KTREE" config core.autocrlf false
# The import leaves some 90000 loose objects, so the next commits would
# start "git gc --auto" in the background: minutes of repacking that
# compete with the kernel build. This tree is a throwaway build area.
git -C "$KTREE" config gc.auto 0
log "base: $(git -C "$KTREE" log -1 --format='%h %s' base)"
