// SPDX-License-Identifier: MIT
/*
 * Copyright 2026 The amdgpu profiler series authors
 *
 * A fake GPU with one ROCm process of one VM, for the tests of the
 * rdma_get_pages() glue and of the paths that remove GPU mappings. See
 * amdgpu_rdma_fake.h for what is real and what is faked.
 */

#include <kunit/device.h>
#include <kunit/resource.h>
#include <kunit/static_stub.h>
#include <kunit/test.h>
#include <linux/dma-direct.h>
#include <linux/dma-fence.h>
#include <linux/dma-mapping.h>
#include <linux/dma-resv.h>
#include <linux/pid.h>
#include <linux/scatterlist.h>
#include <linux/sched.h>
#include <drm/amd_rdma.h>
#include <drm/drm_exec.h>
#include <drm/drm_file.h>
#include <drm/ttm/ttm_tt.h>

#include "amdgpu.h"
#include "amdgpu_peer_reg.h"
#include "amdgpu_rdma.h"
#include "amdgpu_res_cursor.h"
#include "amdgpu_ttm.h"
#include "amdgpu_vm.h"
#include "kfd_priv.h"
#include "tests/amdgpu_kunit_helpers.h"
#include "tests/amdgpu_rdma_fake.h"

/* The fake of the running test: the pin backend runs in workers too. */
static struct rdma_fake *rdma_fake_current;

static const struct amdgpu_gmc_funcs rdma_fake_gmc_funcs;

static struct kfd_process *rdma_fake_process_get(struct pid *pid)
{
	struct rdma_fake *f = rdma_fake_current;

	if (!f || f->no_process)
		return NULL;
	kref_get(&f->p->ref);
	return f->p;
}

/* What amdgpu_rdma_pin() does, for a fake BO: one sg entry per segment. */
static int rdma_fake_pin(struct amdgpu_peer_mgr *mgr, void *obj,
			 struct device *dma_dev, enum dma_data_direction dir,
			 struct sg_table **out)
{
	struct rdma_fake_bo *bo = container_of(obj, struct rdma_fake_bo, bo);
	struct rdma_fake *f = rdma_fake_current;
	struct scatterlist *sg;
	struct sg_table *sgt;
	int i, r;

	dma_resv_assert_held(bo->bo.tbo.base.resv);
	f->last_dir = dir;
	r = f->pin_error;
	if (r) {
		f->pin_error = 0;
		return r;
	}
	if (f->pin_takes_quota) {
		struct amdgpu_peer_dev *gpu = amdgpu_rdma_test_dev(f->adev);

		f->pin_takes_quota = false;
		gpu->charged = gpu->limit;
	}
	sgt = kzalloc(sizeof(*sgt), GFP_KERNEL);
	if (!sgt)
		return -ENOMEM;
	if (sg_alloc_table(sgt, bo->nsegs, GFP_KERNEL)) {
		kfree(sgt);
		return -ENOMEM;
	}
	for_each_sgtable_sg(sgt, sg, i) {
		sg_set_page(sg, NULL, bo->seg, 0);
		sg_dma_address(sg) = bo->dma_base + i * (bo->seg + bo->gap) +
				     (dma_dev == f->nic ? 0 : RDMA_FAKE_DMA_DEV2);
		sg_dma_len(sg) = bo->seg;
	}
	atomic_inc(&f->pins);
	atomic_inc(&bo->pinned);
	*out = sgt;
	return 0;
}

static void rdma_fake_unpin(struct amdgpu_peer_mgr *mgr, void *obj,
			    struct device *dma_dev, enum dma_data_direction dir,
			    struct sg_table *sgt)
{
	struct rdma_fake_bo *bo = container_of(obj, struct rdma_fake_bo, bo);

	might_sleep();
	/*
	 * amdgpu_rdma_unpin() unpins under the BO's reservation, taken
	 * without a ticket: under a caller that holds it, lockdep reports
	 * recursive locking and the thread hangs, as it would with a GPU.
	 */
	if (!WARN_ON(amdgpu_bo_reserve(&bo->bo, true)))
		amdgpu_bo_unreserve(&bo->bo);
	atomic_inc(&rdma_fake_current->unpins);
	atomic_dec(&bo->pinned);
	sg_free_table(sgt);
	kfree(sgt);
}

