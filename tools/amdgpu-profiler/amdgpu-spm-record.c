// SPDX-License-Identifier: MIT
/*
 * Copyright 2026 The amdgpu profiler series authors
 *
 * amdgpu-spm-record: stream the Stream Performance Monitor (SPM) data of
 * one amdgpu partition into a file.
 *
 * A dedicated thread loops SET_DEST_BUF over two or three rotating buffers:
 * each call waits (up to --timeout ms) for the buffer the kernel is filling,
 * retires it and installs the next one; the retired buffer is then written
 * out while the kernel fills the next. The main thread prints progress.
 *
 * The buffers are GTT BOs of the render node, mapped into the process
 * (what libdrm_amdgpu's amdgpu_bo_alloc() and amdgpu_bo_cpu_map() do, in
 * their ioctls): the kernel writes them without pinning them, so they do
 * not count against RLIMIT_MEMLOCK. Where that fails, anonymous memory,
 * which the kernel pins and charges.
 *
 * With -e it programs and starts SPM counters: the start stream of
 * spm_program.c, submitted through libdrm_amdgpu on a compute ring of the
 * partition (spm_submit.c) after the first buffer is installed, the stop
 * stream before the last one is retired.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "amdgpu_spm_uapi.h"	/* first: explains a missing UAPI_INCLUDE */
#include "amdgpu_profiler.h"
#include "amdgpu_spm_params.h"
#include "spm_file.h"
#include "spm_program.h"
#include "spm_submit.h"

#include <drm/drm.h>

#define MAX_BUFFERS 3

_Static_assert(SPM_FILE_MAX_COUNTERS == SPM_MAX_COUNTERS, "config record holds a whole spm_config");
/*
 * Default buffer sizes. GTT BOs are not pinned by the kernel's copy path
 * and cost no RLIMIT_MEMLOCK. Anonymous memory is pinned and charged to
 * it unless the process has CAP_IPC_LOCK (CAP_PERFMON, which profiling
 * needs, does not include it), and the kernel keeps the last three
 * pinned: 3 x 2 MiB stays within the default limit of 8 MiB with room for
 * the process's other locked memory.
 */
#define DEFAULT_BUF_SIZE_GTT	(8u << 20)
#define DEFAULT_BUF_SIZE_ANON	(2u << 20)

enum buffer_memory {
	MEM_GTT,	/* GTT BOs, anonymous memory if they cannot be had */
	MEM_GTT_ONLY,	/* GTT BOs or nothing */
	MEM_ANON,	/* anonymous memory */
};

/* Exit statuses, documented in README.md. */
enum {
	EXIT_OK = 0,
	EXIT_ERROR = 1,		/* I/O or unexpected ioctl failure */
	EXIT_USAGE = 2,
	EXIT_NODEV = 3,		/* no amdgpu device (ENODEV) / no profiler interface */
	EXIT_BUSY = 4,
	EXIT_PERM = 5,
	EXIT_NOTSUPP = 6,
	EXIT_DATA_LOSS = 7,	/* only with --fail-on-loss */
	EXIT_PARTIAL = 8,	/* -e: not every XCC streamed, no --allow-partial */
};

struct options {
	const char *device;
	const char *output;
	double duration;	/* seconds, 0 = until interrupted */
	double interval;	/* progress line period, seconds */
	unsigned int buffers;
	uint32_t buf_size;
	uint32_t timeout_ms;
	unsigned int xcc_count;	/* 0 = infer */
	enum buffer_memory memory;
	bool size_given;	/* --buf-size */
	bool quiet;
	bool fail_on_loss;
	/* -e, -g, -I: the counter configuration recorded for decoding */
	struct spm_counter_req reqs[SPM_MAX_COUNTERS];
	char req_names[SPM_MAX_COUNTERS][SPM_FILE_COUNTER_NAME];
	unsigned int num_reqs;
	enum spm_gc_version gc;		/* 0: not given */
	unsigned long sample_interval;	/* 0: not given (default) */
	bool interval_given;
	bool no_program;		/* --no-program: record the configuration only */
	bool allow_partial;		/* --allow-partial: fewer XCCs streaming is no error */
	bool allow_942;			/* --allow-gc-9.4.2: program counters on MI200 */
};

struct xcc_stats {
	uint32_t xcc;		/* logical XCC id of this share position */
	uint64_t bytes;
	uint64_t loss_buffers;	/* shares that lost samples */
	uint64_t full_shares;	/* shares that filled up (not a loss) */
	uint32_t last_seq;	/* kernel's seq of the last share, 0 none */
	uint64_t lost_buffers;	/* gaps in the kernel's seq */
};

/* A GPU clock reading and the host time it was taken at. */
struct clock_pair {
	uint64_t gpu;		/* AMDGPU_INFO_TIMESTAMP; 0 if it failed */
	uint64_t host_ns;	/* CLOCK_BOOTTIME, middle of the query */
	uint32_t window_ns;	/* how long the query took: the pairing's bound */
};

struct recorder {
	struct options opt;
	int fd;
	uint32_t version;
	FILE *out;
	void *buf[MAX_BUFFERS];
	bool buf_gtt;		/* the buffers are GTT BOs */
	uint64_t installed_ns[MAX_BUFFERS];	/* when each was installed */
	struct clock_pair clock[MAX_BUFFERS];	/* read when each was installed */
	uint32_t counter_khz;	/* AMDGPU_INFO_DEV_INFO.gpu_counter_freq */

	pthread_mutex_t lock;	/* guards everything below */
	struct xcc_stats xcc[AMDGPU_PROF_SPM_MAX_XCC];
	unsigned int xcc_count;	/* 0 while unknown */
	uint64_t total_bytes;
	uint64_t buffers_retired;
	uint64_t loss_buffers;		/* with lost samples */
	uint64_t full_buffers;		/* with a share that filled up */
	uint64_t full_shares;
	uint64_t lost_buffers;		/* gaps: the most any XCC shows */
	uint64_t unparsed_buffers;	/* malformed headers */
	uint64_t undecided_buffers;	/* data before the XCC count was known */
	int thread_err;		/* -errno that stopped the thread */
	const char *thread_err_what;
	bool thread_err_ioctl;	/* thread_err came from SET_DEST_BUF */
	bool done;

	/* -e without --no-program: the counters' streams and their submission */
	amdgpu_device_handle dev;
	bool program;
	uint32_t start_ib[1024], stop_ib[64];
	int start_dw, stop_dw;
	bool started;		/* the start stream ran */
	struct spm_device_gc gcinfo;	/* what the device said (-e) */
	bool have_gcinfo;
	bool stop_done;		/* the stop stream was submitted (or tried) */
	int stop_ret;
	struct spm_submit_info stop_info;
};

static volatile sig_atomic_t stop_requested;

static const char *prog = "amdgpu-spm-record";

static const char short_usage[] =
"Usage: amdgpu-spm-record [-d DEVICE] [-o FILE] [-t SECONDS] [-i SECONDS] [-n 2|3]\n"
"         [-s SIZE] [-T MS] [-x XCCS] [-m KIND] [--fail-on-loss] [-q] [-e NAME[:BITS],...\n"
"         [-g 9.4.x] [-I CYCLES] [--no-program] [--allow-partial] [--allow-gc-9.4.2]]\n"
"Try 'amdgpu-spm-record --help' for more information.\n";

static void die(int status, const char *fmt, ...)
	__attribute__((format(printf, 2, 3), noreturn));

static void die(int status, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(status);
}

/* A bad command line: say what is wrong, then how to call the tool. */
static void usage_error(const char *fmt, ...)
	__attribute__((format(printf, 1, 2), noreturn));

static void usage_error(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	fputs(short_usage, stderr);
	exit(EXIT_USAGE);
}

