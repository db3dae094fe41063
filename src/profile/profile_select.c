// SPDX-License-Identifier: GPL-2.0-only
/*
 * --pid, --match, --thread: the profile cut to what the reader asked to look
 * at, once, before any writer sees it, so that every format shows the same
 * selection and says what it left out. A process is kept or left out whole;
 * a thread pattern then keeps, of each kept process, the stacks and threads
 * of its matching threads. The memory, --calls, --gc and --imports figures
 * are per process, not per thread: a thread pattern refuses them rather
 * than show a process's figures under a thread's name.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "profile/profile.h"
#include "util/vec.h"

size_t profile_thread__names(const struct profile_thread *th,
			     const char *names[PROFILE_THREAD_NAMES])
{
	size_t n = 0;

	/* the name is a fixed field, NUL-terminated by whoever filled it */
	if (th->name[0] && memchr(th->name, '\0', sizeof(th->name)))
		names[n++] = th->name;
	/* and its Python (threading) name, when it was read */
	if (th->pyname[0] && memchr(th->pyname, '\0', sizeof(th->pyname)))
		names[n++] = th->pyname;
	return n;
}

static bool thread_matches(const struct profile_thread *th, const regex_t *re)
{
	const char *names[PROFILE_THREAD_NAMES];
	size_t i, n = profile_thread__names(th, names);

	for (i = 0; i < n; i++)
		if (!regexec(re, names[i], 0, NULL, 0))
			return true;
	return false;
}

/* What a process is known by: its command line, or its comm when it has none. */
static const char *command_of(const struct profile_target *pp)
{
	return pp->cmdline[0] ? pp->cmdline : pp->comm;
}

static bool pid_listed(const struct profile_select *sel, int pid)
{
	size_t i;

	for (i = 0; i < sel->npids; i++)
		if (sel->pids[i] == pid)
			return true;
	return !sel->npids;
}

/* A pattern compiled, or -EINVAL with the sentence that says why not. */
static int compile(regex_t *re, const char *option, const char *pattern, char *why, size_t len)
{
	char msg[128];
	int err = regcomp(re, pattern, REG_EXTENDED | REG_NOSUB);

	if (!err)
		return 0;
	regerror(err, re, msg, sizeof(msg));
	snprintf(why, len, "%s '%s' is not a regular expression (POSIX extended): %s", option,
		 pattern, msg);
	return err == REG_ESPACE ? -ENOMEM : -EINVAL;
}

/* What sel cannot be applied to: 0, or -EINVAL with one sentence in why. */
static int check_select(const struct profile *p, const struct profile_select *sel, char *why,
			size_t len)
{
	int err = profile_select__check(sel, why, len);

	if (err)
		return err;
	if (p->nmerged && (sel->npids || sel->match)) {
		snprintf(why, len,
			 "this profile was recorded with --merge: its processes are one section, "
			 "so --pid and --match have nothing to choose from; record without "
			 "--merge (report --merge merges later)");
		return -EINVAL;
	}
	if (sel->thread && (p->mem || p->calls_mode || p->gc_mode || p->imports_mode)) {
		snprintf(why, len,
			 "--thread keeps CPU samples by thread, and this profile's %s figures are "
			 "per process: use --pid or --match, or record without %s",
			 p->mem	       ? "memory" :
			 p->calls_mode ? "--calls" :
			 p->gc_mode    ? "--gc" :
					 "--imports",
			 p->mem	       ? "--mem" :
			 p->calls_mode ? "--calls" :
			 p->gc_mode    ? "--gc" :
					 "--imports");
		return -EINVAL;
	}
	return 0;
}

/* The stack index built again over pp's stacks (their places moved). 0 or -ENOMEM. */
static int reindex(struct profile_target *pp)
{
	size_t i;

	hashmap__free(&pp->stack_index);
	hashmap__init(&pp->stack_index);
	if (hashmap__reserve(&pp->stack_index, pp->nstacks))
		return -ENOMEM;
	for (i = 0; i < pp->nstacks; i++) {
		const struct profile_stack *s = &pp->stacks[i];
		uint64_t h = hash_bytes(s->frames, s->nframes * sizeof(*s->frames), s->tid);

		while (hashmap__find(&pp->stack_index, h))
			h++;
		if (hashmap__set(&pp->stack_index, h, i))
			return -ENOMEM;
	}
	pp->last_stack = 0;
	return 0;
}

/*
 * Of pp, the threads that match re and their stacks; the samples of the
 * others are counted out of pp->samples and into p's sel_ counts. A stack
 * whose thread is not listed has no name to match: it is left out.
 */
static int cut_threads(struct profile *p, struct profile_target *pp, const regex_t *re)
{
	struct hashmap kept;
	size_t i, n = 0;

	hashmap__init(&kept);
	for (i = 0; i < pp->nthreads; i++) {
		if (!thread_matches(&pp->threads[i], re)) {
			p->sel_threads_out++;
			continue;
		}
		if (hashmap__set(&kept, pp->threads[i].tid, 1)) {
			hashmap__free(&kept);
			return -ENOMEM;
		}
		pp->threads[n++] = pp->threads[i];
	}
	pp->nthreads = n;
	for (i = n = 0; i < pp->nstacks; i++) {
		struct profile_stack *s = &pp->stacks[i];

		if (hashmap__find(&kept, s->tid)) {
			pp->stacks[n++] = *s;
			continue;
		}
		p->sel_samples_out += s->count;
		pp->samples -= s->count < pp->samples ? s->count : pp->samples;
		free(s->frames);
		profile_stack__free_ops(s);
	}
	pp->nstacks = n;
	hashmap__free(&kept);
	return reindex(pp);
}

