// SPDX-License-Identifier: MIT
/*
 * Copyright 2026 The amdgpu profiler series authors
 *
 * KUnit tests of every place that ends a peer registration, driving the
 * real path on the fake GPU of amdgpu_rdma_fake.c: the VM mapping removals
 * (amdgpu_vm_bo_unmap(), amdgpu_vm_bo_clear_mappings() and through it
 * amdgpu_vm_bo_replace_map(), both loops of amdgpu_vm_bo_del()), the VM
 * teardown at process exit (amdgpu_vm_fini()), the callers that run the
 * callbacks after dropping their locks (GEM handle close, the GEM VA
 * ioctl, the KFD unmap and free ioctls), and the device events (GPU reset,
 * device teardown and final fini), with real BOs and the real pin
 * backend. The core's backstop worker is off, so a path that forgets to
 * run the callbacks before returning is seen.
 */

#include <kunit/test.h>
#include <linux/lockdep.h>
#include <linux/mman.h>
#include <linux/pid.h>
#include <linux/scatterlist.h>
#include <linux/sched.h>
#include <linux/sizes.h>
#include <linux/uaccess.h>
#include <uapi/linux/kfd_ioctl.h>
#include <drm/amd_rdma.h>
#include <drm/amdgpu_drm.h>

#include "amdgpu.h"
#include "amdgpu_amdkfd.h"
#include "amdgpu_kunit_helpers.h"
#include "amdgpu_peer_reg.h"
#include "amdgpu_rdma.h"
#include "amdgpu_vm.h"
#include "kfd_priv.h"
#include "tests/amdgpu_rdma_fake.h"

#define VM_MB(x)	((u64)(x) << 20)

/* A client registration: counts its callbacks and checks their context. */
struct vm_client {
	struct rdma_fake *f;
	struct amd_p2p_info *info;
	atomic_t callbacks;
	/* a callback ran with the VM root reservation held */
	bool under_lock;
};

struct vm_test_ctx {
	struct rdma_fake *f;
	struct rdma_fake_bo *bo;
	struct rdma_fake_bo *other;
};

static int vm_test_init(struct kunit *test)
{
	struct vm_test_ctx *ctx;

	ctx = kunit_kzalloc(test, sizeof(*ctx), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, ctx);
	/* Real BOs, pinned and unpinned by the real backend */
	ctx->f = rdma_fake_init_real(test);
	/* No backstop: a path that forgets the callbacks is caught. */
	amdgpu_rdma_test_mgr()->no_backstop = true;
	/* CPU-visible, as the pin wants it: the fake GPU cannot move it */
	ctx->bo = rdma_fake_real_bo(ctx->f, VM_MB(16), AMDGPU_GEM_DOMAIN_VRAM,
				    AMDGPU_GEM_CREATE_CPU_ACCESS_REQUIRED);
	ctx->other = rdma_fake_real_bo(ctx->f, VM_MB(4), AMDGPU_GEM_DOMAIN_GTT,
				       0);
	test->priv = ctx;
	return 0;
}

static void vm_test_cb(void *priv)
{
	struct vm_client *c = priv;

	might_sleep();
	if (amdgpu_kunit_held(&c->f->root->tbo.base.resv->lock.base) ||
	    amdgpu_kunit_held(&c->f->p->mutex))
		c->under_lock = true;
	atomic_inc(&c->callbacks);
}

static void vm_get(struct kunit *test, u64 va, u64 len, struct vm_client *c)
{
	struct vm_test_ctx *ctx = test->priv;

	c->f = ctx->f;
	KUNIT_ASSERT_EQ(test, rdma_fake_get(ctx->f, va, len, vm_test_cb, c,
					    &c->info), 0);
}

/* The client's view after the path returned: exactly one callback. */
static void vm_expect_fired(struct kunit *test, struct vm_client *c)
{
	KUNIT_EXPECT_EQ(test, atomic_read(&c->callbacks), 1);
	KUNIT_EXPECT_FALSE(test, c->under_lock);
	/* The tombstone stays readable; the client may put it late. */
	KUNIT_EXPECT_NOT_NULL(test, c->info->pages);
	KUNIT_EXPECT_EQ(test, c->f->ops->put_pages(&c->info), 0);
}

static void vm_expect_live(struct kunit *test, struct vm_client *c)
{
	KUNIT_EXPECT_EQ(test, atomic_read(&c->callbacks), 0);
	KUNIT_EXPECT_EQ(test, c->f->ops->put_pages(&c->info), 0);
}

