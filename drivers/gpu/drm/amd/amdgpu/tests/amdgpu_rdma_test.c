// SPDX-License-Identifier: MIT
/*
 * Copyright 2026 The amdgpu profiler series authors
 *
 * KUnit tests of the amd_rdma.h entry points: the query and capabilities,
 * the argument checks, the P2P policy, and get_pages()/get_page_size()/
 * is_gpu_address() through the real glue on a fake GPU (amdgpu_rdma_fake.c):
 * the real VM lookup under the real root reservation, the real checks of
 * the mapping, the registration, the quota, the hot path. Each failing
 * get_pages() must leave *info untouched.
 */

#include <kunit/device.h>
#include <kunit/static_stub.h>
#include <kunit/test.h>
#include <linux/completion.h>
#include <linux/delay.h>
#include <linux/hrtimer.h>
#include <linux/kthread.h>
#include <linux/mman.h>
#include <linux/pid.h>
#include <linux/scatterlist.h>
#include <linux/sched.h>
#include <linux/sched/task.h>
#include <linux/sizes.h>
#include <drm/amd_rdma.h>
#include <drm/drm_drv.h>
#include <drm/ttm/ttm_tt.h>

#include "amdgpu.h"
#include "amdgpu_peer_reg.h"
#include "amdgpu_rdma.h"
#include "amdgpu_res_cursor.h"
#include "amdgpu_vm.h"
#include "kfd_priv.h"
#include "tests/amdgpu_kunit_helpers.h"
#include "tests/amdgpu_rdma_fake.h"

static const struct amd_rdma_interface *rdma_test_ops(struct kunit *test)
{
	const struct amd_rdma_interface *ops = NULL;

	/* amdgpu_amdkfd_init() sets the interface up: it must be there. */
	KUNIT_ASSERT_EQ(test, amdkfd_query_rdma_interface(&ops), 0);
	KUNIT_ASSERT_NOT_NULL(test, ops);
	return ops;
}

static void rdma_query(struct kunit *test)
{
	const struct amd_rdma_interface *ops;

	KUNIT_EXPECT_EQ(test, amdkfd_query_rdma_interface(NULL), -EINVAL);
	ops = rdma_test_ops(test);
	KUNIT_EXPECT_NOT_NULL(test, ops->get_pages);
	KUNIT_EXPECT_NOT_NULL(test, ops->put_pages);
	KUNIT_EXPECT_NOT_NULL(test, ops->is_gpu_address);
	KUNIT_EXPECT_NOT_NULL(test, ops->get_page_size);
	/* Clients test these to pick the get_pages() signature. */
	KUNIT_EXPECT_EQ(test, AMD_RDMA_MAJOR, 2);
	KUNIT_EXPECT_GE(test, AMD_RDMA_MINOR, 1);
	/* 2.1 did not grow the ops table: an old amdgpu's stays valid. */
	KUNIT_EXPECT_EQ(test, sizeof(struct amd_rdma_interface),
			4 * sizeof(void *));
	/*
	 * What each capability bit promises is checked against what the code
	 * does by rdma_real_backend_capabilities.
	 */
	/* Nothing pending: returns at once. */
	amdkfd_rdma_synchronize();
}

static void rdma_free_cb(void *priv)
{
	atomic_inc(priv);
}

struct rdma_get_case {
	const char *name;
	u64 address;
	u64 length;
	bool null_pid;
	bool null_dev;
	bool null_info;
	int expected;
};

static const struct rdma_get_case rdma_get_cases[] = {
	{ "zero length", 0x10000, 0, false, false, false, -EINVAL },
	{ "wrapping range", ~0ULL - 0xfff, 0x2000, false, false, false,
	  -EINVAL },
	/* NULL is the calling process, which has no KFD context here */
	{ "no pid", 0x10000, 0x1000, true, false, false, -ESRCH },
	{ "no dma device", 0x10000, 0x1000, false, true, false, -EINVAL },
	{ "no info pointer", 0x10000, 0x1000, false, false, true, -EINVAL },
	{ "no KFD process", 0x10000, 0x1000, false, false, false, -ESRCH },
};

