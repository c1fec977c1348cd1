/* SPDX-License-Identifier: MIT */
/*
 * Copyright 2026 The amdgpu profiler series authors
 *
 * A second writer of RLC SPM rings for the native tests of the drain core,
 * written from the hardware description alone. The drain came with its
 * own writer (drivers/gpu/drm/amd/amdgpu/tests/amdgpu_spm_rlc_ring.h, which
 * the KUnit model uses too) and both encode one reading of the hardware.
 * This one shares no code and no line format with that writer, and where
 * the description says nothing it does not pick a reading: the reading is
 * a parameter (struct rlc_hw_reading), and the tests run under each.
 *
 * What the description says, and where it says it:
 *
 * [ring]  RLC_SPM_PERFMON_RING_BASE_LO/HI and RLC_SPM_PERFMON_RING_SIZE
 *         (RING_BASE_SIZE, 32 bits) program the ring (gc_9_4_1/2/3
 *         _sh_mask.h). ROCm's kfd_spm.c programs the allocation less an
 *         overflow reserve, and takes the data to be that less 0x20: the
 *         first 0x20 bytes hold the RLC's write pointer in their first
 *         dword ("ring_rptr = 0 points to cpu_addr + 0x20"), a byte offset
 *         into the data. GC 9.4.x has an RLC_SPM_RING_RDPTR register
 *         (PERFMON_RING_RDPTR, 32 bits) and no write pointer register.
 * [line]  The RLC writes 32-byte lines (kfd_spm.c: "SPM data filling is
 *         0x20 alignment"). A sample is RLC_SPM_PERFMON_SEGMENT_SIZE.
 *         PERFMON_SEGMENT_SIZE lines: 8 bits, so at most 255 lines.
 * [spill] Before GC 11.0.1 (kfd_spm.c sets its reserve of 0x400 bytes for
 *         "pre-gfx11 spm has a hardware bug to cause overflow") a sample
 *         that crosses the end of the ring is finished past the end. The
 *         reserve is filled with a magic number beforehand, and on a wrap
 *         kfd_spm.c takes the bytes up to the first line that still holds
 *         the magic as the data at the start of the ring: it copies them
 *         over ring offset 0 and reads on from the end of that copy up to
 *         the write pointer. So the RLC resumes at the offset the spilled
 *         bytes stand for, and the write pointer counts from there; what
 *         the ring holds below that offset is not data. Later parts wrap
 *         inside the sample.
 * [ptr]   kfd_spm.c copies everything before the write pointer as soon as
 *         it reads it: the pointer is published after the lines it covers.
 * [mode]  PERFMON_RING_MODE (2 bits of RLC_SPM_PERFMON_CNTL): 0 never
 *         stalls and overwrites data not read (Mesa ac_spm.c: "no stall
 *         and no interrupt on overflow"); 3 stalls while the ring is full.
 *         kfd_spm.c gives the RLC its read pointer in RLC_SPM_RING_RDPTR
 *         after each copy and takes a write pointer equal to it as "no new
 *         data", so a full ring is one in which the next line would make
 *         the write pointer equal the read pointer (modulo the size).
 * [reset] SPM reset puts the write pointer at 0 (kfd_spm.c: "When SPM is
 *         reset, RLC automatically resets wptr to 0").
 *
 * What it does not say, the parameters:
 *
 * end     A sample (or a line, see pub) that ends exactly at the end of
 *         the ring: the write pointer published is 0, or the ring's size
 *         (kfd_spm.c copes with both: it copies up to a pointer equal to
 *         the size and starts its next pass at 0).
 * pub     When the pointer is published: after each sample; or after each
 *         line that ends inside the ring (the lines of a spill then at the
 *         sample's end: the pointer is an offset in the ring, and a spill
 *         line has none until the sample is finished); or after each line,
 *         spill lines included, at the offset each stands for (kfd_spm.c
 *         would read stale lines under that one too; the drain is run
 *         under it only on request, see rlc_hw_readings_extra).
 * stale   The ring lines a spill stands for: left as they were (the lap
 *         before), written with the spilled lines too, or written with
 *         something that is no data at all.
 * stall   In mode 3: the RLC looks for room for a whole sample before it
 *         starts one, or for each line, stopping inside a sample.
 * at      In mode 3, where it stops: short of the read pointer (the write
 *         pointer never comes round to it, so equal pointers always mean
 *         an empty ring), or at the read pointer itself (it fills the
 *         line before RDPTR too, and tells a full ring from an empty one
 *         by what it wrote since RDPTR last moved). kfd_spm.c takes equal
 *         pointers as "no new data", which fits the first; nothing rules
 *         out the second.
 * hdr     The rest of the first 0x20 bytes (kfd_spm.c calls them "Meta
 *         data area"): left alone, or written by the RLC with each pointer.
 *
 * Every line names its XCC, its number in that XCC's stream and in its
 * sample, and carries a check word: a test can tell a line of the stream
 * from one of another XCC, from a stale one (its number is behind) and
 * from anything else.
 */

