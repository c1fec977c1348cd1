// SPDX-License-Identifier: MIT
/*
 * Copyright 2026 The amdgpu profiler series authors
 *
 * Unit test of amdgpu-spm-record's error paths, run as a program against
 * the fake render node (fake_amdgpu_preload.so on /dev/dri/renderD250):
 * what it says and which status it exits with when ACQUIRE is refused
 * (with the module parameters it reads served from a temporary directory
 * through FAKE_AMDGPU_PARAMS), when SET_DEST_BUF fails with ENOMEM under
 * the kernel's memlock charge (and that the default buffers fit the
 * default limit), and when the kernel stopped SPM (EIO).
 * The recorder and the preload library are found next to this binary.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "unit.h"

#define NODE "/dev/dri/renderD250"

static char recorder[PATH_MAX + 32], preload[PATH_MAX + 32], params[64];
static char out[65536];

static void put_param(const char *name, const char *value)
{
	char path[128];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", params, name);
	if (!value) {
		unlink(path);
		return;
	}
	f = fopen(path, "w");
	if (!f || fputs(value, f) < 0 || fclose(f)) {
		perror(path);
		exit(2);
	}
}

/*
 * Run the recorder on the fake node configured by @cfg, with @memlock as
 * RLIMIT_MEMLOCK (0: unchanged) and the arguments after it (NULL-ended);
 * its stdout and stderr end up in @out. Returns its exit status, -1 if it
 * did not exit.
 */
