// SPDX-License-Identifier: MIT
/*
 * Copyright 2026 The amdgpu profiler series authors
 *
 * spm_program.c offline: the start/stop PM4 streams, read back by the
 * test-only PM4 decoder of tests/spm_model.c (written from the packet
 * format, amdgpu/soc15d.h, alone, against tables of the base tree's
 * register offsets) and checked write by write; its RLC model takes the
 * decoded writes (selects, segment sizes, mux RAMs) and builds the lines
 * of one sample from counter values, which spm_decode_sample() must turn
 * back into those values; and spm_config_build()'s input checks. Nothing
 * here or in spm_model.c shares code with spm_program.c. The fake kernel
 * runs submitted IBs through the same model (tests/fake_amdgpu.c).
 */
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <string.h>
#include <strings.h>

#include "spm_model.h"
#include "spm_program.h"
#include "unit.h"

#define t_write spm_model_write
#define T_MAX_WRITES 512

/*
 * aqlprofile's sample delays (rocprofiler-sdk lib/aqlprofile/core/:
 * gfx9_factory.h Mi100Factory and gfx908_factory.cpp for MI100,
 * gfx90a_factory.cpp for MI200, gfx940_factory.cpp for MI300;
 * GetSpmSampleDelayMax(), CpcBlockDelayValue, SqBlockDelayValue), written
 * down here from those files, not from spm_program.c.
 */
static const struct t_delays {
	enum spm_gc_version gc;
	uint32_t max, cpc, sqg[8];
} t_delays[] = {
	{ SPM_GC_9_4_1, 0x34, 0x30, { 0x12, 0x1c, 0x20, 0x2c, 0x16, 0x1c, 0x24, 0x2c } },
	{ SPM_GC_9_4_2, 0x3e, 0x36, { 0x1a, 0x22, 0x28, 0x32, 0x1f, 0x24, 0x2c, 0x34 } },
	{ SPM_GC_9_4_3, 0x27, 0x1f, { 0x10, 0x1d, 0x21, 0x12 } },
};

static const struct t_delays *t_delays_of(enum spm_gc_version gc)
{
	unsigned int i;

	for (i = 0; i < sizeof(t_delays) / sizeof(t_delays[0]); i++)
		if (t_delays[i].gc == gc)
			return &t_delays[i];
	return NULL;
}

/*
 * The mux RAMs as the model holds them: each written from address 0 with
 * lines * 8 + 1 dwords (every slot and two 0xffff entries that end the
 * RAM, aqlprofile's "end of muxsel"), the SE RAM also without SE lines.
 */
static void t_mux_ends(const struct spm_model_rlc *m, unsigned int glines,
		       unsigned int selines)
{
	CHECK(m->gram_dw == glines * 8 + 1);
	CHECK(m->seram_dw == selines * 8 + 1);
	CHECK(m->gram[glines * 16] == 0xffff && m->gram[glines * 16 + 1] == 0xffff);
	CHECK(m->seram[selines * 16] == 0xffff && m->seram[selines * 16 + 1] == 0xffff);
	if (m->gram_dw != glines * 8 + 1 || m->seram_dw != selines * 8 + 1)
		fprintf(stderr, "  mux RAM dwords: global %u (lines %u), SE %u (lines %u)\n",
			m->gram_dw, glines, m->seram_dw, selines);
}

/* The sample delays as the model holds them, against aqlprofile's */
static void t_delays_check(const struct spm_model_rlc *m, enum spm_gc_version gc,
			   unsigned int num_se, int cpc, int sq)
{
	const struct t_delays *d = t_delays_of(gc);
	unsigned int se;

	CHECK(d != NULL);
	if (!d)
		return;
	CHECK(m->delay_max_seen && m->delay_max == d->max);
	/* CPC: instance 0 of SE 0, SH 0, no broadcast (aqlprofile's
	 * grbm_inst_se_sh_index_value(0, 0, 0)) */
	CHECK(m->cpc_delay_seen == cpc);
	if (cpc)
		CHECK(m->cpc_delay == d->cpc && m->cpc_delay_grbm == 0);
	CHECK(m->sqg_delay_seen == (sq ? (1u << num_se) - 1 : 0));
	for (se = 0; sq && se < num_se; se++) {
		CHECK(m->sqg_delay[se] == d->sqg[se]);
		if (m->sqg_delay[se] != d->sqg[se])
			fprintf(stderr, "  SQG delay SE %u: %#x, want %#x\n", se,
				m->sqg_delay[se], d->sqg[se]);
	}
}

static int t_decode_stream(const struct spm_config *cfg, int stop,
			   struct t_write *w)
{
	uint32_t ib[1024];
	int n = stop ? spm_program_stop(cfg, ib, 1024) :
		spm_program_start(cfg, ib, 1024);

	CHECK(n > 0);
	if (n <= 0)
		return -1;
	return spm_model_decode(ib, (size_t)n, w, T_MAX_WRITES);
}

static int t_match(const struct t_write *w, int nw,
		   const struct t_write *exp, int ne)
{
	int i;

	if (nw != ne) {
		fprintf(stderr, "  %d writes, expected %d\n", nw, ne);
		return 0;
	}
	for (i = 0; i < ne; i++)
		if (w[i].reg != exp[i].reg || w[i].val != exp[i].val) {
			fprintf(stderr, "  write %d: %#x <- %#x, expected %#x <- %#x\n",
				i, w[i].reg, w[i].val, exp[i].reg, exp[i].val);
			return 0;
		}
	return 1;
}

