// SPDX-License-Identifier: MIT
/*
 * Copyright 2026 The amdgpu profiler series authors
 *
 * Unit test of the recording file (spm_file.c): what the recorder writes
 * reads back field for field; files of the first format still read; a
 * later format's larger headers are skipped; cut and foreign files are
 * refused with a reason. The counter configuration record reads back;
 * records of a type the reader does not know are returned, not refused.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spm_file.h"

#include "unit.h"

static FILE *mem(char **buf, size_t *len)
{
	FILE *f = open_memstream(buf, len);

	if (!f)
		abort();
	return f;
}

static FILE *reopen(const char *buf, size_t len)
{
	FILE *f = fmemopen((void *)buf, len, "rb");

	if (!f && len)
		abort();
	return f ? f : fopen("/dev/null", "rb");
}

static void test_round_trip(void)
{
	struct spm_file_header h = {
		.version = (1u << 24) | 1, .xcc_count = 2, .buf_size = 4096,
		.num_buffers = 3, .timeout_ms = 100, .start_ns = 1000,
		.start_realtime_ns = 2000,
	}, got;
	struct spm_record r = {
		.type = SPM_RECORD_SHARE,
		.flags = SPM_RECORD_LOSS | SPM_RECORD_KERNEL_INFO,
		.buffer = 7, .bytes = 64, .xcc = 5, .share = 1,
		.num_shares = 2, .seq = 8, .start_ns = 1234, .last_ns = 1300,
		.installed_ns = 1200, .retired_ns = 1400, .last_us = 66,
		.gpu_clock = 0x123456789ull, .gpu_clock_host_ns = 1210,
		.gpu_clock_window_ns = 3,
	}, end = { .type = SPM_RECORD_END, .buffer = 8, .num_shares = 2 }, rr;
	unsigned char payload[64], *data = NULL;
	struct spm_reader rd;
	size_t len, cap = 0;
	char *buf;
	FILE *f;

	memset(payload, 0x5a, sizeof(payload));
	f = mem(&buf, &len);
	CHECK(spm_file_write_header(f, &h) == 0);
	CHECK(spm_file_write_record(f, &r, payload) == 0);
	CHECK(spm_file_write_record(f, &end, NULL) == 0);
	fclose(f);
	CHECK(len == 64 + 88 + 64 + 88);

	f = reopen(buf, len);
	CHECK(spm_file_read_header(&rd, f, &got) == 0);
	CHECK(rd.format == 2 && !memcmp(got.magic, SPM_FILE_MAGIC, 8));
	CHECK(got.header_size == 64 && got.record_size == 88);
	CHECK(got.version == h.version && got.xcc_count == 2);
	CHECK(got.buf_size == 4096 && got.num_buffers == 3);
	CHECK(got.timeout_ms == 100 && got.start_ns == 1000);
	CHECK(got.start_realtime_ns == 2000);
	CHECK(spm_file_read_record(&rd, &rr, &data, &cap) == 1);
	CHECK(rr.magic == SPM_RECORD_MAGIC && rr.type == SPM_RECORD_SHARE);
	r.magic = SPM_RECORD_MAGIC;
	CHECK(!memcmp(&rr, &r, sizeof(r)));
	CHECK(cap >= 64 && !memcmp(data, payload, 64));
	CHECK(spm_file_read_record(&rd, &rr, &data, &cap) == 1);
	CHECK(rr.type == SPM_RECORD_END && rr.buffer == 8 && !rr.bytes);
	CHECK(spm_file_read_record(&rd, &rr, &data, &cap) == 0);
	fclose(f);

	/* Cut inside the data of the share record. */
	f = reopen(buf, 64 + 88 + 10);
	CHECK(spm_file_read_header(&rd, f, &got) == 0);
	CHECK(spm_file_read_record(&rd, &rr, &data, &cap) == -EINVAL);
	CHECK(rd.what && strstr(rd.what, "truncated"));
	fclose(f);
	/* Cut inside a record header. */
	f = reopen(buf, 64 + 20);
	CHECK(spm_file_read_header(&rd, f, &got) == 0);
	CHECK(spm_file_read_record(&rd, &rr, &data, &cap) == -EINVAL);
	fclose(f);
	/* Cut inside the file header. */
	f = reopen(buf, 30);
	CHECK(spm_file_read_header(&rd, f, &got) == -EINVAL);
	fclose(f);
	/* A bad record magic. */
	buf[64] ^= 1;
	f = reopen(buf, len);
	CHECK(spm_file_read_header(&rd, f, &got) == 0);
	CHECK(spm_file_read_record(&rd, &rr, &data, &cap) == -EINVAL);
	CHECK(rd.what && strstr(rd.what, "magic"));
	fclose(f);
	/* Not a recording. */
	f = reopen("hello world, not SPM data at all, no no no no no no no no no no no no", 64);
	CHECK(spm_file_read_header(&rd, f, &got) == -EINVAL);
	fclose(f);
	/* An empty file. */
	f = reopen("", 0);
	CHECK(spm_file_read_header(&rd, f, &got) == -EINVAL);
	fclose(f);
	free(buf);
	free(data);
}

