// SPDX-License-Identifier: MIT
/*
 * Copyright 2026 The amdgpu profiler series authors
 *
 * Tests only: LD_PRELOAD=fake_kfd_preload.so gives a program that links
 * ROCm's libhsakmt (statically, as ROCr does, or shared) a /dev/kfd and a
 * KFD topology in sysfs without an AMD GPU, as far as hsaKmtOpenKFD(),
 * hsaKmtAcquireSystemProperties(), hsaKmtGetNodeProperties() and the
 * hsaKmtSPM*() calls need them. Stack it in front of
 * tests/fake_amdgpu_preload.so, which serves the render node:
 *
 *   LD_PRELOAD=.../fake_kfd_preload.so:.../fake_amdgpu_preload.so \
 *   FAKE_AMDGPU_NODE=/dev/dri/renderD128 FAKE_AMDGPU=version=1.1,xcc=2 prog
 *
 * What it fakes, and which libhsakmt code each behaviour was read from
 * (ROCm/ROCR-Runtime libhsakmt/src, read, not copied):
 *
 * - open("/dev/kfd") (openclose.c, hsaKmtOpenKFD()) opens /dev/null; the
 *   ioctls on that file are answered here, all others go to RTLD_NEXT.
 * - AMDKFD_IOC_GET_VERSION (version.c, hsakmt_init_kfd_version(): major
 *   must be 1): 1.17, the interface of the 6.12 upstream header.
 * - AMDKFD_IOC_GET_PROCESS_APERTURES_NEW (fmm.c, get_process_apertures()
 *   from hsakmt_fmm_init_process_apertures()): one entry per GPU node of
 *   the topology, with a GPUVM aperture in the canonical address space,
 *   as a dGPU has, so that libhsakmt sets up its SVM apertures (with
 *   mmap(); it dereferences them later, in map_mmio()). The
 *   AMDKFD_IOC_SET_MEMORY_POLICY and AMDKFD_IOC_ACQUIRE_VM that follow
 *   succeed.
 * - Every other ioctl number the upstream KFD knows (below
 *   AMDKFD_COMMAND_END) fails with EINVAL (the MMIO remap page's
 *   AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, which fmm.c's map_mmio() only logs);
 *   every number at or above it, AMDKFD_IOC_RLC_SPM (0x84)
 *   among them, fails with ENOTTY, as upstream kfd_ioctl() answers an
 *   unknown number (drivers/gpu/drm/amd/amdkfd/kfd_chardev.c). With
 *   FAKE_KFD_SPM=ok, AMDKFD_IOC_RLC_SPM succeeds instead (a KFD with SPM:
 *   ROCm's DKMS driver) and copies nothing; FAKE_KFD_SPM=EBUSY (or another
 *   errno name of the list in errno_of()) makes it fail with that errno.
 * - The topology (topology.c: generation_id, system_properties,
 *   nodes/N/gpu_id, nodes/N/properties, counted with opendir() on nodes/):
 *   fopen(), open(), openat() and opendir() of paths below
 *   /sys/devices/virtual/kfd/kfd and /sys/class/kfd/kfd are redirected to
 *   $FAKE_KFD_SYSFS, or, without it, to a tree this library writes, on
 *   first use, into a new directory under $TMPDIR (or /tmp): node 0 a
 *   CPU, node 1 a GPU whose properties are the defaults below, changed by
 *   FAKE_KFD_GPU="gfx_target_version=90402,num_xcc=2,drm_render_minor=128,
 *   gpu_id=4660" (any property of the default list, and gpu_id); the
 *   process that wrote the tree removes it at exit.
 *
 * FAKE_KFD_STATS=1 prints, at exit, the KFD ioctls it saw.
 *
 * Build (the uAPI's linux/kfd_ioctl.h from any kernel's headers_install):
 *   cc -O2 -Wall -Wextra -fPIC -shared -isystem <hdrs>/include \
 *      -o fake_kfd_preload.so fake_kfd_preload.c -ldl -pthread
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <linux/kfd_ioctl.h>

#define EXPORT __attribute__((visibility("default")))

#define KFD_NR_RLC_SPM	0x84	/* ROCm's AMDKFD_IOC_RLC_SPM, not upstream */

static const char *const sysfs_prefixes[] = {
	"/sys/devices/virtual/kfd/kfd",
	"/sys/class/kfd/kfd",
};

static int (*real_open)(const char *, int, ...);
static int (*real_openat)(int, const char *, int, ...);
static int (*real_close)(int);
static int (*real_ioctl)(int, unsigned long, ...);
static FILE *(*real_fopen)(const char *, const char *);
static DIR *(*real_opendir)(const char *);

