// SPDX-License-Identifier: MIT
/*
 * Copyright 2026 The amdgpu profiler series authors
 *
 * Unit tests of the parts of the library that need no GPU: share
 * splitting, header parsing (uAPI 1.0 and 1.1), XCC count inference, and
 * the ioctl wrappers' argument checks and error paths on a file that is
 * not a DRM device.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "amdgpu_spm_uapi.h"
#include "amdgpu_profiler.h"

#define VERSION		AMDGPU_PROFILER_VERSION(1, 0)
#define VERSION_1_1	AMDGPU_PROFILER_VERSION(1, 1)

#include "tests/unit.h"

static unsigned char *alloc_buf(uint32_t size)
{
	void *p = NULL;

	if (posix_memalign(&p, 32, size ? size : 32))
		abort();
	memset(p, 0xa5, size);	/* garbage, like SPM sample data */
	return p;
}

/* Write the header the kernel would put at the start of share @i. */
static void put_share(unsigned char *buf, uint32_t buf_size, uint32_t n,
		      uint32_t i, uint32_t bytes, uint32_t loss)
{
	struct amdgpu_spm_hdr h;
	uint32_t share = amdgpu_prof_spm_share_size(buf_size, n);

	memset(&h, 0, sizeof(h));
	h.version = VERSION;
	h.bytes_copied = bytes;
	h.has_data_loss = loss;
	memcpy(buf + (size_t)i * share, &h, sizeof(h));
}

static void test_share_size(void)
{
	CHECK(amdgpu_prof_spm_share_size(4096, 0) == 0);
	CHECK(amdgpu_prof_spm_share_size(4096, 1) == 4096);
	CHECK(amdgpu_prof_spm_share_size(4096, 2) == 2048);
	/* Rounded down to 32 bytes: 4096 / 3 = 1365 -> 1344. */
	CHECK(amdgpu_prof_spm_share_size(4096, 3) == 1344);
	CHECK(amdgpu_prof_spm_share_size(4096, 3) % 32 == 0);
	/* A share must hold a header and one 32-byte line. */
	CHECK(amdgpu_prof_spm_share_size(64, 1) == 64);
	CHECK(amdgpu_prof_spm_share_size(63, 1) == 0);
	CHECK(amdgpu_prof_spm_share_size(127, 2) == 0);
	CHECK(amdgpu_prof_spm_share_size(128, 2) == 64);
	CHECK(amdgpu_prof_spm_share_size(8 * 64, 8) == 64);
	CHECK(amdgpu_prof_spm_share_size(8 * 64 - 1, 8) == 0);
	CHECK(amdgpu_prof_spm_min_buf_size(8) == 512);
	/* Largest allowed buffer, most XCCs: no overflow. */
	CHECK(amdgpu_prof_spm_share_size(AMDGPU_PROF_SPM_MAX_BUF_SIZE, 16) ==
	      AMDGPU_PROF_SPM_MAX_BUF_SIZE / 16);
	CHECK(amdgpu_prof_spm_share_size(UINT32_MAX, 1) == UINT32_MAX - 31);
}

static void test_parse_ok(void)
{
	const uint32_t size = 3 * 1024 + 100;
	unsigned char *buf = alloc_buf(size);
	struct amdgpu_prof_spm_share s[3];
	uint32_t share = amdgpu_prof_spm_share_size(size, 3);

	put_share(buf, size, 3, 0, 64, 0);
	put_share(buf, size, 3, 1, share - 32, 1);
	put_share(buf, size, 3, 2, 0, 0);
	CHECK(amdgpu_prof_spm_parse_shares(buf, size, 3, VERSION, s) == 0);
	CHECK(s[0].xcc == 0 && s[0].offset == 0 && s[0].data_offset == 32);
	CHECK(s[0].bytes == 64 && !s[0].data_loss);
	CHECK(s[1].offset == share && s[1].data_offset == share + 32);
	CHECK(s[1].bytes == share - 32 && s[1].data_loss);
	CHECK(s[2].offset == 2 * share && s[2].bytes == 0);
	/* Out may be NULL for a pure validation. */
	CHECK(amdgpu_prof_spm_parse_shares(buf, size, 3, VERSION, NULL) == 0);
	free(buf);
}

