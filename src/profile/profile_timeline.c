// SPDX-License-Identifier: GPL-2.0-only
/*
 * The timeline (include/profile/timeline.h): events appended as they are
 * counted, bounded by the cap, their stacks and names interned once. What
 * a CPU sample costs here is one hash of its frame ids (the same as
 * counting it on its stack) and 40 bytes; nothing is sorted until a writer
 * asks for the order.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "profile/profile.h"
#include "util/vec.h"

void profile__timeline_on(struct profile *p, uint64_t cap)
{
	struct profile_timeline *t = &p->timeline;

	t->on = true;
	t->cap = !cap			  ? PROFILE_TL_DEFAULT_CAP :
		 cap > PROFILE_TL_MAX_CAP ? PROFILE_TL_MAX_CAP :
					    cap;
	t->start_mono_ns = p->start_ns > 0 ? (uint64_t)p->start_ns : 0;
}

void profile_timeline__free(struct profile_timeline *t)
{
	size_t i;

	for (i = 0; i < t->nstrings; i++)
		free(t->strings[i]);
	for (i = 0; i < t->nprocs; i++) {
		free(t->procs[i].name);
		free(t->procs[i].cmdline);
	}
	free(t->strings);
	free(t->procs);
	free(t->events);
	free(t->frames);
	free(t->stacks);
	hashmap__free(&t->stack_index);
	hashmap__free(&t->string_index);
	hashmap__free(&t->running);
	memset(t, 0, sizeof(*t));
}

int64_t profile__tl_time(const struct profile *p, uint64_t ktime_ns)
{
	return (int64_t)(ktime_ns - (uint64_t)p->timeline.start_mono_ns);
}

uint32_t profile_timeline__stack(struct profile_timeline *t, const uint32_t *frames, uint32_t n)
{
	uint64_t h = hash_bytes(frames, (size_t)n * sizeof(*frames), n), *slot;
	struct profile_tl_stack *s;

	/* a 64-bit collision with another stack takes the next hash */
	for (;; h++) {
		slot = hashmap__find(&t->stack_index, h);
		if (!slot)
			break;
		s = &t->stacks[*slot];
		if (s->n == n && !memcmp(t->frames + s->off, frames, (size_t)n * sizeof(*frames)))
			return (uint32_t)*slot;
	}
	if (t->nframes + n > PROFILE_TL_MAX_FRAMES || t->nstacks >= PROFILE_TL_NO_STACK ||
	    vec_grow((void **)&t->frames, &t->cap_frames, t->nframes + n + 1, sizeof(*t->frames)) ||
	    vec_grow((void **)&t->stacks, &t->cap_stacks, t->nstacks + 1, sizeof(*t->stacks)) ||
	    hashmap__set(&t->stack_index, h, t->nstacks))
		return UINT32_MAX;
	memcpy(t->frames + t->nframes, frames, (size_t)n * sizeof(*frames));
	t->stacks[t->nstacks] = (struct profile_tl_stack){ (uint32_t)t->nframes, n };
	t->nframes += n;
	return (uint32_t)t->nstacks++;
}

uint32_t profile_timeline__string(struct profile_timeline *t, const char *s)
{
	uint64_t h = hash_bytes(s, strlen(s), 0x7100), *slot;

	for (;; h++) {
		slot = hashmap__find(&t->string_index, h);
		if (!slot)
			break;
		if (!strcmp(t->strings[*slot], s))
			return (uint32_t)*slot;
	}
	if (t->nstrings >= UINT32_MAX - 1 ||
	    vec_grow((void **)&t->strings, &t->cap_strings, t->nstrings + 1, sizeof(*t->strings)))
		return UINT32_MAX;
	t->strings[t->nstrings] = strdup(s);
	if (!t->strings[t->nstrings] || hashmap__set(&t->string_index, h, t->nstrings)) {
		free(t->strings[t->nstrings]);
		return UINT32_MAX;
	}
	return (uint32_t)t->nstrings++;
}

int profile_timeline__append(struct profile_timeline *t, const struct profile_tl_event *e)
{
	if (vec_grow((void **)&t->events, &t->cap_events, t->n + 1, sizeof(*t->events)))
		return -ENOMEM;
	t->events[t->n++] = *e;
	return 0;
}

/* Whether one more event fits; if not, it is counted as dropped. */
static bool room(struct profile_timeline *t, unsigned kind)
{
	if (t->n < t->cap)
		return true;
	t->dropped[kind]++;
	return false;
}

