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
 * XCP, or one for the device when it has no XCP manager), owns the SPM_VMID
 * and a kernel ring per XCC, and copies the rings into destination buffers
 * that the owner installs with %AMDGPU_SPM_OP_SET_DEST_BUF
 * (amdgpu_spm_buf.c), with the drain core of amdgpu_spm_drain.c.
 *
 * One worker per acquisition does everything that touches the hardware or
 * the destination buffers. The ioctls change what the worker is asked for
 * and wait for it; they never touch a register. The worker drains on an
 * hrtimer whose period follows the fill rate (amdgpu_spm_pace_next()): the
 * rings run in the mode that never stalls, because on parts before GC 12
 * the mode that stalls when full and interrupts at a threshold stalls at
 * the threshold (see the "workaround for hw stall issue" posting on
 * amd-gfx), and the drain core detects a ring that lapped. No interrupt is
 * used.
 *
 * Locking, outermost first:
 *
 * - &amdgpu_spm_mgr.lock serialises ACQUIRE and release of a partition. It
 *   is held across allocations and while release waits for the worker, and
 *   is never taken by the reset path.
 * - The XCP manager's xcp_lock, where there is one, is taken inside it for
 *   the partition's XCC mask and &amdgpu_spm.acquiring, so that a partition
 *   switch (which checks that count under the same lock) cannot run
 *   between them.
 * - &amdgpu_spm_session.buf_lock serialises SET_DEST_BUF calls and guards
 *   the pin cache. Pinning (mmap_lock) nests inside it.
 * - &amdgpu_spm_session.drain_lock is held by the worker; it guards the
 *   current and next buffers, the drain state and the hardware state of
 *   the acquisition. The worker may fault user pages under it.
 * - The reset domain's semaphore is only ever taken by the worker and by
 *   the end of a graphics reservation (which parks SPM_VMID again), with
 *   down_read_trylock(), inside drm_dev_enter() and while the device is not
 *   suspended, around their register accesses: no allocation, user memory,
 *   notifier or wait for the worker happens under it, so a reset that
 *   holds it for writing never waits for the SPM manager.
 * - &amdgpu_spm.arb_lock is a leaf spinlock taken from the job submission
 *   path.
 *
 * A GPU reset or a resume from suspend loses the RLC's SPM programming;
 * amdgpu_spm_hw_lost() (called where the RLC is resumed) and the device's
 * reset counter tell the worker, which programs the hardware again and
 * reports the gap as data loss. Data the rings held is drained first.
 */

#include <linux/capability.h>
#include <linux/fdtable.h>
#include <linux/hrtimer.h>
#include <linux/kthread.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/pci.h>
#include <linux/pm_runtime.h>
#include <linux/random.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/wait.h>
#include <linux/workqueue.h>

#include <drm/drm_drv.h>
#include <drm/drm_file.h>
#include <drm/drm_print.h>
#include <drm/ttm/ttm_tt.h>
#include <kunit/static_stub.h>

#include "amdgpu.h"
#include "amdgpu_profiler.h"
#include "amdgpu_reset.h"
#include "amdgpu_spm.h"
#include "amdgpu_spm_buf.h"
#include "amdgpu_xcp.h"

int amdgpu_spm_paranoid = 1;
module_param_named(spm_paranoid, amdgpu_spm_paranoid, int, 0644);
MODULE_PARM_DESC(spm_paranoid,
		 "SPM profiling: 1 = only CAP_PERFMON or CAP_SYS_ADMIN may acquire SPM (default), 0 = any user with access to the render node");

/*
 * How long release waits for the worker to give the hardware back. A
 * resume that failed leaves the device suspended (amdgpu_device_resume()
 * returns before it clears in_suspend) until a later resume succeeds; a
 * reset may also take longer than this. Release then gives up and leaks
 * the rings until sw_fini, and ACQUIRE fails with -EIO from then on (see
 * spm_acquire()), so that the leak is one acquisition per partition at
 * most, not one per ACQUIRE/RELEASE cycle.
 */
unsigned int amdgpu_spm_release_ms = 10000;

unsigned int amdgpu_spm_ring_size = SZ_4M;
module_param_named(spm_ring_size, amdgpu_spm_ring_size, uint, 0444);
MODULE_PARM_DESC(spm_ring_size,
		 "SPM ring size per XCC in bytes, a power of two from 64 KiB to 256 MiB (default 4 MiB)");

unsigned int amdgpu_spm_backstop_ms = 100;
module_param_named(spm_backstop_ms, amdgpu_spm_backstop_ms, uint, 0644);
MODULE_PARM_DESC(spm_backstop_ms,
		 "SPM drain period in ms while nothing streams (default 100)");

/* How soon the worker tries again when it could not reach the hardware */
#define AMDGPU_SPM_RETRY_NS		(10 * NSEC_PER_MSEC)

/* What the hardware of an acquisition is, or is asked to be */
enum amdgpu_spm_hw {
	/* Not ours: stopped, SPM_VMID given back, ring cleared */
	AMDGPU_SPM_HW_NONE,
	/*
	 * Programmed once, then the RLC was reset or resumed: what it holds
	 * is not known; stop it and give it back before anything else
	 */
	AMDGPU_SPM_HW_LOST,
	/* Stopped, our rings mapped in the SPM VMID and programmed */
	AMDGPU_SPM_HW_PROGRAMMED,
	/* Streaming into our rings */
	AMDGPU_SPM_HW_RUNNING,
};

/**
 * struct amdgpu_spm_xcc - per-XCC state of an acquisition
 * @xcc: logical XCC id.
 * @ring: the ring memory.
 * @va: its address in the SPM VMID, what the ring base registers hold.
 * @cur: the drain's view of the ring; guarded by drain_lock.
 * @sh: the XCC's share of the current buffer (capacity 0 when there is
 *	none); guarded by drain_lock.
 * @seq: buffers installed for this XCC; guarded by drain_lock.
 */
struct amdgpu_spm_xcc {
	u32 xcc;
	struct amdgpu_spm_ring ring;
	u64 va;
	struct amdgpu_spm_cursor cur;
	struct amdgpu_spm_share sh;
	u32 seq;
};

