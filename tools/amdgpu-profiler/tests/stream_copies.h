/* SPDX-License-Identifier: MIT */
/*
 * Copyright 2026 The amdgpu profiler series authors
 *
 * Tests only: the cycle counter's start/stop streams of the two hardware
 * tests, built by their own code, for test_stream_copies.c to decode and
 * compare with spm_program.c's. Each copy is compiled in a file of its own
 * (its macros collide with spm_program.h's): ksft_stream_copy.c links the
 * kselftest's amdgpu_spm_stream.c (tools/testing/selftests/drivers/gpu/
 * amdgpu/), igt_stream_copy.c compiles the lines of the IGT test
 * (tools/testing/igt/tests/amdgpu/amd_profiler.c) between its "spm stream
 * builder" markers.
 */
#ifndef STREAM_COPIES_H
#define STREAM_COPIES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* spm_stream_build() of the copy: dwords, or a negative errno */
int ksft_copy_stream_build(uint32_t gc, bool start, uint32_t *ib, size_t max_dw);
int igt_copy_stream_build(uint32_t gc, bool start, uint32_t *ib, size_t max_dw);

/* The copies' sample interval (SPM_CYCLES_INTERVAL) and the 16-bit slot
 * their checker reads the cycle count from (SPM_SLOT_CYCLES) */
unsigned int ksft_copy_interval(void);
unsigned int ksft_copy_slot(void);
unsigned int igt_copy_interval(void);
unsigned int igt_copy_slot(void);

/* The kselftest's decoder of sample @k of a share's data */
void ksft_copy_sample_decode(const void *data, uint32_t k, uint64_t *ts,
			     uint32_t *cycles);

#endif /* STREAM_COPIES_H */
