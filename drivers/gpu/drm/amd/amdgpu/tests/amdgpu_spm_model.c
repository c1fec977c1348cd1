// SPDX-License-Identifier: MIT
/*
 * Copyright 2026 The amdgpu profiler series authors
 *
 * A register-level model of the RLC's SPM for the KUnit tests.
 *
 * The fake device gets a register file: its MMIO aperture is empty
 * (rmmio_size 0), so every RREG32/WREG32 of the driver ends in
 * adev->pcie_rreg/pcie_wreg, which this file serves from an array. Each GC
 * instance has its own register segments (reg_offset[GC_HWIP][inst]), and
 * logical XCCs map to other physical instances (GET_INST()), so a hook
 * that writes the wrong instance is seen. The RLC model reads only those
 * registers and behaves as its sources say:
 *
 * - It streams only while CP_PERFMON_CNTL.SPM_PERFMON_STATE is
 *   START_COUNTING, which the profiler's own command stream writes (Mesa's
 *   ac_emit_spm_start(); ROCm's kernel hooks never write it).
 *   DISABLE_AND_RESET puts its write pointer back to 0 (kfd_spm.c: "When SPM
 *   is reset, RLC automatically resets wptr to 0").
 * - On GC 9.4.3 it needs RLC_CLK_CNTL.RLC_SPM_CLK_CNTL (ROCm's
 *   gfx_v9_4_3.c sets it before SPM runs, and the v3 posting moved it to
 *   RLC resume); on GC 9.4.1/9.4.2 nothing says a clock bit
 *   is needed, and the model needs none.
 * - It writes to RLC_SPM_PERFMON_RING_BASE through the VM context that
 *   SPM_VMID selects (2020 amd-gfx thread "Add a chunk ID for spm trace": a
 *   stale SPM_VMID causes VM faults). Through VMID 0 the base is a GART
 *   address: the model knows the GART addresses of the rings, and any
 *   other is a stray write. Through any other VMID the model walks that
 *   VMID's GFXHUB context (VM_CONTEXTn_* of the GC headers, n strides of
 *   context 1 minus context 0 as gfxhub_v1_0/gfxhub_v1_2 step them): only
 *   an enabled flat table (PAGE_TABLE_DEPTH and BLOCK_SIZE 0, as gfxhub
 *   sets up context 0, the GART) is walked; anything else (what gfxhub
 *   leaves after a reset: depth of the VM manager, retry per GC version) is
 *   counted as unknown and writes nothing. The table base is a PDE
 *   (amdgpu_gmc_pd_addr(): address bits 47:12, VALID); entry i translates
 *   page START + i; a page outside START..END or a PTE without VALID,
 *   SYSTEM and WRITEABLE (amdgpu_vm.h; address bits as
 *   amdgpu_gmc_set_pte_pde() writes them) faults and writes nothing. A PTE
 *   whose address is no ring page is a stray write; one that leads to a
 *   freed ring is counted as such. The walker reads what the GPU sees of
 *   the table: the CPU's writes to VRAM once the HDP is flushed
 *   (amdgpu_gart_invalidate_tlb() flushes it before the TLB), and once a
 *   page was walked, the hub keeps the translation until its VMID's TLB is
 *   flushed on that hub (the most a TLB may keep: nothing bounds its
 *   size). With no ring at all (base and size 0, the reset values) what
 *   the RLC does is not known: a parameter (struct spm_model_reading
 *   zero_va0), it writes nothing, or its first line at GPU address 0
 *   through SPM_VMID.
 * - Ring mode 0 never stalls and overwrites (Mesa ac_spm.c). Ring mode 3
 *   stalls when full and interrupts at RLC_SPM_SEGMENT_THRESHOLD segments,
 *   but before GC 12 it stalls at the threshold too ("workaround for hw
 *   stall issue", amd-gfx, v4 15/17). Two things about it are not known
 *   and are parameters (struct spm_model_reading), each value run: the
 *   unit the threshold counts fill in (a sample, as the posting's "every
 *   segment" for threshold 1 suggests, a line, or a byte), and where a
 *   full ring stops the RLC (a sample short of RLC_SPM_RING_RDPTR, or at
 *   it). Modes 1 and 2 are described nowhere: the model counts them and
 *   writes nothing. Whether the profiler's command stream leaves the
 *   kernel's mode 0 or selects mode 3 (aqlprofile) is a parameter too.
 * - The interrupt is raised only if RLC_SPM_INT_CNTL bit 0 is set: that
 *   bit is the register's only field (RLC_SPM_INT_CNTL__RLC_SPM_INT_CNTL
 *   of gc_9_0_sh_mask.h and gc_9_4_3_sh_mask.h, the rest RESERVED), and
 *   AMD's "add profiler/spm support for gfx9_4_3" posting (amd-gfx, 20 Feb
 *   2026) writes 1 there when it starts SPM with its interrupt. Nothing
 *   describes RLC_SPM_INT_STATUS, which the model ignores.
 * - A sample is RLC_SPM_PERFMON_SEGMENT_SIZE.PERFMON_SEGMENT_SIZE lines of
 *   32 bytes (Mesa programs the total line count there on GFX10); the ring
 *   layout and the pre-GC 11.0.1 spill are in amdgpu_spm_rlc_ring.h.
 * - Whether a part spills is read off its GC version (the layout's
 *   ip_version; before 11.0.1, by the amd-gfx posting "workaround for spm
 *   ring buffer overflow"), never off the driver's spill guard: the spill
 *   finishes the sample that crosses the end, whatever memory the driver
 *   left after the ring. A line that would land past the ring's memory is
 *   not written and counts as a stray write.
 * - Nothing describes what the RLC does when its ring registers change
 *   while it streams; every source stops it first. The model counts such
 *   writes as errors.
 * - Reset values: those of gc_9_0_default.h for GC 9.4.1/9.4.2; GC 9.4.3
 *   has no defaults header, and its two that matter (RLC_SPM_MC_CNTL,
 *   RLC_CLK_CNTL) are a reading run both ways (see the layouts).
 * - Memory the driver frees must be out of the GPU's reach: a ring or a
 *   page table freed while an enabled VM context of any XCC still points
 *   at the table, or at a table whose valid PTEs lead into the ring, or
 *   while a hub's TLB still holds such a translation, counts in
 *   &spm_model.free_violations (the TLB keeps what it walked until a
 *   flush, see above). gfxhub's GART disable at hw_fini disables every
 *   context (gfxhub_v1_0/v1_2_gart_disable()); the model does that before
 *   the gfx IP's sw_fini frees the empty table. After a surprise removal
 *   nothing of the device reaches memory any more.
 * - TLB flushes: gmc_v9_0_flush_gpu_tlb() sends them through the KIQ once
 *   it runs (bare metal included), and amdgpu_gmc_fw_reg_write_reg_wait()
 *   gives up waiting for the KIQ's invalidation while a reset is pending
 *   (amdgpu_reset_pending(): a writer waits for the reset domain's
 *   semaphore), with the invalidation perhaps not done. With &spm_model.kiq
 *   set the model then does not invalidate (&spm_model.kiq_skipped).
 * - RLC_SPM_MC_CNTL has fields besides RLC_SPM_VMID (RLC_SPM_POLICY,
 *   PERF_CNTR, FED, MTYPE_OVER, MTYPE of the sh_mask headers): the driver
 *   changes only RLC_SPM_VMID, and a driver write that changes any other
 *   bit counts in &spm_model.mc_clobbers (every case expects 0).
 */

#include <kunit/static_stub.h>
#include <kunit/test.h>

#include <linux/delay.h>
#include <linux/kthread.h>
#include <linux/mman.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>

#include <drm/amdgpu_drm.h>

#include "amdgpu.h"
#include "amdgpu_reset.h"
#include "amdgpu_spm.h"
#include "tests/amdgpu_kunit_helpers.h"
#include "tests/amdgpu_spm_model.h"

/* Register file: 8 GC instances of 0x8000 dwords, then the other IPs */
#define SPM_MODEL_INST_DW	0x8000
#define SPM_MODEL_SEG1		0x1400
#define SPM_MODEL_OTHER		(8 * SPM_MODEL_INST_DW)
#define SPM_MODEL_NREGS		(SPM_MODEL_OTHER + 0x8000)
#define SPM_MODEL_GPU_BASE	0x700000000000ULL
/* Fake DMA addresses of ring pages, and VRAM addresses of page tables */
#define SPM_MODEL_DMA_BASE	0x100000000ULL
#define SPM_MODEL_VRAM_BASE	0x8000000000ULL
/* Address bits of a PTE or PDE: amdgpu_gmc_set_pte_pde() */
#define SPM_MODEL_PTE_ADDR	0x0000FFFFFFFFF000ULL
#define SPM_MODEL_PTE_NEED	(AMDGPU_PTE_VALID | AMDGPU_PTE_SYSTEM | \
				 AMDGPU_PTE_WRITEABLE)

/* Tests run one at a time: the device's accessors find the model here */
static struct spm_model *spm_model_cur;

static u32 gc_base[HWIP_MAX_INSTANCE][8];
static u32 other_base[8];

