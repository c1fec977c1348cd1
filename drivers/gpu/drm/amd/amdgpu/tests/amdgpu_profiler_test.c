// SPDX-License-Identifier: MIT
/*
 * Copyright 2026 The amdgpu profiler series authors
 *
 * KUnit tests of the DRM_AMDGPU_PROFILER dispatcher: the frozen layout, the
 * input checks and GET_VER, driven through amdgpu_profiler_ioctl() on a
 * fake device without an SPM backend.
 */

#include <kunit/test.h>
#include <linux/sizes.h>

#include <drm/amdgpu_drm.h>
#include <drm/drm_file.h>
#include <drm/drm_ioctl.h>

#include "amdgpu.h"
#include "amdgpu_profiler.h"
#include "tests/amdgpu_kunit_helpers.h"

struct profiler_test_ctx {
	struct amdgpu_device *adev;
	struct drm_file *file;
};

static int profiler_test_init(struct kunit *test)
{
	struct profiler_test_ctx *ctx;

	ctx = kunit_kzalloc(test, sizeof(*ctx), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, ctx);
	ctx->adev = amdgpu_kunit_helper_alloc_device(test);
	ctx->file = amdgpu_kunit_helper_alloc_file(test, ctx->adev, 0);
	test->priv = ctx;
	return 0;
}

/*
 * Issue the ioctl on a copy of @args and check that it returned @expected;
 * on failure also check that no byte changed (drm_ioctl() copies the
 * struct back to userspace even on error).
 */
static void profiler_expect(struct kunit *test,
			    const struct drm_amdgpu_profiler_args *args,
			    int expected)
{
	struct profiler_test_ctx *ctx = test->priv;
	struct drm_amdgpu_profiler_args io = *args;
	int ret;

	ret = amdgpu_profiler_ioctl(adev_to_drm(ctx->adev), &io, ctx->file);
	KUNIT_EXPECT_EQ(test, ret, expected);
	if (ret)
		KUNIT_EXPECT_MEMEQ(test, &io, args, sizeof(io));
}

static void profiler_uapi_layout(struct kunit *test)
{
	unsigned int nr = DRM_IOCTL_AMDGPU_PROFILER;

	KUNIT_EXPECT_EQ(test, _IOC_TYPE(nr), DRM_IOCTL_BASE);
	KUNIT_EXPECT_EQ(test, _IOC_NR(nr), DRM_COMMAND_BASE + 0x1C);
	KUNIT_EXPECT_EQ(test, _IOC_DIR(nr), _IOC_READ | _IOC_WRITE);
	KUNIT_EXPECT_EQ(test, _IOC_SIZE(nr), 72);
	KUNIT_EXPECT_EQ(test, AMDGPU_PROFILER_OP_GET_VER, 1);
	KUNIT_EXPECT_EQ(test, AMDGPU_PROFILER_OP_SPM, 2);
	KUNIT_EXPECT_EQ(test, AMDGPU_SPM_OP_ACQUIRE, 1);
	KUNIT_EXPECT_EQ(test, AMDGPU_SPM_OP_RELEASE, 2);
	KUNIT_EXPECT_EQ(test, AMDGPU_SPM_OP_SET_DEST_BUF, 3);
	KUNIT_EXPECT_EQ(test, offsetof(struct drm_amdgpu_spm_args, buf_size), 8);
	KUNIT_EXPECT_EQ(test, offsetof(struct drm_amdgpu_spm_args, op), 12);
	KUNIT_EXPECT_EQ(test, offsetof(struct drm_amdgpu_spm_args, timeout), 16);
	KUNIT_EXPECT_EQ(test, offsetof(struct drm_amdgpu_spm_args, bytes_copied), 20);
	KUNIT_EXPECT_EQ(test, offsetof(struct drm_amdgpu_spm_args, has_data_loss), 24);
	KUNIT_EXPECT_EQ(test, offsetof(struct drm_amdgpu_spm_buffer_header, bytes_copied), 4);
	KUNIT_EXPECT_EQ(test, offsetof(struct drm_amdgpu_spm_buffer_header, has_data_loss), 8);
}