#ifndef __SPM_RLC_HW_H
#define __SPM_RLC_HW_H

#include <string.h>

#include <linux/types.h>

/* The first 0x20 bytes of the ring: the write pointer, then 7 dwords */
#define RLC_HW_HDR		0x20u
#define RLC_HW_LINE		0x20u
/* PERFMON_SEGMENT_SIZE is 8 bits wide */
#define RLC_HW_MAX_LINES	255u

enum rlc_hw_end { RLC_HW_END_ZERO, RLC_HW_END_SIZE };
enum rlc_hw_pub { RLC_HW_PUB_SAMPLE, RLC_HW_PUB_LINE, RLC_HW_PUB_LINE_SPILL };
enum rlc_hw_stale { RLC_HW_STALE_KEEP, RLC_HW_STALE_MIRROR, RLC_HW_STALE_JUNK };
enum rlc_hw_stall { RLC_HW_STALL_SAMPLE, RLC_HW_STALL_LINE };

/* One reading of what the description leaves open */
struct rlc_hw_reading {
	const char *name;
	enum rlc_hw_end end;
	enum rlc_hw_pub pub;
	enum rlc_hw_stale stale;
	enum rlc_hw_stall stall;
	bool hdr;
	bool at;
};

/*
 * The readings the tests run under: every value of every parameter, and
 * every pair of values of two parameters, in ten runs (a covering array;
 * the first is the reading of the drain's own writer).
 */
static const struct rlc_hw_reading rlc_hw_readings[] = {
	{ "end0,sample,keep,stall-sample",
	  RLC_HW_END_ZERO, RLC_HW_PUB_SAMPLE, RLC_HW_STALE_KEEP, RLC_HW_STALL_SAMPLE, false },
	{ "endsize,line,keep,stall-line,hdr",
	  RLC_HW_END_SIZE, RLC_HW_PUB_LINE, RLC_HW_STALE_KEEP, RLC_HW_STALL_LINE, true },
	{ "end0,line,mirror,stall-line",
	  RLC_HW_END_ZERO, RLC_HW_PUB_LINE, RLC_HW_STALE_MIRROR, RLC_HW_STALL_LINE, false },
	{ "endsize,sample,mirror,stall-sample,hdr",
	  RLC_HW_END_SIZE, RLC_HW_PUB_SAMPLE, RLC_HW_STALE_MIRROR, RLC_HW_STALL_SAMPLE, true },
	{ "end0,sample,junk,stall-line,hdr",
	  RLC_HW_END_ZERO, RLC_HW_PUB_SAMPLE, RLC_HW_STALE_JUNK, RLC_HW_STALL_LINE, true },
	{ "endsize,line,junk,stall-sample",
	  RLC_HW_END_SIZE, RLC_HW_PUB_LINE, RLC_HW_STALE_JUNK, RLC_HW_STALL_SAMPLE, false },
	/* Stopping at the read pointer, with each other value it pairs with */
	{ "end0,sample,keep,stall-sample-at",
	  RLC_HW_END_ZERO, RLC_HW_PUB_SAMPLE, RLC_HW_STALE_KEEP, RLC_HW_STALL_SAMPLE, false,
	  true },
	{ "endsize,line,mirror,stall-line-at,hdr",
	  RLC_HW_END_SIZE, RLC_HW_PUB_LINE, RLC_HW_STALE_MIRROR, RLC_HW_STALL_LINE, true,
	  true },
	{ "end0,line,junk,stall-sample-at,hdr",
	  RLC_HW_END_ZERO, RLC_HW_PUB_LINE, RLC_HW_STALE_JUNK, RLC_HW_STALL_SAMPLE, true,
	  true },
	{ "endsize,sample,keep,stall-line-at",
	  RLC_HW_END_SIZE, RLC_HW_PUB_SAMPLE, RLC_HW_STALE_KEEP, RLC_HW_STALL_LINE, false,
	  true },
};

/* Readings that neither the drain nor kfd_spm.c is written for */
static const struct rlc_hw_reading rlc_hw_readings_extra[] = {
	{ "end0,line-spill,keep,stall-sample",
	  RLC_HW_END_ZERO, RLC_HW_PUB_LINE_SPILL, RLC_HW_STALE_KEEP, RLC_HW_STALL_SAMPLE, false },
};

