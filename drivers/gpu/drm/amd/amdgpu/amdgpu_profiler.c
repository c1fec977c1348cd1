// SPDX-License-Identifier: MIT
/*
 * Copyright 2026 The amdgpu profiler series authors
 */

#include <linux/build_bug.h>
#include <linux/nospec.h>
#include <linux/string.h>

#include <drm/amdgpu_drm.h>
#include <drm/drm_file.h>
#include <drm/drm_print.h>

#include "amdgpu.h"
#include "amdgpu_profiler.h"
#include "amdgpu_spm.h"

/*
 * The layouts are frozen uAPI, those of the posted "[PATCH 01/12]
 * drm/amdgpu: add profiler UAPI definitions": a change here breaks every
 * profiler built against that header.
 */
static_assert(sizeof(struct drm_amdgpu_spm_args) == 64);
static_assert(sizeof(struct drm_amdgpu_spm_buffer_header) == 32);
static_assert(sizeof(struct drm_amdgpu_profiler_args) == 72);
static_assert(offsetof(struct drm_amdgpu_profiler_args, data) == 8);
static_assert(offsetof(struct drm_amdgpu_spm_args, reserved) == 28);

typedef int (*amdgpu_profiler_op_t)(struct amdgpu_device *adev,
				    struct drm_file *filp,
				    struct drm_amdgpu_profiler_args *args);

static int amdgpu_profiler_get_ver(struct amdgpu_device *adev,
				   struct drm_file *filp,
				   struct drm_amdgpu_profiler_args *args)
{
	if (memchr_inv(&args->data, 0, sizeof(args->data))) {
		drm_dbg(adev_to_drm(adev), "profiler: GET_VER input not zero\n");
		return -EINVAL;
	}

	args->data.version = AMDGPU_PROFILER_VERSION;
	return 0;
}

static int amdgpu_profiler_spm(struct amdgpu_device *adev,
			       struct drm_file *filp,
			       struct drm_amdgpu_profiler_args *args)
{
	return amdgpu_spm_ioctl(adev, filp, &args->data.spm);
}

static const amdgpu_profiler_op_t amdgpu_profiler_ops[] = {
	[AMDGPU_PROFILER_OP_GET_VER] = amdgpu_profiler_get_ver,
	[AMDGPU_PROFILER_OP_SPM] = amdgpu_profiler_spm,
};

/**
 * amdgpu_profiler_ioctl - DRM_IOCTL_AMDGPU_PROFILER handler
 * @dev: DRM device
 * @data: &struct drm_amdgpu_profiler_args, copied in by drm_ioctl()
 * @filp: file the ioctl was issued on
 *
 * Checks the fields common to all operations, then hands over to the
 * handler of &drm_amdgpu_profiler_args.op. drm_ioctl() copies @data back to
 * userspace even when this fails, so no handler writes an output field
 * before it knows it will succeed.
 *
 * Context: process context; may sleep.
 * Return: 0 on success, negative errno on failure: -EINVAL for malformed
 * input, else as documented per operation in the uAPI header.
 */
int amdgpu_profiler_ioctl(struct drm_device *dev, void *data,
			  struct drm_file *filp)
{
	struct drm_amdgpu_profiler_args *args = data;
	const u32 nr_ops = ARRAY_SIZE(amdgpu_profiler_ops);
	amdgpu_profiler_op_t handler = NULL;
	u32 op = args->op;

	if (args->pad) {
		drm_dbg(dev, "profiler: pad not zero\n");
		return -EINVAL;
	}
	if (op < nr_ops)
		handler = amdgpu_profiler_ops[array_index_nospec(op, nr_ops)];
	if (!handler) {
		drm_dbg(dev, "profiler: unknown op %u\n", op);
		return -EINVAL;
	}

	return handler(drm_to_adev(dev), filp, args);
}
