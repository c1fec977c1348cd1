/* SPDX-License-Identifier: MIT */
/*
 * Copyright 2026 The amdgpu profiler series authors
 *
 * Tests only: a model of what the GPU does with an SPM start/stop stream,
 * written from the packet format (amdgpu/soc15d.h) and the base tree's
 * register headers alone, independent of spm_program.c, so that the
 * library's streams are read back by code that does not share its
 * mistakes. Two users: tests/test_spm_program.c (the streams offline) and
 * the fake kernel (tests/fake_amdgpu.c), which runs each submitted IB
 * through it and streams the samples the decoded registers describe.
 *
 * - spm_model_decode(): PM4 type-3 packets into register writes;
 * - struct spm_model_rlc: one XCC's perfmon registers and mux RAMs as the
 *   writes leave them (spm_model_apply());
 * - spm_model_sample(): the lines of one sample as the RLC would write them
 *   from those registers, with the values of spm_model_value().
 */
#ifndef SPM_MODEL_H
#define SPM_MODEL_H

#include <stddef.h>
#include <stdint.h>

/*
 * Absolute dword offsets: GC_BASE seg1 0xA000 (aldebaran/arct/
 * vega20_ip_offset.h) + the reg of gc_9_4_3_offset.h / gc_9_4_2_offset.h
 * / gc_9_0_offset.h (all BASE_IDX 1 except COMPUTE_PERFCOUNT_ENABLE,
 * BASE_IDX 0, seg0 0x2000).
 */
#define T_GRBM_GFX_INDEX		(0xA000 + 0x2200)
#define T_CP_PERFMON_CNTL		(0xA000 + 0x3808)
#define T_COMPUTE_PERFCOUNT_ENABLE	(0x2000 + 0x0e0b)
#define T_RLC_PERFMON_CLK_CNTL		(0xA000 + 0x3cbf)
#define T_RLC_SPM_PERFMON_CNTL		(0xA000 + 0x3c80)
#define T_RLC_SPM_PERFMON_RING_BASE_LO	(0xA000 + 0x3c81)
#define T_RLC_SPM_PERFMON_RING_BASE_HI	(0xA000 + 0x3c82)
#define T_RLC_SPM_PERFMON_RING_SIZE	(0xA000 + 0x3c83)
#define T_RLC_SPM_PERFMON_SEGMENT_SIZE	(0xA000 + 0x3c84)
#define T_RLC_SPM_SE_MUXSEL_ADDR	(0xA000 + 0x3c85)
#define T_RLC_SPM_SE_MUXSEL_DATA	(0xA000 + 0x3c86)
#define T_RLC_SPM_GLOBAL_MUXSEL_ADDR	(0xA000 + 0x3c9b)
#define T_RLC_SPM_GLOBAL_MUXSEL_DATA	(0xA000 + 0x3c9c)
#define T_RLC_SPM_RING_RDPTR		(0xA000 + 0x3c9d)
#define T_RLC_SPM_SEGMENT_THRESHOLD	(0xA000 + 0x3c9e)
#define T_RLC_SPM_PERFMON_SEGMENT_SIZE_CORE1 (0xA000 + 0x3caf)
#define T_RLC_SPM_MC_CNTL		(0xA000 + 0x4c71)
#define T_RLC_SPM_INT_CNTL		(0xA000 + 0x4c72)
#define T_CPC_PERFCOUNTER0_SELECT	(0xA000 + 0x3809)
#define T_CPC_PERFCOUNTER0_SELECT1	(0xA000 + 0x3804)
#define T_SQ_PERFCOUNTER0_SELECT	(0xA000 + 0x39c0)
#define T_SQ_PERFCOUNTER_CTRL		(0xA000 + 0x39e0)
#define T_SQ_PERFCOUNTER_MASK		(0xA000 + 0x39e1)
/* Sample delays: 0x3c88 and 0x3c98 in all three headers, 0x3ca4 in
 * gc_9_4_2_offset.h and gc_9_4_3_offset.h (gc_9_0_offset.h has none) */
#define T_RLC_SPM_CPC_PERFMON_SAMPLE_DELAY	(0xA000 + 0x3c88)
#define T_RLC_SPM_SQG_PERFMON_SAMPLE_DELAY	(0xA000 + 0x3c98)
#define T_RLC_SPM_PERFMON_SAMPLE_DELAY_MAX	(0xA000 + 0x3ca4)
/* Not a register: an EVENT_WRITE, with its event dword as the value. */
#define T_EVENT				0xffffffffu
#define CS_PARTIAL_FLUSH_EV		0x00000407u /* EVENT_TYPE 7 | EVENT_INDEX 4 */