/* amdgpu_vm_bo_unmap() (KFD unmap, AMDGPU_VA_OP_UNMAP). */
static void vm_unmap_fires(struct kunit *test)
{
	struct vm_test_ctx *ctx = test->priv;
	struct vm_client a = {}, b = {};

	rdma_fake_map(ctx->f, ctx->bo, VM_MB(64), 0, VM_MB(4), RDMA_FAKE_RW);
	rdma_fake_map(ctx->f, ctx->bo, VM_MB(128), VM_MB(4), VM_MB(4),
		      RDMA_FAKE_RW);
	vm_get(test, VM_MB(65), VM_MB(1), &a);
	vm_get(test, VM_MB(129), VM_MB(1), &b);

	KUNIT_ASSERT_EQ(test, rdma_fake_unmap(ctx->f, ctx->bo, VM_MB(64)), 0);
	/* Detached under the caller's locks, called by its flush. */
	KUNIT_EXPECT_EQ(test, atomic_read(&a.callbacks), 0);
	amdgpu_rdma_vm_flush(ctx->f->vm);
	vm_expect_fired(test, &a);
	/* The other mapping's registration is untouched. */
	vm_expect_live(test, &b);
}

/* AMDGPU_VA_OP_CLEAR of part of a mapping ends all of its registrations. */
static void vm_clear_fires(struct kunit *test)
{
	struct vm_test_ctx *ctx = test->priv;
	struct vm_client a = {}, b = {}, c = {};

	rdma_fake_map(ctx->f, ctx->bo, VM_MB(64), 0, VM_MB(8), RDMA_FAKE_RW);
	rdma_fake_map(ctx->f, ctx->other, VM_MB(128), 0, VM_MB(4),
		      RDMA_FAKE_RW);
	vm_get(test, VM_MB(64), VM_MB(1), &a);
	vm_get(test, VM_MB(70), VM_MB(1), &b);
	vm_get(test, VM_MB(128), VM_MB(1), &c);

	rdma_fake_lock(ctx->f, NULL);
	KUNIT_ASSERT_EQ(test, amdgpu_vm_bo_clear_mappings(ctx->f->adev,
							  ctx->f->vm,
							  VM_MB(66),
							  VM_MB(2)), 0);
	rdma_fake_unlock(ctx->f, NULL);
	amdgpu_rdma_vm_flush(ctx->f->vm);
	vm_expect_fired(test, &a);
	vm_expect_fired(test, &b);
	vm_expect_live(test, &c);
}

/* AMDGPU_VA_OP_REPLACE over a registered range ends it. */
static void vm_replace_fires(struct kunit *test)
{
	struct vm_test_ctx *ctx = test->priv;
	struct vm_client a = {}, b = {};

	rdma_fake_map(ctx->f, ctx->bo, VM_MB(64), 0, VM_MB(4), RDMA_FAKE_RW);
	vm_get(test, VM_MB(64), VM_MB(4), &a);
	rdma_fake_lock(ctx->f, ctx->other);
	ctx->other->bo_va = amdgpu_vm_bo_add(ctx->f->adev, ctx->f->vm,
					     &ctx->other->bo);
	KUNIT_ASSERT_NOT_NULL(test, ctx->other->bo_va);
	KUNIT_ASSERT_EQ(test, amdgpu_vm_bo_replace_map(ctx->f->adev,
						       ctx->other->bo_va,
						       VM_MB(64), 0, VM_MB(4),
						       RDMA_FAKE_RW), 0);
	rdma_fake_unlock(ctx->f, ctx->other);
	amdgpu_rdma_vm_flush(ctx->f->vm);
	vm_expect_fired(test, &a);
	/* The new mapping at the same place gives the new BO's pages. */
	vm_get(test, VM_MB(64), VM_MB(4), &b);
	KUNIT_EXPECT_EQ(test, sg_dma_address(b.info->pages->sgl),
			rdma_fake_dma(ctx->other, 0));
	vm_expect_live(test, &b);
}

/*
 * amdgpu_vm_bo_del() (GEM handle close, KFD free): a mapping that was not
 * updated yet (the invalids list) ...
 */
