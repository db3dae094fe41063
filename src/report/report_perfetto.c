// SPDX-License-Identifier: GPL-2.0-only
/*
 * Perfetto's native trace (-o run.perfetto-trace, .pftrace): the timeline as
 * protobuf TracePackets, written by hand with report_pbuf.c. Field numbers
 * are Perfetto's, as its public protos document them (checked against
 * google/perfetto ec5d16b14b, 2026-08-22; tests/fixtures/perfetto_trace.proto
 * is our own schema of the same numbers, which the tests decode with).
 *
 * One packet sequence: its first packet clears the incremental state and
 * interns every function name, source file, frame and callstack the CPU
 * samples use; then a track per process (ProcessDescriptor: pid, name,
 * command line) and per thread (ThreadDescriptor: its name), each thread's
 * GC pauses and imports on a track of their own beside it, and --gil's
 * GIL held as a counter track; then the events in time: CPU samples as
 * PerfSample packets (pid, tid, callstack, user or kernel mode), off-CPU
 * intervals as slices on the thread's track named by reason and line, GC
 * pauses and imports as slices, process starts, forks, execs and exits as
 * instants on the process's track. The run's counts are an instant at 0 on
 * a track of its own. Strings from the target are cleaned (control
 * characters and bytes that are not UTF-8 become '?') before they are
 * written: every string field is valid UTF-8.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "report/report_writer.h"
#include "report/report_common.h"
#include "report_pbuf.h"
#include "report_timeline.h"
#include "util/text.h"

/* Trace, TracePacket */
#define TRACE_PACKET 1
#define PKT_TIMESTAMP 8
#define PKT_SEQUENCE_ID 10 /* trusted_packet_sequence_id */
#define PKT_INTERNED_DATA 12
#define PKT_SEQUENCE_FLAGS 13
#define PKT_TRACK_EVENT 11
#define PKT_TRACK_DESCRIPTOR 60
#define PKT_PERF_SAMPLE 66
#define SEQ_INCREMENTAL_STATE_CLEARED 1
#define SEQ_NEEDS_INCREMENTAL_STATE 2
/* InternedData, InternedString, Mapping, Frame, Callstack */
#define INTERNED_FUNCTION_NAMES 5
#define INTERNED_FRAMES 6
#define INTERNED_CALLSTACKS 7
#define INTERNED_MAPPING_PATHS 17
#define INTERNED_SOURCE_PATHS 18
#define INTERNED_MAPPINGS 19
#define ISTRING_IID 1
#define ISTRING_STR 2
#define MAPPING_IID 1
#define MAPPING_PATH_STRING_IDS 7
#define FRAME_IID 1
#define FRAME_FUNCTION_NAME_ID 2
#define FRAME_MAPPING_ID 3
#define FRAME_REL_PC 4
#define FRAME_SOURCE_PATH_IID 5
#define FRAME_LINE_NUMBER 6
#define CALLSTACK_IID 1
#define CALLSTACK_FRAME_IDS 2 /* outermost first */
/* TrackDescriptor, ProcessDescriptor, ThreadDescriptor */
#define TRACK_UUID 1
#define TRACK_NAME 2
#define TRACK_PROCESS 3
#define TRACK_THREAD 4
#define TRACK_PARENT_UUID 5
#define TRACK_COUNTER 8
#define PROCESS_PID 1
#define PROCESS_CMDLINE 2
#define PROCESS_NAME 6
#define THREAD_PID 1
#define THREAD_TID 2
#define THREAD_NAME 5
/* TrackEvent, DebugAnnotation */
#define EVENT_DEBUG_ANNOTATIONS 4
#define EVENT_TYPE 9
#define EVENT_TRACK_UUID 11
#define EVENT_CATEGORIES 22
#define EVENT_NAME 23
#define EVENT_COUNTER_VALUE 30
#define TYPE_SLICE_BEGIN 1
#define TYPE_SLICE_END 2
#define TYPE_INSTANT 3
#define TYPE_COUNTER 4
#define ANNOTATION_BOOL 2
#define ANNOTATION_INT 4
#define ANNOTATION_STRING 6
#define ANNOTATION_NAME 10
/* PerfSample, Profiling.CpuMode */
#define SAMPLE_PID 2
#define SAMPLE_TID 3
#define SAMPLE_CALLSTACK_IID 4
#define SAMPLE_CPU_MODE 5
#define MODE_KERNEL 1
#define MODE_USER 2

