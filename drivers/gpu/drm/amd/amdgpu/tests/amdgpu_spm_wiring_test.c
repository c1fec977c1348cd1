// SPDX-License-Identifier: MIT
/*
 * Copyright 2026 The amdgpu profiler series authors
 *
 * KUnit tests of the places where the series calls into the SPM manager
 * from amdgpu (suite amdgpu_spm_wiring). Each case goes through the entry
 * point a user or the driver core really uses: the render node's file
 * operations (amdgpu_drm_ioctl(), amdgpu_flush(), drm_release() and
 * amdgpu_driver_postclose_kms(), from amdgpu_partition_driver), close_fd(),
 * amdgpu_vm_ioctl(), amdgpu_vm_fini(), the XCP manager's partition switch
 * and amdgpu_driver_unload_kms(); the RLC is the model of amdgpu_spm_model.c
 * behind the real gfx_v9_4_3 hooks. Deleting any of those calls fails a case
 * here (scripts/mutants/spm-*.patch check that).
 */

#include <kunit/test.h>

#include <linux/completion.h>
#include <linux/fdtable.h>
#include <linux/file.h>
#include <linux/kthread.h>

#include <drm/amdgpu_drm.h>
#include <drm/drm_drv.h>
#include <drm/drm_file.h>

#include "amdgpu.h"
#include "amdgpu_profiler.h"
#include "amdgpu_spm.h"
#include "amdgpu_xcp.h"
#include "tests/amdgpu_kunit_helpers.h"
#include "tests/amdgpu_spm_model.h"

struct wire {
	struct kunit *test;
	struct spm_env *e;
	struct amdgpu_device *adev;
};

/* A GC 9.4.3 device with @nxcc XCCs whose files are opened for real */
static struct wire *wire_env(struct kunit *test, unsigned int nxcc)
{
	struct wire *w = kunit_kzalloc(test, sizeof(*w), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, w);
	w->test = test;
	w->e = spm_env_create(test, &spm_layout_gfx_v9_4_3, nxcc, SZ_64K);
	w->adev = w->e->adev;
	amdgpu_kunit_helper_use_files(test, w->adev);
	return w;
}

static int profiler(struct wire *w, struct file *f,
		    struct drm_amdgpu_profiler_args *args)
{
	return amdgpu_kunit_helper_ioctl(w->test, f, DRM_IOCTL_AMDGPU_PROFILER,
					 args, sizeof(*args));
}

static int spm_op(struct wire *w, struct file *f, u32 op)
{
	struct drm_amdgpu_profiler_args args = {
		.op = AMDGPU_PROFILER_OP_SPM,
		.data.spm.op = op,
	};

	return profiler(w, f, &args);
}

static int vm_op(struct wire *w, struct file *f, u32 op)
{
	union drm_amdgpu_vm args = { .in.op = op };

	return amdgpu_kunit_helper_ioctl(w->test, f, DRM_IOCTL_AMDGPU_VM,
					 &args, sizeof(args));
}

/*
 * close() from a kthread leaves the final fput() to a worker: wait for it,
 * so that a file released here is released before the test goes on
 */
static int close_fd_sync(int fd)
{
	int r = close_fd(fd);

	flush_delayed_fput();
	return r;
}

/* The acquisition is over and the hardware was given back */
static void expect_released(struct kunit *test, struct wire *w, u32 nxcc)
{
	u32 i;

	KUNIT_EXPECT_FALSE(test, amdgpu_spm_busy(w->adev));
	KUNIT_EXPECT_EQ(test, w->e->m->allocs, 0);
	for (i = 0; i < nxcc; i++) {
		KUNIT_EXPECT_FALSE(test, amdgpu_spm_xcc_owned(w->adev, i));
		KUNIT_EXPECT_EQ(test,
				spm_model_read(w->e->m, i, SPM_R_MC_CNTL) & 0xf,
				SPM_MODEL_VMID);
	}
}

/* The profiler ioctl is in amdgpu's table, and reaches the SPM manager */
static void spm_wire_ioctl_table(struct kunit *test)
{
	struct wire *w = wire_env(test, 2);
	struct file *f = amdgpu_kunit_helper_open(test, w->adev, 0);
	struct drm_amdgpu_profiler_args args = {
		.op = AMDGPU_PROFILER_OP_GET_VER,
	};

	KUNIT_EXPECT_EQ(test, profiler(w, f, &args), 0);
	KUNIT_EXPECT_EQ(test, args.data.version, AMDGPU_PROFILER_VERSION);

	KUNIT_EXPECT_EQ(test, spm_op(w, f, AMDGPU_SPM_OP_ACQUIRE), 0);
	KUNIT_EXPECT_TRUE(test, amdgpu_spm_xcc_owned(w->adev, 0));
	KUNIT_EXPECT_TRUE(test, amdgpu_spm_xcc_owned(w->adev, 1));
	KUNIT_EXPECT_EQ(test, w->e->m->allocs, 2);
	KUNIT_EXPECT_EQ(test, spm_op(w, f, AMDGPU_SPM_OP_RELEASE), 0);
	expect_released(test, w, 2);
}

