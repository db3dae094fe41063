// SPDX-License-Identifier: GPL-2.0-only
/*
 * --mode wall and --gil in the text and JSON reports. Off-CPU intervals are
 * stacks whose innermost frame is a "<off-CPU: CLASS>" pseudo-function
 * (profile_offcpu.c); everything here is summed from the stacks, so a saved
 * profile read back gives the same figures. The exact off-CPU ns per thread
 * and class come from the threads.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "report/report_common.h"
#include "report_wall.h"
#include "util/text.h"

bool report_wall_on(const struct profile *p)
{
	return p->wall || p->gil;
}

static void stat_add(struct wall_stat *w, const struct profile_stack *s, int cls)
{
	if (cls < 0) {
		w->on += s->count;
		w->held += s->gil_held;
		w->released += s->gil_released;
		w->unknown += s->gil_unknown;
		return;
	}
	w->off += s->count;
	w->cls[cls] += s->count;
	if (cls == PROFILE_OFFCPU_GIL)
		w->waiting += s->count;
}

int report_wall_stats(const struct profile *p, const struct profile_target *pp,
		      struct wall_stat **funcs, struct wall_stat **lines)
{
	size_t *seen = calloc(p->nfuncs + 1, sizeof(*seen)), i, j;

	*funcs = calloc(p->nfuncs + 1, sizeof(**funcs));
	*lines = calloc(p->nframes + 1, sizeof(**lines));
	if (!seen || !*funcs || !*lines) {
		free(seen);
		free(*funcs);
		free(*lines);
		*funcs = *lines = NULL;
		return -ENOMEM;
	}
	for (i = 0; i < pp->nstacks; i++) {
		const struct profile_stack *s = &pp->stacks[i];
		int cls = profile__offcpu_class(p, s);
		uint32_t k = profile__innermost_line(p, s);

		if (k < s->nframes)
			stat_add(&(*lines)[s->frames[k]], s, cls);
		/* the pseudo-function too: it stands for the interval */
		for (j = 0; j < s->nframes; j++) {
			uint32_t fr = s->frames[j], fn;

			if (fr >= p->nframes)
				continue;
			fn = p->frames[fr].func;
			if (seen[fn] == i + 1)
				continue; /* recursion: once per stack */
			seen[fn] = i + 1;
			stat_add(&(*funcs)[fn], s, cls);
		}
	}
	free(seen);
	return 0;
}

/* "  N what" on a line of its own, when N is not 0: the wall section's counts. */
static void count_line(FILE *f, uint64_t n, const char *what)
{
	if (n)
		fprintf(f, "  %llu %s\n", (unsigned long long)n, what);
}

/* A thread's own figures summed from its stacks. */
static struct wall_stat thread_stat(const struct profile *p, const struct profile_target *pp,
				    uint32_t tid)
{
	struct wall_stat w = { 0 };
	size_t i;

	for (i = 0; i < pp->nstacks; i++)
		if (pp->stacks[i].tid == tid)
			stat_add(&w, &pp->stacks[i], profile__offcpu_class(p, &pp->stacks[i]));
	return w;
}

static uint64_t sum_ns(const struct profile_thread *th)
{
	uint64_t ns = 0;
	int c;

	for (c = 0; c < PROFILE_OFFCPU_NCLASSES; c++)
		ns += th->offcpu_ns[c];
	return ns;
}

