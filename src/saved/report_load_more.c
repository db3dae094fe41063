// SPDX-License-Identifier: GPL-2.0-only
/*
 * The saved profile's per-process sections of the optional modes: --calls
 * edges and histograms, --gc collections, --imports, and --mem stacks,
 * timeline and events. Every index is checked against the tables already
 * loaded; imports may only nest in earlier ones, and not too deep, so that
 * the writers' walks of the import tree end.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "util/vec.h"
#include "report_load.h"

/* Nested imports at most (the writers walk the tree recursively). */
#define LD_MAX_IMPORT_DEPTH 256

/*
 * Each of n entries' key (a call edge, a function) once: seen maps a key to
 * 1 + its entry. A run writes each once; appending without profile.c's
 * search keeps a crafted file's millions of entries linear.
 */
static int ld_unique(struct ld *l, struct hashmap *seen, uint64_t key, size_t i, const char *where,
		     const char *what)
{
	uint64_t *slot = hashmap__find(seen, key);

	if (slot)
		return ld_fail(l, where, "the same %s as entry %llu", what,
			       (unsigned long long)*slot - 1);
	return hashmap__set(seen, key, i + 1);
}

/* [func, caller, calls, inclusive_ns, exclusive_ns, max_ns], each edge once. */
static int load_call(struct ld *l, const struct jval *e, const char *w, struct profile_target *pp,
		     struct hashmap *seen)
{
	struct profile_call_edge *c = &pp->calls[pp->ncalls];
	long long func, caller;
	uint64_t x[4];
	size_t k;
	int err;

	if (ld_array(l, e, w, 6, 6, &k) ||
	    ld_int(l, jv_at(e, 0), w, 0, (long long)l->p->nfuncs - 1, &func) ||
	    ld_int(l, jv_at(e, 1), w, -1, (long long)l->p->nfuncs - 1, &caller))
		return -EINVAL;
	for (k = 0; k < 4; k++)
		if (ld_u64(l, jv_at(e, 2 + k), w, UINT64_MAX, &x[k]))
			return -EINVAL;
	*c = (struct profile_call_edge){ (uint32_t)func, caller < 0 ? UINT32_MAX : (uint32_t)caller,
					 x[0],		 x[1],
					 x[2],		 x[3] };
	err = ld_unique(l, seen, (uint64_t)c->func << 32 | c->caller, pp->ncalls, w, "call edge");
	if (!err)
		pp->ncalls++;
	return err;
}

static int load_calls(struct ld *l, const struct jval *v, const char *where,
		      struct profile_target *pp)
{
	struct hashmap seen;
	size_t i, n = 0;
	char w[LD_WHERE];
	int err;

	if (ld_array(l, v, where, 0, SIZE_MAX, &n))
		return -EINVAL;
	hashmap__init(&seen);
	err = 0;
	if (vec_reserve((void **)&pp->calls, &pp->cap_calls, pp->ncalls + n, sizeof(*pp->calls)) ||
	    hashmap__reserve(&seen, n))
		err = -ENOMEM;
	for (i = 0; !err && i < n; i++) {
		ld_at(w, sizeof(w), "%s[%zu]", where, i);
		err = load_call(l, jv_at(v, i), w, pp, &seen);
	}
	hashmap__free(&seen);
	return err;
}

static int load_hists(struct ld *l, const struct jval *v, const char *where,
		      struct profile_target *pp)
{
	uint64_t b[PROFILE_HIST_BUCKETS];
	struct hashmap seen;
	size_t i, n = 0, k;
	long long func;
	char w[LD_WHERE];
	int err;

