// SPDX-License-Identifier: GPL-2.0-only
/*
 * Chrome's trace event JSON (-o run.trace.json), the timeline as Perfetto,
 * Chrome's trace viewer, the Firefox Profiler and speedscope import it:
 * per thread, its Python stacks over time as nested complete ("X") events,
 * one per frame for as long as consecutive samples kept it, and each
 * off-CPU interval as an "X" event of its exact span within the stack it
 * left with, named by its reason and line ("sleep at app.py:23"). GC pauses
 * and imports do not nest with the samples' slices, so each thread's go on
 * a companion track of their own (tid + 2^30: no Linux tid reaches 2^22),
 * named after it. Process starts, forks, execs and exits are instants on
 * their process, the GIL (--gil) a counter per thread, and the run's counts
 * (dropped, truncated, ... and the timeline's own) an instant at 0 and
 * "otherData". Times are microseconds since the run's start, to the ns.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "report/report_writer.h"
#include "report/report_common.h"
#include "report_timeline.h"

/* The companion track of a thread's GC pauses and imports. */
#define COMPANION_TID (1u << 30)

struct tj {
	FILE *f;
	const struct tl_view *v;
	const struct tl_thread *th;
	int pid;
	bool first; /* no event written yet */
};

/* ns as JSON microseconds, exactly: "12345.678". */
static void us(FILE *f, int64_t ns)
{
	if (ns < 0)
		ns = 0;
	fprintf(f, "%lld.%03lld", (long long)(ns / 1000), (long long)(ns % 1000));
}

/* The start of an event object: {"ph": PH, "pid": .., "tid": .., "ts": .., */
static void head(struct tj *j, const char *ph, uint32_t tid, int64_t ts)
{
	fputs(j->first ? "\n" : ",\n", j->f);
	j->first = false;
	fprintf(j->f, "{\"ph\": \"%s\", \"pid\": %d, \"tid\": %u, \"ts\": ", ph, j->pid, tid);
	us(j->f, ts);
}

static void complete(struct tj *j, uint32_t tid, const char *cat, const char *name, int64_t start,
		     int64_t end)
{
	head(j, "X", tid, start);
	fputs(", \"dur\": ", j->f);
	us(j->f, end - start);
	fprintf(j->f, ", \"cat\": \"%s\", \"name\": ", cat);
	json_string(j->f, name);
	fputc('}', j->f);
}

static void on_slice(void *ctx, uint32_t frame, uint32_t depth, int64_t start, int64_t end)
{
	struct tj *j = ctx;
	char label[600];

	(void)depth;
	complete(j, j->th->tid, "python", report_frame_label(j->v->p, frame, label, sizeof(label)),
		 start, end);
}

static void on_offcpu(void *ctx, const struct profile_tl_event *e, uint32_t depth, int64_t start,
		      int64_t end)
{
	struct tj *j = ctx;
	char name[4400];

	(void)depth;
	complete(j, j->th->tid, "off-CPU", tl_offcpu_name(j->v->p, j->v->t, e, name, sizeof(name)),
		 start, end);
}

static void metadata(struct tj *j, uint32_t tid, const char *what, const char *name)
{
	fputs(j->first ? "\n" : ",\n", j->f);
	j->first = false;
	fprintf(j->f,
		"{\"ph\": \"M\", \"pid\": %d, \"tid\": %u, \"name\": \"%s\", \"args\": "
		"{\"name\": ",
		j->pid, tid, what);
	json_string(j->f, name);
	fputs("}}", j->f);
}

/* A thread's names: its own, and its companion track's when it has GC or imports. */
static void thread_names(struct tj *j, const struct profile_tl_proc *pr, bool companion)
{
	char own[PROFILE_TL_THREAD_NAME], buf[PROFILE_TL_THREAD_NAME + 64];
	const char *name = profile__tl_thread_name(j->v->p, pr, j->th->tid, own, sizeof(own));

	if (name[0])
		metadata(j, j->th->tid, "thread_name", name);
	if (!companion)
		return;
	snprintf(buf, sizeof(buf), "GC and imports: %s (tid %u)", name[0] ? name : "thread",
		 j->th->tid);
	metadata(j, COMPANION_TID | j->th->tid, "thread_name", buf);
}

/* --gil: the GIL held (1) or not (0) at each change, as a counter of the thread. */
static void gil(struct tj *j, const struct profile_tl_event *e, int *last)
{
	int held = tl_gil_held(e);

	if (held < 0 || held == *last)
		return;
	*last = held;
	head(j, "C", j->th->tid, e->t_ns);
	fprintf(j->f, ", \"name\": \"GIL held (tid %u)\", \"args\": {\"held\": %d}}", j->th->tid,
		held);
}

