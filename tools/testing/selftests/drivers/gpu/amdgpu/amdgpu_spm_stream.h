/* SPDX-License-Identifier: GPL-2.0 */
/*
 * One streamed SPM counter for the amdgpu profiler kselftests: the command
 * streams that start and stop the cycle counter on GC 9.4.1, 9.4.2 and
 * 9.4.3, and a checker of the buffers the kernel fills with its samples.
 * Neither needs a device: amdgpu_spm_checker runs the checker over fakes,
 * amdgpu_profiler's stream_cycles runs it over the real stream.
 *
 * Sample layout (two 32-byte lines, 16 little-endian 16-bit slots each):
 * slots 0-3 a 64-bit timestamp, slot 4 the CPC cycle counter, the rest
 * unused.
 */
#ifndef AMDGPU_SPM_STREAM_H
#define AMDGPU_SPM_STREAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <drm/amdgpu_drm.h>

/*
 * Profiler uAPI 1.1 gives the share header's reserved words a meaning:
 * xcc_info (logical XCC, share count, share index), seq (per-XCC buffer
 * number since ACQUIRE, from 1), start_ns (CLOCK_BOOTTIME when the buffer
 * was installed) and last_us (from then to the last copy into the share).
 * Read them by name where the header has them, else by position.
 */
#ifdef AMDGPU_SPM_HDR_XCC_INFO
#define HDR_XCC_INFO(h)		((h)->info.xcc_info)
#define HDR_SEQ(h)		((h)->info.seq)
#define HDR_START_NS_LO(h)	((h)->info.start_ns_lo)
#define HDR_START_NS_HI(h)	((h)->info.start_ns_hi)
#define HDR_LAST_US(h)		((h)->info.last_us)
#else
#define HDR_XCC_INFO(h)		((h)->reserved[0])
#define HDR_SEQ(h)		((h)->reserved[1])
#define HDR_START_NS_LO(h)	((h)->reserved[2])
#define HDR_START_NS_HI(h)	((h)->reserved[3])
#define HDR_LAST_US(h)		((h)->reserved[4])
#define AMDGPU_SPM_HDR_XCC(info)	((info) & 0xff)
#define AMDGPU_SPM_HDR_NUM_SHARES(info)	(((info) >> 8) & 0xff)
#define AMDGPU_SPM_HDR_SHARE(info)	(((info) >> 16) & 0xff)
#endif
#ifndef AMDGPU_SPM_LOSS_SAMPLES
#define AMDGPU_SPM_LOSS_SAMPLES		0x1u
#define AMDGPU_SPM_LOSS_FULL		0x2u
#endif

/* GC versions as ip_discovery_version of AMDGPU_INFO_HW_IP_INFO reports them */
#define SPM_GC_9_4_1		0x090401	/* MI100 */
#define SPM_GC_9_4_2		0x090402	/* MI200 */
#define SPM_GC_9_4_3		0x090403	/* MI300 */

#define SPM_LINE_BYTES		32u
#define SPM_SAMPLE_BYTES	(2 * SPM_LINE_BYTES)
#define SPM_HEADER_BYTES	32u
#define SPM_MAX_XCC		16u
/* The 16-bit slot of the cycle counter in a sample (its mux RAM entry) */
#define SPM_SLOT_CYCLES		4

/*
 * The programmed sample interval in SCLK cycles: a multiple of 32 (what
 * the RLC takes, spm_program.c round_interval()) that is no power of two,
 * so that a mis-placed field cannot pass for it.
 */
#define SPM_CYCLES_INTERVAL	12000u

/*
 * How far a sample's cycle count may be from SPM_CYCLES_INTERVAL. Assumed:
 * the RLC samples every interval SCLK cycles (PERFMON_SAMPLE_INTERVAL is in
 * SCLK cycles), CPC_PERF_SEL_ALWAYS_COUNT counts one per SCLK cycle, and
 * SPM counters restart with every sample, so each sample holds the cycles
 * of one interval: interval exactly, give or take when the sample strobe
 * reaches the counter. A fixed strobe delay (what the RLC's per-block
 * SAMPLE_DELAY registers even out) does not change the count between two
 * strobes; only jitter in it does, a few cycles. 8 allows for that and is
 * less than half the 32-cycle step of the interval, so a wrong interval, a
 * counter of another clock or a count of half or twice the interval fails.
 */
