// SPDX-License-Identifier: MIT
/*
 * Copyright 2026 The amdgpu profiler series authors
 *
 * KUnit tests of the SPM manager (suite amdgpu_spm): the ioctl's contract,
 * destination buffers, timeouts, loss, the end of an owner and concurrency,
 * driven through amdgpu_spm_ioctl() on a fake device whose registers are
 * the RLC model of amdgpu_spm_model.c behind the real gfx_v9_4_3 hooks.
 * Destination buffers are real user memory from kunit_vm_mmap(). The
 * benchmark suite amdgpu_spm_bench prints what it measured.
 */

#include <kunit/test.h>

#include <linux/anon_inodes.h>
#include <linux/cred.h>
#include <linux/delay.h>
#include <linux/dma-resv.h>
#include <linux/fdtable.h>
#include <linux/file.h>
#include <linux/hugetlb.h>
#include <linux/kthread.h>
#include <linux/mman.h>
#include <linux/random.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/uaccess.h>

#include <drm/amdgpu_drm.h>
#include <drm/drm_file.h>

#include "amdgpu.h"
#include "amdgpu_profiler.h"
#include "amdgpu_reset.h"
#include "amdgpu_spm.h"
#include "tests/amdgpu_kunit_helpers.h"
#include "tests/amdgpu_spm_model.h"

#define HDR	((u32)sizeof(struct drm_amdgpu_spm_buffer_header))
#define LINE	AMDGPU_SPM_LINE_SIZE
#define SAMPLE	(3 * LINE)

/* A device with @nxcc XCCs of GC 9.4.3 and 64 KiB rings; counting started */
static struct spm_env *env(struct kunit *test, unsigned int nxcc)
{
	return spm_env_create(test, &spm_layout_gfx_v9_4_3, nxcc, SZ_64K);
}

/*
 * The same, under the reading of the RLC model (struct spm_model_reading)
 * that the case runs with: the streaming cases run under each
 */
static struct spm_env *renv(struct kunit *test, unsigned int nxcc)
{
	struct spm_env *e = env(test, nxcc);

	spm_model_set_reading(e->m, test->param_value);
	return e;
}

/*
 * The profiler starts counting on @xcc, samples of @sample bytes, and,
 * under a reading that says so, selects ring mode 3 from its stream as
 * aqlprofile does
 */
static void start_one(struct spm_env *e, u32 xcc, u32 sample)
{
	const struct spm_model_layout *l = e->m->l;

	spm_model_profiler_start(e->m, xcc, sample);
	if (e->m->rd->user_mode3)
		spm_model_write(e->m, xcc, SPM_R_PERFMON_CNTL,
				(spm_model_read(e->m, xcc, SPM_R_PERFMON_CNTL) &
				 ~l->ring_mode_mask) | (3 << l->ring_mode_shift));
}

static void start_all(struct spm_env *e, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		start_one(e, i, SAMPLE);
}

/* The RLC of @xcc writes @bytes; all of it must reach the ring */
static void emit(struct kunit *test, struct spm_env *e, u32 xcc, u32 bytes)
{
	KUNIT_ASSERT_EQ(test, spm_model_emit(e->m, xcc, bytes), bytes);
}

/* The share at @off holds exactly the @lines lines of @xcc from @first */
static void expect_lines(struct kunit *test, unsigned long buf, u32 off, u32 xcc,
			 u64 first, u64 lines)
{
	struct drm_amdgpu_spm_buffer_header h;
	struct spm_model_check c = { .next = first };

	spm_env_read_header(test, buf, off, &h);
	KUNIT_EXPECT_EQ(test, h.bytes_copied, lines * LINE);
	spm_model_check_share(test, buf, off, h.bytes_copied, xcc, &c);
	KUNIT_EXPECT_FALSE(test, c.bad);
	KUNIT_EXPECT_FALSE(test, c.order);
	KUNIT_EXPECT_EQ(test, c.gaps, 0);
	KUNIT_EXPECT_EQ(test, c.lines, lines);
}

/* Everything the acquisition had is gone: the partition is free */
static void expect_free(struct kunit *test, struct spm_env *e, u32 nxcc)
{
	u32 i;

	KUNIT_EXPECT_EQ(test, e->m->allocs, 0);
	for (i = 0; i < nxcc; i++) {
		KUNIT_EXPECT_EQ(test, spm_model_read(e->m, i, SPM_R_MC_CNTL) & 0xf,
				SPM_MODEL_VMID);
		KUNIT_EXPECT_FALSE(test, amdgpu_spm_xcc_owned(e->adev, i));
		KUNIT_EXPECT_EQ(test, e->m->x[i].stray, 0);
	}
	KUNIT_EXPECT_FALSE(test, amdgpu_spm_busy(e->adev));
	KUNIT_EXPECT_NULL(test, e->adev->spm.mgr[0].sess);
}

/* ---- 1. ACQUIRE and RELEASE ---- */

static void spm_acquire_first_wins(struct kunit *test)
{
	struct spm_env *e = env(test, 2);

	KUNIT_EXPECT_EQ(test, spm_env_op(e, e->a, AMDGPU_SPM_OP_ACQUIRE), 0);
	KUNIT_EXPECT_EQ(test, spm_env_op(e, e->a, AMDGPU_SPM_OP_ACQUIRE), -EBUSY);
	KUNIT_EXPECT_EQ(test, spm_env_op(e, e->b, AMDGPU_SPM_OP_ACQUIRE), -EBUSY);
	KUNIT_EXPECT_TRUE(test, amdgpu_spm_xcc_owned(e->adev, 0));
	KUNIT_EXPECT_TRUE(test, amdgpu_spm_xcc_owned(e->adev, 1));
	KUNIT_EXPECT_EQ(test, e->m->allocs, 2);

	KUNIT_EXPECT_EQ(test, spm_env_op(e, e->b, AMDGPU_SPM_OP_RELEASE), -EBUSY);
	KUNIT_EXPECT_EQ(test, spm_env_op(e, e->a, AMDGPU_SPM_OP_RELEASE), 0);
	KUNIT_EXPECT_EQ(test, spm_env_op(e, e->a, AMDGPU_SPM_OP_RELEASE), -EINVAL);
	expect_free(test, e, 2);

	KUNIT_EXPECT_EQ(test, spm_env_op(e, e->b, AMDGPU_SPM_OP_ACQUIRE), 0);
	KUNIT_EXPECT_EQ(test, spm_env_op(e, e->a, AMDGPU_SPM_OP_ACQUIRE), -EBUSY);
	KUNIT_EXPECT_EQ(test, spm_env_op(e, e->b, AMDGPU_SPM_OP_RELEASE), 0);
}

/*
 * The eight XCCs of an MI300X partition in SPX mode: each is the
 * profiler's while the partition is acquired, the last one too, and no
 * XCC past them is.
 */
static void spm_acquire_owns_every_xcc(struct kunit *test)
{
	struct spm_env *e = env(test, AMDGPU_SPM_MAX_XCC);
	u32 i;

	KUNIT_ASSERT_EQ(test, spm_env_op(e, e->a, AMDGPU_SPM_OP_ACQUIRE), 0);
	for (i = 0; i < AMDGPU_SPM_MAX_XCC; i++)
		KUNIT_EXPECT_TRUE_MSG(test, amdgpu_spm_xcc_owned(e->adev, i),
				      "XCC %u", i);
	KUNIT_EXPECT_FALSE(test, amdgpu_spm_xcc_owned(e->adev,
						      AMDGPU_SPM_MAX_XCC));
	KUNIT_EXPECT_EQ(test, spm_env_op(e, e->a, AMDGPU_SPM_OP_RELEASE), 0);
	expect_free(test, e, AMDGPU_SPM_MAX_XCC);
}

/*
 * The rings are GART memory: an acquisition whose rings would take more
 * than a quarter of the GART (512 MiB on these parts) is refused before
 * anything is allocated.
 */
static void spm_acquire_gart_budget(struct kunit *test)
{
	struct spm_env *e = spm_env_create(test, &spm_layout_gfx_v9_4_3, 4, SZ_32M);

	KUNIT_EXPECT_EQ(test, spm_env_op(e, e->a, AMDGPU_SPM_OP_ACQUIRE), -ENOMEM);
	KUNIT_EXPECT_EQ(test, e->m->allocs, 0);
	KUNIT_EXPECT_FALSE(test, amdgpu_spm_busy(e->adev));
	KUNIT_EXPECT_FALSE(test, amdgpu_spm_xcc_owned(e->adev, 0));
	/* Smaller rings fit */
	amdgpu_spm_ring_size = SZ_8M;
	KUNIT_EXPECT_EQ(test, spm_env_op(e, e->a, AMDGPU_SPM_OP_ACQUIRE), 0);
	KUNIT_EXPECT_EQ(test, spm_env_op(e, e->a, AMDGPU_SPM_OP_RELEASE), 0);
}

static void spm_no_backend(struct kunit *test)
{
	struct spm_env *e = env(test, 1);
	const struct amdgpu_spm_funcs *funcs = e->adev->spm.funcs;

	e->adev->spm.funcs = NULL;
	KUNIT_EXPECT_EQ(test, spm_env_op(e, e->a, AMDGPU_SPM_OP_ACQUIRE), -EOPNOTSUPP);
	e->adev->spm.funcs = funcs;
}

/* A ring allocation failing on any XCC unwinds all of ACQUIRE */
static void spm_acquire_unwinds(struct kunit *test)
{
	const int *xcc = test->param_value;
	struct spm_env *e = env(test, 3);

	e->m->fail_alloc = *xcc;
	KUNIT_EXPECT_EQ(test, spm_env_op(e, e->a, AMDGPU_SPM_OP_ACQUIRE), -ENOMEM);
	expect_free(test, e, 3);
	/* The registers were never touched */
	KUNIT_EXPECT_EQ(test, e->m->nlog, 0);
	e->m->fail_alloc = -1;
	KUNIT_EXPECT_EQ(test, spm_env_op(e, e->a, AMDGPU_SPM_OP_ACQUIRE), 0);
	KUNIT_EXPECT_EQ(test, spm_env_op(e, e->a, AMDGPU_SPM_OP_RELEASE), 0);
}

static const int fail_xccs[] = { 0, 1, 2 };

static void fail_xcc_desc(const int *x, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "ring of xcc %d", *x);
}

KUNIT_ARRAY_PARAM(fail_xcc, fail_xccs, fail_xcc_desc);

/* Graphics VMID reservations and the profiler exclude each other */
static void spm_gfx_reservation_excludes_profiler(struct kunit *test)
{
	struct spm_env *e = env(test, 1);

	e->adev->vm_manager.first_kfd_vmid = 8;
	amdgpu_vmid_mgr_init(e->adev);
	KUNIT_ASSERT_EQ(test, amdgpu_spm_gfx_vmid_reserve(e->adev, e->b), 0);
	KUNIT_EXPECT_EQ(test, spm_env_op(e, e->a, AMDGPU_SPM_OP_ACQUIRE), -EBUSY);
	KUNIT_EXPECT_EQ(test, e->m->allocs, 0);
	amdgpu_spm_gfx_vmid_unreserve(e->adev, e->b);
	KUNIT_EXPECT_EQ(test, spm_env_op(e, e->a, AMDGPU_SPM_OP_ACQUIRE), 0);
	KUNIT_EXPECT_EQ(test, amdgpu_spm_gfx_vmid_reserve(e->adev, e->b), -EBUSY);
	KUNIT_EXPECT_EQ(test, spm_env_op(e, e->a, AMDGPU_SPM_OP_RELEASE), 0);
	KUNIT_EXPECT_EQ(test, amdgpu_spm_gfx_vmid_reserve(e->adev, e->b), 0);
	amdgpu_spm_gfx_vmid_unreserve(e->adev, e->b);
	amdgpu_vmid_mgr_fini(e->adev);
}

struct vmid_acquirer {
	struct spm_env *e;
	struct kunit *test;
	struct completion done;
	int ret;
};

static int vmid_acquirer_fn(void *data)
{
	struct vmid_acquirer *a = data;

	current->kunit_test = a->test;
	a->ret = spm_env_op(a->e, a->e->a, AMDGPU_SPM_OP_ACQUIRE);
	complete(&a->done);
	while (!kthread_should_stop())
		schedule_timeout_interruptible(1);
	return 0;
}

/*
 * Until the acquirer @t, which has claimed the XCCs, sleeps: between the
 * claim and the wait for writers of SPM_VMID nothing of ACQUIRE sleeps
 * (the claim is under a spinlock), so a thread seen asleep on two polls in
 * a row, not done, waits for them. A sleep of a fixed time instead would
 * say nothing on a host that has not run the thread yet.
 */
static bool acquirer_waits(struct vmid_acquirer *a, struct task_struct *t)
{
	unsigned long end = jiffies + msecs_to_jiffies(AMDGPU_KUNIT_WAIT_MS);
	unsigned int asleep = 0;

	while (time_before(jiffies, end)) {
		if (completion_done(&a->done))
			return false;
		asleep = READ_ONCE(t->__state) == TASK_UNINTERRUPTIBLE ? asleep + 1 : 0;
		if (asleep == 2)
			return true;
		usleep_range(1000, 2000);
	}
	return false;
}

