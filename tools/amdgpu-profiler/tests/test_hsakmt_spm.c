// SPDX-License-Identifier: MIT
/*
 * Copyright 2026 The amdgpu profiler series authors
 *
 * Unit test of the hsakmt SPM provider (hsakmt_spm.c), linked in, with a
 * fake KFD topology in a temporary directory (HSAKMT_SPM_ROOT), the fake
 * profiler kernel (fake_amdgpu.c) behind its ioctl seam, and a fake
 * libhsakmt behind its fallback seam. It drives the provider the way
 * aqlprofile does (spm_v2.cpp): Acquire in one thread, SetDestBuffer in a
 * producer thread over three rotating buffers with the timeout set once,
 * calls until 0 bytes after the stop, then Release; Release after a
 * failed Acquire.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <hsakmt.h>

#include "amdgpu_spm_uapi.h"
#include "hsakmt_spm.h"
#include "fake_amdgpu.h"

#include "unit.h"

/* ---- The fake topology ---- */

static char root[64];

static void put(const char *rel, const char *text)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	f = fopen(path, "w");
	if (!f || fputs(text, f) < 0 || fclose(f)) {
		perror(path);
		abort();
	}
}

static void unlink_rel(const char *rel)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	unlink(path);
}

static void mkdirs(const char *rel)
{
	char path[256], *p;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	for (p = path + strlen(root) + 1; (p = strchr(p, '/')); p++) {
		*p = '\0';
		mkdir(path, 0755);
		*p = '/';
	}
	mkdir(path, 0755);
}

#define TOPO "sys/class/kfd/kfd/topology/nodes"

/*
 * sysfs node 0: a CPU; 1: a GPU partition on renderD128 with 2 XCCs;
 * 2: a GPU whose render node this "container" lacks (libhsakmt skips it);
 * 3: a GPU on renderD130 with 1 XCC. So user nodes 0, 1, 2 are sysfs
 * nodes 0, 1, 3, and user node 3 does not exist.
 */
static void make_topology(void)
{
	static const struct {
		const char *gpu_id;
		const char *props;
	} n[] = {
		{ "0\n", "cpu_cores_count 16\nsimd_count 0\nmem_banks_count 1\n" },
		{ "42117\n", "cpu_cores_count 0\nsimd_count 152\ndrm_render_minor 128\nnum_xcc 2\ngfx_target_version 90402\n" },
		{ "17200\n", "cpu_cores_count 0\nsimd_count 152\ndrm_render_minor 129\nnum_xcc 2\n" },
		{ "51000\n", "simd_count 76\ndrm_render_minor 130\nnum_xcc 1\n" },
	};
	char rel[128];
	unsigned int i;

	snprintf(root, sizeof(root), "/tmp/hsakmt-spm-test.XXXXXX");
	if (!mkdtemp(root)) {
		perror("mkdtemp");
		abort();
	}
	for (i = 0; i < 4; i++) {
		snprintf(rel, sizeof(rel), TOPO "/%u", i);
		mkdirs(rel);
		snprintf(rel, sizeof(rel), TOPO "/%u/gpu_id", i);
		put(rel, n[i].gpu_id);
		snprintf(rel, sizeof(rel), TOPO "/%u/properties", i);
		put(rel, n[i].props);
	}
	mkdirs("dev/dri");
	put("dev/dri/renderD128", "");
	put("dev/dri/renderD130", "");
	setenv("HSAKMT_SPM_ROOT", root, 1);
}

static void remove_topology(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	if (system(cmd))
		fprintf(stderr, "could not remove %s\n", root);
}

/* ---- The seams: system calls, the real libhsakmt, messages ---- */

static unsigned int opens, closes;
static char last_open[256];
static int fake_fds[64];

static int t_open(const char *path, int flags)
{
	int fd = open(path, flags);

	if (fd >= 0) {
		opens++;
		snprintf(last_open, sizeof(last_open), "%s",
			 path + strlen(root));
		if (fd < 64)
			fake_fds[fd] = 1;
	}
	return fd;
}

static int t_close(int fd)
{
	closes++;
	fake_amdgpu_close(fd);
	if (fd >= 0 && fd < 64)
		fake_fds[fd] = 0;
	return close(fd);
}

static int t_ioctl(int fd, unsigned long req, void *arg)
{
	int ret = fake_amdgpu_ioctl(fd, req, arg);

	if (ret < 0) {
		errno = -ret;
		return -1;
	}
	return ret;
}

/* The fake libhsakmt: what it was called with; answers like Debian's
 * without an open KFD (INVALID_NODE_UNIT), or Acquire with @real_answer
 * (a KFD that has SPM). */
static unsigned int real_acquire, real_release, real_set_dest;
static HSAuint32 real_node;
static HSAKMT_STATUS real_answer;

static HSAKMT_STATUS r_acquire(HSAuint32 node)
{
	real_acquire++;
	real_node = node;
	return real_answer;
}

static HSAKMT_STATUS r_release(HSAuint32 node)
{
	real_release++;
	real_node = node;
	return HSAKMT_STATUS_INVALID_NODE_UNIT;
}

