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

#ifndef __AMDGPU_SPM_BUF_H__
#define __AMDGPU_SPM_BUF_H__

#include <linux/mmu_notifier.h>
#include <linux/types.h>

#include "amdgpu_spm_drain.h"

struct mm_struct;

/* Number of destination buffers whose pins are kept between swaps */
#define AMDGPU_SPM_PIN_CACHE	3

/**
 * struct amdgpu_spm_pin - a destination buffer known to an acquisition
 * @addr: user address.
 * @size: size in bytes.
 * @mm: address space of @addr (mmgrab() reference); NULL for a free entry.
 * @dst: what the drain writes through: the pinned pages, or, for a buffer
 *	that could not be pinned, copy_to_user() under @mm.
 * @npages: number of pages pinned (and charged to @mm's pinned_vm).
 * @charged: @npages were charged to RLIMIT_MEMLOCK.
 * @lru: last use, to pick the entry to drop.
 * @notifier: tells when @addr no longer maps the pinned pages (munmap,
 *	remap), so that a cached pin is not reused for another mapping.
 * @seq: @notifier sequence when the pages were pinned.
 * @notified: @notifier is registered.
 */
struct amdgpu_spm_pin {
	unsigned long addr;
	u32 size;
	struct mm_struct *mm;
	struct amdgpu_spm_dst dst;
	unsigned long npages;
	bool charged;
	u64 lru;
#if IS_ENABLED(CONFIG_MMU_NOTIFIER)
	struct mmu_interval_notifier notifier;
	unsigned long seq;
#endif
	bool notified;
};

/**
 * struct amdgpu_spm_pins - the destination buffers of an acquisition
 * @pin: the cache.
 * @lru: counter for &amdgpu_spm_pin.lru.
 */
struct amdgpu_spm_pins {
	struct amdgpu_spm_pin pin[AMDGPU_SPM_PIN_CACHE];
	u64 lru;
};

int amdgpu_spm_pin_get(struct amdgpu_spm_pins *pins, unsigned long addr,
		       u32 size, const struct amdgpu_spm_pin *busy,
		       struct amdgpu_spm_pin **out);
void amdgpu_spm_pins_fini(struct amdgpu_spm_pins *pins);
bool amdgpu_spm_pin_needs_mm(const struct amdgpu_spm_pin *p);

#endif