/*
 * A writer of SPM_VMID on the job path that checked before ACQUIRE claimed
 * the XCC finishes before the VMID is programmed; later writers see the
 * claim and keep off.
 */
static void spm_acquire_waits_for_vmid_writers(struct kunit *test)
{
	struct spm_env *e = env(test, 2);
	struct vmid_acquirer a = { .e = e, .test = test };
	struct task_struct *t;

	init_completion(&a.done);
	KUNIT_ASSERT_TRUE(test, amdgpu_spm_vmid_write_begin(e->adev, 1));
	t = kthread_run(vmid_acquirer_fn, &a, "spm-acquirer");
	KUNIT_ASSERT_FALSE(test, IS_ERR(t));
	while (!amdgpu_spm_xcc_owned(e->adev, 1))
		usleep_range(1000, 2000);
	KUNIT_EXPECT_FALSE(test, amdgpu_spm_vmid_write_begin(e->adev, 1));
	/* ACQUIRE is waiting for us: asleep in that wait, nothing programmed */
	KUNIT_EXPECT_TRUE(test, acquirer_waits(&a, t));
	KUNIT_EXPECT_FALSE(test, completion_done(&a.done));
	KUNIT_EXPECT_EQ(test, spm_model_read(e->m, 1, SPM_R_BASE_LO), 0);
	amdgpu_spm_vmid_write_end(e->adev, 1);
	KUNIT_EXPECT_TRUE(test, amdgpu_kunit_wait(&a.done));
	kthread_stop(t);
	KUNIT_EXPECT_EQ(test, a.ret, 0);
	KUNIT_EXPECT_NE(test, spm_model_read(e->m, 0, SPM_R_BASE_LO), 0);
	KUNIT_EXPECT_NE(test, spm_model_read(e->m, 1, SPM_R_BASE_LO), 0);
	KUNIT_EXPECT_EQ(test, spm_model_read(e->m, 0, SPM_R_MC_CNTL) & 0xf,
			SPM_MODEL_VMID);
	KUNIT_EXPECT_EQ(test, spm_model_read(e->m, 1, SPM_R_MC_CNTL) & 0xf,
			SPM_MODEL_VMID);
	KUNIT_EXPECT_EQ(test, spm_env_op(e, e->a, AMDGPU_SPM_OP_RELEASE), 0);
}

/* Each partition has its own acquisition, XCCs and shares */
static void spm_partitions_are_independent(struct kunit *test)
{
	struct spm_env *e = env(test, 4);
	struct drm_file *p1;
	unsigned long buf;
	struct drm_amdgpu_spm_args out;

	spm_env_two_partitions(test, e, 0x3, 0xc);
	p1 = amdgpu_kunit_helper_alloc_file(test, e->adev, 1);

	KUNIT_EXPECT_EQ(test, spm_env_op(e, p1, AMDGPU_SPM_OP_ACQUIRE), 0);
	KUNIT_EXPECT_FALSE(test, amdgpu_spm_xcc_owned(e->adev, 0));
	KUNIT_EXPECT_TRUE(test, amdgpu_spm_xcc_owned(e->adev, 2));
	KUNIT_EXPECT_TRUE(test, amdgpu_spm_xcc_owned(e->adev, 3));
	KUNIT_EXPECT_EQ(test, e->m->allocs, 2);
	KUNIT_EXPECT_EQ(test, spm_env_op(e, e->a, AMDGPU_SPM_OP_ACQUIRE), 0);
	KUNIT_EXPECT_EQ(test, e->m->allocs, 4);

	/* The shares of partition 1 belong to its XCCs 2 and 3 */
	buf = spm_env_user_buf(test, SZ_4K, MAP_PRIVATE | MAP_ANONYMOUS);
	KUNIT_ASSERT_EQ(test, spm_env_set_buf(e, p1, buf, SZ_4K, 0, NULL), 0);
	start_all(e, 4);
	emit(test, e, 3, 8 * SAMPLE);
	KUNIT_ASSERT_EQ(test, spm_env_set_buf(e, p1, 0, 0, 0, &out), 0);
	KUNIT_EXPECT_EQ(test, out.bytes_copied, 8 * SAMPLE);
	expect_lines(test, buf, SZ_2K, 3, 0, 8 * SAMPLE / LINE);

	KUNIT_EXPECT_EQ(test, spm_env_op(e, p1, AMDGPU_SPM_OP_RELEASE), 0);
	KUNIT_EXPECT_EQ(test, spm_env_op(e, e->a, AMDGPU_SPM_OP_RELEASE), 0);
	KUNIT_EXPECT_FALSE(test, amdgpu_spm_busy(e->adev));
	e->adev->xcp_mgr = NULL;
}

/*
 * A partition whose XCP has no valid GFX block, so that
 * amdgpu_xcp_get_inst_details() refuses to name its XCCs: ACQUIRE through
 * it fails with -EINVAL and claims no XCC, of any partition.
 */
static void spm_partition_without_gfx(struct kunit *test)
{
	struct spm_env *e = env(test, 4);
	struct drm_file *p1;

	spm_env_two_partitions(test, e, 0x3, 0xc);
	e->adev->xcp_mgr->xcp[1].ip[AMDGPU_XCP_GFX].valid = false;
	p1 = amdgpu_kunit_helper_alloc_file(test, e->adev, 1);
	KUNIT_EXPECT_EQ(test, spm_env_op(e, p1, AMDGPU_SPM_OP_ACQUIRE), -EINVAL);
	expect_free(test, e, 4);
	KUNIT_EXPECT_NULL(test, e->adev->spm.mgr[1].sess);
	/* The other partition's ACQUIRE is not held up */
	KUNIT_EXPECT_EQ(test, spm_env_op(e, e->a, AMDGPU_SPM_OP_ACQUIRE), 0);
	KUNIT_EXPECT_EQ(test, spm_env_op(e, e->a, AMDGPU_SPM_OP_RELEASE), 0);
	e->adev->xcp_mgr = NULL;
}

/*
 * What a graphics client's reservation for SPM blocks: through a
 * partition's render node, ACQUIRE of that partition only; through the
 * primary node, whose jobs may run on any partition (amdgpu_xcp_open_device()
 * leaves such a file in no partition, and its contexts get a partition
 * each), every partition of the device.
 */
static void spm_gfx_reservation_scope(struct kunit *test)
{
	struct spm_env *e = env(test, 4);
	struct amdgpu_device *adev = e->adev;
	struct drm_file *p1, *gfx1, *gfx_primary;

	spm_env_two_partitions(test, e, 0x3, 0xc);
	adev->vm_manager.first_kfd_vmid = 8;
	amdgpu_vmid_mgr_init(adev);
	p1 = amdgpu_kunit_helper_alloc_file(test, adev, 1);
	gfx1 = amdgpu_kunit_helper_alloc_file(test, adev, 1);
	gfx_primary = amdgpu_kunit_helper_alloc_file(test, adev,
						     AMDGPU_XCP_NO_PARTITION);

	/* Partition 1's node: partition 1 only */
	KUNIT_ASSERT_EQ(test, amdgpu_spm_gfx_vmid_reserve(adev, gfx1), 0);
	KUNIT_EXPECT_EQ(test, spm_env_op(e, p1, AMDGPU_SPM_OP_ACQUIRE), -EBUSY);
	KUNIT_EXPECT_EQ(test, spm_env_op(e, e->a, AMDGPU_SPM_OP_ACQUIRE), 0);
	KUNIT_EXPECT_EQ(test, spm_env_op(e, e->a, AMDGPU_SPM_OP_RELEASE), 0);
	amdgpu_spm_gfx_vmid_unreserve(adev, gfx1);
	KUNIT_EXPECT_EQ(test, spm_env_op(e, p1, AMDGPU_SPM_OP_ACQUIRE), 0);
	KUNIT_EXPECT_EQ(test, spm_env_op(e, p1, AMDGPU_SPM_OP_RELEASE), 0);

	/* The primary node: every partition */
	KUNIT_ASSERT_EQ(test, amdgpu_spm_gfx_vmid_reserve(adev, gfx_primary), 0);
	KUNIT_EXPECT_EQ(test, spm_env_op(e, p1, AMDGPU_SPM_OP_ACQUIRE), -EBUSY);
	KUNIT_EXPECT_EQ(test, spm_env_op(e, e->a, AMDGPU_SPM_OP_ACQUIRE), -EBUSY);
	KUNIT_EXPECT_EQ(test, e->m->allocs, 0);
	amdgpu_spm_gfx_vmid_unreserve(adev, gfx_primary);
	KUNIT_EXPECT_EQ(test, spm_env_op(e, e->a, AMDGPU_SPM_OP_ACQUIRE), 0);
	/* And the other way: the profiler on partition 0 blocks the primary node */
	KUNIT_EXPECT_EQ(test, amdgpu_spm_gfx_vmid_reserve(adev, gfx_primary), -EBUSY);
	KUNIT_EXPECT_EQ(test, amdgpu_spm_gfx_vmid_reserve(adev, gfx1), 0);
	amdgpu_spm_gfx_vmid_unreserve(adev, gfx1);
	KUNIT_EXPECT_EQ(test, spm_env_op(e, e->a, AMDGPU_SPM_OP_RELEASE), 0);
	amdgpu_vmid_mgr_fini(adev);
	adev->xcp_mgr = NULL;
}

/* ---- 2. SET_DEST_BUF input checks ---- */

enum bad_buf_kind { BAD_MISALIGNED, BAD_TOO_BIG, BAD_EMPTY, BAD_SHARE_SMALL,
		    BAD_UNMAPPED, BAD_READ_ONLY, BAD_RESERVED, BAD_NOT_OWNER,
		    BAD_NOT_ACQUIRED };

struct bad_buf {
	enum bad_buf_kind kind;
	int err;
	const char *name;
};

static const struct bad_buf bad_bufs[] = {
	{ BAD_MISALIGNED, -EINVAL, "misaligned buffer" },
	{ BAD_TOO_BIG, -EINVAL, "buffer past the maximum size" },
	{ BAD_EMPTY, -EINVAL, "buffer of size 0" },
	{ BAD_SHARE_SMALL, -EINVAL, "share smaller than header and one line" },
	{ BAD_UNMAPPED, -EFAULT, "unmapped buffer" },
	{ BAD_READ_ONLY, -EFAULT, "read-only buffer" },
	{ BAD_RESERVED, -EINVAL, "reserved word set" },
	{ BAD_NOT_OWNER, -EBUSY, "not the owner" },
	{ BAD_NOT_ACQUIRED, -EINVAL, "nobody acquired" },
};