static char root[4096];
static bool given;		/* root[] is $FAKE_KFD_SYSFS */
static pid_t made_by;		/* the process that wrote root[], or 0 */
static int kfd_fd = -1;
static unsigned int n_get_version, n_apertures, n_rlc_spm, n_other;

static int errno_of(const char *s)
{
	static const struct { const char *name; int err; } names[] = {
		{ "EBUSY", EBUSY }, { "EINVAL", EINVAL }, { "ENOTTY", ENOTTY },
		{ "EPERM", EPERM }, { "ENODEV", ENODEV }, { "EOPNOTSUPP", EOPNOTSUPP },
	};
	unsigned int i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(s, names[i].name))
			return names[i].err;
	return -1;
}

static void put_file(const char *dir, const char *name, const char *text)
{
	char path[4200];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = real_fopen(path, "w");
	if (!f) {
		fprintf(stderr, "fake_kfd: cannot write %s\n", path);
		abort();
	}
	fputs(text, f);
	fclose(f);
}

/* "name value" lines of a GPU node: the defaults, then FAKE_KFD_GPU's. */
static void gpu_properties(char *out, size_t size, unsigned long *gpu_id)
{
	static const char *const defaults[][2] = {
		{ "cpu_cores_count", "0" }, { "simd_count", "304" },
		{ "mem_banks_count", "0" }, { "caches_count", "0" },
		{ "io_links_count", "0" }, { "p2p_links_count", "0" },
		{ "cpu_core_id_base", "0" }, { "simd_id_base", "2147487744" },
		{ "max_waves_per_simd", "8" }, { "lds_size_in_kb", "64" },
		{ "gds_size_in_kb", "0" }, { "wave_front_size", "64" },
		{ "array_count", "8" }, { "simd_arrays_per_engine", "1" },
		{ "cu_per_simd_array", "10" }, { "simd_per_cu", "4" },
		{ "max_slots_scratch_cu", "32" }, { "gfx_target_version", "90402" },
		{ "vendor_id", "4098" }, { "device_id", "29856" },
		{ "location_id", "256" }, { "domain", "0" },
		{ "drm_render_minor", "128" }, { "hive_id", "0" },
		{ "num_sdma_engines", "2" }, { "num_sdma_xgmi_engines", "0" },
		{ "num_sdma_queues_per_engine", "8" }, { "num_cp_queues", "24" },
		{ "max_engine_clk_fcompute", "2100" }, { "local_mem_size", "0" },
		{ "fw_version", "150" }, { "capability", "0" },
		{ "debug_prop", "0" }, { "sdma_fw_version", "20" },
		{ "unique_id", "1" }, { "num_xcc", "2" },
		{ "max_engine_clk_ccompute", "2000" },
	};
	const char *over = getenv("FAKE_KFD_GPU");
	size_t len = 0, i;

	*gpu_id = 4660;
	out[0] = '\0';
	for (i = 0; i < sizeof(defaults) / sizeof(defaults[0]); i++) {
		const char *v = defaults[i][1];
		char key[128];
		const char *p;
		size_t n = strlen(defaults[i][0]);

		/* An override "name=value" replaces the default. */
		snprintf(key, sizeof(key), "%s=", defaults[i][0]);
		for (p = over; p && (p = strstr(p, key)); p += n)
			if (p == over || p[-1] == ',') {
				static char val[64];

				snprintf(val, sizeof(val), "%.*s",
					 (int)strcspn(p + n + 1, ","), p + n + 1);
				v = val;
				break;
			}
		len += snprintf(out + len, size - len, "%s %s\n",
				defaults[i][0], v);
	}
	if (over && (over = strstr(over, "gpu_id=")))
		*gpu_id = strtoul(over + 7, NULL, 10);
}

