// SPDX-License-Identifier: MIT
/*
 * Copyright 2026 The amdgpu profiler series authors
 *
 * Permission is hereby granted, free of charge, to any person obtaining a
 * copy of this software and associated documentation files (the "Software"),
 * to deal in the Software without restriction, including without limitation
 * the rights to use, copy, modify, merge, publish, distribute, sublicense,
 * and/or sell copies of the Software, and to permit persons to whom the
 * Software is furnished to do so, subject to the following conditions:
 *
 * The above copyright notice and this permission notice shall be included in
 * all copies or substantial portions of the Software.
 *
 * THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR
 * IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY,
 * FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT.  IN NO EVENT SHALL
 * THE COPYRIGHT HOLDER(S) OR AUTHOR(S) BE LIABLE FOR ANY CLAIM, DAMAGES OR
 * OTHER LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR OTHERWISE,
 * ARISING FROM, OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR
 * OTHER DEALINGS IN THE SOFTWARE.
 */

/**
 * DOC: peer memory for RDMA drivers
 *
 * &struct amd_rdma_interface on top of the registration core
 * (amdgpu_peer_reg.c). get_pages() finds the KFD process by pid, and the
 * address in the GPU VMs of that process with amdgpu_vm_bo_lookup_mapping()
 * under the VM root and BO reservations; the registration hangs off the
 * VM (&amdgpu_vm.rdma) keyed by the mapping's page range, and the paths
 * that remove mappings detach it. One pin and DMA mapping is shared per
 * (BO, DMA device). Pinned bytes are limited by the rdma_pin_limit_mb
 * module parameter; the default, 0, means half of system memory.
 */

#include <linux/dma-mapping.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/pci-p2pdma.h>
#include <linux/pm_runtime.h>
#include <drm/drm_exec.h>
#include <drm/drm_prime.h>
#include <drm/ttm/ttm_tt.h>
#include <drm/amd_rdma.h>
#include <kunit/static_stub.h>
#include <kunit/visibility.h>

#include "amdgpu.h"
#include "amdgpu_amdkfd.h"
#include "amdgpu_rdma.h"
#include "amdgpu_vm.h"
#include "kfd_priv.h"

static unsigned int amdgpu_rdma_pin_limit_mb;
module_param_named(rdma_pin_limit_mb, amdgpu_rdma_pin_limit_mb, uint, 0444);
MODULE_PARM_DESC(rdma_pin_limit_mb,
		 "Most memory RDMA peers may pin, in MiB (0 = half of system memory)");

static struct amdgpu_peer_mgr amdgpu_rdma_mgr;
static bool amdgpu_rdma_ready;

VISIBLE_IF_KUNIT int amdgpu_rdma_pin(struct amdgpu_peer_mgr *mgr, void *obj,
				     struct device *dma_dev,
				     struct sg_table **out)
{
	struct amdgpu_bo *bo = obj;
	struct amdgpu_device *adev;
	struct device *gpu;
	struct sg_table *sgt;
	bool vram;
	int r;

	KUNIT_STATIC_STUB_REDIRECT(amdgpu_rdma_pin, mgr, obj, dma_dev, out);

	adev = amdgpu_ttm_adev(bo->tbo.bdev);
	gpu = adev_to_drm(adev)->dev;
	dma_resv_assert_held(bo->tbo.base.resv);
	vram = bo->preferred_domains & AMDGPU_GEM_DOMAIN_VRAM;
	if (vram) {
		/* Peer to peer only where the PCI topology allows it. */
		if (pci_p2pdma_distance(adev->pdev, dma_dev, false) < 0)
			return -EREMOTEIO;
		/* The peer reaches VRAM through the BAR. */
		bo->flags |= AMDGPU_GEM_CREATE_CPU_ACCESS_REQUIRED;
	}
	r = amdgpu_bo_pin(bo, vram ? AMDGPU_GEM_DOMAIN_VRAM :
				     AMDGPU_GEM_DOMAIN_GTT);
	if (r)
		return r;
	/* Pinning may have moved the BO: the peer must see the copy done. */
	if (dma_resv_wait_timeout(bo->tbo.base.resv, DMA_RESV_USAGE_KERNEL,
				  false, MAX_SCHEDULE_TIMEOUT) <= 0) {
		r = -EIO;
		goto err_unpin;
	}