static HSAKMT_STATUS r_set_dest(HSAuint32 node, HSAuint32 size,
				HSAuint32 *timeout, HSAuint32 *copied,
				void *dest, bool *loss)
{
	(void)size; (void)timeout; (void)copied; (void)dest; (void)loss;
	real_set_dest++;
	real_node = node;
	return HSAKMT_STATUS_INVALID_NODE_UNIT;
}

static bool have_real = true;

static void *t_real(const char *name)
{
	if (!have_real)
		return NULL;
	if (!strcmp(name, "hsaKmtSPMAcquire"))
		return (void *)r_acquire;
	if (!strcmp(name, "hsaKmtSPMRelease"))
		return (void *)r_release;
	if (!strcmp(name, "hsaKmtSPMSetDestBuffer"))
		return (void *)r_set_dest;
	return NULL;
}

static char *msgs;
static size_t msgs_len;

/* Start a test: fake kernel per @cfg, fresh provider state and counters. */
static void setup(const char *cfg)
{
	struct fake_amdgpu_config c;

	if (fake_amdgpu_parse(cfg, &c))
		abort();
	hsakmt_spm_reset();
	fake_amdgpu_reset(&c);
	if (hsakmt_spm_sys.err)
		fclose(hsakmt_spm_sys.err);
	free(msgs);
	msgs = NULL;
	hsakmt_spm_sys.err = open_memstream(&msgs, &msgs_len);
	opens = closes = 0;
	real_acquire = real_release = real_set_dest = 0;
	real_node = 0xdead;
	real_answer = HSAKMT_STATUS_INVALID_NODE_UNIT;
	last_open[0] = '\0';
	have_real = true;
}

/* The fake kernel answers per @cfg from now on; the provider keeps its state. */
static void reconfigure(const char *cfg)
{
	struct fake_amdgpu_config c;

	if (fake_amdgpu_parse(cfg, &c))
		abort();
	fake_amdgpu_reset(&c);
}

static bool said(const char *text)
{
	fflush(hsakmt_spm_sys.err);
	return msgs && strstr(msgs, text);
}

static unsigned int said_times(const char *text)
{
	unsigned int n = 0;
	const char *p;

	fflush(hsakmt_spm_sys.err);
	for (p = msgs; p && (p = strstr(p, text)); p += strlen(text))
		n++;
	return n;
}

static void *buffer(size_t size)
{
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		abort();
	return p;
}

/* ---- Tests ---- */

/* User node ids count CPU nodes and skip GPUs without a render node. */
static void test_node_mapping(void)
{
	HSAuint32 t = 0, copied = 1;
	bool loss = true;

	setup("version=1.0,xcc=2");
	setenv("HSAKMT_SPM_DEBUG", "1", 1);

	/* User node 0 is the CPU: libhsakmt's (KFD's) business. */
	CHECK(hsaKmtSPMAcquire(0) == HSAKMT_STATUS_INVALID_NODE_UNIT);
	CHECK(real_acquire == 1 && real_node == 0);
	CHECK(said("CPU node"));
	CHECK(hsaKmtSPMSetDestBuffer(0, 0, &t, &copied, NULL, &loss) ==
	      HSAKMT_STATUS_INVALID_NODE_UNIT);
	CHECK(real_set_dest == 1);

	/* User node 1: sysfs node 1, renderD128, over the ioctl. */
	CHECK(hsaKmtSPMAcquire(1) == HSAKMT_STATUS_SUCCESS);
	CHECK(!strcmp(last_open, "/dev/dri/renderD128"));
	CHECK(fake_amdgpu_stats()->acquire == 1);
	CHECK(fake_amdgpu_stats()->get_ver == 1);
	CHECK(said("node 1 (sysfs node 1, gpu_id 42117, 2 XCCs)"));
	CHECK(hsaKmtSPMRelease(1) == HSAKMT_STATUS_SUCCESS);
	CHECK(real_acquire == 1 && real_release == 0);

	/* User node 2: sysfs node 3 (node 2's render node is missing). */
	CHECK(hsaKmtSPMAcquire(2) == HSAKMT_STATUS_SUCCESS);
	CHECK(!strcmp(last_open, "/dev/dri/renderD130"));
	CHECK(said("node 2 (sysfs node 3, gpu_id 51000, 1 XCCs)"));
	CHECK(hsaKmtSPMRelease(2) == HSAKMT_STATUS_SUCCESS);

	/* User node 3 does not exist: libhsakmt says so. */
	CHECK(hsaKmtSPMAcquire(3) == HSAKMT_STATUS_INVALID_NODE_UNIT);
	CHECK(real_acquire == 2 && real_node == 3);
	CHECK(said("no node 3 (3 nodes in"));
	/* Far beyond any table too. */
	CHECK(hsaKmtSPMRelease(100000) == HSAKMT_STATUS_INVALID_NODE_UNIT);
	CHECK(real_release == 1 && real_node == 100000);

	/* Resolved once: no further GET_VER, one file per GPU node kept. */
	CHECK(fake_amdgpu_stats()->get_ver == 2);
	CHECK(opens - closes == 2);
	unsetenv("HSAKMT_SPM_DEBUG");
}

