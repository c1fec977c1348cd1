// SPDX-License-Identifier: MIT
/*
 * Copyright 2026 The amdgpu profiler series authors
 */

#include <kunit/resource.h>
#include <kunit/test-bug.h>
#include <kunit/test.h>
#include <linux/dma-fence.h>
#include <linux/dma-resv.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/mman.h>
#include <linux/pm_runtime.h>
#include <linux/uaccess.h>

#include <drm/drm_drv.h>
#include <drm/drm_file.h>
#include <drm/drm_kunit_helpers.h>

#include "amdgpu.h"
#include "amdgpu_drv.h"
#include "amdgpu_vm.h"
#include "tests/amdgpu_kunit_helpers.h"

/**
 * amdgpu_kunit_helper_alloc_device - allocate a fake &amdgpu_device
 * @test: the test that owns the device
 *
 * Allocates a &amdgpu_device around a mock DRM device with a render node,
 * the way drm_kunit_helper_alloc_drm_device() does for other drivers. No
 * IP block is initialised and no hardware is touched: the device has no
 * XCP manager and no SPM backend, which is what a test of the ioctl
 * dispatcher wants. Tests that need more fill in the fields they use.
 *
 * The device and its parent are freed when @test ends. Allocation failures
 * fail the test through KUNIT_ASSERT.
 *
 * Return: the new device.
 */
struct amdgpu_device *amdgpu_kunit_helper_alloc_device(struct kunit *test)
{
	struct amdgpu_device *adev;
	struct drm_device *drm;
	struct device *dev;

	dev = drm_kunit_helper_alloc_device(test);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, dev);

	/*
	 * Not drm_kunit_helper_alloc_drm_device(): in 6.12 that macro casts
	 * the returned &drm_device to the container type, which is only right
	 * when the drm_device is the container's first member, and
	 * &amdgpu_device.ddev is not.
	 */
	drm = __drm_kunit_helper_alloc_drm_device(test, dev,
						  sizeof(struct amdgpu_device),
						  offsetof(struct amdgpu_device, ddev),
						  DRIVER_RENDER);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, drm);
	adev = drm_to_adev(drm);
	adev->dev = dev;

	return adev;
}

/**
 * amdgpu_kunit_helper_alloc_file - allocate a fake open file of a device
 * @test: the test that owns the file
 * @adev: the device, from amdgpu_kunit_helper_alloc_device()
 * @xcp_id: partition the file belongs to (&amdgpu_fpriv.xcp_id)
 *
 * Returns a &drm_file on the device's render node whose driver_priv is a
 * zeroed &amdgpu_fpriv with @xcp_id set, as amdgpu_driver_open_kms() would
 * leave it for the fields the profiler uses. Its VM is not initialised.
 * Both are freed when @test ends.
 *
 * Return: the new file.
 */
struct drm_file *amdgpu_kunit_helper_alloc_file(struct kunit *test,
						struct amdgpu_device *adev,
						u32 xcp_id)
{
	struct amdgpu_fpriv *fpriv;
	struct drm_file *file;

	file = kunit_kzalloc(test, sizeof(*file), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, file);
	fpriv = kunit_kzalloc(test, sizeof(*fpriv), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, fpriv);

	fpriv->xcp_id = xcp_id;
	file->minor = adev_to_drm(adev)->render;
	file->driver_priv = fpriv;

	return file;
}

/* ---- a VM that the real amdgpu_vm_fini() can tear down ---- */

static const struct amdgpu_gmc_funcs amdgpu_kunit_gmc_funcs;

struct amdgpu_kunit_vm {
	struct amdgpu_vm *vm;
	struct amdgpu_bo *root;
};

static void amdgpu_kunit_vm_release(void *data)
{
	struct amdgpu_kunit_vm *kv = data;
	struct amdgpu_vm *vm = kv->vm;

	/*
	 * amdgpu_vm_fini() drops the VM's reference on the root, and the VM
	 * may be freed since (postclose frees it): look at the root only.
	 * If it did not run, undo the rest of the set-up.
	 */
	if (kref_read(&kv->root->tbo.base.refcount) > 1) {
		amdgpu_vm_put_task_info(vm->task_info);
		dma_fence_put(vm->last_unlocked);
		dma_fence_put(vm->last_tlb_flush);
		vm->root.bo = NULL;
	}
	/* Only the helper's own reference on the root is left */
	dma_resv_fini(kv->root->tbo.base.resv);
	kfree(kv->root);
}

/**
 * amdgpu_kunit_helper_init_vm - a VM without page tables
 * @test: the test
 * @adev: the device, from amdgpu_kunit_helper_alloc_device()
 * @vm: the VM to set up (zeroed)
 *
 * Sets up what amdgpu_vm_init() sets up that amdgpu_vm_bo_add(),
 * amdgpu_vm_bo_del(), amdgpu_vm_wait_idle() and amdgpu_vm_fini() use: the
 * status lists and locks, stub fences, the task info, and a root PD that is
 * a bare &amdgpu_bo with a reservation object (no memory: the VM is marked
 * evicting, so nothing updates page tables). The root gets two references,
 * the VM's and the helper's; when @test ends the helper frees it, after
 * undoing the rest if amdgpu_vm_fini() did not run.
 */
