// SPDX-License-Identifier: GPL-2.0
/*
 * The cycle counter's SPM command streams and the checker of its samples;
 * see amdgpu_spm_stream.h.
 *
 * The streams are the minimum of what the reference tool's
 * tools/amdgpu-profiler/spm_program.c writes for one 16-bit global
 * counter, CPC_PERF_SEL_ALWAYS_COUNT: the steps keep that file's numbers,
 * where each choice is argued. Register numbers and fields are those of
 * the kernel's drivers/gpu/drm/amd/include/asic_reg/gc/ headers:
 * gc_9_4_2_offset.h and gc_9_4_3_offset.h, and gc_9_0_offset.h for GC
 * 9.4.1, whose gc_9_4_1_offset.h defines none of these registers; offsets
 * and fields are the same in all three unless a row says otherwise.
 * Enumerated values are vega10_enum.h's, PM4 is amdgpu/soc15d.h's.
 *
 * The kernel owns ring base, size, threshold, SPM VMID, read pointer,
 * ring mode and DISABLE_AND_RESET; these streams touch none of them.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "../../../kselftest.h"
#include "amdgpu_spm_stream.h"

/*
 * Dword addresses in the XCC's own register space: reg + 0x2000 for
 * BASE_IDX 0, reg + 0xA000 for BASE_IDX 1 (GC_BASE__INST0_SEG0/SEG1 of
 * arct_ip_offset.h and aldebaran_ip_offset.h; on GC 9.4.3 the XCC-local
 * windows XCC_REG_RANGE_0_LOW/XCC_REG_RANGE_1_LOW of gfx_v9_4_3.c).
 */
#define SEG0(reg)		(0x2000u + (reg))
#define SEG1(reg)		(0xA000u + (reg))

#define GRBM_GFX_INDEX			SEG1(0x2200)
#define CP_PERFMON_CNTL			SEG1(0x3808)
#define CPC_PERFCOUNTER0_SELECT		SEG1(0x3809)
#define RLC_SPM_PERFMON_CNTL		SEG1(0x3c80)
#define RLC_SPM_PERFMON_SEGMENT_SIZE	SEG1(0x3c84)
#define RLC_SPM_SE_MUXSEL_ADDR		SEG1(0x3c85)
#define RLC_SPM_SE_MUXSEL_DATA		SEG1(0x3c86)
#define RLC_SPM_CPC_PERFMON_SAMPLE_DELAY SEG1(0x3c88)
#define RLC_SPM_GLOBAL_MUXSEL_ADDR	SEG1(0x3c9b)
#define RLC_SPM_GLOBAL_MUXSEL_DATA	SEG1(0x3c9c)
/*
 * gc_9_4_2_offset.h and gc_9_4_3_offset.h; gc_9_0_offset.h has none, and
 * aqlprofile writes it on MI100 all the same (its own GC 9.x header puts
 * it at 0x3ca4), as it writes SEGMENT_SIZE_CORE1 there
 */
#define RLC_SPM_PERFMON_SAMPLE_DELAY_MAX SEG1(0x3ca4)
/* gc_9_4_2_offset.h only */
#define RLC_SPM_PERFMON_SEGMENT_SIZE_CORE1 SEG1(0x3caf)
/* gc_9_0_offset.h and gc_9_4_2_offset.h; gc_9_4_3_offset.h has none */
#define RLC_PERFMON_CLK_CNTL		SEG1(0x3cbf)
#define COMPUTE_PERFCOUNT_ENABLE	SEG0(0x0e0b)

/*
 * GRBM_GFX_INDEX: SE_BROADCAST_WRITES 31, INSTANCE_ 30, SH_ 29, SE_INDEX
 * 23:16, SH_INDEX 15:8, INSTANCE_INDEX 7:0
 */
