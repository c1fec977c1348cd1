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

# The KUnit configurations, each with its own kunitconfig and build
# directory in $KTREE (so that both stay incremental), run by make check
# one after the other; KUNIT_CONFIG=<name> chooses one for scripts/kunit.sh
# (make kunit). kunit_config <name> sets, for it:
#   KCONF_LABEL   how its result lines begin ("kunit (no PREEMPT_COUNT)")
#   KCONF_FILE    its kunitconfig, relative to $KTREE
#   KCONF_DIR     its kunit.py --build_dir, relative to $KTREE
#   KCONF_LOGS    the prefix of its logs ($BUILD/kunit.raw, ...)
#   KCONF_SUITES  the suites it runs (kunit-result.py --suites): a suite
#                 registered in tests/ and matched here that reports
#                 nothing fails the run, and so does one that ran unasked
#   KCONF_GLOB    the kunit.py filter glob that runs them in one boot
#                 (the kernel takes one glob; empty: every suite)
#   KCONF_OFF     options its .config must not have (=y): a kernel that is
#                 not what the label says fails the run
#   KCONF_BOOT_HAS, KCONF_BOOT_NOT  lines the kernel that ran prints, or
#                 must not print, at boot: the same, from the kernel itself
#   KUNIT_OPTS    the kunit.py options of its builds and runs
# default: every suite, with lockdep and the atomic-sleep check.
# nopc: the peer-memory suites (and the leak scan, which must run last) on
# PREEMPT_NONE without PREEMPT_COUNT (see its kunitconfig's comment).
KUNIT_CONFIGS=(default nopc)
kunit_config() {
	case $1 in
	default)
		KCONF_LABEL=kunit
		KCONF_FILE=drivers/gpu/drm/amd/amdgpu/tests/.kunitconfig
		KCONF_DIR=.kunit
		KCONF_LOGS=$BUILD/kunit
		KCONF_SUITES=('*')
		KCONF_GLOB=
		KCONF_OFF=()
		# lockdep_init() prints its stack-trace memory only with
		# PROVE_LOCKING (kernel/locking/lockdep.c); preempt_dynamic_init()
		# the mode with PREEMPT_DYNAMIC, hence PREEMPT_COUNT
		# (kernel/sched/core.c)
		KCONF_BOOT_HAS=("memory used for stack traces:" "Dynamic Preempt:")
		KCONF_BOOT_NOT=() ;;
	nopc)
		KCONF_LABEL="kunit (no PREEMPT_COUNT)"
		KCONF_FILE=drivers/gpu/drm/amd/amdgpu/tests/no-preempt-count.kunitconfig
		KCONF_DIR=.kunit-nopc
		KCONF_LOGS=$BUILD/kunit-nopc
		KCONF_SUITES=('amdgpu_peer*' 'amdgpu_rdma*' amdgpu_kunit_kmemleak)
		# amdgpu_ then ku(nit), pe(er) or rd(ma); kunit-result.py fails
		# the run if it matches a suite KCONF_SUITES does not name
		KCONF_GLOB='amdgpu_[kpr][ued]*'
		KCONF_OFF=(PREEMPT_COUNT PREEMPTION PROVE_LOCKING DEBUG_ATOMIC_SLEEP)
		# see default; lockdep itself is there (DEBUG_LOCK_ALLOC)
		KCONF_BOOT_HAS=("Lock dependency validator:")
		KCONF_BOOT_NOT=("memory used for stack traces:" "Dynamic Preempt:") ;;
	*) die "no KUnit configuration '$1' (there are: ${KUNIT_CONFIGS[*]})" ;;
	esac
	KCONF_NAME=$1
	KUNIT_OPTS=(--arch=x86_64 --kunitconfig="$KCONF_FILE"
		--build_dir="$KCONF_DIR" --jobs="$JOBS" --make_options "CC=$KCC")
}
# The options every kunit.py build and run of the default configuration
# shares (make kernel, make mutate, make bench, the self-test's boots).
kunit_config default

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
