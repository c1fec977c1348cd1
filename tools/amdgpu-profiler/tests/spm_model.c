// SPDX-License-Identifier: MIT
/*
 * Copyright 2026 The amdgpu profiler series authors
 *
 * Tests only: the PM4 decoder and RLC model of spm_model.h. Written from
 * amdgpu/soc15d.h (packet headers), gc_9_*_offset.h / _sh_mask.h
 * (registers and fields) and the mux entry format aqlprofile documents
 * (gfx9 mux_info_t: counter id 5:0, block 10:6, instance 15:11); nothing
 * here is shared with spm_program.c.
 */
#include <string.h>

#include "spm_model.h"

const struct spm_model_event spm_model_events[] = {
	{ "CPC_ALWAYS_COUNT", 0, 0x00 },		/* CPC_PERF_SEL_ALWAYS_COUNT */
	{ "CPC_ME1_BUSY_FOR_PACKET_DECODE", 0, 0x0d },
	{ "CPC_ME2_BUSY_FOR_PACKET_DECODE", 0, 0x15 },
	{ "CPC_ME1_STALL_ON_DATA_FROM_ROQ", 0, 0x0b },
	{ "CPC_UTCL1_STALL_ON_TRANSLATION", 0, 0x18 },
	{ "SQ_WAVES", 1, 0x04 },			/* SQ_PERF_SEL_WAVES */
	{ "SQ_BUSY_CYCLES", 1, 0x03 },
};

const unsigned int spm_model_num_events =
	sizeof(spm_model_events) / sizeof(spm_model_events[0]);

const struct spm_model_event *spm_model_event(const char *name)
{
	unsigned int i;

	for (i = 0; name && i < spm_model_num_events; i++)
		if (!strcmp(spm_model_events[i].name, name))
			return &spm_model_events[i];
	return NULL;
}

/* ---- PM4 decoder (type-3 packets, soc15d.h) ---- */

static int put(struct spm_model_write *w, size_t max, int *nw, uint32_t reg,
	       uint32_t val)
{
	if ((size_t)*nw >= max)
		return -1;
	w[*nw].reg = reg;
	w[(*nw)++].val = val;
	return 0;
}

int spm_model_decode(const uint32_t *ib, size_t n, struct spm_model_write *w,
		     size_t max)
{
	size_t i = 0;
	int nw = 0;
	unsigned int k;

	while (i < n) {
		uint32_t h = ib[i];
		unsigned int count = (h >> 16) & 0x3fff, op = (h >> 8) & 0xff;
		const uint32_t *body = ib + i + 1;
		size_t len = (size_t)count + 1;	/* body dwords */

		if ((h >> 30) != 3)
			return -1;
		/* PACKET3(NOP, 0x3FFF): one dword, no body */
		if (op == 0x10 && count == 0x3fff) {
			i++;
			continue;
		}
		if (i + 1 + len > n)
			return -1;
		switch (op) {
		case 0x79:	/* SET_UCONFIG_REG: offset from 0xc000 */
		case 0x76:	/* SET_SH_REG: offset from 0x2c00 */
			for (k = 1; k < len; k++)
				if (put(w, max, &nw, (op == 0x79 ? 0xc000 : 0x2c00) +
					body[0] + k - 1, body[k]))
					return -1;
			break;
		case 0x37: {	/* WRITE_DATA: ctrl, addr lo, addr hi, data */
			uint32_t ctrl = body[0];

			if (len < 4 || ((ctrl >> 8) & 0xf) != 0 || body[2] ||
			    !(ctrl & (1u << 20)))	/* register, confirmed */
				return -1;
			for (k = 3; k < len; k++)
				if (put(w, max, &nw, body[1] +
					((ctrl & (1u << 16)) ? 0 : k - 3), body[k]))
					return -1;
			break;
		}
		case 0x46:	/* EVENT_WRITE */
			if (len != 1 || put(w, max, &nw, T_EVENT, body[0]))
				return -1;
			break;
		case 0x10:	/* NOP with a body */
			break;
		default:
			return -1;
		}
		i += 1 + len;
	}
	return nw;
}

/* ---- RLC model ---- */

#define GRBM_CPC_INST0	0xA0000000u	/* SE, SH broadcast, instance 0 */
#define GRBM_BROADCAST	0xE0000000u

static void violate(struct spm_model_rlc *m, const char *why)
{
	if (!m->violations++)
		m->violation = why;
}

void spm_model_reset(struct spm_model_rlc *m)
{
	memset(m, 0, sizeof(*m));
}