static void rdma_get_case_desc(const struct rdma_get_case *c, char *desc)
{
	strscpy(desc, c->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(rdma_get, rdma_get_cases, rdma_get_case_desc);

/* The real kfd_lookup_process_by_pid(): a KUnit thread has no process. */
static void rdma_get_pages_errors(struct kunit *test)
{
	const struct rdma_get_case *c = test->param_value;
	const struct amd_rdma_interface *ops = rdma_test_ops(test);
	struct amd_p2p_info *poison = ERR_PTR(-EBADF), *info = poison;
	atomic_t cbs = ATOMIC_INIT(0);
	struct device *dev;

	dev = kunit_device_register(test, "amdgpu_rdma_nic");
	KUNIT_ASSERT_FALSE(test, IS_ERR(dev));
	KUNIT_EXPECT_EQ(test,
			ops->get_pages(c->address, c->length,
				       c->null_pid ? NULL : task_pid(current),
				       c->null_dev ? NULL : dev,
				       c->null_info ? NULL : &info,
				       rdma_free_cb, &cbs),
			c->expected);
	KUNIT_EXPECT_PTR_EQ(test, info, poison);
}

static void rdma_no_kfd_process(struct kunit *test)
{
	const struct amd_rdma_interface *ops = rdma_test_ops(test);
	unsigned long size = 12345;

	KUNIT_EXPECT_EQ(test, ops->is_gpu_address(0x10000, task_pid(current)),
			0);
	KUNIT_EXPECT_EQ(test, ops->get_page_size(0x10000, 0x1000,
						 task_pid(current), &size),
			-ESRCH);
	KUNIT_EXPECT_EQ(test, size, 12345UL);
	KUNIT_EXPECT_EQ(test, ops->get_page_size(0x10000, 0x1000,
						 task_pid(current), NULL),
			-EINVAL);
}

static void rdma_put_pages_null(struct kunit *test)
{
	const struct amd_rdma_interface *ops = rdma_test_ops(test);
	struct amd_p2p_info *info = NULL;

	KUNIT_EXPECT_EQ(test, ops->put_pages(NULL), -EINVAL);
	KUNIT_EXPECT_EQ(test, ops->put_pages(&info), -EINVAL);
}

/* What amdgpu.rdma_p2p_devices names, for the GPU that is asked about */
enum rdma_p2p_list {
	RDMA_P2P_NONE,
	RDMA_P2P_THIS,		/* this GPU, after another one */
	RDMA_P2P_OTHER,		/* another GPU only */
	RDMA_P2P_PREFIX,	/* the name of this GPU less its last character */
	RDMA_P2P_LONGER,	/* the name of this GPU and one more character */
};

struct rdma_p2p_case {
	const char *name;
	int policy;
	enum rdma_p2p_list list;
	int distance;
	int expected;
};

static const struct rdma_p2p_case rdma_p2p_cases[] = {
	{ "default, supported topology", -1, RDMA_P2P_NONE, 4, 0 },
	/* pci_p2pdma_distance() is 0 when the client is the provider itself */
	{ "default, distance 0", -1, RDMA_P2P_NONE, 0, 0 },
	{ "default, unknown host bridge", -1, RDMA_P2P_NONE, -1, -EREMOTEIO },
	{ "unknown host bridge, this GPU named", -1, RDMA_P2P_THIS, -1, 0 },
	{ "unknown host bridge, another GPU named", -1, RDMA_P2P_OTHER, -1,
	  -EREMOTEIO },
	{ "unknown host bridge, a prefix of the name", -1, RDMA_P2P_PREFIX, -1,
	  -EREMOTEIO },
	{ "unknown host bridge, a longer name", -1, RDMA_P2P_LONGER, -1,
	  -EREMOTEIO },
	/* 1 once vouched for every GPU at once: no longer */
	{ "rdma_p2p=1, unknown host bridge", 1, RDMA_P2P_NONE, -1,
	  -EREMOTEIO },
	{ "admin forbids, supported topology", 0, RDMA_P2P_NONE, 4,
	  -EREMOTEIO },
	{ "admin forbids, this GPU named", 0, RDMA_P2P_THIS, 4, -EREMOTEIO },
};

static void rdma_p2p_case_desc(const struct rdma_p2p_case *c, char *desc)
{
	strscpy(desc, c->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(rdma_p2p, rdma_p2p_cases, rdma_p2p_case_desc);

static int rdma_p2p_distance_stub(struct amdgpu_device *adev,
				  struct device *dma_dev)
{
	const struct rdma_p2p_case *c = kunit_get_current_test()->param_value;

	return c->distance;
}

/*
 * The P2P policy: pci_p2pdma_distance() by default (the Xeon E5 v4 host
 * bridge of ROCm/amdgpu#169 is not on its list); amdgpu.rdma_p2p_devices
 * vouches for the GPUs it names, and only for them; amdgpu.rdma_p2p=0
 * forbids it for all.
 */
static void rdma_p2p_policy(struct kunit *test)
{
	const struct rdma_p2p_case *c = test->param_value;
	char *saved_list = amdgpu_rdma_p2p_devices;
	int saved = amdgpu_rdma_p2p;
	struct amdgpu_device *gpu, *other;
	struct device *nic;
	const char *name;
	char list[128];

	gpu = kunit_kzalloc(test, sizeof(*gpu), GFP_KERNEL);
	other = kunit_kzalloc(test, sizeof(*other), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, gpu);
	KUNIT_ASSERT_NOT_NULL(test, other);
	gpu->dev = kunit_device_register(test, "gpu");
	other->dev = kunit_device_register(test, "gpu2");
	nic = kunit_device_register(test, "nic");
	KUNIT_ASSERT_FALSE(test, IS_ERR(gpu->dev));
	KUNIT_ASSERT_FALSE(test, IS_ERR(other->dev));
	KUNIT_ASSERT_FALSE(test, IS_ERR(nic));
	name = dev_name(gpu->dev);
	switch (c->list) {
	case RDMA_P2P_THIS:
		snprintf(list, sizeof(list), "%s,%s", dev_name(other->dev), name);
		break;
	case RDMA_P2P_OTHER:
		snprintf(list, sizeof(list), "%s", dev_name(other->dev));
		break;
	case RDMA_P2P_PREFIX:
		snprintf(list, sizeof(list), "%.*s", (int)strlen(name) - 1, name);
		break;
	case RDMA_P2P_LONGER:
		snprintf(list, sizeof(list), "%s0", name);
		break;
	default:
		break;
	}

	kunit_activate_static_stub(test, amdgpu_rdma_p2p_distance,
				   rdma_p2p_distance_stub);
	amdgpu_rdma_p2p = c->policy;
	amdgpu_rdma_p2p_devices = c->list == RDMA_P2P_NONE ? NULL : list;
	KUNIT_EXPECT_EQ(test, amdgpu_rdma_p2p_check(gpu, nic), c->expected);
	amdgpu_rdma_p2p_devices = saved_list;
	amdgpu_rdma_p2p = saved;
}

#define GET_VA		(4ULL << 30)
#define GET_BO_SIZE	SZ_2M

struct rdma_get_ctx {
	struct rdma_fake *f;
	struct rdma_fake_bo *bo;
	struct amdgpu_bo_va_mapping *m;
	atomic_t callbacks;
};

static int rdma_get_init(struct kunit *test)
{
	struct rdma_get_ctx *ctx;

	ctx = kunit_kzalloc(test, sizeof(*ctx), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, ctx);
	/*
	 * The fake pin backend: these cases choose the DMA layout of a BO
	 * (four segments 64 KiB apart, whose gaps a registration's table must
	 * show; 2 MiB segments 2 MiB apart for get_page_size()), where a real
	 * BO's is whatever TTM's pool or the VRAM manager handed out, and
	 * fail a pin with a chosen errno; and the rejections set fields that
	 * amdgpu_bo_create() does not (kernel, SG, imported, doorbell BOs).
	 * What they check of the pin itself runs on the real backend in
	 * amdgpu_peer_rdma_real_backend.
	 */
	ctx->f = rdma_fake_init(test);
	/* A 2 MiB VRAM BO of four DMA segments, mapped at 4 GiB. */
	ctx->bo = rdma_fake_bo(ctx->f, GET_BO_SIZE, AMDGPU_GEM_DOMAIN_VRAM, 4,
			       SZ_64K);
	ctx->m = rdma_fake_map(ctx->f, ctx->bo, GET_VA, 0, GET_BO_SIZE,
			       RDMA_FAKE_RW);
	test->priv = ctx;
	return 0;
}

static int rdma_get(struct kunit *test, u64 va, u64 len,
		    struct amd_p2p_info **info)
{
	struct rdma_get_ctx *ctx = test->priv;

	return rdma_fake_get(ctx->f, va, len, rdma_free_cb, &ctx->callbacks,
			     info);
}

enum rdma_reject_kind {
	RDMA_REJECT_NONE,
	RDMA_REJECT_PRT,
	RDMA_REJECT_PRT_NO_BO,
	RDMA_REJECT_UNREADABLE,
	RDMA_REJECT_KERNEL_BO,
	RDMA_REJECT_CPU_DOMAIN,
	RDMA_REJECT_DOORBELL,
	RDMA_REJECT_MMIO,
	RDMA_REJECT_IMPORT,
	RDMA_REJECT_ENCRYPTED,
	RDMA_REJECT_NO_PROCESS,
	RDMA_REJECT_P2P,
	RDMA_REJECT_PIN,
};

struct rdma_reject_case {
	const char *name;
	enum rdma_reject_kind kind;
	u64 address;		/* offset from GET_VA */
	u64 length;
	int expected;
	bool is_gpu;		/* is_gpu_address() of @address */
};

static const struct rdma_reject_case rdma_reject_cases[] = {
	{ "zero length", RDMA_REJECT_NONE, 0, 0, -EINVAL, true },
	{ "overflow", RDMA_REJECT_NONE, 0, ~0ULL - GET_VA + 2, -EINVAL, true },
	{ "no KFD process", RDMA_REJECT_NO_PROCESS, 0, SZ_4K, -ESRCH, false },
	{ "no mapping", RDMA_REJECT_NONE, GET_BO_SIZE, SZ_4K, -EFAULT, false },
	{ "no mapping below", RDMA_REJECT_NONE, -SZ_4K, SZ_4K, -EFAULT,
	  false },
	{ "range past the mapping end", RDMA_REJECT_NONE, GET_BO_SIZE - SZ_4K,
	  SZ_4K + 1, -EFAULT, true },
	{ "range crossing into the next mapping", RDMA_REJECT_NONE, SZ_1M,
	  GET_BO_SIZE, -EFAULT, true },
	{ "PRT mapping", RDMA_REJECT_PRT, 0, SZ_4K, -EFAULT, false },
	{ "PRT mapping without BO", RDMA_REJECT_PRT_NO_BO, 0, SZ_4K, -EFAULT,
	  false },
	{ "unreadable mapping", RDMA_REJECT_UNREADABLE, 0, SZ_4K, -EFAULT,
	  false },
	{ "kernel BO mapped into every VM", RDMA_REJECT_KERNEL_BO, 0, SZ_4K,
	  -EOPNOTSUPP, false },
	/* userptr BOs: rdma_real_backend_rejects_userptr */
	{ "CPU domain", RDMA_REJECT_CPU_DOMAIN, 0, SZ_4K, -EOPNOTSUPP, false },
	{ "doorbell", RDMA_REJECT_DOORBELL, 0, SZ_4K, -EOPNOTSUPP, false },
	{ "MMIO remap", RDMA_REJECT_MMIO, 0, SZ_4K, -EOPNOTSUPP, false },
	{ "imported dma-buf", RDMA_REJECT_IMPORT, 0, SZ_4K, -EOPNOTSUPP,
	  false },
	{ "encrypted", RDMA_REJECT_ENCRYPTED, 0, SZ_4K, -EOPNOTSUPP, false },
	{ "P2P not possible", RDMA_REJECT_P2P, 0, SZ_4K, -EREMOTEIO, true },
	{ "pin fails", RDMA_REJECT_PIN, 0, SZ_4K, -ENOMEM, true },
};

static void rdma_reject_case_desc(const struct rdma_reject_case *c,
				  char *desc)
{
	strscpy(desc, c->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(rdma_reject, rdma_reject_cases, rdma_reject_case_desc);

static int rdma_reject_distance_stub(struct amdgpu_device *adev,
				     struct device *dma_dev)
{
	return -1;
}

/* Every rejection returns its documented errno and leaves *info alone. */
static void rdma_get_pages_rejects(struct kunit *test)
{
	const struct rdma_reject_case *c = test->param_value;
	struct rdma_get_ctx *ctx = test->priv;
	struct amd_p2p_info *poison = ERR_PTR(-EBADF), *info = poison;
	const struct amd_rdma_interface *ops = ctx->f->ops;
	struct amdgpu_peer_mgr *mgr = amdgpu_rdma_test_mgr();
	const struct amdgpu_peer_pin_ops *fake_ops = mgr->ops;
	struct dma_buf_attachment *attach;
	struct amdgpu_bo *bo = &ctx->bo->bo;
	struct amdgpu_bo_va *prt_va;
	unsigned long size = 12345;
	int saved_p2p = amdgpu_rdma_p2p;

	switch (c->kind) {
	case RDMA_REJECT_PRT:
		ctx->m->flags |= AMDGPU_PTE_PRT_FLAG(ctx->f->adev);
		break;
	case RDMA_REJECT_PRT_NO_BO:
		/* amdgpu_vm_bo_add(adev, vm, NULL), as for the PRT bo_va */
		rdma_fake_lock(ctx->f, NULL);
		prt_va = amdgpu_vm_bo_add(ctx->f->adev, ctx->f->vm, NULL);
		KUNIT_ASSERT_NOT_NULL(test, prt_va);
		ctx->f->prt_va = prt_va;
		KUNIT_ASSERT_EQ(test, amdgpu_vm_bo_unmap(ctx->f->adev,
							 ctx->bo->bo_va,
							 GET_VA), 0);
		KUNIT_ASSERT_EQ(test, amdgpu_vm_bo_map(ctx->f->adev, prt_va,
						       GET_VA, 0, GET_BO_SIZE,
						       RDMA_FAKE_RW), 0);
		rdma_fake_unlock(ctx->f, NULL);
		amdgpu_vm_bo_lookup_mapping(ctx->f->vm, GET_VA >>
					    AMDGPU_GPU_PAGE_SHIFT)->flags |=
			AMDGPU_PTE_PRT_FLAG(ctx->f->adev);
		break;
	case RDMA_REJECT_UNREADABLE:
		ctx->m->flags &= ~AMDGPU_PTE_READABLE;
		break;
	case RDMA_REJECT_KERNEL_BO:
		/* The seq64 page and the CSA: amdgpu_bo_create_kernel() */
		bo->tbo.type = ttm_bo_type_kernel;
		break;
	case RDMA_REJECT_CPU_DOMAIN:
		/* As KFD and GEM create userptr BOs */
		bo->preferred_domains = AMDGPU_GEM_DOMAIN_CPU;
		break;
	case RDMA_REJECT_DOORBELL:
		/*
		 * With GTT as well, so that only the doorbell clause, not
		 * the one that wants VRAM or GTT, can reject it.
		 */
		bo->preferred_domains = AMDGPU_GEM_DOMAIN_DOORBELL |
					AMDGPU_GEM_DOMAIN_GTT;
		break;
	case RDMA_REJECT_MMIO:
		/* KFD's doorbell and MMIO remap BOs are SG BOs */
		bo->tbo.type = ttm_bo_type_sg;
		bo->preferred_domains = AMDGPU_GEM_DOMAIN_GTT;
		break;
	case RDMA_REJECT_IMPORT:
		attach = kunit_kzalloc(test, sizeof(*attach), GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL(test, attach);
		bo->tbo.base.import_attach = attach;
		break;
	case RDMA_REJECT_ENCRYPTED:
		bo->flags |= AMDGPU_GEM_CREATE_ENCRYPTED;
		break;
	case RDMA_REJECT_NO_PROCESS:
		ctx->f->no_process = true;
		break;
	case RDMA_REJECT_P2P:
		/* The real pin: it checks the P2P policy before anything. */
		mgr->ops = ctx->f->saved_pin_ops;
		amdgpu_rdma_p2p = -1;
		kunit_activate_static_stub(test, amdgpu_rdma_p2p_distance,
					   rdma_reject_distance_stub);
		break;
	case RDMA_REJECT_PIN:
		ctx->f->pin_error = -ENOMEM;
		break;
	default:
		break;
	}

	KUNIT_EXPECT_EQ(test, rdma_get(test, GET_VA + c->address, c->length,
				       &info), c->expected);
	KUNIT_EXPECT_PTR_EQ(test, info, poison);
	mgr->ops = fake_ops;
	amdgpu_rdma_p2p = saved_p2p;
	bo->tbo.base.import_attach = NULL;
	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->f->pins), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->f->unpins), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->bo->pinned), 0);

	/* The same checks for the queries, which do not pin. */
	if (c->kind == RDMA_REJECT_P2P || c->kind == RDMA_REJECT_PIN ||
	    c->kind == RDMA_REJECT_IMPORT)
		return;
	KUNIT_EXPECT_EQ(test, ops->get_page_size(GET_VA + c->address,
						 c->length, task_pid(current),
						 &size),
			c->expected);
	KUNIT_EXPECT_EQ(test, size, 12345UL);
	KUNIT_EXPECT_EQ(test, ops->is_gpu_address(GET_VA + c->address,
						  task_pid(current)),
			c->is_gpu);
}

/*
 * N gets of one BO for one device: one pin, N registrations, each with
 * its own table of its own range; every callback once at process exit.
 */
static void rdma_get_pages_shares_pin(struct kunit *test)
{
	struct rdma_get_ctx *ctx = test->priv;
	const struct amd_rdma_interface *ops = ctx->f->ops;
	struct amd_p2p_info *info[8];
	struct scatterlist *sg;
	int i, k;

	for (i = 0; i < ARRAY_SIZE(info); i++) {
		/* 4 KiB at 0x100 into each 64 KiB, then a range across segs */
		u64 off = i < 7 ? i * SZ_64K + 0x100 : SZ_512K - SZ_4K;
		u64 len = i < 7 ? SZ_4K : 2 * SZ_4K;

		KUNIT_ASSERT_EQ(test, rdma_get(test, GET_VA + off, len,
					       &info[i]), 0);
		KUNIT_ASSERT_NOT_NULL(test, info[i]);
		KUNIT_EXPECT_EQ(test, info[i]->va, GET_VA + off);
		KUNIT_EXPECT_EQ(test, info[i]->size, len);
		KUNIT_EXPECT_PTR_EQ(test, info[i]->pid, task_pid(current));
		KUNIT_ASSERT_NOT_NULL(test, info[i]->pages);
		KUNIT_EXPECT_EQ(test, rdma_fake_sg_len(info[i]), len);
		for_each_sgtable_dma_sg(info[i]->pages, sg, k) {
			KUNIT_EXPECT_EQ(test, sg_dma_address(sg),
					rdma_fake_dma(ctx->bo, off));
			KUNIT_EXPECT_NULL(test, sg_page(sg));
			off += sg_dma_len(sg);
		}
	}
	/* The last one crosses from segment 0 to segment 1 (64K apart). */
	KUNIT_EXPECT_EQ(test, info[7]->pages->nents, 2U);
	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->f->pins), 1);
	KUNIT_EXPECT_EQ(test, ops->is_gpu_address(GET_VA, task_pid(current)),
			1);

	/* Process exit: every callback once, then one unpin. */
	rdma_fake_vm_fini(ctx->f);
	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->callbacks), ARRAY_SIZE(info));
	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->f->unpins), 1);
	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->bo->pinned), 0);
	/* Late puts of the tombstones, after the VM is gone. */
	for (i = 0; i < ARRAY_SIZE(info); i++)
		KUNIT_EXPECT_EQ(test, ops->put_pages(&info[i]), 0);
}

