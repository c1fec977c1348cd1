// SPDX-License-Identifier: MIT
/*
 * Copyright 2026 The amdgpu profiler series authors
 *
 * libamdgpu_profiler: DRM_IOCTL_AMDGPU_PROFILER on an amdgpu_device_handle.
 * The ioctls themselves are the hidden fd-level calls of
 * amdgpu_profiler_fd.c, which the tools share.
 */
#include <errno.h>

#include "amdgpu_profiler.h"
#include "amdgpu_spm_uapi.h"

/* Everything else in the library is hidden (-fvisibility=hidden). */
#define amdgpu_public __attribute__((visibility("default")))

amdgpu_public
int amdgpu_prof_version(amdgpu_device_handle dev, uint32_t *version)
{
	if (!dev || !version)
		return -EINVAL;
	return amdgpu_profiler_fd_version(amdgpu_device_get_fd(dev), version);
}

amdgpu_public
int amdgpu_prof_spm_acquire(amdgpu_device_handle dev)
{
	if (!dev)
		return -EINVAL;
	return amdgpu_spm_fd_acquire(amdgpu_device_get_fd(dev));
}

amdgpu_public
int amdgpu_prof_spm_release(amdgpu_device_handle dev)
{
	if (!dev)
		return -EINVAL;
	return amdgpu_spm_fd_release(amdgpu_device_get_fd(dev));
}

amdgpu_public
int amdgpu_prof_spm_setdestbuff(amdgpu_device_handle dev,
				    uint32_t size_in_bytes, uint32_t *timeout,
				    uint32_t *size_copied, void *dest_mem_addr,
				    bool *is_spm_data_loss)
{
	uint32_t left = timeout ? *timeout : 0, loss = 0;
	int ret;

	if (!dev)
		return -EINVAL;
	/*
	 * Like drmIoctl(), restart after a signal; the kernel wrote the time
	 * that was left, so the restarted call waits only for the remainder.
	 */
	do {
		ret = amdgpu_spm_fd_set_dest_buf(amdgpu_device_get_fd(dev),
						 dest_mem_addr, size_in_bytes,
						 &left, size_copied, &loss);
	} while (ret == -EINTR || ret == -EAGAIN);
	if (timeout)
		*timeout = left;
	/*
	 * Lost samples only: a share that filled up (AMDGPU_SPM_LOSS_FULL)
	 * lost nothing. A 1.0 kernel of this series writes 1 for any loss.
	 */
	if (!ret && is_spm_data_loss)
		*is_spm_data_loss = loss & AMDGPU_SPM_LOSS_SAMPLES;
	return ret;
}