static void text_threads(FILE *f, const struct profile *p, const struct profile_target *pp)
{
	char name[sizeof(pp->threads->name)]; /* its column's width: a longer name is cut */
	uint64_t unknown = 0;
	size_t t;
	int c;

	fprintf(f, "\n  Wall time by thread (on-CPU sampled; off-CPU exact, by why)\n");
	fprintf(f, "      tid  name             on-CPU s  off-CPU s");
	for (c = 0; c < PROFILE_OFFCPU_NCLASSES; c++)
		fprintf(f, "  %s", profile_offcpu_class_name(c));
	fprintf(f, "%s\n", p->gil ? "  | GIL held  waiting  released  unknown (samples)" : "");
	for (t = 0; t < pp->nthreads; t++) {
		const struct profile_thread *th = &pp->threads[t];
		struct wall_stat w = thread_stat(p, pp, th->tid);

		fprintf(f, "  %7u  %-15s  %8.2f  %9.3f", th->tid,
			text_clean(name, sizeof(name), profile_thread__label(th)),
			report_seconds(p, w.on), sum_ns(th) / 1e9);
		for (c = 0; c < PROFILE_OFFCPU_NCLASSES; c++)
			fprintf(f, "  %*.3f", (int)strlen(profile_offcpu_class_name(c)),
				th->offcpu_ns[c] / 1e9);
		if (p->gil)
			fprintf(f, "  | %8llu  %7llu  %8llu  %7llu",
				(unsigned long long)th->gil_held, (unsigned long long)w.waiting,
				(unsigned long long)th->gil_released,
				(unsigned long long)th->gil_unknown);
		fputc('\n', f);
		unknown += th->gil_unknown;
	}
	if (p->gil && unknown)
		fprintf(f,
			"  %llu CPU samples were taken before the process's GIL was found (or it was "
			"not): their GIL state is unknown\n",
			(unsigned long long)unknown);
	count_line(f, p->offcpu_idle_hidden,
		   "threads blocked for the whole run are left out (--idle shows them)");
	count_line(
		f, p->offcpu_dropped,
		"off-CPU records lost (kernel ring buffer full): their intervals are not charged");
	count_line(f, p->offcpu_unmatched,
		   "off-CPU intervals whose start was lost are not charged");
	count_line(f, p->offcpu_unreadable,
		   "off-CPU intervals whose stack could not be read (its innermost frame) are not "
		   "charged");
	count_line(f, p->offcpu_no_python,
		   "off-CPU intervals of threads with no Python frame then (C threads, startup, "
		   "exit) are not charged");
	if (p->offcpu_unseen)
		fprintf(f,
			"  %llu off-CPU intervals whose start the kernel did not report (%.3f s in "
			"all) are not charged: where and why their threads waited is unknown\n",
			(unsigned long long)p->offcpu_unseen, p->offcpu_unseen_ns / 1e9);
	count_line(f, p->offcpu_inferred,
		   "off-CPU intervals ended where the kernel did not report the thread's return: "
		   "each ends where the thread's CPU time since says it came back");
}

/* The class with the most off-CPU samples of w, or NULL. */
static const char *main_class(const struct wall_stat *w)
{
	int c, best = -1;

	for (c = 0; c < PROFILE_OFFCPU_NCLASSES; c++)
		if (w->cls[c] && (best < 0 || w->cls[c] > w->cls[best]))
			best = c;
	return best < 0 ? "" : profile_offcpu_class_name(best);
}

struct ranked {
	uint32_t id;
	uint64_t key;
};

static int cmp_ranked(const void *a, const void *b)
{
	const struct ranked *x = a, *y = b;

	if (x->key != y->key)
		return x->key < y->key ? 1 : -1;
	return x->id < y->id ? -1 : x->id > y->id;
}

/* Ids of stats with a nonzero key, highest first; key: 0 wall, 1 off-CPU, 2 GIL waiting. */
static struct ranked *rank(const struct wall_stat *st, size_t n, int key, size_t *out)
{
	struct ranked *r = calloc(n + 1, sizeof(*r));
	size_t i;

	*out = 0;
	if (!r)
		return NULL;
	for (i = 0; i < n; i++) {
		uint64_t k = key == 0 ? st[i].on + st[i].off : key == 1 ? st[i].off : st[i].waiting;

		if (k)
			r[(*out)++] = (struct ranked){ (uint32_t)i, k };
	}
	qsort(r, *out, sizeof(*r), cmp_ranked);
	return r;
}

