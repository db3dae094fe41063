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
#include <unistd.h>
#include "session/collector.h"
#include "util/deadline.h"
#include "util/mono.h"
#include "target/procfs.h"
#include "target/source.h"

int collector__init(struct collector *c, struct profile *prof, size_t budget_bytes)
{
	memset(c, 0, sizeof(*c));
	c->prof = prof;
	cache_budget__init(&c->budget, budget_bytes);
	c->scratch = calloc(PYPROF_MAX_DEPTH, sizeof(*c->scratch));
	return c->scratch ? 0 : -ENOMEM;
}

void collector__free(struct collector *c)
{
	size_t i;

	collector__free_native(c);
	for (i = 0; i < c->ntargets; i++) {
		code_cache__free(c->targets[i].codes);
		hashmap__free(&c->targets[i].raw_frames);
		if (c->targets[i].pidfd >= 0)
			close(c->targets[i].pidfd);
	}
	cache_budget__free(&c->budget);
	free(c->targets);
	free(c->scratch);
	while (c->nparked)
		free(c->parked[--c->nparked].data);
	free(c->parked);
	hashmap__free(&c->alloc_records);
	memset(c, 0, sizeof(*c));
}

int collector__add_target(struct collector *c, const struct target *t)
{
	struct collector_target *ts;
	struct profile_target *pp;
	char root[64];

	if (vec_grow((void **)&c->targets, &c->cap_targets, c->ntargets + 1, sizeof(*c->targets)))
		return -ENOMEM;
	ts = &c->targets[c->ntargets];
	memset(ts, 0, sizeof(*ts));
	ts->t = *t;
	/* -ESRCH: gone already, and its pid may be another process's by now */
	ts->pidfd = target__pidfd(t);
	ts->codes = code_cache__new(&c->budget);
	if (!ts->codes ||
	    !profile__add_target(c->prof, t->pid, t->exe, t->cmdline, t->comm, t->version_str)) {
		code_cache__free(ts->codes);
		if (ts->pidfd >= 0)
			close(ts->pidfd);
		return -ENOMEM;
	}
	ts->target_index = c->prof->ntargets - 1;
	pp = &c->prof->targets[ts->target_index];
	pp->nspid = t->nspid;
	pp->start_time = proc_start_time(t->pid);
	/* Held open so its sources can be read even after the process has exited. */
	snprintf(root, sizeof(root), "/proc/%d/root", t->pid);
	pp->root_fd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	/*
	 * And with its rights: its credentials now, and its status held open to
	 * read them again at report time (a dead process's fd reads nothing:
	 * never another process's that got its pid).
	 */
	snprintf(root, sizeof(root), "/proc/%d/status", t->pid);
	pp->sources->status_fd = open(root, O_RDONLY | O_CLOEXEC);
	proc_sources__look(pp->sources);
	c->ntargets++;
	return 0;
}

struct collector_target *collector__find(struct collector *c, int pid)
{
	size_t i;

	for (i = c->ntargets; i-- > 0;)
		if (c->targets[i].t.pid == pid)
			return &c->targets[i];
	return NULL;
}

/*
 * Remembers raw frame key -> frame id. The memos of all targets may take a
 * quarter of the budget: one that would grow beyond is emptied first (it is
 * only a shortcut past the code cache), and its bytes count in the budget.
 */
static void memo_set(struct collector *c, struct collector_target *ts, uint64_t key, uint32_t id)
{
	struct cache_budget *b = &c->budget;
	struct hashmap *m = &ts->raw_frames;
	size_t before = hashmap__bytes(m);

	if ((m->len + 1) * 2 > m->cap && b->memo_bytes + before > b->limit / 4 && m->len) {
		hashmap__free(m);
		b->memo_bytes -= before;
		cache_budget__charge(b, -(long long)before);
		b->memo_resets++;
		before = 0;
	}
	if (hashmap__set(m, key, id))
		return;
	b->memo_bytes += hashmap__bytes(m) - before;
	cache_budget__charge(b, (long long)(hashmap__bytes(m) - before));
}

