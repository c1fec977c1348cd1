// SPDX-License-Identifier: GPL-2.0
/*
 * Tests of DRM_IOCTL_AMDGPU_PROFILER, the amdgpu Stream Performance Monitor
 * (SPM) interface. The contract is the kernel-doc of
 * struct drm_amdgpu_profiler_args in include/uapi/drm/amdgpu_drm.h.
 *
 * The suite is skipped as a whole when the machine has no amdgpu render
 * node, and the SPM tests are skipped when the device has no SPM support
 * (-EOPNOTSUPP). Tests that need to own the SPM are skipped when the caller
 * may not profile (-EPERM, see amdgpu.spm_paranoid), when the GPU refuses
 * SPM by default (-EACCES on GC 9.4.x, see amdgpu.spm_unsafe_vmid0) or
 * another client holds it (-EBUSY). -l and -h work without a device.
 *
 * AMDGPU_RENDER_NODE=/dev/dri/renderDN selects the node (on a partitioned
 * device: the partition) to test; by default the first amdgpu render node.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/capability.h>
#include <drm/drm.h>
#include <drm/amdgpu_drm.h>

#include "../../../kselftest_harness.h"

#ifndef DRM_IOCTL_AMDGPU_PROFILER
/* Run "make headers" in a tree with the profiler series first. */
#error "amdgpu_drm.h without DRM_IOCTL_AMDGPU_PROFILER"
#endif

#define SPM_LINE		32u
#define SPM_MAX_BUF_SIZE	(256u << 20)
#define SPM_MAX_XCC		16u
#define SPM_BUF_SIZE		(4u << 20)
#define PARANOID_PATH		"/sys/module/amdgpu/parameters/spm_paranoid"

static char node_path[64];

/*
 * Profiler uAPI 1.1 gives the share header's reserved words a meaning:
 * xcc_info (logical XCC, share count, share index), seq (per-XCC buffer
 * number since ACQUIRE, from 1), start_ns (CLOCK_BOOTTIME when the buffer
 * was installed) and last_us (from then to the last copy into the share).
 * Read them by name where the header has them, else by position.
 */
#ifdef AMDGPU_SPM_HDR_XCC_INFO
#define HDR_XCC_INFO(h)		((h)->info.xcc_info)
#define HDR_SEQ(h)		((h)->info.seq)
#define HDR_START_NS_LO(h)	((h)->info.start_ns_lo)
#define HDR_START_NS_HI(h)	((h)->info.start_ns_hi)
#define HDR_LAST_US(h)		((h)->info.last_us)
#else
#define HDR_XCC_INFO(h)		((h)->reserved[0])
#define HDR_SEQ(h)		((h)->reserved[1])
#define HDR_START_NS_LO(h)	((h)->reserved[2])
#define HDR_START_NS_HI(h)	((h)->reserved[3])
#define HDR_LAST_US(h)		((h)->reserved[4])
#define AMDGPU_SPM_HDR_XCC(info)	((info) & 0xff)
#define AMDGPU_SPM_HDR_NUM_SHARES(info)	(((info) >> 8) & 0xff)
#define AMDGPU_SPM_HDR_SHARE(info)	(((info) >> 16) & 0xff)
#endif

static __u64 hdr_start_ns(const struct drm_amdgpu_spm_buffer_header *h)
{
	return (__u64)HDR_START_NS_HI(h) << 32 | HDR_START_NS_LO(h);
}

/* The kernel fills the header's words 3-7 (interface 1.1 and later 1.x). */
static bool has_share_info(__u32 version)
{
	return version >> 24 == 1 && (version & 0xffffff) >= 1;
}

static int profiler(int fd, struct drm_amdgpu_profiler_args *args)
{
	return ioctl(fd, DRM_IOCTL_AMDGPU_PROFILER, args) ? -errno : 0;
}

static void spm_args(struct drm_amdgpu_profiler_args *args, __u32 op)
{
	memset(args, 0, sizeof(*args));
	args->op = AMDGPU_PROFILER_OP_SPM;
	args->data.spm.op = op;
}

static int spm_op(int fd, __u32 op)
{
	struct drm_amdgpu_profiler_args args;

	spm_args(&args, op);
	return profiler(fd, &args);
}

static int set_dest_buf(int fd, void *buf, __u32 size, __u32 *timeout,
			__u32 *bytes, __u32 *loss)
{
	struct drm_amdgpu_profiler_args args;
	int ret;

	spm_args(&args, AMDGPU_SPM_OP_SET_DEST_BUF);
	args.data.spm.dest_buf = (uintptr_t)buf;
	args.data.spm.buf_size = size;
	args.data.spm.timeout = timeout ? *timeout : 0;
	ret = profiler(fd, &args);
	if (timeout)
		*timeout = args.data.spm.timeout;
	if (bytes)
		*bytes = args.data.spm.bytes_copied;
	if (loss)
		*loss = args.data.spm.has_data_loss;
	return ret;
}

static bool is_amdgpu(int fd)
{
	struct drm_version v;
	char name[16] = "";

	memset(&v, 0, sizeof(v));
	v.name = name;
	v.name_len = sizeof(name) - 1;
	if (ioctl(fd, DRM_IOCTL_VERSION, &v))
		return false;
	return !strcmp(name, "amdgpu");
}

