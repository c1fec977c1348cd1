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
 * under the VM root reservation; the registration hangs off the VM
 * (&amdgpu_vm.rdma, created at the VM's first registration) keyed by the
 * mapping's page range, and the paths that remove mappings detach it.
 *
 * A get of a BO that is already pinned for the DMA device and direction
 * takes the process mutex and the VM root reservation, both per process,
 * and the core's spinlock, and allocates only the registration. The first
 * get of a BO locks it too (drm_exec), checks the P2P policy, pins it and
 * maps it; that path also takes the glue's one global mutex, around the
 * list of per-GPU records (quota, revocation).
 *
 * GPU reset (amdgpu_amdkfd_pre_reset()) queues the free callbacks of the
 * GPU's registrations; its removal (amdgpu_amdkfd_suspend() at device
 * teardown, amdgpu_amdkfd_device_fini_sw()) runs them and ends persistent
 * ones.
 *
 * Module parameters: rdma_pin_limit_mb (per GPU, 0 = its VRAM plus half of
 * system memory), rdma_p2p and rdma_p2p_devices (the P2P policy),
 * rdma_max_tombstones and rdma_tombstone_min_ms (the tombstone bound per
 * RDMA device).
 */

#include <linux/bitmap.h>
#include <linux/dma-mapping.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/pci-p2pdma.h>
#include <linux/pm_runtime.h>
#include <linux/string.h>
#include <linux/xarray.h>
#include <drm/drm_drv.h>
#include <drm/drm_exec.h>
#include <drm/drm_prime.h>
#include <drm/ttm/ttm_tt.h>
#include <drm/amd_rdma.h>
#include <kunit/static_stub.h>
#include <kunit/visibility.h>

#include "amdgpu.h"
#include "amdgpu_amdkfd.h"
#include "amdgpu_peer_reg.h"
#include "amdgpu_rdma.h"
#include "amdgpu_vm.h"
#include "kfd_priv.h"

static unsigned int amdgpu_rdma_pin_limit_mb;
module_param_named(rdma_pin_limit_mb, amdgpu_rdma_pin_limit_mb, uint, 0444);
MODULE_PARM_DESC(rdma_pin_limit_mb,
		 "Most memory of one GPU RDMA peers may register at once, in MiB (0 = its VRAM plus half of system memory)");

VISIBLE_IF_KUNIT int amdgpu_rdma_p2p = -1;
EXPORT_SYMBOL_IF_KUNIT(amdgpu_rdma_p2p);
module_param_named(rdma_p2p, amdgpu_rdma_p2p, int, 0644);
MODULE_PARM_DESC(rdma_p2p,
		 "Peer-to-peer DMA to VRAM for RDMA peers (-1 = where pci_p2pdma_distance() allows it or rdma_p2p_devices names the GPU (default), 0 = never)");

VISIBLE_IF_KUNIT char *amdgpu_rdma_p2p_devices;
EXPORT_SYMBOL_IF_KUNIT(amdgpu_rdma_p2p_devices);
module_param_named(rdma_p2p_devices, amdgpu_rdma_p2p_devices, charp, 0444);
MODULE_PARM_DESC(rdma_p2p_devices,
		 "GPUs whose peer-to-peer path to every RDMA peer the administrator vouches for where pci_p2pdma_distance() does not know it: PCI names as in /sys/bus/pci/devices, comma-separated (e.g. 0000:41:00.0,0000:c1:00.0)");

static unsigned int amdgpu_rdma_max_tombstones = 16384;
module_param_named(rdma_max_tombstones, amdgpu_rdma_max_tombstones, uint,
		   0444);
MODULE_PARM_DESC(rdma_max_tombstones,
		 "Registrations per RDMA device whose free callback ran and that it did not put, each kept at least rdma_tombstone_min_ms; past that many, a get with a free callback frees the oldest ones that old, or fails with -EAGAIN if none is (0 = no limit: kept until put)");

static unsigned int amdgpu_rdma_tombstone_min_ms = 10000;
module_param_named(rdma_tombstone_min_ms, amdgpu_rdma_tombstone_min_ms, uint,
		   0444);
MODULE_PARM_DESC(rdma_tombstone_min_ms,
		 "Time after its free callback returned during which a registration not put is kept whatever rdma_max_tombstones says, so that an RDMA device's put in that time releases it and no other registration, in ms (default 10000)");

static struct amdgpu_peer_mgr amdgpu_rdma_mgr;
static bool amdgpu_rdma_ready;
static struct amdgpu_rdma_counters amdgpu_rdma_counters;

/*
 * BOs that peers pin, by address: xa_mk_value() of twice their peer pins,
 * plus one if AMDGPU_GEM_CREATE_CPU_ACCESS_REQUIRED was clear before the
 * first of those pins. Changed under the BO's reservation only.
 */
