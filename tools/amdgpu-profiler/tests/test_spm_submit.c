// SPDX-License-Identifier: MIT
/*
 * Copyright 2026 The amdgpu profiler series authors
 *
 * spm_submit.c against the fake kernel, in-process: the real libdrm_amdgpu
 * (amdgpu_device_initialize() and the BO, VA, context and CS calls) on a
 * descriptor of the fake render node, whose open(), ioctl(), mmap() and
 * fcntl() this program links in (tests/fake_amdgpu_preload.c). Checks
 * that the start stream reaches the fake's PM4 decoder and RLC model
 * (tests/spm_model.c) whole and starts counting; that every BO, GPU
 * mapping and context is given back after a submission that worked and
 * after each step failing (the fake counts them; the VA range, which is
 * libdrm's own allocator, shows by the next submission getting the same
 * address); that a job that never finishes is a timeout; which GC the
 * device is, from ip_discovery_version and without it; and two rules of
 * the fake kernel the recorder relies on being checked: a start stream
 * before the first buffer is reset by it, and a stream that writes a
 * ring register makes SPM stop with EIO.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "amdgpu_spm_uapi.h"
#include "fake_amdgpu.h"
#include "spm_program.h"
#include "spm_submit.h"
#include "unit.h"

#define NODE "/fake/dri/renderD129"
#define TIMEOUT_NS (100ull * 1000000ull)

static void reset(const char *cfg)
{
	struct fake_amdgpu_config c;

	if (fake_amdgpu_parse(cfg, &c)) {
		fprintf(stderr, "bad fake config %s\n", cfg);
		abort();
	}
	fake_amdgpu_reset(&c);
}

/* A device on a fresh descriptor of the fake node; NULL on failure. */
static amdgpu_device_handle device(int *fd)
{
	amdgpu_device_handle dev = NULL;
	uint32_t major = 0, minor = 0;
	int ret;

	*fd = open(NODE, O_RDWR | O_CLOEXEC);
	CHECK(*fd >= 0);
	ret = amdgpu_device_initialize(*fd, &major, &minor, &dev);
	CHECK(ret == 0);
	if (ret) {
		fprintf(stderr, "  amdgpu_device_initialize: %s\n",
			strerror(-ret));
		return NULL;
	}
	CHECK(major == 3 && minor == 61);
	return dev;
}

static void put_device(amdgpu_device_handle dev, int fd)
{
	if (dev)
		amdgpu_device_deinitialize(dev);
	close(fd);
	/* libdrm's duplicate and ours: the file is closed */
	CHECK(fake_amdgpu_stats()->owner == -1);
}

/* Nothing the submissions allocated is left in the fake kernel. */
static void check_balanced(const char *what)
{
	const struct fake_amdgpu_stats *st = fake_amdgpu_stats();
	bool ok = st->bos_live == 0 && st->va_live == 0 && st->va_map == st->va_unmap &&
		  st->ctx_live == 0 && st->ctx_alloc == st->ctx_free;

	CHECK(ok);
	if (!ok)
		fprintf(stderr, "  %s: BOs %u live (%u created, %u closed), VAs %u live (%u mapped, %u unmapped), contexts %u live (%u, %u freed)\n",
			what, st->bos_live, st->gem_create, st->gem_close,
			st->va_live, st->va_map, st->va_unmap, st->ctx_live,
			st->ctx_alloc, st->ctx_free);
}

static int start_stream(enum spm_gc_version gc, uint32_t *ib, size_t max)
{
	struct spm_counter_req req[3] = {
		{ "CPC_ALWAYS_COUNT", 16 },
		{ "CPC_ME1_BUSY_FOR_PACKET_DECODE", 16 },
		{ "SQ_WAVES", 32 },
	};
	struct spm_config cfg;

	CHECK(spm_config_build(&cfg, gc, 0, req, 3, 4096) == 0);
	return spm_program_start(&cfg, ib, max);
}