	if (ld_array(l, v, where, 0, SIZE_MAX, &n))
		return -EINVAL;
	hashmap__init(&seen);
	err = 0;
	if (vec_reserve((void **)&pp->hists, &pp->cap_hists, pp->nhists + n, sizeof(*pp->hists)) ||
	    hashmap__reserve(&seen, n))
		err = -ENOMEM;
	for (i = 0; !err && i < n; i++) {
		const struct jval *e = jv_at(v, i);
		struct profile_call_hist *h = &pp->hists[pp->nhists];

		ld_at(w, sizeof(w), "%s[%zu]", where, i);
		if (ld_array(l, e, w, 2, 2, &k) ||
		    ld_int(l, jv_at(e, 0), w, 0, (long long)l->p->nfuncs - 1, &func) ||
		    ld_u64s(l, jv_at(e, 1), w, b, PROFILE_HIST_BUCKETS)) {
			err = -EINVAL;
			break;
		}
		h->func = (uint32_t)func;
		memcpy(h->buckets, b, sizeof(b));
		err = ld_unique(l, &seen, h->func, pp->nhists, w, "function's histogram");
		pp->nhists += !err;
	}
	hashmap__free(&seen);
	return err;
}

/* A stack's frames in an array of its own (one slot at least: a GC stack may have none). */
static uint32_t *frames_dup(const uint32_t *fr, uint32_t n)
{
	uint32_t *out = malloc((n ? n : 1) * sizeof(*fr));

	if (out)
		memcpy(out, fr, n * sizeof(*fr));
	return out;
}

static int gc_stat(struct ld *l, const struct jval *v, const char *where,
		   struct profile_gc_stat *st)
{
	uint64_t x[4];

	if (ld_u64s(l, v, where, x, 4))
		return -EINVAL;
	*st = (struct profile_gc_stat){ x[0], x[1], x[2], x[3] };
	return 0;
}

static int load_gc(struct ld *l, const struct jval *v, const char *where, struct profile_target *pp)
{
	struct profile_gc *gc = &pp->gc;
	const struct jval *gens, *stacks;
	uint32_t fr[REPORT_LOAD_MAX_DEPTH], nfr;
	size_t i, n = 0, k;
	char w[LD_WHERE];

	ld_at(w, sizeof(w), "%s.all", where);
	if (gc_stat(l, ld_get(l, v, where, "all"), w, &gc->all))
		return -EINVAL;
	ld_at(w, sizeof(w), "%s.gen", where);
	gens = ld_get(l, v, where, "gen");
	if (ld_array(l, gens, w, PROFILE_GC_GENS, PROFILE_GC_GENS, &n))
		return -EINVAL;
	for (i = 0; i < n; i++)
		if (gc_stat(l, jv_at(gens, i), w, &gc->gen[i]))
			return -EINVAL;
	ld_at(w, sizeof(w), "%s.stacks", where);
	stacks = ld_get(l, v, where, "stacks");
	if (ld_array(l, stacks, w, 0, SIZE_MAX, &n))
		return -EINVAL;
	for (i = 0; i < n; i++) {
		const struct jval *e = jv_at(stacks, i);
		struct profile_gc_stack *s;

		ld_at(w, sizeof(w), "%s.stacks[%zu]", where, i);
		if (ld_array(l, e, w, 2, 2, &k) || ld_frames(l, e, 0, w, 0, fr, &nfr))
			return -EINVAL;
		if (vec_grow((void **)&gc->stacks, &gc->cap_stacks, gc->nstacks + 1,
			     sizeof(*gc->stacks)))
			return -ENOMEM;
		s = &gc->stacks[gc->nstacks];
		memset(s, 0, sizeof(*s));
		s->frames = frames_dup(fr, nfr);
		if (!s->frames)
			return -ENOMEM;
		s->nframes = nfr;
		gc->nstacks++;
		if (gc_stat(l, jv_at(e, 1), w, &s->stat))
			return -EINVAL;
	}
	return 0;
}

/* [module, tid, parent, start_ns, ns, found, done]; a parent is an earlier import. */
static int load_imports(struct ld *l, const struct jval *v, const char *where,
			struct profile_target *pp)
{
	uint16_t *depth = NULL;
	size_t i, n = 0, k;
	long long parent;
	uint64_t tid, start, ns;
	const char *mod;
	char w[LD_WHERE];
	int err = -EINVAL;