void spm_model_apply(struct spm_model_rlc *m, const struct spm_model_write *w,
		     int nw)
{
	int i;

	for (i = 0; i < nw; i++) {
		uint32_t v = w[i].val;

		switch (w[i].reg) {
		case T_GRBM_GFX_INDEX: m->grbm = v; break;
		case T_CP_PERFMON_CNTL: m->cp_perfmon = v; break;
		case T_RLC_SPM_PERFMON_CNTL: m->spm_cntl = v; break;
		case T_RLC_SPM_PERFMON_SEGMENT_SIZE: m->seg = v; break;
		case T_RLC_SPM_PERFMON_SEGMENT_SIZE_CORE1: m->core1 = v; break;
		case T_RLC_SPM_PERFMON_RING_BASE_LO:
		case T_RLC_SPM_PERFMON_RING_BASE_HI:
		case T_RLC_SPM_PERFMON_RING_SIZE:
		case T_RLC_SPM_MC_CNTL:
			m->ring_written = 1;
			break;
		case T_CPC_PERFCOUNTER0_SELECT:
			if (m->grbm != GRBM_CPC_INST0)
				violate(m, "CPC_PERFCOUNTER0_SELECT not for CPC instance 0");
			m->cpc_sel = v;
			m->cpc_sel_seen = 1;
			break;
		case T_CPC_PERFCOUNTER0_SELECT1:
			if (m->grbm != GRBM_CPC_INST0)
				violate(m, "CPC_PERFCOUNTER0_SELECT1 not for CPC instance 0");
			m->cpc_sel1 = v;
			m->cpc_sel1_seen = 1;
			break;
		case T_SQ_PERFCOUNTER0_SELECT:
			if (m->grbm != GRBM_BROADCAST)
				violate(m, "SQ_PERFCOUNTER0_SELECT not broadcast");
			m->sq_sel = v;
			m->sq_sel_seen = 1;
			break;
		case T_RLC_SPM_PERFMON_SAMPLE_DELAY_MAX:
			m->delay_max = v;
			m->delay_max_seen = 1;
			break;
		case T_RLC_SPM_CPC_PERFMON_SAMPLE_DELAY:
			m->cpc_delay = v;
			m->cpc_delay_grbm = m->grbm;
			m->cpc_delay_seen = 1;
			break;
		case T_RLC_SPM_SQG_PERFMON_SAMPLE_DELAY: {
			unsigned int se = (m->grbm >> 16) & 0xff, j;

			if (m->grbm & 0x80000000u) {	/* every SE */
				for (j = 0; j < 8; j++)
					m->sqg_delay[j] = v;
				m->sqg_delay_seen = 0xff;
			} else if (se < 8) {
				m->sqg_delay[se] = v;
				m->sqg_delay_seen |= 1u << se;
			} else {
				violate(m, "SQG delay for an SE past 7");
			}
			break;
		}
		case T_RLC_SPM_GLOBAL_MUXSEL_ADDR: m->gaddr = v; break;
		case T_RLC_SPM_SE_MUXSEL_ADDR: m->seaddr = v; break;
		case T_RLC_SPM_GLOBAL_MUXSEL_DATA:
			if (m->gaddr >= 128) {
				violate(m, "global mux RAM written past its end");
				break;
			}
			m->gram[2 * m->gaddr] = (uint16_t)v;
			m->gram[2 * m->gaddr + 1] = (uint16_t)(v >> 16);
			m->gaddr++;
			if (m->gaddr > m->gram_dw)
				m->gram_dw = m->gaddr;
			break;
		case T_RLC_SPM_SE_MUXSEL_DATA:
			/* one layout for every SE: written under broadcast */
			if (m->grbm != GRBM_BROADCAST)
				violate(m, "SE mux RAM not written under broadcast");
			if (m->seaddr >= 128) {
				violate(m, "SE mux RAM written past its end");
				break;
			}
			m->seram[2 * m->seaddr] = (uint16_t)v;
			m->seram[2 * m->seaddr + 1] = (uint16_t)(v >> 16);
			m->seaddr++;
			if (m->seaddr > m->seram_dw)
				m->seram_dw = m->seaddr;
			break;
		default:
			break;
		}
	}
}

unsigned int spm_model_interval(const struct spm_model_rlc *m)
{
	return m->spm_cntl >> 16;
}

/* Lines of the global segment and of each SE, from the segment sizes. */
static unsigned int seg_lines(const struct spm_model_rlc *m,
			      unsigned int num_se, unsigned int *se_lines)
{
	unsigned int glines = (m->seg >> 11) & 0x1f, total = m->seg & 0xff;
	unsigned int se;

	for (se = 0; se < 8; se++)
		se_lines[se] = 0;
	se_lines[0] = (m->seg >> 16) & 0x1f;
	se_lines[1] = (m->seg >> 21) & 0x1f;
	se_lines[2] = (m->seg >> 26) & 0x1f;
	/* SE3: the rest of PERFMON_SEGMENT_SIZE */
	se_lines[3] = total >= glines + se_lines[0] + se_lines[1] + se_lines[2] ?
		      total - glines - se_lines[0] - se_lines[1] - se_lines[2] : 0;
	if (num_se == 8) {
		se_lines[4] = (m->core1 >> 12) & 0x1f;
		se_lines[5] = (m->core1 >> 17) & 0x1f;
		se_lines[6] = (m->core1 >> 22) & 0x1f;
		se_lines[7] = (m->core1 >> 27) & 0x1f;
	}
	return glines;
}

