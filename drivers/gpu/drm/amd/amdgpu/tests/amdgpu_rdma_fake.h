/* SPDX-License-Identifier: MIT */
/*
 * Copyright 2026 The amdgpu profiler series authors
 *
 * A fake GPU with one ROCm process of one VM, for the tests of the
 * rdma_get_pages() glue and of the paths that remove GPU mappings.
 */

#ifndef __AMDGPU_RDMA_FAKE_H__
#define __AMDGPU_RDMA_FAKE_H__

#include <linux/atomic.h>
#include <linux/bits.h>
#include <linux/sizes.h>
#include <linux/types.h>

#include <drm/drm_exec.h>
#include <drm/drm_vma_manager.h>

#include "amdgpu.h"
#include "kfd_priv.h"

struct amd_rdma_interface;
struct amdgpu_peer_mgr;
struct kunit;

/*
 * Two pin backends. With rdma_fake_init(): the VM, its root reservation,
 * the BO reservations, the mappings (the real
 * amdgpu_vm_bo_add/map/unmap/clear/replace/del) and the VM teardown (the
 * real amdgpu_vm_fini()) are real; so are the KFD process mutex and the
 * ioctl handlers that take it. What needs a GPU is faked: the pin and
 * DMA mapping (the manager's pin backend is replaced for the test; its
 * unpin takes the BO's reservation as amdgpu_rdma_unpin() does, so that a
 * path that unpins under that lock hangs here as it would there), and the
 * KFD process lookup by pid (a static stub).
 *
 * With rdma_fake_init_real(), the pin backend is the real one
 * (amdgpu_rdma_pin() and amdgpu_rdma_unpin()) on real BOs of the fake GPU
 * (rdma_fake_real_bo(): amdgpu_bo_create() on a TTM device of amdgpu's own
 * &ttm_device_funcs, the real GTT and VRAM managers), under their real
 * reservations. The test only counts the pins around it and can take the
 * quota while it pins. What is faked there is the memory the GPU has: GTT
 * pages are system pages that the kernel's DMA API (dma-direct, no IOMMU in
 * the test machine) maps for the fake NICs, each of which sees RAM at a
 * bus offset of its own, and VRAM is a range of the manager with a BAR at
 * %RDMA_FAKE_APER_BASE that no RAM backs.
 *
 * Every path of a first and of a repeated get that involves the pin runs
 * on the real backend (amdgpu_peer_rdma_real_backend, and hfi1's evict and
 * retry): the quota before and during the pin, the GPU revoked and the
 * VM's owner dying during the pin, the pin's own failures, a DMA mapping
 * that fails inside it (a static stub in place of the mapping: the test
 * machine has no IOMMU to run out of space), -ENOMEM after it (a static
 * stub in place of the registration's allocation), a range outside its
 * table (the real table cut short: amdgpu_rdma_pin() maps all of the BO),
 * a repeated get whose pin loses its last user to a concurrent put, a
 * device that went away.
 *
 * The fake backend stays where a case needs what the real one on one fake
 * GPU cannot give, and each use says which: DMA tables of chosen segments
 * with gaps between them (a real BO's layout is whatever TTM's pool or the
 * VRAM manager handed out), a pin that fails with a chosen errno, and
 * BOs with fields that amdgpu_bo_create() does not set (kernel, SG,
 * imported, doorbell BOs for the rejections).
 */

/* The NIC sees the fake BOs' memory at DMA addresses from here on. */
#define RDMA_FAKE_DMA_BASE	BIT_ULL(40)
/* ... and a second DMA device at this offset from them. */
#define RDMA_FAKE_DMA_DEV2	BIT_ULL(44)
#define RDMA_FAKE_GPU_ID	0x4242
#define RDMA_FAKE_MAX_BOS	16
#define RDMA_FAKE_RW		(AMDGPU_PTE_READABLE | AMDGPU_PTE_WRITEABLE)
/* The real backend's fake GPU: its GART, GTT, VRAM and CPU-visible VRAM */
#define RDMA_FAKE_GART_SIZE	SZ_512M
#define RDMA_FAKE_GTT_SIZE	SZ_256M
#define RDMA_FAKE_VRAM_SIZE	SZ_64M
#define RDMA_FAKE_VISIBLE_VRAM	SZ_32M
/* where the BAR of its VRAM is: above any RAM of the test machine */
#define RDMA_FAKE_APER_BASE	BIT_ULL(45)
/*
 * The real backend's NICs see RAM at these bus addresses (dma-direct with
 * a bus offset): a table mapped for the wrong device, or not through the
 * DMA API, has other addresses. VRAM is reached through the BAR, which
 * dma_map_resource() does not translate.
 */
