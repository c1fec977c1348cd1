/* SPDX-License-Identifier: MIT */
/*
 * Copyright 2026 The amdgpu profiler series authors
 *
 * SPM (Stream Performance Monitor) programming for AMD GC 9.4.1 (MI100),
 * 9.4.2 (MI200) and 9.4.3 (MI300), offline part: pick counters from a small
 * table, lay them out in the RLC's mux RAM, build the PM4 command streams
 * that start and stop streaming, and decode one sample the RLC wrote.
 *
 * The kernel (amdgpu_spm.c and the gfx_v9_* SPM hooks of this series) owns
 * the ring: base, size, threshold, VMID, read pointer, ring mode and the
 * SPM disable-and-reset. These streams never touch those.
 *
 * Sample layout (one sampling period, as it lands in an XCC's share after
 * the share header): spm_sample_size() bytes = total lines x 32 bytes; a
 * line is 16 little-endian 16-bit slots. Lines: the global segment first,
 * then SE0, SE1, ... each se_lines long. Global slots 0..3 hold a 64-bit
 * timestamp (little-endian over the 4 slots). A 16-bit counter occupies one
 * slot; a 32-bit counter its low half at slot s of an even line and its
 * high half at s + 16 (same column, next line). This is how aqlprofile's
 * own decoder reads a sample (rocprofiler-sdk lib/aqlprofile/core/
 * spm_decode.cpp, aqlprofile_spm_decode_stream_v1(): the 64-bit timestamp
 * from slot 0, a counter at its mux RAM index, the high half of a 32-bit
 * one 16 slots further, SE j's segment at global_num_line * 16 +
 * se_num_line * 16 * j); see spm_program.c for the mux RAM side.
 */
#ifndef SPM_PROGRAM_H
#define SPM_PROGRAM_H

#include <stddef.h>
#include <stdint.h>

enum spm_gc_version {
	SPM_GC_9_4_1 = 0x090401,	/* MI100 */
	SPM_GC_9_4_2 = 0x090402,	/* MI200 */
	SPM_GC_9_4_3 = 0x090403,	/* MI300 (per XCC) */
};

enum spm_segment {
	SPM_SEG_GLOBAL = 0,
	SPM_SEG_SE = 1,			/* one value per shader engine */
};

/* Requests at most this many counters in one configuration. */
#define SPM_MAX_COUNTERS	8
/* The sample interval (SCLK cycles): default, and limits after rounding. */
#define SPM_INTERVAL_DEFAULT	8192u
#define SPM_INTERVAL_MIN	32u
#define SPM_INTERVAL_MAX	65504u
/* Lines per segment this library lays out at most (global, one SE). */
#define SPM_MAX_SEG_LINES	2
#define SPM_LINE_SLOTS		16
#define SPM_LINE_BYTES		32
/*
 * Mux RAM entries written for a segment of @lines lines: one per slot and
 * two more, 0xffff like every unused entry, that end the RAM's list (what
 * aqlprofile writes: lines * 16 + 2 entries, "end of muxsel"), so
 * lines * 8 + 1 dwords.
 */
#define SPM_MUX_ENTRIES(lines)	((lines) * SPM_LINE_SLOTS + 2)
/* At most 8 SEs (MI100/MI200); 4 per XCC on MI300. */
#define SPM_MAX_SE		8
#define SPM_MAX_VALUES		(SPM_MAX_COUNTERS * SPM_MAX_SE)

/* One counter a caller asks for. */
struct spm_counter_req {
	const char *name;	/* a name of spm_counter_table(), any case */
	unsigned int bits;	/* 16 or 32; 0: the counter's default */
};

/* An entry of the counter table. */
struct spm_counter_info {
	const char *name;
	enum spm_segment segment;
	unsigned int spm_block;	/* SPM block id (global or SE table) */
	unsigned int event;	/* perf select value (vega10_enum.h) */
	unsigned int default_bits;
	unsigned int only_32bit; /* programmed 32-bit only (SQ: aqlprofile
				  * always does; 16-bit is not verified) */
	const char *what;	/* one line for a listing */
	const char *unit;	/* what it counts, plural: "cycles", "waves" */
};