/**
 * struct rlc_hw - one XCC's RLC and the memory of its SPM ring
 * @mem: the ring's memory: RLC_HW_HDR bytes, @size data bytes, @guard
 * @size: data bytes (the programmed size less RLC_HW_HDR)
 * @guard: bytes after the data a spill may take; 0 for a part that wraps
 *	inside a sample (GC 11.0.1 and later)
 * @sample: bytes per sample, RLC_HW_LINE to RLC_HW_MAX_LINES lines
 * @pos: data offset of the next line (past @size while spilling)
 * @xcc: the XCC, put in every line
 * @seq: number of the next line in the stream
 * @pub_seq: number of the first line the published pointer does not cover
 * @done: lines of the current sample written (mode 3 can stop inside one)
 * @samples: samples finished
 * @pubs: pointers published
 * @stray: lines the RLC wrote past the ring's memory (the data and
 *	@guard): those of a spill longer than @guard, which the hardware
 *	would write into whatever follows the ring. They are not written
 *	here, only counted, and a case in which one happens fails.
 * @full: (reading "at") the write pointer came round to the read pointer
 * @full_at: the read pointer it came round to
 * @rd: the reading
 */
struct rlc_hw {
	u8 *mem;
	u32 size;
	u32 guard;
	u32 sample;
	u32 pos;
	u32 xcc;
	u64 seq;
	u64 pub_seq;
	u32 done;
	u64 samples;
	u32 pubs;
	u64 stray;
	bool full;
	u32 full_at;
	const struct rlc_hw_reading *rd;
};

#define RLC_HW_TAG	0x53504d4cu	/* "SPML" */

static inline u32 rlc_hw_rotl(u32 v, unsigned int n)
{
	return v << n | v >> (32 - n);
}

static inline u32 rlc_hw_check(const u32 *w)
{
	return w[0] ^ rlc_hw_rotl(w[1], 3) ^ rlc_hw_rotl(w[2], 7) ^
	       rlc_hw_rotl(w[3], 11) ^ rlc_hw_rotl(w[4], 13) ^
	       rlc_hw_rotl(w[5], 17) ^ rlc_hw_rotl(w[6], 19) ^ 0x9e3779b9u;
}

/* Line number @seq of @xcc, the @idx-th of sample number @smp */
static inline void rlc_hw_fill(u8 *p, u32 xcc, u64 seq, u32 idx, u64 smp)
{
	u32 *w = (u32 *)p;

	w[0] = RLC_HW_TAG;
	w[1] = (u32)seq;
	w[2] = (u32)(seq >> 32);
	w[3] = xcc << 16 | (idx & 0xffff);
	w[4] = (u32)smp;
	w[5] = ~(u32)seq;
	w[6] = (u32)seq * 2654435761u ^ xcc;
	w[7] = rlc_hw_check(w);
}

/* What is no line of any stream */
static inline void rlc_hw_junk(u8 *p, u64 n)
{
	u32 *w = (u32 *)p, i;

	for (i = 0; i < 8; i++)
		w[i] = 0xdead0000u ^ (u32)(n * 8 + i);
}

/* Whether @p is a line of @xcc's stream; its number in *@seq */
static inline bool rlc_hw_line_ok(const u8 *p, u32 xcc, u64 *seq)
{
	const u32 *w = (const u32 *)p;

	*seq = (u64)w[2] << 32 | w[1];
	return w[0] == RLC_HW_TAG && w[7] == rlc_hw_check(w) &&
	       w[3] >> 16 == xcc && w[5] == ~w[1] &&
	       w[6] == (w[1] * 2654435761u ^ xcc);
}

static inline void rlc_hw_init(struct rlc_hw *h, void *mem, u32 size, u32 guard,
			       u32 sample, u32 xcc, const struct rlc_hw_reading *rd)
{
	memset(h, 0, sizeof(*h));
	h->mem = mem;
	h->size = size;
	h->guard = guard;
	h->sample = sample;
	h->xcc = xcc;
	h->rd = rd;
}

/* SPM reset: the write pointer goes back to 0 */
static inline void rlc_hw_reset(struct rlc_hw *h)
{
	h->pos = 0;
	h->done = 0;
	__atomic_store_n((u32 *)h->mem, 0, __ATOMIC_RELEASE);
}

static inline void rlc_hw_publish(struct rlc_hw *h, u32 wptr)
{
	u32 i;

	h->pubs++;
	h->pub_seq = h->seq;
	if (h->rd->hdr)
		for (i = 1; i < RLC_HW_HDR / 4; i++)
			__atomic_store_n((u32 *)h->mem + i, h->pubs * 16 + i,
					 __ATOMIC_RELAXED);
	/* Release: the lines it covers are in memory before it */
	__atomic_store_n((u32 *)h->mem, wptr, __ATOMIC_RELEASE);
}

/* The pointer published at the end of the ring */
static inline u32 rlc_hw_end_ptr(const struct rlc_hw *h)
{
	return h->rd->end == RLC_HW_END_SIZE ? h->size : 0;
}

