// SPDX-License-Identifier: MIT
/*
 * Copyright 2026 The amdgpu profiler series authors
 *
 * Native tests and benchmark of the SPM drain core
 * (drivers/gpu/drm/amd/amdgpu/amdgpu_spm_drain.c), built as a userspace
 * program against the shim headers in shim/. The RLC is one of two
 * writers: the one of the KUnit tests, which came with the drain
 * (drivers/gpu/drm/amd/amdgpu/tests/amdgpu_spm_rlc_ring.h), or rlc_hw.h,
 * written apart from it from the hardware description, under one of its
 * readings of what that description leaves open.
 *
 *   spm_drain_test          run the tests with the KUnit tests' writer;
 *                           "N passed, N failed"
 *   spm_drain_test -a       the same, then with rlc_hw.h under each reading
 *   spm_drain_test -r R     with rlc_hw.h under reading R (a name, a number
 *                           of -l's list, or "extra" for the readings the
 *                           drain is not written for)
 *   spm_drain_test -l       list the readings
 *   -t NAME                 only the test NAME
 *   -x                      stop at the first failure (mutation runs)
 *   spm_drain_test bench    print "spm_native_drain: <bytes> bytes,
 *                           throughput drain/memcpy = X.XX": memcpy's time
 *                           over the drain's for the same bytes
 */

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <linux/kernel.h>
#include <linux/highmem.h>
#include <linux/sizes.h>

#include <drm/amdgpu_drm.h>

#include "amdgpu_spm_drain.h"
#include "tests/amdgpu_spm_rlc_ring.h"
#include "rlc_hw.h"

#define HDR	((u32)sizeof(struct drm_amdgpu_spm_buffer_header))
#define LINE	AMDGPU_SPM_LINE_SIZE
/* Spill area of the native runs: more than a sample, a fraction of the ring */
#define GUARD	SZ_8K

/*
 * The drain core allocates nothing; a test that fails returns without
 * freeing its rings and buffers. Leaks are not what these tests look for.
 */
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
	return "detect_leaks=0";
}

static int passed, failed;
static const char *cur_test;
/* The rlc_hw.h reading the tests run under; NULL: the KUnit tests' writer */
static const struct rlc_hw_reading *reading;
static bool end_at_size(void);

static bool check(bool ok, const char *what, int line)
{
	if (!ok)
		fprintf(stderr, "%s:%d: %s: CHECK failed: %s\n", __FILE__, line,
			cur_test, what);
	return ok;
}

/* Evaluates to whether @cond holds; says where, if not */
#define CHECK(cond)	check((cond), #cond, __LINE__)

/* Failures seen by the helpers: the test they happen in fails */
static int sticky;
#define STICKY(cond)	do { if (!CHECK(cond)) sticky++; } while (0)

/*
 * Lines an RLC wrote past its ring's memory in the current test (a spill
 * longer than the guard): any fails the test (run_test()). Writers may run
 * in threads.
 */
static u64 strays;

/* The shim's interrupt holds (shim/linux/kernel.h) */
unsigned long spm_shim_irqs_off;
void (*spm_shim_irq_hook)(void);

static u64 now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (u64)ts.tv_sec * NSEC_PER_SEC + ts.tv_nsec;
}

/* xorshift: reproducible schedules */
static u64 rnd_state = 88172645463325252ULL;
static u64 rnd(void)
{
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 7;
	rnd_state ^= rnd_state << 17;
	return rnd_state;
}

static void *xalloc(size_t n)
{
	void *p = NULL;

	if (posix_memalign(&p, PAGE_SIZE, n) || !p) {
		perror("posix_memalign");
		exit(2);
	}
	memset(p, 0xa5, n);
	return p;
}

/* A destination buffer made of pages, as SET_DEST_BUF pins it */
struct tbuf {
	u8 *mem;
	u32 size;
	struct page **pages;
	struct amdgpu_spm_dst dst;
};

static void tbuf_init(struct tbuf *b, u32 size, u32 offset)
{
	u32 i, n = (offset + size + PAGE_SIZE - 1) / PAGE_SIZE;

	b->mem = xalloc((size_t)n * PAGE_SIZE);
	b->size = size;
	b->pages = calloc(n, sizeof(*b->pages));
	for (i = 0; i < n; i++)
		b->pages[i] = (struct page *)(b->mem + (size_t)i * PAGE_SIZE);
	memset(&b->dst, 0, sizeof(b->dst));
	b->dst.pages = b->pages;
	b->dst.offset = offset;
	b->dst.size = size;
}

static void tbuf_free(struct tbuf *b)
{
	free(b->mem);
	free(b->pages);
}

static u8 *tbuf_at(struct tbuf *b, u32 off)
{
	return b->mem + b->dst.offset + off;
}

/*
 * One XCC: the RLC, its ring, the drain cursor, the current share. The
 * RLC's state is a struct rlc_hw whichever writer writes: the KUnit
 * tests' one (spm_rlc_ring) takes @size, @guard, @sample, @xcc, @pos and
 * @seq from it and gives back @pos and @seq.
 */
struct txcc {
	u8 *ring;
	struct rlc_hw rlc;
	struct amdgpu_spm_cursor c;
	struct amdgpu_spm_share sh;
	u64 next_seq;		/* next stream position expected by the checker */
	u64 gaps;		/* lines missing in what was delivered */
	u64 unflagged;		/* gaps that no lap or blind drain explains */
	u64 share_laps;		/* c.laps when the current share was installed */
	bool share_blind;	/* a drain of the current share was blind */
	bool prev_excused;	/* the share retired before this one lapped */
};

static const u8 token[LINE] = "amdgpu spm drain sentinel 0123";

static void txcc_init(struct txcc *x, u32 size, u32 guard, u32 sample, u32 id)
{
	x->ring = xalloc(AMDGPU_SPM_RING_HDR_SIZE + size + guard);
	rlc_hw_init(&x->rlc, x->ring, size, guard, sample, id,
		    reading ? reading : &rlc_hw_readings[0]);
	amdgpu_spm_cursor_init(&x->c, x->ring, size, guard, token);
	amdgpu_spm_cursor_restart(&x->c);
	x->next_seq = 0;
	x->gaps = 0;
	x->unflagged = 0;
	x->share_laps = 0;
	x->share_blind = false;
	x->prev_excused = false;
}

/* Lines the RLC wrote that its write pointer covers */
static u64 published(struct txcc *x)
{
	return x->rlc.pub_seq;
}

/* Count the lines the RLC of @x wrote past its memory since @before */
static void count_strays(struct txcc *x, u64 before)
{
	if (x->rlc.stray != before)
		__atomic_add_fetch(&strays, x->rlc.stray - before, __ATOMIC_RELAXED);
}

/*
 * One sample of the RLC, in ring mode 0, by the writer of this run.
 * Returns false if some of its lines went past the ring's memory (a stray
 * write, which fails the test).
 */
static bool rlc_sample(struct txcc *x)
{
	struct spm_rlc_ring m;
	u64 before = x->rlc.stray;

	if (reading) {
		rlc_hw_sample(&x->rlc);
	} else {
		spm_rlc_ring_init(&m, x->ring, x->rlc.size, x->rlc.guard,
				  x->rlc.sample, x->rlc.xcc);
		m.pos = x->rlc.pos;
		m.seq = x->rlc.seq;
		spm_rlc_ring_sample(&m);
		x->rlc.pos = m.pos;
		x->rlc.seq = m.seq;
		x->rlc.pub_seq = m.seq;
		x->rlc.stray += m.stray;
	}
	count_strays(x, before);
	return x->rlc.stray == before;
}

/* Whether @p is a line of @xcc, in the format of this run's writer */
static bool line_ok(const u8 *p, u32 xcc, u64 *seq)
{
	return reading ? rlc_hw_line_ok(p, xcc, seq) : spm_rlc_line_ok(p, xcc, seq);
}

/* Install a share of @size bytes (0: no buffer), as SET_DEST_BUF does */
static void share_start(struct txcc *x, u32 size, u32 seq)
{
	amdgpu_spm_share_init(&x->sh, size, 0, 1, x->rlc.xcc, seq, now_ns());
	x->share_laps = x->c.laps;
	x->share_blind = x->c.blind_until != 0;
}

/*
 * Check a retired share: every line valid for its XCC, in stream order,
 * none twice. Data that did not fit a share stays in the ring for the
 * next one, so the stream goes on across shares without a gap; lines may
 * only be missing where the drain saw the RLC lap (or dropped data it did
 * not trust after a lap): inside a share during which that happened, or
 * at its start if it happened during the share before. A share during
 * which a lap was seen reports loss.
 */
static int check_share(struct txcc *x, struct tbuf *b, u32 id)
{
	struct amdgpu_spm_share *sh = &x->sh;
	bool lapped = x->c.laps != x->share_laps;
	bool excused = lapped || x->share_blind;
	bool first = true;
	u32 off;

	if (!CHECK(sh->copied % LINE == 0))
		return -1;
	if (!CHECK(sh->copied <= sh->cap))
		return -1;
	if (lapped && !CHECK(sh->loss))
		return -1;
	for (off = 0; off < sh->copied; off += LINE) {
		u64 seq;

		if (!CHECK(line_ok(tbuf_at(b, sh->off + HDR + off), id, &seq)))
			return -1;
		if (!CHECK(seq >= x->next_seq))
			return -1;
		if (seq != x->next_seq) {
			x->gaps += seq - x->next_seq;
			if (!excused && !(first && x->prev_excused))
				x->unflagged++;
		}
		x->next_seq = seq + 1;
		first = false;
	}
	/* A share that got nothing carries what happened before it over */
	x->prev_excused = excused || (!sh->copied && x->prev_excused);
	return 0;
}

static u32 drain(struct txcc *x, struct tbuf *b)
{
	u32 n;

	x->share_blind |= x->c.blind_until != 0;
	n = amdgpu_spm_drain_ring(&x->c, &x->sh, b ? &b->dst : NULL, now_ns());
	x->share_blind |= x->c.blind_until != 0;
	/* Interrupts are given back; the RLC is told an offset in its ring */
	STICKY(!spm_shim_irqs_off);
	STICKY(amdgpu_spm_cursor_rdptr(&x->c) < x->rlc.size);
	return n;
}

/* Bytes the RLC wrote that the drain has not consumed (if it did not lap) */
static u32 pending(struct txcc *x)
{
	u32 w = READ_ONCE(*(u32 *)x->ring), r = x->c.rptr % x->rlc.size;

	return (w + x->rlc.size - r) % x->rlc.size;
}