/* Logical XCC i is physical instance n - 1 - i */
static int8_t spm_model_l2d(struct amdgpu_device *adev,
			    enum amd_hw_ip_block_type block, int8_t inst)
{
	unsigned int n = NUM_XCC(adev->gfx.xcc_mask);

	if (block != GC_HWIP || inst < 0 || inst >= n)
		return inst;
	return n - 1 - inst;
}

static u32 spm_model_l2d_mask(struct amdgpu_device *adev,
			      enum amd_hw_ip_block_type block, u32 mask)
{
	u32 out = 0;
	int i;

	for (i = 0; i < 32; i++)
		if (mask & BIT(i))
			out |= BIT(spm_model_l2d(adev, block, i));
	return out;
}

static int spm_model_xcc_of_phys(struct spm_model *m, int phys)
{
	unsigned int n = NUM_XCC(m->adev->gfx.xcc_mask);

	return phys < n ? n - 1 - phys : -1;
}

static u32 spm_model_addr(struct spm_model *m, u32 xcc, enum spm_model_reg r)
{
	int phys = spm_model_l2d(m->adev, GC_HWIP, xcc);

	return gc_base[phys][m->l->seg[r]] + m->l->off[r];
}

/* Which SPM register of which logical XCC a dword address is, or -1 */
static int spm_model_decode(struct spm_model *m, u32 dw, u32 *xcc)
{
	int phys = dw / SPM_MODEL_INST_DW, x, r;

	if (dw >= SPM_MODEL_OTHER)
		return -1;
	x = spm_model_xcc_of_phys(m, phys);
	if (x < 0)
		return -1;
	for (r = 0; r < SPM_R_NUM; r++) {
		if (gc_base[phys][m->l->seg[r]] + m->l->off[r] == dw) {
			*xcc = x;
			return r;
		}
	}
	return -1;
}

static u32 spm_model_get(struct spm_model *m, u32 xcc, enum spm_model_reg r)
{
	return m->regs[spm_model_addr(m, xcc, r)];
}

static u32 spm_model_fld(struct spm_model *m, u32 xcc, enum spm_model_reg r,
			 u32 mask, u32 shift)
{
	return (spm_model_get(m, xcc, r) & mask) >> shift;
}

/* Side effects of a write to an SPM register; called with m->lock held */
static void spm_model_wrote(struct spm_model *m, u32 xcc, int r, u32 old,
			    u32 v)
{
	struct spm_model_xcc *x = &m->x[xcc];
	const struct spm_model_layout *l = m->l;

	if (m->nlog < SPM_MODEL_LOG)
		m->log[m->nlog++] = (struct spm_model_write){ xcc, r, v };

	switch (r) {
	case SPM_R_CP_PERFMON_CNTL:
		switch ((v & l->state_mask) >> l->state_shift) {
		case SPM_MODEL_DISABLE_AND_RESET:
			x->streaming = false;
			x->w.pos = 0;
			x->full = false;
			break;
		case SPM_MODEL_START_COUNTING:
			x->streaming = true;
			break;
		default:
			x->streaming = false;
			break;
		}
		break;
	case SPM_R_BASE_LO:
	case SPM_R_BASE_HI:
	case SPM_R_SIZE:
		if (x->streaming)
			x->reprogrammed++;
		break;
	case SPM_R_MC_CNTL:
		if (x->streaming && ((old ^ v) & l->vmid_mask))
			x->reprogrammed++;
		break;
	default:
		break;
	}
}

/* A read of the register file; @count: a read of the driver's */
static u32 spm_model_rreg_do(struct spm_model *m, u32 byte, bool count)
{
	unsigned long flags;
	u32 v, xcc;
	int r;

	if (!m || byte / 4 >= m->nregs)
		return 0;
	spin_lock_irqsave(&m->lock, flags);
	v = m->regs[byte / 4];
	if (count) {
		r = spm_model_decode(m, byte / 4, &xcc);
		if (r >= 0)
			m->x[xcc].reads[r]++;
		else
			m->reads_other++;
	}
	spin_unlock_irqrestore(&m->lock, flags);
	return v;
}

/* adev->pcie_rreg: every RREG32 of the driver */
static u32 spm_model_rreg(struct amdgpu_device *adev, u32 byte)
{
	return spm_model_rreg_do(spm_model_cur, byte, true);
}

/* A write to the register file; @driver: a write of the driver's */
static void spm_model_wreg_do(struct spm_model *m, u32 byte, u32 v, bool driver)
{
	unsigned long flags;
	u32 xcc, old;
	int r;

	if (!m || byte / 4 >= m->nregs)
		return;
	spin_lock_irqsave(&m->lock, flags);
	old = m->regs[byte / 4];
	m->regs[byte / 4] = v;
	r = spm_model_decode(m, byte / 4, &xcc);
	if (r >= 0)
		spm_model_wrote(m, xcc, r, old, v);
	/* The driver's writes only: a profiler's stream may write anything */
	if (driver && r == SPM_R_MC_CNTL && ((old ^ v) & ~m->l->vmid_mask)) {
		m->mc_clobbers++;
		pr_info("spm model: XCC %u RLC_SPM_MC_CNTL %#x -> %#x: not only the VMID\n",
			xcc, old, v);
	}
	spin_unlock_irqrestore(&m->lock, flags);
}

/* adev->pcie_wreg: every WREG32 of the driver */
static void spm_model_wreg(struct amdgpu_device *adev, u32 byte, u32 v)
{
	spm_model_wreg_do(spm_model_cur, byte, v, true);
}

static bool spm_model_reaches_ring(struct spm_model *m,
				   const struct spm_model_ring *mr, u32 *xcc);
static bool spm_model_reaches_pt(struct spm_model *m,
				 const struct spm_model_pt *mp, u32 *xcc);

/* ---- rings: amdgpu_spm_ring_alloc_gtt() and _free_gtt() ---- */

static int spm_model_ring_alloc(struct amdgpu_device *adev, u32 xcc, u32 size,
				struct amdgpu_spm_ring *ring)
{
	struct spm_model *m = spm_model_cur;
	/*
	 * Read once: the test clears it and opens the gate as soon as it
	 * has seen alloc_waiting, which may be before this thread waits
	 */
	struct completion *gate = READ_ONCE(m->alloc_gate);
	unsigned long flags;
	dma_addr_t *pages;
	u32 p;
	u8 *cpu;
	int i;

	if (gate) {
		complete(m->alloc_waiting);
		wait_for_completion(gate);
	}
	if (m->fail_alloc == xcc)
		return -ENOMEM;
	cpu = vzalloc(size);
	if (!cpu)
		return -ENOMEM;
	pages = kvmalloc_array(size / PAGE_SIZE, sizeof(*pages), GFP_KERNEL);
	if (!pages) {
		vfree(cpu);
		return -ENOMEM;
	}
	/* What the RLC never wrote is not zero, so that reading it shows */
	memset(cpu, 0xa5, size);
	spin_lock_irqsave(&m->lock, flags);
	for (i = 0; i < SPM_MODEL_MAX_RINGS && m->rings[i].cpu; i++)
		;
	if (i == SPM_MODEL_MAX_RINGS) {
		spin_unlock_irqrestore(&m->lock, flags);
		kvfree(pages);
		vfree(cpu);
		return -ENOMEM;
	}
	/* DMA addresses never reused, so that a stale PTE shows */
	for (p = 0; p < size / PAGE_SIZE; p++)
		pages[p] = m->next_dma + (u64)p * PAGE_SIZE;
	m->rings[i] = (struct spm_model_ring){
		.gpu = SPM_MODEL_GPU_BASE + (u64)i * SZ_256M,
		.dma = m->next_dma, .pages = pages,
		.cpu = cpu, .size = size, .live = true,
	};
	m->next_dma += size + SZ_1M;
	m->allocs++;
	spin_unlock_irqrestore(&m->lock, flags);
	ring->cpu_addr = cpu;
	ring->size = size;
	ring->dma_addr = pages;
	/*
	 * What amdgpu_ttm_tt_pte_flags() gives a cached GTT BO on gmc_v9_0:
	 * valid, system, snooped, readable, writeable, and of the GART's own
	 * flags executable (its MTYPE the model does not look at)
	 */
	ring->pte_flags = AMDGPU_PTE_VALID | AMDGPU_PTE_SYSTEM |
			  AMDGPU_PTE_SNOOPED | AMDGPU_PTE_READABLE |
			  AMDGPU_PTE_WRITEABLE | AMDGPU_PTE_EXECUTABLE;
	ring->priv = &m->rings[i];
	return 0;
}

static void spm_model_ring_free(struct amdgpu_device *adev, u32 xcc,
				struct amdgpu_spm_ring *ring)
{
	struct spm_model *m = spm_model_cur;
	struct spm_model_ring *mr = ring->priv;
	unsigned long flags;
	unsigned int i;

