// SPDX-License-Identifier: MIT
/*
 * Copyright 2026 The amdgpu profiler series authors
 *
 * Tests only: LD_PRELOAD=tests/fake_amdgpu_preload.so makes the paths in
 * FAKE_AMDGPU_NODE (colon-separated, e.g. /dev/dri/renderD128) open as an
 * amdgpu render node served by the fake profiler kernel (fake_amdgpu.c),
 * configured by FAKE_AMDGPU (see fake_amdgpu_parse()). With
 * FAKE_AMDGPU_PARAMS=DIR, /sys/module/amdgpu/parameters/NAME opens as
 * DIR/NAME (ENOENT if it is not there), for the module parameters the
 * tools read. mmap() of a fake node maps the fake's GTT BOs; munmap()
 * tells the fake. Every other open(), ioctl(), mmap() and close() goes to
 * libc.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fake_amdgpu.h"

#define EXPORT __attribute__((visibility("default")))
#define MAX_FDS 1024

static bool fake_fd[MAX_FDS];
static int (*real_open)(const char *, int, ...);
static int (*real_openat)(int, const char *, int, ...);
static int (*real_close)(int);
static int (*real_ioctl)(int, unsigned long, ...);
static void *(*real_mmap)(void *, size_t, int, int, int, off_t);
static int (*real_munmap)(void *, size_t);

__attribute__((constructor)) static void init(void)
{
	struct fake_amdgpu_config cfg;

	real_open = dlsym(RTLD_NEXT, "open");
	real_openat = dlsym(RTLD_NEXT, "openat");
	real_close = dlsym(RTLD_NEXT, "close");
	real_ioctl = dlsym(RTLD_NEXT, "ioctl");
	real_mmap = dlsym(RTLD_NEXT, "mmap");
	real_munmap = dlsym(RTLD_NEXT, "munmap");
	if (fake_amdgpu_parse(getenv("FAKE_AMDGPU"), &cfg)) {
		fprintf(stderr, "fake_amdgpu: bad FAKE_AMDGPU='%s'\n",
			getenv("FAKE_AMDGPU"));
		abort();
	}
	fake_amdgpu_reset(&cfg);
}

static bool is_fake_path(const char *path)
{
	const char *nodes = getenv("FAKE_AMDGPU_NODE"), *p;
	size_t n = strlen(path);

	for (p = nodes; p && *p;) {
		const char *end = strchrnul(p, ':');

		if ((size_t)(end - p) == n && !strncmp(p, path, n))
			return true;
		p = *end ? end + 1 : end;
	}
	return false;
}

#define PARAMS "/sys/module/amdgpu/parameters/"

/* The module parameter file @path, from FAKE_AMDGPU_PARAMS; NULL if not one. */
static const char *param_path(const char *path, char *buf, size_t size)
{
	const char *dir = getenv("FAKE_AMDGPU_PARAMS");

	if (!dir || strncmp(path, PARAMS, strlen(PARAMS)))
		return NULL;
	snprintf(buf, size, "%s/%s", dir, path + strlen(PARAMS));
	return buf;
}

static int open_fake(int flags)
{
	int fd = real_open("/dev/null", O_RDWR | (flags & O_CLOEXEC));

	if (fd >= 0 && fd < MAX_FDS)
		fake_fd[fd] = true;
	return fd;
}

EXPORT int open(const char *path, int flags, ...)
{
	char param[4096];
	mode_t mode = 0;
	va_list ap;

	if (is_fake_path(path))
		return open_fake(flags);
	if (param_path(path, param, sizeof(param)))
		path = param;
	if (flags & (O_CREAT | O_TMPFILE)) {
		va_start(ap, flags);
		mode = va_arg(ap, mode_t);
		va_end(ap);
	}
	return real_open(path, flags, mode);
}

EXPORT int open64(const char *path, int flags, ...)
	__attribute__((alias("open")));

EXPORT int openat(int dirfd, const char *path, int flags, ...)
{
	char param[4096];
	mode_t mode = 0;
	va_list ap;

	if (is_fake_path(path))
		return open_fake(flags);
	if (param_path(path, param, sizeof(param)))
		path = param;
	if (flags & (O_CREAT | O_TMPFILE)) {
		va_start(ap, flags);
		mode = va_arg(ap, mode_t);
		va_end(ap);
	}
	return real_openat(dirfd, path, flags, mode);
}

EXPORT int openat64(int dirfd, const char *path, int flags, ...)
	__attribute__((alias("openat")));

EXPORT int close(int fd)
{
	if (fd >= 0 && fd < MAX_FDS && fake_fd[fd]) {
		fake_fd[fd] = false;
		fake_amdgpu_close(fd);
	}
	return real_close(fd);
}

EXPORT int ioctl(int fd, unsigned long req, ...)
{
	va_list ap;
	void *arg;
	int ret;

	va_start(ap, req);
	arg = va_arg(ap, void *);
	va_end(ap);
	if (fd < 0 || fd >= MAX_FDS || !fake_fd[fd])
		return real_ioctl(fd, req, arg);
	ret = fake_amdgpu_ioctl(fd, req, arg);
	if (ret < 0) {
		errno = -ret;
		return -1;
	}
	return ret;
}

EXPORT void *mmap(void *addr, size_t len, int prot, int flags, int fd,
		  off_t off)
{
	if (!real_mmap)
		real_mmap = dlsym(RTLD_NEXT, "mmap");
	if (fd < 0 || fd >= MAX_FDS || !fake_fd[fd])
		return real_mmap(addr, len, prot, flags, fd, off);
	return fake_amdgpu_mmap(fd, len, prot, flags, (long)off);
}

EXPORT void *mmap64(void *addr, size_t len, int prot, int flags, int fd,
		    off_t off) __attribute__((alias("mmap")));

EXPORT int munmap(void *addr, size_t len)
{
	int ret;

	if (!real_munmap)
		real_munmap = dlsym(RTLD_NEXT, "munmap");
	ret = real_munmap(addr, len);

	if (!ret)
		fake_amdgpu_munmap(addr, len);
	return ret;
}
