// SPDX-License-Identifier: MIT
/*
 * Copyright 2026 Advanced Micro Devices, Inc.
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
 * DOC: SPM manager
 *
 * The RLC Stream Performance Monitor (SPM) of each XCC streams counter
 * samples into a ring in memory. The SPM manager gives one DRM file at a
 * time exclusive use of the SPM of all XCCs of a partition (one manager per
 * XCP, or one for the device when it has no XCP manager), owns a kernel ring
 * per XCC and copies the rings into destination buffers that the owner
 * installs with %AMDGPU_SPM_OP_SET_DEST_BUF.
 *
 * Locking, outermost first:
 *
 * - &amdgpu_spm_mgr.lock serialises ACQUIRE and release of a partition; the
 *   whole teardown of an acquisition runs under it, so a new owner never
 *   sees hardware that the old one is still stopping.
 * - &amdgpu_spm_session.buf_lock serialises SET_DEST_BUF calls of the owner
 *   and guards the pin cache. Pinning (mmap_lock) nests inside it.
 * - &amdgpu_spm_session.drain_lock is held by the drain worker; it guards the
 *   ring read pointers, the current destination and the shares. The worker
 *   may fault user pages (mmap_lock) under it.
 * - &amdgpu_spm.arb_lock is a leaf spinlock taken from the interrupt
 *   handler and the job submission path.
 *
 * Waiters of SET_DEST_BUF sleep with no lock held and pin the session with
 * &amdgpu_spm_session.users; release marks the session dying, wakes them and
 * waits for that count to drop to zero before it frees anything.
 *
 * Draining is driven by the RLC SPM interrupt and by a timer backstop;
 * nothing polls. The worker is the only code that writes to destination
 * buffers, so that buffers that cannot be pinned are written with
 * copy_to_user() under the owner's mm from a kernel thread.
 */

#include <linux/capability.h>
#include <linux/fdtable.h>
#include <linux/kthread.h>
#include <linux/mm.h>
#include <linux/mmu_notifier.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/pm_runtime.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/string.h>
#include <linux/timer.h>
#include <linux/uaccess.h>
#include <linux/wait.h>
#include <linux/workqueue.h>

#include <drm/drm_drv.h>
#include <drm/drm_file.h>
#include <drm/drm_print.h>

#include "amdgpu.h"
#include "amdgpu_profiler.h"
#include "amdgpu_reset.h"
#include "amdgpu_spm.h"
#include "amdgpu_xcp.h"

/* Number of destination buffers whose pins are kept between swaps */
#define AMDGPU_SPM_PIN_CACHE	3

/* A ring with less than 1/8 free was full: the RLC dropped samples */
#define AMDGPU_SPM_FULL_SHIFT	3

int amdgpu_spm_paranoid = 1;
module_param_named(spm_paranoid, amdgpu_spm_paranoid, int, 0644);
MODULE_PARM_DESC(spm_paranoid,
		 "SPM profiling: 1 = only CAP_PERFMON or CAP_SYS_ADMIN may acquire SPM (default), 0 = any user with access to the render node");

unsigned int amdgpu_spm_ring_size = 4u << 20;
module_param_named(spm_ring_size, amdgpu_spm_ring_size, uint, 0444);
MODULE_PARM_DESC(spm_ring_size,
		 "SPM ring size per XCC in bytes, a power of two from 64 KiB to 256 MiB (default 4 MiB)");

unsigned int amdgpu_spm_backstop_ms = 100;
module_param_named(spm_backstop_ms, amdgpu_spm_backstop_ms, uint, 0644);
MODULE_PARM_DESC(spm_backstop_ms,
		 "SPM drain timer period in ms, a backstop for the RLC interrupt (default 100)");

/**
 * struct amdgpu_spm_pin - a destination buffer known to the session
 * @addr: user address.
 * @size: size in bytes.
 * @mm: address space of @addr (mmgrab() reference).
 * @pages: pinned pages, or NULL when the buffer could not be pinned and is
 *	written with copy_to_user() under @mm.
 * @npages: number of entries of @pages, charged to @mm's pinned_vm.
 * @charged: @npages were charged to RLIMIT_MEMLOCK.
 * @lru: last use, to pick the cache entry to drop.
 * @notifier: tells when @addr no longer maps @pages (munmap, remap), so
 *	that a cached pin is not reused for a different mapping.
 * @seq: @notifier sequence when @pages were pinned.
 * @notified: @notifier is registered.
 */