#define GRBM_BROADCAST		0xe0000000u
#define GRBM_INSTANCE_0		0xa0000000u	/* SE and SH broadcast */
#define GRBM_SE0_SH0_INSTANCE_0	0x00000000u	/* no broadcast */
/* CP_PERFMON_CNTL.SPM_PERFMON_STATE (7:4): CP_PERFMON_STATE_* */
#define SPM_START		0x10u	/* START_COUNTING (1) */
#define SPM_STOP		0x20u	/* STOP_COUNTING (2) */
/*
 * RLC_SPM_PERFMON_CNTL: PERFMON_SAMPLE_INTERVAL 31:16, PERFMON_RING_MODE
 * 13:12 = 0, the mode the kernel programs (this write replaces it)
 */
#define RLC_SPM_CNTL		(SPM_CYCLES_INTERVAL << 16)
/*
 * CPC_PERFCOUNTER0_SELECT: CNTR_SEL0 9:0 = CPC_PERF_SEL_ALWAYS_COUNT (0),
 * SPM_MODE 23:20 = PERFMON_SPM_MODE_16BIT_CLAMP (1)
 */
#define CPC_SELECT		0x00100000u
/*
 * RLC_SPM_PERFMON_SEGMENT_SIZE: PERFMON_SEGMENT_SIZE 7:0 = 2 lines in
 * all, GLOBAL_NUM_LINE 15:11 = 2, SE0-SE2_NUM_LINE 0
 */
#define SEGMENT_SIZE		(2u | 2u << 11)

/* PM4 (soc15d.h): PACKET3(), opcodes, WRITE_DATA and EVENT_WRITE fields */
#define PKT3(op, n)		(3u << 30 | ((op) & 0xffu) << 8 | \
				 ((uint32_t)(n) & 0x3fffu) << 16)
#define PKT3_NOP		0xffff1000u	/* PACKET3(PACKET3_NOP, 0x3FFF) */
#define OP_WRITE_DATA		0x37u
#define OP_EVENT_WRITE		0x46u
#define OP_SET_SH_REG		0x76u
#define OP_SET_UCONFIG_REG	0x79u
#define SH_REG_START		0x2c00u
#define UCONFIG_REG_START	0xc000u
/* DST_SEL(0) register, WR_ONE_ADDR, WR_CONFIRM */
#define WRITE_DATA_REG		(0u << 8 | 1u << 16 | 1u << 20)
/* EVENT_TYPE(CS_PARTIAL_FLUSH = 7) | EVENT_INDEX(4) */
#define CS_PARTIAL_FLUSH	(7u | 4u << 8)

/*
 * The global mux RAM, two lines of 16 entries, two a dword: entries 0-3
 * 0xf0f0, the timestamp; entry 4 CPC (SPM global block 1), instance 0,
 * counter 0 (block << 6 | instance << 11 | counter); 0xffff unused
 * (spm_program.c, MUXSEL()). Entry i is what the RLC writes into 16-bit
 * slot i of a sample, as aqlprofile's decoder reads it (spm_decode.cpp,
 * aqlprofile_spm_decode_stream_v1()). Then two more 0xffff entries that
 * end the RAM, as aqlprofile writes them (spm_builder.h: lines * 16 + 2
 * entries, "end of muxsel"): 17 dwords.
 */
static const uint32_t global_mux[17] = {
	0xf0f0f0f0, 0xf0f0f0f0, 0xffff0040, 0xffffffff,
	0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff,
	0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff,
	0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff,
	0xffffffff,
};

/*
 * The SE mux RAM: no SE lines, only the two end entries, which
 * aqlprofile writes also without SE counters, so that no earlier
 * profile's SE entries stay in the RAM
 */
static const uint32_t se_mux[1] = { 0xffffffff };

enum spm_op { UCONFIG, SH, FLUSH, GMUX, SEMUX };

#define P941		0x1u
#define P942		0x2u
#define P943		0x4u
#define PALL		(P941 | P942 | P943)

struct spm_write {
	uint8_t op;
	uint8_t parts;
	uint32_t reg;
	uint32_t val;
};

