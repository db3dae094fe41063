/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * When the run ends, for every loop that works on what targets send or hold:
 * the end of -d, or the moment a stop signal (Ctrl-C, SIGTERM) came. A target
 * can make that work as slow as it likes (fresh code objects, huge line
 * tables, a flood of samples), so the loops check the time instead of
 * trusting it: ring-buffer callbacks yield once the end is reached, the
 * samples still buffered are converted for DEADLINE_DRAIN_NS more and counted
 * as dropped after that, and sources are read for the report until
 * DEADLINE_REPORT_NS. A run so ends within a second whatever the targets do.
 */
#ifndef PYBPFPROF_DEADLINE_H
#define PYBPFPROF_DEADLINE_H

#include <stdbool.h>

#define DEADLINE_DRAIN_NS 300000000LL
#define DEADLINE_REPORT_NS 800000000LL

/* The end of -d (CLOCK_MONOTONIC ns, as mono_ns()); 0: none. */
void deadline__set(long long end_ns);
/* A stop signal came: the run ends now. Async-signal-safe. */
void deadline__stop(void);
/*
 * The run is over (now, unless it ended earlier): from now on callbacks do
 * not yield, for the final drain, and the graces count from that end.
 */
void deadline__draining(void);
/* Whether a ring-buffer callback should yield: the end is reached and this is not the drain. */
bool deadline__yield(void);
/* Whether grace_ns have passed since the end (false while there is no end). */
bool deadline__past(long long grace_ns);

#endif