static void bad_buf_desc(const struct bad_buf *b, char *desc)
{
	strscpy(desc, b->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(bad_buf, bad_bufs, bad_buf_desc);

/*
 * Each rejected input gets its errno, is rejected before any wait (the
 * timeout is long), changes no field of the arguments and leaves the
 * installed buffer and its data as they were.
 */
static void spm_set_dest_buf_rejects(struct kunit *test)
{
	const struct bad_buf *b = test->param_value;
	struct spm_env *e = env(test, 2);
	struct drm_amdgpu_spm_args args = {
		.op = AMDGPU_SPM_OP_SET_DEST_BUF,
		.buf_size = SZ_4K,
		.timeout = 30000,
	}, in, out;
	struct drm_file *f = e->a;
	unsigned long buf = spm_env_user_buf(test, SZ_8K, MAP_PRIVATE | MAP_ANONYMOUS);
	unsigned long cur = spm_env_user_buf(test, SZ_4K, MAP_PRIVATE | MAP_ANONYMOUS);
	unsigned long t0;

	args.dest_buf = buf;
	if (b->kind != BAD_NOT_ACQUIRED) {
		KUNIT_ASSERT_EQ(test, spm_env_op(e, e->a, AMDGPU_SPM_OP_ACQUIRE), 0);
		KUNIT_ASSERT_EQ(test, spm_env_set_buf(e, e->a, cur, SZ_4K, 0, NULL), 0);
		start_all(e, 2);
		emit(test, e, 0, SAMPLE);
	}

	switch (b->kind) {
	case BAD_MISALIGNED:
		args.dest_buf += 16;
		break;
	case BAD_TOO_BIG:
		args.buf_size = AMDGPU_SPM_MAX_BUF_SIZE + LINE;
		break;
	case BAD_EMPTY:
		args.buf_size = 0;
		break;
	case BAD_SHARE_SMALL:
		/* two XCCs: 2 * (32 + 32) - 32 leaves one share too small */
		args.buf_size = 2 * (HDR + LINE) - LINE;
		break;
	case BAD_UNMAPPED:
		args.dest_buf = buf + SZ_8K + SZ_1M;
		break;
	case BAD_READ_ONLY:
		args.dest_buf = spm_env_user_buf(test, SZ_4K, MAP_PRIVATE | MAP_ANONYMOUS);
		KUNIT_ASSERT_EQ(test, vm_munmap(args.dest_buf, SZ_4K), 0);
		KUNIT_ASSERT_EQ(test, vm_mmap(NULL, args.dest_buf, SZ_4K, PROT_READ,
					      MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, 0),
				args.dest_buf);
		break;
	case BAD_RESERVED:
		args.reserved[8] = 1;
		break;
	case BAD_NOT_OWNER:
		f = e->b;
		break;
	case BAD_NOT_ACQUIRED:
		break;
	}
	in = args;
	t0 = jiffies;
	KUNIT_EXPECT_EQ(test, amdgpu_spm_ioctl(e->adev, f, &args), b->err);
	KUNIT_EXPECT_LT(test, jiffies_to_msecs(jiffies - t0), 10000);
	/* On error every field keeps its input value */
	KUNIT_EXPECT_MEMEQ(test, &args, &in, sizeof(args));
	if (b->kind == BAD_NOT_ACQUIRED)
		return;
	/* The installed buffer kept its data */
	KUNIT_ASSERT_EQ(test, spm_env_set_buf(e, e->a, 0, 0, 0, &out), 0);
	KUNIT_EXPECT_EQ(test, out.bytes_copied, SAMPLE);
	KUNIT_EXPECT_EQ(test, spm_env_op(e, e->a, AMDGPU_SPM_OP_RELEASE), 0);
}

/*
 * bytes_copied and has_data_loss are outputs: a loop that reuses its
 * arguments for the next buffer works (KFD's ioctl ignores them too). A
 * zero dest_buf stops copying whatever buf_size says.
 */
static void spm_set_dest_buf_ignores_outputs(struct kunit *test)
{
	struct spm_env *e = env(test, 1);
	unsigned long b[2];
	struct drm_amdgpu_spm_args args = {
		.op = AMDGPU_SPM_OP_SET_DEST_BUF,
		.buf_size = SZ_4K,
	};
	int i;

	b[0] = spm_env_user_buf(test, SZ_4K, MAP_PRIVATE | MAP_ANONYMOUS);
	b[1] = spm_env_user_buf(test, SZ_4K, MAP_PRIVATE | MAP_ANONYMOUS);
	KUNIT_ASSERT_EQ(test, spm_env_op(e, e->a, AMDGPU_SPM_OP_ACQUIRE), 0);
	for (i = 0; i < 6; i++) {
		args.dest_buf = b[i % 2];
		KUNIT_ASSERT_EQ(test, amdgpu_spm_ioctl(e->adev, e->a, &args), 0);
		if (!i)
			start_all(e, 1);
		KUNIT_EXPECT_EQ(test, args.bytes_copied, i ? SAMPLE : 0);
		emit(test, e, 0, SAMPLE);
	}
	args.dest_buf = 0;	/* buf_size is still 4096 */
	KUNIT_EXPECT_EQ(test, amdgpu_spm_ioctl(e->adev, e->a, &args), 0);
	KUNIT_EXPECT_EQ(test, args.bytes_copied, SAMPLE);
	KUNIT_EXPECT_EQ(test, spm_env_op(e, e->a, AMDGPU_SPM_OP_RELEASE), 0);
}

/* ---- 3. layout and data ---- */

/*
 * One share per XCC, 32-byte aligned, each led by a header that says
 * (since 1.1) which XCC, how many shares, which buffer, and when.
 */
static void spm_headers_and_shares(struct kunit *test)
{
	struct spm_env *e = env(test, 3);
	u32 size = 3 * SZ_1K + 96, share = round_down(size / 3, LINE);
	unsigned long buf = spm_env_user_buf(test, SZ_4K, MAP_PRIVATE | MAP_ANONYMOUS);
	struct drm_amdgpu_spm_buffer_header hdr;
	struct drm_amdgpu_spm_args out;
	u32 i, amount[3] = { 2 * SAMPLE, 0, 10 * SAMPLE };
	u64 t0 = ktime_get_boottime_ns(), start;

	KUNIT_ASSERT_EQ(test, spm_env_op(e, e->a, AMDGPU_SPM_OP_ACQUIRE), 0);
	KUNIT_ASSERT_EQ(test, spm_env_set_buf(e, e->a, buf, size, 0, &out), 0);
	KUNIT_EXPECT_EQ(test, out.bytes_copied, 0);
	for (i = 0; i < 3; i++) {
		spm_env_read_header(test, buf, i * share, &hdr);
		KUNIT_EXPECT_EQ(test, hdr.version, AMDGPU_PROFILER_VERSION);
		KUNIT_EXPECT_EQ(test, hdr.bytes_copied, 0);
		KUNIT_EXPECT_EQ(test, hdr.info.seq, 1);
	}
	start_all(e, 3);
	msleep(20);
	for (i = 0; i < 3; i++)
		if (amount[i])
			emit(test, e, i, amount[i]);

	KUNIT_ASSERT_EQ(test, spm_env_set_buf(e, e->a, 0, 0, 0, &out), 0);
	KUNIT_EXPECT_EQ(test, out.bytes_copied, 12 * SAMPLE);
	KUNIT_EXPECT_EQ(test, out.has_data_loss, 0);
	KUNIT_EXPECT_EQ(test, out.timeout, 0);
	for (i = 0; i < 3; i++) {
		KUNIT_EXPECT_TRUE(test, IS_ALIGNED(i * share, LINE));
		spm_env_read_header(test, buf, i * share, &hdr);
		KUNIT_EXPECT_EQ(test, hdr.version, (1u << 24) | 1);
		KUNIT_EXPECT_EQ(test, hdr.bytes_copied, amount[i]);
		KUNIT_EXPECT_EQ(test, hdr.has_data_loss, 0);
		KUNIT_EXPECT_EQ(test, AMDGPU_SPM_HDR_XCC(hdr.info.xcc_info), i);
		KUNIT_EXPECT_EQ(test, AMDGPU_SPM_HDR_NUM_SHARES(hdr.info.xcc_info), 3);
		KUNIT_EXPECT_EQ(test, AMDGPU_SPM_HDR_SHARE(hdr.info.xcc_info), i);
		KUNIT_EXPECT_EQ(test, hdr.info.xcc_info >> 24, 0);
		KUNIT_EXPECT_EQ(test, hdr.info.seq, 1);
		start = (u64)hdr.info.start_ns_hi << 32 | hdr.info.start_ns_lo;
		KUNIT_EXPECT_GE(test, start, t0);
		KUNIT_EXPECT_LE(test, start, ktime_get_boottime_ns());
		/* Data came at least 20 ms after the buffer was installed */
		if (amount[i])
			KUNIT_EXPECT_GE(test, hdr.info.last_us, 20000);
		else
			KUNIT_EXPECT_EQ(test, hdr.info.last_us, 0);
		expect_lines(test, buf, i * share, i, 0, amount[i] / LINE);
	}
	KUNIT_EXPECT_EQ(test, spm_env_op(e, e->a, AMDGPU_SPM_OP_RELEASE), 0);
}

/* The buffer sequence number counts installed buffers, per XCC */
static void spm_header_seq_counts_buffers(struct kunit *test)
{
	struct spm_env *e = env(test, 2);
	unsigned long b = spm_env_user_buf(test, SZ_4K, MAP_PRIVATE | MAP_ANONYMOUS);
	struct drm_amdgpu_spm_buffer_header hdr;
	int i;

	KUNIT_ASSERT_EQ(test, spm_env_op(e, e->a, AMDGPU_SPM_OP_ACQUIRE), 0);
	for (i = 1; i <= 4; i++) {
		KUNIT_ASSERT_EQ(test, spm_env_set_buf(e, e->a, b, SZ_4K, 0, NULL), 0);
		/* A stop in between does not count */
		KUNIT_ASSERT_EQ(test, spm_env_set_buf(e, e->a, 0, 0, 0, NULL), 0);
		spm_env_read_header(test, b, SZ_2K, &hdr);
		KUNIT_EXPECT_EQ(test, hdr.info.seq, i);
	}
	KUNIT_EXPECT_EQ(test, spm_env_op(e, e->a, AMDGPU_SPM_OP_RELEASE), 0);
}

enum buf_kind { BUF_ANON, BUF_SHMEM, BUF_HUGETLB, BUF_PFNMAP, BUF_PFNMAP_FAULT };

static const char * const buf_kind_names[] = {
	"anonymous", "shmem", "hugetlb", "VM_PFNMAP", "VM_PFNMAP faulted in"
};

static const enum buf_kind buf_kinds[] = {
	BUF_ANON, BUF_SHMEM, BUF_HUGETLB, BUF_PFNMAP, BUF_PFNMAP_FAULT
};

static void buf_kind_desc(const enum buf_kind *k, char *desc)
{
	strscpy(desc, buf_kind_names[*k], KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(buf_kind, buf_kinds, buf_kind_desc);

struct pfnmap_buf {
	struct page *pages;
	unsigned int order;
};

static int pfnmap_mmap(struct file *file, struct vm_area_struct *vma)
{
	struct pfnmap_buf *pb = file->private_data;

	return remap_pfn_range(vma, vma->vm_start, page_to_pfn(pb->pages),
			       vma->vm_end - vma->vm_start, vma->vm_page_prot);
}

static const struct file_operations pfnmap_fops = {
	.owner = THIS_MODULE,
	.mmap = pfnmap_mmap,
};

static void pfnmap_free(void *data)
{
	struct pfnmap_buf *pb = data;

	__free_pages(pb->pages, pb->order);
}

KUNIT_DEFINE_ACTION_WRAPPER(fput_action, fput, struct file *);

/* Pages for @pb, and a file of @fops on them mapped shared into the test's mm */
static unsigned long spm_map_pages(struct kunit *test, struct pfnmap_buf *pb,
				   const struct file_operations *fops, u32 size)
{
	struct file *file;
	unsigned long addr;

	pb->order = get_order(size);
	pb->pages = alloc_pages(GFP_KERNEL | __GFP_ZERO, pb->order);
	KUNIT_ASSERT_NOT_NULL(test, pb->pages);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, pfnmap_free, pb), 0);
	file = anon_inode_getfile("spm-test-pfnmap", fops, pb, O_RDWR);
	KUNIT_ASSERT_FALSE(test, IS_ERR(file));
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, fput_action, file), 0);
	addr = kunit_vm_mmap(test, file, 0, size, PROT_READ | PROT_WRITE, MAP_SHARED, 0);
	KUNIT_ASSERT_FALSE(test, !addr || IS_ERR_VALUE(addr));
	return addr;
}

/* A buffer like a BO mapped through the render node: VM_PFNMAP, unpinnable */
static unsigned long spm_pfnmap_buf(struct kunit *test, u32 size)
{
	struct pfnmap_buf *pb = kunit_kzalloc(test, sizeof(*pb), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, pb);
	return spm_map_pages(test, pb, &pfnmap_fops, size);
}

/*
 * A buffer like a GTT BO mapped through amdgpu's render node, as the
 * reference recorder allocates them: VM_PFNMAP | VM_IO and nothing mapped
 * until a fault, whose handler takes the BO's reservation and inserts the
 * PFN (ttm_bo_mmap_obj(), ttm_bo_vm_reserve(), ttm_bo_vm_fault_reserved()).
 * So the worker's copy_to_user() faults, under its locks and in the
 * owner's mm, and lockdep sees what that takes.
 */
struct pfnfault_buf {
	struct pfnmap_buf pb;	/* first: the file's private data */
	struct dma_resv resv;
	atomic_t faults;	/* of the kernel threads that adopted the mm */
};

static vm_fault_t pfnfault_fault(struct vm_fault *vmf)
{
	struct vm_area_struct *vma = vmf->vma;
	struct pfnfault_buf *pb = container_of(vma->vm_private_data,
					       struct pfnfault_buf, pb);
	unsigned long pg = (vmf->address - vma->vm_start) >> PAGE_SHIFT;
	vm_fault_t ret;

	dma_resv_lock(&pb->resv, NULL);
	ret = vmf_insert_pfn(vma, vmf->address, page_to_pfn(pb->pb.pages) + pg);
	dma_resv_unlock(&pb->resv);
	if (current->flags & PF_KTHREAD)
		atomic_inc(&pb->faults);
	return ret;
}

static const struct vm_operations_struct pfnfault_vm_ops = {
	.fault = pfnfault_fault,
};

static int pfnfault_mmap(struct file *file, struct vm_area_struct *vma)
{
	vm_flags_set(vma, VM_PFNMAP | VM_IO | VM_DONTEXPAND | VM_DONTDUMP);
	vma->vm_private_data = file->private_data;
	vma->vm_ops = &pfnfault_vm_ops;
	return 0;
}

static const struct file_operations pfnfault_fops = {
	.owner = THIS_MODULE,
	.mmap = pfnfault_mmap,
};

KUNIT_DEFINE_ACTION_WRAPPER(dma_resv_fini_action, dma_resv_fini, struct dma_resv *);

static unsigned long spm_pfnfault_buf(struct kunit *test, u32 size,
				      struct pfnfault_buf **out)
{
	struct pfnfault_buf *pb = kunit_kzalloc(test, sizeof(*pb), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, pb);
	dma_resv_init(&pb->resv);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, dma_resv_fini_action,
							&pb->resv), 0);
	if (out)
		*out = pb;
	return spm_map_pages(test, &pb->pb, &pfnfault_fops, size);
}

static bool spm_is_hugetlb(unsigned long addr)
{
	struct vm_area_struct *vma;
	bool huge;

	mmap_read_lock(current->mm);
	vma = vma_lookup(current->mm, addr);
	huge = vma && is_vm_hugetlb_page(vma);
	mmap_read_unlock(current->mm);
	return huge;
}

