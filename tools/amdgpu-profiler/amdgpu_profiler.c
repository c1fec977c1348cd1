// SPDX-License-Identifier: MIT
/*
 * Copyright 2026 The amdgpu profiler series authors
 *
 * Reference userspace library for DRM_IOCTL_AMDGPU_PROFILER.
 */
#include <errno.h>
#include <string.h>
#include <sys/ioctl.h>

#include "amdgpu_profiler.h"

_Static_assert(sizeof(struct drm_amdgpu_spm_args) == 64,
	       "struct drm_amdgpu_spm_args must be 64 bytes");
_Static_assert(sizeof(struct drm_amdgpu_spm_buffer_header) ==
	       AMDGPU_SPM_HEADER_SIZE,
	       "struct drm_amdgpu_spm_buffer_header must be 32 bytes");
_Static_assert(sizeof(struct drm_amdgpu_profiler_args) == 72,
	       "struct drm_amdgpu_profiler_args must be 72 bytes");

static int profiler_ioctl(int fd, struct drm_amdgpu_profiler_args *args)
{
	if (ioctl(fd, DRM_IOCTL_AMDGPU_PROFILER, args) == 0)
		return 0;
	return -errno;
}

int amdgpu_profiler_get_version(int fd, uint32_t *version)
{
	struct drm_amdgpu_profiler_args args;
	int ret;

	memset(&args, 0, sizeof(args));
	args.op = AMDGPU_PROFILER_OP_GET_VER;
	ret = profiler_ioctl(fd, &args);
	if (ret == 0 && version)
		*version = args.data.version;
	return ret;
}

static int spm_simple_op(int fd, uint32_t op)
{
	struct drm_amdgpu_profiler_args args;
	int ret;

	memset(&args, 0, sizeof(args));
	args.op = AMDGPU_PROFILER_OP_SPM;
	args.data.spm.op = op;
	/* ACQUIRE and RELEASE are not restarted by the kernel. */
	do {
		ret = profiler_ioctl(fd, &args);
	} while (ret == -EINTR);
	return ret;
}

int amdgpu_spm_acquire(int fd)
{
	return spm_simple_op(fd, AMDGPU_SPM_OP_ACQUIRE);
}

int amdgpu_spm_release(int fd)
{
	return spm_simple_op(fd, AMDGPU_SPM_OP_RELEASE);
}

int amdgpu_spm_set_dest_buf(int fd, void *buf, uint32_t size,
			    uint32_t *timeout_ms, uint32_t *bytes_copied,
			    bool *has_data_loss)
{
	struct drm_amdgpu_profiler_args args;
	int ret;

	if (!buf && size)
		return -EINVAL;

	memset(&args, 0, sizeof(args));
	args.op = AMDGPU_PROFILER_OP_SPM;
	args.data.spm.op = AMDGPU_SPM_OP_SET_DEST_BUF;
	args.data.spm.dest_buf = (uintptr_t)buf;
	args.data.spm.buf_size = buf ? size : 0;
	args.data.spm.timeout = timeout_ms ? *timeout_ms : 0;

	ret = profiler_ioctl(fd, &args);
	/*
	 * The kernel writes the time left back on success and when a signal
	 * interrupted the wait; hand it on in both cases so that the caller
	 * can restart with the remainder.
	 */
	if ((ret == 0 || ret == -EINTR) && timeout_ms)
		*timeout_ms = args.data.spm.timeout;
	if (ret)
		return ret;
	if (bytes_copied)
		*bytes_copied = args.data.spm.bytes_copied;
	if (has_data_loss)
		*has_data_loss = args.data.spm.has_data_loss != 0;
	return 0;
}

uint32_t amdgpu_spm_share_size(uint32_t buf_size, uint32_t xcc_count)
{
	uint32_t share;

	if (!xcc_count)
		return 0;
	share = buf_size / xcc_count;
	share -= share % AMDGPU_SPM_LINE_SIZE;
	if (share < AMDGPU_SPM_HEADER_SIZE + AMDGPU_SPM_LINE_SIZE)
		return 0;
	return share;
}

uint32_t amdgpu_spm_min_buf_size(uint32_t xcc_count)
{
	return xcc_count * (AMDGPU_SPM_HEADER_SIZE + AMDGPU_SPM_LINE_SIZE);
}

static void read_header(const unsigned char *p,
			struct drm_amdgpu_spm_buffer_header *hdr)
{
	/* The buffer is only guaranteed to be 32-byte aligned by the caller. */
	memcpy(hdr, p, sizeof(*hdr));
}

