// SPDX-License-Identifier: GPL-2.0
/*
 * The parts of amdgpu_profiler's stream_cycles test that need no device:
 * the command streams that start and stop the SPM cycle counter, decoded
 * back, and the checker of the streamed buffers, run over fake buffers
 * with one thing wrong at a time, each of which it must catch (and over
 * good ones, which it must pass).
 */
#include <errno.h>
#include <string.h>

#include "../../../kselftest_harness.h"
#include "amdgpu_spm_stream.h"

/* ---- the streams, decoded ---- */

struct decoded {
	unsigned int writes;		/* register writes */
	uint32_t reg[64], val[64];	/* dword address, value */
	unsigned int flushes, mux_dw, semux_dw, nops;
	uint16_t mux[64];		/* global mux RAM entries written */
	uint16_t semux[64];		/* SE mux RAM entries written */
	bool bad;			/* a packet this decoder does not know */
};

/* PM4 type 3: count 29:16 (dwords after the header - 1), opcode 15:8 */
static void decode(const uint32_t *ib, int ndw, struct decoded *d)
{
	int i = 0, j;

	memset(d, 0, sizeof(*d));
	while (i < ndw) {
		uint32_t hdr = ib[i], op = (hdr >> 8) & 0xff;
		int count = (hdr >> 16) & 0x3fff;

		if (hdr == 0xffff1000) {	/* one-dword NOP */
			d->nops++;
			i++;
			continue;
		}
		if (hdr >> 30 != 3 || i + count + 2 > ndw) {
			d->bad = true;
			return;
		}
		if ((op == 0x79 || op == 0x76) && count == 1 && d->writes < 64) {
			d->reg[d->writes] = ib[i + 1] +
				(op == 0x79 ? 0xc000 : 0x2c00);
			d->val[d->writes++] = ib[i + 2];
		} else if (op == 0x46 && count == 0 && ib[i + 1] == 0x407) {
			d->flushes++;
		} else if (op == 0x37 && count >= 3 && ib[i + 2] == 0xdc9c &&
			   ib[i + 1] == (1u << 16 | 1u << 20)) {
			/* RLC_SPM_GLOBAL_MUXSEL_DATA, one address, confirmed */
			for (j = 0; j < count - 2 && d->mux_dw < 32; j++) {
				d->mux[2 * d->mux_dw] = ib[i + 4 + j];
				d->mux[2 * d->mux_dw++ + 1] = ib[i + 4 + j] >> 16;
			}
		} else if (op == 0x37 && count >= 3 && ib[i + 2] == 0xdc86 &&
			   ib[i + 1] == (1u << 16 | 1u << 20)) {
			/* RLC_SPM_SE_MUXSEL_DATA */
			for (j = 0; j < count - 2 && d->semux_dw < 32; j++) {
				d->semux[2 * d->semux_dw] = ib[i + 4 + j];
				d->semux[2 * d->semux_dw++ + 1] = ib[i + 4 + j] >> 16;
			}
		} else {
			d->bad = true;
			return;
		}
		i += count + 2;
	}
}

/* The last value written to @reg, or -1 */
static int64_t last_write(const struct decoded *d, uint32_t reg)
{
	int64_t v = -1;
	unsigned int i;

	for (i = 0; i < d->writes; i++)
		if (d->reg[i] == reg)
			v = d->val[i];
	return v;
}

static bool wrote(const struct decoded *d, uint32_t reg)
{
	return last_write(d, reg) >= 0;
}

/*
 * Registers the kernel owns (gc_9_*_offset.h, BASE_IDX 1): ring base and
 * size, read pointer, segment threshold, SPM_MC_CNTL, SPM_INT_CNTL
 */
static const uint32_t kernel_regs[] = {
	0xdc81, 0xdc82, 0xdc83, 0xdc9d, 0xdc9e, 0xec71, 0xec72,
};

FIXTURE(streams) {
	uint32_t ib[512];
};