static DEFINE_XARRAY(amdgpu_rdma_cpu_access);

/* Quota records, one per GPU that has had a pin; under the mutex. */
struct amdgpu_rdma_dev {
	struct list_head link;
	struct amdgpu_device *adev;
	struct amdgpu_peer_dev peer;
};

static LIST_HEAD(amdgpu_rdma_devs);
static DEFINE_MUTEX(amdgpu_rdma_devs_lock);

static struct amdgpu_rdma_dev *amdgpu_rdma_dev_find(struct amdgpu_device *adev)
{
	struct amdgpu_rdma_dev *rdev;

	lockdep_assert_held(&amdgpu_rdma_devs_lock);
	list_for_each_entry(rdev, &amdgpu_rdma_devs, link)
		if (rdev->adev == adev)
			return rdev;
	return NULL;
}

/* The quota record of @adev, created at its first pin. */
static struct amdgpu_peer_dev *amdgpu_rdma_dev_get(struct amdgpu_device *adev)
{
	struct amdgpu_rdma_dev *rdev;
	u64 limit;

	mutex_lock(&amdgpu_rdma_devs_lock);
	atomic_inc(&amdgpu_rdma_counters.global_locks);
	rdev = amdgpu_rdma_dev_find(adev);
	if (!rdev) {
		rdev = kzalloc(sizeof(*rdev), GFP_KERNEL);
		if (rdev) {
			atomic_inc(&amdgpu_rdma_counters.allocs);
			limit = (u64)amdgpu_rdma_pin_limit_mb << 20;
			if (!limit)
				limit = adev->gmc.real_vram_size +
					((u64)totalram_pages() << PAGE_SHIFT) / 2;
			rdev->adev = adev;
			amdgpu_peer_dev_init(&amdgpu_rdma_mgr, &rdev->peer,
					     limit);
			list_add_tail(&rdev->link, &amdgpu_rdma_devs);
		}
	}
	mutex_unlock(&amdgpu_rdma_devs_lock);
	return rdev ? &rdev->peer : NULL;
}

/*
 * The P2P policy. pci_p2pdma_distance() knows the PCIe topologies where
 * peer-to-peer through the host bridge is known to work; many that work
 * are not on its list (the Xeon E5 v4 host bridge of ROCm/amdgpu#169 is
 * one), so the administrator can vouch for the path of one GPU at a time
 * by naming it in amdgpu.rdma_p2p_devices, or forbid P2P to VRAM with
 * amdgpu.rdma_p2p=0.
 */
VISIBLE_IF_KUNIT int amdgpu_rdma_p2p_distance(struct amdgpu_device *adev,
					      struct device *dma_dev)
{
	KUNIT_STATIC_STUB_REDIRECT(amdgpu_rdma_p2p_distance, adev, dma_dev);
	return pci_p2pdma_distance(adev->pdev, dma_dev, false);
}
EXPORT_SYMBOL_IF_KUNIT(amdgpu_rdma_p2p_distance);

/* Whether amdgpu.rdma_p2p_devices names the device of @adev. */
static bool amdgpu_rdma_p2p_vouched(struct amdgpu_device *adev)
{
	const char *name = dev_name(adev->dev);
	const char *list = amdgpu_rdma_p2p_devices;
	size_t len = strlen(name);
	const char *end;

	for (; list && *list; list = *end ? end + 1 : end) {
		end = strchrnul(list, ',');
		if (end - list == len && !strncmp(list, name, len))
			return true;
	}
	return false;
}

VISIBLE_IF_KUNIT int amdgpu_rdma_p2p_check(struct amdgpu_device *adev,
					   struct device *dma_dev)
{
	if (!READ_ONCE(amdgpu_rdma_p2p))
		return -EREMOTEIO;
	if (amdgpu_rdma_p2p_vouched(adev))
		return 0;
	return amdgpu_rdma_p2p_distance(adev, dma_dev) < 0 ? -EREMOTEIO : 0;
}
EXPORT_SYMBOL_IF_KUNIT(amdgpu_rdma_p2p_check);

/*
 * A peer pin of @bo is about to be made, with the BO reserved. It will
 * set AMDGPU_GEM_CREATE_CPU_ACCESS_REQUIRED: amdgpu_bo_pin() sets it at
 * the first pin of a BO not created NO_CPU_ACCESS, and for @vram this
 * sets it in any case, because the peer reaches VRAM through the BAR, so
 * the BO must stay in the CPU-visible part. Nothing clears it at unpin:
 * remember whether it was clear before the first peer pin, so that the
 * last one can clear it again (amdgpu_rdma_cpu_access_put()).
 */
