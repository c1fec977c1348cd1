// SPDX-License-Identifier: MIT
/*
 * Copyright 2026 The amdgpu profiler series authors
 *
 * SPM programming for GC 9.4.x: counter table, mux layout, PM4 start/stop
 * streams, sample decoding. See spm_program.h.
 *
 * Sources (named per write below; nothing is copied from them):
 *  [HDR]  the base tree's drivers/gpu/drm/amd/include/: asic_reg/gc/
 *         gc_9_0_offset.h, gc_9_4_2_offset.h, gc_9_4_3_offset.h and their
 *         _sh_mask.h, vega10_enum.h, vega20/arct/aldebaran_ip_offset.h
 *         (GC_BASE seg0 0x2000, seg1 0xA000) and amdgpu/soc15d.h (PM4).
 *         The base tree's gc_9_4_1_offset.h defines none of the SPM or
 *         perfmon registers; GC 9.4.1 takes gc_9_0_offset.h's.
 *  [AQL]  aqlprofile (ROCm/rocm-systems, projects/rocprofiler-sdk/source/
 *         lib/aqlprofile/): pm4/spm_builder.h GpuSpmBuilder::Begin/End,
 *         gfxip/gfx9/gfx9_primitives.h, gfx9_block_info.h, spm_v2.cpp,
 *         core/spm_decode.cpp (its sample decoder), core/gfx908_factory.cpp,
 *         gfx90a_factory.cpp, gfx940_factory.cpp and gfx9_factory.h (the
 *         sample delay tables, GetSpmSampleDelayMax()).
 *  [AQLOLD] the standalone aqlprofile of the same repository before it
 *         moved (projects/aqlprofile/, rocm-systems 1b1610fc, August 2025):
 *         src/pm4/spm_builder.h, linux/registers/gc/gc_9_2_1_offset.h.
 *  [PAL]  GPUOpen-Drivers/pal src/core/hw/gfxip/gfx9/gfx9PerfTrace.cpp
 *         (Gfx9SpmTrace::WriteSetupCommands, CalculateSegmentSize,
 *         CalculateMuxRam, GetTraceLayout).
 *  [MESA] mesa src/amd/common/ac_spm.c, ac_spm.h (GFX10+):
 *         ac_emit_spm_muxsel(), AC_SPM_MUXSEL_LINE_SIZE.
 *  [SER]  this series, 0130-gfx-v9-4-3-spm / 0140-gfx-v9-0-spm.
 */
#include <errno.h>
#include <string.h>
#include <strings.h>

#include "spm_program.h"

/* ---- Register offsets ------------------------------------------------ */

/*
 * Absolute dword addresses: reg + GC_BASE seg1 (0xA000) for BASE_IDX 1,
 * reg + seg0 (0x2000) for BASE_IDX 0 ([HDR] vega20_ip_offset.h,
 * arct_ip_offset.h, aldebaran_ip_offset.h GC_BASE__INST0_SEG0/SEG1; MI300
 * XCC0 assumed the same, spec section 1). Offsets identical in
 * gc_9_0_offset.h, gc_9_4_2_offset.h and gc_9_4_3_offset.h unless noted.
 */
#define GC_SEG0			0x2000u
#define GC_SEG1			0xA000u
#define R_GRBM_GFX_INDEX	(GC_SEG1 + 0x2200u) /* mm/regGRBM_GFX_INDEX, BASE_IDX 1 */
#define R_CP_PERFMON_CNTL	(GC_SEG1 + 0x3808u) /* CP_PERFMON_CNTL, BASE_IDX 1 */
#define R_COMPUTE_PERFCOUNT_ENABLE (GC_SEG0 + 0x0e0bu) /* BASE_IDX 0 */
/* 9.0 and 9.4.2 only; gc_9_4_3_offset.h has no RLC_PERFMON_CLK_CNTL */
#define R_RLC_PERFMON_CLK_CNTL	(GC_SEG1 + 0x3cbfu)
#define R_RLC_SPM_PERFMON_CNTL	(GC_SEG1 + 0x3c80u)
#define R_RLC_SPM_PERFMON_SEGMENT_SIZE (GC_SEG1 + 0x3c84u)
/* gc_9_4_2_offset.h only (regRLC_SPM_PERFMON_SEGMENT_SIZE_CORE1 0x3caf) */
#define R_RLC_SPM_PERFMON_SEGMENT_SIZE_CORE1 (GC_SEG1 + 0x3cafu)
#define R_RLC_SPM_SE_MUXSEL_ADDR (GC_SEG1 + 0x3c85u)
#define R_RLC_SPM_SE_MUXSEL_DATA (GC_SEG1 + 0x3c86u)
#define R_RLC_SPM_GLOBAL_MUXSEL_ADDR (GC_SEG1 + 0x3c9bu)
#define R_RLC_SPM_GLOBAL_MUXSEL_DATA (GC_SEG1 + 0x3c9cu)
#define R_CPC_PERFCOUNTER0_SELECT (GC_SEG1 + 0x3809u)
#define R_CPC_PERFCOUNTER0_SELECT1 (GC_SEG1 + 0x3804u)
#define R_SQ_PERFCOUNTER0_SELECT (GC_SEG1 + 0x39c0u)
#define R_SQ_PERFCOUNTER_CTRL	(GC_SEG1 + 0x39e0u)
#define R_SQ_PERFCOUNTER_MASK	(GC_SEG1 + 0x39e1u)
/* Sample delays: the per-block ones in all three headers
 * (mm/regRLC_SPM_CPC_PERFMON_SAMPLE_DELAY 0x3c88,
 * ..._SQG_PERFMON_SAMPLE_DELAY 0x3c98); ..._PERFMON_SAMPLE_DELAY_MAX 0x3ca4
 * in gc_9_4_2_offset.h and gc_9_4_3_offset.h only. gc_9_0_offset.h has no
 * SAMPLE_DELAY_MAX; aqlprofile writes it on MI100 all the same, at the
 * address its own GC 9.x header gives ([AQLOLD] gc_9_2_1_offset.h 0x3ca4),
 * as it writes SEGMENT_SIZE_CORE1 there. */