	switch (bo->tbo.resource->mem_type) {
	case TTM_PL_TT:
		sgt = drm_prime_pages_to_sg(adev_to_drm(adev),
					    bo->tbo.ttm->pages,
					    bo->tbo.ttm->num_pages);
		if (IS_ERR(sgt)) {
			r = PTR_ERR(sgt);
			goto err_unpin;
		}
		r = dma_map_sgtable(dma_dev, sgt, DMA_BIDIRECTIONAL,
				    DMA_ATTR_SKIP_CPU_SYNC);
		if (r) {
			sg_free_table(sgt);
			kfree(sgt);
			goto err_unpin;
		}
		break;
	case TTM_PL_VRAM:
		/* Pinned earlier by someone else outside the BAR? */
		if (!amdgpu_res_cpu_visible(adev, bo->tbo.resource)) {
			r = -EREMOTEIO;
			goto err_unpin;
		}
		r = amdgpu_vram_mgr_alloc_sgt(adev, bo->tbo.resource, 0,
					      amdgpu_bo_size(bo), dma_dev,
					      DMA_BIDIRECTIONAL, &sgt);
		if (r)
			goto err_unpin;
		break;
	default:
		r = -EOPNOTSUPP;
		goto err_unpin;
	}

	/*
	 * The KFD process bound to the device holds it awake; keep it so for
	 * as long as the peer may DMA to it.
	 */
	pm_runtime_get_noresume(gpu);
	amdgpu_bo_ref(bo);
	*out = sgt;
	return 0;

err_unpin:
	amdgpu_bo_unpin(bo);
	return r;
}

VISIBLE_IF_KUNIT void amdgpu_rdma_unpin(struct amdgpu_peer_mgr *mgr,
					void *obj, struct device *dma_dev,
					struct sg_table *sgt)
{
	struct amdgpu_bo *bo = obj;
	struct amdgpu_device *adev;

	KUNIT_STATIC_STUB_REDIRECT(amdgpu_rdma_unpin, mgr, obj, dma_dev, sgt);

	adev = amdgpu_ttm_adev(bo->tbo.bdev);
	if (sg_page(sgt->sgl)) {
		dma_unmap_sgtable(dma_dev, sgt, DMA_BIDIRECTIONAL, 0);
		sg_free_table(sgt);
		kfree(sgt);
	} else {
		amdgpu_vram_mgr_free_sgt(dma_dev, DMA_BIDIRECTIONAL, sgt);
	}
	if (!WARN_ON(amdgpu_bo_reserve(bo, true))) {
		amdgpu_bo_unpin(bo);
		amdgpu_bo_unreserve(bo);
	}
	pm_runtime_mark_last_busy(adev_to_drm(adev)->dev);
	pm_runtime_put_autosuspend(adev_to_drm(adev)->dev);
	amdgpu_bo_unref(&bo);
}

static const struct amdgpu_peer_pin_ops amdgpu_rdma_pin_ops = {
	.pin = amdgpu_rdma_pin,
	.unpin = amdgpu_rdma_unpin,
};

/*
 * Look @address up in @vm and lock the VM root and the mapped BO in @exec.
 * Returns -ENOENT if @vm has no mapping there, so the caller tries the
 * process's other VMs. Whether the mapping is usable is for
 * amdgpu_rdma_check() to say.
 */
VISIBLE_IF_KUNIT int amdgpu_rdma_lookup(struct amdgpu_vm *vm,
					struct drm_exec *exec, u64 address,
					struct amdgpu_bo_va_mapping **out)
{
	struct amdgpu_bo_va_mapping *mapping = NULL;
	struct amdgpu_bo *bo;
	int r;

	KUNIT_STATIC_STUB_REDIRECT(amdgpu_rdma_lookup, vm, exec, address, out);

	drm_exec_until_all_locked(exec) {
		r = amdgpu_vm_lock_pd(vm, exec, 0);
		drm_exec_retry_on_contention(exec);
		if (r)
			return r;
		mapping = amdgpu_vm_bo_lookup_mapping(vm, address >>
						      AMDGPU_GPU_PAGE_SHIFT);
		if (!mapping)
			return -ENOENT;
		bo = mapping->bo_va ? mapping->bo_va->base.bo : NULL;
		if (bo) {
			r = drm_exec_lock_obj(exec, &bo->tbo.base);
			drm_exec_retry_on_contention(exec);
			if (r)
				return r;
		}
	}
	*out = mapping;
	return 0;
}

