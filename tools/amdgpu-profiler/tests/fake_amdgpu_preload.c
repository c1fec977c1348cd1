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
 * tells the fake. A descriptor duplicated with fcntl(F_DUPFD[_CLOEXEC])
 * or dup() (amdgpu_device_initialize() keeps such a duplicate) is the
 * same open file: the fake sees one file id for all of them, and the file
 * is closed (releasing an SPM it owns) when the last of them is.
 * FAKE_AMDGPU_STATS=FILE writes the fake's counts to FILE at exit
 * (fake_amdgpu_write_stats()). Every other open(), ioctl(), mmap(),
 * fcntl() and close() goes to libc.
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

/* The fake file each descriptor is, 0 for none. */
static int fake_file[MAX_FDS];
static int next_file = 1000;	/* not descriptor numbers */
static int (*real_open)(const char *, int, ...);
static int (*real_fcntl)(int, int, ...);
static int (*real_fcntl64)(int, int, ...);
static int (*real_dup)(int);
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
	real_fcntl = dlsym(RTLD_NEXT, "fcntl");
	real_fcntl64 = dlsym(RTLD_NEXT, "fcntl64");
	real_dup = dlsym(RTLD_NEXT, "dup");
	if (fake_amdgpu_parse(getenv("FAKE_AMDGPU"), &cfg)) {
		fprintf(stderr, "fake_amdgpu: bad FAKE_AMDGPU='%s'\n",
			getenv("FAKE_AMDGPU"));
		abort();
	}
	fake_amdgpu_reset(&cfg);
}

__attribute__((destructor)) static void fini(void)
{
	const char *path = getenv("FAKE_AMDGPU_STATS");
	FILE *f;

	if (!path)
		return;
	f = fopen(path, "w");
	if (!f)
		return;
	fake_amdgpu_write_stats(f);
	fclose(f);
}

static bool is_fake_fd(int fd)
{
	return fd >= 0 && fd < MAX_FDS && fake_file[fd];
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
		fake_file[fd] = next_file++;
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
	int file, i;

	if (is_fake_fd(fd)) {
		file = fake_file[fd];
		fake_file[fd] = 0;
		for (i = 0; i < MAX_FDS && fake_file[i] != file; i++)
			;
		/* The last descriptor of the file */
		if (i == MAX_FDS)
			fake_amdgpu_close(file);
	}
	return real_close(fd);
}

static int dup_of(int fd, int ret)
{
	if (ret >= 0 && ret < MAX_FDS && is_fake_fd(fd))
		fake_file[ret] = fake_file[fd];
	return ret;
}

EXPORT int dup(int fd)
{
	if (!real_dup)
		real_dup = dlsym(RTLD_NEXT, "dup");
	return dup_of(fd, real_dup(fd));
}

/* fcntl() and fcntl64() (libdrm_amdgpu's, glibc 2.28 on): every command
 * takes at most one argument, an int or a pointer */
static int do_fcntl(int (*real)(int, int, ...), int fd, int cmd, void *arg)
{
	int ret = real(fd, cmd, arg);

	if (cmd == F_DUPFD || cmd == F_DUPFD_CLOEXEC)
		return dup_of(fd, ret);
	return ret;
}

EXPORT int fcntl(int fd, int cmd, ...)
{
	va_list ap;
	void *arg;

	va_start(ap, cmd);
	arg = va_arg(ap, void *);
	va_end(ap);
	if (!real_fcntl)
		real_fcntl = dlsym(RTLD_NEXT, "fcntl");
	return do_fcntl(real_fcntl, fd, cmd, arg);
}

EXPORT int fcntl64(int fd, int cmd, ...)
{
	va_list ap;
	void *arg;

	va_start(ap, cmd);
	arg = va_arg(ap, void *);
	va_end(ap);
	if (!real_fcntl64)
		real_fcntl64 = dlsym(RTLD_NEXT, "fcntl64");
	if (!real_fcntl)
		real_fcntl = dlsym(RTLD_NEXT, "fcntl");
	return do_fcntl(real_fcntl64 ? real_fcntl64 : real_fcntl, fd, cmd,
			arg);
}

EXPORT int ioctl(int fd, unsigned long req, ...)
{
	va_list ap;
	void *arg;
	int ret;

	va_start(ap, req);
	arg = va_arg(ap, void *);
	va_end(ap);
	if (!is_fake_fd(fd))
		return real_ioctl(fd, req, arg);
	ret = fake_amdgpu_ioctl(fake_file[fd], req, arg);
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
	if (!is_fake_fd(fd))
		return real_mmap(addr, len, prot, flags, fd, off);
	return fake_amdgpu_mmap(fake_file[fd], len, prot, flags, (long)off);
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