/* e placed at ktime_ns (an interval begun before the run: the part before it cut) and kept. */
static void add_at(struct profile *p, struct profile_tl_event *e, uint64_t ktime_ns)
{
	struct profile_timeline *t = &p->timeline;
	int64_t at = profile__tl_time(p, ktime_ns);

	if (at < 0) {
		e->dur_ns = e->dur_ns > (uint64_t)-at ? e->dur_ns - (uint64_t)-at : 0;
		at = 0;
	}
	e->t_ns = at;
	if (profile_timeline__append(t, e))
		t->dropped[e->kind]++;
}

int profile_timeline__add_proc(struct profile_timeline *t, int pid, const char *name,
			       const char *cmdline, bool ended)
{
	struct profile_tl_proc *pr;

	if (vec_grow((void **)&t->procs, &t->cap_procs, t->nprocs + 1, sizeof(*t->procs)))
		return -ENOMEM;
	pr = &t->procs[t->nprocs];
	pr->pid = pid;
	pr->name = strdup(name ? name : "");
	pr->cmdline = strdup(cmdline ? cmdline : "");
	pr->ended = ended;
	if (!pr->name || !pr->cmdline) {
		free(pr->name);
		free(pr->cmdline);
		return -ENOMEM;
	}
	t->nprocs++;
	return 0;
}

/* Names pr again (an exec'd image); the old names stay when out of memory. */
static void rename_proc(struct profile_tl_proc *pr, const char *name, const char *cmdline)
{
	char *n = strdup(name ? name : ""), *c = strdup(cmdline ? cmdline : "");

	if (!n || !c) {
		free(n);
		free(c);
		return;
	}
	free(pr->name);
	free(pr->cmdline);
	pr->name = n;
	pr->cmdline = c;
}

uint32_t profile__tl_proc(struct profile *p, int pid, const char *name, const char *cmdline,
			  enum profile_tl_start how, int parent, uint64_t ktime_ns)
{
	struct profile_timeline *t = &p->timeline;
	uint64_t *slot = hashmap__find(&t->running, (uint32_t)pid);
	struct profile_tl_event e = { .kind = PROFILE_TL_START,
				      .arg = how,
				      .tid = (uint32_t)pid,
				      .ref = PROFILE_TL_NO_STACK };

	if (!t->on)
		return 0;
	if (slot) {
		rename_proc(&t->procs[*slot - 1], name, cmdline);
		return (uint32_t)*slot;
	}
	/*
	 * A process is kept only with its START: at most cap of them, however
	 * fast a target forks; one beyond has each of its events dropped and
	 * counted (profile_target__tl_add).
	 */
	if (!room(t, PROFILE_TL_START))
		return 0;
	if (profile_timeline__add_proc(t, pid, name, cmdline, false)) {
		t->dropped[PROFILE_TL_START]++;
		return 0;
	}
	if (hashmap__set(&t->running, (uint32_t)pid, t->nprocs)) {
		t->procs[t->nprocs - 1].ended = true;
		t->dropped[PROFILE_TL_START]++;
		return 0;
	}
	e.proc = (uint32_t)t->nprocs - 1;
	e.value = how == PROFILE_TL_FORKED ? (uint32_t)parent : 0;
	add_at(p, &e, ktime_ns);
	return (uint32_t)t->nprocs;
}

void profile__tl_proc_event(struct profile *p, int pid, enum profile_tl_kind kind, uint32_t value,
			    uint64_t ktime_ns)
{
	struct profile_timeline *t = &p->timeline;
	uint64_t *slot = t->on ? hashmap__find(&t->running, (uint32_t)pid) : NULL;
	struct profile_tl_event e = { .kind = kind,
				      .tid = (uint32_t)pid,
				      .ref = PROFILE_TL_NO_STACK,
				      .value = value };

	if (!slot)
		return;
	e.proc = (uint32_t)*slot - 1;
	if (kind == PROFILE_TL_EXIT) {
		t->procs[e.proc].ended = true;
		hashmap__del(&t->running, (uint32_t)pid);
	}
	if (room(t, kind))
		add_at(p, &e, ktime_ns);
}

void profile_target__tl_add(struct profile *p, const struct profile_target *pp,
			    const struct profile_tl_add *a)
{
	struct profile_timeline *t = &p->timeline;
	struct profile_tl_event e = { .kind = a->kind,
				      .arg = a->arg,
				      .tid = a->tid,
				      .dur_ns = a->dur_ns,
				      .ref = PROFILE_TL_NO_STACK,
				      .value = a->value };

	if (!t->on)
		return;
	if (!pp->tl_proc) { /* its process found no room (or no memory) */
		t->dropped[a->kind < PROFILE_TL_NKINDS ? a->kind : PROFILE_TL_CPU]++;
		return;
	}
	if (!room(t, a->kind))
		return;
	e.proc = pp->tl_proc - 1;
	if (a->name)
		e.ref = profile_timeline__string(t, a->name);
	else if (a->frames && a->nframes)
		e.ref = profile_timeline__stack(t, a->frames, a->nframes);
	if ((a->name || (a->frames && a->nframes)) && e.ref == UINT32_MAX) {
		t->dropped[a->kind]++; /* no room for its stack or name */
		return;
	}
	add_at(p, &e, a->ktime_ns);
}