struct amdgpu_spm_pin {
	unsigned long addr;
	u32 size;
	struct mm_struct *mm;
	struct page **pages;
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
 * struct amdgpu_spm_xcc - per-XCC state of an acquisition
 * @xcc: logical XCC id.
 * @ring: the ring memory.
 * @data_size: bytes of ring data (after the write pointer header).
 * @rptr: read offset into the data area; guarded by drain_lock.
 * @lost: samples were lost while no buffer was installed; reported in the
 *	next share; guarded by drain_lock.
 * @share_off: offset of this XCC's share in the current buffer.
 * @share_cap: data bytes the share can hold (header excluded).
 * @copied: data bytes copied into the share; guarded by drain_lock.
 * @loss: the share lost data; guarded by drain_lock.
 * @hdr_dirty: the share header needs writing; guarded by drain_lock.
 * @irq: the interrupt of this XCC is enabled.
 */
struct amdgpu_spm_xcc {
	u32 xcc;
	struct amdgpu_spm_ring ring;
	u32 data_size;
	u32 rptr;
	bool lost;
	u32 share_off;
	u32 share_cap;
	u32 copied;
	bool loss;
	bool hdr_dirty;
	bool irq;
};

/**
 * struct amdgpu_spm_session - one acquisition of a partition's SPM
 * @mgr: the manager.
 * @owner: the DRM file that acquired.
 * @owner_id: files_struct of the acquiring task, for amdgpu_flush().
 * @users: SET_DEST_BUF calls inside the session, see amdgpu_spm_session_get().
 * @dying: release has begun; no new buffer is installed.
 * @wq: SET_DEST_BUF waiters for a full buffer.
 * @buf_lock: serialises SET_DEST_BUF; guards @pins and @started.
 * @drain_lock: held by the drain worker; guards @cur, @next, @swap, @full
 *	and the per-XCC drain state.
 * @work: the drain worker.
 * @timer: drain backstop.
 * @started: the RLC is sampling.
 * @cur: buffer being filled, or NULL.
 * @next: buffer to install at the next drain, see @swap.
 * @swap: SET_DEST_BUF asks the worker to retire @cur and install @next.
 * @retired_bytes: data bytes in the buffer the last swap retired.
 * @retired_loss: that buffer lost data.
 * @full: a share of @cur is full; wakes @wq.
 * @pins: cache of pinned destinations.
 * @lru: counter for @pins.
 * @wakeups: worker runs, for the benchmark.
 * @drained: bytes consumed from the rings, for the benchmark.
 * @num_xcc: entries of @xcc.
 * @xcc: per-XCC state, in ascending logical XCC order.
 */
struct amdgpu_spm_session {
	struct amdgpu_spm_mgr *mgr;
	struct drm_file *owner;
	fl_owner_t owner_id;
	atomic_t users;
	bool dying;
	wait_queue_head_t wq;
	struct mutex buf_lock; /* see above */
	struct mutex drain_lock; /* see above */
	struct work_struct work;
	struct timer_list timer;
	bool started;
	struct amdgpu_spm_pin *cur;
	struct amdgpu_spm_pin *next;
	bool swap;
	u32 retired_bytes;
	bool retired_loss;
	bool full;
	struct amdgpu_spm_pin pins[AMDGPU_SPM_PIN_CACHE];
	u64 lru;
	u64 wakeups;
	u64 drained;
	unsigned int num_xcc;
	struct amdgpu_spm_xcc xcc[] __counted_by(num_xcc);
};

static const struct amdgpu_spm_funcs *spm_funcs(struct amdgpu_spm_session *s)
{
	return s->mgr->adev->spm.funcs;
}

/* ---- arbitration of SPM_VMID with graphics ---- */

/**
 * amdgpu_spm_xcc_owned - whether the profiler owns the SPM of an XCC
 * @adev: the device
 * @xcc: logical XCC
 *
 * Called from the job submission path before a write of SPM_VMID; lockless.
 *
 * Return: true if nobody but the SPM manager may write SPM_VMID of @xcc.
 */
bool amdgpu_spm_xcc_owned(struct amdgpu_device *adev, u32 xcc)
{
	return xcc < AMDGPU_SPM_MAX_XCC &&
	       (READ_ONCE(adev->spm.profiler_xcc_mask) & BIT(xcc));
}

/**
 * amdgpu_spm_vmid_write_begin - start a write of SPM_VMID outside the manager
 * @adev: the device
 * @xcc: logical XCC whose SPM_VMID the caller is about to write
 *
 * For amdgpu_vm_flush() (through &amdgpu_rlc_funcs.update_spm_vmid) and RLC
 * init/resume. A plain check of amdgpu_spm_xcc_owned() races with ACQUIRE:
 * a writer that checked just before the claim could overwrite the VMID the
 * profiler programmed. The writer is counted before it checks, and ACQUIRE
 * claims the XCC, then waits until no writer is counted, then programs the
 * VMID, so a writer either sees the claim or finishes before the VMID is
 * programmed.
 *
 * Context: any, including the scheduler's run_job (fence signalling); takes
 * no lock and does not sleep. The write between begin and end must not
 * wait for anything the SPM manager does.
 *
 * Return: true if the caller may write SPM_VMID of @xcc; it must then call
 * amdgpu_spm_vmid_write_end() after the write. False if the profiler owns
 * the SPM of @xcc.
 */
bool amdgpu_spm_vmid_write_begin(struct amdgpu_device *adev, u32 xcc)
{
	if (xcc >= AMDGPU_SPM_MAX_XCC)
		return true;
	atomic_inc(&adev->spm.vmid_writers[xcc]);
	/* Pairs with smp_mb() in spm_wait_vmid_writers() */
	smp_mb__after_atomic();
	if (amdgpu_spm_xcc_owned(adev, xcc)) {
		amdgpu_spm_vmid_write_end(adev, xcc);
		return false;
	}
	return true;
}

/**
 * amdgpu_spm_vmid_write_end - end a write from amdgpu_spm_vmid_write_begin()
 * @adev: the device
 * @xcc: the same logical XCC
 *
 * Context: any; does not sleep.
 */
void amdgpu_spm_vmid_write_end(struct amdgpu_device *adev, u32 xcc)
{
	if (xcc < AMDGPU_SPM_MAX_XCC &&
	    atomic_dec_and_test(&adev->spm.vmid_writers[xcc]))
		wake_up_var(&adev->spm.vmid_writers[xcc]);
}

/* After claiming @s's XCCs: wait for writers that checked before the claim */
static void spm_wait_vmid_writers(struct amdgpu_spm_session *s)
{
	struct amdgpu_spm *spm = &s->mgr->adev->spm;
	unsigned int i;

	/* Pairs with smp_mb__after_atomic() in amdgpu_spm_vmid_write_begin() */
	smp_mb();
	for (i = 0; i < s->num_xcc; i++) {
		atomic_t *n = &spm->vmid_writers[s->xcc[i].xcc];

		wait_var_event(n, !atomic_read(n));
	}
}

/**
 * amdgpu_spm_gfx_vmid_get - count a graphics VMID reservation for SPM
 * @adev: the device
 *
 * %AMDGPU_VM_OP_RESERVE_VMID reserves a VMID on GFXHUB(0) so that a
 * graphics client can point SPM_VMID of XCC 0 at it. It and the profiler
 * exclude each other.
 *
 * Return: 0, or -EBUSY while the profiler owns the SPM of XCC 0.
 */
int amdgpu_spm_gfx_vmid_get(struct amdgpu_device *adev)
{
	int r = 0;

	spin_lock_irq(&adev->spm.arb_lock);
	if (adev->spm.profiler_xcc_mask & BIT(0))
		r = -EBUSY;
	else
		adev->spm.gfx_users++;
	spin_unlock_irq(&adev->spm.arb_lock);
	return r;
}

/**
 * amdgpu_spm_gfx_vmid_put - drop a reservation from amdgpu_spm_gfx_vmid_get()
 * @adev: the device
 */
void amdgpu_spm_gfx_vmid_put(struct amdgpu_device *adev)
{
	spin_lock_irq(&adev->spm.arb_lock);
	if (!WARN_ON(!adev->spm.gfx_users))
		adev->spm.gfx_users--;
	spin_unlock_irq(&adev->spm.arb_lock);
}

static int spm_claim_xccs(struct amdgpu_spm_session *s, u32 mask)
{
	struct amdgpu_spm *spm = &s->mgr->adev->spm;
	int r = 0;

	spin_lock_irq(&spm->arb_lock);
	if ((spm->profiler_xcc_mask & mask) ||
	    ((mask & BIT(0)) && spm->gfx_users))
		r = -EBUSY;
	else
		WRITE_ONCE(spm->profiler_xcc_mask, spm->profiler_xcc_mask | mask);
	spin_unlock_irq(&spm->arb_lock);
	return r;
}

/*
 * Route the interrupts of @s's XCCs to it, once every step of ACQUIRE
 * succeeded: an interrupt that arrives earlier (left pending by a previous
 * acquisition, or raised as irq_get enables it) must not queue the worker
 * of a session that a failing ACQUIRE is about to free.
 */
static void spm_route_xccs(struct amdgpu_spm_session *s)
{
	struct amdgpu_spm *spm = &s->mgr->adev->spm;
	unsigned int i;

	spin_lock_irq(&spm->arb_lock);
	for (i = 0; i < s->num_xcc; i++)
		spm->xcc_sess[s->xcc[i].xcc] = s;
	spin_unlock_irq(&spm->arb_lock);
}

static void spm_unclaim_xccs(struct amdgpu_spm_session *s, u32 mask)
{
	struct amdgpu_spm *spm = &s->mgr->adev->spm;
	unsigned int i;

	spin_lock_irq(&spm->arb_lock);
	for (i = 0; i < s->num_xcc; i++)
		spm->xcc_sess[s->xcc[i].xcc] = NULL;
	WRITE_ONCE(spm->profiler_xcc_mask, spm->profiler_xcc_mask & ~mask);
	spin_unlock_irq(&spm->arb_lock);
}

/* ---- hardware access from the worker ---- */

static bool spm_hw_enter(struct amdgpu_device *adev, int *idx)
{
	if (!drm_dev_enter(adev_to_drm(adev), idx))
		return false;
	/* A fake device of the KUnit tests has no reset domain */
	if (adev->reset_domain && !down_read_trylock(&adev->reset_domain->sem)) {
		drm_dev_exit(*idx);
		return false;
	}
	return true;
}

static void spm_hw_exit(struct amdgpu_device *adev, int idx)
{
	if (adev->reset_domain)
		up_read(&adev->reset_domain->sem);
	drm_dev_exit(idx);
}

/*
 * ACQUIRE, SET_DEST_BUF and release program registers; a GPU reset must not
 * run meanwhile. The reset domain semaphore is taken outside the manager's
 * locks: the reset path holds it while it calls amdgpu_spm_suspend().
 */
static void spm_reset_lock(struct amdgpu_device *adev)
{
	if (adev->reset_domain)
		down_read(&adev->reset_domain->sem);
}

static void spm_reset_unlock(struct amdgpu_device *adev)
{
	if (adev->reset_domain)
		up_read(&adev->reset_domain->sem);
}

/* ---- destination buffers ---- */

static int spm_dst_write(struct amdgpu_spm_pin *p, u32 off, const void *src,
			 u32 len)
{
	unsigned long pos;

	if (!p->pages) {
		/* Only ever under the mm the address belongs to */
		if (current->mm != p->mm)
			return -EFAULT;
		return copy_to_user((void __user *)(p->addr + off), src, len) ?
			-EFAULT : 0;
	}

	pos = offset_in_page(p->addr) + off;
	while (len) {
		u32 o = offset_in_page(pos);
		u32 n = min_t(u32, len, PAGE_SIZE - o);

		memcpy_to_page(p->pages[pos >> PAGE_SHIFT], o, src, n);
		pos += n;
		src += n;
		len -= n;
	}
	return 0;
}

static void spm_write_header(struct amdgpu_spm_pin *p, struct amdgpu_spm_xcc *x)
{
	struct drm_amdgpu_spm_buffer_header hdr = {
		.version = AMDGPU_PROFILER_VERSION,
		.bytes_copied = x->copied,
		.has_data_loss = x->loss,
	};

	if (spm_dst_write(p, x->share_off, &hdr, sizeof(hdr)))
		x->loss = true;
	x->hdr_dirty = false;
}

/* Consume @len ring bytes at @src into the share of @x */
static void spm_copy_chunk(struct amdgpu_spm_session *s, struct amdgpu_spm_xcc *x,
			   const void *src, u32 len)
{
	struct amdgpu_spm_pin *p = s->cur;
	u32 n;

	s->drained += len;
	if (!p) {
		x->lost = true;
		return;
	}
	n = min(len, x->share_cap - x->copied);
	if (n) {
		if (spm_dst_write(p, x->share_off + sizeof(struct drm_amdgpu_spm_buffer_header) +
				  x->copied, src, n))
			x->loss = true;
		else
			x->copied += n;
		x->hdr_dirty = true;
	}
	if (n < len) {
		x->loss = true;
		x->hdr_dirty = true;
	}
	if (x->copied == x->share_cap)
		s->full = true;
}

/*
 * Copy what the RLC wrote since the last drain. The write pointer is a byte
 * offset into the data area. Parts with an overrun guard may report a write
 * pointer past the end of the data area: the segment was written there in
 * one piece and the next one starts at offset 0. When such a lap ended while
 * nobody was looking, how far it went is unknown: copy up to the end of the
 * data area only, never the guard, and report the rest as lost.
 */
static void spm_drain_xcc_locked(struct amdgpu_spm_session *s,
				 struct amdgpu_spm_xcc *x, bool hw)
{
	const struct amdgpu_spm_funcs *funcs = spm_funcs(s);
	struct amdgpu_device *adev = s->mgr->adev;
	u8 *data = x->ring.cpu_addr + AMDGPU_SPM_RING_HDR_SIZE;
	u32 size = x->data_size;
	u32 r = x->rptr;
	u32 w, used;

