/* SPDX-License-Identifier: MIT */
/*
 * Copyright 2026 The amdgpu profiler series authors
 *
 * The recording file of amdgpu-spm-record, read by amdgpu-spm-dump.
 * README.md (FILES) documents the format; all fields little endian.
 *
 * A file is a header, then records. A share record describes one XCC's
 * share of one retired destination buffer, empty or not, and carries its
 * SPM data; the end record closes a complete recording.
 */
#ifndef SPM_FILE_H
#define SPM_FILE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the SPM recording format is little endian; this code reads and writes it natively"
#endif

#define SPM_FILE_MAGIC		"AMDSPM02"
#define SPM_FILE_MAGIC_V1	"AMDSPM01"	/* read only */
#define SPM_RECORD_MAGIC	0x524d5053u	/* "SPMR" */

/* spm_file_header.flags */
#define SPM_FILE_XCC_COUNT_GIVEN	(1u << 0)	/* by --xcc-count */
#define SPM_FILE_BOOTTIME		(1u << 1)	/* times are CLOCK_BOOTTIME
							 * (else CLOCK_MONOTONIC) */
#define SPM_FILE_GTT_BUFFERS		(1u << 2)	/* buffers were GTT BOs */

struct spm_file_header {
	char magic[8];
	uint32_t header_size;		/* sizeof(struct spm_file_header) */
	uint32_t record_size;		/* sizeof(struct spm_record) */
	uint32_t version;		/* profiler interface, (major << 24) | minor */
	uint32_t xcc_count;		/* shares per buffer; 0 if not known yet */
	uint32_t buf_size;		/* bytes per destination buffer */
	uint32_t num_buffers;		/* rotating destination buffers */
	uint32_t timeout_ms;		/* SET_DEST_BUF wait */
	uint32_t flags;			/* SPM_FILE_* */
	uint64_t start_ns;		/* at the start (see SPM_FILE_BOOTTIME) */
	uint64_t start_realtime_ns;	/* CLOCK_REALTIME at the same time */
	uint32_t gpu_counter_khz;	/* AMDGPU_INFO_DEV_INFO gpu_counter_freq, 0 unknown */
	uint32_t reserved;
};

enum spm_record_type {
	SPM_RECORD_SHARE = 1,
	SPM_RECORD_END = 2,
	SPM_RECORD_CONFIG = 3,		/* struct spm_file_config follows */
};

/* spm_record.flags */
#define SPM_RECORD_LOSS		(1u << 0)	/* this share lost data */
#define SPM_RECORD_KERNEL_INFO	(1u << 1)	/* xcc, seq, times from the kernel (uAPI 1.1) */
#define SPM_RECORD_FULL		(1u << 2)	/* the share filled up; its rest went on in
						 * the next buffer (not a loss) */
#define SPM_RECORD_GPU_CLOCK	(1u << 3)	/* gpu_clock* are valid */

/*
 * SPM_RECORD_SHARE: one share of one retired buffer, then @bytes of data.
 * SPM_RECORD_END: @buffer = buffers retired in all, @seq = of those the
 *	ones not written (retired before the XCC count was known),
 *	@num_shares = XCC count (0: never known), @retired_ns = end time,
 *	flags SPM_RECORD_LOSS = some buffer lost data; @bytes = 0.
 */
struct spm_record {
	uint32_t magic;			/* SPM_RECORD_MAGIC */
	uint16_t type;			/* enum spm_record_type */
	uint16_t flags;			/* SPM_RECORD_* */
	uint32_t buffer;		/* retired buffer number, from 0 */
	uint32_t bytes;			/* data bytes that follow */
	uint16_t xcc;			/* logical XCC id of the share */
	uint8_t share;			/* index of the share in its buffer */
	uint8_t num_shares;		/* shares in the buffer */
	uint32_t seq;			/* kernel's per-XCC buffer number, 0 if not known */
	uint64_t start_ns;		/* share started: kernel time, else when installed */
	uint64_t last_ns;		/* last copy into the share; 0 if none or not known */
	uint64_t installed_ns;		/* SET_DEST_BUF that installed the buffer returned */
	uint64_t retired_ns;		/* SET_DEST_BUF that retired it returned */
	uint32_t last_us;		/* kernel's last_us (uAPI 1.1) */
	uint32_t reserved;
	/*
	 * Since record_size 88: the GPU clock counter (AMDGPU_INFO_TIMESTAMP)
	 * read right after the buffer was installed, the host time it was
	 * read at (middle of the query) and how long the query took.
	 */
	uint64_t gpu_clock;
	uint64_t gpu_clock_host_ns;
	uint32_t gpu_clock_window_ns;
	uint32_t reserved2;
};

