/* SPDX-License-Identifier: MIT */
/*
 * Copyright 2026 The amdgpu profiler series authors
 *
 * Tests only: a model of DRM_IOCTL_AMDGPU_PROFILER as the kernel series
 * implements it (input checks, ownership, the wait and its write-back of
 * the time left, per-XCC shares with 1.0 or 1.1 headers), so the tools and
 * the hsakmt provider can be exercised without a GPU; and of the ioctls
 * libdrm_amdgpu issues to submit a command stream (GEM, GEM_VA, CTX, CS,
 * WAIT_CS, AMDGPU_INFO), whose IBs it runs through the independent PM4
 * decoder and RLC model of spm_model.h, streaming what they programmed.
 * The hsakmt unit test calls it in-process; fake_amdgpu_preload.so puts it
 * behind open(), ioctl(), mmap() and fcntl() of a chosen render node path
 * for whole programs.
 */
#ifndef FAKE_AMDGPU_H
#define FAKE_AMDGPU_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/*
 * samples=GC:INTERVAL:NAME:BITS+NAME:BITS...: each share's data is whole
 * SPM samples, as the RLC would lay them out for that configuration (see
 * fake_amdgpu.c), one per INTERVAL ticks of the GPU counter (counter_khz)
 * since the first buffer of the acquisition was installed, the rest
 * waiting for the next buffer when a share is full.
 */
#define FAKE_SAMPLES_MAX	8
struct fake_amdgpu_samples {
	unsigned int n;			/* counters; 0: byte patterns instead */
	uint32_t gc;			/* 0x090401, 0x090402, 0x090403 */
	uint32_t interval;		/* SCLK cycles; timestamp ticks per sample */
	char name[FAKE_SAMPLES_MAX][40];
	unsigned int bits[FAKE_SAMPLES_MAX];
	bool se[FAKE_SAMPLES_MAX];	/* an SQ_* counter: one value per SE */
	bool cycles[FAKE_SAMPLES_MAX];	/* CPC_ALWAYS_COUNT: = interval */
	/* The layout, worked out by the fake itself */
	unsigned int slot[FAKE_SAMPLES_MAX];
	unsigned int num_se, global_lines, se_lines, sample_bytes;
};

/*
 * The value the fake puts in counter @c (position in samples=) for the
 * per-XCC sample @k, SE @se (0 for a global counter), logical XCC @xcc.
 * Never all-ones (the decoder's "saturated"); 32-bit ones use the high
 * half.
 */
static inline uint64_t fake_amdgpu_sample_value(const struct fake_amdgpu_samples *s,
						unsigned int c, uint64_t k,
						unsigned int se,
						unsigned int xcc)
{
	uint64_t v;

	if (s->cycles[c])
		return s->interval;
	v = k * 37u + c * 1000u + se * 100u + xcc * 10u;
	if (s->bits[c] == 32)
		return (v + 0x10000ull * (c + 1)) % 0xffffffffull;
	return v % 0xffffu;
}

/*
 * An ioctl the fake can be made to fail (fail=OP:ERRNO or OP:ERRNO:CALL,
 * OP one of gem_create, gem_mmap, gem_va, ctx, cs, wait_cs): every call,
 * or only the CALL-th (from 1). gem_va fails MAP only, ctx ALLOC only.
 */
enum fake_amdgpu_op {
	FAKE_OP_NONE,
	FAKE_OP_GEM_CREATE,
	FAKE_OP_GEM_MMAP,
	FAKE_OP_GEM_VA,
	FAKE_OP_CTX,
	FAKE_OP_CS,
	FAKE_OP_WAIT_CS,
	FAKE_OP_NUM
};