void amdgpu_kunit_helper_init_vm(struct kunit *test,
				 struct amdgpu_device *adev,
				 struct amdgpu_vm *vm)
{
	struct amdgpu_task_info *ti;
	struct amdgpu_kunit_vm *kv;
	struct amdgpu_bo *root;

	if (!adev->gmc.gmc_funcs)
		adev->gmc.gmc_funcs = &amdgpu_kunit_gmc_funcs;
	adev->vm_manager.root_level = AMDGPU_VM_PTB;

	vm->va = RB_ROOT_CACHED;
	INIT_LIST_HEAD(&vm->evicted);
	INIT_LIST_HEAD(&vm->evicted_user);
	INIT_LIST_HEAD(&vm->relocated);
	INIT_LIST_HEAD(&vm->moved);
	INIT_LIST_HEAD(&vm->idle);
	INIT_LIST_HEAD(&vm->invalidated);
	INIT_LIST_HEAD(&vm->freed);
	INIT_LIST_HEAD(&vm->done);
	spin_lock_init(&vm->status_lock);
	mutex_init(&vm->eviction_lock);
	ttm_lru_bulk_move_init(&vm->lru_bulk_move);
	vm->evicting = true;
	vm->last_unlocked = dma_fence_get_stub();
	vm->last_tlb_flush = dma_fence_get_stub();
	ti = kzalloc(sizeof(*ti), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, ti);
	kref_init(&ti->refcount);
	vm->task_info = ti;

	kv = kunit_kzalloc(test, sizeof(*kv), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, kv);
	root = kzalloc(sizeof(*root), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, root);
	root->tbo.bdev = &adev->mman.bdev;
	root->tbo.base.size = AMDGPU_GPU_PAGE_SIZE;
	root->tbo.base.resv = &root->tbo.base._resv;
	dma_resv_init(root->tbo.base.resv);
	kref_init(&root->tbo.base.refcount);
	kref_init(&root->tbo.kref);
	root->tbo.type = ttm_bo_type_kernel;
	drm_gem_object_get(&root->tbo.base);
	vm->root.bo = root;
	vm->root.vm = vm;
	INIT_LIST_HEAD(&vm->root.vm_status);
	root->vm_bo = &vm->root;
	kv->vm = vm;
	kv->root = root;
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test,
							amdgpu_kunit_vm_release,
							kv), 0);
}

/* ---- files opened through the driver's real file operations ---- */

struct amdgpu_kunit_files {
	struct drm_device *drm;
	const struct drm_driver *saved;
	struct drm_driver driver;
};

static void amdgpu_kunit_files_release(void *data)
{
	struct amdgpu_kunit_files *kf = data;
	struct amdgpu_device *adev = drm_to_adev(kf->drm);

	amdgpu_vmid_mgr_fini(adev);
	pm_runtime_disable(kf->drm->dev);
	kf->drm->driver = kf->saved;
}

/*
 * &drm_driver.open of the test driver: what amdgpu_driver_open_kms() leaves
 * in &drm_file.driver_priv, without a GPU. amdgpu_driver_postclose_kms()
 * tears it down, VM included, and frees it.
 */
static int amdgpu_kunit_open_kms(struct drm_device *dev,
				 struct drm_file *file_priv)
{
	struct kunit *test = kunit_get_current_test();
	struct amdgpu_device *adev = drm_to_adev(dev);
	struct amdgpu_fpriv *fpriv;

	if (!test)
		return -EINVAL;
	fpriv = kzalloc(sizeof(*fpriv), GFP_KERNEL);
	if (!fpriv)
		return -ENOMEM;
	amdgpu_kunit_helper_init_vm(test, adev, &fpriv->vm);
	/* The VM's set-up is undone when the test ends: no failing now */
	fpriv->prt_va = amdgpu_vm_bo_add(adev, &fpriv->vm, NULL);
	KUNIT_ASSERT_NOT_NULL(test, fpriv->prt_va);
	mutex_init(&fpriv->bo_list_lock);
	idr_init_base(&fpriv->bo_list_handles, 1);
	amdgpu_ctx_mgr_init(&fpriv->ctx_mgr, adev);
	file_priv->driver_priv = fpriv;
	return 0;
}

