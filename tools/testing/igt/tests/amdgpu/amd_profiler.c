// SPDX-License-Identifier: MIT
/*
 * Copyright 2026 The amdgpu profiler series authors
 *
 * Tests of DRM_IOCTL_AMDGPU_PROFILER: the profiler version probe and the
 * Stream Performance Monitor (SPM) operations ACQUIRE, RELEASE and
 * SET_DEST_BUF, their interaction with AMDGPU_VM_OP_RESERVE_VMID, and their
 * per-partition (XCP) behaviour on partitioned MI300 devices.
 *
 * The contract is the kernel-doc of struct drm_amdgpu_profiler_args in the
 * kernel's include/uapi/drm/amdgpu_drm.h.
 */

#include <assert.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/capability.h>

#include "igt.h"
#include "igt_sysfs.h"
#include "amdgpu_drm.h"
#include "lib/amdgpu/amd_memory.h"

IGT_TEST_DESCRIPTION("Test the amdgpu profiler ioctl: version probe, SPM "
		     "ownership, destination buffers, RESERVE_VMID "
		     "arbitration and partitions");

/*
 * IGT's include/drm-uapi/amdgpu_drm.h predates the profiler interface: its
 * declarations come from include/drm-uapi-experimental/ until the next sync.
 */
#include "amdgpu_profiler_drm.h"

static_assert(sizeof(struct drm_amdgpu_spm_args) == 64, "spm args layout");
static_assert(sizeof(struct drm_amdgpu_spm_buffer_header) == 32,
	      "spm buffer header layout");
static_assert(sizeof(struct drm_amdgpu_profiler_args) == 72,
	      "profiler args layout");
static_assert(offsetof(struct drm_amdgpu_profiler_args, data) == 8,
	      "profiler args data offset");
static_assert(offsetof(struct drm_amdgpu_spm_args, reserved) == 28,
	      "spm args reserved offset");
static_assert(offsetof(struct drm_amdgpu_spm_buffer_header, info.xcc_info) == 12 &&
	      offsetof(struct drm_amdgpu_spm_buffer_header, info.last_us) == 28,
	      "1.1 share header words overlay reserved[5]");

#define SPM_LINE		32u
#define SPM_MAX_BUF_SIZE	(256u << 20)
#define SPM_MAX_XCC		16u
#define SPM_BUF_SIZE		(4u << 20)
#define MAX_NODES		64
#define PARANOID_PARAM		"/sys/module/amdgpu/parameters/spm_paranoid"

/*
 * igt_ioctl(): drmIoctl(), or inside igt_while_interruptible() the ioctl
 * with signals injected and restarted on EINTR with the same arguments.
 */
static int profiler(int fd, struct drm_amdgpu_profiler_args *args)
{
	return igt_ioctl(fd, DRM_IOCTL_AMDGPU_PROFILER, args) ? -errno : 0;
}

static void spm_init(struct drm_amdgpu_profiler_args *args, uint32_t op)
{
	memset(args, 0, sizeof(*args));
	args->op = AMDGPU_PROFILER_OP_SPM;
	args->data.spm.op = op;
}

static int spm(int fd, uint32_t op)
{
	struct drm_amdgpu_profiler_args args;

	spm_init(&args, op);
	return profiler(fd, &args);
}

static int get_version(int fd, uint32_t *version)
{
	struct drm_amdgpu_profiler_args args;
	int ret;

	memset(&args, 0, sizeof(args));
	args.op = AMDGPU_PROFILER_OP_GET_VER;
	ret = profiler(fd, &args);
	if (!ret && version)
		*version = args.data.version;
	return ret;
}

struct retired {
	uint32_t timeout;	/* in: ms to wait; out: ms left */
	uint32_t bytes;
	uint32_t loss;
};

static int set_dest_buf(int fd, void *buf, uint32_t size, struct retired *r)
{
	struct drm_amdgpu_profiler_args args;
	int ret;

	spm_init(&args, AMDGPU_SPM_OP_SET_DEST_BUF);
	args.data.spm.dest_buf = to_user_pointer(buf);
	args.data.spm.buf_size = size;
	args.data.spm.timeout = r ? r->timeout : 0;
	ret = profiler(fd, &args);
	if (r) {
		r->timeout = args.data.spm.timeout;
		r->bytes = args.data.spm.bytes_copied;
		r->loss = args.data.spm.has_data_loss;
	}
	return ret;
}

static int vm_op(int fd, uint32_t op)
{
	union drm_amdgpu_vm vm;

	memset(&vm, 0, sizeof(vm));
	vm.in.op = op;
	return ioctl(fd, DRM_IOCTL_AMDGPU_VM, &vm) ? -errno : 0;
}

/*
 * A rejected call must fail with @err and hand every field back as it came
 * in, although drm_ioctl() copies the struct out on failure too.
 */
static void assert_rejected(int fd, struct drm_amdgpu_profiler_args *args,
			    int err)
{
	struct drm_amdgpu_profiler_args before = *args;

	igt_assert_eq(profiler(fd, args), err);
	igt_assert(!memcmp(&before, args, sizeof(before)));
}

/*
 * Take the SPM or skip: no privilege, no SPM VMID (the driver could not set
 * it up at load) or somebody else profiling.
 */
static void acquire_or_skip(int fd)
{
	int ret = spm(fd, AMDGPU_SPM_OP_ACQUIRE);

	igt_skip_on_f(ret == -EPERM,
		      "may not profile: needs CAP_PERFMON or a relaxed amdgpu.spm_paranoid\n");
	igt_skip_on_f(ret == -ENODEV,
		      "SPM VMID not available: the driver could not set it up at load (see the kernel log), or the device is gone\n");
	igt_skip_on_f(ret == -EBUSY,
		      "SPM busy: another profiler or a RESERVE_VMID holder\n");
	igt_assert_eq(ret, 0);
}

static void *alloc_buf(uint32_t size)
{
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	igt_assert(p != MAP_FAILED);
	memset(p, 0, size);
	return p;
}

/* Milliseconds since *@start, which the first call sets (igt_nsec_elapsed()). */
static double elapsed_ms(struct timespec *start)
{
	return igt_nsec_elapsed(start) / 1e6;
}

/* The kernel stamps shares with CLOCK_BOOTTIME (interface 1.1). */
static uint64_t boottime_ns(void)
{
	struct timespec ts;

	igt_assert_eq(clock_gettime(CLOCK_BOOTTIME, &ts), 0);
	return ts.tv_sec * NSEC_PER_SEC + ts.tv_nsec;
}

/* The kernel fills the header's words 3-7 (interface 1.1 and later 1.x). */
static bool has_share_info(uint32_t version)
{
	return version >> 24 == 1 && (version & 0xffffff) >= 1;
}

static uint32_t share_size(uint32_t buf_size, uint32_t n)
{
	uint32_t share = buf_size / n;

	return share - share % SPM_LINE;
}

/*
 * Count the XCC counts n (1..16) for which a retired buffer is consistent:
 * valid headers at all n share boundaries whose byte counts fit their share
 * and add up to the returned total, and whose loss flags OR to the returned
 * flag. The partition's XCC count is not reported, so at least one n must
 * fit. Buffers are zeroed before use, so stale headers cannot fit.
 */
static int consistent_layouts(const void *buf, uint32_t buf_size,
			      uint32_t version, const struct retired *r)
{
	int fits = 0;

	for (uint32_t n = 1; n <= SPM_MAX_XCC; n++) {
		uint32_t share = share_size(buf_size, n);
		uint64_t sum = 0;
		bool loss = false, ok = true;

		if (share < 2 * SPM_LINE)
			break;
		for (uint32_t i = 0; i < n && ok; i++) {
			struct drm_amdgpu_spm_buffer_header h;

			memcpy(&h, (const char *)buf + (size_t)i * share,
			       sizeof(h));
			ok = h.version == version &&
			     h.bytes_copied <= share - sizeof(h);
			if (has_share_info(version)) {
				ok = ok && AMDGPU_SPM_HDR_SHARE(h.info.xcc_info) == i &&
				     AMDGPU_SPM_HDR_NUM_SHARES(h.info.xcc_info) == n &&
				     !(h.info.xcc_info >> 24) && h.info.seq;
			} else {
				for (int w = 0; w < 5; w++)
					ok = ok && !h.reserved[w];
			}
			sum += h.bytes_copied;
			loss |= h.has_data_loss != 0;
		}
		if (ok && sum == r->bytes && loss == !!r->loss)
			fits++;
	}
	return fits;
}

/* ---- Partitions ---- */

static bool is_amdgpu(int fd)
{
	char name[16] = "";
	struct drm_version v = {
		.name = name,
		.name_len = sizeof(name) - 1,
	};

	if (ioctl(fd, DRM_IOCTL_VERSION, &v))
		return false;
	return !strcmp(name, "amdgpu");
}

/*
 * Every amdgpu render node: one per device, plus one per further partition
 * of a partitioned device (partition 0 uses the device's own node).
 */
static int open_all_render_nodes(int *fds, int max)
{
	struct dirent *de;
	int n = 0;
	DIR *dir;

	dir = opendir("/dev/dri");
	if (!dir)
		return 0;
	while ((de = readdir(dir)) && n < max) {
		char path[300];
		int fd;

		if (strncmp(de->d_name, "renderD", 7))
			continue;
		snprintf(path, sizeof(path), "/dev/dri/%s", de->d_name);
		fd = open(path, O_RDWR | O_CLOEXEC);
		if (fd < 0)
			continue;
		if (is_amdgpu(fd)) {
			fds[n++] = fd;
			igt_debug("amdgpu render node %s\n", path);
		} else {
			close(fd);
		}
	}
	closedir(dir);
	return n;
}

/* Number of compute partitions, from the device's sysfs; 1 without XCP. */
static int partition_count(int fd)
{
	static const struct {
		const char *mode;
		int parts;
	} modes[] = {
		/* CPX: one partition per XCC, at least two. */
		{ "SPX", 1 }, { "DPX", 2 }, { "TPX", 3 }, { "QPX", 4 },
		{ "CPX", 2 },
	};
	int dir = igt_sysfs_open(fd);
	char *mode;
	int n = 1;

	if (dir < 0)
		return 1;
	mode = igt_sysfs_get(dir, "device/current_compute_partition");
	close(dir);
	if (!mode)
		return 1;
	for (unsigned int i = 0; i < ARRAY_SIZE(modes); i++) {
		if (strncmp(mode, modes[i].mode, 3))
			continue;
		n = modes[i].parts;
	}
	igt_info("compute partition mode %s\n", mode);
	free(mode);
	return n;
}

/* ---- Privilege ---- */

static bool has_profiling_caps(void)
{
	struct __user_cap_header_struct hdr = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct data[2] = {};

	if (syscall(SYS_capget, &hdr, data))
		return true;
	return data[CAP_TO_INDEX(CAP_PERFMON)].effective &
		CAP_TO_MASK(CAP_PERFMON) ||
	       data[CAP_TO_INDEX(CAP_SYS_ADMIN)].effective &
		CAP_TO_MASK(CAP_SYS_ADMIN);
}

/*
 * amdgpu.spm_paranoid: 1 (the default) needs CAP_PERFMON or CAP_SYS_ADMIN,
 * 0 or less lets anybody who can open the node profile.
 */
static bool spm_paranoid_relaxed(void)
{
	FILE *f = fopen(PARANOID_PARAM, "r");
	bool relaxed = false;
	int v;

	if (!f)
		return false;
	if (fscanf(f, "%d", &v) == 1) {
		igt_info("amdgpu.spm_paranoid = %d\n", v);
		relaxed = v <= 0;
	}
	fclose(f);
	return relaxed;
}

/* ---- Subtests ---- */

static void test_get_version(int fd)
{
	struct drm_amdgpu_profiler_args args;
	const uint8_t *p = (const uint8_t *)&args.data;

	memset(&args, 0, sizeof(args));
	args.op = AMDGPU_PROFILER_OP_GET_VER;
	igt_assert_eq(profiler(fd, &args), 0);
	igt_info("profiler interface %u.%u\n", args.data.version >> 24,
		 args.data.version & 0xffffff);
	igt_assert_eq_u32(args.data.version >> 24, 1);
	igt_assert_eq_u32(args.pad, 0);
	for (unsigned int i = sizeof(args.data.version); i < sizeof(args.data); i++)
		igt_assert_eq(p[i], 0);
}

static void test_invalid_pad(int fd)
{
	struct drm_amdgpu_profiler_args args;

	memset(&args, 0, sizeof(args));
	args.op = AMDGPU_PROFILER_OP_GET_VER;
	args.pad = 1;
	assert_rejected(fd, &args, -EINVAL);

	spm_init(&args, AMDGPU_SPM_OP_RELEASE);
	args.pad = 0x80000000;
	assert_rejected(fd, &args, -EINVAL);
}

static void test_invalid_op(int fd)
{
	static const uint32_t ops[] = {
		0, AMDGPU_PROFILER_OP_SPM + 1, 0x100, 0x7fffffff, 0x80000000,
		0xffffffff,
	};
	struct drm_amdgpu_profiler_args args;

	for (unsigned int i = 0; i < ARRAY_SIZE(ops); i++) {
		memset(&args, 0, sizeof(args));
		args.op = ops[i];
		assert_rejected(fd, &args, -EINVAL);
	}
}