/* Rules every stream keeps. */
static void t_stream_rules(const struct spm_config *cfg, const struct t_write *w,
			   int nw)
{
	int i;

	CHECK(nw > 0);
	for (i = 0; i < nw; i++) {
		uint32_t r = w[i].reg;

		/* SPM_PERFMON_STATE (7:4) never DISABLE_AND_RESET (0) */
		if (r == T_CP_PERFMON_CNTL)
			CHECK(((w[i].val >> 4) & 0xf) != 0);
		/* ring mode (13:12) 0 */
		if (r == T_RLC_SPM_PERFMON_CNTL)
			CHECK((w[i].val & 0x3000) == 0);
		/* the kernel's registers */
		CHECK(r != T_RLC_SPM_PERFMON_RING_BASE_LO &&
		      r != T_RLC_SPM_PERFMON_RING_BASE_HI &&
		      r != T_RLC_SPM_PERFMON_RING_SIZE &&
		      r != T_RLC_SPM_RING_RDPTR &&
		      r != T_RLC_SPM_SEGMENT_THRESHOLD &&
		      r != T_RLC_SPM_MC_CNTL && r != T_RLC_SPM_INT_CNTL);
		/* not in gc_9_4_3_offset.h */
		if (cfg->gc == SPM_GC_9_4_3)
			CHECK(r != T_RLC_PERFMON_CLK_CNTL &&
			      r != T_RLC_SPM_PERFMON_SEGMENT_SIZE_CORE1);
		if (r == T_EVENT)
			CHECK(w[i].val == CS_PARTIAL_FLUSH_EV);
	}
}

/* Program, model, decode: the values come back. */
static void t_round_trip(enum spm_gc_version gc, const char *const *names,
			 const unsigned int *bits, unsigned int n)
{
	struct spm_counter_req req[SPM_MAX_COUNTERS];
	struct spm_config cfg;
	struct t_write w[T_MAX_WRITES];
	struct spm_model_rlc m;
	unsigned char buf[4096 + 1];
	uint64_t ts = 0x0123456789abcdefull + n, got_ts = 0;
	uint64_t values[SPM_MAX_VALUES];
	unsigned int i, j, num_se = gc == SPM_GC_9_4_3 ? 4 : 8;
	size_t size;
	int nw;

	for (i = 0; i < n; i++) {
		req[i].name = names[i];
		req[i].bits = bits ? bits[i] : 0;
	}
	CHECK(spm_config_build(&cfg, gc, 0, req, n, 4096) == 0);
	nw = t_decode_stream(&cfg, 0, w);
	CHECK(nw > 0);
	if (nw <= 0)
		return;
	t_stream_rules(&cfg, w, nw);
	spm_model_reset(&m);
	spm_model_apply(&m, w, nw);
	CHECK((m.spm_cntl >> 16) == 4096);
	CHECK(((m.cp_perfmon >> 4) & 0xf) == 1);	/* SPM started */
	{
		int cpc = 0, sq = 0;

		for (i = 0; i < n; i++) {
			if (!strncasecmp(names[i], "SQ_", 3))
				sq = 1;
			else
				cpc = 1;
		}
		t_delays_check(&m, gc, num_se, cpc, sq);
		t_mux_ends(&m, cfg.global_lines, cfg.se_lines);
	}
	/* at an odd offset: the decoder takes any alignment */
	size = spm_model_sample(&m, num_se, ts, 0, 0, buf + 1, sizeof(buf) - 1);
	CHECK(m.violations == 0);
	if (m.violations)
		fprintf(stderr, "  model: %u violations, first: %s\n",
			m.violations, m.violation);
	CHECK(size == spm_sample_size(&cfg));
	CHECK(size > 0);
	memset(values, 0xa5, sizeof(values));
	CHECK(spm_decode_sample(&cfg, buf + 1, &got_ts, values) == 0);
	CHECK(got_ts == ts);
	for (i = 0; i < n; i++) {
		const struct spm_counter_slot *c = &cfg.counters[i];
		int b32 = (bits && bits[i] == 32) || !strncmp(names[i], "SQ_", 3);

		for (j = 0; j < spm_model_num_events; j++) {
			const struct spm_model_event *ev = &spm_model_events[j];
			unsigned int se, nv = ev->sq ? num_se : 1;

			if (strcasecmp(ev->name, names[i]))
				continue;
			CHECK(c->num_values == nv);
			for (se = 0; se < nv; se++) {
				uint64_t want = spm_model_value(ev->sq, ev->event,
								se, 0, 0, 4096, b32);

				if (!b32)
					want &= 0xffff;
				CHECK(values[c->value_index + se] == want);
				if (values[c->value_index + se] != want)
					fprintf(stderr, "  %s se %u: %#llx, want %#llx\n",
						names[i], se,
						(unsigned long long)values[c->value_index + se],
						(unsigned long long)want);
			}
		}
	}
}

/* ---- Expected streams ---- */