/* Whether the guard holds no spill: every word of it the magic */
static bool guard_armed(struct txcc *x)
{
	const u64 *g = (const u64 *)(x->ring + AMDGPU_SPM_RING_HDR_SIZE + x->rlc.size);
	u32 i;

	for (i = 0; i < x->rlc.guard / sizeof(*g); i++)
		if (g[i] != AMDGPU_SPM_GUARD_MAGIC)
			return false;
	return true;
}

static void emit(struct txcc *x, u32 bytes)
{
	u32 done;

	for (done = 0; done < bytes; done += x->rlc.sample)
		rlc_sample(x);
}

/* ---- tests ---- */

static int test_linear(void)
{
	struct txcc x;
	struct tbuf b;

	txcc_init(&x, SZ_64K, 0, 8 * LINE, 0);
	tbuf_init(&b, SZ_64K, 0);
	share_start(&x, b.size, 1);
	emit(&x, 10 * 8 * LINE);
	if (!CHECK(drain(&x, &b) == 10 * 8 * LINE))
		return -1;
	if (!CHECK(x.sh.copied == 10 * 8 * LINE && !x.sh.loss))
		return -1;
	if (!CHECK(check_share(&x, &b, 0) == 0))
		return -1;
	if (!CHECK(x.next_seq == 80 && x.gaps == 0))
		return -1;
	/* Nothing new: nothing copied */
	if (!CHECK(drain(&x, &b) == 0))
		return -1;
	tbuf_free(&b);
	free(x.ring);
	return 0;
}

/* Many laps, drained well before the ring fills: everything, in order */
static int wrap_run(u32 guard, u32 sample)
{
	struct txcc x;
	struct tbuf b;
	int i;

	txcc_init(&x, SZ_64K, guard, sample, 3);
	tbuf_init(&b, 8 * SZ_1M, 0);
	share_start(&x, b.size, 1);
	for (i = 0; i < 200; i++) {
		emit(&x, SZ_64K / 3);
		drain(&x, &b);
	}
	if (!CHECK(!x.sh.loss))
		return -1;
	if (!CHECK(check_share(&x, &b, 3) == 0))
		return -1;
	if (!CHECK(x.gaps == 0 && x.next_seq == published(&x)))
		return -1;
	if (!CHECK(x.c.laps == 0))
		return -1;
	tbuf_free(&b);
	free(x.ring);
	return 0;
}

static int test_wrap_exact(void)
{
	return wrap_run(0, 24 * LINE);
}

/* Pre-GC 11.0.1: samples that do not divide the ring spill past its end */
static int test_wrap_spill(void)
{
	return wrap_run(GUARD, 96 * LINE);
}

/* A sample that ends exactly at the end leaves nothing to spill */
static int test_wrap_spill_none(void)
{
	return wrap_run(GUARD, 64 * LINE);
}

/* More than a lap between drains: loss, and nothing stale delivered */
static int lap_run(u32 guard)
{
	struct txcc x;
	struct tbuf b;

	txcc_init(&x, SZ_64K, guard, 40 * LINE, 1);
	tbuf_init(&b, SZ_1M, 0);
	share_start(&x, b.size, 1);
	emit(&x, SZ_64K / 2);
	drain(&x, &b);
	if (!CHECK(!x.sh.loss))
		return -1;
	emit(&x, SZ_64K + SZ_64K / 4);
	drain(&x, &b);
	if (!CHECK(x.sh.loss))
		return -1;
	if (!CHECK(x.c.laps == 1))
		return -1;
	/* After the loss it streams on, in order */
	emit(&x, SZ_64K / 2);
	drain(&x, &b);
	emit(&x, SZ_64K / 2);
	drain(&x, &b);
	if (!CHECK(check_share(&x, &b, 1) == 0))
		return -1;
	if (!CHECK(x.gaps > 0))
		return -1;
	if (!CHECK(x.c.laps <= 2))
		return -1;
	tbuf_free(&b);
	free(x.ring);
	return 0;
}

static int test_lap_exact(void)
{
	return lap_run(0);
}

static int test_lap_spill(void)
{
	return lap_run(GUARD);
}

/* Exactly one lap between drains must not look like an empty ring */
static int test_lap_not_empty(void)
{
	struct txcc x;
	struct tbuf b;

	txcc_init(&x, SZ_64K, 0, 8 * LINE, 2);
	tbuf_init(&b, SZ_1M, 0);
	share_start(&x, b.size, 1);
	emit(&x, 4096);
	drain(&x, &b);
	emit(&x, SZ_64K);	/* the write pointer is back where it was */
	if (!CHECK(READ_ONCE(*(u32 *)x.ring) == x.c.rptr))
		return -1;
	drain(&x, &b);
	if (!CHECK(x.sh.loss))
		return -1;
	tbuf_free(&b);
	free(x.ring);
	return 0;
}

static int test_bad_wptr(void)
{
	struct txcc x;
	struct tbuf b;
	u32 bad[] = { SZ_64K + LINE, 100, 0x80000000u };
	unsigned int i;

	for (i = 0; i < 3; i++) {
		txcc_init(&x, SZ_64K, GUARD, 8 * LINE, 0);
		tbuf_init(&b, SZ_1M, 0);
		share_start(&x, b.size, 1);
		*(u32 *)x.ring = bad[i];
		if (!CHECK(drain(&x, &b) == 0))
			return -1;
		if (!CHECK(x.sh.loss && x.sh.copied == 0))
			return -1;
		if (!CHECK(x.c.rptr == 0))
			return -1;
		tbuf_free(&b);
		free(x.ring);
	}
	return 0;
}

/*
 * A full share, then no buffer: nothing is consumed that was not copied.
 * The rest stays in the ring (the loss flag says so) and the next share
 * gets it, in order; the return value still counts what the RLC wrote,
 * so that the drain's pace follows the stream while nothing can be copied.
 */
static int test_full_share_and_no_buffer(void)
{
	struct txcc x;
	struct tbuf b, b2;
	int i;

	txcc_init(&x, SZ_64K, 0, 8 * LINE, 0);
	tbuf_init(&b, HDR + 4 * LINE, 0);
	tbuf_init(&b2, SZ_64K, 0);
	share_start(&x, b.size, 1);
	emit(&x, 8 * LINE);
	if (!CHECK(drain(&x, &b) == 8 * LINE))
		return -1;
	if (!CHECK(x.sh.copied == 4 * LINE && x.sh.full && !x.sh.loss))
		return -1;
	/* The read pointer stops after the last line copied */
	if (!CHECK(x.c.rptr == 4 * LINE && x.c.consumed == 4 * LINE))
		return -1;
	/* Full: more data is left too, and still counted for the pace */
	for (i = 0; i < 3; i++) {
		emit(&x, 8 * LINE);
		if (!CHECK(drain(&x, &b) == 8 * LINE))
			return -1;
		if (!CHECK(x.sh.copied == 4 * LINE && x.c.rptr == 4 * LINE))
			return -1;
	}
	if (!CHECK(check_share(&x, &b, 0) == 0))
		return -1;
	/* No buffer: nothing copied, nothing consumed, and it says so */
	share_start(&x, 0, 2);
	emit(&x, 8 * LINE);
	if (!CHECK(drain(&x, NULL) == 8 * LINE))
		return -1;
	if (!CHECK(x.sh.loss && x.sh.copied == 0))
		return -1;
	if (!CHECK(x.c.rptr == 4 * LINE && x.c.consumed == 4 * LINE))
		return -1;
	if (!CHECK(check_share(&x, NULL, 0) == 0))
		return -1;
	/* The next buffer gets everything from the line after the last copied */
	share_start(&x, b2.size, 3);
	if (!CHECK(drain(&x, &b2) == 0))
		return -1;
	if (!CHECK(x.sh.copied == 36 * LINE && !x.sh.loss))
		return -1;
	if (!CHECK(x.c.rptr == 40 * LINE && x.c.consumed == 40 * LINE))
		return -1;
	if (!CHECK(check_share(&x, &b2, 0) == 0))
		return -1;
	if (!CHECK(x.next_seq == 40 && x.gaps == 0 && x.c.laps == 0))
		return -1;
	tbuf_free(&b);
	tbuf_free(&b2);
	free(x.ring);
	return 0;
}

/*
 * A share fills in the middle of what one drain finds: it gets exactly
 * what fits, the next share exactly the lines after it, for every share
 * size from one line to more than what is there.
 */
static int test_fill_mid_drain(void)
{
	u32 room;

	for (room = 1; room <= 30; room++) {
		struct txcc x;
		struct tbuf b[2];
		u32 want = min(room, 24u);
		bool left = room < 24;

		txcc_init(&x, SZ_64K, 0, 8 * LINE, 1);
		tbuf_init(&b[0], HDR + room * LINE, 0);
		tbuf_init(&b[1], SZ_64K, 0);
		share_start(&x, b[0].size, 1);
		emit(&x, 24 * LINE);
		if (!CHECK(drain(&x, &b[0]) == 24 * LINE))
			return -1;
		if (!CHECK(x.sh.copied == want * LINE))
			return -1;
		/* Full flagged exactly when data was left in the ring */
		if (!CHECK(x.sh.full == left && !x.sh.loss))
			return -1;
		if (!CHECK(check_share(&x, &b[0], 1) == 0))
			return -1;
		share_start(&x, b[1].size, 2);
		emit(&x, 8 * LINE);
		if (!CHECK(drain(&x, &b[1]) == 8 * LINE))
			return -1;
		if (!CHECK(x.sh.copied == (32 - want) * LINE && !x.sh.loss))
			return -1;
		if (!CHECK(check_share(&x, &b[1], 1) == 0))
			return -1;
		if (!CHECK(x.next_seq == 32 && x.gaps == 0))
			return -1;
		tbuf_free(&b[0]);
		tbuf_free(&b[1]);
		free(x.ring);
	}
	return 0;
}

/*
 * A full share and an RLC that laps what was left in the ring: the lap is
 * seen, and reported in the share current when it is seen (the full one,
 * or the next); what comes after it is valid and in order.
 */
