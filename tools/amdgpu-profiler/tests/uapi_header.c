// SPDX-License-Identifier: MIT
/*
 * Copyright 2026 The amdgpu profiler series authors
 *
 * Compiled, not run (make header-check): the uAPI header alone, as C11
 * and as C++17 with -Wpedantic -Werror and its directory on -I, so that
 * its own warnings count. It names nothing of the header, so that it fails
 * only for what the header is, whichever version: with the 1.1 words in
 * an anonymous struct g++ warns "ISO C++ prohibits anonymous structs".
 */
#include "amdgpu_drm.h"

int uapi_header_included(void);

int uapi_header_included(void)
{
	return DRM_AMDGPU_PROFILER;
}
