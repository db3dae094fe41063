// SPDX-License-Identifier: GPL-2.0-only
/*
 * The timeline as its writers walk it (report_timeline.h): each thread's
 * events in time, its stacks over time as nested slices, the names of its
 * events, and the counts of what the timeline lacks. Everything here reads
 * the model only, and a saved profile's timeline is anyone's: every stack
 * id and frame is checked again before it is followed.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "report/report_common.h"
#include "report_timeline.h"
#include "util/vec.h"

/* Frames a stack holds at most (PYPROF_MAX_DEPTH and the loader's bound). */
#define TL_MAX_DEPTH 1024

int tl_view__init(struct tl_view *v, const struct profile *p)
{
	const struct profile_timeline *t = &p->timeline;
	size_t i, cap = 0;

	memset(v, 0, sizeof(*v));
	v->p = p;
	v->t = t;
	v->period_ns = p->frequency_hz ? 1000000000 / p->frequency_hz : 10000000;
	if (!t->n)
		return 0;
	v->order = profile_timeline__order(t);
	if (!v->order)
		return -ENOMEM;
	for (i = 0; i < t->n; i++) {
		const struct profile_tl_event *e = &t->events[v->order[i]];
		struct tl_thread *th = v->nthreads ? &v->threads[v->nthreads - 1] : NULL;

		if (th && th->proc == e->proc && th->tid == e->tid) {
			th->n++;
			continue;
		}
		if (vec_grow((void **)&v->threads, &cap, v->nthreads + 1, sizeof(*v->threads))) {
			tl_view__free(v);
			return -ENOMEM;
		}
		v->threads[v->nthreads++] = (struct tl_thread){ e->proc, e->tid, i, 1 };
	}
	return 0;
}

void tl_view__free(struct tl_view *v)
{
	free(v->order);
	free(v->threads);
	memset(v, 0, sizeof(*v));
}

const uint32_t *tl_stack(const struct profile_timeline *t, uint32_t ref, uint32_t *n)
{
	const struct profile_tl_stack *s;

	*n = 0;
	if (ref >= t->nstacks)
		return NULL;
	s = &t->stacks[ref];
	if (s->off > t->nframes || s->n > t->nframes - s->off || s->n > TL_MAX_DEPTH)
		return NULL;
	*n = s->n;
	return t->frames + s->off;
}

/* The frames of a slice walk still open, outermost first, and when each began. */
struct open_frames {
	uint32_t frame[TL_MAX_DEPTH];
	int64_t since[TL_MAX_DEPTH];
	uint32_t n;
};

/*
 * The frames from keep up close at at, outermost first: viewers order
 * complete events by start, then longest first, and an equal span in the
 * order written, so a frame and its callee that began and ended together
 * must come caller first or they are drawn the other way round.
 */
static void close_from(struct open_frames *o, uint32_t keep, int64_t at, const struct tl_slices *cb)
{
	uint32_t d;

	for (d = keep; d < o->n; d++)
		cb->slice(cb->ctx, o->frame[d], d, o->since[d], at);
	if (o->n > keep)
		o->n = keep;
}

/* An off-CPU interval waits for the frames around it to close first (see close_from). */
struct pending_offcpu {
	const struct profile_tl_event *e;
	uint32_t depth;
	int64_t start, end;
};

static void flush_offcpu(struct pending_offcpu *q, const struct tl_slices *cb)
{
	if (q->e)
		cb->offcpu(cb->ctx, q->e, q->depth, q->start, q->end);
	q->e = NULL;
}

/* Where a CPU or off-CPU event's span is, after the slice before it ended at prev. */
static bool span(const struct tl_view *v, const struct profile_tl_event *e, bool any, int64_t prev,
		 int64_t *start, int64_t *end)
{
	if (e->kind == PROFILE_TL_CPU) {
		*end = e->t_ns;
		*start = e->t_ns - v->period_ns;
		if (any && *start - prev < v->period_ns / 2)
			*start = prev;
		return *end > *start; /* one inside the slice before it is not drawn twice */
	}
	*start = any && e->t_ns < prev ? prev : e->t_ns;
	*end = e->t_ns + (int64_t)e->dur_ns;
	if (*end < *start)
		*end = *start;
	return true;
}

int tl_thread__slices(const struct tl_view *v, const struct tl_thread *th,
		      const struct tl_slices *cb)
{
	struct open_frames *o = calloc(1, sizeof(*o));
	struct pending_offcpu q = {};
	int64_t prev = 0, start, end;
	bool any = false;
	size_t i;

	if (!o)
		return -ENOMEM;
	for (i = 0; i < th->n; i++) {
		const struct profile_tl_event *e = tl_event(v, th, i);
		const uint32_t *fr;
		uint32_t nf, k = 0;

		if ((e->kind != PROFILE_TL_CPU && e->kind != PROFILE_TL_OFFCPU) ||
		    !span(v, e, any, prev, &start, &end))
			continue;
		fr = tl_stack(v->t, e->ref, &nf);
		/* touching the slice before it (within half a period): the outer frames go on */
		if (any && start - prev < v->period_ns / 2)
			while (k < o->n && k < nf && o->frame[k] == fr[nf - 1 - k])
				k++;
		close_from(o, k, prev, cb);
		flush_offcpu(&q, cb);
		for (; k < nf; k++) {
			o->frame[k] = fr[nf - 1 - k];
			o->since[k] = start;
		}
		o->n = nf;
		if (e->kind == PROFILE_TL_OFFCPU)
			q = (struct pending_offcpu){ e, nf, start, end };
		prev = end;
		any = true;
	}
	close_from(o, 0, prev, cb);
	flush_offcpu(&q, cb);
	free(o);
	return 0;
}

