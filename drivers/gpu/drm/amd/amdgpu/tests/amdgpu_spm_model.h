/* SPDX-License-Identifier: MIT */
/*
 * Copyright 2026 The amdgpu profiler series authors
 *
 * A register-level model of the RLC's Stream Performance Monitor, for the
 * KUnit tests: the real SPM hooks of gfx_v9_4_3.c and gfx_v9_0.c program
 * it through the device's register accessors, and it writes SPM rings the
 * way the sources in amdgpu_spm_model.c describe.
 */

#ifndef __AMDGPU_SPM_MODEL_H__
#define __AMDGPU_SPM_MODEL_H__

#include <linux/spinlock.h>
#include <linux/types.h>

#include "amdgpu_spm.h"
#include "tests/amdgpu_spm_rlc_ring.h"

struct amdgpu_device;
struct amdgpu_ip_block_version;
struct kunit;

/* The SPM registers the model gives meaning to */
enum spm_model_reg {
	SPM_R_PERFMON_CNTL,	/* RLC_SPM_PERFMON_CNTL */
	SPM_R_BASE_LO,		/* RLC_SPM_PERFMON_RING_BASE_LO */
	SPM_R_BASE_HI,		/* RLC_SPM_PERFMON_RING_BASE_HI */
	SPM_R_SIZE,		/* RLC_SPM_PERFMON_RING_SIZE */
	SPM_R_SEGMENT_SIZE,	/* RLC_SPM_PERFMON_SEGMENT_SIZE */
	SPM_R_THRESHOLD,	/* RLC_SPM_SEGMENT_THRESHOLD */
	SPM_R_RDPTR,		/* RLC_SPM_RING_RDPTR */
	SPM_R_MC_CNTL,		/* RLC_SPM_MC_CNTL */
	SPM_R_INT_CNTL,		/* RLC_SPM_INT_CNTL */
	SPM_R_CLK_CNTL,		/* RLC_CLK_CNTL */
	SPM_R_CP_PERFMON_CNTL,	/* CP_PERFMON_CNTL */
	SPM_R_NUM,
};

/**
 * struct spm_model_layout - the registers of one GC version, from its
 * asic_reg headers (filled in by the test file that includes them)
 * @name: for messages
 * @ip_version: GC IP version of the part
 * @ip_block: the GFX IP block whose early_init installs the hooks
 * @off: offset of each register in its segment
 * @seg: BASE_IDX of each register
 * @ring_mode_mask: RLC_SPM_PERFMON_CNTL.PERFMON_RING_MODE
 * @ring_mode_shift: its shift
 * @state_mask: CP_PERFMON_CNTL.SPM_PERFMON_STATE
 * @state_shift: its shift
 * @vmid_mask: RLC_SPM_MC_CNTL.RLC_SPM_VMID
 * @clk_mask: RLC_CLK_CNTL.RLC_SPM_CLK_CNTL where the part needs it (GC
 *	9.4.3: ROCm's hooks set it before SPM streams); 0 where nothing says
 *	it does
 * @lines_mask: RLC_SPM_PERFMON_SEGMENT_SIZE.PERFMON_SEGMENT_SIZE, the lines
 *	of a sample
 * @mc_cntl_default: reset value of RLC_SPM_MC_CNTL
 * @clk_cntl_default: reset value of RLC_CLK_CNTL
 * @num_xcc: XCCs of the part
 */
struct spm_model_layout {
	const char *name;
	u32 ip_version;
	const struct amdgpu_ip_block_version *ip_block;
	u32 off[SPM_R_NUM];
	u32 seg[SPM_R_NUM];
	u32 ring_mode_mask;
	u32 ring_mode_shift;
	u32 state_mask;
	u32 state_shift;
	u32 vmid_mask;
	u32 clk_mask;
	u32 lines_mask;
	u32 mc_cntl_default;
	u32 clk_cntl_default;
	unsigned int num_xcc;
};

/* CP_PERFMON_STATE of vega10_enum.h */
#define SPM_MODEL_DISABLE_AND_RESET	0
#define SPM_MODEL_START_COUNTING	1
#define SPM_MODEL_STOP_COUNTING		2

/**
 * struct spm_model_xcc - the SPM of one XCC
 * @w: the ring writer, while the registers point at a ring
 * @ring: index of that ring in &spm_model.rings, or -1
 * @streaming: SPM_PERFMON_STATE is START_COUNTING
 * @emitted: bytes written into rings
 * @dropped: bytes the RLC did not write (stopped, stalled, no clock...)
 * @vmfaults: samples written with a SPM_VMID other than 0 (the ring is a
 *	GART address: another VMID faults or writes into that VM)
 * @stray: samples written through SPM_VMID 0 (the GART) to an address
 *	that is no ring of the driver's, or spilled past the end of a ring's
 *	memory
 * @stalls: samples dropped by a ring-mode stall
 * @irqs: threshold interrupts raised
 * @reprogrammed: writes to the ring or SPM_VMID registers while streaming
 * @unknown_mode: samples attempted in a ring mode no source describes
 * @seq: stream position of the next line
 */
struct spm_model_xcc {
	struct spm_rlc_ring w;
	int ring;
	bool streaming;
	u64 emitted;
	u64 dropped;
	u64 vmfaults;
	u64 stray;
	u64 stalls;
	u64 irqs;
	u64 reprogrammed;
	u64 unknown_mode;
	u64 seq;
};

