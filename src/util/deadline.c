// SPDX-License-Identifier: GPL-2.0-only
/*
 * The run's end (see deadline.h). Written by the main loop and by the signal
 * handler, read everywhere else: plain volatile words, as the process has one
 * thread and a 64-bit store is not torn on the machines pybpfprof runs on.
 */
#include <signal.h>
#include "util/deadline.h"
#include "util/mono.h"

static volatile long long end_set;  /* -d */
static volatile long long end_stop; /* a stop signal */
static volatile sig_atomic_t drain;

void deadline__set(long long end_ns)
{
	end_set = end_ns;
}

void deadline__stop(void)
{
	/* clock_gettime() is async-signal-safe; the first signal's time stands */
	if (!end_stop)
		end_stop = mono_ns();
}

static long long end_ns(void)
{
	long long a = end_set, b = end_stop;

	return a && (!b || a < b) ? a : b;
}

void deadline__draining(void)
{
	long long now = mono_ns(), end = end_ns();

	/* a run that ended by itself (targets gone, top's q) ends now */
	if (!end || end > now)
		end_set = now;
	drain = 1;
}

bool deadline__yield(void)
{
	long long end = end_ns();

	return !drain && end && mono_ns() >= end;
}

bool deadline__past(long long grace_ns)
{
	long long end = end_ns();

	return end && mono_ns() >= end + grace_ns;
}
