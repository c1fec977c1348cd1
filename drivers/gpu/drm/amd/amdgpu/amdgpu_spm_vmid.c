// SPDX-License-Identifier: MIT
/*
 * Copyright 2026 The amdgpu profiler series authors
 *
 * Permission is hereby granted, free of charge, to any person obtaining a
 * copy of this software and associated documentation files (the "Software"),
 * to deal in the Software without restriction, including without limitation
 * the rights to use, copy, modify, merge, publish, distribute, sublicense,
 * and/or sell copies of the Software, and to permit persons to whom the
 * Software is furnished to do so, subject to the following conditions:
 *
 * The above copyright notice and this permission notice shall be included in
 * all copies or substantial portions of the Software.
 *
 * THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR
 * IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY,
 * FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT.  IN NO EVENT SHALL
 * THE COPYRIGHT HOLDER(S) OR AUTHOR(S) BE LIABLE FOR ANY CLAIM, DAMAGES OR
 * OTHER LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR OTHERWISE,
 * ARISING FROM, OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR
 * OTHER DEALINGS IN THE SOFTWARE.
 */

/**
 * DOC: SPM VMID
 *
 * The RLC writes SPM samples to RLC_SPM_PERFMON_RING_BASE through the VM
 * context that RLC_SPM_MC_CNTL.RLC_SPM_VMID selects. The ring base and size
 * are UCONFIG registers that a user command stream may rewrite, so what the
 * RLC can reach through that VMID is exactly what its page table maps. The
 * SPM manager therefore gives the RLC a VMID of its own whose page table
 * maps the rings of one acquisition and nothing else.
 *
 * All of that rests on one thing no public source settles, and only a GPU
 * or AMD's register-protection documentation can: whether a user command
 * stream can write RLC_SPM_MC_CNTL itself. It is 0x4c71 in GC segment 1
 * (gc_9_0_offset.h, which GC 9.4.1 uses, gc_9_4_2_offset.h and
 * gc_9_4_3_offset.h), dword 0xEC71 where that segment starts at 0xA000
 * (vega10_ip_offset.h; GC 9.4.3 takes its bases from IP discovery). That
 * is inside the UCONFIG range of Mesa's ac sid.h (bytes 0x30000 to
 * 0x40000), though past the end that soc15d.h gives SET_UCONFIG_REG
 * (0xc400). Whether the CP takes it from a user stream, as it may take the
 * ring registers, is that question. If a stream can write it, it can point
 * the RLC at its own VMID, at VMID 0 (the GART) or at any VMID, and this
 * isolation is void: the RLC then reaches whatever that VM maps. The
 * read-back below only notices afterwards. What would then be needed is
 * for the CP to refuse that register from user streams (a
 * privileged-register list or CP register protection covering it), which
 * nothing in the base tree shows for GC 9.4.x.
 *
 * - **The VMID** is the first one that amdgpu gives KFD,
 *   &amdgpu_vm_manager.first_kfd_vmid (3 on GC 9.4.x). amdgpu_ids manages
 *   only the VMIDs below it (amdgpu_vmid_mgr_init() sets num_ids to it on
 *   every hub), so no graphics job ever gets it, and
 *   amdgpu_amdkfd_device_init() leaves it out of KFD's compute VMID bitmap
 *   (amdgpu_spm_kfd_vmid_bitmap()), which is the set KFD assigns from
 *   without HWS and that it hands the scheduler firmware with HWS, at every
 *   (re)initialisation of KFD. It is reserved from driver load to unload,
 *   whether anybody profiles or not. It costs KFD one of 13 VMIDs on GC
 *   9.4.x, and nothing in CPX mode of GC 9.4.3/9.4.4 with several KFD
 *   nodes, where kgd2kfd_device_init() does not use the first one anyway.
 *   amdgpu_vmid_alloc_reserved() is not used: it takes one VMID per hub
 *   out of amdgpu_ids' round robin and shares it, use-counted, between
 *   every VM that reserves (%AMDGPU_VM_OP_RESERVE_VMID, and process
 *   isolation), and amdgpu_vmid_grab_reserved() hands it to the job of
 *   whichever reserving VM runs next, whose flush points the context at
 *   that VM's page directory (amdgpu_ids.c). A kernel page table in that
 *   context would be replaced by the next reserving VM's flush.
 * - **The page table** of an acquisition is flat (PAGE_TABLE_DEPTH 0, the
 *   way the GART's context 0 is), one PTE per GPU page from
 *   %AMDGPU_SPM_VA_BASE, in a VRAM kernel BO like the GART table. The drain
 *   worker clears it and maps each ring of the acquisition there with
 *   amdgpu_gart_map() and the PTE flags that the GART gives the same BO
 *   (amdgpu_ttm_tt_pte_flags()), one unmapped page after each ring, so that
 *   a spill or a base moved by a page faults instead of reaching the next
 *   ring; nothing else is ever mapped. It is the kernel's table, and the
 *   VMID is one per device, the same whoever profiles: what the RLC can
 *   reach through it is the rings of the current acquisition, kernel
 *   memory that holds only SPM samples of that acquisition's partition,
 *   and no page of any process. One table maps the rings of every XCC of
 *   the partition, and every XCC's context points at it, so a ring base
 *   rewritten on one XCC can aim its RLC at another XCC's ring. That is
 *   accepted: both rings belong to the same acquisition and hold only
 *   that owner's samples, so the worst is a share that carries another
 *   XCC's samples, or a mix, for that owner only, until the read-back
 *   below ends the acquisition with -EIO. Each XCC's GFXHUB context of the
 *   VMID gets the table's base, start and end, no retry on faults
 *   (gfxhub_v1_0 and gfxhub_v1_2 enable retry faults on GC 9.4.2-9.4.4,
 *   and a retry fault of a context without a PASID is never resolved) and
 *   the fault defaults that gfxhub set, then the HDP and the VMID's TLB on
 *   that hub are flushed (heavyweight).
 * - **Parked**, outside an acquisition, the context of the VMID on every
 *   XCC points at a one-page table of the device with no valid PTE, and
 *   SPM_VMID at the VMID. The table is allocated by the gfx IP's sw_init
 *   (amdgpu_spm_vmid_init()), before anything of the driver writes
 *   SPM_VMID; if it cannot be, sw_init fails, and the device with it; if
 *   sw_init fails later, it frees the table again. RLC resume, for each
 *   XCC in turn: clears the table's PTEs (a VRAM loss may have changed
 *   them), points that XCC's GFXHUB context of the VMID at the table
 *   (base, start, end, enabled, flat, faults not retried; gfxhub's resume
 *   has just reset every context), flushes the HDP and that hub's TLB for
 *   the VMID, and writes SPM_VMID = the VMID; then it bumps the hardware
 *   generation (amdgpu_spm_hw_lost()), and the worker of an acquisition,
 *   on its next pass, drains what the rings hold, maps its rings in its
 *   own table again and points the contexts back at it. Release parks
 *   every XCC of the acquisition the same way. amdgpu_vm_flush() lets
 *   jobs program SPM_VMID:
 *   those of the reserved VMID every time, and after a GPU reset the first
 *   job of every VMID, kernel jobs (VMID 0) included. On an XCC where no
 *   graphics client reserved SPM (%AMDGPU_VM_OP_RESERVE_VMID) they program
 *   the SPM VMID instead, so that a profiler's stream cannot write into
 *   the VM that amdgpu_ids happens to have there, nor into the GART.
 *   Where one did, the jobs of the reserved VMID select it, as before the
 *   manager, and other jobs leave it; when the last such client goes, the
 *   XCC is parked again (amdgpu_spm_gfx_vmid_release()). So every value
 *   the driver writes to SPM_VMID, from sw_init on, is the SPM VMID or,
 *   only on an XCC where a graphics client holds a reservation for SPM,
 *   amdgpu_ids' reserved VMID: never 0 (the GART) and never a KFD VMID.
 *   The reserved VMID is one per hub, shared by every VM that reserves
 *   (process isolation included), and its context holds the page
 *   directory of whichever reserving VM's job flushed last, which may be
 *   another process's VM: that is graphics SPM as it was before the
 *   manager, which the manager leaves alone. On devices without the
 *   manager, and after amdgpu_spm_vmid_fini() at sw_fini, the park VMID
 *   is %AMDGPU_SPM_VMID_LEGACY_PARK, as before the manager.
 * - **Writes in flight.** The manager writes SPM_VMID, the context and
 *   the ring of an XCC it owns only after stopping that XCC's SPM
 *   (CP_PERFMON_CNTL, read back). No register tells when the RLC's last
 *   sample write has left it; a write it had already translated goes
 *   where the old context led, which until release is the same ring.
 *   Whether the heavyweight TLB flush also waits for writes already
 *   translated is the hardware's; release relies on it as KFD does before
 *   it frees memory. On XCCs the manager does not own, jobs and the end
 *   of a graphics reservation change SPM_VMID while a graphics client's
 *   SPM may run, as before the manager; that client's writes in flight
 *   go through whichever VMID they were translated with.
 * - **Release** stops the RLC, points each context at the empty table and
 *   flushes, and only then are the rings and the acquisition's table
 *   freed (amdgpu_spm.c). Pointing the context elsewhere is what clearing
 *   the acquisition's PTEs would achieve: once the flush is done, no
 *   translation of the SPM VMID can lead to the rings (the context walks
 *   only the empty table, and the TLB holds nothing of the old one), so
 *   the old table is not cleared before it is freed. A flush during which
 *   a reset was pending may not have happened (amdgpu_spm_vmid_use()):
 *   then nothing is freed, the state counts as lost, and the worker
 *   releases again once the reset is over. If the worker cannot reach
 *   the hardware within amdgpu_spm_release_ms (a resume that failed
 *   leaves the device suspended), release ends without freeing: the
 *   rings and table stay allocated until the gfx IP's sw_fini, after
 *   hw_fini disabled the contexts (amdgpu_spm_free_leaked()).
 *
 * The kernel writes RLC_SPM_MC_CNTL (amdgpu_vm_flush() through
 * update_spm_vmid, RLC resume and the manager), changing only its VMID
 * field. Whether a command stream can write it too is the open question
 * above; if one can, the manager's read-back of the ring registers and
 * SPM_VMID, on a worker pass at most every 10 ms (every
 * amdgpu.spm_backstop_ms while nothing streams), sees the change and ends
 * the acquisition's streaming with -EIO, after the RLC may already have
 * written through the other VMID. A write that faults (the page is not
 * mapped, or outside the context's range) goes, with the fault defaults
 * gfxhub sets while amdgpu.vm_fault_stop is 0 (the default), to
 * VM_L2_PROTECTION_FAULT_DEFAULT_ADDR, which gfxhub points at
 * adev->dummy_page_addr: TTM's global dummy read page, DMA-mapped by
 * amdgpu_gart_dummy_page_init(), where every faulting GPU write of the
 * device lands (upstream, for any VMID) and which unbound GART entries
 * point at too. SPM samples written there are not a process's memory but
 * are readable wherever that page is read. That a faulting write goes to
 * the default address rather than being dropped, and whether a fault
 * stalls the RLC, is the hardware's; the model counts a fault and writes
 * nothing.
 */