	lockdep_assert_held(&s->drain_lock);

	w = READ_ONCE(*(u32 *)x->ring.cpu_addr);
	/* Read the data only after the write pointer that covers it */
	dma_rmb();

	if (w > size + funcs->overrun_guard ||
	    !IS_ALIGNED(w, AMDGPU_SPM_LINE_SIZE)) {
		/* Not a pointer the RLC can produce: drop everything */
		x->lost = true;
		if (s->cur) {
			x->loss = true;
			x->hdr_dirty = true;
		}
		x->rptr = 0;
		goto out;
	}
	if (w == r)
		return;

	used = w >= r ? w - r : size - min(r, size) + w;
	if (size - min(used, size) < size >> AMDGPU_SPM_FULL_SHIFT) {
		/* Ring was (nearly) full: the RLC stopped at our read pointer */
		if (s->cur) {
			x->loss = true;
			x->hdr_dirty = true;
		} else {
			x->lost = true;
		}
	}

	if (w >= r) {
		spm_copy_chunk(s, x, data + r, w - r);
	} else {
		if (r < size) {
			spm_copy_chunk(s, x, data + r, size - r);
			if (funcs->overrun_guard) {
				if (s->cur) {
					x->loss = true;
					x->hdr_dirty = true;
				} else {
					x->lost = true;
				}
			}
		}
		spm_copy_chunk(s, x, data, w);
	}
	x->rptr = w;
out:
	if (hw) {
		int idx;

		if (spm_hw_enter(adev, &idx)) {
			funcs->set_rdptr(adev, x->xcc, x->rptr >= size ? 0 : x->rptr);
			spm_hw_exit(adev, idx);
		}
	}
}

static void spm_install_locked(struct amdgpu_spm_session *s,
			       struct amdgpu_spm_pin *p)
{
	u32 share = 0;
	unsigned int i;

	lockdep_assert_held(&s->drain_lock);

