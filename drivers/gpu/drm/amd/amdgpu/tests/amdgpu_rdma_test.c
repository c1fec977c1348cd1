// SPDX-License-Identifier: MIT
/*
 * Copyright 2026 The amdgpu profiler series authors
 *
 * KUnit tests of the amd_rdma.h entry points that need no GPU: the query,
 * the argument checks, and the answers for a process without a KFD
 * context. Each failing get_pages() must leave *info untouched.
 */

#include <kunit/device.h>
#include <kunit/static_stub.h>
#include <kunit/test.h>
#include <linux/pid.h>
#include <linux/scatterlist.h>
#include <linux/sched.h>
#include <linux/sizes.h>
#include <drm/amd_rdma.h>

#include "amdgpu.h"
#include "amdgpu_rdma.h"
#include "amdgpu_vm.h"
#include "kfd_priv.h"
#include "tests/amdgpu_kunit_helpers.h"

static const struct amd_rdma_interface *rdma_test_ops(struct kunit *test)
{
	const struct amd_rdma_interface *ops = NULL;
	int r;

	r = amdkfd_query_rdma_interface(&ops);
	if (r == -ENODEV)
		kunit_skip(test, "KFD is not initialised");
	KUNIT_ASSERT_EQ(test, r, 0);
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
	KUNIT_EXPECT_NOT_NULL(test, ops->flush_put_pages);
	/* Clients test these to pick the get_pages() signature. */
	KUNIT_EXPECT_EQ(test, AMD_RDMA_MAJOR, 2);
	KUNIT_EXPECT_GE(test, AMD_RDMA_MINOR, 1);
}

static void rdma_free_cb(void *priv)
{
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
	{ "no pid", 0x10000, 0x1000, true, false, false, -EINVAL },
	{ "no dma device", 0x10000, 0x1000, false, true, false, -EINVAL },
	{ "no info pointer", 0x10000, 0x1000, false, false, true, -EINVAL },
	{ "no KFD process", 0x10000, 0x1000, false, false, false, -ESRCH },
};

