// SPDX-License-Identifier: MIT
/*
 * Copyright 2026 The amdgpu profiler series authors
 *
 * KUnit tests of the teardown wiring: the real amdgpu_vm_bo_unmap(),
 * amdgpu_vm_bo_clear_mappings() and amdgpu_vm_bo_replace_map() on a fake
 * VM must detach the peer registrations found through the mappings they
 * remove, and amdgpu_rdma_vm_flush() must then fire their callbacks.
 * amdgpu_vm_bo_del() (GEM handle close, KFD free) runs with the VM root's
 * real reservation held.
 */

#include <kunit/device.h>
#include <kunit/test.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>

#include "amdgpu.h"
#include "amdgpu_rdma.h"
#include "amdgpu_vm.h"
#include "tests/amdgpu_kunit_helpers.h"

#define VM_TEST_BO_SIZE		(16ULL << 20)

struct vm_test_ctx {
	struct amdgpu_device *adev;
	struct amdgpu_vm *vm;
	struct amdgpu_bo_va *bo_va;
	struct amdgpu_peer_mgr mgr;
	struct device *nic;
	int obj;
	atomic_t callbacks[4];
};

static int vm_test_pin(struct amdgpu_peer_mgr *mgr, void *obj,
		       struct device *dma_dev, struct sg_table **out)
{
	struct sg_table *sgt;

	sgt = kzalloc(sizeof(*sgt), GFP_KERNEL);
	if (!sgt)
		return -ENOMEM;
	if (sg_alloc_table(sgt, 1, GFP_KERNEL)) {
		kfree(sgt);
		return -ENOMEM;
	}
	sg_set_page(sgt->sgl, NULL, VM_TEST_BO_SIZE, 0);
	sg_dma_address(sgt->sgl) = 1ULL << 32;
	sg_dma_len(sgt->sgl) = VM_TEST_BO_SIZE;
	*out = sgt;
	return 0;
}

static void vm_test_unpin(struct amdgpu_peer_mgr *mgr, void *obj,
			  struct device *dma_dev, struct sg_table *sgt)
{
	sg_free_table(sgt);
	kfree(sgt);
}

static const struct amdgpu_peer_pin_ops vm_test_ops = {
	.pin = vm_test_pin,
	.unpin = vm_test_unpin,
};

static int vm_test_init(struct kunit *test)
{
	struct vm_test_ctx *ctx;

	ctx = kunit_kzalloc(test, sizeof(*ctx), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, ctx);
	ctx->adev = amdgpu_kunit_helper_alloc_device(test);
	ctx->adev->vm_manager.max_pfn = 1ULL << 36;
	ctx->nic = kunit_device_register(test, "amdgpu_vm_test_nic");
	KUNIT_ASSERT_FALSE(test, IS_ERR(ctx->nic));

	/* Just what the mapping functions touch. */
	ctx->vm = kunit_kzalloc(test, sizeof(*ctx->vm), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, ctx->vm);
	ctx->vm->va = RB_ROOT_CACHED;
	INIT_LIST_HEAD(&ctx->vm->freed);
	spin_lock_init(&ctx->vm->status_lock);
	ctx->bo_va = kunit_kzalloc(test, sizeof(*ctx->bo_va), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, ctx->bo_va);
	ctx->bo_va->base.vm = ctx->vm;
	INIT_LIST_HEAD(&ctx->bo_va->valids);
	INIT_LIST_HEAD(&ctx->bo_va->invalids);

	KUNIT_ASSERT_EQ(test, amdgpu_peer_mgr_init(&ctx->mgr, &vm_test_ops,
						   U64_MAX), 0);
	amdgpu_peer_owner_init(&ctx->vm->rdma, &ctx->mgr);
	test->priv = ctx;
	return 0;
}

static void vm_test_exit(struct kunit *test)
{
	struct vm_test_ctx *ctx = test->priv;
	struct amdgpu_bo_va_mapping *m, *tmp;

	amdgpu_peer_owner_fini(&ctx->vm->rdma);
	amdgpu_peer_mgr_fini(&ctx->mgr);
	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->mgr.stats.regs), 0);
	list_for_each_entry_safe(m, tmp, &ctx->bo_va->invalids, list) {
		list_del(&m->list);
		kfree(m);
	}
	list_for_each_entry_safe(m, tmp, &ctx->vm->freed, list) {
		list_del(&m->list);
		kfree(m);
	}
}

