// SPDX-License-Identifier: GPL-2.0-only
/*
 * The memory half of the profile model (--mem): stacks weighted by bytes,
 * one table per process beside the CPU stacks, the resident-size timeline
 * and the events that label it. Writers read it through the summaries here.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "profile/profile.h"
#include "util/vec.h"

void profile_mem__free(struct profile_mem *m)
{
	size_t i;

	for (i = 0; i < m->nstacks; i++)
		free(m->stacks[i].frames);
	free(m->stacks);
	free(m->rss);
	free(m->events);
	hashmap__free(&m->stack_index);
	mem_ranges__free(&m->ranges);
	memset(m, 0, sizeof(*m));
}

/* Index of the stack with these frames, added if new; -ENOMEM. */
static long mem_stack(struct profile_mem *m, const uint32_t *frames, uint32_t n)
{
	uint64_t h = hash_bytes(frames, n * sizeof(*frames), 0x6d656d);
	struct profile_mem_stack *s;
	uint64_t *slot;

	for (;;) {
		slot = hashmap__find(&m->stack_index, h);
		if (!slot)
			break;
		s = &m->stacks[*slot];
		if (s->nframes == n && (!n || !memcmp(s->frames, frames, n * sizeof(*frames))))
			return *slot;
		h++; /* a 64-bit collision with another stack: probe on */
	}
	if (vec_grow((void **)&m->stacks, &m->cap_stacks, m->nstacks + 1, sizeof(*m->stacks)))
		return -ENOMEM;
	s = &m->stacks[m->nstacks];
	s->frames = malloc((n ? n : 1) * sizeof(*frames));
	if (!s->frames)
		return -ENOMEM;
	if (n) /* frames may be NULL for none */
		memcpy(s->frames, frames, n * sizeof(*frames));
	s->nframes = n;
	if (hashmap__set(&m->stack_index, h, m->nstacks)) {
		free(s->frames);
		return -ENOMEM;
	}
	return m->nstacks++;
}

int profile_target__add_mem(struct profile_target *pp, enum profile_mem_kind kind,
			    const uint32_t *frames, uint32_t n, uint64_t bytes, double t_s,
			    bool is_peak)
{
	struct profile_mem *m = &pp->mem;
	struct profile_mem_event *e;
	long i;

	if (kind >= PROFILE_MEM_NKINDS || !n)
		return -EINVAL;
	i = mem_stack(m, frames, n);
	if (i < 0)
		return i;
	m->stacks[i].bytes[kind] += bytes;
	m->stacks[i].samples[kind]++;
	if (is_peak) {
		m->peak_stack = i + 1;
		m->peak_t_s = t_s;
	}
	if (m->nevents >= PROFILE_MEM_MAX_EVENTS ||
	    vec_grow((void **)&m->events, &m->cap_events, m->nevents + 1, sizeof(*m->events))) {
		m->events_dropped++;
		return i;
	}
	e = &m->events[m->nevents++];
	e->t_s = t_s;
	e->frame = frames[0];
	e->kind = kind;
	e->bytes = bytes;
	return i;
}

int profile_target__add_rss(struct profile_target *pp, double t_s, uint64_t rss)
{
	struct profile_mem *m = &pp->mem;

	if (vec_grow((void **)&m->rss, &m->cap_rss, m->nrss + 1, sizeof(*m->rss)))
		return -ENOMEM;
	m->rss[m->nrss++] = (struct profile_rss_point){ t_s, rss };
	if (rss > m->peak_rss)
		m->peak_rss = rss;
	return 0;
}

void profile_target__mem_totals(const struct profile_target *pp, uint64_t out[PROFILE_MEM_NKINDS])
{
	size_t i, k;

	memset(out, 0, PROFILE_MEM_NKINDS * sizeof(out[0]));
	for (i = 0; i < pp->mem.nstacks; i++)
		for (k = 0; k < PROFILE_MEM_NKINDS; k++)
			out[k] += pp->mem.stacks[i].bytes[k];
}

/* Descending by touched, then mapped, then allocated, then net growth (mapped - unmapped). */
static int cmp_bytes(const uint64_t *x, const uint64_t *y)
{
	int64_t nx = x[PROFILE_MEM_MAPPED] - x[PROFILE_MEM_UNMAPPED];
	int64_t ny = y[PROFILE_MEM_MAPPED] - y[PROFILE_MEM_UNMAPPED];

	if (x[PROFILE_MEM_TOUCHED] != y[PROFILE_MEM_TOUCHED])
		return x[PROFILE_MEM_TOUCHED] < y[PROFILE_MEM_TOUCHED] ? 1 : -1;
	if (x[PROFILE_MEM_MAPPED] != y[PROFILE_MEM_MAPPED])
		return x[PROFILE_MEM_MAPPED] < y[PROFILE_MEM_MAPPED] ? 1 : -1;
	if (x[PROFILE_MEM_ALLOCATED] != y[PROFILE_MEM_ALLOCATED])
		return x[PROFILE_MEM_ALLOCATED] < y[PROFILE_MEM_ALLOCATED] ? 1 : -1;
	return nx < ny ? 1 : nx > ny ? -1 : 0;
}

