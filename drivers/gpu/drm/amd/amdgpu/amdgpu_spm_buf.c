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
 * DOC: SPM destination buffers
 *
 * The user memory that %AMDGPU_SPM_OP_SET_DEST_BUF installs. Anonymous,
 * shmem and hugetlb memory is pinned (FOLL_WRITE | FOLL_LONGTERM), charged
 * to RLIMIT_MEMLOCK of the caller's mm unless it has CAP_IPC_LOCK, and
 * unpinned dirty. A writable VM_PFNMAP or VM_IO mapping (a BO mapped
 * through the render node, which is what ROCr's CPU memory pools hand out)
 * is not pinned and not charged: it is written with copy_to_user() under
 * its mm, by a kernel thread that adopted that mm; never once the mm is
 * gone.
 *
 * The pins of the last %AMDGPU_SPM_PIN_CACHE buffers are kept, so that a
 * profiler rotating two or three buffers does not pin 32 MiB again every
 * few milliseconds; an interval notifier drops a cached pin whose range was
 * unmapped or remapped before it is used again.
 *
 * Locking: a &struct amdgpu_spm_pins belongs to one acquisition and is
 * guarded by that acquisition's buffer lock, held by SET_DEST_BUF. Pinning,
 * the notifier's insertion and removal, and unpinning happen under it, and
 * under no lock of the reset domain, the drain, or the device. The drain
 * worker reads only the pin SET_DEST_BUF installed (under the drain lock),
 * and a pin is never dropped while it is installed (see @busy of
 * amdgpu_spm_pin_get()). The notifier's callback takes no lock.
 */

#include <linux/capability.h>
#include <linux/mm.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "amdgpu_spm_buf.h"

/* dst->write of a buffer that is not pinned: only under its own mm */
static int spm_pin_write_user(struct amdgpu_spm_dst *dst, u32 off,
			      const void *src, u32 len)
{
	struct amdgpu_spm_pin *p = dst->priv;

	if (current->mm != p->mm)
		return -EFAULT;
	return copy_to_user((void __user *)(p->addr + off), src, len) ?
		-EFAULT : 0;
}

#if IS_ENABLED(CONFIG_MMU_NOTIFIER)
/*
 * Called by the core mm when the range of a cached pin changes. It only
 * marks the pin stale, for amdgpu_spm_pin_get(); it takes no lock.
 */
static bool spm_pin_invalidate(struct mmu_interval_notifier *mni,
			       const struct mmu_notifier_range *range,
			       unsigned long cur_seq)
{
	mmu_interval_set_seq(mni, cur_seq);
	return true;
}

static const struct mmu_interval_notifier_ops spm_pin_notifier_ops = {
	.invalidate = spm_pin_invalidate,
};

static int spm_pin_watch(struct amdgpu_spm_pin *p)
{
	int r;

	r = mmu_interval_notifier_insert(&p->notifier, p->mm, p->addr, p->size,
					 &spm_pin_notifier_ops);
	if (r)
		return r;
	p->notified = true;
	p->seq = mmu_interval_read_begin(&p->notifier);
	return 0;
}

static bool spm_pin_stale(struct amdgpu_spm_pin *p)
{
	return p->notified && mmu_interval_read_retry(&p->notifier, p->seq);
}

static void spm_pin_unwatch(struct amdgpu_spm_pin *p)
{
	if (p->notified)
		mmu_interval_notifier_remove(&p->notifier);
	p->notified = false;
}
#else
/* Without notifiers a pin cannot be trusted once its buffer was retired */
static int spm_pin_watch(struct amdgpu_spm_pin *p)
{
	return 0;
}

static bool spm_pin_stale(struct amdgpu_spm_pin *p)
{
	return !!p->dst.pages;
}

static void spm_pin_unwatch(struct amdgpu_spm_pin *p)
{
}
#endif

static void spm_pin_drop(struct amdgpu_spm_pin *p)
{
	spm_pin_unwatch(p);
	if (p->dst.pages) {
		unpin_user_pages_dirty_lock(p->dst.pages, p->npages, true);
		kvfree(p->dst.pages);
	}
	if (p->charged)
		atomic64_sub(p->npages, &p->mm->pinned_vm);
	if (p->mm)
		mmdrop(p->mm);
	memset(p, 0, sizeof(*p));
}

/* Whether the whole range is writable PFN or I/O mappings: 0 if so */
static int spm_check_unpinnable(unsigned long addr, u32 size)
{
	struct mm_struct *mm = current->mm;
	unsigned long end = addr + size;
	struct vm_area_struct *vma;
	int r = 0;

	mmap_read_lock(mm);
	while (addr < end) {
		vma = vma_lookup(mm, addr);
		if (!vma || !(vma->vm_flags & VM_WRITE) ||
		    !(vma->vm_flags & (VM_PFNMAP | VM_IO))) {
			r = -EFAULT;
			break;
		}
		addr = vma->vm_end;
	}
	mmap_read_unlock(mm);
	return r;
}

/* Pin [@addr, @addr + @size) of current's mm into @p */
static int spm_pin(struct amdgpu_spm_pin *p, unsigned long addr, u32 size)
{
	unsigned long first = addr >> PAGE_SHIFT;
	unsigned long last = (addr + size - 1) >> PAGE_SHIFT;
	unsigned long npages = last - first + 1;
	unsigned long limit = rlimit(RLIMIT_MEMLOCK) >> PAGE_SHIFT;
	struct mm_struct *mm = current->mm;
	struct page **pages;
	int pinned, r;

	if (!mm)
		return -EFAULT;

	memset(p, 0, sizeof(*p));
	p->addr = addr;
	p->size = size;
	p->npages = npages;
	p->dst.offset = offset_in_page(addr);
	p->dst.size = size;
	p->dst.write = spm_pin_write_user;
	p->dst.priv = p;

	/*
	 * A writable PFN or I/O mapping (a BO mapped through the render node)
	 * is written through the mapping: nothing is pinned, nothing charged.
	 */
	if (!spm_check_unpinnable(addr, size))
		goto out;

	if (!capable(CAP_IPC_LOCK)) {
		if (atomic64_add_return(npages, &mm->pinned_vm) > limit) {
			atomic64_sub(npages, &mm->pinned_vm);
			return -ENOMEM;
		}
		p->charged = true;
	}

	pages = kvmalloc_array(npages, sizeof(*pages), GFP_KERNEL);
	if (!pages) {
		r = -ENOMEM;
		goto err_uncharge;
	}

	pinned = pin_user_pages_fast(addr & PAGE_MASK, npages,
				     FOLL_WRITE | FOLL_LONGTERM, pages);
	if (pinned != npages) {
		if (pinned > 0)
			unpin_user_pages(pages, pinned);
		kvfree(pages);
		r = pinned < 0 ? pinned : -EFAULT;
		goto err_uncharge;
	}
	p->dst.pages = pages;
out:
	p->mm = mm;
	mmgrab(mm);
	return 0;

err_uncharge:
	if (p->charged)
		atomic64_sub(npages, &mm->pinned_vm);
	p->charged = false;
	return r;
}

/**
 * amdgpu_spm_pin_get - find or make the entry of a destination buffer
 * @pins: the acquisition's cache
 * @addr: user address, in current's mm
 * @size: bytes
 * @busy: the entry the drain is filling, which must stay; or NULL
 * @out: the entry
 *
 * Reuses a cached pin of the same range of the same mm unless its mapping
 * changed since; otherwise pins the range (or checks that it is a writable
 * PFN mapping) and replaces the least recently used entry other than
 * @busy. Call with the acquisition's buffer lock held and no other lock of
 * the SPM manager or the reset domain.
 *
 * Return: 0, -ENOMEM (allocation, or RLIMIT_MEMLOCK), -EFAULT (not
 * writable user memory), or the notifier's error.
 */
int amdgpu_spm_pin_get(struct amdgpu_spm_pins *pins, unsigned long addr,
		       u32 size, const struct amdgpu_spm_pin *busy,
		       struct amdgpu_spm_pin **out)
{
	struct amdgpu_spm_pin tmp, *victim = NULL;
	unsigned int i;
	int r;

	for (i = 0; i < AMDGPU_SPM_PIN_CACHE; i++) {
		struct amdgpu_spm_pin *p = &pins->pin[i];

		if (p->mm != current->mm || p->addr != addr || p->size != size)
			continue;
		/* The range was unmapped or remapped since: pin it again */
		if (p != busy && spm_pin_stale(p)) {
			spm_pin_drop(p);
			break;
		}
		p->lru = ++pins->lru;
		*out = p;
		return 0;
	}

	r = spm_pin(&tmp, addr, size);
	if (r)
		return r;

	for (i = 0; i < AMDGPU_SPM_PIN_CACHE; i++) {
		struct amdgpu_spm_pin *p = &pins->pin[i];

		if (p == busy)
			continue;
		if (!victim || !p->mm || (victim->mm && p->lru < victim->lru))
			victim = p;
	}
	if (victim->mm)
		spm_pin_drop(victim);
	*victim = tmp;
	victim->dst.priv = victim;
	victim->lru = ++pins->lru;
	if (victim->dst.pages) {
		r = spm_pin_watch(victim);
		if (r) {
			spm_pin_drop(victim);
			return r;
		}
	}
	*out = victim;
	return 0;
}

/**
 * amdgpu_spm_pins_fini - unpin every cached buffer
 * @pins: the cache; no entry may be installed any more
 */
void amdgpu_spm_pins_fini(struct amdgpu_spm_pins *pins)
{
	unsigned int i;

	for (i = 0; i < AMDGPU_SPM_PIN_CACHE; i++)
		if (pins->pin[i].mm)
			spm_pin_drop(&pins->pin[i]);
}

/**
 * amdgpu_spm_pin_needs_mm - whether writing @p needs its mm adopted
 * @p: an entry, or NULL
 *
 * Return: true if @p is a buffer that could not be pinned.
 */
bool amdgpu_spm_pin_needs_mm(const struct amdgpu_spm_pin *p)
{
	return p && !p->dst.pages;
}
