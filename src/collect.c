// SPDX-License-Identifier: GPL-2.0-only
/*
 * Sample conversion. A raw frame (code address, fingerprint, position) maps
 * to an interned profile frame through a per-target hash, so the code cache
 * and the line-table decoder run once per distinct raw frame, not per sample.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "collect.h"
#include "mono.h"

int collector__init(struct collector *c, struct profile *prof)
{
	memset(c, 0, sizeof(*c));
	c->prof = prof;
	c->scratch = calloc(PYPROF_MAX_DEPTH, sizeof(*c->scratch));
	return c->scratch ? 0 : -ENOMEM;
}

void collector__free(struct collector *c)
{
	size_t i;

	for (i = 0; i < c->ntargets; i++) {
		code_cache__free(&c->targets[i].codes);
		hashmap__free(&c->targets[i].raw_frames);
	}
	free(c->targets);
	free(c->scratch);
	while (c->nparked)
		free(c->parked[--c->nparked].data);
	free(c->parked);
	hashmap__free(&c->alloc_records);
	memset(c, 0, sizeof(*c));
}

int collector__add_target(struct collector *c, const struct py_target *t)
{
	struct target_state *ts;
	char root[64];

	if (profile_grow((void **)&c->targets, &c->cap_targets, c->ntargets + 1,
			 sizeof(*c->targets)))
		return -ENOMEM;
	ts = &c->targets[c->ntargets];
	memset(ts, 0, sizeof(*ts));
	ts->t = *t;
	code_cache__init(&ts->codes);
	if (!profile__add_proc(c->prof, t->pid, t->exe, t->cmdline, t->comm, t->version_str))
		return -ENOMEM;
	ts->proc_index = c->prof->nprocs - 1;
	c->prof->procs[ts->proc_index].nspid = t->nspid;
	c->prof->procs[ts->proc_index].start_time = proc_start_time(t->pid);
	/* Held open so its sources can be read even after the process has exited. */
	snprintf(root, sizeof(root), "/proc/%d/root", t->pid);
	c->prof->procs[ts->proc_index].root_fd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	c->ntargets++;
	return 0;
}

struct target_state *collector__find(struct collector *c, int pid)
{
	size_t i;

	for (i = c->ntargets; i-- > 0;)
		if (c->targets[i].t.pid == pid)
			return &c->targets[i];
	return NULL;
}

/* Profile frame id for one raw frame; *unresolved set when it could not be named. */
static uint32_t frame_id(struct collector *c, struct target_state *ts, const struct py_frame *rf,
			 bool *unresolved)
{
	uint64_t key = hash_u64(rf->code ^ hash_u64(((uint64_t)rf->fingerprint << 32) |
						     (uint32_t)rf->instr));
	const struct code_info *ci;
	uint64_t *slot = hashmap__find(&ts->raw_frames, key);
	uint32_t func, id;

	if (slot)
		return *slot;
	ci = code_cache__get(&ts->codes, &ts->t, rf->code, rf->fingerprint);
	if (!ci && ts->forked_from) {
		/* the same object in the parent: the fingerprint says whether it still is */
		struct target_state *parent = &c->targets[ts->forked_from - 1];

		ci = code_cache__get(&parent->codes, &parent->t, rf->code, rf->fingerprint);
	}
	if (!ci) {
		*unresolved = true;
		func = profile__func(c->prof, "[unresolved]", "", 0, true);
		return func == UINT32_MAX ? UINT32_MAX : profile__frame(c->prof, func, -1);
	}
	func = profile__func(c->prof, ci->qualname, ci->filename, ci->firstlineno, false);
	if (func == UINT32_MAX)
		return UINT32_MAX;
	id = profile__frame(c->prof, func, code_info__line(ci, &ts->t.layout, rf->instr));
	if (id != UINT32_MAX)
		hashmap__set(&ts->raw_frames, key, id);
	return id;
}

/*
 * Names every frame of s into c->scratch (frame ids). Returns false when the
 * sample cannot be kept (out of memory); *unresolved is set when a frame
 * could not be named.
 */
static bool resolve_frames(struct collector *c, struct target_state *ts, const struct py_sample *s,
			   bool *unresolved)
{
	uint32_t i;

	for (i = 0; i < s->nframes; i++) {
		c->scratch[i] = frame_id(c, ts, &s->frames[i], unresolved);
		if (c->scratch[i] == UINT32_MAX)
			return false;
	}
	return true;
}

/* A cpu-clock sample: one more count of its stack, and of its thread. */
static void add_cpu_sample(struct collector *c, struct target_state *ts, const struct py_sample *s,
			   bool unresolved)
{
	struct profile_proc *pp = &c->prof->procs[ts->proc_index];
	struct profile_thread *th;

	if (profile_proc__add_stack(pp, s->tid, c->scratch, s->nframes, 1)) {
		c->malformed++;
		return;
	}
	if (c->prof->first_sample_ms < 0)
		c->prof->first_sample_ms = (mono_ns() - c->prof->start_ns) / 1e6;
	pp->samples++;
	pp->truncated += !!(s->flags & PY_SAMPLE_TRUNCATED);
	pp->partial += !!(s->flags & PY_SAMPLE_READ_ERROR);
	pp->unresolved += unresolved;
	th = profile_proc__thread(pp, s->tid);
	if (th) {
		if (!th->samples)
			proc_thread_name(s->pid, s->tid, th->name, sizeof(th->name));
		th->samples++;
	}
}

