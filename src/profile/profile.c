// SPDX-License-Identifier: GPL-2.0-only
/*
 * Profile model. Functions are interned by (qualname, file, first line) and
 * frames by (function, line), across processes, so a merged view is a sum of
 * stacks. Stacks are interned per process by (tid, frames).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "profile/profile.h"
#include "util/vec.h"
#include "proc/source.h"

static char *dup_or_empty(const char *s)
{
	return strdup(s ? s : "");
}

void profile__init(struct profile *p, const char *mode, unsigned frequency_hz)
{
	memset(p, 0, sizeof(*p));
	p->mode = mode;
	p->frequency_hz = frequency_hz;
	p->first_sample_ms = -1;
}

void profile_target__free(struct profile_target *pp)
{
	size_t j;

	for (j = 0; j < pp->nstacks; j++) {
		free(pp->stacks[j].frames);
		profile_stack__free_ops(&pp->stacks[j]);
	}
	free(pp->stacks);
	free(pp->calls);
	free(pp->hists);
	for (j = 0; j < pp->gc.nstacks; j++)
		free(pp->gc.stacks[j].frames);
	free(pp->gc.stacks);
	for (j = 0; j < pp->nimports; j++)
		free(pp->imports[j].module);
	free(pp->imports);
	free(pp->threads);
	hashmap__free(&pp->stack_index);
	profile_mem__free(&pp->mem);
	if (pp->root_fd >= 0)
		close(pp->root_fd);
	proc_sources__free(pp->sources);
	free(pp->exe);
	free(pp->cmdline);
	free(pp->comm);
	free(pp->python);
	free(pp->usdt_note);
	while (pp->npending)
		free(pp->pending[--pp->npending].frames);
	free(pp->pending);
	memset(pp, 0, sizeof(*pp));
	pp->root_fd = -1;
}

int profile_target__usdt_trace(struct profile_target *pp, enum profile_usdt_trace how,
			       const char *note)
{
	char *copy = note ? strdup(note) : NULL;

	pp->usdt_trace = how;
	free(pp->usdt_note);
	pp->usdt_note = copy;
	return note && !copy ? -ENOMEM : 0;
}

void profile__free(struct profile *p)
{
	size_t i;

	for (i = 0; i < p->nfuncs; i++) {
		free(p->funcs[i].qualname);
		free(p->funcs[i].file);
	}
	for (i = 0; i < p->ntargets; i++)
		profile_target__free(&p->targets[i]);
	for (i = 0; i < p->nopnames; i++)
		free(p->opnames[i].name);
	free(p->funcs);
	free(p->frames);
	free(p->targets);
	free(p->merged_pids);
	free(p->selection);
	hashmap__free(&p->func_index);
	hashmap__free(&p->frame_index);
	profile_timeline__free(&p->timeline);
	free(p->opnames);
	hashmap__free(&p->opname_index);
	memset(p, 0, sizeof(*p));
}

uint32_t profile__func(struct profile *p, const char *qualname, const char *file, int firstline,
		       bool unresolved)
{
	return profile__func_kind(p, qualname, file, firstline, unresolved, PROFILE_FUNC_PYTHON);
}

uint32_t profile__func_kind(struct profile *p, const char *qualname, const char *file,
			    int firstline, bool unresolved, enum profile_func_kind kind)
{
	uint64_t h = hash_bytes(qualname, strlen(qualname), 0);
	struct profile_func *f;
	uint64_t *slot;

	h = hash_bytes(file, strlen(file), h) ^
	    hash_u64((uint64_t)(uint32_t)firstline + unresolved + ((uint64_t)kind << 40));
	/* Linear rehash on a (rare) 64-bit collision with a different function. */
	for (;;) {
		slot = hashmap__find(&p->func_index, h);
		if (!slot)
			break;
		f = &p->funcs[*slot];
		if (f->firstline == firstline && f->unresolved == unresolved && f->kind == kind &&
		    !strcmp(f->qualname, qualname) && !strcmp(f->file, file))
			return *slot;
		h++;
	}
	if (vec_grow((void **)&p->funcs, &p->cap_funcs, p->nfuncs + 1, sizeof(*p->funcs)))
		return UINT32_MAX;
	f = &p->funcs[p->nfuncs];
	f->qualname = dup_or_empty(qualname);
	f->file = dup_or_empty(file);
	f->firstline = firstline;
	f->unresolved = unresolved;
	f->kind = kind;
	if (!f->qualname || !f->file || hashmap__set(&p->func_index, h, p->nfuncs)) {
		free(f->qualname);
		free(f->file);
		return UINT32_MAX;
	}
	return p->nfuncs++;
}