#include <linux/io.h>
#include <linux/rwsem.h>

#include <kunit/static_stub.h>

#include "amdgpu.h"
#include "amdgpu_gart.h"
#include "amdgpu_reset.h"
#include "amdgpu_spm.h"

/**
 * amdgpu_spm_park_vmid - the SPM_VMID that RLC init and resume program
 * @adev: the device
 *
 * Return: the SPM VMID on devices with the SPM manager, from the gfx IP's
 * sw_init (amdgpu_spm_vmid_init()) to its sw_fini, else
 * %AMDGPU_SPM_VMID_LEGACY_PARK, what RLC init wrote before the manager.
 */
u32 amdgpu_spm_park_vmid(struct amdgpu_device *adev)
{
	struct amdgpu_spm *spm = &adev->spm;

	return spm->funcs && spm->vmid && spm->park.priv ?
	       spm->vmid : AMDGPU_SPM_VMID_LEGACY_PARK;
}

/**
 * amdgpu_spm_job_vmid - the SPM_VMID a job's VM flush programs on an XCC
 * @adev: the device
 * @xcc: logical XCC of the job's ring
 * @vmid: in: the job's VMID; out: what to program
 *
 * For &amdgpu_rlc_funcs.update_spm_vmid, between
 * amdgpu_spm_vmid_write_begin() and amdgpu_spm_vmid_write_end(), which
 * keep the XCCs that the profiler owns out. amdgpu_vm_flush() calls it for
 * every job of the reserved VMID (amdgpu_vmid_grab_reserved(), which
 * process isolation uses too) and, after a GPU reset, for the first job of
 * every VMID: kernel jobs come with VMID 0, the GART. On devices with the
 * SPM manager only a graphics client's reservation for SPM on @xcc
 * (amdgpu_spm_gfx_vmid_reserve()) lets a job select its VMID, and only the
 * reserved VMID of @xcc's GFXHUB; without one, the XCC stays parked. The
 * reserved VMID is read without amdgpu_ids' lock: it changes only while
 * no client holds a reservation, and then the XCC is parked anyway.
 *
 * Return: true if SPM_VMID of @xcc is to be programmed with *@vmid (the
 * job's VMID, or amdgpu_spm_park_vmid()); false to leave it as it is (a
 * graphics client's reservation holds it, and this is another VMID).
 */
