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
	/* GFXHUB VM context 0; context n is n strides further (gfxhub_v1_*) */
	SPM_R_VM_CNTL,		/* VM_CONTEXT0_CNTL */
	SPM_R_VM_CNTL1,		/* VM_CONTEXT1_CNTL: the stride */
	SPM_R_VM_PTB_LO,	/* VM_CONTEXT0_PAGE_TABLE_BASE_ADDR_LO32 */
	SPM_R_VM_PTB_HI,	/* ..._HI32 */
	SPM_R_VM_PTB1_LO,	/* VM_CONTEXT1_PAGE_TABLE_BASE_ADDR_LO32: the stride */
	SPM_R_VM_START_LO,	/* VM_CONTEXT0_PAGE_TABLE_START_ADDR_LO32 */
	SPM_R_VM_START_HI,	/* ..._HI32 */
	SPM_R_VM_END_LO,	/* VM_CONTEXT0_PAGE_TABLE_END_ADDR_LO32 */
	SPM_R_VM_END_HI,	/* ..._HI32 */
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
 * @mc_fields_mask: RLC_SPM_MC_CNTL's other fields: RLC_SPM_POLICY,
 *	RLC_SPM_PERF_CNTR, RLC_SPM_FED, RLC_SPM_MTYPE_OVER, RLC_SPM_MTYPE
 * @clk_mask: RLC_CLK_CNTL.RLC_SPM_CLK_CNTL where the part needs it (GC
 *	9.4.3: ROCm's hooks set it before SPM streams); 0 where nothing says
 *	it does
 * @lines_mask: RLC_SPM_PERFMON_SEGMENT_SIZE.PERFMON_SEGMENT_SIZE, the lines
 *	of a sample
 * @vm_enable_mask: VM_CONTEXT1_CNTL.ENABLE_CONTEXT
 * @vm_depth_mask: VM_CONTEXT1_CNTL.PAGE_TABLE_DEPTH
 * @vm_depth_shift: its shift
 * @vm_block_mask: VM_CONTEXT1_CNTL.PAGE_TABLE_BLOCK_SIZE
 * @vm_retry_mask: VM_CONTEXT1_CNTL.RETRY_PERMISSION_OR_INVALID_PAGE_FAULT
 * @vm_retry_reset: whether gfxhub sets that bit at every GART enable
 *	(gfxhub_v1_0 on GC 9.4.2, gfxhub_v1_2 on GC 9.4.3/9.4.4)
 * @mc_cntl_default: reset value of RLC_SPM_MC_CNTL (where no header gives
 *	it, one of two readings: see spm_model_layout_gc943_reset_set())
 * @clk_cntl_default: reset value of RLC_CLK_CNTL (likewise)
 * @rlc_init: the IP's &amdgpu_rlc_funcs.init programs SPM_VMID and nothing
 *	else (gfx_v9_4_3_rlc_init()): the model runs it, as sw_init does
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
	u32 mc_fields_mask;
	u32 clk_mask;
	u32 lines_mask;
	u32 vm_enable_mask;
	u32 vm_depth_mask;
	u32 vm_depth_shift;
	u32 vm_block_mask;
	u32 vm_retry_mask;
	bool vm_retry_reset;
	u32 mc_cntl_default;
	u32 clk_cntl_default;
	bool rlc_init;
	unsigned int num_xcc;
};

/*
 * The SPM VMID the tests expect: the first KFD VMID, which gmc_v9_0_sw_init()
 * sets to 3 on GC 9.4.1-9.4.4 (the model sets it so on the fake device)
 */
#define SPM_MODEL_VMID			3