#define BCAST 0xE0000000u
#define EV { T_EVENT, CS_PARTIAL_FLUSH_EV }

static void test_stream_943_two_cpc(void)
{
	static const char *const names[] = {
		"CPC_ALWAYS_COUNT", "cpc_me1_busy_for_packet_decode" };
	struct spm_counter_req req[2] = { { names[0], 0 }, { names[1], 16 } };
	/* start: spec section 4, the worked example of section 5 */
	static const struct t_write exp[] = {
		{ T_GRBM_GFX_INDEX, BCAST }, EV,
		{ T_CP_PERFMON_CNTL, 0x20 }, EV,		/* SPM STOP */
		{ T_RLC_SPM_PERFMON_CNTL, 8192u << 16 },	/* ring mode 0 */
		{ T_RLC_SPM_PERFMON_SAMPLE_DELAY_MAX, 0x27 },
		{ T_GRBM_GFX_INDEX, 0 },			/* CPC: SE0 SH0 inst 0 */
		{ T_RLC_SPM_CPC_PERFMON_SAMPLE_DELAY, 0x1f },
		{ T_GRBM_GFX_INDEX, BCAST },
		{ T_GRBM_GFX_INDEX, 0xA0000000u },
		/* CNTR_SEL0 = ALWAYS_COUNT, CNTR_SEL1 = 0xd, SPM_MODE 1 */
		{ T_CPC_PERFCOUNTER0_SELECT, 0x00103400 },
		{ T_GRBM_GFX_INDEX, BCAST },
		/* 2 lines, GLOBAL_NUM_LINE 2, no SE lines */
		{ T_RLC_SPM_PERFMON_SEGMENT_SIZE, 0x00001002 },
		{ T_RLC_SPM_GLOBAL_MUXSEL_ADDR, 0 },
		{ T_RLC_SPM_GLOBAL_MUXSEL_DATA, 0xF0F0F0F0 },	/* timestamp */
		{ T_RLC_SPM_GLOBAL_MUXSEL_DATA, 0xF0F0F0F0 },
		{ T_RLC_SPM_GLOBAL_MUXSEL_DATA, 0xFFFF0040 },	/* CPC id 0 */
		{ T_RLC_SPM_GLOBAL_MUXSEL_DATA, 0xFFFFFFFF },
		{ T_RLC_SPM_GLOBAL_MUXSEL_DATA, 0xFFFFFFFF },
		{ T_RLC_SPM_GLOBAL_MUXSEL_DATA, 0xFFFFFFFF },
		{ T_RLC_SPM_GLOBAL_MUXSEL_DATA, 0xFFFFFFFF },
		{ T_RLC_SPM_GLOBAL_MUXSEL_DATA, 0xFFFFFFFF },
		{ T_RLC_SPM_GLOBAL_MUXSEL_DATA, 0xFFFF0041 },	/* CPC id 1 */
		{ T_RLC_SPM_GLOBAL_MUXSEL_DATA, 0xFFFFFFFF },
		{ T_RLC_SPM_GLOBAL_MUXSEL_DATA, 0xFFFFFFFF },
		{ T_RLC_SPM_GLOBAL_MUXSEL_DATA, 0xFFFFFFFF },
		{ T_RLC_SPM_GLOBAL_MUXSEL_DATA, 0xFFFFFFFF },
		{ T_RLC_SPM_GLOBAL_MUXSEL_DATA, 0xFFFFFFFF },
		{ T_RLC_SPM_GLOBAL_MUXSEL_DATA, 0xFFFFFFFF },
		{ T_RLC_SPM_GLOBAL_MUXSEL_DATA, 0xFFFFFFFF },
		{ T_RLC_SPM_GLOBAL_MUXSEL_DATA, 0xFFFFFFFF },	/* the end */
		/* no SE lines: the SE RAM gets its end entries only */
		{ T_RLC_SPM_SE_MUXSEL_ADDR, 0 },
		{ T_RLC_SPM_SE_MUXSEL_DATA, 0xFFFFFFFF },
		{ T_RLC_SPM_GLOBAL_MUXSEL_ADDR, 0 },
		{ T_RLC_SPM_SE_MUXSEL_ADDR, 0 },
		EV,
		{ T_COMPUTE_PERFCOUNT_ENABLE, 1 },
		{ T_CP_PERFMON_CNTL, 0x10 }, EV,		/* SPM START */
	};
	static const struct t_write exp_stop[] = {
		{ T_GRBM_GFX_INDEX, BCAST }, EV,
		{ T_CP_PERFMON_CNTL, 0x20 },
	};
	struct spm_config cfg;
	struct t_write w[T_MAX_WRITES];
	int nw;

	CHECK(spm_config_build(&cfg, SPM_GC_9_4_3, 0, req, 2, 8192) == 0);
	CHECK(cfg.global_lines == 2 && cfg.se_lines == 0);
	CHECK(cfg.counters[0].slot == 4 && cfg.counters[1].slot == 16);
	CHECK(spm_sample_size(&cfg) == 64);
	CHECK(cfg.num_values == 2);
	nw = t_decode_stream(&cfg, 0, w);
	CHECK(t_match(w, nw, exp, (int)(sizeof(exp) / sizeof(exp[0]))));
	t_stream_rules(&cfg, w, nw);
	nw = t_decode_stream(&cfg, 1, w);
	CHECK(t_match(w, nw, exp_stop, (int)(sizeof(exp_stop) / sizeof(exp_stop[0]))));
	t_stream_rules(&cfg, w, nw);
}