static unsigned long spm_buf_of_kind(struct kunit *test, enum buf_kind k, u32 size)
{
	struct file *file;
	unsigned long addr;

	switch (k) {
	case BUF_SHMEM:
		return spm_env_user_buf(test, size, MAP_SHARED | MAP_ANONYMOUS);
	case BUF_HUGETLB:
		/* vm_mmap() ignores MAP_HUGETLB: map a hugetlbfs file as mmap() does */
		file = hugetlb_file_setup(HUGETLB_ANON_FILE, SZ_2M, 0,
					  HUGETLB_ANONHUGE_INODE, 21);
		if (IS_ERR(file))
			kunit_skip(test, "no hugetlbfs: %ld", PTR_ERR(file));
		KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, fput_action, file), 0);
		addr = kunit_vm_mmap(test, file, 0, SZ_2M, PROT_READ | PROT_WRITE,
				     MAP_SHARED, 0);
		if (!addr || IS_ERR_VALUE(addr))
			kunit_skip(test, "no huge pages reserved (boot with hugepages=N)");
		KUNIT_ASSERT_TRUE(test, spm_is_hugetlb(addr));
		return addr;
	case BUF_PFNMAP:
		return spm_pfnmap_buf(test, size);
	case BUF_PFNMAP_FAULT:
		return spm_pfnfault_buf(test, size, NULL);
	default:
		return spm_env_user_buf(test, size, MAP_PRIVATE | MAP_ANONYMOUS);
	}
}

/*
 * Data flows into the buffer while no thread is inside the ioctl, driven
 * by the drain timer, and arrives line for line, for every kind of buffer.
 */
static void spm_data_flows_without_ioctl(struct kunit *test)
{
	const enum buf_kind *k = test->param_value;
	struct spm_env *e = env(test, 2);
	u32 size = SZ_64K, share = size / 2, n;
	unsigned long buf = spm_buf_of_kind(test, *k, size);
	struct drm_amdgpu_spm_args out;

	amdgpu_spm_backstop_ms = 10;
	KUNIT_ASSERT_EQ(test, spm_env_op(e, e->a, AMDGPU_SPM_OP_ACQUIRE), 0);
	KUNIT_ASSERT_EQ(test, spm_env_set_buf(e, e->a, buf, size, 0, NULL), 0);
	start_all(e, 2);
	for (n = 0; n < 20; n++) {
		emit(test, e, 0, SAMPLE);
		emit(test, e, 1, 2 * SAMPLE);
	}
	KUNIT_EXPECT_TRUE(test, spm_env_wait_header(test, buf, 0, 20 * SAMPLE,
						    AMDGPU_KUNIT_WAIT_MS));
	KUNIT_EXPECT_TRUE(test, spm_env_wait_header(test, buf, share, 40 * SAMPLE,
						    AMDGPU_KUNIT_WAIT_MS));
	expect_lines(test, buf, 0, 0, 0, 20 * SAMPLE / LINE);
	expect_lines(test, buf, share, 1, 0, 40 * SAMPLE / LINE);

	KUNIT_ASSERT_EQ(test, spm_env_set_buf(e, e->a, 0, 0, 0, &out), 0);
	KUNIT_EXPECT_EQ(test, out.bytes_copied, 60 * SAMPLE);
	KUNIT_EXPECT_EQ(test, out.has_data_loss, 0);
	KUNIT_EXPECT_EQ(test, spm_env_op(e, e->a, AMDGPU_SPM_OP_RELEASE), 0);
}

/*
 * A buffer mapped like a GTT BO is filled by the worker's faults: the
 * headers and the data reach its pages, through the fault handler, with
 * nothing mapped before the ioctl, and RELEASE still returns.
 */
static void spm_bo_like_buffer_faults_in(struct kunit *test)
{
	struct spm_env *e = env(test, 2);
	u32 size = SZ_64K, share = size / 2;
	struct drm_amdgpu_spm_args out;
	struct pfnfault_buf *pb;
	unsigned long buf = spm_pfnfault_buf(test, size, &pb);

	KUNIT_ASSERT_EQ(test, atomic_read(&pb->faults), 0);
	amdgpu_spm_backstop_ms = 10;
	KUNIT_ASSERT_EQ(test, spm_env_op(e, e->a, AMDGPU_SPM_OP_ACQUIRE), 0);
	KUNIT_ASSERT_EQ(test, spm_env_set_buf(e, e->a, buf, size, 0, NULL), 0);
	start_all(e, 2);
	emit(test, e, 0, 4 * SAMPLE);
	emit(test, e, 1, 4 * SAMPLE);
	KUNIT_EXPECT_TRUE(test, spm_env_wait_header(test, buf, 0, 4 * SAMPLE,
						    AMDGPU_KUNIT_WAIT_MS));
	KUNIT_EXPECT_TRUE(test, spm_env_wait_header(test, buf, share, 4 * SAMPLE,
						    AMDGPU_KUNIT_WAIT_MS));
	/* Both shares' first pages were faulted in by the worker's copies */
	KUNIT_EXPECT_GE(test, atomic_read(&pb->faults), 2);
	expect_lines(test, buf, 0, 0, 0, 4 * SAMPLE / LINE);
	expect_lines(test, buf, share, 1, 0, 4 * SAMPLE / LINE);
	KUNIT_ASSERT_EQ(test, spm_env_set_buf(e, e->a, 0, 0, 0, &out), 0);
	KUNIT_EXPECT_EQ(test, out.bytes_copied, 8 * SAMPLE);
	KUNIT_EXPECT_EQ(test, out.has_data_loss, 0);
	KUNIT_EXPECT_EQ(test, spm_env_op(e, e->a, AMDGPU_SPM_OP_RELEASE), 0);
}

/*
 * A buffer whose last page is not mapped: pin_user_pages_fast() pins the
 * pages before it and stops there. SET_DEST_BUF fails with -EFAULT and
 * unpins what it pinned: no page of the buffer stays pinned.
 */
static void spm_partial_pin_unpins(struct kunit *test)
{
	struct spm_env *e = env(test, 1);
	unsigned long buf = spm_env_user_buf(test, 4 * PAGE_SIZE,
					     MAP_PRIVATE | MAP_ANONYMOUS);
	struct page *page;

	KUNIT_ASSERT_EQ(test, vm_munmap(buf + 3 * PAGE_SIZE, PAGE_SIZE), 0);
	KUNIT_ASSERT_EQ(test, spm_env_op(e, e->a, AMDGPU_SPM_OP_ACQUIRE), 0);
	KUNIT_EXPECT_EQ(test, spm_env_set_buf(e, e->a, buf, 4 * PAGE_SIZE, 0,
					      NULL), -EFAULT);
	KUNIT_ASSERT_EQ(test, get_user_pages_fast(buf, 1, 0, &page), 1);
	KUNIT_EXPECT_FALSE(test, folio_maybe_dma_pinned(page_folio(page)));
	put_page(page);
	KUNIT_EXPECT_EQ(test, spm_env_op(e, e->a, AMDGPU_SPM_OP_RELEASE), 0);
}

/*
 * Pinning as a user without CAP_IPC_LOCK, under an RLIMIT_MEMLOCK the test
 * sets: between spm_memlock_begin() and spm_memlock_end(), only
 * expectations (an assertion would leave the credentials overridden).
 */
struct spm_memlock {
	struct cred *cred;
	const struct cred *old;
	struct rlimit saved;
};

static void spm_memlock_limit(unsigned long cur)
{
	task_lock(current->group_leader);
	current->signal->rlim[RLIMIT_MEMLOCK].rlim_cur = cur;
	task_unlock(current->group_leader);
}

static void spm_memlock_begin(struct kunit *test, struct spm_memlock *ml,
			      unsigned long cur)
{
	ml->cred = prepare_creds();
	KUNIT_ASSERT_NOT_NULL(test, ml->cred);
	cap_lower(ml->cred->cap_effective, CAP_IPC_LOCK);
	ml->old = override_creds(ml->cred);
	ml->saved = current->signal->rlim[RLIMIT_MEMLOCK];
	spm_memlock_limit(cur);
}

static void spm_memlock_end(struct spm_memlock *ml)
{
	task_lock(current->group_leader);
	current->signal->rlim[RLIMIT_MEMLOCK] = ml->saved;
	task_unlock(current->group_leader);
	revert_creds(ml->old);
	put_cred(ml->cred);
}

/* Pinned pages are charged to RLIMIT_MEMLOCK unless CAP_IPC_LOCK */
static void spm_pin_respects_memlock(struct kunit *test)
{
	struct spm_env *e = env(test, 1);
	unsigned long buf = spm_env_user_buf(test, SZ_64K, MAP_PRIVATE | MAP_ANONYMOUS);
	unsigned long pfn = spm_pfnmap_buf(test, SZ_64K);
	struct spm_memlock ml;
	int r1, r2, r3;
	s64 pinned;

	KUNIT_ASSERT_EQ(test, spm_env_op(e, e->a, AMDGPU_SPM_OP_ACQUIRE), 0);
	spm_memlock_begin(test, &ml, SZ_16K);
	pinned = atomic64_read(&current->mm->pinned_vm);
	r1 = spm_env_set_buf(e, e->a, buf, SZ_64K, 0, NULL);
	KUNIT_EXPECT_EQ(test, atomic64_read(&current->mm->pinned_vm), pinned);
	/* Not pinned, so not charged either: a BO mapped through the node */
	r3 = spm_env_set_buf(e, e->a, pfn, SZ_64K, 0, NULL);
	KUNIT_EXPECT_EQ(test, atomic64_read(&current->mm->pinned_vm), pinned);

	spm_memlock_limit(SZ_1M);
	r2 = spm_env_set_buf(e, e->a, buf, SZ_64K, 0, NULL);
	KUNIT_EXPECT_EQ(test, atomic64_read(&current->mm->pinned_vm),
			pinned + SZ_64K / PAGE_SIZE);
	spm_memlock_end(&ml);

	KUNIT_EXPECT_EQ(test, r1, -ENOMEM);
	KUNIT_EXPECT_EQ(test, r3, 0);
	KUNIT_EXPECT_EQ(test, r2, 0);
	KUNIT_EXPECT_EQ(test, spm_env_op(e, e->a, AMDGPU_SPM_OP_RELEASE), 0);
	/* Release unpinned and uncharged */
	KUNIT_EXPECT_EQ(test, atomic64_read(&current->mm->pinned_vm), pinned);
}

/*
 * Three buffers, the last given twice (the cache holds three): each is
 * pinned, and charged, once, and the one given again is found where it
 * is, so that none of the others is evicted for a second pin of it.
 */
static void spm_pin_cache_reuses_buffers(struct kunit *test)
{
	static const int order[] = { 0, 1, 2, 2 };
	struct spm_env *e = env(test, 1);
	unsigned long buf[3];
	struct spm_memlock ml;
	struct page *page;
	int k, r[ARRAY_SIZE(order)];
	s64 pinned, after;

	for (k = 0; k < ARRAY_SIZE(buf); k++)
		buf[k] = spm_env_user_buf(test, SZ_64K, MAP_PRIVATE | MAP_ANONYMOUS);
	KUNIT_ASSERT_EQ(test, spm_env_op(e, e->a, AMDGPU_SPM_OP_ACQUIRE), 0);
	spm_memlock_begin(test, &ml, SZ_1M);
	pinned = atomic64_read(&current->mm->pinned_vm);
	for (k = 0; k < ARRAY_SIZE(order); k++)
		r[k] = spm_env_set_buf(e, e->a, buf[order[k]], SZ_64K, 0, NULL);
	after = atomic64_read(&current->mm->pinned_vm);
	spm_memlock_end(&ml);

	for (k = 0; k < ARRAY_SIZE(order); k++)
		KUNIT_EXPECT_EQ_MSG(test, r[k], 0, "SET_DEST_BUF %d", k);
	KUNIT_EXPECT_EQ(test, after, pinned + 3 * SZ_64K / PAGE_SIZE);
	for (k = 0; k < ARRAY_SIZE(buf); k++) {
		KUNIT_ASSERT_EQ(test, get_user_pages_fast(buf[k], 1, 0, &page), 1);
		KUNIT_EXPECT_TRUE_MSG(test, folio_maybe_dma_pinned(page_folio(page)),
				      "buffer %d", k);
		put_page(page);
	}
	KUNIT_EXPECT_EQ(test, spm_env_op(e, e->a, AMDGPU_SPM_OP_RELEASE), 0);
	KUNIT_EXPECT_EQ(test, atomic64_read(&current->mm->pinned_vm), pinned);
}