/* Fills node_path; returns false when there is no amdgpu render node. */
static bool find_render_node(void)
{
	const char *env = getenv("AMDGPU_RENDER_NODE");
	struct dirent *de;
	int best = -1;
	DIR *dir;
	int fd;

	if (env) {
		snprintf(node_path, sizeof(node_path), "%s", env);
		fd = open(node_path, O_RDWR | O_CLOEXEC);
		if (fd < 0)
			return false;
		if (!is_amdgpu(fd)) {
			close(fd);
			return false;
		}
		close(fd);
		return true;
	}

	dir = opendir("/dev/dri");
	if (!dir)
		return false;
	while ((de = readdir(dir))) {
		char path[64];
		int minor;

		if (sscanf(de->d_name, "renderD%d", &minor) != 1)
			continue;
		if (best >= 0 && minor >= best)
			continue;
		snprintf(path, sizeof(path), "/dev/dri/renderD%d", minor);
		fd = open(path, O_RDWR | O_CLOEXEC);
		if (fd < 0)
			continue;
		if (is_amdgpu(fd))
			best = minor;
		close(fd);
	}
	closedir(dir);
	if (best < 0)
		return false;
	snprintf(node_path, sizeof(node_path), "/dev/dri/renderD%d", best);
	return true;
}

static int open_node(void)
{
	return open(node_path, O_RDWR | O_CLOEXEC);
}

static __u32 get_version(int fd)
{
	struct drm_amdgpu_profiler_args args;

	memset(&args, 0, sizeof(args));
	args.op = AMDGPU_PROFILER_OP_GET_VER;
	if (profiler(fd, &args))
		return 0;
	return args.data.version;
}

/*
 * Issue @args, expect @err, and check that the kernel handed back every
 * field exactly as it came in (drm_ioctl() copies the struct back even on
 * failure).
 */
static bool rejected_unchanged(int fd, struct drm_amdgpu_profiler_args *args,
			       int err, int *got)
{
	struct drm_amdgpu_profiler_args before = *args;

	*got = profiler(fd, args);
	return *got == err && !memcmp(&before, args, sizeof(before));
}

#define EXPECT_REJECTED(fd, args, err) do { \
	int __got, __want = (err); \
	EXPECT_TRUE(rejected_unchanged(fd, args, __want, &__got)) \
		TH_LOG("expected %d with fields unchanged, got %d", \
		       __want, __got); \
} while (0)

static bool all_zero(const __u8 *p, size_t n)
{
	while (n--)
		if (*p++)
			return false;
	return true;
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void *alloc_buf(size_t size)
{
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	memset(p, 0, size);
	return p;
}

static __u32 share_size(__u32 buf_size, __u32 n)
{
	__u32 share = buf_size / n;

	return share - share % SPM_LINE;
}

/*
 * The XCC count of the partition is not reported. Find the counts n for
 * which a retired buffer is consistent: a valid header at each of the n
 * share boundaries, byte counts that fit and add up to @bytes, loss flags
 * that OR to @loss. Returns how many counts fit (the buffer was zeroed
 * before use, so stale headers cannot fit).
 */
static int consistent_layouts(const void *buf, __u32 buf_size, __u32 version,
			      __u32 bytes, __u32 loss)
{
	int fits = 0;
	__u32 n, i, w;

	for (n = 1; n <= SPM_MAX_XCC; n++) {
		__u32 share = share_size(buf_size, n);
		__u64 sum = 0;
		bool any = false, ok = true;

		if (share < 2 * SPM_LINE)
			break;
		for (i = 0; i < n && ok; i++) {
			struct drm_amdgpu_spm_buffer_header h;

			memcpy(&h, (const char *)buf + (size_t)i * share,
			       sizeof(h));
			ok = h.version == version &&
			     h.bytes_copied <= share - sizeof(h);
			if (has_share_info(version)) {
				/* Each share says where it is and how many. */
				ok = ok && AMDGPU_SPM_HDR_SHARE(HDR_XCC_INFO(&h)) == i &&
				     AMDGPU_SPM_HDR_NUM_SHARES(HDR_XCC_INFO(&h)) == n &&
				     !(HDR_XCC_INFO(&h) >> 24) && HDR_SEQ(&h);
			} else {
				for (w = 0; w < 5; w++)
					ok = ok && !h.reserved[w];
			}
			sum += h.bytes_copied;
			any |= h.has_data_loss != 0;
		}
		if (ok && sum == bytes && any == !!loss)
			fits++;
	}
	return fits;
}

/* Result of trying to take the SPM on a fresh fd. */
static int probe_acquire(void)
{
	int fd = open_node();
	int ret;

	if (fd < 0)
		return -errno;
	ret = spm_op(fd, AMDGPU_SPM_OP_ACQUIRE);
	if (!ret)
		ret = spm_op(fd, AMDGPU_SPM_OP_RELEASE);
	close(fd);
	return ret;
}

/* ---------------------------------------------------------------------- */

FIXTURE(profiler) {
	int fd;
};

FIXTURE_SETUP(profiler)
{
	self->fd = open_node();
	ASSERT_GE(self->fd, 0);
}

FIXTURE_TEARDOWN(profiler)
{
	close(self->fd);
}

TEST_F(profiler, get_ver)
{
	struct drm_amdgpu_profiler_args args;

	memset(&args, 0, sizeof(args));
	args.op = AMDGPU_PROFILER_OP_GET_VER;
	ASSERT_EQ(0, profiler(self->fd, &args));
	EXPECT_EQ(1u, args.data.version >> 24);
	EXPECT_EQ(0u, args.pad);
	TH_LOG("profiler interface %u.%u", args.data.version >> 24,
	       args.data.version & 0xffffff);
	/* Nothing but the version is written. */
	EXPECT_TRUE(all_zero((const __u8 *)&args.data + 4,
			     sizeof(args.data) - 4));
}

TEST_F(profiler, pad_not_zero)
{
	struct drm_amdgpu_profiler_args args;
	__u32 op;

	for (op = AMDGPU_PROFILER_OP_GET_VER; op <= AMDGPU_PROFILER_OP_SPM;
	     op++) {
		memset(&args, 0, sizeof(args));
		args.op = op;
		args.data.spm.op = AMDGPU_SPM_OP_RELEASE;
		if (op == AMDGPU_PROFILER_OP_GET_VER)
			args.data.spm.op = 0;
		args.pad = 1;
		EXPECT_REJECTED(self->fd, &args, -EINVAL);
		args.pad = 0x80000000;
		EXPECT_REJECTED(self->fd, &args, -EINVAL);
	}
}

TEST_F(profiler, unknown_op)
{
	static const __u32 ops[] = {
		0, AMDGPU_PROFILER_OP_SPM + 1, 16, 0x7fffffff, 0x80000000,
		0xffffffff,
	};
	struct drm_amdgpu_profiler_args args;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(ops); i++) {
		memset(&args, 0, sizeof(args));
		args.op = ops[i];
		EXPECT_REJECTED(self->fd, &args, -EINVAL);
	}
}