static int amdgpu_rdma_cpu_access_get(struct amdgpu_bo *bo, bool vram)
{
	unsigned long key = (unsigned long)bo, v;
	void *old;

	dma_resv_assert_held(bo->tbo.base.resv);
	old = xa_load(&amdgpu_rdma_cpu_access, key);
	v = old ? xa_to_value(old) :
	    !(bo->flags & AMDGPU_GEM_CREATE_CPU_ACCESS_REQUIRED);
	old = xa_store(&amdgpu_rdma_cpu_access, key, xa_mk_value(v + 2),
		       GFP_KERNEL);
	if (xa_is_err(old))
		return xa_err(old);
	if (vram)
		bo->flags |= AMDGPU_GEM_CREATE_CPU_ACCESS_REQUIRED;
	return 0;
}

/*
 * A peer pin of @bo is gone, or was not made (the BO unpinned, its
 * reservation held): at the last one, clear the flag if it was clear
 * before the first. Another user's pin made while the BO was pinned did
 * not set it (amdgpu_bo_pin() only sets it at a first pin); a CPU fault
 * that set it meanwhile sets it again when needed, as it does after
 * amdgpu_bo_move() cleared it.
 */
static void amdgpu_rdma_cpu_access_put(struct amdgpu_bo *bo)
{
	unsigned long key = (unsigned long)bo, v;
	void *old;

	dma_resv_assert_held(bo->tbo.base.resv);
	old = xa_load(&amdgpu_rdma_cpu_access, key);
	if (WARN_ON(!old))
		return;
	v = xa_to_value(old) - 2;
	if (v > 1) {
		/* Replaces an entry: allocates nothing */
		xa_store(&amdgpu_rdma_cpu_access, key, xa_mk_value(v),
			 GFP_KERNEL);
		return;
	}
	xa_erase(&amdgpu_rdma_cpu_access, key);
	if (v)
		bo->flags &= ~AMDGPU_GEM_CREATE_CPU_ACCESS_REQUIRED;
}

/*
 * dma_map_sgtable() of a GTT BO's pages for the peer. Tests make it fail
 * (KUNIT_STATIC_STUB_REDIRECT): with no IOMMU, dma-direct fails only with
 * a WARN.
 */
VISIBLE_IF_KUNIT int amdgpu_rdma_map_sgtable(struct device *dma_dev,
					     struct sg_table *sgt,
					     enum dma_data_direction dir)
{
	KUNIT_STATIC_STUB_REDIRECT(amdgpu_rdma_map_sgtable, dma_dev, sgt, dir);
	return dma_map_sgtable(dma_dev, sgt, dir, DMA_ATTR_SKIP_CPU_SYNC);
}
EXPORT_SYMBOL_IF_KUNIT(amdgpu_rdma_map_sgtable);

/*
 * The peer's DMA mapping of pinned @bo: its pages through the DMA API
 * (GTT), or its place behind the BAR (VRAM, amdgpu_vram_mgr_alloc_sgt()).
 * Tests make it fail as a mapping through an IOMMU out of address space
 * does (KUNIT_STATIC_STUB_REDIRECT).
 */
VISIBLE_IF_KUNIT int amdgpu_rdma_dma_map(struct amdgpu_device *adev,
					 struct amdgpu_bo *bo,
					 struct device *dma_dev,
					 enum dma_data_direction dir,
					 struct sg_table **out)
{
	struct sg_table *sgt;
	int r;

	KUNIT_STATIC_STUB_REDIRECT(amdgpu_rdma_dma_map, adev, bo, dma_dev, dir,
				   out);
	switch (bo->tbo.resource->mem_type) {
	case TTM_PL_TT:
		sgt = drm_prime_pages_to_sg(adev_to_drm(adev),
					    bo->tbo.ttm->pages,
					    bo->tbo.ttm->num_pages);
		if (IS_ERR(sgt))
			return PTR_ERR(sgt);
		r = amdgpu_rdma_map_sgtable(dma_dev, sgt, dir);
		if (r) {
			sg_free_table(sgt);
			kfree(sgt);
			return r;
		}
		break;
	case TTM_PL_VRAM:
		/* Pinned earlier by someone else outside the BAR? */
		if (!amdgpu_res_cpu_visible(adev, bo->tbo.resource))
			return -EREMOTEIO;
		r = amdgpu_vram_mgr_alloc_sgt(adev, bo->tbo.resource, 0,
					      amdgpu_bo_size(bo), dma_dev, dir,
					      &sgt);
		if (r)
			return r;
		break;
	default:
		return -EOPNOTSUPP;
	}
	*out = sgt;
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(amdgpu_rdma_dma_map);

static int amdgpu_rdma_pin(struct amdgpu_peer_mgr *mgr, void *obj,
			   struct device *dma_dev, enum dma_data_direction dir,
			   struct sg_table **out)
{
	struct amdgpu_bo *bo = obj;
	struct amdgpu_device *adev;
	struct device *gpu;
	bool vram;
	int r;