static const struct amdgpu_peer_pin_ops rdma_fake_pin_ops = {
	.pin = rdma_fake_pin,
	.unpin = rdma_fake_unpin,
};

/*
 * The real backend (the manager's own ops, saved at init), counted; the
 * quota can run out while it pins, as with the fake backend.
 */
static int rdma_fake_real_pin(struct amdgpu_peer_mgr *mgr, void *obj,
			      struct device *dma_dev,
			      enum dma_data_direction dir,
			      struct sg_table **out)
{
	struct rdma_fake_bo *bo = container_of(obj, struct rdma_fake_bo, bo);
	struct rdma_fake *f = rdma_fake_current;
	int r;

	f->last_dir = dir;
	r = f->saved_pin_ops->pin(mgr, obj, dma_dev, dir, out);
	if (r)
		return r;
	if (f->pin_takes_quota) {
		struct amdgpu_peer_dev *gpu = amdgpu_rdma_test_dev(f->adev);

		f->pin_takes_quota = false;
		gpu->charged = gpu->limit;
	}
	if (f->pin_revokes) {
		f->pin_revokes = false;
		amdgpu_rdma_test_dev(f->adev)->dead = true;
	}
	if (f->pin_kills_owner) {
		f->pin_kills_owner = false;
		f->vm->rdma->dead = true;
	}
	if (f->pin_short) {
		struct scatterlist *sg, *last = NULL;
		int i;

		/* The real table ends a page early; undone at its unpin */
		f->pin_short = false;
		for_each_sgtable_dma_sg(*out, sg, i)
			last = sg;
		KUNIT_ASSERT_GT(f->test, sg_dma_len(last), PAGE_SIZE);
		sg_dma_len(last) -= PAGE_SIZE;
		f->short_sg = last;
	}
	atomic_inc(&f->pins);
	atomic_inc(&bo->pinned);
	return 0;
}

static void rdma_fake_real_unpin(struct amdgpu_peer_mgr *mgr, void *obj,
				 struct device *dma_dev,
				 enum dma_data_direction dir,
				 struct sg_table *sgt)
{
	struct rdma_fake_bo *bo = container_of(obj, struct rdma_fake_bo, bo);

	if (rdma_fake_current->short_sg) {
		sg_dma_len(rdma_fake_current->short_sg) += PAGE_SIZE;
		rdma_fake_current->short_sg = NULL;
	}
	/* First: the real unpin may drop the BO's last reference */
	atomic_inc(&rdma_fake_current->unpins);
	atomic_dec(&bo->pinned);
	rdma_fake_current->saved_pin_ops->unpin(mgr, obj, dma_dev, dir, sgt);
}

static const struct amdgpu_peer_pin_ops rdma_fake_real_pin_ops = {
	.pin = rdma_fake_real_pin,
	.unpin = rdma_fake_real_unpin,
};

/* Just what amdgpu_bo_ref/unref, the reservations and drm_exec touch. */
static void rdma_fake_bo_init(struct rdma_fake *f, struct amdgpu_bo *bo,
			      u64 size)
{
	bo->tbo.bdev = &f->adev->mman.bdev;
	bo->tbo.base.size = size;
	bo->tbo.base.resv = &bo->tbo.base._resv;
	dma_resv_init(bo->tbo.base.resv);
	kref_init(&bo->tbo.base.refcount);
	kref_init(&bo->tbo.kref);
	bo->tbo.type = ttm_bo_type_device;
}

/*
 * A bo_va left after the test's own amdgpu_vm_fini(): that freed its
 * mappings and the VM's root, so amdgpu_vm_bo_del(), which asserts the
 * root's reservation, cannot run; what it would still do is this.
 */
static void rdma_fake_bo_va_free(struct rdma_fake *f, struct amdgpu_bo *bo,
				 struct amdgpu_bo_va *bo_va)
{
	struct amdgpu_vm_bo_base **base;

	for (base = bo ? &bo->vm_bo : NULL; base && *base; base = &(*base)->next) {
		if (*base == &bo_va->base) {
			*base = bo_va->base.next;
			break;
		}
	}
	spin_lock(&f->vm->status_lock);
	list_del(&bo_va->base.vm_status);
	spin_unlock(&f->vm->status_lock);
	WARN_ON(!list_empty(&bo_va->valids) || !list_empty(&bo_va->invalids));
	dma_fence_put(bo_va->last_pt_update);
	kfree(bo_va);
}