#define R_RLC_SPM_CPC_PERFMON_SAMPLE_DELAY (GC_SEG1 + 0x3c88u)
#define R_RLC_SPM_SQG_PERFMON_SAMPLE_DELAY (GC_SEG1 + 0x3c98u)
#define R_RLC_SPM_PERFMON_SAMPLE_DELAY_MAX (GC_SEG1 + 0x3ca4u)

/* ---- Fields ([HDR] gc_9_*_sh_mask.h, same in 9.0/9.4.2/9.4.3) ---------- */

/* GRBM_GFX_INDEX: SE_BROADCAST_WRITES 31, INSTANCE_BROADCAST_WRITES 30,
 * SH_BROADCAST_WRITES 29, SE_INDEX 23:16, SH_INDEX 15:8, INSTANCE_INDEX 7:0 */
#define GRBM_SE_INDEX(se)	((uint32_t)(se) << 16)
#define GRBM_SE_BCAST		(1u << 31)
#define GRBM_INST_BCAST		(1u << 30)
#define GRBM_SH_BCAST		(1u << 29)
#define GRBM_BROADCAST		(GRBM_SE_BCAST | GRBM_INST_BCAST | GRBM_SH_BCAST)

/* CP_PERFMON_CNTL: PERFMON_STATE 3:0, SPM_PERFMON_STATE 7:4; values of
 * CP_PERFMON_STATE (vega10_enum.h): 1 START_COUNTING, 2 STOP_COUNTING.
 * DISABLE_AND_RESET (0) of SPM_PERFMON_STATE is never written here. */
#define CP_PERFMON_SPM_STATE_SHIFT 4
#define CP_PERFMON_STATE_START	1u
#define CP_PERFMON_STATE_STOP	2u

/* RLC_SPM_PERFMON_CNTL: PERFMON_RING_MODE 13:12, PERFMON_SAMPLE_INTERVAL
 * 31:16 */
#define RLC_SPM_RING_MODE_SHIFT	12
#define RLC_SPM_INTERVAL_SHIFT	16
/* Ring mode 0, "no stall, no interrupt": the kernel's choice ([SER]
 * gfx_v9_4_3_spm_start, GFX_V9_4_3_SPM_RING_NO_STALL) */
#define RLC_SPM_RING_MODE_NO_STALL 0u

/* RLC_SPM_PERFMON_SEGMENT_SIZE: PERFMON_SEGMENT_SIZE 7:0, GLOBAL_NUM_LINE
 * 15:11, SE0_NUM_LINE 20:16, SE1 25:21, SE2 30:26 */
#define SEG_GLOBAL_SHIFT	11
#define SEG_SE0_SHIFT		16
#define SEG_SE1_SHIFT		21
#define SEG_SE2_SHIFT		26
/* _CORE1 (gc_9_4_2_sh_mask.h): PERFMON_SEGMENT_SIZE_CORE1 6:0,
 * SE4_NUM_LINE 16:12, SE5 21:17, SE6 26:22, SE7 31:27 */
#define CORE1_SE4_SHIFT		12
#define CORE1_SE5_SHIFT		17
#define CORE1_SE6_SHIFT		22
#define CORE1_SE7_SHIFT		27

/* CPC_PERFCOUNTER0_SELECT: CNTR_SEL0 9:0, CNTR_SEL1 19:10, SPM_MODE 23:20;
 * CPC_PERFCOUNTER0_SELECT1: CNTR_SEL2 9:0, CNTR_SEL3 19:10 */
#define CPC_SEL_EVEN_SHIFT	0
#define CPC_SEL_ODD_SHIFT	10
#define PERF_SPM_MODE_SHIFT	20
/* PERFMON_SPM_MODE (vega10_enum.h) */
#define SPM_MODE_16BIT_CLAMP	1u
#define SPM_MODE_32BIT_CLAMP	3u

/* SQ_PERFCOUNTER0_SELECT: PERF_SEL 8:0, SQC_BANK_MASK 15:12,
 * SQC_CLIENT_MASK 19:16, SPM_MODE 23:20, SIMD_MASK 27:24 */
#define SQ_SEL_BANK_ALL		(0xfu << 12)
#define SQ_SEL_CLIENT_ALL	(0xfu << 16)
#define SQ_SEL_SIMD_ALL		(0xfu << 24)
/* SQ_PERFCOUNTER_CTRL: CS_EN 6; VMID_MASK 31:16 only in gc_9_4_2/9_4_3 */
#define SQ_CTRL_CS_EN		(1u << 6)
#define SQ_CTRL_VMID_ALL	(0xffffu << 16)

/* ---- PM4 ([HDR] amdgpu/soc15d.h) -------------------------------------- */

#define PM4_TYPE3(op, n)	((3u << 30) | (((op) & 0xffu) << 8) | \
				 (((unsigned int)(n) & 0x3fffu) << 16))
#define OP_WRITE_DATA		0x37u	/* PACKET3_WRITE_DATA */
#define OP_EVENT_WRITE		0x46u	/* PACKET3_EVENT_WRITE */
#define OP_SET_SH_REG		0x76u	/* PACKET3_SET_SH_REG */
#define OP_SET_UCONFIG_REG	0x79u	/* PACKET3_SET_UCONFIG_REG */
#define SH_REG_START		0x2c00u	/* PACKET3_SET_SH_REG_START */
/*
 * PACKET3_SET_UCONFIG_REG_START. soc15d.h's _END (0xc400) is below the
 * RLC/perfmon registers, which aqlprofile and PAL write with this packet
 * all the same (spec section 1): no upper bound is applied.
 */
