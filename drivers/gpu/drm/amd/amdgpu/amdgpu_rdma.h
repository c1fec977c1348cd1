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

#include <linux/types.h>

struct amdgpu_bo;
struct amdgpu_bo_va_mapping;
struct amdgpu_device;
struct amdgpu_peer_mgr;
struct amdgpu_vm;
struct device;
struct drm_exec;
struct kfd_process;
struct pid;
struct sg_table;

#if IS_ENABLED(CONFIG_HSA_AMD)
int amdgpu_rdma_init(void);
void amdgpu_rdma_fini(void);
void amdgpu_rdma_device_fini(struct amdgpu_device *adev);
void amdgpu_rdma_vm_init(struct amdgpu_vm *vm);
void amdgpu_rdma_vm_fini(struct amdgpu_vm *vm);
void amdgpu_rdma_vm_invalidate(struct amdgpu_vm *vm, u64 first, u64 last);
void amdgpu_rdma_vm_flush(struct amdgpu_vm *vm);
void amdgpu_rdma_process_flush(struct kfd_process *p);
void amdgpu_rdma_bo_release_notify(struct amdgpu_bo *bo);
#if IS_ENABLED(CONFIG_KUNIT)
/* Test hooks (KUNIT_STATIC_STUB_REDIRECT), static without KUnit. */
int amdgpu_rdma_pin(struct amdgpu_peer_mgr *mgr, void *obj,
		    struct device *dma_dev, struct sg_table **out);
void amdgpu_rdma_unpin(struct amdgpu_peer_mgr *mgr, void *obj,
		       struct device *dma_dev, struct sg_table *sgt);
int amdgpu_rdma_lookup(struct amdgpu_vm *vm, struct drm_exec *exec,
		       u64 address, struct amdgpu_bo_va_mapping **out);
struct kfd_process *amdgpu_rdma_process_get(struct pid *pid);
#endif
#else
static inline int amdgpu_rdma_init(void) { return 0; }
static inline void amdgpu_rdma_fini(void) { }
static inline void amdgpu_rdma_device_fini(struct amdgpu_device *adev) { }
static inline void amdgpu_rdma_vm_init(struct amdgpu_vm *vm) { }
static inline void amdgpu_rdma_vm_fini(struct amdgpu_vm *vm) { }
static inline void amdgpu_rdma_vm_invalidate(struct amdgpu_vm *vm,
					     u64 first, u64 last) { }
static inline void amdgpu_rdma_vm_flush(struct amdgpu_vm *vm) { }
static inline void amdgpu_rdma_process_flush(struct kfd_process *p) { }
static inline void amdgpu_rdma_bo_release_notify(struct amdgpu_bo *bo) { }
#endif

#endif
