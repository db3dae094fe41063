// SPDX-License-Identifier: GPL-2.0-only
/*
 * CPU samples in the collector: each one counted on its stack, its place
 * (Python / native / system) and its thread. With --kernel, a CPU sample taken in kernel mode waits for the
 * kernel stack that the same BPF run sends right after it (struct py_kstack,
 * same pid, tid and ktime_ns), and is counted with the kernel frames below
 * its Python frames. Records of other CPUs may come in between, and the
 * companion may come only with the next poll, so a few samples wait at once;
 * one whose companion was lost (ring buffer full) is counted without it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "util/mono.h"
#include "target/procfs.h"
#include "session/collector.h"
#include "session/ksyms.h"
#include "session/native.h"
#include "util/vec.h"
#include "pybpfprof.skel.h"

/* A cpu-clock sample: one more count of its stack, and of its thread. */
void collector__add_cpu(struct collector *c, struct collector_target *ts, const struct py_sample *s,
			const uint32_t *frames, uint32_t n, bool unresolved)
{
	struct profile_target *pp = &c->prof->targets[ts->target_index];
	uint64_t where[PROFILE_WHERE_N] = { 0 };
	struct profile_thread *th;

	switch (s->flags & PY_SAMPLE_WHERE_MASK) {
	case PY_WHERE_PYTHON:
		where[PROFILE_WHERE_PYTHON] = 1;
		break;
	case PY_WHERE_NATIVE:
		where[PROFILE_WHERE_NATIVE] = 1;
		break;
	case PY_WHERE_SYSTEM:
		where[PROFILE_WHERE_SYSTEM] = 1;
		break;
	}
	if (profile_target__add_stack_where(pp, s->tid, frames, n, 1, where)) {
		c->malformed++;
		return;
	}
	if (c->prof->first_sample_ms < 0)
		c->prof->first_sample_ms = (mono_ns() - c->prof->start_ns) / 1e6;
	pp->samples++;
	pp->truncated += !!(s->flags & PY_SAMPLE_TRUNCATED);
	pp->partial += !!(s->flags & PY_SAMPLE_READ_ERROR);
	pp->unresolved += unresolved;
	th = profile_target__thread(pp, s->tid);
	if (th) {
		if (!th->samples)
			proc_thread_name(s->pid, s->tid, th->name, sizeof(th->name));
		th->samples++;
	}
}

/* A waiting sample older than this, by the clock of the records arriving, lost its stack. */
#define PENDING_MAX_AGE_NS 1000000000ULL

void native__prepare(struct session *s, unsigned native_modes)
{
	session__skel(s)->rodata->native_kernel = !!(native_modes & NATIVE_KERNEL);
}

/* collector__find's lookup (collector.c uses this file, not the other way round). */
static struct collector_target *find_target(struct collector *c, int pid)
{
	size_t i;

	for (i = c->ntargets; i-- > 0;)
		if (c->targets[i].t.pid == pid)
			return &c->targets[i];
	return NULL;
}

/* Counts pending[i] with extra frames (innermost first) below its Python ones, and drops it. */
static void pending_count(struct collector *c, size_t i, const uint32_t *extra, uint32_t nextra)
{
	struct collector_pending *pe = &c->pending[i];
	struct collector_target *ts = find_target(c, pe->pid);
	struct py_sample h = { .pid = pe->pid,
			       .tid = pe->tid,
			       .ktime_ns = pe->ktime_ns,
			       .flags = pe->flags,
			       .kind = PY_KIND_CPU };

	if (ts && nextra) {
		memmove(c->scratch + nextra, pe->frames, pe->nframes * sizeof(*pe->frames));
		memcpy(c->scratch, extra, nextra * sizeof(*extra));
		collector__add_cpu(c, ts, &h, c->scratch, pe->nframes + nextra, pe->unresolved);
	} else if (ts) {
		collector__add_cpu(c, ts, &h, pe->frames, pe->nframes, pe->unresolved);
	}
	if (!nextra)
		c->kstack_missing++;
	free(pe->frames);
	c->pending[i] = c->pending[--c->npending];
}

