// SPDX-License-Identifier: MIT
/*
 * Copyright 2026 The amdgpu profiler series authors
 *
 * The peer memory clients as they are written today, modelled call for
 * call from their sources, against the real rdma_get_pages() glue and the
 * real VM teardown paths of the fake GPU in amdgpu_rdma_fake.c:
 *
 * - hfi1's SDMA pin cache, drivers/infiniband/hw/hfi1/pin_amd.c of
 *   cornelisnetworks/opa-distro-drivers: the older code (b99877e, rhel9.4)
 *   that passes the free callback remove_amd_pages(), with its cache off
 *   (its default there) and on, and the current code (5e315a0) that passes
 *   NULL and watches the CPU range with an mmu_interval_notifier;
 * - HPE cxi, drivers/net/ethernet/hpe/ss1/cass_amd_gpu.c with the map
 *   sequence of cass_atu.c (cxi_map()) and cass_nta.c
 *   (cass_mirror_device()) of HewlettPackard/shs-cxi-driver.
 *
 * The models are written from reading those files; no code is copied.
 * Each comment names the client function a step models. Each scenario
 * ends with what the NIC would put on the wire for the virtual address
 * after the application freed the buffer and a new one was allocated at
 * the same address, checked against the new buffer's DMA addresses.
 *
 * The application is ROCm's: hipMalloc() maps a BO at the same GPU and CPU
 * virtual address; hipFree() (libhsakmt) unmaps it from the GPU (KFD unmap
 * ioctl), frees it (KFD free ioctl) and only then munmaps the CPU range.
 */

#include <kunit/test.h>
#include <linux/completion.h>
#include <linux/delay.h>
#include <linux/hrtimer.h>
#include <linux/interval_tree.h>
#include <linux/kref.h>
#include <linux/mm.h>
#include <linux/mman.h>
#include <linux/mmu_notifier.h>
#include <linux/mutex.h>
#include <linux/pid.h>
#include <linux/refcount.h>
#include <linux/scatterlist.h>
#include <linux/sched.h>
#include <linux/sizes.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/workqueue.h>
#include <drm/amd_rdma.h>

#include "amdgpu.h"
#include "amdgpu_peer_reg.h"
#include "amdgpu_rdma.h"
#include "amdgpu_vm.h"
#include "kfd_priv.h"
#include "tests/amdgpu_kunit_helpers.h"
#include "tests/amdgpu_rdma_fake.h"

/* ---------------------------------------------------------------------- */
/* The application (ROCm) */

struct app_buf {
	struct rdma_fake_bo *bo;
	u64 va;
	u64 size;
	/* the CPU mapping at the same address (current hfi1 watches it) */
	bool cpu_mapped;
};

/*
 * hipMalloc(): a BO mapped into the process's GPU VM; with @cpu, also a
 * CPU mapping at the same address (libhsakmt mmap()s it).
 */
static void app_malloc(struct kunit *test, struct rdma_fake *f,
		       struct app_buf *b, u64 va, u64 size, unsigned int nsegs,
		       bool cpu)
{
	unsigned long addr;

	if (cpu) {
		addr = kunit_vm_mmap(test, NULL, va, size,
				     PROT_READ | PROT_WRITE,
				     MAP_ANONYMOUS | MAP_PRIVATE |
				     (va ? MAP_FIXED : 0), 0);
		KUNIT_ASSERT_NE(test, addr, 0UL);
		KUNIT_ASSERT_FALSE(test, IS_ERR_VALUE(addr));
		va = addr;
		b->cpu_mapped = true;
	}
	if (f->real)
		/*
		 * CPU-visible VRAM, where the real pin wants it: KFD's VRAM
		 * BOs are NO_CPU_ACCESS unless public (amdgpu_amdkfd_gpuvm.c),
		 * and on a GPU the first pin moves them into the BAR, which
		 * the fake GPU, without a copy engine, cannot do
		 */
		b->bo = rdma_fake_real_bo(f, size, AMDGPU_GEM_DOMAIN_VRAM,
					  AMDGPU_GEM_CREATE_CPU_ACCESS_REQUIRED);
	else
		b->bo = rdma_fake_bo(f, size, AMDGPU_GEM_DOMAIN_VRAM, nsegs,
				     SZ_2M);
	b->va = va;
	b->size = size;
	rdma_fake_map(f, b->bo, va, 0, size, RDMA_FAKE_RW);
}

/*
 * hipFree(): KFD unmap (amdgpu_vm_bo_unmap() under the locks, then the
 * ioctl's amdgpu_rdma_process_flush() after it dropped p->mutex), KFD free
 * (amdgpu_vm_bo_del() of the attachment, then the flush), munmap().
 */
static void app_free(struct rdma_fake *f, struct app_buf *b)
{
	KUNIT_ASSERT_EQ(f->test, rdma_fake_unmap(f, b->bo, b->va), 0);
	amdgpu_rdma_process_flush(f->p);
	rdma_fake_bo_del(f, b->bo);
	amdgpu_rdma_process_flush(f->p);
	if (b->cpu_mapped) {
		KUNIT_ASSERT_EQ(f->test, vm_munmap(b->va, b->size), 0);
		b->cpu_mapped = false;
	}
}

/* ---------------------------------------------------------------------- */
/* hfi1 SDMA: the descriptors of one packet and their completion */

#define SDMA_MAX_DESC	16

struct sdma_desc {
	u64 addr;
	u32 len;
	void *ctx;
};

/* struct sdma_txreq, reduced to its descriptors; completes in hard IRQ */
struct sdma_tx {
	unsigned int n;
	struct sdma_desc d[SDMA_MAX_DESC];
	void (*ctx_put)(void *ctx);
	struct hrtimer timer;
	struct completion done;
	/* what the BO's pin count was when the engine read the memory */
	int pinned_at_dma;
	struct rdma_fake_bo *bo;
};

/* sdma_txadd_daddr(): one descriptor; ctx_get(ctx) if ctx is set */
static int sdma_txadd_daddr(struct sdma_tx *tx, u64 addr, u32 len, void *ctx,
			    void (*ctx_get)(void *ctx),
			    void (*ctx_put)(void *ctx))
{
	if (tx->n == SDMA_MAX_DESC)
		return -ENOMEM;
	tx->d[tx->n].addr = addr;
	tx->d[tx->n].len = len;
	tx->d[tx->n].ctx = ctx;
	tx->n++;
	tx->ctx_put = ctx_put;
	if (ctx)
		ctx_get(ctx);
	return 0;
}

/*
 * The engine has read the payload; sdma_unmap_desc() via __sdma_txclean()
 * calls ctx_put() per descriptor, from the SDMA interrupt.
 */
static enum hrtimer_restart sdma_complete(struct hrtimer *t)
{
	struct sdma_tx *tx = container_of(t, struct sdma_tx, timer);
	unsigned int i;

	tx->pinned_at_dma = atomic_read(&tx->bo->pinned);
	for (i = 0; i < tx->n; i++)
		if (tx->d[i].ctx)
			tx->ctx_put(tx->d[i].ctx);
	complete(&tx->done);
	return HRTIMER_NORESTART;
}

static void sdma_init(struct sdma_tx *tx)
{
	memset(tx, 0, sizeof(*tx));
	init_completion(&tx->done);
	hrtimer_init(&tx->timer, CLOCK_MONOTONIC, HRTIMER_MODE_REL_HARD);
	tx->timer.function = sdma_complete;
}

/* Hand the packet to the engine; it completes after @us. */
static void sdma_submit(struct sdma_tx *tx, struct rdma_fake_bo *bo,
			unsigned int us)
{
	tx->bo = bo;
	hrtimer_start(&tx->timer, ns_to_ktime((u64)us * NSEC_PER_USEC),
		      HRTIMER_MODE_REL_HARD);
}

static void sdma_wait(struct sdma_tx *tx)
{
	wait_for_completion(&tx->done);
	hrtimer_cancel(&tx->timer);
}

/*
 * What went on the wire: every descriptor must carry the DMA address of
 * the bytes [off, off + len) of @bo, in order.
 */
static void expect_wire(struct kunit *test, const struct sdma_tx *tx,
			const struct rdma_fake_bo *bo, u64 off, u64 len)
{
	unsigned int i;
	u64 sent = 0;

	for (i = 0; i < tx->n; i++) {
		KUNIT_EXPECT_EQ(test, tx->d[i].addr,
				rdma_fake_dma(bo, off + sent));
		KUNIT_EXPECT_EQ(test, tx->d[i].addr + tx->d[i].len - 1,
				rdma_fake_dma(bo, off + sent + tx->d[i].len -
					      1));
		sent += tx->d[i].len;
	}
	KUNIT_EXPECT_EQ(test, sent, len);
}

/* ---------------------------------------------------------------------- */
/* hfi1 pin_amd.c: the AMD pin cache of one (pq, GPU) */

enum hfi1_version {
	/* b99877e: remove_amd_pages() as free callback */
	HFI1_OLD,
	/* 5e315a0: NULL callback, mmu_interval_notifier on the CPU range */
	HFI1_CURRENT,
};

struct hfi1_pintree;

/* struct amd_pintree_node */
struct hfi1_node {
	struct interval_tree_node node;
	struct list_head lru_node;
	struct hfi1_pintree *pintree;
	struct amd_p2p_info *p2p_info;
	struct kref ref;
	size_t size;
	bool in_cache;
	bool invalidated;
	bool in_mmu;
	struct mmu_interval_notifier notifier;
	struct execute_work cleanup_work;
};

