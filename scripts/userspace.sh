#!/bin/bash
# SPDX-License-Identifier: MIT
# Userspace pieces, each printed as PASS/FAIL: install the series' uAPI
# headers, build the kselftests against them and run them (without an
# amdgpu render node they must skip, exit 4); build the reference library
# and tools, run their unit tests, install the library and build a program
# against it through its pkg-config file, and check that the tools report
# a missing device.
. "$(dirname "$0")/common.sh"
# A missing libdrm-dev or libhsakmt-dev is named in a FAIL line of its own
require userspace "${PKGS_USERSPACE[@]}" || exit 1
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

# The SPM drain core of the series as a native program: its tests under
# ASan and UBSan (tools/testing/amdgpu_spm, part of the series).
make -s -C "$KTREE/tools/testing/amdgpu_spm" clean > /dev/null 2>&1
make -s -C "$KTREE/tools/testing/amdgpu_spm" UAPI_INCLUDE="$hdr/usr/include" \
	run_tests > "$BUILD/spm-native.log" 2>&1
rc=$?
tail -n 1 "$BUILD/spm-native.log" | grep -Eq '^[0-9]+ passed, 0 failed$' && [ "$rc" = 0 ]
result $? "SPM drain core, native, ASan+UBSan: $(tail -n 1 "$BUILD/spm-native.log") (see $BUILD/spm-native.log)"

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
	if have_amdgpu && [ "$rc" = 4 ]; then
		# Not a pass: with a device here, a skip is unexpected unless
		# scripts/allowed-skips names it (a GPU without SPM, say)
		echo "SKIP kselftest run: every test skipped on this machine's amdgpu device (exit 4)"
	elif have_amdgpu; then
		[ "$rc" = 0 ]
		result $? "kselftest run on this machine's amdgpu device (exit $rc)"
	elif [ "$rc" = 4 ]; then
		echo "SKIP kselftest run: no amdgpu device here (it exited 4, kselftest's skip)"
	else
		result 1 "kselftest skips without an amdgpu device (exit $rc, want 4)"
	fi
	# The harness's -l and -h need no device.
	"$bin" -l > "$BUILD/selftests-list.log" 2>&1
	rc=$?
	[ "$rc" = 4 ] && grep -q 'share_header_words' "$BUILD/selftests-list.log" &&
		grep -q 'privilege_policy' "$BUILD/selftests-list.log" &&
		grep -q 'stream_cycles' "$BUILD/selftests-list.log"
	result $? "kselftest -l lists the tests without a device (exit $rc, $(grep -cv '^\(#\|-\|global\)' "$BUILD/selftests-list.log") tests)"
	"$bin" -h > "$BUILD/selftests-help.log" 2>&1
	rc=$?
	[ "$rc" = 4 ] && grep -q '^Usage: .*-l' "$BUILD/selftests-help.log"
	result $? "kselftest -h prints its usage without a device (exit $rc)"
fi
# The share checker of the stream_cycles kselftest, against made-up shares
# (one fault each) and the start/stop streams decoded back: needs no device.
chk=$(find "$st" -type f -name amdgpu_spm_checker -perm -u+x | head -n 1)
if [ -n "$chk" ]; then
	"$chk" > "$BUILD/selftests-checker.log" 2>&1
	rc=$?
	[ "$rc" = 0 ] && grep -q '^# Totals: pass:[1-9][0-9]* fail:0 ' "$BUILD/selftests-checker.log"
	result $? "kselftest share checker, no device needed: $(grep '^# Totals' "$BUILD/selftests-checker.log") (exit $rc)"
else
	result 1 "kselftest share checker (amdgpu_spm_checker) was built"
fi