#define SPM_CYCLES_TOLERANCE	8u

/*
 * The bounds, as the checker applies them. Above: a sample never counts
 * more than SPM_CYCLES_INTERVAL + SPM_CYCLES_TOLERANCE, on every part (a
 * counter of a faster clock, a longer interval, two intervals in one
 * sample all fail). Below: SPM_CYCLES_INTERVAL - SPM_CYCLES_TOLERANCE is
 * a failure only where spm_stream_cycles_exact() says the counter's clock
 * runs through the whole interval; elsewhere (GC 9.4.3, whose GFX clock
 * gating is on and which has no RLC_PERFMON_CLK_CNTL) such samples are
 * counted in spm_xcc_state.below and reported, not failed.
 */
bool spm_stream_cycles_exact(uint32_t gc);

/* The part a GC version is, for messages; NULL if the stream lacks it */
const char *spm_stream_part(uint32_t gc);

/* A warning to print before streaming on @gc, or NULL */
const char *spm_stream_warning(uint32_t gc);

/*
 * Write the stream that starts (@start) or stops the cycle counter into
 * @ib (@max_dw dwords), padded with NOPs to a multiple of 8 dwords.
 * Returns its length in dwords, -EOPNOTSUPP for a GC version it has no
 * stream for, -ENOSPC if @max_dw is too small.
 */
int spm_stream_build(uint32_t gc, bool start, uint32_t *ib, size_t max_dw);

/* What the checker keeps per share (XCC) from buffer to buffer */
struct spm_xcc_state {
	uint32_t xcc;		/* logical XCC the share holds */
	uint32_t seq;		/* its last sequence number; 0: none yet */
	uint64_t last_ts;	/* its last sample's timestamp */
	bool have_ts;
	uint64_t samples;	/* decoded so far */
	uint32_t min_cycles, max_cycles;	/* of the measured samples */
	/* measured below the lower bound, not exact (spm_stream_cycles_exact()) */
	uint64_t below;
};

struct spm_check {
	/* set by the caller */
	uint32_t version;	/* GET_VER, the header's version */
	uint32_t num_xcc;	/* shares per buffer */
	uint32_t share;		/* bytes per share, header included */
	bool measure;		/* check cycles and timestamps, want data */
	bool exact;		/* the lower bound too (spm_stream_cycles_exact()) */
	/* kept by spm_check_buffer() */
	struct spm_xcc_state xcc[SPM_MAX_XCC];
	unsigned int buffers;	/* buffers checked */
	unsigned int errors;	/* failed checks */
	char msg[256];		/* the first failure */
};

/* Start checking a stream: @share bytes per share, @num_xcc shares */
void spm_check_init(struct spm_check *c, uint32_t version, uint32_t num_xcc,
		    uint32_t share);

/*
 * Check one retired buffer of num_xcc * share bytes: SET_DEST_BUF
 * reported @bytes and @loss for it, it was installed by a call that ran
 * from @inst0_ns to @inst1_ns (CLOCK_BOOTTIME) and retired by one that
 * returned at @retired_ns. Returns the number of checks that failed; the
 * first failure of the stream is in c->msg.
 */
unsigned int spm_check_buffer(struct spm_check *c, const void *buf,
			      uint32_t bytes, uint32_t loss, uint64_t inst0_ns,
			      uint64_t inst1_ns, uint64_t retired_ns);

/* Decode sample @k of a share's data: timestamp and cycle count */
void spm_sample_decode(const void *data, uint32_t k, uint64_t *ts,
		       uint32_t *cycles);

/* Encode a sample as the RLC lays it out, for fakes */
void spm_sample_encode(void *data, uint32_t k, uint64_t ts, uint32_t cycles);

#endif /* AMDGPU_SPM_STREAM_H */