/* struct amd_pintree, with the module parameters that shape it */
struct hfi1_pintree {
	enum hfi1_version version;
	const struct amd_rdma_interface *rdma_ops;
	struct device *dma_device;
	/* pintree->lock: guards the tree, the LRU list, size and counters */
	spinlock_t lock;
	struct rb_root_cached root;
	struct list_head lru_list;
	size_t size;
	refcount_t ref;
	unsigned long hits;
	unsigned long misses;
	unsigned long internal_evictions;
	unsigned long external_evictions;
	/* amd_use_cache */
	bool use_cache;
	/* amd_cache_size * 1M / AMD_PIN_CACHES_PER_GPU */
	size_t limit;
	/*
	 * The workaround the reporter of ROCm/amdgpu#169 describes there: put
	 * from the completion interrupt. No published hfi1 has it with the
	 * cache off (e13a81a added amd_use_cache and the deferral together).
	 */
	bool put_in_irq;
	/* model: what the callbacks saw */
	atomic_t callbacks;
	atomic_t callbacks_not_in_tree;
	atomic_t callbacks_in_irq;
	atomic_t waited_for_io;
	atomic_t puts;
	atomic_t put_errors;
	/*
	 * put_pages() waits for a callback running on another thread
	 * (AMD_RDMA_CAP_PUT_WAITS_CALLBACK, read when the cache is set up).
	 * Published hfi1 reads no capability; the model frees a node the
	 * way amd_rdma.h asks a client to (see hfi1_free_node()).
	 */
	bool put_waits;
	/*
	 * model: node frees after a put that waited, after a synchronize;
	 * frees about to synchronize
	 */
	atomic_t frees_put_waited;
	atomic_t frees_synchronized;
	atomic_t syncing;
	/* model: callbacks running, and nodes freed while one ran */
	atomic_t cbs_running;
	atomic_t freed_in_cb;
	/*
	 * model: a hook where remove_amd_pages() is held up before it takes
	 * the lock (as on pintree->lock), and the callbacks waiting there
	 */
	struct completion *cb_gate;
	atomic_t cbs_waiting;
};

static void hfi1_pintree_init(struct hfi1_pintree *t, struct rdma_fake *f,
			      enum hfi1_version version, bool use_cache)
{
	memset(t, 0, sizeof(*t));
	t->version = version;
	t->rdma_ops = f->ops;
	t->dma_device = f->nic;		/* &pq->dd->pcidev->dev */
	spin_lock_init(&t->lock);
	t->root = RB_ROOT_CACHED;
	INIT_LIST_HEAD(&t->lru_list);
	refcount_set(&t->ref, 1);	/* init_amd_pintree() */
	t->use_cache = use_cache;
	t->limit = SIZE_MAX;		/* amd_cache_size = ~0UL */
	t->put_waits = amdkfd_rdma_capabilities() &
		       AMD_RDMA_CAP_PUT_WAITS_CALLBACK;
}

/* outstanding_io(): the node's krefs beyond the cache's (or safety) one */
static unsigned int hfi1_outstanding_io(struct hfi1_node *n)
{
	unsigned int c = kref_read(&n->ref);

	return c ? c - 1 : 0;
}

/* _amd_pintree_remove(); pintree->lock held */
static bool hfi1_pintree_remove(struct hfi1_node *n, struct list_head *list,
				bool external)
{
	struct hfi1_pintree *t = n->pintree;

	if (!n->in_cache)
		return false;
	interval_tree_remove(&n->node, &t->root);
	if (list)
		list_move(&n->lru_node, list);
	else
		list_del(&n->lru_node);
	n->in_cache = false;
	t->size -= n->size;
	if (external)
		t->external_evictions++;
	return true;
}

/*
 * unpin_amd_node(): reads va/size/table for tracing, then put_pages().
 * Returns whether it put.
 */
static bool hfi1_unpin_node(struct hfi1_node *n)
{
	struct hfi1_pintree *t = n->pintree;
	struct scatterlist *sg;
	u64 va, va_len, dma, dma_len = 0;
	int i, ret;

	if (!n->p2p_info)
		return false;
	va = n->p2p_info->va;
	va_len = n->p2p_info->size;
	dma = sg_dma_address(n->p2p_info->pages->sgl);	/* get_dma_addr() */
	for_each_sgtable_sg(n->p2p_info->pages, sg, i)	/* get_dma_len() */
		dma_len += sg_dma_len(sg);
	ret = t->rdma_ops->put_pages(&n->p2p_info);
	n->p2p_info = NULL;
	atomic_inc(&t->puts);
	if (ret || !va || !dma || dma_len != va_len)
		atomic_inc(&t->put_errors);
	return true;
}

static void hfi1_node_mmu_unregister(struct hfi1_node *n)
{
	if (n->in_mmu) {
		mmu_interval_notifier_remove(&n->notifier);
		n->in_mmu = false;
	}
}

/* free_amd_node(): the node's last reference is gone; process context */
static void hfi1_free_node(struct work_struct *work)
{
	struct hfi1_node *n = container_of(work, struct hfi1_node,
					   cleanup_work.work);
	struct hfi1_pintree *t = n->pintree;

	if (t->version == HFI1_CURRENT) {
		/* hfi1's: see the node's fields written before the last put */
		smp_mb();
		hfi1_node_mmu_unregister(n);
	}
	/*
	 * Old hfi1's node is its callback's client_priv. It is freed right
	 * after a put that waits for a running callback; where the put does
	 * not wait (no AMD_RDMA_CAP_PUT_WAITS_CALLBACK), after
	 * amdkfd_rdma_synchronize(), in the process context this runs in
	 * (amd_rdma.h, put_pages()). The #169 workaround puts and frees in
	 * the interrupt, where no put waits and nothing can: modelled as its
	 * reporter describes it.
	 */
	if (hfi1_unpin_node(n) && t->version == HFI1_OLD && !in_interrupt()) {
		if (t->put_waits) {
			atomic_inc(&t->frees_put_waited);
		} else {
			atomic_inc(&t->syncing);
			amdkfd_rdma_synchronize();
			atomic_inc(&t->frees_synchronized);
		}
	}
	if (atomic_read(&t->cbs_running))
		atomic_inc(&t->freed_in_cb);
	refcount_dec(&t->ref);
	kfree(n);
}

/* amd_node_kref_cb(): from the submit path or from the SDMA interrupt */
static void hfi1_node_kref_cb(struct kref *kref)
{
	struct hfi1_node *n = container_of(kref, struct hfi1_node, ref);

	if (n->pintree->put_in_irq) {
		/* the #169 workaround: rdma_put_pages() right here */
		hfi1_free_node(&n->cleanup_work.work);
		return;
	}
	execute_in_process_context(hfi1_free_node, &n->cleanup_work);
}

/* amd_node_kref_cb_no_unpin() (old): after remove_amd_pages(), no put */
static void hfi1_node_kref_cb_no_unpin(struct kref *kref)
{
	struct hfi1_node *n = container_of(kref, struct hfi1_node, ref);

	refcount_dec(&n->pintree->ref);
	kfree(n);
}

/* amd_node_kref_defer() (current): from inside the mmu notifier */
static void hfi1_node_kref_defer(struct kref *kref)
{
	struct hfi1_node *n = container_of(kref, struct hfi1_node, ref);

	INIT_WORK(&n->cleanup_work.work, hfi1_free_node);
	schedule_work(&n->cleanup_work.work);
}

/* amd_node_get() / amd_node_put(): the SDMA descriptors' references */
static void hfi1_node_get(void *ctx)
{
	kref_get(&((struct hfi1_node *)ctx)->ref);
}

static void hfi1_node_put(void *ctx)
{
	kref_put(&((struct hfi1_node *)ctx)->ref, hfi1_node_kref_cb);
}

/* remove_amd_pages(), old hfi1's free callback */
static void hfi1_remove_amd_pages(void *data)
{
	struct hfi1_node *node = data;
	struct hfi1_pintree *t = node->pintree;
	struct interval_tree_node *found_node;

	/* The real one does WARN_ONCE(true, "Unexpected callback") here. */
	atomic_inc(&t->callbacks);
	atomic_inc(&t->cbs_running);
	if (in_interrupt())			/* WARN_ON(in_interrupt()) */
		atomic_inc(&t->callbacks_in_irq);
	if (t->cb_gate) {
		atomic_inc(&t->cbs_waiting);
		wait_for_completion(t->cb_gate);
	}

	spin_lock(&t->lock);
	node->invalidated = true;
	found_node = interval_tree_iter_first(&t->root, node->node.start,
					      node->node.last);
	if (found_node && container_of(found_node, struct hfi1_node, node) ==
	    node) {
		hfi1_pintree_remove(node, NULL, true);
		spin_unlock(&t->lock);
		/* Spin until I/O is done. */
		if (hfi1_outstanding_io(node))
			atomic_inc(&t->waited_for_io);
		while (hfi1_outstanding_io(node))
			cpu_relax();
		/* The cache's (and last) reference; no put_pages() after. */
		kref_put(&node->ref, hfi1_node_kref_cb_no_unpin);
	} else {
		/* Not cached (amd_use_cache=0): only a log line. */
		spin_unlock(&t->lock);
		atomic_inc(&t->callbacks_not_in_tree);
	}
	atomic_dec(&t->cbs_running);
}

/* amd_mmu_invalidate_cb(), current hfi1 */
static bool hfi1_mmu_invalidate_cb(struct mmu_interval_notifier *mni,
				   const struct mmu_notifier_range *range,
				   unsigned long cur_seq)
{
	struct hfi1_node *n = container_of(mni, struct hfi1_node, notifier);
	struct hfi1_pintree *t = n->pintree;
	bool removed;

	if (range->event != MMU_NOTIFY_UNMAP)
		return true;
	spin_lock(&t->lock);
	removed = hfi1_pintree_remove(n, NULL, true);
	spin_unlock(&t->lock);
	/* mmu_interval_notifier_remove() cannot be called in here. */
	if (removed)
		kref_put(&n->ref, hfi1_node_kref_defer);
	return true;
}