# IGT keeps not-yet-merged uAPI in include/drm-uapi-experimental/: the
# copy the IGT test uses must say what the series' amdgpu_drm.h says.
igt=$TOP/tools/testing/igt
mkdir -p "$BUILD/igt-check"
cc -Wall -Wextra -Werror -DEXPERIMENTAL -I"$igt/include/drm-uapi-experimental" \
	-I"$hdr/usr/include/drm" -o "$BUILD/igt-check/layout-igt" "$igt/check/uapi_layout.c" \
	> "$BUILD/igt-check/build.log" 2>&1 &&
	cc -Wall -Wextra -Werror -isystem "$hdr/usr/include" -o "$BUILD/igt-check/layout-kernel" \
		"$igt/check/uapi_layout.c" >> "$BUILD/igt-check/build.log" 2>&1 &&
	"$BUILD/igt-check/layout-igt" > "$BUILD/igt-check/igt.txt" &&
	"$BUILD/igt-check/layout-kernel" > "$BUILD/igt-check/kernel.txt"
rc=$?
if grep -q '^1.1 ' "$BUILD/igt-check/kernel.txt" 2>/dev/null; then
	cmp -s "$BUILD/igt-check/igt.txt" "$BUILD/igt-check/kernel.txt"
else	# the series' header is still 1.0: compare what it has
	grep -v '^1.1 ' "$BUILD/igt-check/igt.txt" 2>/dev/null | cmp -s - "$BUILD/igt-check/kernel.txt"
fi
same=$?
[ "$rc" = 0 ] && [ "$same" = 0 ]
result $? "IGT's drm-uapi-experimental/amdgpu_profiler_drm.h matches the installed amdgpu_drm.h ($(wc -l < "$BUILD/igt-check/kernel.txt" 2>/dev/null) numbers, sizes and offsets)"

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
make -s -C "$tool" UAPI_INCLUDE="$hdr/usr/include" header-check > "$us/header-check.log" 2>&1
result $? "the uAPI header and amdgpu_profiler.h compile as C11 and as C++17 with -Wpedantic -Werror (see $us/header-check.log)"
# Profiler uAPI 1.1 names the share header's reserved words. The code
# carries those names under #ifndef, so it must build against the series'
# header and against the other version: make that one from it.
alt=$us/uapi-alt/usr/include
mkdir -p "$alt"
cp -r "$hdr/usr/include/." "$alt/"
if grep -q 'xcc_info' "$hdr/usr/include/drm/amdgpu_drm.h"; then
	alt_ver=1.0
	perl -0pi -e 's/(struct drm_amdgpu_spm_buffer_header \{.*?)union \{.*?\};\s*\};/$1__u32 reserved[5];\n};/s;
		s/struct drm_amdgpu_spm_header_info \{.*?\};\n//s;
		s/^#define AMDGPU_SPM_HDR_(?:[^\n]*\\\n)*[^\n]*\n//mg;
		s/^#define AMDGPU_SPM_LOSS_[^\n]*\n//mg' "$alt/drm/amdgpu_drm.h"
