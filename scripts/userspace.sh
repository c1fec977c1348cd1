#!/bin/bash
# SPDX-License-Identifier: MIT
# Userspace pieces, each printed as PASS/FAIL: install the series' uAPI
# headers, build the kselftests against them and run them (without an
# amdgpu render node they must skip, exit 4), build the reference tool and
# run its unit test, and check that the tool reports a missing device.
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

# Reference tool and its unit test.
tool=$TOP/tools/amdgpu-profiler
make -s -C "$tool" clean > /dev/null 2>&1
make -s -C "$tool" UAPI_INCLUDE="$hdr/usr/include" > "$BUILD/tool.log" 2>&1
result $? "amdgpu-spm-record builds"
make -s -C "$tool" UAPI_INCLUDE="$hdr/usr/include" test > "$BUILD/tool-test.log" 2>&1
rc=$?
tail -n 1 "$BUILD/tool-test.log"
tail -n 1 "$BUILD/tool-test.log" | grep -Eq '^[0-9]+ passed, 0 failed$'
[ "$rc" = 0 ] && [ $? = 0 ]
result $? "amdgpu-spm-record unit test"
if ! have_amdgpu && [ -x "$tool/amdgpu-spm-record" ]; then
	out=$("$tool/amdgpu-spm-record" --duration 1 -o /dev/null 2>&1)
	rc=$?
	echo "$out" | head -n 2
	[ "$rc" != 0 ] && echo "$out" | grep -qi 'no amdgpu'
	result $? "amdgpu-spm-record reports the missing device (exit $rc)"
fi
set -e
make -s -C "$tool" clean > /dev/null 2>&1 || true
exit $fail
