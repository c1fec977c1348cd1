/* SPDX-License-Identifier: MIT */
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

#ifndef __AMDGPU_SPM_DRAIN_H__
#define __AMDGPU_SPM_DRAIN_H__

/*
 * The SPM drain core: the arithmetic that moves what the RLC wrote into an
 * SPM ring into a share of a destination buffer. It knows nothing about
 * amdgpu_device, registers or locking; it is built into amdgpu and, with
 * the shim headers of tools/testing/amdgpu_spm/, as a userspace program that
 * unit-tests and benchmarks it natively.
 */

#include <linux/types.h>

struct page;

/* Bytes at the start of the ring that hold the write pointer (all parts). */
#define AMDGPU_SPM_RING_HDR_SIZE	32
/* The RLC writes, and the drain copies, whole lines of this many bytes. */
#define AMDGPU_SPM_LINE_SIZE		32
/*
 * Bytes after the ring's data area that parts before GC 11.0.1 may spill
 * into when a sample crosses the end of the ring (ROCm's kfd_spm.c keeps
 * 0x400; we keep more, a sample can be ~9 KiB). The spill must be filled
 * with AMDGPU_SPM_GUARD_MAGIC before the RLC starts.
 */
#define AMDGPU_SPM_GUARD_SIZE		SZ_64K
#define AMDGPU_SPM_GUARD_MAGIC		0xbeefabcddeadabcdULL

/**
 * struct amdgpu_spm_dst - a destination buffer, as the drain writes it
 * @pages: the pinned pages of the buffer, or NULL when it is written
 *	through @write.
 * @offset: offset of the buffer's first byte in @pages[0].
 * @size: size in bytes.
 * @write: for buffers that could not be pinned: write @len bytes at @off;
 *	returns 0 or a negative errno. Called by the drain only.
 * @priv: for @write.
 */
struct amdgpu_spm_dst {
	struct page **pages;
	unsigned long offset;
	u32 size;
	int (*write)(struct amdgpu_spm_dst *dst, u32 off, const void *src,
		     u32 len);
	void *priv;
};

/**
 * struct amdgpu_spm_share - one XCC's share of the current destination
 * @off: offset of the share's header in the destination.
 * @cap: data bytes the share can hold (after its header).
 * @copied: data bytes copied into it.
 * @loss: samples of this XCC were lost while the share was current.
 * @full: the share filled up while more data waited in the ring; that data
 *	stays there for the next share.
 * @dirty: its header has not been written since it changed.
 * @xcc_info: the header's xcc_info word (logical XCC, shares, index).
 * @seq: the header's buffer sequence number.
 * @start_ns: CLOCK_BOOTTIME time the share was installed.
 * @last_ns: CLOCK_BOOTTIME time data was last copied into it, 0 if never.
 */
struct amdgpu_spm_share {
	u32 off;
	u32 cap;
	u32 copied;
	bool loss;
	bool full;
	bool dirty;
	u32 xcc_info;
	u32 seq;
	u64 start_ns;
	u64 last_ns;
};

/**
 * struct amdgpu_spm_cursor - the drain's view of one XCC's ring
 * @ring: ring memory: the write pointer header, then @size data bytes,
 *	then @guard spill bytes.
 * @size: data bytes; a multiple of %AMDGPU_SPM_LINE_SIZE.
 * @guard: spill bytes after the data (parts before GC 11.0.1), or 0 when
 *	the RLC wraps exactly at the end of the data.
 * @rptr: where the next byte to consume is: an offset in the data, or,
 *	while the RLC has wrapped and the drain stopped at or inside the
 *	spill, @size plus the offset in the spill. @rptr % @size is the offset
 *	in the ring that position stands for, the RLC's read pointer.
 * @wptr: the write pointer the last drain read.
 * @armed: a sentinel sits in the last ring line consumed before @rptr.
 * @tainted: data was lost and the guard was not re-armed: the next wrap is
 *	not trusted either.
 * @blind_until: while @consumed is below this, nothing is delivered: a
 *	sentinel may have landed on a line the RLC had just written (it lapped
 *	while the sentinel was placed), so the ring is not trusted until the
 *	RLC has gone round it once more. What the RLC writes meanwhile is
 *	consumed and dropped, whether or not the share has room. 0 when not
 *	blind.
 * @token: the sentinel.
 * @consumed: bytes taken from the ring, copied or dropped; data that did
 *	not fit the share stays in the ring and is not counted until taken.
 * @laps: times the RLC overwrote data the drain had not consumed.
 */
struct amdgpu_spm_cursor {
	u8 *ring;
	u32 size;
	u32 guard;
	u32 rptr;
	u32 wptr;
	bool armed;
	bool tainted;
	u64 blind_until;
	u8 token[AMDGPU_SPM_LINE_SIZE];
	u64 consumed;
	u64 laps;
};

/**
 * struct amdgpu_spm_pace - the adaptive drain period
 * @rate: estimated fill rate, bytes per second.
 * @last_ns: time of the previous drain, 0 before the first.
 * @period_ns: the period chosen by the previous amdgpu_spm_pace_next().
 */
struct amdgpu_spm_pace {
	u64 rate;
	u64 last_ns;
	u64 period_ns;
};

void amdgpu_spm_cursor_init(struct amdgpu_spm_cursor *c, void *ring,
			    u32 size, u32 guard, const u8 *token);
void amdgpu_spm_cursor_restart(struct amdgpu_spm_cursor *c);
u32 amdgpu_spm_cursor_rdptr(const struct amdgpu_spm_cursor *c);
u32 amdgpu_spm_cursor_pending(const struct amdgpu_spm_cursor *c);
u32 amdgpu_spm_drain_ring(struct amdgpu_spm_cursor *c,
			  struct amdgpu_spm_share *sh,
			  struct amdgpu_spm_dst *dst, u64 now_ns);

u32 amdgpu_spm_share_size(u32 buf_size, u32 num_shares);
u32 amdgpu_spm_share_loss(const struct amdgpu_spm_share *sh);
void amdgpu_spm_share_init(struct amdgpu_spm_share *sh, u32 share_size,
			   u32 index, u32 num_shares, u32 xcc, u32 seq,
			   u64 now_ns);
int amdgpu_spm_share_header(struct amdgpu_spm_share *sh,
			    struct amdgpu_spm_dst *dst, u32 version);
int amdgpu_spm_dst_write(struct amdgpu_spm_dst *dst, u32 off,
			 const void *src, u32 len);

void amdgpu_spm_pace_init(struct amdgpu_spm_pace *p, u64 idle_ns);
u64 amdgpu_spm_pace_hold(struct amdgpu_spm_pace *p, u64 now_ns);
u64 amdgpu_spm_pace_next(struct amdgpu_spm_pace *p, u64 now_ns, u64 bytes,
			 u32 ring_size, u64 min_ns, u64 idle_ns);

#endif
