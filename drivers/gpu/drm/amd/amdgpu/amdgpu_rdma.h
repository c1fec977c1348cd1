/* SPDX-License-Identifier: MIT */
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

#ifndef __AMDGPU_RDMA_H__
#define __AMDGPU_RDMA_H__

#include <linux/atomic.h>
#include <linux/dma-direction.h>
#include <linux/types.h>

struct amdgpu_bo;
struct amdgpu_bo_va_mapping;
struct amdgpu_device;
struct amdgpu_peer_dev;
struct amdgpu_peer_mgr;
struct amdgpu_vm;
struct device;
struct drm_file;
struct drm_gem_object;
struct file;
struct kfd_process;
struct pid;
struct sg_table;

#if IS_ENABLED(CONFIG_HSA_AMD)
int amdgpu_rdma_init(void);
void amdgpu_rdma_fini(void);
void amdgpu_rdma_device_fini(struct amdgpu_device *adev);
void amdgpu_rdma_device_reset(struct amdgpu_device *adev);
void amdgpu_rdma_vm_fini(struct amdgpu_vm *vm);
void amdgpu_rdma_vm_invalidate(struct amdgpu_vm *vm, u64 first, u64 last);
void amdgpu_rdma_vm_flush(struct amdgpu_vm *vm);
void amdgpu_rdma_process_flush(struct kfd_process *p);
#if IS_ENABLED(CONFIG_KUNIT)
/* Test hooks (KUNIT_STATIC_STUB_REDIRECT), static without KUnit. */
struct kfd_process *amdgpu_rdma_process_get(struct pid *pid);
int amdgpu_rdma_p2p_distance(struct amdgpu_device *adev,
			     struct device *dma_dev);
int amdgpu_rdma_p2p_check(struct amdgpu_device *adev, struct device *dma_dev);
extern int amdgpu_rdma_p2p;
extern char *amdgpu_rdma_p2p_devices;
int amdgpu_rdma_dma_map(struct amdgpu_device *adev, struct amdgpu_bo *bo,
			struct device *dma_dev, enum dma_data_direction dir,
			struct sg_table **out);
int amdgpu_rdma_map_sgtable(struct device *dma_dev, struct sg_table *sgt,
			    enum dma_data_direction dir);
unsigned long amdgpu_rdma_page_size(const struct amdgpu_bo_va_mapping *mapping,
				    u64 address, u64 length,
				    unsigned long cpu_page);

/**
 * struct amdgpu_rdma_counters - what the glue's get path took, for tests
 * @proc_locks: KFD process mutexes taken
 * @root_locks: VM root reservations taken alone (the path of a BO that is
 *	already pinned for the DMA device)
 * @exec_locks: drm_exec transactions on the VM root and the BO (the path
 *	that pins; drm_exec allocates its object array)
 * @global_locks: acquisitions of the glue's one global mutex (the device
 *	list, on the path that pins)
 * @allocs: memory allocations of the glue itself (a device's quota
 *	record, at its first pin); the core counts its own
 */
struct amdgpu_rdma_counters {
	atomic_t proc_locks;
	atomic_t root_locks;
	atomic_t exec_locks;
	atomic_t global_locks;
	atomic_t allocs;
};

struct amdgpu_peer_mgr *amdgpu_rdma_test_mgr(void);
struct amdgpu_rdma_counters *amdgpu_rdma_test_counters(void);
struct amdgpu_peer_dev *amdgpu_rdma_test_dev(struct amdgpu_device *adev);

/*
 * KFD paths that remove GPU mappings, static without KUnit, so that the
 * tests can check that they run the peers' free callbacks.
 */
int kfd_ioctl_free_memory_of_gpu(struct file *filep, struct kfd_process *p,
				 void *data);
int kfd_ioctl_unmap_memory_from_gpu(struct file *filep,
				    struct kfd_process *p, void *data);
#endif
#else
static inline int amdgpu_rdma_init(void) { return 0; }
static inline void amdgpu_rdma_fini(void) { }
static inline void amdgpu_rdma_device_fini(struct amdgpu_device *adev) { }
static inline void amdgpu_rdma_device_reset(struct amdgpu_device *adev) { }
static inline void amdgpu_rdma_vm_fini(struct amdgpu_vm *vm) { }
static inline void amdgpu_rdma_vm_invalidate(struct amdgpu_vm *vm,
					     u64 first, u64 last) { }
static inline void amdgpu_rdma_vm_flush(struct amdgpu_vm *vm) { }
static inline void amdgpu_rdma_process_flush(struct kfd_process *p) { }
#endif

#if IS_ENABLED(CONFIG_KUNIT)
/* Static without KUnit (amdgpu_gem.c); the tests close GEM handles. */
void amdgpu_gem_object_close(struct drm_gem_object *obj,
			     struct drm_file *file_priv);
#endif

#endif