bool amdgpu_spm_job_vmid(struct amdgpu_device *adev, u32 xcc, u32 *vmid)
{
	struct amdgpu_vmid_mgr *id_mgr;
	struct amdgpu_vmid *reserved;

	if (!adev->spm.funcs)
		return true;
	if (xcc >= AMDGPU_SPM_MAX_XCC || !READ_ONCE(adev->spm.gfx_users[xcc])) {
		*vmid = amdgpu_spm_park_vmid(adev);
		return true;
	}
	id_mgr = &adev->vm_manager.id_mgr[AMDGPU_GFXHUB(xcc)];
	reserved = READ_ONCE(id_mgr->reserved);
	return *vmid && reserved && *vmid == reserved - id_mgr->ids;
}

/**
 * amdgpu_spm_kfd_vmid_bitmap - KFD's compute VMIDs, without the SPM VMID
 * @adev: the device
 * @bitmap: the VMIDs amdgpu would give KFD
 *
 * Called by amdgpu_amdkfd_device_init() for the bitmap KFD and its
 * scheduler firmware assign compute VMIDs from.
 *
 * Return: @bitmap without the SPM VMID on devices with the SPM manager.
 */
u32 amdgpu_spm_kfd_vmid_bitmap(struct amdgpu_device *adev, u32 bitmap)
{
	amdgpu_spm_vmid_setup(adev);
	if (!adev->spm.vmid)
		return bitmap;
	return bitmap & ~BIT(adev->spm.vmid);
}

