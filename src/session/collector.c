// SPDX-License-Identifier: GPL-2.0-only
/*
 * The collector: each record the BPF programs send, from the ring buffer to
 * the profile model. A record takes these steps, each in one place, going
 * down the layers once (session -> cpython -> profile), never back up:
 *
 *  1. Check (collector__sample): its size against the frames it claims, the
 *     run's drain deadline; a malformed or late record is counted, no more.
 *  2. Route by kind, before any frame is named: a companion record (kernel
 *     stack, user stack: collector_cpu.c) joins the CPU sample it follows;
 *     a module body's name (resolve.c) and a signature (collector_sig.c) are
 *     kept for the stacks that come after them.
 *  3. Find its section: its pid's target, or one the tracker opens for a
 *     child forked a moment ago (on_unknown); else it is parked for the fork
 *     notice, counted as unknown until claimed.
 *  4. Resolve (resolve.c): raw frames to the profile's frame ids, through
 *     the frame memo, the code cache (reads the process once per code
 *     object), the parent's cache, BPF's module names; the ids go to
 *     c->scratch, "[unresolved]" where nothing names a frame.
 *  5. Rewrite where a mode asks: --signatures renames the innermost frames
 *     (collector_sig.c), --async swaps the event loop's frames for the chain
 *     of tasks (async_stacks.c), --native and --kernel add native and kernel
 *     frames (collector_cpu.c, native_merge.c).
 *  6. Count into the model, by kind: CPU samples (collector_cpu.c), memory
 *     (collector_mem.c), off-CPU intervals, GC; a thread first seen is only
 *     noted, and named from /proc after the poll (collector__name_threads),
 *     so that no file is read in the middle of a sample.
 *
 * Around the records: the targets' lifecycle (add, alive checks, release,
 * compaction for the agent) and the parked records of unknown pids.
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
#include "proc/procfs.h"
#include "proc/source.h"
#include "collector_parts.h"

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
		async_stacks__free(c->targets[i].async);
		code_cache__free(c->targets[i].codes);
		hashmap__free(&c->targets[i].raw_frames);
		if (c->targets[i].pidfd >= 0)
			close(c->targets[i].pidfd);
		free(c->targets[i].sig_reader);
		hashmap__free(&c->targets[i].sig_funcs);
		module_names__free(&c->targets[i].modules);
	}
	cache_budget__free(&c->budget);
	free(c->targets);
	free(c->scratch);
	free(c->async_out);
	free(c->async_ids);
	free(c->unnamed);
	while (c->nparked)
		free(c->parked[--c->nparked].data);
	free(c->parked);
	hashmap__free(&c->alloc_records);
	hashmap__free(&c->op_ids);
	memset(c, 0, sizeof(*c));
}

/* Its parent now, from /proc/PID/stat (0: not known; a process's own pid namespace's 0 too). */
static int parent_pid(pid_t pid)
{
	struct proc_stat st;
	char buf[1024];

	if (!proc_stat_read(pid, buf, sizeof(buf)) || proc_stat_parse(buf, &st) || st.ppid < 0)
		return 0;
	return st.ppid;
}

int collector__add_target(struct collector *c, const struct target *t)
{
	return collector__add_target_since(c, t, PROFILE_TL_FOUND, 0);
}

int collector__add_target_since(struct collector *c, const struct target *t,
				enum profile_tl_start how, uint64_t ktime_ns)
{
	struct collector_target *ts;
	struct profile_target *pp;
	char root[64];