/*
 * Whether [@address, @address + @length) of @mapping in @vm may be handed
 * to a peer: 0, -EFAULT (range leaves the mapping, PRT) or -EOPNOTSUPP.
 */
static int amdgpu_rdma_check(struct amdgpu_vm *vm,
			     struct amdgpu_bo_va_mapping *mapping,
			     u64 address, u64 length)
{
	struct amdgpu_device *adev = amdgpu_ttm_adev(vm->root.bo->tbo.bdev);
	struct amdgpu_bo *bo = mapping->bo_va ? mapping->bo_va->base.bo : NULL;

	/* The whole range must lie in this one mapping. */
	if (address >> AMDGPU_GPU_PAGE_SHIFT < mapping->start ||
	    (address + length - 1) >> AMDGPU_GPU_PAGE_SHIFT > mapping->last)
		return -EFAULT;
	if (!bo || mapping->flags & AMDGPU_PTE_PRT_FLAG(adev))
		return -EFAULT;
	/* Other processes' and devices' memory, doorbells, MMIO, userptr. */
	if (bo->tbo.base.import_attach || bo->tbo.type == ttm_bo_type_sg ||
	    amdgpu_ttm_tt_get_usermm(bo->tbo.ttm) ||
	    bo->preferred_domains & AMDGPU_GEM_DOMAIN_DOORBELL ||
	    !(bo->preferred_domains & (AMDGPU_GEM_DOMAIN_VRAM |
				       AMDGPU_GEM_DOMAIN_GTT)))
		return -EOPNOTSUPP;
	return 0;
}

/* The KFD process of @pid, with a reference; NULL if it has none. */
VISIBLE_IF_KUNIT struct kfd_process *amdgpu_rdma_process_get(struct pid *pid)
{
	KUNIT_STATIC_STUB_REDIRECT(amdgpu_rdma_process_get, pid);
	return kfd_lookup_process_by_pid(pid);
}

/*
 * Find [@address, @address + @length) in the GPU VMs of the KFD process
 * of @pid and call @fn with the process mutex and the VM root and BO
 * reservations held.
 */
static int amdgpu_rdma_find(u64 address, u64 length, struct pid *pid,
			    int (*fn)(struct amdgpu_vm *vm,
				      struct amdgpu_bo_va_mapping *mapping,
				      void *data),
			    void *data)
{
	struct amdgpu_bo_va_mapping *mapping;
	struct kfd_process *p;
	struct drm_exec exec;
	int i, r = -EFAULT;

	if (!length || address + length - 1 < address || !pid)
		return -EINVAL;
	if (!READ_ONCE(amdgpu_rdma_ready))
		return -ENODEV;

	p = amdgpu_rdma_process_get(pid);
	if (!p)
		return -ESRCH;

	mutex_lock(&p->mutex);
	for (i = 0; i < p->n_pdds; i++) {
		struct amdgpu_vm *vm;
		int ret;

		if (!p->pdds[i]->drm_priv)
			continue;
		vm = drm_priv_to_vm(p->pdds[i]->drm_priv);
		drm_exec_init(&exec, DRM_EXEC_INTERRUPTIBLE_WAIT |
			      DRM_EXEC_IGNORE_DUPLICATES, 2);
		ret = amdgpu_rdma_lookup(vm, &exec, address, &mapping);
		if (!ret)
			ret = amdgpu_rdma_check(vm, mapping, address, length);
		if (!ret)
			ret = fn(vm, mapping, data);
		drm_exec_fini(&exec);
		if (ret == -ENOENT)
			continue;
		r = ret;
		/* An import in this VM may be the real BO in another. */
		if (r != -EOPNOTSUPP)
			break;
	}
	mutex_unlock(&p->mutex);
	kfd_unref_process(p);
	return r;
}

struct amdgpu_rdma_get {
	u64 address;
	u64 length;
	struct pid *pid;
	struct device *dma_dev;
	void (*free_cb)(void *client_priv);
	void *client_priv;
	struct amd_p2p_info *info;
};

