// SPDX-License-Identifier: MIT
/*
 * Copyright 2026 The amdgpu profiler series authors
 *
 * A program built the way a user of the installed library builds one:
 *   cc consumer.c $(pkg-config --cflags --libs libamdgpu_profiler)
 * It probes every amdgpu render node through libdrm_amdgpu and the
 * library, and says "no amdgpu device" when there is none.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#include <amdgpu.h>
#include <amdgpu_profiler.h>

int main(void)
{
	uint32_t version = 0, major, minor;
	unsigned int found = 0, minor_node;

	/* The calls check their handle without a device. */
	if (amdgpu_prof_version(NULL, &version) != -EINVAL ||
	    amdgpu_prof_spm_acquire(NULL) != -EINVAL ||
	    amdgpu_prof_spm_release(NULL) != -EINVAL ||
	    amdgpu_prof_spm_setdestbuff(NULL, 0, NULL, NULL, NULL, NULL) != -EINVAL) {
		fprintf(stderr, "consumer: a NULL device handle was not refused\n");
		return 1;
	}
	if (amdgpu_prof_spm_share_size(4096, 2) != 2048) {
		fprintf(stderr, "consumer: amdgpu_prof_spm_share_size() is wrong\n");
		return 1;
	}

	for (minor_node = 128; minor_node < 192; minor_node++) {
		amdgpu_device_handle dev;
		char path[32];
		int fd, ret;

		snprintf(path, sizeof(path), "/dev/dri/renderD%u", minor_node);
		fd = open(path, O_RDWR | O_CLOEXEC);
		if (fd < 0)
			continue;
		if (amdgpu_device_initialize(fd, &major, &minor, &dev)) {
			close(fd);	/* not amdgpu */
			continue;
		}
		found++;
		ret = amdgpu_prof_version(dev, &version);
		if (ret)
			printf("consumer: %s: no profiler interface: %s\n", path,
			       amdgpu_prof_spm_strerror(ret, AMDGPU_PROF_SPM_CALL_VERSION));
		else
			printf("consumer: %s: profiler interface %u.%u\n", path,
			       AMDGPU_PROFILER_VERSION_MAJOR(version),
			       AMDGPU_PROFILER_VERSION_MINOR(version));
		amdgpu_device_deinitialize(dev);
		close(fd);
	}
	if (!found)
		printf("consumer: no amdgpu device\n");
	return 0;
}
