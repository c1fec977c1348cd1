/* SPDX-License-Identifier: MIT */
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

#ifndef __AMDGPU_SPM_H__
#define __AMDGPU_SPM_H__

#include <linux/fs.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/sizes.h>
#include <linux/spinlock.h>
#include <linux/time64.h>
#include <linux/types.h>

#include "amdgpu_spm_drain.h"
#include "amdgpu_spm_vmid.h"

struct amdgpu_device;
struct amdgpu_ring;
struct amdgpu_spm_session;
struct amdgpu_vm;
struct drm_amdgpu_spm_args;
struct drm_file;
struct workqueue_struct;

/* One manager per partition; MAX_XCP in amdgpu_xcp.h */
#define AMDGPU_SPM_MAX_MGR		8
/* Logical XCCs of a device; AMDGPU_MAX_GC_INSTANCES in amdgpu_gfx.h */
#define AMDGPU_SPM_MAX_XCC		8

/* Largest destination buffer accepted by AMDGPU_SPM_OP_SET_DEST_BUF. */
#define AMDGPU_SPM_MAX_BUF_SIZE		SZ_256M
/* Alignment of a destination buffer, of each per-XCC share and of a line. */
#define AMDGPU_SPM_ALIGN		AMDGPU_SPM_LINE_SIZE

/**
 * struct amdgpu_spm_ring - memory of one XCC's SPM ring
 * @cpu_addr: kernel mapping; the first %AMDGPU_SPM_RING_HDR_SIZE bytes hold
 *	the write pointer that the RLC updates, the data and the spill guard
 *	follow.
 * @size: bytes allocated, a multiple of PAGE_SIZE.
 * @dma_addr: DMA address of each page, for the SPM VMID's page table.
 * @pte_flags: flags of the PTEs that map it (those the GART gives it).
 * @priv: owner's handle (the kernel BO on hardware).
 */
struct amdgpu_spm_ring {
	void *cpu_addr;
	u32 size;
	dma_addr_t *dma_addr;
	u64 pte_flags;
	void *priv;
};

/**
 * struct amdgpu_spm_funcs - per-IP SPM hardware hooks
 *
 * The SPM manager calls the register hooks only from its drain worker, in
 * process context, inside drm_dev_enter() and with the reset domain's
 * semaphore taken with down_read_trylock(), never while the device is
 * suspended, and never for an XCC it does not own. They may sleep. Each
 * takes the logical XCC it acts on. Register writes cannot fail, so the
 * register hooks return nothing. The manager touches no register itself,
 * so KUnit can put a register model behind these hooks or the real hooks
 * in front of a model of the registers.
 *
 * @ring_alloc: allocate @size bytes of CPU-cached, GPU-visible memory for
 *	the ring of @xcc and fill in @ring. Called at ACQUIRE, in process
 *	context, with no lock of the reset domain held. Returns 0 or a
 *	negative errno.
 * @ring_free: free memory from @ring_alloc, once the RLC is known not to
 *	write to it any more.
 * @stop: stop sampling on @xcc. Called before anything is reprogrammed.
 * @set_context: program the GFXHUB VM context of @vmid on @xcc for a flat
 *	page table (depth 0) at @pt_base (a value of amdgpu_gmc_pd_addr())
 *	covering GPU pages @first to @last, whose faults are not retried.
 *	The TLB is flushed by the caller (amdgpu_spm_vmid.c).
 * @set_ring: program the ring base (an address in the SPM VMID) and size
 *	of a stopped @xcc; @size is the data size plus the write pointer
 *	header (the spill guard is not part of it). 0 and 0 clear it.
 * @set_vmid: program SPM_VMID of a stopped @xcc: always the SPM VMID,
 *	whose page table maps the rings while the manager owns @xcc and
 *	nothing otherwise (amdgpu_spm_vmid.c).
 * @start: start streaming on a stopped, programmed @xcc: ring mode,
 *	clocks, and a reset that puts the write pointer to 0. Counting itself
 *	is started by the profiler's command stream.
 * @set_rdptr: program the ring read pointer of @xcc, a byte offset into
 *	the data.
 * @ring_intact: whether the ring base and size registers of @xcc still
 *	hold @gpu_addr and @size, as @set_ring wrote them, and SPM_VMID is
 *	still @vmid, as @set_vmid wrote it.
 * @guard: bytes the RLC may write past the end of the data before it wraps
 *	(parts before GC 11.0.1, see amdgpu_spm_drain.c), 0 if none.
 */
