// SPDX-License-Identifier: MIT
/*
 * Copyright 2026 The amdgpu profiler series authors
 *
 * KUnit tests of the SPM VMID (amdgpu_spm_vmid.c) through the real SPM
 * hooks of gfx_v9_0.c and gfx_v9_4_3.c, on the RLC model, which sends every
 * sample through the GFXHUB context that SPM_VMID selects and the page
 * table that context points at (amdgpu_spm_model.c says how, and from
 * what): only the rings are reachable, SPM_VMID is never 0, an XCC is
 * parked on an empty table whenever it is not acquired, release makes the
 * rings unreachable before it frees them, and neither amdgpu_ids nor KFD
 * can hand the VMID out.
 */

#include <kunit/test.h>

#include <linux/completion.h>
#include <linux/delay.h>
#include <linux/kthread.h>
#include <linux/mman.h>

#include <drm/amdgpu_drm.h>

#include "amdgpu.h"
#include "amdgpu_ids.h"
#include "amdgpu_reset.h"
#include "amdgpu_spm.h"
#include "tests/amdgpu_kunit_helpers.h"
#include "tests/amdgpu_spm_model.h"

#define LINE	AMDGPU_SPM_LINE_SIZE
#define SAMPLE	(8 * LINE)
#define PAGE	AMDGPU_GPU_PAGE_SIZE
/*
 * RLC_SPM_MC_CNTL's fields besides the VMID, as the VBIOS or an earlier
 * owner may leave them: RLC_SPM_MTYPE 2, RLC_SPM_MTYPE_OVER and
 * RLC_SPM_POLICY set, RLC_SPM_PERF_CNTR and RLC_SPM_FED clear, so that a
 * driver write that sets or clears any of them shows
 */
#define MC_OTHER	0x290
/* Pages of the largest table: 8 rings of 256 MiB and their guards */
#define MAX_TABLE_PAGES	((SZ_256M / PAGE + 32) * AMDGPU_SPM_MAX_XCC)

struct vmid_part {
	const struct spm_model_layout *l;
	unsigned int nxcc;
	const char *name;
	/* as on GC 9.4.1 instead: 1 without retry faults, 2 with */
	int gc941;
	/* GC 9.4.3 under the other reading of its reset values */
	bool reset_set;
};

/*
 * GC 9.4.1 (MI100, both settings of amdgpu.noretry) and 9.4.2 (MI200)
 * through gfx_v9_0.c; GC 9.4.3 (MI300) in its XCC counts
 */
static const struct vmid_part vmid_parts[] = {
	{ &spm_layout_gfx_v9_0, 1, "gfx_v9_0 GC 9.4.1 1 XCC", 1 },
	{ &spm_layout_gfx_v9_0, 1, "gfx_v9_0 GC 9.4.1 noretry=0 1 XCC", 2 },
	{ &spm_layout_gfx_v9_0, 1, "gfx_v9_0 1 XCC" },
	{ &spm_layout_gfx_v9_4_3, 1, "gfx_v9_4_3 1 XCC" },
	{ &spm_layout_gfx_v9_4_3, 2, "gfx_v9_4_3 2 XCC" },
	{ &spm_layout_gfx_v9_4_3, 4, "gfx_v9_4_3 4 XCC" },
	{ &spm_layout_gfx_v9_4_3, 8, "gfx_v9_4_3 8 XCC" },
	{ &spm_layout_gfx_v9_4_3, 8, "gfx_v9_4_3 8 XCC, reset values set", 0, true },
};

