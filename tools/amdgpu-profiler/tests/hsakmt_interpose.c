// SPDX-License-Identifier: MIT
/*
 * Copyright 2026 The amdgpu profiler series authors
 *
 * A program linked against the real libhsakmt (Debian's libhsakmt1) the
 * way Debian's ROCr (libhsa-runtime64-1) is: its hsaKmtSPM* references are
 * bound at run time to hsaKmtSPM*@HSAKMT_1 (upstream ROCr links libhsakmt
 * statically; see README.md). It says which object defines hsaKmtSPMAcquire (so
 * that LD_PRELOAD=libhsakmt_amdgpu_spm.so shows as interposing), opens
 * KFD ("no amdgpu device" when that fails), then does what aqlprofile
 * does: Acquire, a non-blocking SetDestBuffer, a loop over three rotating
 * buffers with the timeout set once, calls until one returns 0 bytes
 * after the stop (a "forced exit" after 5 extra), Release (also after a
 * failed Acquire).
 *
 * Usage: hsakmt_interpose [NODE [LOOPS [TIMEOUT_MS]]]   (default 1 8 20)
 * Exit status 0 when every step behaved as the caller expects of
 * libhsakmt (a failed Acquire followed by a failing Release included).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <hsakmt.h>

int main(int argc, char **argv)
{
	HSAuint32 node = argc > 1 ? (HSAuint32)strtoul(argv[1], NULL, 0) : 1;
	unsigned int loops = argc > 2 ? (unsigned int)strtoul(argv[2], NULL, 0) : 8;
	HSAuint32 want = argc > 3 ? (HSAuint32)strtoul(argv[3], NULL, 0) : 20;
	const HSAuint32 buf_size = 1u << 20;
	HSAKMT_STATUS st, acq, rel;
	HSAuint32 timeout, copied = 0;
	unsigned long long total = 0;
	unsigned int i, extra = 0, decayed = 0;
	bool loss = false;
	char *mem, *buf[3];
	Dl_info info;
	int ok = 1;

	if (dladdr((void *)hsaKmtSPMAcquire, &info) && info.dli_fname)
		printf("hsaKmtSPMAcquire is defined in %s\n", info.dli_fname);
	if (dladdr((void *)hsaKmtOpenKFD, &info) && info.dli_fname)
		printf("hsaKmtOpenKFD is defined in %s\n", info.dli_fname);

	st = hsaKmtOpenKFD();
	if (st != HSAKMT_STATUS_SUCCESS)
		printf("hsaKmtOpenKFD: status %d: no amdgpu device (KFD not available)\n",
		       st);
	else
		printf("hsaKmtOpenKFD: status 0\n");

	mem = mmap(NULL, 3 * (size_t)buf_size, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED)
		return 2;
	for (i = 0; i < 3; i++)
		buf[i] = mem + (size_t)i * buf_size;

	errno = 0;
	acq = hsaKmtSPMAcquire(node);
	printf("hsaKmtSPMAcquire(%u): status %d (%s)\n", node, acq,
	       acq ? strerror(errno) : "ok");
	if (acq == HSAKMT_STATUS_SUCCESS) {
		timeout = 0;
		st = hsaKmtSPMSetDestBuffer(node, buf_size, &timeout, &copied,
					    buf[0], &loss);
		printf("hsaKmtSPMSetDestBuffer(first, timeout 0): status %d\n", st);
		ok &= st == HSAKMT_STATUS_SUCCESS;
		/* As aqlprofile: the timeout is set once, before the loop. */
		timeout = want;
		for (i = 1; ok && i <= loops + 6; i++) {
			copied = 0;
			st = hsaKmtSPMSetDestBuffer(node, buf_size, &timeout,
						    &copied, buf[i % 3], &loss);
			if (st != HSAKMT_STATUS_SUCCESS) {
				printf("hsaKmtSPMSetDestBuffer: status %d (%s)\n",
				       st, strerror(errno));
				ok = 0;
				break;
			}
			if (timeout != want)
				decayed++;
			total += copied;
			if (i > loops) {	/* stopping: drain until empty */
				if (!copied)
					break;
				extra++;
			}
		}
		printf("hsaKmtSPMSetDestBuffer: %u calls, %llu bytes, timeout %s, %s after %u extra calls\n",
		       i, total, decayed ? "decayed" : "kept",
		       copied ? "forced exit" : "drained", extra);
		ok &= !decayed && total > 0;
	}
	/* aqlprofile releases whether or not the acquire worked. */
	errno = 0;
	rel = hsaKmtSPMRelease(node);
	printf("hsaKmtSPMRelease(%u): status %d (%s)\n", node, rel,
	       rel ? strerror(errno) : "ok");
	if (acq == HSAKMT_STATUS_SUCCESS)
		ok &= rel == HSAKMT_STATUS_SUCCESS;
	else
		ok &= rel != HSAKMT_STATUS_SUCCESS;
	munmap(mem, 3 * (size_t)buf_size);
	printf("%s\n", ok ? "behaved as libhsakmt's callers expect" :
	       "did NOT behave as libhsakmt's callers expect");
	return ok ? 0 : 1;
}