/* The numbers are the steps of spm_program.c spm_program_start() */
static const struct spm_write start_stream[] = {
	/* 1. the perfmon clock on; not on 9.4.3 */
	{ UCONFIG, P941 | P942, RLC_PERFMON_CLK_CNTL, 1 },
	/* 2.-5. broadcast, idle, SPM stopped (not reset: the kernel's) */
	{ UCONFIG, PALL, GRBM_GFX_INDEX, GRBM_BROADCAST },
	{ FLUSH, PALL },
	{ UCONFIG, PALL, CP_PERFMON_CNTL, SPM_STOP },
	{ FLUSH, PALL },
	/* 6. the sample interval, ring mode 0 */
	{ UCONFIG, PALL, RLC_SPM_PERFMON_CNTL, RLC_SPM_CNTL },
	/*
	 * 7. RLC_SPM_PERFMON_SAMPLE_DELAY_MAX and 8. CPC's sample delay,
	 * written with GRBM_GFX_INDEX naming CPC instance 0 of SE 0, SH 0,
	 * then broadcast again: aqlprofile's values for the part (gfx908,
	 * gfx90a and gfx940_factory.cpp, gfx9_factory.h:
	 * GetSpmSampleDelayMax(), CpcBlockDelayValue)
	 */
	{ UCONFIG, P941, RLC_SPM_PERFMON_SAMPLE_DELAY_MAX, 0x34 },
	{ UCONFIG, P942, RLC_SPM_PERFMON_SAMPLE_DELAY_MAX, 0x3e },
	{ UCONFIG, P943, RLC_SPM_PERFMON_SAMPLE_DELAY_MAX, 0x27 },
	{ UCONFIG, PALL, GRBM_GFX_INDEX, GRBM_SE0_SH0_INSTANCE_0 },
	{ UCONFIG, P941, RLC_SPM_CPC_PERFMON_SAMPLE_DELAY, 0x30 },
	{ UCONFIG, P942, RLC_SPM_CPC_PERFMON_SAMPLE_DELAY, 0x36 },
	{ UCONFIG, P943, RLC_SPM_CPC_PERFMON_SAMPLE_DELAY, 0x1f },
	{ UCONFIG, PALL, GRBM_GFX_INDEX, GRBM_BROADCAST },
	/* 9./10. the counter select on instance 0 of CPC */
	{ UCONFIG, PALL, GRBM_GFX_INDEX, GRBM_INSTANCE_0 },
	{ UCONFIG, PALL, CPC_PERFCOUNTER0_SELECT, CPC_SELECT },
	/* 12.-14. broadcast, two global lines, no SE lines (nor SE4-7) */
	{ UCONFIG, PALL, GRBM_GFX_INDEX, GRBM_BROADCAST },
	{ UCONFIG, PALL, RLC_SPM_PERFMON_SEGMENT_SIZE, SEGMENT_SIZE },
	{ UCONFIG, P941 | P942, RLC_SPM_PERFMON_SEGMENT_SIZE_CORE1, 0 },
	/* 15.-18. both mux RAMs from address 0, addresses reset */
	{ UCONFIG, PALL, RLC_SPM_GLOBAL_MUXSEL_ADDR, 0 },
	{ GMUX, PALL, RLC_SPM_GLOBAL_MUXSEL_DATA },
	{ UCONFIG, PALL, RLC_SPM_SE_MUXSEL_ADDR, 0 },
	{ SEMUX, PALL, RLC_SPM_SE_MUXSEL_DATA },
	{ UCONFIG, PALL, RLC_SPM_GLOBAL_MUXSEL_ADDR, 0 },
	{ UCONFIG, PALL, RLC_SPM_SE_MUXSEL_ADDR, 0 },
	/* 19.-22. counting on for this queue, SPM started */
	{ FLUSH, PALL },
	{ SH, PALL, COMPUTE_PERFCOUNT_ENABLE, 1 },
	{ UCONFIG, PALL, CP_PERFMON_CNTL, SPM_START },
	{ FLUSH, PALL },
};

/* spm_program_stop(): SPM stopped, the perfmon clock off again */
static const struct spm_write stop_stream[] = {
	{ UCONFIG, PALL, GRBM_GFX_INDEX, GRBM_BROADCAST },
	{ FLUSH, PALL },
	{ UCONFIG, PALL, CP_PERFMON_CNTL, SPM_STOP },
	{ UCONFIG, P941 | P942, RLC_PERFMON_CLK_CNTL, 0 },
};

