// SPDX-License-Identifier: MIT
/*
 * Copyright 2026 The amdgpu profiler series authors
 *
 * The real SPM hooks of gfx_v9_4_3.c (suite amdgpu_spm_gfx_v9_4_3) and
 * gfx_v9_0.c (suite amdgpu_spm_gfx_v9_0), installed by the real IP
 * early_init, driven by the real SPM manager through amdgpu_spm_ioctl(),
 * against the register-level RLC model of amdgpu_spm_model.c: the register
 * state after each operation, streaming into user buffers, loss, reset and
 * resume.
 */

#include <kunit/test.h>

#include <linux/delay.h>
#include <linux/mman.h>
#include <linux/sched/signal.h>

#include <drm/amdgpu_drm.h>

#include "amdgpu.h"
#include "amdgpu_profiler.h"
#include "amdgpu_reset.h"
#include "amdgpu_spm.h"
#include "tests/amdgpu_kunit_helpers.h"
#include "tests/amdgpu_spm_model.h"

#define HDR	((u32)sizeof(struct drm_amdgpu_spm_buffer_header))
#define LINE	AMDGPU_SPM_LINE_SIZE
/* A sample that does not divide the ring, so that wraps spill */
#define SAMPLE	(96 * LINE)

static const struct spm_model_layout *layout(struct kunit *test)
{
	return test->priv;
}

/* The environment, under the reading the case runs with (if any) */
static struct spm_env *hw_env(struct kunit *test, unsigned int nxcc, u32 ring)
{
	struct spm_env *e = spm_env_create(test, layout(test), nxcc, ring);

	spm_model_set_reading(e->m, test->param_value);
	return e;
}

static u32 reg(struct spm_env *e, u32 xcc, enum spm_model_reg r)
{
	return spm_model_read(e->m, xcc, r);
}

/* SPM_VMID of @xcc */
static u32 vmid_of(struct spm_env *e, u32 xcc)
{
	return reg(e, xcc, SPM_R_MC_CNTL) & e->m->l->vmid_mask;
}

static u32 ring_mode(struct spm_env *e, u32 xcc)
{
	const struct spm_model_layout *l = e->m->l;

	return spm_model_field(e->m, xcc, SPM_R_PERFMON_CNTL, l->ring_mode_mask,
			       l->ring_mode_shift);
}

static u32 spm_state(struct spm_env *e, u32 xcc)
{
	const struct spm_model_layout *l = e->m->l;

	return spm_model_field(e->m, xcc, SPM_R_CP_PERFMON_CNTL, l->state_mask,
			       l->state_shift);
}

static u64 ring_base(struct spm_env *e, u32 xcc)
{
	return spm_model_ring_base(e->m, xcc);
}

static unsigned int nxcc_of(struct kunit *test)
{
	return layout(test)->num_xcc;
}

/*
 * The profiler starts counting on @xcc and, under a reading that says so,
 * selects ring mode 3 the way aqlprofile's command stream does
 */
static void profiler_start(struct spm_env *e, u32 xcc, u32 sample)
{
	const struct spm_model_layout *l = e->m->l;

	spm_model_profiler_start(e->m, xcc, sample);
	if (e->m->rd->user_mode3)
		spm_model_write(e->m, xcc, SPM_R_PERFMON_CNTL,
				(reg(e, xcc, SPM_R_PERFMON_CNTL) & ~l->ring_mode_mask) |
				(3 << l->ring_mode_shift));
}

/* What an earlier user of the SPM may have left: the other ring modes */
static void leave_previous_owner_state(struct spm_env *e, unsigned int n)
{
	const struct spm_model_layout *l = e->m->l;
	unsigned int i;

	for (i = 0; i < n; i++) {
		spm_model_write(e->m, i, SPM_R_PERFMON_CNTL,
				(3 << l->ring_mode_shift) | (0x100 << 16));
		spm_model_write(e->m, i, SPM_R_INT_CNTL, 1);
		spm_model_write(e->m, i, SPM_R_THRESHOLD, 1);
	}
}

/* Every write of SPM_VMID of @xcc since log index @from wrote @vmid */
static bool vmid_writes_only(struct spm_env *e, u32 xcc, int from, u32 vmid)
{
	int i;

	for (i = spm_model_find_write(e->m, xcc, SPM_R_MC_CNTL, from); i >= 0;
	     i = spm_model_find_write(e->m, xcc, SPM_R_MC_CNTL, i + 1))
		if ((e->m->log[i].val & e->m->l->vmid_mask) != vmid)
			return false;
	return true;
}

/* Nothing the RLC model counts as a hardware error happened */
static void expect_clean(struct kunit *test, struct spm_env *e, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		struct spm_model_xcc *x = &e->m->x[i];

		KUNIT_EXPECT_EQ_MSG(test, x->vmfaults, 0, "xcc %u", i);
		KUNIT_EXPECT_EQ_MSG(test, x->unknown_ctx, 0, "xcc %u", i);
		KUNIT_EXPECT_EQ_MSG(test, x->vmid0, 0, "xcc %u", i);
		KUNIT_EXPECT_EQ_MSG(test, x->freed, 0, "xcc %u", i);
		KUNIT_EXPECT_EQ_MSG(test, x->stray, 0, "xcc %u", i);
		KUNIT_EXPECT_EQ_MSG(test, x->reprogrammed, 0, "xcc %u", i);
		KUNIT_EXPECT_EQ_MSG(test, x->irqs, 0, "xcc %u", i);
		KUNIT_EXPECT_EQ_MSG(test, x->unknown_mode, 0, "xcc %u", i);
	}
}

/* ---- register state ---- */

/*
 * After ACQUIRE every XCC of the partition is stopped, points at its own
 * ring, and selects the SPM VMID; the VMID is written only after the ring
 * base, and nothing is reprogrammed running.
 */
static void spm_hw_acquire_programs(struct kunit *test)
{
	unsigned int n = nxcc_of(test), i;
	struct spm_env *e = hw_env(test, n, SZ_64K);
	u64 bases[AMDGPU_SPM_MAX_XCC];

	leave_previous_owner_state(e, n);
	e->m->nlog = 0;
	KUNIT_ASSERT_EQ(test, spm_env_op(e, e->a, AMDGPU_SPM_OP_ACQUIRE), 0);
	KUNIT_EXPECT_EQ(test, e->m->allocs, n);
	for (i = 0; i < n; i++) {
		int stop = spm_model_find_write(e->m, i, SPM_R_CP_PERFMON_CNTL, 0);
		int base = spm_model_find_write(e->m, i, SPM_R_BASE_LO, 0);
		int vmid = spm_model_find_write(e->m, i, SPM_R_MC_CNTL, 0);
		unsigned int j;

		bases[i] = ring_base(e, i);
		KUNIT_EXPECT_NE(test, bases[i], 0);
		for (j = 0; j < i; j++)
			KUNIT_EXPECT_NE(test, bases[i], bases[j]);
		KUNIT_EXPECT_EQ(test, reg(e, i, SPM_R_SIZE), SZ_64K);
		KUNIT_EXPECT_EQ(test, vmid_of(e, i),
				SPM_MODEL_VMID);
		KUNIT_EXPECT_NE(test, spm_state(e, i), SPM_MODEL_START_COUNTING);
		/* The interrupt is left off: it comes with the stall erratum */
		KUNIT_EXPECT_EQ(test, reg(e, i, SPM_R_INT_CNTL), 0);
		KUNIT_EXPECT_EQ(test, reg(e, i, SPM_R_THRESHOLD), U32_MAX);
		/* Stopped before the ring changes; SPM_VMID only ever the SPM VMID */
		KUNIT_EXPECT_GE(test, stop, 0);
		KUNIT_EXPECT_GT(test, base, stop);
		if (vmid >= 0)
			KUNIT_EXPECT_GT(test, vmid, base);
		KUNIT_EXPECT_TRUE(test, vmid_writes_only(e, i, 0, SPM_MODEL_VMID));
		/* RLC_CLK_CNTL belongs to RLC resume and fini (see the hooks) */
		KUNIT_EXPECT_LT(test, spm_model_find_write(e->m, i, SPM_R_CLK_CNTL, 0), 0);
	}
	expect_clean(test, e, n);
	KUNIT_EXPECT_EQ(test, spm_env_op(e, e->a, AMDGPU_SPM_OP_RELEASE), 0);
}

/*
 * The first buffer starts the hardware: the ring mode that never stalls
 * (whatever an earlier user left) and a reset that puts the RLC's write
 * pointer at 0; the SPM clock, where the part needs it, is on since RLC
 * resume.
 */
