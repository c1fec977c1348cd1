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
 * range (the VM mapping a registration was found through), and a manager
 * shares one pin per (object, DMA device) between registrations.
 *
 * A registration moves through these states, all changed under the owner's
 * irq-safe spinlock:
 *
 * - LIVE: in the owner's interval tree. amdgpu_peer_invalidate() (called by
 *   the path that removes the mapping, under that path's locks) moves it to
 *   the owner's dying list: DYING.
 * - DYING: amdgpu_peer_owner_flush(), called by the same path after it
 *   dropped its locks (or the backstop worker), takes it off the list:
 *   IN_CALLBACK, and calls the free callback without any lock but the
 *   owner's callback mutex. When the callback returns, the pages are
 *   unmapped and unpinned, and the registration becomes a TOMBSTONE on the
 *   owner's list, or is freed if the client put it meanwhile.
 * - TOMBSTONE: only the &struct amd_p2p_info is left, pages NULL, so that a
 *   late put is harmless. Freed by that put or by amdgpu_peer_owner_fini().
 * - GONE: amdgpu_peer_owner_fini() is freeing the tombstone. A put that
 *   raced the callback and still holds the pointer finds this state and
 *   does nothing; the owner waits for such puts (an RCU grace period)
 *   before it frees the tombstones and before the owner itself can go.
 * - RELEASED: put. The sleeping part of the release runs on the manager's
 *   workqueue, so amdgpu_peer_put() never blocks.
 *
 * A put of a LIVE or DYING registration releases it without a callback; a
 * put during the callback is recorded and honoured when the callback
 * returns.
 */

#include <linux/device.h>
#include <linux/log2.h>
#include <linux/pid.h>
#include <linux/rcupdate.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>

#include "amdgpu_peer_reg.h"

enum amdgpu_peer_reg_state {
	AMDGPU_PEER_LIVE,
	AMDGPU_PEER_DYING,
	AMDGPU_PEER_IN_CALLBACK,
	AMDGPU_PEER_TOMBSTONE,
	AMDGPU_PEER_RELEASED,
	AMDGPU_PEER_GONE,
};

/*
 * A pin and DMA mapping of one object for one DMA device, shared by all
 * registrations of that pair.
 */
struct amdgpu_peer_pin {
	struct hlist_node node;		/* in mgr->pins, under mgr->pin_lock */
	void *obj;
	struct device *dma_dev;
	struct sg_table *sgt;
	u64 size;
	unsigned int users;		/* under mgr->pin_lock */
};

struct amdgpu_peer_reg {
	struct amd_p2p_info info;
	struct amdgpu_peer_owner *owner;
	struct amdgpu_peer_mgr *mgr;
	/* node in owner->regs while LIVE */
	struct interval_tree_node it;
	/* on owner->dying or owner->tombstones */
	struct list_head link;
	enum amdgpu_peer_reg_state state;
	bool put_pending;
	/* set once pages, pin and dma_dev are dropped */
	bool dropped;
	struct amdgpu_peer_pin *pin;
	struct sg_table *view;
	struct device *dma_dev;
	void (*free_cb)(void *client_priv);
	void *client_priv;
	struct work_struct release_work;
};

static void amdgpu_peer_pin_put(struct amdgpu_peer_mgr *mgr,
				struct amdgpu_peer_pin *pin)
{
	bool last;

	mutex_lock(&mgr->pin_lock);
	last = !--pin->users;
	if (last) {
		hash_del(&pin->node);
		mgr->pinned -= pin->size;
	}
	mutex_unlock(&mgr->pin_lock);
	if (!last)
		return;

	/* Outside pin_lock: unpin takes the object's reservation. */
	mgr->ops->unpin(mgr, pin->obj, pin->dma_dev, pin->sgt);
	atomic_inc(&mgr->stats.unpins);
	put_device(pin->dma_dev);
	kfree(pin);
}

static struct amdgpu_peer_pin *
amdgpu_peer_pin_get(struct amdgpu_peer_mgr *mgr, void *obj, u64 size,
		    struct device *dma_dev)
{
	struct amdgpu_peer_pin *pin;
	int r;

	mutex_lock(&mgr->pin_lock);
	hash_for_each_possible(mgr->pins, pin, node, (unsigned long)obj) {
		if (pin->obj == obj && pin->dma_dev == dma_dev) {
			pin->users++;
			goto out;
		}
	}