#define SEQUENCE 1
#define MAPPING 1 /* the one mapping of every frame: "python" */

/* What one record of the event stream writes, in this order at one time. */
enum pf_what { PF_END, PF_BEGIN, PF_INSTANT, PF_COUNTER, PF_SAMPLE };
/* Which track of a thread a record is on. */
enum { TRACK_OWN, TRACK_COMPANION, TRACK_GIL, TRACKS_PER_THREAD };

struct pf_rec {
	int64_t ts;
	uint64_t dur;	 /* slices: to order nested ones */
	uint32_t ev;	 /* its event */
	uint32_t thread; /* index in the view's threads */
	uint8_t what;	 /* enum pf_what */
	uint8_t track;	 /* TRACK_* (slices, counters) */
	int8_t value;	 /* counters */
};

struct pf {
	FILE *f;
	const struct profile *p;
	const struct tl_view *v;
	struct pbuf pkt, msg, sub;
	struct pf_rec *recs;
	size_t nrecs;
	uint8_t *has; /* per thread: 1 << TRACK_* of the tracks it uses */
	uint64_t global_uuid;
};

/* A string field of target text, cleaned: valid UTF-8 without control characters. */
static void pb_text(struct pbuf *b, unsigned field, const char *s)
{
	char *copy = strdup(s ? s : "");

	if (!copy) {
		b->oom = true;
		return;
	}
	text_sanitize(copy);
	pb_bytes(b, field, copy, strlen(copy));
	free(copy);
}

/* The packet in f->pkt, written out as one Trace.packet; pkt emptied. */
static void put_packet(struct pf *f)
{
	struct pbuf out = {};

	pb_uint(&f->pkt, PKT_SEQUENCE_ID, SEQUENCE);
	pb_msg(&out, TRACE_PACKET, &f->pkt);
	if (!out.oom && out.n && fwrite(out.d, 1, out.n, f->f) != out.n)
		f->pkt.oom = true;
	f->pkt.oom |= out.oom;
	free(out.d);
}

static uint64_t proc_uuid(const struct pf *f, uint32_t proc)
{
	(void)f;
	return 1 + (uint64_t)proc;
}

static uint64_t thread_uuid(const struct pf *f, uint32_t thread, unsigned track)
{
	return 1 + f->v->t->nprocs + (uint64_t)thread * TRACKS_PER_THREAD + track;
}

/* What the CPU samples' callstacks use: frame_used[frame], stack_used[stack]. */
static void used_frames(const struct pf *f, uint8_t *frame_used, uint8_t *stack_used)
{
	const struct profile_timeline *t = f->v->t;
	size_t i;
	uint32_t k, n;

	for (i = 0; i < t->n; i++) {
		const uint32_t *fr;

		if (t->events[i].kind != PROFILE_TL_CPU || t->events[i].ref >= t->nstacks)
			continue;
		stack_used[t->events[i].ref] = 1;
		fr = tl_stack(t, t->events[i].ref, &n);
		for (k = 0; k < n; k++)
			if (fr[k] < f->p->nframes)
				frame_used[fr[k]] = 1;
	}
}

static void intern_frames(struct pf *f, const uint8_t *frame_used)
{
	const struct profile *p = f->p;
	uint8_t *func_done = calloc(p->nfuncs + 1, 1);
	size_t i;

	if (!func_done) {
		f->msg.oom = true;
		return;
	}
	for (i = 0; i < p->nframes; i++) {
		const struct profile_frame *fr = &p->frames[i];

		if (!frame_used[i] || fr->func >= p->nfuncs)
			continue;
		if (!func_done[fr->func]) {
			func_done[fr->func] = 1;
			pb_uint(&f->sub, ISTRING_IID, 1 + fr->func);
			pb_text(&f->sub, ISTRING_STR, p->funcs[fr->func].qualname);
			pb_msg(&f->msg, INTERNED_FUNCTION_NAMES, &f->sub);
			pb_uint(&f->sub, ISTRING_IID, 1 + fr->func);
			pb_text(&f->sub, ISTRING_STR, p->funcs[fr->func].file);
			pb_msg(&f->msg, INTERNED_SOURCE_PATHS, &f->sub);
		}
		pb_uint(&f->sub, FRAME_IID, 1 + i);
		pb_uint(&f->sub, FRAME_FUNCTION_NAME_ID, 1 + fr->func);
		pb_uint(&f->sub, FRAME_MAPPING_ID, MAPPING);
		pb_uint(&f->sub, FRAME_REL_PC, i); /* unique: frames are told apart by it */
		pb_uint(&f->sub, FRAME_SOURCE_PATH_IID, 1 + fr->func);
		if (fr->line > 0)
			pb_uint(&f->sub, FRAME_LINE_NUMBER, (uint64_t)fr->line);
		pb_msg(&f->msg, INTERNED_FRAMES, &f->sub);
	}
	free(func_done);
}

