// SPDX-License-Identifier: MIT
/*
 * Copyright 2026 The amdgpu profiler series authors
 *
 * Decoding of a retired SPM destination buffer: its per-XCC shares and
 * their headers (uAPI 1.0 and 1.1). No device involved.
 */
#include <errno.h>
#include <string.h>

#include "amdgpu_profiler.h"
#include "amdgpu_spm_uapi.h"

#define amdgpu_public __attribute__((visibility("default")))

_Static_assert(AMDGPU_PROF_SPM_HEADER_SIZE == sizeof(struct amdgpu_spm_hdr),
	       "AMDGPU_PROF_SPM_HEADER_SIZE is the share header's size");


amdgpu_public
uint32_t amdgpu_prof_spm_share_size(uint32_t buf_size, uint32_t num_shares)
{
	uint32_t share;

	if (!num_shares)
		return 0;
	share = buf_size / num_shares;
	share -= share % AMDGPU_PROF_SPM_LINE_SIZE;
	if (share < AMDGPU_PROF_SPM_HEADER_SIZE + AMDGPU_PROF_SPM_LINE_SIZE)
		return 0;
	return share;
}

amdgpu_public
uint32_t amdgpu_prof_spm_min_buf_size(uint32_t num_shares)
{
	return num_shares * (AMDGPU_PROF_SPM_HEADER_SIZE + AMDGPU_PROF_SPM_LINE_SIZE);
}

/* Interface 1.1 and later (same major) define the header's words 3-7. */
static bool version_has_info(uint32_t version)
{
	return AMDGPU_PROFILER_VERSION_MAJOR(version) == 1 &&
	       AMDGPU_PROFILER_VERSION_MINOR(version) >= 1;
}

static bool header_valid(const struct amdgpu_spm_hdr *h, uint32_t version,
			 uint32_t share, uint32_t index, uint32_t num_shares)
{
	if (h->version != version ||
	    AMDGPU_PROFILER_VERSION_MAJOR(version) != 1 ||
	    h->bytes_copied > share - AMDGPU_PROF_SPM_HEADER_SIZE)
		return false;
	if (!version_has_info(version))
		return !h->xcc_info && !h->seq && !h->start_ns_lo &&
		       !h->start_ns_hi && !h->last_us;
	/* Every buffer the kernel retires was installed: seq starts at 1. */
	return AMDGPU_SPM_HDR_NUM_SHARES(h->xcc_info) == num_shares &&
	       AMDGPU_SPM_HDR_SHARE(h->xcc_info) == index &&
	       !AMDGPU_SPM_HDR_INFO_RESERVED(h->xcc_info) && h->seq;
}

amdgpu_public
int amdgpu_prof_spm_parse_shares(const void *buf, uint32_t buf_size,
			    uint32_t num_shares, uint32_t version,
			    struct amdgpu_prof_spm_share *out)
{
	uint32_t share = amdgpu_prof_spm_share_size(buf_size, num_shares);
	const unsigned char *p = buf;
	uint32_t i;

	if (!buf || !share || num_shares > AMDGPU_PROF_SPM_MAX_XCC)
		return -EINVAL;

	for (i = 0; i < num_shares; i++) {
		struct amdgpu_spm_hdr h;
		struct amdgpu_prof_spm_share *s;

		/* The buffer is only 32-byte aligned: copy, do not cast. */
		memcpy(&h, p + (size_t)i * share, sizeof(h));
		if (!header_valid(&h, version, share, i, num_shares))
			return -EINVAL;
		if (!out)
			continue;
		s = &out[i];
		memset(s, 0, sizeof(*s));
		s->index = i;
		s->xcc = i;
		s->num_shares = num_shares;
		s->offset = i * share;
		s->data_offset = i * share + AMDGPU_PROF_SPM_HEADER_SIZE;
		s->bytes = h.bytes_copied;
		/* 1.1 tells a full share (data kept for the next) from loss */
		s->data_loss = version_has_info(version) ?
			       (h.has_data_loss & AMDGPU_SPM_LOSS_SAMPLES) != 0 :
			       h.has_data_loss != 0;
		if (version_has_info(version)) {
			s->has_info = true;
			s->full = (h.has_data_loss & AMDGPU_SPM_LOSS_FULL) != 0;
			s->xcc = AMDGPU_SPM_HDR_XCC(h.xcc_info);
			s->seq = h.seq;
			s->start_ns = (uint64_t)h.start_ns_hi << 32 |
				      h.start_ns_lo;
			s->last_us = h.last_us;
		}
	}
	return 0;
}