TEST_F(profiler, get_ver_data_not_zero)
{
	struct drm_amdgpu_profiler_args args;
	unsigned int i;

	/* GET_VER takes no input: every byte of the union must be zero. */
	for (i = 0; i < sizeof(args.data); i++) {
		memset(&args, 0, sizeof(args));
		args.op = AMDGPU_PROFILER_OP_GET_VER;
		((__u8 *)&args.data)[i] = 0x01;
		EXPECT_REJECTED(self->fd, &args, -EINVAL);
		((__u8 *)&args.data)[i] = 0x80;
		EXPECT_REJECTED(self->fd, &args, -EINVAL);
	}
}

/* ---------------------------------------------------------------------- */

static const char why_perm[] =
	"may not profile: needs CAP_PERFMON or a relaxed amdgpu.spm_paranoid";
static const char why_vmid0[] =
	"refused: the RLC writes via VMID 0 (GC 9.4.x); set amdgpu.spm_unsafe_vmid0=1";
static const char why_busy[] =
	"SPM busy: another profiler or a graphics VMID reservation";
static const char why_primary[] =
	"primary node of a partitioned device: set AMDGPU_RENDER_NODE to a partition's node";
static const char why_no_stream[] =
	"no SPM samples streaming (no counters programmed): cannot provoke data loss";

FIXTURE(spm) {
	int fd;
	__u32 version;
	void *buf;
	void *buf2;
};

FIXTURE_SETUP(spm)
{
	int ret;

	self->fd = -1;
	self->buf = NULL;
	self->buf2 = NULL;
	ret = probe_acquire();
	if (ret == -EOPNOTSUPP)
		SKIP(return, "no SPM support on %s", node_path);
	if (ret == -EINVAL)
		SKIP(return, "%s: %s", node_path, why_primary);
	self->fd = open_node();
	ASSERT_GE(self->fd, 0);
	self->version = get_version(self->fd);
	ASSERT_NE(0u, self->version);
	self->buf = alloc_buf(SPM_BUF_SIZE);
	self->buf2 = alloc_buf(SPM_BUF_SIZE);
	ASSERT_NE(NULL, self->buf);
	ASSERT_NE(NULL, self->buf2);
}

FIXTURE_TEARDOWN(spm)
{
	if (self->fd >= 0) {
		spm_op(self->fd, AMDGPU_SPM_OP_RELEASE);
		close(self->fd);
	}
	if (self->buf)
		munmap(self->buf, SPM_BUF_SIZE);
	if (self->buf2)
		munmap(self->buf2, SPM_BUF_SIZE);
}

/*
 * Take the SPM through @fd. When the environment does not allow it (no
 * privilege, somebody else profiling) *@why says why and the test skips.
 */
static int acquire(int fd, const char **why)
{
	int ret = spm_op(fd, AMDGPU_SPM_OP_ACQUIRE);

	*why = NULL;
	if (ret == -EPERM)
		*why = why_perm;
	else if (ret == -EACCES)
		*why = why_vmid0;
	else if (ret == -EBUSY)
		*why = why_busy;
	return ret;
}