/*
 * A file of the recorder before the GPU clock fields (64-byte records):
 * every field it has reads, the clock fields read as 0, the data follows.
 */
static void test_records_before_clock(void)
{
	struct spm_file_header h = { .version = (1u << 24) | 1 };
	struct spm_record r = { .magic = SPM_RECORD_MAGIC,
				.type = SPM_RECORD_SHARE, .bytes = 4,
				.xcc = 3, .seq = 9, .last_us = 17 }, rr;
	unsigned char *data = NULL;
	struct spm_reader rd;
	size_t len, cap = 0;
	char *buf;
	FILE *f;

	memcpy(h.magic, SPM_FILE_MAGIC, 8);
	h.header_size = sizeof(h);
	h.record_size = SPM_RECORD_SIZE_V2_0;
	f = mem(&buf, &len);
	fwrite(&h, sizeof(h), 1, f);
	fwrite(&r, SPM_RECORD_SIZE_V2_0, 1, f);
	fwrite("abcd", 4, 1, f);
	fwrite(&r, SPM_RECORD_SIZE_V2_0, 1, f);
	fwrite("efgh", 4, 1, f);
	fclose(f);

	f = reopen(buf, len);
	CHECK(spm_file_read_header(&rd, f, &h) == 0);
	CHECK(spm_file_read_record(&rd, &rr, &data, &cap) == 1);
	CHECK(rr.xcc == 3 && rr.seq == 9 && rr.last_us == 17 && rr.bytes == 4);
	CHECK(!rr.gpu_clock && !rr.gpu_clock_host_ns && !rr.gpu_clock_window_ns);
	CHECK(!memcmp(data, "abcd", 4));
	CHECK(spm_file_read_record(&rd, &rr, &data, &cap) == 1);
	CHECK(rr.xcc == 3 && !memcmp(data, "efgh", 4));
	CHECK(spm_file_read_record(&rd, &rr, &data, &cap) == 0);
	fclose(f);
	free(buf);
	free(data);
}

/* A later format with larger headers: the known part still reads. */
static void test_larger_headers(void)
{
	struct spm_file_header h = { .version = 1u << 24 };
	struct spm_record r = { .magic = SPM_RECORD_MAGIC,
				.type = SPM_RECORD_SHARE, .bytes = 4,
				.xcc = 3 }, rr;
	unsigned char pad[16] = { 0 }, *data = NULL;
	struct spm_reader rd;
	size_t len, cap = 0;
	char *buf;
	FILE *f;

	memcpy(h.magic, SPM_FILE_MAGIC, 8);
	h.header_size = sizeof(h) + 16;
	h.record_size = sizeof(r) + 8;
	f = mem(&buf, &len);
	fwrite(&h, sizeof(h), 1, f);
	fwrite(pad, 16, 1, f);
	fwrite(&r, sizeof(r), 1, f);
	fwrite(pad, 8, 1, f);
	fwrite("abcd", 4, 1, f);
	fclose(f);

	f = reopen(buf, len);
	CHECK(spm_file_read_header(&rd, f, &h) == 0);
	CHECK(spm_file_read_record(&rd, &rr, &data, &cap) == 1);
	CHECK(rr.xcc == 3 && rr.bytes == 4 && !memcmp(data, "abcd", 4));
	CHECK(spm_file_read_record(&rd, &rr, &data, &cap) == 0);
	fclose(f);

	/* Smaller than format 2's first records: refused. */
	h.record_size = SPM_RECORD_SIZE_V2_0 - 8;
	memcpy(buf, &h, sizeof(h));
	f = reopen(buf, len);
	CHECK(spm_file_read_header(&rd, f, &h) == -EINVAL);
	fclose(f);
	free(buf);
	free(data);
}