struct fake_amdgpu_config {
	uint32_t version;	/* GET_VER answer; 0: no profiler (-EINVAL) */
	unsigned int num_xcc;	/* shares per buffer */
	unsigned int first_xcc;	/* logical XCC id of share 0 */
	int acquire_err;	/* errno ACQUIRE fails with, 0 to succeed */
	uint32_t bytes;		/* data bytes per share per buffer (varies) */
	unsigned int fill_ms;	/* how long a buffer takes to fill */
	/*
	 * fixed=1: a retired share holds the bytes of one fill_ms, however
	 * long the buffer was current (a SET_DEST_BUF still waits fill_ms):
	 * amounts and FULL flags that do not depend on the host's speed.
	 * fill_ms=0 is fixed too, without the wait.
	 */
	bool fixed;
	/*
	 * sig_call=N: once the N-th SET_DEST_BUF returned, the fake sends
	 * SIGINT to its process, as a user stopping the recorder would: a
	 * run of a known number of buffers instead of a duration.
	 */
	unsigned int sig_call;
	uint32_t loss_seq;	/* the buffer with this seq loses data (XCC share 0) */
	uint32_t gap_seq;	/* this seq is skipped, as if the buffer were lost */
	unsigned int eintr_call;/* the n-th waiting SET_DEST_BUF is interrupted once */
	unsigned int stop_call;	/* from the n-th SET_DEST_BUF on, no more data */
	unsigned int tamper_call;/* the n-th SET_DEST_BUF of an acquisition finds
				  * the ring registers changed: -EIO from then on,
				  * until RELEASE */
	uint64_t memlock;	/* RLIMIT_MEMLOCK of a caller without
				  * CAP_IPC_LOCK, bytes; 0: no limit */
	bool nospm;		/* no SPM on the device (SR-IOV VF, no hooks):
				  * every SPM operation fails with -EOPNOTSUPP */
	bool nogem;		/* GEM_CREATE fails with -ENOMEM */
	uint32_t counter_khz;	/* AMDGPU_INFO_DEV_INFO.gpu_counter_freq; the
				  * AMDGPU_INFO_TIMESTAMP counter runs at it
				  * on CLOCK_BOOTTIME (default 100000) */
	struct fake_amdgpu_samples samples;	/* samples= */
	/*
	 * The device (gc=9.4.1|9.4.2|9.4.3|9.4.4, default 9.4.3 or the GC of
	 * samples=): what AMDGPU_INFO's HW_IP_INFO and DEV_INFO say, and the
	 * SEs per XCC its RLC model lays samples out for. ipdisc=0: a kernel
	 * older than HW_IP_INFO's ip_discovery_version (it reads 0).
	 */
	uint32_t gc;
	bool no_ipdisc;
	/* dev_num_se=N: DEV_INFO's num_shader_engines (default: the SEs per
	 * XCC the RLC model lays samples out for, 8 or 4) */
	unsigned int dev_num_se;
	/*
	 * rlc=1: each XCC streams only what the IBs submitted to it
	 * programmed and started (as the hardware does): no byte patterns,
	 * no samples=. An XCC that an IB programmed streams that way in any
	 * case. IBs run on the ring of the partition's share cs_xcc (0..):
	 * the one compute ring the kernel's scheduler picks, of one XCC.
	 * cs_hang=1: no job finishes (its fence never signals, its IB does
	 * not run). cs_delay_ms=N: a job runs N ms after its CS was made
	 * (the CS returns then).
	 */
	bool rlc;
	unsigned int cs_xcc;
	bool cs_hang;
	unsigned int cs_delay_ms;	/* a job runs this long after its CS */
	enum fake_amdgpu_op fail_op;	/* fail= */
	int fail_err;
	unsigned int fail_call;		/* 0: every call */
};

/* One SET_DEST_BUF as the fake kernel saw it. */
struct fake_amdgpu_call {
	uint64_t dest_buf;
	uint32_t buf_size;
	uint32_t timeout_in;
	uint32_t timeout_out;
	int ret;
};

#define FAKE_AMDGPU_MAX_CALLS	256

