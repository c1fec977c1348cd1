/* SPDX-License-Identifier: GPL-2.0 OR MIT */
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

/*
 * Peer memory interface of amdgpu/amdkfd for RDMA drivers (hfi1, HPE cxi,
 * ...): pin the GPU memory behind a user virtual address of a ROCm process
 * and hand out its DMA addresses for a peer device.
 */

#ifndef AMD_RDMA_H_
#define AMD_RDMA_H_

#include <linux/bits.h>
#include <linux/types.h>

struct device;
struct pid;
struct sg_table;

/*
 * API versions. Clients test AMD_RDMA_MAJOR to pick the get_pages()
 * signature. What a client may rely on at run time is what
 * amdkfd_rdma_capabilities() reports: a module built against this header
 * may be loaded with an amdgpu that implements an older one.
 *
 * 1.0 Original API until ROCm 4.1; AMD_RDMA_MAJOR/MINOR undefined.
 * 2.0 get_pages() takes the peer's DMA device (dma-mapping/IOMMU support);
 *     struct amd_p2p_info lost its kfd_proc member.
 * 2.1 The rules below: free callbacks are called, a NULL callback asks
 *     for persistent pages, put_pages() may be called in any context;
 *     amdkfd_rdma_capabilities() and amdkfd_rdma_synchronize() added.
 *     &struct amd_rdma_interface is unchanged. The end of a registration
 *     changed too: ROCK's implementation (kfd_rdma.c) freed it as soon
 *     as its free callback returned, and documented so at get_pages(), so
 *     a put after the callback was a use after free there, and its
 *     clients make none on purpose. The callback still ends the
 *     registration for a client that does not put it afterwards; but the
 *     registration now stays readable for a while, and a put within
 *     amdgpu.rdma_tombstone_min_ms of the callback's return releases it
 *     and no other (see put_pages()).
 * 2.2 amdkfd_rdma_retry() added (%AMD_RDMA_CAP_RETRY). Nothing else
 *     changed.
 */
#define AMD_RDMA_MAJOR 2
#define AMD_RDMA_MINOR 2

/**
 * struct amd_p2p_info - a registration of GPU memory for a peer device
 *
 * Filled in by &amd_rdma_interface.get_pages and owned by amdgpu: clients
 * read it and must not modify or free it. All of it, @pages and its
 * scatterlist included, stays readable until the client hands it back with
 * &amd_rdma_interface.put_pages; once the free callback returned, for
 * amdgpu.rdma_tombstone_min_ms at least, and then possibly no longer (see
 * &amd_rdma_interface.put_pages).
 */
struct amd_p2p_info {
	/**
	 * @va: the user virtual address that was asked for (the start of the
	 * range that @pages describes).
	 */
	u64 va;
	/** @size: the length in bytes that was asked for. */
	u64 size;
	/** @pid: the process @va belongs to. */
	struct pid *pid;
	/**
	 * @pages: DMA addresses of [@va, @va + @size) for the DMA device given
	 * to get_pages(), in address order; the lengths add up to @size and
	 * an entry may have any length and alignment. The entries carry DMA
	 * addresses and lengths only (sg_dma_address(), sg_dma_len()); they
	 * have no struct page and must not be mapped again or touched by the
	 * CPU. Never NULL, and not changed until put; once a free callback
	 * for this registration has returned, the addresses are invalid.
	 */
	struct sg_table *pages;
	/** @priv: amdgpu private data; clients must not touch it. */
	void *priv;
};

/**
 * struct amd_rdma_interface - peer memory operations of amdgpu
 *
 * Returned by amdkfd_query_rdma_interface(). Unless stated otherwise every
 * operation runs in process context, may sleep, and takes amdgpu and KFD
 * locks (the KFD process mutex, the VM and BO reservations), so it must
 * not be called from a free callback; a client may hold its own locks
 * around it, including ones its free callback takes.
 */