	spin_lock_irqsave(&m->lock, flags);
	/* Out of reach first: no context or TLB may lead into it any more */
	if (spm_model_reaches_ring(m, mr, &i)) {
		m->free_violations++;
		pr_info("spm model: ring %td freed while XCC %u can reach it\n",
			mr - m->rings, i);
	}
	mr->live = false;
	m->allocs--;
	for (i = 0; i < AMDGPU_SPM_MAX_XCC; i++)
		if (m->x[i].ring == mr - m->rings)
			m->x[i].ring = -1;
	spin_unlock_irqrestore(&m->lock, flags);
	vfree(mr->cpu);
	kvfree(mr->pages);
	/* Its DMA addresses stay known, to tell a write into a freed ring */
	mr->cpu = NULL;
	mr->pages = NULL;
	ring->cpu_addr = NULL;
	ring->dma_addr = NULL;
}

/* ---- page tables: amdgpu_spm_pt_alloc_vram() and _free_vram() ---- */

#define SPM_MODEL_PT_CANARY	0x5350545441494cULL	/* "SPTTAIL" */

static int spm_model_pt_alloc(struct amdgpu_device *adev, u32 size,
			      struct amdgpu_spm_pt *pt)
{
	struct spm_model *m = spm_model_cur;
	unsigned long flags;
	u64 *cpu, *gpu;
	int i;

	if (m->fail_pt) {
		m->fail_pt = false;
		return -ENOMEM;
	}
	/*
	 * One word past the table: whatever VRAM follows the BO. A PTE the
	 * driver writes there is found at the free (a WARNING fails the run).
	 */
	cpu = vmalloc(size + sizeof(u64));
	gpu = vmalloc(size);
	if (!cpu || !gpu) {
		vfree(cpu);
		vfree(gpu);
		return -ENOMEM;
	}
	/* VRAM is not cleared: what was there looks like valid PTEs */
	memset(cpu, 0xff, size);
	memset(gpu, 0xff, size);
	cpu[size / sizeof(u64)] = SPM_MODEL_PT_CANARY;
	spin_lock_irqsave(&m->lock, flags);
	for (i = 0; i < SPM_MODEL_MAX_PTS && m->pts[i].live; i++)
		;
	if (i == SPM_MODEL_MAX_PTS) {
		spin_unlock_irqrestore(&m->lock, flags);
		vfree(cpu);
		vfree(gpu);
		return -ENOMEM;
	}
	m->pts[i] = (struct spm_model_pt){
		.addr = SPM_MODEL_VRAM_BASE + (u64)i * SZ_64M,
		.cpu = cpu, .gpu = gpu, .n = size / sizeof(u64), .live = true,
	};
	m->pts_allocated++;
	spin_unlock_irqrestore(&m->lock, flags);
	pt->cpu = cpu;
	/* amdgpu_gmc_pd_addr() of a VRAM BO: its address, VALID */
	pt->pd_addr = m->pts[i].addr | AMDGPU_PTE_VALID;
	pt->priv = &m->pts[i];
	return 0;
}

static void spm_model_pt_free(struct amdgpu_device *adev,
			      struct amdgpu_spm_pt *pt)
{
	struct spm_model *m = spm_model_cur;
	struct spm_model_pt *mp = pt->priv;
	unsigned long flags;
	u64 *cpu, *gpu;
	u32 i;

	spin_lock_irqsave(&m->lock, flags);
	if (spm_model_reaches_pt(m, mp, &i)) {
		m->free_violations++;
		pr_info("spm model: page table %td freed while XCC %u can reach it\n",
			mp - m->pts, i);
	}
	cpu = mp->cpu;
	gpu = mp->gpu;
	i = mp->n;
	*mp = (struct spm_model_pt){};
	spin_unlock_irqrestore(&m->lock, flags);
	WARN(cpu[i] != SPM_MODEL_PT_CANARY,
	     "spm model: a PTE was written past the end of its table of %u\n", i);
	vfree(cpu);
	vfree(gpu);
	pt->priv = NULL;
	pt->cpu = NULL;
}

/* amdgpu_device_flush_hdp(): the CPU's writes to VRAM reach the GPU */
static void spm_model_flush_hdp(struct amdgpu_device *adev,
				struct amdgpu_ring *ring)
{
	struct spm_model *m = spm_model_cur;
	unsigned long flags;
	unsigned int i;

	spin_lock_irqsave(&m->lock, flags);
	for (i = 0; i < SPM_MODEL_MAX_PTS; i++)
		if (m->pts[i].live)
			memcpy(m->pts[i].gpu, m->pts[i].cpu,
			       m->pts[i].n * sizeof(u64));
	m->hdp_flushes++;
	spin_unlock_irqrestore(&m->lock, flags);
}

static void spm_model_tlb_drop(struct spm_model_xcc *x)
{
	kfree(x->tlb);
	x->tlb = NULL;
	x->tlb_valid = false;
	x->tlb_pt = -1;
	x->tlb_gen++;
}

/*
 * gmc_v9_0_flush_gpu_tlb(): hub n is logical XCC n (AMDGPU_GFXHUB()). With
 * &spm_model.kiq, through the KIQ: not done while a reset is pending.
 */
static void spm_model_flush_tlb(struct amdgpu_device *adev, u32 vmid,
				u32 vmhub, u32 flush_type)
{
	struct spm_model *m = spm_model_cur;
	struct completion *hold = xchg(&m->flush_hold, NULL);
	struct rw_semaphore *sem = &adev->reset_domain->sem;
	unsigned long flags;

	if (hold) {
		/* Until the reset the test starts now waits for the semaphore */
		complete(hold);
		KUNIT_EXPECT_TRUE(m->test, amdgpu_kunit_poll(rwsem_is_contended(sem)));
	}
	if (vmhub >= AMDGPU_SPM_MAX_XCC)
		return;
	spin_lock_irqsave(&m->lock, flags);
	if (m->kiq && rwsem_is_contended(sem)) {
		m->kiq_skipped++;
		spin_unlock_irqrestore(&m->lock, flags);
		return;
	}
	if (m->x[vmhub].tlb_valid && m->x[vmhub].tlb_vmid == vmid)
		spm_model_tlb_drop(&m->x[vmhub]);
	if (vmid == m->adev->spm.vmid && flush_type == 2)
		m->x[vmhub].tlb_flushes_2++;
	m->tlb_flushes++;
	spin_unlock_irqrestore(&m->lock, flags);
}

static const struct amdgpu_gmc_funcs spm_model_gmc_funcs = {
	.flush_gpu_tlb = spm_model_flush_tlb,
};

static const struct amdgpu_asic_funcs spm_model_asic_funcs = {
	.flush_hdp = spm_model_flush_hdp,
};

/* ---- the RLC ---- */

static int spm_model_ring_at(struct spm_model *m, u64 gpu)
{
	int i;

	for (i = 0; i < SPM_MODEL_MAX_RINGS; i++)
		if (m->rings[i].live && m->rings[i].gpu == gpu)
			return i;
	return -1;
}

/* A register of the VM context of @vmid; called with m->lock held */
static u32 spm_model_ctx_get(struct spm_model *m, u32 xcc, u32 vmid,
			     enum spm_model_reg r)
{
	const struct spm_model_layout *l = m->l;
	u32 stride = r == SPM_R_VM_CNTL ? l->off[SPM_R_VM_CNTL1] - l->off[SPM_R_VM_CNTL] :
		     l->off[SPM_R_VM_PTB1_LO] - l->off[SPM_R_VM_PTB_LO];

	return m->regs[spm_model_addr(m, xcc, r) + vmid * stride];
}

static u64 spm_model_ctx_get64(struct spm_model *m, u32 xcc, u32 vmid,
			       enum spm_model_reg lo)
{
	return (u64)spm_model_ctx_get(m, xcc, vmid, lo + 1) << 32 |
	       spm_model_ctx_get(m, xcc, vmid, lo);
}

/*
 * The table of the model that the context of @vmid on @xcc points at, if
 * the context is enabled, or NULL; called with m->lock held
 */
static struct spm_model_pt *spm_model_ctx_pt(struct spm_model *m, u32 xcc,
					     u32 vmid)
{
	u32 cntl = spm_model_ctx_get(m, xcc, vmid, SPM_R_VM_CNTL);
	u64 ptb = spm_model_ctx_get64(m, xcc, vmid, SPM_R_VM_PTB_LO);
	unsigned int i;

	if (!(cntl & m->l->vm_enable_mask) || !(ptb & AMDGPU_PTE_VALID))
		return NULL;
	for (i = 0; i < SPM_MODEL_MAX_PTS; i++)
		if (m->pts[i].live && m->pts[i].addr == (ptb & SPM_MODEL_PTE_ADDR))
			return &m->pts[i];
	return NULL;
}

/* Whether any of @n entries at @pte is a valid one into @mr */
static bool spm_model_ptes_into(const u64 *pte, u32 n,
				const struct spm_model_ring *mr)
{
	u32 i;

	for (i = 0; i < n; i++) {
		u64 a = pte[i] & SPM_MODEL_PTE_ADDR;

		if ((pte[i] & AMDGPU_PTE_VALID) && a >= mr->dma &&
		    a < mr->dma + mr->size)
			return true;
	}
	return false;
}

/* Nothing of a device that is gone reaches memory */
static bool spm_model_gone(struct spm_model *m)
{
	return m->adev->pdev && pci_dev_is_disconnected(m->adev->pdev);
}