static void rdma_fake_release(void *data)
{
	struct rdma_fake *f = data;
	struct amdgpu_peer_mgr *mgr = amdgpu_rdma_test_mgr();
	unsigned int i;

	/*
	 * What the process's exit does: the handles close (amdgpu_vm_bo_del()
	 * of each BO's and the PRT bo_va), then, unless the test did it, the
	 * real amdgpu_vm_fini(), which ends the VM's registrations and frees
	 * what the mappings left (kmemleak checks that nothing is left).
	 */
	if (!f->vm_done) {
		for (i = 0; i < f->nbos; i++)
			if (f->bos[i] && f->bos[i]->bo_va)
				rdma_fake_bo_del(f, f->bos[i]);
		if (f->prt_va) {
			rdma_fake_lock(f, NULL);
			amdgpu_vm_bo_del(f->adev, f->prt_va);
			rdma_fake_unlock(f, NULL);
		}
		rdma_fake_vm_fini(f);
	} else {
		for (i = 0; i < f->nbos; i++)
			if (f->bos[i] && f->bos[i]->bo_va)
				rdma_fake_bo_va_free(f, &f->bos[i]->bo, f->bos[i]->bo_va);
		if (f->prt_va)
			rdma_fake_bo_va_free(f, NULL, f->prt_va);
	}
	/* Ends what the test left: persistent pins, tombstones' pins. */
	amdgpu_rdma_device_fini(f->adev);
	amdkfd_rdma_synchronize();
	KUNIT_EXPECT_EQ(f->test, atomic_read(&f->pins) -
			atomic_read(&f->unpins),
			0);
	for (i = 0; i < f->nbos; i++)
		if (f->bos[i])
			KUNIT_EXPECT_EQ(f->test, atomic_read(&f->bos[i]->pinned), 0);
	mgr->ops = f->saved_pin_ops;
	mgr->no_backstop = false;
	mgr->max_tombstones = f->saved_max_tombstones;
	mgr->tombstone_min_ns = f->saved_tombstone_min_ns;
	mgr->now = f->saved_now;
	rdma_fake_current = NULL;
	/* Only the fake's own reference on the process is left. */
	KUNIT_EXPECT_EQ(f->test, kref_read(&f->p->ref), 1);
	mutex_destroy(&f->p->mutex);
	idr_destroy(&f->pdd->alloc_idr);
	for (i = 0; i < f->nbos; i++) {
		struct amdgpu_bo *bo;

		/* Dropped by the test (rdma_fake_real_bo_drop()) */
		if (!f->bos[i])
			continue;
		bo = &f->bos[i]->bo;
		if (f->bos[i]->real) {
			KUNIT_EXPECT_EQ(f->test, bo->tbo.pin_count, 0);
			/* The last reference: TTM frees it, and its memory */
			amdgpu_bo_unref(&bo);
			continue;
		}
		dma_resv_fini(bo->tbo.base.resv);
		kfree(f->bos[i]);
	}
}

/* The NICs and the fake GPU share a host bridge that supports P2P */
static int rdma_fake_p2p_distance(struct amdgpu_device *adev,
				  struct device *dma_dev)
{
	return 2;
}

/* After rdma_fake_release(): the real BOs are gone by then */
static void rdma_fake_ttm_fini(void *data)
{
	struct rdma_fake *f = data;
	struct amdgpu_device *adev = f->adev;
	struct ttm_device *bdev = &adev->mman.bdev;

	if (ttm_manager_type(bdev, TTM_PL_VRAM))
		amdgpu_vram_mgr_fini(adev);
	if (ttm_manager_type(bdev, TTM_PL_TT))
		amdgpu_gtt_mgr_fini(adev);
	/* What the runtime PM references of the pins left: nothing */
	KUNIT_EXPECT_EQ(f->test, atomic_read(&adev->dev->power.usage_count), 0);
	KUNIT_EXPECT_EQ(f->test, atomic64_read(&adev->gart_pin_size), 0);
	KUNIT_EXPECT_EQ(f->test, atomic64_read(&adev->vram_pin_size), 0);
	ttm_device_fini(bdev);
	adev_to_drm(adev)->vma_offset_manager = NULL;
	drm_vma_offset_manager_destroy(&f->vma);
}

/*
 * @dev sees RAM at @bus + its physical address: what dma_direct_set_offset()
 * sets up (not exported; the device core frees the map with the device)
 */
