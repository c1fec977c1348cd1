// SPDX-License-Identifier: GPL-2.0
/*
 * Tests of DRM_IOCTL_AMDGPU_PROFILER, the amdgpu Stream Performance Monitor
 * (SPM) interface. The contract is the kernel-doc of
 * struct drm_amdgpu_profiler_args in include/uapi/drm/amdgpu_drm.h.
 *
 * The suite is skipped as a whole when the machine has no amdgpu render
 * node, and the SPM tests are skipped when the device has no SPM support
 * (-EOPNOTSUPP). Tests that need to own the SPM are skipped when the caller
 * may not profile (-EPERM, see amdgpu.spm_paranoid), when the driver has no
 * SPM VMID (-ENODEV: it could not set one up at load) or another client
 * holds it (-EBUSY). With the default module parameters and CAP_PERFMON
 * nothing is skipped for policy. -l and -h work without a device.
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
#include "amdgpu_spm_stream.h"

#ifndef DRM_IOCTL_AMDGPU_PROFILER
/* Run "make headers" in a tree with the profiler series first. */
#error "amdgpu_drm.h without DRM_IOCTL_AMDGPU_PROFILER"
#endif

#define SPM_LINE		32u
#define SPM_MAX_BUF_SIZE	(256u << 20)
#define SPM_BUF_SIZE		(4u << 20)
#define PARANOID_PATH		"/sys/module/amdgpu/parameters/spm_paranoid"

static char node_path[64];

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

/*
 * Command submission with the uAPI alone, for stream_cycles: one GTT BO
 * holding the start and the stop stream, mapped into the file's GPU VM,
 * and compute contexts to submit them through. Every context stays until
 * the end, so that a new one is placed on another compute ring (see
 * stream_cycles).
 */
#define IB_BO_SIZE		4096u
#define IB_STOP_DW		512u	/* the stop stream's offset */
#define CS_WAIT_NS		5000000000ull

/*
 * Contexts the start stream may go through before the test gives up on
 * reaching every XCC: as many as the largest partition has compute rings.
 * At most AMDGPU_MAX_COMPUTE_RINGS (8, amdgpu_ring.h) kernel compute rings
 * per XCC (amdgpu_gfx_get_num_kcq() caps amdgpu.num_kcq at 8, and
 * gfx_v9_4_3 has that many per XCC) and AMDGPU_MAX_GC_INSTANCES (8,
 * amdgpu_gfx.h) XCCs in a partition (MI300X in SPX). The partition's
 * scheduler list is XCC-major (aqua_vanjaram_xcp_sched_list_update()
 * walks adev->rings, which gfx_v9_4_3 fills XCC by XCC) and a new
 * context's entity goes to its least loaded ring, the first of equals
 * (drm_sched_pick_best()), so with every context kept the k-th lands on
 * the k-th ring of an idle partition: the last XCC's first ring takes
 * context 8 * (XCCs - 1) + 1, and 64 cover every ring. AMDGPU_INFO cannot
 * say how many there are: available_rings is min(amdgpu_ctx_num_entities
 * [COMPUTE] = 4, XCC 0's rings) (amdgpu_hw_ip_info(), amdgpu_ctx.c).
 */
#define MAX_CTX			64u

struct spm_gpu {
	__u32 bo;		/* GEM handle, 0: none */
	__u32 *cpu;		/* its CPU mapping */
	__u64 va;		/* its GPU address, 0: not mapped */
	int start_dw, stop_dw;	/* stream lengths */
	__u32 ctx[MAX_CTX];
	unsigned int nctx;
};

static int amdgpu_info(int fd, __u32 query, __u32 hw_ip, void *out,
		       __u32 size)
{
	struct drm_amdgpu_info req;

	memset(&req, 0, sizeof(req));
	memset(out, 0, size);
	req.return_pointer = (uintptr_t)out;
	req.return_size = size;
	req.query = query;
	req.query_hw_ip.type = hw_ip;
	return ioctl(fd, DRM_IOCTL_AMDGPU_INFO, &req) ? -errno : 0;
}

/*
 * The GC version (as ip_discovery_version) and the compute rings a context
 * can address (available_rings: at most amdgpu_ctx_num_entities[COMPUTE],
 * 4, counted on XCC 0; not the rings per XCC, 8 on GC 9.4.3)
 */
static int compute_info(int fd, __u32 *gc, __u32 *rings)
{
	struct drm_amdgpu_info_hw_ip ip;
	int ret;

	ret = amdgpu_info(fd, AMDGPU_INFO_HW_IP_INFO, AMDGPU_HW_IP_COMPUTE,
			  &ip, sizeof(ip));
	*gc = ip.ip_discovery_version;
	*rings = __builtin_popcount(ip.available_rings);
	return ret;
}