/* A cached pin is not reused once its range was unmapped and mapped again */
static void spm_pin_cache_follows_remap(struct kunit *test)
{
	struct spm_env *e = env(test, 1);
	unsigned long buf = spm_env_user_buf(test, SZ_8K, MAP_PRIVATE | MAP_ANONYMOUS);
	struct drm_amdgpu_spm_args out;

	KUNIT_ASSERT_EQ(test, spm_env_op(e, e->a, AMDGPU_SPM_OP_ACQUIRE), 0);
	KUNIT_ASSERT_EQ(test, spm_env_set_buf(e, e->a, buf, SZ_8K, 0, NULL), 0);
	KUNIT_ASSERT_EQ(test, spm_env_set_buf(e, e->a, 0, 0, 0, NULL), 0);

	/* Same address and size, different memory */
	KUNIT_ASSERT_EQ(test, vm_munmap(buf, SZ_8K), 0);
	KUNIT_ASSERT_EQ(test, vm_mmap(NULL, buf, SZ_8K, PROT_READ | PROT_WRITE,
				      MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, 0), buf);
	KUNIT_ASSERT_EQ(test, spm_env_set_buf(e, e->a, buf, SZ_8K, 0, NULL), 0);
	start_all(e, 1);
	emit(test, e, 0, 4 * SAMPLE);
	KUNIT_ASSERT_EQ(test, spm_env_set_buf(e, e->a, 0, 0, 0, &out), 0);
	KUNIT_EXPECT_EQ(test, out.bytes_copied, 4 * SAMPLE);
	/* The data is in the new mapping, not in the pages of the old one */
	expect_lines(test, buf, 0, 0, 0, 4 * SAMPLE / LINE);
	KUNIT_EXPECT_EQ(test, spm_env_op(e, e->a, AMDGPU_SPM_OP_RELEASE), 0);
}

/* ---- 4. timeout ---- */

static void spm_timeout_expires_with_partial_data(struct kunit *test)
{
	struct spm_env *e = env(test, 1);
	unsigned long buf = spm_env_user_buf(test, SZ_8K, MAP_PRIVATE | MAP_ANONYMOUS);
	struct drm_amdgpu_spm_args out;
	unsigned long t0;

	KUNIT_ASSERT_EQ(test, spm_env_op(e, e->a, AMDGPU_SPM_OP_ACQUIRE), 0);
	KUNIT_ASSERT_EQ(test, spm_env_set_buf(e, e->a, buf, SZ_8K, 0, NULL), 0);
	start_all(e, 1);
	emit(test, e, 0, SAMPLE);
	t0 = jiffies;
	KUNIT_EXPECT_EQ(test, spm_env_set_buf(e, e->a, 0, 0, 200, &out), 0);
	KUNIT_EXPECT_GE(test, jiffies_to_msecs(jiffies - t0), 200);
	KUNIT_EXPECT_EQ(test, out.timeout, 0);
	KUNIT_EXPECT_EQ(test, out.bytes_copied, SAMPLE);
	KUNIT_EXPECT_EQ(test, out.has_data_loss, 0);
	KUNIT_EXPECT_EQ(test, spm_env_op(e, e->a, AMDGPU_SPM_OP_RELEASE), 0);
}

static void spm_timeout_returns_time_left(struct kunit *test)
{
	struct spm_env *e = env(test, 1);
	unsigned long buf = spm_env_user_buf(test, SZ_4K, MAP_PRIVATE | MAP_ANONYMOUS);
	struct drm_amdgpu_spm_args out;

	amdgpu_spm_backstop_ms = 10;
	KUNIT_ASSERT_EQ(test, spm_env_op(e, e->a, AMDGPU_SPM_OP_ACQUIRE), 0);
	/* A share of 256 - 32 = 224 bytes: two and a third samples */
	KUNIT_ASSERT_EQ(test, spm_env_set_buf(e, e->a, buf, 256, 0, NULL), 0);
	start_all(e, 1);
	emit(test, e, 0, 3 * SAMPLE);
	KUNIT_EXPECT_EQ(test, spm_env_set_buf(e, e->a, 0, 0, 5000, &out), 0);
	KUNIT_EXPECT_GT(test, out.timeout, 0);
	KUNIT_EXPECT_LE(test, out.timeout, 5000);
	KUNIT_EXPECT_EQ(test, out.bytes_copied, 224);
	/* The rest of the third sample did not fit: it stays in the ring */
	KUNIT_EXPECT_NE(test, out.has_data_loss, 0);
	KUNIT_EXPECT_EQ(test, spm_env_op(e, e->a, AMDGPU_SPM_OP_RELEASE), 0);
}

static void spm_timeout_zero_swaps_at_once(struct kunit *test)
{
	struct spm_env *e = env(test, 1);
	unsigned long b1 = spm_env_user_buf(test, SZ_4K, MAP_PRIVATE | MAP_ANONYMOUS);
	unsigned long b2 = spm_env_user_buf(test, SZ_4K, MAP_PRIVATE | MAP_ANONYMOUS);
	struct drm_amdgpu_spm_args out;

	KUNIT_ASSERT_EQ(test, spm_env_op(e, e->a, AMDGPU_SPM_OP_ACQUIRE), 0);
	KUNIT_ASSERT_EQ(test, spm_env_set_buf(e, e->a, b1, SZ_4K, 0, NULL), 0);
	start_all(e, 1);
	emit(test, e, 0, 2 * SAMPLE);
	KUNIT_ASSERT_EQ(test, spm_env_set_buf(e, e->a, b2, SZ_4K, 0, &out), 0);
	KUNIT_EXPECT_EQ(test, out.bytes_copied, 2 * SAMPLE);
	emit(test, e, 0, 4 * SAMPLE);
	KUNIT_ASSERT_EQ(test, spm_env_set_buf(e, e->a, 0, 0, 0, &out), 0);
	KUNIT_EXPECT_EQ(test, out.bytes_copied, 4 * SAMPLE);
	expect_lines(test, b1, 0, 0, 0, 2 * SAMPLE / LINE);
	expect_lines(test, b2, 0, 0, 2 * SAMPLE / LINE, 4 * SAMPLE / LINE);
	KUNIT_EXPECT_EQ(test, spm_env_op(e, e->a, AMDGPU_SPM_OP_RELEASE), 0);
}

struct waiter {
	struct spm_env *e;
	struct kunit *test;
	u32 timeout;
	int ret;
	struct drm_amdgpu_spm_args out;
	struct completion started;
	struct completion done;
};

/*
 * Until the waiter @t sleeps interruptibly: of what its SET_DEST_BUF does,
 * only the wait for data does (the locks it takes sleep uninterruptibly),
 * so it is inside that wait then, whatever the host's load. A sleep
 * before the signal or the close instead would let them come first on a
 * slow host, and the case would pass without testing the wake-up.
 */
static void wait_waiter_sleeps(struct kunit *test, struct task_struct *t)
{
	amdgpu_kunit_poll(READ_ONCE(t->__state) == TASK_INTERRUPTIBLE);
	KUNIT_ASSERT_EQ(test, READ_ONCE(t->__state), TASK_INTERRUPTIBLE);
}

static int waiter_fn(void *data)
{
	struct waiter *w = data;

	current->kunit_test = w->test;
	allow_signal(SIGUSR1);
	complete(&w->started);
	w->ret = spm_env_set_buf(w->e, w->e->a, 0, 0, w->timeout, &w->out);
	flush_signals(current);
	complete(&w->done);
	while (!kthread_should_stop())
		schedule_timeout_interruptible(1);
	return 0;
}

/* A signal ends the wait with the time left written back; a restart resumes */
static void spm_timeout_signal_restart(struct kunit *test)
{
	struct spm_env *e = env(test, 1);
	unsigned long buf = spm_env_user_buf(test, SZ_4K, MAP_PRIVATE | MAP_ANONYMOUS);
	struct drm_amdgpu_spm_args out;
	struct task_struct *t;
	struct waiter w = { .e = e, .test = test, .timeout = 2000 };
	unsigned long t0;

	init_completion(&w.started);
	init_completion(&w.done);
	KUNIT_ASSERT_EQ(test, spm_env_op(e, e->a, AMDGPU_SPM_OP_ACQUIRE), 0);
	KUNIT_ASSERT_EQ(test, spm_env_set_buf(e, e->a, buf, SZ_4K, 0, NULL), 0);
	start_all(e, 1);
	emit(test, e, 0, SAMPLE);

	t = kthread_run(waiter_fn, &w, "spm-waiter");
	KUNIT_ASSERT_FALSE(test, IS_ERR(t));
	wait_for_completion(&w.started);
	wait_waiter_sleeps(test, t);
	/* Some of the 2 s pass before the signal: the rest is written back */
	msleep(20);
	send_sig(SIGUSR1, t, 1);
	wait_for_completion(&w.done);
	kthread_stop(t);

	KUNIT_EXPECT_EQ(test, w.ret, -ERESTARTSYS);
	KUNIT_EXPECT_LT(test, w.out.timeout, 2000);
	KUNIT_EXPECT_GT(test, w.out.timeout, 0);
	/* Nothing changed: the buffer is still installed and keeps its data */
	KUNIT_EXPECT_EQ(test, w.out.bytes_copied, 0);

	/* The restarted call waits only for the remainder */
	t0 = jiffies;
	KUNIT_EXPECT_EQ(test, spm_env_set_buf(e, e->a, 0, 0, w.out.timeout, &out), 0);
	KUNIT_EXPECT_LE(test, jiffies_to_msecs(jiffies - t0), w.out.timeout + 1000);
	KUNIT_EXPECT_GE(test, jiffies_to_msecs(jiffies - t0), w.out.timeout);
	KUNIT_EXPECT_EQ(test, out.timeout, 0);
	KUNIT_EXPECT_EQ(test, out.bytes_copied, SAMPLE);
	KUNIT_EXPECT_EQ(test, spm_env_op(e, e->a, AMDGPU_SPM_OP_RELEASE), 0);
}

/*
 * ---- 5. wrap, spill and loss ----
 *
 * These run under every reading of what no source says about the RLC
 * (spm_model_readings[]: where a stalling RLC stops, the unit of the
 * threshold, when the write pointer moves, what it does with no ring, and
 * whether the profiler's stream selects ring mode 3 as aqlprofile does).
 */

/*
 * Many laps of a ring whose size the sample does not divide: every wrap
 * spills past the end (GC 9.4.3), and every line arrives once, in order.
 */
static void spm_ring_wrap_in_order(struct kunit *test)
{
	struct spm_env *e = renv(test, 1);
	u32 chunk = 37 * LINE * 32, total = 4 * SZ_64K, size = chunk + SZ_4K, done = 0;
	unsigned long buf[2];
	struct drm_amdgpu_spm_args out;
	int k;

	amdgpu_spm_backstop_ms = 60000;
	for (k = 0; k < 2; k++)
		buf[k] = spm_env_user_buf(test, size, MAP_PRIVATE | MAP_ANONYMOUS);
	KUNIT_ASSERT_EQ(test, spm_env_op(e, e->a, AMDGPU_SPM_OP_ACQUIRE), 0);
	KUNIT_ASSERT_EQ(test, spm_env_set_buf(e, e->a, buf[0], size, 0, NULL), 0);
	start_one(e, 0, 37 * LINE);
	for (k = 1; done < total; k++) {
		emit(test, e, 0, chunk);
		done += chunk;
		/* Drain well before a lap: a zero-timeout swap */
		KUNIT_ASSERT_EQ(test, spm_env_set_buf(e, e->a, buf[k % 2], size, 0, &out), 0);
		KUNIT_ASSERT_EQ(test, out.has_data_loss, 0);
		KUNIT_ASSERT_EQ(test, out.bytes_copied, chunk);
		expect_lines(test, buf[(k - 1) % 2], 0, 0, (done - chunk) / LINE, chunk / LINE);
	}
	KUNIT_EXPECT_EQ(test, spm_env_op(e, e->a, AMDGPU_SPM_OP_RELEASE), 0);
}

/*
 * Samples that reach the ring while no buffer is installed (here: the
 * profiler's command stream starts counting after SET_DEST_BUF stopped the
 * hardware) are not copied, and not consumed either: they stay in the
 * ring. The next buffer starts the hardware again at the start of the
 * ring, so they are lost, and that buffer's share of the XCC says so.
 */
static void spm_no_buffer_loss_goes_to_next(struct kunit *test)
{
	struct spm_env *e = renv(test, 2);
	unsigned long buf = spm_env_user_buf(test, SZ_4K, MAP_PRIVATE | MAP_ANONYMOUS);
	struct drm_amdgpu_spm_buffer_header hdr;
	struct drm_amdgpu_spm_args out;
	struct amdgpu_spm_stats st0, st1;

	amdgpu_spm_backstop_ms = 5;
	KUNIT_ASSERT_EQ(test, spm_env_op(e, e->a, AMDGPU_SPM_OP_ACQUIRE), 0);
	KUNIT_ASSERT_EQ(test, spm_env_set_buf(e, e->a, buf, SZ_4K, 0, NULL), 0);
	KUNIT_ASSERT_EQ(test, spm_env_set_buf(e, e->a, 0, 0, 0, NULL), 0);
	spm_env_stats(test, e, 0, &st0);
	/* A command stream that turns the SPM clock on as well */
	spm_model_write(e->m, 1, SPM_R_CLK_CNTL, e->m->l->clk_mask);
	start_one(e, 1, SAMPLE);
	emit(test, e, 1, SAMPLE);
	/* Drained into no buffer: passes of the worker, not a sleep */
	KUNIT_EXPECT_TRUE(test, spm_env_wait_passes(test, e, 0, 3, AMDGPU_KUNIT_WAIT_MS));
	spm_env_stats(test, e, 0, &st1);
	KUNIT_EXPECT_GT(test, st1.wakeups, st0.wakeups);
	KUNIT_EXPECT_EQ(test, st1.drained, st0.drained);
	KUNIT_EXPECT_EQ(test, st1.laps, st0.laps);
	KUNIT_ASSERT_EQ(test, spm_env_set_buf(e, e->a, buf, SZ_4K, 0, NULL), 0);
	KUNIT_ASSERT_EQ(test, spm_env_set_buf(e, e->a, 0, 0, 0, &out), 0);
	spm_env_read_header(test, buf, 0, &hdr);
	KUNIT_EXPECT_EQ(test, hdr.has_data_loss, 0);
	spm_env_read_header(test, buf, SZ_2K, &hdr);
	/* Lost, not a full share */
	KUNIT_EXPECT_EQ(test, hdr.has_data_loss, AMDGPU_SPM_LOSS_SAMPLES);
	/* Nothing of what was in the ring before the start */
	KUNIT_EXPECT_EQ(test, hdr.bytes_copied, 0);
	KUNIT_EXPECT_NE(test, out.has_data_loss, 0);
	KUNIT_EXPECT_EQ(test, spm_env_op(e, e->a, AMDGPU_SPM_OP_RELEASE), 0);
}

