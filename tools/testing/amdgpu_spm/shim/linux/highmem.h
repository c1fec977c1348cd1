/* SPDX-License-Identifier: MIT */
/*
 * Pages for the userspace build of the SPM drain core: a struct page is a
 * page-sized, page-aligned block of memory, so memcpy_to_page() is the
 * memcpy() that the kernel's does on a kernel-mapped page.
 */
#ifndef __SPM_SHIM_HIGHMEM_H
#define __SPM_SHIM_HIGHMEM_H

#include <string.h>
#include <linux/types.h>

#define PAGE_SHIFT		12
#define PAGE_SIZE		4096UL
#define offset_in_page(p)	((unsigned long)(p) & (PAGE_SIZE - 1))

struct page {
	unsigned char data[PAGE_SIZE];
};

static inline void memcpy_to_page(struct page *page, size_t offset,
				  const void *from, size_t len)
{
	memcpy(page->data + offset, from, len);
}

#endif