#define UCONFIG_REG_START	0xc000u
/* WRITE_DATA: DST_SEL(0) register, WR_ONE_ADDR, WR_CONFIRM */
#define WD_DST_REG		(0u << 8)
#define WD_ONE_ADDR		(1u << 16)
#define WD_CONFIRM		(1u << 20)
/* EVENT_WRITE: EVENT_TYPE(CS_PARTIAL_FLUSH = 7, vega10_enum.h) |
 * EVENT_INDEX(4), as aqlprofile's BuildWriteWaitIdlePacket */
#define EV_CS_PARTIAL_FLUSH	(7u | (4u << 8))

/* ---- Mux RAM entries ([AQL] gfx9_cntx_prim::mux_info_t) --------------- */

/*
 * Entry i of a segment's mux RAM selects what the RLC writes into 16-bit
 * slot i of that segment's lines in every sample. Two sources that do not
 * share this tool's code read the RAM so: [AQL] spm_decode.cpp,
 * aqlprofile_spm_decode_stream_v1(), reads the counter whose mux entry
 * aqlprofile put at index k from 16-bit word k of the sample
 * (datain[index]), the high half of a 32-bit one from datain[index + 16],
 * SE j's copy from datain[index + global_num_line * 16 + se_num_line * 16
 * * j], and the 64-bit timestamp from word 0; and [MESA]
 * ac_emit_spm_muxsel() writes line l of a RAM at MUXSEL_ADDR = l *
 * AC_SPM_MUXSEL_LINE_SIZE (8 dwords, 16 entries of 16 bits): the address
 * counts dwords, 8 a line, which is the layout one write of the whole RAM
 * from address 0 (step 16) leaves. spm_decode_sample() reads slots so.
 */

/* counter id 5:0, SPM block 10:6, instance 15:11 */
#define MUXSEL(block, inst, id)	((uint16_t)(((inst) << 11) | ((block) << 6) | (id)))
#define MUXSEL_TIMESTAMP	0xf0f0u	/* [AQL] spm_timestamp_muxsel, [PAL] */
#define MUXSEL_UNUSED		0xffffu	/* [AQL] RAM fill, "end of muxsel" */
#define TIMESTAMP_SLOTS		4	/* [AQL] RLC_SPM_TIMESTAMP_SIZE16 */

/* SPM block ids ([AQL] gfx9_block_info.h enum SpmGlobalBlockId, SE ids) */
#define SPM_GLOBAL_CPC		1u
#define SPM_SE_SQG		9u

/* Sub-counters per block this library drives: CPC_PERFCOUNTER0 has four
 * select fields (CNTR_SEL0..3 [HDR]); SQ only SQ_PERFCOUNTER0, one 32-bit
 * SPM counter (spec Q5: one SQ counter until verified). */
#define CPC_SUBS		4
#define SQ_SUBS_32		1

/*
 * Sample delays (SCLK cycles), per GC: SAMPLE_DELAY_MAX and the delays of
 * the two blocks this library streams, CPC (one instance) and SQG (one
 * instance per SE, per SE its own). aqlprofile's tables: MI100 [AQL]
 * gfx9_factory.h Mi100Factory::GetSpmSampleDelayMax() and
 * gfx908_factory.cpp CpcBlockDelayValue, SqBlockDelayValue; MI200
 * gfx90a_factory.cpp Mi200Factory; MI300 gfx940_factory.cpp
 * Mi300Factory::GetSpmSampleDelayMax() and namespace gfx940. The numbers
 * are hardware facts, repeated here; what they do (the RLC waits for the
 * slowest block so that one sample's values belong to one interval) is
 * aqlprofile's model, not verified here.
 */
static const struct spm_delays {
	enum spm_gc_version gc;
	uint8_t max;		/* RLC_SPM_PERFMON_SAMPLE_DELAY_MAX */
	uint8_t cpc;		/* RLC_SPM_CPC_PERFMON_SAMPLE_DELAY */
	uint8_t sqg[SPM_MAX_SE];	/* RLC_SPM_SQG_PERFMON_SAMPLE_DELAY, per SE */
} spm_delay_table[] = {
	{ SPM_GC_9_4_1, 0x34, 0x30,
	  { 0x12, 0x1c, 0x20, 0x2c, 0x16, 0x1c, 0x24, 0x2c } },
	{ SPM_GC_9_4_2, 0x3e, 0x36,
	  { 0x1a, 0x22, 0x28, 0x32, 0x1f, 0x24, 0x2c, 0x34 } },
	{ SPM_GC_9_4_3, 0x27, 0x1f, { 0x10, 0x1d, 0x21, 0x12 } },
};

static const struct spm_delays *spm_delays_of(enum spm_gc_version gc)
{
	size_t i;

	for (i = 0; i < sizeof(spm_delay_table) / sizeof(spm_delay_table[0]); i++)
		if (spm_delay_table[i].gc == gc)
			return &spm_delay_table[i];
	return NULL;
}

/* The largest layout (timestamp + four 16-bit CPC counters, or fillers +
 * two 32-bit ones) fits one even and one odd line. */
_Static_assert(TIMESTAMP_SLOTS + CPC_SUBS / 2 <= SPM_LINE_SLOTS &&
	       SPM_MAX_SEG_LINES == 2, "layout exceeds spm_config's mux RAM");

