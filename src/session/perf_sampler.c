// SPDX-License-Identifier: GPL-2.0-only
/* Per-CPU perf-event samplers with random periods (see perf_sampler.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "util/mono.h"
#include "session/perf_sampler.h"

/* Statistical quality is all that matters here, not unpredictability. */
double jitter__uniform(struct jitter *j)
{
	j->state ^= j->state >> 12;
	j->state ^= j->state << 25;
	j->state ^= j->state >> 27;
	return ((j->state * 0x2545F4914F6CDD1DULL) >> 11) * 0x1.0p-53;
}

bool jitter__due(struct jitter *j, long long now_ns, double mean_ns)
{
	if (now_ns < j->next_ns)
		return false;
	j->second = !j->second;
	if (j->second) {
		j->offset = -j->offset;
	} else {
		j->offset = 2 * jitter__uniform(j) - 1;
		j->length = 0.5 + jitter__uniform(j);
	}
	j->next_ns = now_ns + (long long)(mean_ns * j->length);
	return true;
}

/* Seeded from the clock and pid; the first redraw comes within first_ns. */
static void jitter__init(struct jitter *j, long long first_ns)
{
	long long now = mono_ns();

	j->state = (uint64_t)now ^ ((uint64_t)getpid() << 32) ^ 0x9E3779B97F4A7C15ULL;
	j->second = true; /* the first block opens a pair */
	j->next_ns = now + (long long)(first_ns * jitter__uniform(j));
}

int perf_sampler__open(struct perf_sampler *ps, struct perf_event_attr *attr,
		       struct bpf_program *prog, const char *what, long long first_redraw_ns,
		       char *why, size_t whylen)
{
	int cpu, fd, attached = 0;

	memset(ps, 0, sizeof(*ps));
	ps->ncpus = libbpf_num_possible_cpus();
	if (ps->ncpus <= 0) {
		snprintf(why, whylen, "cannot count CPUs: %s", strerror(-ps->ncpus));
		return ps->ncpus ? ps->ncpus : -EINVAL;
	}
	ps->links = calloc(ps->ncpus, sizeof(*ps->links));
	ps->fds = malloc(ps->ncpus * sizeof(*ps->fds));
	if (!ps->links || !ps->fds) {
		snprintf(why, whylen, "out of memory");
		return -ENOMEM;
	}
	/* A failure at CPU k must not make perf_sampler__close close fds never opened. */
	for (cpu = 0; cpu < ps->ncpus; cpu++)
		ps->fds[cpu] = -1;
	for (cpu = 0; cpu < ps->ncpus; cpu++) {
		fd = syscall(__NR_perf_event_open, attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
		if (fd < 0) {
			if (errno == ENODEV) /* possible but offline CPU */
				continue;
			snprintf(why, whylen, "perf_event_open(%s) failed on CPU %d: %s%s", what,
				 cpu, strerror(errno),
				 errno == EACCES ? " (needs CAP_PERFMON or root)" : "");
			return -errno;
		}
		ps->links[cpu] = bpf_program__attach_perf_event(prog, fd);
		if (!ps->links[cpu]) {
			int err = -errno;

			close(fd);
			snprintf(why, whylen, "cannot attach the %s sampler to CPU %d: %s", what,
				 cpu, strerror(-err));
			return err;
		}
		/*
		 * The link owns fd now and closes it; a copy of our own changes
		 * the period. Without it this CPU keeps a fixed period.
		 */
		ps->fds[cpu] = fcntl(fd, F_DUPFD_CLOEXEC, 0);
		attached++;
	}
	if (!attached) {
		snprintf(why, whylen, "no online CPU could run the %s sampler", what);
		return -ENODEV;
	}
	jitter__init(&ps->jitter, first_redraw_ns);
	return 0;
}

void perf_sampler__set_period(struct perf_sampler *ps, uint64_t period)
{
	int cpu;

	for (cpu = 0; cpu < ps->ncpus; cpu++)
		if (ps->fds[cpu] >= 0)
			ioctl(ps->fds[cpu], PERF_EVENT_IOC_PERIOD, &period);
}

void perf_sampler__close(struct perf_sampler *ps)
{
	int cpu;

	for (cpu = 0; ps->links && ps->fds && cpu < ps->ncpus; cpu++) {
		bpf_link__destroy(ps->links[cpu]);
		if (ps->fds[cpu] >= 0)
			close(ps->fds[cpu]);
	}
	free(ps->links);
	free(ps->fds);
	memset(ps, 0, sizeof(*ps));
}