static const struct {
	uint32_t gc;
	unsigned int part;
	const char *name;
} parts[] = {
	{ SPM_GC_9_4_1, P941, "MI100 (GC 9.4.1)" },
	{ SPM_GC_9_4_2, P942, "MI200 (GC 9.4.2)" },
	{ SPM_GC_9_4_3, P943, "MI300 (GC 9.4.3)" },
};

static unsigned int part_of(uint32_t gc, const char **name)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(parts); i++) {
		if (parts[i].gc == gc) {
			if (name)
				*name = parts[i].name;
			return parts[i].part;
		}
	}
	return 0;
}

const char *spm_stream_part(uint32_t gc)
{
	const char *name = NULL;

	part_of(gc, &name);
	return name;
}

/*
 * aqlprofile does not stream SPM on gfx90a at all (rocprofiler-sdk
 * lib/aqlprofile/core/spm_v2.cpp, is_agent_supported_for_spm()); it gives
 * no reason. The test runs there all the same, with this warning: the
 * kernel's SPM path on MI200 is what it is for, and a skip would leave it
 * untested.
 */
static const char warning_942[] =
	"MI200: aqlprofile refuses SPM on gfx90a (spm_v2.cpp); a failure may be the part's";

const char *spm_stream_warning(uint32_t gc)
{
	return gc == SPM_GC_9_4_2 ? warning_942 : NULL;
}

bool spm_stream_cycles_exact(uint32_t gc)
{
	/*
	 * 9.4.1 and 9.4.2: the start stream turns RLC_PERFMON_CLK_CNTL on,
	 * aqlprofile's "enable clock for performance counters". gc_9_4_3
	 * has no such register, soc15.c enables GFX MGCG, CGCG and CGLS on
	 * 9.4.3, and nothing here keeps the XCC busy: whether the CPC's
	 * clock runs through every cycle of an interval there is open.
	 */
	return gc == SPM_GC_9_4_1 || gc == SPM_GC_9_4_2;
}

struct pm4 {
	uint32_t *ib;
	size_t max, n;
};

static void emit(struct pm4 *p, uint32_t dw)
{
	if (p->n < p->max)
		p->ib[p->n] = dw;
	p->n++;
}

/* WRITE_DATA of a mux RAM: the RLC steps the address, one register */
static void emit_mux(struct pm4 *p, uint32_t reg, const uint32_t *dw,
		     size_t n)
{
	size_t k;

	emit(p, PKT3(OP_WRITE_DATA, 2 + n));
	emit(p, WRITE_DATA_REG);
	emit(p, reg);
	emit(p, 0);
	for (k = 0; k < n; k++)
		emit(p, dw[k]);
}

int spm_stream_build(uint32_t gc, bool start, uint32_t *ib, size_t max_dw)
{
	const struct spm_write *w = start ? start_stream : stop_stream;
	size_t n = start ? ARRAY_SIZE(start_stream) : ARRAY_SIZE(stop_stream);
	unsigned int part = part_of(gc, NULL);
	struct pm4 p = { ib, max_dw, 0 };
	size_t i;

	if (!part)
		return -EOPNOTSUPP;
	for (i = 0; i < n; i++, w++) {
		if (!(w->parts & part))
			continue;
		switch (w->op) {
		case UCONFIG:
			emit(&p, PKT3(OP_SET_UCONFIG_REG, 1));
			emit(&p, w->reg - UCONFIG_REG_START);
			emit(&p, w->val);
			break;
		case SH:
			emit(&p, PKT3(OP_SET_SH_REG, 1));
			emit(&p, w->reg - SH_REG_START);
			emit(&p, w->val);
			break;
		case FLUSH:
			emit(&p, PKT3(OP_EVENT_WRITE, 0));
			emit(&p, CS_PARTIAL_FLUSH);
			break;
		case GMUX:
			emit_mux(&p, w->reg, global_mux, ARRAY_SIZE(global_mux));
			break;
		case SEMUX:
			emit_mux(&p, w->reg, se_mux, ARRAY_SIZE(se_mux));
			break;
		}
	}
	while (p.n % 8)
		emit(&p, PKT3_NOP);
	return p.n > max_dw ? -ENOSPC : (int)p.n;
}