struct rdma_page_size_case {
	const char *name;
	u64 map_va;
	u64 map_size;
	u64 va;		/* the client's unaligned range */
	u64 len;
};

static const struct rdma_page_size_case rdma_page_size_cases[] = {
	/* The case of the issue: 4 MiB at a 2 MiB-aligned VA. */
	{ "4M BO at a 2M-aligned VA", 6ULL << 20, 4ULL << 20,
	  (6ULL << 20) + 0x123, (3ULL << 20) },
	{ "whole mapping", 1ULL << 30, 1ULL << 21, 1ULL << 30, 1ULL << 21 },
	{ "one byte at the end", 1ULL << 30, SZ_64K, (1ULL << 30) + SZ_64K - 1,
	  1 },
	{ "one page mapping", 1ULL << 33, SZ_4K, (1ULL << 33) + 0x10, 0x20 },
};

static void rdma_page_size_case_desc(const struct rdma_page_size_case *c,
				     char *desc)
{
	strscpy(desc, c->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(rdma_page_size, rdma_page_size_cases,
		  rdma_page_size_case_desc);

/*
 * get_page_size() as hfi1 and cxi use it: ask for the unaligned range,
 * round the range out to the answer, get_pages() the result. The answer
 * is the same before and after a pin, and the rounded range stays in the
 * mapping and is DMA-contiguous within each page.
 */
static void rdma_page_size_rounding(struct kunit *test)
{
	const struct rdma_page_size_case *c = test->param_value;
	struct rdma_get_ctx *ctx = test->priv;
	const struct amd_rdma_interface *ops = ctx->f->ops;
	unsigned long ps = 0, ps2 = 0;
	struct rdma_fake_bo *bo;
	struct amd_p2p_info *info;
	struct scatterlist *sg;
	u64 start, end;
	int i;

	bo = rdma_fake_bo(ctx->f, c->map_size, AMDGPU_GEM_DOMAIN_VRAM,
			  c->map_size >= SZ_2M ? 2 : 1, SZ_2M);
	rdma_fake_map(ctx->f, bo, c->map_va, 0, c->map_size, RDMA_FAKE_RW);
	KUNIT_ASSERT_EQ(test, ops->get_page_size(c->va, c->len,
						 task_pid(current), &ps), 0);
	KUNIT_EXPECT_TRUE(test, is_power_of_2(ps));
	KUNIT_EXPECT_LE(test, ps, PAGE_SIZE);
	start = ALIGN_DOWN(c->va, ps);
	end = ALIGN(c->va + c->len, ps);
	KUNIT_EXPECT_GE(test, start, c->map_va);
	KUNIT_EXPECT_LE(test, end, c->map_va + c->map_size);
	KUNIT_ASSERT_EQ(test, ops->get_pages(start, end - start,
					     task_pid(current), ctx->f->nic,
					     &info, NULL, NULL), 0);
	/* Every page of the rounded range is DMA-contiguous and aligned. */
	for_each_sgtable_dma_sg(info->pages, sg, i) {
		KUNIT_EXPECT_TRUE(test, IS_ALIGNED(sg_dma_address(sg), ps));
		KUNIT_EXPECT_TRUE(test, IS_ALIGNED(sg_dma_len(sg), ps));
	}
	/* Stable: the same answer now that the BO is pinned. */
	KUNIT_ASSERT_EQ(test, ops->get_page_size(c->va, c->len,
						 task_pid(current), &ps2), 0);
	KUNIT_EXPECT_EQ(test, ps, ps2);
	KUNIT_EXPECT_EQ(test, ops->put_pages(&info), 0);
}

struct rdma_cpu_page_case {
	const char *name;
	u64 map_va;
	u64 map_size;
	u64 offset;	/* of the mapping in its BO */
	u64 va;
	u64 len;
	unsigned long cpu_page;
	unsigned long expected;
};

static const struct rdma_cpu_page_case rdma_cpu_page_cases[] = {
	{ "64K pages, aligned mapping", SZ_256M, SZ_2M, 0, SZ_256M + 0x123,
	  0x3000, SZ_64K, SZ_64K },
	{ "64K pages, BO offset 4K", SZ_256M, SZ_2M, SZ_4K,
	  SZ_256M + 0x20010, 0x10, SZ_64K, SZ_4K },
	{ "64K pages, BO offset 32K", SZ_256M, SZ_1M, SZ_32K,
	  SZ_256M + SZ_64K, SZ_4K, SZ_64K, SZ_32K },
	/* VA and BO offset agree modulo 64K, neither on a 64K boundary */
	{ "64K pages, VA and offset agree", SZ_256M + SZ_4K, SZ_1M, SZ_4K,
	  SZ_256M + 0x20000, 0x100, SZ_64K, SZ_64K },
	{ "64K pages, at the start of that mapping", SZ_256M + SZ_4K, SZ_1M,
	  SZ_4K, SZ_256M + 0x1010, 0x10, SZ_64K, SZ_4K },
	{ "64K pages, 32K mapping", SZ_256M, SZ_32K, 0, SZ_256M + 0x100,
	  0x100, SZ_64K, SZ_32K },
	{ "64K pages, at the end of a 68K mapping", SZ_256M, SZ_64K + SZ_4K, 0,
	  SZ_256M + SZ_64K, SZ_4K, SZ_64K, SZ_4K },
	{ "4K pages, BO offset 4K", SZ_256M, SZ_2M, SZ_4K, SZ_256M + 0x20010,
	  0x10, SZ_4K, SZ_4K },
};

static void rdma_cpu_page_case_desc(const struct rdma_cpu_page_case *c,
				    char *desc)
{
	strscpy(desc, c->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(rdma_cpu_page, rdma_cpu_page_cases, rdma_cpu_page_case_desc);

/*
 * get_page_size()'s answer for a CPU page size that is a parameter, so
 * that the clauses that only bind where a CPU page is larger than a GPU
 * page (64 KiB on arm64 and ppc64) run on x86 too: the largest power of
 * two up to the CPU page that keeps the rounded range in the mapping and
 * at which VA and BO offset agree, so that each page of the rounded range
 * is one piece of the BO, inside one CPU page of it.
 */
static void rdma_page_size_cpu_page(struct kunit *test)
{
	const struct rdma_cpu_page_case *c = test->param_value;
	struct amdgpu_bo_va_mapping m = {
		.start = c->map_va >> AMDGPU_GPU_PAGE_SHIFT,
		.last = (c->map_va + c->map_size - 1) >> AMDGPU_GPU_PAGE_SHIFT,
		.offset = c->offset,
	};
	unsigned long ps;
	u64 start, end;

	ps = amdgpu_rdma_page_size(&m, c->va, c->len, c->cpu_page);
	KUNIT_EXPECT_EQ(test, ps, c->expected);
	KUNIT_EXPECT_TRUE(test, is_power_of_2(ps));
	KUNIT_EXPECT_LE(test, ps, c->cpu_page);
	start = ALIGN_DOWN(c->va, ps);
	end = ALIGN(c->va + c->len, ps);
	KUNIT_EXPECT_GE(test, start, c->map_va);
	KUNIT_EXPECT_LE(test, end, c->map_va + c->map_size);
	/* The BO offset of the rounded start: on a page boundary of its own */
	KUNIT_EXPECT_EQ(test, (start - c->map_va + c->offset) & (ps - 1), 0);
}

/* ---- the real pin backend: real BOs through TTM ---- */

#define REAL_VA		(8ULL << 30)
/*
 * Two chunks of memory: a 2 MiB one and a 64 KiB one (ttm_pool allocates
 * by order, the VRAM manager's buddy allocator by block), so that a range
 * across REAL_SPLIT is a table of two entries in VRAM (one per block),
 * and in GTT unless the two happen to be adjacent
 */
#define REAL_SPLIT	SZ_2M
#define REAL_BO_SIZE	(SZ_2M + SZ_64K)

struct rdma_real_case {
	const char *name;
	u32 domain;
};

static const struct rdma_real_case rdma_real_cases[] = {
	{ "GTT", AMDGPU_GEM_DOMAIN_GTT },
	{ "VRAM", AMDGPU_GEM_DOMAIN_VRAM },
};

static void rdma_real_case_desc(const struct rdma_real_case *c, char *desc)
{
	strscpy(desc, c->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(rdma_real, rdma_real_cases, rdma_real_case_desc);

/*
 * A real BO of @domain; in VRAM a CPU-visible one, as the pin wants it (the
 * fake GPU has no copy engine to move it there)
 */
static struct rdma_fake_bo *rdma_real_bo(struct rdma_fake *f, u64 size,
					 u32 domain)
{
	return rdma_fake_real_bo(f, size, domain,
				 domain == AMDGPU_GEM_DOMAIN_VRAM ?
				 AMDGPU_GEM_CREATE_CPU_ACCESS_REQUIRED : 0);
}

/*
 * A real BO of @domain, mapped at REAL_VA. A VRAM BO is created
 * CPU-visible, as the pin wants it (the fake GPU has no copy engine to
 * move it there).
 */
static struct rdma_get_ctx *rdma_real_ctx_domain(struct kunit *test,
						 u32 domain)
{
	struct rdma_get_ctx *ctx;

	ctx = kunit_kzalloc(test, sizeof(*ctx), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, ctx);
	ctx->f = rdma_fake_init_real(test);
	ctx->bo = rdma_real_bo(ctx->f, REAL_BO_SIZE, domain);
	ctx->m = rdma_fake_map(ctx->f, ctx->bo, REAL_VA, 0, REAL_BO_SIZE,
			       RDMA_FAKE_RW);
	test->priv = ctx;
	return ctx;
}

/* rdma_real_ctx_domain() in the domain of the case */
static struct rdma_get_ctx *rdma_real_ctx(struct kunit *test)
{
	const struct rdma_real_case *c = test->param_value;

	return rdma_real_ctx_domain(test, c->domain);
}

/*
 * What the NIC would DMA: every page of the table is the BO's page at
 * that offset (its system page for GTT, its place behind the BAR for VRAM).
 */
static void rdma_real_expect_table_dev(struct kunit *test,
				       const struct amd_p2p_info *info,
				       const struct rdma_fake_bo *bo, u64 off,
				       u64 len, const struct device *dev)
{
	struct scatterlist *sg;
	u64 at;
	int i;

	KUNIT_EXPECT_EQ(test, rdma_fake_sg_len(info), len);
	for_each_sgtable_dma_sg(info->pages, sg, i) {
		/* Where the entry starts, and at each page it crosses into */
		for (at = off; at < off + sg_dma_len(sg);
		     at = ALIGN_DOWN(at, PAGE_SIZE) + PAGE_SIZE)
			KUNIT_EXPECT_EQ(test, sg_dma_address(sg) + (at - off),
					rdma_fake_dma_dev(bo, at, dev));
		off += sg_dma_len(sg);
	}
}

static void rdma_real_expect_table(struct kunit *test,
				   const struct amd_p2p_info *info,
				   const struct rdma_fake_bo *bo, u64 off,
				   u64 len)
{
	struct rdma_get_ctx *ctx = test->priv;

	rdma_real_expect_table_dev(test, info, bo, off, len, ctx->f->nic);
}

/*
 * A first get that failed after its pin: *info untouched, every pin made
 * so far (@pins) undone by the real unpin, the BO unpinned, the GPU idle
 */
static void rdma_real_expect_undone(struct kunit *test,
				    struct amd_p2p_info *info,
				    struct amd_p2p_info *poison, int pins)
{
	struct rdma_get_ctx *ctx = test->priv;

	KUNIT_EXPECT_PTR_EQ(test, info, poison);
	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->f->pins), pins);
	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->f->unpins), pins);
	KUNIT_EXPECT_EQ(test, ctx->bo->bo.tbo.pin_count, 0);
	KUNIT_EXPECT_EQ(test, amdgpu_rdma_test_dev(ctx->f->adev)->busy, 0U);
}

/*
 * Gets and puts through amdgpu_rdma_pin()/amdgpu_rdma_unpin(): two gets
 * of one BO share one real pin; the NIC sees the BO's own pages; the last
 * put unpins it and drops its runtime PM reference (checked at the end).
 */
static void rdma_real_backend_get_put(struct kunit *test)
{
	const struct rdma_real_case *c = test->param_value;
	struct rdma_get_ctx *ctx = rdma_real_ctx(test);
	const struct amd_rdma_interface *ops = ctx->f->ops;
	struct amdgpu_bo *bo = &ctx->bo->bo;
	struct device *gpu = ctx->f->adev->dev;
	struct amd_p2p_info *a, *b, *x, *d;
	u64 off = SZ_64K + 0x100, len = 3 * SZ_4K + 0x80;
	u64 xoff = REAL_SPLIT - SZ_4K - 0x40, xlen = 2 * SZ_4K;
	int r;

	KUNIT_ASSERT_EQ(test, rdma_get(test, REAL_VA + off, len, &a), 0);
	KUNIT_EXPECT_EQ(test, ctx->f->last_dir, DMA_BIDIRECTIONAL);
	KUNIT_ASSERT_EQ(test, rdma_get(test, REAL_VA, REAL_BO_SIZE, &b), 0);
	KUNIT_ASSERT_EQ(test, rdma_get(test, REAL_VA + xoff, xlen, &x), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->f->pins), 1);
	KUNIT_EXPECT_EQ(test, bo->tbo.pin_count, 1);
	KUNIT_EXPECT_EQ(test, bo->tbo.resource->mem_type,
			c->domain == AMDGPU_GEM_DOMAIN_VRAM ? TTM_PL_VRAM :
			TTM_PL_TT);
	KUNIT_EXPECT_EQ(test, atomic_read(&gpu->power.usage_count), 1);
	rdma_real_expect_table(test, a, ctx->bo, off, len);
	rdma_real_expect_table(test, b, ctx->bo, 0, REAL_BO_SIZE);
	rdma_real_expect_table(test, x, ctx->bo, xoff, xlen);
	/* One entry per DMA-contiguous run: two unless the chunks touch */
	KUNIT_EXPECT_EQ(test, x->pages->nents,
			rdma_fake_dma(ctx->bo, REAL_SPLIT) ==
			rdma_fake_dma(ctx->bo, REAL_SPLIT - 1) + 1 ? 1U : 2U);
	/*
	 * Another NIC: a pin of its own, mapped for it. A NULL pid is the
	 * calling process (API 2.0).
	 */
	r = ctx->f->ops->get_pages(REAL_VA + off, len, NULL, ctx->f->nic2, &d,
				   NULL, NULL);
	KUNIT_ASSERT_EQ(test, r, 0);
	KUNIT_EXPECT_PTR_EQ(test, d->pid, task_pid(current));
	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->f->pins), 2);
	KUNIT_EXPECT_EQ(test, bo->tbo.pin_count, 2);
	rdma_real_expect_table_dev(test, d, ctx->bo, off, len, ctx->f->nic2);
	KUNIT_EXPECT_EQ(test, ops->put_pages(&d), 0);
	KUNIT_EXPECT_EQ(test, ops->put_pages(&a), 0);
	KUNIT_EXPECT_EQ(test, ops->put_pages(&x), 0);
	amdkfd_rdma_synchronize();
	KUNIT_EXPECT_EQ(test, bo->tbo.pin_count, 1);
	KUNIT_EXPECT_EQ(test, ops->put_pages(&b), 0);
	amdkfd_rdma_synchronize();
	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->f->unpins), 2);
	KUNIT_EXPECT_EQ(test, bo->tbo.pin_count, 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&gpu->power.usage_count), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->callbacks), 0);
}

