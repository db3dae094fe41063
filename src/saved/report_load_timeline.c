// SPDX-License-Identifier: GPL-2.0-only
/*
 * A saved profile's timeline read back (report_json_model.c writes it;
 * doc/json-schema.md describes it): its processes, module names and
 * stacks interned again in the file's order, so that every id is the
 * file's, then its events as they were counted. Like the rest of the file
 * it is anyone's: the events are no more than its cap, every stack frame
 * exists, every id names what its kind says, and every time is bounded.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include "report_load.h"

/* Times and durations at most this (146 years): their sums cannot overflow. */
#define TL_MAX_NS (1LL << 62)
/* Processes a timeline may list (as --merge's "merged"). */
#define TL_MAX_PROCS (1u << 20)

static int ld_tl_procs(struct ld *l, const struct jval *v, struct profile_timeline *t)
{
	const char *name, *cmdline;
	size_t i, n = 0, k;
	long long pid;
	bool ended;
	char w[LD_WHERE];

	if (ld_array(l, v, "model.timeline.procs", 0, TL_MAX_PROCS, &n))
		return -EINVAL;
	for (i = 0; i < n; i++) {
		const struct jval *e = jv_at(v, i);

		ld_at(w, sizeof(w), "model.timeline.procs[%zu]", i);
		if (ld_array(l, e, w, 4, 4, &k) || ld_int(l, jv_at(e, 0), w, 0, INT_MAX, &pid) ||
		    ld_str(l, jv_at(e, 1), w, REPORT_LOAD_MAX_STR, &name) ||
		    ld_str(l, jv_at(e, 2), w, REPORT_LOAD_MAX_STR, &cmdline) ||
		    ld_bool(l, jv_at(e, 3), w, &ended))
			return -EINVAL;
		if (profile_timeline__add_proc(t, (int)pid, name, cmdline, ended))
			return -ENOMEM;
	}
	return 0;
}

/* Module names and stacks, each new: their index in the file is their id. */
static int ld_tl_tables(struct ld *l, const struct jval *tl, struct profile_timeline *t)
{
	const struct jval *strs = ld_get(l, tl, "model.timeline", "strings");
	const struct jval *stacks = ld_get(l, tl, "model.timeline", "stacks");
	uint32_t fr[REPORT_LOAD_MAX_DEPTH], nfr, id;
	size_t i, n = 0;
	const char *s;
	char w[LD_WHERE];

	if (ld_array(l, strs, "model.timeline.strings", 0, UINT32_MAX - 1, &n))
		return -EINVAL;
	for (i = 0; i < n; i++) {
		ld_at(w, sizeof(w), "model.timeline.strings[%zu]", i);
		if (ld_str(l, jv_at(strs, i), w, REPORT_LOAD_MAX_STR, &s))
			return -EINVAL;
		id = profile_timeline__string(t, s);
		if (id == UINT32_MAX)
			return -ENOMEM;
		if (id != i)
			return ld_fail(l, w, "the same string as model.timeline.strings[%u]", id);
	}
	if (ld_array(l, stacks, "model.timeline.stacks", 0, PROFILE_TL_MAX_FRAMES, &n))
		return -EINVAL;
	for (i = 0; i < n; i++) {
		ld_at(w, sizeof(w), "model.timeline.stacks");
		if (ld_frames(l, stacks, i, w, 1, fr, &nfr))
			return -EINVAL;
		ld_at(w, sizeof(w), "model.timeline.stacks[%zu]", i);
		if (t->nframes + nfr > PROFILE_TL_MAX_FRAMES)
			return ld_fail(l, w, "more than %u frames in all", PROFILE_TL_MAX_FRAMES);
		id = profile_timeline__stack(t, fr, nfr);
		if (id == UINT32_MAX)
			return -ENOMEM;
		if (id != i)
			return ld_fail(l, w, "the same stack as model.timeline.stacks[%u]", id);
	}
	return 0;
}