/*
 * Whether the GPU can still write @mr: through what the table of an
 * enabled context (any VMID but 0, the GART, on any XCC) holds, whatever
 * its range, or through what a hub's TLB keeps. Sets *@xcc to the XCC
 * that can. Called with m->lock held.
 */
static bool spm_model_reaches_ring(struct spm_model *m,
				   const struct spm_model_ring *mr, u32 *xcc)
{
	unsigned int i, vmid;

	if (spm_model_gone(m))
		return false;
	for (i = 0; i < NUM_XCC(m->adev->gfx.xcc_mask); i++) {
		struct spm_model_xcc *x = &m->x[i];

		*xcc = i;
		if (x->tlb_valid && x->tlb && spm_model_ptes_into(x->tlb, x->tlb_n, mr))
			return true;
		for (vmid = 1; vmid < AMDGPU_NUM_VMID; vmid++) {
			struct spm_model_pt *pt = spm_model_ctx_pt(m, i, vmid);

			if (pt && spm_model_ptes_into(pt->gpu, pt->n, mr))
				return true;
		}
	}
	return false;
}

/*
 * Whether an enabled context of some XCC points at @mp, or a hub's TLB
 * holds a walk of it; called with m->lock held
 */
static bool spm_model_reaches_pt(struct spm_model *m,
				 const struct spm_model_pt *mp, u32 *xcc)
{
	unsigned int i, vmid;

	if (spm_model_gone(m))
		return false;
	for (i = 0; i < NUM_XCC(m->adev->gfx.xcc_mask); i++) {
		*xcc = i;
		if (m->x[i].tlb_valid && m->x[i].tlb_pt == mp - m->pts)
			return true;
		for (vmid = 1; vmid < AMDGPU_NUM_VMID; vmid++)
			if (spm_model_ctx_pt(m, i, vmid) == mp)
				return true;
	}
	return false;
}

/* Walk the context of @vmid into the XCC's TLB; called with m->lock held */
static void spm_model_tlb_fill(struct spm_model *m, u32 xcc, u32 vmid)
{
	const struct spm_model_layout *l = m->l;
	struct spm_model_xcc *x = &m->x[xcc];
	u32 cntl = spm_model_ctx_get(m, xcc, vmid, SPM_R_VM_CNTL);
	u64 ptb = spm_model_ctx_get64(m, xcc, vmid, SPM_R_VM_PTB_LO);
	u64 start = spm_model_ctx_get64(m, xcc, vmid, SPM_R_VM_START_LO);
	u64 end = spm_model_ctx_get64(m, xcc, vmid, SPM_R_VM_END_LO);
	struct spm_model_pt *pt = NULL;
	unsigned int i;

	spm_model_tlb_drop(x);
	x->tlb_valid = true;
	x->tlb_vmid = vmid;
	x->tlb_bad = 0;
	x->tlb_retry = cntl & l->vm_retry_mask;
	if (!(cntl & l->vm_enable_mask) || (cntl & l->vm_depth_mask) ||
	    (cntl & l->vm_block_mask)) {
		x->tlb_bad = SPM_MODEL_XL_UNKNOWN;
		return;
	}
	for (i = 0; i < SPM_MODEL_MAX_PTS; i++)
		if (m->pts[i].live && (ptb & AMDGPU_PTE_VALID) &&
		    m->pts[i].addr == (ptb & SPM_MODEL_PTE_ADDR))
			pt = &m->pts[i];
	/* No table of ours: a VM of graphics or KFD, or nothing */
	if (!pt || end < start) {
		x->tlb_bad = SPM_MODEL_XL_FAULT;
		return;
	}
	/* Entries past the table's memory are not modelled: they fault */
	x->tlb_n = min_t(u64, end - start + 1, pt->n);
	x->tlb_start = start;
	x->tlb_pt = pt - m->pts;
	x->tlb = kmemdup(pt->gpu, x->tlb_n * sizeof(u64), GFP_ATOMIC);
	if (!x->tlb)
		x->tlb_bad = SPM_MODEL_XL_UNKNOWN;
}

/* The DMA address GPU page @page of @vmid translates to, or why not */
static int spm_model_xlate_page(struct spm_model *m, u32 xcc, u32 vmid,
				u64 page, u64 *dma)
{
	struct spm_model_xcc *x = &m->x[xcc];
	u64 pte;

	if (!x->tlb_valid || x->tlb_vmid != vmid)
		spm_model_tlb_fill(m, xcc, vmid);
	if (x->tlb_bad)
		return x->tlb_bad;
	if (page < x->tlb_start || page - x->tlb_start >= x->tlb_n)
		return SPM_MODEL_XL_FAULT;
	pte = x->tlb[page - x->tlb_start];
	if ((pte & SPM_MODEL_PTE_NEED) != SPM_MODEL_PTE_NEED)
		return SPM_MODEL_XL_FAULT;
	*dma = pte & SPM_MODEL_PTE_ADDR;
	return 0;
}

/**
 * spm_model_ring_of_dma - the ring slot whose pages hold a DMA address
 * @m: the model
 * @dma: the address
 *
 * Also a freed ring's slot, until it is allocated again: see
 * &spm_model_ring.live.
 *
 * Return: the index into &spm_model.rings, or -1.
 */
int spm_model_ring_of_dma(struct spm_model *m, u64 dma)
{
	int i;

	for (i = 0; i < SPM_MODEL_MAX_RINGS; i++)
		if (m->rings[i].dma && dma >= m->rings[i].dma &&
		    dma < m->rings[i].dma + m->rings[i].size)
			return i;
	return -1;
}

/*
 * The ring that @size bytes at @base in @vmid are, page for page from its
 * start, or a negative SPM_MODEL_XL_*; called with m->lock held
 */
static int spm_model_xlate_ring(struct spm_model *m, u32 xcc, u32 vmid,
				u64 base, u32 size)
{
	struct spm_model_xcc *x = &m->x[xcc];
	u64 page = base >> AMDGPU_GPU_PAGE_SHIFT, dma = 0;
	u32 n = DIV_ROUND_UP(size, AMDGPU_GPU_PAGE_SIZE), j;
	int ring = -1, r = 0;

	if (x->tlb_valid && x->tlb_vmid == vmid && x->xl_gen == x->tlb_gen &&
	    x->xl_base == base && x->xl_size == size)
		return x->xl_ring;
	for (j = 0; j < n && !r; j++) {
		int i;

		r = spm_model_xlate_page(m, xcc, vmid, page + j, &dma);
		if (r)
			break;
		i = spm_model_ring_of_dma(m, dma);
		if (i < 0 || (base & AMDGPU_GPU_PAGE_MASK) ||
		    dma != m->rings[i].dma + (u64)j * AMDGPU_GPU_PAGE_SIZE ||
		    (j && i != ring))
			r = SPM_MODEL_XL_STRAY;
		else if (!m->rings[i].live)
			r = SPM_MODEL_XL_FREED;
		ring = i;
	}
	x->xl_gen = x->tlb_gen;
	x->xl_base = base;
	x->xl_size = size;
	x->xl_ring = r ? r : ring;
	return x->xl_ring;
}

/**
 * spm_model_ctx_read - a register of a VM context of the GFXHUB of an XCC
 * @m: the model
 * @xcc: logical XCC
 * @vmid: the context
 * @r: one of SPM_R_VM_*
 *
 * Return: its value.
 */
u32 spm_model_ctx_read(struct spm_model *m, u32 xcc, u32 vmid,
		       enum spm_model_reg r)
{
	unsigned long flags;
	u32 v;

	spin_lock_irqsave(&m->lock, flags);
	v = spm_model_ctx_get(m, xcc, vmid, r);
	spin_unlock_irqrestore(&m->lock, flags);
	return v;
}

/**
 * spm_model_translate - what the hub of an XCC makes of an address
 * @m: the model
 * @xcc: logical XCC
 * @vmid: VMID
 * @va: GPU address
 * @dma: the DMA address it reaches, if it does
 *
 * Walks as a sample would (and so fills the TLB).
 *
 * Return: 0 with @dma set, or a negative SPM_MODEL_XL_* value.
 */
int spm_model_translate(struct spm_model *m, u32 xcc, u32 vmid, u64 va,
			u64 *dma)
{
	unsigned long flags;
	int r;

	spin_lock_irqsave(&m->lock, flags);
	r = spm_model_xlate_page(m, xcc, vmid, va >> AMDGPU_GPU_PAGE_SHIFT, dma);
	spin_unlock_irqrestore(&m->lock, flags);
	if (!r)
		*dma += va & AMDGPU_GPU_PAGE_MASK;
	return r;
}

/*
 * Count a sample that reached no ring page: @why is a negative
 * SPM_MODEL_XL_*; called with m->lock held
 */
static void spm_model_count_miss(struct spm_model_xcc *x, int why)
{
	switch (why) {
	case SPM_MODEL_XL_FAULT:
		x->vmfaults++;
		if (x->tlb_retry)
			x->retry_faults++;
		break;
	case SPM_MODEL_XL_UNKNOWN:
		x->unknown_ctx++;
		break;
	case SPM_MODEL_XL_FREED:
		x->freed++;
		break;
	default:
		x->stray++;
		break;
	}
}