static void test_get_version_nonzero_data(int fd)
{
	struct drm_amdgpu_profiler_args args;

	for (unsigned int i = 0; i < sizeof(args.data); i++) {
		memset(&args, 0, sizeof(args));
		args.op = AMDGPU_PROFILER_OP_GET_VER;
		((uint8_t *)&args.data)[i] = 0xff;
		assert_rejected(fd, &args, -EINVAL);
	}
}

static void test_spm_reserved(int fd)
{
	struct drm_amdgpu_profiler_args args;

	for (uint32_t op = AMDGPU_SPM_OP_ACQUIRE;
	     op <= AMDGPU_SPM_OP_SET_DEST_BUF; op++) {
		for (unsigned int w = 0; w < 9; w++) {
			spm_init(&args, op);
			args.data.spm.reserved[w] = 1u << w;
			assert_rejected(fd, &args, -EINVAL);
		}
		spm_init(&args, op);
		args.data.spm.bytes_copied = 1;
		assert_rejected(fd, &args, -EINVAL);
		spm_init(&args, op);
		args.data.spm.has_data_loss = 1;
		assert_rejected(fd, &args, -EINVAL);
	}
}

static void test_spm_invalid_op(int fd)
{
	static const uint32_t ops[] = {
		0, AMDGPU_SPM_OP_SET_DEST_BUF + 1, 0x80000000, 0xffffffff,
	};
	struct drm_amdgpu_profiler_args args;

	for (unsigned int i = 0; i < ARRAY_SIZE(ops); i++) {
		spm_init(&args, ops[i]);
		assert_rejected(fd, &args, -EINVAL);
	}
}

static void test_spm_args_on_acquire_release(int fd, void *buf)
{
	struct drm_amdgpu_profiler_args args;

	for (uint32_t op = AMDGPU_SPM_OP_ACQUIRE; op <= AMDGPU_SPM_OP_RELEASE;
	     op++) {
		spm_init(&args, op);
		args.data.spm.dest_buf = to_user_pointer(buf);
		assert_rejected(fd, &args, -EINVAL);
		spm_init(&args, op);
		args.data.spm.buf_size = SPM_BUF_SIZE;
		assert_rejected(fd, &args, -EINVAL);
		spm_init(&args, op);
		args.data.spm.timeout = 100;
		assert_rejected(fd, &args, -EINVAL);
	}
}

static void test_spm_dest_buf_rules(int fd, void *buf)
{
	struct drm_amdgpu_profiler_args args;

	spm_init(&args, AMDGPU_SPM_OP_SET_DEST_BUF);
	args.data.spm.dest_buf = to_user_pointer(buf);
	assert_rejected(fd, &args, -EINVAL);	/* address, no size */

	spm_init(&args, AMDGPU_SPM_OP_SET_DEST_BUF);
	args.data.spm.buf_size = SPM_BUF_SIZE;
	assert_rejected(fd, &args, -EINVAL);	/* size, no address */

	for (unsigned int off = 1; off < SPM_LINE; off <<= 1) {
		spm_init(&args, AMDGPU_SPM_OP_SET_DEST_BUF);
		args.data.spm.dest_buf = to_user_pointer(buf) + off;
		args.data.spm.buf_size = SPM_BUF_SIZE - SPM_LINE;
		assert_rejected(fd, &args, -EINVAL);	/* misaligned */
	}

	spm_init(&args, AMDGPU_SPM_OP_SET_DEST_BUF);
	args.data.spm.dest_buf = to_user_pointer(buf);
	args.data.spm.buf_size = SPM_MAX_BUF_SIZE + SPM_LINE;
	assert_rejected(fd, &args, -EINVAL);	/* over 256 MiB */
}

static void test_spm_not_acquired(int fd, void *buf)
{
	struct drm_amdgpu_profiler_args args;

	spm_init(&args, AMDGPU_SPM_OP_RELEASE);
	assert_rejected(fd, &args, -EINVAL);

	spm_init(&args, AMDGPU_SPM_OP_SET_DEST_BUF);
	args.data.spm.dest_buf = to_user_pointer(buf);
	args.data.spm.buf_size = SPM_BUF_SIZE;
	args.data.spm.timeout = 10;
	assert_rejected(fd, &args, -EINVAL);
}

static void test_spm_share_too_small(int fd, void *buf)
{
	struct drm_amdgpu_profiler_args args;

	acquire_or_skip(fd);
	for (uint32_t size = 1; size < 2 * SPM_LINE; size += 15) {
		spm_init(&args, AMDGPU_SPM_OP_SET_DEST_BUF);
		args.data.spm.dest_buf = to_user_pointer(buf);
		args.data.spm.buf_size = size;
		assert_rejected(fd, &args, -EINVAL);
	}
	igt_assert_eq(spm(fd, AMDGPU_SPM_OP_RELEASE), 0);
}

static void test_spm_acquire_release(int fd)
{
	acquire_or_skip(fd);
	igt_assert_eq(spm(fd, AMDGPU_SPM_OP_RELEASE), 0);
	igt_assert_eq(spm(fd, AMDGPU_SPM_OP_RELEASE), -EINVAL);
	igt_assert_eq(spm(fd, AMDGPU_SPM_OP_ACQUIRE), 0);
	igt_assert_eq(spm(fd, AMDGPU_SPM_OP_RELEASE), 0);
}

static void test_spm_busy_two_fds(int fd, void *buf)
{
	struct drm_amdgpu_profiler_args args;
	int fd2 = drm_reopen_driver(fd);

	acquire_or_skip(fd);

	spm_init(&args, AMDGPU_SPM_OP_ACQUIRE);
	assert_rejected(fd2, &args, -EBUSY);
	spm_init(&args, AMDGPU_SPM_OP_RELEASE);
	assert_rejected(fd2, &args, -EBUSY);
	spm_init(&args, AMDGPU_SPM_OP_SET_DEST_BUF);
	args.data.spm.dest_buf = to_user_pointer(buf);
	args.data.spm.buf_size = SPM_BUF_SIZE;
	args.data.spm.timeout = 5;
	assert_rejected(fd2, &args, -EBUSY);

	igt_assert_eq(spm(fd, AMDGPU_SPM_OP_RELEASE), 0);
	igt_assert_eq(spm(fd2, AMDGPU_SPM_OP_ACQUIRE), 0);
	igt_assert_eq(spm(fd, AMDGPU_SPM_OP_ACQUIRE), -EBUSY);
	igt_assert_eq(spm(fd2, AMDGPU_SPM_OP_RELEASE), 0);
	close(fd2);
}

static void test_spm_busy_two_processes(int fd)
{
	acquire_or_skip(fd);

	igt_fork(child, 1) {
		int cfd = drm_reopen_driver(fd);

		igt_assert_eq(spm(cfd, AMDGPU_SPM_OP_ACQUIRE), -EBUSY);
		igt_assert_eq(spm(cfd, AMDGPU_SPM_OP_RELEASE), -EBUSY);
	}
	igt_waitchildren();
	igt_assert_eq(spm(fd, AMDGPU_SPM_OP_RELEASE), 0);
}

static void test_spm_release_on_exit(int fd)
{
	int status;
	pid_t pid;

	acquire_or_skip(fd);
	igt_assert_eq(spm(fd, AMDGPU_SPM_OP_RELEASE), 0);

	/*
	 * A process killed while owning the SPM, without close or RELEASE
	 * (a plain fork: igt_waitchildren() would count the kill as a failure).
	 */
	pid = fork();
	igt_assert(pid >= 0);
	if (!pid) {
		char path[64];
		int cfd;

		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		cfd = open(path, O_RDWR);
		if (cfd < 0 || spm(cfd, AMDGPU_SPM_OP_ACQUIRE))
			_exit(1);
		raise(SIGKILL);
		_exit(2);
	}
	igt_assert_eq(waitpid(pid, &status, 0), pid);
	igt_assert_f(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL,
		     "child could not acquire the SPM (status %#x)\n", status);
	igt_assert_eq(spm(fd, AMDGPU_SPM_OP_ACQUIRE), 0);
	igt_assert_eq(spm(fd, AMDGPU_SPM_OP_RELEASE), 0);
}

static void test_spm_release_on_close(int fd, void *buf)
{
	int fd2 = drm_reopen_driver(fd);

	acquire_or_skip(fd2);
	igt_assert_eq(set_dest_buf(fd2, buf, SPM_BUF_SIZE, NULL), 0);
	igt_assert_eq(spm(fd, AMDGPU_SPM_OP_ACQUIRE), -EBUSY);
	close(fd2);
	igt_assert_eq(spm(fd, AMDGPU_SPM_OP_ACQUIRE), 0);
	igt_assert_eq(spm(fd, AMDGPU_SPM_OP_RELEASE), 0);
}

static void test_spm_timeout_zero(int fd, uint32_t version, void *buf)
{
	struct retired r = { .bytes = 0xdead, .loss = 0xdead };
	struct timespec t0 = {};

	igt_nsec_elapsed(&t0);

	acquire_or_skip(fd);
	igt_assert_eq(set_dest_buf(fd, buf, SPM_BUF_SIZE, &r), 0);
	igt_assert_eq_u32(r.timeout, 0);
	igt_assert_eq_u32(r.bytes, 0);	/* nothing was installed before */

	igt_assert_eq(set_dest_buf(fd, NULL, 0, &r), 0);
	igt_assert_eq_u32(r.timeout, 0);
	igt_assert(elapsed_ms(&t0) < 1000);
	igt_assert_lte(1, consistent_layouts(buf, SPM_BUF_SIZE, version, &r));

	igt_assert_eq(set_dest_buf(fd, NULL, 0, &r), 0);
	igt_assert_eq_u32(r.bytes, 0);	/* no buffer: nothing retired */
	igt_assert_eq(spm(fd, AMDGPU_SPM_OP_RELEASE), 0);
}

static void test_spm_time_left(int fd, uint32_t version, void *a, void *b)
{
	const uint32_t req = 300;
	struct timespec t0 = {};
	struct retired r = {};
	double elapsed;

	acquire_or_skip(fd);
	igt_assert_eq(set_dest_buf(fd, a, SPM_BUF_SIZE, &r), 0);

	r.timeout = req;
	igt_nsec_elapsed(&t0);
	igt_assert_eq(set_dest_buf(fd, b, SPM_BUF_SIZE, &r), 0);
	elapsed = elapsed_ms(&t0);
	igt_debug("waited %.1f ms, %u ms left\n", elapsed, r.timeout);

	/* Expiry is not an error; what is written back is the time left. */
	igt_assert_lte_u32(r.timeout, req);
	igt_assert(elapsed + 20 >= req - r.timeout);
	igt_assert(elapsed <= req - r.timeout + 200);
	igt_assert_lte(1, consistent_layouts(a, SPM_BUF_SIZE, version, &r));
	igt_assert_eq(spm(fd, AMDGPU_SPM_OP_RELEASE), 0);
}

/*
 * A wait cut short by a signal hands the time left back, also in the
 * arguments drm_ioctl() copies out on -EINTR, and nothing changes before
 * the wait: so the same call restarted waits only for the remainder.
 * igt_while_interruptible() injects signals into every igt_ioctl() at
 * growing delays and repeats the interrupted call with the same arguments,
 * as drmIoctl() and libdrm's callers do. If a restart waited the whole
 * timeout again, the call would take about twice as long.
 */
static void test_spm_interrupted(int fd, uint32_t version, void *a, void *b)
{
	const uint32_t req = 100;
	struct retired r;

	acquire_or_skip(fd);
	igt_while_interruptible(true) {
		struct timespec t0 = {};
		double elapsed;

		memset(a, 0, SPM_BUF_SIZE);
		r = (struct retired){};
		igt_assert_eq(set_dest_buf(fd, a, SPM_BUF_SIZE, &r), 0);
		r = (struct retired){ .timeout = req };
		igt_nsec_elapsed(&t0);
		igt_assert_eq(set_dest_buf(fd, b, SPM_BUF_SIZE, &r), 0);
		elapsed = elapsed_ms(&t0);
		igt_debug("waited %.1f ms of %u, %u left\n", elapsed, req,
			  r.timeout);
		igt_assert_lte_u32(r.timeout, req);
		igt_assert_f(elapsed <= req + 50,
			     "a %u ms wait took %.1f ms under signals\n", req,
			     elapsed);
		igt_assert_lte(1, consistent_layouts(a, SPM_BUF_SIZE, version,
						     &r));
		/* Retire b too, so the next pass starts from nothing. */
		r = (struct retired){};
		igt_assert_eq(set_dest_buf(fd, NULL, 0, &r), 0);
	}
	igt_assert_eq(spm(fd, AMDGPU_SPM_OP_RELEASE), 0);
}

/*
 * With SA_RESTART handlers (IGT's signal helper: SIGCONT at 500 Hz) the
 * kernel restarts the wait itself, with the time left it wrote back: a
 * 300 ms wait ends after 300 ms instead of starting over at every signal.
 */