FIXTURE_VARIANT(streams) {
	uint32_t gc;
	bool clk;	/* RLC_PERFMON_CLK_CNTL: not on 9.4.3 */
	bool core1;	/* SEGMENT_SIZE_CORE1: 8-SE parts */
	/*
	 * aqlprofile's RLC_SPM_PERFMON_SAMPLE_DELAY_MAX and CPC sample delay
	 * for the part (rocprofiler-sdk lib/aqlprofile/core/gfx9_factory.h,
	 * gfx908/gfx90a/gfx940_factory.cpp)
	 */
	uint32_t delay_max, cpc_delay;
};

FIXTURE_VARIANT_ADD(streams, gc_9_4_1) { SPM_GC_9_4_1, true, true, 0x34, 0x30 };
FIXTURE_VARIANT_ADD(streams, gc_9_4_2) { SPM_GC_9_4_2, true, true, 0x3e, 0x36 };
FIXTURE_VARIANT_ADD(streams, gc_9_4_3) { SPM_GC_9_4_3, false, false, 0x27, 0x1f };

FIXTURE_SETUP(streams)
{
}

FIXTURE_TEARDOWN(streams)
{
}

TEST_F(streams, start)
{
	struct decoded d;
	unsigned int i;
	int n;

	n = spm_stream_build(variant->gc, true, self->ib, 512);
	ASSERT_GT(n, 0);
	EXPECT_EQ(0, n % 8);
	decode(self->ib, n, &d);
	ASSERT_FALSE(d.bad);
	/* interval 31:16, ring mode 13:12 = 0 */
	EXPECT_EQ(SPM_CYCLES_INTERVAL << 16, last_write(&d, 0xdc80));
	/* CNTR_SEL0 = CPC_PERF_SEL_ALWAYS_COUNT, SPM_MODE 16-bit clamp */
	EXPECT_EQ(0x00100000, last_write(&d, 0xd809));
	/* two global lines, no SE lines */
	EXPECT_EQ(0x1002, last_write(&d, 0xdc84));
	/*
	 * the global mux RAM: the timestamp, the counter where the decoder
	 * reads it, unused entries, and two 0xffff that end the RAM (two
	 * lines, 34 entries, 17 dwords); the SE RAM: its end entries only
	 */
	ASSERT_EQ(17u, d.mux_dw);
	for (i = 0; i < 34; i++)
		EXPECT_EQ(i < 4 ? 0xf0f0 : i == SPM_SLOT_CYCLES ? 0x0040 : 0xffff,
			  d.mux[i]) TH_LOG("mux RAM entry %u", i);
	ASSERT_EQ(1u, d.semux_dw);
	EXPECT_EQ(0xffff, d.semux[0]);
	EXPECT_EQ(0xffff, d.semux[1]);
	/* the sample delays: DELAY_MAX, CPC's under SE 0 SH 0 instance 0 */
	EXPECT_EQ(variant->delay_max, last_write(&d, 0xdca4));
	EXPECT_EQ(variant->cpc_delay, last_write(&d, 0xdc88));
	for (i = 1; i < d.writes; i++)
		if (d.reg[i] == 0xdc88)
			EXPECT_TRUE(d.reg[i - 1] == 0xc200 && d.val[i - 1] == 0)
				TH_LOG("CPC delay after GRBM_GFX_INDEX %#x", d.val[i - 1]);
	EXPECT_EQ(1, last_write(&d, 0x2e0b));
	/* SPM_PERFMON_STATE: stopped first, started last, never reset */
	EXPECT_EQ(0x20, d.val[1 + variant->clk]);
	EXPECT_EQ(0xd808, d.reg[1 + variant->clk]);
	EXPECT_EQ(0x10, last_write(&d, 0xd808));
	EXPECT_EQ(0xd808, d.reg[d.writes - 1]);
	EXPECT_EQ(variant->clk, wrote(&d, 0xdcbf));
	if (variant->clk)
		EXPECT_EQ(1, last_write(&d, 0xdcbf));
	EXPECT_EQ(variant->core1, wrote(&d, 0xdcaf));
	EXPECT_EQ(0xe0000000, last_write(&d, 0xc200));
	EXPECT_EQ(4u, d.flushes);
	for (i = 0; i < ARRAY_SIZE(kernel_regs); i++)
		EXPECT_FALSE(wrote(&d, kernel_regs[i]));
	EXPECT_EQ(-ENOSPC, spm_stream_build(variant->gc, true, self->ib, n - 1));
}