/* No topology (no amdgpu here), a kernel without the profiler, disabled. */
static void test_fallback(void)
{
	HSAuint32 t = 5, copied;
	bool loss;

	setup("version=1.1,xcc=2");
	setenv("HSAKMT_SPM_ROOT", "/nonexistent", 1);
	setenv("HSAKMT_SPM_DEBUG", "1", 1);
	CHECK(hsaKmtSPMAcquire(1) == HSAKMT_STATUS_INVALID_NODE_UNIT);
	CHECK(real_acquire == 1 && real_node == 1);
	CHECK(said("no KFD topology at /nonexistent/sys/class/kfd/kfd/topology/nodes"));
	CHECK(said("no amdgpu device here"));
	CHECK(fake_amdgpu_stats()->get_ver == 0);
	setenv("HSAKMT_SPM_ROOT", root, 1);

	/* GET_VER fails: the kernel lacks DRM_AMDGPU_PROFILER. */
	setup("version=none");
	setenv("HSAKMT_SPM_DEBUG", "1", 1);
	CHECK(hsaKmtSPMAcquire(1) == HSAKMT_STATUS_INVALID_NODE_UNIT);
	CHECK(hsaKmtSPMSetDestBuffer(1, 4096, &t, &copied, NULL, &loss) ==
	      HSAKMT_STATUS_INVALID_NODE_UNIT);
	CHECK(hsaKmtSPMRelease(1) == HSAKMT_STATUS_INVALID_NODE_UNIT);
	CHECK(real_acquire == 1 && real_set_dest == 1 && real_release == 1);
	CHECK(real_node == 1);
	CHECK(said("no DRM_AMDGPU_PROFILER (GET_VER: Invalid argument)"));
	CHECK(fake_amdgpu_stats()->acquire == 0);
	CHECK(opens == closes);		/* the render node was closed again */

	/* An interface major this provider does not know. */
	setup("version=2.0");
	CHECK(hsaKmtSPMAcquire(1) == HSAKMT_STATUS_INVALID_NODE_UNIT);
	CHECK(real_acquire == 1);
	CHECK(said("profiler interface 2.0 is not one this provider knows"));

	/* The escape hatch. */
	setup("version=1.1");
	setenv("HSAKMT_SPM_DISABLE", "1", 1);
	CHECK(hsaKmtSPMAcquire(1) == HSAKMT_STATUS_INVALID_NODE_UNIT);
	CHECK(real_acquire == 1 && opens == 0);
	unsetenv("HSAKMT_SPM_DISABLE");

	/* Nothing to fall back to. */
	setup("version=none");
	have_real = false;
	CHECK(hsaKmtSPMAcquire(1) == HSAKMT_STATUS_NOT_SUPPORTED);
	CHECK(said("no libhsakmt to hand the call to"));
	unsetenv("HSAKMT_SPM_DEBUG");
}

/*
 * No SPM behind the profiler ioctl on this device (an SR-IOV VF, or an IP
 * without SPM hooks): the first ACQUIRE's EOPNOTSUPP sends the node to the
 * real libhsakmt, which may reach a KFD that has SPM there. Quiet when KFD
 * acquires; said when it refuses too. After any other answer EOPNOTSUPP
 * means the device went away: no fallback then.
 */
static void test_no_spm_fallback(void)
{
	HSAuint32 t = 7, copied;
	bool loss;

	/* KFD (ROCm's DKMS driver, say) has SPM on this device. */
	setup("version=1.1,xcc=2,nospm=1");
	real_answer = HSAKMT_STATUS_SUCCESS;
	CHECK(hsaKmtSPMAcquire(1) == HSAKMT_STATUS_SUCCESS);
	CHECK(fake_amdgpu_stats()->acquire == 1);
	CHECK(real_acquire == 1 && real_node == 1);
	CHECK(!said("EOPNOTSUPP"));
	/* Everything after it on that node is KFD's. */
	CHECK(hsaKmtSPMSetDestBuffer(1, 4096, &t, &copied, NULL, &loss) ==
	      HSAKMT_STATUS_INVALID_NODE_UNIT);
	CHECK(hsaKmtSPMRelease(1) == HSAKMT_STATUS_INVALID_NODE_UNIT);
	CHECK(real_set_dest == 1 && real_release == 1);
	CHECK(hsaKmtSPMAcquire(1) == HSAKMT_STATUS_SUCCESS);
	CHECK(real_acquire == 2);
	CHECK(fake_amdgpu_stats()->acquire == 1);
	CHECK(fake_amdgpu_stats()->set_dest_buf == 0);
	/* Only that node: node 2 (renderD130) still asks the profiler. */
	reconfigure("version=1.1,xcc=1");
	CHECK(hsaKmtSPMAcquire(2) == HSAKMT_STATUS_SUCCESS);
	CHECK(fake_amdgpu_stats()->acquire == 1 && real_acquire == 2);
	CHECK(hsaKmtSPMRelease(2) == HSAKMT_STATUS_SUCCESS);

	/* Neither has SPM: the user is told why. */
	setup("version=1.1,xcc=2,nospm=1");
	CHECK(hsaKmtSPMAcquire(1) == HSAKMT_STATUS_INVALID_NODE_UNIT);
	CHECK(real_acquire == 1);
	CHECK(said("no SPM on this device through the profiler ioctl (EOPNOTSUPP"));
	CHECK(said("libhsakmt (KFD) refused it too (status 5)"));

	/* No libhsakmt to hand it to: the profiler's answer. */
	setup("version=1.1,xcc=2,nospm=1");
	have_real = false;
	errno = 0;
	CHECK(hsaKmtSPMAcquire(1) == HSAKMT_STATUS_NOT_SUPPORTED);
	CHECK(errno == EOPNOTSUPP);

	/* The device had SPM (EPERM came after the EOPNOTSUPP check), then went away. */
	setup("version=1.1,xcc=2,acquire_err=EPERM");
	CHECK(hsaKmtSPMAcquire(1) == HSAKMT_STATUS_NOT_SUPPORTED);
	reconfigure("version=1.1,xcc=2,nospm=1");
	errno = 0;
	CHECK(hsaKmtSPMAcquire(1) == HSAKMT_STATUS_NOT_SUPPORTED);
	CHECK(errno == EOPNOTSUPP);
	CHECK(real_acquire == 0);
	CHECK(fake_amdgpu_stats()->acquire == 1);
}