static bool pseudo(const struct profile *p, uint32_t func)
{
	return p->funcs[func].file && !strcmp(p->funcs[func].file, PROFILE_OFFCPU_FILE);
}

static void text_funcs(FILE *f, const struct profile *p, const struct profile_target *pp,
		       const struct wall_stat *st, unsigned top)
{
	size_t n, i, shown = 0;
	struct ranked *r = rank(st, p->nfuncs, 0, &n);
	char q[REPORT_FIELD];

	if (!r)
		return;
	fprintf(f, "\n  Functions by wall time (total: on-CPU + off-CPU)\n");
	fprintf(f, "   wall%%   wall s  on-CPU s  off-CPU s  mostly off-CPU in  function\n");
	for (i = 0; i < n && shown < top; i++) {
		const struct wall_stat *w = &st[r[i].id];

		if (pseudo(p, r[i].id))
			continue;
		fprintf(f, "  %5.1f%%  %7.2f  %8.2f  %9.2f  %-17s  %s\n",
			report_pct(w->on + w->off, pp->samples), report_seconds(p, w->on + w->off),
			report_seconds(p, w->on), report_seconds(p, w->off), main_class(w),
			text_clean(q, sizeof(q), p->funcs[r[i].id].qualname));
		shown++;
	}
	free(r);
}

static void text_lines(FILE *f, const struct profile *p, const struct profile_target *pp,
		       const struct wall_stat *st, unsigned top)
{
	size_t n, i;
	struct ranked *r = rank(st, p->nframes, 1, &n);
	char loc[64], q[REPORT_FIELD], file[REPORT_FIELD];

	if (!r)
		return;
	fprintf(f, "\n  Lines by off-CPU time (the line each thread blocked on)\n");
	fprintf(f, "   off-CPU s  on-CPU s  mostly             line\n");
	for (i = 0; i < n && i < top; i++) {
		const struct wall_stat *w = &st[r[i].id];
		const struct profile_frame *fr = &p->frames[r[i].id];

		fprintf(f, "   %9.2f  %8.2f  %-17s  %s:%s  %s\n", report_seconds(p, w->off),
			report_seconds(p, w->on), main_class(w),
			text_clean(file, sizeof(file), p->funcs[fr->func].file),
			report_line_str(fr->line, loc, sizeof(loc)),
			text_clean(q, sizeof(q), p->funcs[fr->func].qualname));
	}
	free(r);
}

static void text_gil(FILE *f, const struct profile *p, const struct wall_stat *st, unsigned top)
{
	size_t n, i, shown = 0;
	struct ranked *r = rank(st, p->nfuncs, 2, &n);
	char q[REPORT_FIELD];

	if (!r)
		return;
	fprintf(f, "\n  Functions that waited most for the GIL (samples)\n");
	fprintf(f, "   waiting     held  released  unknown  function\n");
	for (i = 0; i < n && shown < top; i++) {
		const struct wall_stat *w = &st[r[i].id];

		if (pseudo(p, r[i].id))
			continue;
		fprintf(f, "  %8llu  %7llu  %8llu  %7llu  %s\n", (unsigned long long)w->waiting,
			(unsigned long long)w->held, (unsigned long long)w->released,
			(unsigned long long)w->unknown,
			text_clean(q, sizeof(q), p->funcs[r[i].id].qualname));
		shown++;
	}
	if (!n)
		fprintf(f, "  (no thread waited for the GIL)\n");
	free(r);
}

void report_wall_text(FILE *f, const struct profile *p, const struct profile_target *pp,
		      const struct report_opts *o)
{
	struct wall_stat *funcs, *lines;

	if (!report_wall_on(p))
		return;
	text_threads(f, p, pp);
	if (report_wall_stats(p, pp, &funcs, &lines)) {
		fprintf(f, "  (out of memory)\n");
		return;
	}
	if (p->wall) {
		text_funcs(f, p, pp, funcs, o->top_functions);
		text_lines(f, p, pp, lines, o->top_lines);
	}
	if (p->gil)
		text_gil(f, p, funcs, o->top_functions);
	free(funcs);
	free(lines);
}