uint32_t profile__frame(struct profile *p, uint32_t func, int line)
{
	uint64_t key = ((uint64_t)func << 32) | (uint32_t)line;
	uint64_t *slot = hashmap__find(&p->frame_index, key);

	if (slot)
		return *slot;
	if (vec_grow((void **)&p->frames, &p->cap_frames, p->nframes + 1, sizeof(*p->frames)))
		return UINT32_MAX;
	p->frames[p->nframes].func = func;
	p->frames[p->nframes].line = line;
	if (hashmap__set(&p->frame_index, key, p->nframes))
		return UINT32_MAX;
	return p->nframes++;
}

int profile__reserve(struct profile *p, size_t nfuncs, size_t nframes)
{
	if (vec_reserve((void **)&p->funcs, &p->cap_funcs, nfuncs, sizeof(*p->funcs)) ||
	    vec_reserve((void **)&p->frames, &p->cap_frames, nframes, sizeof(*p->frames)) ||
	    hashmap__reserve(&p->func_index, nfuncs) || hashmap__reserve(&p->frame_index, nframes))
		return -ENOMEM;
	return 0;
}

int profile_target__reserve(struct profile_target *pp, size_t nthreads, size_t nstacks)
{
	if (vec_reserve((void **)&pp->threads, &pp->cap_threads, nthreads, sizeof(*pp->threads)) ||
	    vec_reserve((void **)&pp->stacks, &pp->cap_stacks, nstacks, sizeof(*pp->stacks)) ||
	    hashmap__reserve(&pp->stack_index, nstacks))
		return -ENOMEM;
	return 0;
}

uint32_t profile__frame_find(const struct profile *p, uint32_t func, int line)
{
	const uint64_t *slot = hashmap__find(&p->frame_index,
					     ((uint64_t)func << 32) | (uint32_t)line);

	return slot ? (uint32_t)*slot : UINT32_MAX;
}

struct profile_target *profile__add_target(struct profile *p, int pid, const char *exe,
					   const char *cmdline, const char *comm,
					   const char *python)
{
	struct profile_target *pp;

	if (vec_grow((void **)&p->targets, &p->cap_targets, p->ntargets + 1, sizeof(*p->targets)))
		return NULL;
	pp = &p->targets[p->ntargets];
	memset(pp, 0, sizeof(*pp));
	pp->pid = pid;
	pp->nspid = pid;
	pp->root_fd = -1;
	pp->exe = dup_or_empty(exe);
	pp->cmdline = dup_or_empty(cmdline);
	pp->comm = dup_or_empty(comm);
	pp->python = dup_or_empty(python);
	pp->sources = proc_sources__new();
	if (!pp->exe || !pp->cmdline || !pp->comm || !pp->python || !pp->sources)
		return NULL;
	p->ntargets++;
	return pp;
}

struct profile_target *profile__find_target(struct profile *p, int pid)
{
	size_t i;

	/* Newest first: a reused pid belongs to the latest process. */
	for (i = p->ntargets; i-- > 0;)
		if (p->targets[i].pid == pid)
			return &p->targets[i];
	return NULL;
}

struct profile_thread *profile_target__thread(struct profile_target *pp, uint32_t tid)
{
	size_t i;

	for (i = 0; i < pp->nthreads; i++)
		if (pp->threads[i].tid == tid)
			return &pp->threads[i];
	return profile_target__new_thread(pp, tid);
}

struct profile_thread *profile_target__new_thread(struct profile_target *pp, uint32_t tid)
{
	if (vec_grow((void **)&pp->threads, &pp->cap_threads, pp->nthreads + 1,
		     sizeof(*pp->threads)))
		return NULL;
	pp->threads[pp->nthreads].tid = tid;
	return &pp->threads[pp->nthreads++];
}