/**
 * struct spm_model_reading - one reading of what no source says about the
 *	RLC; the streaming cases run under each of spm_model_readings[]
 * @name: the case parameter's description
 * @stall_at: ring mode 3 stops at RLC_SPM_RING_RDPTR, having filled the
 *	line before it, and tells a full ring from an empty one by what it
 *	wrote since RDPTR last moved; false: it stops a sample short of RDPTR
 *	(equal pointers then always mean empty, as kfd_spm.c reads them)
 * @thr_unit: bytes of fill per unit of RLC_SPM_SEGMENT_THRESHOLD; 0: a
 *	sample ("segment")
 * @pub_line: the write pointer moves after every line, not every sample
 * @zero_va0: with base and size 0 the RLC writes at GPU address 0 through
 *	SPM_VMID; false: it writes nothing
 * @user_mode3: the profiler's command stream selects PERFMON_RING_MODE 3
 *	(aqlprofile does, "to match KFD"); false: it leaves the kernel's
 *	mode 0
 */
struct spm_model_reading {
	const char *name;
	bool stall_at;
	u32 thr_unit;
	bool pub_line;
	bool zero_va0;
	bool user_mode3;
};

struct spm_model;

extern const struct spm_model_reading spm_model_readings[];
const void *spm_model_reading_gen(const void *prev, char *desc);
void spm_model_set_reading(struct spm_model *m, const struct spm_model_reading *rd);

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
 * @vmfaults: samples whose ring did not translate through the page table
 *	of SPM_VMID: a page outside the context's range, an invalid or
 *	read-only PTE, a context with no table the model knows (a VM of
 *	graphics or KFD); no memory is written
 * @retry_faults: those of @vmfaults in a context that retries faults (the
 *	RLC would wait for a fault nobody resolves)
 * @unknown_ctx: samples through a context the model cannot walk (not
 *	enabled, or not a flat table: what gfxhub leaves after a reset)
 * @vmid0: samples attempted while SPM_VMID was 0, the GART
 * @stray: samples written to memory that is no ring of the driver's:
 *	through the GART to an address that is no ring, through a PTE to an
 *	address that is no ring page, a ring base that translates into the
 *	middle of a ring, or spilled past the end of a ring's memory
 * @freed: samples whose translation led to a ring page already freed
 * @stalls: samples dropped by a ring-mode stall
 * @irqs: threshold interrupts raised
 * @reprogrammed: writes to the ring or SPM_VMID registers while streaming
 * @unknown_mode: samples attempted in a ring mode no source describes
 * @seq: stream position of the next line
 * @tlb: the translations the hub holds for @tlb_vmid, from the first walk
 *	after a flush until the next flush of that VMID (NULL: none)
 * @tlb_vmid: the VMID @tlb is of
 * @tlb_start: its first page
 * @tlb_n: its entries
 * @tlb_bad: what made the walk fail: 0 none, else a counter to bump
 * @tlb_valid: @tlb and the fields below hold a walk
 * @tlb_retry: the context of that walk retries faults
 * @tlb_gen: bumped whenever @tlb changes
 * @tlb_flushes_2: heavyweight (type 2) flushes of the SPM VMID on this hub
 * @xl_gen: @tlb_gen of the cached translation below
 * @xl_base: ring base it is of
 * @xl_size: ring size it is of
 * @xl_ring: the ring, or a negative SPM_MODEL_XL_*
 * @tlb_pt: the table of &spm_model.pts that @tlb was walked from, or -1
 * @full: (reading @stall_at) the ring filled up to RDPTR
 * @full_at: the RDPTR it filled up to
 * @fulls: times it filled up to RDPTR
 * @reads: the driver's MMIO reads of each register of this XCC (the
 *	tests' own reads through spm_model_read() are not counted)
 */
struct spm_model_xcc {
	struct spm_rlc_ring w;
	int ring;
	bool streaming;
	u64 emitted;
	u64 dropped;
	u64 vmfaults;
	u64 retry_faults;
	u64 unknown_ctx;
	u64 vmid0;
	u64 stray;
	u64 freed;
	u64 stalls;
	u64 irqs;
	u64 reprogrammed;
	u64 unknown_mode;
	u64 seq;
	u64 *tlb;
	u32 tlb_vmid;
	u64 tlb_start;
	u32 tlb_n;
	int tlb_bad;
	bool tlb_valid;
	bool tlb_retry;
	u64 tlb_gen;
	u64 tlb_flushes_2;
	u64 xl_gen;
	u64 xl_base;
	u32 xl_size;
	int xl_ring;
	int tlb_pt;
	bool full;
	u32 full_at;
	u64 fulls;
	u64 reads[SPM_R_NUM];
};