static void test_stream_942_cpc32_sq(void)
{
	struct spm_counter_req req[2] = {
		{ "CPC_ALWAYS_COUNT", 32 }, { "SQ_WAVES", 0 } };
	static const struct t_write exp[] = {
		{ T_RLC_PERFMON_CLK_CNTL, 1 },
		{ T_GRBM_GFX_INDEX, BCAST }, EV,
		{ T_CP_PERFMON_CNTL, 0x20 }, EV,
		/* 1000 rounds to 992 */
		{ T_RLC_SPM_PERFMON_CNTL, 992u << 16 },
		{ T_RLC_SPM_PERFMON_SAMPLE_DELAY_MAX, 0x3e },
		{ T_GRBM_GFX_INDEX, 0 },
		{ T_RLC_SPM_CPC_PERFMON_SAMPLE_DELAY, 0x36 },
		/* SQG per SE: SE_INDEX j, SH broadcast */
		{ T_GRBM_GFX_INDEX, 0x20000000u }, { T_RLC_SPM_SQG_PERFMON_SAMPLE_DELAY, 0x1a },
		{ T_GRBM_GFX_INDEX, 0x20010000u }, { T_RLC_SPM_SQG_PERFMON_SAMPLE_DELAY, 0x22 },
		{ T_GRBM_GFX_INDEX, 0x20020000u }, { T_RLC_SPM_SQG_PERFMON_SAMPLE_DELAY, 0x28 },
		{ T_GRBM_GFX_INDEX, 0x20030000u }, { T_RLC_SPM_SQG_PERFMON_SAMPLE_DELAY, 0x32 },
		{ T_GRBM_GFX_INDEX, 0x20040000u }, { T_RLC_SPM_SQG_PERFMON_SAMPLE_DELAY, 0x1f },
		{ T_GRBM_GFX_INDEX, 0x20050000u }, { T_RLC_SPM_SQG_PERFMON_SAMPLE_DELAY, 0x24 },
		{ T_GRBM_GFX_INDEX, 0x20060000u }, { T_RLC_SPM_SQG_PERFMON_SAMPLE_DELAY, 0x2c },
		{ T_GRBM_GFX_INDEX, 0x20070000u }, { T_RLC_SPM_SQG_PERFMON_SAMPLE_DELAY, 0x34 },
		{ T_GRBM_GFX_INDEX, BCAST },
		{ T_GRBM_GFX_INDEX, 0xA0000000u },
		{ T_CPC_PERFCOUNTER0_SELECT, 0x00300000 },	/* SPM_MODE 3 */
		{ T_GRBM_GFX_INDEX, BCAST },
		{ T_SQ_PERFCOUNTER_MASK, 0xFFFFFFFF },
		{ T_SQ_PERFCOUNTER_CTRL, 0xFFFF0040 },	/* CS_EN, VMID_MASK */
		/* WAVES, banks, clients, SPM_MODE 3, SIMDs */
		{ T_SQ_PERFCOUNTER0_SELECT, 0x0F3FF004 },
		{ T_GRBM_GFX_INDEX, BCAST },
		/* total 2 + 4 * 2, GLOBAL 2, SE0..2 2 */
		{ T_RLC_SPM_PERFMON_SEGMENT_SIZE, 0x0842100A },
		/* total 4 * 2, SE4..7 2 */
		{ T_RLC_SPM_PERFMON_SEGMENT_SIZE_CORE1, 0x10842008 },
		{ T_RLC_SPM_GLOBAL_MUXSEL_ADDR, 0 },
		{ T_RLC_SPM_GLOBAL_MUXSEL_DATA, 0xF0F0F0F0 },
		{ T_RLC_SPM_GLOBAL_MUXSEL_DATA, 0xF0F0F0F0 },
		{ T_RLC_SPM_GLOBAL_MUXSEL_DATA, 0xFFFF0040 },	/* low, slot 4 */
		{ T_RLC_SPM_GLOBAL_MUXSEL_DATA, 0xFFFFFFFF },
		{ T_RLC_SPM_GLOBAL_MUXSEL_DATA, 0xFFFFFFFF },
		{ T_RLC_SPM_GLOBAL_MUXSEL_DATA, 0xFFFFFFFF },
		{ T_RLC_SPM_GLOBAL_MUXSEL_DATA, 0xFFFFFFFF },
		{ T_RLC_SPM_GLOBAL_MUXSEL_DATA, 0xFFFFFFFF },
		{ T_RLC_SPM_GLOBAL_MUXSEL_DATA, 0xFFFFFFFF },	/* 16..19 */
		{ T_RLC_SPM_GLOBAL_MUXSEL_DATA, 0xFFFFFFFF },
		{ T_RLC_SPM_GLOBAL_MUXSEL_DATA, 0xFFFF0041 },	/* high, slot 20 */
		{ T_RLC_SPM_GLOBAL_MUXSEL_DATA, 0xFFFFFFFF },
		{ T_RLC_SPM_GLOBAL_MUXSEL_DATA, 0xFFFFFFFF },
		{ T_RLC_SPM_GLOBAL_MUXSEL_DATA, 0xFFFFFFFF },
		{ T_RLC_SPM_GLOBAL_MUXSEL_DATA, 0xFFFFFFFF },
		{ T_RLC_SPM_GLOBAL_MUXSEL_DATA, 0xFFFFFFFF },
		{ T_RLC_SPM_GLOBAL_MUXSEL_DATA, 0xFFFFFFFF },	/* the end */
		{ T_RLC_SPM_SE_MUXSEL_ADDR, 0 },
		{ T_RLC_SPM_SE_MUXSEL_DATA, 0xFFFF0240 },	/* SQG id 0 */
		{ T_RLC_SPM_SE_MUXSEL_DATA, 0xFFFFFFFF },
		{ T_RLC_SPM_SE_MUXSEL_DATA, 0xFFFFFFFF },
		{ T_RLC_SPM_SE_MUXSEL_DATA, 0xFFFFFFFF },
		{ T_RLC_SPM_SE_MUXSEL_DATA, 0xFFFFFFFF },
		{ T_RLC_SPM_SE_MUXSEL_DATA, 0xFFFFFFFF },
		{ T_RLC_SPM_SE_MUXSEL_DATA, 0xFFFFFFFF },
		{ T_RLC_SPM_SE_MUXSEL_DATA, 0xFFFFFFFF },
		{ T_RLC_SPM_SE_MUXSEL_DATA, 0xFFFF0241 },	/* SQG id 1 */
		{ T_RLC_SPM_SE_MUXSEL_DATA, 0xFFFFFFFF },
		{ T_RLC_SPM_SE_MUXSEL_DATA, 0xFFFFFFFF },
		{ T_RLC_SPM_SE_MUXSEL_DATA, 0xFFFFFFFF },
		{ T_RLC_SPM_SE_MUXSEL_DATA, 0xFFFFFFFF },
		{ T_RLC_SPM_SE_MUXSEL_DATA, 0xFFFFFFFF },
		{ T_RLC_SPM_SE_MUXSEL_DATA, 0xFFFFFFFF },
		{ T_RLC_SPM_SE_MUXSEL_DATA, 0xFFFFFFFF },
		{ T_RLC_SPM_SE_MUXSEL_DATA, 0xFFFFFFFF },	/* the end */
		{ T_RLC_SPM_GLOBAL_MUXSEL_ADDR, 0 },
		{ T_RLC_SPM_SE_MUXSEL_ADDR, 0 },
		EV,
		{ T_COMPUTE_PERFCOUNT_ENABLE, 1 },
		{ T_CP_PERFMON_CNTL, 0x10 }, EV,
	};
	static const struct t_write exp_stop[] = {
		{ T_GRBM_GFX_INDEX, BCAST }, EV,
		{ T_CP_PERFMON_CNTL, 0x20 },
		{ T_RLC_PERFMON_CLK_CNTL, 0 },
	};
	struct spm_config cfg;
	struct t_write w[T_MAX_WRITES];
	int nw;

	CHECK(spm_config_build(&cfg, SPM_GC_9_4_2, 0, req, 2, 1000) == 0);
	CHECK(cfg.interval == 992 && cfg.interval_requested == 1000);
	CHECK(cfg.total_lines == 2 + 8 * 2);
	CHECK(spm_sample_size(&cfg) == 18 * 32);
	CHECK(cfg.num_values == 1 + 8);
	nw = t_decode_stream(&cfg, 0, w);
	CHECK(t_match(w, nw, exp, (int)(sizeof(exp) / sizeof(exp[0]))));
	t_stream_rules(&cfg, w, nw);
	nw = t_decode_stream(&cfg, 1, w);
	CHECK(t_match(w, nw, exp_stop, (int)(sizeof(exp_stop) / sizeof(exp_stop[0]))));
}