	s->cur = p;
	s->full = false;
	if (p)
		share = round_down(p->size / s->num_xcc, AMDGPU_SPM_LINE_SIZE);
	for (i = 0; i < s->num_xcc; i++) {
		struct amdgpu_spm_xcc *x = &s->xcc[i];

		x->share_off = i * share;
		x->share_cap = share ? share - sizeof(struct drm_amdgpu_spm_buffer_header) : 0;
		x->copied = 0;
		x->loss = false;
		x->hdr_dirty = false;
		if (p) {
			/* Loss while no buffer was installed counts here */
			x->loss = x->lost;
			x->lost = false;
			x->hdr_dirty = true;
		}
	}
}

static void spm_retire_locked(struct amdgpu_spm_session *s)
{
	unsigned int i;
	u32 bytes = 0;
	bool loss = false;

	lockdep_assert_held(&s->drain_lock);

	for (i = 0; i < s->num_xcc; i++) {
		struct amdgpu_spm_xcc *x = &s->xcc[i];

		if (s->cur && x->hdr_dirty)
			spm_write_header(s->cur, x);
		bytes += x->copied;
		loss |= x->loss;
	}
	s->retired_bytes = bytes;
	s->retired_loss = loss;
}

static bool spm_pin_needs_mm(struct amdgpu_spm_pin *p)
{
	return p && !p->pages;
}

static void spm_drain(struct amdgpu_spm_session *s, bool hw)
{
	struct mm_struct *mm = NULL;
	bool use_mm = false;
	unsigned int i;

	mutex_lock(&s->drain_lock);
	s->wakeups++;

	/* Unpinnable buffers are written under their mm, if it still exists */
	if (spm_pin_needs_mm(s->cur) || (s->swap && spm_pin_needs_mm(s->next))) {
		mm = spm_pin_needs_mm(s->cur) ? s->cur->mm : s->next->mm;
		if ((current->flags & PF_KTHREAD) && !current->mm &&
		    mmget_not_zero(mm)) {
			kthread_use_mm(mm);
			use_mm = true;
		}
	}

	for (i = 0; i < s->num_xcc; i++)
		spm_drain_xcc_locked(s, &s->xcc[i], hw);

	if (s->swap) {
		spm_retire_locked(s);
		spm_install_locked(s, s->next);
		s->next = NULL;
		s->swap = false;
	}

	if (s->cur) {
		for (i = 0; i < s->num_xcc; i++)
			if (s->xcc[i].hdr_dirty)
				spm_write_header(s->cur, &s->xcc[i]);
	}

	if (s->full)
		wake_up_all(&s->wq);

	if (use_mm) {
		kthread_unuse_mm(mm);
		mmput(mm);
	}
	mutex_unlock(&s->drain_lock);
}

static void spm_work(struct work_struct *work)
{
	struct amdgpu_spm_session *s =
		container_of(work, struct amdgpu_spm_session, work);

	spm_drain(s, true);
}

static void spm_timer(struct timer_list *t)
{
	struct amdgpu_spm_session *s = from_timer(s, t, timer);

	queue_work(system_unbound_wq, &s->work);
	mod_timer(&s->timer,
		  jiffies + msecs_to_jiffies(max(amdgpu_spm_backstop_ms, 1u)));
}

/**
 * amdgpu_spm_irq - RLC SPM interrupt of an XCC
 * @adev: the device
 * @xcc: logical XCC that raised it
 *
 * Called by the IP's interrupt handler in interrupt context; only queues
 * the drain worker of the acquisition that owns @xcc, if any.
 */
void amdgpu_spm_irq(struct amdgpu_device *adev, u32 xcc)
{
	struct amdgpu_spm_session *s;
	unsigned long flags;

	if (xcc >= AMDGPU_SPM_MAX_XCC)
		return;
	spin_lock_irqsave(&adev->spm.arb_lock, flags);
	s = adev->spm.xcc_sess[xcc];
	if (s)
		queue_work(system_unbound_wq, &s->work);
	spin_unlock_irqrestore(&adev->spm.arb_lock, flags);
}

/* ---- pin cache ---- */

#if IS_ENABLED(CONFIG_MMU_NOTIFIER)
/*
 * Called by the core mm when the range of a cached pin changes; takes no
 * lock of the manager, it only marks the pin stale for spm_pin_lookup().
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
	return !!p->pages;
}

static void spm_pin_unwatch(struct amdgpu_spm_pin *p)
{
}
#endif

static void spm_pin_drop(struct amdgpu_spm_pin *p)
{
	spm_pin_unwatch(p);
	if (p->pages) {
		unpin_user_pages_dirty_lock(p->pages, p->npages, true);
		kvfree(p->pages);
	}
	if (p->charged)
		atomic64_sub(p->npages, &p->mm->pinned_vm);
	if (p->mm)
		mmdrop(p->mm);
	memset(p, 0, sizeof(*p));
}

/* A buffer that cannot be pinned may still be written through its mapping */
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
	if (pinned == npages) {
		p->pages = pages;
		goto out;
	}
	if (pinned > 0)
		unpin_user_pages(pages, pinned);
	kvfree(pages);

