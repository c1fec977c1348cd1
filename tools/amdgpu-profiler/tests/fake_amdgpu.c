// SPDX-License-Identifier: MIT
/*
 * Copyright 2026 The amdgpu profiler series authors
 *
 * Tests only: the fake profiler kernel (see fake_amdgpu.h). It follows the
 * kernel-doc of struct drm_amdgpu_spm_args and amdgpu_spm.c: every check
 * that the kernel makes before touching state, -EBUSY for a file that does
 * not own the SPM, the wait before any state changes, the time left written
 * back on success and on -EINTR, and the outputs left alone on error.
 * It also serves the other ioctls the tools make, and those libdrm_amdgpu
 * issues for them: GTT BOs to use as destination buffers (GEM_CREATE,
 * GEM_MMAP, mmap, GEM_CLOSE; not pinned and not charged, as
 * amdgpu_spm_buf.c treats a VM_PFNMAP mapping), each backed by a memfd of
 * its own that mappings share, as a BO's pages are; AMDGPU_INFO's
 * ACCEL_WORKING, DEV_INFO, HW_IP_INFO, HW_IP_COUNT, READ_MMR_REG (the register
 * amdgpu_device_initialize() reads) and TIMESTAMP; and the submission of
 * the SPM streams: GEM_VA (MAP, UNMAP), CTX (ALLOC, FREE), CS with the
 * BO_HANDLES and IB chunks, WAIT_CS. A CS reads its IB from the BO the
 * IB's GPU address is mapped to and runs it through the test-only PM4
 * decoder and RLC model (spm_model.c, which shares no code with
 * spm_program.c) of one XCC; that XCC then streams the samples the
 * decoded registers describe, from its START_COUNTING to its
 * STOP_COUNTING (see samples_rlc()). Each ioctl follows the 6.12 code
 * named at it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <drm/drm.h>

#include "amdgpu_spm_uapi.h"
#include "fake_amdgpu.h"
#include "spm_model.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct fake_amdgpu_config cfg;
static struct fake_amdgpu_stats st = { .owner = -1 };

/* The buffer the kernel is filling. */
static uint64_t cur_addr;
static uint32_t cur_size;
static uint32_t cur_seq;
static uint64_t cur_start_ns;
static unsigned int waiting_calls;
static unsigned int acq_calls;	/* SET_DEST_BUF calls of this acquisition */
/* samples=: the GPU counter at ACQUIRE, the next sample of each share */
static uint64_t samples_t0;
static uint64_t next_sample[16];
static bool tampered;

/*
 * The kernel's pin cache (amdgpu_spm_buf.c): the last three buffers stay
 * pinned and charged, per page, to the memlock limit; a new buffer is
 * charged before the least recently used one that is not being filled is
 * dropped.
 */
#define PIN_CACHE	3
#define PAGE		4096u
static struct pin {
	uint64_t addr;
	uint32_t size;
	uint64_t lru;
} pins[PIN_CACHE];
static uint64_t pin_lru;

/* GTT BOs: GEM handles, their pages (a memfd), and where they are mapped. */
#define MAX_BOS		16
static struct bo {
	uint32_t handle;	/* 0: free slot */
	uint64_t size;
	int mfd;		/* the BO's pages; -1 none */
	uint64_t map_addr;	/* 0: not mapped */
	uint64_t map_len;
} bos[MAX_BOS];
static uint32_t next_handle;

/* GPU VA mappings of BOs (GEM_VA), in the one VM of the fake. */
#define MAX_VAS		16
static struct va {
	uint32_t handle;	/* 0: free slot */
	uint64_t addr, size, offset;
} vas[MAX_VAS];

/* Contexts (CTX) and their compute rings' fences. */
#define MAX_CTXS	8
#define COMPUTE_RINGS	4	/* amdgpu_ctx_num_entities[COMPUTE] */
static struct ctx {
	uint32_t id;		/* 0: free slot */
	int file;
	uint64_t seq[COMPUTE_RINGS];	/* last submitted */
	uint64_t hung[COMPUTE_RINGS];	/* first job that never ends, 0 */
} ctxs[MAX_CTXS];
static uint32_t next_ctx;

/*
 * Per XCC of the partition (share index): its perfmon registers as the
 * IBs left them, and the SPM state CP_PERFMON_CNTL put it in.
 */
static struct xcc_rlc {
	struct spm_model_rlc m;
	bool touched;		/* an IB wrote its perfmon registers */
	bool running;		/* SPM_PERFMON_STATE is START_COUNTING */
	uint64_t start_tick;	/* GPU counter at START_COUNTING; 0: none */
	uint64_t stop_tick;	/* at STOP_COUNTING */
	uint64_t emitted;	/* samples since start_tick copied out */
} rlc[16];

static unsigned int device_num_se(void);
static void spm_reset_all(void);

static struct bo *bo_by_handle(uint32_t handle)
{
	unsigned int i;

	for (i = 0; handle && i < MAX_BOS; i++)
		if (bos[i].handle == handle)
			return &bos[i];
	return NULL;
}

static bool bo_in_use(const struct bo *bo)
{
	return bo->handle || bo->map_addr;
}

/* The BO's last reference went: its pages too. */
static void bo_release(struct bo *bo)
{
	if (bo->mfd >= 0)
		close(bo->mfd);
	memset(bo, 0, sizeof(*bo));
	bo->mfd = -1;
}

/* Whether [@addr, @addr + @size) lies in one BO mapping. */
static bool bo_mapped(uint64_t addr, uint64_t size)
{
	unsigned int i;

	for (i = 0; i < MAX_BOS; i++)
		if (bos[i].map_addr && addr >= bos[i].map_addr &&
		    addr + size <= bos[i].map_addr + bos[i].map_len)
			return true;
	return false;
}

static uint64_t pin_bytes(uint64_t addr, uint32_t size)
{
	uint64_t first = addr / PAGE, last = (addr + size - 1) / PAGE;

	return (last - first + 1) * PAGE;
}

static void pins_drop(void)
{
	memset(pins, 0, sizeof(pins));
	st.pinned = 0;
}

static int pin_get(uint64_t addr, uint32_t size)
{
	struct pin *victim = NULL;
	uint64_t need = pin_bytes(addr, size);
	unsigned int i;

	/* A BO mapped through the node is written, not pinned or charged */
	if (bo_mapped(addr, size))
		return 0;
	for (i = 0; i < PIN_CACHE; i++) {
		if (pins[i].size && pins[i].addr == addr && pins[i].size == size) {
			pins[i].lru = ++pin_lru;
			return 0;
		}
	}
	if (cfg.memlock && st.pinned + need > cfg.memlock)
		return -ENOMEM;
	for (i = 0; i < PIN_CACHE; i++) {
		struct pin *p = &pins[i];

		if (p->size && p->addr == cur_addr)
			continue;	/* being filled */
		if (!victim || !p->size || (victim->size && p->lru < victim->lru))
			victim = p;
	}
	if (victim->size)
		st.pinned -= pin_bytes(victim->addr, victim->size);
	victim->addr = addr;
	victim->size = size;
	victim->lru = ++pin_lru;
	st.pinned += need;
	return 0;
}

/* The clock of the share headers (uAPI 1.1) and of the GPU counter here */
static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_BOOTTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The GPU counter (AMDGPU_INFO_TIMESTAMP): counter_khz on CLOCK_BOOTTIME */
static uint64_t ticks_at(uint64_t ns)
{
	return ns / 1000000u * cfg.counter_khz +
	       ns % 1000000u * cfg.counter_khz / 1000000u;
}