/* Four 16-bit CPC counters on MI100: SELECT1 and the 9.0 SQ control. */
static void test_stream_941(void)
{
	struct spm_counter_req req[5] = {
		{ "CPC_ALWAYS_COUNT", 0 }, { "CPC_ME1_BUSY_FOR_PACKET_DECODE", 0 },
		{ "CPC_ME2_BUSY_FOR_PACKET_DECODE", 0 },
		{ "CPC_ME1_STALL_ON_DATA_FROM_ROQ", 0 }, { "SQ_BUSY_CYCLES", 0 } };
	static const uint32_t gmux[17] = {
		0xF0F0F0F0, 0xF0F0F0F0, 0x00420040, 0xFFFFFFFF, 0xFFFFFFFF,
		0xFFFFFFFF, 0xFFFFFFFF, 0xFFFFFFFF, 0x00430041, 0xFFFFFFFF,
		0xFFFFFFFF, 0xFFFFFFFF, 0xFFFFFFFF, 0xFFFFFFFF, 0xFFFFFFFF,
		0xFFFFFFFF, 0xFFFFFFFF };
	static const uint32_t sqg[8] = {
		0x12, 0x1c, 0x20, 0x2c, 0x16, 0x1c, 0x24, 0x2c };
	struct spm_config cfg;
	struct t_write w[T_MAX_WRITES];
	int nw, i, ng = 0, sel = 0, sel1 = 0, ctrl = 0, sq = 0, clk = 0;
	int dmax = 0, dcpc = 0, dsqg = 0;

	CHECK(spm_config_build(&cfg, SPM_GC_9_4_1, 0, req, 5, 0) == 0);
	CHECK(cfg.interval == 8192);
	nw = t_decode_stream(&cfg, 0, w);
	t_stream_rules(&cfg, w, nw);
	CHECK(nw > 0 && w[0].reg == T_RLC_PERFMON_CLK_CNTL && w[0].val == 1);
	for (i = 0; i < nw; i++) {
		if (w[i].reg == T_RLC_PERFMON_CLK_CNTL)
			clk++;
		if (w[i].reg == T_CPC_PERFCOUNTER0_SELECT)
			sel += w[i].val == 0x00103400;
		if (w[i].reg == T_CPC_PERFCOUNTER0_SELECT1)
			sel1 += w[i].val == (0x15 | (0x0b << 10));
		if (w[i].reg == T_SQ_PERFCOUNTER_CTRL)
			ctrl += w[i].val == 0xFFFF0040;	/* as aqlprofile, on 9.0 too */
		if (w[i].reg == T_SQ_PERFCOUNTER0_SELECT)
			sq += w[i].val == 0x0F3FF003;
		if (w[i].reg == T_RLC_SPM_GLOBAL_MUXSEL_DATA) {
			CHECK(ng < 17 && w[i].val == gmux[ng]);
			ng++;
		}
		/* aqlprofile's MI100 delays, written on 9.4.1 (gc_9_0 has
		 * no SAMPLE_DELAY_MAX; aqlprofile writes it there too) */
		if (w[i].reg == T_RLC_SPM_PERFMON_SAMPLE_DELAY_MAX)
			dmax += w[i].val == 0x34;
		if (w[i].reg == T_RLC_SPM_CPC_PERFMON_SAMPLE_DELAY)
			dcpc += w[i].val == 0x30 && i && w[i - 1].reg == T_GRBM_GFX_INDEX &&
				w[i - 1].val == 0;
		if (w[i].reg == T_RLC_SPM_SQG_PERFMON_SAMPLE_DELAY && i &&
		    w[i - 1].reg == T_GRBM_GFX_INDEX && w[i - 1].val ==
		    (0x20000000u | ((uint32_t)dsqg << 16)) && dsqg < 8)
			dsqg += w[i].val == sqg[dsqg];
		if (w[i].reg == T_RLC_SPM_PERFMON_CNTL)
			CHECK(w[i].val == 8192u << 16);
	}
	CHECK(clk == 1 && sel == 1 && sel1 == 1 && ctrl == 1 && sq == 1);
	CHECK(ng == 17);
	CHECK(dmax == 1 && dcpc == 1 && dsqg == 8);
}

