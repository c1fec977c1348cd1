// SPDX-License-Identifier: MIT
/*
 * Copyright 2026 The amdgpu profiler series authors
 *
 * KUnit tests of the amd_rdma.h entry points that need no GPU: the query,
 * the argument checks, and the answers for a process without a KFD
 * context. Each failing get_pages() must leave *info untouched.
 */

#include <kunit/device.h>
#include <kunit/test.h>
#include <linux/pid.h>
#include <linux/sched.h>
#include <drm/amd_rdma.h>

static const struct amd_rdma_interface *rdma_test_ops(struct kunit *test)
{
	const struct amd_rdma_interface *ops = NULL;
	int r;

	r = amdkfd_query_rdma_interface(&ops);
	if (r == -ENODEV)
		kunit_skip(test, "KFD is not initialised");
	KUNIT_ASSERT_EQ(test, r, 0);
	KUNIT_ASSERT_NOT_NULL(test, ops);
	return ops;
}

static void rdma_query(struct kunit *test)
{
	const struct amd_rdma_interface *ops;

	KUNIT_EXPECT_EQ(test, amdkfd_query_rdma_interface(NULL), -EINVAL);
	ops = rdma_test_ops(test);
	KUNIT_EXPECT_NOT_NULL(test, ops->get_pages);
	KUNIT_EXPECT_NOT_NULL(test, ops->put_pages);
	KUNIT_EXPECT_NOT_NULL(test, ops->is_gpu_address);
	KUNIT_EXPECT_NOT_NULL(test, ops->get_page_size);
	KUNIT_EXPECT_NOT_NULL(test, ops->flush_put_pages);
	/* Clients test these to pick the get_pages() signature. */
	KUNIT_EXPECT_EQ(test, AMD_RDMA_MAJOR, 2);
	KUNIT_EXPECT_GE(test, AMD_RDMA_MINOR, 1);
}

static void rdma_free_cb(void *priv)
{
}

struct rdma_get_case {
	const char *name;
	u64 address;
	u64 length;
	bool null_pid;
	bool null_dev;
	bool null_info;
	int expected;
};

static const struct rdma_get_case rdma_get_cases[] = {
	{ "zero length", 0x10000, 0, false, false, false, -EINVAL },
	{ "wrapping range", ~0ULL - 0xfff, 0x2000, false, false, false,
	  -EINVAL },
	{ "no pid", 0x10000, 0x1000, true, false, false, -EINVAL },
	{ "no dma device", 0x10000, 0x1000, false, true, false, -EINVAL },
	{ "no info pointer", 0x10000, 0x1000, false, false, true, -EINVAL },
	{ "no KFD process", 0x10000, 0x1000, false, false, false, -ESRCH },
};

static void rdma_get_case_desc(const struct rdma_get_case *c, char *desc)
{
	strscpy(desc, c->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(rdma_get, rdma_get_cases, rdma_get_case_desc);

static void rdma_get_pages_errors(struct kunit *test)
{
	const struct rdma_get_case *c = test->param_value;
	const struct amd_rdma_interface *ops = rdma_test_ops(test);
	struct amd_p2p_info *poison = ERR_PTR(-EBADF), *info = poison;
	struct device *dev;

	dev = kunit_device_register(test, "amdgpu_rdma_nic");
	KUNIT_ASSERT_FALSE(test, IS_ERR(dev));
	KUNIT_EXPECT_EQ(test,
			ops->get_pages(c->address, c->length,
				       c->null_pid ? NULL : task_pid(current),
				       c->null_dev ? NULL : dev,
				       c->null_info ? NULL : &info,
				       rdma_free_cb, NULL),
			c->expected);
	KUNIT_EXPECT_PTR_EQ(test, info, poison);
}

static void rdma_no_kfd_process(struct kunit *test)
{
	const struct amd_rdma_interface *ops = rdma_test_ops(test);
	unsigned long size = 12345;

	/* A KUnit thread has no KFD process. */
	KUNIT_EXPECT_EQ(test, ops->is_gpu_address(0x10000, task_pid(current)),
			0);
	KUNIT_EXPECT_EQ(test, ops->get_page_size(0x10000, 0x1000,
						 task_pid(current), &size),
			-ESRCH);
	KUNIT_EXPECT_EQ(test, size, 12345UL);
	KUNIT_EXPECT_EQ(test, ops->get_page_size(0x10000, 0x1000,
						 task_pid(current), NULL),
			-EINVAL);
}

static void rdma_put_pages_null(struct kunit *test)
{
	const struct amd_rdma_interface *ops = rdma_test_ops(test);
	struct amd_p2p_info *info = NULL;

	KUNIT_EXPECT_EQ(test, ops->put_pages(NULL), -EINVAL);
	KUNIT_EXPECT_EQ(test, ops->put_pages(&info), -EINVAL);
	/* Nothing deferred: returns at once. */
	ops->flush_put_pages();
}

static struct kunit_case rdma_cases[] = {
	KUNIT_CASE(rdma_query),
	KUNIT_CASE_PARAM(rdma_get_pages_errors, rdma_get_gen_params),
	KUNIT_CASE(rdma_no_kfd_process),
	KUNIT_CASE(rdma_put_pages_null),
	{}
};

static struct kunit_suite rdma_suite = {
	.name = "amdgpu_peer_rdma",
	.test_cases = rdma_cases,
};

kunit_test_suite(rdma_suite);
