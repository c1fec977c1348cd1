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

# The sender: author, committer and Signed-off-by of every commit of the
# generated series, from GIT_AUTHOR_NAME / GIT_AUTHOR_EMAIL or else git
# config user.name / user.email. Without one, a placeholder that lets the
# series be built and tested but not mailed.
PLACEHOLDER_NAME="No Identity Set"
PLACEHOLDER_EMAIL="not-mailable@example.invalid"
SENDER_NAME=${GIT_AUTHOR_NAME:-$(git -C "$TOP" config user.name 2>/dev/null || true)}
SENDER_EMAIL=${GIT_AUTHOR_EMAIL:-$(git -C "$TOP" config user.email 2>/dev/null || true)}
if [ -z "$SENDER_NAME" ] || [ -z "$SENDER_EMAIL" ]; then
	SENDER_NAME=$PLACEHOLDER_NAME
	SENDER_EMAIL=$PLACEHOLDER_EMAIL
fi
# Used for every commit of the series: the committer is the sender too, so
# that "git commit -s" signs off as the author.
sender_env() {
	SENDER_ENV=(GIT_AUTHOR_NAME="$SENDER_NAME" GIT_AUTHOR_EMAIL="$SENDER_EMAIL"
		GIT_COMMITTER_NAME="$SENDER_NAME" GIT_COMMITTER_EMAIL="$SENDER_EMAIL")
}
sender_env
# The name as git writes it (git drops leading and trailing "." "," etc.).
if ident=$(env "${SENDER_ENV[@]}" git var GIT_AUTHOR_IDENT 2>/dev/null); then
	SENDER_NAME=${ident% <*}
	sender_env
fi

# Addresses no mail reaches (RFC 2606 / RFC 6761 names).
RESERVED_MAIL='[A-Za-z0-9._%+-]+@([A-Za-z0-9-]+\.)*(example\.(org|com|net)|example|invalid|test|localhost|local)\b'

# sender_warning: the reasons the series is not mailable as it is, one
# line each (nothing when it is).
sender_warning() {
	if [ "$SENDER_EMAIL" = "$PLACEHOLDER_EMAIL" ]; then
		echo "WARNING: no git identity: the series is authored and signed off by the placeholder"
		echo "WARNING: '$SENDER_NAME <$SENDER_EMAIL>' and is NOT MAILABLE. Set yours with"
		echo "WARNING: git config --global user.name 'Your Name'; git config --global user.email you@your.domain"
		echo "WARNING: (or GIT_AUTHOR_NAME / GIT_AUTHOR_EMAIL) and run make again."
	elif echo "$SENDER_EMAIL" | grep -Eq "^$RESERVED_MAIL\$"; then
		echo "WARNING: the git identity's address $SENDER_EMAIL is at a reserved domain that"
		echo "WARNING: receives no mail: the series is NOT MAILABLE under it."
	fi
}

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
