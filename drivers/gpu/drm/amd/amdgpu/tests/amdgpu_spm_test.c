// SPDX-License-Identifier: MIT
/*
 * Copyright 2026 The amdgpu profiler series authors
 *
 * KUnit tests of the SPM manager: the real manager, driven through
 * amdgpu_spm_ioctl() on a fake device, with a fake RLC behind
 * struct amdgpu_spm_funcs. The fake writes samples into the ring and
 * advances the write pointer in the ring's first 32 bytes like the hardware,
 * honours the read pointer, can overrun past the ring end like parts before
 * GC 11.0.1, can stall, and raises the SPM interrupt. Destination buffers
 * are real user memory from kunit_vm_mmap().
 */

#include <kunit/test.h>

#include <linux/anon_inodes.h>
#include <linux/cred.h>
#include <linux/delay.h>
#include <linux/fdtable.h>
#include <linux/file.h>
#include <linux/hugetlb.h>
#include <linux/kthread.h>
#include <linux/mman.h>
#include <linux/random.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>

#include <drm/amdgpu_drm.h>
#include <drm/drm_file.h>

#include "amdgpu.h"
#include "amdgpu_profiler.h"
#include "amdgpu_spm.h"
#include "tests/amdgpu_kunit_helpers.h"

#define HDR	sizeof(struct drm_amdgpu_spm_buffer_header)
#define LINE	AMDGPU_SPM_LINE_SIZE

enum fake_hook {
	HOOK_RING_ALLOC,
	HOOK_SET_VMID,
	HOOK_SET_RING,
	HOOK_SET_RDPTR,
	HOOK_IRQ_GET,
	HOOK_START,
	HOOK_NONE,
};

struct fake_xcc {
	u8 *cpu;		/* ring memory, header included */
	u32 alloc;		/* bytes allocated */
	u32 size;		/* programmed ring size, header included */
	u32 wptr;		/* next write offset into the data area */
	u32 rdptr;		/* as programmed */
	u32 vmid;
	bool running;
	bool irq;
	u64 pos;		/* stream position of the next sample byte */
	u64 dropped;
};

struct fake_rlc {
	struct amdgpu_device *adev;
	spinlock_t lock;	/* guards everything below */
	struct fake_xcc x[AMDGPU_SPM_MAX_XCC];
	enum fake_hook fail_hook;
	u32 fail_xcc;
	bool raise_irq;
	u32 guard;
	int rings;		/* allocated rings */
	int irqs;		/* enabled interrupts */
	bool routed_early;	/* an interrupt reached a session in setup */
};

static struct fake_rlc *fake;
static struct amdgpu_spm_funcs fake_funcs;

/* Byte @pos of the sample stream of @xcc */
static u8 stream_byte(u32 xcc, u64 pos)
{
	u32 w = (u32)(pos >> 2) * 2654435761u ^ (xcc << 24);

	return w >> ((pos & 3) * 8);
}

static bool fake_fail(enum fake_hook h, u32 xcc)
{
	return fake->fail_hook == h && fake->fail_xcc == xcc;
}

static int fake_ring_alloc(struct amdgpu_device *adev, u32 xcc, u32 size,
			   struct amdgpu_spm_ring *ring)
{
	if (fake_fail(HOOK_RING_ALLOC, xcc))
		return -ENOMEM;
	ring->cpu_addr = vzalloc(size);
	if (!ring->cpu_addr)
		return -ENOMEM;
	/* Poison what the RLC never writes, so that reads of it show */
	memset(ring->cpu_addr, 0xa5, size);
	ring->gpu_addr = (uintptr_t)ring->cpu_addr;
	ring->size = size;
	spin_lock(&fake->lock);
	fake->x[xcc].cpu = ring->cpu_addr;
	fake->x[xcc].alloc = size;
	fake->rings++;
	spin_unlock(&fake->lock);
	return 0;
}

static void fake_ring_free(struct amdgpu_device *adev, u32 xcc,
			   struct amdgpu_spm_ring *ring)
{
	spin_lock(&fake->lock);
	fake->x[xcc].cpu = NULL;
	fake->rings--;
	spin_unlock(&fake->lock);
	vfree(ring->cpu_addr);
	ring->cpu_addr = NULL;
}

static int fake_set_vmid(struct amdgpu_device *adev, u32 xcc, u32 vmid)
{
	if (vmid != AMDGPU_SPM_VMID_NONE && fake_fail(HOOK_SET_VMID, xcc))
		return -EIO;
	fake->x[xcc].vmid = vmid;
	return 0;
}

static int fake_set_ring(struct amdgpu_device *adev, u32 xcc, u64 gpu_addr,
			 u32 size)
{
	if (fake_fail(HOOK_SET_RING, xcc))
		return -EIO;
	spin_lock(&fake->lock);
	fake->x[xcc].size = size;
	spin_unlock(&fake->lock);
	return 0;
}

static int fake_set_rdptr(struct amdgpu_device *adev, u32 xcc, u32 rptr)
{
	if (fake_fail(HOOK_SET_RDPTR, xcc))
		return -EIO;
	spin_lock(&fake->lock);
	fake->x[xcc].rdptr = rptr;
	spin_unlock(&fake->lock);
	return 0;
}

static int fake_start(struct amdgpu_device *adev, u32 xcc)
{
	if (fake_fail(HOOK_START, xcc))
		return -EIO;
	spin_lock(&fake->lock);
	fake->x[xcc].running = true;
	fake->x[xcc].wptr = 0;
	spin_unlock(&fake->lock);
	return 0;
}

static void fake_stop(struct amdgpu_device *adev, u32 xcc)
{
	spin_lock(&fake->lock);
	fake->x[xcc].running = false;
	spin_unlock(&fake->lock);
}

static int fake_irq_get(struct amdgpu_device *adev, u32 xcc)
{
	/* ACQUIRE has not finished: no interrupt may reach its session yet */
	if (READ_ONCE(adev->spm.xcc_sess[xcc]))
		fake->routed_early = true;
	if (fake_fail(HOOK_IRQ_GET, xcc))
		return -EINVAL;
	spin_lock(&fake->lock);
	fake->x[xcc].irq = true;
	fake->irqs++;
	spin_unlock(&fake->lock);
	/* One left pending by an earlier acquisition fires as it is enabled */
	amdgpu_spm_irq(adev, xcc);
	return 0;
}

static void fake_irq_put(struct amdgpu_device *adev, u32 xcc)
{
	spin_lock(&fake->lock);
	fake->x[xcc].irq = false;
	fake->irqs--;
	spin_unlock(&fake->lock);
}

static struct amdgpu_spm_funcs fake_funcs = {
	.ring_alloc = fake_ring_alloc,
	.ring_free = fake_ring_free,
	.set_vmid = fake_set_vmid,
	.set_ring = fake_set_ring,
	.set_rdptr = fake_set_rdptr,
	.start = fake_start,
	.stop = fake_stop,
	.irq_get = fake_irq_get,
	.irq_put = fake_irq_put,
};

/*
 * The RLC writes one sample of @len bytes for @xcc. Returns false when it
 * had to drop it (stopped, or not enough room before the read pointer).
 */
static bool fake_emit(u32 xcc, u32 len)
{
	struct fake_xcc *x = &fake->x[xcc];
	u32 data, w, free, i, off;
	bool irq;

	spin_lock(&fake->lock);
	if (!x->running || !x->cpu) {
		x->dropped += len;
		spin_unlock(&fake->lock);
		return false;
	}
	data = x->size - AMDGPU_SPM_RING_HDR_SIZE;
	w = x->wptr >= data ? 0 : x->wptr;
	/* The RLC keeps one line free so that full and empty differ */
	if (x->rdptr > w)
		free = x->rdptr - w - LINE;
	else
		free = data - w + x->rdptr - LINE;
	if (free < len || (fake->guard && w + len > data + fake->guard)) {
		x->dropped += len;
		spin_unlock(&fake->lock);
		return false;
	}
	for (i = 0; i < len; i++) {
		off = w + i;
		/* Newer parts wrap inside a sample, older ones run past the end */
		if (!fake->guard && off >= data)
			off -= data;
		x->cpu[AMDGPU_SPM_RING_HDR_SIZE + off] = stream_byte(xcc, x->pos + i);
	}
	x->pos += len;
	w += len;
	if (!fake->guard && w >= data)
		w -= data;
	x->wptr = w;
	/* Data before the write pointer, as the RLC's memory writes are ordered */
	wmb();
	WRITE_ONCE(*(u32 *)x->cpu, w);
	irq = x->irq && fake->raise_irq;
	spin_unlock(&fake->lock);

	if (irq)
		amdgpu_spm_irq(fake->adev, xcc);
	return true;
}

struct spm_ctx {
	struct amdgpu_device *adev;
	struct drm_file *a;
	struct drm_file *b;
	int saved_paranoid;
	unsigned int saved_ring;
	unsigned int saved_backstop;
};

static void spm_fini_action(void *data)
{
	struct spm_ctx *ctx = data;

	amdgpu_spm_fini(ctx->adev);
	amdgpu_spm_paranoid = ctx->saved_paranoid;
	amdgpu_spm_ring_size = ctx->saved_ring;
	amdgpu_spm_backstop_ms = ctx->saved_backstop;
	fake = NULL;
}

static struct spm_ctx *spm_setup(struct kunit *test, unsigned int nxcc)
{
	struct spm_ctx *ctx;
	unsigned int i;

	ctx = kunit_kzalloc(test, sizeof(*ctx), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, ctx);
	fake = kunit_kzalloc(test, sizeof(*fake), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, fake);
	spin_lock_init(&fake->lock);
	fake->fail_hook = HOOK_NONE;
	fake->raise_irq = true;
	for (i = 0; i < AMDGPU_SPM_MAX_XCC; i++)
		fake->x[i].vmid = AMDGPU_SPM_VMID_NONE;
	fake_funcs.overrun_guard = 0;

	ctx->adev = amdgpu_kunit_helper_alloc_device(test);
	fake->adev = ctx->adev;
	ctx->adev->gfx.xcc_mask = GENMASK(nxcc - 1, 0);
	amdgpu_spm_init(ctx->adev);
	ctx->adev->spm.funcs = &fake_funcs;
	ctx->a = amdgpu_kunit_helper_alloc_file(test, ctx->adev, 0);
	ctx->b = amdgpu_kunit_helper_alloc_file(test, ctx->adev, 0);