/* ---- Counter table ----------------------------------------------------- */

/* Select values: vega10_enum.h (CPC_PERFCOUNT_SEL, SQ_PERF_SEL) [HDR]. */
static const struct spm_counter_info counter_table[] = {
	{ "CPC_ALWAYS_COUNT", SPM_SEG_GLOBAL, SPM_GLOBAL_CPC, 0x00, 16, 0,
	  "CPC clock cycles in the interval (the streamed cycle counter)",
	  "cycles" },
	{ "CPC_ME1_BUSY_FOR_PACKET_DECODE", SPM_SEG_GLOBAL, SPM_GLOBAL_CPC,
	  0x0d, 16, 0, "cycles ME1 (compute) is busy decoding packets",
	  "cycles" },
	{ "CPC_ME2_BUSY_FOR_PACKET_DECODE", SPM_SEG_GLOBAL, SPM_GLOBAL_CPC,
	  0x15, 16, 0, "cycles ME2 (compute) is busy decoding packets",
	  "cycles" },
	{ "CPC_ME1_STALL_ON_DATA_FROM_ROQ", SPM_SEG_GLOBAL, SPM_GLOBAL_CPC,
	  0x0b, 16, 0, "cycles ME1 stalls waiting for data from the ROQ",
	  "cycles" },
	{ "CPC_UTCL1_STALL_ON_TRANSLATION", SPM_SEG_GLOBAL, SPM_GLOBAL_CPC,
	  0x18, 16, 0, "cycles CPC's UTCL1 stalls on a translation",
	  "cycles" },
	{ "SQ_WAVES", SPM_SEG_SE, SPM_SE_SQG, 0x04, 32, 1,
	  "waves started, per SE", "waves" },
	{ "SQ_BUSY_CYCLES", SPM_SEG_SE, SPM_SE_SQG, 0x03, 32, 1,
	  "cycles the SQ reports busy, per SE", "cycles" },
};

const struct spm_counter_info *spm_counter_table(unsigned int *count)
{
	if (count)
		*count = sizeof(counter_table) / sizeof(counter_table[0]);
	return counter_table;
}

const struct spm_counter_info *spm_counter_find(const char *name)
{
	size_t i;

	if (!name)
		return NULL;
	for (i = 0; i < sizeof(counter_table) / sizeof(counter_table[0]); i++)
		if (!strcasecmp(counter_table[i].name, name))
			return &counter_table[i];
	return NULL;
}

/* ---- Layout ------------------------------------------------------------ */

/*
 * A segment's entries go into two lists: even lines (0, 2, ..) and odd
 * lines (1, 3, ..); list position p is slot 32 * (p / 16) + p % 16 of the
 * segment, + 16 for the odd list ([AQL] spm_mux_ram_idx_incr, [PAL]
 * CalculateMuxRam: even sub-counters into even lines, odd into odd).
 * Segment lines = 2 * max(ceil(even / 16), ceil(odd / 16)) ([AQL] Begin,
 * [PAL] CalculateSegmentSize).
 */
struct seg_builder {
	uint16_t *ram;
	unsigned int n_even, n_odd;
};

static unsigned int list_slot(unsigned int pos, int odd)
{
	return 32 * (pos / 16) + pos % 16 + (odd ? 16 : 0);
}

static void seg_put(struct seg_builder *b, int odd, uint16_t entry,
		    unsigned int *slot)
{
	unsigned int *n = odd ? &b->n_odd : &b->n_even;

	*slot = list_slot(*n, odd);
	b->ram[*slot] = entry;
	(*n)++;
}

/* A 32-bit counter: low half in the even list, high half in the odd list
 * at the same position; the shorter list is padded first ([AQL] Begin: the
 * odd line's 4 fillers opposite the timestamp, has_global_32bit_spm). */
static void seg_put32(struct seg_builder *b, uint16_t lo, uint16_t hi,
		      unsigned int *slot)
{
	unsigned int dummy;

	while (b->n_odd < b->n_even)
		seg_put(b, 1, MUXSEL_UNUSED, &dummy);
	while (b->n_even < b->n_odd)
		seg_put(b, 0, MUXSEL_UNUSED, &dummy);
	seg_put(b, 0, lo, slot);
	seg_put(b, 1, hi, &dummy);
}

static unsigned int seg_lines(const struct seg_builder *b)
{
	unsigned int e = (b->n_even + 15) / 16, o = (b->n_odd + 15) / 16;

	return 2 * (e > o ? e : o);
}

static unsigned int round_interval(unsigned int interval)
{
	uint64_t r;

	if (!interval)
		return SPM_INTERVAL_DEFAULT;	/* [AQL] default_spm_params */
	/* [AQL] spm_v2.cpp rounds to a multiple of 32, (x + 16) & ~31;
	 * Mesa asserts >= 32; the field is 16 bits */
	r = ((uint64_t)interval + 16) & ~(uint64_t)31;
	if (r < SPM_INTERVAL_MIN)
		r = SPM_INTERVAL_MIN;
	if (r > SPM_INTERVAL_MAX)
		r = SPM_INTERVAL_MAX;
	return (unsigned int)r;
}

unsigned int spm_gc_num_se(enum spm_gc_version gc)
{
	switch (gc) {
	case SPM_GC_9_4_1:
	case SPM_GC_9_4_2:
		/* 8 SEs: aqlprofile writes SEGMENT_SIZE_CORE1 (SE4..7) for
		 * MI100 and MI200 (spm_has_core1); its SQG delay tables have
		 * 8 entries ([AQL] gfx908/gfx90a_factory.cpp) */
		return 8;
	case SPM_GC_9_4_3:
		/* 4 SEs per XCC: aqlprofile's MI300 delay tables have 4
		 * ([AQL] gfx940_factory.cpp), and it lays a sample out for
		 * se_number = all SEs / XCCs ([AQL] spm_v2.cpp) */
		return 4;
	default:
		return 0;
	}
}