static void test_parse_rejects(void)
{
	const uint32_t size = 2048;
	unsigned char *buf = alloc_buf(size);
	struct amdgpu_spm_hdr h;
	uint32_t *words = (uint32_t *)&h;
	struct amdgpu_prof_spm_share s[2];

	put_share(buf, size, 2, 0, 10, 0);
	put_share(buf, size, 2, 1, 10, 0);
	CHECK(amdgpu_prof_spm_parse_shares(buf, size, 2, VERSION, s) == 0);

	/* Wrong version. */
	CHECK(amdgpu_prof_spm_parse_shares(buf, size, 2, VERSION + 1, s) ==
	      -EINVAL);

	/* Byte count past the end of the share. */
	put_share(buf, size, 2, 1, 1024 - 32 + 1, 0);
	CHECK(amdgpu_prof_spm_parse_shares(buf, size, 2, VERSION, s) == -EINVAL);
	put_share(buf, size, 2, 1, 1024 - 32, 0);
	CHECK(amdgpu_prof_spm_parse_shares(buf, size, 2, VERSION, s) == 0);

	/* Each reserved word must be zero. */
	for (unsigned int w = 0; w < 5; w++) {
		memcpy(&h, buf + 1024, sizeof(h));
		words[3 + w] = 1;
		memcpy(buf + 1024, &h, sizeof(h));
		CHECK(amdgpu_prof_spm_parse_shares(buf, size, 2, VERSION, s) ==
		      -EINVAL);
		words[3 + w] = 0;
		memcpy(buf + 1024, &h, sizeof(h));
	}
	CHECK(amdgpu_prof_spm_parse_shares(buf, size, 2, VERSION, s) == 0);

	/* Bad arguments. */
	CHECK(amdgpu_prof_spm_parse_shares(NULL, size, 2, VERSION, s) == -EINVAL);
	CHECK(amdgpu_prof_spm_parse_shares(buf, size, 0, VERSION, s) == -EINVAL);
	CHECK(amdgpu_prof_spm_parse_shares(buf, 100, 2, VERSION, s) == -EINVAL);
	CHECK(amdgpu_prof_spm_parse_shares(buf, size, AMDGPU_PROF_SPM_MAX_XCC + 1,
				      VERSION, s) == -EINVAL);
	free(buf);
}

/* Lay out a buffer as the kernel would for @n XCCs and infer n back. */
static int layout_and_infer(uint32_t size, uint32_t n, const uint32_t *bytes,
			    const uint32_t *loss)
{
	unsigned char *buf = alloc_buf(size);
	uint32_t total = 0, i;
	bool any = false;
	int ret;

	amdgpu_prof_spm_clear_header_slots(buf, size);
	for (i = 0; i < n; i++) {
		put_share(buf, size, n, i, bytes[i], loss[i]);
		total += bytes[i];
		any |= loss[i] != 0;
	}
	ret = amdgpu_prof_spm_infer_xcc_count(buf, size, VERSION, total, any);
	free(buf);
	return ret;
}

static void test_infer(void)
{
	static const uint32_t zero[16];
	uint32_t bytes[16], loss[16];
	uint32_t size = 1u << 20;
	uint32_t n;

	/* Every share carries data: the count is unique. */
	for (n = 1; n <= 16; n++) {
		for (uint32_t i = 0; i < n; i++)
			bytes[i] = 32 * (i + 1) + 32 * 1000;
		CHECK(layout_and_infer(size, n, bytes, zero) == (int)n);
	}

	/* A size that does not divide evenly (MI300 CPX: 1 XCC, QPX: 2). */
	for (n = 1; n <= 8; n++) {
		for (uint32_t i = 0; i < n; i++)
			bytes[i] = 4096;
		CHECK(layout_and_infer(size + 96 + 7 * 32, n, bytes, zero) ==
		      (int)n);
	}

	/* The last XCC copied nothing: 1 and 2 both fit -> ambiguous. */
	bytes[0] = 4096;
	bytes[1] = 0;
	CHECK(layout_and_infer(size, 2, bytes, zero) == -1);

	/* ... unless the loss flag tells them apart. */
	loss[0] = 0;
	loss[1] = 1;
	CHECK(layout_and_infer(size, 2, bytes, loss) == 2);

	/* A share 0 fuller than a smaller share rules out larger counts. */
	bytes[0] = size / 2 - 32;
	bytes[1] = 32;
	CHECK(layout_and_infer(size, 2, bytes, zero) == 2);

	/* Nothing valid at all. */
	{
		unsigned char *buf = alloc_buf(4096);

		CHECK(amdgpu_prof_spm_infer_xcc_count(buf, 4096, VERSION, 0,
						 false) == 0);
		free(buf);
	}
}