/* The start stream runs, whole, on the fake's RLC model; nothing leaks. */
static void test_submit(void)
{
	const struct fake_amdgpu_stats *st;
	struct spm_submit_info info, again;
	amdgpu_device_handle dev;
	uint32_t ib[1024];
	int fd, n;

	reset("version=1.1,xcc=1,rlc=1");
	dev = device(&fd);
	if (!dev)
		return;
	n = start_stream(SPM_GC_9_4_3, ib, 1024);
	CHECK(n > 0);
	CHECK(spm_submit_ib(dev, ib, (uint32_t)n, TIMEOUT_NS, &info) == 0);
	st = fake_amdgpu_stats();
	CHECK(info.failed == NULL);
	CHECK(st->cs_ok == 1 && st->wait_cs == 1 && st->wait_busy == 0);
	CHECK(st->ib_run == 1 && st->ib_bad == 0 && st->vm_faults == 0);
	/* In the job's BO list, as the CS needs it to be validated */
	CHECK(st->ib_not_in_list == 0);
	CHECK(st->ib_violations == 0);
	CHECK(st->spm_start == 1 && st->spm_stop == 0);
	CHECK(st->ring_writes == 0);
	/* Padded to the ring's IB size alignment (32 bytes) */
	CHECK(info.ib_dw % 8 == 0 && info.ib_dw >= (uint32_t)n &&
	      info.ib_dw - (uint32_t)n == info.pad_dw && info.pad_dw < 8);
	CHECK(st->last_ib_dw == info.ib_dw && st->last_ib_va == info.ib_va);
	CHECK(info.ib_va && info.ib_va % 4096 == 0 && info.seq == 1);
	check_balanced("after a submission");
	/* The VA range went back to libdrm: the next IB gets it again */
	CHECK(spm_submit_ib(dev, ib, (uint32_t)n, TIMEOUT_NS, &again) == 0);
	CHECK(again.ib_va == info.ib_va);
	check_balanced("after two");
	put_device(dev, fd);
}

/* Each step failing: its error, its name, nothing left behind. */
static void test_unwind(void)
{
	static const struct {
		const char *cfg;
		int err;
		const char *failed;
	} cases[] = {
		{ "fail=gem_create:ENOMEM", -ENOMEM, "amdgpu_bo_alloc" },
		{ "fail=gem_mmap:ENOMEM", -ENOMEM, "amdgpu_bo_cpu_map" },
		{ "fail=gem_va:ENOMEM", -ENOMEM, "amdgpu_bo_va_op(MAP)" },
		{ "fail=ctx:ENOMEM", -ENOMEM, "amdgpu_cs_ctx_create" },
		{ "fail=cs:ENOMEM", -ENOMEM, "amdgpu_cs_submit_raw2" },
		{ "fail=cs:ECANCELED", -ECANCELED, "amdgpu_cs_submit_raw2" },
		{ "fail=wait_cs:ENODEV", -ENODEV, "amdgpu_cs_query_fence_status" },
		/* The job never finishes: a timeout, not a libdrm error */
		{ "cs_hang=1", -ETIME, NULL },
	};
	struct spm_submit_info info, ok;
	amdgpu_device_handle dev;
	uint32_t ib[1024];
	char cfg[128];
	unsigned int i;
	int fd, n, ret;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		snprintf(cfg, sizeof(cfg), "version=1.1,rlc=1,%s", cases[i].cfg);
		reset(cfg);
		dev = device(&fd);
		if (!dev)
			return;
		n = start_stream(SPM_GC_9_4_3, ib, 1024);
		ret = spm_submit_ib(dev, ib, (uint32_t)n, TIMEOUT_NS, &info);
		CHECK(ret == cases[i].err);
		CHECK(cases[i].failed ? info.failed &&
		      !strcmp(info.failed, cases[i].failed) : !info.failed);
		if (ret != cases[i].err || (cases[i].failed && (!info.failed ||
		    strcmp(info.failed, cases[i].failed))))
			fprintf(stderr, "  %s: %d (%s), failed %s\n",
				cases[i].cfg, ret, strerror(-ret),
				info.failed ? info.failed : "-");
		check_balanced(cases[i].cfg);
		/* Only a job that was queued ran (the wait failed after) */
		CHECK(fake_amdgpu_stats()->spm_start ==
		      (cases[i].err == -ENODEV ? 1u : 0u));
		/* The range was given back: a later IB gets the lowest one */
		if (strstr(cases[i].cfg, "fail=")) {
			reset("version=1.1,rlc=1");
			CHECK(spm_submit_ib(dev, ib, (uint32_t)n, TIMEOUT_NS,
					    &ok) == 0);
			if (info.ib_va)
				CHECK(ok.ib_va == info.ib_va);
			check_balanced("the submission after");
		}
		put_device(dev, fd);
	}
}

/* What the fake's PM4 decoder refuses hangs the CP: a timeout too. */
static void test_bad_ib(void)
{
	static const uint32_t bad[] = { 0xc0001100u, 0 };	/* opcode 0x11 */
	amdgpu_device_handle dev;
	int fd;

	reset("version=1.1,rlc=1");
	dev = device(&fd);
	if (!dev)
		return;
	CHECK(spm_submit_ib(dev, bad, 2, TIMEOUT_NS, NULL) == -ETIME);
	CHECK(fake_amdgpu_stats()->ib_bad == 1);
	check_balanced("a bad IB");
	CHECK(spm_submit_ib(dev, bad, 0, TIMEOUT_NS, NULL) == -EINVAL);
	CHECK(spm_submit_ib(dev, NULL, 2, TIMEOUT_NS, NULL) == -EINVAL);
	CHECK(spm_submit_ib(NULL, bad, 2, TIMEOUT_NS, NULL) == -EINVAL);
	CHECK(spm_submit_ib(dev, bad, 16385, TIMEOUT_NS, NULL) == -EINVAL);
	put_device(dev, fd);
}

