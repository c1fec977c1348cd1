// SPDX-License-Identifier: MIT
/*
 * Copyright 2026 The amdgpu profiler series authors
 *
 * amdgpu-spm-dump: read a recording of amdgpu-spm-record. Prints per-XCC
 * bytes, data loss and lost buffers (gaps in the kernel's per-XCC
 * sequence), exports the records as CSV and each XCC's samples as a raw
 * file, and draws each XCC's throughput over time as an SVG chart with the
 * moments of loss marked. When the recording holds the counter
 * configuration (SPM_RECORD_CONFIG, amdgpu-spm-record -e), it decodes the
 * samples (spm_program.h): per-counter statistics, a per-sample CSV and a
 * Chrome trace-event JSON (Perfetto UI, chrome://tracing).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "amdgpu_profiler.h"
#include "spm_file.h"
#include "spm_program.h"

#define MAX_XCC		256	/* logical ids are 8 bits */
#define MAX_EVENTS	20	/* loss and gap events listed one by one */

enum { EXIT_OK, EXIT_ERROR, EXIT_USAGE };

static const char *prog = "amdgpu-spm-dump";

static const char short_usage[] =
"Usage: amdgpu-spm-dump [--csv FILE] [--raw DIR] [--svg FILE] [--counters FILE]\n"
"                       [--trace FILE] [-q] RECORDING\n"
"Try 'amdgpu-spm-dump --help' for more information.\n";

struct options {
	const char *input;
	const char *csv;
	const char *raw;
	const char *svg;
	const char *counters;	/* per-sample CSV */
	const char *trace;	/* Chrome trace-event JSON */
	bool quiet;
};

/* Per XCC: what the decoder saw. */
struct xcc_decode {
	uint64_t samples;
	uint64_t partial_bytes;		/* data not a whole sample */
	uint64_t last_ts;
	uint64_t ts_delta_min, ts_delta_max;
	uint64_t cycles_equal, cycles_differ;	/* cycle counter vs interval */
	uint64_t vmin[SPM_MAX_VALUES], vmax[SPM_MAX_VALUES];
	uint64_t saturated[SPM_MAX_VALUES];
	double vsum[SPM_MAX_VALUES];
	bool named;			/* trace: process name written */
};

struct decode {
	bool have;			/* a config record that decodes */
	bool seen;			/* a config record at all */
	struct spm_file_config fc;
	struct spm_config cfg;
	int cycle_counter;		/* index of CPC_ALWAYS_COUNT, -1 none */
	FILE *csv, *trace;
	bool trace_any;			/* an event written (commas) */
	struct xcc_decode x[256];
};

/* A share record as kept in memory (its data goes straight to --raw). */
struct share {
	uint32_t buffer;
	uint32_t bytes;
	uint32_t seq;
	uint16_t xcc;
	uint8_t share;
	uint8_t num_shares;
	bool loss;		/* samples were lost */
	bool full;		/* filled up; the rest went on (not a loss) */
	bool kernel_info;
	uint64_t start_ns, last_ns, retired_ns;
	uint64_t gpu_clock, gpu_clock_host_ns;	/* 0: not read */
	uint32_t gap_before;	/* kernel seq numbers missing before this one */
};

struct xcc {
	bool seen;
	uint64_t shares, bytes, loss_shares, full_shares, lost_buffers,
		 empty_shares;
	uint32_t last_seq;
	FILE *raw;
};

struct dump {
	struct spm_file_header fh;
	int format;
	struct share *shares;
	size_t nshares, cap;
	struct xcc xcc[MAX_XCC];
	bool complete;
	bool read_error;	/* stopped at a malformed or cut record */
	struct spm_record end;
	bool timed;		/* records carry times (format 2) */
	uint64_t t0;		/* time origin, ns */
	uint64_t unknown_records;	/* of types this reader does not know */
	struct decode dec;
};

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
	if (status == EXIT_USAGE)
		fputs(short_usage, stderr);
	exit(status);
}

static void usage(void)
{
	printf(
"Usage: %s [OPTION]... RECORDING\n"
"Read a recording of amdgpu-spm-record: print per-XCC bytes, data loss and\n"
"lost buffers, and export the samples.\n"
"\n"
"      --csv FILE   one line per share record (- for stdout)\n"
"      --raw DIR    write each XCC's SPM samples to DIR/xcc<N>.raw\n"
"      --svg FILE   per-XCC throughput-over-time chart, data loss in red,\n"
"                   lost buffers as dashed lines\n"
"      --counters FILE  the decoded samples, one line per XCC and sample\n"
"                   (needs a recording made with amdgpu-spm-record -e)\n"
"      --trace FILE the decoded counters as Chrome trace-event JSON, one\n"
"                   process per XCC, loss and lost buffers as instant\n"
"                   events (open in ui.perfetto.dev or chrome://tracing)\n"
"  -q, --quiet      no summary\n"
"  -h, --help       show this help and exit\n"
"\n"
"Exit status: 0 ok, 1 unreadable or malformed recording or an output error,\n"
"2 usage.\n", prog);
}

