/* SPDX-License-Identifier: MIT */
/*
 * Copyright 2026 The amdgpu profiler series authors
 *
 * libamdgpu_profiler: the amdgpu profiler interface (DRM_IOCTL_AMDGPU_PROFILER)
 * on a libdrm_amdgpu device handle.
 *
 * The four calls below have the signatures of the libdrm_amdgpu API posted
 * on amd-gfx in 2026 ("amdgpu: Add Streaming Performance Monitor (SPM)
 * data collection interface"), under this library's own prefix: the
 * posted names (amdgpu_spm_acquire() ...) belong to libdrm_amdgpu, which
 * may carry them one day (libdrm/ beside this file proposes them), and two
 * libraries exporting one name leave it to the load order which runs. A
 * program written against the posting ports by renaming. They act on the
 * DRM file behind
 * amdgpu_device_get_fd(dev): the SPM of the partition that file belongs to
 * (on a partitioned MI300 open the partition's render node), owned by that
 * file. Note that amdgpu_device_initialize() returns the existing handle,
 * and so the first file descriptor, when the same device was initialized
 * before in the process.
 *
 * Each returns 0 or a negative errno.
 *
 * The share helpers after them are not part of the posted API: they decode
 * a destination buffer that the kernel has retired, and need no device.
 */
#ifndef AMDGPU_PROFILER_H
#define AMDGPU_PROFILER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <amdgpu.h>