	ctx->saved_paranoid = amdgpu_spm_paranoid;
	ctx->saved_ring = amdgpu_spm_ring_size;
	ctx->saved_backstop = amdgpu_spm_backstop_ms;
	amdgpu_spm_ring_size = SZ_64K;
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, spm_fini_action, ctx), 0);
	test->priv = ctx;
	return ctx;
}

static int spm_op(struct spm_ctx *ctx, struct drm_file *f, u32 op)
{
	struct drm_amdgpu_spm_args args = { .op = op };

	return amdgpu_spm_ioctl(ctx->adev, f, &args);
}

static int spm_set_buf(struct spm_ctx *ctx, struct drm_file *f, unsigned long buf,
		       u32 size, u32 timeout, struct drm_amdgpu_spm_args *out)
{
	struct drm_amdgpu_spm_args args = {
		.op = AMDGPU_SPM_OP_SET_DEST_BUF,
		.dest_buf = buf,
		.buf_size = size,
		.timeout = timeout,
	};
	int r;

	r = amdgpu_spm_ioctl(ctx->adev, f, &args);
	if (out)
		*out = args;
	return r;
}

static unsigned long spm_user_buf(struct kunit *test, u32 size, unsigned long flags)
{
	unsigned long addr;

	addr = kunit_vm_mmap(test, NULL, 0, size, PROT_READ | PROT_WRITE, flags, 0);
	KUNIT_ASSERT_FALSE(test, !addr || IS_ERR_VALUE(addr));
	return addr;
}

static void spm_read_header(struct kunit *test, unsigned long buf, u32 off,
			    struct drm_amdgpu_spm_buffer_header *hdr)
{
	KUNIT_ASSERT_EQ(test, copy_from_user(hdr, (void __user *)(buf + off),
					     sizeof(*hdr)), 0);
}

/* Check that the share at @off holds @len stream bytes of @xcc from @pos */
static void spm_expect_stream(struct kunit *test, unsigned long buf, u32 off,
			      u32 xcc, u64 pos, u32 len)
{
	u8 *tmp;
	u32 i;

	tmp = kunit_kmalloc(test, len ? len : 1, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, tmp);
	KUNIT_ASSERT_EQ(test, copy_from_user(tmp, (void __user *)(buf + off + HDR), len), 0);
	for (i = 0; i < len; i++) {
		if (tmp[i] != stream_byte(xcc, pos + i)) {
			KUNIT_FAIL(test, "xcc %u byte %u: %#x, expected %#x", xcc, i,
				   tmp[i], stream_byte(xcc, pos + i));
			break;
		}
	}
	kunit_kfree(test, tmp);
}

/* Everything the acquisition had is gone: the partition is free */
static void spm_expect_free(struct kunit *test, struct spm_ctx *ctx, u32 nxcc)
{
	u32 i;

	KUNIT_EXPECT_EQ(test, fake->rings, 0);
	KUNIT_EXPECT_EQ(test, fake->irqs, 0);
	for (i = 0; i < nxcc; i++) {
		KUNIT_EXPECT_FALSE(test, fake->x[i].running);
		KUNIT_EXPECT_EQ(test, fake->x[i].vmid, AMDGPU_SPM_VMID_NONE);
		KUNIT_EXPECT_FALSE(test, amdgpu_spm_xcc_owned(ctx->adev, i));
	}
	KUNIT_EXPECT_FALSE(test, amdgpu_spm_busy(ctx->adev));
	KUNIT_EXPECT_NULL(test, ctx->adev->spm.mgr[0].sess);
}

/* ---- 1. ACQUIRE and RELEASE ---- */

static void spm_acquire_first_wins(struct kunit *test)
{
	struct spm_ctx *ctx = spm_setup(test, 2);

	KUNIT_EXPECT_EQ(test, spm_op(ctx, ctx->a, AMDGPU_SPM_OP_ACQUIRE), 0);
	KUNIT_EXPECT_EQ(test, spm_op(ctx, ctx->a, AMDGPU_SPM_OP_ACQUIRE), -EBUSY);
	KUNIT_EXPECT_EQ(test, spm_op(ctx, ctx->b, AMDGPU_SPM_OP_ACQUIRE), -EBUSY);
	KUNIT_EXPECT_TRUE(test, amdgpu_spm_xcc_owned(ctx->adev, 0));
	KUNIT_EXPECT_TRUE(test, amdgpu_spm_xcc_owned(ctx->adev, 1));
	KUNIT_EXPECT_EQ(test, fake->x[0].vmid, 0);
	KUNIT_EXPECT_EQ(test, fake->x[1].vmid, 0);
	KUNIT_EXPECT_EQ(test, fake->rings, 2);
	KUNIT_EXPECT_EQ(test, fake->irqs, 2);

	KUNIT_EXPECT_EQ(test, spm_op(ctx, ctx->b, AMDGPU_SPM_OP_RELEASE), -EBUSY);
	KUNIT_EXPECT_EQ(test, spm_op(ctx, ctx->a, AMDGPU_SPM_OP_RELEASE), 0);
	KUNIT_EXPECT_EQ(test, spm_op(ctx, ctx->a, AMDGPU_SPM_OP_RELEASE), -EINVAL);
	spm_expect_free(test, ctx, 2);
	KUNIT_EXPECT_EQ(test, fake->x[0].vmid, AMDGPU_SPM_VMID_NONE);

	KUNIT_EXPECT_EQ(test, spm_op(ctx, ctx->b, AMDGPU_SPM_OP_ACQUIRE), 0);
	KUNIT_EXPECT_EQ(test, spm_op(ctx, ctx->a, AMDGPU_SPM_OP_ACQUIRE), -EBUSY);
	KUNIT_EXPECT_EQ(test, spm_op(ctx, ctx->b, AMDGPU_SPM_OP_RELEASE), 0);
}

static void spm_no_backend(struct kunit *test)
{
	struct spm_ctx *ctx = spm_setup(test, 1);

	ctx->adev->spm.funcs = NULL;
	KUNIT_EXPECT_EQ(test, spm_op(ctx, ctx->a, AMDGPU_SPM_OP_ACQUIRE), -EOPNOTSUPP);
}

struct spm_fault {
	enum fake_hook hook;
	u32 xcc;
	const char *name;
};

static const struct spm_fault spm_faults[] = {
	{ HOOK_RING_ALLOC, 0, "ring_alloc xcc0" },
	{ HOOK_SET_VMID, 0, "set_vmid xcc0" },
	{ HOOK_SET_RING, 0, "set_ring xcc0" },
	{ HOOK_SET_RDPTR, 0, "set_rdptr xcc0" },
	{ HOOK_IRQ_GET, 0, "irq_get xcc0" },
	{ HOOK_RING_ALLOC, 1, "ring_alloc xcc1" },
	{ HOOK_SET_VMID, 1, "set_vmid xcc1" },
	{ HOOK_SET_RING, 1, "set_ring xcc1" },
	{ HOOK_SET_RDPTR, 1, "set_rdptr xcc1" },
	{ HOOK_IRQ_GET, 1, "irq_get xcc1" },
};