static void rdma_get_case_desc(const struct rdma_get_case *c, char *desc)
{
	strscpy(desc, c->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(rdma_get, rdma_get_cases, rdma_get_case_desc);

static void rdma_get_pages_errors(struct kunit *test)
{
	const struct rdma_get_case *c = test->param_value;
	const struct amd_rdma_interface *ops = rdma_test_ops(test);
	struct amd_p2p_info *poison = ERR_PTR(-EBADF), *info = poison;
	struct device *dev;

	dev = kunit_device_register(test, "amdgpu_rdma_nic");
	KUNIT_ASSERT_FALSE(test, IS_ERR(dev));
	KUNIT_EXPECT_EQ(test,
			ops->get_pages(c->address, c->length,
				       c->null_pid ? NULL : task_pid(current),
				       c->null_dev ? NULL : dev,
				       c->null_info ? NULL : &info,
				       rdma_free_cb, NULL),
			c->expected);
	KUNIT_EXPECT_PTR_EQ(test, info, poison);
}

static void rdma_no_kfd_process(struct kunit *test)
{
	const struct amd_rdma_interface *ops = rdma_test_ops(test);
	unsigned long size = 12345;

	/* A KUnit thread has no KFD process. */
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
	/* Nothing deferred: returns at once. */
	ops->flush_put_pages();
}

/*
 * get_pages() through the glue with a fake KFD process of one VM holding
 * one mapping of one BO: amdgpu_rdma_process_get(), amdgpu_rdma_lookup()
 * and the pin are stubbed, the checks of the mapping, the registration and
 * the teardown are real. What the stubs replace (kfd_lookup_process_by_pid,
 * the reservations, amdgpu_bo_pin, P2P and DMA mapping, runtime PM) needs a
 * real ROCm process on a GPU.
 */
#define GET_VA		BIT_ULL(32)
#define GET_BO_SIZE	SZ_2M
#define GET_DMA_ADDR	BIT_ULL(40)

struct rdma_get_ctx {
	struct amdgpu_device *adev;
	struct kfd_process *p;
	struct amdgpu_vm *vm;
	bool vm_live;
	struct amdgpu_bo *root;
	struct amdgpu_bo *bo;
	struct amdgpu_bo_va bo_va;
	struct amdgpu_bo_va_mapping mapping;
	struct device *nic;
	bool no_process;
	int lookup_ret;
	int pin_ret;
	atomic_t lookups;
	atomic_t pins;
	atomic_t unpins;
	atomic_t callbacks;
};

static struct kfd_process *rdma_get_process_stub(struct pid *pid)
{
	struct rdma_get_ctx *ctx = kunit_get_current_test()->priv;

	if (ctx->no_process)
		return NULL;
	kref_get(&ctx->p->ref);
	return ctx->p;
}

static int rdma_get_lookup_stub(struct amdgpu_vm *vm, struct drm_exec *exec,
				u64 address,
				struct amdgpu_bo_va_mapping **out)
{
	struct rdma_get_ctx *ctx = kunit_get_current_test()->priv;

	atomic_inc(&ctx->lookups);
	/* amdgpu_rdma_find() holds the process mutex around the lookup. */
	lockdep_assert_held(&ctx->p->mutex);
	if (vm != ctx->vm || address >> AMDGPU_GPU_PAGE_SHIFT < ctx->mapping.start ||
	    address >> AMDGPU_GPU_PAGE_SHIFT > ctx->mapping.last)
		return -ENOENT;
	if (ctx->lookup_ret)
		return ctx->lookup_ret;
	*out = &ctx->mapping;
	return 0;
}

static int rdma_get_pin_stub(struct amdgpu_peer_mgr *mgr, void *obj,
			     struct device *dma_dev, struct sg_table **out)
{
	struct rdma_get_ctx *ctx = kunit_get_current_test()->priv;
	struct sg_table *sgt;

	atomic_inc(&ctx->pins);
	if (obj != ctx->bo || dma_dev != ctx->nic)
		return -EINVAL;
	if (ctx->pin_ret)
		return ctx->pin_ret;
	sgt = kzalloc(sizeof(*sgt), GFP_KERNEL);
	if (!sgt)
		return -ENOMEM;
	if (sg_alloc_table(sgt, 1, GFP_KERNEL)) {
		kfree(sgt);
		return -ENOMEM;
	}
	sg_set_page(sgt->sgl, NULL, GET_BO_SIZE, 0);
	sg_dma_address(sgt->sgl) = GET_DMA_ADDR;
	sg_dma_len(sgt->sgl) = GET_BO_SIZE;
	*out = sgt;
	return 0;
}

static void rdma_get_unpin_stub(struct amdgpu_peer_mgr *mgr, void *obj,
				struct device *dma_dev, struct sg_table *sgt)
{
	struct rdma_get_ctx *ctx = kunit_get_current_test()->priv;

	atomic_inc(&ctx->unpins);
	sg_free_table(sgt);
	kfree(sgt);
}

static int rdma_get_init(struct kunit *test)
{
	const struct amd_rdma_interface *ops = NULL;
	struct kfd_process_device *pdd;
	struct rdma_get_ctx *ctx;
	struct drm_file *file;

	if (amdkfd_query_rdma_interface(&ops) == -ENODEV)
		kunit_skip(test, "KFD is not initialised");

	ctx = kunit_kzalloc(test, sizeof(*ctx), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, ctx);
	ctx->adev = amdgpu_kunit_helper_alloc_device(test);
	ctx->nic = kunit_device_register(test, "amdgpu_rdma_get_nic");
	KUNIT_ASSERT_FALSE(test, IS_ERR(ctx->nic));

	file = amdgpu_kunit_helper_alloc_file(test, ctx->adev, 0);
	ctx->vm = &((struct amdgpu_fpriv *)file->driver_priv)->vm;
	ctx->root = kunit_kzalloc(test, sizeof(*ctx->root), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, ctx->root);
	ctx->root->tbo.bdev = &ctx->adev->mman.bdev;
	ctx->vm->root.bo = ctx->root;

	ctx->bo = kunit_kzalloc(test, sizeof(*ctx->bo), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, ctx->bo);
	ctx->bo->tbo.bdev = &ctx->adev->mman.bdev;
	ctx->bo->tbo.base.size = GET_BO_SIZE;
	ctx->bo->tbo.type = ttm_bo_type_device;
	ctx->bo->preferred_domains = AMDGPU_GEM_DOMAIN_VRAM;
	ctx->bo_va.base.bo = ctx->bo;
	ctx->bo_va.base.vm = ctx->vm;
	ctx->mapping.start = GET_VA >> AMDGPU_GPU_PAGE_SHIFT;
	ctx->mapping.last = ctx->mapping.start +
			    (GET_BO_SIZE >> AMDGPU_GPU_PAGE_SHIFT) - 1;
	ctx->mapping.bo_va = &ctx->bo_va;

	pdd = kunit_kzalloc(test, sizeof(*pdd), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, pdd);
	pdd->drm_priv = file;
	ctx->p = kunit_kzalloc(test, sizeof(*ctx->p), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, ctx->p);
	mutex_init(&ctx->p->mutex);
	kref_init(&ctx->p->ref);
	ctx->p->pdds[0] = pdd;
	ctx->p->n_pdds = 1;

	amdgpu_rdma_vm_init(ctx->vm);
	ctx->vm_live = true;
	test->priv = ctx;

	kunit_activate_static_stub(test, amdgpu_rdma_process_get,
				   rdma_get_process_stub);
	kunit_activate_static_stub(test, amdgpu_rdma_lookup,
				   rdma_get_lookup_stub);
	kunit_activate_static_stub(test, amdgpu_rdma_pin, rdma_get_pin_stub);
	kunit_activate_static_stub(test, amdgpu_rdma_unpin,
				   rdma_get_unpin_stub);
	return 0;
}

/* Process exit: fires the callbacks and unpins in the test thread. */
static void rdma_get_vm_fini(struct rdma_get_ctx *ctx)
{
	if (!ctx->vm_live)
		return;
	ctx->vm_live = false;
	amdgpu_rdma_vm_fini(ctx->vm);
}

static void rdma_get_exit(struct kunit *test)
{
	struct rdma_get_ctx *ctx = test->priv;

	if (!ctx)
		return;
	rdma_get_vm_fini(ctx);
	/* Only the test's own reference on the fake process is left. */
	KUNIT_EXPECT_EQ(test, kref_read(&ctx->p->ref), 1);
	mutex_destroy(&ctx->p->mutex);
}

static void rdma_get_cb(void *priv)
{
	atomic_inc(priv);
}

static int rdma_get(struct kunit *test, u64 va, u64 len,
		    struct amd_p2p_info **info)
{
	struct rdma_get_ctx *ctx = test->priv;

	return rdma_test_ops(test)->get_pages(va, len, task_pid(current),
					      ctx->nic, info, rdma_get_cb,
					      &ctx->callbacks);
}

enum rdma_reject_kind {
	RDMA_REJECT_NONE,
	RDMA_REJECT_PRT,
	RDMA_REJECT_PRT_NO_BO,
	RDMA_REJECT_USERPTR,
	RDMA_REJECT_DOORBELL,
	RDMA_REJECT_MMIO,
	RDMA_REJECT_IMPORT,
	RDMA_REJECT_NO_PROCESS,
	RDMA_REJECT_PIN,
	RDMA_REJECT_PAST_BO,
};

struct rdma_reject_case {
	const char *name;
	enum rdma_reject_kind kind;
	u64 address;		/* offset from GET_VA */
	u64 length;
	int expected;
	bool looked_up;		/* whether the lookup is reached */
	bool is_gpu;		/* is_gpu_address() of @address */
};

static const struct rdma_reject_case rdma_reject_cases[] = {
	{ "zero length", RDMA_REJECT_NONE, 0, 0, -EINVAL, false, true },
	{ "overflow", RDMA_REJECT_NONE, 0, ~0ULL - GET_VA + 2, -EINVAL,
	  false, true },
	{ "no KFD process", RDMA_REJECT_NO_PROCESS, 0, SZ_4K, -ESRCH, false,
	  false },
	{ "no mapping", RDMA_REJECT_NONE, GET_BO_SIZE, SZ_4K, -EFAULT, true,
	  false },
	{ "range past the mapping end", RDMA_REJECT_NONE, GET_BO_SIZE - SZ_4K,
	  SZ_4K + 1, -EFAULT, true, true },
	{ "range crossing into the next mapping", RDMA_REJECT_NONE, SZ_1M,
	  GET_BO_SIZE, -EFAULT, true, true },
	{ "range past the BO end", RDMA_REJECT_PAST_BO, SZ_1M + SZ_4K, SZ_4K,
	  -EFAULT, true, true },
	{ "PRT mapping", RDMA_REJECT_PRT, 0, SZ_4K, -EFAULT, true, false },
	{ "PRT mapping without BO", RDMA_REJECT_PRT_NO_BO, 0, SZ_4K, -EFAULT,
	  true, false },
	{ "userptr", RDMA_REJECT_USERPTR, 0, SZ_4K, -EOPNOTSUPP, true, false },
	{ "doorbell", RDMA_REJECT_DOORBELL, 0, SZ_4K, -EOPNOTSUPP, true,
	  false },
	{ "MMIO remap", RDMA_REJECT_MMIO, 0, SZ_4K, -EOPNOTSUPP, true, false },
	{ "imported dma-buf", RDMA_REJECT_IMPORT, 0, SZ_4K, -EOPNOTSUPP, true,
	  false },
	{ "P2P not possible", RDMA_REJECT_PIN, 0, SZ_4K, -EREMOTEIO, true,
	  true },
};

static void rdma_reject_case_desc(const struct rdma_reject_case *c,
				  char *desc)
{
	strscpy(desc, c->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(rdma_reject, rdma_reject_cases, rdma_reject_case_desc);

/* Every rejection returns its documented errno and leaves *info alone. */
static void rdma_get_pages_rejects(struct kunit *test)
{
	const struct rdma_reject_case *c = test->param_value;
	struct rdma_get_ctx *ctx = test->priv;
	struct amd_p2p_info *poison = ERR_PTR(-EBADF), *info = poison;
	struct dma_buf_attachment *attach;
	unsigned long size = 12345;

	switch (c->kind) {
	case RDMA_REJECT_PRT:
		ctx->mapping.flags = AMDGPU_PTE_PRT_FLAG(ctx->adev);
		break;
	case RDMA_REJECT_PRT_NO_BO:
		/* amdgpu_vm_bo_add(adev, vm, NULL), as for the PRT bo_va */
		ctx->bo_va.base.bo = NULL;
		ctx->mapping.flags = AMDGPU_PTE_PRT_FLAG(ctx->adev);
		break;
	case RDMA_REJECT_USERPTR:
		/* KFD allocates userptr BOs in the CPU domain */
		ctx->bo->preferred_domains = AMDGPU_GEM_DOMAIN_CPU;
		break;
	case RDMA_REJECT_DOORBELL:
		ctx->bo->preferred_domains = AMDGPU_GEM_DOMAIN_DOORBELL;
		break;
	case RDMA_REJECT_MMIO:
		/* KFD's doorbell and MMIO remap BOs are SG BOs */
		ctx->bo->tbo.type = ttm_bo_type_sg;
		ctx->bo->preferred_domains = AMDGPU_GEM_DOMAIN_GTT;
		break;
	case RDMA_REJECT_IMPORT:
		attach = kunit_kzalloc(test, sizeof(*attach), GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL(test, attach);
		ctx->bo->tbo.base.import_attach = attach;
		break;
	case RDMA_REJECT_NO_PROCESS:
		ctx->no_process = true;
		break;
	case RDMA_REJECT_PIN:
		ctx->pin_ret = -EREMOTEIO;
		break;
	case RDMA_REJECT_PAST_BO:
		/* A 2 MiB mapping of the BO from 1 MiB: its end is past it. */
		ctx->mapping.offset = SZ_1M;
		break;
	default:
		break;
	}

	KUNIT_EXPECT_EQ(test, rdma_get(test, GET_VA + c->address, c->length,
				       &info), c->expected);
	KUNIT_EXPECT_PTR_EQ(test, info, poison);
	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->lookups) > 0, c->looked_up);
	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->pins),
			c->kind == RDMA_REJECT_PIN ? 1 : 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->unpins), 0);

	/* The same checks for the queries, which do not pin. */
	if (c->kind == RDMA_REJECT_PIN || c->kind == RDMA_REJECT_PAST_BO)
		return;
	KUNIT_EXPECT_EQ(test,
			rdma_test_ops(test)->get_page_size(GET_VA + c->address,
							   c->length,
							   task_pid(current),
							   &size),
			c->expected);
	KUNIT_EXPECT_EQ(test, size, 12345UL);
	KUNIT_EXPECT_EQ(test,
			rdma_test_ops(test)->is_gpu_address(GET_VA + c->address,
							    task_pid(current)),
			c->is_gpu);
}

