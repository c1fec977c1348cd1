// SPDX-License-Identifier: MIT
/*
 * Copyright 2026 The amdgpu profiler series authors
 *
 * Checks of the amdgpu KUnit run as a whole. The Makefile links this file
 * after every other amdgpu test, so its suites run last.
 *
 * amdgpu_kunit_kmemleak asks kmemleak (CONFIG_DEBUG_KMEMLEAK, turned on by
 * tests/.kunitconfig) to scan memory once all other suites are done, and
 * fails with one "unreferenced object" block per object that was allocated
 * after the tests began and that nothing references any more. Objects
 * leaked before the tests began (by boot code) are counted, not failed.
 * Without kmemleak the case skips.
 *
 * amdgpu_kunit_selftest holds cases that go wrong on purpose: one
 * deadlocks, one leaks, one never returns (and amdgpu_kunit_selftest_peer,
 * in the peer suite's file, one that puts under a lock its callback
 * takes). They let the project's pipeline
 * self-test show that a real test kernel run fails, naming the cause, when
 * a case does any of these. Each does nothing but skip unless the
 * amdgpu.kunit_selftest parameter names it, and the suite is marked very
 * slow so that the ordinary run (kunit.py --filter 'speed>very_slow')
 * leaves it out.
 */

#include <kunit/test.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/init.h>
#include <linux/jiffies.h>
#include <linux/kmemleak.h>
#include <linux/module.h>
#include <linux/mount.h>
#include <linux/mutex.h>
#include <linux/delay.h>
#include <linux/mman.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>

#include "amdgpu_kunit_helpers.h"

static char *amdgpu_kunit_selftest = "";
module_param_named(kunit_selftest, amdgpu_kunit_selftest, charp, 0444);
MODULE_PARM_DESC(kunit_selftest,
		 "KUnit pipeline self-test: the amdgpu_kunit_selftest* case to run (deadlock, leak, never_returns, put_under_cb_lock); the others skip");

/*
 * When the tests began: objects leaked before are not theirs. Built in,
 * the suites run after the last initcall (kernel_init_freeable()); as a
 * module (whose only initcall is amdgpu's own) the time is not known and
 * every leak counts.
 */
static unsigned long amdgpu_kunit_begin;
static bool amdgpu_kunit_begin_known;

#ifndef MODULE
static int __init amdgpu_kunit_checks_begin(void)
{
	amdgpu_kunit_begin = jiffies;
	amdgpu_kunit_begin_known = true;
	return 0;
}
late_initcall_sync(amdgpu_kunit_checks_begin);
#endif

/*
 * mm/kmemleak.c reports an object only once it is MSECS_MIN_AGE (5000 ms)
 * old at the scan, and only when two scans in a row find it unreferenced
 * with unchanged contents (update_checksum()). Wait that age out, then scan
 * twice.
 */
#define LEAK_MIN_AGE_MS		5000
#define LEAK_SCANS		2
#define LEAK_REPORT_MAX		(256 * 1024)

static struct file *kmemleak_file(struct kunit *test, struct vfsmount **mnt,
				  int flags)
{
	struct file_system_type *type;
	struct file *f;

	type = get_fs_type("debugfs");
	KUNIT_ASSERT_NOT_NULL(test, type);
	*mnt = vfs_kern_mount(type, 0, "debugfs", NULL);
	put_filesystem(type);
	KUNIT_ASSERT_FALSE_MSG(test, IS_ERR(*mnt), "debugfs mount: %ld",
			       PTR_ERR(*mnt));
	f = file_open_root_mnt(*mnt, "kmemleak", flags, 0);
	if (IS_ERR(f))
		mntput(*mnt);
	KUNIT_ASSERT_FALSE_MSG(test, IS_ERR(f), "open kmemleak: %ld", PTR_ERR(f));
	return f;
}

/* Scan @scans times, then read the report into a kernel buffer. */
static char *kmemleak_report(struct kunit *test, int scans)
{
	struct vfsmount *mnt;
	unsigned long ubuf;
	struct file *f;
	ssize_t n;
	loff_t pos;
	size_t len = 0;
	char *buf;
	int i;

	ubuf = kunit_vm_mmap(test, NULL, 0, PAGE_SIZE, PROT_READ | PROT_WRITE,
			     MAP_PRIVATE | MAP_ANONYMOUS, 0);
	KUNIT_ASSERT_FALSE(test, !ubuf || IS_ERR_VALUE(ubuf));
	KUNIT_ASSERT_EQ(test, copy_to_user((void __user *)ubuf, "scan", 4), 0);

	f = kmemleak_file(test, &mnt, O_WRONLY);
	for (i = 0; i < scans; i++) {
		pos = 0;
		n = vfs_write(f, (const char __user *)ubuf, 4, &pos);
		if (n != 4)
			break;
	}
	fput(f);
	mntput(mnt);
	KUNIT_ASSERT_EQ_MSG(test, n, 4,
			    "kmemleak refused the scan (disabled at boot?)");

	buf = kunit_kzalloc(test, LEAK_REPORT_MAX + 1, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, buf);
	f = kmemleak_file(test, &mnt, O_RDONLY);
	pos = 0;
	while (len < LEAK_REPORT_MAX) {
		n = vfs_read(f, (char __user *)ubuf,
			     min_t(size_t, PAGE_SIZE, LEAK_REPORT_MAX - len), &pos);
		if (n <= 0)
			break;
		if (copy_from_user(buf + len, (void __user *)ubuf, n))
			break;
		len += n;
	}
	fput(f);
	mntput(mnt);
	return buf;
}