struct fake_amdgpu_stats {
	unsigned int get_ver, acquire, release, set_dest_buf, version_ioctl;
	unsigned int ncalls;
	struct fake_amdgpu_call calls[FAKE_AMDGPU_MAX_CALLS];
	int owner;		/* fd owning the SPM, -1 none */
	uint32_t seq;		/* seq of the buffer installed last */
	uint64_t pinned;	/* bytes charged to the memlock limit now */
	unsigned int gem_create, gem_close, timestamp;
	unsigned int bo_dest;	/* SET_DEST_BUF calls whose buffer is a BO */
	unsigned int full_shares;	/* shares retired with LOSS_FULL */
	/* Submission: GEM_VA, CTX, CS, WAIT_CS */
	unsigned int op_calls[FAKE_OP_NUM];	/* calls per op, failed too */
	unsigned int bos_live;		/* BOs with a handle or a mapping */
	unsigned int va_map, va_unmap;	/* GEM_VA MAP and UNMAP done */
	unsigned int va_dropped;	/* mappings GEM_CLOSE took away */
	unsigned int va_live;
	unsigned int ctx_alloc, ctx_free, ctx_live;
	unsigned int cs, cs_ok;		/* CS ioctls, the successful ones */
	unsigned int wait_cs, wait_busy;	/* WAIT_CS, those still busy */
	unsigned int ib_run;		/* IBs the model executed */
	unsigned int ib_bad;		/* IBs the PM4 decoder refused */
	unsigned int ib_not_in_list;	/* IB BO missing from the BO list */
	unsigned int vm_faults;		/* IB address not mapped */
	unsigned int ib_violations;	/* writes against spm_model.h's rules */
	unsigned int ring_writes;	/* IBs that wrote a kernel register */
	unsigned int spm_start, spm_stop;	/* SPM START/STOP_COUNTING */
	unsigned int ib_xcc;		/* share index the IBs ran on */
	uint64_t last_ib_va;
	uint32_t last_ib_dw;
	unsigned int samples_programmed;	/* from programmed XCCs */
	unsigned int samples_lost;	/* of those, reset before copied */
};

void fake_amdgpu_reset(const struct fake_amdgpu_config *cfg);
/* "version=1.1,xcc=2,first_xcc=0,bytes=4096,fill_ms=5,loss_seq=3,gap_seq=5,
 *  eintr_call=2,stop_call=10,fixed=1,sig_call=8,acquire_err=EPERM,tamper_call=4,memlock=8M,
 *  nospm=1,nogem=1,counter_khz=25000,
 *  samples=9.4.3:4096:CPC_ALWAYS_COUNT:16+SQ_WAVES:32,
 *  gc=9.4.2,ipdisc=0,dev_num_se=8,rlc=1,cs_xcc=1,cs_hang=1,cs_delay_ms=5,
 *  fail=cs:ENOMEM:2";
 *  returns 0 or -EINVAL. */
int fake_amdgpu_parse(const char *s, struct fake_amdgpu_config *cfg);
/* Returns 0 or -errno, as the kernel would. */
int fake_amdgpu_ioctl(int fd, unsigned long req, void *arg);
/* The file @fd was closed: ends an acquisition it owns. */
void fake_amdgpu_close(int fd);
/*
 * mmap() of the fake node at a GEM_MMAP offset: the BO's pages, which the
 * kernel neither pins nor charges as a destination (VM_PFNMAP). Returns
 * MAP_FAILED with errno set for an offset that is no BO's.
 */
void *fake_amdgpu_mmap(int fd, size_t len, int prot, int flags, long off);
/* munmap() of a range: forget the BO mappings in it. */
void fake_amdgpu_munmap(void *addr, size_t len);
const struct fake_amdgpu_stats *fake_amdgpu_stats(void);
/* The stats as "name value" lines (FAKE_AMDGPU_STATS of the preload). */
void fake_amdgpu_write_stats(FILE *f);
/* From now on each share gets about @bytes per fill_ms (0: counters stopped). */
void fake_amdgpu_set_bytes(uint32_t bytes);

#endif /* FAKE_AMDGPU_H */