static int amdgpu_rdma_get_found(struct amdgpu_vm *vm,
				 struct amdgpu_bo_va_mapping *mapping,
				 void *data)
{
	struct amdgpu_rdma_get *get = data;
	struct amdgpu_bo *bo = mapping->bo_va->base.bo;
	struct amdgpu_peer_reg_args args = {
		.first = mapping->start,
		.last = mapping->last,
		.obj = bo,
		.obj_size = amdgpu_bo_size(bo),
		.offset = get->address -
			  (mapping->start << AMDGPU_GPU_PAGE_SHIFT) +
			  mapping->offset,
		.va = get->address,
		.length = get->length,
		.pid = get->pid,
		.dma_dev = get->dma_dev,
		.free_cb = get->free_cb,
		.client_priv = get->client_priv,
	};

	return amdgpu_peer_register(&vm->rdma, &args, &get->info);
}

static int amdgpu_rdma_get_pages(u64 address, u64 length, struct pid *pid,
				 struct device *dma_dev,
				 struct amd_p2p_info **amd_p2p_data,
				 void (*free_callback)(void *client_priv),
				 void *client_priv)
{
	struct amdgpu_rdma_get get = {
		.address = address,
		.length = length,
		.pid = pid,
		.dma_dev = dma_dev,
		.free_cb = free_callback,
		.client_priv = client_priv,
	};
	int r;

	if (!amd_p2p_data || !dma_dev)
		return -EINVAL;
	r = amdgpu_rdma_find(address, length, pid, amdgpu_rdma_get_found,
			     &get);
	if (r)
		return r;
	*amd_p2p_data = get.info;
	return 0;
}

static int amdgpu_rdma_put_pages(struct amd_p2p_info **amd_p2p_data)
{
	return amdgpu_peer_put(amd_p2p_data);
}

static int amdgpu_rdma_found_nop(struct amdgpu_vm *vm,
				 struct amdgpu_bo_va_mapping *mapping,
				 void *data)
{
	return 0;
}

static int amdgpu_rdma_is_gpu_address(u64 address, struct pid *pid)
{
	return !amdgpu_rdma_find(address, 1, pid, amdgpu_rdma_found_nop, NULL);
}

static int amdgpu_rdma_page_size_found(struct amdgpu_vm *vm,
				       struct amdgpu_bo_va_mapping *mapping,
				       void *data)
{
	unsigned long *page_size = data;
	unsigned long size;

	size = amdgpu_peer_mgr_page_size(&amdgpu_rdma_mgr,
					 mapping->bo_va->base.bo);
	*page_size = size ?: PAGE_SIZE;
	return 0;
}

static int amdgpu_rdma_get_page_size(u64 address, u64 length,
				     struct pid *pid,
				     unsigned long *page_size)
{
	unsigned long size;
	int r;

	if (!page_size)
		return -EINVAL;
	r = amdgpu_rdma_find(address, length, pid, amdgpu_rdma_page_size_found,
			     &size);
	if (!r)
		*page_size = size;
	return r;
}

static void amdgpu_rdma_flush_put_pages(void)
{
	if (READ_ONCE(amdgpu_rdma_ready))
		amdgpu_peer_mgr_flush(&amdgpu_rdma_mgr);
}

static const struct amd_rdma_interface amdgpu_rdma_interface = {
	.get_pages = amdgpu_rdma_get_pages,
	.put_pages = amdgpu_rdma_put_pages,
	.is_gpu_address = amdgpu_rdma_is_gpu_address,
	.get_page_size = amdgpu_rdma_get_page_size,
	.flush_put_pages = amdgpu_rdma_flush_put_pages,
};

/**
 * amdkfd_query_rdma_interface - get the peer memory operations
 * @rdma: set to the operations on success
 *
 * See include/drm/amd_rdma.h.
 *
 * Return: 0, -EINVAL if @rdma is NULL, or -ENODEV if the interface could
 * not be set up.
 */
int amdkfd_query_rdma_interface(const struct amd_rdma_interface **rdma)
{
	if (!rdma)
		return -EINVAL;
	if (!READ_ONCE(amdgpu_rdma_ready))
		return -ENODEV;
	*rdma = &amdgpu_rdma_interface;
	return 0;
}
EXPORT_SYMBOL_GPL(amdkfd_query_rdma_interface);

/**
 * amdgpu_rdma_init - set up the peer memory interface at module load
 *
 * Return: 0 or -ENOMEM.
 */