	if (ld_array(l, v, where, 0, 1u << 24, &n))
		return -EINVAL;
	depth = calloc(n + 1, sizeof(*depth));
	if (!depth ||
	    vec_grow((void **)&pp->imports, &pp->cap_imports, n + 1, sizeof(*pp->imports)))
		err = -ENOMEM;
	for (i = 0; depth && pp->imports && i < n; i++) {
		const struct jval *e = jv_at(v, i);
		struct profile_import *im = &pp->imports[i];

		ld_at(w, sizeof(w), "%s[%zu]", where, i);
		if (ld_array(l, e, w, 7, 7, &k) ||
		    ld_str(l, jv_at(e, 0), w, REPORT_LOAD_MAX_STR, &mod) ||
		    ld_u64(l, jv_at(e, 1), w, UINT32_MAX, &tid) ||
		    ld_int(l, jv_at(e, 2), w, -1, (long long)i - 1, &parent) ||
		    ld_u64(l, jv_at(e, 3), w, UINT64_MAX, &start) ||
		    ld_u64(l, jv_at(e, 4), w, UINT64_MAX, &ns))
			goto out;
		memset(im, 0, sizeof(*im));
		if (ld_bool(l, jv_at(e, 5), w, &im->found) || ld_bool(l, jv_at(e, 6), w, &im->done))
			goto out;
		depth[i] = parent < 0 ? 0 : depth[parent] + 1;
		if (depth[i] > LD_MAX_IMPORT_DEPTH) {
			ld_fail(l, w, "imports nested more than %d deep", LD_MAX_IMPORT_DEPTH);
			goto out;
		}
		im->module = strdup(mod);
		if (!im->module) {
			err = -ENOMEM;
			goto out;
		}
		im->tid = (uint32_t)tid;
		im->parent = (int32_t)parent;
		im->start_ns = start;
		im->ns = ns;
		pp->nimports++;
	}
	if (i == n)
		err = 0;
out:
	free(depth);
	return err;
}

int ld_usdt(struct ld *l, const struct jval *jt, const char *where, struct profile_target *pp)
{
	const char *keys[] = { "calls", "hists", "gc", "imports" };
	int (*load[])(struct ld *, const struct jval *, const char *,
		      struct profile_target *) = { load_calls, load_hists, load_gc, load_imports };
	char w[LD_WHERE];
	const char *note = NULL;
	long long trace;
	const struct jval *v;
	size_t i;
	int err;

	ld_at(w, sizeof(w), "%s.usdt_trace", where);
	if (ld_int(l, ld_get(l, jt, where, "usdt_trace"), w, PROFILE_USDT_FROM_START,
		   PROFILE_USDT_NOT_TRACED, &trace))
		return -EINVAL;
	ld_at(w, sizeof(w), "%s.usdt_note", where);
	v = ld_get(l, jt, where, "usdt_note");
	if (!v || (!jv_is_null(v) && ld_str(l, v, w, REPORT_LOAD_MAX_STR, &note)))
		return -EINVAL;
	if (profile_target__usdt_trace(pp, (enum profile_usdt_trace)trace, note))
		return -ENOMEM;
	for (i = 0; i < 4; i++) {
		ld_at(w, sizeof(w), "%s.%s", where, keys[i]);
		err = load[i](l, ld_get(l, jt, where, keys[i]), w, pp);
		if (err)
			return err;
	}
	return 0;
}

static int load_mem_stacks(struct ld *l, const struct jval *v, const char *where,
			   struct profile_mem *m)
{
	uint32_t fr[REPORT_LOAD_MAX_DEPTH], nfr;
	size_t i, n = 0, k;
	char w[LD_WHERE];