static void spm_fault_desc(const struct spm_fault *f, char *desc)
{
	strscpy(desc, f->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(spm_fault, spm_faults, spm_fault_desc);

/* A failure at any step of ACQUIRE unwinds it all and leaves the XCP free */
static void spm_acquire_unwinds(struct kunit *test)
{
	const struct spm_fault *f = test->param_value;
	struct spm_ctx *ctx = spm_setup(test, 2);

	fake->fail_hook = f->hook;
	fake->fail_xcc = f->xcc;
	KUNIT_EXPECT_LT(test, spm_op(ctx, ctx->a, AMDGPU_SPM_OP_ACQUIRE), 0);
	spm_expect_free(test, ctx, 2);
	KUNIT_EXPECT_FALSE(test, fake->routed_early);
	/* An XCC whose SPM_VMID was changed got it back */
	KUNIT_EXPECT_NE(test, fake->x[0].vmid, 0);
	KUNIT_EXPECT_NE(test, fake->x[1].vmid, 0);

	fake->fail_hook = HOOK_NONE;
	KUNIT_EXPECT_EQ(test, spm_op(ctx, ctx->b, AMDGPU_SPM_OP_ACQUIRE), 0);
	KUNIT_EXPECT_EQ(test, spm_op(ctx, ctx->b, AMDGPU_SPM_OP_RELEASE), 0);
}

/* Starting the RLC at the first buffer fails: nothing is left running */
static void spm_start_failure_unwinds(struct kunit *test)
{
	struct spm_ctx *ctx = spm_setup(test, 2);
	unsigned long buf = spm_user_buf(test, SZ_4K, MAP_PRIVATE | MAP_ANONYMOUS);

	KUNIT_ASSERT_EQ(test, spm_op(ctx, ctx->a, AMDGPU_SPM_OP_ACQUIRE), 0);
	fake->fail_hook = HOOK_START;
	fake->fail_xcc = 1;
	KUNIT_EXPECT_EQ(test, spm_set_buf(ctx, ctx->a, buf, SZ_4K, 0, NULL), -EIO);
	KUNIT_EXPECT_FALSE(test, fake->x[0].running);
	fake->fail_hook = HOOK_NONE;
	KUNIT_EXPECT_EQ(test, spm_set_buf(ctx, ctx->a, buf, SZ_4K, 0, NULL), 0);
	KUNIT_EXPECT_TRUE(test, fake->x[0].running);
	KUNIT_EXPECT_TRUE(test, fake->x[1].running);
	KUNIT_EXPECT_EQ(test, spm_op(ctx, ctx->a, AMDGPU_SPM_OP_RELEASE), 0);
	spm_expect_free(test, ctx, 2);
}

/* ---- 2. graphics coexistence ---- */

static void spm_gfx_reservation_excludes_profiler(struct kunit *test)
{
	struct spm_ctx *ctx = spm_setup(test, 2);

	KUNIT_ASSERT_EQ(test, amdgpu_spm_gfx_vmid_get(ctx->adev), 0);
	KUNIT_EXPECT_EQ(test, spm_op(ctx, ctx->a, AMDGPU_SPM_OP_ACQUIRE), -EBUSY);
	spm_expect_free(test, ctx, 2);
	amdgpu_spm_gfx_vmid_put(ctx->adev);

	KUNIT_ASSERT_EQ(test, spm_op(ctx, ctx->a, AMDGPU_SPM_OP_ACQUIRE), 0);
	KUNIT_EXPECT_EQ(test, amdgpu_spm_gfx_vmid_get(ctx->adev), -EBUSY);
	KUNIT_EXPECT_EQ(test, spm_op(ctx, ctx->a, AMDGPU_SPM_OP_RELEASE), 0);
	KUNIT_EXPECT_EQ(test, amdgpu_spm_gfx_vmid_get(ctx->adev), 0);
	amdgpu_spm_gfx_vmid_put(ctx->adev);
}

/* A partition without XCC 0 coexists with a graphics reservation */
static void spm_partitions_are_independent(struct kunit *test)
{
	struct spm_ctx *ctx = spm_setup(test, 4);
	struct amdgpu_xcp_mgr *xm;
	struct drm_file *p1;
	unsigned long buf;
	struct drm_amdgpu_spm_args out;
	struct drm_amdgpu_spm_buffer_header hdr;
	int i;

	xm = kunit_kzalloc(test, sizeof(*xm), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, xm);
	xm->adev = ctx->adev;
	xm->num_xcps = 2;
	for (i = 0; i < 2; i++) {
		xm->xcp[i].id = i;
		xm->xcp[i].valid = true;
		xm->xcp[i].ip[AMDGPU_XCP_GFX].valid = true;
		xm->xcp[i].ip[AMDGPU_XCP_GFX].inst_mask = 0x3 << (2 * i);
	}
	ctx->adev->xcp_mgr = xm;
	p1 = amdgpu_kunit_helper_alloc_file(test, ctx->adev, 1);

	KUNIT_ASSERT_EQ(test, amdgpu_spm_gfx_vmid_get(ctx->adev), 0);
	KUNIT_EXPECT_EQ(test, spm_op(ctx, ctx->a, AMDGPU_SPM_OP_ACQUIRE), -EBUSY);
	KUNIT_EXPECT_EQ(test, spm_op(ctx, p1, AMDGPU_SPM_OP_ACQUIRE), 0);
	KUNIT_EXPECT_FALSE(test, amdgpu_spm_xcc_owned(ctx->adev, 0));
	KUNIT_EXPECT_FALSE(test, amdgpu_spm_xcc_owned(ctx->adev, 1));
	KUNIT_EXPECT_TRUE(test, amdgpu_spm_xcc_owned(ctx->adev, 2));
	KUNIT_EXPECT_TRUE(test, amdgpu_spm_xcc_owned(ctx->adev, 3));
	KUNIT_EXPECT_EQ(test, fake->rings, 2);
	amdgpu_spm_gfx_vmid_put(ctx->adev);
	KUNIT_EXPECT_EQ(test, spm_op(ctx, ctx->a, AMDGPU_SPM_OP_ACQUIRE), 0);
	KUNIT_EXPECT_TRUE(test, amdgpu_spm_busy(ctx->adev));

	/* The shares of partition 1 belong to its XCCs 2 and 3 */
	buf = spm_user_buf(test, SZ_4K, MAP_PRIVATE | MAP_ANONYMOUS);
	KUNIT_ASSERT_EQ(test, spm_set_buf(ctx, p1, buf, SZ_4K, 0, NULL), 0);
	KUNIT_ASSERT_TRUE(test, fake_emit(3, 256));
	KUNIT_ASSERT_EQ(test, spm_set_buf(ctx, p1, 0, 0, 0, &out), 0);
	KUNIT_EXPECT_EQ(test, out.bytes_copied, 256);
	spm_read_header(test, buf, SZ_2K, &hdr);
	KUNIT_EXPECT_EQ(test, hdr.bytes_copied, 256);
	spm_expect_stream(test, buf, SZ_2K, 3, 0, 256);

	KUNIT_EXPECT_EQ(test, spm_op(ctx, p1, AMDGPU_SPM_OP_RELEASE), 0);
	KUNIT_EXPECT_EQ(test, spm_op(ctx, ctx->a, AMDGPU_SPM_OP_RELEASE), 0);
	KUNIT_EXPECT_FALSE(test, amdgpu_spm_busy(ctx->adev));
	ctx->adev->xcp_mgr = NULL;
}

/* ---- 3. SET_DEST_BUF input checks ---- */

enum bad_buf_kind { BAD_MISALIGNED, BAD_TOO_BIG, BAD_SHARE_SMALL, BAD_SIZE_NO_ADDR,
		    BAD_UNMAPPED, BAD_READ_ONLY, BAD_RESERVED, BAD_OUTPUT_SET,
		    BAD_NOT_OWNER, BAD_NOT_ACQUIRED };

struct bad_buf {
	enum bad_buf_kind kind;
	int err;
	const char *name;
};

static const struct bad_buf bad_bufs[] = {
	{ BAD_MISALIGNED, -EINVAL, "misaligned buffer" },
	{ BAD_TOO_BIG, -EINVAL, "buffer past the maximum size" },
	{ BAD_SHARE_SMALL, -EINVAL, "share smaller than header and one line" },
	{ BAD_SIZE_NO_ADDR, -EINVAL, "size without buffer" },
	{ BAD_UNMAPPED, -EFAULT, "unmapped buffer" },
	{ BAD_READ_ONLY, -EFAULT, "read-only buffer" },
	{ BAD_RESERVED, -EINVAL, "reserved word set" },
	{ BAD_OUTPUT_SET, -EINVAL, "output field set on input" },
	{ BAD_NOT_OWNER, -EBUSY, "not the owner" },
	{ BAD_NOT_ACQUIRED, -EINVAL, "nobody acquired" },
};

static void bad_buf_desc(const struct bad_buf *b, char *desc)
{
	strscpy(desc, b->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(bad_buf, bad_bufs, bad_buf_desc);

static void spm_set_dest_buf_rejects(struct kunit *test)
{
	const struct bad_buf *b = test->param_value;
	struct spm_ctx *ctx = spm_setup(test, 2);
	struct drm_amdgpu_spm_args args = {
		.op = AMDGPU_SPM_OP_SET_DEST_BUF,
		.buf_size = SZ_4K,
		.timeout = 7,
	}, in;
	struct drm_file *f = ctx->a;
	unsigned long buf = spm_user_buf(test, SZ_8K, MAP_PRIVATE | MAP_ANONYMOUS);

	args.dest_buf = buf;
	if (b->kind != BAD_NOT_ACQUIRED)
		KUNIT_ASSERT_EQ(test, spm_op(ctx, ctx->a, AMDGPU_SPM_OP_ACQUIRE), 0);

	switch (b->kind) {
	case BAD_MISALIGNED:
		args.dest_buf += 16;
		break;
	case BAD_TOO_BIG:
		args.buf_size = AMDGPU_SPM_MAX_BUF_SIZE + LINE;
		break;
	case BAD_SHARE_SMALL:
		/* two XCCs: 2 * (32 + 32) - 32 leaves one share too small */
		args.buf_size = 2 * (HDR + LINE) - LINE;
		break;
	case BAD_SIZE_NO_ADDR:
		args.dest_buf = 0;
		break;
	case BAD_UNMAPPED:
		args.dest_buf = buf + SZ_8K + SZ_1M;
		break;
	case BAD_READ_ONLY:
		args.dest_buf = spm_user_buf(test, SZ_4K, MAP_PRIVATE | MAP_ANONYMOUS);
		KUNIT_ASSERT_EQ(test, vm_munmap(args.dest_buf, SZ_4K), 0);
		KUNIT_ASSERT_EQ(test, vm_mmap(NULL, args.dest_buf, SZ_4K, PROT_READ,
					      MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, 0),
				args.dest_buf);
		break;
	case BAD_RESERVED:
		args.reserved[8] = 1;
		break;
	case BAD_OUTPUT_SET:
		args.has_data_loss = 1;
		break;
	case BAD_NOT_OWNER:
		f = ctx->b;
		break;
	case BAD_NOT_ACQUIRED:
		break;
	}
	in = args;
	KUNIT_EXPECT_EQ(test, amdgpu_spm_ioctl(ctx->adev, f, &args), b->err);
	/* On error every field keeps its input value */
	KUNIT_EXPECT_MEMEQ(test, &args, &in, sizeof(args));
	if (b->kind != BAD_NOT_ACQUIRED)
		KUNIT_EXPECT_EQ(test, spm_op(ctx, ctx->a, AMDGPU_SPM_OP_RELEASE), 0);
}

/* ---- 3/4. layout and data ---- */

/* Headers are written when the buffer is installed and when it is retired */
static void spm_headers_and_shares(struct kunit *test)
{
	struct spm_ctx *ctx = spm_setup(test, 3);
	u32 size = 3 * SZ_1K + 96, share = round_down(size / 3, LINE);
	unsigned long buf = spm_user_buf(test, SZ_4K, MAP_PRIVATE | MAP_ANONYMOUS);
	struct drm_amdgpu_spm_buffer_header hdr;
	struct drm_amdgpu_spm_args out;
	u32 i, amount[3] = { 64, 0, 320 };

	KUNIT_ASSERT_EQ(test, spm_op(ctx, ctx->a, AMDGPU_SPM_OP_ACQUIRE), 0);
	KUNIT_ASSERT_EQ(test, spm_set_buf(ctx, ctx->a, buf, size, 0, &out), 0);
	KUNIT_EXPECT_EQ(test, out.bytes_copied, 0);
	for (i = 0; i < 3; i++) {
		spm_read_header(test, buf, i * share, &hdr);
		KUNIT_EXPECT_EQ(test, hdr.version, AMDGPU_PROFILER_VERSION);
		KUNIT_EXPECT_EQ(test, hdr.bytes_copied, 0);
		KUNIT_EXPECT_EQ(test, hdr.has_data_loss, 0);
	}
	for (i = 0; i < 3; i++)
		if (amount[i])
			KUNIT_ASSERT_TRUE(test, fake_emit(i, amount[i]));

	KUNIT_ASSERT_EQ(test, spm_set_buf(ctx, ctx->a, 0, 0, 0, &out), 0);
	KUNIT_EXPECT_EQ(test, out.bytes_copied, 64 + 320);
	KUNIT_EXPECT_EQ(test, out.has_data_loss, 0);
	KUNIT_EXPECT_EQ(test, out.timeout, 0);
	for (i = 0; i < 3; i++) {
		KUNIT_EXPECT_TRUE(test, IS_ALIGNED(i * share, LINE));
		spm_read_header(test, buf, i * share, &hdr);
		KUNIT_EXPECT_EQ(test, hdr.version, AMDGPU_PROFILER_VERSION);
		KUNIT_EXPECT_EQ(test, hdr.bytes_copied, amount[i]);
		KUNIT_EXPECT_EQ(test, hdr.has_data_loss, 0);
		KUNIT_EXPECT_EQ(test, hdr.reserved[0], 0);
		spm_expect_stream(test, buf, i * share, i, 0, amount[i]);
	}
	KUNIT_EXPECT_EQ(test, spm_op(ctx, ctx->a, AMDGPU_SPM_OP_RELEASE), 0);
}

enum buf_kind { BUF_ANON, BUF_SHMEM, BUF_HUGETLB, BUF_PFNMAP };

static const char * const buf_kind_names[] = { "anonymous", "shmem", "hugetlb", "VM_PFNMAP" };
static const enum buf_kind buf_kinds[] = { BUF_ANON, BUF_SHMEM, BUF_HUGETLB, BUF_PFNMAP };

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

/* A buffer like a BO mapped through the render node: VM_PFNMAP, unpinnable */
static unsigned long spm_pfnmap_buf(struct kunit *test, u32 size)
{
	struct pfnmap_buf *pb;
	struct file *file;
	unsigned long addr;

	pb = kunit_kzalloc(test, sizeof(*pb), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, pb);
	pb->order = get_order(size);
	pb->pages = alloc_pages(GFP_KERNEL | __GFP_ZERO, pb->order);
	KUNIT_ASSERT_NOT_NULL(test, pb->pages);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, pfnmap_free, pb), 0);
	file = anon_inode_getfile("spm-test-pfnmap", &pfnmap_fops, pb, O_RDWR);
	KUNIT_ASSERT_FALSE(test, IS_ERR(file));
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, fput_action, file), 0);
	addr = kunit_vm_mmap(test, file, 0, size, PROT_READ | PROT_WRITE, MAP_SHARED, 0);
	KUNIT_ASSERT_FALSE(test, !addr || IS_ERR_VALUE(addr));
	return addr;
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
		return spm_user_buf(test, size, MAP_SHARED | MAP_ANONYMOUS);
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
	default:
		return spm_user_buf(test, size, MAP_PRIVATE | MAP_ANONYMOUS);
	}
}