static int gpu_init(int fd, struct spm_gpu *g, __u32 gc)
{
	struct drm_amdgpu_info_device dev;
	union drm_amdgpu_gem_create create;
	union drm_amdgpu_gem_mmap map;
	struct drm_amdgpu_gem_va va;
	void *p;
	int ret;

	ret = amdgpu_info(fd, AMDGPU_INFO_DEV_INFO, 0, &dev, sizeof(dev));
	if (ret)
		return ret;
	memset(&create, 0, sizeof(create));
	create.in.bo_size = IB_BO_SIZE;
	create.in.alignment = IB_BO_SIZE;
	create.in.domains = AMDGPU_GEM_DOMAIN_GTT;
	if (ioctl(fd, DRM_IOCTL_AMDGPU_GEM_CREATE, &create))
		return -errno;
	g->bo = create.out.handle;
	memset(&map, 0, sizeof(map));
	map.in.handle = g->bo;
	if (ioctl(fd, DRM_IOCTL_AMDGPU_GEM_MMAP, &map))
		return -errno;
	p = mmap(NULL, IB_BO_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		 map.out.addr_ptr);
	if (p == MAP_FAILED)
		return -errno;
	g->cpu = p;
	g->start_dw = spm_stream_build(gc, true, g->cpu, IB_STOP_DW);
	g->stop_dw = spm_stream_build(gc, false, g->cpu + IB_STOP_DW,
				      IB_BO_SIZE / 4 - IB_STOP_DW);
	if (g->start_dw < 0 || g->stop_dw < 0)
		return g->start_dw < 0 ? g->start_dw : g->stop_dw;
	/* The lowest address userspace may map, 2 MiB aligned */
	memset(&va, 0, sizeof(va));
	va.handle = g->bo;
	va.operation = AMDGPU_VA_OP_MAP;
	va.flags = AMDGPU_VM_PAGE_READABLE | AMDGPU_VM_PAGE_WRITEABLE |
		   AMDGPU_VM_PAGE_EXECUTABLE;
	va.va_address = (dev.virtual_address_offset + (2ull << 20) - 1) &
			~((2ull << 20) - 1);
	va.map_size = IB_BO_SIZE;
	if (ioctl(fd, DRM_IOCTL_AMDGPU_GEM_VA, &va))
		return -errno;
	g->va = va.va_address;
	return 0;
}

/* Submit @ndw dwords from dword @dw of the BO on context @ctx and wait */
static int gpu_submit(int fd, struct spm_gpu *g, __u32 ctx, unsigned int dw,
		      int ndw)
{
	struct drm_amdgpu_bo_list_entry entry = { .bo_handle = g->bo };
	struct drm_amdgpu_bo_list_in list = {
		.operation = ~0u,
		.bo_number = 1,
		.bo_info_size = sizeof(entry),
		.bo_info_ptr = (uintptr_t)&entry,
	};
	struct drm_amdgpu_cs_chunk_ib ib = {
		.va_start = g->va + dw * 4ull,
		.ib_bytes = ndw * 4,
		.ip_type = AMDGPU_HW_IP_COMPUTE,
	};
	struct drm_amdgpu_cs_chunk chunks[2] = {
		{ AMDGPU_CHUNK_ID_BO_HANDLES, sizeof(list) / 4,
		  (uintptr_t)&list },
		{ AMDGPU_CHUNK_ID_IB, sizeof(ib) / 4, (uintptr_t)&ib },
	};
	__u64 chunk_ptrs[2] = { (uintptr_t)&chunks[0], (uintptr_t)&chunks[1] };
	union drm_amdgpu_wait_cs wait;
	union drm_amdgpu_cs cs;
	struct timespec ts;

	memset(&cs, 0, sizeof(cs));
	cs.in.ctx_id = ctx;
	cs.in.num_chunks = 2;
	cs.in.chunks = (uintptr_t)chunk_ptrs;
	if (ioctl(fd, DRM_IOCTL_AMDGPU_CS, &cs))
		return -errno;
	/* WAIT_CS takes an absolute CLOCK_MONOTONIC time */
	clock_gettime(CLOCK_MONOTONIC, &ts);
	memset(&wait, 0, sizeof(wait));
	wait.in.handle = cs.out.handle;
	wait.in.timeout = ts.tv_sec * 1000000000ull + ts.tv_nsec + CS_WAIT_NS;
	wait.in.ip_type = AMDGPU_HW_IP_COMPUTE;
	wait.in.ctx_id = ctx;
	if (ioctl(fd, DRM_IOCTL_AMDGPU_WAIT_CS, &wait))
		return -errno;
	return wait.out.status ? -ETIMEDOUT : 0;
}