	if (ld_array(l, v, where, 0, SIZE_MAX, &n))
		return -EINVAL;
	for (i = 0; i < n; i++) {
		const struct jval *e = jv_at(v, i);
		struct profile_mem_stack *s;

		ld_at(w, sizeof(w), "%s[%zu]", where, i);
		if (ld_array(l, e, w, 3, 3, &k) || ld_frames(l, e, 0, w, 1, fr, &nfr))
			return -EINVAL;
		if (vec_grow((void **)&m->stacks, &m->cap_stacks, m->nstacks + 1,
			     sizeof(*m->stacks)))
			return -ENOMEM;
		s = &m->stacks[m->nstacks];
		memset(s, 0, sizeof(*s));
		s->frames = frames_dup(fr, nfr);
		if (!s->frames)
			return -ENOMEM;
		s->nframes = nfr;
		m->nstacks++;
		if (ld_u64s(l, jv_at(e, 1), w, s->bytes, PROFILE_MEM_SAVED_KINDS) ||
		    ld_u64s(l, jv_at(e, 2), w, s->samples, PROFILE_MEM_SAVED_KINDS))
			return -EINVAL;
	}
	return 0;
}

/* The timeline: [t_s, rss] points, and [t_s, frame, kind, bytes] events. */
static int load_mem_time(struct ld *l, const struct jval *jm, const char *where,
			 struct profile_mem *m)
{
	const struct jval *rss = ld_get(l, jm, where, "rss"), *ev = ld_get(l, jm, where, "events");
	size_t i, n = 0, k;
	uint64_t x[3];
	char w[LD_WHERE];

	ld_at(w, sizeof(w), "%s.rss", where);
	if (ld_array(l, rss, w, 0, SIZE_MAX, &n))
		return -EINVAL;
	if (vec_grow((void **)&m->rss, &m->cap_rss, n + 1, sizeof(*m->rss)))
		return -ENOMEM;
	for (i = 0; i < n; i++, m->nrss++) {
		const struct jval *e = jv_at(rss, i);

		ld_at(w, sizeof(w), "%s.rss[%zu]", where, i);
		if (ld_array(l, e, w, 2, 2, &k) ||
		    ld_double(l, jv_at(e, 0), w, -1e10, 1e10, &m->rss[i].t_s) ||
		    ld_u64(l, jv_at(e, 1), w, UINT64_MAX, &m->rss[i].rss))
			return -EINVAL;
	}
	ld_at(w, sizeof(w), "%s.events", where);
	if (ld_array(l, ev, w, 0, PROFILE_MEM_MAX_EVENTS, &n))
		return -EINVAL;
	if (vec_grow((void **)&m->events, &m->cap_events, n + 1, sizeof(*m->events)))
		return -ENOMEM;
	for (i = 0; i < n; i++, m->nevents++) {
		const struct jval *e = jv_at(ev, i);

		ld_at(w, sizeof(w), "%s.events[%zu]", where, i);
		if (ld_array(l, e, w, 4, 4, &k) ||
		    ld_double(l, jv_at(e, 0), w, -1e10, 1e10, &m->events[i].t_s) ||
		    ld_u64(l, jv_at(e, 1), w, l->p->nframes ? l->p->nframes - 1 : 0, &x[0]) ||
		    ld_u64(l, jv_at(e, 2), w, PROFILE_MEM_SAVED_KINDS - 1, &x[1]) ||
		    ld_u64(l, jv_at(e, 3), w, UINT64_MAX, &x[2]))
			return -EINVAL;
		if (x[0] >= l->p->nframes)
			return ld_fail(l, w, "frame %llu does not exist (%zu frames)",
				       (unsigned long long)x[0], l->p->nframes);
		m->events[i].frame = (uint32_t)x[0];
		m->events[i].kind = (uint32_t)x[1];
		m->events[i].bytes = x[2];
	}
	return 0;
}

/*
 * "retained_recent": {"at_ns": N, "no_stack": N, "stacks": [[stack, bytes]...]}:
 * retained memory's ages (files written before it have none: the profile
 * then says nothing of ages). A stack's recent bytes are some of its retained.
 */
