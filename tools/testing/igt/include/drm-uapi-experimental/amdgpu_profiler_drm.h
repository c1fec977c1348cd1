/* SPDX-License-Identifier: MIT */
/*
 * Copyright 2026 The amdgpu profiler series authors
 */
#ifndef _AMDGPU_PROFILER_DRM_H_
#define _AMDGPU_PROFILER_DRM_H_

#include "drm.h"

#if defined(__cplusplus)
extern "C" {
#endif

/*
 * The amdgpu profiler uAPI (DRM_IOCTL_AMDGPU_PROFILER, interface 1.1) is
 * not in the kernel's amdgpu_drm.h yet, so it is not in IGT's
 * include/drm-uapi/ copy either. Its declarations are here exactly as the
 * series adds them to include/uapi/drm/amdgpu_drm.h (the kernel-doc there
 * is the contract). Remove this header when include/drm-uapi/ is synced
 * with a kernel that has them.
 */

#define DRM_AMDGPU_PROFILER		0x1C

#define DRM_IOCTL_AMDGPU_PROFILER	\
	DRM_IOWR(DRM_COMMAND_BASE + DRM_AMDGPU_PROFILER, struct drm_amdgpu_profiler_args)

enum drm_amdgpu_spm_op {
	AMDGPU_SPM_OP_ACQUIRE = 1,
	AMDGPU_SPM_OP_RELEASE,
	AMDGPU_SPM_OP_SET_DEST_BUF
};

struct drm_amdgpu_spm_args {
	__u64 dest_buf;
	__u32 buf_size;
	__u32 op;
	__u32 timeout;
	__u32 bytes_copied;
	__u32 has_data_loss;
	__u32 reserved[9];
};

struct drm_amdgpu_spm_header_info {
	__u32 xcc_info;
	__u32 seq;
	__u32 start_ns_lo;
	__u32 start_ns_hi;
	__u32 last_us;
};

struct drm_amdgpu_spm_buffer_header {
	__u32 version;
	__u32 bytes_copied;
	__u32 has_data_loss;
	union {
		__u32 reserved[5];
		struct drm_amdgpu_spm_header_info info;
	};
};

/* &drm_amdgpu_spm_header_info.xcc_info (interface 1.1) */
#define AMDGPU_SPM_HDR_XCC(info)		((info) & 0xff)
#define AMDGPU_SPM_HDR_NUM_SHARES(info)		(((info) >> 8) & 0xff)
#define AMDGPU_SPM_HDR_SHARE(info)		(((info) >> 16) & 0xff)
#define AMDGPU_SPM_HDR_XCC_INFO(xcc, num, share) \
	((xcc) | (num) << 8 | (share) << 16)

/* Bits of the has_data_loss words (interface 1.1) */
#define AMDGPU_SPM_LOSS_SAMPLES			(1u << 0)
#define AMDGPU_SPM_LOSS_FULL			(1u << 1)

/* Profiler operations, &drm_amdgpu_profiler_args.op */
#define AMDGPU_PROFILER_OP_GET_VER	1
#define AMDGPU_PROFILER_OP_SPM		2

struct drm_amdgpu_profiler_args {
	__u32 op;
	__u32 pad;
	union {
		__u32 version;
		struct drm_amdgpu_spm_args spm;
	} data;
};

#if defined(__cplusplus)
}
#endif

#endif /* _AMDGPU_PROFILER_DRM_H_ */