const char *profile_thread__label(const struct profile_thread *th)
{
	return th->pyname[0] ? th->pyname : th->name[0] ? th->name : "?";
}

static void stack_add_where(struct profile_stack *s, const uint64_t where[PROFILE_WHERE_N])
{
	int i;

	for (i = 0; where && i < PROFILE_WHERE_N; i++)
		s->where[i] += where[i];
}

int profile_target__add_stack_where(struct profile_target *pp, uint32_t tid, const uint32_t *frames,
				    uint32_t n, uint64_t count,
				    const uint64_t where[PROFILE_WHERE_N])
{
	uint64_t h = hash_bytes(frames, n * sizeof(*frames), tid);
	struct profile_stack *s;
	uint64_t *slot;

	for (;;) {
		slot = hashmap__find(&pp->stack_index, h);
		if (!slot)
			break;
		s = &pp->stacks[*slot];
		if (s->tid == tid && s->nframes == n &&
		    (!n || !memcmp(s->frames, frames, n * sizeof(*frames)))) {
			s->count += count;
			pp->last_stack = *slot;
			stack_add_where(s, where);
			return 0;
		}
		h++;
	}
	if (vec_grow((void **)&pp->stacks, &pp->cap_stacks, pp->nstacks + 1, sizeof(*pp->stacks)))
		return -ENOMEM;
	s = &pp->stacks[pp->nstacks];
	s->frames = malloc((n ? n : 1) * sizeof(*frames));
	if (!s->frames)
		return -ENOMEM;
	/* frames may be NULL for a stack of none: memcpy must not see it */
	if (n)
		memcpy(s->frames, frames, n * sizeof(*frames));
	s->tid = tid;
	s->nframes = n;
	s->count = count;
	memset(s->where, 0, sizeof(s->where));
	stack_add_where(s, where);
	if (hashmap__set(&pp->stack_index, h, pp->nstacks)) {
		free(s->frames);
		return -ENOMEM;
	}
	pp->last_stack = pp->nstacks++;
	return 0;
}

int profile_target__add_stack(struct profile_target *pp, uint32_t tid, const uint32_t *frames,
			      uint32_t n, uint64_t count)
{
	return profile_target__add_stack_where(pp, tid, frames, n, count, NULL);
}

static int cmp_func_stat(const void *a, const void *b)
{
	const struct func_stat *x = a, *y = b;

	if (x->self != y->self)
		return x->self < y->self ? 1 : -1;
	if (x->total != y->total)
		return x->total < y->total ? 1 : -1;
	return x->func < y->func ? -1 : x->func > y->func;
}

int profile_target__func_stats(const struct profile *p, const struct profile_target *pp,
			       struct func_stat **out, size_t *n)
{
	uint64_t *self = calloc(p->nfuncs + 1, sizeof(*self));
	uint64_t *total = calloc(p->nfuncs + 1, sizeof(*total));
	/* seen[f] == stack index + 1 marks f as already counted for this stack */
	size_t *seen = calloc(p->nfuncs + 1, sizeof(*seen));
	struct func_stat *st = NULL;
	size_t i, j, k = 0;
	int err = -ENOMEM;

	if (!self || !total || !seen)
		goto out;
	for (i = 0; i < pp->nstacks; i++) {
		const struct profile_stack *s = &pp->stacks[i];

		if (!s->nframes)
			continue;
		self[p->frames[s->frames[0]].func] += s->count;
		for (j = 0; j < s->nframes; j++) {
			uint32_t f = p->frames[s->frames[j]].func;

			if (seen[f] != i + 1) {
				seen[f] = i + 1;
				total[f] += s->count;
			}
		}
	}
	st = calloc(p->nfuncs + 1, sizeof(*st));
	if (!st)
		goto out;
	for (i = 0; i < p->nfuncs; i++)
		if (total[i])
			st[k++] = (struct func_stat){ .func = i,
						      .self = self[i],
						      .total = total[i] };
	qsort(st, k, sizeof(*st), cmp_func_stat);
	*out = st;
	*n = k;
	err = 0;
out:
	free(self);
	free(total);
	free(seen);
	return err;
}