static void spm_hw_start_programs(struct kunit *test)
{
	unsigned int n = nxcc_of(test), i;
	struct spm_env *e = hw_env(test, n, SZ_64K);
	unsigned long buf = spm_env_user_buf(test, SZ_64K, MAP_PRIVATE | MAP_ANONYMOUS);

	leave_previous_owner_state(e, n);
	KUNIT_ASSERT_EQ(test, spm_env_op(e, e->a, AMDGPU_SPM_OP_ACQUIRE), 0);
	KUNIT_ASSERT_EQ(test, spm_env_set_buf(e, e->a, buf, SZ_64K, 0, NULL), 0);
	for (i = 0; i < n; i++) {
		KUNIT_EXPECT_EQ(test, ring_mode(e, i), 0);
		/* The profiler's sample interval stays as it was */
		KUNIT_EXPECT_EQ(test, reg(e, i, SPM_R_PERFMON_CNTL) >> 16, 0x100);
		KUNIT_EXPECT_EQ(test, spm_state(e, i), SPM_MODEL_DISABLE_AND_RESET);
		/*
		 * Nothing read yet: RDPTR is the sentinel's line, the last of
		 * the ring, which an RLC stalling at RDPTR must leave alone
		 */
		KUNIT_EXPECT_EQ(test, reg(e, i, SPM_R_RDPTR),
				SZ_64K - AMDGPU_SPM_RING_HDR_SIZE - LINE);
		if (e->m->l->clk_mask)
			KUNIT_EXPECT_EQ(test, reg(e, i, SPM_R_CLK_CNTL) & e->m->l->clk_mask,
					e->m->l->clk_mask);
		/* The profiler starts counting; the RLC then streams */
		spm_model_profiler_start(e->m, i, SAMPLE);
		KUNIT_EXPECT_EQ(test, spm_model_emit(e->m, i, SAMPLE), SAMPLE);
	}
	/* No buffer stops the hardware */
	KUNIT_ASSERT_EQ(test, spm_env_set_buf(e, e->a, 0, 0, 0, NULL), 0);
	for (i = 0; i < n; i++) {
		KUNIT_EXPECT_NE(test, spm_state(e, i), SPM_MODEL_START_COUNTING);
		KUNIT_EXPECT_EQ(test, spm_model_emit(e->m, i, SAMPLE), 0);
	}
	expect_clean(test, e, n);
	KUNIT_EXPECT_EQ(test, spm_env_op(e, e->a, AMDGPU_SPM_OP_RELEASE), 0);
}

/*
 * RELEASE gives the hardware back: stopped, the SPM VMID parked, no ring;
 * the rings are freed only after that, and the RLC never writes to freed
 * memory. A profiler that starts counting afterwards writes nothing, and
 * under the reading that an RLC with no ring writes at GPU address 0, that
 * write faults in the parked VMID's empty table (without retrying) instead
 * of reaching memory.
 */
static void spm_hw_release_gives_back(struct kunit *test)
{
	unsigned int n = nxcc_of(test), i;
	struct spm_env *e = hw_env(test, n, SZ_64K);
	unsigned long buf = spm_env_user_buf(test, SZ_64K, MAP_PRIVATE | MAP_ANONYMOUS);

	KUNIT_ASSERT_EQ(test, spm_env_op(e, e->a, AMDGPU_SPM_OP_ACQUIRE), 0);
	KUNIT_ASSERT_EQ(test, spm_env_set_buf(e, e->a, buf, SZ_64K, 0, NULL), 0);
	for (i = 0; i < n; i++)
		profiler_start(e, i, SAMPLE);
	e->m->nlog = 0;
	KUNIT_ASSERT_EQ(test, spm_env_op(e, e->a, AMDGPU_SPM_OP_RELEASE), 0);
	KUNIT_EXPECT_EQ(test, e->m->allocs, 0);
	for (i = 0; i < n; i++) {
		int stop = spm_model_find_write(e->m, i, SPM_R_CP_PERFMON_CNTL, 0);
		int vmid = spm_model_find_write(e->m, i, SPM_R_MC_CNTL, 0);
		int base = spm_model_find_write(e->m, i, SPM_R_BASE_LO, 0);

		KUNIT_EXPECT_EQ(test, vmid_of(e, i),
				SPM_MODEL_VMID);
		KUNIT_EXPECT_EQ(test, ring_base(e, i), 0);
		KUNIT_EXPECT_EQ(test, reg(e, i, SPM_R_SIZE), 0);
		KUNIT_EXPECT_NE(test, spm_state(e, i), SPM_MODEL_START_COUNTING);
		KUNIT_EXPECT_GE(test, stop, 0);
		KUNIT_EXPECT_GT(test, base, stop);
		if (vmid >= 0)
			KUNIT_EXPECT_GT(test, vmid, stop);
		KUNIT_EXPECT_TRUE(test, vmid_writes_only(e, i, 0, SPM_MODEL_VMID));
		KUNIT_EXPECT_LT(test, spm_model_find_write(e->m, i, SPM_R_CLK_CNTL, 0), 0);
		/* A profiler that starts counting again streams nowhere */
		profiler_start(e, i, SAMPLE);
		KUNIT_EXPECT_EQ(test, spm_model_emit(e->m, i, 2 * SAMPLE), 0);
		KUNIT_EXPECT_EQ_MSG(test, e->m->x[i].vmfaults, e->m->rd->zero_va0 ? 2 : 0,
				    "xcc %u", i);
		KUNIT_EXPECT_EQ_MSG(test, e->m->x[i].retry_faults, 0, "xcc %u", i);
		KUNIT_EXPECT_EQ_MSG(test, e->m->x[i].stray, 0, "xcc %u", i);
		KUNIT_EXPECT_EQ_MSG(test, e->m->x[i].vmid0, 0, "xcc %u", i);
		KUNIT_EXPECT_EQ_MSG(test, e->m->x[i].emitted, 0, "xcc %u", i);
	}
	for (i = 0; i < n; i++)
		KUNIT_EXPECT_FALSE(test, amdgpu_spm_xcc_owned(e->adev, i));
	expect_clean(test, e, 0);
}

/* ---- streaming ---- */

struct stream_run {
	unsigned int nxcc;
	/* 0: each step the test emits 1/4 of a ring per XCC and swaps */
	u64 rate;
	u64 total;
};

/*
 * A profiler loop over three buffers while every XCC streams: every line
 * arrives, in order, in the share of its XCC, with headers that say which
 * XCC, which buffer and how much; nothing is lost. With a rate, the RLC
 * model streams from a thread and the drain timer has to keep up; without
 * one, the test emits a quarter of a ring per XCC and then swaps buffers,
 * so that the result does not depend on how fast the machine is.
 */
static void stream_run(struct kunit *test, const struct stream_run *r)
{
	struct spm_env *e = hw_env(test, r->nxcc, SZ_4M);
	/*
	 * Streaming from a thread, a share holds the whole stream: what is
	 * tested is that the drain keeps up with the RLC, not how often a
	 * starved test thread gets round to swapping buffers.
	 */
	u32 share = r->rate ? SZ_8M : 2 * SZ_1M, size = share * r->nxcc;
	u32 step = SZ_1M;
	struct spm_model_check chk[AMDGPU_SPM_MAX_XCC] = {};
	unsigned long buf[3];
	struct spm_model_stream *st = NULL;
	struct amdgpu_spm_stats st0, st1;
	struct drm_amdgpu_spm_args out;
	u64 t0, t1, lost = 0, sent = 0;
	unsigned int i, k, seq = 1;
	bool done = false;

	for (k = 0; k < 3; k++)
		buf[k] = spm_env_user_buf(test, size, MAP_PRIVATE | MAP_ANONYMOUS);
	KUNIT_ASSERT_EQ(test, spm_env_op(e, e->a, AMDGPU_SPM_OP_ACQUIRE), 0);
	KUNIT_ASSERT_EQ(test, spm_env_set_buf(e, e->a, buf[0], size, 0, NULL), 0);
	for (i = 0; i < r->nxcc; i++)
		profiler_start(e, i, SAMPLE);
	spm_env_stats(test, e, 0, &st0);
	t0 = ktime_get_ns();
	if (r->rate)
		st = spm_model_stream_start(test, e->m, GENMASK(r->nxcc - 1, 0),
					    r->rate, r->total);
	for (k = 1; !done; k++) {
		unsigned long old = buf[(k - 1) % 3];

		if (st) {
			done = spm_model_stream_done(st);
			if (!done)
				usleep_range(4000, 6000);
			else
				msleep(50);	/* the last drain */
		} else {
			for (i = 0; i < r->nxcc; i++)
				spm_model_emit(e->m, i, step);
			sent += step;
			done = sent >= r->total;
		}
		KUNIT_ASSERT_EQ(test, spm_env_set_buf(e, e->a, done ? 0 : buf[k % 3],
						      size, 0, &out), 0);
		for (i = 0; i < r->nxcc; i++) {
			struct drm_amdgpu_spm_buffer_header h;

			spm_env_read_header(test, old, i * share, &h);
			KUNIT_EXPECT_EQ(test, h.version, AMDGPU_PROFILER_VERSION);
			KUNIT_EXPECT_EQ(test, AMDGPU_SPM_HDR_XCC(h.info.xcc_info), i);
			KUNIT_EXPECT_EQ(test, AMDGPU_SPM_HDR_NUM_SHARES(h.info.xcc_info), r->nxcc);
			KUNIT_EXPECT_EQ(test, AMDGPU_SPM_HDR_SHARE(h.info.xcc_info), i);
			KUNIT_EXPECT_EQ(test, h.info.seq, seq);
			lost += h.has_data_loss;
			spm_model_check_share(test, old, i * share, h.bytes_copied, i, &chk[i]);
		}
		seq++;
	}
	t1 = ktime_get_ns();
	spm_env_stats(test, e, 0, &st1);
	KUNIT_EXPECT_EQ(test, lost, 0);
	KUNIT_EXPECT_EQ(test, st1.laps - st0.laps, 0);
	for (i = 0; i < r->nxcc; i++) {
		KUNIT_EXPECT_FALSE_MSG(test, chk[i].bad, "xcc %u", i);
		KUNIT_EXPECT_FALSE_MSG(test, chk[i].order, "xcc %u", i);
		KUNIT_EXPECT_EQ_MSG(test, chk[i].gaps, 0, "xcc %u", i);
		/* Every line the RLC wrote arrived */
		KUNIT_EXPECT_EQ_MSG(test, chk[i].lines * LINE, e->m->x[i].emitted,
				    "xcc %u", i);
		KUNIT_EXPECT_GE_MSG(test, e->m->x[i].emitted, r->total, "xcc %u", i);
		/* In mode 3 too: the drain keeps the RLC from stalling */
		KUNIT_EXPECT_EQ_MSG(test, e->m->x[i].stalls, 0, "xcc %u", i);
	}
	expect_clean(test, e, r->nxcc);
	kunit_info(test, "%u XCCs: %llu MB/s per XCC for %llu ms, %llu wake-ups (%llu per second)\n",
		   r->nxcc, div64_u64(e->m->x[0].emitted * 1000, t1 - t0 + 1),
		   div64_u64(t1 - t0, NSEC_PER_MSEC), st1.wakeups - st0.wakeups,
		   div64_u64((st1.wakeups - st0.wakeups) * NSEC_PER_SEC, t1 - t0 + 1));
	KUNIT_EXPECT_EQ(test, spm_env_op(e, e->a, AMDGPU_SPM_OP_RELEASE), 0);
}