/*
 * The most one selection's description takes: the two patterns, their
 * options and quotes, and the first pids (the others counted).
 */
#define DESCRIBE_PIDS_MAX 16
#define DESCRIBE_MAX (2 * PROFILE_PATTERN_MAX + 96 + DESCRIBE_PIDS_MAX * 12)

/* "--pid 1,2 --match 'x' --thread 'y'" after what an earlier selection said. */
static int describe(struct profile *p, const struct profile_select *sel)
{
	char *s = NULL;
	size_t len = 0, i;
	FILE *f = open_memstream(&s, &len);

	if (!f)
		return -ENOMEM;
	/* a report of a report of ...: the earlier selections said in short past the bound */
	if (p->selection && strlen(p->selection) + DESCRIBE_MAX <= PROFILE_SELECTION_MAX)
		fprintf(f, "%s ", p->selection);
	else if (p->selection)
		fputs("(earlier selections) ", f);
	for (i = 0; i < sel->npids && i < DESCRIBE_PIDS_MAX; i++)
		fprintf(f, "%s%d", i ? "," : "--pid ", sel->pids[i]);
	if (sel->npids > DESCRIBE_PIDS_MAX)
		fprintf(f, ",... (%zu pids)", sel->npids);
	if (sel->match)
		fprintf(f, "%s--match '%s'", sel->npids ? " " : "", sel->match);
	if (sel->thread)
		fprintf(f, "%s--thread '%s'", sel->npids || sel->match ? " " : "", sel->thread);
	if (fclose(f) || !s) {
		free(s);
		return -ENOMEM;
	}
	free(p->selection);
	p->selection = s;
	return 0;
}

/* Whether pp is kept by its pid and command line. */
static bool proc_selected(const struct profile_target *pp, const struct profile_select *sel,
			  const regex_t *match)
{
	return pid_listed(sel, pp->pid) && (!match || !regexec(match, command_of(pp), 0, NULL, 0));
}

/* The processes sel keeps, in their order; the others freed and counted out. */
static int cut_procs(struct profile *p, const struct profile_select *sel, const regex_t *match,
		     const regex_t *thread)
{
	size_t i, n = 0;
	int err = 0;

	for (i = 0; i < p->ntargets; i++) {
		struct profile_target *pp = &p->targets[i];
		bool keep = proc_selected(pp, sel, match);
		size_t had = pp->nthreads;

		if (keep && thread && !err)
			err = cut_threads(p, pp, thread);
		keep &= !thread || pp->nthreads > 0;
		/* a kept process that lost threads: its flaws' counts are not split */
		p->sel_threads_cut |= keep && pp->nthreads < had;
		if (keep) {
			if (n != i)
				p->targets[n] = *pp;
			n++;
			continue;
		}
		p->sel_procs_out++;
		p->sel_samples_out += pp->samples;
		p->sel_threads_out += pp->nthreads; /* those a thread pattern left */
		profile_target__free(pp);
	}
	p->ntargets = n;
	return err;
}

int profile_select__check(const struct profile_select *sel, char *why, size_t len)
{
	regex_t re;
	int err = 0;

	if ((sel->match && strlen(sel->match) > PROFILE_PATTERN_MAX) ||
	    (sel->thread && strlen(sel->thread) > PROFILE_PATTERN_MAX)) {
		snprintf(why, len, "--%s takes a pattern of at most %d bytes",
			 sel->match && strlen(sel->match) > PROFILE_PATTERN_MAX ? "match" :
										  "thread",
			 PROFILE_PATTERN_MAX);
		return -EINVAL;
	}
	if (sel->match) {
		err = compile(&re, "--match", sel->match, why, len);
		if (!err)
			regfree(&re);
	}
	if (!err && sel->thread) {
		err = compile(&re, "--thread", sel->thread, why, len);
		if (!err)
			regfree(&re);
	}
	return err;
}

int profile__select(struct profile *p, const struct profile_select *sel, char *why, size_t len)
{
	regex_t match, thread;
	int err;

	if (!sel->npids && !sel->match && !sel->thread)
		return 0;
	err = check_select(p, sel, why, len);
	if (!err && sel->match)
		err = compile(&match, "--match", sel->match, why, len);
	if (err)
		return err;
	if (sel->thread) {
		err = compile(&thread, "--thread", sel->thread, why, len);
		if (err) {
			if (sel->match)
				regfree(&match);
			return err;
		}
	}
	err = describe(p, sel);
	if (!err)
		err = cut_procs(p, sel, sel->match ? &match : NULL, sel->thread ? &thread : NULL);
	if (sel->match)
		regfree(&match);
	if (sel->thread)
		regfree(&thread);
	if (err == -ENOMEM)
		snprintf(why, len, "out of memory while selecting the processes and threads");
	return err;
}