TEST_F(streams, stop)
{
	struct decoded d;
	int n;

	n = spm_stream_build(variant->gc, false, self->ib, 512);
	ASSERT_GT(n, 0);
	EXPECT_EQ(0, n % 8);
	decode(self->ib, n, &d);
	ASSERT_FALSE(d.bad);
	EXPECT_EQ(0x20, last_write(&d, 0xd808));
	EXPECT_EQ(variant->clk ? 0 : -1, last_write(&d, 0xdcbf));
	EXPECT_EQ(2u + variant->clk, d.writes);
}

TEST(streams_other_parts)
{
	static const uint32_t others[] = { 0, 0x090000, 0x090400, 0x090404,
					   0x090500, 0x0b0000 };
	uint32_t ib[512];
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(others); i++) {
		EXPECT_EQ(NULL, spm_stream_part(others[i]));
		EXPECT_EQ(-EOPNOTSUPP, spm_stream_build(others[i], true, ib, 512));
	}
	EXPECT_EQ(0, strcmp(spm_stream_part(SPM_GC_9_4_3), "MI300 (GC 9.4.3)"));
	/* 9.4.2 streams with a warning: aqlprofile refuses SPM there */
	EXPECT_NE(NULL, spm_stream_warning(SPM_GC_9_4_2));
	EXPECT_NE(NULL, strstr(spm_stream_warning(SPM_GC_9_4_2), "gfx90a"));
	EXPECT_EQ(NULL, spm_stream_warning(SPM_GC_9_4_1));
	EXPECT_EQ(NULL, spm_stream_warning(SPM_GC_9_4_3));
	/* the lower bound of the cycle count: where the perfmon clock is on */
	EXPECT_TRUE(spm_stream_cycles_exact(SPM_GC_9_4_1));
	EXPECT_TRUE(spm_stream_cycles_exact(SPM_GC_9_4_2));
	EXPECT_FALSE(spm_stream_cycles_exact(SPM_GC_9_4_3));
}

/* ---- the checker over fakes ---- */

#define FAKE_XCC	2
#define FAKE_FIRST_XCC	2	/* a partition's XCCs need not start at 0 */
#define FAKE_SAMPLES	8
#define FAKE_SHARE	(SPM_HEADER_BYTES + FAKE_SAMPLES * SPM_SAMPLE_BYTES)
#define FAKE_CAP	(FAKE_SHARE - SPM_HEADER_BYTES)
#define FAKE_BUFFERS	3
#define FAKE_VERSION	((1u << 24) | 1)
#define FAKE_TS_STEP	600u	/* per sample; its unit is not checked */

enum mutation {
	GOOD, VERSION, SHARE_INDEX, NUM_SHARES, HIGH_BITS, XCC_ORDER,
	XCC_CHANGED, SEQ_GAP, SEQ_SAME, SEQ_ZERO, START_EARLY, START_LATE,
	LAST_US_EMPTY, LAST_US_LATE, PART_SAMPLE, OVER_CAP, LOSS_SAMPLES,
	LOSS_UNKNOWN, FULL_NOT_FULL, FULL_AND_FULL, EMPTY_SHARE,
	EMPTY_WARMUP, CYCLES_EDGE, CYCLES_HIGH, CYCLES_LOW, CYCLES_HALF,
	CYCLES_HIGH_GATED, CYCLES_LOW_GATED, CYCLES_ZERO_GATED,
	TS_BACK, TS_SAME, TS_BACK_ACROSS, TOTAL_BYTES, TOTAL_LOSS,
};

