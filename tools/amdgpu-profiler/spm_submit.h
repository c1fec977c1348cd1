/* SPDX-License-Identifier: MIT */
/*
 * Copyright 2026 The amdgpu profiler series authors
 *
 * Submitting the SPM programming streams of spm_program.h, and finding out
 * which GC the device is, through libdrm_amdgpu on the amdgpu_device_handle
 * of the partition's render node. Internal to the tools (not installed).
 *
 * The order a caller keeps (the kernel's SPM manager, amdgpu_spm.c):
 * ACQUIRE, then the first SET_DEST_BUF (which resets the SPM state of
 * every XCC of the partition), then the start stream; the stop stream
 * before the SET_DEST_BUF without a buffer that retires the last one, and
 * before RELEASE.
 */
#ifndef SPM_SUBMIT_H
#define SPM_SUBMIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <amdgpu.h>

/* What spm_submit_ib() did, for the caller to print. */
struct spm_submit_info {
	uint64_t ib_va;		/* GPU VA the IB was mapped at */
	uint32_t ib_dw;		/* dwords submitted, padding included */
	uint32_t pad_dw;	/* of them NOPs to the ring's IB size alignment */
	uint64_t seq;		/* the submission's fence sequence number */
	uint64_t wait_ns;	/* from the submission to the signalled fence */
	const char *failed;	/* the libdrm call that failed, NULL if none */
};

/* The fence wait spm_submit_ib() callers use: a 100-dword IB that has
 * not finished after this long is not going to. */
#define SPM_SUBMIT_TIMEOUT_NS	(5ull * 1000000000ull)

/*
 * Submit @ndw dwords at @ib as one IB on ring 0 of AMDGPU_HW_IP_COMPUTE of
 * @dev's file and wait up to @timeout_ns for its fence: a GTT BO for the
 * IB, written through a CPU mapping, a GPU VA for it, a context, one CS
 * with the BO in its BO list (AMDGPU_CHUNK_ID_BO_HANDLES) and the IB
 * (AMDGPU_CHUNK_ID_IB), then AMDGPU_WAIT_CS. The IB is padded with
 * one-dword NOPs to the ring's IB size alignment (AMDGPU_INFO_HW_IP_INFO).
 * Everything it allocated is freed before it returns, on success and on
 * every error (after a timeout too: the kernel keeps what a job still
 * running uses until its fence signals).
 *
 * Returns 0, -EINVAL (NULL @dev or @ib, @ndw 0 or above 16384),
 * -EOPNOTSUPP (the device has no compute ring 0 for this file), -ETIME
 * (the fence did not signal within @timeout_ns), or the negative errno of
 * the libdrm call that failed (named in @info->failed). @info may be NULL.
 */
int spm_submit_ib(amdgpu_device_handle dev, const uint32_t *ib, uint32_t ndw,
		  uint64_t timeout_ns, struct spm_submit_info *info);

/* What the device says its GC is, and how that was found out. */
struct spm_device_gc {
	uint32_t gc;		/* 0x090401 (9.4.1) ...; 0 if not found */
	uint32_t gc_alt;	/* another version the device may be, 0 none */
	bool from_discovery;	/* from HW_IP_INFO's ip_discovery_version */
	/* What it was derived from */
	uint32_t ip_discovery;	/* HW_IP_INFO(COMPUTE).ip_discovery_version */
	uint32_t hw_ip_major, hw_ip_minor;	/* HW_IP_INFO(COMPUTE) */
	uint32_t family, device_id, chip_rev, external_rev;	/* DEV_INFO */
	/* The SPM layout's inputs */
	uint32_t num_se;	/* DEV_INFO num_shader_engines */
	uint32_t num_xcc;	/* AMDGPU_INFO_HW_IP_COUNT(GFX): XCCs of the
				 * file's partition, 1 without partitions;
				 * 0 if the query failed */
};

/*
 * Which GC version @dev is: AMDGPU_INFO_HW_IP_INFO for COMPUTE, whose
 * ip_discovery_version (6.12 uAPI) names it exactly; on a kernel that
 * leaves it 0, the DEV_INFO family and the offset of the external revision
 * from the chip revision, which soc15.c sets per GC version (9.4.3 and
 * 9.4.4 share one: then @gc is 9.4.3 and @gc_alt 9.4.4). Returns 0 (with
 * @g->gc 0 when the device is none of the GC 9.x parts that tells apart)
 * or the negative errno of the query.
 */
int spm_device_gc(amdgpu_device_handle dev, struct spm_device_gc *g);

/*
 * SEs per XCC the device reports, for spm_config_build(): @g's num_se as
 * AMDGPU_INFO_DEV_INFO gives it, which Linux 6.12 fills with
 * gfx.config.max_shader_engines (amdgpu_kms.c), the IP discovery table's
 * SE count. That count is per XCC on GC 9.4.3: gfx_v9_4_3_get_cu_info()
 * walks max_shader_engines SEs inside its loop over the XCCs and refuses
 * more than 16 SEs x SHs, and kfd_topology.c multiplies it by the XCC
 * count for a node. On 9.4.1 and 9.4.2 the device is one XCC. A kernel
 * that reported a partition's SEs in all would report @want x the
 * partition's XCCs: taken for @want SEs per XCC, and *total set. Returns
 * the SEs per XCC to lay out (@want when the device agrees), or 0 if the
 * device reports another count.
 */
uint32_t spm_device_se_per_xcc(const struct spm_device_gc *g, uint32_t want,
			       bool *total);

/* "GC 9.4.3 (AMDGPU_INFO_HW_IP_INFO ip_discovery_version 0x090403)" */
void spm_device_gc_describe(const struct spm_device_gc *g, char *buf,
			    size_t len);

#endif /* SPM_SUBMIT_H */