int spm_config_build(struct spm_config *cfg, enum spm_gc_version gc,
		     unsigned int num_se, const struct spm_counter_req *reqs,
		     unsigned int n, unsigned int interval)
{
	const struct spm_counter_info *info[SPM_MAX_COUNTERS];
	unsigned int bits[SPM_MAX_COUNTERS];
	unsigned int cpc_bits = 0, sq_bits = 0, cpc_n = 0, sq_n = 0;
	struct seg_builder g, s;
	unsigned int i, j, vi, dummy;
	uint32_t cpc_ev[CPC_SUBS] = { 0 };

	if (!cfg || (n && !reqs))
		return -EINVAL;
	memset(cfg, 0, sizeof(*cfg));
	cfg->num_se = spm_gc_num_se(gc);
	if (!cfg->num_se)
		return -EINVAL;
	/* The device's SE count: the delay tables and the segment registers
	 * are written for the GC's; another one is not laid out */
	if (num_se && num_se != cfg->num_se) {
		cfg->num_se = 0;
		return -ERANGE;
	}
	if (n > SPM_MAX_COUNTERS)
		return -E2BIG;

	for (i = 0; i < n; i++) {
		info[i] = spm_counter_find(reqs[i].name);
		if (!info[i])
			return -EINVAL;
		for (j = 0; j < i; j++)
			if (info[j] == info[i])
				return -EINVAL;
		bits[i] = reqs[i].bits ? reqs[i].bits : info[i]->default_bits;
		if (bits[i] != 16 && bits[i] != 32)
			return -EINVAL;
		if (bits[i] == 16 && info[i]->only_32bit)
			return -EINVAL;
		/* One SPM_MODE per select register: one width per block
		 * (CPC_PERFCOUNTER0_SELECT.SPM_MODE covers SEL0..SEL3) */
		if (info[i]->spm_block == SPM_GLOBAL_CPC) {
			if (cpc_bits && cpc_bits != bits[i])
				return -EINVAL;
			cpc_bits = bits[i];
			cpc_n++;
		} else {
			if (sq_bits && sq_bits != bits[i])
				return -EINVAL;
			sq_bits = bits[i];
			sq_n++;
		}
	}
	/* CPC: four 16-bit sub-counters, or two 32-bit ones (each takes the
	 * ids k and k + 1); SQ: one 32-bit counter */
	if (cpc_n > (cpc_bits == 32 ? CPC_SUBS / 2 : CPC_SUBS) ||
	    sq_n > SQ_SUBS_32)
		return -E2BIG;

	cfg->gc = gc;
	cfg->interval_requested = interval;
	cfg->interval = round_interval(interval);
	cfg->num_counters = n;

	for (i = 0; i < SPM_MUX_ENTRIES(SPM_MAX_SEG_LINES); i++)
		cfg->global_mux[i] = cfg->se_mux[i] = MUXSEL_UNUSED;
	g.ram = cfg->global_mux;
	g.n_even = g.n_odd = 0;
	s.ram = cfg->se_mux;
	s.n_even = s.n_odd = 0;
	/* Global slots 0..3: the 64-bit timestamp ([AQL], [PAL]) */
	for (i = 0; i < TIMESTAMP_SLOTS; i++)
		seg_put(&g, 0, MUXSEL_TIMESTAMP, &dummy);

	cpc_n = 0;
	vi = 0;
	for (i = 0; i < n; i++) {
		struct spm_counter_slot *c = &cfg->counters[i];

		c->info = info[i];
		c->bits = bits[i];
		c->value_index = vi;
		if (info[i]->segment == SPM_SEG_GLOBAL) {
			/* sub-counters in request order: 16-bit 0, 1, 2, 3;
			 * 32-bit 0, 2 (instance 0 of CPC) */
			c->sub = c->bits == 32 ? 2 * cpc_n : cpc_n;
			cpc_n++;
			cpc_ev[c->sub] = info[i]->event;
			c->muxsel_lo = MUXSEL(info[i]->spm_block, 0, c->sub);
			if (c->bits == 32) {
				c->muxsel_hi = MUXSEL(info[i]->spm_block, 0,
						      c->sub + 1);
				seg_put32(&g, c->muxsel_lo, c->muxsel_hi,
					  &c->slot);
			} else {
				seg_put(&g, c->sub & 1, c->muxsel_lo, &c->slot);
			}
			c->num_values = 1;
		} else {
			c->sub = 0;	/* SQ_PERFCOUNTER0, ids 0/1 */
			c->muxsel_lo = MUXSEL(info[i]->spm_block, 0, 0);
			c->muxsel_hi = MUXSEL(info[i]->spm_block, 0, 1);
			seg_put32(&s, c->muxsel_lo, c->muxsel_hi, &c->slot);
			c->num_values = cfg->num_se;
			cfg->sq_used = 1;
			/* [AQL] sq_spm_select_value: all banks, clients and
			 * SIMDs, SPM_MODE 32BIT_CLAMP */
			cfg->sq_select = info[i]->event | SQ_SEL_BANK_ALL |
				SQ_SEL_CLIENT_ALL |
				(SPM_MODE_32BIT_CLAMP << PERF_SPM_MODE_SHIFT) |
				SQ_SEL_SIMD_ALL;
		}
		vi += c->num_values;
	}
	cfg->num_values = vi;

	if (cpc_n) {
		/* [AQL] spm_even/odd_select_value: even sub-counters in the
		 * low select field, odd ones in the next; 0/1 in SELECT,
		 * 2/3 in SELECT1; SPM_MODE in SELECT only [HDR] */
		cfg->cpc_used = 1;
		cfg->cpc_select = (cpc_ev[0] << CPC_SEL_EVEN_SHIFT) |
			(cpc_ev[1] << CPC_SEL_ODD_SHIFT) |
			((cpc_bits == 32 ? SPM_MODE_32BIT_CLAMP :
			  SPM_MODE_16BIT_CLAMP) << PERF_SPM_MODE_SHIFT);
		cfg->cpc_select1 = (cpc_ev[2] << CPC_SEL_EVEN_SHIFT) |
			(cpc_ev[3] << CPC_SEL_ODD_SHIFT);
		cfg->cpc_select1_used = cpc_n > (cpc_bits == 32 ? 1u : 2u);
	}

	cfg->global_lines = seg_lines(&g);
	cfg->se_lines = seg_lines(&s);
	cfg->total_lines = cfg->global_lines + cfg->num_se * cfg->se_lines;
	/*
	 * PERFMON_SEGMENT_SIZE = lines of global + SE0..SE3; SE3's count is
	 * the remainder ([PAL] CalculateSegmentSize; [AQL]
	 * rlc_spm_perfmon_segment_size_value: global + 4 * se). On 8-SE parts
	 * _CORE1 holds SE4..SE7 and their total ([AQL]
	 * rlc_spm_perfmon_segment_size_core1_value).
	 */
	cfg->segment_size = (cfg->global_lines + 4 * cfg->se_lines) |
		(cfg->global_lines << SEG_GLOBAL_SHIFT) |
		(cfg->se_lines << SEG_SE0_SHIFT) |
		(cfg->se_lines << SEG_SE1_SHIFT) |
		(cfg->se_lines << SEG_SE2_SHIFT);
	if (cfg->num_se == 8)
		cfg->segment_size_core1 = (4 * cfg->se_lines) |
			(cfg->se_lines << CORE1_SE4_SHIFT) |
			(cfg->se_lines << CORE1_SE5_SHIFT) |
			(cfg->se_lines << CORE1_SE6_SHIFT) |
			(cfg->se_lines << CORE1_SE7_SHIFT);
	return 0;
}