static const struct mmu_interval_notifier_ops hfi1_mmu_ops = {
	.invalidate = hfi1_mmu_invalidate_cb,
};

/* insert_amd_pinning(); takes the safety reference on success */
static int hfi1_insert(struct hfi1_pintree *t, struct hfi1_node *node)
{
	int result = 0;

	if (!t->use_cache)
		return 0;
	if (t->version == HFI1_CURRENT) {
		/*
		 * amd_node_mmu_register(). hfi1 calls it with pintree->lock
		 * held, but mmu_interval_notifier_insert() may sleep (it
		 * takes mmap_lock, and registers the mm's first notifier
		 * with mmu_notifier_register()); lockdep would stop the run.
		 * The model registers just before taking the lock.
		 */
		result = mmu_interval_notifier_insert(&node->notifier,
						      current->mm,
						      node->node.start,
						      node->size,
						      &hfi1_mmu_ops);
		if (result)
			return result;
		node->in_mmu = true;
	}
	spin_lock(&t->lock);
	if (t->version == HFI1_OLD && node->invalidated) {
		result = -EFAULT;		/* WARN_ON() in the real code */
		goto unlock;
	}
	if (interval_tree_iter_first(&t->root, node->node.start,
				     node->node.last)) {
		result = -EEXIST;
		goto unlock;
	}
	kref_get(&node->ref);
	interval_tree_insert(&node->node, &t->root);
	list_add_tail(&node->lru_node, &t->lru_list);
	t->size += node->size;
	node->in_cache = true;
unlock:
	spin_unlock(&t->lock);
	return result;
}

/* evict_amd_pinnings(): drop idle LRU entries worth @goal bytes */
static bool hfi1_evict(struct hfi1_pintree *t, size_t goal, bool internal)
{
	struct hfi1_node *cur, *tmp;
	LIST_HEAD(evict_list);
	size_t total = 0;

	spin_lock(&t->lock);
	list_for_each_entry_safe(cur, tmp, &t->lru_list, lru_node) {
		if (!hfi1_outstanding_io(cur)) {
			hfi1_pintree_remove(cur, &evict_list, false);
			if (internal)
				t->internal_evictions++;
			else
				t->external_evictions++;
			total += cur->size;
			if (total >= goal)
				break;
		}
	}
	spin_unlock(&t->lock);
	list_for_each_entry_safe(cur, tmp, &evict_list, lru_node)
		kref_put(&cur->ref, hfi1_node_kref_cb);
	return total >= goal;
}

/* pin_amd_region(): get_pages(), and on -ENOSPC evict once and retry */
static int hfi1_pin_region(struct hfi1_pintree *t, struct pid *pid,
			   u64 start, u64 last, struct hfi1_node *node)
{
	size_t len = last + 1 - start;
	bool retry = true;
	int result;

again:
	result = t->rdma_ops->get_pages(start, len, pid, t->dma_device,
					&node->p2p_info,
					t->version == HFI1_OLD ?
					hfi1_remove_amd_pages : NULL, node);
	if (result == -ENOSPC && retry) {
		retry = false;
		if (hfi1_evict(t, len, false))
			goto again;
	}
	if (result) {
		node->p2p_info = NULL;
		return result;
	}
	node->node.start = start;
	node->node.last = last;
	node->size = len;
	return hfi1_insert(t, node);
}

/* find_amd_pinning(): a hit takes the safety reference */
static struct hfi1_node *hfi1_find(struct hfi1_pintree *t, u64 start,
				   u64 last, size_t *tree_size)
{
	struct interval_tree_node *it;
	struct hfi1_node *node = NULL;

	spin_lock(&t->lock);
	it = interval_tree_iter_first(&t->root, start, last);
	if (it) {
		node = container_of(it, struct hfi1_node, node);
		list_move_tail(&node->lru_node, &t->lru_list);
		kref_get(&node->ref);
		t->hits++;
	} else {
		t->misses++;
	}
	*tree_size = t->size;
	spin_unlock(&t->lock);
	return node;
}

/*
 * add_amd_pinning(): the cache limit, get_page_size() on the unaligned
 * range, rounding out to it, then pin_amd_region().
 */
static int hfi1_add(struct hfi1_pintree *t, struct pid *pid,
		    struct hfi1_node **node_p, u64 start, u64 last,
		    size_t tree_size)
{
	size_t len = last + 1 - start;
	unsigned long page_size;
	u64 start_page, end_page;
	struct hfi1_node *node;
	int result;

	if (tree_size + len > t->limit &&
	    !hfi1_evict(t, tree_size + len - t->limit, true))
		return -ENOMEM;
	result = t->rdma_ops->get_page_size(start, len, pid, &page_size);
	if (result)
		return result;
	start_page = start & ~((u64)page_size - 1);
	end_page = (last + 1 + page_size - 1) & ~((u64)page_size - 1);

	node = kzalloc(sizeof(*node), GFP_KERNEL);
	if (!node)
		return -ENOMEM;
	kref_init(&node->ref);
	node->pintree = t;
	refcount_inc(&t->ref);
	result = hfi1_pin_region(t, pid, start_page, end_page - 1, node);
	if (result)
		kref_put(&node->ref, hfi1_node_kref_cb);
	else
		*node_p = node;
	return result;
}

/* incremental_pin_amd_region() / get_amd_cache_entry() */
static int hfi1_get_cache_entry(struct hfi1_pintree *t, struct pid *pid,
				struct hfi1_node **node_p, u64 start, u64 len)
{
	u64 last = start + len - 1;

	for (;;) {
		struct hfi1_node *node;
		size_t tree_size;
		int ret;

		node = hfi1_find(t, start, last, &tree_size);
		if (!node) {
			ret = hfi1_add(t, pid, node_p, start, last, tree_size);
			if (ret == -EEXIST)
				continue;
			return ret;
		}
		if (node->node.start <= start) {
			*node_p = node;
			return 0;
		}
		/* prepend a node for the start of the range */
		kref_put(&node->ref, hfi1_node_kref_cb);
		ret = hfi1_add(t, pid, node_p, start, node->node.start - 1,
			       tree_size);
		if (ret == -EEXIST)
			continue;
		return ret;
	}
}

/*
 * add_amd_mapping_to_sdma_packet(): walk the node's table from the node's
 * (aligned) start; a descriptor per DMA-contiguous piece; the node's
 * reference only on the last one.
 */
static int hfi1_add_mapping(struct sdma_tx *tx, struct hfi1_node *node,
			    u64 start, u64 from_this_node)
{
	struct sg_table *sgt = node->p2p_info->pages;
	u64 sgl_start = node->node.start;
	struct scatterlist *sg;
	unsigned int i;
	u64 sgl_offset;
	int result;

	for_each_sgtable_sg(sgt, sg, i) {
		if (start < sgl_start + sg_dma_len(sg))
			break;
		sgl_start += sg_dma_len(sg);
	}
	sgl_offset = start - sgl_start;
	while (from_this_node) {
		u64 from_this_sgl = min_t(u64, sg_dma_len(sg) - sgl_offset,
					  from_this_node);
		u64 dma = sg_dma_address(sg) + sgl_offset;

		sgl_offset = 0;
		result = sdma_txadd_daddr(tx, dma, from_this_sgl,
					  from_this_sgl < from_this_node ?
					  NULL : node,
					  hfi1_node_get, hfi1_node_put);
		if (result)
			return result;
		sg = sg_next(sg);
		from_this_node -= from_this_sgl;
	}
	return 0;
}

/*
 * add_amd_iovec_to_sdma_packet(): the packet's payload from [start, start
 * + len) of an AMD iovec, node by node. pid is current->thread_pid.
 */
static int hfi1_send(struct hfi1_pintree *t, struct sdma_tx *tx, u64 start,
		     u64 len)
{
	while (len) {
		struct hfi1_node *node;
		u64 from_this_node;
		int ret;

		ret = hfi1_get_cache_entry(t, current->thread_pid, &node,
					   start, len);
		if (ret)
			return ret;
		from_this_node = min(node->node.last + 1 - start, len);
		ret = hfi1_add_mapping(tx, node, start, from_this_node);
		/* the safety reference, or the only one without a cache */
		kref_put(&node->ref, hfi1_node_kref_cb);
		if (ret)
			return ret;
		start += from_this_node;
		len -= from_this_node;
	}
	return 0;
}

/*
 * cleanup_amd_pintree() at pq teardown: drop the cache's references, then
 * wait until the descriptors' and deferred frees' references are gone.
 */
static void hfi1_cleanup(struct hfi1_pintree *t)
{
	struct hfi1_node *n;

	for (;;) {
		spin_lock(&t->lock);
		if (list_empty(&t->lru_list)) {
			spin_unlock(&t->lock);
			break;
		}
		n = list_first_entry(&t->lru_list, struct hfi1_node, lru_node);
		hfi1_pintree_remove(n, NULL, false);
		spin_unlock(&t->lock);
		kref_put(&n->ref, hfi1_node_kref_cb);
	}
	while (refcount_read(&t->ref) > 1)
		cond_resched();
}

/* Wait until the deferred frees (free_amd_node() work) have run. */
static void hfi1_quiesce(struct hfi1_pintree *t, unsigned int nodes)
{
	while (refcount_read(&t->ref) > 1 + nodes)
		cond_resched();
}

