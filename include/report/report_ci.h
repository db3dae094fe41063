/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The sampling error of a share: k of a section's n samples fell in a
 * function or a line. Each sample is close to a random draw (the timer ticks
 * at random points of the program's run), so k is binomial and the share's
 * 95 % interval is the binomial one. Wilson's score interval, not Wald's
 * p +- 1.96 sqrt(p(1-p)/n): Wald's is zero wide at k = 0 and k = n and
 * runs below 0 or above 1 near them, where Wilson's stays inside [0, 1] and
 * keeps its coverage. It says nothing of systematic error (skid, a function
 * too short for any tick to land in): only of the luck of the draw.
 *
 * Two runs' shares (different rates, lengths, sample counts) differ by
 * p_after - p_before; Newcombe's hybrid score interval for that difference
 * is built from the two Wilson intervals (Newcombe 1998, method 10), and the
 * change is significant when it excludes 0.
 */
#ifndef PYBPFPROF_REPORT_CI_H
#define PYBPFPROF_REPORT_CI_H

#include <stdbool.h>
#include <stdint.h>

/* z of a two-sided 95 % interval: the 0.975 quantile of the normal distribution */
#define REPORT_CI_Z 1.959963984540054

struct report_ci {
	double lo, hi; /* fractions; a share in [0, 1], a difference in [-1, 1] */
};

/* The 95 % Wilson interval of k out of n (k <= n); n = 0 knows nothing: [0, 1]. */
struct report_ci report_ci_wilson(uint64_t k, uint64_t n);
/*
 * The 95 % interval of k_after/n_after - k_before/n_before, the shares of two
 * independent runs (Newcombe's hybrid score); a run without samples (n = 0)
 * knows nothing, and no difference with it is significant.
 */
struct report_ci report_ci_diff(uint64_t k_before, uint64_t n_before, uint64_t k_after,
				uint64_t n_after);
/* A difference is significant when its interval lies wholly above or below 0. */
bool report_ci_significant(struct report_ci d);
/* Half the width, in percentage points: the "+-" of a share shown in percent. */
double report_ci_half_pp(struct report_ci c);

#endif