else
	alt_ver=1.1
	perl -0pi -e 's/(struct drm_amdgpu_spm_buffer_header \{.*?)__u32 reserved\[5\];/$1union {\n\t\t__u32 reserved[5];\n\t\tstruct drm_amdgpu_spm_header_info info;\n\t};/s;
		s/(struct drm_amdgpu_spm_buffer_header \{)/struct drm_amdgpu_spm_header_info {\n\t__u32 xcc_info;\n\t__u32 seq;\n\t__u32 start_ns_lo;\n\t__u32 start_ns_hi;\n\t__u32 last_us;\n};\n\n$1/;
		s/(#define AMDGPU_PROFILER_OP_GET_VER)/#define AMDGPU_SPM_HDR_XCC(info)\t\t((info) & 0xff)\n#define AMDGPU_SPM_HDR_NUM_SHARES(info)\t(((info) >> 8) & 0xff)\n#define AMDGPU_SPM_HDR_SHARE(info)\t\t(((info) >> 16) & 0xff)\n#define AMDGPU_SPM_HDR_XCC_INFO(xcc, num, share) \\\n\t((xcc) | (num) << 8 | (share) << 16)\n$1/' "$alt/drm/amdgpu_drm.h"
fi
alt_ok=0
cmp -s "$hdr/usr/include/drm/amdgpu_drm.h" "$alt/drm/amdgpu_drm.h" && alt_ok=1
for f in amdgpu_spm_shares.c amdgpu_profiler_fd.c amdgpu-spm-record.c amdgpu-spm-dump.c spm_submit.c \
	tests/fake_amdgpu.c test_amdgpu_profiler.c $(pkg-config --exists libhsakmt 2>/dev/null && echo hsakmt_spm.c); do
	# shellcheck disable=SC2046 # compiler flags
	cc -fsyntax-only -std=gnu11 -Wall -Wextra -Werror -isystem "$alt" -I"$tool" \
		$(pkg-config --cflags libdrm_amdgpu $(pkg-config --exists libhsakmt 2>/dev/null && echo libhsakmt)) \
		"$tool/$f" >> "$us/uapi-alt.log" 2>&1 || alt_ok=1
done
cc -fsyntax-only -Wall -isystem "$alt" \
	"$KTREE/tools/testing/selftests/drivers/gpu/amdgpu/amdgpu_profiler.c" >> "$us/uapi-alt.log" 2>&1 || alt_ok=1
[ "$alt_ok" = 0 ]
result $? "the tools and the kselftest also build against a uAPI $alt_ver amdgpu_drm.h (see $us/uapi-alt.log)"
run_unit "libamdgpu_profiler unit test" "$tool/test_amdgpu_profiler"
run_unit "recording file format unit test" "$tool/tests/test_spm_file"
run_unit "libamdgpu_profiler device-handle calls against the fake kernel" "$tool/tests/test_libapi"
run_unit "SPM start/stop streams submitted through libdrm's CS API, run by the fake kernel" "$tool/tests/test_spm_submit"
# The hardware tests carry their own copies of the cycle-counter streams:
# built from the kselftest's and the IGT test's sources as they are, they
# must decode to the library's streams.
make -s -C "$tool" UAPI_INCLUDE="$hdr/usr/include" tests/test_stream_copies >> "$us/build.log" 2>&1
run_unit "the kselftest's and IGT test's stream copies decode to the library's streams" "$tool/tests/test_stream_copies"
run_unit "amdgpu-spm-record's error paths against the fake render node" "$tool/tests/test_record"
run_unit "SPM programming (GC 9.4.x): PM4 streams decoded back, samples of an RLC model decoded into the values put in" \
	"$tool/tests/test_spm_program"

# The hsakmt provider: libhsaKmtSPM* over the profiler ioctl for an
# unmodified ROCm stack (LD_PRELOAD). Built against Debian's hsakmt.h and
# linked, for the interposition test, against Debian's libhsakmt.so.1.
prov=$tool/libhsakmt_amdgpu_spm.so
interpose=$tool/tests/hsakmt_interpose
if need_pkg "hsakmt provider (hsakmt.h, libhsakmt.pc)" libhsakmt-dev pkg-config --exists libhsakmt; then
	[ -f "$prov" ] && [ -x "$tool/tests/test_hsakmt_spm" ] && [ -x "$interpose" ]
	result $? "hsakmt provider and its tests build against Debian's hsakmt.h"
	run_unit "hsakmt provider unit test (fake topology and ioctl, aqlprofile's calling pattern)" \
		"$tool/tests/test_hsakmt_spm"
	nm -D --defined-only "$prov" | awk '{ print $3 }' | sort | tr '\n' ' ' > "$us/provider.symbols"
	[ "$(cat "$us/provider.symbols")" = "HSAKMT_1 hsaKmtSPMAcquire@@HSAKMT_1 hsaKmtSPMRelease@@HSAKMT_1 hsaKmtSPMSetDestBuffer@@HSAKMT_1 " ]
	result $? "the provider exports only hsaKmtSPM{Acquire,Release,SetDestBuffer}, in libhsakmt's HSAKMT_1 version node"
	readelf --dyn-syms -W "$interpose" | grep -q 'UND hsaKmtSPMAcquire@HSAKMT_1'
	result $? "the interposition test binds hsaKmtSPMAcquire@HSAKMT_1 from libhsakmt.so.1, as ROCr does"
	"$interpose" > "$us/interpose-plain.txt" 2>&1
	rc=$?
	grep -q 'hsaKmtSPMAcquire is defined in .*/libhsakmt\.so\.1$' "$us/interpose-plain.txt"
	result $? "without LD_PRELOAD hsaKmtSPMAcquire is Debian's libhsakmt.so.1 (exit $rc)"
	HSAKMT_SPM_DEBUG=1 LD_PRELOAD=$prov "$interpose" > "$us/interpose-preload.txt" 2>&1
	rc=$?
	sed 's/^/  /' "$us/interpose-preload.txt"
	grep -q 'hsaKmtSPMAcquire is defined in .*/libhsakmt_amdgpu_spm\.so$' "$us/interpose-preload.txt" &&
		grep -q 'hsaKmtOpenKFD is defined in .*/libhsakmt\.so\.1$' "$us/interpose-preload.txt"
	result $? "with LD_PRELOAD the provider interposes hsaKmtSPM* and nothing else"
	plain_st=$(grep -o 'hsaKmtSPMAcquire(1): status [0-9]*' "$us/interpose-plain.txt")
	if ! have_amdgpu; then
		[ "$rc" = 0 ] && grep -q 'no amdgpu device' "$us/interpose-preload.txt" &&
			grep -q 'no KFD topology.*libhsakmt (KFD)' "$us/interpose-preload.txt" &&
			[ -n "$plain_st" ] && grep -q "^$plain_st " "$us/interpose-preload.txt"
		result $? "no amdgpu device here: the provider says so and hands the calls to the real libhsakmt (${plain_st#*: }, as without it)"
	fi
	# A fake KFD topology (CPU node 0, GPU node 1 with 2 XCCs on
	# renderD128) and the fake render node behind it.
	fr=$us/fake-root
	ft=$fr/sys/class/kfd/kfd/topology/nodes
	mkdir -p "$ft/0" "$ft/1" "$fr/dev/dri" "$fr/sys/module/amdgpu/parameters"
	echo 1 > "$fr/sys/module/amdgpu/parameters/spm_paranoid"
	echo 0 > "$ft/0/gpu_id"
	echo "cpu_cores_count 16" > "$ft/0/properties"
	echo 42117 > "$ft/1/gpu_id"
	printf 'simd_count 304\ndrm_render_minor 128\nnum_xcc 2\n' > "$ft/1/properties"
	provider_run() { # provider_run <log> <FAKE_AMDGPU config> <args...>
		local log=$1 cfg=$2; shift 2
		HSAKMT_SPM_DEBUG=1 HSAKMT_SPM_ROOT=$fr FAKE_AMDGPU_NODE=$fr/dev/dri/renderD128 \
			FAKE_AMDGPU=$cfg LD_PRELOAD="$prov $tool/tests/fake_amdgpu_preload.so" \
			"$interpose" "$@" > "$log" 2>&1
	}
	provider_run "$us/provider-1.1.txt" "version=1.1,xcc=2,bytes=8192,fill_ms=5,stop_call=10" 1 8 20
	rc=$?
	sed 's/^/  /' "$us/provider-1.1.txt"
	[ "$rc" = 0 ] && grep -q 'node 1 (sysfs node 1, gpu_id 42117, 2 XCCs): .*/renderD128, profiler interface 1.1' "$us/provider-1.1.txt" &&
		grep -q 'hsaKmtSPMAcquire(1): status 0' "$us/provider-1.1.txt" &&
		grep -q 'timeout kept, drained' "$us/provider-1.1.txt" &&
		grep -q 'hsaKmtSPMRelease(1): status 0' "$us/provider-1.1.txt"
	result $? "through libhsakmt's symbols: node 1 -> renderD128 over the (fake) ioctl, aqlprofile's loop keeps its timeout and drains"
	provider_run "$us/provider-nover.txt" "version=none" 1
	rc=$?
	[ "$rc" = 0 ] && grep -q 'no DRM_AMDGPU_PROFILER (GET_VER: Invalid argument): libhsakmt (KFD)' "$us/provider-nover.txt" &&
		grep -q "^$plain_st " "$us/provider-nover.txt"
	result $? "a kernel without the profiler: GET_VER fails and the calls go to the real libhsakmt"
	provider_run "$us/provider-nospm.txt" "version=1.1,xcc=2,nospm=1" 1
	rc=$?
	[ "$rc" = 0 ] && grep -q 'ACQUIRE: EOPNOTSUPP: no SPM behind the profiler ioctl here: libhsakmt (KFD) from now on' "$us/provider-nospm.txt" &&
		grep -q 'libhsakmt (KFD) refused it too' "$us/provider-nospm.txt" &&
		grep -q "^$plain_st " "$us/provider-nospm.txt"
	result $? "no SPM behind the profiler ioctl (EOPNOTSUPP, e.g. an SR-IOV VF): the first Acquire goes on to the real libhsakmt"
	# amdgpu.spm_paranoid is the only parameter that refuses ACQUIRE
	# (EPERM); ENODEV is the driver without an SPM VMID. Neither message
	# names another parameter.
	provider_run "$us/provider-EPERM.txt" "version=1.1,xcc=2,acquire_err=EPERM" 1
	rc=$?
	[ "$rc" = 0 ] && grep -q "SPM refused (EPERM): amdgpu\.spm_paranoid is 1 (.*/sys/module/amdgpu/parameters/spm_paranoid)" "$us/provider-EPERM.txt" &&
		! grep -q 'spm_unsafe_vmid0\|EACCES' "$us/provider-EPERM.txt" &&
		grep -q 'hsaKmtSPMRelease(1): status 3' "$us/provider-EPERM.txt"
	result $? "ACQUIRE refused with EPERM: the message says that amdgpu.spm_paranoid refused and reads 1, names no other parameter, Release after it fails cleanly"
	provider_run "$us/provider-ENODEV.txt" "version=1.1,xcc=2,acquire_err=ENODEV" 1
	rc=$?
	[ "$rc" = 0 ] && grep -q 'hsaKmtSPMAcquire(1): status 11' "$us/provider-ENODEV.txt" &&
		grep -q 'no SPM (ENODEV): the amdgpu driver could not set up the VMID that SPM writes through' "$us/provider-ENODEV.txt" &&
		! grep -q 'spm_paranoid\|spm_unsafe_vmid0' "$us/provider-ENODEV.txt" &&
		grep -q 'hsaKmtSPMRelease(1): status 3' "$us/provider-ENODEV.txt"
	result $? "ACQUIRE fails with ENODEV (no SPM VMID): NOT_SUPPORTED, the message says so and names no parameter, Release after it fails cleanly"
	# Debian's real libhsakmt with an open KFD: rocm/fake_kfd_preload.so
	# serves /dev/kfd and the KFD topology, the fake render node the ioctl.
	fk=$tool/rocm/fake_kfd_preload.so
	[ -f "$fk" ]
	result $? "rocm/fake_kfd_preload.c builds with -Wall -Wextra -Werror"
	FAKE_KFD_STATS=1 FAKE_AMDGPU_NODE=/dev/dri/renderD128 \
		FAKE_AMDGPU=version=1.1,xcc=2,bytes=8192,fill_ms=5,stop_call=10 \
		LD_PRELOAD="$prov $fk $tool/tests/fake_amdgpu_preload.so" \
		"$interpose" 1 8 20 > "$us/fakekfd-provider.txt" 2>&1
	rc=$?
	sed 's/^/  /' "$us/fakekfd-provider.txt"
	[ "$rc" = 0 ] && grep -q '^hsaKmtOpenKFD: status 0$' "$us/fakekfd-provider.txt" &&
		grep -q 'hsaKmtSPMAcquire(1): status 0' "$us/fakekfd-provider.txt" &&
		grep -q 'timeout kept, drained' "$us/fakekfd-provider.txt" &&
		grep -q 'RLC_SPM 0,' "$us/fakekfd-provider.txt"
	result $? "Debian's libhsakmt with a (fake) open KFD: the provider serves hsaKmtSPM* over the ioctl, KFD's RLC_SPM never called"
fi

# The library as a distribution would install it, and a program built
# against it through the installed pkg-config file.
stage=$us/stage
make -s -C "$tool" UAPI_INCLUDE="$hdr/usr/include" install DESTDIR="$stage" \
	PREFIX=/usr > "$us/install.log" 2>&1
result $? "make install DESTDIR=$stage PREFIX=/usr"
# The multiarch libdir, as libdrm's (cc -print-multiarch; lib without one)
ma=$(cc -print-multiarch 2>/dev/null)
lib=$stage/usr/lib${ma:+/$ma}
[ -f "$lib/libamdgpu_profiler.so.2.0.0" ] &&
	[ "$(readlink "$lib/libamdgpu_profiler.so.2")" = libamdgpu_profiler.so.2.0.0 ] &&
	[ "$(readlink "$lib/libamdgpu_profiler.so")" = libamdgpu_profiler.so.2 ] &&
	[ -f "$stage/usr/include/libamdgpu_profiler/amdgpu_profiler.h" ] &&
	[ ! -e "$stage/usr/include/amdgpu_profiler.h" ] &&
	[ -f "$lib/pkgconfig/libamdgpu_profiler.pc" ] &&
	! find "$stage" -name amdgpu_spm_uapi.h | grep -q .
result $? "installed: ${lib#"$stage"}/libamdgpu_profiler.so.2.0.0 and its links, include/libamdgpu_profiler/amdgpu_profiler.h, libamdgpu_profiler.pc; no internal header"
readelf -d "$lib/libamdgpu_profiler.so.2.0.0" 2>/dev/null |
	grep -q 'SONAME.*\[libamdgpu_profiler.so.2\]'
result $? "soname is libamdgpu_profiler.so.2"
nm -D --defined-only "$lib/libamdgpu_profiler.so.2.0.0" | awk '$2 == "T" { print $3 }' |
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
		[ "$(echo "$out" | wc -l)" -le 5 ]
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

# Record from the fake render node (tests/fake_amdgpu_preload.so), then
# read, export and chart what was recorded.
fake=$tool/tests/fake_amdgpu_preload.so
dump=$tool/amdgpu-spm-dump
record() { # record <dir> <FAKE_AMDGPU config> <recorder args...>
	local dir=$1 cfg=$2; shift 2
	mkdir -p "$dir"
	FAKE_AMDGPU_NODE=/dev/dri/renderD250 FAKE_AMDGPU=$cfg LD_PRELOAD=$fake \
		"$rec" -d /dev/dri/renderD250 -q -o "$dir/rec.spm" "$@" \
		> "$dir/record.log" 2>&1
}
readback() { # readback <dir>: dump's summary, CSV, raw files and SVG
	local dir=$1
	"$dump" --csv "$dir/rec.csv" --raw "$dir/raw" --svg "$dir/rec.svg" \
		"$dir/rec.spm" > "$dir/dump.txt" 2> "$dir/dump.err"
}
svg_ok() { # svg_ok <file>: well-formed XML, one panel per XCC
	if command -v xmllint > /dev/null 2>&1; then
		xmllint --noout "$1" || return 1
	fi
	grep -q '</svg>' "$1"
}
# uAPI 1.1, partition 1 of a DPX MI300X (XCCs 2 and 3); buffer seq 12
# loses data on XCC 2, seq 20 never reaches userspace.
r11=$us/record-1.1
# fixed=1, sig_call=30: a fixed amount per share and a SIGINT after the
# 30th SET_DEST_BUF end the run, not -t, so seq 20 is reached however
# slow the host is (-t 60 only bounds a run that goes wrong).
record "$r11" "version=1.1,xcc=2,first_xcc=2,bytes=65536,fill_ms=20,fixed=1,sig_call=30,loss_seq=12,gap_seq=20" \
	-t 60 -s 1M -T 30
result $? "amdgpu-spm-record records from a fake 1.1 render node (2 XCCs)"
readback "$r11"
result $? "amdgpu-spm-dump reads the 1.1 recording, writes CSV, raw and SVG"
sed -n '1,12p' "$r11/dump.txt"
grep -q 'shares identified by the kernel' "$r11/dump.txt" &&
	grep -Eq '^ +2 +[0-9]+ +[0-9]+ ' "$r11/dump.txt" &&
	grep -Eq '^ +3 +[0-9]+ +[0-9]+ ' "$r11/dump.txt" &&
	grep -q '^complete:' "$r11/dump.txt"
result $? "the 1.1 recording says which share is which XCC (2 and 3) and is complete"
grep -Eq '^loss: XCC 2: buffer 11,' "$r11/dump.txt" &&
	[ "$(grep -c '^lost: ' "$r11/dump.txt")" = 1 ] &&
	grep -q '^lost: 1 buffer before seq 21' "$r11/dump.txt" &&
	grep -q 'buffers with lost samples: 1 (1 shares); lost buffers: 1;' "$r11/dump.txt"
result $? "amdgpu-spm-dump shows the loss in seq 12 and the gap at seq 20, once for both XCCs"
bytes2=$(awk '$1 == 2 { print $3 }' "$r11/dump.txt")
[ -n "$bytes2" ] && [ "$(stat -c %s "$r11/raw/xcc2.raw")" = "$bytes2" ] &&
	[ "$(awk -F, 'NR > 1 && $4 == 2 { s += $7 } END { print s }' "$r11/rec.csv")" = "$bytes2" ]
result $? "XCC 2's raw file and CSV rows add up to its bytes ($bytes2)"
svg_ok "$r11/rec.svg" && grep -q 'id="xcc2"' "$r11/rec.svg" &&
	grep -q 'id="xcc3"' "$r11/rec.svg" && grep -q 'class="loss"' "$r11/rec.svg" &&
	grep -q 'class="gap"' "$r11/rec.svg"
result $? "the SVG chart has a panel per XCC, the loss and the gap marked"
if command -v rsvg-convert > /dev/null 2>&1; then
	rsvg-convert -o "$r11/rec.png" "$r11/rec.svg"
	result $? "rsvg-convert renders the chart ($r11/rec.png)"
fi
# uAPI 1.0: the recorder works out the XCC count from the share headers.
r10=$us/record-1.0
record "$r10" "version=1.0,xcc=4,bytes=8192,fill_ms=10,fixed=1,sig_call=12,loss_seq=3" -t 60 -s 256K -T 20
result $? "amdgpu-spm-record records from a fake 1.0 render node (4 XCCs)"
readback "$r10"
result $? "amdgpu-spm-dump reads the 1.0 recording"
grep -q 'XCCs: 4 in the records, 4 according to the recorder' "$r10/dump.txt" &&
	grep -q 'identified by position' "$r10/dump.txt" &&
	grep -Eq '^ +0 .* n/a ' "$r10/dump.txt" && svg_ok "$r10/rec.svg"
result $? "the 1.0 recording: 4 XCCs inferred, gaps reported as unknown"
# A cut file is read up to the cut and said to be incomplete (exit 1).
head -c 200000 "$r11/rec.spm" > "$us/cut.spm"
"$dump" "$us/cut.spm" > "$us/cut.txt" 2>&1
[ $? = 1 ] && grep -q 'truncated record data at offset' "$us/cut.txt" &&
	grep -q '^incomplete: no end record' "$us/cut.txt" &&
	grep -Eq '^total: [1-9][0-9]* shares' "$us/cut.txt"
result $? "amdgpu-spm-dump reads a cut recording up to the cut and says where (exit 1)"

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