static bool spm_wait_header(struct kunit *test, unsigned long buf, u32 off,
			    u32 bytes, unsigned int ms)
{
	struct drm_amdgpu_spm_buffer_header hdr;
	unsigned long end = jiffies + msecs_to_jiffies(ms);

	do {
		spm_read_header(test, buf, off, &hdr);
		if (hdr.bytes_copied >= bytes)
			return true;
		usleep_range(2000, 5000);
	} while (time_before(jiffies, end));
	return false;
}

/*
 * Data flows into the buffer while no thread is inside the ioctl, driven
 * by the interrupt, and arrives byte for byte, for every kind of buffer.
 */
static void spm_data_flows_without_ioctl(struct kunit *test)
{
	const enum buf_kind *k = test->param_value;
	struct spm_ctx *ctx = spm_setup(test, 2);
	u32 size = SZ_64K, share = size / 2, n;
	unsigned long buf = spm_buf_of_kind(test, *k, size);
	struct drm_amdgpu_spm_args out;

	amdgpu_spm_backstop_ms = 60000;
	KUNIT_ASSERT_EQ(test, spm_op(ctx, ctx->a, AMDGPU_SPM_OP_ACQUIRE), 0);
	KUNIT_ASSERT_EQ(test, spm_set_buf(ctx, ctx->a, buf, size, 0, NULL), 0);
	for (n = 0; n < 20; n++) {
		KUNIT_ASSERT_TRUE(test, fake_emit(0, 256));
		KUNIT_ASSERT_TRUE(test, fake_emit(1, 512));
	}
	KUNIT_EXPECT_TRUE(test, spm_wait_header(test, buf, 0, 20 * 256, 5000));
	KUNIT_EXPECT_TRUE(test, spm_wait_header(test, buf, share, 20 * 512, 5000));
	spm_expect_stream(test, buf, 0, 0, 0, 20 * 256);
	spm_expect_stream(test, buf, share, 1, 0, 20 * 512);

	KUNIT_ASSERT_EQ(test, spm_set_buf(ctx, ctx->a, 0, 0, 0, &out), 0);
	KUNIT_EXPECT_EQ(test, out.bytes_copied, 20 * (256 + 512));
	KUNIT_EXPECT_EQ(test, out.has_data_loss, 0);
	KUNIT_EXPECT_EQ(test, spm_op(ctx, ctx->a, AMDGPU_SPM_OP_RELEASE), 0);
}

/* Without interrupts the timer backstop still drains */
static void spm_backstop_drains_without_irq(struct kunit *test)
{
	struct spm_ctx *ctx = spm_setup(test, 1);
	unsigned long buf = spm_user_buf(test, SZ_8K, MAP_PRIVATE | MAP_ANONYMOUS);

	amdgpu_spm_backstop_ms = 10;
	fake->raise_irq = false;
	KUNIT_ASSERT_EQ(test, spm_op(ctx, ctx->a, AMDGPU_SPM_OP_ACQUIRE), 0);
	KUNIT_ASSERT_EQ(test, spm_set_buf(ctx, ctx->a, buf, SZ_8K, 0, NULL), 0);
	KUNIT_ASSERT_TRUE(test, fake_emit(0, 1024));
	KUNIT_EXPECT_TRUE(test, spm_wait_header(test, buf, 0, 1024, 5000));
	spm_expect_stream(test, buf, 0, 0, 0, 1024);
	KUNIT_EXPECT_EQ(test, spm_op(ctx, ctx->a, AMDGPU_SPM_OP_RELEASE), 0);
}

/* Pinned pages are charged to RLIMIT_MEMLOCK unless CAP_IPC_LOCK */
static void spm_pin_respects_memlock(struct kunit *test)
{
	struct spm_ctx *ctx = spm_setup(test, 1);
	unsigned long buf = spm_user_buf(test, SZ_64K, MAP_PRIVATE | MAP_ANONYMOUS);
	struct rlimit *rl = &current->signal->rlim[RLIMIT_MEMLOCK];
	struct rlimit saved = *rl;
	const struct cred *old;
	struct cred *cred;
	int r1, r2;
	s64 pinned;

	KUNIT_ASSERT_EQ(test, spm_op(ctx, ctx->a, AMDGPU_SPM_OP_ACQUIRE), 0);
	cred = prepare_creds();
	KUNIT_ASSERT_NOT_NULL(test, cred);
	cap_lower(cred->cap_effective, CAP_IPC_LOCK);
	old = override_creds(cred);

	task_lock(current->group_leader);
	rl->rlim_cur = SZ_16K;
	task_unlock(current->group_leader);
	pinned = atomic64_read(&current->mm->pinned_vm);
	r1 = spm_set_buf(ctx, ctx->a, buf, SZ_64K, 0, NULL);
	KUNIT_EXPECT_EQ(test, atomic64_read(&current->mm->pinned_vm), pinned);

	task_lock(current->group_leader);
	rl->rlim_cur = SZ_1M;
	task_unlock(current->group_leader);
	r2 = spm_set_buf(ctx, ctx->a, buf, SZ_64K, 0, NULL);
	KUNIT_EXPECT_EQ(test, atomic64_read(&current->mm->pinned_vm),
			pinned + SZ_64K / PAGE_SIZE);

	task_lock(current->group_leader);
	*rl = saved;
	task_unlock(current->group_leader);
	revert_creds(old);
	put_cred(cred);

	KUNIT_EXPECT_EQ(test, r1, -ENOMEM);
	KUNIT_EXPECT_EQ(test, r2, 0);
	KUNIT_EXPECT_EQ(test, spm_op(ctx, ctx->a, AMDGPU_SPM_OP_RELEASE), 0);
	/* Release unpinned and uncharged */
	KUNIT_EXPECT_EQ(test, atomic64_read(&current->mm->pinned_vm), pinned);
}

/* A cached pin is not reused once its range was unmapped and mapped again */
static void spm_pin_cache_follows_remap(struct kunit *test)
{
	struct spm_ctx *ctx = spm_setup(test, 1);
	unsigned long buf = spm_user_buf(test, SZ_8K, MAP_PRIVATE | MAP_ANONYMOUS);
	struct drm_amdgpu_spm_args out;

	KUNIT_ASSERT_EQ(test, spm_op(ctx, ctx->a, AMDGPU_SPM_OP_ACQUIRE), 0);
	KUNIT_ASSERT_EQ(test, spm_set_buf(ctx, ctx->a, buf, SZ_8K, 0, NULL), 0);
	KUNIT_ASSERT_EQ(test, spm_set_buf(ctx, ctx->a, 0, 0, 0, NULL), 0);

	/* Same address and size, different memory */
	KUNIT_ASSERT_EQ(test, vm_munmap(buf, SZ_8K), 0);
	KUNIT_ASSERT_EQ(test, vm_mmap(NULL, buf, SZ_8K, PROT_READ | PROT_WRITE,
				      MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, 0), buf);
	KUNIT_ASSERT_EQ(test, spm_set_buf(ctx, ctx->a, buf, SZ_8K, 0, NULL), 0);
	KUNIT_ASSERT_TRUE(test, fake_emit(0, 256));
	KUNIT_ASSERT_EQ(test, spm_set_buf(ctx, ctx->a, 0, 0, 0, &out), 0);
	KUNIT_EXPECT_EQ(test, out.bytes_copied, 256);
	/* The data is in the new mapping, not in the pages of the old one */
	spm_expect_stream(test, buf, 0, 0, 0, 256);
	KUNIT_EXPECT_EQ(test, spm_op(ctx, ctx->a, AMDGPU_SPM_OP_RELEASE), 0);
}

/* ---- 5. timeout ---- */

static void spm_timeout_expires_with_partial_data(struct kunit *test)
{
	struct spm_ctx *ctx = spm_setup(test, 1);
	unsigned long buf = spm_user_buf(test, SZ_8K, MAP_PRIVATE | MAP_ANONYMOUS);
	struct drm_amdgpu_spm_args out;
	unsigned long t0;

	KUNIT_ASSERT_EQ(test, spm_op(ctx, ctx->a, AMDGPU_SPM_OP_ACQUIRE), 0);
	KUNIT_ASSERT_EQ(test, spm_set_buf(ctx, ctx->a, buf, SZ_8K, 0, NULL), 0);
	KUNIT_ASSERT_TRUE(test, fake_emit(0, 96));
	/* The RLC stalls: the wait runs out and returns what there is */
	t0 = jiffies;
	KUNIT_EXPECT_EQ(test, spm_set_buf(ctx, ctx->a, 0, 0, 200, &out), 0);
	KUNIT_EXPECT_GE(test, jiffies_to_msecs(jiffies - t0), 200);
	KUNIT_EXPECT_EQ(test, out.timeout, 0);
	KUNIT_EXPECT_EQ(test, out.bytes_copied, 96);
	KUNIT_EXPECT_EQ(test, out.has_data_loss, 0);
	KUNIT_EXPECT_EQ(test, spm_op(ctx, ctx->a, AMDGPU_SPM_OP_RELEASE), 0);
}