	adev = amdgpu_ttm_adev(bo->tbo.bdev);
	gpu = adev_to_drm(adev)->dev;
	dma_resv_assert_held(bo->tbo.base.resv);
	vram = bo->preferred_domains & AMDGPU_GEM_DOMAIN_VRAM;
	if (vram) {
		r = amdgpu_rdma_p2p_check(adev, dma_dev);
		if (r)
			return r;
	}
	r = amdgpu_rdma_cpu_access_get(bo, vram);
	if (r)
		return r;
	r = amdgpu_bo_pin(bo, vram ? AMDGPU_GEM_DOMAIN_VRAM :
				     AMDGPU_GEM_DOMAIN_GTT);
	if (r)
		goto err_cpu_access;
	/* Pinning may have moved the BO: the peer must see the copy done. */
	if (dma_resv_wait_timeout(bo->tbo.base.resv, DMA_RESV_USAGE_KERNEL,
				  false, MAX_SCHEDULE_TIMEOUT) <= 0) {
		r = -EIO;
		goto err_unpin;
	}
	r = amdgpu_rdma_dma_map(adev, bo, dma_dev, dir, out);
	if (r)
		goto err_unpin;

	/*
	 * The KFD process bound to the device holds it awake; keep it so for
	 * as long as the peer may DMA to it.
	 */
	pm_runtime_get_noresume(gpu);
	amdgpu_bo_ref(bo);
	return 0;

err_unpin:
	amdgpu_bo_unpin(bo);
err_cpu_access:
	amdgpu_rdma_cpu_access_put(bo);
	return r;
}

static void amdgpu_rdma_unpin(struct amdgpu_peer_mgr *mgr, void *obj,
			      struct device *dma_dev,
			      enum dma_data_direction dir,
			      struct sg_table *sgt)
{
	struct amdgpu_bo *bo = obj;
	struct amdgpu_device *adev;