static int cmp_line_stat(const void *a, const void *b)
{
	const struct line_stat *x = a, *y = b;

	if (x->self != y->self)
		return x->self < y->self ? 1 : -1;
	return x->frame < y->frame ? -1 : x->frame > y->frame;
}

/* Here, not in profile_tick.c: freeing a stack is the profile's own business. */
void profile_stack__free_ops(struct profile_stack *s)
{
	free(s->ops);
	s->ops = NULL;
	s->nops = s->cap_ops = 0;
}

uint32_t profile__innermost_line_of(const struct profile *p, const uint32_t *frames, uint32_t n)
{
	uint32_t i;

	for (i = 0; i < n; i++) {
		const struct profile_func *fn;

		if (frames[i] >= p->nframes)
			continue;
		fn = &p->funcs[p->frames[frames[i]].func];
		if (fn->kind == PROFILE_FUNC_PYTHON &&
		    (!fn->file || strcmp(fn->file, PROFILE_OFFCPU_FILE)))
			break;
	}
	return i;
}

uint32_t profile__innermost_line(const struct profile *p, const struct profile_stack *s)
{
	return profile__innermost_line_of(p, s->frames, s->nframes);
}

int profile_target__line_stats(const struct profile *p, const struct profile_target *pp,
			       struct line_stat **out, size_t *n)
{
	uint64_t *self = calloc(p->nframes + 1, sizeof(*self));
	uint64_t *total = calloc(p->nframes + 1, sizeof(*total));
	/* seen[fr] == stack index + 1: fr already counted in this stack (recursion) */
	size_t *seen = calloc(p->nframes + 1, sizeof(*seen));
	struct line_stat *st = NULL;
	size_t i, j, k = 0;

	if (!self || !total || !seen)
		goto fail;
	for (i = 0; i < pp->nstacks; i++) {
		const struct profile_stack *s = &pp->stacks[i];
		uint32_t at = profile__innermost_line(p, s);

		if (at < s->nframes)
			self[s->frames[at]] += s->count;
		for (j = 0; j < s->nframes; j++)
			if (s->frames[j] < p->nframes && seen[s->frames[j]] != i + 1) {
				seen[s->frames[j]] = i + 1;
				total[s->frames[j]] += s->count;
			}
	}
	st = calloc(p->nframes + 1, sizeof(*st));
	if (!st)
		goto fail;
	for (i = 0; i < p->nframes; i++)
		if (self[i])
			st[k++] = (struct line_stat){ .frame = i,
						      .self = self[i],
						      .total = total[i] };
	free(self);
	free(total);
	free(seen);
	qsort(st, k, sizeof(*st), cmp_line_stat);
	*out = st;
	*n = k;
	return 0;
fail:
	free(self);
	free(total);
	free(seen);
	return -ENOMEM;
}

static void gc_stat_add(struct profile_gc_stat *st, uint64_t ns, uint64_t collected)
{
	st->collections++;
	st->total_ns += ns;
	st->collected += collected;
	if (ns > st->max_ns)
		st->max_ns = ns;
}

int profile_target__add_gc(struct profile_target *pp, const uint32_t *frames, uint32_t n,
			   unsigned gen, uint64_t ns, uint64_t collected)
{
	struct profile_gc *gc = &pp->gc;
	struct profile_gc_stack *st = NULL;
	size_t i;

	gc_stat_add(&gc->all, ns, collected);
	gc_stat_add(&gc->gen[gen % PROFILE_GC_GENS], ns, collected);
	/* Collections are rare next to samples (thousands, not millions): a linear search will do. */
	for (i = 0; i < gc->nstacks && !st; i++)
		if (gc->stacks[i].nframes == n &&
		    (!n || !memcmp(gc->stacks[i].frames, frames, n * sizeof(*frames))))
			st = &gc->stacks[i];
	if (!st) {
		if (vec_grow((void **)&gc->stacks, &gc->cap_stacks, gc->nstacks + 1,
			     sizeof(*gc->stacks)))
			return -ENOMEM;
		st = &gc->stacks[gc->nstacks];
		st->frames = malloc((n ? n : 1) * sizeof(*frames));
		if (!st->frames)
			return -ENOMEM;
		/* a collection outside Python code has no frames (and frames may be NULL) */
		if (n)
			memcpy(st->frames, frames, n * sizeof(*frames));
		st->nframes = n;
		gc->nstacks++;
	}
	gc_stat_add(&st->stat, ns, collected);
	return 0;
}