static int cmp_mem_func(const void *a, const void *b)
{
	const struct mem_func_stat *x = a, *y = b;
	int c = cmp_bytes(x->self, y->self);

	if (!c)
		c = cmp_bytes(x->total, y->total);
	return c ? c : x->func < y->func ? -1 : x->func > y->func;
}

static int cmp_mem_line(const void *a, const void *b)
{
	const struct mem_line_stat *x = a, *y = b;
	int c = cmp_bytes(x->self, y->self);

	return c ? c : x->frame < y->frame ? -1 : x->frame > y->frame;
}

static bool any_bytes(const uint64_t *b)
{
	size_t k;

	for (k = 0; k < PROFILE_MEM_NKINDS; k++)
		if (b[k])
			return true;
	return false;
}

int profile_target__mem_func_stats(const struct profile *p, const struct profile_target *pp,
				   struct mem_func_stat **out, size_t *n)
{
	struct mem_func_stat *st = calloc(p->nfuncs + 1, sizeof(*st));
	/* seen[f] == stack index + 1: f already counted in total for this stack */
	size_t *seen = calloc(p->nfuncs + 1, sizeof(*seen));
	size_t i, j, k, kept = 0;

	if (!st || !seen) {
		free(st);
		free(seen);
		return -ENOMEM;
	}
	for (i = 0; i < pp->mem.nstacks; i++) {
		const struct profile_mem_stack *s = &pp->mem.stacks[i];

		for (j = 0; j < s->nframes; j++) {
			uint32_t f = p->frames[s->frames[j]].func;

			for (k = 0; k < PROFILE_MEM_NKINDS; k++) {
				if (!j)
					st[f].self[k] += s->bytes[k];
				if (seen[f] != i + 1)
					st[f].total[k] += s->bytes[k];
			}
			seen[f] = i + 1;
		}
	}
	free(seen);
	for (i = 0; i < p->nfuncs; i++)
		if (any_bytes(st[i].total)) {
			st[kept] = st[i];
			st[kept++].func = i;
		}
	qsort(st, kept, sizeof(*st), cmp_mem_func);
	*out = st;
	*n = kept;
	return 0;
}

int profile_target__mem_line_stats(const struct profile *p, const struct profile_target *pp,
				   struct mem_line_stat **out, size_t *n)
{
	struct mem_line_stat *st = calloc(p->nframes + 1, sizeof(*st));
	size_t i, k, kept = 0;

	if (!st)
		return -ENOMEM;
	for (i = 0; i < pp->mem.nstacks; i++) {
		const struct profile_mem_stack *s = &pp->mem.stacks[i];

		for (k = 0; k < PROFILE_MEM_NKINDS; k++)
			st[s->frames[0]].self[k] += s->bytes[k];
	}
	for (i = 0; i < p->nframes; i++)
		if (any_bytes(st[i].self)) {
			st[kept] = st[i];
			st[kept++].frame = i;
		}
	qsort(st, kept, sizeof(*st), cmp_mem_line);
	*out = st;
	*n = kept;
	return 0;
}

int profile_target__merge_mem(struct profile_target *into, const struct profile_target *from)
{
	const struct profile_mem *f = &from->mem;
	struct profile_mem *m = &into->mem;
	size_t i, k;

	for (i = 0; i < f->nstacks; i++) {
		const struct profile_mem_stack *s = &f->stacks[i];
		long at = mem_stack(m, s->frames, s->nframes);

		if (at < 0)
			return at;
		for (k = 0; k < PROFILE_MEM_NKINDS; k++) {
			m->stacks[at].bytes[k] += s->bytes[k];
			m->stacks[at].samples[k] += s->samples[k];
		}
		/* resident sizes of different processes do not add: the highest peak stands */
		if (f->peak_stack == i + 1 && f->peak_rss >= m->peak_rss) {
			m->peak_stack = at + 1;
			m->peak_t_s = f->peak_t_s;
		}
	}
	if (f->peak_rss > m->peak_rss)
		m->peak_rss = f->peak_rss;
	m->truncated += f->truncated;
	m->partial += f->partial;
	m->unresolved += f->unresolved;
	m->live_lost += f->live_lost;
	m->released_unknown += f->released_unknown;
	m->released_no_stack += f->released_no_stack;
	m->retained_no_stack += f->retained_no_stack;
	m->retained_recent_no_stack += f->retained_recent_no_stack;
	m->ranges_unmatched += f->ranges_unmatched;
	if (f->retained_at_ns > m->retained_at_ns)
		m->retained_at_ns = f->retained_at_ns;
	m->ranges.untracked += f->ranges.untracked;
	m->ranges.untracked_bytes += f->ranges.untracked_bytes;
	return 0;
}