static void test_spm_signal_restart(int fd, uint32_t version, void *a, void *b)
{
	const uint32_t req = 300;
	struct timespec t0 = {};
	struct retired r = {};
	double elapsed;

	acquire_or_skip(fd);
	igt_assert_eq(set_dest_buf(fd, a, SPM_BUF_SIZE, &r), 0);

	igt_set_timeout(10, "SET_DEST_BUF restarted with its full timeout at every signal");
	igt_fork_signal_helper();
	r = (struct retired){ .timeout = req };
	igt_nsec_elapsed(&t0);
	igt_assert_eq(set_dest_buf(fd, b, SPM_BUF_SIZE, &r), 0);
	elapsed = elapsed_ms(&t0);
	igt_stop_signal_helper();
	igt_reset_timeout();

	igt_debug("waited %.1f ms of %u, %u left\n", elapsed, req, r.timeout);
	igt_assert_f(elapsed <= req + 100,
		     "a %u ms wait took %.1f ms under SIGCONT at 500 Hz\n",
		     req, elapsed);
	igt_assert(elapsed + 20 >= req - r.timeout);
	igt_assert_lte(1, consistent_layouts(a, SPM_BUF_SIZE, version, &r));
	igt_assert_eq(spm(fd, AMDGPU_SPM_OP_RELEASE), 0);
}

/*
 * Check the 1.1 words of every share of @buf, retired at @retired_ns after
 * being installed by a SET_DEST_BUF that ran from @inst0 to @inst1.
 */
static void check_share_words(const void *buf, uint32_t seq, uint64_t inst0,
			      uint64_t inst1, uint64_t retired_ns)
{
	struct drm_amdgpu_spm_buffer_header h;
	uint32_t n, share;
	int last_xcc = -1;

	memcpy(&h, buf, sizeof(h));
	n = AMDGPU_SPM_HDR_NUM_SHARES(h.info.xcc_info);
	igt_assert_f(n >= 1 && n <= SPM_MAX_XCC, "%u shares\n", n);
	share = share_size(SPM_BUF_SIZE, n);
	for (uint32_t i = 0; i < n; i++) {
		uint64_t start;

		memcpy(&h, (const char *)buf + (size_t)i * share, sizeof(h));
		start = (uint64_t)h.info.start_ns_hi << 32 | h.info.start_ns_lo;
		igt_debug("share %u: XCC %u, seq %u, %u bytes, +%u us\n", i,
			  AMDGPU_SPM_HDR_XCC(h.info.xcc_info), h.info.seq,
			  h.bytes_copied, h.info.last_us);
		igt_assert_eq_u32(AMDGPU_SPM_HDR_SHARE(h.info.xcc_info), i);
		igt_assert_eq_u32(AMDGPU_SPM_HDR_NUM_SHARES(h.info.xcc_info), n);
		igt_assert_eq_u32(h.info.xcc_info >> 24, 0);
		/* Logical XCC ids, ascending. */
		igt_assert_lt(last_xcc, (int)AMDGPU_SPM_HDR_XCC(h.info.xcc_info));
		last_xcc = AMDGPU_SPM_HDR_XCC(h.info.xcc_info);
		igt_assert_eq_u32(h.info.seq, seq);
		igt_assert_lte_u64(inst0, start);
		igt_assert_lte_u64(start, inst1);
		if (h.bytes_copied)
			igt_assert_lte_u64(start + h.info.last_us * 1000ull,
					   retired_ns);
		else
			igt_assert_eq_u32(h.info.last_us, 0);
	}
}

/*
 * Interface 1.1: each share's header says which XCC it holds, how many
 * shares the buffer has, the XCC's buffer number since ACQUIRE (1 for the
 * first buffer installed, +1 for each further one), when the buffer was
 * installed and when data last went into the share.
 */
static void test_spm_share_words(int fd, uint32_t version, void *a, void *b)
{
	igt_require_f(has_share_info(version),
		      "profiler interface %u.%u has no share header words\n",
		      version >> 24, version & 0xffffff);
	for (int round = 0; round < 2; round++) {
		uint64_t a0, a1, b0, b1;
		struct retired r = {};

		acquire_or_skip(fd);
		memset(a, 0, SPM_BUF_SIZE);
		memset(b, 0, SPM_BUF_SIZE);
		a0 = boottime_ns();
		igt_assert_eq(set_dest_buf(fd, a, SPM_BUF_SIZE, &r), 0);
		a1 = boottime_ns();
		r.timeout = 50;
		b0 = boottime_ns();
		igt_assert_eq(set_dest_buf(fd, b, SPM_BUF_SIZE, &r), 0);
		b1 = boottime_ns();
		/* The numbering starts again with every acquisition. */
		check_share_words(a, 1, a0, a1, b1);
		r.timeout = 0;
		igt_assert_eq(set_dest_buf(fd, NULL, 0, &r), 0);
		check_share_words(b, 2, b0, b1, boottime_ns());
		igt_assert_eq(spm(fd, AMDGPU_SPM_OP_RELEASE), 0);
	}
}

static void test_spm_data_loss(int fd, uint32_t version, void *a, void *b)
{
	const uint32_t small = SPM_MAX_XCC * 2 * SPM_LINE;
	struct retired r = {};

	acquire_or_skip(fd);
	igt_assert_eq(set_dest_buf(fd, a, SPM_BUF_SIZE, &r), 0);
	r.timeout = 200;
	igt_assert_eq(set_dest_buf(fd, b, SPM_BUF_SIZE, &r), 0);
	igt_assert_lte(1, consistent_layouts(a, SPM_BUF_SIZE, version, &r));
	if (!r.bytes) {
		spm(fd, AMDGPU_SPM_OP_RELEASE);
		igt_skip("no SPM samples streaming (no counters programmed)\n");
	}

	/* One line per XCC for half a second of streaming: must overflow. */
	memset(a, 0, small);
	r.timeout = 0;
	igt_assert_eq(set_dest_buf(fd, a, small, &r), 0);
	usleep(500 * 1000);
	r.timeout = 0;
	igt_assert_eq(set_dest_buf(fd, NULL, 0, &r), 0);
	igt_assert_neq_u32(r.loss, 0);
	igt_assert_lte(1, consistent_layouts(a, small, version, &r));
	igt_assert_eq(spm(fd, AMDGPU_SPM_OP_RELEASE), 0);
}

/* ---- The streamed cycle counter: spm-stream-cycles ---- */

/*
 * One SPM counter streamed for real: CPC_PERF_SEL_ALWAYS_COUNT, 16 bits, on
 * GC 9.4.1 (MI100), 9.4.2 (MI200) and 9.4.3 (MI300). The start and stop
 * streams are the minimum of what the series' reference tool writes for
 * that counter (tools/amdgpu-profiler/spm_program.c in the series' tree:
 * the step numbers below are its spm_program_start()'s, where each choice
 * is argued). Register numbers and fields are those of the kernel's
 * drivers/gpu/drm/amd/include/asic_reg/gc/ headers: gc_9_4_2_offset.h and
 * gc_9_4_3_offset.h, and gc_9_0_offset.h for GC 9.4.1 (whose
 * gc_9_4_1_offset.h has none of them); enumerated values are vega10_enum.h's,
 * PM4 is amdgpu/soc15d.h's. The kernel owns ring base, size, threshold,
 * SPM VMID, read pointer, ring mode and DISABLE_AND_RESET: untouched here.
 *
 * A sample is two 32-byte lines of 16-bit slots: slots 0-3 a 64-bit
 * timestamp, slot 4 the counter, the rest unused.
 *
 * From here to spm_stream_build() the code needs nothing of IGT but
 * ARRAY_SIZE(): the series' tools/amdgpu-profiler/tests/test_stream_copies
 * compiles these lines on their own (between the two "spm stream builder"
 * markers) and checks that the streams decode to the writes of
 * spm_program.c's.
 */
/* ---- spm stream builder: begin ---- */
#define GC_9_4_1		0x090401	/* as ip_discovery_version */
#define GC_9_4_2		0x090402
#define GC_9_4_3		0x090403

#define SPM_HEADER_BYTES	32u
#define SPM_SAMPLE_BYTES	64u
#define SPM_SLOT_CYCLES		4

/*
 * The programmed sample interval in SCLK cycles: a multiple of 32 (what the
 * RLC takes) that is no power of two, so a mis-placed field cannot pass.
 */
#define SPM_CYCLES_INTERVAL	12000u

/*
 * How far a sample's cycle count may be from SPM_CYCLES_INTERVAL. Assumed:
 * the RLC samples every interval SCLK cycles (PERFMON_SAMPLE_INTERVAL is in
 * SCLK cycles), CPC_PERF_SEL_ALWAYS_COUNT counts one per SCLK cycle, and
 * SPM counters restart with every sample, so each sample holds the cycles of
 * one interval: the interval exactly, give or take when the sample strobe
 * reaches the counter. A fixed strobe delay (what the RLC's per-block
 * SAMPLE_DELAY registers even out) does not change the count between two
 * strobes; only jitter in it does, a few cycles. 8 allows for that and is
 * less than half the 32-cycle step of the interval, so a wrong interval, a
 * counter of another clock or half or twice the interval fails.
 */
#define SPM_CYCLES_TOLERANCE	8u

/* XCC-local dword addresses: reg + 0x2000 (BASE_IDX 0), + 0xA000 (BASE_IDX
 * 1): GC_BASE__INST0_SEG0/1 of arct_ip_offset.h and aldebaran_ip_offset.h,
 * XCC_REG_RANGE_0_LOW/1_LOW of gfx_v9_4_3.c */
#define SEG0(reg)		(0x2000u + (reg))
#define SEG1(reg)		(0xA000u + (reg))
#define R_GRBM_GFX_INDEX	SEG1(0x2200)
#define R_CP_PERFMON_CNTL	SEG1(0x3808)
#define R_CPC_PERFCOUNTER0_SELECT SEG1(0x3809)
#define R_RLC_SPM_PERFMON_CNTL	SEG1(0x3c80)
#define R_RLC_SPM_SEGMENT_SIZE	SEG1(0x3c84)
#define R_RLC_SPM_SE_MUXSEL_ADDR SEG1(0x3c85)
#define R_RLC_SPM_SE_MUXSEL_DATA SEG1(0x3c86)
#define R_RLC_SPM_CPC_SAMPLE_DELAY SEG1(0x3c88)
#define R_RLC_SPM_GLOBAL_MUXSEL_ADDR SEG1(0x3c9b)
#define R_RLC_SPM_GLOBAL_MUXSEL_DATA SEG1(0x3c9c)
/* gc_9_4_2 and gc_9_4_3; not in gc_9_0, written on MI100 as aqlprofile does */
#define R_RLC_SPM_SAMPLE_DELAY_MAX SEG1(0x3ca4)
#define R_RLC_SPM_SEGMENT_SIZE_CORE1 SEG1(0x3caf)	/* gc_9_4_2 only */
#define R_RLC_PERFMON_CLK_CNTL	SEG1(0x3cbf)	/* not in gc_9_4_3 */
#define R_COMPUTE_PERFCOUNT_ENABLE SEG0(0x0e0b)

/* GRBM_GFX_INDEX: SE_ 31, INSTANCE_ 30, SH_BROADCAST_WRITES 29, SE_INDEX
 * 23:16, SH_INDEX 15:8, INSTANCE_INDEX 7:0 */
#define GRBM_BROADCAST		0xe0000000u
#define GRBM_INSTANCE_0		0xa0000000u
#define GRBM_SE0_SH0_INSTANCE_0	0x00000000u
/* CP_PERFMON_CNTL.SPM_PERFMON_STATE 7:4: START_COUNTING 1, STOP_COUNTING 2 */
#define SPM_START		0x10u
#define SPM_STOP		0x20u
/* RLC_SPM_PERFMON_CNTL: PERFMON_SAMPLE_INTERVAL 31:16, PERFMON_RING_MODE
 * 13:12 = 0 (the kernel's mode; this write replaces it) */
#define RLC_SPM_CNTL		(SPM_CYCLES_INTERVAL << 16)
/* CPC_PERFCOUNTER0_SELECT: CNTR_SEL0 = CPC_PERF_SEL_ALWAYS_COUNT (0),
 * SPM_MODE 23:20 = PERFMON_SPM_MODE_16BIT_CLAMP (1) */
#define CPC_SELECT		0x00100000u
/* PERFMON_SEGMENT_SIZE 7:0 = 2 lines, GLOBAL_NUM_LINE 15:11 = 2, no SE */
#define SEGMENT_SIZE		0x1002u

#define PKT3(op, n)		(3u << 30 | ((op) & 0xffu) << 8 | \
				 ((uint32_t)(n) & 0x3fffu) << 16)
#define PKT3_NOP		0xffff1000u	/* PACKET3(PACKET3_NOP, 0x3FFF) */
#define OP_WRITE_DATA		0x37u
#define OP_EVENT_WRITE		0x46u
#define OP_SET_SH_REG		0x76u
#define OP_SET_UCONFIG_REG	0x79u
#define SH_REG_START		0x2c00u
#define UCONFIG_REG_START	0xc000u
#define WRITE_DATA_REG		(1u << 16 | 1u << 20)	/* WR_ONE_ADDR, WR_CONFIRM */
#define CS_PARTIAL_FLUSH	(7u | 4u << 8)	/* EVENT_TYPE(7) | EVENT_INDEX(4) */