static void instant(struct tj *j, const struct profile_tl_event *e)
{
	char name[80];

	head(j, "i", j->th->tid, e->t_ns);
	fputs(", \"s\": \"p\", \"cat\": \"process\", \"name\": ", j->f);
	json_string(j->f, tl_proc_event_name(e, name, sizeof(name)));
	fputc('}', j->f);
}

/* Everything of one thread but its stacks: GC, imports, process events, the GIL. */
static void thread_events(struct tj *j)
{
	char name[4400];
	int last_gil = -1;
	size_t i;

	for (i = 0; i < j->th->n; i++) {
		const struct profile_tl_event *e = tl_event(j->v, j->th, i);

		if (e->kind == PROFILE_TL_GC || e->kind == PROFILE_TL_IMPORT)
			complete(j, COMPANION_TID | j->th->tid,
				 e->kind == PROFILE_TL_GC ? "gc" : "import",
				 tl_interval_name(j->v->p, j->v->t, e, name, sizeof(name)), e->t_ns,
				 e->t_ns + (int64_t)e->dur_ns);
		else if (e->kind >= PROFILE_TL_START)
			instant(j, e);
		gil(j, e, &last_gil);
	}
}

static bool has_companion(const struct tl_view *v, const struct tl_thread *th)
{
	size_t i;

	for (i = 0; i < th->n; i++)
		if (tl_event(v, th, i)->kind == PROFILE_TL_GC ||
		    tl_event(v, th, i)->kind == PROFILE_TL_IMPORT)
			return true;
	return false;
}

static int write_threads(struct tj *j)
{
	const struct tl_view *v = j->v;
	const struct tl_slices cb = { j, on_slice, on_offcpu };
	uint32_t proc = UINT32_MAX;
	size_t i;

	for (i = 0; i < v->nthreads; i++) {
		const struct profile_tl_proc *pr;
		char name[300];

		j->th = &v->threads[i];
		if (j->th->proc >= v->t->nprocs)
			continue;
		pr = &v->t->procs[j->th->proc];
		j->pid = pr->pid;
		if (j->th->proc != proc) {
			proc = j->th->proc;
			metadata(j, (uint32_t)pr->pid, "process_name",
				 profile__tl_proc_name(v->p, pr, name, sizeof(name)));
		}
		thread_names(j, pr, has_companion(v, j->th));
		if (tl_thread__slices(v, j->th, &cb))
			return -ENOMEM;
		thread_events(j);
	}
	return 0;
}

static void other_data(FILE *f, const struct profile *p, const struct report_opts *o)
{
	const struct profile_timeline *t = &p->timeline;
	struct report_totals tot = report_totals(p);

	fputs("\"otherData\": {\"tool\": \"pybpfprof\", \"version\": ", f);
	json_string(f, o->tool_version);
	fputs(", \"mode\": ", f);
	json_string(f, p->mode);
	fprintf(f,
		", \"frequency_hz\": %u, \"duration_s\": %.3f, \"start_monotonic_ns\": %llu, "
		"\"start_unix_ns\": %lld, \"samples\": %llu, \"dropped\": %llu, \"truncated\": "
		"%llu, \"unresolved\": %llu, \"partial\": %llu, \"timeline_events\": %zu, "
		"\"timeline_dropped\": %llu, \"timeline_cap\": %llu}",
		p->frequency_hz, p->duration_s, (unsigned long long)t->start_mono_ns,
		p->start_unix_ns > 0 ? p->start_unix_ns : 0, (unsigned long long)tot.samples,
		(unsigned long long)p->counts.dropped, (unsigned long long)tot.truncated,
		(unsigned long long)tot.unresolved, (unsigned long long)tot.partial, t->n,
		(unsigned long long)profile_timeline__dropped(t), (unsigned long long)t->cap);
}

static int write_trace_json(FILE *f, const struct profile *p, const struct report_opts *o)
{
	struct tj j = { .f = f, .first = true };
	struct tl_view v;
	char summary[600];
	int err = tl_view__init(&v, p);

	if (err)
		return err;
	j.v = &v;
	fputs("{\"traceEvents\": [", f);
	/* the counts first, where every viewer shows them: a global instant at 0 */
	head(&j, "i", 0, 0);
	fputs(", \"s\": \"g\", \"cat\": \"pybpfprof\", \"name\": ", f);
	json_string(f, tl_summary(p, o->tool_version, summary, sizeof(summary)));
	fputc('}', f);
	err = write_threads(&j);
	fputs("],\n\"displayTimeUnit\": \"ms\",\n", f);
	other_data(f, p, o);
	fputs("}\n", f);
	tl_view__free(&v);
	return err ? err : ferror(f) ? -EIO : 0;
}

const struct report_writer report_trace_json = {
	.name = "trace-json",
	.exts = { ".trace.json" },
	.write = write_trace_json,
	.timeline = true,
};