	/* Not pinnable: fine if it is a writable PFN or I/O mapping */
	r = spm_check_unpinnable(addr, size);
	if (r)
		goto err_uncharge;
	if (p->charged) {
		atomic64_sub(npages, &mm->pinned_vm);
		p->charged = false;
	}
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

/* Find or make the cache entry for a destination; called with buf_lock */
static int spm_pin_lookup(struct amdgpu_spm_session *s, unsigned long addr,
			  u32 size, struct amdgpu_spm_pin **out)
{
	struct amdgpu_spm_pin tmp, *victim = NULL;
	unsigned int i;
	int r;

	lockdep_assert_held(&s->buf_lock);

	for (i = 0; i < AMDGPU_SPM_PIN_CACHE; i++) {
		struct amdgpu_spm_pin *p = &s->pins[i];

		if (p->mm != current->mm || p->addr != addr || p->size != size)
			continue;
		/*
		 * Reuse the pin unless the range was unmapped or remapped
		 * since; the buffer being filled is never dropped here.
		 */
		if (p != s->cur && spm_pin_stale(p)) {
			spm_pin_drop(p);
			break;
		}
		p->lru = ++s->lru;
		*out = p;
		return 0;
	}

	r = spm_pin(&tmp, addr, size);
	if (r)
		return r;

	/* Evict the least recently used entry that is not being filled */
	for (i = 0; i < AMDGPU_SPM_PIN_CACHE; i++) {
		struct amdgpu_spm_pin *p = &s->pins[i];

		if (p == s->cur)
			continue;
		if (!victim || !p->mm || (victim->mm && p->lru < victim->lru))
			victim = p;
	}
	if (victim->mm)
		spm_pin_drop(victim);
	*victim = tmp;
	victim->lru = ++s->lru;
	if (victim->pages) {
		r = spm_pin_watch(victim);
		if (r) {
			spm_pin_drop(victim);
			return r;
		}
	}
	*out = victim;
	return 0;
}

/* ---- acquisition ---- */

static u32 spm_xcc_mask(struct amdgpu_device *adev, u32 xcp_id)
{
	u32 mask;

	if (!adev->xcp_mgr)
		return adev->gfx.xcc_mask ?
			GENMASK(NUM_XCC(adev->gfx.xcc_mask) - 1, 0) : BIT(0);
	if (xcp_id >= adev->xcp_mgr->num_xcps ||
	    amdgpu_xcp_get_inst_details(&adev->xcp_mgr->xcp[xcp_id],
					AMDGPU_XCP_GFX, &mask))
		return 0;
	return mask;
}

static void spm_hw_stop_locked(struct amdgpu_spm_session *s)
{
	const struct amdgpu_spm_funcs *funcs = spm_funcs(s);
	struct amdgpu_device *adev = s->mgr->adev;
	unsigned int i;

	lockdep_assert_held(&s->buf_lock);

	if (!s->started)
		return;
	for (i = 0; i < s->num_xcc; i++)
		funcs->stop(adev, s->xcc[i].xcc);
	s->started = false;
}

static int spm_hw_start_locked(struct amdgpu_spm_session *s)
{
	const struct amdgpu_spm_funcs *funcs = spm_funcs(s);
	struct amdgpu_device *adev = s->mgr->adev;
	unsigned int i;
	int r;

	lockdep_assert_held(&s->buf_lock);

	if (s->started)
		return 0;

	/* The RLC restarts at offset 0 */
	mutex_lock(&s->drain_lock);
	for (i = 0; i < s->num_xcc; i++) {
		WRITE_ONCE(*(u32 *)s->xcc[i].ring.cpu_addr, 0);
		s->xcc[i].rptr = 0;
	}
	mutex_unlock(&s->drain_lock);

	for (i = 0; i < s->num_xcc; i++) {
		r = funcs->set_rdptr(adev, s->xcc[i].xcc, 0);
		if (!r)
			r = funcs->start(adev, s->xcc[i].xcc);
		if (r)
			goto err;
	}
	s->started = true;
	mod_timer(&s->timer, jiffies + msecs_to_jiffies(max(amdgpu_spm_backstop_ms, 1u)));
	return 0;

err:
	while (i--)
		funcs->stop(adev, s->xcc[i].xcc);
	return r;
}

static void spm_xcc_teardown(struct amdgpu_spm_session *s, unsigned int n,
			     unsigned int stage)
{
	const struct amdgpu_spm_funcs *funcs = spm_funcs(s);
	struct amdgpu_device *adev = s->mgr->adev;

	/* Undo the steps of spm_xcc_setup(), last first, for XCCs below @n */
	while (n--) {
		struct amdgpu_spm_xcc *x = &s->xcc[n];

		switch (stage) {
		case 4:
			if (x->irq)
				funcs->irq_put(adev, x->xcc);
			x->irq = false;
			fallthrough;
		case 3:
		case 2:
			funcs->set_vmid(adev, x->xcc, AMDGPU_SPM_VMID_NONE);
			fallthrough;
		case 1:
			funcs->ring_free(adev, x->xcc, &x->ring);
			fallthrough;
		default:
			break;
		}
		stage = 4;
	}
}

/* Set up the hardware of every XCC; on failure undo all of it */
static int spm_xcc_setup(struct amdgpu_spm_session *s)
{
	const struct amdgpu_spm_funcs *funcs = spm_funcs(s);
	struct amdgpu_device *adev = s->mgr->adev;
	u32 size = amdgpu_spm_ring_size;
	unsigned int i, stage = 0;
	int r;

	for (i = 0; i < s->num_xcc; i++) {
		struct amdgpu_spm_xcc *x = &s->xcc[i];

		stage = 0;
		r = funcs->ring_alloc(adev, x->xcc, size + funcs->overrun_guard, &x->ring);
		if (r)
			goto err;
		stage = 1;
		x->data_size = size - AMDGPU_SPM_RING_HDR_SIZE;
		memset(x->ring.cpu_addr, 0, AMDGPU_SPM_RING_HDR_SIZE);
		r = funcs->set_vmid(adev, x->xcc, 0);
		if (r)
			goto err;
		stage = 2;
		r = funcs->set_ring(adev, x->xcc, x->ring.gpu_addr, size);
		if (r)
			goto err;
		stage = 3;
		r = funcs->set_rdptr(adev, x->xcc, 0);
		if (r)
			goto err;
		r = funcs->irq_get(adev, x->xcc);
		if (r)
			goto err;
		x->irq = true;
	}
	return 0;

err:
	/* XCC i got as far as @stage; the earlier ones completed */
	spm_xcc_teardown(s, i + 1, stage);
	return r;
}

/* Keep the device awake while acquired */
static int spm_rpm_get(struct amdgpu_device *adev)
{
	int r;

	r = pm_runtime_get_sync(adev_to_drm(adev)->dev);
	if (r < 0 && r != -EACCES) {
		pm_runtime_put_autosuspend(adev_to_drm(adev)->dev);
		return r;
	}
	return 0;
}

static void spm_rpm_put(struct amdgpu_device *adev)
{
	pm_runtime_mark_last_busy(adev_to_drm(adev)->dev);
	pm_runtime_put_autosuspend(adev_to_drm(adev)->dev);
}

static bool spm_allowed(void)
{
	return amdgpu_spm_paranoid <= 0 || perfmon_capable();
}

static int spm_acquire(struct amdgpu_spm_mgr *mgr, struct drm_file *filp)
{
	struct amdgpu_device *adev = mgr->adev;
	struct amdgpu_spm_session *s;
	unsigned long mask;
	unsigned int i, n, xcc;
	int r;

	if (!spm_allowed())
		return -EPERM;
	if (!is_power_of_2(amdgpu_spm_ring_size) ||
	    amdgpu_spm_ring_size < SZ_64K || amdgpu_spm_ring_size > SZ_256M)
		return -EINVAL;

	mask = spm_xcc_mask(adev, mgr->xcp_id) & GENMASK(AMDGPU_SPM_MAX_XCC - 1, 0);
	n = hweight32(mask);
	if (!n)
		return -EINVAL;

	spm_reset_lock(adev);
	mutex_lock(&mgr->lock);
	if (mgr->sess) {
		r = -EBUSY;
		goto out_unlock;
	}

	s = kzalloc(struct_size(s, xcc, n), GFP_KERNEL);
	if (!s) {
		r = -ENOMEM;
		goto out_unlock;
	}
	s->num_xcc = n;
	i = 0;
	for_each_set_bit(xcc, &mask, AMDGPU_SPM_MAX_XCC)
		s->xcc[i++].xcc = xcc;
	s->mgr = mgr;
	s->owner = filp;
	s->owner_id = current->files;
	atomic_set(&s->users, 0);
	init_waitqueue_head(&s->wq);
	mutex_init(&s->buf_lock);
	mutex_init(&s->drain_lock);
	INIT_WORK(&s->work, spm_work);
	timer_setup(&s->timer, spm_timer, 0);

	r = spm_claim_xccs(s, mask);
	if (r)
		goto err_free;
	spm_wait_vmid_writers(s);

	r = spm_rpm_get(adev);
	if (r)
		goto err_rpm;

	r = spm_xcc_setup(s);
	if (r)
		goto err_setup;

	spm_route_xccs(s);
	atomic_inc(&adev->spm.acquired);
	mgr->sess = s;
	mutex_unlock(&mgr->lock);
	spm_reset_unlock(adev);
	return 0;

err_setup:
	spm_rpm_put(adev);
err_rpm:
	spm_unclaim_xccs(s, mask);
err_free:
	mutex_destroy(&s->drain_lock);
	mutex_destroy(&s->buf_lock);
	kfree(s);
out_unlock:
	mutex_unlock(&mgr->lock);
	spm_reset_unlock(adev);
	return r;
}

static u32 spm_session_mask(struct amdgpu_spm_session *s)
{
	unsigned int i;
	u32 mask = 0;

	for (i = 0; i < s->num_xcc; i++)
		mask |= BIT(s->xcc[i].xcc);
	return mask;
}

/* End the acquisition of @mgr; called with mgr->lock held */
static void spm_release_locked(struct amdgpu_spm_mgr *mgr)
{
	struct amdgpu_spm_session *s = mgr->sess;
	struct amdgpu_device *adev = mgr->adev;
	unsigned int i;

	lockdep_assert_held(&mgr->lock);

	/* Wake SET_DEST_BUF waiters and wait until they have left */
	mutex_lock(&s->drain_lock);
	WRITE_ONCE(s->dying, true);
	mutex_unlock(&s->drain_lock);
	wake_up_all(&s->wq);
	wait_var_event(&s->users, !atomic_read(&s->users));

	/* No new interrupt routes here; then stop what can queue the worker */
	spm_unclaim_xccs(s, 0);
	timer_shutdown_sync(&s->timer);
	mutex_lock(&s->buf_lock);
	spm_hw_stop_locked(s);
	mutex_unlock(&s->buf_lock);
	cancel_work_sync(&s->work);

	spm_xcc_teardown(s, s->num_xcc, 4);
	spm_unclaim_xccs(s, spm_session_mask(s));

	for (i = 0; i < AMDGPU_SPM_PIN_CACHE; i++)
		if (s->pins[i].mm)
			spm_pin_drop(&s->pins[i]);

	spm_rpm_put(adev);

	mgr->sess = NULL;
	atomic_dec(&adev->spm.acquired);
	mutex_destroy(&s->drain_lock);
	mutex_destroy(&s->buf_lock);
	kfree(s);
}

/* Take a reference on the session of @mgr for a call through @filp */
static struct amdgpu_spm_session *
spm_session_get(struct amdgpu_spm_mgr *mgr, struct drm_file *filp)
{
	struct amdgpu_spm_session *s;

	mutex_lock(&mgr->lock);
	s = mgr->sess;
	if (!s)
		s = ERR_PTR(-EINVAL);
	else if (s->owner != filp)
		s = ERR_PTR(-EBUSY);
	else
		atomic_inc(&s->users);
	mutex_unlock(&mgr->lock);
	return s;
}

static void spm_session_put(struct amdgpu_spm_session *s)
{
	if (atomic_dec_and_test(&s->users))
		wake_up_var(&s->users);
}

static int spm_release(struct amdgpu_spm_mgr *mgr, struct drm_file *filp)
{
	int r = 0;

	spm_reset_lock(mgr->adev);
	mutex_lock(&mgr->lock);
	if (!mgr->sess)
		r = -EINVAL;
	else if (mgr->sess->owner != filp)
		r = -EBUSY;
	else
		spm_release_locked(mgr);
	mutex_unlock(&mgr->lock);
	spm_reset_unlock(mgr->adev);
	return r;
}

/* Wait for the current buffer to fill; returns 0 or -ERESTARTSYS */
static int spm_wait_full(struct amdgpu_spm_session *s, u32 *timeout_ms)
{
	unsigned long deadline;
	long left;

	deadline = jiffies + msecs_to_jiffies(*timeout_ms);
	left = wait_event_interruptible_timeout(s->wq,
						READ_ONCE(s->full) || READ_ONCE(s->dying) ||
						!READ_ONCE(s->cur),
						msecs_to_jiffies(*timeout_ms));
	if (left < 0) {
		/* Interrupted: hand back the remainder for the restart */
		left = time_after(deadline, jiffies) ? deadline - jiffies : 0;
		*timeout_ms = min_t(u32, *timeout_ms, jiffies_to_msecs(left));
		return -ERESTARTSYS;
	}
	*timeout_ms = min_t(u32, *timeout_ms, jiffies_to_msecs(left));
	return 0;
}

static int spm_set_dest_buf(struct amdgpu_spm_mgr *mgr, struct drm_file *filp,
			    struct drm_amdgpu_spm_args *args)
{
	unsigned long addr = args->dest_buf;
	u32 size = args->buf_size, timeout = args->timeout;
	struct amdgpu_spm_pin *p = NULL;
	struct amdgpu_spm_session *s;
	int r;

