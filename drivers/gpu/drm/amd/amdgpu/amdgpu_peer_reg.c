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
 *   its table stay readable. Its put frees it; so does the manager's
 *   teardown, when the provider module goes and its clients with it; and
 *   so, for a tombstone made by a callback, does the bound below, but
 *   never before &amdgpu_peer_mgr.tombstone_min_ns has passed since the
 *   callback returned.
 *
 * Why a tombstone stays: a put names the registration by the &struct
 * amd_p2p_info pointer that get returned, and nothing else. There is no
 * room in that structure, or in the put's arguments, for a generation that
 * a put could check: once the memory of a registration went back to the
 * allocator, the next registration may be allocated at the same address,
 * and a late put of the old one would then release the new one, whose NIC
 * may still be using it. A client that puts after the callback does so
 * soon after it (cxi's put crosses its callback at process exit; old hfi1
 * without its cache puts when the packet in flight completed), so a
 * tombstone that is kept for a while after its callback, and whose address
 * is not reused meanwhile, is released by that put and by no other.
 *
 * Why a tombstone may then go: the registration interface before this one
 * (ROCK's kfd_rdma.c) freed a registration right after its callback
 * returned, and its clients (cxi, hfi1's cache) never put after the
 * callback, by that contract. Their tombstones would otherwise stay until
 * amdgpu is unloaded. So each client, the peer DMA device the registrations
 * were made for, has a record (&struct amdgpu_peer_client, allocated at its
 * first get, outside the spinlock) that lists its tombstones, oldest first.
 * A get with a free callback for a client that has
 * &amdgpu_peer_mgr.max_tombstones of them first frees its oldest ones that
 * are at least &amdgpu_peer_mgr.tombstone_min_ns old, as many as it needs
 * to be below the bound (at most %AMDGPU_PEER_BATCH); only if none is that
 * old is the get refused, with -EAGAIN, which clears by itself within that
 * time. No churn, by any user, frees a tombstone younger than that, and a
 * client that never puts after the callback keeps working. Gets enforce
 * the bound, callbacks do not: after a burst of callbacks a client is
 * above it until its next gets free the excess, and the tombstones of a
 * client that makes no more gets stay until put or the manager's
 * teardown. A put later than that is a client bug: the allocator usually
 * gives the freed memory to the next registration at once. Persistent
 * gets make no tombstones and are never refused; a put of a tombstone
 * makes room at once. A persistent registration ended by a device
 * revocation becomes a tombstone too, but its client was never told (no
 * callback): it may put it at any time, so it is not on the client's
 * list, never freed before its put, and not counted against the bound
 * (there are at most as many as the device had when it went).
 *
 * - RELEASED: put. The sleeping part of the release runs on the manager's
 *   workqueue, so amdgpu_peer_put() blocks only for a callback running on
 *   another thread.
 *
 * A put of a LIVE, DETACHED or DYING registration releases it without a
 * callback; a put during the callback is recorded and honoured when the
 * callback returns, and, where it may sleep and is not itself inside a
 * callback, waits for that (the client frees what its callback uses once
 * its put returned). A revocation starts many callbacks at once and calls
 * them one by one: one put before it was called is not called. A second
 * put during the callback is ignored.
 * Every registration that is not RELEASED is in the manager's hash of
 * registrations, so a put of one the core no longer knows (put twice, or
 * a tombstone freed under the bound) is recognised without touching it and
 * returns 0, as long as no new registration took its memory meanwhile (see
 * above: only a client that puts each registration once, and after its
 * callback only within &amdgpu_peer_mgr.tombstone_min_ns, is safe).
 *
 * The walks over many registrations with the irq-safe lock held (a
 * device's invalidation and revocation, an owner's invalidation and
 * destruction, the manager's teardown) look at most %AMDGPU_PEER_BATCH
 * entries per section, then drop the lock and take it again, so that
 * interrupts are off for a bounded time however many registrations there
 * are. The waits for callbacks (amdgpu_peer_owner_flush(),
 * amdgpu_peer_mgr_synchronize()) wait only for the callbacks begun before
 * they were called (&struct amdgpu_peer_epochs), so callbacks that keep
 * beginning on other threads cannot hold them up for ever.
 */

#include <linux/device.h>
#include <linux/ktime.h>
#include <linux/lockdep.h>
#include <linux/pid.h>
#include <linux/rcupdate.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>
#include <linux/overflow.h>

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
static void amdgpu_peer_might_wait_cb(struct amdgpu_peer_mgr *mgr)
{
	atomic_inc(&mgr->stats.might_wait);
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
 * A client of the manager: the peer DMA device registrations are made
 * for. It holds a reference to the device while it exists, so that no
 * other device is at that address while tombstones are counted for it.
 * Created at the device's first get, freed with its last registration;
 * everything but @dma_dev is guarded by the manager's lock.
 */
struct amdgpu_peer_client {
	struct hlist_node node;		/* in mgr->clients */
	struct device *dma_dev;
	unsigned int users;		/* registrations not freed */
	/* of those, the tombstones of callbacks, oldest first, and how many */
	struct list_head tombs;
	unsigned int tombstones;
	/* when a refused get last warned, if one did */
	u64 warned_ns;
	bool warned;
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
	/* the last walk of the device's pins that looked at it */
	unsigned int walk_gen;
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
	/* the peer DMA device it was made for; a user of it until freed */
	struct amdgpu_peer_client *client;
	/* until the pin is dropped; then NULL */
	struct amdgpu_peer_pin *pin;
	/* in owner->regs while LIVE */
	struct interval_tree_node it;
	/* on owner->dying while DYING, on mgr->tombstones while TOMBSTONE */
	struct list_head link;
	/* TOMBSTONE of a callback: on client->tombs, made at @tomb_ns */
	struct list_head client_link;
	u64 tomb_ns;
	/* DYING: its place in the order of owner->dying */
	u64 dying_seq;
	/* on pin->regs while it holds the pin */
	struct list_head pin_link;
	/* the last walk of the device's pins that looked at it */
	unsigned int walk_gen;
	/* IN_CALLBACK: the epochs its callback counts in (mgr's, owner's) */
	u8 mgr_epoch;
	u8 owner_epoch;
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

/* Entries looked at in one section of a walk: the statistics' maxima */
static void amdgpu_peer_section_end_locked(struct amdgpu_peer_mgr *mgr,
					   unsigned int entries, u64 start)
{
	s64 ns = ktime_get_ns() - start;

	lockdep_assert_held(&mgr->lock);
	if ((int)entries > atomic_read(&mgr->stats.section_max))
		atomic_set(&mgr->stats.section_max, entries);
	if (ns > atomic64_read(&mgr->stats.section_max_ns))
		atomic64_set(&mgr->stats.section_max_ns, ns);
}

static void amdgpu_peer_epochs_init(struct amdgpu_peer_epochs *e)
{
	e->count[0] = 0;
	e->count[1] = 0;
	e->cur = 0;
}

/* A callback begins: count it in the current epoch, which it returns */
static u8 amdgpu_peer_epochs_begin_locked(struct amdgpu_peer_epochs *e)
{
	e->count[e->cur]++;
	return e->cur;
}

static bool amdgpu_peer_epoch_drained(struct amdgpu_peer_mgr *mgr,
				      struct amdgpu_peer_epochs *e,
				      unsigned int epoch)
{
	unsigned long flags;
	bool drained;

	spin_lock_irqsave(&mgr->lock, flags);
	drained = !e->count[epoch];
	spin_unlock_irqrestore(&mgr->lock, flags);
	return drained;
}

/*
 * Wait until every callback counted in @e that began before the call has
 * returned (and its unpin is done). Those that begin meanwhile count in the
 * other epoch. @e->lock is held from the switch until the old epoch
 * drained: a second waiter switches back only to an empty epoch.
 */
static void amdgpu_peer_epochs_wait(struct amdgpu_peer_mgr *mgr,
				    struct amdgpu_peer_epochs *e)
{
	unsigned long flags;
	unsigned int old;

	mutex_lock(&e->lock);
	spin_lock_irqsave(&mgr->lock, flags);
	old = e->cur;
	e->cur = !old;
	spin_unlock_irqrestore(&mgr->lock, flags);
	wait_event(mgr->cb_wq, amdgpu_peer_epoch_drained(mgr, e, old));
	mutex_unlock(&e->lock);
}

static struct amdgpu_peer_client *
amdgpu_peer_client_find_locked(struct amdgpu_peer_mgr *mgr,
			       struct device *dma_dev)
{
	struct amdgpu_peer_client *client;

	lockdep_assert_held(&mgr->lock);
	hash_for_each_possible(mgr->clients, client, node,
			       (unsigned long)dma_dev)
		if (client->dma_dev == dma_dev)
			return client;
	return NULL;
}

/* The manager's clock, in nanoseconds: see &amdgpu_peer_mgr.now */
static u64 amdgpu_peer_now(struct amdgpu_peer_mgr *mgr)
{
	return mgr->now ? mgr->now(mgr) : ktime_get_ns();
}

/* Drop a user; returns the client if that was the last, for freeing. */
static struct amdgpu_peer_client *
amdgpu_peer_client_unuse_locked(struct amdgpu_peer_mgr *mgr,
				struct amdgpu_peer_client *client)
{
	lockdep_assert_held(&mgr->lock);
	if (!client || --client->users)
		return NULL;
	hash_del(&client->node);
	return client;
}

/* Process context: the last reference to the device may go here. */
static void amdgpu_peer_client_free(struct amdgpu_peer_mgr *mgr,
				    struct amdgpu_peer_client *client)
{
	if (!client)
		return;
	atomic_dec(&mgr->stats.clients);
	put_device(client->dma_dev);
	kfree(client);
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
	/* A walk of the device's pins under way passes it by */
	pin->walk_gen = dev->walk_gen;
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

static struct amdgpu_peer_reg *
amdgpu_peer_reg_kzalloc(struct amdgpu_peer_mgr *mgr, size_t size)
{
	if (mgr->reg_alloc)
		return mgr->reg_alloc(mgr, size);
	return kzalloc(size, GFP_KERNEL);
}

static void amdgpu_peer_reg_kfree(struct amdgpu_peer_mgr *mgr,
				  struct amdgpu_peer_reg *reg)
{
	if (mgr->reg_free)
		mgr->reg_free(mgr, reg);
	else
		kfree(reg);
}

/* Process context: frees the client too if this was its last user. */
static void amdgpu_peer_reg_free(struct amdgpu_peer_reg *reg)
{
	struct amdgpu_peer_mgr *mgr = reg->mgr;
	struct amdgpu_peer_client *client;
	unsigned long flags;

	amdgpu_peer_lock(mgr, &flags);
	client = amdgpu_peer_client_unuse_locked(mgr, reg->client);
	amdgpu_peer_unlock(mgr, flags);
	amdgpu_peer_client_free(mgr, client);
	atomic_dec(&mgr->stats.regs);
	put_pid(reg->info.pid);
	amdgpu_peer_reg_kfree(mgr, reg);
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
 * Make @reg a tombstone. One whose callback has just returned (@cb) goes on
 * its client's list and counts against the bound, which may free it once it
 * is &amdgpu_peer_mgr.tombstone_min_ns old; one whose client was never told
 * (a persistent registration a revocation ended) stays until it is put.
 */
static void amdgpu_peer_tombstone_locked(struct amdgpu_peer_reg *reg, bool cb)
{
	struct amdgpu_peer_mgr *mgr = reg->mgr;

	lockdep_assert_held(&mgr->lock);
	reg->state = AMDGPU_PEER_TOMBSTONE;
	reg->owner = NULL;
	list_add_tail(&reg->link, &mgr->tombstones);
	atomic_inc(&mgr->stats.tombstones);
	if (!cb)
		return;
	reg->tomb_ns = amdgpu_peer_now(mgr);
	list_add_tail(&reg->client_link, &reg->client->tombs);
	reg->client->tombstones++;
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
	reg->dying_seq = ++reg->owner->dying_seq;
	list_add_tail(&reg->link, &reg->owner->dying);
	return true;
}

/* DYING or LIVE -> IN_CALLBACK, counted until amdgpu_peer_reg_call(). */
static void amdgpu_peer_reg_start_cb_locked(struct amdgpu_peer_reg *reg)
{
	lockdep_assert_held(&reg->mgr->lock);
	reg->state = AMDGPU_PEER_IN_CALLBACK;
	reg->owner_epoch = amdgpu_peer_epochs_begin_locked(&reg->owner->cbs);
	reg->pin->dev->busy++;
	reg->mgr_epoch = amdgpu_peer_epochs_begin_locked(&reg->mgr->cbs);
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
	u8 mgr_epoch = reg->mgr_epoch, owner_epoch = reg->owner_epoch;
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
		amdgpu_peer_tombstone_locked(reg, true);
	}
	amdgpu_peer_unlock(mgr, flags);

	if (pin)
		amdgpu_peer_pin_destroy(mgr, pin);
	if (put && !waited)
		amdgpu_peer_reg_free(reg);
	lock_map_release(&amdgpu_peer_cb_map);

	/*
	 * Only now, with the pin gone, does the callback count as done. The
	 * registration may be gone (put): only what was saved is used.
	 */
	amdgpu_peer_lock(mgr, &flags);
	owner->cbs.count[owner_epoch]--;
	dev->busy--;
	mgr->cbs.count[mgr_epoch]--;
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
	hash_init(mgr->clients);
	INIT_LIST_HEAD(&mgr->tombstones);
	amdgpu_peer_epochs_init(&mgr->cbs);
	mutex_init(&mgr->cbs.lock);
	INIT_LIST_HEAD(&mgr->running);
	init_waitqueue_head(&mgr->cb_wq);
	return 0;
}

/**
 * amdgpu_peer_mgr_synchronize - wait for callbacks and deferred releases
 * @mgr: the manager
 *
 * Waits until every release queued by amdgpu_peer_put() before the call has
 * run (which also drops the DMA device references those registrations
 * held), and every free callback that had begun by then, on any thread,
 * has returned. Callbacks that begin later are not waited for, so that
 * callbacks beginning all the time elsewhere cannot keep it from
 * returning.
 *
 * Context: process context; not from a free callback or the manager's
 * workqueue.
 */
void amdgpu_peer_mgr_synchronize(struct amdgpu_peer_mgr *mgr)
{
	might_sleep();
	amdgpu_peer_might_wait_cb(mgr);
	/* Work queued before this is waited for, work queued later is not */
	flush_workqueue(mgr->wq);
	amdgpu_peer_epochs_wait(mgr, &mgr->cbs);
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
	unsigned int k;
	u64 start;
	LIST_HEAD(tombs);

	destroy_workqueue(mgr->wq);
	do {
		amdgpu_peer_lock(mgr, &flags);
		start = ktime_get_ns();
		for (k = 0; k < AMDGPU_PEER_BATCH &&
		     !list_empty(&mgr->tombstones); k++) {
			reg = list_first_entry(&mgr->tombstones,
					       struct amdgpu_peer_reg, link);
			amdgpu_peer_reg_unhash_locked(reg);
			if (!list_empty(&reg->client_link)) {
				list_del_init(&reg->client_link);
				reg->client->tombstones--;
			}
			reg->state = AMDGPU_PEER_RELEASED;
			list_move_tail(&reg->link, &tombs);
		}
		amdgpu_peer_section_end_locked(mgr, k, start);
		amdgpu_peer_unlock(mgr, flags);
	} while (k == AMDGPU_PEER_BATCH);
	list_for_each_entry_safe(reg, tmp, &tombs, link) {
		atomic_dec(&mgr->stats.tombstones);
		amdgpu_peer_reg_free(reg);
	}
	WARN_ON(atomic_read(&mgr->stats.regs));
	WARN_ON(!hash_empty(mgr->pins));
	WARN_ON(!hash_empty(mgr->clients));
	mutex_destroy(&mgr->cbs.lock);
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
	mutex_init(&dev->walk_lock);
}

/*
 * One section of walk @gen over the registrations holding pins of @dev:
 * calls @fn on each registration it has not looked at yet, at most
 * %AMDGPU_PEER_BATCH pins and registrations in all. A pin or registration
 * looked at moves to the tail of its list and carries @gen, so the next
 * section starts again at the heads, however the lists changed while the
 * lock was dropped: what was removed is gone, what was added carries @gen
 * from the start (amdgpu_peer_pin_create(), amdgpu_peer_register()) and is
 * passed by. @fn returns true when the pin left the device (its last user
 * went). Returns true once the walk is done; *@entries is the number of
 * entries looked at.
 */
static bool amdgpu_peer_dev_walk_locked(struct amdgpu_peer_dev *dev,
					unsigned int gen,
					bool (*fn)(struct amdgpu_peer_reg *reg,
						   void *data),
					void *data, unsigned int *entries)
{
	struct amdgpu_peer_pin *pin;
	struct amdgpu_peer_reg *reg;
	unsigned int k = 0;
	bool gone, left;

	lockdep_assert_held(&dev->mgr->lock);
	while (k < AMDGPU_PEER_BATCH) {
		pin = list_first_entry_or_null(&dev->pins,
					       struct amdgpu_peer_pin, dev_link);
		if (!pin || pin->walk_gen == gen) {
			*entries = k;
			return true;
		}
		k++;
		gone = false;
		left = false;
		while (!gone) {
			reg = list_first_entry_or_null(&pin->regs,
						       struct amdgpu_peer_reg,
						       pin_link);
			if (!reg || reg->walk_gen == gen)
				break;
			if (k == AMDGPU_PEER_BATCH) {
				left = true;
				break;
			}
			k++;
			reg->walk_gen = gen;
			list_move_tail(&reg->pin_link, &pin->regs);
			gone = fn(reg, data);
		}
		if (!gone && !left) {
			pin->walk_gen = gen;
			list_move_tail(&pin->dev_link, &dev->pins);
		}
	}
	*entries = k;
	return false;
}

/*
 * Walk the registrations of @dev's pins with @fn, in sections (see
 * amdgpu_peer_dev_walk_locked()). @first runs under the lock of the first
 * section, before the walk.
 */
static void amdgpu_peer_dev_walk(struct amdgpu_peer_dev *dev,
				 void (*first)(struct amdgpu_peer_dev *dev),
				 bool (*fn)(struct amdgpu_peer_reg *reg,
					    void *data),
				 void *data)
{
	struct amdgpu_peer_mgr *mgr = dev->mgr;
	unsigned int gen, entries;
	unsigned long flags;
	bool done;
	u64 start;

	lockdep_assert_held(&dev->walk_lock);
	amdgpu_peer_lock(mgr, &flags);
	if (first)
		first(dev);
	gen = ++dev->walk_gen;
	for (;;) {
		start = ktime_get_ns();
		done = amdgpu_peer_dev_walk_locked(dev, gen, fn, data, &entries);
		amdgpu_peer_section_end_locked(mgr, entries, start);
		amdgpu_peer_unlock(mgr, flags);
		if (done)
			break;
		if (mgr->between_sections)
			mgr->between_sections(mgr);
		cond_resched();
		amdgpu_peer_lock(mgr, &flags);
	}
}

static bool amdgpu_peer_invalidate_one(struct amdgpu_peer_reg *reg, void *data)
{
	unsigned int *n = data;

	if (reg->state != AMDGPU_PEER_LIVE || !reg->free_cb)
		return false;
	amdgpu_peer_reg_detach_locked(reg);
	queue_work(reg->mgr->wq, &reg->owner->flush_work);
	(*n)++;
	return false;
}

/**
 * amdgpu_peer_dev_invalidate - detach every revocable registration of a
 * device's memory, and have its callback run from the workqueue
 * @dev: the device
 *
 * For a GPU reset: the DMA addresses of its memory may stop working, so
 * every client that asked for a callback gets one. Persistent registrations
 * stay, and so do registrations made while this runs. The callbacks run
 * asynchronously; the caller does not wait for them (a callback may wait
 * for locks or I/O the reset holds up). Until a callback returned its pin
 * stays, so nothing else is placed in that memory meanwhile. Interrupts
 * are off for at most %AMDGPU_PEER_BATCH entries at a time.
 *
 * Context: process context; takes a mutex that serialises it with
 * amdgpu_peer_dev_revoke(), and waits for no callback.
 * Return: the number of registrations detached.
 */
unsigned int amdgpu_peer_dev_invalidate(struct amdgpu_peer_dev *dev)
{
	struct amdgpu_peer_mgr *mgr = dev->mgr;
	unsigned int n = 0;

	might_sleep();
	mutex_lock(&dev->walk_lock);
	amdgpu_peer_dev_walk(dev, NULL, amdgpu_peer_invalidate_one, &n);
	mutex_unlock(&dev->walk_lock);
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

/* What a revocation collects while it walks */
struct amdgpu_peer_revoke {
	struct list_head unpins;
	struct list_head cbs;
};

static void amdgpu_peer_revoke_first(struct amdgpu_peer_dev *dev)
{
	dev->dead = true;
}

static bool amdgpu_peer_revoke_one(struct amdgpu_peer_reg *reg, void *data)
{
	struct amdgpu_peer_revoke *rv = data;
	struct amdgpu_peer_pin *pin = reg->pin, *last;

	switch (reg->state) {
	case AMDGPU_PEER_LIVE:
		if (reg->free_cb) {
			interval_tree_remove(&reg->it, &reg->owner->regs);
			break;
		}
		amdgpu_peer_reg_detach_locked(reg);
		fallthrough;
	case AMDGPU_PEER_DETACHED:
		/* Persistent: ended, with nobody to tell. */
		last = amdgpu_peer_reg_drop_pin_locked(reg);
		if (last)
			list_add_tail(&last->dev_link, &rv->unpins);
		amdgpu_peer_tombstone_locked(reg, false);
		atomic_inc(&reg->mgr->stats.revoked);
		return last == pin;
	case AMDGPU_PEER_DYING:
		list_del_init(&reg->link);
		break;
	default:
		/* A callback or a release elsewhere. */
		return false;
	}
	amdgpu_peer_reg_start_cb_locked(reg);
	list_add_tail(&reg->link, &rv->cbs);
	atomic_inc(&reg->mgr->stats.revoked);
	return false;
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
 * stay tombstones: their tables stay readable, amdgpu_peer_retry() says
 * true, and their put returns 0; those that had a callback are subject to
 * their client's bound like any tombstone, the persistent ones stay until
 * put. Interrupts are off for at most %AMDGPU_PEER_BATCH entries at a
 * time.
 *
 * Context: process context, may sleep; no lock a callback could take may
 * be held.
 */
void amdgpu_peer_dev_revoke(struct amdgpu_peer_dev *dev)
{
	struct amdgpu_peer_mgr *mgr = dev->mgr;
	struct amdgpu_peer_revoke rv = {
		.unpins = LIST_HEAD_INIT(rv.unpins),
		.cbs = LIST_HEAD_INIT(rv.cbs),
	};
	struct amdgpu_peer_pin *pin, *ptmp;
	struct amdgpu_peer_reg *reg, *tmp;

	might_sleep();
	amdgpu_peer_might_wait_cb(mgr);
	mutex_lock(&dev->walk_lock);
	amdgpu_peer_dev_walk(dev, amdgpu_peer_revoke_first,
			     amdgpu_peer_revoke_one, &rv);
	mutex_unlock(&dev->walk_lock);

	list_for_each_entry_safe(pin, ptmp, &rv.unpins, dev_link) {
		list_del_init(&pin->dev_link);
		amdgpu_peer_pin_destroy(mgr, pin);
	}
	list_for_each_entry_safe(reg, tmp, &rv.cbs, link) {
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
	amdgpu_peer_epochs_init(&owner->cbs);
	mutex_init(&owner->cbs.lock);
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
	idle = list_empty(&owner->dying) && !owner->cbs.count[0] &&
	       !owner->cbs.count[1];
	amdgpu_peer_unlock(owner->mgr, flags);
	return idle;
}

/**
 * amdgpu_peer_owner_flush - run the free callbacks of detached registrations
 * @owner: the owner
 *
 * Calls the free callback of every registration amdgpu_peer_invalidate()
 * detached before the call and nobody put, then unmaps and unpins. Returns
 * only after every callback of @owner's registrations that began before,
 * by this or another thread, has returned and its pin is gone. Call it
 * after dropping the locks held around amdgpu_peer_invalidate() and before
 * returning to user space. Registrations detached, and callbacks begun,
 * after the call are left to whoever detached them: another thread
 * unmapping all the time cannot keep it from returning.
 *
 * Context: process context, may sleep; no lock a callback could take may
 * be held; not from a free callback.
 */
void amdgpu_peer_owner_flush(struct amdgpu_peer_owner *owner)
{
	struct amdgpu_peer_mgr *mgr = owner->mgr;
	struct amdgpu_peer_reg *reg;
	unsigned long flags;
	u64 seq;

	might_sleep();
	amdgpu_peer_might_wait_cb(mgr);
	amdgpu_peer_lock(mgr, &flags);
	seq = owner->dying_seq;
	amdgpu_peer_unlock(mgr, flags);
	for (;;) {
		amdgpu_peer_lock(mgr, &flags);
		reg = list_first_entry_or_null(&owner->dying,
					       struct amdgpu_peer_reg, link);
		if (reg && reg->dying_seq <= seq) {
			list_del_init(&reg->link);
			amdgpu_peer_reg_start_cb_locked(reg);
		} else {
			reg = NULL;
		}
		amdgpu_peer_unlock(mgr, flags);
		if (!reg)
			break;
		amdgpu_peer_reg_call(reg);
	}
	amdgpu_peer_epochs_wait(mgr, &owner->cbs);
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
	struct amdgpu_peer_reg *reg;
	unsigned long flags;
	unsigned int n = 0, k;
	u64 start;

	might_sleep();
	do {
		amdgpu_peer_lock(mgr, &flags);
		start = ktime_get_ns();
		owner->dead = true;
		for (k = 0; k < AMDGPU_PEER_BATCH; k++) {
			it = interval_tree_iter_first(&owner->regs, 0, U64_MAX);
			if (!it)
				break;
			reg = container_of(it, struct amdgpu_peer_reg, it);
			amdgpu_peer_reg_detach_locked(reg);
		}
		amdgpu_peer_section_end_locked(mgr, k, start);
		amdgpu_peer_unlock(mgr, flags);
		n += k;
	} while (it);
	atomic_add(n, &mgr->stats.invalidated);

	cancel_work_sync(&owner->flush_work);
	amdgpu_peer_owner_flush(owner);
	/*
	 * A revocation may have begun callbacks of its registrations after
	 * the flush's epoch switch: nothing new joins a dead owner, so wait
	 * for all of them before it goes.
	 */
	wait_event(mgr->cb_wq, amdgpu_peer_owner_idle(owner));
	mutex_destroy(&owner->cbs.lock);
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

/*
 * A client whose gets are refused warns at most once in this time, so that
 * a client refused over and over does not flood the log.
 */
#define AMDGPU_PEER_WARN_INTERVAL_NS	(10 * NSEC_PER_SEC)

/* What making room under a client's bound did, for after the lock */
struct amdgpu_peer_room {
	/* tombstones freed to make room, RELEASED and unhashed */
	struct list_head reap;
	unsigned int reaped;
	/* a refusal to warn about */
	bool warn;
};

/*
 * Whether a get with @args's free callback may go on for @client: yes
 * below &amdgpu_peer_mgr.max_tombstones, or once the client's oldest
 * tombstones that are at least &amdgpu_peer_mgr.tombstone_min_ns old went
 * to @room->reap (as many as make it go below the bound, at most
 * %AMDGPU_PEER_BATCH; the caller frees them without the lock); no when
 * none is that old.
 */
static bool amdgpu_peer_client_room_locked(struct amdgpu_peer_mgr *mgr,
					   struct amdgpu_peer_client *client,
					   const struct amdgpu_peer_reg_args *args,
					   struct amdgpu_peer_room *room)
{
	struct amdgpu_peer_reg *reg;
	unsigned int k = 0;
	u64 now;

	lockdep_assert_held(&mgr->lock);
	if (!args->free_cb || !client || !mgr->max_tombstones ||
	    client->tombstones < mgr->max_tombstones)
		return true;
	now = amdgpu_peer_now(mgr);
	while (client->tombstones >= mgr->max_tombstones &&
	       k < AMDGPU_PEER_BATCH) {
		reg = list_first_entry(&client->tombs, struct amdgpu_peer_reg,
				       client_link);
		/* Signed: a clock that went back makes no tombstone old */
		if ((s64)(now - reg->tomb_ns) < (s64)mgr->tombstone_min_ns)
			break;
		list_del_init(&reg->client_link);
		client->tombstones--;
		reg->state = AMDGPU_PEER_RELEASED;
		amdgpu_peer_reg_unhash_locked(reg);
		list_move_tail(&reg->link, &room->reap);
		k++;
	}
	room->reaped += k;
	if (k)
		return true;
	atomic_inc(&mgr->stats.refused);
	if (!client->warned ||
	    now - client->warned_ns >= AMDGPU_PEER_WARN_INTERVAL_NS) {
		client->warned = true;
		client->warned_ns = now;
		room->warn = true;
	}
	return false;
}

/*
 * After the lock: free the tombstones freed to make room for a get for
 * @dma_dev, and warn about a refusal.
 */
static void amdgpu_peer_room_done(struct amdgpu_peer_mgr *mgr,
				  struct device *dma_dev,
				  struct amdgpu_peer_room *room)
{
	struct amdgpu_peer_reg *reg, *tmp;

	list_for_each_entry_safe(reg, tmp, &room->reap, link) {
		list_del_init(&reg->link);
		atomic_dec(&mgr->stats.tombstones);
		atomic_inc(&mgr->stats.reclaimed);
		amdgpu_peer_reg_free(reg);
	}
	if (room->reaped)
		dev_dbg(dma_dev,
			"amdgpu peer memory: freed %u registrations not put, whose free callback returned at least %llu ms ago\n",
			room->reaped, mgr->tombstone_min_ns / NSEC_PER_MSEC);
	room->reaped = 0;
	if (room->warn) {
		atomic_inc(&mgr->stats.refusal_warnings);
		dev_warn(dma_dev,
			 "amdgpu peer memory: get_pages() refused (-EAGAIN): %u registrations of this device whose free callback returned less than %llu ms ago were not put\n",
			 mgr->max_tombstones,
			 mgr->tombstone_min_ns / NSEC_PER_MSEC);
		room->warn = false;
	}
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
 * The peer DMA device is the registration's client (see the DOC comment):
 * while it has &amdgpu_peer_mgr.max_tombstones tombstones, a registration
 * with a free callback first frees the client's oldest ones that are at
 * least &amdgpu_peer_mgr.tombstone_min_ns old, and is refused, before
 * anything is pinned and leaving no state behind, if none is; a refusal
 * warns, at most once per client every 10 seconds. A client's record is
 * allocated here, outside the lock, at its first registration.
 *
 * Context: process context, may sleep. Takes no sleeping lock itself.
 * Return: 0 and *@info set; %AMDGPU_PEER_NEED_PIN without @args->may_pin
 * when no pin exists yet (the caller takes the object's lock and calls
 * again with @args->may_pin); or a negative errno and *@info untouched:
 * -EAGAIN, with a free callback, at the client's tombstone bound while
 * its tombstones are all younger than &amdgpu_peer_mgr.tombstone_min_ns,
 * -ENOSPC over the device's quota, -ESRCH if @owner is being destroyed,
 * -ENODEV if the device was revoked, -EFAULT if the range is outside the
 * object, -ENOMEM, or the pin's error. @undo may have entries after a
 * failure, never after a success: pass it to amdgpu_peer_register_undo()
 * after either.
 */
int amdgpu_peer_register(struct amdgpu_peer_owner *owner,
			 const struct amdgpu_peer_reg_args *args,
			 struct amd_p2p_info **info, struct list_head *undo)
{
	struct amdgpu_peer_client *client, *spare = NULL, *gone;
	struct amdgpu_peer_mgr *mgr = owner->mgr;
	struct amdgpu_peer_room room = {
		.reap = LIST_HEAD_INIT(room.reap),
	};
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
	client = amdgpu_peer_client_find_locked(mgr, args->dma_dev);
	if (owner->dead) {
		r = -ESRCH;
	} else if (pin && pin->dev->dead) {
		r = -ENODEV;
	} else if (!pin && args->may_pin && args->dev &&
		   args->dev->mgr == mgr && args->dev->dead) {
		/* Before the bound and quota: -ENOSPC makes hfi1 evict */
		r = -ENODEV;
	} else if (!amdgpu_peer_client_room_locked(mgr, client, args,
						   &room)) {
		/* Transient: within min_ns its oldest tombstone is old enough */
		r = -EAGAIN;
	} else if (pin) {
		pin->users++;
		pin->dev->busy++;
	} else if (!args->may_pin) {
		r = AMDGPU_PEER_NEED_PIN;
	} else if (args->dev && args->dev->mgr == mgr) {
		/* As it is now: do not pin only to unpin again */
		r = amdgpu_peer_may_charge_locked(owner, args->dev,
						  args->length);
	}
	/* The client stays until this registration is freed or given up */
	if (!r && client)
		client->users++;
	amdgpu_peer_unlock(mgr, flags);
	amdgpu_peer_room_done(mgr, args->dma_dev, &room);
	if (r)
		return r;

	if (!client) {
		spare = kzalloc(sizeof(*spare), GFP_KERNEL);
		if (!spare) {
			r = -ENOMEM;
			if (pin)
				goto err_pin;
			return r;
		}
		atomic_inc(&mgr->stats.allocs);
	}
	if (!pin) {
		pin = amdgpu_peer_pin_create(mgr, args, undo);
		if (IS_ERR(pin)) {
			amdgpu_peer_lock(mgr, &flags);
			gone = amdgpu_peer_client_unuse_locked(mgr, client);
			amdgpu_peer_unlock(mgr, flags);
			amdgpu_peer_client_free(mgr, gone);
			kfree(spare);
			return PTR_ERR(pin);
		}
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

	reg = amdgpu_peer_reg_kzalloc(mgr, struct_size(reg, sgl, n));
	if (!reg) {
		r = -ENOMEM;
		goto err_pin;
	}
	atomic_inc(&mgr->stats.allocs);
	reg->mgr = mgr;
	reg->it.start = args->first;
	reg->it.last = args->last;
	INIT_LIST_HEAD(&reg->link);
	INIT_LIST_HEAD(&reg->client_link);
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
	if (!client) {
		/* Another first registration for the device may have won */
		client = amdgpu_peer_client_find_locked(mgr, args->dma_dev);
		if (client) {
			client->users++;
		} else {
			client = spare;
			spare = NULL;
			client->dma_dev = get_device(args->dma_dev);
			client->users = 1;
			INIT_LIST_HEAD(&client->tombs);
			hash_add(mgr->clients, &client->node,
				 (unsigned long)client->dma_dev);
			atomic_inc(&mgr->stats.clients);
		}
	}
	r = amdgpu_peer_may_charge_locked(owner, dev, args->length);
	/* Its callbacks may have made tombstones while this one pinned */
	if (!r && !amdgpu_peer_client_room_locked(mgr, client, args, &room))
		r = -EAGAIN;
	if (r) {
		amdgpu_peer_unlock(mgr, flags);
		amdgpu_peer_room_done(mgr, args->dma_dev, &room);
		amdgpu_peer_reg_kfree(mgr, reg);
		goto err_pin;
	}
	reg->info.pid = get_pid(args->pid);
	dev->charged += args->length;
	reg->charge = args->length;
	reg->pin = pin;
	reg->owner = owner;
	reg->client = client;
	reg->state = AMDGPU_PEER_LIVE;
	/* A walk of the device's pins under way passes it by */
	reg->walk_gen = dev->walk_gen;
	interval_tree_insert(&reg->it, &owner->regs);
	list_add_tail(&reg->pin_link, &pin->regs);
	hash_add(mgr->regs, &reg->hnode, (unsigned long)&reg->info);
	*info = &reg->info;
	dev->busy--;
	atomic_inc(&mgr->stats.regs);
	amdgpu_peer_unlock(mgr, flags);
	amdgpu_peer_room_done(mgr, args->dma_dev, &room);
	/* Not needed if another first registration made the record */
	kfree(spare);
	if (wq_has_sleeper(&mgr->cb_wq))
		wake_up_all(&mgr->cb_wq);
	return 0;

err_pin:
	amdgpu_peer_lock(mgr, &flags);
	last = amdgpu_peer_pin_unuse_locked(mgr, pin);
	/* The last user's busy count goes with the unpin: see above */
	if (!last)
		pin->dev->busy--;
	gone = amdgpu_peer_client_unuse_locked(mgr, client);
	amdgpu_peer_unlock(mgr, flags);
	amdgpu_peer_client_free(mgr, gone);
	kfree(spare);
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
 * Costs O(k log n) for k detached of n registrations, with interrupts off
 * for at most %AMDGPU_PEER_BATCH of them at a time.
 *
 * Context: any; takes the manager's irq-safe spinlock.
 * Return: the number of registrations detached.
 */
unsigned int amdgpu_peer_invalidate(struct amdgpu_peer_owner *owner,
				    u64 first, u64 last)
{
	struct amdgpu_peer_mgr *mgr = owner->mgr;
	unsigned int n = 0, dying = 0, k;
	struct interval_tree_node *it;
	unsigned long flags;
	u64 start;

	/*
	 * In sections: what was detached left the tree, so each section
	 * starts again with a query of the range.
	 */
	do {
		amdgpu_peer_lock(mgr, &flags);
		start = ktime_get_ns();
		for (k = 0; k < AMDGPU_PEER_BATCH; k++) {
			it = interval_tree_iter_first(&owner->regs, first, last);
			if (!it)
				break;
			dying += amdgpu_peer_reg_detach_locked(container_of(it,
						struct amdgpu_peer_reg, it));
		}
		if (!it && dying && !owner->dead && !mgr->no_backstop)
			queue_work(mgr->wq, &owner->flush_work);
		amdgpu_peer_section_end_locked(mgr, k, start);
		amdgpu_peer_unlock(mgr, flags);
		n += k;
	} while (it);

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
 * manager before anything of it is touched. No registration is freed
 * before its put but a tombstone at least &amdgpu_peer_mgr.tombstone_min_ns
 * old (see the DOC comment), so the address of one that was not put is
 * never another's while its callback has not run or returned less than
 * that long ago: such a put releases the registration it was given and no
 * other. A second put is recognised while the registration still exists
 * (its callback is running) and returns 0. A put of a tombstone makes room
 * under its client's tombstone bound at once. A put of a registration whose
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
		if (!list_empty(&reg->client_link)) {
			list_del_init(&reg->client_link);
			reg->client->tombstones--;
		}
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
		amdgpu_peer_might_wait_cb(mgr);
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
 * know as not yet put. The registration is found by the address @info:
 * that is sound because no registration is freed before it is put but a
 * tombstone whose callback returned &amdgpu_peer_mgr.tombstone_min_ns ago,
 * so the address of one the caller has not put is not another
 * registration's until then (see the DOC comment; a caller that asks
 * after its put, or that long after the callback, may be told about
 * whatever registration now lives there). A persistent registration whose
 * mapping went (DETACHED) stays pinned and mapped: false. The state
 * changes under the manager's lock before the callback is called, so a
 * client that asks under a lock its callback takes learns of every
 * callback that did not find its NIC programmed.
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