/* ---- PM4 emission ------------------------------------------------------ */

struct pm4 {
	uint32_t *ib;
	size_t max, n;
};

static void emit(struct pm4 *p, uint32_t dw)
{
	if (p->ib && p->n < p->max)
		p->ib[p->n] = dw;
	p->n++;
}

/* SET_UCONFIG_REG, one register: [AQL] BuildWriteUConfigRegPacket */
static void set_uconfig(struct pm4 *p, uint32_t reg, uint32_t val)
{
	emit(p, PM4_TYPE3(OP_SET_UCONFIG_REG, 1));
	emit(p, reg - UCONFIG_REG_START);
	emit(p, val);
}

/* SET_SH_REG, one register: [AQL] BuildWriteShRegPacket */
static void set_sh(struct pm4 *p, uint32_t reg, uint32_t val)
{
	emit(p, PM4_TYPE3(OP_SET_SH_REG, 1));
	emit(p, reg - SH_REG_START);
	emit(p, val);
}

/* EVENT_WRITE CS_PARTIAL_FLUSH: [AQL] BuildBarrierCommand */
static void cs_partial_flush(struct pm4 *p)
{
	emit(p, PM4_TYPE3(OP_EVENT_WRITE, 0));
	emit(p, EV_CS_PARTIAL_FLUSH);
}

/*
 * WRITE_DATA of a mux RAM into its DATA register, address not incremented
 * (the RLC steps its ADDR), write confirmed ([AQL] BuildWriteRegDataPacket
 * with wait; [MESA] ac_emit_spm_muxsel also confirms). Two entries a
 * dword, the lower slot in bits 15:0. SPM_MUX_ENTRIES(lines) entries:
 * every slot's and two 0xffff after them that end the RAM, as aqlprofile
 * writes them ([AQL] Begin: mux_ram resized to ss * 16 + 2, filled with
 * 0xFFFF, "end of muxsel", written as size / 2 dwords; [AQLOLD] the
 * same), so lines * 8 + 1 dwords, also for a segment of no lines.
 */
static void write_mux(struct pm4 *p, uint32_t data_reg, const uint16_t *ram,
		      unsigned int lines)
{
	unsigned int ndw = SPM_MUX_ENTRIES(lines) / 2, i;

	emit(p, PM4_TYPE3(OP_WRITE_DATA, 2 + ndw));
	emit(p, WD_DST_REG | WD_ONE_ADDR | WD_CONFIRM);
	emit(p, data_reg);
	emit(p, 0);
	for (i = 0; i < ndw; i++)
		emit(p, (uint32_t)ram[2 * i] | ((uint32_t)ram[2 * i + 1] << 16));
}

static int has_perfmon_clk(const struct spm_config *cfg)
{
	/* RLC_PERFMON_CLK_CNTL: gc_9_0 (used for 9.4.1) and gc_9_4_2 define
	 * it, gc_9_4_3 does not (spec Q4) */
	return cfg->gc != SPM_GC_9_4_3;
}

static int pm4_done(const struct pm4 *p)
{
	if (p->ib && p->n > p->max)
		return -ENOSPC;
	return (int)p->n;	/* at most a few hundred dwords */
}

static uint32_t cp_perfmon_spm(unsigned int state)
{
	/*
	 * SPM_PERFMON_STATE; the whole register is written, so PERFMON_STATE
	 * (the legacy counters) becomes 0, their DISABLE_AND_RESET, as with
	 * aqlprofile's cp_perfmon_cntl_spm_start/stop_value. The kernel's
	 * hooks keep that field (gfx_v9_4_3.c); a REG_RMW on the compute
	 * engine would too, if it is supported there (not verified).
	 */
	return state << CP_PERFMON_SPM_STATE_SHIFT;
}

