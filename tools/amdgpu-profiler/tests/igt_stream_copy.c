// SPDX-License-Identifier: MIT
/*
 * Copyright 2026 The amdgpu profiler series authors
 *
 * Tests only: the IGT test's stream builder, the lines between its
 * "spm stream builder" markers (the Makefile cuts them out of
 * tools/testing/igt/tests/amdgpu/amd_profiler.c into
 * tests/out/igt_spm_stream_builder.inc), compiled here with the one thing
 * of IGT they use, ARRAY_SIZE(). See stream_copies.h.
 */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "stream_copies.h"

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

#include "out/igt_spm_stream_builder.inc"

int igt_copy_stream_build(uint32_t gc, bool start, uint32_t *ib, size_t max_dw)
{
	return spm_stream_build(gc, start, ib, max_dw);
}

unsigned int igt_copy_interval(void)
{
	return SPM_CYCLES_INTERVAL;
}

unsigned int igt_copy_slot(void)
{
	return SPM_SLOT_CYCLES;
}
