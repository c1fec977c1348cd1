# SPDX-License-Identifier: MIT
# Shared settings for the series scripts; sourced, not run.
set -euo pipefail
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
if command -v ccache >/dev/null 2>&1; then KCC="ccache gcc"; else KCC=gcc; fi

# The options every kunit.py build and run of the test kernel shares: the
# same config and build directory, so that builds stay incremental.
KUNIT_OPTS=(--arch=x86_64
	--kunitconfig=drivers/gpu/drm/amd/amdgpu/tests/.kunitconfig
	--build_dir=.kunit --jobs="$JOBS" --make_options "CC=$KCC")

log() { printf '== %s\n' "$*" >&2; }
die() { printf 'error: %s\n' "$*" >&2; exit 1; }

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