/*
 * samples=: the layout, worked out here from the description of the
 * sample in spm_program.h's header comment and the spec's section 3
 * (/tmp/spm-programming-spec.md: aqlprofile's Begin and PAL's
 * CalculateMuxRam / CalculateSegmentSize), not from spm_program.c.
 * A segment has two lists of 16-bit entries, even lines and odd lines;
 * entry p of a list is slot 32 * (p / 16) + p % 16 of the segment, + 16
 * for the odd list. The global segment's even list starts with the 4
 * timestamp slots. CPC counters take sub-counters in order (16-bit: 0, 1,
 * 2, 3; the even ones in the even list, the odd ones in the odd list;
 * 32-bit: 0, 2, the low half in the even list and the high half at the
 * same position of the odd list, the shorter list padded first). SQ (one
 * 32-bit counter) the same in the SE segment. Lines per segment:
 * 2 * max(ceil(even / 16), ceil(odd / 16)). SEs: 8 on 9.4.1/9.4.2, 4 on
 * 9.4.3 (spec section 3, Q8).
 */
static int samples_layout(struct fake_amdgpu_samples *s)
{
	unsigned int ge = 4, go = 0, se_e = 0, se_o = 0, cpc = 0, i;
	unsigned int *e, *o;

	if (s->gc == 0x090403)
		s->num_se = 4;
	else if (s->gc == 0x090401 || s->gc == 0x090402)
		s->num_se = 8;
	else
		return -EINVAL;
	for (i = 0; i < s->n; i++) {
		e = s->se[i] ? &se_e : &ge;
		o = s->se[i] ? &se_o : &go;
		if (s->bits[i] == 32) {
			if (*o < *e)
				*o = *e;
			else
				*e = *o;
			s->slot[i] = 32 * (*e / 16) + *e % 16;
			(*e)++;
			(*o)++;
		} else if (!s->se[i] && cpc % 2 == 0) {
			s->slot[i] = 32 * (ge / 16) + ge % 16;
			ge++;
		} else if (!s->se[i]) {
			s->slot[i] = 32 * (go / 16) + go % 16 + 16;
			go++;
		} else {
			return -EINVAL;	/* SQ is 32-bit only */
		}
		if (!s->se[i])
			cpc++;
	}
#define LINES(a, b) (2 * (((a) + 15) / 16 > ((b) + 15) / 16 ? \
			  ((a) + 15) / 16 : ((b) + 15) / 16))
	s->global_lines = LINES(ge, go);
	s->se_lines = LINES(se_e, se_o);
#undef LINES
	s->sample_bytes = 32 * (s->global_lines + s->num_se * s->se_lines);
	return 0;
}

/* "9.4.3:4096:CPC_ALWAYS_COUNT:16+SQ_WAVES:32" */
static int parse_samples(const char *v, struct fake_amdgpu_samples *s)
{
	char buf[512], *p, *tok, *save = NULL;
	unsigned int a, b, c;

	memset(s, 0, sizeof(*s));
	if (strlen(v) >= sizeof(buf))
		return -EINVAL;
	strcpy(buf, v);
	p = strchr(buf, ':');
	if (!p || sscanf(buf, "%u.%u.%u", &a, &b, &c) != 3)
		return -EINVAL;
	s->gc = (a << 16) | (b << 8) | c;
	s->interval = (uint32_t)strtoul(p + 1, &p, 10);
	if (*p != ':' || s->interval < 32 || s->interval > 65504 ||
	    s->interval % 32)
		return -EINVAL;
	for (tok = strtok_r(p + 1, "+", &save); tok;
	     tok = strtok_r(NULL, "+", &save)) {
		char *colon = strrchr(tok, ':');

		if (!colon || s->n == FAKE_SAMPLES_MAX ||
		    (size_t)(colon - tok) >= sizeof(s->name[0]))
			return -EINVAL;
		*colon = '\0';
		strcpy(s->name[s->n], tok);
		s->bits[s->n] = (unsigned int)atoi(colon + 1);
		if (s->bits[s->n] != 16 && s->bits[s->n] != 32)
			return -EINVAL;
		s->se[s->n] = !strncasecmp(tok, "SQ_", 3);
		s->cycles[s->n] = !strcasecmp(tok, "CPC_ALWAYS_COUNT");
		s->n++;
	}
	if (!s->n)
		return -EINVAL;
	return samples_layout(s);
}

static void put16(unsigned char *p, unsigned int slot, uint32_t v)
{
	p[2 * slot] = (unsigned char)v;
	p[2 * slot + 1] = (unsigned char)(v >> 8);
}

/* Sample @k of the share of logical XCC @xcc into @p (sample_bytes). */
static void write_sample(unsigned char *p, uint64_t k, unsigned int xcc)
{
	const struct fake_amdgpu_samples *s = &cfg.samples;
	uint64_t ts = samples_t0 + k * s->interval;
	unsigned int i, se, base;

	memset(p, 0, s->sample_bytes);
	/* Global slots 0..3: the 64-bit timestamp, little endian */
	for (i = 0; i < 4; i++)
		put16(p, i, (uint32_t)(ts >> (16 * i)) & 0xffffu);
	for (i = 0; i < s->n; i++) {
		for (se = 0; se < (s->se[i] ? s->num_se : 1); se++) {
			uint64_t v = fake_amdgpu_sample_value(s, i, k, se, xcc);

			/* SE j's segment follows global and SE0..j-1 */
			base = s->se[i] ? 16 * (s->global_lines +
						se * s->se_lines) : 0;
			put16(p, base + s->slot[i], (uint32_t)v & 0xffffu);
			if (s->bits[i] == 32)
				put16(p, base + s->slot[i] + 16,
				      (uint32_t)(v >> 16) & 0xffffu);
		}
	}
}

void fake_amdgpu_reset(const struct fake_amdgpu_config *c)
{
	unsigned int i;

	pthread_mutex_lock(&lock);
	cfg = *c;
	if (!cfg.num_xcc)
		cfg.num_xcc = 1;
	memset(&st, 0, sizeof(st));
	st.owner = -1;
	cur_addr = 0;
	cur_size = 0;
	cur_seq = 0;
	waiting_calls = 0;
	acq_calls = 0;
	tampered = false;
	pins_drop();
	for (i = 0; i < MAX_BOS; i++)
		if (bo_in_use(&bos[i]))
			bo_release(&bos[i]);
	memset(vas, 0, sizeof(vas));
	memset(ctxs, 0, sizeof(ctxs));
	memset(rlc, 0, sizeof(rlc));
	pthread_mutex_unlock(&lock);
}

const struct fake_amdgpu_stats *fake_amdgpu_stats(void)
{
	unsigned int i;

	pthread_mutex_lock(&lock);
	st.bos_live = st.va_live = st.ctx_live = st.ib_violations = 0;
	for (i = 0; i < MAX_BOS; i++)
		st.bos_live += bo_in_use(&bos[i]);
	for (i = 0; i < MAX_VAS; i++)
		st.va_live += vas[i].handle != 0;
	for (i = 0; i < MAX_CTXS; i++)
		st.ctx_live += ctxs[i].id != 0;
	for (i = 0; i < 16; i++)
		st.ib_violations += rlc[i].m.violations;
	pthread_mutex_unlock(&lock);
	return &st;
}

void fake_amdgpu_write_stats(FILE *f)
{
	const struct fake_amdgpu_stats *s = fake_amdgpu_stats();
	static const char *const ops[FAKE_OP_NUM] = {
		"none", "gem_create", "gem_mmap", "gem_va", "ctx", "cs",
		"wait_cs" };
	unsigned int i;

#define STAT(name) fprintf(f, #name " %llu\n", (unsigned long long)s->name)
	STAT(get_ver); STAT(acquire); STAT(release); STAT(set_dest_buf);
	STAT(gem_create); STAT(gem_close); STAT(bos_live);
	STAT(va_map); STAT(va_unmap); STAT(va_dropped); STAT(va_live);
	STAT(ctx_alloc); STAT(ctx_free); STAT(ctx_live);
	STAT(cs); STAT(cs_ok); STAT(wait_cs); STAT(wait_busy);
	STAT(ib_run); STAT(ib_bad); STAT(ib_not_in_list); STAT(vm_faults);
	STAT(ib_violations); STAT(ring_writes); STAT(spm_start);
	STAT(spm_stop); STAT(ib_xcc); STAT(last_ib_va); STAT(last_ib_dw);
	STAT(samples_programmed); STAT(samples_lost);
#undef STAT
	fprintf(f, "owner %d\n", s->owner);
	for (i = 1; i < FAKE_OP_NUM; i++)
		fprintf(f, "calls_%s %u\n", ops[i], s->op_calls[i]);
}