/*
 * Reading zero_va0: the first line of a sample goes to GPU address 0
 * through @vmid (the GART for 0); called with m->lock held
 */
static void spm_model_write_va0(struct spm_model *m, u32 xcc, u32 vmid)
{
	struct spm_model_xcc *x = &m->x[xcc];
	u64 dma;
	int r;

	if (!vmid) {
		x->vmid0++;
		spm_model_count_miss(x, SPM_MODEL_XL_STRAY);
		return;
	}
	r = spm_model_xlate_page(m, xcc, vmid, 0, &dma);
	/* Whatever page 0 maps, it is no ring's base: a stray write */
	spm_model_count_miss(x, r ? r : SPM_MODEL_XL_STRAY);
}

/*
 * Ring mode 3: whether the RLC stalls before a sample of @sample bytes,
 * under the model's reading; called with m->lock held
 */
static bool spm_model_stalls(struct spm_model *m, u32 xcc, u32 sample)
{
	const struct spm_model_reading *rd = m->rd;
	struct spm_model_xcc *x = &m->x[xcc];
	u32 size = x->w.size, rdptr = spm_model_get(m, xcc, SPM_R_RDPTR) % size;
	u64 thr = spm_model_get(m, xcc, SPM_R_THRESHOLD);
	bool full = rd->stall_at && x->full && rdptr == x->full_at;
	u32 fill = full ? size : (x->w.pos + size - rdptr) % size;

	if (!full)
		x->full = false;
	/* Before GC 12 the stall comes at the threshold (see the top) */
	if (fill >= thr * (rd->thr_unit ? rd->thr_unit : sample))
		return true;
	return rd->stall_at ? fill + sample > size : fill + sample >= size;
}

/* One sample of @xcc, or why not; called with m->lock held */
static bool spm_model_sample_locked(struct spm_model *m, u32 xcc)
{
	const struct spm_model_layout *l = m->l;
	struct spm_model_xcc *x = &m->x[xcc];
	u32 lines, sample, size, mode, vmid, rdptr;
	struct spm_model_ring *mr;
	int ring;
	u64 base, stray;

	lines = spm_model_get(m, xcc, SPM_R_SEGMENT_SIZE) & l->lines_mask;
	sample = max(lines, 1u) * AMDGPU_SPM_LINE_SIZE;
	if (!x->streaming ||
	    (l->clk_mask && (spm_model_get(m, xcc, SPM_R_CLK_CNTL) & l->clk_mask) !=
	     l->clk_mask)) {
		x->dropped += sample;
		return false;
	}
	base = (u64)(spm_model_get(m, xcc, SPM_R_BASE_HI) & 0xffff) << 32 |
	       spm_model_get(m, xcc, SPM_R_BASE_LO);
	size = spm_model_get(m, xcc, SPM_R_SIZE);
	vmid = spm_model_get(m, xcc, SPM_R_MC_CNTL) & l->vmid_mask;
	/*
	 * No ring programmed (what release leaves, and the reset values): not
	 * known; by the reading, the RLC writes nothing, or its first line
	 * at GPU address 0 through SPM_VMID
	 */
	if (!base && !size) {
		if (m->rd->zero_va0)
			spm_model_write_va0(m, xcc, vmid);
		x->dropped += sample;
		return false;
	}
	if (!vmid) {
		/* The GART: the rings' GART addresses, anything else is stray */
		x->vmid0++;
		ring = spm_model_ring_at(m, base);
		if (ring < 0)
			ring = SPM_MODEL_XL_STRAY;
	} else {
		ring = spm_model_xlate_ring(m, xcc, vmid, base, size);
	}
	if (ring < 0)
		spm_model_count_miss(x, ring);
	else if (size <= AMDGPU_SPM_RING_HDR_SIZE || size > m->rings[ring].size)
		x->stray++;
	if (ring < 0 || size <= AMDGPU_SPM_RING_HDR_SIZE ||
	    size > m->rings[ring].size) {
		x->dropped += sample;
		return false;
	}
	mr = &m->rings[ring];
	if (x->ring != ring || x->w.size != size - AMDGPU_SPM_RING_HDR_SIZE) {
		u32 pos = x->ring == ring ? x->w.pos : 0;

		spm_rlc_ring_init(&x->w, mr->cpu, size - AMDGPU_SPM_RING_HDR_SIZE,
				  0, sample, xcc);
		/* What the driver allocated, not what it calls its guard */
		x->w.mem = mr->size - AMDGPU_SPM_RING_HDR_SIZE;
		x->w.pos = pos < x->w.size ? pos : 0;
		x->ring = ring;
	}
	x->w.sample = sample;
	/* A spilling part finishes the sample past the end: at most all of it */
	x->w.guard = l->ip_version < IP_VERSION(11, 0, 1) ? sample : 0;

	mode = (spm_model_get(m, xcc, SPM_R_PERFMON_CNTL) & l->ring_mode_mask) >>
	       l->ring_mode_shift;
	switch (mode) {
	case 0:
		break;
	case 3:
		if (spm_model_stalls(m, xcc, sample)) {
			x->stalls++;
			x->dropped += sample;
			if (spm_model_get(m, xcc, SPM_R_INT_CNTL) & 1)
				x->irqs++;
			return false;
		}
		break;
	default:
		x->unknown_mode++;
		x->dropped += sample;
		return false;
	}
	/* Stream positions go on across rings, so every line is unique */
	x->w.seq = x->seq;
	x->w.pub_line = m->rd->pub_line;
	stray = x->w.stray;
	/* A line past the ring's memory is counted as a stray write below */
	spm_rlc_ring_sample(&x->w);
	if (mode == 3 && m->rd->stall_at) {
		rdptr = spm_model_get(m, xcc, SPM_R_RDPTR) % x->w.size;
		if (x->w.pos == rdptr) {
			x->full = true;
			x->full_at = rdptr;
			x->fulls++;
		}
	}
	x->seq = x->w.seq;
	if (x->w.stray != stray)
		x->stray++;
	x->emitted += sample;
	return true;
}

/**
 * spm_model_line_seq - the stream position of the next line of an XCC
 * @m: the model
 * @xcc: logical XCC
 *
 * Return: the position; lines carry it (see amdgpu_spm_rlc_ring.h).
 */
u64 spm_model_line_seq(struct spm_model *m, u32 xcc)
{
	return READ_ONCE(m->x[xcc].seq);
}

/**
 * spm_model_emit - the RLC of an XCC produces @bytes of samples
 * @m: the model
 * @xcc: logical XCC
 * @bytes: how much, rounded up to samples
 *
 * Return: the bytes written into a ring.
 */
u32 spm_model_emit(struct spm_model *m, u32 xcc, u32 bytes)
{
	unsigned long flags;
	u32 done = 0, written = 0, sample;

	while (done < bytes) {
		spin_lock_irqsave(&m->lock, flags);
		sample = max(spm_model_get(m, xcc, SPM_R_SEGMENT_SIZE) & m->l->lines_mask,
			     1u) * AMDGPU_SPM_LINE_SIZE;
		if (spm_model_sample_locked(m, xcc))
			written += sample;
		spin_unlock_irqrestore(&m->lock, flags);
		done += sample;
	}
	return written;
}

/**
 * spm_model_profiler_start - what a profiler's command stream does
 * @m: the model
 * @xcc: logical XCC
 * @sample: bytes per sample (a multiple of 32)
 *
 * Programs the sample's size and starts counting (SPM_PERFMON_STATE
 * START_COUNTING), as Mesa's ac_emit_spm_setup() and ac_emit_spm_start()
 * do from a command buffer.
 */
void spm_model_profiler_start(struct spm_model *m, u32 xcc, u32 sample)
{
	const struct spm_model_layout *l = m->l;
	u32 v;

	v = spm_model_read(m, xcc, SPM_R_SEGMENT_SIZE) & ~l->lines_mask;
	spm_model_write(m, xcc, SPM_R_SEGMENT_SIZE, v | (sample / AMDGPU_SPM_LINE_SIZE));
	v = spm_model_read(m, xcc, SPM_R_CP_PERFMON_CNTL) & ~l->state_mask;
	spm_model_write(m, xcc, SPM_R_CP_PERFMON_CNTL,
			v | (SPM_MODEL_START_COUNTING << l->state_shift));
}

/*
 * The VM contexts 1-15 of an XCC as gfxhub's GART enable leaves them
 * (gfxhub_v1_0/gfxhub_v1_2 setup_vmid_config()): enabled, the VM manager's
 * depth (3 for 48-bit GPUVM), retry where gfxhub forces it; their page
 * table bases at the reset value 0; no TLB entry left
 */
static void spm_model_reset_vm_locked(struct spm_model *m, u32 xcc)
{
	const struct spm_model_layout *l = m->l;
	u32 stride = l->off[SPM_R_VM_CNTL1] - l->off[SPM_R_VM_CNTL];
	u32 astride = l->off[SPM_R_VM_PTB1_LO] - l->off[SPM_R_VM_PTB_LO];
	u32 vmid, r;

	for (vmid = 1; vmid < AMDGPU_NUM_VMID; vmid++) {
		m->regs[spm_model_addr(m, xcc, SPM_R_VM_CNTL) + vmid * stride] =
			l->vm_enable_mask | ((3 << l->vm_depth_shift) & l->vm_depth_mask) |
			(l->vm_retry_reset ? l->vm_retry_mask : 0);
		for (r = SPM_R_VM_PTB_LO; r <= SPM_R_VM_END_HI; r++)
			if (r != SPM_R_VM_PTB1_LO)
				m->regs[spm_model_addr(m, xcc, r) + vmid * astride] = 0;
		m->regs[spm_model_addr(m, xcc, SPM_R_VM_END_LO) + vmid * astride] =
			U32_MAX;
	}
	spm_model_tlb_drop(&m->x[xcc]);
}