int spm_program_start(const struct spm_config *cfg, uint32_t *ib,
		      size_t max_dw)
{
	struct pm4 p = { ib, max_dw, 0 };
	const struct spm_delays *d;

	if (!cfg || !cfg->global_lines)
		return -EINVAL;
	d = spm_delays_of(cfg->gc);
	if (!d)
		return -EINVAL;
	/* Order: [AQL] GpuSpmBuilder::Begin (spec section 4, START IB) */

	/* 1. RLC_PERFMON_CLK_CNTL.PERFMON_CLOCK_STATE = 1 ([AQL] Begin, GFX9) */
	if (has_perfmon_clk(cfg))
		set_uconfig(&p, R_RLC_PERFMON_CLK_CNTL, 1);
	/* 2. GRBM_GFX_INDEX broadcast ([AQL] grbm_broadcast_value) */
	set_uconfig(&p, R_GRBM_GFX_INDEX, GRBM_BROADCAST);
	/* 3. wait idle ([AQL] BuildWriteWaitIdlePacket) */
	cs_partial_flush(&p);
	/* 4. CP_PERFMON_CNTL: SPM STOP_COUNTING, not DISABLE_AND_RESET, which
	 * would reset the RLC's write pointer: the kernel owns that ([AQL]
	 * Begin comment, cp_perfmon_cntl_spm_stop_value) */
	set_uconfig(&p, R_CP_PERFMON_CNTL, cp_perfmon_spm(CP_PERFMON_STATE_STOP));
	/* 5. */
	cs_partial_flush(&p);
	/* 6. RLC_SPM_PERFMON_CNTL: interval, ring mode 0 ([AQL]
	 * rlc_spm_perfmon_cntl_value has ring mode 3; 0 is [SER]'s, [MESA]'s
	 * and [PAL]'s: this write replaces the kernel's register) */
	set_uconfig(&p, R_RLC_SPM_PERFMON_CNTL,
		    (cfg->interval << RLC_SPM_INTERVAL_SHIFT) |
		    (RLC_SPM_RING_MODE_NO_STALL << RLC_SPM_RING_MODE_SHIFT));
	/* 7. RLC_SPM_PERFMON_SAMPLE_DELAY_MAX, aqlprofile's value for the
	 * part ([AQL] Begin writes it when the factory's
	 * GetSpmSampleDelayMax() is not 0, which it is on all three) */
	set_uconfig(&p, R_RLC_SPM_PERFMON_SAMPLE_DELAY_MAX, d->max);
	/* 8. the delay of each block that has counters, per instance with
	 * GRBM_GFX_INDEX naming it ([AQL] Begin: a global block's instance j
	 * at grbm_inst_se_sh_index_value(j, 0, 0), an SE block's at
	 * grbm_inst_se_index_value(j, se) = instance j, SE se, SH broadcast,
	 * for every SE; [AQLOLD] the same per counter), then broadcast again.
	 * CPC and SQG have one instance each (gfx9_block_table.h) */
	if (cfg->cpc_used) {
		set_uconfig(&p, R_GRBM_GFX_INDEX, 0);	/* inst 0, SE 0, SH 0 */
		set_uconfig(&p, R_RLC_SPM_CPC_PERFMON_SAMPLE_DELAY, d->cpc);
	}
	if (cfg->sq_used) {
		unsigned int se;

		for (se = 0; se < cfg->num_se; se++) {
			set_uconfig(&p, R_GRBM_GFX_INDEX,
				    GRBM_SE_INDEX(se) | GRBM_SH_BCAST);
			set_uconfig(&p, R_RLC_SPM_SQG_PERFMON_SAMPLE_DELAY,
				    d->sqg[se]);
		}
	}
	if (cfg->cpc_used || cfg->sq_used)
		set_uconfig(&p, R_GRBM_GFX_INDEX, GRBM_BROADCAST);

	/* 9./10. CPC selects with GRBM_GFX_INDEX = instance 0, SE and SH
	 * broadcast ([AQL] grbm_inst_index_value, spm_select_value) */
	if (cfg->cpc_used) {
		set_uconfig(&p, R_GRBM_GFX_INDEX, GRBM_SE_BCAST | GRBM_SH_BCAST);
		set_uconfig(&p, R_CPC_PERFCOUNTER0_SELECT, cfg->cpc_select);
		if (cfg->cpc_select1_used)
			set_uconfig(&p, R_CPC_PERFCOUNTER0_SELECT1,
				    cfg->cpc_select1);
	}
	/* 11. SQ: broadcast, mask, control, select ([AQL] sq_mask_value,
	 * sq_control_value, sq_spm_select_value) */
	if (cfg->sq_used) {
		set_uconfig(&p, R_GRBM_GFX_INDEX, GRBM_BROADCAST);
		set_uconfig(&p, R_SQ_PERFCOUNTER_MASK, 0xffffffffu);
		/* compute waves only (a choice: aqlprofile enables the
		 * graphics stages too); VMID_MASK 31:16 all ones on every GC
		 * version, as aqlprofile writes it also where the header
		 * (gc_9_0, MI100) names no such field */
		set_uconfig(&p, R_SQ_PERFCOUNTER_CTRL,
			    SQ_CTRL_CS_EN | SQ_CTRL_VMID_ALL);
		set_uconfig(&p, R_SQ_PERFCOUNTER0_SELECT, cfg->sq_select);
	}
	/* 12. broadcast again ([AQL]) */
	set_uconfig(&p, R_GRBM_GFX_INDEX, GRBM_BROADCAST);
	/* 13. segment sizes ([AQL] rlc_spm_perfmon_segment_size_value, [PAL]
	 * CalculateSegmentSize) */
	set_uconfig(&p, R_RLC_SPM_PERFMON_SEGMENT_SIZE, cfg->segment_size);
	/* 14. 8-SE parts: SE4..SE7 ([AQL] spm_has_core1); always written so
	 * that no earlier profile's lines stay in the sample */
	if (cfg->num_se == 8)
		set_uconfig(&p, R_RLC_SPM_PERFMON_SEGMENT_SIZE_CORE1,
			    cfg->segment_size_core1);
	/* 15./16. global mux RAM from address 0 ([AQL] Begin, [PAL]
	 * WriteSetupCommands) */
	set_uconfig(&p, R_RLC_SPM_GLOBAL_MUXSEL_ADDR, 0);
	write_mux(&p, R_RLC_SPM_GLOBAL_MUXSEL_DATA, cfg->global_mux,
		  cfg->global_lines);
	/* 17. SE mux RAM, broadcast to every SE (one layout for all SEs;
	 * [AQL] writes it under broadcast); also without SE counters: then
	 * only its two end entries, which is what aqlprofile writes then
	 * too, so that no earlier profile's SE entries stay in the RAM */
	set_uconfig(&p, R_RLC_SPM_SE_MUXSEL_ADDR, 0);
	write_mux(&p, R_RLC_SPM_SE_MUXSEL_DATA, cfg->se_mux, cfg->se_lines);
	/* 18. both mux addresses back to 0 ([AQL] "pm4SPM code") */
	set_uconfig(&p, R_RLC_SPM_GLOBAL_MUXSEL_ADDR, 0);
	set_uconfig(&p, R_RLC_SPM_SE_MUXSEL_ADDR, 0);
	/* 19. */
	cs_partial_flush(&p);
	/* 20. COMPUTE_PERFCOUNT_ENABLE.PERFCOUNT_ENABLE = 1 ([AQL]
	 * cp_perfcount_enable_value). It is per queue (an MQD field): this
	 * sets it for the queue this stream runs on, and aqlprofile sets it in
	 * the profiled queue; whether SQ counts work of other queues without
	 * it only a GPU can tell */
	set_sh(&p, R_COMPUTE_PERFCOUNT_ENABLE, 1);
	/* 21. CP_PERFMON_CNTL: SPM START_COUNTING ([AQL]
	 * cp_perfmon_cntl_spm_start_value) */
	set_uconfig(&p, R_CP_PERFMON_CNTL,
		    cp_perfmon_spm(CP_PERFMON_STATE_START));
	/* 22. */
	cs_partial_flush(&p);
	return pm4_done(&p);
}