static void vm_bo_del_invalids_fires(struct kunit *test)
{
	struct vm_test_ctx *ctx = test->priv;
	struct vm_client a = {}, b = {};

	rdma_fake_map(ctx->f, ctx->bo, VM_MB(64), 0, VM_MB(4), RDMA_FAKE_RW);
	rdma_fake_map(ctx->f, ctx->other, VM_MB(128), 0, VM_MB(4),
		      RDMA_FAKE_RW);
	vm_get(test, VM_MB(65), VM_MB(1), &a);
	vm_get(test, VM_MB(128), VM_MB(1), &b);
	rdma_fake_bo_del(ctx->f, ctx->bo);
	amdgpu_rdma_vm_flush(ctx->f->vm);
	vm_expect_fired(test, &a);
	vm_expect_live(test, &b);
}

/* ... and one whose page tables were written (the valids list). */
static void vm_bo_del_valids_fires(struct kunit *test)
{
	struct vm_test_ctx *ctx = test->priv;
	struct amdgpu_bo_va_mapping *m;
	struct vm_client a = {};

	m = rdma_fake_map(ctx->f, ctx->bo, VM_MB(64), 0, VM_MB(4),
			  RDMA_FAKE_RW);
	/* What amdgpu_vm_bo_update() does once the PTEs are written. */
	rdma_fake_lock(ctx->f, ctx->bo);
	list_move(&m->list, &ctx->bo->bo_va->valids);
	rdma_fake_unlock(ctx->f, ctx->bo);
	vm_get(test, VM_MB(66), VM_MB(1), &a);
	rdma_fake_bo_del(ctx->f, ctx->bo);
	amdgpu_rdma_vm_flush(ctx->f->vm);
	vm_expect_fired(test, &a);
}

/*
 * Process exit: the real amdgpu_vm_fini(). Registrations with a callback
 * get it; a persistent one stays pinned until put, and the late puts after
 * the VM is gone return 0.
 */
static void vm_fini_fires(struct kunit *test)
{
	struct vm_test_ctx *ctx = test->priv;
	const struct amd_rdma_interface *ops = ctx->f->ops;
	struct vm_client a = {}, b = {};
	struct amd_p2p_info *persistent;

	rdma_fake_map(ctx->f, ctx->bo, VM_MB(64), 0, VM_MB(4), RDMA_FAKE_RW);
	rdma_fake_map(ctx->f, ctx->other, VM_MB(128), 0, VM_MB(4),
		      RDMA_FAKE_RW);
	vm_get(test, VM_MB(64), VM_MB(1), &a);
	vm_get(test, VM_MB(128), VM_MB(1), &b);
	KUNIT_ASSERT_EQ(test, ops->get_pages(VM_MB(65), VM_MB(1),
					     task_pid(current), ctx->f->nic,
					     &persistent, NULL, NULL), 0);
	rdma_fake_vm_fini(ctx->f);
	KUNIT_EXPECT_NULL(test, ctx->f->vm->rdma);
	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->other->pinned), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->bo->pinned), 1);
	KUNIT_EXPECT_EQ(test, sg_dma_address(persistent->pages->sgl),
			rdma_fake_dma(ctx->bo, VM_MB(1)));
	vm_expect_fired(test, &a);
	vm_expect_fired(test, &b);
	KUNIT_EXPECT_EQ(test, ops->put_pages(&persistent), 0);
	amdkfd_rdma_synchronize();
	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->bo->pinned), 0);
}

/* Closing the last GEM handle of the BO in this VM. */
static void vm_gem_close_fires(struct kunit *test)
{
	struct vm_test_ctx *ctx = test->priv;
	struct vm_client a = {};

	rdma_fake_map(ctx->f, ctx->bo, VM_MB(64), 0, VM_MB(4), RDMA_FAKE_RW);
	vm_get(test, VM_MB(64), VM_MB(1), &a);
	amdgpu_gem_object_close(&ctx->bo->bo.tbo.base, ctx->f->file);
	ctx->bo->bo_va = NULL;
	/* Before it returned, with its locks dropped. */
	vm_expect_fired(test, &a);
}

/* DRM_IOCTL_AMDGPU_GEM_VA with AMDGPU_VA_OP_CLEAR. */
static void vm_gem_va_ioctl_fires(struct kunit *test)
{
	struct vm_test_ctx *ctx = test->priv;
	struct drm_amdgpu_gem_va args = {
		.operation = AMDGPU_VA_OP_CLEAR,
		.flags = AMDGPU_VM_DELAY_UPDATE,
		.va_address = VM_MB(64),
		.map_size = VM_MB(4),
	};
	struct vm_client a = {};

	rdma_fake_map(ctx->f, ctx->bo, VM_MB(64), 0, VM_MB(4), RDMA_FAKE_RW);
	vm_get(test, VM_MB(64), VM_MB(1), &a);
	KUNIT_ASSERT_EQ(test, amdgpu_gem_va_ioctl(adev_to_drm(ctx->f->adev),
						  &args, ctx->f->file), 0);
	vm_expect_fired(test, &a);
}

