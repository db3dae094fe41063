// SPDX-License-Identifier: GPL-2.0-only
/*
 * What --timeline adds to each CPU sample in the collector, and what its
 * writers cost: BENCH_TL_SAMPLES CPU samples (default 1,000,000) over
 * BENCH_TL_STACKS distinct stacks (default 2,000, 8 to 40 frames deep, 8
 * threads, fixed seed) are counted as the collector counts them
 * (profile_target__add_stack), then counted again with each also appended
 * to the timeline (profile_target__tl_add); the difference per sample is the
 * timeline's cost. Then the Perfetto and trace JSON writers write that
 * timeline to $TMPDIR. CPU times are this thread's, best of
 * BENCH_TL_ROUNDS (default 3): other load on the machine does not count.
 * `make bench-timeline` runs it; no root needed.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "report/report.h"
#include "bench_rng.h"

static double cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static unsigned long env_ul(const char *name, unsigned long def)
{
	const char *v = getenv(name);

	return v && *v ? strtoul(v, NULL, 10) : def;
}

/* Stacks as (function number, line) pairs, interned in each run's profile. */
struct stacks {
	uint16_t (*fn)[40], (*line)[40];
	uint32_t (*frames)[40];
	uint32_t *n;
	size_t count;
};

static void make_stacks(struct stacks *s, size_t count)
{
	size_t i, d;

	s->fn = calloc(count, sizeof(*s->fn));
	s->line = calloc(count, sizeof(*s->line));
	s->frames = calloc(count, sizeof(*s->frames));
	s->n = calloc(count, sizeof(*s->n));
	s->count = count;
	if (!s->fn || !s->line || !s->frames || !s->n)
		exit(1);
	for (i = 0; i < count; i++) {
		s->n[i] = 8 + next(33);
		for (d = 0; d < s->n[i]; d++) {
			s->fn[i][d] = (uint16_t)next(500);
			s->line[i][d] = (uint16_t)(1 + next(300));
		}
	}
}

static void intern(struct profile *p, struct stacks *s)
{
	char name[32];
	size_t i, d;

	for (i = 0; i < s->count; i++)
		for (d = 0; d < s->n[i]; d++) {
			snprintf(name, sizeof(name), "f%u", s->fn[i][d]);
			s->frames[i][d] = profile__frame(
				p, profile__func(p, name, "/srv/app/mod.py", 1, false), s->line[i][d]);
		}
}

/* One run of n samples: counted, and (timeline) appended too. CPU seconds. */
static double run(struct stacks *s, unsigned long n, bool timeline, struct profile *p)
{
	struct profile_target *pp;
	unsigned long i;
	double t0;

	profile__init(p, "cpu", 99);
	p->start_ns = 1000000000;
	if (timeline)
		profile__timeline_on(p, n + 16);
	pp = profile__add_target(p, 4242, "/usr/bin/python3.11", "python3 app.py", "python3",
				 "3.11.2");
	if (!pp)
		exit(1);
	pp->tl_proc = profile__tl_proc(p, 4242, "python3", "python3 app.py", PROFILE_TL_FOUND, 0,
				       1000000000);
	intern(p, s);
	t0 = cpu_now();
	for (i = 0; i < n; i++) {
		size_t k = i * 7919 % s->count;
		uint32_t tid = 4242 + (uint32_t)(k & 7);
		struct profile_tl_add a = { .kind = PROFILE_TL_CPU,
					    .tid = tid,
					    .ktime_ns = 1000000000 + i * 1000000,
					    .frames = s->frames[k],
					    .nframes = s->n[k] };

		if (profile_target__add_stack(pp, tid, s->frames[k], s->n[k], 1))
			exit(1);
		if (timeline)
			profile_target__tl_add(p, pp, &a);
	}
	return cpu_now() - t0;
}

static void write_one(const struct profile *p, const struct report_writer *w, const char *ext)
{
	const struct report_opts o = { .tool_version = "bench" };
	const char *dir = getenv("TMPDIR");
	char path[256];
	struct stat st;
	double t0, t;
	FILE *f;

	snprintf(path, sizeof(path), "%s/pybpfprof-bench-timeline-%d%s", dir ? dir : "/tmp",
		 (int)getpid(), ext);
	f = fopen(path, "w");
	if (!f)
		exit(1);
	t0 = cpu_now();
	if (w->write(f, p, &o))
		exit(1);
	fclose(f);
	t = cpu_now() - t0;
	stat(path, &st);
	printf("  %-11s %8.3f s CPU  %10.1f MB  %6.0f ns/event\n", w->name, t, st.st_size / 1e6,
	       t * 1e9 / (double)p->timeline.n);
	unlink(path);
}

int main(void)
{
	unsigned long n = env_ul("BENCH_TL_SAMPLES", 1000000),
		      rounds = env_ul("BENCH_TL_ROUNDS", 3), r;
	struct profile p;
	struct stacks s;
	double plain = 1e9, tl = 1e9, t;
	struct rusage ru;

	make_stacks(&s, env_ul("BENCH_TL_STACKS", 2000));
	for (r = 0; r < rounds; r++) {
		t = run(&s, n, false, &p);
		plain = t < plain ? t : plain;
		profile__free(&p);
		t = run(&s, n, true, &p);
		tl = t < tl ? t : tl;
		if (r + 1 < rounds)
			profile__free(&p);
	}
	printf("%lu CPU samples over %zu stacks, best of %lu rounds (this thread's CPU):\n", n,
	       s.count, rounds);
	printf("  counted:                %7.0f ns/sample\n", plain * 1e9 / (double)n);
	printf("  counted and timeline:   %7.0f ns/sample\n", tl * 1e9 / (double)n);
	printf("  the timeline's share:   %7.0f ns/sample; %zu events, %zu stacks, %.1f MB\n",
	       (tl - plain) * 1e9 / (double)n, p.timeline.n, p.timeline.nstacks,
	       (p.timeline.cap_events * sizeof(*p.timeline.events) +
		p.timeline.cap_frames * sizeof(*p.timeline.frames)) /
		       1e6);
	write_one(&p, &report_perfetto, ".perfetto-trace");
	write_one(&p, &report_trace_json, ".trace.json");
	getrusage(RUSAGE_SELF, &ru);
	printf("  peak RSS %ld MB\n", ru.ru_maxrss / 1024);
	profile__free(&p);
	free(s.fn);
	free(s.line);
	free(s.frames);
	free(s.n);
	return 0;
}