#define SPM_MODEL_MAX_RINGS	32
#define SPM_MODEL_LOG		1024

struct spm_model_ring {
	u64 gpu;
	u64 dma;
	dma_addr_t *pages;
	u8 *cpu;
	u32 size;
	bool live;
};

#define SPM_MODEL_MAX_PTS	16

/* How an address translates, when it does not to a ring page */
#define SPM_MODEL_XL_FAULT	-1	/* a fault: nothing is written */
#define SPM_MODEL_XL_UNKNOWN	-2	/* a context the model cannot walk */
#define SPM_MODEL_XL_STRAY	-3	/* memory that is no ring page */
#define SPM_MODEL_XL_FREED	-4	/* a ring page already freed */

/* A page table in (fake) VRAM: what the CPU wrote, what the GPU sees */
struct spm_model_pt {
	u64 addr;
	u64 *cpu;
	u64 *gpu;
	u32 n;
	bool live;
};

struct spm_model_write {
	u8 xcc;
	u8 reg;
	u32 val;
};

/**
 * struct spm_model - the model and the fake register file
 * @test: the test it belongs to
 * @adev: the device whose register accessors it serves
 * @l: register layout
 * @rd: the reading of the unknowns (spm_model_readings[0] unless set)
 * @lock: guards everything below; register accessors may run anywhere
 * @regs: the register file, one dword per register
 * @nregs: entries of @regs
 * @x: per logical XCC
 * @rings: rings allocated through amdgpu_spm_ring_alloc_gtt()
 * @allocs: rings allocated and not freed
 * @pts: page tables allocated through amdgpu_spm_pt_alloc_vram()
 * @pts_allocated: allocations of page tables, ever
 * @next_dma: fake DMA address of the next ring allocated
 * @fail_alloc: fail the ring allocation of this logical XCC, or -1
 * @fail_pt: fail the next page table allocation
 * @hdp_flushes: HDP flushes
 * @tlb_flushes: TLB flushes of the SPM VMID
 * @alloc_gate: if set, ring allocation waits for it (ACQUIRE midway)
 * @alloc_waiting: completed when an allocation waits for @alloc_gate
 * @log: the SPM register writes, in order
 * @nlog: writes logged
 * @reads_other: the driver's MMIO reads of registers the model does not
 *	decode (VM contexts other than 0, other IPs)
 * @free_violations: rings and page tables the driver freed while a VM
 *	context of some XCC, or the TLB of its hub, could still reach them;
 *	every case expects 0 (checked when the model goes away)
 * @mc_seed: what spm_model_seed_mc_cntl() gave RLC_SPM_MC_CNTL's other
 *	fields (0 unless a test does)
 * @mc_clobbers: the driver's writes of RLC_SPM_MC_CNTL that changed a bit
 *	outside RLC_SPM_VMID; every case expects 0
 * @kiq: TLB flushes go through the KIQ, which skips them while a reset is
 *	pending (see amdgpu_spm_model.c)
 * @kiq_skipped: flushes so skipped
 * @flush_hold: if set, the next TLB flush completes it, then waits until a
 *	writer waits for the reset domain's semaphore (a reset the test
 *	starts when it sees the completion)
 */
struct spm_model {
	struct kunit *test;
	struct amdgpu_device *adev;
	const struct spm_model_layout *l;
	const struct spm_model_reading *rd;
	spinlock_t lock; /* see above */
	u32 *regs;
	u32 nregs;
	struct spm_model_xcc x[AMDGPU_SPM_MAX_XCC];
	struct spm_model_ring rings[SPM_MODEL_MAX_RINGS];
	int allocs;
	struct spm_model_pt pts[SPM_MODEL_MAX_PTS];
	u64 pts_allocated;
	u64 next_dma;
	int fail_alloc;
	bool fail_pt;
	u64 hdp_flushes;
	u64 tlb_flushes;
	struct completion *alloc_gate;
	struct completion *alloc_waiting;
	struct spm_model_write log[SPM_MODEL_LOG];
	unsigned int nlog;
	u64 reads_other;
	u64 free_violations;
	u32 mc_seed;
	u64 mc_clobbers;
	bool kiq;
	u64 kiq_skipped;
	struct completion *flush_hold;
};