/*
 * close() of the owner's last descriptor ends the acquisition although
 * somebody else (KFD does, for the VM) still holds a reference to the file:
 * amdgpu_flush() does it, not postclose.
 */
static void spm_wire_close_fd_releases(struct kunit *test)
{
	struct wire *w = wire_env(test, 2);
	struct file *f = amdgpu_kunit_helper_open(test, w->adev, 0);
	int fd;

	if (!current->files)
		kunit_skip(test, "no files_struct");
	fd = get_unused_fd_flags(O_CLOEXEC);
	KUNIT_ASSERT_GE(test, fd, 0);
	fd_install(fd, get_file(f));
	KUNIT_ASSERT_EQ(test, spm_op(w, f, AMDGPU_SPM_OP_ACQUIRE), 0);
	KUNIT_ASSERT_TRUE(test, amdgpu_spm_busy(w->adev));

	KUNIT_EXPECT_EQ(test, close_fd_sync(fd), 0);
	/* The helper's reference keeps the file, and its drm_file, alive */
	KUNIT_EXPECT_EQ(test, file_count(f), 1);
	expect_released(test, w, 2);

	/* Another file can have it now; the postclose that follows is a no-op */
	amdgpu_kunit_helper_close(test, f);
	f = amdgpu_kunit_helper_open(test, w->adev, 0);
	KUNIT_EXPECT_EQ(test, spm_op(w, f, AMDGPU_SPM_OP_ACQUIRE), 0);
	KUNIT_EXPECT_EQ(test, spm_op(w, f, AMDGPU_SPM_OP_RELEASE), 0);
}

/* close() of one of two descriptors of the file keeps the acquisition */
static void spm_wire_close_dup_keeps(struct kunit *test)
{
	struct wire *w = wire_env(test, 1);
	struct file *f = amdgpu_kunit_helper_open(test, w->adev, 0);
	int fd1, fd2;

	if (!current->files)
		kunit_skip(test, "no files_struct");
	fd1 = get_unused_fd_flags(O_CLOEXEC);
	KUNIT_ASSERT_GE(test, fd1, 0);
	fd_install(fd1, get_file(f));
	fd2 = get_unused_fd_flags(O_CLOEXEC);
	KUNIT_ASSERT_GE(test, fd2, 0);
	fd_install(fd2, get_file(f));
	KUNIT_ASSERT_EQ(test, spm_op(w, f, AMDGPU_SPM_OP_ACQUIRE), 0);

	KUNIT_EXPECT_EQ(test, close_fd_sync(fd1), 0);
	KUNIT_EXPECT_TRUE(test, amdgpu_spm_busy(w->adev));
	KUNIT_EXPECT_TRUE(test, amdgpu_spm_xcc_owned(w->adev, 0));
	KUNIT_EXPECT_EQ(test, close_fd_sync(fd2), 0);
	expect_released(test, w, 1);
}

/*
 * The last reference of a file that no descriptor table saw being closed
 * (never installed, or closed by another process): drm_release() runs
 * postclose, which ends the acquisition before the drm_file is freed.
 */
static void spm_wire_postclose_releases(struct kunit *test)
{
	struct wire *w = wire_env(test, 2);
	struct file *f = amdgpu_kunit_helper_open(test, w->adev, 0);
	struct file *g;

	KUNIT_ASSERT_EQ(test, spm_op(w, f, AMDGPU_SPM_OP_ACQUIRE), 0);
	amdgpu_kunit_helper_close(test, f);
	expect_released(test, w, 2);

	g = amdgpu_kunit_helper_open(test, w->adev, 0);
	KUNIT_EXPECT_EQ(test, spm_op(w, g, AMDGPU_SPM_OP_ACQUIRE), 0);
	KUNIT_EXPECT_EQ(test, spm_op(w, g, AMDGPU_SPM_OP_RELEASE), 0);
}

/*
 * AMDGPU_VM_OP_RESERVE_VMID and the profiler exclude each other, through
 * amdgpu_vm_ioctl(); the reservation ends with UNRESERVE_VMID and with the
 * VM (amdgpu_vm_fini() from postclose).
 */