static void parse_options(int argc, char **argv, struct options *o)
{
	static const struct option longopts[] = {
		{ "csv", required_argument, NULL, 'c' },
		{ "raw", required_argument, NULL, 'r' },
		{ "svg", required_argument, NULL, 's' },
		{ "counters", required_argument, NULL, 'C' },
		{ "trace", required_argument, NULL, 'J' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	int c;

	memset(o, 0, sizeof(*o));
	while ((c = getopt_long(argc, argv, "qh", longopts, NULL)) != -1) {
		switch (c) {
		case 'c':
			o->csv = optarg;
			break;
		case 'r':
			o->raw = optarg;
			break;
		case 's':
			o->svg = optarg;
			break;
		case 'C':
			o->counters = optarg;
			break;
		case 'J':
			o->trace = optarg;
			break;
		case 'q':
			o->quiet = true;
			break;
		case 'h':
			usage();
			exit(EXIT_OK);
		default:
			fputs(short_usage, stderr);
			exit(EXIT_USAGE);
		}
	}
	if (optind != argc - 1)
		die(EXIT_USAGE, optind < argc ? "one recording at a time" :
			       "no recording given");
	o->input = argv[optind];
}

static double secs(const struct dump *d, uint64_t ns)
{
	return ns ? (double)(int64_t)(ns - d->t0) / 1e9 : 0.0;
}

/* Throughput of a share over its time as the current buffer, MiB/s. */
static double share_rate(const struct share *s)
{
	if (s->retired_ns <= s->start_ns)
		return 0.0;
	return (double)s->bytes / 1048576.0 /
	       ((double)(s->retired_ns - s->start_ns) / 1e9);
}

/* ---- Decoding the samples (SPM_RECORD_CONFIG) ---- */

static FILE *open_out(const char *path)
{
	FILE *f = strcmp(path, "-") ? fopen(path, "w") : stdout;

	if (!f)
		die(EXIT_ERROR, "cannot create %s: %s", path, strerror(errno));
	return f;
}

static void close_out(FILE *f, const char *path)
{
	if (f != stdout ? fclose(f) : fflush(f))
		die(EXIT_ERROR, "writing %s: %s", path, strerror(errno));
}

/* Column name of value @v of counter @c: NAME, or NAME_se<j> per SE. */
static void value_name(const struct spm_config *cfg, unsigned int c,
		       unsigned int v, char *buf, size_t len)
{
	const struct spm_counter_slot *k = &cfg->counters[c];

	if (k->num_values > 1)
		snprintf(buf, len, "%s_se%u", k->info->name, v);
	else
		snprintf(buf, len, "%s", k->info->name);
}

/*
 * The config record: rebuild the layout with spm_config_build() from the
 * names, widths, GC version and interval, and check it against the layout
 * the recorder stored. A disagreement (another version of the counter
 * table) is reported and nothing is decoded.
 */
static void take_config(struct dump *d, const struct options *o,
			const unsigned char *data, uint32_t bytes)
{
	struct decode *dc = &d->dec;
	struct spm_counter_req reqs[SPM_FILE_MAX_COUNTERS];
	const char *why = NULL;
	unsigned int i, j;
	char name[64];

	if (dc->seen) {
		fprintf(stderr, "%s: %s: a second counter configuration record; ignored\n",
			prog, o->input);
		return;
	}
	dc->seen = true;
	dc->cycle_counter = -1;
	if (d->nshares) {
		why = "it comes after share records";
		goto bad;
	}
	if (spm_file_parse_config(data, bytes, &dc->fc)) {
		why = "it is malformed";
		goto bad;
	}
	for (i = 0; i < dc->fc.num_counters; i++) {
		reqs[i].name = dc->fc.counters[i].name;
		reqs[i].bits = dc->fc.counters[i].bits;
	}
	if (spm_config_build(&dc->cfg, (enum spm_gc_version)dc->fc.gc_version,
			     reqs, dc->fc.num_counters,
			     dc->fc.interval_requested)) {
		why = "this dump cannot build it (unknown GC version or counter)";
		goto bad;
	}
	if (dc->cfg.interval != dc->fc.interval ||
	    dc->cfg.num_se != dc->fc.num_se ||
	    dc->cfg.global_lines != dc->fc.global_lines ||
	    dc->cfg.se_lines != dc->fc.se_lines ||
	    spm_sample_size(&dc->cfg) != dc->fc.sample_bytes ||
	    !dc->fc.sample_bytes)
		why = "its layout differs from the one this dump builds";
	for (i = 0; !why && i < dc->cfg.num_counters; i++)
		if (dc->cfg.counters[i].slot != dc->fc.counters[i].slot ||
		    dc->cfg.counters[i].bits != dc->fc.counters[i].bits)
			why = "a counter's slot differs from the one this dump builds";
	if (why)
		goto bad;
	for (i = 0; i < dc->cfg.num_counters; i++)
		if (!strcmp(dc->cfg.counters[i].info->name, "CPC_ALWAYS_COUNT"))
			dc->cycle_counter = (int)i;
	dc->have = true;

	if (o->counters) {
		dc->csv = open_out(o->counters);
		fprintf(dc->csv, "xcc,buffer,sample,timestamp,timestamp_delta,host_s");
		for (i = 0; i < dc->cfg.num_counters; i++)
			for (j = 0; j < dc->cfg.counters[i].num_values; j++) {
				value_name(&dc->cfg, i, j, name, sizeof(name));
				fprintf(dc->csv, ",%s", name);
			}
		fprintf(dc->csv, "\n");
	}
	if (o->trace) {
		dc->trace = open_out(o->trace);
		fprintf(dc->trace, "{\"traceEvents\":[\n");
	}
	return;
bad:
	fprintf(stderr, "%s: %s: the counter configuration record is not used: %s\n",
		prog, o->input, why);
}

static void trace_sep(struct decode *dc)
{
	fputs(dc->trace_any ? ",\n" : "", dc->trace);
	dc->trace_any = true;
}

/* Microseconds since the recording started, for the trace. */
static double trace_us(const struct dump *d, uint64_t ns)
{
	return ns ? (double)(int64_t)(ns - d->t0) / 1e3 : 0.0;
}

/* The XCC's process in the trace, named once. */
static void trace_xcc(struct dump *d, unsigned int xcc)
{
	struct decode *dc = &d->dec;

	if (!dc->trace || dc->x[xcc].named)
		return;
	dc->x[xcc].named = true;
	trace_sep(dc);
	fprintf(dc->trace, "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%u,\"tid\":0,\"args\":{\"name\":\"XCC %u\"}}",
		xcc, xcc);
}

/* Loss and lost buffers of a share as instant events. */
static void trace_share_events(struct dump *d, const struct share *s)
{
	struct decode *dc = &d->dec;

	if (!dc->trace || (!s->loss && !s->gap_before))
		return;
	trace_xcc(d, s->xcc);
	if (s->gap_before) {
		trace_sep(dc);
		fprintf(dc->trace, "{\"name\":\"%u lost buffer%s\",\"cat\":\"spm\",\"ph\":\"i\",\"s\":\"p\",\"ts\":%.3f,\"pid\":%u,\"tid\":0,\"args\":{\"before_seq\":%u,\"buffer\":%u}}",
			s->gap_before, s->gap_before > 1 ? "s" : "",
			trace_us(d, s->start_ns), s->xcc, s->seq, s->buffer);
	}
	if (s->loss) {
		trace_sep(dc);
		fprintf(dc->trace, "{\"name\":\"data loss\",\"cat\":\"spm\",\"ph\":\"i\",\"s\":\"p\",\"ts\":%.3f,\"pid\":%u,\"tid\":0,\"args\":{\"buffer\":%u,\"from_us\":%.3f}}",
			trace_us(d, s->retired_ns), s->xcc, s->buffer,
			trace_us(d, s->start_ns));
	}
}

/*
 * The host time of a sample's timestamp, ns; 0 if the share has no GPU
 * clock reading or the counter's rate is unknown. Assumes that the SPM
 * timestamp counts the clock AMDGPU_INFO_TIMESTAMP reads (gpu_counter_khz):
 * the spec (section 3, "Its clock domain and unit are [OPEN]") leaves it
 * open; only a GPU can tell.
 */
static uint64_t host_time(const struct dump *d, const struct share *s,
			  uint64_t ts)
{
	double dt;

	if (!s->gpu_clock || !d->fh.gpu_counter_khz)
		return 0;
	dt = (double)(int64_t)(ts - s->gpu_clock) * 1e6 /
	     (double)d->fh.gpu_counter_khz;
	return (uint64_t)((double)s->gpu_clock_host_ns + dt);
}

static void decode_share(struct dump *d, const struct share *s,
			 const unsigned char *data)
{
	struct decode *dc = &d->dec;
	struct xcc_decode *x = &dc->x[s->xcc];
	size_t size = spm_sample_size(&dc->cfg), off;
	uint64_t values[SPM_MAX_VALUES];
	unsigned int i, j;

	x->partial_bytes += s->bytes % size;
	for (off = 0; off + size <= s->bytes; off += size) {
		uint64_t ts, host, delta = 0, k = x->samples++;
		bool first = k == 0;
		double us;

		spm_decode_sample(&dc->cfg, data + off, &ts, values);
		if (!first) {
			delta = ts - x->last_ts;
			if (k == 1 || delta < x->ts_delta_min)
				x->ts_delta_min = delta;
			if (k == 1 || delta > x->ts_delta_max)
				x->ts_delta_max = delta;
		}
		x->last_ts = ts;
		for (i = 0; i < dc->cfg.num_values; i++) {
			unsigned int c;
			bool sat = false;

			/* all ones: saturated or invalid (spm_program.h) */
			for (c = 0; c < dc->cfg.num_counters; c++) {
				const struct spm_counter_slot *cs =
					&dc->cfg.counters[c];

				if (i >= cs->value_index &&
				    i < cs->value_index + cs->num_values)
					sat = values[i] == (cs->bits == 32 ?
						0xffffffffull : 0xffffull);
			}
			if (sat) {
				x->saturated[i]++;
				continue;
			}
			if (x->samples - x->saturated[i] == 1 ||
			    values[i] < x->vmin[i])
				x->vmin[i] = values[i];
			if (values[i] > x->vmax[i])
				x->vmax[i] = values[i];
			x->vsum[i] += (double)values[i];
		}
		if (dc->cycle_counter >= 0) {
			uint64_t v = values[dc->cfg.counters[dc->cycle_counter].value_index];

			if (v == dc->cfg.interval)
				x->cycles_equal++;
			else
				x->cycles_differ++;
		}
		host = host_time(d, s, ts);
		if (dc->csv) {
			fprintf(dc->csv, "%u,%u,%" PRIu64 ",%" PRIu64 ",",
				s->xcc, s->buffer, k, ts);
			if (!first)
				fprintf(dc->csv, "%" PRIu64, delta);
			fputc(',', dc->csv);
			if (host)
				fprintf(dc->csv, "%.9f", secs(d, host));
			for (i = 0; i < dc->cfg.num_values; i++)
				fprintf(dc->csv, ",%" PRIu64, values[i]);
			fputc('\n', dc->csv);
		}
		if (!dc->trace)
			continue;
		/* The host estimate; else the share's start plus the
		 * timestamp's advance at the counter rate; else samples at
		 * the interval at 1 GHz (the trace needs some time) */
		if (host)
			us = trace_us(d, host);
		else if (d->fh.gpu_counter_khz)
			us = trace_us(d, s->start_ns) +
			     (double)(off / size) * dc->cfg.interval * 1e3 /
			     (double)d->fh.gpu_counter_khz;
		else
			us = (double)k * dc->cfg.interval / 1e3;
		trace_xcc(d, s->xcc);
		for (i = 0; i < dc->cfg.num_counters; i++) {
			const struct spm_counter_slot *cs = &dc->cfg.counters[i];

			trace_sep(dc);
			fprintf(dc->trace, "{\"name\":\"%s\",\"cat\":\"spm\",\"ph\":\"C\",\"ts\":%.3f,\"pid\":%u,\"tid\":0,\"args\":{",
				cs->info->name, us, s->xcc);
			for (j = 0; j < cs->num_values; j++)
				fprintf(dc->trace, "%s\"%s%u\":%" PRIu64,
					j ? "," : "",
					cs->num_values > 1 ? "se" : "value",
					cs->num_values > 1 ? j : 0,
					values[cs->value_index + j]);
			fputs("}}", dc->trace);
		}
	}
}

static void read_recording(struct dump *d, const struct options *o)
{
	struct spm_reader rd;
	struct spm_record r;
	unsigned char *data = NULL;
	size_t cap = 0;
	FILE *f;
	int ret;

	f = strcmp(o->input, "-") ? fopen(o->input, "rb") : stdin;
	if (!f)
		die(EXIT_ERROR, "cannot open %s: %s", o->input, strerror(errno));
	ret = spm_file_read_header(&rd, f, &d->fh);
	if (ret)
		die(EXIT_ERROR, "%s: %s", o->input,
		    ret == -EIO ? strerror(errno) : rd.what);
	d->format = rd.format;
	d->timed = rd.format >= 2;
	d->t0 = d->fh.start_ns;

	while ((ret = spm_file_read_record(&rd, &r, &data, &cap)) > 0) {
		struct share *s;
		struct xcc *x;

		if (d->complete)
			die(EXIT_ERROR, "%s: records after the end record at offset %" PRIu64,
			    o->input, rd.offset);
		if (r.type == SPM_RECORD_END) {
			d->complete = true;
			d->end = r;
			continue;
		}
		if (r.type == SPM_RECORD_CONFIG) {
			take_config(d, o, data, r.bytes);
			continue;
		}
		if (r.type != SPM_RECORD_SHARE) {
			/* A later recorder's record: skipped */
			d->unknown_records++;
			continue;
		}
		if (d->nshares == d->cap) {
			size_t n = d->cap ? d->cap * 2 : 1024;
			struct share *p = realloc(d->shares, n * sizeof(*p));

			if (!p)
				die(EXIT_ERROR, "out of memory");
			d->shares = p;
			d->cap = n;
		}
		s = &d->shares[d->nshares++];
		memset(s, 0, sizeof(*s));
		s->buffer = r.buffer;
		s->bytes = r.bytes;
		s->seq = r.seq;
		s->xcc = r.xcc;
		s->share = r.share;
		s->num_shares = r.num_shares;
		s->loss = r.flags & SPM_RECORD_LOSS;
		s->full = r.flags & SPM_RECORD_FULL;
		s->kernel_info = r.flags & SPM_RECORD_KERNEL_INFO;
		if (r.flags & SPM_RECORD_GPU_CLOCK) {
			s->gpu_clock = r.gpu_clock;
			s->gpu_clock_host_ns = r.gpu_clock_host_ns;
		}
		s->start_ns = r.start_ns;
		s->last_ns = r.last_ns;
		s->retired_ns = r.retired_ns;
		if (r.xcc >= MAX_XCC)
			die(EXIT_ERROR, "%s: XCC id %u out of range", o->input,
			    r.xcc);

		x = &d->xcc[r.xcc];
		x->seen = true;
		x->shares++;
		x->bytes += r.bytes;
		if (s->loss)
			x->loss_shares++;
		if (s->full)
			x->full_shares++;
		if (!r.bytes)
			x->empty_shares++;
		if (s->kernel_info) {
			if (s->seq > x->last_seq + 1) {
				s->gap_before = s->seq - x->last_seq - 1;
				x->lost_buffers += s->gap_before;
			} else if (s->seq <= x->last_seq) {
				fprintf(stderr, "%s: XCC %u: sequence goes back from %u to %u at buffer %u\n",
					prog, s->xcc, x->last_seq, s->seq,
					s->buffer);
			}
			x->last_seq = s->seq;
		}
		if (o->raw && r.bytes) {
			if (!x->raw) {
				char path[PATH_MAX];

				snprintf(path, sizeof(path), "%s/xcc%u.raw",
					 o->raw, r.xcc);
				x->raw = fopen(path, "wb");
				if (!x->raw)
					die(EXIT_ERROR, "cannot create %s: %s",
					    path, strerror(errno));
			}
			if (fwrite(data, 1, r.bytes, x->raw) != r.bytes)
				die(EXIT_ERROR, "writing %s/xcc%u.raw: %s",
				    o->raw, r.xcc, strerror(errno));
		}
		/* Shares have no start time in format 1: t0 as below */
		if (!d->t0)
			d->t0 = s->start_ns;
		trace_share_events(d, s);
		if (d->dec.have && r.bytes)
			decode_share(d, s, data);
	}
	free(data);
	/* Keep what was read before a cut or a bad record: say so, exit 1. */
	if (ret < 0) {
		fprintf(stderr, "%s: %s: %s at offset %" PRIu64 "; reading what came before\n",
			prog, o->input, ret == -EIO ? strerror(errno) :
			ret == -ENOMEM ? "out of memory" : rd.what, rd.offset);
		d->read_error = true;
	}
	if (f != stdin)
		fclose(f);
	/* Files without a start time: count from the first share. */
	if (!d->t0 && d->nshares)
		d->t0 = d->shares[0].start_ns;
}

/* The kernel identified the shares (uAPI 1.1 and later 1.x). */
static bool kernel_info(const struct dump *d)
{
	return AMDGPU_PROFILER_VERSION_MAJOR(d->fh.version) == 1 &&
	       AMDGPU_PROFILER_VERSION_MINOR(d->fh.version) >= 1;
}

/*
 * The GPU clock against host time, from the first and the last buffer that
 * carry a reading: the counter's rate as measured, in kHz (0 if fewer than
 * two readings), and the number of buffers with one.
 */
static double gpu_clock_khz(const struct dump *d, size_t *readings)
{
	const struct share *first = NULL, *last = NULL;
	uint32_t buffer = UINT32_MAX;
	size_t k;

	*readings = 0;
	for (k = 0; k < d->nshares; k++) {
		const struct share *s = &d->shares[k];

		if (!s->gpu_clock || s->buffer == buffer)
			continue;
		buffer = s->buffer;
		(*readings)++;
		if (!first)
			first = s;
		last = s;
	}
	if (*readings < 2 || last->gpu_clock_host_ns <= first->gpu_clock_host_ns)
		return 0;
	return (double)(last->gpu_clock - first->gpu_clock) * 1e6 /
	       (double)(last->gpu_clock_host_ns - first->gpu_clock_host_ns);
}

/* The decoded counters: per XCC and counter min, max, mean. */
static void print_counters(const struct dump *d)
{
	const struct decode *dc = &d->dec;
	const struct spm_config *cfg = &dc->cfg;
	unsigned int i, v;
	char name[64];

	if (!dc->seen)
		return;
	if (!dc->have) {
		printf("counters: a configuration is recorded but not decoded (see above)\n");
		return;
	}
	printf("counters: GC %u.%u.%u, %u SEs, sample interval %u cycles, %zu-byte samples, %u counter%s%s\n",
	       cfg->gc >> 16, (cfg->gc >> 8) & 0xff, cfg->gc & 0xff,
	       cfg->num_se, cfg->interval, spm_sample_size(cfg),
	       cfg->num_counters, cfg->num_counters == 1 ? "" : "s",
	       dc->fc.flags & SPM_FILE_CONFIG_PROGRAMMED ? "" :
	       " (recorded, not programmed by the recorder)");
	printf("%5s %-36s %10s %14s %14s %16s %10s\n", "XCC", "counter",
	       "samples", "min", "max", "mean", "saturated");
	for (i = 0; i < MAX_XCC; i++) {
		const struct xcc_decode *x = &dc->x[i];

		if (!d->xcc[i].seen)
			continue;
		for (v = 0; v < cfg->num_values; v++) {
			unsigned int c = 0;
			uint64_t n = x->samples - x->saturated[v];

			while (c + 1 < cfg->num_counters &&
			       v >= cfg->counters[c + 1].value_index)
				c++;
			value_name(cfg, c, v - cfg->counters[c].value_index,
				   name, sizeof(name));
			if (!n)
				printf("%5u %-36s %10" PRIu64 " %14s %14s %16s %10" PRIu64 "\n",
				       i, name, x->samples, "-", "-", "-",
				       x->saturated[v]);
			else
				printf("%5u %-36s %10" PRIu64 " %14" PRIu64 " %14" PRIu64 " %16.3f %10" PRIu64 "\n",
				       i, name, x->samples, x->vmin[v],
				       x->vmax[v], x->vsum[v] / (double)n,
				       x->saturated[v]);
		}
	}
	for (i = 0; i < MAX_XCC; i++) {
		const struct xcc_decode *x = &dc->x[i];

		if (!d->xcc[i].seen)
			continue;
		if (dc->cycle_counter >= 0 && x->samples) {
			if (!x->cycles_differ)
				printf("cycle counter: XCC %u: CPC_ALWAYS_COUNT equals the interval (%u) in all %" PRIu64 " samples\n",
				       i, cfg->interval, x->samples);
			else
				printf("cycle counter: XCC %u: CPC_ALWAYS_COUNT differs from the interval (%u) in %" PRIu64 " of %" PRIu64 " samples\n",
				       i, cfg->interval, x->cycles_differ,
				       x->samples);
		}
		if (x->samples > 1)
			printf("timestamp: XCC %u: deltas from %" PRIu64 " to %" PRIu64 " between samples\n",
			       i, x->ts_delta_min, x->ts_delta_max);
		if (x->partial_bytes)
			printf("warning: XCC %u: %" PRIu64 " bytes of data are not whole samples and were not decoded\n",
			       i, x->partial_bytes);
	}
}

static void print_summary(const struct dump *d, const struct options *o)
{
	uint64_t bytes = 0, loss = 0, full = 0, lost = 0;
	uint64_t loss_buffers = 0, full_buffers = 0;
	uint64_t first = UINT64_MAX, last = 0;
	unsigned int nxcc = 0, events = 0, i;
	uint32_t buffer = UINT32_MAX;
	bool buf_loss = false, buf_full = false;
	size_t k, readings;
	double khz;

	for (k = 0; k < d->nshares; k++) {
		const struct share *s = &d->shares[k];

		if (s->start_ns && s->start_ns < first)
			first = s->start_ns;
		if (s->retired_ns > last)
			last = s->retired_ns;
		/* Shares of one buffer are consecutive records */
		if (s->buffer != buffer) {
			buffer = s->buffer;
			buf_loss = false;
			buf_full = false;
		}
		if (s->loss && !buf_loss) {
			buf_loss = true;
			loss_buffers++;
		}
		if (s->full && !buf_full) {
			buf_full = true;
			full_buffers++;
		}
	}
	for (i = 0; i < MAX_XCC; i++) {
		if (!d->xcc[i].seen)
			continue;
		nxcc++;
		bytes += d->xcc[i].bytes;
		loss += d->xcc[i].loss_shares;
		full += d->xcc[i].full_shares;
		/* A lost buffer is missing from every XCC's sequence */
		if (d->xcc[i].lost_buffers > lost)
			lost = d->xcc[i].lost_buffers;
	}

	printf("%s: recording format %d, profiler interface %u.%u, buffers of %u bytes",
	       o->input, d->format,
	       AMDGPU_PROFILER_VERSION_MAJOR(d->fh.version),
	       AMDGPU_PROFILER_VERSION_MINOR(d->fh.version), d->fh.buf_size);
	if (d->fh.num_buffers)
		printf(" x %u, timeout %u ms", d->fh.num_buffers,
		       d->fh.timeout_ms);
	printf("\n");
	printf("XCCs: %u in the records", nxcc);
	if (d->complete)
		printf(", %u according to the recorder", d->end.num_shares);
	printf("; shares %s\n", kernel_info(d) ?
	       "identified by the kernel (interface 1.1)" :
	       "identified by position (interface 1.0: share i is the i-th XCC of the partition)");
	if (d->complete)
		printf("complete: %u buffers retired, %u of them not recorded (before the XCC count was known)\n",
		       d->end.buffer, d->end.seq);
	else
		printf("incomplete: no end record (the recorder was killed or the file was cut)\n");
	if (d->timed && last > first && first != UINT64_MAX)
		printf("time: %.3f s to %.3f s\n", secs(d, first), secs(d, last));
	printf("total: %zu shares, %" PRIu64 " bytes; buffers with lost samples: %" PRIu64
	       " (%" PRIu64 " shares); lost buffers: %" PRIu64
	       "; buffers with a full share: %" PRIu64 " (%" PRIu64
	       " shares; not counted as loss: the rest went on in the next buffer, but in a ring mode that stalls the RLC may have missed samples meanwhile)\n",
	       d->nshares, bytes, loss_buffers, loss, lost, full_buffers, full);
	khz = gpu_clock_khz(d, &readings);
	if (readings)
		printf("GPU clock: read with %zu buffers, %.0f kHz against host time (the kernel says %u kHz)\n",
		       readings, khz, d->fh.gpu_counter_khz);

	printf("%5s %8s %14s %10s %10s %10s %10s %8s\n", "XCC", "shares",
	       "bytes", "MiB/s", "with-loss", "full", "lost", "empty");
	for (i = 0; i < MAX_XCC; i++) {
		const struct xcc *x = &d->xcc[i];
		double dur = d->timed && last > first ?
			     (double)(last - first) / 1e9 : 0;
		char lost_s[24] = "n/a";

		if (!x->seen)
			continue;
		/* Only a 1.1 kernel numbers the buffers: gaps show loss. */
		if (kernel_info(d))
			snprintf(lost_s, sizeof(lost_s), "%" PRIu64,
				 x->lost_buffers);
		printf("%5u %8" PRIu64 " %14" PRIu64 " %10.2f %10" PRIu64
		       " %10" PRIu64 " %10s %8" PRIu64 "\n", i, x->shares,
		       x->bytes,
		       dur > 0 ? (double)x->bytes / 1048576.0 / dur : 0.0,
		       x->loss_shares, x->full_shares, lost_s, x->empty_shares);
	}

	buffer = UINT32_MAX;
	for (k = 0; k < d->nshares; k++) {
		const struct share *s = &d->shares[k];
		/* A lost buffer is missing from every XCC: say it once */
		bool gap = s->gap_before && s->buffer != buffer;

		if (!s->loss && !gap)
			continue;
		if (++events > MAX_EVENTS)
			continue;
		if (gap) {
			buffer = s->buffer;
			printf("lost: %u buffer%s before seq %u (buffer %u, %.3f s)\n",
			       s->gap_before, s->gap_before > 1 ? "s" : "",
			       s->seq, s->buffer, secs(d, s->start_ns));
		}
		if (s->loss)
			printf("loss: XCC %u: buffer %u, %.3f s to %.3f s, %u bytes kept\n",
			       s->xcc, s->buffer, secs(d, s->start_ns),
			       secs(d, s->retired_ns), s->bytes);
	}
	if (events > MAX_EVENTS)
		printf("... and %u more loss or gap events (see --csv)\n",
		       events - MAX_EVENTS);
	if (d->unknown_records)
		printf("skipped %" PRIu64 " records of types this dump does not know\n",
		       d->unknown_records);
	print_counters(d);
}

static void write_csv(const struct dump *d, const char *path)
{
	FILE *f = open_out(path);
	size_t k;

	fprintf(f, "buffer,share,num_shares,xcc,seq,lost_before,bytes,data_loss,full,start_s,last_s,retired_s,mib_per_s,gpu_clock,gpu_clock_host_s\n");
	for (k = 0; k < d->nshares; k++) {
		const struct share *s = &d->shares[k];

		fprintf(f, "%u,%u,%u,%u,%u,%u,%u,%d,%d,%.9f,%.9f,%.9f,%.3f,%" PRIu64 ",%.9f\n",
			s->buffer, s->share, s->num_shares, s->xcc, s->seq,
			s->gap_before, s->bytes, s->loss ? 1 : 0,
			s->full ? 1 : 0,
			secs(d, s->start_ns), secs(d, s->last_ns),
			secs(d, s->retired_ns), share_rate(s), s->gpu_clock,
			s->gpu_clock ? secs(d, s->gpu_clock_host_ns) : 0.0);
	}
	close_out(f, path);
}

/* ---- SVG chart ---- */

#define SVG_W		960.0
#define SVG_LEFT	80.0
#define SVG_RIGHT	20.0
#define SVG_TOP		72.0
#define SVG_PANEL	120.0
#define SVG_GAP		44.0
#define SVG_BOTTOM	30.0

/* A "nice" tick step for a span (1, 2 or 5 times a power of ten). */
static double nice_step(double span, int ticks)
{
	double raw = span / ticks, mag, r;

	if (raw <= 0)
		return 1;
	mag = pow(10, floor(log10(raw)));
	r = raw / mag;
	return (r <= 1 ? 1 : r <= 2 ? 2 : r <= 5 ? 5 : 10) * mag;
}

static void write_svg(const struct dump *d, const char *path,
		      const char *input)
{
	unsigned int ids[MAX_XCC], n = 0, p, i;
	double tmin = 0, tmax = 0, ymax = 0, step, t, h;
	FILE *f;
	size_t k;

	for (i = 0; i < MAX_XCC; i++)
		if (d->xcc[i].seen)
			ids[n++] = i;
	/* X: seconds when the records are timed, else buffer numbers. */
	for (k = 0; k < d->nshares; k++) {
		const struct share *s = &d->shares[k];
		double a = d->timed ? secs(d, s->start_ns) : s->buffer;
		double b = d->timed ? secs(d, s->retired_ns) : s->buffer + 1;
		double y = d->timed ? share_rate(s) :
			   (double)s->bytes / 1048576.0;

		if (k == 0 || a < tmin)
			tmin = a;
		if (b > tmax)
			tmax = b;
		if (y > ymax)
			ymax = y;
	}
	/* Timed: the axis starts when the recording did. */
	if (d->timed && tmin > 0)
		tmin = 0;
	if (tmax <= tmin)
		tmax = tmin + 1;
	if (ymax <= 0)
		ymax = 1;
	step = nice_step(ymax, 4);
	ymax = ceil(ymax / step) * step;

	f = fopen(path, "w");
	if (!f)
		die(EXIT_ERROR, "cannot create %s: %s", path, strerror(errno));
	h = SVG_TOP + (n ? n : 1) * (SVG_PANEL + SVG_GAP) + SVG_BOTTOM;
	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		"<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" font-family=\"sans-serif\" font-size=\"12\">\n",
		SVG_W, h, SVG_W, h);
	fprintf(f, "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n");
	fprintf(f, "<text x=\"%.0f\" y=\"22\" font-size=\"16\" font-weight=\"bold\">SPM throughput per XCC</text>\n",
		SVG_LEFT);
	fprintf(f, "<text x=\"%.0f\" y=\"40\" fill=\"#444\">", SVG_LEFT);
	if (strrchr(input, '/'))
		input = strrchr(input, '/') + 1;
	for (const char *c = input; *c; c++) {
		if (*c == '<')
			fputs("&lt;", f);
		else if (*c == '&')
			fputs("&amp;", f);
		else
			fputc(*c, f);
	}
	fprintf(f, " - interface %u.%u, %u XCC%s, %zu shares; red: data lost, dashed: buffers lost</text>\n",
		AMDGPU_PROFILER_VERSION_MAJOR(d->fh.version),
		AMDGPU_PROFILER_VERSION_MINOR(d->fh.version), n,
		n == 1 ? "" : "s", d->nshares);

	for (p = 0; p < n; p++) {
		double top = SVG_TOP + p * (SVG_PANEL + SVG_GAP);
		double pw = SVG_W - SVG_LEFT - SVG_RIGHT;
		bool first = true;
		double y;

#define X(v) (SVG_LEFT + ((v) - tmin) / (tmax - tmin) * pw)
#define Y(v) (top + SVG_PANEL - (v) / ymax * SVG_PANEL)
		fprintf(f, "<g id=\"xcc%u\">\n", ids[p]);
		fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-weight=\"bold\">XCC %u</text>\n",
			SVG_LEFT, top - 12, ids[p]);
		/* Loss first, under the line. */
		for (k = 0; k < d->nshares; k++) {
			const struct share *s = &d->shares[k];
			double a, b;

			if (s->xcc != ids[p] || !s->loss)
				continue;
			a = d->timed ? secs(d, s->start_ns) : s->buffer;
			b = d->timed ? secs(d, s->retired_ns) : s->buffer + 1;
			fprintf(f, "<rect class=\"loss\" x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%.1f\" fill=\"#e03030\" fill-opacity=\"0.25\"/>\n",
				X(a), top, X(b) - X(a) > 2 ? X(b) - X(a) : 2,
				SVG_PANEL);
			fprintf(f, "<path class=\"loss-mark\" d=\"M%.2f %.1f l-5 -9 h10 z\" fill=\"#e03030\"/>\n",
				(X(a) + X(b)) / 2, top);
		}
		/* Axes and grid. */
		for (y = 0; y <= ymax + step / 2; y += step) {
			fprintf(f, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>\n",
				SVG_LEFT, SVG_LEFT + pw, Y(y), Y(y));
			fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\" fill=\"#444\">%g</text>\n",
				SVG_LEFT - 6, Y(y) + 4, y);
		}
		fprintf(f, "<text transform=\"translate(%.1f %.1f) rotate(-90)\" text-anchor=\"middle\" fill=\"#444\">%s</text>\n",
			SVG_LEFT - 52, top + SVG_PANEL / 2,
			d->timed ? "MiB/s" : "MiB");
		fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"none\" stroke=\"#888\"/>\n",
			SVG_LEFT, top, pw, SVG_PANEL);
		/* The throughput of each share over its time as current buffer. */
		fprintf(f, "<path class=\"rate\" fill=\"none\" stroke=\"#1f5fbf\" stroke-width=\"1.5\" d=\"");
		for (k = 0; k < d->nshares; k++) {
			const struct share *s = &d->shares[k];
			double a, b, v;

			if (s->xcc != ids[p])
				continue;
			a = d->timed ? secs(d, s->start_ns) : s->buffer;
			b = d->timed ? secs(d, s->retired_ns) : s->buffer + 1;
			v = d->timed ? share_rate(s) :
			    (double)s->bytes / 1048576.0;
			fprintf(f, "%s%.2f %.2f H%.2f ", first ? "M" : "L",
				X(a), Y(v), X(b));
			first = false;
		}
		fprintf(f, "\"/>\n");
		/* Lost buffers: where the kernel's sequence jumps. */
		for (k = 0; k < d->nshares; k++) {
			const struct share *s = &d->shares[k];
			double a;

			if (s->xcc != ids[p] || !s->gap_before)
				continue;
			a = d->timed ? secs(d, s->start_ns) : s->buffer;
			fprintf(f, "<line class=\"gap\" x1=\"%.2f\" x2=\"%.2f\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#e08000\" stroke-width=\"2\" stroke-dasharray=\"5 3\"/>\n",
				X(a), X(a), top, top + SVG_PANEL);
			fprintf(f, "<text x=\"%.2f\" y=\"%.1f\" fill=\"#e08000\" font-size=\"11\">%u lost</text>\n",
				X(a) + 3, top + 12, s->gap_before);
		}
		/* Time axis under each panel. */
		step = nice_step(tmax - tmin, 8);
		for (t = ceil(tmin / step) * step; t <= tmax + step / 1e6;
		     t += step) {
			fprintf(f, "<line x1=\"%.2f\" x2=\"%.2f\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#888\"/>\n",
				X(t), X(t), top + SVG_PANEL,
				top + SVG_PANEL + 4);
			fprintf(f, "<text x=\"%.2f\" y=\"%.1f\" text-anchor=\"middle\" fill=\"#444\" font-size=\"11\">%g</text>\n",
				X(t), top + SVG_PANEL + 16, t);
		}
		step = nice_step(ymax, 4);
		fprintf(f, "</g>\n");