/*
 * The KFD free ioctl: libhsakmt's hipFree() unmaps then frees; whichever
 * removed the mapping, the ioctl returns after the callbacks. Here the
 * mapping is gone already (detached, not called back) and the free fails
 * on a stale handle: it must still run them.
 */
static void vm_kfd_free_fires(struct kunit *test)
{
	struct vm_test_ctx *ctx = test->priv;
	struct kfd_ioctl_free_memory_of_gpu_args args = {
		.handle = MAKE_HANDLE(RDMA_FAKE_GPU_ID + 1, 0),
	};
	struct vm_client a = {};

	rdma_fake_map(ctx->f, ctx->bo, VM_MB(64), 0, VM_MB(4), RDMA_FAKE_RW);
	vm_get(test, VM_MB(64), VM_MB(1), &a);
	KUNIT_ASSERT_EQ(test, rdma_fake_unmap(ctx->f, ctx->bo, VM_MB(64)), 0);
	KUNIT_EXPECT_EQ(test, kfd_ioctl_free_memory_of_gpu(NULL, ctx->f->p,
							   &args), -EINVAL);
	vm_expect_fired(test, &a);
}

struct vm_kfd_unmap_case {
	const char *name;
	bool valid;
};

static const struct vm_kfd_unmap_case vm_kfd_unmap_cases[] = {
	{ "success", true },
	{ "unknown device", false },
};