static void intern_stacks(struct pf *f, const uint8_t *stack_used)
{
	const struct profile_timeline *t = f->v->t;
	uint32_t s, k, n;

	for (s = 0; s < t->nstacks; s++) {
		const uint32_t *fr;

		if (!stack_used[s])
			continue;
		fr = tl_stack(t, s, &n);
		pb_uint(&f->sub, CALLSTACK_IID, 1 + (uint64_t)s);
		for (k = n; k-- > 0;)
			if (fr[k] < f->p->nframes)
				pb_uint(&f->sub, CALLSTACK_FRAME_IDS, 1 + (uint64_t)fr[k]);
		pb_msg(&f->msg, INTERNED_CALLSTACKS, &f->sub);
	}
}

/* The first packet: the sequence's interned names, frames and callstacks. */
static int interned(struct pf *f)
{
	uint8_t *frame_used = calloc(f->p->nframes + 1, 1);
	uint8_t *stack_used = calloc(f->v->t->nstacks + 1, 1);

	if (!frame_used || !stack_used) {
		free(frame_used);
		free(stack_used);
		return -ENOMEM;
	}
	used_frames(f, frame_used, stack_used);
	pb_uint(&f->sub, ISTRING_IID, MAPPING);
	pb_bytes(&f->sub, ISTRING_STR, "python", 6);
	pb_msg(&f->msg, INTERNED_MAPPING_PATHS, &f->sub);
	pb_uint(&f->sub, MAPPING_IID, MAPPING);
	pb_uint(&f->sub, MAPPING_PATH_STRING_IDS, MAPPING);
	pb_msg(&f->msg, INTERNED_MAPPINGS, &f->sub);
	intern_frames(f, frame_used);
	intern_stacks(f, stack_used);
	pb_uint(&f->pkt, PKT_TIMESTAMP, 0);
	pb_uint(&f->pkt, PKT_SEQUENCE_FLAGS, SEQ_INCREMENTAL_STATE_CLEARED);
	pb_msg(&f->pkt, PKT_INTERNED_DATA, &f->msg);
	put_packet(f);
	free(frame_used);
	free(stack_used);
	return 0;
}

static void descriptor(struct pf *f)
{
	pb_uint(&f->pkt, PKT_TIMESTAMP, 0);
	pb_msg(&f->pkt, PKT_TRACK_DESCRIPTOR, &f->msg);
	put_packet(f);
}

static void process_tracks(struct pf *f)
{
	const struct profile_timeline *t = f->v->t;
	char role[PROFILE_ROLE];
	uint32_t i;

	for (i = 0; i < t->nprocs; i++) {
		pb_uint(&f->msg, TRACK_UUID, proc_uuid(f, i));
		pb_uint(&f->sub, PROCESS_PID, (uint64_t)(uint32_t)t->procs[i].pid);
		pb_text(&f->sub, PROCESS_CMDLINE, t->procs[i].cmdline);
		pb_text(&f->sub, PROCESS_NAME,
			profile__tl_proc_name(f->p, &t->procs[i], role, sizeof(role)));
		pb_msg(&f->msg, TRACK_PROCESS, &f->sub);
		descriptor(f);
	}
}

/* A thread's companion track (GC and imports) or GIL counter, beside its own. */
static void side_track(struct pf *f, uint32_t j, unsigned track, const char *what, const char *name)
{
	char buf[PROFILE_TL_THREAD_NAME + 64];

	snprintf(buf, sizeof(buf), "%s: %s (tid %u)", what, name[0] ? name : "thread",
		 f->v->threads[j].tid);
	pb_uint(&f->msg, TRACK_UUID, thread_uuid(f, j, track));
	pb_uint(&f->msg, TRACK_PARENT_UUID, thread_uuid(f, j, TRACK_OWN));
	pb_text(&f->msg, TRACK_NAME, buf);
	if (track == TRACK_GIL)
		pb_bytes(&f->msg, TRACK_COUNTER, "", 0); /* a counter, with its defaults */
	descriptor(f);
}

