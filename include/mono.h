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

#endif