	adev = amdgpu_ttm_adev(bo->tbo.bdev);
	if (sg_page(sgt->sgl)) {
		dma_unmap_sgtable(dma_dev, sgt, dir, 0);
		sg_free_table(sgt);
		kfree(sgt);
	} else {
		amdgpu_vram_mgr_free_sgt(dma_dev, dir, sgt);
	}
	if (!WARN_ON(amdgpu_bo_reserve(bo, true))) {
		amdgpu_bo_unpin(bo);
		amdgpu_rdma_cpu_access_put(bo);
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

/* A lookup in one VM: the range, and the mapping found for it. */
struct amdgpu_rdma_find {
	u64 address;
	u64 length;
	struct amdgpu_vm *vm;
	struct amdgpu_bo_va_mapping *mapping;
	/* the BO is locked too, through drm_exec: a pin may be created */
	bool bo_locked;
};

/*
 * Whether the range of @f may be handed to a peer: 0, -EFAULT (range
 * leaves the mapping, PRT, unreadable) or -EOPNOTSUPP (not memory of this
 * process that a peer may reach).
 */
static int amdgpu_rdma_check(const struct amdgpu_rdma_find *f)
{
	struct amdgpu_bo_va_mapping *mapping = f->mapping;
	struct amdgpu_device *adev = amdgpu_ttm_adev(f->vm->root.bo->tbo.bdev);
	struct amdgpu_bo *bo = mapping->bo_va ? mapping->bo_va->base.bo : NULL;

	/* The whole range must lie in this one mapping. */
	if (f->address >> AMDGPU_GPU_PAGE_SHIFT < mapping->start ||
	    (f->address + f->length - 1) >> AMDGPU_GPU_PAGE_SHIFT >
	    mapping->last)
		return -EFAULT;
	if (!bo || mapping->flags & AMDGPU_PTE_PRT_FLAG(adev) ||
	    !(mapping->flags & AMDGPU_PTE_READABLE))
		return -EFAULT;
	/*
	 * Only user BOs: kernel BOs (the seq64 page and the CSA are mapped
	 * into every VM), doorbell and MMIO remaps (SG BOs), userptr, other
	 * devices' memory and encrypted (TMZ) memory are not for peers.
	 */
	if (bo->tbo.type != ttm_bo_type_device || bo->tbo.base.import_attach ||
	    amdgpu_ttm_tt_get_usermm(bo->tbo.ttm) ||
	    bo->flags & AMDGPU_GEM_CREATE_ENCRYPTED ||
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
EXPORT_SYMBOL_IF_KUNIT(amdgpu_rdma_process_get);

typedef int (*amdgpu_rdma_found_t)(struct amdgpu_rdma_find *f, void *data);

/*
 * Look the range up in @f->vm and call @fn, first with the VM root
 * reserved alone; if @fn asks for the BO lock (%AMDGPU_PEER_NEED_PIN: it
 * has to pin), again with the root and the BO locked through drm_exec.
 */
static int amdgpu_rdma_find_vm(struct amdgpu_rdma_find *f,
			       amdgpu_rdma_found_t fn, void *data)
{
	struct dma_resv *resv = f->vm->root.bo->tbo.base.resv;
	struct amdgpu_bo_va_mapping *mapping;
	u64 pfn = f->address >> AMDGPU_GPU_PAGE_SHIFT;
	struct drm_exec exec;
	struct amdgpu_bo *bo;
	int r;

	r = dma_resv_lock_interruptible(resv, NULL);
	if (r)
		return r;
	atomic_inc(&amdgpu_rdma_counters.root_locks);
	f->bo_locked = false;
	f->mapping = amdgpu_vm_bo_lookup_mapping(f->vm, pfn);
	r = f->mapping ? amdgpu_rdma_check(f) : -ENOENT;
	if (!r)
		r = fn(f, data);
	dma_resv_unlock(resv);
	if (r != AMDGPU_PEER_NEED_PIN)
		return r;

	drm_exec_init(&exec, DRM_EXEC_INTERRUPTIBLE_WAIT |
		      DRM_EXEC_IGNORE_DUPLICATES, 2);
	atomic_inc(&amdgpu_rdma_counters.exec_locks);
	drm_exec_until_all_locked(&exec) {
		r = amdgpu_vm_lock_pd(f->vm, &exec, 0);
		drm_exec_retry_on_contention(&exec);
		if (r)
			goto out;
		mapping = amdgpu_vm_bo_lookup_mapping(f->vm, pfn);
		if (!mapping) {
			r = -ENOENT;
			goto out;
		}
		bo = mapping->bo_va ? mapping->bo_va->base.bo : NULL;
		if (bo) {
			r = drm_exec_lock_obj(&exec, &bo->tbo.base);
			drm_exec_retry_on_contention(&exec);
			if (r)
				goto out;
		}
	}
	/* The mapping may have changed while nothing was locked. */
	f->mapping = mapping;
	f->bo_locked = true;
	r = amdgpu_rdma_check(f);
	if (!r)
		r = fn(f, data);
out:
	drm_exec_fini(&exec);
	return r;
}

/*
 * Find [@address, @address + @length) in the GPU VMs of the KFD process
 * of @pid and call @fn with the process mutex and the VM root reservation
 * held (and the BO's, if @fn asks for it).
 */
static int amdgpu_rdma_find(u64 address, u64 length, struct pid *pid,
			    amdgpu_rdma_found_t fn, void *data)
{
	struct amdgpu_rdma_find f = {
		.address = address,
		.length = length,
	};
	struct kfd_process *p;
	int i, r = -EFAULT;

	might_sleep();
	if (!length || address + length - 1 < address)
		return -EINVAL;
	/* API 2.0: NULL is the calling process. */
	if (!pid)
		pid = task_pid(current);
	if (!READ_ONCE(amdgpu_rdma_ready))
		return -ENODEV;

	p = amdgpu_rdma_process_get(pid);
	if (!p)
		return -ESRCH;

	mutex_lock(&p->mutex);
	atomic_inc(&amdgpu_rdma_counters.proc_locks);
	for (i = 0; i < p->n_pdds; i++) {
		int ret;

		if (!p->pdds[i]->drm_priv)
			continue;
		f.vm = drm_priv_to_vm(p->pdds[i]->drm_priv);
		ret = amdgpu_rdma_find_vm(&f, fn, data);
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
	struct pid *pid;
	struct device *dma_dev;
	void (*free_cb)(void *client_priv);
	void *client_priv;
	struct amd_p2p_info **info;
	/* pins a failed registration gave up, unpinned once unlocked */
	struct list_head undo;
};

static int amdgpu_rdma_get_found(struct amdgpu_rdma_find *f, void *data)
{
	struct amdgpu_bo_va_mapping *mapping = f->mapping;
	struct amdgpu_bo *bo = mapping->bo_va->base.bo;
	struct amdgpu_device *adev = amdgpu_ttm_adev(bo->tbo.bdev);
	struct amdgpu_rdma_get *get = data;
	struct amdgpu_peer_owner *owner;
	struct amdgpu_peer_reg_args args = {
		.first = mapping->start,
		.last = mapping->last,
		.obj = bo,
		.obj_size = amdgpu_bo_size(bo),
		.offset = f->address -
			  (mapping->start << AMDGPU_GPU_PAGE_SHIFT) +
			  mapping->offset,
		.va = f->address,
		.length = f->length,
		.pid = get->pid,
		.dma_dev = get->dma_dev,
		/* A read-only GPU mapping gives the peer read access only. */
		.dir = mapping->flags & AMDGPU_PTE_WRITEABLE ?
		       DMA_BIDIRECTIONAL : DMA_TO_DEVICE,
		.free_cb = get->free_cb,
		.client_priv = get->client_priv,
		.may_pin = f->bo_locked,
	};
	int idx, r;

	/* Created at the VM's first registration, under its root lock. */
	owner = f->vm->rdma;
	if (!owner) {
		owner = amdgpu_peer_owner_create(&amdgpu_rdma_mgr);
		if (!owner)
			return -ENOMEM;
		/*
		 * Paired with amdgpu_rdma_vm_flush(), which runs without
		 * the root lock: it sees the owner initialised or NULL.
		 */
		smp_store_release(&f->vm->rdma, owner);
	}
	if (!f->bo_locked)
		return amdgpu_peer_register(owner, &args, get->info,
					    &get->undo);

	/* A new pin: not on a GPU that is going away. */
	if (!drm_dev_enter(adev_to_drm(adev), &idx))
		return -ENODEV;
	args.dev = amdgpu_rdma_dev_get(adev);
	r = args.dev ? amdgpu_peer_register(owner, &args, get->info,
					    &get->undo) : -ENOMEM;
	drm_dev_exit(idx);
	return r;
}

static int amdgpu_rdma_get_pages(u64 address, u64 length, struct pid *pid,
				 struct device *dma_dev,
				 struct amd_p2p_info **amd_p2p_data,
				 void (*free_callback)(void *client_priv),
				 void *client_priv)
{
	struct amdgpu_rdma_get get = {
		.pid = pid ?: task_pid(current),
		.dma_dev = dma_dev,
		.free_cb = free_callback,
		.client_priv = client_priv,
		.info = amd_p2p_data,
		.undo = LIST_HEAD_INIT(get.undo),
	};
	int r;

	if (!amd_p2p_data || !dma_dev)
		return -EINVAL;
	r = amdgpu_rdma_find(address, length, pid, amdgpu_rdma_get_found,
			     &get);
	/*
	 * amdgpu_rdma_unpin() reserves the BO, which the failed get held
	 * locked: unpin only now that nothing is locked.
	 */
	amdgpu_peer_register_undo(&amdgpu_rdma_mgr, &get.undo);
	return r;
}

static int amdgpu_rdma_put_pages(struct amd_p2p_info **amd_p2p_data)
{
	return amdgpu_peer_put(&amdgpu_rdma_mgr, amd_p2p_data);
}

static int amdgpu_rdma_found_nop(struct amdgpu_rdma_find *f, void *data)
{
	return 0;
}

static int amdgpu_rdma_is_gpu_address(u64 address, struct pid *pid)
{
	return !amdgpu_rdma_find(address, 1, pid, amdgpu_rdma_found_nop, NULL);
}

/*
 * The largest power of two, at most @cpu_page (PAGE_SIZE; a parameter so
 * that KUnit runs the 64 KiB case on x86 too), to which [@address,
 * @address + @length) can be rounded without leaving @mapping, and at
 * which VA and buffer offset agree (a mapping's offset into its BO is only
 * GPU-page aligned, which is less than a 64 KiB CPU page). It depends on
 * the range and the mapping only, never on where the BO happens to be or
 * on earlier gets. More than PAGE_SIZE cannot be promised: the DMA
 * addresses of VRAM for a peer depend on that peer's IOMMU, which
 * get_page_size() is not told.
 */
VISIBLE_IF_KUNIT unsigned long
amdgpu_rdma_page_size(const struct amdgpu_bo_va_mapping *mapping,
		      u64 address, u64 length, unsigned long cpu_page)
{
	u64 start = mapping->start << AMDGPU_GPU_PAGE_SHIFT;
	u64 end = (mapping->last + 1) << AMDGPU_GPU_PAGE_SHIFT;
	unsigned long size = cpu_page;

	while (size > AMDGPU_GPU_PAGE_SIZE &&
	       (ALIGN_DOWN(address, size) < start ||
		ALIGN(address + length, size) > end ||
		((mapping->offset - start) & (size - 1))))
		size >>= 1;
	return size;
}
EXPORT_SYMBOL_IF_KUNIT(amdgpu_rdma_page_size);

static int amdgpu_rdma_page_size_found(struct amdgpu_rdma_find *f,
				       void *data)
{
	unsigned long *page_size = data;

	*page_size = amdgpu_rdma_page_size(f->mapping, f->address, f->length,
					   PAGE_SIZE);
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

static const struct amd_rdma_interface amdgpu_rdma_interface = {
	.get_pages = amdgpu_rdma_get_pages,
	.put_pages = amdgpu_rdma_put_pages,
	.is_gpu_address = amdgpu_rdma_is_gpu_address,
	.get_page_size = amdgpu_rdma_get_page_size,
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
 * amdkfd_rdma_capabilities - what this amdgpu guarantees its peers
 *
 * See include/drm/amd_rdma.h.
 *
 * Return: a mask of AMD_RDMA_CAP_* bits; 0 if the interface is not set up.
 */
u64 amdkfd_rdma_capabilities(void)
{
	if (!READ_ONCE(amdgpu_rdma_ready))
		return 0;
	return AMD_RDMA_CAP_FREE_CALLBACK | AMD_RDMA_CAP_PERSISTENT |
	       AMD_RDMA_CAP_PUT_ANY_CONTEXT | AMD_RDMA_CAP_LATE_PUT |
	       AMD_RDMA_CAP_DEVICE_EVENTS | AMD_RDMA_CAP_RETRY |
	       (AMDGPU_PEER_PUT_CAN_WAIT ? AMD_RDMA_CAP_PUT_WAITS_CALLBACK : 0);
}
EXPORT_SYMBOL_GPL(amdkfd_rdma_capabilities);

/**
 * amdkfd_rdma_retry - whether a callback began since get_pages()
 * @info: a registration the caller has not put
 *
 * See include/drm/amd_rdma.h.
 *
 * Context: any.
 * Return: false while the addresses in @info stay valid; true otherwise.
 */
bool amdkfd_rdma_retry(const struct amd_p2p_info *info)
{
	if (!READ_ONCE(amdgpu_rdma_ready))
		return true;
	return amdgpu_peer_retry(&amdgpu_rdma_mgr, info);
}
EXPORT_SYMBOL_GPL(amdkfd_rdma_retry);

/**
 * amdkfd_rdma_synchronize - wait for callbacks and deferred releases
 *
 * See include/drm/amd_rdma.h.
 *
 * Context: process context, may sleep; not from a free callback.
 */
void amdkfd_rdma_synchronize(void)
{
	if (READ_ONCE(amdgpu_rdma_ready))
		amdgpu_peer_mgr_synchronize(&amdgpu_rdma_mgr);
}
EXPORT_SYMBOL_GPL(amdkfd_rdma_synchronize);

/**
 * amdgpu_rdma_init - set up the peer memory interface at module load
 *
 * Return: 0 or -ENOMEM.
 */
int amdgpu_rdma_init(void)
{
	int r;

	r = amdgpu_peer_mgr_init(&amdgpu_rdma_mgr, &amdgpu_rdma_pin_ops);
	if (r)
		return r;
	amdgpu_rdma_mgr.max_tombstones = amdgpu_rdma_max_tombstones;
	amdgpu_rdma_mgr.tombstone_min_ns =
		(u64)amdgpu_rdma_tombstone_min_ms * NSEC_PER_MSEC;
	WRITE_ONCE(amdgpu_rdma_ready, true);
	return 0;
}

/**
 * amdgpu_rdma_fini - tear the interface down at module unload
 *
 * Every VM and every GPU is gone by then, and so is every client module
 * (they depend on our symbols): the tombstones left can go.
 */
void amdgpu_rdma_fini(void)
{
	if (!amdgpu_rdma_ready)
		return;
	WRITE_ONCE(amdgpu_rdma_ready, false);
	WARN_ON(!list_empty(&amdgpu_rdma_devs));
	amdgpu_peer_mgr_fini(&amdgpu_rdma_mgr);
	WARN_ON(!xa_empty(&amdgpu_rdma_cpu_access));
}

/**
 * amdgpu_rdma_device_fini - a GPU goes away
 * @adev: the device
 *
 * Revokes every registration of @adev's memory: calls the free callback of
 * those that have one, ends the persistent ones, and drops every pin while
 * @adev can still be unpinned and its runtime PM reference dropped. Called
 * when the device is torn down, hot unplug included (amdgpu_device_fini_hw()
 * through amdgpu_amdkfd_suspend()), and again, to no effect, at its final
 * teardown (amdgpu_amdkfd_device_fini_sw()). New pins are refused by then:
 * the DRM device is unplugged.
 *
 * Context: process context, no amdgpu lock held.
 */
void amdgpu_rdma_device_fini(struct amdgpu_device *adev)
{
	struct amdgpu_rdma_dev *rdev;

	if (!READ_ONCE(amdgpu_rdma_ready))
		return;
	mutex_lock(&amdgpu_rdma_devs_lock);
	rdev = amdgpu_rdma_dev_find(adev);
	if (rdev)
		list_del(&rdev->link);
	mutex_unlock(&amdgpu_rdma_devs_lock);
	if (!rdev)
		return;
	amdgpu_peer_dev_revoke(&rdev->peer);
	kfree(rdev);
}

/**
 * amdgpu_rdma_device_reset - a GPU is about to be reset
 * @adev: the device
 *
 * GPU reset and RAS recovery: the free callback of every registration of
 * @adev's memory that has one is queued; the reset does not wait for them.
 * Persistent registrations stay.
 *
 * The reset cannot wait. It runs on the path that signals the fences of
 * the hung jobs (amdgpu_job_timedout() -> amdgpu_device_gpu_recover(),
 * which calls amdgpu_amdkfd_pre_reset() and then force-completes the
 * rings' fences), and code on that path must not wait for anything that
 * may itself wait for such a fence (the dma-fence cross-driver contract
 * and signalling annotations in dma-fence.c). A client's callback may take
 * a lock of the client's that a thread holds around get_pages() (the
 * contract allows it), and that thread's first get may be waiting in
 * amdgpu_rdma_pin() for the move fence of the BO it pins, which the reset
 * is what signals. So the callbacks run from the workqueue while the reset
 * goes on. Each registration keeps its pin until its callback has
 * returned, so the peer never reaches memory handed to someone else; what
 * the peer read or wrote while the GPU was being reset is undefined, and a
 * client treats the callback as the loss of its transfers in flight.
 *
 * Context: process context; the reset domain is locked.
 */
void amdgpu_rdma_device_reset(struct amdgpu_device *adev)
{
	struct amdgpu_rdma_dev *rdev;

	if (!READ_ONCE(amdgpu_rdma_ready))
		return;
	mutex_lock(&amdgpu_rdma_devs_lock);
	rdev = amdgpu_rdma_dev_find(adev);
	if (rdev)
		amdgpu_peer_dev_invalidate(&rdev->peer);
	mutex_unlock(&amdgpu_rdma_devs_lock);
}

/**
 * amdgpu_rdma_vm_fini - the VM goes away: fire the callbacks of all its
 * registrations
 * @vm: the VM
 *
 * Persistent registrations stay pinned until they are put; tombstones stay
 * until they are put, or freed under their RDMA device's bound.
 *
 * Context: process context, no amdgpu lock held.
 */
void amdgpu_rdma_vm_fini(struct amdgpu_vm *vm)
{
	struct amdgpu_peer_owner *owner = vm->rdma;

	if (!owner)
		return;
	vm->rdma = NULL;
	amdgpu_peer_owner_destroy(owner);
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
	if (vm->rdma)
		amdgpu_peer_invalidate(vm->rdma, first, last);
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
	/* Paired with the smp_store_release() in amdgpu_rdma_get_found(). */
	struct amdgpu_peer_owner *owner = smp_load_acquire(&vm->rdma);

	if (owner && !amdgpu_peer_owner_idle(owner))
		amdgpu_peer_owner_flush(owner);
}

/**
 * amdgpu_rdma_process_flush - amdgpu_rdma_vm_flush() for a KFD process
 * @p: the process; the caller holds a reference (the KFD file's, in an
 *	ioctl)
 *
 * Which devices the process has, and which of them have a VM, is read
 * under @p->mutex, under which KFD changes it
 * (kfd_create_process_device_data(), and kfd_process_device_init_vm(),
 * which sets drm_priv and clears it again if it fails); the callbacks run
 * after the mutex is dropped. A device and VM seen under the mutex stay
 * until the process is released (kfd_process_destroy_pdds()), which the
 * caller's reference excludes.
 *
 * Context: process context, @p->mutex not held.
 */
void amdgpu_rdma_process_flush(struct kfd_process *p)
{
	DECLARE_BITMAP(vms, MAX_GPU_INSTANCE);
	unsigned int i;

	bitmap_zero(vms, MAX_GPU_INSTANCE);
	mutex_lock(&p->mutex);
	for (i = 0; i < p->n_pdds; i++)
		if (p->pdds[i]->drm_priv)
			__set_bit(i, vms);
	mutex_unlock(&p->mutex);
	for_each_set_bit(i, vms, MAX_GPU_INSTANCE)
		amdgpu_rdma_vm_flush(drm_priv_to_vm(p->pdds[i]->drm_priv));
}

#if IS_ENABLED(CONFIG_KUNIT)
/* The manager, for tests that look at its counters or switch knobs. */
struct amdgpu_peer_mgr *amdgpu_rdma_test_mgr(void)
{
	return &amdgpu_rdma_mgr;
}
EXPORT_SYMBOL_IF_KUNIT(amdgpu_rdma_test_mgr);

struct amdgpu_rdma_counters *amdgpu_rdma_test_counters(void)
{
	return &amdgpu_rdma_counters;
}
EXPORT_SYMBOL_IF_KUNIT(amdgpu_rdma_test_counters);

/* The quota record of @adev (created if it has none), for tests. */
struct amdgpu_peer_dev *amdgpu_rdma_test_dev(struct amdgpu_device *adev)
{
	return amdgpu_rdma_dev_get(adev);
}
EXPORT_SYMBOL_IF_KUNIT(amdgpu_rdma_test_dev);
#endif
