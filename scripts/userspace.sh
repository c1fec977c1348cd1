#!/bin/bash
# SPDX-License-Identifier: MIT
# Userspace pieces, each printed as PASS/FAIL: install the series' uAPI
# headers, build the kselftests against them and run them (without an
# amdgpu render node they must skip, exit 4); build the reference library
# and tools, run their unit tests, install the library and build a program
# against it through its pkg-config file, and check that the tools report
# a missing device.
. "$(dirname "$0")/common.sh"
have_amdgpu() {
	local n
	for n in /sys/class/drm/renderD*/device/driver; do
		[ "$(basename "$(readlink -f "$n" 2>/dev/null)")" = amdgpu ] && return 0
	done
	return 1
}

hdr=$BUILD/uapi
rm -rf "$hdr"
set +e
make -s -C "$KTREE" O="$hdr" ARCH=x86_64 headers_install INSTALL_HDR_PATH="$hdr/usr" > "$BUILD/uapi.log" 2>&1
result $? "uAPI headers_install"
grep -q DRM_IOCTL_AMDGPU_PROFILER "$hdr/usr/include/drm/amdgpu_drm.h" 2>/dev/null
result $? "installed amdgpu_drm.h carries the profiler uAPI"

# kselftests (part of the series), built out of tree against those headers.
st=$BUILD/selftests
rm -rf "$st"
make -s -C "$KTREE/tools/testing/selftests" TARGETS=drivers/gpu/amdgpu O="$st" \
	KHDR_INCLUDES="-isystem $hdr/usr/include" > "$BUILD/selftests.log" 2>&1
rc=$?
bin=$(find "$st" -type f -name amdgpu_profiler -perm -u+x | head -n 1)
[ "$rc" = 0 ] && [ -n "$bin" ]
result $? "kselftest builds (drivers/gpu/amdgpu)"
if [ -n "$bin" ]; then
	"$bin" > "$BUILD/selftests-run.log" 2>&1
	rc=$?
	tail -n 3 "$BUILD/selftests-run.log"
	if have_amdgpu; then
		[ "$rc" = 0 ] || [ "$rc" = 4 ]
		result $? "kselftest run on this machine's amdgpu device (exit $rc)"
	else
		[ "$rc" = 4 ]
		result $? "kselftest skips without an amdgpu device (exit $rc, want 4)"
	fi
fi

# Reference tool, library and their tests. What they need from Debian:
# pkg-config and libdrm-dev (libdrm_amdgpu); a missing one is named.
tool=$TOP/tools/amdgpu-profiler
us=$BUILD/userspace
rm -rf "$us"
mkdir -p "$us"
need_pkg() { # need_pkg <what> <debian package> <test command...>
	local what=$1 pkg=$2; shift 2
	if "$@" > /dev/null 2>&1; then return 0; fi
	echo "FAIL $what: missing Debian package $pkg (apt-get install $pkg)"
	fail=1
	return 1
}
# Unit tests run under valgrind when it is installed (package valgrind).
memcheck=()
command -v valgrind > /dev/null 2>&1 &&
	memcheck=(valgrind -q --error-exitcode=99 --leak-check=full)
run_unit() { # run_unit <what> <binary>: "N passed, 0 failed" and exit 0
	local what=$1 bin=$2 log rc
	log=$us/$(basename "$bin").log
	"${memcheck[@]}" "$bin" > "$log" 2>&1
	rc=$?
	tail -n 1 "$log"
	[ "$rc" = 0 ] && tail -n 1 "$log" | grep -Eq '^[0-9]+ passed, 0 failed$'
	result $? "$what${memcheck:+ (under valgrind)}"
}

have_tools=1
need_pkg "pkg-config" pkg-config command -v pkg-config || have_tools=0
need_pkg "libdrm_amdgpu" libdrm-dev pkg-config --exists libdrm_amdgpu || have_tools=0
if [ "$have_tools" = 1 ]; then
make -s -C "$tool" clean > /dev/null 2>&1
make -s -C "$tool" UAPI_INCLUDE="$hdr/usr/include" > "$us/build.log" 2>&1
result $? "reference userspace builds with -Wall -Wextra -Werror (see $us/build.log)"
run_unit "libamdgpu_profiler unit test" "$tool/test_amdgpu_profiler"

# The library as a distribution would install it, and a program built
# against it through the installed pkg-config file.
stage=$us/stage
make -s -C "$tool" UAPI_INCLUDE="$hdr/usr/include" install DESTDIR="$stage" \
	PREFIX=/usr > "$us/install.log" 2>&1