static int full_lap_run(u32 guard, bool swap_first)
{
	struct txcc x;
	struct tbuf b[3];
	u64 seq0;

	txcc_init(&x, SZ_64K, guard, 40 * LINE, 2);
	tbuf_init(&b[0], HDR + 100 * LINE, 0);
	tbuf_init(&b[1], SZ_256K, 0);
	tbuf_init(&b[2], SZ_256K, 0);
	share_start(&x, b[0].size, 1);
	emit(&x, SZ_64K / 2);
	drain(&x, &b[0]);
	if (!CHECK(x.sh.copied == x.sh.cap && x.sh.full && !x.sh.loss &&
		   x.c.laps == 0))
		return -1;
	if (swap_first) {
		/* The next buffer is there before the lap is seen */
		if (!CHECK(check_share(&x, &b[0], 2) == 0))
			return -1;
		share_start(&x, b[1].size, 2);
	}
	/* The RLC goes round over what was left */
	emit(&x, SZ_64K);
	if (!CHECK(drain(&x, swap_first ? &b[1] : &b[0]) == SZ_64K))
		return -1;
	if (!CHECK(x.c.laps == 1 && x.sh.loss))
		return -1;
	if (!swap_first) {
		if (!CHECK(check_share(&x, &b[0], 2) == 0))
			return -1;
		share_start(&x, b[1].size, 2);
	}
	/* After the lap: what the RLC writes arrives, in order, without loss */
	emit(&x, SZ_64K / 8);
	drain(&x, &b[1]);
	if (!CHECK(check_share(&x, &b[1], 2) == 0))
		return -1;
	share_start(&x, b[2].size, 3);
	seq0 = published(&x);
	emit(&x, SZ_64K / 8);
	drain(&x, &b[2]);
	if (!CHECK(!x.sh.loss && x.sh.copied == (published(&x) - seq0) * LINE))
		return -1;
	if (!CHECK(check_share(&x, &b[2], 2) == 0))
		return -1;
	if (!CHECK(x.next_seq == published(&x) && x.unflagged == 0 && x.gaps > 0))
		return -1;
	tbuf_free(&b[0]);
	tbuf_free(&b[1]);
	tbuf_free(&b[2]);
	free(x.ring);
	return 0;
}

static int test_full_share_lap_exact(void)
{
	return full_lap_run(0, false) || full_lap_run(0, true) ? -1 : 0;
}

static int test_full_share_lap_spill(void)
{
	return full_lap_run(GUARD, false) || full_lap_run(GUARD, true) ? -1 : 0;
}

/*
 * Drains that stop anywhere in a wrap. The read pointer sits near the end
 * of the ring, then the RLC wraps: [r, size) of 128 lines, a spill of 64
 * lines (with a guard; without one the RLC wraps inside the sample), then
 * 96 lines from the end of the spill. Shares of every size from 1 line to
 * more than all of it take it in turns, so the drains stop at every line
 * of [r, size), at the end of the data, inside the spill and at its end,
 * and in [k, w); with @more, the RLC writes a sample after every drain
 * (not enough to wrap again). Every line arrives once and in order, no
 * lap is seen, each share that filled with data left says so, and once
 * all is copied the guard is armed again.
 */
static int mid_wrap_run(u32 guard, bool more)
{
	/* 3 KiB samples spill 2 KiB past a 64 KiB ring; 768 B ones wrap inside */
	const u32 sample = guard ? 96 * LINE : 24 * LINE;
	const u32 lines = guard ? 288 : 72;
	u32 room;

	for (room = 1; room <= lines + 2; room++) {
		struct txcc x;
		struct tbuf b;
		u32 i, w;

		txcc_init(&x, SZ_64K, guard, sample, 6);
		tbuf_init(&b, SZ_256K, 0);
		share_start(&x, b.size, 1);
		/* The read pointer 4 KiB (2 KiB without guard) before the end */
		emit(&x, SZ_64K - (guard ? 4096 : 1024) - sample + 1);
		drain(&x, &b);
		if (!CHECK(check_share(&x, &b, 6) == 0))
			return -1;
		if (!CHECK(x.c.rptr == SZ_64K - (guard ? 4096 : 1024)))
			return -1;
		/* Then the wrap */
		emit(&x, 3 * sample);
		if (guard && !CHECK(READ_ONCE(*(u32 *)x.ring) == 5120 && !guard_armed(&x)))
			return -1;
		for (i = 0; pending(&x) && i < 5000; i++) {
			u32 left = pending(&x);

			share_start(&x, HDR + room * LINE, i + 2);
			drain(&x, &b);
			if (!CHECK(x.sh.copied == min(left, room * LINE)))
				return -1;
			if (!CHECK(x.sh.full == (left > room * LINE) && !x.sh.loss))
				return -1;
			if (!CHECK(check_share(&x, &b, 6) == 0))
				return -1;
			/*
			 * The spill stays in the guard until all of it is
			 * copied (the read pointer before the end of the ring
			 * and past the write pointer, or in the spill); then
			 * the guard is armed again.
			 */
			w = READ_ONCE(*(u32 *)x.ring);
			if (guard && !CHECK(guard_armed(&x) ==
					    (x.c.rptr < SZ_64K && x.c.rptr <= w)))
				return -1;
			if (more && x.rlc.pos + 2 * sample < SZ_64K - 4 * sample)
				emit(&x, sample);
		}
		if (!CHECK(!pending(&x) && x.c.laps == 0))
			return -1;
		if (!CHECK(x.next_seq == published(&x) && x.gaps == 0))
			return -1;
		if (!CHECK(guard_armed(&x)))
			return -1;
		/* It streams on: the next wraps are trusted */
		share_start(&x, b.size, i + 2);
		emit(&x, SZ_64K / 2);
		drain(&x, &b);
		emit(&x, SZ_64K / 2);
		drain(&x, &b);
		if (!CHECK(!x.sh.loss && check_share(&x, &b, 6) == 0))
			return -1;
		if (!CHECK(x.next_seq == published(&x) && x.c.laps == 0))
			return -1;
		tbuf_free(&b);
		free(x.ring);
	}
	return 0;
}

static int test_mid_wrap_exact(void)
{
	return mid_wrap_run(0, false) || mid_wrap_run(0, true) ? -1 : 0;
}

static int test_mid_wrap_spill(void)
{
	return mid_wrap_run(GUARD, false) || mid_wrap_run(GUARD, true) ? -1 : 0;
}

/*
 * A drain stopped in a wrap, then the RLC goes on and wraps again before
 * the next drain: that is a lap of what was left, and it is seen, also
 * when the next spill is shorter than what was consumed of the pending
 * one (so that a sentinel kept in the spill would not have been touched).
 * What arrives after it is valid and in order.
 */
static int test_mid_wrap_then_lap(void)
{
	u32 stop;

	/* Stop after @stop lines of the wrap: in [r, size), the spill, [k, w) */
	for (stop = 1; stop < 288; stop += 7) {
		struct txcc x;
		struct tbuf b;

		txcc_init(&x, SZ_64K, GUARD, 96 * LINE, 5);
		tbuf_init(&b, SZ_256K, 0);
		share_start(&x, b.size, 1);
		emit(&x, SZ_64K - 4096 - 96 * LINE + 1);
		drain(&x, &b);
		if (!CHECK(check_share(&x, &b, 5) == 0))
			return -1;
		emit(&x, 3 * 96 * LINE);
		share_start(&x, HDR + stop * LINE, 2);
		drain(&x, &b);
		if (!CHECK(x.sh.copied == stop * LINE && x.c.laps == 0))
			return -1;
		if (!CHECK(check_share(&x, &b, 5) == 0))
			return -1;
		/*
		 * Samples of 95 lines up to the end of the ring, then one that
		 * spills a single line past it: shorter than any part of the
		 * pending spill consumed, and the RLC goes on over [k, w).
		 */
		x.rlc.sample = 95 * LINE;
		while (x.rlc.pos + 95 * LINE <= SZ_64K - LINE)
			emit(&x, 95 * LINE);
		x.rlc.sample = SZ_64K - x.rlc.pos + LINE;
		emit(&x, x.rlc.sample);
		if (!CHECK(READ_ONCE(*(u32 *)x.ring) == LINE))
			return -1;
		x.rlc.sample = 96 * LINE;
		emit(&x, 96 * 4 * LINE);
		share_start(&x, b.size, 3);
		drain(&x, &b);
		if (!CHECK(x.c.laps >= 1 && x.sh.loss))
			return -1;
		/* After the lap (and the next wrap, not trusted), in order */
		emit(&x, SZ_64K / 2);
		drain(&x, &b);
		emit(&x, SZ_64K / 2);
		drain(&x, &b);
		emit(&x, SZ_64K / 4);
		drain(&x, &b);
		if (!CHECK(check_share(&x, &b, 5) == 0))
			return -1;
		if (!CHECK(x.unflagged == 0 && x.next_seq == published(&x)))
			return -1;

		tbuf_free(&b);
		free(x.ring);
	}
	return 0;
}

/*
 * Blind (after a lap the drain does not trust the ring until the RLC has
 * gone round it once more): data is consumed and dropped, whether the
 * share has room, is full, or there is none; then copying resumes.
 */
static int test_blind_discards(void)
{
	struct txcc x;
	struct tbuf b, full;
	u64 seq;

	txcc_init(&x, SZ_64K, GUARD, 8 * LINE, 3);
	tbuf_init(&b, SZ_256K, 0);
	tbuf_init(&full, HDR + LINE, 0);
	/* A full share with data left in the ring */
	share_start(&x, full.size, 1);
	emit(&x, 8 * LINE);
	drain(&x, &full);
	if (!CHECK(x.sh.copied == LINE && x.sh.full && !x.sh.loss &&
		   pending(&x) == 7 * LINE))
		return -1;
	/* As spm_go_blind() leaves it: one more lap of the ring */
	x.c.blind_until = x.c.consumed + SZ_64K + GUARD + LINE;
	emit(&x, SZ_64K / 4);
	drain(&x, &full);
	if (!CHECK(x.sh.copied == LINE && !pending(&x)))
		return -1;
	if (!CHECK(check_share(&x, &full, 3) == 0))
		return -1;
	share_start(&x, b.size, 2);
	emit(&x, SZ_64K / 4);
	drain(&x, &b);
	if (!CHECK(x.sh.copied == 0 && x.sh.loss && !pending(&x)))
		return -1;
	if (!CHECK(check_share(&x, &b, 3) == 0))
		return -1;
	share_start(&x, 0, 3);
	emit(&x, SZ_64K / 4);
	drain(&x, NULL);
	if (!CHECK(x.sh.loss && !pending(&x) && x.c.blind_until))
		return -1;
	if (!CHECK(check_share(&x, NULL, 3) == 0))
		return -1;
	share_start(&x, b.size, 4);
	emit(&x, SZ_64K / 4 + 2 * GUARD);
	drain(&x, &b);
	if (!CHECK(!pending(&x) && !x.c.blind_until && x.c.laps == 0))
		return -1;
	if (!CHECK(check_share(&x, &b, 3) == 0))
		return -1;
	/* Not blind any more: copied again */
	share_start(&x, b.size, 5);
	seq = published(&x);
	emit(&x, SZ_64K / 4);
	drain(&x, &b);
	if (!CHECK(!x.sh.loss && x.sh.copied == (published(&x) - seq) * LINE))
		return -1;
	if (!CHECK(check_share(&x, &b, 3) == 0))
		return -1;
	if (!CHECK(x.unflagged == 0 && x.next_seq == published(&x)))
		return -1;
	tbuf_free(&b);
	tbuf_free(&full);
	free(x.ring);
	return 0;
}

