// SPDX-License-Identifier: GPL-2.0-only
/*
 * --threads: each thread's own functions by self time, in the text and JSON
 * reports. A thread's view is its process's stacks with that tid, summed by
 * the same code that ranks a whole process.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "report/report_writer.h"
#include "report/report_common.h"
#include "report_threads.h"
#include "util/text.h"

/* The functions of one thread, ranked; *samples its sample count. */
static int thread_stats(const struct profile *p, const struct profile_target *pp, uint32_t tid,
			struct func_stat **out, size_t *n, uint64_t *samples)
{
	struct profile_target one;
	size_t i;
	int err = 0;

	memset(&one, 0, sizeof(one));
	one.root_fd = -1;
	*samples = 0;
	for (i = 0; i < pp->nstacks && !err; i++) {
		const struct profile_stack *s = &pp->stacks[i];

		if (s->tid != tid)
			continue;
		err = profile_target__add_stack_where(&one, tid, s->frames, s->nframes, s->count,
						      s->where);
		*samples += s->count;
	}
	if (!err)
		err = profile_target__func_stats(p, &one, out, n);
	profile_target__free(&one);
	return err;
}

void report_text_threads(FILE *f, const struct profile *p, const struct profile_target *pp,
			 const struct report_opts *o)
{
	struct func_stat *st;
	uint64_t samples;
	size_t t, i, n;
	char name[sizeof(pp->threads->name)], q[REPORT_FIELD];

	for (t = 0; t < pp->nthreads; t++) {
		const struct profile_thread *th = &pp->threads[t];

		if (thread_stats(p, pp, th->tid, &st, &n, &samples)) {
			fprintf(f, "  (out of memory)\n");
			return;
		}
		fprintf(f, "\n  Thread %u %s: %llu samples (%.1f%% of the process)\n", th->tid,
			text_clean(name, sizeof(name), th->name[0] ? th->name : "?"),
			(unsigned long long)samples, report_pct(samples, pp->samples));
		for (i = 0; i < n && i < o->top_functions; i++)
			fprintf(f, "   %5.1f%%  %5.1f%%  %s\n", report_pct(st[i].self, samples),
				report_pct(st[i].total, samples),
				text_clean(q, sizeof(q), p->funcs[st[i].func].qualname));
		free(st);
	}
}

void report_json_threads(FILE *f, const struct profile *p, const struct profile_target *pp)
{
	struct func_stat *st;
	uint64_t samples;
	size_t t, i, n;

	fputs(",\n     \"thread_functions\": [", f);
	for (t = 0; t < pp->nthreads; t++) {
		const struct profile_thread *th = &pp->threads[t];

		if (thread_stats(p, pp, th->tid, &st, &n, &samples)) {
			st = NULL;
			n = 0;
		}
		fprintf(f, "%s\n       {\"tid\": %u, \"name\": ", t ? "," : "", th->tid);
		json_string(f, th->name);
		fprintf(f, ", \"samples\": %llu, \"functions\": [", (unsigned long long)samples);
		for (i = 0; i < n; i++) {
			fprintf(f, "%s{\"qualname\": ", i ? ", " : "");
			json_string(f, p->funcs[st[i].func].qualname);
			fputs(", \"file\": ", f);
			json_string(f, p->funcs[st[i].func].file);
			fprintf(f, ", \"self\": %llu, \"total\": %llu}",
				(unsigned long long)st[i].self, (unsigned long long)st[i].total);
		}
		fputs("]}", f);
		free(st);
	}
	fputs("]", f);
}