int amdgpu_rdma_init(void)
{
	u64 quota = (u64)amdgpu_rdma_pin_limit_mb << 20;
	int r;

	if (!quota)
		quota = ((u64)totalram_pages() << PAGE_SHIFT) / 2;
	r = amdgpu_peer_mgr_init(&amdgpu_rdma_mgr, &amdgpu_rdma_pin_ops, quota);
	if (r)
		return r;
	WRITE_ONCE(amdgpu_rdma_ready, true);
	return 0;
}

/**
 * amdgpu_rdma_fini - tear the interface down at module unload
 *
 * Every VM is gone by then; waits for the deferred releases.
 */
void amdgpu_rdma_fini(void)
{
	if (!amdgpu_rdma_ready)
		return;
	WRITE_ONCE(amdgpu_rdma_ready, false);
	amdgpu_peer_mgr_fini(&amdgpu_rdma_mgr);
}

/**
 * amdgpu_rdma_device_fini - a GPU goes away
 * @adev: the device
 *
 * Every VM of @adev is gone, so every registration of its memory has been
 * detached and called back; releases that clients' put_pages() deferred
 * may still be queued. Run them now, while @adev can still be unpinned
 * and its runtime PM reference dropped.
 *
 * Context: process context, no amdgpu lock held.
 */
void amdgpu_rdma_device_fini(struct amdgpu_device *adev)
{
	amdgpu_rdma_flush_put_pages();
}

/**
 * amdgpu_rdma_vm_init - prepare a VM to carry peer registrations
 * @vm: the VM
 */
void amdgpu_rdma_vm_init(struct amdgpu_vm *vm)
{
	amdgpu_peer_owner_init(&vm->rdma, &amdgpu_rdma_mgr);
}

/**
 * amdgpu_rdma_vm_fini - the VM goes away: fire the callbacks of all its
 * registrations and free the tombstones
 * @vm: the VM
 *
 * Context: process context, no amdgpu lock held.
 */
void amdgpu_rdma_vm_fini(struct amdgpu_vm *vm)
{
	amdgpu_peer_owner_fini(&vm->rdma);
}

/**
 * amdgpu_rdma_vm_invalidate - mappings of a page range are going away
 * @vm: the VM
 * @first: first GPU page of the range
 * @last: last GPU page, inclusive
 *
 * Detaches the registrations found through mappings overlapping the range.
 * The caller holds the VM root reservation; it (or, failing that, a
 * worker) calls amdgpu_rdma_vm_flush() after dropping its locks.
 */
void amdgpu_rdma_vm_invalidate(struct amdgpu_vm *vm, u64 first, u64 last)
{
	if (!RB_EMPTY_ROOT(&vm->rdma.regs.rb_root))
		amdgpu_peer_invalidate(&vm->rdma, first, last);
}

/**
 * amdgpu_rdma_vm_flush - run the free callbacks of detached registrations
 * @vm: the VM
 *
 * Context: process context, no amdgpu or KFD lock held; call before
 * returning to user space from a path that removed mappings.
 */
void amdgpu_rdma_vm_flush(struct amdgpu_vm *vm)
{
	if (!list_empty_careful(&vm->rdma.dying) ||
	    work_busy(&vm->rdma.flush_work))
		amdgpu_peer_owner_flush(&vm->rdma);
}

/**
 * amdgpu_rdma_process_flush - amdgpu_rdma_vm_flush() for a KFD process
 * @p: the process
 *
 * Context: process context, @p->mutex not held.
 */
void amdgpu_rdma_process_flush(struct kfd_process *p)
{
	int i;

	for (i = 0; i < READ_ONCE(p->n_pdds); i++)
		if (p->pdds[i]->drm_priv)
			amdgpu_rdma_vm_flush(drm_priv_to_vm(p->pdds[i]->drm_priv));
}

/**
 * amdgpu_rdma_bo_release_notify - check that no registration outlives a BO
 * @bo: the BO being released
 *
 * A registration holds a BO reference, so this cannot happen.
 */
void amdgpu_rdma_bo_release_notify(struct amdgpu_bo *bo)
{
	if (READ_ONCE(amdgpu_rdma_ready) && bo->tbo.pin_count)
		WARN_ON_ONCE(amdgpu_peer_mgr_obj_pinned(&amdgpu_rdma_mgr, bo));
}