/* The model's sample delay registers follow GRBM_GFX_INDEX's SE fields */
static void test_model_delays(void)
{
	static const struct t_write w[] = {
		{ T_GRBM_GFX_INDEX, BCAST }, { T_RLC_SPM_SQG_PERFMON_SAMPLE_DELAY, 5 },
		{ T_GRBM_GFX_INDEX, 0x20020000u }, { T_RLC_SPM_SQG_PERFMON_SAMPLE_DELAY, 7 },
		{ T_GRBM_GFX_INDEX, 0 }, { T_RLC_SPM_CPC_PERFMON_SAMPLE_DELAY, 9 },
		{ T_RLC_SPM_PERFMON_SAMPLE_DELAY_MAX, 11 },
	};
	struct spm_model_rlc m;
	unsigned int se;

	spm_model_reset(&m);
	spm_model_apply(&m, w, 2);	/* broadcast: every SE */
	CHECK(m.sqg_delay_seen == 0xff);
	for (se = 0; se < 8; se++)
		CHECK(m.sqg_delay[se] == 5);
	spm_model_apply(&m, w + 2, 5);	/* SE 2 only, then CPC and the max */
	for (se = 0; se < 8; se++)
		CHECK(m.sqg_delay[se] == (se == 2 ? 7u : 5u));
	CHECK(m.cpc_delay_seen && m.cpc_delay == 9 && m.cpc_delay_grbm == 0);
	CHECK(m.delay_max_seen && m.delay_max == 11);
	CHECK(m.violations == 0);
}

/* ---- Round trips ---- */