/*
 * rocprofiler's 500 kHz sampling is roughly 160 MB/s per XCC: a lap of the
 * default 4 MiB ring every 26 ms. These runs emit 1/4 of a ring per XCC
 * per swap, the amount 6.5 ms of such a stream fills, so any rate that the
 * drain's period keeps up with gives the same bytes.
 */
static void spm_hw_stream_1(struct kunit *test)
{
	const struct stream_run r = { 1, 0, 24 * SZ_1M };

	stream_run(test, &r);
}

static void spm_hw_stream_4(struct kunit *test)
{
	const struct stream_run r = { 4, 0, 12 * SZ_1M };

	stream_run(test, &r);
}

static void spm_hw_stream_8(struct kunit *test)
{
	const struct stream_run r = { 8, 0, 8 * SZ_1M };

	stream_run(test, &r);
}

/* Wait until every XCC of @n has written @bytes into its ring */
static bool wait_emitted(struct spm_env *e, unsigned int n, u64 bytes)
{
	unsigned long end = jiffies + msecs_to_jiffies(60000);
	unsigned int i;

	do {
		for (i = 0; i < n; i++)
			if (READ_ONCE(e->m->x[i].emitted) < bytes)
				break;
		if (i == n)
			return true;
		usleep_range(1000, 2000);
	} while (time_before(jiffies, end));
	return false;
}

/*
 * The drain timer alone, with no ioctl while the RLC streams: the profiler
 * installs one destination for the whole stream and waits. The worker
 * learns the rate from its own drains while the longest period
 * (amdgpu.spm_backstop_ms) is short; then the case raises that to twice
 * the time the stream takes to fill a ring, so a worker that kept it
 * would lap every ring, and what the worker must find instead is the
 * period its pace (amdgpu_spm_pace_next(): drain when a ring is 3/8 full)
 * gives at the rate the RLC really streams: the case asserts that period
 * against the rate it measures itself. Between two drains at that pace 5/8
 * of a ring time (300 ms here) is to spare before a lap, and nothing waits
 * for the test thread, so a slow host does not fail the case; a ring
 * lapped for a wrong pace does.
 */
static void spm_hw_stream_timer(struct kunit *test)
{
	const u32 ring = SZ_512K, rate = SZ_1M, total = 4 * SZ_1M;
	unsigned int n = min(nxcc_of(test), 2u), i;
	struct spm_env *e = hw_env(test, n, ring);
	u32 share = total + SZ_256K;
	unsigned long buf = spm_env_user_buf(test, n * share, MAP_PRIVATE | MAP_ANONYMOUS);
	struct spm_model_check chk[AMDGPU_SPM_MAX_XCC] = {};
	struct drm_amdgpu_spm_buffer_header h;
	struct amdgpu_spm_stats st0, mid, st1;
	struct drm_amdgpu_spm_args out;
	struct spm_model_stream *st;
	u64 t0, t1, achieved;
	unsigned int backstop = 2 * 1000 * ring / rate;

	amdgpu_spm_backstop_ms = 50;
	KUNIT_ASSERT_EQ(test, spm_env_op(e, e->a, AMDGPU_SPM_OP_ACQUIRE), 0);
	KUNIT_ASSERT_EQ(test, spm_env_set_buf(e, e->a, buf, n * share, 0, NULL), 0);
	for (i = 0; i < n; i++)
		profiler_start(e, i, SAMPLE);
	spm_env_stats(test, e, 0, &st0);
	t0 = ktime_get_ns();
	st = spm_model_stream_start(test, e->m, GENMASK(n - 1, 0), rate, total);
	/* A quarter of a ring in: the worker has drained it, knows the rate */
	KUNIT_ASSERT_TRUE(test, wait_emitted(e, n, ring / 4));
	WRITE_ONCE(amdgpu_spm_backstop_ms, backstop);

	/* Half way: the period the worker chose, against the rate reached */
	KUNIT_ASSERT_TRUE(test, wait_emitted(e, n, total / 2));
	spm_env_stats(test, e, 0, &mid);
	achieved = div64_u64(READ_ONCE(e->m->x[0].emitted) * NSEC_PER_SEC,
			     ktime_get_ns() - t0);
	kunit_info(test, "%u XCCs at %llu KB/s each: drain period %llu ms (3/8 of a ring: %llu ms)\n",
		   n, achieved >> 10, div64_u64(mid.period_ns, NSEC_PER_MSEC),
		   div64_u64((u64)ring * 3 / 8 * 1000, achieved));
	/* Not the backstop, and at most half a ring's time at that rate */
	KUNIT_EXPECT_LT(test, mid.period_ns, (u64)backstop * NSEC_PER_MSEC);
	KUNIT_EXPECT_LE(test, mul_u64_u32_div(mid.period_ns, achieved, NSEC_PER_SEC),
			(u64)ring / 2);

	spm_model_stream_wait(st);
	t1 = ktime_get_ns();
	/* Everything written reaches the buffer, with no ioctl */
	for (i = 0; i < n; i++)
		KUNIT_EXPECT_TRUE_MSG(test,
				      spm_env_wait_header(test, buf, i * share,
							  e->m->x[i].emitted, 60000),
				      "xcc %u", i);
	spm_env_stats(test, e, 0, &st1);
	KUNIT_ASSERT_EQ(test, spm_env_set_buf(e, e->a, 0, 0, 0, &out), 0);
	KUNIT_EXPECT_EQ(test, out.has_data_loss, 0);
	KUNIT_EXPECT_EQ(test, st1.laps - st0.laps, 0);
	for (i = 0; i < n; i++) {
		spm_env_read_header(test, buf, i * share, &h);
		KUNIT_EXPECT_EQ(test, h.has_data_loss, 0);
		KUNIT_EXPECT_EQ(test, h.info.seq, 1);
		spm_model_check_share(test, buf, i * share, h.bytes_copied, i, &chk[i]);
		KUNIT_EXPECT_FALSE_MSG(test, chk[i].bad, "xcc %u", i);
		KUNIT_EXPECT_FALSE_MSG(test, chk[i].order, "xcc %u", i);
		KUNIT_EXPECT_EQ_MSG(test, chk[i].gaps, 0, "xcc %u", i);
		KUNIT_EXPECT_EQ_MSG(test, chk[i].lines * LINE, e->m->x[i].emitted,
				    "xcc %u", i);
		KUNIT_EXPECT_GE_MSG(test, e->m->x[i].emitted, (u64)total, "xcc %u", i);
		KUNIT_EXPECT_EQ_MSG(test, e->m->x[i].stalls, 0, "xcc %u", i);
	}
	expect_clean(test, e, n);
	kunit_info(test, "%llu wake-ups in %llu ms\n", st1.wakeups - st0.wakeups,
		   div64_u64(t1 - t0, NSEC_PER_MSEC));
	KUNIT_EXPECT_EQ(test, spm_env_op(e, e->a, AMDGPU_SPM_OP_RELEASE), 0);
}

/*
 * Past the drain's capacity: one XCC's RLC writes three rings' worth
 * between two drains. In mode 0 it laps: its share, and only its, reports
 * the loss, and nothing stale arrives. In mode 3 (a reading that has the
 * profiler select it) it stalls when the ring is full instead: what it
 * wrote arrives whole and in order, and the samples it could not take are
 * lost where the kernel cannot see them (profiler.rst, Draining), so no
 * share reports loss; under every reading of where it stops, a full ring
 * is not taken for a lap.
 */