uint32_t tl_python_frame(const struct profile *p, const uint32_t *frames, uint32_t n)
{
	uint32_t i;

	for (i = 0; i < n; i++)
		if (frames[i] < p->nframes && p->frames[frames[i]].func < p->nfuncs &&
		    p->funcs[p->frames[frames[i]].func].kind == PROFILE_FUNC_PYTHON)
			return frames[i];
	return UINT32_MAX;
}

/* " at FILE:LINE" of a stack's innermost Python frame (" in [unresolved]"), or "". */
static const char *at_line(const struct profile *p, const struct profile_timeline *t, uint32_t ref,
			   char *buf, size_t len)
{
	uint32_t n, fr;
	const uint32_t *frames = tl_stack(t, ref, &n);
	const struct profile_func *fn;

	fr = tl_python_frame(p, frames, n);
	if (fr == UINT32_MAX)
		return "";
	fn = &p->funcs[p->frames[fr].func];
	if (!fn->file[0]) /* a frame not named: "[unresolved]" */
		snprintf(buf, len, " in %s", fn->qualname);
	else if (p->frames[fr].line > 0)
		snprintf(buf, len, " at %s:%d", fn->file, p->frames[fr].line);
	else
		snprintf(buf, len, " at %s", fn->file);
	return buf;
}

char *tl_offcpu_name(const struct profile *p, const struct profile_timeline *t,
		     const struct profile_tl_event *e, char *buf, size_t len)
{
	char at[4200];

	snprintf(buf, len, "%s%s", profile_offcpu_class_name(e->arg),
		 at_line(p, t, e->ref, at, sizeof(at)));
	return buf;
}

char *tl_interval_name(const struct profile *p, const struct profile_timeline *t,
		       const struct profile_tl_event *e, char *buf, size_t len)
{
	char at[4200];

	if (e->kind == PROFILE_TL_GC) {
		snprintf(buf, len, "GC gen %u%s", e->arg, at_line(p, t, e->ref, at, sizeof(at)));
		return buf;
	}
	snprintf(buf, len, "import %s%s", e->ref < t->nstrings ? t->strings[e->ref] : "?",
		 e->arg & PROFILE_TL_IMPORT_OPEN     ? " (not finished)" :
		 !(e->arg & PROFILE_TL_IMPORT_FOUND) ? " (not found)" :
						       "");
	return buf;
}

char *tl_proc_event_name(const struct profile_tl_event *e, char *buf, size_t len)
{
	switch (e->kind) {
	case PROFILE_TL_START:
		if (e->arg == PROFILE_TL_FORKED)
			snprintf(buf, len, "process forked from pid %u", e->value);
		else if (e->arg == PROFILE_TL_EXECED)
			snprintf(buf, len, "process exec'd (profiled from its exec)");
		else
			snprintf(buf, len, "process running when first seen");
		break;
	case PROFILE_TL_FORK:
		snprintf(buf, len, "fork: child pid %u", e->value);
		break;
	case PROFILE_TL_EXEC:
		snprintf(buf, len, "exec");
		break;
	default:
		snprintf(buf, len, "exit");
		break;
	}
	return buf;
}

char *tl_summary(const struct profile *p, const char *version, char *buf, size_t len)
{
	const struct profile_timeline *t = &p->timeline;
	char counts[200];

	snprintf(buf, len,
		 "pybpfprof %s: %s profile at %u Hz, %.2f s, %s; timeline: %zu events, %llu "
		 "dropped (beyond the cap of %llu events, or no room for their stacks)",
		 version, p->mode, p->frequency_hz, p->duration_s,
		 report_counts(p, counts, sizeof(counts)), t->n,
		 (unsigned long long)profile_timeline__dropped(t), (unsigned long long)t->cap);
	return buf;
}

void report_timeline_text(FILE *f, const struct profile *p)
{
	const struct profile_timeline *t = &p->timeline;

	if (!t->on)
		return;
	fprintf(f, "timeline: %zu events kept, %llu dropped (at most %llu events%s)\n", t->n,
		(unsigned long long)profile_timeline__dropped(t), (unsigned long long)t->cap,
		profile_timeline__dropped(t) ? "; --timeline-events raises it" : "");
}

static const char *const kind_names[PROFILE_TL_NKINDS] = {
	"cpu", "offcpu", "gc", "import", "start", "fork", "exec", "exit",
};

void report_timeline_json(FILE *f, const struct profile *p)
{
	const struct profile_timeline *t = &p->timeline;
	int k;

	if (!t->on)
		return;
	fprintf(f,
		" \"timeline\": {\"events\": %zu, \"cap\": %llu, \"dropped\": %llu, \"by_kind\": {",
		t->n, (unsigned long long)t->cap, (unsigned long long)profile_timeline__dropped(t));
	for (k = 0; k < PROFILE_TL_NKINDS; k++)
		fprintf(f, "%s\"%s\": %llu", k ? ", " : "", kind_names[k],
			(unsigned long long)t->dropped[k]);
	fputs("}},\n", f);
}

int tl_gil_held(const struct profile_tl_event *e)
{
	if (e->kind == PROFILE_TL_CPU && PROFILE_TL_CPU_GIL(e->arg) == 1 + PROFILE_GIL_HELD)
		return 1;
	if ((e->kind == PROFILE_TL_CPU && PROFILE_TL_CPU_GIL(e->arg) == 1 + PROFILE_GIL_RELEASED) ||
	    (e->kind == PROFILE_TL_OFFCPU && e->arg == PROFILE_OFFCPU_GIL))
		return 0;
	return -1;
}