#define RDMA_FAKE_NIC_BUS	BIT_ULL(46)
#define RDMA_FAKE_NIC2_BUS	BIT_ULL(47)
#define RDMA_FAKE_RAM_SPAN	BIT_ULL(44)

struct rdma_fake_bo {
	struct amdgpu_bo bo;
	struct amdgpu_bo_va *bo_va;
	/* where the fake pin puts segment i: dma_base + i * (seg + gap) */
	u64 dma_base;
	u64 seg;
	u64 gap;
	unsigned int nsegs;
	/* pins of this BO not unpinned yet */
	atomic_t pinned;
	/* from amdgpu_bo_create(), pinned by the real backend */
	bool real;
};

struct rdma_fake {
	struct kunit *test;
	struct amdgpu_device *adev;
	struct drm_file *file;
	struct amdgpu_vm *vm;
	struct amdgpu_bo *root;
	struct kfd_process *p;
	struct kfd_process_device *pdd;
	struct kfd_node *node;
	struct kfd_dev *kfd;
	/* the peer's DMA devices */
	struct device *nic;
	struct device *nic2;
	const struct amd_rdma_interface *ops;
	const struct amdgpu_peer_pin_ops *saved_pin_ops;
	unsigned int saved_max_tombstones;
	u64 saved_tombstone_min_ns;
	u64 (*saved_now)(struct amdgpu_peer_mgr *mgr);
	struct drm_exec exec;
	struct rdma_fake_bo *bos[RDMA_FAKE_MAX_BOS];
	unsigned int nbos;
	u64 next_dma;
	/* amdgpu_rdma_process_get() finds no process */
	bool no_process;
	/* error the next fake pin returns */
	int pin_error;
	/*
	 * the next fake pin takes the rest of the GPU's quota, as another
	 * process's registrations on the same GPU may while this one pins
	 */
	bool pin_takes_quota;
	/*
	 * the next real pin: the GPU is revoked, or the VM's owner dies,
	 * while it pins (as amdgpu_peer_dev_revoke() or the VM teardown
	 * would mark them on another thread)
	 */
	bool pin_revokes;
	bool pin_kills_owner;
	/*
	 * the next real pin's table ends a page before the BO does (restored
	 * at its unpin): amdgpu_rdma_pin() maps all of the BO, and
	 * amdgpu_vm_bo_map() refuses a mapping past its end, so only a
	 * table cut short can leave a range outside it
	 */
	bool pin_short;
	struct scatterlist *short_sg;
	/* direction of the last pin */
	enum dma_data_direction last_dir;
	atomic_t pins;
	atomic_t unpins;
	bool vm_done;
	/* a bo_va without a BO (the PRT one) a test added: deleted at the end */
	struct amdgpu_bo_va *prt_va;
	/* the real pin backend runs, on a TTM device of the fake GPU */
	bool real;
	struct drm_vma_offset_manager vma;
};

struct rdma_fake *rdma_fake_init(struct kunit *test);
struct rdma_fake *rdma_fake_init_real(struct kunit *test);
struct rdma_fake_bo *rdma_fake_real_bo(struct rdma_fake *f, u64 size,
				       u32 domain, u64 flags);
struct rdma_fake_bo *rdma_fake_bo(struct rdma_fake *f, u64 size,
				  u32 domains, unsigned int nsegs, u64 gap);
void rdma_fake_lock(struct rdma_fake *f, struct rdma_fake_bo *bo);
void rdma_fake_unlock(struct rdma_fake *f, struct rdma_fake_bo *bo);
struct amdgpu_bo_va_mapping *rdma_fake_map(struct rdma_fake *f,
					   struct rdma_fake_bo *bo, u64 va,
					   u64 offset, u64 size, u64 flags);
int rdma_fake_unmap(struct rdma_fake *f, struct rdma_fake_bo *bo, u64 va);
void rdma_fake_bo_del(struct rdma_fake *f, struct rdma_fake_bo *bo);
void rdma_fake_vm_fini(struct rdma_fake *f);
u64 rdma_fake_dma(const struct rdma_fake_bo *bo, u64 offset);
u64 rdma_fake_dma_dev(const struct rdma_fake_bo *bo, u64 offset,
		      const struct device *dev);
void rdma_fake_real_bo_drop(struct rdma_fake *f, struct rdma_fake_bo *bo);
int rdma_fake_get(struct rdma_fake *f, u64 va, u64 len,
		  void (*cb)(void *priv), void *priv,
		  struct amd_p2p_info **info);
u64 rdma_fake_sg_len(const struct amd_p2p_info *info);

#endif