struct amdgpu_spm_funcs {
	int (*ring_alloc)(struct amdgpu_device *adev, u32 xcc, u32 size,
			  struct amdgpu_spm_ring *ring);
	void (*ring_free)(struct amdgpu_device *adev, u32 xcc,
			  struct amdgpu_spm_ring *ring);
	void (*stop)(struct amdgpu_device *adev, u32 xcc);
	void (*set_context)(struct amdgpu_device *adev, u32 xcc, u32 vmid,
			    u64 pt_base, u64 first, u64 last);
	void (*set_ring)(struct amdgpu_device *adev, u32 xcc, u64 gpu_addr,
			 u32 size);
	void (*set_vmid)(struct amdgpu_device *adev, u32 xcc, u32 vmid);
	void (*start)(struct amdgpu_device *adev, u32 xcc);
	void (*set_rdptr)(struct amdgpu_device *adev, u32 xcc, u32 rptr);
	bool (*ring_intact)(struct amdgpu_device *adev, u32 xcc, u64 gpu_addr,
			    u32 size, u32 vmid);
	u32 guard;
};

/**
 * struct amdgpu_spm_mgr - SPM of one partition
 * @adev: the device.
 * @xcp_id: the partition (0 on devices without an XCP manager).
 * @lock: serialises ACQUIRE and release of this partition; held across
 *	allocations and while release waits for the drain worker. Never
 *	taken by the reset path.
 * @sess: the acquisition, or NULL; guarded by @lock.
 * @owner: the owner's DRM file, or NULL; written under @lock, read without
 *	it by amdgpu_spm_file_flush() only to compare.
 */
struct amdgpu_spm_mgr {
	struct amdgpu_device *adev;
	u32 xcp_id;
	struct mutex lock; /* see above */
	struct amdgpu_spm_session *sess;
	struct drm_file *owner;
};

/**
 * struct amdgpu_spm - SPM state of a device
 * @funcs: hardware hooks, NULL when the IP has no SPM support.
 * @mgr: one manager per partition.
 * @wq: the drain workers' workqueue (high priority, freezable).
 * @arb_lock: leaf lock, taken from the job submission path (fence
 *	signalling); guards the fields below it.
 * @profiler_xcc_mask: logical XCCs whose SPM the profiler owns; also read
 *	locklessly with READ_ONCE() by amdgpu_spm_xcc_owned().
 * @gfx_users: per logical XCC, graphics VMs holding a VMID reserved for SPM
 *	whose jobs may run on that XCC.
 * @acquiring: acquisitions that exist or are being set up; guarded by the
 *	XCP manager's lock where there is one. A partition switch is refused
 *	while it is non-zero.
 * @vmid_writers: per logical XCC, writers of SPM_VMID outside the manager
 *	between amdgpu_spm_vmid_write_begin() and amdgpu_spm_vmid_write_end();
 *	ACQUIRE waits for them after claiming the XCC and before its worker
 *	programs the VMID.
 * @hw_gen: bumped by amdgpu_spm_hw_lost() when the RLC lost its state
 *	(RLC resume after reset or resume from suspend).
 * @gfx_vmid_lock: serialises %AMDGPU_VM_OP_RESERVE_VMID and
 *	%AMDGPU_VM_OP_UNRESERVE_VMID with each other.
 * @dead: amdgpu_spm_fini() ran: no acquisition can be made any more. Set
 *	under each manager's lock; read with READ_ONCE() outside it.
 * @vmid: the SPM VMID (amdgpu_spm_vmid.c), 0 until it is chosen.
 * @park: the table with no valid PTE that parked contexts point at, from
 *	the gfx IP's sw_init to its sw_fini.
 * @leaked: acquisitions whose release could not give the hardware back in
 *	%amdgpu_spm_release_ms (a resume that failed leaves the device
 *	suspended; a reset that never ends): their rings and page table are
 *	kept, since the RLC may still write them, until amdgpu_spm_vmid_fini()
 *	at sw_fini, after hw_fini disabled the VM contexts. Guarded by
 *	@arb_lock.
 * @nleaked: acquisitions ever put on @leaked, for the tests and the log.
 */