/* FAKE_BUFFERS buffers of a stream, and the checker that reads them */
struct fake {
	struct spm_check c;
	uint8_t buf[FAKE_BUFFERS][FAKE_XCC * FAKE_SHARE];
	uint32_t bytes[FAKE_BUFFERS], loss[FAKE_BUFFERS];
};

FIXTURE(checker) {
	struct fake f;
};

FIXTURE_VARIANT(checker) {
	enum mutation what;
	const char *want;	/* in the message; NULL: must pass */
	const char *at;		/* the buffer it names; NULL: buffer 1 */
};

FIXTURE_VARIANT_ADD(checker, good) { GOOD, NULL };
FIXTURE_VARIANT_ADD(checker, version) { VERSION, "version" };
FIXTURE_VARIANT_ADD(checker, share_index) { SHARE_INDEX, "xcc_info" };
FIXTURE_VARIANT_ADD(checker, num_shares) { NUM_SHARES, "xcc_info" };
FIXTURE_VARIANT_ADD(checker, xcc_info_high_bits) { HIGH_BITS, "xcc_info" };
FIXTURE_VARIANT_ADD(checker, xcc_order) { XCC_ORDER, "after XCC" };
FIXTURE_VARIANT_ADD(checker, xcc_changed) { XCC_CHANGED, "was XCC" };
FIXTURE_VARIANT_ADD(checker, seq_gap) { SEQ_GAP, "seq" };
FIXTURE_VARIANT_ADD(checker, seq_repeated) { SEQ_SAME, "seq" };
FIXTURE_VARIANT_ADD(checker, seq_zero_first) { SEQ_ZERO, "seq", "buffer 0:" };
FIXTURE_VARIANT_ADD(checker, start_before_install) { START_EARLY, "start" };
FIXTURE_VARIANT_ADD(checker, start_after_install) { START_LATE, "start" };
FIXTURE_VARIANT_ADD(checker, last_us_without_data) { LAST_US_EMPTY, "last copy" };
FIXTURE_VARIANT_ADD(checker, last_us_after_retire) { LAST_US_LATE, "last copy" };
FIXTURE_VARIANT_ADD(checker, partial_sample) { PART_SAMPLE, "whole" };
FIXTURE_VARIANT_ADD(checker, bytes_over_share) { OVER_CAP, "whole" };
FIXTURE_VARIANT_ADD(checker, lost_samples) { LOSS_SAMPLES, "has_data_loss" };
FIXTURE_VARIANT_ADD(checker, unknown_loss_bit) { LOSS_UNKNOWN, "has_data_loss" };
FIXTURE_VARIANT_ADD(checker, full_bit_share_not_full) { FULL_NOT_FULL, "full with" };
FIXTURE_VARIANT_ADD(checker, full_bit_share_full) { FULL_AND_FULL, NULL };
FIXTURE_VARIANT_ADD(checker, empty_share_measured) { EMPTY_SHARE, "no samples" };
FIXTURE_VARIANT_ADD(checker, empty_share_warmup) { EMPTY_WARMUP, NULL };
FIXTURE_VARIANT_ADD(checker, cycles_at_tolerance) { CYCLES_EDGE, NULL };
FIXTURE_VARIANT_ADD(checker, cycles_over_tolerance) { CYCLES_HIGH, "cycles, more than" };
FIXTURE_VARIANT_ADD(checker, cycles_under_tolerance) { CYCLES_LOW, "cycles, less than" };
FIXTURE_VARIANT_ADD(checker, cycles_half_interval) { CYCLES_HALF, "cycles, less than" };
/* Not exact (GC 9.4.3): above still fails, below is counted */
FIXTURE_VARIANT_ADD(checker, cycles_over_not_exact) { CYCLES_HIGH_GATED, "cycles, more than" };
FIXTURE_VARIANT_ADD(checker, cycles_under_not_exact) { CYCLES_LOW_GATED, NULL };
FIXTURE_VARIANT_ADD(checker, cycles_zero_not_exact) { CYCLES_ZERO_GATED, NULL };
FIXTURE_VARIANT_ADD(checker, timestamp_backwards) { TS_BACK, "timestamp" };
FIXTURE_VARIANT_ADD(checker, timestamp_repeated) { TS_SAME, "timestamp" };
FIXTURE_VARIANT_ADD(checker, timestamp_backwards_across_buffers) { TS_BACK_ACROSS, "timestamp" };
FIXTURE_VARIANT_ADD(checker, total_bytes) { TOTAL_BYTES, "SET_DEST_BUF said" };
FIXTURE_VARIANT_ADD(checker, total_loss) { TOTAL_LOSS, "SET_DEST_BUF said" };