static void test_clear_header_slots(void)
{
	uint32_t size = 64 * 1024;
	unsigned char *buf = alloc_buf(size);
	uint32_t n;

	/* Stale headers of an 8-XCC layout from an earlier round. */
	for (n = 0; n < 8; n++)
		put_share(buf, size, 8, n, 100, 0);
	amdgpu_prof_spm_clear_header_slots(buf, size);
	for (n = 1; n <= 16; n++)
		CHECK(amdgpu_prof_spm_parse_shares(buf, size, n, VERSION, NULL) ==
		      -EINVAL);
	/* Data between the slots is untouched. */
	CHECK(buf[32] == 0xa5 && buf[size - 1] == 0xa5);

	/* A buffer too small for any share is left alone. */
	memset(buf, 0xa5, 32);
	amdgpu_prof_spm_clear_header_slots(buf, 32);
	CHECK(buf[0] == 0xa5);
	free(buf);
}

/* A buffer as a 1.1 kernel retires it: the reserved words filled in. */
static void put_share_1_1(unsigned char *buf, uint32_t buf_size, uint32_t n,
			  uint32_t i, uint32_t xcc, uint32_t bytes,
			  uint32_t seq, uint64_t start_ns, uint32_t last_us)
{
	struct amdgpu_spm_hdr h;
	uint32_t share = amdgpu_prof_spm_share_size(buf_size, n);

	memset(&h, 0, sizeof(h));
	h.version = VERSION_1_1;
	h.bytes_copied = bytes;
	h.xcc_info = AMDGPU_SPM_HDR_XCC_INFO(xcc, n, i);
	h.seq = seq;
	h.start_ns_lo = (uint32_t)start_ns;
	h.start_ns_hi = (uint32_t)(start_ns >> 32);
	h.last_us = last_us;
	memcpy(buf + (size_t)i * share, &h, sizeof(h));
}