/* A read-only GPU mapping: the NIC may only read, through its own pin */
static void rdma_real_backend_read_only(struct kunit *test)
{
	const struct rdma_real_case *c = test->param_value;
	struct rdma_get_ctx *ctx = rdma_real_ctx(test);
	struct rdma_fake_bo *ro;
	struct amd_p2p_info *a;

	ro = rdma_real_bo(ctx->f, SZ_64K, c->domain);
	rdma_fake_map(ctx->f, ro, 2 * REAL_VA, 0, SZ_64K, AMDGPU_PTE_READABLE);
	KUNIT_ASSERT_EQ(test, rdma_get(test, 2 * REAL_VA + SZ_4K, SZ_8K, &a), 0);
	KUNIT_EXPECT_EQ(test, ctx->f->last_dir, DMA_TO_DEVICE);
	rdma_real_expect_table(test, a, ro, SZ_4K, SZ_8K);
	KUNIT_EXPECT_EQ(test, ro->bo.tbo.pin_count, 1);
	KUNIT_EXPECT_EQ(test, ctx->f->ops->put_pages(&a), 0);
	amdkfd_rdma_synchronize();
	KUNIT_EXPECT_EQ(test, ro->bo.tbo.pin_count, 0);
}

/*
 * The GPU is revoked, or the VM's owner dies, while the first get pins:
 * the get fails (-ENODEV, -ESRCH) and the real unpin runs once the get's
 * locks are dropped, before get_pages() returns.
 */
static void rdma_real_backend_lost_while_pinning(struct kunit *test)
{
	struct rdma_get_ctx *ctx = rdma_real_ctx(test);
	struct amd_p2p_info *a, *poison = ERR_PTR(-EBADF);
	struct amdgpu_bo *bo = &ctx->bo->bo;

	/* Creates the VM's owner, which the second half kills */
	KUNIT_ASSERT_EQ(test, rdma_get(test, REAL_VA, SZ_4K, &a), 0);
	KUNIT_EXPECT_EQ(test, ctx->f->ops->put_pages(&a), 0);
	amdkfd_rdma_synchronize();
	KUNIT_ASSERT_EQ(test, bo->tbo.pin_count, 0);

	ctx->f->pin_kills_owner = true;
	a = poison;
	KUNIT_EXPECT_EQ(test, rdma_get(test, REAL_VA, SZ_4K, &a), -ESRCH);
	rdma_real_expect_undone(test, a, poison, 2);

	/* A revocation waits for the pins in progress (busy) */
	ctx->f->vm->rdma->dead = false;
	ctx->f->pin_revokes = true;
	KUNIT_EXPECT_EQ(test, rdma_get(test, REAL_VA, SZ_4K, &a), -ENODEV);
	rdma_real_expect_undone(test, a, poison, 3);
}

/*
 * hipFree() while a NIC still holds registrations. One with a free
 * callback: the callback runs at the unmap and the pin goes with it, so
 * the BO's memory is freed with the BO, before the client's late put. A
 * persistent one (NULL callback): the BO lives on, pinned, until the put,
 * whose real unpin drops its last reference and frees its memory.
 */
static void rdma_real_backend_free_while_registered(struct kunit *test)
{
	struct rdma_get_ctx *ctx = rdma_real_ctx(test);
	const struct rdma_real_case *c = test->param_value;
	struct ttm_resource_manager *man;
	struct rdma_fake_bo *bo2;
	struct amd_p2p_info *a, *p;
	u64 used;
	int pinned, r;

	man = ttm_manager_type(&ctx->f->adev->mman.bdev,
			       c->domain == AMDGPU_GEM_DOMAIN_VRAM ?
			       TTM_PL_VRAM : TTM_PL_TT);
	used = ttm_resource_manager_usage(man);
	KUNIT_ASSERT_GE(test, used, (u64)REAL_BO_SIZE);
	KUNIT_ASSERT_EQ(test, rdma_get(test, REAL_VA, SZ_4K, &a), 0);
	KUNIT_ASSERT_EQ(test, rdma_fake_unmap(ctx->f, ctx->bo, REAL_VA), 0);
	amdgpu_rdma_process_flush(ctx->f->p);
	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->callbacks), 1);
	amdkfd_rdma_synchronize();
	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->f->unpins), 1);
	rdma_fake_bo_del(ctx->f, ctx->bo);
	rdma_fake_real_bo_drop(ctx->f, ctx->bo);
	KUNIT_EXPECT_EQ(test, ttm_resource_manager_usage(man), used - REAL_BO_SIZE);
	KUNIT_EXPECT_EQ(test, ctx->f->ops->put_pages(&a), 0);

	bo2 = rdma_real_bo(ctx->f, REAL_BO_SIZE, c->domain);
	rdma_fake_map(ctx->f, bo2, REAL_VA, 0, REAL_BO_SIZE, RDMA_FAKE_RW);
	r = ctx->f->ops->get_pages(REAL_VA, SZ_4K, task_pid(current),
				   ctx->f->nic, &p, NULL, NULL);
	KUNIT_ASSERT_EQ(test, r, 0);
	KUNIT_ASSERT_EQ(test, rdma_fake_unmap(ctx->f, bo2, REAL_VA), 0);
	amdgpu_rdma_process_flush(ctx->f->p);
	rdma_fake_bo_del(ctx->f, bo2);
	pinned = atomic_read(&bo2->pinned);
	rdma_fake_real_bo_drop(ctx->f, bo2);
	/* Still there: the persistent pin holds it */
	KUNIT_EXPECT_EQ(test, pinned, 1);
	KUNIT_EXPECT_EQ(test, ttm_resource_manager_usage(man), used);
	KUNIT_EXPECT_EQ(test, ctx->f->ops->put_pages(&p), 0);
	amdkfd_rdma_synchronize();
	KUNIT_EXPECT_EQ(test, ttm_resource_manager_usage(man), used - REAL_BO_SIZE);
	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->f->unpins), 2);
}

/*
 * Over the quota: a first get pins nothing; a repeated one leaves the
 * pin its registration shares as it was.
 */