static int test_header(void)
{
	struct drm_amdgpu_spm_buffer_header *h;
	struct txcc x;
	struct tbuf b;
	u64 t0 = 1000000000ULL;
	u32 share = amdgpu_spm_share_size(3 * 4096 + 7, 3);

	if (!CHECK(share == 4096))
		return -1;
	txcc_init(&x, SZ_64K, 0, 8 * LINE, 5);
	tbuf_init(&b, 3 * 4096 + 7, 64);
	amdgpu_spm_share_init(&x.sh, share, 2, 3, 5, 42, t0);
	if (!CHECK(x.sh.off == 8192 && x.sh.cap == 4096 - HDR && x.sh.dirty))
		return -1;
	/* No buffer: nothing to hold data, no header to write */
	amdgpu_spm_share_init(&x.sh, 0, 0, 1, 5, 41, t0);
	if (!CHECK(!x.sh.cap && !x.sh.dirty))
		return -1;
	amdgpu_spm_share_init(&x.sh, share, 2, 3, 5, 42, t0);
	emit(&x, 8 * LINE);
	if (!CHECK(amdgpu_spm_drain_ring(&x.c, &x.sh, &b.dst, t0 + 2500000) == 8 * LINE))
		return -1;
	if (!CHECK(amdgpu_spm_share_header(&x.sh, &b.dst, (1 << 24) | 1) == 0))
		return -1;
	if (!CHECK(!x.sh.dirty))
		return -1;
	h = (void *)tbuf_at(&b, 8192);
	if (!CHECK(h->version == ((1u << 24) | 1)))
		return -1;
	if (!CHECK(h->bytes_copied == 8 * LINE && !h->has_data_loss))
		return -1;
	if (!CHECK(AMDGPU_SPM_HDR_XCC(h->info.xcc_info) == 5))
		return -1;
	if (!CHECK(AMDGPU_SPM_HDR_NUM_SHARES(h->info.xcc_info) == 3))
		return -1;
	if (!CHECK(AMDGPU_SPM_HDR_SHARE(h->info.xcc_info) == 2))
		return -1;
	if (!CHECK(h->info.seq == 42))
		return -1;
	if (!CHECK(((u64)h->info.start_ns_hi << 32 | h->info.start_ns_lo) == t0))
		return -1;
	if (!CHECK(h->info.last_us == 2500))
		return -1;
	if (!CHECK(check_share(&x, &b, 5) == 0))
		return -1;
	/* has_data_loss says which: a full share, lost samples, both */
	x.sh.full = true;
	amdgpu_spm_share_header(&x.sh, &b.dst, (1 << 24) | 1);
	if (!CHECK(h->has_data_loss == AMDGPU_SPM_LOSS_FULL))
		return -1;
	x.sh.loss = true;
	amdgpu_spm_share_header(&x.sh, &b.dst, (1 << 24) | 1);
	if (!CHECK(h->has_data_loss == (AMDGPU_SPM_LOSS_FULL | AMDGPU_SPM_LOSS_SAMPLES)))
		return -1;
	x.sh.full = false;
	if (!CHECK(amdgpu_spm_share_loss(&x.sh) == AMDGPU_SPM_LOSS_SAMPLES))
		return -1;
	tbuf_free(&b);
	free(x.ring);
	return 0;
}

/* Unpinned destinations go through dst->write */
static int fail_after;
static int write_fn(struct amdgpu_spm_dst *dst, u32 off, const void *src, u32 len)
{
	if (fail_after-- <= 0)
		return -EFAULT;
	memcpy((u8 *)dst->priv + off, src, len);
	return 0;
}

static int test_write_fn(void)
{
	struct amdgpu_spm_dst dst = { .write = write_fn, .size = 4096 };
	struct txcc x;
	u8 *mem = xalloc(4096);

	dst.priv = mem;
	txcc_init(&x, SZ_64K, 0, 8 * LINE, 0);
	amdgpu_spm_share_init(&x.sh, 4096, 0, 1, 0, 1, now_ns());
	fail_after = 1;
	emit(&x, 8 * LINE);
	amdgpu_spm_drain_ring(&x.c, &x.sh, &dst, now_ns());
	if (!CHECK(x.sh.copied == 8 * LINE && !x.sh.loss))
		return -1;
	emit(&x, 8 * LINE);
	amdgpu_spm_drain_ring(&x.c, &x.sh, &dst, now_ns());
	/* The fault is flagged, and what could not be written stays in the ring */
	if (!CHECK(x.sh.copied == 8 * LINE && x.sh.loss))
		return -1;
	if (!CHECK(x.c.rptr == 8 * LINE && pending(&x) == 8 * LINE))
		return -1;
	/* Once the buffer can be written again, it goes on from there */
	fail_after = 1;
	amdgpu_spm_drain_ring(&x.c, &x.sh, &dst, now_ns());
	if (!CHECK(x.sh.copied == 16 * LINE && !pending(&x)))
		return -1;
	for (fail_after = 0; fail_after < 16; fail_after++) {
		u64 seq;

		if (!CHECK(line_ok(mem + HDR + fail_after * LINE, 0, &seq) &&
			   seq == fail_after))
			return -1;
	}
	free(mem);
	free(x.ring);
	return 0;
}

/*
 * A destination whose next write first lets the RLC write @bytes: the RLC
 * goes on while the drain copies.
 */
struct racing_dst {
	struct amdgpu_spm_dst dst;	/* first: the drain's pointer is ours */
	struct txcc *x;
	struct tbuf *b;
	u32 bytes;
};

static int racing_write(struct amdgpu_spm_dst *dst, u32 off, const void *src,
			u32 len)
{
	struct racing_dst *rd = (struct racing_dst *)dst;

	if (rd->bytes) {
		emit(rd->x, rd->bytes);
		rd->bytes = 0;
	}
	memcpy(tbuf_at(rd->b, off), src, len);
	return 0;
}

/*
 * Put the read pointer 4 KiB (1 KiB without guard) before the end of the
 * ring and let the RLC wrap: [r, size) of 128 lines, a spill of 64, then
 * 96 lines (32 lines, then 40 from the start of the ring, without guard);
 * then drain @lines of it into a share of their own.
 */
static int wrap_then_stop(struct txcc *x, struct tbuf *b, u32 guard, u32 lines)
{
	const u32 sample = guard ? 96 * LINE : 24 * LINE;

	txcc_init(x, SZ_64K, guard, sample, 8);
	share_start(x, b->size, 1);
	emit(x, SZ_64K - (guard ? 4096 : 1024) - sample + 1);
	drain(x, b);
	if (!CHECK(check_share(x, b, 8) == 0))
		return -1;
	emit(x, 3 * sample);
	if (!lines)
		return 0;
	share_start(x, HDR + lines * LINE, 2);
	drain(x, b);
	if (!CHECK(x->sh.copied == lines * LINE && x->c.laps == 0))
		return -1;
	return check_share(x, b, 8);
}

/* After a lap: streams on until the drain trusts the ring again, then clean */
static int stream_on_after_lap(struct txcc *x, struct tbuf *b)
{
	u64 seq;
	int i;

	share_start(x, b->size, 10);
	for (i = 0; i < 2 || x->c.blind_until || x->c.tainted; i++) {
		if (!CHECK(i < 64))
			return -1;
		emit(x, SZ_64K / 4);
		drain(x, b);
		if (x->sh.copied + SZ_64K > x->sh.cap) {
			if (check_share(x, b, 8))
				return -1;
			share_start(x, b->size, 11 + i);
		}
	}
	if (check_share(x, b, 8))
		return -1;
	share_start(x, b->size, 100);
	seq = published(x);
	emit(x, SZ_64K / 4);
	drain(x, b);
	if (!CHECK(!x->sh.loss && x->sh.copied == (published(x) - seq) * LINE))
		return -1;
	if (check_share(x, b, 8))
		return -1;
	return CHECK(x->unflagged == 0 && x->next_seq == published(x)) ? 0 : -1;
}

/*
 * The end of a test whose drain saw a lap: the share so far is right, the
 * stream goes on without loss after it; frees the buffer and the ring.
 */
static int end_after_lap(struct txcc *x, struct tbuf *b)
{
	int r = check_share(x, b, 8) || stream_on_after_lap(x, b) ? -1 : 0;

	tbuf_free(b);
	free(x->ring);
	return r;
}

/*
 * The RLC laps the ring while a drain copies, wherever that drain starts
 * and stops in a wrap: from the read pointer before the wrap, from inside
 * [r, size), from the end of the data or inside the spill (where the
 * sentinel stays in the last line of the ring), from [k, w), and into each
 * of them. The drain sees it, takes back what it copied, reports the loss,
 * and delivers nothing stale.
 */
static int test_lap_during_copy(void)
{
	static const struct {
		u32 guard, before, room;
	} cases[] = {
		{ GUARD, 0, 300 }, { GUARD, 0, 50 }, { GUARD, 50, 50 },
		{ GUARD, 50, 100 }, { GUARD, 128, 10 }, { GUARD, 140, 20 },
		{ GUARD, 140, 100 }, { GUARD, 200, 50 },
		{ 0, 0, 80 }, { 0, 0, 10 }, { 0, 10, 10 }, { 0, 10, 30 },
		{ 0, 40, 10 },
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		struct racing_dst rd = { .dst.write = racing_write };
		struct txcc x;
		struct tbuf b;

		tbuf_init(&b, SZ_1M, 0);
		if (wrap_then_stop(&x, &b, cases[i].guard, cases[i].before))
			return -1;
		rd.x = &x;
		rd.b = &b;
		rd.bytes = SZ_64K + x.rlc.sample;
		rd.dst.size = b.size;
		share_start(&x, HDR + cases[i].room * LINE, 3);
		if (!CHECK(amdgpu_spm_drain_ring(&x.c, &x.sh, &rd.dst, now_ns()) == SZ_64K))
			return -1;
		if (!CHECK(!rd.bytes && x.c.laps == 1 && x.sh.loss && !x.sh.copied))
			return -1;
		if (end_after_lap(&x, &b))
			return -1;
	}
	return 0;
}