/* ---------------------------------------------------------------------- */
/* hfi1 scenarios */

#define HFI1_VA		(64ULL << 30)
#define HFI1_BUF	SZ_4M
/* one SDMA packet: 8 KiB of payload, 0x300 into the buffer */
#define HFI1_OFF	0x300
#define HFI1_PKT	SZ_8K

struct hfi1_case {
	const char *name;
	enum hfi1_version version;
	bool use_cache;
	bool put_in_irq;
};

static const struct hfi1_case hfi1_cases[] = {
	{ "old, cache off (its default)", HFI1_OLD, false, false },
	{ "old, cache on", HFI1_OLD, true, false },
	{ "old, cache off, put in the IRQ handler (the workaround of issue 169)", HFI1_OLD,
	  false, true },
	{ "current (NULL callback, mmu notifier)", HFI1_CURRENT, true, false },
};

static void hfi1_case_desc(const struct hfi1_case *c, char *desc)
{
	strscpy(desc, c->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(hfi1, hfi1_cases, hfi1_case_desc);

/* Eviction needs idle cached entries: the clients with their cache on. */
static const struct hfi1_case hfi1_evict_cases[] = {
	{ "old, cache on", HFI1_OLD, true, false },
	{ "current (NULL callback, mmu notifier)", HFI1_CURRENT, true, false },
};

KUNIT_ARRAY_PARAM(hfi1_evict, hfi1_evict_cases, hfi1_case_desc);

/*
 * Old hfi1 freed each node it put (in process context) the way the
 * capability asks: right after a put that waits for a running callback,
 * after amdkfd_rdma_synchronize() where the put does not wait (a kernel
 * without CONFIG_PREEMPT_COUNT). @frees: how many, or -1 for any number.
 */
static void hfi1_expect_free_branch(struct kunit *test,
				    struct hfi1_pintree *t, int frees)
{
	bool waits = amdkfd_rdma_capabilities() &
		     AMD_RDMA_CAP_PUT_WAITS_CALLBACK;
	atomic_t *taken = waits ? &t->frees_put_waited : &t->frees_synchronized;
	atomic_t *other = waits ? &t->frees_synchronized : &t->frees_put_waited;

	KUNIT_EXPECT_EQ(test, t->put_waits, waits);
	KUNIT_EXPECT_EQ(test, atomic_read(other), 0);
	if (frees >= 0)
		KUNIT_EXPECT_EQ(test, atomic_read(taken), frees);
}

/*
 * The failure of ROCm/amdgpu#169: send from buffer A, free A
 * while the send is in flight, allocate B at the same address, send
 * again. What went on the wire the second time must be B's memory; A's
 * memory must stay pinned while the engine reads it; and the client's
 * own paths (deferred unpin, tracing of the table) must not fault.
 */
static void hfi1_free_and_reuse(struct kunit *test)
{
	const struct hfi1_case *c = test->param_value;
	/*
	 * The fake backend: it gives B DMA addresses A never had, so that the
	 * wire tells A's memory from B's; real BOs may get A's freed pages
	 */
	struct rdma_fake *f = rdma_fake_init(test);
	struct app_buf a = {}, b = {};
	struct hfi1_pintree *t;
	struct sdma_tx *tx;
	int puts;

	t = kunit_kzalloc(test, sizeof(*t), GFP_KERNEL);
	tx = kunit_kzalloc(test, sizeof(*tx), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, t);
	KUNIT_ASSERT_NOT_NULL(test, tx);
	hfi1_pintree_init(t, f, c->version, c->use_cache);
	t->put_in_irq = c->put_in_irq;

	/* Current hfi1 watches the CPU range, so there must be one. */
	app_malloc(test, f, &a, c->version == HFI1_CURRENT ? 0 : HFI1_VA,
		   HFI1_BUF, 2, c->version == HFI1_CURRENT);

	/* A send from A; the engine reads it 200 ms later. */
	sdma_init(tx);
	KUNIT_ASSERT_EQ(test, hfi1_send(t, tx, a.va + HFI1_OFF, HFI1_PKT), 0);
	expect_wire(test, tx, a.bo, HFI1_OFF, HFI1_PKT);
	sdma_submit(tx, a.bo, 200000);

	/* hipFree(A) while the packet is in flight. */
	app_free(f, &a);
	if (c->version == HFI1_OLD) {
		KUNIT_EXPECT_EQ(test, atomic_read(&t->callbacks), 1);
		KUNIT_EXPECT_EQ(test, atomic_read(&t->callbacks_in_irq), 0);
	}
	sdma_wait(tx);
	if (c->version == HFI1_OLD && !c->use_cache) {
		/*
		 * Old hfi1 without its cache: remove_amd_pages() does not
		 * find the node in the tree and returns at once, without
		 * waiting for the packet; amdgpu unpins on return, so the
		 * engine read memory that was no longer pinned. The client
		 * has to wait in its callback (what it does for cached
		 * nodes); asserted here so that the gap stays visible.
		 */
		KUNIT_EXPECT_EQ(test, atomic_read(&t->callbacks_not_in_tree),
				1);
		KUNIT_EXPECT_EQ(test, tx->pinned_at_dma, 0);
	} else {
		/* The engine read pinned memory. */
		KUNIT_EXPECT_EQ(test, tx->pinned_at_dma, 1);
	}
	if (c->version == HFI1_OLD && c->use_cache)
		KUNIT_EXPECT_EQ(test, atomic_read(&t->waited_for_io), 1);
	if (c->version == HFI1_CURRENT) {
		/* No callback; the munmap() removed the node ... */
		KUNIT_EXPECT_EQ(test, t->external_evictions, 1UL);
	}
	/* ... and the deferred free_amd_node() put it. */
	hfi1_quiesce(t, 0);
	puts = atomic_read(&t->puts);
	/* Old hfi1 with the cache puts nothing after the callback. */
	KUNIT_EXPECT_EQ(test, puts, c->version == HFI1_OLD && c->use_cache ?
			0 : 1);
	KUNIT_EXPECT_EQ(test, atomic_read(&t->put_errors), 0);
	amdkfd_rdma_synchronize();
	KUNIT_EXPECT_EQ(test, atomic_read(&a.bo->pinned), 0);

	/* hipMalloc(B) at the same address, and the next send. */
	app_malloc(test, f, &b, a.va, HFI1_BUF, 2,
		   c->version == HFI1_CURRENT);
	KUNIT_ASSERT_EQ(test, b.va, a.va);
	sdma_init(tx);
	KUNIT_ASSERT_EQ(test, hfi1_send(t, tx, b.va + HFI1_OFF, HFI1_PKT), 0);
	expect_wire(test, tx, b.bo, HFI1_OFF, HFI1_PKT);
	sdma_submit(tx, b.bo, 1000);
	sdma_wait(tx);
	KUNIT_EXPECT_EQ(test, tx->pinned_at_dma, 1);

	/* pq teardown, then B goes. */
	hfi1_cleanup(t);
	KUNIT_EXPECT_EQ(test, atomic_read(&t->put_errors), 0);
	hfi1_expect_free_branch(test, t, -1);
	app_free(f, &b);
	amdkfd_rdma_synchronize();
	KUNIT_EXPECT_EQ(test, atomic_read(&b.bo->pinned), 0);
}

/*
 * Cached sends (current hfi1): a send from a cached range makes no call
 * to amdgpu, and a packet across two DMA segments is split there; the
 * munmap() at hipFree() puts.
 */
static void hfi1_cache_hits(struct kunit *test)
{
	/* The fake backend: two DMA segments 2 MiB apart, to split a packet */
	struct rdma_fake *f = rdma_fake_init(test);
	struct amdgpu_rdma_counters *cnt = amdgpu_rdma_test_counters();
	struct app_buf a = {};
	struct hfi1_pintree *t;
	struct sdma_tx *tx;
	int calls;

	t = kunit_kzalloc(test, sizeof(*t), GFP_KERNEL);
	tx = kunit_kzalloc(test, sizeof(*tx), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, t);
	KUNIT_ASSERT_NOT_NULL(test, tx);
	hfi1_pintree_init(t, f, HFI1_CURRENT, true);
	app_malloc(test, f, &a, 0, HFI1_BUF, 2, true);

	/* The whole buffer: one node, two descriptors (two segments). */
	sdma_init(tx);
	KUNIT_ASSERT_EQ(test, hfi1_send(t, tx, a.va, HFI1_BUF), 0);
	expect_wire(test, tx, a.bo, 0, HFI1_BUF);
	KUNIT_EXPECT_EQ(test, tx->n, 2U);
	sdma_submit(tx, a.bo, 100);
	sdma_wait(tx);
	calls = atomic_read(&cnt->proc_locks);
	/* A packet across the segment boundary: a hit, split in two. */
	sdma_init(tx);
	KUNIT_ASSERT_EQ(test, hfi1_send(t, tx, a.va + SZ_2M - SZ_4K, HFI1_PKT),
			0);
	expect_wire(test, tx, a.bo, SZ_2M - SZ_4K, HFI1_PKT);
	KUNIT_EXPECT_EQ(test, tx->n, 2U);
	sdma_submit(tx, a.bo, 100);
	sdma_wait(tx);
	KUNIT_EXPECT_EQ(test, atomic_read(&cnt->proc_locks), calls);
	KUNIT_EXPECT_EQ(test, t->hits, 1UL);
	app_free(f, &a);
	hfi1_quiesce(t, 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&t->puts), 1);
	hfi1_cleanup(t);
}

/*
 * The pin quota: the third buffer does not fit; hfi1 evicts idle entries
 * on -ENOSPC and retries once, which succeeds at once because a put gives
 * the quota back immediately. On real BOs, through the real pin backend;
 * with @race, the quota runs out while the third get pins.
 */
static void hfi1_evict_and_retry_on(struct kunit *test, bool race)
{
	const struct hfi1_case *c = test->param_value;
	struct app_buf buf[3] = {};
	struct hfi1_pintree *t;
	struct rdma_fake *f;
	struct sdma_tx *tx;
	int i;

	f = rdma_fake_init_real(test);
	t = kunit_kzalloc(test, sizeof(*t), GFP_KERNEL);
	tx = kunit_kzalloc(test, sizeof(*tx), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, t);
	KUNIT_ASSERT_NOT_NULL(test, tx);
	hfi1_pintree_init(t, f, c->version, true);
	for (i = 0; i < 3; i++)
		app_malloc(test, f, &buf[i],
			   c->version == HFI1_CURRENT ? 0 : HFI1_VA + i * SZ_1G,
			   SZ_2M, 1, c->version == HFI1_CURRENT);
	/*
	 * The GPU's quota: two whole buffers. With @race three, and another
	 * process takes the rest while the third get pins: its real pin is
	 * unpinned once the get's locks are dropped, then hfi1 evicts and
	 * retries.
	 */
	amdgpu_rdma_test_dev(f->adev)->limit = (race ? 3 : 2) * SZ_2M;

	for (i = 0; i < 3; i++) {
		if (race && i == 2)
			f->pin_takes_quota = true;
		sdma_init(tx);
		/* The whole buffer, as one node. */
		KUNIT_ASSERT_EQ(test, hfi1_send(t, tx, buf[i].va, SZ_2M), 0);
		expect_wire(test, tx, buf[i].bo, 0, SZ_2M);
		sdma_submit(tx, buf[i].bo, 100);
		sdma_wait(tx);
	}
	/* The third get failed with -ENOSPC once, then evicted one. */
	KUNIT_EXPECT_EQ(test, t->external_evictions, 1UL);
	/*
	 * The get over the quota pinned nothing: one pin per buffer; with
	 * @race the third buffer's first pin was undone
	 */
	KUNIT_EXPECT_EQ(test, atomic_read(&f->pins), race ? 4 : 3);
	hfi1_quiesce(t, 2);
	KUNIT_EXPECT_EQ(test, atomic_read(&t->puts), 1);
	amdkfd_rdma_synchronize();
	KUNIT_EXPECT_EQ(test, atomic_read(&buf[0].bo->pinned), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&buf[2].bo->pinned), 1);
	KUNIT_EXPECT_EQ(test, atomic_read(&f->unpins), race ? 2 : 1);
	KUNIT_EXPECT_EQ(test, buf[0].bo->bo.tbo.pin_count, 0);
	KUNIT_EXPECT_EQ(test, buf[2].bo->bo.tbo.pin_count, 1);
	hfi1_cleanup(t);
	for (i = 0; i < 3; i++)
		app_free(f, &buf[i]);
}