struct amd_rdma_interface {
	/**
	 * @get_pages: pin GPU memory and map it for a peer device.
	 *
	 * @address and @length give the range in the address space of the
	 * process @pid (NULL: the calling process, as in API 2.0). The range
	 * must lie inside one GPU VM mapping of one buffer object of that
	 * process's KFD (ROCm) context, on any of its GPUs; memory mapped
	 * after it was allocated is found. The buffer is
	 * pinned (VRAM stays in place, GTT stays resident) and mapped for
	 * @dma_dev: for the peer to read only (DMA_TO_DEVICE) if the GPU
	 * mapping is read-only, for both directions otherwise. Registrations
	 * of one buffer for one @dma_dev and direction share one pin and one
	 * DMA mapping; every call returns its own &struct amd_p2p_info.
	 *
	 * VRAM is mapped peer to peer where pci_p2pdma_distance() allows it
	 * between the GPU and @dma_dev. Where that function does not know
	 * the topology, the administrator can vouch for the path of a GPU to
	 * every peer by naming the GPU (its PCI name) in the
	 * amdgpu.rdma_p2p_devices module parameter; amdgpu.rdma_p2p=0
	 * forbids P2P to VRAM on every GPU.
	 *
	 * The bytes registered (@length, per registration) are charged to a
	 * quota of the GPU, the amdgpu.rdma_pin_limit_mb module parameter;
	 * @put_pages gives them back at once, so a client that puts idle
	 * registrations on -ENOSPC can retry right away.
	 *
	 * If @free_callback is NULL, the registration is persistent: the
	 * memory stays pinned and mapped for @dma_dev until the client puts
	 * it, whatever the application does with the buffer or its mappings
	 * (a client that watches the CPU mapping itself, as hfi1 does with an
	 * mmu_interval_notifier, passes NULL). Only the removal of the GPU
	 * (hot unplug, driver unbind) ends it earlier, without a callback:
	 * from then on nothing is pinned or mapped for it, its
	 * &struct amd_p2p_info stays readable (the addresses in it are
	 * invalid), amdkfd_rdma_retry() returns true for it, and the client
	 * puts it as usual (0). The memory of a buffer the application freed
	 * stays pinned, and charged to the quota, until such a client puts
	 * it.
	 *
	 * Otherwise @free_callback(@client_priv) is called exactly once if,
	 * before the client put the registration, the GPU VM mapping the
	 * range was found through goes away (the application unmapped or
	 * freed the memory: KFD unmap/free, GEM VA unmap, clear or replace,
	 * GEM handle close; or its process exits), the GPU is reset (GPU
	 * recovery, RAS), or the GPU is removed. It may also be called when a
	 * mapping that merely overlaps is changed; the client gets the pages
	 * again. It is called in process context with no amdgpu or KFD lock
	 * held: for a mapping removed by a system call, after that call
	 * dropped its locks and before it returns to user space, so the
	 * freeing thread cannot reuse the address range before every callback
	 * has returned (another thread of the application reusing the range
	 * concurrently is an application bug); at GPU reset from a workqueue,
	 * while the reset goes on (the reset cannot wait for it: the callback
	 * may wait for a lock that a thread inside @get_pages holds while
	 * that thread waits for a GPU fence only the reset signals). It may
	 * sleep, and should wait there for the peer's DMA still in flight:
	 * the DMA addresses stay valid, and the memory pinned, until it
	 * returns, and are unmapped and unpinned right after. After a reset
	 * the callback means that what the peer transferred since the reset
	 * began is undefined: the client treats its transfers in flight as
	 * lost. It may take the client's own locks and may call @put_pages
	 * for this registration, but must not call the other operations.
	 *
	 * Context: process context, may sleep.
	 * Return: 0 and *@amd_p2p_data set on success. On failure a negative
	 * errno and *@amd_p2p_data is left untouched: -EINVAL for a NULL
	 * pointer, zero @length or an overflowing range; -ENODEV if the
	 * interface is not set up or the GPU is going away; -ESRCH if @pid
	 * has no KFD process; -EFAULT if no GPU mapping covers the whole
	 * range, the range crosses mappings, or the mapping is a PRT (sparse)
	 * or unreadable mapping; -EOPNOTSUPP for memory that is not a user
	 * buffer of the process in VRAM or GTT (kernel buffers mapped into
	 * every VM, userptr, doorbell, MMIO, imported dma-buf, encrypted);
	 * -EREMOTEIO if VRAM cannot reach @dma_dev peer to peer; -ENOSPC
	 * over the GPU's quota; -EAGAIN, with a @free_callback, while
	 * @dma_dev has amdgpu.rdma_max_tombstones registrations that it has
	 * not put and whose callback all returned less than
	 * amdgpu.rdma_tombstone_min_ms ago (it clears within that time; see
	 * @put_pages); -ENOMEM; or the error of pinning or mapping.
	 */
	int (*get_pages)(u64 address, u64 length, struct pid *pid,
			 struct device *dma_dev,
			 struct amd_p2p_info **amd_p2p_data,
			 void (*free_callback)(void *client_priv),
			 void *client_priv);
	/**
	 * @put_pages: give a registration back.
	 *
	 * May be called from any context, hard IRQ included: the sleeping
	 * part (unpin, DMA unmap, buffer release) is deferred to a workqueue
	 * (see amdkfd_rdma_synchronize()). *@amd_p2p_data is set to NULL;
	 * after the call the client must not touch the &struct amd_p2p_info.
	 * If the free callback has not been called yet it will not be. If it
	 * is running on another thread, put_pages() waits until it has
	 * returned when called where it may sleep (preemptible, not in
	 * interrupt or an RCU read-side section, and not from inside any
	 * free callback; on a kernel without CONFIG_PREEMPT_COUNT it cannot
	 * tell and never waits, and %AMD_RDMA_CAP_PUT_WAITS_CALLBACK is not
	 * set), so that the client
	 * may free what its callback uses once put_pages() returned; it must
	 * then not hold a lock that any free callback takes. Where it does not
	 * wait, the client must not free what the callback uses until the
	 * callback has returned: it can put from process context instead, or
	 * call amdkfd_rdma_synchronize() before freeing. A second put of a
	 * registration whose callback is running is ignored.
	 *
	 * Before the free callback and while it runs (from inside it, too),
	 * a put is always fine, and so is a put after the process, its VMs
	 * or the GPU are gone: it returns 0 and touches nothing but the
	 * registration. A client puts each registration at most once: the
	 * put knows the registration only by the address of its
	 * &struct amd_p2p_info, and a second put, once the first one freed
	 * it, may find another registration at that address.
	 *
	 * The free callback ends the registration for a client that does
	 * not put it afterwards, as the implementation in ROCm's
	 * ROCK-Kernel-Driver did: such a client need not put it, and must
	 * not touch its &struct amd_p2p_info after the time said below. A
	 * client may still put after the callback (a put that raced the
	 * callback, say), but only within amdgpu.rdma_tombstone_min_ms (10000
	 * by default) of the callback's return: until then amdgpu keeps the
	 * registration, readable, and the put releases it and no other.
	 * Later amdgpu may have freed it (below), and a new registration may
	 * have its address: a put after that time may release another
	 * registration, which is a client bug, as a second put is. There is
	 * no such limit for a persistent registration that a GPU's removal
	 * ended: its client was never told, and its put is fine at any time.
	 *
	 * Per @dma_dev, amdgpu keeps up to amdgpu.rdma_max_tombstones
	 * (16384 by default) registrations whose callback ran and that were
	 * not put. Past that, a @get_pages with a free callback first frees
	 * the oldest of them that are amdgpu.rdma_tombstone_min_ms old, and
	 * fails with -EAGAIN if none is, which clears within that time (the
	 * kernel log names @dma_dev when that happens). A put of such a
	 * registration makes room at once; persistent gets are never
	 * refused. NVIDIA's nvidia_p2p_put_pages(), in contrast, must not
	 * be called after the free callback.
	 *
	 * Context: any; may sleep only as said above.
	 * Return: 0, or -EINVAL if @amd_p2p_data or *@amd_p2p_data is NULL.
	 */
	int (*put_pages)(struct amd_p2p_info **amd_p2p_data);
	/**
	 * @is_gpu_address: whether @address lies in a GPU VM mapping of the
	 * KFD process @pid that get_pages() would accept.
	 *
	 * Context: process context, may sleep; takes the same locks as
	 * @get_pages.
	 * Return: 1 if it does, 0 otherwise.
	 */
	int (*is_gpu_address)(u64 address, struct pid *pid);
	/**
	 * @get_page_size: the granularity to build page tables for the range
	 * with.
	 *
	 * cxi and hfi1's send path round [@address, @address + @length) out
	 * to this size before they call get_pages() on the result, and cxi
	 * maps the NIC's pages at this size (hfi1's receive path asks after
	 * get_pages() and does not round). The size is safe for that:
	 * rounding the range out to it stays inside the GPU mapping, and the
	 * DMA addresses get_pages() returns are contiguous and aligned within
	 * every such page. It depends only on the range and on the GPU
	 * mapping, not on earlier calls or on where the memory is placed:
	 * the largest power of two not above PAGE_SIZE that keeps the
	 * rounded range inside the mapping (PAGE_SIZE unless the mapping is
	 * smaller or less aligned than a CPU page). Larger DMA-contiguous
	 * runs show in the entries of &amd_p2p_info.pages.
	 *
	 * Context: process context, may sleep; takes the same locks as
	 * @get_pages.
	 * Return: 0 and *@page_size set, or a negative errno as for
	 * @get_pages (-EINVAL also for a NULL @page_size).
	 */
	int (*get_page_size)(u64 address, u64 length, struct pid *pid,
			     unsigned long *page_size);
};

