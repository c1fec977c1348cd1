/* SPDX-License-Identifier: MIT */
/*
 * Copyright 2026 The amdgpu profiler series authors
 *
 * How the RLC writes an SPM ring, for the tests: the KUnit register model
 * (amdgpu_spm_rlc_test.c) and the native drain tests (tools/testing/
 * amdgpu_spm/) both use it. Each behaviour names its source:
 *
 * - The first dword of the ring is the write pointer, a byte offset into
 *   the data that starts 32 bytes in (ROCm amdkfd/kfd_spm.c reads
 *   cpu_addr[0] and copies from cpu_addr + 0x20; Mesa ac_spm.c skips "the
 *   reserved 32 bytes of data at beginning"; GC 9 has no WRPTR register).
 * - Data comes in samples of whole 32-byte lines, sample size = lines of
 *   the global and SE segments x 32 (Mesa ac_spm.c, AC_SPM_MUXSEL_LINE_SIZE
 *   and the RLC_SPM_PERFMON_SEGMENT_SIZE fields of gc_9_*_sh_mask.h). The
 *   write pointer is published after a sample's lines are in memory: not
 *   documented; it is what lets ROCm and Mesa read up to the pointer.
 * - Parts before GC 11.0.1 finish a sample that crosses the end of the
 *   ring past the end and continue at the offset where the spilled bytes
 *   would have been at the start; the write pointer counts from there
 *   ("drm/amdgpu: workaround for spm ring buffer overflow", amd-gfx, v4
 *   14/17, 26 May 2026, and kfd_spm.c's spm_overflow_reserved). Later parts
 *   wrap inside the sample. How far a spill can go is not documented;
 *   kfd_spm.c reserves 0x400 bytes.
 * - A sample that ends exactly at the end of the ring leaves nothing to
 *   spill: the write pointer goes to 0. Not documented; assumed.
 * - In ring mode 0 the RLC never stalls and overwrites unread data (Mesa
 *   ac_spm.c: "no stall and no interrupt on overflow").
 * - Whether the write pointer moves once per sample or after every line is
 *   not documented: @pub_line chooses (the KUnit model runs both, see
 *   struct spm_model_reading). Inside a spill, where the offset a line
 *   stands for is not yet known, the pointer moves only at its end.
 *
 * Every line carries its XCC and its position in that XCC's stream, so a
 * test can tell whether what reached a destination is every line in order,
 * and nothing stale.
 */

#ifndef __AMDGPU_SPM_RLC_RING_H__
#define __AMDGPU_SPM_RLC_RING_H__

/* smp_wmb(), and WRITE_ONCE() through asm-generic/barrier.h */
#include <asm/barrier.h>

#include "amdgpu_spm_drain.h"

/**
 * struct spm_rlc_ring - one XCC's RLC writing its SPM ring
 * @ring: ring memory: write pointer header, @size data bytes, @guard spill
 * @size: data bytes
 * @guard: bytes the RLC may spill past the data, 0 if it wraps exactly
 * @mem: bytes of memory after the header: a line that would land past it
 *	is not written but counted in @stray
 * @stray: lines the RLC would have written past @mem
 * @sample: bytes per sample, a multiple of 32
 * @pos: offset in the data of the next line
 * @xcc: XCC id put in every line
 * @seq: stream position of the next line
 * @pub_line: publish the write pointer after every line that ends inside
 *	the ring, not only after the sample
 */
struct spm_rlc_ring {
	u8 *ring;
	u32 size;
	u32 guard;
	u32 mem;
	u64 stray;
	u32 sample;
	u32 pos;
	u32 xcc;
	u64 seq;
	bool pub_line;
};

#define SPM_RLC_LINE_MAGIC	0x5350u	/* "SP" */

static inline void spm_rlc_line(u8 *dst, u32 xcc, u64 seq)
{
	u64 *q = (u64 *)dst;

	q[0] = seq;
	q[1] = ((u64)SPM_RLC_LINE_MAGIC << 48) | ((u64)xcc << 32) | (u32)~seq;
	q[2] = seq * 0x9e3779b97f4a7c15ULL;
	q[3] = ~q[2] ^ xcc;
}

/* Whether @p is a line of @xcc; its stream position in *@seq */
static inline bool spm_rlc_line_ok(const u8 *p, u32 xcc, u64 *seq)
{
	const u64 *q = (const u64 *)p;

	*seq = q[0];
	return q[1] == (((u64)SPM_RLC_LINE_MAGIC << 48) | ((u64)xcc << 32) |
			(u32)~q[0]) &&
	       q[2] == q[0] * 0x9e3779b97f4a7c15ULL && q[3] == (~q[2] ^ xcc);
}

static inline void spm_rlc_ring_init(struct spm_rlc_ring *m, void *ring,
				     u32 size, u32 guard, u32 sample, u32 xcc)
{
	m->ring = ring;
	m->size = size;
	m->guard = guard;
	m->mem = size + guard;
	m->stray = 0;
	m->sample = sample;
	m->pos = 0;
	m->xcc = xcc;
	m->seq = 0;
	m->pub_line = false;
}

/* The RLC was reset (SPM_PERFMON_STATE DISABLE_AND_RESET): back to 0 */
static inline void spm_rlc_ring_reset(struct spm_rlc_ring *m)
{
	m->pos = 0;
}

/*
 * Write one sample and publish the write pointer. A spill that does not
 * fit the memory after the data is written as far as it goes; its other
 * lines count in @stray (the hardware would write them into whatever
 * follows the ring). Returns false if it did.
 */
static inline bool spm_rlc_ring_sample(struct spm_rlc_ring *m)
{
	u8 *data = m->ring + AMDGPU_SPM_RING_HDR_SIZE;
	u32 i, n = m->sample / AMDGPU_SPM_LINE_SIZE, pos = m->pos;
	u64 stray = m->stray;

	for (i = 0; i < n; i++) {
		if (pos + AMDGPU_SPM_LINE_SIZE <= m->mem)
			spm_rlc_line(data + pos, m->xcc, m->seq);
		else
			m->stray++;
		m->seq++;
		pos += AMDGPU_SPM_LINE_SIZE;
		/* Later parts wrap inside the sample */
		if (!m->guard && pos == m->size)
			pos = 0;
		if (m->pub_line && pos < m->size && i + 1 < n) {
			/* The line is in memory before the pointer past it */
			smp_wmb();
			WRITE_ONCE(*(u32 *)m->ring, pos);
		}
	}
	if (m->guard && pos >= m->size)
		pos -= m->size;	/* the spill stands for [0, pos) */
	m->pos = pos;
	/* The lines are in memory before the pointer that covers them */
	smp_wmb();
	WRITE_ONCE(*(u32 *)m->ring, pos);
	return m->stray == stray;
}

#endif