/*
 * The code object of rf in ts's process, or NULL. One read just now from a
 * pid whose process has exited is dropped: the memory may have been another
 * process's, given the pid since.
 */
static const struct code_info *target_code(struct collector_target *ts, const struct py_frame *rf)
{
	uint64_t reads = ts->codes->reads;
	const struct code_info *ci = code_cache__get(ts->codes, &ts->t, rf->code, rf->fingerprint);

	if (ci && ts->codes->reads != reads && ts->pidfd >= 0 && proc_pidfd_exited(ts->pidfd))
		return NULL;
	return ci;
}

/* Profile frame id for one raw frame; *unresolved set when it could not be named. */
static uint32_t frame_id(struct collector *c, struct collector_target *ts,
			 const struct py_frame *rf, bool *unresolved)
{
	uint64_t key = hash_u64(rf->code ^
				hash_u64(((uint64_t)rf->fingerprint << 32) | (uint32_t)rf->instr));
	const struct code_info *ci;
	uint64_t *slot = hashmap__find(&ts->raw_frames, key);
	uint32_t func, id;

	if (slot)
		return *slot;
	ci = target_code(ts, rf);
	/* the same object in the parent: the fingerprint says whether it still is */
	if (!ci && ts->forked_from)
		ci = target_code(&c->targets[ts->forked_from - 1], rf);
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
		memo_set(c, ts, key, id);
	return id;
}

/*
 * Names every frame of s into c->scratch (frame ids). Returns -ENOMEM when
 * the sample cannot be kept, -ETIME when the run ended too long ago to go on
 * (each new code object can cost a read and a line table's decoding, and a
 * sample holds up to PYPROF_MAX_DEPTH of them); *unresolved is set when a
 * frame could not be named.
 */
static int resolve_frames(struct collector *c, struct collector_target *ts,
			  const struct py_sample *s, bool *unresolved)
{
	uint32_t i;

	for (i = 0; i < s->nframes; i++) {
		if (deadline__past(DEADLINE_DRAIN_NS))
			return -ETIME;
		c->scratch[i] = frame_id(c, ts, &s->frames[i], unresolved);
		if (c->scratch[i] == UINT32_MAX)
			return -ENOMEM;
	}
	return 0;
}