/* Buffer b, as the kernel writes it: installed at 1000 * (b + 1) ns */
static uint64_t inst_ns(unsigned int b)
{
	return 1000ull * (b + 1);
}

#define RETIRED_NS	1000000000ull

static struct drm_amdgpu_spm_buffer_header *
hdr(struct fake *f, unsigned int b, unsigned int i)
{
	return (struct drm_amdgpu_spm_buffer_header *)
		(f->buf[b] + (size_t)i * FAKE_SHARE);
}

static uint8_t *data(struct fake *f, unsigned int b,
		     unsigned int i)
{
	return f->buf[b] + (size_t)i * FAKE_SHARE + SPM_HEADER_BYTES;
}

FIXTURE_SETUP(checker)
{
	struct fake *f = &self->f;
	unsigned int b, i, k;

	memset(f->buf, 0, sizeof(f->buf));
	for (b = 0; b < FAKE_BUFFERS; b++) {
		f->bytes[b] = 0;
		f->loss[b] = 0;
		for (i = 0; i < FAKE_XCC; i++) {
			struct drm_amdgpu_spm_buffer_header *h = hdr(f, b, i);
			uint64_t start = inst_ns(b) + 10;

			h->version = FAKE_VERSION;
			h->bytes_copied = FAKE_CAP - SPM_SAMPLE_BYTES;
			HDR_XCC_INFO(h) = (FAKE_FIRST_XCC + i) |
					  FAKE_XCC << 8 | i << 16;
			HDR_SEQ(h) = b + 2;	/* after the probe's 1 */
			HDR_START_NS_LO(h) = (uint32_t)start;
			HDR_START_NS_HI(h) = start >> 32;
			HDR_LAST_US(h) = 5;
			for (k = 0; k < FAKE_SAMPLES - 1; k++)
				spm_sample_encode(data(f, b, i), k,
						  ((uint64_t)b * FAKE_SAMPLES + k + 1) *
						  FAKE_TS_STEP,
						  SPM_CYCLES_INTERVAL);
			f->bytes[b] += h->bytes_copied;
		}
	}
	spm_check_init(&f->c, FAKE_VERSION, FAKE_XCC, FAKE_SHARE);
	for (i = 0; i < FAKE_XCC; i++)
		f->c.xcc[i].seq = 1;
	f->c.measure = true;
}

FIXTURE_TEARDOWN(checker)
{
}

/* Set sample k of share i of buffer b */
static void sample(struct fake *f, unsigned int b, unsigned int i,
		   unsigned int k, uint64_t ts, uint32_t cycles)
{
	spm_sample_encode(data(f, b, i), k, ts, cycles);
}

static uint64_t ts_of(struct fake *f, unsigned int b, unsigned int i,
		      unsigned int k)
{
	uint32_t cycles;
	uint64_t ts;

	spm_sample_decode(data(f, b, i), k, &ts, &cycles);
	return ts;
}

