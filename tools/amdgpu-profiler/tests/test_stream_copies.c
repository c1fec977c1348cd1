// SPDX-License-Identifier: MIT
/*
 * Copyright 2026 The amdgpu profiler series authors
 *
 * The hardware tests carry their own minimal copies of the cycle counter's
 * SPM streams: the kselftest's amdgpu_spm_stream.c and the IGT test's
 * spm_stream_build() (see stream_copies.h for how each is compiled here).
 * Their own checks decode the streams with decoders written next to them,
 * which can share their mistakes. This test holds each copy against the
 * reference tool instead: on GC 9.4.1, 9.4.2 and 9.4.3 the copy's start
 * and stop streams, read back by the tests' independent PM4 decoder
 * (spm_model.c), must be the same register writes, in the same order, as
 * spm_program_start() and spm_program_stop() make for CPC_ALWAYS_COUNT
 * (16 bits) at the copy's interval; the copy's cycle counter must sit in
 * the slot spm_config_build() gives it; and a sample that the RLC model
 * builds from the copy's stream must decode, through the kselftest's
 * decoder, into the model's timestamp and the interval.
 */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "spm_model.h"
#include "spm_program.h"
#include "stream_copies.h"
#include "unit.h"

#define MAX_DW		1024
#define MAX_WRITES	512

typedef int (*build_fn)(uint32_t gc, bool start, uint32_t *ib, size_t max_dw);

static const enum spm_gc_version gcs[] = {
	SPM_GC_9_4_1, SPM_GC_9_4_2, SPM_GC_9_4_3,
};

/* The reference: spm_program.c's streams for the copies' counter */
static int reference(enum spm_gc_version gc, unsigned int interval, bool start,
		     struct spm_config *cfg, struct spm_model_write *w)
{
	struct spm_counter_req req = { "CPC_ALWAYS_COUNT", 16 };
	uint32_t ib[MAX_DW];
	int n;

	CHECK(spm_config_build(cfg, gc, 0, &req, 1, interval) == 0);
	CHECK(cfg->interval == interval);	/* no rounding in between */
	n = start ? spm_program_start(cfg, ib, MAX_DW) :
		    spm_program_stop(cfg, ib, MAX_DW);
	CHECK(n > 0);
	if (n <= 0)
		return -1;
	return spm_model_decode(ib, (size_t)n, w, MAX_WRITES);
}

/* Writes @a (the copy's) against @b (the reference's), the first difference said */
static bool same_writes(const char *what, uint32_t gc, bool start,
			const struct spm_model_write *a, int na,
			const struct spm_model_write *b, int nb)
{
	int i;

	for (i = 0; i < na && i < nb; i++)
		if (a[i].reg != b[i].reg || a[i].val != b[i].val)
			break;
	if (i == na && i == nb)
		return true;
	fprintf(stderr, "  %s, GC %06x, %s stream: %d writes, spm_program.c %d; ",
		what, gc, start ? "start" : "stop", na, nb);
	if (i < na && i < nb)
		fprintf(stderr, "write %d: %#x <- %#x, spm_program.c %#x <- %#x\n",
			i, a[i].reg, a[i].val, b[i].reg, b[i].val);
	else
		fprintf(stderr, "the first %d agree\n", i);
	return false;
}

static void compare(const char *what, build_fn build, unsigned int interval,
		    unsigned int slot)
{
	static struct spm_model_write wc[MAX_WRITES], wr[MAX_WRITES];
	unsigned int g;
	int start;

	for (g = 0; g < sizeof(gcs) / sizeof(gcs[0]); g++) {
		for (start = 1; start >= 0; start--) {
			uint32_t ib[MAX_DW];
			struct spm_config cfg;
			int n, nc, nr;

			n = build(gcs[g], start, ib, MAX_DW);
			CHECK(n > 0);
			if (n <= 0)
				continue;
			nc = spm_model_decode(ib, (size_t)n, wc, MAX_WRITES);
			nr = reference(gcs[g], interval, start, &cfg, wr);
			CHECK(nc > 0 && nr > 0);
			CHECK(same_writes(what, gcs[g], start, wc, nc, wr, nr));
			if (start)
				CHECK(cfg.counters[0].slot == slot);
		}
	}
}

/*
 * The kselftest's stream run through the RLC model: the sample it lays
 * out decodes, with the kselftest's own decoder, into the model's
 * timestamp and the interval (CPC_ALWAYS_COUNT counts it, spm_model_value()).
 */
static void ksft_sample(void)
{
	static struct spm_model_write w[MAX_WRITES];
	unsigned int g;

	for (g = 0; g < sizeof(gcs) / sizeof(gcs[0]); g++) {
		uint32_t ib[MAX_DW], cycles = 0;
		struct spm_model_rlc m;
		unsigned char buf[512];
		uint64_t ts = 0x1122334455667788ull, got = 0;
		size_t size;
		int n, nw;

		n = ksft_copy_stream_build(gcs[g], true, ib, MAX_DW);
		CHECK(n > 0);
		if (n <= 0)
			continue;
		nw = spm_model_decode(ib, (size_t)n, w, MAX_WRITES);
		CHECK(nw > 0);
		spm_model_reset(&m);
		spm_model_apply(&m, w, nw);
		size = spm_model_sample(&m, spm_gc_num_se(gcs[g]), ts, 0, 0, buf,
					sizeof(buf));
		CHECK(m.violations == 0);
		CHECK(size == 64);	/* the kselftest's SPM_SAMPLE_BYTES */
		ksft_copy_sample_decode(buf, 0, &got, &cycles);
		CHECK(got == ts);
		CHECK(cycles == ksft_copy_interval());
	}
}

int main(void)
{
	/* One counter, one interval: the two copies agree on both */
	CHECK(ksft_copy_interval() == igt_copy_interval());
	CHECK(ksft_copy_slot() == igt_copy_slot());
	compare("kselftest amdgpu_spm_stream.c", ksft_copy_stream_build,
		ksft_copy_interval(), ksft_copy_slot());
	compare("IGT amd_profiler.c", igt_copy_stream_build,
		igt_copy_interval(), igt_copy_slot());
	ksft_sample();
	return unit_done();
}