/* Reachable from render nodes, including the partitions' render nodes. */
static void profiler_ioctl_registered(struct kunit *test)
{
	const struct drm_ioctl_desc *desc =
		&amdgpu_ioctls_kms[DRM_IOCTL_NR(DRM_IOCTL_AMDGPU_PROFILER) - DRM_COMMAND_BASE];

	KUNIT_EXPECT_EQ(test, desc->cmd, DRM_IOCTL_AMDGPU_PROFILER);
	KUNIT_EXPECT_TRUE(test, desc->func == amdgpu_profiler_ioctl);
	KUNIT_EXPECT_EQ(test, desc->flags, DRM_AUTH | DRM_RENDER_ALLOW);
}

static void profiler_get_ver_returns_version(struct kunit *test)
{
	struct profiler_test_ctx *ctx = test->priv;
	struct drm_amdgpu_profiler_args args = {
		.op = AMDGPU_PROFILER_OP_GET_VER,
	};
	u8 zero[sizeof(args.data) - sizeof(args.data.version)] = {};

	KUNIT_ASSERT_EQ(test, amdgpu_profiler_ioctl(adev_to_drm(ctx->adev),
						    &args, ctx->file), 0);
	/* 1.1: the share header names its reserved words (xcc_info, seq...) */
	KUNIT_EXPECT_EQ(test, args.data.version, (1u << 24) | 1);
	KUNIT_EXPECT_EQ(test, args.data.version >> 24,
			AMDGPU_PROFILER_VERSION_MAJOR);
	KUNIT_EXPECT_EQ(test, args.data.version & 0xffffff,
			AMDGPU_PROFILER_VERSION_MINOR);
	/* Only the version is written. */
	KUNIT_EXPECT_EQ(test, args.op, AMDGPU_PROFILER_OP_GET_VER);
	KUNIT_EXPECT_EQ(test, args.pad, 0);
	KUNIT_EXPECT_MEMEQ(test, (u8 *)&args.data + sizeof(args.data.version),
			   zero, sizeof(zero));
}

/* Any file of the device may ask, whatever its partition. */
static void profiler_get_ver_any_partition(struct kunit *test)
{
	struct profiler_test_ctx *ctx = test->priv;
	struct drm_amdgpu_profiler_args args = {
		.op = AMDGPU_PROFILER_OP_GET_VER,
	};
	struct drm_file *primary;

	primary = amdgpu_kunit_helper_alloc_file(test, ctx->adev,
						 AMDGPU_XCP_NO_PARTITION);
	KUNIT_EXPECT_EQ(test, amdgpu_profiler_ioctl(adev_to_drm(ctx->adev),
						    &args, primary), 0);
	KUNIT_EXPECT_EQ(test, args.data.version, AMDGPU_PROFILER_VERSION);
}

static void profiler_rejects_pad(struct kunit *test)
{
	static const u32 pads[] = { 1, 0x80000000, U32_MAX };
	struct drm_amdgpu_profiler_args args = {};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(pads); i++) {
		args.op = AMDGPU_PROFILER_OP_GET_VER;
		args.pad = pads[i];
		profiler_expect(test, &args, -EINVAL);
		args.op = AMDGPU_PROFILER_OP_SPM;
		args.data.spm.op = AMDGPU_SPM_OP_ACQUIRE;
		profiler_expect(test, &args, -EINVAL);
	}
}

static const u32 bad_ops[] = { 0, 3, 4, 0x100, 0x80000000, U32_MAX };

static void bad_op_desc(const u32 *op, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "op %#x", *op);
}

KUNIT_ARRAY_PARAM(bad_op, bad_ops, bad_op_desc);