	s = spm_session_get(mgr, filp);
	if (IS_ERR(s))
		return PTR_ERR(s);

	if (addr) {
		u32 share = round_down(size / s->num_xcc, AMDGPU_SPM_LINE_SIZE);

		r = -EINVAL;
		if (share < sizeof(struct drm_amdgpu_spm_buffer_header) +
			    AMDGPU_SPM_LINE_SIZE)
			goto out_put;
		r = -EFAULT;
		if (!access_ok(u64_to_user_ptr(args->dest_buf), size))
			goto out_put;
	}

	/* Wait before changing anything, so that a restart is idempotent */
	if (timeout && READ_ONCE(s->cur) && !READ_ONCE(s->full)) {
		r = spm_wait_full(s, &timeout);
		if (r) {
			args->timeout = timeout;
			goto out_put;
		}
	}

	/*
	 * Release waits for @users with the reset domain semaphore held for
	 * reading. Never block on that semaphore while holding a reference:
	 * a reset queued in between would make down_read() wait behind the
	 * writer, which waits for release, which waits for us. Drop the
	 * reference and look the session up again under the semaphore.
	 */
	spm_session_put(s);
	spm_reset_lock(mgr->adev);
	s = spm_session_get(mgr, filp);
	if (IS_ERR(s)) {
		spm_reset_unlock(mgr->adev);
		return PTR_ERR(s);
	}
	mutex_lock(&s->buf_lock);
	r = -EINVAL;
	if (READ_ONCE(s->dying))
		goto out_unlock;

	if (addr) {
		r = spm_pin_lookup(s, addr, size, &p);
		if (r)
			goto out_unlock;
		r = spm_hw_start_locked(s);
		if (r)
			goto out_unlock;
	}