TEST_F(spm, reserved_not_zero)
{
	static const __u32 ops[] = {
		AMDGPU_SPM_OP_ACQUIRE, AMDGPU_SPM_OP_RELEASE,
		AMDGPU_SPM_OP_SET_DEST_BUF,
	};
	struct drm_amdgpu_profiler_args args;
	unsigned int i, w;

	for (i = 0; i < 3; i++) {
		for (w = 0; w < 9; w++) {
			spm_args(&args, ops[i]);
			args.data.spm.reserved[w] = 1;
			EXPECT_REJECTED(self->fd, &args, -EINVAL);
			args.data.spm.reserved[w] = 0xffffffff;
			EXPECT_REJECTED(self->fd, &args, -EINVAL);
		}
	}
}

TEST_F(spm, outputs_not_zero_on_input)
{
	struct drm_amdgpu_profiler_args args;
	__u32 op;

	for (op = AMDGPU_SPM_OP_ACQUIRE; op <= AMDGPU_SPM_OP_SET_DEST_BUF;
	     op++) {
		spm_args(&args, op);
		args.data.spm.bytes_copied = 1;
		EXPECT_REJECTED(self->fd, &args, -EINVAL);
		spm_args(&args, op);
		args.data.spm.has_data_loss = 1;
		EXPECT_REJECTED(self->fd, &args, -EINVAL);
	}
}

TEST_F(spm, unknown_spm_op)
{
	static const __u32 ops[] = {
		0, AMDGPU_SPM_OP_SET_DEST_BUF + 1, 0x80000000, 0xffffffff,
	};
	struct drm_amdgpu_profiler_args args;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(ops); i++) {
		spm_args(&args, ops[i]);
		EXPECT_REJECTED(self->fd, &args, -EINVAL);
	}
}

TEST_F(spm, buffer_or_timeout_on_acquire_release)
{
	struct drm_amdgpu_profiler_args args;
	__u32 op;

	for (op = AMDGPU_SPM_OP_ACQUIRE; op <= AMDGPU_SPM_OP_RELEASE; op++) {
		spm_args(&args, op);
		args.data.spm.dest_buf = (uintptr_t)self->buf;
		EXPECT_REJECTED(self->fd, &args, -EINVAL);
		spm_args(&args, op);
		args.data.spm.buf_size = SPM_BUF_SIZE;
		EXPECT_REJECTED(self->fd, &args, -EINVAL);
		spm_args(&args, op);
		args.data.spm.timeout = 1;
		EXPECT_REJECTED(self->fd, &args, -EINVAL);
	}
}

TEST_F(spm, dest_buf_rules)
{
	struct drm_amdgpu_profiler_args args;
	uintptr_t buf = (uintptr_t)self->buf;
	unsigned int off;

	/* Address without size, size without address. */
	spm_args(&args, AMDGPU_SPM_OP_SET_DEST_BUF);
	args.data.spm.dest_buf = buf;
	EXPECT_REJECTED(self->fd, &args, -EINVAL);
	spm_args(&args, AMDGPU_SPM_OP_SET_DEST_BUF);
	args.data.spm.buf_size = SPM_BUF_SIZE;
	EXPECT_REJECTED(self->fd, &args, -EINVAL);

	/* Not 32-byte aligned. */
	for (off = 1; off < SPM_LINE; off <<= 1) {
		spm_args(&args, AMDGPU_SPM_OP_SET_DEST_BUF);
		args.data.spm.dest_buf = buf + off;
		args.data.spm.buf_size = SPM_BUF_SIZE - SPM_LINE;
		EXPECT_REJECTED(self->fd, &args, -EINVAL);
	}

	/* Larger than 256 MiB (never touched: rejected up front). */
	spm_args(&args, AMDGPU_SPM_OP_SET_DEST_BUF);
	args.data.spm.dest_buf = buf;
	args.data.spm.buf_size = SPM_MAX_BUF_SIZE + SPM_LINE;
	EXPECT_REJECTED(self->fd, &args, -EINVAL);
	args.data.spm.buf_size = 0xffffffe0;
	EXPECT_REJECTED(self->fd, &args, -EINVAL);
}

TEST_F(spm, not_acquired)
{
	struct drm_amdgpu_profiler_args args;

	spm_args(&args, AMDGPU_SPM_OP_RELEASE);
	EXPECT_REJECTED(self->fd, &args, -EINVAL);
	spm_args(&args, AMDGPU_SPM_OP_SET_DEST_BUF);
	args.data.spm.dest_buf = (uintptr_t)self->buf;
	args.data.spm.buf_size = SPM_BUF_SIZE;
	args.data.spm.timeout = 10;
	EXPECT_REJECTED(self->fd, &args, -EINVAL);
}

TEST_F(spm, share_too_small)
{
	struct drm_amdgpu_profiler_args args;
	__u32 size;
	const char *why;
	int ret;

	ret = acquire(self->fd, &why);
	if (why)
		SKIP(return, "%s", why);
	ASSERT_EQ(0, ret);
	/* Less than a header and one line: too small for any XCC count. */
	for (size = 1; size < 2 * SPM_LINE; size += 15) {
		spm_args(&args, AMDGPU_SPM_OP_SET_DEST_BUF);
		args.data.spm.dest_buf = (uintptr_t)self->buf;
		args.data.spm.buf_size = size;
		EXPECT_REJECTED(self->fd, &args, -EINVAL);
	}
	EXPECT_EQ(0, spm_op(self->fd, AMDGPU_SPM_OP_RELEASE));
}