static const u32 bad_spm_ops[] = { 0, 4, 5, 0x100, 0x80000000, U32_MAX };

KUNIT_ARRAY_PARAM(bad_spm_op, bad_spm_ops, bad_op_desc);

static void profiler_rejects_unknown_op(struct kunit *test)
{
	const u32 *op = test->param_value;
	struct drm_amdgpu_profiler_args args = { .op = *op };

	profiler_expect(test, &args, -EINVAL);
}

/* GET_VER takes no input: every byte of the union must be zero. */
static const unsigned int union_bytes[] = {
	0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15,
	16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31,
	32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47,
	48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59, 60, 61, 62, 63,
};

static_assert(ARRAY_SIZE(union_bytes) ==
	      sizeof(((struct drm_amdgpu_profiler_args *)0)->data));

static void union_byte_desc(const unsigned int *byte, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "data byte %u", *byte);
}

KUNIT_ARRAY_PARAM(union_byte, union_bytes, union_byte_desc);

static void profiler_get_ver_rejects_input(struct kunit *test)
{
	const unsigned int *byte = test->param_value;
	struct drm_amdgpu_profiler_args args = {
		.op = AMDGPU_PROFILER_OP_GET_VER,
	};

	((u8 *)&args.data)[*byte] = 0x01;
	profiler_expect(test, &args, -EINVAL);
	((u8 *)&args.data)[*byte] = 0xff;
	profiler_expect(test, &args, -EINVAL);
}

static void profiler_spm_rejects_reserved(struct kunit *test)
{
	struct drm_amdgpu_profiler_args args = {
		.op = AMDGPU_PROFILER_OP_SPM,
		.data.spm.op = AMDGPU_SPM_OP_ACQUIRE,
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(args.data.spm.reserved); i++) {
		args.data.spm.reserved[i] = 1;
		profiler_expect(test, &args, -EINVAL);
		args.data.spm.reserved[i] = 0;
	}
}

static void profiler_spm_rejects_unknown_op(struct kunit *test)
{
	const u32 *op = test->param_value;
	struct drm_amdgpu_profiler_args args = {
		.op = AMDGPU_PROFILER_OP_SPM,
		.data.spm.op = *op,
	};

	profiler_expect(test, &args, -EINVAL);
}

/*
 * bytes_copied and has_data_loss are outputs: whatever a caller that
 * reuses its arguments left there passes the input rules (and reaches the
 * backend, which the fake device does not have).
 */
static void profiler_spm_ignores_output_fields(struct kunit *test)
{
	struct drm_amdgpu_profiler_args args = {
		.op = AMDGPU_PROFILER_OP_SPM,
		.data.spm.op = AMDGPU_SPM_OP_SET_DEST_BUF,
	};

	args.data.spm.bytes_copied = 1;
	profiler_expect(test, &args, -EOPNOTSUPP);
	args.data.spm.bytes_copied = U32_MAX;
	args.data.spm.has_data_loss = 1;
	profiler_expect(test, &args, -EOPNOTSUPP);
}

struct spm_input_case {
	const char *name;
	u32 op;
	u64 dest_buf;
	u32 buf_size;
	u32 timeout;
	int expected;
};

/*
 * Valid input reaches the backend, which the fake device does not have:
 * -EOPNOTSUPP. Every other row is an input rule and must fail with -EINVAL
 * before the backend is asked.
 */
