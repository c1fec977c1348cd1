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
#include <linux/mutex.h>
#include <linux/sizes.h>
#include <linux/spinlock.h>
#include <linux/types.h>

struct amdgpu_device;
struct amdgpu_spm_session;
struct drm_amdgpu_spm_args;
struct drm_file;

/* One manager per partition; MAX_XCP in amdgpu_xcp.h */
#define AMDGPU_SPM_MAX_MGR		8
/* Logical XCCs of a device; AMDGPU_MAX_GC_INSTANCES in amdgpu_gfx.h */
#define AMDGPU_SPM_MAX_XCC		8

/* Bytes at the start of the ring that hold the hardware write pointer */
#define AMDGPU_SPM_RING_HDR_SIZE	32
/* Largest destination buffer accepted by AMDGPU_SPM_OP_SET_DEST_BUF. */
#define AMDGPU_SPM_MAX_BUF_SIZE		SZ_256M
/* Alignment of a destination buffer, of each per-XCC share and of a line. */
#define AMDGPU_SPM_ALIGN		32
/* The RLC writes and the manager copies in units of this many bytes */
#define AMDGPU_SPM_LINE_SIZE		AMDGPU_SPM_ALIGN

/* SPM_VMID value the RLC resets to, meaning "no VMID selected" */
#define AMDGPU_SPM_VMID_NONE		0xf

/**
 * struct amdgpu_spm_ring - memory of one XCC's SPM ring
 * @cpu_addr: kernel mapping; the first %AMDGPU_SPM_RING_HDR_SIZE bytes hold
 *	the write pointer that the RLC updates, the data follows.
 * @gpu_addr: address the RLC writes to (GART address, VMID 0).
 * @size: bytes allocated, header and overrun guard included.
 * @priv: owner's handle (the kernel BO on hardware).
 */
struct amdgpu_spm_ring {
	void *cpu_addr;
	u64 gpu_addr;
	u32 size;
	void *priv;
};

/**
 * struct amdgpu_spm_funcs - per-IP SPM hardware hooks
 *
 * Every hook takes the logical XCC instance it acts on and is called by the
 * SPM manager in process context with the manager's locks held; it may sleep
 * (register writes on SR-IOV go through the KIQ). The manager never touches
 * registers itself, so KUnit can put a fake RLC behind this table. Hooks
 * that return int return 0 or a negative errno; on error the manager undoes
 * every earlier step of the same operation.
 *
 * @ring_alloc: allocate @size bytes of CPU-cached, GPU-visible memory for
 *	the ring of @xcc and fill in @ring. Called at ACQUIRE.
 * @ring_free: free memory from @ring_alloc. Called at release.
 * @set_vmid: program SPM_VMID of @xcc. Called with 0 (the ring is reached
 *	through GART) at ACQUIRE and with %AMDGPU_SPM_VMID_NONE at release.
 * @set_ring: program ring base, size and interrupt threshold of @xcc.
 *	@size excludes the overrun guard.
 * @set_rdptr: program the ring read pointer of @xcc, a byte offset into the
 *	data area. Also called from the drain worker, under drm_dev_enter()
 *	and a read lock of the reset domain.
 * @start: start sampling on @xcc. The RLC restarts at write pointer 0.
 * @stop: stop sampling on @xcc. Must not fail.
 * @irq_get: enable the RLC SPM interrupt of @xcc (amdgpu_irq_get()).
 * @irq_put: disable it again.
 * @overrun_guard: non-zero on parts before GC 11.0.1, whose RLC may write a
 *	whole segment past the end of the ring before wrapping: the number of
 *	bytes it may write past the end. The manager allocates them after the
 *	ring and never reads beyond the write pointer the RLC reported.
 */
struct amdgpu_spm_funcs {
	int (*ring_alloc)(struct amdgpu_device *adev, u32 xcc, u32 size,
			  struct amdgpu_spm_ring *ring);
	void (*ring_free)(struct amdgpu_device *adev, u32 xcc,
			  struct amdgpu_spm_ring *ring);
	int (*set_vmid)(struct amdgpu_device *adev, u32 xcc, u32 vmid);
	int (*set_ring)(struct amdgpu_device *adev, u32 xcc, u64 gpu_addr,
			u32 size);
	int (*set_rdptr)(struct amdgpu_device *adev, u32 xcc, u32 rptr);
	int (*start)(struct amdgpu_device *adev, u32 xcc);
	void (*stop)(struct amdgpu_device *adev, u32 xcc);
	int (*irq_get)(struct amdgpu_device *adev, u32 xcc);
	void (*irq_put)(struct amdgpu_device *adev, u32 xcc);
	u32 overrun_guard;
};