static void spm_timeout_returns_time_left(struct kunit *test)
{
	struct spm_ctx *ctx = spm_setup(test, 1);
	unsigned long buf = spm_user_buf(test, SZ_4K, MAP_PRIVATE | MAP_ANONYMOUS);
	struct drm_amdgpu_spm_args out;

	KUNIT_ASSERT_EQ(test, spm_op(ctx, ctx->a, AMDGPU_SPM_OP_ACQUIRE), 0);
	KUNIT_ASSERT_EQ(test, spm_set_buf(ctx, ctx->a, buf, 256, 0, NULL), 0);
	/* Fill the share (256 - 32 = 224 bytes) */
	KUNIT_ASSERT_TRUE(test, fake_emit(0, 224));
	KUNIT_EXPECT_EQ(test, spm_set_buf(ctx, ctx->a, 0, 0, 5000, &out), 0);
	KUNIT_EXPECT_GT(test, out.timeout, 0);
	KUNIT_EXPECT_LE(test, out.timeout, 5000);
	KUNIT_EXPECT_EQ(test, out.bytes_copied, 224);
	KUNIT_EXPECT_EQ(test, out.has_data_loss, 0);
	KUNIT_EXPECT_EQ(test, spm_op(ctx, ctx->a, AMDGPU_SPM_OP_RELEASE), 0);
}

static void spm_timeout_zero_swaps_at_once(struct kunit *test)
{
	struct spm_ctx *ctx = spm_setup(test, 1);
	unsigned long b1 = spm_user_buf(test, SZ_4K, MAP_PRIVATE | MAP_ANONYMOUS);
	unsigned long b2 = spm_user_buf(test, SZ_4K, MAP_PRIVATE | MAP_ANONYMOUS);
	struct drm_amdgpu_spm_args out;

	KUNIT_ASSERT_EQ(test, spm_op(ctx, ctx->a, AMDGPU_SPM_OP_ACQUIRE), 0);
	KUNIT_ASSERT_EQ(test, spm_set_buf(ctx, ctx->a, b1, SZ_4K, 0, NULL), 0);
	KUNIT_ASSERT_TRUE(test, fake_emit(0, 64));
	KUNIT_ASSERT_EQ(test, spm_set_buf(ctx, ctx->a, b2, SZ_4K, 0, &out), 0);
	KUNIT_EXPECT_EQ(test, out.bytes_copied, 64);
	KUNIT_ASSERT_TRUE(test, fake_emit(0, 128));
	KUNIT_ASSERT_EQ(test, spm_set_buf(ctx, ctx->a, 0, 0, 0, &out), 0);
	KUNIT_EXPECT_EQ(test, out.bytes_copied, 128);
	spm_expect_stream(test, b1, 0, 0, 0, 64);
	spm_expect_stream(test, b2, 0, 0, 64, 128);
	KUNIT_EXPECT_EQ(test, spm_op(ctx, ctx->a, AMDGPU_SPM_OP_RELEASE), 0);
}

struct waiter {
	struct spm_ctx *ctx;
	u32 timeout;
	int ret;
	struct drm_amdgpu_spm_args out;
	struct completion started;
	struct completion done;
};

static int waiter_fn(void *data)
{
	struct waiter *w = data;

	allow_signal(SIGUSR1);
	complete(&w->started);
	w->ret = spm_set_buf(w->ctx, w->ctx->a, 0, 0, w->timeout, &w->out);
	flush_signals(current);
	complete(&w->done);
	while (!kthread_should_stop())
		schedule_timeout_interruptible(1);
	return 0;
}

/* A signal ends the wait with the time left written back; a restart resumes */
static void spm_timeout_signal_restart(struct kunit *test)
{
	struct spm_ctx *ctx = spm_setup(test, 1);
	unsigned long buf = spm_user_buf(test, SZ_4K, MAP_PRIVATE | MAP_ANONYMOUS);
	struct drm_amdgpu_spm_args out;
	struct task_struct *t;
	struct waiter w = { .ctx = ctx, .timeout = 2000 };
	unsigned long t0;

	init_completion(&w.started);
	init_completion(&w.done);
	KUNIT_ASSERT_EQ(test, spm_op(ctx, ctx->a, AMDGPU_SPM_OP_ACQUIRE), 0);
	KUNIT_ASSERT_EQ(test, spm_set_buf(ctx, ctx->a, buf, SZ_4K, 0, NULL), 0);
	KUNIT_ASSERT_TRUE(test, fake_emit(0, 32));

	t = kthread_run(waiter_fn, &w, "spm-waiter");
	KUNIT_ASSERT_FALSE(test, IS_ERR(t));
	wait_for_completion(&w.started);
	msleep(300);
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
	KUNIT_EXPECT_EQ(test, spm_set_buf(ctx, ctx->a, 0, 0, w.out.timeout, &out), 0);
	KUNIT_EXPECT_LE(test, jiffies_to_msecs(jiffies - t0), w.out.timeout + 1000);
	KUNIT_EXPECT_GE(test, jiffies_to_msecs(jiffies - t0), w.out.timeout);
	KUNIT_EXPECT_EQ(test, out.timeout, 0);
	KUNIT_EXPECT_EQ(test, out.bytes_copied, 32);
	KUNIT_EXPECT_EQ(test, spm_op(ctx, ctx->a, AMDGPU_SPM_OP_RELEASE), 0);
}

/* ---- 6. wrap, overrun and loss ---- */

static void spm_ring_wrap_in_order(struct kunit *test)
{
	struct spm_ctx *ctx = spm_setup(test, 1);
	u32 total = 3 * SZ_64K + 4096, size = total + HDR, done = 0;
	unsigned long buf = spm_user_buf(test, size, MAP_PRIVATE | MAP_ANONYMOUS);
	struct drm_amdgpu_spm_args out;

	KUNIT_ASSERT_EQ(test, spm_op(ctx, ctx->a, AMDGPU_SPM_OP_ACQUIRE), 0);
	KUNIT_ASSERT_EQ(test, spm_set_buf(ctx, ctx->a, buf, size, 0, NULL), 0);
	/* Samples of 96 bytes do not divide the ring: every lap splits one */
	while (done + 96 <= total) {
		if (!fake_emit(0, 96)) {
			/* Ring full: let the worker catch up, then retry */
			usleep_range(500, 1000);
			continue;
		}
		done += 96;
	}
	KUNIT_EXPECT_TRUE(test, spm_wait_header(test, buf, 0, done, 5000));
	KUNIT_ASSERT_EQ(test, spm_set_buf(ctx, ctx->a, 0, 0, 0, &out), 0);
	KUNIT_EXPECT_EQ(test, out.bytes_copied, done);
	spm_expect_stream(test, buf, 0, 0, 0, done);
	KUNIT_EXPECT_EQ(test, spm_op(ctx, ctx->a, AMDGPU_SPM_OP_RELEASE), 0);
}

/* Fill the ring to just below its end in 1 KiB samples, draining as it goes */
static void spm_fill_to_end(struct kunit *test, struct spm_ctx *ctx,
			    unsigned long buf, u32 data, u32 *done)
{
	while (*done + 1024 <= data - 512) {
		KUNIT_ASSERT_TRUE(test, fake_emit(0, 1024));
		*done += 1024;
		if (!(*done % SZ_8K)) {
			amdgpu_spm_irq(ctx->adev, 0);
			KUNIT_ASSERT_TRUE(test, spm_wait_header(test, buf, 0, *done, 5000));
		}
	}
	amdgpu_spm_irq(ctx->adev, 0);
	KUNIT_ASSERT_TRUE(test, spm_wait_header(test, buf, 0, *done, 5000));
}

/* Pre-GC 11.0.1: a sample runs past the ring end; seen in time, nothing is lost */
static void spm_overrun_seen(struct kunit *test)
{
	struct spm_ctx *ctx = spm_setup(test, 1);
	u32 data = SZ_64K - AMDGPU_SPM_RING_HDR_SIZE, done = 0, size = 2 * SZ_64K;
	unsigned long buf = spm_user_buf(test, size, MAP_PRIVATE | MAP_ANONYMOUS);
	struct drm_amdgpu_spm_args out;

	fake->guard = SZ_4K;
	fake_funcs.overrun_guard = SZ_4K;
	fake->raise_irq = false;
	amdgpu_spm_backstop_ms = 60000;
	KUNIT_ASSERT_EQ(test, spm_op(ctx, ctx->a, AMDGPU_SPM_OP_ACQUIRE), 0);
	KUNIT_ASSERT_EQ(test, spm_set_buf(ctx, ctx->a, buf, size, 0, NULL), 0);
	KUNIT_ASSERT_EQ(test, fake->x[0].alloc, SZ_64K + SZ_4K);

	/* Fill to just below the end, drain, then a sample crossing the end */
	spm_fill_to_end(test, ctx, buf, data, &done);
	KUNIT_ASSERT_TRUE(test, fake_emit(0, 1024));
	done += 1024;
	KUNIT_ASSERT_GT(test, fake->x[0].wptr, data);
	amdgpu_spm_irq(ctx->adev, 0);
	KUNIT_ASSERT_TRUE(test, spm_wait_header(test, buf, 0, done, 5000));
	/* The next sample starts at 0 */
	KUNIT_ASSERT_TRUE(test, fake_emit(0, 1024));
	done += 1024;
	KUNIT_ASSERT_EQ(test, fake->x[0].wptr, 1024);

	KUNIT_ASSERT_EQ(test, spm_set_buf(ctx, ctx->a, 0, 0, 0, &out), 0);
	KUNIT_EXPECT_EQ(test, out.bytes_copied, done);
	KUNIT_EXPECT_EQ(test, out.has_data_loss, 0);
	spm_expect_stream(test, buf, 0, 0, 0, done);
	KUNIT_EXPECT_EQ(test, spm_op(ctx, ctx->a, AMDGPU_SPM_OP_RELEASE), 0);
}

