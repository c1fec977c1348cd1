# SPDX-License-Identifier: MIT
# Shared settings for the series scripts; sourced, not run.
set -euo pipefail
log() { printf '== %s\n' "$*" >&2; }
die() { printf 'error: %s\n' "$*" >&2; exit 1; }
TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${BUILD:-$TOP/build}
case $BUILD in /*) ;; *) BUILD=$TOP/$BUILD ;; esac
KTREE=$BUILD/linux
KOUT=$KTREE/.kunit
OUT=$BUILD/out
LOCK=${LOCK:-/tmp/amdgpu-series-build.lock}
JOBS=${JOBS:-$(nproc)}
GIT_ID=(-c user.name="${GIT_AUTHOR_NAME:-amdgpu profiler series}" -c user.email="${GIT_AUTHOR_EMAIL:-amdgpu-profiler@example.org}")
export CCACHE_DIR=${CCACHE_DIR:-${HOME:-/root}/.cache/ccache}

# The Debian packages each stage needs, in one place: scripts/deps.sh
# installs all of them (make and make check run it first), and each stage
# checks its own list with require, so that without root a missing package
# is named in that stage's FAIL line.
PKGS_BASE=(git xz-utils linux-source-6.12)
PKGS_KERNEL=(build-essential bc bison flex libelf-dev libssl-dev cpio kmod
	python3 ccache)
PKGS_KUNIT=(qemu-system-x86)
PKGS_STATIC=(sparse perl python3-ply python3-git)
PKGS_USERSPACE=(rsync pkg-config libdrm-dev libhsakmt-dev libhsakmt1)
PKGS_DOCS=(python3-sphinx python3-sphinx-rtd-theme python3-yaml)
# What `make` needs, and what `make check` needs on top.
PKGS_MAKE=("${PKGS_BASE[@]}" "${PKGS_KERNEL[@]}")
PKGS_ALL=("${PKGS_MAKE[@]}" "${PKGS_KUNIT[@]}" "${PKGS_STATIC[@]}"
	"${PKGS_USERSPACE[@]}" "${PKGS_DOCS[@]}")

# missing_pkgs <pkg>...: print those not installed (none on a system
# without dpkg: there the tools' own errors have to do).
missing_pkgs() {
	command -v dpkg-query >/dev/null 2>&1 || return 0
	local p
	for p; do
		dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q '^install ok installed$' ||
			echo "$p"
	done
}

# apt_install <pkg>...: install with apt-get (root only).
apt_install() {
	log "installing Debian packages: $*"
	DEBIAN_FRONTEND=noninteractive apt-get update -q >&2 &&
		DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "$@" >&2
}

# require <what> <pkg>...: make sure the packages are installed. As root the
# missing ones are installed; otherwise (or when that fails) print
# "FAIL <what>: missing Debian package(s) ..." naming them, and return 1.
require() {
	local what=$1 miss
	shift
	mapfile -t miss < <(missing_pkgs "$@")
	[ ${#miss[@]} = 0 ] && return 0
	if [ "$(id -u)" = 0 ] && apt_install "${miss[@]}"; then
		mapfile -t miss < <(missing_pkgs "${miss[@]}")
		[ ${#miss[@]} = 0 ] && return 0
	fi
	echo "FAIL $what: missing Debian package(s) ${miss[*]} (as root: apt-get install ${miss[*]})"
	return 1
}

# The test kernel's compiler, chosen once per build directory and recorded
# in $BUILD/kcc: installing or removing ccache later must not change CC,
# which would rebuild the whole kernel. KCC=... sets (and records) another.
# scripts/deps.sh, which may install ccache, chooses nothing (NO_KCC=1).
mkdir -p "$BUILD"
if [ -n "${NO_KCC:-}" ]; then
	KCC=${KCC:-gcc}
elif [ -n "${KCC:-}" ]; then
	:
elif [ -s "$BUILD/kcc" ]; then
	KCC=$(cat "$BUILD/kcc")
	case $KCC in ccache\ *)
		command -v ccache >/dev/null 2>&1 || { KCC=${KCC#ccache }; log "ccache is gone: building with $KCC (a full rebuild)"; } ;;
	esac
elif command -v ccache >/dev/null 2>&1; then
	KCC="ccache gcc"
else
	KCC=gcc
fi
[ -n "${NO_KCC:-}" ] || [ "$(cat "$BUILD/kcc" 2>/dev/null)" = "$KCC" ] || echo "$KCC" > "$BUILD/kcc"

# The options every kunit.py build and run of the test kernel shares: the
# same config and build directory, so that builds stay incremental.
KUNIT_OPTS=(--arch=x86_64
	--kunitconfig=drivers/gpu/drm/amd/amdgpu/tests/.kunitconfig
	--build_dir=.kunit --jobs="$JOBS" --make_options "CC=$KCC")

# result <status> <what>: print one check's PASS/FAIL line; a failure sets
# $fail for the caller's exit status.
fail=0
result() { if [ "$1" = 0 ]; then echo "PASS $2"; else echo "FAIL $2"; fail=1; fi; }

# Commit directories of the series, in order.
series_dirs() { grep -v '^[[:space:]]*\(#\|$\)' "$TOP/series/series"; }

# The kbuild target of a C file's object. amdkfd's files are built as part
# of amdgpu, from amdgpu's Makefile, so their objects are named from there.
objpath() {
	case $1 in
	drivers/gpu/drm/amd/amdkfd/*) echo "drivers/gpu/drm/amd/amdgpu/../amdkfd/$(basename "${1%.c}").o" ;;
	*) echo "${1%.c}.o" ;;
	esac
}

# Run a command holding the machine-wide build lock.
locked() { flock "$LOCK" "$@"; }
