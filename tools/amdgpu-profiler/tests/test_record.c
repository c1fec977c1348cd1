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
 * Counters (-e): the recorder reads the GC version from the device and
 * submits the start and stop streams through libdrm; the fake kernel runs
 * them through its own PM4 decoder and RLC model (tests/spm_model.c) and
 * streams what they programmed, which the dump must decode into the
 * values the model generated; without a submission nothing streams; the
 * error paths (a failing or hanging submission, a GC that does not match)
 * leave nothing behind in the fake kernel (FAKE_AMDGPU_STATS).
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

#include "fake_amdgpu.h"
#include "spm_model.h"
#include "unit.h"
/* The recording's reader, for the clock readings' windows (test_clock) */
#include "spm_file.c"

#define NODE "/dev/dri/renderD250"

static char recorder[PATH_MAX + 32], dump[PATH_MAX + 32];
static char preload[PATH_MAX + 32], params[64], stats[96];
static char svg_check[PATH_MAX + 32];
static char out[1 << 20];	/* a decoded CSV too */

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
	unlink(stats);
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
		setenv("FAKE_AMDGPU_STATS", stats, 1);
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

/* A count the fake kernel wrote at the last run's exit; -1 if none. */
static long stat_of(const char *name)
{
	char line[128], key[64];
	long v, found = -1;
	FILE *f = fopen(stats, "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%63s %ld", key, &v) == 2 && !strcmp(key, name))
			found = v;
	fclose(f);
	return found;
}

static bool has(const char *text)
{
	if (strstr(out, text))
		return true;
	fprintf(stderr, "--- missing \"%s\" in:\n%s---\n", text, out);
	return false;
}

/*
 * ACQUIRE refused (EPERM): amdgpu.spm_paranoid, what it reads, what to
 * change; exit 5. It is the only parameter that refuses: no other is
 * named, nor read (a left-over spm_unsafe_vmid0 file changes nothing).
 * ENODEV (no SPM VMID, or the device is gone): exit 3, no parameter talk.
 */