/*
 * Pre-GC 11.0.1: the lap that ran past the end finished while nobody
 * looked. Bytes up to the end are copied, the guard is never read (it holds
 * poison where the RLC did not write), and the share reports the loss.
 */
static void spm_overrun_unseen(struct kunit *test)
{
	struct spm_ctx *ctx = spm_setup(test, 1);
	u32 data = SZ_64K - AMDGPU_SPM_RING_HDR_SIZE, done = 0, size = 2 * SZ_64K;
	unsigned long buf = spm_user_buf(test, size, MAP_PRIVATE | MAP_ANONYMOUS);
	struct drm_amdgpu_spm_buffer_header hdr;
	struct drm_amdgpu_spm_args out;
	u8 *tmp;
	u32 i;

	fake->guard = SZ_4K;
	fake_funcs.overrun_guard = SZ_4K;
	fake->raise_irq = false;
	amdgpu_spm_backstop_ms = 60000;
	KUNIT_ASSERT_EQ(test, spm_op(ctx, ctx->a, AMDGPU_SPM_OP_ACQUIRE), 0);
	KUNIT_ASSERT_EQ(test, spm_set_buf(ctx, ctx->a, buf, size, 0, NULL), 0);

	spm_fill_to_end(test, ctx, buf, data, &done);
	/* Crosses the end, then wraps before the next drain */
	KUNIT_ASSERT_TRUE(test, fake_emit(0, 1024));
	KUNIT_ASSERT_TRUE(test, fake_emit(0, 1024));
	KUNIT_ASSERT_EQ(test, spm_set_buf(ctx, ctx->a, 0, 0, 0, &out), 0);

	KUNIT_EXPECT_NE(test, out.has_data_loss, 0);
	spm_read_header(test, buf, 0, &hdr);
	KUNIT_EXPECT_NE(test, hdr.has_data_loss, 0);
	/* The data area up to its end, then the sample after the wrap */
	KUNIT_EXPECT_EQ(test, out.bytes_copied, data + 1024);
	spm_expect_stream(test, buf, 0, 0, 0, data);
	tmp = kunit_kmalloc(test, out.bytes_copied, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, tmp);
	KUNIT_ASSERT_EQ(test, copy_from_user(tmp, (void __user *)(buf + HDR),
					     out.bytes_copied), 0);
	for (i = 0; i + 3 < out.bytes_copied; i++)
		if (tmp[i] == 0xa5 && tmp[i + 1] == 0xa5 && tmp[i + 2] == 0xa5 &&
		    tmp[i + 3] == 0xa5)
			break;
	KUNIT_EXPECT_EQ(test, i + 3, out.bytes_copied);
	spm_expect_stream(test, buf, data, 0, done + 1024, 1024);
	KUNIT_EXPECT_EQ(test, spm_op(ctx, ctx->a, AMDGPU_SPM_OP_RELEASE), 0);
}

/* Data into a full share sets has_data_loss for that XCC only */
static void spm_full_share_loss_is_per_xcc(struct kunit *test)
{
	struct spm_ctx *ctx = spm_setup(test, 2);
	unsigned long buf = spm_user_buf(test, SZ_4K, MAP_PRIVATE | MAP_ANONYMOUS);
	struct drm_amdgpu_spm_buffer_header hdr;
	struct drm_amdgpu_spm_args out;
	u32 size = 2 * 256;

	KUNIT_ASSERT_EQ(test, spm_op(ctx, ctx->a, AMDGPU_SPM_OP_ACQUIRE), 0);
	KUNIT_ASSERT_EQ(test, spm_set_buf(ctx, ctx->a, buf, size, 0, NULL), 0);
	KUNIT_ASSERT_TRUE(test, fake_emit(0, 512));
	KUNIT_ASSERT_TRUE(test, fake_emit(1, 64));
	KUNIT_ASSERT_EQ(test, spm_set_buf(ctx, ctx->a, 0, 0, 0, &out), 0);
	KUNIT_EXPECT_EQ(test, out.bytes_copied, 224 + 64);
	KUNIT_EXPECT_NE(test, out.has_data_loss, 0);
	spm_read_header(test, buf, 0, &hdr);
	KUNIT_EXPECT_EQ(test, hdr.bytes_copied, 224);
	KUNIT_EXPECT_NE(test, hdr.has_data_loss, 0);
	spm_read_header(test, buf, 256, &hdr);
	KUNIT_EXPECT_EQ(test, hdr.bytes_copied, 64);
	KUNIT_EXPECT_EQ(test, hdr.has_data_loss, 0);
	spm_expect_stream(test, buf, 0, 0, 0, 224);
	spm_expect_stream(test, buf, 256, 1, 0, 64);
	KUNIT_EXPECT_EQ(test, spm_op(ctx, ctx->a, AMDGPU_SPM_OP_RELEASE), 0);
}

/* dest_buf 0 stops copying; what arrives meanwhile is reported in the next share */
static void spm_no_buffer_loss_goes_to_next(struct kunit *test)
{
	struct spm_ctx *ctx = spm_setup(test, 2);
	unsigned long buf = spm_user_buf(test, SZ_4K, MAP_PRIVATE | MAP_ANONYMOUS);
	struct drm_amdgpu_spm_buffer_header hdr;
	struct drm_amdgpu_spm_args out;

	KUNIT_ASSERT_EQ(test, spm_op(ctx, ctx->a, AMDGPU_SPM_OP_ACQUIRE), 0);
	KUNIT_ASSERT_EQ(test, spm_set_buf(ctx, ctx->a, buf, SZ_4K, 0, NULL), 0);
	KUNIT_ASSERT_EQ(test, spm_set_buf(ctx, ctx->a, 0, 0, 0, NULL), 0);
	KUNIT_ASSERT_TRUE(test, fake_emit(1, 64));
	/* Let the worker consume it with no buffer installed */
	amdgpu_spm_irq(ctx->adev, 1);
	msleep(50);
	KUNIT_ASSERT_EQ(test, spm_set_buf(ctx, ctx->a, buf, SZ_4K, 0, NULL), 0);
	KUNIT_ASSERT_TRUE(test, fake_emit(0, 64));
	KUNIT_ASSERT_EQ(test, spm_set_buf(ctx, ctx->a, 0, 0, 0, &out), 0);
	KUNIT_EXPECT_EQ(test, out.bytes_copied, 64);
	KUNIT_EXPECT_NE(test, out.has_data_loss, 0);
	spm_read_header(test, buf, 0, &hdr);
	KUNIT_EXPECT_EQ(test, hdr.has_data_loss, 0);
	spm_read_header(test, buf, SZ_2K, &hdr);
	KUNIT_EXPECT_NE(test, hdr.has_data_loss, 0);
	KUNIT_EXPECT_EQ(test, hdr.bytes_copied, 0);
	KUNIT_EXPECT_EQ(test, spm_op(ctx, ctx->a, AMDGPU_SPM_OP_RELEASE), 0);
}

/* The RLC dropped samples on a full ring: that XCC's share reports it */
static void spm_ring_full_loss_is_per_xcc(struct kunit *test)
{
	struct spm_ctx *ctx = spm_setup(test, 2);
	unsigned long buf = spm_user_buf(test, SZ_256K, MAP_PRIVATE | MAP_ANONYMOUS);
	struct drm_amdgpu_spm_buffer_header hdr;
	struct drm_amdgpu_spm_args out;
	u32 n = 0;

	fake->raise_irq = false;
	amdgpu_spm_backstop_ms = 60000;
	KUNIT_ASSERT_EQ(test, spm_op(ctx, ctx->a, AMDGPU_SPM_OP_ACQUIRE), 0);
	KUNIT_ASSERT_EQ(test, spm_set_buf(ctx, ctx->a, buf, SZ_256K, 0, NULL), 0);
	while (fake_emit(1, 1024))
		n += 1024;
	KUNIT_EXPECT_GT(test, fake->x[1].dropped, 0);
	KUNIT_ASSERT_TRUE(test, fake_emit(0, 1024));
	KUNIT_ASSERT_EQ(test, spm_set_buf(ctx, ctx->a, 0, 0, 0, &out), 0);
	KUNIT_EXPECT_EQ(test, out.bytes_copied, n + 1024);
	spm_read_header(test, buf, 0, &hdr);
	KUNIT_EXPECT_EQ(test, hdr.has_data_loss, 0);
	spm_read_header(test, buf, SZ_128K, &hdr);
	KUNIT_EXPECT_NE(test, hdr.has_data_loss, 0);
	spm_expect_stream(test, buf, SZ_128K, 1, 0, n);
	KUNIT_EXPECT_EQ(test, spm_op(ctx, ctx->a, AMDGPU_SPM_OP_RELEASE), 0);
}

/* ---- 7. lifetime ---- */

static void spm_close_releases(struct kunit *test)
{
	struct spm_ctx *ctx = spm_setup(test, 2);
	unsigned long buf = spm_user_buf(test, SZ_64K, MAP_PRIVATE | MAP_ANONYMOUS);

	KUNIT_ASSERT_EQ(test, spm_op(ctx, ctx->a, AMDGPU_SPM_OP_ACQUIRE), 0);
	KUNIT_ASSERT_EQ(test, spm_set_buf(ctx, ctx->a, buf, SZ_64K, 0, NULL), 0);
	KUNIT_ASSERT_TRUE(test, fake_emit(0, 64));

	/* Another file, or another task closing this one, changes nothing */
	amdgpu_spm_file_flush(ctx->adev, ctx->b, current->files);
	amdgpu_spm_file_close(ctx->adev, ctx->b);
	amdgpu_spm_file_flush(ctx->adev, ctx->a, (fl_owner_t)ctx);
	KUNIT_EXPECT_TRUE(test, amdgpu_spm_busy(ctx->adev));

	/* The acquiring task closes it (KFD may still hold the file) */
	amdgpu_spm_file_flush(ctx->adev, ctx->a, current->files);
	spm_expect_free(test, ctx, 2);
	KUNIT_EXPECT_EQ(test, fake->x[0].vmid, AMDGPU_SPM_VMID_NONE);
	KUNIT_EXPECT_EQ(test, spm_op(ctx, ctx->b, AMDGPU_SPM_OP_ACQUIRE), 0);

	/* postclose is the backstop */
	amdgpu_spm_file_close(ctx->adev, ctx->b);
	spm_expect_free(test, ctx, 2);
}

