// SPDX-License-Identifier: MIT
/*
 * Copyright 2026 The amdgpu profiler series authors
 *
 * The recording file of amdgpu-spm-record (see spm_file.h).
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "spm_file.h"

/* Largest share data a record can carry: a whole 256 MiB buffer. */
#define SPM_RECORD_MAX_BYTES	(256u << 20)

static int write_all(FILE *f, const void *p, size_t n)
{
	return fwrite(p, 1, n, f) == n ? 0 : -EIO;
}

int spm_file_write_header(FILE *f, const struct spm_file_header *h)
{
	struct spm_file_header out = *h;

	memcpy(out.magic, SPM_FILE_MAGIC, sizeof(out.magic));
	out.header_size = sizeof(out);
	out.record_size = sizeof(struct spm_record);
	return write_all(f, &out, sizeof(out));
}

int spm_file_write_record(FILE *f, const struct spm_record *r,
			  const void *data)
{
	struct spm_record out = *r;

	out.magic = SPM_RECORD_MAGIC;
	if (write_all(f, &out, sizeof(out)))
		return -EIO;
	if (out.bytes && write_all(f, data, out.bytes))
		return -EIO;
	return 0;
}

/* Reads exactly @n bytes: 1, 0 at EOF before the first byte, <0 else. */
static int read_exact(struct spm_reader *rd, void *p, size_t n)
{
	size_t got = fread(p, 1, n, rd->f);

	if (got == n) {
		rd->offset += n;
		return 1;
	}
	if (ferror(rd->f))
		return -EIO;
	if (got == 0)
		return 0;
	rd->what = "truncated";
	return -EINVAL;
}

/* The first format: 32-byte header, 16-byte records. */
struct spm_file_header_v1 {
	char magic[8];
	uint32_t version;
	uint32_t xcc_count;
	uint32_t buf_size;
	uint32_t reserved[3];
};

struct spm_record_v1 {
	uint32_t magic;
	uint32_t seq;		/* retired buffer number */
	uint16_t xcc;
	uint16_t flags;
	uint32_t bytes;
};

int spm_file_read_header(struct spm_reader *rd, FILE *f,
			 struct spm_file_header *h)
{
	unsigned char buf[sizeof(*h)];
	int ret;

	memset(rd, 0, sizeof(*rd));
	memset(h, 0, sizeof(*h));
	rd->f = f;
	rd->what = "not an SPM recording (bad magic)";
	ret = read_exact(rd, buf, 8);
	if (ret <= 0)
		return ret ? ret : -EINVAL;
	if (!memcmp(buf, SPM_FILE_MAGIC_V1, 8)) {
		struct spm_file_header_v1 v1;

		memcpy(&v1, buf, 8);
		ret = read_exact(rd, (char *)&v1 + 8, sizeof(v1) - 8);
		if (ret <= 0)
			return ret ? ret : -EINVAL;
		memcpy(h->magic, v1.magic, 8);
		h->header_size = sizeof(v1);
		h->record_size = sizeof(struct spm_record_v1);
		h->version = v1.version;
		h->xcc_count = v1.xcc_count;
		h->buf_size = v1.buf_size;
		rd->format = 1;
		return 0;
	}
	if (memcmp(buf, SPM_FILE_MAGIC, 8))
		return -EINVAL;
	ret = read_exact(rd, buf + 8, sizeof(*h) - 8);
	if (ret <= 0) {
		rd->what = "truncated file header";
		return ret ? ret : -EINVAL;
	}
	memcpy(h, buf, sizeof(*h));
	/* Later versions may grow both; skip what we do not know. */
	if (h->header_size < sizeof(*h) ||
	    h->record_size < SPM_RECORD_SIZE_V2_0) {
		rd->what = "header or record size smaller than this format's";
		return -EINVAL;
	}
	if (h->header_size > sizeof(*h) &&
	    fseek(f, (long)(h->header_size - sizeof(*h)), SEEK_CUR))
		return -EIO;
	rd->offset = h->header_size;
	/* Older files lack the fields at the end: they read as 0. */
	rd->record_size = h->record_size < sizeof(struct spm_record) ?
			  h->record_size : sizeof(struct spm_record);
	rd->record_extra = h->record_size - rd->record_size;
	rd->format = 2;
	rd->what = NULL;
	return 0;
}

static int read_data(struct spm_reader *rd, uint32_t bytes,
		     unsigned char **data, size_t *cap)
{
	int ret;

	if (bytes > SPM_RECORD_MAX_BYTES) {
		rd->what = "record larger than a destination buffer";
		return -EINVAL;
	}
	if (bytes > *cap) {
		unsigned char *p = realloc(*data, bytes);

		if (!p)
			return -ENOMEM;
		*data = p;
		*cap = bytes;
	}
	if (!bytes)
		return 1;
	ret = read_exact(rd, *data, bytes);
	if (ret == 0 || ret == -EINVAL) {
		rd->what = "truncated record data";
		return -EINVAL;
	}
	return ret;
}

int spm_file_read_record(struct spm_reader *rd, struct spm_record *r,
			 unsigned char **data, size_t *cap)
{
	int ret;

	memset(r, 0, sizeof(*r));
	if (rd->format == 1) {
		struct spm_record_v1 v1;

		ret = read_exact(rd, &v1, sizeof(v1));
		if (ret <= 0)
			return ret;
		if (v1.magic != SPM_RECORD_MAGIC) {
			rd->what = "bad record magic";
			return -EINVAL;
		}
		r->magic = v1.magic;
		r->type = SPM_RECORD_SHARE;
		r->flags = v1.flags & SPM_RECORD_LOSS;
		r->buffer = v1.seq;
		r->xcc = v1.xcc;
		r->share = (uint8_t)v1.xcc;
		r->bytes = v1.bytes;
		return read_data(rd, r->bytes, data, cap);
	}

	ret = read_exact(rd, r, rd->record_size);
	if (ret <= 0)
		return ret;
	if (r->magic != SPM_RECORD_MAGIC) {
		rd->what = "bad record magic";
		return -EINVAL;
	}
	/* Any type: a later recorder may add records this reader does not
	 * know; the caller skips them (the length is in @bytes). */
	if (!r->type) {
		rd->what = "record type 0";
		return -EINVAL;
	}
	if (rd->record_extra) {
		if (fseek(rd->f, (long)rd->record_extra, SEEK_CUR))
			return -EIO;
		rd->offset += rd->record_extra;
	}
	return read_data(rd, r->bytes, data, cap);
}

int spm_file_parse_config(const void *data, uint32_t bytes,
			  struct spm_file_config *c)
{
	size_t n = bytes < sizeof(*c) ? bytes : sizeof(*c);
	size_t need;
	uint32_t i;

	memset(c, 0, sizeof(*c));
	if (!data || bytes < offsetof(struct spm_file_config, counters))
		return -EINVAL;
	memcpy(c, data, n);
	if (c->size < offsetof(struct spm_file_config, counters) ||
	    c->size > bytes || c->num_counters > SPM_FILE_MAX_COUNTERS)
		return -EINVAL;
	need = offsetof(struct spm_file_config, counters) +
	       (size_t)c->num_counters * sizeof(c->counters[0]);
	if (c->size < need)
		return -EINVAL;
	for (i = 0; i < c->num_counters; i++)
		if (!memchr(c->counters[i].name, 0,
			    sizeof(c->counters[i].name)))
			return -EINVAL;
	return 0;
}
