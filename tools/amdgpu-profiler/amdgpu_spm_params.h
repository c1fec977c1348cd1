/* SPDX-License-Identifier: MIT */
/*
 * Copyright 2026 The amdgpu profiler series authors
 *
 * Internal: the module parameter that decides whether ACQUIRE is allowed,
 * read from /sys/module/amdgpu/parameters/ (mode 0644, so any user can
 * read it, before acquiring or after a refusal). Shared by
 * amdgpu-spm-record and the hsakmt provider; not installed.
 */
#ifndef AMDGPU_SPM_PARAMS_H
#define AMDGPU_SPM_PARAMS_H

#include <stddef.h>

#define AMDGPU_SPM_PARAMS_DIR	"/sys/module/amdgpu/parameters"

/*
 * Explain an ACQUIRE refused with @err (EPERM, either sign) from what
 * amdgpu.spm_paranoid, the only parameter that refuses it, says now: its
 * value, and what the caller or an administrator changes. The file is
 * read below @root ("" for the real system) with open() and read().
 * Writes one or more sentences, without a trailing newline, to @buf;
 * "" for any other @err (no other refusal comes from a parameter).
 * Returns @buf.
 */
__attribute__((visibility("hidden")))
const char *amdgpu_spm_explain_refusal(int err, const char *root, char *buf,
				       size_t size);

#endif /* AMDGPU_SPM_PARAMS_H */