#define SPM_MODEL_MAX_RINGS	32
#define SPM_MODEL_LOG		1024

struct spm_model_ring {
	u64 gpu;
	u8 *cpu;
	u32 size;
	bool live;
};

struct spm_model_write {
	u8 xcc;
	u8 reg;
	u32 val;
};

/**
 * struct spm_model - the model and the fake register file
 * @adev: the device whose register accessors it serves
 * @l: register layout
 * @lock: guards everything below; register accessors may run anywhere
 * @regs: the register file, one dword per register
 * @nregs: entries of @regs
 * @x: per logical XCC
 * @rings: rings allocated through amdgpu_spm_ring_alloc_gtt()
 * @allocs: rings allocated and not freed
 * @fail_alloc: fail the ring allocation of this logical XCC, or -1
 * @alloc_gate: if set, ring allocation waits for it (ACQUIRE midway)
 * @alloc_waiting: completed when an allocation waits for @alloc_gate
 * @log: the SPM register writes, in order
 * @nlog: writes logged
 */
struct spm_model {
	struct amdgpu_device *adev;
	const struct spm_model_layout *l;
	spinlock_t lock; /* see above */
	u32 *regs;
	u32 nregs;
	struct spm_model_xcc x[AMDGPU_SPM_MAX_XCC];
	struct spm_model_ring rings[SPM_MODEL_MAX_RINGS];
	int allocs;
	int fail_alloc;
	struct completion *alloc_gate;
	struct completion *alloc_waiting;
	struct spm_model_write log[SPM_MODEL_LOG];
	unsigned int nlog;
};

extern const struct spm_model_layout spm_layout_gfx_v9_4_3;
extern const struct spm_model_layout spm_layout_gfx_v9_0;

struct spm_model *spm_model_create(struct kunit *test,
				   const struct spm_model_layout *l,
				   unsigned int nxcc);
u32 spm_model_read(struct spm_model *m, u32 xcc, enum spm_model_reg r);
void spm_model_write(struct spm_model *m, u32 xcc, enum spm_model_reg r, u32 v);
u32 spm_model_field(struct spm_model *m, u32 xcc, enum spm_model_reg r,
		    u32 mask, u32 shift);
void spm_model_profiler_start(struct spm_model *m, u32 xcc, u32 sample);
u32 spm_model_emit(struct spm_model *m, u32 xcc, u32 bytes);
void spm_model_reset(struct spm_model *m);
int spm_model_find_write(struct spm_model *m, u32 xcc, enum spm_model_reg r,
			 int from);
u64 spm_model_line_seq(struct spm_model *m, u32 xcc);

/* Streaming from a thread, at a rate, for the tests of the drain */
struct spm_model_stream;
struct spm_model_stream *spm_model_stream_start(struct kunit *test,
						struct spm_model *m, u32 xcc_mask,
						u64 bytes_per_sec, u64 total);
void spm_model_stream_wait(struct spm_model_stream *st);
bool spm_model_stream_done(struct spm_model_stream *st);

/* Check a share of a user buffer: every line of @xcc, in order */
struct spm_model_check {
	u64 next;	/* stream position of the next line */
	u64 lines;	/* lines seen */
	u64 gaps;	/* lines missing */
	bool bad;	/* a line that is not a line of @xcc */
	bool order;	/* a line older than one seen before */
};

void spm_model_check_share(struct kunit *test, unsigned long buf, u32 off,
			   u32 bytes, u32 xcc, struct spm_model_check *c);

/**
 * struct spm_env - a model, a device and two open files, for a test
 * @m: the model
 * @adev: the device
 * @a: a DRM file of partition 0
 * @b: another one
 * @saved_paranoid: module parameters to restore
 * @saved_vmid0: ...
 * @saved_ring: ...
 * @saved_backstop: ...
 */
struct spm_env {
	struct spm_model *m;
	struct amdgpu_device *adev;
	struct drm_file *a;
	struct drm_file *b;
	int saved_paranoid;
	bool saved_vmid0;
	unsigned int saved_ring;
	unsigned int saved_backstop;
};

struct spm_env *spm_env_create(struct kunit *test,
			       const struct spm_model_layout *l,
			       unsigned int nxcc, u32 ring_size);
int spm_env_op(struct spm_env *e, struct drm_file *f, u32 op);
int spm_env_set_buf(struct spm_env *e, struct drm_file *f, unsigned long buf,
		    u32 size, u32 timeout, struct drm_amdgpu_spm_args *out);
unsigned long spm_env_user_buf(struct kunit *test, u32 size, unsigned long flags);
void spm_env_read_header(struct kunit *test, unsigned long buf, u32 off,
			 struct drm_amdgpu_spm_buffer_header *hdr);
void spm_env_stats(struct kunit *test, struct spm_env *e, u32 xcp,
		   struct amdgpu_spm_stats *st);
bool spm_env_wait_passes(struct kunit *test, struct spm_env *e, u32 xcp,
			 unsigned int passes, unsigned int ms);
bool spm_env_wait_header(struct kunit *test, unsigned long buf, u32 off,
			 u32 bytes, unsigned int ms);

#endif