static void rdma_fake_bus_offset(struct kunit *test, struct device *dev,
				 u64 bus)
{
	struct bus_dma_region *map;

	KUNIT_ASSERT_NULL(test, dev->dma_range_map);
	map = kcalloc(2, sizeof(*map), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, map);
	map[0].cpu_start = 0;
	map[0].dma_start = bus;
	map[0].size = RDMA_FAKE_RAM_SPAN;
	dev->dma_range_map = map;
}

/*
 * What amdgpu_ttm_init() sets up that BOs of the GTT and VRAM domains use,
 * without a GART table (the BOs' GTT resources get no GART address, as
 * user BOs do until something needs one) and without VRAM behind the BAR.
 */
static void rdma_fake_ttm_init(struct rdma_fake *f)
{
	struct amdgpu_device *adev = f->adev;
	struct kunit *test = f->test;
	struct device *devs[] = { adev->dev, f->nic, f->nic2 };
	unsigned int i;
	int r;

	/* Every address reachable, as a 64-bit device without an IOMMU */
	for (i = 0; i < ARRAY_SIZE(devs); i++)
		KUNIT_ASSERT_EQ(test, dma_set_mask_and_coherent(devs[i],
								DMA_BIT_MASK(64)),
				0);
	rdma_fake_bus_offset(test, f->nic, RDMA_FAKE_NIC_BUS);
	rdma_fake_bus_offset(test, f->nic2, RDMA_FAKE_NIC2_BUS);
	adev->gmc.gart_size = RDMA_FAKE_GART_SIZE;
	adev->gmc.mc_vram_size = RDMA_FAKE_VRAM_SIZE;
	adev->gmc.real_vram_size = RDMA_FAKE_VRAM_SIZE;
	adev->gmc.visible_vram_size = RDMA_FAKE_VISIBLE_VRAM;
	adev->gmc.aper_base = RDMA_FAKE_APER_BASE;
	adev->gmc.aper_size = RDMA_FAKE_VISIBLE_VRAM;
	spin_lock_init(&adev->mm_stats.lock);
	/* What drm_gem_init() sets up; the mock device has no GEM */
	drm_vma_offset_manager_init(&f->vma, DRM_FILE_PAGE_OFFSET_START,
				    DRM_FILE_PAGE_OFFSET_SIZE);
	adev_to_drm(adev)->vma_offset_manager = &f->vma;
	r = ttm_device_init(&adev->mman.bdev, &amdgpu_bo_driver, adev->dev,
			    adev_to_drm(adev)->anon_inode->i_mapping, &f->vma,
			    false, false);
	if (r) {
		adev_to_drm(adev)->vma_offset_manager = NULL;
		drm_vma_offset_manager_destroy(&f->vma);
	}
	KUNIT_ASSERT_EQ(test, r, 0);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, rdma_fake_ttm_fini,
							f), 0);
	KUNIT_ASSERT_EQ(test, amdgpu_gtt_mgr_init(adev, RDMA_FAKE_GTT_SIZE), 0);
	KUNIT_ASSERT_EQ(test, amdgpu_vram_mgr_init(adev), 0);
	kunit_activate_static_stub(test, amdgpu_rdma_p2p_distance,
				   rdma_fake_p2p_distance);
}

static struct rdma_fake *rdma_fake_init_backend(struct kunit *test,
						bool real);

/**
 * rdma_fake_init - a fake GPU, VM and ROCm process for one test
 * @test: the test
 *
 * The pin backend is the fake one (see amdgpu_rdma_fake.h).
 *
 * Everything is torn down when the test ends: the VM (if the test did not
 * run amdgpu_vm_fini()), the GPU's registrations (amdgpu_rdma_device_fini())
 * and the deferred releases; then the fake checks that every fake pin was
 * unpinned.
 *
 * Return: the fake; skips the test if KFD is not initialised.
 */
struct rdma_fake *rdma_fake_init(struct kunit *test)
{
	return rdma_fake_init_backend(test, false);
}

/**
 * rdma_fake_init_real - rdma_fake_init() with the real pin backend
 * @test: the test
 *
 * Also sets up TTM, the GTT and the VRAM manager of the fake GPU; their
 * BOs come from rdma_fake_real_bo(). When the test ends, the fake also
 * checks that the pins' runtime PM references and pinned sizes are back
 * to 0 and that no real BO is pinned.
 *
 * Return: the fake; skips the test if KFD is not initialised.
 */