/* errno to HSAKMT_STATUS, errno kept, and what ACQUIRE refusals say. */
static void test_errors(void)
{
	static const struct {
		const char *err;
		int errnum;
		HSAKMT_STATUS status;
	} cases[] = {
		{ "EPERM", EPERM, HSAKMT_STATUS_NOT_SUPPORTED },
		{ "ENODEV", ENODEV, HSAKMT_STATUS_NOT_SUPPORTED },
		/* No refusal of SPM is EACCES: an unexpected error */
		{ "13", EACCES, HSAKMT_STATUS_ERROR },
		{ "EBUSY", EBUSY, HSAKMT_STATUS_UNAVAILABLE },
		{ "12", ENOMEM, HSAKMT_STATUS_NO_MEMORY },
		{ "5", EIO, HSAKMT_STATUS_UNAVAILABLE },
		{ "71", EPROTO, HSAKMT_STATUS_ERROR },
	};
	char cfg[64];
	unsigned int i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		snprintf(cfg, sizeof(cfg), "version=1.1,acquire_err=%s",
			 cases[i].err);
		setup(cfg);
		errno = 0;
		CHECK(hsaKmtSPMAcquire(1) == cases[i].status);
		CHECK(errno == cases[i].errnum);
		/* aqlprofile releases even after a failed acquire. */
		errno = 0;
		CHECK(hsaKmtSPMRelease(1) == HSAKMT_STATUS_INVALID_PARAMETER);
		CHECK(errno == EINVAL);
		/* No parameter files here: still names the parameter. */
		if (cases[i].errnum == EPERM)
			CHECK(said("SPM refused (EPERM): The refusal comes from amdgpu.spm_paranoid: while it is 1 (the default), ACQUIRE needs CAP_PERFMON or CAP_SYS_ADMIN"));
		else
			CHECK(!said("spm_paranoid"));
		/* Said without HSAKMT_SPM_DEBUG: ROCm's profilers abort next. */
		if (cases[i].errnum == ENODEV)
			CHECK(said("no SPM (ENODEV): the amdgpu driver could not set up the VMID that SPM writes through when it loaded (see the kernel log), or the device is gone"));
		else
			CHECK(!said("ENODEV"));
		/* No message names the module parameter that is gone. */
		CHECK(!said("spm_unsafe_vmid0") && !said("EACCES"));
	}

	/* Somebody else's acquisition: EBUSY for every call. */
	{
		char path[128];
		HSAuint32 t = 0, copied = 7;
		bool loss = true;
		void *buf = buffer(4096);
		int other;

		setup("version=1.1,xcc=2");
		snprintf(path, sizeof(path), "%s/dev/dri/renderD128", root);
		other = t_open(path, O_RDWR);
		{
			struct drm_amdgpu_profiler_args a;

			memset(&a, 0, sizeof(a));
			a.op = AMDGPU_PROFILER_OP_SPM;
			a.data.spm.op = AMDGPU_SPM_OP_ACQUIRE;
			CHECK(t_ioctl(other, DRM_IOCTL_AMDGPU_PROFILER, &a) == 0);
		}
		CHECK(hsaKmtSPMAcquire(1) == HSAKMT_STATUS_UNAVAILABLE);
		CHECK(said("SPM busy (EBUSY)"));
		CHECK(hsaKmtSPMSetDestBuffer(1, 4096, &t, &copied, buf, &loss) ==
		      HSAKMT_STATUS_UNAVAILABLE);
		CHECK(copied == 0 && !loss);	/* outputs cleared on error */
		/* aqlprofile's release after the failed acquire: EBUSY, not EINVAL. */
		errno = 0;
		CHECK(hsaKmtSPMRelease(1) == HSAKMT_STATUS_UNAVAILABLE);
		CHECK(errno == EBUSY);
		CHECK(fake_amdgpu_stats()->owner == other);
		t_close(other);
		munmap(buf, 4096);
	}

	/* SetDestBuffer before any Acquire, and a share too small. */
	{
		HSAuint32 t = 10, copied;
		bool loss;
		void *buf = buffer(4096);

		setup("version=1.1,xcc=2");
		CHECK(hsaKmtSPMSetDestBuffer(1, 4096, &t, &copied, buf, &loss) ==
		      HSAKMT_STATUS_INVALID_PARAMETER);
		CHECK(t == 10);
		CHECK(hsaKmtSPMAcquire(1) == HSAKMT_STATUS_SUCCESS);
		CHECK(hsaKmtSPMSetDestBuffer(1, 96, &t, &copied, buf, &loss) ==
		      HSAKMT_STATUS_INVALID_PARAMETER);
		/* What KFD took and the profiler does not: said on stderr. */
		CHECK(hsaKmtSPMSetDestBuffer(1, 1024, &t, &copied,
					     (char *)buf + 16, &loss) ==
		      HSAKMT_STATUS_INVALID_PARAMETER);
		CHECK(said("is not 32-byte aligned"));
		CHECK(hsaKmtSPMSetDestBuffer(1, 300u << 20, &t, &copied, buf,
					     &loss) ==
		      HSAKMT_STATUS_INVALID_PARAMETER);
		CHECK(said("314572800 bytes is more than the 268435456 the kernel takes per buffer"));
		CHECK(hsaKmtSPMRelease(1) == HSAKMT_STATUS_SUCCESS);
		CHECK(hsaKmtSPMRelease(1) == HSAKMT_STATUS_INVALID_PARAMETER);
		munmap(buf, 4096);
	}
}