/* The first recorder's format: "AMDSPM01", 32-byte header, 16-byte records. */
static void test_format_1(void)
{
	struct {
		char magic[8];
		uint32_t version, xcc_count, buf_size, reserved[3];
	} h1 = { "AMDSPM0", 1u << 24, 2, 8192, { 0 } };
	struct {
		uint32_t magic, seq;
		uint16_t xcc, flags;
		uint32_t bytes;
	} r1 = { SPM_RECORD_MAGIC, 4, 1, 1, 8 };
	struct spm_file_header h;
	struct spm_record rr;
	unsigned char *data = NULL;
	struct spm_reader rd;
	size_t len, cap = 0;
	char *buf;
	FILE *f;

	memcpy(h1.magic, SPM_FILE_MAGIC_V1, 8);
	f = mem(&buf, &len);
	fwrite(&h1, sizeof(h1), 1, f);
	fwrite(&r1, sizeof(r1), 1, f);
	fwrite("12345678", 8, 1, f);
	fclose(f);

	f = reopen(buf, len);
	CHECK(spm_file_read_header(&rd, f, &h) == 0);
	CHECK(rd.format == 1 && h.version == 1u << 24 && h.xcc_count == 2);
	CHECK(h.buf_size == 8192);
	CHECK(spm_file_read_record(&rd, &rr, &data, &cap) == 1);
	CHECK(rr.type == SPM_RECORD_SHARE && rr.buffer == 4);
	CHECK(rr.xcc == 1 && rr.share == 1 && rr.flags == SPM_RECORD_LOSS);
	CHECK(!(rr.flags & SPM_RECORD_KERNEL_INFO) && !rr.start_ns);
	CHECK(rr.bytes == 8 && !memcmp(data, "12345678", 8));
	CHECK(spm_file_read_record(&rd, &rr, &data, &cap) == 0);
	fclose(f);
	free(buf);
	free(data);
}

/* SPM_RECORD_CONFIG, and a record type of a later recorder. */
static void test_config_record(void)
{
	struct spm_file_header h = { .version = (1u << 24) | 1 }, got;
	struct spm_file_config c, cc;
	struct spm_record r = { .type = SPM_RECORD_CONFIG, .bytes = sizeof(c) },
		later = { .type = 77, .bytes = 8 }, rr;
	unsigned char *data = NULL, eight[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
	struct spm_reader rd;
	size_t len, cap = 0;
	char *buf;
	FILE *f;

	memset(&c, 0, sizeof(c));
	c.size = sizeof(c);
	c.gc_version = 0x090403;
	c.interval = 4096;
	c.interval_requested = 4096;
	c.num_se = 4;
	c.num_counters = 2;
	c.global_lines = 2;
	c.sample_bytes = 64;
	strcpy(c.counters[0].name, "CPC_ALWAYS_COUNT");
	c.counters[0].bits = 16;
	c.counters[0].slot = 4;
	strcpy(c.counters[1].name, "CPC_ME1_BUSY_FOR_PACKET_DECODE");
	c.counters[1].bits = 16;
	c.counters[1].slot = 16;

	f = mem(&buf, &len);
	CHECK(spm_file_write_header(f, &h) == 0);
	CHECK(spm_file_write_record(f, &r, &c) == 0);
	CHECK(spm_file_write_record(f, &later, eight) == 0);
	fclose(f);
	f = reopen(buf, len);
	CHECK(spm_file_read_header(&rd, f, &got) == 0);
	CHECK(spm_file_read_record(&rd, &rr, &data, &cap) == 1);
	CHECK(rr.type == SPM_RECORD_CONFIG && rr.bytes == sizeof(c));
	CHECK(spm_file_parse_config(data, rr.bytes, &cc) == 0);
	CHECK(!memcmp(&cc, &c, sizeof(c)));
	/* Unknown to this reader: returned with its data, for skipping */
	CHECK(spm_file_read_record(&rd, &rr, &data, &cap) == 1);
	CHECK(rr.type == 77 && rr.bytes == 8 && !memcmp(data, eight, 8));
	CHECK(spm_file_read_record(&rd, &rr, &data, &cap) == 0);
	fclose(f);
	free(buf);

	/* A shorter (older) config reads with the rest 0; a longer one's
	 * tail is ignored; malformed ones are refused */
	c.size = offsetof(struct spm_file_config, counters) +
		 2 * sizeof(c.counters[0]);
	CHECK(spm_file_parse_config(&c, c.size, &cc) == 0);
	CHECK(cc.num_counters == 2 && !cc.counters[2].name[0] &&
	      !strcmp(cc.counters[1].name, "CPC_ME1_BUSY_FOR_PACKET_DECODE"));
	CHECK(spm_file_parse_config(&c, 20, &cc) == -EINVAL);
	c.num_counters = 3;		/* more than its size holds */
	CHECK(spm_file_parse_config(&c, c.size, &cc) == -EINVAL);
	c.num_counters = 2;
	memset(c.counters[0].name, 'A', sizeof(c.counters[0].name));
	CHECK(spm_file_parse_config(&c, c.size, &cc) == -EINVAL);
	free(data);
}

int main(void)
{
	test_round_trip();
	test_records_before_clock();
	test_larger_headers();
	test_format_1();
	test_config_record();
	return unit_done();
}