	/*
	 * The worker retires the current buffer and installs the new one, so
	 * that unpinnable buffers are written under their mm. Release cancels
	 * the worker only once we have left, so it always gets to it.
	 */
	mutex_lock(&s->drain_lock);
	s->next = p;
	s->swap = true;
	while (s->swap) {
		mutex_unlock(&s->drain_lock);
		queue_work(system_unbound_wq, &s->work);
		flush_work(&s->work);
		mutex_lock(&s->drain_lock);
	}
	args->bytes_copied = s->retired_bytes;
	args->has_data_loss = s->retired_loss;
	mutex_unlock(&s->drain_lock);
	args->timeout = timeout;
	r = 0;

out_unlock:
	mutex_unlock(&s->buf_lock);
	spm_reset_unlock(mgr->adev);
out_put:
	spm_session_put(s);
	return r;
}

static struct amdgpu_spm_mgr *spm_mgr_of(struct amdgpu_device *adev,
					 struct drm_file *filp)
{
	struct amdgpu_fpriv *fpriv = filp->driver_priv;
	u32 xcp_id = fpriv ? fpriv->xcp_id : 0;

	if (xcp_id == AMDGPU_XCP_NO_PARTITION) {
		if (amdgpu_xcp_get_num_xcp(adev->xcp_mgr) > 1)
			return NULL;
		xcp_id = 0;
	}
	if (xcp_id >= AMDGPU_SPM_MAX_MGR ||
	    xcp_id >= max(amdgpu_xcp_get_num_xcp(adev->xcp_mgr), 1))
		return NULL;
	return &adev->spm.mgr[xcp_id];
}

/*
 * The input rules that depend on no state, checked before anything else so
 * that malformed input gets -EINVAL on every device; the kernel-doc of
 * struct drm_amdgpu_spm_args is the contract.
 */
static int spm_check_args(struct amdgpu_device *adev,
			  const struct drm_amdgpu_spm_args *args)
{
	struct drm_device *dev = adev_to_drm(adev);

	if (memchr_inv(args->reserved, 0, sizeof(args->reserved))) {
		drm_dbg(dev, "spm: reserved words not zero\n");
		return -EINVAL;
	}
	if (args->bytes_copied || args->has_data_loss) {
		drm_dbg(dev, "spm: output fields not zero on input\n");
		return -EINVAL;
	}

	switch (args->op) {
	case AMDGPU_SPM_OP_ACQUIRE:
	case AMDGPU_SPM_OP_RELEASE:
		if (args->dest_buf || args->buf_size || args->timeout) {
			drm_dbg(dev, "spm: op %u takes no buffer or timeout\n",
				args->op);
			return -EINVAL;
		}
		return 0;
	case AMDGPU_SPM_OP_SET_DEST_BUF:
		if (!args->dest_buf != !args->buf_size) {
			drm_dbg(dev, "spm: buffer address and size disagree\n");
			return -EINVAL;
		}
		if (!IS_ALIGNED(args->dest_buf, AMDGPU_SPM_ALIGN) ||
		    args->buf_size > AMDGPU_SPM_MAX_BUF_SIZE) {
			drm_dbg(dev, "spm: buffer misaligned or too large\n");
			return -EINVAL;
		}
		return 0;
	default:
		drm_dbg(dev, "spm: unknown op %u\n", args->op);
		return -EINVAL;
	}
}

/**
 * amdgpu_spm_ioctl - %AMDGPU_PROFILER_OP_SPM
 * @adev: the device
 * @filp: the DRM file the call came through; it becomes or must be the owner
 * @args: the arguments; on error only @args->timeout may have changed
 *
 * Context: process context, no locks held; may sleep.
 *
 * Return: 0 or a negative errno as documented in &struct drm_amdgpu_spm_args.
 */
int amdgpu_spm_ioctl(struct amdgpu_device *adev, struct drm_file *filp,
		     struct drm_amdgpu_spm_args *args)
{
	struct drm_amdgpu_spm_args out = *args;
	struct amdgpu_spm_mgr *mgr;
	int r;

	r = spm_check_args(adev, args);
	if (r)
		return r;
	if (!adev->spm.funcs || amdgpu_sriov_vf(adev))
		return -EOPNOTSUPP;
	mgr = spm_mgr_of(adev, filp);
	if (!mgr)
		return -EINVAL;