static void on_released(void *ctx, uint32_t owner, uint64_t bytes, uint64_t t_ns)
{
	struct profile_mem *m = ctx;

	(void)t_ns;
	if (owner < m->nstacks)
		m->stacks[owner].bytes[PROFILE_MEM_RELEASED] += bytes;
	else
		m->released_no_stack += bytes;
}

/* Whether a range mapped at t_ns is recent at end_ns: mapped in its last second. */
static bool recent(uint64_t t_ns, uint64_t end_ns)
{
	return t_ns + MEM_RANGE_RECENT_NS > end_ns;
}

static void on_retained(void *ctx, uint32_t owner, uint64_t bytes, uint64_t t_ns)
{
	struct profile_mem *m = ctx;
	bool young = recent(t_ns, m->retained_at_ns);

	if (owner < m->nstacks) {
		m->stacks[owner].bytes[PROFILE_MEM_RETAINED] += bytes;
		m->stacks[owner].bytes[PROFILE_MEM_RETAINED_RECENT] += young ? bytes : 0;
	} else {
		m->retained_no_stack += bytes;
		m->retained_recent_no_stack += young ? bytes : 0;
	}
}

#define PAGE_UP(x) (((x) + 4095) & ~4095ULL)

void profile_target__mem_call(struct profile_target *pp, const struct profile_mem_call *c,
			      uint32_t owner)
{
	struct profile_mem *m = &pp->mem;
	struct mem_ranges *rs = &m->ranges;
	uint64_t old_brk = PAGE_UP(c->addr), new_brk = PAGE_UP(c->new_addr), t = c->t_ns;

	if (t > m->last_call_ns)
		m->last_call_ns = t;
	switch (c->op) {
	case PROFILE_MEM_OP_MMAP:
		mem_ranges__map(rs, c->addr, c->addr + c->len, owner, t, on_released, m);
		break;
	case PROFILE_MEM_OP_MUNMAP:
		m->released_unknown += mem_ranges__unmap(rs, c->addr, c->addr + c->len, on_released,
							 m);
		break;
	case PROFILE_MEM_OP_MREMAP:
		if (c->keep_old) /* a copy of the old range's place: new to the process */
			mem_ranges__map(rs, c->new_addr, c->new_addr + c->new_len, owner, t,
					on_released, m);
		else
			m->released_unknown += mem_ranges__remap(rs, c->addr, c->len, c->new_addr,
								 c->new_len, owner, t, on_released,
								 m);
		break;
	case PROFILE_MEM_OP_BRK: /* the heap's top grows or shrinks */
		if (new_brk > old_brk)
			mem_ranges__map(rs, old_brk, new_brk, owner, t, on_released, m);
		else
			m->released_unknown += mem_ranges__unmap(rs, new_brk, old_brk, on_released,
								 m);
		break;
	}
}

void profile_target__mem_retain(struct profile_target *pp, uint64_t end_ns)
{
	pp->mem.retained_at_ns = end_ns;
	mem_ranges__drain(&pp->mem.ranges, on_retained, &pp->mem);
}

/* What a stack's ranges hold now, and of it what was mapped in the last second. */
struct mem_hold {
	uint64_t bytes, recent;
};

/* Bytes of ranges each stack owns at now_ns (held[i]); the ownerless ones' in *none. */
static struct mem_hold *mem_held(const struct profile_mem *m, uint64_t now_ns,
				 struct mem_hold *none)
{
	struct mem_hold *held = calloc(m->nstacks + 1, sizeof(*held)), *h;
	size_t i;

	*none = (struct mem_hold){ 0 };
	for (i = 0; held && i < m->ranges.n; i++) {
		const struct mem_range *r = &m->ranges.r[i];

		h = r->owner < m->nstacks ? &held[r->owner] : none;
		h->bytes += r->end - r->start;
		h->recent += recent(r->t_ns, now_ns) ? r->end - r->start : 0;
	}
	return held;
}

