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
#include <linux/dma-direction.h>
#include <linux/hashtable.h>
#include <linux/interval_tree.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <linux/wait.h>
#include <linux/workqueue.h>
#include <drm/amd_rdma.h>

struct amdgpu_peer_mgr;

/**
 * struct amdgpu_peer_pin_ops - how the owner of the memory pins and maps it
 *
 * The registration core knows nothing about buffer objects: it shares one
 * pin per (object, DMA device, direction) between registrations and calls
 * these to create and destroy it.
 */
struct amdgpu_peer_pin_ops {
	/**
	 * @pin: pin @obj, take a reference on it and DMA-map all of it for
	 * @dma_dev in direction @dir; return the mapping in *@sgt (DMA
	 * addresses only).
	 *
	 * Called from amdgpu_peer_register() with the caller's locks held
	 * (for amdgpu: the KFD process mutex and the VM root and BO
	 * reservations) and no core lock. May sleep. Returns 0 or a negative
	 * errno.
	 */
	int (*pin)(struct amdgpu_peer_mgr *mgr, void *obj,
		   struct device *dma_dev, enum dma_data_direction dir,
		   struct sg_table **sgt);
	/**
	 * @unpin: undo @pin: unmap @sgt, unpin @obj and drop the reference.
	 *
	 * Called in process context (a worker, a free-callback flush, a
	 * device revocation or amdgpu_peer_register_undo()) with no core
	 * lock and none of the locks held around amdgpu_peer_register(),
	 * after the last registration sharing the pin let go of it. May
	 * take the object's lock; may sleep.
	 */
	void (*unpin)(struct amdgpu_peer_mgr *mgr, void *obj,
		      struct device *dma_dev, enum dma_data_direction dir,
		      struct sg_table *sgt);
};

/*
 * Whether amdgpu_peer_put() can ever wait for a callback running on
 * another thread: without CONFIG_PREEMPT_COUNT atomic context cannot be
 * told apart, and a put never waits.
 */
#define AMDGPU_PEER_PUT_CAN_WAIT	IS_ENABLED(CONFIG_PREEMPT_COUNT)

/**
 * struct amdgpu_peer_stats - counters for tests and benchmarks
 * @pins: pins (and DMA mappings) created by &amdgpu_peer_pin_ops.pin
 * @unpins: pins destroyed by &amdgpu_peer_pin_ops.unpin
 * @callbacks: free callbacks called
 * @invalidated: registrations detached by amdgpu_peer_invalidate()
 * @visited: interval tree queries made by amdgpu_peer_invalidate()
 * @regs: registrations allocated and not yet freed
 * @tombstones: registrations whose callback ran (or that a revocation
 *	ended) and that were not put
 * @refused: gets refused (-EAGAIN) because their client had
 *	&amdgpu_peer_mgr.max_tombstones tombstones, none of them
 *	&amdgpu_peer_mgr.tombstone_min_ns old
 * @refusal_warnings: warnings those refusals printed
 * @reclaimed: tombstones freed before their put, to make room under their
 *	client's bound
 * @clients: client records allocated and not yet freed
 * @revoked: registrations ended by a device revocation
 * @allocs: memory allocations of the core: registrations, pins, their
 *	segment tables and owners
 * @seg_visits: pin segments looked at to build registrations' tables
 * @lock_taken: acquisitions of &amdgpu_peer_mgr.lock, by any path
 * @unknown_puts: puts of a registration the core no longer knows
 * @put_waits: puts that waited for a callback running on another thread
 * @retries: amdgpu_peer_retry() answers that the addresses are not good
 * @might_wait: times a thread told lockdep it may wait for a callback
 * @section_max: most entries (registrations and pins) that one section of
 *	a walk under &amdgpu_peer_mgr.lock looked at; a test may reset it
 * @section_max_ns: the longest such section, in nanoseconds
 */