/* The ring offset the next line stands for (inside a spill: from 0) */
static inline u32 rlc_hw_offset(const struct rlc_hw *h)
{
	return h->pos >= h->size ? h->pos - h->size : h->pos;
}

/*
 * Mode 3: whether there is room for @bytes at the next line, with the
 * read pointer at @rdptr: the write pointer must not come round to it
 * (or, reading "at", not past it; the ring is full once it came round,
 * until the read pointer moves).
 */
static inline bool rlc_hw_room(struct rlc_hw *h, u32 rdptr, u32 bytes)
{
	u32 at = rlc_hw_offset(h);
	u32 used = at >= rdptr ? at - rdptr : at + h->size - rdptr;

	if (!h->rd->at)
		return used + bytes < h->size;
	if (h->full && rdptr == h->full_at)
		return false;
	h->full = false;
	return used + bytes <= h->size;
}

/* Reading "at": the write pointer is at the read pointer after a write */
static inline void rlc_hw_filled(struct rlc_hw *h, u32 rdptr)
{
	if (h->rd->at && rlc_hw_offset(h) == rdptr) {
		h->full = true;
		h->full_at = rdptr;
	}
}

/*
 * Write (the rest of) one sample. @stall: mode 3, with the read pointer
 * at @rdptr; otherwise mode 0. Returns false if mode 3 stopped for want of
 * room (call again once the read pointer moved). A spill that does not
 * fit the guard is written as far as the memory goes; the rest counts in
 * &rlc_hw.stray.
 */
static inline bool rlc_hw_write(struct rlc_hw *h, bool stall, u32 rdptr)
{
	const struct rlc_hw_reading *rd = h->rd;
	u8 *data = h->mem + RLC_HW_HDR;
	u32 n = h->sample / RLC_HW_LINE, size = h->size, pos = h->pos;
	u32 done = h->done, xcc = h->xcc;
	bool every = rd->pub != RLC_HW_PUB_SAMPLE;
	bool line_stall = stall && rd->stall == RLC_HW_STALL_LINE;
	u64 seq = h->seq, smp = h->samples;

	if (!done && stall && !line_stall && !rlc_hw_room(h, rdptr, h->sample))
		return false;
	while (done < n) {
		if (line_stall) {
			h->pos = pos;
			if (!rlc_hw_room(h, rdptr, RLC_HW_LINE))
				break;
		}
		/* Past the ring's memory: a stray write, not done here */
		if (pos < size + h->guard)
			rlc_hw_fill(data + pos, xcc, seq, done, smp);
		else
			h->stray++;
		seq++;
		pos += RLC_HW_LINE;
		done++;
		if (pos == size && (!h->guard || done == n)) {
			/* The end of the ring, at a line (or sample) boundary */
			pos = 0;
			if (every && done < n) {
				h->seq = seq;
				rlc_hw_publish(h, rlc_hw_end_ptr(h));
			}
		} else if (pos < size) {
			if (every && done < n) {
				h->seq = seq;
				rlc_hw_publish(h, pos);
			}
		} else if (rd->pub == RLC_HW_PUB_LINE_SPILL && done < n) {
			h->seq = seq;
			rlc_hw_publish(h, pos - size);
		}
		if (stall) {
			h->pos = pos;
			rlc_hw_filled(h, rdptr);
		}
	}
	h->pos = pos;
	h->seq = seq;
	h->done = done;
	if (done < n)
		return false;	/* mode 3 stopped inside the sample */
	h->done = 0;
	h->samples++;
	if (pos > size) {
		/* A spill of k bytes: they stand for [0, k) of the ring */
		u32 k = pos - size, o;

		for (o = 0; o < k; o += RLC_HW_LINE) {
			/* Of the lines that reached memory (see @stray) */
			if (rd->stale == RLC_HW_STALE_MIRROR && o < h->guard)
				memcpy(data + o, data + size + o, RLC_HW_LINE);
			else if (rd->stale == RLC_HW_STALE_JUNK)
				rlc_hw_junk(data + o, h->samples * 1024 + o / RLC_HW_LINE);
		}
		h->pos = k;
	}
	/* At 0 only if the sample ended exactly at the end of the ring */
	rlc_hw_publish(h, h->pos ? h->pos : rlc_hw_end_ptr(h));
	return true;
}

/* Mode 0: one sample */
static inline bool rlc_hw_sample(struct rlc_hw *h)
{
	return rlc_hw_write(h, false, 0);
}

/* Mode 3: one sample, or false while the ring has no room for it */
static inline bool rlc_hw_sample_stall(struct rlc_hw *h, u32 rdptr)
{
	return rlc_hw_write(h, true, rdptr);
}

#endif