static void test_parse_1_1(void)
{
	const uint32_t size = 4 * 4096;
	unsigned char *buf = alloc_buf(size);
	struct amdgpu_prof_spm_share s[4];
	const uint64_t t0 = 0x123456789abcull;
	struct amdgpu_spm_hdr h;
	uint32_t i;

	/* Partition 1 of a DPX MI300X: logical XCCs 2 and 3. */
	amdgpu_prof_spm_clear_header_slots(buf, size);
	put_share_1_1(buf, size, 2, 0, 2, 4096, 7, t0, 1500);
	put_share_1_1(buf, size, 2, 1, 3, 0, 7, t0 + 10, 0);
	CHECK(amdgpu_prof_spm_parse_shares(buf, size, 2, VERSION_1_1, s) == 0);
	CHECK(s[0].has_info && s[0].xcc == 2 && s[0].index == 0);
	CHECK(s[0].num_shares == 2 && s[0].seq == 7);
	CHECK(s[0].start_ns == t0 && s[0].last_us == 1500);
	CHECK(s[1].xcc == 3 && s[1].index == 1 && s[1].bytes == 0);
	CHECK(s[1].start_ns == t0 + 10 && s[1].last_us == 0);
	/* The count comes from the headers, even when XCC 3 is empty. */
	CHECK(amdgpu_prof_spm_infer_xcc_count(buf, size, VERSION_1_1, 4096,
					 false) == 2);
	/* A 1.0 reader of a 1.1 buffer: the version says no. */
	CHECK(amdgpu_prof_spm_parse_shares(buf, size, 2, VERSION, s) == -EINVAL);

	/* Wrong share count, wrong index, non-zero top byte, seq 0. */
	CHECK(amdgpu_prof_spm_parse_shares(buf, size, 1, VERSION_1_1, s) ==
	      -EINVAL);
	memcpy(&h, buf + size / 2, sizeof(h));
	h.xcc_info = AMDGPU_SPM_HDR_XCC_INFO(3, 2, 0);
	memcpy(buf + size / 2, &h, sizeof(h));
	CHECK(amdgpu_prof_spm_parse_shares(buf, size, 2, VERSION_1_1, s) ==
	      -EINVAL);
	h.xcc_info = 3 | 2 << 8 | 1 << 16 | 1u << 24;
	memcpy(buf + size / 2, &h, sizeof(h));
	CHECK(amdgpu_prof_spm_parse_shares(buf, size, 2, VERSION_1_1, s) ==
	      -EINVAL);
	h.xcc_info = AMDGPU_SPM_HDR_XCC_INFO(3, 2, 1);
	h.seq = 0;
	memcpy(buf + size / 2, &h, sizeof(h));
	CHECK(amdgpu_prof_spm_parse_shares(buf, size, 2, VERSION_1_1, s) ==
	      -EINVAL);
	h.seq = 7;
	memcpy(buf + size / 2, &h, sizeof(h));
	CHECK(amdgpu_prof_spm_parse_shares(buf, size, 2, VERSION_1_1, s) == 0);

	/* last_us saturates, and so does the decoded value. */
	put_share_1_1(buf, size, 2, 0, 2, 32, 8, t0, 0xffffffffu);
	CHECK(amdgpu_prof_spm_parse_shares(buf, size, 2, VERSION_1_1, s) == 0);
	CHECK(s[0].last_us == 0xffffffffu);

	/* has_data_loss: a full share is not a loss; lost samples are. */
	memcpy(&h, buf, sizeof(h));
	h.has_data_loss = AMDGPU_SPM_LOSS_FULL;
	memcpy(buf, &h, sizeof(h));
	CHECK(amdgpu_prof_spm_parse_shares(buf, size, 2, VERSION_1_1, s) == 0);
	CHECK(s[0].full && !s[0].data_loss);
	h.has_data_loss = AMDGPU_SPM_LOSS_FULL | AMDGPU_SPM_LOSS_SAMPLES;
	memcpy(buf, &h, sizeof(h));
	CHECK(amdgpu_prof_spm_parse_shares(buf, size, 2, VERSION_1_1, s) == 0);
	CHECK(s[0].full && s[0].data_loss);
	h.has_data_loss = 0;
	memcpy(buf, &h, sizeof(h));

	/* A later 1.x minor keeps the 1.1 words. */
	for (i = 0; i < 4; i++)
		put_share_1_1(buf, size, 4, i, i, 64, 1, t0, 1);
	for (i = 0; i < 4; i++) {
		memcpy(&h, buf + (size_t)i * (size / 4), sizeof(h));
		h.version = AMDGPU_PROFILER_VERSION(1, 2);
		memcpy(buf + (size_t)i * (size / 4), &h, sizeof(h));
	}
	CHECK(amdgpu_prof_spm_parse_shares(buf, size, 4,
				      AMDGPU_PROFILER_VERSION(1, 2), s) == 0);
	CHECK(s[3].xcc == 3 && s[3].has_info);
	/* An unknown major is not decoded at all. */
	CHECK(amdgpu_prof_spm_parse_shares(buf, size, 4,
				      AMDGPU_PROFILER_VERSION(2, 0), s) ==
	      -EINVAL);
	/* No valid header at all on a 1.1 kernel. */
	memset(buf, 0, size);
	CHECK(amdgpu_prof_spm_infer_xcc_count(buf, size, VERSION_1_1, 0, false) ==
	      0);
	free(buf);
}

static void test_wrappers_without_device(void)
{
	uint32_t version = 0x12345678, timeout = 50, bytes = 7, loss = 3;
	int fd;

	CHECK(amdgpu_profiler_fd_version(-1, &version) == -EBADF);
	CHECK(version == 0x12345678);
	CHECK(amdgpu_spm_fd_acquire(-1) == -EBADF);
	CHECK(amdgpu_spm_fd_release(-1) == -EBADF);
	CHECK(amdgpu_spm_fd_set_dest_buf(-1, NULL, 0, &timeout, &bytes,
					 &loss) == -EBADF);
	/* Outputs untouched on failure. */
	CHECK(timeout == 50 && bytes == 7 && loss == 3);

	/* A file that is not a DRM device: -ENOTTY. */
	fd = open("/dev/null", O_RDWR);
	CHECK(fd >= 0);
	if (fd >= 0) {
		CHECK(amdgpu_profiler_fd_version(fd, &version) == -ENOTTY);
		CHECK(amdgpu_spm_fd_acquire(fd) == -ENOTTY);
		close(fd);
	}
}