struct amdgpu_peer_stats {
	atomic_t pins;
	atomic_t unpins;
	atomic_t callbacks;
	atomic_t invalidated;
	atomic_t visited;
	atomic_t regs;
	atomic_t tombstones;
	atomic_t refused;
	atomic_t refusal_warnings;
	atomic_t reclaimed;
	atomic_t clients;
	atomic_t revoked;
	atomic_t allocs;
	atomic_t seg_visits;
	atomic_t lock_taken;
	atomic_t unknown_puts;
	atomic_t put_waits;
	atomic_t retries;
	atomic_t might_wait;
	atomic_t section_max;
	atomic64_t section_max_ns;
};

/*
 * Entries (registrations and pins) that a walk of many looks at in one
 * section under &amdgpu_peer_mgr.lock, with interrupts off, before it
 * drops the lock and takes it again.
 */
#define AMDGPU_PEER_BATCH	64

/**
 * struct amdgpu_peer_epochs - wait for the callbacks begun before a point
 *
 * Each callback is counted, from the moment it begins until its unpin is
 * done, in the epoch current when it began. A waiter makes the other epoch
 * current and waits for the count of the old one to drop to zero: callbacks
 * begun after that cannot hold it up. Waiters take turns (@lock), so that
 * an epoch is only ever made current again once it has drained.
 */
struct amdgpu_peer_epochs {
	/** @count: callbacks of each epoch running; guarded by the mgr lock. */
	unsigned int count[2];
	/** @cur: the epoch new callbacks count in; guarded by the mgr lock. */
	unsigned int cur;
	/** @lock: held by a waiter from the switch to the end of its wait. */
	struct mutex lock;
};

/**
 * struct amdgpu_peer_mgr - shared pins, registrations and deferred releases
 *
 * One per provider of peer memory (amdgpu has one for the whole driver). It
 * lives as long as the provider module: a late put only ever touches the
 * manager and the registration, never a device, VM or process.
 */
struct amdgpu_peer_mgr {
	/** @ops: pin backend; set at init. */
	const struct amdgpu_peer_pin_ops *ops;
	/** @wq: runs deferred releases and the backstop callback flushes. */
	struct workqueue_struct *wq;
	/**
	 * @lock: irq-safe, a leaf; guards everything below, every owner's
	 * tree, lists and counters, every device's pins and quota, every
	 * pin's users and registrations, and every registration's state.
	 */
	spinlock_t lock;
	/** @pins: shared pins hashed by object; guarded by @lock. */
	DECLARE_HASHTABLE(pins, 8);
	/**
	 * @regs: every registration not yet freed or released, hashed by
	 * its &struct amd_p2p_info, so that a put can tell a registration
	 * it no longer knows without touching it; guarded by @lock.
	 */
	DECLARE_HASHTABLE(regs, 10);
	/**
	 * @clients: a record per peer DMA device that has registrations or
	 * tombstones, hashed by the device; guarded by @lock.
	 */
	DECLARE_HASHTABLE(clients, 6);
	/** @tombstones: every tombstone not yet freed; guarded by @lock. */
	struct list_head tombstones;
	/**
	 * @max_tombstones: tombstones of callbacks one client (peer DMA
	 * device) may have: a get with a free callback of a client that has
	 * that many first frees its oldest tombstones that are at least
	 * @tombstone_min_ns old, and fails with -EAGAIN if none is. 0 means
	 * no limit: a tombstone is then freed only by its put (or when the
	 * manager goes). Set before the first registration.
	 */
	unsigned int max_tombstones;
	/**
	 * @tombstone_min_ns: how long after its callback returned a
	 * tombstone is kept at least, whatever the bound: a put within that
	 * time releases it and no other registration. Set before the first
	 * registration.
	 */
	u64 tombstone_min_ns;
	/**
	 * @now: the clock tombstones are aged by, in nanoseconds;
	 * ktime_get_ns() when NULL. Called under @lock. Tests only.
	 */
	u64 (*now)(struct amdgpu_peer_mgr *mgr);
	/**
	 * @cbs: callbacks begun and not done, by epoch, for
	 * amdgpu_peer_mgr_synchronize().
	 */
	struct amdgpu_peer_epochs cbs;
	/**
	 * @running: registrations whose free callback is being called;
	 * guarded by @lock.
	 */
	struct list_head running;
	/** @cb_wq: woken when a callback or a registration finishes. */
	wait_queue_head_t cb_wq;
	/**
	 * @no_backstop: do not queue the backstop flush from
	 * amdgpu_peer_invalidate(), so that tests see a path that forgot
	 * to flush. Tests only.
	 */
	bool no_backstop;
	/**
	 * @between_sections: called between two sections of a device walk,
	 * without the lock, so that tests change the lists there. Tests
	 * only.
	 */
	void (*between_sections)(struct amdgpu_peer_mgr *mgr);
	/**
	 * @reg_alloc: allocates the zeroed memory of a registration, and
	 * @reg_free frees it, so that a test decides where registrations are
	 * placed (e.g. at the address of one freed before). kzalloc() and
	 * kfree() when NULL. Tests only.
	 */
	void *(*reg_alloc)(struct amdgpu_peer_mgr *mgr, size_t size);
	/** @reg_free: see @reg_alloc. */
	void (*reg_free)(struct amdgpu_peer_mgr *mgr, void *mem);
	/** @stats: counters, see &struct amdgpu_peer_stats. */
	struct amdgpu_peer_stats stats;
};