/**
 * amdgpu_spm_vmid_setup - choose the SPM VMID
 * @adev: the device
 *
 * Called once the VM manager knows its VMID split: gmc's sw_init sets it,
 * before the gfx IP's sw_init calls amdgpu_spm_vmid_init(); KFD starts
 * only after that.
 */
void amdgpu_spm_vmid_setup(struct amdgpu_device *adev)
{
	u32 vmid = adev->vm_manager.first_kfd_vmid;

	if (!adev->spm.funcs || adev->spm.vmid)
		return;
	/* amdgpu_ids below it, KFD from it on: there must be both */
	if (vmid < 1 || vmid >= AMDGPU_NUM_VMID - 1) {
		dev_warn(adev->dev, "SPM: no VMID for the profiler (first KFD VMID %u)\n",
			 vmid);
		return;
	}
	adev->spm.vmid = vmid;
}

/**
 * amdgpu_spm_vmid_init - choose the SPM VMID and allocate its empty table
 * @adev: the device
 *
 * Called from the gfx IP's sw_init, before anything of the driver writes
 * SPM_VMID (gfx_v9_4_3's RLC init does, at sw_init), so that RLC init and
 * resume always park it on the SPM VMID. Nothing on devices without the
 * SPM manager. Where amdgpu_ids and KFD leave no VMID to take (never on GC
 * 9.4.x, where the first KFD VMID is 3), the profiler is not available
 * and SPM_VMID is parked at %AMDGPU_SPM_VMID_LEGACY_PARK, as without the
 * manager.
 *
 * Return: 0, or a negative errno if the empty table cannot be allocated:
 * the IP's sw_init then fails, rather than park SPM_VMID elsewhere.
 */
