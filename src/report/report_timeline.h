/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What the timeline writers (report_trace_json.c, report_perfetto.c) share:
 * the timeline walked thread by thread in time, each thread's stacks over
 * time as nested slices (CPU samples and off-CPU intervals), the names they
 * give events, and the counts every output says. The text and JSON reports
 * say the counts too (report_timeline_text, report_timeline_json).
 */
#ifndef PYBPFPROF_REPORT_TIMELINE_H
#define PYBPFPROF_REPORT_TIMELINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "profile/profile.h"

/* One thread's stream: order[first, first + n) are its events, in time. */
struct tl_thread {
	uint32_t proc, tid;
	size_t first, n;
};

struct tl_view {
	const struct profile *p;
	const struct profile_timeline *t;
	uint32_t *order;
	struct tl_thread *threads;
	size_t nthreads;
	int64_t period_ns; /* what one CPU sample stands for: 1 / frequency */
};

/* The view of p's timeline (empty without one). 0 or -ENOMEM. */
int tl_view__init(struct tl_view *v, const struct profile *p);
void tl_view__free(struct tl_view *v);

static inline const struct profile_tl_event *tl_event(const struct tl_view *v,
						      const struct tl_thread *th, size_t i)
{
	return &v->t->events[v->order[th->first + i]];
}

/* A stack's frames (innermost first) and count; none for PROFILE_TL_NO_STACK or a bad id. */
const uint32_t *tl_stack(const struct profile_timeline *t, uint32_t ref, uint32_t *n);

/*
 * A thread's stacks over time: a CPU sample stands for the period before it
 * (from the end of the slice before it when that is nearer than half a
 * period, so a thread sampled all along is drawn without gaps), an off-CPU
 * interval for its exact span; consecutive ones that touch share their
 * common outer frames. slice() gets each frame's span when it closes
 * (depth 0 the outermost; those closing together outermost first);
 * offcpu() each off-CPU interval, within the frames of its stack, at depth
 * its stack's length, after the frames around it that close when it ends:
 * a caller always comes before a callee of the same span.
 */
struct tl_slices {
	void *ctx;
	void (*slice)(void *ctx, uint32_t frame, uint32_t depth, int64_t start, int64_t end);
	void (*offcpu)(void *ctx, const struct profile_tl_event *e, uint32_t depth, int64_t start,
		       int64_t end);
};
int tl_thread__slices(const struct tl_view *v, const struct tl_thread *th,
		      const struct tl_slices *cb);

/* "sleep at /srv/app.py:23": an off-CPU interval's reason and its innermost Python line. */
char *tl_offcpu_name(const struct profile *p, const struct profile_timeline *t,
		     const struct profile_tl_event *e, char *buf, size_t len);
/* "GC gen 2 at /srv/app.py:30", "import json", "import x (not found)". */
char *tl_interval_name(const struct profile *p, const struct profile_timeline *t,
		       const struct profile_tl_event *e, char *buf, size_t len);
/* "fork: pid 1235", "exec", "exit", "start: forked from pid 1234", ... */
char *tl_proc_event_name(const struct profile_tl_event *e, char *buf, size_t len);
/* The innermost Python frame of a stack (its line), or UINT32_MAX. */
/* The GIL as event e shows it (--gil): 1 held, 0 not held (released, or waited for), -1 unsaid. */
int tl_gil_held(const struct profile_tl_event *e);
uint32_t tl_python_frame(const struct profile *p, const uint32_t *frames, uint32_t n);

/*
 * The run in one sentence, with every count of what is missing: "pybpfprof
 * 0.1.0: wall profile at 99 Hz, N samples (D dropped, ...); timeline: E
 * events, X dropped beyond the cap of C".
 */
char *tl_summary(const struct profile *p, const char *version, char *buf, size_t len);

/* The counts of the timeline in the text report's header and the JSON report. */
void report_timeline_text(FILE *f, const struct profile *p);
void report_timeline_json(FILE *f, const struct profile *p);

#endif
