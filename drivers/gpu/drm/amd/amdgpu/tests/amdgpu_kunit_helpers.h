/* SPDX-License-Identifier: MIT */
/*
 * Copyright 2026 The amdgpu profiler series authors
 */

#ifndef __AMDGPU_KUNIT_HELPERS_H__
#define __AMDGPU_KUNIT_HELPERS_H__

#include <linux/types.h>

struct amdgpu_device;
struct drm_file;
struct kunit;

struct amdgpu_device *amdgpu_kunit_helper_alloc_device(struct kunit *test);
struct drm_file *amdgpu_kunit_helper_alloc_file(struct kunit *test,
						struct amdgpu_device *adev,
						u32 xcp_id);

#endif
