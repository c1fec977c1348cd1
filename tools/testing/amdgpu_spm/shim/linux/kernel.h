/* SPDX-License-Identifier: MIT */
/*
 * The few kernel helpers the SPM drain core uses, for its userspace build
 * (the way tools/testing/vma builds mm code).
 */
#ifndef __SPM_SHIM_KERNEL_H
#define __SPM_SHIM_KERNEL_H

#include <linux/types.h>
#include <linux/minmax.h>

#define READ_ONCE(x)		(*(const volatile typeof(x) *)&(x))
#define WRITE_ONCE(x, v)	(*(volatile typeof(x) *)&(x) = (v))
/* x86-64 is TSO: only the compiler must not reorder */
#define dma_rmb()		__atomic_thread_fence(__ATOMIC_ACQUIRE)
#define smp_wmb()		__atomic_thread_fence(__ATOMIC_RELEASE)
/* No interrupts to hold off in userspace */
#define local_irq_save(flags)		((flags) = 0)
#define local_irq_restore(flags)	((void)(flags))
#define mb()			__atomic_thread_fence(__ATOMIC_SEQ_CST)

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