/**
 * struct amdgpu_peer_dev - the memory of one provider device
 *
 * For amdgpu one per GPU. Its pins can be revoked together (hot unplug) or
 * its revocable registrations invalidated together (GPU reset), and it
 * carries the pin quota of that device.
 */
struct amdgpu_peer_dev {
	/** @mgr: the manager. */
	struct amdgpu_peer_mgr *mgr;
	/** @pins: pins of this device's memory; guarded by &mgr->lock. */
	struct list_head pins;
	/** @limit: most bytes registrations may be charged. */
	u64 limit;
	/** @charged: bytes charged now; guarded by &mgr->lock. */
	u64 charged;
	/**
	 * @busy: registrations in progress, pins waiting on the undo list
	 * of a failed one, and callbacks running on this device's memory;
	 * guarded by &mgr->lock.
	 */
	unsigned int busy;
	/** @dead: revoked; nothing new is pinned; guarded by &mgr->lock. */
	bool dead;
	/**
	 * @walk_lock: serialises amdgpu_peer_dev_invalidate() and
	 * amdgpu_peer_dev_revoke(), which walk @pins in sections.
	 */
	struct mutex walk_lock;
	/**
	 * @walk_gen: the generation of the last walk: the pins and
	 * registrations it looked at carry it; guarded by &mgr->lock.
	 */
	unsigned int walk_gen;
};

/**
 * struct amdgpu_peer_owner - the registrations found through one address
 * space
 *
 * For amdgpu one per VM, created at the VM's first registration:
 * registrations are keyed by the GPU page range of the VM mapping they were
 * found through, and detached when that mapping goes. Only live and dying
 * registrations point to their owner, so the owner can go with its VM while
 * persistent registrations and tombstones stay until they are put (or, for
 * a tombstone of a callback, freed under its client's bound).
 */
struct amdgpu_peer_owner {
	/** @mgr: the manager. */
	struct amdgpu_peer_mgr *mgr;
	/** @regs: live registrations by key range; guarded by &mgr->lock. */
	struct rb_root_cached regs;
	/**
	 * @dying: detached, callback not started, in the order they were
	 * detached; guarded by &mgr->lock.
	 */
	struct list_head dying;
	/** @dying_seq: registrations ever detached; guarded by &mgr->lock. */
	u64 dying_seq;
	/**
	 * @cbs: callbacks of this owner's registrations begun and not done,
	 * by epoch, for amdgpu_peer_owner_flush().
	 */
	struct amdgpu_peer_epochs cbs;
	/** @dead: being destroyed; guarded by &mgr->lock. */
	bool dead;
	/** @flush_work: backstop that runs the callbacks nobody flushed. */
	struct work_struct flush_work;
};