int spm_program_stop(const struct spm_config *cfg, uint32_t *ib,
		     size_t max_dw)
{
	struct pm4 p = { ib, max_dw, 0 };

	if (!cfg || !cfg->global_lines)
		return -EINVAL;
	/* Order: [AQL] GpuSpmBuilder::End (spec section 4, STOP IB); the
	 * optional forced last sample (interval 1) is not written */
	set_uconfig(&p, R_GRBM_GFX_INDEX, GRBM_BROADCAST);
	cs_partial_flush(&p);
	/* SPM STOP_COUNTING; DISABLE_AND_RESET is the kernel's, at RELEASE
	 * ([SER] gfx_v9_4_3_spm_stop) */
	set_uconfig(&p, R_CP_PERFMON_CNTL, cp_perfmon_spm(CP_PERFMON_STATE_STOP));
	/* RLC_PERFMON_CLK_CNTL off again ([AQL] End, GFX9; not on 9.4.3) */
	if (has_perfmon_clk(cfg))
		set_uconfig(&p, R_RLC_PERFMON_CLK_CNTL, 0);
	return pm4_done(&p);
}

/* ---- Decoding ---------------------------------------------------------- */

size_t spm_sample_size(const struct spm_config *cfg)
{
	return cfg ? (size_t)cfg->total_lines * SPM_LINE_BYTES : 0;
}

static uint32_t slot16(const unsigned char *seg, unsigned int slot)
{
	return (uint32_t)seg[2 * slot] | ((uint32_t)seg[2 * slot + 1] << 8);
}

int spm_decode_sample(const struct spm_config *cfg, const void *sample,
		      uint64_t *timestamp, uint64_t *values)
{
	const unsigned char *b = sample, *seg;
	unsigned int i, se, k;

	if (!cfg || !sample || !cfg->global_lines ||
	    (cfg->num_values && !values))
		return -EINVAL;
	if (timestamp) {
		uint64_t ts = 0;

		/* slots 0..3, little-endian ([AQL]
		 * aqlprofile_spm_decode_stream_v1) */
		for (k = 0; k < TIMESTAMP_SLOTS; k++)
			ts |= (uint64_t)slot16(b, k) << (16 * k);
		*timestamp = ts;
	}
	for (i = 0; i < cfg->num_counters; i++) {
		const struct spm_counter_slot *c = &cfg->counters[i];

		for (se = 0; se < c->num_values; se++) {
			uint64_t v;

			if (c->info->segment == SPM_SEG_GLOBAL)
				seg = b;
			else	/* SE j after global and SE0..j-1 */
				seg = b + SPM_LINE_BYTES *
					(cfg->global_lines + se * cfg->se_lines);
			v = slot16(seg, c->slot);
			if (c->bits == 32)
				v |= (uint64_t)slot16(seg, c->slot + 16) << 16;
			values[c->value_index + se] = v;
		}
	}
	return 0;
}