static void thread_tracks(struct pf *f)
{
	const struct tl_view *v = f->v;
	uint32_t j;

	for (j = 0; j < v->nthreads; j++) {
		const struct tl_thread *th = &v->threads[j];
		const struct profile_tl_proc *pr = &v->t->procs[th->proc];
		char own[PROFILE_TL_THREAD_NAME];
		const char *name = profile__tl_thread_name(f->p, pr, th->tid, own, sizeof(own));

		pb_uint(&f->msg, TRACK_UUID, thread_uuid(f, j, TRACK_OWN));
		pb_uint(&f->sub, THREAD_PID, (uint64_t)(uint32_t)pr->pid);
		pb_uint(&f->sub, THREAD_TID, th->tid);
		if (name[0])
			pb_text(&f->sub, THREAD_NAME, name);
		pb_msg(&f->msg, TRACK_THREAD, &f->sub);
		descriptor(f);
		if (f->has[j] & 1 << TRACK_COMPANION)
			side_track(f, j, TRACK_COMPANION, "GC and imports", name);
		if (f->has[j] & 1 << TRACK_GIL)
			side_track(f, j, TRACK_GIL, "GIL held", name);
	}
}

static void add_rec(struct pf *f, struct pf_rec r)
{
	f->recs[f->nrecs++] = r;
	if (r.what == PF_BEGIN || r.what == PF_COUNTER)
		f->has[r.thread] |= 1 << r.track;
}

/* --gil: a change of the thread's GIL state, as a counter record. */
static void gil_rec(struct pf *f, uint32_t j, uint32_t ev, int *last)
{
	const struct profile_tl_event *e = &f->v->t->events[ev];
	int held = tl_gil_held(e);

	if (held < 0)
		return;
	if (held != *last)
		add_rec(f,
			(struct pf_rec){ e->t_ns, 0, ev, j, PF_COUNTER, TRACK_GIL, (int8_t)held });
	*last = held;
}

/* One thread's records; its off-CPU slices kept apart (a bad saved span is cut). */
static void thread_recs(struct pf *f, uint32_t j)
{
	const struct tl_thread *th = &f->v->threads[j];
	int64_t prev = 0, start, end;
	int last = -1;
	size_t i;

	for (i = 0; i < th->n; i++) {
		uint32_t ev = f->v->order[th->first + i];
		const struct profile_tl_event *e = &f->v->t->events[ev];

		end = e->t_ns + (int64_t)e->dur_ns;
		switch (e->kind) {
		case PROFILE_TL_CPU:
			add_rec(f, (struct pf_rec){ e->t_ns, 0, ev, j, PF_SAMPLE, 0, 0 });
			break;
		case PROFILE_TL_OFFCPU:
			start = e->t_ns < prev ? prev : e->t_ns;
			end = end < start ? start : end;
			add_rec(f, (struct pf_rec){ start, end - start, ev, j, PF_BEGIN, TRACK_OWN,
						    0 });
			add_rec(f,
				(struct pf_rec){ end, end - start, ev, j, PF_END, TRACK_OWN, 0 });
			prev = end;
			break;
		case PROFILE_TL_GC:
		case PROFILE_TL_IMPORT:
			add_rec(f, (struct pf_rec){ e->t_ns, e->dur_ns, ev, j, PF_BEGIN,
						    TRACK_COMPANION, 0 });
			add_rec(f, (struct pf_rec){ end, e->dur_ns, ev, j, PF_END, TRACK_COMPANION,
						    0 });
			break;
		default:
			add_rec(f, (struct pf_rec){ e->t_ns, 0, ev, j, PF_INSTANT, 0, 0 });
			break;
		}
		gil_rec(f, j, ev, &last);
	}
}

/*
 * Time, then ends before anything else at that time; nested slices that
 * begin together, the longer (or, equal, the later counted: the outer
 * import) first; that end together, the inner first.
 */