#ifdef __cplusplus
extern "C" {
#endif

#ifndef AMDGPU_PROFILER_VERSION_MAJOR
#define AMDGPU_PROFILER_VERSION_MAJOR(v)	((uint32_t)(v) >> 24)
#define AMDGPU_PROFILER_VERSION_MINOR(v)	((uint32_t)(v) & 0xffffffu)
#endif

/**
 * amdgpu_prof_version() - probe for the profiler interface
 * @dev: device handle
 * @version: on success, the interface version, (major << 24) | minor
 *
 * Returns 0; -EINVAL when @dev or @version is NULL or the kernel has no
 * profiler interface.
 */
int amdgpu_prof_version(amdgpu_device_handle dev, uint32_t *version);

/**
 * amdgpu_prof_spm_acquire() - take the Stream Performance Monitor of the partition
 * @dev: device handle
 *
 * Returns 0, -EBUSY (another file owns it, or a graphics client reserved a
 * VMID for SPM), -EPERM (the caller lacks CAP_PERFMON: see the
 * amdgpu.spm_paranoid module parameter), -ENODEV (the device is gone, or
 * the driver could not set up the VMID that SPM writes through when it
 * loaded), -EOPNOTSUPP (no SPM on this device), -EINVAL (primary node of a
 * partitioned device, or no profiler interface).
 */
int amdgpu_prof_spm_acquire(amdgpu_device_handle dev);

/**
 * amdgpu_prof_spm_release() - give the SPM back
 * @dev: device handle
 *
 * Returns 0, -EBUSY when another file owns it, -EINVAL when nobody does.
 */
int amdgpu_prof_spm_release(amdgpu_device_handle dev);

/**
 * amdgpu_prof_spm_setdestbuff() - retire the current buffer, install the next
 * @dev: device handle of the owner
 * @size_in_bytes: size of @dest_mem_addr; ignored when it is NULL
 * @timeout: in: milliseconds to wait for the current buffer to fill first
 *	(0: do not wait; NULL: same as 0); out: the time left, rounded down,
 *	as the kernel writes it. hsaKmtSPMSetDestBuffer() over KFD hands the
 *	input back instead, so a loop ported from it that waits the same time
 *	on every call must set *@timeout before every call.
 * @size_copied: out (may be NULL): data bytes in the retired buffer, summed
 *	over its shares (headers not counted)
 * @dest_mem_addr: the next buffer, 32-byte aligned, or NULL to stop copying
 * @is_spm_data_loss: out (may be NULL): whether samples were lost while the
 *	retired buffer was current: bit 0 (%AMDGPU_SPM_LOSS_SAMPLES) of the
 *	kernel's has_data_loss word. A share that only filled up
 *	(%AMDGPU_SPM_LOSS_FULL) lost nothing, its rest went on in the next
 *	buffer, and does not count; amdgpu_prof_spm_parse_shares() tells
 *	those apart per share. (A 1.0 kernel of this series writes 1 for any
 *	loss.)
 *
 * The kernel splits the buffer into one share per XCC of the partition,
 * each a multiple of 32 bytes led by a 32-byte header; the headers of a
 * buffer are final once it is retired. The outputs are written on success;
 * @timeout is also written when the call fails, with what the kernel left
 * in it (the input unless the wait had begun).
 */
int amdgpu_prof_spm_setdestbuff(amdgpu_device_handle dev,
				    uint32_t size_in_bytes,
				    uint32_t *timeout,
				    uint32_t *size_copied,
				    void *dest_mem_addr,
				    bool *is_spm_data_loss);

/* ---- Share helpers: decode a retired buffer; no device involved ---- */

/* Size and alignment of a share and of its header (uAPI contract). */
#define AMDGPU_PROF_SPM_LINE_SIZE		32u
#define AMDGPU_PROF_SPM_HEADER_SIZE		32u
/* Largest buf_size the kernel accepts. */
#define AMDGPU_PROF_SPM_MAX_BUF_SIZE		(256u << 20)
/* Most shares (XCCs per partition) the helpers look for; MI300X has 8. */
#define AMDGPU_PROF_SPM_MAX_XCC		16u

/**
 * amdgpu_prof_spm_share_size() - size of each share of a buffer
 *
 * @buf_size / @num_shares rounded down to 32 bytes; 0 when @num_shares is
 * 0 or a share could not hold a header and one 32-byte line (the kernel
 * refuses such a buffer).
 */
uint32_t amdgpu_prof_spm_share_size(uint32_t buf_size, uint32_t num_shares);

/** amdgpu_prof_spm_min_buf_size() - smallest buffer the kernel accepts */
uint32_t amdgpu_prof_spm_min_buf_size(uint32_t num_shares);

/**
 * struct amdgpu_prof_spm_share - one decoded share of a retired buffer
 * @index: position of the share in the buffer
 * @xcc: logical XCC id of the share; from the header on interface 1.1 and
 *	later, else assumed to be @index (shares are in ascending XCC order)
 * @num_shares: shares in the buffer
 * @offset: of the header, from the buffer start
 * @data_offset: of the first data byte
 * @bytes: data bytes (the header's bytes_copied)
 * @data_loss: samples were lost: the header's has_data_loss says
 *	AMDGPU_SPM_LOSS_SAMPLES (1.1), or is non-zero (1.0)
 * @has_info: the header carries the 1.1 words below (else they are 0)
 * @full: (1.1) the share filled up while data waited in the ring, which
 *	went on in the next buffer (AMDGPU_SPM_LOSS_FULL); not a loss
 * @seq: per-XCC number of the buffer since ACQUIRE, from 1; a missing
 *	number is a lost buffer
 * @start_ns: CLOCK_MONOTONIC time in ns when the share started
 * @last_us: microseconds from @start_ns to the last copy into the share;
 *	0 if nothing was copied; 0xffffffff means "at least that"
 */
struct amdgpu_prof_spm_share {
	uint32_t index;
	uint32_t xcc;
	uint32_t num_shares;
	uint32_t offset;
	uint32_t data_offset;
	uint32_t bytes;
	bool data_loss;
	bool has_info;
	bool full;
	uint32_t seq;
	uint64_t start_ns;
	uint32_t last_us;
};

/**
 * amdgpu_prof_spm_parse_shares() - validate and decode a retired buffer
 * @buf: the retired buffer
 * @buf_size: its size as passed to amdgpu_prof_spm_setdestbuff()
 * @num_shares: number of shares to decode
 * @version: the interface version (amdgpu_prof_version()) that every
 *	header must carry
 * @out: @num_shares entries, or NULL to validate only
 *
 * Returns 0 when every share starts with a valid header: @version, a byte
 * count that fits the share, and on 1.0 zero reserved words, on 1.1 and
 * later a share index and share count that match. -EINVAL otherwise.
 */
int amdgpu_prof_spm_parse_shares(const void *buf, uint32_t buf_size,
			    uint32_t num_shares, uint32_t version,
			    struct amdgpu_prof_spm_share *out);

/**
 * amdgpu_prof_spm_infer_xcc_count() - number of shares of a retired buffer
 * @buf, @buf_size, @version: as for amdgpu_prof_spm_parse_shares()
 * @total_bytes, @any_loss: what amdgpu_prof_spm_setdestbuff() reported for it
 *
 * On interface 1.1 and later the headers say it. A 1.0 kernel does not:
 * then every count from 1 to AMDGPU_PROF_SPM_MAX_XCC is tried, and a count fits
 * when all its share boundaries hold valid headers whose byte counts add up
 * to @total_bytes and whose loss flags OR to @any_loss. Returns the count
 * when exactly one fits, 0 when none does, -1 when several do (trailing
 * XCCs copied nothing yet: try a later buffer). For a 1.0 answer to be
 * trustworthy, call amdgpu_prof_spm_clear_header_slots() on the buffer before
 * handing it to the kernel.
 */
int amdgpu_prof_spm_infer_xcc_count(const void *buf, uint32_t buf_size,
			       uint32_t version, uint32_t total_bytes,
			       bool any_loss);

/** amdgpu_prof_spm_clear_header_slots() - zero every candidate header slot */
void amdgpu_prof_spm_clear_header_slots(void *buf, uint32_t buf_size);

/* Which call an errno came from, for amdgpu_prof_spm_strerror(). */
enum amdgpu_prof_spm_call {
	AMDGPU_PROF_SPM_CALL_VERSION,
	AMDGPU_PROF_SPM_CALL_ACQUIRE,
	AMDGPU_PROF_SPM_CALL_RELEASE,
	AMDGPU_PROF_SPM_CALL_SETDESTBUFF,
};

/** amdgpu_prof_spm_strerror() - explain an errno (either sign) of @call */
const char *amdgpu_prof_spm_strerror(int err, enum amdgpu_prof_spm_call call);

#ifdef __cplusplus
}
#endif

#endif /* AMDGPU_PROFILER_H */