	if (size > mgr->quota || mgr->pinned > mgr->quota - size) {
		pin = ERR_PTR(-ENOSPC);
		goto out;
	}
	pin = kzalloc(sizeof(*pin), GFP_KERNEL);
	if (!pin) {
		pin = ERR_PTR(-ENOMEM);
		goto out;
	}
	r = mgr->ops->pin(mgr, obj, dma_dev, &pin->sgt);
	if (r) {
		kfree(pin);
		pin = ERR_PTR(r);
		goto out;
	}
	atomic_inc(&mgr->stats.pins);
	pin->obj = obj;
	pin->dma_dev = get_device(dma_dev);
	pin->size = size;
	pin->users = 1;
	mgr->pinned += size;
	hash_add(mgr->pins, &pin->node, (unsigned long)obj);
out:
	mutex_unlock(&mgr->pin_lock);
	return pin;
}

/*
 * Build the DMA-only table of [offset, offset + length) of the pinned
 * object. It describes a part of the shared mapping and maps nothing.
 */
static struct sg_table *amdgpu_peer_view(struct sg_table *src, u64 offset,
					 u64 length)
{
	u64 end = offset + length, pos = 0;
	struct scatterlist *s, *d;
	struct sg_table *sgt;
	unsigned int n = 0;
	int i;

	for_each_sgtable_dma_sg(src, s, i) {
		u64 len = sg_dma_len(s);

		if (pos + len > offset && pos < end)
			n++;
		pos += len;
	}
	if (!n || pos < end)
		return ERR_PTR(-EFAULT);

	sgt = kzalloc(sizeof(*sgt), GFP_KERNEL);
	if (!sgt)
		return ERR_PTR(-ENOMEM);
	if (sg_alloc_table(sgt, n, GFP_KERNEL)) {
		kfree(sgt);
		return ERR_PTR(-ENOMEM);
	}

	pos = 0;
	d = sgt->sgl;
	for_each_sgtable_dma_sg(src, s, i) {
		u64 len = sg_dma_len(s);
		u64 from = max(pos, offset), to = min(pos + len, end);

		if (from < to) {
			sg_set_page(d, NULL, to - from, 0);
			sg_dma_address(d) = sg_dma_address(s) + (from - pos);
			sg_dma_len(d) = to - from;
			d = sg_next(d);
		}
		pos += len;
	}
	return sgt;
}

static void amdgpu_peer_view_free(struct sg_table *sgt)
{
	sg_free_table(sgt);
	kfree(sgt);
}

/* Drop what makes a registration usable: the view, the pin, the device. */
static void amdgpu_peer_reg_drop(struct amdgpu_peer_reg *reg)
{
	if (reg->dropped)
		return;
	reg->dropped = true;
	amdgpu_peer_view_free(reg->view);
	reg->view = NULL;
	amdgpu_peer_pin_put(reg->mgr, reg->pin);
	reg->pin = NULL;
	put_device(reg->dma_dev);
}

static void amdgpu_peer_reg_free(struct amdgpu_peer_reg *reg)
{
	atomic_dec(&reg->mgr->stats.regs);
	put_pid(reg->info.pid);
	kfree(reg);
}