int amdgpu_spm_vmid_init(struct amdgpu_device *adev)
{
	struct amdgpu_spm *spm = &adev->spm;
	int r;

	amdgpu_spm_vmid_setup(adev);
	if (!spm->funcs || !spm->vmid || spm->park.priv)
		return 0;
	r = amdgpu_spm_pt_init(adev, &spm->park, 1);
	if (r) {
		dev_err(adev->dev, "SPM: no memory for the empty page table (%d)\n", r);
		return r;
	}
	/* Never walked before RLC resume clears it again (VRAM not cleared) */
	amdgpu_spm_pt_clear(adev, &spm->park);
	return 0;
}

/*
 * Make the table's PTEs visible to the GPU, then drop what the TLB holds:
 * a heavyweight flush (type 2), as KFD flushes before it frees memory a
 * TLB may still map (kfd_flush_tlb_after_unmap()). Returns false if the
 * flush may not have happened: gmc_v9_0_flush_gpu_tlb() sends it through
 * the KIQ once that runs, and amdgpu_gmc_fw_reg_write_reg_wait() stops
 * waiting for the KIQ, with the invalidation perhaps not done, when a
 * reset is pending (amdgpu_reset_pending(): a writer waits for the reset
 * domain's semaphore). Checked after the flushes, so that a reset that
 * began waiting during them counts.
 */
static bool spm_vmid_flush(struct amdgpu_device *adev, u32 xcc)
{
	/*
	 * Not amdgpu_gmc_flush_gpu_tlb(): the callers hold the reset
	 * domain's semaphore, or are the reset, and that one try-locks it
	 * and skips the flush while a reset waits. For a VMID other than 0
	 * and type 2 it does what follows, the extra flushes of the parts
	 * that need them included (gmc_v9_0.c sets type 2 for GC 9.4.3,
	 * 9.4.4 and 9.5.0).
	 */
	mb();
	amdgpu_device_flush_hdp(adev, NULL);
	if (adev->gmc.flush_tlb_needs_extra_type_2)
		adev->gmc.gmc_funcs->flush_gpu_tlb(adev, adev->spm.vmid,
						   AMDGPU_GFXHUB(xcc), 2);
	if (adev->gmc.flush_tlb_needs_extra_type_0)
		adev->gmc.gmc_funcs->flush_gpu_tlb(adev, adev->spm.vmid,
						   AMDGPU_GFXHUB(xcc), 0);
	adev->gmc.gmc_funcs->flush_gpu_tlb(adev, adev->spm.vmid,
					   AMDGPU_GFXHUB(xcc), 2);
	/*
	 * Not amdgpu_reset_pending(), which asserts the lock is held: RLC
	 * resume from suspend holds none. There the flush goes by MMIO, not
	 * the KIQ (the gfx IP's cp_compute_enable(false) cleared the KIQ's
	 * sched.ready), so no pending reset can make it bail out.
	 */
	return !rwsem_is_contended(&adev->reset_domain->sem);
}

