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
 * DOC: SPM drain core
 *
 * What the RLC leaves in an SPM ring, and how the drain reads it:
 *
 * - The first 32 bytes of the ring hold the write pointer, a byte offset
 *   into the data that follows (ROCm's kfd_spm.c reads it from the ring's
 *   first dword, and GC 9 has no RLC_SPM_RING_WRPTR register). The RLC
 *   writes whole 32-byte lines.
 * - The rings run in the mode that never stalls (PERFMON_RING_MODE 0): the
 *   RLC overwrites data the drain has not read. So that a lap of the write
 *   pointer between two drains does not look like an empty or a short
 *   ring, the drain leaves a random 32-byte sentinel in the last line it
 *   consumed. The RLC cannot reach the read pointer again without writing
 *   over that line first; a changed sentinel means data was lost.
 * - Parts before GC 11.0.1 finish a sample that crosses the end of the ring
 *   past the end (the spill, kept in a guard area filled with a magic
 *   pattern) and go on at the offset the spill would have had at the start
 *   of the ring; the write pointer then counts from there (ROCm's
 *   kfd_spm.c, and the "workaround for spm ring buffer overflow" posting on
 *   amd-gfx). The bytes at the start of the ring that the spill stands for
 *   are stale: the drain reads the spill instead and never reads them.
 *
 * The drain copies no more than the share has room for, in whole lines
 * (a share's capacity is a multiple of 32 bytes). What does not fit stays
 * in the ring: the read pointer, and the sentinel with it, stop after the
 * last line copied, and the next drain, normally into the next buffer,
 * goes on exactly there. With no buffer installed nothing is copied and
 * everything stays. A full share says so (&amdgpu_spm_share.full, the
 * %AMDGPU_SPM_LOSS_FULL bit of has_data_loss), as ROCm's kfd_spm.c sets
 * has_data_loss as a hint for a full buffer: in a ring mode that stalls,
 * the RLC stops sampling while the ring is full, which the drain cannot
 * see. Data that comes while no buffer is installed counts as lost. If
 * the RLC laps what was left in the ring, the sentinel catches it as any
 * lap, and the loss goes to the share that is current then. The drain
 * drops data without copying it only while it does not trust the ring:
 * after a lap, until the RLC has gone round it once more
 * (&amdgpu_spm_cursor.blind_until).
 *
 * A drain may stop anywhere in a wrap: in [r, size), in the spill, or in
 * [k, w) (r the read pointer, k the spill's length, w the write pointer).
 * What keeps that safe:
 *
 * - The guard is re-armed only once the whole spill is consumed. Until
 *   then its lines are data still to copy, and they tell the next drain
 *   where the spill ends.
 * - A read pointer at the end of the data or inside the spill is kept as
 *   size + the bytes of the spill consumed. Its sentinel is the last line
 *   of the ring, the last ring line consumed. The RLC writes that line
 *   before the first byte of its next spill, so before it can write over
 *   anything of the wrap not yet consumed: the rest of the spill, or the
 *   ring from k on. A sentinel in the spill would not do: a next spill
 *   shorter than what was consumed of this one would miss it, and the RLC
 *   would go on over [k, w) in the ring.
 * - The guard is re-armed before the sentinel of the read pointer the
 *   drain started from is checked, and that sentinel is at or before the
 *   last line of the ring: if it is still there, the RLC had not begun
 *   another spill when the guard was filled.
 * - A read pointer in [k, w) is like any other in the ring: the sentinel
 *   is in the line before it, and a next spill that reaches past it (so
 *   that the RLC skips that line) is what the spill check of the next
 *   drain looks for.
 *
 * Everything here is arithmetic over memory: the caller provides locking,
 * the time, and the destination (pinned pages, or a write function for
 * memory that cannot be pinned).
 */

#include <linux/kernel.h>
#include <linux/highmem.h>
#include <linux/math64.h>
#include <linux/minmax.h>
#include <linux/sizes.h>
#include <linux/string.h>
#include <linux/time64.h>
#include <asm/barrier.h>

#include <drm/amdgpu_drm.h>

#include "amdgpu_spm_drain.h"

#define LINE	AMDGPU_SPM_LINE_SIZE

/*
 * Placing a sentinel and checking the one before it must take far less
 * time than a lap of the RLC; keep interrupts off for those few stores.
 */
#define spm_hold(flags)		local_irq_save(flags)
#define spm_unhold(flags)	local_irq_restore(flags)

static u8 *spm_data(struct amdgpu_spm_cursor *c)
{
	return c->ring + AMDGPU_SPM_RING_HDR_SIZE;
}

/*
 * The line that holds the sentinel of read pointer @pos: the last ring line
 * consumed before it. Inside a wrap, once [r, size) is consumed (@pos at or
 * past the end of the data, in the spill), that is the last line of the
 * ring: the spill lies outside the ring, and the RLC writes the last line
 * of the ring before any byte of its next spill.
 */
static u32 spm_sentinel_line(const struct amdgpu_spm_cursor *c, u32 pos)
{
	return pos && pos < c->size ? pos - LINE : c->size - LINE;
}

static void spm_arm(struct amdgpu_spm_cursor *c)
{
	memcpy(spm_data(c) + spm_sentinel_line(c, c->rptr), c->token, LINE);
	c->armed = true;
}

/* Whether the sentinel of read pointer @pos was written over */
static bool spm_gone_before(struct amdgpu_spm_cursor *c, u32 pos)
{
	return c->armed &&
	       memcmp(spm_data(c) + spm_sentinel_line(c, pos), c->token, LINE);
}

static bool spm_sentinel_gone(struct amdgpu_spm_cursor *c)
{
	return spm_gone_before(c, c->rptr);
}

/*
 * Bytes from read pointer @from to write pointer @to. A read pointer in the
 * spill (at or past the end of the data) stands for the same offset at the
 * start of the ring, where the RLC went on after the spill; so does a
 * write pointer at the ring's size then (an RLC that publishes the size
 * for the end of the ring): both are at the start, nothing is between.
 */
static u32 spm_ahead(const struct amdgpu_spm_cursor *c, u32 from, u32 to)
{
	if (from >= c->size) {
		from -= c->size;
		if (to == c->size)
			to = 0;
	}
	return to >= from ? to - from : c->size - from + to;
}

static void spm_guard_fill(struct amdgpu_spm_cursor *c, u32 len)
{
	u64 *g = (u64 *)(spm_data(c) + c->size);
	u32 i;

	for (i = 0; i < len / sizeof(*g); i++)
		g[i] = AMDGPU_SPM_GUARD_MAGIC;
}

/* Bytes of spill in the guard: lines up to the first one still magic */
static u32 spm_spill(struct amdgpu_spm_cursor *c)
{
	const u8 *g = spm_data(c) + c->size;
	u32 k;

	for (k = 0; k < c->guard; k += LINE) {
		const u64 *w = (const u64 *)(g + k);

		if (w[0] == AMDGPU_SPM_GUARD_MAGIC &&
		    w[1] == AMDGPU_SPM_GUARD_MAGIC &&
		    w[2] == AMDGPU_SPM_GUARD_MAGIC &&
		    w[3] == AMDGPU_SPM_GUARD_MAGIC)
			break;
	}
	return k;
}

/*
 * A sentinel may sit on a line the RLC has just written: deliver nothing
 * until the RLC has written every line of the ring once more.
 */
static void spm_go_blind(struct amdgpu_spm_cursor *c)
{
	c->blind_until = c->consumed + c->size + c->guard + LINE;
}

/*
 * Whether a spill reaches @r, so that the RLC resumed (or will resume) at
 * or past it, skipping the sentinel at the line before it. At @r 0 the
 * sentinel is the ring's last line, which the RLC writes before it
 * spills: while the guard is trusted, that sentinel already catches a
 * lap. After a resync (@c tainted) the guard was not re-armed, and a
 * resync at a write pointer 0 that was a lap old may have put its
 * sentinel over the last line after the RLC wrote it: any spill is then
 * taken for a lap, as the lines it stands for at the start of the ring
 * are not data. That also drops the data up to the next wrap after a
 * resync at 0 whose guard still holds the lapped wrap's own spill.
 */
static bool spm_spill_reaches(struct amdgpu_spm_cursor *c, u32 r)
{
	if (!c->guard)
		return false;
	if (!r)
		return c->tainted && spm_spill(c);
	return spm_spill(c) >= r;
}

/**
 * amdgpu_spm_cursor_init - set up the drain state of a ring
 * @c: the cursor
 * @ring: ring memory: header, @size data bytes, @guard spill bytes
 * @size: data bytes, a non-zero multiple of %AMDGPU_SPM_LINE_SIZE
 * @guard: spill bytes (0 for parts that wrap exactly)
 * @token: %AMDGPU_SPM_LINE_SIZE random bytes, the sentinel
 *
 * The ring is not touched until amdgpu_spm_cursor_restart().
 */
void amdgpu_spm_cursor_init(struct amdgpu_spm_cursor *c, void *ring,
			    u32 size, u32 guard, const u8 *token)
{
	memset(c, 0, sizeof(*c));
	c->ring = ring;
	c->size = size;
	c->guard = guard;
	memcpy(c->token, token, LINE);
}

/**
 * amdgpu_spm_cursor_restart - the RLC is about to start at offset 0
 * @c: the cursor
 *
 * Zeroes the write pointer, re-arms the guard and the sentinel. Call while
 * the RLC is stopped, before it is started again.
 */
void amdgpu_spm_cursor_restart(struct amdgpu_spm_cursor *c)
{
	memset(c->ring, 0, AMDGPU_SPM_RING_HDR_SIZE);
	c->rptr = 0;
	c->wptr = 0;
	c->tainted = false;
	c->blind_until = 0;
	spm_guard_fill(c, c->guard);
	spm_arm(c);
}

/**
 * amdgpu_spm_dst_write - write into a destination buffer
 * @dst: the destination
 * @off: byte offset in it
 * @src: bytes to write
 * @len: how many
 *
 * Return: 0, or the error of &amdgpu_spm_dst.write.
 */
int amdgpu_spm_dst_write(struct amdgpu_spm_dst *dst, u32 off, const void *src,
			 u32 len)
{
	unsigned long pos;

	if (!dst->pages)
		return dst->write(dst, off, src, len);

	pos = dst->offset + off;
	while (len) {
		u32 o = offset_in_page(pos);
		u32 n = min_t(u32, len, PAGE_SIZE - o);

		memcpy_to_page(dst->pages[pos >> PAGE_SHIFT], o, src, n);
		pos += n;
		src += n;
		len -= n;
	}
	return 0;
}

/* One drain of one ring: where its bytes go */
struct spm_pass {
	struct amdgpu_spm_cursor *c;
	struct amdgpu_spm_share *sh;
	struct amdgpu_spm_dst *dst;
	/* Bytes the share can still take */
	u32 room;
	/* The data cannot be trusted: consume it without copying */
	bool discard;
	u64 now_ns;
};

/*
 * Hand up to @len ring bytes at @src to the share, as far as it has room,
 * or drop them when discarding. Returns the bytes taken from the ring. A
 * failed write takes nothing and ends the copying of this drain: what it
 * did not take stays in the ring.
 */
static u32 spm_take(struct spm_pass *p, const u8 *src, u32 len)
{
	struct amdgpu_spm_share *sh = p->sh;
	u32 n;

	if (p->discard) {
		if (len) {
			/* Dropped: the samples are gone */
			sh->loss = true;
			sh->dirty = true;
		}
		p->c->consumed += len;
		return len;
	}
	n = min(len, p->room);
	if (!n)
		return 0;
	sh->dirty = true;
	if (amdgpu_spm_dst_write(p->dst, sh->off +
				 sizeof(struct drm_amdgpu_spm_buffer_header) +
				 sh->copied, src, n)) {
		sh->loss = true;
		p->room = 0;
		return 0;
	}
	sh->copied += n;
	sh->last_ns = p->now_ns;
	p->room -= n;
	p->c->consumed += n;
	return n;
}

/*
 * The write pointer, or @bad if it is not one the RLC can write: past the
 * data or not line-aligned. The data it covers is read after it.
 */
static u32 spm_wptr(struct amdgpu_spm_cursor *c, u32 bad)
{
	u32 w = READ_ONCE(*(u32 *)c->ring);

	dma_rmb();
	return w <= c->size && IS_ALIGNED(w, LINE) ? w : bad;
}

/*
 * Data was lost: drop everything up to @w and start over from there. The
 * guard is not re-armed here: the RLC may be spilling into it right now.
 * Until a wrap re-arms it safely (see spm_drop_wrap()), wraps are not
 * trusted.
 */
static void spm_resync(struct amdgpu_spm_cursor *c, struct amdgpu_spm_share *sh,
		       u32 w)
{
	unsigned long flags;
	u32 w2;

	c->laps++;
	sh->loss = true;
	sh->dirty = true;
	c->tainted = c->guard != 0;
	c->consumed += spm_ahead(c, c->rptr, w);
	c->rptr = w;
	c->wptr = w;
	/*
	 * Start over at the write pointer, with the sentinel behind it. The
	 * RLC must not come round to that line before the sentinel is in
	 * place: with interrupts off that takes far less time than a lap. If
	 * it did anyway (the pointer moved by more than half a ring), the
	 * sentinel may sit on fresh data.
	 */
	spm_hold(flags);
	spm_arm(c);
	/* The sentinel is stored before the write pointer is read again */
	mb();
	w2 = spm_wptr(c, w);
	spm_unhold(flags);
	if ((w2 >= w ? w2 - w : c->size - w + w2) > c->size / 2)
		spm_go_blind(c);
}

/*
 * A wrap whose spill cannot be trusted: drop its data, and re-arm the whole
 * guard. The RLC cannot start its next spill without passing the sentinel
 * of the read pointer (which, in a wrap, sits at or before the last line of
 * the ring), so if the sentinel is still there after the guard was
 * re-armed, the guard holds no spill of the RLC's and can be trusted again.
 */
static void spm_drop_wrap(struct amdgpu_spm_cursor *c,
			  struct amdgpu_spm_share *sh, u32 w)
{
	spm_guard_fill(c, c->guard);
	/* The guard is written before the sentinel is read back */
	mb();
	if (spm_sentinel_gone(c)) {
		spm_resync(c, sh, spm_wptr(c, w));
		return;
	}
	spm_resync(c, sh, w);
	c->tainted = false;
}

/**
 * amdgpu_spm_drain_ring - copy what the RLC wrote since the last drain
 * @c: the ring's cursor
 * @sh: the share the data goes to; its loss flag is set for lost data, its
 *	full flag for data left in the ring because the share had no room
 * @dst: the destination buffer of @sh, or NULL when there is none (the
 *	data then stays in the ring, as for a full share)
 * @now_ns: the current CLOCK_BOOTTIME time, recorded in @sh
 *
 * Reads the write pointer, checks that the RLC did not lap the read
 * pointer, copies the new data (the spill included) in stream order as far
 * as the share has room, and moves the read pointer, the sentinel and the
 * guard past what it copied. What does not fit stays in the ring for the
 * next share, and sets the full flag of this one. Only data that cannot be
 * trusted (after a lap, see &amdgpu_spm_cursor.blind_until) is consumed
 * without being copied. A write pointer the RLC cannot have written (past
 * the data or not line-aligned) counts as loss and is not followed. Data
 * is never read past the write pointer, nor from the stale lines a spill
 * stands for.
 *
 * Return: the bytes the RLC wrote since the last drain, as far as known:
 * how far the write pointer moved, copied or not; the ring's size when it
 * lapped (it wrote at least that much); 0 for a write pointer it cannot
 * have written.
 */
u32 amdgpu_spm_drain_ring(struct amdgpu_spm_cursor *c,
			  struct amdgpu_spm_share *sh,
			  struct amdgpu_spm_dst *dst, u64 now_ns)
{
	struct spm_pass p = { .c = c, .sh = sh, .dst = dst, .now_ns = now_ns };
	u8 *data = spm_data(c);
	u32 r = c->rptr, w, k = 0, j = 0, pos, copied, written;
	u64 before = c->consumed;
	unsigned long flags;
	bool lapped;

	w = spm_wptr(c, U32_MAX);
	if (w == U32_MAX) {
		/* Not a pointer the RLC can produce: do not follow it */
		c->laps++;
		sh->loss = true;
		sh->dirty = true;
		return 0;
	}
	if (spm_sentinel_gone(c)) {
		/* The RLC came round to the read pointer: a lap is lost */
		spm_resync(c, sh, w);
		return c->size;
	}
	written = spm_ahead(c, c->wptr, w);
	c->wptr = w;
	if (w == r) {
		/*
		 * Nothing new, unless the RLC went round through a spill that
		 * ends at @r: the lines it stands for hold the sentinel, which
		 * the RLC then does not write. It is a ring ahead, and its
		 * next line may already be over @r: a lap, as at the sentinel.
		 * (At 0 or in a spill the sentinel is the last line of the
		 * ring, which such a lap writes.)
		 */
		if (!r || r >= c->size || !spm_spill_reaches(c, r))
			return written;
		spm_drop_wrap(c, sh, w);
		return c->size;
	}
	copied = sh->copied;
	p.discard = c->blind_until != 0;
	p.room = dst ? sh->cap - sh->copied : 0;
	if (w > r) {
		/*
		 * Not wrapped. A spill reaching the read pointer means the
		 * RLC wrapped and resumed at or past it, where the sentinel
		 * cannot see it: the data at [r, w) may be from two laps.
		 */
		if (spm_spill_reaches(c, r)) {
			spm_resync(c, sh, w);
			return c->size;
		}
		pos = r + spm_take(&p, data + r, w - r);
	} else {
		/*
		 * Wrapped once: [r, size), the spill [j, k), then [k, w). A
		 * read pointer at size + j is in the spill, the bytes before
		 * j of it consumed (the wrap was entered by an earlier drain).
		 */
		if (c->guard)
			k = spm_spill(c);
		if ((c->guard && (k > w || k == c->guard || c->tainted)) ||
		    (r > c->size && r - c->size >= k)) {
			spm_drop_wrap(c, sh, w);
			return c->size;
		}
		if (r < c->size) {
			pos = r + spm_take(&p, data + r, c->size - r);
			if (pos < c->size)
				goto stop;
		} else {
			j = r - c->size;
		}
		pos = c->size + j + spm_take(&p, data + c->size + j, k - j);
		if (pos < c->size + k)
			goto stop;
		/*
		 * The spill is consumed: re-arm its lines before the check
		 * below. The RLC cannot start its next spill without passing
		 * the sentinel of @r first: it sits at or before the last line
		 * of the ring. A drain that stops before the end of the spill
		 * leaves the guard as it is: its lines are still to be copied,
		 * and they tell the next drain where the spill ends.
		 */
		spm_guard_fill(c, k);
		pos = k + spm_take(&p, data + k, w - k);
	}
stop:
	if (pos == r) {
		/* Nothing taken: no room, no buffer, or its write failed */
		if (dst)
			sh->full = true;
		else
			sh->loss = true;
		sh->dirty = true;
		return written;
	}
	/*
	 * Leave the next sentinel in the last line consumed, then check the
	 * old one. The RLC does not stop for the drain: if it came round to
	 * the old read pointer while the lines were copied (or before the new
	 * sentinel was in place), some of them may be from the next lap. Take
	 * back what this drain copied and count it as lost. The stores to the
	 * guard and of the new sentinel come before the old one is read back.
	 * A read pointer that stays in the same wrap past the end of the data
	 * keeps its sentinel in the last line of the ring: storing it again
	 * could cover up a lap.
	 */
	spm_hold(flags);
	c->rptr = pos;
	if (spm_sentinel_line(c, pos) != spm_sentinel_line(c, r))
		spm_arm(c);
	/* The guard and the new sentinel are stored before the old is read */
	mb();
	lapped = spm_gone_before(c, r) || (w > r && spm_spill_reaches(c, r));
	spm_unhold(flags);
	if (lapped) {
		sh->copied = copied;
		c->consumed = before;
		c->rptr = r;
		/* The sentinel just left for @pos may sit on fresh data */
		spm_go_blind(c);
		spm_resync(c, sh, spm_wptr(c, w));
		return c->size;
	}
	if (pos != w) {
		/* No more room (or a write failed): the rest stays in the ring */
		sh->full = true;
		sh->dirty = true;
	}
	if (c->blind_until && c->consumed >= c->blind_until)
		c->blind_until = 0;
	return written;
}

/**
 * amdgpu_spm_share_size - the size of each share of a destination buffer
 * @buf_size: the buffer's size
 * @num_shares: shares (XCCs of the partition)
 *
 * Return: the bytes of each share, header included, a multiple of 32.
 */
u32 amdgpu_spm_share_size(u32 buf_size, u32 num_shares)
{
	return round_down(buf_size / num_shares, AMDGPU_SPM_LINE_SIZE);
}

/**
 * amdgpu_spm_share_init - start a share of a newly installed buffer
 * @sh: the share
 * @share_size: from amdgpu_spm_share_size(), or 0 for no buffer
 * @index: position of the share in the buffer
 * @num_shares: shares in the buffer
 * @xcc: logical XCC whose data the share holds
 * @seq: the buffer's sequence number for that XCC
 * @now_ns: the CLOCK_BOOTTIME time the buffer is installed
 */
void amdgpu_spm_share_init(struct amdgpu_spm_share *sh, u32 share_size,
			   u32 index, u32 num_shares, u32 xcc, u32 seq,
			   u64 now_ns)
{
	memset(sh, 0, sizeof(*sh));
	sh->off = index * share_size;
	sh->cap = share_size ? share_size - sizeof(struct drm_amdgpu_spm_buffer_header) : 0;
	sh->xcc_info = AMDGPU_SPM_HDR_XCC_INFO(xcc, num_shares, index);
	sh->seq = seq;
	sh->start_ns = now_ns;
	sh->dirty = share_size != 0;
}

/**
 * amdgpu_spm_share_loss - the has_data_loss word of a share
 * @sh: the share
 *
 * Return: %AMDGPU_SPM_LOSS_SAMPLES if samples were lost,
 * %AMDGPU_SPM_LOSS_FULL if the share filled up with data left in the ring,
 * both, or 0.
 */
u32 amdgpu_spm_share_loss(const struct amdgpu_spm_share *sh)
{
	return (sh->loss ? AMDGPU_SPM_LOSS_SAMPLES : 0) |
	       (sh->full ? AMDGPU_SPM_LOSS_FULL : 0);
}

/**
 * amdgpu_spm_share_header - write the header of a share
 * @sh: the share
 * @dst: its buffer
 * @version: the profiler version to put in it
 *
 * Return: 0, or the error of the write (the share's loss flag is then set).
 */
int amdgpu_spm_share_header(struct amdgpu_spm_share *sh,
			    struct amdgpu_spm_dst *dst, u32 version)
{
	struct drm_amdgpu_spm_buffer_header hdr = {
		.version = version,
		.bytes_copied = sh->copied,
		.has_data_loss = amdgpu_spm_share_loss(sh),
		.info = {
			.xcc_info = sh->xcc_info,
			.seq = sh->seq,
			.start_ns_lo = lower_32_bits(sh->start_ns),
			.start_ns_hi = upper_32_bits(sh->start_ns),
		},
	};
	int r;

	if (sh->last_ns > sh->start_ns)
		hdr.info.last_us = min_t(u64, div_u64(sh->last_ns - sh->start_ns,
						      NSEC_PER_USEC),
					 U32_MAX);
	r = amdgpu_spm_dst_write(dst, sh->off, &hdr, sizeof(hdr));
	if (r)
		sh->loss = true;
	sh->dirty = false;
	return r;
}

/**
 * amdgpu_spm_cursor_rdptr - the read pointer to give the RLC
 * @c: the cursor
 *
 * The offset the RLC may write up to in a ring mode that stalls: the line
 * that holds the sentinel (spm_sentinel_line()), not the read pointer.
 * Where exactly a stalling RLC stops is not documented: short of
 * RLC_SPM_RING_RDPTR, or at it, writing the line before it too. Given the
 * read pointer, an RLC of the second kind would fill the sentinel's line
 * whenever the ring is full, and a full ring would read as a lap; given
 * the sentinel's line, an RLC of either kind leaves it alone. This costs
 * one line of the ring's capacity in those modes (and, where the RLC
 * looks for room for a whole sample, at times a sample), and nothing in
 * mode 0, where the RLC is taken not to look at RDPTR (Mesa: "no stall").
 * Inside a spill (the drain stopped past the end of the data) the
 * sentinel is the last line of the ring, which an RLC that stalls there
 * cannot write before the spill is consumed.
 *
 * Return: an offset in the ring, a multiple of %AMDGPU_SPM_LINE_SIZE.
 */
u32 amdgpu_spm_cursor_rdptr(const struct amdgpu_spm_cursor *c)
{
	return spm_sentinel_line(c, c->rptr);
}

/**
 * amdgpu_spm_cursor_pending - bytes the RLC wrote that are not consumed
 * @c: the cursor
 *
 * As of the last drain: what stayed in the ring for want of room.
 *
 * Return: the bytes.
 */
u32 amdgpu_spm_cursor_pending(const struct amdgpu_spm_cursor *c)
{
	return spm_ahead(c, c->rptr, c->wptr);
}

/**
 * amdgpu_spm_pace_init - start the adaptive drain period
 * @p: the pace
 * @idle_ns: the period while nothing streams
 */
void amdgpu_spm_pace_init(struct amdgpu_spm_pace *p, u64 idle_ns)
{
	p->rate = 0;
	p->last_ns = 0;
	p->period_ns = idle_ns;
}

/**
 * amdgpu_spm_pace_hold - the delay until the next drain, while data waits
 * @p: the pace
 * @now_ns: the time of this drain
 *
 * For a drain that found nothing new while data it had no room for waits
 * in a ring: an RLC in a ring mode that stalls writes nothing then, which
 * says nothing about the rate it will stream at once the data is copied.
 * The rate and the period stay as they were.
 *
 * Return: the delay in nanoseconds.
 */
u64 amdgpu_spm_pace_hold(struct amdgpu_spm_pace *p, u64 now_ns)
{
	p->last_ns = now_ns;
	return p->period_ns;
}

/*
 * Drain when the ring is this many eighths full: wake-ups then come at
 * 8/3 of the fill rate over the ring, 4/3 of the rate over half the ring,
 * and a drain that is late by more than half a period still loses nothing.
 */
#define AMDGPU_SPM_PACE_EIGHTHS	3

/**
 * amdgpu_spm_pace_next - the delay until the next drain
 * @p: the pace
 * @now_ns: the time of this drain
 * @bytes: the most bytes any ring of the acquisition gave in this drain
 * @ring_size: data bytes of each ring
 * @min_ns: the shortest period allowed
 * @idle_ns: the longest, used while nothing streams
 *
 * Estimates the fill rate from what the drains take: it follows an
 * increase at once and decays by 1/8 per drain, so a burst is not
 * forgotten after one quiet period. The next drain is due when a ring
 * filling at that rate is 3/8 full.
 *
 * Return: the delay in nanoseconds, between @min_ns and @idle_ns.
 */
u64 amdgpu_spm_pace_next(struct amdgpu_spm_pace *p, u64 now_ns, u64 bytes,
			 u32 ring_size, u64 min_ns, u64 idle_ns)
{
	u64 dt = p->last_ns && now_ns > p->last_ns ? now_ns - p->last_ns : 0;
	u64 rate = 0, period;

	p->last_ns = now_ns;
	if (dt)
		rate = div64_u64(bytes * NSEC_PER_SEC, dt);
	p->rate = max(rate, p->rate - (p->rate >> 3));
	if (!p->rate)
		period = idle_ns;
	else
		period = div64_u64((u64)ring_size * AMDGPU_SPM_PACE_EIGHTHS / 8 *
				   NSEC_PER_SEC, p->rate);
	p->period_ns = clamp(period, min_ns, idle_ns);
	return p->period_ns;
}
