// SPDX-License-Identifier: MIT
/*
 * Copyright 2026 The amdgpu profiler series authors
 *
 * Unit test of libamdgpu_profiler.so's device-handle calls against the
 * fake profiler kernel: this program defines amdgpu_device_get_fd() (it
 * comes before libdrm_amdgpu's in symbol lookup) to hand the library a
 * file descriptor of the fake render node, and links the fake's open()
 * and ioctl().
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "amdgpu_profiler.h"
#include "amdgpu_spm_uapi.h"
#include "fake_amdgpu.h"

#define NODE "/fake/dri/renderD128"

#include "unit.h"

/* A device handle is opaque to the library: it only asks for the fd. */
struct amdgpu_device {
	int fd;
};

__attribute__((visibility("default")))
int amdgpu_device_get_fd(amdgpu_device_handle dev);
int amdgpu_device_get_fd(amdgpu_device_handle dev)
{
	return dev->fd;
}

static void reset(const char *cfg)
{
	struct fake_amdgpu_config c;

	if (fake_amdgpu_parse(cfg, &c))
		abort();
	fake_amdgpu_reset(&c);
}

static void *buffer(size_t size)
{
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		abort();
	return p;
}

static void test_calls(void)
{
	const struct fake_amdgpu_stats *st = fake_amdgpu_stats();
	struct amdgpu_device a = { open(NODE, O_RDWR) };
	struct amdgpu_device b = { open(NODE, O_RDWR) };
	uint32_t version = 0, timeout, copied = 99;
	void *buf = buffer(8192), *buf2 = buffer(8192);
	bool loss = true;

	/*
	 * fixed=1: the second buffer's shares hold 768 and 1024 bytes, not
	 * FULL whatever the time between the calls; the fake still waits
	 * 5 ms and writes back 50 - 5.
	 */
	reset("version=1.1,xcc=2,bytes=1024,fill_ms=5,fixed=1");
	CHECK(a.fd >= 0 && b.fd >= 0);
	CHECK(amdgpu_prof_version(&a, &version) == 0);
	CHECK(version == AMDGPU_PROFILER_VERSION(1, 1));
	CHECK(amdgpu_prof_spm_acquire(&a) == 0);
	CHECK(amdgpu_prof_spm_acquire(&b) == -EBUSY);
	CHECK(amdgpu_prof_spm_release(&b) == -EBUSY);

	/* The first buffer: nothing to wait for, nothing retired. */
	timeout = 50;
	CHECK(amdgpu_prof_spm_setdestbuff(&a, 8192, &timeout, &copied, buf,
				     &loss) == 0);
	CHECK(copied == 0 && !loss && timeout == 50);
	/* The second waits for the first to fill: time left comes back. */
	timeout = 50;
	CHECK(amdgpu_prof_spm_setdestbuff(&a, 8192, &timeout, &copied, buf2,
				     &loss) == 0);
	CHECK(timeout == 45 && copied == 768 + 1024 && !loss);
	CHECK(amdgpu_prof_spm_parse_shares(buf, 8192, 2, version, NULL) == 0);
	CHECK(amdgpu_prof_spm_setdestbuff(&b, 8192, NULL, NULL, buf, NULL) ==
	      -EBUSY);

	/* Stopping: NULL buffer, whatever size the caller passes. */
	timeout = 0;
	CHECK(amdgpu_prof_spm_setdestbuff(&a, 8192, &timeout, &copied, NULL,
				     &loss) == 0);
	CHECK(st->ncalls > 0 &&
	      st->calls[st->ncalls - 1].dest_buf == 0 &&
	      st->calls[st->ncalls - 1].buf_size == 0);
	/* NULL outputs are allowed. */
	CHECK(amdgpu_prof_spm_setdestbuff(&a, 0, NULL, NULL, NULL, NULL) == 0);
	/* A misaligned buffer is the kernel's to refuse; timeout is kept. */
	timeout = 7;
	CHECK(amdgpu_prof_spm_setdestbuff(&a, 4096, &timeout, &copied,
				     (char *)buf + 8, &loss) == -EINVAL);
	CHECK(timeout == 7);
	CHECK(amdgpu_prof_spm_release(&a) == 0);
	CHECK(amdgpu_prof_spm_release(&a) == -EINVAL);
	close(a.fd);
	close(b.fd);
	munmap(buf, 8192);
	munmap(buf2, 8192);
}

/* A signal during the wait: restarted with what was left. */
static void test_eintr_restart(void)
{
	const struct fake_amdgpu_stats *st = fake_amdgpu_stats();
	struct amdgpu_device a = { open(NODE, O_RDWR) };
	void *buf = buffer(4096);
	uint32_t timeout = 40, copied;
	bool loss;
	unsigned int n;

	reset("version=1.0,xcc=1,fill_ms=20,fixed=1,eintr_call=1");
	CHECK(amdgpu_prof_spm_acquire(&a) == 0);
	CHECK(amdgpu_prof_spm_setdestbuff(&a, 4096, NULL, NULL, buf, NULL) == 0);
	CHECK(amdgpu_prof_spm_setdestbuff(&a, 4096, &timeout, &copied, buf,
				     &loss) == 0);
	n = st->ncalls;
	CHECK(n == 3);
	if (n == 3) {
		CHECK(st->calls[1].ret == -EINTR);
		CHECK(st->calls[1].timeout_in == 40);
		CHECK(st->calls[1].timeout_out == 30);
		/* The restart asks only for the remainder. */
		CHECK(st->calls[2].timeout_in == 30 && st->calls[2].ret == 0);
	}
	CHECK(timeout == 10);
	/* Closing the owner's fd releases. */
	close(a.fd);
	CHECK(st->owner == -1);
	munmap(buf, 4096);
}

static void test_no_profiler(void)
{
	struct amdgpu_device a = { open(NODE, O_RDWR) };
	uint32_t version = 5;

	reset("version=none");
	CHECK(amdgpu_prof_version(&a, &version) == -EINVAL);
	CHECK(version == 5);
	CHECK(amdgpu_prof_version(&a, NULL) == -EINVAL);
	close(a.fd);
}

int main(void)
{
	setenv("FAKE_AMDGPU_NODE", NODE, 1);
	test_calls();
	test_eintr_restart();
	test_no_profiler();
	return unit_done();
}