/* ---- samples ---- */

static uint32_t slot16(const uint8_t *s, unsigned int slot)
{
	return s[2 * slot] | (uint32_t)s[2 * slot + 1] << 8;
}

void spm_sample_decode(const void *data, uint32_t k, uint64_t *ts,
		       uint32_t *cycles)
{
	const uint8_t *s = (const uint8_t *)data + (size_t)k * SPM_SAMPLE_BYTES;
	unsigned int i;

	*ts = 0;
	for (i = 0; i < 4; i++)
		*ts |= (uint64_t)slot16(s, i) << (16 * i);
	*cycles = slot16(s, SPM_SLOT_CYCLES);
}

void spm_sample_encode(void *data, uint32_t k, uint64_t ts, uint32_t cycles)
{
	uint8_t *s = (uint8_t *)data + (size_t)k * SPM_SAMPLE_BYTES;
	unsigned int i;

	memset(s, 0xff, SPM_SAMPLE_BYTES);
	for (i = 0; i < 8; i++)
		s[i] = ts >> (8 * i);
	s[2 * SPM_SLOT_CYCLES] = cycles;
	s[2 * SPM_SLOT_CYCLES + 1] = cycles >> 8;
}

/* ---- the checker ---- */

void spm_check_init(struct spm_check *c, uint32_t version, uint32_t num_xcc,
		    uint32_t share)
{
	unsigned int i;

	memset(c, 0, sizeof(*c));
	c->version = version;
	c->num_xcc = num_xcc < SPM_MAX_XCC ? num_xcc : SPM_MAX_XCC;
	c->share = share;
	c->exact = true;
	for (i = 0; i < SPM_MAX_XCC; i++)
		c->xcc[i].min_cycles = UINT32_MAX;
}

static __printf(2, 3) void fail(struct spm_check *c, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (!c->errors++) {
		n = snprintf(c->msg, sizeof(c->msg), "buffer %u: ", c->buffers);
		va_start(ap, fmt);
		vsnprintf(c->msg + n, sizeof(c->msg) - n, fmt, ap);
		va_end(ap);
	}
}

static void check_samples(struct spm_check *c, unsigned int i,
			  const uint8_t *data, uint32_t bytes)
{
	struct spm_xcc_state *x = &c->xcc[i];
	uint32_t k, cycles, d;
	uint64_t ts;

	for (k = 0; k < bytes / SPM_SAMPLE_BYTES; k++) {
		spm_sample_decode(data, k, &ts, &cycles);
		if (c->measure) {
			/* never more than the interval: strictly */
			if (cycles > SPM_CYCLES_INTERVAL + SPM_CYCLES_TOLERANCE)
				fail(c, "share %u sample %u: %u cycles, more than %u + %u",
				     i, k, cycles, SPM_CYCLES_INTERVAL,
				     SPM_CYCLES_TOLERANCE);
			/*
			 * less: an error where the count is exact, else
			 * counted (see spm_stream_cycles_exact())
			 */
			d = SPM_CYCLES_INTERVAL - SPM_CYCLES_TOLERANCE;
			if (cycles < d && c->exact)
				fail(c, "share %u sample %u: %u cycles, less than %u - %u",
				     i, k, cycles, SPM_CYCLES_INTERVAL,
				     SPM_CYCLES_TOLERANCE);
			else if (cycles < d)
				x->below++;
			if (x->have_ts && ts <= x->last_ts)
				fail(c, "share %u sample %u: timestamp %llu after %llu",
				     i, k, (unsigned long long)ts,
				     (unsigned long long)x->last_ts);
			if (cycles < x->min_cycles)
				x->min_cycles = cycles;
			if (cycles > x->max_cycles)
				x->max_cycles = cycles;
		}
		x->last_ts = ts;
		x->have_ts = true;
		x->samples++;
	}
}

