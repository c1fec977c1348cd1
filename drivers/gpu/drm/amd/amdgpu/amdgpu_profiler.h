/* SPDX-License-Identifier: MIT */
/*
 * Copyright 2026 The amdgpu profiler series authors
 */

#ifndef __AMDGPU_PROFILER_H__
#define __AMDGPU_PROFILER_H__

#include <linux/types.h>

struct drm_device;
struct drm_file;

/*
 * Version of the profiler interface, as reported by
 * AMDGPU_PROFILER_OP_GET_VER and in every SPM buffer header. The major
 * number changes when an existing behaviour changes incompatibly, the minor
 * number when something is added that userspace may probe for.
 */
#define AMDGPU_PROFILER_VERSION_MAJOR	1
#define AMDGPU_PROFILER_VERSION_MINOR	1
#define AMDGPU_PROFILER_VERSION \
	((AMDGPU_PROFILER_VERSION_MAJOR << 24) | AMDGPU_PROFILER_VERSION_MINOR)

int amdgpu_profiler_ioctl(struct drm_device *dev, void *data,
			  struct drm_file *filp);

#endif