/* Global mux RAM: 0xf0f0 x 4 the timestamp, then CPC (SPM global block 1)
 * instance 0 counter 0 = 1 << 6, the rest unused (0xffff); entry i is what
 * lands in 16-bit slot i of a sample (aqlprofile's spm_decode.cpp reads it
 * so). Then two 0xffff that end the RAM, as aqlprofile writes them
 * (spm_builder.h: lines * 16 + 2 entries, "end of muxsel"): 17 dwords */
static const uint32_t spm_global_mux[17] = {
	0xf0f0f0f0, 0xf0f0f0f0, 0xffff0040, 0xffffffff,
	0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff,
	0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff,
	0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff,
	0xffffffff,
};

/* SE mux RAM: no SE lines, its two end entries (aqlprofile writes them
 * without SE counters too) */
static const uint32_t spm_se_mux[1] = { 0xffffffff };

enum spm_op { UCONFIG, SH, FLUSH, GMUX, SEMUX };

#define P941	0x1u
#define P942	0x2u
#define P943	0x4u
#define PALL	(P941 | P942 | P943)

struct spm_write {
	uint8_t op, parts;
	uint32_t reg, val;
};

static const struct spm_write spm_start_stream[] = {
	{ UCONFIG, P941 | P942, R_RLC_PERFMON_CLK_CNTL, 1 },		/* 1. */
	{ UCONFIG, PALL, R_GRBM_GFX_INDEX, GRBM_BROADCAST },		/* 2. */
	{ FLUSH, PALL },						/* 3. */
	{ UCONFIG, PALL, R_CP_PERFMON_CNTL, SPM_STOP },			/* 4. */
	{ FLUSH, PALL },						/* 5. */
	{ UCONFIG, PALL, R_RLC_SPM_PERFMON_CNTL, RLC_SPM_CNTL },	/* 6. */
	/* 7. SAMPLE_DELAY_MAX, 8. CPC's delay under SE 0, SH 0, instance
	 * 0: aqlprofile's values (gfx908/gfx90a/gfx940_factory.cpp,
	 * gfx9_factory.h: GetSpmSampleDelayMax(), CpcBlockDelayValue) */
	{ UCONFIG, P941, R_RLC_SPM_SAMPLE_DELAY_MAX, 0x34 },
	{ UCONFIG, P942, R_RLC_SPM_SAMPLE_DELAY_MAX, 0x3e },
	{ UCONFIG, P943, R_RLC_SPM_SAMPLE_DELAY_MAX, 0x27 },
	{ UCONFIG, PALL, R_GRBM_GFX_INDEX, GRBM_SE0_SH0_INSTANCE_0 },
	{ UCONFIG, P941, R_RLC_SPM_CPC_SAMPLE_DELAY, 0x30 },
	{ UCONFIG, P942, R_RLC_SPM_CPC_SAMPLE_DELAY, 0x36 },
	{ UCONFIG, P943, R_RLC_SPM_CPC_SAMPLE_DELAY, 0x1f },
	{ UCONFIG, PALL, R_GRBM_GFX_INDEX, GRBM_BROADCAST },
	{ UCONFIG, PALL, R_GRBM_GFX_INDEX, GRBM_INSTANCE_0 },		/* 9. */
	{ UCONFIG, PALL, R_CPC_PERFCOUNTER0_SELECT, CPC_SELECT },	/* 10. */
	{ UCONFIG, PALL, R_GRBM_GFX_INDEX, GRBM_BROADCAST },		/* 12. */
	{ UCONFIG, PALL, R_RLC_SPM_SEGMENT_SIZE, SEGMENT_SIZE },	/* 13. */
	{ UCONFIG, P941 | P942, R_RLC_SPM_SEGMENT_SIZE_CORE1, 0 },	/* 14. */
	{ UCONFIG, PALL, R_RLC_SPM_GLOBAL_MUXSEL_ADDR, 0 },		/* 15. */
	{ GMUX, PALL, R_RLC_SPM_GLOBAL_MUXSEL_DATA },			/* 16. */
	{ UCONFIG, PALL, R_RLC_SPM_SE_MUXSEL_ADDR, 0 },		/* 17. */
	{ SEMUX, PALL, R_RLC_SPM_SE_MUXSEL_DATA },
	{ UCONFIG, PALL, R_RLC_SPM_GLOBAL_MUXSEL_ADDR, 0 },		/* 18. */
	{ UCONFIG, PALL, R_RLC_SPM_SE_MUXSEL_ADDR, 0 },
	{ FLUSH, PALL },						/* 19. */
	{ SH, PALL, R_COMPUTE_PERFCOUNT_ENABLE, 1 },			/* 20. */
	{ UCONFIG, PALL, R_CP_PERFMON_CNTL, SPM_START },		/* 21. */
	{ FLUSH, PALL },						/* 22. */
};

/* spm_program_stop() */
static const struct spm_write spm_stop_stream[] = {
	{ UCONFIG, PALL, R_GRBM_GFX_INDEX, GRBM_BROADCAST },
	{ FLUSH, PALL },
	{ UCONFIG, PALL, R_CP_PERFMON_CNTL, SPM_STOP },
	{ UCONFIG, P941 | P942, R_RLC_PERFMON_CLK_CNTL, 0 },
};

static const struct {
	uint32_t gc;
	unsigned int part;
	const char *name;
} spm_parts[] = {
	{ GC_9_4_1, P941, "MI100 (GC 9.4.1)" },
	{ GC_9_4_2, P942, "MI200 (GC 9.4.2)" },
	{ GC_9_4_3, P943, "MI300 (GC 9.4.3)" },
};

static unsigned int spm_part(uint32_t gc, const char **name)
{
	for (unsigned int i = 0; i < ARRAY_SIZE(spm_parts); i++) {
		if (spm_parts[i].gc == gc) {
			*name = spm_parts[i].name;
			return spm_parts[i].part;
		}
	}
	return 0;
}

/* The start or stop stream into ib, NOP-padded to 8 dwords; its length */
static int spm_stream_build(uint32_t gc, bool start, uint32_t *ib,
			    size_t max_dw)
{
	const struct spm_write *w = start ? spm_start_stream : spm_stop_stream;
	size_t n = start ? ARRAY_SIZE(spm_start_stream) :
			   ARRAY_SIZE(spm_stop_stream);
	const char *name;
	unsigned int part = spm_part(gc, &name);
	size_t len = 0;

#define EMIT(dw) do { if (len < max_dw) ib[len] = (dw); len++; } while (0)
	if (!part)
		return -EOPNOTSUPP;
	for (size_t i = 0; i < n; i++, w++) {
		if (!(w->parts & part))
			continue;
		switch (w->op) {
		case UCONFIG:
			EMIT(PKT3(OP_SET_UCONFIG_REG, 1));
			EMIT(w->reg - UCONFIG_REG_START);
			EMIT(w->val);
			break;
		case SH:
			EMIT(PKT3(OP_SET_SH_REG, 1));
			EMIT(w->reg - SH_REG_START);
			EMIT(w->val);
			break;
		case FLUSH:
			EMIT(PKT3(OP_EVENT_WRITE, 0));
			EMIT(CS_PARTIAL_FLUSH);
			break;
		case GMUX:	/* the RLC steps the address itself */
		case SEMUX: {
			const uint32_t *mux = w->op == GMUX ? spm_global_mux :
					      spm_se_mux;
			unsigned int dw = w->op == GMUX ?
					  ARRAY_SIZE(spm_global_mux) :
					  ARRAY_SIZE(spm_se_mux);

			EMIT(PKT3(OP_WRITE_DATA, 2 + dw));
			EMIT(WRITE_DATA_REG);
			EMIT(w->reg);
			EMIT(0);
			for (unsigned int k = 0; k < dw; k++)
				EMIT(mux[k]);
			break;
		}
		}
	}
	while (len % 8)
		EMIT(PKT3_NOP);
#undef EMIT
	return len > max_dw ? -ENOSPC : (int)len;
}
/* ---- spm stream builder: end ---- */

/*
 * GC 9.4.2 (MI200, gfx90a): aqlprofile does not stream SPM there
 * (rocprofiler-sdk lib/aqlprofile/core/spm_v2.cpp,
 * is_agent_supported_for_spm()), so the streams are untried by ROCm on
 * that part. The test runs there all the same, with a warning: the
 * kernel's SPM path on MI200 (gfx_v9_0.c) is what it is for, and a skip
 * would leave it untested.
 */
static const char *spm_stream_warning(uint32_t gc)
{
	if (gc == GC_9_4_2)
		return "MI200: aqlprofile refuses SPM on gfx90a (spm_v2.cpp); a failure may be the part's";
	return NULL;
}

/*
 * Whether a sample's cycle count must reach the interval too: on 9.4.1
 * and 9.4.2 the start stream turns RLC_PERFMON_CLK_CNTL on (aqlprofile's
 * "enable clock for performance counters"); gc_9_4_3 has no such
 * register, soc15.c enables GFX MGCG, CGCG and CGLS on 9.4.3 and nothing
 * keeps the XCC busy, so there a count below the interval is reported,
 * not failed. More than the interval fails everywhere.
 */
static bool spm_stream_cycles_exact(uint32_t gc)
{
	return gc == GC_9_4_1 || gc == GC_9_4_2;
}

static uint32_t slot16(const uint8_t *s, unsigned int slot)
{
	return s[2 * slot] | (uint32_t)s[2 * slot + 1] << 8;
}

static void spm_sample_decode(const uint8_t *data, uint32_t k, uint64_t *ts,
			      uint32_t *cycles)
{
	const uint8_t *s = data + (size_t)k * SPM_SAMPLE_BYTES;

	*ts = 0;
	for (unsigned int i = 0; i < 4; i++)
		*ts |= (uint64_t)slot16(s, i) << (16 * i);
	*cycles = slot16(s, SPM_SLOT_CYCLES);
}

static void spm_sample_encode(uint8_t *data, uint32_t k, uint64_t ts,
			      uint32_t cycles)
{
	uint8_t *s = data + (size_t)k * SPM_SAMPLE_BYTES;

	memset(s, 0xff, SPM_SAMPLE_BYTES);
	for (unsigned int i = 0; i < 8; i++)
		s[i] = ts >> (8 * i);
	s[2 * SPM_SLOT_CYCLES] = cycles;
	s[2 * SPM_SLOT_CYCLES + 1] = cycles >> 8;
}

/*
 * The checker of a stream's buffers: it records failures (the first one's
 * text) rather than asserting, so that spm-stream-checker can feed it fakes.
 */
struct spm_check {
	uint32_t version, num_xcc, share;
	bool measure;	/* check cycles and timestamps, want data */
	bool exact;	/* the lower bound too (spm_stream_cycles_exact()) */
	struct {
		uint32_t xcc, seq, min_cycles, max_cycles;
		uint64_t last_ts, samples;
		uint64_t below;	/* under the lower bound, not exact */
		bool have_ts;
	} xcc[SPM_MAX_XCC];
	unsigned int buffers, errors;
	char msg[256];
};

static void spm_check_init(struct spm_check *c, uint32_t version,
			   uint32_t num_xcc, uint32_t share)
{
	memset(c, 0, sizeof(*c));
	c->version = version;
	c->num_xcc = min(num_xcc, SPM_MAX_XCC);
	c->share = share;
	c->exact = true;
	for (unsigned int i = 0; i < SPM_MAX_XCC; i++)
		c->xcc[i].min_cycles = UINT32_MAX;
}

__attribute__((format(printf, 2, 3)))
static void spm_fail(struct spm_check *c, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (c->errors++)
		return;
	n = snprintf(c->msg, sizeof(c->msg), "buffer %u: ", c->buffers);
	va_start(ap, fmt);
	vsnprintf(c->msg + n, sizeof(c->msg) - n, fmt, ap);
	va_end(ap);
}

static void spm_check_samples(struct spm_check *c, unsigned int i,
			      const uint8_t *data, uint32_t bytes)
{
	for (uint32_t k = 0; k < bytes / SPM_SAMPLE_BYTES; k++) {
		uint32_t cycles, d;
		uint64_t ts;

		spm_sample_decode(data, k, &ts, &cycles);
		if (c->measure) {
			/* never more than the interval, strictly */
			if (cycles > SPM_CYCLES_INTERVAL + SPM_CYCLES_TOLERANCE)
				spm_fail(c, "share %u sample %u: %u cycles, more than %u + %u",
					 i, k, cycles, SPM_CYCLES_INTERVAL,
					 SPM_CYCLES_TOLERANCE);
			/* less: a failure where exact, else counted */
			d = SPM_CYCLES_INTERVAL - SPM_CYCLES_TOLERANCE;
			if (cycles < d && c->exact)
				spm_fail(c, "share %u sample %u: %u cycles, less than %u - %u",
					 i, k, cycles, SPM_CYCLES_INTERVAL,
					 SPM_CYCLES_TOLERANCE);
			else if (cycles < d)
				c->xcc[i].below++;
			if (c->xcc[i].have_ts && ts <= c->xcc[i].last_ts)
				spm_fail(c, "share %u sample %u: timestamp %"PRIu64" after %"PRIu64,
					 i, k, ts, c->xcc[i].last_ts);
			c->xcc[i].min_cycles = min(c->xcc[i].min_cycles, cycles);
			c->xcc[i].max_cycles = max(c->xcc[i].max_cycles, cycles);
		}
		c->xcc[i].last_ts = ts;
		c->xcc[i].have_ts = true;
		c->xcc[i].samples++;
	}
}

