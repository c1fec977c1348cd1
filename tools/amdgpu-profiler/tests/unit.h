/* SPDX-License-Identifier: MIT */
/*
 * Copyright 2026 The amdgpu profiler series authors
 *
 * The unit tests' check macro and their closing "N passed, N failed" line.
 */
#ifndef UNIT_H
#define UNIT_H

#include <stdio.h>

static unsigned int passed, failed;

#define CHECK(cond) do { \
	if (cond) { \
		passed++; \
	} else { \
		failed++; \
		fprintf(stderr, "%s:%d: %s: check failed: %s\n", \
			__FILE__, __LINE__, __func__, #cond); \
	} \
} while (0)

/* Print the closing line; the test's exit status. */
static inline int unit_done(void)
{
	printf("%u passed, %u failed\n", passed, failed);
	return failed ? 1 : 0;
}

#endif /* UNIT_H */
