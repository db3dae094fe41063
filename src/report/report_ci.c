// SPDX-License-Identifier: GPL-2.0-only
/*
 * Sampling intervals of shares and of their differences (report_ci.h): pure
 * arithmetic on counts, shared by the text and JSON reports and by diff.
 */
#include <math.h>
#include "report/report_ci.h"

struct report_ci report_ci_wilson(uint64_t k, uint64_t n)
{
	const double z2 = REPORT_CI_Z * REPORT_CI_Z;
	double p, nn, den, mid, half;
	struct report_ci c = { 0.0, 1.0 };

	if (!n)
		return c;
	if (k > n)
		k = n;
	nn = (double)n;
	p = (double)k / nn;
	den = 1.0 + z2 / nn;
	mid = (p + z2 / (2.0 * nn)) / den;
	half = REPORT_CI_Z * sqrt(p * (1.0 - p) / nn + z2 / (4.0 * nn * nn)) / den;
	/* the bounds at k = 0 and k = n are 0 and 1 exactly, not 1e-17 off */
	c.lo = k ? fmax(0.0, mid - half) : 0.0;
	c.hi = k < n ? fmin(1.0, mid + half) : 1.0;
	return c;
}

struct report_ci report_ci_diff(uint64_t k_before, uint64_t n_before, uint64_t k_after,
				uint64_t n_after)
{
	struct report_ci b = report_ci_wilson(k_before, n_before),
			 a = report_ci_wilson(k_after, n_after), d;
	double pb = n_before ?
			    (double)(k_before < n_before ? k_before : n_before) / (double)n_before :
			    0.5,
	       pa = n_after ? (double)(k_after < n_after ? k_after : n_after) / (double)n_after :
			      0.5;
	double delta = pa - pb;

	/* the low end: AFTER low and BEFORE high; the high end: the other way round */
	d.lo = delta - sqrt((pa - a.lo) * (pa - a.lo) + (b.hi - pb) * (b.hi - pb));
	d.hi = delta + sqrt((a.hi - pa) * (a.hi - pa) + (pb - b.lo) * (pb - b.lo));
	d.lo = fmax(-1.0, d.lo);
	d.hi = fmin(1.0, d.hi);
	return d;
}

bool report_ci_significant(struct report_ci d)
{
	return d.lo > 0.0 || d.hi < 0.0;
}

double report_ci_half_pp(struct report_ci c)
{
	return 50.0 * (c.hi - c.lo);
}