static int run(const char *cfg, rlim_t memlock, ...)
{
	char *argv[32];
	int pipefd[2], status, n = 0;
	size_t len = 0;
	ssize_t got;
	va_list ap;
	pid_t pid;

	argv[n++] = recorder;
	argv[n++] = "-d";
	argv[n++] = NODE;
	va_start(ap, memlock);
	while (n < 31 && (argv[n] = va_arg(ap, char *)))
		n++;
	va_end(ap);
	argv[n] = NULL;

	if (pipe(pipefd))
		exit(2);
	pid = fork();
	if (pid < 0)
		exit(2);
	if (!pid) {
		dup2(pipefd[1], 1);
		dup2(pipefd[1], 2);
		close(pipefd[0]);
		close(pipefd[1]);
		if (memlock) {
			struct rlimit rl = { memlock, memlock };

			setrlimit(RLIMIT_MEMLOCK, &rl);
		}
		setenv("LD_PRELOAD", preload, 1);
		setenv("FAKE_AMDGPU_NODE", NODE, 1);
		setenv("FAKE_AMDGPU", cfg, 1);
		setenv("FAKE_AMDGPU_PARAMS", params, 1);
		execv(recorder, argv);
		_exit(127);
	}
	close(pipefd[1]);
	while (len < sizeof(out) - 1 &&
	       (got = read(pipefd[0], out + len, sizeof(out) - 1 - len)) > 0)
		len += (size_t)got;
	out[len] = '\0';
	close(pipefd[0]);
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

static bool has(const char *text)
{
	if (strstr(out, text))
		return true;
	fprintf(stderr, "--- missing \"%s\" in:\n%s---\n", text, out);
	return false;
}

/* ACQUIRE refused: which parameter, what it reads, what to change; exit 5. */
static void test_refusals(void)
{
	put_param("spm_paranoid", "1\n");
	put_param("spm_unsafe_vmid0", "N\n");
	CHECK(run("version=1.1,acquire_err=EPERM", 0, "-q", "-o", "/dev/null",
		  NULL) == 5);
	CHECK(has("amdgpu-spm-record: cannot acquire the SPM: not allowed to profile"));
	CHECK(has("amdgpu-spm-record: amdgpu.spm_paranoid is 1 (/sys/module/amdgpu/parameters/spm_paranoid): only a process with CAP_PERFMON or CAP_SYS_ADMIN may acquire SPM"));
	CHECK(has("Next, amdgpu.spm_unsafe_vmid0 is N (/sys/module/amdgpu/parameters/spm_unsafe_vmid0)"));

	CHECK(run("version=1.1,acquire_err=EACCES", 0, "-q", "-o", "/dev/null",
		  NULL) == 5);
	CHECK(has("amdgpu-spm-record: amdgpu.spm_unsafe_vmid0 is N (/sys/module/amdgpu/parameters/spm_unsafe_vmid0): on GC 9.4.x"));
	CHECK(has("'echo 1 > /sys/module/amdgpu/parameters/spm_unsafe_vmid0' as root"));

	/* The parameters cannot be read (no amdgpu module here): still named. */
	put_param("spm_paranoid", NULL);
	put_param("spm_unsafe_vmid0", NULL);
	CHECK(run("version=1.1,acquire_err=EPERM", 0, "-q", "-o", "/dev/null",
		  NULL) == 5);
	CHECK(has("The refusal comes from amdgpu.spm_paranoid"));
	CHECK(has("On GC 9.4.x SPM also needs amdgpu.spm_unsafe_vmid0=1"));

	/* Other errors get no parameter talk. */
	CHECK(run("version=1.1,acquire_err=EBUSY", 0, "-q", "-o", "/dev/null",
		  NULL) == 4);
	CHECK(!strstr(out, "spm_paranoid") && !strstr(out, "spm_unsafe_vmid0"));
}

/*
 * The buffers are anonymous memory, pinned and charged to RLIMIT_MEMLOCK
 * (the fake kernel models the charge of the last three pins). The
 * defaults must fit the default limit of 8 MiB; larger buffers fail with
 * ENOMEM and a message that says what to change.
 */
static void test_memlock(void)
{
	const rlim_t limit = 8u << 20;

	CHECK(run("version=1.1,xcc=2,bytes=4096,fill_ms=5,memlock=8M", limit,
		  "-q", "-t", "0.2", "-o", "/dev/null", NULL) == 0);
	CHECK(has("buffers retired"));
	CHECK(!strstr(out, "ENOMEM") && !strstr(out, "failed"));

	CHECK(run("version=1.1,xcc=2,bytes=4096,fill_ms=5,memlock=8M", limit,
		  "-q", "-t", "0.2", "-s", "16M", "-o", "/dev/null",
		  NULL) == 1);
	CHECK(has("SET_DEST_BUF failed: out of memory, or pinning the buffer would pass RLIMIT_MEMLOCK"));
	CHECK(has("the recorder's 3 buffers of 16777216 bytes (49152 KiB) are anonymous memory"));
	CHECK(has("RLIMIT_MEMLOCK (now 8192 KiB)"));
	CHECK(has("'ulimit -l'"));
	CHECK(has("run with CAP_IPC_LOCK"));
	CHECK(has("a smaller --buf-size or --buffers 2"));

	/* The third 4 MiB buffer is the one that does not fit. */
	CHECK(run("version=1.1,xcc=2,bytes=4096,fill_ms=5,memlock=8M", limit,
		  "-q", "-t", "0.2", "-s", "4M", "-o", "/dev/null",
		  NULL) == 1);
	CHECK(has("the recorder's 3 buffers of 4194304 bytes (12288 KiB)"));

	CHECK(run("version=1.1", 0, "--help", NULL) == 0);
	CHECK(has("(default: 2M, so that the"));
}

/* The kernel stopped SPM (ring registers changed): said as such, exit 1. */
static void test_stopped(void)
{
	CHECK(run("version=1.1,xcc=2,bytes=4096,fill_ms=5,tamper_call=4", 0,
		  "-q", "-t", "2", "-o", "/dev/null", NULL) == 1);
	CHECK(has("SET_DEST_BUF failed: the kernel stopped SPM because the SPM ring registers were changed behind its back"));
	CHECK(has("Security section of Documentation/gpu/amdgpu/profiler.rst"));
	CHECK(!strstr(out, "I/O error"));
}

int main(int argc, char **argv)
{
	char self[PATH_MAX], *slash;

	(void)argc;
	if (!realpath(argv[0], self)) {
		perror(argv[0]);
		return 2;
	}
	slash = strrchr(self, '/');
	*slash = '\0';		/* .../tests */
	snprintf(preload, sizeof(preload), "%s/fake_amdgpu_preload.so", self);
	slash = strrchr(self, '/');
	*slash = '\0';
	snprintf(recorder, sizeof(recorder), "%s/amdgpu-spm-record", self);
	if (access(recorder, X_OK) || access(preload, R_OK)) {
		fprintf(stderr, "need %s and %s (make all)\n", recorder, preload);
		return 2;
	}
	snprintf(params, sizeof(params), "/tmp/spm-record-test.XXXXXX");
	if (!mkdtemp(params)) {
		perror("mkdtemp");
		return 2;
	}

	test_refusals();
	test_memlock();
	test_stopped();

	put_param("spm_paranoid", NULL);
	put_param("spm_unsafe_vmid0", NULL);
	rmdir(params);
	return unit_done();
}