static void spm_wire_vm_reservation(struct kunit *test)
{
	struct wire *w = wire_env(test, 1);
	struct file *prof = amdgpu_kunit_helper_open(test, w->adev, 0);
	struct file *gfx = amdgpu_kunit_helper_open(test, w->adev, 0);

	KUNIT_ASSERT_EQ(test, vm_op(w, gfx, AMDGPU_VM_OP_RESERVE_VMID), 0);
	KUNIT_EXPECT_EQ(test, spm_op(w, prof, AMDGPU_SPM_OP_ACQUIRE), -EBUSY);
	KUNIT_EXPECT_EQ(test, w->e->m->allocs, 0);

	KUNIT_ASSERT_EQ(test, vm_op(w, gfx, AMDGPU_VM_OP_UNRESERVE_VMID), 0);
	KUNIT_ASSERT_EQ(test, spm_op(w, prof, AMDGPU_SPM_OP_ACQUIRE), 0);
	KUNIT_EXPECT_EQ(test, vm_op(w, gfx, AMDGPU_VM_OP_RESERVE_VMID), -EBUSY);
	KUNIT_ASSERT_EQ(test, spm_op(w, prof, AMDGPU_SPM_OP_RELEASE), 0);

	/* Reserved again, then the graphics client goes away */
	KUNIT_ASSERT_EQ(test, vm_op(w, gfx, AMDGPU_VM_OP_RESERVE_VMID), 0);
	KUNIT_EXPECT_EQ(test, spm_op(w, prof, AMDGPU_SPM_OP_ACQUIRE), -EBUSY);
	amdgpu_kunit_helper_close(test, gfx);
	KUNIT_EXPECT_EQ(test, spm_op(w, prof, AMDGPU_SPM_OP_ACQUIRE), 0);
	KUNIT_EXPECT_EQ(test, spm_op(w, prof, AMDGPU_SPM_OP_RELEASE), 0);
	/* The VMID went back to the pool with it */
	KUNIT_EXPECT_EQ(test,
			w->adev->vm_manager.id_mgr[AMDGPU_GFXHUB(0)].reserved_use_count,
			0);
}

/* ---- the partition switch ---- */

struct fake_xcp {
	struct amdgpu_xcp_mgr mgr;
	struct amdgpu_xcp_mgr_funcs funcs;
	int switches;
	int last_mode;
};

static int fake_switch(struct amdgpu_xcp_mgr *xm, int mode, int *num_xcps)
{
	struct fake_xcp *fx = container_of(xm, struct fake_xcp, mgr);

	fx->switches++;
	fx->last_mode = mode;
	/* As amdgpu_xcp_init() leaves it after a switch */
	xm->mode = mode;
	*num_xcps = xm->num_xcps;
	return 0;
}

/* One partition of all XCCs, in SPX mode, with a fake switch */
static struct fake_xcp *fake_xcp(struct kunit *test, struct wire *w, u32 nxcc)
{
	struct fake_xcp *fx = kunit_kzalloc(test, sizeof(*fx), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, fx);
	mutex_init(&fx->mgr.xcp_lock);
	fx->mgr.adev = w->adev;
	fx->mgr.num_xcps = 1;
	fx->mgr.mode = AMDGPU_SPX_PARTITION_MODE;
	fx->mgr.xcp[0].valid = true;
	fx->mgr.xcp[0].ip[AMDGPU_XCP_GFX].valid = true;
	fx->mgr.xcp[0].ip[AMDGPU_XCP_GFX].inst_mask = GENMASK(nxcc - 1, 0);
	fx->funcs.switch_partition_mode = fake_switch;
	fx->mgr.funcs = &fx->funcs;
	w->adev->xcp_mgr = &fx->mgr;
	return fx;
}

static int switch_to_dpx(struct fake_xcp *fx)
{
	return amdgpu_xcp_switch_partition_mode(&fx->mgr,
						AMDGPU_DPX_PARTITION_MODE);
}

static void drop_xcp(void *data)
{
	struct amdgpu_device *adev = data;

	adev->xcp_mgr = NULL;
}

/*
 * No new partition mode while SPM is acquired; restoring the current one
 * after a reset or resume goes on (a refusal there fails the reset).
 */
static void spm_wire_partition_switch(struct kunit *test)
{
	struct wire *w = wire_env(test, 2);
	struct file *f = amdgpu_kunit_helper_open(test, w->adev, 0);
	struct fake_xcp *fx = fake_xcp(test, w, 2);

	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, drop_xcp,
							w->adev), 0);
	KUNIT_ASSERT_EQ(test, spm_op(w, f, AMDGPU_SPM_OP_ACQUIRE), 0);
	KUNIT_EXPECT_EQ(test, switch_to_dpx(fx), -EBUSY);
	KUNIT_EXPECT_EQ(test, fx->switches, 0);
	KUNIT_EXPECT_EQ(test, fx->mgr.mode, AMDGPU_SPX_PARTITION_MODE);

	KUNIT_EXPECT_EQ(test, amdgpu_xcp_restore_partition_mode(&fx->mgr), 0);
	KUNIT_EXPECT_EQ(test, fx->switches, 1);
	KUNIT_EXPECT_EQ(test, fx->last_mode, AMDGPU_SPX_PARTITION_MODE);
	KUNIT_EXPECT_TRUE(test, amdgpu_spm_busy(w->adev));

	KUNIT_ASSERT_EQ(test, spm_op(w, f, AMDGPU_SPM_OP_RELEASE), 0);
	KUNIT_EXPECT_EQ(test, switch_to_dpx(fx), 0);
	KUNIT_EXPECT_EQ(test, fx->switches, 2);
	KUNIT_EXPECT_EQ(test, fx->mgr.mode, AMDGPU_DPX_PARTITION_MODE);
}