/* A --mem record: bytes of one kind on its stack, and a point in time for the timeline. */
static void add_mem_sample(struct collector *c, struct collector_target *ts,
			   const struct py_sample *s, enum profile_mem_kind kind, bool unresolved)
{
	struct profile_target *pp = &c->prof->targets[ts->target_index];
	double t_s = ((long long)s->ktime_ns - c->prof->start_ns) / 1e9;

	long stack = profile_target__add_mem(pp, kind, c->scratch, s->nframes, s->value, t_s,
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
	if (kind == PROFILE_MEM_MAPPED || kind == PROFILE_MEM_UNMAPPED) {
		unsigned at = ts->mem_recent_next++ % 16;

		ts->mem_recent[at].tid = s->tid;
		ts->mem_recent[at].ktime_ns = s->ktime_ns;
		ts->mem_recent[at].stack = stack;
	}
	pp->mem.truncated += !!(s->flags & PY_SAMPLE_TRUNCATED);
	pp->mem.partial += !!(s->flags & PY_SAMPLE_READ_ERROR);
	pp->mem.unresolved += unresolved;
}

_Static_assert((int)PY_MEM_MMAP == (int)PROFILE_MEM_OP_MMAP &&
		       (int)PY_MEM_MUNMAP == (int)PROFILE_MEM_OP_MUNMAP &&
		       (int)PY_MEM_MREMAP == (int)PROFILE_MEM_OP_MREMAP &&
		       (int)PY_MEM_BRK == (int)PROFILE_MEM_OP_BRK,
	       "py_mem_op and profile_mem_op differ");

/*
 * A memory call's addresses: matched to the ranges the process mapped, the
 * mapping owned by the stack record sent just before it for the same call.
 */
static void add_mem_range(struct collector *c, struct collector_target *ts, const void *data,
			  size_t size)
{
	struct profile_target *pp = &c->prof->targets[ts->target_index];
	const struct py_mem_range *r = data;
	struct profile_mem_call call = {
		.addr = r->addr,
		.len = r->len,
		.new_addr = r->new_addr,
		.new_len = r->new_len,
		.keep_old = r->remap_flags & 4, /* MREMAP_DONTUNMAP */
	};
	uint32_t owner = MEM_RANGE_NO_STACK;
	size_t i;

	if (size < sizeof(*r) || r->op < PY_MEM_MMAP || r->op > PY_MEM_BRK) {
		c->malformed++;
		return;
	}
	call.op = r->op; /* the same numbering */
	for (i = 0; r->value && i < 16; i++)
		if (ts->mem_recent[i].tid == r->tid && ts->mem_recent[i].ktime_ns == r->value) {
			owner = ts->mem_recent[i].stack;
			break;
		}
	/* a stack record sent but never seen here: dropped, or too many threads in between */
	if (r->value && owner == MEM_RANGE_NO_STACK)
		pp->mem.ranges_unmatched++;
	profile_target__mem_call(pp, &call, owner);
}

/*
 * A sample of a pid with no section yet: a child forked a moment ago whose
 * fork notice, on the other ring, has not been read. Kept (bounded) so that
 * the notice can claim it; it counts as unknown until then.
 */
static void park(struct collector *c, int pid, const void *data, size_t size)
{
	struct collector_parked *p;
	void *copy;

	if (c->nparked >= COLLECTOR_PARK_MAX ||
	    vec_grow((void **)&c->parked, &c->cap_parked, c->nparked + 1, sizeof(*c->parked)))
		return;
	copy = malloc(size);
	if (!copy)
		return;
	memcpy(copy, data, size);
	p = &c->parked[c->nparked++];
	*p = (struct collector_parked){ .pid = pid,
					.gen = c->park_gen,
					.size = size,
					.data = copy };
}

void collector__replay(struct collector *c, int pid)
{
	size_t i = 0;

	while (i < c->nparked) {
		struct collector_parked p = c->parked[i];

		if (p.pid != pid) {
			i++;
			continue;
		}
		c->parked[i] = c->parked[--c->nparked];
		c->unknown_pid--;
		c->replaying = true;
		collector__sample(c, p.data, p.size); /* counted again if still unknown */
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
	struct collector_target *ts;
	bool unresolved = false;
	int err;

	/* The run is over and the drain's time is up: the rest is only counted. */
	if (deadline__past(DEADLINE_DRAIN_NS)) {
		c->late++;
		return;
	}
	if (size < PY_SAMPLE_HEADER_SIZE ||
	    size < PY_SAMPLE_HEADER_SIZE + (size_t)s->nframes * sizeof(struct py_frame) ||
	    s->nframes > PYPROF_MAX_DEPTH) {
		c->malformed++;
		return;
	}
	if (s->kind == PY_KIND_KSTACK) {
		collector__kstack(c, data, size);
		return;
	}
	if (s->kind == PY_KIND_USTACK) {
		collector__ustack(c, data, size);
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
	err = resolve_frames(c, ts, s, &unresolved);
	if (err == -ETIME) {
		c->late++;
		return;
	}
	if (err) {
		c->malformed++; /* out of memory: the sample cannot be kept */
		return;
	}
	switch (s->kind) {
	case PY_KIND_CPU:
		collector__cpu_sample(c, ts, s, unresolved);
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
	case PY_KIND_MEM_RANGE:
		add_mem_range(c, ts, data, size);
		break;
	case PY_KIND_CALL_NEW:
		/* --calls: naming the frames above was the point (the code objects are cached) */
		break;
	case PY_KIND_GC:
		if (profile_target__add_gc(&c->prof->targets[ts->target_index], c->scratch,
					   s->nframes, PY_GC_GEN(s->value), PY_GC_NS(s->value),
					   PY_GC_COLLECTED(s->value)))
			c->malformed++;
		break;
	default:
		c->malformed++;
		break;
	}
}

bool collector_target__gone(const struct collector_target *ts)
{
	if (ts->pidfd >= 0)
		return proc_pidfd_exited(ts->pidfd);
	/* -ENOSYS (no pidfds): the pid is all there is */
	return ts->pidfd == -ESRCH || !proc_alive(ts->t.pid);
}

size_t collector__check_alive(struct collector *c)
{
	size_t i, alive = 0;

	c->alive_checks++;
	for (i = 0; i < c->ntargets; i++) {
		struct collector_target *ts = &c->targets[i];

		/*
		 * Its credentials now and then (each 5th check): a process that
		 * changes its user during the run has its sources read with the
		 * rights of each user it was seen with (source.h).
		 */
		if (!ts->exited && !(c->alive_checks % 5))
			proc_sources__look(c->prof->targets[ts->target_index].sources);
		if (!ts->exited && collector_target__gone(ts)) {
			ts->exited = true;
			c->prof->targets[ts->target_index].exited = true;
		}
		/* a section's process is followed no further once it has exited or exec'd */
		if (ts->exited && ts->pidfd >= 0) {
			close(ts->pidfd);
			ts->pidfd = -ESRCH;
		}
		alive += !ts->exited;
	}
	return alive;
}

void collector__release(struct collector *c, size_t i)
{
	struct collector_target *ts = &c->targets[i];
	struct profile_target *pp = &c->prof->targets[ts->target_index];
	size_t bytes = hashmap__bytes(&ts->raw_frames);
	struct code_cache *empty;

	if (!ts->exited)
		return;
	/* an empty cache, not none: a late sample (or a forked child's) looks in it */
	if (ts->codes->by_addr.len && (empty = code_cache__new(&c->budget))) {
		code_cache__free(ts->codes);
		ts->codes = empty;
	}
	if (bytes) {
		hashmap__free(&ts->raw_frames);
		c->budget.memo_bytes -= bytes;
		cache_budget__charge(&c->budget, -(long long)bytes);
	}
	collector_target__free_native(ts);
	if (pp->root_fd >= 0)
		close(pp->root_fd);
	pp->root_fd = -1;
	proc_sources__free(pp->sources);
	pp->sources = NULL;
}

/* Forgets the sections of forgotten targets; pmap as collector__compact's. */
static int compact_sections(struct collector *c, const bool *drop, size_t *pmap)
{
	struct profile *p = c->prof;
	bool *pdrop = calloc(p->ntargets + 1, sizeof(*pdrop));
	size_t i, n = 0;

	if (!pdrop)
		return -ENOMEM;
	for (i = 0; i < c->ntargets; i++)
		if (drop[i])
			pdrop[c->targets[i].target_index] = true;
	for (i = 0; i < p->ntargets; i++) {
		if (pdrop[i]) {
			profile_target__free(&p->targets[i]);
			pmap[i] = SIZE_MAX;
			continue;
		}
		pmap[i] = n;
		if (n != i)
			p->targets[n] = p->targets[i];
		n++;
	}
	p->ntargets = n;
	free(pdrop);
	return 0;
}

size_t collector__compact(struct collector *c, const bool *drop, size_t *map, size_t *pmap)
{
	size_t i, n = 0, was = c->ntargets;

	if (compact_sections(c, drop, pmap))
		return 0;
	for (i = 0; i < c->ntargets; i++) {
		struct collector_target *ts = &c->targets[i];
		size_t memo = hashmap__bytes(&ts->raw_frames);

		if (drop[i]) {
			code_cache__free(ts->codes);
			hashmap__free(&ts->raw_frames);
			c->budget.memo_bytes -= memo;
			cache_budget__charge(&c->budget, -(long long)memo);
			if (ts->pidfd >= 0)
				close(ts->pidfd);
			map[i] = SIZE_MAX;
			continue;
		}
		map[i] = n;
		ts->target_index = pmap[ts->target_index];
		if (n != i)
			c->targets[n] = *ts;
		n++;
	}
	c->ntargets = n;
	for (i = 0; i < n; i++) {
		size_t *f = &c->targets[i].forked_from;

		if (*f)
			*f = map[*f - 1] == SIZE_MAX ? 0 : map[*f - 1] + 1;
	}
	return was - n;
}
