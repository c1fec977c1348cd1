// SPDX-License-Identifier: MIT
/* Made-up test source for scripts/selftest.sh: registers alpha and beta. */
static struct kunit_suite alpha_suite = {
	.name = "alpha",
	.test_cases = alpha_cases,
};

static struct kunit_suite beta_suite = {
	.name = "beta",
	.test_cases = beta_cases,
};

/* Not a suite: a layout table with a name of its own. */
static const struct layout not_a_suite = {
	.name = "gamma",
};

kunit_test_suites(&alpha_suite, &beta_suite);