/**
 * amdkfd_query_rdma_interface - get the peer memory operations
 * @rdma: set to the operations on success
 *
 * Context: any.
 * Return: 0, -EINVAL if @rdma is NULL, or -ENODEV if amdgpu could not set
 * the interface up (no KFD, or its workqueue could not be allocated).
 */
int amdkfd_query_rdma_interface(const struct amd_rdma_interface **rdma);

/* Free callbacks are called, as &amd_rdma_interface.get_pages says. */
#define AMD_RDMA_CAP_FREE_CALLBACK	BIT_ULL(0)
/* A NULL free callback asks for pages pinned and mapped until put. */
#define AMD_RDMA_CAP_PERSISTENT		BIT_ULL(1)
/* put_pages() may be called from hard IRQ, where it never blocks. */
#define AMD_RDMA_CAP_PUT_ANY_CONTEXT	BIT_ULL(2)
/*
 * put_pages() after the process is fine, and so is one after the callback
 * within amdgpu.rdma_tombstone_min_ms (returns 0).
 */
#define AMD_RDMA_CAP_LATE_PUT		BIT_ULL(3)
/* Free callbacks also at GPU reset and GPU removal. */
#define AMD_RDMA_CAP_DEVICE_EVENTS	BIT_ULL(4)
/* put_pages() where it may sleep waits for a callback another thread runs. */
#define AMD_RDMA_CAP_PUT_WAITS_CALLBACK	BIT_ULL(5)
/* amdkfd_rdma_retry() is there (since 2.2). */
#define AMD_RDMA_CAP_RETRY		BIT_ULL(6)