	if (vec_grow((void **)&c->targets, &c->cap_targets, c->ntargets + 1, sizeof(*c->targets)))
		return -ENOMEM;
	ts = &c->targets[c->ntargets];
	memset(ts, 0, sizeof(*ts));
	ts->t = *t;
	module_names__init(&ts->modules);
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
	pp->ppid = parent_pid(t->pid);
	pp->tl_proc = profile__tl_proc(c->prof, t->pid, t->comm, t->cmdline, how, 0,
				       ktime_ns ? ktime_ns : (uint64_t)mono_ns());
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

/* Adds a's counts to the collector's (at the end of a target's sampling). */
static void async_count(struct async_counts *sum, const struct async_stacks *a, int sign)
{
	const struct async_counts *n = a ? async_stacks__counts(a) : NULL;

	if (!n)
		return;
	sum->in_task += sign * (int64_t)n->in_task;
	sum->not_in_task += sign * (int64_t)n->not_in_task;
	sum->graph_reads += sign * (int64_t)n->graph_reads;
	sum->graph_cut += sign * (int64_t)n->graph_cut;
	sum->guessed += sign * (int64_t)n->guessed;
}

/*
 * --async: the sample's frame ids with the chain of tasks awaiting the
 * running one in place of the event loop's frames (session/async_stacks.c).
 * Returns the number of ids in *ids; the sample's own when it is not in a task.
 */
static uint32_t async_frames(struct collector *c, struct collector_target *ts,
			     const struct py_sample *s, const uint32_t **ids, bool *unresolved)
{
	size_t m, k;
	uint32_t func;

	*ids = c->scratch;
	if (!ts->async && !ts->async_tried) {
		ts->async_tried = true;
		ts->async = async_stacks__new(&ts->t);
	}
	if (!c->async_out)
		c->async_out = calloc(PYPROF_MAX_DEPTH, sizeof(*c->async_out));
	if (!c->async_ids)
		c->async_ids = calloc(PYPROF_MAX_DEPTH, sizeof(*c->async_ids));
	if (!ts->async || !c->async_out || !c->async_ids)
		return s->nframes;
	async_count(&c->async_counts, ts->async, -1);
	m = async_stacks__chain(ts->async, &ts->t, s->tid, s->frames, s->nframes, c->async_out,
				PYPROF_MAX_DEPTH);
	async_count(&c->async_counts, ts->async, 1);
	for (k = 0; k < m; k++) {
		const struct async_entry *e = &c->async_out[k];

		if (!e->task) {
			c->async_ids[k] = resolve__frame(c, ts, &e->frame, unresolved);
		} else {
			func = profile__func(c->prof, e->task, "<asyncio task>", 0, false);
			c->async_ids[k] = func == UINT32_MAX ? UINT32_MAX :
							       profile__frame(c->prof, func, -1);
		}
		if (c->async_ids[k] == UINT32_MAX)
			return s->nframes; /* out of memory: the sample as it came */
	}
	if (m)
		*ids = c->async_ids;
	return m ? (uint32_t)m : s->nframes;
}
_Static_assert((int)PY_OFFCPU_GIL == (int)PROFILE_OFFCPU_GIL &&
		       (int)PY_OFFCPU_NCLASSES == (int)PROFILE_OFFCPU_NCLASSES,
	       "py_offcpu_class and profile_offcpu_class differ");

/* --mode wall: a thread left the CPU with this stack (or ended such an interval). */
static void add_offcpu(struct collector *c, struct collector_target *ts, const struct py_sample *s)
{
	struct profile_target *pp = &c->prof->targets[ts->target_index];
	struct profile_thread *th;

	if (s->kind == PY_KIND_OFFCPU_END) {
		uint64_t ns = s->value & PY_OFFCPU_NS_MASK;

		if (s->value & PY_OFFCPU_UNSEEN_LEAVE) {
			/* no stack, no class: counted only */
			c->prof->offcpu_unseen++;
			c->prof->offcpu_unseen_ns += ns;
			return;
		}
		if (s->value & PY_OFFCPU_INFERRED)
			c->prof->offcpu_inferred++;

		/* where it blocked last time: its last stack, if known here (else unmatched) */
		if (s->value & PY_OFFCPU_SAME)
			profile_target__offcpu_again(pp, s->tid, PY_OFFCPU_END_CLASS(s->value),
						     s->ktime_ns - ns);
		profile_target__offcpu_end(c->prof, pp, s->tid, ns, s->ktime_ns);
		return;
	}
	th = profile_target__thread(pp, s->tid);
	if (th && !th->name[0])
		collector__unnamed(c, ts, s->tid);
	if (profile_target__offcpu_block(pp, s->tid, c->scratch, s->nframes,
					 PY_OFFCPU_CLASS(s->value), s->ktime_ns,
					 s->value & PY_OFFCPU_PRIMED))
		c->malformed++;
}

/*
 * A CPU sample, its frames in c->scratch: with --async rewritten as the chain
 * of tasks awaiting its coroutine, then counted (collector_cpu.c).
 */
static void cpu_sample(struct collector *c, struct collector_target *ts, const struct py_sample *s,
		       bool unresolved)
{
	const uint32_t *ids = c->scratch;
	uint32_t n = s->nframes;
	bool aligned = true;

	if (c->async) {
		n = async_frames(c, ts, s, &ids, &unresolved);
		aligned = ids == c->scratch && n == s->nframes;
		if (ids != c->scratch)
			memmove(c->scratch, ids, n * sizeof(*c->scratch));
	}
	collector__cpu_sample(c, ts, aligned, s, n, unresolved);
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

/* A collection on the timeline: it ended at the record's time, after its ns. */
static void timeline_gc(struct collector *c, const struct collector_target *ts,
			const struct py_sample *s)
{
	uint64_t ns = PY_GC_NS(s->value);
	struct profile_tl_add a = { .kind = PROFILE_TL_GC,
				    .arg = PY_GC_GEN(s->value),
				    .tid = s->tid,
				    .ktime_ns = s->ktime_ns - (ns < s->ktime_ns ? ns : s->ktime_ns),
				    .dur_ns = ns,
				    .frames = c->scratch,
				    .nframes = s->nframes,
				    .value = (uint32_t)PY_GC_COLLECTED(s->value) };

	profile_target__tl_add(c->prof, &c->prof->targets[ts->target_index], &a);
}

/* s, whose frames are named in c->scratch, goes where its kind says. */
static void count_sample(struct collector *c, struct collector_target *ts,
			 const struct py_sample *s, size_t size, bool unresolved)
{
	const void *data = s;

	switch (s->kind) {
	case PY_KIND_CPU:
		if (c->signatures)
			collector__sig_apply(c, ts, s);
		cpu_sample(c, ts, s, unresolved);
		break;
	case PY_KIND_SIGNATURE:
		collector__sig_keep(c, data, size);
		break;
	case PY_KIND_PAGE_FAULT:
		collector__mem_sample(c, ts, s, PROFILE_MEM_TOUCHED, unresolved);
		break;
	case PY_KIND_MAP:
		collector__mem_sample(c, ts, s, PROFILE_MEM_MAPPED, unresolved);
		break;
	case PY_KIND_UNMAP:
		collector__mem_sample(c, ts, s, PROFILE_MEM_UNMAPPED, unresolved);
		break;
	case PY_KIND_ALLOC:
		collector__mem_sample(c, ts, s, PROFILE_MEM_ALLOCATED, unresolved);
		break;
	case PY_KIND_MEM_RANGE:
		collector__mem_range(c, ts, data, size);
		break;
	case PY_KIND_CALL_NEW:
		/* --calls: naming the frames above was the point (the code objects are cached) */
		break;
	case PY_KIND_OFFCPU_BLOCK:
	case PY_KIND_OFFCPU_END:
		add_offcpu(c, ts, s);
		break;
	case PY_KIND_GC:
		if (profile_target__add_gc(&c->prof->targets[ts->target_index], c->scratch,
					   s->nframes, PY_GC_GEN(s->value), PY_GC_NS(s->value),
					   PY_GC_COLLECTED(s->value)))
			c->malformed++;
		timeline_gc(c, ts, s);
		break;
	default:
		c->malformed++;
		break;
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
	if (s->kind == PY_KIND_MODULE) {
		ts = collector__find(c, s->pid);
		if (!ts && c->on_unknown)
			ts = c->on_unknown(c->on_unknown_ctx, s->pid);
		if (ts) /* else not a sample: nothing to count as lost */
			resolve__module(c, ts, data, size);
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
	err = resolve__stack(c, ts, s, &unresolved);
	if (err == -ETIME) {
		c->late++;
		return;
	}
	if (err) {
		c->malformed++; /* out of memory: the sample cannot be kept */
		return;
	}
	count_sample(c, ts, s, size, unresolved);
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
	/* kept: a late sample, or a forked child's, may still name a module body by it */
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

	collector__name_threads(c); /* the threads waiting for names hold section indices */
	if (compact_sections(c, drop, pmap))
		return 0;
	for (i = 0; i < c->ntargets; i++) {
		struct collector_target *ts = &c->targets[i];
		size_t memo = hashmap__bytes(&ts->raw_frames);

		if (drop[i]) {
			async_stacks__free(ts->async);
			code_cache__free(ts->codes);
			hashmap__free(&ts->raw_frames);
			cache_budget__charge(&c->budget,
					     -(long long)module_names__bytes(&ts->modules));
			module_names__free(&ts->modules);
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
