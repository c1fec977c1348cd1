// SPDX-License-Identifier: MIT
/*
 * Copyright 2026 The amdgpu profiler series authors
 */

#include <kunit/test.h>

#include <drm/drm_drv.h>
#include <drm/drm_file.h>
#include <drm/drm_kunit_helpers.h>

#include "amdgpu.h"
#include "tests/amdgpu_kunit_helpers.h"

/**
 * amdgpu_kunit_helper_alloc_device - allocate a fake &amdgpu_device
 * @test: the test that owns the device
 *
 * Allocates a &amdgpu_device around a mock DRM device with a render node,
 * the way drm_kunit_helper_alloc_drm_device() does for other drivers. No
 * IP block is initialised and no hardware is touched: the device has no
 * XCP manager and no SPM backend, which is what a test of the ioctl
 * dispatcher wants. Tests that need more fill in the fields they use.
 *
 * The device and its parent are freed when @test ends. Allocation failures
 * fail the test through KUNIT_ASSERT.
 *
 * Return: the new device.
 */
struct amdgpu_device *amdgpu_kunit_helper_alloc_device(struct kunit *test)
{
	struct amdgpu_device *adev;
	struct drm_device *drm;
	struct device *dev;

	dev = drm_kunit_helper_alloc_device(test);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, dev);

	/*
	 * Not drm_kunit_helper_alloc_drm_device(): in 6.12 that macro casts
	 * the returned &drm_device to the container type, which is only right
	 * when the drm_device is the container's first member, and
	 * &amdgpu_device.ddev is not.
	 */
	drm = __drm_kunit_helper_alloc_drm_device(test, dev,
						  sizeof(struct amdgpu_device),
						  offsetof(struct amdgpu_device, ddev),
						  DRIVER_RENDER);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, drm);
	adev = drm_to_adev(drm);
	adev->dev = dev;

	return adev;
}

/**
 * amdgpu_kunit_helper_alloc_file - allocate a fake open file of a device
 * @test: the test that owns the file
 * @adev: the device, from amdgpu_kunit_helper_alloc_device()
 * @xcp_id: partition the file belongs to (&amdgpu_fpriv.xcp_id)
 *
 * Returns a &drm_file on the device's render node whose driver_priv is a
 * zeroed &amdgpu_fpriv with @xcp_id set, as amdgpu_driver_open_kms() would
 * leave it for the fields the profiler uses. Its VM is not initialised.
 * Both are freed when @test ends.
 *
 * Return: the new file.
 */
struct drm_file *amdgpu_kunit_helper_alloc_file(struct kunit *test,
						struct amdgpu_device *adev,
						u32 xcp_id)
{
	struct amdgpu_fpriv *fpriv;
	struct drm_file *file;

	file = kunit_kzalloc(test, sizeof(*file), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, file);
	fpriv = kunit_kzalloc(test, sizeof(*fpriv), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, fpriv);

	fpriv->xcp_id = xcp_id;
	file->minor = adev_to_drm(adev)->render;
	file->driver_priv = fpriv;

	return file;
}