static void spm_hw_overload_loss_is_per_xcc(struct kunit *test)
{
	unsigned int n = min(nxcc_of(test), 2u), i;
	struct spm_env *e = hw_env(test, n, SZ_64K);
	bool mode3 = e->m->rd->user_mode3;
	u32 size = n * SZ_256K;
	unsigned long buf = spm_env_user_buf(test, size, MAP_PRIVATE | MAP_ANONYMOUS);
	struct drm_amdgpu_spm_args out;
	struct spm_model_check chk = {};
	struct amdgpu_spm_stats st;
	/*
	 * The last XCC's samples tile its ring's data (2047 lines, 64 KiB
	 * less the header, are 23 samples of 89): given the read pointer
	 * as RDPTR, an RLC that stops at RDPTR would write over a sentinel
	 * in the line before it
	 */
	const u32 tile = 89 * LINE;

	amdgpu_spm_backstop_ms = 60000;
	KUNIT_ASSERT_EQ(test, spm_env_op(e, e->a, AMDGPU_SPM_OP_ACQUIRE), 0);
	KUNIT_ASSERT_EQ(test, spm_env_set_buf(e, e->a, buf, size, 0, NULL), 0);
	for (i = 0; i < n; i++)
		profiler_start(e, i, i == n - 1 ? tile : SAMPLE);
	/* The last XCC writes three laps of its ring at once, the others a bit */
	for (i = 0; i + 1 < n; i++)
		spm_model_emit(e->m, i, 8 * SAMPLE);
	spm_model_emit(e->m, n - 1, 3 * SZ_64K);
	KUNIT_ASSERT_EQ(test, spm_env_set_buf(e, e->a, 0, 0, 0, &out), 0);
	spm_env_stats(test, e, 0, &st);
	KUNIT_EXPECT_EQ(test, !!out.has_data_loss, !mode3);
	KUNIT_EXPECT_EQ(test, !!st.laps, !mode3);
	for (i = 0; i < n; i++) {
		struct drm_amdgpu_spm_buffer_header h;
		bool last = i == n - 1;

		spm_env_read_header(test, buf, i * SZ_256K, &h);
		KUNIT_EXPECT_EQ_MSG(test, !!(h.has_data_loss & AMDGPU_SPM_LOSS_SAMPLES),
				    last && !mode3, "xcc %u", i);
		memset(&chk, 0, sizeof(chk));
		spm_model_check_share(test, buf, i * SZ_256K, h.bytes_copied, i, &chk);
		KUNIT_EXPECT_FALSE(test, chk.bad);
		KUNIT_EXPECT_FALSE(test, chk.order);
		if (!last)
			KUNIT_EXPECT_EQ(test, h.bytes_copied, 8 * SAMPLE);
		KUNIT_EXPECT_EQ_MSG(test, e->m->x[i].stalls ? 1 : 0, last && mode3,
				    "xcc %u", i);
		if (!last || mode3) {
			/* Everything the RLC wrote, with no gap */
			KUNIT_EXPECT_EQ_MSG(test, chk.gaps, 0, "xcc %u", i);
			KUNIT_EXPECT_EQ_MSG(test, chk.lines * LINE, e->m->x[i].emitted,
					    "xcc %u", i);
		}
	}
	KUNIT_EXPECT_EQ(test, spm_env_op(e, e->a, AMDGPU_SPM_OP_RELEASE), 0);
}

/* ---- reset and resume ---- */

static void wait_programmed(struct kunit *test, struct spm_env *e, unsigned int n)
{
	unsigned long end = jiffies + msecs_to_jiffies(AMDGPU_KUNIT_WAIT_MS);
	unsigned int i;

	do {
		for (i = 0; i < n; i++)
			if (!ring_base(e, i) ||
			    (vmid_of(e, i)) !=
			    SPM_MODEL_VMID)
				break;
		if (i == n)
			break;
		usleep_range(5000, 6000);
	} while (time_before(jiffies, end));
	if (i < n) {
		KUNIT_FAIL(test, "SPM not programmed again");
		return;
	}
	/*
	 * The worker programs every XCC and then starts each (its start
	 * resets SPM_PERFMON_STATE, which would undo a profiler's start
	 * made in between), all under the drain lock, which each pass
	 * takes to count itself: once one more pass has begun, that step
	 * is over. No sleep can promise that on a loaded host.
	 */
	KUNIT_EXPECT_TRUE(test, spm_env_wait_passes(test, e, 0, 1, AMDGPU_KUNIT_WAIT_MS));
}

/*
 * A GPU reset: while it holds the reset domain's semaphore, the manager
 * touches no register; the RLC comes back with its reset values and its
 * resume tells the manager, which programs the rings again and reports the
 * gap as loss.
 */
static void spm_hw_reset_reprograms(struct kunit *test)
{
	unsigned int n = nxcc_of(test), i, nlog;
	struct spm_env *e = hw_env(test, n, SZ_64K);
	struct amdgpu_device *adev = e->adev;
	unsigned long buf = spm_env_user_buf(test, n * SZ_64K, MAP_PRIVATE | MAP_ANONYMOUS);
	struct drm_amdgpu_spm_args out;
	struct drm_amdgpu_spm_buffer_header h;

	amdgpu_spm_backstop_ms = 5;
	KUNIT_ASSERT_EQ(test, spm_env_op(e, e->a, AMDGPU_SPM_OP_ACQUIRE), 0);
	KUNIT_ASSERT_EQ(test, spm_env_set_buf(e, e->a, buf, n * SZ_64K, 0, NULL), 0);
	for (i = 0; i < n; i++) {
		spm_model_profiler_start(e->m, i, SAMPLE);
		spm_model_emit(e->m, i, 2 * SAMPLE);
	}

	/* The reset: as amdgpu_device_lock_reset_domain() takes it */
	down_write(&adev->reset_domain->sem);
	nlog = e->m->nlog;
	/* The worker runs (passes counted, not a sleep) and keeps off the registers */
	KUNIT_EXPECT_TRUE(test, spm_env_wait_passes(test, e, 0, 3, AMDGPU_KUNIT_WAIT_MS));
	KUNIT_EXPECT_EQ(test, e->m->nlog, nlog);
	spm_model_reset(e->m);
	atomic_inc(&adev->gpu_reset_counter);
	KUNIT_ASSERT_EQ(test, adev->gfx.rlc.funcs->resume(adev), 0);
	up_write(&adev->reset_domain->sem);

	wait_programmed(test, e, n);
	/* The profiler counts again; data flows into the same buffer */
	for (i = 0; i < n; i++) {
		KUNIT_EXPECT_EQ(test, ring_mode(e, i), 0);
		spm_model_profiler_start(e->m, i, SAMPLE);
		KUNIT_EXPECT_EQ(test, spm_model_emit(e->m, i, SAMPLE), SAMPLE);
	}
	KUNIT_ASSERT_EQ(test, spm_env_set_buf(e, e->a, 0, 0, 0, &out), 0);
	KUNIT_EXPECT_NE(test, out.has_data_loss, 0);
	for (i = 0; i < n; i++) {
		spm_env_read_header(test, buf, i * SZ_64K, &h);
		KUNIT_EXPECT_EQ(test, h.bytes_copied, 3 * SAMPLE);
		KUNIT_EXPECT_NE(test, h.has_data_loss, 0);
	}
	expect_clean(test, e, n);
	KUNIT_EXPECT_EQ(test, spm_env_op(e, e->a, AMDGPU_SPM_OP_RELEASE), 0);
}

/* Resume from suspend: no register access while suspended, then again */
static void spm_hw_resume_reprograms(struct kunit *test)
{
	unsigned int n = nxcc_of(test), i, nlog;
	struct spm_env *e = hw_env(test, n, SZ_64K);
	struct amdgpu_device *adev = e->adev;
	unsigned long buf = spm_env_user_buf(test, n * SZ_64K, MAP_PRIVATE | MAP_ANONYMOUS);

	amdgpu_spm_backstop_ms = 5;
	KUNIT_ASSERT_EQ(test, spm_env_op(e, e->a, AMDGPU_SPM_OP_ACQUIRE), 0);
	KUNIT_ASSERT_EQ(test, spm_env_set_buf(e, e->a, buf, n * SZ_64K, 0, NULL), 0);
	adev->in_suspend = true;
	spm_model_reset(e->m);
	nlog = e->m->nlog;
	KUNIT_ASSERT_EQ(test, adev->gfx.rlc.funcs->resume(adev), 0);
	KUNIT_EXPECT_TRUE(test, spm_env_wait_passes(test, e, 0, 3, AMDGPU_KUNIT_WAIT_MS));
	/* Only RLC resume's own writes: the manager waits for the resume */
	for (i = 0; i < n; i++) {
		KUNIT_EXPECT_EQ(test, ring_base(e, i), 0);
		KUNIT_EXPECT_LT(test, spm_model_find_write(e->m, i, SPM_R_BASE_LO, nlog), 0);
	}
	adev->in_suspend = false;
	wait_programmed(test, e, n);
	for (i = 0; i < n; i++) {
		spm_model_profiler_start(e->m, i, SAMPLE);
		KUNIT_EXPECT_EQ(test, spm_model_emit(e->m, i, SAMPLE), SAMPLE);
	}
	expect_clean(test, e, n);
	KUNIT_EXPECT_EQ(test, spm_env_op(e, e->a, AMDGPU_SPM_OP_RELEASE), 0);
}

/*
 * While the profiler owns an XCC, RLC resume writes nothing but the SPM
 * VMID into SPM_VMID, and graphics (update_spm_vmid) nothing at all;
 * without an acquisition graphics writes it, and parks it (RLC init's
 * call with 0xf, a KFD VMID, included).
 */