/**
 * spm_model_reset - the GPU was reset: SPM registers at their reset values
 * @m: the model
 *
 * The reset values of the layout (gc_9_0_default.h: RLC_SPM_MC_CNTL 0, so
 * SPM_VMID 0; RLC_CLK_CNTL 0x3), everything else 0, and the VM contexts
 * as gfxhub's GART enable leaves them. RLC resume then parks SPM_VMID.
 */
void spm_model_reset(struct spm_model *m)
{
	unsigned long flags;
	unsigned int i, r;

	spin_lock_irqsave(&m->lock, flags);
	for (i = 0; i < NUM_XCC(m->adev->gfx.xcc_mask); i++) {
		for (r = 0; r < SPM_R_NUM; r++)
			m->regs[spm_model_addr(m, i, r)] = 0;
		m->regs[spm_model_addr(m, i, SPM_R_MC_CNTL)] =
			(m->l->mc_cntl_default & ~m->l->mc_fields_mask) | m->mc_seed;
		m->regs[spm_model_addr(m, i, SPM_R_CLK_CNTL)] = m->l->clk_cntl_default;
		m->x[i].streaming = false;
		m->x[i].w.pos = 0;
		spm_model_reset_vm_locked(m, i);
	}
	spin_unlock_irqrestore(&m->lock, flags);
}

/**
 * spm_model_lose_vram - a reset lost the contents of VRAM
 * @m: the model
 *
 * What amdgpu_device_check_vram_lost() reports: every page table (VRAM
 * BOs) holds anything afterwards, here what looks like valid PTEs.
 */
void spm_model_lose_vram(struct spm_model *m)
{
	unsigned long flags;
	unsigned int i;

	spin_lock_irqsave(&m->lock, flags);
	for (i = 0; i < SPM_MODEL_MAX_PTS; i++) {
		if (!m->pts[i].live)
			continue;
		memset(m->pts[i].cpu, 0xff, m->pts[i].n * sizeof(u64));
		memset(m->pts[i].gpu, 0xff, m->pts[i].n * sizeof(u64));
	}
	spin_unlock_irqrestore(&m->lock, flags);
}

/**
 * spm_model_live_pts - page tables allocated and not freed
 * @m: the model
 *
 * Return: their number.
 */
unsigned int spm_model_live_pts(struct spm_model *m)
{
	unsigned int i, n = 0;

	for (i = 0; i < SPM_MODEL_MAX_PTS; i++)
		n += m->pts[i].live;
	return n;
}

u32 spm_model_read(struct spm_model *m, u32 xcc, enum spm_model_reg r)
{
	return spm_model_rreg_do(m, spm_model_addr(m, xcc, r) * 4, false);
}

/**
 * spm_model_reads - the driver's MMIO reads of a register, on every XCC
 * @m: the model
 * @r: the register
 *
 * Return: their number since the model was created.
 */
u64 spm_model_reads(struct spm_model *m, enum spm_model_reg r)
{
	unsigned long flags;
	unsigned int i;
	u64 n = 0;

	spin_lock_irqsave(&m->lock, flags);
	for (i = 0; i < AMDGPU_SPM_MAX_XCC; i++)
		n += m->x[i].reads[r];
	spin_unlock_irqrestore(&m->lock, flags);
	return n;
}

/**
 * spm_model_ring_base - what the ring base registers of an XCC hold
 * @m: the model
 * @xcc: logical XCC
 *
 * Return: RLC_SPM_PERFMON_RING_BASE_HI:_LO.
 */
u64 spm_model_ring_base(struct spm_model *m, u32 xcc)
{
	return (u64)spm_model_read(m, xcc, SPM_R_BASE_HI) << 32 |
	       spm_model_read(m, xcc, SPM_R_BASE_LO);
}

void spm_model_write(struct spm_model *m, u32 xcc, enum spm_model_reg r, u32 v)
{
	spm_model_wreg_do(m, spm_model_addr(m, xcc, r) * 4, v, false);
}

/**
 * spm_model_seed_mc_cntl - give the fields of RLC_SPM_MC_CNTL other than
 *	RLC_SPM_VMID a value, on every XCC and after every reset
 * @m: the model
 * @other: their value (bits outside &spm_model_layout.mc_fields_mask are
 *	ignored)
 *
 * Whatever the VBIOS or an earlier owner left there: the reset values of
 * those fields are 0 where a header gives them, so only a value that is
 * not shows a driver write that clears them (&spm_model.mc_clobbers).
 */
void spm_model_seed_mc_cntl(struct spm_model *m, u32 other)
{
	const struct spm_model_layout *l = m->l;
	unsigned long flags;
	unsigned int i;
	u32 *reg;

	spin_lock_irqsave(&m->lock, flags);
	m->mc_seed = other & l->mc_fields_mask;
	for (i = 0; i < NUM_XCC(m->adev->gfx.xcc_mask); i++) {
		reg = &m->regs[spm_model_addr(m, i, SPM_R_MC_CNTL)];
		*reg = (*reg & ~l->mc_fields_mask) | m->mc_seed;
	}
	spin_unlock_irqrestore(&m->lock, flags);
}

u32 spm_model_field(struct spm_model *m, u32 xcc, enum spm_model_reg r,
		    u32 mask, u32 shift)
{
	unsigned long flags;
	u32 v;

	spin_lock_irqsave(&m->lock, flags);
	v = spm_model_fld(m, xcc, r, mask, shift);
	spin_unlock_irqrestore(&m->lock, flags);
	return v;
}

/**
 * spm_model_find_write - the first logged write of a register at or after
 * an index
 * @m: the model
 * @xcc: logical XCC
 * @r: register
 * @from: log index to start at
 *
 * Return: the log index, or -1.
 */
int spm_model_find_write(struct spm_model *m, u32 xcc, enum spm_model_reg r,
			 int from)
{
	unsigned int i;

	for (i = max(from, 0); i < m->nlog; i++)
		if (m->log[i].xcc == xcc && m->log[i].reg == r)
			return i;
	return -1;
}

/* ---- setup ---- */

/**
 * spm_model_gart_disable - what gfxhub's GART disable does at hw_fini
 * @m: the model
 *
 * gfxhub_v1_0/v1_2_gart_disable(): every context of every XCC disabled,
 * the L1 TLB and the L2 cache off (nothing cached is used any more).
 */
void spm_model_gart_disable(struct spm_model *m)
{
	const struct spm_model_layout *l = m->l;
	u32 stride = l->off[SPM_R_VM_CNTL1] - l->off[SPM_R_VM_CNTL];
	unsigned long flags;
	unsigned int i, vmid;

	spin_lock_irqsave(&m->lock, flags);
	for (i = 0; i < NUM_XCC(m->adev->gfx.xcc_mask); i++) {
		for (vmid = 0; vmid < AMDGPU_NUM_VMID; vmid++)
			m->regs[spm_model_addr(m, i, SPM_R_VM_CNTL) + vmid * stride] = 0;
		spm_model_tlb_drop(&m->x[i]);
	}
	spin_unlock_irqrestore(&m->lock, flags);
}

static void spm_model_fini(void *data)
{
	struct spm_model *m = data;
	unsigned int i;
	bool parked = m->adev->spm.park.priv;

	amdgpu_spm_fini(m->adev);
	/* At unload the empty table stays: the RLC still runs on it */
	KUNIT_EXPECT_EQ(m->test, !!m->adev->spm.park.priv, parked);
	KUNIT_EXPECT_EQ(m->test, spm_model_live_pts(m), parked ? 1 : 0);
	/* hw_fini: gfxhub's GART disable turns every context off */
	spm_model_gart_disable(m);
	/* What the gfx IP's sw_fini does, after hw_fini */
	amdgpu_spm_vmid_fini(m->adev);
	/* Nothing the driver freed was still in the GPU's reach */
	KUNIT_EXPECT_EQ(m->test, m->free_violations, 0);
	/* The driver changed no field of RLC_SPM_MC_CNTL but the VMID */
	KUNIT_EXPECT_EQ(m->test, m->mc_clobbers, 0);
	/* The driver freed every page table it allocated, the empty one too */
	KUNIT_EXPECT_EQ(m->test, spm_model_live_pts(m), 0);
	for (i = 0; i < SPM_MODEL_MAX_RINGS; i++) {
		vfree(m->rings[i].cpu);
		kvfree(m->rings[i].pages);
	}
	for (i = 0; i < SPM_MODEL_MAX_PTS; i++) {
		vfree(m->pts[i].cpu);
		vfree(m->pts[i].gpu);
	}
	for (i = 0; i < AMDGPU_SPM_MAX_XCC; i++)
		kfree(m->x[i].tlb);
	if (m->adev->reset_domain)
		amdgpu_reset_put_reset_domain(m->adev->reset_domain);
	m->adev->reset_domain = NULL;
	spm_model_cur = NULL;
	vfree(m->regs);
}