/*
 * SET_DEST_BUF with no buffer asks the worker to stop the hardware, which
 * it cannot do while a reset holds the reset domain's semaphore. Until
 * then the RLC goes on writing; what it writes stays in the ring, and a
 * buffer installed before the stop gets it, in order after the last line
 * of the previous buffer (flagged, as any data that came while no buffer
 * was installed).
 */
static void spm_no_buffer_data_stays_until_stopped(struct kunit *test)
{
	struct spm_env *e = renv(test, 1);
	struct amdgpu_device *adev = e->adev;
	unsigned long a = spm_env_user_buf(test, SZ_4K, MAP_PRIVATE | MAP_ANONYMOUS);
	unsigned long b = spm_env_user_buf(test, SZ_4K, MAP_PRIVATE | MAP_ANONYMOUS);
	struct drm_amdgpu_spm_buffer_header hdr;
	struct drm_amdgpu_spm_args out;

	amdgpu_spm_backstop_ms = 5;
	KUNIT_ASSERT_EQ(test, spm_env_op(e, e->a, AMDGPU_SPM_OP_ACQUIRE), 0);
	KUNIT_ASSERT_EQ(test, spm_env_set_buf(e, e->a, a, SZ_4K, 0, NULL), 0);
	start_all(e, 1);
	emit(test, e, 0, 4 * SAMPLE);

	down_write(&adev->reset_domain->sem);
	KUNIT_EXPECT_EQ(test, spm_env_set_buf(e, e->a, 0, 0, 0, &out), 0);
	KUNIT_EXPECT_EQ(test, out.bytes_copied, 4 * SAMPLE);
	/* Not stopped yet: the RLC goes on */
	emit(test, e, 0, 4 * SAMPLE);
	/* Drained into no buffer (the worker runs, off the registers) */
	KUNIT_EXPECT_TRUE(test, spm_env_wait_passes(test, e, 0, 3, AMDGPU_KUNIT_WAIT_MS));
	KUNIT_EXPECT_EQ(test, spm_env_set_buf(e, e->a, b, SZ_4K, 0, NULL), 0);
	up_write(&adev->reset_domain->sem);

	KUNIT_EXPECT_TRUE(test, spm_env_wait_header(test, b, 0, 4 * SAMPLE, AMDGPU_KUNIT_WAIT_MS));
	KUNIT_ASSERT_EQ(test, spm_env_set_buf(e, e->a, 0, 0, 0, &out), 0);
	expect_lines(test, a, 0, 0, 0, 4 * SAMPLE / LINE);
	expect_lines(test, b, 0, 0, 4 * SAMPLE / LINE, 4 * SAMPLE / LINE);
	spm_env_read_header(test, b, 0, &hdr);
	KUNIT_EXPECT_NE(test, hdr.has_data_loss, 0);
	KUNIT_EXPECT_EQ(test, spm_env_op(e, e->a, AMDGPU_SPM_OP_RELEASE), 0);
}

/*
 * A full share leaves the rest of its XCC's data in the ring: the next
 * buffer's share of that XCC gets it, in order, and only the full share
 * reports has_data_loss.
 */
static void spm_full_share_loss_is_per_xcc(struct kunit *test)
{
	struct spm_env *e = renv(test, 2);
	unsigned long buf = spm_env_user_buf(test, SZ_4K, MAP_PRIVATE | MAP_ANONYMOUS);
	unsigned long next = spm_env_user_buf(test, SZ_4K, MAP_PRIVATE | MAP_ANONYMOUS);
	struct drm_amdgpu_spm_buffer_header h0, h1;
	struct drm_amdgpu_spm_args out;

	KUNIT_ASSERT_EQ(test, spm_env_op(e, e->a, AMDGPU_SPM_OP_ACQUIRE), 0);
	/* Two shares of 256 bytes: 224 of data each */
	KUNIT_ASSERT_EQ(test, spm_env_set_buf(e, e->a, buf, 512, 0, NULL), 0);
	start_all(e, 2);
	emit(test, e, 0, 10 * SAMPLE);
	emit(test, e, 1, 2 * SAMPLE);
	KUNIT_ASSERT_EQ(test, spm_env_set_buf(e, e->a, next, SZ_4K, 0, &out), 0);
	spm_env_read_header(test, buf, 0, &h0);
	spm_env_read_header(test, buf, 256, &h1);
	KUNIT_EXPECT_EQ(test, h0.bytes_copied, 224);
	KUNIT_EXPECT_NE(test, h0.has_data_loss, 0);
	KUNIT_EXPECT_EQ(test, h1.bytes_copied, 2 * SAMPLE);
	KUNIT_EXPECT_EQ(test, h1.has_data_loss, 0);
	KUNIT_EXPECT_NE(test, out.has_data_loss, 0);
	KUNIT_EXPECT_EQ(test, out.bytes_copied, 224 + 2 * SAMPLE);
	expect_lines(test, buf, 0, 0, 0, 224 / LINE);
	expect_lines(test, buf, 256, 1, 0, 2 * SAMPLE / LINE);

	/* The next buffer: the rest of XCC 0, from the line after the last */
	KUNIT_ASSERT_EQ(test, spm_env_set_buf(e, e->a, 0, 0, 0, &out), 0);
	KUNIT_EXPECT_EQ(test, out.has_data_loss, 0);
	KUNIT_EXPECT_EQ(test, out.bytes_copied, 10 * SAMPLE - 224);
	expect_lines(test, next, 0, 0, 224 / LINE, (10 * SAMPLE - 224) / LINE);
	expect_lines(test, next, SZ_2K, 1, 0, 0);
	spm_env_read_header(test, next, 0, &h0);
	spm_env_read_header(test, next, SZ_2K, &h1);
	KUNIT_EXPECT_EQ(test, h0.has_data_loss, 0);
	KUNIT_EXPECT_EQ(test, h1.has_data_loss, 0);
	KUNIT_EXPECT_EQ(test, spm_env_op(e, e->a, AMDGPU_SPM_OP_RELEASE), 0);
}

/*
 * The profiler loop with a timeout, as aqlprofile runs it: SET_DEST_BUF
 * waits for the current buffer to fill and wakes when one of its shares
 * does. The lines that did not fit stay in the ring and come first in the
 * next buffer, in order and with nothing missing in between. The full
 * share reports has_data_loss, the next one not, unless the RLC laps the
 * ring while it is current; in ring mode 3 it stalls instead, and the
 * next buffer goes on where the full one ended.
 */
static void spm_full_share_rest_goes_to_next(struct kunit *test)
{
	struct spm_env *e = renv(test, 2);
	bool mode3 = e->m->rd->user_mode3;
	u32 size = SZ_2K, share = SZ_1K, cap = share - HDR, i, written;
	struct drm_amdgpu_spm_buffer_header h;
	struct spm_model_check c = {};
	struct drm_amdgpu_spm_args out;
	unsigned long b[3];

	amdgpu_spm_backstop_ms = 10;
	for (i = 0; i < 3; i++)
		b[i] = spm_env_user_buf(test, size, MAP_PRIVATE | MAP_ANONYMOUS);
	KUNIT_ASSERT_EQ(test, spm_env_op(e, e->a, AMDGPU_SPM_OP_ACQUIRE), 0);
	KUNIT_ASSERT_EQ(test, spm_env_set_buf(e, e->a, b[0], size, 0, NULL), 0);
	start_all(e, 2);
	/* 60 lines for XCC 0, whose share holds 31; 6 for XCC 1 */
	emit(test, e, 0, 20 * SAMPLE);
	emit(test, e, 1, 2 * SAMPLE);
	KUNIT_ASSERT_EQ(test, spm_env_set_buf(e, e->a, b[1], size, 5000, &out), 0);
	/* Woken by the full share, long before the timeout */
	KUNIT_EXPECT_GT(test, out.timeout, 1000);
	/* Full, nothing lost */
	KUNIT_EXPECT_EQ(test, out.has_data_loss, AMDGPU_SPM_LOSS_FULL);
	KUNIT_EXPECT_EQ(test, out.bytes_copied, cap + 2 * SAMPLE);
	spm_env_read_header(test, b[0], 0, &h);
	KUNIT_EXPECT_EQ(test, h.has_data_loss, AMDGPU_SPM_LOSS_FULL);
	spm_env_read_header(test, b[0], share, &h);
	KUNIT_EXPECT_EQ(test, h.has_data_loss, 0);
	expect_lines(test, b[0], 0, 0, 0, cap / LINE);
	expect_lines(test, b[0], share, 1, 0, 2 * SAMPLE / LINE);
	/* The rest is in the new buffer already: the swap drained again */
	spm_env_read_header(test, b[1], 0, &h);
	KUNIT_EXPECT_EQ(test, h.bytes_copied, 20 * SAMPLE - cap);

	KUNIT_ASSERT_EQ(test, spm_env_set_buf(e, e->a, b[2], size, 0, &out), 0);
	KUNIT_EXPECT_EQ(test, out.has_data_loss, 0);
	KUNIT_EXPECT_EQ(test, out.bytes_copied, 20 * SAMPLE - cap);
	expect_lines(test, b[1], 0, 0, cap / LINE, (20 * SAMPLE - cap) / LINE);
	expect_lines(test, b[1], share, 1, 0, 0);

	/* Full again; then the RLC laps what was left while the next is current */
	emit(test, e, 0, 20 * SAMPLE);
	KUNIT_ASSERT_EQ(test, spm_env_set_buf(e, e->a, b[0], size, 5000, &out), 0);
	KUNIT_EXPECT_GT(test, out.timeout, 1000);
	expect_lines(test, b[2], 0, 0, 20 * SAMPLE / LINE, cap / LINE);
	spm_env_read_header(test, b[2], 0, &h);
	KUNIT_EXPECT_NE(test, h.has_data_loss, 0);
	written = spm_model_emit(e->m, 0, 3 * SZ_64K);
	/* In mode 3 the RLC stalls once the ring is full instead of lapping */
	if (mode3) {
		KUNIT_EXPECT_LT(test, written, 3 * SZ_64K);
		KUNIT_EXPECT_GT(test, e->m->x[0].stalls, 0);
	} else {
		KUNIT_EXPECT_EQ(test, written, 3 * SZ_64K);
	}
	/* The worker sees the lap, if there was one */
	KUNIT_EXPECT_TRUE(test, spm_env_wait_passes(test, e, 0, 3, AMDGPU_KUNIT_WAIT_MS));
	KUNIT_ASSERT_EQ(test, spm_env_set_buf(e, e->a, 0, 0, 0, &out), 0);
	KUNIT_EXPECT_EQ(test, !!(out.has_data_loss & AMDGPU_SPM_LOSS_SAMPLES), !mode3);
	spm_env_read_header(test, b[0], 0, &h);
	/* The lap lost samples; a stall loses none the kernel can see */
	KUNIT_EXPECT_EQ(test, !!(h.has_data_loss & AMDGPU_SPM_LOSS_SAMPLES), !mode3);
	/* What it got after the lap is valid and in order */
	c.next = (20 * SAMPLE + cap) / LINE;
	spm_model_check_share(test, b[0], 0, h.bytes_copied, 0, &c);
	KUNIT_EXPECT_FALSE(test, c.bad);
	KUNIT_EXPECT_FALSE(test, c.order);
	if (mode3) {
		/* The stream goes on where the last buffer ended, and fills it */
		KUNIT_EXPECT_EQ(test, c.gaps, 0);
		KUNIT_EXPECT_EQ(test, h.bytes_copied, cap);
		KUNIT_EXPECT_TRUE(test, h.has_data_loss & AMDGPU_SPM_LOSS_FULL);
	}
	spm_env_read_header(test, b[0], share, &h);
	KUNIT_EXPECT_EQ(test, h.has_data_loss, 0);
	KUNIT_EXPECT_EQ(test, spm_env_op(e, e->a, AMDGPU_SPM_OP_RELEASE), 0);
}

/*
 * A profiler that selects ring mode 3 (stall when full) from its command
 * stream, as aqlprofile does: a full share leaves the read pointer where
 * it is, so the RLC stalls rather than overwrite what was not copied, and
 * the next buffer continues the stream exactly where the full one ended,
 * as with ROCm's KFD.
 */
