// SPDX-License-Identifier: MIT
/*
 * Copyright 2026 The amdgpu profiler series authors
 *
 * Compiled, not run (make header-check): the profiler uAPI header and the
 * library's header must compile without a warning as C11 and as C++17
 * with -Wpedantic, as ROCr and other C++ users include DRM headers. An
 * anonymous struct (a GNU extension in C++) in struct
 * drm_amdgpu_spm_buffer_header made g++ -Wpedantic warn; the 1.1 words are
 * a named member, and the layout stays the frozen one.
 */
#include <stddef.h>
#include <string.h>

#include "amdgpu_drm.h"		/* -I<uAPI>/drm: not a system header here */
#include "amdgpu_profiler.h"

#ifdef __cplusplus
#define LAYOUT(cond, what) static_assert(cond, what)
#else
#define LAYOUT(cond, what) _Static_assert(cond, what)
#endif

LAYOUT(sizeof(struct drm_amdgpu_spm_args) == 64, "spm args: 64 bytes");
LAYOUT(offsetof(struct drm_amdgpu_spm_args, reserved) == 28, "spm args reserved");
LAYOUT(sizeof(struct drm_amdgpu_spm_buffer_header) == 32, "share header: 32 bytes");
LAYOUT(offsetof(struct drm_amdgpu_spm_buffer_header, reserved) == 12,
       "share header reserved");
LAYOUT(offsetof(struct drm_amdgpu_spm_buffer_header, info.xcc_info) == 12 &&
       offsetof(struct drm_amdgpu_spm_buffer_header, info.seq) == 16 &&
       offsetof(struct drm_amdgpu_spm_buffer_header, info.start_ns_lo) == 20 &&
       offsetof(struct drm_amdgpu_spm_buffer_header, info.start_ns_hi) == 24 &&
       offsetof(struct drm_amdgpu_spm_buffer_header, info.last_us) == 28,
       "1.1 words overlay reserved[5]");
LAYOUT(sizeof(struct drm_amdgpu_profiler_args) == 72, "profiler args: 72 bytes");
LAYOUT(offsetof(struct drm_amdgpu_profiler_args, data) == 8, "profiler args data");

uint32_t headers_use(const void *buf);

/* Uses the names, as a C++ reader of a share would. */
uint32_t headers_use(const void *buf)
{
	struct drm_amdgpu_spm_buffer_header h;
	struct amdgpu_prof_spm_share s;

	memcpy(&h, buf, sizeof(h));
	memset(&s, 0, sizeof(s));
	return AMDGPU_SPM_HDR_XCC(h.info.xcc_info) + h.info.seq + s.bytes +
	       (h.has_data_loss & AMDGPU_SPM_LOSS_SAMPLES) +
	       amdgpu_prof_spm_share_size(AMDGPU_PROF_SPM_MAX_BUF_SIZE, 1);
}