/*
 * Check one retired buffer: SET_DEST_BUF reported @bytes and @loss for it,
 * the call that installed it ran from @inst0 to @inst1 (CLOCK_BOOTTIME ns),
 * the one that retired it returned at @retired. Returns the failures.
 */
static unsigned int spm_check_buffer(struct spm_check *c, const void *buf,
				     uint32_t bytes, uint32_t loss,
				     uint64_t inst0, uint64_t inst1,
				     uint64_t retired)
{
	const uint32_t cap = c->share - SPM_HEADER_BYTES;
	unsigned int errors = c->errors;
	uint64_t sum = 0;
	uint32_t or = 0;

	for (unsigned int i = 0; i < c->num_xcc; i++) {
		const uint8_t *share = (const uint8_t *)buf + (size_t)i * c->share;
		struct drm_amdgpu_spm_buffer_header h;
		uint32_t info, xcc;
		uint64_t start;

		memcpy(&h, share, sizeof(h));
		info = h.info.xcc_info;
		xcc = AMDGPU_SPM_HDR_XCC(info);
		sum += h.bytes_copied;
		or |= h.has_data_loss;

		/* The header words of amdgpu_drm.h (interface 1.1) */
		if (h.version != c->version)
			spm_fail(c, "share %u: version %#x, GET_VER said %#x",
				 i, h.version, c->version);
		if (AMDGPU_SPM_HDR_SHARE(info) != i ||
		    AMDGPU_SPM_HDR_NUM_SHARES(info) != c->num_xcc || info >> 24)
			spm_fail(c, "share %u: xcc_info %#x, want share %u of %u",
				 i, info, i, c->num_xcc);
		if (i && xcc <= c->xcc[i - 1].xcc)
			spm_fail(c, "share %u: XCC %u after XCC %u", i, xcc,
				 c->xcc[i - 1].xcc);
		if (c->buffers && xcc != c->xcc[i].xcc)
			spm_fail(c, "share %u: XCC %u, was XCC %u", i, xcc,
				 c->xcc[i].xcc);
		c->xcc[i].xcc = xcc;
		/* Consecutive per XCC, from 1 after ACQUIRE */
		if (c->xcc[i].seq ? h.info.seq != c->xcc[i].seq + 1 : !h.info.seq)
			spm_fail(c, "share %u: seq %u after %u", i, h.info.seq,
				 c->xcc[i].seq);
		c->xcc[i].seq = h.info.seq;
		start = (uint64_t)h.info.start_ns_hi << 32 | h.info.start_ns_lo;
		if (start < inst0 || start > inst1)
			spm_fail(c, "share %u: start %"PRIu64" ns outside its SET_DEST_BUF [%"PRIu64", %"PRIu64"]",
				 i, start, inst0, inst1);
		if (!h.bytes_copied ? h.info.last_us != 0 :
		    h.info.last_us != UINT32_MAX &&
		    start + h.info.last_us * 1000ull > retired)
			spm_fail(c, "share %u: last copy %u us after its start, %u bytes",
				 i, h.info.last_us, h.bytes_copied);
		/* Whole samples within the share */
		if (h.bytes_copied > cap || h.bytes_copied % SPM_SAMPLE_BYTES)
			spm_fail(c, "share %u: %u bytes, not whole %u-byte samples within %u",
				 i, h.bytes_copied, SPM_SAMPLE_BYTES, cap);
		/* No loss; a full share (data left in the ring) is not loss */
		if (h.has_data_loss & ~AMDGPU_SPM_LOSS_FULL)
			spm_fail(c, "share %u: has_data_loss %#x", i,
				 h.has_data_loss);
		if ((h.has_data_loss & AMDGPU_SPM_LOSS_FULL) && h.bytes_copied != cap)
			spm_fail(c, "share %u: full with %u of %u bytes", i,
				 h.bytes_copied, cap);
		if (c->measure && !h.bytes_copied)
			spm_fail(c, "share %u (XCC %u): no samples", i, xcc);
		if (h.bytes_copied <= cap)
			spm_check_samples(c, i, share + SPM_HEADER_BYTES,
					  h.bytes_copied);
	}
	if (sum != bytes || or != loss)
		spm_fail(c, "SET_DEST_BUF said %u bytes, loss %#x; shares %"PRIu64", %#x",
			 bytes, loss, sum, or);
	c->buffers++;
	return c->errors - errors;
}

/* ---- spm-stream-checker: the checker must catch each of these ---- */

#define FAKE_XCC	2
#define FAKE_SAMPLES	8
#define FAKE_SHARE	(SPM_HEADER_BYTES + FAKE_SAMPLES * SPM_SAMPLE_BYTES)
#define FAKE_CAP	(FAKE_SHARE - SPM_HEADER_BYTES)
#define FAKE_BUFFERS	3
#define FAKE_VERSION	((1u << 24) | 1)
#define FAKE_RETIRED	1000000000ull

struct fake {
	struct spm_check c;
	uint8_t buf[FAKE_BUFFERS][FAKE_XCC * FAKE_SHARE];
	uint32_t bytes[FAKE_BUFFERS], loss[FAKE_BUFFERS];
};

static uint64_t fake_inst(unsigned int b)
{
	return 1000ull * (b + 1);
}

static struct drm_amdgpu_spm_buffer_header *
fake_hdr(struct fake *f, unsigned int b, unsigned int i)
{
	return (void *)(f->buf[b] + (size_t)i * FAKE_SHARE);
}

static uint8_t *fake_data(struct fake *f, unsigned int b, unsigned int i)
{
	return f->buf[b] + (size_t)i * FAKE_SHARE + SPM_HEADER_BYTES;
}

static uint64_t fake_ts(struct fake *f, unsigned int b, unsigned int i,
			unsigned int k)
{
	uint32_t cycles;
	uint64_t ts;

	spm_sample_decode(fake_data(f, b, i), k, &ts, &cycles);
	return ts;
}

/* Three buffers of XCCs 2 and 3 after a probe (seq 1), 7 samples a share */
static void fake_stream(struct fake *f)
{
	memset(f, 0, sizeof(*f));
	for (unsigned int b = 0; b < FAKE_BUFFERS; b++) {
		for (unsigned int i = 0; i < FAKE_XCC; i++) {
			struct drm_amdgpu_spm_buffer_header *h = fake_hdr(f, b, i);
			uint64_t start = fake_inst(b) + 10;

			h->version = FAKE_VERSION;
			h->bytes_copied = FAKE_CAP - SPM_SAMPLE_BYTES;
			h->info.xcc_info = AMDGPU_SPM_HDR_XCC_INFO(2 + i, FAKE_XCC, i);
			h->info.seq = b + 2;
			h->info.start_ns_lo = (uint32_t)start;
			h->info.start_ns_hi = start >> 32;
			h->info.last_us = 5;
			for (unsigned int k = 0; k < FAKE_SAMPLES - 1; k++)
				spm_sample_encode(fake_data(f, b, i), k,
						  (b * FAKE_SAMPLES + k + 1) * 600ull,
						  SPM_CYCLES_INTERVAL);
			f->bytes[b] += h->bytes_copied;
		}
	}
	spm_check_init(&f->c, FAKE_VERSION, FAKE_XCC, FAKE_SHARE);
	for (unsigned int i = 0; i < FAKE_XCC; i++)
		f->c.xcc[i].seq = 1;
	f->c.measure = true;
}

/* A fault in share 1 of buffer 1: h is its header */
static void fault_version(struct fake *f, struct drm_amdgpu_spm_buffer_header *h)
{
	h->version = 1u << 24;
}

static void fault_share_index(struct fake *f, struct drm_amdgpu_spm_buffer_header *h)
{
	h->info.xcc_info ^= 1u << 16;
}

static void fault_num_shares(struct fake *f, struct drm_amdgpu_spm_buffer_header *h)
{
	h->info.xcc_info += 1u << 8;
}

static void fault_high_bits(struct fake *f, struct drm_amdgpu_spm_buffer_header *h)
{
	h->info.xcc_info |= 1u << 24;
}

static void fault_xcc_order(struct fake *f, struct drm_amdgpu_spm_buffer_header *h)
{
	h->info.xcc_info = (h->info.xcc_info & ~0xffu) | 1;
}

static void fault_xcc_changed(struct fake *f, struct drm_amdgpu_spm_buffer_header *h)
{
	h->info.xcc_info += 1;
}

static void fault_seq_gap(struct fake *f, struct drm_amdgpu_spm_buffer_header *h)
{
	h->info.seq++;
}

static void fault_seq_repeated(struct fake *f, struct drm_amdgpu_spm_buffer_header *h)
{
	h->info.seq--;
}

static void fault_start_early(struct fake *f, struct drm_amdgpu_spm_buffer_header *h)
{
	h->info.start_ns_lo = fake_inst(1) - 1;
}

static void fault_start_late(struct fake *f, struct drm_amdgpu_spm_buffer_header *h)
{
	h->info.start_ns_lo = fake_inst(2) + 1;
}

static void fault_last_us_empty(struct fake *f, struct drm_amdgpu_spm_buffer_header *h)
{
	f->bytes[1] -= h->bytes_copied;
	h->bytes_copied = 0;
	f->c.measure = false;
}

static void fault_last_us_late(struct fake *f, struct drm_amdgpu_spm_buffer_header *h)
{
	h->info.last_us = FAKE_RETIRED / 1000;
}

static void fault_partial_sample(struct fake *f, struct drm_amdgpu_spm_buffer_header *h)
{
	h->bytes_copied -= 32;
	f->bytes[1] -= 32;
}

static void fault_over_share(struct fake *f, struct drm_amdgpu_spm_buffer_header *h)
{
	h->bytes_copied = FAKE_CAP + SPM_SAMPLE_BYTES;
	f->bytes[1] += 2 * SPM_SAMPLE_BYTES;
}

static void fault_lost(struct fake *f, struct drm_amdgpu_spm_buffer_header *h)
{
	f->loss[1] = h->has_data_loss = AMDGPU_SPM_LOSS_SAMPLES;
}

static void fault_unknown_loss(struct fake *f, struct drm_amdgpu_spm_buffer_header *h)
{
	f->loss[1] = h->has_data_loss = 1u << 2;
}

static void fault_full_not_full(struct fake *f, struct drm_amdgpu_spm_buffer_header *h)
{
	f->loss[1] = h->has_data_loss = AMDGPU_SPM_LOSS_FULL;
}

static void ok_full(struct fake *f, struct drm_amdgpu_spm_buffer_header *h)
{
	spm_sample_encode(fake_data(f, 1, 1), FAKE_SAMPLES - 1,
			  fake_ts(f, 1, 1, FAKE_SAMPLES - 2) + 1,
			  SPM_CYCLES_INTERVAL);
	h->bytes_copied = FAKE_CAP;
	f->bytes[1] += SPM_SAMPLE_BYTES;
	f->loss[1] = h->has_data_loss = AMDGPU_SPM_LOSS_FULL;
}

static void fault_empty(struct fake *f, struct drm_amdgpu_spm_buffer_header *h)
{
	f->bytes[1] -= h->bytes_copied;
	h->bytes_copied = 0;
	h->info.last_us = 0;
}

static void ok_empty_warmup(struct fake *f, struct drm_amdgpu_spm_buffer_header *h)
{
	fault_empty(f, h);
	f->c.measure = false;
}

static void set_cycles(struct fake *f, unsigned int k, uint32_t cycles)
{
	spm_sample_encode(fake_data(f, 1, 1), k, fake_ts(f, 1, 1, k), cycles);
}

static void ok_cycles_edge(struct fake *f, struct drm_amdgpu_spm_buffer_header *h)
{
	set_cycles(f, 3, SPM_CYCLES_INTERVAL + SPM_CYCLES_TOLERANCE);
	set_cycles(f, 4, SPM_CYCLES_INTERVAL - SPM_CYCLES_TOLERANCE);
}

static void fault_cycles_high(struct fake *f, struct drm_amdgpu_spm_buffer_header *h)
{
	set_cycles(f, 3, SPM_CYCLES_INTERVAL + SPM_CYCLES_TOLERANCE + 1);
}

static void fault_cycles_low(struct fake *f, struct drm_amdgpu_spm_buffer_header *h)
{
	set_cycles(f, 3, SPM_CYCLES_INTERVAL - SPM_CYCLES_TOLERANCE - 1);
}

static void fault_cycles_half(struct fake *f, struct drm_amdgpu_spm_buffer_header *h)
{
	set_cycles(f, 3, SPM_CYCLES_INTERVAL / 2);
}

/* Not exact (GC 9.4.3): more still fails, less is counted */
static void fault_cycles_high_not_exact(struct fake *f,
					struct drm_amdgpu_spm_buffer_header *h)
{
	f->c.exact = false;
	set_cycles(f, 3, SPM_CYCLES_INTERVAL + SPM_CYCLES_TOLERANCE + 1);
}

static void ok_cycles_low_not_exact(struct fake *f,
				    struct drm_amdgpu_spm_buffer_header *h)
{
	f->c.exact = false;
	set_cycles(f, 3, SPM_CYCLES_INTERVAL - SPM_CYCLES_TOLERANCE - 1);
	set_cycles(f, 4, 0);
}