amdgpu_public
int amdgpu_prof_spm_infer_xcc_count(const void *buf, uint32_t buf_size,
			       uint32_t version, uint32_t total_bytes,
			       bool any_loss)
{
	struct amdgpu_prof_spm_share shares[AMDGPU_PROF_SPM_MAX_XCC];
	int found = 0;
	uint32_t n, i;

	if (!buf)
		return 0;
	if (version_has_info(version)) {
		struct amdgpu_spm_hdr h;

		if (buf_size < sizeof(h))
			return 0;
		memcpy(&h, buf, sizeof(h));
		n = AMDGPU_SPM_HDR_NUM_SHARES(h.xcc_info);
		if (amdgpu_prof_spm_parse_shares(buf, buf_size, n, version, NULL))
			return 0;
		return (int)n;
	}

	for (n = 1; n <= AMDGPU_PROF_SPM_MAX_XCC; n++) {
		uint64_t sum = 0;
		bool loss = false;

		if (amdgpu_prof_spm_parse_shares(buf, buf_size, n, version, shares))
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

amdgpu_public
void amdgpu_prof_spm_clear_header_slots(void *buf, uint32_t buf_size)
{
	unsigned char *p = buf;
	uint32_t n, i;

	for (n = 1; n <= AMDGPU_PROF_SPM_MAX_XCC; n++) {
		uint32_t share = amdgpu_prof_spm_share_size(buf_size, n);

		if (!share)
			break;
		for (i = 0; i < n; i++)
			memset(p + (size_t)i * share, 0,
			       AMDGPU_PROF_SPM_HEADER_SIZE);
	}
}

amdgpu_public
const char *amdgpu_prof_spm_strerror(int err, enum amdgpu_prof_spm_call call)
{
	if (err < 0)
		err = -err;

	switch (err) {
	case EBUSY:
		if (call == AMDGPU_PROF_SPM_CALL_ACQUIRE)
			return "the SPM of this partition is in use: another process profiles it, or a graphics client reserved a VMID for SPM (AMDGPU_VM_OP_RESERVE_VMID)";
		return "this file descriptor does not own the SPM";
	case EPERM:
		return "not allowed to profile: needs CAP_PERFMON (or CAP_SYS_ADMIN) unless the administrator relaxed the amdgpu.spm_paranoid module parameter (/sys/module/amdgpu/parameters/spm_paranoid)";
	case ENODEV:
		if (call == AMDGPU_PROF_SPM_CALL_ACQUIRE)
			return "no SPM VMID on this device: the driver could not set up the VMID that SPM writes through when it loaded (see the kernel log), or the device is gone";
		return "the device is gone (unplugged, or the driver unbound from it)";
	case EOPNOTSUPP:
		return "this device has no SPM support (or it is an SR-IOV virtual function)";
	case ENOMEM:
		if (call == AMDGPU_PROF_SPM_CALL_SETDESTBUFF)
			return "out of memory, or pinning the buffer would pass RLIMIT_MEMLOCK: anonymous, shmem and hugetlb buffers are pinned (the last three stay pinned) and count against it unless the process has CAP_IPC_LOCK; buffers mapped through the render node are not pinned";
		return strerror(err);
	case EIO:
		if (call == AMDGPU_PROF_SPM_CALL_SETDESTBUFF)
			return "the kernel stopped SPM because the SPM ring registers were changed behind its back (by work submitted to the partition); only RELEASE is left (see the Security section of Documentation/gpu/amdgpu/profiler.rst, and the kernel log)";
		return strerror(err);
	case EINVAL:
		if (call == AMDGPU_PROF_SPM_CALL_VERSION)
			return "the kernel has no DRM_AMDGPU_PROFILER interface (kernel without the profiler series, or not an amdgpu device)";
		if (call == AMDGPU_PROF_SPM_CALL_ACQUIRE)
			return "invalid request: on a partitioned device (e.g. MI300 in CPX mode) open a partition's render node, not the primary node";
		if (call == AMDGPU_PROF_SPM_CALL_SETDESTBUFF)
			return "invalid request: buffer misaligned, larger than 256 MiB, too small for a header and one 32-byte line per XCC, or the SPM is not acquired";
		return "invalid request (is the SPM acquired?)";
	case ENOTTY:
		return "not a DRM device";
	default:
		return strerror(err);
	}
}