/*
 * The readings the streaming cases run under. Each value of each unknown
 * is in at least one of them, and the first is what the model does
 * unless told otherwise. The ring-mode unknowns (stall_at, thr_unit)
 * matter only in mode 3, so every reading but the first two selects it.
 */
const struct spm_model_reading spm_model_readings[] = {
	{ "stall-short thr-sample wptr-sample zero-none mode0",
	  false, 0, false, false, false },
	{ "stall-short thr-sample wptr-line zero-va0 mode0",
	  false, 0, true, true, false },
	{ "stall-at thr-line wptr-line zero-va0 mode3",
	  true, AMDGPU_SPM_LINE_SIZE, true, true, true },
	{ "stall-short thr-byte wptr-sample zero-none mode3",
	  false, 1, false, false, true },
	{ "stall-at thr-sample wptr-sample zero-none mode3",
	  true, 0, false, false, true },
	{ "stall-short thr-line wptr-line zero-none mode3",
	  false, AMDGPU_SPM_LINE_SIZE, true, false, true },
	{}
};

/**
 * spm_model_reading_gen - KUnit parameter generator over the readings
 * @prev: the reading of the previous run, or NULL
 * @desc: where its name goes
 *
 * Return: the next reading, or NULL after the last.
 */
const void *spm_model_reading_gen(const void *prev, char *desc)
{
	const struct spm_model_reading *rd = prev;

	rd = rd ? rd + 1 : spm_model_readings;
	if (!rd->name)
		return NULL;
	strscpy(desc, rd->name, KUNIT_PARAM_DESC_SIZE);
	return rd;
}

/**
 * spm_model_set_reading - choose the reading of the unknowns
 * @m: the model
 * @rd: the reading; NULL for the first
 */
void spm_model_set_reading(struct spm_model *m, const struct spm_model_reading *rd)
{
	unsigned long flags;

	spin_lock_irqsave(&m->lock, flags);
	m->rd = rd ? rd : &spm_model_readings[0];
	spin_unlock_irqrestore(&m->lock, flags);
}

/**
 * spm_model_create - a fake device with the model behind its registers
 * @test: the test
 * @l: the GC version's registers
 * @nxcc: XCCs (1 for GC 9.4.1/9.4.2)
 *
 * Sets up a fake &amdgpu_device with a register file, a real reset domain,
 * the IP versions and XCCs of the part, and runs the real early_init of its
 * GFX IP block, which installs the SPM hooks (it fails afterwards to load
 * firmware, which the tests do not need). Rings come from the model.
 *
 * Return: the model; freed when @test ends.
 */
struct spm_model *spm_model_create(struct kunit *test,
				   const struct spm_model_layout *l,
				   unsigned int nxcc)
{
	struct amdgpu_ip_block ipb = {};
	struct amdgpu_device *adev;
	struct spm_model *m;
	unsigned int i, j;

	m = kunit_kzalloc(test, sizeof(*m), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, m);
	m->test = test;
	m->regs = vzalloc(SPM_MODEL_NREGS * sizeof(u32));
	KUNIT_ASSERT_NOT_NULL(test, m->regs);
	m->nregs = SPM_MODEL_NREGS;
	m->l = l;
	m->rd = &spm_model_readings[0];
	m->fail_alloc = -1;
	m->next_dma = SPM_MODEL_DMA_BASE;
	spin_lock_init(&m->lock);
	for (i = 0; i < AMDGPU_SPM_MAX_XCC; i++) {
		m->x[i].ring = -1;
		m->x[i].tlb_pt = -1;
	}

	adev = amdgpu_kunit_helper_alloc_device(test);
	m->adev = adev;
	adev->pdev = kunit_kzalloc(test, sizeof(*adev->pdev), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, adev->pdev);
	adev->rmmio_size = 0;
	adev->pcie_rreg = spm_model_rreg;
	adev->pcie_wreg = spm_model_wreg;
	for (i = 0; i < HWIP_MAX_INSTANCE; i++) {
		for (j = 0; j < 8; j++)
			gc_base[i][j] = i * SPM_MODEL_INST_DW + (j ? SPM_MODEL_SEG1 : 0);
		adev->reg_offset[GC_HWIP][i] = gc_base[i];
	}
	for (j = 0; j < 8; j++)
		other_base[j] = SPM_MODEL_OTHER;
	for (i = 0; i < MAX_HWIP; i++)
		for (j = 0; j < HWIP_MAX_INSTANCE; j++)
			if (i != GC_HWIP)
				adev->reg_offset[i][j] = other_base;
	adev->ip_map.logical_to_dev_inst = spm_model_l2d;
	adev->ip_map.logical_to_dev_mask = spm_model_l2d_mask;
	adev->ip_versions[GC_HWIP][0] = l->ip_version;
	adev->gfx.xcc_mask = GENMASK(nxcc - 1, 0);
	/* gmc_v9_0_sw_init(): KFD's VMIDs start at 3 on GC 9.4.1-9.4.4 */
	adev->vm_manager.first_kfd_vmid = 3;
	adev->gmc.gmc_funcs = &spm_model_gmc_funcs;
	/*
	 * gmc_v9_0_sw_init(): GC 9.4.3 (as 9.4.4 and 9.5.0) needs a second
	 * heavyweight flush, for a race of the TLB with memory accesses
	 */
	adev->gmc.flush_tlb_needs_extra_type_2 =
		l->ip_version == IP_VERSION(9, 4, 3);
	adev->asic_funcs = &spm_model_asic_funcs;
	/* gmc_v9_0's default GART size for these parts */
	adev->gmc.gart_size = SZ_512M;
	adev->firmware.load_type = AMDGPU_FW_LOAD_PSP;
	mutex_init(&adev->srbm_mutex);
	mutex_init(&adev->grbm_idx_mutex);
	mutex_init(&adev->gfx.gfx_off_mutex);
	adev->reset_domain = amdgpu_reset_create_reset_domain(SINGLE_DEVICE, "spm-test");
	KUNIT_ASSERT_NOT_NULL(test, adev->reset_domain);
	spm_model_cur = m;
	/* Before the teardown action: cleanup runs last first */
	kunit_activate_static_stub(test, amdgpu_spm_ring_alloc_gtt, spm_model_ring_alloc);
	kunit_activate_static_stub(test, amdgpu_spm_ring_free_gtt, spm_model_ring_free);
	kunit_activate_static_stub(test, amdgpu_spm_pt_alloc_vram, spm_model_pt_alloc);
	kunit_activate_static_stub(test, amdgpu_spm_pt_free_vram, spm_model_pt_free);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, spm_model_fini, m), 0);

	/* The real IP's early_init installs the SPM hooks */
	ipb.adev = adev;
	ipb.version = l->ip_block;
	l->ip_block->funcs->early_init(&ipb);
	/* Power-on reset */
	spm_model_reset(m);
	/*
	 * The gfx IP's sw_init: the SPM VMID's empty table, then RLC init
	 * (where it only programs SPM_VMID); then the real RLC resume, as
	 * hw_init runs it
	 */
	KUNIT_ASSERT_EQ(test, amdgpu_spm_vmid_init(adev), 0);
	if (l->rlc_init)
		KUNIT_ASSERT_EQ(test, adev->gfx.rlc.funcs->init(adev), 0);
	KUNIT_ASSERT_EQ(test, adev->gfx.rlc.funcs->resume(adev), 0);
	/* Whatever the driver parked SPM_VMID at on the way: the SPM VMID */
	for (i = 0; i < m->nlog; i++)
		if (m->log[i].reg == SPM_R_MC_CNTL)
			KUNIT_EXPECT_EQ_MSG(test, m->log[i].val & l->vmid_mask,
					    adev->spm.vmid, "load, write %u, xcc %u",
					    i, m->log[i].xcc);
	m->nlog = 0;
	return m;
}

/* ---- streaming ---- */

struct spm_model_stream {
	struct spm_model *m;
	struct kunit *test;
	u32 mask;
	u64 rate;
	u64 total;
	struct task_struct *task;
	struct completion done;
};