static void amdgpu_peer_release_work(struct work_struct *work)
{
	struct amdgpu_peer_reg *reg =
		container_of(work, struct amdgpu_peer_reg, release_work);

	amdgpu_peer_reg_drop(reg);
	amdgpu_peer_reg_free(reg);
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
 * @quota: bytes that may be pinned at once; more gets -ENOSPC
 *
 * Return: 0 or -ENOMEM.
 */
int amdgpu_peer_mgr_init(struct amdgpu_peer_mgr *mgr,
			 const struct amdgpu_peer_pin_ops *ops, u64 quota)
{
	memset(mgr, 0, sizeof(*mgr));
	mgr->wq = alloc_workqueue("amdgpu_peer", WQ_UNBOUND, 0);
	if (!mgr->wq)
		return -ENOMEM;
	mgr->ops = ops;
	mgr->quota = quota;
	mutex_init(&mgr->pin_lock);
	hash_init(mgr->pins);
	return 0;
}

/**
 * amdgpu_peer_mgr_flush - wait for the deferred releases queued so far
 * @mgr: the manager
 *
 * Waits for every release queued by amdgpu_peer_put() before the call,
 * which also drops the DMA device references those registrations held.
 *
 * Context: process context; not from a free callback or the manager's
 * workqueue.
 */
void amdgpu_peer_mgr_flush(struct amdgpu_peer_mgr *mgr)
{
	flush_workqueue(mgr->wq);
}

/**
 * amdgpu_peer_mgr_fini - tear a manager down
 * @mgr: the manager
 *
 * Every owner must have been finished. Waits for the deferred releases and
 * warns about registrations or pins that are left.
 */
void amdgpu_peer_mgr_fini(struct amdgpu_peer_mgr *mgr)
{
	destroy_workqueue(mgr->wq);
	WARN_ON(atomic_read(&mgr->stats.regs));
	WARN_ON(!hash_empty(mgr->pins));
	mutex_destroy(&mgr->pin_lock);
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
	bool found = false;

	mutex_lock(&mgr->pin_lock);
	hash_for_each_possible(mgr->pins, pin, node, (unsigned long)obj)
		found |= pin->obj == obj;
	mutex_unlock(&mgr->pin_lock);
	return found;
}

/**
 * amdgpu_peer_sgt_page_size - contiguity of a DMA mapping
 * @sgt: DMA-mapped table
 *
 * A chunk size P describes the mapping if every segment's DMA address is
 * P-aligned and every segment but the last is a multiple of P long. The
 * chunks must also lie in the mapping: P is at most the longest segment,
 * however well its address happens to be aligned.
 *
 * Return: the largest such power of two, at least PAGE_SIZE.
 */
unsigned long amdgpu_peer_sgt_page_size(struct sg_table *sgt)
{
	struct scatterlist *s;
	u64 bits = 0, longest = 0;
	int i;

	for_each_sgtable_dma_sg(sgt, s, i) {
		bits |= sg_dma_address(s);
		if (i + 1 < sgt->nents)
			bits |= sg_dma_len(s);
		longest = max_t(u64, longest, sg_dma_len(s));
	}
	if (longest)
		bits |= rounddown_pow_of_two(longest);
	if (!bits)
		return PAGE_SIZE;
	return max_t(unsigned long, PAGE_SIZE, 1UL << __ffs64(bits));
}

/**
 * amdgpu_peer_mgr_page_size - contiguity of an object's current pin
 * @mgr: the manager
 * @obj: the object
 *
 * Return: amdgpu_peer_sgt_page_size() of a pin of @obj, or 0 if it has none.
 */
unsigned long amdgpu_peer_mgr_page_size(struct amdgpu_peer_mgr *mgr,
					void *obj)
{
	struct amdgpu_peer_pin *pin;
	unsigned long size = 0;

	mutex_lock(&mgr->pin_lock);
	hash_for_each_possible(mgr->pins, pin, node, (unsigned long)obj) {
		if (pin->obj == obj) {
			size = amdgpu_peer_sgt_page_size(pin->sgt);
			break;
		}
	}
	mutex_unlock(&mgr->pin_lock);
	return size;
}

/**
 * amdgpu_peer_owner_init - initialise an owner of registrations
 * @owner: the owner
 * @mgr: the manager its registrations pin through
 */
void amdgpu_peer_owner_init(struct amdgpu_peer_owner *owner,
			    struct amdgpu_peer_mgr *mgr)
{
	owner->mgr = mgr;
	spin_lock_init(&owner->lock);
	owner->regs = RB_ROOT_CACHED;
	INIT_LIST_HEAD(&owner->dying);
	INIT_LIST_HEAD(&owner->tombstones);
	owner->dead = false;
	mutex_init(&owner->cb_lock);
	INIT_WORK(&owner->flush_work, amdgpu_peer_flush_work);
}

/**
 * amdgpu_peer_owner_flush - run the free callbacks of detached registrations
 * @owner: the owner
 *
 * Calls the free callback of every registration amdgpu_peer_invalidate()
 * detached and nobody put, then unmaps and unpins. Returns only after every
 * callback of @owner that was started before, by this or another thread,
 * has returned. Call it after dropping the locks held around
 * amdgpu_peer_invalidate() and before returning to user space.
 *
 * Context: process context, may sleep; no lock a callback could take may
 * be held; not from a free callback.
 */
void amdgpu_peer_owner_flush(struct amdgpu_peer_owner *owner)
{
	struct amdgpu_peer_reg *reg;
	unsigned long flags;
	bool put;

	might_sleep();
	mutex_lock(&owner->cb_lock);
	for (;;) {
		spin_lock_irqsave(&owner->lock, flags);
		reg = list_first_entry_or_null(&owner->dying,
					       struct amdgpu_peer_reg, link);
		if (reg) {
			list_del_init(&reg->link);
			reg->state = AMDGPU_PEER_IN_CALLBACK;
		}
		spin_unlock_irqrestore(&owner->lock, flags);
		if (!reg)
			break;

		if (reg->free_cb) {
			reg->free_cb(reg->client_priv);
			atomic_inc(&owner->mgr->stats.callbacks);
		}

		/*
		 * The client has stopped using the pages: take them away
		 * before anyone can see the tombstone, so that a put racing
		 * with this does not drop them twice.
		 */
		WRITE_ONCE(reg->info.pages, NULL);
		amdgpu_peer_reg_drop(reg);

		spin_lock_irqsave(&owner->lock, flags);
		put = reg->put_pending;
		if (put) {
			reg->state = AMDGPU_PEER_RELEASED;
		} else {
			reg->state = AMDGPU_PEER_TOMBSTONE;
			list_add_tail(&reg->link, &owner->tombstones);
		}
		spin_unlock_irqrestore(&owner->lock, flags);
		if (put)
			amdgpu_peer_reg_free(reg);
	}
	mutex_unlock(&owner->cb_lock);
}

/**
 * amdgpu_peer_owner_fini - tear an owner down
 * @owner: the owner
 *
 * Detaches every live registration, runs the callbacks, and frees the
 * tombstones: a client that never put leaks nothing past the owner. After
 * this, the &struct amd_p2p_info of @owner's registrations are gone.
 *
 * Context: process context, may sleep; no lock a callback could take may
 * be held.
 */
void amdgpu_peer_owner_fini(struct amdgpu_peer_owner *owner)
{
	struct amdgpu_peer_reg *reg, *tmp;
	unsigned long flags;
	LIST_HEAD(tombs);

	spin_lock_irqsave(&owner->lock, flags);
	owner->dead = true;
	spin_unlock_irqrestore(&owner->lock, flags);
	amdgpu_peer_invalidate(owner, 0, U64_MAX);
	cancel_work_sync(&owner->flush_work);
	amdgpu_peer_owner_flush(owner);

	spin_lock_irqsave(&owner->lock, flags);
	list_for_each_entry(reg, &owner->tombstones, link)
		reg->state = AMDGPU_PEER_GONE;
	list_splice_init(&owner->tombstones, &tombs);
	spin_unlock_irqrestore(&owner->lock, flags);
	/*
	 * A put that started while its callback ran may not have reached
	 * @owner's lock yet: amdgpu_peer_put() looks at the registration
	 * and @owner under rcu_read_lock(), so wait for it.
	 */
	if (!list_empty(&tombs))
		synchronize_rcu();
	list_for_each_entry_safe(reg, tmp, &tombs, link)
		amdgpu_peer_reg_free(reg);
	mutex_destroy(&owner->cb_lock);
}

/**
 * amdgpu_peer_register - register memory for a peer device
 * @owner: the owner the registration hangs off
 * @args: what to register
 * @info: where to return the registration
 *
 * Shares or creates the pin of (@args->obj, @args->dma_dev) and builds the
 * DMA table of the asked range. The caller must hold the locks that
 * serialise it against amdgpu_peer_invalidate() of the key range (for
 * amdgpu: the VM root reservation), so that a registration is never
 * added to a mapping that is already gone.
 *
 * Context: process context, may sleep.
 * Return: 0 and *@info set, or a negative errno and *@info untouched:
 * -ENOSPC over quota, -ESRCH if @owner is being torn down, -EFAULT if the
 * range is outside the object, -ENOMEM, or the pin's error.
 */
int amdgpu_peer_register(struct amdgpu_peer_owner *owner,
			 const struct amdgpu_peer_reg_args *args,
			 struct amd_p2p_info **info)
{
	struct amdgpu_peer_mgr *mgr = owner->mgr;
	struct amdgpu_peer_reg *reg;
	unsigned long flags;
	int r;

	if (!args->length || args->offset + args->length < args->offset ||
	    args->offset + args->length > args->obj_size ||
	    args->first > args->last)
		return -EFAULT;

	reg = kzalloc(sizeof(*reg), GFP_KERNEL);
	if (!reg)
		return -ENOMEM;
	reg->owner = owner;
	reg->mgr = mgr;
	reg->it.start = args->first;
	reg->it.last = args->last;
	INIT_LIST_HEAD(&reg->link);
	INIT_WORK(&reg->release_work, amdgpu_peer_release_work);
	reg->free_cb = args->free_cb;
	reg->client_priv = args->client_priv;

	reg->pin = amdgpu_peer_pin_get(mgr, args->obj, args->obj_size,
				       args->dma_dev);
	if (IS_ERR(reg->pin)) {
		r = PTR_ERR(reg->pin);
		goto err_free;
	}
	reg->view = amdgpu_peer_view(reg->pin->sgt, args->offset,
				     args->length);
	if (IS_ERR(reg->view)) {
		r = PTR_ERR(reg->view);
		goto err_unpin;
	}
	reg->dma_dev = get_device(args->dma_dev);
	reg->info.va = args->va;
	reg->info.size = args->length;
	reg->info.pid = get_pid(args->pid);
	reg->info.pages = reg->view;
	reg->info.priv = reg;
	atomic_inc(&mgr->stats.regs);

	spin_lock_irqsave(&owner->lock, flags);
	if (owner->dead) {
		spin_unlock_irqrestore(&owner->lock, flags);
		amdgpu_peer_reg_drop(reg);
		amdgpu_peer_reg_free(reg);
		return -ESRCH;
	}
	reg->state = AMDGPU_PEER_LIVE;
	interval_tree_insert(&reg->it, &owner->regs);
	spin_unlock_irqrestore(&owner->lock, flags);

	*info = &reg->info;
	return 0;

err_unpin:
	amdgpu_peer_pin_put(mgr, reg->pin);
err_free:
	kfree(reg);
	return r;
}

/**
 * amdgpu_peer_invalidate - detach the registrations of a key range
 * @owner: the owner
 * @first: first page of the range
 * @last: last page of the range, inclusive
 *
 * Called by a path removing a mapping, under its locks. Moves every live
 * registration whose key range overlaps [@first, @last] to the dying list;
 * the path then calls amdgpu_peer_owner_flush() after dropping its locks.
 * If it does not, a worker runs the callbacks. Costs O(k log n) for k
 * detached of n registrations.
 *
 * Context: any; takes @owner's irq-safe spinlock.
 * Return: the number of registrations detached.
 */
unsigned int amdgpu_peer_invalidate(struct amdgpu_peer_owner *owner,
				    u64 first, u64 last)
{
	struct interval_tree_node *it;
	struct amdgpu_peer_reg *reg;
	unsigned long flags;
	unsigned int n = 0;

	spin_lock_irqsave(&owner->lock, flags);
	while ((it = interval_tree_iter_first(&owner->regs, first, last))) {
		reg = container_of(it, struct amdgpu_peer_reg, it);
		interval_tree_remove(it, &owner->regs);
		reg->state = AMDGPU_PEER_DYING;
		list_add_tail(&reg->link, &owner->dying);
		n++;
	}
	if (n && !owner->dead)
		queue_work(owner->mgr->wq, &owner->flush_work);
	spin_unlock_irqrestore(&owner->lock, flags);

	atomic_add(n + 1, &owner->mgr->stats.visited);
	atomic_add(n, &owner->mgr->stats.invalidated);
	return n;
}

/**
 * amdgpu_peer_put - give a registration back
 * @info: the registration; set to NULL
 *
 * See &amd_rdma_interface.put_pages.
 *
 * Context: any; never blocks.
 * Return: 0, or -EINVAL for a NULL @info or *@info.
 */
int amdgpu_peer_put(struct amd_p2p_info **info)
{
	struct amdgpu_peer_owner *owner;
	struct amdgpu_peer_reg *reg;
	unsigned long flags;
	bool release = true;

	if (!info || !*info)
		return -EINVAL;
	/* Keeps a tombstone and its owner while amdgpu_peer_owner_fini() runs. */
	rcu_read_lock();
	reg = container_of(*info, struct amdgpu_peer_reg, info);
	owner = reg->owner;

	spin_lock_irqsave(&owner->lock, flags);
	switch (reg->state) {
	case AMDGPU_PEER_LIVE:
		interval_tree_remove(&reg->it, &owner->regs);
		break;
	case AMDGPU_PEER_DYING:
	case AMDGPU_PEER_TOMBSTONE:
		list_del_init(&reg->link);
		break;
	case AMDGPU_PEER_IN_CALLBACK:
		reg->put_pending = true;
		release = false;
		break;
	case AMDGPU_PEER_GONE:
		/* Raced the owner's teardown, which frees it. */
		release = false;
		break;
	default:
		WARN_ONCE(1, "amdgpu: peer memory registration put twice\n");
		release = false;
		break;
	}
	if (release)
		reg->state = AMDGPU_PEER_RELEASED;
	spin_unlock_irqrestore(&owner->lock, flags);

	if (release)
		queue_work(reg->mgr->wq, &reg->release_work);
	rcu_read_unlock();
	*info = NULL;
	return 0;
}