/*
 * A guard that says the spill is shorter than what was consumed of it (it
 * was re-armed behind the drain's back): the wrap is not trusted, and
 * nothing is read past the guard.
 */
static int test_spill_shrunk(void)
{
	int from_stop;

	/* Re-armed whole, or from exactly where the drain stopped in it */
	for (from_stop = 0; from_stop < 2; from_stop++) {
		struct txcc x;
		struct tbuf b;
		u64 *g;
		u32 i;

		tbuf_init(&b, SZ_1M, 0);
		if (wrap_then_stop(&x, &b, GUARD, 140))
			return -1;
		/* 128 lines of [r, size), then 12 of the spill's 64 */
		if (!CHECK(x.c.rptr == SZ_64K + 12 * LINE))
			return -1;
		g = (u64 *)(x.ring + AMDGPU_SPM_RING_HDR_SIZE + SZ_64K);
		for (i = from_stop ? 12 * LINE / sizeof(*g) : 0; i < GUARD / sizeof(*g); i++)
			g[i] = AMDGPU_SPM_GUARD_MAGIC;
		share_start(&x, b.size, 3);
		if (!CHECK(drain(&x, &b) == SZ_64K))
			return -1;
		if (!CHECK(x.c.laps == 1 && x.sh.loss && !x.sh.copied && !pending(&x)))
			return -1;
		if (end_after_lap(&x, &b))
			return -1;
	}
	return 0;
}

/*
 * Emit samples of @sample bytes up to @pos, then drain them all: the ring
 * is empty, the read pointer at @pos. @pos is a multiple of @sample.
 */
static int fill_to(struct txcc *x, struct tbuf *b, u32 sample, u32 pos, u32 xcc)
{
	x->rlc.sample = sample;
	while (x->rlc.pos != pos)
		emit(x, sample);
	drain(x, b);
	if (!CHECK(x->c.rptr == pos && !pending(x)))
		return -1;
	return check_share(x, b, xcc);
}

/*
 * The guard's edges, with a guard of 1 KiB (kfd_spm.c's reserve): a
 * spill that takes all of it but a line, which is data, and one that takes
 * all of it, which cannot be told from one that went further and is not
 * trusted; nothing is read past the guard. And a spill line that holds
 * the magic in three of its four words is data: only a whole line of it
 * is the guard.
 */
static int test_spill_guard_edges(void)
{
	const u32 g = 1024;
	static const struct {
		u32 spill;
		int word;	/* of the last spill line left data, -1: none */
	} cases[] = {
		{ 1024 - LINE, -1 }, { 1024, -1 },
		{ 3 * LINE, 0 }, { 3 * LINE, 1 }, { 3 * LINE, 2 }, { 3 * LINE, 3 },
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		u32 spill = cases[i].spill, r = SZ_64K - 4096, w, n;
		u8 *data, *want;
		struct txcc x;
		struct tbuf b;

		txcc_init(&x, SZ_64K, g, 8 * LINE, 8);
		tbuf_init(&b, SZ_1M, 0);
		share_start(&x, b.size, 1);
		if (fill_to(&x, &b, 8 * LINE, r, 8))
			return -1;
		/* One sample that ends @spill bytes past the end, then two more */
		x.rlc.sample = SZ_64K - r + spill;
		emit(&x, x.rlc.sample);
		x.rlc.sample = 8 * LINE;
		emit(&x, 16 * LINE);
		w = READ_ONCE(*(u32 *)x.ring);
		if (!CHECK(w == spill + 16 * LINE))
			return -1;
		data = x.ring + AMDGPU_SPM_RING_HDR_SIZE;
		if (cases[i].word >= 0) {
			u64 *q = (u64 *)(data + SZ_64K + spill - LINE);
			int k;

			for (k = 0; k < 4; k++)
				if (k != cases[i].word)
					q[k] = AMDGPU_SPM_GUARD_MAGIC;
		}
		/* What a drain that reads the wrap right delivers */
		n = SZ_64K - r + w;
		want = malloc(n);
		memcpy(want, data + r, SZ_64K - r);
		memcpy(want + SZ_64K - r, data + SZ_64K, spill);
		memcpy(want + SZ_64K - r + spill, data + spill, w - spill);
		share_start(&x, b.size, 2);
		if (spill == g) {
			if (!CHECK(drain(&x, &b) == SZ_64K))
				return -1;
			if (!CHECK(x.c.laps == 1 && x.sh.loss && !x.sh.copied))
				return -1;
			if (check_share(&x, &b, 8) || stream_on_after_lap(&x, &b))
				return -1;
		} else {
			drain(&x, &b);
			if (!CHECK(x.c.laps == 0 && !x.sh.loss && x.sh.copied == n))
				return -1;
			if (!CHECK(!memcmp(tbuf_at(&b, HDR), want, n)))
				return -1;
			if (cases[i].word < 0 && check_share(&x, &b, 8))
				return -1;
		}
		free(want);
		tbuf_free(&b);
		free(x.ring);
	}
	return 0;
}

/*
 * The RLC laps with a spill exactly as long as the read pointer's offset:
 * it resumes at the read pointer without writing the sentinel's line (the
 * spill stands for it), and goes on a sample. That is a lap, and it is
 * seen: the spill reaches the read pointer.
 */
static int test_spill_reaches_rptr(void)
{
	u32 r;

	for (r = LINE; r <= 2048; r += r < 256 ? LINE : 256) {
		struct txcc x;
		struct tbuf b;

		txcc_init(&x, SZ_64K, GUARD, LINE, 8);
		tbuf_init(&b, SZ_1M, 0);
		share_start(&x, b.size, 1);
		/* The read pointer at @r, after a wrap that spilled @r bytes */
		if (fill_to(&x, &b, LINE, SZ_64K - 4096, 8))
			return -1;
		share_start(&x, b.size, 2);
		x.rlc.sample = 4096 + r;
		emit(&x, x.rlc.sample);
		drain(&x, &b);
		if (!CHECK(x.c.rptr == r && !pending(&x) && guard_armed(&x)))
			return -1;
		if (check_share(&x, &b, 8))
			return -1;
		share_start(&x, b.size, 3);
		/* Round the ring to 4 KiB before its end, a spill of @r, a line */
		x.rlc.sample = LINE;
		while (x.rlc.pos != SZ_64K - 4096)
			emit(&x, LINE);
		x.rlc.sample = 4096 + r;
		emit(&x, x.rlc.sample);
		x.rlc.sample = LINE;
		emit(&x, LINE);
		if (!CHECK(READ_ONCE(*(u32 *)x.ring) == r + LINE))
			return -1;
		drain(&x, &b);
		if (!CHECK(x.c.laps == 1 && x.sh.loss))
			return -1;
		if (end_after_lap(&x, &b))
			return -1;
	}
	return 0;
}

/*
 * Blind for exactly the bytes it was set for: the drain that consumes
 * the last of them ends it, and the next data is copied.
 */
static int test_blind_ends_exactly(void)
{
	struct txcc x;
	struct tbuf b;
	u64 seq;

	txcc_init(&x, SZ_64K, 0, 8 * LINE, 3);
	tbuf_init(&b, SZ_1M, 0);
	share_start(&x, b.size, 1);
	emit(&x, 4096);
	drain(&x, &b);
	if (check_share(&x, &b, 3))
		return -1;
	share_start(&x, b.size, 2);
	x.c.blind_until = x.c.consumed + 8192;
	x.share_blind = true;
	emit(&x, 8192);
	drain(&x, &b);
	if (!CHECK(x.c.consumed == 4096 + 8192 && !x.c.blind_until))
		return -1;
	if (!CHECK(x.sh.loss && !x.sh.copied))
		return -1;
	if (check_share(&x, &b, 3))
		return -1;
	share_start(&x, b.size, 3);
	seq = published(&x);
	emit(&x, 4096);
	drain(&x, &b);
	if (!CHECK(!x.sh.loss && x.sh.copied == (published(&x) - seq) * LINE))
		return -1;
	if (check_share(&x, &b, 3))
		return -1;
	tbuf_free(&b);
	free(x.ring);
	return 0;
}

/* The RLC when the drain holds interrupts: once, @bytes of samples */
static struct txcc *hook_x;
static u32 hook_bytes;

static void rlc_at_hold(void)
{
	spm_shim_irq_hook = NULL;
	emit(hook_x, hook_bytes);
}

/*
 * A lap, and while the drain starts over at the write pointer (its
 * sentinel placed with interrupts held) the RLC writes on: half a ring
 * leaves the sentinel trusted, more than half does not (it may sit on a
 * line the RLC had just written, so the drain goes blind for a lap). The
 * lap is seen at a write pointer inside the ring, or at 0.
 */
static int test_resync_moved(void)
{
	static const struct {
		u32 at, moved;
	} cases[] = {
		{ 5120, (SZ_64K / 2) - 8 * LINE }, { 5120, SZ_64K / 2 },
		{ 5120, (SZ_64K / 2) + 8 * LINE }, { 0, 8 * LINE },
		{ 0, (SZ_64K / 2) + 8 * LINE },
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		u32 at = cases[i].at, moved = cases[i].moved;
		/* The pointer for the end of the ring: 0, or the size */
		u32 w0 = at ? at : end_at_size() ? SZ_64K : 0;
		struct txcc x;
		struct tbuf b;

		txcc_init(&x, SZ_64K, 0, 8 * LINE, 3);
		tbuf_init(&b, SZ_1M, 0);
		share_start(&x, b.size, 1);
		emit(&x, 4096);
		drain(&x, &b);
		/* Over the sentinel, to @at (0: round to the end) */
		emit(&x, SZ_64K + (at ? at : SZ_64K) - 4096);
		if (!CHECK(READ_ONCE(*(u32 *)x.ring) == w0))
			return -1;
		hook_x = &x;
		hook_bytes = moved;
		spm_shim_irq_hook = rlc_at_hold;
		if (!CHECK(drain(&x, &b) == SZ_64K))
			return -1;
		if (!CHECK(!spm_shim_irq_hook && x.c.laps == 1 && x.sh.loss))
			return -1;
		if (!CHECK(x.c.rptr == w0 && READ_ONCE(*(u32 *)x.ring) == at + moved))
			return -1;
		if (!CHECK(!!x.c.blind_until == (moved > SZ_64K / 2)))
			return -1;
		if (check_share(&x, &b, 3))
			return -1;
		tbuf_free(&b);
		free(x.ring);
	}
	return 0;
}