/**
 * amdgpu_spm_vmid_use - point an XCC's context of the SPM VMID at a table
 * @adev: the device
 * @xcc: logical XCC
 * @pt: the table
 *
 * Programs the context of the SPM VMID on the GFXHUB of @xcc, then flushes
 * the HDP and that context's TLB. The caller has stopped the RLC of @xcc.
 *
 * Return: false if a reset was pending during the flush, which the KIQ
 * path then skips silently (amdgpu_gmc_fw_reg_write_reg_wait()): until a
 * later call returns true, the TLB may still hold translations of the
 * table before, and the caller must treat the state of @xcc as lost (the
 * SPM manager programs it again on its next pass, and frees nothing
 * meanwhile). True otherwise. The other ways a flush can fail without
 * telling its caller (the KIQ's fence or register wait timing out, the
 * MMIO path's "Timeout waiting for VM flush ACK") are not seen here:
 * flush_gpu_tlb() returns nothing, and they print an error.
 */
bool amdgpu_spm_vmid_use(struct amdgpu_device *adev, u32 xcc,
			 const struct amdgpu_spm_pt *pt)
{
	u64 first = AMDGPU_SPM_VA_BASE >> AMDGPU_GPU_PAGE_SHIFT;

	adev->spm.funcs->set_context(adev, xcc, adev->spm.vmid, pt->pd_addr,
				     first, first + pt->npages - 1);
	return spm_vmid_flush(adev, xcc);
}

/**
 * amdgpu_spm_vmid_park - park the SPM of an XCC, from RLC resume
 * @adev: the device
 * @xcc: logical XCC
 *
 * Points the context of the SPM VMID on @xcc at the empty table; the
 * caller then programs SPM_VMID with amdgpu_spm_park_vmid(). Also while
 * the profiler owns @xcc: the RLC was reset, and until the worker programs
 * its rings again (amdgpu_spm_hw_lost()) nothing may be reachable. The
 * empty table exists since sw_init (amdgpu_spm_vmid_init()). Whether the
 * flush was done is not looked at: RLC resume runs after a reset or a
 * power-up, whose hub TLBs hold nothing of the table before, and calls
 * amdgpu_spm_hw_lost() right after.
 *
 * Context: RLC resume, in process context; does not allocate.
 */
void amdgpu_spm_vmid_park(struct amdgpu_device *adev, u32 xcc)
{
	struct amdgpu_spm *spm = &adev->spm;

	if (!spm->funcs || !spm->vmid || !spm->park.priv)
		return;
	/* After a VRAM loss the table holds anything: clear it every time */
	amdgpu_spm_pt_clear(adev, &spm->park);
	amdgpu_spm_vmid_use(adev, xcc, &spm->park);
}

/**
 * amdgpu_spm_vmid_fini - free the empty table
 * @adev: the device
 *
 * Called from two places. From the gfx IP's sw_fini: by then hw_fini
 * stopped the RLC and the GMC's hw_fini disabled the VM contexts
 * (gfxhub's gart_disable), so no context points at the table any more;
 * earlier, at amdgpu_spm_fini(), the RLC still runs with its SPM VMID's
 * context on it. And from the gfx IP's sw_init, when it fails after
 * amdgpu_spm_vmid_init(): no context points at the table yet then. The
 * rings and tables of releases that timed out go too.
 */
void amdgpu_spm_vmid_fini(struct amdgpu_device *adev)
{
	/* What releases that timed out kept, as unreachable now */
	amdgpu_spm_free_leaked(adev);
	if (adev->spm.park.priv)
		amdgpu_spm_pt_fini(adev, &adev->spm.park);
}

/**
 * amdgpu_spm_pt_pages - pages of the table for the rings of an acquisition
 * @ring_size: bytes of each ring (a multiple of the GPU page size)
 * @num_rings: rings
 *
 * Return: one PTE per ring page and one unmapped page after each ring.
 */
u32 amdgpu_spm_pt_pages(u32 ring_size, unsigned int num_rings)
{
	return (ring_size / AMDGPU_GPU_PAGE_SIZE + 1) * num_rings;
}

/**
 * amdgpu_spm_pt_init - allocate a table
 * @adev: the device
 * @pt: filled in
 * @npages: GPU pages it covers
 *
 * What the table holds is not known (VRAM is not cleared): the users
 * clear it before a context points at it, each time, as a VRAM loss may
 * have changed it since.
 *
 * Return: 0 or a negative errno.
 */
