// SPDX-License-Identifier: MIT
/*
 * Copyright 2026 The amdgpu profiler series authors
 *
 * Tests only: the fake profiler kernel (see fake_amdgpu.h). It follows the
 * kernel-doc of struct drm_amdgpu_spm_args and amdgpu_spm.c: every check
 * that the kernel makes before touching state, -EBUSY for a file that does
 * not own the SPM, the wait before any state changes, the time left written
 * back on success and on -EINTR, and the outputs left alone on error.
 * It also serves the few other ioctls the tools make: GTT BOs to use as
 * destination buffers (GEM_CREATE, GEM_MMAP, mmap, GEM_CLOSE; not pinned
 * and not charged, as amdgpu_spm_buf.c treats a VM_PFNMAP mapping), and
 * AMDGPU_INFO's DEV_INFO (gpu_counter_freq) and TIMESTAMP.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>

#include <drm/drm.h>

#include "amdgpu_spm_uapi.h"
#include "fake_amdgpu.h"

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

/* GTT BOs: GEM handles, and where they are mapped. */
#define MAX_BOS		16
static struct bo {
	uint32_t handle;	/* 0: free slot */
	uint64_t size;
	uint64_t map_addr;	/* 0: not mapped */
	uint64_t map_len;
} bos[MAX_BOS];
static uint32_t next_handle;

static struct bo *bo_by_handle(uint32_t handle)
{
	unsigned int i;

	for (i = 0; handle && i < MAX_BOS; i++)
		if (bos[i].handle == handle)
			return &bos[i];
	return NULL;
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
	memset(bos, 0, sizeof(bos));
	pthread_mutex_unlock(&lock);
}

const struct fake_amdgpu_stats *fake_amdgpu_stats(void)
{
	return &st;
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
					 !strcmp(eq, "EACCES") ? EACCES :
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
		else
			ret = -EINVAL;
	}
	free(copy);
	if (!c->num_xcc || c->num_xcc > 16)
		ret = -EINVAL;
	return ret;
}

static void sleep_ms(unsigned int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
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
		 * buffer was current, with some variation over time and XCCs;
		 * whole 32-byte lines.
		 */
		uint64_t elapsed_us = (now - cur_start_ns) / 1000;
		uint64_t rate = (uint64_t)cfg.bytes / 4 * (2 + (cur_seq + i) % 4);
		uint32_t bytes = cfg.fill_ms ?
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
		if (cfg.samples.n) {
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
		return 0;
	default:
		return set_dest_buf(fd, a);
	}
}

/* GEM_CREATE, GEM_MMAP, GEM_CLOSE as amdgpu_gem.c answers them (GTT only) */
static int gem(unsigned long req, void *arg)
{
	unsigned int i;
	struct bo *bo;

	if (req == DRM_IOCTL_AMDGPU_GEM_CREATE) {
		union drm_amdgpu_gem_create *c = arg;
		uint64_t size = c->in.bo_size;

		st.gem_create++;
		if (!size || c->in.domains != AMDGPU_GEM_DOMAIN_GTT)
			return -EINVAL;
		if (cfg.nogem)
			return -ENOMEM;
		bo = NULL;
		for (i = 0; i < MAX_BOS && !bo; i++)
			if (!bos[i].handle && !bos[i].map_addr)
				bo = &bos[i];
		if (!bo)
			return -ENOMEM;
		memset(bo, 0, sizeof(*bo));
		bo->handle = ++next_handle;
		bo->size = size;
		memset(c, 0, sizeof(*c));
		c->out.handle = bo->handle;
		return 0;
	}
	if (req == DRM_IOCTL_AMDGPU_GEM_MMAP) {
		union drm_amdgpu_gem_mmap *m = arg;

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
	/* The mapping keeps the BO alive, as a real mmap does */
	if (!bo->map_addr)
		memset(bo, 0, sizeof(*bo));
	else
		bo->handle = UINT32_MAX - (uint32_t)(bo - bos);
	return 0;
}

/* AMDGPU_INFO: DEV_INFO's gpu_counter_freq and TIMESTAMP */
static int info(struct drm_amdgpu_info *q)
{
	void *out = (void *)(uintptr_t)q->return_pointer;

	if (!out || !q->return_size)
		return -EINVAL;
	if (q->query == AMDGPU_INFO_DEV_INFO) {
		struct drm_amdgpu_info_device dev;

		memset(&dev, 0, sizeof(dev));
		dev.gpu_counter_freq = cfg.counter_khz;
		memcpy(out, &dev, q->return_size < sizeof(dev) ?
		       q->return_size : sizeof(dev));
		return 0;
	}
	if (q->query == AMDGPU_INFO_TIMESTAMP) {
		/* A free-running counter at counter_khz, on CLOCK_BOOTTIME */
		uint64_t ticks = ticks_at(now_ns());

		st.timestamp++;
		memcpy(out, &ticks, q->return_size < 8 ? q->return_size : 8);
		return 0;
	}
	return -EINVAL;
}

int fake_amdgpu_ioctl(int fd, unsigned long req, void *arg)
{
	int ret;

	pthread_mutex_lock(&lock);
	if (req == DRM_IOCTL_AMDGPU_GEM_CREATE ||
	    req == DRM_IOCTL_AMDGPU_GEM_MMAP || req == DRM_IOCTL_GEM_CLOSE) {
		ret = gem(req, arg);
	} else if (req == DRM_IOCTL_AMDGPU_INFO) {
		ret = info(arg);
	} else if (req == DRM_IOCTL_VERSION) {
		struct drm_version *v = arg;
		static const char name[] = "amdgpu";

		st.version_ioctl++;
		if (v->name && v->name_len)
			memcpy(v->name, name, v->name_len < sizeof(name) ?
			       v->name_len : sizeof(name));
		v->name_len = sizeof(name) - 1;
		v->date_len = 0;
		v->desc_len = 0;
		ret = 0;
	} else if (req == DRM_IOCTL_AMDGPU_PROFILER) {
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
	p = mmap(NULL, len, prot, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
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
			memset(bo, 0, sizeof(*bo));
	}
	pthread_mutex_unlock(&lock);
}
