/* SPDX-License-Identifier: MIT */
/*
 * Copyright 2026 The amdgpu profiler series authors
 *
 * Internal: the seam between the hsakmt SPM provider (hsakmt_spm.c) and
 * the system, so that its unit test can put a fake sysfs tree, a fake
 * profiler kernel and a fake libhsakmt behind it. Not installed.
 */
#ifndef HSAKMT_SPM_H
#define HSAKMT_SPM_H

#include <stdio.h>

/*
 * What the provider needs from outside. The defaults are libc's open(),
 * close() and ioctl() and the next definition of an hsaKmt* symbol after
 * the provider's own (dlsym(RTLD_NEXT), else the libhsakmt.so.1 already
 * loaded); @err is stderr.
 *
 * @open, @close, @ioctl: as libc's (-1 and errno on failure).
 * @real: the real libhsakmt's function @name, or NULL when there is none.
 * @err: where messages go.
 */
struct hsakmt_spm_sys {
	int (*open)(const char *path, int flags);
	int (*close)(int fd);
	int (*ioctl)(int fd, unsigned long req, void *arg);
	void *(*real)(const char *name);
	FILE *err;
};

extern struct hsakmt_spm_sys hsakmt_spm_sys;

/*
 * Tests only: close every file the provider opened and forget every node,
 * so that the next call resolves its node again under the current
 * environment (HSAKMT_SPM_ROOT, HSAKMT_SPM_DEBUG, HSAKMT_SPM_DISABLE).
 */
void hsakmt_spm_reset(void);

#endif /* HSAKMT_SPM_H */