/* The start stream on a new context */
static int gpu_start(int fd, struct spm_gpu *g)
{
	union drm_amdgpu_ctx ctx;

	if (g->nctx == MAX_CTX)
		return -ENOSPC;
	memset(&ctx, 0, sizeof(ctx));
	ctx.in.op = AMDGPU_CTX_OP_ALLOC_CTX;
	if (ioctl(fd, DRM_IOCTL_AMDGPU_CTX, &ctx))
		return -errno;
	g->ctx[g->nctx++] = ctx.out.alloc.ctx_id;
	return gpu_submit(fd, g, ctx.out.alloc.ctx_id, 0, g->start_dw);
}

/*
 * The stop stream on every context the start stream went through. A
 * context's entity may have moved to another ring since (its queue was
 * empty: drm_sched_entity_select_rq() picks again), so a stop stream can
 * land on another XCC than its start stream did, and an XCC may go on
 * counting. Harmless: the samples after the stop are not measured, and
 * RELEASE stops and resets the SPM of every XCC of the partition (the
 * series' spm_stop hooks) whatever the stop streams did.
 */
static int gpu_stop(int fd, struct spm_gpu *g)
{
	unsigned int i;
	int ret = 0;

	for (i = 0; i < g->nctx && !ret; i++)
		ret = gpu_submit(fd, g, g->ctx[i], IB_STOP_DW, g->stop_dw);
	return ret;
}

static void gpu_fini(int fd, struct spm_gpu *g)
{
	struct drm_gem_close close_bo = { .handle = g->bo };
	struct drm_amdgpu_gem_va va = {
		.handle = g->bo,
		.operation = AMDGPU_VA_OP_UNMAP,
		.va_address = g->va,
		.map_size = IB_BO_SIZE,
	};
	union drm_amdgpu_ctx ctx;

	while (g->nctx) {
		memset(&ctx, 0, sizeof(ctx));
		ctx.in.op = AMDGPU_CTX_OP_FREE_CTX;
		ctx.in.ctx_id = g->ctx[--g->nctx];
		ioctl(fd, DRM_IOCTL_AMDGPU_CTX, &ctx);
	}
	if (g->va)
		ioctl(fd, DRM_IOCTL_AMDGPU_GEM_VA, &va);
	if (g->cpu)
		munmap(g->cpu, IB_BO_SIZE);
	if (g->bo)
		ioctl(fd, DRM_IOCTL_GEM_CLOSE, &close_bo);
	memset(g, 0, sizeof(*g));
}

/* ---------------------------------------------------------------------- */

static const char why_perm[] =
	"may not profile: needs CAP_PERFMON or a relaxed amdgpu.spm_paranoid";
static const char why_no_vmid[] =
	"SPM VMID not available: the driver could not set it up at load (see the kernel log)";
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
	struct spm_gpu gpu;
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
		gpu_fini(self->fd, &self->gpu);
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
 * privilege, no SPM VMID, somebody else profiling) *@why says why and the
 * test skips.
 */
