// SPDX-License-Identifier: MIT
/*
 * Copyright 2026 The amdgpu profiler series authors
 *
 * fd-level calls of DRM_IOCTL_AMDGPU_PROFILER, for the tools and the hsakmt
 * provider, which own their file descriptor. Internal: hidden in the
 * shared library (see amdgpu_spm_uapi.h).
 */
#include <errno.h>
#include <string.h>
#include <sys/ioctl.h>

#include "amdgpu_spm_uapi.h"

static int profiler_ioctl(int fd, struct drm_amdgpu_profiler_args *args)
{
	if (ioctl(fd, DRM_IOCTL_AMDGPU_PROFILER, args) == 0)
		return 0;
	return -errno;
}

int amdgpu_profiler_fd_version(int fd, uint32_t *version)
{
	struct drm_amdgpu_profiler_args args;
	int ret;

	memset(&args, 0, sizeof(args));
	args.op = AMDGPU_PROFILER_OP_GET_VER;
	ret = profiler_ioctl(fd, &args);
	if (ret == 0 && version)
		*version = args.data.version;
	return ret;
}

static int spm_simple_op(int fd, uint32_t op)
{
	struct drm_amdgpu_profiler_args args;
	int ret;

	memset(&args, 0, sizeof(args));
	args.op = AMDGPU_PROFILER_OP_SPM;
	args.data.spm.op = op;
	/* Nothing waits in ACQUIRE or RELEASE: restarting is harmless. */
	do {
		ret = profiler_ioctl(fd, &args);
	} while (ret == -EINTR || ret == -EAGAIN);
	return ret;
}

int amdgpu_spm_fd_acquire(int fd)
{
	return spm_simple_op(fd, AMDGPU_SPM_OP_ACQUIRE);
}

int amdgpu_spm_fd_release(int fd)
{
	return spm_simple_op(fd, AMDGPU_SPM_OP_RELEASE);
}

int amdgpu_spm_fd_set_dest_buf(int fd, void *dest, uint32_t size,
			       uint32_t *timeout, uint32_t *bytes_copied,
			       uint32_t *has_data_loss)
{
	struct drm_amdgpu_profiler_args args;
	int ret;

	memset(&args, 0, sizeof(args));
	args.op = AMDGPU_PROFILER_OP_SPM;
	args.data.spm.op = AMDGPU_SPM_OP_SET_DEST_BUF;
	args.data.spm.dest_buf = (uintptr_t)dest;
	/* No buffer, no size: the kernel refuses one without the other. */
	args.data.spm.buf_size = dest ? size : 0;
	args.data.spm.timeout = timeout ? *timeout : 0;

	ret = profiler_ioctl(fd, &args);
	/*
	 * The kernel writes the time left back on success and when a signal
	 * interrupted the wait; hand it on in both cases so that the caller
	 * can restart with the remainder.
	 */
	if ((ret == 0 || ret == -EINTR) && timeout)
		*timeout = args.data.spm.timeout;
	if (ret)
		return ret;
	if (bytes_copied)
		*bytes_copied = args.data.spm.bytes_copied;
	if (has_data_loss)
		*has_data_loss = args.data.spm.has_data_loss;
	return 0;
}