/*
 * The fake's kernel rules: the first buffer of a run resets the SPM
 * (counting started before it streams nothing, after it streams), and a
 * stream writing a register the kernel owns (RLC_SPM_PERFMON_RING_SIZE
 * here) stops SPM: SET_DEST_BUF fails with EIO from then on.
 */
static void test_kernel_rules(void)
{
	static const uint32_t ring_size[] = {
		0xc0017900u, 0xA000 + 0x3c83 - 0xc000, 0x1000 };
	const struct fake_amdgpu_stats *st;
	amdgpu_device_handle dev;
	uint32_t ib[1024], timeout, bytes, loss;
	static char buf[2][8192] __attribute__((aligned(32)));
	int fd, n;

	reset("version=1.1,rlc=1,fill_ms=2");
	dev = device(&fd);
	if (!dev)
		return;
	n = start_stream(SPM_GC_9_4_3, ib, 1024);
	CHECK(amdgpu_spm_fd_acquire(fd) == 0);
	/* Started before the first buffer: the install resets it */
	CHECK(spm_submit_ib(dev, ib, (uint32_t)n, TIMEOUT_NS, NULL) == 0);
	timeout = 0;
	CHECK(amdgpu_spm_fd_set_dest_buf(fd, buf[0], 8192, &timeout, &bytes,
					 &loss) == 0);
	timeout = 20;
	CHECK(amdgpu_spm_fd_set_dest_buf(fd, buf[1], 8192, &timeout, &bytes,
					 &loss) == 0);
	CHECK(bytes == 0);
	/* Started after it: samples */
	CHECK(spm_submit_ib(dev, ib, (uint32_t)n, TIMEOUT_NS, NULL) == 0);
	timeout = 20;
	CHECK(amdgpu_spm_fd_set_dest_buf(fd, buf[0], 8192, &timeout, &bytes,
					 &loss) == 0);
	CHECK(bytes > 0 && bytes % 320 == 0);
	st = fake_amdgpu_stats();
	CHECK(st->spm_start == 2 && st->ring_writes == 0);
	/* A ring register written from a stream */
	CHECK(spm_submit_ib(dev, ring_size, 3, TIMEOUT_NS, NULL) == 0);
	st = fake_amdgpu_stats();
	CHECK(st->ring_writes == 1);
	timeout = 0;
	CHECK(amdgpu_spm_fd_set_dest_buf(fd, buf[1], 8192, &timeout, &bytes,
					 &loss) == -EIO);
	CHECK(amdgpu_spm_fd_release(fd) == 0);
	check_balanced("the kernel rules");
	put_device(dev, fd);
}

/* The GC version from the device, with and without ip_discovery_version. */
static void test_gc(void)
{
	static const struct {
		const char *cfg;
		uint32_t gc, alt;
		bool discovery;
	} cases[] = {
		{ "gc=9.4.1", 0x090401, 0, true },
		{ "gc=9.4.2", 0x090402, 0, true },
		{ "gc=9.4.3", 0x090403, 0, true },
		{ "gc=9.4.4", 0x090404, 0, true },
		/* A kernel without ip_discovery_version: soc15.c's offsets */
		{ "gc=9.4.1,ipdisc=0", 0x090401, 0, false },
		{ "gc=9.4.2,ipdisc=0", 0x090402, 0, false },
		{ "gc=9.4.3,ipdisc=0", 0x090403, 0x090404, false },
		{ "gc=9.4.4,ipdisc=0", 0x090403, 0x090404, false },
	};
	struct spm_device_gc g;
	amdgpu_device_handle dev;
	char cfg[64], text[256];
	unsigned int i;
	int fd;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		snprintf(cfg, sizeof(cfg), "version=1.1,%s", cases[i].cfg);
		reset(cfg);
		dev = device(&fd);
		if (!dev)
			return;
		CHECK(spm_device_gc(dev, &g) == 0);
		CHECK(g.gc == cases[i].gc && g.gc_alt == cases[i].alt &&
		      g.from_discovery == cases[i].discovery);
		if (g.gc != cases[i].gc || g.gc_alt != cases[i].alt)
			fprintf(stderr, "  %s: gc %#x alt %#x\n", cases[i].cfg,
				g.gc, g.gc_alt);
		spm_device_gc_describe(&g, text, sizeof(text));
		CHECK(strstr(text, cases[i].discovery ?
			     "AMDGPU_INFO_HW_IP_INFO ip_discovery_version 0x0904" :
			     "no ip_discovery_version; DEV_INFO family 141") != NULL);
		put_device(dev, fd);
	}
}

int main(void)
{
	setenv("FAKE_AMDGPU_NODE", NODE, 1);
	test_submit();
	test_unwind();
	test_bad_ib();
	test_kernel_rules();
	test_gc();
	return unit_done();
}
