// SPDX-License-Identifier: MIT
/*
 * Copyright 2026 The amdgpu profiler series authors
 *
 * Unit test of amdgpu-spm-record's error paths, run as a program against
 * the fake render node (fake_amdgpu_preload.so on /dev/dri/renderD250):
 * what it says and which status it exits with when ACQUIRE is refused
 * (with the module parameters it reads served from a temporary directory
 * through FAKE_AMDGPU_PARAMS), when SET_DEST_BUF fails with ENOMEM under
 * the kernel's memlock charge of anonymous buffers (GTT buffers, the
 * default, are not charged; the fallback to anonymous memory), when the
 * kernel stopped SPM (EIO); what it counts as loss (lost samples and
 * lost buffers, per buffer; a share that filled up apart) and what it
 * advises; and that the GPU clock it records maps to host time.
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

static char recorder[PATH_MAX + 32], dump[PATH_MAX + 32];
static char preload[PATH_MAX + 32], params[64];
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

/* Run @cmd with popen(); its output ends up in @out. Returns its status. */
static int capture(const char *cmd)
{
	FILE *f = popen(cmd, "r");
	size_t len;
	int status;

	if (!f)
		exit(2);
	len = fread(out, 1, sizeof(out) - 1, f);
	out[len] = '\0';
	status = pclose(f);
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
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
 * GTT buffers (the default) are BOs of the render node, which the kernel
 * writes without pinning: no RLIMIT_MEMLOCK charge, so buffers of the
 * size KFD-era tools use (64 MiB) work under the default limit.
 */
static void test_gtt_buffers(void)
{
	const rlim_t limit = 8u << 20;

	CHECK(run("version=1.1,xcc=2,bytes=4096,fill_ms=5,memlock=8M", limit,
		  "-q", "-t", "0.2", "-s", "64M", "-o", "/dev/null",
		  NULL) == 0);
	CHECK(has("amdgpu-spm-record: 3 GTT buffers of 67108864 bytes"));
	CHECK(has("buffers retired"));
	CHECK(!strstr(out, "failed"));

	/* The default size in GTT */
	CHECK(run("version=1.1,xcc=2,bytes=4096,fill_ms=5,memlock=8M", limit,
		  "-q", "-t", "0.2", "-o", "/dev/null", NULL) == 0);
	CHECK(has("amdgpu-spm-record: 3 GTT buffers of 8388608 bytes"));

	/* No BOs to be had: anonymous memory, at the size that fits */
	CHECK(run("version=1.1,xcc=2,bytes=4096,fill_ms=5,memlock=8M,nogem=1",
		  limit, "-q", "-t", "0.2", "-o", "/dev/null", NULL) == 0);
	CHECK(has("amdgpu-spm-record: no GTT buffers (Cannot allocate memory): using anonymous memory of 2097152 bytes a buffer, pinned and charged to RLIMIT_MEMLOCK"));
	CHECK(has("amdgpu-spm-record: 3 anonymous buffers of 2097152 bytes"));
	CHECK(has("buffers retired"));
	/* ... unless only GTT will do */
	CHECK(run("version=1.1,xcc=2,nogem=1", 0, "-q", "-t", "0.2",
		  "-m", "gtt-only", "-o", "/dev/null", NULL) == 1);
	CHECK(has("amdgpu-spm-record: cannot allocate 3 GTT buffers of 8388608 bytes: Cannot allocate memory"));
	CHECK(!strstr(out, "buffers retired"));

	CHECK(run("version=1.1", 0, "-m", "vram", NULL) == 2);
	CHECK(has("invalid --memory 'vram': gtt, gtt-only or anon"));
	CHECK(run("version=1.1", 0, "--help", NULL) == 0);
	CHECK(has("(default: 8M in GTT, 2M in"));
}

/*
 * Anonymous buffers are pinned and charged to RLIMIT_MEMLOCK (the fake
 * kernel models the charge of the last three pins). Their default must
 * fit the default limit of 8 MiB; larger ones fail with ENOMEM and a
 * message that says what to change.
 */
static void test_memlock(void)
{
	const rlim_t limit = 8u << 20;

	CHECK(run("version=1.1,xcc=2,bytes=4096,fill_ms=5,memlock=8M", limit,
		  "-q", "-t", "0.2", "-m", "anon", "-o", "/dev/null",
		  NULL) == 0);
	CHECK(has("amdgpu-spm-record: 3 anonymous buffers of 2097152 bytes"));
	CHECK(has("buffers retired"));
	CHECK(!strstr(out, "ENOMEM") && !strstr(out, "failed"));

	CHECK(run("version=1.1,xcc=2,bytes=4096,fill_ms=5,memlock=8M", limit,
		  "-q", "-t", "0.2", "-m", "anon", "-s", "16M", "-o",
		  "/dev/null", NULL) == 1);
	CHECK(has("SET_DEST_BUF failed: out of memory, or pinning the buffer would pass RLIMIT_MEMLOCK"));
	CHECK(has("the recorder's 3 buffers of 16777216 bytes (49152 KiB) are anonymous memory"));
	CHECK(has("RLIMIT_MEMLOCK (now 8192 KiB)"));
	CHECK(has("'ulimit -l'"));
	CHECK(has("run with CAP_IPC_LOCK"));
	CHECK(has("a smaller --buf-size or --buffers 2"));
	CHECK(has("use GTT buffers (--memory gtt, the default)"));

	/* The third 4 MiB buffer is the one that does not fit. */
	CHECK(run("version=1.1,xcc=2,bytes=4096,fill_ms=5,memlock=8M", limit,
		  "-q", "-t", "0.2", "-m", "anon", "-s", "4M", "-o",
		  "/dev/null", NULL) == 1);
	CHECK(has("the recorder's 3 buffers of 4194304 bytes (12288 KiB)"));
}

/* The counts of the recorder's summary line; false if it is not there. */
static bool summary(unsigned long *retired, unsigned long *samples,
		    unsigned long *gaps, unsigned long *full)
{
	const char *p = strstr(out, "amdgpu-spm-record: ");

	for (; p; p = strstr(p + 1, "amdgpu-spm-record: ")) {
		unsigned long bytes;

		if (sscanf(p, "amdgpu-spm-record: %lu buffers retired, %lu data bytes, %lu with lost samples, %lu lost (gaps in the kernel's sequence), %lu with a share that filled up",
			   retired, &bytes, samples, gaps, full) == 5)
			return true;
	}
	fprintf(stderr, "--- no summary line in:\n%s---\n", out);
	return false;
}

/*
 * Loss means lost samples or lost buffers, counted per buffer. A share
 * that filled up (AMDGPU_SPM_LOSS_FULL) lost nothing: its rest went on in
 * the next buffer. The fake kernel sets FULL on every share whose data did
 * not fit, as amdgpu_spm_drain.c does.
 */
static void test_loss(void)
{
	unsigned long retired, samples, gaps, full;

	/* 8 KiB buffers of 2 shares, filled in 5 ms: every share fills up */
	CHECK(run("version=1.1,xcc=2,bytes=65536,fill_ms=5", 0, "-q", "-t",
		  "0.3", "-s", "8K", "-T", "20", "--fail-on-loss", "-o",
		  "/dev/null", NULL) == 0);
	CHECK(summary(&retired, &samples, &gaps, &full));
	CHECK(retired >= 3 && samples == 0 && gaps == 0);
	CHECK(full >= retired - 1);
	CHECK(!strstr(out, "warning"));

	/* Samples lost in one buffer (share 0 of 4): one buffer, advice */
	CHECK(run("version=1.1,xcc=4,bytes=1024,fill_ms=5,loss_seq=2", 0,
		  "-q", "-t", "0.3", "-n", "3", "--fail-on-loss", "-o",
		  "/dev/null", NULL) == 7);
	CHECK(summary(&retired, &samples, &gaps, &full));
	CHECK(samples == 1 && gaps == 0 && full == 0);
	CHECK(has("warning: SPM samples were lost: the kernel's ring filled up before the data could go to a buffer; larger buffers (--buf-size, now 8388608 bytes, at most 256M); a shorter --timeout (now 100 ms)"));
	/* -n 3 is the most there is; more buffers would not help this loop */
	CHECK(!strstr(out, "--buffers") && !strstr(out, "more buffers"));
	CHECK(run("version=1.1,xcc=4,bytes=1024,fill_ms=5,loss_seq=2", 0,
		  "-q", "-t", "0.3", "-T", "0", "-o", "/dev/null", NULL) == 0);
	CHECK(has("warning: SPM samples were lost"));
	CHECK(!strstr(out, "shorter --timeout"));

	/* A buffer missing from the sequence of 4 XCCs is one lost buffer */
	CHECK(run("version=1.1,xcc=4,bytes=1024,fill_ms=5,gap_seq=3", 0,
		  "-q", "-t", "0.3", "--fail-on-loss", "-o", "/dev/null",
		  NULL) == 7);
	CHECK(summary(&retired, &samples, &gaps, &full));
	CHECK(samples == 0 && gaps == 1);
	CHECK(has("warning: 1 buffer is missing from the kernel's sequence"));
	CHECK(!strstr(out, "SPM samples were lost"));
}

/*
 * Each buffer's record carries a GPU clock reading with the host time it
 * was taken at (CLOCK_BOOTTIME, the clock of the kernel's share headers):
 * the dump measures the counter's rate against host time, which must be
 * the rate the kernel reports, and writes the pairs in its CSV.
 */
static void test_clock(void)
{
	char file[96], csv[128], cmd[PATH_MAX * 2];
	double khz = 0;
	unsigned int readings = 0, said = 0;
	const char *p;

	snprintf(file, sizeof(file), "%s/clock.spm", params);
	snprintf(csv, sizeof(csv), "%s/clock.csv", params);
	CHECK(run("version=1.1,xcc=2,bytes=4096,fill_ms=5,counter_khz=25000",
		  0, "-q", "-t", "0.5", "-T", "20", "-o", file, NULL) == 0);
	snprintf(cmd, sizeof(cmd), "%s --csv %s %s 2>&1", dump, csv, file);
	CHECK(capture(cmd) == 0);
	p = strstr(out, "GPU clock: read with ");
	CHECK(p && sscanf(p, "GPU clock: read with %u buffers, %lf kHz against host time (the kernel says %u kHz)",
			  &readings, &khz, &said) == 3);
	CHECK(readings >= 5 && said == 25000);
	/* Both clocks are read within microseconds: well inside 1% */
	CHECK(khz > 24750 && khz < 25250);
	snprintf(cmd, sizeof(cmd), "cat %s", csv);
	CHECK(capture(cmd) == 0);
	CHECK(has(",full,start_s,last_s,retired_s,mib_per_s,gpu_clock,gpu_clock_host_s\n"));
	unlink(file);
	unlink(csv);
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
	snprintf(dump, sizeof(dump), "%s/amdgpu-spm-dump", self);
	if (access(recorder, X_OK) || access(dump, X_OK) ||
	    access(preload, R_OK)) {
		fprintf(stderr, "need %s, %s and %s (make all)\n", recorder,
			dump, preload);
		return 2;
	}
	snprintf(params, sizeof(params), "/tmp/spm-record-test.XXXXXX");
	if (!mkdtemp(params)) {
		perror("mkdtemp");
		return 2;
	}

	test_refusals();
	test_gtt_buffers();
	test_memlock();
	test_stopped();
	test_loss();
	test_clock();

	put_param("spm_paranoid", NULL);
	put_param("spm_unsafe_vmid0", NULL);
	rmdir(params);
	return unit_done();
}