/* N gets of one BO for one device: one pin, N registrations, N callbacks. */
static void rdma_get_pages_shares_pin(struct kunit *test)
{
	struct rdma_get_ctx *ctx = test->priv;
	const struct amd_rdma_interface *ops = rdma_test_ops(test);
	struct amd_p2p_info *info[8];
	unsigned long size = 0;
	int i;

	/* Before any pin: the documented lower bound. */
	KUNIT_EXPECT_EQ(test, ops->get_page_size(GET_VA, SZ_4K,
						 task_pid(current), &size), 0);
	KUNIT_EXPECT_EQ(test, size, PAGE_SIZE);

	/* The mapping starts 1 MiB into the BO. */
	ctx->mapping.offset = SZ_1M;
	ctx->mapping.last = ctx->mapping.start +
			    (SZ_1M >> AMDGPU_GPU_PAGE_SHIFT) - 1;
	for (i = 0; i < ARRAY_SIZE(info); i++) {
		u64 va = GET_VA + i * SZ_64K + 0x100;

		KUNIT_ASSERT_EQ(test, rdma_get(test, va, SZ_4K, &info[i]), 0);
		KUNIT_ASSERT_NOT_NULL(test, info[i]);
		KUNIT_EXPECT_EQ(test, info[i]->va, va);
		KUNIT_EXPECT_EQ(test, info[i]->size, (u64)SZ_4K);
		KUNIT_EXPECT_PTR_EQ(test, info[i]->pid, task_pid(current));
		KUNIT_ASSERT_NOT_NULL(test, info[i]->pages);
		KUNIT_EXPECT_EQ(test, info[i]->pages->nents, 1U);
		KUNIT_EXPECT_EQ(test, sg_dma_address(info[i]->pages->sgl),
				GET_DMA_ADDR + SZ_1M + i * SZ_64K + 0x100);
		KUNIT_EXPECT_EQ(test, sg_dma_len(info[i]->pages->sgl), SZ_4K);
		KUNIT_EXPECT_NULL(test, sg_page(info[i]->pages->sgl));
	}
	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->pins), 1);
	KUNIT_EXPECT_EQ(test, ops->is_gpu_address(GET_VA, task_pid(current)),
			1);
	KUNIT_EXPECT_EQ(test, ops->get_page_size(GET_VA, SZ_4K,
						 task_pid(current), &size), 0);
	KUNIT_EXPECT_TRUE(test, is_power_of_2(size));
	KUNIT_EXPECT_GE(test, size, PAGE_SIZE);

	/* Process exit: every callback once, then one unpin. */
	rdma_get_vm_fini(ctx);
	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->callbacks), ARRAY_SIZE(info));
	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->unpins), 1);
	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->pins), 1);
}

static struct kunit_case rdma_cases[] = {
	KUNIT_CASE(rdma_query),
	KUNIT_CASE_PARAM(rdma_get_pages_errors, rdma_get_gen_params),
	KUNIT_CASE(rdma_no_kfd_process),
	KUNIT_CASE(rdma_put_pages_null),
	{}
};

static struct kunit_case rdma_get_cases_list[] = {
	KUNIT_CASE_PARAM(rdma_get_pages_rejects, rdma_reject_gen_params),
	KUNIT_CASE(rdma_get_pages_shares_pin),
	{}
};

static struct kunit_suite rdma_get_suite = {
	.name = "amdgpu_peer_rdma_get",
	.init = rdma_get_init,
	.exit = rdma_get_exit,
	.test_cases = rdma_get_cases_list,
};

static struct kunit_suite rdma_suite = {
	.name = "amdgpu_peer_rdma",
	.test_cases = rdma_cases,
};

kunit_test_suites(&rdma_suite, &rdma_get_suite);
