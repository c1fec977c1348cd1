/* SPDX-License-Identifier: MIT */
/*
 * Copyright 2026 The amdgpu profiler series authors
 *
 * Tests only: what the kselftest's amdgpu_spm_stream.c takes from
 * tools/testing/selftests/kselftest.h, which a tree without the kernel's
 * selftests does not have. The Makefile puts it where that file's
 * "../../../kselftest.h" finds it.
 */
#ifndef KSFT_STUB_H
#define KSFT_STUB_H

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#define __printf(a, b)	__attribute__((format(printf, a, b)))

#endif /* KSFT_STUB_H */