static void usage(FILE *f)
{
	fprintf(f,
"Usage: %s [OPTION]...\n"
"Record the Stream Performance Monitor (SPM) stream of an amdgpu partition.\n"
"\n"
"  -d, --device PATH     render node of the partition to profile\n"
"                        (default: the first amdgpu render node)\n"
"  -o, --output FILE     write the stream to FILE (default: spm.dat;\n"
"                        '-' for stdout, '/dev/null' to only count)\n"
"  -t, --duration SEC    stop after SEC seconds (default: until SIGINT)\n"
"  -i, --interval SEC    progress line period (default: 1)\n"
"  -n, --buffers N       rotating destination buffers, 2 or 3 (default: 3)\n"
"  -s, --buf-size SIZE   size of each buffer in bytes, suffix K or M allowed,\n"
"                        rounded down to 32 bytes: from 64 per XCC of the\n"
"                        partition to 256M (default: 8M in GTT, 2M in\n"
"                        anonymous memory, so that the pinned buffers fit\n"
"                        the default RLIMIT_MEMLOCK)\n"
"  -m, --memory KIND     buffer memory: gtt (default: GTT BOs of the render\n"
"                        node, not pinned, no RLIMIT_MEMLOCK; anonymous\n"
"                        memory if they cannot be had), gtt-only, or anon\n"
"                        (pinned by the kernel, charged to RLIMIT_MEMLOCK)\n"
"  -T, --timeout MS      how long each SET_DEST_BUF waits for the current\n"
"                        buffer to fill, 0 to 4294967295 (default: 100)\n"
"  -x, --xcc-count N     XCCs of the partition (default: inferred from the\n"
"                        share headers of the first buffers with data)\n"
"  -e, --events LIST     SPM counters, NAME[:BITS],... (BITS 16 or 32; see\n"
"                        below): programs and starts them on a compute ring\n"
"                        of the partition after the first buffer is\n"
"                        installed, stops them at the end, and stores their\n"
"                        configuration in the recording, so that\n"
"                        amdgpu-spm-dump decodes the samples\n"
"  -g, --gc VERSION      GC version, 9.4.1 (MI100), 9.4.2 (MI200) or 9.4.3\n"
"                        (MI300): checked against what the device reports,\n"
"                        needed only where the kernel cannot tell (no\n"
"                        ip_discovery_version: 9.4.3 or 9.4.4)\n"
"      --no-program      with -e: record the configuration only; something\n"
"                        else programs the counters\n"
"      --allow-partial   with -e: do not fail (status 8) when fewer XCCs of the\n"
"                        partition streamed counter samples than it has (the\n"
"                        start stream runs on one compute ring, of one XCC)\n"
"      --allow-gc-9.4.2  with -e: program the counters on GC 9.4.2 (MI200),\n"
"                        where aqlprofile refuses SPM; recording without -e or\n"
"                        with --no-program needs no option\n"
"  -I, --sample-interval CYCLES\n"
"                        SPM sample interval in SCLK cycles, rounded to a\n"
"                        multiple of 32 within 32..65504 (default 8192);\n"
"                        only with -e\n"
"      --fail-on-loss    exit with status 7 if samples or buffers were lost\n"
"                        (a share that filled up is not counted: its rest\n"
"                        went on in the next buffer)\n"
"  -q, --quiet           no progress line\n"
"  -h, --help            show this help and exit\n"
"\n"
"Exit status: 0 ok, 1 error, 2 usage, 3 no amdgpu device (none, gone, or\n"
"without an SPM VMID: ENODEV) or no profiler interface, 4 SPM busy, 5 not\n"
"permitted, 6 SPM not supported, 7 samples lost (with --fail-on-loss), 8 with\n"
"-e not every XCC of the partition streamed counter samples (without\n"
"--allow-partial).\n", prog);
	{
		const struct spm_counter_info *t;
		unsigned int n, i;

		t = spm_counter_table(&n);
		fprintf(f, "\nCounters for -e (default width; * = 32-bit only; SE = one value per\nshader engine):\n");
		for (i = 0; i < n; i++)
			fprintf(f, "  %-32s %2u%s %-6s %s\n", t[i].name,
				t[i].default_bits, t[i].only_32bit ? "*" : " ",
				t[i].segment == SPM_SEG_SE ? "SE" : "global",
				t[i].what);
	}
}

static int parse_size(const char *s, uint32_t *out)
{
	unsigned long long v;
	char *end;

	if (*s == '-' || *s == '+')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || end == s)
		return -1;
	switch (*end) {
	case 'k': case 'K':
		if (v > AMDGPU_PROF_SPM_MAX_BUF_SIZE >> 10)
			return -1;
		v <<= 10;
		end++;
		break;
	case 'm': case 'M':
		if (v > AMDGPU_PROF_SPM_MAX_BUF_SIZE >> 20)
			return -1;
		v <<= 20;
		end++;
		break;
	default:
		break;
	}
	if (*end || v == 0 || v > AMDGPU_PROF_SPM_MAX_BUF_SIZE)
		return -1;
	*out = (uint32_t)v;
	return 0;
}

static int parse_uint(const char *s, unsigned long max, unsigned long *out)
{
	unsigned long v;
	char *end;

	if (*s == '-' || *s == '+')
		return -1;
	errno = 0;
	v = strtoul(s, &end, 0);
	if (errno || end == s || *end || v > max)
		return -1;
	*out = v;
	return 0;
}

static int parse_seconds(const char *s, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	/* "nan" and "inf" parse; neither is a duration. */
	if (errno || end == s || *end || !isfinite(v) || v < 0 || v > 1e9)
		return -1;
	*out = v;
	return 0;
}

/* -e NAME[:BITS],...: names are checked by spm_config_build() later. */
static void parse_events(const char *arg, struct options *o)
{
	const char *p = arg;

	o->num_reqs = 0;
	while (*p) {
		const char *end = strchr(p, ','), *colon;
		size_t len = end ? (size_t)(end - p) : strlen(p);
		char *name;

		if (o->num_reqs == SPM_MAX_COUNTERS)
			usage_error("invalid --events '%s': at most %u counters",
				    arg, SPM_MAX_COUNTERS);
		colon = memchr(p, ':', len);
		name = o->req_names[o->num_reqs];
		if (!len || (colon ? (size_t)(colon - p) : len) == 0 ||
		    (colon ? (size_t)(colon - p) : len) >= SPM_FILE_COUNTER_NAME)
			usage_error("invalid --events '%s': NAME[:BITS],... with names of at most %u characters",
				    arg, SPM_FILE_COUNTER_NAME - 1);
		memcpy(name, p, colon ? (size_t)(colon - p) : len);
		name[colon ? (size_t)(colon - p) : len] = '\0';
		o->reqs[o->num_reqs].name = name;
		o->reqs[o->num_reqs].bits = 0;
		if (colon) {
			size_t blen = len - (size_t)(colon - p) - 1;

			if (blen == 2 && !strncmp(colon + 1, "16", 2))
				o->reqs[o->num_reqs].bits = 16;
			else if (blen == 2 && !strncmp(colon + 1, "32", 2))
				o->reqs[o->num_reqs].bits = 32;
			else
				usage_error("invalid --events '%s': BITS is 16 or 32",
					    arg);
		}
		o->num_reqs++;
		p += len;
		if (*p == ',' && !*++p)
			usage_error("invalid --events '%s': empty name", arg);
	}
	if (!o->num_reqs)
		usage_error("invalid --events '': give at least one counter");
}

/* The valid counter names, for an error message. */
static void list_counters(void)
{
	const struct spm_counter_info *t;
	unsigned int n, i;

	t = spm_counter_table(&n);
	fprintf(stderr, "%s: counters (default width; * = 32-bit only):", prog);
	for (i = 0; i < n; i++)
		fprintf(stderr, " %s:%u%s", t[i].name, t[i].default_bits,
			t[i].only_32bit ? "*" : "");
	fputc('\n', stderr);
}

/*
 * -e, -I into a configuration for @gc with @num_se SEs per XCC (0: the
 * GC's); a usage error if it cannot be built.
 */