static void rdma_real_backend_quota(struct kunit *test)
{
	struct rdma_get_ctx *ctx = rdma_real_ctx(test);
	const struct amd_rdma_interface *ops = ctx->f->ops;
	struct amdgpu_peer_dev *gpu = amdgpu_rdma_test_dev(ctx->f->adev);
	struct amd_p2p_info *a, *poison = ERR_PTR(-EBADF), *b = poison;
	struct amdgpu_bo *bo = &ctx->bo->bo;

	gpu->limit = SZ_4K;
	KUNIT_EXPECT_EQ(test, rdma_get(test, REAL_VA, 2 * SZ_4K, &b), -ENOSPC);
	KUNIT_EXPECT_PTR_EQ(test, b, poison);
	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->f->pins), 0);
	KUNIT_EXPECT_EQ(test, bo->tbo.pin_count, 0);

	KUNIT_ASSERT_EQ(test, rdma_get(test, REAL_VA, SZ_4K, &a), 0);
	KUNIT_EXPECT_EQ(test, rdma_get(test, REAL_VA + SZ_4K, SZ_4K, &b),
			-ENOSPC);
	KUNIT_EXPECT_PTR_EQ(test, b, poison);
	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->f->pins), 1);
	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->f->unpins), 0);
	KUNIT_EXPECT_EQ(test, bo->tbo.pin_count, 1);
	KUNIT_EXPECT_EQ(test, gpu->busy, 0U);
	/* hfi1's evict and retry: put, and get again at once */
	KUNIT_EXPECT_EQ(test, ops->put_pages(&a), 0);
	KUNIT_ASSERT_EQ(test, rdma_get(test, REAL_VA + SZ_4K, SZ_4K, &b), 0);
	rdma_real_expect_table(test, b, ctx->bo, SZ_4K, SZ_4K);
	KUNIT_EXPECT_EQ(test, ops->put_pages(&b), 0);
	amdkfd_rdma_synchronize();
	KUNIT_EXPECT_EQ(test, bo->tbo.pin_count, 0);
}

/*
 * The quota runs out while the first get pins (another process took it):
 * the real unpin, which reserves the BO, runs only after the get dropped
 * the reservations it pinned under (under them lockdep reports recursive
 * locking, and the thread hangs), before get_pages() returns.
 */
static void rdma_real_backend_quota_race_unpins_unlocked(struct kunit *test)
{
	struct rdma_get_ctx *ctx = rdma_real_ctx(test);
	const struct amd_rdma_interface *ops = ctx->f->ops;
	struct amdgpu_peer_dev *gpu = amdgpu_rdma_test_dev(ctx->f->adev);
	struct amd_p2p_info *a, *poison = ERR_PTR(-EBADF);
	struct amdgpu_bo *bo = &ctx->bo->bo;

	gpu->limit = SZ_1M;
	ctx->f->pin_takes_quota = true;
	a = poison;
	KUNIT_EXPECT_EQ(test, rdma_get(test, REAL_VA, SZ_4K, &a), -ENOSPC);
	rdma_real_expect_undone(test, a, poison, 1);
	gpu->charged = 0;
	KUNIT_ASSERT_EQ(test, rdma_get(test, REAL_VA, SZ_4K, &a), 0);
	KUNIT_EXPECT_EQ(test, bo->tbo.pin_count, 1);
	KUNIT_EXPECT_EQ(test, ops->put_pages(&a), 0);
}

/*
 * The real pin fails: a VRAM BO outside the CPU-visible VRAM must move
 * into it (the peer reaches VRAM through the BAR), and the fake GPU has
 * no engine to move it (amdgpu_bo_move(): -ENODEV); if somebody else
 * pinned it there already, it cannot move, and the pin unpins it again
 * (-EREMOTEIO). Either way the first get fails with nothing pinned by it.
 */
static void rdma_real_backend_pin_fails(struct kunit *test)
{
	struct rdma_fake *f = rdma_fake_init_real(test);
	struct amd_p2p_info *poison = ERR_PTR(-EBADF), *a = poison;
	struct rdma_fake_bo *hi;
	struct amdgpu_bo *bo;
	atomic_t cbs = ATOMIC_INIT(0);
	int r;

	/* No CPU access: the top of VRAM, past the visible part */
	hi = rdma_fake_real_bo(f, REAL_BO_SIZE, AMDGPU_GEM_DOMAIN_VRAM,
			       AMDGPU_GEM_CREATE_NO_CPU_ACCESS);
	bo = &hi->bo;
	KUNIT_ASSERT_EQ(test, bo->tbo.resource->mem_type, TTM_PL_VRAM);
	KUNIT_ASSERT_FALSE(test, amdgpu_res_cpu_visible(f->adev, bo->tbo.resource));
	rdma_fake_map(f, hi, REAL_VA, 0, REAL_BO_SIZE, RDMA_FAKE_RW);

	KUNIT_EXPECT_EQ(test, rdma_fake_get(f, REAL_VA, SZ_4K, rdma_free_cb, &cbs, &a),
			-ENODEV);
	KUNIT_EXPECT_PTR_EQ(test, a, poison);
	KUNIT_EXPECT_EQ(test, bo->tbo.pin_count, 0);

	/* The failed pin gave back the flag it set to move the BO */
	KUNIT_EXPECT_FALSE(test, bo->flags & AMDGPU_GEM_CREATE_CPU_ACCESS_REQUIRED);

	/* Pinned where it is by another user (NO_CPU_ACCESS: it stays) */
	KUNIT_ASSERT_EQ(test, amdgpu_bo_reserve(bo, false), 0);
	r = amdgpu_bo_pin(bo, AMDGPU_GEM_DOMAIN_VRAM);
	amdgpu_bo_unreserve(bo);
	KUNIT_ASSERT_EQ(test, r, 0);
	KUNIT_EXPECT_EQ(test, rdma_fake_get(f, REAL_VA, SZ_4K, rdma_free_cb, &cbs, &a),
			-EREMOTEIO);
	KUNIT_EXPECT_PTR_EQ(test, a, poison);
	/* Its own pin undone: the other user's is left */
	KUNIT_EXPECT_EQ(test, bo->tbo.pin_count, 1);
	KUNIT_EXPECT_FALSE(test, bo->flags & AMDGPU_GEM_CREATE_CPU_ACCESS_REQUIRED);
	KUNIT_EXPECT_EQ(test, atomic_read(&f->adev->dev->power.usage_count), 0);
	if (!amdgpu_bo_reserve(bo, false)) {
		amdgpu_bo_unpin(bo);
		amdgpu_bo_unreserve(bo);
	}
}

/*
 * The device goes away with a registration live: the real unpin runs at
 * amdgpu_rdma_device_fini(), the put still works, nothing new is pinned.
 */
static void rdma_real_backend_after_unplug(struct kunit *test)
{
	struct rdma_get_ctx *ctx = rdma_real_ctx(test);
	const struct amd_rdma_interface *ops = ctx->f->ops;
	struct amd_p2p_info *a, *b, *poison = ERR_PTR(-EBADF);
	struct amdgpu_bo *bo = &ctx->bo->bo;

	KUNIT_ASSERT_EQ(test, rdma_get(test, REAL_VA, SZ_4K, &a), 0);
	adev_to_drm(ctx->f->adev)->unplugged = true;
	amdgpu_rdma_device_fini(ctx->f->adev);
	KUNIT_EXPECT_EQ(test, bo->tbo.pin_count, 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->callbacks), 1);
	b = poison;
	KUNIT_EXPECT_EQ(test, rdma_get(test, REAL_VA, SZ_4K, &b), -ENODEV);
	KUNIT_EXPECT_PTR_EQ(test, b, poison);
	KUNIT_EXPECT_EQ(test, bo->tbo.pin_count, 0);
	KUNIT_EXPECT_EQ(test, ops->put_pages(&a), 0);
	adev_to_drm(ctx->f->adev)->unplugged = false;
}

/*
 * The hot path: a repeated get of an already registered BO for the same
 * DMA device. Counts from one run, not times: sleeping locks (per process:
 * the KFD process mutex and the VM root reservation; global: none),
 * drm_exec transactions and allocations, for the 1st and the Nth get.
 */
static void rdma_real_backend_bench_repeat_get(struct kunit *test)
{
	struct rdma_get_ctx *ctx = rdma_real_ctx_domain(test,
							AMDGPU_GEM_DOMAIN_GTT);
	struct amdgpu_rdma_counters *cnt = amdgpu_rdma_test_counters();
	struct amdgpu_peer_mgr *mgr = amdgpu_rdma_test_mgr();
	const unsigned int n = 128;
	struct amd_p2p_info **info;
	int v[2][7], d[7];
	unsigned int i, k;

	info = kunit_kcalloc(test, n, sizeof(*info), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, info);
	for (i = 0; i < n; i++) {
		int *s = v[0];

		for (k = 0; k < 2; k++) {
			s = v[k];
			s[0] = atomic_read(&cnt->proc_locks);
			s[1] = atomic_read(&cnt->root_locks);
			s[2] = atomic_read(&cnt->exec_locks);
			s[3] = atomic_read(&cnt->global_locks);
			s[4] = atomic_read(&mgr->stats.allocs) +
			       atomic_read(&cnt->allocs);
			s[5] = atomic_read(&mgr->stats.lock_taken);
			s[6] = atomic_read(&mgr->stats.pins);
			if (!k)
				KUNIT_ASSERT_EQ(test,
						rdma_get(test,
							 REAL_VA + (i % 64) * SZ_4K,
							 SZ_4K, &info[i]), 0);
		}
		for (k = 0; k < 7; k++)
			d[k] = v[1][k] - v[0][k];
		if (!i || i == n - 1)
			kunit_info(test,
				   "bench: get %u of one BO: %d process mutex, %d root reservation alone, %d drm_exec (BO lock), %d global mutex, %d allocations of ours, %d core spinlock sections, %d pins\n",
				   i + 1, d[0], d[1], d[2], d[3], d[4], d[5],
				   d[6]);
	}
	/* The Nth get: no global sleeping lock, one allocation. */
	KUNIT_EXPECT_EQ(test, d[2], 0);
	KUNIT_EXPECT_EQ(test, d[3], 0);
	KUNIT_EXPECT_EQ(test, d[4], 1);
	KUNIT_EXPECT_EQ(test, d[6], 0);
	for (i = 0; i < n; i++)
		KUNIT_EXPECT_EQ(test, ctx->f->ops->put_pages(&info[i]), 0);
}

struct rdma_cpu_access_case {
	const char *name;
	u32 domain;
	/* the flag was set before the peers pinned (a CPU fault sets it) */
	bool set_before;
};

static const struct rdma_cpu_access_case rdma_cpu_access_cases[] = {
	{ "GTT, clear before", AMDGPU_GEM_DOMAIN_GTT, false },
	{ "GTT, set before", AMDGPU_GEM_DOMAIN_GTT, true },
	{ "VRAM, clear before", AMDGPU_GEM_DOMAIN_VRAM, false },
	{ "VRAM, set before", AMDGPU_GEM_DOMAIN_VRAM, true },
};