/* The RLC when the drain holds interrupts: a lap, a spill of 1 KiB, 1 KiB */
static void rlc_laps_at_hold(void)
{
	spm_shim_irq_hook = NULL;
	hook_x->rlc.sample = 8 * LINE;
	while (hook_x->rlc.pos != SZ_64K - 2048)
		emit(hook_x, 8 * LINE);
	hook_x->rlc.sample = 2048 + 1024;
	emit(hook_x, hook_x->rlc.sample);
	hook_x->rlc.sample = 8 * LINE;
	emit(hook_x, 1024);
}

/*
 * A lap seen at a write pointer of 0 (a sample ended at the end of the
 * ring), and before the drain starts over there the RLC goes round once
 * more and spills (the worker was preempted: the pointer it read is a lap
 * old, and the half-ring check cannot see that). The lines the spill
 * stands for, at the start of the ring, are not data: they are never
 * delivered.
 */
static int test_resync_stale_zero(void)
{
	struct txcc x;
	struct tbuf b;

	txcc_init(&x, SZ_64K, GUARD, 8 * LINE, 8);
	tbuf_init(&b, SZ_1M, 0);
	share_start(&x, b.size, 1);
	emit(&x, 4096);
	drain(&x, &b);
	if (check_share(&x, &b, 8))
		return -1;
	/* Over the sentinel and round to the end of the ring */
	emit(&x, SZ_64K - 4096 + SZ_64K);
	if (!CHECK(x.rlc.pos == 0))
		return -1;
	share_start(&x, b.size, 2);
	hook_x = &x;
	spm_shim_irq_hook = rlc_laps_at_hold;
	if (!CHECK(drain(&x, &b) == SZ_64K && x.c.laps == 1))
		return -1;
	if (!CHECK(!spm_shim_irq_hook && READ_ONCE(*(u32 *)x.ring) == 2048))
		return -1;
	drain(&x, &b);
	if (end_after_lap(&x, &b))
		return -1;
	return 0;
}

/*
 * A sample that ends exactly at the end of the ring, drained, and nothing
 * after it: the next drains find nothing new and nothing pending, whether
 * the RLC put its write pointer at 0 or at the ring's size for it.
 */
static int test_end_pointer_idle(void)
{
	struct txcc x;
	struct tbuf b;
	int i;

	txcc_init(&x, SZ_64K, GUARD, 8 * LINE, 3);
	tbuf_init(&b, SZ_1M, 0);
	share_start(&x, b.size, 1);
	emit(&x, (SZ_64K / 2));
	drain(&x, &b);
	emit(&x, (SZ_64K / 2));
	if (!CHECK(drain(&x, &b) == (SZ_64K / 2) && !pending(&x)))
		return -1;
	for (i = 0; i < 3; i++) {
		if (!CHECK(drain(&x, &b) == 0))
			return -1;
		if (!CHECK(amdgpu_spm_cursor_pending(&x.c) == 0))
			return -1;
	}
	if (!CHECK(!x.sh.loss && !x.sh.full && x.sh.copied == SZ_64K))
		return -1;
	if (check_share(&x, &b, 3))
		return -1;
	tbuf_free(&b);
	free(x.ring);
	return 0;
}

/*
 * A lap that ends exactly at the read pointer, through a spill exactly as
 * long as the read pointer's offset (the RLC does not write the
 * sentinel's line: the spill stands for it): the write pointer is back
 * where it was, the sentinel is there, but a whole ring of data waits.
 * It is delivered, or at least reported lost; it does not look like an
 * empty ring.
 */
static int test_lap_by_spill_not_empty(void)
{
	const u32 r = 1024;
	struct txcc x;
	struct tbuf b;

	txcc_init(&x, SZ_64K, GUARD, LINE, 8);
	tbuf_init(&b, SZ_1M, 0);
	share_start(&x, b.size, 1);
	if (fill_to(&x, &b, LINE, SZ_64K - 4096, 8))
		return -1;
	share_start(&x, b.size, 2);
	x.rlc.sample = 4096 + r;
	emit(&x, x.rlc.sample);
	drain(&x, &b);
	if (!CHECK(x.c.rptr == r && !pending(&x)))
		return -1;
	if (check_share(&x, &b, 8))
		return -1;
	share_start(&x, b.size, 3);
	x.rlc.sample = LINE;
	while (x.rlc.pos != SZ_64K - 4096)
		emit(&x, LINE);
	x.rlc.sample = 4096 + r;
	emit(&x, x.rlc.sample);
	if (!CHECK(READ_ONCE(*(u32 *)x.ring) == r))
		return -1;
	drain(&x, &b);
	/*
	 * A whole ring: [r, size), then the spill that stands for [0, r).
	 * The RLC is a ring ahead and may already be writing over r: a lap,
	 * seen by the spill where the RLC left the sentinel's line as it
	 * was, by the sentinel where it writes that line.
	 */
	if (!CHECK(x.sh.loss && x.c.laps == 1 && x.sh.copied == 0))
		return -1;
	if (check_share(&x, &b, 8))
		return -1;
	tbuf_free(&b);
	free(x.ring);
	return 0;
}

/*
 * Random schedules against the model: sample sizes, bursts between drains
 * (sometimes more than a lap), shares that fill, no buffer now and then,
 * buffers that change; with @small, shares of a line to a quarter of the
 * ring, so that they fill often. What is delivered is always valid, in
 * order and never twice, and the stream goes on across shares without a
 * gap unless the drain saw a lap; with less than a lap minus a sample
 * written and not consumed, there is none; a share that is left with data
 * in the ring says so.
 */
static int random_run(u32 guard, int rounds, bool small)
{
	struct txcc x;
	struct tbuf b[2];
	int i, cur = 0;
	u32 size = SZ_64K;

	tbuf_init(&b[0], 256 * 1024, 0);
	tbuf_init(&b[1], 256 * 1024, 32);
	txcc_init(&x, size, guard, (1 + rnd() % 60) * LINE, 7);
	share_start(&x, b[0].size, 1);
	for (i = 0; i < rounds; i++) {
		u32 burst = rnd() % 8 ? rnd() % (size / 2) : rnd() % (2 * size);
		u32 written = 0, left = pending(&x);
		/* After a loss the next wrap is not trusted; blind drops */
		bool trusted = !x.c.tainted && !x.c.blind_until;
		u64 laps = x.c.laps;

		while (written + x.rlc.sample <= burst) {
			rlc_sample(&x);
			written += x.rlc.sample;
		}
		drain(&x, x.sh.cap ? &b[cur] : NULL);
		if (trusted && left + written + x.rlc.sample < size)
			if (!CHECK(x.c.laps == laps))
				return -1;
		/* All that was there is copied, unless the share is full */
		if (x.c.laps == laps && x.sh.cap && x.sh.copied < x.sh.cap)
			if (!CHECK(!pending(&x)))
				return -1;
		if (pending(&x) && x.c.laps == laps && !CHECK(x.sh.loss || x.sh.full))
			return -1;
		if (rnd() % 5 == 0 || x.sh.copied == x.sh.cap) {
			u32 share = b[0].size;

			if (!CHECK(check_share(&x, &b[cur], 7) == 0))
				return -1;
			cur ^= 1;
			if (small)
				share = HDR + (1 + rnd() % (size / 4 / LINE)) * LINE;
			if (rnd() % 8 == 0)
				share = 0;	/* no buffer */
			share_start(&x, share, i + 2);
		}
	}
	if (!CHECK(check_share(&x, &b[cur], 7) == 0))
		return -1;
	if (!CHECK(x.unflagged == 0))
		return -1;
	tbuf_free(&b[0]);
	tbuf_free(&b[1]);
	free(x.ring);
	return 0;
}

static int test_random_exact(void)
{
	int s;

	for (s = 0; s < 40; s++)
		if (random_run(0, 400, false) || random_run(0, 400, true))
			return -1;
	return 0;
}

static int test_random_spill(void)
{
	int s;

	for (s = 0; s < 40; s++)
		if (random_run(GUARD, 400, false) || random_run(GUARD, 400, true))
			return -1;
	return 0;
}

/*
 * The RLC on another CPU, writing as fast as it can, the drain on this
 * one: what is delivered is valid and in order, whatever the timing.
 */
struct writer {
	struct txcc *x;
	bool stop;	/* read and written with __atomic builtins */
};

/* Bursts of up to three laps at full speed, then short pauses */
static void *writer_fn(void *arg)
{
	struct writer *wr = arg;
	u64 seed = 0x2545f4914f6cdd1dULL;

	while (!__atomic_load_n(&wr->stop, __ATOMIC_RELAXED)) {
		u32 n, laps3 = 3 * wr->x->rlc.size / wr->x->rlc.sample;
		struct timespec pause = { 0, 0 };

		seed ^= seed << 13;
		seed ^= seed >> 7;
		seed ^= seed << 17;
		for (n = seed % laps3; n && !__atomic_load_n(&wr->stop, __ATOMIC_RELAXED); n--)
			rlc_sample(wr->x);
		pause.tv_nsec = (seed >> 20) % 200000;
		nanosleep(&pause, NULL);
	}
	return NULL;
}

/*
 * With @small, shares of one line to 16 KiB that the drain fills at once
 * and swaps: data left in the ring goes to the next share while the RLC
 * keeps writing, and the stream has no gap the drain did not see as a lap.
 */