TEST_F(spm, acquire_release)
{
	const char *why;
	int ret;

	ret = acquire(self->fd, &why);
	if (why)
		SKIP(return, "%s", why);
	ASSERT_EQ(0, ret);
	EXPECT_EQ(0, spm_op(self->fd, AMDGPU_SPM_OP_RELEASE));
	/* Released: a second release has nothing to give back. */
	EXPECT_EQ(-EINVAL, spm_op(self->fd, AMDGPU_SPM_OP_RELEASE));
	/* And the SPM can be taken again. */
	EXPECT_EQ(0, spm_op(self->fd, AMDGPU_SPM_OP_ACQUIRE));
	EXPECT_EQ(0, spm_op(self->fd, AMDGPU_SPM_OP_RELEASE));
}

TEST_F(spm, busy_two_fds)
{
	struct drm_amdgpu_profiler_args args;
	int fd2 = open_node();
	const char *why;
	int ret;

	ASSERT_GE(fd2, 0);
	ret = acquire(self->fd, &why);
	if (why)
		SKIP(return, "%s", why);
	ASSERT_EQ(0, ret);

	spm_args(&args, AMDGPU_SPM_OP_ACQUIRE);
	EXPECT_REJECTED(fd2, &args, -EBUSY);
	spm_args(&args, AMDGPU_SPM_OP_RELEASE);
	EXPECT_REJECTED(fd2, &args, -EBUSY);
	spm_args(&args, AMDGPU_SPM_OP_SET_DEST_BUF);
	args.data.spm.dest_buf = (uintptr_t)self->buf2;
	args.data.spm.buf_size = SPM_BUF_SIZE;
	args.data.spm.timeout = 5;
	EXPECT_REJECTED(fd2, &args, -EBUSY);

	/* The owner is unaffected by the other fd's attempts. */
	EXPECT_EQ(0, set_dest_buf(self->fd, self->buf, SPM_BUF_SIZE, NULL,
				  NULL, NULL));
	EXPECT_EQ(0, spm_op(self->fd, AMDGPU_SPM_OP_RELEASE));

	/* Released: the other fd may take it now. */
	EXPECT_EQ(0, spm_op(fd2, AMDGPU_SPM_OP_ACQUIRE));
	EXPECT_EQ(-EBUSY, spm_op(self->fd, AMDGPU_SPM_OP_ACQUIRE));
	EXPECT_EQ(0, spm_op(fd2, AMDGPU_SPM_OP_RELEASE));
	close(fd2);
}