static void spm_hw_rlc_resume_keeps_vmid(struct kunit *test)
{
	unsigned int n = nxcc_of(test), i;
	struct spm_env *e = hw_env(test, n, SZ_64K);
	struct amdgpu_device *adev = e->adev;
	int nlog;

	KUNIT_ASSERT_EQ(test, spm_env_op(e, e->a, AMDGPU_SPM_OP_ACQUIRE), 0);
	nlog = e->m->nlog;
	adev->in_suspend = true;	/* keep the worker off meanwhile */
	KUNIT_ASSERT_EQ(test, adev->gfx.rlc.funcs->resume(adev), 0);
	for (i = 0; i < n; i++) {
		KUNIT_EXPECT_TRUE(test, vmid_writes_only(e, i, nlog, SPM_MODEL_VMID));
		KUNIT_EXPECT_EQ(test, vmid_of(e, i),
				SPM_MODEL_VMID);
	}
	nlog = e->m->nlog;
	if (adev->gfx.rlc.funcs->update_spm_vmid)
		adev->gfx.rlc.funcs->update_spm_vmid(adev, NULL, 0xf);
	for (i = 0; i < n; i++)
		KUNIT_EXPECT_LT(test, spm_model_find_write(e->m, i, SPM_R_MC_CNTL, nlog), 0);
	adev->in_suspend = false;
	KUNIT_EXPECT_EQ(test, spm_env_op(e, e->a, AMDGPU_SPM_OP_RELEASE), 0);
	/* Without an acquisition they do write it: parked, not 0xf (KFD's) */
	for (i = 0; i < n; i++)
		spm_model_write(e->m, i, SPM_R_MC_CNTL, 7);
	adev->gfx.rlc.funcs->update_spm_vmid(adev, NULL, 0xf);
	for (i = 0; i < n; i++)
		KUNIT_EXPECT_EQ(test, vmid_of(e, i),
				SPM_MODEL_VMID);
}

/*
 * RLC resume parks SPM_VMID at the SPM VMID on every XCC (its reset value
 * is 0 in gc_9_0_default.h; on GC 9.4.3 the reading's), and on GC 9.4.3
 * switches the SPM clock on.
 */
static void spm_hw_resume_parks_vmid(struct kunit *test)
{
	unsigned int n = nxcc_of(test), i;
	struct spm_env *e = hw_env(test, n, SZ_64K);

	spm_model_reset(e->m);
	/* At the reset value (of the reading), which is not the SPM VMID */
	for (i = 0; i < n; i++) {
		KUNIT_ASSERT_EQ(test, vmid_of(e, i),
				e->m->l->mc_cntl_default & e->m->l->vmid_mask);
		KUNIT_ASSERT_NE(test, vmid_of(e, i), SPM_MODEL_VMID);
	}
	KUNIT_ASSERT_EQ(test, e->adev->gfx.rlc.funcs->resume(e->adev), 0);
	for (i = 0; i < n; i++) {
		KUNIT_EXPECT_EQ_MSG(test, vmid_of(e, i),
				    SPM_MODEL_VMID, "xcc %u", i);
		if (e->m->l->clk_mask)
			KUNIT_EXPECT_EQ(test, reg(e, i, SPM_R_CLK_CNTL) & e->m->l->clk_mask,
					e->m->l->clk_mask);
	}
}

/*
 * A queue reset or a soft recovery counts in the device's reset counter
 * but leaves the RLC alone: SPM streams on, untouched and without loss.
 */
static void spm_hw_queue_reset_keeps_streaming(struct kunit *test)
{
	unsigned int n = nxcc_of(test), i, nlog;
	struct spm_env *e = hw_env(test, n, SZ_64K);
	unsigned long buf = spm_env_user_buf(test, n * SZ_64K, MAP_PRIVATE | MAP_ANONYMOUS);
	struct drm_amdgpu_spm_args out;

	amdgpu_spm_backstop_ms = 5;
	KUNIT_ASSERT_EQ(test, spm_env_op(e, e->a, AMDGPU_SPM_OP_ACQUIRE), 0);
	KUNIT_ASSERT_EQ(test, spm_env_set_buf(e, e->a, buf, n * SZ_64K, 0, NULL), 0);
	for (i = 0; i < n; i++)
		spm_model_profiler_start(e->m, i, SAMPLE);
	nlog = e->m->nlog;
	/* What amdgpu_job_timedout() does after a successful ring reset */
	atomic_inc(&e->adev->gpu_reset_counter);
	KUNIT_EXPECT_TRUE(test, spm_env_wait_passes(test, e, 0, 3, AMDGPU_KUNIT_WAIT_MS));
	for (i = 0; i < n; i++) {
		KUNIT_EXPECT_LT(test,
				spm_model_find_write(e->m, i, SPM_R_CP_PERFMON_CNTL, nlog), 0);
		KUNIT_EXPECT_EQ(test, spm_model_emit(e->m, i, SAMPLE), SAMPLE);
	}
	KUNIT_ASSERT_EQ(test, spm_env_set_buf(e, e->a, 0, 0, 0, &out), 0);
	KUNIT_EXPECT_EQ(test, out.has_data_loss, 0);
	KUNIT_EXPECT_EQ(test, out.bytes_copied, n * SAMPLE);
	expect_clean(test, e, n);
	KUNIT_EXPECT_EQ(test, spm_env_op(e, e->a, AMDGPU_SPM_OP_RELEASE), 0);
}

struct releaser {
	struct kunit *test;
	struct spm_env *e;
	struct completion done;
	bool started;
	int ret;
};

static int releaser_fn(void *data)
{
	struct releaser *rl = data;

	current->kunit_test = rl->test;
	WRITE_ONCE(rl->started, true);
	rl->ret = spm_env_op(rl->e, rl->e->a, AMDGPU_SPM_OP_RELEASE);
	complete(&rl->done);
	while (!kthread_should_stop())
		schedule_timeout_interruptible(1);
	return 0;
}

/*
 * Wait until the releaser @t has finished, or sleeps inside RELEASE (seen
 * asleep on two polls in a row, so not a passing lock): only then does
 * "not finished" say that RELEASE waits. A sleep of a fixed time says
 * nothing on a host that has not run the thread yet.
 */
static bool releaser_settled(struct releaser *rl, struct task_struct *t)
{
	unsigned long end = jiffies + msecs_to_jiffies(AMDGPU_KUNIT_WAIT_MS);
	unsigned int asleep = 0;

	while (time_before(jiffies, end)) {
		if (completion_done(&rl->done))
			return true;
		asleep = READ_ONCE(rl->started) && !task_is_running(t) ? asleep + 1 : 0;
		if (asleep == 2)
			return true;
		usleep_range(1000, 2000);
	}
	return false;
}

/*
 * RELEASE right after a GPU reset, before the worker programmed the rings
 * again: RLC resume parked every XCC on the empty table, and release must
 * still stop the hardware and give it back before it frees the rings.
 */
static void spm_hw_release_after_reset(struct kunit *test)
{
	unsigned int n = nxcc_of(test), i, nlog;
	struct spm_env *e = hw_env(test, n, SZ_64K);
	struct amdgpu_device *adev = e->adev;
	unsigned long buf = spm_env_user_buf(test, n * SZ_64K, MAP_PRIVATE | MAP_ANONYMOUS);
	struct releaser rl = { .test = test, .e = e };
	struct task_struct *t;

	KUNIT_ASSERT_EQ(test, spm_env_op(e, e->a, AMDGPU_SPM_OP_ACQUIRE), 0);
	KUNIT_ASSERT_EQ(test, spm_env_set_buf(e, e->a, buf, n * SZ_64K, 0, NULL), 0);
	init_completion(&rl.done);

	down_write(&adev->reset_domain->sem);
	spm_model_reset(e->m);
	atomic_inc(&adev->gpu_reset_counter);
	KUNIT_ASSERT_EQ(test, adev->gfx.rlc.funcs->resume(adev), 0);
	nlog = e->m->nlog;
	t = kthread_run(releaser_fn, &rl, "spm-release");
	KUNIT_ASSERT_FALSE(test, IS_ERR(t));
	/* Release waits for the worker, which waits for the reset */
	KUNIT_EXPECT_TRUE(test, releaser_settled(&rl, t));
	KUNIT_EXPECT_FALSE(test, completion_done(&rl.done));
	up_write(&adev->reset_domain->sem);
	KUNIT_EXPECT_TRUE(test, amdgpu_kunit_wait(&rl.done));
	kthread_stop(t);
	KUNIT_EXPECT_EQ(test, rl.ret, 0);
	for (i = 0; i < n; i++) {
		KUNIT_EXPECT_GE(test,
				spm_model_find_write(e->m, i, SPM_R_CP_PERFMON_CNTL, nlog), 0);
		KUNIT_EXPECT_EQ_MSG(test, vmid_of(e, i),
				    SPM_MODEL_VMID, "xcc %u", i);
		KUNIT_EXPECT_EQ(test, ring_base(e, i), 0);
	}
	KUNIT_EXPECT_EQ(test, e->m->allocs, 0);
}

struct resetter {
	struct amdgpu_device *adev;
	struct completion held;
	u64 up_ns;
};

/* A GPU reset that holds the reset domain for 50 ms */
static int resetter_fn(void *data)
{
	struct resetter *rs = data;

	down_write(&rs->adev->reset_domain->sem);
	complete(&rs->held);
	msleep(50);
	WRITE_ONCE(rs->up_ns, ktime_get_ns());
	up_write(&rs->adev->reset_domain->sem);
	while (!kthread_should_stop())
		schedule_timeout_interruptible(1);
	return 0;
}