static void vm_test_cb(void *priv)
{
	atomic_inc(priv);
}

/* get_pages() as amdgpu_rdma.c does it: key = the mapping found. */
static void vm_test_get(struct kunit *test, u64 va, u64 len, atomic_t *cnt,
			struct amd_p2p_info **info)
{
	struct vm_test_ctx *ctx = test->priv;
	struct amdgpu_bo_va_mapping *m;
	struct amdgpu_peer_reg_args args = {
		.obj = &ctx->obj,
		.obj_size = VM_TEST_BO_SIZE,
		.va = va,
		.length = len,
		.pid = task_pid(current),
		.dma_dev = ctx->nic,
		.free_cb = vm_test_cb,
		.client_priv = cnt,
	};

	m = amdgpu_vm_bo_lookup_mapping(ctx->vm, va >> AMDGPU_GPU_PAGE_SHIFT);
	KUNIT_ASSERT_NOT_NULL(test, m);
	args.first = m->start;
	args.last = m->last;
	args.offset = va - (m->start << AMDGPU_GPU_PAGE_SHIFT) + m->offset;
	KUNIT_ASSERT_EQ(test, amdgpu_peer_register(&ctx->vm->rdma, &args,
						   info), 0);
}

static void vm_test_map(struct kunit *test, u64 va, u64 size)
{
	struct vm_test_ctx *ctx = test->priv;

	KUNIT_ASSERT_EQ(test, amdgpu_vm_bo_map(ctx->adev, ctx->bo_va, va, 0,
					       size, 0), 0);
}

#define VM_TEST_MB(x) ((u64)(x) << 20)

static void vm_unmap_fires(struct kunit *test)
{
	struct vm_test_ctx *ctx = test->priv;
	struct amd_p2p_info *a, *b;

	vm_test_map(test, VM_TEST_MB(64), VM_TEST_MB(4));
	vm_test_map(test, VM_TEST_MB(128), VM_TEST_MB(4));
	vm_test_get(test, VM_TEST_MB(65), VM_TEST_MB(1), &ctx->callbacks[0], &a);
	vm_test_get(test, VM_TEST_MB(129), VM_TEST_MB(1), &ctx->callbacks[1], &b);

	KUNIT_ASSERT_EQ(test, amdgpu_vm_bo_unmap(ctx->adev, ctx->bo_va,
						 VM_TEST_MB(64)), 0);
	/* Detached under the caller's locks, fired by the flush. */
	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->mgr.stats.invalidated), 1);
	amdgpu_rdma_vm_flush(ctx->vm);
	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->callbacks[0]), 1);
	KUNIT_EXPECT_NULL(test, a->pages);
	/* The other mapping's registration is untouched. */
	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->callbacks[1]), 0);
	KUNIT_EXPECT_NOT_NULL(test, b->pages);
	KUNIT_EXPECT_EQ(test, amdgpu_peer_put(&a), 0);
	KUNIT_EXPECT_EQ(test, amdgpu_peer_put(&b), 0);
	amdgpu_peer_mgr_flush(&ctx->mgr);
}

/* AMDGPU_VA_OP_CLEAR of part of a mapping fires all of its registrations. */
static void vm_clear_fires(struct kunit *test)
{
	struct vm_test_ctx *ctx = test->priv;
	struct amd_p2p_info *a, *b, *c;

	vm_test_map(test, VM_TEST_MB(64), VM_TEST_MB(8));
	vm_test_map(test, VM_TEST_MB(128), VM_TEST_MB(4));
	vm_test_get(test, VM_TEST_MB(64), VM_TEST_MB(1), &ctx->callbacks[0], &a);
	vm_test_get(test, VM_TEST_MB(70), VM_TEST_MB(1), &ctx->callbacks[1], &b);
	vm_test_get(test, VM_TEST_MB(128), VM_TEST_MB(1), &ctx->callbacks[2], &c);

	KUNIT_ASSERT_EQ(test, amdgpu_vm_bo_clear_mappings(ctx->adev, ctx->vm,
							  VM_TEST_MB(66), VM_TEST_MB(2)), 0);
	amdgpu_rdma_vm_flush(ctx->vm);
	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->callbacks[0]), 1);
	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->callbacks[1]), 1);
	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->callbacks[2]), 0);
	KUNIT_EXPECT_EQ(test, amdgpu_peer_put(&a), 0);
	KUNIT_EXPECT_EQ(test, amdgpu_peer_put(&b), 0);
	KUNIT_EXPECT_EQ(test, amdgpu_peer_put(&c), 0);
	amdgpu_peer_mgr_flush(&ctx->mgr);
}