/* One thing wrong in buffer 1 (share 1 where a share is needed) */
static void mutate(struct fake *f, enum mutation what)
{
	struct drm_amdgpu_spm_buffer_header *h = hdr(f, 1, 1);
	uint32_t *bytes = &f->bytes[1];
	uint64_t t;

	switch (what) {
	case GOOD:
		break;
	case VERSION:
		h->version = 1u << 24;
		break;
	case SHARE_INDEX:
		HDR_XCC_INFO(h) ^= 1u << 16;
		break;
	case NUM_SHARES:
		HDR_XCC_INFO(h) += 1u << 8;
		break;
	case HIGH_BITS:
		HDR_XCC_INFO(h) |= 1u << 24;
		break;
	case XCC_ORDER:
		HDR_XCC_INFO(h) = (HDR_XCC_INFO(h) & ~0xffu) | 1;
		break;
	case XCC_CHANGED:
		HDR_XCC_INFO(h) += 1;
		break;
	case SEQ_GAP:
		HDR_SEQ(h) += 1;
		break;
	case SEQ_SAME:
		HDR_SEQ(h) -= 1;
		break;
	case SEQ_ZERO:
		/* no probe before: the first buffer must say 1 or more */
		f->c.xcc[1].seq = 0;
		HDR_SEQ(hdr(f, 0, 1)) = 0;
		break;
	case START_EARLY:
		HDR_START_NS_LO(h) = inst_ns(1) - 1;
		break;
	case START_LATE:
		HDR_START_NS_LO(h) = inst_ns(2) + 1;
		break;
	case LAST_US_EMPTY:
		*bytes -= h->bytes_copied;
		h->bytes_copied = 0;
		f->c.measure = false;
		break;
	case LAST_US_LATE:
		HDR_LAST_US(h) = RETIRED_NS / 1000;
		break;
	case PART_SAMPLE:
		h->bytes_copied -= SPM_LINE_BYTES;
		*bytes -= SPM_LINE_BYTES;
		break;
	case OVER_CAP:
		h->bytes_copied = FAKE_CAP + SPM_SAMPLE_BYTES;
		*bytes += 2 * SPM_SAMPLE_BYTES;
		break;
	case LOSS_SAMPLES:
		h->has_data_loss = AMDGPU_SPM_LOSS_SAMPLES;
		f->loss[1] = h->has_data_loss;
		break;
	case LOSS_UNKNOWN:
		h->has_data_loss = 1u << 2;
		f->loss[1] = h->has_data_loss;
		break;
	case FULL_NOT_FULL:
		h->has_data_loss = AMDGPU_SPM_LOSS_FULL;
		f->loss[1] = h->has_data_loss;
		break;
	case FULL_AND_FULL:
		t = ts_of(f, 1, 1, FAKE_SAMPLES - 2) + 1;
		sample(f, 1, 1, FAKE_SAMPLES - 1, t, SPM_CYCLES_INTERVAL);
		h->bytes_copied = FAKE_CAP;
		*bytes += SPM_SAMPLE_BYTES;
		h->has_data_loss = AMDGPU_SPM_LOSS_FULL;
		f->loss[1] = h->has_data_loss;
		break;
	case EMPTY_SHARE:
	case EMPTY_WARMUP:
		*bytes -= h->bytes_copied;
		h->bytes_copied = 0;
		HDR_LAST_US(h) = 0;
		f->c.measure = what == EMPTY_SHARE;
		break;
	case CYCLES_EDGE:
		sample(f, 1, 1, 3, ts_of(f, 1, 1, 3),
		       SPM_CYCLES_INTERVAL + SPM_CYCLES_TOLERANCE);
		sample(f, 1, 1, 4, ts_of(f, 1, 1, 4),
		       SPM_CYCLES_INTERVAL - SPM_CYCLES_TOLERANCE);
		break;
	case CYCLES_HIGH:
		sample(f, 1, 1, 3, ts_of(f, 1, 1, 3),
		       SPM_CYCLES_INTERVAL + SPM_CYCLES_TOLERANCE + 1);
		break;
	case CYCLES_LOW:
		sample(f, 1, 1, 3, ts_of(f, 1, 1, 3),
		       SPM_CYCLES_INTERVAL - SPM_CYCLES_TOLERANCE - 1);
		break;
	case CYCLES_HALF:
		sample(f, 1, 1, 3, ts_of(f, 1, 1, 3),
		       SPM_CYCLES_INTERVAL / 2);
		break;
	case CYCLES_HIGH_GATED:
		f->c.exact = false;
		sample(f, 1, 1, 3, ts_of(f, 1, 1, 3),
		       SPM_CYCLES_INTERVAL + SPM_CYCLES_TOLERANCE + 1);
		break;
	case CYCLES_LOW_GATED:
		f->c.exact = false;
		sample(f, 1, 1, 3, ts_of(f, 1, 1, 3),
		       SPM_CYCLES_INTERVAL - SPM_CYCLES_TOLERANCE - 1);
		break;
	case CYCLES_ZERO_GATED:
		f->c.exact = false;
		sample(f, 1, 1, 3, ts_of(f, 1, 1, 3), 0);
		sample(f, 1, 1, 4, ts_of(f, 1, 1, 4), SPM_CYCLES_INTERVAL / 2);
		break;
	case TS_BACK:
		sample(f, 1, 1, 3, ts_of(f, 1, 1, 2) - 1,
		       SPM_CYCLES_INTERVAL);
		break;
	case TS_SAME:
		sample(f, 1, 1, 3, ts_of(f, 1, 1, 2),
		       SPM_CYCLES_INTERVAL);
		break;
	case TS_BACK_ACROSS:
		sample(f, 1, 1, 0, ts_of(f, 0, 1, FAKE_SAMPLES - 2) - 1,
		       SPM_CYCLES_INTERVAL);
		break;
	case TOTAL_BYTES:
		*bytes += SPM_SAMPLE_BYTES;
		break;
	case TOTAL_LOSS:
		f->loss[1] = AMDGPU_SPM_LOSS_FULL;
		break;
	}
}