/*
 * The kernel found the ring registers changed and stopped SPM: every
 * SET_DEST_BUF fails with EIO until RELEASE. The user hears of it once per
 * acquisition, with the pointer to profiler.rst's Security section, and
 * the caller gets UNAVAILABLE: a new acquisition works again.
 */
static void test_stopped(void)
{
	HSAuint32 t = 0, copied = 5;
	bool loss = true;
	void *a = buffer(1 << 16), *b = buffer(1 << 16);

	/* fill_ms=0: a fixed amount a retire, however slow the run */
	setup("version=1.1,xcc=2,bytes=1024,fill_ms=0,tamper_call=3");
	CHECK(hsaKmtSPMAcquire(1) == HSAKMT_STATUS_SUCCESS);
	CHECK(hsaKmtSPMSetDestBuffer(1, 1 << 16, &t, &copied, a, &loss) ==
	      HSAKMT_STATUS_SUCCESS);
	CHECK(hsaKmtSPMSetDestBuffer(1, 1 << 16, &t, &copied, b, &loss) ==
	      HSAKMT_STATUS_SUCCESS);
	CHECK(!said("EIO"));
	errno = 0;
	CHECK(hsaKmtSPMSetDestBuffer(1, 1 << 16, &t, &copied, a, &loss) ==
	      HSAKMT_STATUS_UNAVAILABLE);
	CHECK(errno == EIO);
	CHECK(copied == 0 && !loss);
	CHECK(said("SET_DEST_BUF: EIO: the kernel stopped SPM on this partition because its SPM ring registers were changed behind its back"));
	CHECK(said("only Release is left"));
	CHECK(said("Security section of Documentation/gpu/amdgpu/profiler.rst"));
	/* A stop with no buffer is refused too; said only once. */
	CHECK(hsaKmtSPMSetDestBuffer(1, 0, &t, &copied, NULL, &loss) ==
	      HSAKMT_STATUS_UNAVAILABLE);
	CHECK(said_times("SET_DEST_BUF: EIO") == 1);
	CHECK(hsaKmtSPMRelease(1) == HSAKMT_STATUS_SUCCESS);

	/* A new acquisition starts over, and is told again. */
	CHECK(hsaKmtSPMAcquire(1) == HSAKMT_STATUS_SUCCESS);
	CHECK(hsaKmtSPMSetDestBuffer(1, 1 << 16, &t, &copied, a, &loss) ==
	      HSAKMT_STATUS_SUCCESS);
	CHECK(hsaKmtSPMSetDestBuffer(1, 1 << 16, &t, &copied, b, &loss) ==
	      HSAKMT_STATUS_SUCCESS);
	CHECK(hsaKmtSPMSetDestBuffer(1, 1 << 16, &t, &copied, a, &loss) ==
	      HSAKMT_STATUS_UNAVAILABLE);
	CHECK(said_times("SET_DEST_BUF: EIO") == 2);
	CHECK(hsaKmtSPMRelease(1) == HSAKMT_STATUS_SUCCESS);
	munmap(a, 1 << 16);
	munmap(b, 1 << 16);
}

/*
 * ENOMEM: the pin of an anonymous buffer would pass RLIMIT_MEMLOCK (the
 * fake charges the kernel's three cached pins). The message says which
 * buffers are pinned and what to change, and does not claim that every
 * buffer is.
 */