extern const struct spm_model_layout spm_layout_gfx_v9_4_3;
extern const struct spm_model_layout spm_layout_gfx_v9_0;
const struct spm_model_layout *spm_model_layout_gc941(struct kunit *test,
						      bool retry);
const struct spm_model_layout *spm_model_layout_gc943_reset_set(struct kunit *test);

struct spm_model *spm_model_create(struct kunit *test,
				   const struct spm_model_layout *l,
				   unsigned int nxcc);
u32 spm_model_read(struct spm_model *m, u32 xcc, enum spm_model_reg r);
u64 spm_model_reads(struct spm_model *m, enum spm_model_reg r);
u64 spm_model_ring_base(struct spm_model *m, u32 xcc);
int spm_model_ring_of_dma(struct spm_model *m, u64 dma);
void spm_model_write(struct spm_model *m, u32 xcc, enum spm_model_reg r, u32 v);
void spm_model_seed_mc_cntl(struct spm_model *m, u32 other);
u32 spm_model_field(struct spm_model *m, u32 xcc, enum spm_model_reg r,
		    u32 mask, u32 shift);
void spm_model_profiler_start(struct spm_model *m, u32 xcc, u32 sample);
u32 spm_model_emit(struct spm_model *m, u32 xcc, u32 bytes);
void spm_model_reset(struct spm_model *m);
void spm_model_lose_vram(struct spm_model *m);
void spm_model_gart_disable(struct spm_model *m);
unsigned int spm_model_live_pts(struct spm_model *m);
int spm_model_find_write(struct spm_model *m, u32 xcc, enum spm_model_reg r,
			 int from);
u64 spm_model_line_seq(struct spm_model *m, u32 xcc);
u32 spm_model_ctx_read(struct spm_model *m, u32 xcc, u32 vmid,
		       enum spm_model_reg r);
int spm_model_translate(struct spm_model *m, u32 xcc, u32 vmid, u64 va,
			u64 *dma);

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
 * @saved_ring: ...
 * @saved_backstop: ...
 * @saved_release: ...
 */
struct spm_env {
	struct spm_model *m;
	struct amdgpu_device *adev;
	struct drm_file *a;
	struct drm_file *b;
	int saved_paranoid;
	unsigned int saved_ring;
	unsigned int saved_backstop;
	unsigned int saved_release;
};

struct spm_env *spm_env_create(struct kunit *test,
			       const struct spm_model_layout *l,
			       unsigned int nxcc, u32 ring_size);
int spm_env_op(struct spm_env *e, struct drm_file *f, u32 op);
int spm_env_set_buf(struct spm_env *e, struct drm_file *f, unsigned long buf,
		    u32 size, u32 timeout, struct drm_amdgpu_spm_args *out);
unsigned long spm_env_user_buf(struct kunit *test, u32 size, unsigned long flags);
void spm_env_two_partitions(struct kunit *test, struct spm_env *e,
			    u32 xccs0, u32 xccs1);
void spm_env_read_header(struct kunit *test, unsigned long buf, u32 off,
			 struct drm_amdgpu_spm_buffer_header *hdr);
void spm_env_stats(struct kunit *test, struct spm_env *e, u32 xcp,
		   struct amdgpu_spm_stats *st);
bool spm_env_wait_passes(struct kunit *test, struct spm_env *e, u32 xcp,
			 unsigned int passes, unsigned int ms);
bool spm_env_wait_header(struct kunit *test, unsigned long buf, u32 off,
			 u32 bytes, unsigned int ms);

#endif
