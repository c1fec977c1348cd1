#!/bin/bash
# SPDX-License-Identifier: MIT
# Install the Debian packages the build and the checks need, before
# anything is built: `make` and `make check` run this first, so that both
# see the same tools (above all the same compiler, see $BUILD/kcc).
#
#   scripts/deps.sh        as root: install every package make and make
#                          check need (the lists in common.sh) that is
#                          missing. Otherwise: fail naming what `make`
#                          lacks, and list what `make check` will lack.
#   scripts/deps.sh check  the same, but without root it does not fail:
#                          each stage of make check names what it lacks.
# DEPS=0 skips it (a machine set up some other way).
NO_KCC=1 # the compiler is chosen after the install, by the first build
. "$(dirname "$0")/common.sh"
[ "${DEPS:-1}" != 0 ] || exit 0
mode=${1:-make}

mapfile -t miss < <(missing_pkgs "${PKGS_ALL[@]}")
# With KSRC the base is the user's tree: no linux-source-6.12 needed.
if [ -n "${KSRC:-}" ]; then
	mapfile -t miss < <(printf '%s\n' "${miss[@]}" | grep -vx 'linux-source-6.12' || true)
	[ -n "${miss[0]:-}" ] || miss=()
fi
[ ${#miss[@]} = 0 ] && exit 0
if [ "$(id -u)" = 0 ]; then
	if ! apt_install "${miss[@]}"; then
		printf '%s\n' "${miss[@]}" | grep -qx linux-source-6.12 &&
			log "linux-source-6.12 comes from bookworm-security: is it in /etc/apt/sources.list(.d)?"
		die "apt-get install ${miss[*]} failed"
	fi
	exit 0
fi
# Not root: what `make` needs must be there; what only `make check` needs
# is named by the stage that needs it.
make_pkgs=" ${PKGS_MAKE[*]} "
need=() later=()
for p in "${miss[@]}"; do
	case $make_pkgs in *" $p "*) need+=("$p") ;; *) later+=("$p") ;; esac
done
[ ${#later[@]} = 0 ] || log "make check will also need: ${later[*]}"
if [ "$mode" = make ] && [ ${#need[@]} -gt 0 ]; then
	die "missing Debian package(s) ${need[*]}: run make as root, or: sudo apt-get install ${miss[*]}"
fi
exit 0