static void hfi1_evict_and_retry(struct kunit *test)
{
	hfi1_evict_and_retry_on(test, false);
}

/* The quota lost while pinning: the get unwinds the real pin */
static void hfi1_evict_and_retry_real_backend(struct kunit *test)
{
	hfi1_evict_and_retry_on(test, true);
}

/*
 * Old hfi1, cache off: the last reference to a node goes (the packet's
 * completion, or pq teardown) while the VM teardown runs
 * remove_amd_pages() for it on another thread, held up before it takes
 * pintree->lock. The node is put and freed while the callback still has
 * to use it: safe only if the put waits for the callback, or, where it
 * does not (no AMD_RDMA_CAP_PUT_WAITS_CALLBACK), amdkfd_rdma_synchronize()
 * runs before the free. The callback goes on only once the release waits
 * in one of those, so a release that waits in neither frees the node
 * with the callback still held: counted, and KASAN sees its use after.
 */
struct hfi1_release {
	struct kunit *test;
	struct rdma_fake *f;
	struct hfi1_pintree *t;
	/* the callback waits here */
	struct completion gate;
	struct completion gate_done;
	struct completion vm_done;
	/* the manager's count of puts that waited, before the release */
	int put_waits;
	bool released;
};

static int hfi1_release_vm_fn(void *data)
{
	struct hfi1_release *x = data;

	current->kunit_test = x->test;
	rdma_fake_vm_fini(x->f);
	complete(&x->vm_done);
	return 0;
}

/* Lets the callback go on once the release waits for it (or is over) */
static int hfi1_release_gate_fn(void *data)
{
	struct amdgpu_peer_mgr *mgr = amdgpu_rdma_test_mgr();
	struct hfi1_release *x = data;

	while (!READ_ONCE(x->released) &&
	       atomic_read(&mgr->stats.put_waits) == x->put_waits &&
	       !atomic_read(&x->t->syncing))
		usleep_range(500, 1000);
	complete(&x->gate);
	complete(&x->gate_done);
	return 0;
}

static void hfi1_release_races_callback(struct kunit *test)
{
	struct rdma_fake *f = rdma_fake_init(test);
	struct hfi1_release *x;
	struct app_buf a = {};
	struct hfi1_pintree *t;
	struct hfi1_node *node;
	struct task_struct *vm;
	struct sdma_tx *tx;
	int waiting;

	t = kunit_kzalloc(test, sizeof(*t), GFP_KERNEL);
	tx = kunit_kzalloc(test, sizeof(*tx), GFP_KERNEL);
	x = kunit_kzalloc(test, sizeof(*x), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, t);
	KUNIT_ASSERT_NOT_NULL(test, tx);
	KUNIT_ASSERT_NOT_NULL(test, x);
	hfi1_pintree_init(t, f, HFI1_OLD, false);
	app_malloc(test, f, &a, HFI1_VA, HFI1_BUF, 2, false);
	sdma_init(tx);
	KUNIT_ASSERT_EQ(test, hfi1_send(t, tx, a.va + HFI1_OFF, HFI1_PKT), 0);
	/* Cache off: the packet's last descriptor holds the only reference */
	node = tx->d[tx->n - 1].ctx;
	KUNIT_ASSERT_NOT_NULL(test, node);
	/* Keep the node past the completion: the release comes below */
	hfi1_node_get(node);
	sdma_submit(tx, a.bo, 100);
	sdma_wait(tx);
	KUNIT_EXPECT_EQ(test, atomic_read(&t->puts), 0);

	x->test = test;
	x->f = f;
	x->t = t;
	init_completion(&x->gate);
	init_completion(&x->gate_done);
	init_completion(&x->vm_done);
	t->cb_gate = &x->gate;
	vm = kthread_run(hfi1_release_vm_fn, x, "hfi1-vm");
	if (IS_ERR(vm))
		complete_all(&x->gate);
	KUNIT_ASSERT_FALSE(test, IS_ERR(vm));
	/* Emulated, instrumented and loaded, the teardown can take a while */
	amdgpu_kunit_poll(atomic_read(&t->cbs_waiting));
	waiting = atomic_read(&t->cbs_waiting);
	x->put_waits = atomic_read(&amdgpu_rdma_test_mgr()->stats.put_waits);
	if (IS_ERR(kthread_run(hfi1_release_gate_fn, x, "hfi1-gate"))) {
		complete(&x->gate);
		complete(&x->gate_done);
	}
	/* The release, while the callback is held */
	hfi1_node_put(node);
	WRITE_ONCE(x->released, true);
	wait_for_completion(&x->gate_done);
	wait_for_completion(&x->vm_done);
	t->cb_gate = NULL;
	KUNIT_EXPECT_EQ(test, waiting, 1);
	KUNIT_EXPECT_EQ(test, atomic_read(&t->puts), 1);
	KUNIT_EXPECT_EQ(test, atomic_read(&t->put_errors), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&t->callbacks), 1);
	KUNIT_EXPECT_EQ(test, atomic_read(&t->callbacks_not_in_tree), 1);
	/* Freed after the callback returned, by the capability's branch */
	KUNIT_EXPECT_EQ(test, atomic_read(&t->freed_in_cb), 0);
	hfi1_expect_free_branch(test, t, 1);
	KUNIT_EXPECT_EQ(test, refcount_read(&t->ref), 1U);
	amdkfd_rdma_synchronize();
	KUNIT_EXPECT_EQ(test, atomic_read(&a.bo->pinned), 0);
}

/* ---------------------------------------------------------------------- */
/* HPE cxi: cass_amd_gpu.c, and cxi_map() / cass_mirror_device() */

#define CXI_HUGE_SHIFT	PMD_SHIFT	/* m_opts.huge_shift */
#define CXI_MAX_PTES	64

struct cxi_pte {
	u64 iova;
	u64 dma;
	u64 size;
};