/*
 * The first SET_DEST_BUF returns only once the hardware streams into the
 * buffer: a profiler starts counting right after it, which a late start
 * (a reset held the device meanwhile) would reset again.
 */
static void spm_hw_first_buffer_waits_for_start(struct kunit *test)
{
	unsigned int n = nxcc_of(test), i;
	struct spm_env *e = hw_env(test, n, SZ_64K);
	unsigned long buf = spm_env_user_buf(test, n * SZ_64K, MAP_PRIVATE | MAP_ANONYMOUS);
	struct resetter rs = { .adev = e->adev };
	struct task_struct *t;
	u64 back;

	KUNIT_ASSERT_EQ(test, spm_env_op(e, e->a, AMDGPU_SPM_OP_ACQUIRE), 0);
	init_completion(&rs.held);
	t = kthread_run(resetter_fn, &rs, "spm-reset");
	KUNIT_ASSERT_FALSE(test, IS_ERR(t));
	wait_for_completion(&rs.held);
	KUNIT_EXPECT_EQ(test, spm_env_set_buf(e, e->a, buf, n * SZ_64K, 0, NULL), 0);
	back = ktime_get_ns();
	kthread_stop(t);
	KUNIT_EXPECT_GE(test, back, READ_ONCE(rs.up_ns));
	for (i = 0; i < n; i++) {
		KUNIT_EXPECT_EQ(test, spm_state(e, i), SPM_MODEL_DISABLE_AND_RESET);
		spm_model_profiler_start(e->m, i, SAMPLE);
		KUNIT_EXPECT_EQ(test, spm_model_emit(e->m, i, SAMPLE), SAMPLE);
	}
	expect_clean(test, e, n);
	KUNIT_EXPECT_EQ(test, spm_env_op(e, e->a, AMDGPU_SPM_OP_RELEASE), 0);
}

/*
 * After unplug, release still stops the hardware and parks SPM_VMID when
 * the device is there (unbind, module unload: it still streams into the
 * rings), but not after a surprise removal.
 */
static void spm_hw_release_unplugged(struct kunit *test)
{
	unsigned int n = nxcc_of(test), i, nlog;
	struct spm_env *e = hw_env(test, n, SZ_64K);
	struct drm_device *drm = adev_to_drm(e->adev);
	unsigned long buf = spm_env_user_buf(test, n * SZ_64K, MAP_PRIVATE | MAP_ANONYMOUS);

	KUNIT_ASSERT_EQ(test, spm_env_op(e, e->a, AMDGPU_SPM_OP_ACQUIRE), 0);
	KUNIT_ASSERT_EQ(test, spm_env_set_buf(e, e->a, buf, n * SZ_64K, 0, NULL), 0);
	/* What drm_dev_unplug() does to drm_dev_enter() */
	drm->unplugged = true;
	KUNIT_EXPECT_EQ(test, spm_env_op(e, e->a, AMDGPU_SPM_OP_RELEASE), 0);
	drm->unplugged = false;
	for (i = 0; i < n; i++) {
		KUNIT_EXPECT_EQ(test, vmid_of(e, i),
				SPM_MODEL_VMID);
		KUNIT_EXPECT_EQ(test, ring_base(e, i), 0);
	}
	KUNIT_EXPECT_EQ(test, e->m->allocs, 0);

	/* Surprise removal: no register is touched, the rings still go */
	KUNIT_ASSERT_EQ(test, spm_env_op(e, e->a, AMDGPU_SPM_OP_ACQUIRE), 0);
	KUNIT_ASSERT_EQ(test, spm_env_set_buf(e, e->a, buf, n * SZ_64K, 0, NULL), 0);
	nlog = e->m->nlog;
	drm->unplugged = true;
	e->adev->pdev->error_state = pci_channel_io_perm_failure;
	KUNIT_EXPECT_EQ(test, spm_env_op(e, e->a, AMDGPU_SPM_OP_RELEASE), 0);
	e->adev->pdev->error_state = pci_channel_io_normal;
	drm->unplugged = false;
	KUNIT_EXPECT_EQ(test, e->m->nlog, nlog);
	KUNIT_EXPECT_EQ(test, e->m->allocs, 0);
}

/*
 * The ring check runs while programmed too (acquired, no buffer yet), and
 * covers SPM_VMID: a command stream that points the RLC elsewhere, or
 * selects another VMID, gets the partition's SPM taken back.
 */
static void spm_hw_tamper_programmed(struct kunit *test)
{
	unsigned int n = nxcc_of(test);
	struct spm_env *e = hw_env(test, n, SZ_64K);
	unsigned long buf = spm_env_user_buf(test, n * SZ_64K, MAP_PRIVATE | MAP_ANONYMOUS);

	amdgpu_spm_backstop_ms = 5;
	KUNIT_ASSERT_EQ(test, spm_env_op(e, e->a, AMDGPU_SPM_OP_ACQUIRE), 0);
	spm_model_write(e->m, n - 1, SPM_R_BASE_LO, 0x1000);
	/* The whole partition is given back: XCC 0's ring goes too */
	amdgpu_kunit_poll(!ring_base(e, 0));
	KUNIT_EXPECT_EQ(test, ring_base(e, 0), 0);
	KUNIT_EXPECT_EQ(test, vmid_of(e, 0),
			SPM_MODEL_VMID);
	KUNIT_EXPECT_EQ(test, spm_env_set_buf(e, e->a, buf, n * SZ_64K, 0, NULL), -EIO);
	KUNIT_EXPECT_EQ(test, spm_env_op(e, e->a, AMDGPU_SPM_OP_RELEASE), 0);

	/* Streaming, SPM_VMID changed */
	KUNIT_ASSERT_EQ(test, spm_env_op(e, e->a, AMDGPU_SPM_OP_ACQUIRE), 0);
	KUNIT_ASSERT_EQ(test, spm_env_set_buf(e, e->a, buf, n * SZ_64K, 0, NULL), 0);
	spm_model_write(e->m, 0, SPM_R_MC_CNTL, 5);
	amdgpu_kunit_poll(!ring_base(e, 0));
	KUNIT_EXPECT_EQ(test, ring_base(e, 0), 0);
	KUNIT_EXPECT_EQ(test, spm_env_set_buf(e, e->a, 0, 0, 0, NULL), -EIO);
	KUNIT_EXPECT_EQ(test, spm_env_op(e, e->a, AMDGPU_SPM_OP_RELEASE), 0);
}

/* ---- SPM_VMID and graphics jobs ---- */

static const struct amdgpu_ring_funcs compute_ring_funcs = {
	.type = AMDGPU_RING_TYPE_COMPUTE,
};

static const struct amdgpu_ring_funcs sdma_ring_funcs = {
	.type = AMDGPU_RING_TYPE_SDMA,
};

/*
 * amdgpu_vm_flush() calls update_spm_vmid for every job of the reserved
 * VMID and, after a GPU reset, for the first job of every VMID. Without a
 * graphics client's reservation for SPM (AMDGPU_VM_OP_RESERVE_VMID) an XCC
 * stays parked whatever the job; with one, the jobs of the reserved VMID
 * select it, other jobs leave it, and the end of the reservation parks it
 * again before the VMID goes back to amdgpu_ids. A job on an XCC that the
 * profiler owns writes nothing there; SDMA jobs (xcc_id 0) never write.
 */
