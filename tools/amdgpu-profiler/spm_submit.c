// SPDX-License-Identifier: MIT
/*
 * Copyright 2026 The amdgpu profiler series authors
 *
 * The SPM programming streams onto a compute ring of the partition, and
 * the device's GC version, through libdrm_amdgpu. See spm_submit.h.
 *
 * Sources (what each step relies on; nothing is copied from them):
 *  [LIBDRM] libdrm 2.4.114 amdgpu.h: the calls and their errors;
 *	     amdgpu_cs.c (amdgpu_cs_submit_raw2() and
 *	     amdgpu_cs_query_fence_status() issue DRM_AMDGPU_CS and
 *	     DRM_AMDGPU_WAIT_CS), amdgpu_bo.c, amdgpu_vamgr.c (the VA range is
 *	     libdrm's own allocator: no ioctl).
 *  [KMS]    Linux 6.12 amdgpu_kms.c amdgpu_hw_ip_info(): COMPUTE answers
 *	     for the GFX IP block, ip_discovery_version =
 *	     IP_VERSION_MAJ_MIN_REV(GC_HWIP), ib_size_alignment 32 (bytes),
 *	     available_rings bit i = ring i; AMDGPU_INFO_DEV_INFO
 *	     (num_shader_engines = gfx.config.max_shader_engines);
 *	     AMDGPU_INFO_HW_IP_COUNT (GFX: the hweight of the file's XCP's
 *	     GFX instance mask, 1 on a device without partitions).
 *  [CS]     Linux 6.12 amdgpu_cs.c: AMDGPU_CHUNK_ID_BO_HANDLES builds the
 *	     job's BO list (amdgpu_cs_p1_bo_handles()), the BOs the CS
 *	     validates; AMDGPU_CHUNK_ID_IB (amdgpu_cs_p1_ib()).
 *  [SOC15]  Linux 6.12 soc15.c soc15_common_early_init(): external_rev_id
 *	     = rev_id + 0x32 for GC 9.4.1, + 0x3c for 9.4.2, + 0x46 for
 *	     9.4.3 and 9.4.4 alike ("TODO: need a new external_rev_id for GC
 *	     9.4.4?"); gfx_v9_0_ip_block is GFX 9.0 (MI100, MI200),
 *	     gfx_v9_4_3_ip_block GFX 9.4 (MI300).
 *  [RING]   gfx_v9_0.c / gfx_v9_4_3.c ring->funcs->nop:
 *	     PACKET3(PACKET3_NOP, 0x3FFF), the one-dword NOP.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "amdgpu_spm_uapi.h"	/* the series' <drm/amdgpu_drm.h> */
#include "spm_submit.h"