static void vm_kfd_unmap_case_desc(const struct vm_kfd_unmap_case *c,
				   char *desc)
{
	strscpy(desc, c->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(vm_kfd_unmap, vm_kfd_unmap_cases, vm_kfd_unmap_case_desc);

/*
 * The KFD unmap ioctl, on its success path (a retry after every device
 * was unmapped: only the TLB flush and DMA unmap steps run) and on an
 * error path: both return after the callbacks.
 */
static void vm_kfd_unmap_fires(struct kunit *test)
{
	const struct vm_kfd_unmap_case *c = test->param_value;
	struct vm_test_ctx *ctx = test->priv;
	struct kfd_ioctl_unmap_memory_from_gpu_args args = {};
	struct vm_client a = {};
	struct kgd_mem *mem;
	unsigned long ids;
	u32 id = RDMA_FAKE_GPU_ID;
	int handle;

	mem = kunit_kzalloc(test, sizeof(*mem), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, mem);
	mutex_init(&mem->lock);
	INIT_LIST_HEAD(&mem->attachments);
	mem->bo = &ctx->other->bo;
	handle = idr_alloc(&ctx->f->pdd->alloc_idr, mem, 0, 0, GFP_KERNEL);
	KUNIT_ASSERT_GE(test, handle, 0);
	ids = kunit_vm_mmap(test, NULL, 0, PAGE_SIZE, PROT_READ | PROT_WRITE,
			    MAP_ANONYMOUS | MAP_PRIVATE, 0);
	KUNIT_ASSERT_NE_MSG(test, ids, 0, "no user memory");
	KUNIT_ASSERT_EQ(test, copy_to_user((void __user *)ids, &id,
					   sizeof(id)), 0);
	args.handle = MAKE_HANDLE(c->valid ? id : id + 1, handle);
	args.device_ids_array_ptr = ids;
	args.n_devices = 1;
	args.n_success = 1;

	rdma_fake_map(ctx->f, ctx->bo, VM_MB(64), 0, VM_MB(4), RDMA_FAKE_RW);
	vm_get(test, VM_MB(64), VM_MB(1), &a);
	KUNIT_ASSERT_EQ(test, rdma_fake_unmap(ctx->f, ctx->bo, VM_MB(64)), 0);
	KUNIT_EXPECT_EQ(test, kfd_ioctl_unmap_memory_from_gpu(NULL, ctx->f->p,
							      &args),
			c->valid ? 0 : -EINVAL);
	vm_expect_fired(test, &a);
	idr_remove(&ctx->f->pdd->alloc_idr, handle);
	mutex_destroy(&mem->lock);
}

/*
 * The reset does not wait for the callbacks (it cannot: see
 * amdgpu_rdma_device_reset()), but the memory stays pinned for each
 * registration until its own callback has returned. Two registrations on
 * two BOs, whose callbacks block until the test lets them go, one after
 * the other, on the workqueue, while the reset path has long returned.
 */
struct vm_blocking_client {
	struct vm_client c;
	struct completion entered;
	struct completion release;
};

static void vm_blocking_cb(void *priv)
{
	struct vm_blocking_client *b = priv;

	complete(&b->entered);
	wait_for_completion(&b->release);
	atomic_inc(&b->c.callbacks);
}

static void vm_gpu_reset_pins_until_callback(struct kunit *test)
{
	struct vm_test_ctx *ctx = test->priv;
	const struct amd_rdma_interface *ops = ctx->f->ops;
	struct amdgpu_peer_mgr *mgr = amdgpu_rdma_test_mgr();
	struct vm_blocking_client *b;
	struct rdma_fake_bo *bos[2] = { ctx->bo, ctx->other };
	u64 va[2] = { VM_MB(64), VM_MB(256) };
	int i;

	b = kunit_kcalloc(test, 2, sizeof(*b), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, b);
	/* Callbacks at reset run on the core's workqueue */
	mgr->no_backstop = false;
	for (i = 0; i < 2; i++) {
		init_completion(&b[i].entered);
		init_completion(&b[i].release);
		b[i].c.f = ctx->f;
		rdma_fake_map(ctx->f, bos[i], va[i], 0, VM_MB(4),
			      RDMA_FAKE_RW);
		KUNIT_ASSERT_EQ(test, rdma_fake_get(ctx->f, va[i], VM_MB(1),
						    vm_blocking_cb, &b[i],
						    &b[i].c.info), 0);
	}
	KUNIT_EXPECT_EQ(test, amdgpu_amdkfd_pre_reset(ctx->f->adev, NULL), 0);
	/* The reset path returned; the first callback runs and blocks */
	wait_for_completion(&b[0].entered);
	for (i = 0; i < 2; i++) {
		KUNIT_EXPECT_EQ(test, atomic_read(&bos[i]->pinned), 1);
		/* What the client learns if it asks */
		KUNIT_EXPECT_TRUE(test, amdkfd_rdma_retry(b[i].c.info));
	}
	complete(&b[0].release);
	/* The second runs once the first returned and was unpinned */
	wait_for_completion(&b[1].entered);
	KUNIT_EXPECT_EQ(test, atomic_read(&bos[0]->pinned), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&bos[1]->pinned), 1);
	complete(&b[1].release);
	amdkfd_rdma_synchronize();
	KUNIT_EXPECT_EQ(test, atomic_read(&bos[1]->pinned), 0);
	for (i = 0; i < 2; i++) {
		KUNIT_EXPECT_EQ(test, atomic_read(&b[i].c.callbacks), 1);
		KUNIT_EXPECT_EQ(test, ops->put_pages(&b[i].c.info), 0);
	}
}

/*
 * GPU reset and RAS recovery (amdgpu_amdkfd_pre_reset()): the callbacks
 * of those that asked are queued, not waited for; persistent pins stay.
 */
static void vm_gpu_reset_fires(struct kunit *test)
{
	struct vm_test_ctx *ctx = test->priv;
	const struct amd_rdma_interface *ops = ctx->f->ops;
	struct amd_p2p_info *persistent;
	struct vm_client a = {};

	rdma_fake_map(ctx->f, ctx->bo, VM_MB(64), 0, VM_MB(4), RDMA_FAKE_RW);
	vm_get(test, VM_MB(64), VM_MB(1), &a);
	KUNIT_ASSERT_EQ(test, ops->get_pages(VM_MB(66), VM_MB(1),
					     task_pid(current), ctx->f->nic,
					     &persistent, NULL, NULL), 0);
	KUNIT_EXPECT_EQ(test, amdgpu_amdkfd_pre_reset(ctx->f->adev, NULL), 0);
	/* What a client does before it unloads; here: wait for them. */
	amdkfd_rdma_synchronize();
	vm_expect_fired(test, &a);
	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->bo->pinned), 1);
	KUNIT_EXPECT_EQ(test, sg_dma_address(persistent->pages->sgl),
			rdma_fake_dma(ctx->bo, VM_MB(2)));
	KUNIT_EXPECT_EQ(test, ops->put_pages(&persistent), 0);
}

