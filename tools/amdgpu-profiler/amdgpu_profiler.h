/* SPDX-License-Identifier: MIT */
/*
 * Copyright 2026 The amdgpu profiler series authors
 *
 * Reference userspace for DRM_IOCTL_AMDGPU_PROFILER: thin wrappers over the
 * ioctl in the style of libdrm_amdgpu, and helpers that walk the per-XCC
 * shares of an SPM destination buffer.
 *
 * Every function that talks to the kernel takes a file descriptor of an
 * amdgpu render node (or card node) and returns 0 or a negative errno.
 */
#ifndef AMDGPU_PROFILER_H
#define AMDGPU_PROFILER_H

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

#ifdef __cplusplus
extern "C" {
#endif

/* Size and alignment of a share and of its header (uAPI contract). */
#define AMDGPU_SPM_LINE_SIZE		32u
#define AMDGPU_SPM_HEADER_SIZE		32u
/* Largest buf_size the kernel accepts (see struct drm_amdgpu_spm_args). */
#define AMDGPU_SPM_MAX_BUF_SIZE		(256u << 20)
/* Upper bound of XCCs per partition this tool looks for (MI300X has 8). */
#define AMDGPU_SPM_MAX_XCC		16u

#define AMDGPU_PROFILER_VERSION_MAJOR(v)	((uint32_t)(v) >> 24)
#define AMDGPU_PROFILER_VERSION_MINOR(v)	((uint32_t)(v) & 0xffffffu)

/**
 * amdgpu_profiler_get_version() - probe for the profiler interface
 * @fd: DRM file descriptor
 * @version: on success, (major << 24) | minor
 *
 * Returns 0, or -EINVAL on kernels (or drivers) without the interface.
 */
int amdgpu_profiler_get_version(int fd, uint32_t *version);

/**
 * amdgpu_spm_acquire() - take the SPM of the fd's partition
 *
 * Returns 0, -EBUSY (another owner or a graphics VMID reservation),
 * -EPERM (amdgpu.spm_paranoid policy), -EOPNOTSUPP (no SPM on this device),
 * -EINVAL (primary node of a partitioned device), ...
 */
int amdgpu_spm_acquire(int fd);

/** amdgpu_spm_release() - give the SPM back; -EBUSY if not the owner. */
int amdgpu_spm_release(int fd);

/**
 * amdgpu_spm_set_dest_buf() - retire the current buffer, install @buf
 * @fd: DRM file descriptor that owns the SPM
 * @buf: new destination, 32-byte aligned, or NULL to stop copying
 * @size: size of @buf in bytes (0 when @buf is NULL)
 * @timeout_ms: in: how long to wait for the current buffer to fill;
 *	out: the time left. May be NULL for "do not wait". Updated also when
 *	the call returns -EINTR, so that calling again with the same
 *	variable waits only for the remainder.
 * @bytes_copied: out (may be NULL): data bytes in the retired buffer
 * @has_data_loss: out (may be NULL): whether the retired buffer lost data
 */
int amdgpu_spm_set_dest_buf(int fd, void *buf, uint32_t size,
			    uint32_t *timeout_ms, uint32_t *bytes_copied,
			    bool *has_data_loss);

/* ---- Pure helpers: no kernel involved, unit tested ---- */

/**
 * amdgpu_spm_share_size() - size of one XCC's share
 *
 * The buffer is split into @xcc_count shares of equal size, each rounded
 * down to a multiple of 32 bytes, share i starting at i * share size.
 * Returns 0 when @xcc_count is 0 or a share would be too small to hold a
 * header and one line of data (the kernel rejects such a buffer).
 */
uint32_t amdgpu_spm_share_size(uint32_t buf_size, uint32_t xcc_count);

/** amdgpu_spm_min_buf_size() - smallest buffer the kernel accepts */
uint32_t amdgpu_spm_min_buf_size(uint32_t xcc_count);

struct amdgpu_spm_share {
	uint32_t xcc;		/* index of the XCC within the partition */
	uint32_t offset;	/* of the header, from the buffer start */
	uint32_t data_offset;	/* of the first data byte */
	uint32_t bytes;		/* data bytes (header's bytes_copied) */
	bool data_loss;		/* header's has_data_loss != 0 */
};

/**
 * amdgpu_spm_parse_shares() - validate and decode a retired buffer
 * @buf: the retired buffer
 * @buf_size: its size as passed to SET_DEST_BUF
 * @xcc_count: number of shares to decode
 * @version: interface version (from GET_VER) the headers must carry
 * @out: @xcc_count entries
 *
 * Returns 0 when every share starts with a header carrying @version, zero
 * reserved words and a byte count that fits its share; -EINVAL otherwise.
 */
int amdgpu_spm_parse_shares(const void *buf, uint32_t buf_size,
			    uint32_t xcc_count, uint32_t version,
			    struct amdgpu_spm_share *out);

/**
 * amdgpu_spm_infer_xcc_count() - work out the number of shares
 * @buf, @buf_size, @version: as for amdgpu_spm_parse_shares()
 * @total_bytes, @any_loss: what SET_DEST_BUF reported for this buffer
 *
 * The kernel does not report the XCC count of a partition. Try every count
 * from 1 to AMDGPU_SPM_MAX_XCC: a count fits when all its share boundaries
 * hold valid headers whose byte counts add up to @total_bytes and whose loss
 * flags OR to @any_loss. Returns the count when exactly one fits, 0 when
 * none does, and -1 when several do (e.g. trailing XCCs copied nothing yet);
 * the caller then tries again with a later buffer.
 *
 * For the result to be trustworthy the candidate header slots must not hold
 * stale headers from an earlier use of the buffer: call
 * amdgpu_spm_clear_header_slots() before handing the buffer to the kernel.
 */
int amdgpu_spm_infer_xcc_count(const void *buf, uint32_t buf_size,
			       uint32_t version, uint32_t total_bytes,
			       bool any_loss);

/** amdgpu_spm_clear_header_slots() - zero every candidate header slot */
void amdgpu_spm_clear_header_slots(void *buf, uint32_t buf_size);

/** amdgpu_spm_strerror() - explain an errno from this interface */
const char *amdgpu_spm_strerror(int err, int op);

#ifdef __cplusplus
}
#endif

#endif /* AMDGPU_PROFILER_H */
