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

#ifndef __AMDGPU_PEER_REG_H__
#define __AMDGPU_PEER_REG_H__

#include <linux/atomic.h>
#include <linux/hashtable.h>
#include <linux/interval_tree.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <linux/workqueue.h>
#include <drm/amd_rdma.h>

struct amdgpu_peer_mgr;

/**
 * struct amdgpu_peer_pin_ops - how the owner of the memory pins and maps it
 *
 * The registration core knows nothing about buffer objects: it shares one
 * pin per (object, DMA device) between registrations and calls these to
 * create and destroy it.
 */
struct amdgpu_peer_pin_ops {
	/**
	 * @pin: pin @obj, take a reference on it and DMA-map all of it for
	 * @dma_dev; return the mapping in *@sgt (DMA addresses only).
	 *
	 * Called from amdgpu_peer_register() with its caller's locks held
	 * (for amdgpu: the VM root and BO reservations) and
	 * &amdgpu_peer_mgr.pin_lock. May sleep. Returns 0 or a negative errno.
	 */
	int (*pin)(struct amdgpu_peer_mgr *mgr, void *obj,
		   struct device *dma_dev, struct sg_table **sgt);
	/**
	 * @unpin: undo @pin: unmap @sgt, unpin @obj and drop the reference.
	 *
	 * Called in process context (a worker or a free-callback flush) with
	 * no core lock held, after the last registration sharing the pin went
	 * away. May sleep.
	 */
	void (*unpin)(struct amdgpu_peer_mgr *mgr, void *obj,
		      struct device *dma_dev, struct sg_table *sgt);
};

/**
 * struct amdgpu_peer_stats - counters for tests and benchmarks
 * @pins: pins (and DMA mappings) created by &amdgpu_peer_pin_ops.pin
 * @unpins: pins destroyed by &amdgpu_peer_pin_ops.unpin
 * @callbacks: free callbacks called
 * @invalidated: registrations detached by amdgpu_peer_invalidate()
 * @visited: interval tree queries made by amdgpu_peer_invalidate()
 * @regs: registrations allocated and not yet freed
 */
struct amdgpu_peer_stats {
	atomic_t pins;
	atomic_t unpins;
	atomic_t callbacks;
	atomic_t invalidated;
	atomic_t visited;
	atomic_t regs;
};

/**
 * struct amdgpu_peer_mgr - shared pins and deferred releases
 *
 * One per provider of peer memory (amdgpu has one for the whole driver).
 */
struct amdgpu_peer_mgr {
	/** @ops: pin backend; set at init. */
	const struct amdgpu_peer_pin_ops *ops;
	/** @wq: runs deferred releases and the backstop callback flush. */
	struct workqueue_struct *wq;
	/** @pin_lock: guards @pins, @pinned and each pin's users count. */
	struct mutex pin_lock;
	/** @pins: shared pins hashed by object; guarded by @pin_lock. */
	DECLARE_HASHTABLE(pins, 7);
	/** @pinned: bytes pinned by shared pins; guarded by @pin_lock. */
	u64 pinned;
	/** @quota: limit for @pinned; new pins beyond it get -ENOSPC. */
	u64 quota;
	/** @stats: counters, see &struct amdgpu_peer_stats. */
	struct amdgpu_peer_stats stats;
};

/**
 * struct amdgpu_peer_owner - the registrations of one address space
 *
 * For amdgpu one per VM: registrations are keyed by the GPU page range of the
 * VM mapping they were found through, and detached when that mapping goes.
 */
struct amdgpu_peer_owner {
	/** @mgr: the manager whose pins the registrations use. */
	struct amdgpu_peer_mgr *mgr;
	/**
	 * @lock: irq-safe; guards @regs, @dying, @tombstones, @dead and each
	 * registration's state, link and put_pending.
	 */
	spinlock_t lock;
	/** @regs: live registrations by key range; guarded by @lock. */
	struct rb_root_cached regs;
	/** @dying: detached, callback not yet called; guarded by @lock. */
	struct list_head dying;
	/** @tombstones: callback done, not yet put; guarded by @lock. */
	struct list_head tombstones;
	/** @dead: set by amdgpu_peer_owner_fini(); guarded by @lock. */
	bool dead;
	/**
	 * @cb_lock: held while free callbacks run, so that a flush returns
	 * only after callbacks another thread started have returned too.
	 */
	struct mutex cb_lock;
	/** @flush_work: backstop that runs the callbacks nobody flushed. */
	struct work_struct flush_work;
};

/**
 * struct amdgpu_peer_reg_args - what amdgpu_peer_register() registers
 * @first: first page of the key range (the mapping the memory was found by)
 * @last: last page of the key range, inclusive
 * @obj: the object to pin, passed to &amdgpu_peer_pin_ops
 * @obj_size: size of @obj in bytes, charged to the pin quota
 * @offset: byte offset in @obj of @va
 * @va: user virtual address asked for
 * @length: length in bytes asked for
 * @pid: the process @va belongs to (a reference is taken)
 * @dma_dev: the peer's DMA device (a reference is taken)
 * @free_cb: the client's free callback, may be NULL
 * @client_priv: argument of @free_cb
 */
struct amdgpu_peer_reg_args {
	u64 first;
	u64 last;
	void *obj;
	u64 obj_size;
	u64 offset;
	u64 va;
	u64 length;
	struct pid *pid;
	struct device *dma_dev;
	void (*free_cb)(void *client_priv);
	void *client_priv;
};

int amdgpu_peer_mgr_init(struct amdgpu_peer_mgr *mgr,
			 const struct amdgpu_peer_pin_ops *ops, u64 quota);
void amdgpu_peer_mgr_flush(struct amdgpu_peer_mgr *mgr);
void amdgpu_peer_mgr_fini(struct amdgpu_peer_mgr *mgr);
bool amdgpu_peer_mgr_obj_pinned(struct amdgpu_peer_mgr *mgr, void *obj);
unsigned long amdgpu_peer_mgr_page_size(struct amdgpu_peer_mgr *mgr,
					void *obj);

void amdgpu_peer_owner_init(struct amdgpu_peer_owner *owner,
			    struct amdgpu_peer_mgr *mgr);
void amdgpu_peer_owner_fini(struct amdgpu_peer_owner *owner);
void amdgpu_peer_owner_flush(struct amdgpu_peer_owner *owner);

int amdgpu_peer_register(struct amdgpu_peer_owner *owner,
			 const struct amdgpu_peer_reg_args *args,
			 struct amd_p2p_info **info);
unsigned int amdgpu_peer_invalidate(struct amdgpu_peer_owner *owner,
				    u64 first, u64 last);
int amdgpu_peer_put(struct amd_p2p_info **info);

unsigned long amdgpu_peer_sgt_page_size(struct sg_table *sgt);

#endif