static void fault_ts_back(struct fake *f, struct drm_amdgpu_spm_buffer_header *h)
{
	spm_sample_encode(fake_data(f, 1, 1), 3, fake_ts(f, 1, 1, 2) - 1,
			  SPM_CYCLES_INTERVAL);
}

static void fault_ts_same(struct fake *f, struct drm_amdgpu_spm_buffer_header *h)
{
	spm_sample_encode(fake_data(f, 1, 1), 3, fake_ts(f, 1, 1, 2),
			  SPM_CYCLES_INTERVAL);
}

static void fault_ts_back_across(struct fake *f, struct drm_amdgpu_spm_buffer_header *h)
{
	spm_sample_encode(fake_data(f, 1, 1), 0,
			  fake_ts(f, 0, 1, FAKE_SAMPLES - 2) - 1,
			  SPM_CYCLES_INTERVAL);
}

static void fault_total_bytes(struct fake *f, struct drm_amdgpu_spm_buffer_header *h)
{
	f->bytes[1] += SPM_SAMPLE_BYTES;
}

static void fault_total_loss(struct fake *f, struct drm_amdgpu_spm_buffer_header *h)
{
	f->loss[1] = AMDGPU_SPM_LOSS_FULL;
}

static const struct {
	const char *name;
	void (*apply)(struct fake *f, struct drm_amdgpu_spm_buffer_header *h);
	const char *want;	/* in the first failure; NULL: must pass */
} spm_faults[] = {
	{ "good", NULL, NULL },
	{ "version", fault_version, "version" },
	{ "share-index", fault_share_index, "xcc_info" },
	{ "num-shares", fault_num_shares, "xcc_info" },
	{ "xcc-info-high-bits", fault_high_bits, "xcc_info" },
	{ "xcc-order", fault_xcc_order, "after XCC" },
	{ "xcc-changed", fault_xcc_changed, "was XCC" },
	{ "seq-gap", fault_seq_gap, "seq" },
	{ "seq-repeated", fault_seq_repeated, "seq" },
	{ "start-before-install", fault_start_early, "start" },
	{ "start-after-install", fault_start_late, "start" },
	{ "last-us-without-data", fault_last_us_empty, "last copy" },
	{ "last-us-after-retire", fault_last_us_late, "last copy" },
	{ "partial-sample", fault_partial_sample, "whole" },
	{ "bytes-over-share", fault_over_share, "whole" },
	{ "lost-samples", fault_lost, "has_data_loss" },
	{ "unknown-loss-bit", fault_unknown_loss, "has_data_loss" },
	{ "full-bit-share-not-full", fault_full_not_full, "full with" },
	{ "full-bit-share-full", ok_full, NULL },
	{ "empty-share-measured", fault_empty, "no samples" },
	{ "empty-share-warmup", ok_empty_warmup, NULL },
	{ "cycles-at-tolerance", ok_cycles_edge, NULL },
	{ "cycles-over-tolerance", fault_cycles_high, "cycles, more than" },
	{ "cycles-under-tolerance", fault_cycles_low, "cycles, less than" },
	{ "cycles-half-interval", fault_cycles_half, "cycles, less than" },
	{ "cycles-over-tolerance-not-exact", fault_cycles_high_not_exact, "cycles, more than" },
	{ "cycles-under-tolerance-not-exact", ok_cycles_low_not_exact, NULL },
	{ "timestamp-backwards", fault_ts_back, "timestamp" },
	{ "timestamp-repeated", fault_ts_same, "timestamp" },
	{ "timestamp-backwards-across-buffers", fault_ts_back_across, "timestamp" },
	{ "total-bytes", fault_total_bytes, "SET_DEST_BUF said" },
	{ "total-loss", fault_total_loss, "SET_DEST_BUF said" },
};

static void test_spm_stream_checker_fault(unsigned int n)
{
	static struct fake f;
	unsigned int errors = 0;

	fake_stream(&f);
	if (spm_faults[n].apply)
		spm_faults[n].apply(&f, fake_hdr(&f, 1, 1));
	for (unsigned int b = 0; b < FAKE_BUFFERS; b++)
		errors += spm_check_buffer(&f.c, f.buf[b], f.bytes[b], f.loss[b],
					   fake_inst(b), fake_inst(b) + 100,
					   FAKE_RETIRED);
	igt_assert_eq(f.c.buffers, FAKE_BUFFERS);
	igt_assert_eq(errors, f.c.errors);
	if (!spm_faults[n].want) {
		igt_assert_f(!errors, "%s\n", f.c.msg);
		/* under the lower bound, not exact: counted */
		igt_assert_eq(f.c.xcc[1].below,
			      spm_faults[n].apply == ok_cycles_low_not_exact ? 2 : 0);
		return;
	}
	igt_assert_f(errors && strstr(f.c.msg, spm_faults[n].want) &&
		     !strncmp(f.c.msg, "buffer 1:", 9),
		     "want \"%s\" in buffer 1, got \"%s\"\n", spm_faults[n].want,
		     f.c.msg);
}

/* The streams decoded back: the writes a profiler relies on */
static void test_spm_stream_checker_streams(void)
{
	static const uint32_t other[] = { 0, 0x090000, 0x090400, 0x090404, 0x0b0000 };
	/* aqlprofile's SAMPLE_DELAY_MAX and CPC delay per part (gfx908,
	 * gfx90a, gfx940_factory.cpp and gfx9_factory.h) */
	static const struct { uint32_t gc, max, cpc; } delays[] = {
		{ GC_9_4_1, 0x34, 0x30 }, { GC_9_4_2, 0x3e, 0x36 },
		{ GC_9_4_3, 0x27, 0x1f },
	};
	uint32_t ib[512], mux[17], semux[1];

	for (unsigned int p = 0; p < ARRAY_SIZE(spm_parts); p++) {
		uint32_t gc = spm_parts[p].gc;
		bool gc943 = gc == GC_9_4_3;

		igt_assert_eq_u32(delays[p].gc, gc);
		for (int start = 1; start >= 0; start--) {
			int n = spm_stream_build(gc, start, ib, ARRAY_SIZE(ib));
			int64_t cntl = -1, first = -1, clk = -1, core1 = -1,
				interval = -1, select = -1, segment = -1,
				dmax = -1, dcpc = -1, grbm = -1, dcpc_grbm = -1;
			unsigned int muxes = 0, semuxes = 0;

			igt_assert_lt(0, n);
			igt_assert_eq(n % 8, 0);
			for (int i = 0; i < n;) {
				uint32_t op = (ib[i] >> 8) & 0xff;
				int count = (ib[i] >> 16) & 0x3fff;
				uint32_t reg;

				if (ib[i] == PKT3_NOP) {
					i++;
					continue;
				}
				igt_assert_eq_u32(ib[i] >> 30, 3);
				igt_assert_lte(i + count + 2, n);
				reg = ib[i + 1] + (op == OP_SET_SH_REG ? SH_REG_START :
						   UCONFIG_REG_START);
				if (op == OP_WRITE_DATA && ib[i + 2] == R_RLC_SPM_SE_MUXSEL_DATA) {
					igt_assert_eq(count - 2, 1);
					memcpy(semux, &ib[i + 4], sizeof(semux));
					semuxes++;
				} else if (op == OP_WRITE_DATA) {
					/* all slots and the RAM's two end entries */
					igt_assert_eq_u32(ib[i + 2], R_RLC_SPM_GLOBAL_MUXSEL_DATA);
					igt_assert_eq(count - 2, 17);
					memcpy(mux, &ib[i + 4], sizeof(mux));
					muxes++;
				} else if (op == OP_SET_UCONFIG_REG || op == OP_SET_SH_REG) {
					/* never the kernel's: ring, rdptr, threshold, MC/INT_CNTL */
					igt_assert(!(reg >= SEG1(0x3c81) && reg <= SEG1(0x3c83)) &&
						   reg != SEG1(0x3c9d) && reg != SEG1(0x3c9e) &&
						   reg != SEG1(0x4c71) && reg != SEG1(0x4c72));
					if (reg == R_CP_PERFMON_CNTL) {
						if (first < 0)
							first = ib[i + 2];
						cntl = ib[i + 2];
					}
					clk = reg == R_RLC_PERFMON_CLK_CNTL ? ib[i + 2] : clk;
					core1 = reg == R_RLC_SPM_SEGMENT_SIZE_CORE1 ? ib[i + 2] : core1;
					interval = reg == R_RLC_SPM_PERFMON_CNTL ? ib[i + 2] : interval;
					select = reg == R_CPC_PERFCOUNTER0_SELECT ? ib[i + 2] : select;
					segment = reg == R_RLC_SPM_SEGMENT_SIZE ? ib[i + 2] : segment;
					dmax = reg == R_RLC_SPM_SAMPLE_DELAY_MAX ? ib[i + 2] : dmax;
					if (reg == R_RLC_SPM_CPC_SAMPLE_DELAY) {
						dcpc = ib[i + 2];
						dcpc_grbm = grbm;
					}
					grbm = reg == R_GRBM_GFX_INDEX ? ib[i + 2] : grbm;
				} else {
					igt_assert_eq_u32(op, OP_EVENT_WRITE);
				}
				i += count + 2;
			}
			/* stopped (never reset), then started; stop stops */
			igt_assert_eq(first, SPM_STOP);
			igt_assert_eq(cntl, start ? SPM_START : SPM_STOP);
			igt_assert_eq(clk, gc943 ? -1 : start);
			if (!start)
				continue;
			igt_assert_eq(core1, gc943 ? -1 : 0);
			igt_assert_eq(interval, SPM_CYCLES_INTERVAL << 16);
			igt_assert_eq(select, 0x00100000);
			igt_assert_eq(segment, 0x1002);
			igt_assert_eq(muxes, 1);
			igt_assert_eq(semuxes, 1);
			igt_assert_eq_u32(semux[0], 0xffffffff);
			/* the sample delays; CPC's under SE 0, SH 0, instance 0 */
			igt_assert_eq(dmax, delays[p].max);
			igt_assert_eq(dcpc, delays[p].cpc);
			igt_assert_eq(dcpc_grbm, 0);
			/* the counter's mux entry is the slot the decoder reads,
			 * the two after the last line end the RAM */
			for (unsigned int e = 0; e < 34; e++)
				igt_assert_eq_u32((mux[e / 2] >> (16 * (e % 2))) & 0xffff,
						  e < 4 ? 0xf0f0 : e == SPM_SLOT_CYCLES ? 0x0040 : 0xffff);
			igt_assert_eq(spm_stream_build(gc, start, ib, n - 1), -ENOSPC);
		}
	}
	for (unsigned int i = 0; i < ARRAY_SIZE(other); i++)
		igt_assert_eq(spm_stream_build(other[i], true, ib, ARRAY_SIZE(ib)),
			      -EOPNOTSUPP);
	/* 9.4.2 with a warning; the lower bound where the perfmon clock is on */
	igt_assert(spm_stream_warning(GC_9_4_2) &&
		   strstr(spm_stream_warning(GC_9_4_2), "gfx90a"));
	igt_assert(!spm_stream_warning(GC_9_4_1) && !spm_stream_warning(GC_9_4_3));
	igt_assert(spm_stream_cycles_exact(GC_9_4_1) && spm_stream_cycles_exact(GC_9_4_2) &&
		   !spm_stream_cycles_exact(GC_9_4_3));
}

/* ---- spm-stream-cycles on the device ---- */

#define IB_BO_SIZE		4096u
#define IB_STOP_DW		512u
#define CS_WAIT_NS		5000000000ull
/*
 * Contexts the start stream may go through before the test gives up on
 * reaching every XCC: as many as the largest partition has compute rings.
 * At most AMDGPU_MAX_COMPUTE_RINGS (8, amdgpu_ring.h) kernel compute rings
 * per XCC (amdgpu_gfx_get_num_kcq() caps amdgpu.num_kcq at 8, gfx_v9_4_3
 * has that many per XCC) and AMDGPU_MAX_GC_INSTANCES (8, amdgpu_gfx.h)
 * XCCs in a partition (MI300X in SPX). The partition's scheduler list is
 * XCC-major (aqua_vanjaram_xcp_sched_list_update() walks adev->rings,
 * which gfx_v9_4_3 fills XCC by XCC) and a new context's entity goes to
 * the least loaded ring, the first of equals (drm_sched_pick_best()), so
 * with every context kept the k-th lands on the k-th ring of an idle
 * partition: the last XCC's first ring takes context 8 * (XCCs - 1) + 1,
 * and 64 cover every ring. AMDGPU_INFO cannot say how many there are:
 * available_rings is min(amdgpu_ctx_num_entities[COMPUTE] = 4, XCC 0's
 * rings) (amdgpu_hw_ip_info(), amdgpu_ctx.c).
 */
#define MAX_CTX			64u
#define STREAM_SAMPLES		4000u	/* per share: 16 shares fit SPM_BUF_SIZE */
#define STREAM_SHARE		(SPM_HEADER_BYTES + STREAM_SAMPLES * SPM_SAMPLE_BYTES)
#define STREAM_BUFFERS		4u
#define STREAM_WAIT_MS		1000u
#define WARMUP_MS		10u
#define WARMUP_ROUNDS		(MAX_CTX + 8)