static void spm_hw_vmid_gate(struct kunit *test)
{
	unsigned int n = nxcc_of(test);
	struct spm_env *e = hw_env(test, n, SZ_64K);
	struct amdgpu_device *adev = e->adev;
	struct amdgpu_ring ring = { .adev = adev };
	struct drm_file *p1 = e->a, *gfx;
	unsigned int i, owned = n > 1 ? n - 1 : 0;
	struct amdgpu_vmid_mgr *id_mgr;
	u32 rsv;
	int nlog;

	if (n > 1) {
		/* Two partitions; the profiler takes the last XCC only */
		spm_env_two_partitions(test, e, GENMASK(n - 2, 0), BIT(n - 1));
		p1 = amdgpu_kunit_helper_alloc_file(test, adev, 1);
	}
	/*
	 * Nobody profiles. After a GPU reset the first job of every ring calls
	 * update_spm_vmid (amdgpu_vmid_had_gpu_reset() in amdgpu_vm_flush());
	 * an SDMA job must leave SPM_VMID of XCC 0 alone.
	 */
	ring.funcs = &sdma_ring_funcs;
	ring.xcc_id = 0;
	adev->gfx.rlc.funcs->update_spm_vmid(adev, &ring, 9);
	for (i = 0; i < n; i++)
		KUNIT_EXPECT_EQ_MSG(test, vmid_of(e, i),
				    SPM_MODEL_VMID, "idle, sdma ring, xcc %u", i);
	/*
	 * A kernel job's VMID is 0, the GART; after a reset its flush
	 * programs SPM_VMID too: the SPM VMID goes there instead
	 */
	ring.funcs = &compute_ring_funcs;
	for (i = 0; i < n; i++) {
		ring.xcc_id = i;
		adev->gfx.rlc.funcs->update_spm_vmid(adev, &ring, 0);
		KUNIT_EXPECT_EQ_MSG(test, vmid_of(e, i), SPM_MODEL_VMID,
				    "kernel job, xcc %u", i);
		/* A graphics process's VMID of amdgpu_ids, after a reset */
		adev->gfx.rlc.funcs->update_spm_vmid(adev, &ring, 1);
		KUNIT_EXPECT_EQ_MSG(test, vmid_of(e, i), SPM_MODEL_VMID,
				    "job of VMID 1, xcc %u", i);
	}

	/* A graphics client reserves SPM on partition 0 (XCC 0 among them) */
	amdgpu_vmid_mgr_init(adev);
	gfx = amdgpu_kunit_helper_alloc_file(test, adev, 0);
	KUNIT_ASSERT_EQ(test, amdgpu_spm_gfx_vmid_reserve(adev, gfx), 0);
	id_mgr = &adev->vm_manager.id_mgr[AMDGPU_GFXHUB(0)];
	KUNIT_ASSERT_NOT_NULL(test, id_mgr->reserved);
	rsv = id_mgr->reserved - id_mgr->ids;
	KUNIT_ASSERT_NE(test, rsv, SPM_MODEL_VMID);
	ring.xcc_id = 0;
	adev->gfx.rlc.funcs->update_spm_vmid(adev, &ring, rsv);
	KUNIT_EXPECT_EQ(test, vmid_of(e, 0), rsv);
	/* Another VMID's first job after a reset, a kernel job: they leave it */
	adev->gfx.rlc.funcs->update_spm_vmid(adev, &ring, rsv == 1 ? 2 : 1);
	KUNIT_EXPECT_EQ(test, vmid_of(e, 0), rsv);
	adev->gfx.rlc.funcs->update_spm_vmid(adev, &ring, 0);
	KUNIT_EXPECT_EQ(test, vmid_of(e, 0), rsv);
	/* The reservation ends: parked before the VMID is anybody's again */
	amdgpu_spm_gfx_vmid_unreserve(adev, gfx);
	KUNIT_EXPECT_EQ(test, vmid_of(e, 0), SPM_MODEL_VMID);
	KUNIT_EXPECT_NULL(test, id_mgr->reserved);
	adev->gfx.rlc.funcs->update_spm_vmid(adev, &ring, rsv);
	KUNIT_EXPECT_EQ(test, vmid_of(e, 0), SPM_MODEL_VMID);
	amdgpu_vmid_mgr_fini(adev);

	/* An SDMA job leaves even a value it did not write */
	spm_model_write(e->m, 0, SPM_R_MC_CNTL, 7);
	ring.funcs = &sdma_ring_funcs;
	adev->gfx.rlc.funcs->update_spm_vmid(adev, &ring, 9);
	KUNIT_EXPECT_EQ(test, vmid_of(e, 0), 7);
	spm_model_write(e->m, 0, SPM_R_MC_CNTL, SPM_MODEL_VMID);

	KUNIT_ASSERT_EQ(test, spm_env_op(e, p1, AMDGPU_SPM_OP_ACQUIRE), 0);
	for (i = 0; i < n; i++)
		KUNIT_ASSERT_EQ(test, vmid_of(e, i), SPM_MODEL_VMID);

	ring.funcs = &compute_ring_funcs;
	nlog = e->m->nlog;
	for (i = 0; i < n; i++) {
		ring.xcc_id = i;
		adev->gfx.rlc.funcs->update_spm_vmid(adev, &ring, 5);
		KUNIT_EXPECT_EQ_MSG(test, vmid_of(e, i), SPM_MODEL_VMID,
				    "compute ring of xcc %u", i);
	}
	/* Not even the same value: the profiler's XCC is not written */
	KUNIT_EXPECT_LT(test, spm_model_find_write(e->m, owned, SPM_R_MC_CNTL, nlog), 0);
	ring.funcs = &sdma_ring_funcs;
	ring.xcc_id = 0;
	for (i = 0; i < n; i++)
		spm_model_write(e->m, i, SPM_R_MC_CNTL,
				i == owned ? SPM_MODEL_VMID : 7);
	adev->gfx.rlc.funcs->update_spm_vmid(adev, &ring, 9);
	for (i = 0; i < n; i++)
		KUNIT_EXPECT_EQ_MSG(test, vmid_of(e, i),
				    i == owned ? SPM_MODEL_VMID : 7,
				    "sdma ring, xcc %u", i);
	KUNIT_EXPECT_EQ(test, spm_env_op(e, p1, AMDGPU_SPM_OP_RELEASE), 0);
	adev->xcp_mgr = NULL;
}

/* ---- the ring registers behind the driver's back ---- */

/*
 * A command stream rewrites the ring base while SPM runs (the registers
 * are in the UCONFIG range, see profiler.rst): the next drain notices,
 * stops SPM and gives SPM_VMID back, and SET_DEST_BUF fails with -EIO.
 */
static void spm_hw_tamper_stops(struct kunit *test)
{
	struct spm_env *e = hw_env(test, 1, SZ_64K);
	unsigned long buf = spm_env_user_buf(test, SZ_64K, MAP_PRIVATE | MAP_ANONYMOUS);

	amdgpu_spm_backstop_ms = 5;
	KUNIT_ASSERT_EQ(test, spm_env_op(e, e->a, AMDGPU_SPM_OP_ACQUIRE), 0);
	KUNIT_ASSERT_EQ(test, spm_env_set_buf(e, e->a, buf, SZ_64K, 0, NULL), 0);
	spm_model_profiler_start(e->m, 0, SAMPLE);
	spm_model_write(e->m, 0, SPM_R_BASE_LO, 0x1000);
	/* Given back: no ring (the base is not 0 before) */
	amdgpu_kunit_poll(!ring_base(e, 0));
	KUNIT_EXPECT_EQ(test, ring_base(e, 0), 0);
	KUNIT_EXPECT_EQ(test, vmid_of(e, 0),
			SPM_MODEL_VMID);
	KUNIT_EXPECT_NE(test, spm_state(e, 0), SPM_MODEL_START_COUNTING);
	KUNIT_EXPECT_EQ(test, spm_env_set_buf(e, e->a, buf, SZ_64K, 0, NULL), -EIO);
	KUNIT_EXPECT_EQ(test, spm_env_op(e, e->a, AMDGPU_SPM_OP_RELEASE), 0);
}

/*
 * Should a profiler's command stream select ring mode 3 (stall when full,
 * interrupt at the threshold), the threshold the hooks program keeps the
 * pre-GC 12 stall at the threshold away as long as the drain keeps up;
 * the threshold of the posted hooks (1) would stall at once.
 */
static void spm_hw_ring_mode_3_threshold(struct kunit *test)
{
	struct spm_env *e = hw_env(test, 1, SZ_64K);
	const struct spm_model_layout *l = e->m->l;
	unsigned long buf = spm_env_user_buf(test, SZ_64K, MAP_PRIVATE | MAP_ANONYMOUS);

	KUNIT_ASSERT_EQ(test, spm_env_op(e, e->a, AMDGPU_SPM_OP_ACQUIRE), 0);
	KUNIT_ASSERT_EQ(test, spm_env_set_buf(e, e->a, buf, SZ_64K, 0, NULL), 0);
	spm_model_profiler_start(e->m, 0, SAMPLE);
	spm_model_write(e->m, 0, SPM_R_PERFMON_CNTL, 3 << l->ring_mode_shift);
	KUNIT_EXPECT_EQ(test, spm_model_emit(e->m, 0, 4 * SAMPLE), 4 * SAMPLE);
	KUNIT_EXPECT_EQ(test, e->m->x[0].stalls, 0);
	/* The erratum, reproduced by the model with the posted threshold */
	spm_model_write(e->m, 0, SPM_R_THRESHOLD, 1);
	KUNIT_EXPECT_EQ(test, spm_model_emit(e->m, 0, SAMPLE), 0);
	KUNIT_EXPECT_EQ(test, e->m->x[0].stalls, 1);
	KUNIT_EXPECT_EQ(test, spm_env_op(e, e->a, AMDGPU_SPM_OP_RELEASE), 0);
}

/*
 * In ring mode 3, as aqlprofile selects it, an RLC that filled its ring
 * stalls; the drain that empties the ring must tell it so (RDPTR), and the
 * RLC then writes again, into the same stream: nothing of what it wrote
 * before or after is lost or out of order. The samples (93 lines; 22 of
 * them are the ring's data less a line) let an RLC that stops at RDPTR
 * come right up to it.
 */