/* A --mem record: bytes of one kind on its stack, and a point in time for the timeline. */
static void add_mem_sample(struct collector *c, struct target_state *ts, const struct py_sample *s,
			   enum profile_mem_kind kind, bool unresolved)
{
	struct profile_proc *pp = &c->prof->procs[ts->proc_index];
	double t_s = ((long long)s->ktime_ns - c->prof->start_ns) / 1e9;

	long stack = profile_proc__add_mem(pp, kind, c->scratch, s->nframes, s->value, t_s,
					   s->flags & PY_SAMPLE_RSS_PEAK);

	if (stack < 0) {
		c->malformed++;
		return;
	}
	/* An allocation may still be live at the end: remember which stack its record named. */
	if (kind == PROFILE_MEM_ALLOCATED &&
	    hashmap__set(&c->alloc_records, collector__alloc_key(s->pid, s->tid, s->ktime_ns),
			 stack))
		c->malformed++;
	pp->mem.truncated += !!(s->flags & PY_SAMPLE_TRUNCATED);
	pp->mem.partial += !!(s->flags & PY_SAMPLE_READ_ERROR);
	pp->mem.unresolved += unresolved;
}

/*
 * A sample of a pid with no section yet: a child forked a moment ago whose
 * fork notice, on the other ring, has not been read. Kept (bounded) so that
 * the notice can claim it; it counts as unknown until then.
 */
static void park(struct collector *c, int pid, const void *data, size_t size)
{
	struct collect_parked *p;
	void *copy;

	if (c->nparked >= COLLECT_PARK_MAX ||
	    profile_grow((void **)&c->parked, &c->cap_parked, c->nparked + 1, sizeof(*c->parked)))
		return;
	copy = malloc(size);
	if (!copy)
		return;
	memcpy(copy, data, size);
	p = &c->parked[c->nparked++];
	*p = (struct collect_parked){ .pid = pid, .gen = c->park_gen, .size = size, .data = copy };
}

void collector__replay(struct collector *c, int pid)
{
	size_t i = 0;

	while (i < c->nparked) {
		struct collect_parked p = c->parked[i];

		if (p.pid != pid) {
			i++;
			continue;
		}
		c->parked[i] = c->parked[--c->nparked];
		c->unknown_pid--;
		c->replaying = true;
		collector__sample(c, p.data, p.size);	/* counted again if still unknown */
		c->replaying = false;
		free(p.data);
	}
}

void collector__expire_parked(struct collector *c)
{
	size_t i = 0;

	c->park_gen++;
	while (i < c->nparked) {
		if (c->park_gen - c->parked[i].gen < 2) {
			i++;
			continue;
		}
		free(c->parked[i].data);
		c->parked[i] = c->parked[--c->nparked];
	}
}

void collector__sample(struct collector *c, const void *data, size_t size)
{
	const struct py_sample *s = data;
	struct target_state *ts;
	bool unresolved = false;

	if (size < PY_SAMPLE_HEADER_SIZE ||
	    size < PY_SAMPLE_HEADER_SIZE + (size_t)s->nframes * sizeof(struct py_frame) ||
	    s->nframes > PYPROF_MAX_DEPTH) {
		c->malformed++;
		return;
	}
	ts = collector__find(c, s->pid);
	if (!ts && c->on_unknown)
		ts = c->on_unknown(c->on_unknown_ctx, s->pid);
	if (!ts) {
		c->unknown_pid++;
		if (c->on_unknown && !c->replaying)
			park(c, s->pid, data, size);
		return;
	}
	if (!resolve_frames(c, ts, s, &unresolved)) {
		c->malformed++;	/* out of memory: the sample cannot be kept */
		return;
	}
	switch (s->kind) {
	case PY_KIND_CPU:
		add_cpu_sample(c, ts, s, unresolved);
		break;
	case PY_KIND_PAGE_FAULT:
		add_mem_sample(c, ts, s, PROFILE_MEM_TOUCHED, unresolved);
		break;
	case PY_KIND_MAP:
		add_mem_sample(c, ts, s, PROFILE_MEM_MAPPED, unresolved);
		break;
	case PY_KIND_UNMAP:
		add_mem_sample(c, ts, s, PROFILE_MEM_UNMAPPED, unresolved);
		break;
	case PY_KIND_ALLOC:
		add_mem_sample(c, ts, s, PROFILE_MEM_ALLOCATED, unresolved);
		break;
	case PY_KIND_CALL_NEW:
		/* --calls: naming the frames above was the point (the code objects are cached) */
		break;
	case PY_KIND_GC:
		if (profile_proc__add_gc(&c->prof->procs[ts->proc_index], c->scratch, s->nframes,
					 PY_GC_GEN(s->value), PY_GC_NS(s->value),
					 PY_GC_COLLECTED(s->value)))
			c->malformed++;
		break;
	default:
		c->malformed++;
		break;
	}
}

size_t collector__check_alive(struct collector *c)
{
	size_t i, alive = 0;

	for (i = 0; i < c->ntargets; i++) {
		struct target_state *ts = &c->targets[i];

		if (!ts->exited && !proc_alive(ts->t.pid)) {
			ts->exited = true;
			c->prof->procs[ts->proc_index].exited = true;
		}
		alive += !ts->exited;
	}
	return alive;
}