result $? "make install DESTDIR=$stage PREFIX=/usr"
lib=$stage/usr/lib
[ -f "$lib/libamdgpu_profiler.so.1.0.0" ] &&
	[ "$(readlink "$lib/libamdgpu_profiler.so.1")" = libamdgpu_profiler.so.1.0.0 ] &&
	[ "$(readlink "$lib/libamdgpu_profiler.so")" = libamdgpu_profiler.so.1 ] &&
	[ -f "$stage/usr/include/amdgpu_profiler.h" ] &&
	[ -f "$lib/pkgconfig/libamdgpu_profiler.pc" ] &&
	[ ! -e "$stage/usr/include/amdgpu_spm_uapi.h" ]
result $? "installed: libamdgpu_profiler.so.1.0.0 and its links, amdgpu_profiler.h, libamdgpu_profiler.pc; no internal header"
readelf -d "$lib/libamdgpu_profiler.so.1.0.0" 2>/dev/null |
	grep -q 'SONAME.*\[libamdgpu_profiler.so.1\]'
result $? "soname is libamdgpu_profiler.so.1"
nm -D --defined-only "$lib/libamdgpu_profiler.so.1.0.0" | awk '$2 == "T" { print $3 }' |
	sort > "$us/symbols"
diff -u "$tool/libamdgpu_profiler.symbols" "$us/symbols" > "$us/symbols.diff"
result $? "exported symbols are exactly libamdgpu_profiler.symbols (fd-level calls hidden)"
# Point the installed .pc at the staging area, as if it were installed.
mkdir -p "$us/pc"
sed "s|^prefix=.*|prefix=$stage/usr|" "$lib/pkgconfig/libamdgpu_profiler.pc" > "$us/pc/libamdgpu_profiler.pc"
flags=$(PKG_CONFIG_PATH=$us/pc pkg-config --cflags --libs libamdgpu_profiler 2>&1)
result $? "pkg-config --cflags --libs libamdgpu_profiler: $flags"
# shellcheck disable=SC2086 # $flags is a list of compiler flags
cc -std=gnu11 -Wall -Wextra -Werror -o "$us/consumer" "$tool/tests/consumer.c" $flags \
	> "$us/consumer.log" 2>&1
result $? "a consumer compiles and links against the installed library via pkg-config"
out=$(LD_LIBRARY_PATH=$lib "$us/consumer" 2>&1)
rc=$?
echo "$out" | head -n 3
if have_amdgpu; then
	[ "$rc" = 0 ]
	result $? "the consumer runs on this machine's amdgpu device"
else
	[ "$rc" = 0 ] && echo "$out" | grep -q 'no amdgpu device'
	result $? "the consumer runs and reports no amdgpu device"
fi

# Usage errors: exit 2, what is wrong and the valid range, a usage line.
rec=$tool/amdgpu-spm-record
usage_case() { # usage_case <what> <expected text> <args...>
	local what=$1 want=$2 out rc; shift 2
	out=$("$rec" "$@" 2>&1)
	rc=$?
	[ "$rc" = 2 ] && echo "$out" | grep -q -- "$want" &&
		echo "$out" | grep -q '^Usage: amdgpu-spm-record' &&
		[ "$(echo "$out" | wc -l)" -le 4 ]
	result $? "amdgpu-spm-record $* $what (exit $rc)"
}
usage_case "is refused" "invalid --duration 'nan'" -t nan
usage_case "is refused" "invalid --duration 'inf'" -t inf
usage_case "names the real size range" "from 64 per XCC to 256M" -s 1G
usage_case "names the real size range" "from 64 per XCC to 256M" -s 99999999999999999999M
usage_case "names the minimum for 8 XCCs" "at least 512 bytes for 8 XCCs" -x 8 -s 256
usage_case "is refused" "invalid --timeout" -T -1
usage_case "gives a short usage line" "unrecognized option" --no-such-option
usage_case "gives a short usage line" "unexpected argument" extra

if ! have_amdgpu && [ -x "$tool/amdgpu-spm-record" ]; then
	out=$("$tool/amdgpu-spm-record" --duration 1 -o /dev/null 2>&1)
	rc=$?
	echo "$out" | head -n 2
	[ "$rc" != 0 ] && echo "$out" | grep -qi 'no amdgpu'
	result $? "amdgpu-spm-record reports the missing device (exit $rc)"
fi
fi
set -e
make -s -C "$tool" clean > /dev/null 2>&1 || true
exit $fail
