/* SPDX-License-Identifier: MIT */
/*
 * Copyright 2026 The amdgpu profiler series authors
 *
 * Internal: the module parameters that decide whether ACQUIRE is allowed,
 * read from /sys/module/amdgpu/parameters/ (mode 0644, so any user can
 * read them, before acquiring or after a refusal). Shared by
 * amdgpu-spm-record and the hsakmt provider; not installed.
 */
#ifndef AMDGPU_SPM_PARAMS_H
#define AMDGPU_SPM_PARAMS_H

#include <stddef.h>

#define AMDGPU_SPM_PARAMS_DIR	"/sys/module/amdgpu/parameters"

/*
 * Explain an ACQUIRE refused with @err (EPERM or EACCES, either sign) from
 * what the parameters say now: which one refused, its value, and what an
 * administrator changes; for EPERM also whether amdgpu.spm_unsafe_vmid0
 * will refuse next (the kernel checks the privilege first). The files are
 * read below @root ("" for the real system) with open() and read().
 * Writes one or more sentences, without a trailing newline, to @buf;
 * "" for any other @err. Returns @buf.
 */
__attribute__((visibility("hidden")))
const char *amdgpu_spm_explain_refusal(int err, const char *root, char *buf,
				       size_t size);

#endif /* AMDGPU_SPM_PARAMS_H */
