// SPDX-License-Identifier: GPL-2.0-only
#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>
#include "jitter.h"

long long jitter_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

void jitter_init(struct jitter *j, long long now_ns, long long first_ns)
{
	j->state = (uint64_t)now_ns ^ ((uint64_t)getpid() << 32) ^ 0x9E3779B97F4A7C15ULL;
	j->next_ns = now_ns + (long long)(first_ns * jitter_uniform(j));
}

/* Statistical quality is all that matters here, not unpredictability. */
double jitter_uniform(struct jitter *j)
{
	j->state ^= j->state >> 12;
	j->state ^= j->state << 25;
	j->state ^= j->state >> 27;
	return ((j->state * 0x2545F4914F6CDD1DULL) >> 11) * 0x1.0p-53;
}

bool jitter_due(struct jitter *j, long long now_ns, double mean_ns)
{
	if (now_ns < j->next_ns)
		return false;
	j->next_ns = now_ns + (long long)(mean_ns * (0.5 + jitter_uniform(j)));
	return true;
}

void jitter_set_period(const int *fds, int n, uint64_t period)
{
	int i;

	for (i = 0; i < n; i++)
		if (fds[i] >= 0)
			ioctl(fds[i], PERF_EVENT_IOC_PERIOD, &period);
}