static void spm_full_share_ring_mode_3_keeps_stream(struct kunit *test)
{
	struct spm_env *e = renv(test, 1);
	const struct spm_model_layout *l = e->m->l;
	unsigned long a = spm_env_user_buf(test, SZ_4K, MAP_PRIVATE | MAP_ANONYMOUS);
	unsigned long b = spm_env_user_buf(test, SZ_128K, MAP_PRIVATE | MAP_ANONYMOUS);
	struct drm_amdgpu_spm_buffer_header h;
	struct drm_amdgpu_spm_args out;
	struct amdgpu_spm_stats st;
	u32 written;

	amdgpu_spm_backstop_ms = 10;
	KUNIT_ASSERT_EQ(test, spm_env_op(e, e->a, AMDGPU_SPM_OP_ACQUIRE), 0);
	KUNIT_ASSERT_EQ(test, spm_env_set_buf(e, e->a, a, SZ_4K, 0, NULL), 0);
	spm_model_profiler_start(e->m, 0, SAMPLE);
	spm_model_write(e->m, 0, SPM_R_PERFMON_CNTL, 3 << l->ring_mode_shift);
	/*
	 * More than the ring and the share hold: the RLC stalls once the
	 * ring is full (the worker may copy the share's worth meanwhile)
	 */
	written = spm_model_emit(e->m, 0, 2 * SZ_64K);
	KUNIT_EXPECT_LT(test, written, SZ_64K + SZ_4K);
	KUNIT_EXPECT_GT(test, e->m->x[0].stalls, 0);
	KUNIT_EXPECT_TRUE(test, spm_env_wait_header(test, a, 0, SZ_4K - HDR, AMDGPU_KUNIT_WAIT_MS));
	KUNIT_ASSERT_EQ(test, spm_env_set_buf(e, e->a, b, SZ_128K, 0, &out), 0);
	KUNIT_EXPECT_EQ(test, out.bytes_copied, SZ_4K - HDR);
	KUNIT_EXPECT_NE(test, out.has_data_loss, 0);
	/* What the full share took, the RLC may now write again */
	KUNIT_EXPECT_TRUE(test, spm_env_wait_passes(test, e, 0, 3, AMDGPU_KUNIT_WAIT_MS));
	written += spm_model_emit(e->m, 0, SZ_8K);
	KUNIT_EXPECT_TRUE(test, spm_env_wait_header(test, b, 0, written - (SZ_4K - HDR),
						    AMDGPU_KUNIT_WAIT_MS));
	KUNIT_ASSERT_EQ(test, spm_env_set_buf(e, e->a, 0, 0, 0, &out), 0);
	KUNIT_EXPECT_EQ(test, out.has_data_loss, 0);
	expect_lines(test, a, 0, 0, 0, (SZ_4K - HDR) / LINE);
	expect_lines(test, b, 0, 0, (SZ_4K - HDR) / LINE,
		     (written - (SZ_4K - HDR)) / LINE);
	spm_env_read_header(test, b, 0, &h);
	KUNIT_EXPECT_EQ(test, h.has_data_loss, 0);
	spm_env_stats(test, e, 0, &st);
	KUNIT_EXPECT_EQ(test, st.laps, 0);
	KUNIT_EXPECT_EQ(test, spm_env_op(e, e->a, AMDGPU_SPM_OP_RELEASE), 0);
}

/* ---- 6. the end of an owner ---- */

static void spm_close_releases(struct kunit *test)
{
	struct spm_env *e = env(test, 2);
	unsigned long buf = spm_env_user_buf(test, SZ_64K, MAP_PRIVATE | MAP_ANONYMOUS);

	KUNIT_ASSERT_EQ(test, spm_env_op(e, e->a, AMDGPU_SPM_OP_ACQUIRE), 0);
	KUNIT_ASSERT_EQ(test, spm_env_set_buf(e, e->a, buf, SZ_64K, 0, NULL), 0);
	start_all(e, 2);
	emit(test, e, 0, SAMPLE);

	/* Another file, or another task closing this one, changes nothing */
	amdgpu_spm_file_flush(e->adev, e->b, current->files);
	amdgpu_spm_file_close(e->adev, e->b);
	amdgpu_spm_file_flush(e->adev, e->a, (fl_owner_t)e);
	KUNIT_EXPECT_TRUE(test, amdgpu_spm_busy(e->adev));

	/* The acquiring task closes it (KFD may still hold the file) */
	amdgpu_spm_file_flush(e->adev, e->a, current->files);
	expect_free(test, e, 2);
	KUNIT_EXPECT_EQ(test, spm_env_op(e, e->b, AMDGPU_SPM_OP_ACQUIRE), 0);

	/* postclose is the backstop */
	amdgpu_spm_file_close(e->adev, e->b);
	expect_free(test, e, 2);
}

/* close() of one dup() of the owner's fd keeps SPM; the last close ends it */
static void spm_close_dup_keeps_acquisition(struct kunit *test)
{
	struct spm_env *e = env(test, 1);
	struct file *file;
	int fd;

	if (!current->files)
		kunit_skip(test, "no files_struct");
	file = anon_inode_getfile("spm-test-drm", &pfnmap_fops, NULL, O_RDWR);
	KUNIT_ASSERT_FALSE(test, IS_ERR(file));
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, fput_action, file), 0);
	e->a->filp = file;
	KUNIT_ASSERT_EQ(test, spm_env_op(e, e->a, AMDGPU_SPM_OP_ACQUIRE), 0);

	/* Another descriptor of the same file stays open in this task */
	fd = get_unused_fd_flags(O_CLOEXEC);
	KUNIT_ASSERT_GE(test, fd, 0);
	fd_install(fd, get_file(file));
	amdgpu_spm_file_flush(e->adev, e->a, current->files);
	KUNIT_EXPECT_TRUE(test, amdgpu_spm_busy(e->adev));

	/* Closing it too, the last one, releases */
	KUNIT_EXPECT_EQ(test, close_fd(fd), 0);
	amdgpu_spm_file_flush(e->adev, e->a, current->files);
	expect_free(test, e, 1);
}

static int release_waiter_fn(void *data)
{
	struct waiter *w = data;

	current->kunit_test = w->test;
	complete(&w->started);
	w->ret = spm_env_set_buf(w->e, w->e->a, 0, 0, w->timeout, &w->out);
	complete(&w->done);
	while (!kthread_should_stop())
		schedule_timeout_interruptible(1);
	return 0;
}

/* Close wakes a waiter inside SET_DEST_BUF and frees only after it left */
static void spm_close_wakes_waiters(struct kunit *test)
{
	struct spm_env *e = env(test, 1);
	unsigned long buf = spm_env_user_buf(test, SZ_4K, MAP_PRIVATE | MAP_ANONYMOUS);
	struct waiter w = { .e = e, .test = test, .timeout = 60000 };
	struct task_struct *t;
	unsigned long t0;

	init_completion(&w.started);
	init_completion(&w.done);
	KUNIT_ASSERT_EQ(test, spm_env_op(e, e->a, AMDGPU_SPM_OP_ACQUIRE), 0);
	KUNIT_ASSERT_EQ(test, spm_env_set_buf(e, e->a, buf, SZ_4K, 0, NULL), 0);
	t = kthread_run(release_waiter_fn, &w, "spm-waiter");
	KUNIT_ASSERT_FALSE(test, IS_ERR(t));
	wait_for_completion(&w.started);
	wait_waiter_sleeps(test, t);
	t0 = jiffies;
	amdgpu_spm_file_close(e->adev, e->a);
	KUNIT_EXPECT_LT(test, jiffies_to_msecs(jiffies - t0), 10000);
	wait_for_completion(&w.done);
	kthread_stop(t);
	KUNIT_EXPECT_EQ(test, w.ret, -EINVAL);
	expect_free(test, e, 1);
}

/* ---- 7. privilege ---- */

static void spm_privilege(struct kunit *test)
{
	struct spm_env *e = env(test, 1);
	const struct cred *old;
	struct cred *cred;
	int r1, r2, paranoid;

	cred = prepare_creds();
	KUNIT_ASSERT_NOT_NULL(test, cred);
	cap_lower(cred->cap_effective, CAP_PERFMON);
	cap_lower(cred->cap_effective, CAP_SYS_ADMIN);
	old = override_creds(cred);
	/* amdgpu.spm_paranoid as it is by default */
	paranoid = amdgpu_spm_paranoid;
	r1 = spm_env_op(e, e->a, AMDGPU_SPM_OP_ACQUIRE);
	amdgpu_spm_paranoid = 0;
	r2 = spm_env_op(e, e->a, AMDGPU_SPM_OP_ACQUIRE);
	revert_creds(old);
	put_cred(cred);

	KUNIT_EXPECT_EQ(test, paranoid, 1);
	KUNIT_EXPECT_EQ(test, r1, -EPERM);
	KUNIT_EXPECT_EQ(test, r2, 0);
	KUNIT_EXPECT_EQ(test, spm_env_op(e, e->a, AMDGPU_SPM_OP_RELEASE), 0);

	/* With the default policy, a capable caller may acquire */
	amdgpu_spm_paranoid = 1;
	KUNIT_EXPECT_EQ(test, spm_env_op(e, e->a, AMDGPU_SPM_OP_ACQUIRE), 0);
	KUNIT_EXPECT_EQ(test, spm_env_op(e, e->a, AMDGPU_SPM_OP_RELEASE), 0);
}

/* ---- 8. concurrency ---- */

#define STRESS_THREADS	4
#define STRESS_ITERS	1000

struct stress {
	struct spm_env *e;
	struct kunit *test;
	struct mm_struct *mm;
	unsigned long buf[STRESS_THREADS];
	struct drm_file *files[STRESS_THREADS];
	atomic_t running;
	struct completion done;
	int unexpected;
};

struct stress_thread {
	struct stress *st;
	unsigned int id;
};

static int stress_fn(void *data)
{
	struct stress_thread *th = data;
	struct stress *st = th->st;
	struct drm_file *f = st->files[th->id % 2];
	unsigned int i;
	int r;

	current->kunit_test = st->test;
	kthread_use_mm(st->mm);
	for (i = 0; i < STRESS_ITERS; i++) {
		switch (get_random_u32_below(6)) {
		case 0:
			r = spm_env_op(st->e, f, AMDGPU_SPM_OP_ACQUIRE);
			break;
		case 1:
			r = spm_env_op(st->e, f, AMDGPU_SPM_OP_RELEASE);
			break;
		case 2:
			r = spm_env_set_buf(st->e, f, st->buf[th->id], SZ_8K,
					    get_random_u32_below(2), NULL);
			break;
		case 3:
			r = spm_env_set_buf(st->e, f, 0, 0, 0, NULL);
			break;
		case 4:
			spm_model_profiler_start(st->e->m, th->id % 2, SAMPLE);
			spm_model_emit(st->e->m, get_random_u32_below(2), 2 * SAMPLE);
			r = 0;
			break;
		default:
			amdgpu_spm_file_flush(st->e->adev, f, (fl_owner_t)st);
			if (!get_random_u32_below(8))
				amdgpu_spm_file_close(st->e->adev, f);
			r = 0;
			break;
		}
		if (r && r != -EBUSY && r != -EINVAL)
			st->unexpected++;
		cond_resched();
	}
	kthread_unuse_mm(st->mm);
	if (atomic_dec_and_test(&st->running))
		complete(&st->done);
	return 0;
}

static void spm_concurrency_stress(struct kunit *test)
{
	struct spm_env *e = env(test, 2);
	struct stress_thread th[STRESS_THREADS];
	struct stress *st;
	unsigned int i;

	st = kunit_kzalloc(test, sizeof(*st), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, st);
	st->e = e;
	st->test = test;
	st->files[0] = e->a;
	st->files[1] = e->b;
	for (i = 0; i < STRESS_THREADS; i++)
		st->buf[i] = spm_env_user_buf(test, SZ_8K, i & 1 ? MAP_SHARED | MAP_ANONYMOUS :
					      MAP_PRIVATE | MAP_ANONYMOUS);
	st->mm = current->mm;
	mmget(st->mm);
	atomic_set(&st->running, STRESS_THREADS);
	init_completion(&st->done);
	amdgpu_spm_backstop_ms = 1;
	for (i = 0; i < STRESS_THREADS; i++) {
		th[i].st = st;
		th[i].id = i;
		KUNIT_ASSERT_FALSE(test, IS_ERR(kthread_run(stress_fn, &th[i],
							    "spm-stress-%u", i)));
	}
	wait_for_completion(&st->done);
	mmput(st->mm);

	KUNIT_EXPECT_EQ(test, st->unexpected, 0);
	amdgpu_spm_file_close(e->adev, e->a);
	amdgpu_spm_file_close(e->adev, e->b);
	expect_free(test, e, 2);
}

/* ---- benchmark: printed numbers, no timed assertions ---- */

/* make bench boots with amdgpu.spm_kunit_bench=1; make check does not */
static bool spm_kunit_bench;
module_param(spm_kunit_bench, bool, 0444);
MODULE_PARM_DESC(spm_kunit_bench, "KUnit: run the timed SPM benchmark (make bench)");