static void test_strerror(void)
{
	CHECK(strstr(amdgpu_prof_spm_strerror(-EPERM, AMDGPU_PROF_SPM_CALL_ACQUIRE),
		     "spm_paranoid") != NULL);
	/* spm_paranoid is the only parameter that refuses ACQUIRE. */
	CHECK(strstr(amdgpu_prof_spm_strerror(-EPERM, AMDGPU_PROF_SPM_CALL_ACQUIRE),
		     "spm_unsafe_vmid0") == NULL);
	/* No SPM refusal is EACCES any more: only libc's text for it. */
	CHECK(!strcmp(amdgpu_prof_spm_strerror(-EACCES, AMDGPU_PROF_SPM_CALL_ACQUIRE),
		      strerror(EACCES)));
	/* ENODEV from ACQUIRE: no SPM VMID (set up at load), or no device. */
	CHECK(strstr(amdgpu_prof_spm_strerror(-ENODEV, AMDGPU_PROF_SPM_CALL_ACQUIRE),
		     "SPM VMID") != NULL);
	CHECK(strstr(amdgpu_prof_spm_strerror(ENODEV, AMDGPU_PROF_SPM_CALL_ACQUIRE),
		     "the device is gone") != NULL);
	CHECK(strstr(amdgpu_prof_spm_strerror(-ENODEV, AMDGPU_PROF_SPM_CALL_SETDESTBUFF),
		     "the device is gone") != NULL);
	CHECK(strstr(amdgpu_prof_spm_strerror(-ENODEV, AMDGPU_PROF_SPM_CALL_SETDESTBUFF),
		     "SPM VMID") == NULL);
	/* No explanation names the module parameter that is gone. */
	{
		int e, call, named = 0;

		for (e = 1; e < 134; e++)
			for (call = AMDGPU_PROF_SPM_CALL_VERSION;
			     call <= AMDGPU_PROF_SPM_CALL_SETDESTBUFF; call++)
				named += strstr(amdgpu_prof_spm_strerror(-e, call),
						"unsafe_vmid0") != NULL;
		CHECK(named == 0);
	}
	CHECK(strstr(amdgpu_prof_spm_strerror(-EBUSY, AMDGPU_PROF_SPM_CALL_ACQUIRE),
		     "RESERVE_VMID") != NULL);
	CHECK(strstr(amdgpu_prof_spm_strerror(EOPNOTSUPP, AMDGPU_PROF_SPM_CALL_ACQUIRE),
		     "no SPM") != NULL);
	CHECK(strstr(amdgpu_prof_spm_strerror(-EINVAL, AMDGPU_PROF_SPM_CALL_VERSION),
		     "DRM_AMDGPU_PROFILER") != NULL);
	CHECK(strstr(amdgpu_prof_spm_strerror(-EINVAL, AMDGPU_PROF_SPM_CALL_ACQUIRE),
		     "partition") != NULL);
	CHECK(amdgpu_prof_spm_strerror(-ENOMEM, AMDGPU_PROF_SPM_CALL_ACQUIRE) != NULL);
	/* Only some buffers are pinned; say which, and what lifts the limit. */
	CHECK(strstr(amdgpu_prof_spm_strerror(-ENOMEM, AMDGPU_PROF_SPM_CALL_SETDESTBUFF),
		     "anonymous, shmem and hugetlb buffers are pinned") != NULL);
	CHECK(strstr(amdgpu_prof_spm_strerror(-ENOMEM, AMDGPU_PROF_SPM_CALL_SETDESTBUFF),
		     "CAP_IPC_LOCK") != NULL);
	CHECK(strstr(amdgpu_prof_spm_strerror(-ENOMEM, AMDGPU_PROF_SPM_CALL_SETDESTBUFF),
		     "render node are not pinned") != NULL);
	/* The kernel stopped SPM (ring registers changed): not an I/O error. */
	CHECK(strstr(amdgpu_prof_spm_strerror(-EIO, AMDGPU_PROF_SPM_CALL_SETDESTBUFF),
		     "the kernel stopped SPM") != NULL);
	CHECK(strstr(amdgpu_prof_spm_strerror(EIO, AMDGPU_PROF_SPM_CALL_SETDESTBUFF),
		     "Security section of Documentation/gpu/amdgpu/profiler.rst") != NULL);
}

int main(void)
{
	test_share_size();
	test_parse_ok();
	test_parse_rejects();
	test_parse_1_1();
	test_infer();
	test_clear_header_slots();
	test_wrappers_without_device();
	test_strerror();

	return unit_done();
}