static int threaded_run(u32 guard, bool small)
{
	struct writer wr;
	struct txcc x;
	struct tbuf b;
	pthread_t t;
	u64 delivered = 0;
	int i, r = 0, shares = small ? 4000 : 64;

	txcc_init(&x, SZ_64K, guard, 40 * LINE, 4);
	tbuf_init(&b, 4 * SZ_1M, 0);
	wr.x = &x;
	wr.stop = false;
	pthread_create(&t, NULL, writer_fn, &wr);
	for (i = 0; i < shares && !r; i++) {
		u64 end = now_ns() + 20 * 1000000ULL;
		u32 share = small ? HDR + (1 + rnd() % 512) * LINE : b.size;
		u32 margin = small ? 0 : SZ_64K;

		share_start(&x, share, i + 1);
		/* The writer outruns the drain: it may lose everything, for a while */
		while (x.sh.copied + margin < x.sh.cap && now_ns() < end)
			drain(&x, &b);
		delivered += x.sh.copied;
		r = check_share(&x, &b, 4);
	}
	__atomic_store_n(&wr.stop, true, __ATOMIC_RELAXED);
	pthread_join(t, NULL);
	if (!CHECK(r == 0))
		return -1;
	if (!CHECK(x.unflagged == 0))
		return -1;
	/* The writer outran the drain: it did lap, and that was seen */
	if (!small && !CHECK(x.c.laps > 0))
		return -1;
	if (!CHECK(delivered > 0))
		return -1;
	tbuf_free(&b);
	free(x.ring);
	return 0;
}

static int test_threaded_exact(void)
{
	return threaded_run(0, false) || threaded_run(0, true) ? -1 : 0;
}

static int test_threaded_spill(void)
{
	return threaded_run(GUARD, false) || threaded_run(GUARD, true) ? -1 : 0;
}

static int test_pace(void)
{
	struct amdgpu_spm_pace p;
	const u64 ms = 1000000, idle = 100 * ms, min = ms / 4;
	const u32 ring = SZ_4M;
	u64 t = 5 * NSEC_PER_SEC, d;
	int i;

	amdgpu_spm_pace_init(&p, idle);
	/* Nothing streams: the backstop period */
	if (!CHECK(amdgpu_spm_pace_next(&p, t, 0, ring, min, idle) == idle))
		return -1;
	t += idle;
	if (!CHECK(amdgpu_spm_pace_next(&p, t, 0, ring, min, idle) == idle))
		return -1;
	/* 160 MB/s: drain when 3/8 full, 4/3 of (rate / half the ring) */
	t += 10 * ms;
	d = amdgpu_spm_pace_next(&p, t, 1600000, ring, min, idle);
	if (!CHECK(d == (u64)ring * 3 / 8 * NSEC_PER_SEC / 160000000))
		return -1;
	for (i = 0; i < 20; i++) {
		t += d;
		d = amdgpu_spm_pace_next(&p, t, 160000000ULL * d / NSEC_PER_SEC,
					 ring, min, idle);
	}
	if (!CHECK(d > 9 * ms && d < 10 * ms))
		return -1;
	/* A quiet drain does not forget the rate at once */
	t += d;
	if (!CHECK(amdgpu_spm_pace_next(&p, t, 0, ring, min, idle) < 12 * ms))
		return -1;
	/* It decays to the backstop when the stream stops */
	for (i = 0; i < 60; i++) {
		t += d;
		d = amdgpu_spm_pace_next(&p, t, 0, ring, min, idle);
	}
	if (!CHECK(d == idle))
		return -1;
	/* Never faster than the floor */
	t += ms;
	if (!CHECK(amdgpu_spm_pace_next(&p, t, 64 * SZ_1M, ring, min, idle) == min))
		return -1;
	/* A stalled ring waiting for room keeps the period it streamed at */
	t += 10 * ms;
	d = amdgpu_spm_pace_next(&p, t, 1600000, ring, min, idle);
	for (i = 0; i < 60; i++) {
		t += d;
		if (!CHECK(amdgpu_spm_pace_hold(&p, t) == d))
			return -1;
	}
	return 0;
}

/*
 * The pace's edges: the first drain has nothing to time its bytes
 * against; two drains a nanosecond apart still measure; a quiet drain
 * decays the rate by exactly 1/8.
 */
static int test_pace_edges(void)
{
	struct amdgpu_spm_pace p;
	const u64 ms = 1000000, idle = 100 * ms, min = ms / 4;
	const u32 ring = SZ_4M;
	u64 t = 3 * ms, rate;

	amdgpu_spm_pace_init(&p, idle);
	if (!CHECK(amdgpu_spm_pace_next(&p, t, SZ_1M, ring, min, idle) == idle))
		return -1;
	if (!CHECK(p.rate == 0))
		return -1;
	t += 1;
	if (!CHECK(amdgpu_spm_pace_next(&p, t, 64, ring, min, idle) == min))
		return -1;
	if (!CHECK(p.rate == 64 * NSEC_PER_SEC))
		return -1;
	amdgpu_spm_pace_init(&p, idle);
	t = 5 * NSEC_PER_SEC;
	amdgpu_spm_pace_next(&p, t, 0, ring, min, idle);
	t += 10 * ms;
	amdgpu_spm_pace_next(&p, t, 1600000, ring, min, idle);
	rate = p.rate;
	if (!CHECK(rate == 160000000))
		return -1;
	t += 10 * ms;
	if (!CHECK(amdgpu_spm_pace_next(&p, t, 0, ring, min, idle) ==
		   (u64)ring * 3 / 8 * NSEC_PER_SEC / (rate - rate / 8)))
		return -1;
	return 0;
}

/* ---- ring mode 3: an RLC that stalls at its read pointer ---- */

/*
 * The stall rule of the KUnit register model (tests/amdgpu_spm_model.c:
 * the ring is full when a sample would reach the read pointer), with the
 * read pointer the worker gives the RLC after each drain.
 */
static bool emit_stall(struct txcc *x)
{
	u32 size = x->rlc.size;
	u32 fill = (x->rlc.pos + size - amdgpu_spm_cursor_rdptr(&x->c)) % size;

	if (reading) {
		u64 before = x->rlc.stray;
		bool wrote = rlc_hw_sample_stall(&x->rlc, amdgpu_spm_cursor_rdptr(&x->c));

		count_strays(x, before);
		return wrote;
	}
	if (fill + x->rlc.sample >= size)
		return false;
	rlc_sample(x);
	return true;
}

/*
 * A share that fills j bytes into a spill, then an RLC that stalls until
 * the profiler installs the next buffer: nothing was overwritten, so
 * nothing may be reported lost, and every line arrives.
 */
static int test_stall_in_spill(void)
{
	u32 s, runs = 0;

	for (s = 20; s <= 160; s += 7) {
		u32 sample = s * LINE, pos0, k, j;

		for (j = LINE; ; j += LINE) {
			struct txcc x;
			struct tbuf b;

			txcc_init(&x, SZ_64K, GUARD, sample, 3);
			tbuf_init(&b, SZ_256K, 0);
			share_start(&x, b.size, 1);
			while (x.rlc.pos + sample <= SZ_64K - LINE)
				emit(&x, sample);
			drain(&x, &b);
			check_share(&x, &b, 3);
			pos0 = x.c.rptr;
			emit(&x, sample);	/* the spill */
			k = *(u32 *)x.ring;
			/* No spill: the sample ended at the end (pointer 0 or the size) */
			if (k == 0 || k == SZ_64K || j >= k) {
				tbuf_free(&b);
				free(x.ring);
				break;
			}
			emit(&x, 2 * sample);
			/* A share that fills j bytes into the spill */
			share_start(&x, HDR + (SZ_64K - pos0) + j, 2);
			drain(&x, &b);
			check_share(&x, &b, 3);
			if (!CHECK(x.c.rptr == SZ_64K + j))
				return -1;
			while (emit_stall(&x))
				;
			share_start(&x, b.size, 3);
			drain(&x, &b);
			check_share(&x, &b, 3);
			runs++;
			if (!CHECK(x.c.laps == 0) || !CHECK(x.gaps == 0) ||
			    !CHECK(x.next_seq == published(&x)))
				return -1;
			/* Drained: the read pointer it was given lets the RLC go on */
			if (!CHECK(emit_stall(&x)))
				return -1;
			tbuf_free(&b);
			free(x.ring);
		}
	}
	return CHECK(runs > 100) ? 0 : -1;
}

/* Random sample sizes, line-granular shares and late swaps, in mode 3 */
static int test_stall_random(void)
{
	u32 run;

	for (run = 0; run < 200; run++) {
		u32 sample = (20 + rnd() % 180) * LINE, seq = 1, it;
		struct txcc x;
		struct tbuf b;

		txcc_init(&x, SZ_64K, GUARD, sample, 4);
		tbuf_init(&b, SZ_256K, 0);
		share_start(&x, HDR + (1 + rnd() % 1200) * LINE, seq++);
		for (it = 0; it < 2000; it++) {
			u32 n = rnd() % 8;

			while (n-- && emit_stall(&x))
				;
			drain(&x, &b);
			if (rnd() % 3 == 0) {
				check_share(&x, &b, 4);
				share_start(&x, HDR + (1 + rnd() % 1200) * LINE, seq++);
			}
		}
		check_share(&x, &b, 4);
		/* A share the whole ring fits in: after it the RLC writes again */
		share_start(&x, b.size, seq++);
		drain(&x, &b);
		if (!CHECK(emit_stall(&x)))
			return -1;
		check_share(&x, &b, 4);
		if (!CHECK(x.c.laps == 0) || !CHECK(x.gaps == 0))
			return -1;
		tbuf_free(&b);
		free(x.ring);
	}
	return 0;
}

/* ---- benchmark ---- */

/*
 * A realistic mix: 1, 2, 4 and 8 XCCs, 4 MiB rings with the pre-GC 11.0.1
 * spill guard, 3 KiB samples (so wraps spill), 32 MiB destinations split
 * into one share per XCC. The model writes, then the drain runs; only the
 * drain is timed, against memcpy() of the same bytes from the same rings
 * into a plain buffer of the same size.
 */
static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/*
 * The baseline: @cnt bytes from offset @from of a ring of @ring bytes to
 * @to, a page of @to at a time as the kernel copies into pinned pages (one
 * large memcpy() is several times slower on this machine's glibc).
 */
static void copy_pagewise(u8 *to, const u8 *src, u32 ring, u32 from, u32 cnt)
{
	u32 o, c, f = from;

	for (o = 0; o < cnt; o += c, f += c) {
		if (f >= ring)
			f -= ring;	/* wraps, as the drain does */
		c = min_t(u32, min_t(u32, cnt - o, ring - f),
			  PAGE_SIZE - offset_in_page(to + o));
		memcpy(to + o, src + f, c);
	}
}

