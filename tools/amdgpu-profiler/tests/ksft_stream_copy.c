// SPDX-License-Identifier: MIT
/*
 * Copyright 2026 The amdgpu profiler series authors
 *
 * Tests only: the kselftest's stream builder and sample decoder
 * (amdgpu_spm_stream.c, linked in as it is), under names of the tests'
 * own. See stream_copies.h.
 */
#include "amdgpu_spm_stream.h"
#include "stream_copies.h"

int ksft_copy_stream_build(uint32_t gc, bool start, uint32_t *ib, size_t max_dw)
{
	return spm_stream_build(gc, start, ib, max_dw);
}

unsigned int ksft_copy_interval(void)
{
	return SPM_CYCLES_INTERVAL;
}

unsigned int ksft_copy_slot(void)
{
	return SPM_SLOT_CYCLES;
}

void ksft_copy_sample_decode(const void *data, uint32_t k, uint64_t *ts,
			     uint32_t *cycles)
{
	spm_sample_decode(data, k, ts, cycles);
}