/**
 * struct amdgpu_spm_session - one acquisition of a partition's SPM
 * @mgr: the manager.
 * @owner: the DRM file that acquired.
 * @owner_id: files_struct of the acquiring task, for amdgpu_flush().
 * @users: SET_DEST_BUF calls inside the session, see spm_session_get().
 * @dying: release has begun; no new buffer is installed. Written under
 *	drain_lock, read with READ_ONCE().
 * @wq: SET_DEST_BUF waiters for a full buffer, and release waiting for the
 *	hardware to be given back.
 * @buf_lock: serialises SET_DEST_BUF; guards @pins.
 * @drain_lock: held by the worker; guards everything below.
 * @work: the drain worker.
 * @timer: schedules @work.
 * @pins: cache of destination buffers.
 * @cur: buffer being filled, or NULL.
 * @next: buffer to install, see @swap.
 * @swap: SET_DEST_BUF asks the worker to retire @cur and install @next.
 * @retired_bytes: data bytes in the buffer the last swap retired.
 * @retired_loss: the OR of its shares' has_data_loss bits.
 * @full: a share of @cur is full; read by waiters with READ_ONCE().
 * @hw: the state the hardware is known to be in; read by release with
 *	READ_ONCE().
 * @want: the state asked for.
 * @hw_gen: &amdgpu_spm.hw_gen when the hardware was programmed.
 * @checked_ns: CLOCK_MONOTONIC time of the last spm_hw_check().
 * @tampered: a ring register changed behind the manager's back; the
 *	hardware was given back and SET_DEST_BUF fails with -EIO.
 * @quit: release is done with the worker: it does not rearm @timer.
 * @pace: the adaptive drain period.
 * @stats: counters, see &struct amdgpu_spm_stats.
 * @pt: the SPM VMID's page table of this acquisition: its rings, while the
 *	hardware is programmed; written by the worker.
 * @leak: on &amdgpu_spm.leaked once release gave up waiting for the
 *	hardware.
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
	struct hrtimer timer;
	struct amdgpu_spm_pins pins;
	struct amdgpu_spm_pin *cur;
	struct amdgpu_spm_pin *next;
	bool swap;
	u32 retired_bytes;
	u32 retired_loss;
	bool full;
	enum amdgpu_spm_hw hw;
	enum amdgpu_spm_hw want;
	int hw_gen;
	u64 checked_ns;
	bool tampered;
	bool quit;
	struct amdgpu_spm_pace pace;
	struct amdgpu_spm_stats stats;
	struct amdgpu_spm_pt pt;
	struct list_head leak;
	unsigned int num_xcc;
	struct amdgpu_spm_xcc xcc[] __counted_by(num_xcc);
};

static const struct amdgpu_spm_funcs *spm_funcs(struct amdgpu_spm_session *s)
{
	return s->mgr->adev->spm.funcs;
}

static u32 spm_data_size(void)
{
	return amdgpu_spm_ring_size - AMDGPU_SPM_RING_HDR_SIZE;
}

/* ---- arbitration of SPM_VMID with graphics ---- */

/**
 * amdgpu_spm_xcc_owned - whether the profiler owns the SPM of an XCC
 * @adev: the device
 * @xcc: logical XCC
 *
 * Context: any; lockless.
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
 * claims the XCC, then waits until no writer is counted, and only then lets
 * its worker program the VMID, so a writer either sees the claim or is done
 * before the VMID is programmed.
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

/**
 * amdgpu_spm_ring_writes_vmid - whether a job on @ring selects SPM_VMID
 * @ring: the ring a job runs on
 *
 * SPM samples the graphics engine of an XCC; only the jobs of that XCC's
 * graphics and compute rings point SPM_VMID at their VM. Other rings
 * (SDMA, VCN, JPEG) have no XCC of their own; &amdgpu_ring.xcc_id is 0 for
 * them. amdgpu_vm_flush() calls update_spm_vmid for them too: for jobs of a
 * reserved VMID, and for the first job of every VMID after a GPU reset
 * (amdgpu_vmid_had_gpu_reset()).
 *
 * Return: true for a GFX or compute ring.
 */
