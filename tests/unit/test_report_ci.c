/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The sampling intervals against values computed apart: Wilson's interval
 * by Python's math module from its formula (the script below), checked
 * against published tables where they exist (0 of 10: [0, 0.2775]), and
 * Newcombe's hybrid score interval against his own worked example (1998,
 * 56/70 against 48/80: 0.0524 to 0.3339).
 *
 *   import math; z = 1.959963984540054
 *   def wilson(k, n):
 *       p = k / n; d = 1 + z*z/n; c = (p + z*z/(2*n)) / d
 *       h = z * math.sqrt(p*(1-p)/n + z*z/(4*n*n)) / d
 *       return c - h, c + h
 *   def diff(kb, nb, ka, na):   # after - before
 *       pb, pa = kb/nb, ka/na; lb, ub = wilson(kb, nb); la, ua = wilson(ka, na)
 *       d = pa - pb
 *       return d - math.sqrt((pa-la)**2 + (ub-pb)**2), d + math.sqrt((ua-pa)**2 + (pb-lb)**2)
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "report/report_ci.h"

static void near(double got, double want, double tol)
{
	if (got < want - tol || got > want + tol)
		fail_msg("%.12f, expected %.12f (+-%g)", got, want, tol);
}

static void wilson_is(uint64_t k, uint64_t n, double lo, double hi)
{
	struct report_ci c = report_ci_wilson(k, n);

	near(c.lo, lo, 1e-9);
	near(c.hi, hi, 1e-9);
}

static void test_wilson(void **state)
{
	(void)state;
	wilson_is(3, 10, 0.1077912674, 0.6032218525);
	wilson_is(50, 100, 0.4038315304, 0.5961684696);
	wilson_is(700, 1000, 0.6708761391, 0.7275931575);
}

/* The ends: exactly 0 and 1, never below or above; n = 1; n = 0 knows nothing. */
static void test_wilson_edges(void **state)
{
	struct report_ci c;

	(void)state;
	wilson_is(0, 10, 0.0, 0.2775327999);
	wilson_is(10, 10, 0.7224672001, 1.0);
	wilson_is(0, 1, 0.0, 0.7934506856);
	wilson_is(1, 1, 0.2065493144, 1.0);
	c = report_ci_wilson(0, 10);
	assert_true(c.lo == 0.0);
	c = report_ci_wilson(10, 10);
	assert_true(c.hi == 1.0);
	c = report_ci_wilson(0, 0);
	assert_true(c.lo == 0.0 && c.hi == 1.0);
	c = report_ci_wilson(12, 10); /* k > n (only a forged file): as k = n */
	assert_true(c.hi == 1.0);
	near(c.lo, 0.7224672001, 1e-9);
}

/* Huge n: no overflow, no loss of the tiny width. */
static void test_wilson_huge(void **state)
{
	struct report_ci c;

	(void)state;
	wilson_is(1, 1000000, 0.0000001765, 0.0000056649);
	c = report_ci_wilson(123456789, 1000000000);
	near(c.lo, 0.1234364016, 1e-10);
	near(c.hi, 0.1234771793, 1e-10);
	c = report_ci_wilson(UINT64_MAX / 2, UINT64_MAX);
	near(c.lo, 0.5, 1e-9);
	near(c.hi, 0.5, 1e-9);
	assert_true(c.lo <= c.hi);
}

static void diff_is(uint64_t kb, uint64_t nb, uint64_t ka, uint64_t na, double lo, double hi)
{
	struct report_ci d = report_ci_diff(kb, nb, ka, na);

	near(d.lo, lo, 1e-9);
	near(d.hi, hi, 1e-9);
}

static void test_diff(void **state)
{
	(void)state;
	/* Newcombe's example, BEFORE 56/70 and AFTER 48/80: -(0.0524 .. 0.3339) */
	diff_is(56, 70, 48, 80, -0.3338726540, -0.0524314724);
	assert_true(report_ci_significant(report_ci_diff(56, 70, 48, 80)));
	/* 30 % grown to 60 % of 100 samples each: significant */
	diff_is(30, 100, 60, 100, 0.1629217857, 0.4215623928);
	assert_true(report_ci_significant(report_ci_diff(30, 100, 60, 100)));
	/* 30.0 % against 31.0 % of 1000: not */
	diff_is(300, 1000, 310, 1000, -0.0303259561, 0.0502815189);
	assert_false(report_ci_significant(report_ci_diff(300, 1000, 310, 1000)));
	/* the same share at 99 Hz and at 999 Hz: not, and the interval is asymmetric */
	diff_is(297, 990, 3000, 9990, -0.0302997723, 0.0294720861);
	assert_false(report_ci_significant(report_ci_diff(297, 990, 3000, 9990)));
}

static void test_diff_edges(void **state)
{
	struct report_ci d;

	(void)state;
	/* absent from both (k = 0): contains 0 */
	diff_is(0, 50, 0, 80, -0.0713475991, 0.0458181295);
	/* new in AFTER: 40 of 100 against 0 of 100 */
	d = report_ci_diff(0, 100, 40, 100);
	assert_true(report_ci_significant(d) && d.lo > 0.25);
	/* all to nothing, within [-1, 1] */
	d = report_ci_diff(10, 10, 0, 10);
	assert_true(d.lo >= -1.0 && d.hi < 0.0);
	/* a run without samples decides nothing */
	d = report_ci_diff(0, 0, 100, 100);
	assert_false(report_ci_significant(d));
	near(report_ci_half_pp((struct report_ci){ 0.10, 0.14 }), 2.0, 1e-12);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_wilson),	    cmocka_unit_test(test_wilson_edges),
		cmocka_unit_test(test_wilson_huge), cmocka_unit_test(test_diff),
		cmocka_unit_test(test_diff_edges),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
