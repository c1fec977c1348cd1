// SPDX-License-Identifier: MIT
/*
 * Copyright 2026 The amdgpu profiler series authors
 *
 * Why ACQUIRE was refused, from the module parameters (amdgpu_spm_params.h).
 * The kernel checks amdgpu.spm_paranoid first (-EPERM without CAP_PERFMON
 * or CAP_SYS_ADMIN while it is above 0), then amdgpu.spm_unsafe_vmid0
 * (-EACCES while it is off, on every GC 9.4.x part); see
 * Documentation/gpu/amdgpu/profiler.rst, Privilege and Security.
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
#define VMID0		"spm_unsafe_vmid0"

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

/* A bool parameter as sysfs prints it: 1 on, 0 off, -1 unknown. */
static int param_bool(const char *v)
{
	if (!strcmp(v, "Y") || !strcmp(v, "y") || !strcmp(v, "1"))
		return 1;
	if (!strcmp(v, "N") || !strcmp(v, "n") || !strcmp(v, "0"))
		return 0;
	return -1;
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

/* What amdgpu.spm_unsafe_vmid0 says, as the refusal (@refused) or as the next check. */
static void explain_vmid0(struct out *o, const char *root, int refused)
{
	char path[4096], val[32];
	int r = read_param(root, VMID0, path, sizeof(path), val, sizeof(val));
	int on = r ? -1 : param_bool(val);

	if (refused) {
		if (on == 0)
			add(o, "amdgpu.spm_unsafe_vmid0 is %s (%s): on GC 9.4.x (MI100, MI200, MI300) the RLC writes SPM data through VMID 0, which the kernel allows only when an administrator sets amdgpu.spm_unsafe_vmid0=1 ('echo 1 > %s' as root, or on the kernel command line), trusting everybody who can submit work to the GPU; see the Security section of Documentation/gpu/amdgpu/profiler.rst.",
			    val, path, path);
		else if (on == 1)
			add(o, "amdgpu.spm_unsafe_vmid0 is %s now (%s): it was set after the refusal; try again.",
			    val, path);
		else
			add(o, "The refusal comes from amdgpu.spm_unsafe_vmid0, which must be 1 for SPM on GC 9.4.x (%s: %s); see the Security section of Documentation/gpu/amdgpu/profiler.rst.",
			    path, r ? strerror(-r) : "unexpected value");
		return;
	}
	if (on == 0)
		add(o, " Next, amdgpu.spm_unsafe_vmid0 is %s (%s): on GC 9.4.x ACQUIRE will then fail with EACCES until an administrator sets amdgpu.spm_unsafe_vmid0=1 (see the Security section of Documentation/gpu/amdgpu/profiler.rst).",
		    val, path);
	else if (on == 1)
		add(o, " amdgpu.spm_unsafe_vmid0 is %s: SPM through VMID 0 is allowed.",
		    val);
	else
		add(o, " On GC 9.4.x SPM also needs amdgpu.spm_unsafe_vmid0=1 (%s: %s).",
		    path, r ? strerror(-r) : "unexpected value");
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

	if (err == EACCES) {
		explain_vmid0(&o, root, 1);
		return buf;
	}
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
	explain_vmid0(&o, root, 0);
	return buf;
}