static void spm_hw_ring_mode_3_writes_after_drain(struct kunit *test)
{
	struct spm_env *e = hw_env(test, 1, SZ_64K);
	const struct spm_model_layout *l = e->m->l;
	unsigned long buf0 = spm_env_user_buf(test, SZ_128K, MAP_PRIVATE | MAP_ANONYMOUS);
	unsigned long buf1 = spm_env_user_buf(test, SZ_128K, MAP_PRIVATE | MAP_ANONYMOUS);
	struct spm_model_check chk = {};
	struct drm_amdgpu_spm_buffer_header h;
	struct drm_amdgpu_spm_args out;
	const u32 sample = 93 * LINE;
	u32 before;

	/* Only the ioctls drain here */
	amdgpu_spm_backstop_ms = 60000;
	KUNIT_ASSERT_EQ(test, spm_env_op(e, e->a, AMDGPU_SPM_OP_ACQUIRE), 0);
	KUNIT_ASSERT_EQ(test, spm_env_set_buf(e, e->a, buf0, SZ_128K, 0, NULL), 0);
	spm_model_profiler_start(e->m, 0, sample);
	spm_model_write(e->m, 0, SPM_R_PERFMON_CNTL, 3 << l->ring_mode_shift);
	/* Twice the ring: it fills, then stalls */
	before = spm_model_emit(e->m, 0, 2 * SZ_64K);
	KUNIT_EXPECT_GT(test, before, 0);
	KUNIT_EXPECT_LT(test, before, SZ_64K);
	KUNIT_EXPECT_GT(test, e->m->x[0].stalls, 0);
	KUNIT_EXPECT_EQ(test, !!e->m->x[0].fulls, e->m->rd->stall_at);
	KUNIT_EXPECT_EQ(test, spm_model_emit(e->m, 0, sample), 0);

	/* The swap drains the ring into the first buffer */
	KUNIT_ASSERT_EQ(test, spm_env_set_buf(e, e->a, buf1, SZ_128K, 0, &out), 0);
	spm_env_read_header(test, buf0, 0, &h);
	KUNIT_EXPECT_EQ(test, h.bytes_copied, before);
	spm_model_check_share(test, buf0, 0, h.bytes_copied, 0, &chk);

	/* The RLC writes again */
	KUNIT_EXPECT_EQ(test, spm_model_emit(e->m, 0, 4 * sample), 4 * sample);
	KUNIT_ASSERT_EQ(test, spm_env_set_buf(e, e->a, 0, 0, 0, &out), 0);
	spm_env_read_header(test, buf1, 0, &h);
	KUNIT_EXPECT_EQ(test, h.bytes_copied, 4 * sample);
	spm_model_check_share(test, buf1, 0, h.bytes_copied, 0, &chk);
	KUNIT_EXPECT_FALSE(test, chk.bad);
	KUNIT_EXPECT_FALSE(test, chk.order);
	KUNIT_EXPECT_EQ(test, chk.gaps, 0);
	KUNIT_EXPECT_EQ(test, chk.lines * LINE, e->m->x[0].emitted);
	KUNIT_EXPECT_EQ(test, e->m->x[0].irqs, 0);
	KUNIT_EXPECT_EQ(test, spm_env_op(e, e->a, AMDGPU_SPM_OP_RELEASE), 0);
}

static int gfx_v9_4_3_init(struct kunit *test)
{
	test->priv = (void *)&spm_layout_gfx_v9_4_3;
	return 0;
}

static int gfx_v9_0_init(struct kunit *test)
{
	test->priv = (void *)&spm_layout_gfx_v9_0;
	return 0;
}

/* MI100: GC 9.4.1, amdgpu.noretry at its default */
static int gfx_v9_0_gc941_init(struct kunit *test)
{
	test->priv = (void *)spm_model_layout_gc941(test, false);
	return 0;
}

static int gfx_v9_4_3_reset_set_init(struct kunit *test)
{
	test->priv = (void *)spm_model_layout_gc943_reset_set(test);
	return 0;
}

static struct kunit_case gfx_v9_4_3_cases[] = {
	KUNIT_CASE(spm_hw_acquire_programs),
	KUNIT_CASE(spm_hw_start_programs),
	KUNIT_CASE_PARAM(spm_hw_release_gives_back, spm_model_reading_gen),
	KUNIT_CASE_PARAM_ATTR(spm_hw_stream_1, spm_model_reading_gen,
			      { .speed = KUNIT_SPEED_SLOW }),
	KUNIT_CASE_PARAM_ATTR(spm_hw_stream_4, spm_model_reading_gen,
			      { .speed = KUNIT_SPEED_SLOW }),
	KUNIT_CASE_PARAM_ATTR(spm_hw_stream_8, spm_model_reading_gen,
			      { .speed = KUNIT_SPEED_SLOW }),
	KUNIT_CASE_PARAM_ATTR(spm_hw_stream_timer, spm_model_reading_gen,
			      { .speed = KUNIT_SPEED_SLOW }),
	KUNIT_CASE_PARAM(spm_hw_overload_loss_is_per_xcc, spm_model_reading_gen),
	KUNIT_CASE(spm_hw_reset_reprograms),
	KUNIT_CASE(spm_hw_resume_reprograms),
	KUNIT_CASE(spm_hw_rlc_resume_keeps_vmid),
	KUNIT_CASE(spm_hw_vmid_gate),
	KUNIT_CASE(spm_hw_tamper_stops),
	KUNIT_CASE(spm_hw_resume_parks_vmid),
	KUNIT_CASE(spm_hw_queue_reset_keeps_streaming),
	KUNIT_CASE(spm_hw_release_after_reset),
	KUNIT_CASE(spm_hw_first_buffer_waits_for_start),
	KUNIT_CASE(spm_hw_release_unplugged),
	KUNIT_CASE(spm_hw_tamper_programmed),
	KUNIT_CASE_PARAM(spm_hw_ring_mode_3_threshold, spm_model_reading_gen),
	KUNIT_CASE_PARAM(spm_hw_ring_mode_3_writes_after_drain, spm_model_reading_gen),
	{}
};

static struct kunit_case gfx_v9_0_cases[] = {
	KUNIT_CASE(spm_hw_acquire_programs),
	KUNIT_CASE(spm_hw_start_programs),
	KUNIT_CASE_PARAM(spm_hw_release_gives_back, spm_model_reading_gen),
	KUNIT_CASE_PARAM_ATTR(spm_hw_stream_1, spm_model_reading_gen,
			      { .speed = KUNIT_SPEED_SLOW }),
	KUNIT_CASE_PARAM_ATTR(spm_hw_stream_timer, spm_model_reading_gen,
			      { .speed = KUNIT_SPEED_SLOW }),
	KUNIT_CASE_PARAM(spm_hw_overload_loss_is_per_xcc, spm_model_reading_gen),
	KUNIT_CASE(spm_hw_reset_reprograms),
	KUNIT_CASE(spm_hw_resume_reprograms),
	KUNIT_CASE(spm_hw_rlc_resume_keeps_vmid),
	KUNIT_CASE(spm_hw_vmid_gate),
	KUNIT_CASE(spm_hw_tamper_stops),
	KUNIT_CASE(spm_hw_resume_parks_vmid),
	KUNIT_CASE(spm_hw_queue_reset_keeps_streaming),
	KUNIT_CASE(spm_hw_release_after_reset),
	KUNIT_CASE(spm_hw_first_buffer_waits_for_start),
	KUNIT_CASE(spm_hw_release_unplugged),
	KUNIT_CASE(spm_hw_tamper_programmed),
	KUNIT_CASE_PARAM(spm_hw_ring_mode_3_threshold, spm_model_reading_gen),
	KUNIT_CASE_PARAM(spm_hw_ring_mode_3_writes_after_drain, spm_model_reading_gen),
	{}
};

/* What differs on MI100 is only the GC version and gfxhub's retry setting */
static struct kunit_case gfx_v9_0_gc941_cases[] = {
	KUNIT_CASE(spm_hw_acquire_programs),
	KUNIT_CASE(spm_hw_start_programs),
	KUNIT_CASE_PARAM(spm_hw_release_gives_back, spm_model_reading_gen),
	KUNIT_CASE_PARAM_ATTR(spm_hw_stream_1, spm_model_reading_gen,
			      { .speed = KUNIT_SPEED_SLOW }),
	KUNIT_CASE(spm_hw_reset_reprograms),
	KUNIT_CASE(spm_hw_resume_parks_vmid),
	KUNIT_CASE(spm_hw_vmid_gate),
	KUNIT_CASE(spm_hw_tamper_stops),
	KUNIT_CASE_PARAM(spm_hw_ring_mode_3_writes_after_drain, spm_model_reading_gen),
	{}
};

/*
 * GC 9.4.3 under the other reading of the reset values that no source
 * gives (spm_model_layout_gc943_reset_set()): the cases where a reset or
 * power-on leaves them
 */
static struct kunit_case gfx_v9_4_3_reset_set_cases[] = {
	KUNIT_CASE(spm_hw_acquire_programs),
	KUNIT_CASE(spm_hw_start_programs),
	KUNIT_CASE(spm_hw_reset_reprograms),
	KUNIT_CASE(spm_hw_resume_reprograms),
	KUNIT_CASE(spm_hw_rlc_resume_keeps_vmid),
	KUNIT_CASE(spm_hw_resume_parks_vmid),
	KUNIT_CASE(spm_hw_queue_reset_keeps_streaming),
	KUNIT_CASE(spm_hw_release_after_reset),
	{}
};

static struct kunit_suite gfx_v9_4_3_suite = {
	.name = "amdgpu_spm_gfx_v9_4_3",
	.init = gfx_v9_4_3_init,
	.test_cases = gfx_v9_4_3_cases,
};

static struct kunit_suite gfx_v9_0_suite = {
	.name = "amdgpu_spm_gfx_v9_0",
	.init = gfx_v9_0_init,
	.test_cases = gfx_v9_0_cases,
};

static struct kunit_suite gfx_v9_0_gc941_suite = {
	.name = "amdgpu_spm_gfx_v9_0_gc941",
	.init = gfx_v9_0_gc941_init,
	.test_cases = gfx_v9_0_gc941_cases,
};

static struct kunit_suite gfx_v9_4_3_reset_set_suite = {
	.name = "amdgpu_spm_gfx_v9_4_3_reset_set",
	.init = gfx_v9_4_3_reset_set_init,
	.test_cases = gfx_v9_4_3_reset_set_cases,
};

kunit_test_suites(&gfx_v9_4_3_suite, &gfx_v9_0_suite, &gfx_v9_0_gc941_suite,
		  &gfx_v9_4_3_reset_set_suite);