static void test_memlock(void)
{
	HSAuint32 t = 0, copied;
	bool loss;
	void *a = buffer(1 << 20), *b = buffer(1 << 20);

	setup("version=1.1,xcc=2,fill_ms=0,memlock=1536K");
	CHECK(hsaKmtSPMAcquire(1) == HSAKMT_STATUS_SUCCESS);
	CHECK(hsaKmtSPMSetDestBuffer(1, 1 << 20, &t, &copied, a, &loss) ==
	      HSAKMT_STATUS_SUCCESS);
	errno = 0;
	CHECK(hsaKmtSPMSetDestBuffer(1, 1 << 20, &t, &copied, b, &loss) ==
	      HSAKMT_STATUS_NO_MEMORY);
	CHECK(errno == ENOMEM);
	CHECK(said("SET_DEST_BUF: ENOMEM: out of memory, or the 1048576-byte buffer"));
	CHECK(said("Anonymous, shmem and hugetlb buffers are pinned, and count against RLIMIT_MEMLOCK (raise 'ulimit -l') unless the process has CAP_IPC_LOCK"));
	CHECK(said("Buffers mapped through the render node (VM_PFNMAP, such as ROCr's CPU pool allocations) are not pinned"));
	CHECK(!said("destination buffers are pinned"));
	/* Nothing was installed: the first buffer is still being filled. */
	CHECK(hsaKmtSPMSetDestBuffer(1, 0, &t, &copied, NULL, &loss) ==
	      HSAKMT_STATUS_SUCCESS);
	CHECK(hsaKmtSPMRelease(1) == HSAKMT_STATUS_SUCCESS);
	munmap(a, 1 << 20);
	munmap(b, 1 << 20);
}

/*
 * An ACQUIRE refused with EPERM: the message says what amdgpu.spm_paranoid,
 * the only module parameter that refuses it, reads in
 * /sys/module/amdgpu/parameters/ now (mode 0644: any user can read it),
 * and what to change. No other parameter is named or read, whatever is in
 * that directory.
 */
static void test_refusal_params(void)
{
	setup("version=1.1,acquire_err=EPERM");
	mkdirs("sys/module/amdgpu/parameters");
	put("sys/module/amdgpu/parameters/spm_paranoid", "1\n");
	/* A kernel before the SPM VMID had this one: it means nothing now. */
	put("sys/module/amdgpu/parameters/spm_unsafe_vmid0", "N\n");
	CHECK(hsaKmtSPMAcquire(1) == HSAKMT_STATUS_NOT_SUPPORTED);
	CHECK(said("SPM refused (EPERM): amdgpu.spm_paranoid is 1 ("));
	CHECK(said("/sys/module/amdgpu/parameters/spm_paranoid): only a process with CAP_PERFMON or CAP_SYS_ADMIN may acquire SPM"));
	CHECK(said("'echo 0 > "));
	CHECK(said_times("SPM refused") == 1);
	CHECK(!said("spm_unsafe_vmid0") && !said("VMID 0") && !said("Next,"));
	unlink_rel("sys/module/amdgpu/parameters/spm_unsafe_vmid0");

	/* Lowered since the refusal. */
	put("sys/module/amdgpu/parameters/spm_paranoid", "0\n");
	setup("version=1.1,acquire_err=EPERM");
	CHECK(hsaKmtSPMAcquire(1) == HSAKMT_STATUS_NOT_SUPPORTED);
	CHECK(said("amdgpu.spm_paranoid is 0 now ("));
	CHECK(said("it was lowered after the refusal; try again"));
	CHECK(!said("spm_unsafe_vmid0"));

	/* ENODEV is no parameter's doing: none is named. */
	put("sys/module/amdgpu/parameters/spm_paranoid", "1\n");
	setup("version=1.1,acquire_err=ENODEV");
	CHECK(hsaKmtSPMAcquire(1) == HSAKMT_STATUS_NOT_SUPPORTED);
	CHECK(errno == ENODEV);
	CHECK(said("no SPM (ENODEV)"));
	CHECK(!said("spm_paranoid") && !said("SPM refused"));

	unlink_rel("sys/module/amdgpu/parameters/spm_paranoid");
}

/* NULL destination: stop, with whatever size the caller passed. */
static void test_null_stop(void)
{
	const struct fake_amdgpu_stats *st;
	HSAuint32 t = 0, copied = 0;
	bool loss = true;
	void *buf = buffer(1 << 16);

	/*
	 * fill_ms=0: each retired share holds a fixed 2 to 5 KiB, whatever
	 * the time between the calls (at fill_ms=1 a slow run, under
	 * valgrind, filled the 32 KiB shares and read as loss).
	 */
	setup("version=1.1,xcc=2,bytes=4096,fill_ms=0");
	CHECK(hsaKmtSPMAcquire(1) == HSAKMT_STATUS_SUCCESS);
	CHECK(hsaKmtSPMSetDestBuffer(1, 1 << 16, &t, &copied, buf, &loss) ==
	      HSAKMT_STATUS_SUCCESS);
	CHECK(copied == 0);	/* nothing was installed before */
	/*
	 * A stop with no buffer and a size, which the single-XCC KFD and the
	 * posted libdrm API take (aqlprofile drains until 0 bytes instead).
	 */
	CHECK(hsaKmtSPMSetDestBuffer(1, 1 << 16, &t, &copied, NULL, &loss) ==
	      HSAKMT_STATUS_SUCCESS);
	st = fake_amdgpu_stats();
	CHECK(st->ncalls == 2 && st->calls[1].dest_buf == 0 &&
	      st->calls[1].buf_size == 0);
	CHECK(copied > 0 && !loss);
	/* NULL pointers for the outputs are tolerated. */
	CHECK(hsaKmtSPMSetDestBuffer(1, 0, NULL, NULL, NULL, NULL) ==
	      HSAKMT_STATUS_SUCCESS);
	CHECK(hsaKmtSPMRelease(1) == HSAKMT_STATUS_SUCCESS);
	munmap(buf, 1 << 16);
}

