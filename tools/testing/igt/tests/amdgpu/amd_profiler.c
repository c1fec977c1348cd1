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
#include <signal.h>
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

/* Take the SPM or skip: no privilege or somebody else profiling. */
static void acquire_or_skip(int fd)
{
	int ret = spm(fd, AMDGPU_SPM_OP_ACQUIRE);

	igt_skip_on_f(ret == -EPERM,
		      "may not profile: needs CAP_PERFMON or a relaxed amdgpu.spm_paranoid\n");
	igt_skip_on_f(ret == -EACCES,
		      "SPM refused on this GPU: the RLC writes through VMID 0 (GC 9.4.x); set amdgpu.spm_unsafe_vmid0=1 to test it\n");
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

static void test_spm_unprivileged(int fd)
{
	bool relaxed = spm_paranoid_relaxed();
	int probe;

	probe = spm(fd, AMDGPU_SPM_OP_ACQUIRE);
	igt_skip_on_f(probe == -EBUSY, "SPM busy\n");
	igt_skip_on_f(probe == -EACCES,
		      "SPM refused on this GPU unless amdgpu.spm_unsafe_vmid0=1\n");
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
		if (ret == -EOPNOTSUPP)
			continue;
		if (ret == -EPERM || ret == -EACCES || ret == -EBUSY) {
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
		igt_skip_on_f(ret == -EPERM || ret == -EACCES || ret == -EBUSY,
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