	switch (args->op) {
	case AMDGPU_SPM_OP_ACQUIRE:
		return spm_acquire(mgr, filp);
	case AMDGPU_SPM_OP_RELEASE:
		return spm_release(mgr, filp);
	default:
		r = spm_set_dest_buf(mgr, filp, &out);
		if (!r)
			*args = out;
		else
			args->timeout = out.timeout;
		return r;
	}
}

/* iterate_fd() callback: another descriptor still refers to @file */
static int spm_fd_is_file(const void *file, struct file *f, unsigned int fd)
{
	return f == file;
}

/**
 * amdgpu_spm_file_flush - a file descriptor of @filp is being closed
 * @adev: the device
 * @filp: the DRM file
 * @id: the files_struct closing it
 *
 * Ends the acquisition owned by @filp when the task that acquired closes
 * its last descriptor of it, or exits: KFD keeps its own reference to the
 * DRM file, so the final release (postclose) can come much later. Closing
 * one dup() of the descriptor while another one stays open in the same
 * files_struct keeps the acquisition; so does a forked child closing its
 * copy. Called from amdgpu_flush(), after the descriptor being closed left
 * the table of @id.
 */
void amdgpu_spm_file_flush(struct amdgpu_device *adev, struct drm_file *filp,
			   fl_owner_t id)
{
	unsigned int i;

	/* close() of one dup() of the fd: the task still holds the file */
	if (filp->filp && iterate_fd(id, 0, spm_fd_is_file, filp->filp))
		return;

	for (i = 0; i < AMDGPU_SPM_MAX_MGR; i++) {
		struct amdgpu_spm_mgr *mgr = &adev->spm.mgr[i];

		spm_reset_lock(adev);
		mutex_lock(&mgr->lock);
		if (mgr->sess && mgr->sess->owner == filp &&
		    mgr->sess->owner_id == id)
			spm_release_locked(mgr);
		mutex_unlock(&mgr->lock);
		spm_reset_unlock(adev);
	}
}

/**
 * amdgpu_spm_file_close - @filp goes away
 * @adev: the device
 * @filp: the DRM file
 *
 * Ends any acquisition owned by @filp. Called from postclose.
 */
void amdgpu_spm_file_close(struct amdgpu_device *adev, struct drm_file *filp)
{
	unsigned int i;

	for (i = 0; i < AMDGPU_SPM_MAX_MGR; i++) {
		struct amdgpu_spm_mgr *mgr = &adev->spm.mgr[i];

		spm_reset_lock(adev);
		mutex_lock(&mgr->lock);
		if (mgr->sess && mgr->sess->owner == filp)
			spm_release_locked(mgr);
		mutex_unlock(&mgr->lock);
		spm_reset_unlock(adev);
	}
}

/**
 * amdgpu_spm_busy - whether any partition's SPM is acquired
 * @adev: the device
 *
 * A partition mode switch is refused while this is true.
 *
 * Return: true if an acquisition exists.
 */
bool amdgpu_spm_busy(struct amdgpu_device *adev)
{
	return atomic_read(&adev->spm.acquired) > 0;
}

/**
 * amdgpu_spm_suspend - the GPU is about to lose its state
 * @adev: the device
 *
 * Called before suspend and GPU reset. Drains what the rings hold and stops
 * sampling; the acquisitions stay, and amdgpu_spm_resume() restarts them
 * with data loss reported.
 */
void amdgpu_spm_suspend(struct amdgpu_device *adev)
{
	unsigned int i;

	for (i = 0; i < AMDGPU_SPM_MAX_MGR; i++) {
		struct amdgpu_spm_mgr *mgr = &adev->spm.mgr[i];
		struct amdgpu_spm_session *s;

		mutex_lock(&mgr->lock);
		s = mgr->sess;
		if (s) {
			timer_delete_sync(&s->timer);
			flush_work(&s->work);
			mutex_lock(&s->buf_lock);
			spm_hw_stop_locked(s);
			mutex_unlock(&s->buf_lock);
		}
		mutex_unlock(&mgr->lock);
	}
}

/**
 * amdgpu_spm_resume - the GPU state was restored
 * @adev: the device
 *
 * RLC resume rewrote SPM_VMID and the ring registers: program them again
 * and restart sampling where it was running. Samples of the gap are lost
 * and reported as such. An XCC that cannot be programmed ends sampling.
 */
void amdgpu_spm_resume(struct amdgpu_device *adev)
{
	const struct amdgpu_spm_funcs *funcs = adev->spm.funcs;
	unsigned int i, j;

	for (i = 0; i < AMDGPU_SPM_MAX_MGR; i++) {
		struct amdgpu_spm_mgr *mgr = &adev->spm.mgr[i];
		struct amdgpu_spm_session *s;
		bool restart;

		mutex_lock(&mgr->lock);
		s = mgr->sess;
		if (!s) {
			mutex_unlock(&mgr->lock);
			continue;
		}
		mutex_lock(&s->buf_lock);
		restart = s->cur || s->next;
		mutex_lock(&s->drain_lock);
		for (j = 0; j < s->num_xcc; j++) {
			struct amdgpu_spm_xcc *x = &s->xcc[j];

			if (s->cur) {
				x->loss = true;
				x->hdr_dirty = true;
			} else {
				x->lost = true;
			}
			if (funcs->set_vmid(adev, x->xcc, 0) ||
			    funcs->set_ring(adev, x->xcc, x->ring.gpu_addr,
					    x->data_size + AMDGPU_SPM_RING_HDR_SIZE))
				restart = false;
		}
		mutex_unlock(&s->drain_lock);
		if (restart && spm_hw_start_locked(s))
			drm_warn(adev_to_drm(adev), "SPM of partition %u not restarted\n", i);
		mutex_unlock(&s->buf_lock);
		mutex_unlock(&mgr->lock);
	}
}

/**
 * amdgpu_spm_init - initialise the SPM state of a device
 * @adev: the device
 *
 * The IP block sets &amdgpu_spm.funcs when it supports SPM.
 */
void amdgpu_spm_init(struct amdgpu_device *adev)
{
	unsigned int i;

	spin_lock_init(&adev->spm.arb_lock);
	atomic_set(&adev->spm.acquired, 0);
	for (i = 0; i < AMDGPU_SPM_MAX_XCC; i++)
		atomic_set(&adev->spm.vmid_writers[i], 0);
	for (i = 0; i < AMDGPU_SPM_MAX_MGR; i++) {
		adev->spm.mgr[i].adev = adev;
		adev->spm.mgr[i].xcp_id = i;
		mutex_init(&adev->spm.mgr[i].lock);
	}
}

/**
 * amdgpu_spm_fini - end every acquisition of a device
 * @adev: the device
 */
void amdgpu_spm_fini(struct amdgpu_device *adev)
{
	unsigned int i;

	for (i = 0; i < AMDGPU_SPM_MAX_MGR; i++) {
		struct amdgpu_spm_mgr *mgr = &adev->spm.mgr[i];

		spm_reset_lock(adev);
		mutex_lock(&mgr->lock);
		if (mgr->sess)
			spm_release_locked(mgr);
		mutex_unlock(&mgr->lock);
		spm_reset_unlock(adev);
	}
}

/**
 * amdgpu_spm_ring_alloc_gtt - &amdgpu_spm_funcs.ring_alloc for hardware
 * @adev: the device
 * @xcc: logical XCC
 * @size: bytes
 * @ring: filled in
 *
 * Return: 0 or a negative errno.
 */
int amdgpu_spm_ring_alloc_gtt(struct amdgpu_device *adev, u32 xcc, u32 size,
			      struct amdgpu_spm_ring *ring)
{
	struct amdgpu_bo *bo = NULL;
	int r;

	r = amdgpu_bo_create_kernel(adev, size, PAGE_SIZE, AMDGPU_GEM_DOMAIN_GTT,
				    &bo, &ring->gpu_addr, &ring->cpu_addr);
	if (r)
		return r;
	memset(ring->cpu_addr, 0, size);
	ring->size = size;
	ring->priv = bo;
	return 0;
}

/**
 * amdgpu_spm_ring_free_gtt - &amdgpu_spm_funcs.ring_free for hardware
 * @adev: the device
 * @xcc: logical XCC
 * @ring: from amdgpu_spm_ring_alloc_gtt()
 */
void amdgpu_spm_ring_free_gtt(struct amdgpu_device *adev, u32 xcc,
			      struct amdgpu_spm_ring *ring)
{
	struct amdgpu_bo *bo = ring->priv;

	amdgpu_bo_free_kernel(&bo, &ring->gpu_addr, &ring->cpu_addr);
	ring->priv = NULL;
}

#if IS_ENABLED(CONFIG_DRM_AMDGPU_KUNIT_TEST)
/**
 * amdgpu_spm_test_stats - counters of an acquisition, for the benchmark
 * @adev: the device
 * @xcp_id: partition
 * @wakeups: worker runs
 * @drained: ring bytes consumed
 *
 * Return: 0, or -ENOENT when the partition is not acquired.
 */
int amdgpu_spm_test_stats(struct amdgpu_device *adev, u32 xcp_id,
			  u64 *wakeups, u64 *drained)
{
	struct amdgpu_spm_mgr *mgr = &adev->spm.mgr[xcp_id];
	int r = -ENOENT;

	mutex_lock(&mgr->lock);
	if (mgr->sess) {
		mutex_lock(&mgr->sess->drain_lock);
		*wakeups = mgr->sess->wakeups;
		*drained = mgr->sess->drained;
		mutex_unlock(&mgr->sess->drain_lock);
		r = 0;
	}
	mutex_unlock(&mgr->lock);
	return r;
}
#endif