/**
 * amdgpu_kunit_helper_use_files - open files of a fake device for real
 * @test: the test
 * @adev: the device, from amdgpu_kunit_helper_alloc_device()
 *
 * Makes the device's &drm_driver a copy of amdgpu_partition_driver, the
 * driver of amdgpu's render nodes, with only &drm_driver.open replaced (it
 * needs a GPU) and &drm_driver.release dropped (the mock device has its own
 * teardown): files from amdgpu_kunit_helper_open() then get amdgpu's real
 * file operations (amdgpu_flush(), amdgpu_drm_ioctl(), drm_release()), its
 * real ioctl table and its real amdgpu_driver_postclose_kms(). Also enables
 * runtime PM of the device without callbacks, as amdgpu_drm_ioctl() needs,
 * and sets up the VMID manager (the first 8 VMIDs for graphics), as
 * %AMDGPU_VM_OP_RESERVE_VMID needs. Everything is undone when @test ends.
 */
void amdgpu_kunit_helper_use_files(struct kunit *test,
				   struct amdgpu_device *adev)
{
	struct drm_device *drm = adev_to_drm(adev);
	struct amdgpu_kunit_files *kf;

	kf = kunit_kzalloc(test, sizeof(*kf), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, kf);
	kf->drm = drm;
	kf->saved = drm->driver;
	kf->driver = amdgpu_partition_driver;
	kf->driver.open = amdgpu_kunit_open_kms;
	kf->driver.release = NULL;
	drm->driver = &kf->driver;

	spin_lock_init(&adev->mman.bdev.lru_lock);
	adev->vm_manager.first_kfd_vmid = 8;
	amdgpu_vmid_mgr_init(adev);
	pm_runtime_no_callbacks(drm->dev);
	pm_runtime_enable(drm->dev);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test,
							amdgpu_kunit_files_release,
							kf), 0);
}

static void amdgpu_kunit_file_put(void *data)
{
	/* The last reference: drm_release(), postclose, right now */
	__fput_sync(data);
}

/**
 * amdgpu_kunit_helper_open - open the device's render node
 * @test: the test
 * @adev: a device set up with amdgpu_kunit_helper_use_files()
 * @xcp_id: partition of the file (&amdgpu_fpriv.xcp_id)
 *
 * Like open() of the render node by the calling task, without a file
 * descriptor: the caller holds the only reference. Install one with
 * get_unused_fd_flags() and fd_install() to go through close_fd(). Unless
 * amdgpu_kunit_helper_close() drops it first, the reference is dropped
 * when @test ends.
 *
 * Return: the file.
 */
struct file *amdgpu_kunit_helper_open(struct kunit *test,
				      struct amdgpu_device *adev, u32 xcp_id)
{
	struct drm_device *drm = adev_to_drm(adev);
	struct amdgpu_fpriv *fpriv;
	struct file *file;

	file = mock_drm_getfile(drm->render, O_RDWR);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, file);
	/* What drm_open_helper() counts and drm_release() uncounts */
	atomic_inc(&drm->open_count);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test,
							amdgpu_kunit_file_put,
							file), 0);
	fpriv = amdgpu_kunit_helper_drm_file(file)->driver_priv;
	fpriv->xcp_id = xcp_id;
	return file;
}

/**
 * amdgpu_kunit_helper_close - drop the reference of amdgpu_kunit_helper_open()
 * @test: the test
 * @file: the file
 *
 * If it was the last one, the file is released before this returns.
 */
void amdgpu_kunit_helper_close(struct kunit *test, struct file *file)
{
	kunit_release_action(test, amdgpu_kunit_file_put, file);
}

/* The &drm_file of a file from amdgpu_kunit_helper_open() */
struct drm_file *amdgpu_kunit_helper_drm_file(struct file *file)
{
	return file->private_data;
}

/**
 * amdgpu_kunit_helper_ioctl - an ioctl through the file's file operations
 * @test: the test
 * @file: a file from amdgpu_kunit_helper_open()
 * @cmd: the ioctl command, e.g. %DRM_IOCTL_AMDGPU_PROFILER
 * @arg: its argument, copied into user memory and back
 * @size: size of @arg
 *
 * Runs &file_operations.unlocked_ioctl, as the system call does, with the
 * argument in user memory of the test's mm.
 *
 * Return: what the ioctl returned.
 */
int amdgpu_kunit_helper_ioctl(struct kunit *test, struct file *file,
			      unsigned int cmd, void *arg, size_t size)
{
	unsigned long uarg;
	long r;

	uarg = kunit_vm_mmap(test, NULL, 0, PAGE_SIZE, PROT_READ | PROT_WRITE,
			     MAP_PRIVATE | MAP_ANONYMOUS, 0);
	KUNIT_ASSERT_FALSE(test, !uarg || IS_ERR_VALUE(uarg));
	KUNIT_ASSERT_LE(test, size, PAGE_SIZE);
	KUNIT_ASSERT_EQ(test, copy_to_user((void __user *)uarg, arg, size), 0);
	r = file->f_op->unlocked_ioctl(file, cmd, uarg);
	KUNIT_ASSERT_EQ(test, copy_from_user(arg, (void __user *)uarg, size), 0);
	return r;
}