/**
 * struct amdgpu_peer_reg_args - what amdgpu_peer_register() registers
 * @first: first page of the key range (the mapping the memory was found by)
 * @last: last page of the key range, inclusive
 * @dev: the provider device of @obj; only needed with @may_pin
 * @obj: the object to pin, passed to &amdgpu_peer_pin_ops
 * @obj_size: size of @obj in bytes
 * @offset: byte offset in @obj of @va
 * @va: user virtual address asked for
 * @length: length in bytes asked for; charged to the device's quota
 * @pid: the process @va belongs to (a reference is taken)
 * @dma_dev: the peer's DMA device (a reference is taken)
 * @dir: DMA direction the peer may use
 * @free_cb: the client's free callback; NULL asks for persistent pages
 * @client_priv: argument of @free_cb
 * @may_pin: the caller holds the object's lock and may create a pin;
 *	without it, only an existing pin is shared
 */
struct amdgpu_peer_reg_args {
	u64 first;
	u64 last;
	struct amdgpu_peer_dev *dev;
	void *obj;
	u64 obj_size;
	u64 offset;
	u64 va;
	u64 length;
	struct pid *pid;
	struct device *dma_dev;
	enum dma_data_direction dir;
	void (*free_cb)(void *client_priv);
	void *client_priv;
	bool may_pin;
};

int amdgpu_peer_mgr_init(struct amdgpu_peer_mgr *mgr,
			 const struct amdgpu_peer_pin_ops *ops);
void amdgpu_peer_mgr_synchronize(struct amdgpu_peer_mgr *mgr);
void amdgpu_peer_mgr_fini(struct amdgpu_peer_mgr *mgr);
bool amdgpu_peer_mgr_obj_pinned(struct amdgpu_peer_mgr *mgr, void *obj);

void amdgpu_peer_dev_init(struct amdgpu_peer_mgr *mgr,
			  struct amdgpu_peer_dev *dev, u64 limit);
unsigned int amdgpu_peer_dev_invalidate(struct amdgpu_peer_dev *dev);
void amdgpu_peer_dev_revoke(struct amdgpu_peer_dev *dev);

struct amdgpu_peer_owner *amdgpu_peer_owner_create(struct amdgpu_peer_mgr *mgr);
void amdgpu_peer_owner_destroy(struct amdgpu_peer_owner *owner);
void amdgpu_peer_owner_flush(struct amdgpu_peer_owner *owner);
bool amdgpu_peer_owner_idle(struct amdgpu_peer_owner *owner);

#ifdef CONFIG_LOCKDEP
/* Held while a free callback runs: for tests that check it is */
extern struct lockdep_map amdgpu_peer_cb_map;
#endif

/*
 * amdgpu_peer_register() without &amdgpu_peer_reg_args.may_pin: no pin
 * exists yet; take the object's lock and call again with may_pin.
 */
#define AMDGPU_PEER_NEED_PIN	1

int amdgpu_peer_register(struct amdgpu_peer_owner *owner,
			 const struct amdgpu_peer_reg_args *args,
			 struct amd_p2p_info **info, struct list_head *undo);
void amdgpu_peer_register_undo(struct amdgpu_peer_mgr *mgr,
			       struct list_head *undo);
unsigned int amdgpu_peer_invalidate(struct amdgpu_peer_owner *owner,
				    u64 first, u64 last);
int amdgpu_peer_put(struct amdgpu_peer_mgr *mgr, struct amd_p2p_info **info);
bool amdgpu_peer_retry(struct amdgpu_peer_mgr *mgr,
		       const struct amd_p2p_info *info);

#endif