static const struct spm_input_case spm_input_cases[] = {
	{ "acquire", AMDGPU_SPM_OP_ACQUIRE, 0, 0, 0, -EOPNOTSUPP },
	{ "release", AMDGPU_SPM_OP_RELEASE, 0, 0, 0, -EOPNOTSUPP },
	{ "set_dest_buf", AMDGPU_SPM_OP_SET_DEST_BUF, 0x10000, 4096, 10, -EOPNOTSUPP },
	{ "set_dest_buf_null", AMDGPU_SPM_OP_SET_DEST_BUF, 0, 0, 0, -EOPNOTSUPP },
	{ "set_dest_buf_max", AMDGPU_SPM_OP_SET_DEST_BUF, 0x10000, SZ_256M, 0, -EOPNOTSUPP },
	{ "acquire_with_buffer", AMDGPU_SPM_OP_ACQUIRE, 0x10000, 0, 0, -EINVAL },
	{ "acquire_with_size", AMDGPU_SPM_OP_ACQUIRE, 0, 4096, 0, -EINVAL },
	{ "acquire_with_timeout", AMDGPU_SPM_OP_ACQUIRE, 0, 0, 5, -EINVAL },
	{ "release_with_buffer", AMDGPU_SPM_OP_RELEASE, 0x10000, 4096, 0, -EINVAL },
	{ "release_with_timeout", AMDGPU_SPM_OP_RELEASE, 0, 0, 5, -EINVAL },
	{ "set_dest_buf_no_size", AMDGPU_SPM_OP_SET_DEST_BUF, 0x10000, 0, 0, -EINVAL },
	/* No buffer stops copying, whatever the size says */
	{ "set_dest_buf_size_no_buf", AMDGPU_SPM_OP_SET_DEST_BUF, 0, 4096, 0, -EOPNOTSUPP },
	{ "set_dest_buf_misaligned", AMDGPU_SPM_OP_SET_DEST_BUF, 0x10010, 4096, 0, -EINVAL },
	{ "set_dest_buf_misaligned_1", AMDGPU_SPM_OP_SET_DEST_BUF, 0x10001, 4096, 0, -EINVAL },
	{ "set_dest_buf_too_large", AMDGPU_SPM_OP_SET_DEST_BUF, 0x10000, SZ_256M + 32, 0, -EINVAL },
	{ "set_dest_buf_u32_max", AMDGPU_SPM_OP_SET_DEST_BUF, 0x10000, U32_MAX, 0, -EINVAL },
};

static void spm_input_desc(const struct spm_input_case *c, char *desc)
{
	strscpy(desc, c->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(spm_input, spm_input_cases, spm_input_desc);

static void profiler_spm_input_rules(struct kunit *test)
{
	const struct spm_input_case *c = test->param_value;
	struct drm_amdgpu_profiler_args args = {
		.op = AMDGPU_PROFILER_OP_SPM,
		.data.spm = {
			.op = c->op,
			.dest_buf = c->dest_buf,
			.buf_size = c->buf_size,
			.timeout = c->timeout,
		},
	};

	profiler_expect(test, &args, c->expected);
}

static struct kunit_case amdgpu_profiler_ioctl_cases[] = {
	KUNIT_CASE(profiler_uapi_layout),
	KUNIT_CASE(profiler_ioctl_registered),
	KUNIT_CASE(profiler_get_ver_returns_version),
	KUNIT_CASE(profiler_get_ver_any_partition),
	KUNIT_CASE(profiler_rejects_pad),
	KUNIT_CASE_PARAM(profiler_rejects_unknown_op, bad_op_gen_params),
	KUNIT_CASE_PARAM(profiler_get_ver_rejects_input, union_byte_gen_params),
	KUNIT_CASE(profiler_spm_rejects_reserved),
	KUNIT_CASE_PARAM(profiler_spm_rejects_unknown_op, bad_spm_op_gen_params),
	KUNIT_CASE(profiler_spm_ignores_output_fields),
	KUNIT_CASE_PARAM(profiler_spm_input_rules, spm_input_gen_params),
	{}
};

static struct kunit_suite amdgpu_profiler_ioctl_suite = {
	.name = "amdgpu_profiler_ioctl",
	.init = profiler_test_init,
	.test_cases = amdgpu_profiler_ioctl_cases,
};

kunit_test_suite(amdgpu_profiler_ioctl_suite);