/* Run @fn in a child process with its own fd; returns its exit status. */
static int in_child(int (*fn)(int fd))
{
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return -1;
	if (!pid) {
		int fd = open_node();

		_exit(fd < 0 ? 100 : fn(fd));
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

static int child_expect_busy(int fd)
{
	if (spm_op(fd, AMDGPU_SPM_OP_ACQUIRE) != -EBUSY)
		return 1;
	if (spm_op(fd, AMDGPU_SPM_OP_RELEASE) != -EBUSY)
		return 2;
	return 0;
}

static int child_acquire_and_exit(int fd)
{
	/* Exit without RELEASE and without closing: death must release. */
	return spm_op(fd, AMDGPU_SPM_OP_ACQUIRE) ? 1 : 0;
}

TEST_F(spm, busy_two_processes)
{
	const char *why;
	int ret;

	ret = acquire(self->fd, &why);
	if (why)
		SKIP(return, "%s", why);
	ASSERT_EQ(0, ret);
	EXPECT_EQ(0, in_child(child_expect_busy));
	EXPECT_EQ(0, spm_op(self->fd, AMDGPU_SPM_OP_RELEASE));

	/* A process that dies holding the SPM gives it back. */
	EXPECT_EQ(0, in_child(child_acquire_and_exit));
	EXPECT_EQ(0, spm_op(self->fd, AMDGPU_SPM_OP_ACQUIRE));
	EXPECT_EQ(0, spm_op(self->fd, AMDGPU_SPM_OP_RELEASE));
}

TEST_F(spm, release_on_close)
{
	int fd2 = open_node();
	const char *why;
	int ret;

	ASSERT_GE(fd2, 0);
	ret = acquire(fd2, &why);
	if (why)
		SKIP(return, "%s", why);
	ASSERT_EQ(0, ret);
	EXPECT_EQ(0, set_dest_buf(fd2, self->buf, SPM_BUF_SIZE, NULL, NULL,
				  NULL));
	EXPECT_EQ(-EBUSY, spm_op(self->fd, AMDGPU_SPM_OP_ACQUIRE));
	close(fd2);
	EXPECT_EQ(0, spm_op(self->fd, AMDGPU_SPM_OP_ACQUIRE));
	EXPECT_EQ(0, spm_op(self->fd, AMDGPU_SPM_OP_RELEASE));
}

TEST_F(spm, set_dest_buf_timeout_zero)
{
	__u32 timeout = 0, bytes = 0xdead, loss = 0xdead;
	double t0;
	const char *why;
	int ret;

	ret = acquire(self->fd, &why);
	if (why)
		SKIP(return, "%s", why);
	ASSERT_EQ(0, ret);

	/* Nothing was installed: nothing to retire, no wait. */
	t0 = now_ms();
	ASSERT_EQ(0, set_dest_buf(self->fd, self->buf, SPM_BUF_SIZE,
				  &timeout, &bytes, &loss));
	EXPECT_EQ(0u, timeout);
	EXPECT_EQ(0u, bytes);

	/* Retire it at once and stop copying. */
	ASSERT_EQ(0, set_dest_buf(self->fd, NULL, 0, &timeout, &bytes,
				  &loss));
	EXPECT_LT(now_ms() - t0, 1000.0);
	EXPECT_EQ(0u, timeout);
	EXPECT_EQ(1, consistent_layouts(self->buf, SPM_BUF_SIZE,
					self->version, bytes, loss) >= 1);

	/* No buffer installed: stopping again retires nothing. */
	ASSERT_EQ(0, set_dest_buf(self->fd, NULL, 0, &timeout, &bytes,
				  &loss));
	EXPECT_EQ(0u, bytes);
	EXPECT_EQ(0, spm_op(self->fd, AMDGPU_SPM_OP_RELEASE));
}

/* The clock of the share headers' times (1.1) */
static __u64 now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_BOOTTIME, &ts);
	return (__u64)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/*
 * Check the 1.1 words of every share of @buf, retired at @retired_ns after
 * being installed by a SET_DEST_BUF that ran from @inst0 to @inst1: share
 * index and count, strictly ascending logical XCC ids, sequence number
 * @seq, start time within the installing call, last copy no later than the
 * retirement (and 0 for an empty share). Returns the share count, or 0.
 */
static __u32 check_share_words(struct __test_metadata *_metadata,
			       const void *buf, __u32 seq, __u64 inst0,
			       __u64 inst1, __u64 retired_ns)
{
	struct drm_amdgpu_spm_buffer_header h;
	__u32 n, share, i, info;
	int last_xcc = -1;

	memcpy(&h, buf, sizeof(h));
	n = AMDGPU_SPM_HDR_NUM_SHARES(HDR_XCC_INFO(&h));
	EXPECT_TRUE(n >= 1 && n <= SPM_MAX_XCC) TH_LOG("%u shares", n);
	if (n < 1 || n > SPM_MAX_XCC)
		return 0;
	share = share_size(SPM_BUF_SIZE, n);
	for (i = 0; i < n; i++) {
		memcpy(&h, (const char *)buf + (size_t)i * share, sizeof(h));
		info = HDR_XCC_INFO(&h);
		EXPECT_EQ(i, AMDGPU_SPM_HDR_SHARE(info));
		EXPECT_EQ(n, AMDGPU_SPM_HDR_NUM_SHARES(info));
		EXPECT_EQ(0u, info >> 24);
		EXPECT_GT((int)AMDGPU_SPM_HDR_XCC(info), last_xcc);
		last_xcc = AMDGPU_SPM_HDR_XCC(info);
		EXPECT_EQ(seq, HDR_SEQ(&h));
		EXPECT_GE(hdr_start_ns(&h), inst0);
		EXPECT_LE(hdr_start_ns(&h), inst1);
		if (!h.bytes_copied) {
			EXPECT_EQ(0u, HDR_LAST_US(&h));
		} else {
			EXPECT_LE(hdr_start_ns(&h) + HDR_LAST_US(&h) * 1000ull,
				  retired_ns);
		}
	}
	return n;
}

/*
 * Interface 1.1: each share's header says which XCC it holds, how many
 * shares the buffer has, the XCC's buffer number since ACQUIRE (1 for the
 * first installed, +1 for each further one), when the buffer was installed
 * and when data last went into the share.
 */
TEST_F(spm, share_header_words)
{
	__u64 a0, a1, b0, b1, t;
	__u32 timeout = 0, bytes, loss, round;
	const char *why;
	int ret;

	if (!has_share_info(self->version))
		SKIP(return, "profiler interface %u.%u has no share header words",
		     self->version >> 24, self->version & 0xffffff);
	for (round = 0; round < 2; round++) {
		ret = acquire(self->fd, &why);
		if (why)
			SKIP(return, "%s", why);
		ASSERT_EQ(0, ret);
		memset(self->buf, 0, SPM_BUF_SIZE);
		memset(self->buf2, 0, SPM_BUF_SIZE);
		a0 = now_ns();
		ASSERT_EQ(0, set_dest_buf(self->fd, self->buf, SPM_BUF_SIZE,
					  &timeout, NULL, NULL));
		a1 = now_ns();
		timeout = 50;
		b0 = now_ns();
		ASSERT_EQ(0, set_dest_buf(self->fd, self->buf2, SPM_BUF_SIZE,
					  &timeout, &bytes, &loss));
		b1 = now_ns();
		/* The numbering starts again with every acquisition. */
		EXPECT_NE(0u, check_share_words(_metadata, self->buf, 1, a0, a1,
						b1));
		timeout = 0;
		ASSERT_EQ(0, set_dest_buf(self->fd, NULL, 0, &timeout, &bytes,
					  &loss));
		t = now_ns();
		EXPECT_NE(0u, check_share_words(_metadata, self->buf2, 2, b0, b1,
						t));
		EXPECT_EQ(0, spm_op(self->fd, AMDGPU_SPM_OP_RELEASE));
	}
}

TEST_F(spm, set_dest_buf_timeout_time_left)
{
	const __u32 req = 300;
	__u32 timeout = 0, bytes, loss;
	double t0, elapsed;
	const char *why;
	int ret;

	ret = acquire(self->fd, &why);
	if (why)
		SKIP(return, "%s", why);
	ASSERT_EQ(0, ret);
	ASSERT_EQ(0, set_dest_buf(self->fd, self->buf, SPM_BUF_SIZE,
				  &timeout, NULL, NULL));

	timeout = req;
	t0 = now_ms();
	ASSERT_EQ(0, set_dest_buf(self->fd, self->buf2, SPM_BUF_SIZE,
				  &timeout, &bytes, &loss));
	elapsed = now_ms() - t0;

	/* Time left, rounded down, written back; expiry is not an error. */
	EXPECT_LE(timeout, req);
	EXPECT_GE(elapsed + 20.0, (double)(req - timeout));
	EXPECT_LE(elapsed, (double)(req - timeout) + 200.0);
	if (timeout)
		TH_LOG("buffer filled after %.0f ms, %u ms left", elapsed,
		       timeout);
	EXPECT_EQ(1, consistent_layouts(self->buf, SPM_BUF_SIZE,
					self->version, bytes, loss) >= 1);
	EXPECT_EQ(0, spm_op(self->fd, AMDGPU_SPM_OP_RELEASE));
}

static void on_alarm(int sig)
{
	(void)sig;
}

static void arm_alarm(int ms, bool restart)
{
	struct itimerval it = { .it_value.tv_usec = ms * 1000 };
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm;
	sa.sa_flags = restart ? SA_RESTART : 0;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGALRM, &sa, NULL);
	setitimer(ITIMER_REAL, &it, NULL);
}

