/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef PYBPFPROF_MONO_H
#define PYBPFPROF_MONO_H

#include <time.h>

/* CLOCK_MONOTONIC in ns: the clock of all of pybpfprof's own timing. */
static inline long long mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/*
 * This thread's CPU time in ns: the clock of the budgets a target's data is
 * worked on within (a loaded machine stretches their wall time, not this).
 */
static inline long long thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* A poll timeout: whole ms from now_ns until deadline_ns (rounded up), at most max_ms. */
static inline int mono_ms_until(long long deadline_ns, long long now_ns, int max_ms)
{
	long long ms;

	if (deadline_ns <= now_ns)
		return 0;
	ms = (deadline_ns - now_ns + 999999) / 1000000;
	return ms < max_ms ? (int)ms : max_ms;
}

#endif
