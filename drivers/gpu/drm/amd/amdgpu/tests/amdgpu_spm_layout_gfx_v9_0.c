// SPDX-License-Identifier: MIT
/*
 * Copyright 2026 The amdgpu profiler series authors
 *
 * The SPM registers of the RLC model for gfx_v9_0.c, from the base tree's
 * gc_9_0_offset.h and gc_9_0_sh_mask.h (the headers gfx_v9_0.c is built
 * with), and the reset values of gc_9_0_default.h.
 */

#include <kunit/test.h>

#include "amdgpu.h"
#include "gfx_v9_0.h"
#include "gc/gc_9_0_offset.h"
#include "gc/gc_9_0_sh_mask.h"
#include "asic_reg/gc/gc_9_0_default.h"
#include "tests/amdgpu_spm_model.h"

const struct spm_model_layout spm_layout_gfx_v9_0 = {
	.name = "gfx_v9_0",
	.ip_version = IP_VERSION(9, 4, 2),
	.ip_block = &gfx_v9_0_ip_block,
	.off = {
		[SPM_R_PERFMON_CNTL] = mmRLC_SPM_PERFMON_CNTL,
		[SPM_R_BASE_LO] = mmRLC_SPM_PERFMON_RING_BASE_LO,
		[SPM_R_BASE_HI] = mmRLC_SPM_PERFMON_RING_BASE_HI,
		[SPM_R_SIZE] = mmRLC_SPM_PERFMON_RING_SIZE,
		[SPM_R_SEGMENT_SIZE] = mmRLC_SPM_PERFMON_SEGMENT_SIZE,
		[SPM_R_THRESHOLD] = mmRLC_SPM_SEGMENT_THRESHOLD,
		[SPM_R_RDPTR] = mmRLC_SPM_RING_RDPTR,
		[SPM_R_MC_CNTL] = mmRLC_SPM_MC_CNTL,
		[SPM_R_INT_CNTL] = mmRLC_SPM_INT_CNTL,
		[SPM_R_CLK_CNTL] = mmRLC_CLK_CNTL,
		[SPM_R_CP_PERFMON_CNTL] = mmCP_PERFMON_CNTL,
		[SPM_R_VM_CNTL] = mmVM_CONTEXT0_CNTL,
		[SPM_R_VM_CNTL1] = mmVM_CONTEXT1_CNTL,
		[SPM_R_VM_PTB_LO] = mmVM_CONTEXT0_PAGE_TABLE_BASE_ADDR_LO32,
		[SPM_R_VM_PTB_HI] = mmVM_CONTEXT0_PAGE_TABLE_BASE_ADDR_HI32,
		[SPM_R_VM_PTB1_LO] = mmVM_CONTEXT1_PAGE_TABLE_BASE_ADDR_LO32,
		[SPM_R_VM_START_LO] = mmVM_CONTEXT0_PAGE_TABLE_START_ADDR_LO32,
		[SPM_R_VM_START_HI] = mmVM_CONTEXT0_PAGE_TABLE_START_ADDR_HI32,
		[SPM_R_VM_END_LO] = mmVM_CONTEXT0_PAGE_TABLE_END_ADDR_LO32,
		[SPM_R_VM_END_HI] = mmVM_CONTEXT0_PAGE_TABLE_END_ADDR_HI32,
	},
	.seg = {
		[SPM_R_PERFMON_CNTL] = mmRLC_SPM_PERFMON_CNTL_BASE_IDX,
		[SPM_R_BASE_LO] = mmRLC_SPM_PERFMON_RING_BASE_LO_BASE_IDX,
		[SPM_R_BASE_HI] = mmRLC_SPM_PERFMON_RING_BASE_HI_BASE_IDX,
		[SPM_R_SIZE] = mmRLC_SPM_PERFMON_RING_SIZE_BASE_IDX,
		[SPM_R_SEGMENT_SIZE] = mmRLC_SPM_PERFMON_SEGMENT_SIZE_BASE_IDX,
		[SPM_R_THRESHOLD] = mmRLC_SPM_SEGMENT_THRESHOLD_BASE_IDX,
		[SPM_R_RDPTR] = mmRLC_SPM_RING_RDPTR_BASE_IDX,
		[SPM_R_MC_CNTL] = mmRLC_SPM_MC_CNTL_BASE_IDX,
		[SPM_R_INT_CNTL] = mmRLC_SPM_INT_CNTL_BASE_IDX,
		[SPM_R_CLK_CNTL] = mmRLC_CLK_CNTL_BASE_IDX,
		[SPM_R_CP_PERFMON_CNTL] = mmCP_PERFMON_CNTL_BASE_IDX,
		[SPM_R_VM_CNTL] = mmVM_CONTEXT0_CNTL_BASE_IDX,
		[SPM_R_VM_CNTL1] = mmVM_CONTEXT1_CNTL_BASE_IDX,
		[SPM_R_VM_PTB_LO] = mmVM_CONTEXT0_PAGE_TABLE_BASE_ADDR_LO32_BASE_IDX,
		[SPM_R_VM_PTB_HI] = mmVM_CONTEXT0_PAGE_TABLE_BASE_ADDR_HI32_BASE_IDX,
		[SPM_R_VM_PTB1_LO] = mmVM_CONTEXT1_PAGE_TABLE_BASE_ADDR_LO32_BASE_IDX,
		[SPM_R_VM_START_LO] = mmVM_CONTEXT0_PAGE_TABLE_START_ADDR_LO32_BASE_IDX,
		[SPM_R_VM_START_HI] = mmVM_CONTEXT0_PAGE_TABLE_START_ADDR_HI32_BASE_IDX,
		[SPM_R_VM_END_LO] = mmVM_CONTEXT0_PAGE_TABLE_END_ADDR_LO32_BASE_IDX,
		[SPM_R_VM_END_HI] = mmVM_CONTEXT0_PAGE_TABLE_END_ADDR_HI32_BASE_IDX,
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
	/* Nothing says GC 9.4.1/9.4.2 need a clock bit for SPM */
	.clk_mask = 0,
	.mc_cntl_default = mmRLC_SPM_MC_CNTL_DEFAULT,
	.clk_cntl_default = mmRLC_CLK_CNTL_DEFAULT,
	.lines_mask = RLC_SPM_PERFMON_SEGMENT_SIZE__PERFMON_SEGMENT_SIZE_MASK,
	.vm_enable_mask = VM_CONTEXT1_CNTL__ENABLE_CONTEXT_MASK,
	.vm_depth_mask = VM_CONTEXT1_CNTL__PAGE_TABLE_DEPTH_MASK,
	.vm_depth_shift = VM_CONTEXT1_CNTL__PAGE_TABLE_DEPTH__SHIFT,
	.vm_block_mask = VM_CONTEXT1_CNTL__PAGE_TABLE_BLOCK_SIZE_MASK,
	.vm_retry_mask = VM_CONTEXT1_CNTL__RETRY_PERMISSION_OR_INVALID_PAGE_FAULT_MASK,
	/* gfxhub_v1_0_setup_vmid_config() on Aldebaran (GC 9.4.2) forces retry */
	.vm_retry_reset = true,
	.num_xcc = 1,
};

/**
 * spm_model_layout_gc941 - the layout as on MI100 (GC 9.4.1)
 * @test: the test that owns the copy
 * @retry: what gfxhub leaves in the contexts: retry faults on or off
 *
 * The same registers (gfx_v9_0.c, gfxhub_v1_0.c). There
 * gfxhub_v1_0_setup_vmid_config() enables retry faults only with
 * amdgpu.noretry=0; amdgpu_gmc_noretry_set() defaults it to 1 on GC 9.4.1.
 *
 * Return: a copy of &spm_layout_gfx_v9_0 for GC 9.4.1.
 */
const struct spm_model_layout *spm_model_layout_gc941(struct kunit *test,
						      bool retry)
{
	struct spm_model_layout *l;

	l = kunit_kmalloc(test, sizeof(*l), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, l);
	*l = spm_layout_gfx_v9_0;
	l->name = retry ? "gfx_v9_0 GC 9.4.1, noretry=0" : "gfx_v9_0 GC 9.4.1";
	l->ip_version = IP_VERSION(9, 4, 1);
	l->vm_retry_reset = retry;
	return l;
}