TEST_F(checker, one_fault)
{
	struct fake *f = &self->f;
	unsigned int b, errors = 0;
	const char *at;

	mutate(f, variant->what);
	for (b = 0; b < FAKE_BUFFERS; b++)
		errors += spm_check_buffer(&f->c, f->buf[b],
					   f->bytes[b], f->loss[b],
					   inst_ns(b), inst_ns(b) + 100,
					   RETIRED_NS);
	EXPECT_EQ(FAKE_BUFFERS, f->c.buffers);
	EXPECT_EQ(errors, f->c.errors);
	if (!variant->want) {
		EXPECT_EQ(0u, errors) TH_LOG("%s", f->c.msg);
		EXPECT_EQ(FAKE_BUFFERS * (FAKE_SAMPLES - 1) +
			  (variant->what == FULL_AND_FULL) -
			  (variant->what == EMPTY_WARMUP) * (FAKE_SAMPLES - 1),
			  f->c.xcc[1].samples);
		/* below the lower bound, not exact: counted, not failed */
		EXPECT_EQ((variant->what == CYCLES_LOW_GATED) +
			  2 * (variant->what == CYCLES_ZERO_GATED),
			  f->c.xcc[1].below);
		EXPECT_EQ(0u, f->c.xcc[0].below);
	} else {
		EXPECT_NE(0u, errors);
		EXPECT_NE(NULL, strstr(f->c.msg, variant->want))
			TH_LOG("want \"%s\", got \"%s\"", variant->want,
			       f->c.msg);
		/* Found where it is */
		at = variant->at ?: "buffer 1:";
		EXPECT_EQ(0, strncmp(f->c.msg, at, strlen(at)))
			TH_LOG("%s", f->c.msg);
	}
}

TEST_HARNESS_MAIN