static void test_refusals(void)
{
	put_param("spm_paranoid", "1\n");
	put_param("spm_unsafe_vmid0", "N\n");
	CHECK(run("version=1.1,acquire_err=EPERM", 0, "-q", "-o", "/dev/null",
		  NULL) == 5);
	CHECK(has("amdgpu-spm-record: cannot acquire the SPM: not allowed to profile"));
	CHECK(has("amdgpu-spm-record: amdgpu.spm_paranoid is 1 (/sys/module/amdgpu/parameters/spm_paranoid): only a process with CAP_PERFMON or CAP_SYS_ADMIN may acquire SPM"));
	CHECK(has("'echo 0 > /sys/module/amdgpu/parameters/spm_paranoid' as root"));
	CHECK(!strstr(out, "spm_unsafe_vmid0") && !strstr(out, "VMID 0") &&
	      !strstr(out, "Next,"));
	put_param("spm_unsafe_vmid0", NULL);

	/* Lowered since the refusal: try again. */
	put_param("spm_paranoid", "0\n");
	CHECK(run("version=1.1,acquire_err=EPERM", 0, "-q", "-o", "/dev/null",
		  NULL) == 5);
	CHECK(has("amdgpu.spm_paranoid is 0 now (/sys/module/amdgpu/parameters/spm_paranoid): it was lowered after the refusal; try again."));

	/* The parameter cannot be read (no amdgpu module here): still named. */
	put_param("spm_paranoid", NULL);
	CHECK(run("version=1.1,acquire_err=EPERM", 0, "-q", "-o", "/dev/null",
		  NULL) == 5);
	CHECK(has("The refusal comes from amdgpu.spm_paranoid"));
	CHECK(!strstr(out, "spm_unsafe_vmid0"));

	/* No SPM VMID (or no device any more): exit 3, said so. */
	put_param("spm_paranoid", "1\n");
	CHECK(run("version=1.1,acquire_err=ENODEV", 0, "-q", "-o", "/dev/null",
		  NULL) == 3);
	CHECK(has("amdgpu-spm-record: cannot acquire the SPM: no SPM VMID on this device: the driver could not set up the VMID that SPM writes through when it loaded (see the kernel log), or the device is gone"));
	CHECK(!strstr(out, "spm_paranoid") && !strstr(out, "spm_unsafe_vmid0"));

	/* EACCES is no refusal of the kernel's: no parameter named, exit 1. */
	CHECK(run("version=1.1,acquire_err=13", 0, "-q", "-o", "/dev/null",
		  NULL) == 1);
	CHECK(has("amdgpu-spm-record: cannot acquire the SPM: Permission denied"));
	CHECK(!strstr(out, "spm_paranoid") && !strstr(out, "spm_unsafe_vmid0"));

	/* Other errors get no parameter talk. */
	CHECK(run("version=1.1,acquire_err=EBUSY", 0, "-q", "-o", "/dev/null",
		  NULL) == 4);
	CHECK(!strstr(out, "spm_paranoid") && !strstr(out, "spm_unsafe_vmid0"));
	put_param("spm_paranoid", NULL);
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

	/*
	 * The third 4 MiB buffer is the one that does not fit. Its failure
	 * ends the run: -t 60 only bounds a run that went wrong (at -t 0.2
	 * a slow host could end before the third install).
	 */
	CHECK(run("version=1.1,xcc=2,bytes=4096,fill_ms=5,memlock=8M", limit,
		  "-q", "-t", "60", "-m", "anon", "-s", "4M", "-o",
		  "/dev/null", NULL) == 1);
	CHECK(has("the recorder's 3 buffers of 4194304 bytes (12288 KiB)"));
	CHECK(stat_of("set_dest_buf") == 3);
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
 *
 * The runs are of a number of buffers, not a duration: the fake stops the
 * recorder with SIGINT after its 6th SET_DEST_BUF (sig_call=6; -t 60 only
 * bounds a run that went wrong), so the sequence numbers with loss or a
 * gap are always retired; fixed=1 makes each share's amount, and so FULL,
 * the same however slow the host.
 */
static void test_loss(void)
{
	unsigned long retired, samples, gaps, full;

	/* 8 KiB buffers of 2 shares, filled in 5 ms: every share fills up */
	CHECK(run("version=1.1,xcc=2,bytes=65536,fill_ms=5,fixed=1,sig_call=6",
		  0, "-q", "-t", "60", "-s", "8K", "-T", "20", "--fail-on-loss", "-o",
		  "/dev/null", NULL) == 0);
	CHECK(summary(&retired, &samples, &gaps, &full));
	/* Every SET_DEST_BUF after the first retired one buffer */
	CHECK(retired >= 6 && (long)retired == stat_of("set_dest_buf") - 1);
	CHECK(samples == 0 && gaps == 0);
	CHECK(full >= retired - 1);
	CHECK(!strstr(out, "warning"));

	/* Samples lost in one buffer (share 0 of 4): one buffer, advice */
	CHECK(run("version=1.1,xcc=4,bytes=1024,fill_ms=5,fixed=1,sig_call=6,loss_seq=2",
		  0, "-q", "-t", "60", "-n", "3", "--fail-on-loss", "-o",
		  "/dev/null", NULL) == 7);
	CHECK(summary(&retired, &samples, &gaps, &full));
	CHECK(samples == 1 && gaps == 0 && full == 0);
	CHECK((long)retired == stat_of("set_dest_buf") - 1);
	CHECK(has("warning: SPM samples were lost: the kernel's ring filled up before the data could go to a buffer; larger buffers (--buf-size, now 8388608 bytes, at most 256M); a shorter --timeout (now 100 ms)"));
	/* -n 3 is the most there is; more buffers would not help this loop */
	CHECK(!strstr(out, "--buffers") && !strstr(out, "more buffers"));
	CHECK(run("version=1.1,xcc=4,bytes=1024,fill_ms=5,fixed=1,sig_call=6,loss_seq=2",
		  0, "-q", "-t", "60", "-T", "0", "-o", "/dev/null", NULL) == 0);
	CHECK(has("warning: SPM samples were lost"));
	CHECK(!strstr(out, "shorter --timeout"));

	/* A buffer missing from the sequence of 4 XCCs is one lost buffer */
	CHECK(run("version=1.1,xcc=4,bytes=1024,fill_ms=5,fixed=1,sig_call=6,gap_seq=3",
		  0, "-q", "-t", "60", "--fail-on-loss", "-o", "/dev/null",
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
 *
 * The run is of 12 SET_DEST_BUFs (sig_call=12; -t 60 only bounds a run
 * that went wrong). Each reading is the GPU counter taken between two
 * host clock readings, at their middle: off by at most half the window
 * between them, which the file records. A preempted reader (a slow host)
 * has a wide window; the rate is checked within what the first and last
 * windows (the dump's two readings) allow, not a fixed 1%.
 */
/*
 * The first and the last buffer's GPU clock readings in @file, as the
 * dump picks them, and the widest window of any; false if there are not
 * two.
 */
static bool clock_readings(const char *file, struct spm_record *first,
			   struct spm_record *last, uint32_t *max_window)
{
	struct spm_file_header fh;
	struct spm_reader rd;
	struct spm_record r;
	unsigned char *data = NULL;
	size_t cap = 0;
	uint32_t buffer = UINT32_MAX;
	FILE *f = fopen(file, "rb");

	memset(first, 0, sizeof(*first));
	memset(last, 0, sizeof(*last));
	*max_window = 0;
	if (!f || spm_file_read_header(&rd, f, &fh)) {
		if (f)
			fclose(f);
		return false;
	}
	while (spm_file_read_record(&rd, &r, &data, &cap) == 1) {
		if (r.type != SPM_RECORD_SHARE || !r.gpu_clock)
			continue;
		if (r.gpu_clock_window_ns > *max_window)
			*max_window = r.gpu_clock_window_ns;
		if (r.buffer == buffer)
			continue;
		buffer = r.buffer;
		if (!first->gpu_clock)
			*first = r;
		*last = r;
	}
	free(data);
	fclose(f);
	return last->gpu_clock_host_ns > first->gpu_clock_host_ns;
}

static double clock_tolerance_khz(const char *file, double khz)
{
	struct spm_record first, last;
	uint32_t max_window;
	double span;

	if (!clock_readings(file, &first, &last, &max_window))
		return -1;
	span = (double)(last.gpu_clock_host_ns - first.gpu_clock_host_ns);
	/*
	 * Half of each window, a tick of counter truncation and a ns of
	 * rounding at each end, the dump's %.0f.
	 */
	return khz * ((first.gpu_clock_window_ns + last.gpu_clock_window_ns) / 2.0 + 2) /
	       span + 2 * 1e6 / span + 0.5;
}

static void test_clock(void)
{
	double tol;
	char file[96], csv[128], cmd[PATH_MAX * 2];
	double khz = 0;
	unsigned int readings = 0, said = 0;
	const char *p;

	snprintf(file, sizeof(file), "%s/clock.spm", params);
	snprintf(csv, sizeof(csv), "%s/clock.csv", params);
	CHECK(run("version=1.1,xcc=2,bytes=4096,fill_ms=5,counter_khz=25000,sig_call=12",
		  0, "-q", "-t", "60", "-T", "20", "-o", file, NULL) == 0);
	/* A reading for each retired buffer: all but the first install */
	CHECK(stat_of("set_dest_buf") >= 13);
	snprintf(cmd, sizeof(cmd), "%s --csv %s %s 2>&1", dump, csv, file);
	CHECK(capture(cmd) == 0);
	p = strstr(out, "GPU clock: read with ");
	CHECK(p && sscanf(p, "GPU clock: read with %u buffers, %lf kHz against host time (the kernel says %u kHz)",
			  &readings, &khz, &said) == 3);
	CHECK(readings >= 12 && (long)readings == stat_of("set_dest_buf") - 1);
	CHECK(said == 25000);
	tol = clock_tolerance_khz(file, 25000);
	CHECK(tol > 0);
	CHECK(khz >= 25000 - tol && khz <= 25000 + tol);
	if (tol > 250 || khz < 25000 - tol || khz > 25000 + tol)
		fprintf(stderr, "clock: %.1f kHz, within %.1f kHz allowed by the readings' windows\n",
			khz, tol);
	snprintf(cmd, sizeof(cmd), "cat %s", csv);
	CHECK(capture(cmd) == 0);
	CHECK(has(",full,start_s,last_s,retired_s,mib_per_s,gpu_clock,gpu_clock_host_s\n"));
	unlink(file);
	unlink(csv);
}

/*
 * The dump's --counter-svg of @file against its --counters CSV, parsed by
 * tests/check_counter_svg.py (python3's xml.etree): a panel per counter
 * with its unit, a line per XCC with samples, every point the mean of its
 * group of samples. Returns true if it agrees (or python3 is missing,
 * which is said).
 */
static bool chart_ok(const char *file, const char *what,
		     unsigned long points)
{
	char svg[128], csv[128], cmd[PATH_MAX * 3];
	bool ok;

	if (capture("command -v python3 >/dev/null 2>&1") != 0) {
		fprintf(stderr, "%s: no python3: the counter chart is not checked\n",
			what);
		return true;
	}
	snprintf(svg, sizeof(svg), "%s/chart.svg", params);
	snprintf(csv, sizeof(csv), "%s/chart.csv", params);
	snprintf(cmd, sizeof(cmd), "%s -q --counters %s --counter-svg %s --chart-points %lu %s 2>&1",
		 dump, csv, svg, points, file);
	ok = capture(cmd) == 0;
	snprintf(cmd, sizeof(cmd), "python3 %s %s %s %lu 2>&1", svg_check, svg,
		 csv, points);
	ok = capture(cmd) == 0 && has("ok: ") && ok;
	if (!ok)
		fprintf(stderr, "%s: %s", what, out);
	unlink(svg);
	unlink(csv);
	return ok;
}

/*
 * Decoding what another process programmed: the fake kernel writes whole
 * samples for a configuration (samples=, its own generator), the
 * recorder stores the same configuration (-e, -I, --no-program: it
 * submits nothing), and the dump turns the samples back into
 * the values the fake put in: the cycle counter's deltas are the interval
 * exactly, the timestamp advances by it, the trace parses as JSON with one
 * counter event per counter, sample and XCC and an instant event for the
 * configured loss.
 */
#define DEC_EVENTS "CPC_ALWAYS_COUNT,CPC_ME1_BUSY_FOR_PACKET_DECODE,SQ_WAVES"
#define DEC_FAKE "version=1.1,xcc=2,first_xcc=0,fill_ms=5,loss_seq=3," \
	"samples=9.4.3:32768:CPC_ALWAYS_COUNT:16+" \
	"CPC_ME1_BUSY_FOR_PACKET_DECODE:16+SQ_WAVES:32"

static void test_decode(void)
{
	/* What the fake generates for DEC_FAKE (its value function) */
	struct fake_amdgpu_samples sm = {
		.n = 3, .gc = 0x090403, .interval = 32768,
		.bits = { 16, 16, 32 }, .se = { false, false, true },
		.cycles = { true, false, false }, .num_se = 4,
	};
	char file[96], csv[128], json[128], cmd[PATH_MAX * 2];
	unsigned long rows[2] = { 0, 0 }, bad = 0, ts_bad = 0, host_empty = 0;
	unsigned int slack_us;
	char *line, *save = NULL;
	bool header = true;
	int st;

	snprintf(file, sizeof(file), "%s/decode.spm", params);
	snprintf(csv, sizeof(csv), "%s/decode.csv", params);
	snprintf(json, sizeof(json), "%s/decode.json", params);

	/* Names and widths are checked, with the valid names, before any
	 * device is opened (no ACQUIRE) */
	CHECK(run(DEC_FAKE, 0, "-e", "CPC_NOPE", NULL) == 2);
	CHECK(has("unknown counter 'CPC_NOPE'"));
	CHECK(has("CPC_ALWAYS_COUNT:16"));
	CHECK(stat_of("acquire") == 0);
	CHECK(run(DEC_FAKE, 0, "-e", "SQ_WAVES:16", "-g", "9.4.3", NULL) == 2);
	CHECK(has("SQ_WAVES is programmed 32-bit only"));
	CHECK(run(DEC_FAKE, 0, "-I", "4096", NULL) == 2);
	CHECK(run(DEC_FAKE, 0, "--no-program", NULL) == 2);
	CHECK(has("go with --events"));
	CHECK(run(DEC_FAKE, 0, "--allow-partial", NULL) == 2);
	CHECK(has("go with --events"));
	CHECK(run(DEC_FAKE, 0, "--allow-gc-9.4.2", NULL) == 2);
	CHECK(has("go with --events"));
	CHECK(run(DEC_FAKE, 0, "--help", NULL) == 0);
	CHECK(has("--no-program"));

	/*
	 * 12 SET_DEST_BUFs (sig_call=12; -t 60 bounds a run gone wrong):
	 * the buffer of seq 3 with its loss is always retired, and 11 of the
	 * calls wait 5 ms, so at least 55 ms of samples are due.
	 */
	CHECK(run(DEC_FAKE ",sig_call=12", 0, "-q", "-t", "60", "-T", "20",
		  "-e", DEC_EVENTS, "-I", "32768", "--no-program", "-o", file,
		  NULL) == 0);
	CHECK(has("note: --no-program: the counters are not programmed by this tool"));
	CHECK(has("recorded for decoding"));
	CHECK(stat_of("cs") == 0);

	snprintf(cmd, sizeof(cmd), "%s --counters %s --trace %s %s 2>&1", dump,
		 csv, json, file);
	CHECK(capture(cmd) == 0);
	CHECK(has("counters: GC 9.4.3, 4 SEs, sample interval 32768 cycles, 320-byte samples, 3 counters (recorded, not programmed by the recorder)"));
	CHECK(has("cycle counter: XCC 0: CPC_ALWAYS_COUNT equals the interval (32768) in all "));
	CHECK(has("cycle counter: XCC 1: CPC_ALWAYS_COUNT equals the interval (32768) in all "));
	CHECK(has("timestamp: XCC 0: deltas from 32768 to 32768 between samples"));
	CHECK(has("SQ_WAVES_se3"));
	CHECK(!strstr(out, "not whole samples"));

	/* Every value is the one the fake generated for its XCC and sample */
	snprintf(cmd, sizeof(cmd), "cat %s", csv);
	CHECK(capture(cmd) == 0);
	CHECK(strlen(out) < sizeof(out) - 1);	/* not cut */
	for (line = strtok_r(out, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		char *f[16];
		unsigned long long xcc, k, v[6];
		unsigned int i, n = 0;

		if (header) {
			CHECK(!strcmp(line, "xcc,buffer,sample,timestamp,timestamp_delta,host_s,CPC_ALWAYS_COUNT,CPC_ME1_BUSY_FOR_PACKET_DECODE,SQ_WAVES_se0,SQ_WAVES_se1,SQ_WAVES_se2,SQ_WAVES_se3"));
			header = false;
			continue;
		}
		/* strsep keeps the empty fields */
		while (n < 16 && (f[n] = strsep(&line, ",")))
			n++;
		if (n != 12 || (xcc = strtoull(f[0], NULL, 10)) > 1) {
			bad++;
			continue;
		}
		k = strtoull(f[2], NULL, 10);
		for (i = 0; i < 6; i++)
			v[i] = strtoull(f[6 + i], NULL, 10);
		if (!*f[5])
			host_empty++;
		if (k != rows[xcc])
			bad++;
		rows[xcc]++;
		if (v[0] != fake_amdgpu_sample_value(&sm, 0, k, 0, (unsigned int)xcc) ||
		    v[1] != fake_amdgpu_sample_value(&sm, 1, k, 0, (unsigned int)xcc))
			bad++;
		for (i = 0; i < 4; i++)
			if (v[2 + i] != fake_amdgpu_sample_value(&sm, 2, k, i,
								 (unsigned int)xcc))
				bad++;
		if (v[0] != 32768)
			bad++;
		if (k ? strtoull(f[4], NULL, 10) != 32768 : *f[4] != '\0')
			ts_bad++;
	}
	CHECK(!header);
	CHECK(bad == 0 && ts_bad == 0);
	/* The recorder stores GPU clock pairs: every row has a host time */
	CHECK(host_empty == 0);
	/* At least 55 ms at 32768 ticks of 100 MHz a sample: 167 each */
	CHECK(rows[0] > 100 && rows[1] > 100);
	if (bad || ts_bad || host_empty)
		fprintf(stderr, "decode: %lu bad rows, %lu timestamp deltas wrong, %lu without host time\n",
			bad, ts_bad, host_empty);

	/*
	 * The trace: valid JSON, per XCC 3 "C" events a sample, the loss,
	 * nothing before the recording's start: samples count from the first
	 * install (after the start), each placed through its buffer's clock
	 * reading, off by at most half that reading's window (+ 1 us).
	 */
	{
		struct spm_record first, last;
		uint32_t max_window = 0;

		CHECK(clock_readings(file, &first, &last, &max_window));
		slack_us = max_window / 2000 + 1;
	}
	if (capture("command -v python3 >/dev/null 2>&1") != 0) {
		fprintf(stderr, "test_decode: no python3: the trace's JSON is not checked\n");
	} else {
		snprintf(cmd, sizeof(cmd),
			 "python3 -c 'import json,sys\n"
			 "d=json.load(open(sys.argv[1]))[\"traceEvents\"]\n"
			 "c=lambda ph,pid:sum(1 for e in d if e[\"ph\"]==ph and e[\"pid\"]==pid)\n"
			 "loss=[e for e in d if e[\"ph\"]==\"i\" and e[\"name\"]==\"data loss\"]\n"
			 "print(c(\"C\",0),c(\"C\",1),len(loss),loss[0][\"pid\"] if loss else -1,"
			 "all(e[\"ts\"]>=-%u for e in d if \"ts\" in e))' %s 2>&1",
			 slack_us, json);
		st = capture(cmd);
		CHECK(st == 0);
		{
			unsigned long c0 = 0, c1 = 0, nloss = 0;
			int pid = -2;
			char ok[8] = "";

			CHECK(sscanf(out, "%lu %lu %lu %d %7s", &c0, &c1, &nloss,
				     &pid, ok) == 5);
			CHECK(c0 == 3 * rows[0] && c1 == 3 * rows[1]);
			CHECK(nloss == 1 && pid == 0);
			CHECK(!strcmp(ok, "True"));
		}
	}

	/* The chart: both XCCs' lines in every panel */
	CHECK(chart_ok(file, "decode", 1000));
	CHECK(has("ok: 3 panels, 6 lines, "));

	/* A recording without a configuration: said, exit 1 */
	CHECK(run("version=1.1,xcc=2,fill_ms=5", 0, "-q", "-t", "0.1", "-o",
		  file, NULL) == 0);
	snprintf(cmd, sizeof(cmd), "%s -q --counters %s %s 2>&1", dump, csv,
		 file);
	CHECK(capture(cmd) == 1);
	CHECK(has("no counter configuration in this recording (record with amdgpu-spm-record -e)"));
	unlink(file);
	unlink(csv);
	unlink(json);
}

/* ---- Counters programmed by the recorder (-e) ---- */

struct want_counter {
	const char *name;
	unsigned int bits;
};

/*
 * The decoded CSV now in @out against what the fake's RLC model generated
 * (spm_model_value()) for the counters @c at @interval: every value of
 * every row (sample k of logical XCC x), the cycle counter, the
 * timestamp's deltas. Rows per logical XCC go to rows[]. Returns the
 * number of wrong rows (or 1 for a wrong header).
 */
static unsigned long check_csv(const struct want_counter *c, unsigned int n,
			       unsigned int interval, unsigned long rows[16])
{
	struct {
		const struct spm_model_event *ev;
		unsigned int se;
		int bits32;
	} col[64];
	unsigned int ncol = 0, i, j;
	unsigned long bad = 0;
	char *line, *save = NULL, *hdr;
	bool header = true;

	for (i = 0; i < 16; i++)
		rows[i] = 0;
	for (line = strtok_r(out, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		char *f[80];
		unsigned long long x, k, v, ts_delta;
		unsigned int nf = 0;

		while (nf < 80 && (f[nf] = strsep(&line, ",")))
			nf++;
		if (header) {
			header = false;
			if (nf < 7 || strcmp(f[0], "xcc") || strcmp(f[2], "sample") ||
			    strcmp(f[4], "timestamp_delta"))
				return 1;
			for (i = 6; i < nf && ncol < 64; i++, ncol++) {
				hdr = f[i];
				col[ncol].ev = NULL;
				for (j = 0; j < n; j++) {
					size_t len = strlen(c[j].name);

					if (strncmp(hdr, c[j].name, len))
						continue;
					if (!hdr[len])
						col[ncol].se = 0;
					else if (!strncmp(hdr + len, "_se", 3))
						col[ncol].se = (unsigned int)atoi(hdr + len + 3);
					else
						continue;
					col[ncol].ev = spm_model_event(c[j].name);
					col[ncol].bits32 = c[j].bits == 32;
				}
				if (!col[ncol].ev) {
					fprintf(stderr, "  column %s is no counter asked for\n", hdr);
					return 1;
				}
			}
			continue;
		}
		if (nf != 6 + ncol) {
			bad++;
			continue;
		}
		x = strtoull(f[0], NULL, 10);
		k = strtoull(f[2], NULL, 10);
		if (x >= 16 || k != rows[x]) {
			bad++;
			continue;
		}
		rows[x]++;
		ts_delta = strtoull(f[4], NULL, 10);
		if (k ? ts_delta != interval : *f[4] != '\0')
			bad++;
		for (i = 0; i < ncol; i++) {
			v = strtoull(f[6 + i], NULL, 10);
			if (v != spm_model_value(col[i].ev->sq, col[i].ev->event,
						 col[i].se, (unsigned int)x, k,
						 interval, col[i].bits32 ||
						 col[i].ev->sq)) {
				if (bad < 3)
					fprintf(stderr, "  XCC %llu sample %llu column %u: %llu\n",
						x, k, i, v);
				bad++;
				break;
			}
		}
	}
	return header ? 1 : bad;
}

/* Nothing of a submission is left in the fake kernel; SPM released. */
static bool fake_clean(void)
{
	bool ok = stat_of("ctx_live") == 0 && stat_of("va_live") == 0 &&
		  stat_of("va_map") == stat_of("va_unmap") &&
		  stat_of("ctx_alloc") == stat_of("ctx_free") &&
		  stat_of("gem_create") == stat_of("gem_close") &&
		  stat_of("owner") == -1;

	if (!ok)
		fprintf(stderr, "--- fake kernel: ctx %ld/%ld live %ld, va %ld/%ld live %ld, gem %ld/%ld, owner %ld\n",
			stat_of("ctx_alloc"), stat_of("ctx_free"),
			stat_of("ctx_live"), stat_of("va_map"),
			stat_of("va_unmap"), stat_of("va_live"),
			stat_of("gem_create"), stat_of("gem_close"),
			stat_of("owner"));
	return ok;
}

/*
 * -e programs the counters: the GC from the device, the start stream
 * after the first buffer, the stop stream before the last retire, both
 * run by the fake's own decoder and RLC model; the recording decodes into
 * the values that model generated, the cycle counter's deltas are the
 * programmed interval. Without a submission nothing streams.
 */
#define PROG_EVENTS "CPC_ALWAYS_COUNT,CPC_ME1_BUSY_FOR_PACKET_DECODE,SQ_WAVES"

static void test_program(void)
{
	static const struct want_counter c943[] = {
		{ "CPC_ALWAYS_COUNT", 16 }, { "CPC_ME1_BUSY_FOR_PACKET_DECODE", 16 },
		{ "SQ_WAVES", 32 } };
	static const struct want_counter c941[] = {
		{ "CPC_UTCL1_STALL_ON_TRANSLATION", 32 }, { "CPC_ALWAYS_COUNT", 32 },
		{ "SQ_BUSY_CYCLES", 32 } };
	char file[96], csv[128], cmd[PATH_MAX * 2];
	unsigned long rows[16], bad;

	snprintf(file, sizeof(file), "%s/prog.spm", params);
	snprintf(csv, sizeof(csv), "%s/prog.csv", params);

	/*
	 * GC 9.4.3, one XCC: no -g, the device says. Each job takes 5 ms on
	 * the "GPU": every sample up to the stop must still reach a buffer
	 * (the stop stream comes before the last retire).
	 */
	CHECK(run("version=1.1,xcc=1,rlc=1,fill_ms=5,cs_delay_ms=5", 0, "-q", "-t", "0.3",
		  "-T", "20", "-e", PROG_EVENTS, "-I", "32768", "-o", file,
		  NULL) == 0);
	CHECK(has("amdgpu-spm-record: device: GC 9.4.3 (AMDGPU_INFO_HW_IP_INFO ip_discovery_version 0x090403)"));
	CHECK(has("amdgpu-spm-record: started the counters: submitted "));
	CHECK(has(" as one IB at GPU VA 0x"));
	CHECK(has("amdgpu-spm-record: stopped the counters: submitted "));
	CHECK(stat_of("cs_ok") == 2 && stat_of("ib_run") == 2);
	CHECK(stat_of("ib_bad") == 0 && stat_of("vm_faults") == 0 &&
	      stat_of("ib_not_in_list") == 0 && stat_of("ring_writes") == 0);
	CHECK(stat_of("ib_violations") == 0);
	CHECK(stat_of("spm_start") == 1 && stat_of("spm_stop") == 1);
	CHECK(stat_of("samples_lost") == 0 && stat_of("samples_programmed") > 100);
	CHECK(stat_of("bos_live") == 0);
	CHECK(fake_clean());
	snprintf(cmd, sizeof(cmd), "%s --counters %s %s 2>&1", dump, csv, file);
	CHECK(capture(cmd) == 0);
	CHECK(has("counters: GC 9.4.3, 4 SEs, sample interval 32768 cycles, 320-byte samples, 3 counters\n"));
	CHECK(has("cycle counter: XCC 0: CPC_ALWAYS_COUNT equals the interval (32768) in all "));
	CHECK(has("timestamp: XCC 0: deltas from 32768 to 32768 between samples"));
	snprintf(cmd, sizeof(cmd), "cat %s", csv);
	CHECK(capture(cmd) == 0);
	bad = check_csv(c943, 3, 32768, rows);
	CHECK(bad == 0);
	/* 0.3 s at 32768 ticks of 100 MHz a sample: about 900 */
	CHECK(rows[0] > 100);
	if (bad || rows[0] <= 100)
		fprintf(stderr, "program 9.4.3: %lu bad rows of %lu\n", bad, rows[0]);
	/* The chart of these samples: one line per counter */
	CHECK(chart_ok(file, "program 9.4.3", 1000));
	CHECK(has("ok: 3 panels, 3 lines, "));
	CHECK(has(", 0 lines of grouped points, 0 ending in a partial group"));
	/*
	 * Fewer points than samples: groups of g samples, g a power of two
	 * that does not divide the count, so the last point is a partial
	 * group; at most 2P points a line end in groups of g when
	 * P * g <= n < 2P * g, P = n / g.
	 */
	{
		unsigned long n = rows[0], g = 2;

		while (n % g == 0)
			g *= 2;
		/* (a power of two has no such g: the case is left out) */
		if (n / g < 1 || !(n & (n - 1))) {
			fprintf(stderr, "program 9.4.3: %lu samples: no partial group to check\n", n);
		} else {
			CHECK(chart_ok(file, "program 9.4.3, grouped", n / g));
			CHECK(has(", 3 lines of grouped points, 3 ending in a partial group"));
			snprintf(cmd, sizeof(cmd), "%s -q --counter-svg /dev/stdout --chart-points %lu %s | grep -c 'data-group=\"%lu\"'",
				 dump, n / g, file, g);
			CHECK(capture(cmd) == 0 && !strcmp(out, "3\n"));
		}
	}

	/*
	 * Eight times the samples (about 7000 in 0.3 s): more than the chart
	 * draws one by one, so its points are means of groups.
	 */
	CHECK(run("version=1.1,xcc=1,rlc=1,fill_ms=5", 0, "-q", "-t", "0.3",
		  "-T", "20", "-e", PROG_EVENTS, "-I", "4096", "-o", file,
		  NULL) == 0);
	CHECK(stat_of("samples_programmed") > 4000);
	CHECK(chart_ok(file, "program, more samples", 1000));
	CHECK(has(", 3 lines of grouped points, "));

	/* GC 9.4.1 (8 SEs, SEGMENT_SIZE_CORE1), 32-bit CPC counters */
	CHECK(run("version=1.1,xcc=1,rlc=1,fill_ms=5,gc=9.4.1", 0, "-q", "-t",
		  "0.3", "-T", "20", "-e",
		  "CPC_UTCL1_STALL_ON_TRANSLATION:32,CPC_ALWAYS_COUNT:32,SQ_BUSY_CYCLES",
		  "-I", "16384", "-o", file, NULL) == 0);
	CHECK(has("device: GC 9.4.1 (AMDGPU_INFO_HW_IP_INFO ip_discovery_version 0x090401)"));
	CHECK(stat_of("ib_violations") == 0 && stat_of("spm_start") == 1);
	snprintf(cmd, sizeof(cmd), "%s --counters %s %s 2>&1", dump, csv, file);
	CHECK(capture(cmd) == 0);
	CHECK(has("counters: GC 9.4.1, 8 SEs, sample interval 16384 cycles"));
	CHECK(has("cycle counter: XCC 0: CPC_ALWAYS_COUNT equals the interval (16384) in all "));
	snprintf(cmd, sizeof(cmd), "cat %s", csv);
	CHECK(capture(cmd) == 0);
	bad = check_csv(c941, 3, 16384, rows);
	CHECK(bad == 0 && rows[0] > 100);

	/*
	 * A partition of two XCCs (logical 2 and 3) where the start IB
	 * reaches one: the jobs run on the ring of the second, only it
	 * streams. Not what -e asked for: exit 8, and why; the recording is
	 * written all the same. --allow-partial accepts it.
	 */
	CHECK(run("version=1.1,xcc=2,first_xcc=2,cs_xcc=1,rlc=1,fill_ms=5", 0,
		  "-q", "-t", "0.3", "-T", "20", "-e", PROG_EVENTS, "-I",
		  "32768", "-o", file, NULL) == 8);
	CHECK(has("amdgpu-spm-record: error: the counters were programmed through one compute ring, whose jobs run on one XCC: 1 of the partition's 2 XCCs streamed counter samples"));
	CHECK(has("or pass --allow-partial to accept such a recording (exit status 8)"));
	CHECK(has("XCC 2: 0 bytes"));
	CHECK(stat_of("spm_start") == 1 && stat_of("spm_stop") == 1);
	CHECK(fake_clean());
	/* ... on the first XCC's ring the same */
	CHECK(run("version=1.1,xcc=2,cs_xcc=0,rlc=1,fill_ms=5", 0, "-q", "-t",
		  "0.2", "-T", "20", "-e", PROG_EVENTS, "-o", "/dev/null",
		  NULL) == 8);
	CHECK(has("1 of the partition's 2 XCCs streamed counter samples"));
	CHECK(has("XCC 1: 0 bytes"));
	/* --allow-partial: accepted, said, exit 0 */
	CHECK(run("version=1.1,xcc=2,first_xcc=2,cs_xcc=1,rlc=1,fill_ms=5", 0,
		  "-q", "-t", "0.3", "-T", "20", "-e", PROG_EVENTS, "-I",
		  "32768", "--allow-partial", "-o", file, NULL) == 0);
	CHECK(has("amdgpu-spm-record: note: the counters were programmed through one compute ring, whose jobs run on one XCC: 1 of the partition's 2 XCCs streamed counter samples"));
	CHECK(has("(accepted: --allow-partial)"));
	CHECK(!strstr(out, "error:"));
	snprintf(cmd, sizeof(cmd), "%s --counters %s %s 2>&1", dump, csv, file);
	CHECK(capture(cmd) == 0);
	CHECK(has("cycle counter: XCC 3: CPC_ALWAYS_COUNT equals the interval (32768)"));
	CHECK(!strstr(out, "cycle counter: XCC 2"));
	snprintf(cmd, sizeof(cmd), "cat %s", csv);
	CHECK(capture(cmd) == 0);
	bad = check_csv(c943, 3, 32768, rows);
	CHECK(bad == 0 && rows[2] == 0 && rows[3] > 100);

	/* Nothing submitted, nothing streams: headers only */
	CHECK(run("version=1.1,xcc=1,rlc=1,fill_ms=5", 0, "-q", "-t", "0.2",
		  "-T", "20", "-e", PROG_EVENTS, "--no-program", "-o", file,
		  NULL) == 0);
	CHECK(stat_of("cs") == 0 && stat_of("samples_programmed") == 0);
	CHECK(has(" 0 data bytes"));
	snprintf(cmd, sizeof(cmd), "%s --counters %s %s 2>&1", dump, csv, file);
	CHECK(capture(cmd) == 0);
	CHECK(has(" shares, 0 bytes;"));
	CHECK(!strstr(out, "cycle counter:"));
	unlink(file);
	unlink(csv);
}

/* The GC version: from the device, -g checked against it. */
static void test_gc(void)
{
	/* -g that the device contradicts: nothing acquired */
	CHECK(run("version=1.1,rlc=1,gc=9.4.2", 0, "-q", "-t", "0.1", "-e",
		  PROG_EVENTS, "-g", "9.4.3", "-o", "/dev/null", NULL) == 2);
	CHECK(has("amdgpu-spm-record: --gc 9.4.3 does not match the device, which reports GC 9.4.2 (AMDGPU_INFO_HW_IP_INFO ip_discovery_version 0x090402)"));
	CHECK(stat_of("acquire") == 0 && stat_of("cs") == 0);
	/* -g that agrees; 9.4.2 needs --allow-gc-9.4.2 to program */
	CHECK(run("version=1.1,rlc=1,gc=9.4.2", 0, "-q", "-t", "0.1", "-e",
		  PROG_EVENTS, "-g", "9.4.2", "--allow-gc-9.4.2", "-o",
		  "/dev/null", NULL) == 0);
	CHECK(has("--gc 9.4.2 agrees"));
	CHECK(has("amdgpu-spm-record: warning: GC 9.4.2 (MI200): aqlprofile refuses SPM on this part"));
	CHECK(stat_of("spm_start") == 1);
	/* A GC this tool has no streams for */
	CHECK(run("version=1.1,rlc=1,gc=9.4.4", 0, "-q", "-t", "0.1", "-e",
		  PROG_EVENTS, "-o", "/dev/null", NULL) == 6);
	CHECK(has("the device is GC 9.4.4 (AMDGPU_INFO_HW_IP_INFO ip_discovery_version 0x090404): this tool programs SPM counters on GC 9.4.1, 9.4.2 and 9.4.3 only"));
	CHECK(run("version=1.1,rlc=1,gc=9.4.4", 0, "-q", "-t", "0.1", "-e",
		  PROG_EVENTS, "-g", "9.4.3", "-o", "/dev/null", NULL) == 2);
	/* No ip_discovery_version: soc15.c's revision offsets */
	CHECK(run("version=1.1,rlc=1,gc=9.4.2,ipdisc=0", 0, "-q", "-t", "0.1",
		  "-e", PROG_EVENTS, "--allow-gc-9.4.2", "-o", "/dev/null",
		  NULL) == 0);
	CHECK(has("device: GC 9.4.2 (no ip_discovery_version; DEV_INFO family 141, device 0x740c, external revision 0x3d = chip revision 0x1 + 0x3c, GFX IP 9.0)"));
	/* ... which do not tell 9.4.3 from 9.4.4: -g decides */
	CHECK(run("version=1.1,rlc=1,gc=9.4.3,ipdisc=0", 0, "-q", "-t", "0.1",
		  "-e", PROG_EVENTS, "-o", "/dev/null", NULL) == 2);
	CHECK(has("the device is GC 9.4.3 or 9.4.4 (no ip_discovery_version;"));
	CHECK(has("give --gc 9.4.3 if it is 9.4.3"));
	CHECK(run("version=1.1,rlc=1,gc=9.4.3,ipdisc=0", 0, "-q", "-t", "0.1",
		  "-e", PROG_EVENTS, "-g", "9.4.3", "-o", "/dev/null", NULL) == 0);
	CHECK(has("--gc 9.4.3 agrees"));
	CHECK(stat_of("spm_start") == 1);
}

/*
 * GC 9.4.2 (MI200): aqlprofile refuses SPM there, so programming counters
 * takes --allow-gc-9.4.2; recording without programming does not.
 */
static void test_gc_942(void)
{
	CHECK(run("version=1.1,rlc=1,gc=9.4.2", 0, "-q", "-t", "0.1", "-e",
		  PROG_EVENTS, "-o", "/dev/null", NULL) == 6);
	CHECK(has("the device is GC 9.4.2 (MI200, gfx90a), where aqlprofile refuses SPM"));
	CHECK(has("pass --allow-gc-9.4.2 to program them anyway"));
	CHECK(stat_of("acquire") == 0 && stat_of("cs") == 0);
	/* The configuration only, or the stream without -e: no option */
	CHECK(run("version=1.1,rlc=1,gc=9.4.2", 0, "-q", "-t", "0.1", "-e",
		  PROG_EVENTS, "--no-program", "-o", "/dev/null", NULL) == 0);
	CHECK(!strstr(out, "9.4.2 (MI200"));
	CHECK(stat_of("cs") == 0);
	CHECK(run("version=1.1,rlc=1,gc=9.4.2", 0, "-q", "-t", "0.1", "-o",
		  "/dev/null", NULL) == 0);
	/* With it: programmed, with a warning */
	CHECK(run("version=1.1,rlc=1,gc=9.4.2,fill_ms=5", 0, "-q", "-t", "0.2",
		  "-T", "20", "-e", PROG_EVENTS, "--allow-gc-9.4.2", "-o",
		  "/dev/null", NULL) == 0);
	CHECK(has("warning: GC 9.4.2 (MI200)"));
	CHECK(stat_of("spm_start") == 1 && stat_of("samples_programmed") > 10);
}

/*
 * The SE count comes from the device (AMDGPU_INFO_DEV_INFO
 * num_shader_engines, per XCC in 6.12), checked against the GC's layout:
 * another count is refused before ACQUIRE; a count for all of a
 * partition's XCCs (AMDGPU_INFO_HW_IP_COUNT) is taken per XCC.
 */
static void test_num_se(void)
{
	CHECK(run("version=1.1,rlc=1,gc=9.4.3,dev_num_se=8", 0, "-q", "-t",
		  "0.1", "-e", PROG_EVENTS, "-o", "/dev/null", NULL) == 6);
	CHECK(has("the device reports 8 shader engines (AMDGPU_INFO_DEV_INFO num_shader_engines; 1 XCC in this partition, AMDGPU_INFO_HW_IP_COUNT): this tool's GC 9.4.3 streams are for 4 SEs per XCC"));
	CHECK(stat_of("acquire") == 0 && stat_of("cs") == 0);
	CHECK(run("version=1.1,rlc=1,gc=9.4.1,dev_num_se=4", 0, "-q", "-t",
		  "0.1", "-e", PROG_EVENTS, "-o", "/dev/null", NULL) == 6);
	CHECK(has("the device reports 4 shader engines"));
	CHECK(has("GC 9.4.1 streams are for 8 SEs per XCC"));
	CHECK(run("version=1.1,rlc=1,gc=9.4.3,dev_num_se=2", 0, "-q", "-t",
		  "0.1", "-e", PROG_EVENTS, "--no-program", "-o", "/dev/null",
		  NULL) == 6);
	/* 8 SEs for a partition of 2 XCCs: 4 per XCC */
	CHECK(run("version=1.1,rlc=1,gc=9.4.3,xcc=2,dev_num_se=8,fill_ms=5", 0,
		  "-q", "-t", "0.2", "-T", "20", "-e", PROG_EVENTS,
		  "--allow-partial", "-o", "/dev/null", NULL) == 0);
	CHECK(has("note: the device reports 8 shader engines for its 2 XCCs: 4 per XCC"));
	CHECK(stat_of("spm_start") == 1 && stat_of("ib_violations") == 0);
	/* What it reports per XCC: no note */
	CHECK(run("version=1.1,rlc=1,gc=9.4.3,xcc=2,fill_ms=5", 0, "-q", "-t",
		  "0.2", "-T", "20", "-e", PROG_EVENTS, "--allow-partial", "-o",
		  "/dev/null", NULL) == 0);
	CHECK(!strstr(out, "shader engines"));
}

/* A submission that fails or never finishes: said, unwound, released. */
static void test_submit_errors(void)
{
	char file[96], cmd[PATH_MAX * 2];

	snprintf(file, sizeof(file), "%s/err.spm", params);
	/* The start stream's CS fails: nothing recorded, exit 1 */
	CHECK(run("version=1.1,rlc=1,fail=cs:ENOMEM", 0, "-q", "-t", "0.2",
		  "-e", PROG_EVENTS, "-o", file, NULL) == 1);
	CHECK(has("amdgpu-spm-record: submitting the start stream failed: amdgpu_cs_submit_raw2: Cannot allocate memory"));
	CHECK(has("the counters were not started"));
	CHECK(stat_of("release") == 1 && stat_of("spm_start") == 0);
	CHECK(fake_clean());
	/* It never finishes: a timeout, the same unwinding */
	CHECK(run("version=1.1,rlc=1,cs_hang=1", 0, "-q", "-t", "0.2", "-e",
		  PROG_EVENTS, "-o", file, NULL) == 1);
	CHECK(has("the start stream did not finish within 5 s (its fence did not signal)"));
	CHECK(stat_of("wait_busy") == 1 && stat_of("release") == 1);
	CHECK(fake_clean());
	/* The stop stream fails: the recording is complete, RELEASE stops */
	CHECK(run("version=1.1,rlc=1,fill_ms=5,fail=cs:ENOMEM:2", 0, "-q", "-t",
		  "0.2", "-T", "20", "-e", PROG_EVENTS, "-o", file, NULL) == 1);
	CHECK(has("started the counters"));
	CHECK(has("submitting the stop stream failed: amdgpu_cs_submit_raw2: Cannot allocate memory"));
	CHECK(has("RELEASE stops counting on every XCC of the partition all the same"));
	CHECK(stat_of("release") == 1 && stat_of("spm_stop") == 0);
	CHECK(fake_clean());
	snprintf(cmd, sizeof(cmd), "%s %s 2>&1", dump, file);
	CHECK(capture(cmd) == 0);
	CHECK(has("complete: "));
	unlink(file);
}

/* The kernel stopped SPM (ring registers changed): said as such, exit 1. */
static void test_stopped(void)
{
	/* The EIO of the 4th call ends the run; -t 60 bounds one gone wrong */
	CHECK(run("version=1.1,xcc=2,bytes=4096,fill_ms=5,tamper_call=4", 0,
		  "-q", "-t", "60", "-o", "/dev/null", NULL) == 1);
	CHECK(stat_of("set_dest_buf") == 4);
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
	snprintf(svg_check, sizeof(svg_check), "%s/tests/check_counter_svg.py",
		 self);
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
	snprintf(stats, sizeof(stats), "%s/fake.stats", params);

	test_refusals();
	test_gtt_buffers();
	test_memlock();
	test_stopped();
	test_loss();
	test_clock();
	test_decode();
	test_program();
	test_gc();
	test_gc_942();
	test_num_se();
	test_submit_errors();

	put_param("spm_paranoid", NULL);
	unlink(stats);
	rmdir(params);
	return unit_done();
}