TEST_F(spm, set_dest_buf_interrupted)
{
	const __u32 req = 1000;
	__u32 timeout = 0, bytes = 0, loss = 0, left;
	double t0, elapsed;
	int ret;
	const char *why;

	ret = acquire(self->fd, &why);
	if (why)
		SKIP(return, "%s", why);
	ASSERT_EQ(0, ret);
	ASSERT_EQ(0, set_dest_buf(self->fd, self->buf, SPM_BUF_SIZE,
				  &timeout, NULL, NULL));

	/* Interrupted wait: -EINTR with the time left written back. */
	timeout = req;
	arm_alarm(100, false);
	t0 = now_ms();
	ret = set_dest_buf(self->fd, self->buf2, SPM_BUF_SIZE, &timeout,
			   &bytes, &loss);
	elapsed = now_ms() - t0;
	if (ret == 0)
		SKIP(goto out, "buffer filled before the signal (SPM streaming)");
	ASSERT_EQ(-EINTR, ret);
	EXPECT_LT(timeout, req);
	EXPECT_GE(elapsed + 20.0, (double)(req - timeout));
	/* Outputs other than the timeout are left alone on error. */
	EXPECT_EQ(0u, bytes);
	EXPECT_EQ(0u, loss);

	/*
	 * Nothing changed before the wait, so the restart with the remainder
	 * is idempotent: it retires the first buffer as the first call would.
	 */
	left = timeout;
	t0 = now_ms();
	ret = set_dest_buf(self->fd, self->buf2, SPM_BUF_SIZE, &timeout,
			   &bytes, &loss);
	EXPECT_EQ(0, ret);
	EXPECT_LE(now_ms() - t0, (double)left + 100.0);
	EXPECT_EQ(1, consistent_layouts(self->buf, SPM_BUF_SIZE,
					self->version, bytes, loss) >= 1);

	/* With SA_RESTART the kernel restarts with the remainder itself. */
	memset(self->buf, 0, SPM_BUF_SIZE);
	timeout = req;
	arm_alarm(100, true);
	t0 = now_ms();
	ret = set_dest_buf(self->fd, self->buf, SPM_BUF_SIZE, &timeout,
			   &bytes, &loss);
	elapsed = now_ms() - t0;
	EXPECT_EQ(0, ret);
	EXPECT_LE(elapsed, (double)req + 200.0);
out:
	EXPECT_EQ(0, spm_op(self->fd, AMDGPU_SPM_OP_RELEASE));
}

