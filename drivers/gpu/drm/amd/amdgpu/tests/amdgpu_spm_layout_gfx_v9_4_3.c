// SPDX-License-Identifier: MIT
/*
 * Copyright 2026 The amdgpu profiler series authors
 *
 * The SPM registers of the RLC model for gfx_v9_4_3.c, from the base tree's
 * gc_9_4_3_offset.h and gc_9_4_3_sh_mask.h (the headers gfx_v9_4_3.c is built
 * with).
 */

#include <kunit/test.h>

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
		[SPM_R_VM_CNTL] = regVM_CONTEXT0_CNTL,
		[SPM_R_VM_CNTL1] = regVM_CONTEXT1_CNTL,
		[SPM_R_VM_PTB_LO] = regVM_CONTEXT0_PAGE_TABLE_BASE_ADDR_LO32,
		[SPM_R_VM_PTB_HI] = regVM_CONTEXT0_PAGE_TABLE_BASE_ADDR_HI32,
		[SPM_R_VM_PTB1_LO] = regVM_CONTEXT1_PAGE_TABLE_BASE_ADDR_LO32,
		[SPM_R_VM_START_LO] = regVM_CONTEXT0_PAGE_TABLE_START_ADDR_LO32,
		[SPM_R_VM_START_HI] = regVM_CONTEXT0_PAGE_TABLE_START_ADDR_HI32,
		[SPM_R_VM_END_LO] = regVM_CONTEXT0_PAGE_TABLE_END_ADDR_LO32,
		[SPM_R_VM_END_HI] = regVM_CONTEXT0_PAGE_TABLE_END_ADDR_HI32,
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
		[SPM_R_VM_CNTL] = regVM_CONTEXT0_CNTL_BASE_IDX,
		[SPM_R_VM_CNTL1] = regVM_CONTEXT1_CNTL_BASE_IDX,
		[SPM_R_VM_PTB_LO] = regVM_CONTEXT0_PAGE_TABLE_BASE_ADDR_LO32_BASE_IDX,
		[SPM_R_VM_PTB_HI] = regVM_CONTEXT0_PAGE_TABLE_BASE_ADDR_HI32_BASE_IDX,
		[SPM_R_VM_PTB1_LO] = regVM_CONTEXT1_PAGE_TABLE_BASE_ADDR_LO32_BASE_IDX,
		[SPM_R_VM_START_LO] = regVM_CONTEXT0_PAGE_TABLE_START_ADDR_LO32_BASE_IDX,
		[SPM_R_VM_START_HI] = regVM_CONTEXT0_PAGE_TABLE_START_ADDR_HI32_BASE_IDX,
		[SPM_R_VM_END_LO] = regVM_CONTEXT0_PAGE_TABLE_END_ADDR_LO32_BASE_IDX,
		[SPM_R_VM_END_HI] = regVM_CONTEXT0_PAGE_TABLE_END_ADDR_HI32_BASE_IDX,
	},
	.ring_mode_mask = RLC_SPM_PERFMON_CNTL__PERFMON_RING_MODE_MASK,
	.ring_mode_shift = RLC_SPM_PERFMON_CNTL__PERFMON_RING_MODE__SHIFT,
	.state_mask = CP_PERFMON_CNTL__SPM_PERFMON_STATE_MASK,
	.state_shift = CP_PERFMON_CNTL__SPM_PERFMON_STATE__SHIFT,
	.vmid_mask = RLC_SPM_MC_CNTL__RLC_SPM_VMID_MASK,
	.mc_fields_mask = RLC_SPM_MC_CNTL__RLC_SPM_POLICY_MASK |
			  RLC_SPM_MC_CNTL__RLC_SPM_PERF_CNTR_MASK |
			  RLC_SPM_MC_CNTL__RLC_SPM_FED_MASK |
			  RLC_SPM_MC_CNTL__RLC_SPM_MTYPE_OVER_MASK |
			  RLC_SPM_MC_CNTL__RLC_SPM_MTYPE_MASK,
	/* ROCm's gfx_v9_4_3.c sets it before SPM streams */
	.clk_mask = RLC_CLK_CNTL__RLC_SPM_CLK_CNTL_MASK,
	/*
	 * The base tree has no gc_9_4_3_default.h, and no source gives these
	 * reset values: one reading is 0 (as RLC_SPM_MC_CNTL's is in
	 * gc_9_0_default.h, and the SPM clock off), the other is
	 * spm_model_layout_gc943_reset_set(); the suites run both
	 */
	.mc_cntl_default = 0,
	.clk_cntl_default = 0,
	/* gfx_v9_4_3_rlc_init() only programs SPM_VMID, at sw_init */
	.rlc_init = true,
	.lines_mask = RLC_SPM_PERFMON_SEGMENT_SIZE__PERFMON_SEGMENT_SIZE_MASK,
	.vm_enable_mask = VM_CONTEXT1_CNTL__ENABLE_CONTEXT_MASK,
	.vm_depth_mask = VM_CONTEXT1_CNTL__PAGE_TABLE_DEPTH_MASK,
	.vm_depth_shift = VM_CONTEXT1_CNTL__PAGE_TABLE_DEPTH__SHIFT,
	.vm_block_mask = VM_CONTEXT1_CNTL__PAGE_TABLE_BLOCK_SIZE_MASK,
	.vm_retry_mask = VM_CONTEXT1_CNTL__RETRY_PERMISSION_OR_INVALID_PAGE_FAULT_MASK,
	/* gfxhub_v1_2_xcc_setup_vmid_config() on GC 9.4.2-9.4.4 forces retry */
	.vm_retry_reset = true,
	.num_xcc = 8,
};

/**
 * spm_model_layout_gc943_reset_set - GC 9.4.3 under the other reading of
 *	its reset values
 * @test: the test that owns the copy
 *
 * No source gives the reset values of RLC_SPM_MC_CNTL and RLC_CLK_CNTL on
 * GC 9.4.3 (there is no gc_9_4_3_default.h). &spm_layout_gfx_v9_4_3 takes
 * them to be 0; this reading takes what was last parked there before the
 * SPM manager (SPM_VMID 0xf, a KFD VMID) and every clock control field of
 * RLC_CLK_CNTL set, as gc_9_0_default.h has RLC_CLK_CNTL (0x3: both of its
 * fields), here the SRM and SPM fields of gc_9_4_3_sh_mask.h.
 *
 * Return: a copy of &spm_layout_gfx_v9_4_3 with those reset values.
 */
const struct spm_model_layout *spm_model_layout_gc943_reset_set(struct kunit *test)
{
	struct spm_model_layout *l;

	l = kunit_kmalloc(test, sizeof(*l), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, l);
	*l = spm_layout_gfx_v9_4_3;
	l->name = "gfx_v9_4_3, reset values set";
	l->mc_cntl_default = RLC_SPM_MC_CNTL__RLC_SPM_VMID_MASK;
	l->clk_cntl_default = RLC_CLK_CNTL__RLC_SRM_CLK_CNTL_MASK |
			      RLC_CLK_CNTL__RLC_SPM_CLK_CNTL_MASK;
	return l;
}