static void json_classes(FILE *f, const uint64_t *v, double scale)
{
	int c;

	fputc('{', f);
	for (c = 0; c < PROFILE_OFFCPU_NCLASSES; c++) {
		fprintf(f, "%s", c ? ", " : "");
		json_string(f, profile_offcpu_class_name(c));
		if (scale == 1)
			fprintf(f, ": %llu", (unsigned long long)v[c]);
		else
			fprintf(f, ": %.9g", v[c] * scale);
	}
	fputc('}', f);
}

void report_wall_json_thread(FILE *f, const struct profile *p, const struct profile_target *pp,
			     const struct profile_thread *th)
{
	struct wall_stat w;

	if (!report_wall_on(p))
		return;
	w = thread_stat(p, pp, th->tid);
	fprintf(f,
		", \"on_cpu\": %llu, \"off_cpu\": %llu, \"off_cpu_ns\": ", (unsigned long long)w.on,
		(unsigned long long)w.off);
	json_classes(f, th->offcpu_ns, 1);
	if (p->gil)
		fprintf(f,
			", \"gil\": {\"held\": %llu, \"waiting\": %llu, \"released\": %llu, "
			"\"unknown\": %llu}",
			(unsigned long long)th->gil_held, (unsigned long long)w.waiting,
			(unsigned long long)th->gil_released, (unsigned long long)th->gil_unknown);
}

void report_wall_json_stat(FILE *f, const struct profile *p, const struct wall_stat *w)
{
	if (!report_wall_on(p))
		return;
	fprintf(f, ", \"on_cpu\": %llu, \"off_cpu\": %llu, \"off_cpu_by_class\": ",
		(unsigned long long)w->on, (unsigned long long)w->off);
	json_classes(f, w->cls, 1);
	if (p->gil)
		fprintf(f,
			", \"gil\": {\"held\": %llu, \"waiting\": %llu, \"released\": %llu, "
			"\"unknown\": %llu}",
			(unsigned long long)w->held, (unsigned long long)w->waiting,
			(unsigned long long)w->released, (unsigned long long)w->unknown);
}

float *report_wall_frame_offshare(const struct profile *p)
{
	uint64_t *tot, *off;
	size_t *seen, t, i, j;
	float *share = NULL;

	if (!p->wall && !p->gil)
		return NULL;
	tot = calloc(p->nframes + 1, sizeof(*tot));
	off = calloc(p->nframes + 1, sizeof(*off));
	seen = calloc(p->nframes + 1, sizeof(*seen));
	share = calloc(p->nframes + 1, sizeof(*share));
	for (t = 0; tot && off && seen && share && t < p->ntargets; t++) {
		const struct profile_target *pp = &p->targets[t];

		for (i = 0; i < pp->nstacks; i++) {
			const struct profile_stack *s = &pp->stacks[i];
			bool is_off = profile__offcpu_class(p, s) >= 0;

			for (j = 0; j < s->nframes; j++) {
				uint32_t fr = s->frames[j];

				if (fr >= p->nframes || seen[fr] == ((t << 32) | (i + 1)))
					continue;
				seen[fr] = (t << 32) | (i + 1);
				tot[fr] += s->count;
				off[fr] += is_off ? s->count : 0;
			}
		}
	}
	for (i = 0; share && tot && off && i < p->nframes; i++)
		share[i] = tot[i] ? (float)off[i] / (float)tot[i] : 0;
	if (!tot || !off || !seen) {
		free(share);
		share = NULL;
	}
	free(tot);
	free(off);
	free(seen);
	return share;
}
