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
"                       [--trace FILE] [--counter-svg FILE] [-q] RECORDING\n"
"Try 'amdgpu-spm-dump --help' for more information.\n";

struct options {
	const char *input;
	const char *csv;
	const char *raw;
	const char *svg;
	const char *counters;	/* per-sample CSV */
	const char *trace;	/* Chrome trace-event JSON */
	const char *counter_svg;	/* counters over time */
	unsigned int chart_points;	/* per line, before grouping */
	bool quiet;
};

/*
 * The counter chart's points of one XCC: at most 2 * --chart-points, each
 * the mean of @group consecutive samples; @acc is the group being summed.
 * When the points fill up, neighbours are merged and @group doubles, so a
 * point always covers samples [i * group, (i + 1) * group).
 */
#define SVG_MAX_POINTS	1000	/* --chart-points default */

struct chart_point {
	double t;			/* seconds since the recording started */
	double v[SPM_MAX_COUNTERS];	/* per counter, SE values summed */
};

struct chart {
	struct chart_point *p;
	size_t n;
	uint64_t group, acc_n;
	struct chart_point acc;
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
	struct chart *chart;		/* --counter-svg */
};

struct decode {
	bool have;			/* a config record that decodes */
	bool seen;			/* a config record at all */
	struct spm_file_config fc;
	struct spm_config cfg;
	int cycle_counter;		/* index of CPC_ALWAYS_COUNT, -1 none */
	FILE *csv, *trace;
	bool trace_any;			/* an event written (commas) */
	bool chart;			/* --counter-svg: keep points */
	unsigned int chart_points;
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
"      --counter-svg FILE  the decoded counters over time: a panel per\n"
"                   counter, a line per XCC\n"
"      --chart-points N  the counter chart draws up to 2N points a line\n"
"                   one sample each, past that means of groups of\n"
"                   samples (1 to 100000, default 1000)\n"
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
		{ "counter-svg", required_argument, NULL, 'G' },
		{ "chart-points", required_argument, NULL, 'N' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	int c;

	memset(o, 0, sizeof(*o));
	o->chart_points = SVG_MAX_POINTS;
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
		case 'G':
			o->counter_svg = optarg;
			break;
		case 'N': {
			char *end;
			unsigned long v;

			errno = 0;
			v = strtoul(optarg, &end, 10);
			if (errno || end == optarg || *end || !v || v > 100000)
				die(EXIT_USAGE, "invalid --chart-points '%s': 1 to 100000",
				    optarg);
			o->chart_points = (unsigned int)v;
			break;
		}
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
 * names, widths, GC version and interval (the GC's SE count: the stored
 * one is compared below), and check it against the layout the recorder
 * stored. A disagreement (another version of the counter table) is
 * reported and nothing is decoded.
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
			     0, reqs, dc->fc.num_counters,
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
	dc->chart = o->counter_svg != NULL;
	dc->chart_points = o->chart_points;
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

static void chart_push(struct chart *ch, const struct chart_point *pt,
		       uint64_t n)
{
	struct chart_point *q = &ch->p[ch->n++];
	unsigned int c;

	q->t = pt->t / (double)n;
	for (c = 0; c < SPM_MAX_COUNTERS; c++)
		q->v[c] = pt->v[c] / (double)n;
}

/* One decoded sample into XCC @xcc's chart. */
static void chart_add(struct xcc_decode *x, const struct spm_config *cfg,
		      unsigned int max, double t, const uint64_t *values)
{
	struct chart *ch = x->chart;
	unsigned int c, j;
	size_t i;

	if (!ch) {
		ch = x->chart = calloc(1, sizeof(*ch));
		if (ch)
			ch->p = calloc(2 * (size_t)max + 1, sizeof(*ch->p));
		if (!ch || !ch->p)
			die(EXIT_ERROR, "out of memory");
		ch->group = 1;
	}
	ch->acc.t += t;
	for (c = 0; c < cfg->num_counters; c++)
		for (j = 0; j < cfg->counters[c].num_values; j++)
			ch->acc.v[c] += (double)values[cfg->counters[c].value_index + j];
	if (++ch->acc_n < ch->group)
		return;
	chart_push(ch, &ch->acc, ch->acc_n);
	memset(&ch->acc, 0, sizeof(ch->acc));
	ch->acc_n = 0;
	if (ch->n < 2 * (size_t)max)
		return;
	/* Full: pairs of points become one, each the mean of 2 * group */
	for (i = 0; i < max; i++) {
		struct chart_point *a = &ch->p[2 * i], *b = &ch->p[2 * i + 1];

		ch->p[i].t = (a->t + b->t) / 2;
		for (c = 0; c < SPM_MAX_COUNTERS; c++)
			ch->p[i].v[c] = (a->v[c] + b->v[c]) / 2;
	}
	ch->n = max;
	ch->group *= 2;
}

/* The rest of the last group, as a point of fewer samples. */
static void chart_finish(struct chart *ch)
{
	if (ch && ch->acc_n) {
		chart_push(ch, &ch->acc, ch->acc_n);
		ch->acc_n = 0;
	}
}

/*
 * When a sample was taken, in seconds since the recording started: the
 * host estimate (@host, from the share's GPU clock pair), else the
 * share's start plus the sample's place in it at the counter rate, else
 * samples at the interval at 1 GHz (the trace and chart need some time).
 */
static double sample_secs(const struct dump *d, const struct share *s,
			  uint64_t host, size_t index, uint64_t k)
{
	const struct spm_config *cfg = &d->dec.cfg;

	if (host)
		return secs(d, host);
	if (d->fh.gpu_counter_khz)
		return secs(d, s->start_ns) + (double)index * cfg->interval /
		       ((double)d->fh.gpu_counter_khz * 1e3);
	return (double)k * cfg->interval / 1e9;
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
		if (dc->chart)
			chart_add(x, &dc->cfg, dc->chart_points,
				  sample_secs(d, s, host, off / size, k), values);
		if (!dc->trace)
			continue;
		us = sample_secs(d, s, host, off / size, k) * 1e6;
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

/* ---- SVG charts ---- */

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

static void svg_text(FILE *f, const char *t)
{
	for (; *t; t++) {
		if (*t == '<')
			fputs("&lt;", f);
		else if (*t == '&')
			fputs("&amp;", f);
		else if (*t == '"')
			fputs("&quot;", f);
		else
			fputc(*t, f);
	}
}

/*
 * One chart: a title, a subtitle that starts with the recording's name,
 * then panels stacked (svg_panel()), each with the same time axis.
 */
struct svg {
	FILE *f;
	const char *path;
	double h;		/* height */
	double t0, t1;		/* the time axis of every panel */
	const char *xlabel;
};

static void svg_open(struct svg *g, const char *path, unsigned int panels,
		     double t0, double t1, const char *xlabel,
		     const char *title, const char *input, const char *what)
{
	g->f = fopen(path, "w");
	if (!g->f)
		die(EXIT_ERROR, "cannot create %s: %s", path, strerror(errno));
	g->path = path;
	g->h = SVG_TOP + (panels ? panels : 1) * (SVG_PANEL + SVG_GAP) +
	       SVG_BOTTOM;
	g->t0 = t0;
	g->t1 = t1 > t0 ? t1 : t0 + 1;
	g->xlabel = xlabel;
	fprintf(g->f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		"<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" font-family=\"sans-serif\" font-size=\"12\">\n",
		SVG_W, g->h, SVG_W, g->h);
	fprintf(g->f, "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n");
	fprintf(g->f, "<text x=\"%.0f\" y=\"22\" font-size=\"16\" font-weight=\"bold\">%s</text>\n",
		SVG_LEFT, title);
	fprintf(g->f, "<text x=\"%.0f\" y=\"40\" fill=\"#444\">", SVG_LEFT);
	if (strrchr(input, '/'))
		input = strrchr(input, '/') + 1;
	svg_text(g->f, input);
	fprintf(g->f, " - %s</text>\n", what);
}

static void svg_close(struct svg *g)
{
	fprintf(g->f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" fill=\"#444\">%s</text>\n",
		SVG_LEFT + (SVG_W - SVG_LEFT - SVG_RIGHT) / 2, g->h - 14,
		g->xlabel);
	fprintf(g->f, "</svg>\n");
	if (fclose(g->f))
		die(EXIT_ERROR, "writing %s: %s", g->path, strerror(errno));
}

/* Panel @p of a chart: its place, and the value at its top. */
struct svg_panel {
	double top, pw;
	double vmax, step;
	const struct svg *g;
};

static double svg_x(const struct svg_panel *p, double t)
{
	return SVG_LEFT + (t - p->g->t0) / (p->g->t1 - p->g->t0) * p->pw;
}

static double svg_y(const struct svg_panel *p, double v)
{
	return p->top + SVG_PANEL - v / p->vmax * SVG_PANEL;
}

/*
 * Panel @index from value 0 to at least @vmax (rounded up to a tick):
 * its heading, grid, value ticks, @ylabel beside them and the frame. The
 * caller draws into it, then ends it with svg_panel_end().
 */
static void svg_panel(struct svg *g, struct svg_panel *p, unsigned int index,
		      double vmax, const char *heading, const char *ylabel)
{
	double y;

	p->g = g;
	p->top = SVG_TOP + index * (SVG_PANEL + SVG_GAP);
	p->pw = SVG_W - SVG_LEFT - SVG_RIGHT;
	if (vmax <= 0)
		vmax = 1;
	p->step = nice_step(vmax, 4);
	p->vmax = ceil(vmax / p->step) * p->step;
	fprintf(g->f, "<text x=\"%.1f\" y=\"%.1f\" font-weight=\"bold\">",
		SVG_LEFT, p->top - 12);
	svg_text(g->f, heading);
	fprintf(g->f, "</text>\n");
	for (y = 0; y <= p->vmax + p->step / 2; y += p->step) {
		fprintf(g->f, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>\n",
			SVG_LEFT, SVG_LEFT + p->pw, svg_y(p, y), svg_y(p, y));
		fprintf(g->f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\" fill=\"#444\">%g</text>\n",
			SVG_LEFT - 6, svg_y(p, y) + 4, y);
	}
	fprintf(g->f, "<text class=\"ylabel\" transform=\"translate(%.1f %.1f) rotate(-90)\" text-anchor=\"middle\" fill=\"#444\">",
		SVG_LEFT - 52, p->top + SVG_PANEL / 2);
	svg_text(g->f, ylabel);
	fprintf(g->f, "</text>\n");
	fprintf(g->f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"none\" stroke=\"#888\"/>\n",
		SVG_LEFT, p->top, p->pw, SVG_PANEL);
}

/* The time axis under the panel. */
static void svg_panel_end(struct svg_panel *p)
{
	FILE *f = p->g->f;
	double t0 = p->g->t0, t1 = p->g->t1, step = nice_step(t1 - t0, 8), t;

	for (t = ceil(t0 / step) * step; t <= t1 + step / 1e6; t += step) {
		fprintf(f, "<line x1=\"%.2f\" x2=\"%.2f\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#888\"/>\n",
			svg_x(p, t), svg_x(p, t), p->top + SVG_PANEL,
			p->top + SVG_PANEL + 4);
		fprintf(f, "<text x=\"%.2f\" y=\"%.1f\" text-anchor=\"middle\" fill=\"#444\" font-size=\"11\">%g</text>\n",
			svg_x(p, t), p->top + SVG_PANEL + 16, t);
	}
}

/* The throughput chart: a panel per XCC. */
static void write_svg(const struct dump *d, const char *path,
		      const char *input)
{
	unsigned int ids[MAX_XCC], n = 0, p, i;
	double tmin = 0, tmax = 0, ymax = 0;
	char what[160], heading[16];
	struct svg g;
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

	snprintf(what, sizeof(what), "interface %u.%u, %u XCC%s, %zu shares; red: data lost, dashed: buffers lost",
		 AMDGPU_PROFILER_VERSION_MAJOR(d->fh.version),
		 AMDGPU_PROFILER_VERSION_MINOR(d->fh.version), n,
		 n == 1 ? "" : "s", d->nshares);
	svg_open(&g, path, n, tmin, tmax, d->timed ?
		 "seconds since the recording started" :
		 "retired buffer (this recording has no times)",
		 "SPM throughput per XCC", input, what);

	for (p = 0; p < n; p++) {
		struct svg_panel pn;
		bool first = true;

		fprintf(g.f, "<g id=\"xcc%u\">\n", ids[p]);
		snprintf(heading, sizeof(heading), "XCC %u", ids[p]);
		svg_panel(&g, &pn, p, ymax, heading, d->timed ? "MiB/s" : "MiB");
		/* Loss, under the line. */
		for (k = 0; k < d->nshares; k++) {
			const struct share *s = &d->shares[k];
			double a, b;

			if (s->xcc != ids[p] || !s->loss)
				continue;
			a = svg_x(&pn, d->timed ? secs(d, s->start_ns) : s->buffer);
			b = svg_x(&pn, d->timed ? secs(d, s->retired_ns) :
				  s->buffer + 1);
			fprintf(g.f, "<rect class=\"loss\" x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%.1f\" fill=\"#e03030\" fill-opacity=\"0.25\"/>\n",
				a, pn.top, b - a > 2 ? b - a : 2, SVG_PANEL);
			fprintf(g.f, "<path class=\"loss-mark\" d=\"M%.2f %.1f l-5 -9 h10 z\" fill=\"#e03030\"/>\n",
				(a + b) / 2, pn.top);
		}
		/* The throughput of each share over its time as current buffer. */
		fprintf(g.f, "<path class=\"rate\" fill=\"none\" stroke=\"#1f5fbf\" stroke-width=\"1.5\" d=\"");
		for (k = 0; k < d->nshares; k++) {
			const struct share *s = &d->shares[k];
			double a, b, v;

			if (s->xcc != ids[p])
				continue;
			a = d->timed ? secs(d, s->start_ns) : s->buffer;
			b = d->timed ? secs(d, s->retired_ns) : s->buffer + 1;
			v = d->timed ? share_rate(s) :
			    (double)s->bytes / 1048576.0;
			fprintf(g.f, "%s%.2f %.2f H%.2f ", first ? "M" : "L",
				svg_x(&pn, a), svg_y(&pn, v), svg_x(&pn, b));
			first = false;
		}
		fprintf(g.f, "\"/>\n");
		/* Lost buffers: where the kernel's sequence jumps. */
		for (k = 0; k < d->nshares; k++) {
			const struct share *s = &d->shares[k];
			double a;

			if (s->xcc != ids[p] || !s->gap_before)
				continue;
			a = svg_x(&pn, d->timed ? secs(d, s->start_ns) : s->buffer);
			fprintf(g.f, "<line class=\"gap\" x1=\"%.2f\" x2=\"%.2f\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#e08000\" stroke-width=\"2\" stroke-dasharray=\"5 3\"/>\n",
				a, a, pn.top, pn.top + SVG_PANEL);
			fprintf(g.f, "<text x=\"%.2f\" y=\"%.1f\" fill=\"#e08000\" font-size=\"11\">%u lost</text>\n",
				a + 3, pn.top + 12, s->gap_before);
		}
		svg_panel_end(&pn);
		fprintf(g.f, "</g>\n");
	}
	svg_close(&g);
}

/* Line colours, one per XCC in the order the XCCs appear. */
static const char *const svg_colors[] = {
	"#1f5fbf", "#d0501a", "#2a9a3a", "#8e3fb0", "#b08a00", "#0f8f9f",
	"#c0307a", "#555555",
};

/*
 * The counter chart: a panel per counter, a line per XCC through its
 * samples (an SE counter's line is the sum over its SEs), at the host
 * time estimate of --counters. Where an XCC has more samples than
 * 2 * --chart-points, each point is the mean of a group of consecutive
 * samples (of time and of value; the polyline's data-group says how
 * many, the last point takes the rest).
 */
static void write_counter_svg(const struct dump *d, const char *path,
			      const char *input)
{
	const struct decode *dc = &d->dec;
	const struct spm_config *cfg = &dc->cfg;
	unsigned int ids[MAX_XCC], n = 0, c, i, nlines = 0;
	double tmax = 0;
	char what[192], heading[96], ylabel[96];
	struct svg g;
	size_t k;

	for (i = 0; i < MAX_XCC; i++)
		if (dc->x[i].chart && dc->x[i].chart->n) {
			const struct chart *ch = dc->x[i].chart;

			ids[n++] = i;
			if (ch->p[ch->n - 1].t > tmax)
				tmax = ch->p[ch->n - 1].t;
		}
	snprintf(what, sizeof(what), "GC %u.%u.%u, sample interval %u cycles, %u XCC%s with samples; one line per XCC",
		 cfg->gc >> 16, (cfg->gc >> 8) & 0xff, cfg->gc & 0xff,
		 cfg->interval, n, n == 1 ? "" : "s");
	svg_open(&g, path, cfg->num_counters, 0, tmax,
		 "seconds since the recording started (host time estimate)",
		 "SPM counters per sample", input, what);
	for (c = 0; c < cfg->num_counters; c++) {
		const struct spm_counter_slot *cs = &cfg->counters[c];
		struct svg_panel pn;
		double vmax = 0;

		for (i = 0; i < n; i++) {
			const struct chart *ch = dc->x[ids[i]].chart;

			for (k = 0; k < ch->n; k++)
				if (ch->p[k].v[c] > vmax)
					vmax = ch->p[k].v[c];
		}
		if (cs->num_values > 1)
			snprintf(heading, sizeof(heading), "%s (sum of %u SEs)",
				 cs->info->name, cs->num_values);
		else
			snprintf(heading, sizeof(heading), "%s", cs->info->name);
		snprintf(ylabel, sizeof(ylabel), "%s per sample", cs->info->unit);
		fprintf(g.f, "<g class=\"counter-panel\" data-counter=\"%s\">\n",
			cs->info->name);
		svg_panel(&g, &pn, c, vmax, heading, ylabel);
		/* Where value 0 and the top are, and the time axis, for readers */
		fprintf(g.f, "<desc class=\"scale\" data-x0=\"%.3f\" data-x1=\"%.3f\" data-t0=\"%.9g\" data-t1=\"%.9g\" data-y0=\"%.3f\" data-y1=\"%.3f\" data-vmax=\"%.9g\"/>\n",
			svg_x(&pn, g.t0), svg_x(&pn, g.t1), g.t0, g.t1,
			svg_y(&pn, 0), svg_y(&pn, pn.vmax), pn.vmax);
		for (i = 0; i < n; i++) {
			const struct chart *ch = dc->x[ids[i]].chart;
			const char *color = svg_colors[i % (sizeof(svg_colors) /
							    sizeof(svg_colors[0]))];

			fprintf(g.f, "<polyline class=\"counter\" data-xcc=\"%u\" data-group=\"%" PRIu64 "\" fill=\"none\" stroke=\"%s\" stroke-width=\"1.2\" points=\"",
				ids[i], ch->group, color);
			for (k = 0; k < ch->n; k++)
				fprintf(g.f, "%s%.2f,%.2f", k ? " " : "",
					svg_x(&pn, ch->p[k].t),
					svg_y(&pn, ch->p[k].v[c]));
			fprintf(g.f, "\"/>\n");
			/* The legend, right-aligned above the panel */
			fprintf(g.f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\" fill=\"%s\" font-size=\"11\">XCC %u</text>\n",
				SVG_LEFT + pn.pw - 60.0 * (n - 1 - i),
				pn.top - 12, color, ids[i]);
			nlines++;
		}
		svg_panel_end(&pn);
		fprintf(g.f, "</g>\n");
	}
	if (!nlines)
		fprintf(g.f, "<text x=\"%.1f\" y=\"%.1f\" fill=\"#a00\">no samples in this recording</text>\n",
			SVG_LEFT, SVG_TOP + SVG_PANEL / 2);
	svg_close(&g);
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
	for (i = 0; i < MAX_XCC; i++)
		chart_finish(d.dec.x[i].chart);
	if ((o.counters || o.trace || o.counter_svg) && !d.dec.have) {
		fprintf(stderr, "%s: %s: %s: nothing decoded for --counters, --trace or --counter-svg\n",
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
	if (o.counter_svg)
		write_counter_svg(&d, o.counter_svg, o.input);
	for (i = 0; i < MAX_XCC; i++)
		if (d.dec.x[i].chart) {
			free(d.dec.x[i].chart->p);
			free(d.dec.x[i].chart);
		}
	free(d.shares);
	return d.read_error ? EXIT_ERROR : EXIT_OK;
}