static int by_time(const void *a, const void *b)
{
	const struct pf_rec *x = a, *y = b;

	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	if (x->what != y->what)
		return x->what < y->what ? -1 : 1;
	if (x->what == PF_BEGIN && x->dur != y->dur)
		return x->dur > y->dur ? -1 : 1;
	if (x->what == PF_END && x->dur != y->dur)
		return x->dur < y->dur ? -1 : 1;
	if (x->ev != y->ev)
		return (x->what == PF_BEGIN) == (x->ev > y->ev) ? -1 : 1;
	return x->track < y->track ? -1 : x->track > y->track;
}

static int collect(struct pf *f)
{
	uint32_t j;

	f->recs = calloc(3 * f->v->t->n + 1, sizeof(*f->recs));
	f->has = calloc(f->v->nthreads + 1, 1);
	if (!f->recs || !f->has)
		return -ENOMEM;
	for (j = 0; j < f->v->nthreads; j++)
		if (f->v->threads[j].proc < f->v->t->nprocs)
			thread_recs(f, j);
	qsort(f->recs, f->nrecs, sizeof(*f->recs), by_time);
	return 0;
}

static void annotation_int(struct pbuf *ev, struct pbuf *a, const char *name, int64_t v)
{
	pb_bytes(a, ANNOTATION_NAME, name, strlen(name));
	pb_uint(a, ANNOTATION_INT, (uint64_t)v);
	pb_msg(ev, EVENT_DEBUG_ANNOTATIONS, a);
}

static void annotation_str(struct pbuf *ev, struct pbuf *a, const char *name, const char *v)
{
	pb_bytes(a, ANNOTATION_NAME, name, strlen(name));
	pb_text(a, ANNOTATION_STRING, v);
	pb_msg(ev, EVENT_DEBUG_ANNOTATIONS, a);
}

/* A slice's name, category and arguments, from its event. */
static void slice_begin(struct pf *f, const struct profile_tl_event *e)
{
	char name[4400];
	const char *cat = e->kind == PROFILE_TL_OFFCPU ? "off-CPU" :
			  e->kind == PROFILE_TL_GC     ? "gc" :
							 "import";

	if (e->kind == PROFILE_TL_OFFCPU)
		tl_offcpu_name(f->p, f->v->t, e, name, sizeof(name));
	else
		tl_interval_name(f->p, f->v->t, e, name, sizeof(name));
	pb_bytes(&f->msg, EVENT_CATEGORIES, cat, strlen(cat));
	pb_text(&f->msg, EVENT_NAME, name);
	annotation_int(&f->msg, &f->sub, "duration_ns", (int64_t)e->dur_ns);
	if (e->kind == PROFILE_TL_OFFCPU)
		annotation_str(&f->msg, &f->sub, "reason", profile_offcpu_class_name(e->arg));
	if (e->kind == PROFILE_TL_GC)
		annotation_int(&f->msg, &f->sub, "collected", e->value);
}

static void instant_event(struct pf *f, const struct profile_tl_event *e)
{
	char name[80];

	pb_bytes(&f->msg, EVENT_CATEGORIES, "process", 7);
	pb_text(&f->msg, EVENT_NAME, tl_proc_event_name(e, name, sizeof(name)));
	if (e->kind == PROFILE_TL_FORK || (e->kind == PROFILE_TL_START && e->value))
		annotation_int(&f->msg, &f->sub,
			       e->kind == PROFILE_TL_FORK ? "child_pid" : "parent_pid", e->value);
}

static void sample_packet(struct pf *f, const struct profile_tl_event *e)
{
	unsigned where = PROFILE_TL_CPU_WHERE(e->arg);

	pb_uint(&f->msg, SAMPLE_PID, (uint64_t)(uint32_t)f->v->t->procs[e->proc].pid);
	pb_uint(&f->msg, SAMPLE_TID, e->tid);
	if (e->ref < f->v->t->nstacks)
		pb_uint(&f->msg, SAMPLE_CALLSTACK_IID, 1 + (uint64_t)e->ref);
	if (where)
		pb_uint(&f->msg, SAMPLE_CPU_MODE,
			where == 1 + PROFILE_WHERE_SYSTEM ? MODE_KERNEL : MODE_USER);
	pb_uint(&f->pkt, PKT_SEQUENCE_FLAGS, SEQ_NEEDS_INCREMENTAL_STATE);
	pb_msg(&f->pkt, PKT_PERF_SAMPLE, &f->msg);
}