struct acquirer {
	struct kunit *test;
	struct wire *w;
	struct file *f;
	struct completion done;
	int ret;
};

static int acquirer_fn(void *data)
{
	struct acquirer *a = data;

	current->kunit_test = a->test;
	a->ret = spm_op(a->w, a->f, AMDGPU_SPM_OP_ACQUIRE);
	complete(&a->done);
	while (!kthread_should_stop())
		schedule_timeout_interruptible(1);
	return 0;
}

/* An ACQUIRE half way through (allocating its rings) also holds it off */
static void spm_wire_partition_switch_mid_acquire(struct kunit *test)
{
	struct wire *w = wire_env(test, 2);
	struct file *f = amdgpu_kunit_helper_open(test, w->adev, 0);
	struct fake_xcp *fx = fake_xcp(test, w, 2);
	DECLARE_COMPLETION_ONSTACK(gate);
	DECLARE_COMPLETION_ONSTACK(waiting);
	struct acquirer a = { .test = test, .w = w, .f = f };
	struct task_struct *t;

	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, drop_xcp,
							w->adev), 0);
	init_completion(&a.done);
	w->e->m->alloc_gate = &gate;
	w->e->m->alloc_waiting = &waiting;
	t = kthread_run(acquirer_fn, &a, "spm-wire-acquire");
	KUNIT_ASSERT_FALSE(test, IS_ERR(t));
	KUNIT_EXPECT_TRUE(test, amdgpu_kunit_wait(&waiting));

	KUNIT_EXPECT_EQ(test, switch_to_dpx(fx), -EBUSY);
	KUNIT_EXPECT_EQ(test, fx->switches, 0);

	WRITE_ONCE(w->e->m->alloc_gate, NULL);
	complete_all(&gate);
	KUNIT_EXPECT_TRUE(test, amdgpu_kunit_wait(&a.done));
	kthread_stop(t);
	KUNIT_EXPECT_EQ(test, a.ret, 0);
	KUNIT_EXPECT_EQ(test, spm_op(w, f, AMDGPU_SPM_OP_RELEASE), 0);
	KUNIT_EXPECT_EQ(test, switch_to_dpx(fx), 0);
}

/*
 * The device goes away while a file holds SPM: amdgpu_driver_unload_kms()
 * gives the hardware back, later calls fail with -ENODEV, and the file
 * closed afterwards finds nothing.
 */
static void spm_wire_unload_releases(struct kunit *test)
{
	struct wire *w = wire_env(test, 2);
	struct file *f = amdgpu_kunit_helper_open(test, w->adev, 0);
	int saved = w->adev->num_ip_blocks;

	KUNIT_ASSERT_EQ(test, spm_op(w, f, AMDGPU_SPM_OP_ACQUIRE), 0);
	/* unload_kms does nothing on a device without IP blocks */
	w->adev->num_ip_blocks = 1;
	amdgpu_driver_unload_kms(adev_to_drm(w->adev));
	w->adev->num_ip_blocks = saved;
	expect_released(test, w, 2);
	KUNIT_EXPECT_EQ(test, spm_op(w, f, AMDGPU_SPM_OP_ACQUIRE), -ENODEV);
	amdgpu_kunit_helper_close(test, f);
	KUNIT_EXPECT_EQ(test, w->e->m->allocs, 0);
}

static struct kunit_case amdgpu_spm_wiring_cases[] = {
	KUNIT_CASE(spm_wire_ioctl_table),
	KUNIT_CASE(spm_wire_close_fd_releases),
	KUNIT_CASE(spm_wire_close_dup_keeps),
	KUNIT_CASE(spm_wire_postclose_releases),
	KUNIT_CASE(spm_wire_vm_reservation),
	KUNIT_CASE(spm_wire_partition_switch),
	KUNIT_CASE(spm_wire_partition_switch_mid_acquire),
	KUNIT_CASE(spm_wire_unload_releases),
	{}
};

static struct kunit_suite amdgpu_spm_wiring_suite = {
	.name = "amdgpu_spm_wiring",
	.test_cases = amdgpu_spm_wiring_cases,
};

kunit_test_suite(amdgpu_spm_wiring_suite);