/* CP_PERFMON_CNTL.SPM_PERFMON_STATE (7:4), CP_PERFMON_STATE of vega10_enum.h */
#define T_SPM_STATE(cp_perfmon_cntl)	(((cp_perfmon_cntl) >> 4) & 0xf)
#define T_SPM_DISABLE_AND_RESET		0u
#define T_SPM_START_COUNTING		1u
#define T_SPM_STOP_COUNTING		2u

/* vega10_enum.h perf selects, by counter name */
struct spm_model_event {
	const char *name;
	int sq;			/* SE block SQ (else CPC, global) */
	unsigned int event;
};

extern const struct spm_model_event spm_model_events[];
extern const unsigned int spm_model_num_events;
/* By name (exact case), or NULL. */
const struct spm_model_event *spm_model_event(const char *name);

struct spm_model_write {
	uint32_t reg, val;
};

/*
 * Decodes ib[0..n) into w[0..max); returns the number of writes, -1 on a
 * packet the model does not know, a packet past the end, a WRITE_DATA to
 * anything but a register or without write confirm, or more than max
 * writes. NOPs (including the one-dword PACKET3(NOP, 0x3FFF) that amdgpu
 * pads rings with, gfx_v9_0.c's ring->funcs->nop) write nothing.
 */
int spm_model_decode(const uint32_t *ib, size_t n, struct spm_model_write *w,
		     size_t max);

/* One XCC's perfmon state, as the writes left it. */
struct spm_model_rlc {
	uint32_t grbm, cp_perfmon, spm_cntl, seg, core1;
	uint32_t cpc_sel, cpc_sel1, sq_sel;
	int cpc_sel_seen, cpc_sel1_seen, sq_sel_seen;
	uint32_t gaddr, seaddr;
	uint16_t gram[256], seram[256];
	/* Dwords of each mux RAM written (the highest address + 1) */
	uint32_t gram_dw, seram_dw;
	/*
	 * Sample delays as the writes left them: SAMPLE_DELAY_MAX, the CPC
	 * block's delay and the GRBM_GFX_INDEX it was written under, and the
	 * SQG block's per SE (GRBM_GFX_INDEX's SE_INDEX 23:16, or every SE
	 * under SE_BROADCAST_WRITES 31, as gc_9_*_sh_mask.h lay it out).
	 */
	uint32_t delay_max, cpc_delay, cpc_delay_grbm;
	int delay_max_seen, cpc_delay_seen;
	uint32_t sqg_delay[8];
	unsigned int sqg_delay_seen;	/* bit per SE */
	/* A ring register or SPM_VMID was written (the kernel's, see
	 * amdgpu_spm.c spm_hw_check()) */
	int ring_written;
	/* Writes made against the rules below, and the first one's reason */
	unsigned int violations;
	const char *violation;
};

void spm_model_reset(struct spm_model_rlc *m);
/*
 * Apply the writes. Rules (violations): the CPC selects are written with
 * GRBM_GFX_INDEX = instance 0, SE and SH broadcast; the SQ select and the
 * SE mux RAM under full broadcast (one layout for every SE); a mux RAM is
 * not written past its 128 dwords.
 */
void spm_model_apply(struct spm_model_rlc *m, const struct spm_model_write *w,
		     int nw);
/* The sample interval RLC_SPM_PERFMON_CNTL (31:16) says, SCLK cycles. */
unsigned int spm_model_interval(const struct spm_model_rlc *m);
/* Bytes of one sample the segment sizes describe (0: none). */
size_t spm_model_sample_size(const struct spm_model_rlc *m, unsigned int num_se);

/*
 * What the "hardware" counted in sample @k of logical XCC @xcc, SE @se (0
 * for a global counter), for a counter of block SQ (@sq) or CPC with
 * perf select @event, @bits32 wide, at sample interval @interval: the
 * cycle counter (CPC event 0, CPC_PERF_SEL_ALWAYS_COUNT) counts the
 * interval; the others a pattern that moves with @k and differs per
 * event, SE and XCC, never all ones (the decoder's "saturated").
 */
uint64_t spm_model_value(int sq, unsigned int event, unsigned int se,
			 unsigned int xcc, uint64_t k, unsigned int interval,
			 int bits32);

/*
 * Builds sample @k of XCC @xcc with timestamp @ts into buf (at most @max
 * bytes), lines as the mux RAMs and segment sizes say: the global
 * segment, then SE0..SE(num_se - 1). Returns its size, 0 if it does not
 * fit or the registers describe no sample. Mux entries the model does not
 * know count as violations.
 */
size_t spm_model_sample(struct spm_model_rlc *m, unsigned int num_se,
			uint64_t ts, uint64_t k, unsigned int xcc,
			unsigned char *buf, size_t max);

#endif /* SPM_MODEL_H */