/* Where a configured counter went. */
struct spm_counter_slot {
	const struct spm_counter_info *info;
	unsigned int bits;		/* 16 or 32 */
	unsigned int sub;		/* SPM sub-counter index in its block */
	/* Slot (16-bit unit) of the low half within its segment; the high
	 * half of a 32-bit counter is at slot + 16. */
	unsigned int slot;
	uint16_t muxsel_lo, muxsel_hi;	/* mux RAM entries (hi: 32-bit) */
	unsigned int value_index;	/* first of its values in values[] */
	unsigned int num_values;	/* 1 (global) or num_se (SE) */
};

struct spm_config {
	enum spm_gc_version gc;
	unsigned int num_se;		/* SEs per XCC the layout covers */
	unsigned int interval;		/* programmed sample interval */
	unsigned int interval_requested;
	unsigned int num_counters;
	struct spm_counter_slot counters[SPM_MAX_COUNTERS];
	unsigned int num_values;	/* length of spm_decode_sample()'s values */
	/* Segment sizes in 32-byte lines. */
	unsigned int global_lines;
	unsigned int se_lines;		/* per SE; 0: no SE counters */
	unsigned int total_lines;	/* global + num_se * se_lines */
	/* Mux RAM contents, one 16-bit entry per slot of the segment and
	 * the two that end it (SPM_MUX_ENTRIES()) */
	uint16_t global_mux[SPM_MUX_ENTRIES(SPM_MAX_SEG_LINES)];
	uint16_t se_mux[SPM_MUX_ENTRIES(SPM_MAX_SEG_LINES)];
	/* Select register values the start stream writes. */
	uint32_t cpc_select, cpc_select1;
	unsigned int cpc_used, cpc_select1_used;
	uint32_t sq_select;
	unsigned int sq_used;
	/* RLC_SPM_PERFMON_SEGMENT_SIZE (and _CORE1 on 8-SE parts). */
	uint32_t segment_size, segment_size_core1;
};

/* The counter table; *count gets its length. */
const struct spm_counter_info *spm_counter_table(unsigned int *count);
/* An entry by name (any case), or NULL. */
const struct spm_counter_info *spm_counter_find(const char *name);

/*
 * SEs per XCC this library lays a sample of @gc out for (8 on 9.4.1 and
 * 9.4.2, 4 on 9.4.3), 0 for a GC version it has no streams for.
 */
unsigned int spm_gc_num_se(enum spm_gc_version gc);

/*
 * Check the request and lay it out for @num_se SEs per XCC, as the device
 * reports them (0: spm_gc_num_se(gc); any other value must be that one:
 * the sample delay tables and the segment registers are written for it).
 * interval is in SCLK cycles: 0 takes SPM_INTERVAL_DEFAULT; otherwise it
 * is rounded to the nearest multiple of 32 and limited to
 * SPM_INTERVAL_MIN..SPM_INTERVAL_MAX. Returns 0, -EINVAL (NULL cfg, NULL
 * reqs with n > 0, unknown GC version, NULL or unknown or repeated name,
 * bits not 0/16/32, 16 bits for a 32-bit-only counter, or widths mixed
 * within one block), -ERANGE (@num_se is not the GC's) or -E2BIG (n >
 * SPM_MAX_COUNTERS, more counters than a block's SPM sub-counters).
 */
int spm_config_build(struct spm_config *cfg, enum spm_gc_version gc,
		     unsigned int num_se, const struct spm_counter_req *reqs,
		     unsigned int n, unsigned int interval);

/*
 * Write the PM4 stream that programs and starts streaming (for a compute
 * ring; one IB) into ib. Returns the number of dwords written, or with
 * ib == NULL the number needed; -ENOSPC if max_dw is too small (ib is then
 * partly written), -EINVAL for a NULL cfg.
 */
int spm_program_start(const struct spm_config *cfg, uint32_t *ib,
		      size_t max_dw);
/* The same for the stream that stops counting. */
int spm_program_stop(const struct spm_config *cfg, uint32_t *ib,
		     size_t max_dw);

/* Bytes of one sample. */
size_t spm_sample_size(const struct spm_config *cfg);

/*
 * Decode one sample (spm_sample_size() bytes, any alignment): *timestamp
 * (if not NULL) gets the 64-bit timestamp, values[cfg->num_values] the
 * counters: counter i at values[counters[i].value_index + se] (se = 0 for
 * a global counter).
 * Values are counts for the interval; all-ones (0xffff, 0xffffffff) means
 * saturated or invalid. Returns 0 or -EINVAL.
 */
int spm_decode_sample(const struct spm_config *cfg, const void *sample,
		      uint64_t *timestamp, uint64_t *values);

#endif /* SPM_PROGRAM_H */