/* the part of struct cxi_md_priv that cass_amd_gpu.c uses, and an ATU */
struct cxi_md {
	const struct amd_rdma_interface *amd_rdma_ops;
	struct device *dev;		/* &lni_priv->dev->pdev->dev */
	struct pid *pid;
	u64 va;				/* md.va, md.iova, md.len */
	u64 iova;
	u64 len;
	int page_shift;
	void *p2p_info;
	struct sg_table *sgt;
	bool cleanup_done;
	refcount_t refcount;
	/* the AC: cac->ac_mutex and its page table */
	bool cac;
	/* cac->ac_mutex: guards the ATU entries */
	struct mutex ac_mutex;
	unsigned int nptes;
	struct cxi_pte pte[CXI_MAX_PTES];
	unsigned int invalidates;
	/* model: the callback is running, and MDs freed while it was */
	bool in_cb;
	unsigned int freed_in_cb;
	/*
	 * model: cxi as amd-rdma.rst asks it to become, asking
	 * amdkfd_rdma_retry() after mirroring when the capability says it
	 * may (shs-cxi-driver does not); and a hook between get_pages() and
	 * cass_mirror_device(), where a callback can land
	 */
	bool uses_retry;
	void (*window)(void *arg);
	void *window_arg;
	/*
	 * put_pages() waits for a running callback (the capability, read
	 * at the map); and, where it does not, the MD frees that waited
	 * with amdkfd_rdma_synchronize() first (published cxi does not)
	 */
	bool put_waits;
	unsigned int synced_before_free;
	/*
	 * model: a cxi that puts in amd_put_pages() whether or not the
	 * callback ran (published cxi skips the put once cleanup_done is
	 * set); safe only when its unmap comes within
	 * amdgpu.rdma_tombstone_min_ms of the callback, as in the test below
	 */
	bool puts_after_cb;
};

/* amd_free_callback(): clear the PTEs, flag the MD; never a put */
static void cxi_amd_free_callback(void *client_priv)
{
	struct cxi_md *md = client_priv;

	if (!md)
		return;
	WRITE_ONCE(md->in_cb, true);
	if (md->cac) {
		mutex_lock(&md->ac_mutex);
		md->nptes = 0;			/* cass_clear_range() */
		mutex_unlock(&md->ac_mutex);
		md->invalidates++;		/* cass_invalidate_range() */
	}
	WRITE_ONCE(md->cleanup_done, true);
	WRITE_ONCE(md->in_cb, false);
}

/* amd_is_device_mem(): is_gpu_address(), then get_page_size() */
static int cxi_amd_is_device_mem(struct cxi_md *md, u64 va, u64 len,
				 int *page_shift)
{
	unsigned long page_size;
	int ret;

	/* get_task_pid(current, PIDTYPE_PID); cxi never puts it */
	md->pid = get_task_pid(current, PIDTYPE_PID);
	if (!md->amd_rdma_ops->is_gpu_address(va, md->pid))
		return -ENOENT;
	ret = md->amd_rdma_ops->get_page_size(va, len, md->pid, &page_size);
	if (ret)
		return ret;
	*page_shift = __ffs(page_size);
	return 0;
}

/* amd_get_pages(): AMD_RDMA_MAJOR == 2 */
static int cxi_amd_get_pages(struct cxi_md *md, u64 va, u64 len)
{
	struct amd_p2p_info *p2p_info;
	int ret;

	ret = md->amd_rdma_ops->get_pages(va, len, md->pid, md->dev,
					  &p2p_info, cxi_amd_free_callback,
					  md);
	if (ret)
		return ret;
	refcount_inc(&md->refcount);
	md->p2p_info = p2p_info;
	md->sgt = p2p_info->pages;
	return 0;
}

/* amd_put_pages(): at cxi_unmap() (cass_md_clear()) */
static void cxi_amd_put_pages(struct cxi_md *md)
{
	struct amd_p2p_info *p2p_info = md->p2p_info;

	if (!p2p_info)
		return;
	refcount_dec(&md->refcount);
	if (!READ_ONCE(md->cleanup_done) || md->puts_after_cb)
		md->amd_rdma_ops->put_pages(&p2p_info);
	md->sgt = NULL;
}

/* cass_mirror_device(): the ATU entries for the MD's table */
static int cxi_mirror_device(struct cxi_md *md)
{
	u64 page_size = 1ULL << md->page_shift;
	u64 iova = md->iova;
	struct scatterlist *sg;
	int i;

	mutex_lock(&md->ac_mutex);
	for_each_sgtable_dma_sg(md->sgt, sg, i) {
		s64 len = sg_dma_len(sg);
		u64 dma = sg_dma_address(sg);

		while (len > 0) {
			/* ffsl() there; the model takes it as __ffs() */
			bool is_hp = __ffs64(dma) >= CXI_HUGE_SHIFT &&
				     __ffs64(iova) >= CXI_HUGE_SHIFT &&
				     len >= SZ_2M;
			u64 inc = is_hp ? SZ_2M : page_size;

			/*
			 * The model's ATU has room for CXI_MAX_PTES entries;
			 * the real cass_dma_addr_mirror() fails otherwise (a
			 * page table it cannot allocate). Then, as there,
			 * clear what was mirrored (cass_clear_range()).
			 */
			if (md->nptes == CXI_MAX_PTES) {
				md->nptes = 0;
				mutex_unlock(&md->ac_mutex);
				return -ENOSPC;
			}
			/* cass_dma_addr_mirror() */
			md->pte[md->nptes].iova = iova;
			md->pte[md->nptes].dma = dma;
			md->pte[md->nptes].size = inc;
			md->nptes++;
			iova += inc;
			dma += inc;
			len -= inc;
		}
	}
	/* Still under ac_mutex, which the callback takes: the 2.2 check */
	if (md->uses_retry && amdkfd_rdma_retry(md->p2p_info)) {
		md->nptes = 0;
		mutex_unlock(&md->ac_mutex);
		return -EAGAIN;
	}
	mutex_unlock(&md->ac_mutex);
	return 0;
}

/*
 * cxi_map(CXI_MAP_DEVICE): cass_is_device_memory(), cass_align_start_len()
 * to the page size, cass_device_get_pages(), then cass_mirror_device().
 */
static int cxi_map(struct rdma_fake *f, struct cxi_md *md, u64 va, u64 len)
{
	void (*window)(void *arg) = md->window;
	void *window_arg = md->window_arg;
	bool uses_retry = md->uses_retry;
	bool puts_after_cb = md->puts_after_cb;
	int page_shift = PAGE_SHIFT, ret;
	u64 va_start, va_len;

	memset(md, 0, sizeof(*md));
	md->puts_after_cb = puts_after_cb;
	md->uses_retry = uses_retry &&
			 (amdkfd_rdma_capabilities() & AMD_RDMA_CAP_RETRY);
	md->put_waits = amdkfd_rdma_capabilities() &
			AMD_RDMA_CAP_PUT_WAITS_CALLBACK;
	md->amd_rdma_ops = f->ops;
	md->dev = f->nic;
	mutex_init(&md->ac_mutex);
	refcount_set(&md->refcount, 1);
	ret = cxi_amd_is_device_mem(md, va, len, &page_shift);
	if (ret)
		goto out;
	va_start = round_down(va, 1ULL << page_shift);
	va_len = round_up(va + len, 1ULL << page_shift) - va_start;
	ret = cxi_amd_get_pages(md, va_start, va_len);
	if (ret)
		goto out;
	md->va = va_start;
	md->iova = SZ_1G;		/* the AC's IOVA for the MD */
	md->len = va_len;
	md->page_shift = page_shift;
	md->cac = true;
	if (window)
		window(window_arg);
	ret = cxi_mirror_device(md);
	if (ret == -EAGAIN) {
		/*
		 * The 2.2 retry (not in shs-cxi-driver): undo the MD and put
		 * the registration although the callback may have run, at
		 * once, well within amdgpu.rdma_tombstone_min_ms of it
		 */
		struct amd_p2p_info *info = md->p2p_info;

		refcount_dec(&md->refcount);
		md->amd_rdma_ops->put_pages(&info);
		md->p2p_info = NULL;
		md->sgt = NULL;
		put_pid(md->pid);	/* the model puts what cxi leaks */
		md->pid = NULL;
	} else if (ret) {
		/*
		 * cxi_map()'s mirror_range_error and put_device_pages:
		 * cass_device_put_pages() (a put unless the callback ran),
		 * then kfree(md_priv), after amdkfd_rdma_synchronize() where
		 * the put does not wait (the model's, as in cxi_unmap_locked())
		 */
		cxi_amd_put_pages(md);
		md->p2p_info = NULL;
		put_pid(md->pid);	/* the model puts what cxi leaks */
		md->pid = NULL;
		if (!md->put_waits) {
			amdkfd_rdma_synchronize();
			md->synced_before_free++;
		}
		mutex_destroy(&md->ac_mutex);
	}
out:
	return ret;
}

/*
 * cxi_unmap(): cass_md_clear() -> cass_device_put_pages(), then cxi frees
 * the MD (and at LNI teardown its AC, whose ac_mutex the callback takes);
 * the model keeps it and counts a callback still running at that point.
 * Where put_pages() does not wait for a running callback, the model frees
 * the MD only after amdkfd_rdma_synchronize() (amd_rdma.h, put_pages()),
 * on cxi's behalf: published cxi frees it right after the put (here, in
 * cass_md_list_free(), ct_wb_unmap() and its CQ paths alike), and its
 * callback, running on another thread, may then use freed memory.
 */
static void cxi_unmap_locked(struct cxi_md *md)
{
	md->nptes = 0;
	mutex_unlock(&md->ac_mutex);
	cxi_amd_put_pages(md);
	put_pid(md->pid);		/* the model puts what cxi leaks */
	md->pid = NULL;
	if (!md->put_waits) {
		amdkfd_rdma_synchronize();
		md->synced_before_free++;
	}
	if (READ_ONCE(md->in_cb))
		md->freed_in_cb++;
	mutex_destroy(&md->ac_mutex);
}

static void cxi_unmap(struct cxi_md *md)
{
	mutex_lock(&md->ac_mutex);
	cxi_unmap_locked(md);
}