static bool header_valid(const struct drm_amdgpu_spm_buffer_header *hdr,
			 uint32_t version, uint32_t share)
{
	unsigned int i;

	if (hdr->version != version)
		return false;
	for (i = 0; i < sizeof(hdr->reserved) / sizeof(hdr->reserved[0]); i++)
		if (hdr->reserved[i])
			return false;
	return hdr->bytes_copied <= share - AMDGPU_SPM_HEADER_SIZE;
}

int amdgpu_spm_parse_shares(const void *buf, uint32_t buf_size,
			    uint32_t xcc_count, uint32_t version,
			    struct amdgpu_spm_share *out)
{
	uint32_t share = amdgpu_spm_share_size(buf_size, xcc_count);
	const unsigned char *p = buf;
	uint32_t i;

	if (!buf || !share || xcc_count > AMDGPU_SPM_MAX_XCC)
		return -EINVAL;

	for (i = 0; i < xcc_count; i++) {
		struct drm_amdgpu_spm_buffer_header hdr;

		read_header(p + (size_t)i * share, &hdr);
		if (!header_valid(&hdr, version, share))
			return -EINVAL;
		if (out) {
			out[i].xcc = i;
			out[i].offset = i * share;
			out[i].data_offset = i * share + AMDGPU_SPM_HEADER_SIZE;
			out[i].bytes = hdr.bytes_copied;
			out[i].data_loss = hdr.has_data_loss != 0;
		}
	}
	return 0;
}

int amdgpu_spm_infer_xcc_count(const void *buf, uint32_t buf_size,
			       uint32_t version, uint32_t total_bytes,
			       bool any_loss)
{
	struct amdgpu_spm_share shares[AMDGPU_SPM_MAX_XCC];
	int found = 0;
	uint32_t n, i;

	for (n = 1; n <= AMDGPU_SPM_MAX_XCC; n++) {
		uint64_t sum = 0;
		bool loss = false;

		if (amdgpu_spm_parse_shares(buf, buf_size, n, version, shares))
			continue;
		for (i = 0; i < n; i++) {
			sum += shares[i].bytes;
			loss |= shares[i].data_loss;
		}
		if (sum != total_bytes || loss != any_loss)
			continue;
		if (found)
			return -1;
		found = (int)n;
	}
	return found;
}

void amdgpu_spm_clear_header_slots(void *buf, uint32_t buf_size)
{
	unsigned char *p = buf;
	uint32_t n, i;

	for (n = 1; n <= AMDGPU_SPM_MAX_XCC; n++) {
		uint32_t share = amdgpu_spm_share_size(buf_size, n);

		if (!share)
			break;
		for (i = 0; i < n; i++)
			memset(p + (size_t)i * share, 0,
			       AMDGPU_SPM_HEADER_SIZE);
	}
}

const char *amdgpu_spm_strerror(int err, int op)
{
	if (err < 0)
		err = -err;

	switch (err) {
	case EBUSY:
		if (op == AMDGPU_SPM_OP_ACQUIRE)
			return "the SPM of this partition is in use: another process profiles it, or a graphics client reserved a VMID for SPM (AMDGPU_VM_OP_RESERVE_VMID)";
		return "this file descriptor does not own the SPM";
	case EPERM:
	case EACCES:
		return "not allowed to profile: needs CAP_PERFMON (or CAP_SYS_ADMIN) unless the administrator relaxed the amdgpu.spm_paranoid module parameter (/sys/module/amdgpu/parameters/spm_paranoid)";
	case EOPNOTSUPP:
		return "this device has no SPM support (or it is an SR-IOV virtual function)";
	case EINVAL:
		if (op == 0)
			return "the kernel has no DRM_AMDGPU_PROFILER interface (kernel without the profiler series, or not an amdgpu device)";
		if (op == AMDGPU_SPM_OP_ACQUIRE)
			return "invalid request: on a partitioned device (e.g. MI300 in CPX mode) open a partition's render node, not the primary node";
		if (op == AMDGPU_SPM_OP_SET_DEST_BUF)
			return "invalid request: buffer misaligned, larger than 256 MiB, too small for a header and one line per XCC, or the SPM is not acquired";
		return "invalid request (is the SPM acquired?)";
	case ENOTTY:
		return "not a DRM device";
	default:
		return strerror(err);
	}
}