static void build_config(const struct options *o, enum spm_gc_version gc,
			 unsigned int num_se, struct spm_config *cfg)
{
	unsigned int i, j;
	int ret;

	ret = spm_config_build(cfg, gc, num_se, o->reqs, o->num_reqs,
			       (unsigned int)o->sample_interval);
	if (ret == -ERANGE)
		die(EXIT_NOTSUPP, "cannot lay the counters out for %u SEs per XCC: GC %x.%x.%x has %u",
		    num_se, gc >> 16, (gc >> 8) & 0xff, gc & 0xff,
		    spm_gc_num_se(gc));
	if (!ret)
		return;
	fprintf(stderr, "%s: invalid --events: ", prog);
	for (i = 0; i < o->num_reqs; i++) {
		const struct spm_counter_info *info =
			spm_counter_find(o->reqs[i].name);

		if (!info) {
			fprintf(stderr, "unknown counter '%s'\n", o->reqs[i].name);
			goto list;
		}
		for (j = 0; j < i; j++)
			if (spm_counter_find(o->reqs[j].name) == info) {
				fprintf(stderr, "%s given twice\n", info->name);
				goto list;
			}
		if (o->reqs[i].bits == 16 && info->only_32bit) {
			fprintf(stderr, "%s is programmed 32-bit only\n",
				info->name);
			goto list;
		}
	}
	if (ret == -E2BIG)
		fprintf(stderr, "more counters than the SPM blocks have: at most four 16-bit or two 32-bit CPC counters and one SQ counter\n");
	else
		fprintf(stderr, "the counters of one block (CPC_*, SQ_*) must have the same width\n");
list:
	list_counters();
	fputs(short_usage, stderr);
	exit(EXIT_USAGE);
}