static void vmid_part_desc(const struct vmid_part *p, char *desc)
{
	strscpy(desc, p->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(vmid_part, vmid_parts, vmid_part_desc);

static const struct vmid_part *part(struct kunit *test)
{
	return test->param_value;
}

static struct spm_env *vmid_env(struct kunit *test)
{
	const struct vmid_part *p = part(test);
	const struct spm_model_layout *l = p->l;
	struct spm_env *e;

	if (p->gc941)
		l = spm_model_layout_gc941(test, p->gc941 == 2);
	if (p->reset_set)
		l = spm_model_layout_gc943_reset_set(test);
	e = spm_env_create(test, l, p->nxcc, SZ_64K);
	spm_model_seed_mc_cntl(e->m, MC_OTHER);
	return e;
}

/* The whole of RLC_SPM_MC_CNTL when SPM_VMID is the SPM VMID */
static u32 mc_cntl_want(struct spm_env *e)
{
	const struct spm_model_layout *l = e->m->l;

	return (l->mc_cntl_default & ~(l->vmid_mask | l->mc_fields_mask)) |
	       e->m->mc_seed | SPM_MODEL_VMID;
}

static u32 reg(struct spm_env *e, u32 xcc, enum spm_model_reg r)
{
	return spm_model_read(e->m, xcc, r);
}

static u32 spm_vmid_of(struct spm_env *e, u32 xcc)
{
	return reg(e, xcc, SPM_R_MC_CNTL) & e->m->l->vmid_mask;
}

static u64 ring_base(struct spm_env *e, u32 xcc)
{
	return spm_model_ring_base(e->m, xcc);
}

static u64 ctx64(struct spm_env *e, u32 xcc, enum spm_model_reg lo)
{
	return (u64)spm_model_ctx_read(e->m, xcc, SPM_MODEL_VMID, lo + 1) << 32 |
	       spm_model_ctx_read(e->m, xcc, SPM_MODEL_VMID, lo);
}

/* The live ring slot of the model whose pages hold @dma, or -1 */
static int ring_of_dma(struct spm_env *e, u64 dma)
{
	int i = spm_model_ring_of_dma(e->m, dma);

	return i >= 0 && e->m->rings[i].live ? i : -1;
}

/* The context of the SPM VMID on @xcc is one the RLC can use safely */
static void expect_context(struct kunit *test, struct spm_env *e, u32 xcc)
{
	const struct spm_model_layout *l = e->m->l;
	u32 cntl = spm_model_ctx_read(e->m, xcc, SPM_MODEL_VMID, SPM_R_VM_CNTL);

	KUNIT_EXPECT_EQ_MSG(test, spm_vmid_of(e, xcc), SPM_MODEL_VMID, "xcc %u", xcc);
	KUNIT_EXPECT_TRUE_MSG(test, cntl & l->vm_enable_mask, "xcc %u", xcc);
	KUNIT_EXPECT_EQ_MSG(test, cntl & (l->vm_depth_mask | l->vm_block_mask), 0,
			    "xcc %u: a flat table", xcc);
	KUNIT_EXPECT_EQ_MSG(test, cntl & l->vm_retry_mask, 0,
			    "xcc %u: faults are not retried", xcc);
}

/* Nothing of the SPM VMID's context on @xcc translates */
static void expect_parked(struct kunit *test, struct spm_env *e, u32 xcc)
{
	u64 start = ctx64(e, xcc, SPM_R_VM_START_LO);
	u64 end = ctx64(e, xcc, SPM_R_VM_END_LO);
	u64 page, dma;

	expect_context(test, e, xcc);
	KUNIT_ASSERT_LE(test, start, end);
	/* No more than a partition's rings could need */
	KUNIT_ASSERT_LE(test, end - start, MAX_TABLE_PAGES);
	for (page = start; page <= end; page++)
		KUNIT_ASSERT_EQ_MSG(test, spm_model_translate(e->m, xcc, SPM_MODEL_VMID,
							      page * PAGE, &dma),
				    SPM_MODEL_XL_FAULT, "xcc %u page %llu", xcc, page);
}

/* A profiler's stream points the RLC of @xcc at @base and samples */
static u32 user_stream_emit(struct spm_env *e, u32 xcc, u64 base)
{
	spm_model_write(e->m, xcc, SPM_R_BASE_LO, lower_32_bits(base));
	spm_model_write(e->m, xcc, SPM_R_BASE_HI, upper_32_bits(base));
	spm_model_write(e->m, xcc, SPM_R_SIZE, SZ_64K);
	spm_model_profiler_start(e->m, xcc, SAMPLE);
	return spm_model_emit(e->m, xcc, 4 * SAMPLE);
}

/*
 * Through SPM_VMID each XCC reaches exactly the partition's rings, each
 * ring base page for page at the ring's DMA addresses, and no other page:
 * not outside the context's range, not the page after a ring.
 */
static void expect_only_rings(struct kunit *test, struct spm_env *e)
{
	unsigned int n = part(test)->nxcc, i, j;
	int slot[AMDGPU_SPM_MAX_XCC];
	u64 ring_pages = 0;

	for (j = 0; j < n; j++) {
		u64 dma;

		KUNIT_ASSERT_EQ(test, spm_model_translate(e->m, 0, SPM_MODEL_VMID,
							  ring_base(e, j), &dma), 0);
		slot[j] = ring_of_dma(e, dma);
		KUNIT_ASSERT_GE(test, slot[j], 0);
		/* The base is the ring's first page */
		KUNIT_EXPECT_EQ(test, dma, e->m->rings[slot[j]].dma);
		ring_pages += e->m->rings[slot[j]].size / PAGE;
		for (i = 0; i < j; i++)
			KUNIT_EXPECT_NE(test, slot[i], slot[j]);
	}
	for (i = 0; i < n; i++) {
		u64 start = ctx64(e, i, SPM_R_VM_START_LO);
		u64 end = ctx64(e, i, SPM_R_VM_END_LO);
		u64 page, dma, mapped = 0;

		expect_context(test, e, i);
		KUNIT_ASSERT_LE(test, start, end);
		KUNIT_ASSERT_LE(test, end - start, MAX_TABLE_PAGES);
		for (j = 0; j < n; j++) {
			const struct spm_model_ring *r = &e->m->rings[slot[j]];
			u64 k;

			for (k = 0; k < r->size / PAGE; k++) {
				u64 va = ring_base(e, j) + k * PAGE;

				KUNIT_ASSERT_EQ(test, spm_model_translate(e->m, i, SPM_MODEL_VMID,
									  va, &dma), 0);
				KUNIT_EXPECT_EQ(test, dma, r->dma + k * PAGE);
			}
			/* The page after a ring faults */
			KUNIT_EXPECT_EQ(test, spm_model_translate(e->m, i, SPM_MODEL_VMID,
								  ring_base(e, j) + r->size,
								  &dma), SPM_MODEL_XL_FAULT);
		}
		/* Every page that translates is a ring page */
		for (page = start; page <= end; page++) {
			if (spm_model_translate(e->m, i, SPM_MODEL_VMID, page * PAGE, &dma))
				continue;
			KUNIT_EXPECT_GE(test, ring_of_dma(e, dma), 0);
			mapped++;
		}
		KUNIT_EXPECT_EQ_MSG(test, mapped, ring_pages, "xcc %u", i);
		KUNIT_EXPECT_EQ(test, spm_model_translate(e->m, i, SPM_MODEL_VMID,
							  (start - 1) * PAGE, &dma),
				SPM_MODEL_XL_FAULT);
		KUNIT_EXPECT_EQ(test, spm_model_translate(e->m, i, SPM_MODEL_VMID,
							  (end + 1) * PAGE, &dma),
				SPM_MODEL_XL_FAULT);
		/* Through VMID 0, the GART, nothing is programmed at all */
		KUNIT_EXPECT_EQ(test, e->m->x[i].vmid0, 0);
	}
}

/* ACQUIRE maps the rings and nothing else */
static void spm_vmid_only_rings_translate(struct kunit *test)
{
	struct spm_env *e = vmid_env(test);

	KUNIT_ASSERT_EQ(test, spm_env_op(e, e->a, AMDGPU_SPM_OP_ACQUIRE), 0);
	expect_only_rings(test, e);
	KUNIT_EXPECT_EQ(test, spm_env_op(e, e->a, AMDGPU_SPM_OP_RELEASE), 0);
}

/*
 * SPM_VMID of every XCC is the SPM VMID, and nothing else was written:
 * the whole register, whose other fields keep what they held
 */
static void expect_vmid_kept(struct kunit *test, struct spm_env *e,
			     const char *step)
{
	unsigned int i, k;

	KUNIT_EXPECT_NE(test, e->m->mc_seed, 0);
	for (i = 0; i < part(test)->nxcc; i++) {
		KUNIT_EXPECT_EQ_MSG(test, reg(e, i, SPM_R_MC_CNTL), mc_cntl_want(e),
				    "%s, xcc %u", step, i);
		KUNIT_EXPECT_EQ_MSG(test, e->m->x[i].vmid0, 0, "%s, xcc %u", step, i);
	}
	for (k = 0; k < e->m->nlog; k++)
		if (e->m->log[k].reg == SPM_R_MC_CNTL)
			KUNIT_EXPECT_EQ_MSG(test, e->m->log[k].val, mc_cntl_want(e),
					    "%s: write %u", step, k);
	KUNIT_EXPECT_EQ_MSG(test, e->m->mc_clobbers, 0, "%s", step);
	e->m->nlog = 0;
}

static void stream_some(struct kunit *test, struct spm_env *e)
{
	unsigned int i;

	for (i = 0; i < part(test)->nxcc; i++) {
		spm_model_profiler_start(e->m, i, SAMPLE);
		spm_model_emit(e->m, i, 4 * SAMPLE);
	}
	KUNIT_EXPECT_TRUE(test, spm_env_wait_passes(test, e, 0, 2, AMDGPU_KUNIT_WAIT_MS));
}

/* The worker programmed every XCC again after a reset or resume */
static void wait_reprogrammed(struct kunit *test, struct spm_env *e, u64 *bases)
{
	unsigned long end = jiffies + msecs_to_jiffies(AMDGPU_KUNIT_WAIT_MS);
	unsigned int i;

	do {
		for (i = 0; i < part(test)->nxcc; i++)
			if (ring_base(e, i) != bases[i])
				break;
		if (i == part(test)->nxcc)
			return;
		usleep_range(5000, 6000);
	} while (time_before(jiffies, end));
	KUNIT_FAIL(test, "SPM not programmed again");
}

/*
 * SPM_VMID is never 0 (and never anything but the SPM VMID) after any step
 * the driver takes: ACQUIRE, SET_DEST_BUF, streaming, GPU reset, resume,
 * queue reset, RELEASE, release after unplug; and no sample is ever
 * attempted through VMID 0.
 */
static void spm_vmid_never_0(struct kunit *test)
{
	struct spm_env *e = vmid_env(test);
	struct amdgpu_device *adev = e->adev;
	unsigned int n = part(test)->nxcc, i;
	unsigned long buf = spm_env_user_buf(test, n * SZ_64K, MAP_PRIVATE | MAP_ANONYMOUS);
	u64 bases[AMDGPU_SPM_MAX_XCC];

	expect_vmid_kept(test, e, "driver load");
	KUNIT_ASSERT_EQ(test, spm_env_op(e, e->a, AMDGPU_SPM_OP_ACQUIRE), 0);
	expect_vmid_kept(test, e, "ACQUIRE");
	for (i = 0; i < n; i++)
		bases[i] = ring_base(e, i);
	KUNIT_ASSERT_EQ(test, spm_env_set_buf(e, e->a, buf, n * SZ_64K, 0, NULL), 0);
	stream_some(test, e);
	expect_vmid_kept(test, e, "SET_DEST_BUF, streaming");

	/*
	 * GPU reset that lost VRAM: registers at reset values, gfxhub's
	 * contexts, the page tables garbage, RLC resume
	 */
	down_write(&adev->reset_domain->sem);
	spm_model_reset(e->m);
	spm_model_lose_vram(e->m);
	atomic_inc(&adev->gpu_reset_counter);
	KUNIT_ASSERT_EQ(test, adev->gfx.rlc.funcs->resume(adev), 0);
	up_write(&adev->reset_domain->sem);
	wait_reprogrammed(test, e, bases);
	stream_some(test, e);
	expect_vmid_kept(test, e, "GPU reset");
	for (i = 0; i < n; i++) {
		expect_context(test, e, i);
		/* Reprogrammed into a table cleared again: only rings, no stray */
		KUNIT_EXPECT_EQ(test, e->m->x[i].stray, 0);
		KUNIT_EXPECT_EQ(test, e->m->x[i].vmfaults, 0);
	}
	/* The table was cleared again before the rings were mapped again */
	expect_only_rings(test, e);

	/* Resume from suspend */
	adev->in_suspend = true;
	spm_model_reset(e->m);
	KUNIT_ASSERT_EQ(test, adev->gfx.rlc.funcs->resume(adev), 0);
	adev->in_suspend = false;
	wait_reprogrammed(test, e, bases);
	stream_some(test, e);
	expect_vmid_kept(test, e, "resume");

	/* A queue reset counts in the reset counter, and touches nothing */
	atomic_inc(&adev->gpu_reset_counter);
	stream_some(test, e);
	expect_vmid_kept(test, e, "queue reset");

	KUNIT_EXPECT_EQ(test, spm_env_op(e, e->a, AMDGPU_SPM_OP_RELEASE), 0);
	expect_vmid_kept(test, e, "RELEASE");

	/* Release after unplug, with the device still there */
	KUNIT_ASSERT_EQ(test, spm_env_op(e, e->a, AMDGPU_SPM_OP_ACQUIRE), 0);
	adev_to_drm(adev)->unplugged = true;
	KUNIT_EXPECT_EQ(test, spm_env_op(e, e->a, AMDGPU_SPM_OP_RELEASE), 0);
	adev_to_drm(adev)->unplugged = false;
	expect_vmid_kept(test, e, "release after unplug");
	for (i = 0; i < n; i++)
		expect_parked(test, e, i);
}

/*
 * Outside an acquisition every XCC is parked on an empty table: after
 * driver load (RLC resume) and after a GPU reset, a profiler's stream that
 * aims the RLC at the first ring's address writes nothing, faults without
 * retry, and walks no context the model does not know.
 */
static void spm_vmid_parked_empty(struct kunit *test)
{
	struct spm_env *e = vmid_env(test);
	unsigned int n = part(test)->nxcc, i;

	for (i = 0; i < n; i++) {
		expect_parked(test, e, i);
		KUNIT_EXPECT_EQ(test, user_stream_emit(e, i, AMDGPU_SPM_VA_BASE), 0);
	}
	/* Reset with nobody profiling, VRAM lost: RLC resume parks again */
	spm_model_reset(e->m);
	spm_model_lose_vram(e->m);
	KUNIT_ASSERT_EQ(test, e->adev->gfx.rlc.funcs->resume(e->adev), 0);
	for (i = 0; i < n; i++) {
		struct spm_model_xcc *x = &e->m->x[i];

		expect_parked(test, e, i);
		KUNIT_EXPECT_EQ(test, user_stream_emit(e, i, AMDGPU_SPM_VA_BASE), 0);
		KUNIT_EXPECT_GT(test, x->vmfaults, 0);
		KUNIT_EXPECT_EQ(test, x->retry_faults, 0);
		KUNIT_EXPECT_EQ(test, x->unknown_ctx, 0);
		KUNIT_EXPECT_EQ(test, x->vmid0, 0);
		KUNIT_EXPECT_EQ(test, x->emitted, 0);
	}
}

/*
 * RELEASE makes the rings unreachable before it frees them: a profiler's
 * stream that starts the RLC again at the old ring addresses, after the
 * hub translated them while streaming, faults; no sample reaches a freed
 * ring. Release points every XCC's context at the empty table and flushes
 * the TLB before the free, which the model checks when the driver frees
 * a ring or a table (&spm_model.free_violations): nothing of the GPU can
 * reach it then.
 */
static void spm_vmid_release_fences(struct kunit *test)
{
	struct spm_env *e = vmid_env(test);
	unsigned int n = part(test)->nxcc, i;
	unsigned long buf = spm_env_user_buf(test, n * SZ_64K, MAP_PRIVATE | MAP_ANONYMOUS);
	u64 bases[AMDGPU_SPM_MAX_XCC];

	KUNIT_ASSERT_EQ(test, spm_env_op(e, e->a, AMDGPU_SPM_OP_ACQUIRE), 0);
	KUNIT_ASSERT_EQ(test, spm_env_set_buf(e, e->a, buf, n * SZ_64K, 0, NULL), 0);
	for (i = 0; i < n; i++) {
		bases[i] = ring_base(e, i);
		spm_model_profiler_start(e->m, i, SAMPLE);
		/* The hub walks the ring's pages now, and may keep them */
		KUNIT_EXPECT_EQ(test, spm_model_emit(e->m, i, SAMPLE), SAMPLE);
	}
	KUNIT_ASSERT_EQ(test, spm_env_op(e, e->a, AMDGPU_SPM_OP_RELEASE), 0);
	KUNIT_EXPECT_EQ(test, e->m->allocs, 0);
	/* Nothing was freed while a context or a TLB could still reach it */
	KUNIT_EXPECT_EQ(test, e->m->free_violations, 0);
	/* The acquisition's table is freed; the empty one stays */
	KUNIT_EXPECT_EQ(test, spm_model_live_pts(e->m), 1);
	for (i = 0; i < n; i++) {
		struct spm_model_xcc *x = &e->m->x[i];
		u64 faults = x->vmfaults;

		expect_parked(test, e, i);
		KUNIT_EXPECT_EQ(test, user_stream_emit(e, i, bases[i]), 0);
		KUNIT_EXPECT_GT(test, x->vmfaults, faults);
		KUNIT_EXPECT_EQ(test, x->freed, 0);
		KUNIT_EXPECT_EQ(test, x->stray, 0);
	}
}

/*
 * After a stream changed what the driver programmed: the worker gives the
 * partition's SPM back (XCC 0's ring base cleared too), the owner's next
 * SET_DEST_BUF of @buf (@size bytes) fails with -EIO, and RELEASE works.
 */
static void expect_tamper_ends(struct kunit *test, struct spm_env *e,
			       unsigned long buf, u32 size)
{
	amdgpu_kunit_poll(!ring_base(e, 0));
	KUNIT_EXPECT_EQ(test, ring_base(e, 0), 0);
	KUNIT_EXPECT_EQ(test, spm_env_set_buf(e, e->a, buf, size, 0, NULL), -EIO);
	KUNIT_EXPECT_EQ(test, spm_env_op(e, e->a, AMDGPU_SPM_OP_RELEASE), 0);
}

/*
 * A suspend whose resume failed: amdgpu_device_resume() returns before it
 * clears in_suspend, so the worker never reaches the hardware again. The
 * model keeps its registers (what the hardware holds then is not known;
 * kept is the case where freeing would be wrong): the contexts still lead
 * to the rings. RELEASE returns after amdgpu_spm_release_ms anyway and
 * frees neither the rings nor the acquisition's table, and counts the
 * leak; the gfx IP's sw_fini frees them, after hw_fini disabled the
 * contexts. ACQUIRE fails with -EIO while the device is suspended, and
 * once a release leaked, so that the leak cannot grow with each cycle.
 */
static void spm_vmid_release_dead_hw_leaks(struct kunit *test)
{
	struct spm_env *e = vmid_env(test);
	struct amdgpu_device *adev = e->adev;
	unsigned int n = part(test)->nxcc;
	unsigned long buf = spm_env_user_buf(test, n * SZ_64K, MAP_PRIVATE | MAP_ANONYMOUS);

	/* A device not resumed is not acquired */
	adev->in_suspend = true;
	KUNIT_EXPECT_EQ(test, spm_env_op(e, e->a, AMDGPU_SPM_OP_ACQUIRE), -EIO);
	KUNIT_EXPECT_EQ(test, e->m->allocs, 0);
	adev->in_suspend = false;

	KUNIT_ASSERT_EQ(test, spm_env_op(e, e->a, AMDGPU_SPM_OP_ACQUIRE), 0);
	KUNIT_ASSERT_EQ(test, spm_env_set_buf(e, e->a, buf, n * SZ_64K, 0, NULL), 0);
	stream_some(test, e);
	KUNIT_ASSERT_EQ(test, e->m->allocs, n);
	adev->in_suspend = true;
	amdgpu_spm_release_ms = 50;
	KUNIT_EXPECT_EQ(test, spm_env_op(e, e->a, AMDGPU_SPM_OP_RELEASE), 0);
	KUNIT_EXPECT_EQ(test, adev->spm.nleaked, 1);
	KUNIT_EXPECT_EQ(test, e->m->allocs, n);
	KUNIT_EXPECT_EQ(test, spm_model_live_pts(e->m), 2);
	KUNIT_EXPECT_EQ(test, e->m->free_violations, 0);
	/* Released all the same */
	KUNIT_EXPECT_EQ(test, spm_env_op(e, e->a, AMDGPU_SPM_OP_RELEASE), -EINVAL);
	/*
	 * But no acquisition adds to the leak, even once the device is
	 * resumed: the leaked rings stay until unload, one set at most
	 */
	adev->in_suspend = false;
	KUNIT_EXPECT_EQ(test, spm_env_op(e, e->a, AMDGPU_SPM_OP_ACQUIRE), -EIO);
	KUNIT_EXPECT_EQ(test, e->m->allocs, n);
	KUNIT_EXPECT_EQ(test, adev->spm.nleaked, 1);
	adev->in_suspend = true;

	/* Unload: hw_fini turns the contexts off, then the gfx IP's sw_fini */
	spm_model_gart_disable(e->m);
	amdgpu_spm_vmid_fini(adev);
	KUNIT_EXPECT_EQ(test, e->m->allocs, 0);
	KUNIT_EXPECT_EQ(test, spm_model_live_pts(e->m), 0);
	KUNIT_EXPECT_EQ(test, e->m->free_violations, 0);
	adev->in_suspend = false;
}

struct vmid_resetter {
	struct amdgpu_device *adev;
	struct completion go;
	struct completion done;
};

/*
 * A reset that never reaches RLC resume: gpu_recover's path that skips the
 * hardware reset (the guilty job already signalled), or one that failed
 */
static int vmid_resetter_fn(void *data)
{
	struct vmid_resetter *rt = data;

	wait_for_completion(&rt->go);
	down_write(&rt->adev->reset_domain->sem);
	up_write(&rt->adev->reset_domain->sem);
	kthread_complete_and_exit(&rt->done, 0);
}

/*
 * A reset becomes pending while release flushes the TLBs: the KIQ gives
 * up on the flushes (amdgpu_gmc_fw_reg_write_reg_wait()), and the hubs
 * keep the rings' translations they walked while streaming. Release must
 * not take that for done: it tries again once the reset is over, and
 * frees the rings only after a flush that happened. A release that freed
 * them at once would count in &spm_model.free_violations.
 */
static void spm_vmid_release_flush_skipped(struct kunit *test)
{
	struct spm_env *e = vmid_env(test);
	struct amdgpu_device *adev = e->adev;
	unsigned int n = part(test)->nxcc, i;
	unsigned long buf = spm_env_user_buf(test, n * SZ_64K, MAP_PRIVATE | MAP_ANONYMOUS);
	struct vmid_resetter *rt;
	struct task_struct *t;
	u64 before[AMDGPU_SPM_MAX_XCC];

	/* Not the test's: a resetter stuck past the case may still use it */
	rt = kzalloc(sizeof(*rt), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, rt);
	rt->adev = adev;
	init_completion(&rt->go);
	init_completion(&rt->done);

	KUNIT_ASSERT_EQ(test, spm_env_op(e, e->a, AMDGPU_SPM_OP_ACQUIRE), 0);
	KUNIT_ASSERT_EQ(test, spm_env_set_buf(e, e->a, buf, n * SZ_64K, 0, NULL), 0);
	for (i = 0; i < n; i++) {
		spm_model_profiler_start(e->m, i, SAMPLE);
		/* The hub walks the ring's pages now, and keeps them */
		KUNIT_EXPECT_EQ(test, spm_model_emit(e->m, i, SAMPLE), SAMPLE);
		before[i] = e->m->x[i].tlb_flushes_2;
	}
	e->m->kiq = true;
	t = kthread_run(vmid_resetter_fn, rt, "spm-test-reset");
	if (IS_ERR(t))
		kfree(rt);
	KUNIT_ASSERT_FALSE(test, IS_ERR(t));
	WRITE_ONCE(e->m->flush_hold, &rt->go);

	KUNIT_EXPECT_EQ(test, spm_env_op(e, e->a, AMDGPU_SPM_OP_RELEASE), 0);
	if (xchg(&e->m->flush_hold, NULL)) {
		KUNIT_FAIL(test, "release flushed no TLB");
		complete(&rt->go);
	}
	/* Leaked if the reset never ends: it still points at @rt */
	KUNIT_ASSERT_TRUE_MSG(test, amdgpu_kunit_wait(&rt->done), "the reset never ended");
	kfree(rt);
	KUNIT_EXPECT_GT(test, e->m->kiq_skipped, 0);
	KUNIT_EXPECT_EQ(test, e->m->free_violations, 0);
	KUNIT_EXPECT_EQ(test, e->m->allocs, 0);
	KUNIT_EXPECT_EQ(test, adev->spm.nleaked, 0);
	for (i = 0; i < n; i++) {
		/* Flushed for real after the reset */
		KUNIT_EXPECT_GT_MSG(test, e->m->x[i].tlb_flushes_2, before[i], "xcc %u", i);
		expect_parked(test, e, i);
	}
}

/*
 * A profiler's stream rewrites the ring base of one XCC while it streams,
 * to an address outside the rings: the RLC's writes fault and reach no
 * page of any ring, and the owner's next SET_DEST_BUF fails with -EIO.
 */
static void spm_vmid_rewritten_base_faults(struct kunit *test)
{
	struct spm_env *e = vmid_env(test);
	unsigned int n = part(test)->nxcc, i, j;
	unsigned long buf = spm_env_user_buf(test, n * SZ_64K, MAP_PRIVATE | MAP_ANONYMOUS);
	/* Past the last ring a partition can have */
	u64 outside = AMDGPU_SPM_VA_BASE + SZ_1G;
	u64 emitted[AMDGPU_SPM_MAX_XCC];

	amdgpu_spm_backstop_ms = 5;
	KUNIT_ASSERT_EQ(test, spm_env_op(e, e->a, AMDGPU_SPM_OP_ACQUIRE), 0);
	KUNIT_ASSERT_EQ(test, spm_env_set_buf(e, e->a, buf, n * SZ_64K, 0, NULL), 0);
	for (j = 0; j < n; j++)
		emitted[j] = e->m->x[j].emitted;
	i = n - 1;
	spm_model_write(e->m, i, SPM_R_BASE_LO, lower_32_bits(outside));
	spm_model_write(e->m, i, SPM_R_BASE_HI, upper_32_bits(outside));
	spm_model_profiler_start(e->m, i, SAMPLE);
	KUNIT_EXPECT_EQ(test, spm_model_emit(e->m, i, 4 * SAMPLE), 0);
	KUNIT_EXPECT_GT(test, e->m->x[i].vmfaults, 0);
	KUNIT_EXPECT_EQ(test, e->m->x[i].retry_faults, 0);
	/* The model writes ring memory only for a sample it emits */
	for (j = 0; j < n; j++) {
		KUNIT_EXPECT_EQ(test, e->m->x[j].emitted, emitted[j]);
		KUNIT_EXPECT_EQ(test, e->m->x[j].stray, 0);
		KUNIT_EXPECT_EQ(test, e->m->x[j].freed, 0);
	}
	expect_tamper_ends(test, e, buf, n * SZ_64K);
}

/*
 * A profiler's stream points SPM_VMID of one XCC at VMID 0, the GART, and
 * the ring base at an address that is no ring's: the model counts each
 * sample as a stray write (through the GART nothing faults), and the
 * owner's next SET_DEST_BUF fails with -EIO, as SPM_VMID changed.
 */
static void spm_vmid_rewritten_vmid0_is_stray(struct kunit *test)
{
	struct spm_env *e = vmid_env(test);
	unsigned int n = part(test)->nxcc, i = n - 1;
	unsigned long buf = spm_env_user_buf(test, n * SZ_64K, MAP_PRIVATE | MAP_ANONYMOUS);
	u32 mask = e->m->l->vmid_mask;
	struct spm_model_xcc *x = &e->m->x[i];

	amdgpu_spm_backstop_ms = 5;
	KUNIT_ASSERT_EQ(test, spm_env_op(e, e->a, AMDGPU_SPM_OP_ACQUIRE), 0);
	KUNIT_ASSERT_EQ(test, spm_env_set_buf(e, e->a, buf, n * SZ_64K, 0, NULL), 0);
	spm_model_write(e->m, i, SPM_R_MC_CNTL,
			spm_model_read(e->m, i, SPM_R_MC_CNTL) & ~mask);
	KUNIT_EXPECT_EQ(test, user_stream_emit(e, i, SZ_4K), 0);
	KUNIT_EXPECT_GT(test, x->vmid0, 0);
	KUNIT_EXPECT_EQ(test, x->stray, x->vmid0);
	KUNIT_EXPECT_EQ(test, x->vmfaults, 0);
	KUNIT_EXPECT_EQ(test, x->freed, 0);
	expect_tamper_ends(test, e, buf, n * SZ_64K);
}

/*
 * Each flush of the SPM VMID's TLB is what amdgpu_gmc_flush_gpu_tlb()
 * would issue on that part: two heavyweight flushes on GC 9.4.3, which
 * gmc_v9_0.c marks as needing an extra one, one on GC 9.4.2. Parking an
 * XCC flushes its own hub only.
 */
static void spm_vmid_flush_as_gmc(struct kunit *test)
{
	struct spm_env *e = vmid_env(test);
	unsigned int n = part(test)->nxcc, i, j;
	u64 per = e->m->l->ip_version == IP_VERSION(9, 4, 3) ? 2 : 1;
	u64 before[AMDGPU_SPM_MAX_XCC];

	for (i = 0; i < n; i++) {
		for (j = 0; j < n; j++)
			before[j] = e->m->x[j].tlb_flushes_2;
		amdgpu_spm_vmid_park(e->adev, i);
		for (j = 0; j < n; j++)
			KUNIT_EXPECT_EQ_MSG(test, e->m->x[j].tlb_flushes_2 - before[j],
					    j == i ? per : 0, "park xcc %u, hub %u", i, j);
		expect_parked(test, e, i);
	}
}

/*
 * Nobody else hands the VMID out: on every GFXHUB of the part amdgpu_ids'
 * pool (the real amdgpu_vmid_mgr_init()) and its shared reserved VMID
 * (amdgpu_vmid_alloc_reserved()) leave out the VMID the driver chose
 * (adev->spm.vmid), and KFD's compute VMID bitmap leaves it out too.
 */
static void spm_vmid_not_handed_out(struct kunit *test)
{
	struct spm_env *e = vmid_env(test);
	struct amdgpu_device *adev = e->adev;
	u32 vmid = adev->spm.vmid;
	u32 kfd = GENMASK(AMDGPU_NUM_VMID - 1, adev->vm_manager.first_kfd_vmid);
	unsigned int i;

	KUNIT_ASSERT_GT(test, vmid, 0);
	KUNIT_ASSERT_LT(test, vmid, AMDGPU_NUM_VMID);
	/* Taken out of KFD's VMIDs, and nothing else */
	KUNIT_EXPECT_EQ(test, amdgpu_spm_kfd_vmid_bitmap(adev, kfd), kfd & ~BIT(vmid));
	KUNIT_EXPECT_EQ(test, amdgpu_spm_kfd_vmid_bitmap(adev, GENMASK(AMDGPU_NUM_VMID - 1, 0)) &
			BIT(vmid), 0);

	amdgpu_vmid_mgr_init(adev);
	for (i = 0; i < part(test)->nxcc; i++) {
		struct amdgpu_vmid_mgr *id_mgr = &adev->vm_manager.id_mgr[AMDGPU_GFXHUB(i)];
		struct amdgpu_vmid *id;
		unsigned int ids = 0;

		/* amdgpu_ids may give out VMIDs 1 to first_kfd_vmid - 1 */
		list_for_each_entry(id, &id_mgr->ids_lru, list) {
			KUNIT_EXPECT_NE_MSG(test, id - id_mgr->ids, vmid, "hub %u", i);
			ids++;
		}
		KUNIT_EXPECT_GT_MSG(test, ids, 0, "hub %u", i);
		KUNIT_EXPECT_LE_MSG(test, id_mgr->num_ids, vmid, "hub %u", i);
		/* Its shared reserved VMID comes from that pool too */
		KUNIT_EXPECT_EQ(test, amdgpu_vmid_alloc_reserved(adev, AMDGPU_GFXHUB(i)), 0);
		KUNIT_EXPECT_NE_MSG(test, id_mgr->reserved - id_mgr->ids, vmid, "hub %u", i);
		amdgpu_vmid_free_reserved(adev, AMDGPU_GFXHUB(i));
	}
	amdgpu_vmid_mgr_fini(adev);
}

/*
 * The empty table is allocated by the gfx IP's sw_init, before anything
 * parks SPM_VMID: if it cannot be, amdgpu_spm_vmid_init() fails, which
 * fails sw_init and the device, rather than park SPM_VMID on a VMID that
 * is not the SPM VMID; ACQUIRE meanwhile finds no table (-ENODEV).
 */
static void spm_vmid_init_needs_table(struct kunit *test)
{
	struct spm_env *e = vmid_env(test);
	struct amdgpu_device *adev = e->adev;

	/* hw_fini and sw_fini; then a sw_init whose allocation fails */
	spm_model_gart_disable(e->m);
	amdgpu_spm_vmid_fini(adev);
	KUNIT_EXPECT_EQ(test, spm_model_live_pts(e->m), 0);
	e->m->fail_pt = true;
	KUNIT_EXPECT_EQ(test, amdgpu_spm_vmid_init(adev), -ENOMEM);
	KUNIT_EXPECT_NULL(test, adev->spm.park.priv);
	KUNIT_EXPECT_EQ(test, spm_env_op(e, e->a, AMDGPU_SPM_OP_ACQUIRE), -ENODEV);
	/* Allocated once it can be, and kept until sw_fini */
	KUNIT_EXPECT_EQ(test, amdgpu_spm_vmid_init(adev), 0);
	KUNIT_EXPECT_EQ(test, spm_model_live_pts(e->m), 1);
	KUNIT_EXPECT_EQ(test, amdgpu_spm_vmid_init(adev), 0);
	KUNIT_EXPECT_EQ(test, spm_model_live_pts(e->m), 1);
	KUNIT_EXPECT_EQ(test, amdgpu_spm_park_vmid(adev), adev->spm.vmid);
	KUNIT_EXPECT_EQ(test, spm_env_op(e, e->a, AMDGPU_SPM_OP_ACQUIRE), 0);
	KUNIT_EXPECT_EQ(test, spm_env_op(e, e->a, AMDGPU_SPM_OP_RELEASE), 0);
}

/* One KFD node's VMIDs, as kgd2kfd_device_init() derives them */
struct vmid_kfd_node {
	u32 first;
	u32 last;
	u32 bitmap;
};

/*
 * kgd2kfd_device_init() (kfd_device.c) on the bitmap amdgpu gives it: the
 * first and last VMID are the lowest and highest bit (ffs()/fls()), and
 * their count is last - first + 1, so KFD takes every VMID between them as
 * its own: it needs the bitmap to be one run of bits. In CPX mode with more
 * than one node on GC 9.4.3/9.4.4 it halves that count and gives even
 * nodes the lower half of the top 2 * count VMIDs, odd nodes the upper
 * half, each as a bitmap of that range; otherwise every node gets the
 * first..last and the bitmap as they are. Returns the count.
 */
static u32 vmid_kfd_derive(u32 bitmap, bool cpx_split, unsigned int nodes,
			   struct vmid_kfd_node *node)
{
	u32 first = ffs(bitmap) - 1, last = fls(bitmap) - 1;
	u32 num = last - first + 1;
	unsigned int i;

	if (cpx_split && nodes != 1) {
		num /= 2;
		first = last + 1 - num * 2;
	}
	for (i = 0; i < nodes; i++) {
		if (cpx_split && nodes != 1) {
			node[i].first = i % 2 == 0 ? first : first + num;
			node[i].last = i % 2 == 0 ? last - num : last;
			node[i].bitmap = GENMASK(node[i].last, node[i].first);
		} else {
			node[i].first = first;
			node[i].last = last;
			node[i].bitmap = bitmap;
		}
	}
	return num;
}

/*
 * KFD's compute VMIDs without the SPM VMID are still what KFD needs, in
 * every partition mode of the part (SPX, and on GC 9.4.3 DPX, QPX and CPX
 * with one KFD node per partition, as far as its XCCs allow): the bitmap
 * is one run of bits, the SPM VMID is in no node's range or bitmap, each
 * node has VMIDs, its range is inside the bitmap, and CPX's two halves
 * do not overlap. amdgpu_ids stays below the SPM VMID.
 */
static void spm_vmid_kfd_bitmap_modes(struct kunit *test)
{
	struct spm_env *e = vmid_env(test);
	struct amdgpu_device *adev = e->adev;
	u32 vmid = adev->spm.vmid, n = part(test)->nxcc;
	bool gc943 = e->m->l->ip_version == IP_VERSION(9, 4, 3);
	static const struct { const char *name; u32 parts; bool cpx; } modes[] = {
		{ "SPX", 1, false }, { "DPX", 2, false }, { "QPX", 4, false },
		{ "CPX", 0, true },
	};
	struct vmid_kfd_node node[AMDGPU_SPM_MAX_XCC];
	u32 bitmap, first, last, num;
	unsigned int m, i, nodes;

	bitmap = amdgpu_spm_kfd_vmid_bitmap(adev,
					    GENMASK(AMDGPU_NUM_VMID - 1,
						    adev->vm_manager.first_kfd_vmid));
	KUNIT_ASSERT_EQ(test, vmid, adev->vm_manager.first_kfd_vmid);
	KUNIT_EXPECT_EQ(test, bitmap & BIT(vmid), 0);
	first = ffs(bitmap) - 1;
	last = fls(bitmap) - 1;
	/* One run of bits: what ffs()/fls() and last - first + 1 assume */
	KUNIT_EXPECT_EQ(test, hweight32(bitmap), last - first + 1);
	KUNIT_EXPECT_EQ(test, bitmap, GENMASK(last, first));

	for (m = 0; m < ARRAY_SIZE(modes); m++) {
		nodes = modes[m].cpx ? n : modes[m].parts;
		/* Partition modes are GC 9.4.3's; a mode needs XCCs for each node */
		if ((!gc943 && m) || nodes > n || n % nodes)
			continue;
		num = vmid_kfd_derive(bitmap, gc943 && modes[m].cpx, nodes, node);
		KUNIT_EXPECT_GT_MSG(test, num, 0, "%s", modes[m].name);
		for (i = 0; i < nodes; i++) {
			KUNIT_EXPECT_LE_MSG(test, node[i].first, node[i].last,
					    "%s node %u", modes[m].name, i);
			KUNIT_EXPECT_FALSE_MSG(test, vmid >= node[i].first &&
					       vmid <= node[i].last,
					       "%s node %u: %u-%u", modes[m].name, i,
					       node[i].first, node[i].last);
			KUNIT_EXPECT_EQ_MSG(test, node[i].bitmap & BIT(vmid), 0,
					    "%s node %u", modes[m].name, i);
			KUNIT_EXPECT_EQ_MSG(test, node[i].bitmap & ~bitmap, 0,
					    "%s node %u", modes[m].name, i);
			if (i % 2)
				KUNIT_EXPECT_EQ_MSG(test, node[i].bitmap & node[i - 1].bitmap,
						    modes[m].cpx && gc943 ? 0 : node[i].bitmap,
						    "%s node %u", modes[m].name, i);
		}
	}

	/* amdgpu_ids: VMIDs 1 to first_kfd_vmid - 1 on every hub */
	amdgpu_vmid_mgr_init(adev);
	for (i = 0; i < n; i++)
		KUNIT_EXPECT_LE(test, adev->vm_manager.id_mgr[AMDGPU_GFXHUB(i)].num_ids, vmid);
	amdgpu_vmid_mgr_fini(adev);
}

static int vmid_rlc_init_fails(struct amdgpu_device *adev)
{
	return -ENOMEM;
}

/*
 * The gfx IP's real sw_init fails after it allocated the empty table (its
 * RLC init fails, as an allocation of gfx_v9_0_rlc_init() can): the
 * table is freed on the way out, since the IP's sw_fini is not called for
 * an IP whose sw_init failed (amdgpu_device_ip_fini() calls it only where
 * sw_init succeeded).
 */
static void spm_vmid_sw_init_error_frees_table(struct kunit *test)
{
	struct spm_env *e = vmid_env(test);
	struct amdgpu_device *adev = e->adev;
	const struct amdgpu_rlc_funcs *real = adev->gfx.rlc.funcs;
	struct amdgpu_rlc_funcs *failing;
	u64 allocated;
	int r;

	failing = kunit_kmalloc(test, sizeof(*failing), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, failing);
	*failing = *real;
	failing->init = vmid_rlc_init_fails;

	/* hw_fini and sw_fini of the device the environment loaded */
	spm_model_gart_disable(e->m);
	amdgpu_spm_vmid_fini(adev);
	KUNIT_ASSERT_EQ(test, spm_model_live_pts(e->m), 0);

	allocated = e->m->pts_allocated;
	adev->gfx.rlc.funcs = failing;
	r = e->m->l->ip_block->funcs->sw_init(adev);
	adev->gfx.rlc.funcs = real;
	amdgpu_irq_fini_sw(adev);
	KUNIT_EXPECT_EQ(test, r, -ENOMEM);
	/* It was allocated, and freed again */
	KUNIT_EXPECT_GT(test, e->m->pts_allocated, allocated);
	KUNIT_EXPECT_EQ(test, spm_model_live_pts(e->m), 0);
	KUNIT_EXPECT_NULL(test, adev->spm.park.priv);
}

/*
 * The SPM VMID is the first KFD VMID only while KFD keeps one after it
 * and amdgpu_ids one before it: with 14 first, SPM takes 14 and KFD keeps
 * 15; with 15, or 0, SPM gets none.
 */
static void spm_vmid_leaves_kfd_a_vmid(struct kunit *test)
{
	struct spm_env *e = vmid_env(test);
	struct amdgpu_device *adev = e->adev;
	u32 vmid = adev->spm.vmid, first = adev->vm_manager.first_kfd_vmid;
	u32 last = BIT(AMDGPU_NUM_VMID - 1);

	adev->spm.vmid = 0;
	adev->vm_manager.first_kfd_vmid = AMDGPU_NUM_VMID - 2;
	KUNIT_EXPECT_EQ(test, amdgpu_spm_kfd_vmid_bitmap(adev, last | last >> 1), last);
	KUNIT_EXPECT_EQ(test, adev->spm.vmid, AMDGPU_NUM_VMID - 2);
	adev->spm.vmid = 0;
	adev->vm_manager.first_kfd_vmid = AMDGPU_NUM_VMID - 1;
	KUNIT_EXPECT_EQ(test, amdgpu_spm_kfd_vmid_bitmap(adev, last), last);
	KUNIT_EXPECT_EQ(test, adev->spm.vmid, 0);
	adev->vm_manager.first_kfd_vmid = 0;
	KUNIT_EXPECT_EQ(test, amdgpu_spm_kfd_vmid_bitmap(adev, 1), 1);
	KUNIT_EXPECT_EQ(test, adev->spm.vmid, 0);
	adev->vm_manager.first_kfd_vmid = first;
	adev->spm.vmid = vmid;
}

static struct kunit_case spm_vmid_cases[] = {
	KUNIT_CASE_PARAM(spm_vmid_only_rings_translate, vmid_part_gen_params),
	KUNIT_CASE_PARAM(spm_vmid_never_0, vmid_part_gen_params),
	KUNIT_CASE_PARAM(spm_vmid_parked_empty, vmid_part_gen_params),
	KUNIT_CASE_PARAM(spm_vmid_release_fences, vmid_part_gen_params),
	KUNIT_CASE_PARAM(spm_vmid_release_dead_hw_leaks, vmid_part_gen_params),
	KUNIT_CASE_PARAM(spm_vmid_release_flush_skipped, vmid_part_gen_params),
	KUNIT_CASE_PARAM(spm_vmid_rewritten_base_faults, vmid_part_gen_params),
	KUNIT_CASE_PARAM(spm_vmid_rewritten_vmid0_is_stray, vmid_part_gen_params),
	KUNIT_CASE_PARAM(spm_vmid_not_handed_out, vmid_part_gen_params),
	KUNIT_CASE_PARAM(spm_vmid_kfd_bitmap_modes, vmid_part_gen_params),
	KUNIT_CASE_PARAM(spm_vmid_leaves_kfd_a_vmid, vmid_part_gen_params),
	KUNIT_CASE_PARAM(spm_vmid_flush_as_gmc, vmid_part_gen_params),
	KUNIT_CASE_PARAM(spm_vmid_init_needs_table, vmid_part_gen_params),
	KUNIT_CASE_PARAM(spm_vmid_sw_init_error_frees_table, vmid_part_gen_params),
	{}
};

static struct kunit_suite spm_vmid_suite = {
	.name = "amdgpu_spm_vmid",
	.test_cases = spm_vmid_cases,
};

kunit_test_suite(spm_vmid_suite);