/* AMDGPU_VA_OP_REPLACE over a registered range fires it. */
static void vm_replace_fires(struct kunit *test)
{
	struct vm_test_ctx *ctx = test->priv;
	struct amd_p2p_info *a;

	vm_test_map(test, VM_TEST_MB(64), VM_TEST_MB(4));
	vm_test_get(test, VM_TEST_MB(64), VM_TEST_MB(4), &ctx->callbacks[0], &a);
	KUNIT_ASSERT_EQ(test, amdgpu_vm_bo_replace_map(ctx->adev, ctx->bo_va,
						       VM_TEST_MB(64), 0, VM_TEST_MB(4), 0),
			0);
	amdgpu_rdma_vm_flush(ctx->vm);
	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->callbacks[0]), 1);
	/* The new mapping at the same place is found by a new get. */
	KUNIT_EXPECT_EQ(test, amdgpu_peer_put(&a), 0);
	vm_test_get(test, VM_TEST_MB(64), VM_TEST_MB(4), &ctx->callbacks[1], &a);
	KUNIT_EXPECT_EQ(test, amdgpu_peer_put(&a), 0);
	amdgpu_peer_mgr_flush(&ctx->mgr);
	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->callbacks[1]), 0);
}

/* GEM handle close and KFD free: amdgpu_vm_bo_del() under the root lock. */
static void vm_bo_del_fires(struct kunit *test)
{
	struct vm_test_ctx *ctx = test->priv;
	struct amdgpu_bo_va *bo_va;
	struct amdgpu_bo *root;
	struct amd_p2p_info *a, *b;

	root = kunit_kzalloc(test, sizeof(*root), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, root);
	root->tbo.base.resv = &root->tbo.base._resv;
	dma_resv_init(root->tbo.base.resv);
	ctx->vm->root.bo = root;

	/* amdgpu_vm_bo_del() frees it. */
	bo_va = kzalloc(sizeof(*bo_va), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, bo_va);
	bo_va->base.vm = ctx->vm;
	INIT_LIST_HEAD(&bo_va->base.vm_status);
	INIT_LIST_HEAD(&bo_va->valids);
	INIT_LIST_HEAD(&bo_va->invalids);
	KUNIT_ASSERT_EQ(test, amdgpu_vm_bo_map(ctx->adev, bo_va, VM_TEST_MB(64),
					       0, VM_TEST_MB(4), 0), 0);
	KUNIT_ASSERT_EQ(test, amdgpu_vm_bo_map(ctx->adev, bo_va, VM_TEST_MB(96),
					       0, VM_TEST_MB(4), 0), 0);
	vm_test_map(test, VM_TEST_MB(128), VM_TEST_MB(4));
	vm_test_get(test, VM_TEST_MB(97), VM_TEST_MB(1), &ctx->callbacks[0],
		    &a);
	vm_test_get(test, VM_TEST_MB(128), VM_TEST_MB(1), &ctx->callbacks[1],
		    &b);

	dma_resv_lock(root->tbo.base.resv, NULL);
	amdgpu_vm_bo_del(ctx->adev, bo_va);
	dma_resv_unlock(root->tbo.base.resv);
	amdgpu_rdma_vm_flush(ctx->vm);

	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->callbacks[0]), 1);
	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->callbacks[1]), 0);
	KUNIT_EXPECT_EQ(test, amdgpu_peer_put(&a), 0);
	KUNIT_EXPECT_EQ(test, amdgpu_peer_put(&b), 0);
	amdgpu_peer_mgr_flush(&ctx->mgr);
	ctx->vm->root.bo = NULL;
	dma_resv_fini(root->tbo.base.resv);
}

static struct kunit_case vm_cases[] = {
	KUNIT_CASE(vm_unmap_fires),
	KUNIT_CASE(vm_clear_fires),
	KUNIT_CASE(vm_replace_fires),
	KUNIT_CASE(vm_bo_del_fires),
	{}
};

static struct kunit_suite vm_suite = {
	.name = "amdgpu_peer_vm",
	.init = vm_test_init,
	.exit = vm_test_exit,
	.test_cases = vm_cases,
};

kunit_test_suite(vm_suite);