/* The DMA address the NIC uses for user byte @x, or 0 (ATU fault). */
static u64 cxi_nic_dma(struct cxi_md *md, u64 x)
{
	u64 iova = md->iova + (x - md->va), dma = 0;
	unsigned int i;

	mutex_lock(&md->ac_mutex);
	for (i = 0; i < md->nptes; i++)
		if (iova >= md->pte[i].iova &&
		    iova < md->pte[i].iova + md->pte[i].size)
			dma = md->pte[i].dma + (iova - md->pte[i].iova);
	mutex_unlock(&md->ac_mutex);
	return dma;
}

static void cxi_expect_wire(struct kunit *test, struct cxi_md *md,
			    struct app_buf *b, u64 va, u64 len)
{
	u64 x;

	for (x = va; x < va + len; x += SZ_64K - 0x10)
		KUNIT_EXPECT_EQ(test, cxi_nic_dma(md, x),
				rdma_fake_dma(b->bo, x - b->va));
	KUNIT_EXPECT_EQ(test, cxi_nic_dma(md, va + len - 1),
			rdma_fake_dma(b->bo, va + len - 1 - b->va));
}

#define CXI_VA		(128ULL << 30)

/*
 * A 4 MiB buffer at a 2 MiB-aligned address: get_page_size() is safe for
 * cxi's rounding and as its NIC page size; the 2 MiB-aligned runs still get
 * 2 MiB ATU entries. Free: the callback clears the ATU, nothing is put;
 * the NIC faults instead of reading freed memory. B at the same address
 * maps to B's memory.
 */
static void cxi_free_and_reuse(struct kunit *test)
{
	/* The fake backend: B's DMA addresses differ from A's (see hfi1's) */
	struct rdma_fake *f = rdma_fake_init(test);
	struct amdgpu_peer_mgr *mgr = amdgpu_rdma_test_mgr();
	struct app_buf a = {}, b = {};
	struct cxi_md *md;
	int tombs;

	md = kunit_kzalloc(test, sizeof(*md), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, md);
	app_malloc(test, f, &a, CXI_VA + SZ_2M, SZ_4M, 2, false);
	/* An unaligned user range, as a libfabric MR would be. */
	KUNIT_ASSERT_EQ(test, cxi_map(f, md, a.va + 0x123, SZ_4M - 0x200), 0);
	KUNIT_EXPECT_EQ(test, md->page_shift, PAGE_SHIFT);
	KUNIT_EXPECT_EQ(test, md->nptes, 2U);	/* two 2 MiB entries */
	cxi_expect_wire(test, md, &a, a.va + 0x123, SZ_4M - 0x200);

	tombs = atomic_read(&mgr->stats.tombstones);
	app_free(f, &a);
	KUNIT_EXPECT_TRUE(test, READ_ONCE(md->cleanup_done));
	KUNIT_EXPECT_EQ(test, md->invalidates, 1U);
	KUNIT_EXPECT_EQ(test, cxi_nic_dma(md, a.va + SZ_1M), 0ULL);
	KUNIT_EXPECT_EQ(test, atomic_read(&a.bo->pinned), 0);
	/* cxi_unmap() after the callback: no put, a tombstone stays. */
	cxi_unmap(md);
	KUNIT_EXPECT_EQ(test, atomic_read(&mgr->stats.tombstones), tombs + 1);

	app_malloc(test, f, &b, a.va, SZ_4M, 2, false);
	KUNIT_ASSERT_EQ(test, cxi_map(f, md, b.va + 0x123, SZ_4M - 0x200), 0);
	cxi_expect_wire(test, md, &b, b.va + 0x123, SZ_4M - 0x200);
	/* An ordinary cxi_unmap() puts. */
	cxi_unmap(md);
	amdkfd_rdma_synchronize();
	KUNIT_EXPECT_EQ(test, atomic_read(&b.bo->pinned), 0);
}

/* The peer memory manager's clock in the cxi cases: moved by the test */
static u64 cxi_clock_ns;

static u64 cxi_clock(struct amdgpu_peer_mgr *mgr)
{
	return READ_ONCE(cxi_clock_ns);
}

/*
 * cxi as published never puts after the callback, as ROCK's contract had
 * it (the registration was freed when the callback returned): every MD
 * whose buffer the application freed leaves a tombstone. Under a bound of
 * 4 per NIC and a minimum age of 1 s, with a map and a free each second,
 * it maps on without an error, 10 times, while its tombstones never
 * exceed the bound: each get past the bound frees the oldest one. Then a
 * burst, 5 maps and frees within one second: the fifth map fails with
 * -EAGAIN (cxi_map() returns get_pages()' error), and works again once the
 * oldest tombstone of the burst is a second old. A cxi that puts whether
 * or not the callback ran, at once (its unmap right after the free, within
 * the second), leaves no tombstone and is never refused, burst or not.
 */
static void cxi_never_puts_bounded_on(struct kunit *test, bool puts_after_cb)
{
	struct rdma_fake *f = rdma_fake_init_real(test);
	struct amdgpu_peer_mgr *mgr = amdgpu_rdma_test_mgr();
	const unsigned int bound = 4, rounds = 10;
	struct app_buf buf = {};
	struct cxi_md *md;
	int regs, tombs, refused, reclaimed, ret;
	unsigned int i, mapped = 0;

	md = kunit_kzalloc(test, sizeof(*md), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, md);
	/* The NIC is this test's: no tombstone of it yet */
	amdkfd_rdma_synchronize();
	cxi_clock_ns = 1000 * NSEC_PER_SEC;
	mgr->now = cxi_clock;
	mgr->max_tombstones = bound;
	mgr->tombstone_min_ns = NSEC_PER_SEC;
	regs = atomic_read(&mgr->stats.regs);
	tombs = atomic_read(&mgr->stats.tombstones);
	refused = atomic_read(&mgr->stats.refused);
	reclaimed = atomic_read(&mgr->stats.reclaimed);
	/* rounds one second apart, then a burst of bound + 1 within one */
	for (i = 0; i < rounds + bound + 1; i++) {
		app_malloc(test, f, &buf, CXI_VA, SZ_2M, 1, false);
		md->puts_after_cb = puts_after_cb;
		ret = cxi_map(f, md, buf.va, SZ_2M);
		if (!puts_after_cb && i == rounds + bound) {
			/* The burst's fifth: refused, nothing pinned or kept */
			KUNIT_EXPECT_EQ(test, ret, -EAGAIN);
			KUNIT_EXPECT_NULL(test, md->p2p_info);
			KUNIT_EXPECT_EQ(test, atomic_read(&buf.bo->pinned), 0);
			put_pid(md->pid);	/* the model puts what cxi leaks */
			md->pid = NULL;
			mutex_destroy(&md->ac_mutex);
			/* A second after the burst's first callback */
			WRITE_ONCE(cxi_clock_ns, cxi_clock_ns + NSEC_PER_SEC);
			md->puts_after_cb = puts_after_cb;
			ret = cxi_map(f, md, buf.va, SZ_2M);
		}
		KUNIT_ASSERT_EQ(test, ret, 0);
		mapped++;
		cxi_expect_wire(test, md, &buf, buf.va, SZ_2M);
		app_free(f, &buf);
		KUNIT_EXPECT_TRUE(test, READ_ONCE(md->cleanup_done));
		cxi_unmap(md);
		KUNIT_EXPECT_LE(test, atomic_read(&mgr->stats.tombstones),
				tombs + (int)bound);
		if (i < rounds)
			WRITE_ONCE(cxi_clock_ns, cxi_clock_ns + NSEC_PER_SEC);
	}
	amdkfd_rdma_synchronize();
	KUNIT_EXPECT_EQ(test, mapped, rounds + bound + 1);
	if (puts_after_cb) {
		KUNIT_EXPECT_EQ(test, atomic_read(&mgr->stats.tombstones),
				tombs);
		KUNIT_EXPECT_EQ(test, atomic_read(&mgr->stats.regs), regs);
		KUNIT_EXPECT_EQ(test, atomic_read(&mgr->stats.refused),
				refused);
		KUNIT_EXPECT_EQ(test, atomic_read(&mgr->stats.reclaimed),
				reclaimed);
	} else {
		KUNIT_EXPECT_EQ(test, atomic_read(&mgr->stats.tombstones),
				tombs + (int)bound);
		KUNIT_EXPECT_EQ(test, atomic_read(&mgr->stats.regs),
				regs + (int)bound);
		KUNIT_EXPECT_EQ(test, atomic_read(&mgr->stats.refused),
				refused + 1);
		/* every map past the fourth freed one tombstone */
		KUNIT_EXPECT_EQ(test, atomic_read(&mgr->stats.reclaimed),
				reclaimed + (int)(rounds + 1));
	}
}

static void cxi_never_puts_bounded(struct kunit *test)
{
	cxi_never_puts_bounded_on(test, false);
}

static void cxi_puts_after_callback_unbounded(struct kunit *test)
{
	cxi_never_puts_bounded_on(test, true);
}

/*
 * A map whose mirroring fails (the model's ATU is full: a 1 MiB buffer at
 * an address not 2 MiB aligned takes 256 entries of 4 KiB): cxi_map()
 * clears what it mirrored and puts the registration (cass_atu.c, its
 * put_device_pages label), so nothing stays registered, pinned or mapped.
 */
