// SPDX-License-Identifier: MIT
/*
 * Copyright 2026 The amdgpu profiler series authors
 *
 * Why ACQUIRE was refused, from the module parameter (amdgpu_spm_params.h).
 * The only one that refuses is amdgpu.spm_paranoid: -EPERM without
 * CAP_PERFMON or CAP_SYS_ADMIN while it is above 0 (its default is 1); see
 * Documentation/gpu/amdgpu/profiler.rst, Privilege. SPM writes through a
 * VMID of its own whose page table maps only the rings, so no parameter
 * has to allow it on any GPU (Security there).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "amdgpu_spm_params.h"

#define PARANOID	"spm_paranoid"

/* The value of parameter @name, newline stripped: 0 or -errno. */
static int read_param(const char *root, const char *name, char *path,
		      size_t path_size, char *val, size_t size)
{
	ssize_t n;
	int fd;

	snprintf(path, path_size, "%s" AMDGPU_SPM_PARAMS_DIR "/%s", root, name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, val, size - 1);
	if (n < 0) {
		int e = errno;

		close(fd);
		return -e;
	}
	close(fd);
	val[n] = '\0';
	val[strcspn(val, "\n")] = '\0';
	return 0;
}

struct out {
	char *buf;
	size_t size, len;
};

static void add(struct out *o, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void add(struct out *o, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (o->len >= o->size)
		return;
	va_start(ap, fmt);
	n = vsnprintf(o->buf + o->len, o->size - o->len, fmt, ap);
	va_end(ap);
	if (n > 0)
		o->len += (size_t)n < o->size - o->len ? (size_t)n :
			  o->size - o->len - 1;
}

const char *amdgpu_spm_explain_refusal(int err, const char *root, char *buf,
				       size_t size)
{
	struct out o = { buf, size, 0 };
	char path[4096], val[32], *end;
	long paranoid;
	int r;

	if (!size)
		return buf;
	buf[0] = '\0';
	if (err < 0)
		err = -err;
	if (!root)
		root = "";

	if (err != EPERM)
		return buf;

	r = read_param(root, PARANOID, path, sizeof(path), val, sizeof(val));
	paranoid = r ? 0 : strtol(val, &end, 10);
	if (r || !*val || *end)
		add(&o, "The refusal comes from amdgpu.spm_paranoid: while it is 1 (the default), ACQUIRE needs CAP_PERFMON or CAP_SYS_ADMIN (%s: %s).",
		    path, r ? strerror(-r) : "unexpected value");
	else if (paranoid > 0)
		add(&o, "amdgpu.spm_paranoid is %ld (%s): only a process with CAP_PERFMON or CAP_SYS_ADMIN may acquire SPM, and this one has neither; run it with one of them, or an administrator lets every user of the render node profile with 'echo 0 > %s' as root.",
		    paranoid, path, path);
	else
		add(&o, "amdgpu.spm_paranoid is %ld now (%s): it was lowered after the refusal; try again.",
		    paranoid, path);
	return buf;
}