#undef X
#undef Y
	}
	fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" fill=\"#444\">%s</text>\n",
		SVG_LEFT + (SVG_W - SVG_LEFT - SVG_RIGHT) / 2, h - 14,
		d->timed ? "seconds since the recording started" :
			   "retired buffer (this recording has no times)");
	fprintf(f, "</svg>\n");
	if (fclose(f))
		die(EXIT_ERROR, "writing %s: %s", path, strerror(errno));
}

int main(int argc, char **argv)
{
	static struct dump d;
	struct options o;
	unsigned int i;

	parse_options(argc, argv, &o);
	if (o.raw && mkdir(o.raw, 0777) && errno != EEXIST)
		die(EXIT_ERROR, "cannot create %s: %s", o.raw, strerror(errno));
	read_recording(&d, &o);
	for (i = 0; i < MAX_XCC; i++)
		if (d.xcc[i].raw && fclose(d.xcc[i].raw))
			die(EXIT_ERROR, "writing %s/xcc%u.raw: %s", o.raw, i,
			    strerror(errno));
	if (d.dec.csv)
		close_out(d.dec.csv, o.counters);
	if (d.dec.trace) {
		fprintf(d.dec.trace, "\n],\"displayTimeUnit\":\"ms\"}\n");
		close_out(d.dec.trace, o.trace);
	}
	if (!o.quiet)
		print_summary(&d, &o);
	if ((o.counters || o.trace) && !d.dec.have) {
		fprintf(stderr, "%s: %s: %s: nothing decoded for --counters or --trace\n",
			prog, o.input, d.dec.seen ?
			"the counter configuration record is not usable" :
			"no counter configuration in this recording (record with amdgpu-spm-record -e)");
		free(d.shares);
		return EXIT_ERROR;
	}
	if (o.csv)
		write_csv(&d, o.csv);
	if (o.svg)
		write_svg(&d, o.svg, o.input);
	free(d.shares);
	return d.read_error ? EXIT_ERROR : EXIT_OK;
}
