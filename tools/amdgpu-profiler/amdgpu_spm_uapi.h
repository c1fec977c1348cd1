/* SPDX-License-Identifier: MIT */
/*
 * Copyright 2026 The amdgpu profiler series authors
 *
 * Internal: the kernel uAPI of DRM_IOCTL_AMDGPU_PROFILER as this code needs
 * it, and the fd-level calls that the installed library wraps. Not
 * installed; nothing here is part of libamdgpu_profiler's ABI.
 *
 * Profiler uAPI 1.1 gives the five reserved words of
 * struct drm_amdgpu_spm_buffer_header a meaning without changing the
 * 32-byte layout. Until every amdgpu_drm.h we build against names those
 * words, this code reads the header through its own layout-identical
 * struct (struct amdgpu_spm_hdr) and carries the 1.1 definitions below
 * under #ifndef, so it builds against a 1.0 header (reserved[5]) and a 1.1
 * header (reserved[5] in a union with the named words) alike.
 */
#ifndef AMDGPU_SPM_UAPI_H
#define AMDGPU_SPM_UAPI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#if defined(__has_include)
#if !__has_include(<drm/amdgpu_drm.h>)
#error "<drm/amdgpu_drm.h> not found: build with UAPI_INCLUDE=<headers_install output of a kernel with the profiler series>/include"
#endif
#endif
#include <drm/amdgpu_drm.h>

#ifndef DRM_IOCTL_AMDGPU_PROFILER
#error "amdgpu_drm.h lacks DRM_IOCTL_AMDGPU_PROFILER: build with UAPI_INCLUDE=<headers_install output of a kernel with the profiler series>/include"
#endif

#ifndef AMDGPU_PROFILER_VERSION
#define AMDGPU_PROFILER_VERSION(major, minor) \
	(((uint32_t)(major) << 24) | (uint32_t)(minor))
#endif

#ifndef AMDGPU_PROFILER_VERSION_MAJOR
#define AMDGPU_PROFILER_VERSION_MAJOR(v)	((uint32_t)(v) >> 24)
#define AMDGPU_PROFILER_VERSION_MINOR(v)	((uint32_t)(v) & 0xffffffu)
#endif

/* Profiler uAPI 1.1: the share header's reserved words are defined. */
#ifndef AMDGPU_PROFILER_VERSION_1_1
#define AMDGPU_PROFILER_VERSION_1_1	AMDGPU_PROFILER_VERSION(1, 1)
#endif

/*
 * xcc_info (header word 3) as uAPI 1.1 defines it, with the names the
 * kernel header uses: bits 0-7 the logical XCC id of the share
 * (device-wide), 8-15 the number of shares in the buffer, 16-23 the index
 * of this share in the buffer, 24-31 zero. A 1.1 amdgpu_drm.h brings its
 * own definitions; these are for building against a 1.0 one.
 */
#ifndef AMDGPU_SPM_HDR_XCC
#define AMDGPU_SPM_HDR_XCC(info)		((uint32_t)(info) & 0xffu)
#define AMDGPU_SPM_HDR_NUM_SHARES(info)	(((uint32_t)(info) >> 8) & 0xffu)
#define AMDGPU_SPM_HDR_SHARE(info)		(((uint32_t)(info) >> 16) & 0xffu)
#define AMDGPU_SPM_HDR_XCC_INFO(xcc, num, share) \
	(((uint32_t)(xcc) & 0xffu) | ((uint32_t)(num) & 0xffu) << 8 | \
	 ((uint32_t)(share) & 0xffu) << 16)
#endif
/*
 * Bits of has_data_loss as uAPI 1.1 defines them: bit 0 samples lost, bit 1
 * the share filled up while data waited in the ring (it went on in the next
 * buffer). A 1.0 kernel only says non-zero.
 */