/**
 * struct amdgpu_spm_mgr - SPM of one partition
 * @adev: the device.
 * @xcp_id: the partition (0 on devices without an XCP manager).
 * @lock: serialises ACQUIRE and release of this partition.
 * @sess: the acquisition, or NULL; guarded by @lock.
 */
struct amdgpu_spm_mgr {
	struct amdgpu_device *adev;
	u32 xcp_id;
	struct mutex lock; /* see above */
	struct amdgpu_spm_session *sess;
};

/**
 * struct amdgpu_spm - SPM state of a device
 * @funcs: hardware hooks, NULL when the IP has no SPM support.
 * @mgr: one manager per partition.
 * @arb_lock: leaf lock, taken from the job submission path (fence
 *	signalling) and from the interrupt handler; guards the fields below.
 * @profiler_xcc_mask: logical XCCs whose SPM the profiler owns; also read
 *	locklessly with READ_ONCE() by amdgpu_spm_xcc_owned().
 * @gfx_users: graphics VMs holding a VMID reserved for SPM on GFXHUB(0).
 * @xcc_sess: acquisition owning each XCC, for interrupt routing.
 * @acquired: number of acquisitions; a partition switch is refused while
 *	it is non-zero.
 * @vmid_writers: per logical XCC, writers of SPM_VMID outside the manager
 *	between amdgpu_spm_vmid_write_begin() and amdgpu_spm_vmid_write_end();
 *	ACQUIRE waits for them after claiming the XCC and before it programs
 *	the VMID.
 */
struct amdgpu_spm {
	const struct amdgpu_spm_funcs *funcs;
	struct amdgpu_spm_mgr mgr[AMDGPU_SPM_MAX_MGR];
	spinlock_t arb_lock; /* see above */
	u32 profiler_xcc_mask;
	u32 gfx_users;
	struct amdgpu_spm_session *xcc_sess[AMDGPU_SPM_MAX_XCC];
	atomic_t acquired;
	atomic_t vmid_writers[AMDGPU_SPM_MAX_XCC];
};

void amdgpu_spm_init(struct amdgpu_device *adev);
void amdgpu_spm_fini(struct amdgpu_device *adev);

int amdgpu_spm_ioctl(struct amdgpu_device *adev, struct drm_file *filp,
		     struct drm_amdgpu_spm_args *args);
void amdgpu_spm_file_flush(struct amdgpu_device *adev, struct drm_file *filp,
			   fl_owner_t id);
void amdgpu_spm_file_close(struct amdgpu_device *adev, struct drm_file *filp);

void amdgpu_spm_irq(struct amdgpu_device *adev, u32 xcc);
void amdgpu_spm_suspend(struct amdgpu_device *adev);
void amdgpu_spm_resume(struct amdgpu_device *adev);
bool amdgpu_spm_busy(struct amdgpu_device *adev);

int amdgpu_spm_gfx_vmid_get(struct amdgpu_device *adev);
void amdgpu_spm_gfx_vmid_put(struct amdgpu_device *adev);
bool amdgpu_spm_xcc_owned(struct amdgpu_device *adev, u32 xcc);
bool amdgpu_spm_vmid_write_begin(struct amdgpu_device *adev, u32 xcc);
void amdgpu_spm_vmid_write_end(struct amdgpu_device *adev, u32 xcc);

int amdgpu_spm_ring_alloc_gtt(struct amdgpu_device *adev, u32 xcc, u32 size,
			      struct amdgpu_spm_ring *ring);
void amdgpu_spm_ring_free_gtt(struct amdgpu_device *adev, u32 xcc,
			      struct amdgpu_spm_ring *ring);

/* Module parameters amdgpu.spm_paranoid, spm_ring_size, spm_backstop_ms */
extern int amdgpu_spm_paranoid;
extern unsigned int amdgpu_spm_ring_size;
extern unsigned int amdgpu_spm_backstop_ms;

/* Only built with CONFIG_DRM_AMDGPU_KUNIT_TEST, for the benchmark */
int amdgpu_spm_test_stats(struct amdgpu_device *adev, u32 xcp_id,
			  u64 *wakeups, u64 *drained);

#endif