size_t spm_model_sample_size(const struct spm_model_rlc *m, unsigned int num_se)
{
	unsigned int se_lines[8], lines, se;

	lines = seg_lines(m, num_se, se_lines);
	if (!lines)
		return 0;
	for (se = 0; se < num_se && se < 8; se++)
		lines += se_lines[se];
	return (size_t)lines * 32;
}

uint64_t spm_model_value(int sq, unsigned int event, unsigned int se,
			 unsigned int xcc, uint64_t k, unsigned int interval,
			 int bits32)
{
	unsigned int tri = (unsigned int)(k % 64);
	uint64_t v;

	if (!sq && event == 0)
		return interval;	/* cycles in the interval */
	if (tri > 32)
		tri = 64 - tri;
	v = 100u + event * 97u + se * 13u + xcc * 29u + tri * 11u;
	if (bits32)
		v += 0x10000ull * (event + 1);
	return v;
}

static uint16_t slot_value(struct spm_model_rlc *m, uint16_t e, int se_seg,
			   unsigned int se, unsigned int xcc, uint64_t k,
			   uint64_t ts, unsigned int *tsn)
{
	unsigned int block = (e >> 6) & 0x1f, inst = e >> 11, id = e & 0x3f;
	unsigned int interval = spm_model_interval(m);

	if (e == 0xf0f0) {	/* timestamp, 16 bits at a time */
		if (*tsn >= 4) {
			violate(m, "more than 4 timestamp slots");
			return 0;
		}
		return (uint16_t)(ts >> (16 * (*tsn)++));
	}
	if (e == 0xffff)
		return 0xdead;	/* unused slot: whatever the RLC leaves */
	if (inst != 0)
		violate(m, "mux entry for an instance other than 0");
	if (!se_seg && block == 1) {	/* CPC */
		int b32 = ((m->cpc_sel >> 20) & 0xf) == 3;
		unsigned int sub = b32 ? id & ~1u : id, half = b32 ? id & 1 : 0;
		uint32_t sel = sub < 2 ? m->cpc_sel : m->cpc_sel1;
		unsigned int ev = (sel >> ((sub & 1) ? 10 : 0)) & 0x3ff;

		if (!m->cpc_sel_seen || (sub >= 2 && !m->cpc_sel1_seen))
			violate(m, "CPC mux entry without its select");
		if (sub >= 4)
			violate(m, "CPC sub-counter past 3");
		return (uint16_t)(spm_model_value(0, ev, 0, xcc, k, interval,
						  b32) >> (16 * half));
	}
	if (se_seg && block == 9) {	/* SQG, SQ_PERFCOUNTER0, 32-bit */
		if (!m->sq_sel_seen || ((m->sq_sel >> 20) & 0xf) != 3)
			violate(m, "SQ mux entry without a 32-bit select");
		if (id >= 2)
			violate(m, "SQ mux entry past SQ_PERFCOUNTER0");
		return (uint16_t)(spm_model_value(1, m->sq_sel & 0x1ff, se, xcc,
						  k, interval, 1) >>
				  (16 * (id & 1)));
	}
	violate(m, "unknown mux entry");
	return 0;
}

size_t spm_model_sample(struct spm_model_rlc *m, unsigned int num_se,
			uint64_t ts, uint64_t k, unsigned int xcc,
			unsigned char *buf, size_t max)
{
	unsigned int se_lines[8], glines, se, j, tsn = 0;
	size_t size = spm_model_sample_size(m, num_se), off = 0;

	if (!size || size > max || num_se > 8)
		return 0;
	glines = seg_lines(m, num_se, se_lines);
	/* The mux RAMs hold 256 entries: 16 lines */
	for (se = 0; se < num_se; se++)
		if (se_lines[se] > 16)
			glines = 17;
	if (glines > 16) {
		violate(m, "a segment longer than its mux RAM");
		return 0;
	}
	if (num_se == 8 && (m->core1 & 0x7f) != se_lines[4] + se_lines[5] +
	    se_lines[6] + se_lines[7])
		violate(m, "SEGMENT_SIZE_CORE1 total differs from its SEs");
	for (j = 0; j < glines * 16; j++) {
		uint16_t v = slot_value(m, m->gram[j], 0, 0, xcc, k, ts, &tsn);

		buf[off++] = (unsigned char)v;
		buf[off++] = (unsigned char)(v >> 8);
	}
	if (tsn != 4)
		violate(m, "the timestamp does not take 4 global slots");
	for (se = 0; se < num_se; se++)
		for (j = 0; j < se_lines[se] * 16; j++) {
			uint16_t v = slot_value(m, m->seram[j], 1, se, xcc, k,
						ts, &tsn);

			buf[off++] = (unsigned char)v;
			buf[off++] = (unsigned char)(v >> 8);
		}
	return off;
}