static void test_round_trips(void)
{
	static const char *const one[] = { "CPC_ALWAYS_COUNT" };
	static const char *const two[] = {
		"CPC_ALWAYS_COUNT", "CPC_ME1_BUSY_FOR_PACKET_DECODE" };
	static const char *const four[] = {
		"CPC_ALWAYS_COUNT", "CPC_ME1_BUSY_FOR_PACKET_DECODE",
		"CPC_UTCL1_STALL_ON_TRANSLATION", "CPC_ME2_BUSY_FOR_PACKET_DECODE" };
	static const char *const four_sq[] = {
		"CPC_ME1_STALL_ON_DATA_FROM_ROQ", "SQ_WAVES",
		"CPC_ALWAYS_COUNT", "CPC_ME2_BUSY_FOR_PACKET_DECODE",
		"CPC_ME1_BUSY_FOR_PACKET_DECODE" };
	static const char *const sq[] = { "SQ_BUSY_CYCLES" };
	static const char *const two_sq[] = {
		"CPC_ME1_BUSY_FOR_PACKET_DECODE", "SQ_WAVES", "CPC_ALWAYS_COUNT" };
	static const unsigned int b32[] = { 32, 32 };
	static const unsigned int b32sq[] = { 32, 0, 32 };
	static const enum spm_gc_version gcs[] = {
		SPM_GC_9_4_1, SPM_GC_9_4_2, SPM_GC_9_4_3 };
	unsigned int g;

	for (g = 0; g < 3; g++) {
		t_round_trip(gcs[g], NULL, NULL, 0);	/* timestamp only */
		t_round_trip(gcs[g], one, NULL, 1);
		t_round_trip(gcs[g], two, NULL, 2);
		t_round_trip(gcs[g], four, NULL, 4);	/* all of CPC, 16-bit */
		t_round_trip(gcs[g], one, b32, 1);
		t_round_trip(gcs[g], two, b32, 2);	/* all of CPC, 32-bit */
		t_round_trip(gcs[g], sq, NULL, 1);
		t_round_trip(gcs[g], four_sq, NULL, 5);
		t_round_trip(gcs[g], two_sq, b32sq, 3);
	}
}

/* ---- Input checks of spm_config_build() and the others ---- */

static int t_build(enum spm_gc_version gc, const char *a, unsigned int abits,
		   const char *b, unsigned int bbits)
{
	struct spm_counter_req req[2] = { { a, abits }, { b, bbits } };
	struct spm_config cfg;

	return spm_config_build(&cfg, gc, 0, req, b ? 2 : 1, 0);
}

static unsigned int t_interval(unsigned int in)
{
	struct spm_config cfg;

	CHECK(spm_config_build(&cfg, SPM_GC_9_4_3, 0, NULL, 0, in) == 0);
	return cfg.interval;
}

