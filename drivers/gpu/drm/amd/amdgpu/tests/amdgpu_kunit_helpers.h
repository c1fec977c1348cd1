/* SPDX-License-Identifier: MIT */
/*
 * Copyright 2026 The amdgpu profiler series authors
 */

#ifndef __AMDGPU_KUNIT_HELPERS_H__
#define __AMDGPU_KUNIT_HELPERS_H__

#include <linux/completion.h>
#include <linux/delay.h>
#include <linux/jiffies.h>
#include <linux/lockdep.h>
#include <linux/types.h>

struct amdgpu_device;
struct amdgpu_vm;
struct drm_file;
struct file;
struct kunit;

struct amdgpu_device *amdgpu_kunit_helper_alloc_device(struct kunit *test);
struct drm_file *amdgpu_kunit_helper_alloc_file(struct kunit *test,
						struct amdgpu_device *adev,
						u32 xcp_id);

void amdgpu_kunit_helper_init_vm(struct kunit *test,
				 struct amdgpu_device *adev,
				 struct amdgpu_vm *vm);
void amdgpu_kunit_helper_use_files(struct kunit *test,
				   struct amdgpu_device *adev);
struct file *amdgpu_kunit_helper_open(struct kunit *test,
				      struct amdgpu_device *adev, u32 xcp_id);
void amdgpu_kunit_helper_close(struct kunit *test, struct file *file);
struct drm_file *amdgpu_kunit_helper_drm_file(struct file *file);
int amdgpu_kunit_helper_ioctl(struct kunit *test, struct file *file,
			      unsigned int cmd, void *arg, size_t size);

void amdgpu_kunit_selftest_selected(struct kunit *test, const char *name);

/*
 * Whether lockdep knows this thread to hold @lock; false on a kernel
 * without lockdep (the configuration without PREEMPT_COUNT has none).
 */
#ifdef CONFIG_LOCKDEP
#define amdgpu_kunit_held(lock)	(lockdep_is_held(lock) == LOCK_STATE_HELD)
#else
#define amdgpu_kunit_held(lock)	({ (void)(lock); false; })
#endif

/*
 * How long a case waits for something that a working driver does within
 * milliseconds (a worker's pass, a callback reached, a thread asleep in a
 * wait): only a broken one comes near it, so it is set for the slowest
 * host, an emulated one with lockdep, KASAN and two CPU hogs beside it,
 * and far below scripts/kunit-watch.py's per-case deadline (240 s) and
 * KUnit's own per-case timeout (300 s), so that such a case fails by
 * itself, named, rather than stopping the run.
 */
#define AMDGPU_KUNIT_WAIT_MS	60000

/*
 * amdgpu_kunit_poll - wait until @cond is true, for at most
 * %AMDGPU_KUNIT_WAIT_MS, polling every 1-2 ms; evaluates to the last
 * value of @cond (false: it timed out).
 */
#define amdgpu_kunit_poll(cond) ({					\
	unsigned long __end = jiffies +					\
		msecs_to_jiffies(AMDGPU_KUNIT_WAIT_MS);			\
	bool __ok;							\
									\
	while (!(__ok = (cond)) && time_before(jiffies, __end))		\
		usleep_range(1000, 2000);				\
	__ok;								\
})

/*
 * amdgpu_kunit_wait - wait for @done, for at most %AMDGPU_KUNIT_WAIT_MS;
 * false if it timed out.
 */
static inline bool amdgpu_kunit_wait(struct completion *done)
{
	return wait_for_completion_timeout(done,
					   msecs_to_jiffies(AMDGPU_KUNIT_WAIT_MS));
}

#endif