static void rdma_cpu_access_case_desc(const struct rdma_cpu_access_case *c,
				      char *desc)
{
	strscpy(desc, c->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(rdma_cpu_access, rdma_cpu_access_cases,
		  rdma_cpu_access_case_desc);

/*
 * A VRAM pin keeps the BO in CPU-visible VRAM (the peer reaches it
 * through the BAR) by setting AMDGPU_GEM_CREATE_CPU_ACCESS_REQUIRED, and
 * amdgpu_bo_pin() sets it at any first pin. The last peer pin gives it
 * back: the BO is free to go anywhere in VRAM again, unless the flag was
 * set before the peers came.
 */
static void rdma_real_backend_cpu_access_flag(struct kunit *test)
{
	const struct rdma_cpu_access_case *c = test->param_value;
	struct rdma_get_ctx *ctx = rdma_real_ctx_domain(test, c->domain);
	const struct amd_rdma_interface *ops = ctx->f->ops;
	struct amdgpu_bo *bo = &ctx->bo->bo;
	struct amd_p2p_info *a, *b, *d;

	/* amdgpu_bo_create() takes the flag for a hint and drops it */
	KUNIT_ASSERT_FALSE(test, bo->flags & AMDGPU_GEM_CREATE_CPU_ACCESS_REQUIRED);
	if (c->set_before)
		bo->flags |= AMDGPU_GEM_CREATE_CPU_ACCESS_REQUIRED;
	KUNIT_ASSERT_EQ(test, rdma_get(test, REAL_VA, SZ_4K, &a), 0);
	KUNIT_ASSERT_EQ(test, rdma_get(test, REAL_VA + SZ_4K, SZ_4K, &b), 0);
	/* A second NIC: a second pin of the same BO */
	KUNIT_ASSERT_EQ(test, ops->get_pages(REAL_VA, SZ_4K, task_pid(current),
					     ctx->f->nic2, &d, NULL, NULL), 0);
	KUNIT_EXPECT_EQ(test, bo->tbo.pin_count, 2);
	KUNIT_EXPECT_TRUE(test, bo->flags & AMDGPU_GEM_CREATE_CPU_ACCESS_REQUIRED);
	KUNIT_EXPECT_EQ(test, ops->put_pages(&a), 0);
	KUNIT_EXPECT_EQ(test, ops->put_pages(&d), 0);
	amdkfd_rdma_synchronize();
	/* One pin left */
	KUNIT_EXPECT_EQ(test, bo->tbo.pin_count, 1);
	KUNIT_EXPECT_TRUE(test, bo->flags & AMDGPU_GEM_CREATE_CPU_ACCESS_REQUIRED);
	KUNIT_EXPECT_EQ(test, ops->put_pages(&b), 0);
	amdkfd_rdma_synchronize();
	KUNIT_EXPECT_EQ(test, bo->tbo.pin_count, 0);
	KUNIT_EXPECT_EQ(test, !!(bo->flags & AMDGPU_GEM_CREATE_CPU_ACCESS_REQUIRED),
			c->set_before);
	/* And again from the start: the first pin sets it afresh */
	KUNIT_ASSERT_EQ(test, rdma_get(test, REAL_VA, SZ_4K, &a), 0);
	KUNIT_EXPECT_TRUE(test, bo->flags & AMDGPU_GEM_CREATE_CPU_ACCESS_REQUIRED);
	KUNIT_EXPECT_EQ(test, ops->put_pages(&a), 0);
	amdkfd_rdma_synchronize();
	KUNIT_EXPECT_EQ(test, !!(bo->flags & AMDGPU_GEM_CREATE_CPU_ACCESS_REQUIRED),
			c->set_before);
}

/*
 * The peer's DMA mapping fails inside the pin, after amdgpu_bo_pin(), as
 * mapping through an IOMMU out of address space does (iommu_dma_map_sg()
 * and iommu_dma_map_resource() fail with -ENOMEM; the test machine has
 * no IOMMU, and dma-direct only fails with a WARN): the pin unpins the
 * BO under the get's reservation and gives back the CPU-access flag;
 * nothing is left pinned, mapped or held awake.
 */
static int rdma_dma_map_fails(struct amdgpu_device *adev, struct amdgpu_bo *bo,
			      struct device *dma_dev,
			      enum dma_data_direction dir,
			      struct sg_table **out)
{
	/* Called with the BO pinned, where the real mapping would be made */
	KUNIT_EXPECT_EQ(kunit_get_current_test(), bo->tbo.pin_count, 1);
	return -ENOMEM;
}

static void rdma_real_backend_dma_map_fails(struct kunit *test)
{
	struct rdma_get_ctx *ctx = rdma_real_ctx(test);
	struct amd_p2p_info *poison = ERR_PTR(-EBADF), *a = poison;
	struct amdgpu_bo *bo = &ctx->bo->bo;

	kunit_activate_static_stub(test, amdgpu_rdma_dma_map,
				   rdma_dma_map_fails);
	KUNIT_EXPECT_EQ(test, rdma_get(test, REAL_VA, SZ_4K, &a), -ENOMEM);
	kunit_deactivate_static_stub(test, amdgpu_rdma_dma_map);
	KUNIT_EXPECT_PTR_EQ(test, a, poison);
	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->f->pins), 0);
	KUNIT_EXPECT_EQ(test, bo->tbo.pin_count, 0);
	KUNIT_EXPECT_FALSE(test, bo->flags & AMDGPU_GEM_CREATE_CPU_ACCESS_REQUIRED);
	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->f->adev->dev->power.usage_count),
			0);
	KUNIT_EXPECT_EQ(test, amdgpu_rdma_test_dev(ctx->f->adev)->busy, 0U);
	/* The next get maps it */
	KUNIT_ASSERT_EQ(test, rdma_get(test, REAL_VA, SZ_4K, &a), 0);
	rdma_real_expect_table(test, a, ctx->bo, 0, SZ_4K);
	KUNIT_EXPECT_EQ(test, ctx->f->ops->put_pages(&a), 0);
}

/*
 * The DMA API refuses to map a GTT BO's pages for the peer (an IOMMU out
 * of address space): the get fails, the table built for the pages is
 * freed (the leak scan at the end of the run finds one that is not) and
 * the BO unpinned; the next get maps it.
 */
static int rdma_map_sgtable_fails(struct device *dma_dev, struct sg_table *sgt,
				  enum dma_data_direction dir)
{
	/* Called with the table of the BO's pages built */
	KUNIT_EXPECT_GT(kunit_get_current_test(), sgt->orig_nents, 0U);
	return -ENOMEM;
}

static void rdma_real_backend_gtt_map_fails(struct kunit *test)
{
	struct rdma_get_ctx *ctx = rdma_real_ctx_domain(test,
							AMDGPU_GEM_DOMAIN_GTT);
	struct amd_p2p_info *poison = ERR_PTR(-EBADF), *a = poison;
	struct amdgpu_bo *bo = &ctx->bo->bo;

	kunit_activate_static_stub(test, amdgpu_rdma_map_sgtable,
				   rdma_map_sgtable_fails);
	KUNIT_EXPECT_EQ(test, rdma_get(test, REAL_VA, SZ_4K, &a), -ENOMEM);
	kunit_deactivate_static_stub(test, amdgpu_rdma_map_sgtable);
	KUNIT_EXPECT_PTR_EQ(test, a, poison);
	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->f->pins), 0);
	KUNIT_EXPECT_EQ(test, bo->tbo.pin_count, 0);
	KUNIT_ASSERT_EQ(test, rdma_get(test, REAL_VA, SZ_4K, &a), 0);
	rdma_real_expect_table(test, a, ctx->bo, 0, SZ_4K);
	KUNIT_EXPECT_EQ(test, ctx->f->ops->put_pages(&a), 0);
}

/* A put from another thread, as the NIC driver's completion path does */
struct rdma_put_thread {
	const struct amd_rdma_interface *ops;
	struct amd_p2p_info *info;
	struct completion started;
	struct completion done;
	int ret;
	/* for the callback-waiting case: the callback had returned */
	bool *cb_done;
	bool saw_cb_done;
};

static int rdma_put_thread_fn(void *data)
{
	struct rdma_put_thread *t = data;

	complete(&t->started);
	t->ret = t->ops->put_pages(&t->info);
	if (t->cb_done)
		t->saw_cb_done = READ_ONCE(*t->cb_done);
	complete(&t->done);
	return 0;
}

/* Run a put of @info on another thread; returns once the put returned */
static int rdma_put_elsewhere(struct kunit *test,
			      const struct amd_rdma_interface *ops,
			      struct amd_p2p_info **info)
{
	struct rdma_put_thread t = { .ops = ops, .info = *info };
	struct task_struct *k;

	init_completion(&t.started);
	init_completion(&t.done);
	k = kthread_run(rdma_put_thread_fn, &t, "rdma_put");
	KUNIT_ASSERT_FALSE(test, IS_ERR(k));
	wait_for_completion(&t.done);
	*info = NULL;
	return t.ret;
}

/*
 * -ENOMEM after the pin: the registration's own allocation fails
 * (the core's one allocation after the pin is held, which a test makes
 * through &amdgpu_peer_mgr.reg_alloc). In a first get the pin it made
 * goes (after the get's locks are dropped: the real unpin reserves the
 * BO). In a repeated get another
 * thread's put of the only other registration, let through while this
 * get holds a use of the pin, leaves the failed get its last user: the
 * get unpins it, after it dropped its locks, and the put's release does
 * not.
 */
struct rdma_alloc_fail {
	struct kunit *test;
	struct rdma_get_ctx *ctx;
	/* put this registration from another thread first */
	struct amd_p2p_info *put;
	int put_ret;
};

static struct rdma_alloc_fail *rdma_alloc_fail_current;

static void *rdma_reg_alloc_fails(struct amdgpu_peer_mgr *mgr, size_t size)
{
	struct rdma_alloc_fail *x = rdma_alloc_fail_current;
	int regs;

	if (x->put) {
		/* The put's release drops its use of the pin on a worker */
		regs = atomic_read(&mgr->stats.regs);
		x->put_ret = rdma_put_elsewhere(x->test, x->ctx->f->ops,
						&x->put);
		while (atomic_read(&mgr->stats.regs) != regs - 1)
			usleep_range(1000, 2000);
		/* The pin is still there, in use by this get alone */
		KUNIT_EXPECT_TRUE(x->test,
				  amdgpu_peer_mgr_obj_pinned(mgr, &x->ctx->bo->bo));
	}
	return NULL;
}

static void rdma_real_backend_enomem_after_pin(struct kunit *test)
{
	struct rdma_get_ctx *ctx = rdma_real_ctx(test);
	struct amd_p2p_info *poison = ERR_PTR(-EBADF), *a = poison, *b;
	struct rdma_alloc_fail x = { .test = test, .ctx = ctx };
	struct amdgpu_peer_mgr *mgr = amdgpu_rdma_test_mgr();
	struct amdgpu_bo *bo = &ctx->bo->bo;

	rdma_alloc_fail_current = &x;
	mgr->reg_alloc = rdma_reg_alloc_fails;
	/* A first get */
	KUNIT_EXPECT_EQ(test, rdma_get(test, REAL_VA, SZ_4K, &a), -ENOMEM);
	mgr->reg_alloc = NULL;
	rdma_real_expect_undone(test, a, poison, 1);
	KUNIT_EXPECT_FALSE(test, bo->flags & AMDGPU_GEM_CREATE_CPU_ACCESS_REQUIRED);

	/* A repeated get, whose pin loses its other user meanwhile */
	KUNIT_ASSERT_EQ(test, rdma_get(test, REAL_VA, SZ_4K, &a), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->f->pins), 2);
	x.put = a;
	b = poison;
	mgr->reg_alloc = rdma_reg_alloc_fails;
	KUNIT_EXPECT_EQ(test, rdma_get(test, REAL_VA + SZ_4K, SZ_4K, &b),
			-ENOMEM);
	mgr->reg_alloc = NULL;
	KUNIT_EXPECT_EQ(test, x.put_ret, 0);
	/* No new pin; the get unpinned the shared one before it returned */
	rdma_real_expect_undone(test, b, poison, 2);
	KUNIT_EXPECT_FALSE(test, amdgpu_peer_mgr_obj_pinned(mgr, bo));
	KUNIT_EXPECT_EQ(test, amdgpu_rdma_test_dev(ctx->f->adev)->charged, 0ULL);
	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->callbacks), 0);
	rdma_alloc_fail_current = NULL;
}