/* close() of one dup() of the owner's fd keeps SPM; the last close ends it */
static void spm_close_dup_keeps_acquisition(struct kunit *test)
{
	struct spm_ctx *ctx = spm_setup(test, 1);
	struct file *file;
	int fd;

	if (!current->files)
		kunit_skip(test, "no files_struct");
	file = anon_inode_getfile("spm-test-drm", &pfnmap_fops, NULL, O_RDWR);
	KUNIT_ASSERT_FALSE(test, IS_ERR(file));
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, fput_action, file), 0);
	ctx->a->filp = file;
	KUNIT_ASSERT_EQ(test, spm_op(ctx, ctx->a, AMDGPU_SPM_OP_ACQUIRE), 0);

	/* Another descriptor of the same file stays open in this task */
	fd = get_unused_fd_flags(O_CLOEXEC);
	KUNIT_ASSERT_GE(test, fd, 0);
	fd_install(fd, get_file(file));
	amdgpu_spm_file_flush(ctx->adev, ctx->a, current->files);
	KUNIT_EXPECT_TRUE(test, amdgpu_spm_busy(ctx->adev));

	/* Closing it too, the last one, releases */
	KUNIT_EXPECT_EQ(test, close_fd(fd), 0);
	amdgpu_spm_file_flush(ctx->adev, ctx->a, current->files);
	spm_expect_free(test, ctx, 1);
}

struct vmid_acquirer {
	struct spm_ctx *ctx;
	struct completion done;
	int ret;
};

static int vmid_acquirer_fn(void *data)
{
	struct vmid_acquirer *a = data;

	a->ret = spm_op(a->ctx, a->ctx->a, AMDGPU_SPM_OP_ACQUIRE);
	complete(&a->done);
	while (!kthread_should_stop())
		schedule_timeout_interruptible(1);
	return 0;
}

/*
 * A writer of SPM_VMID on the job path that checked before ACQUIRE claimed
 * the XCC finishes before ACQUIRE programs the VMID; later writers see the
 * claim and keep off.
 */
static void spm_acquire_waits_for_vmid_writers(struct kunit *test)
{
	struct spm_ctx *ctx = spm_setup(test, 2);
	struct vmid_acquirer a = { .ctx = ctx };
	struct task_struct *t;
	unsigned int i;

	init_completion(&a.done);
	KUNIT_ASSERT_TRUE(test, amdgpu_spm_vmid_write_begin(ctx->adev, 1));
	t = kthread_run(vmid_acquirer_fn, &a, "spm-vmid-acq");
	if (IS_ERR(t)) {
		amdgpu_spm_vmid_write_end(ctx->adev, 1);
		KUNIT_FAIL(test, "kthread_run: %ld", PTR_ERR(t));
		return;
	}

	/* The claim is published at once ... */
	for (i = 0; i < 50 && !amdgpu_spm_xcc_owned(ctx->adev, 1); i++)
		msleep(20);
	KUNIT_EXPECT_TRUE(test, amdgpu_spm_xcc_owned(ctx->adev, 1));
	KUNIT_EXPECT_FALSE(test, amdgpu_spm_vmid_write_begin(ctx->adev, 1));
	/* ... but the VMID is left alone while the early writer runs */
	KUNIT_EXPECT_EQ(test, wait_for_completion_timeout(&a.done, msecs_to_jiffies(100)), 0);
	KUNIT_EXPECT_EQ(test, fake->x[1].vmid, AMDGPU_SPM_VMID_NONE);

	amdgpu_spm_vmid_write_end(ctx->adev, 1);
	KUNIT_EXPECT_NE(test, wait_for_completion_timeout(&a.done, 10 * HZ), 0);
	kthread_stop(t);
	KUNIT_EXPECT_EQ(test, a.ret, 0);
	KUNIT_EXPECT_EQ(test, fake->x[0].vmid, 0);
	KUNIT_EXPECT_EQ(test, fake->x[1].vmid, 0);
	KUNIT_EXPECT_FALSE(test, amdgpu_spm_vmid_write_begin(ctx->adev, 0));

	KUNIT_EXPECT_EQ(test, spm_op(ctx, ctx->a, AMDGPU_SPM_OP_RELEASE), 0);
	if (amdgpu_spm_vmid_write_begin(ctx->adev, 1))
		amdgpu_spm_vmid_write_end(ctx->adev, 1);
	else
		KUNIT_FAIL(test, "SPM_VMID still owned after release");
	spm_expect_free(test, ctx, 2);
}

static int release_waiter_fn(void *data)
{
	struct waiter *w = data;

	complete(&w->started);
	w->ret = spm_set_buf(w->ctx, w->ctx->a, 0, 0, w->timeout, &w->out);
	complete(&w->done);
	while (!kthread_should_stop())
		schedule_timeout_interruptible(1);
	return 0;
}

/* Close wakes a waiter inside SET_DEST_BUF and frees only after it left */
static void spm_close_wakes_waiters(struct kunit *test)
{
	struct spm_ctx *ctx = spm_setup(test, 1);
	unsigned long buf = spm_user_buf(test, SZ_4K, MAP_PRIVATE | MAP_ANONYMOUS);
	struct waiter w = { .ctx = ctx, .timeout = 60000 };
	struct task_struct *t;
	unsigned long t0;

	init_completion(&w.started);
	init_completion(&w.done);
	KUNIT_ASSERT_EQ(test, spm_op(ctx, ctx->a, AMDGPU_SPM_OP_ACQUIRE), 0);
	KUNIT_ASSERT_EQ(test, spm_set_buf(ctx, ctx->a, buf, SZ_4K, 0, NULL), 0);
	t = kthread_run(release_waiter_fn, &w, "spm-waiter");
	KUNIT_ASSERT_FALSE(test, IS_ERR(t));
	wait_for_completion(&w.started);
	msleep(100);
	t0 = jiffies;
	amdgpu_spm_file_close(ctx->adev, ctx->a);
	KUNIT_EXPECT_LT(test, jiffies_to_msecs(jiffies - t0), 10000);
	wait_for_completion(&w.done);
	kthread_stop(t);
	KUNIT_EXPECT_EQ(test, w.ret, -EINVAL);
	spm_expect_free(test, ctx, 1);
}

/* Suspend or reset stops sampling; resume restarts it and reports the gap */
static void spm_suspend_resume_reports_loss(struct kunit *test)
{
	struct spm_ctx *ctx = spm_setup(test, 2);
	unsigned long buf = spm_user_buf(test, SZ_8K, MAP_PRIVATE | MAP_ANONYMOUS);
	struct drm_amdgpu_spm_args out;

	KUNIT_ASSERT_EQ(test, spm_op(ctx, ctx->a, AMDGPU_SPM_OP_ACQUIRE), 0);
	KUNIT_ASSERT_EQ(test, spm_set_buf(ctx, ctx->a, buf, SZ_8K, 0, NULL), 0);
	KUNIT_ASSERT_TRUE(test, fake_emit(0, 64));
	amdgpu_spm_suspend(ctx->adev);
	KUNIT_EXPECT_FALSE(test, fake->x[0].running);
	/* RLC resume resets SPM_VMID */
	fake->x[0].vmid = AMDGPU_SPM_VMID_NONE;
	fake->x[1].vmid = AMDGPU_SPM_VMID_NONE;
	amdgpu_spm_resume(ctx->adev);
	KUNIT_EXPECT_TRUE(test, fake->x[0].running);
	KUNIT_EXPECT_EQ(test, fake->x[0].vmid, 0);
	KUNIT_EXPECT_EQ(test, fake->x[1].vmid, 0);
	KUNIT_ASSERT_TRUE(test, fake_emit(0, 64));
	KUNIT_ASSERT_EQ(test, spm_set_buf(ctx, ctx->a, 0, 0, 0, &out), 0);
	KUNIT_EXPECT_EQ(test, out.bytes_copied, 128);
	KUNIT_EXPECT_NE(test, out.has_data_loss, 0);
	spm_expect_stream(test, buf, 0, 0, 0, 128);
	KUNIT_EXPECT_EQ(test, spm_op(ctx, ctx->a, AMDGPU_SPM_OP_RELEASE), 0);
	spm_expect_free(test, ctx, 2);
}

/* ---- 8. privilege ---- */

static void spm_privilege(struct kunit *test)
{
	struct spm_ctx *ctx = spm_setup(test, 1);
	const struct cred *old;
	struct cred *cred;
	int r1, r2;

	cred = prepare_creds();
	KUNIT_ASSERT_NOT_NULL(test, cred);
	cap_lower(cred->cap_effective, CAP_PERFMON);
	cap_lower(cred->cap_effective, CAP_SYS_ADMIN);
	old = override_creds(cred);
	amdgpu_spm_paranoid = 1;
	r1 = spm_op(ctx, ctx->a, AMDGPU_SPM_OP_ACQUIRE);
	amdgpu_spm_paranoid = 0;
	r2 = spm_op(ctx, ctx->a, AMDGPU_SPM_OP_ACQUIRE);
	revert_creds(old);
	put_cred(cred);

	KUNIT_EXPECT_EQ(test, r1, -EPERM);
	KUNIT_EXPECT_EQ(test, r2, 0);
	KUNIT_EXPECT_EQ(test, spm_op(ctx, ctx->a, AMDGPU_SPM_OP_RELEASE), 0);

	/* With the default policy, a capable caller may acquire */
	amdgpu_spm_paranoid = 1;
	KUNIT_EXPECT_EQ(test, spm_op(ctx, ctx->a, AMDGPU_SPM_OP_ACQUIRE), 0);
	KUNIT_EXPECT_EQ(test, spm_op(ctx, ctx->a, AMDGPU_SPM_OP_RELEASE), 0);
}

/* ---- 9. concurrency ---- */

#define STRESS_THREADS	4
#define STRESS_ITERS	1500

struct stress {
	struct spm_ctx *ctx;
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

