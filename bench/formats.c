// SPDX-License-Identifier: GPL-2.0-only
/*
 * What writing each report format costs: a synthetic profile the size of a
 * long run of a large program (default 2,000 functions, 200,000 stacks 4 to
 * 64 frames deep over 8 threads, fixed seed) is written by every
 * writer to a file in $TMPDIR; per format the wall and CPU time (best of
 * BENCH_FORMAT_ROUNDS, default 3), the file size and the peak RSS so far.
 * `make bench-formats` runs it; no root needed. BENCH_KEEP=1 keeps the files.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "util/outfile.h"
#include "report/report.h"
#include "bench_rng.h"

static double now(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static unsigned long env_ul(const char *name, unsigned long def)
{
	const char *v = getenv(name);

	return v && *v ? strtoul(v, NULL, 10) : def;
}

static void build(struct profile *p, size_t nfuncs, size_t nstacks, bool worst)
{
	struct profile_target *pp;
	uint32_t frames[64], *funcs;
	char name[64], file[64];
	uint64_t total = 0;
	size_t i, d;

	profile__init(p, "cpu", 999);
	p->duration_s = 600;
	pp = profile__add_target(p, 4242, "/usr/bin/python3.11", "python3 app.py", "python3",
			       "3.11.2");
	funcs = calloc(nfuncs, sizeof(*funcs));
	if (!pp || !funcs)
		exit(1);
	for (i = 0; i < nfuncs; i++) {
		snprintf(name, sizeof(name), "module%zu.Class%zu.method%zu", i % 50, i % 7, i);
		snprintf(file, sizeof(file), "/srv/app/pkg%zu/module%zu.py", i % 13, i % 50);
		funcs[i] = profile__func(p, name, file, 10 + i % 400, false);
	}
	for (i = 0; i < nstacks; i++) {
		size_t depth = 4 + next(61);
		uint64_t count = 1 + next(20);

		/*
		 * A walk down a call graph where every function calls 4 others,
		 * each from its own line: stacks share their upper frames as in a
		 * real program. BENCH_RANDOM=1: any function may call any other
		 * (nothing shared below the third frame, the worst case).
		 */
		uint32_t f = 0, k = 0;

		for (d = 0; d < depth; d++) {
			uint32_t callee_k = next(4);
			int line = d + 1 < depth ? 11 + (int)callee_k : 11 + (int)next(40);

			frames[depth - 1 - d] = profile__frame(p, funcs[f], line);
			k = callee_k;
			f = d < 2 ? d + 1 : worst ? next(nfuncs) : (f * 7 + k * 131 + 1) % nfuncs;
		}
		if (profile_target__add_stack(pp, 4242 + i % 8, frames, depth, count))
			exit(1);
		total += count;
	}
	for (i = 0; i < 8; i++)
		profile_target__thread(pp, 4242 + i)->samples = total / 8;
	pp->samples = total;
	free(funcs);
}

int main(void)
{
	size_t nfuncs = env_ul("BENCH_FUNCS", 2000), nstacks = env_ul("BENCH_STACKS", 200000);
	unsigned rounds = env_ul("BENCH_FORMAT_ROUNDS", 3), r;
	const char *names[] = { "text", "json", "folded", "flamegraph", "speedscope", "pstats",
				"pprof", "svg", "heatmap" };
	struct report_opts o = { .top_functions = 20, .top_lines = 20, .line_report = 5,
				  .tool_version = "bench" };
	const char *tmp = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	char path[256], why[400];
	struct outfile of;
	struct profile p;
	struct rusage ru;
	struct stat st;
	double t0, c0, built;
	size_t i;

	t0 = now(CLOCK_MONOTONIC);
	build(&p, nfuncs, nstacks, env_ul("BENCH_RANDOM", 0));
	built = now(CLOCK_MONOTONIC) - t0;
	getrusage(RUSAGE_SELF, &ru);
	printf("profile: %zu functions, %zu frames, %zu stacks, %llu samples; built in %.2f s, "
	       "peak RSS %ld MiB\n\n", p.nfuncs, p.nframes, p.targets[0].nstacks,
	       (unsigned long long)p.targets[0].samples, built, ru.ru_maxrss / 1024);
	printf("| format | wall s | CPU s | file size | peak RSS so far |\n");
	printf("|---|---|---|---|---|\n");
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		const struct report_writer *w = report_find(names[i]);
		double best_wall = 1e9, best_cpu = 1e9;

		snprintf(path, sizeof(path), "%s/pybpfprof-bench-%d.%s", tmp, getpid(), names[i]);
		for (r = 0; r < rounds; r++) {
			t0 = now(CLOCK_MONOTONIC);
			c0 = now(CLOCK_PROCESS_CPUTIME_ID);
			if (outfile__open(&of, path, why, sizeof(why)) ||
			    report_write(w, &of, &p, &o, why, sizeof(why))) {
				fprintf(stderr, "bench-formats: cannot write %s: %s\n", path, why);
				return 1;
			}
			outfile__close(&of);
			t0 = now(CLOCK_MONOTONIC) - t0;
			c0 = now(CLOCK_PROCESS_CPUTIME_ID) - c0;
			best_wall = t0 < best_wall ? t0 : best_wall;
			best_cpu = c0 < best_cpu ? c0 : best_cpu;
		}
		stat(path, &st);
		getrusage(RUSAGE_SELF, &ru);
		printf("| %s | %.3f | %.3f | %.1f %s | %ld MiB |\n", names[i], best_wall, best_cpu,
		       st.st_size / (st.st_size < 1048576 ? 1024.0 : 1048576.0),
		       st.st_size < 1048576 ? "KiB" : "MiB", ru.ru_maxrss / 1024);
		if (!getenv("BENCH_KEEP"))
			unlink(path);
		else
			printf("  kept %s\n", path);
	}
	profile__free(&p);
	return 0;
}
