// SPDX-License-Identifier: MIT
/*
 * Copyright 2026 The amdgpu profiler series authors
 *
 * Not part of IGT: prints the numbers and the layout of the profiler uAPI,
 * built once against IGT's include/drm-uapi-experimental/amdgpu_profiler_drm.h
 * (-DEXPERIMENTAL) and once against the kernel's installed amdgpu_drm.h,
 * so that a check can compare the two outputs. Lines starting with "1.1"
 * exist only where the header defines the 1.1 share-header words.
 */
#include <stddef.h>
#include <stdio.h>

#ifdef EXPERIMENTAL
#include "amdgpu_profiler_drm.h"
#else
#include <drm/amdgpu_drm.h>
#endif

#define NUM(x)		printf("%s %llu\n", #x, (unsigned long long)(x))
#define OFF(s, f)	printf("offsetof(%s, %s) %zu\n", #s, #f, offsetof(struct s, f))
#define SIZE(s)		printf("sizeof(%s) %zu\n", #s, sizeof(struct s))

int main(void)
{
	NUM(DRM_AMDGPU_PROFILER);
	NUM(DRM_IOCTL_AMDGPU_PROFILER);
	NUM(AMDGPU_SPM_OP_ACQUIRE);
	NUM(AMDGPU_SPM_OP_RELEASE);
	NUM(AMDGPU_SPM_OP_SET_DEST_BUF);
	NUM(AMDGPU_PROFILER_OP_GET_VER);
	NUM(AMDGPU_PROFILER_OP_SPM);
	SIZE(drm_amdgpu_spm_args);
	OFF(drm_amdgpu_spm_args, dest_buf);
	OFF(drm_amdgpu_spm_args, buf_size);
	OFF(drm_amdgpu_spm_args, op);
	OFF(drm_amdgpu_spm_args, timeout);
	OFF(drm_amdgpu_spm_args, bytes_copied);
	OFF(drm_amdgpu_spm_args, has_data_loss);
	OFF(drm_amdgpu_spm_args, reserved);
	SIZE(drm_amdgpu_spm_buffer_header);
	OFF(drm_amdgpu_spm_buffer_header, version);
	OFF(drm_amdgpu_spm_buffer_header, bytes_copied);
	OFF(drm_amdgpu_spm_buffer_header, has_data_loss);
	OFF(drm_amdgpu_spm_buffer_header, reserved);
	SIZE(drm_amdgpu_profiler_args);
	OFF(drm_amdgpu_profiler_args, op);
	OFF(drm_amdgpu_profiler_args, pad);
	OFF(drm_amdgpu_profiler_args, data);
	OFF(drm_amdgpu_profiler_args, data.version);
	OFF(drm_amdgpu_profiler_args, data.spm);
#ifdef AMDGPU_SPM_HDR_XCC_INFO
	printf("1.1 ");
	OFF(drm_amdgpu_spm_buffer_header, info.xcc_info);
	printf("1.1 ");
	OFF(drm_amdgpu_spm_buffer_header, info.seq);
	printf("1.1 ");
	OFF(drm_amdgpu_spm_buffer_header, info.start_ns_lo);
	printf("1.1 ");
	OFF(drm_amdgpu_spm_buffer_header, info.start_ns_hi);
	printf("1.1 ");
	OFF(drm_amdgpu_spm_buffer_header, info.last_us);
	printf("1.1 ");
	NUM(AMDGPU_SPM_HDR_XCC_INFO(0xa5, 8, 7));
	printf("1.1 ");
	NUM(AMDGPU_SPM_HDR_XCC(0x00070805u));
	printf("1.1 ");
	NUM(AMDGPU_SPM_HDR_NUM_SHARES(0x00070805u));
	printf("1.1 ");
	NUM(AMDGPU_SPM_HDR_SHARE(0x00070805u));
	printf("1.1 ");
	NUM(AMDGPU_SPM_LOSS_SAMPLES);
	printf("1.1 ");
	NUM(AMDGPU_SPM_LOSS_FULL);
#endif
	return 0;
}