static int bench(void)
{
	const u32 ring = SZ_4M - AMDGPU_SPM_RING_HDR_SIZE, buf = 32 * SZ_1M;
	const u32 nx[] = { 1, 2, 4, 8 }, rounds = 48;
	double ratio[4 * 48];
	u64 bytes = 0;
	struct txcc *x = calloc(8, sizeof(*x));
	struct tbuf b[2];
	unsigned int n, i, k, round, nr = 0;

	tbuf_init(&b[0], buf, 0);
	tbuf_init(&b[1], buf, 0);
	for (i = 0; i < 8; i++)
		txcc_init(&x[i], ring, AMDGPU_SPM_GUARD_SIZE, 96 * LINE, i);
	for (n = 0; n < 4; n++) {
		u32 share = amdgpu_spm_share_size(buf, nx[n]);

		for (round = 0; round < rounds; round++) {
			u32 got[8], from[8], to[8], room[8], len[8];
			/* The two buffers take turns, so neither method keeps the warmer one */
			struct tbuf *bd = &b[round % 2], *bm = &b[(round + 1) % 2];
			u64 t0, t_drain = 0, t_copy = 0;

			for (i = 0; i < nx[n]; i++) {
				len[i] = (ring * 3 / 8 + 96 * LINE - 1) / (96 * LINE) * 96 * LINE;
				/*
				 * A new share every 8 rounds, or when this one
				 * cannot take the round: what does not fit would
				 * stay in the ring
				 */
				if (round % 8 == 0 || x[i].sh.cap - x[i].sh.copied < len[i])
					amdgpu_spm_share_init(&x[i].sh, share, i, nx[n],
							      i, round, 0);
				emit(&x[i], ring * 3 / 8);
				/* Where the drain will read from and write to */
				from[i] = x[i].c.rptr;
				to[i] = x[i].sh.off + HDR + x[i].sh.copied;
				room[i] = x[i].sh.cap - x[i].sh.copied;
			}
			/* Alternate which of the two finds the rings in cache */
			for (k = 0; k < 2; k++) {
				if ((k + round) % 2 == 0) {
					t0 = now_ns();
					for (i = 0; i < nx[n]; i++)
						got[i] = amdgpu_spm_drain_ring(&x[i].c, &x[i].sh,
									       &bd->dst, t0);
					t_drain = now_ns() - t0;
				} else {
					t0 = now_ns();
					for (i = 0; i < nx[n]; i++)
						copy_pagewise(bm->mem + to[i],
							      x[i].ring + AMDGPU_SPM_RING_HDR_SIZE,
							      ring, from[i], min(len[i], room[i]));
					t_copy = now_ns() - t0;
				}
			}
			for (i = 0; i < nx[n]; i++)
				bytes += got[i];
			ratio[nr++] = (double)t_copy / (double)t_drain;
		}
	}
	/* The median of the rounds: other work on the machine hits single rounds */
	qsort(ratio, nr, sizeof(ratio[0]), cmp_double);
	printf("spm_native_drain: %llu bytes, throughput drain/memcpy = %.2f\n",
	       (unsigned long long)bytes, ratio[nr / 2]);
	for (i = 0; i < 8; i++)
		free(x[i].ring);
	free(x);
	tbuf_free(&b[0]);
	tbuf_free(&b[1]);
	return 0;
}

/* Whether the test's RLCs wrote nothing past their rings' memory */
static bool no_strays(void)
{
	u64 n = __atomic_load_n(&strays, __ATOMIC_RELAXED);

	if (n)
		fprintf(stderr, "%s: %llu lines written past the ring's memory %s\n",
			cur_test, (unsigned long long)n,
			"(a spill longer than the guard)");
	return n == 0;
}

/*
 * The harness: a sample whose spill does not fit the guard is a stray
 * write, which fails the test it happens in. Here the guard is made too
 * small for the sample on purpose (1 KiB, a sample of 3 KiB that crosses
 * the end of the ring), so the check must find the stray lines; the case
 * then clears them, as it passes by finding them.
 */
static int test_stray_write_fails(void)
{
	struct txcc x;
	bool found, reported;

	txcc_init(&x, SZ_64K, 1024, 96 * LINE, 3);
	emit(&x, SZ_64K + 96 * LINE);
	found = CHECK(x.rlc.stray > 0) && CHECK(strays == x.rlc.stray);
	reported = !no_strays();
	fprintf(stderr, "%s: (the line above is expected)\n", cur_test);
	found = found && CHECK(reported);
	strays = 0;
	free(x.ring);
	return found ? 0 : -1;
}

#define T(fn) { #fn, fn }
static const struct {
	const char *name;
	int (*fn)(void);
} tests[] = {
	T(test_linear),
	T(test_wrap_exact),
	T(test_wrap_spill),
	T(test_wrap_spill_none),
	T(test_lap_exact),
	T(test_lap_spill),
	T(test_lap_not_empty),
	T(test_bad_wptr),
	T(test_full_share_and_no_buffer),
	T(test_fill_mid_drain),
	T(test_full_share_lap_exact),
	T(test_full_share_lap_spill),
	T(test_mid_wrap_exact),
	T(test_mid_wrap_spill),
	T(test_mid_wrap_then_lap),
	T(test_blind_discards),
	T(test_header),
	T(test_write_fn),
	T(test_lap_during_copy),
	T(test_spill_shrunk),
	T(test_spill_guard_edges),
	T(test_spill_reaches_rptr),
	T(test_blind_ends_exactly),
	T(test_resync_moved),
	T(test_end_pointer_idle),
	T(test_lap_by_spill_not_empty),
	T(test_resync_stale_zero),
	T(test_pace),
	T(test_pace_edges),
	T(test_random_exact),
	T(test_random_spill),
	T(test_stall_in_spill),
	T(test_stall_random),
	T(test_threaded_exact),
	T(test_threaded_spill),
	T(test_stray_write_fails),
};

static bool end_at_size(void)
{
	return reading && reading->end == RLC_HW_END_SIZE;
}

/* Run test @i under the writer of @reading */
static void run_test(unsigned int i)
{
	const char *w = reading ? reading->name : "amdgpu_spm_rlc_ring.h";
	bool ok;

	cur_test = tests[i].name;
	sticky = 0;
	strays = 0;
	spm_shim_irqs_off = 0;
	spm_shim_irq_hook = NULL;
	ok = tests[i].fn() == 0 && !sticky && CHECK(!spm_shim_irqs_off) &&
	     no_strays();
	if (ok) {
		printf("ok %u %s [%s]\n", i + 1, tests[i].name, w);
		passed++;
	} else {
		printf("not ok %u %s [%s]\n", i + 1, tests[i].name, w);
		failed++;
	}
	fflush(stdout);
}

/*
 * Every test (or only @only) under each writer of @runs (NULL: the KUnit
 * tests' one): a test under all of them before the next, so that with
 * @stop a failure under any writer ends the run early.
 */
static int run_tests(const struct rlc_hw_reading **runs, unsigned int nruns,
		     const char *only, bool stop)
{
	unsigned int i, k;
	int ran = 0;

	for (i = 0; i < ARRAY_SIZE(tests); i++) {
		if (only && strcmp(only, tests[i].name))
			continue;
		ran++;
		for (k = 0; k < nruns; k++) {
			int before = failed;

			reading = runs[k];
			run_test(i);
			if (stop && failed != before)
				return -1;
		}
	}
	if (!ran) {
		fprintf(stderr, "no test %s\n", only);
		failed++;
		return -1;
	}
	return 0;
}

static const struct rlc_hw_reading *find_reading(const char *name)
{
	unsigned int i;
	char *end;

	i = strtoul(name, &end, 10);
	if (!*end && i >= 1 && i <= ARRAY_SIZE(rlc_hw_readings))
		return &rlc_hw_readings[i - 1];
	for (i = 0; i < ARRAY_SIZE(rlc_hw_readings); i++)
		if (!strcmp(name, rlc_hw_readings[i].name))
			return &rlc_hw_readings[i];
	for (i = 0; i < ARRAY_SIZE(rlc_hw_readings_extra); i++)
		if (!strcmp(name, rlc_hw_readings_extra[i].name))
			return &rlc_hw_readings_extra[i];
	return NULL;
}

int main(int argc, char **argv)
{
	const struct rlc_hw_reading *runs[16], *writers[40];
	const char *only = NULL;
	unsigned int i, nruns = 0, nw = 0;
	bool all = false, stop = false, extra = false;
	int opt;

	if (argc > 1 && !strcmp(argv[1], "bench"))
		return bench();
	while ((opt = getopt(argc, argv, "alr:t:x")) != -1) {
		switch (opt) {
		case 'a':
			all = true;
			break;
		case 'l':
			for (i = 0; i < ARRAY_SIZE(rlc_hw_readings); i++)
				printf("%u %s\n", i + 1, rlc_hw_readings[i].name);
			for (i = 0; i < ARRAY_SIZE(rlc_hw_readings_extra); i++)
				printf("extra %s\n", rlc_hw_readings_extra[i].name);
			return 0;
		case 'r':
			if (!strcmp(optarg, "extra")) {
				extra = true;
				break;
			}
			if (nruns < ARRAY_SIZE(runs))
				runs[nruns] = find_reading(optarg);
			if (nruns == ARRAY_SIZE(runs) || !runs[nruns]) {
				fprintf(stderr, "no reading %s (-l lists them)\n", optarg);
				return 2;
			}
			nruns++;
			break;
		case 't':
			only = optarg;
			break;
		case 'x':
			stop = true;
			break;
		default:
			fprintf(stderr, "usage: %s [bench] [-a] [-l] [-r reading]... %s\n",
				argv[0], "[-t test] [-x]");
			return 2;
		}
	}
	/* The writers: the KUnit tests' one, then the readings asked for */
	if ((!nruns && !extra) || all)
		writers[nw++] = NULL;
	for (i = 0; all && i < ARRAY_SIZE(rlc_hw_readings); i++)
		writers[nw++] = &rlc_hw_readings[i];
	for (i = 0; i < nruns; i++)
		writers[nw++] = runs[i];
	for (i = 0; extra && i < ARRAY_SIZE(rlc_hw_readings_extra); i++)
		writers[nw++] = &rlc_hw_readings_extra[i];
	run_tests(writers, nw, only, stop);
	printf("%d passed, %d failed\n", passed, failed);
	fflush(stdout);
	return failed ? 1 : 0;
}
