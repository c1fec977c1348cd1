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

#ifndef __AMDGPU_SPM_VMID_H__
#define __AMDGPU_SPM_VMID_H__

#include <linux/sizes.h>
#include <linux/types.h>

struct amdgpu_device;
struct amdgpu_spm_ring;

/*
 * SPM_VMID of devices without the SPM manager: where RLC init and resume
 * park it, as before the manager existed
 */
#define AMDGPU_SPM_VMID_LEGACY_PARK	0xf

/* First address of the SPM VMID's address space: the first ring */
#define AMDGPU_SPM_VA_BASE		SZ_2M

/**
 * struct amdgpu_spm_pt - a page table of the SPM VMID
 * @priv: owner's handle (the kernel BO on hardware).
 * @cpu: CPU mapping of the PTEs, one u64 per GPU page from
 *	%AMDGPU_SPM_VA_BASE on.
 * @pd_addr: the value of the VM context's page table base register, as
 *	amdgpu_gmc_pd_addr() gives it.
 * @npages: GPU pages the table covers.
 */
struct amdgpu_spm_pt {
	void *priv;
	void *cpu;
	u64 pd_addr;
	u32 npages;
};

u32 amdgpu_spm_park_vmid(struct amdgpu_device *adev);
bool amdgpu_spm_job_vmid(struct amdgpu_device *adev, u32 xcc, u32 *vmid);
u32 amdgpu_spm_kfd_vmid_bitmap(struct amdgpu_device *adev, u32 bitmap);
void amdgpu_spm_vmid_setup(struct amdgpu_device *adev);
int amdgpu_spm_vmid_init(struct amdgpu_device *adev);
void amdgpu_spm_vmid_park(struct amdgpu_device *adev, u32 xcc);
void amdgpu_spm_vmid_fini(struct amdgpu_device *adev);

u32 amdgpu_spm_pt_pages(u32 ring_size, unsigned int num_rings);
int amdgpu_spm_pt_init(struct amdgpu_device *adev, struct amdgpu_spm_pt *pt,
		       u32 npages);
u64 amdgpu_spm_pt_va(unsigned int index, u32 ring_size);
void amdgpu_spm_pt_map(struct amdgpu_device *adev, struct amdgpu_spm_pt *pt,
		       unsigned int index, const struct amdgpu_spm_ring *ring);
void amdgpu_spm_pt_clear(struct amdgpu_device *adev, struct amdgpu_spm_pt *pt);
void amdgpu_spm_pt_fini(struct amdgpu_device *adev, struct amdgpu_spm_pt *pt);
bool amdgpu_spm_vmid_use(struct amdgpu_device *adev, u32 xcc,
			 const struct amdgpu_spm_pt *pt);

int amdgpu_spm_pt_alloc_vram(struct amdgpu_device *adev, u32 size,
			     struct amdgpu_spm_pt *pt);
void amdgpu_spm_pt_free_vram(struct amdgpu_device *adev,
			     struct amdgpu_spm_pt *pt);

#endif