unsigned int spm_check_buffer(struct spm_check *c, const void *buf,
			      uint32_t bytes, uint32_t loss, uint64_t inst0_ns,
			      uint64_t inst1_ns, uint64_t retired_ns)
{
	const uint32_t cap = c->share - SPM_HEADER_BYTES;
	unsigned int errors = c->errors, i;
	uint64_t sum = 0, start;
	uint32_t or = 0;

	for (i = 0; i < c->num_xcc; i++) {
		const uint8_t *share = (const uint8_t *)buf + (size_t)i * c->share;
		struct spm_xcc_state *x = &c->xcc[i];
		struct drm_amdgpu_spm_buffer_header h;
		uint32_t info;

		memcpy(&h, share, sizeof(h));
		info = HDR_XCC_INFO(&h);
		sum += h.bytes_copied;
		or |= h.has_data_loss;

		/* Header words, as amdgpu_drm.h defines them (1.1) */
		if (h.version != c->version)
			fail(c, "share %u: version %#x, GET_VER said %#x", i,
			     h.version, c->version);
		if (AMDGPU_SPM_HDR_SHARE(info) != i ||
		    AMDGPU_SPM_HDR_NUM_SHARES(info) != c->num_xcc ||
		    info >> 24)
			fail(c, "share %u: xcc_info %#x, want share %u of %u",
			     i, info, i, c->num_xcc);
		if (i && AMDGPU_SPM_HDR_XCC(info) <= c->xcc[i - 1].xcc)
			fail(c, "share %u: XCC %u after XCC %u", i,
			     AMDGPU_SPM_HDR_XCC(info), c->xcc[i - 1].xcc);
		if (c->buffers && AMDGPU_SPM_HDR_XCC(info) != x->xcc)
			fail(c, "share %u: XCC %u, was XCC %u", i,
			     AMDGPU_SPM_HDR_XCC(info), x->xcc);
		x->xcc = AMDGPU_SPM_HDR_XCC(info);
		/* Sequence: consecutive per XCC, 1 the first after ACQUIRE */
		if (x->seq ? HDR_SEQ(&h) != x->seq + 1 : !HDR_SEQ(&h))
			fail(c, "share %u: seq %u after %u", i, HDR_SEQ(&h),
			     x->seq);
		x->seq = HDR_SEQ(&h);
		start = (uint64_t)HDR_START_NS_HI(&h) << 32 | HDR_START_NS_LO(&h);
		if (start < inst0_ns || start > inst1_ns)
			fail(c, "share %u: start %llu ns outside its SET_DEST_BUF [%llu, %llu]",
			     i, (unsigned long long)start,
			     (unsigned long long)inst0_ns,
			     (unsigned long long)inst1_ns);
		if (!h.bytes_copied ? HDR_LAST_US(&h) != 0 :
		    HDR_LAST_US(&h) != UINT32_MAX &&
		    start + HDR_LAST_US(&h) * 1000ull > retired_ns)
			fail(c, "share %u: last copy %u us after its start, %u bytes",
			     i, HDR_LAST_US(&h), h.bytes_copied);
		/* Sizes: within the share, whole samples */
		if (h.bytes_copied > cap || h.bytes_copied % SPM_SAMPLE_BYTES)
			fail(c, "share %u: %u bytes, not whole %u-byte samples within %u",
			     i, h.bytes_copied, SPM_SAMPLE_BYTES, cap);
		/* Loss: none; a full share (data left in the ring) is not */
		if (h.has_data_loss & ~AMDGPU_SPM_LOSS_FULL)
			fail(c, "share %u: has_data_loss %#x", i,
			     h.has_data_loss);
		if ((h.has_data_loss & AMDGPU_SPM_LOSS_FULL) &&
		    h.bytes_copied != cap)
			fail(c, "share %u: full with %u of %u bytes", i,
			     h.bytes_copied, cap);
		if (c->measure && !h.bytes_copied)
			fail(c, "share %u (XCC %u): no samples", i, x->xcc);
		if (h.bytes_copied <= cap)
			check_samples(c, i, share + SPM_HEADER_BYTES,
				      h.bytes_copied);
	}
	/* The totals SET_DEST_BUF returned are the shares' */
	if (sum != bytes || or != loss)
		fail(c, "SET_DEST_BUF said %u bytes, loss %#x; shares %llu, %#x",
		     bytes, loss, (unsigned long long)sum, or);
	c->buffers++;
	return c->errors - errors;
}