void profile__tl_finish(struct profile *p, uint64_t end_ktime_ns)
{
	size_t i, j;

	for (i = 0; p->timeline.on && i < p->ntargets; i++) {
		const struct profile_target *pp = &p->targets[i];

		for (j = 0; j < pp->nimports; j++) {
			const struct profile_import *im = &pp->imports[j];
			struct profile_tl_add a = { .kind = PROFILE_TL_IMPORT,
						    .arg = PROFILE_TL_IMPORT_OPEN,
						    .tid = im->tid,
						    .ktime_ns = im->start_ns,
						    .name = im->module };

			if (im->done)
				continue;
			a.dur_ns = end_ktime_ns > im->start_ns ? end_ktime_ns - im->start_ns : 0;
			profile_target__tl_add(p, pp, &a);
		}
	}
}

uint64_t profile_timeline__dropped(const struct profile_timeline *t)
{
	uint64_t n = 0;
	int k;

	for (k = 0; k < PROFILE_TL_NKINDS; k++)
		n += t->dropped[k];
	return n;
}

static int by_thread_time(const void *a, const void *b, void *arg)
{
	const struct profile_tl_event *ev = arg, *x = &ev[*(const uint32_t *)a],
				      *y = &ev[*(const uint32_t *)b];

	if (x->proc != y->proc)
		return x->proc < y->proc ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	if (x->t_ns != y->t_ns)
		return x->t_ns < y->t_ns ? -1 : 1;
	return *(const uint32_t *)a < *(const uint32_t *)b ? -1 : 1;
}

uint32_t *profile_timeline__order(const struct profile_timeline *t)
{
	uint32_t *idx = t->n ? malloc(t->n * sizeof(*idx)) : NULL;
	size_t i;

	if (!idx)
		return NULL;
	for (i = 0; i < t->n; i++)
		idx[i] = (uint32_t)i;
	qsort_r(idx, t->n, sizeof(*idx), by_thread_time, t->events);
	return idx;
}

const char *profile__tl_proc_name(const struct profile *p, const struct profile_tl_proc *pr,
				  char *buf, size_t len)
{
	size_t i;

	/* its newest section: its latest image, named as the process table names it */
	for (i = p->ntargets; pr->pid > 0 && i-- > 0;)
		if (p->targets[i].pid == pr->pid)
			return profile_target__role(&p->targets[i], buf, len);
	return pr->name;
}

/* Whether section pp holds pid's threads: its own, or --merge's that holds pid. */
static bool holds(const struct profile *p, const struct profile_target *pp, int pid)
{
	size_t i;

	if (pp->pid == pid)
		return true;
	for (i = 0; pp->pid == 0 && i < p->nmerged; i++)
		if (p->merged_pids[i] == pid)
			return true;
	return false;
}

/*
 * th's name as the reports give it: its Python name, with its comm beside
 * it when that is its own (not the process's, nor the Python name cut by the
 * kernel): a name given with prctl stays seen.
 */
static const char *thread_label(const struct profile_target *pp, const struct profile_thread *th,
				char *buf, size_t len)
{
	if (th->pyname[0] && th->name[0] && strcmp(th->name, pp->comm) &&
	    strncmp(th->pyname, th->name, strlen(th->name)))
		snprintf(buf, len, "%s (comm %s)", th->pyname, th->name);
	else
		snprintf(buf, len, "%s", th->pyname[0] ? th->pyname : th->name);
	return buf;
}

const char *profile__tl_thread_name(const struct profile *p, const struct profile_tl_proc *pr,
				    uint32_t tid, char *buf, size_t len)
{
	size_t i, j;

	/* newest section first: an exec'd image names its threads last */
	for (i = p->ntargets; i-- > 0;) {
		const struct profile_target *pp = &p->targets[i];

		if (!holds(p, pp, pr->pid))
			continue;
		for (j = 0; j < pp->nthreads; j++)
			if (pp->threads[j].tid == tid &&
			    (pp->threads[j].name[0] || pp->threads[j].pyname[0]))
				return thread_label(pp, &pp->threads[j], buf, len);
	}
	return "";
}