static void record(struct pf *f, const struct pf_rec *r)
{
	const struct profile_tl_event *e = &f->v->t->events[r->ev];
	static const uint8_t type[] = { [PF_END] = TYPE_SLICE_END,
					[PF_BEGIN] = TYPE_SLICE_BEGIN,
					[PF_INSTANT] = TYPE_INSTANT,
					[PF_COUNTER] = TYPE_COUNTER };

	pb_uint(&f->pkt, PKT_TIMESTAMP, (uint64_t)r->ts);
	if (r->what == PF_SAMPLE) {
		sample_packet(f, e);
		put_packet(f);
		return;
	}
	pb_uint(&f->msg, EVENT_TYPE, type[r->what]);
	pb_uint(&f->msg, EVENT_TRACK_UUID,
		r->what == PF_INSTANT ? proc_uuid(f, e->proc) :
					thread_uuid(f, r->thread, r->track));
	if (r->what == PF_BEGIN)
		slice_begin(f, e);
	else if (r->what == PF_INSTANT)
		instant_event(f, e);
	else if (r->what == PF_COUNTER)
		pb_uint(&f->msg, EVENT_COUNTER_VALUE, (uint64_t)r->value);
	pb_msg(&f->pkt, PKT_TRACK_EVENT, &f->msg);
	put_packet(f);
}

/* The run's counts, where the trace starts: its own track, an instant at 0. */
static void summary(struct pf *f, const struct report_opts *o)
{
	const struct profile_timeline *t = f->v->t;
	struct report_totals tot = report_totals(f->p);
	char buf[600];

	pb_uint(&f->msg, TRACK_UUID, f->global_uuid);
	pb_bytes(&f->msg, TRACK_NAME, "pybpfprof", 9);
	descriptor(f);
	pb_uint(&f->pkt, PKT_TIMESTAMP, 0);
	pb_uint(&f->msg, EVENT_TYPE, TYPE_INSTANT);
	pb_uint(&f->msg, EVENT_TRACK_UUID, f->global_uuid);
	pb_text(&f->msg, EVENT_NAME, tl_summary(f->p, o->tool_version, buf, sizeof(buf)));
	annotation_int(&f->msg, &f->sub, "start_monotonic_ns", (int64_t)t->start_mono_ns);
	annotation_int(&f->msg, &f->sub, "start_unix_ns", f->p->start_unix_ns);
	annotation_int(&f->msg, &f->sub, "frequency_hz", f->p->frequency_hz);
	annotation_int(&f->msg, &f->sub, "samples", (int64_t)tot.samples);
	annotation_int(&f->msg, &f->sub, "dropped", (int64_t)f->p->counts.dropped);
	annotation_int(&f->msg, &f->sub, "truncated", (int64_t)tot.truncated);
	annotation_int(&f->msg, &f->sub, "unresolved", (int64_t)tot.unresolved);
	annotation_int(&f->msg, &f->sub, "partial", (int64_t)tot.partial);
	annotation_int(&f->msg, &f->sub, "timeline_events", (int64_t)t->n);
	annotation_int(&f->msg, &f->sub, "timeline_dropped", (int64_t)profile_timeline__dropped(t));
	annotation_int(&f->msg, &f->sub, "timeline_cap", (int64_t)t->cap);
	pb_msg(&f->pkt, PKT_TRACK_EVENT, &f->msg);
	put_packet(f);
}

static int write_perfetto(FILE *out, const struct profile *p, const struct report_opts *o)
{
	struct tl_view v;
	struct pf f = { .f = out, .p = p, .v = &v };
	int err = tl_view__init(&v, p);
	size_t i;

	if (!err)
		err = collect(&f);
	if (!err)
		err = interned(&f);
	if (!err) {
		f.global_uuid = thread_uuid(&f, (uint32_t)v.nthreads, 0);
		summary(&f, o);
		process_tracks(&f);
		thread_tracks(&f);
		for (i = 0; i < f.nrecs; i++)
			record(&f, &f.recs[i]);
	}
	if (!err && !ferror(out) && (f.pkt.oom || f.msg.oom || f.sub.oom))
		err = -ENOMEM;
	free(f.pkt.d);
	free(f.msg.d);
	free(f.sub.d);
	free(f.recs);
	free(f.has);
	tl_view__free(&v);
	return err ? err : ferror(out) ? -EIO : 0;
}

const struct report_writer report_perfetto = {
	.name = "perfetto",
	.exts = { ".perfetto-trace", ".pftrace" },
	.write = write_perfetto,
	.timeline = true,
};