static void make_topology(void)
{
	const char *tmp = getenv("TMPDIR");
	char dir[4200], props[4096];
	unsigned long gpu_id;
	char id[32];

	snprintf(root, sizeof(root), "%s/fake_kfd.XXXXXX", tmp ? tmp : "/tmp");
	if (!mkdtemp(root)) {
		fprintf(stderr, "fake_kfd: mkdtemp %s: %s\n", root, strerror(errno));
		abort();
	}
	made_by = getpid();
	snprintf(dir, sizeof(dir), "%s/topology", root);
	mkdir(dir, 0755);
	put_file(dir, "generation_id", "1\n");
	put_file(dir, "system_properties",
		 "platform_oem 0\nplatform_id 0\nplatform_rev 0\n");
	snprintf(dir, sizeof(dir), "%s/topology/nodes", root);
	mkdir(dir, 0755);

	snprintf(dir, sizeof(dir), "%s/topology/nodes/0", root);
	mkdir(dir, 0755);
	put_file(dir, "gpu_id", "0\n");
	put_file(dir, "name", "\n");
	put_file(dir, "properties",
		 "cpu_cores_count 2\nsimd_count 0\nmem_banks_count 0\n"
		 "caches_count 0\nio_links_count 0\np2p_links_count 0\n"
		 "cpu_core_id_base 0\nsimd_id_base 0\nmax_waves_per_simd 0\n"
		 "lds_size_in_kb 0\ngds_size_in_kb 0\nwave_front_size 0\n"
		 "array_count 0\nsimd_arrays_per_engine 0\ncu_per_simd_array 0\n"
		 "simd_per_cu 0\nmax_slots_scratch_cu 0\ngfx_target_version 0\n"
		 "vendor_id 0\ndevice_id 0\nlocation_id 0\ndomain 0\n"
		 "drm_render_minor 0\nhive_id 0\nnum_sdma_engines 0\n"
		 "num_sdma_xgmi_engines 0\nnum_sdma_queues_per_engine 0\n"
		 "num_cp_queues 0\nmax_engine_clk_ccompute 2000\n");

	snprintf(dir, sizeof(dir), "%s/topology/nodes/1", root);
	mkdir(dir, 0755);
	gpu_properties(props, sizeof(props), &gpu_id);
	snprintf(id, sizeof(id), "%lu\n", gpu_id);
	put_file(dir, "gpu_id", id);
	put_file(dir, "name", "gfx942\n");
	put_file(dir, "properties", props);
}

static void init_once(void)
{
	const char *dir = getenv("FAKE_KFD_SYSFS");

	real_open = dlsym(RTLD_NEXT, "open");
	real_openat = dlsym(RTLD_NEXT, "openat");
	real_close = dlsym(RTLD_NEXT, "close");
	real_ioctl = dlsym(RTLD_NEXT, "ioctl");
	real_fopen = dlsym(RTLD_NEXT, "fopen");
	real_opendir = dlsym(RTLD_NEXT, "opendir");
	given = dir;
	if (dir)
		snprintf(root, sizeof(root), "%s", dir);
}

/* Written on first use, so that a process that only execs leaves none. */
static void topology(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	if (!given)
		pthread_once(&once, make_topology);
}

/* Libraries' constructors (libnuma's) may call in before ours runs. */
static void init(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, init_once);
}

__attribute__((constructor)) static void ctor(void)
{
	init();
}

static int remove_one(const char *path, const struct stat *st, int flag,
		      struct FTW *ftw)
{
	(void)st; (void)flag; (void)ftw;
	return remove(path);
}

__attribute__((destructor)) static void fini(void)
{
	const char *s = getenv("FAKE_KFD_STATS");

	/* The tree this library wrote, by the process that wrote it. */
	if (made_by && made_by == getpid())
		nftw(root, remove_one, 16, FTW_DEPTH | FTW_PHYS);

	if (s && *s && strcmp(s, "0"))
		fprintf(stderr,
			"fake_kfd: GET_VERSION %u, GET_PROCESS_APERTURES_NEW %u, RLC_SPM %u, other %u\n",
			n_get_version, n_apertures, n_rlc_spm, n_other);
}

/* @path below a KFD sysfs prefix: its name below root[] in @buf. */
static const char *redirect(const char *path, char *buf, size_t size)
{
	unsigned int i;

	if (!path)
		return path;
	for (i = 0; i < sizeof(sysfs_prefixes) / sizeof(sysfs_prefixes[0]); i++) {
		size_t n = strlen(sysfs_prefixes[i]);

		if (!strncmp(path, sysfs_prefixes[i], n) &&
		    (path[n] == '/' || !path[n])) {
			topology();
			snprintf(buf, size, "%s%s", root, path + n);
			return buf;
		}
	}
	return path;
}

static int open_kfd(int flags)
{
	int fd = real_open("/dev/null", O_RDWR | (flags & O_CLOEXEC));

	if (fd >= 0)
		kfd_fd = fd;
	return fd;
}

static mode_t mode_of(int flags, va_list ap)
{
	return (flags & (O_CREAT | O_TMPFILE)) ? va_arg(ap, mode_t) : 0;
}

EXPORT int open(const char *path, int flags, ...)
{
	char buf[8192];
	mode_t mode;
	va_list ap;

	init();
	if (!strcmp(path, "/dev/kfd"))
		return open_kfd(flags);
	va_start(ap, flags);
	mode = mode_of(flags, ap);
	va_end(ap);
	return real_open(redirect(path, buf, sizeof(buf)), flags, mode);
}

EXPORT int open64(const char *path, int flags, ...)
	__attribute__((alias("open")));

