// SPDX-License-Identifier: GPL-2.0-only
/*
 * A process's threads in the text report: the busiest REPORT_THREADS_SHOWN,
 * each by tid and name (its Python name, else its comm), the rest counted.
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

/*
 * A thread's name in the text: its label, and its comm beside its Python name
 * when the comm is its own (not the process's, nor the Python name cut by
 * the kernel, as 3.14+ sets it): a name a program gave with prctl stays seen.
 */
static const char *text_name(const struct profile_target *pp, const struct profile_thread *th,
			     char *buf, size_t len)
{
	char label[PROFILE_PYNAME + sizeof(th->name) + 16];

	if (th->pyname[0] && th->name[0] && strcmp(th->name, pp->comm) &&
	    strncmp(th->pyname, th->name, strlen(th->name)))
		snprintf(label, sizeof(label), "%s (comm %s)", th->pyname, th->name);
	else
		snprintf(label, sizeof(label), "%s", profile_thread__label(th));
	return text_clean(buf, len, label);
}

static int cmp_busier(const void *a, const void *b)
{
	const struct profile_thread *x = *(const struct profile_thread *const *)a;
	const struct profile_thread *y = *(const struct profile_thread *const *)b;

	if (x->samples != y->samples)
		return x->samples < y->samples ? 1 : -1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

void report_text_thread_list(FILE *f, const struct profile_target *pp)
{
	const struct profile_thread **by;
	char name[PROFILE_PYNAME + 32], fit[PROFILE_PYNAME + 32];
	uint64_t rest = 0;
	size_t i;

	if (!pp->nthreads)
		return;
	by = malloc(pp->nthreads * sizeof(*by));
	if (!by) {
		fprintf(f, "  threads: %zu (out of memory to list them)\n", pp->nthreads);
		return;
	}
	for (i = 0; i < pp->nthreads; i++)
		by[i] = &pp->threads[i];
	qsort(by, pp->nthreads, sizeof(*by), cmp_busier);
	fprintf(f, "  threads: %zu, busiest first (samples, tid, name)\n", pp->nthreads);
	for (i = 0; i < pp->nthreads; i++) {
		if (i >= REPORT_THREADS_SHOWN) {
			rest += by[i]->samples;
			continue;
		}
		fprintf(f, "    %8llu  %7u  %s\n", (unsigned long long)by[i]->samples, by[i]->tid,
			report_fit(fit, sizeof(fit), text_name(pp, by[i], name, sizeof(name)),
				   REPORT_SCREEN_WIDTH - 23, REPORT_FIT_RIGHT));
	}
	if (pp->nthreads > REPORT_THREADS_SHOWN)
		fprintf(f, "    %zu more threads, with %llu samples in all\n",
			pp->nthreads - REPORT_THREADS_SHOWN, (unsigned long long)rest);
	free(by);
}

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
	char name[PROFILE_PYNAME + 32], q[REPORT_FIELD];

	for (t = 0; t < pp->nthreads; t++) {
		const struct profile_thread *th = &pp->threads[t];

		if (thread_stats(p, pp, th->tid, &st, &n, &samples)) {
			fprintf(f, "  (out of memory)\n");
			return;
		}
		fprintf(f, "\n  Thread %u %s: %llu samples (%.1f%% of the process)\n", th->tid,
			text_name(pp, th, name, sizeof(name)), (unsigned long long)samples,
			report_pct(samples, pp->samples));
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
		fputs(", \"python_name\": ", f);
		report_json_opt_string(f, th->pyname);
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