	kthread_use_mm(st->mm);
	for (i = 0; i < STRESS_ITERS; i++) {
		switch (get_random_u32_below(6)) {
		case 0:
			r = spm_op(st->ctx, f, AMDGPU_SPM_OP_ACQUIRE);
			break;
		case 1:
			r = spm_op(st->ctx, f, AMDGPU_SPM_OP_RELEASE);
			break;
		case 2:
			r = spm_set_buf(st->ctx, f, st->buf[th->id], SZ_8K,
					get_random_u32_below(2), NULL);
			break;
		case 3:
			r = spm_set_buf(st->ctx, f, 0, 0, 0, NULL);
			break;
		case 4:
			fake_emit(get_random_u32_below(2), 64);
			r = 0;
			break;
		default:
			amdgpu_spm_file_flush(st->ctx->adev, f, (fl_owner_t)st);
			if (!get_random_u32_below(8))
				amdgpu_spm_file_close(st->ctx->adev, f);
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
	struct spm_ctx *ctx = spm_setup(test, 2);
	struct stress_thread th[STRESS_THREADS];
	struct stress *st;
	unsigned int i;

	st = kunit_kzalloc(test, sizeof(*st), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, st);
	st->ctx = ctx;
	st->files[0] = ctx->a;
	st->files[1] = ctx->b;
	for (i = 0; i < STRESS_THREADS; i++)
		st->buf[i] = spm_user_buf(test, SZ_8K, i & 1 ? MAP_SHARED | MAP_ANONYMOUS :
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
	amdgpu_spm_file_close(ctx->adev, ctx->a);
	amdgpu_spm_file_close(ctx->adev, ctx->b);
	spm_expect_free(test, ctx, 2);
}

/* ---- benchmark: printed numbers, no timed assertions ---- */

/* The RLC writes @len bytes of filler: fast, for throughput runs */
static bool fake_emit_fill(u32 xcc, u32 len)
{
	struct fake_xcc *x = &fake->x[xcc];
	u32 data, w, free, n;

	spin_lock(&fake->lock);
	data = x->size - AMDGPU_SPM_RING_HDR_SIZE;
	w = x->wptr >= data ? 0 : x->wptr;
	free = x->rdptr > w ? x->rdptr - w - LINE : data - w + x->rdptr - LINE;
	if (!x->running || free < len) {
		spin_unlock(&fake->lock);
		return false;
	}
	n = min(len, data - w);
	memset(x->cpu + AMDGPU_SPM_RING_HDR_SIZE + w, 0x5a, n);
	memset(x->cpu + AMDGPU_SPM_RING_HDR_SIZE, 0x5a, len - n);
	w = (w + len) % data;
	x->wptr = w;
	/* Data before the write pointer */
	wmb();
	WRITE_ONCE(*(u32 *)x->cpu, w);
	spin_unlock(&fake->lock);
	return true;
}

static void spm_bench_drain_vs_memcpy(struct kunit *test)
{
	struct spm_ctx *ctx = spm_setup(test, 1);
	u32 ring = SZ_4M, chunk = SZ_64K, fill = ring - SZ_1M, rounds = 8, i, n;
	unsigned long buf[2];
	u64 t_drain = 0, t_copy = 0, bytes = 0, t0;
	void *dst;

	amdgpu_spm_ring_size = ring;
	amdgpu_spm_backstop_ms = 60000;
	fake->raise_irq = false;
	buf[0] = spm_user_buf(test, fill + HDR, MAP_PRIVATE | MAP_ANONYMOUS);
	buf[1] = spm_user_buf(test, fill + HDR, MAP_PRIVATE | MAP_ANONYMOUS);
	dst = kunit_kmalloc(test, fill, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, dst);
	KUNIT_ASSERT_EQ(test, spm_op(ctx, ctx->a, AMDGPU_SPM_OP_ACQUIRE), 0);
	/* Pin both buffers once: a profiler rotates the same buffers */
	KUNIT_ASSERT_EQ(test, spm_set_buf(ctx, ctx->a, buf[1], fill + HDR, 0, NULL), 0);
	KUNIT_ASSERT_EQ(test, spm_set_buf(ctx, ctx->a, buf[0], fill + HDR, 0, NULL), 0);
	/* Warm the baseline's destination as the drain's is, by pinning */
	memcpy(dst, fake->x[0].cpu + AMDGPU_SPM_RING_HDR_SIZE, fill);

	for (i = 0; i < rounds; i++) {
		struct drm_amdgpu_spm_args out;

		for (n = 0; n < fill; n += chunk)
			KUNIT_ASSERT_TRUE(test, fake_emit_fill(0, chunk));
		t0 = ktime_get_ns();
		KUNIT_ASSERT_EQ(test, spm_set_buf(ctx, ctx->a, buf[(i + 1) & 1],
						  fill + HDR, 0, &out), 0);
		t_drain += ktime_get_ns() - t0;
		bytes += out.bytes_copied;

		t0 = ktime_get_ns();
		memcpy(dst, fake->x[0].cpu + AMDGPU_SPM_RING_HDR_SIZE, fill);
		t_copy += ktime_get_ns() - t0;
	}
	KUNIT_EXPECT_EQ(test, bytes, (u64)rounds * fill);
	kunit_info(test, "drain: %llu bytes in %llu us, memcpy: %llu us, throughput ratio drain/memcpy = %llu.%02llu\n",
		   bytes, t_drain / 1000, t_copy / 1000,
		   t_copy / max(t_drain, 1ULL),
		   (t_copy * 100 / max(t_drain, 1ULL)) % 100);
	KUNIT_EXPECT_EQ(test, spm_op(ctx, ctx->a, AMDGPU_SPM_OP_RELEASE), 0);
}

static void spm_bench_wakeups(struct kunit *test)
{
	struct spm_ctx *ctx = spm_setup(test, 1);
	u32 size = SZ_8M, sample = SZ_4K, total = SZ_4M, n = 0;
	unsigned long buf = spm_user_buf(test, size, MAP_PRIVATE | MAP_ANONYMOUS);
	u64 w0, w1, d0, d1;

	amdgpu_spm_ring_size = SZ_1M;
	KUNIT_ASSERT_EQ(test, spm_op(ctx, ctx->a, AMDGPU_SPM_OP_ACQUIRE), 0);
	KUNIT_ASSERT_EQ(test, spm_set_buf(ctx, ctx->a, buf, size, 0, NULL), 0);

	/* Streaming: an interrupt for every 4 KiB sample */
	KUNIT_ASSERT_EQ(test, amdgpu_spm_test_stats(ctx->adev, 0, &w0, &d0), 0);
	while (n < total) {
		if (!fake_emit_fill(0, sample)) {
			usleep_range(100, 200);
			continue;
		}
		amdgpu_spm_irq(ctx->adev, 0);
		n += sample;
	}
	KUNIT_EXPECT_TRUE(test, spm_wait_header(test, buf, 0, total, 10000));
	KUNIT_ASSERT_EQ(test, amdgpu_spm_test_stats(ctx->adev, 0, &w1, &d1), 0);
	kunit_info(test, "streaming: %llu worker wake-ups for %llu KiB = %llu per MiB (one interrupt per 4 KiB)\n",
		   w1 - w0, (d1 - d0) >> 10, (w1 - w0) * SZ_1M / max(d1 - d0, 1ULL));

	/* Idle: acquired, buffer installed, no data */
	KUNIT_ASSERT_EQ(test, amdgpu_spm_test_stats(ctx->adev, 0, &w0, &d0), 0);
	msleep(2000);
	KUNIT_ASSERT_EQ(test, amdgpu_spm_test_stats(ctx->adev, 0, &w1, &d1), 0);
	kunit_info(test, "idle: %llu wake-ups in 2 s = %llu.%llu per second (backstop %u ms; a 1-11 us poll is 90000-1000000 per second)\n",
		   w1 - w0, (w1 - w0) / 2, (w1 - w0) % 2 ? 5ULL : 0ULL,
		   amdgpu_spm_backstop_ms);
	KUNIT_EXPECT_LE(test, w1 - w0, 2 * 1000 / amdgpu_spm_backstop_ms + 2);
	KUNIT_EXPECT_EQ(test, spm_op(ctx, ctx->a, AMDGPU_SPM_OP_RELEASE), 0);
}

static struct kunit_case amdgpu_spm_bench_cases[] = {
	KUNIT_CASE_SLOW(spm_bench_drain_vs_memcpy),
	KUNIT_CASE_SLOW(spm_bench_wakeups),
	{}
};

static struct kunit_suite amdgpu_spm_bench_suite = {
	.name = "amdgpu_spm_bench",
	.test_cases = amdgpu_spm_bench_cases,
};

static struct kunit_case amdgpu_spm_cases[] = {
	KUNIT_CASE(spm_acquire_first_wins),
	KUNIT_CASE(spm_no_backend),
	KUNIT_CASE_PARAM(spm_acquire_unwinds, spm_fault_gen_params),
	KUNIT_CASE(spm_start_failure_unwinds),
	KUNIT_CASE(spm_gfx_reservation_excludes_profiler),
	KUNIT_CASE(spm_acquire_waits_for_vmid_writers),
	KUNIT_CASE(spm_partitions_are_independent),
	KUNIT_CASE_PARAM(spm_set_dest_buf_rejects, bad_buf_gen_params),
	KUNIT_CASE(spm_headers_and_shares),
	KUNIT_CASE_PARAM(spm_data_flows_without_ioctl, buf_kind_gen_params),
	KUNIT_CASE(spm_backstop_drains_without_irq),
	KUNIT_CASE(spm_pin_respects_memlock),
	KUNIT_CASE(spm_pin_cache_follows_remap),
	KUNIT_CASE(spm_timeout_expires_with_partial_data),
	KUNIT_CASE(spm_timeout_returns_time_left),
	KUNIT_CASE(spm_timeout_zero_swaps_at_once),
	KUNIT_CASE_SLOW(spm_timeout_signal_restart),
	KUNIT_CASE(spm_ring_wrap_in_order),
	KUNIT_CASE(spm_overrun_seen),
	KUNIT_CASE(spm_overrun_unseen),
	KUNIT_CASE(spm_full_share_loss_is_per_xcc),
	KUNIT_CASE(spm_no_buffer_loss_goes_to_next),
	KUNIT_CASE(spm_ring_full_loss_is_per_xcc),
	KUNIT_CASE(spm_close_releases),
	KUNIT_CASE(spm_close_dup_keeps_acquisition),
	KUNIT_CASE(spm_close_wakes_waiters),
	KUNIT_CASE(spm_suspend_resume_reports_loss),
	KUNIT_CASE(spm_privilege),
	KUNIT_CASE_SLOW(spm_concurrency_stress),
	{}
};

static struct kunit_suite amdgpu_spm_suite = {
	.name = "amdgpu_spm",
	.test_cases = amdgpu_spm_cases,
};

kunit_test_suites(&amdgpu_spm_suite, &amdgpu_spm_bench_suite);