EXPORT int openat(int dirfd, const char *path, int flags, ...)
{
	char buf[8192];
	mode_t mode;
	va_list ap;

	init();
	if (!strcmp(path, "/dev/kfd"))
		return open_kfd(flags);
	va_start(ap, flags);
	mode = mode_of(flags, ap);
	va_end(ap);
	return real_openat(dirfd, redirect(path, buf, sizeof(buf)), flags, mode);
}

EXPORT int openat64(int dirfd, const char *path, int flags, ...)
	__attribute__((alias("openat")));

EXPORT FILE *fopen(const char *path, const char *mode)
{
	char buf[8192];

	init();
	return real_fopen(redirect(path, buf, sizeof(buf)), mode);
}

EXPORT FILE *fopen64(const char *path, const char *mode)
	__attribute__((alias("fopen")));

EXPORT DIR *opendir(const char *path)
{
	char buf[8192];

	init();
	return real_opendir(redirect(path, buf, sizeof(buf)));
}

EXPORT int close(int fd)
{
	init();
	if (fd >= 0 && fd == kfd_fd)
		kfd_fd = -1;
	return real_close(fd);
}

/*
 * One entry per GPU node of the topology: a GPUVM aperture in the
 * canonical address space up to 2^47 - 1, as a dGPU in GPUVM64 mode has
 * (libhsakmt then sets up its SVM apertures with mmap() and issues
 * AMDKFD_IOC_SET_MEMORY_POLICY and AMDKFD_IOC_ACQUIRE_VM, which succeed).
 */
static int apertures(struct kfd_ioctl_get_process_apertures_new_args *a)
{
	struct kfd_process_device_apertures *ap =
		(void *)(uintptr_t)a->kfd_process_device_apertures_ptr;
	uint32_t n = 0, node;
	char path[4200];

	for (node = 0; n < a->num_of_nodes; node++) {
		unsigned long gpu_id;
		FILE *f;
		int ok;

		snprintf(path, sizeof(path), "%s/topology/nodes/%u/gpu_id", root, node);
		f = real_fopen(path, "r");
		if (!f)
			break;
		ok = fscanf(f, "%lu", &gpu_id) == 1;
		fclose(f);
		if (!ok || !gpu_id)
			continue;
		memset(&ap[n], 0, sizeof(ap[n]));
		ap[n].gpu_id = gpu_id;
		ap[n].lds_base = 0x1000000000000ull;
		ap[n].lds_limit = 0x1000000000000ull + 0xffffffffull;
		ap[n].scratch_base = 0x2000000000000ull;
		ap[n].scratch_limit = 0x2000000000000ull + 0xffffffffull;
		ap[n].gpuvm_base = 0x1000000ull;
		ap[n].gpuvm_limit = (1ull << 47) - 1;
		n++;
	}
	a->num_of_nodes = n;
	return 0;
}

static int kfd_ioctl(unsigned long req, void *arg)
{
	unsigned int nr = _IOC_NR(req);

	if (req == AMDKFD_IOC_GET_VERSION) {
		struct kfd_ioctl_get_version_args *a = arg;

		n_get_version++;
		a->major_version = 1;
		a->minor_version = 17;
		return 0;
	}
	if (req == AMDKFD_IOC_GET_PROCESS_APERTURES_NEW) {
		n_apertures++;
		return apertures(arg);
	}
	if (req == AMDKFD_IOC_ACQUIRE_VM || req == AMDKFD_IOC_SET_MEMORY_POLICY) {
		n_other++;
		return 0;
	}
	if (_IOC_TYPE(req) == AMDKFD_IOCTL_BASE && nr == KFD_NR_RLC_SPM) {
		const char *mode = getenv("FAKE_KFD_SPM");

		n_rlc_spm++;
		if (mode && !strcmp(mode, "ok"))
			return 0;
		if (mode && errno_of(mode) > 0)
			return -errno_of(mode);
		return -ENOTTY;	/* upstream: nr >= AMDKFD_CORE_IOCTL_COUNT */
	}
	n_other++;
	if (_IOC_TYPE(req) != AMDKFD_IOCTL_BASE || nr >= AMDKFD_COMMAND_END)
		return -ENOTTY;
	return -EINVAL;
}

EXPORT int ioctl(int fd, unsigned long req, ...)
{
	va_list ap;
	void *arg;
	int ret;

	init();
	va_start(ap, req);
	arg = va_arg(ap, void *);
	va_end(ap);
	if (fd < 0 || fd != kfd_fd)
		return real_ioctl(fd, req, arg);
	ret = kfd_ioctl(req, arg);
	if (ret < 0) {
		errno = -ret;
		return -1;
	}
	return ret;
}
