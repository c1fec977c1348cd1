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
 * DOC: peer memory registrations
 *
 * The core behind &struct amd_rdma_interface. It knows nothing about buffer
 * objects: an owner (for amdgpu, a VM) holds registrations keyed by a page
 * range (the VM mapping a registration was found through), a device (a GPU)
 * holds the pins of its memory and their quota, and the manager shares one
 * pin per (object, DMA device, direction) between registrations.
 *
 * Every state change happens under the manager's irq-safe spinlock. A
 * registration is in one of these states:
 *
 * - LIVE: in its owner's interval tree, pinned. amdgpu_peer_invalidate()
 *   (called by the path that removes the mapping, under that path's locks)
 *   moves a registration with a free callback to its owner's dying list,
 *   DYING, and one without (persistent) out of the owner, DETACHED.
 * - DETACHED: persistent, its mapping gone, still pinned and mapped until
 *   the client puts it. Only a device revocation ends it otherwise.
 * - DYING: amdgpu_peer_owner_flush(), called by the same path after it
 *   dropped its locks (or the backstop worker), takes it off the list,
 *   IN_CALLBACK, and calls the free callback without any core lock. When
 *   the callback returns, the pin is dropped and the registration becomes a
 *   TOMBSTONE, or is freed if the client put it meanwhile.
 * - TOMBSTONE: nothing but its own allocation: the &struct amd_p2p_info and
 *   its table stay readable until the client puts it, at any time and in
 *   any context. The manager keeps at most &amdgpu_peer_mgr.max_tombstones
 *   of them and frees the oldest beyond that, for clients that never put
 *   after the callback. A client cannot be told apart from one that will
 *   put later, and a put names a registration by its address only: once
 *   that memory went back to the allocator it may be a new registration's.
 *   So only the oldest tombstones are freed, and the limit is what bounds
 *   both the memory of clients that never put and the delay of a late put.
 * - RELEASED: put (or reclaimed). The sleeping part of the release runs on
 *   the manager's workqueue, so amdgpu_peer_put() blocks only for a
 *   callback running on another thread.
 *
 * A put of a LIVE, DETACHED or DYING registration releases it without a
 * callback; a put during the callback is recorded and honoured when the
 * callback returns, and, where it may sleep and is not itself inside a
 * callback, waits for that (the client frees what its callback uses once
 * its put returned). A revocation starts many callbacks at once and calls
 * them one by one: one put before it was called is not called. A second
 * put during the callback is ignored.
 * Every registration that is not RELEASED is in the manager's hash of
 * registrations, so a put of one the core no longer knows (reclaimed, or
 * put twice) is recognised without touching it and returns 0.
 */

#include <linux/device.h>
#include <linux/lockdep.h>
#include <linux/pid.h>
#include <linux/rcupdate.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>
#include <linux/overflow.h>
#include <kunit/static_stub.h>
#include <kunit/visibility.h>

#include "amdgpu_peer_reg.h"

#ifdef CONFIG_LOCKDEP
/*
 * Lockdep's view of the free callbacks: held while one runs with the
 * unpin after it, and taken and dropped at once by every path that may
 * wait for that (a put, a flush, a synchronize, a revocation), as the
 * mmu_notifier invalidation map and dma_fence_begin_signalling() are. A
 * thread that may wait for a callback while it holds a lock that some
 * callback (or the unpin) takes is a lockdep report the first time both
 * have happened, whether or not that wait had to happen, instead of a
 * hang the day they race. Its wait type is sleeping, so a wait where
 * sleeping is not allowed (a spinlock_t on PREEMPT_RT, an RCU read-side
 * section) is reported too. It is one map for every manager: a callback
 * of one manager that puts into another is reported (amdgpu has one).
 */
struct lockdep_map amdgpu_peer_cb_map = {
	.name = "amdgpu_peer_callback",
	.key = (void *)&amdgpu_peer_cb_map,
	.wait_type_inner = LD_WAIT_SLEEP,
};
#endif

/* This thread may now wait for any free callback to return */
static void amdgpu_peer_might_wait_cb(void)
{
	lock_map_acquire(&amdgpu_peer_cb_map);
	lock_map_release(&amdgpu_peer_cb_map);
}

enum amdgpu_peer_reg_state {
	AMDGPU_PEER_LIVE,
	AMDGPU_PEER_DETACHED,
	AMDGPU_PEER_DYING,
	AMDGPU_PEER_IN_CALLBACK,
	AMDGPU_PEER_TOMBSTONE,
	AMDGPU_PEER_RELEASED,
};

/* Merged DMA segments stay below what a scatterlist entry can describe. */
#define AMDGPU_PEER_MAX_SEG	BIT_ULL(31)

/* One DMA-contiguous run of a pin; @end is its end offset in the object. */
struct amdgpu_peer_seg {
	dma_addr_t addr;
	u64 end;
};

/*
 * A pin and DMA mapping of one object for one DMA device and direction,
 * shared by all registrations of that triple. Everything but @segs, @nsegs
 * and the immutable keys is guarded by the manager's lock, but @dev_link
 * while the pin is on the undo list of a failed registration, which only
 * that registration's caller touches.
 */
struct amdgpu_peer_pin {
	struct hlist_node node;		/* in mgr->pins while users > 0 */
	/* in dev->pins while users > 0; then on a list of pins to unpin */
	struct list_head dev_link;
	struct list_head regs;		/* registrations holding it */
	struct amdgpu_peer_dev *dev;
	void *obj;
	struct device *dma_dev;
	enum dma_data_direction dir;
	struct sg_table *sgt;
	unsigned int users;
	unsigned int nsegs;
	struct amdgpu_peer_seg *segs;
};

struct amdgpu_peer_reg {
	struct amd_p2p_info info;
	struct amdgpu_peer_mgr *mgr;
	/* in mgr->regs unless RELEASED */
	struct hlist_node hnode;
	/* LIVE, DYING and IN_CALLBACK only */
	struct amdgpu_peer_owner *owner;
	/* until the pin is dropped; then NULL */
	struct amdgpu_peer_pin *pin;
	/* in owner->regs while LIVE */
	struct interval_tree_node it;
	/* on owner->dying while DYING, on mgr->tombstones while TOMBSTONE */
	struct list_head link;
	/* on pin->regs while it holds the pin */
	struct list_head pin_link;
	enum amdgpu_peer_reg_state state;
	bool put_pending;
	/* a put waits for the callback, and frees the registration after it */
	bool put_waits;
	/* IN_CALLBACK: the callback is being called, by @cb_task */
	bool cb_started;
	struct task_struct *cb_task;
	/* bytes charged to pin->dev, returned at put, callback or revoke */
	u64 charge;
	void (*free_cb)(void *client_priv);
	void *client_priv;
	struct work_struct release_work;
	struct sg_table table;
	struct scatterlist sgl[];
};

static void amdgpu_peer_lock(struct amdgpu_peer_mgr *mgr, unsigned long *flags)
	__acquires(&mgr->lock)
{
	spin_lock_irqsave(&mgr->lock, *flags);
	atomic_inc(&mgr->stats.lock_taken);
}

static void amdgpu_peer_unlock(struct amdgpu_peer_mgr *mgr,
			       unsigned long flags)
	__releases(&mgr->lock)
{
	spin_unlock_irqrestore(&mgr->lock, flags);
}

static struct amdgpu_peer_pin *
amdgpu_peer_pin_find_locked(struct amdgpu_peer_mgr *mgr, void *obj,
			    struct device *dma_dev,
			    enum dma_data_direction dir)
{
	struct amdgpu_peer_pin *pin;

	lockdep_assert_held(&mgr->lock);
	hash_for_each_possible(mgr->pins, pin, node, (unsigned long)obj)
		if (pin->obj == obj && pin->dma_dev == dma_dev &&
		    pin->dir == dir)
			return pin;
	return NULL;
}

/* Drop a user; returns the pin if that was the last one, for destroy. */
static struct amdgpu_peer_pin *
amdgpu_peer_pin_unuse_locked(struct amdgpu_peer_mgr *mgr,
			     struct amdgpu_peer_pin *pin)
{
	lockdep_assert_held(&mgr->lock);
	if (--pin->users)
		return NULL;
	hash_del(&pin->node);
	list_del_init(&pin->dev_link);
	return pin;
}

static void amdgpu_peer_pin_destroy(struct amdgpu_peer_mgr *mgr,
				    struct amdgpu_peer_pin *pin)
{
	might_sleep();
	mgr->ops->unpin(mgr, pin->obj, pin->dma_dev, pin->dir, pin->sgt);
	atomic_inc(&mgr->stats.unpins);
	put_device(pin->dma_dev);
	kvfree(pin->segs);
	kfree(pin);
}

/*
 * Record the DMA-contiguous runs of a pin with their end offsets, so that a
 * registration's table is built with a binary search instead of walks over
 * every segment of the object.
 */
static int amdgpu_peer_pin_segs(struct amdgpu_peer_mgr *mgr,
				struct amdgpu_peer_pin *pin)
{
	struct amdgpu_peer_seg *segs;
	struct scatterlist *s;
	dma_addr_t next = 0;
	u64 run = 0, pos = 0;
	unsigned int n = 0;
	int i;

	/* First count the runs, then fill them in. */
	for_each_sgtable_dma_sg(pin->sgt, s, i) {
		if (!n || sg_dma_address(s) != next ||
		    run + sg_dma_len(s) > AMDGPU_PEER_MAX_SEG) {
			n++;
			run = 0;
		}
		run += sg_dma_len(s);
		next = sg_dma_address(s) + sg_dma_len(s);
	}
	if (!n)
		return -EFAULT;
	segs = kvmalloc_array(n, sizeof(*segs), GFP_KERNEL);
	if (!segs)
		return -ENOMEM;
	atomic_inc(&mgr->stats.allocs);

	n = 0;
	run = 0;
	for_each_sgtable_dma_sg(pin->sgt, s, i) {
		if (!n || sg_dma_address(s) != next ||
		    run + sg_dma_len(s) > AMDGPU_PEER_MAX_SEG) {
			segs[n].addr = sg_dma_address(s);
			n++;
			run = 0;
		}
		run += sg_dma_len(s);
		pos += sg_dma_len(s);
		segs[n - 1].end = pos;
		next = sg_dma_address(s) + sg_dma_len(s);
	}
	pin->segs = segs;
	pin->nsegs = n;
	return 0;
}

/*
 * Create the pin of (@args->obj, @args->dma_dev, @args->dir). The caller
 * holds the object's lock, so nobody else creates the same pin meanwhile.
 * Returns it with one user and a busy count on the device, both the
 * caller's. A pin made and then given up goes on @undo.
 */
static struct amdgpu_peer_pin *
amdgpu_peer_pin_create(struct amdgpu_peer_mgr *mgr,
		       const struct amdgpu_peer_reg_args *args,
		       struct list_head *undo)
{
	struct amdgpu_peer_dev *dev = args->dev;
	struct amdgpu_peer_pin *pin;
	unsigned long flags;
	int r;

	if (WARN_ON(!dev || dev->mgr != mgr))
		return ERR_PTR(-EINVAL);

	amdgpu_peer_lock(mgr, &flags);
	r = dev->dead ? -ENODEV : 0;
	if (!r)
		dev->busy++;
	amdgpu_peer_unlock(mgr, flags);
	if (r)
		return ERR_PTR(r);

	pin = kzalloc(sizeof(*pin), GFP_KERNEL);
	if (!pin) {
		r = -ENOMEM;
		goto err_busy;
	}
	atomic_inc(&mgr->stats.allocs);
	r = mgr->ops->pin(mgr, args->obj, args->dma_dev, args->dir, &pin->sgt);
	if (r)
		goto err_free;
	pin->obj = args->obj;
	pin->dma_dev = get_device(args->dma_dev);
	pin->dir = args->dir;
	pin->dev = dev;
	pin->users = 1;
	INIT_LIST_HEAD(&pin->regs);
	INIT_LIST_HEAD(&pin->dev_link);
	atomic_inc(&mgr->stats.pins);
	r = amdgpu_peer_pin_segs(mgr, pin);
	if (r)
		goto err_unpin;

	amdgpu_peer_lock(mgr, &flags);
	if (dev->dead) {
		/* Revoked while we pinned: it waits for us (busy). */
		amdgpu_peer_unlock(mgr, flags);
		r = -ENODEV;
		goto err_unpin;
	}
	hash_add(mgr->pins, &pin->node, (unsigned long)pin->obj);
	list_add_tail(&pin->dev_link, &dev->pins);
	amdgpu_peer_unlock(mgr, flags);
	return pin;

err_unpin:
	/*
	 * Not here: the caller holds the object's lock, which unpin takes.
	 * The device stays busy until amdgpu_peer_register_undo() unpinned
	 * it, so that a revocation waits for that.
	 */
	list_add_tail(&pin->dev_link, undo);
	return ERR_PTR(r);
err_free:
	kfree(pin);
err_busy:
	amdgpu_peer_lock(mgr, &flags);
	dev->busy--;
	amdgpu_peer_unlock(mgr, flags);
	wake_up_all(&mgr->cb_wq);
	return ERR_PTR(r);
}

/* Index of the run holding byte @offset of the object, or nsegs. */
static unsigned int amdgpu_peer_seg_find(struct amdgpu_peer_mgr *mgr,
					 const struct amdgpu_peer_pin *pin,
					 u64 offset)
{
	unsigned int lo = 0, hi = pin->nsegs;

	while (lo < hi) {
		unsigned int mid = lo + (hi - lo) / 2;

		atomic_inc(&mgr->stats.seg_visits);
		if (pin->segs[mid].end > offset)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}

/* Fill @reg's table with the part [@offset, @end) of @pin, from run @i. */
static void amdgpu_peer_view(struct amdgpu_peer_mgr *mgr,
			     struct amdgpu_peer_reg *reg,
			     const struct amdgpu_peer_pin *pin,
			     unsigned int i, unsigned int n, u64 offset,
			     u64 end)
{
	struct scatterlist *d;
	unsigned int k;

	sg_init_table(reg->sgl, n);
	for (k = 0, d = reg->sgl; k < n; k++, i++, d++) {
		u64 start = i ? pin->segs[i - 1].end : 0;
		u64 from = max(start, offset), to = min(pin->segs[i].end, end);

		atomic_inc(&mgr->stats.seg_visits);
		d->length = to - from;
		sg_dma_address(d) = pin->segs[i].addr + (from - start);
		sg_dma_len(d) = to - from;
	}
	reg->table.sgl = reg->sgl;
	reg->table.nents = n;
	reg->table.orig_nents = n;
}

/*
 * The memory of a registration, allocated after its pin is held: tests
 * make it fail there (KUNIT_STATIC_STUB_REDIRECT).
 */
VISIBLE_IF_KUNIT void *amdgpu_peer_reg_alloc(struct amdgpu_peer_mgr *mgr,
					     size_t size)
{
	KUNIT_STATIC_STUB_REDIRECT(amdgpu_peer_reg_alloc, mgr, size);
	return kzalloc(size, GFP_KERNEL);
}
EXPORT_SYMBOL_IF_KUNIT(amdgpu_peer_reg_alloc);

static void amdgpu_peer_reg_free(struct amdgpu_peer_reg *reg)
{
	atomic_dec(&reg->mgr->stats.regs);
	put_pid(reg->info.pid);
	kfree(reg);
}

static void amdgpu_peer_reg_unhash_locked(struct amdgpu_peer_reg *reg)
{
	lockdep_assert_held(&reg->mgr->lock);
	hash_del(&reg->hnode);
}

static struct amdgpu_peer_reg *
amdgpu_peer_reg_lookup_locked(struct amdgpu_peer_mgr *mgr,
			      const struct amd_p2p_info *info)
{
	struct amdgpu_peer_reg *reg;

	lockdep_assert_held(&mgr->lock);
	hash_for_each_possible(mgr->regs, reg, hnode, (unsigned long)info)
		if (&reg->info == info)
			return reg;
	return NULL;
}

static void amdgpu_peer_reg_uncharge_locked(struct amdgpu_peer_reg *reg)
{
	lockdep_assert_held(&reg->mgr->lock);
	if (reg->charge) {
		reg->pin->dev->charged -= reg->charge;
		reg->charge = 0;
	}
}

/*
 * Let go of the pin: the quota, the pin's list and a user. Returns the pin
 * if this was its last user; the caller destroys it without the lock.
 */
static struct amdgpu_peer_pin *
amdgpu_peer_reg_drop_pin_locked(struct amdgpu_peer_reg *reg)
{
	struct amdgpu_peer_pin *pin = reg->pin;

	lockdep_assert_held(&reg->mgr->lock);
	if (!pin)
		return NULL;
	amdgpu_peer_reg_uncharge_locked(reg);
	list_del_init(&reg->pin_link);
	reg->pin = NULL;
	return amdgpu_peer_pin_unuse_locked(reg->mgr, pin);
}

/*
 * Make @reg a tombstone. Returns the oldest tombstone, already RELEASED and
 * unhashed, if there are now too many; the caller frees it.
 */
static struct amdgpu_peer_reg *
amdgpu_peer_tombstone_locked(struct amdgpu_peer_reg *reg)
{
	struct amdgpu_peer_mgr *mgr = reg->mgr;
	struct amdgpu_peer_reg *old;

	lockdep_assert_held(&mgr->lock);
	reg->state = AMDGPU_PEER_TOMBSTONE;
	reg->owner = NULL;
	list_add_tail(&reg->link, &mgr->tombstones);
	mgr->nr_tombstones++;
	atomic_inc(&mgr->stats.tombstones);
	if (!mgr->max_tombstones || mgr->nr_tombstones <= mgr->max_tombstones)
		return NULL;

	old = list_first_entry(&mgr->tombstones, struct amdgpu_peer_reg, link);
	list_del_init(&old->link);
	mgr->nr_tombstones--;
	atomic_dec(&mgr->stats.tombstones);
	atomic_inc(&mgr->stats.reclaimed);
	old->state = AMDGPU_PEER_RELEASED;
	amdgpu_peer_reg_unhash_locked(old);
	return old;
}

static void amdgpu_peer_release_work(struct work_struct *work)
{
	struct amdgpu_peer_reg *reg =
		container_of(work, struct amdgpu_peer_reg, release_work);
	struct amdgpu_peer_mgr *mgr = reg->mgr;
	struct amdgpu_peer_pin *pin;
	unsigned long flags;

	amdgpu_peer_lock(mgr, &flags);
	pin = amdgpu_peer_reg_drop_pin_locked(reg);
	amdgpu_peer_unlock(mgr, flags);
	if (pin)
		amdgpu_peer_pin_destroy(mgr, pin);
	amdgpu_peer_reg_free(reg);
}

/* LIVE -> DYING (with a callback) or DETACHED (persistent). */
static bool amdgpu_peer_reg_detach_locked(struct amdgpu_peer_reg *reg)
{
	lockdep_assert_held(&reg->mgr->lock);
	interval_tree_remove(&reg->it, &reg->owner->regs);
	if (!reg->free_cb) {
		reg->state = AMDGPU_PEER_DETACHED;
		reg->owner = NULL;
		return false;
	}
	reg->state = AMDGPU_PEER_DYING;
	list_add_tail(&reg->link, &reg->owner->dying);
	return true;
}

/* DYING or LIVE -> IN_CALLBACK, counted until amdgpu_peer_reg_call(). */
static void amdgpu_peer_reg_start_cb_locked(struct amdgpu_peer_reg *reg)
{
	lockdep_assert_held(&reg->mgr->lock);
	reg->state = AMDGPU_PEER_IN_CALLBACK;
	reg->owner->cbs_running++;
	reg->pin->dev->busy++;
	reg->mgr->cbs_running++;
}

/*
 * Call the free callback of an IN_CALLBACK registration, then drop its pin
 * and make it a tombstone, or free it if it was put meanwhile. A
 * registration put before its callback was called (a revocation starts
 * several at once) is not called. No lock may be held that the callback
 * could take.
 */
static void amdgpu_peer_reg_call(struct amdgpu_peer_reg *reg)
{
	struct amdgpu_peer_owner *owner = reg->owner;
	struct amdgpu_peer_mgr *mgr = reg->mgr;
	struct amdgpu_peer_dev *dev = reg->pin->dev;
	struct amdgpu_peer_reg *old = NULL;
	struct amdgpu_peer_pin *pin;
	unsigned long flags;
	bool put, waited, skip;

	amdgpu_peer_lock(mgr, &flags);
	skip = reg->put_pending;
	if (!skip) {
		reg->cb_started = true;
		reg->cb_task = current;
		/* For puts from inside a callback, which never wait */
		list_add(&reg->link, &mgr->running);
	}
	amdgpu_peer_unlock(mgr, flags);

	/*
	 * Waiters wait for all of it, the unpin included (which reserves
	 * the object), not only for the callback.
	 */
	lock_map_acquire(&amdgpu_peer_cb_map);
	if (!skip) {
		reg->free_cb(reg->client_priv);
		atomic_inc(&mgr->stats.callbacks);
	}

	/*
	 * The client has stopped using the addresses. The table stays as it
	 * is (readable until put); the pin goes.
	 */
	amdgpu_peer_lock(mgr, &flags);
	if (!skip)
		list_del_init(&reg->link);
	pin = amdgpu_peer_reg_drop_pin_locked(reg);
	put = reg->put_pending;
	/* A put waiting for the callback frees it: not touched after this */
	waited = reg->put_waits;
	if (put) {
		reg->state = AMDGPU_PEER_RELEASED;
		reg->owner = NULL;
		amdgpu_peer_reg_unhash_locked(reg);
	} else {
		old = amdgpu_peer_tombstone_locked(reg);
	}
	amdgpu_peer_unlock(mgr, flags);

	if (pin)
		amdgpu_peer_pin_destroy(mgr, pin);
	if (put && !waited)
		amdgpu_peer_reg_free(reg);
	if (old)
		amdgpu_peer_reg_free(old);
	lock_map_release(&amdgpu_peer_cb_map);

	/* Only now, with the pin gone, does the callback count as done. */
	amdgpu_peer_lock(mgr, &flags);
	owner->cbs_running--;
	dev->busy--;
	mgr->cbs_running--;
	amdgpu_peer_unlock(mgr, flags);
	wake_up_all(&mgr->cb_wq);
}

static void amdgpu_peer_flush_work(struct work_struct *work)
{
	amdgpu_peer_owner_flush(container_of(work, struct amdgpu_peer_owner,
					     flush_work));
}

/**
 * amdgpu_peer_mgr_init - initialise a manager
 * @mgr: the manager
 * @ops: how to pin and unpin objects
 *
 * Return: 0 or -ENOMEM.
 */
int amdgpu_peer_mgr_init(struct amdgpu_peer_mgr *mgr,
			 const struct amdgpu_peer_pin_ops *ops)
{
	memset(mgr, 0, sizeof(*mgr));
	mgr->wq = alloc_workqueue("amdgpu_peer", WQ_UNBOUND, 0);
	if (!mgr->wq)
		return -ENOMEM;
	mgr->ops = ops;
	spin_lock_init(&mgr->lock);
	hash_init(mgr->pins);
	hash_init(mgr->regs);
	INIT_LIST_HEAD(&mgr->tombstones);
	INIT_LIST_HEAD(&mgr->running);
	init_waitqueue_head(&mgr->cb_wq);
	return 0;
}

static bool amdgpu_peer_mgr_quiet(struct amdgpu_peer_mgr *mgr)
{
	unsigned long flags;
	bool quiet;

	amdgpu_peer_lock(mgr, &flags);
	quiet = !mgr->cbs_running;
	amdgpu_peer_unlock(mgr, flags);
	return quiet;
}

/**
 * amdgpu_peer_mgr_synchronize - wait for callbacks and deferred releases
 * @mgr: the manager
 *
 * Waits until every release queued by amdgpu_peer_put() before the call has
 * run (which also drops the DMA device references those registrations
 * held) and no free callback is running anywhere.
 *
 * Context: process context; not from a free callback or the manager's
 * workqueue.
 */
void amdgpu_peer_mgr_synchronize(struct amdgpu_peer_mgr *mgr)
{
	might_sleep();
	amdgpu_peer_might_wait_cb();
	flush_workqueue(mgr->wq);
	wait_event(mgr->cb_wq, amdgpu_peer_mgr_quiet(mgr));
}

/**
 * amdgpu_peer_mgr_fini - tear a manager down
 * @mgr: the manager
 *
 * Every owner must have been destroyed and every device revoked. Waits for
 * the deferred releases and frees the tombstones of clients that never put
 * them (their modules are gone by now). Warns about anything else left.
 */
void amdgpu_peer_mgr_fini(struct amdgpu_peer_mgr *mgr)
{
	struct amdgpu_peer_reg *reg, *tmp;
	unsigned long flags;
	LIST_HEAD(tombs);

	destroy_workqueue(mgr->wq);
	amdgpu_peer_lock(mgr, &flags);
	list_for_each_entry_safe(reg, tmp, &mgr->tombstones, link) {
		amdgpu_peer_reg_unhash_locked(reg);
		list_move_tail(&reg->link, &tombs);
	}
	mgr->nr_tombstones = 0;
	amdgpu_peer_unlock(mgr, flags);
	list_for_each_entry_safe(reg, tmp, &tombs, link) {
		atomic_dec(&mgr->stats.tombstones);
		amdgpu_peer_reg_free(reg);
	}
	WARN_ON(atomic_read(&mgr->stats.regs));
	WARN_ON(!hash_empty(mgr->pins));
}

/**
 * amdgpu_peer_mgr_obj_pinned - whether registrations pin an object
 * @mgr: the manager
 * @obj: the object
 *
 * Return: true if some registration holds a pin of @obj.
 */
bool amdgpu_peer_mgr_obj_pinned(struct amdgpu_peer_mgr *mgr, void *obj)
{
	struct amdgpu_peer_pin *pin;
	unsigned long flags;
	bool found = false;

	amdgpu_peer_lock(mgr, &flags);
	hash_for_each_possible(mgr->pins, pin, node, (unsigned long)obj)
		found |= pin->obj == obj;
	amdgpu_peer_unlock(mgr, flags);
	return found;
}

/**
 * amdgpu_peer_dev_init - initialise a provider device
 * @mgr: the manager
 * @dev: the device
 * @limit: most bytes its registrations may be charged at once
 */
void amdgpu_peer_dev_init(struct amdgpu_peer_mgr *mgr,
			  struct amdgpu_peer_dev *dev, u64 limit)
{
	memset(dev, 0, sizeof(*dev));
	dev->mgr = mgr;
	dev->limit = limit;
	INIT_LIST_HEAD(&dev->pins);
}

/**
 * amdgpu_peer_dev_invalidate - detach every revocable registration of a
 * device's memory, and have its callback run from the workqueue
 * @dev: the device
 *
 * For a GPU reset: the DMA addresses of its memory may stop working, so
 * every client that asked for a callback gets one. Persistent registrations
 * stay. The callbacks run asynchronously; the caller does not wait for
 * them (a callback may wait for locks or I/O the reset holds up). Until a
 * callback returned its pin stays, so nothing else is placed in that
 * memory meanwhile.
 *
 * Context: any; takes the manager's irq-safe spinlock.
 * Return: the number of registrations detached.
 */
unsigned int amdgpu_peer_dev_invalidate(struct amdgpu_peer_dev *dev)
{
	struct amdgpu_peer_mgr *mgr = dev->mgr;
	struct amdgpu_peer_pin *pin;
	struct amdgpu_peer_reg *reg;
	unsigned long flags;
	unsigned int n = 0;

	amdgpu_peer_lock(mgr, &flags);
	list_for_each_entry(pin, &dev->pins, dev_link) {
		list_for_each_entry(reg, &pin->regs, pin_link) {
			if (reg->state != AMDGPU_PEER_LIVE || !reg->free_cb)
				continue;
			amdgpu_peer_reg_detach_locked(reg);
			queue_work(mgr->wq, &reg->owner->flush_work);
			n++;
		}
	}
	amdgpu_peer_unlock(mgr, flags);
	atomic_add(n, &mgr->stats.invalidated);
	return n;
}

static bool amdgpu_peer_dev_idle(struct amdgpu_peer_dev *dev)
{
	unsigned long flags;
	bool idle;

	amdgpu_peer_lock(dev->mgr, &flags);
	idle = !dev->busy && list_empty(&dev->pins);
	amdgpu_peer_unlock(dev->mgr, flags);
	return idle;
}

/**
 * amdgpu_peer_dev_revoke - end every registration of a device's memory
 * @dev: the device, going away
 *
 * For hot unplug and driver unbind: calls the free callback of every
 * registration that has one, ends persistent registrations without one
 * (there is nobody to tell), drops every pin of the device while it can
 * still be unpinned, and refuses new ones. Returns when no callback on the
 * device's memory is running anywhere and every pin is gone. Registrations
 * stay tombstones until put.
 *
 * Context: process context, may sleep; no lock a callback could take may
 * be held.
 */
void amdgpu_peer_dev_revoke(struct amdgpu_peer_dev *dev)
{
	struct amdgpu_peer_mgr *mgr = dev->mgr;
	struct amdgpu_peer_reg *reg, *tmp, *old;
	struct amdgpu_peer_pin *pin, *ptmp, *last;
	LIST_HEAD(unpins);
	LIST_HEAD(olds);
	LIST_HEAD(cbs);
	unsigned long flags;

	might_sleep();
	amdgpu_peer_might_wait_cb();
	amdgpu_peer_lock(mgr, &flags);
	dev->dead = true;
	list_for_each_entry_safe(pin, ptmp, &dev->pins, dev_link) {
		list_for_each_entry_safe(reg, tmp, &pin->regs, pin_link) {
			switch (reg->state) {
			case AMDGPU_PEER_LIVE:
				if (reg->free_cb) {
					interval_tree_remove(&reg->it,
							     &reg->owner->regs);
					break;
				}
				amdgpu_peer_reg_detach_locked(reg);
				fallthrough;
			case AMDGPU_PEER_DETACHED:
				/* Persistent: ended, with nobody to tell. */
				last = amdgpu_peer_reg_drop_pin_locked(reg);
				if (last)
					list_add_tail(&last->dev_link,
						      &unpins);
				old = amdgpu_peer_tombstone_locked(reg);
				if (old)
					list_add_tail(&old->link, &olds);
				atomic_inc(&mgr->stats.revoked);
				continue;
			case AMDGPU_PEER_DYING:
				list_del_init(&reg->link);
				break;
			default:
				/* A callback or a release elsewhere. */
				continue;
			}
			amdgpu_peer_reg_start_cb_locked(reg);
			list_add_tail(&reg->link, &cbs);
			atomic_inc(&mgr->stats.revoked);
		}
	}
	amdgpu_peer_unlock(mgr, flags);

	list_for_each_entry_safe(pin, ptmp, &unpins, dev_link) {
		list_del_init(&pin->dev_link);
		amdgpu_peer_pin_destroy(mgr, pin);
	}
	list_for_each_entry_safe(reg, tmp, &olds, link)
		amdgpu_peer_reg_free(reg);
	list_for_each_entry_safe(reg, tmp, &cbs, link) {
		list_del_init(&reg->link);
		amdgpu_peer_reg_call(reg);
	}
	/* Releases queued by puts, callbacks run by other threads. */
	flush_workqueue(mgr->wq);
	wait_event(mgr->cb_wq, amdgpu_peer_dev_idle(dev));
}

/**
 * amdgpu_peer_owner_create - create an owner of registrations
 * @mgr: the manager its registrations pin through
 *
 * Return: the owner, or NULL without memory.
 */
struct amdgpu_peer_owner *amdgpu_peer_owner_create(struct amdgpu_peer_mgr *mgr)
{
	struct amdgpu_peer_owner *owner;

	owner = kzalloc(sizeof(*owner), GFP_KERNEL);
	if (!owner)
		return NULL;
	atomic_inc(&mgr->stats.allocs);
	owner->mgr = mgr;
	owner->regs = RB_ROOT_CACHED;
	INIT_LIST_HEAD(&owner->dying);
	INIT_WORK(&owner->flush_work, amdgpu_peer_flush_work);
	return owner;
}

/**
 * amdgpu_peer_owner_idle - whether an owner has no callback to run
 * @owner: the owner
 *
 * Return: true if no registration of @owner is dying or in its callback.
 */
bool amdgpu_peer_owner_idle(struct amdgpu_peer_owner *owner)
{
	unsigned long flags;
	bool idle;

	amdgpu_peer_lock(owner->mgr, &flags);
	idle = list_empty(&owner->dying) && !owner->cbs_running;
	amdgpu_peer_unlock(owner->mgr, flags);
	return idle;
}

static bool amdgpu_peer_owner_quiet(struct amdgpu_peer_owner *owner)
{
	unsigned long flags;
	bool quiet;

	amdgpu_peer_lock(owner->mgr, &flags);
	quiet = !owner->cbs_running;
	amdgpu_peer_unlock(owner->mgr, flags);
	return quiet;
}

/**
 * amdgpu_peer_owner_flush - run the free callbacks of detached registrations
 * @owner: the owner
 *
 * Calls the free callback of every registration amdgpu_peer_invalidate()
 * detached and nobody put, then unmaps and unpins. Returns only after every
 * callback of @owner's registrations that was started before, by this or
 * another thread, has returned and its pin is gone. Call it after dropping
 * the locks held around amdgpu_peer_invalidate() and before returning to
 * user space.
 *
 * Context: process context, may sleep; no lock a callback could take may
 * be held; not from a free callback.
 */
void amdgpu_peer_owner_flush(struct amdgpu_peer_owner *owner)
{
	struct amdgpu_peer_mgr *mgr = owner->mgr;
	struct amdgpu_peer_reg *reg;
	unsigned long flags;

	might_sleep();
	amdgpu_peer_might_wait_cb();
	for (;;) {
		amdgpu_peer_lock(mgr, &flags);
		reg = list_first_entry_or_null(&owner->dying,
					       struct amdgpu_peer_reg, link);
		if (reg) {
			list_del_init(&reg->link);
			amdgpu_peer_reg_start_cb_locked(reg);
		}
		amdgpu_peer_unlock(mgr, flags);
		if (!reg)
			break;
		amdgpu_peer_reg_call(reg);
	}
	wait_event(mgr->cb_wq, amdgpu_peer_owner_quiet(owner));
}

/**
 * amdgpu_peer_owner_destroy - the address space goes away
 * @owner: the owner
 *
 * Detaches every live registration and runs the callbacks; persistent
 * registrations stay pinned until put. Then frees @owner: nothing points to
 * it any more.
 *
 * Context: process context, may sleep; no lock a callback could take may
 * be held.
 */
void amdgpu_peer_owner_destroy(struct amdgpu_peer_owner *owner)
{
	struct amdgpu_peer_mgr *mgr = owner->mgr;
	struct interval_tree_node *it;
	unsigned long flags;
	unsigned int n = 0;

	amdgpu_peer_lock(mgr, &flags);
	owner->dead = true;
	while ((it = interval_tree_iter_first(&owner->regs, 0, U64_MAX))) {
		amdgpu_peer_reg_detach_locked(container_of(it,
							   struct amdgpu_peer_reg,
							   it));
		n++;
	}
	amdgpu_peer_unlock(mgr, flags);
	atomic_add(n, &mgr->stats.invalidated);

	cancel_work_sync(&owner->flush_work);
	amdgpu_peer_owner_flush(owner);
	WARN_ON(!amdgpu_peer_owner_idle(owner));
	kfree(owner);
}

/*
 * Whether @owner may have @length more bytes registered on @dev: -ESRCH
 * if it is being destroyed, -ENODEV if @dev was revoked (before the
 * quota: -ENOSPC makes hfi1 evict for nothing), -ENOSPC over the quota.
 */
static int amdgpu_peer_may_charge_locked(struct amdgpu_peer_owner *owner,
					 struct amdgpu_peer_dev *dev,
					 u64 length)
{
	lockdep_assert_held(&owner->mgr->lock);
	if (owner->dead)
		return -ESRCH;
	if (dev->dead)
		return -ENODEV;
	if (length > dev->limit - dev->charged)
		return -ENOSPC;
	return 0;
}

/**
 * amdgpu_peer_register - register memory for a peer device
 * @owner: the owner the registration hangs off
 * @args: what to register
 * @info: where to return the registration
 * @undo: where a pin given up on failure goes, for
 *	amdgpu_peer_register_undo()
 *
 * Shares the pin of (@args->obj, @args->dma_dev, @args->dir), or creates it
 * when @args->may_pin, and builds the DMA table of the asked range. The
 * caller must hold the locks that serialise it against
 * amdgpu_peer_invalidate() of the key range (for amdgpu: the VM root
 * reservation), so that a registration is never added to a mapping that is
 * already gone. *@info is set in the same critical section that makes the
 * registration live, so a callback racing the caller's return sees it.
 *
 * A pin that this call made, or whose last user it was, and that it gives
 * up on failure is not destroyed here: &amdgpu_peer_pin_ops.unpin takes
 * the object's lock, which the caller may hold (amdgpu's first get holds
 * the BO's reservation; a repeated one holds the VM root, which is the
 * reservation of a per-VM BO, and under which a reserve without a ticket
 * is not allowed anyway). It goes on @undo, and the caller passes @undo to
 * amdgpu_peer_register_undo() once it dropped its locks. A revoked device
 * and the quota are checked before a pin is made, so a get over the quota
 * pins nothing. A pin made and then given up goes on @undo: the quota,
 * the device or the owner was lost to a race while pinning, the pin's
 * mapping has no segment for the range, or memory ran out.
 *
 * Context: process context, may sleep. Takes no sleeping lock itself.
 * Return: 0 and *@info set, or a negative errno and *@info untouched:
 * -EAGAIN without @args->may_pin when no pin exists yet, -ENOSPC over the
 * device's quota, -ESRCH if @owner is being destroyed, -ENODEV if the
 * device was revoked, -EFAULT if the range is outside the object, -ENOMEM,
 * or the pin's error. @undo may have entries after a failure, never after
 * a success: pass it to amdgpu_peer_register_undo() after either.
 */
int amdgpu_peer_register(struct amdgpu_peer_owner *owner,
			 const struct amdgpu_peer_reg_args *args,
			 struct amd_p2p_info **info, struct list_head *undo)
{
	struct amdgpu_peer_mgr *mgr = owner->mgr;
	struct amdgpu_peer_pin *pin, *last;
	struct amdgpu_peer_dev *dev;
	struct amdgpu_peer_reg *reg;
	u64 end = args->offset + args->length;
	unsigned int i, n;
	unsigned long flags;
	int r = 0;

	if (!args->length || end < args->offset || end > args->obj_size ||
	    args->first > args->last)
		return -EFAULT;

	amdgpu_peer_lock(mgr, &flags);
	pin = amdgpu_peer_pin_find_locked(mgr, args->obj, args->dma_dev,
					  args->dir);
	if (owner->dead) {
		r = -ESRCH;
	} else if (pin && pin->dev->dead) {
		r = -ENODEV;
	} else if (pin) {
		pin->users++;
		pin->dev->busy++;
	} else if (!args->may_pin) {
		r = -EAGAIN;
	} else if (args->dev && args->dev->mgr == mgr) {
		/* As it is now: do not pin only to unpin again */
		r = amdgpu_peer_may_charge_locked(owner, args->dev,
						  args->length);
	}
	amdgpu_peer_unlock(mgr, flags);
	if (r)
		return r;
	if (!pin) {
		pin = amdgpu_peer_pin_create(mgr, args, undo);
		if (IS_ERR(pin))
			return PTR_ERR(pin);
	}
	dev = pin->dev;

	i = amdgpu_peer_seg_find(mgr, pin, args->offset);
	for (n = 0; i + n < pin->nsegs; n++)
		if ((i + n ? pin->segs[i + n - 1].end : 0) >= end)
			break;
	if (!n || pin->segs[pin->nsegs - 1].end < end) {
		r = -EFAULT;
		goto err_pin;
	}

	reg = amdgpu_peer_reg_alloc(mgr, struct_size(reg, sgl, n));
	if (!reg) {
		r = -ENOMEM;
		goto err_pin;
	}
	atomic_inc(&mgr->stats.allocs);
	reg->mgr = mgr;
	reg->it.start = args->first;
	reg->it.last = args->last;
	INIT_LIST_HEAD(&reg->link);
	INIT_LIST_HEAD(&reg->pin_link);
	INIT_WORK(&reg->release_work, amdgpu_peer_release_work);
	reg->free_cb = args->free_cb;
	reg->client_priv = args->client_priv;
	amdgpu_peer_view(mgr, reg, pin, i, n, args->offset, end);
	reg->info.va = args->va;
	reg->info.size = args->length;
	reg->info.pages = &reg->table;
	reg->info.priv = reg;

	amdgpu_peer_lock(mgr, &flags);
	r = amdgpu_peer_may_charge_locked(owner, dev, args->length);
	if (r) {
		amdgpu_peer_unlock(mgr, flags);
		kfree(reg);
		goto err_pin;
	}
	reg->info.pid = get_pid(args->pid);
	dev->charged += args->length;
	reg->charge = args->length;
	reg->pin = pin;
	reg->owner = owner;
	reg->state = AMDGPU_PEER_LIVE;
	interval_tree_insert(&reg->it, &owner->regs);
	list_add_tail(&reg->pin_link, &pin->regs);
	hash_add(mgr->regs, &reg->hnode, (unsigned long)&reg->info);
	*info = &reg->info;
	dev->busy--;
	atomic_inc(&mgr->stats.regs);
	amdgpu_peer_unlock(mgr, flags);
	if (wq_has_sleeper(&mgr->cb_wq))
		wake_up_all(&mgr->cb_wq);
	return 0;

err_pin:
	amdgpu_peer_lock(mgr, &flags);
	last = amdgpu_peer_pin_unuse_locked(mgr, pin);
	/* The last user's busy count goes with the unpin: see above */
	if (!last)
		dev->busy--;
	amdgpu_peer_unlock(mgr, flags);
	if (last)
		list_add_tail(&last->dev_link, undo);
	else
		wake_up_all(&mgr->cb_wq);
	return r;
}

/**
 * amdgpu_peer_register_undo - destroy the pins a registration gave up
 * @mgr: the manager
 * @undo: the list passed to amdgpu_peer_register()
 *
 * Context: process context, may sleep; without the locks held around
 * amdgpu_peer_register() (&amdgpu_peer_pin_ops.unpin takes the object's).
 * Leaves @undo empty.
 */
void amdgpu_peer_register_undo(struct amdgpu_peer_mgr *mgr,
			       struct list_head *undo)
{
	struct amdgpu_peer_pin *pin, *next;
	struct amdgpu_peer_dev *dev;
	unsigned long flags;

	list_for_each_entry_safe(pin, next, undo, dev_link) {
		list_del_init(&pin->dev_link);
		dev = pin->dev;
		amdgpu_peer_pin_destroy(mgr, pin);
		amdgpu_peer_lock(mgr, &flags);
		dev->busy--;
		amdgpu_peer_unlock(mgr, flags);
		wake_up_all(&mgr->cb_wq);
	}
}

/**
 * amdgpu_peer_invalidate - detach the registrations of a key range
 * @owner: the owner
 * @first: first page of the range
 * @last: last page of the range, inclusive
 *
 * Called by a path removing a mapping, under its locks. Moves every live
 * registration whose key range overlaps [@first, @last] with a free
 * callback to the dying list, and every one without out of @owner (it
 * stays pinned until put); the path then calls amdgpu_peer_owner_flush()
 * after dropping its locks. If it does not, a worker runs the callbacks.
 * Costs O(k log n) for k detached of n registrations.
 *
 * Context: any; takes the manager's irq-safe spinlock.
 * Return: the number of registrations detached.
 */
unsigned int amdgpu_peer_invalidate(struct amdgpu_peer_owner *owner,
				    u64 first, u64 last)
{
	struct amdgpu_peer_mgr *mgr = owner->mgr;
	struct interval_tree_node *it;
	unsigned int n = 0, dying = 0;
	unsigned long flags;

	amdgpu_peer_lock(mgr, &flags);
	while ((it = interval_tree_iter_first(&owner->regs, first, last))) {
		dying += amdgpu_peer_reg_detach_locked(container_of(it,
					struct amdgpu_peer_reg, it));
		n++;
	}
	if (dying && !owner->dead && !mgr->no_backstop)
		queue_work(mgr->wq, &owner->flush_work);
	amdgpu_peer_unlock(mgr, flags);

	atomic_add(n + 1, &mgr->stats.visited);
	atomic_add(n, &mgr->stats.invalidated);
	return n;
}

/* Whether this put may wait for a callback: see AMDGPU_PEER_PUT_CAN_WAIT */
static bool amdgpu_peer_put_may_wait(void)
{
	/*
	 * preemptible() does not see an RCU read-side section under
	 * preemptible RCU, nor a spinlock_t on PREEMPT_RT
	 */
	return AMDGPU_PEER_PUT_CAN_WAIT && preemptible() && !in_interrupt() &&
	       !rcu_preempt_depth();
}

/* Whether the current thread is inside a free callback of @mgr's */
static bool amdgpu_peer_in_callback_locked(struct amdgpu_peer_mgr *mgr)
{
	struct amdgpu_peer_reg *reg;

	lockdep_assert_held(&mgr->lock);
	list_for_each_entry(reg, &mgr->running, link)
		if (reg->cb_task == current)
			return true;
	return false;
}

static bool amdgpu_peer_reg_released(struct amdgpu_peer_mgr *mgr,
				     struct amdgpu_peer_reg *reg)
{
	unsigned long flags;
	bool done;

	amdgpu_peer_lock(mgr, &flags);
	done = reg->state == AMDGPU_PEER_RELEASED;
	amdgpu_peer_unlock(mgr, flags);
	return done;
}

/**
 * amdgpu_peer_put - give a registration back
 * @mgr: the manager
 * @info: the registration; set to NULL
 *
 * See &amd_rdma_interface.put_pages. The registration is looked up in the
 * manager before anything of it is touched, so a put of one that was
 * reclaimed or already put is harmless. A put of a registration whose
 * callback another thread is running waits for the callback to return
 * where it may sleep, unless it comes from inside a callback (which might
 * be waited for in turn), so that the client may free what its callback
 * uses once the put returned. Every put that may wait tells lockdep so
 * (see amdgpu_peer_cb_map), whether or not it has to.
 *
 * Context: any; blocks only as said above.
 * Return: 0, or -EINVAL for a NULL @info or *@info.
 */
int amdgpu_peer_put(struct amdgpu_peer_mgr *mgr, struct amd_p2p_info **info)
{
	/* Asked before the irq-safe lock is taken */
	bool may_wait = amdgpu_peer_put_may_wait();
	struct amdgpu_peer_reg *reg;
	unsigned long flags;
	bool release = false, wait = false;

	if (!info || !*info)
		return -EINVAL;

	amdgpu_peer_lock(mgr, &flags);
	/*
	 * Not from inside a callback (its own, or another's, which might
	 * wait for this thread's in turn): such a put never waits.
	 */
	may_wait = may_wait && !amdgpu_peer_in_callback_locked(mgr);
	reg = amdgpu_peer_reg_lookup_locked(mgr, *info);
	if (!reg) {
		atomic_inc(&mgr->stats.unknown_puts);
		goto out;
	}
	switch (reg->state) {
	case AMDGPU_PEER_LIVE:
		interval_tree_remove(&reg->it, &reg->owner->regs);
		release = true;
		break;
	case AMDGPU_PEER_DETACHED:
		release = true;
		break;
	case AMDGPU_PEER_DYING:
		list_del_init(&reg->link);
		release = true;
		break;
	case AMDGPU_PEER_IN_CALLBACK:
		if (reg->put_pending) {
			/* Put twice: the first put owns the release */
			atomic_inc(&mgr->stats.unknown_puts);
			break;
		}
		reg->put_pending = true;
		/* Wait for a callback being called; one not yet will not be */
		if (reg->cb_started && may_wait) {
			reg->put_waits = true;
			wait = true;
		}
		break;
	case AMDGPU_PEER_TOMBSTONE:
		list_del_init(&reg->link);
		mgr->nr_tombstones--;
		atomic_dec(&mgr->stats.tombstones);
		release = true;
		break;
	case AMDGPU_PEER_RELEASED:
		break;
	}
	if (release) {
		/* The quota comes back now, the pin when the worker ran. */
		amdgpu_peer_reg_uncharge_locked(reg);
		reg->state = AMDGPU_PEER_RELEASED;
		reg->owner = NULL;
		amdgpu_peer_reg_unhash_locked(reg);
		queue_work(mgr->wq, &reg->release_work);
	}
out:
	amdgpu_peer_unlock(mgr, flags);
	*info = NULL;
	/* Every put that could have waited tells lockdep, not only this one */
	if (may_wait)
		amdgpu_peer_might_wait_cb();
	if (wait) {
		atomic_inc(&mgr->stats.put_waits);
		wait_event(mgr->cb_wq, amdgpu_peer_reg_released(mgr, reg));
		amdgpu_peer_reg_free(reg);
	}
	return 0;
}

/**
 * amdgpu_peer_retry - whether a registration's addresses are still good
 * @mgr: the manager
 * @info: a registration that the caller has not put
 *
 * See amdkfd_rdma_retry() in amd_rdma.h. True once amdgpu_peer_invalidate(),
 * a device event or a revocation has detached @info for its callback
 * (DYING, IN_CALLBACK, TOMBSTONE), and for anything the manager does not
 * know as not yet put. A persistent registration whose mapping went
 * (DETACHED) stays pinned and mapped: false. The state changes under the
 * manager's lock before the callback is called, so a client that asks
 * under a lock its callback takes learns of every callback that did not
 * find its NIC programmed.
 *
 * Context: any; takes the manager's irq-safe spinlock.
 * Return: false while the addresses in @info stay valid until a callback
 * or a put; true otherwise.
 */
bool amdgpu_peer_retry(struct amdgpu_peer_mgr *mgr,
		       const struct amd_p2p_info *info)
{
	struct amdgpu_peer_reg *reg;
	unsigned long flags;
	bool retry = true;

	if (!info)
		return true;
	amdgpu_peer_lock(mgr, &flags);
	reg = amdgpu_peer_reg_lookup_locked(mgr, info);
	if (reg)
		retry = reg->state != AMDGPU_PEER_LIVE &&
			reg->state != AMDGPU_PEER_DETACHED;
	amdgpu_peer_unlock(mgr, flags);
	if (retry)
		atomic_inc(&mgr->stats.retries);
	return retry;
}