int profile_target__add_call(struct profile_target *pp, uint32_t func, uint32_t caller,
			     const struct profile_call_edge *add)
{
	struct profile_call_edge *e = NULL;
	size_t i;

	for (i = 0; i < pp->ncalls && !e; i++)
		if (pp->calls[i].func == func && pp->calls[i].caller == caller)
			e = &pp->calls[i];
	if (!e) {
		if (vec_grow((void **)&pp->calls, &pp->cap_calls, pp->ncalls + 1,
			     sizeof(*pp->calls)))
			return -ENOMEM;
		e = &pp->calls[pp->ncalls++];
		e->func = func;
		e->caller = caller;
	}
	e->calls += add->calls;
	e->inclusive_ns += add->inclusive_ns;
	e->exclusive_ns += add->exclusive_ns;
	if (add->max_ns > e->max_ns)
		e->max_ns = add->max_ns;
	return 0;
}

int profile_target__add_hist(struct profile_target *pp, uint32_t func,
			     const uint64_t buckets[PROFILE_HIST_BUCKETS])
{
	struct profile_call_hist *h = NULL;
	size_t i;

	for (i = 0; i < pp->nhists && !h; i++)
		if (pp->hists[i].func == func)
			h = &pp->hists[i];
	if (!h) {
		if (vec_grow((void **)&pp->hists, &pp->cap_hists, pp->nhists + 1,
			     sizeof(*pp->hists)))
			return -ENOMEM;
		h = &pp->hists[pp->nhists++];
		h->func = func;
	}
	for (i = 0; i < PROFILE_HIST_BUCKETS; i++)
		h->buckets[i] += buckets[i];
	return 0;
}

/* tid's innermost import still open: the latest one not done (imports nest per thread). */
static int32_t open_import(const struct profile_target *pp, uint32_t tid)
{
	size_t i;

	for (i = pp->nimports; i-- > 0;)
		if (pp->imports[i].tid == tid && !pp->imports[i].done)
			return (int32_t)i;
	return -1;
}

int profile_target__import_start(struct profile_target *pp, uint32_t tid, const char *module,
				 uint64_t ktime_ns)
{
	struct profile_import *im;

	if (vec_grow((void **)&pp->imports, &pp->cap_imports, pp->nimports + 1,
		     sizeof(*pp->imports)))
		return -ENOMEM;
	im = &pp->imports[pp->nimports];
	im->module = dup_or_empty(module);
	if (!im->module)
		return -ENOMEM;
	im->tid = tid;
	im->parent = open_import(pp, tid);
	im->start_ns = ktime_ns;
	pp->nimports++;
	return 0;
}

int profile_target__import_done(struct profile_target *pp, uint32_t tid, bool found,
				uint64_t ktime_ns)
{
	int32_t i = open_import(pp, tid);

	if (i < 0)
		return -ENOENT;
	pp->imports[i].done = true;
	pp->imports[i].found = found;
	pp->imports[i].ns = ktime_ns > pp->imports[i].start_ns ?
				    ktime_ns - pp->imports[i].start_ns :
				    0;
	return i;
}

int profile_target__call_totals(const struct profile *p, const struct profile_target *pp,
				struct profile_call_total **out)
{
	struct profile_call_total *t = calloc(p->nfuncs + 1, sizeof(*t));
	size_t i;

	if (!t)
		return -ENOMEM;
	for (i = 0; i < pp->ncalls; i++) {
		const struct profile_call_edge *e = &pp->calls[i];
		struct profile_call_total *x;

		if (e->func >= p->nfuncs)
			continue;
		x = &t[e->func];
		x->calls += e->calls;
		x->inclusive_ns += e->inclusive_ns;
		x->exclusive_ns += e->exclusive_ns;
		if (e->max_ns > x->max_ns)
			x->max_ns = e->max_ns;
	}
	*out = t;
	return 0;
}