void fake_amdgpu_set_bytes(uint32_t bytes)
{
	pthread_mutex_lock(&lock);
	cfg.bytes = bytes;
	pthread_mutex_unlock(&lock);
}

int fake_amdgpu_parse(const char *s, struct fake_amdgpu_config *c)
{
	char *copy = strdup(s ? s : ""), *tok, *save = NULL;
	int ret = 0;

	memset(c, 0, sizeof(*c));
	c->version = AMDGPU_PROFILER_VERSION(1, 1);
	c->num_xcc = 1;
	c->bytes = 4096;
	c->fill_ms = 2;
	c->counter_khz = 100000;
	if (!copy)
		return -ENOMEM;
	/* fail=OP:ERRNO[:CALL] */
	static const struct {
		const char *name;
		enum fake_amdgpu_op op;
	} fail_ops[] = {
		{ "gem_create", FAKE_OP_GEM_CREATE }, { "gem_mmap", FAKE_OP_GEM_MMAP },
		{ "gem_va", FAKE_OP_GEM_VA }, { "ctx", FAKE_OP_CTX },
		{ "cs", FAKE_OP_CS }, { "wait_cs", FAKE_OP_WAIT_CS },
	};
	for (tok = strtok_r(copy, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(tok, '=');
		unsigned long v;

		if (!eq) {
			ret = -EINVAL;
			break;
		}
		*eq++ = '\0';
		if (!strcmp(tok, "version")) {
			unsigned int maj = 0, min = 0;

			if (!strcmp(eq, "none"))
				c->version = 0;
			else if (sscanf(eq, "%u.%u", &maj, &min) == 2)
				c->version = AMDGPU_PROFILER_VERSION(maj, min);
			else
				ret = -EINVAL;
			continue;
		}
		if (!strcmp(tok, "acquire_err")) {
			c->acquire_err = !strcmp(eq, "EPERM") ? EPERM :
					 !strcmp(eq, "EBUSY") ? EBUSY :
					 !strcmp(eq, "EOPNOTSUPP") ? EOPNOTSUPP :
					 !strcmp(eq, "ENODEV") ? ENODEV :
					 atoi(eq);
			continue;
		}
		if (!strcmp(tok, "memlock")) {
			char *end;
			unsigned long long m = strtoull(eq, &end, 0);

			if (*end == 'K' || *end == 'k') {
				m <<= 10;
				end++;
			} else if (*end == 'M' || *end == 'm') {
				m <<= 20;
				end++;
			}
			if (*end)
				ret = -EINVAL;
			c->memlock = m;
			continue;
		}
		if (!strcmp(tok, "samples")) {
			if (parse_samples(eq, &c->samples))
				ret = -EINVAL;
			continue;
		}
		if (!strcmp(tok, "gc")) {
			unsigned int a, b, d;

			if (sscanf(eq, "%u.%u.%u", &a, &b, &d) != 3 || a != 9 ||
			    b != 4 || d < 1 || d > 4)
				ret = -EINVAL;
			else
				c->gc = (a << 16) | (b << 8) | d;
			continue;
		}
		if (!strcmp(tok, "fail")) {
			char *op = eq, *err = strchr(eq, ':'), *call;
			unsigned int k;

			if (!err) {
				ret = -EINVAL;
				continue;
			}
			*err++ = '\0';
			call = strchr(err, ':');
			if (call)
				*call++ = '\0';
			for (k = 0; k < sizeof(fail_ops) / sizeof(fail_ops[0]); k++)
				if (!strcmp(op, fail_ops[k].name))
					c->fail_op = fail_ops[k].op;
			c->fail_err = !strcmp(err, "ENOMEM") ? ENOMEM :
				      !strcmp(err, "EINVAL") ? EINVAL :
				      !strcmp(err, "ENODEV") ? ENODEV :
				      !strcmp(err, "ECANCELED") ? ECANCELED :
				      atoi(err);
			c->fail_call = call ? (unsigned int)atoi(call) : 0;
			if (!c->fail_op || c->fail_err <= 0)
				ret = -EINVAL;
			continue;
		}
		v = strtoul(eq, NULL, 0);
		if (!strcmp(tok, "xcc"))
			c->num_xcc = (unsigned int)v;
		else if (!strcmp(tok, "first_xcc"))
			c->first_xcc = (unsigned int)v;
		else if (!strcmp(tok, "bytes"))
			c->bytes = (uint32_t)v;
		else if (!strcmp(tok, "fill_ms"))
			c->fill_ms = (unsigned int)v;
		else if (!strcmp(tok, "loss_seq"))
			c->loss_seq = (uint32_t)v;
		else if (!strcmp(tok, "gap_seq"))
			c->gap_seq = (uint32_t)v;
		else if (!strcmp(tok, "eintr_call"))
			c->eintr_call = (unsigned int)v;
		else if (!strcmp(tok, "fixed"))
			c->fixed = v != 0;
		else if (!strcmp(tok, "sig_call"))
			c->sig_call = (unsigned int)v;
		else if (!strcmp(tok, "stop_call"))
			c->stop_call = (unsigned int)v;
		else if (!strcmp(tok, "tamper_call"))
			c->tamper_call = (unsigned int)v;
		else if (!strcmp(tok, "nospm"))
			c->nospm = v != 0;
		else if (!strcmp(tok, "nogem"))
			c->nogem = v != 0;
		else if (!strcmp(tok, "counter_khz") && v && v <= 10000000)
			c->counter_khz = (uint32_t)v;
		else if (!strcmp(tok, "ipdisc"))
			c->no_ipdisc = !v;
		else if (!strcmp(tok, "dev_num_se") && v <= 64)
			c->dev_num_se = (unsigned int)v;
		else if (!strcmp(tok, "rlc"))
			c->rlc = v != 0;
		else if (!strcmp(tok, "cs_xcc"))
			c->cs_xcc = (unsigned int)v;
		else if (!strcmp(tok, "cs_hang"))
			c->cs_hang = v != 0;
		else if (!strcmp(tok, "cs_delay_ms"))
			c->cs_delay_ms = (unsigned int)v;
		else
			ret = -EINVAL;
	}
	free(copy);
	if (!c->num_xcc || c->num_xcc > 16 || c->cs_xcc >= c->num_xcc)
		ret = -EINVAL;
	/* The device is what samples= describes, unless gc= says */
	if (!c->gc)
		c->gc = c->samples.n ? c->samples.gc : 0x090403;
	return ret;
}

static void sleep_ms(unsigned int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* Samples XCC @i's RLC wrote by now that were not copied out yet. */
static uint64_t samples_pending(unsigned int i)
{
	const struct xcc_rlc *x = &rlc[i];
	unsigned int interval = spm_model_interval(&x->m);
	uint64_t end, due;

	if (!x->start_tick || !interval ||
	    !spm_model_sample_size(&x->m, device_num_se()))
		return 0;
	end = x->running ? ticks_at(now_ns()) : x->stop_tick;
	due = end > x->start_tick ? (end - x->start_tick) / interval : 0;
	return due > x->emitted ? due - x->emitted : 0;
}

/*
 * The samples XCC @i's RLC wrote since START_COUNTING and not yet copied
 * out, into @p (@room bytes); returns their bytes and sets *full if some
 * did not fit (they wait in the ring). Sample j's timestamp is
 * start + (j + 1) * interval on the GPU counter: the fake counts the
 * interval's SCLK cycles on that clock (the spec leaves the timestamp's
 * clock open). Samples due before a STOP_COUNTING still come out.
 */
static uint32_t samples_rlc(unsigned int i, unsigned char *p, uint32_t room,
			    uint64_t now, bool *full)
{
	struct xcc_rlc *x = &rlc[i];
	unsigned int num_se = device_num_se();
	unsigned int interval = spm_model_interval(&x->m);
	size_t size = spm_model_sample_size(&x->m, num_se);
	uint64_t end, due, n, k;

	if (!x->start_tick || !interval || !size)
		return 0;
	end = x->running ? ticks_at(now) : x->stop_tick;
	due = end > x->start_tick ? (end - x->start_tick) / interval : 0;
	n = due > x->emitted ? due - x->emitted : 0;
	if (!size || n > room / size) {
		n = room / size;
		*full = true;
	}
	for (k = 0; k < n; k++) {
		uint64_t j = x->emitted + k;

		spm_model_sample(&x->m, num_se, x->start_tick + (j + 1) * interval,
				 j, cfg.first_xcc + i, p + k * size, size);
	}
	x->emitted += n;
	st.samples_programmed += (unsigned int)n;
	return (uint32_t)(n * size);
}

/* Write the shares of the retired buffer; returns the summed bytes. */
static uint32_t retire(uint32_t *loss_out)
{
	uint32_t share = (cur_size / cfg.num_xcc) & ~31u;
	uint64_t now = now_ns();
	uint32_t total = 0, loss = 0, i;

	for (i = 0; i < cfg.num_xcc; i++) {
		unsigned char *p = (unsigned char *)(uintptr_t)cur_addr +
				   (size_t)i * share;
		struct amdgpu_spm_hdr h;
		/*
		 * @cfg.bytes per @cfg.fill_ms, in proportion to the time the
		 * buffer was current (fixed=1, fill_ms=0: one fill_ms's worth
		 * whatever the time), with some variation over time and XCCs;
		 * whole 32-byte lines.
		 */
		uint64_t elapsed_us = (now - cur_start_ns) / 1000;
		uint64_t rate = (uint64_t)cfg.bytes / 4 * (2 + (cur_seq + i) % 4);
		uint32_t bytes = cfg.fill_ms && !cfg.fixed ?
			(uint32_t)(rate * elapsed_us / (cfg.fill_ms * 1000ull)) :
			(uint32_t)rate;
		uint32_t b;
		bool full = false;

		if (bytes > (1u << 28))
			bytes = 1u << 28;
		/* The counters were stopped (the SPM End() packet ran). */
		if (cfg.stop_call && st.set_dest_buf >= cfg.stop_call)
			bytes = 0;

		bytes &= ~31u;
		if (cfg.rlc || rlc[i].touched) {
			/* What the IBs programmed on this XCC, nothing else */
			bytes = samples_rlc(i, p + 32, share - 32, now, &full);
		} else if (cfg.samples.n) {
			/* The samples due by now (timestamp <= the counter) */
			const struct fake_amdgpu_samples *sm = &cfg.samples;
			uint64_t due = (ticks_at(now) - samples_t0) /
				       sm->interval + 1, n, room, k;

			n = due > next_sample[i] ? due - next_sample[i] : 0;
			if (cfg.stop_call && st.set_dest_buf >= cfg.stop_call)
				n = 0;
			room = (share - 32) / sm->sample_bytes;
			if (n > room) {
				n = room;
				full = true;
			}
			for (k = 0; k < n; k++)
				write_sample(p + 32 + k * sm->sample_bytes,
					     next_sample[i] + k,
					     cfg.first_xcc + i);
			next_sample[i] += n;
			bytes = (uint32_t)(n * sm->sample_bytes);
		} else {
			/* No room for all: the rest stays in the ring (1.1: FULL) */
			if (bytes > share - 32) {
				bytes = share - 32;
				full = true;
			}
			for (b = 0; b < bytes; b++)
				p[32 + b] = (unsigned char)(cfg.first_xcc + i + b);
		}
		memset(&h, 0, sizeof(h));
		h.version = cfg.version;
		h.bytes_copied = bytes;
		h.has_data_loss = cfg.loss_seq && cur_seq == cfg.loss_seq &&
				  i == 0;
		if (cfg.version >= AMDGPU_PROFILER_VERSION(1, 1)) {
			if (full) {
				h.has_data_loss |= AMDGPU_SPM_LOSS_FULL;
				st.full_shares++;
			}
			uint64_t us = (now - cur_start_ns) / 1000;

			h.xcc_info = AMDGPU_SPM_HDR_XCC_INFO(cfg.first_xcc + i,
							     cfg.num_xcc, i);
			h.seq = cur_seq;
			h.start_ns_lo = (uint32_t)cur_start_ns;
			h.start_ns_hi = (uint32_t)(cur_start_ns >> 32);
			h.last_us = bytes ? (us > 0xffffffffu ? 0xffffffffu :
					     (uint32_t)us) : 0;
		}
		memcpy(p, &h, sizeof(h));
		total += bytes;
		loss |= h.has_data_loss;
	}
	*loss_out = loss;
	return total;
}

static int set_dest_buf(int fd, struct drm_amdgpu_spm_args *a)
{
	struct fake_amdgpu_call *c = NULL;
	uint32_t timeout = a->timeout, bytes = 0, loss = 0;
	int ret = 0;

	if (st.ncalls < FAKE_AMDGPU_MAX_CALLS) {
		c = &st.calls[st.ncalls++];
		c->dest_buf = a->dest_buf;
		c->buf_size = a->buf_size;
		c->timeout_in = a->timeout;
	}
	st.set_dest_buf++;
	if (st.owner < 0) {
		ret = -EINVAL;
		goto out;
	}
	if (st.owner != fd) {
		ret = -EBUSY;
		goto out;
	}
	/* The worker found the ring registers changed: only RELEASE is left. */
	if (cfg.tamper_call && ++acq_calls >= cfg.tamper_call)
		tampered = true;
	if (tampered) {
		ret = -EIO;
		goto out;
	}
	if (a->dest_buf &&
	    ((a->buf_size / cfg.num_xcc) & ~31u) < 64) {
		ret = -EINVAL;
		goto out;
	}
	/* Pinned (and charged) before any wait. */
	if (a->dest_buf && bo_mapped(a->dest_buf, a->buf_size))
		st.bo_dest++;
	if (a->dest_buf) {
		ret = pin_get(a->dest_buf, a->buf_size);
		if (ret)
			goto out;
	}
	/* Wait before changing anything, so a restart is idempotent. */
	if (timeout && cur_addr) {
		unsigned int ms = cfg.fill_ms < timeout ? cfg.fill_ms : timeout;

		waiting_calls++;
		if (cfg.eintr_call && waiting_calls == cfg.eintr_call) {
			unsigned int half = ms / 2;

			pthread_mutex_unlock(&lock);
			sleep_ms(half);
			pthread_mutex_lock(&lock);
			a->timeout = timeout - half;
			ret = -EINTR;
			goto out;
		}
		pthread_mutex_unlock(&lock);
		sleep_ms(ms);
		pthread_mutex_lock(&lock);
		timeout -= ms;
	}
	if (cur_addr)
		bytes = retire(&loss);
	/*
	 * The first buffer of a run: the kernel starts SPM from reset, and
	 * the ring: samples= samples count from now, never before a caller
	 * asked for them (however long it took from ACQUIRE to here).
	 */
	if (!cur_addr && a->dest_buf) {
		spm_reset_all();
		samples_t0 = ticks_at(now_ns());
		memset(next_sample, 0, sizeof(next_sample));
	}
	cur_addr = a->dest_buf;
	cur_size = a->buf_size;
	if (cur_addr) {
		cur_seq++;
		if (cfg.gap_seq && cur_seq == cfg.gap_seq)
			cur_seq++;
		st.seq = cur_seq;
		cur_start_ns = now_ns();
	}
	a->bytes_copied = bytes;
	a->has_data_loss = loss;
	a->timeout = timeout;
out:
	if (c) {
		c->timeout_out = a->timeout;
		c->ret = ret;
	}
	/* Delivered to a thread that does not block it (the recorder's main) */
	if (cfg.sig_call && st.set_dest_buf == cfg.sig_call)
		kill(getpid(), SIGINT);
	return ret;
}

static int spm(int fd, struct drm_amdgpu_spm_args *a)
{
	unsigned int i;

	for (i = 0; i < sizeof(a->reserved) / sizeof(a->reserved[0]); i++)
		if (a->reserved[i])
			return -EINVAL;
	/* The kernel series as it stands refuses non-zero outputs. */
	if (a->bytes_copied || a->has_data_loss)
		return -EINVAL;
	switch (a->op) {
	case AMDGPU_SPM_OP_ACQUIRE:
	case AMDGPU_SPM_OP_RELEASE:
		if (a->dest_buf || a->buf_size || a->timeout)
			return -EINVAL;
		break;
	case AMDGPU_SPM_OP_SET_DEST_BUF:
		if (!a->dest_buf != !a->buf_size || a->dest_buf % 32 ||
		    a->buf_size > (256u << 20))
			return -EINVAL;
		break;
	default:
		return -EINVAL;
	}
	/* amdgpu_spm_ioctl(): no SPM backend, or an SR-IOV VF. */
	if (cfg.nospm) {
		if (a->op == AMDGPU_SPM_OP_ACQUIRE)
			st.acquire++;
		return -EOPNOTSUPP;
	}

	switch (a->op) {
	case AMDGPU_SPM_OP_ACQUIRE:
		st.acquire++;
		if (cfg.acquire_err)
			return -cfg.acquire_err;
		if (st.owner >= 0)
			return -EBUSY;
		st.owner = fd;
		cur_addr = 0;
		cur_seq = 0;
		samples_t0 = ticks_at(now_ns());
		memset(next_sample, 0, sizeof(next_sample));
		acq_calls = 0;
		tampered = false;
		return 0;
	case AMDGPU_SPM_OP_RELEASE:
		st.release++;
		if (st.owner < 0)
			return -EINVAL;
		if (st.owner != fd)
			return -EBUSY;
		st.owner = -1;
		cur_addr = 0;
		pins_drop();
		spm_reset_all();
		return 0;
	default:
		return set_dest_buf(fd, a);
	}
}

/*
 * drm_ioctl() finds the handler by the number alone and copies
 * min(user, kernel) bytes each way, so libdrm's drmCommandWriteRead() of
 * an ioctl the header declares DRM_IOW (GEM_VA) reaches it all the same.
 * The fake works on the caller's struct: one smaller than the uAPI's is
 * not served.
 */
static bool is_req(unsigned long req, unsigned long want)
{
	return _IOC_TYPE(req) == _IOC_TYPE(want) &&
	       _IOC_NR(req) == _IOC_NR(want) &&
	       _IOC_SIZE(req) >= _IOC_SIZE(want);
}

/* fail=: whether this call of @op fails, and with what */
static int failing(enum fake_amdgpu_op op)
{
	unsigned int n = ++st.op_calls[op];

	if (cfg.fail_op != op || (cfg.fail_call && cfg.fail_call != n))
		return 0;
	return -cfg.fail_err;
}

/* amdgpu_gem_object_close() -> amdgpu_vm_bo_del(): its mappings go */
static void va_drop_bo(uint32_t handle)
{
	unsigned int i;

	for (i = 0; i < MAX_VAS; i++)
		if (vas[i].handle == handle) {
			memset(&vas[i], 0, sizeof(vas[i]));
			st.va_dropped++;
		}
}

/* GEM_CREATE, GEM_MMAP, GEM_CLOSE as amdgpu_gem.c answers them (GTT only) */
static int gem(unsigned long req, void *arg)
{
	unsigned int i;
	struct bo *bo;
	int ret;

	if (is_req(req, DRM_IOCTL_AMDGPU_GEM_CREATE)) {
		union drm_amdgpu_gem_create *c = arg;
		uint64_t size = c->in.bo_size;

		st.gem_create++;
		ret = failing(FAKE_OP_GEM_CREATE);
		if (ret)
			return ret;
		if (!size || c->in.domains != AMDGPU_GEM_DOMAIN_GTT)
			return -EINVAL;
		if (cfg.nogem)
			return -ENOMEM;
		bo = NULL;
		for (i = 0; i < MAX_BOS && !bo; i++)
			if (!bo_in_use(&bos[i]))
				bo = &bos[i];
		if (!bo)
			return -ENOMEM;
		memset(bo, 0, sizeof(*bo));
		/* The pages, shared by every mapping (ttm_tt) */
		bo->mfd = memfd_create("fake_amdgpu_bo", MFD_CLOEXEC);
		if (bo->mfd < 0 || ftruncate(bo->mfd, (off_t)size)) {
			bo_release(bo);
			return -ENOMEM;
		}
		bo->handle = ++next_handle;
		bo->size = size;
		memset(c, 0, sizeof(*c));
		c->out.handle = bo->handle;
		return 0;
	}
	if (is_req(req, DRM_IOCTL_AMDGPU_GEM_MMAP)) {
		union drm_amdgpu_gem_mmap *m = arg;

		ret = failing(FAKE_OP_GEM_MMAP);
		if (ret)
			return ret;
		bo = bo_by_handle(m->in.handle);
		if (!bo)
			return -ENOENT;
		memset(m, 0, sizeof(*m));
		/* A fake offset: the handle in the high half */
		m->out.addr_ptr = (uint64_t)bo->handle << 32;
		return 0;
	}
	/* DRM_IOCTL_GEM_CLOSE */
	bo = bo_by_handle(((struct drm_gem_close *)arg)->handle);
	if (!bo)
		return -EINVAL;
	st.gem_close++;
	va_drop_bo(bo->handle);
	/* The mapping keeps the BO alive, as a real mmap does */
	if (!bo->map_addr)
		bo_release(bo);
	else
		bo->handle = UINT32_MAX - (uint32_t)(bo - bos);
	return 0;
}

/*
 * GEM_VA MAP and UNMAP, with amdgpu_gem_va_ioctl()'s and
 * amdgpu_vm_bo_map()'s checks: page-aligned address, offset and size, the
 * address above AMDGPU_VA_RESERVED_BOTTOM and below the hole, the range
 * inside the BO, no overlap with another mapping (-EINVAL); unknown
 * handle -ENOENT; UNMAP of a range not mapped -ENOENT.
 */
#define VA_BOTTOM	0x10000ull		/* AMDGPU_VA_RESERVED_BOTTOM */
#define VA_MAX		0x800000000000ull	/* AMDGPU_GMC_HOLE_START */

static int gem_va(struct drm_amdgpu_gem_va *a)
{
	struct va *v = NULL;
	struct bo *bo;
	unsigned int i;
	int ret;

	bo = bo_by_handle(a->handle);
	if (a->operation == AMDGPU_VA_OP_UNMAP) {
		if (!bo)
			return -ENOENT;
		for (i = 0; i < MAX_VAS; i++)
			if (vas[i].handle == a->handle &&
			    vas[i].addr == a->va_address)
				v = &vas[i];
		if (!v)
			return -ENOENT;
		memset(v, 0, sizeof(*v));
		st.va_unmap++;
		return 0;
	}
	if (a->operation != AMDGPU_VA_OP_MAP)
		return -EINVAL;	/* CLEAR, REPLACE: not modelled */
	ret = failing(FAKE_OP_GEM_VA);
	if (ret)
		return ret;
	if (!bo)
		return -ENOENT;
	if ((a->va_address | a->offset_in_bo | a->map_size) % PAGE ||
	    !a->map_size || a->va_address < VA_BOTTOM ||
	    a->va_address + a->map_size > VA_MAX ||
	    a->offset_in_bo + a->map_size > bo->size ||
	    !(a->flags & AMDGPU_VM_PAGE_READABLE))
		return -EINVAL;
	for (i = 0; i < MAX_VAS; i++) {
		if (!vas[i].handle) {
			if (!v)
				v = &vas[i];
			continue;
		}
		if (a->va_address < vas[i].addr + vas[i].size &&
		    vas[i].addr < a->va_address + a->map_size)
			return -EINVAL;
	}
	if (!v)
		return -ENOMEM;
	v->handle = a->handle;
	v->addr = a->va_address;
	v->size = a->map_size;
	v->offset = a->offset_in_bo;
	st.va_map++;
	return 0;
}

/* CTX ALLOC_CTX and FREE_CTX (amdgpu_ctx_ioctl()); the rest not modelled */
static int ctx_ioctl(int fd, union drm_amdgpu_ctx *a)
{
	unsigned int i;
	int ret;

	if (a->in.op == AMDGPU_CTX_OP_ALLOC_CTX) {
		ret = failing(FAKE_OP_CTX);
		if (ret)
			return ret;
		for (i = 0; i < MAX_CTXS; i++) {
			if (ctxs[i].id)
				continue;
			memset(&ctxs[i], 0, sizeof(ctxs[i]));
			ctxs[i].id = ++next_ctx;
			ctxs[i].file = fd;
			memset(&a->out, 0, sizeof(a->out));
			a->out.alloc.ctx_id = ctxs[i].id;
			st.ctx_alloc++;
			return 0;
		}
		return -ENOMEM;
	}
	if (a->in.op == AMDGPU_CTX_OP_FREE_CTX) {
		for (i = 0; i < MAX_CTXS; i++)
			if (ctxs[i].id && ctxs[i].id == a->in.ctx_id &&
			    ctxs[i].file == fd) {
				memset(&ctxs[i], 0, sizeof(ctxs[i]));
				st.ctx_free++;
				return 0;
			}
		return -EINVAL;
	}
	return -EINVAL;
}

static struct ctx *ctx_by_id(int fd, uint32_t id)
{
	unsigned int i;

	for (i = 0; id && i < MAX_CTXS; i++)
		if (ctxs[i].id == id && ctxs[i].file == fd)
			return &ctxs[i];
	return NULL;
}

/* SEs per XCC the device's RLC lays samples out for (spec Q8) */
static unsigned int device_num_se(void)
{
	return cfg.gc == 0x090401 || cfg.gc == 0x090402 ? 8 : 4;
}

/*
 * The kernel's DISABLE_AND_RESET of every XCC's SPM (gfx_v9_4_3_spm_start()
 * at the first buffer of a run, _stop() at RELEASE): counting stops and
 * the RLC's write pointer goes back to 0, so what was not copied is gone;
 * ring mode 0. The counter programming (selects, mux RAMs, segment sizes,
 * interval) stays in the registers.
 */
static void spm_reset_all(void)
{
	unsigned int i;

	for (i = 0; i < 16; i++) {
		/* Samples the RLC wrote that no buffer got */
		st.samples_lost += (unsigned int)samples_pending(i);
		rlc[i].running = false;
		rlc[i].start_tick = 0;
		rlc[i].emitted = 0;
		rlc[i].m.cp_perfmon &= ~0xf0u;
		rlc[i].m.spm_cntl &= ~0x3000u;
	}
}

/*
 * Run the IB's writes on XCC @x one at a time, as the CP would, following
 * SPM_PERFMON_STATE through them: START_COUNTING starts sampling now,
 * STOP_COUNTING stops it (what was due stays to be copied out),
 * DISABLE_AND_RESET drops it.
 */
static void ib_execute(struct xcc_rlc *x, const struct spm_model_write *w,
		       int nw)
{
	uint64_t now = ticks_at(now_ns());
	int i;

	for (i = 0; i < nw; i++) {
		spm_model_apply(&x->m, &w[i], 1);
		if (w[i].reg != T_CP_PERFMON_CNTL)
			continue;
		switch (T_SPM_STATE(w[i].val)) {
		case T_SPM_START_COUNTING:
			if (x->running)
				break;
			x->running = true;
			x->start_tick = now ? now : 1;
			x->emitted = 0;
			st.spm_start++;
			break;
		case T_SPM_STOP_COUNTING:
			if (!x->running)
				break;
			x->running = false;
			x->stop_tick = now;
			st.spm_stop++;
			break;
		case T_SPM_DISABLE_AND_RESET:
			x->running = false;
			x->start_tick = 0;
			break;
		default:
			break;
		}
	}
	x->touched = true;
}

/*
 * CS (amdgpu_cs_ioctl()): the chunks the submission uses, BO_HANDLES (the
 * BOs must exist: -ENOENT) and IB (COMPUTE only, instance 0, ring below
 * the four entities of a context; an MI part has no GFX ring), checked
 * before the job is queued; no BO_LIST handles (-ENOENT: there are none)
 * and no other chunks (not modelled: -EINVAL). The job then "runs": its IB
 * is read from the BO its address is mapped to (not mapped: a VM fault,
 * the job never finishes), decoded (a packet the model does not know: the
 * CP hangs), and applied to the XCC of share cfg.cs_xcc.
 */
#define MAX_IB_DW	16384u

static int cs_ioctl(int fd, union drm_amdgpu_cs *a)
{
	const uint64_t *chunks = (const uint64_t *)(uintptr_t)a->in.chunks;
	struct drm_amdgpu_cs_chunk_ib ib = { 0 };
	uint32_t list[16];
	unsigned int nlist = 0, nib = 0, i, j;
	static uint32_t dw[MAX_IB_DW];
	static struct spm_model_write w[MAX_IB_DW];
	const struct va *v = NULL;
	struct ctx *c;
	struct bo *bo = NULL;
	bool listed = false, have_list = false;
	int ret, nw;

	st.cs++;
	ret = failing(FAKE_OP_CS);
	if (ret)
		return ret;
	c = ctx_by_id(fd, a->in.ctx_id);
	if (!c)
		return -EINVAL;
	if (a->in.bo_list_handle)
		return -ENOENT;
	if (!a->in.num_chunks || !chunks)
		return -EINVAL;
	for (i = 0; i < a->in.num_chunks; i++) {
		const struct drm_amdgpu_cs_chunk *ch =
			(const void *)(uintptr_t)chunks[i];

		if (ch->chunk_id == AMDGPU_CHUNK_ID_IB) {
			if (nib++ || ch->length_dw * 4 < sizeof(ib))
				return -EINVAL;	/* one IB here */
			memcpy(&ib, (const void *)(uintptr_t)ch->chunk_data,
			       sizeof(ib));
		} else if (ch->chunk_id == AMDGPU_CHUNK_ID_BO_HANDLES) {
			const struct drm_amdgpu_bo_list_in *in =
				(const void *)(uintptr_t)ch->chunk_data;
			const unsigned char *e =
				(const void *)(uintptr_t)in->bo_info_ptr;

			if (have_list || ch->length_dw * 4 < sizeof(*in) ||
			    in->bo_number > 16 ||
			    in->bo_info_size < sizeof(uint32_t))
				return -EINVAL;
			for (j = 0; j < in->bo_number; j++) {
				struct drm_amdgpu_bo_list_entry ent = { 0 };

				memcpy(&ent, e + (size_t)j * in->bo_info_size,
				       in->bo_info_size < sizeof(ent) ?
				       in->bo_info_size : sizeof(ent));
				if (!bo_by_handle(ent.bo_handle))
					return -ENOENT;
				list[nlist++] = ent.bo_handle;
			}
			have_list = true;
		} else {
			return -EINVAL;
		}
	}
	if (nib != 1 || ib.ip_type != AMDGPU_HW_IP_COMPUTE ||
	    ib.ip_instance || ib.ring >= COMPUTE_RINGS || !ib.ib_bytes ||
	    ib.ib_bytes % 4 || ib.ib_bytes / 4 > MAX_IB_DW)
		return -EINVAL;

	a->out.handle = ++c->seq[ib.ring];
	st.cs_ok++;
	/* The job takes its time on the GPU (cs_delay_ms=), then runs */
	if (cfg.cs_delay_ms) {
		pthread_mutex_unlock(&lock);
		sleep_ms(cfg.cs_delay_ms);
		pthread_mutex_lock(&lock);
	}
	st.ib_xcc = cfg.cs_xcc;
	st.last_ib_va = ib.va_start;
	st.last_ib_dw = ib.ib_bytes / 4;
	/* A ring that hung stays hung: later jobs wait behind it */
	if (c->hung[ib.ring] || cfg.cs_hang) {
		if (!c->hung[ib.ring])
			c->hung[ib.ring] = a->out.handle;
		return 0;
	}
	for (i = 0; i < MAX_VAS && !v; i++)
		if (vas[i].handle && ib.va_start >= vas[i].addr &&
		    ib.va_start + ib.ib_bytes <= vas[i].addr + vas[i].size)
			v = &vas[i];
	if (v)
		bo = bo_by_handle(v->handle);
	if (!v || !bo) {
		st.vm_faults++;
		c->hung[ib.ring] = a->out.handle;
		return 0;
	}
	for (i = 0; i < nlist; i++)
		listed |= list[i] == v->handle;
	/* Resident anyway here; a real kernel need not have validated it */
	if (!listed)
		st.ib_not_in_list++;
	if (pread(bo->mfd, dw, ib.ib_bytes,
		  (off_t)(v->offset + ib.va_start - v->addr)) !=
	    (ssize_t)ib.ib_bytes) {
		st.vm_faults++;
		c->hung[ib.ring] = a->out.handle;
		return 0;
	}
	nw = spm_model_decode(dw, ib.ib_bytes / 4, w, MAX_IB_DW);
	if (nw < 0) {
		st.ib_bad++;
		c->hung[ib.ring] = a->out.handle;
		return 0;
	}
	if (cfg.cs_xcc < cfg.num_xcc) {
		struct xcc_rlc *x = &rlc[cfg.cs_xcc];

		ib_execute(x, w, nw);
		/* The drain worker's next spm_hw_check() (amdgpu_spm.c) */
		if (x->m.ring_written) {
			st.ring_writes++;
			x->m.ring_written = 0;
			if (st.owner >= 0)
				tampered = true;
		}
	}
	st.ib_run++;
	return 0;
}

/*
 * WAIT_CS (amdgpu_cs_wait_ioctl()): status 0 once the job's fence
 * signalled, 1 if it did not within the timeout. A job here is done when
 * its CS returns, unless the ring hung; the fake answers a hung job's
 * wait at once instead of after the (absolute) timeout, which a caller
 * cannot tell apart.
 */
static int wait_cs_ioctl(int fd, union drm_amdgpu_wait_cs *a)
{
	struct ctx *c;
	uint64_t h = a->in.handle;
	int ret;

	st.wait_cs++;
	ret = failing(FAKE_OP_WAIT_CS);
	if (ret)
		return ret;
	c = ctx_by_id(fd, a->in.ctx_id);
	if (!c || a->in.ip_type != AMDGPU_HW_IP_COMPUTE ||
	    a->in.ip_instance || a->in.ring >= COMPUTE_RINGS)
		return -EINVAL;
	if (h == ~0ull)
		h = c->seq[a->in.ring];
	/* amdgpu_ctx_get_fence(): a sequence number not yet submitted */
	if (h > c->seq[a->in.ring])
		return -EINVAL;
	memset(&a->out, 0, sizeof(a->out));
	if (h && c->hung[a->in.ring] && h >= c->hung[a->in.ring]) {
		a->out.status = 1;
		st.wait_busy++;
	}
	return 0;
}

/*
 * What the device is, per GC version (cfg.gc): PCI device id (MI100
 * 0x738C, MI250X 0x740C, MI300X 0x74A1), and the offset soc15.c adds to
 * the chip revision for the external one.
 */
static void device_ids(uint32_t *device, uint32_t *ext_offset)
{
	switch (cfg.gc) {
	case 0x090401:
		*device = 0x738c;
		*ext_offset = 0x32;
		break;
	case 0x090402:
		*device = 0x740c;
		*ext_offset = 0x3c;
		break;
	default:	/* 9.4.3, 9.4.4 */
		*device = 0x74a1;
		*ext_offset = 0x46;
		break;
	}
}

static int copy_out(void *out, uint32_t size, const void *v, size_t len)
{
	memcpy(out, v, size < len ? size : len);
	return 0;
}

/*
 * AMDGPU_INFO (amdgpu_info_ioctl()): ACCEL_WORKING; DEV_INFO with the
 * device's ids, family and the VA ranges of a 48-bit VM (amdgpu_kms.c);
 * HW_IP_INFO (amdgpu_hw_ip_info(): COMPUTE and GFX answer for the GFX IP
 * block, 9.0 on gfx_v9_0.c's parts and 9.4 on gfx_v9_4_3.c's,
 * ip_discovery_version the GC version, four compute rings and no GFX
 * ring on an MI part); HW_IP_COUNT (GFX: the partition's XCCs on 9.4.3);
 * READ_MMR_REG of GB_ADDR_CONFIG (0x263e), which
 * amdgpu_device_initialize() reads; TIMESTAMP.
 */
static int info(struct drm_amdgpu_info *q)
{
	void *out = (void *)(uintptr_t)q->return_pointer;

	if (!out || !q->return_size)
		return -EINVAL;
	if (q->query == AMDGPU_INFO_ACCEL_WORKING) {
		uint32_t one = 1;

		return copy_out(out, q->return_size, &one, sizeof(one));
	}
	if (q->query == AMDGPU_INFO_DEV_INFO) {
		struct drm_amdgpu_info_device dev;
		uint32_t device, ext;

		device_ids(&device, &ext);
		memset(&dev, 0, sizeof(dev));
		dev.device_id = device;
		dev.chip_rev = 1;
		dev.external_rev = 1 + ext;
		dev.pci_rev = 1;
		dev.family = AMDGPU_FAMILY_AI;
		/* What 6.12 reports: max_shader_engines, per XCC on 9.4.3
		 * (dev_num_se= says otherwise) */
		dev.num_shader_engines = cfg.dev_num_se ? cfg.dev_num_se :
					 device_num_se();
		dev.num_shader_arrays_per_engine = 1;
		dev.gpu_counter_freq = cfg.counter_khz;
		dev.virtual_address_offset = VA_BOTTOM;
		dev.virtual_address_max = VA_MAX;
		dev.virtual_address_alignment = PAGE;
		dev.high_va_offset = 0xffff800000000000ull;
		dev.high_va_max = 0xffff800000000000ull | VA_MAX;
		dev.gart_page_size = PAGE;
		return copy_out(out, q->return_size, &dev, sizeof(dev));
	}
	if (q->query == AMDGPU_INFO_HW_IP_INFO) {
		struct drm_amdgpu_info_hw_ip hw;
		uint32_t type = q->query_hw_ip.type;

		if (q->query_hw_ip.ip_instance >= AMDGPU_HW_IP_INSTANCE_MAX_COUNT)
			return -EINVAL;
		memset(&hw, 0, sizeof(hw));
		if (type == AMDGPU_HW_IP_COMPUTE || type == AMDGPU_HW_IP_GFX) {
			hw.hw_ip_version_major = 9;
			hw.hw_ip_version_minor = cfg.gc >= 0x090403 ? 4 : 0;
			hw.ib_start_alignment = 32;
			hw.ib_size_alignment = 32;
			hw.available_rings = type == AMDGPU_HW_IP_COMPUTE ?
				(1u << COMPUTE_RINGS) - 1 : 0;
			hw.ip_discovery_version = cfg.no_ipdisc ? 0 : cfg.gc;
		} else if (type >= AMDGPU_HW_IP_NUM) {
			return -EINVAL;
		}
		return copy_out(out, q->return_size, &hw, sizeof(hw));
	}
	if (q->query == AMDGPU_INFO_HW_IP_COUNT) {
		/*
		 * amdgpu_kms.c: for GFX on a device with partitions (GC
		 * 9.4.3 here) the partition's XCC count, the shares; 1 on
		 * one without; COMPUTE answers 1 (GFX IP block type).
		 */
		uint32_t n = 1;

		if (q->query_hw_ip.type == AMDGPU_HW_IP_GFX && cfg.gc >= 0x090403)
			n = cfg.num_xcc;
		else if (q->query_hw_ip.type != AMDGPU_HW_IP_GFX &&
			 q->query_hw_ip.type != AMDGPU_HW_IP_COMPUTE)
			return -EINVAL;
		return copy_out(out, q->return_size, &n, sizeof(n));
	}
	if (q->query == AMDGPU_INFO_READ_MMR_REG) {
		uint32_t gb_addr_config = 0x2a114042;	/* a value: libdrm keeps it */

		if (q->read_mmr_reg.dword_offset != 0x263e ||
		    q->read_mmr_reg.count != 1)
			return -EINVAL;
		return copy_out(out, q->return_size, &gb_addr_config, 4);
	}
	if (q->query == AMDGPU_INFO_TIMESTAMP) {
		/* A free-running counter at counter_khz, on CLOCK_BOOTTIME */
		uint64_t ticks = ticks_at(now_ns());

		st.timestamp++;
		return copy_out(out, q->return_size, &ticks, 8);
	}
	return -EINVAL;
}

int fake_amdgpu_ioctl(int fd, unsigned long req, void *arg)
{
	int ret;

	pthread_mutex_lock(&lock);
	if (is_req(req, DRM_IOCTL_AMDGPU_GEM_CREATE) ||
	    is_req(req, DRM_IOCTL_AMDGPU_GEM_MMAP) || is_req(req, DRM_IOCTL_GEM_CLOSE)) {
		ret = gem(req, arg);
	} else if (is_req(req, DRM_IOCTL_AMDGPU_GEM_VA)) {
		ret = gem_va(arg);
	} else if (is_req(req, DRM_IOCTL_AMDGPU_CTX)) {
		ret = ctx_ioctl(fd, arg);
	} else if (is_req(req, DRM_IOCTL_AMDGPU_CS)) {
		ret = cs_ioctl(fd, arg);
	} else if (is_req(req, DRM_IOCTL_AMDGPU_WAIT_CS)) {
		ret = wait_cs_ioctl(fd, arg);
	} else if (is_req(req, DRM_IOCTL_AMDGPU_INFO)) {
		ret = info(arg);
	} else if (is_req(req, DRM_IOCTL_VERSION)) {
		struct drm_version *v = arg;
		/* amdgpu_drv.c's DRIVER_NAME, _DESC, _DATE: libdrm's
		 * drmGetVersion() copies all three */
		static const char name[] = "amdgpu", desc[] = "AMD GPU",
			date[] = "20150101";

		st.version_ioctl++;
		/* amdgpu_drv.c: KMS_DRIVER_MAJOR.MINOR 3.61 on 6.12 */
		v->version_major = 3;
		v->version_minor = 61;
		v->version_patchlevel = 0;
		if (v->name && v->name_len)
			memcpy(v->name, name, v->name_len < sizeof(name) ?
			       v->name_len : sizeof(name));
		v->name_len = sizeof(name) - 1;
		if (v->date && v->date_len)
			memcpy(v->date, date, v->date_len < sizeof(date) ?
			       v->date_len : sizeof(date));
		v->date_len = sizeof(date) - 1;
		if (v->desc && v->desc_len)
			memcpy(v->desc, desc, v->desc_len < sizeof(desc) ?
			       v->desc_len : sizeof(desc));
		v->desc_len = sizeof(desc) - 1;
		ret = 0;
	} else if (is_req(req, DRM_IOCTL_GET_CLIENT)) {
		/*
		 * libdrm asks this only when drmGetNodeTypeFromFd() finds no
		 * render node behind the fd (here /dev/null: no
		 * /sys/dev/char/1:3/device/drm), in amdgpu_get_auth(); a real
		 * render node never gets it. Client 0 is the caller.
		 */
		struct drm_client *c = arg;

		if (c->idx) {
			ret = -EINVAL;
		} else {
			c->auth = 1;
			c->pid = (unsigned long)getpid();
			c->uid = (unsigned long)getuid();
			c->magic = 0;
			c->iocs = 0;
			ret = 0;
		}
	} else if (is_req(req, DRM_IOCTL_AMDGPU_PROFILER)) {
		struct drm_amdgpu_profiler_args in, *a = arg;

		/* drm_ioctl() copies the struct back even on error. */
		memcpy(&in, a, sizeof(in));
		if (a->pad) {
			ret = -EINVAL;
		} else if (!cfg.version) {
			ret = -EINVAL;	/* an ioctl number the driver lacks */
		} else if (a->op == AMDGPU_PROFILER_OP_GET_VER) {
			st.get_ver++;
			if (a->data.spm.dest_buf || a->data.spm.buf_size ||
			    a->data.spm.op || a->data.spm.timeout) {
				ret = -EINVAL;
			} else {
				a->data.version = cfg.version;
				ret = 0;
			}
		} else if (a->op == AMDGPU_PROFILER_OP_SPM) {
			struct drm_amdgpu_spm_args out = a->data.spm;

			ret = spm(fd, &out);
			if (!ret)
				a->data.spm = out;
			else
				a->data.spm.timeout = out.timeout;
		} else {
			ret = -EINVAL;
		}
	} else {
		ret = -ENOTTY;
	}
	pthread_mutex_unlock(&lock);
	return ret;
}

void fake_amdgpu_close(int fd)
{
	pthread_mutex_lock(&lock);
	if (st.owner == fd) {
		st.owner = -1;
		cur_addr = 0;
		pins_drop();
		spm_reset_all();
	}
	pthread_mutex_unlock(&lock);
}

void *fake_amdgpu_mmap(int fd, size_t len, int prot, int flags, long off)
{
	struct bo *bo;
	void *p;

	(void)fd;
	pthread_mutex_lock(&lock);
	bo = off & 0xffffffffl ? NULL : bo_by_handle((uint32_t)(off >> 32));
	if (!bo || bo->map_addr || !len || len > bo->size ||
	    !(flags & MAP_SHARED)) {
		pthread_mutex_unlock(&lock);
		errno = bo ? EINVAL : EACCES;
		return MAP_FAILED;
	}
	p = mmap(NULL, len, prot, MAP_SHARED, bo->mfd, 0);
	if (p != MAP_FAILED) {
		bo->map_addr = (uintptr_t)p;
		bo->map_len = len;
	}
	pthread_mutex_unlock(&lock);
	return p;
}

void fake_amdgpu_munmap(void *addr, size_t len)
{
	uint64_t a = (uintptr_t)addr;
	unsigned int i;

	pthread_mutex_lock(&lock);
	for (i = 0; i < MAX_BOS; i++) {
		struct bo *bo = &bos[i];

		if (!bo->map_addr || bo->map_addr + bo->map_len <= a ||
		    bo->map_addr >= a + len)
			continue;
		bo->map_addr = 0;
		bo->map_len = 0;
		/* Closed while mapped: the mapping was its last reference */
		if (bo->handle > UINT32_MAX - MAX_BOS)
			bo_release(bo);
	}
	pthread_mutex_unlock(&lock);
}