#ifndef AMDGPU_SPM_LOSS_SAMPLES
#define AMDGPU_SPM_LOSS_SAMPLES		(1u << 0)
#define AMDGPU_SPM_LOSS_FULL		(1u << 1)
#endif
/* Bits 24-31, zero in 1.1 (internal: not a uAPI name). */
#define AMDGPU_SPM_HDR_INFO_RESERVED(info)	((uint32_t)(info) >> 24)

/*
 * struct drm_amdgpu_spm_buffer_header as version 1.1 defines it. Read a
 * share's header into this (memcpy: the buffer is only 32-byte aligned by
 * contract) whatever the installed header calls the words.
 */
struct amdgpu_spm_hdr {
	uint32_t version;
	uint32_t bytes_copied;
	uint32_t has_data_loss;
	uint32_t xcc_info;	/* 1.1: see AMDGPU_SPM_HDR_*(); 1.0: 0 */
	uint32_t seq;		/* 1.1: per-XCC buffer number since ACQUIRE, from 1 */
	uint32_t start_ns_lo;	/* 1.1: CLOCK_MONOTONIC ns when the buffer was installed */
	uint32_t start_ns_hi;
	uint32_t last_us;	/* 1.1: us from start_ns to the last copy, 0 if none; saturates */
};

_Static_assert(sizeof(struct amdgpu_spm_hdr) ==
	       sizeof(struct drm_amdgpu_spm_buffer_header),
	       "share header is 32 bytes in every uAPI version");
_Static_assert(offsetof(struct drm_amdgpu_spm_buffer_header, reserved) ==
	       offsetof(struct amdgpu_spm_hdr, xcc_info),
	       "1.1 words overlay the 1.0 reserved words");
_Static_assert(sizeof(struct drm_amdgpu_spm_args) == 64,
	       "struct drm_amdgpu_spm_args must be 64 bytes");
_Static_assert(sizeof(struct drm_amdgpu_profiler_args) == 72,
	       "struct drm_amdgpu_profiler_args must be 72 bytes");

/*
 * fd-level calls (amdgpu_profiler_fd.c). Each returns 0 or a negative
 * errno. Hidden in the shared library; linked statically into the tools.
 */
#define AMDGPU_PROFILER_INTERNAL __attribute__((visibility("hidden")))

AMDGPU_PROFILER_INTERNAL
int amdgpu_profiler_fd_version(int fd, uint32_t *version);
AMDGPU_PROFILER_INTERNAL
int amdgpu_spm_fd_acquire(int fd);
AMDGPU_PROFILER_INTERNAL
int amdgpu_spm_fd_release(int fd);
/*
 * Retire the current buffer and install @dest (NULL: stop copying; @size
 * is then not passed to the kernel, which wants 0 with no buffer). The
 * time left is written to @timeout on success and when a signal
 * interrupted the wait (-EINTR), which this call does not restart.
 * @has_data_loss gets the kernel's has_data_loss word as it is: test it
 * with amdgpu_spm_lost_samples(), not for non-zero.
 */
AMDGPU_PROFILER_INTERNAL
int amdgpu_spm_fd_set_dest_buf(int fd, void *dest, uint32_t size,
			       uint32_t *timeout, uint32_t *bytes_copied,
			       uint32_t *has_data_loss);

/*
 * Whether a has_data_loss word (of SET_DEST_BUF or of a share header) says
 * that samples were lost. Since 1.1 bit 0 (AMDGPU_SPM_LOSS_SAMPLES) says
 * so and bit 1 (AMDGPU_SPM_LOSS_FULL) only that a share filled up while
 * data waited in the ring, which went on in the next buffer: not a loss.
 * A 1.0 kernel defines no bits, only zero and non-zero.
 */
static inline bool amdgpu_spm_lost_samples(uint32_t has_data_loss,
					   uint32_t version)
{
	if (version < AMDGPU_PROFILER_VERSION(1, 1))
		return has_data_loss != 0;
	return has_data_loss & AMDGPU_SPM_LOSS_SAMPLES;
}

#endif /* AMDGPU_SPM_UAPI_H */