/*
 * Wake-ups of the drain worker: while nothing streams (the goal: at most
 * 10 a second), and while one XCC streams at 160 MB/s into the default
 * 4 MiB ring (the goal: within 2x of the fill rate over half the ring).
 * Emulated time is slow and uneven; read these as ratios of one run. It
 * asserts nothing it measures, so it runs in make bench only.
 */
static void spm_bench_wakeups(struct kunit *test)
{
	struct spm_env *e;
	unsigned long buf;
	struct amdgpu_spm_stats s0, s1;
	struct spm_model_stream *st;
	u64 t0, t1, bytes, goal, rate;

	if (!spm_kunit_bench)
		kunit_skip(test, "timed benchmark: make bench runs it (amdgpu.spm_kunit_bench=1)");
	e = spm_env_create(test, &spm_layout_gfx_v9_4_3, 1, SZ_4M);
	buf = spm_env_user_buf(test, 8 * SZ_1M, MAP_PRIVATE | MAP_ANONYMOUS);

	KUNIT_ASSERT_EQ(test, spm_env_op(e, e->a, AMDGPU_SPM_OP_ACQUIRE), 0);
	KUNIT_ASSERT_EQ(test, spm_env_set_buf(e, e->a, buf, 8 * SZ_1M, 0, NULL), 0);
	msleep(300);
	spm_env_stats(test, e, 0, &s0);
	t0 = ktime_get_ns();
	msleep(2000);
	spm_env_stats(test, e, 0, &s1);
	t1 = ktime_get_ns();
	kunit_info(test, "idle: %llu wake-ups in %llu ms = %llu.%llu per second (goal at most 10)\n",
		   s1.wakeups - s0.wakeups, div64_u64(t1 - t0, NSEC_PER_MSEC),
		   div64_u64((s1.wakeups - s0.wakeups) * NSEC_PER_SEC, t1 - t0),
		   div64_u64((s1.wakeups - s0.wakeups) * NSEC_PER_SEC * 10, t1 - t0) % 10);

	spm_model_profiler_start(e->m, 0, 96 * LINE);
	spm_env_stats(test, e, 0, &s0);
	t0 = ktime_get_ns();
	st = spm_model_stream_start(test, e->m, BIT(0), 160000000, 64 * SZ_1M);
	while (!spm_model_stream_done(st)) {
		msleep(20);
		KUNIT_ASSERT_EQ(test, spm_env_set_buf(e, e->a, buf, 8 * SZ_1M, 0, NULL), 0);
	}
	t1 = ktime_get_ns();
	spm_env_stats(test, e, 0, &s1);
	bytes = s1.drained - s0.drained;
	rate = div64_u64(bytes * NSEC_PER_SEC, t1 - t0);
	goal = div64_u64(rate, (SZ_4M - AMDGPU_SPM_RING_HDR_SIZE) / 2);
	kunit_info(test, "streaming %llu MB/s: %llu wake-ups/s, fill rate / half ring = %llu/s, ratio %llu.%02llu (goal at most 2), %llu laps lost\n",
		   div64_u64(rate, 1000000),
		   div64_u64((s1.wakeups - s0.wakeups) * NSEC_PER_SEC, t1 - t0), goal,
		   div64_u64((s1.wakeups - s0.wakeups) * NSEC_PER_SEC, (t1 - t0) * max(goal, 1ULL)),
		   div64_u64((s1.wakeups - s0.wakeups) * NSEC_PER_SEC * 100,
			     (t1 - t0) * max(goal, 1ULL)) % 100,
		   s1.laps - s0.laps);
	KUNIT_EXPECT_EQ(test, spm_env_op(e, e->a, AMDGPU_SPM_OP_RELEASE), 0);
}

/*
 * What the check of the ring registers costs (the worker reads ring base,
 * size and SPM_VMID of every XCC back, at most every AMDGPU_SPM_CHECK_NS):
 * the model counts the driver's MMIO reads of each register while 8 XCCs
 * stream and a profiler loop swaps buffers. How many reads a check makes
 * per XCC is fixed by the code, and the case asserts what it counts: the
 * four registers once each per XCC and check, no other MMIO read while
 * streaming, no more checks than one per AMDGPU_SPM_CHECK_NS. The line
 * gives the counts of this run and what they come to at the shortest
 * drain period (AMDGPU_SPM_MIN_PERIOD_NS) on 8 XCCs. What one read costs
 * on an MI part cannot be measured here. make bench only.
 */
static void spm_bench_check_reads(struct kunit *test)
{
	static const enum spm_model_reg regs[] = {
		SPM_R_BASE_LO, SPM_R_BASE_HI, SPM_R_SIZE, SPM_R_MC_CNTL,
	};
	const unsigned int n = 8, share = SZ_1M;
	u64 r0[ARRAY_SIZE(regs)], d[ARRAY_SIZE(regs)], all0 = 0, all1 = 0;
	u64 t0, t1, checks, reads = 0, per_check, passes, floor_s, floor_pass100;
	struct amdgpu_spm_stats s0, s1;
	struct spm_model_stream *st;
	unsigned long buf[2];
	struct spm_env *e;
	unsigned int i, k;

	if (!spm_kunit_bench)
		kunit_skip(test, "timed benchmark: make bench runs it (amdgpu.spm_kunit_bench=1)");
	/* Small rings, so that the pace drains often: many passes per check */
	e = spm_env_create(test, &spm_layout_gfx_v9_4_3, n, SZ_64K);
	for (k = 0; k < 2; k++)
		buf[k] = spm_env_user_buf(test, n * share, MAP_PRIVATE | MAP_ANONYMOUS);
	KUNIT_ASSERT_EQ(test, spm_env_op(e, e->a, AMDGPU_SPM_OP_ACQUIRE), 0);
	KUNIT_ASSERT_EQ(test, spm_env_set_buf(e, e->a, buf[0], n * share, 0, NULL), 0);
	for (i = 0; i < n; i++)
		spm_model_profiler_start(e->m, i, 96 * LINE);
	st = spm_model_stream_start(test, e->m, GENMASK(n - 1, 0), 8000000, 8 * SZ_1M);
	/* Programmed and streaming: count from here on */
	KUNIT_ASSERT_TRUE(test, spm_env_wait_passes(test, e, 0, 2, AMDGPU_KUNIT_WAIT_MS));
	spm_env_stats(test, e, 0, &s0);
	for (k = 0; k < ARRAY_SIZE(regs); k++)
		r0[k] = spm_model_reads(e->m, regs[k]);
	for (k = 0; k < SPM_R_NUM; k++)
		all0 += spm_model_reads(e->m, k);
	all0 += READ_ONCE(e->m->reads_other);
	t0 = ktime_get_ns();
	/* Each swap runs the worker too: passes come much faster than checks */
	for (k = 1; !spm_model_stream_done(st); k++) {
		usleep_range(1000, 2000);
		KUNIT_ASSERT_EQ(test, spm_env_set_buf(e, e->a, buf[k % 2], n * share, 0, NULL), 0);
	}
	spm_env_stats(test, e, 0, &s1);
	for (k = 0; k < ARRAY_SIZE(regs); k++) {
		d[k] = spm_model_reads(e->m, regs[k]) - r0[k];
		reads += d[k];
	}
	for (k = 0; k < SPM_R_NUM; k++)
		all1 += spm_model_reads(e->m, k);
	all1 += READ_ONCE(e->m->reads_other);
	t1 = ktime_get_ns();
	passes = s1.wakeups - s0.wakeups;
	/* Each check reads the ring base of every XCC first */
	checks = d[0] / n;
	KUNIT_ASSERT_GT(test, checks, 0);
	per_check = div64_u64(reads, checks * n);
	/* The same four reads on every XCC, every check; nothing else read */
	for (k = 0; k < ARRAY_SIZE(regs); k++)
		KUNIT_EXPECT_EQ_MSG(test, d[k], checks * n, "register %u", regs[k]);
	KUNIT_EXPECT_EQ(test, per_check, ARRAY_SIZE(regs));
	KUNIT_EXPECT_EQ(test, all1 - all0, reads);
	KUNIT_EXPECT_LE(test, checks, div64_u64(t1 - t0, AMDGPU_SPM_CHECK_NS) + 1);
	/*
	 * At the shortest period: a check every AMDGPU_SPM_CHECK_NS, so on one
	 * pass in (AMDGPU_SPM_CHECK_NS / AMDGPU_SPM_MIN_PERIOD_NS)
	 */
	floor_s = per_check * 8 * div64_u64(NSEC_PER_SEC, AMDGPU_SPM_CHECK_NS);
	floor_pass100 = div64_u64(floor_s * 100, div64_u64(NSEC_PER_SEC,
							   AMDGPU_SPM_MIN_PERIOD_NS));
	kunit_info(test, "measured with 8 XCCs streaming: %llu worker passes in %llu ms, %llu checks, %llu MMIO reads (%llu per XCC per check, %llu.%02llu per pass); at the 100 us drain floor on 8 XCCs: %llu reads per check, %llu.%02llu per pass, %llu per second (a check on every pass instead: %llu per pass, %llu per second)\n",
		   passes, div64_u64(t1 - t0, NSEC_PER_MSEC), checks, reads, per_check,
		   div64_u64(reads, max(passes, 1ULL)),
		   div64_u64(reads * 100, max(passes, 1ULL)) % 100,
		   per_check * 8, floor_pass100 / 100, floor_pass100 % 100, floor_s,
		   per_check * 8,
		   per_check * 8 * div64_u64(NSEC_PER_SEC, AMDGPU_SPM_MIN_PERIOD_NS));
	KUNIT_EXPECT_EQ(test, spm_env_op(e, e->a, AMDGPU_SPM_OP_RELEASE), 0);
}

static struct kunit_case amdgpu_spm_bench_cases[] = {
	/* very slow, as its suite: a slow case would be let in */
	KUNIT_CASE_ATTR(spm_bench_wakeups, { .speed = KUNIT_SPEED_VERY_SLOW }),
	KUNIT_CASE_ATTR(spm_bench_check_reads, { .speed = KUNIT_SPEED_VERY_SLOW }),
	{}
};

static struct kunit_suite amdgpu_spm_bench_suite = {
	.name = "amdgpu_spm_bench",
	.test_cases = amdgpu_spm_bench_cases,
	/* make bench only: make check's run filters on speed>very_slow */
	.attr = { .speed = KUNIT_SPEED_VERY_SLOW },
};

static struct kunit_case amdgpu_spm_cases[] = {
	KUNIT_CASE(spm_acquire_first_wins),
	KUNIT_CASE(spm_acquire_owns_every_xcc),
	KUNIT_CASE(spm_no_backend),
	KUNIT_CASE(spm_acquire_gart_budget),
	KUNIT_CASE_PARAM(spm_acquire_unwinds, fail_xcc_gen_params),
	KUNIT_CASE(spm_gfx_reservation_excludes_profiler),
	KUNIT_CASE(spm_acquire_waits_for_vmid_writers),
	KUNIT_CASE(spm_partitions_are_independent),
	KUNIT_CASE(spm_partition_without_gfx),
	KUNIT_CASE(spm_gfx_reservation_scope),
	KUNIT_CASE_PARAM(spm_set_dest_buf_rejects, bad_buf_gen_params),
	KUNIT_CASE(spm_set_dest_buf_ignores_outputs),
	KUNIT_CASE(spm_headers_and_shares),
	KUNIT_CASE(spm_header_seq_counts_buffers),
	KUNIT_CASE_PARAM(spm_data_flows_without_ioctl, buf_kind_gen_params),
	KUNIT_CASE(spm_bo_like_buffer_faults_in),
	KUNIT_CASE(spm_pin_respects_memlock),
	KUNIT_CASE(spm_pin_cache_reuses_buffers),
	KUNIT_CASE(spm_partial_pin_unpins),
	KUNIT_CASE(spm_pin_cache_follows_remap),
	KUNIT_CASE(spm_timeout_expires_with_partial_data),
	KUNIT_CASE(spm_timeout_returns_time_left),
	KUNIT_CASE(spm_timeout_zero_swaps_at_once),
	KUNIT_CASE_SLOW(spm_timeout_signal_restart),
	KUNIT_CASE_PARAM(spm_ring_wrap_in_order, spm_model_reading_gen),
	KUNIT_CASE_PARAM(spm_no_buffer_loss_goes_to_next, spm_model_reading_gen),
	KUNIT_CASE_PARAM(spm_no_buffer_data_stays_until_stopped, spm_model_reading_gen),
	KUNIT_CASE_PARAM(spm_full_share_loss_is_per_xcc, spm_model_reading_gen),
	KUNIT_CASE_PARAM(spm_full_share_rest_goes_to_next, spm_model_reading_gen),
	KUNIT_CASE_PARAM(spm_full_share_ring_mode_3_keeps_stream, spm_model_reading_gen),
	KUNIT_CASE(spm_close_releases),
	KUNIT_CASE(spm_close_dup_keeps_acquisition),
	KUNIT_CASE(spm_close_wakes_waiters),
	KUNIT_CASE(spm_privilege),
	KUNIT_CASE_SLOW(spm_concurrency_stress),
	{}
};

static struct kunit_suite amdgpu_spm_suite = {
	.name = "amdgpu_spm",
	.test_cases = amdgpu_spm_cases,
};

kunit_test_suites(&amdgpu_spm_suite, &amdgpu_spm_bench_suite);