#define IB_MAX_DW	16384u
#define NOP_1DW		0xffff1000u	/* [RING] */
#define GPU_PAGE	4096u

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int spm_submit_ib(amdgpu_device_handle dev, const uint32_t *ib, uint32_t ndw,
		  uint64_t timeout_ns, struct spm_submit_info *info)
{
	struct spm_submit_info dummy;
	struct drm_amdgpu_info_hw_ip hw;
	struct amdgpu_bo_alloc_request req;
	struct drm_amdgpu_bo_list_entry entry;
	struct drm_amdgpu_bo_list_in list;
	struct drm_amdgpu_cs_chunk_ib ib_chunk;
	struct drm_amdgpu_cs_chunk chunks[2];
	struct amdgpu_cs_fence fence;
	amdgpu_bo_handle bo;
	amdgpu_va_handle va_handle;
	amdgpu_context_handle ctx;
	uint32_t align_dw, total, handle, expired = 0, i;
	uint64_t size, va, t0;
	uint32_t *cpu;
	void *map;
	int ret;

	if (!info)
		info = &dummy;
	memset(info, 0, sizeof(*info));
	if (!dev || !ib || !ndw || ndw > IB_MAX_DW)
		return -EINVAL;

	/* Ring 0 of COMPUTE must exist for this file ([KMS]) */
	memset(&hw, 0, sizeof(hw));
	ret = amdgpu_query_hw_ip_info(dev, AMDGPU_HW_IP_COMPUTE, 0, &hw);
	if (ret) {
		info->failed = "amdgpu_query_hw_ip_info";
		return ret;
	}
	if (!(hw.available_rings & 1))
		return -EOPNOTSUPP;
	align_dw = hw.ib_size_alignment >= 4 ? hw.ib_size_alignment / 4 : 1;
	total = (ndw + align_dw - 1) / align_dw * align_dw;
	if (total > IB_MAX_DW)
		return -EINVAL;
	size = ((uint64_t)total * 4 + GPU_PAGE - 1) / GPU_PAGE * GPU_PAGE;

	memset(&req, 0, sizeof(req));
	req.alloc_size = size;
	req.phys_alignment = GPU_PAGE;
	req.preferred_heap = AMDGPU_GEM_DOMAIN_GTT;
	ret = amdgpu_bo_alloc(dev, &req, &bo);
	if (ret) {
		info->failed = "amdgpu_bo_alloc";
		return ret;
	}
	ret = amdgpu_bo_cpu_map(bo, &map);
	if (ret) {
		info->failed = "amdgpu_bo_cpu_map";
		goto free_bo;
	}
	cpu = map;
	memcpy(cpu, ib, (size_t)ndw * 4);
	for (i = ndw; i < total; i++)
		cpu[i] = NOP_1DW;
	/* The GPU reads the BO, not this mapping: drop it now */
	ret = amdgpu_bo_cpu_unmap(bo);
	if (ret) {
		info->failed = "amdgpu_bo_cpu_unmap";
		goto free_bo;
	}

	ret = amdgpu_va_range_alloc(dev, amdgpu_gpu_va_range_general, size,
				    GPU_PAGE, 0, &va, &va_handle, 0);
	if (ret) {
		info->failed = "amdgpu_va_range_alloc";
		goto free_bo;
	}
	ret = amdgpu_bo_va_op(bo, 0, size, va, 0, AMDGPU_VA_OP_MAP);
	if (ret) {
		info->failed = "amdgpu_bo_va_op(MAP)";
		goto free_range;
	}
	ret = amdgpu_cs_ctx_create(dev, &ctx);
	if (ret) {
		info->failed = "amdgpu_cs_ctx_create";
		goto unmap;
	}
	/* The KMS handle is the BO's own: no ioctl, nothing to free */
	ret = amdgpu_bo_export(bo, amdgpu_bo_handle_type_kms, &handle);
	if (ret) {
		info->failed = "amdgpu_bo_export";
		goto free_ctx;
	}

	/* The IB's BO in the job's BO list, so that the CS validates it ([CS]) */
	memset(&entry, 0, sizeof(entry));
	entry.bo_handle = handle;
	memset(&list, 0, sizeof(list));
	list.operation = ~0u;		/* unused for the chunk */
	list.list_handle = ~0u;
	list.bo_number = 1;
	list.bo_info_size = sizeof(entry);
	list.bo_info_ptr = (uintptr_t)&entry;
	memset(&ib_chunk, 0, sizeof(ib_chunk));
	ib_chunk.va_start = va;
	ib_chunk.ib_bytes = total * 4;
	ib_chunk.ip_type = AMDGPU_HW_IP_COMPUTE;
	ib_chunk.ip_instance = 0;
	ib_chunk.ring = 0;
	chunks[0].chunk_id = AMDGPU_CHUNK_ID_BO_HANDLES;
	chunks[0].length_dw = sizeof(list) / 4;
	chunks[0].chunk_data = (uintptr_t)&list;
	chunks[1].chunk_id = AMDGPU_CHUNK_ID_IB;
	chunks[1].length_dw = sizeof(ib_chunk) / 4;
	chunks[1].chunk_data = (uintptr_t)&ib_chunk;

	info->ib_va = va;
	info->ib_dw = total;
	info->pad_dw = total - ndw;
	t0 = mono_ns();
	ret = amdgpu_cs_submit_raw2(dev, ctx, 0, 2, chunks, &info->seq);
	if (ret) {
		info->failed = "amdgpu_cs_submit_raw2";
		goto free_ctx;
	}

	memset(&fence, 0, sizeof(fence));
	fence.context = ctx;
	fence.ip_type = AMDGPU_HW_IP_COMPUTE;
	fence.ip_instance = 0;
	fence.ring = 0;
	fence.fence = info->seq;
	ret = amdgpu_cs_query_fence_status(&fence, timeout_ns, 0, &expired);
	info->wait_ns = mono_ns() - t0;
	if (ret)
		info->failed = "amdgpu_cs_query_fence_status";
	else if (!expired)
		ret = -ETIME;

	/*
	 * After a timeout the job may still run: the kernel holds the BO
	 * (its fence is in the BO's reservation), the page table entries
	 * (the unmap waits for the VM's fences) and the context's entity
	 * (its fini flushes the jobs) until then.
	 */
free_ctx:
	amdgpu_cs_ctx_free(ctx);
unmap:
	amdgpu_bo_va_op(bo, 0, size, va, 0, AMDGPU_VA_OP_UNMAP);
free_range:
	amdgpu_va_range_free(va_handle);
free_bo:
	amdgpu_bo_free(bo);
	return ret;
}