struct amdgpu_spm {
	const struct amdgpu_spm_funcs *funcs;
	struct amdgpu_spm_mgr mgr[AMDGPU_SPM_MAX_MGR];
	struct workqueue_struct *wq;
	spinlock_t arb_lock; /* see above */
	u32 profiler_xcc_mask;
	u32 gfx_users[AMDGPU_SPM_MAX_XCC];
	atomic_t acquiring;
	atomic_t vmid_writers[AMDGPU_SPM_MAX_XCC];
	atomic_t hw_gen;
	struct mutex gfx_vmid_lock; /* see above */
	bool dead;
	u32 vmid;
	struct amdgpu_spm_pt park;
	struct list_head leaked;
	unsigned int nleaked;
};

int amdgpu_spm_init(struct amdgpu_device *adev,
		    const struct amdgpu_spm_funcs *funcs);
void amdgpu_spm_fini(struct amdgpu_device *adev);

int amdgpu_spm_ioctl(struct amdgpu_device *adev, struct drm_file *filp,
		     struct drm_amdgpu_spm_args *args);
void amdgpu_spm_file_flush(struct amdgpu_device *adev, struct drm_file *filp,
			   fl_owner_t id);
void amdgpu_spm_file_close(struct amdgpu_device *adev, struct drm_file *filp);

void amdgpu_spm_hw_lost(struct amdgpu_device *adev);
void amdgpu_spm_free_leaked(struct amdgpu_device *adev);
bool amdgpu_spm_busy(struct amdgpu_device *adev);

int amdgpu_spm_gfx_vmid_reserve(struct amdgpu_device *adev,
				struct drm_file *filp);
void amdgpu_spm_gfx_vmid_unreserve(struct amdgpu_device *adev,
				   struct drm_file *filp);
void amdgpu_spm_gfx_vmid_release(struct amdgpu_device *adev,
				 struct amdgpu_vm *vm);
bool amdgpu_spm_xcc_owned(struct amdgpu_device *adev, u32 xcc);
bool amdgpu_spm_vmid_write_begin(struct amdgpu_device *adev, u32 xcc);
void amdgpu_spm_vmid_write_end(struct amdgpu_device *adev, u32 xcc);
bool amdgpu_spm_ring_writes_vmid(struct amdgpu_ring *ring);

int amdgpu_spm_ring_alloc_gtt(struct amdgpu_device *adev, u32 xcc, u32 size,
			      struct amdgpu_spm_ring *ring);
void amdgpu_spm_ring_free_gtt(struct amdgpu_device *adev, u32 xcc,
			      struct amdgpu_spm_ring *ring);

/* The shortest drain period: 10000 wake-ups per second at most */
#define AMDGPU_SPM_MIN_PERIOD_NS	(100 * NSEC_PER_USEC)
/*
 * How often at most the drain worker reads the ring registers back
 * (&amdgpu_spm_funcs.ring_intact: 4 MMIO reads per XCC). The SPM VMID's
 * page table is what keeps the RLC in the rings; the check only tells the
 * owner that its stream was redirected. The benchmark
 * (amdgpu_spm_bench.spm_bench_check_reads) counts the reads; see
 * profiler.rst, Security, for what they cost.
 */
#define AMDGPU_SPM_CHECK_NS		(10 * NSEC_PER_MSEC)

/* Module parameters amdgpu.spm_* */
extern int amdgpu_spm_paranoid;
extern unsigned int amdgpu_spm_ring_size;
extern unsigned int amdgpu_spm_backstop_ms;
/* Not a parameter: how long release waits for the hardware (tests cut it) */
extern unsigned int amdgpu_spm_release_ms;

/**
 * struct amdgpu_spm_stats - counters of an acquisition, for the tests and
 * the benchmark
 * @wakeups: drain worker runs.
 * @drained: ring bytes consumed, copied or dropped.
 * @laps: times an RLC overwrote data before it was drained.
 * @period_ns: the drain period chosen last.
 */
struct amdgpu_spm_stats {
	u64 wakeups;
	u64 drained;
	u64 laps;
	u64 period_ns;
};

int amdgpu_spm_get_stats(struct amdgpu_device *adev, u32 xcp_id,
			 struct amdgpu_spm_stats *stats);

#endif