struct rdma_fake *rdma_fake_init_real(struct kunit *test)
{
	return rdma_fake_init_backend(test, true);
}

static struct rdma_fake *rdma_fake_init_backend(struct kunit *test,
						bool real)
{
	struct amdgpu_peer_mgr *mgr;
	struct rdma_fake *f;
	struct amdgpu_vm *vm;
	int r;

	f = kunit_kzalloc(test, sizeof(*f), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, f);
	f->test = test;
	r = amdkfd_query_rdma_interface(&f->ops);
	/* amdgpu_amdkfd_init() sets the interface up: it must be there. */
	KUNIT_ASSERT_EQ(test, r, 0);

	f->adev = amdgpu_kunit_helper_alloc_device(test);
	f->adev->gmc.gmc_funcs = &rdma_fake_gmc_funcs;
	f->adev->vm_manager.max_pfn = 1ULL << 36;
	f->adev->vm_manager.root_level = AMDGPU_VM_PTB;
	spin_lock_init(&f->adev->mman.bdev.lru_lock);
	f->nic = kunit_device_register(test, "amdgpu_rdma_fake_nic");
	KUNIT_ASSERT_FALSE(test, IS_ERR(f->nic));
	f->nic2 = kunit_device_register(test, "amdgpu_rdma_fake_nic2");
	KUNIT_ASSERT_FALSE(test, IS_ERR(f->nic2));
	f->next_dma = RDMA_FAKE_DMA_BASE;

	/* The VM: what amdgpu_vm_init() sets that the tested paths use. */
	f->file = amdgpu_kunit_helper_alloc_file(test, f->adev, 0);
	vm = &((struct amdgpu_fpriv *)f->file->driver_priv)->vm;
	f->vm = vm;
	/* Freed after rdma_fake_release(), whose action comes later */
	amdgpu_kunit_helper_init_vm(test, f->adev, vm);
	f->root = vm->root.bo;

	/* The process: one device, whose VM is the one above. */
	f->kfd = kunit_kzalloc(test, sizeof(*f->kfd), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, f->kfd);
	f->kfd->adev = f->adev;
	f->node = kunit_kzalloc(test, sizeof(*f->node), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, f->node);
	f->node->kfd = f->kfd;
	f->node->adev = f->adev;
	f->pdd = kunit_kzalloc(test, sizeof(*f->pdd), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, f->pdd);
	f->pdd->drm_priv = f->file;
	f->pdd->dev = f->node;
	f->pdd->user_gpu_id = RDMA_FAKE_GPU_ID;
	idr_init(&f->pdd->alloc_idr);
	f->p = kunit_kzalloc(test, sizeof(*f->p), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, f->p);
	mutex_init(&f->p->mutex);
	kref_init(&f->p->ref);
	f->p->pdds[0] = f->pdd;
	f->p->n_pdds = 1;
	f->p->lead_thread = current->group_leader;
	f->pdd->process = f->p;

	if (real) {
		f->real = true;
		rdma_fake_ttm_init(f);
	}
	mgr = amdgpu_rdma_test_mgr();
	f->saved_pin_ops = mgr->ops;
	f->saved_max_tombstones = mgr->max_tombstones;
	f->saved_tombstone_min_ns = mgr->tombstone_min_ns;
	f->saved_now = mgr->now;
	mgr->ops = real ? &rdma_fake_real_pin_ops : &rdma_fake_pin_ops;
	rdma_fake_current = f;
	kunit_activate_static_stub(test, amdgpu_rdma_process_get,
				   rdma_fake_process_get);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test,
							rdma_fake_release, f),
			0);
	return f;
}

/**
 * rdma_fake_bo - a user BO of the fake GPU
 * @f: the fake
 * @size: its size
 * @domains: its preferred domains
 * @nsegs: how many DMA segments the fake pin makes of it
 * @gap: bytes between the segments' DMA addresses (0: contiguous)
 *
 * Return: the BO; each BO gets DMA addresses of its own.
 */