static int load_mem_recent(struct ld *l, const struct jval *jm, const char *where,
			   struct profile_mem *m)
{
	const struct jval *v = jv_get(jm, "retained_recent"), *sts, *e;
	char w[LD_WHERE];
	uint64_t x[2];
	size_t n, i;

	if (!v)
		return 0;
	ld_at(w, sizeof(w), "%s.retained_recent", where);
	sts = ld_get(l, v, w, "stacks");
	if (ld_u64(l, ld_get(l, v, w, "at_ns"), w, UINT64_MAX, &m->retained_at_ns) ||
	    ld_u64(l, ld_get(l, v, w, "no_stack"), w, m->retained_no_stack,
		   &m->retained_recent_no_stack) ||
	    ld_array(l, sts, w, 0, m->nstacks, &n))
		return -EINVAL;
	for (i = 0; i < n; i++) {
		e = jv_at(sts, i);
		ld_at(w, sizeof(w), "%s.retained_recent.stacks[%zu]", where, i);
		if (ld_u64s(l, e, w, x, 2))
			return -EINVAL;
		if (x[0] >= m->nstacks)
			return ld_fail(l, w, "stack %llu: the process has %zu memory stacks",
				       (unsigned long long)x[0], m->nstacks);
		if (x[1] > m->stacks[x[0]].bytes[PROFILE_MEM_RETAINED])
			return ld_fail(l, w, "%llu recent bytes of %llu retained",
				       (unsigned long long)x[1],
				       (unsigned long long)m->stacks[x[0]]
					       .bytes[PROFILE_MEM_RETAINED]);
		m->stacks[x[0]].bytes[PROFILE_MEM_RETAINED_RECENT] = x[1];
	}
	l->p->mem_ages = true;
	return 0;
}

int ld_mem(struct ld *l, const struct jval *jt, const char *where, struct profile_target *pp)
{
	const char *keys[] = { "truncated",	 "partial",   "unresolved", "peak_rss",
			       "events_dropped", "live_lost", "peak_stack" };
	struct profile_mem *m = &pp->mem;
	uint64_t *dst[] = { &m->truncated, &m->partial,	       &m->unresolved,
			    &m->peak_rss,  &m->events_dropped, &m->live_lost };
	const struct jval *jm;
	uint64_t peak, r[6];
	char w[LD_WHERE], wm[LD_WHERE];
	size_t i;
	int err;

	ld_at(wm, sizeof(wm), "%s.mem", where);
	jm = ld_get(l, jt, where, "mem");
	if (!jm)
		return -EINVAL;
	ld_at(w, sizeof(w), "%s.stacks", wm);
	err = load_mem_stacks(l, ld_get(l, jm, wm, "stacks"), w, m);
	if (!err)
		err = load_mem_time(l, jm, wm, m);
	for (i = 0; !err && i < 7; i++) {
		ld_at(w, sizeof(w), "%s.%s", wm, keys[i]);
		err = ld_u64(l, ld_get(l, jm, wm, keys[i]), w, i < 6 ? UINT64_MAX : m->nstacks,
			     i < 6 ? dst[i] : &peak);
	}
	ld_at(w, sizeof(w), "%s.ranges", wm);
	if (!err)
		err = ld_u64s(l, ld_get(l, jm, wm, "ranges"), w, r, 6);
	if (err)
		return err;
	m->released_unknown = r[0];
	m->released_no_stack = r[1];
	m->retained_no_stack = r[2];
	m->ranges.untracked = r[3];
	m->ranges.untracked_bytes = r[4];
	m->ranges_unmatched = r[5];
	m->peak_stack = (uint32_t)peak;
	ld_at(w, sizeof(w), "%s.peak_t_s", wm);
	if (ld_double(l, ld_get(l, jm, wm, "peak_t_s"), w, -1e10, 1e10, &m->peak_t_s))
		return -EINVAL;
	return load_mem_recent(l, jm, wm, m);
}