/*
 * SPM_RECORD_CONFIG: the counter configuration the recorder asked for,
 * written once, right after the file header and before any share record,
 * when counters were given (amdgpu-spm-record -e). Only @type and @bytes
 * (= @size below) of the record header mean anything. It holds what
 * spm_config_build() (spm_program.h) needs to rebuild the layout, and the
 * layout as built then, so that a reader can tell that its rebuild agrees.
 * Readers skip bytes past what they know (@size grows at the end).
 */
#define SPM_FILE_MAX_COUNTERS	8	/* = SPM_MAX_COUNTERS */
#define SPM_FILE_COUNTER_NAME	40

struct spm_file_counter {
	char name[SPM_FILE_COUNTER_NAME];	/* NUL-terminated, a table name */
	uint32_t bits;			/* 16 or 32, as programmed */
	uint32_t segment;		/* 0 global, 1 per SE */
	uint32_t slot;			/* low half's slot in its segment */
	uint32_t reserved;
};

struct spm_file_config {
	uint32_t size;			/* sizeof(struct spm_file_config) */
	uint32_t gc_version;		/* enum spm_gc_version: 0x090401.. */
	uint32_t interval;		/* programmed sample interval, SCLK cycles */
	uint32_t interval_requested;	/* as asked (0: default) */
	uint32_t num_se;		/* SEs per XCC the layout covers */
	uint32_t num_counters;
	uint32_t global_lines;		/* segment sizes in 32-byte lines */
	uint32_t se_lines;		/* per SE */
	uint32_t sample_bytes;		/* 32 * (global + num_se * se lines) */
	uint32_t segment_size;		/* RLC_SPM_PERFMON_SEGMENT_SIZE value */
	uint32_t segment_size_core1;	/* _CORE1 value (8-SE parts), else 0 */
	uint32_t flags;			/* SPM_FILE_CONFIG_* */
	struct spm_file_counter counters[SPM_FILE_MAX_COUNTERS];
};

/* spm_file_config.flags: the counters were programmed by the recorder
 * (else recorded only, for decoding what someone else programmed) */
#define SPM_FILE_CONFIG_PROGRAMMED	(1u << 0)

_Static_assert(sizeof(struct spm_file_counter) == 56, "counter layout");
_Static_assert(sizeof(struct spm_file_config) == 48 + 8 * 56, "config layout");

/* Record size of files written before the GPU clock fields. */
#define SPM_RECORD_SIZE_V2_0	64u

_Static_assert(sizeof(struct spm_file_header) == 64, "file header layout");
_Static_assert(sizeof(struct spm_record) == 88, "record layout");

int spm_file_write_header(FILE *f, const struct spm_file_header *h);
int spm_file_write_record(FILE *f, const struct spm_record *r,
			  const void *data);

/*
 * Reading. spm_file_read_header() accepts this format and the first one
 * ("AMDSPM01", whose records it converts). spm_file_read_record() returns
 * 1 with a record and its data in *data (grown as needed; free() it),
 * of any type, also ones this reader does not know (callers skip those),
 * 0 at a clean end of file, -EINVAL on a malformed or truncated record
 * (with *what saying what), -EIO on a read error.
 */
struct spm_reader {
	FILE *f;
	int format;		/* 1 or 2 */
	uint64_t offset;	/* of the next record */
	uint32_t record_size;	/* record header bytes this reader reads */
	uint32_t record_extra;	/* record header bytes this reader skips */
	const char *what;	/* why the last read failed */
};

int spm_file_read_header(struct spm_reader *rd, FILE *f,
			 struct spm_file_header *h);
/*
 * The data of an SPM_RECORD_CONFIG into *c: fields a shorter (older)
 * record lacks read as 0, a longer one's extra bytes are ignored. 0, or
 * -EINVAL if it is too short for the fields up to num_counters, says
 * more counters than it holds or than SPM_FILE_MAX_COUNTERS, or a name is
 * not NUL-terminated.
 */
int spm_file_parse_config(const void *data, uint32_t bytes,
			  struct spm_file_config *c);
int spm_file_read_record(struct spm_reader *rd, struct spm_record *r,
			 unsigned char **data, size_t *cap);

#endif /* SPM_FILE_H */