bool amdgpu_spm_ring_writes_vmid(struct amdgpu_ring *ring)
{
	switch (ring->funcs->type) {
	case AMDGPU_RING_TYPE_GFX:
	case AMDGPU_RING_TYPE_COMPUTE:
		return true;
	default:
		return false;
	}
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

/*
 * The logical XCCs whose jobs a file submits: those of its partition, or
 * every XCC for the primary node and for devices without partitions.
 */
static u32 spm_file_xcc_mask(struct amdgpu_device *adev, struct drm_file *filp)
{
	struct amdgpu_fpriv *fpriv = filp->driver_priv;
	u32 all = adev->gfx.xcc_mask ?
		  GENMASK(NUM_XCC(adev->gfx.xcc_mask) - 1, 0) : BIT(0);
	u32 mask = 0;

	if (!adev->xcp_mgr || !fpriv || fpriv->xcp_id == AMDGPU_XCP_NO_PARTITION ||
	    fpriv->xcp_id >= adev->xcp_mgr->num_xcps)
		return all;
	mutex_lock(&adev->xcp_mgr->xcp_lock);
	if (amdgpu_xcp_get_inst_details(&adev->xcp_mgr->xcp[fpriv->xcp_id],
					AMDGPU_XCP_GFX, &mask))
		mask = all;
	mutex_unlock(&adev->xcp_mgr->xcp_lock);
	return mask & GENMASK(AMDGPU_SPM_MAX_XCC - 1, 0);
}

/**
 * amdgpu_spm_gfx_vmid_reserve - %AMDGPU_VM_OP_RESERVE_VMID
 * @adev: the device
 * @filp: the file the ioctl came through
 *
 * Reserves a VMID on GFXHUB(0) for @filp's VM, as graphics clients do to
 * point SPM_VMID at their VM, and counts the reservation against the XCCs
 * of @filp's partition: the profiler and such a reservation exclude each
 * other per XCC. A second call through the same file does nothing.
 *
 * Context: process context; takes &amdgpu_spm.gfx_vmid_lock on devices
 * with SPM.
 * Return: 0, or -EBUSY while the profiler owns the SPM of one of those
 * XCCs.
 */
int amdgpu_spm_gfx_vmid_reserve(struct amdgpu_device *adev,
				struct drm_file *filp)
{
	struct amdgpu_fpriv *fpriv = filp->driver_priv;
	struct amdgpu_vm *vm = &fpriv->vm;
	unsigned long mask = spm_file_xcc_mask(adev, filp);
	struct amdgpu_spm *spm = &adev->spm;
	unsigned int x;
	int r = 0;

	if (!spm->funcs) {
		/* No profiler on this device: nothing to exclude */
		if (!vm->reserved_vmid[AMDGPU_GFXHUB(0)]) {
			r = amdgpu_vmid_alloc_reserved(adev, AMDGPU_GFXHUB(0));
			if (!r)
				vm->reserved_vmid[AMDGPU_GFXHUB(0)] = true;
		}
		return r;
	}

	mutex_lock(&spm->gfx_vmid_lock);
	if (vm->reserved_vmid[AMDGPU_GFXHUB(0)])
		goto out;

	spin_lock_irq(&spm->arb_lock);
	if (spm->profiler_xcc_mask & mask) {
		r = -EBUSY;
	} else {
		/* Read without the lock by amdgpu_spm_job_vmid() */
		for_each_set_bit(x, &mask, AMDGPU_SPM_MAX_XCC)
			WRITE_ONCE(spm->gfx_users[x], spm->gfx_users[x] + 1);
	}
	spin_unlock_irq(&spm->arb_lock);
	if (r)
		goto out;

	r = amdgpu_vmid_alloc_reserved(adev, AMDGPU_GFXHUB(0));
	if (r) {
		vm->spm_xcc_mask = mask;
		amdgpu_spm_gfx_vmid_release(adev, vm);
		goto out;
	}
	vm->spm_xcc_mask = mask;
	vm->reserved_vmid[AMDGPU_GFXHUB(0)] = true;
out:
	mutex_unlock(&spm->gfx_vmid_lock);
	return r;
}

/**
 * amdgpu_spm_gfx_vmid_unreserve - %AMDGPU_VM_OP_UNRESERVE_VMID
 * @adev: the device
 * @filp: the file the ioctl came through
 *
 * Undoes amdgpu_spm_gfx_vmid_reserve(); does nothing if @filp's VM holds no
 * reservation.
 *
 * Context: process context; takes &amdgpu_spm.gfx_vmid_lock.
 */
void amdgpu_spm_gfx_vmid_unreserve(struct amdgpu_device *adev,
				   struct drm_file *filp)
{
	struct amdgpu_fpriv *fpriv = filp->driver_priv;
	struct amdgpu_vm *vm = &fpriv->vm;
	bool spm = adev->spm.funcs;

	if (spm)
		mutex_lock(&adev->spm.gfx_vmid_lock);
	if (vm->reserved_vmid[AMDGPU_GFXHUB(0)]) {
		/* Parked before the VMID goes back to amdgpu_ids' pool */
		amdgpu_spm_gfx_vmid_release(adev, vm);
		amdgpu_vmid_free_reserved(adev, AMDGPU_GFXHUB(0));
		vm->reserved_vmid[AMDGPU_GFXHUB(0)] = false;
	}
	if (spm)
		mutex_unlock(&adev->spm.gfx_vmid_lock);
}

/*
 * SPM_VMID of the XCCs in @mask, which no graphics client reserves SPM on
 * any more, back to the park VMID: the VMID that was reserved goes back to
 * amdgpu_ids' pool, and any VM may get it next. Not while a reset or a
 * suspend holds the hardware (RLC resume parks it then), nor once the
 * device is unplugged; never on an XCC that the profiler owns, nor on one
 * that a client reserved again meanwhile.
 */
static void spm_gfx_repark(struct amdgpu_device *adev, unsigned long mask)
{
	struct amdgpu_spm *spm = &adev->spm;
	unsigned int x;
	int idx;

	if (!mask || !spm->funcs || !drm_dev_enter(adev_to_drm(adev), &idx))
		return;
	if (!adev->in_suspend && down_read_trylock(&adev->reset_domain->sem)) {
		for_each_set_bit(x, &mask, AMDGPU_SPM_MAX_XCC) {
			if (!amdgpu_spm_vmid_write_begin(adev, x))
				continue;
			if (!READ_ONCE(spm->gfx_users[x]))
				spm->funcs->set_vmid(adev, x,
						     amdgpu_spm_park_vmid(adev));
			amdgpu_spm_vmid_write_end(adev, x);
		}
		up_read(&adev->reset_domain->sem);
	}
	drm_dev_exit(idx);
}

/**
 * amdgpu_spm_gfx_vmid_release - stop counting a VM's VMID reservation
 * @adev: the device
 * @vm: a VM whose GFXHUB(0) VMID reservation goes away
 *
 * Called by amdgpu_spm_gfx_vmid_unreserve() and by amdgpu_vm_fini() before
 * they give the reserved VMID back to amdgpu_ids. The XCCs that no client
 * reserves SPM on any more are parked again.
 *
 * Context: process context; takes &amdgpu_spm.arb_lock, and may take the
 * GFXOFF lock to park.
 */
void amdgpu_spm_gfx_vmid_release(struct amdgpu_device *adev,
				 struct amdgpu_vm *vm)
{
	unsigned long mask = vm->spm_xcc_mask, idle = 0;
	struct amdgpu_spm *spm = &adev->spm;
	unsigned long flags;
	unsigned int x;

	/* Only reservations made where the profiler exists are counted */
	if (!mask)
		return;
	spin_lock_irqsave(&spm->arb_lock, flags);
	for_each_set_bit(x, &mask, AMDGPU_SPM_MAX_XCC)
		if (!WARN_ON(!spm->gfx_users[x])) {
			WRITE_ONCE(spm->gfx_users[x], spm->gfx_users[x] - 1);
			if (!spm->gfx_users[x])
				__set_bit(x, &idle);
		}
	spin_unlock_irqrestore(&spm->arb_lock, flags);
	vm->spm_xcc_mask = 0;
	spm_gfx_repark(adev, idle);
}

static int spm_claim_xccs(struct amdgpu_spm_session *s, unsigned long mask)
{
	struct amdgpu_spm *spm = &s->mgr->adev->spm;
	unsigned int x;
	int r = 0;

	spin_lock_irq(&spm->arb_lock);
	if (spm->profiler_xcc_mask & mask)
		r = -EBUSY;
	for_each_set_bit(x, &mask, AMDGPU_SPM_MAX_XCC)
		if (spm->gfx_users[x])
			r = -EBUSY;
	if (!r)
		WRITE_ONCE(spm->profiler_xcc_mask, spm->profiler_xcc_mask | mask);
	spin_unlock_irq(&spm->arb_lock);
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

static void spm_unclaim_xccs(struct amdgpu_spm_session *s)
{
	struct amdgpu_spm *spm = &s->mgr->adev->spm;

	spin_lock_irq(&spm->arb_lock);
	WRITE_ONCE(spm->profiler_xcc_mask,
		   spm->profiler_xcc_mask & ~spm_session_mask(s));
	spin_unlock_irq(&spm->arb_lock);
}

/* ---- the worker: hardware ---- */

/*
 * Register access from the worker: not while the device is suspended, and
 * not while a reset holds the reset domain's semaphore. After unplug only
 * when the device is still there: a surprise removal took the device and
 * its DMA away, but after an unbind or a module unload it still streams
 * into our rings, and its registers stay mapped until amdgpu_spm_fini() has
 * returned (amdgpu_driver_unload_kms() calls it before
 * amdgpu_device_fini_hw()). Returns 1 with the semaphore held for reading
 * (and the device entered, unless *@idx is -1), 0 if the hardware cannot be
 * reached now, -ENODEV if it is gone.
 */
static int spm_hw_enter(struct amdgpu_device *adev, int *idx)
{
	if (!drm_dev_enter(adev_to_drm(adev), idx)) {
		if (!adev->pdev || pci_dev_is_disconnected(adev->pdev))
			return -ENODEV;
		*idx = -1;
	}
	if (adev->in_suspend || !down_read_trylock(&adev->reset_domain->sem)) {
		if (*idx >= 0)
			drm_dev_exit(*idx);
		return 0;
	}
	return 1;
}

static void spm_hw_exit(struct amdgpu_device *adev, int idx)
{
	up_read(&adev->reset_domain->sem);
	if (idx >= 0)
		drm_dev_exit(idx);
}

/*
 * The RLC was resumed (after a reset, or from suspend) since the hardware
 * was programmed. Only amdgpu_spm_hw_lost() says so: the device's reset
 * counter also counts queue resets and soft recoveries, which leave the
 * RLC alone.
 */
static bool spm_hw_lost(struct amdgpu_spm_session *s)
{
	return s->hw != AMDGPU_SPM_HW_NONE && s->hw != AMDGPU_SPM_HW_LOST &&
	       atomic_read(&s->mgr->adev->spm.hw_gen) != s->hw_gen;
}

static void spm_mark_loss(struct amdgpu_spm_session *s)
{
	unsigned int i;

	for (i = 0; i < s->num_xcc; i++) {
		s->xcc[i].sh.loss = true;
		s->xcc[i].sh.dirty = true;
	}
}

/*
 * Program every XCC: stopped, its ring mapped in the acquisition's page
 * table of the SPM VMID, the VMID's context on that table (flushed), the
 * ring, then SPM_VMID, which was parked at the same VMID. The table is
 * cleared first: after a VRAM loss it holds anything. Returns false if a
 * TLB flush may not have happened (a reset was pending): the hardware is
 * then marked lost, and the worker's next pass programs it all again.
 */
static bool spm_hw_program(struct amdgpu_spm_session *s)
{
	const struct amdgpu_spm_funcs *funcs = spm_funcs(s);
	struct amdgpu_device *adev = s->mgr->adev;
	bool flushed = true;
	unsigned int i;

	amdgpu_spm_pt_clear(adev, &s->pt);
	for (i = 0; i < s->num_xcc; i++) {
		struct amdgpu_spm_xcc *x = &s->xcc[i];

		/* Stop whatever runs before the table and ring change */
		funcs->stop(adev, x->xcc);
		amdgpu_spm_pt_map(adev, &s->pt, i, &x->ring);
		if (!amdgpu_spm_vmid_use(adev, x->xcc, &s->pt))
			flushed = false;
		funcs->set_ring(adev, x->xcc, x->va,
				x->cur.size + AMDGPU_SPM_RING_HDR_SIZE);
		funcs->set_vmid(adev, x->xcc, adev->spm.vmid);
	}
	s->hw_gen = atomic_read(&adev->spm.hw_gen);
	s->hw = flushed ? AMDGPU_SPM_HW_PROGRAMMED : AMDGPU_SPM_HW_LOST;
	return flushed;
}

static void spm_hw_start(struct amdgpu_spm_session *s)
{
	const struct amdgpu_spm_funcs *funcs = spm_funcs(s);
	struct amdgpu_device *adev = s->mgr->adev;
	unsigned int i;

	for (i = 0; i < s->num_xcc; i++) {
		/* The RLC starts again at offset 0 */
		amdgpu_spm_cursor_restart(&s->xcc[i].cur);
		funcs->start(adev, s->xcc[i].xcc);
	}
	s->hw = AMDGPU_SPM_HW_RUNNING;
}

static void spm_hw_stop(struct amdgpu_spm_session *s)
{
	const struct amdgpu_spm_funcs *funcs = spm_funcs(s);
	unsigned int i;

	for (i = 0; i < s->num_xcc; i++)
		funcs->stop(s->mgr->adev, s->xcc[i].xcc);
	s->hw = AMDGPU_SPM_HW_PROGRAMMED;
}

/*
 * Give the hardware back: stopped; each context parked on the device's
 * empty table, flushed, so that nothing the RLC does from now on reaches
 * the rings and the acquisition's table, which are freed next (parked on
 * the device's table, not on an emptied own one: after a partition switch
 * an XCC parked there would reach the partition's next rings); SPM_VMID
 * (still) the SPM VMID; no ring. Only a release whose every flush is
 * known done makes the rings unreachable: if a reset was pending during
 * one, the hub may still hold their translations, so the hardware is
 * marked lost, not given back, and the worker's next pass releases it
 * again; release waits for that.
 */
static bool spm_hw_release(struct amdgpu_spm_session *s)
{
	const struct amdgpu_spm_funcs *funcs = spm_funcs(s);
	struct amdgpu_device *adev = s->mgr->adev;
	bool flushed = true;
	unsigned int i;

	for (i = 0; i < s->num_xcc; i++)
		funcs->stop(adev, s->xcc[i].xcc);
	for (i = 0; i < s->num_xcc; i++) {
		if (!amdgpu_spm_vmid_use(adev, s->xcc[i].xcc, &adev->spm.park))
			flushed = false;
		funcs->set_vmid(adev, s->xcc[i].xcc, adev->spm.vmid);
		funcs->set_ring(adev, s->xcc[i].xcc, 0, 0);
	}
	s->hw = flushed ? AMDGPU_SPM_HW_NONE : AMDGPU_SPM_HW_LOST;
	return flushed;
}

/*
 * A ring register, or SPM_VMID, no longer holds what we wrote: a command
 * stream rewrote it. Give the whole partition's SPM back, and say so.
 */
static bool spm_hw_check(struct amdgpu_spm_session *s)
{
	const struct amdgpu_spm_funcs *funcs = spm_funcs(s);
	struct amdgpu_device *adev = s->mgr->adev;
	unsigned int i;

	for (i = 0; i < s->num_xcc; i++) {
		struct amdgpu_spm_xcc *x = &s->xcc[i];

		if (!funcs->ring_intact(adev, x->xcc, x->va,
					x->cur.size + AMDGPU_SPM_RING_HDR_SIZE,
					adev->spm.vmid))
			break;
	}
	if (i == s->num_xcc)
		return true;
	drm_warn_once(adev_to_drm(adev),
		      "SPM ring registers of XCC %u changed behind the driver; SPM of partition %u given back\n",
		      s->xcc[i].xcc, s->mgr->xcp_id);
	spm_hw_release(s);
	spm_mark_loss(s);
	s->tampered = true;
	s->want = AMDGPU_SPM_HW_NONE;
	return false;
}

/*
 * Bring the hardware to the state asked for. Returns false if it could not
 * be reached and the worker must try again.
 */
static bool spm_hw_step_locked(struct amdgpu_spm_session *s)
{
	const struct amdgpu_spm_funcs *funcs = spm_funcs(s);
	struct amdgpu_device *adev = s->mgr->adev;
	bool programmed = false, intact = true, reached = true;
	unsigned int i;
	int idx, r;
	u64 now;

	lockdep_assert_held(&s->drain_lock);

	if (spm_hw_lost(s)) {
		/* Nothing of ours is known to be programmed any more */
		if (s->hw == AMDGPU_SPM_HW_RUNNING)
			spm_mark_loss(s);
		s->hw = AMDGPU_SPM_HW_LOST;
	}
	if (s->hw == AMDGPU_SPM_HW_NONE && s->want == AMDGPU_SPM_HW_NONE)
		return true;

	r = spm_hw_enter(adev, &idx);
	if (r < 0) {
		/* Surprise removal: the hardware is gone, and so is its DMA */
		s->hw = AMDGPU_SPM_HW_NONE;
		s->want = AMDGPU_SPM_HW_NONE;
		return true;
	}
	if (!r)
		return false;

	if (s->want == AMDGPU_SPM_HW_NONE) {
		/* Also after a reset: only this makes freeing the rings safe */
		reached = spm_hw_release(s);
		goto out;
	}
	if (s->hw == AMDGPU_SPM_HW_NONE || s->hw == AMDGPU_SPM_HW_LOST) {
		if (!spm_hw_program(s)) {
			/* Not started on a TLB that may hold the old table */
			reached = false;
			goto out;
		}
		programmed = true;
	}
	if (s->want == AMDGPU_SPM_HW_RUNNING && s->hw == AMDGPU_SPM_HW_PROGRAMMED)
		spm_hw_start(s);
	else if (s->want == AMDGPU_SPM_HW_PROGRAMMED && s->hw == AMDGPU_SPM_HW_RUNNING)
		spm_hw_stop(s);

	/*
	 * Programmed or streaming: on the pass that programmed, then at most
	 * every AMDGPU_SPM_CHECK_NS; see profiler.rst, Security
	 */
	now = ktime_get_ns();
	if (programmed || now - s->checked_ns >= AMDGPU_SPM_CHECK_NS) {
		s->checked_ns = now;
		intact = spm_hw_check(s);
	}
	if (intact && s->hw == AMDGPU_SPM_HW_RUNNING) {
		for (i = 0; i < s->num_xcc; i++)
			funcs->set_rdptr(adev, s->xcc[i].xcc,
					 amdgpu_spm_cursor_rdptr(&s->xcc[i].cur));
	}
out:
	spm_hw_exit(adev, idx);
	return reached;
}

/* ---- the worker: buffers ---- */

static void spm_install_locked(struct amdgpu_spm_session *s,
			       struct amdgpu_spm_pin *p)
{
	u32 share = p ? amdgpu_spm_share_size(p->size, s->num_xcc) : 0;
	/* The clock of the share headers: see drm_amdgpu_spm_header_info */
	u64 now = ktime_get_boottime_ns();
	unsigned int i;

	lockdep_assert_held(&s->drain_lock);

	s->cur = p;
	s->full = false;
	for (i = 0; i < s->num_xcc; i++) {
		struct amdgpu_spm_xcc *x = &s->xcc[i];
		/* Loss while no buffer was installed counts in this one */
		bool lost = !x->sh.cap && x->sh.loss;

		if (p)
			x->seq++;
		amdgpu_spm_share_init(&x->sh, share, i, s->num_xcc, x->xcc,
				      x->seq, now);
		x->sh.loss = lost;
	}
}

static void spm_headers_locked(struct amdgpu_spm_session *s)
{
	unsigned int i;

	if (!s->cur)
		return;
	for (i = 0; i < s->num_xcc; i++)
		if (s->xcc[i].sh.dirty)
			amdgpu_spm_share_header(&s->xcc[i].sh, &s->cur->dst,
						AMDGPU_PROFILER_VERSION);
}

static void spm_retire_locked(struct amdgpu_spm_session *s)
{
	unsigned int i;
	u32 bytes = 0;
	u32 loss = 0;

	spm_headers_locked(s);
	for (i = 0; i < s->num_xcc; i++) {
		bytes += s->xcc[i].sh.copied;
		loss |= amdgpu_spm_share_loss(&s->xcc[i].sh);
	}
	s->retired_bytes = bytes;
	s->retired_loss = loss;
}

/*
 * Buffers that are not pinned are written through their mapping, under
 * their mm, and never once it is gone. Switch the worker to the mm @p
 * needs (or to none), keeping the one it has if that is it.
 */
static void spm_use_mm(struct mm_struct **held, struct amdgpu_spm_pin *p)
{
	struct mm_struct *mm = amdgpu_spm_pin_needs_mm(p) ? p->mm : NULL;

	if (mm == *held)
		return;
	if (*held) {
		kthread_unuse_mm(*held);
		mmput(*held);
		*held = NULL;
	}
	if (mm && mmget_not_zero(mm)) {
		kthread_use_mm(mm);
		*held = mm;
	}
}

/*
 * Drain every ring into the current buffer. Returns the most bytes the RLC
 * wrote into one ring since the last drain, for the pacing; @held says
 * whether data stayed in a ring for want of room.
 */
static u64 spm_drain_locked(struct amdgpu_spm_session *s, u64 now, bool *held)
{
	unsigned int i;
	u64 most = 0;

	*held = false;
	for (i = 0; i < s->num_xcc; i++) {
		struct amdgpu_spm_xcc *x = &s->xcc[i];
		u64 before = x->cur.consumed, laps = x->cur.laps;
		u32 n;

		n = amdgpu_spm_drain_ring(&x->cur, &x->sh,
					  s->cur ? &s->cur->dst : NULL, now);
		most = max_t(u64, most, n);
		s->stats.drained += x->cur.consumed - before;
		s->stats.laps += x->cur.laps - laps;
		if (s->cur && x->sh.copied == x->sh.cap)
			s->full = true;
		/* Only a buffer's share makes room: without one, no hurry */
		if (s->cur && amdgpu_spm_cursor_pending(&x->cur))
			*held = true;
	}
	return most;
}

static void spm_work(struct work_struct *work)
{
	struct amdgpu_spm_session *s =
		container_of(work, struct amdgpu_spm_session, work);
	struct mm_struct *mm = NULL;
	u64 now, most, period;
	bool reached, swapped, held;

	mutex_lock(&s->drain_lock);
	s->stats.wakeups++;

	spm_use_mm(&mm, s->cur);
	/* Pacing runs on CLOCK_MONOTONIC, the share headers on CLOCK_BOOTTIME */
	now = ktime_get_ns();
	most = spm_drain_locked(s, ktime_get_boottime_ns(), &held);

	swapped = s->swap;
	if (s->swap) {
		spm_retire_locked(s);
		/* The new buffer's headers are written under its own mm */
		spm_use_mm(&mm, s->next);
		spm_install_locked(s, s->next);
		if (s->want != AMDGPU_SPM_HW_NONE)
			s->want = s->next ? AMDGPU_SPM_HW_RUNNING :
					    AMDGPU_SPM_HW_PROGRAMMED;
		s->next = NULL;
		s->swap = false;
	}

	/*
	 * What a full share left in a ring that keeps running goes to the new
	 * buffer now, not a period later (the pacing counts what the RLC
	 * writes, not what waits in the ring), and before the step below
	 * tells the RLC the new read pointer. A ring that is about to be
	 * started again is not drained: starting it resets it.
	 */
	if (swapped && s->cur && s->hw == AMDGPU_SPM_HW_RUNNING &&
	    s->want == AMDGPU_SPM_HW_RUNNING)
		most = max(most, spm_drain_locked(s, ktime_get_boottime_ns(), &held));
	reached = spm_hw_step_locked(s);
	spm_headers_locked(s);
	spm_use_mm(&mm, NULL);

	/* A ring that stalls while data waits says nothing of the rate */
	if (held && !most)
		period = amdgpu_spm_pace_hold(&s->pace, now);
	else
		period = amdgpu_spm_pace_next(&s->pace, now, most, spm_data_size(),
					      AMDGPU_SPM_MIN_PERIOD_NS,
					      (u64)max(amdgpu_spm_backstop_ms, 1u) *
					      NSEC_PER_MSEC);
	if (!reached)
		period = min_t(u64, period, AMDGPU_SPM_RETRY_NS);
	s->stats.period_ns = period;
	if (!s->quit)
		hrtimer_start(&s->timer, ns_to_ktime(period), HRTIMER_MODE_REL);
	mutex_unlock(&s->drain_lock);

	/* SET_DEST_BUF waiters for a full buffer; release for the hardware */
	wake_up_all(&s->wq);
}

static enum hrtimer_restart spm_timer(struct hrtimer *t)
{
	struct amdgpu_spm_session *s = container_of(t, struct amdgpu_spm_session,
						    timer);

	queue_work(s->mgr->adev->spm.wq, &s->work);
	return HRTIMER_NORESTART;
}

/* Run the worker now and wait for it */
static void spm_kick(struct amdgpu_spm_session *s)
{
	queue_work(s->mgr->adev->spm.wq, &s->work);
	flush_work(&s->work);
}

/* ---- acquisition ---- */

static bool spm_allowed(void)
{
	return amdgpu_spm_paranoid <= 0 || perfmon_capable();
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

/*
 * The partition's XCCs, counted as acquiring under the XCP manager's lock,
 * so that the partitions cannot change from here to release.
 */
static u32 spm_begin_acquire(struct amdgpu_device *adev, u32 xcp_id)
{
	struct amdgpu_xcp_mgr *xm = adev->xcp_mgr;
	u32 mask = 0;

	if (!xm) {
		atomic_inc(&adev->spm.acquiring);
		return adev->gfx.xcc_mask ?
			GENMASK(NUM_XCC(adev->gfx.xcc_mask) - 1, 0) : BIT(0);
	}
	mutex_lock(&xm->xcp_lock);
	if (xcp_id < xm->num_xcps &&
	    !amdgpu_xcp_get_inst_details(&xm->xcp[xcp_id], AMDGPU_XCP_GFX, &mask))
		mask &= GENMASK(AMDGPU_SPM_MAX_XCC - 1, 0);
	else
		mask = 0;
	if (mask)
		atomic_inc(&adev->spm.acquiring);
	mutex_unlock(&xm->xcp_lock);
	return mask;
}

static void spm_end_acquire(struct amdgpu_device *adev)
{
	atomic_dec(&adev->spm.acquiring);
}

/* Free the rings and their page table, which nothing reaches any more */
static void spm_free_rings(struct amdgpu_spm_session *s, unsigned int n)
{
	amdgpu_spm_pt_fini(s->mgr->adev, &s->pt);
	while (n--)
		spm_funcs(s)->ring_free(s->mgr->adev, s->xcc[n].xcc,
					&s->xcc[n].ring);
}

/* The rings, and the page table of the SPM VMID the worker maps them in */
static int spm_alloc_rings(struct amdgpu_spm_session *s)
{
	const struct amdgpu_spm_funcs *funcs = spm_funcs(s);
	struct amdgpu_device *adev = s->mgr->adev;
	u32 size = amdgpu_spm_ring_size + funcs->guard;
	u8 token[AMDGPU_SPM_LINE_SIZE];
	unsigned int i;
	int r;

	r = amdgpu_spm_pt_init(adev, &s->pt,
			       amdgpu_spm_pt_pages(size, s->num_xcc));
	if (r)
		return r;
	get_random_bytes(token, sizeof(token));
	for (i = 0; i < s->num_xcc; i++) {
		struct amdgpu_spm_xcc *x = &s->xcc[i];

		r = funcs->ring_alloc(adev, x->xcc, size, &x->ring);
		if (r) {
			spm_free_rings(s, i);
			return r;
		}
		x->va = amdgpu_spm_pt_va(i, size);
		amdgpu_spm_cursor_init(&x->cur, x->ring.cpu_addr, spm_data_size(),
				       funcs->guard, token);
		/* Nothing points the RLC at the ring yet */
		amdgpu_spm_cursor_restart(&x->cur);
		amdgpu_spm_share_init(&x->sh, 0, i, s->num_xcc, x->xcc, 0, 0);
	}
	return 0;
}

/* Whether a release had to leave its rings (until sw_fini) */
static bool spm_leaked(struct amdgpu_device *adev)
{
	bool leaked;

	spin_lock_irq(&adev->spm.arb_lock);
	leaked = !list_empty(&adev->spm.leaked);
	spin_unlock_irq(&adev->spm.arb_lock);
	return leaked;
}

static int spm_acquire(struct amdgpu_spm_mgr *mgr, struct drm_file *filp)
{
	struct amdgpu_device *adev = mgr->adev;
	struct amdgpu_spm_session *s;
	unsigned int i, n, xcc;
	unsigned long mask;
	int r;

	if (!spm_allowed())
		return -EPERM;
	if (!is_power_of_2(amdgpu_spm_ring_size) ||
	    amdgpu_spm_ring_size < SZ_64K || amdgpu_spm_ring_size > SZ_256M)
		return -EINVAL;

	mutex_lock(&mgr->lock);
	r = -ENODEV;
	/* No SPM VMID, or no empty table to park it on: see amdgpu_spm_vmid.c */
	if (adev->spm.dead || !adev->spm.vmid || !adev->spm.park.priv)
		goto out_unlock;
	/*
	 * Not resumed, or a release already had to leave rings the RLC may
	 * still reach: another acquisition would only add to the leak.
	 */
	r = -EIO;
	if (READ_ONCE(adev->in_suspend) || spm_leaked(adev)) {
		dev_dbg(adev->dev, "SPM: ACQUIRE refused: %s\n",
			adev->in_suspend ? "device suspended" :
			"rings of an earlier release still held");
		goto out_unlock;
	}
	r = -EBUSY;
	if (mgr->sess)
		goto out_unlock;
	mask = spm_begin_acquire(adev, mgr->xcp_id);
	r = -EINVAL;
	n = hweight32(mask);
	if (!n)
		goto out_unlock;
	/* The rings are GART memory: leave most of the GART to the rest */
	r = -ENOMEM;
	if ((u64)n * (amdgpu_spm_ring_size + adev->spm.funcs->guard) >
	    adev->gmc.gart_size / 4)
		goto err_acquiring;

	r = -ENOMEM;
	s = kzalloc(struct_size(s, xcc, n), GFP_KERNEL);
	if (!s)
		goto err_acquiring;
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
	hrtimer_init(&s->timer, CLOCK_MONOTONIC, HRTIMER_MODE_REL);
	s->timer.function = spm_timer;
	amdgpu_spm_pace_init(&s->pace, (u64)amdgpu_spm_backstop_ms * NSEC_PER_MSEC);

	r = spm_claim_xccs(s, mask);
	if (r)
		goto err_free;
	spm_wait_vmid_writers(s);

	r = spm_rpm_get(adev);
	if (r)
		goto err_unclaim;

	r = spm_alloc_rings(s);
	if (r)
		goto err_rpm;

	/* The worker programs the page table, the rings and SPM_VMID */
	s->want = AMDGPU_SPM_HW_PROGRAMMED;
	spm_kick(s);

	mgr->sess = s;
	WRITE_ONCE(mgr->owner, filp);
	mutex_unlock(&mgr->lock);
	return 0;

err_rpm:
	spm_rpm_put(adev);
err_unclaim:
	spm_unclaim_xccs(s);
err_free:
	mutex_destroy(&s->drain_lock);
	mutex_destroy(&s->buf_lock);
	kfree(s);
err_acquiring:
	spm_end_acquire(adev);
out_unlock:
	mutex_unlock(&mgr->lock);
	return r;
}

/* What is left of a session once its worker is stopped and its memory free */
static void spm_session_free(struct amdgpu_spm_session *s)
{
	mutex_destroy(&s->drain_lock);
	mutex_destroy(&s->buf_lock);
	kfree(s);
}

/*
 * Release could not give the hardware back: the RLC of @s's XCCs may still
 * write the rings through the acquisition's table, so neither is freed
 * until amdgpu_spm_free_leaked(), at sw_fini
 */
static void spm_leak(struct amdgpu_spm_session *s)
{
	struct amdgpu_device *adev = s->mgr->adev;

	spin_lock_irq(&adev->spm.arb_lock);
	list_add_tail(&s->leak, &adev->spm.leaked);
	adev->spm.nleaked++;
	spin_unlock_irq(&adev->spm.arb_lock);
	dev_warn(adev->dev,
		 "SPM: partition %u: hardware not reached in %u ms at release; its rings (%u x %u bytes) stay allocated until the driver unloads\n",
		 s->mgr->xcp_id, amdgpu_spm_release_ms, s->num_xcc,
		 s->num_xcc ? s->xcc[0].ring.size : 0);
}

/**
 * amdgpu_spm_free_leaked - free what releases that timed out kept
 * @adev: the device
 *
 * Called by amdgpu_spm_vmid_fini() at the gfx IP's sw_fini: hw_fini has
 * stopped the RLC and the GMC's hw_fini has disabled the VM contexts, so
 * the RLC reaches nothing through the SPM VMID any more.
 */
void amdgpu_spm_free_leaked(struct amdgpu_device *adev)
{
	struct amdgpu_spm_session *s, *tmp;
	LIST_HEAD(list);

	if (!adev->spm.funcs)
		return;
	spin_lock_irq(&adev->spm.arb_lock);
	list_splice_init(&adev->spm.leaked, &list);
	spin_unlock_irq(&adev->spm.arb_lock);
	list_for_each_entry_safe(s, tmp, &list, leak) {
		list_del(&s->leak);
		spm_free_rings(s, s->num_xcc);
		spm_session_free(s);
	}
}

/* End the acquisition of @mgr; called with mgr->lock held */
static void spm_release_locked(struct amdgpu_spm_mgr *mgr)
{
	struct amdgpu_spm_session *s = mgr->sess;
	struct amdgpu_device *adev = mgr->adev;
	bool leak;

	lockdep_assert_held(&mgr->lock);

	/* Wake SET_DEST_BUF waiters and wait until they have left */
	mutex_lock(&s->drain_lock);
	WRITE_ONCE(s->dying, true);
	mutex_unlock(&s->drain_lock);
	wake_up_all(&s->wq);
	wait_var_event(&s->users, !atomic_read(&s->users));

	/*
	 * The worker gives the hardware back. While a reset runs it cannot;
	 * the reset resets the RLC, and the worker sees that afterwards. The
	 * rings are freed only once the RLC cannot write to them. A device
	 * whose resume failed stays suspended and the worker never reaches
	 * it: after amdgpu_spm_release_ms release ends anyway and leaks the
	 * rings and the table rather than free memory the GPU may write.
	 */
	mutex_lock(&s->drain_lock);
	s->want = AMDGPU_SPM_HW_NONE;
	mutex_unlock(&s->drain_lock);
	queue_work(adev->spm.wq, &s->work);
	wait_event_timeout(s->wq, READ_ONCE(s->hw) == AMDGPU_SPM_HW_NONE,
			   msecs_to_jiffies(amdgpu_spm_release_ms));

	mutex_lock(&s->drain_lock);
	s->quit = true;
	mutex_unlock(&s->drain_lock);
	hrtimer_cancel(&s->timer);
	cancel_work_sync(&s->work);
	/* The worker is stopped: what it reached last is final */
	leak = s->hw != AMDGPU_SPM_HW_NONE;

	/*
	 * The XCCs go back even when leaking: whatever programs them next
	 * (RLC resume; ACQUIRE is refused from now on) points their context
	 * elsewhere, flushed
	 */
	spm_unclaim_xccs(s);
	amdgpu_spm_pins_fini(&s->pins);
	spm_rpm_put(adev);

	mgr->sess = NULL;
	WRITE_ONCE(mgr->owner, NULL);
	spm_end_acquire(adev);
	if (leak) {
		spm_leak(s);
		return;
	}
	spm_free_rings(s, s->num_xcc);
	spm_session_free(s);
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

	mutex_lock(&mgr->lock);
	if (!mgr->sess)
		r = -EINVAL;
	else if (mgr->sess->owner != filp)
		r = -EBUSY;
	else
		spm_release_locked(mgr);
	mutex_unlock(&mgr->lock);
	return r;
}

/* ---- SET_DEST_BUF ---- */

/* The hardware streams into the installed buffer, or never will */
static bool spm_streaming_or_over(struct amdgpu_spm_session *s)
{
	return READ_ONCE(s->hw) == AMDGPU_SPM_HW_RUNNING ||
	       READ_ONCE(s->want) != AMDGPU_SPM_HW_RUNNING ||
	       READ_ONCE(s->dying);
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

	mutex_lock(&s->buf_lock);
	r = -EINVAL;
	if (READ_ONCE(s->dying))
		goto out_unlock;
	r = -EIO;
	if (READ_ONCE(s->tampered))
		goto out_unlock;
	if (addr) {
		/* A share must hold its header and at least one line */
		r = -EINVAL;
		if (amdgpu_spm_share_size(size, s->num_xcc) <
		    sizeof(struct drm_amdgpu_spm_buffer_header) + AMDGPU_SPM_LINE_SIZE)
			goto out_unlock;
		r = -EFAULT;
		if (!access_ok(u64_to_user_ptr(args->dest_buf), size))
			goto out_unlock;
		/* Checked (and pinned, or found pinned) before any wait */
		r = amdgpu_spm_pin_get(&s->pins, addr, size, READ_ONCE(s->cur), &p);
		if (r)
			goto out_unlock;
	}

	/* Wait before changing anything, so that a restart is idempotent */
	if (timeout && READ_ONCE(s->cur) && !READ_ONCE(s->full)) {
		r = spm_wait_full(s, &timeout);
		if (r) {
			args->timeout = timeout;
			goto out_unlock;
		}
		/* Released meanwhile: as if nobody owned the SPM */
		r = -EINVAL;
		if (READ_ONCE(s->dying))
			goto out_unlock;
		r = -EIO;
		if (READ_ONCE(s->tampered))
			goto out_unlock;
	}

	/*
	 * The worker retires the current buffer and installs the new one,
	 * so that buffers that cannot be pinned are written under their mm.
	 * Release waits for @users before it stops the worker, so the
	 * worker always gets to it.
	 */
	mutex_lock(&s->drain_lock);
	s->next = p;
	s->swap = true;
	while (s->swap) {
		mutex_unlock(&s->drain_lock);
		spm_kick(s);
		mutex_lock(&s->drain_lock);
	}
	args->bytes_copied = s->retired_bytes;
	args->has_data_loss = s->retired_loss;
	/* The worker found the registers changed before it got to the swap */
	r = s->tampered ? -EIO : 0;
	mutex_unlock(&s->drain_lock);
	if (r)
		goto out_unlock;

	/*
	 * A buffer that starts the hardware: return once it streams, so that
	 * counting the profiler starts next is not reset by a late start
	 * (while a reset holds the device, the worker retries)
	 */
	if (p && wait_event_killable(s->wq, spm_streaming_or_over(s)))
		r = -EINTR;
	else if (p && READ_ONCE(s->tampered))
		r = -EIO;
	if (r)
		goto out_unlock;
	args->timeout = timeout;

out_unlock:
	mutex_unlock(&s->buf_lock);
	spm_session_put(s);
	return r;
}

/* ---- ioctl ---- */

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
 * struct drm_amdgpu_spm_args is the contract. @bytes_copied and
 * @has_data_loss are outputs and are not looked at.
 */
static int spm_check_args(struct amdgpu_device *adev,
			  const struct drm_amdgpu_spm_args *args)
{
	struct drm_device *dev = adev_to_drm(adev);

	if (memchr_inv(args->reserved, 0, sizeof(args->reserved))) {
		drm_dbg(dev, "spm: reserved words not zero\n");
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
		/* No buffer stops copying, whatever the size says */
		if (!args->dest_buf)
			return 0;
		if (!IS_ALIGNED(args->dest_buf, AMDGPU_SPM_ALIGN) ||
		    !args->buf_size || args->buf_size > AMDGPU_SPM_MAX_BUF_SIZE) {
			drm_dbg(dev, "spm: buffer misaligned, empty or too large\n");
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
	/* The device is going away (amdgpu_spm_fini() ran or runs) */
	if (READ_ONCE(adev->spm.dead))
		return -ENODEV;
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

/* ---- end of an owner ---- */

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
 * the table of @id. Costs two loads for a file that owns nothing.
 *
 * Context: process context; may sleep, when @filp owns an acquisition.
 */
void amdgpu_spm_file_flush(struct amdgpu_device *adev, struct drm_file *filp,
			   fl_owner_t id)
{
	bool still_open = false, looked = false;
	unsigned int i;

	if (!atomic_read(&adev->spm.acquiring))
		return;
	for (i = 0; i < AMDGPU_SPM_MAX_MGR; i++) {
		struct amdgpu_spm_mgr *mgr = &adev->spm.mgr[i];

		if (READ_ONCE(mgr->owner) != filp)
			continue;
		/* close() of one dup() of the fd: the task still holds the file */
		if (!looked) {
			still_open = filp->filp &&
				     iterate_fd(id, 0, spm_fd_is_file, filp->filp);
			looked = true;
		}
		if (still_open)
			return;
		mutex_lock(&mgr->lock);
		if (mgr->sess && mgr->sess->owner == filp &&
		    mgr->sess->owner_id == id)
			spm_release_locked(mgr);
		mutex_unlock(&mgr->lock);
	}
}

/**
 * amdgpu_spm_file_close - @filp goes away
 * @adev: the device
 * @filp: the DRM file
 *
 * Ends any acquisition owned by @filp. Called from postclose.
 *
 * Context: process context; may sleep.
 */
void amdgpu_spm_file_close(struct amdgpu_device *adev, struct drm_file *filp)
{
	unsigned int i;

	if (!atomic_read(&adev->spm.acquiring))
		return;
	for (i = 0; i < AMDGPU_SPM_MAX_MGR; i++) {
		struct amdgpu_spm_mgr *mgr = &adev->spm.mgr[i];

		if (READ_ONCE(mgr->owner) != filp)
			continue;
		mutex_lock(&mgr->lock);
		if (mgr->sess && mgr->sess->owner == filp)
			spm_release_locked(mgr);
		mutex_unlock(&mgr->lock);
	}
}

/* ---- the device ---- */

/**
 * amdgpu_spm_busy - whether any partition's SPM is acquired
 * @adev: the device
 *
 * A partition mode switch is refused while this is true. The XCP manager
 * calls it under its xcp_lock, which ACQUIRE also holds while it counts
 * itself.
 *
 * Return: true if an acquisition exists or is being set up.
 */
bool amdgpu_spm_busy(struct amdgpu_device *adev)
{
	return atomic_read(&adev->spm.acquiring) > 0;
}

/**
 * amdgpu_spm_hw_lost - the RLC lost its SPM programming
 * @adev: the device
 *
 * Called where the RLC is resumed, after a GPU reset and on resume from
 * suspend. The drain workers notice at their next run, drain what the
 * rings hold, program the hardware again once they can reach it, and
 * report the gap as data loss.
 *
 * Context: any, including the reset path; does not sleep and takes no
 * lock.
 */
void amdgpu_spm_hw_lost(struct amdgpu_device *adev)
{
	atomic_inc(&adev->spm.hw_gen);
}

/**
 * amdgpu_spm_init - set up the SPM manager of a device
 * @adev: the device
 * @funcs: the GFX IP's SPM hooks
 *
 * Called from the early_init of GFX IP blocks that support SPM. On other
 * devices the SPM state stays zero: no acquisition, no reservation
 * accounting, nothing to tear down.
 *
 * Return: 0, or -ENOMEM: SPM is then not available on the device.
 */
int amdgpu_spm_init(struct amdgpu_device *adev,
		    const struct amdgpu_spm_funcs *funcs)
{
	unsigned int i;

	spin_lock_init(&adev->spm.arb_lock);
	mutex_init(&adev->spm.gfx_vmid_lock);
	INIT_LIST_HEAD(&adev->spm.leaked);
	adev->spm.nleaked = 0;
	adev->spm.dead = false;
	atomic_set(&adev->spm.acquiring, 0);
	atomic_set(&adev->spm.hw_gen, 0);
	for (i = 0; i < AMDGPU_SPM_MAX_XCC; i++)
		atomic_set(&adev->spm.vmid_writers[i], 0);
	for (i = 0; i < AMDGPU_SPM_MAX_MGR; i++) {
		adev->spm.mgr[i].adev = adev;
		adev->spm.mgr[i].xcp_id = i;
		mutex_init(&adev->spm.mgr[i].lock);
	}
	adev->spm.wq = alloc_workqueue("amdgpu_spm",
				       WQ_UNBOUND | WQ_HIGHPRI | WQ_FREEZABLE, 0);
	if (!adev->spm.wq)
		return -ENOMEM;
	adev->spm.funcs = funcs;
	return 0;
}

/**
 * amdgpu_spm_fini - end every acquisition of a device
 * @adev: the device
 *
 * Called when the driver lets go of the device, before its hardware is
 * torn down. Nothing on devices without SPM.
 *
 * Context: process context; may sleep.
 */
void amdgpu_spm_fini(struct amdgpu_device *adev)
{
	unsigned int i;

	if (!adev->spm.funcs || adev->spm.dead)
		return;
	for (i = 0; i < AMDGPU_SPM_MAX_MGR; i++) {
		struct amdgpu_spm_mgr *mgr = &adev->spm.mgr[i];

		/*
		 * Under the manager's lock, which ACQUIRE checks it under: an
		 * ioctl that got past drm_ioctl()'s unplug check before
		 * drm_dev_unplug() creates no acquisition after this
		 */
		mutex_lock(&mgr->lock);
		WRITE_ONCE(adev->spm.dead, true);
		if (mgr->sess)
			spm_release_locked(mgr);
		mutex_unlock(&mgr->lock);
	}
	/*
	 * No acquisition is left, and none can be made: no worker runs. The
	 * empty table stays until the gfx IP's sw_fini: the RLC still runs,
	 * and its SPM VMID's context points at the table, until hw_fini.
	 */
	destroy_workqueue(adev->spm.wq);
	adev->spm.wq = NULL;
}

/**
 * amdgpu_spm_ring_alloc_gtt - &amdgpu_spm_funcs.ring_alloc for hardware
 * @adev: the device
 * @xcc: logical XCC
 * @size: bytes
 * @ring: filled in
 *
 * A kernel BO in GTT (system memory, CPU-cached, snooped), which the RLC
 * reaches through the SPM VMID's page table with the PTE flags that its
 * GART binding has.
 *
 * Return: 0 or a negative errno.
 */
int amdgpu_spm_ring_alloc_gtt(struct amdgpu_device *adev, u32 xcc, u32 size,
			      struct amdgpu_spm_ring *ring)
{
	struct amdgpu_bo *bo = NULL;
	int r;

	KUNIT_STATIC_STUB_REDIRECT(amdgpu_spm_ring_alloc_gtt, adev, xcc, size, ring);

	r = amdgpu_bo_create_kernel(adev, size, PAGE_SIZE, AMDGPU_GEM_DOMAIN_GTT,
				    &bo, NULL, &ring->cpu_addr);
	if (r)
		return r;
	memset(ring->cpu_addr, 0, size);
	ring->size = size;
	ring->dma_addr = bo->tbo.ttm->dma_address;
	ring->pte_flags = amdgpu_ttm_tt_pte_flags(adev, bo->tbo.ttm,
						  bo->tbo.resource);
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

	KUNIT_STATIC_STUB_REDIRECT(amdgpu_spm_ring_free_gtt, adev, xcc, ring);

	amdgpu_bo_free_kernel(&bo, NULL, &ring->cpu_addr);
	ring->priv = NULL;
}

/**
 * amdgpu_spm_get_stats - counters of an acquisition
 * @adev: the device
 * @xcp_id: partition
 * @stats: filled in
 *
 * For the KUnit tests and the benchmark.
 *
 * Return: 0, or -ENOENT when the partition is not acquired.
 */
int amdgpu_spm_get_stats(struct amdgpu_device *adev, u32 xcp_id,
			 struct amdgpu_spm_stats *stats)
{
	struct amdgpu_spm_mgr *mgr = &adev->spm.mgr[xcp_id];
	int r = -ENOENT;

	mutex_lock(&mgr->lock);
	if (mgr->sess) {
		mutex_lock(&mgr->sess->drain_lock);
		*stats = mgr->sess->stats;
		mutex_unlock(&mgr->sess->drain_lock);
		r = 0;
	}
	mutex_unlock(&mgr->lock);
	return r;
}