void collector__cpu_sample(struct collector *c, struct collector_target *ts,
			   const struct py_sample *s, bool unresolved)
{
	struct collector_pending *pe;
	size_t i;

	if (!(c->native_modes & NATIVE_KERNEL) ||
	    (s->flags & PY_SAMPLE_WHERE_MASK) != PY_WHERE_SYSTEM) {
		collector__add_cpu(c, ts, s, c->scratch, s->nframes, unresolved);
		return;
	}
	/* the thread's earlier sample, or a stale one, will not get its stack now */
	for (i = c->npending; i-- > 0;)
		if (c->pending[i].tid == s->tid ||
		    s->ktime_ns > c->pending[i].ktime_ns + PENDING_MAX_AGE_NS)
			pending_count(c, i, NULL, 0);
	if (c->npending == COLLECTOR_PENDING_MAX)
		pending_count(c, 0, NULL, 0);
	if (vec_grow((void **)&c->pending, &c->cap_pending, c->npending + 1, sizeof(*c->pending)))
		goto now;
	pe = &c->pending[c->npending];
	pe->frames = malloc((s->nframes ? s->nframes : 1) * sizeof(*pe->frames));
	if (!pe->frames)
		goto now;
	memcpy(pe->frames, c->scratch, s->nframes * sizeof(*pe->frames));
	pe->pid = s->pid;
	pe->tid = s->tid;
	pe->ktime_ns = s->ktime_ns;
	pe->flags = s->flags;
	pe->unresolved = unresolved;
	pe->nframes = s->nframes;
	c->npending++;
	return;
now:
	c->kstack_missing++;
	collector__add_cpu(c, ts, s, c->scratch, s->nframes, unresolved);
}

/* The frame id of kernel address addr (a return address unless innermost). */
static uint32_t kernel_frame(struct collector *c, uint64_t addr, bool innermost)
{
	uint64_t *slot = hashmap__find(&c->kframes, addr ^ innermost);
	const char *name;
	char hex[24];
	uint32_t func, id;

	if (slot)
		return *slot;
	/* a return address is just past its call: the call is in the function before it */
	name = c->ksyms ? ksyms__find(c->ksyms, addr - !innermost) : NULL;
	if (!name) {
		snprintf(hex, sizeof(hex), "0x%llx", (unsigned long long)addr);
		name = hex;
	}
	func = profile__func_kind(c->prof, name, "[kernel]", 0, false, PROFILE_FUNC_KERNEL);
	if (func == UINT32_MAX)
		return UINT32_MAX;
	id = profile__frame(c->prof, func, -1);
	if (id != UINT32_MAX)
		hashmap__set(&c->kframes, addr ^ innermost, id);
	return id;
}

static void load_ksyms(struct collector *c)
{
	if (c->ksyms_tried)
		return;
	c->ksyms_tried = true;
	c->ksyms = calloc(1, sizeof(*c->ksyms));
	/* without it (or with addresses hidden) frames are named by address */
	if (c->ksyms && ksyms__load(c->ksyms))
		ksyms__free(c->ksyms);
}

void collector__kstack(struct collector *c, const void *data, size_t size)
{
	const struct py_kstack *k = data;
	uint32_t ids[PY_KSTACK_MAX], n = 0, i;
	size_t at;

	if (size < offsetof(struct py_kstack, addrs) || k->value > PY_KSTACK_MAX ||
	    size < offsetof(struct py_kstack, addrs) + k->value * sizeof(k->addrs[0])) {
		c->malformed++;
		return;
	}
	for (at = 0; at < c->npending; at++)
		if (c->pending[at].tid == k->tid && c->pending[at].pid == (int)k->pid &&
		    c->pending[at].ktime_ns == k->ktime_ns)
			break;
	if (at == c->npending) {
		c->kstack_orphans++;
		return;
	}
	load_ksyms(c);
	/* PYPROF_MAX_DEPTH in all: the Python frames keep their room */
	for (i = 0; i < k->value && c->pending[at].nframes + n < PYPROF_MAX_DEPTH; i++) {
		ids[n] = kernel_frame(c, k->addrs[i], i == 0);
		if (ids[n] != UINT32_MAX)
			n++;
	}
	if (!n) {
		pending_count(c, at, NULL, 0);
		return;
	}
	c->kstacks++;
	pending_count(c, at, ids, n);
}

void collector__flush_pending(struct collector *c)
{
	while (c->npending)
		pending_count(c, c->npending - 1, NULL, 0);
	c->prof->kernel_mode = c->native_modes & NATIVE_KERNEL;
	c->prof->kstacks = c->kstacks;
	c->prof->kstack_missing = c->kstack_missing;
}

void collector__free_native(struct collector *c)
{
	while (c->npending)
		free(c->pending[--c->npending].frames);
	free(c->pending);
	hashmap__free(&c->kframes);
	if (c->ksyms)
		ksyms__free(c->ksyms);
	free(c->ksyms);
}