/*
 * Every object leaked since the tests began fails the case with its whole
 * block (address, size, task, jiffies, backtrace), one printed line each.
 */
static void kmemleak_no_leaks_in_the_run(struct kunit *test)
{
	unsigned int ours = 0, boot = 0;
	char *report, *block, *next;

	if (!IS_ENABLED(CONFIG_DEBUG_KMEMLEAK))
		kunit_skip(test, "CONFIG_DEBUG_KMEMLEAK is off");
	msleep(LEAK_MIN_AGE_MS + 1000);
	report = kmemleak_report(test, LEAK_SCANS);

	for (block = strstr(report, "unreferenced object"); block; block = next) {
		const char *j = strstr(block, "jiffies ");
		unsigned long when = 0;
		char *line;

		next = strstr(block + 1, "unreferenced object");
		if (next)
			next[-1] = '\0';
		if (amdgpu_kunit_begin_known && j &&
		    sscanf(j, "jiffies %lu", &when) == 1 &&
		    time_before(when, amdgpu_kunit_begin)) {
			boot++;
			continue;
		}
		ours++;
		while ((line = strsep(&block, "\n")))
			if (*line)
				kunit_err(test, "%s\n", line);
	}
	if (boot)
		kunit_info(test, "%u object(s) lost before the tests began: not counted\n",
			   boot);
	KUNIT_EXPECT_EQ_MSG(test, ours, 0,
			    "kmemleak: %u object(s) leaked during the tests", ours);
}

static struct kunit_case amdgpu_kunit_kmemleak_cases[] = {
	KUNIT_CASE(kmemleak_no_leaks_in_the_run),
	{}
};

static struct kunit_suite amdgpu_kunit_kmemleak_suite = {
	.name = "amdgpu_kunit_kmemleak",
	.test_cases = amdgpu_kunit_kmemleak_cases,
};

/**
 * amdgpu_kunit_selftest_selected - skip unless amdgpu.kunit_selftest=@name
 * @test: the case
 * @name: the self-test case's name
 */
void amdgpu_kunit_selftest_selected(struct kunit *test, const char *name)
{
	if (strcmp(amdgpu_kunit_selftest, name))
		kunit_skip(test, "runs only with amdgpu.kunit_selftest=%s", name);
	kunit_info(test, "pipeline self-test: %s, on purpose\n", name);
}

/* Takes a mutex it holds: lockdep's report, then a hung task. */
static void selftest_deadlock(struct kunit *test)
{
	static DEFINE_MUTEX(lock);

	amdgpu_kunit_selftest_selected(test, "deadlock");
	mutex_lock(&lock);
	mutex_lock(&lock);
	KUNIT_FAIL(test, "a mutex was taken twice");
}

/* Drops its allocations: the kmemleak suite after it must report them. */
static void selftest_leak(struct kunit *test)
{
	int i;

	amdgpu_kunit_selftest_selected(test, "leak");
	/* Several, so that a stale copy of one pointer cannot hide them all. */
	for (i = 0; i < 8; i++)
		KUNIT_EXPECT_FALSE(test, !kmalloc(96 + 32 * i, GFP_KERNEL));
}

/* Sleeps forever without being stuck: only a deadline catches it. */
static void selftest_never_returns(struct kunit *test)
{
	amdgpu_kunit_selftest_selected(test, "never_returns");
	for (;;)
		msleep(1000);
}

static struct kunit_case amdgpu_kunit_selftest_cases[] = {
	KUNIT_CASE(selftest_deadlock),
	KUNIT_CASE(selftest_leak),
	KUNIT_CASE(selftest_never_returns),
	{}
};

static struct kunit_suite amdgpu_kunit_selftest_suite = {
	.name = "amdgpu_kunit_selftest",
	.test_cases = amdgpu_kunit_selftest_cases,
	.attr = { .speed = KUNIT_SPEED_VERY_SLOW },
};

kunit_test_suites(&amdgpu_kunit_selftest_suite, &amdgpu_kunit_kmemleak_suite);