int spm_device_gc(amdgpu_device_handle dev, struct spm_device_gc *g)
{
	struct drm_amdgpu_info_hw_ip hw;
	struct amdgpu_gpu_info gi;
	int ret;

	memset(g, 0, sizeof(*g));
	memset(&hw, 0, sizeof(hw));
	ret = amdgpu_query_hw_ip_info(dev, AMDGPU_HW_IP_COMPUTE, 0, &hw);
	if (ret)
		return ret;
	/* No ioctl: libdrm keeps what DEV_INFO said at initialisation */
	ret = amdgpu_query_gpu_info(dev, &gi);
	if (ret)
		return ret;
	g->ip_discovery = hw.ip_discovery_version;
	g->hw_ip_major = hw.hw_ip_version_major;
	g->hw_ip_minor = hw.hw_ip_version_minor;
	g->family = gi.family_id;
	g->device_id = gi.asic_id;
	g->chip_rev = gi.chip_rev;
	g->external_rev = gi.chip_external_rev;
	g->num_se = gi.num_shader_engines;
	/* The partition's XCCs ([KMS] AMDGPU_INFO_HW_IP_COUNT: for GFX the
	 * XCP's instance count, else 1); 0 where the query fails */
	if (amdgpu_query_hw_ip_count(dev, AMDGPU_HW_IP_GFX, &g->num_xcc))
		g->num_xcc = 0;

	/*
	 * [KMS] bits 23:16 major, 15:8 minor, 7:0 revision: the encoding of
	 * enum spm_gc_version. libdrm 2.4.114's header calls the field _pad:
	 * same offset, and the kernel fills it whatever the header says.
	 */
	if (g->ip_discovery) {
		g->gc = g->ip_discovery & 0xffffffu;
		g->from_discovery = true;
		return 0;
	}
	/* A kernel without ip_discovery_version ([SOC15]) */
	if (g->family != AMDGPU_FAMILY_AI || g->hw_ip_major != 9)
		return 0;
	switch (g->external_rev - g->chip_rev) {
	case 0x32:
		if (g->hw_ip_minor == 0)
			g->gc = 0x090401;
		break;
	case 0x3c:
		if (g->hw_ip_minor == 0)
			g->gc = 0x090402;
		break;
	case 0x46:
		if (g->hw_ip_minor == 4) {
			g->gc = 0x090403;
			g->gc_alt = 0x090404;
		}
		break;
	default:
		break;
	}
	return 0;
}

uint32_t spm_device_se_per_xcc(const struct spm_device_gc *g, uint32_t want,
			       bool *total)
{
	*total = false;
	if (!want)
		return 0;
	if (g->num_se == want)
		return want;
	if (g->num_xcc > 1 && g->num_se == want * g->num_xcc) {
		*total = true;
		return want;
	}
	return 0;
}

void spm_device_gc_describe(const struct spm_device_gc *g, char *buf,
			    size_t len)
{
	char what[24];

	if (g->gc)
		snprintf(what, sizeof(what), "GC %u.%u.%u", g->gc >> 16,
			 (g->gc >> 8) & 0xff, g->gc & 0xff);
	else
		snprintf(what, sizeof(what), "an unknown GC");
	if (g->from_discovery)
		snprintf(buf, len, "%s (AMDGPU_INFO_HW_IP_INFO ip_discovery_version 0x%06x)",
			 what, g->ip_discovery);
	else if (g->gc_alt)
		snprintf(buf, len, "%s or %u.%u.%u (no ip_discovery_version; DEV_INFO family %u, device 0x%04x, external revision 0x%x = chip revision 0x%x + 0x%x, GFX IP %u.%u)",
			 what, g->gc_alt >> 16, (g->gc_alt >> 8) & 0xff,
			 g->gc_alt & 0xff, g->family, g->device_id,
			 g->external_rev, g->chip_rev,
			 g->external_rev - g->chip_rev, g->hw_ip_major,
			 g->hw_ip_minor);
	else
		snprintf(buf, len, "%s (no ip_discovery_version; DEV_INFO family %u, device 0x%04x, external revision 0x%x = chip revision 0x%x + 0x%x, GFX IP %u.%u)",
			 what, g->family, g->device_id, g->external_rev,
			 g->chip_rev, g->external_rev - g->chip_rev,
			 g->hw_ip_major, g->hw_ip_minor);
}
