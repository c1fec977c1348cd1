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

#include <linux/types.h>

struct device;
struct pid;
struct sg_table;

/*
 * API versions. Clients test AMD_RDMA_MAJOR to pick the get_pages()
 * signature and AMD_RDMA_MINOR for the guarantees below.
 *
 * 1.0 Original API until ROCm 4.1; AMD_RDMA_MAJOR/MINOR undefined.
 * 2.0 get_pages() takes the peer's DMA device (dma-mapping/IOMMU support);
 *     struct amd_p2p_info lost its kfd_proc member.
 * 2.1 The free callback is delivered whenever the GPU mapping goes away;
 *     put_pages() may be called from any context, and after or from inside
 *     the callback; &amd_rdma_interface.flush_put_pages added.
 */
#define AMD_RDMA_MAJOR 2
#define AMD_RDMA_MINOR 1

/**
 * struct amd_p2p_info - a registration of GPU memory for a peer device
 *
 * Filled in by &amd_rdma_interface.get_pages and owned by amdgpu: clients
 * read it and must not modify or free it. It stays valid until the client
 * hands it back with &amd_rdma_interface.put_pages or, when the client does
 * not, until the owning process's GPU state is torn down (see
 * &amd_rdma_interface.put_pages for the exact rule).
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
	 * to get_pages(). The entries carry DMA addresses and lengths only
	 * (sg_dma_address(), sg_dma_len()); they have no struct page and must
	 * not be mapped again or touched by the CPU. Set to NULL once the free
	 * callback has returned: from then on the addresses are invalid.
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
 * locks (the KFD process mutex, the VM and BO reservations), so it must not
 * be called with locks held that a free callback of the same client takes
 * (see @get_pages) and never from inside a free callback.
 */
struct amd_rdma_interface {
	/**
	 * @get_pages: pin GPU memory and map it for a peer device.
	 *
	 * @address and @length give the range in the address space of the
	 * process @pid. The range must lie inside one GPU VM mapping of one
	 * buffer object of that process's KFD (ROCm) context, on any of its
	 * GPUs; memory mapped after it was allocated is found. The buffer is
	 * pinned (VRAM stays in place, GTT stays resident) and mapped for
	 * @dma_dev; VRAM is mapped peer to peer only where
	 * pci_p2pdma_distance() allows it between the GPU and @dma_dev.
	 * Registrations of one buffer for one @dma_dev share one pin and one
	 * DMA mapping; every call returns its own &struct amd_p2p_info.
	 *
	 * @free_callback(@client_priv) is called exactly once if the GPU
	 * mapping the range was found through goes away before the client put
	 * the registration: the application unmapped or freed the memory
	 * (KFD unmap/free, GEM VA unmap, clear or replace, GEM handle close)
	 * or the process exits. It may also be called when a mapping that
	 * merely overlaps is changed; the client must cope with a spurious
	 * call by getting the pages again. It is called in process context
	 * with no amdgpu or KFD lock held, after the path that removed the
	 * mapping dropped its locks and before that path returns to user
	 * space, so the freeing thread cannot reuse the address range before
	 * every callback has returned. (Another thread of the application
	 * reusing the range concurrently is an application bug.) It may sleep
	 * and should wait there for the peer's in-flight DMA: the DMA
	 * addresses stay valid until it returns, and are unmapped and unpinned
	 * right after. In the callback the client may call @put_pages for this
	 * registration, but must not call @get_pages, @is_gpu_address or
	 * @get_page_size. It may take the client's own locks, including one
	 * the client holds around @get_pages: the callback runs without amdgpu
	 * or KFD locks, so this does not deadlock. @free_callback may be NULL.
	 *
	 * Context: process context, may sleep.
	 * Return: 0 and *@amd_p2p_data set on success. On failure a negative
	 * errno and *@amd_p2p_data is left untouched: -EINVAL for a NULL
	 * pointer, zero @length or an overflowing range; -ESRCH if @pid has no
	 * KFD process; -EFAULT if no GPU mapping covers the whole range, the
	 * range crosses mappings, or the mapping is a PRT (sparse) mapping;
	 * -EOPNOTSUPP for userptr, doorbell, MMIO and imported (dma-buf)
	 * memory; -EREMOTEIO (or the pin's error) if VRAM cannot reach
	 * @dma_dev peer to peer; -ENOSPC if the pin quota is exhausted; -ENOMEM.
	 */
	int (*get_pages)(u64 address, u64 length, struct pid *pid,
			 struct device *dma_dev,
			 struct amd_p2p_info **amd_p2p_data,
			 void (*free_callback)(void *client_priv),
			 void *client_priv);
	/**
	 * @put_pages: give a registration back.
	 *
	 * Never blocks and may be called from any context, hard IRQ included:
	 * the sleeping part (unpin, DMA unmap, buffer release) is deferred to
	 * a workqueue, which holds a reference on the DMA device until it ran
	 * (see @flush_put_pages). After it returns the client must not touch
	 * the &struct amd_p2p_info; *@amd_p2p_data is set to NULL. If the free
	 * callback has not started yet it will not be called. If it is running
	 * on another thread, put_pages() does not wait for it.
	 *
	 * It may be called before, from inside or after the free callback.
	 * After the callback the registration stays as a tombstone (@pages is
	 * NULL) until it is put or until the owning process's GPU state is
	 * torn down; a client that never puts after the callback (as cxi does)
	 * leaks nothing past the process. A put of a tombstone after that
	 * process is gone is a use after free: clients that put late must do
	 * so from inside the callback, or ensure their put happens before the
	 * GPU process state goes away. This differs from NVIDIA's
	 * nvidia_p2p_put_pages(), which must not be called after the free
	 * callback.
	 *
	 * Context: any.
	 * Return: 0, or -EINVAL if @amd_p2p_data or *@amd_p2p_data is NULL.
	 */
	int (*put_pages)(struct amd_p2p_info **amd_p2p_data);
	/**
	 * @is_gpu_address: whether @address lies in a GPU VM mapping of the
	 * KFD process @pid that get_pages() could accept.
	 *
	 * Context: process context, may sleep; takes the same locks as
	 * @get_pages.
	 * Return: 1 if it does, 0 otherwise.
	 */
	int (*is_gpu_address)(u64 address, struct pid *pid);
	/**
	 * @get_page_size: the size of the physically contiguous, naturally
	 * aligned chunks the range is made of.
	 *
	 * Once the buffer is pinned (a registration exists) this is the real
	 * granularity of its placement; before that it is a lower bound:
	 * PAGE_SIZE. Always a power of two.
	 *
	 * Context: process context, may sleep; takes the same locks as
	 * @get_pages.
	 * Return: 0 and *@page_size set, or a negative errno as for
	 * @get_pages.
	 */
	int (*get_page_size)(u64 address, u64 length, struct pid *pid,
			     unsigned long *page_size);
	/**
	 * @flush_put_pages: wait until the deferred part of every put_pages()
	 * issued before the call has run, including the reference each holds
	 * on its DMA device. A peer driver calls it before unloading (since
	 * 2.1: test AMD_RDMA_MINOR >= 1 before using it).
	 *
	 * Context: process context, may sleep; not from a free callback.
	 */
	void (*flush_put_pages)(void);
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

#endif /* AMD_RDMA_H_ */