struct spm_gpu {
	amdgpu_device_handle dev;
	amdgpu_bo_handle bo;
	amdgpu_va_handle va_handle;
	amdgpu_bo_list_handle list;
	uint64_t va;
	uint32_t *cpu;
	int start_dw, stop_dw;
	amdgpu_context_handle ctx[MAX_CTX];
	unsigned int nctx;
};

/* GC version (ip_discovery_version) and the compute rings a context can
 * address (available_rings: min(amdgpu_ctx_num_entities[COMPUTE] = 4, XCC
 * 0's rings), not the rings per XCC, 8 on GC 9.4.3). A raw AMDGPU_INFO,
 * because it runs before gpu_init() has a device handle; libdrm's
 * amdgpu_query_hw_ip_info() would do as well: libdrm 2.4.114's struct is
 * as long, with _pad where ip_discovery_version is, and the kernel fills
 * the field either way. */
static int compute_info(int fd, uint32_t *gc, uint32_t *rings)
{
	struct drm_amdgpu_info_hw_ip ip = {};
	struct drm_amdgpu_info req = {
		.return_pointer = to_user_pointer(&ip),
		.return_size = sizeof(ip),
		.query = AMDGPU_INFO_HW_IP_INFO,
	};

	req.query_hw_ip.type = AMDGPU_HW_IP_COMPUTE;
	if (drmIoctl(fd, DRM_IOCTL_AMDGPU_INFO, &req))
		return -errno;
	*gc = ip.ip_discovery_version;
	*rings = __builtin_popcount(ip.available_rings);
	return 0;
}

static int gpu_init(int fd, uint32_t gc, struct spm_gpu *g)
{
	uint32_t major, minor;
	int r;

	r = amdgpu_device_initialize(fd, &major, &minor, &g->dev);
	if (r)
		return r;
	r = amdgpu_bo_alloc_and_map(g->dev, IB_BO_SIZE, IB_BO_SIZE,
				    AMDGPU_GEM_DOMAIN_GTT, 0, &g->bo,
				    (void **)&g->cpu, &g->va, &g->va_handle);
	if (r)
		return r;
	r = amdgpu_bo_list_create(g->dev, 1, &g->bo, NULL, &g->list);
	if (r)
		return r;
	g->start_dw = spm_stream_build(gc, true, g->cpu, IB_STOP_DW);
	g->stop_dw = spm_stream_build(gc, false, g->cpu + IB_STOP_DW,
				      IB_BO_SIZE / 4 - IB_STOP_DW);
	return g->start_dw < 0 ? g->start_dw : min(g->stop_dw, 0);
}

static int gpu_submit(struct spm_gpu *g, amdgpu_context_handle ctx,
		      unsigned int dw, int ndw)
{
	struct amdgpu_cs_ib_info ib = {
		.ib_mc_address = g->va + dw * 4ull,
		.size = ndw,
	};
	struct amdgpu_cs_request req = {
		.ip_type = AMDGPU_HW_IP_COMPUTE,
		.resources = g->list,
		.number_of_ibs = 1,
		.ibs = &ib,
	};
	struct amdgpu_cs_fence fence = {
		.context = ctx,
		.ip_type = AMDGPU_HW_IP_COMPUTE,
	};
	uint32_t expired = 0;
	int r;

	r = amdgpu_cs_submit(ctx, 0, &req, 1);
	if (r)
		return r;
	fence.fence = req.seq_no;
	r = amdgpu_cs_query_fence_status(&fence, CS_WAIT_NS, 0, &expired);
	return r ? r : expired ? 0 : -ETIMEDOUT;
}

/* The start stream on a new context (kept: see test_spm_stream_cycles()) */
static int gpu_start(struct spm_gpu *g)
{
	int r;

	if (g->nctx == MAX_CTX)
		return -ENOSPC;
	r = amdgpu_cs_ctx_create(g->dev, &g->ctx[g->nctx]);
	if (r)
		return r;
	return gpu_submit(g, g->ctx[g->nctx++], 0, g->start_dw);
}

/*
 * The stop stream on every context the start stream went through. A
 * context's entity may have moved to another ring since (its queue was
 * empty: drm_sched_entity_select_rq() picks again), so a stop stream can
 * land on another XCC than its start did and an XCC go on counting.
 * Harmless: samples after the stop are not measured, and RELEASE stops and
 * resets the SPM of every XCC of the partition (the series' spm_stop
 * hooks) whatever the stop streams did.
 */
static int gpu_stop(struct spm_gpu *g)
{
	int r = 0;

	for (unsigned int i = 0; i < g->nctx && !r; i++)
		r = gpu_submit(g, g->ctx[i], IB_STOP_DW, g->stop_dw);
	return r;
}

static void gpu_fini(struct spm_gpu *g)
{
	while (g->nctx)
		amdgpu_cs_ctx_free(g->ctx[--g->nctx]);
	if (g->list)
		amdgpu_bo_list_destroy(g->list);
	if (g->bo)
		amdgpu_bo_unmap_and_free(g->bo, g->va_handle, g->va, IB_BO_SIZE);
	if (g->dev)
		amdgpu_device_deinitialize(g->dev);
	memset(g, 0, sizeof(*g));
}

struct spm_stream {
	int fd;
	void *buf[2];
	unsigned int cur;	/* the installed one */
	uint32_t size;
	uint64_t inst0, inst1;	/* the SET_DEST_BUF that installed it */
	struct spm_check chk;
	uint32_t streamed;	/* shares with data in the last retired */
	bool full;		/* a share of it full */
};

/* Install the other buffer (or none: @stop) and check the retired one */
static int spm_rotate(struct spm_stream *st, bool stop, uint32_t timeout)
{
	void *next = stop ? NULL : st->buf[!st->cur];
	const uint8_t *old = st->buf[st->cur];
	struct retired r = { .timeout = timeout };
	uint64_t a, b;
	int ret;

	if (next)
		memset(next, 0, st->size);
	a = boottime_ns();
	ret = set_dest_buf(st->fd, next, next ? st->size : 0, &r);
	b = boottime_ns();
	if (ret)
		return ret;
	spm_check_buffer(&st->chk, old, r.bytes, r.loss, st->inst0, st->inst1, b);
	st->streamed = 0;
	st->full = false;
	for (unsigned int i = 0; i < st->chk.num_xcc; i++) {
		struct drm_amdgpu_spm_buffer_header h;

		memcpy(&h, old + (size_t)i * STREAM_SHARE, sizeof(h));
		st->streamed |= (h.bytes_copied != 0) << i;
		st->full |= h.bytes_copied >= STREAM_SHARE - SPM_HEADER_BYTES;
	}
	st->inst0 = a;
	st->inst1 = b;
	st->cur = !st->cur;
	return 0;
}

/*
 * The first test to run on an MI part: program the streamed cycle counter,
 * stream STREAM_BUFFERS buffers per XCC and check every share.
 *
 * A command stream runs on the XCC of the compute ring the GPU scheduler
 * gives its context; the CS uAPI cannot choose it. A partition of one XCC
 * (MI100, MI200, MI300 in CPX) needs one submission. On a partition of
 * several, each new context goes to the least loaded of the partition's
 * rings (drm_sched_pick_best()) while the earlier ones stay, so the start
 * stream goes through new contexts until every XCC streams, at most
 * MAX_CTX of them (see there); warm-up buffers show which XCCs stream.
 * When that never reaches every XCC the subtest skips and says why: the
 * placement, not SPM, failed. Warm-up samples (around the starts) are not
 * measured: measuring begins after a warm-up buffer that every XCC wrote
 * into and none filled.
 *
 * The cycle count: never more than the interval + SPM_CYCLES_TOLERANCE;
 * less only where the counter's clock may stop (GC 9.4.3, see
 * spm_stream_cycles_exact()), where such samples are counted and
 * reported, not failed. The subtest says which bound held.
 */
static void test_spm_stream_cycles(int fd, uint32_t version, void *a, void *b)
{
	struct spm_stream st = { .fd = fd, .buf = { a, b } };
	struct drm_amdgpu_spm_buffer_header h;
	struct spm_gpu g = {};
	uint32_t gc, rings, n, all, max_ctx;
	struct retired r = {};
	const char *part, *warning;
	uint64_t below = 0;
	bool warm = false;
	char why[160] = "", placement[512] = "";
	int ret;

	igt_require_f(has_share_info(version),
		      "profiler interface %u.%u has no share header words\n",
		      version >> 24, version & 0xffffff);
	igt_assert_eq(compute_info(fd, &gc, &rings), 0);
	igt_require_f(spm_part(gc, &part),
		      "GC %u.%u.%u: no cycle-counter stream for this part (GC 9.4.1, 9.4.2, 9.4.3 only)\n",
		      gc >> 16, (gc >> 8) & 0xff, gc & 0xff);
	igt_require_f(rings, "%s: no compute ring\n", part);
	warning = spm_stream_warning(gc);
	if (warning)
		igt_warn("%s\n", warning);
	acquire_or_skip(fd);

	/* The XCC count: the headers of a first buffer (seq 1) */
	memset(a, 0, SPM_BUF_SIZE);
	ret = set_dest_buf(fd, a, SPM_BUF_SIZE, &r);
	if (!ret)
		ret = set_dest_buf(fd, NULL, 0, &r);
	memcpy(&h, a, sizeof(h));
	n = AMDGPU_SPM_HDR_NUM_SHARES(h.info.xcc_info);
	if (ret || n < 1 || n > SPM_MAX_XCC || h.info.seq != 1) {
		snprintf(why, sizeof(why), "probe buffer: %s, %u shares, seq %u",
			 strerror(-ret), n, h.info.seq);
		goto out;
	}
	igt_info("%s, %u XCC(s), %u compute rings per context (available_rings), interval %u cycles\n",
		 part, n, rings, SPM_CYCLES_INTERVAL);

	ret = gpu_init(fd, gc, &g);
	if (ret) {
		snprintf(why, sizeof(why), "buffer for the streams: %s",
			 strerror(-ret));
		goto out;
	}
	st.size = n * STREAM_SHARE;
	spm_check_init(&st.chk, version, n, STREAM_SHARE);
	st.chk.exact = spm_stream_cycles_exact(gc);
	for (unsigned int i = 0; i < n; i++)
		st.chk.xcc[i].seq = 1;	/* the probe's */
	memset(a, 0, st.size);
	st.inst0 = boottime_ns();
	r.timeout = 0;
	ret = set_dest_buf(fd, a, st.size, &r);
	st.inst1 = boottime_ns();
	if (ret) {
		snprintf(why, sizeof(why), "SET_DEST_BUF: %s", strerror(-ret));
		goto out;
	}

	/* Warm up: the start stream until every XCC streams */
	all = (1u << n) - 1;
	max_ctx = n > 1 ? MAX_CTX : 1;
	for (unsigned int i = 0; i < WARMUP_ROUNDS && !warm; i++) {
		if (st.streamed != all && g.nctx < max_ctx) {
			ret = gpu_start(&g);
			if (ret) {
				snprintf(why, sizeof(why), "start stream: %s",
					 strerror(-ret));
				goto stop;
			}
		}
		ret = spm_rotate(&st, false, WARMUP_MS);
		if (ret) {
			snprintf(why, sizeof(why), "SET_DEST_BUF: %s",
				 strerror(-ret));
			goto stop;
		}
		warm = st.streamed == all && !st.full;
	}
	if (st.streamed != all) {
		/* placement, not SPM: a skip below unless something failed */
		snprintf(placement, sizeof(placement),
			 "scheduler placement: %u start streams (one per kept context) reached the XCCs of shares %#x of %#x only; each goes to the least loaded ring of an XCC-major list (aqua_vanjaram.c, drm_sched_pick_best()), so other clients' contexts or more than %u rings keep them off the last XCCs; use CPX (one XCC per partition)",
			 g.nctx, st.streamed, all, MAX_CTX);
		goto stop;
	}

	/* Measure: several buffers per XCC, every sample counted */
	st.chk.measure = true;
	for (unsigned int i = 0; i < STREAM_BUFFERS && !ret; i++)
		ret = spm_rotate(&st, false, STREAM_WAIT_MS);
	st.chk.measure = false;
	if (ret)
		snprintf(why, sizeof(why), "SET_DEST_BUF: %s", strerror(-ret));
stop:
	/* Stop counting, retire the last buffer */
	ret = gpu_stop(&g);
	if (ret && !why[0])
		snprintf(why, sizeof(why), "stop stream: %s", strerror(-ret));
	ret = spm_rotate(&st, true, 0);
	if (ret && !why[0])
		snprintf(why, sizeof(why), "SET_DEST_BUF(0): %s", strerror(-ret));
	for (unsigned int i = 0; i < n; i++) {
		igt_info("share %u = XCC %u: %"PRIu64" samples, measured cycles %u..%u, %"PRIu64" below %u\n",
			 i, st.chk.xcc[i].xcc, st.chk.xcc[i].samples,
			 st.chk.xcc[i].min_cycles, st.chk.xcc[i].max_cycles,
			 st.chk.xcc[i].below,
			 SPM_CYCLES_INTERVAL - SPM_CYCLES_TOLERANCE);
		below += st.chk.xcc[i].below;
	}
out:
	gpu_fini(&g);
	ret = spm(fd, AMDGPU_SPM_OP_RELEASE);
	igt_assert_f(!why[0], "%s\n", why);
	igt_assert_f(!st.chk.errors, "%u failed checks, first: %s\n",
		     st.chk.errors, st.chk.msg);
	igt_assert_eq(ret, 0);
	igt_skip_on_f(placement[0], "%s\n", placement);
	/* which reading held: the upper bound always, the lower one or not */
	igt_info("cycle count: at most %u + %u in every sample, %s\n",
		 SPM_CYCLES_INTERVAL, SPM_CYCLES_TOLERANCE,
		 st.chk.exact ?
		 "and at least the interval - 8 (checked: perfmon clock on)" :
		 !below ? "and at least the interval - 8 (not required: clock gating)" :
		 "some below the interval - 8 (clock gating: not a failure)");
}