static void parse_options(int argc, char **argv, struct options *o)
{
	static const struct option longopts[] = {
		{ "device", required_argument, NULL, 'd' },
		{ "output", required_argument, NULL, 'o' },
		{ "duration", required_argument, NULL, 't' },
		{ "interval", required_argument, NULL, 'i' },
		{ "buffers", required_argument, NULL, 'n' },
		{ "buf-size", required_argument, NULL, 's' },
		{ "timeout", required_argument, NULL, 'T' },
		{ "xcc-count", required_argument, NULL, 'x' },
		{ "memory", required_argument, NULL, 'm' },
		{ "fail-on-loss", no_argument, NULL, 'L' },
		{ "events", required_argument, NULL, 'e' },
		{ "gc", required_argument, NULL, 'g' },
		{ "sample-interval", required_argument, NULL, 'I' },
		{ "no-program", no_argument, NULL, 'P' },
		{ "allow-partial", no_argument, NULL, 'A' },
		{ "allow-gc-9.4.2", no_argument, NULL, 'G' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	unsigned long v;
	int c;

	memset(o, 0, sizeof(*o));
	o->output = "spm.dat";
	o->interval = 1.0;
	o->buffers = 3;
	o->buf_size = DEFAULT_BUF_SIZE_GTT;
	o->timeout_ms = 100;
	o->memory = MEM_GTT;

	while ((c = getopt_long(argc, argv, "d:o:t:i:n:s:T:x:m:e:g:I:qh", longopts,
				NULL)) != -1) {
		switch (c) {
		case 'd':
			o->device = optarg;
			break;
		case 'o':
			o->output = optarg;
			break;
		case 't':
			if (parse_seconds(optarg, &o->duration))
				usage_error("invalid --duration '%s': seconds from 0 to 1e9, fractions allowed",
					    optarg);
			break;
		case 'i':
			if (parse_seconds(optarg, &o->interval) ||
			    o->interval < 0.01)
				usage_error("invalid --interval '%s': seconds from 0.01 to 1e9",
					    optarg);
			break;
		case 'n':
			if (parse_uint(optarg, MAX_BUFFERS, &v) || v < 2)
				usage_error("invalid --buffers '%s': 2 or 3",
					    optarg);
			o->buffers = (unsigned int)v;
			break;
		case 's':
			if (parse_size(optarg, &o->buf_size))
				usage_error("invalid --buf-size '%s': bytes from 64 per XCC to 256M (268435456), suffix K or M allowed",
					    optarg);
			o->size_given = true;
			break;
		case 'm':
			if (!strcmp(optarg, "gtt"))
				o->memory = MEM_GTT;
			else if (!strcmp(optarg, "gtt-only"))
				o->memory = MEM_GTT_ONLY;
			else if (!strcmp(optarg, "anon"))
				o->memory = MEM_ANON;
			else
				usage_error("invalid --memory '%s': gtt, gtt-only or anon",
					    optarg);
			break;
		case 'T':
			if (parse_uint(optarg, UINT32_MAX, &v))
				usage_error("invalid --timeout '%s': milliseconds from 0 to 4294967295",
					    optarg);
			o->timeout_ms = (uint32_t)v;
			break;
		case 'x':
			if (parse_uint(optarg, AMDGPU_PROF_SPM_MAX_XCC, &v) || !v)
				usage_error("invalid --xcc-count '%s': 1 to %u",
					    optarg, AMDGPU_PROF_SPM_MAX_XCC);
			o->xcc_count = (unsigned int)v;
			break;
		case 'L':
			o->fail_on_loss = true;
			break;
		case 'e':
			parse_events(optarg, o);
			break;
		case 'g':
			if (!strcmp(optarg, "9.4.1"))
				o->gc = SPM_GC_9_4_1;
			else if (!strcmp(optarg, "9.4.2"))
				o->gc = SPM_GC_9_4_2;
			else if (!strcmp(optarg, "9.4.3"))
				o->gc = SPM_GC_9_4_3;
			else
				usage_error("invalid --gc '%s': 9.4.1, 9.4.2 or 9.4.3",
					    optarg);
			break;
		case 'I':
			if (parse_uint(optarg, SPM_INTERVAL_MAX, &v) ||
			    v < SPM_INTERVAL_MIN)
				usage_error("invalid --sample-interval '%s': SCLK cycles from %u to %u",
					    optarg, SPM_INTERVAL_MIN,
					    SPM_INTERVAL_MAX);
			o->sample_interval = v;
			o->interval_given = true;
			break;
		case 'P':
			o->no_program = true;
			break;
		case 'A':
			o->allow_partial = true;
			break;
		case 'G':
			o->allow_942 = true;
			break;
		case 'q':
			o->quiet = true;
			break;
		case 'h':
			usage(stdout);
			exit(EXIT_OK);
		default:
			/* getopt_long() said what was wrong. */
			fputs(short_usage, stderr);
			exit(EXIT_USAGE);
		}
	}
	if (optind < argc)
		usage_error("unexpected argument '%s'", argv[optind]);
	if (!o->num_reqs && (o->gc || o->interval_given || o->no_program ||
			     o->allow_partial || o->allow_942))
		usage_error("--gc, --sample-interval, --no-program, --allow-partial and --allow-gc-9.4.2 go with --events");
	if (!o->size_given && o->memory == MEM_ANON)
		o->buf_size = DEFAULT_BUF_SIZE_ANON;
	o->buf_size -= o->buf_size % AMDGPU_PROF_SPM_LINE_SIZE;
	if (o->buf_size < amdgpu_prof_spm_min_buf_size(o->xcc_count ?
						  o->xcc_count : 1))
		usage_error("--buf-size %u is too small: at least %u bytes for %u XCC%s (a 32-byte header and a 32-byte line each)",
			    o->buf_size,
			    amdgpu_prof_spm_min_buf_size(o->xcc_count ?
						    o->xcc_count : 1),
			    o->xcc_count ? o->xcc_count : 1,
			    o->xcc_count > 1 ? "s" : "");
}

/* Returns true if @fd is a DRM device driven by amdgpu. */
static bool is_amdgpu(int fd)
{
	struct drm_version v;
	char name[32];

	memset(&v, 0, sizeof(v));
	memset(name, 0, sizeof(name));
	v.name = name;
	v.name_len = sizeof(name) - 1;
	if (ioctl(fd, DRM_IOCTL_VERSION, &v))
		return false;
	return v.name_len == strlen("amdgpu") && !strcmp(name, "amdgpu");
}

static int open_device(const char *path)
{
	DIR *dir;
	struct dirent *de;
	int best = INT_MAX;
	int fd;

	if (path) {
		fd = open(path, O_RDWR | O_CLOEXEC);
		if (fd < 0) {
			if (errno == ENOENT || errno == ENXIO || errno == ENODEV)
				die(EXIT_NODEV, "%s: no such device: there is no amdgpu device here",
				    path);
			die(EXIT_NODEV, "cannot open %s: %s", path,
			    strerror(errno));
		}
		if (!is_amdgpu(fd))
			die(EXIT_NODEV, "%s is not an amdgpu DRM device", path);
		return fd;
	}

	/* Pick the lowest-numbered renderD* node that amdgpu drives. */
	dir = opendir("/dev/dri");
	if (!dir)
		die(EXIT_NODEV, "no amdgpu device found: /dev/dri does not exist (no GPU, or the amdgpu driver is not loaded)");
	while ((de = readdir(dir))) {
		char p[PATH_MAX];
		unsigned long minor;
		char *end;

		if (strncmp(de->d_name, "renderD", 7))
			continue;
		minor = strtoul(de->d_name + 7, &end, 10);
		if (*end || minor >= (unsigned long)best)
			continue;
		snprintf(p, sizeof(p), "/dev/dri/%s", de->d_name);
		fd = open(p, O_RDWR | O_CLOEXEC);
		if (fd < 0)
			continue;
		if (is_amdgpu(fd))
			best = (int)minor;
		close(fd);
	}
	closedir(dir);
	if (best == INT_MAX)
		die(EXIT_NODEV, "no amdgpu device found: no /dev/dri/renderD* node is driven by amdgpu");

	{
		char p[PATH_MAX];

		snprintf(p, sizeof(p), "/dev/dri/renderD%d", best);
		fd = open(p, O_RDWR | O_CLOEXEC);
		if (fd < 0)
			die(EXIT_NODEV, "cannot open %s: %s", p, strerror(errno));
		fprintf(stderr, "%s: using %s\n", prog, p);
	}
	return fd;
}

static int status_for(int err)
{
	switch (-err) {
	case EBUSY:
		return EXIT_BUSY;
	case EPERM:
		return EXIT_PERM;
	case EOPNOTSUPP:
		return EXIT_NOTSUPP;
	case ENODEV:	/* the device is gone, or (ACQUIRE) has no SPM VMID */
		return EXIT_NODEV;
	default:
		return EXIT_ERROR;
	}
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The clock of the kernel's share headers (uAPI 1.1) and of the file */
static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_BOOTTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* One AMDGPU_INFO query into @out; 0 or -errno. */
static int query_info(int fd, uint32_t query, void *out, uint32_t size)
{
	struct drm_amdgpu_info q;

	memset(&q, 0, sizeof(q));
	q.return_pointer = (uintptr_t)out;
	q.return_size = size;
	q.query = query;
	return ioctl(fd, DRM_IOCTL_AMDGPU_INFO, &q) ? -errno : 0;
}

/*
 * The GPU clock counter (AMDGPU_INFO_TIMESTAMP, the one ROCm's KFD pairs
 * with CLOCK_BOOTTIME in AMDKFD_IOC_GET_CLOCK_COUNTERS) read between two
 * readings of the host clock, so that GPU times map to host times within
 * @window_ns.
 */
static void read_clock(int fd, struct clock_pair *c)
{
	uint64_t before = now_ns(), after;

	memset(c, 0, sizeof(*c));
	if (query_info(fd, AMDGPU_INFO_TIMESTAMP, &c->gpu, sizeof(c->gpu)))
		c->gpu = 0;
	after = now_ns();
	c->host_ns = before + (after - before) / 2;
	c->window_ns = after - before > UINT32_MAX ? UINT32_MAX :
		       (uint32_t)(after - before);
}

/*
 * Called by the thread for each retired buffer: the one in @slot, retired
 * at @retired_ns with @bytes and @loss_word as SET_DEST_BUF reported them.
 * Every share becomes a record, empty or not, so that the file tells which
 * XCC each share belongs to and when it was filled (see spm_file.h).
 *
 * Loss is counted per buffer: samples lost (AMDGPU_SPM_LOSS_SAMPLES of the
 * word, the OR of the shares' words); a share that only filled up
 * (AMDGPU_SPM_LOSS_FULL) is counted apart, as its rest went on in the next
 * buffer; a buffer missing from the kernel's sequence is missing from
 * every XCC's, and is counted once.
 */
static int consume(struct recorder *r, unsigned int slot, uint32_t bytes,
		   uint32_t loss_word, uint64_t retired_ns)
{
	const unsigned char *buf = r->buf[slot];
	struct amdgpu_prof_spm_share shares[AMDGPU_PROF_SPM_MAX_XCC];
	bool loss = amdgpu_spm_lost_samples(loss_word, r->version);
	uint64_t seq, gaps = 0;
	unsigned int n, i;

	pthread_mutex_lock(&r->lock);
	seq = r->buffers_retired++;
	r->total_bytes += bytes;
	if (loss)
		r->loss_buffers++;
	if (r->version >= AMDGPU_PROFILER_VERSION_1_1 &&
	    (loss_word & AMDGPU_SPM_LOSS_FULL))
		r->full_buffers++;
	n = r->xcc_count;
	pthread_mutex_unlock(&r->lock);

	if (!n) {
		int c = amdgpu_prof_spm_infer_xcc_count(buf, r->opt.buf_size,
						   r->version, bytes, loss);
		/*
		 * A 1.1 kernel states the count in every header. From a 1.0
		 * one commit to a count only once the data decides it: while
		 * nothing has been copied every count fits equally well.
		 */
		if (c > 0 && (bytes || r->version >= AMDGPU_PROFILER_VERSION_1_1)) {
			n = (unsigned int)c;
			pthread_mutex_lock(&r->lock);
			r->xcc_count = n;
			pthread_mutex_unlock(&r->lock);
		}
	}
	if (!n) {
		/* Nothing to lose while nothing was copied. */
		if (bytes || loss) {
			pthread_mutex_lock(&r->lock);
			r->undecided_buffers++;
			pthread_mutex_unlock(&r->lock);
		}
		return 0;
	}
	if (amdgpu_prof_spm_parse_shares(buf, r->opt.buf_size, n, r->version,
				    shares)) {
		pthread_mutex_lock(&r->lock);
		r->unparsed_buffers++;
		pthread_mutex_unlock(&r->lock);
		return 0;
	}

	for (i = 0; i < n; i++) {
		const struct amdgpu_prof_spm_share *s = &shares[i];
		struct spm_record rec = {
			.type = SPM_RECORD_SHARE,
			.flags = (s->data_loss ? SPM_RECORD_LOSS : 0) |
				 (s->has_info ? SPM_RECORD_KERNEL_INFO : 0) |
				 (s->full ? SPM_RECORD_FULL : 0) |
				 (r->clock[slot].gpu ? SPM_RECORD_GPU_CLOCK : 0),
			.buffer = (uint32_t)seq,
			.bytes = s->bytes,
			.xcc = (uint16_t)s->xcc,
			.share = (uint8_t)i,
			.num_shares = (uint8_t)n,
			.seq = s->seq,
			.start_ns = s->has_info ? s->start_ns :
				    r->installed_ns[slot],
			.last_ns = s->has_info && s->bytes ?
				   s->start_ns + (uint64_t)s->last_us * 1000u : 0,
			.installed_ns = r->installed_ns[slot],
			.retired_ns = retired_ns,
			.last_us = s->last_us,
			.gpu_clock = r->clock[slot].gpu,
			.gpu_clock_host_ns = r->clock[slot].gpu ?
					     r->clock[slot].host_ns : 0,
			.gpu_clock_window_ns = r->clock[slot].gpu ?
					       r->clock[slot].window_ns : 0,
		};
		struct xcc_stats *x = &r->xcc[i];

		if (spm_file_write_record(r->out, &rec, buf + s->data_offset))
			return -EIO;
		pthread_mutex_lock(&r->lock);
		x->xcc = s->xcc;
		x->bytes += s->bytes;
		if (s->data_loss)
			x->loss_buffers++;
		if (s->full) {
			x->full_shares++;
			r->full_shares++;
		}
		/* The kernel numbers each XCC's buffers from 1: a gap is a loss. */
		if (s->has_info && s->seq > x->last_seq + 1) {
			x->lost_buffers += s->seq - x->last_seq - 1;
			if (s->seq - x->last_seq - 1 > gaps)
				gaps = s->seq - x->last_seq - 1;
		}
		if (s->has_info)
			x->last_seq = s->seq;
		pthread_mutex_unlock(&r->lock);
	}
	pthread_mutex_lock(&r->lock);
	r->lost_buffers += gaps;
	pthread_mutex_unlock(&r->lock);
	return 0;
}

/* SET_DEST_BUF that survives signals: restart with the time left. */
static int set_dest_buf(struct recorder *r, void *buf, uint32_t timeout,
			uint32_t *bytes, uint32_t *loss)
{
	int ret;

	do {
		ret = amdgpu_spm_fd_set_dest_buf(r->fd, buf,
						 buf ? r->opt.buf_size : 0,
						 &timeout, bytes, loss);
	} while (ret == -EINTR);
	return ret;
}

/*
 * The stop stream, once, before the last buffer is retired: the samples
 * up to the stop still reach it. Called by the thread, or by main after
 * the thread ended early.
 */
static void stop_counters(struct recorder *r)
{
	if (!r->program || !r->started || r->stop_done)
		return;
	r->stop_done = true;
	r->stop_ret = spm_submit_ib(r->dev, r->stop_ib, (uint32_t)r->stop_dw,
				    SPM_SUBMIT_TIMEOUT_NS, &r->stop_info);
}

/* Runs with buffer 0 installed (by main, before the counters started). */
static void *record_thread(void *arg)
{
	struct recorder *r = arg;
	unsigned int cur = 0, next;
	uint32_t bytes, loss;
	int ret;

	while (!stop_requested) {
		uint64_t t;

		next = (cur + 1) % r->opt.buffers;
		amdgpu_prof_spm_clear_header_slots(r->buf[next], r->opt.buf_size);
		ret = set_dest_buf(r, r->buf[next], r->opt.timeout_ms, &bytes,
				   &loss);
		if (ret)
			goto fail_install;
		t = now_ns();
		r->installed_ns[next] = t;
		read_clock(r->fd, &r->clock[next]);
		ret = consume(r, cur, bytes, loss, t);
		if (ret)
			goto fail_write;
		cur = next;
	}

	/* Stop counting, then retire the last buffer and stop copying. */
	stop_counters(r);
	ret = set_dest_buf(r, NULL, 0, &bytes, &loss);
	if (ret)
		goto fail_install;
	ret = consume(r, cur, bytes, loss, now_ns());
	if (ret)
		goto fail_write;
	goto out;

fail_install:
	pthread_mutex_lock(&r->lock);
	r->thread_err = ret;
	r->thread_err_what = "SET_DEST_BUF";
	r->thread_err_ioctl = true;
	pthread_mutex_unlock(&r->lock);
	goto out;
fail_write:
	pthread_mutex_lock(&r->lock);
	r->thread_err = ret;
	r->thread_err_what = "writing the output";
	pthread_mutex_unlock(&r->lock);
out:
	pthread_mutex_lock(&r->lock);
	r->done = true;
	pthread_mutex_unlock(&r->lock);
	stop_requested = 1;
	return NULL;
}

static void on_signal(int sig)
{
	(void)sig;
	stop_requested = 1;
}

static void print_progress(struct recorder *r, double elapsed, bool final)
{
	uint64_t bytes, retired, loss;
	unsigned int n;

	pthread_mutex_lock(&r->lock);
	bytes = r->total_bytes;
	retired = r->buffers_retired;
	loss = r->loss_buffers;
	n = r->xcc_count;
	pthread_mutex_unlock(&r->lock);

	/* Rewrite one line on a terminal, one line per update otherwise. */
	fprintf(stderr, "%s%s: %7.1f s  %10.2f MiB  %8.2f MiB/s  buffers %" PRIu64
		"  with loss %" PRIu64 "  XCCs %s%u%s",
		isatty(STDERR_FILENO) ? "\r" : "", prog, elapsed,
		(double)bytes / 1048576.0,
		elapsed > 0 ? (double)bytes / 1048576.0 / elapsed : 0.0,
		retired, loss, n ? "" : "?", n,
		isatty(STDERR_FILENO) ? (final ? " \n" : " ") : "\n");
	fflush(stderr);
}

/*
 * SET_DEST_BUF failed with ENOMEM. With anonymous buffers that is the
 * memlock charge: they are pinned and charged to RLIMIT_MEMLOCK unless the
 * process has CAP_IPC_LOCK. Say how much that is against the limit, and
 * what helps.
 */
static void explain_memlock(const struct options *o, bool gtt)
{
	unsigned long long total = (unsigned long long)o->buffers * o->buf_size;
	struct rlimit rl;
	char limit[64] = "unknown";

	if (!getrlimit(RLIMIT_MEMLOCK, &rl)) {
		if (rl.rlim_cur == RLIM_INFINITY)
			snprintf(limit, sizeof(limit), "unlimited");
		else
			snprintf(limit, sizeof(limit), "%llu KiB",
				 (unsigned long long)rl.rlim_cur >> 10);
	}
	if (gtt) {
		fprintf(stderr, "%s: the recorder's %u buffers of %u bytes (%llu KiB) are GTT BOs, which the kernel does not pin: the kernel is out of memory\n",
			prog, o->buffers, o->buf_size, total >> 10);
		return;
	}
	fprintf(stderr, "%s: the recorder's %u buffers of %u bytes (%llu KiB) are anonymous memory, which the kernel keeps pinned while they rotate and charges to RLIMIT_MEMLOCK (now %s) unless the process has CAP_IPC_LOCK: use GTT buffers (--memory gtt, the default), raise the limit ('ulimit -l', or LimitMEMLOCK= of a systemd unit), run with CAP_IPC_LOCK (CAP_PERFMON does not include it), or choose a smaller --buf-size or --buffers 2\n",
		prog, o->buffers, o->buf_size, total >> 10, limit);
}

/* Anonymous memory, faulted in now rather than in the kernel's copy path. */
static void *alloc_anon(uint32_t size)
{
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	memset(p, 0, size);
	return p;
}

/*
 * A GTT BO of @fd mapped into the process: GEM_CREATE, GEM_MMAP and mmap,
 * as amdgpu_bo_alloc() and amdgpu_bo_cpu_map() of libdrm_amdgpu do. The
 * handle is closed once mapped: the mapping keeps the BO, and munmap()
 * frees it. NULL with @err set on failure.
 */
static void *alloc_gtt(int fd, uint32_t size, int *err)
{
	union drm_amdgpu_gem_create create;
	union drm_amdgpu_gem_mmap map;
	struct drm_gem_close close_args;
	void *p = MAP_FAILED;

	memset(&create, 0, sizeof(create));
	create.in.bo_size = size;
	create.in.alignment = 4096;
	create.in.domains = AMDGPU_GEM_DOMAIN_GTT;
	if (ioctl(fd, DRM_IOCTL_AMDGPU_GEM_CREATE, &create)) {
		*err = -errno;
		return NULL;
	}
	memset(&map, 0, sizeof(map));
	map.in.handle = create.out.handle;
	if (ioctl(fd, DRM_IOCTL_AMDGPU_GEM_MMAP, &map))
		*err = -errno;
	else
		p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
			 (off_t)map.out.addr_ptr);
	if (p == MAP_FAILED && !*err)
		*err = -errno;
	memset(&close_args, 0, sizeof(close_args));
	close_args.handle = create.out.handle;
	ioctl(fd, DRM_IOCTL_GEM_CLOSE, &close_args);
	if (p == MAP_FAILED)
		return NULL;
	memset(p, 0, size);
	return p;
}

/* The destination buffers, in the memory --memory asks for. */
static void alloc_buffers(struct recorder *r)
{
	struct options *o = &r->opt;
	unsigned int i;
	int err = 0;

	r->buf_gtt = o->memory != MEM_ANON;
	for (i = 0; r->buf_gtt && i < o->buffers; i++) {
		r->buf[i] = alloc_gtt(r->fd, o->buf_size, &err);
		if (r->buf[i])
			continue;
		if (o->memory == MEM_GTT_ONLY)
			die(EXIT_ERROR, "cannot allocate %u GTT buffers of %u bytes: %s",
			    o->buffers, o->buf_size, strerror(-err));
		while (i--)
			munmap(r->buf[i], o->buf_size);
		r->buf_gtt = false;
		if (!o->size_given)
			o->buf_size = DEFAULT_BUF_SIZE_ANON;
		fprintf(stderr, "%s: no GTT buffers (%s): using anonymous memory of %u bytes a buffer, pinned and charged to RLIMIT_MEMLOCK\n",
			prog, strerror(-err), o->buf_size);
	}
	for (i = 0; !r->buf_gtt && i < o->buffers; i++) {
		r->buf[i] = alloc_anon(o->buf_size);
		if (!r->buf[i])
			die(EXIT_ERROR, "cannot allocate %u buffers of %u bytes",
			    o->buffers, o->buf_size);
	}
}

/* Lost samples: say what would help, of what the options allow. */
static void advise_on_loss(const struct options *o)
{
	char more[256] = "";
	size_t n = 0;

	if (o->buf_size < AMDGPU_PROF_SPM_MAX_BUF_SIZE)
		n += (size_t)snprintf(more + n, sizeof(more) - n,
				      "; larger buffers (--buf-size, now %u bytes, at most 256M)",
				      o->buf_size);
	if (o->timeout_ms)
		n += (size_t)snprintf(more + n, sizeof(more) - n,
				      "; a shorter --timeout (now %u ms), so that a full buffer is retired sooner",
				      o->timeout_ms);
	fprintf(stderr, "%s: warning: SPM samples were lost: the kernel's ring filled up before the data could go to a buffer%s%s\n",
		prog, more, n ? "; or a larger ring (amdgpu.spm_ring_size)" :
		"; at these settings only a larger ring (amdgpu.spm_ring_size) or a lower sample rate helps");
}

/* The config record: once, after the header, before any share. */
static int write_config(FILE *out, const struct spm_config *cfg,
			bool programmed)
{
	struct spm_file_config fc;
	struct spm_record rec;
	unsigned int i;

	memset(&fc, 0, sizeof(fc));
	fc.size = sizeof(fc);
	fc.gc_version = cfg->gc;
	fc.interval = cfg->interval;
	fc.interval_requested = cfg->interval_requested;
	fc.num_se = cfg->num_se;
	fc.num_counters = cfg->num_counters;
	fc.global_lines = cfg->global_lines;
	fc.se_lines = cfg->se_lines;
	fc.sample_bytes = (uint32_t)spm_sample_size(cfg);
	fc.segment_size = cfg->segment_size;
	fc.segment_size_core1 = cfg->segment_size_core1;
	fc.flags = programmed ? SPM_FILE_CONFIG_PROGRAMMED : 0;
	for (i = 0; i < cfg->num_counters; i++) {
		const struct spm_counter_slot *c = &cfg->counters[i];

		snprintf(fc.counters[i].name, sizeof(fc.counters[i].name),
			 "%s", c->info->name);
		fc.counters[i].bits = c->bits;
		fc.counters[i].segment = c->info->segment;
		fc.counters[i].slot = c->slot;
	}
	memset(&rec, 0, sizeof(rec));
	rec.type = SPM_RECORD_CONFIG;
	rec.bytes = sizeof(fc);
	return spm_file_write_record(out, &rec, &fc);
}

static const char *gc_name(uint32_t gc, char *buf, size_t len)
{
	snprintf(buf, len, "%u.%u.%u", gc >> 16, (gc >> 8) & 0xff, gc & 0xff);
	return buf;
}

/*
 * -e: the GC version the device reports (spm_device_gc()); --gc is checked
 * against it and decides only where the kernel cannot tell. Exits with a
 * message when they disagree or the device is a GC this tool has no
 * streams for.
 */
static enum spm_gc_version resolve_gc(struct recorder *r)
{
	const struct options *o = &r->opt;
	struct spm_device_gc g;
	char what[320], given[16];
	int ret;

	ret = r->dev ? spm_device_gc(r->dev, &g) : -ENODEV;
	if (!ret) {
		r->gcinfo = g;
		r->have_gcinfo = true;
	}
	if (ret) {
		if (!o->gc || r->program)
			die(EXIT_ERROR, "cannot read the device's GC version (AMDGPU_INFO_HW_IP_INFO): %s",
			    strerror(-ret));
		fprintf(stderr, "%s: cannot read the device's GC version (%s): recording for --gc %s as given\n",
			prog, strerror(-ret), gc_name(o->gc, given, sizeof(given)));
		return o->gc;
	}
	spm_device_gc_describe(&g, what, sizeof(what));
	if (o->gc) {
		gc_name(o->gc, given, sizeof(given));
		if (g.gc && o->gc != g.gc && o->gc != g.gc_alt)
			die(EXIT_USAGE, "--gc %s does not match the device, which reports %s",
			    given, what);
		if (!g.gc)
			fprintf(stderr, "%s: the device reports %s: using --gc %s as given\n",
				prog, what, given);
		else
			fprintf(stderr, "%s: device: %s; --gc %s agrees\n",
				prog, what, given);
		return o->gc;
	}
	if (g.gc_alt)
		die(EXIT_USAGE, "the device is %s, which this kernel does not tell apart: give --gc 9.4.3 if it is 9.4.3 (this tool has no streams for 9.4.4)",
		    what);
	if (g.gc != SPM_GC_9_4_1 && g.gc != SPM_GC_9_4_2 &&
	    g.gc != SPM_GC_9_4_3)
		die(EXIT_NOTSUPP, "the device is %s: this tool programs SPM counters on GC 9.4.1, 9.4.2 and 9.4.3 only",
		    what);
	fprintf(stderr, "%s: device: %s\n", prog, what);
	return (enum spm_gc_version)g.gc;
}

/*
 * GC 9.4.2 (MI200, gfx90a): aqlprofile does not stream SPM there at all
 * (rocprofiler-sdk lib/aqlprofile/core/spm_v2.cpp,
 * is_agent_supported_for_spm(): "Streaming Performance Monitor (SPM) is
 * not supported on gfx90a devices", unless AQLPROFILE_SPM_OVERRIDE_AGENT_CHECK
 * is set), so no ROCm profiler has exercised these streams on that part.
 * Programming counters there takes --allow-gc-9.4.2; recording what
 * something else streams does not.
 */
static void check_gc_942(const struct options *o)
{
	if (!o->allow_942)
		die(EXIT_NOTSUPP, "the device is GC 9.4.2 (MI200, gfx90a), where aqlprofile refuses SPM (\"not supported on gfx90a devices\", spm_v2.cpp is_agent_supported_for_spm()): programming counters there is untried by ROCm; pass --allow-gc-9.4.2 to program them anyway, or record without -e (or with --no-program)");
	fprintf(stderr, "%s: warning: GC 9.4.2 (MI200): aqlprofile refuses SPM on this part; programming the counters as --allow-gc-9.4.2 asks\n",
		prog);
}

/*
 * The SEs per XCC to lay the counters out for: what the device reports
 * (AMDGPU_INFO_DEV_INFO num_shader_engines, see spm_device_se_per_xcc()),
 * which must be what the GC's tables are written for; 0 (the GC's) when
 * the device could not be asked.
 */
static unsigned int layout_se(struct recorder *r, enum spm_gc_version gc)
{
	const struct spm_device_gc *g = &r->gcinfo;
	unsigned int want = spm_gc_num_se(gc), se;
	bool total;

	if (!r->have_gcinfo || !g->num_se) {
		fprintf(stderr, "%s: note: the device's SE count is not known: laying the counters out for GC %x.%x.%x's %u SEs per XCC\n",
			prog, gc >> 16, (gc >> 8) & 0xff, gc & 0xff, want);
		return 0;
	}
	se = spm_device_se_per_xcc(g, want, &total);
	if (!se)
		die(EXIT_NOTSUPP, "the device reports %u shader engines (AMDGPU_INFO_DEV_INFO num_shader_engines; %u XCC%s in this partition, AMDGPU_INFO_HW_IP_COUNT): this tool's GC %x.%x.%x streams are for %u SEs per XCC (their sample delays and segment sizes), and lay out no other count",
		    g->num_se, g->num_xcc, g->num_xcc == 1 ? "" : "s",
		    gc >> 16, (gc >> 8) & 0xff, gc & 0xff, want);
	if (total)
		fprintf(stderr, "%s: note: the device reports %u shader engines for its %u XCCs: %u per XCC\n",
			prog, g->num_se, g->num_xcc, se);
	return se;
}

static void print_submitted(const char *what, const struct spm_submit_info *in)
{
	fprintf(stderr, "%s: %s: submitted %u dwords (%u of them NOP padding) as one IB at GPU VA 0x%" PRIx64
		" on compute ring 0; fence %" PRIu64 " signalled after %.3f ms\n",
		prog, what, in->ib_dw, in->pad_dw, in->ib_va, in->seq,
		(double)in->wait_ns / 1e6);
}

static void print_submit_error(const char *which, int ret,
			       const struct spm_submit_info *in)
{
	if (ret == -ETIME)
		fprintf(stderr, "%s: the %s stream did not finish within %llu s (its fence did not signal): the compute ring may be hung, the kernel's job timeout resets it\n",
			prog, which, SPM_SUBMIT_TIMEOUT_NS / 1000000000ull);
	else if (ret == -EOPNOTSUPP)
		fprintf(stderr, "%s: cannot submit the %s stream: the render node has no compute ring 0 (AMDGPU_INFO_HW_IP_INFO)\n",
			prog, which);
	else
		fprintf(stderr, "%s: submitting the %s stream failed: %s: %s\n",
			prog, which, in->failed ? in->failed : "spm_submit_ib",
			strerror(-ret));
}

int main(int argc, char **argv)
{
	struct recorder r;
	struct sigaction sa;
	sigset_t block, old;
	pthread_t thread;
	double start, next_progress, t;
	struct drm_amdgpu_info_device dev;
	struct spm_file_header fh;
	struct spm_config scfg;
	unsigned int i;
	bool any_loss;
	uint32_t bytes, loss;
	bool thread_started = false;
	int ret, status = EXIT_OK;

	memset(&r, 0, sizeof(r));
	pthread_mutex_init(&r.lock, NULL);
	parse_options(argc, argv, &r.opt);
	r.program = r.opt.num_reqs && !r.opt.no_program;

	/* The names and widths, before any device: a usage error first */
	if (r.opt.num_reqs)
		build_config(&r.opt, r.opt.gc ? r.opt.gc : SPM_GC_9_4_3, 0,
			     &scfg);

	r.fd = open_device(r.opt.device);

	ret = amdgpu_profiler_fd_version(r.fd, &r.version);
	if (ret)
		die(ret == -EINVAL ? EXIT_NODEV : status_for(ret),
		    "GET_VER failed: %s",
		    amdgpu_prof_spm_strerror(ret, AMDGPU_PROF_SPM_CALL_VERSION));
	fprintf(stderr, "%s: profiler interface %u.%u\n", prog,
		AMDGPU_PROFILER_VERSION_MAJOR(r.version),
		AMDGPU_PROFILER_VERSION_MINOR(r.version));

	if (r.opt.num_reqs) {
		uint32_t major, minor;
		enum spm_gc_version gc;

		/* libdrm_amdgpu on the same file (it keeps a duplicate) */
		ret = amdgpu_device_initialize(r.fd, &major, &minor, &r.dev);
		if (ret) {
			r.dev = NULL;
			if (r.program)
				die(EXIT_ERROR, "libdrm_amdgpu cannot use the device: amdgpu_device_initialize: %s",
				    strerror(-ret));
		}
		gc = resolve_gc(&r);
		if (gc == SPM_GC_9_4_2 && r.program)
			check_gc_942(&r.opt);
		build_config(&r.opt, gc, layout_se(&r, gc), &scfg);
		if (r.program) {
			r.start_dw = spm_program_start(&scfg, r.start_ib, 1024);
			r.stop_dw = spm_program_stop(&scfg, r.stop_ib, 64);
			if (r.start_dw <= 0 || r.stop_dw <= 0)
				die(EXIT_ERROR, "cannot build the SPM streams: %s",
				    strerror(-(r.start_dw <= 0 ? r.start_dw : r.stop_dw)));
			fprintf(stderr, "%s: counters: %u, interval %u cycles, %zu-byte samples; programmed and started on a compute ring of the partition once the first buffer is installed\n",
				prog, scfg.num_counters, scfg.interval,
				spm_sample_size(&scfg));
		} else {
			fprintf(stderr, "%s: note: --no-program: the counters are not programmed by this tool; their configuration (%u counter%s, interval %u cycles, %zu-byte samples) is recorded for decoding\n",
				prog, scfg.num_counters,
				scfg.num_counters > 1 ? "s" : "", scfg.interval,
				spm_sample_size(&scfg));
		}
	}

	if (r.opt.xcc_count) {
		if (!amdgpu_prof_spm_share_size(r.opt.buf_size, r.opt.xcc_count))
			usage_error("--buf-size %u is too small for %u XCCs: at least %u bytes",
				    r.opt.buf_size, r.opt.xcc_count,
				    amdgpu_prof_spm_min_buf_size(r.opt.xcc_count));
		/* From 1.1 on the share headers say it; --xcc-count is checked. */
		if (r.version < AMDGPU_PROFILER_VERSION_1_1)
			r.xcc_count = r.opt.xcc_count;
	}

	alloc_buffers(&r);
	fprintf(stderr, "%s: %u %s buffers of %u bytes\n", prog, r.opt.buffers,
		r.buf_gtt ? "GTT" : "anonymous", r.opt.buf_size);
	if (query_info(r.fd, AMDGPU_INFO_DEV_INFO, &dev, sizeof(dev)) == 0)
		r.counter_khz = dev.gpu_counter_freq;

	if (!strcmp(r.opt.output, "-"))
		r.out = stdout;
	else
		r.out = fopen(r.opt.output, "wb");
	if (!r.out)
		die(EXIT_ERROR, "cannot open %s: %s", r.opt.output,
		    strerror(errno));

	ret = amdgpu_spm_fd_acquire(r.fd);
	if (ret) {
		/* EPERM: what amdgpu.spm_paranoid, which refused, reads now. */
		char why[3072];

		if (*amdgpu_spm_explain_refusal(ret, "", why, sizeof(why)))
			die(status_for(ret), "cannot acquire the SPM: %s\n%s: %s",
			    amdgpu_prof_spm_strerror(ret, AMDGPU_PROF_SPM_CALL_ACQUIRE),
			    prog, why);
		die(status_for(ret), "cannot acquire the SPM: %s",
		    amdgpu_prof_spm_strerror(ret, AMDGPU_PROF_SPM_CALL_ACQUIRE));
	}

	memset(&fh, 0, sizeof(fh));
	fh.version = r.version;
	fh.xcc_count = r.xcc_count;
	fh.buf_size = r.opt.buf_size;
	fh.num_buffers = r.opt.buffers;
	fh.timeout_ms = r.opt.timeout_ms;
	fh.flags = (r.opt.xcc_count ? SPM_FILE_XCC_COUNT_GIVEN : 0) |
		   SPM_FILE_BOOTTIME | (r.buf_gtt ? SPM_FILE_GTT_BUFFERS : 0);
	fh.gpu_counter_khz = r.counter_khz;
	{
		struct timespec rt;

		clock_gettime(CLOCK_REALTIME, &rt);
		fh.start_ns = now_ns();
		fh.start_realtime_ns = (uint64_t)rt.tv_sec * 1000000000u +
				       (uint64_t)rt.tv_nsec;
	}
	if (spm_file_write_header(r.out, &fh) ||
	    (r.opt.num_reqs && write_config(r.out, &scfg, r.program))) {
		amdgpu_spm_fd_release(r.fd);
		die(EXIT_ERROR, "cannot write %s", r.opt.output);
	}

	/*
	 * The first buffer, before the counters start: installing it starts
	 * the ring and resets every XCC's SPM state, which would stop
	 * counting started before it. Nothing was installed: it retires
	 * nothing.
	 */
	amdgpu_prof_spm_clear_header_slots(r.buf[0], r.opt.buf_size);
	ret = set_dest_buf(&r, r.buf[0], 0, &bytes, &loss);
	if (ret) {
		r.thread_err = ret;
		r.thread_err_what = "SET_DEST_BUF";
		r.thread_err_ioctl = true;
		stop_requested = 1;
	} else {
		r.installed_ns[0] = now_ns();
		read_clock(r.fd, &r.clock[0]);
	}
	if (!ret && r.program) {
		struct spm_submit_info in;

		ret = spm_submit_ib(r.dev, r.start_ib, (uint32_t)r.start_dw,
				    SPM_SUBMIT_TIMEOUT_NS, &in);
		if (ret) {
			print_submit_error("start", ret, &in);
			/* What the kernel was told to copy, it stops */
			set_dest_buf(&r, NULL, 0, &bytes, &loss);
			amdgpu_spm_fd_release(r.fd);
			amdgpu_device_deinitialize(r.dev);
			die(EXIT_ERROR, "the counters were not started; nothing recorded");
		}
		r.started = true;
		print_submitted("started the counters", &in);
	}

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

	/* Signals go to the main thread; the recorder notices stop_requested. */
	sigfillset(&block);
	pthread_sigmask(SIG_BLOCK, &block, &old);
	/* Not when the first buffer could not be installed */
	ret = 0;
	if (!r.thread_err) {
		ret = pthread_create(&thread, NULL, record_thread, &r);
		thread_started = !ret;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (ret) {
		stop_counters(&r);
		amdgpu_spm_fd_release(r.fd);
		die(EXIT_ERROR, "cannot start the recorder thread: %s",
		    strerror(ret));
	}

	start = now();
	next_progress = start + r.opt.interval;
	while (!stop_requested) {
		struct timespec ts = { 0, 10 * 1000 * 1000 };

		nanosleep(&ts, NULL);
		t = now();
		if (r.opt.duration > 0 && t - start >= r.opt.duration)
			stop_requested = 1;
		if (!r.opt.quiet && t >= next_progress) {
			print_progress(&r, t - start, false);
			next_progress += r.opt.interval;
		}
	}
	if (thread_started)
		pthread_join(thread, NULL);
	t = now();
	if (!r.opt.quiet)
		print_progress(&r, t - start, true);

	/* The thread stopped early: the stop stream still goes before RELEASE */
	stop_counters(&r);
	if (r.stop_done && !r.stop_ret) {
		print_submitted("stopped the counters", &r.stop_info);
	} else if (r.stop_done) {
		print_submit_error("stop", r.stop_ret, &r.stop_info);
		fprintf(stderr, "%s: RELEASE stops counting on every XCC of the partition all the same\n",
			prog);
		status = EXIT_ERROR;
	}

	ret = amdgpu_spm_fd_release(r.fd);
	if (ret && !r.thread_err)
		fprintf(stderr, "%s: RELEASE failed: %s\n", prog,
			amdgpu_prof_spm_strerror(ret, AMDGPU_PROF_SPM_CALL_RELEASE));

	/* The end record: a reader can tell a complete file from a cut one. */
	if (!r.thread_err) {
		struct spm_record end = {
			.type = SPM_RECORD_END,
			.flags = r.loss_buffers ? SPM_RECORD_LOSS : 0,
			.buffer = (uint32_t)r.buffers_retired,
			.seq = (uint32_t)r.undecided_buffers,
			.num_shares = (uint8_t)r.xcc_count,
			.retired_ns = now_ns(),
		};

		if (spm_file_write_record(r.out, &end, NULL)) {
			r.thread_err = -EIO;
			r.thread_err_what = "writing the output";
		}
	}

	if (r.out != stdout && fclose(r.out)) {
		fprintf(stderr, "%s: closing %s: %s\n", prog, r.opt.output,
			strerror(errno));
		status = EXIT_ERROR;
	} else if (r.out == stdout) {
		fflush(stdout);
	}

	if (r.thread_err && !r.thread_err_ioctl) {
		fprintf(stderr, "%s: %s failed: I/O error\n", prog,
			r.thread_err_what);
		status = EXIT_ERROR;
	} else if (r.thread_err) {
		/* EIO here is the kernel stopping SPM, not an I/O error. */
		fprintf(stderr, "%s: %s failed: %s\n", prog, r.thread_err_what,
			amdgpu_prof_spm_strerror(r.thread_err,
					    AMDGPU_PROF_SPM_CALL_SETDESTBUFF));
		if (r.thread_err == -ENOMEM)
			explain_memlock(&r.opt, r.buf_gtt);
		status = status_for(r.thread_err);
	}

	/* Summary on stderr, so that -o - keeps stdout clean. */
	fprintf(stderr, "%s: %" PRIu64 " buffers retired, %" PRIu64
		" data bytes, %" PRIu64 " with lost samples", prog,
		r.buffers_retired, r.total_bytes, r.loss_buffers);
	if (r.version >= AMDGPU_PROFILER_VERSION_1_1)
		fprintf(stderr, ", %" PRIu64 " lost (gaps in the kernel's sequence), %" PRIu64
			" with a share that filled up (its rest went on in the next buffer; not counted as loss, although in a ring mode that stalls, which aqlprofile selects, the RLC may have missed samples meanwhile)",
			r.lost_buffers, r.full_buffers);
	fputc('\n', stderr);
	if (!r.xcc_count) {
		fprintf(stderr, "%s: XCC count unknown (no data, or ambiguous); per-XCC data not written; pass --xcc-count\n",
			prog);
	} else {
		for (i = 0; i < r.xcc_count; i++) {
			fprintf(stderr, "%s:   XCC %u: %" PRIu64
				" bytes, samples lost in %" PRIu64 " buffers",
				prog, r.xcc[i].xcc, r.xcc[i].bytes,
				r.xcc[i].loss_buffers);
			if (r.version >= AMDGPU_PROFILER_VERSION_1_1)
				fprintf(stderr, ", full in %" PRIu64,
					r.xcc[i].full_shares);
			fputc('\n', stderr);
		}
		if (r.opt.xcc_count && r.opt.xcc_count != r.xcc_count)
			fprintf(stderr, "%s: note: the kernel's share headers say %u XCCs, --xcc-count said %u\n",
				prog, r.xcc_count, r.opt.xcc_count);
		if (r.undecided_buffers)
			fprintf(stderr, "%s: %" PRIu64 " buffers with data were retired before the XCC count was known and not written; pass --xcc-count to keep them\n",
				prog, r.undecided_buffers);
		if (r.unparsed_buffers)
			fprintf(stderr, "%s: %" PRIu64 " buffers had malformed share headers and were skipped\n",
				prog, r.unparsed_buffers);
	}
	/*
	 * A CS job runs on one compute ring, of one XCC: the kernel's
	 * scheduler picks among the partition's rings (the context's entity
	 * spans them, amdgpu_xcp_select_scheds()), and the stream's register
	 * writes reach that XCC only. A recording in which fewer XCCs than
	 * the partition has streamed counter samples is not what -e asked
	 * for: exit 8 unless --allow-partial.
	 */
	if (r.started) {
		unsigned int with = 0, xccs = r.xcc_count;

		for (i = 0; i < r.xcc_count; i++)
			with += r.xcc[i].bytes != 0;
		if (!xccs && r.have_gcinfo)
			xccs = r.gcinfo.num_xcc;
		if (xccs ? with < xccs : !r.total_bytes) {
			char n[16] = "?";

			if (xccs)
				snprintf(n, sizeof(n), "%u", xccs);
			fprintf(stderr, "%s: %s: the counters were programmed through one compute ring, whose jobs run on one XCC: %u of the partition's %s XCCs streamed counter samples; to profile each XCC, use a partition mode with one XCC per partition (CPX) and a recorder per partition%s\n",
				prog, r.opt.allow_partial ? "note" : "error",
				with, n, r.opt.allow_partial ?
				" (accepted: --allow-partial)" :
				", or pass --allow-partial to accept such a recording (exit status 8)");
			if (!r.opt.allow_partial && status == EXIT_OK)
				status = EXIT_PARTIAL;
		}
	}
	any_loss = r.loss_buffers || r.lost_buffers;
	if (r.loss_buffers)
		advise_on_loss(&r.opt);
	if (r.lost_buffers)
		fprintf(stderr, "%s: warning: %" PRIu64 " buffer%s missing from the kernel's sequence\n",
			prog, r.lost_buffers, r.lost_buffers > 1 ? "s are" : " is");
	if (status == EXIT_OK && any_loss && r.opt.fail_on_loss)
		status = EXIT_DATA_LOSS;

	for (i = 0; i < r.opt.buffers; i++)
		munmap(r.buf[i], r.opt.buf_size);
	if (r.dev)
		amdgpu_device_deinitialize(r.dev);
	close(r.fd);
	return status;
}
