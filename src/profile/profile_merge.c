// SPDX-License-Identifier: GPL-2.0-only
/*
 * --merge: one profile for all processes. Functions and frames are already
 * interned across processes, so merging is adding each section's stacks
 * (and threads: tids are unique on the host at one time) into a new one.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "profile/profile.h"
#include "proc/source.h"

/* "N processes merged: pid pid ...", cut short with "..." past len. */
static void merged_name(const struct profile *p, char *buf, size_t len)
{
	size_t i, used;

	used = snprintf(buf, len, "%zu process%s merged:", p->ntargets,
			p->ntargets == 1 ? "" : "es");
	for (i = 0; i < p->ntargets && used < len; i++) {
		int n = snprintf(buf + used, len - used, " %d", p->targets[i].pid);

		if (n < 0 || used + n >= len - 4) {
			snprintf(buf + used, len - used, " ...");
			break;
		}
		used += n;
	}
}

static const char *python_of(const struct profile_target *pp)
{
	return pp->python;
}

static const char *exe_of(const struct profile_target *pp)
{
	return pp->exe;
}

/*
 * Each distinct value of a string field of the processes (their Python
 * versions, executables), once, joined by ", " and cut short with "..." past
 * len: a merged section names them all, not only the first's.
 */
static void joined(const struct profile *p, const char *(*field)(const struct profile_target *),
		   char *buf, size_t len)
{
	size_t i, j, used = 0;

	buf[0] = '\0';
	for (i = 0; i < p->ntargets; i++) {
		const char *v = field(&p->targets[i]);
		int n;

		for (j = 0; j < i && strcmp(v, field(&p->targets[j])); j++)
			;
		if (j < i)
			continue;
		n = snprintf(buf + used, len - used, "%s%s", used ? ", " : "", v);
		if (n < 0 || used + n >= len - 5) {
			snprintf(buf + used, len - used, "%s...", used ? ", " : "");
			return;
		}
		used += n;
	}
}

int profile__set_merged(struct profile *p, const int *pids, size_t n)
{
	int *copy = malloc((n ? n : 1) * sizeof(*copy));

	if (!copy)
		return -ENOMEM;
	if (n)
		memcpy(copy, pids, n * sizeof(*copy));
	free(p->merged_pids);
	p->merged_pids = copy;
	p->nmerged = n;
	return 0;
}

/* The merged section, empty, named by the processes it will hold; NULL when out of memory. */
static struct profile_target *merged_section(struct profile *p)
{
	char name[512], python[256], exe[1024];
	size_t i, n = p->ntargets;
	int *pids = malloc(n * sizeof(*pids)), err;

	for (i = 0; pids && i < n; i++)
		pids[i] = p->targets[i].pid;
	err = pids ? profile__set_merged(p, pids, n) : -ENOMEM;
	free(pids);
	if (err)
		return NULL;
	merged_name(p, name, sizeof(name));
	joined(p, python_of, python, sizeof(python));
	joined(p, exe_of, exe, sizeof(exe));
	return profile__add_target(p, 0, exe, name, "merged", python);
}

/* A stack into the merged section, with its --gil, exception and --opcodes counts. 0 or -ENOMEM. */
static int merge_stack(struct profile_target *m, const struct profile_stack *s)
{
	struct profile_stack *to;
	size_t i;

	if (profile_target__add_stack_where(m, s->tid, s->frames, s->nframes, s->count, s->where))
		return -ENOMEM;
	to = &m->stacks[m->last_stack];
	to->gil_held += s->gil_held;
	to->gil_released += s->gil_released;
	to->gil_unknown += s->gil_unknown;
	to->exc += s->exc;
	to->exc_unknown += s->exc_unknown;
	for (i = 0; i < s->nops; i++)
		if (profile_stack__add_op(to, s->ops[i].op, s->ops[i].samples))
			return -ENOMEM;
	return 0;
}

/* A thread into the merged section, with its --mode wall and --gil figures. */
static int merge_thread(struct profile_target *m, const struct profile_thread *from)
{
	struct profile_thread *th = profile_target__thread(m, from->tid);
	int c;

	if (!th)
		return -ENOMEM;
	if (!th->name[0])
		memcpy(th->name, from->name, sizeof(th->name));
	if (!th->pyname[0])
		memcpy(th->pyname, from->pyname, sizeof(th->pyname));
	th->samples += from->samples;
	for (c = 0; c < PROFILE_OFFCPU_NCLASSES; c++)
		th->offcpu_ns[c] += from->offcpu_ns[c];
	th->gil_held += from->gil_held;
	th->gil_released += from->gil_released;
	th->gil_unknown += from->gil_unknown;
	return 0;
}

int profile__merge(struct profile *p)
{
	struct profile_target *m, *first;
	size_t i, j, n = p->ntargets;
	bool all_exited = true;

	if (!n)
		return 0;
	m = merged_section(p);
	if (!m)
		return -ENOMEM;
	first = &p->targets[0]; /* add_proc may have moved the array */
	m->root_fd = first->root_fd >= 0 ? fcntl(first->root_fd, F_DUPFD_CLOEXEC, 0) : -1;
	/*
	 * The merged stacks' sources are read with the rights of every process
	 * merged: one process's rights must not serve another user's file names.
	 */
	for (i = 0; i < n; i++)
		for (j = 0; j < p->targets[i].sources->ncreds; j++)
			if (proc_sources__seen(m->sources, &p->targets[i].sources->creds[j]))
				return -ENOMEM;
	for (i = 0; i < n; i++) {
		m->sources->too_many |= p->targets[i].sources->too_many;
		/* one whose user is unknown: nothing is read */
		if (!p->targets[i].sources->ncreds)
			m->sources->load_err = -SOURCE_ENOCREDS;
	}
	for (i = 0; i < n; i++) {
		const struct profile_target *pp = &p->targets[i];

		for (j = 0; j < pp->nstacks; j++)
			if (merge_stack(m, &pp->stacks[j]))
				return -ENOMEM;
		for (j = 0; j < pp->nthreads; j++)
			if (merge_thread(m, &pp->threads[j]))
				return -ENOMEM;
		/* --calls: the same function's edges add up across processes */
		for (j = 0; j < pp->ncalls; j++)
			if (profile_target__add_call(m, pp->calls[j].func, pp->calls[j].caller,
						     &pp->calls[j]))
				return -ENOMEM;
		for (j = 0; j < pp->nhists; j++)
			if (profile_target__add_hist(m, pp->hists[j].func, pp->hists[j].buckets))
				return -ENOMEM;
		if (profile_target__merge_mem(m, pp))
			return -ENOMEM;
		m->samples += pp->samples;
		m->exc_left_out += pp->exc_left_out;
		m->exc_unknown_left_out += pp->exc_unknown_left_out;
		m->truncated += pp->truncated;
		m->partial += pp->partial;
		m->unresolved += pp->unresolved;
		all_exited &= pp->exited;
	}
	m->exited = all_exited;
	for (i = 0; i < n; i++)
		profile_target__free(&p->targets[i]);
	p->targets[0] = p->targets[n];
	p->ntargets = 1;
	return 0;
}