static void test_input_checks(void)
{
	struct spm_counter_req req[SPM_MAX_COUNTERS + 1];
	struct spm_config cfg;
	uint32_t ib[512];
	uint64_t ts, v[SPM_MAX_VALUES];
	unsigned char sample[64] = { 0 };
	unsigned int i, count = 0;
	int n;

	CHECK(spm_config_build(NULL, SPM_GC_9_4_3, 0, NULL, 0, 0) == -EINVAL);
	CHECK(spm_config_build(&cfg, SPM_GC_9_4_3, 0, NULL, 1, 0) == -EINVAL);
	CHECK(spm_config_build(&cfg, (enum spm_gc_version)0x090400, 0, NULL, 0, 0) == -EINVAL);
	CHECK(spm_config_build(&cfg, (enum spm_gc_version)0x090404, 0, NULL, 0, 0) == -EINVAL);
	/* The device's SE count per XCC: the GC's, or refused */
	CHECK(spm_gc_num_se(SPM_GC_9_4_1) == 8 && spm_gc_num_se(SPM_GC_9_4_2) == 8 &&
	      spm_gc_num_se(SPM_GC_9_4_3) == 4);
	CHECK(spm_gc_num_se((enum spm_gc_version)0x090404) == 0);
	CHECK(spm_config_build(&cfg, SPM_GC_9_4_3, 4, NULL, 0, 0) == 0 && cfg.num_se == 4);
	CHECK(spm_config_build(&cfg, SPM_GC_9_4_3, 8, NULL, 0, 0) == -ERANGE);
	CHECK(spm_program_start(&cfg, ib, 512) == -EINVAL);	/* nothing laid out */
	CHECK(spm_config_build(&cfg, SPM_GC_9_4_3, 2, NULL, 0, 0) == -ERANGE);
	CHECK(spm_config_build(&cfg, SPM_GC_9_4_1, 8, NULL, 0, 0) == 0 && cfg.num_se == 8);
	CHECK(spm_config_build(&cfg, SPM_GC_9_4_2, 4, NULL, 0, 0) == -ERANGE);
	CHECK(spm_config_build(&cfg, (enum spm_gc_version)0x090404, 4, NULL, 0, 0) == -EINVAL);
	for (i = 0; i <= SPM_MAX_COUNTERS; i++) {
		req[i].name = "CPC_ALWAYS_COUNT";
		req[i].bits = 0;
	}
	CHECK(spm_config_build(&cfg, SPM_GC_9_4_3, 0, req, SPM_MAX_COUNTERS + 1, 0) == -E2BIG);
	CHECK(t_build(SPM_GC_9_4_3, NULL, 0, NULL, 0) == -EINVAL);	/* NULL name */
	CHECK(t_build(SPM_GC_9_4_3, "GRBM_GUI_ACTIVE", 0, NULL, 0) == -EINVAL); /* not streamable */
	CHECK(t_build(SPM_GC_9_4_3, "CPC_ALWAYS", 0, NULL, 0) == -EINVAL);
	CHECK(t_build(SPM_GC_9_4_3, "", 0, NULL, 0) == -EINVAL);
	CHECK(t_build(SPM_GC_9_4_3, "cpc_always_count", 0, NULL, 0) == 0); /* any case */
	CHECK(t_build(SPM_GC_9_4_3, "CPC_ALWAYS_COUNT", 0, "Cpc_Always_Count", 0) == -EINVAL); /* repeated */
	CHECK(t_build(SPM_GC_9_4_3, "CPC_ALWAYS_COUNT", 8, NULL, 0) == -EINVAL);
	CHECK(t_build(SPM_GC_9_4_3, "CPC_ALWAYS_COUNT", 64, NULL, 0) == -EINVAL);
	CHECK(t_build(SPM_GC_9_4_3, "SQ_WAVES", 16, NULL, 0) == -EINVAL); /* SQ: 32-bit only */
	CHECK(t_build(SPM_GC_9_4_3, "SQ_WAVES", 32, NULL, 0) == 0);
	CHECK(t_build(SPM_GC_9_4_3, "CPC_ALWAYS_COUNT", 16,
		      "CPC_ME1_BUSY_FOR_PACKET_DECODE", 32) == -EINVAL); /* mixed in CPC */
	CHECK(t_build(SPM_GC_9_4_3, "CPC_ALWAYS_COUNT", 32,
		      "CPC_ME1_BUSY_FOR_PACKET_DECODE", 32) == 0);
	CHECK(t_build(SPM_GC_9_4_3, "SQ_WAVES", 0, "SQ_BUSY_CYCLES", 0) == -E2BIG); /* one SQ counter */
	/* CPC: five 16-bit counters, three 32-bit ones */
	req[0].name = "CPC_ALWAYS_COUNT";
	req[1].name = "CPC_ME1_BUSY_FOR_PACKET_DECODE";
	req[2].name = "CPC_ME2_BUSY_FOR_PACKET_DECODE";
	req[3].name = "CPC_ME1_STALL_ON_DATA_FROM_ROQ";
	req[4].name = "CPC_UTCL1_STALL_ON_TRANSLATION";
	CHECK(spm_config_build(&cfg, SPM_GC_9_4_3, 0, req, 4, 0) == 0);
	CHECK(spm_config_build(&cfg, SPM_GC_9_4_3, 0, req, 5, 0) == -E2BIG);
	for (i = 0; i < 3; i++)
		req[i].bits = 32;
	CHECK(spm_config_build(&cfg, SPM_GC_9_4_3, 0, req, 2, 0) == 0);
	CHECK(spm_config_build(&cfg, SPM_GC_9_4_3, 0, req, 3, 0) == -E2BIG);

	/* interval: default, nearest multiple of 32, limits */
	CHECK(t_interval(0) == 8192);
	CHECK(t_interval(1) == 32);
	CHECK(t_interval(47) == 32);
	CHECK(t_interval(48) == 64);
	CHECK(t_interval(4111) == 4096);
	CHECK(t_interval(4112) == 4128);
	CHECK(t_interval(65504) == 65504);
	CHECK(t_interval(65519) == 65504);
	CHECK(t_interval(65535) == 65504);
	CHECK(t_interval(UINT_MAX) == 65504);

	/* table */
	CHECK(spm_counter_table(&count) != NULL && count >= 3);
	CHECK(spm_counter_find("SQ_WAVES") != NULL);
	CHECK(spm_counter_find(NULL) == NULL);

	/* streams: size query, short buffer, NULL */
	CHECK(spm_config_build(&cfg, SPM_GC_9_4_3, 0, NULL, 0, 0) == 0);
	n = spm_program_start(&cfg, NULL, 0);
	CHECK(n > 0 && spm_program_start(&cfg, ib, 512) == n);
	CHECK(spm_program_start(&cfg, ib, (size_t)n - 1) == -ENOSPC);
	CHECK(spm_program_start(&cfg, ib, 0) == -ENOSPC);
	CHECK(spm_program_start(NULL, ib, 512) == -EINVAL);
	n = spm_program_stop(&cfg, NULL, 0);
	CHECK(n > 0 && spm_program_stop(&cfg, ib, 512) == n);
	CHECK(spm_program_stop(&cfg, ib, (size_t)n - 1) == -ENOSPC);
	CHECK(spm_program_stop(NULL, ib, 512) == -EINVAL);
	/* decode */
	CHECK(spm_decode_sample(NULL, sample, &ts, v) == -EINVAL);
	CHECK(spm_decode_sample(&cfg, NULL, &ts, v) == -EINVAL);
	CHECK(spm_decode_sample(&cfg, sample, NULL, NULL) == 0);	/* no counters */
	CHECK(spm_config_build(&cfg, SPM_GC_9_4_3, 0, req, 1, 0) == 0);
	CHECK(spm_decode_sample(&cfg, sample, &ts, NULL) == -EINVAL);
	CHECK(spm_sample_size(NULL) == 0);
	/* a failed build leaves nothing to program */
	CHECK(spm_config_build(&cfg, SPM_GC_9_4_3, 0, req, 3, 0) == -E2BIG);
	CHECK(spm_program_start(&cfg, ib, 512) == -EINVAL);
	CHECK(spm_decode_sample(&cfg, sample, &ts, v) == -EINVAL);
}

int main(void)
{
	test_stream_943_two_cpc();
	test_stream_942_cpc32_sq();
	test_stream_941();
	test_model_delays();
	test_round_trips();
	test_input_checks();
	return unit_done();
}
