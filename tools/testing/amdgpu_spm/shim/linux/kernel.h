/* SPDX-License-Identifier: MIT */
/*
 * The few kernel helpers the SPM drain core uses, for its userspace build
 * (the way tools/testing/vma builds mm code).
 */
#ifndef __SPM_SHIM_KERNEL_H
#define __SPM_SHIM_KERNEL_H

#include <linux/types.h>
#include <linux/minmax.h>

#define READ_ONCE(x)		__atomic_load_n(&(x), __ATOMIC_RELAXED)
#define WRITE_ONCE(x, v)	__atomic_store_n(&(x), (v), __ATOMIC_RELAXED)
/* The barriers, as fences of the C11 memory model. */
/* acquire: the loads after it (the ring data after its write pointer) */
#define dma_rmb()		__atomic_thread_fence(__ATOMIC_ACQUIRE)
/* release: the stores before it */
#define smp_wmb()		__atomic_thread_fence(__ATOMIC_RELEASE)
/* seq_cst: stores before it and loads after it (a sentinel, then a load) */
#define mb()			__atomic_thread_fence(__ATOMIC_SEQ_CST)
/*
 * No interrupts to hold off in userspace. The tests count the holds (one
 * not given back is what lockdep would report in the kernel), and may act
 * as the RLC, which does not stop for them, when the drain takes one
 * (spm_shim_irq_hook). The test program defines both.
 */
extern unsigned long spm_shim_irqs_off;
extern void (*spm_shim_irq_hook)(void);
static inline unsigned long spm_shim_irq_save(void)
{
	if (spm_shim_irq_hook)
		spm_shim_irq_hook();
	return spm_shim_irqs_off++;
}

#define local_irq_save(flags)		((flags) = spm_shim_irq_save())
#define local_irq_restore(flags)	(spm_shim_irqs_off = (flags))

#define ARRAY_SIZE(a)		(sizeof(a) / sizeof((a)[0]))
#define IS_ALIGNED(x, a)	(((x) & ((typeof(x))(a) - 1)) == 0)
#define round_down(x, y)	((x) & ~((typeof(x))(y) - 1))
#define lower_32_bits(n)	((u32)((n) & 0xffffffff))
#define upper_32_bits(n)	((u32)(((n) >> 16) >> 16))
#define U32_MAX			((u32)~0U)
#define NSEC_PER_USEC		1000ULL
#define NSEC_PER_SEC		1000000000ULL

static inline u64 div_u64(u64 a, u32 b) { return a / b; }
static inline u64 div64_u64(u64 a, u64 b) { return a / b; }

#endif