static int acquire(int fd, const char **why)
{
	int ret = spm_op(fd, AMDGPU_SPM_OP_ACQUIRE);

	*why = NULL;
	if (ret == -EPERM)
		*why = why_perm;
	else if (ret == -ENODEV)
		*why = why_no_vmid;
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

/*
 * stream_cycles: the first test to run on an MI part. Program the streamed
 * cycle counter (amdgpu_spm_stream.c), stream STREAM_BUFFERS buffers per
 * XCC and check each share: header words, consecutive sequence numbers,
 * whole samples, no lost samples, each sample's cycle count the programmed
 * interval (SPM_CYCLES_TOLERANCE) and rising timestamps.
 *
 * A command stream runs on the XCC of the compute ring the GPU scheduler
 * gives its context, and the CS uAPI cannot choose it. A partition of one
 * XCC (MI100, MI200, MI300 in CPX) needs one submission. On a partition of
 * several, each new context goes to the least loaded of the partition's
 * rings (drm_sched_pick_best()) while the earlier ones stay, so the start
 * stream goes through new contexts until every XCC streams, at most
 * MAX_CTX of them (see there); warm-up buffers show which XCCs stream.
 * When that never reaches every XCC (other clients' contexts load the
 * rings, or the kernel has more rings than MAX_CTX assumes) the test
 * skips and says so: the placement, not SPM, is then what failed.
 * Samples of the warm-up (around the starts) are not measured: measuring
 * begins after a warm-up buffer that every XCC wrote into and none filled.
 *
 * The cycle count: never more than the interval + SPM_CYCLES_TOLERANCE;
 * less only where the counter's clock may stop (GC 9.4.3, see
 * spm_stream_cycles_exact()), where such samples are counted and
 * reported instead of failing. The test says which bound held.
 */
#define STREAM_SAMPLES		4000u	/* per share: 16 shares fit 4 MiB */
#define STREAM_SHARE		(SPM_HEADER_BYTES + STREAM_SAMPLES * SPM_SAMPLE_BYTES)
#define STREAM_BUFFERS		4u
#define STREAM_WAIT_MS		1000u
#define WARMUP_MS		10u
#define WARMUP_ROUNDS		(MAX_CTX + 8)

struct stream {
	int fd;
	void *buf[2];
	unsigned int cur;	/* the installed one */
	__u32 size;
	__u64 inst0, inst1;	/* its SET_DEST_BUF */
	struct spm_check chk;
	__u32 streamed;		/* shares with data in the last retired */
	bool full;		/* a share of it was full */
};

/*
 * Install the other buffer, waiting up to @timeout ms for the current one
 * to fill, and check the one retired (@next NULL: stop, retire the last).
 */
static int rotate(struct stream *st, bool stop, __u32 timeout)
{
	void *next = stop ? NULL : st->buf[!st->cur];
	const void *old = st->buf[st->cur];
	__u32 bytes = 0, loss = 0, i;
	__u64 a, b;
	int ret;

	if (next)
		memset(next, 0, st->size);
	a = now_ns();
	ret = set_dest_buf(st->fd, next, next ? st->size : 0, &timeout, &bytes,
			   &loss);
	b = now_ns();
	if (ret)
		return ret;
	spm_check_buffer(&st->chk, old, bytes, loss, st->inst0, st->inst1, b);
	st->streamed = 0;
	st->full = false;
	for (i = 0; i < st->chk.num_xcc; i++) {
		struct drm_amdgpu_spm_buffer_header h;

		memcpy(&h, (const char *)old + (size_t)i * STREAM_SHARE,
		       sizeof(h));
		if (h.bytes_copied)
			st->streamed |= 1u << i;
		if (h.bytes_copied >= STREAM_SHARE - SPM_HEADER_BYTES)
			st->full = true;
	}
	st->inst0 = a;
	st->inst1 = b;
	st->cur = !st->cur;
	return 0;
}

TEST_F(spm, stream_cycles)
{
	struct spm_gpu *g = &self->gpu;
	struct drm_amdgpu_spm_buffer_header h;
	__u32 gc, rings, n, all, max_ctx, i, timeout = 0;
	struct stream st = { .fd = self->fd };
	const char *part, *why, *warning, *held;
	char placement[512] = "";
	unsigned long long below = 0;
	bool warm = false;
	int ret;

	if (!has_share_info(self->version))
		SKIP(return, "profiler interface %u.%u has no share header words",
		     self->version >> 24, self->version & 0xffffff);
	ASSERT_EQ(0, compute_info(self->fd, &gc, &rings));
	part = spm_stream_part(gc);
	if (!part)
		SKIP(return, "GC %u.%u.%u: no cycle-counter stream (GC 9.4.1-9.4.3 only)",
		     gc >> 16, (gc >> 8) & 0xff, gc & 0xff);
	if (!rings)
		SKIP(return, "%s: no compute ring", part);
	warning = spm_stream_warning(gc);
	if (warning)
		ksft_print_msg("WARNING: %s\n", warning);
	ret = acquire(self->fd, &why);
	if (why)
		SKIP(return, "%s", why);
	ASSERT_EQ(0, ret);

	/* The XCC count: a first buffer's headers say it (seq 1) */
	ASSERT_EQ(0, set_dest_buf(self->fd, self->buf, SPM_BUF_SIZE, &timeout,
				  NULL, NULL));
	ASSERT_EQ(0, set_dest_buf(self->fd, NULL, 0, &timeout, NULL, NULL));
	memcpy(&h, self->buf, sizeof(h));
	n = AMDGPU_SPM_HDR_NUM_SHARES(HDR_XCC_INFO(&h));
	ASSERT_TRUE(n >= 1 && n <= SPM_MAX_XCC) TH_LOG("%u shares", n);
	ASSERT_EQ(1u, HDR_SEQ(&h));
	TH_LOG("%s, %u XCC(s), %u compute rings per context (available_rings), interval %u cycles",
	       part, n, rings, SPM_CYCLES_INTERVAL);

	ASSERT_EQ(0, gpu_init(self->fd, g, gc));
	st.buf[0] = self->buf;
	st.buf[1] = self->buf2;
	st.size = n * STREAM_SHARE;
	spm_check_init(&st.chk, self->version, n, STREAM_SHARE);
	st.chk.exact = spm_stream_cycles_exact(gc);
	for (i = 0; i < n; i++)
		st.chk.xcc[i].seq = 1;	/* the probe's */
	memset(st.buf[0], 0, st.size);
	st.inst0 = now_ns();
	ASSERT_EQ(0, set_dest_buf(self->fd, st.buf[0], st.size, &timeout,
				  NULL, NULL));
	st.inst1 = now_ns();

	/* Warm up: the start stream until every XCC streams */
	all = (1u << n) - 1;
	max_ctx = n > 1 ? MAX_CTX : 1;
	for (i = 0; i < WARMUP_ROUNDS && !warm; i++) {
		if (st.streamed != all && g->nctx < max_ctx) {
			ret = gpu_start(self->fd, g);
			EXPECT_EQ(0, ret) TH_LOG("start stream: %s", strerror(-ret));
			if (ret)
				goto stop;
		}
		ret = rotate(&st, false, WARMUP_MS);
		EXPECT_EQ(0, ret);
		if (ret)
			goto stop;
		warm = st.streamed == all && !st.full;
	}
	if (st.streamed != all) {
		/* Placement, not SPM: skipped below when nothing else failed */
		snprintf(placement, sizeof(placement),
			 "scheduler placement: %u start streams (one per kept context) reached the XCCs of shares %#x of %#x only; each goes to the least loaded ring of an XCC-major list (aqua_vanjaram.c, drm_sched_pick_best()), so other clients' contexts or more than %u rings keep them off the last XCCs; use CPX (one XCC per partition)",
			 g->nctx, st.streamed, all, MAX_CTX);
		goto stop;
	}

	/* Measure: several buffers per XCC, all samples counted */
	st.chk.measure = true;
	for (i = 0; i < STREAM_BUFFERS; i++) {
		ret = rotate(&st, false, STREAM_WAIT_MS);
		EXPECT_EQ(0, ret);
		if (ret)
			break;
	}
	st.chk.measure = false;
stop:
	/* Stop counting, then retire the last buffer and release */
	ret = gpu_stop(self->fd, g);
	EXPECT_EQ(0, ret) TH_LOG("stop stream: %s", strerror(-ret));
	EXPECT_EQ(0, rotate(&st, true, 0));
	EXPECT_EQ(0u, st.chk.errors) TH_LOG("%u failed checks, first: %s",
					    st.chk.errors, st.chk.msg);
	for (i = 0; i < n; i++) {
		TH_LOG("share %u = XCC %u: %llu samples, measured cycles %u..%u, %llu below %u",
		       i, st.chk.xcc[i].xcc,
		       (unsigned long long)st.chk.xcc[i].samples,
		       st.chk.xcc[i].min_cycles, st.chk.xcc[i].max_cycles,
		       (unsigned long long)st.chk.xcc[i].below,
		       SPM_CYCLES_INTERVAL - SPM_CYCLES_TOLERANCE);
		below += st.chk.xcc[i].below;
	}
	gpu_fini(self->fd, g);
	EXPECT_EQ(0, spm_op(self->fd, AMDGPU_SPM_OP_RELEASE));
	if (placement[0] && !st.chk.errors && _metadata->exit_code == KSFT_PASS)
		SKIP(return, "%s", placement);
	EXPECT_EQ(0, placement[0]) TH_LOG("%s", placement);
	/* Which reading held: upper bound always; the lower one, or not */
	if (st.chk.exact)
		held = "and at least the interval - 8 (checked: perfmon clock on)";
	else if (!below)
		held = "and at least the interval - 8 (not required: clock gating)";
	else
		held = "some below the interval - 8 (clock gating: not a failure)";
	if (!st.chk.errors)
		ksft_print_msg("cycle count: at most %u + %u in every sample, %s\n",
			       SPM_CYCLES_INTERVAL, SPM_CYCLES_TOLERANCE, held);
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
	if (ret == -ENODEV)
		SKIP(return, "%s", why_no_vmid);
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