/* What an event's ref and arg may be, by its kind. */
static int ld_tl_check(struct ld *l, const char *w, const struct profile_timeline *t,
		       const struct profile_tl_event *e, long long ref)
{
	static const uint8_t max_arg[PROFILE_TL_NKINDS] = {
		[PROFILE_TL_CPU] = 15,
		[PROFILE_TL_OFFCPU] = PROFILE_OFFCPU_NCLASSES - 1,
		[PROFILE_TL_GC] = PROFILE_GC_GENS - 1,
		[PROFILE_TL_IMPORT] = PROFILE_TL_IMPORT_FOUND | PROFILE_TL_IMPORT_OPEN,
		[PROFILE_TL_START] = PROFILE_TL_NSTARTS - 1,
	};
	bool stack = e->kind <= PROFILE_TL_GC;

	if (e->arg > max_arg[e->kind])
		return ld_fail(l, w, "%u is no argument of an event of kind %u", e->arg, e->kind);
	if (e->proc >= t->nprocs)
		return ld_fail(l, w, "process %u does not exist (%zu processes)", e->proc,
			       t->nprocs);
	if (e->kind == PROFILE_TL_IMPORT && (ref < 0 || (size_t)ref >= t->nstrings))
		return ld_fail(l, w, "string %lld does not exist (%zu strings)", ref, t->nstrings);
	if (stack && ref >= 0 && (size_t)ref >= t->nstacks)
		return ld_fail(l, w, "stack %lld does not exist (%zu stacks)", ref, t->nstacks);
	if (e->kind > PROFILE_TL_IMPORT && ref >= 0)
		return ld_fail(l, w, "a process event with a stack or a name (%lld)", ref);
	return 0;
}

static int ld_tl_event(struct ld *l, const struct jval *v, const char *w,
		       struct profile_timeline *t)
{
	struct profile_tl_event e = {};
	long long x[8];
	size_t k;
	static const long long lo[8] = { 0, 0, 0, 0, 0, -1, 0, 0 };
	const long long hi[8] = {
		PROFILE_TL_NKINDS - 1, TL_MAX_NS,  TL_MAX_NS, UINT32_MAX - 1, UINT32_MAX,
		UINT32_MAX - 1,	       UINT32_MAX, UINT8_MAX
	};

	if (ld_array(l, v, w, 8, 8, &k))
		return -EINVAL;
	for (k = 0; k < 8; k++)
		if (ld_int(l, jv_at(v, k), w, lo[k], hi[k], &x[k]))
			return -EINVAL;
	e.kind = (uint8_t)x[0];
	e.t_ns = x[1];
	e.dur_ns = (uint64_t)x[2];
	e.proc = (uint32_t)x[3];
	e.tid = (uint32_t)x[4];
	e.ref = x[5] < 0 ? PROFILE_TL_NO_STACK : (uint32_t)x[5];
	e.value = (uint32_t)x[6];
	e.arg = (uint8_t)x[7];
	if (ld_tl_check(l, w, t, &e, x[5]))
		return -EINVAL;
	return profile_timeline__append(t, &e);
}

int ld_timeline(struct ld *l, const struct jval *m)
{
	const struct jval *tl = jv_get(m, "timeline"), *ev;
	struct profile_timeline *t = &l->p->timeline;
	uint64_t cap, start;
	size_t i, n = 0;
	char w[LD_WHERE];
	int err;

	if (!tl || jv_is_null(tl))
		return 0;
	if (ld_u64(l, ld_get(l, tl, "model.timeline", "cap"), "model.timeline.cap",
		   PROFILE_TL_MAX_CAP, &cap) ||
	    ld_u64(l, ld_get(l, tl, "model.timeline", "start_mono_ns"),
		   "model.timeline.start_mono_ns", LLONG_MAX, &start) ||
	    ld_u64s(l, ld_get(l, tl, "model.timeline", "dropped"), "model.timeline.dropped",
		    t->dropped, PROFILE_TL_NKINDS))
		return -EINVAL;
	if (!cap)
		return ld_fail(l, "model.timeline.cap", "0 is out of range (1 to %u)",
			       PROFILE_TL_MAX_CAP);
	t->on = true;
	t->cap = cap;
	t->start_mono_ns = start;
	err = ld_tl_procs(l, ld_get(l, tl, "model.timeline", "procs"), t);
	if (!err)
		err = ld_tl_tables(l, tl, t);
	ev = err ? NULL : ld_get(l, tl, "model.timeline", "events");
	if (!err && ld_array(l, ev, "model.timeline.events", 0, cap, &n))
		err = -EINVAL;
	for (i = 0; !err && i < n; i++) {
		ld_at(w, sizeof(w), "model.timeline.events[%zu]", i);
		err = ld_tl_event(l, jv_at(ev, i), w, t);
	}
	return err;
}