/**
 * amdkfd_rdma_capabilities - what this amdgpu guarantees its peers
 *
 * Since 2.1. A client looks it up at run time, so that it also loads with
 * an amdgpu that does not have it (and then relies on none of it), e.g.::
 *
 *	u64 (*caps)(void) = symbol_get(amdkfd_rdma_capabilities);
 *	u64 c = caps ? caps() : 0;
 *
 *	if (caps)
 *		symbol_put(amdkfd_rdma_capabilities);
 *
 * Context: any.
 * Return: a mask of AMD_RDMA_CAP_* bits; 0 if the interface is not set up.
 */
u64 amdkfd_rdma_capabilities(void);

/**
 * amdkfd_rdma_synchronize - wait for callbacks and deferred releases
 *
 * Since 2.1 (look it up with symbol_get() as amdkfd_rdma_capabilities()).
 * Returns when every release deferred by a put_pages() issued before the
 * call has run, including the reference each held on its DMA device, and
 * no free callback is running anywhere. A peer driver calls it before it
 * unloads, after it stopped calling get_pages(), so that no code or data
 * of the module is in use by amdgpu any more.
 *
 * Context: process context, may sleep; not from a free callback.
 */
void amdkfd_rdma_synchronize(void);

/**
 * amdkfd_rdma_retry - whether a free callback began since get_pages()
 * @info: a registration the caller got and has not put
 *
 * Since 2.2 (look it up with symbol_get() as amdkfd_rdma_capabilities()).
 * The free callback may run at any time after get_pages() returned, also
 * before the client has programmed its device with the addresses; the
 * callback then finds nothing to tear down, and the device would use
 * memory that is being unpinned. A client that wants to close that window
 * does what mmu_interval_read_retry() users do: it programs its device
 * and then, still holding a lock that its free callback takes, calls
 * amdkfd_rdma_retry(). False: the addresses stay valid until the callback,
 * which will take that lock after the client dropped it and so will find
 * the device programmed. True: a callback has begun or already ran (the
 * buffer is being freed, the GPU is being reset or removed); the client
 * undoes the programming, puts the registration, and gets the range again
 * if it still wants it (which fails if the memory is gone).
 *
 * For a persistent registration (NULL free callback) it is false until a
 * GPU removal ends it. The callback itself may still be running when this
 * returns true.
 *
 * Context: any; never sleeps.
 * Return: false while the addresses in @info stay valid until a callback
 * or a put; true otherwise (also for a registration amdgpu does not know,
 * or when the interface is not set up).
 */
bool amdkfd_rdma_retry(const struct amd_p2p_info *info);

#endif /* AMD_RDMA_H_ */