enum vm_teardown {
	/* amdgpu_device_fini_hw() -> amdgpu_amdkfd_suspend(): unplug, unbind */
	VM_TEARDOWN_FINI_HW,
	/* amdgpu_device_ip_fini() -> amdgpu_amdkfd_device_fini_sw() */
	VM_TEARDOWN_FINI_SW,
};

static const enum vm_teardown vm_teardowns[] = {
	VM_TEARDOWN_FINI_HW,
	VM_TEARDOWN_FINI_SW,
};

static void vm_teardown_desc(const enum vm_teardown *t, char *desc)
{
	strscpy(desc, *t == VM_TEARDOWN_FINI_HW ? "fini_hw (suspend)" :
		"fini_sw", KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(vm_teardown, vm_teardowns, vm_teardown_desc);

/*
 * The GPU goes away: every registration ends, with its callback if it has
 * one; persistent ones end without; every pin is dropped before the call
 * returns; the tombstones are put late. The holder of the persistent one
 * (current hfi1's send path) finds nothing pinned, its table still
 * readable, amdkfd_rdma_retry() true, and its put returning 0.
 */
static void vm_device_teardown_revokes(struct kunit *test)
{
	const enum vm_teardown *t = test->param_value;
	struct vm_test_ctx *ctx = test->priv;
	const struct amd_rdma_interface *ops = ctx->f->ops;
	struct amdgpu_device *adev = ctx->f->adev;
	struct amd_p2p_info *persistent;
	struct vm_client a = {};

	rdma_fake_map(ctx->f, ctx->bo, VM_MB(64), 0, VM_MB(4), RDMA_FAKE_RW);
	vm_get(test, VM_MB(64), VM_MB(1), &a);
	KUNIT_ASSERT_EQ(test, ops->get_pages(VM_MB(66), VM_MB(1),
					     task_pid(current), ctx->f->nic,
					     &persistent, NULL, NULL), 0);
	KUNIT_EXPECT_FALSE(test, amdkfd_rdma_retry(persistent));
	if (*t == VM_TEARDOWN_FINI_HW) {
		/* A system suspend does not end them ... */
		amdgpu_amdkfd_suspend(adev, false);
		KUNIT_EXPECT_EQ(test, atomic_read(&a.callbacks), 0);
		/* ... the device's teardown does. */
		adev->shutdown = true;
		amdgpu_amdkfd_suspend(adev, false);
		adev->shutdown = false;
	} else {
		amdgpu_amdkfd_device_fini_sw(adev);
	}
	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->bo->pinned), 0);
	vm_expect_fired(test, &a);
	KUNIT_ASSERT_NOT_NULL(test, persistent->pages);
	KUNIT_EXPECT_EQ(test, sg_dma_address(persistent->pages->sgl),
			rdma_fake_dma(ctx->bo, VM_MB(2)));
	KUNIT_EXPECT_EQ(test, rdma_fake_sg_len(persistent), VM_MB(1));
	KUNIT_EXPECT_TRUE(test, amdkfd_rdma_retry(persistent));
	KUNIT_EXPECT_EQ(test, ops->put_pages(&persistent), 0);
	KUNIT_EXPECT_NULL(test, persistent);
}

static struct kunit_case vm_cases[] = {
	KUNIT_CASE(vm_unmap_fires),
	KUNIT_CASE(vm_clear_fires),
	KUNIT_CASE(vm_replace_fires),
	KUNIT_CASE(vm_bo_del_invalids_fires),
	KUNIT_CASE(vm_bo_del_valids_fires),
	KUNIT_CASE(vm_fini_fires),
	KUNIT_CASE(vm_gem_close_fires),
	KUNIT_CASE(vm_gem_va_ioctl_fires),
	KUNIT_CASE(vm_kfd_free_fires),
	KUNIT_CASE_PARAM(vm_kfd_unmap_fires, vm_kfd_unmap_gen_params),
	KUNIT_CASE(vm_gpu_reset_fires),
	KUNIT_CASE(vm_gpu_reset_pins_until_callback),
	KUNIT_CASE_PARAM(vm_device_teardown_revokes, vm_teardown_gen_params),
	{}
};

static struct kunit_suite vm_suite = {
	.name = "amdgpu_peer_vm",
	.init = vm_test_init,
	.test_cases = vm_cases,
};

kunit_test_suite(vm_suite);