/*
 * A range outside the pin's table: -EFAULT, and the pin the get made goes
 * once its locks are dropped. amdgpu_rdma_pin() maps all of the BO, so
 * the table is cut short after the real pin (see &rdma_fake.pin_short).
 */
static void rdma_real_backend_outside_table(struct kunit *test)
{
	struct rdma_get_ctx *ctx = rdma_real_ctx(test);
	struct amd_p2p_info *poison = ERR_PTR(-EBADF), *a = poison;

	ctx->f->pin_short = true;
	KUNIT_EXPECT_EQ(test, rdma_get(test, REAL_VA + REAL_BO_SIZE - SZ_4K,
				       SZ_4K, &a), -EFAULT);
	rdma_real_expect_undone(test, a, poison, 1);
	/* Inside the table of the next, whole, pin */
	KUNIT_ASSERT_EQ(test, rdma_get(test, REAL_VA + REAL_BO_SIZE - SZ_4K,
				       SZ_4K, &a), 0);
	rdma_real_expect_table(test, a, ctx->bo, REAL_BO_SIZE - SZ_4K, SZ_4K);
	KUNIT_EXPECT_EQ(test, ctx->f->ops->put_pages(&a), 0);
}

/*
 * A userptr BO, made as amdgpu_gem_userptr_ioctl() makes it (a BO with a
 * userptr ttm_tt over real user memory), but in the GTT domain, so that
 * the domain check lets it through and only the userptr check refuses it.
 * (KFD and GEM create userptr BOs in the CPU domain; a BO of that domain
 * is refused anyway.)
 */
static void rdma_real_backend_rejects_userptr(struct kunit *test)
{
	struct rdma_fake *f = rdma_fake_init_real(test);
	struct amd_p2p_info *poison = ERR_PTR(-EBADF), *a = poison;
	unsigned long addr, size = 12345;
	struct rdma_fake_bo *u;
	atomic_t cbs = ATOMIC_INIT(0);

	addr = kunit_vm_mmap(test, NULL, 0, SZ_64K, PROT_READ | PROT_WRITE,
			     MAP_ANONYMOUS | MAP_PRIVATE, 0);
	KUNIT_ASSERT_NE_MSG(test, addr, 0, "no user memory");
	u = rdma_fake_real_bo(f, SZ_64K, AMDGPU_GEM_DOMAIN_CPU, 0);
	KUNIT_ASSERT_FALSE(test, u->bo.tbo.ttm &&
			   ttm_tt_is_populated(u->bo.tbo.ttm));
	KUNIT_ASSERT_EQ(test, amdgpu_ttm_tt_set_userptr(&u->bo.tbo, addr, 0), 0);
	KUNIT_ASSERT_PTR_EQ(test, amdgpu_ttm_tt_get_usermm(u->bo.tbo.ttm),
			    current->mm);
	u->bo.preferred_domains = AMDGPU_GEM_DOMAIN_GTT;
	u->bo.allowed_domains = AMDGPU_GEM_DOMAIN_GTT;
	rdma_fake_map(f, u, addr, 0, SZ_64K, RDMA_FAKE_RW);

	KUNIT_EXPECT_EQ(test, rdma_fake_get(f, addr, SZ_4K, rdma_free_cb, &cbs,
					    &a), -EOPNOTSUPP);
	KUNIT_EXPECT_PTR_EQ(test, a, poison);
	KUNIT_EXPECT_EQ(test, u->bo.tbo.pin_count, 0);
	KUNIT_EXPECT_EQ(test, f->ops->get_page_size(addr, SZ_4K,
						    task_pid(current), &size),
			-EOPNOTSUPP);
	KUNIT_EXPECT_EQ(test, size, 12345UL);
	KUNIT_EXPECT_EQ(test, f->ops->is_gpu_address(addr, task_pid(current)),
			0);
}

/* amdgpu_rdma_process_flush() on another thread */
struct rdma_flush_thread {
	struct kfd_process *p;
	struct completion started;
	struct completion done;
};

static int rdma_flush_thread_fn(void *data)
{
	struct rdma_flush_thread *t = data;

	complete(&t->started);
	amdgpu_rdma_process_flush(t->p);
	complete(&t->done);
	return 0;
}

/*
 * Start a process flush on another thread, and wait until it sleeps or is
 * done. Returns the thread, with a reference.
 */
static struct task_struct *rdma_flush_start(struct kunit *test,
					    struct rdma_flush_thread *t)
{
	struct task_struct *k;

	init_completion(&t->started);
	init_completion(&t->done);
	k = kthread_create(rdma_flush_thread_fn, t, "rdma_flush");
	KUNIT_ASSERT_FALSE(test, IS_ERR(k));
	get_task_struct(k);
	wake_up_process(k);
	wait_for_completion(&t->started);
	while (!completion_done(&t->done) && task_is_running(k))
		usleep_range(1000, 2000);
	return k;
}

/*
 * The ioctls' flush reads the process's devices and their VMs under
 * p->mutex, as KFD writes them: while another thread holds it (as
 * kfd_ioctl_acquire_vm() does while it sets a device's VM, and clears it
 * again if it fails), the flush waits, and runs the callbacks once the
 * mutex is free.
 */
static void rdma_real_backend_process_flush_locked(struct kunit *test)
{
	struct rdma_get_ctx *ctx = rdma_real_ctx_domain(test,
							AMDGPU_GEM_DOMAIN_GTT);
	struct rdma_flush_thread t = { .p = ctx->f->p };
	struct amd_p2p_info *a;
	struct task_struct *k;

	/* No backstop worker: only the flush runs the callback */
	amdgpu_rdma_test_mgr()->no_backstop = true;
	KUNIT_ASSERT_EQ(test, rdma_get(test, REAL_VA, SZ_4K, &a), 0);
	KUNIT_ASSERT_EQ(test, rdma_fake_unmap(ctx->f, ctx->bo, REAL_VA), 0);
	mutex_lock(&ctx->f->p->mutex);
	k = rdma_flush_start(test, &t);
	/* Asleep, on the mutex: nothing read, no callback yet */
	KUNIT_EXPECT_FALSE(test, completion_done(&t.done));
	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->callbacks), 0);
	mutex_unlock(&ctx->f->p->mutex);
	wait_for_completion(&t.done);
	put_task_struct(k);
	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->callbacks), 1);
	KUNIT_EXPECT_EQ(test, ctx->bo->bo.tbo.pin_count, 0);
	KUNIT_EXPECT_EQ(test, ctx->f->ops->put_pages(&a), 0);
}

/*
 * Each capability bit against the behaviour it announces: the case runs
 * the behaviour and expects the bit set exactly when it saw it.
 */
struct rdma_caps_case {
	const char *name;
	u64 bit;
	bool (*probe)(struct kunit *test, struct rdma_get_ctx *ctx);
};

/* Unmap the BO at REAL_VA and return, as KFD's unmap ioctl does */
static void rdma_caps_unmap(struct kunit *test, struct rdma_get_ctx *ctx)
{
	KUNIT_ASSERT_EQ(test, rdma_fake_unmap(ctx->f, ctx->bo, REAL_VA), 0);
	amdgpu_rdma_process_flush(ctx->f->p);
}

/* The callback runs when the mapping goes, before the unmap returns */
static bool rdma_caps_free_callback(struct kunit *test,
				    struct rdma_get_ctx *ctx)
{
	struct amd_p2p_info *a;
	bool seen;

	KUNIT_ASSERT_EQ(test, rdma_get(test, REAL_VA, SZ_4K, &a), 0);
	rdma_caps_unmap(test, ctx);
	seen = atomic_read(&ctx->callbacks) == 1;
	KUNIT_EXPECT_EQ(test, ctx->f->ops->put_pages(&a), 0);
	return seen;
}

/* NULL callback: still pinned and mapped after the mapping went */
static bool rdma_caps_persistent(struct kunit *test, struct rdma_get_ctx *ctx)
{
	const struct amd_rdma_interface *ops = ctx->f->ops;
	struct amdgpu_bo *bo = &ctx->bo->bo;
	struct amd_p2p_info *a;
	bool seen;

	KUNIT_ASSERT_EQ(test, ops->get_pages(REAL_VA + SZ_4K, SZ_4K,
					     task_pid(current), ctx->f->nic,
					     &a, NULL, NULL), 0);
	rdma_caps_unmap(test, ctx);
	amdkfd_rdma_synchronize();
	seen = bo->tbo.pin_count == 1 && !amdkfd_rdma_retry(a) &&
	       sg_dma_address(a->pages->sgl) == rdma_fake_dma(ctx->bo, SZ_4K);
	KUNIT_EXPECT_EQ(test, ops->put_pages(&a), 0);
	amdkfd_rdma_synchronize();
	return seen && !bo->tbo.pin_count;
}

struct rdma_irq_put {
	struct hrtimer timer;
	const struct amd_rdma_interface *ops;
	struct amd_p2p_info *info;
	struct completion done;
	bool hardirq;
	int ret;
};

static enum hrtimer_restart rdma_irq_put_fn(struct hrtimer *timer)
{
	struct rdma_irq_put *x = container_of(timer, struct rdma_irq_put,
					      timer);

	x->hardirq = in_hardirq();
	x->ret = x->ops->put_pages(&x->info);
	complete(&x->done);
	return HRTIMER_NORESTART;
}

/* A put from a hard-IRQ timer returns 0, and the pin goes after it */
static bool rdma_caps_put_any_context(struct kunit *test,
				      struct rdma_get_ctx *ctx)
{
	struct rdma_irq_put *x;

	x = kunit_kzalloc(test, sizeof(*x), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, x);
	x->ops = ctx->f->ops;
	init_completion(&x->done);
	KUNIT_ASSERT_EQ(test, rdma_get(test, REAL_VA, SZ_4K, &x->info), 0);
	hrtimer_init(&x->timer, CLOCK_MONOTONIC, HRTIMER_MODE_REL_HARD);
	x->timer.function = rdma_irq_put_fn;
	hrtimer_start(&x->timer, ns_to_ktime(10 * NSEC_PER_USEC),
		      HRTIMER_MODE_REL_HARD);
	wait_for_completion(&x->done);
	hrtimer_cancel(&x->timer);
	amdkfd_rdma_synchronize();
	return x->hardirq && !x->ret && !x->info && !ctx->bo->bo.tbo.pin_count;
}

/* Puts after the callback and after the process's VM went return 0 */
static bool rdma_caps_late_put(struct kunit *test, struct rdma_get_ctx *ctx)
{
	const struct amd_rdma_interface *ops = ctx->f->ops;
	struct amd_p2p_info *a, *b;
	struct rdma_fake_bo *bo2;
	bool seen;

	bo2 = rdma_real_bo(ctx->f, SZ_64K, AMDGPU_GEM_DOMAIN_GTT);
	rdma_fake_map(ctx->f, bo2, 2 * REAL_VA, 0, SZ_64K, RDMA_FAKE_RW);
	KUNIT_ASSERT_EQ(test, rdma_get(test, REAL_VA, SZ_4K, &a), 0);
	KUNIT_ASSERT_EQ(test, rdma_get(test, 2 * REAL_VA, SZ_4K, &b), 0);
	rdma_caps_unmap(test, ctx);
	seen = atomic_read(&ctx->callbacks) == 1 && !ops->put_pages(&a);
	rdma_fake_vm_fini(ctx->f);
	seen &= atomic_read(&ctx->callbacks) == 2 && !ops->put_pages(&b);
	return seen;
}