TEST_F(spm, data_loss_reporting)
{
	const __u32 small = SPM_MAX_XCC * 2 * SPM_LINE;
	__u32 timeout = 0, bytes, loss;
	int fits;
	const char *why;
	int ret;

	ret = acquire(self->fd, &why);
	if (why)
		SKIP(return, "%s", why);
	ASSERT_EQ(0, ret);

	/* See whether samples are streaming at all. */
	ASSERT_EQ(0, set_dest_buf(self->fd, self->buf, SPM_BUF_SIZE,
				  &timeout, NULL, NULL));
	timeout = 200;
	ASSERT_EQ(0, set_dest_buf(self->fd, self->buf2, SPM_BUF_SIZE,
				  &timeout, &bytes, &loss));
	/* The totals agree with the per-XCC headers. */
	fits = consistent_layouts(self->buf, SPM_BUF_SIZE, self->version,
				  bytes, loss);
	EXPECT_GE(fits, 1);
	if (!bytes)
		SKIP(goto out, "%s", why_no_stream);

	/*
	 * A buffer with one line per XCC, kept for half a second while data
	 * streams in: the shares fill up and later samples are lost.
	 */
	memset(self->buf, 0, small);
	timeout = 0;
	ASSERT_EQ(0, set_dest_buf(self->fd, self->buf, small, &timeout,
				  NULL, NULL));
	usleep(500 * 1000);
	timeout = 0;
	ASSERT_EQ(0, set_dest_buf(self->fd, NULL, 0, &timeout, &bytes,
				  &loss));
	EXPECT_NE(0u, loss);
	EXPECT_GE(consistent_layouts(self->buf, small, self->version, bytes,
				     loss), 1);
out:
	EXPECT_EQ(0, spm_op(self->fd, AMDGPU_SPM_OP_RELEASE));
}

/* ---------------------------------------------------------------------- */

/* Drop CAP_PERFMON and CAP_SYS_ADMIN from the effective and permitted sets. */
static int drop_profiling_caps(void)
{
	struct __user_cap_header_struct hdr = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct data[2];

	if (syscall(SYS_capget, &hdr, data))
		return -errno;
	data[CAP_TO_INDEX(CAP_SYS_ADMIN)].effective &= ~CAP_TO_MASK(CAP_SYS_ADMIN);
	data[CAP_TO_INDEX(CAP_SYS_ADMIN)].permitted &= ~CAP_TO_MASK(CAP_SYS_ADMIN);
	data[CAP_TO_INDEX(CAP_PERFMON)].effective &= ~CAP_TO_MASK(CAP_PERFMON);
	data[CAP_TO_INDEX(CAP_PERFMON)].permitted &= ~CAP_TO_MASK(CAP_PERFMON);
	if (syscall(SYS_capset, &hdr, data))
		return -errno;
	return 0;
}

/*
 * The amdgpu.spm_paranoid policy: 1 (the default) needs CAP_PERFMON or
 * CAP_SYS_ADMIN, 0 or less lets anybody who can open the node profile.
 * Returns true when the parameter exists and relaxes the policy.
 */
static bool paranoid_relaxed(int *value)
{
	FILE *f = fopen(PARANOID_PATH, "r");
	bool relaxed = false;

	*value = 1;
	if (!f)
		return false;
	if (fscanf(f, "%d", value) == 1)
		relaxed = *value <= 0;
	fclose(f);
	return relaxed;
}

static int child_unprivileged(int fd)
{
	int paranoid;
	bool relaxed = paranoid_relaxed(&paranoid);
	int ret;

	if (drop_profiling_caps())
		return 10;
	/* GET_VER is always allowed. */
	if (!get_version(fd))
		return 11;
	ret = spm_op(fd, AMDGPU_SPM_OP_ACQUIRE);
	if (relaxed) {
		/* Relaxed policy: anybody may profile. */
		if (ret == -EBUSY)
			return 4;
		return ret ? 12 : 0;
	}
	return ret == -EPERM ? 0 : 13;
}

TEST_F(spm, privilege_policy)
{
	int ret = probe_acquire();

	if (ret == -EBUSY)
		SKIP(return, "%s", why_busy);
	if (ret == -EACCES)
		SKIP(return, "%s", why_vmid0);
	ret = in_child(child_unprivileged);
	if (ret == 4)
		SKIP(return, "SPM busy");
	EXPECT_EQ(0, ret) {
		int paranoid;

		paranoid_relaxed(&paranoid);
		TH_LOG("spm_paranoid=%d, child step %d failed", paranoid, ret);
	}
}

/* GET_VER is the feature probe: kernels without the ioctl say -EINVAL. */
static bool has_profiler(void)
{
	int fd = open_node();
	bool ret;

	if (fd < 0)
		return false;
	ret = get_version(fd) != 0;
	close(fd);
	return ret;
}

/* -h, -l and a bad option need no device: the harness answers them. */
static bool harness_only(int argc, char **argv)
{
	bool ret = false;
	int opt;

	opterr = 0;
	while ((opt = getopt(argc, argv, "hlF:f:V:v:t:T:r:")) != -1)
		if (opt == 'h' || opt == 'l' || opt == '?')
			ret = true;
	opterr = 1;
	optind = 1;
	return ret;
}

int main(int argc, char **argv)
{
	if (harness_only(argc, argv))
		return test_harness_run(argc, argv);
	if (!find_render_node()) {
		ksft_print_header();
		ksft_exit_skip("no amdgpu render node%s%s\n",
			       getenv("AMDGPU_RENDER_NODE") ? " at " : "",
			       getenv("AMDGPU_RENDER_NODE") ?: "");
	}
	if (!has_profiler()) {
		ksft_print_header();
		ksft_exit_skip("%s: kernel without DRM_IOCTL_AMDGPU_PROFILER\n",
			       node_path);
	}
	return test_harness_run(argc, argv);
}