static void test_spm_unprivileged(int fd)
{
	bool relaxed = spm_paranoid_relaxed();
	int probe;

	probe = spm(fd, AMDGPU_SPM_OP_ACQUIRE);
	igt_skip_on_f(probe == -EBUSY, "SPM busy\n");
	igt_skip_on_f(probe == -ENODEV,
		      "SPM VMID not available (see the kernel log)\n");
	if (!probe)
		spm(fd, AMDGPU_SPM_OP_RELEASE);
	if (getuid() != 0)
		igt_require_f(!has_profiling_caps(),
			      "not root, yet has CAP_PERFMON or CAP_SYS_ADMIN\n");

	igt_fork(child, 1) {
		int cfd = drm_reopen_driver(fd);
		int ret;

		if (getuid() == 0)
			igt_drop_root();
		igt_assert(!has_profiling_caps());
		/* The version probe is always allowed. */
		igt_assert_eq(get_version(cfd, NULL), 0);
		ret = spm(cfd, AMDGPU_SPM_OP_ACQUIRE);
		if (relaxed)
			igt_assert_eq(ret, 0);
		else
			igt_assert_eq(ret, -EPERM);
	}
	igt_waitchildren();
}

static void test_spm_blocks_reserve_vmid(int fd)
{
	int fd2 = drm_reopen_driver(fd);

	acquire_or_skip(fd);
	/* The profiler owns the SPM VMID: no graphics reservation, any fd. */
	igt_assert_eq(vm_op(fd2, AMDGPU_VM_OP_RESERVE_VMID), -EBUSY);
	igt_assert_eq(vm_op(fd, AMDGPU_VM_OP_RESERVE_VMID), -EBUSY);
	igt_assert_eq(spm(fd, AMDGPU_SPM_OP_RELEASE), 0);

	igt_assert_eq(vm_op(fd2, AMDGPU_VM_OP_RESERVE_VMID), 0);
	igt_assert_eq(vm_op(fd2, AMDGPU_VM_OP_UNRESERVE_VMID), 0);
	close(fd2);
}

static void test_reserve_vmid_blocks_spm(int fd)
{
	int fd2 = drm_reopen_driver(fd);
	int ret;

	/* Make sure the profiler may run here at all. */
	acquire_or_skip(fd);
	igt_assert_eq(spm(fd, AMDGPU_SPM_OP_RELEASE), 0);

	igt_assert_eq(vm_op(fd2, AMDGPU_VM_OP_RESERVE_VMID), 0);
	ret = spm(fd, AMDGPU_SPM_OP_ACQUIRE);
	if (!ret)
		spm(fd, AMDGPU_SPM_OP_RELEASE);
	igt_assert_eq(ret, -EBUSY);

	/* Released reservation, and one that ends with its file. */
	igt_assert_eq(vm_op(fd2, AMDGPU_VM_OP_UNRESERVE_VMID), 0);
	igt_assert_eq(spm(fd, AMDGPU_SPM_OP_ACQUIRE), 0);
	igt_assert_eq(spm(fd, AMDGPU_SPM_OP_RELEASE), 0);

	igt_assert_eq(vm_op(fd2, AMDGPU_VM_OP_RESERVE_VMID), 0);
	igt_assert_eq(spm(fd, AMDGPU_SPM_OP_ACQUIRE), -EBUSY);
	close(fd2);
	igt_assert_eq(spm(fd, AMDGPU_SPM_OP_ACQUIRE), 0);
	igt_assert_eq(spm(fd, AMDGPU_SPM_OP_RELEASE), 0);
}

static void test_partitions_independent(void)
{
	int fds[MAX_NODES], extra[MAX_NODES];
	int n, owned = 0;

	n = open_all_render_nodes(fds, MAX_NODES);
	igt_require_f(n >= 2, "needs two amdgpu render nodes (a partitioned MI300 or two GPUs), found %d\n",
		      n);

	/* Each render node is its own partition: all of them at once. */
	for (int i = 0; i < n; i++) {
		int ret = spm(fds[i], AMDGPU_SPM_OP_ACQUIRE);

		extra[i] = -1;
		/* No SPM here, or no SPM VMID on this node's device */
		if (ret == -EOPNOTSUPP || ret == -ENODEV)
			continue;
		if (ret == -EPERM || ret == -EBUSY) {
			igt_skip_on_f(!owned, "cannot acquire: %s\n",
				      strerror(-ret));
			igt_assert_f(false, "node %d: %s after another node acquired\n",
				     i, strerror(-ret));
		}
		igt_assert_eq(ret, 0);
		owned++;

		/* ... and each exclusively. */
		extra[i] = drm_reopen_driver(fds[i]);
		igt_assert_eq(spm(extra[i], AMDGPU_SPM_OP_ACQUIRE), -EBUSY);
	}
	igt_require_f(owned >= 2, "fewer than two nodes with SPM support\n");

	for (int i = 0; i < n; i++) {
		if (extra[i] < 0)
			continue;
		igt_assert_eq(spm(fds[i], AMDGPU_SPM_OP_RELEASE), 0);
		igt_assert_eq(spm(extra[i], AMDGPU_SPM_OP_ACQUIRE), 0);
		igt_assert_eq(spm(extra[i], AMDGPU_SPM_OP_RELEASE), 0);
		close(extra[i]);
	}
	for (int i = 0; i < n; i++)
		close(fds[i]);
}

static void test_primary_node(void)
{
	int card = drm_open_driver(DRIVER_AMDGPU);
	int parts = partition_count(card);
	int ret;

	/* The version probe works on any node. */
	igt_assert_eq(get_version(card, NULL), 0);

	ret = spm(card, AMDGPU_SPM_OP_ACQUIRE);
	if (!ret)
		spm(card, AMDGPU_SPM_OP_RELEASE);
	igt_skip_on_f(ret == -EOPNOTSUPP, "no SPM support\n");
	if (parts > 1) {
		/* Which partition would that be? None: refused. */
		igt_assert_eq(ret, -EINVAL);
	} else {
		igt_skip_on_f(ret == -EPERM || ret == -ENODEV || ret == -EBUSY,
			      "cannot acquire: %s\n", strerror(-ret));
		igt_assert_eq(ret, 0);
	}
	drm_close_driver(card);
}

igt_main
{
	uint32_t version = 0;
	void *a = NULL, *b = NULL;
	int fd = -1;

	igt_describe("No device needed: the cycle-counter streams decoded back, and "
		     "spm-stream-cycles' checker on fakes with one fault each");
	igt_subtest_with_dynamic("spm-stream-checker") {
		igt_dynamic("streams")
			test_spm_stream_checker_streams();
		for (unsigned int i = 0; i < ARRAY_SIZE(spm_faults); i++)
			igt_dynamic(spm_faults[i].name)
				test_spm_stream_checker_fault(i);
	}

	igt_fixture {
		int ret;

		fd = drm_open_driver_render(DRIVER_AMDGPU);
		ret = get_version(fd, &version);
		igt_require_f(ret == 0,
			      "kernel without DRM_AMDGPU_PROFILER (GET_VER: %s)\n",
			      strerror(-ret));
		a = alloc_buf(SPM_BUF_SIZE);
		b = alloc_buf(SPM_BUF_SIZE);
	}

	igt_describe("GET_VER returns major version 1 and writes nothing else");
	igt_subtest("get-version")
		test_get_version(fd);

	igt_describe("A non-zero pad is rejected and nothing is written back");
	igt_subtest("invalid-pad")
		test_invalid_pad(fd);

	igt_describe("Unknown, zero and out-of-range operations are rejected");
	igt_subtest("invalid-op")
		test_invalid_op(fd);

	igt_describe("GET_VER takes no input: each non-zero byte of the union is rejected");
	igt_subtest("get-version-nonzero-data")
		test_get_version_nonzero_data(fd);

	igt_subtest_group {
		igt_fixture {
			int ret = spm(fd, AMDGPU_SPM_OP_ACQUIRE);

			if (!ret)
				spm(fd, AMDGPU_SPM_OP_RELEASE);
			igt_require_f(ret != -EOPNOTSUPP,
				      "no SPM support on this device\n");
			igt_require_f(ret != -EINVAL,
				      "render node of no single partition\n");
		}

		igt_describe("Non-zero reserved words and output fields are rejected, unchanged");
		igt_subtest("spm-reserved-nonzero")
			test_spm_reserved(fd);

		igt_describe("Unknown SPM operations are rejected");
		igt_subtest("spm-invalid-op")
			test_spm_invalid_op(fd);

		igt_describe("ACQUIRE and RELEASE take no buffer, size or timeout");
		igt_subtest("spm-args-on-acquire-release")
			test_spm_args_on_acquire_release(fd, a);

		igt_describe("SET_DEST_BUF: address and size together, 32-byte aligned, at most 256 MiB");
		igt_subtest("spm-dest-buf-rules")
			test_spm_dest_buf_rules(fd, a);

		igt_describe("RELEASE and SET_DEST_BUF without an owner are rejected");
		igt_subtest("spm-not-acquired")
			test_spm_not_acquired(fd, a);

		igt_describe("A buffer without room for a header and a line per XCC is rejected");
		igt_subtest("spm-share-too-small")
			test_spm_share_too_small(fd, a);

		igt_describe("ACQUIRE, RELEASE, a second RELEASE fails, ACQUIRE again");
		igt_subtest("spm-acquire-release")
			test_spm_acquire_release(fd);

		igt_describe("A second file gets EBUSY for every operation while the first owns the SPM");
		igt_subtest("spm-busy-two-fds")
			test_spm_busy_two_fds(fd, a);

		igt_describe("Another process gets EBUSY while this one owns the SPM");
		igt_subtest("spm-busy-two-processes")
			test_spm_busy_two_processes(fd);

		igt_describe("A process killed while owning the SPM releases it");
		igt_subtest("spm-release-on-exit")
			test_spm_release_on_exit(fd);

		igt_describe("Closing the owner's file releases the SPM");
		igt_subtest("spm-release-on-close")
			test_spm_release_on_close(fd, a);

		igt_describe("SET_DEST_BUF with timeout 0 retires at once; per-XCC headers add up");
		igt_subtest("spm-set-dest-buf-timeout-zero")
			test_spm_timeout_zero(fd, version, a);

		igt_describe("SET_DEST_BUF with a timeout writes back the time left");
		igt_subtest("spm-set-dest-buf-time-left")
			test_spm_time_left(fd, version, a, b);

		igt_describe("Interrupted waits hand the time left back: a restart waits only the rest");
		igt_subtest("spm-set-dest-buf-interrupted")
			test_spm_interrupted(fd, version, a, b);

		igt_describe("Under SA_RESTART signals a wait still ends after its timeout");
		igt_subtest("spm-set-dest-buf-signal-restart")
			test_spm_signal_restart(fd, version, a, b);

		igt_describe("Interface 1.1: each share says its XCC, index, count, sequence number and times");
		igt_subtest("spm-share-header-words")
			test_spm_share_words(fd, version, a, b);

		igt_describe("A buffer too small for the stream reports data loss");
		igt_subtest("spm-data-loss")
			test_spm_data_loss(fd, version, a, b);

		igt_describe("The streamed cycle counter: several buffers per XCC, each share's "
			     "header words, sequence, whole samples, no loss, cycles per sample");
		igt_subtest("spm-stream-cycles")
			test_spm_stream_cycles(fd, version, a, b);

		igt_describe("Without CAP_PERFMON/CAP_SYS_ADMIN ACQUIRE is refused unless spm_paranoid allows it");
		igt_subtest("spm-unprivileged")
			test_spm_unprivileged(fd);

		igt_describe("While the profiler owns the SPM, AMDGPU_VM_OP_RESERVE_VMID gets EBUSY");
		igt_subtest("spm-blocks-reserve-vmid")
			test_spm_blocks_reserve_vmid(fd);

		igt_describe("While a VMID is reserved for graphics SPM, ACQUIRE gets EBUSY");
		igt_subtest("reserve-vmid-blocks-spm")
			test_reserve_vmid_blocks_spm(fd);
	}

	igt_describe("Each partition render node acquires its SPM independently and exclusively");
	igt_subtest("spm-partitions-independent")
		test_partitions_independent();

	igt_describe("The primary node of a device with several partitions gets EINVAL");
	igt_subtest("spm-primary-node")
		test_primary_node();

	igt_fixture {
		munmap(a, SPM_BUF_SIZE);
		munmap(b, SPM_BUF_SIZE);
		drm_close_driver(fd);
	}
}
