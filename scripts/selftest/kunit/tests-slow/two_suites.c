// SPDX-License-Identifier: MIT
/*
 * Made-up test source for scripts/selftest.sh: alpha and beta as in
 * tests/, and gamma, marked very slow (a run filtered on speed>very_slow
 * leaves it out).
 */
static struct kunit_suite alpha_suite = {
	.name = "alpha",
	.test_cases = alpha_cases,
};

static struct kunit_suite beta_suite = {
	.name = "beta",
	.test_cases = beta_cases,
};

static struct kunit_suite gamma_suite = {
	.name = "gamma",
	.test_cases = gamma_cases,
	.attr = { .speed = KUNIT_SPEED_VERY_SLOW },
};

kunit_test_suites(&alpha_suite, &beta_suite, &gamma_suite);
