// SPDX-License-Identifier: MIT
/*
 * Copyright 2026 The amdgpu profiler series authors
 *
 * The SPM registers of the RLC model for gfx_v9_4_3.c, from the base tree's
 * gc_9_4_3_offset.h and gc_9_4_3_sh_mask.h (the headers gfx_v9_4_3.c is built
 * with).
 */

#include "amdgpu.h"
#include "gfx_v9_4_3.h"
#include "gc/gc_9_4_3_offset.h"
#include "gc/gc_9_4_3_sh_mask.h"
#include "tests/amdgpu_spm_model.h"

const struct spm_model_layout spm_layout_gfx_v9_4_3 = {
	.name = "gfx_v9_4_3",
	.ip_version = IP_VERSION(9, 4, 3),
	.ip_block = &gfx_v9_4_3_ip_block,
	.off = {
		[SPM_R_PERFMON_CNTL] = regRLC_SPM_PERFMON_CNTL,
		[SPM_R_BASE_LO] = regRLC_SPM_PERFMON_RING_BASE_LO,
		[SPM_R_BASE_HI] = regRLC_SPM_PERFMON_RING_BASE_HI,
		[SPM_R_SIZE] = regRLC_SPM_PERFMON_RING_SIZE,
		[SPM_R_SEGMENT_SIZE] = regRLC_SPM_PERFMON_SEGMENT_SIZE,
		[SPM_R_THRESHOLD] = regRLC_SPM_SEGMENT_THRESHOLD,
		[SPM_R_RDPTR] = regRLC_SPM_RING_RDPTR,
		[SPM_R_MC_CNTL] = regRLC_SPM_MC_CNTL,
		[SPM_R_INT_CNTL] = regRLC_SPM_INT_CNTL,
		[SPM_R_CLK_CNTL] = regRLC_CLK_CNTL,
		[SPM_R_CP_PERFMON_CNTL] = regCP_PERFMON_CNTL,
	},
	.seg = {
		[SPM_R_PERFMON_CNTL] = regRLC_SPM_PERFMON_CNTL_BASE_IDX,
		[SPM_R_BASE_LO] = regRLC_SPM_PERFMON_RING_BASE_LO_BASE_IDX,
		[SPM_R_BASE_HI] = regRLC_SPM_PERFMON_RING_BASE_HI_BASE_IDX,
		[SPM_R_SIZE] = regRLC_SPM_PERFMON_RING_SIZE_BASE_IDX,
		[SPM_R_SEGMENT_SIZE] = regRLC_SPM_PERFMON_SEGMENT_SIZE_BASE_IDX,
		[SPM_R_THRESHOLD] = regRLC_SPM_SEGMENT_THRESHOLD_BASE_IDX,
		[SPM_R_RDPTR] = regRLC_SPM_RING_RDPTR_BASE_IDX,
		[SPM_R_MC_CNTL] = regRLC_SPM_MC_CNTL_BASE_IDX,
		[SPM_R_INT_CNTL] = regRLC_SPM_INT_CNTL_BASE_IDX,
		[SPM_R_CLK_CNTL] = regRLC_CLK_CNTL_BASE_IDX,
		[SPM_R_CP_PERFMON_CNTL] = regCP_PERFMON_CNTL_BASE_IDX,
	},
	.ring_mode_mask = RLC_SPM_PERFMON_CNTL__PERFMON_RING_MODE_MASK,
	.ring_mode_shift = RLC_SPM_PERFMON_CNTL__PERFMON_RING_MODE__SHIFT,
	.state_mask = CP_PERFMON_CNTL__SPM_PERFMON_STATE_MASK,
	.state_shift = CP_PERFMON_CNTL__SPM_PERFMON_STATE__SHIFT,
	.vmid_mask = RLC_SPM_MC_CNTL__RLC_SPM_VMID_MASK,
	/* ROCm's gfx_v9_4_3.c sets it before SPM streams */
	.clk_mask = RLC_CLK_CNTL__RLC_SPM_CLK_CNTL_MASK,
	/*
	 * No gc_9_4_3_default.h exists: the reset values are taken to be 0,
	 * as RLC_SPM_MC_CNTL's is in gc_9_0_default.h
	 */
	.mc_cntl_default = 0,
	.clk_cntl_default = 0,
	.lines_mask = RLC_SPM_PERFMON_SEGMENT_SIZE__PERFMON_SEGMENT_SIZE_MASK,
	.num_xcc = 8,
};