/* The interval's figures of m into out: every stack with bytes, RETAINED from held. */
static int mem_cut_copy(const struct profile_mem *m, const struct mem_hold *held,
			const struct mem_hold *none, struct profile_mem *out)
{
	size_t i, k;

	for (i = 0; i < m->nstacks; i++) {
		const struct profile_mem_stack *s = &m->stacks[i];
		long at;

		if (!held[i].bytes && !any_bytes(s->bytes))
			continue;
		at = mem_stack(out, s->frames, s->nframes);
		if (at < 0)
			return at;
		for (k = 0; k < PROFILE_MEM_NKINDS; k++) {
			out->stacks[at].bytes[k] += s->bytes[k];
			out->stacks[at].samples[k] += s->samples[k];
		}
		out->stacks[at].bytes[PROFILE_MEM_RETAINED] += held[i].bytes;
		out->stacks[at].bytes[PROFILE_MEM_RETAINED_RECENT] += held[i].recent;
	}
	out->truncated = m->truncated;
	out->partial = m->partial;
	out->unresolved = m->unresolved;
	out->released_unknown = m->released_unknown;
	out->released_no_stack = m->released_no_stack;
	out->retained_no_stack = none->bytes;
	out->retained_recent_no_stack = none->recent;
	out->ranges_unmatched = m->ranges_unmatched;
	out->ranges.untracked = m->ranges.untracked;
	out->ranges.untracked_bytes = m->ranges.untracked_bytes;
	return 0;
}

/* Keeps the stacks held or pinned (counters zeroed), renumbering owners and pins. */
static void mem_cut_compact(struct profile_mem *m, const struct mem_hold *held, uint32_t *map,
			    long *pinned, size_t npinned)
{
	size_t i, n = 0, old = m->nstacks;

	for (i = 0; i < npinned; i++) /* (pins already within the table, or -1) */
		if (pinned[i] >= 0)
			map[pinned[i]] = 1;
	hashmap__free(&m->stack_index);
	hashmap__init(&m->stack_index);
	for (i = 0; i < m->nstacks; i++) {
		struct profile_mem_stack *s = &m->stacks[i];
		uint64_t h;

		if (!held[i].bytes && !map[i]) {
			free(s->frames);
			map[i] = UINT32_MAX;
			continue;
		}
		memset(s->bytes, 0, sizeof(s->bytes));
		memset(s->samples, 0, sizeof(s->samples));
		m->stacks[n] = *s;
		/* the same probing as mem_stack: distinct stacks, distinct slots */
		h = hash_bytes(s->frames, s->nframes * sizeof(*s->frames), 0x6d656d);
		while (hashmap__find(&m->stack_index, h))
			h++;
		/* out of memory here only costs a duplicate stack later */
		hashmap__set(&m->stack_index, h, n);
		map[i] = n++;
	}
	m->nstacks = n;
	/* an owner is held, so kept; one past the table (none) stays past it */
	for (i = 0; i < m->ranges.n; i++)
		if (m->ranges.r[i].owner < old)
			m->ranges.r[i].owner = map[m->ranges.r[i].owner];
		else
			m->ranges.r[i].owner = MEM_RANGE_NO_STACK;
	for (i = 0; i < npinned; i++)
		if (pinned[i] >= 0)
			pinned[i] = map[pinned[i]] == UINT32_MAX ? -1 : (long)map[pinned[i]];
}

int profile_target__mem_cut(struct profile_target *pp, struct profile_mem *out, long *pinned,
			    size_t npinned, uint64_t now_ns)
{
	struct profile_mem *m = &pp->mem;
	struct mem_hold none, *held = mem_held(m, now_ns, &none);
	uint32_t *map = calloc(m->nstacks + 1, sizeof(*map));
	size_t i;

	memset(out, 0, sizeof(*out));
	hashmap__init(&out->stack_index);
	for (i = 0; i < npinned; i++) /* a pin past the table is no stack */
		if (pinned[i] >= 0 && (size_t)pinned[i] >= m->nstacks)
			pinned[i] = -1;
	if (!held || !map || mem_cut_copy(m, held, &none, out)) {
		free(held);
		free(map);
		profile_mem__free(out);
		return -ENOMEM;
	}
	mem_cut_compact(m, held, map, pinned, npinned);
	free(held);
	free(map);
	m->truncated = m->partial = m->unresolved = 0;
	out->retained_at_ns = now_ns;
	m->released_unknown = m->released_no_stack = m->retained_no_stack = 0;
	m->retained_recent_no_stack = 0;
	m->ranges_unmatched = m->ranges.untracked = m->ranges.untracked_bytes = 0;
	m->peak_stack = 0;
	m->peak_rss = 0;
	free(m->rss);
	free(m->events);
	m->rss = NULL;
	m->events = NULL;
	m->nrss = m->cap_rss = m->nevents = m->cap_events = 0;
	m->events_dropped = 0;
	return 0;
}