static void cxi_map_mirror_fails_puts(struct kunit *test)
{
	struct rdma_fake *f = rdma_fake_init(test);
	struct amdgpu_peer_mgr *mgr = amdgpu_rdma_test_mgr();
	struct app_buf a = {};
	struct cxi_md *md;
	int regs, tombs;

	md = kunit_kzalloc(test, sizeof(*md), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, md);
	amdkfd_rdma_synchronize();
	regs = atomic_read(&mgr->stats.regs);
	tombs = atomic_read(&mgr->stats.tombstones);
	app_malloc(test, f, &a, CXI_VA + SZ_64K, SZ_1M, 1, false);
	KUNIT_EXPECT_EQ(test, cxi_map(f, md, a.va, SZ_1M), -ENOSPC);
	/* Nothing mirrored is left (the model's MD is freed: no lock) */
	KUNIT_EXPECT_EQ(test, md->nptes, 0U);
	KUNIT_EXPECT_NULL(test, md->p2p_info);
	KUNIT_EXPECT_EQ(test, md->synced_before_free, md->put_waits ? 0U : 1U);
	amdkfd_rdma_synchronize();
	KUNIT_EXPECT_EQ(test, atomic_read(&mgr->stats.regs), regs);
	KUNIT_EXPECT_EQ(test, atomic_read(&mgr->stats.tombstones), tombs);
	KUNIT_EXPECT_EQ(test, atomic_read(&a.bo->pinned), 0);
}

/*
 * The window between get_pages() and cass_mirror_device(): the
 * application frees the buffer there (window_free: the callback runs and
 * clears no ATU entry; window_unmap: the mapping goes, and the backstop
 * worker may run the callback at any point, blocking on ac_mutex while
 * cxi mirrors). Today's cxi then maps memory that is no longer pinned; a
 * cxi that asks amdkfd_rdma_retry() under ac_mutex learns of it, unmaps
 * and puts, and leaves nothing pinned, mapped or registered.
 */
struct cxi_window {
	struct rdma_fake *f;
	struct app_buf *buf;
	bool free;
};

static void cxi_window_fn(void *arg)
{
	struct cxi_window *w = arg;

	if (w->free) {
		app_free(w->f, w->buf);
		return;
	}
	KUNIT_EXPECT_EQ(w->f->test, rdma_fake_unmap(w->f, w->buf->bo,
						    w->buf->va), 0);
}

struct cxi_window_case {
	const char *name;
	bool free;
	bool uses_retry;
};

static const struct cxi_window_case cxi_window_cases[] = {
	{ "freed in the window, cxi asks", true, true },
	{ "unmapped in the window, cxi asks", false, true },
	{ "freed in the window, cxi as published", true, false },
};

static void cxi_window_case_desc(const struct cxi_window_case *c, char *desc)
{
	strscpy(desc, c->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(cxi_window, cxi_window_cases, cxi_window_case_desc);

static void cxi_map_retry_window(struct kunit *test)
{
	const struct cxi_window_case *c = test->param_value;
	struct rdma_fake *f = rdma_fake_init_real(test);
	struct amdgpu_peer_mgr *mgr = amdgpu_rdma_test_mgr();
	struct app_buf buf = {}, ok = {};
	struct cxi_window w = { .f = f, .buf = &buf, .free = c->free };
	int regs, tombs, retries, ret;
	struct cxi_md *md;

	md = kunit_kzalloc(test, sizeof(*md), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, md);
	amdkfd_rdma_synchronize();
	regs = atomic_read(&mgr->stats.regs);
	tombs = atomic_read(&mgr->stats.tombstones);
	retries = atomic_read(&mgr->stats.retries);

	/* Outside the window the check says the addresses are good. */
	app_malloc(test, f, &ok, CXI_VA + SZ_1G, SZ_2M, 1, false);
	md->uses_retry = c->uses_retry;
	KUNIT_ASSERT_EQ(test, cxi_map(f, md, ok.va, SZ_2M), 0);
	cxi_expect_wire(test, md, &ok, ok.va, SZ_2M);
	KUNIT_EXPECT_EQ(test, atomic_read(&mgr->stats.retries), retries);
	cxi_unmap(md);
	app_free(f, &ok);

	app_malloc(test, f, &buf, CXI_VA, SZ_2M, 1, false);
	md->uses_retry = c->uses_retry;
	md->window = cxi_window_fn;
	md->window_arg = &w;
	ret = cxi_map(f, md, buf.va, SZ_2M);
	if (!c->free) {
		amdgpu_rdma_process_flush(f->p);
		rdma_fake_bo_del(f, buf.bo);
		amdgpu_rdma_process_flush(f->p);
	}
	amdkfd_rdma_synchronize();
	KUNIT_EXPECT_EQ(test, atomic_read(&buf.bo->pinned), 0);
	if (!c->uses_retry) {
		/* The defect the check closes: the ATU maps unpinned memory */
		KUNIT_EXPECT_EQ(test, ret, 0);
		KUNIT_EXPECT_TRUE(test, READ_ONCE(md->cleanup_done));
		KUNIT_EXPECT_GT(test, md->nptes, 0U);
		cxi_unmap(md);
		KUNIT_EXPECT_EQ(test, atomic_read(&mgr->stats.tombstones),
				tombs + 1);
		return;
	}
	KUNIT_EXPECT_EQ(test, ret, -EAGAIN);
	KUNIT_EXPECT_EQ(test, md->nptes, 0U);
	KUNIT_EXPECT_EQ(test, cxi_nic_dma(md, buf.va), 0ULL);
	KUNIT_EXPECT_EQ(test, atomic_read(&mgr->stats.retries), retries + 1);
	/* Its put after (or during) the callback left no tombstone. */
	KUNIT_EXPECT_EQ(test, atomic_read(&mgr->stats.tombstones), tombs);
	KUNIT_EXPECT_EQ(test, atomic_read(&mgr->stats.regs), regs);
	KUNIT_EXPECT_LE(test, md->invalidates, 1U);
	if (c->free)
		KUNIT_EXPECT_EQ(test, md->invalidates, 1U);
	mutex_destroy(&md->ac_mutex);
}

/*
 * cxi at process exit: do_exit() tears the mm down, and with it the KFD
 * process and its VMs, whose teardown runs the callbacks on a kworker,
 * while the exiting task's exit_files() closes the cxi fd, whose release
 * unmaps (and puts) every MD. Here the callback waits for ac_mutex, which
 * cxi_unmap() holds; cxi_unmap() then puts, the MD's cleanup_done not yet
 * set, and frees the MD: the put must not return before the callback has.
 */
struct cxi_exit {
	struct kunit *test;
	struct rdma_fake *f;
	struct completion done;
};

static int cxi_exit_vm_fn(void *data)
{
	struct cxi_exit *x = data;

	current->kunit_test = x->test;
	rdma_fake_vm_fini(x->f);
	complete(&x->done);
	return 0;
}

static void cxi_exit_put_races_callback(struct kunit *test)
{
	struct rdma_fake *f = rdma_fake_init_real(test);
	struct app_buf a = {};
	struct cxi_exit *x;
	struct cxi_md *md;

	md = kunit_kzalloc(test, sizeof(*md), GFP_KERNEL);
	x = kunit_kzalloc(test, sizeof(*x), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, md);
	KUNIT_ASSERT_NOT_NULL(test, x);
	x->test = test;
	x->f = f;
	init_completion(&x->done);
	app_malloc(test, f, &a, CXI_VA, SZ_2M, 1, false);
	KUNIT_ASSERT_EQ(test, cxi_map(f, md, a.va, SZ_2M), 0);

	/* The fd's release has taken ac_mutex; the VM goes meanwhile */
	mutex_lock(&md->ac_mutex);
	KUNIT_ASSERT_FALSE(test, IS_ERR(kthread_run(cxi_exit_vm_fn, x,
						    "cxi-exit")));
	/* Emulated, instrumented and loaded, the teardown can take a while */
	amdgpu_kunit_poll(READ_ONCE(md->in_cb));
	KUNIT_ASSERT_TRUE(test, READ_ONCE(md->in_cb));
	KUNIT_EXPECT_FALSE(test, READ_ONCE(md->cleanup_done));
	cxi_unmap_locked(md);
	KUNIT_EXPECT_EQ(test, md->freed_in_cb, 0U);
	KUNIT_EXPECT_TRUE(test, READ_ONCE(md->cleanup_done));
	/* The branch the capability calls for: the put waited, or a sync */
	KUNIT_EXPECT_EQ(test, md->put_waits,
			!!(amdkfd_rdma_capabilities() &
			   AMD_RDMA_CAP_PUT_WAITS_CALLBACK));
	KUNIT_EXPECT_EQ(test, md->synced_before_free, md->put_waits ? 0U : 1U);
	wait_for_completion(&x->done);
	amdkfd_rdma_synchronize();
	KUNIT_EXPECT_EQ(test, atomic_read(&a.bo->pinned), 0);
}

static struct kunit_case rdma_clients_cases[] = {
	KUNIT_CASE_PARAM(hfi1_free_and_reuse, hfi1_gen_params),
	KUNIT_CASE(hfi1_cache_hits),
	KUNIT_CASE_PARAM(hfi1_evict_and_retry, hfi1_evict_gen_params),
	KUNIT_CASE_PARAM(hfi1_evict_and_retry_real_backend, hfi1_evict_gen_params),
	KUNIT_CASE(hfi1_release_races_callback),
	KUNIT_CASE(cxi_free_and_reuse),
	KUNIT_CASE(cxi_never_puts_bounded),
	KUNIT_CASE(cxi_puts_after_callback_unbounded),
	KUNIT_CASE(cxi_map_mirror_fails_puts),
	KUNIT_CASE_PARAM(cxi_map_retry_window, cxi_window_gen_params),
	KUNIT_CASE(cxi_exit_put_races_callback),
	{}
};

static struct kunit_suite rdma_clients_suite = {
	.name = "amdgpu_rdma_clients",
	.test_cases = rdma_clients_cases,
};

kunit_test_suite(rdma_clients_suite);