int amdgpu_spm_pt_init(struct amdgpu_device *adev, struct amdgpu_spm_pt *pt,
		       u32 npages)
{
	int r;

	r = amdgpu_spm_pt_alloc_vram(adev, npages * sizeof(u64), pt);
	if (r)
		return r;
	pt->npages = npages;
	return 0;
}

/**
 * amdgpu_spm_pt_va - where a ring of an acquisition is in the SPM VMID
 * @index: which ring of the acquisition
 * @ring_size: bytes of each ring
 *
 * Return: its address; one unmapped page follows each ring.
 */
u64 amdgpu_spm_pt_va(unsigned int index, u32 ring_size)
{
	return AMDGPU_SPM_VA_BASE +
	       (u64)index * (ring_size + AMDGPU_GPU_PAGE_SIZE);
}

/**
 * amdgpu_spm_pt_map - map a ring in a table
 * @adev: the device
 * @pt: the table
 * @index: which ring of the acquisition
 * @ring: the ring; its size is the same for every @index
 *
 * Maps it at amdgpu_spm_pt_va(); the GPU sees it after
 * amdgpu_spm_vmid_use() flushed.
 */
void amdgpu_spm_pt_map(struct amdgpu_device *adev, struct amdgpu_spm_pt *pt,
		       unsigned int index, const struct amdgpu_spm_ring *ring)
{
	amdgpu_gart_map(adev, amdgpu_spm_pt_va(index, ring->size) - AMDGPU_SPM_VA_BASE,
			ring->size / PAGE_SIZE, ring->dma_addr, ring->pte_flags,
			pt->cpu);
}

/**
 * amdgpu_spm_pt_clear - invalidate every PTE of a table
 * @adev: the device
 * @pt: the table
 *
 * The GPU sees it after amdgpu_spm_vmid_use() flushed.
 */
void amdgpu_spm_pt_clear(struct amdgpu_device *adev, struct amdgpu_spm_pt *pt)
{
	u32 i;

	for (i = 0; i < pt->npages; i++)
		amdgpu_gmc_set_pte_pde(adev, pt->cpu, i, 0, 0);
}

/**
 * amdgpu_spm_pt_fini - free a table
 * @adev: the device
 * @pt: the table, which no context points at any more
 */
void amdgpu_spm_pt_fini(struct amdgpu_device *adev, struct amdgpu_spm_pt *pt)
{
	amdgpu_spm_pt_free_vram(adev, pt);
	pt->npages = 0;
}

/**
 * amdgpu_spm_pt_alloc_vram - memory of a table, on hardware
 * @adev: the device
 * @size: bytes
 * @pt: @priv, @cpu and @pd_addr filled in
 *
 * A kernel BO in VRAM (contiguous, as the walker of a flat table needs),
 * as amdgpu_gart_table_vram_alloc() allocates the GART's.
 *
 * Return: 0 or a negative errno.
 */
int amdgpu_spm_pt_alloc_vram(struct amdgpu_device *adev, u32 size,
			     struct amdgpu_spm_pt *pt)
{
	struct amdgpu_bo *bo = NULL;
	int r;

	KUNIT_STATIC_STUB_REDIRECT(amdgpu_spm_pt_alloc_vram, adev, size, pt);

	r = amdgpu_bo_create_kernel(adev, size, PAGE_SIZE, AMDGPU_GEM_DOMAIN_VRAM,
				    &bo, NULL, &pt->cpu);
	if (r)
		return r;
	pt->pd_addr = amdgpu_gmc_pd_addr(bo);
	pt->priv = bo;
	return 0;
}

/**
 * amdgpu_spm_pt_free_vram - free a table from amdgpu_spm_pt_alloc_vram()
 * @adev: the device
 * @pt: the table
 */
void amdgpu_spm_pt_free_vram(struct amdgpu_device *adev,
			     struct amdgpu_spm_pt *pt)
{
	struct amdgpu_bo *bo = pt->priv;

	KUNIT_STATIC_STUB_REDIRECT(amdgpu_spm_pt_free_vram, adev, pt);

	amdgpu_bo_free_kernel(&bo, NULL, &pt->cpu);
	pt->priv = NULL;
}