struct rdma_fake_bo *rdma_fake_bo(struct rdma_fake *f, u64 size,
				  u32 domains, unsigned int nsegs, u64 gap)
{
	struct rdma_fake_bo *bo;

	KUNIT_ASSERT_LT(f->test, f->nbos, RDMA_FAKE_MAX_BOS);
	/* Freed by rdma_fake_release(), after the registrations. */
	bo = kzalloc(sizeof(*bo), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(f->test, bo);
	rdma_fake_bo_init(f, &bo->bo, size);
	bo->bo.preferred_domains = domains;
	bo->bo.allowed_domains = domains;
	bo->nsegs = nsegs;
	bo->seg = size / nsegs;
	bo->gap = gap;
	bo->dma_base = f->next_dma;
	f->next_dma += ALIGN(nsegs * (bo->seg + gap), SZ_1G);
	f->bos[f->nbos++] = bo;
	return bo;
}

/**
 * rdma_fake_real_bo - a real user BO of the fake GPU
 * @f: a fake from rdma_fake_init_real()
 * @size: its size
 * @domain: %AMDGPU_GEM_DOMAIN_GTT or %AMDGPU_GEM_DOMAIN_VRAM
 * @flags: %AMDGPU_GEM_CREATE_* flags
 *
 * amdgpu_bo_create() as for a user BO (not amdgpu_bo_create_user(): the
 * test keeps its own fields after the BO), populated and placed as TTM
 * places it.
 *
 * Return: the BO; unreferenced when the test ends.
 */
struct rdma_fake_bo *rdma_fake_real_bo(struct rdma_fake *f, u64 size,
				       u32 domain, u64 flags)
{
	struct amdgpu_bo_param bp = {
		.size = size,
		.byte_align = PAGE_SIZE,
		.domain = domain,
		.flags = flags,
		.type = ttm_bo_type_device,
		.bo_ptr_size = sizeof(struct rdma_fake_bo),
	};
	struct rdma_fake_bo *bo;
	struct amdgpu_bo *abo;

	KUNIT_ASSERT_TRUE(f->test, f->real);
	KUNIT_ASSERT_LT(f->test, f->nbos, RDMA_FAKE_MAX_BOS);
	KUNIT_ASSERT_EQ(f->test, amdgpu_bo_create(f->adev, &bp, &abo), 0);
	bo = container_of(abo, struct rdma_fake_bo, bo);
	bo->real = true;
	bo->nsegs = 1;
	bo->seg = size;
	f->bos[f->nbos++] = bo;
	return bo;
}

/**
 * rdma_fake_dma_dev - where a NIC of the real backend sees a real BO
 * @bo: a BO from rdma_fake_real_bo()
 * @offset: the byte
 * @dev: the fake's NIC or second NIC
 *
 * Return: the DMA address at which @dev sees byte @offset of @bo.
 */
u64 rdma_fake_dma_dev(const struct rdma_fake_bo *bo, u64 offset,
		      const struct device *dev)
{
	struct ttm_resource *res = bo->bo.tbo.resource;
	struct amdgpu_device *adev = amdgpu_ttm_adev(bo->bo.tbo.bdev);
	struct amdgpu_res_cursor cur;

	if (res->mem_type == TTM_PL_TT) {
		struct page *page = bo->bo.tbo.ttm->pages[offset >> PAGE_SHIFT];

		/* The page, at the bus offset of that NIC */
		return page_to_phys(page) + offset_in_page(offset) +
		       (dev == rdma_fake_current->nic2 ? RDMA_FAKE_NIC2_BUS :
			RDMA_FAKE_NIC_BUS);
	}
	/* VRAM: the BAR, at the offset that the manager gave the byte */
	amdgpu_res_first(res, offset, 1, &cur);
	return adev->gmc.aper_base + cur.start;
}

/**
 * rdma_fake_real_bo_drop - the test's own reference on a real BO goes
 * @f: the fake
 * @bo: a BO from rdma_fake_real_bo(), unmapped and deleted from the VM
 *
 * As when the process frees the BO: what keeps it then is the peer's pin.
 */
void rdma_fake_real_bo_drop(struct rdma_fake *f, struct rdma_fake_bo *bo)
{
	struct amdgpu_bo *abo = &bo->bo;
	unsigned int i;

	KUNIT_ASSERT_TRUE(f->test, bo->real);
	KUNIT_ASSERT_NULL(f->test, bo->bo_va);
	for (i = 0; i < f->nbos; i++)
		if (f->bos[i] == bo)
			f->bos[i] = NULL;
	amdgpu_bo_unref(&abo);
}

/* Reserve the VM root (and @bo, if any), as the mapping paths do. */
void rdma_fake_lock(struct rdma_fake *f, struct rdma_fake_bo *bo)
{
	int r;

	drm_exec_init(&f->exec, 0, 2);
	drm_exec_until_all_locked(&f->exec) {
		r = drm_exec_lock_obj(&f->exec, &f->root->tbo.base);
		drm_exec_retry_on_contention(&f->exec);
		if (!r && bo) {
			r = drm_exec_lock_obj(&f->exec, &bo->bo.tbo.base);
			drm_exec_retry_on_contention(&f->exec);
		}
	}
	KUNIT_ASSERT_EQ(f->test, r, 0);
}

void rdma_fake_unlock(struct rdma_fake *f, struct rdma_fake_bo *bo)
{
	drm_exec_fini(&f->exec);
}

/**
 * rdma_fake_map - map a BO into the fake VM (amdgpu_vm_bo_add/map)
 * @f: the fake
 * @bo: the BO
 * @va: GPU (and CPU) virtual address
 * @offset: offset in @bo
 * @size: size of the mapping
 * @flags: PTE flags (RDMA_FAKE_RW for a KFD mapping)
 *
 * Return: the mapping.
 */
struct amdgpu_bo_va_mapping *rdma_fake_map(struct rdma_fake *f,
					   struct rdma_fake_bo *bo, u64 va,
					   u64 offset, u64 size, u64 flags)
{
	struct amdgpu_bo_va_mapping *m;

	rdma_fake_lock(f, bo);
	if (!bo->bo_va)
		bo->bo_va = amdgpu_vm_bo_add(f->adev, f->vm, &bo->bo);
	KUNIT_ASSERT_NOT_NULL(f->test, bo->bo_va);
	KUNIT_ASSERT_EQ(f->test, amdgpu_vm_bo_map(f->adev, bo->bo_va, va,
						  offset, size, flags), 0);
	m = amdgpu_vm_bo_lookup_mapping(f->vm, va >> AMDGPU_GPU_PAGE_SHIFT);
	rdma_fake_unlock(f, bo);
	KUNIT_ASSERT_NOT_NULL(f->test, m);
	return m;
}

/* amdgpu_vm_bo_unmap() under the locks; the caller flushes. */
int rdma_fake_unmap(struct rdma_fake *f, struct rdma_fake_bo *bo, u64 va)
{
	int r;

	rdma_fake_lock(f, bo);
	r = amdgpu_vm_bo_unmap(f->adev, bo->bo_va, va);
	rdma_fake_unlock(f, bo);
	return r;
}

/* amdgpu_vm_bo_del() under the locks (handle close, KFD free). */
void rdma_fake_bo_del(struct rdma_fake *f, struct rdma_fake_bo *bo)
{
	rdma_fake_lock(f, bo);
	amdgpu_vm_bo_del(f->adev, bo->bo_va);
	bo->bo_va = NULL;
	rdma_fake_unlock(f, bo);
}

/* The real amdgpu_vm_fini(), as at process exit. */
void rdma_fake_vm_fini(struct rdma_fake *f)
{
	KUNIT_ASSERT_FALSE(f->test, f->vm_done);
	f->vm_done = true;
	amdgpu_vm_fini(f->adev, f->vm);
}

/* The DMA address at which the NIC sees byte @offset of @bo. */
u64 rdma_fake_dma(const struct rdma_fake_bo *bo, u64 offset)
{
	if (bo->real)
		return rdma_fake_dma_dev(bo, offset, rdma_fake_current->nic);
	return bo->dma_base + (offset / bo->seg) * (bo->seg + bo->gap) +
	       offset % bo->seg;
}

/* get_pages() for the fake NIC, in the calling thread's process. */
int rdma_fake_get(struct rdma_fake *f, u64 va, u64 len,
		  void (*cb)(void *priv), void *priv,
		  struct amd_p2p_info **info)
{
	return f->ops->get_pages(va, len, task_pid(current), f->nic, info, cb,
				 priv);
}

/* The sum of the DMA lengths of a registration's table. */
u64 rdma_fake_sg_len(const struct amd_p2p_info *info)
{
	struct scatterlist *sg;
	u64 len = 0;
	int i;

	for_each_sgtable_dma_sg(info->pages, sg, i)
		len += sg_dma_len(sg);
	return len;
}