static int spm_model_stream_fn(void *data)
{
	struct spm_model_stream *st = data;
	u64 start = ktime_get_ns(), sent = 0;
	unsigned long x;

	/* Rings are freed through a static stub: look like the test */
	current->kunit_test = st->test;
	while (sent < st->total && !kthread_should_stop()) {
		u64 due = div64_u64((ktime_get_ns() - start) * st->rate, NSEC_PER_SEC);
		u64 owed = min_t(u64, due > sent ? due - sent : 0, st->total - sent);
		u32 cap = amdgpu_spm_ring_size / 16, unit, chunk;

		/*
		 * The RLC streams smoothly: never more than 1/16 of a ring at
		 * once. A thread that fell behind stays behind (the rate it
		 * reached is what the test reports).
		 */
		if (owed > cap) {
			start += div64_u64((owed - cap) * NSEC_PER_SEC, st->rate);
			owed = cap;
		}
		/*
		 * Whole samples only (spm_model_emit() rounds up to one): what
		 * is short of a sample stays owed, else small chunks at a low
		 * rate would stream much faster than asked.
		 */
		unit = max(spm_model_read(st->m, __ffs(st->mask), SPM_R_SEGMENT_SIZE) &
			   st->m->l->lines_mask, 1u) * AMDGPU_SPM_LINE_SIZE;
		chunk = owed == st->total - sent ? owed : rounddown(owed, unit);
		if (chunk) {
			for_each_set_bit(x, (unsigned long *)&st->mask, AMDGPU_SPM_MAX_XCC)
				spm_model_emit(st->m, x, chunk);
			sent += chunk;
		}
		usleep_range(500, 1000);
	}
	complete(&st->done);
	while (!kthread_should_stop())
		schedule_timeout_interruptible(1);
	return 0;
}

static void spm_model_stream_stop(void *data)
{
	struct spm_model_stream *st = data;

	kthread_stop(st->task);
}

/**
 * spm_model_stream_start - stream from a thread
 * @test: the test
 * @m: the model
 * @xcc_mask: the XCCs that stream
 * @bytes_per_sec: the rate of each XCC
 * @total: bytes each XCC streams
 *
 * Return: the stream; stopped when @test ends.
 */
struct spm_model_stream *spm_model_stream_start(struct kunit *test,
						struct spm_model *m, u32 xcc_mask,
						u64 bytes_per_sec, u64 total)
{
	struct spm_model_stream *st;

	st = kunit_kzalloc(test, sizeof(*st), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, st);
	st->m = m;
	st->test = test;
	st->mask = xcc_mask;
	st->rate = bytes_per_sec;
	st->total = total;
	init_completion(&st->done);
	st->task = kthread_run(spm_model_stream_fn, st, "spm-model");
	KUNIT_ASSERT_FALSE(test, IS_ERR(st->task));
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, spm_model_stream_stop, st), 0);
	return st;
}

/**
 * spm_model_stream_wait - wait until a stream has sent everything
 * @st: the stream
 */
void spm_model_stream_wait(struct spm_model_stream *st)
{
	wait_for_completion(&st->done);
}

/**
 * spm_model_stream_done - whether a stream has sent everything
 * @st: the stream
 *
 * Return: true once it has.
 */
bool spm_model_stream_done(struct spm_model_stream *st)
{
	return completion_done(&st->done);
}

/**
 * spm_model_check_share - check the data of a share in a user buffer
 * @test: the test
 * @buf: user address of the buffer
 * @off: offset of the share (of its header)
 * @bytes: data bytes the header says it holds
 * @xcc: the XCC whose lines it must hold
 * @c: running state, carried from one buffer to the next of the same XCC
 */
void spm_model_check_share(struct kunit *test, unsigned long buf, u32 off,
			   u32 bytes, u32 xcc, struct spm_model_check *c)
{
	u8 *tmp;
	u32 i;

	if (!bytes)
		return;
	tmp = kvmalloc(bytes, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, tmp);
	KUNIT_ASSERT_EQ(test, copy_from_user(tmp, (void __user *)(buf + off +
				sizeof(struct drm_amdgpu_spm_buffer_header)), bytes), 0);
	for (i = 0; i + AMDGPU_SPM_LINE_SIZE <= bytes; i += AMDGPU_SPM_LINE_SIZE) {
		u64 seq;

		if (!spm_rlc_line_ok(tmp + i, xcc, &seq)) {
			c->bad = true;
			break;
		}
		if (seq < c->next)
			c->order = true;
		else
			c->gaps += seq - c->next;
		c->next = seq + 1;
		c->lines++;
	}
	kvfree(tmp);
}

/* ---- a test's environment ---- */

static void spm_env_restore(void *data)
{
	struct spm_env *e = data;

	amdgpu_spm_paranoid = e->saved_paranoid;
	amdgpu_spm_ring_size = e->saved_ring;
	amdgpu_spm_backstop_ms = e->saved_backstop;
	amdgpu_spm_release_ms = e->saved_release;
}

/**
 * spm_env_create - a model and two files of partition 0
 * @test: the test
 * @l: the GC version
 * @nxcc: XCCs
 * @ring_size: amdgpu.spm_ring_size for the test
 *
 * Module parameters are restored when @test ends.
 *
 * Return: the environment.
 */
struct spm_env *spm_env_create(struct kunit *test,
			       const struct spm_model_layout *l,
			       unsigned int nxcc, u32 ring_size)
{
	struct spm_env *e;

	e = kunit_kzalloc(test, sizeof(*e), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, e);
	e->saved_paranoid = amdgpu_spm_paranoid;
	e->saved_ring = amdgpu_spm_ring_size;
	e->saved_backstop = amdgpu_spm_backstop_ms;
	e->saved_release = amdgpu_spm_release_ms;
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, spm_env_restore, e), 0);
	amdgpu_spm_ring_size = ring_size;

	e->m = spm_model_create(test, l, nxcc);
	e->adev = e->m->adev;
	e->a = amdgpu_kunit_helper_alloc_file(test, e->adev, 0);
	e->b = amdgpu_kunit_helper_alloc_file(test, e->adev, 0);
	return e;
}

int spm_env_op(struct spm_env *e, struct drm_file *f, u32 op)
{
	struct drm_amdgpu_spm_args args = { .op = op };

	return amdgpu_spm_ioctl(e->adev, f, &args);
}

int spm_env_set_buf(struct spm_env *e, struct drm_file *f, unsigned long buf,
		    u32 size, u32 timeout, struct drm_amdgpu_spm_args *out)
{
	struct drm_amdgpu_spm_args args = {
		.op = AMDGPU_SPM_OP_SET_DEST_BUF,
		.dest_buf = buf,
		.buf_size = size,
		.timeout = timeout,
	};
	int r;

	r = amdgpu_spm_ioctl(e->adev, f, &args);
	if (out)
		*out = args;
	return r;
}

/*
 * Splits the device into two partitions, of the XCCs in @xccs0 and
 * @xccs1, with a partition manager of its own (the test clears
 * adev->xcp_mgr before the environment goes).
 */
void spm_env_two_partitions(struct kunit *test, struct spm_env *e,
			    u32 xccs0, u32 xccs1)
{
	struct amdgpu_xcp_mgr *xm;
	int i;

	xm = kunit_kzalloc(test, sizeof(*xm), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, xm);
	mutex_init(&xm->xcp_lock);
	xm->adev = e->adev;
	xm->num_xcps = 2;
	for (i = 0; i < 2; i++) {
		xm->xcp[i].id = i;
		xm->xcp[i].valid = true;
		xm->xcp[i].ip[AMDGPU_XCP_GFX].valid = true;
		xm->xcp[i].ip[AMDGPU_XCP_GFX].inst_mask = i ? xccs1 : xccs0;
	}
	e->adev->xcp_mgr = xm;
}

unsigned long spm_env_user_buf(struct kunit *test, u32 size, unsigned long flags)
{
	unsigned long addr;

	addr = kunit_vm_mmap(test, NULL, 0, size, PROT_READ | PROT_WRITE, flags, 0);
	KUNIT_ASSERT_FALSE(test, !addr || IS_ERR_VALUE(addr));
	return addr;
}

void spm_env_read_header(struct kunit *test, unsigned long buf, u32 off,
			 struct drm_amdgpu_spm_buffer_header *hdr)
{
	KUNIT_ASSERT_EQ(test, copy_from_user(hdr, (void __user *)(buf + off),
					     sizeof(*hdr)), 0);
}

void spm_env_stats(struct kunit *test, struct spm_env *e, u32 xcp,
		   struct amdgpu_spm_stats *st)
{
	KUNIT_ASSERT_EQ(test, amdgpu_spm_get_stats(e->adev, xcp, st), 0);
}

/*
 * Wait until the drain worker of partition @xcp has run @passes more
 * times: what a case that then checks that the worker did nothing (or did
 * something) waits for, instead of a sleep that a slow host makes vacuous.
 */
bool spm_env_wait_passes(struct kunit *test, struct spm_env *e, u32 xcp,
			 unsigned int passes, unsigned int ms)
{
	unsigned long end = jiffies + msecs_to_jiffies(ms);
	struct amdgpu_spm_stats st;
	u64 from;

	spm_env_stats(test, e, xcp, &st);
	from = st.wakeups;
	do {
		usleep_range(1000, 2000);
		spm_env_stats(test, e, xcp, &st);
		if (st.wakeups >= from + passes)
			return true;
	} while (time_before(jiffies, end));
	return false;
}

/* Wait until the header at @off says @bytes or more */
bool spm_env_wait_header(struct kunit *test, unsigned long buf, u32 off,
			 u32 bytes, unsigned int ms)
{
	struct drm_amdgpu_spm_buffer_header hdr;
	unsigned long end = jiffies + msecs_to_jiffies(ms);

	do {
		spm_env_read_header(test, buf, off, &hdr);
		if (hdr.bytes_copied >= bytes)
			return true;
		usleep_range(2000, 5000);
	} while (time_before(jiffies, end));
	return false;
}