/*
 * The timeout variable: the kernel writes the time left back; the caller
 * keeps its own value, also across a signal, which is restarted with the
 * remainder.
 */
static void test_timeout(void)
{
	const struct fake_amdgpu_stats *st;
	HSAuint32 t, copied;
	bool loss;
	void *a = buffer(1 << 16), *b = buffer(1 << 16);

	/*
	 * The time left is the fake's own count (it sleeps fill_ms and
	 * subtracts it), not a measurement; fixed=1: the amounts do not
	 * depend on how long the calls took either.
	 */
	setup("version=1.1,xcc=2,fill_ms=10,fixed=1,eintr_call=2");
	CHECK(hsaKmtSPMAcquire(1) == HSAKMT_STATUS_SUCCESS);
	t = 0;
	CHECK(hsaKmtSPMSetDestBuffer(1, 1 << 16, &t, &copied, a, &loss) ==
	      HSAKMT_STATUS_SUCCESS);
	t = 40;
	CHECK(hsaKmtSPMSetDestBuffer(1, 1 << 16, &t, &copied, b, &loss) ==
	      HSAKMT_STATUS_SUCCESS);
	st = fake_amdgpu_stats();
	CHECK(st->calls[1].timeout_in == 40 && st->calls[1].timeout_out == 30);
	CHECK(t == 40);		/* not the 30 ms the kernel left */

	/* The second waiting call is interrupted after 5 ms. */
	CHECK(hsaKmtSPMSetDestBuffer(1, 1 << 16, &t, &copied, a, &loss) ==
	      HSAKMT_STATUS_SUCCESS);
	CHECK(st->ncalls == 4);
	CHECK(st->calls[2].ret == -EINTR && st->calls[2].timeout_in == 40 &&
	      st->calls[2].timeout_out == 35);
	CHECK(st->calls[3].ret == 0 && st->calls[3].timeout_in == 35);
	CHECK(t == 40);
	CHECK(copied > 0);
	CHECK(hsaKmtSPMRelease(1) == HSAKMT_STATUS_SUCCESS);
	munmap(a, 1 << 16);
	munmap(b, 1 << 16);
}

/* ---- aqlprofile's pattern (rocprofiler-sdk aqlprofile/core/spm_v2.cpp) ---- */

struct aql {
	HSAuint32 node;
	HSAuint32 buf_size;
	HSAuint32 timeout;
	uint32_t num_xcc, buf_size_xcc;
	void *dest_buf;
	_Atomic(void *) prod_buf, cons_buf;
	atomic_bool stop_prod_thread;
	/* results */
	unsigned int calls, errors, bad_shares, timeout_changed, extra;
	uint64_t bytes, header_bytes;
	HSAuint32 last_copied;
};

static void *producer(void *arg)
{
	struct aql *s = arg;
	HSAuint32 timeout = s->timeout, copied;
	bool exiting = false, loss = false;
	int count_down = 0;

	/* args.timeout = s->timeout, once, before the loop. */
	while (true) {
		void *dest = atomic_load(&s->prod_buf);
		const char *base;
		uint64_t sum = 0;
		uint32_t i;

		copied = 0;
		if (atomic_load(&s->stop_prod_thread))
			exiting = true;
		if (hsaKmtSPMSetDestBuffer(s->node, s->buf_size, &timeout,
					   &copied, dest, &loss) !=
		    HSAKMT_STATUS_SUCCESS) {
			s->errors++;
			return NULL;
		}
		s->calls++;
		if (timeout != s->timeout)
			s->timeout_changed++;
		s->dest_buf = atomic_exchange(&s->prod_buf,
					      atomic_exchange(&s->cons_buf,
							      s->dest_buf));
		/* The headers of the buffer just retired, per XCC. */
		base = atomic_load(&s->cons_buf);
		for (i = 0; i < s->num_xcc; i++) {
			struct amdgpu_spm_hdr h;

			memcpy(&h, base + (size_t)i * s->buf_size_xcc, sizeof(h));
			sum += h.bytes_copied;
			if (h.version != AMDGPU_PROFILER_VERSION_1_1 ||
			    AMDGPU_SPM_HDR_SHARE(h.xcc_info) != i)
				s->bad_shares++;
		}
		if (sum != copied)
			s->bad_shares++;
		s->bytes += copied;
		s->header_bytes += sum;
		s->last_copied = copied;
		if (exiting) {
			if (copied) {
				if (count_down++ < 5) {
					s->extra++;
					continue;
				}
			}
			break;
		}
	}
	return NULL;
}

struct acquire_arg {
	HSAuint32 node;
	HSAKMT_STATUS status;
};

static void *acquire_thread(void *arg)
{
	struct acquire_arg *a = arg;

	a->status = hsaKmtSPMAcquire(a->node);
	return NULL;
}