/* Callbacks at GPU reset and at the GPU's removal */
static bool rdma_caps_device_events(struct kunit *test,
				    struct rdma_get_ctx *ctx)
{
	const struct amd_rdma_interface *ops = ctx->f->ops;
	struct amd_p2p_info *a, *b;
	bool seen;

	KUNIT_ASSERT_EQ(test, rdma_get(test, REAL_VA, SZ_4K, &a), 0);
	KUNIT_EXPECT_EQ(test, amdgpu_amdkfd_pre_reset(ctx->f->adev, NULL), 0);
	amdkfd_rdma_synchronize();
	seen = atomic_read(&ctx->callbacks) == 1;
	KUNIT_EXPECT_EQ(test, ops->put_pages(&a), 0);
	KUNIT_ASSERT_EQ(test, rdma_get(test, REAL_VA, SZ_4K, &b), 0);
	amdgpu_amdkfd_device_fini_sw(ctx->f->adev);
	seen &= atomic_read(&ctx->callbacks) == 2 &&
		!ctx->bo->bo.tbo.pin_count;
	KUNIT_EXPECT_EQ(test, ops->put_pages(&b), 0);
	return seen;
}

/* amdkfd_rdma_retry(): false while the addresses hold, true once not */
static bool rdma_caps_retry(struct kunit *test, struct rdma_get_ctx *ctx)
{
	struct amd_p2p_info *a;
	bool before, after;

	KUNIT_ASSERT_EQ(test, rdma_get(test, REAL_VA, SZ_4K, &a), 0);
	before = amdkfd_rdma_retry(a);
	rdma_caps_unmap(test, ctx);
	after = amdkfd_rdma_retry(a);
	KUNIT_EXPECT_EQ(test, ctx->f->ops->put_pages(&a), 0);
	return !before && after;
}

struct rdma_caps_wait {
	struct completion cb_started;
	struct completion release;
	bool cb_done;
};

static void rdma_caps_wait_cb(void *priv)
{
	struct rdma_caps_wait *w = priv;

	complete(&w->cb_started);
	wait_for_completion(&w->release);
	WRITE_ONCE(w->cb_done, true);
}

/*
 * A put from a thread that may sleep, of a registration whose callback
 * another thread is running: whether the put returns only after the
 * callback did.
 */
static bool rdma_caps_put_waits(struct kunit *test, struct rdma_get_ctx *ctx)
{
	struct rdma_caps_wait *w;
	struct rdma_flush_thread fl = { .p = ctx->f->p };
	struct rdma_put_thread *pt;
	struct task_struct *fk, *pk;
	struct amd_p2p_info *a;

	w = kunit_kzalloc(test, sizeof(*w), GFP_KERNEL);
	pt = kunit_kzalloc(test, sizeof(*pt), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, w);
	KUNIT_ASSERT_NOT_NULL(test, pt);
	init_completion(&w->cb_started);
	init_completion(&w->release);
	KUNIT_ASSERT_EQ(test, rdma_fake_get(ctx->f, REAL_VA, SZ_4K,
					    rdma_caps_wait_cb, w, &a), 0);
	KUNIT_ASSERT_EQ(test, rdma_fake_unmap(ctx->f, ctx->bo, REAL_VA), 0);
	/* The callback runs on the flush's thread, and stays there */
	fk = rdma_flush_start(test, &fl);
	wait_for_completion(&w->cb_started);

	pt->ops = ctx->f->ops;
	pt->info = a;
	pt->cb_done = &w->cb_done;
	init_completion(&pt->started);
	init_completion(&pt->done);
	pk = kthread_create(rdma_put_thread_fn, pt, "rdma_put");
	KUNIT_ASSERT_FALSE(test, IS_ERR(pk));
	get_task_struct(pk);
	wake_up_process(pk);
	wait_for_completion(&pt->started);
	/* Until the put returned, or sleeps (it waits) */
	while (!completion_done(&pt->done) && task_is_running(pk))
		usleep_range(1000, 2000);
	complete(&w->release);
	wait_for_completion(&pt->done);
	wait_for_completion(&fl.done);
	put_task_struct(pk);
	put_task_struct(fk);
	KUNIT_EXPECT_EQ(test, pt->ret, 0);
	return pt->saw_cb_done;
}

static const struct rdma_caps_case rdma_caps_cases[] = {
	{ "FREE_CALLBACK", AMD_RDMA_CAP_FREE_CALLBACK, rdma_caps_free_callback },
	{ "PERSISTENT", AMD_RDMA_CAP_PERSISTENT, rdma_caps_persistent },
	{ "PUT_ANY_CONTEXT", AMD_RDMA_CAP_PUT_ANY_CONTEXT,
	  rdma_caps_put_any_context },
	{ "LATE_PUT", AMD_RDMA_CAP_LATE_PUT, rdma_caps_late_put },
	{ "DEVICE_EVENTS", AMD_RDMA_CAP_DEVICE_EVENTS, rdma_caps_device_events },
	{ "PUT_WAITS_CALLBACK", AMD_RDMA_CAP_PUT_WAITS_CALLBACK,
	  rdma_caps_put_waits },
	{ "RETRY", AMD_RDMA_CAP_RETRY, rdma_caps_retry },
};

static void rdma_caps_case_desc(const struct rdma_caps_case *c, char *desc)
{
	strscpy(desc, c->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(rdma_caps, rdma_caps_cases, rdma_caps_case_desc);

static void rdma_real_backend_capabilities(struct kunit *test)
{
	const struct rdma_caps_case *c = test->param_value;
	struct rdma_get_ctx *ctx = rdma_real_ctx_domain(test,
							AMDGPU_GEM_DOMAIN_GTT);
	bool seen;

	/* No backstop worker: the callbacks run where the probe says */
	amdgpu_rdma_test_mgr()->no_backstop = true;
	seen = c->probe(test, ctx);

	KUNIT_EXPECT_EQ_MSG(test, !!(amdkfd_rdma_capabilities() & c->bit),
			    seen, "announced vs seen");
}

/*
 * The administrator vouches for this GPU's path (amdgpu.rdma_p2p_devices)
 * where pci_p2pdma_distance() does not know the host bridge: a first get
 * of its VRAM pins; naming another GPU does not help.
 */
static int rdma_real_no_distance(struct amdgpu_device *adev,
				 struct device *dma_dev)
{
	return -1;
}

static void rdma_real_backend_p2p_named(struct kunit *test)
{
	struct rdma_get_ctx *ctx = rdma_real_ctx_domain(test,
							AMDGPU_GEM_DOMAIN_VRAM);
	struct amd_p2p_info *poison = ERR_PTR(-EBADF), *a = poison;
	char *saved = amdgpu_rdma_p2p_devices;
	char other[] = "0000:99:00.0";
	char *list;

	list = kunit_kzalloc(test, 64, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, list);
	kunit_activate_static_stub(test, amdgpu_rdma_p2p_distance,
				   rdma_real_no_distance);
	amdgpu_rdma_p2p_devices = other;
	KUNIT_EXPECT_EQ(test, rdma_get(test, REAL_VA, SZ_4K, &a), -EREMOTEIO);
	KUNIT_EXPECT_PTR_EQ(test, a, poison);
	KUNIT_EXPECT_EQ(test, ctx->bo->bo.tbo.pin_count, 0);
	snprintf(list, 64, "%s,%s", other, dev_name(ctx->f->adev->dev));
	amdgpu_rdma_p2p_devices = list;
	KUNIT_EXPECT_EQ(test, rdma_get(test, REAL_VA, SZ_4K, &a), 0);
	amdgpu_rdma_p2p_devices = saved;
	if (a != poison) {
		rdma_real_expect_table(test, a, ctx->bo, 0, SZ_4K);
		KUNIT_EXPECT_EQ(test, ctx->f->ops->put_pages(&a), 0);
	}
}

static struct kunit_case rdma_real_cases_list[] = {
	KUNIT_CASE_PARAM(rdma_real_backend_get_put, rdma_real_gen_params),
	KUNIT_CASE_PARAM(rdma_real_backend_quota, rdma_real_gen_params),
	KUNIT_CASE_PARAM(rdma_real_backend_quota_race_unpins_unlocked,
			 rdma_real_gen_params),
	KUNIT_CASE_PARAM(rdma_real_backend_read_only, rdma_real_gen_params),
	KUNIT_CASE_PARAM(rdma_real_backend_lost_while_pinning, rdma_real_gen_params),
	KUNIT_CASE_PARAM(rdma_real_backend_free_while_registered, rdma_real_gen_params),
	KUNIT_CASE(rdma_real_backend_pin_fails),
	KUNIT_CASE_PARAM(rdma_real_backend_after_unplug, rdma_real_gen_params),
	KUNIT_CASE_PARAM(rdma_real_backend_cpu_access_flag,
			 rdma_cpu_access_gen_params),
	KUNIT_CASE_PARAM(rdma_real_backend_dma_map_fails, rdma_real_gen_params),
	KUNIT_CASE(rdma_real_backend_gtt_map_fails),
	KUNIT_CASE_PARAM(rdma_real_backend_enomem_after_pin,
			 rdma_real_gen_params),
	KUNIT_CASE_PARAM(rdma_real_backend_outside_table, rdma_real_gen_params),
	KUNIT_CASE(rdma_real_backend_rejects_userptr),
	KUNIT_CASE(rdma_real_backend_process_flush_locked),
	KUNIT_CASE_PARAM(rdma_real_backend_capabilities, rdma_caps_gen_params),
	KUNIT_CASE(rdma_real_backend_p2p_named),
	KUNIT_CASE(rdma_real_backend_bench_repeat_get),
	{}
};

static struct kunit_suite rdma_real_suite = {
	.name = "amdgpu_peer_rdma_real_backend",
	.test_cases = rdma_real_cases_list,
};

static struct kunit_case rdma_cases[] = {
	KUNIT_CASE(rdma_query),
	KUNIT_CASE_PARAM(rdma_get_pages_errors, rdma_get_gen_params),
	KUNIT_CASE(rdma_no_kfd_process),
	KUNIT_CASE(rdma_put_pages_null),
	KUNIT_CASE_PARAM(rdma_p2p_policy, rdma_p2p_gen_params),
	KUNIT_CASE_PARAM(rdma_page_size_cpu_page, rdma_cpu_page_gen_params),
	{}
};

static struct kunit_case rdma_get_cases_list[] = {
	KUNIT_CASE_PARAM(rdma_get_pages_rejects, rdma_reject_gen_params),
	KUNIT_CASE(rdma_get_pages_shares_pin),
	KUNIT_CASE_PARAM(rdma_page_size_rounding, rdma_page_size_gen_params),
	{}
};

static struct kunit_suite rdma_get_suite = {
	.name = "amdgpu_peer_rdma_get",
	.init = rdma_get_init,
	.test_cases = rdma_get_cases_list,
};

static struct kunit_suite rdma_suite = {
	.name = "amdgpu_peer_rdma",
	.test_cases = rdma_cases,
};

kunit_test_suites(&rdma_suite, &rdma_get_suite, &rdma_real_suite);