static void test_aqlprofile_loop(void)
{
	const uint32_t seg = 4 * 32, xcc = 2;
	/* 3 buffers, each per XCC 32 + k * seg, as aqlprofile cuts them. */
	const uint32_t per_xcc = 32 + 64 * seg;
	struct aql s = {
		.node = 1, .timeout = 20, .num_xcc = xcc,
		.buf_size = per_xcc * xcc, .buf_size_xcc = per_xcc,
	};
	const struct fake_amdgpu_stats *st;
	struct acquire_arg acq = { .node = 1 };
	char *out = buffer(0x1000 + 3 * s.buf_size);
	HSAuint32 t = 0, copied = 0;
	bool loss = false;
	pthread_t thr;
	unsigned int i;

	/*
	 * fixed=1: each retired share holds 512 to 1280 bytes, never FULL,
	 * however long the producer took; the kernel's wait (5 ms) paces it.
	 */
	setup("version=1.1,xcc=2,bytes=1024,fill_ms=5,fixed=1");
	/* Acquire in one thread ... */
	pthread_create(&thr, NULL, acquire_thread, &acq);
	pthread_join(thr, NULL);
	CHECK(acq.status == HSAKMT_STATUS_SUCCESS);

	/* ... the non-blocking first SetDestBuffer in the caller's ... */
	s.dest_buf = out + 0x1000;
	atomic_store(&s.prod_buf, out + 0x1000 + s.buf_size);
	atomic_store(&s.cons_buf, out + 0x1000 + 2 * s.buf_size);
	CHECK(hsaKmtSPMSetDestBuffer(1, s.buf_size, &t, &copied, s.dest_buf,
				     &loss) == HSAKMT_STATUS_SUCCESS);

	/* ... the loop in a producer thread. */
	pthread_create(&thr, NULL, producer, &s);
	/*
	 * Until the fake saw the producer's fifth call start (four done,
	 * each retiring data), not for a time a slow host may spend before
	 * the producer runs at all.
	 */
	while (fake_amdgpu_stats()->set_dest_buf < 1 + 5)
		usleep(1000);
	fake_amdgpu_set_bytes(0);	/* the SPM End() packet ran */
	atomic_store(&s.stop_prod_thread, true);
	pthread_join(thr, NULL);
	CHECK(hsaKmtSPMRelease(1) == HSAKMT_STATUS_SUCCESS);

	CHECK(s.errors == 0);
	CHECK(s.calls >= 4);
	CHECK(s.bytes > 0 && s.bytes == s.header_bytes);
	CHECK(s.bad_shares == 0);
	CHECK(s.timeout_changed == 0);	/* the variable did not decay */
	CHECK(s.last_copied == 0);	/* it stopped on an empty buffer */
	CHECK(s.extra <= 5);
	st = fake_amdgpu_stats();
	CHECK(st->owner == -1);
	/* Every producer call asked the kernel for the full 20 ms. */
	for (i = 1; i < st->ncalls && i < FAKE_AMDGPU_MAX_CALLS; i++)
		if (st->calls[i].timeout_in != 20)
			break;
	CHECK(i == st->ncalls);
	CHECK(!said("shares"));		/* 2 XCCs, 2 shares: no warning */
	munmap(out, 0x1000 + 3 * s.buf_size);
}

/* 1.1: the kernel's share count disagrees with the topology's num_xcc. */
static void test_share_count_warning(void)
{
	HSAuint32 t = 0, copied;
	bool loss;
	void *a = buffer(1 << 16), *b = buffer(1 << 16);

	setup("version=1.1,xcc=4,bytes=1024,fill_ms=0");
	CHECK(hsaKmtSPMAcquire(1) == HSAKMT_STATUS_SUCCESS);
	CHECK(hsaKmtSPMSetDestBuffer(1, 1 << 16, &t, &copied, a, &loss) == 0);
	CHECK(!said("shares"));
	CHECK(hsaKmtSPMSetDestBuffer(1, 1 << 16, &t, &copied, b, &loss) == 0);
	CHECK(said("split the buffer into 4 shares, the KFD topology says the node has 2 XCCs"));
	CHECK(hsaKmtSPMRelease(1) == HSAKMT_STATUS_SUCCESS);
	munmap(a, 1 << 16);
	munmap(b, 1 << 16);
}

int main(void)
{
	hsakmt_spm_sys.open = t_open;
	hsakmt_spm_sys.close = t_close;
	hsakmt_spm_sys.ioctl = t_ioctl;
	hsakmt_spm_sys.real = t_real;
	unsetenv("HSAKMT_SPM_DEBUG");
	unsetenv("HSAKMT_SPM_DISABLE");
	make_topology();

	test_node_mapping();
	test_fallback();
	test_no_spm_fallback();
	test_errors();
	test_refusal_params();
	test_stopped();
	test_memlock();
	test_null_stop();
	test_timeout();
	test_aqlprofile_loop();
	test_share_count_warning();

	hsakmt_spm_reset();
	if (hsakmt_spm_sys.err)
		fclose(hsakmt_spm_sys.err);
	free(msgs);
	remove_topology();
	return unit_done();
}
